/*
 * The modules of the process and the allocator functions they define, read
 * from their ELF files as the process maps them (modfile.h); the agent's
 * block by its exported name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "inline-int.h"
#include "modfile.h"
#include "nameidx.h"
#include "proc.h"
#include "staging.h"

#define BLOCK_SYMBOL "heaptool_inline"

/* The file-backed modules of the process, by the mapping of offset 0. */
struct scan {
	struct inl_mod *mods;
	size_t n, max;
	char exe[PATH_MAX];
};

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

static int
on_map(void *arg, const struct ht_proc_map *m)
{
	struct scan *s = arg;
	struct inl_mod *last = s->n > 0 ? &s->mods[s->n - 1] : NULL;

	if (m->inode == 0 || m->path[0] != '/')
		return 0;
	if (last != NULL && strcmp(last->path, m->path) == 0) {
		if (m->hi > last->hi)
			last->hi = m->hi;
		return 0;
	}
	if (m->offset != 0 || s->n == s->max ||
	    strlen(m->path) >= sizeof(last->path))
		return 0;
	last = &s->mods[s->n++];
	memset(last, 0, sizeof(*last));
	snprintf(last->path, sizeof(last->path), "%s", m->path);
	last->lo = m->lo;
	last->hi = m->hi;
	last->main = strcmp(m->path, s->exe) == 0;
	return 0;
}

static int
scan_modules(pid_t pid, struct inl_mod *mods, size_t max, size_t *n)
{
	struct scan s = { mods, 0, max, "" };
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
	if ((k = readlink(link, s.exe, sizeof(s.exe) - 1)) > 0)
		s.exe[k] = '\0';
	if (ht_proc_maps(pid, on_map, &s) != 0)
		return -1;
	*n = s.n;
	return 0;
}

/* Open m's file as pid maps it, with its load bias. */
static int
open_mod(pid_t pid, const struct inl_mod *m, struct ht_modfile *mf,
    uint64_t *bias)
{
	struct ht_modfile_req req;
	char root[64], rootlink[PATH_MAX];
	const char *in = "";
	GElf_Phdr ph;
	GElf_Ehdr eh;
	size_t i, n;

	/* libelf does nothing before it is told its version (inject.c
	 * tells it too, status and detach do not come that way). */
	(void)elf_version(EV_CURRENT);

	snprintf(root, sizeof(root), "/proc/%ld/root", (long)pid);
	if (ht_proc_root_link(pid, rootlink, sizeof(rootlink)) == 0 &&
	    (in = ht_proc_in_root(rootlink, m->path)) == NULL)
		in = "";
	memset(&req, 0, sizeof(req));
	req.path = in;
	req.root = root;
	req.pid = pid;
	req.lo = m->lo;
	req.hi = m->hi;
	if (ht_modfile_open(&req, mf) != 0)
		return -1;
	if (gelf_getehdr(mf->elf, &eh) == NULL ||
	    elf_getphdrnum(mf->elf, &n) != 0)
		goto bad;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(mf->elf, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*bias = m->lo - (ph.p_vaddr & ~(uint64_t)0xfff);
			return 0;
		}
bad:
	ht_modfile_close(mf);
	return -1;
}

/* Call fn for each defined function symbol of elf's .symtab and .dynsym
 * (dyn says which). */
static void
each_func(Elf *elf, void (*fn)(void *, const char *, const GElf_Sym *, int dyn),
    void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	const char *name;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize == 0 || (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < n; i++) {
			if (gelf_getsym(d, (int)i, &sym) == NULL ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)) ==
				NULL ||
			    name[0] == '\0')
				continue;
			fn(arg, name, &sym, sh.sh_type == SHT_DYNSYM);
		}
	}
}

struct collect {
	char *const *names;
	size_t nnames;
	struct ht_nameidx index; /* of names, when they fit */
	struct inl_mod *mod;
	uint64_t bias;
	struct inl_fn *fns;
	size_t n, max, first;
	int overflow;
};

