/*
 * The target (see target.h).
 */
#include "config.h"

#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "files.h"
#include "finals.h"
#include "target.h"

#define BASELINE_FMT "baseline.%ld.%" PRIu64 ".heap"

int
ht_target_parse_pid(const char *s, pid_t *pid)
{
	unsigned long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/* Returns 1 and the current target, 0 if there is none (or the file is
 * not ours to read). */
static int
target_load(pid_t *pid, uint64_t *start)
{
	char path[PATH_MAX], buf[128];
	unsigned long long s;
	long p;
	FILE *fp;
	int n;

	if (ht_state_dir(path, sizeof(path) - 8, 0) != 0)
		return 0;
	strcat(path, "/target");
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	n = fgets(buf, sizeof(buf), fp) != NULL &&
	    sscanf(buf, "%ld %llu", &p, &s) == 2 && p > 0 && p <= INT_MAX;
	fclose(fp);
	if (!n)
		return 0;
	*pid = (pid_t)p;
	*start = s;
	return 1;
}

int
ht_target_save(pid_t pid, uint64_t start)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	int fd, n, e;

	if (ht_state_dir(dir, sizeof(dir), 1) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/target", dir);
	snprintf(tmp, sizeof(tmp), "%s/.target.XXXXXX", dir);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	n = dprintf(fd, "%ld %" PRIu64 "\n", (long)pid, start);
	if (n < 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

void
ht_target_forget(pid_t pid)
{
	char path[PATH_MAX];
	uint64_t start;
	pid_t cur;

	if (!target_load(&cur, &start) || cur != pid)
		return;
	if (ht_state_dir(path, sizeof(path) - 8, 0) != 0)
		return;
	strcat(path, "/target");
	unlink(path);
}

int
ht_target_check(pid_t pid, const char *what, const struct ht_proc *p)
{
	if (p->state == 'T') {
		ht_warn(
		    "%s %ld: the process is stopped (SIGSTOP or job "
		    "control); resume it with kill -CONT %ld, then try again",
		    what, (long)pid, (long)pid);
		return HT_EXIT_FAIL;
	}
	if (p->state == 't') {
		ht_warn("%s %ld: the process is stopped by its tracer "
			"(process %ld); detach the debugger first",
		    what, (long)pid, (long)p->tracer);
		return HT_EXIT_FAIL;
	}
	return HT_EXIT_OK;
}

/*
 * Target pid (started at start, 0 if unknown) is gone.  With final, when
 * it left a final profile, that profile's path goes into final[len] and
 * the answer is HT_EXIT_OK.  Otherwise say so (how, exited), pointing at
 * the final profile when there is one, and forget it unless there is.
 */
static int
gone(pid_t pid, uint64_t start, int exited, char *final, size_t len)
{
	char path[PATH_MAX];
	time_t when;
	int have;

	have = ht_final_find(pid, start, path, sizeof(path), &when) == 0;
	if (have && final != NULL && strlen(path) < len) {
		memcpy(final, path, strlen(path) + 1);
		return HT_EXIT_OK;
	}
	if (!have)
		ht_target_forget(pid);
	if (have)
		ht_warn("target %ld: no such process (it exited); its final "
			"profile is %s: heaptool report -p %ld reads it",
		    (long)pid, path, (long)pid);
	else if (exited)
		ht_warn("target %ld: no such process (it exited); attach to a "
			"running process",
		    (long)pid);
	else
		ht_warn("target %ld: no such process; check the PID",
		    (long)pid);
	return HT_EXIT_FAIL;
}

/* ht_target_resolve, and with final what gone() says of it. */
static int
resolve(const char *popt, pid_t *pidp, char *final, size_t len)
{
	struct ht_proc p;
	uint64_t start;
	pid_t pid;

	if (final != NULL)
		final[0] = '\0';
	if (popt != NULL) {
		if (ht_target_parse_pid(popt, &pid) != 0)
			return ht_usage("-p %s: not a process ID; give the PID "
					"of a running process",
			    popt);
		if (ht_proc_read(pid, &p) != 0 && errno != ENOENT) {
			ht_warn("target %ld: /proc/%ld: %s; is /proc mounted?",
			    (long)pid, (long)pid, strerror(errno));
			return HT_EXIT_FAIL;
		}
		/* A failed read left state 0. */
		if (p.state == '\0' || p.state == 'Z' || p.state == 'X') {
			*pidp = pid;
			return gone(pid, 0, 0, final, len);
		}
	} else {
		if (!target_load(&pid, &start))
			return ht_usage(
			    "no target: no -p and no current "
			    "target; run heaptool attach PID first");
		if (ht_proc_read(pid, &p) != 0 || p.state == 'Z' ||
		    p.state == 'X' || p.start_time != start) {
			*pidp = pid;
			return gone(pid, start, 1, final, len);
		}
	}
	if (ht_target_check(pid, "target", &p) != HT_EXIT_OK)
		return HT_EXIT_FAIL;
	*pidp = pid;
	return HT_EXIT_OK;
}

int
ht_target_resolve(const char *popt, pid_t *pidp)
{
	return resolve(popt, pidp, NULL, 0);
}

int
ht_target_resolve_final(const char *popt, pid_t *pidp, char *final, size_t len)
{
	return resolve(popt, pidp, final, len);
}

struct ht_ctl *
ht_target_ctl(pid_t pid)
{
	struct ht_ctl *c;

	if ((c = ht_ctl_new(pid)) == NULL)
		ht_warn("target %ld: out of memory", (long)pid);
	return c;
}

int
ht_target_failed(struct ht_ctl *c, pid_t pid)
{
	if (ht_ctl_errcode(c) == HT_CTL_ENOPROC)
		ht_target_forget(pid);
	ht_warn("%s", ht_ctl_error(c));
	return HT_EXIT_FAIL;
}

int
ht_target_command(pid_t pid, uint16_t type)
{
	struct ht_ctl *c;
	int rc = HT_EXIT_OK;

	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_ctl_command(c, type, 0, 0) != 0)
		rc = ht_target_failed(c, pid);
	ht_ctl_free(c);
	return rc;
}

struct ht_profile *
ht_target_profile(pid_t pid, uint8_t **raw, size_t *rawlen)
{
	struct ht_profile *prof = NULL;
	struct ht_ctl *c;
	const uint8_t *buf;
	char err[256];
	size_t len;

	if ((c = ht_target_ctl(pid)) == NULL)
		return NULL;
	if (ht_ctl_report(c, &buf, &len) != 0) {
		ht_target_failed(c, pid);
		goto out;
	}
	if ((prof = ht_profile_decode(buf, len, err, sizeof(err))) == NULL) {
		ht_warn("target %ld: the agent sent a profile that does not "
			"decode (%s); use the heaptool that matches the agent",
		    (long)pid, err);
		goto out;
	}
	if (raw != NULL) {
		if ((*raw = malloc(len > 0 ? len : 1)) == NULL) {
			ht_warn("target %ld: out of memory", (long)pid);
			ht_profile_free(prof);
			prof = NULL;
			goto out;
		}
		memcpy(*raw, buf, len);
		*rawlen = len;
	}
out:
	ht_ctl_free(c);
	return prof;
}

struct ht_sym *
ht_target_sym(pid_t pid, const struct ht_profile *prof,
    const struct ht_sym_opts *files)
{
	struct ht_sym_opts sopts;
	char root[64];

	memset(&sopts, 0, sizeof(sopts));
	if (files != NULL) {
		sopts.sysroot = files->sysroot;
		sopts.debug_dirs = files->debug_dirs;
		sopts.ndebug_dirs = files->ndebug_dirs;
		sopts.short_names = files->short_names;
	}
	/* A live thread's (proc.h); with none left, the leader's, which
	 * then opens nothing: a path is never looked up in our file system
	 * in its place. */
	if (ht_proc_path(pid, "root", root, sizeof(root)) != 0)
		snprintf(root, sizeof(root), "/proc/%ld/root", (long)pid);
	sopts.root = root;
	sopts.pid = pid;
	return ht_sym_new(prof->modules, prof->nmodules, &sopts);
}

int
ht_target_start_time(pid_t pid, uint64_t *start)
{
	struct ht_proc p;

	if (ht_proc_read(pid, &p) != 0 || p.state == 'Z' || p.state == 'X') {
		ht_warn("target %ld: no such process (it exited); check the "
			"PID",
		    (long)pid);
		return -1;
	}
	*start = p.start_time;
	return 0;
}

int
ht_target_baseline_path(char *buf, size_t len, pid_t pid, uint64_t start,
    int create)
{
	char dir[PATH_MAX];
	int n;

	if (ht_state_dir(dir, sizeof(dir), create) != 0)
		return -1;
	n = snprintf(buf, len, "%s/" BASELINE_FMT, dir, (long)pid, start);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Remove the baselines of processes that are gone (their pid is free, or
 * has another start time now): nothing could ever read them again. */
static void
prune_baselines(void)
{
	char dir[PATH_MAX], end[8];
	struct dirent *de;
	struct ht_proc p;
	unsigned long long start;
	long pid;
	DIR *dp;

	if (ht_state_dir(dir, sizeof(dir), 0) != 0 ||
	    (dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (sscanf(de->d_name, "baseline.%ld.%llu%7s", &pid, &start,
			end) != 3 ||
		    strcmp(end, ".heap") != 0 || pid <= 0 || pid > INT_MAX)
			continue;
		if (ht_proc_read((pid_t)pid, &p) == 0 ? p.start_time == start :
							errno != ENOENT)
			continue;
		unlinkat(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
}

int
ht_target_baseline_save(char *buf, size_t buflen, pid_t pid, uint64_t start,
    const uint8_t *raw, size_t len)
{
	if (ht_target_baseline_path(buf, buflen, pid, start, 1) != 0 ||
	    ht_write_atomic(buf, raw, len) != 0)
		return -1;
	prune_baselines();
	return 0;
}
