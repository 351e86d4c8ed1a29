/*
 * GOT rewriting (see got.h).  Two tables, from ht_mem_map, both touched
 * under got_lock only:
 *
 * - slots: every slot written, sorted by address, with the value it held
 *   (restore writes it back), the original that calls through it must
 *   reach, and its page's protection.  Modules do not overlap, so the slots
 *   of one module are one run of the table.
 * - mods: the modules patched, keyed by (dynamic, bias).  A module is
 *   scanned once, again only while some slot of it was left for later
 *   (pending); a module that left the set is forgotten with its slots.
 *
 * A module's relocations come from reloc.h, its pages' protections from
 * maps.h, and the originals that differ by module go to orig.h, where
 * hooks find them without a lock; so do the ranges of the wrappers a module
 * defines, to wrap.h, the first time the module is scanned.
 *
 * Non-PIE executables make one more case: an executable that takes the
 * address of malloc gets a canonical PLT entry, and every other module's
 * GLOB_DAT for malloc is bound to that stub, which jumps through the
 * executable's own JUMP_SLOT.  Once that slot holds the hook, calling the
 * stub as an original would re-enter the hook forever.  So an original equal
 * to a canonical PLT entry is replaced by what the executable's slot leads
 * to; while that is unknown (lazy binding has not run), the stub stays a
 * valid original because the executable's slot is then left unpatched.
 */
#include <sys/mman.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "got.h"
#include "lock.h"
#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "orig.h"
#include "prim.h"
#include "redirect.h"
#include "reloc.h"
#include "wrap.h"

#define SLOTS_FIRST 1024 /* doubles on demand up to SLOTS_MAX */
#define SLOTS_MAX   65536

enum { PASS_CANON, PASS_EAGER, PASS_LAZY };

struct slot {
	uintptr_t addr;
	void *saved;	/* the value before, for restore */
	void *orig;	/* what calls through the slot reach */
	void *hook;	/* what we wrote */
	uint16_t index; /* hooks[index] */
	uint8_t prot;	/* the page's protection, PROT_* */
	uint8_t state;	/* candidates only: DROP or DONE */
};
#define DROP 1
#define DONE 2

struct pmod {
	uintptr_t dynamic;
	uintptr_t bias;
	uintptr_t start;
	uintptr_t end;
	int pending; /* a slot was left for a later call */
};

#define NAME_BUCKETS 1024 /* open addressing over the hooks' names */
#define ALLOC_CACHE  16	  /* modules asked whether they define malloc */

struct ctx {
	const struct ht_modset *set;
	struct ht_hook_def *hooks;
	size_t n;
	int env_now; /* LD_BIND_NOW set */
	int patched;
	const struct ht_module *canon_mod;
	size_t namelen[HT_GOT_MAX_HOOKS];
	void *dl[HT_GOT_MAX_HOOKS];
	uintptr_t canon[HT_GOT_MAX_HOOKS];
	void *canon_to[HT_GOT_MAX_HOOKS];
	/* hooks[bucket[h] - 1] hashes to h (0: empty) */
	uint16_t bucket[NAME_BUCKETS];
	/* HT_GOT_IN_ALLOCATOR's answers, for this call */
	const struct ht_module *amod[ALLOC_CACHE];
	int ais[ALLOC_CACHE];
	size_t namod;
};

struct work {
	const struct ht_module *m;
	struct pmod *pm;
	struct ht_reloc d;
	int lazy;
	size_t ncand; /* at slots[nslots ...] */
	void *eager[HT_GOT_MAX_HOOKS];
	void *orig[HT_GOT_MAX_HOOKS];
};

/* Under got_lock: too large for the stack of a thread in a dlopen hook. */
static struct ctx ctx_area;
static struct work work_area;