static struct inl_fn *
fn_at(struct collect *c, uint64_t addr)
{
	size_t i;

	for (i = c->first; i < c->n; i++)
		if (c->fns[i].addr == addr)
			return &c->fns[i];
	return NULL;
}

/* Is the function named name one of the C++ operators? */
static int
cxx_named(const char *name)
{
	int i = ht_allocfns_find(name);

	return i >= 0 && strcmp(ht_allocfns[i].family, "c++") == 0;
}

/* A free of one pointer, with or without more arguments (P1, P)? */
static int
free_sig(int i)
{
	return ht_allocfns[i].kind == HT_KIND_FREE &&
	    (ht_allocfns[i].sig == HT_SIG_P1 || ht_allocfns[i].sig == HT_SIG_P);
}

/*
 * name (entry i of the table) is at f's address too.  One function, one
 * hook: if both names have the same kind and signature (free and operator
 * delete, operator new and new[], memalign and aligned_alloc), either
 * hook counts its calls right, so f keeps one (the C name rather than a
 * C++ operator's) and the other is its alias, hooked with it; so do frees
 * of one pointer whatever else they take (see below).  Otherwise the
 * function is refused.
 */
static void
alias(struct inl_fn *f, const char *name, int i)
{
	int a = ht_allocfns_find(f->name), b = ht_allocfns_find(name);
	size_t k;

	for (k = 0; k < f->naliases; k++)
		if (f->aliases[k] == i)
			return;
	if (a < 0 || b < 0 || ht_allocfns[a].kind != ht_allocfns[b].kind ||
	    (ht_allocfns[a].sig != ht_allocfns[b].sig &&
		!(free_sig(a) && free_sig(b))) ||
	    f->naliases == INL_MAX_ALIASES) {
		if (f->why[0] == '\0')
			snprintf(f->why, sizeof(f->why),
			    "%s is at the same address, and is not the same "
			    "kind of function",
			    name);
		return;
	}
	/* One code for every name: a free that takes more arguments
	 * (operator delete's size, its nothrow tag) hands them all on to it,
	 * so its hook serves the plain free too, not the other way round. */
	if (ht_allocfns[b].sig == HT_SIG_P && ht_allocfns[a].sig == HT_SIG_P1 ?
		1 :
		ht_allocfns[a].sig == HT_SIG_P &&
		    ht_allocfns[b].sig == HT_SIG_P1 ?
		0 :
		cxx_named(f->name) && !cxx_named(name)) {
		f->aliases[f->naliases++] = f->index;
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->index = i;
	} else
		f->aliases[f->naliases++] = i;
}

static void
on_func(void *arg, const char *name, const GElf_Sym *sym, int dyn)
{
	struct collect *c = arg;
	uint64_t addr = c->bias + sym->st_value;
	struct inl_fn *f;
	size_t i;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return;
	if (c->nnames <= HT_NAMEIDX_MAX) {
		int k = ht_nameidx_find(&c->index,
		    (const char *const *)c->names, name);

		if (k < 0)
			return;
		i = (size_t)k;
	} else {
		for (i = 0; i < c->nnames; i++)
			if (c->names[i] != NULL &&
			    strcmp(c->names[i], name) == 0)
				break;
		if (i == c->nnames)
			return;
	}
	if ((f = fn_at(c, addr)) == NULL) {
		if (c->n == c->max) {
			c->overflow = 1;
			return;
		}
		f = &c->fns[c->n++];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->index = (int)i;
		f->mod = c->mod;
		f->addr = addr;
		f->size = sym->st_size;
		f->rec = -1;
	} else if (strcmp(f->name, name) != 0)
		alias(f, name, (int)i);
	if (dyn && GELF_ST_BIND(sym->st_info) != STB_LOCAL &&
	    GELF_ST_VISIBILITY(sym->st_other) == STV_DEFAULT)
		f->exported = 1;
}

