/*
 * Fixture of t/t0051-mimalloc.sh: mimalloc's own API called directly, from
 * one function per kind of call (the sites), against Debian's libmimalloc,
 * which is then the process's malloc too.  The driver (direct.h) keeps the
 * counts.  Every call below is one block of the size it asks for (the
 * counts heaptool must report at rate 1):
 *
 *   work_malloc    mi_malloc, mi_zalloc, mi_calloc, mi_mallocn,
 *                  mi_malloc_small, mi_zalloc_small, mi_new, mi_new_n,
 *                  mi_new_nothrow
 *   work_aligned   mi_malloc_aligned(_at), mi_zalloc_aligned(_at),
 *                  mi_calloc_aligned(_at), mi_new_aligned, mi_aligned_alloc,
 *                  mi_posix_memalign, mi_memalign
 *   work_realloc   mi_realloc, mi_reallocn, mi_reallocf, mi_rezalloc,
 *                  mi_recalloc, mi_realloc_aligned, mi_expand (in place),
 *                  mi_reallocarray: each a free of the old block and a new
 *   work_strings   mi_strdup, mi_strndup (strlen + 1 bytes)
 *   work_frees     blocks freed at once by mi_free, mi_free_size,
 *                  mi_free_aligned, mi_free_size_aligned
 *   work_heap      a heap of its own: mi_heap_malloc, mi_heap_zalloc,
 *                  mi_heap_calloc, mi_heap_mallocn, mi_heap_realloc,
 *                  mi_heap_strdup; then mi_heap_destroy frees every block
 *   work_heap_kept another heap (mi_heap_malloc, mi_heap_malloc_aligned,
 *                  mi_heap_strndup), deleted: its blocks move to the
 *                  backing heap and stay in use, until "free" frees them
 *
 * fx_release frees what is kept with mi_free (mi_free_size for some).
 */
#include <mimalloc.h>

#include "direct.h"

#define HOW_FREE 0
#define HOW_SIZE 1

static const char text[] = "the quick brown fox jumps over the lazy dog";

FX_NOINLINE static void
work_malloc(void)
{
	int i;

	for (i = 0; i < 10; i++)
		fx_got(mi_malloc(100 + (size_t)i), 100 + (size_t)i, HOW_FREE);
	fx_got(mi_zalloc(64), 64, HOW_SIZE);
	fx_got(mi_calloc(4, 25), 100, HOW_FREE);
	fx_got(mi_mallocn(3, 40), 120, HOW_FREE);
	fx_got(mi_malloc_small(48), 48, HOW_FREE);
	fx_got(mi_zalloc_small(32), 32, HOW_FREE);
	fx_got(mi_new(72), 72, HOW_FREE);
	fx_got(mi_new_n(2, 24), 48, HOW_FREE);
	fx_got(mi_new_nothrow(88), 88, HOW_FREE);
}

FX_NOINLINE static void
work_aligned(void)
{
	void *p = NULL;

	fx_got(mi_malloc_aligned(200, 64), 200, HOW_FREE);
	fx_got(mi_malloc_aligned_at(200, 64, 16), 200, HOW_FREE);
	fx_got(mi_zalloc_aligned(96, 32), 96, HOW_FREE);
	fx_got(mi_zalloc_aligned_at(96, 32, 8), 96, HOW_FREE);
	fx_got(mi_calloc_aligned(2, 50, 32), 100, HOW_FREE);
	fx_got(mi_calloc_aligned_at(2, 50, 32, 8), 100, HOW_FREE);
	fx_got(mi_new_aligned(128, 64), 128, HOW_FREE);
	fx_got(mi_aligned_alloc(64, 256), 256, HOW_FREE);
	if (mi_posix_memalign(&p, 64, 160) != 0)
		_exit(3);
	fx_got(p, 160, HOW_FREE);
	fx_got(mi_memalign(128, 144), 144, HOW_FREE);
}

/* Reallocate kept block i to n bytes with the result r of the call. */
static void
moved(size_t i, void *r, size_t n)
{
	fx_gone(i);
	fx_got(r, n, HOW_FREE);
}