static struct ht_lock got_lock;
static pid_t got_owner;
static struct slot *slots;
static size_t nslots, capslots;
static struct pmod *mods;
static size_t nmods;
static size_t pagesz;
static size_t overflows;
/* ht_got_set_wrappers(): set once, before the first patch. */
static const char *const *wrapnames;
static size_t nwrapnames;
static const char *wrapretry;

static int
got_enter(void)
{
	pid_t self = ht_prim_tid();

	/* A signal handler that patches while its own thread is in here
	 * would spin forever on the lock. */
	if (__atomic_load_n(&got_owner, __ATOMIC_RELAXED) == self) {
		errno = EDEADLK;
		return -1;
	}
	ht_lock_acquire(&got_lock);
	__atomic_store_n(&got_owner, self, __ATOMIC_RELAXED);
	return 0;
}

static void
got_leave(void)
{
	__atomic_store_n(&got_owner, 0, __ATOMIC_RELAXED);
	ht_lock_release(&got_lock);
}

static void
set_nslots(size_t n)
{
	__atomic_store_n(&nslots, n, __ATOMIC_RELAXED);
}

static int
tables_init(void)
{
	if (pagesz == 0)
		pagesz = ht_prim_page_size();
	if (slots == NULL) {
		slots = ht_mem_map(SLOTS_FIRST * sizeof(*slots));
		if (slots == NULL)
			return -1;
		capslots = SLOTS_FIRST;
	}
	if (mods == NULL &&
	    (mods = ht_mem_map(HT_MAX_MODULES * sizeof(*mods))) == NULL)
		return -1;
	if (ht_orig_init() != 0 || ht_maps_init() != 0 || ht_wrap_init() != 0)
		return -1;
	return 0;
}

/* Room for need more entries after the first used ones (the sorted table
 * and the candidates behind it).  Grows by doubling up to SLOTS_MAX. */
static int
slots_room(size_t used, size_t need)
{
	struct slot *p;
	size_t cap = capslots;

	if (used + need <= capslots)
		return 0;
	if (used + need > SLOTS_MAX)
		return -1;
	while (cap < used + need)
		cap *= 2;
	if (cap > SLOTS_MAX)
		cap = SLOTS_MAX;
	if ((p = ht_mem_map(cap * sizeof(*p))) == NULL)
		return -1;
	memcpy(p, slots, used * sizeof(*p));
	ht_mem_unmap(slots, capslots * sizeof(*slots));
	slots = p;
	capslots = cap;
	return 0;
}

