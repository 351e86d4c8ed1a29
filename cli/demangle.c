/*
 * Demangling with libiberty (demangle.h).
 */
#include "config.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* The UTF-8 of "…", one character where a list was. */
#define ELLIPSIS "\xe2\x80\xa6"

/* The operators whose names hold '<' or '>', longest first: after
 * "operator", the longest of them that is there is the operator's name, and
 * what follows it (a template's own list) is not. */
static const char *const ops[] = {
	"<=>",
	"<<=",
	">>=",
	"->*",
	"<<",
	">>",
	"<=",
	">=",
	"->",
	"<",
	">",
};

static size_t
op_len(const char *p)
{
	size_t i, n;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		n = strlen(ops[i]);
		if (strncmp(p, ops[i], n) == 0)
			return n;
	}
	return 0;
}

char *
ht_demangle_shorten(const char *name)
{
	size_t n = strlen(name), i, k, o = 0, depth = 0;
	char *out;

	/* "<>" becomes the 5 bytes of "<…>". */
	if ((out = malloc(3 * n + 8)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		/* operator<, operator<<=, operator->, operator<=>: not a
		 * list. */
		if (strncmp(name + i, "operator", 8) == 0 &&
		    (k = op_len(name + i + 8)) > 0) {
			if (depth == 0) {
				memcpy(out + o, name + i, 8 + k);
				o += 8 + k;
			}
			i += 8 + k - 1;
			continue;
		}
		if (name[i] == '<') {
			if (depth++ == 0) {
				out[o++] = '<';
				memcpy(out + o, ELLIPSIS, 3);
				o += 3;
			}
			continue;
		}
		if (name[i] == '>' && depth > 0) {
			if (--depth == 0)
				out[o++] = '>';
			continue;
		}
		if (depth == 0)
			out[o++] = name[i];
	}
	/* An unbalanced name ends its list here. */
	if (depth > 0)
		out[o++] = '>';
	out[o] = '\0';
	return out;
}

/* A legacy Rust name: "_ZN", then its path, ending in "17h" and 16 hex
 * digits and "E" (rust_demangle checks the rest). */
static int
rust_legacy(const char *name, size_t n)
{
	return n > 23 && strncmp(name, "_ZN", 3) == 0 && name[n - 1] == 'E' &&
	    strncmp(name + n - 20, "17h", 3) == 0;
}

char *
ht_demangle(const char *name, int flags)
{
	size_t n = strlen(name);
	int opts = DMGL_PARAMS | DMGL_ANSI;
	char *d, *s;

	errno = 0;
	if (strncmp(name, "_R", 2) == 0 || rust_legacy(name, n)) {
		/* Without DMGL_VERBOSE libiberty leaves out the hash of a
		 * legacy name and the disambiguators of a v0 one. */
		d = rust_demangle(name,
		    opts | ((flags & HT_DEMANGLE_SHORT) ? 0 : DMGL_VERBOSE));
		if (d != NULL || name[1] == 'R')
			return d;
	}
	if (strncmp(name, "_Z", 2) == 0) {
		if ((d = cplus_demangle(name, opts | DMGL_GNU_V3)) == NULL ||
		    !(flags & HT_DEMANGLE_SHORT))
			return d;
		s = ht_demangle_shorten(d);
		free(d);
		if (s == NULL)
			errno = ENOMEM;
		return s;
	}
	if (strncmp(name, "_D", 2) == 0)
		return dlang_demangle(name, opts);
	return NULL;
}
