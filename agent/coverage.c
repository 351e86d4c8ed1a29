/*
 * The account of coverage (coverage.h).  A module's functions are found in
 * its dynamic symbol table through reloc.h, which checks every read: a
 * corrupt or hostile file costs a missing entry, never a fault.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "allocnames.h"
#include "coverage.h"
#include "got.h"
#include "lock.h"
#include "mem.h"
#include "modules.h"
#include "reloc.h"

#define NOT_MODULES (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO)
#define FN_WORDS    ((HT_NALLOCFNS + 63) / 64)

struct covmod {
	char path[512];
	uintptr_t start; /* where it was when scanned (0: never scanned) */
	uintptr_t dynamic;
	int allocator; /* it defines malloc */
	uint64_t defined[FN_WORDS];
};

struct coventry {
	uint16_t module;
	uint16_t fn;
	uint8_t backend;
	uint8_t reason;
	uint32_t slots;
};

static struct covmod mods[HT_COVERAGE_MODULES];
static size_t nmods; /* published with a release store */
static struct coventry ents[HT_COVERAGE_MAX];
static size_t nents; /* published with a release store */
static size_t overflow;
static unsigned backend;
/* Modules looked at that define none of the list, by key (path and
 * start), open addressing; 0 is an empty slot.  Full, the others are
 * looked at again at each scan. */
#define SEEN_SLOTS 4096
static uint64_t seen[SEEN_SLOTS];
static size_t nseen;
static struct ht_lock cov_lock;
static int noted;

