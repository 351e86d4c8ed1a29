/*
 * The pprof export (see pprof.h).
 *
 * The tables of profile.proto (strings, functions, locations) refer to each
 * other by index or id, and the string table must hold every string before
 * it is written; so the samples are encoded first, filling the tables as
 * they meet new addresses, and the profile is put together at the end:
 * sample types, samples, mappings, locations, functions, strings, then the
 * informational fields.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "pb.h"
#include "pprof.h"
#include "text.h"

/* The modules whose unseen allocators become comments. */
#define MAX_UNSEEN 8

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

struct pstring {
	char *s;
	size_t len;
};

struct pfunction {
	int64_t name;
	int64_t filename;
};

struct pline {
	uint64_t function; /* id */
	int64_t line;
};

struct plocation {
	uint64_t address; /* as recorded; 0 for a made-up one */
	uint64_t mapping; /* id, or 0 */
	size_t line0;	  /* first of its lines */
	size_t nlines;
};

/* What the frames of a mapping told about its symbols. */
struct pmapping {
	int functions;
	int filenames;
	int line_numbers;
};

struct pprof {
	struct ht_view *v;
	struct pstring *strings;
	size_t nstrings;
	size_t strings_cap;
	struct ht_view_index string_index;
	struct pfunction *functions;
	size_t nfunctions;
	size_t functions_cap;
	struct ht_view_index function_index;
	struct plocation *locations;
	size_t nlocations;
	size_t locations_cap;
	struct ht_view_index location_index;
	struct pline *lines;
	size_t nlines;
	size_t lines_cap;
	struct pmapping *mappings; /* one per profile module */
	size_t *by_start;	   /* module indexes by start */
	/* For the index callbacks: the key being looked up. */
	const char *key_s;
	size_t key_len;
	struct pfunction key_function;
	uint64_t key_address;
};

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

static int
string_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->strings[id].len == pp->key_len &&
	    memcmp(pp->strings[id].s, pp->key_s, pp->key_len) == 0;
}

/*
 * The index of s in the string table, adding it if new.  protobuf strings
 * are UTF-8: ill-formed bytes (a legacy encoding in a path or a name)
 * become '?'; so do control characters (C0, DEL, C1), which pprof prints
 * to a terminal as they are.  Returns the index, or -1 when out of memory.
 */
static int64_t
intern(struct pprof *pp, const char *s)
{
	size_t i, n, len;
	uint64_t h;
	int64_t id;
	char *copy;
	void *p;

	len = strlen(s);
	if ((copy = malloc(len + 1)) == NULL)
		goto out_nomem;
	for (i = 0; i < len; i += n) {
		n = ht_json_utf8_len(s + i, len - i);
		if (n == 0 ||
		    (n == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))) {
			copy[i] = '?';
			n = 1;
		} else if (ht_json_is_c1(s + i, n))
			memcpy(copy + i, "??", 2);
		else
			memcpy(copy + i, s + i, n);
	}
	copy[len] = '\0';
	h = ht_view_hash(HT_VIEW_HASH0, copy, len);
	pp->key_s = copy;
	pp->key_len = len;
	if ((id = ht_view_index_find(&pp->string_index, h, string_eq, pp)) >=
	    0) {
		free(copy);
		return id;
	}
	if ((p = grow(pp->strings, &pp->strings_cap, pp->nstrings,
		 sizeof(*pp->strings))) == NULL) {
		free(copy);
		goto out_nomem;
	}
	pp->strings = p;
	if (ht_view_index_add(&pp->string_index, h, (uint32_t)pp->nstrings) !=
	    0) {
		free(copy);
		goto out_nomem;
	}
	pp->strings[pp->nstrings].s = copy;
	pp->strings[pp->nstrings].len = len;
	return (int64_t)pp->nstrings++;

out_nomem:
	errno = ENOMEM;
	return -1;
}

