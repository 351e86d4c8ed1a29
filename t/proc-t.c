/*
 * Tests for cli/proc.c on this process and a child of it:
 *   - status fields: the value without its blanks, to the end of its line,
 *     cut to the buffer; a key is matched whole;
 *   - maps: a file whose name holds spaces and parentheses is found with
 *     its path, offset and inode, and after its unlink by the same path,
 *     marked deleted; anonymous memory has no path; [stack] is there;
 *   - ht_proc_mapped finds libc by its basename, nothing for a name no
 *     module has or a process that does not exist;
 *   - a child blocked in read(2): state S, its system call SYS_read, one
 *     thread; and ht_proc_read of ourselves and of no process;
 *   - a child whose main thread called pthread_exit: its live thread
 *     stands for it, and its maps, root and descriptors are read through
 *     that thread; ours are read through ourselves;
 *   - paths of maps inside a root: the root's path in front taken off,
 *     a path outside the root (or beside it: "/srv/jailbreak" is not in
 *     "/srv/jail") is none.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "proc.h"

static void
test_field(void)
{
	static const char status[] = "Name:\tsh x\nTgidx:\t1\n"
				     "Tgid:\t  42\nUid:\t1\t2\t3\t4\n";
	char v[64], small[4];

	ok(ht_proc_field(status, "Name", v, sizeof(v)) == 0 &&
		strcmp(v, "sh x") == 0,
	    "a field with a blank in its value");
	ok(ht_proc_field(status, "Tgid", v, sizeof(v)) == 0 &&
		strcmp(v, "42") == 0,
	    "a key is matched whole, blanks skipped");
	ok(ht_proc_field(status, "Uid", v, sizeof(v)) == 0 &&
		strcmp(v, "1\t2\t3\t4") == 0,
	    "the value runs to the line's end");
	ok(ht_proc_field(status, "Uid", small, sizeof(small)) == 0 &&
		strcmp(small, "1\t2") == 0,
	    "cut to the buffer");
	is_int(-1, ht_proc_field(status, "Gid", v, sizeof(v)), "no such key");
}

struct seen {
	const char *path;
	uint64_t lo;
	ino_t ino;
	int found, deleted, offset_ok, anon, stack;
};

static int
seen_cb(void *arg, const struct ht_proc_map *m)
{
	struct seen *s = arg;

	if (m->lo == s->lo && strcmp(m->path, s->path) == 0) {
		s->found = m->inode == (uint64_t)s->ino;
		s->deleted = m->deleted;
		s->offset_ok = m->offset == 4096 && strlen(m->perms) == 4;
	}
	if (m->inode == 0 && m->path[0] == '\0')
		s->anon = 1;
	if (strcmp(m->path, "[stack]") == 0)
		s->stack = 1;
	return 0;
}

static void
test_maps(void)
{
	struct seen s;
	struct stat st;
	char dir[PATH_MAX], tmp[PATH_MAX], path[PATH_MAX + 32];
	char page[8192];
	void *map, *anon;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/proc-t.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmp) == NULL || realpath(tmp, dir) == NULL)
		bail("mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/a b (c) d", dir);
	memset(page, 'x', sizeof(page));
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    write(fd, page, sizeof(page)) != (ssize_t)sizeof(page) ||
	    fstat(fd, &st) != 0 ||
	    (map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096)) ==
		MAP_FAILED)
		bail("mapping %s: %s", path, strerror(errno));
	close(fd);
	if ((anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0)) == MAP_FAILED)
		bail("mmap: %s", strerror(errno));

	memset(&s, 0, sizeof(s));
	s.path = path;
	s.lo = (uint64_t)(uintptr_t)map;
	s.ino = st.st_ino;
	is_int(0, ht_proc_maps(getpid(), seen_cb, &s), "maps: read to the end");
	ok(s.found && !s.deleted, "maps: a path with blanks and parentheses");
	ok(s.offset_ok, "maps: its offset and permissions");
	ok(s.anon, "maps: anonymous memory has no path");
	ok(s.stack, "maps: [stack]");
	unlink(path);
	rmdir(dir);
	memset(&s, 0, sizeof(s));
	s.path = path;
	s.lo = (uint64_t)(uintptr_t)map;
	s.ino = st.st_ino;
	(void)ht_proc_maps(getpid(), seen_cb, &s);
	ok(s.found && s.deleted, "maps: deleted, under its own path");
	munmap(map, 4096);
	munmap(anon, 4096);
	errno = 0;
	ok(ht_proc_maps(-2, seen_cb, &s) == -1 && errno == ENOENT,
	    "maps: no such process is ENOENT");
}

static int
is_libc(const char *base)
{
	return strncmp(base, "libc.so", 7) == 0 ||
	    strncmp(base, "libc-", 5) == 0;
}

static int
never(const char *base)
{
	return strcmp(base, "no-such-module.so") == 0;
}

static int
count_cb(void *arg, pid_t tid, char st)
{
	(void)tid;
	(void)st;
	(*(int *)arg)++;
	return 0;
}

static void
test_tasks(void)
{
	struct timespec ts = { 0, 10 * 1000000 };
	struct ht_proc p;
	pid_t child;
	char c;
	int fds[2], i, n = 0, st;

	is_int(1, ht_proc_mapped(getpid(), is_libc), "libc is mapped");
	is_int(0, ht_proc_mapped(getpid(), never), "a module that is not");
	is_int(0, ht_proc_mapped(-2, is_libc), "no process: nothing mapped");

	if (pipe(fds) != 0)
		bail("pipe: %s", strerror(errno));
	if ((child = fork()) == 0) {
		close(fds[1]);
		(void)read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	for (i = 0; i < 500 &&
	     (ht_proc_task_state(child, child) != 'S' ||
		 ht_proc_task_syscall(child, child) != SYS_read);
	     i++)
		nanosleep(&ts, NULL);
	is_int('S', ht_proc_task_state(child, child), "child: sleeping");
	is_int(SYS_read, ht_proc_task_syscall(child, child),
	    "child: in read(2)");
	is_int(0, ht_proc_tasks(child, count_cb, &n), "child: tasks listed");
	is_int(1, n, "child: one thread");
	close(fds[1]);
	waitpid(child, &st, 0);
	is_int(0, ht_proc_task_state(child, child), "reaped: no state");

	ok(ht_proc_read(getpid(), &p) == 0 && p.state == 'R' &&
		p.uid == getuid() && p.start_time > 0 && p.nspid > 0,
	    "ht_proc_read of ourselves");
	errno = 0;
	ok(ht_proc_read(-2, &p) == -1 && errno == ENOENT,
	    "ht_proc_read of no process: ENOENT");
}

/* The listening socket of an abstract name, and whose descriptor it is. */
static void
test_unix(void)
{
	struct sockaddr_un sa;
	socklen_t salen;
	uint64_t inode = 0;
	struct stat st;
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "heaptool-proc-t.%ld", (long)getpid());
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path + 1, name, strlen(name));
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(name));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, salen) != 0)
		bail("socket/bind: %s", strerror(errno));
	errno = 0;
	ok(ht_proc_unix_listener(getpid(), name, &inode) == -1 &&
		errno == ENOENT,
	    "a bound socket that does not listen is no "
	    "listener");
	if (listen(fd, 1) != 0 || fstat(fd, &st) != 0)
		bail("listen: %s", strerror(errno));
	ok(ht_proc_unix_listener(getpid(), name, &inode) == 0 &&
		inode == (uint64_t)st.st_ino,
	    "the listener's inode from net/unix");
	is_int(1, ht_proc_has_socket(getpid(), inode),
	    "the socket is one of our descriptors");
	is_int(0, ht_proc_has_socket(getppid(), inode),
	    "and not one of our parent's");
	ok(ht_proc_unix_listener(getpid(), "heaptool-proc-t", &inode) == -1,
	    "a prefix of the name is not the name");
	close(fd);
	ok(ht_proc_unix_listener(getpid(), name, &inode) == -1,
	    "a closed listener is gone");
}

