/*
 * Fixture of t/t0053-tcmalloc.sh: gperftools' tcmalloc API (the tc_*
 * names) called directly, against Debian's libtcmalloc_minimal, which is
 * then the process's malloc too.  C++ for the header's nothrow and
 * aligned forms; no operator new of its own.  The driver (direct.h) keeps
 * the counts:
 *
 *   work_malloc   tc_malloc, tc_malloc_skip_new_handler, tc_calloc,
 *                 tc_memalign, tc_posix_memalign, tc_valloc, tc_pvalloc
 *                 (the size asked for)
 *   work_realloc  tc_realloc: a free of the old block and a new one
 *   work_new      tc_new, tc_newarray, their nothrow and aligned forms
 *   work_frees    blocks freed at once by tc_free, tc_free_sized,
 *                 tc_cfree, tc_delete(_sized, _nothrow, _aligned,
 *                 _sized_aligned, _aligned_nothrow) and the array forms
 *   work_query    tc_malloc_size: nothing
 *
 * fx_release frees what is kept, each block as its kind wants.
 */
#include <cstdlib>
#include <new>

#include <gperftools/tcmalloc.h>

#include "direct.h"

#define HOW_FREE	 0
#define HOW_DELETE	 1
#define HOW_DELETEARRAY	 2
#define HOW_DELETE_AL	 3
#define HOW_DELETEARR_AL 4

static const std::align_val_t al64 = static_cast<std::align_val_t>(64);

FX_NOINLINE static void
work_malloc(void)
{
	void *p = nullptr;
	int i;

	for (i = 0; i < 6; i++)
		fx_got(tc_malloc(90 + (size_t)i), 90 + (size_t)i, HOW_FREE);
	fx_got(tc_malloc_skip_new_handler(123), 123, HOW_FREE);
	fx_got(tc_calloc(6, 11), 66, HOW_FREE);
	fx_got(tc_memalign(64, 300), 300, HOW_FREE);
	if (tc_posix_memalign(&p, 128, 257) != 0)
		_exit(3);
	fx_got(p, 257, HOW_FREE);
	fx_got(tc_valloc(5000), 5000, HOW_FREE);
	fx_got(tc_pvalloc(3000), 3000, HOW_FREE);
}

FX_NOINLINE static void
work_realloc(void)
{
	void *p = fx_got(tc_malloc(40), 40, HOW_FREE);

	fx_gone(fx_last());
	fx_got(tc_realloc(p, 4000), 4000, HOW_FREE);
}

FX_NOINLINE static void
work_new(void)
{
	fx_got(tc_new(48), 48, HOW_DELETE);
	fx_got(tc_newarray(480), 480, HOW_DELETEARRAY);
	fx_got(tc_new_nothrow(56, std::nothrow), 56, HOW_DELETE);
	fx_got(tc_newarray_nothrow(560, std::nothrow), 560, HOW_DELETEARRAY);
	fx_got(tc_new_aligned(192, al64), 192, HOW_DELETE_AL);
	fx_got(tc_newarray_aligned(1920, al64), 1920, HOW_DELETEARR_AL);
	fx_got(tc_new_aligned_nothrow(200, al64, std::nothrow), 200,
	    HOW_DELETE_AL);
	fx_got(tc_newarray_aligned_nothrow(2000, al64, std::nothrow), 2000,
	    HOW_DELETEARR_AL);
}

FX_NOINLINE static void
work_frees(void)
{
	void *p;

	p = tc_malloc(610);
	fx_transient(p, 610);
	tc_free(p);
	p = tc_malloc(620);
	fx_transient(p, 620);
	tc_free_sized(p, 620);
	p = tc_malloc(630);
	fx_transient(p, 630);
	tc_cfree(p);
	p = tc_new(640);
	fx_transient(p, 640);
	tc_delete_sized(p, 640);
	p = tc_new(650);
	fx_transient(p, 650);
	tc_delete_nothrow(p, std::nothrow);
	p = tc_newarray(660);
	fx_transient(p, 660);
	tc_deletearray_sized(p, 660);
	p = tc_newarray(670);
	fx_transient(p, 670);
	tc_deletearray_nothrow(p, std::nothrow);
	p = tc_new_aligned(680, al64);
	fx_transient(p, 680);
	tc_delete_sized_aligned(p, 680, al64);
	p = tc_new_aligned(690, al64);
	fx_transient(p, 690);
	tc_delete_aligned_nothrow(p, al64, std::nothrow);
	p = tc_newarray_aligned(700, al64);
	fx_transient(p, 700);
	tc_deletearray_sized_aligned(p, 700, al64);
	p = tc_newarray_aligned(710, al64);
	fx_transient(p, 710);
	tc_deletearray_aligned_nothrow(p, al64, std::nothrow);
}

FX_NOINLINE static void
work_query(void)
{
	if (tc_malloc_size(fx_kept[0].p) < fx_kept[0].n)
		_exit(3);
}

void
fx_work(void)
{
	work_malloc();
	work_realloc();
	work_new();
	work_frees();
	work_query();
}

void
fx_release(void)
{
	while (fx_nkept > 0) {
		struct fx_block b = fx_kept[fx_nkept - 1];

		fx_gone(fx_nkept - 1);
		switch (b.how) {
		case HOW_DELETE:
			tc_delete(b.p);
			break;
		case HOW_DELETEARRAY:
			tc_deletearray(b.p);
			break;
		case HOW_DELETE_AL:
			tc_delete_aligned(b.p, al64);
			break;
		case HOW_DELETEARR_AL:
			tc_deletearray_aligned(b.p, al64);
			break;
		default:
			tc_free(b.p);
		}
	}
}

int
main()
{
	return fx_main();
}