static int
function_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->functions[id].name == pp->key_function.name &&
	    pp->functions[id].filename == pp->key_function.filename;
}

/* The id of the function (name, filename), adding it if new; or 0 when out
 * of memory (ids start at 1). */
static uint64_t
function_id(struct pprof *pp, const char *name, const char *file)
{
	struct pfunction f;
	uint64_t h;
	int64_t id;
	void *p;

	if ((f.name = intern(pp, name)) < 0 ||
	    (f.filename = intern(pp, file != NULL ? file : "")) < 0)
		return 0;
	h = ht_view_hash(HT_VIEW_HASH0, &f.name, sizeof(f.name));
	h = ht_view_hash(h, &f.filename, sizeof(f.filename));
	pp->key_function = f;
	if ((id = ht_view_index_find(&pp->function_index, h, function_eq,
		 pp)) >= 0)
		return (uint64_t)id + 1;
	if ((p = grow(pp->functions, &pp->functions_cap, pp->nfunctions,
		 sizeof(*pp->functions))) == NULL)
		return 0;
	pp->functions = p;
	if (ht_view_index_add(&pp->function_index, h,
		(uint32_t)pp->nfunctions) != 0)
		return 0;
	pp->functions[pp->nfunctions++] = f;
	return pp->nfunctions;
}

static int
add_line(struct pprof *pp, uint64_t function, int64_t line)
{
	void *p;

	if ((p = grow(pp->lines, &pp->lines_cap, pp->nlines,
		 sizeof(*pp->lines))) == NULL)
		return -1;
	pp->lines = p;
	pp->lines[pp->nlines].function = function;
	pp->lines[pp->nlines].line = line;
	pp->nlines++;
	return 0;
}

/* A new location; its lines are the ones added after it.  Returns its id,
 * or 0 when out of memory. */
static uint64_t
new_location(struct pprof *pp, uint64_t address, uint64_t mapping)
{
	struct plocation *l;
	void *p;

	if ((p = grow(pp->locations, &pp->locations_cap, pp->nlocations,
		 sizeof(*pp->locations))) == NULL)
		return 0;
	pp->locations = p;
	l = &pp->locations[pp->nlocations++];
	l->address = address;
	l->mapping = mapping;
	l->line0 = pp->nlines;
	l->nlines = 0;
	return pp->nlocations;
}

/* The mapping id (module index + 1) of addr, or 0. */
static uint64_t
mapping_of(const struct pprof *pp, uint64_t addr)
{
	const struct ht_profile *prof = pp->v->prof;
	const struct ht_module_rec *m;
	size_t lo = 0, hi = prof->nmodules, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		m = &prof->modules[pp->by_start[mid]];
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return pp->by_start[mid] + 1;
	}
	return 0;
}

static int
location_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->locations[id].address == pp->key_address;
}

/*
 * The id of the location of return address addr, adding it (symbolized,
 * one line per frame, innermost first) if new; or 0 when out of memory.
 */
static uint64_t
location_id(struct pprof *pp, uint64_t addr)
{
	const struct ht_sym_frame *fr;
	struct pmapping *pm = NULL;
	char buf[4200];
	uint64_t h, id, mapping, fn;
	int64_t found;
	int i, n;

	h = ht_view_hash(HT_VIEW_HASH0, &addr, sizeof(addr));
	pp->key_address = addr;
	if ((found = ht_view_index_find(&pp->location_index, h, location_eq,
		 pp)) >= 0)
		return (uint64_t)found + 1;
	if ((n = ht_sym_lookup(pp->v->sym, addr, &fr)) < 0)
		return 0;
	mapping = mapping_of(pp, addr);
	if (mapping != 0)
		pm = &pp->mappings[mapping - 1];
	if ((id = new_location(pp, addr, mapping)) == 0)
		return 0;
	for (i = 0; i < n; i++) {
		fn = function_id(pp,
		    ht_view_frame_name(&fr[i], buf, sizeof(buf)), fr[i].file);
		if (fn == 0 ||
		    add_line(pp, fn, fr[i].line > 0 ? fr[i].line : 0) != 0)
			return 0;
		if (pm != NULL) {
			pm->functions |= fr[i].function != NULL;
			pm->filenames |= fr[i].file != NULL;
			pm->line_numbers |= fr[i].line > 0;
		}
	}
	pp->locations[id - 1].nlines = (size_t)n;
	if (ht_view_index_add(&pp->location_index, h, (uint32_t)(id - 1)) != 0)
		return 0;
	return id;
}

