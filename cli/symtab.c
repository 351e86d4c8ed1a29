/*
 * The ELF symbols of a module, indexed (see symtab.h).
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

/* An ELF symbol without a size, and libdwfl's answer for the addresses
 * after it in its section. */
struct label {
	uint64_t addr;
	uint64_t secend;  /* end of its section, or 0: unknown */
	const char *name; /* libdwfl's answer, if known */
	int known;
};

/* An ELF symbol with a size, for symbol lookups without DWARF. */
struct elfsym {
	uint64_t lo, hi;  /* [lo, hi): its addresses (Dwfl's) */
	uint64_t maxhi;	  /* greatest hi up to this one */
	const char *name; /* owned by libelf */
	size_t len;	  /* of the name without its "@VERSION" */
	int local;	  /* STB_LOCAL */
	int in_main;	  /* from the module's file, not its debug file */
};

struct ht_symtab {
	Dwfl_Module *dm;
	/* The sized symbols sorted by address, built on the first lookup
	 * that needs one: dwfl_module_addrinfo reads the whole table on
	 * every call, far too slow for tens of thousands of addresses. */
	struct elfsym *syms;
	size_t nsyms;
	struct elfsym **byname; /* the same, by name */
	int built;		/* 2: no memory for it */
	/* Symbols without a size (assembly labels), sorted: where one may
	 * be the answer, libdwfl's own rules for them decide (the slow way),
	 * once per label and section (see ht_symtab_name). */
	struct label *labels;
	size_t nlabels;
};

struct ht_symtab *
ht_symtab_new(Dwfl_Module *dm)
{
	struct ht_symtab *m;

	if ((m = calloc(1, sizeof(*m))) != NULL)
		m->dm = dm;
	return m;
}

void
ht_symtab_free(struct ht_symtab *m)
{
	if (m == NULL)
		return;
	free(m->syms);
	free(m->byname);
	free(m->labels);
	free(m);
}

static int
label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Append x to the array *v of *n (capacity *cap) elements of size sz. */
static int
grow_push(void **v, size_t *n, size_t *cap, size_t sz, const void *x)
{
	void *nv;

	if (*n == *cap) {
		if ((nv = reallocarray(*v, *cap ? *cap * 2 : 256, sz)) == NULL)
			return -1;
		*v = nv;
		*cap = *cap ? *cap * 2 : 256;
	}
	memcpy((char *)*v + *n * sz, x, sz);
	(*n)++;
	return 0;
}

/*
 * Of the names at one address (aliases), the one a report shows first: a
 * module's public name before its internal ones.  Global (or weak) before
 * local, so "__libc_start_main" before glibc's local
 * "__libc_start_main_impl"; then one without a leading underscore, so the
 * weak "strdup" before the global "__strdup"; then the shortest; then the
 * first in byte order, so that the answer never depends on the table's
 * order.
 */
static int
sym_better(const struct elfsym *x, const struct elfsym *y)
{
	int c;

	if (x->local != y->local)
		return x->local - y->local;
	if ((x->name[0] == '_') != (y->name[0] == '_'))
		return x->name[0] == '_' ? 1 : -1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((c = strncmp(x->name, y->name, x->len)) != 0)
		return c;
	return strcmp(x->name, y->name);
}

