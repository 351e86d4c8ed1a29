/*
 * The wrappers of the malloc family (wrap.h): a flat table of the modules
 * that define any, scanned in order.  Few modules do (the C++ runtime, a
 * program that replaces operator new), so a scan is short, and a module's
 * bounds are tested before its ranges.
 */
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "modules.h"
#include "wrap.h"

#define WRAP_MODS 32

struct wrapmod {
	unsigned seq; /* odd while written */
	unsigned n;   /* 0: a free entry */
	uintptr_t start;
	uintptr_t end;
	void *retry;
	uintptr_t dynamic; /* identity, for the writer only */
	struct ht_wrap_fn fns[HT_WRAP_FNS];
};

static struct wrapmod *wraps; /* published once, never moved */
static size_t nwraps;	      /* entries ever used; only grows */

int
ht_wrap_init(void)
{
	struct wrapmod *w;

	if (wraps == NULL) {
		if ((w = ht_mem_map(WRAP_MODS * sizeof(*w))) == NULL)
			return -1;
		__atomic_store_n(&wraps, w, __ATOMIC_RELEASE);
	}
	return 0;
}

static void
wrap_write(struct wrapmod *e, const struct ht_module *m,
    const struct ht_wrap_fn *fns, size_t n, void *retry)
{
	unsigned s = e->seq;
	size_t i;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->n, (unsigned)n, __ATOMIC_RELAXED);
	__atomic_store_n(&e->start, m != NULL ? m->start : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end, m != NULL ? m->end : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->retry, retry, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		__atomic_store_n(&e->fns[i].lo, fns[i].lo, __ATOMIC_RELAXED);
		__atomic_store_n(&e->fns[i].hi, fns[i].hi, __ATOMIC_RELAXED);
	}
	e->dynamic = m != NULL ? (uintptr_t)m->dynamic : 0;
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

static int
same(const struct wrapmod *e, const struct ht_wrap_fn *fns, size_t n,
    const void *retry)
{
	size_t i;

	if (e->n != n || e->retry != retry)
		return 0;
	for (i = 0; i < n; i++)
		if (e->fns[i].lo != fns[i].lo || e->fns[i].hi != fns[i].hi)
			return 0;
	return 1;
}

int
ht_wrap_set(const struct ht_module *m, const struct ht_wrap_fn *fns, size_t n,
    void *retry)
{
	struct wrapmod *e, *spare = NULL;
	size_t i;

	if (n > HT_WRAP_FNS)
		n = HT_WRAP_FNS;
	for (i = 0; i < nwraps; i++) {
		e = &wraps[i];
		if (e->n == 0) {
			if (spare == NULL)
				spare = e;
			continue;
		}
		if (e->start == m->start &&
		    e->dynamic == (uintptr_t)m->dynamic) {
			/* A module scanned again (hooked again after a
			 * detach) has what it had: rewriting it would hide
			 * it from readers meanwhile. */
			if (!same(e, fns, n, retry))
				wrap_write(e, n > 0 ? m : NULL, fns, n, retry);
			return 0;
		}
	}
	if (n == 0)
		return 0;
	if (spare != NULL) {
		wrap_write(spare, m, fns, n, retry);
		return 0;
	}
	if (nwraps == WRAP_MODS)
		return -1;
	wrap_write(&wraps[nwraps], m, fns, n, retry);
	__atomic_store_n(&nwraps, nwraps + 1, __ATOMIC_RELEASE);
	return 0;
}

void
ht_wrap_forget(const struct ht_modset *set)
{
	const struct ht_module *m;
	size_t i;

	for (i = 0; i < nwraps; i++) {
		struct wrapmod *e = &wraps[i];

		if (e->n == 0)
			continue;
		m = ht_modules_at(set, e->start);
		if (m == NULL || (uintptr_t)m->dynamic != e->dynamic)
			wrap_write(e, NULL, NULL, 0, NULL);
	}
}

/* The entry of a wrapper holding pc, as one consistent read: 1 and its
 * retry query in *retry, or 0. */
static int
find(uintptr_t pc, void **retry)
{
	const struct wrapmod *tab, *e;
	unsigned s, k, n;
	size_t i, count;
	int hit;

	tab = __atomic_load_n(&wraps, __ATOMIC_ACQUIRE);
	count = tab != NULL ? __atomic_load_n(&nwraps, __ATOMIC_ACQUIRE) : 0;
	for (i = 0; i < count; i++) {
		e = &tab[i];
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue; /* being written: not for a caller */
		if (pc < __atomic_load_n(&e->start, __ATOMIC_RELAXED) ||
		    pc >= __atomic_load_n(&e->end, __ATOMIC_RELAXED))
			continue;
		n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
		hit = 0;
		for (k = 0; k < n && k < HT_WRAP_FNS; k++)
			if (pc >= __atomic_load_n(&e->fns[k].lo,
				      __ATOMIC_RELAXED) &&
			    pc < __atomic_load_n(&e->fns[k].hi,
				     __ATOMIC_RELAXED)) {
				hit = 1;
				break;
			}
		*retry = __atomic_load_n(&e->retry, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s)
			continue;
		if (hit)
			return 1;
	}
	return 0;
}

int
ht_wrap_holds(uintptr_t pc)
{
	void *retry;

	return find(pc, &retry);
}

int
ht_wrap_may_retry(uintptr_t pc)
{
	void *(*query)(void);
	void *retry;

	if (!find(pc, &retry) || retry == NULL)
		return 0;
	*(void **)&query = retry;
	return query() != NULL;
}
