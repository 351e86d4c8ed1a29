/*
 * The modules that define allocators the hooks do not reach
 * (allocators.h).  The symbols are read through reloc.h, which checks
 * every read to lie inside the module and bounds every chain: a corrupt
 * or hostile file must cost a missing warning, never a fault.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "allocators.h"
#include "allocnames.h"
#include "mem.h"
#include "modules.h"
#include "reloc.h"

#define SEEN_SLOTS  4096 /* modules looked at, open addressing */
#define SEEN_LIMIT  (SEEN_SLOTS / 4 * 3)
#define NOT_MODULES (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO | HT_MOD_LIBC)

static struct ht_allocator tab[HT_ALLOCATORS_MAX];
static size_t ntab;	/* published with a release store */
static size_t overflow; /* modules that did not fit */
/* The modules looked at, by key (path and start); 0 is an empty slot. */
static uint64_t seen[SEEN_SLOTS];
static size_t nseen;
static int noted;

/* Is s, defined in its module (ht_reloc_lookup), a function the module
 * gives others?  An undefined entry may still have a value (a non-PIE
 * executable's canonical PLT entry for a function whose address it
 * takes): the lookup has left those out already. */
static int
is_function(const ElfW(Sym) * s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return s->st_value != 0 &&
	    (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	    ELF64_ST_BIND(s->st_info) != STB_LOCAL;
}

uint64_t
ht_allocators_names_of(const struct ht_module *m)
{
	const ElfW(Sym) * s;
	struct ht_reloc d;
	uint64_t names = 0;
	size_t i;

	if ((m->flags & NOT_MODULES) != 0 || ht_reloc_read(m, &d) != 0)
		return 0;
	for (i = 0; i < ht_nallocnames && i < 64; i++)
		if ((s = ht_reloc_lookup(m, &d, ht_allocnames[i].name)) !=
			NULL &&
		    is_function(s))
			names |= (uint64_t)1 << i;
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
		names = ht_allocators_names_of(m);
		/* The allocators' own entry points are hooked where another
		 * module calls them through a slot (coverage.h lists which):
		 * unseen, as a whole, only in the executable, whose calls
		 * bind inside it. */
		if (!(m->flags & HT_MOD_MAIN))
			names &= ht_allocnames_malloc_mask();
		if (names != 0)
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
