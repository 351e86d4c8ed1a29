/*
 * Fixture of t/t0052-jemalloc.sh: jemalloc's own API called directly,
 * against Debian's libjemalloc, which is then the process's malloc too.
 * The driver (direct.h) keeps the counts, by heaptool's rules:
 *
 *   work_mallocx   mallocx plain, zeroed, aligned: one block each
 *   work_rallocx   rallocx: a free of the old block and a new one
 *   work_xallocx   xallocx resizes in place: one that returns at least the
 *                  size asked for is a free of the old block and a new
 *                  one of that size at the same address (a shrink, here);
 *                  one that returns less changed nothing (a growth past
 *                  what the block's size class holds)
 *   work_frees     blocks freed at once by sdallocx and dallocx
 *   work_libc      malloc, calloc, realloc, posix_memalign, aligned_alloc,
 *                  free: jemalloc's, through the same hooks
 *   work_query     nallocx, sallocx, malloc_usable_size: nothing
 *
 * fx_release frees what is kept by sdallocx, dallocx and free in turn.
 */
#include <stdlib.h>

#include <jemalloc/jemalloc.h>

#include "direct.h"

#define HOW_SDALLOCX 0
#define HOW_DALLOCX  1
#define HOW_FREE     2

FX_NOINLINE static void
work_mallocx(void)
{
	int i;

	for (i = 0; i < 8; i++)
		fx_got(mallocx(100 + (size_t)i, 0), 100 + (size_t)i,
		    HOW_SDALLOCX);
	fx_got(mallocx(256, MALLOCX_ZERO), 256, HOW_DALLOCX);
	fx_got(mallocx(200, MALLOCX_ALIGN(64)), 200, HOW_DALLOCX);
	fx_got(mallocx(4000, MALLOCX_ALIGN(4096) | MALLOCX_ZERO), 4000,
	    HOW_DALLOCX);
}

FX_NOINLINE static void
work_rallocx(void)
{
	void *p;

	p = fx_got(mallocx(50, 0), 50, HOW_DALLOCX);
	fx_gone(fx_last());
	fx_got(rallocx(p, 5000, 0), 5000, HOW_DALLOCX);
	p = fx_got(mallocx(60, 0), 60, HOW_DALLOCX);
	fx_gone(fx_last());
	fx_got(rallocx(p, 600, MALLOCX_ZERO), 600, HOW_DALLOCX);
}

FX_NOINLINE static void
work_xallocx(void)
{
	static volatile size_t big = 100000;
	void *p;
	size_t r;

	p = fx_got(mallocx(8192, 0), 8192, HOW_DALLOCX);
	r = xallocx(p, 4096, 0, 0);
	if (r >= 4096) {
		fx_gone(fx_last());
		fx_got(p, 4096, HOW_DALLOCX);
	}
	p = fx_got(mallocx(100, 0), 100, HOW_DALLOCX);
	r = xallocx(p, big, 0, 0);
	if (r >= big) {
		fx_gone(fx_last());
		fx_got(p, big, HOW_DALLOCX);
	}
}

FX_NOINLINE static void
work_frees(void)
{
	void *p;

	p = mallocx(700, 0);
	fx_transient(p, 700);
	sdallocx(p, 700, 0);
	p = mallocx(710, MALLOCX_ALIGN(64));
	fx_transient(p, 710);
	dallocx(p, 0);
}

FX_NOINLINE static void
work_libc(void)
{
	void *p = NULL;

	fx_got(malloc(111), 111, HOW_FREE);
	fx_got(calloc(3, 37), 111, HOW_FREE);
	p = fx_got(malloc(12), 12, HOW_FREE);
	fx_gone(fx_last());
	fx_got(realloc(p, 1200), 1200, HOW_FREE);
	if (posix_memalign(&p, 64, 333) != 0)
		_exit(3);
	fx_got(p, 333, HOW_FREE);
	fx_got(aligned_alloc(128, 256), 256, HOW_FREE);
	p = malloc(999);
	fx_transient(p, 999);
	free(p);
}

FX_NOINLINE static void
work_query(void)
{
	if (nallocx(100, 0) < 100 || sallocx(fx_kept[0].p, 0) < fx_kept[0].n ||
	    malloc_usable_size(fx_kept[0].p) < fx_kept[0].n)
		_exit(3);
}

void
fx_work(void)
{
	work_mallocx();
	work_rallocx();
	work_xallocx();
	work_frees();
	work_libc();
	work_query();
}

void
fx_release(void)
{
	while (fx_nkept > 0) {
		struct fx_block b = fx_kept[fx_nkept - 1];

		fx_gone(fx_nkept - 1);
		if (b.how == HOW_SDALLOCX)
			sdallocx(b.p, b.n, 0);
		else if (b.how == HOW_DALLOCX)
			dallocx(b.p, 0);
		else
			free(b.p);
	}
}

int
main(void)
{
	return fx_main();
}
