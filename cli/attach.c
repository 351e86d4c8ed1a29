/*
 * heaptool attach, start, stop, status, dump, detach: the commands that
 * talk to the agent inside a running process, and the current target.
 *
 * The current target is kept per user in
 * ${XDG_STATE_HOME:-$HOME/.local/state}/heaptool/target as "PID START\n",
 * START being the process's start time (field 22 of /proc/PID/stat, clock
 * ticks after boot): a pid reused by another process has another start
 * time, and is reported gone rather than talked to.
 *
 * attach first asks whoever answers on the agent's socket (HELLO): an agent
 * already loaded is reused, never loaded twice.  Otherwise it finds the
 * agent library, makes sure the target can open it (the very same file seen
 * through /proc/PID/root and readable by the target's user, else a copy
 * staged in the target's /tmp), has the injector (inject.h) dlopen it, and
 * waits for the agent's thread to answer.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "files.h"
#include "inject.h"
#include "json.h"
#include "profile.h"
#include "proto.h"
#include "size.h"

#define DEFAULT_RATE		524288
#define DEFAULT_TIMEOUT_MS	5000
#define POLL_MS			10
/* The agent is a few hundred KiB; anything far larger is not it. */
#define MAX_AGENT_SIZE		(64u << 20)

/* ---- small helpers ---- */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
parse_pid(const char *s, pid_t *pid)
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

static int
bad_pid(const char *s)
{
	return ht_usage("%s: not a process ID; give the PID of a running "
	    "process", s);
}

static int
show_help(const char *text)
{
	fputs(text, stdout);
	return fflush(stdout) == 0 && !ferror(stdout) ? HT_EXIT_OK :
	    HT_EXIT_FAIL;
}

/* The getopt_long errors of command cmd. */
static int
opt_error(const char *cmd, int c, char **argv)
{
	if (c == ':')
		return ht_usage("%s: %s needs a value; see 'heaptool %s "
		    "--help'", cmd, argv[optind - 1], cmd);
	return ht_usage("%s: %s: unknown option; see 'heaptool %s --help'",
	    cmd, argv[optind - 1], cmd);
}

static int
flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ht_warn("stdout: %s", strerror(errno));
		return HT_EXIT_FAIL;
	}
	return HT_EXIT_OK;
}

/* ---- the current target ---- */

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

/* Remember pid (started at start) as the current target, atomically. */
static int
target_save(pid_t pid, uint64_t start)
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

/* Forget pid if it is the current target. */
static void
target_forget(pid_t pid)
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

/* A process that cannot be talked to now: stopped, or held by a tracer
 * in a stop.  Returns 0 if it can, else the exit status (printed). */
static int
check_running(pid_t pid, const char *what, const struct ht_proc *p)
{
	if (p->state == 'T') {
		ht_warn("%s %ld: the process is stopped (SIGSTOP or job "
		    "control); resume it with kill -CONT %ld, then try again",
		    what, (long)pid, (long)pid);
		return HT_EXIT_FAIL;
	}
	if (p->state == 't') {
		ht_warn("%s %ld: the process is stopped by its tracer "
		    "(process %ld); detach the debugger first", what,
		    (long)pid, (long)p->tracer);
		return HT_EXIT_FAIL;
	}
	return HT_EXIT_OK;
}

int
ht_target_resolve(const char *popt, pid_t *pidp)
{
	struct ht_proc p;
	uint64_t start;
	pid_t pid;

	if (popt != NULL) {
		if (parse_pid(popt, &pid) != 0)
			return ht_usage("-p %s: not a process ID; give the PID "
			    "of a running process", popt);
		if (ht_proc_read(pid, &p) != 0 && errno != ENOENT) {
			ht_warn("target %ld: /proc/%ld: %s; is /proc mounted?",
			    (long)pid, (long)pid, strerror(errno));
			return HT_EXIT_FAIL;
		}
		/* A failed read left state 0. */
		if (p.state == '\0' || p.state == 'Z' || p.state == 'X') {
			target_forget(pid);
			ht_warn("target %ld: no such process; check the PID",
			    (long)pid);
			return HT_EXIT_FAIL;
		}
	} else {
		if (!target_load(&pid, &start))
			return ht_usage("no target: no -p and no current "
			    "target; run heaptool attach PID first");
		if (ht_proc_read(pid, &p) != 0 || p.state == 'Z' ||
		    p.state == 'X' || p.start_time != start) {
			target_forget(pid);
			ht_warn("target %ld: no such process (it exited); "
			    "attach to a running process", (long)pid);
			return HT_EXIT_FAIL;
		}
	}
	if (check_running(pid, "target", &p) != HT_EXIT_OK)
		return HT_EXIT_FAIL;
	*pidp = pid;
	return HT_EXIT_OK;
}

