/*
 * GOT rewriting (see got.h).  Three tables, all from ht_mem_map:
 *
 * - slots: every slot written, sorted by address, with the value it held
 *   (restore writes it back), the original that calls through it must
 *   reach, and its page's protection.  Modules do not overlap, so the slots
 *   of one module are one run of the table.  Touched under got_lock only.
 * - mods: the modules patched, keyed by (dynamic, bias).  A module is
 *   scanned once, again only while some slot of it was left for later
 *   (pending); a module that left the set is forgotten with its slots.
 * - origs: per (module, hook) originals that differ from hooks[i].orig,
 *   read lock-free by ht_got_orig_for_caller from inside hooks.  Each entry
 *   has a sequence count, odd while it is written, so a reader never mixes
 *   two modules' fields.  An entry is created, reused or cleared only while
 *   no call from its module can be in a hook through it (before the
 *   module's slots are written, after the module is gone), so a reader that
 *   skips an entry being written loses nothing.  Its orig alone may change
 *   in place (one atomic store) between two originals that are both right.
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
#include <sys/auxv.h>
#include <sys/mman.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "got.h"
#include "lock.h"
#include "mem.h"

#define SLOTS_FIRST	1024		/* doubles on demand up to SLOTS_MAX */
#define SLOTS_MAX	65536
#define ORIGS_MAX	1024
#define RANGES_FIRST	256
#define MAPS_BUF	16384		/* longer than any line of maps */
#define DYN_MAX		4096		/* a sane bound on dynamic entries */

enum { PASS_CANON, PASS_EAGER, PASS_LAZY };

struct slot {
	uintptr_t	 addr;
	void		*saved;		/* the value before, for restore */
	void		*orig;		/* what calls through the slot reach */
	void		*hook;		/* what we wrote */
	uint16_t	 index;		/* hooks[index] */
	uint8_t		 prot;		/* the page's protection, PROT_* */
	uint8_t		 state;		/* candidates only: DROP or DONE */
};
#define DROP	1
#define DONE	2

struct pmod {
	uintptr_t	 dynamic;
	uintptr_t	 bias;
	uintptr_t	 start;
	uintptr_t	 end;
	int		 pending;	/* a slot was left for a later call */
};

struct origent {
	unsigned	 seq;		/* odd while written */
	unsigned	 index;
	uintptr_t	 start;
	uintptr_t	 end;
	void		*orig;		/* NULL: a free entry */
	uintptr_t	 dynamic;	/* identity, for the writer only */
};

struct range {
	uintptr_t	 start;
	uintptr_t	 end;
	int		 prot;		/* -1: shared mapping, never written */
};

struct dyninfo {
	const ElfW(Sym)	*symtab;
	const char	*strtab;
	size_t		 strsz;
	uintptr_t	 jmprel;
	size_t		 pltrelsz;
	int		 pltrela;
	uintptr_t	 rela;
	size_t		 relasz;
	size_t		 relaent;
	uintptr_t	 rel;
	size_t		 relsz;
	size_t		 relent;
	int		 bind_now;
};

struct ctx {
	const struct ht_modset	*set;
	struct ht_hook_def	*hooks;
	size_t			 n;
	int			 env_now;	/* LD_BIND_NOW set */
	int			 maps;		/* 1 read, -1 failed, 0 to do */
	int			 patched;
	const struct ht_module	*canon_mod;
	size_t			 namelen[HT_GOT_MAX_HOOKS];
	void			*dl[HT_GOT_MAX_HOOKS];
	uintptr_t		 canon[HT_GOT_MAX_HOOKS];
	void			*canon_to[HT_GOT_MAX_HOOKS];
};

struct work {
	const struct ht_module	*m;
	struct pmod		*pm;
	struct dyninfo		 d;
	int			 lazy;
	size_t			 ncand;		/* at slots[nslots ...] */
	void			*eager[HT_GOT_MAX_HOOKS];
	void			*orig[HT_GOT_MAX_HOOKS];
};

