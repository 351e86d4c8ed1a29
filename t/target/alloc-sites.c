/*
 * Fixture of t0010-run-exact and t0011-run-sampled: allocation sites with
 * exactly known totals, one function per site, each allocation call on the
 * line of its "SITE name" marker (name = the function's name).
 *
 * "alloc-sites" (or "alloc-sites exact") makes these sites; in use is what is
 * still allocated at exit, alloc what was ever allocated:
 *
 *   site                what                          in use     alloc
 *   keep_small          100 x malloc(48)              4800/100   4800/100
 *   keep_large          3 x malloc(1 MiB) (mmap'd)    3145728/3  3145728/3
 *   churn               1000 x malloc(64), freed      0/0        64000/1000
 *   realloc_grow        realloc chain 100, 200, ...,
 *                       51200, 300000, 1000 (12
 *                       calls), kept                  1000/1     403300/12
 *   calloc_keep         10 x calloc(25, 40)           10000/10   10000/10
 *   posix_memalign_keep 8 x posix_memalign(64, 256)   2048/8     2048/8
 *   aligned_alloc_keep  4 x aligned_alloc(128, 384)   1536/4     1536/4
 *   memalign_keep       2 x memalign(4096, 1000)      2000/2     2000/2
 *   valloc_keep         3 x valloc(700)               2100/3     2100/3
 *   reallocarray_keep   5 x reallocarray(NULL, 11, 30) 1650/5    1650/5
 *   thread_keep         20 x malloc(333) in a second
 *                       thread (thread_main)          6660/20    6660/20
 *   chain_c             7 x malloc(1234), stack chain_c
 *                       <- chain_b <- chain_a <- main 8638/7     8638/7
 *   dlfix_keep          9 x malloc(77) in libdlfix.so,
 *                       dlopen'ed, called by use_dlfix 693/9     693/9
 *   inl_alloc           6 x malloc(321) in an always-inline
 *                       function, stack inl_alloc (inlined)
 *                       <- keep_inlined <- main       1926/6     1926/6
 *
 * Every realloc of a sampled pointer counts as a free plus a new allocation,
 * hence realloc_grow's numbers.
 *
 * "alloc-sites big" makes the sites of the sampled test, tens of MiB:
 *
 *   big_tiny           262144 x malloc(64), kept          16 MiB
 *   big_page           4096 x malloc(4096), kept          16 MiB
 *   big_odd            160 x malloc(100000), kept         16000000
 *   big_huge           16 x malloc(1 MiB), kept           16 MiB
 *   big_churn          32768 x malloc(1000), each freed   0 (alloc 32768000)
 *
 * Either mode prints a checksum of the data it wrote and exits 0.  The
 * kept blocks are never freed, so the profile written at exit holds them
 * whatever order the exit handlers run in.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static uint64_t sum;
static void *kept[300000];
static size_t nkept;

/* Sizes come through a volatile so that no call is specialized on them. */
static volatile size_t one = 1;

static void
keep(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "alloc-sites: out of memory\n");
		exit(1);
	}
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
	fx_keep(p);
}

FX_NOINLINE static void
keep_small(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(48 * one); /* SITE keep_small */
		keep(p);
		fx_fill(p, 48, i, &sum);
	}
}

FX_NOINLINE static void
keep_large(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1048576 * one); /* SITE keep_large */
		keep(p);
		fx_fill(p, 1048576, i, &sum);
	}
}

FX_NOINLINE static void
churn(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(64 * one); /* SITE churn */
		if (p == NULL)
			exit(1);
		fx_fill(p, 64, i, &sum);
		free(p);
	}
}

FX_NOINLINE static void
realloc_grow(void)
{
	static const size_t sizes[] = { 100, 200, 400, 800, 1600, 3200, 6400,
		12800, 25600, 51200, 300000, 1000 };
	size_t i;
	void *p = NULL;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p = realloc(p, sizes[i] * one); /* SITE realloc_grow */
		if (p == NULL)
			exit(1);
		fx_fill(p, sizes[i], i, &sum);
	}
	keep(p);
}

FX_NOINLINE static void
calloc_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = calloc(25 * one, 40); /* SITE calloc_keep */
		keep(p);
		sum = fx_mix(sum, ((unsigned char *)p)[999]);
		fx_fill(p, 1000, i, &sum);
	}
}

FX_NOINLINE static void
posix_memalign_keep(size_t n)
{
	size_t i, size;
	void *p;
	int e;

	for (i = 0; i < n; i++) {
		size = 256 * one;
		e = posix_memalign(&p, 64, size); /* SITE posix_memalign_keep */
		if (e != 0 || ((uintptr_t)p & 63) != 0)
			exit(1);
		keep(p);
		fx_fill(p, 256, i, &sum);
	}
}

FX_NOINLINE static void
aligned_alloc_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = aligned_alloc(128, 384 * one); /* SITE aligned_alloc_keep */
		keep(p);
		if (((uintptr_t)p & 127) != 0)
			exit(1);
		fx_fill(p, 384, i, &sum);
	}
}

FX_NOINLINE static void
memalign_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = memalign(4096, 1000 * one); /* SITE memalign_keep */
		keep(p);
		if (((uintptr_t)p & 4095) != 0)
			exit(1);
		fx_fill(p, 1000, i, &sum);
	}
}

