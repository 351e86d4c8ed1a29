/*
 * The agent's file (see staging.h).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "modfile.h"
#include "proc.h"
#include "staging.h"

#define AGENT_NAME     "libheaptool-agent.so"
/* The agent is a few hundred KiB; anything far larger is not it. */
#define MAX_AGENT_SIZE (64u << 20)

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, R_OK) == 0;
}

int
ht_staging_find(char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	const char *env;
	ssize_t n;

	if ((env = getenv("HEAPTOOL_AGENT")) != NULL && env[0] != '\0') {
		if (realpath(env, self) == NULL || !exists(self)) {
			ht_warn("HEAPTOOL_AGENT=%s: %s; set it to the path "
				"of " AGENT_NAME " or unset it",
			    env,
			    realpath(env, self) == NULL ?
				strerror(errno) :
				"not a readable file");
			return -1;
		}
		if ((size_t)snprintf(buf, len, "%s", self) >= len)
			goto toolong;
		return 0;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/" AGENT_NAME,
				self) >= len)
				goto toolong;
			if (exists(buf))
				return 0;
		}
	}
	if ((size_t)snprintf(buf, len, "%s/" AGENT_NAME, HT_AGENTDIR) >= len)
		goto toolong;
	if (buf[0] == '/' && exists(buf))
		return 0;
	ht_warn("agent " AGENT_NAME ": not found next to heaptool nor in %s; "
		"run make install, or set HEAPTOOL_AGENT to its path",
	    HT_AGENTDIR);
	return -1;

toolong:
	ht_warn("agent " AGENT_NAME ": path too long; set HEAPTOOL_AGENT to "
		"a shorter path");
	return -1;
}

int
ht_staging_is_agent(const char *base)
{
	return strcmp(base, "libheaptool-agent.so") == 0 ||
	    strncmp(base, "heaptool-agent-", 15) == 0;
}

int
ht_staging_loaded(pid_t pid)
{
	return ht_proc_mapped(pid, ht_staging_is_agent);
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
	if ((fd = ht_modfile_open_in_root(rootfd, agent, O_PATH)) == -1)
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
		if ((fd = ht_modfile_open_in_root(rootfd, prefix, O_PATH)) ==
		    -1)
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
staged_ok(int dirfd, const char *name, const unsigned char *data, size_t size,
    const struct ht_proc *p)
{
	unsigned char buf[65536];
	struct stat st;
	size_t off = 0;
	ssize_t n;
	int fd, same = 1;

	fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 022) != 0 || (uint64_t)st.st_size != size ||
	    (st.st_uid != 0 && st.st_uid != p->fsuid &&
		st.st_uid != geteuid()) ||
	    !may(&st, p->fsuid, p->fsgid, 4)) {
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
stage_write(int dirfd, const char *name, const unsigned char *data, size_t size,
    const struct ht_proc *p)
{
	char tmp[NAME_MAX + 16];
	uint32_t r;
	size_t off = 0;
	ssize_t n;
	struct timespec ts;
	int fd = -1, tries, e;

	for (tries = 0; fd == -1 && tries < 16; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			r = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 16;
		}
		snprintf(tmp, sizeof(tmp), ".%s.%08" PRIx32, name, r);
		fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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
stage_agent(pid_t pid, const struct ht_proc *p, const char *agent, char *out,
    size_t outlen)
{
	char path[64], name[NAME_MAX + 1];
	unsigned char *data;
	size_t size;
	int dirfd, rc = -1, st;

	if (read_agent(agent, &data, &size) != 0) {
		ht_warn("agent %s: %s; reinstall heaptool, or set "
			"HEAPTOOL_AGENT to the agent's path",
		    agent, strerror(errno));
		return -1;
	}
	snprintf(name, sizeof(name), "heaptool-agent-%lu-%016" PRIx64 ".so",
	    (unsigned long)p->fsuid, content_hash(data, size));
	/* O_NOFOLLOW: a /tmp that is a symlink could point anywhere in our
	 * own file system, since an absolute link through /proc/PID/root
	 * resolves against our root. */
	if (ht_proc_path(pid, "root/tmp", path, sizeof(path)) != 0 ||
	    (dirfd = open(path,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		ht_warn("attach %ld: the agent is not visible to the process "
			"(another mount namespace or root) and its /tmp cannot "
			"take a copy: %s; give it a writable /tmp, or make the "
			"agent's directory visible to it",
		    (long)pid, strerror(errno));
		goto out_free;
	}
	if ((st = staged_ok(dirfd, name, data, size, p)) == 0) {
		if (stage_write(dirfd, name, data, size, p) != 0) {
			ht_warn(
			    "attach %ld: staging a copy of the agent in "
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
			"differ); remove it, then attach again",
		    (long)pid, name);
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

int
ht_staging_path(pid_t pid, const struct ht_proc *p, char *out, size_t outlen)
{
	char agent[PATH_MAX], path[64];
	int rootfd, sees;

	/* A second copy would hook the process behind the first one's
	 * back: the one loaded is brought up instead (heaptool attach). */
	if (ht_staging_loaded(pid)) {
		ht_warn("attach %ld: the agent was loaded in the process "
			"meanwhile (another heaptool attach?); attach again",
		    (long)pid);
		return -1;
	}
	if (ht_staging_find(agent, sizeof(agent)) != 0)
		return -1;
	/* Through a live thread: a leader that called pthread_exit took
	 * its /proc/PID/root with it. */
	if (ht_proc_path(pid, "root", path, sizeof(path)) != 0 ||
	    (rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT) {
			ht_warn("attach %ld: no such process (it exited); "
				"check the PID",
			    (long)pid);
			return -1;
		}
		if ((errno == EACCES || errno == EPERM) &&
		    p->uid != geteuid()) {
			ht_warn("attach %ld: not permitted: the process runs "
				"as uid %lu and you are uid %lu; run as the "
				"target's user or as root",
			    (long)pid, (unsigned long)p->uid,
			    (unsigned long)geteuid());
			return -1;
		}
		if (errno == EACCES || errno == EPERM) {
			ht_warn(
			    "attach %ld: not permitted to inspect it (it "
			    "may have changed its credentials, like a setuid "
			    "program, or made itself non-dumpable); run as "
			    "root",
			    (long)pid);
			return -1;
		}
		ht_warn("attach %ld: its root directory: %s", (long)pid,
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