/* A client for pid, or NULL after printing why. */
static struct ht_ctl *
ctl_open(pid_t pid)
{
	struct ht_ctl *c;

	if ((c = ht_ctl_new(pid)) == NULL)
		ht_warn("target %ld: out of memory", (long)pid);
	return c;
}

/* Print the client's failure; forget a target that is gone. */
static int
ctl_failed(struct ht_ctl *c, pid_t pid)
{
	if (ht_ctl_errcode(c) == HT_CTL_ENOPROC)
		target_forget(pid);
	ht_warn("%s", ht_ctl_error(c));
	return HT_EXIT_FAIL;
}

/* ---- attach ---- */

static const char attach_usage[] =
"usage: heaptool attach [--timeout DUR] [--ignore-seccomp] [-p] PID\n"
"\n"
"Load the heap profiler's agent into the running process PID, without\n"
"restarting or stopping it, and make PID the current target: start,\n"
"stop, status, report, dump and detach act on it when they get no -p.\n"
"A process that has the agent already is reconnected, never loaded\n"
"twice.  Then run heaptool start.\n"
"\n"
"  -t, --timeout DUR  give up when no thread of PID is at a safe point\n"
"                     within DUR (default 5s; e.g. 500ms, 10s, 1m)\n"
"      --ignore-seccomp  attach even though PID runs under a seccomp\n"
"                     filter (refused by default: a filter may kill it\n"
"                     on a system call the loader makes)\n"
"  -p, --pid PID      the same as PID alone\n"
"  -h, --help         show this help\n"
"\n"
"PID must run as your user (or you must be root) and ptrace must be\n"
"allowed (kernel.yama.ptrace_scope).  See man heaptool for the details.\n";

static const struct option attach_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "ignore-seccomp", no_argument, NULL, 'S' },
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Is the agent mapped in pid already (its file name, or a staged copy's)?
 * Returns 1 or 0 (also when the maps cannot be read). */
static int
agent_mapped(pid_t pid)
{
	char path[64], line[PATH_MAX + 256], *name;
	FILE *fp;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((name = strrchr(line, '/')) == NULL)
			continue;
		name++;
		found = strcmp(name, "libheaptool-agent.so") == 0 ||
		    strncmp(name, "heaptool-agent-", 15) == 0;
	}
	fclose(fp);
	return found;
}

/* openat2 with RESOLVE_IN_ROOT: path resolved inside the directory dirfd
 * as if it were "/", so that an absolute symlink in a container's tree
 * points into the container, not into our own file system.  Falls back
 * to openat where the kernel lacks openat2 (before 5.6). */
static int
open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how;
	int fd;

	while (*path == '/')
		path++;
	if (*path == '\0')
		path = ".";
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd == -1 && errno == ENOSYS)
		fd = openat(rootfd, path, flags | O_CLOEXEC);
	return fd;
}

/* May a process of fsuid uid, fsgid gid do bits (4 read, 1 search) on a
 * file of st?  Supplementary groups are not known here: a "no" may be
 * wrong, which only costs a staged copy. */
static int
may(const struct stat *st, uid_t uid, gid_t gid, unsigned bits)
{
	unsigned mode = (unsigned)st->st_mode;

	if (uid == 0)
		return 1;
	if (st->st_uid == uid)
		return ((mode >> 6) & bits) == bits;
	if (st->st_gid == gid)
		return ((mode >> 3) & bits) == bits;
	return (mode & bits) == bits;
}

/*
 * Does the target see the agent at its path as the very same file, and
 * can its user read it there?  Returns 1 or 0.
 */
static int
target_sees(int rootfd, const char *agent, const struct ht_proc *p)
{
	char prefix[PATH_MAX];
	struct stat ours, theirs, st;
	size_t i;
	int fd, ok;

	if (stat(agent, &ours) != 0)
		return 0;
	if ((fd = open_in_root(rootfd, agent, O_PATH)) == -1)
		return 0;
	ok = fstat(fd, &theirs) == 0 && theirs.st_dev == ours.st_dev &&
	    theirs.st_ino == ours.st_ino && may(&theirs, p->fsuid, p->fsgid, 4);
	close(fd);
	/* Every directory on the way must be searchable by the target. */
	for (i = 1; ok && agent[i] != '\0'; i++) {
		if (agent[i] != '/')
			continue;
		memcpy(prefix, agent, i);
		prefix[i] = '\0';
		if ((fd = open_in_root(rootfd, prefix, O_PATH)) == -1)
			return 0;
		ok = fstat(fd, &st) == 0 && may(&st, p->fsuid, p->fsgid, 1);
		close(fd);
	}
	return ok;
}