/* The first slot at or above addr. */
static size_t
slot_lower(uintptr_t addr)
{
	size_t lo = 0, hi = nslots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct slot *
slot_find(uintptr_t addr)
{
	size_t i = slot_lower(addr);

	return i < nslots && slots[i].addr == addr ? &slots[i] : NULL;
}

static void
slots_drop_range(uintptr_t start, uintptr_t end)
{
	size_t lo = slot_lower(start), hi = slot_lower(end);

	memmove(&slots[lo], &slots[hi], (nslots - hi) * sizeof(*slots));
	set_nslots(nslots - (hi - lo));
}

/* Forget the slots, module records and origs of modules not in set: their
 * memory may be unmapped or reused by now. */
static void
forget_gone(const struct ht_modset *set)
{
	const struct ht_module *m;
	size_t i;

	for (i = 0; i < nmods;) {
		m = ht_modules_at(set, mods[i].start);
		if (m != NULL && (uintptr_t)m->dynamic == mods[i].dynamic &&
		    m->bias == mods[i].bias) {
			i++;
			continue;
		}
		slots_drop_range(mods[i].start, mods[i].end);
		mods[i] = mods[--nmods];
	}
	ht_orig_forget(set);
	ht_wrap_forget(set);
}

/* Where a stored original equal to the canonical PLT entry `from' now
 * leads to `to', say so everywhere, before the executable's slot that the
 * entry jumps through gets the hook. */
static void
retarget(struct ctx *c, size_t index, uintptr_t from, void *to)
{
	void *expect = (void *)from;
	size_t i;

	__atomic_compare_exchange_n(&c->hooks[index].orig, &expect, to, 0,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	ht_orig_retarget(index, (void *)from, to);
	for (i = 0; i < nslots; i++)
		if (slots[i].index == index && slots[i].orig == (void *)from)
			slots[i].orig = to;
}

/* FNV-1a of the NUL-terminated name at s, read no further than n bytes:
 * 0 if there is no NUL within them (no name of ours is that long). */
static uint32_t
name_hash(const char *s, size_t n, size_t *len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n && s[i] != '\0'; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	*len = i;
	return i < n ? h | 1 : 0;
}

static void
names_index(struct ctx *c)
{
	size_t i, len, b;
	uint32_t h;

	memset(c->bucket, 0, sizeof(c->bucket));
	for (i = 0; i < c->n; i++) {
		if (c->namelen[i] == 0)
			continue;
		h = name_hash(c->hooks[i].name, c->namelen[i] + 1, &len);
		for (b = h % NAME_BUCKETS; c->bucket[b] != 0;
		     b = (b + 1) % NAME_BUCKETS)
			;
		c->bucket[b] = (uint16_t)(i + 1);
	}
}

/* The hook named like sym, or -1. */
static int
hook_of(const struct ctx *c, const struct work *w, const ElfW(Sym) * sym)
{
	const char *name;
	size_t i, len, b, off = sym->st_name;
	uint32_t h;

	if (off >= w->d.strsz)
		return -1;
	name = w->d.strtab + off;
	/* Bounded by the string table: the name and its NUL. */
	if ((h = name_hash(name, w->d.strsz - off, &len)) == 0)
		return -1;
	for (b = h % NAME_BUCKETS; c->bucket[b] != 0;
	     b = (b + 1) % NAME_BUCKETS) {
		i = (size_t)c->bucket[b] - 1;
		if (c->namelen[i] == len &&
		    memcmp(name, c->hooks[i].name, len) == 0)
			return (int)i;
	}
	return -1;
}

/* Does the module holding addr define malloc (an allocator)? */
static int
in_allocator(struct ctx *c, uintptr_t addr)
{
	const struct ht_module *m;
	const ElfW(Sym) * s;
	struct ht_reloc d;
	size_t i, k;
	int is;

	k = ht_modules_lower(c->set, addr + 1);
	if (k == 0 || !ht_modules_holds(&c->set->mods[k - 1], addr))
		return 0;
	m = &c->set->mods[k - 1];
	for (i = 0; i < c->namod; i++)
		if (c->amod[i] == m)
			return c->ais[i];
	is = ht_reloc_read(m, &d) == 0 &&
	    (s = ht_reloc_lookup(m, &d, "malloc")) != NULL &&
	    s->st_value != 0 &&
	    (ELF64_ST_TYPE(s->st_info) == STT_FUNC ||
		ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC);
	if (c->namod < ALLOC_CACHE) {
		c->amod[c->namod] = m;
		c->ais[c->namod++] = is;
	}
	return is;
}

static int
is_hook(const struct ctx *c, const void *p)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->hooks[i].hook == p)
			return 1;
	return 0;
}

/* The executable's canonical PLT entries for hook names: an undefined
 * symbol with a value (only a non-PIC executable has them), and where its
 * JUMP_SLOT leads if that is known. */
static void
visit_canon(struct ctx *c, struct work *w, uintptr_t off, unsigned type,
    const ElfW(Sym) * sym, int h)
{
	uintptr_t addr = w->m->bias + off;
	struct slot *s;
	void *cur;

	if (type != R_X86_64_JUMP_SLOT || sym->st_shndx != SHN_UNDEF ||
	    sym->st_value == 0 || !ht_modules_holds(w->m, addr) ||
	    addr % sizeof(void *) != 0)
		return;
	c->canon[h] = w->m->bias + sym->st_value;
	c->canon_mod = w->m;
	cur = __atomic_load_n((void **)addr, __ATOMIC_RELAXED);
	if (is_hook(c, cur))
		c->canon_to[h] = (s = slot_find(addr)) != NULL ? s->orig : NULL;
	else if (!ht_modules_holds(w->m, (uintptr_t)cur))
		c->canon_to[h] = cur;
}