static int
is_function(const ElfW(Sym) * s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return s->st_value != 0 &&
	    (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	    ELF64_ST_BIND(s->st_info) != STB_LOCAL;
}

/* The module entry for path (made if new, with lock held), or -1. */
static int
module_of(const char *path)
{
	size_t i, n = nmods, len;

	for (i = 0; i < n; i++)
		if (strcmp(mods[i].path, path) == 0)
			return (int)i;
	if (n == HT_COVERAGE_MODULES) {
		__atomic_add_fetch(&overflow, 1, __ATOMIC_RELAXED);
		return -1;
	}
	memset(&mods[n], 0, sizeof(mods[n]));
	len = strnlen(path, sizeof(mods[n].path) - 1);
	memcpy(mods[n].path, path, len);
	__atomic_store_n(&nmods, n + 1, __ATOMIC_RELEASE);
	return (int)n;
}

/* With the lock held: entry (module, fn) gets backend, reason and slots;
 * from_got: the GOT scan, which leaves another backend's entry alone. */
static int
note(int module, unsigned fn, unsigned b, unsigned reason, uint32_t slots,
    int from_got)
{
	struct coventry *e;
	size_t i, n = nents;

	for (i = 0; i < n; i++)
		if (ents[i].module == module && ents[i].fn == fn)
			break;
	if (i == n) {
		if (n == HT_COVERAGE_MAX) {
			__atomic_add_fetch(&overflow, 1, __ATOMIC_RELAXED);
			return -1;
		}
		e = &ents[n];
		e->module = (uint16_t)module;
		e->fn = (uint16_t)fn;
		e->backend = (uint8_t)b;
		e->reason = (uint8_t)reason;
		e->slots = slots;
		__atomic_store_n(&nents, n + 1, __ATOMIC_RELEASE);
		return 0;
	}
	e = &ents[i];
	if (from_got && e->backend != HT_BACKEND_GOT &&
	    e->backend != HT_BACKEND_NONE)
		return 0;
	__atomic_store_n(&e->backend, (uint8_t)b, __ATOMIC_RELAXED);
	__atomic_store_n(&e->reason, (uint8_t)reason, __ATOMIC_RELAXED);
	__atomic_store_n(&e->slots, slots, __ATOMIC_RELAXED);
	return 0;
}

int
ht_coverage_set(const char *module, const char *name, unsigned b,
    unsigned reason)
{
	int fn = ht_allocfns_find(name), m, rc = -1;

	if (fn < 0 || module == NULL)
		return -1;
	ht_lock_acquire(&cov_lock);
	if ((m = module_of(module)) >= 0)
		rc = note(m, (unsigned)fn, b, reason, 0, 0);
	ht_lock_release(&cov_lock);
	return rc;
}

void
ht_coverage_set_backend(unsigned b)
{
	__atomic_store_n(&backend, b, __ATOMIC_RELAXED);
}

unsigned
ht_coverage_backend(void)
{
	return __atomic_load_n(&backend, __ATOMIC_RELAXED);
}

/* Look at module m's symbols into cm (its first scan at this address). */
static void
look(const struct ht_module *m, struct covmod *cm)
{
	const ElfW(Sym) * s;
	struct ht_reloc d;
	size_t i;

	memset(cm->defined, 0, sizeof(cm->defined));
	cm->start = m->start;
	cm->dynamic = (uintptr_t)m->dynamic;
	cm->allocator = 0;
	if (ht_reloc_read(m, &d) != 0)
		return;
	for (i = 0; i < HT_NALLOCFNS; i++)
		if ((s = ht_reloc_lookup(m, &d, ht_allocfns[i].name)) != NULL &&
		    is_function(s))
			cm->defined[i / 64] |= (uint64_t)1 << (i % 64);
	cm->allocator = (cm->defined[HT_AF_MALLOC / 64] &
			    ((uint64_t)1 << (HT_AF_MALLOC % 64))) != 0;
	/* A module that only wraps the allocator (libbsd's reallocarray)
	 * defines some of the C library's names without malloc: they call
	 * what the hooks see. */
	if (!cm->allocator && !(m->flags & HT_MOD_LIBC))
		for (i = 0; i < HT_NALLOCFNS; i++)
			if (strcmp(ht_allocfns[i].family, "malloc") == 0)
				cm->defined[i / 64] &=
				    ~((uint64_t)1 << (i % 64));
}

static uint64_t
key_of(const struct ht_module *m)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *p;

	for (p = m->path; *p != '\0'; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	h ^= (uint64_t)m->start * 0x9e3779b97f4a7c15ULL;
	return h != 0 ? h : 1;
}

/* Was m seen to define nothing?  With add, remember that it does. */
static int
seen_empty(const struct ht_module *m, int add)
{
	uint64_t k = key_of(m);
	size_t i = (size_t)(k % SEEN_SLOTS);

	while (seen[i] != 0) {
		if (seen[i] == k)
			return 1;
		i = (i + 1) % SEEN_SLOTS;
	}
	if (add && nseen < SEEN_SLOTS / 4 * 3) {
		seen[i] = k;
		nseen++;
	}
	return 0;
}

static int
any(const uint64_t *w)
{
	size_t i;

	for (i = 0; i < FN_WORDS; i++)
		if (w[i] != 0)
			return 1;
	return 0;
}

/* Why function i of module m (cm) is hooked by GOT slots, or not. */
static unsigned
reason_of(const struct ht_module *m, const struct covmod *cm, size_t i,
    uint32_t slots, int hooked, const void *dl, unsigned *b)
{
	const struct ht_allocfn *f = &ht_allocfns[i];

	*b = HT_BACKEND_GOT;
	if (f->kind == HT_KIND_QUERY) {
		*b = HT_BACKEND_NONE;
		return HT_COV_NOTHING;
	}
	if (!hooked) {
		*b = HT_BACKEND_NONE;
		return HT_COV_DETACHED;
	}
	if ((f->flags & HT_FNF_ALLOCATOR) && !cm->allocator)
		return HT_COV_WRAPPER;
	if (slots > 0)
		return HT_COV_SLOTS;
	*b = HT_BACKEND_NONE;
	if (f->sig == HT_SIG_UNSUP)
		return HT_COV_UNSUPPORTED;
	/* The global scope's definition is another module's: calls bind
	 * there (a module opened RTLD_DEEPBIND may still bind here). */
	if (dl != NULL && !ht_modules_holds(m, (uintptr_t)dl))
		return HT_COV_PREEMPTED;
	return (m->flags & HT_MOD_MAIN) ? HT_COV_DIRECT : HT_COV_NO_SLOT;
}

void
ht_coverage_scan(const struct ht_modset *set, int hooked,
    const struct ht_hook_def *hooks, size_t n)
{
	static uint32_t counts[HT_NALLOCFNS]; /* under the lock */
	struct covmod *cm;
	unsigned b, r;
	size_t i, k;
	int mi;

	if (!noted) {
		ht_mem_note_static(sizeof(mods) + sizeof(ents) +
		    sizeof(counts) + sizeof(seen));
		noted = 1;
	}
	ht_lock_acquire(&cov_lock);
	for (k = 0; k < set->n; k++) {
		const struct ht_module *m = &set->mods[k];

		if ((m->flags & NOT_MODULES) != 0 || seen_empty(m, 0))
			continue;
		for (mi = 0; mi < (int)nmods; mi++)
			if (strcmp(mods[mi].path, m->path) == 0)
				break;
		if (mi < (int)nmods && mods[mi].start == m->start &&
		    mods[mi].dynamic == (uintptr_t)m->dynamic)
			cm = &mods[mi];
		else {
			static struct covmod probe; /* under the lock */

			look(m, &probe);
			if (!any(probe.defined)) {
				(void)seen_empty(m, 1);
				continue;
			}
			if ((mi = module_of(m->path)) < 0)
				continue;
			cm = &mods[mi];
			memcpy(cm->defined, probe.defined, sizeof(cm->defined));
			cm->allocator = probe.allocator;
			cm->dynamic = probe.dynamic;
			__atomic_store_n(&cm->start, probe.start,
			    __ATOMIC_RELEASE);
		}
		if (!any(cm->defined))
			continue;
		memset(counts, 0, sizeof(counts));
		(void)ht_got_count(m->start, m->end, counts, HT_NALLOCFNS);
		for (i = 0; i < HT_NALLOCFNS; i++) {
			if (!(cm->defined[i / 64] & ((uint64_t)1 << (i % 64))))
				continue;
			r = reason_of(m, cm, i, counts[i], hooked,
			    i < n ? __atomic_load_n(&hooks[i].dl,
					__ATOMIC_ACQUIRE) :
				    NULL,
			    &b);
			(void)note(mi, (unsigned)i, b, r,
			    r == HT_COV_SLOTS ? counts[i] : 0, 1);
		}
	}
	ht_lock_release(&cov_lock);
}

size_t
ht_coverage_count(void)
{
	return __atomic_load_n(&nents, __ATOMIC_ACQUIRE);
}

void
ht_coverage_get(size_t i, struct ht_coverage_item *out)
{
	const struct coventry *e = &ents[i];

	out->module = mods[__atomic_load_n(&e->module, __ATOMIC_RELAXED)].path;
	out->fn = __atomic_load_n(&e->fn, __ATOMIC_RELAXED);
	out->backend = __atomic_load_n(&e->backend, __ATOMIC_RELAXED);
	out->reason = __atomic_load_n(&e->reason, __ATOMIC_RELAXED);
	out->slots = __atomic_load_n(&e->slots, __ATOMIC_RELAXED);
}

void
ht_coverage_summary(uint32_t *hooked, uint32_t *unhooked)
{
	struct ht_coverage_item it;
	size_t i, n = ht_coverage_count();

	*hooked = *unhooked = 0;
	for (i = 0; i < n; i++) {
		ht_coverage_get(i, &it);
		if (it.reason == HT_COV_NOTHING ||
		    it.reason == HT_COV_PREEMPTED)
			continue;
		if (ht_cov_reason_hooked(it.reason))
			(*hooked)++;
		else
			(*unhooked)++;
	}
}

uint64_t
ht_coverage_unseen(const char *path, uint64_t names)
{
	struct ht_coverage_item it;
	size_t i, n = ht_coverage_count();
	unsigned bit;
	int fn;

	for (i = 0; i < n && names != 0; i++) {
		ht_coverage_get(i, &it);
		if (strcmp(it.module, path) != 0 ||
		    !ht_cov_reason_hooked(it.reason) ||
		    (it.backend != HT_BACKEND_INLINE &&
			it.reason != HT_COV_NATIVE))
			continue;
		for (bit = 0; bit < 64; bit++) {
			if (!(names & (uint64_t)1 << bit))
				continue;
			fn = ht_allocfns_find(ht_allocnames_name(bit));
			if (fn >= 0 && (unsigned)fn == it.fn)
				names &= ~((uint64_t)1 << bit);
		}
	}
	return names;
}

size_t
ht_coverage_overflow(void)
{
	return __atomic_load_n(&overflow, __ATOMIC_RELAXED);
}