/* A location of its own for a row without frames, named after it. */
static uint64_t
made_up_location(struct pprof *pp, const struct ht_view_row *r)
{
	char buf[64];
	uint64_t id, fn;

	if ((id = new_location(pp, 0, 0)) == 0)
		return 0;
	if ((fn = function_id(pp, ht_view_row_name(r, buf, sizeof(buf)),
		 NULL)) == 0 ||
	    add_line(pp, fn, 0) != 0)
		return 0;
	pp->locations[id - 1].nlines = 1;
	return id;
}

static int64_t
clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Encode the samples into out, one per row, filling the tables. */
static int
encode_samples(struct pprof *pp, struct ht_pb *out)
{
	struct ht_view *v = pp->v;
	const struct ht_view_row *r;
	struct ht_pb sample, packed;
	uint32_t k, n;
	uint64_t id;
	size_t i;
	int rc = -1;

	ht_pb_init(&sample);
	ht_pb_init(&packed);
	for (i = 0; i < v->nrows; i++) {
		r = &v->rows[i];
		ht_pb_reset(&sample);
		ht_pb_reset(&packed);
		n = r->site == NULL ? 0 : r->site->nframes;
		if (n > HT_PROFILE_MAX_FRAMES)
			n = HT_PROFILE_MAX_FRAMES;
		/* The leaf first: the profile's frames are innermost first,
		 * as pprof wants them. */
		for (k = 0; k < n; k++) {
			if ((id = location_id(pp, r->site->frames[k])) == 0)
				goto out;
			ht_pb_varint(&packed, id);
		}
		if (n == 0) {
			if ((id = made_up_location(pp, r)) == 0)
				goto out;
			ht_pb_varint(&packed, id);
		}
		ht_pb_message(&sample, SAMPLE_LOCATION_ID, &packed);
		ht_pb_reset(&packed);
		ht_pb_varint(&packed, (uint64_t)clamp(r->f.alloc_objects));
		ht_pb_varint(&packed, (uint64_t)clamp(r->f.alloc_bytes));
		ht_pb_varint(&packed, (uint64_t)clamp(r->f.inuse_objects));
		ht_pb_varint(&packed, (uint64_t)clamp(r->f.inuse_bytes));
		ht_pb_message(&sample, SAMPLE_VALUE, &packed);
		ht_pb_message(out, PROFILE_SAMPLE, &sample);
	}
	rc = ht_pb_failed(out) ? -1 : 0;
out:
	ht_pb_free(&sample);
	ht_pb_free(&packed);
	if (rc != 0)
		errno = ENOMEM;
	return rc;
}

static void
value_type(struct ht_pb *out, uint32_t field, struct ht_pb *tmp, int64_t type,
    int64_t unit)
{
	ht_pb_reset(tmp);
	ht_pb_int(tmp, VALUE_TYPE_TYPE, type);
	ht_pb_int(tmp, VALUE_TYPE_UNIT, unit);
	ht_pb_message(out, field, tmp);
}