static int
read_agent(const char *agent, unsigned char **data, size_t *size)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, e;

	if ((fd = open(agent, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > MAX_AGENT_SIZE) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*size = (size_t)st.st_size;
	if ((*data = malloc(*size)) == NULL) {
		close(fd);
		return -1;
	}
	while (got < *size) {
		n = read(fd, *data + got, *size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n == 0 ? EIO : errno;
			free(*data);
			close(fd);
			errno = e;
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	return 0;
}

/*
 * An existing staged copy: 1 if it is exactly our agent and safe to load
 * (a regular file, owned by root, the target's user or us, writable by
 * nobody else, readable by the target), 0 if there is none, -1 if
 * something else has the name.
 */
static int
staged_ok(int dirfd, const char *name, const unsigned char *data,
    size_t size, const struct ht_proc *p)
{
	unsigned char buf[65536];
	struct stat st;
	size_t off = 0;
	ssize_t n;
	int fd, same = 1;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 022) != 0 || (uint64_t)st.st_size != size ||
	    (st.st_uid != 0 && st.st_uid != p->fsuid &&
	    st.st_uid != geteuid()) || !may(&st, p->fsuid, p->fsgid, 4)) {
		close(fd);
		return -1;
	}
	while (same && off < size) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || (size_t)n > size - off ||
		    memcmp(buf, data + off, (size_t)n) != 0)
			same = 0;
		else
			off += (size_t)n;
	}
	close(fd);
	return same ? 1 : -1;
}

/* Write a new copy under a temporary name and link it to name: no one
 * ever sees a partial copy under the final name. */
static int
stage_write(int dirfd, const char *name, const unsigned char *data,
    size_t size, const struct ht_proc *p)
{
	char tmp[NAME_MAX + 16];
	uint32_t r;
	size_t off = 0;
	ssize_t n;
	int fd = -1, tries, e;

	for (tries = 0; fd == -1 && tries < 16; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)now_ms() ^ (uint32_t)getpid() << 16;
		snprintf(tmp, sizeof(tmp), ".%s.%08" PRIx32, name, r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd == -1 && errno != EEXIST)
			return -1;
	}
	if (fd == -1)
		return -1;
	while (off < size) {
		n = write(fd, data + off, size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out_unlink;
		off += (size_t)n;
	}
	/* The umask must not take read access from the target's user; a
	 * root heaptool gives the copy to that user, as if it had made it. */
	if (fchmod(fd, 0644) != 0)
		goto out_unlink;
	if (geteuid() == 0 && p->fsuid != 0 &&
	    fchown(fd, p->fsuid, p->fsgid) != 0)
		goto out_unlink;
	if (close(fd) != 0) {
		fd = -1;
		goto out_unlink;
	}
	fd = -1;
	if (linkat(dirfd, tmp, dirfd, name, 0) != 0 && errno != EEXIST)
		goto out_unlink;
	unlinkat(dirfd, tmp, 0);
	return 0;

out_unlink:
	e = errno;
	if (fd != -1)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = e;
	return -1;
}

/* FNV-1a: names the copy by its content, so that attaching again, or to
 * another process of the same root, reuses it. */
