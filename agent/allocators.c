/*
 * The modules that define allocators the hooks do not reach
 * (allocators.h).  Every read of a module's memory is checked to lie in
 * one of its readable PT_LOAD segments first: the dynamic section of a
 * module is the loader's data, but its hash tables are the file's, and a
 * corrupt or hostile file must cost a missing warning, never a fault.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "allocators.h"
#include "allocnames.h"
#include "mem.h"
#include "modules.h"

#define DYN_MAX	    4096  /* a sane bound on dynamic entries */
#define CHAIN_MAX   65536 /* symbols a hash chain may take */
#define SEEN_SLOTS  4096  /* modules looked at, open addressing */
#define SEEN_LIMIT  (SEEN_SLOTS / 4 * 3)
#define NOT_MODULES (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO | HT_MOD_LIBC)

static struct ht_allocator tab[HT_ALLOCATORS_MAX];
static size_t ntab;	/* published with a release store */
static size_t overflow; /* modules that did not fit */
/* The modules looked at, by key (path and start); 0 is an empty slot. */
static uint64_t seen[SEEN_SLOTS];
static size_t nseen;
static int noted;

/* Where a module's dynamic symbols are, read from its dynamic section. */
struct dynsyms {
	uintptr_t sym;
	uintptr_t str;
	size_t strsz;
	uintptr_t gnu_hash;
	uintptr_t sysv_hash;
};

/* Does [a, a + n) lie in one readable PT_LOAD segment of m? */
static int
readable(const struct ht_module *m, uintptr_t a, size_t n)
{
	uintptr_t lo, hi;
	uint16_t i;

	if (m->phdr == NULL)
		return 0;
	for (i = 0; i < m->phnum; i++) {
		const ElfW(Phdr) *ph = &m->phdr[i];

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_R) == 0)
			continue;
		lo = m->bias + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		if (a >= lo && a < hi && n <= hi - a)
			return 1;
	}
	return 0;
}

/* An address of the dynamic section: glibc rewrites most to run-time
 * addresses, not all, and not in every object (reloc.c says why). */
static uintptr_t
dyn_addr(const struct ht_module *m, uintptr_t v)
{
	if (v == 0)
		return 0;
	if (!ht_modules_holds(m, v))
		v += m->bias;
	return ht_modules_holds(m, v) ? v : 0;
}

