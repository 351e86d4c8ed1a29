/*
 * The per-module originals (orig.h): a flat table scanned in order.  It
 * holds an entry only for a module bound to an original other than the
 * common one, which is rare, so a scan is short.
 */
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "modules.h"
#include "orig.h"

#define ORIGS_MAX 1024

struct origent {
	unsigned seq; /* odd while written */
	unsigned index;
	uintptr_t start;
	uintptr_t end;
	void *orig;	   /* NULL: a free entry */
	uintptr_t dynamic; /* identity, for the writer only */
};

static struct origent *origs; /* published once, never moved */
static size_t norigs;	      /* entries ever used; only grows */

int
ht_orig_init(void)
{
	struct origent *o;

	if (origs == NULL) {
		if ((o = ht_mem_map(ORIGS_MAX * sizeof(*o))) == NULL)
			return -1;
		__atomic_store_n(&origs, o, __ATOMIC_RELEASE);
	}
	return 0;
}

static void
origent_write(struct origent *e, unsigned index, uintptr_t start, uintptr_t end,
    void *orig, uintptr_t dynamic)
{
	unsigned s = e->seq;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->index, index, __ATOMIC_RELAXED);
	__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&e->orig, orig, __ATOMIC_RELAXED);
	e->dynamic = dynamic;
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

int
ht_orig_set(const struct ht_module *m, size_t index, void *orig, int create)
{
	struct origent *e, *spare = NULL;
	size_t i;

	for (i = 0; i < norigs; i++) {
		e = &origs[i];
		if (e->orig == NULL) {
			if (spare == NULL)
				spare = e;
			continue;
		}
		if (e->index == index && e->start == m->start &&
		    e->dynamic == (uintptr_t)m->dynamic) {
			__atomic_store_n(&e->orig, orig, __ATOMIC_RELEASE);
			return 0;
		}
	}
	if (!create)
		return 0;
	if (spare != NULL) {
		origent_write(spare, (unsigned)index, m->start, m->end, orig,
		    (uintptr_t)m->dynamic);
		return 0;
	}
	if (norigs == ORIGS_MAX)
		return -1;
	origent_write(&origs[norigs], (unsigned)index, m->start, m->end, orig,
	    (uintptr_t)m->dynamic);
	__atomic_store_n(&norigs, norigs + 1, __ATOMIC_RELEASE);
	return 0;
}

void
ht_orig_retarget(size_t index, void *from, void *to)
{
	size_t i;

	for (i = 0; i < norigs; i++)
		if (origs[i].index == index && origs[i].orig == from)
			__atomic_store_n(&origs[i].orig, to, __ATOMIC_RELEASE);
}

void
ht_orig_forget(const struct ht_modset *set)
{
	const struct ht_module *m;
	size_t i;

	for (i = 0; i < norigs; i++) {
		struct origent *e = &origs[i];

		if (e->orig == NULL)
			continue;
		m = ht_modules_at(set, e->start);
		if (m == NULL || (uintptr_t)m->dynamic != e->dynamic)
			origent_write(e, 0, 0, 0, NULL, 0);
	}
}

void *
ht_orig_find(size_t index, uintptr_t caller_pc)
{
	const struct origent *tab, *e;
	uintptr_t lo, hi;
	unsigned s, x;
	size_t i, n;
	void *o;

	tab = __atomic_load_n(&origs, __ATOMIC_ACQUIRE);
	n = tab != NULL ? __atomic_load_n(&norigs, __ATOMIC_ACQUIRE) : 0;
	for (i = 0; i < n; i++) {
		e = &tab[i];
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		x = __atomic_load_n(&e->index, __ATOMIC_RELAXED);
		lo = __atomic_load_n(&e->start, __ATOMIC_RELAXED);
		hi = __atomic_load_n(&e->end, __ATOMIC_RELAXED);
		o = __atomic_load_n(&e->orig, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((s & 1) || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s)
			continue; /* being written: not for a caller */
		if (x == index && o != NULL && caller_pc >= lo &&
		    caller_pc < hi)
			return o;
	}
	return NULL;
}