static uint64_t
content_hash(const unsigned char *d, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= d[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Stage a copy of the agent in the target's /tmp, readable by its user:
 * /tmp/heaptool-agent-UID-HASH.so in the target's view.  Returns 0 and
 * that path in out, or -1 after printing why.
 */
static int
stage_agent(pid_t pid, const struct ht_proc *p, const char *agent,
    char *out, size_t outlen)
{
	char path[64], name[NAME_MAX + 1];
	unsigned char *data;
	size_t size;
	int dirfd, rc = -1, st;

	if (read_agent(agent, &data, &size) != 0) {
		ht_warn("agent %s: %s; reinstall heaptool, or set "
		    "HEAPTOOL_AGENT to the agent's path", agent,
		    strerror(errno));
		return -1;
	}
	snprintf(name, sizeof(name), "heaptool-agent-%lu-%016" PRIx64 ".so",
	    (unsigned long)p->fsuid, content_hash(data, size));
	/* O_NOFOLLOW: a /tmp that is a symlink could point anywhere in our
	 * own file system, since an absolute link through /proc/PID/root
	 * resolves against our root. */
	snprintf(path, sizeof(path), "/proc/%ld/root/tmp", (long)pid);
	if ((dirfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		ht_warn("attach %ld: the agent is not visible to the process "
		    "(another mount namespace or root) and its /tmp cannot "
		    "take a copy: %s; give it a writable /tmp, or make the "
		    "agent's directory visible to it", (long)pid,
		    strerror(errno));
		goto out_free;
	}
	if ((st = staged_ok(dirfd, name, data, size, p)) == 0) {
		if (stage_write(dirfd, name, data, size, p) != 0) {
			ht_warn("attach %ld: staging a copy of the agent in "
			    "the process's /tmp: %s; give it a writable /tmp, "
			    "or make the agent's directory visible to it",
			    (long)pid, strerror(errno));
			goto out_close;
		}
		/* A concurrent attach may have linked its copy first. */
		st = staged_ok(dirfd, name, data, size, p);
	}
	if (st != 1) {
		ht_warn("attach %ld: /tmp/%s in the process's file system is "
		    "not this heaptool's agent (its owner, mode or content "
		    "differ); remove it, then attach again", (long)pid, name);
		goto out_close;
	}
	if ((size_t)snprintf(out, outlen, "/tmp/%s", name) >= outlen)
		goto out_close;
	rc = 0;
out_close:
	close(dirfd);
out_free:
	free(data);
	return rc;
}

/*
 * The path at which the target loads the agent.  Returns 0, or -1 after
 * printing why.
 */
static int
agent_for_target(pid_t pid, const struct ht_proc *p, char *out,
    size_t outlen)
{
	char agent[PATH_MAX], path[64];
	int rootfd, sees;

	if (ht_agent_find(agent, sizeof(agent)) != 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/root", (long)pid);
	if ((rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT) {
			ht_warn("attach %ld: no such process (it exited); "
			    "check the PID", (long)pid);
			return -1;
		}
		if ((errno == EACCES || errno == EPERM) &&
		    p->uid != geteuid()) {
			ht_warn("attach %ld: not permitted: the process runs "
			    "as uid %lu and you are uid %lu; run as the "
			    "target's user or as root", (long)pid,
			    (unsigned long)p->uid, (unsigned long)geteuid());
			return -1;
		}
		if (errno == EACCES || errno == EPERM) {
			ht_warn("attach %ld: not permitted to inspect it (it "
			    "may have changed its credentials, like a setuid "
			    "program, or made itself non-dumpable); run as "
			    "root", (long)pid);
			return -1;
		}
		ht_warn("attach %ld: %s: %s", (long)pid, path,
		    strerror(errno));
		return -1;
	}
	sees = target_sees(rootfd, agent, p);
	close(rootfd);
	if (sees) {
		if ((size_t)snprintf(out, outlen, "%s", agent) >= outlen)
			return -1;
		return 0;
	}
	return stage_agent(pid, p, agent, out, outlen);
}

/*
 * Have the injector load the library at path (in the target's view) into
 * pid.  Returns 0, or -1 after printing why.
 *
 * Signals that would end heaptool are held meanwhile: a tracer that dies
 * while its tracee runs our call would leave the thread in the middle of
 * it.  They are delivered once the thread is let go.
 */
static int
inject_agent(pid_t pid, const char *path, int timeout_ms,
    int allow_seccomp)
{
	static const int held[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
	    SIGTSTP, SIGTTIN, SIGTTOU };
	struct ht_inject *inj;
	sigset_t set, old;
	size_t i;
	int rc;

	if ((inj = ht_inject_new(pid)) == NULL) {
		ht_warn("attach %ld: out of memory", (long)pid);
		return -1;
	}
	ht_inject_allow_seccomp(inj, allow_seccomp);
	sigemptyset(&set);
	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		sigaddset(&set, held[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	rc = ht_inject_load(inj, path, timeout_ms);
	if (rc != 0)
		ht_warn("attach %ld: %s", (long)pid, ht_inject_error(inj));
	ht_inject_free(inj);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* After a HELLO: reinstall the hooks a detach removed. */
static int
rehook(struct ht_ctl *c, pid_t pid, const struct ht_status *st)
{
	if (st->hooked)
		return 0;
	if (ht_ctl_command(c, HT_MSG_HOOK, 0, 0) != 0) {
		ctl_failed(c, pid);
		return -1;
	}
	return 0;
}

static void
remember(pid_t pid, const struct ht_proc *p)
{
	if (target_save(pid, p->start_time) != 0)
		ht_warn("attach %ld: cannot remember it as the current "
		    "target: %s; give -p %ld to the other commands, or set "
		    "XDG_STATE_HOME to a writable directory", (long)pid,
		    strerror(errno), (long)pid);
}

int
ht_cmd_attach(int argc, char **argv)
{
	struct ht_status st;
	struct ht_proc p;
	struct ht_ctl *c;
	uint64_t t0, deadline, tmo;
	char path[PATH_MAX];
	const char *popt = NULL;
	int ch, timeout_ms = DEFAULT_TIMEOUT_MS, rc = HT_EXIT_FAIL;
	int allow_seccomp = 0;
	pid_t pid;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":t:p:h", attach_options,
	    NULL)) != -1) {
		switch (ch) {
		case 't':
			if (ht_duration_parse(optarg, &tmo) != 0 || tmo == 0 ||
			    tmo > INT_MAX)
				return ht_usage("--timeout %s: not a duration; "
				    "use e.g. 500ms, 5s, 1m", optarg);
			timeout_ms = (int)tmo;
			break;
		case 'p':
			popt = optarg;
			break;
		case 'S':
			allow_seccomp = 1;
			break;
		case 'h':
			return show_help(attach_usage);
		default:
			return opt_error("attach", ch, argv);
		}
	}
	if (popt == NULL && optind < argc)
		popt = argv[optind++];
	if (popt == NULL)
		return ht_usage("attach: no process given; usage: heaptool "
		    "attach [--timeout DUR] PID");
	if (optind < argc)
		return ht_usage("attach: %s: one process at a time; see "
		    "'heaptool attach --help'", argv[optind]);
	if (parse_pid(popt, &pid) != 0)
		return bad_pid(popt);

	t0 = now_ms();
	if (ht_proc_read(pid, &p) != 0) {
		if (errno == ENOENT)
			ht_warn("attach %ld: no such process; check the PID",
			    (long)pid);
		else
			ht_warn("attach %ld: /proc/%ld: %s; is /proc mounted?",
			    (long)pid, (long)pid, strerror(errno));
		return HT_EXIT_FAIL;
	}
	if (p.state == 'Z' || p.state == 'X') {
		ht_warn("attach %ld: the process has exited (a zombie): its "
		    "parent has not reaped it yet; attach to a running "
		    "process", (long)pid);
		return HT_EXIT_FAIL;
	}
	if (check_running(pid, "attach", &p) != HT_EXIT_OK)
		return HT_EXIT_FAIL;
	if ((c = ctl_open(pid)) == NULL)
		return HT_EXIT_FAIL;

	/* An agent answers already: reconnect. */
	if (ht_ctl_status(c, HT_MSG_HELLO, &st) == 0) {
		if (rehook(c, pid, &st) != 0)
			goto out_free;
		remember(pid, &p);
		printf("heaptool: attached to %ld (agent already loaded)\n",
		    (long)pid);
		rc = flush_stdout();
		goto out_free;
	}
	if (ht_ctl_errcode(c) != HT_CTL_ENOAGENT) {
		ctl_failed(c, pid);
		goto out_free;
	}
	if (agent_mapped(pid)) {
		ht_warn("attach %ld: the agent is loaded in the process but "
		    "does not answer (it may have disabled itself, or come "
		    "from heaptool run or another heaptool); loading it again "
		    "is not safe: restart the process to profile it",
		    (long)pid);
		goto out_free;
	}

	if (agent_for_target(pid, &p, path, sizeof(path)) != 0 ||
	    inject_agent(pid, path, timeout_ms, allow_seccomp) != 0)
		goto out_free;

	/* The agent's thread patches the hooks, then opens its socket. */
	deadline = now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		if (ht_ctl_status(c, HT_MSG_HELLO, &st) == 0)
			break;
		if (ht_ctl_errcode(c) != HT_CTL_ENOAGENT) {
			ctl_failed(c, pid);
			goto out_free;
		}
		if (now_ms() >= deadline) {
			ht_warn("attach %ld: the agent was loaded but did not "
			    "answer within %d ms; the process may be very busy "
			    "or short of memory: try heaptool attach %ld again "
			    "later", (long)pid, timeout_ms, (long)pid);
			goto out_free;
		}
		usleep(POLL_MS * 1000);
	}
	if (rehook(c, pid, &st) != 0)
		goto out_free;
	remember(pid, &p);
	printf("heaptool: attached to %ld in %" PRIu64 " ms\n", (long)pid,
	    now_ms() - t0);
	rc = flush_stdout();
out_free:
	ht_ctl_free(c);
	return rc;
}

/* ---- start, stop, detach ---- */

static const char start_usage[] =
"usage: heaptool start [-p PID] [--rate SIZE] [--restart] [--dump-prefix P]\n"
"                      [--dump-interval DUR] [--dump-every SIZE]\n"
"                      [--dump-at-rss SIZE] [--threshold SIZE]\n"
"\n"
"Start a profiling session in the target: its allocations from now on\n"
"are sampled and attributed to their call sites.  Each session starts\n"
"from zero.\n"
"\n"
"  -p, --pid PID      the process (default: the current target)\n"
"  -r, --rate SIZE    sample about one allocation per SIZE bytes\n"
"                     (default 512KiB; 1 records every allocation)\n"
"      --restart      end a running session and start a new one\n"
"      --dump-prefix P     the target writes dumps P.PID.SEQ.heap (P as\n"
"                          the target sees its files): when an\n"
"                          allocation fails, at exit, and on:\n"
"      --dump-interval DUR every DUR (e.g. 30s)\n"
"      --dump-every SIZE   after each SIZE allocated\n"
"      --dump-at-rss SIZE  when RSS reaches SIZE, then each further 10%\n"
"      --threshold SIZE    fold the sites below SIZE in the dumps\n"
"  -h, --help         show this help\n"
"\n"
"See man heaptool for the details.\n";

static const char stop_usage[] =
"usage: heaptool stop [-p PID]\n"
"\n"
"End the target's session.  Its profile stays readable with heaptool\n"
"report and heaptool dump until the next start.\n"
"\n"
"  -p, --pid PID  the process (default: the current target)\n"
"  -h, --help     show this help\n"
"\n"
"See man heaptool for the details.\n";

static const char detach_usage[] =
"usage: heaptool detach [-p PID]\n"
"\n"
"End the session, put back every hook the agent installed, and forget\n"
"the current target.  The agent stays loaded, idle; heaptool attach\n"
"hooks it again.\n"
"\n"
"  -p, --pid PID  the process (default: the current target)\n"
"  -h, --help     show this help\n"
"\n"
"See man heaptool for the details.\n";

static const struct option start_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "rate", required_argument, NULL, 'r' },
	{ "restart", no_argument, NULL, 'R' },
	HT_DUMP_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options of the commands that take only -p. */
static const struct option pid_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_start(int argc, char **argv)
{
	static struct ht_request req;
	struct ht_dump_opts dumps;
	struct ht_status st;
	struct ht_ctl *c;
	const char *popt = NULL;
	uint64_t rate = DEFAULT_RATE;
	uint32_t flags = 0;
	char rs[32];
	int ch, rc;
	pid_t pid;

	memset(&dumps, 0, sizeof(dumps));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":p:r:h", start_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'r':
			if (ht_size_parse(optarg, &rate) != 0)
				return ht_usage("--rate %s: not a size; "
				    HT_SIZE_HINT, optarg);
			if (rate == 0)
				return ht_usage("--rate %s: must be at least "
				    "1; use 1 to record every allocation",
				    optarg);
			break;
		case 'R':
			flags |= HT_START_RESTART;
			break;
		case HT_OPT_DUMP_PREFIX:
		case HT_OPT_DUMP_INTERVAL:
		case HT_OPT_DUMP_EVERY:
		case HT_OPT_DUMP_AT_RSS:
		case HT_OPT_THRESHOLD:
			if ((rc = ht_dump_opt(ch, optarg, &dumps)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'h':
			return show_help(start_usage);
		default:
			return opt_error("start", ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("start: %s: unexpected argument; see "
		    "'heaptool start --help'", argv[optind]);
	if ((rc = ht_dump_opts_finish(&dumps)) != HT_EXIT_OK)
		return rc;
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ctl_open(pid)) == NULL)
		return HT_EXIT_FAIL;
	memset(&req, 0, sizeof(req));
	req.type = HT_MSG_START;
	req.rate = rate;
	req.flags = flags;
	req.dump_interval_ms = dumps.interval_ms;
	req.dump_every_bytes = dumps.every_bytes;
	req.dump_at_rss_bytes = dumps.at_rss_bytes;
	req.threshold_bytes = dumps.threshold_bytes;
	memcpy(req.dump_prefix, dumps.prefix, strlen(dumps.prefix) + 1);
	if (ht_ctl_start(c, &req) != 0) {
		rc = ctl_failed(c, pid);
		goto out_free;
	}
	if (rate == 1)
		snprintf(rs, sizeof(rs), "1 (every allocation)");
	else
		ht_size_format(rate, rs, sizeof(rs));
	/* The epoch is only known to the agent; a failure to ask is no
	 * failure of the start. */
	if (ht_ctl_status(c, HT_MSG_STATUS, &st) == 0)
		printf("heaptool: %ld: session %" PRIu64 " started, rate %s\n",
		    (long)pid, st.epoch, rs);
	else
		printf("heaptool: %ld: session started, rate %s\n", (long)pid,
		    rs);
	if (dumps.prefix[0] != '\0')
		printf("heaptool: %ld: dumps to %s%s.%ld.SEQ.heap (as the "
		    "target sees its files)\n", (long)pid, dumps.prefix,
		    dumps.prefix[strlen(dumps.prefix) - 1] == '/' ?
		    "heaptool" : "", (long)pid);
	rc = flush_stdout();
out_free:
	ht_ctl_free(c);
	return rc;
}

/* stop and detach: a request answered by OK. */
static int
simple_command(int argc, char **argv, const char *name, const char *usage,
    uint16_t type)
{
	struct ht_ctl *c;
	const char *popt = NULL;
	int ch, rc;
	pid_t pid;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":p:h", pid_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'h':
			return show_help(usage);
		default:
			return opt_error(name, ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("%s: %s: unexpected argument; see 'heaptool %s "
		    "--help'", name, argv[optind], name);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ctl_open(pid)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_ctl_command(c, type, 0, 0) != 0) {
		rc = ctl_failed(c, pid);
		goto out_free;
	}
	if (type == HT_MSG_DETACH) {
		target_forget(pid);
		printf("heaptool: detached from %ld: its hooks are removed "
		    "(the agent stays loaded, idle)\n", (long)pid);
	} else
		printf("heaptool: %ld: session stopped; heaptool report shows "
		    "its profile\n", (long)pid);
	rc = flush_stdout();
out_free:
	ht_ctl_free(c);
	return rc;
}

int
ht_cmd_stop(int argc, char **argv)
{
	return simple_command(argc, argv, "stop", stop_usage, HT_MSG_STOP);
}

int
ht_cmd_detach(int argc, char **argv)
{
	return simple_command(argc, argv, "detach", detach_usage,
	    HT_MSG_DETACH);
}

/* ---- status ---- */

static const char status_usage[] =
"usage: heaptool status [-p PID] [--json]\n"
"\n"
"Show the target's agent (version, protocol, hooks) and session (state,\n"
"rate, duration, samples, the agent's own memory).\n"
"\n"
"  -p, --pid PID  the process (default: the current target)\n"
"  -j, --json     print one JSON object\n"
"  -h, --help     show this help\n"
"\n"
"See man heaptool for the details and the JSON keys.\n";

static const struct option status_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Seconds since the session started, or -1 when not running (the status
 * carries no end time). */
static double
running_for(const struct ht_status *st)
{
	struct timespec ts;
	uint64_t now;

	if (st->state != HT_STATE_RUNNING || st->start_ns == 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return now > st->start_ns ? (double)(now - st->start_ns) / 1e9 : 0;
}

static void
status_text(pid_t pid, const struct ht_status *st)
{
	char a[32];
	double d;

	printf("pid %ld: agent %s, protocol %" PRIu32 "\n", (long)pid,
	    st->agent_version[0] != '\0' ? st->agent_version : "?",
	    st->proto_version);
	if (st->hooked)
		printf("  hooks           installed: %" PRIu32 " slot%s in %"
		    PRIu32 " module%s\n", st->slots_patched,
		    st->slots_patched == 1 ? "" : "s", st->modules,
		    st->modules == 1 ? "" : "s");
	else
		printf("  hooks           removed (detached; heaptool attach "
		    "%ld hooks again)\n", (long)pid);
	if (st->state == HT_STATE_NONE)
		printf("  session         none yet; heaptool start begins "
		    "one\n");
	else {
		printf("  session         %" PRIu64 " %s, ", st->epoch,
		    ht_profile_state_name(st->state));
		if (st->rate == 1)
			printf("rate 1 (every allocation, exact)");
		else
			printf("rate %s", ht_size_format(st->rate, a,
			    sizeof(a)));
		if ((d = running_for(st)) >= 0)
			printf(", for %.2f s", d);
		putchar('\n');
		printf("  samples         %" PRIu64 " (%" PRIu64 " live), %"
		    PRIu64 " dropped\n", st->samples, st->live_samples,
		    st->dropped_samples);
	}
	printf("  heaptool agent  %s overhead\n",
	    ht_size_format(st->overhead_bytes, a, sizeof(a)));
}

static int
status_json(pid_t pid, const struct ht_status *st)
{
	struct ht_json j;
	double d;

	ht_json_init(&j, stdout, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_uint(&j, "pid", (uint64_t)pid);
	ht_json_string(&j, "agent_version", st->agent_version);
	ht_json_uint(&j, "protocol", st->proto_version);
	ht_json_bool(&j, "hooked", st->hooked != 0);
	ht_json_uint(&j, "slots_patched", st->slots_patched);
	ht_json_uint(&j, "modules", st->modules);
	ht_json_object_begin(&j, "session");
	ht_json_string(&j, "state", ht_profile_state_name(st->state));
	ht_json_uint(&j, "epoch", st->epoch);
	ht_json_uint(&j, "rate", st->rate);
	if ((d = running_for(st)) >= 0)
		ht_json_double(&j, "duration_s", d);
	else
		ht_json_null(&j, "duration_s");
	ht_json_object_end(&j);
	ht_json_uint(&j, "samples", st->samples);
	ht_json_uint(&j, "live_samples", st->live_samples);
	ht_json_uint(&j, "dropped_samples", st->dropped_samples);
	ht_json_uint(&j, "overhead_bytes", st->overhead_bytes);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}

int
ht_cmd_status(int argc, char **argv)
{
	struct ht_status st;
	struct ht_ctl *c;
	const char *popt = NULL;
	int ch, rc, json = 0;
	pid_t pid;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":p:jh", status_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			return show_help(status_usage);
		default:
			return opt_error("status", ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("status: %s: unexpected argument; see "
		    "'heaptool status --help'", argv[optind]);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ctl_open(pid)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_ctl_status(c, HT_MSG_STATUS, &st) != 0) {
		rc = ctl_failed(c, pid);
		goto out_free;
	}
	if (json)
		status_json(pid, &st);
	else
		status_text(pid, &st);
	rc = flush_stdout();
out_free:
	ht_ctl_free(c);
	return rc;
}

/* ---- dump ---- */

static const char dump_usage[] =
"usage: heaptool dump [-p PID] -o FILE\n"
"\n"
"Save the target's current profile to FILE (mode 0600, replaced\n"
"atomically), for heaptool report FILE later or elsewhere.  With\n"
"-o -, write it to stdout.\n"
"\n"
"  -p, --pid PID      the process (default: the current target)\n"
"  -o, --output FILE  the file to write\n"
"  -h, --help         show this help\n"
"\n"
"See man heaptool for the details.\n";

static const struct option dump_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_dump(int argc, char **argv)
{
	struct ht_profile *prof;
	struct ht_ctl *c;
	const uint8_t *buf;
	const char *popt = NULL, *out = NULL;
	char err[256];
	size_t len;
	int ch, rc;
	pid_t pid;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":p:o:h", dump_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'o':
			if (optarg[0] == '\0')
				return ht_usage("-o: empty file name; give "
				    "the profile's path");
			out = optarg;
			break;
		case 'h':
			return show_help(dump_usage);
		default:
			return opt_error("dump", ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("dump: %s: unexpected argument; see 'heaptool "
		    "dump --help'", argv[optind]);
	if (out == NULL)
		return ht_usage("dump: no output file; usage: heaptool dump "
		    "[-p PID] -o FILE");
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ctl_open(pid)) == NULL)
		return HT_EXIT_FAIL;
	rc = HT_EXIT_FAIL;
	if (ht_ctl_report(c, &buf, &len) != 0) {
		rc = ctl_failed(c, pid);
		goto out_free;
	}
	/* Never save what heaptool report could not read. */
	if ((prof = ht_profile_decode(buf, len, err, sizeof(err))) == NULL) {
		ht_warn("target %ld: the agent sent a profile that does not "
		    "decode (%s); use the heaptool that matches the agent",
		    (long)pid, err);
		goto out_free;
	}
	ht_profile_free(prof);
	if (strcmp(out, "-") == 0) {
		if (ht_write_all(STDOUT_FILENO, buf, len) != 0) {
			ht_warn("dump: stdout: %s", strerror(errno));
			goto out_free;
		}
		rc = HT_EXIT_OK;
		goto out_free;
	}
	if (ht_write_atomic(out, buf, len) != 0) {
		ht_warn("-o %s: %s; choose a writable path", out,
		    strerror(errno));
		goto out_free;
	}
	printf("heaptool: profile of %ld written to %s\n", (long)pid, out);
	rc = flush_stdout();
out_free:
	ht_ctl_free(c);
	return rc;
}
