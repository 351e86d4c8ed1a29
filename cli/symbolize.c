/*
 * The symbolizer (see symbolize.h), over libdwfl.
 *
 * Each module gets its own Dwfl, reported once on first use with
 * dwfl_report_elf at the recorded load bias.  One Dwfl per module keeps a
 * module whose recorded range overlaps another's (a profile is input we do
 * not trust) from failing the others, and lets a module be opened lazily
 * without re-reporting the rest.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrmap.h"
#include "debuginfo.h"
#include "demangle.h"
#include "dwarf-inline.h"
#include "intern.h"
#include "modfile.h"
#include "modsearch.h"
#include "symbolize.h"
#include "symtab.h"

enum mod_state {
	MOD_UNOPENED,
	MOD_OK,
	MOD_FAILED,
};

struct mod {
	struct ht_module_rec rec;
	const char *name; /* basename, inside rec.path */
	enum mod_state state;
	int flags;	     /* HT_SYM_* when failed */
	char *problem;	     /* why it failed, or NULL */
	int problem_dropped; /* it failed, past HT_SYM_MAX_PROBLEMS */
	Dwfl *dwfl;
	Dwfl_Module *dm;
	struct ht_debuginfo_ctx dbg; /* the module's userdata */
	/* Add to a recorded address to get the address Dwfl uses: zero
	 * unless libdwfl placed the file at another bias (ET_EXEC). */
	uint64_t adj;
	struct ht_symtab *st;  /* its symbols, indexed */
	struct ht_inline *inl; /* the DWARF units' indexes */
};

struct cache_ent {
	uint64_t addr;
	struct ht_sym_frame *frames; /* NULL: empty slot */
	int n;
};

struct ht_sym {
	struct mod *mods; /* sorted by rec.start */
	size_t nmods;
	struct ht_addrmap map; /* which of mods holds an address */
	char *root;
	char *sysroot;
	char **dirs; /* debug directories: the user's, then the sysroot's */
	size_t ndirs;
	long pid;     /* live process, or 0 */
	int demangle; /* ht_demangle's flags */
	/* Only the addresses looked up in a module's file are kept: the
	 * others cost a map lookup each time, and a hostile profile's
	 * millions of them would be most of the memory. */
	struct cache_ent *cache;
	size_t cache_cap; /* a power of two */
	size_t cache_used;
	size_t max_symbols; /* cache_used stops there; 0 for no limit */
	size_t nproblems;   /* modules whose file could not be found */
	uint32_t *failed;   /* the modules with a problem, as met */
	size_t nfailed, failed_cap;
	struct ht_intern names;	 /* of functions, files and modules */
	struct ht_sym_frame one; /* the frame of an address not kept */
};

/*
 * Offline use: libdwfl never looks at a live process; the files come from
 * the module map.  Separate debug information (.gnu_debuglink files,
 * /usr/lib/debug/.build-id, dwz alternate files) is found by our own
 * search, which opens nothing but regular files (cli/debuginfo.h).
 */
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = ht_debuginfo_find,
	.section_address = dwfl_offline_section_address,
};

static int
mod_cmp(const void *a, const void *b)
{
	const struct mod *x = a, *y = b;

	if (x->rec.start != y->rec.start)
		return x->rec.start < y->rec.start ? -1 : 1;
	return 0;
}

/* The sysroot and the debug directories of opts, copied: the user's, then
 * SYSROOT/usr/lib/debug.  Returns 0, or -1 when out of memory. */