static struct ht_lock	 got_lock;
static pid_t		 got_owner;
static struct slot	*slots;
static size_t		 nslots, capslots;
static struct pmod	*mods;
static size_t		 nmods;
static struct origent	*origs;		/* published once, never moved */
static size_t		 norigs;	/* entries ever used; only grows */
static struct range	*ranges;
static size_t		 nranges, capranges;
static char		*mapsbuf;
static size_t		 pagesz;
static size_t		 overflows;
static int		 (*filter)(const struct ht_module *, size_t, void *);

static int
got_enter(void)
{
	pid_t	self = gettid();

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
	struct origent	*o;

	if (pagesz == 0) {
		pagesz = getauxval(AT_PAGESZ);
		if (pagesz == 0)
			pagesz = 4096;
	}
	if (slots == NULL) {
		slots = ht_mem_map(SLOTS_FIRST * sizeof(*slots));
		if (slots == NULL)
			return -1;
		capslots = SLOTS_FIRST;
	}
	if (mods == NULL &&
	    (mods = ht_mem_map(HT_MAX_MODULES * sizeof(*mods))) == NULL)
		return -1;
	if (origs == NULL) {
		if ((o = ht_mem_map(ORIGS_MAX * sizeof(*o))) == NULL)
			return -1;
		__atomic_store_n(&origs, o, __ATOMIC_RELEASE);
	}
	if (ranges == NULL) {
		ranges = ht_mem_map(RANGES_FIRST * sizeof(*ranges));
		if (ranges == NULL)
			return -1;
		capranges = RANGES_FIRST;
	}
	if (mapsbuf == NULL && (mapsbuf = ht_mem_map(MAPS_BUF)) == NULL)
		return -1;
	return 0;
}

/* Room for need more entries after the first used ones (the sorted table
 * and the candidates behind it).  Grows by doubling up to SLOTS_MAX. */
