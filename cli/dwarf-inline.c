/*
 * Inline chains from the DIE tree (see dwarf-inline.h).
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf-inline.h"

/* Deeper nesting than any compiler makes: bounds the recursion over a
 * module's DIE tree, which is input we do not trust. */
#define MAX_DEPTH 64

/* A range of a subprogram. */
struct range {
	Dwarf_Addr lo, hi;
	Dwarf_Addr maxhi; /* greatest hi up to this one */
	Dwarf_Die die;
};

/* The subprograms of one unit, by address. */
struct unit {
	const void *key; /* the unit DIE's data */
	struct range *r;
	size_t n;
	int nomem;
};

struct ht_inline {
	struct unit *u; /* sorted by key */
	size_t n, cap;
};

struct ht_inline *
ht_inline_new(void)
{
	return calloc(1, sizeof(struct ht_inline));
}

void
ht_inline_free(struct ht_inline *inl)
{
	size_t i;

	if (inl == NULL)
		return;
	for (i = 0; i < inl->n; i++)
		free(inl->u[i].r);
	free(inl->u);
	free(inl);
}

const char *
ht_inline_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(
	    dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (name == NULL)
		name = dwarf_formstring(
		    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (name == NULL)
		name = dwarf_formstring(
		    dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

static int
has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) ||
	    dwarf_hasattr(die, DW_AT_ranges);
}

/* Scopes that hold code and may hold subprograms or inlined instances. */
static int
is_block(int tag)
{
	switch (tag) {
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_common_block:
		return 1;
	}
	return 0;
}

/*
 * The next sibling of die, into die.  Returns 0, or 1 at the last one or
 * on a malformed tree: a DW_AT_sibling that does not lead forward (the
 * debug information is a module's file, input we do not trust) ends the
 * walk instead of looping on it.
 */
static int
next_sibling(Dwarf_Die *die)
{
	Dwarf_Die next;

	if (dwarf_siblingof(die, &next) != 0 ||
	    (const char *)next.addr <= (const char *)die->addr)
		return 1;
	*die = next;
	return 0;
}

static int
range_push(struct unit *u, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi,
    Dwarf_Die *die)
{
	struct range *nr;

	if (u->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if ((nr = reallocarray(u->r, *cap, sizeof(*nr))) == NULL)
			return -1;
		u->r = nr;
	}
	u->r[u->n].lo = lo;
	u->r[u->n].hi = hi;
	u->r[u->n].die = *die;
	u->n++;
	return 0;
}

/*
 * Index the subprograms under parent: those of the unit and its
 * namespaces, and those nested in functions (GCC's nested functions, whose
 * code lies outside their parent's ranges).  Types hold no code.
 */
static int
index_scope(struct unit *u, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die child;
	ptrdiff_t off;
	int tag;

	if (depth > MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
			off = 0;
			while ((off = dwarf_ranges(&child, off, &base, &lo,
				    &hi)) > 0)
				if (lo < hi &&
				    range_push(u, cap, lo, hi, &child) != 0)
					return -1;
			if (dwarf_haschildren(&child) &&
			    index_scope(u, cap, &child, depth + 1) != 0)
				return -1;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_inlined_subroutine:
			if (index_scope(u, cap, &child, depth + 1) != 0)
				return -1;
			break;
		default:
			if (is_block(tag) &&
			    index_scope(u, cap, &child, depth + 1) != 0)
				return -1;
			break;
		}
	} while (next_sibling(&child) == 0);
	return 0;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/* The index of unit cu, built on first use; NULL when out of memory. */
static struct unit *
unit_of(struct ht_inline *inl, Dwarf_Die *cu)
{
	const void *key = cu->addr;
	struct unit *u, *nu;
	size_t lo = 0, hi = inl->n, mid, cap = 0, i;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((const char *)inl->u[mid].key < (const char *)key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < inl->n && inl->u[lo].key == key)
		return inl->u[lo].nomem ? NULL : &inl->u[lo];
	if (inl->n == inl->cap) {
		cap = inl->cap ? inl->cap * 2 : 16;
		if ((nu = reallocarray(inl->u, cap, sizeof(*nu))) == NULL)
			return NULL;
		inl->u = nu;
		inl->cap = cap;
	}
	memmove(&inl->u[lo + 1], &inl->u[lo], (inl->n - lo) * sizeof(*nu));
	inl->n++;
	u = &inl->u[lo];
	memset(u, 0, sizeof(*u));
	u->key = key;
	cap = 0;
	if (index_scope(u, &cap, cu, 0) != 0) {
		/* Remembered, so that each lookup does not retry. */
		free(u->r);
		u->r = NULL;
		u->n = 0;
		u->nomem = 1;
		return NULL;
	}
	qsort(u->r, u->n, sizeof(*u->r), range_cmp);
	for (i = 0; i < u->n; i++)
		u->r[i].maxhi = i > 0 && u->r[i - 1].maxhi > u->r[i].hi ?
		    u->r[i - 1].maxhi :
		    u->r[i].hi;
	return u;
}

/* The subprogram that holds pc: of those whose ranges do, the one that
 * starts last (a nested function inside its parent's span). */
static Dwarf_Die *
subprogram_at(struct unit *u, Dwarf_Addr pc)
{
	size_t lo = 0, hi = u->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (u->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && u->r[lo - 1].maxhi > pc) {
		lo--;
		if (pc < u->r[lo].hi)
			return &u->r[lo].die;
	}
	return NULL;
}

/* The chain of function scopes, outermost first. */
struct chain {
	Dwarf_Die *v;
	int n, cap;
};

static int
chain_push(struct chain *c, Dwarf_Die *die)
{
	Dwarf_Die *nv;
	int cap;

	if (c->n == c->cap) {
		cap = c->cap ? c->cap * 2 : 8;
		if ((nv = reallocarray(c->v, (size_t)cap, sizeof(*nv))) == NULL)
			return -1;
		c->v = nv;
		c->cap = cap;
	}
	c->v[c->n++] = *die;
	return 0;
}

/*
 * Down from scope to the inlined instance that holds pc, through lexical
 * blocks; pushes it and goes on inside it.  Returns 1 when one was found,
 * 0 when none, -1 when out of memory.
 */
static int
descend(struct chain *c, Dwarf_Die *scope, Dwarf_Addr pc, int depth)
{
	Dwarf_Die child;
	int tag, r;

	if (depth > MAX_DEPTH || dwarf_child(scope, &child) != 0)
		return 0;
	do {
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			if (dwarf_haspc(&child, pc) != 1)
				continue;
			if (chain_push(c, &child) != 0)
				return -1;
			return descend(c, &child, pc, depth + 1) < 0 ? -1 : 1;
		}
		/* A block without addresses of its own may still hold an
		 * instance that has them. */
		if (!is_block(tag) ||
		    (has_pc_attrs(&child) && dwarf_haspc(&child, pc) != 1))
			continue;
		if ((r = descend(c, &child, pc, depth + 1)) != 0)
			return r;
	} while (next_sibling(&child) == 0);
	return 0;
}