static int
opts_dirs(struct ht_sym *sym, const struct ht_sym_opts *opts)
{
	size_t i, n = opts->ndebug_dirs;
	int k;

	if (opts->sysroot != NULL && opts->sysroot[0] != '\0' &&
	    (sym->sysroot = strdup(opts->sysroot)) == NULL)
		return -1;
	if (n == 0 && sym->sysroot == NULL)
		return 0;
	if ((sym->dirs = calloc(n + 1, sizeof(*sym->dirs))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if ((sym->dirs[sym->ndirs] = strdup(opts->debug_dirs[i])) ==
		    NULL)
			return -1;
		sym->ndirs++;
	}
	if (sym->sysroot != NULL) {
		k = asprintf(&sym->dirs[sym->ndirs], "%s/usr/lib/debug",
		    sym->sysroot);
		if (k < 0)
			return -1;
		sym->ndirs++;
	}
	return 0;
}

struct ht_sym *
ht_sym_new(const struct ht_module_rec *recs, size_t n,
    const struct ht_sym_opts *opts)
{
	struct ht_sym *sym;
	const char *slash, *name;
	uint64_t *start = NULL, *end = NULL;
	size_t i;

	/*
	 * libdwfl asks debuginfod for missing debug information whenever
	 * DEBUGINFOD_URLS is set, which many systems set for every login.
	 * A report must not stall on the network or send the build-ids of a
	 * user's binaries to a server without being asked.
	 */
	if (opts == NULL || !opts->debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	elf_version(EV_CURRENT);

	if ((sym = calloc(1, sizeof(*sym))) == NULL)
		return NULL;
	if (n > 0 && (sym->mods = calloc(n, sizeof(*sym->mods))) == NULL)
		goto out_free;
	if (opts != NULL && opts->root != NULL && opts->root[0] != '\0' &&
	    (sym->root = strdup(opts->root)) == NULL)
		goto out_free;
	if (opts != NULL && opts->pid > 0)
		sym->pid = (long)opts->pid;
	if (opts != NULL && opts->short_names)
		sym->demangle = HT_DEMANGLE_SHORT;
	if (opts != NULL && opts_dirs(sym, opts) != 0)
		goto out_free;
	for (i = 0; i < n; i++) {
		sym->mods[i].rec = recs[i];
		/* Our own copy: the symbolizer may outlive the profile. */
		sym->mods[i].rec.path =
		    strndup(recs[i].path != NULL ? recs[i].path : "",
			HT_PROFILE_MAX_PATH - 1);
		if (sym->mods[i].rec.path == NULL) {
			sym->nmods = i;
			goto out_free;
		}
		if (sym->mods[i].rec.build_id_len > HT_PROFILE_MAX_BUILD_ID)
			sym->mods[i].rec.build_id_len = HT_PROFILE_MAX_BUILD_ID;
	}
	sym->nmods = n;
	if (n > 1)
		qsort(sym->mods, n, sizeof(*sym->mods), mod_cmp);
	/* One copy of each name: modules of one name share it (so their
	 * frames compare equal by pointer, as by text). */
	for (i = 0; i < n; i++) {
		slash = strrchr(sym->mods[i].rec.path, '/');
		name = slash != NULL ? slash + 1 : sym->mods[i].rec.path;
		if ((sym->mods[i].name = ht_intern(&sym->names,
			 name[0] != '\0' ? name : "[unknown]")) == NULL)
			goto out_free;
	}
	sym->max_symbols = HT_SYM_MAX_DEFAULT;
	if (n > 0 &&
	    ((start = calloc(n, sizeof(*start))) == NULL ||
		(end = calloc(n, sizeof(*end))) == NULL))
		goto out_free;
	for (i = 0; i < n; i++) {
		start[i] = sym->mods[i].rec.start;
		end[i] = sym->mods[i].rec.end;
	}
	if (ht_addrmap_build(&sym->map, start, end, n) != 0)
		goto out_free;
	free(start);
	free(end);
	return sym;

out_free:
	free(start);
	free(end);
	ht_sym_free(sym);
	errno = ENOMEM;
	return NULL;
}

void
ht_sym_free(struct ht_sym *sym)
{
	size_t i;

	if (sym == NULL)
		return;
	/* The frames' strings are the set's. */
	for (i = 0; i < sym->cache_cap; i++)
		free(sym->cache[i].frames);
	free(sym->cache);
	ht_intern_free(&sym->names);
	ht_addrmap_free(&sym->map);
	free(sym->failed);
	for (i = 0; i < sym->nmods; i++) {
		if (sym->mods[i].dwfl != NULL)
			dwfl_end(sym->mods[i].dwfl);
		free(sym->mods[i].problem);
		free((char *)sym->mods[i].rec.path);
		ht_symtab_free(sym->mods[i].st);
		ht_inline_free(sym->mods[i].inl);
	}
	free(sym->mods);
	free(sym->root);
	free(sym->sysroot);
	for (i = 0; i < sym->ndirs; i++)
		free(sym->dirs[i]);
	free(sym->dirs);
	free(sym);
}

/* Of the modules that hold addr, the last to start. */
static struct mod *
find_mod(struct ht_sym *sym, uint64_t addr)
{
	int64_t i = ht_addrmap_find(&sym->map, addr);

	return i >= 0 ? &sym->mods[i] : NULL;
}

void
ht_sym_limit(struct ht_sym *sym, size_t max)
{
	sym->max_symbols = max;
}

size_t
ht_sym_max(const struct ht_sym *sym)
{
	return sym->max_symbols;
}

const char *
ht_sym_module_name(struct ht_sym *sym, uint64_t addr)
{
	struct mod *m;

	/* A return address may sit just past a module's last byte (a call
	 * to a function that does not return): look up the call. */
	if ((m = find_mod(sym, addr > 0 ? addr - 1 : addr)) == NULL)
		return NULL;
	return m->name;
}

static void
mod_fail(struct mod *m, int flags, const char *fmt, const char *arg)
{
	char buf[512];

	m->state = MOD_FAILED;
	m->flags = flags;
	snprintf(buf, sizeof(buf), fmt, arg);
	m->problem = strdup(buf);
}

/*
 * The module's file (cli/modsearch.h): the sysroot's copy, its path under
 * the root, for a live process the mapping itself (which still holds a
 * file deleted or replaced on disk since it was loaded), or its debug file
 * by build-id.
 */
static void
mod_open(struct ht_sym *sym, struct mod *m)
{
	struct ht_modsearch_req req;
	struct ht_modfile mf;
	const char *root;
	Dwarf_Addr bias;
	char *problem;
	void **ud;
	int fd, mismatch;

	if (m->rec.path[0] != '/') {
		/* [vdso], anonymous code: no file to read. */
		m->state = MOD_FAILED;
		m->flags = HT_SYM_NO_FILE;
		return;
	}
	memset(&req, 0, sizeof(req));
	req.path = m->rec.path;
	req.build_id = m->rec.build_id;
	req.build_id_len = m->rec.build_id_len;
	req.sysroot = sym->sysroot;
	req.root = sym->root;
	req.pid = (pid_t)sym->pid;
	req.lo = m->rec.start;
	req.hi = m->rec.end;
	req.debug_dirs = (const char *const *)sym->dirs;
	req.ndebug_dirs = sym->ndirs;
	if (ht_modsearch_open(&req, &mf, &root, &problem, &mismatch) != 0) {
		m->state = MOD_FAILED;
		m->flags = mismatch ? HT_SYM_BUILD_ID_MISMATCH : HT_SYM_NO_FILE;
		/* A reason is some 600 bytes: a profile of 65,536 missing
		 * modules kept 36 MB of them to print 10. */
		if (sym->nproblems++ < HT_SYM_MAX_PROBLEMS)
			m->problem = problem;
		else {
			free(problem);
			m->problem_dropped = 1;
		}
		return;
	}
	elf_end(mf.elf);
	fd = mf.fd;

	if ((m->dwfl = dwfl_begin(&dwfl_callbacks)) == NULL) {
		mod_fail(m, HT_SYM_NO_FILE, "libdwfl: %s", dwfl_errmsg(-1));
		goto out_close;
	}
	dwfl_report_begin(m->dwfl);
	/* ET_DYN: placed at base + p_vaddr, i.e. at the recorded bias;
	 * ET_EXEC: placed where its headers say (bias 0), base ignored. */
	m->dm =
	    dwfl_report_elf(m->dwfl, m->name, mf.name, fd, m->rec.bias, true);
	if (m->dm == NULL) {
		mod_fail(m, HT_SYM_NO_FILE, "libdwfl: %s", dwfl_errmsg(-1));
		dwfl_report_end(m->dwfl, NULL, NULL);
		goto out_close;
	}
	fd = -1; /* consumed by libdwfl */
	m->dbg.path = m->rec.path;
	m->dbg.root = root;
	m->dbg.dirs = (const char *const *)sym->dirs;
	m->dbg.ndirs = sym->ndirs;
	if (dwfl_module_info(m->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL) !=
	    NULL)
		*ud = &m->dbg;
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0) {
		mod_fail(m, HT_SYM_NO_FILE, "libdwfl: %s", dwfl_errmsg(-1));
		return;
	}
	if (dwfl_module_getelf(m->dm, &bias) == NULL) {
		mod_fail(m, HT_SYM_NO_FILE, "libdwfl: %s", dwfl_errmsg(-1));
		return;
	}
	m->adj = bias - m->rec.bias;
	m->state = MOD_OK;
	return;

out_close:
	if (fd != -1)
		close(fd);
}

/*
 * Returns a malloc'd copy of name, demangled if it is a C++, Rust or D
 * name (demangle.h, with flags); NULL only for a NULL name or no memory.
 */
static char *
name_dup(const char *name, int flags)
{
	char *copy = NULL, *d;
	size_t len;

	if (name == NULL)
		return NULL;
	/* An ELF name's "@VERSION" (or "@@VERSION") is not the function's. */
	if ((len = strcspn(name, "@")) < strlen(name)) {
		if ((copy = strndup(name, len)) == NULL)
			return NULL;
		name = copy;
	}
	if (name[0] == '_' && (d = ht_demangle(name, flags)) != NULL) {
		free(copy);
		return d;
	}
	if (errno == ENOMEM) {
		free(copy);
		return NULL;
	}
	return copy != NULL ? copy : strdup(name);
}

/* A growing frame list for one address. */
struct frames {
	struct ht_sym_frame *v;
	int n;
	int cap;
	int nomem;
	int demangle; /* ht_demangle's flags */
};

static struct ht_sym_frame *
frame_add(struct frames *fs, const struct ht_sym_frame *proto,
    const char *function, const char *file, int line)
{
	struct ht_sym_frame *f, *nv;
	int cap;

	if (fs->n == fs->cap) {
		cap = fs->cap == 0 ? 4 : fs->cap * 2;
		if ((nv = reallocarray(fs->v, cap, sizeof(*nv))) == NULL) {
			fs->nomem = 1;
			return NULL;
		}
		fs->v = nv;
		fs->cap = cap;
	}
	f = &fs->v[fs->n];
	*f = *proto;
	f->function = name_dup(function, fs->demangle);
	f->file = file != NULL ? strdup(file) : NULL;
	f->line = file != NULL || line > 0 ? line : 0;
	if ((function != NULL && f->function == NULL) ||
	    (file != NULL && f->file == NULL)) {
		free((char *)f->function);
		free((char *)f->file);
		fs->nomem = 1;
		return NULL;
	}
	fs->n++;
	return f;
}

/*
 * Symbolize pc (already the address inside the call) in an opened module:
 * the DWARF DIE tree gives the inline chain (cli/dwarf-inline.h); without
 * a subprogram there, the line table gives file:line and the ELF symbol
 * table the function.
 */
static void
resolve(struct mod *m, uint64_t pc, const struct ht_sym_frame *proto,
    struct frames *fs)
{
	struct ht_inline_frame *ifr = NULL;
	struct ht_sym_frame *last;
	Dwarf_Die *cudie;
	Dwarf_Addr dwbias;
	Dwfl_Line *ln;
	const char *fn;
	char *file = NULL;
	int line = 0, n = 0, k;

	if ((m->inl == NULL && (m->inl = ht_inline_new()) == NULL) ||
	    (m->st == NULL && (m->st = ht_symtab_new(m->dm)) == NULL)) {
		fs->nomem = 1;
		return;
	}
	cudie = dwfl_module_addrdie(m->dm, pc, &dwbias);
	if (cudie != NULL &&
	    (n = ht_inline_frames(m->inl, cudie, pc - dwbias, &ifr)) < 0) {
		fs->nomem = 1;
		return;
	}
	for (k = 0; k < n; k++) {
		fn = ht_symtab_alias(m->st, ifr[k].function);
		if (k == n - 1) {
			fn = ht_symtab_outer(m->st, pc, ifr[k].function);
			/* DWARF without a name (rare): a label's. */
			if (fn == NULL)
				fn = ht_symtab_name(m->st, pc);
		}
		if ((last = frame_add(fs, proto, fn, ifr[k].file,
			 ifr[k].line)) == NULL)
			goto out;
		last->inlined = k < n - 1;
	}
	if (n > 0)
		goto out;
	if ((ln = dwfl_module_getsrc(m->dm, pc)) != NULL &&
	    (fn = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL)) != NULL &&
	    (file = ht_inline_path(dwfl_linecu(ln), fn)) == NULL) {
		fs->nomem = 1;
		goto out;
	}
	(void)frame_add(fs, proto, ht_symtab_name(m->st, pc), file, line);
out:
	free(file);
	ht_inline_frames_free(ifr, n);
}