static void
encode_mappings(struct pprof *pp, struct ht_pb *out, struct ht_pb *tmp,
    const int64_t *filename, const int64_t *build_id)
{
	const struct ht_profile *prof = pp->v->prof;
	const struct ht_module_rec *m;
	const struct pmapping *pm;
	size_t i;

	for (i = 0; i < prof->nmodules; i++) {
		m = &prof->modules[i];
		pm = &pp->mappings[i];
		ht_pb_reset(tmp);
		ht_pb_uint(tmp, MAPPING_ID, i + 1);
		ht_pb_uint(tmp, MAPPING_MEMORY_START, m->start);
		ht_pb_uint(tmp, MAPPING_MEMORY_LIMIT, m->end);
		/* The lowest mapped address is the start of the first
		 * PT_LOAD segment, which the linker puts at file offset 0
		 * (it holds the ELF header). */
		ht_pb_uint(tmp, MAPPING_FILE_OFFSET, 0);
		ht_pb_int(tmp, MAPPING_FILENAME, filename[i]);
		ht_pb_int(tmp, MAPPING_BUILD_ID, build_id[i]);
		ht_pb_uint(tmp, MAPPING_HAS_FUNCTIONS, pm->functions);
		ht_pb_uint(tmp, MAPPING_HAS_FILENAMES, pm->filenames);
		ht_pb_uint(tmp, MAPPING_HAS_LINE_NUMBERS, pm->line_numbers);
		/* Lines come from DWARF, which gives the inlined calls. */
		ht_pb_uint(tmp, MAPPING_HAS_INLINE_FRAMES, pm->line_numbers);
		ht_pb_message(out, PROFILE_MAPPING, tmp);
	}
}

static void
encode_locations(struct pprof *pp, struct ht_pb *out, struct ht_pb *tmp,
    struct ht_pb *line)
{
	const struct plocation *l;
	const struct pline *ln;
	size_t i, j;

	for (i = 0; i < pp->nlocations; i++) {
		l = &pp->locations[i];
		ht_pb_reset(tmp);
		ht_pb_uint(tmp, LOCATION_ID, i + 1);
		if (l->mapping != 0)
			ht_pb_uint(tmp, LOCATION_MAPPING_ID, l->mapping);
		/* A return address points after the call; address - 1 is
		 * inside it, where the lines were looked up. */
		if (l->address != 0)
			ht_pb_uint(tmp, LOCATION_ADDRESS, l->address - 1);
		for (j = 0; j < l->nlines; j++) {
			ln = &pp->lines[l->line0 + j];
			ht_pb_reset(line);
			ht_pb_uint(line, LINE_FUNCTION_ID, ln->function);
			if (ln->line > 0)
				ht_pb_int(line, LINE_LINE, ln->line);
			ht_pb_message(tmp, LOCATION_LINE, line);
		}
		ht_pb_message(out, PROFILE_LOCATION, tmp);
	}
}

static void
encode_functions(struct pprof *pp, struct ht_pb *out, struct ht_pb *tmp)
{
	const struct pfunction *f;
	size_t i;

	for (i = 0; i < pp->nfunctions; i++) {
		f = &pp->functions[i];
		ht_pb_reset(tmp);
		ht_pb_uint(tmp, FUNCTION_ID, i + 1);
		ht_pb_int(tmp, FUNCTION_NAME, f->name);
		/* The symbolizer gives the demangled name only. */
		ht_pb_int(tmp, FUNCTION_SYSTEM_NAME, f->name);
		ht_pb_int(tmp, FUNCTION_FILENAME, f->filename);
		ht_pb_message(out, PROFILE_FUNCTION, tmp);
	}
}

