/*
 * The status page of heaptool run (runpage.h).
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "runpage.h"

static volatile struct ht_runstat *page;
/* The process that took the page: a child forked from it shares the
 * mapping, and must not speak for it. */
static pid_t owner;

static int
env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

void
ht_runpage_open(void)
{
	struct ht_runstat head;
	struct stat st;
	uint64_t fd, cookie;
	void *m;
	int fl;

	if (page != NULL || env_u64(HT_RUNSTAT_FD_ENV, &fd) != 0 ||
	    env_u64(HT_RUNSTAT_COOKIE_ENV, &cookie) != 0 || fd > INT32_MAX)
		return;
	/* Whatever holds that number must look like the page before it is
	 * mapped (pread moves no file offset of the program's), and be it
	 * before it is closed. */
	if (fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != HT_RUNSTAT_SIZE ||
	    (fl = fcntl((int)fd, F_GETFL)) == -1 ||
	    (fl & O_ACCMODE) != O_RDWR ||
	    pread((int)fd, &head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    head.magic != HT_RUNSTAT_MAGIC || head.cookie != cookie)
		return;
	m = mmap(NULL, HT_RUNSTAT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    (int)fd, 0);
	if (m == MAP_FAILED)
		return;
	page = m;
	owner = getpid();
	close((int)fd);
}

void
ht_runpage_set(unsigned state, int err)
{
	volatile struct ht_runstat *p = page;

	if (p == NULL || getpid() != owner)
		return;
	p->pid = (uint64_t)getpid();
	p->err = err;
	p->uid = (uint32_t)getuid();
	p->euid = (uint32_t)geteuid();
	p->gid = (uint32_t)getgid();
	p->egid = (uint32_t)getegid();
	__atomic_store_n(&p->state, state, __ATOMIC_RELEASE);
}

void
ht_runpage_why(const char *why)
{
	volatile struct ht_runstat *p = page;
	size_t i;

	if (p == NULL || getpid() != owner)
		return;
	for (i = 0; i + 1 < sizeof(p->why) && why[i] != '\0'; i++)
		p->why[i] = why[i];
	p->why[i] = '\0';
}