static uint64_t
hash_addr(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return a;
}

static struct cache_ent *
cache_slot(struct ht_sym *sym, uint64_t addr)
{
	size_t i, mask = sym->cache_cap - 1;

	for (i = hash_addr(addr) & mask;; i = (i + 1) & mask)
		if (sym->cache[i].frames == NULL || sym->cache[i].addr == addr)
			return &sym->cache[i];
}

static int
cache_grow(struct ht_sym *sym)
{
	struct cache_ent *old = sym->cache, *e;
	size_t oldcap = sym->cache_cap, i;

	sym->cache_cap = oldcap == 0 ? 256 : oldcap * 2;
	if ((sym->cache = calloc(sym->cache_cap, sizeof(*e))) == NULL) {
		sym->cache = old;
		sym->cache_cap = oldcap;
		return -1;
	}
	for (i = 0; i < oldcap; i++)
		if (old[i].frames != NULL)
			*cache_slot(sym, old[i].addr) = old[i];
	free(old);
	return 0;
}

/*
 * Put the frames' strings (malloc'd copies) into the set, which takes
 * them.  Returns 0, or -1 (ENOMEM) with every string the set's or freed.
 */
static int
frames_intern(struct ht_sym *sym, struct frames *fs)
{
	char *fn, *file;
	int k, failed = 0;

	for (k = 0; k < fs->n; k++) {
		fn = (char *)fs->v[k].function;
		file = (char *)fs->v[k].file;
		if (failed) {
			free(fn);
			free(file);
			continue;
		}
		fs->v[k].function = ht_intern_take(&sym->names, fn);
		fs->v[k].file = ht_intern_take(&sym->names, file);
		if ((fn != NULL && fs->v[k].function == NULL) ||
		    (file != NULL && fs->v[k].file == NULL))
			failed = 1;
	}
	return failed ? -1 : 0;
}