static void
test_in_root(void)
{
	char link[PATH_MAX], mine[PATH_MAX];
	const char *p = "/srv/jail/lib/libc.so.6";
	ssize_t n;

	ok(ht_proc_in_root("/srv/jail", p) == p + 9, "a path under the root");
	is_string("/lib/libc.so.6", ht_proc_in_root("/srv/jail", p),
	    "... is its path inside the root");
	ok(ht_proc_in_root("/srv/jail", "/srv/jailbreak/x") == NULL,
	    "a path beside the root is not inside it");
	ok(ht_proc_in_root("/srv/jail", "/usr/lib/x") == NULL,
	    "a path outside the root is not inside it");
	ok(ht_proc_in_root("/srv/jail", "/srv/jail") == NULL,
	    "the root itself is no file inside it");
	ok(ht_proc_in_root("/", p) == p, "with root /, every path as it is");
	ok(ht_proc_in_root("/", "[heap]") == NULL, "a pseudo-path is none");
	if ((n = readlink("/proc/self/root", mine, sizeof(mine) - 1)) <= 0)
		bail("readlink /proc/self/root: %s", strerror(errno));
	mine[n] = '\0';
	ok(ht_proc_root_link(getpid(), link, sizeof(link)) == 0 &&
		strcmp(link, mine) == 0,
	    "our root link (%s)", link);
	ok(ht_proc_root_link(getpid(), link, 2) == -1 || strlen(mine) < 2,
	    "a root link too long for the buffer fails");
}