static void
visit(struct ctx *c, struct work *w, int pass, uintptr_t off, unsigned type,
    size_t symi, int64_t addend)
{
	const struct ht_module *m = w->m;
	const ElfW(Sym) * sym;
	struct slot *s;
	uintptr_t addr = m->bias + off;
	void *cur, *orig;
	int h, prot;

	if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
	    type != R_X86_64_64)
		return;
	if (type == R_X86_64_64 && addend != 0)
		return;
	if ((sym = ht_reloc_sym(m, &w->d, symi)) == NULL ||
	    (h = hook_of(c, w, sym)) < 0)
		return;
	if (pass == PASS_CANON) {
		visit_canon(c, w, off, type, sym, h);
		return;
	}
	if ((pass == PASS_LAZY) != (type == R_X86_64_JUMP_SLOT))
		return;
	if (!ht_modules_holds(m, addr) || addr % sizeof(void *) != 0 ||
	    slot_find(addr) != NULL)
		return;
	prot = ht_maps_prot(m, addr);
	if (prot < 0 || !(prot & PROT_READ))
		return;
	cur = __atomic_load_n((void **)addr, __ATOMIC_RELAXED);
	if (cur == NULL || is_hook(c, cur))
		return; /* an unresolved weak symbol, or ours */
	orig = cur;
	if (type == R_X86_64_JUMP_SLOT && w->lazy &&
	    ht_modules_holds(m, (uintptr_t)cur) &&
	    !(sym->st_shndx != SHN_UNDEF &&
		cur == (void *)(m->bias + sym->st_value))) {
		/*
		 * A PLT stub: lazy binding has not run for this slot, and with
		 * the hook in it, it never will.  A GLOB_DAT of the same name
		 * in this module was bound in the module's own scope; failing
		 * that, dlsym(RTLD_DEFAULT) approximates that scope (it is
		 * the global scope, which is wrong for a module opened with
		 * RTLD_DEEPBIND or bound by version to another definition).
		 */
		orig = w->eager[h] != NULL ? w->eager[h] : c->dl[h];
		if (orig == NULL) {
			w->pm->pending = 1;
			return;
		}
	}
	if (c->canon[h] != 0 && (uintptr_t)orig == c->canon[h]) {
		if (c->canon_to[h] != NULL)
			orig = c->canon_to[h];
		else if (m == c->canon_mod) {
			/* The executable's own slot, not bound yet: its
			 * target is unknown, so it cannot be hooked now. */
			w->pm->pending = 1;
			return;
		}
	}
	if (is_hook(c, orig))
		return;
	/* The rules of got.h: a call nested in an allocator, or an operator
	 * that calls malloc. */
	if ((c->hooks[h].rules & HT_GOT_NOT_SELF) &&
	    !(m->flags & HT_MOD_LIBC) && ht_modules_holds(m, (uintptr_t)orig))
		return;
	if ((c->hooks[h].rules & HT_GOT_IN_ALLOCATOR) &&
	    !in_allocator(c, (uintptr_t)orig))
		return;
	if ((orig = ht_redirect_of(orig)) == NULL)
		return; /* excluded: counted inside by an inline hook */
	if (pass == PASS_EAGER && w->eager[h] == NULL)
		w->eager[h] = orig;
	if (w->orig[h] == NULL)
		w->orig[h] = orig;
	else if (w->orig[h] != orig) {
		/* Callers are told apart by module only: one original per
		 * name and module.  Try again when things have settled. */
		w->pm->pending = 1;
		return;
	}
	if (slots_room(nslots + w->ncand, 1) != 0) {
		__atomic_add_fetch(&overflows, 1, __ATOMIC_RELAXED);
		w->pm->pending = 1;
		return;
	}
	s = &slots[nslots + w->ncand++];
	s->addr = addr;
	s->saved = cur;
	s->orig = orig;
	s->hook = c->hooks[h].hook;
	s->index = (uint16_t)h;
	s->prot = (uint8_t)prot;
	s->state = 0;
}

