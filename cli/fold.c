/*
 * The list of allocator wrappers to fold (fold.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

/*
 * Functions that only pass an allocation on, in the libraries and
 * programs whose heaps users profile most.  Each is a real function (a
 * macro such as g_new is not a frame).  The C++ and Rust entries are the
 * standard allocators' layers between a container and operator new or
 * __rust_alloc, which show as inlined frames.
 */
static const char *const builtin[] = {
	/* gnulib, binutils, git, openssh... */
	"xmalloc",
	"xcalloc",
	"xrealloc",
	"xzalloc",
	"xmallocarray",
	"xreallocarray",
	"xnmalloc",
	"xcharalloc",
	/* GLib: g_new and g_renew are macros over these. */
	"g_malloc",
	"g_malloc0",
	"g_realloc",
	"g_malloc_n",
	"g_malloc0_n",
	"g_realloc_n",
	"g_try_malloc",
	"g_try_malloc0",
	"g_try_realloc",
	"g_try_malloc_n",
	"g_try_malloc0_n",
	"g_try_realloc_n",
	"g_slice_alloc",
	"g_slice_alloc0",
	"g_aligned_alloc",
	"g_aligned_alloc0",
	/* Redis (zmalloc.c) */
	"zmalloc",
	"zcalloc",
	"zrealloc",
	"zmalloc_usable",
	"zcalloc_usable",
	"zrealloc_usable",
	"ztrymalloc*",
	"ztrycalloc*",
	"ztryrealloc*",
	"zmalloc_no_tcache",
	"zcalloc_num",
	/* nginx */
	"ngx_alloc",
	"ngx_calloc",
	"ngx_memalign",
	"ngx_palloc",
	"ngx_pnalloc",
	"ngx_pcalloc",
	"ngx_pmemalign",
	"ngx_palloc_small",
	"ngx_palloc_large",
	"ngx_palloc_block",
	/* PostgreSQL's memory contexts */
	"palloc",
	"palloc0",
	"palloc_extended",
	"repalloc",
	"repalloc_huge",
	"MemoryContextAlloc",
	"MemoryContextAllocZero",
	"MemoryContextAllocExtended",
	"MemoryContextAllocHuge",
	"AllocSetAlloc",
	"AllocSetRealloc",
	"AllocSetAllocLarge",
	"AllocSetAllocFromNewBlock",
	"AllocSetAllocChunkFromBlock",
	"GenerationAlloc",
	"SlabAlloc",
	/* CPython */
	"PyMem_Malloc",
	"PyMem_Calloc",
	"PyMem_Realloc",
	"PyMem_RawMalloc",
	"PyMem_RawCalloc",
	"PyMem_RawRealloc",
	"_PyMem_RawMalloc",
	"_PyMem_RawCalloc",
	"_PyMem_RawRealloc",
	"_PyMem_Debug*",
	"PyObject_Malloc",
	"PyObject_Calloc",
	"PyObject_Realloc",
	"_PyObject_Malloc",
	"_PyObject_Calloc",
	"_PyObject_Realloc",
	"pymalloc_alloc",
	"_PyObject_New",
	"_PyObject_NewVar",
	"_PyObject_GC_New",
	"_PyObject_GC_NewVar",
	"_PyObject_GC_Malloc",
	"gc_alloc",
	/* C++: the standard allocators between a container and operator
	 * new (libstdc++, libc++). */
	"__gnu_cxx::new_allocator<*>::allocate",
	"std::__new_allocator<*>::allocate",
	"std::allocator<*>::allocate",
	"std::allocator_traits<*>::allocate",
	"std::__allocator_traits_base::*allocate*",
	"std::__1::allocator<*>::allocate",
	"std::__1::allocator_traits<*>::allocate",
	"std::__1::__libcpp_allocate",
	"std::__1::__libcpp_operator_new<*>",
	/* Rust: the global allocator's layers under Box and Vec. */
	"__rust_alloc",
	"__rust_alloc_zeroed",
	"__rust_realloc",
	"__rdl_alloc",
	"__rdl_alloc_zeroed",
	"__rdl_realloc",
	"alloc::alloc::*",
	"<alloc::alloc::Global as core::alloc::Allocator>::*",
	"alloc::raw_vec::*",
	/* v0 names of the generics instantiated in the user's crate, short
	 * and with the crate's disambiguator. */
	"<alloc::raw_vec::*",
	"<alloc\\[*\\]::raw_vec::*",
	"alloc\\[*\\]::alloc::*",
	"<alloc\\[*\\]::alloc::Global as core\\[*\\]::alloc::Allocator>::*",
};

/* The answer for one interned string. */
struct slot {
	const char *key;
	int folded;
};

struct ht_fold {
	char **pats;
	size_t npats, cap;
	struct slot *slots;
	size_t nslots, used; /* nslots a power of two, or 0 */
};

struct ht_fold *
ht_fold_new(void)
{
	return calloc(1, sizeof(struct ht_fold));
}

void
ht_fold_free(struct ht_fold *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->npats; i++)
		free(f->pats[i]);
	free(f->pats);
	free(f->slots);
	free(f);
}

/* The answers kept were of the old list. */
static void
forget(struct ht_fold *f)
{
	if (f->nslots > 0)
		memset(f->slots, 0, f->nslots * sizeof(*f->slots));
	f->used = 0;
}