/* Remember that m has a problem, after those met before. */
static int
failed_add(struct ht_sym *sym, const struct mod *m)
{
	uint32_t *p;
	size_t cap;

	if (sym->nfailed == sym->failed_cap) {
		cap = sym->failed_cap == 0 ? 16 : sym->failed_cap * 2;
		if ((p = reallocarray(sym->failed, cap, sizeof(*p))) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		sym->failed = p;
		sym->failed_cap = cap;
	}
	sym->failed[sym->nfailed++] = (uint32_t)(m - sym->mods);
	return 0;
}

int
ht_sym_lookup(struct ht_sym *sym, uint64_t addr,
    const struct ht_sym_frame **out)
{
	struct ht_sym_frame proto, *nv, *one = &sym->one;
	struct cache_ent *e;
	struct frames fs;
	struct mod *m;
	uint64_t pc;

	if (sym->cache_cap > 0 && (e = cache_slot(sym, addr))->frames != NULL) {
		*out = e->frames;
		return e->n;
	}
	/* An address not looked up in a file: one frame, not kept, made
	 * in place field by field (a copy of a frame made on the stack
	 * stalled on its stores: a tenth of a report of millions of
	 * frames in a missing module). */
	one->address = addr;
	one->module = NULL;
	one->offset = addr;
	one->function = NULL;
	one->file = NULL;
	one->line = 0;
	one->inlined = 0;
	one->flags = 0;
	*out = one;
	pc = addr > 0 ? addr - 1 : 0;
	if ((m = find_mod(sym, pc)) == NULL)
		return 1;
	one->module = m->name;
	one->offset = addr - m->rec.bias;
	if (m->state == MOD_FAILED) {
		one->flags = m->flags;
		return 1;
	}
	if (sym->max_symbols > 0 && sym->cache_used >= sym->max_symbols) {
		one->flags = HT_SYM_SKIPPED;
		return 1;
	}
	proto = *one;
	if (m->state == MOD_UNOPENED) {
		mod_open(sym, m);
		if ((m->problem != NULL || m->problem_dropped) &&
		    failed_add(sym, m) != 0)
			return -1;
	}
	if (m->state != MOD_OK) {
		sym->one.flags = m->flags;
		return 1;
	}

	if (sym->cache_used + 1 > sym->cache_cap / 4 * 3 &&
	    cache_grow(sym) != 0)
		return -1;
	memset(&fs, 0, sizeof(fs));
	fs.demangle = sym->demangle;
	resolve(m, pc + m->adj, &proto, &fs);
	if (fs.n == 0 && !fs.nomem)
		(void)frame_add(&fs, &proto, NULL, NULL, 0);
	if (fs.nomem) {
		while (fs.n > 0) {
			fs.n--;
			free((char *)fs.v[fs.n].function);
			free((char *)fs.v[fs.n].file);
		}
		free(fs.v);
		errno = ENOMEM;
		return -1;
	}
	if (frames_intern(sym, &fs) != 0) {
		free(fs.v);
		errno = ENOMEM;
		return -1;
	}
	/* Most addresses have one frame: the list's spare room, kept for
	 * every address, would be most of the cache. */
	if (fs.cap > fs.n &&
	    (nv = reallocarray(fs.v, (size_t)fs.n, sizeof(*fs.v))) != NULL)
		fs.v = nv;
	e = cache_slot(sym, addr);
	e->addr = addr;
	e->frames = fs.v;
	e->n = fs.n;
	sym->cache_used++;
	*out = e->frames;
	return e->n;
}

size_t
ht_sym_problems(struct ht_sym *sym,
    void (*fn)(void *, const char *, const char *), void *arg)
{
	const struct mod *m;
	size_t i, n = 0;

	/* In the order the lookups met them: the reasons kept are those
	 * of the first, which a report prints. */
	for (i = 0; i < sym->nfailed; i++) {
		m = &sym->mods[sym->failed[i]];
		if (fn != NULL)
			fn(arg, m->rec.path,
			    m->problem != NULL ?
				m->problem :
				"its file could not be found (the reasons "
				"of more than " HT_SYM_STR(
				    HT_SYM_MAX_PROBLEMS) " modules are not "
							 "kept)");
		n++;
	}
	return n;
}