/* The parts of the candidates (malloc.cold, malloc.part.0): local
 * functions named after them and a dot. */
static void
on_part(void *arg, const char *name, const GElf_Sym *sym, int dyn)
{
	struct collect *c = arg;
	size_t i, k;
	struct inl_fn *f;

	(void)dyn;
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || strchr(name, '.') == NULL)
		return;
	for (i = c->first; i < c->n; i++) {
		f = &c->fns[i];
		k = strlen(f->name);
		if (strncmp(name, f->name, k) != 0 || name[k] != '.')
			continue;
		if (f->nparts == INL_MAX_PARTS) {
			if (f->why[0] == '\0')
				snprintf(f->why, sizeof(f->why),
				    "more than %d split-off parts",
				    INL_MAX_PARTS);
			continue;
		}
		f->parts[f->nparts][0] = c->bias + sym->st_value;
		f->parts[f->nparts][1] = c->bias + sym->st_value + sym->st_size;
		f->nparts++;
	}
}

/* Modules that are never patched: the loader, the C library (whose
 * exported functions the GOT slots reach, and whose internal calls to them
 * are its own business), and the agent. */
static int
never_patched(const char *base)
{
	return strncmp(base, "ld-linux", 8) == 0 ||
	    strncmp(base, "libc.so", 7) == 0 ||
	    strncmp(base, "libc-2.", 7) == 0 || ht_staging_is_agent(base);
}

/* Has f a C name among its aliases (free, for an operator delete that
 * is free)? */
static int
c_alias(const struct inl_fn *f)
{
	size_t k;

	for (k = 0; k < f->naliases; k++)
		if (f->aliases[k] >= 0 && f->aliases[k] < HT_NALLOCFNS &&
		    strcmp(ht_allocfns[f->aliases[k]].family, "c++") != 0)
			return 1;
	return 0;
}

/* Is name one of the C++ operators that are entry points of an allocator
 * only (src/allocnames.h)? */
static int
cxx_operator(const char *name)
{
	int i = ht_allocfns_find(name);

	return i >= 0 && (ht_allocfns[i].flags & HT_FNF_ALLOCATOR) != 0;
}

/* Do the n candidates of a module include an allocator's malloc (its own
 * name, or that of jemalloc, mimalloc, tcmalloc, with their prefixes)? */
static int
defines_malloc(const struct inl_fn *fns, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		k = strlen(fns[i].name);
		if (strcmp(fns[i].name, "malloc") == 0 ||
		    strcmp(fns[i].name, "mallocx") == 0 ||
		    (k > 7 && strcmp(fns[i].name + k - 7, "_malloc") == 0))
			return 1;
	}
	return 0;
}