static int
slots_room(size_t used, size_t need)
{
	struct slot	*p;
	size_t		 cap = capslots;

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
	size_t	lo = 0, hi = nslots;

	while (lo < hi) {
		size_t	mid = lo + (hi - lo) / 2;

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
	size_t	i = slot_lower(addr);

	return i < nslots && slots[i].addr == addr ? &slots[i] : NULL;
}

static void
slots_drop_range(uintptr_t start, uintptr_t end)
{
	size_t	lo = slot_lower(start), hi = slot_lower(end);

	memmove(&slots[lo], &slots[hi], (nslots - hi) * sizeof(*slots));
	set_nslots(nslots - (hi - lo));
}

static int
in_module(const struct ht_module *m, uintptr_t a)
{
	return a >= m->start && a < m->end;
}

/* The module of set whose start is start, or NULL. */
static const struct ht_module *
set_find(const struct ht_modset *set, uintptr_t start)
{
	size_t	lo = 0, hi = set->n;

	while (lo < hi) {
		size_t	mid = lo + (hi - lo) / 2;

		if (set->mods[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < set->n && set->mods[lo].start == start ?
	    &set->mods[lo] : NULL;
}

static int
set_overlaps(const struct ht_modset *set, uintptr_t lo, uintptr_t hi)
{
	size_t	a = 0, b = set->n;

	/* Modules are sorted by start and do not overlap: only the last one
	 * starting below hi can reach into [lo, hi). */
	while (a < b) {
		size_t	mid = a + (b - a) / 2;

		if (set->mods[mid].start < hi)
			a = mid + 1;
		else
			b = mid;
	}
	return a > 0 && set->mods[a - 1].end > lo;
}

/*
 * Origs.  Writer side, under got_lock.
 */
static void
origent_write(struct origent *e, unsigned index, uintptr_t start,
    uintptr_t end, void *orig, uintptr_t dynamic)
{
	unsigned	s = e->seq;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->index, index, __ATOMIC_RELAXED);
	__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&e->orig, orig, __ATOMIC_RELAXED);
	e->dynamic = dynamic;
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* Record orig as module m's original for hooks[index].  An existing entry
 * is updated in place; a new one is made only if create.  -1 if full. */
static int
origent_set(const struct ht_module *m, size_t index, void *orig, int create)
{
	struct origent	*e, *spare = NULL;
	size_t		 i;

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

/* Forget the slots, module records and origs of modules not in set: their
 * memory may be unmapped or reused by now. */
static void
forget_gone(const struct ht_modset *set)
{
	const struct ht_module	*m;
	size_t			 i;

	for (i = 0; i < nmods; ) {
		m = set_find(set, mods[i].start);
		if (m != NULL && (uintptr_t)m->dynamic == mods[i].dynamic &&
		    m->bias == mods[i].bias) {
			i++;
			continue;
		}
		slots_drop_range(mods[i].start, mods[i].end);
		mods[i] = mods[--nmods];
	}
	for (i = 0; i < norigs; i++) {
		struct origent	*e = &origs[i];

		if (e->orig == NULL)
			continue;
		m = set_find(set, e->start);
		if (m == NULL || (uintptr_t)m->dynamic != e->dynamic)
			origent_write(e, 0, 0, 0, NULL, 0);
	}
}

/* Where a stored original equal to the canonical PLT entry `from' now
 * leads to `to', say so everywhere, before the executable's slot that the
 * entry jumps through gets the hook. */
static void
retarget(struct ctx *c, size_t index, uintptr_t from, void *to)
{
	void	*expect = (void *)from;
	size_t	 i;

	__atomic_compare_exchange_n(&c->hooks[index].orig, &expect, to, 0,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	for (i = 0; i < norigs; i++)
		if (origs[i].index == index &&
		    origs[i].orig == (void *)from)
			__atomic_store_n(&origs[i].orig, to, __ATOMIC_RELEASE);
	for (i = 0; i < nslots; i++)
		if (slots[i].index == index && slots[i].orig == (void *)from)
			slots[i].orig = to;
}

/*
 * Page protections.  /proc/self/maps is the truth (someone may have changed
 * a protection since the loader set it); read with open/read, since stdio
 * allocates.  Without /proc, the program headers say what the loader did.
 */
static int
parse_hex(const char **pp, const char *end, uintptr_t *out)
{
	const char	*p = *pp;
	uintptr_t	 v = 0;
	int		 d, digits = 0;

	for (; p < end; p++, digits++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v << 4 | (uintptr_t)d;
	}
	*pp = p;
	*out = v;
	return digits > 0 && digits <= 16 ? 0 : -1;
}

static int
maps_line(const struct ht_modset *set, const char *p, const char *end)
{
	struct range	*r;
	uintptr_t	 lo, hi;
	int		 prot = 0;

	if (parse_hex(&p, end, &lo) != 0 || p == end || *p++ != '-' ||
	    parse_hex(&p, end, &hi) != 0 || end - p < 5 || *p++ != ' ')
		return 0;	/* not a mapping line: nothing to learn */
	if (!set_overlaps(set, lo, hi))
		return 0;
	if (p[0] == 'r')
		prot |= PROT_READ;
	if (p[1] == 'w')
		prot |= PROT_WRITE;
	if (p[2] == 'x')
		prot |= PROT_EXEC;
	if (p[3] != 'p')
		prot = -1;
	if (nranges == capranges) {
		r = ht_mem_map(2 * capranges * sizeof(*r));
		if (r == NULL)
			return -1;
		memcpy(r, ranges, nranges * sizeof(*r));
		ht_mem_unmap(ranges, capranges * sizeof(*r));
		ranges = r;
		capranges *= 2;
	}
	r = &ranges[nranges++];
	r->start = lo;
	r->end = hi;
	r->prot = prot;
	return 0;
}

static int
read_maps(const struct ht_modset *set)
{
	const char	*p, *nl;
	size_t		 have = 0;
	ssize_t		 got;
	int		 fd, rc = -1;

	nranges = 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		got = read(fd, mapsbuf + have, MAPS_BUF - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto out_close;
		if (got == 0)
			break;
		have += (size_t)got;
		p = mapsbuf;
		while ((nl = memchr(p, '\n', have - (size_t)(p - mapsbuf))) !=
		    NULL) {
			if (maps_line(set, p, nl) != 0)
				goto out_close;
			p = nl + 1;
		}
		have -= (size_t)(p - mapsbuf);
		memmove(mapsbuf, p, have);
		if (have == MAPS_BUF)
			goto out_close;	/* a line longer than any can be */
	}
	rc = 0;
out_close:
	close(fd);
	return rc;
}

/* The loader's view: the PT_LOAD's flags, but read-only inside RELRO (glibc
 * protects [start, end) of PT_GNU_RELRO, both rounded down to pages). */
static int
phdr_prot(const struct ht_module *m, uintptr_t addr)
{
	const ElfW(Phdr)	*ph;
	uintptr_t		 a, lo, hi;
	int			 prot = -1;
	size_t			 i;

	for (i = 0; i < m->phnum; i++) {
		ph = &m->phdr[i];
		a = m->bias + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= (a & ~(pagesz - 1)) &&
		    addr < a + ph->p_memsz) {
			prot = 0;
			if (ph->p_flags & PF_R)
				prot |= PROT_READ;
			if (ph->p_flags & PF_W)
				prot |= PROT_WRITE;
			if (ph->p_flags & PF_X)
				prot |= PROT_EXEC;
		}
	}
	for (i = 0; prot >= 0 && i < m->phnum; i++) {
		ph = &m->phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		lo = (m->bias + ph->p_vaddr) & ~(pagesz - 1);
		hi = (m->bias + ph->p_vaddr + ph->p_memsz) & ~(pagesz - 1);
		if (addr >= lo && addr < hi)
			prot = PROT_READ;
	}
	return prot;
}

/* The protection of addr's page, or -1 if it must not be written. */
static int
page_prot(struct ctx *c, const struct ht_module *m, uintptr_t addr)
{
	size_t	lo = 0, hi;

	if (c->maps == 0)
		c->maps = read_maps(c->set) == 0 ? 1 : -1;
	if (c->maps < 0)
		return phdr_prot(m, addr);
	hi = nranges;
	while (lo < hi) {
		size_t	mid = lo + (hi - lo) / 2;

		if (addr < ranges[mid].start)
			hi = mid;
		else if (addr >= ranges[mid].end)
			lo = mid + 1;
		else
			return ranges[mid].prot;
	}
	return -1;
}

/*
 * The dynamic section.  glibc rewrites most d_ptr entries to run-time
 * addresses, but not all of them, and not in every object (the vdso, or
 * ports whose dynamic section is read-only): an address outside the module
 * is taken as a link-time address and moved by the bias.
 */
static uintptr_t
dyn_addr(const struct ht_module *m, uintptr_t v, size_t len)
{
	if (v == 0)
		return 0;
	if (!in_module(m, v))
		v += m->bias;
	if (!in_module(m, v) || len > m->end - v)
		return 0;
	return v;
}

static int
read_dynamic(const struct ht_module *m, struct dyninfo *d)
{
	const ElfW(Dyn)	*dyn;
	uintptr_t	 symtab = 0, strtab = 0;
	size_t		 i;

	memset(d, 0, sizeof(*d));
	d->pltrela = 1;
	d->relaent = sizeof(ElfW(Rela));
	d->relent = sizeof(ElfW(Rel));
	if (m->dynamic == NULL || !in_module(m, (uintptr_t)m->dynamic))
		return -1;
	for (dyn = m->dynamic, i = 0; dyn->d_tag != DT_NULL && i < DYN_MAX;
	    dyn++, i++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = dyn->d_un.d_ptr;
			break;
		case DT_STRTAB:
			strtab = dyn->d_un.d_ptr;
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = dyn->d_un.d_ptr;
			break;
		case DT_PLTRELSZ:
			d->pltrelsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			d->pltrela = dyn->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			d->rela = dyn->d_un.d_ptr;
			break;
		case DT_RELASZ:
			d->relasz = dyn->d_un.d_val;
			break;
		case DT_RELAENT:
			d->relaent = dyn->d_un.d_val;
			break;
		case DT_REL:
			d->rel = dyn->d_un.d_ptr;
			break;
		case DT_RELSZ:
			d->relsz = dyn->d_un.d_val;
			break;
		case DT_RELENT:
			d->relent = dyn->d_un.d_val;
			break;
		case DT_BIND_NOW:
			d->bind_now = 1;
			break;
		case DT_FLAGS:
			if (dyn->d_un.d_val & DF_BIND_NOW)
				d->bind_now = 1;
			break;
		case DT_FLAGS_1:
			if (dyn->d_un.d_val & DF_1_NOW)
				d->bind_now = 1;
			break;
		}
	}
	d->symtab = (const ElfW(Sym) *)dyn_addr(m, symtab, sizeof(ElfW(Sym)));
	d->strtab = (const char *)dyn_addr(m, strtab, d->strsz);
	if (d->symtab == NULL || d->strtab == NULL || d->strsz == 0)
		return -1;
	d->jmprel = dyn_addr(m, d->jmprel, d->pltrelsz);
	d->rela = dyn_addr(m, d->rela, d->relasz);
	d->rel = dyn_addr(m, d->rel, d->relsz);
	return 0;
}

/* The symbol of relocation symi, if it is in range. */
static const ElfW(Sym) *
rel_sym(const struct work *w, size_t symi)
{
	const ElfW(Sym)	*sym = w->d.symtab + symi;

	if (symi == 0 || symi > (w->m->end - (uintptr_t)w->d.symtab) /
	    sizeof(*sym) - 1)
		return NULL;
	return sym;
}

/* The hook named like sym, or -1. */
static int
hook_of(const struct ctx *c, const struct work *w, const ElfW(Sym) *sym)
{
	const char	*name;
	size_t		 i, off = sym->st_name;

	if (off >= w->d.strsz)
		return -1;
	name = w->d.strtab + off;
	for (i = 0; i < c->n; i++) {
		if (c->namelen[i] == 0 || name[0] != c->hooks[i].name[0])
			continue;
		/* Bounded by the string table: the name and its NUL. */
		if (c->namelen[i] < w->d.strsz - off &&
		    memcmp(name, c->hooks[i].name, c->namelen[i] + 1) == 0)
			return (int)i;
	}
	return -1;
}

static int
is_hook(const struct ctx *c, const void *p)
{
	size_t	i;

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
    const ElfW(Sym) *sym, int h)
{
	uintptr_t	 addr = w->m->bias + off;
	struct slot	*s;
	void		*cur;

	if (type != R_X86_64_JUMP_SLOT || sym->st_shndx != SHN_UNDEF ||
	    sym->st_value == 0 || !in_module(w->m, addr) ||
	    addr % sizeof(void *) != 0)
		return;
	c->canon[h] = w->m->bias + sym->st_value;
	c->canon_mod = w->m;
	cur = __atomic_load_n((void **)addr, __ATOMIC_RELAXED);
	if (is_hook(c, cur))
		c->canon_to[h] = (s = slot_find(addr)) != NULL ? s->orig : NULL;
	else if (!in_module(w->m, (uintptr_t)cur))
		c->canon_to[h] = cur;
}

static void
visit(struct ctx *c, struct work *w, int pass, uintptr_t off, unsigned type,
    size_t symi, int64_t addend)
{
	const struct ht_module	*m = w->m;
	const ElfW(Sym)		*sym;
	struct slot		*s;
	uintptr_t		 addr = m->bias + off;
	void			*cur, *orig;
	int			 h, prot;

	if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
	    type != R_X86_64_64)
		return;
	if (type == R_X86_64_64 && addend != 0)
		return;
	if ((sym = rel_sym(w, symi)) == NULL || (h = hook_of(c, w, sym)) < 0)
		return;
	if (pass == PASS_CANON) {
		visit_canon(c, w, off, type, sym, h);
		return;
	}
	if ((pass == PASS_LAZY) != (type == R_X86_64_JUMP_SLOT))
		return;
	if (!in_module(m, addr) || addr % sizeof(void *) != 0 ||
	    slot_find(addr) != NULL)
		return;
	prot = page_prot(c, m, addr);
	if (prot < 0 || !(prot & PROT_READ))
		return;
	cur = __atomic_load_n((void **)addr, __ATOMIC_RELAXED);
	if (cur == NULL || is_hook(c, cur))
		return;		/* an unresolved weak symbol, or ours */
	orig = cur;
	if (type == R_X86_64_JUMP_SLOT && w->lazy &&
	    in_module(m, (uintptr_t)cur) &&
	    !(sym->st_shndx != SHN_UNDEF && cur == (void *)(m->bias +
	    sym->st_value))) {
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
	if (pass == PASS_EAGER && w->eager[h] == NULL)
		w->eager[h] = orig;
	if (filter != NULL && !filter(m, (size_t)h, orig))
		return;
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

static void
walk_table(struct ctx *c, struct work *w, int pass, uintptr_t tab,
    size_t size, size_t ent, int rela)
{
	const ElfW(Rela)	*ra;
	const ElfW(Rel)		*r;
	uintptr_t		 p;

	if (tab == 0 || ent < (rela ? sizeof(*ra) : sizeof(*r)))
		return;
	for (p = tab; p + ent <= tab + size; p += ent) {
		if (rela) {
			ra = (const ElfW(Rela) *)p;
			visit(c, w, pass, ra->r_offset,
			    (unsigned)ELF64_R_TYPE(ra->r_info),
			    ELF64_R_SYM(ra->r_info), ra->r_addend);
		} else {
			/* REL keeps the addend in the slot; x86-64 objects
			 * do not use REL, so take it as 0. */
			r = (const ElfW(Rel) *)p;
			visit(c, w, pass, r->r_offset,
			    (unsigned)ELF64_R_TYPE(r->r_info),
			    ELF64_R_SYM(r->r_info), 0);
		}
	}
}

static void
walk(struct ctx *c, struct work *w, int pass)
{
	const struct dyninfo	*d = &w->d;

	walk_table(c, w, pass, d->rela, d->relasz, d->relaent, 1);
	walk_table(c, w, pass, d->rel, d->relsz, d->relent, 0);
	walk_table(c, w, pass, d->jmprel, d->pltrelsz,
	    d->pltrela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)), d->pltrela);
}

static void
sort_by_addr(struct slot *s, size_t n)
{
	size_t	i, j;

	/* Relocation tables are nearly sorted by offset already. */
	for (i = 1; i < n; i++) {
		struct slot	t = s[i];

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
	void	*page = (void *)(s[0].addr & ~(pagesz - 1));
	int	 prot = s[0].prot, done = 0;
	size_t	 i;

	if (!(prot & PROT_WRITE) &&
	    mprotect(page, pagesz, prot | PROT_WRITE) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		void	*expect = restore ? s[i].hook : s[i].saved;
		void	*want = restore ? s[i].saved : s[i].hook;

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
	const struct ht_module	*m = w->m;
	struct slot		*cand = &slots[nslots];
	size_t			 h, i, j, k, n = w->ncand;
	void			*o;

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
		if (origent_set(m, h, w->orig[h], o != w->orig[h]) != 0) {
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
			__atomic_or_fetch(&c->hooks[h].flags, HT_HOOK_MULTI,
			    __ATOMIC_RELEASE);
	}

	/* Write page by page; a table that lists a slot twice (DT_RELASZ
	 * covering DT_JMPREL) is written once. */
	sort_by_addr(cand, n);
	for (i = 1; i < n; i++)
		if (cand[i].addr == cand[i - 1].addr)
			cand[i].state = DROP;
	for (i = 0; i < n; i = j) {
		uintptr_t	page = cand[i].addr & ~(pagesz - 1);

		for (j = i; j < n && (cand[j].addr & ~(pagesz - 1)) == page;
		    j++)
			;
		write_page(&cand[i], j - i, 0);
	}

	/* Move what was written into the sorted table. */
	for (i = 0; i < n; i++) {
		struct slot	t = cand[i];

		if (t.state != DONE) {
			if (t.state == 0)
				w->pm->pending = 1;	/* raced: next time */
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
	struct pmod	*pm;
	size_t		 i;

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

static void
patch_module(struct ctx *c, const struct ht_module *m)
{
	struct work	w;
	int		fresh;

	if (m->flags & (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO))
		return;
	memset(&w, 0, sizeof(w));
	w.m = m;
	if ((w.pm = pmod_get(m, &fresh)) == NULL) {
		__atomic_add_fetch(&overflows, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!fresh && !w.pm->pending)
		return;
	w.pm->pending = 0;
	if (read_dynamic(m, &w.d) != 0)
		return;
	w.lazy = !w.d.bind_now && !c->env_now;
	/* Eagerly bound slots first: they tell what a lazy slot of the
	 * same name would have been bound to. */
	walk(c, &w, PASS_EAGER);
	walk(c, &w, PASS_LAZY);
	finish_module(c, &w);
}

static void
canon_scan(struct ctx *c)
{
	struct work	w;
	size_t		i, h;

	for (i = 0; i < c->set->n; i++) {
		if (!(c->set->mods[i].flags & HT_MOD_MAIN))
			continue;
		memset(&w, 0, sizeof(w));
		w.m = &c->set->mods[i];
		if (read_dynamic(w.m, &w.d) == 0)
			walk(c, &w, PASS_CANON);
	}
	for (h = 0; h < c->n; h++)
		if (c->canon[h] != 0 && c->canon_to[h] != NULL)
			retarget(c, h, c->canon[h], c->canon_to[h]);
}

void
ht_got_resolve(struct ht_hook_def *hooks, size_t n)
{
	size_t	i;
	int	missing = 0;
	void	*p;

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
ht_got_patch(const struct ht_modset *set, struct ht_hook_def *hooks,
    size_t n)
{
	struct ctx	 c;
	const char	*e;
	size_t		 i;

	if (n > HT_GOT_MAX_HOOKS) {
		errno = EINVAL;
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.set = set;
	c.hooks = hooks;
	c.n = n;
	for (i = 0; i < n; i++) {
		if (hooks[i].name == NULL || hooks[i].hook == NULL)
			continue;
		c.namelen[i] = strlen(hooks[i].name);
		c.dl[i] = __atomic_load_n(&hooks[i].dl, __ATOMIC_ACQUIRE);
		if (c.dl[i] != NULL && is_hook(&c, c.dl[i]))
			c.dl[i] = NULL;
	}
	e = getenv("LD_BIND_NOW");
	c.env_now = e != NULL && *e != '\0';

	if (got_enter() != 0)
		return -1;
	if (tables_init() != 0) {
		got_leave();
		errno = ENOMEM;
		return -1;
	}
	forget_gone(set);
	canon_scan(&c);
	/* The executable and libc first: hooks[i].orig comes from the first
	 * module patched, and theirs is the one most modules share. */
	for (i = 0; i < set->n; i++)
		if (set->mods[i].flags & HT_MOD_MAIN)
			patch_module(&c, &set->mods[i]);
	for (i = 0; i < set->n; i++)
		if ((set->mods[i].flags & (HT_MOD_LIBC | HT_MOD_MAIN)) ==
		    HT_MOD_LIBC)
			patch_module(&c, &set->mods[i]);
	for (i = 0; i < set->n; i++)
		if (!(set->mods[i].flags & (HT_MOD_LIBC | HT_MOD_MAIN)))
			patch_module(&c, &set->mods[i]);
	got_leave();
	return c.patched;
}

int
ht_got_restore_all(void)
{
	struct ht_modset	set;
	size_t			i, j;
	int			have, restored = 0;

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
			uintptr_t	page = slots[i].addr & ~(pagesz - 1);

			for (j = i; j < nslots && (slots[j].addr &
			    ~(pagesz - 1)) == page && slots[j].prot ==
			    slots[i].prot; j++)
				slots[j].state = 0;
			restored += write_page(&slots[i], j - i, 1);
		}
		set_nslots(0);
		nmods = 0;
	}
	got_leave();
	if (have)
		ht_modules_release(&set);
	return restored;
}

void *
ht_got_orig_for_caller(const struct ht_hook_def *hooks, size_t index,
    uintptr_t caller_pc)
{
	const struct origent	*tab, *e;
	uintptr_t		 lo, hi;
	unsigned		 s, x;
	size_t			 i, n;
	void			*o;

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
			continue;	/* being written: not for a caller */
		if (x == index && o != NULL && caller_pc >= lo &&
		    caller_pc < hi)
			return o;
	}
	return __atomic_load_n(&hooks[index].orig, __ATOMIC_ACQUIRE);
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
ht_got_set_filter(int (*accept)(const struct ht_module *, size_t, void *))
{
	__atomic_store_n(&filter, accept, __ATOMIC_RELEASE);
}

size_t
ht_got_slots(struct ht_got_slot *out, size_t max)
{
	size_t	i, n;

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