static int pipe_fds[2];

static void *
leaderless_thread(void *arg)
{
	char c;

	(void)arg;
	if (write(pipe_fds[1], "r", 1) != 1)
		_exit(1);
	/* Until the parent closes its end. */
	while (read(pipe_fds[0], &c, 1) > 0)
		;
	_exit(0);
}

static int
count_map_cb(void *arg, const struct ht_proc_map *m)
{
	(void)m;
	(*(int *)arg)++;
	return 0;
}

static void
test_live_task(void)
{
	char path[128], st, c;
	pid_t child, live;
	pthread_t t;
	int i, nmaps = 0, in[2], r;

	is_int(getpid(), ht_proc_live_task(getpid()),
	    "a live leader stands for its process");
	ok(ht_proc_path(getpid(), "maps", path, sizeof(path)) == 0 &&
		strncmp(path, "/proc/", 6) == 0 &&
		atol(path + 6) == (long)getpid(),
	    "... its /proc directory (%s)", path);
	ok(ht_proc_live_task(-2) == -1 && errno == ENOENT,
	    "no process: no live task");
	ok(ht_proc_path(getpid(), "x", path, 8) == -1 && errno == ENAMETOOLONG,
	    "a path too long for the buffer fails");

	if (pipe(pipe_fds) != 0 || pipe(in) != 0)
		bail("pipe: %s", strerror(errno));
	if ((child = fork()) == -1)
		bail("fork: %s", strerror(errno));
	if (child == 0) {
		close(in[1]);
		pipe_fds[0] = in[0];
		if (pthread_create(&t, NULL, leaderless_thread, NULL) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	close(in[0]);
	close(pipe_fds[1]);
	r = (int)read(pipe_fds[0], &c, 1);
	/* The leader is a zombie once it has run pthread_exit. */
	for (i = 0; i < 2000 && (st = ht_proc_task_state(child, child)) != 'Z';
	     i++)
		usleep(5000);
	is_int('Z', st, "a child whose main thread has exited (%d)", r);
	live = ht_proc_live_task(child);
	ok(live > 0 && live != child && ht_proc_task_state(child, live) == 'S',
	    "its live thread stands for it (%ld)", (long)live);
	ok(ht_proc_maps(child, count_map_cb, &nmaps) == 0 && nmaps > 0,
	    "its maps are read through that thread (%d mappings)", nmaps);
	ok(ht_proc_root_link(child, path, sizeof(path)) == 0,
	    "... and its root (%s)", path);
	ok(ht_proc_path(child, "fd", path, sizeof(path)) == 0 &&
		access(path, R_OK) == 0,
	    "... and its descriptors (%s)", path);
	close(in[1]);
	waitpid(child, NULL, 0);
	close(pipe_fds[0]);
}

int
main(void)
{
	plan(0);
	test_field();
	test_maps();
	test_tasks();
	test_unix();
	test_in_root();
	test_live_task();
	return 0;
}
