/*
 * One step's allocator call (replay.h).  The C functions are called by
 * name, through the PLT: that is where a preloaded allocator and the
 * agent's GOT hooks take them.  operator new and delete are C++'s: they
 * are looked up with dlsym in the global scope (a preloaded allocator's
 * own first, else libstdc++'s, loaded for it when the trace has them), so
 * that this program links no C++ runtime; under the agent they are then
 * seen through libstdc++'s calls of malloc and free.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay.h"

uint64_t rp_ops_substituted;

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_al_fn)(void *, size_t);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*free_sz_fn)(void *, size_t);

static struct {
	new_fn nw, na;
	new_nt_fn nw_nt, na_nt;
	new_al_fn nw_al, na_al;
	del_fn dl, da;
	del_sz_fn dl_sz, da_sz;
	del_al_fn dl_al, da_al;
	free_sz_fn free_sized;
	const void *nothrow; /* std::nothrow */
} fn;

static void *
sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

int
rp_ops_init(int need_cxx, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*(void **)&fn.free_sized = sym("free_sized");
	if (!need_cxx)
		return 0;
	if (sym("_Znwm") == NULL)
		dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	*(void **)&fn.nw = sym("_Znwm");
	*(void **)&fn.na = sym("_Znam");
	*(void **)&fn.nw_nt = sym("_ZnwmRKSt9nothrow_t");
	*(void **)&fn.na_nt = sym("_ZnamRKSt9nothrow_t");
	*(void **)&fn.nw_al = sym("_ZnwmSt11align_val_t");
	*(void **)&fn.na_al = sym("_ZnamSt11align_val_t");
	*(void **)&fn.dl = sym("_ZdlPv");
	*(void **)&fn.da = sym("_ZdaPv");
	*(void **)&fn.dl_sz = sym("_ZdlPvm");
	*(void **)&fn.da_sz = sym("_ZdaPvm");
	*(void **)&fn.dl_al = sym("_ZdlPvSt11align_val_t");
	*(void **)&fn.da_al = sym("_ZdaPvSt11align_val_t");
	fn.nothrow = sym("_ZSt7nothrow");
	return 0;
}

static void *
aligned(const struct rp_step *s, int *ok)
{
	size_t al = (size_t)1 << s->align, size = (size_t)s->size;
	void *p = NULL;

	switch (s->how) {
	case RP_MEMALIGN:
		p = memalign(al, size);
		break;
	case RP_ALIGNED_ALLOC:
		p = aligned_alloc(al, size);
		break;
	case RP_VALLOC:
		p = valloc(size);
		break;
	case RP_PVALLOC:
		p = pvalloc(size);
		break;
	default:
		if (al < sizeof(void *))
			al = sizeof(void *);
		if (posix_memalign(&p, al, size) != 0)
			p = NULL;
		break;
	}
	*ok = p != NULL;
	return p;
}

static void *
cxx_new(const struct rp_step *s, int *ok)
{
	int array = s->op == HT_TROP_NEW_ARRAY;
	size_t size = (size_t)s->size;
	void *p;

	if (s->how == RP_ALIGNED_NEW && (array ? fn.na_al : fn.nw_al) != NULL)
		p = (array ? fn.na_al : fn.nw_al)(size, (size_t)1 << s->align);
	else if (s->how == RP_NOTHROW && fn.nothrow != NULL &&
	    (array ? fn.na_nt : fn.nw_nt) != NULL)
		p = (array ? fn.na_nt : fn.nw_nt)(size, fn.nothrow);
	else if (s->how != RP_ALIGNED_NEW && (array ? fn.na : fn.nw) != NULL)
		p = (array ? fn.na : fn.nw)(size);
	else {
		rp_ops_substituted++;
		p = malloc(size);
	}
	*ok = p != NULL;
	return p;
}

void *
rp_ops_alloc(const struct rp_step *s, void *old, int *ok)
{
	void *p;

	switch (s->op) {
	case HT_TROP_MALLOC:
		p = malloc((size_t)s->size);
		break;
	case HT_TROP_CALLOC:
		p = calloc(1, (size_t)s->size);
		break;
	case HT_TROP_REALLOC:
	case HT_TROP_REALLOC_INPLACE:
		p = realloc(old, (size_t)s->size);
		/* realloc to 0 may free and give NULL: that is a success */
		*ok = p != NULL || s->size == 0;
		return p;
	case HT_TROP_ALIGNED:
		return aligned(s, ok);
	default:
		return cxx_new(s, ok);
	}
	*ok = p != NULL || s->size == 0;
	return p;
}

void
rp_ops_free(const struct rp_step *s, void *p, uint64_t size, int kind)
{
	int array = s->op == HT_TROP_DELETE_ARRAY ||
	    s->op == HT_TROP_DELETE_ARRAY_SIZED;

	switch (s->op) {
	case HT_TROP_FREE:
		free(p);
		return;
	case HT_TROP_FREE_SIZED:
		if (fn.free_sized != NULL)
			fn.free_sized(p, (size_t)size);
		else
			free(p);
		return;
	default:
		break;
	}
	/* A block of an aligned new takes the aligned delete. */
	if (kind > 0 && (array ? fn.da_al : fn.dl_al) != NULL) {
		(array ? fn.da_al : fn.dl_al)(p, (size_t)1 << (kind - 1));
		return;
	}
	if ((s->op == HT_TROP_DELETE_SIZED ||
		s->op == HT_TROP_DELETE_ARRAY_SIZED) &&
	    (array ? fn.da_sz : fn.dl_sz) != NULL) {
		(array ? fn.da_sz : fn.dl_sz)(p, (size_t)size);
		return;
	}
	if ((array ? fn.da : fn.dl) != NULL) {
		(array ? fn.da : fn.dl)(p);
		return;
	}
	rp_ops_substituted++;
	free(p);
}
