/*
 * What each allocator function's events are (recfn.h).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "allocnames.h"
#include "prim.h"
#include "recfn.h"
#include "trace.h"

static struct ht_recfn fns[HT_NALLOCFNS];
static size_t (*usable1[3])(void *);	  /* malloc, mi_, unused */
static size_t (*sallocx[3])(void *, int); /* sallocx, je_, _rjem_ */

static int
has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

static int
starts(const char *s, const char *pfx)
{
	return strncmp(s, pfx, strlen(pfx)) == 0;
}

/* What each function's events are: from its name, kind and signature. */
static void
classify(void)
{
	unsigned i;

	for (i = 0; i < HT_NALLOCFNS; i++) {
		const struct ht_allocfn *d = &ht_allocfns[i];
		struct ht_recfn *f = &fns[i];
		const char *nm = d->name;
		int al = has(nm, "align");

		memset(f, 0, sizeof(*f));
		if (has(nm, "nothrow"))
			f->flags |= HT_TREV_NOTHROW;
		if (d->kind == HT_KIND_REALLOC)
			f->op = HT_TROP_REALLOC;
		else if (d->kind == HT_KIND_FREE) {
			int sized = d->sig == HT_SIG_P &&
			    (has(nm, "sized") || has(nm, "sdallocx") ||
				has(nm, "free_size"));

			if (starts(nm, "_ZdlPvm"))
				f->op = HT_TROP_DELETE_SIZED;
			else if (starts(nm, "_ZdaPvm"))
				f->op = HT_TROP_DELETE_ARRAY_SIZED;
			else if (starts(nm, "_ZdlPv"))
				f->op = HT_TROP_DELETE;
			else if (starts(nm, "_ZdaPv"))
				f->op = HT_TROP_DELETE_ARRAY;
			else
				f->op = sized ? HT_TROP_FREE_SIZED :
						HT_TROP_FREE;
		} else if (d->kind == HT_KIND_ALLOC) {
			if (starts(nm, "_Znw"))
				f->op = HT_TROP_NEW;
			else if (starts(nm, "_Zna"))
				f->op = HT_TROP_NEW_ARRAY;
			else if (d->sig == HT_SIG_NS || d->sig == HT_SIG_HNS)
				f->op = HT_TROP_CALLOC;
			else if (al || d->sig == HT_SIG_AS ||
			    d->sig == HT_SIG_PM || has(nm, "valloc"))
				f->op = HT_TROP_ALIGNED;
			else
				f->op = HT_TROP_MALLOC;
			if (d->sig == HT_SIG_AS || d->sig == HT_SIG_PM)
				f->align = AL_ARG0;
			else if (has(nm, "valloc"))
				f->align = AL_PAGE;
			else if (has(nm, "mallocx"))
				f->align = AL_LG1;
			else if (al && d->sig == HT_SIG_S)
				f->align = AL_ARG1;
			else if (al &&
			    (d->sig == HT_SIG_NS || d->sig == HT_SIG_HS))
				f->align = AL_ARG2;
			else if (al && d->sig == HT_SIG_HNS)
				f->align = AL_ARG3;
		}
		if (strcmp(d->family, "malloc") == 0 ||
		    strcmp(d->family, "c++") == 0)
			f->usable = US_MALLOC;
		else if (strcmp(d->family, "mimalloc") == 0)
			f->usable = US_MI;
		else if (strcmp(d->family, "jemalloc") == 0)
			f->usable = starts(nm, "je_") ? US_JE_PFX :
			    starts(nm, "_rjem_")      ? US_RJEM :
							US_JE;
	}
}

/* Is the code at fn a PLT stub ([endbr64] [bnd] jmp *disp32(%rip))?  A
 * non-PIE executable that takes malloc's address defines malloc as its
 * canonical PLT entry, the address the whole process must agree on, and
 * dlsym finds that: no allocator is there, only a jump to one. */
static int
plt_stub(const void *fn)
{
	const uint8_t *b = fn;
	size_t k = 0;

	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		k = 4; /* endbr64 */
	if (b[k] == 0xf2)
		k++; /* bnd */
	return b[k] == 0xff && b[k + 1] == 0x25;
}

/* The usable-size functions of the process, found with dlsym from the
 * agent's thread (never from a hook). */
