/*
 * Fixture of t/t0028-attach-unseen.sh: an executable with an allocator of
 * its own, a bump allocator over a static arena, exported under glibc's
 * names (malloc, free, calloc, realloc and the aligned ones) so that it
 * replaces glibc's for the whole process, as chromium's PartitionAlloc
 * does.  Its own calls to malloc bind inside it and no GOT slot is on
 * their way; libc's calls (strdup) go through libc's slot and are seen.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line, with read(2):
 *   keep N     N blocks of 1000 bytes from its own malloc (site keep_own:
 *              not seen); prints "kept N"
 *   strdup N   N copies of a 100-byte string by libc's strdup (seen);
 *              prints "duped N"
 *   quit       exit 0 (so does end of file)
 * Every block is kept: the bump allocator never reuses memory.
 */
#include <sys/prctl.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define ARENA (64u << 20)
#define ALIGN 16
#define HDR   16 /* the block's size, before it */

static unsigned char arena[ARENA] __attribute__((aligned(ALIGN)));
static size_t used;

/* A block of n bytes whose start is aligned to align (a power of two, at
 * least ALIGN), its size stored in the HDR bytes before it. */
static void *
bump(size_t n, size_t align)
{
	size_t old, start, end;

	if (n > ARENA || align > ARENA)
		goto nomem;
	old = __atomic_load_n(&used, __ATOMIC_RELAXED);
	do {
		start = (old + HDR + align - 1) & ~(align - 1);
		end = (start + n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
		if (end > ARENA || end < start)
			goto nomem;
	} while (!__atomic_compare_exchange_n(&used, &old, end, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	memcpy(arena + start - HDR, &n, sizeof(n));
	return arena + start;
nomem:
	errno = ENOMEM;
	return NULL;
}

static size_t
block_size(const void *p)
{
	size_t n;

	memcpy(&n, (const unsigned char *)p - HDR, sizeof(n));
	return n;
}

void *
malloc(size_t n)
{
	return bump(n, ALIGN);
}

void
free(void *p)
{
	(void)p;
}

void *
calloc(size_t k, size_t n)
{
	void *p;

	if (n != 0 && k > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	if ((p = bump(k * n, ALIGN)) != NULL)
		memset(p, 0, k * n);
	return p;
}

void *
realloc(void *old, size_t n)
{
	size_t m;
	void *p;

	if ((p = bump(n, ALIGN)) != NULL && old != NULL) {
		m = block_size(old);
		memcpy(p, old, m < n ? m : n);
	}
	return p;
}

void *
memalign(size_t align, size_t n)
{
	return bump(n, align < ALIGN ? ALIGN : align);
}

void *
aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int
posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);

	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t n)
{
	return memalign(4096, n);
}

void *
pvalloc(size_t n)
{
	return memalign(4096, (n + 4095) & ~(size_t)4095);
}

size_t
malloc_usable_size(void *p)
{
	return p != NULL ? block_size(p) : 0;
}

static volatile size_t one = 1;

FX_NOINLINE static void
keep_own(size_t n, uint64_t *sum)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1000 * one); /* SITE keep_own */
		if (p == NULL)
			exit(1);
		fx_fill(p, 1000, i, sum);
	}
}

FX_NOINLINE static void
dup_strings(size_t n, uint64_t *sum)
{
	char s[101];
	size_t i;
	char *p;

	memset(s, 'x', 100);
	s[100] = '\0';
	for (i = 0; i < n; i++) {
		if ((p = strdup(s)) == NULL) /* SITE dup_strings */
			exit(1);
		fx_keep(p);
		*sum = fx_mix(*sum, (uint64_t)p[i % 100]);
	}
}

static ssize_t
read_line(char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got < len - 1) {
		if ((n = read(0, buf + got, 1)) < 0)
			return -1;
		if (n == 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return got == 0 && n == 0 ? 0 : (ssize_t)got + 1;
}

int
main(void)
{
	uint64_t sum = 0;
	char line[128];
	ssize_t n;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while ((n = read_line(line, sizeof(line))) > 0) {
		if (strcmp(line, "quit") == 0)
			break;
		if (strncmp(line, "keep ", 5) == 0) {
			keep_own((size_t)strtoul(line + 5, NULL, 10), &sum);
			printf("kept %s\n", line + 5);
		} else if (strncmp(line, "strdup ", 7) == 0) {
			dup_strings((size_t)strtoul(line + 7, NULL, 10), &sum);
			printf("duped %s\n", line + 7);
		} else
			printf("got: %s\n", line);
	}
	return n < 0;
}
