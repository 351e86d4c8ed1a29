/*
 * The /proc reader (see proc.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

ssize_t
ht_proc_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[256];
	ssize_t n, got = 0;
	int fd, len, err;

	if (pid == 0)
		len = snprintf(path, sizeof(path), "/proc/%s", name);
	else if (tid == 0)
		len = snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid,
		    name);
	else
		len = snprintf(path, sizeof(path), "/proc/%ld/task/%ld/%s",
		    (long)pid, (long)tid, name);
	if (len < 0 || (size_t)len >= sizeof(path) || size == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	/* A /proc file is made as it is read: read until its end. */
	while ((size_t)got < size - 1) {
		n = read(fd, buf + got, size - 1 - (size_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	close(fd);
	return got;
}

int
ht_proc_field(const char *status, const char *key, char *out, size_t outlen)
{
	const char *p = status;
	size_t klen = strlen(key), n;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			n = strcspn(p, "\n");
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return -1;
}

char
ht_proc_task_state(pid_t pid, pid_t tid)
{
	char buf[1024], *p;

	if (ht_proc_file(pid, tid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields resume after the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

int
ht_proc_tasks(pid_t pid, int (*fn)(void *, pid_t, char), void *arg)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	pid_t tid;
	char st;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tid = (pid_t)atoi(de->d_name);
		/* Gone since the directory was read. */
		if ((st = ht_proc_task_state(pid, tid)) == 0)
			continue;
		r = fn(arg, tid, st);
	}
	closedir(d);
	return r;
}

long
ht_proc_task_syscall(pid_t pid, pid_t tid)
{
	char buf[256];

	/* "running" while in user code, "-1 ..." outside any call. */
	if (ht_proc_file(pid, tid, "syscall", buf, sizeof(buf)) <= 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return -1;
	return strtol(buf, NULL, 10);
}

static int
live_state_cb(void *arg, pid_t tid, char st)
{
	(void)arg;
	(void)tid;
	return st != 'Z' && st != 'X' ? st : 0;
}

/* The last number on the line at s. */
static long long
last_number(const char *s)
{
	long long v = -1;
	char *end;

	while (*s != '\0' && *s != '\n') {
		if (*s >= '0' && *s <= '9') {
			v = strtoll(s, &end, 10);
			s = end;
		} else
			s++;
	}
	return v;
}

int
ht_proc_read(pid_t pid, struct ht_proc *p)
{
	char buf[4096], v[256], *s, *end;
	unsigned long long id[4];
	int i, st;

	memset(p, 0, sizeof(*p));
	p->nspid = pid;
	if (ht_proc_file(pid, 0, "stat", buf, sizeof(buf)) == -1)
		return -1;
	if ((s = strrchr(buf, ')')) == NULL || s[1] != ' ')
		goto out_inval;
	s += 2;
	p->state = *s;
	/* Fields 3 to 21, then the start time (22). */
	for (i = 3; i < 22; i++) {
		if ((s = strchr(s, ' ')) == NULL)
			goto out_inval;
		s++;
	}
	errno = 0;
	p->start_time = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		goto out_inval;
	/* A thread group leader that called pthread_exit is a zombie while
	 * its other threads run on: the process is alive. */
	if (p->state == 'Z')
		p->state = (st = ht_proc_tasks(pid, live_state_cb, NULL)) > 0 ?
		    (char)st :
		    'Z';

	if (ht_proc_file(pid, 0, "status", buf, sizeof(buf)) == -1)
		return -1;
	if (ht_proc_field(buf, "TracerPid", v, sizeof(v)) == 0)
		p->tracer = (pid_t)strtol(v, NULL, 10);
	if (ht_proc_field(buf, "NSpid", v, sizeof(v)) == 0 &&
	    last_number(v) > 0)
		p->nspid = (pid_t)last_number(v);
	if (ht_proc_field(buf, "Uid", v, sizeof(v)) == 0 &&
	    sscanf(v, "%llu %llu %llu %llu", &id[0], &id[1], &id[2], &id[3]) ==
		4) {
		p->uid = (uid_t)id[0];
		p->fsuid = (uid_t)id[3];
	}
	if (ht_proc_field(buf, "Gid", v, sizeof(v)) == 0 &&
	    sscanf(v, "%llu %llu %llu %llu", &id[0], &id[1], &id[2], &id[3]) ==
		4)
		p->fsgid = (gid_t)id[3];
	return 0;

out_inval:
	errno = EINVAL;
	return -1;
}

static int
live_task_cb(void *arg, pid_t tid, char st)
{
	if (st == 'Z' || st == 'X')
		return 0;
	*(pid_t *)arg = tid;
	return 1;
}

pid_t
ht_proc_live_task(pid_t pid)
{
	pid_t tid = 0;
	char st;

	if ((st = ht_proc_task_state(pid, 0)) == 0) {
		errno = ENOENT;
		return -1;
	}
	if (st != 'Z' && st != 'X')
		return pid;
	if (ht_proc_tasks(pid, live_task_cb, &tid) != 1) {
		errno = ENOENT;
		return -1;
	}
	return tid;
}

int
ht_proc_path(pid_t pid, const char *name, char *buf, size_t len)
{
	pid_t tid;
	int n;

	if ((tid = ht_proc_live_task(pid)) == -1)
		return -1;
	n = snprintf(buf, len, "/proc/%ld/%s", (long)tid, name);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
ht_proc_root_link(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (ht_proc_path(pid, "root", path, sizeof(path)) != 0)
		return -1;
	if ((n = readlink(path, buf, len)) == -1)
		return -1;
	if ((size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

const char *
ht_proc_in_root(const char *rootlink, const char *path)
{
	size_t n = strlen(rootlink);

	if (path[0] != '/')
		return NULL;
	if (strcmp(rootlink, "/") == 0)
		return path;
	/* "/srv/jail" begins "/srv/jail/lib/x.so", not "/srv/jailbreak". */
	if (strncmp(path, rootlink, n) != 0 || path[n] != '/')
		return NULL;
	return path + n;
}

int
ht_proc_maps(pid_t pid, int (*fn)(void *, const struct ht_proc_map *),
    void *arg)
{
	static const char deleted[] = " (deleted)";
	struct ht_proc_map m;
	char path[64], *line = NULL, *name;
	size_t cap = 0, len;
	FILE *f;
	int pos, r = 0, err;

	if (ht_proc_path(pid, "maps", path, sizeof(path)) != 0 ||
	    (f = fopen(path, "re")) == NULL)
		return -1;
	while (r == 0 && getline(&line, &cap, f) != -1) {
		memset(&m, 0, sizeof(m));
		pos = (int)strlen(line);
		/* The blank after the inode is skipped up to the path, or
		 * over the newline when there is none. */
		if (sscanf(line,
			"%" SCNx64 "-%" SCNx64 " %4s %" SCNx64
			" %*x:%*x %" SCNu64 " %n",
			&m.lo, &m.hi, m.perms, &m.offset, &m.inode, &pos) < 5)
			continue;
		name = line + pos;
		len = strcspn(name, "\n");
		name[len] = '\0';
		if (len >= sizeof(deleted) - 1 &&
		    strcmp(name + len - (sizeof(deleted) - 1), deleted) == 0) {
			name[len - (sizeof(deleted) - 1)] = '\0';
			m.deleted = 1;
		}
		m.path = name;
		r = fn(arg, &m);
	}
	err = errno;
	if (r == 0 && ferror(f)) {
		free(line);
		fclose(f);
		errno = err;
		return -1;
	}
	free(line);
	fclose(f);
	return r;
}

struct mapped {
	int (*match)(const char *);
};

static int
mapped_cb(void *arg, const struct ht_proc_map *m)
{
	const struct mapped *w = arg;

	if (m->path[0] != '/')
		return 0;
	return w->match(strrchr(m->path, '/') + 1) != 0;
}

int
ht_proc_mapped(pid_t pid, int (*match)(const char *base))
{
	struct mapped w = { match };

	return ht_proc_maps(pid, mapped_cb, &w) == 1;
}

int
ht_proc_unix_listener(pid_t pid, const char *name, uint64_t *inode)
{
	char path[64], *line = NULL, *p;
	unsigned long flags, st;
	uint64_t ino;
	size_t cap = 0, nl = strlen(name);
	ssize_t n;
	FILE *fp;
	int found = 0, e;

	if (ht_proc_path(pid, "net/unix", path, sizeof(path)) != 0 ||
	    (fp = fopen(path, "re")) == NULL)
		return -1;
	/* "Num RefCount Protocol Flags Type St Inode Path"; an abstract
	 * name is shown with '@' for its leading NUL. */
	while (!found && (n = getline(&line, &cap, fp)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (sscanf(line, "%*s %*s %*s %lx %*s %lx %" SCNu64, &flags,
			&st, &ino) != 3 ||
		    (p = strchr(line, '@')) == NULL)
			continue;
		found = (flags & 0x10000) != 0 && st == 1 &&
		    strncmp(p + 1, name, nl) == 0 && p[1 + nl] == '\0';
		if (found)
			*inode = ino;
	}
	e = ferror(fp) ? errno : ENOENT;
	free(line);
	fclose(fp);
	if (!found)
		errno = e;
	return found ? 0 : -1;
}

int
ht_proc_has_socket(pid_t pid, uint64_t inode)
{
	char dir[64], path[96], want[48], link[64];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int found = 0;

	if (ht_proc_path(pid, "fd", dir, sizeof(dir)) != 0)
		return -1;
	snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%.20s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(d);
	return found;
}