FX_NOINLINE static void
valloc_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = valloc(700 * one); /* SITE valloc_keep */
		keep(p);
		fx_fill(p, 700, i, &sum);
	}
}

FX_NOINLINE static void
reallocarray_keep(size_t n)
{
	size_t i, size;
	void *p;

	for (i = 0; i < n; i++) {
		size = 30 * one;
		p = reallocarray(NULL, 11, size); /* SITE reallocarray_keep */
		keep(p);
		fx_fill(p, 330, i, &sum);
	}
}

FX_NOINLINE static void
thread_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(333 * one); /* SITE thread_keep */
		keep(p);
		fx_fill(p, 333, i, &sum);
	}
}

FX_NOINLINE static void *
thread_main(void *arg)
{
	thread_keep(*(size_t *)arg);
	sum = fx_mix(sum, 1);
	return NULL;
}

FX_NOINLINE static void
in_thread(size_t n)
{
	pthread_t t;
	int error;

	/* The thread alone touches kept[] and sum until it is joined. */
	if ((error = pthread_create(&t, NULL, thread_main, &n)) != 0 ||
	    (error = pthread_join(t, NULL)) != 0) {
		fprintf(stderr, "alloc-sites: thread: %s\n", strerror(error));
		exit(1);
	}
}

/* Inlined into keep_inlined at every optimization level: the report shows it
 * as an inlined frame at the same address as keep_inlined's. */
static inline __attribute__((always_inline)) void *
inl_alloc(size_t n)
{
	return malloc(n * one); /* SITE inl_alloc */
}

FX_NOINLINE static void
keep_inlined(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = inl_alloc(321);
		keep(p);
		fx_fill(p, 321, i, &sum);
	}
}

/* A chain of calls that must unwind frame by frame, also at -O2 without frame
 * pointers; the work after each call keeps it from being a tail call. */
FX_NOINLINE static void
chain_c(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1234 * one); /* SITE chain_c */
		keep(p);
		fx_fill(p, 1234, i, &sum);
	}
}

FX_NOINLINE static void
chain_b(size_t n)
{
	chain_c(n);
	sum = fx_mix(sum, 2);
}

FX_NOINLINE static void
chain_a(size_t n)
{
	chain_b(n);
	sum = fx_mix(sum, 3);
}

/* dlopen libdlfix.so from the directory of this executable, after start, and
 * have it keep blocks: a site inside a module loaded late. */
FX_NOINLINE static void
use_dlfix(size_t n)
{
	char path[PATH_MAX];
	uint64_t (*fn)(size_t);
	ssize_t len;
	char *slash;
	void *h;

	len = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (len < 0) {
		fprintf(stderr, "alloc-sites: /proc/self/exe: %s\n",
		    strerror(errno));
		exit(1);
	}
	path[len] = '\0';
	if ((slash = strrchr(path, '/')) == NULL)
		exit(1);
	strcpy(slash + 1, "libdlfix.so");
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "alloc-sites: %s\n", dlerror());
		exit(1);
	}
	if ((fn = (uint64_t(*)(size_t))dlsym(h, "dlfix_keep")) == NULL) {
		fprintf(stderr, "alloc-sites: %s\n", dlerror());
		exit(1);
	}
	sum = fx_mix(sum, fn(n));
	/* Never dlclose: the module must still be mapped at exit. */
}

FX_NOINLINE static void
big_tiny(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(64 * one); /* SITE big_tiny */
		keep(p);
		fx_fill(p, 64, i, &sum);
	}
}

FX_NOINLINE static void
big_page(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(4096 * one); /* SITE big_page */
		keep(p);
		fx_fill(p, 4096, i, &sum);
	}
}

FX_NOINLINE static void
big_odd(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(100000 * one); /* SITE big_odd */
		keep(p);
		fx_fill(p, 100000, i, &sum);
	}
}

FX_NOINLINE static void
big_huge(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1048576 * one); /* SITE big_huge */
		keep(p);
		fx_fill(p, 1048576, i, &sum);
	}
}

FX_NOINLINE static void
big_churn(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1000 * one); /* SITE big_churn */
		if (p == NULL)
			exit(1);
		fx_fill(p, 1000, i, &sum);
		free(p);
	}
}

int
main(int argc, char *argv[])
{
	const char *mode = argc > 1 ? argv[1] : "exact";
	size_t i;

	sum = 0xcbf29ce484222325ULL;
	if (strcmp(mode, "exact") == 0) {
		keep_small(100);
		keep_large(3);
		churn(1000);
		realloc_grow();
		calloc_keep(10);
		posix_memalign_keep(8);
		aligned_alloc_keep(4);
		memalign_keep(2);
		valloc_keep(3);
		reallocarray_keep(5);
		in_thread(20);
		chain_a(7);
		use_dlfix(9);
		keep_inlined(6);
	} else if (strcmp(mode, "big") == 0) {
		big_tiny(262144);
		big_page(4096);
		big_odd(160);
		big_huge(16);
		big_churn(32768);
	} else {
		fprintf(stderr, "usage: alloc-sites [exact | big]\n");
		return 2;
	}
	/* Read the kept blocks back, so that they stay reachable. */
	for (i = 0; i < nkept; i++)
		sum = fx_mix(sum, *(unsigned char *)kept[i]);
	printf("alloc-sites %s: %zu blocks kept, checksum %016llx\n", mode,
	    nkept, (unsigned long long)sum);
	return 0;
}