/* One relocation of the table walk(): pass it to visit(). */
struct walk {
	struct ctx *c;
	struct work *w;
	int pass;
};

static void
walk_one(void *arg, uintptr_t off, unsigned type, size_t symi, int64_t addend)
{
	struct walk *k = arg;

	visit(k->c, k->w, k->pass, off, type, symi, addend);
}

static void
walk(struct ctx *c, struct work *w, int pass)
{
	struct walk k = { c, w, pass };

	ht_reloc_walk(&w->d, walk_one, &k);
}

static void
sort_by_addr(struct slot *s, size_t n)
{
	size_t i, j;

	/* Relocation tables are nearly sorted by offset already. */
	for (i = 1; i < n; i++) {
		struct slot t = s[i];

		for (j = i; j > 0 && s[j - 1].addr > t.addr; j--)
			s[j] = s[j - 1];
		s[j] = t;
	}
}

/* Write the hooks into the candidates of one page, whose protection is
 * made writable only meanwhile.  restore: write the saved values back. */
static int
write_page(struct slot *s, size_t n, int restore)
{
	void *page = (void *)(s[0].addr & ~(pagesz - 1));
	int prot = s[0].prot, done = 0;
	size_t i;

	if (!(prot & PROT_WRITE) &&
	    mprotect(page, pagesz, prot | PROT_WRITE) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		void *expect = restore ? s[i].hook : s[i].saved;
		void *want = restore ? s[i].saved : s[i].hook;

		if (s[i].state == DROP)
			continue;
		/* Compare first: another thread's lazy binding may have
		 * resolved the slot since we read it; a restore leaves a
		 * slot that someone else rewrote. */
		if (__atomic_compare_exchange_n((void **)s[i].addr, &expect,
			want, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			s[i].state = DONE;
			done++;
		}
	}
	if (!(prot & PROT_WRITE))
		(void)mprotect(page, pagesz, prot);
	return done;
}

static void
finish_module(struct ctx *c, struct work *w)
{
	const struct ht_module *m = w->m;
	struct slot *cand = &slots[nslots];
	size_t h, i, j, k, n = w->ncand;
	void *o;

	/* Publish each name's original before any slot of that name is
	 * written: other threads call through a slot as soon as it is. */
	for (h = 0; h < c->n; h++) {
		if (w->orig[h] == NULL)
			continue;
		if (m == c->canon_mod && c->canon[h] != 0 &&
		    c->canon_to[h] == NULL) {
			retarget(c, h, c->canon[h], w->orig[h]);
			c->canon_to[h] = w->orig[h];
		}
		o = __atomic_load_n(&c->hooks[h].orig, __ATOMIC_ACQUIRE);
		if (o == NULL) {
			__atomic_store_n(&c->hooks[h].orig, w->orig[h],
			    __ATOMIC_RELEASE);
			o = w->orig[h];
		}
		if (ht_orig_set(m, h, w->orig[h], o != w->orig[h]) != 0) {
			for (i = 0; i < n; i++)
				if (cand[i].index == h) {
					cand[i].state = DROP;
					__atomic_add_fetch(&overflows, 1,
					    __ATOMIC_RELAXED);
				}
			w->pm->pending = 1;
			continue;
		}
		if (o != w->orig[h])
			ht_gate_bits(&c->hooks[h], HT_HOOK_MULTI, 1);
	}

	/* Write page by page; a table that lists a slot twice (DT_RELASZ
	 * covering DT_JMPREL) is written once. */
	sort_by_addr(cand, n);
	for (i = 1; i < n; i++)
		if (cand[i].addr == cand[i - 1].addr)
			cand[i].state = DROP;
	for (i = 0; i < n; i = j) {
		uintptr_t page = cand[i].addr & ~(pagesz - 1);

		for (j = i; j < n && (cand[j].addr & ~(pagesz - 1)) == page;
		     j++)
			;
		write_page(&cand[i], j - i, 0);
	}

	/* Move what was written into the sorted table. */
	for (i = 0; i < n; i++) {
		struct slot t = cand[i];

		if (t.state != DONE) {
			if (t.state == 0)
				w->pm->pending = 1; /* raced: next time */
			continue;
		}
		t.state = 0;
		k = slot_lower(t.addr);
		memmove(&slots[k + 1], &slots[k], (nslots - k) * sizeof(t));
		slots[k] = t;
		set_nslots(nslots + 1);
		c->patched++;
	}
}

static struct pmod *
pmod_get(const struct ht_module *m, int *fresh)
{
	struct pmod *pm;
	size_t i;

	*fresh = 0;
	for (i = 0; i < nmods; i++)
		if (mods[i].dynamic == (uintptr_t)m->dynamic &&
		    mods[i].bias == m->bias)
			return &mods[i];
	if (nmods == HT_MAX_MODULES)
		return NULL;
	pm = &mods[nmods++];
	pm->dynamic = (uintptr_t)m->dynamic;
	pm->bias = m->bias;
	pm->start = m->start;
	pm->end = m->end;
	pm->pending = 0;
	*fresh = 1;
	return pm;
}

/* The function sym of m, as a range inside m: 0, or -1 if it is none. */
static int
fn_range(const struct ht_module *m, const ElfW(Sym) * sym, struct ht_wrap_fn *f)
{
	if (sym == NULL || ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
	    sym->st_size == 0)
		return -1;
	f->lo = m->bias + sym->st_value;
	f->hi = f->lo + sym->st_size;
	if (!ht_modules_holds(m, f->lo) || f->hi < f->lo || f->hi > m->end)
		return -1;
	return 0;
}

/* Record the wrappers that m defines, and its retry query with them. */
static void
note_wrappers(const struct ht_module *m, const struct ht_reloc *d)
{
	struct ht_wrap_fn fns[HT_WRAP_FNS], q;
	void *retry = NULL;
	size_t i, n = 0;

	for (i = 0; i < nwrapnames && n < HT_WRAP_FNS; i++)
		if (fn_range(m, ht_reloc_lookup(m, d, wrapnames[i]), &fns[n]) ==
		    0)
			n++;
	if (n > 0 && wrapretry != NULL &&
	    fn_range(m, ht_reloc_lookup(m, d, wrapretry), &q) == 0)
		retry = (void *)q.lo;
	if (ht_wrap_set(m, fns, n, retry) != 0)
		__atomic_add_fetch(&overflows, 1, __ATOMIC_RELAXED);
}

static void
patch_module(struct ctx *c, const struct ht_module *m)
{
	struct work *w = &work_area;
	int fresh;

	if (m->flags & (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO))
		return;
	memset(w, 0, sizeof(*w));
	w->m = m;
	if ((w->pm = pmod_get(m, &fresh)) == NULL) {
		__atomic_add_fetch(&overflows, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!fresh && !w->pm->pending)
		return;
	w->pm->pending = 0;
	if (ht_reloc_read(m, &w->d) != 0)
		return;
	if (fresh)
		note_wrappers(m, &w->d);
	w->lazy = !w->d.bind_now && !c->env_now;
	/* Eagerly bound slots first: they tell what a lazy slot of the
	 * same name would have been bound to. */
	walk(c, w, PASS_EAGER);
	walk(c, w, PASS_LAZY);
	finish_module(c, w);
}

static void
canon_scan(struct ctx *c)
{
	struct work *w = &work_area;
	size_t i, h;

	for (i = 0; i < c->set->n; i++) {
		if (!(c->set->mods[i].flags & HT_MOD_MAIN))
			continue;
		memset(w, 0, sizeof(*w));
		w->m = &c->set->mods[i];
		if (ht_reloc_read(w->m, &w->d) == 0)
			walk(c, w, PASS_CANON);
	}
	for (h = 0; h < c->n; h++)
		if (c->canon[h] != 0 && c->canon_to[h] != NULL)
			retarget(c, h, c->canon[h], c->canon_to[h]);
}

void
ht_got_resolve(struct ht_hook_def *hooks, size_t n)
{
	size_t i;
	int missing = 0;
	void *p;

	for (i = 0; i < n && i < HT_GOT_MAX_HOOKS; i++) {
		if (hooks[i].name == NULL || hooks[i].hook == NULL)
			continue;
		p = dlsym(RTLD_DEFAULT, hooks[i].name);
		if (p == NULL)
			missing = 1;
		__atomic_store_n(&hooks[i].dl, p, __ATOMIC_RELEASE);
	}
	/* A failed dlsym leaves an error for the thread's next dlerror():
	 * it is ours, not the program's. */
	if (missing)
		(void)dlerror();
}

int
ht_got_patch(const struct ht_modset *set, struct ht_hook_def *hooks, size_t n)
{
	struct ctx *c = &ctx_area;
	const char *e;
	size_t i;
	int env_now, patched;

	if (n > HT_GOT_MAX_HOOKS) {
		errno = EINVAL;
		return -1;
	}
	e = getenv("LD_BIND_NOW");
	env_now = e != NULL && *e != '\0';
	if (got_enter() != 0)
		return -1;
	memset(c, 0, sizeof(*c));
	c->set = set;
	c->hooks = hooks;
	c->n = n;
	c->env_now = env_now;
	for (i = 0; i < n; i++) {
		if (hooks[i].name == NULL || hooks[i].hook == NULL)
			continue;
		c->namelen[i] = strlen(hooks[i].name);
		c->dl[i] = __atomic_load_n(&hooks[i].dl, __ATOMIC_ACQUIRE);
	}
	for (i = 0; i < n; i++)
		if (c->dl[i] != NULL && is_hook(c, c->dl[i]))
			c->dl[i] = NULL;
	names_index(c);
	if (tables_init() != 0) {
		got_leave();
		errno = ENOMEM;
		return -1;
	}
	forget_gone(set);
	ht_maps_begin(set);
	canon_scan(c);
	/* The executable and libc first: hooks[i].orig comes from the first
	 * module patched, and theirs is the one most modules share. */
	for (i = 0; i < set->n; i++)
		if (set->mods[i].flags & HT_MOD_MAIN)
			patch_module(c, &set->mods[i]);
	for (i = 0; i < set->n; i++)
		if ((set->mods[i].flags & (HT_MOD_LIBC | HT_MOD_MAIN)) ==
		    HT_MOD_LIBC)
			patch_module(c, &set->mods[i]);
	for (i = 0; i < set->n; i++)
		if (!(set->mods[i].flags & (HT_MOD_LIBC | HT_MOD_MAIN)))
			patch_module(c, &set->mods[i]);
	patched = c->patched;
	got_leave();
	return patched;
}

int
ht_got_restore_all(void)
{
	struct ht_modset set;
	size_t i, j;
	int have, restored = 0;

	/* Before our lock, like dlsym in ht_got_patch. */
	have = ht_modules_scan(&set) == 0;
	if (got_enter() != 0) {
		if (have)
			ht_modules_release(&set);
		return -1;
	}
	if (slots != NULL) {
		if (have)
			forget_gone(&set);
		for (i = 0; i < nslots; i = j) {
			uintptr_t page = slots[i].addr & ~(pagesz - 1);

			for (j = i; j < nslots &&
			     (slots[j].addr & ~(pagesz - 1)) == page &&
			     slots[j].prot == slots[i].prot;
			     j++)
				slots[j].state = 0;
			restored += write_page(&slots[i], j - i, 1);
		}
		set_nslots(0);
		nmods = 0;
	}
	ht_redirect_forget_excluded();
	got_leave();
	if (have)
		ht_modules_release(&set);
	return restored;
}

int
ht_got_redirect(struct ht_hook_def *hooks, size_t n, void *from, void *to)
{
	size_t h, i;

	if (got_enter() != 0)
		return -1;
	if (ht_redirect_set(from, to) != 0) {
		got_leave();
		errno = ENOSPC;
		return -1;
	}
	/* Every original already stored: the hooks' common ones, the
	 * per-module ones, the slots'.  Each store is atomic and both values
	 * are right (to does what from does), so a hook reading one meanwhile
	 * calls either. */
	for (h = 0; h < n && h < HT_GOT_MAX_HOOKS; h++) {
		void *expect = from;

		__atomic_compare_exchange_n(&hooks[h].orig, &expect, to, 0,
		    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		ht_orig_retarget(h, from, to);
	}
	for (i = 0; i < nslots; i++)
		if (slots[i].orig == from)
			slots[i].orig = to;
	got_leave();
	return 0;
}

int
ht_got_exclude(void *fn)
{
	size_t i;
	int n = 0;

	if (got_enter() != 0)
		return -1;
	if (ht_redirect_exclude(fn) != 0) {
		got_leave();
		errno = ENOSPC;
		return -1;
	}
	for (i = 0; i < nslots;) {
		if (slots[i].orig != fn) {
			i++;
			continue;
		}
		slots[i].state = 0;
		n += write_page(&slots[i], 1, 1);
		memmove(&slots[i], &slots[i + 1],
		    (nslots - i - 1) * sizeof(*slots));
		set_nslots(nslots - 1);
	}
	got_leave();
	return n;
}

void *
ht_got_orig_for_caller(const struct ht_hook_def *hooks, size_t index,
    uintptr_t caller_pc)
{
	void *o = ht_orig_find(index, caller_pc);

	if (o != NULL)
		return o;
	return __atomic_load_n(&hooks[index].orig, __ATOMIC_ACQUIRE);
}

int
ht_got_count(uintptr_t lo, uintptr_t hi, uint32_t *counts, size_t n)
{
	size_t i;

	if (got_enter() != 0)
		return -1;
	for (i = 0; i < nslots; i++)
		if (slots[i].index < n && (uintptr_t)slots[i].orig >= lo &&
		    (uintptr_t)slots[i].orig < hi)
			counts[slots[i].index]++;
	got_leave();
	return 0;
}

size_t
ht_got_patched_slots(void)
{
	return __atomic_load_n(&nslots, __ATOMIC_RELAXED);
}

size_t
ht_got_overflows(void)
{
	return __atomic_load_n(&overflows, __ATOMIC_RELAXED);
}

void
ht_got_set_wrappers(const char *const *names, size_t n, const char *retry)
{
	wrapnames = names;
	nwrapnames = n;
	wrapretry = retry;
}

size_t
ht_got_slots(struct ht_got_slot *out, size_t max)
{
	size_t i, n;

	if (got_enter() != 0)
		return 0;
	n = nslots;
	for (i = 0; i < n && i < max; i++) {
		out[i].addr = slots[i].addr;
		out[i].saved = slots[i].saved;
		out[i].orig = slots[i].orig;
		out[i].hook = slots[i].hook;
		out[i].index = slots[i].index;
		out[i].prot = slots[i].prot;
	}
	got_leave();
	return n;
}
