/*
 * The pprof export's string and function tables (pprof-int.h): each
 * string and function written once, when it is first met, those that can
 * repeat kept to be found again.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "pprof-int.h"
#include "text.h"

/* p (of *cap elements of size), grown to hold n + 1: the array, moved
 * perhaps, or NULL (errno ENOMEM) leaving p as it was. */
static void *
grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return p;
	c = *cap == 0 ? 64 : *cap * 2;
	if ((q = reallocarray(p, c, size)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	*cap = c;
	return q;
}

/* Compress what is buffered once there is enough of it. */
void
ht_pprof_flush(struct pprof *pp, size_t at_least)
{
	if (pp->out.len >= at_least)
		ht_pb_gz_write(&pp->gz, &pp->out);
}

/*
 * s as a protobuf string into *copy (malloc'd, len bytes and a NUL):
 * protobuf strings are UTF-8, so ill-formed bytes (a legacy encoding in a
 * path or a name) become '?'; so do control characters (C0, DEL, C1),
 * which pprof prints to a terminal as they are.  Returns 0 or -1 (ENOMEM).
 */
static int
sanitize(const char *s, char **copy, size_t *lenp)
{
	return (*copy = ht_text_clean(s, SIZE_MAX, lenp)) != NULL ? 0 : -1;
}

/* Write a string table entry; its index. */
static int64_t
put_string(struct pprof *pp, const char *s, size_t len)
{
	ht_pb_bytes(&pp->out, PROFILE_STRING_TABLE, s, len);
	return pp->nstrings++;
}

static int
string_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->strings[id].len == pp->key_len &&
	    memcmp(pp->strings[id].s, pp->key_s, pp->key_len) == 0;
}

/* The index of s in the string table, written if new.  Returns the index,
 * or -1 when out of memory. */
int64_t
ht_pprof_intern(struct pprof *pp, const char *s)
{
	size_t len;
	uint64_t h;
	int64_t id;
	char *copy;
	void *p;

	if (sanitize(s, &copy, &len) != 0)
		return -1;
	h = ht_view_hash(HT_VIEW_HASH0, copy, len);
	pp->key_s = copy;
	pp->key_len = len;
	if ((id = ht_view_index_find(&pp->string_index, h, string_eq, pp)) >=
	    0) {
		free(copy);
		return pp->strings[id].id;
	}
	if ((p = grow(pp->strings, &pp->strings_cap, pp->nkept,
		 sizeof(*pp->strings))) == NULL) {
		free(copy);
		return -1;
	}
	pp->strings = p;
	if (ht_view_index_add(&pp->string_index, h, (uint32_t)pp->nkept) != 0) {
		free(copy);
		return -1;
	}
	pp->strings[pp->nkept].s = copy;
	pp->strings[pp->nkept].len = len;
	pp->strings[pp->nkept].id = put_string(pp, copy, len);
	return pp->strings[pp->nkept++].id;
}

/* A string written without looking it up (one that cannot repeat).
 * Returns its index, or -1 when out of memory. */
static int64_t
unique_string(struct pprof *pp, const char *s)
{
	size_t i, len;
	int64_t id;
	char *copy;

	/* A name made from an address is plain ASCII but for the module's
	 * name: check before copying. */
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			break;
	if (s[i] == '\0')
		return put_string(pp, s, i);
	if (sanitize(s, &copy, &len) != 0)
		return -1;
	id = put_string(pp, copy, len);
	free(copy);
	return id;
}

/* Write function (name, filename); its id. */
static uint64_t
put_function(struct pprof *pp, int64_t name, int64_t filename)
{
	struct ht_pb *m = &pp->line;

	ht_pb_reset(m);
	ht_pb_uint(m, FUNCTION_ID, ++pp->nfunctions);
	ht_pb_int(m, FUNCTION_NAME, name);
	/* The symbolizer gives the demangled name only. */
	ht_pb_int(m, FUNCTION_SYSTEM_NAME, name);
	ht_pb_int(m, FUNCTION_FILENAME, filename);
	ht_pb_message(&pp->out, PROFILE_FUNCTION, m);
	return pp->nfunctions;
}

static int
function_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->functions[id].name == pp->key_function.name &&
	    pp->functions[id].filename == pp->key_function.filename;
}

/* The id of the function (name, file), written if new; or 0 when out of
 * memory (ids start at 1).  With unique, written without looking it up
 * (a name made from an address, which no other location has). */
uint64_t
ht_pprof_function(struct pprof *pp, const char *name, const char *file,
    int unique)
{
	struct pfunction f;
	uint64_t h;
	int64_t id;
	void *p;

	f.name = unique ? unique_string(pp, name) : ht_pprof_intern(pp, name);
	/* string_table[0] is "". */
	if (f.name < 0 ||
	    (f.filename = file != NULL ? ht_pprof_intern(pp, file) : 0) < 0)
		return 0;
	if (unique)
		return put_function(pp, f.name, f.filename);
	h = ht_view_hash(HT_VIEW_HASH0, &f.name, sizeof(f.name));
	h = ht_view_hash(h, &f.filename, sizeof(f.filename));
	pp->key_function = f;
	if ((id = ht_view_index_find(&pp->function_index, h, function_eq,
		 pp)) >= 0)
		return pp->functions[id].id;
	if ((p = grow(pp->functions, &pp->functions_cap, pp->nfkept,
		 sizeof(*pp->functions))) == NULL)
		return 0;
	pp->functions = p;
	if (ht_view_index_add(&pp->function_index, h, (uint32_t)pp->nfkept) !=
	    0)
		return 0;
	f.id = put_function(pp, f.name, f.filename);
	pp->functions[pp->nfkept++] = f;
	return f.id;
}
