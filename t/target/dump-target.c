/*
 * Fixture of t/sessions-t and t/t0041-dumps.sh: a process that allocates
 * exactly what it is told, when it is told, so that a test controls every
 * byte a session sees.  One thread unless told otherwise.  It prints
 * "ready PID" after PR_SET_PTRACER, then reads commands on stdin and
 * answers each with one line:
 *
 *   alloc N SIZE   N x malloc(SIZE) in dt_keep, kept      "done alloc N SIZE"
 *   other N SIZE   N x malloc(SIZE) in dt_other, kept     "done other N SIZE"
 *   free           free every kept block                  "done free"
 *   rss N          malloc N bytes and touch every page, kept
 *                                                         "done rss N"
 *   sites K        2^K blocks of 16 bytes, kept, each from a call stack of
 *                  its own (a chain of K calls of dt_bit0, one per bit of
 *                  its number): a session at rate 1 then has 2^K sites and
 *                  its dumps take a while                 "done sites K"
 *   oom [DIR]      malloc(1 << 62): "oom null ERRNO-NAME FILES" when it
 *                  fails (FILES: the *.heap files in DIR at that moment, or
 *                  -1), else "oom ptr"
 *   threads K      K threads allocate and free until join  "done threads K"
 *   join           stop and join them                     "done join"
 *   quit (or EOF)  exit(0): atexit handlers and destructors run
 *
 * Kept blocks are filled (fx_fill), so the compiler cannot drop them.
 */
#include <sys/prctl.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define MAXKEPT	   200000
#define MAXTHREADS 16

static void *kept[MAXKEPT];
static size_t nkept;
static uint64_t sum;
static volatile int stop;
static volatile size_t one = 1;
static volatile unsigned depth_sink;
static pthread_t tids[MAXTHREADS];
static int nthreads;

static void
keep(void *p, size_t size)
{
	if (p == NULL) {
		fprintf(stderr, "dump-target: out of memory\n");
		exit(1);
	}
	fx_fill(p, size, nkept, &sum);
	if (nkept < MAXKEPT)
		kept[nkept++] = p;
}

FX_NOINLINE static void
dt_keep(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(size * one), size); /* SITE dt_keep */
}

FX_NOINLINE static void
dt_other(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(size * one), size); /* SITE dt_other */
}

FX_NOINLINE static void dt_bit1(unsigned v, int d);

/* The bits of v, lowest first, choose the next call in the chain (a 1 goes
 * through dt_bit1 too); the volatile step after each call keeps it a call,
 * not a jump, so that every frame stays on the stack. */
FX_NOINLINE static void
dt_bit0(unsigned v, int d)
{
	if (d == 0)
		keep(malloc(16 * one), 16); /* SITE dt_bit0 */
	else if (v & 1)
		dt_bit1(v >> 1, d - 1);
	else
		dt_bit0(v >> 1, d - 1);
	depth_sink++;
}

FX_NOINLINE static void
dt_bit1(unsigned v, int d)
{
	dt_bit0(v, d);
	depth_sink++;
}

static int
count_heaps(const char *dir)
{
	DIR *d;
	struct dirent *e;
	size_t n;
	int c = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		c += n > 5 && strcmp(e->d_name + n - 5, ".heap") == 0;
	}
	closedir(d);
	return c;
}

/* Each thread keeps a ring of 64 blocks of assorted sizes, so that its
 * sessions see allocations, frees and reallocations all the time. */
static void *
worker(void *arg)
{
	void *ring[64] = { 0 };
	uint64_t x, local = 0;
	unsigned i, k;
	size_t size;
	void *p;

	x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	for (i = 0; !stop; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = (size_t)(16u << (x % 10));
		k = i % 64;
		switch (x >> 60) {
		case 0:
			p = realloc(ring[k], size);
			if (p != NULL)
				ring[k] = p;
			continue;
		case 1:
			p = calloc(1, size);
			break;
		default:
			p = malloc(size);
			break;
		}
		if (p != NULL)
			fx_fill(p, size, i, &local);
		free(ring[k]);
		ring[k] = p;
	}
	for (k = 0; k < 64; k++)
		free(ring[k]);
	return NULL;
}

int
main(void)
{
	char line[512], dir[400];
	unsigned long n, size;
	void *p;
	int k, e, c;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "alloc %lu %lu", &n, &size) == 2) {
			dt_keep(n, size);
			printf("done alloc %lu %lu\n", n, size);
		} else if (sscanf(line, "other %lu %lu", &n, &size) == 2) {
			dt_other(n, size);
			printf("done other %lu %lu\n", n, size);
		} else if (strcmp(line, "free\n") == 0) {
			while (nkept > 0)
				free(kept[--nkept]);
			printf("done free\n");
		} else if (sscanf(line, "rss %lu", &n) == 1) {
			p = malloc(n * one);
			if (p == NULL) {
				fprintf(stderr, "dump-target: no memory\n");
				return 1;
			}
			memset(p, 0x5a, n);
			keep(p, n);
			printf("done rss %lu\n", n);
		} else if (sscanf(line, "sites %d", &k) == 1 && k >= 0 &&
		    k <= 20) {
			for (n = 0; n < 1ul << k; n++)
				dt_bit0((unsigned)n, k);
			printf("done sites %d\n", k);
		} else if (strncmp(line, "oom", 3) == 0) {
			dir[0] = '\0';
			(void)sscanf(line, "oom %399s", dir);
			errno = 0;
			p = malloc(((size_t)1 << 62) * one);
			e = errno;
			c = dir[0] != '\0' ? count_heaps(dir) : -1;
			if (p == NULL)
				printf("oom null %s %d\n",
				    e == ENOMEM ? "ENOMEM" : "other", c);
			else {
				free(p);
				printf("oom ptr\n");
			}
		} else if (sscanf(line, "threads %d", &k) == 1 &&
		    nthreads == 0 && k > 0 && k <= MAXTHREADS) {
			stop = 0;
			for (nthreads = 0; nthreads < k; nthreads++)
				if (pthread_create(&tids[nthreads], NULL,
					worker,
					(void *)(uintptr_t)(nthreads + 1)) !=
				    0) {
					fprintf(stderr,
					    "dump-target: "
					    "pthread_create failed\n");
					return 1;
				}
			printf("done threads %d\n", k);
		} else if (strcmp(line, "join\n") == 0) {
			stop = 1;
			while (nthreads > 0)
				pthread_join(tids[--nthreads], NULL);
			printf("done join\n");
		} else if (strcmp(line, "quit\n") == 0)
			break;
		else {
			fprintf(stderr, "dump-target: bad command: %s", line);
			return 1;
		}
		fflush(stdout);
	}
	stop = 1;
	while (nthreads > 0)
		pthread_join(tids[--nthreads], NULL);
	exit(0);
}