/* The file of index idx in the line table of the unit of die. */
static char *
file_of(Dwarf_Die *die, Dwarf_Word idx)
{
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;

	if (dwarf_diecu(die, &cu, NULL, NULL) == NULL ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return ht_inline_path(&cu, dwarf_filesrc(files, idx, NULL, NULL));
}

void
ht_inline_frames_free(struct ht_inline_frame *f, int n)
{
	int i;

	if (f == NULL)
		return;
	for (i = 0; i < n; i++)
		free(f[i].file);
	free(f);
}

int
ht_inline_frames(struct ht_inline *inl, Dwarf_Die *cu, Dwarf_Addr pc,
    struct ht_inline_frame **out)
{
	struct ht_inline_frame *f;
	struct chain c = { NULL, 0, 0 };
	Dwarf_Attribute attr;
	Dwarf_Word idx, ln;
	Dwarf_Line *line;
	Dwarf_Die *sp;
	struct unit *u;
	const char *name;
	int i, k, v;

	*out = NULL;
	if ((u = unit_of(inl, cu)) == NULL)
		return -1;
	if ((sp = subprogram_at(u, pc)) == NULL)
		return 0;
	if (chain_push(&c, sp) != 0 || descend(&c, sp, pc, 0) < 0)
		goto nomem;
	if ((f = calloc((size_t)c.n, sizeof(*f))) == NULL)
		goto nomem;
	/* Innermost first: frame k is chain level c.n - 1 - k. */
	for (k = 0; k < c.n; k++)
		f[k].function = ht_inline_die_name(&c.v[c.n - 1 - k]);
	if ((line = dwarf_getsrc_die(cu, pc)) != NULL &&
	    (name = dwarf_linesrc(line, NULL, NULL)) != NULL) {
		if ((f[0].file = ht_inline_path(cu, name)) == NULL)
			goto nomem_frames;
		if (dwarf_lineno(line, &v) == 0 && v > 0)
			f[0].line = v;
	}
	/* The caller's line is where the instance inside it was called. */
	for (k = 1; k < c.n; k++) {
		i = c.n - k; /* the level inside frame k */
		if (dwarf_formudata(dwarf_attr(&c.v[i], DW_AT_call_line, &attr),
			&ln) == 0 &&
		    ln <= 0x7fffffff)
			f[k].line = (int)ln;
		if (dwarf_formudata(dwarf_attr(&c.v[i], DW_AT_call_file, &attr),
			&idx) == 0)
			f[k].file = file_of(&c.v[i], idx);
	}
	free(c.v);
	*out = f;
	return c.n;

nomem_frames:
	ht_inline_frames_free(f, c.n);
nomem:
	free(c.v);
	return -1;
}

/*
 * Make path p lexically normal, in place: no empty or "." components, "a/.."
 * removed, the leading ".." of a relative path kept, ".." above "/"
 * dropped, no trailing slash.  Nothing written overtakes what is still to
 * be read: each component kept was read with the slash before it.
 */
static void
normalize(char *p)
{
	char *r = p, *w = p, *base, *floor;
	size_t len;
	int abs = p[0] == '/';

	if (abs)
		w++;
	base = floor = w;
	while (*r != '\0') {
		while (*r == '/')
			r++;
		if (*r == '\0')
			break;
		len = strcspn(r, "/");
		if (len == 1 && r[0] == '.') {
			r += len;
			continue;
		}
		if (len == 2 && r[0] == '.' && r[1] == '.' &&
		    (w > floor || abs)) {
			/* Back over the last component and its slash. */
			while (w > floor && w[-1] != '/')
				w--;
			if (w > floor)
				w--;
			r += len;
			continue;
		}
		if (w > base)
			*w++ = '/';
		memmove(w, r, len);
		w += len;
		r += len;
		if (len == 2 && w[-1] == '.' && w[-2] == '.')
			floor = w; /* a leading "..": stays */
	}
	if (w == p)
		*w++ = '.';
	*w = '\0';
}

/*
 * Of the directories of cu's line table, the one name was joined with:
 * the longest that prefixes it.  Returns its index, or -1 for none.
 */
static long
dir_of(Dwarf_Die *cu, const char *name)
{
	const char *const *dirs;
	Dwarf_Files *files;
	size_t nfiles, ndirs, i, len, best = 0;
	long at = -1;

	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 ||
	    dwarf_getsrcdirs(files, &dirs, &ndirs) != 0)
		return -1;
	for (i = 0; i < ndirs; i++) {
		if (dirs[i] == NULL || (len = strlen(dirs[i])) == 0)
			continue;
		while (len > 1 && dirs[i][len - 1] == '/')
			len--;
		/* Directory 0 wins a tie: a compiler that repeats the
		 * compilation directory as directory 1 means the same. */
		if (len > best && strncmp(name, dirs[i], len) == 0 &&
		    name[len] == '/') {
			best = len;
			at = (long)i;
		}
	}
	return at;
}

char *
ht_inline_path(Dwarf_Die *cu, const char *name)
{
	Dwarf_Attribute attr;
	const char *comp = NULL;
	size_t n;
	char *p;

	if (name == NULL)
		return NULL;
	/*
	 * libdw joins an entry with its directory, and in DWARF 4 directory
	 * 0 with DW_AT_comp_dir; in DWARF 5 directory 0 is the compilation
	 * directory as the line table records it.  Any other relative
	 * directory is relative to the compilation directory.
	 */
	if (name[0] != '/' && dir_of(cu, name) != 0)
		comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (comp != NULL && comp[0] != '\0') {
		n = strlen(comp) + 1 + strlen(name) + 1;
		if ((p = malloc(n)) == NULL)
			return NULL;
		snprintf(p, n, "%s/%s", comp, name);
	} else if ((p = strdup(name)) == NULL)
		return NULL;
	normalize(p);
	return p;
}
