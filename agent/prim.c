/*
 * The agent's OS primitives (prim.h): plain system calls through libc's
 * thinnest wrappers, and /proc files read with open and read, never stdio,
 * which allocates.
 */
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/futex.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prim.h"

uint64_t
ht_prim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t
ht_prim_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
ht_prim_coarse_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return ht_prim_mono_ms();
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

size_t
ht_prim_page_size(void)
{
	size_t n = getauxval(AT_PAGESZ);

	return n != 0 ? n : 4096;
}

pid_t
ht_prim_tid(void)
{
	return gettid();
}

void
ht_prim_thread_name(char name[16])
{
	name[0] = '\0';
	(void)prctl(PR_GET_NAME, name, 0, 0, 0);
}

void
ht_prim_read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
}

uint64_t
ht_prim_proc_start(pid_t pid)
{
	char path[64], digits[24], buf[1024], *p;
	uint64_t v = 0, n = (uint64_t)pid;
	size_t k = 0, i;
	int field;

	if (pid <= 0)
		return 0;
	/* No stdio in the agent: "/proc/" PID "/stat" by hand. */
	do
		digits[k++] = (char)('0' + n % 10);
	while ((n /= 10) != 0);
	memcpy(path, "/proc/", 6);
	for (i = 0; i < k; i++)
		path[6 + i] = digits[k - 1 - i];
	memcpy(path + 6 + k, "/stat", 6);
	ht_prim_read_proc(path, buf, sizeof(buf));
	/* "pid (comm) S ppid ...": the command may hold anything, ")"
	 * included; the fields go on after its last ")". */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == 'Z' ||
	    p[2] == 'X')
		return 0;
	/* The state is field 3, the start time field 22. */
	for (field = 3, p += 2; *p != '\0' && field < 22; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return field == 22 ? v : 0;
}

void
ht_prim_self_path(char *buf, size_t len, const char *name)
{
	static int kind; /* 0 unknown, 1 thread-self, 2 self */
	const char *dir;
	size_t dl, nl = strlen(name);

	if (kind == 0)
		kind = access("/proc/thread-self/", F_OK) == 0 ? 1 : 2;
	dir = kind == 1 ? "/proc/thread-self/" : "/proc/self/";
	dl = strlen(dir);
	if (len == 0)
		return;
	if (dl + nl >= len) {
		buf[0] = '\0';
		return;
	}
	memcpy(buf, dir, dl);
	memcpy(buf + dl, name, nl + 1);
}

void
ht_prim_command(char *buf, size_t len)
{
	char *nl;

	ht_prim_read_proc("/proc/self/comm", buf, len);
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
}

uint64_t
ht_prim_rss_bytes(void)
{
	char buf[256], path[64];
	const char *q;
	uint64_t resident = 0;

	ht_prim_self_path(path, sizeof(path), "statm");
	ht_prim_read_proc(path, buf, sizeof(buf));
	/* statm: size resident shared ...; in pages. */
	if ((q = strchr(buf, ' ')) == NULL)
		return 0;
	for (q++; *q >= '0' && *q <= '9'; q++)
		resident = resident * 10 + (uint64_t)(*q - '0');
	return resident * (uint64_t)ht_prim_page_size();
}

/* The decimal number at s (leading blanks skipped); 0 if none. */
static uint64_t
number_at(const char *s)
{
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

/* What the cgroup v2 limit of this process leaves, or UINT64_MAX (no
 * limit, or none that can be read). */
static uint64_t
cgroup_room(void)
{
	char cg[512], path[640], buf[64];
	uint64_t max, cur;
	char *nl;

	/* cgroup v2 has one line, "0::/path". */
	ht_prim_self_path(path, sizeof(path), "cgroup");
	ht_prim_read_proc(path, cg, sizeof(cg));
	if (strncmp(cg, "0::/", 4) != 0 ||
	    strchr(cg, '\n') != strrchr(cg, '\n'))
		return UINT64_MAX;
	if ((nl = strchr(cg, '\n')) != NULL)
		*nl = '\0';
	if (strlen(cg + 3) + sizeof("/sys/fs/cgroup/memory.current") >
	    sizeof(path))
		return UINT64_MAX;
	memcpy(path, "/sys/fs/cgroup", 14);
	memcpy(path + 14, cg + 3, strlen(cg + 3) + 1);
	nl = path + strlen(path);
	if (nl[-1] == '/')
		nl--;
	memcpy(nl, "/memory.max", sizeof("/memory.max"));
	ht_prim_read_proc(path, buf, sizeof(buf));
	if (buf[0] < '0' || buf[0] > '9')
		return UINT64_MAX; /* "max", or unreadable */
	max = number_at(buf);
	memcpy(nl, "/memory.current", sizeof("/memory.current"));
	ht_prim_read_proc(path, buf, sizeof(buf));
	if (buf[0] < '0' || buf[0] > '9')
		return UINT64_MAX;
	cur = number_at(buf);
	return cur < max ? max - cur : 0;
}

uint64_t
ht_prim_mem_available(void)
{
	char buf[4096];
	const char *q;
	uint64_t avail = 0, room;

	ht_prim_read_proc("/proc/meminfo", buf, sizeof(buf));
	if ((q = strstr(buf, "MemAvailable:")) != NULL)
		avail = number_at(q + 13) * 1024; /* in kB */
	room = cgroup_room();
	if (room != UINT64_MAX && (avail == 0 || room < avail))
		avail = room != 0 ? room : 1;
	return avail;
}

void
ht_prim_exe_path(char *buf, size_t len)
{
	const char *fn;
	char path[64];
	ssize_t n;
	size_t k;

	ht_prim_self_path(path, sizeof(path), "exe");
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	/* No /proc (a chroot without it): the name execve was given, if
	 * absolute; it names the file in the process's root, as the link
	 * would have. */
	if (n <= 0 && (fn = (const char *)getauxval(AT_EXECFN)) != NULL &&
	    fn[0] == '/' && (k = strlen(fn)) < len)
		memcpy(buf, fn, k + 1);
}

int
ht_prim_read_lines(const char *path, char *buf, size_t len,
    int (*line)(void *, const char *, const char *), void *arg)
{
	const char *p, *nl;
	size_t have = 0;
	ssize_t got;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		got = read(fd, buf + have, len - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto out_close;
		if (got == 0)
			break;
		have += (size_t)got;
		p = buf;
		while (
		    (nl = memchr(p, '\n', have - (size_t)(p - buf))) != NULL) {
			if (line(arg, p, nl) != 0)
				goto out_close;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == len)
			goto out_close; /* a line that does not fit buf */
	}
	rc = 0;
out_close:
	close(fd);
	return rc;
}

void
ht_prim_futex_wait(int *word, int val)
{
	/* At most a millisecond: lock.h's release may miss a sleeper that
	 * came in the instant it looked (it says why). */
	struct timespec ts = { 0, 1000000 };
	int saved_errno = errno;

	(void)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
	errno = saved_errno;
}

void
ht_prim_futex_wake(int *word)
{
	int saved_errno = errno;

	(void)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved_errno;
}