static void
resolve_usable(void)
{
	static const char *const s1[] = { "malloc_usable_size",
		"mi_usable_size" };
	static const char *const sx[] = { "sallocx", "je_sallocx",
		"_rjem_sallocx" };
	unsigned i;

	for (i = 0; i < 2; i++)
		usable1[i] = (size_t(*)(void *))dlsym(RTLD_DEFAULT, s1[i]);
	for (i = 0; i < 3; i++)
		sallocx[i] = (size_t(*)(void *, int))dlsym(RTLD_DEFAULT, sx[i]);
	/* glibc's malloc_usable_size on a block of a malloc of another
	 * module (an executable with an allocator of its own that has no
	 * malloc_usable_size) would read what is not a header: only the
	 * malloc's own module's is asked. */
	if (usable1[0] != NULL) {
		void *m = dlsym(RTLD_DEFAULT, "malloc");
		Dl_info a, b;

		/* A canonical PLT entry: the malloc is the next one. */
		if (m != NULL && plt_stub(m))
			m = dlsym(RTLD_NEXT, "malloc");

		if (m == NULL || dladdr(m, &a) == 0 ||
		    dladdr((void *)usable1[0], &b) == 0 ||
		    a.dli_fbase != b.dli_fbase)
			usable1[0] = NULL;
	}
	(void)dlerror(); /* ours, not the program's */
}

uint32_t
ht_recfn_usable_over(const struct ht_recfn *f, void *p, size_t n)
{
	size_t u;

	if (p == NULL)
		return HT_TRACE_USABLE_UNKNOWN;
	switch (f->usable) {
	case US_MALLOC:
	case US_MI:
		if (usable1[f->usable - US_MALLOC] == NULL)
			return HT_TRACE_USABLE_UNKNOWN;
		u = usable1[f->usable - US_MALLOC](p);
		break;
	case US_JE:
	case US_JE_PFX:
	case US_RJEM:
		if (sallocx[f->usable - US_JE] == NULL)
			return HT_TRACE_USABLE_UNKNOWN;
		u = sallocx[f->usable - US_JE](p, 0);
		break;
	default:
		return HT_TRACE_USABLE_UNKNOWN;
	}
	if (u < n || u - n >= HT_TRACE_USABLE_UNKNOWN)
		return HT_TRACE_USABLE_UNKNOWN;
	return (uint32_t)(u - n);
}

/* The process's C++ operators delete (dlsym), by function: what a call
 * site that reached free may have called (ht_recfn_delete_of). */
static uintptr_t delete_at[HT_NALLOCFNS];

static void
resolve_deletes(void)
{
	unsigned i;
	void *a;

	for (i = 0; i < HT_NALLOCFNS; i++) {
		delete_at[i] = 0;
		if (fns[i].op != HT_TROP_DELETE &&
		    fns[i].op != HT_TROP_DELETE_SIZED &&
		    fns[i].op != HT_TROP_DELETE_ARRAY &&
		    fns[i].op != HT_TROP_DELETE_ARRAY_SIZED)
			continue;
		if ((a = dlsym(RTLD_DEFAULT, ht_allocfns[i].name)) == NULL)
			(void)dlerror(); /* ours, not the program's */
		delete_at[i] = (uintptr_t)a;
	}
}

void
ht_recfn_setup(void)
{
	classify();
	resolve_usable();
	resolve_deletes();
}

unsigned
ht_recfn_delete_of(uintptr_t callee)
{
	unsigned i;

	if (callee == 0)
		return HT_NALLOCFNS;
	for (i = 0; i < HT_NALLOCFNS; i++)
		if (delete_at[i] == callee)
			return i;
	return HT_NALLOCFNS;
}

const struct ht_recfn *
ht_recfn(unsigned fn)
{
	return &fns[fn];
}

uint64_t
ht_recfn_align(const struct ht_recfn *f, const uintptr_t *a)
{
	if (f->align == AL_PAGE)
		return ht_prim_page_size();
	if (a == NULL)
		return 0;
	switch (f->align) {
	case AL_ARG0:
	case AL_ARG1:
	case AL_ARG2:
	case AL_ARG3:
		return a[f->align - AL_ARG0];
	case AL_LG1:
		/* jemalloc's MALLOCX_LG_ALIGN: the low 6 bits of flags. */
		return (a[1] & 0x3f) != 0 ? (uint64_t)1 << (a[1] & 0x3f) : 0;
	default:
		return 0;
	}
}