static int
by_start_cmp_ctx(const struct ht_module_rec *mods, size_t a, size_t b)
{
	if (mods[a].start != mods[b].start)
		return mods[a].start < mods[b].start ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Sort the module indexes by start (insertion sort: a few dozen). */
static void
sort_by_start(const struct ht_module_rec *mods, size_t *idx, size_t n)
{
	size_t i, j, t;

	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = 1; i < n; i++)
		for (j = i;
		     j > 0 && by_start_cmp_ctx(mods, idx[j - 1], idx[j]) > 0;
		     j--) {
			t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
}

enum {
	S_ALLOC_OBJECTS,
	S_ALLOC_SPACE,
	S_INUSE_OBJECTS,
	S_INUSE_SPACE,
	S_COUNT,
	S_BYTES,
	S_SPACE,
	NFIXED
};

static const char *const fixed_strings[NFIXED] = {
	"alloc_objects",
	"alloc_space",
	"inuse_objects",
	"inuse_space",
	"count",
	"bytes",
	"space",
};

int
ht_pprof_write(FILE *fp, struct ht_view *v)
{
	const struct ht_profile *prof = v->prof;
	const struct ht_meta *m = &prof->meta;
	struct ht_pb out, samples, tmp, line;
	struct pprof pp;
	int64_t fixed[NFIXED], comments[8 + 2 * MAX_UNSEEN], *filename = NULL,
							     *build_id = NULL;
	char text[600], hex[2 * HT_PROFILE_MAX_BUILD_ID + 1];
	size_t i, j, ncomments = 0;
	uint32_t idlen;
	int64_t deftype;
	int kind;
	int rc = -1;

	memset(&pp, 0, sizeof(pp));
	pp.v = v;
	ht_pb_init(&out);
	ht_pb_init(&samples);
	ht_pb_init(&tmp);
	ht_pb_init(&line);
	/* string_table[0] must be "". */
	if (intern(&pp, "") != 0)
		goto out;
	for (i = 0; i < NFIXED; i++)
		if ((fixed[i] = intern(&pp, fixed_strings[i])) < 0)
			goto out;
	pp.mappings = calloc(prof->nmodules + 1, sizeof(*pp.mappings));
	pp.by_start = calloc(prof->nmodules + 1, sizeof(*pp.by_start));
	filename = calloc(prof->nmodules + 1, sizeof(*filename));
	build_id = calloc(prof->nmodules + 1, sizeof(*build_id));
	if (pp.mappings == NULL || pp.by_start == NULL || filename == NULL ||
	    build_id == NULL)
		goto out_nomem;
	sort_by_start(prof->modules, pp.by_start, prof->nmodules);
	for (i = 0; i < prof->nmodules; i++) {
		idlen = prof->modules[i].build_id_len;
		if (idlen > HT_PROFILE_MAX_BUILD_ID)
			idlen = HT_PROFILE_MAX_BUILD_ID;
		for (j = 0; j < idlen; j++)
			snprintf(hex + 2 * j, 3, "%02x",
			    prof->modules[i].build_id[j]);
		hex[2 * idlen] = '\0';
		if ((filename[i] = intern(&pp, prof->modules[i].path)) < 0 ||
		    (build_id[i] = intern(&pp, hex)) < 0)
			goto out;
	}

	if (encode_samples(&pp, &samples) != 0)
		goto out;

	snprintf(text, sizeof(text),
	    "heaptool %s: pid %" PRIu64 " (%.*s), "
	    "session %" PRIu64 ", rate %" PRIu64 "%s",
	    PACKAGE_VERSION, m->pid,
	    (int)strnlen(m->command, sizeof(m->command)), m->command, m->epoch,
	    m->rate,
	    v->exact	 ? " (exact)" :
		v->every ? " (every allocation, NOT EXACT: samples dropped)" :
			   " (estimates)");
	if ((comments[ncomments++] = intern(&pp, text)) < 0)
		goto out;
	if (m->dropped_samples > 0) {
		ht_text_drop_line(m, text, sizeof(text));
		if ((comments[ncomments++] = intern(&pp, text)) < 0)
			goto out;
	}
	if (v->opts.at_peak) {
		snprintf(text, sizeof(text),
		    "in use at the peak; allocated "
		    "over the whole session");
		if ((comments[ncomments++] = intern(&pp, text)) < 0)
			goto out;
	}
	if (v->nrows > 0 && v->rows[v->nrows - 1].site == NULL) {
		snprintf(text, sizeof(text),
		    "%zu smaller sites folded into "
		    "one sample",
		    v->rows[v->nrows - 1].nfolded);
		if ((comments[ncomments++] = intern(&pp, text)) < 0)
			goto out;
	}
	/* The allocators the hooks do not reach, as the text report says
	 * them (the first MAX_UNSEEN modules). */
	for (i = 0; i < prof->nallocators && i < MAX_UNSEEN; i++)
		for (kind = 0; kind < 2; kind++) {
			if (ht_text_unseen_line(text, sizeof(text), kind,
				prof->allocators[i].names,
				prof->allocators[i].path) != 0)
				continue;
			if ((comments[ncomments++] = intern(&pp, text)) < 0)
				goto out;
		}
	deftype = v->opts.sort == HT_VIEW_ALLOC ? fixed[S_ALLOC_SPACE] :
	    v->opts.sort == HT_VIEW_OBJECTS	? fixed[S_INUSE_OBJECTS] :
						  fixed[S_INUSE_SPACE];

	/* Put the profile together, in field order. */
	value_type(&out, PROFILE_SAMPLE_TYPE, &tmp, fixed[S_ALLOC_OBJECTS],
	    fixed[S_COUNT]);
	value_type(&out, PROFILE_SAMPLE_TYPE, &tmp, fixed[S_ALLOC_SPACE],
	    fixed[S_BYTES]);
	value_type(&out, PROFILE_SAMPLE_TYPE, &tmp, fixed[S_INUSE_OBJECTS],
	    fixed[S_COUNT]);
	value_type(&out, PROFILE_SAMPLE_TYPE, &tmp, fixed[S_INUSE_SPACE],
	    fixed[S_BYTES]);
	/* The samples are already fields of a Profile: append them. */
	ht_pb_append(&out, &samples);
	encode_mappings(&pp, &out, &tmp, filename, build_id);
	encode_locations(&pp, &out, &tmp, &line);
	encode_functions(&pp, &out, &tmp);
	for (i = 0; i < pp.nstrings; i++)
		ht_pb_bytes(&out, PROFILE_STRING_TABLE, pp.strings[i].s,
		    pp.strings[i].len);
	if (m->start_ns != 0)
		ht_pb_int(&out, PROFILE_TIME_NANOS, clamp(m->start_ns));
	if (m->start_ns != 0 && m->end_ns >= m->start_ns)
		ht_pb_int(&out, PROFILE_DURATION_NANOS,
		    clamp(m->end_ns - m->start_ns));
	value_type(&out, PROFILE_PERIOD_TYPE, &tmp, fixed[S_SPACE],
	    fixed[S_BYTES]);
	ht_pb_int(&out, PROFILE_PERIOD, clamp(m->rate));
	for (i = 0; i < ncomments; i++)
		ht_pb_int(&out, PROFILE_COMMENT, comments[i]);
	ht_pb_int(&out, PROFILE_DEFAULT_SAMPLE_TYPE, deftype);
	if (ht_pb_failed(&out) || ht_pb_failed(&tmp) || ht_pb_failed(&line))
		goto out_nomem;
	rc = ht_pb_gzip(fp, out.buf, out.len);
	goto out;

out_nomem:
	errno = ENOMEM;
out:
	for (i = 0; i < pp.nstrings; i++)
		free(pp.strings[i].s);
	free(pp.strings);
	free(pp.functions);
	free(pp.locations);
	free(pp.lines);
	free(pp.mappings);
	free(pp.by_start);
	free(filename);
	free(build_id);
	ht_view_index_free(&pp.string_index);
	ht_view_index_free(&pp.function_index);
	ht_view_index_free(&pp.location_index);
	ht_pb_free(&out);
	ht_pb_free(&samples);
	ht_pb_free(&tmp);
	ht_pb_free(&line);
	return rc;
}