FX_NOINLINE static void
work_realloc(void)
{
	void *p;

	p = fx_got(mi_malloc(10), 10, HOW_FREE);
	moved(fx_last(), mi_realloc(p, 1000), 1000);
	p = fx_got(mi_malloc(20), 20, HOW_FREE);
	moved(fx_last(), mi_reallocn(p, 10, 20), 200);
	p = fx_got(mi_malloc(30), 30, HOW_FREE);
	moved(fx_last(), mi_reallocf(p, 300), 300);
	p = fx_got(mi_zalloc(40), 40, HOW_FREE);
	moved(fx_last(), mi_rezalloc(p, 400), 400);
	p = fx_got(mi_calloc(5, 10), 50, HOW_FREE);
	moved(fx_last(), mi_recalloc(p, 3, 50), 150);
	p = fx_got(mi_malloc_aligned(60, 64), 60, HOW_FREE);
	moved(fx_last(), mi_realloc_aligned(p, 600, 64), 600);
	p = fx_got(mi_malloc(100), 100, HOW_FREE);
	/* Shrinking in place always succeeds: the same block, 90 bytes. */
	moved(fx_last(), mi_expand(p, 90), 90);
	p = fx_got(mi_malloc(70), 70, HOW_FREE);
	moved(fx_last(), mi_reallocarray(p, 7, 100), 700);
}

FX_NOINLINE static void
work_strings(void)
{
	fx_got(mi_strdup(text), sizeof(text), HOW_FREE);
	fx_got(mi_strndup(text, 9), 10, HOW_FREE);
}

FX_NOINLINE static void
work_frees(void)
{
	void *p;

	p = mi_malloc(500);
	fx_transient(p, 500);
	mi_free(p);
	p = mi_malloc(510);
	fx_transient(p, 510);
	mi_free_size(p, 510);
	p = mi_malloc_aligned(520, 64);
	fx_transient(p, 520);
	mi_free_aligned(p, 64);
	p = mi_malloc_aligned(530, 64);
	fx_transient(p, 530);
	mi_free_size_aligned(p, 530, 64);
}

/* A heap's blocks, counted and written but not kept: the heap goes whole. */
static void
heap_block(void *p, size_t n)
{
	fx_transient(p, n);
}

FX_NOINLINE static void
work_heap(void)
{
	mi_heap_t *h = mi_heap_new();
	void *p;
	int i;

	if (h == NULL)
		_exit(3);
	for (i = 0; i < 5; i++)
		heap_block(mi_heap_malloc(h, 500), 500);
	heap_block(mi_heap_zalloc(h, 50), 50);
	heap_block(mi_heap_calloc(h, 2, 30), 60);
	heap_block(mi_heap_mallocn(h, 3, 33), 99);
	p = mi_heap_malloc(h, 10);
	heap_block(p, 10);
	/* A realloc of a block not kept: its free is counted already. */
	fx_aobj++;
	fx_abytes += 700;
	fx_fobj++;
	fx_fill(mi_heap_realloc(h, p, 700), 700, fx_aobj, &fx_sum);
	heap_block(mi_heap_strdup(h, text), sizeof(text));
	mi_heap_destroy(h);
}

FX_NOINLINE static void
work_heap_kept(void)
{
	mi_heap_t *h = mi_heap_new();
	int i;

	if (h == NULL)
		_exit(3);
	for (i = 0; i < 3; i++)
		fx_got(mi_heap_malloc(h, 300), 300, HOW_FREE);
	fx_got(mi_heap_malloc_aligned(h, 100, 64), 100, HOW_FREE);
	fx_got(mi_heap_strndup(h, text, 3), 4, HOW_FREE);
	mi_heap_delete(h);
}

void
fx_work(void)
{
	work_malloc();
	work_aligned();
	work_realloc();
	work_strings();
	work_frees();
	work_heap();
	work_heap_kept();
	/* Allocates nothing: known, not counted. */
	if (mi_usable_size(fx_kept[0].p) < fx_kept[0].n)
		_exit(3);
}

void
fx_release(void)
{
	while (fx_nkept > 0) {
		struct fx_block b = fx_kept[fx_nkept - 1];

		fx_gone(fx_nkept - 1);
		if (b.how == HOW_SIZE)
			mi_free_size(b.p, b.n);
		else
			mi_free(b.p);
	}
}

int
main(void)
{
	return fx_main();
}