int
ht_fold_add(struct ht_fold *f, const char *pattern)
{
	char **p;
	size_t cap;

	if (f->npats == f->cap) {
		cap = f->cap == 0 ? 128 : f->cap * 2;
		if ((p = reallocarray(f->pats, cap, sizeof(*p))) == NULL)
			return -1;
		f->pats = p;
		f->cap = cap;
	}
	if ((f->pats[f->npats] = strdup(pattern)) == NULL)
		return -1;
	f->npats++;
	forget(f);
	return 0;
}

int
ht_fold_builtin(struct ht_fold *f)
{
	size_t i;

	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (ht_fold_add(f, builtin[i]) != 0)
			return -1;
	return 0;
}

int
ht_fold_load(struct ht_fold *f, const char *path, char *why, size_t len)
{
	struct stat st;
	FILE *fp;
	char *line = NULL, *s, *e;
	size_t cap = 0;
	int rc = 1, saved;

	/* A file not there, or in a directory this user may not search
	 * (another user's $HOME, kept by setpriv or su), is no list; one
	 * there that cannot be read is an error to fix. */
	if (stat(path, &st) != 0)
		return 0;
	if ((fp = fopen(path, "re")) == NULL) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, fp) != -1) {
		for (s = line; isspace((unsigned char)*s); s++)
			;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (*s == '\0' || *s == '#')
			continue;
		if (ht_fold_add(f, s) != 0) {
			snprintf(why, len, "%s", strerror(errno));
			rc = -1;
			break;
		}
	}
	if (rc == 1 && ferror(fp)) {
		snprintf(why, len, "%s", strerror(errno));
		rc = -1;
	}
	saved = errno;
	free(line);
	fclose(fp);
	errno = saved;
	return rc;
}

const char *
ht_fold_config_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	int n;

	/* The XDG base directory spec: a relative value is to be ignored. */
	if (x != NULL && x[0] == '/')
		n = snprintf(buf, len, "%s/heaptool/fold", x);
	else if (h != NULL && h[0] != '\0')
		n = snprintf(buf, len, "%s/.config/heaptool/fold", h);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

size_t
ht_fold_count(const struct ht_fold *f)
{
	return f->npats;
}

/* The length of name without a trailing parameter list ("(int) const"),
 * balanced from its last ')'; all of it when there is none. */
static size_t
without_params(const char *name, size_t n)
{
	size_t i = n, depth = 0;

	/* Qualifiers after the list: " const", " &", " volatile". */
	while (i > 0 && name[i - 1] != ')') {
		if (name[i - 1] == '>' || name[i - 1] == ']')
			return n;
		i--;
	}
	if (i == 0)
		return n;
	while (i > 0) {
		i--;
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0)
			break;
	}
	/* "(anonymous namespace)" or an operator() alone: not a list. */
	return depth == 0 && i > 0 ? i : n;
}

/* The length of name without a legacy Rust hash ("::h" and 16 hex
 * digits at the end), as demangled without --short-names. */
static size_t
without_hash(const char *name, size_t n)
{
	size_t i;

	if (n < 19 || strncmp(name + n - 19, "::h", 3) != 0)
		return n;
	for (i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)name[i]))
			return n;
	return n - 19;
}

static int
glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

static int
match_one(const char *pat, const char *s, size_t n)
{
	char buf[1024];

	if (!glob(pat))
		return strlen(pat) == n && strncmp(pat, s, n) == 0;
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return fnmatch(pat, buf, 0) == 0;
}

static int
matches(const struct ht_fold *f, const char *name)
{
	size_t n = strlen(name), k[3], i, j;

	k[0] = n;
	k[1] = without_params(name, n);
	k[2] = without_hash(name, n);
	for (i = 0; i < f->npats; i++)
		for (j = 0; j < 3; j++)
			if ((j == 0 || k[j] != k[0]) &&
			    match_one(f->pats[i], name, k[j]))
				return 1;
	return 0;
}

static size_t
slot_of(const struct ht_fold *f, const char *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (f->nslots - 1);
}

/* Room for one more answer.  0, or -1 (then answers go unkept). */
static int
grow(struct ht_fold *f)
{
	struct slot *old = f->slots, *s;
	size_t oldn = f->nslots, i, j;

	if (f->nslots > 0 && (f->used + 1) * 2 <= f->nslots)
		return 0;
	if ((s = calloc(oldn == 0 ? 256 : oldn * 2, sizeof(*s))) == NULL)
		return -1;
	f->slots = s;
	f->nslots = oldn == 0 ? 256 : oldn * 2;
	for (i = 0; i < oldn; i++) {
		if (old[i].key == NULL)
			continue;
		for (j = slot_of(f, old[i].key); f->slots[j].key != NULL;
		     j = (j + 1) & (f->nslots - 1))
			;
		f->slots[j] = old[i];
	}
	free(old);
	return 0;
}

int
ht_fold_match(struct ht_fold *f, const char *function)
{
	size_t i;
	int r;

	if (f == NULL || function == NULL || f->npats == 0)
		return 0;
	if (f->nslots > 0)
		for (i = slot_of(f, function); f->slots[i].key != NULL;
		     i = (i + 1) & (f->nslots - 1))
			if (f->slots[i].key == function)
				return f->slots[i].folded;
	r = matches(f, function);
	if (grow(f) == 0) {
		for (i = slot_of(f, function); f->slots[i].key != NULL;
		     i = (i + 1) & (f->nslots - 1))
			;
		f->slots[i].key = function;
		f->slots[i].folded = r;
		f->used++;
	}
	return r;
}