/* By name (without the version), then address. */
static int
byname_cmp(const void *a, const void *b)
{
	const struct elfsym *x = *(const struct elfsym *const *)a;
	const struct elfsym *y = *(const struct elfsym *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if ((c = memcmp(x->name, y->name, n)) != 0)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

static int
elfsym_cmp(const void *a, const void *b)
{
	const struct elfsym *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return sym_better(x, y); /* preferred first */
}

/*
 * Index m's symbol table (the symbols dwfl_module_addrinfo considers).
 * Out of memory, there is no index (built 2): every lookup then takes the
 * slow way.
 */
static void
syms_build(struct ht_symtab *m)
{
	struct elfsym e;
	struct label l;
	const char *name;
	GElf_Addr addr, bias, mbias;
	GElf_Shdr shdr;
	GElf_Word shndx;
	GElf_Sym s;
	Elf_Scn *scn;
	Elf *elf, *main;
	size_t cap = 0, lcap = 0, i;
	int nsym, k, type;

	m->built = 1;
	main = dwfl_module_getelf(m->dm, &mbias);
	nsym = dwfl_module_getsymtab(m->dm);
	for (k = 1; k < nsym; k++) {
		name = dwfl_module_getsym_info(m->dm, k, &s, &addr, &shndx,
		    &elf, &bias);
		type = GELF_ST_TYPE(s.st_info);
		if (name == NULL || name[0] == '\0' || shndx == SHN_UNDEF ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		if (s.st_size == 0) {
			memset(&l, 0, sizeof(l));
			l.addr = addr;
			if (shndx < SHN_LORESERVE && elf != NULL &&
			    (scn = elf_getscn(elf, shndx)) != NULL &&
			    gelf_getshdr(scn, &shdr) != NULL &&
			    (shdr.sh_flags & SHF_ALLOC))
				l.secend = shdr.sh_addr + bias + shdr.sh_size;
			if (grow_push((void **)&m->labels, &m->nlabels, &lcap,
				sizeof(l), &l) != 0)
				goto nomem;
			continue;
		}
		e.lo = addr;
		e.hi = addr + s.st_size;
		e.name = name;
		/* A shared library's .symtab spells versioned names
		 * "name@@VERSION"; .dynsym holds the version apart. */
		e.len = strcspn(name, "@");
		e.local = GELF_ST_BIND(s.st_info) == STB_LOCAL;
		e.in_main = elf == main;
		if (grow_push((void **)&m->syms, &m->nsyms, &cap, sizeof(e),
			&e) != 0)
			goto nomem;
	}
	qsort(m->syms, m->nsyms, sizeof(*m->syms), elfsym_cmp);
	qsort(m->labels, m->nlabels, sizeof(*m->labels), label_cmp);
	for (i = 0; i < m->nsyms; i++)
		m->syms[i].maxhi = i > 0 &&
			m->syms[i - 1].maxhi > m->syms[i].hi ?
		    m->syms[i - 1].maxhi :
		    m->syms[i].hi;
	if (m->nsyms > 0 &&
	    (m->byname = reallocarray(NULL, m->nsyms, sizeof(*m->byname))) ==
		NULL)
		goto nomem;
	for (i = 0; i < m->nsyms; i++)
		m->byname[i] = &m->syms[i];
	qsort(m->byname, m->nsyms, sizeof(*m->byname), byname_cmp);
	return;
nomem:
	free(m->syms);
	free(m->labels);
	free(m->byname);
	m->syms = NULL;
	m->nsyms = 0;
	m->labels = NULL;
	m->nlabels = 0;
	m->byname = NULL;
	m->built = 2;
}

/*
 * The sized ELF symbol that holds pc: of those that contain it, the one
 * that starts last, the preferred (sym_better) among aliases.  Sets
 * *covered to the end of the sized symbols up to pc.  Needs the index.
 */
static const struct elfsym *
sym_at(struct ht_symtab *m, uint64_t pc, uint64_t *covered)
{
	size_t lo = 0, hi, mid;

	*covered = 0;
	if (!m->built)
		syms_build(m);
	if (m->built == 2)
		return NULL;
	/* The first symbol that starts above pc ... */
	hi = m->nsyms;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->syms[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0)
		*covered = m->syms[lo - 1].maxhi;
	/* ... then back while one before could still reach pc.  Sorted
	 * with the preferred first at one address, the first that holds
	 * pc at the greatest start is the one. */
	while (lo > 0 && m->syms[lo - 1].maxhi > pc) {
		lo--;
		if (pc < m->syms[lo].hi) {
			while (lo > 0 && m->syms[lo - 1].lo == m->syms[lo].lo)
				lo--;
			while (pc >= m->syms[lo].hi)
				lo++;
			return &m->syms[lo];
		}
	}
	return NULL;
}

/*
 * When no sized symbol holds pc and an assembly label below pc is not
 * covered by a sized symbol, libdwfl decides.  Its answer then depends only
 * on that label (the last at or below pc) as long as pc lies in the
 * label's section: it is asked once per label (modules of hand-written
 * stubs have thousands).
 */
const char *
ht_symtab_name(struct ht_symtab *m, uint64_t pc)
{
	const struct elfsym *e;
	GElf_Off off;
	GElf_Sym es;
	struct label *l;
	uint64_t covered;
	size_t lo = 0, hi, mid;

	if ((e = sym_at(m, pc, &covered)) != NULL)
		return e->name;
	if (m->built == 2)
		return dwfl_module_addrinfo(m->dm, pc, &off, &es, NULL, NULL,
		    NULL);
	/* The last label at or below pc. */
	hi = m->nlabels;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->labels[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || (l = &m->labels[lo - 1])->addr < covered)
		return NULL;
	if (pc >= l->secend)
		return dwfl_module_addrinfo(m->dm, pc, &off, &es, NULL, NULL,
		    NULL);
	if (!l->known) {
		l->name = dwfl_module_addrinfo(m->dm, pc, &off, &es, NULL, NULL,
		    NULL);
		l->known = 1;
	}
	return l->name;
}

const char *
ht_symtab_outer(struct ht_symtab *m, uint64_t pc, const char *dwname)
{
	const struct elfsym *e;
	uint64_t covered;

	if ((e = sym_at(m, pc, &covered)) != NULL && (e->in_main || !e->local))
		return e->name;
	return ht_symtab_alias(m, dwname);
}

const char *
ht_symtab_alias(struct ht_symtab *m, const char *name)
{
	struct elfsym key, *kp = &key, **at;
	size_t lo, hi, mid, i;

	if (name == NULL || name[0] == '\0')
		return name;
	if (!m->built)
		syms_build(m);
	if (m->built == 2 || m->nsyms == 0)
		return name;
	memset(&key, 0, sizeof(key));
	key.name = name;
	key.len = strlen(name);
	/* The first of that name ... */
	lo = 0;
	hi = m->nsyms;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (byname_cmp(&m->byname[mid], &kp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = &m->byname[lo];
	if (lo == m->nsyms || (*at)->len != key.len ||
	    memcmp((*at)->name, name, key.len) != 0)
		return name;
	/* ... at one address only: two static functions of one name in two
	 * files are not aliases of each other. */
	for (i = lo + 1; i < m->nsyms && m->byname[i]->len == key.len &&
	     memcmp(m->byname[i]->name, name, key.len) == 0;
	     i++)
		if (m->byname[i]->lo != (*at)->lo)
			return name;
	/* The preferred of the names at that address comes first. */
	for (i = (size_t)(*at - m->syms);
	     i > 0 && m->syms[i - 1].lo == (*at)->lo; i--)
		;
	return m->syms[i].name;
}