int
ht_inl_candidates(pid_t pid, char *const *names, size_t n, struct inl_fn *fns,
    size_t max, struct inl_mod *mods, size_t maxmods, size_t *nmods, char *err,
    size_t errlen)
{
	struct collect c;
	struct ht_modfile mf;
	size_t i, j, k, nm = 0, kept = 0;
	int alloc;

	if (scan_modules(pid, mods, maxmods, &nm) != 0) {
		snprintf(err, errlen, "cannot read /proc/%ld/maps: %s",
		    (long)pid, strerror(errno));
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.names = names;
	c.nnames = n;
	if (n <= HT_NAMEIDX_MAX)
		ht_nameidx_build(&c.index, (const char *const *)names, n);
	c.fns = fns;
	c.max = max;
	for (i = 0; i < nm; i++) {
		if (never_patched(base_of(mods[i].path)))
			continue;
		if (open_mod(pid, &mods[i], &mf, &c.bias) != 0)
			continue; /* cannot be read: nothing to see there */
		c.mod = &mods[i];
		c.first = c.n;
		each_func(mf.elf, on_func, &c);
		alloc = defines_malloc(fns + c.first, c.n - c.first);
		/* A shared library's exported definition is what the GOT
		 * slots bind to: the GOT backend's.  The C++ operators are
		 * an allocator's entry points only where malloc is defined
		 * too (HT_FNF_ALLOCATOR): elsewhere they call malloc, and
		 * are counted there. */
		for (j = k = c.first; j < c.n; j++)
			if ((mods[i].main || !fns[j].exported) &&
			    (alloc || !cxx_operator(fns[j].name) ||
				c_alias(&fns[j])))
				fns[k++] = fns[j];
		c.n = k;
		if (c.n > c.first)
			each_func(mf.elf, on_part, &c);
		ht_modfile_close(&mf);
	}
	/* Keep only the modules with candidates, in place. */
	for (i = 0; i < nm; i++) {
		for (j = 0; j < c.n && fns[j].mod != &mods[i]; j++)
			;
		if (j == c.n)
			continue;
		if (kept != i) {
			mods[kept] = mods[i];
			for (j = 0; j < c.n; j++)
				if (fns[j].mod == &mods[i])
					fns[j].mod = &mods[kept];
		}
		kept++;
	}
	*nmods = kept;
	if (c.overflow)
		snprintf(err, errlen, "more than %zu candidates", max);
	return (int)c.n;
}

/* The value of symbol in elf's .dynsym, or 0. */
static uint64_t
dynsym_value(Elf *elf, const char *symbol)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	const char *name;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0 ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < n; i++)
			if (gelf_getsym(d, (int)i, &sym) != NULL &&
			    sym.st_shndx != SHN_UNDEF &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)) !=
				NULL &&
			    strcmp(name, symbol) == 0)
				return sym.st_value;
	}
	return 0;
}

#define SCAN_MODS 1024

uint64_t
ht_inl_find_block(pid_t pid)
{
	struct inl_mod *mods;
	struct ht_modfile mf;
	uint64_t bias, v, addr = 0;
	size_t i, n;

	if ((mods = calloc(SCAN_MODS, sizeof(*mods))) == NULL)
		return 0;
	if (scan_modules(pid, mods, SCAN_MODS, &n) != 0)
		n = 0;
	for (i = 0; i < n && addr == 0; i++) {
		if (!ht_staging_is_agent(base_of(mods[i].path)) ||
		    open_mod(pid, &mods[i], &mf, &bias) != 0)
			continue;
		if ((v = dynsym_value(mf.elf, BLOCK_SYMBOL)) != 0)
			addr = bias + v;
		ht_modfile_close(&mf);
	}
	free(mods);
	return addr;
}

void
ht_inl_module_of(pid_t pid, uint64_t a, char *buf, size_t len)
{
	struct inl_mod *mods;
	size_t i, n;

	snprintf(buf, len, "?");
	if ((mods = calloc(SCAN_MODS, sizeof(*mods))) == NULL)
		return;
	if (scan_modules(pid, mods, SCAN_MODS, &n) != 0)
		n = 0;
	for (i = 0; i < n; i++)
		if (a >= mods[i].lo && a < mods[i].hi) {
			snprintf(buf, len, "%s", mods[i].path);
			break;
		}
	free(mods);
}

static void
on_any(void *arg, const char *name, const GElf_Sym *sym, int dyn)
{
	int *found = arg, i;

	(void)dyn;
	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC &&
	    (i = ht_allocfns_find(name)) >= 0 &&
	    ht_allocfns[i].kind != HT_KIND_QUERY)
		*found = 1;
}

int
ht_inline_file_has_allocator(const char *path)
{
	Elf *elf;
	int fd, found = 0;

	(void)elf_version(EV_CURRENT);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((elf = elf_begin(fd, ELF_C_READ, NULL)) == NULL) {
		close(fd);
		return -1;
	}
	each_func(elf, on_any, &found);
	elf_end(elf);
	close(fd);
	return found;
}