static int
read_dynsyms(const struct ht_module *m, struct dynsyms *d)
{
	const ElfW(Dyn) * dyn;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (m->dynamic == NULL)
		return -1;
	for (dyn = m->dynamic, i = 0; i < DYN_MAX; dyn++, i++) {
		if (!readable(m, (uintptr_t)dyn, sizeof(*dyn)))
			return -1;
		if (dyn->d_tag == DT_NULL)
			break;
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->sym = dyn_addr(m, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->str = dyn_addr(m, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_GNU_HASH:
			d->gnu_hash = dyn_addr(m, dyn->d_un.d_ptr);
			break;
		case DT_HASH:
			d->sysv_hash = dyn_addr(m, dyn->d_un.d_ptr);
			break;
		}
	}
	if (d->sym == 0 || d->str == 0 || d->strsz == 0 ||
	    !readable(m, d->str, d->strsz) ||
	    (d->gnu_hash == 0 && d->sysv_hash == 0))
		return -1;
	return 0;
}

/* Is symbol i named name (len bytes) and defined here, as a function?  An
 * undefined entry may still have a value (a non-PIE executable's canonical
 * PLT entry for a function whose address it takes): the section says. */
static int
defines(const struct ht_module *m, const struct dynsyms *d, size_t i,
    const char *name, size_t len)
{
	const ElfW(Sym) *s = (const ElfW(Sym) *)d->sym + i;
	unsigned type;

	if (i > SIZE_MAX / sizeof(*s) || !readable(m, (uintptr_t)s, sizeof(*s)))
		return 0;
	if (s->st_name >= d->strsz || d->strsz - s->st_name < len + 1 ||
	    memcmp((const char *)d->str + s->st_name, name, len + 1) != 0)
		return 0;
	type = ELF64_ST_TYPE(s->st_info);
	return s->st_shndx != SHN_UNDEF && s->st_value != 0 &&
	    (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	    ELF64_ST_BIND(s->st_info) != STB_LOCAL;
}

static int
gnu_lookup(const struct ht_module *m, const struct dynsyms *d, const char *name,
    size_t len)
{
	const uint32_t *h = (const uint32_t *)d->gnu_hash, *buckets, *chain;
	const ElfW(Addr) * bloom;
	uint32_t nb, symoff, bsz, shift, hv = 5381, i, c;
	ElfW(Addr) w, mask;
	size_t k;

	if (!readable(m, (uintptr_t)h, 16))
		return 0;
	nb = h[0];
	symoff = h[1];
	bsz = h[2];
	shift = h[3];
	if (nb == 0 || bsz == 0 || nb > (1u << 24) || bsz > (1u << 24))
		return 0;
	bloom = (const ElfW(Addr) *)(h + 4);
	buckets = (const uint32_t *)(bloom + bsz);
	chain = buckets + nb;
	if (!readable(m, (uintptr_t)bloom, (size_t)bsz * sizeof(*bloom)) ||
	    !readable(m, (uintptr_t)buckets, (size_t)nb * 4))
		return 0;
	for (k = 0; k < len; k++)
		hv = hv * 33 + (unsigned char)name[k];
	w = bloom[(hv / (8 * sizeof(w))) % bsz];
	mask = (ElfW(Addr))1 << (hv % (8 * sizeof(w))) |
	    (ElfW(Addr))1 << ((hv >> (shift % 32)) % (8 * sizeof(w)));
	if ((w & mask) != mask)
		return 0;
	i = buckets[hv % nb];
	if (i < symoff)
		return 0;
	/* A symbol may have several versions: any defined one counts. */
	for (k = 0; k < CHAIN_MAX && i != UINT32_MAX; k++, i++) {
		if (!readable(m, (uintptr_t)(chain + (i - symoff)), 4))
			return 0;
		c = chain[i - symoff];
		if ((c | 1) == (hv | 1) && defines(m, d, i, name, len))
			return 1;
		if (c & 1)
			break;
	}
	return 0;
}

static int
sysv_lookup(const struct ht_module *m, const struct dynsyms *d,
    const char *name, size_t len)
{
	const uint32_t *h = (const uint32_t *)d->sysv_hash;
	uint32_t nbucket, nchain, hv = 0, g, i;
	size_t k;

	if (!readable(m, (uintptr_t)h, 8))
		return 0;
	nbucket = h[0];
	nchain = h[1];
	if (nbucket == 0 || nbucket > (1u << 24) || nchain > (1u << 24) ||
	    !readable(m, (uintptr_t)h, 8 + 4 * ((size_t)nbucket + nchain)))
		return 0;
	for (k = 0; k < len; k++) {
		hv = (hv << 4) + (unsigned char)name[k];
		g = hv & 0xf0000000u;
		hv ^= g >> 24;
		hv &= ~g;
	}
	i = h[2 + hv % nbucket];
	for (k = 0; i != 0 && i < nchain && k < nchain; k++) {
		if (defines(m, d, i, name, len))
			return 1;
		i = h[2 + nbucket + i];
	}
	return 0;
}

uint64_t
ht_allocators_names_of(const struct ht_module *m)
{
	struct dynsyms d;
	uint64_t names = 0;
	size_t i, len;
	int found;

	if ((m->flags & NOT_MODULES) != 0 || read_dynsyms(m, &d) != 0)
		return 0;
	for (i = 0; i < ht_nallocnames && i < 64; i++) {
		len = strlen(ht_allocnames[i].name);
		found = d.gnu_hash != 0 ?
		    gnu_lookup(m, &d, ht_allocnames[i].name, len) :
		    sysv_lookup(m, &d, ht_allocnames[i].name, len);
		if (found)
			names |= (uint64_t)1 << i;
	}
	/* A module that replaces the allocator defines malloc.  One that
	 * only has some of the others (libbsd's reallocarray, for systems
	 * without it) wraps the allocator, through calls that are seen. */
	if ((names & 1) == 0)
		names &= ~ht_allocnames_malloc_mask();
	return names;
}

/* The module's key in seen: its path and where it was loaded (a path
 * loaded again elsewhere is another module).  Never 0. */
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

/* Remember m as looked at.  Returns 1 if it is new (look at it now), 0 if
 * it was looked at before or the set is full. */
static int
first_sight(const struct ht_module *m)
{
	uint64_t k = key_of(m);
	size_t i = (size_t)(k % SEEN_SLOTS);

	while (seen[i] != 0) {
		if (seen[i] == k)
			return 0;
		i = (i + 1) % SEEN_SLOTS;
	}
	/* Full: the modules beyond go unexamined rather than examined at
	 * every rescan. */
	if (nseen >= SEEN_LIMIT)
		return 0;
	seen[i] = k;
	nseen++;
	return 1;
}

static void
add(const struct ht_module *m, uint64_t names)
{
	size_t n = ntab, i, len;

	for (i = 0; i < n; i++)
		if (strcmp(tab[i].path, m->path) == 0)
			return; /* loaded again: the same file */
	if (n >= HT_ALLOCATORS_MAX) {
		__atomic_add_fetch(&overflow, 1, __ATOMIC_RELAXED);
		return;
	}
	tab[n].names = names;
	len = strnlen(m->path, sizeof(tab[n].path) - 1);
	memcpy(tab[n].path, m->path, len);
	tab[n].path[len] = '\0';
	__atomic_store_n(&ntab, n + 1, __ATOMIC_RELEASE);
}

void
ht_allocators_scan(const struct ht_modset *set)
{
	uint64_t names;
	size_t i;

	if (!noted) {
		ht_mem_note_static(sizeof(tab) + sizeof(seen));
		noted = 1;
	}
	for (i = 0; i < set->n; i++) {
		const struct ht_module *m = &set->mods[i];

		if ((m->flags & NOT_MODULES) != 0 || !first_sight(m))
			continue;
		if ((names = ht_allocators_names_of(m)) != 0)
			add(m, names);
	}
}

size_t
ht_allocators_count(void)
{
	return __atomic_load_n(&ntab, __ATOMIC_ACQUIRE);
}

const struct ht_allocator *
ht_allocators_get(size_t i)
{
	return &tab[i];
}

size_t
ht_allocators_overflow(void)
{
	return __atomic_load_n(&overflow, __ATOMIC_RELAXED);
}
