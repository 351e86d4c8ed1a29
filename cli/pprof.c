/*
 * The pprof export (see pprof.h).
 *
 * A Profile's fields may come in any order, and a repeated one is the
 * concatenation of its occurrences (protobuf's rules; pprof's own reader
 * resolves the ids and string indexes once it has them all).  So the
 * profile is written as it is made, through one gzip stream: each string,
 * function and location when it is first met, each sample after its
 * locations, the mappings at the end (what their frames told about their
 * symbols is known only then).  Nothing is held but what deduplicates:
 * the strings and functions that can repeat (those of symbolized frames,
 * which the symbolizer's limit bounds) and one 8-byte slot per address for
 * the locations.  An address that nothing is known of (no function, no
 * file: its module's file missing, or past the symbolizer's limit) has a
 * location of its address and mapping only, no line, as pprof's own
 * unsymbolized profiles do: pprof names it by address and module, and can
 * symbolize it where the file is.  A frame with a file but no function is
 * named after its address (module+0xoffset), and that string and function
 * are written once, with its location, and never looked up.
 */
#include "config.h"

#include <sys/mman.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "pb.h"
#include "pprof.h"
#include "text.h"

#include "pprof-int.h"

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

static uint64_t
hash_addr(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	a *= 0xc4ceb9fe1a85ec53ULL;
	a ^= a >> 33;
	return a;
}

/*
 * Size the table for n addresses.  A table of millions of slots is
 * asked for in huge pages: each lookup is a miss of the caches, and
 * without them of the TLB too.  Returns 0, or -1 (ENOMEM).
 */
static int
locs_init(struct plocs *l, uint64_t n)
{
	size_t bytes, huge = (size_t)2 << 20;
	void *p = NULL;

	l->cap = (size_t)(n + n / 4 + 16);
	bytes = l->cap * sizeof(*l->slots);
	if (bytes >= huge) {
		bytes = (bytes + huge - 1) / huge * huge;
		if (posix_memalign(&p, huge, bytes) != 0)
			p = NULL;
		else {
			(void)madvise(p, bytes, MADV_HUGEPAGE);
			memset(p, 0, bytes);
		}
	} else
		p = calloc(l->cap, sizeof(*l->slots));
	if ((l->slots = p) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The first slot to look at for addr. */
static size_t
locs_home(const struct plocs *l, uint64_t addr)
{
	return (size_t)(((hash_addr(addr) >> 32) * l->cap) >> 32);
}

/* The slot of addr (not 0): where it is, or the empty one it would go
 * to; the table never fills (it has room for every frame). */
static size_t
locs_slot(const struct plocs *l, uint64_t addr)
{
	size_t i = locs_home(l, addr);

	while (l->slots[i] != 0 && l->slots[i] != addr)
		if (++i == l->cap)
			i = 0;
	return i;
}

/* Write the location of addr, symbolized, one line per frame, innermost
 * first, from its frame skip on (those before are allocator wrappers
 * folded).  Returns 0, or -1 when out of memory. */
static int
put_location(struct pprof *pp, uint64_t id, uint64_t addr, int skip)
{
	const struct ht_sym_frame *fr;
	struct pmapping *pm = NULL;
	char buf[4200];
	uint64_t mapping, fn;
	int i, n;

	if ((n = ht_sym_lookup(pp->v->sym, addr, &fr)) < 0)
		return -1;
	if ((mapping = mapping_of(pp, addr)) != 0)
		pm = &pp->mappings[mapping - 1];
	ht_pb_reset(&pp->loc);
	ht_pb_uint(&pp->loc, LOCATION_ID, id);
	if (mapping != 0)
		ht_pb_uint(&pp->loc, LOCATION_MAPPING_ID, mapping);
	/* A return address points after the call; address - 1 is inside
	 * it, where the lines were looked up. */
	if (addr != 0)
		ht_pb_uint(&pp->loc, LOCATION_ADDRESS, addr - 1);
	/* Nothing known: the address says it all, and a string and a
	 * function each would be most of the export of a profile of
	 * millions of such frames. */
	if (addr != 0 && n == 1 && fr[0].function == NULL && fr[0].file == NULL)
		n = 0;
	for (i = skip < n ? skip : 0; i < n; i++) {
		/* fr stays valid: no lookup until the next location. */
		fn = ht_pprof_function(pp,
		    ht_view_frame_name(&fr[i], buf, sizeof(buf)), fr[i].file,
		    fr[i].function == NULL);
		if (fn == 0)
			return -1;
		ht_pb_reset(&pp->line);
		ht_pb_uint(&pp->line, LINE_FUNCTION_ID, fn);
		if (fr[i].line > 0)
			ht_pb_int(&pp->line, LINE_LINE, fr[i].line);
		ht_pb_message(&pp->loc, LOCATION_LINE, &pp->line);
		if (pm != NULL) {
			pm->functions |= fr[i].function != NULL;
			pm->filenames |= fr[i].file != NULL;
			pm->line_numbers |= fr[i].line > 0;
		}
	}
	ht_pb_message(&pp->out, PROFILE_LOCATION, &pp->loc);
	return 0;
}

/* The id of the location of return address addr, written if new; or 0
 * when out of memory. */
static uint64_t
location_id(struct pprof *pp, uint64_t addr)
{
	struct plocs *l = &pp->locs;
	uint64_t id;
	size_t i;

	if (addr == 0) {
		id = l->cap + 1;
		if (!l->have_zero && put_location(pp, id, 0, 0) != 0)
			return 0;
		l->have_zero = 1;
		return id;
	}
	i = locs_slot(l, addr);
	id = i + 1;
	if (l->slots[i] == 0) {
		if (put_location(pp, id, addr, 0) != 0)
			return 0;
		l->slots[i] = addr;
	}
	return id;
}

/* A location of its own for return address addr without its first skip
 * frames (inlined allocator wrappers folded), one per address: other
 * sites' stacks through addr keep the whole location.  Returns its id, or
 * 0 when out of memory. */
static int
folded_eq(void *ctx, uint32_t id)
{
	struct pprof *pp = ctx;

	return pp->folded_addrs[id] == pp->key_addr;
}

static uint64_t
folded_location(struct pprof *pp, uint64_t addr, int skip)
{
	uint64_t h = ht_view_hash(HT_VIEW_HASH0, &addr, sizeof(addr)), id;
	size_t cap;
	int64_t i;
	void *p;

	pp->key_addr = addr;
	if ((i = ht_view_index_find(&pp->folded_index, h, folded_eq, pp)) >= 0)
		return pp->folded_ids[i];
	if (pp->nfolded == pp->folded_cap) {
		cap = pp->folded_cap == 0 ? 64 : pp->folded_cap * 2;
		if ((p = reallocarray(pp->folded_addrs, cap,
			 sizeof(uint64_t))) == NULL)
			return 0;
		pp->folded_addrs = p;
		if ((p = reallocarray(pp->folded_ids, cap, sizeof(uint64_t))) ==
		    NULL)
			return 0;
		pp->folded_ids = p;
		pp->folded_cap = cap;
	}
	id = pp->locs.cap + 2 + pp->made_up++;
	if (put_location(pp, id, addr, skip) != 0 ||
	    ht_view_index_add(&pp->folded_index, h, (uint32_t)pp->nfolded) != 0)
		return 0;
	pp->folded_addrs[pp->nfolded] = addr;
	pp->folded_ids[pp->nfolded++] = id;
	return id;
}

/* A location of its own for a row without frames, named after it. */
static uint64_t
made_up_location(struct pprof *pp, const struct ht_view_row *r)
{
	char buf[64];
	uint64_t id, fn;

	id = pp->locs.cap + 2 + pp->made_up++;
	if ((fn = ht_pprof_function(pp, ht_view_row_name(r, buf, sizeof(buf)),
		 NULL, 0)) == 0)
		return 0;
	ht_pb_reset(&pp->line);
	ht_pb_uint(&pp->line, LINE_FUNCTION_ID, fn);
	ht_pb_reset(&pp->loc);
	ht_pb_uint(&pp->loc, LOCATION_ID, id);
	ht_pb_message(&pp->loc, LOCATION_LINE, &pp->line);
	ht_pb_message(&pp->out, PROFILE_LOCATION, &pp->loc);
	return id;
}

static int64_t
clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static uint32_t
row_nframes(const struct ht_view_row *r)
{
	uint32_t n = r->site == NULL ? 0 : r->site->nframes;

	return n > HT_PROFILE_MAX_FRAMES ? HT_PROFILE_MAX_FRAMES : n;
}

/*
 * A cursor over the frames of every row, PREFETCH_AHEAD frames ahead of
 * the lookups, asking for each one's slot: the misses of the table (one a
 * lookup, on a profile of millions of distinct addresses) overlap one
 * another and the work in between, where one lookup after the other waited
 * for each (three quarters of the export's time).  One at a time: a burst
 * of a site's 64 asked more than the processor keeps in flight.
 */
#define PREFETCH_AHEAD 16

struct ahead {
	size_t row;
	uint32_t k;
};

static void
ahead_step(const struct pprof *pp, struct ahead *a)
{
	const struct ht_view *v = pp->v;

	while (a->row < v->nrows && a->k >= row_nframes(&v->rows[a->row])) {
		a->row++;
		a->k = 0;
	}
	if (a->row == v->nrows)
		return;
	__builtin_prefetch(&pp->locs.slots[locs_home(&pp->locs,
	    v->rows[a->row].site->frames[a->k])]);
	a->k++;
}

/* One label of the sample being made: key and str, interned. */
static int
put_label(struct pprof *pp, const char *key, const char *str)
{
	int64_t k, v;

	if ((k = ht_pprof_intern(pp, key)) < 0 ||
	    (v = ht_pprof_intern(pp, str)) < 0)
		return -1;
	ht_pb_reset(&pp->packed);
	ht_pb_int(&pp->packed, LABEL_KEY, k);
	ht_pb_int(&pp->packed, LABEL_STR, v);
	ht_pb_message(&pp->sample, SAMPLE_LABEL, &pp->packed);
	return 0;
}

/* The labels "tag" and "kind" of row r's sample, where the profile has
 * tags (none on the fold, whose sites may have several). */
static int
put_labels(struct pprof *pp, const struct ht_view_row *r)
{
	char buf[32];

	if (!pp->v->has_tags || r->site == NULL)
		return 0;
	if (put_label(pp, "tag",
		ht_view_tag_name(pp->v, r->site->tag, buf, sizeof(buf))) != 0 ||
	    put_label(pp, "kind", ht_view_kind_name(r->site->kind)) != 0)
		return -1;
	return 0;
}

/* Write the samples, one per row, and the locations they meet first. */
static int
put_samples(struct pprof *pp)
{
	struct ht_view *v = pp->v;
	struct ht_pb *smp = &pp->sample, *packed = &pp->packed;
	const struct ht_view_row *r;
	struct ahead ahead = { 0, 0 };
	struct ht_view_at at;
	uint64_t id, nframes = 0;
	uint32_t k, n;
	size_t i;

	for (i = 0; i < v->nrows; i++)
		nframes += row_nframes(&v->rows[i]);
	if (locs_init(&pp->locs, nframes) != 0)
		return -1;
	for (k = 0; k < PREFETCH_AHEAD; k++)
		ahead_step(pp, &ahead);
	for (i = 0; i < v->nrows; i++) {
		r = &v->rows[i];
		ht_pb_reset(smp);
		ht_pb_reset(packed);
		n = row_nframes(r);
		/* The stack from the first frame outside the allocator
		 * wrappers: the locations of the addresses before it left
		 * out, the frames before it in its own. */
		if (ht_view_fold(v, r, &at) < 0)
			return -1;
		for (k = 0; k < at.addr; k++)
			ahead_step(pp, &ahead);
		/* The leaf first: the profile's frames are innermost first,
		 * as pprof wants them. */
		for (k = at.addr; k < n; k++) {
			ahead_step(pp, &ahead);
			if (k == at.addr && at.frame > 0)
				id = folded_location(pp, r->site->frames[k],
				    at.frame);
			else
				id = location_id(pp, r->site->frames[k]);
			if (id == 0)
				return -1;
			ht_pb_varint(packed, id);
		}
		if (n == 0) {
			if ((id = made_up_location(pp, r)) == 0)
				return -1;
			ht_pb_varint(packed, id);
		}
		ht_pb_message(smp, SAMPLE_LOCATION_ID, packed);
		ht_pb_reset(packed);
		if (pp->values != NULL)
			/* int64 fields: a negative value is its 64-bit two's
			 * complement as a varint. */
			for (k = 0; k < 4; k++)
				ht_pb_varint(packed,
				    (uint64_t)pp->values[i][k]);
		else {
			ht_pb_varint(packed,
			    (uint64_t)clamp(r->f.alloc_objects));
			ht_pb_varint(packed, (uint64_t)clamp(r->f.alloc_bytes));
			ht_pb_varint(packed,
			    (uint64_t)clamp(r->f.inuse_objects));
			ht_pb_varint(packed, (uint64_t)clamp(r->f.inuse_bytes));
		}
		ht_pb_message(smp, SAMPLE_VALUE, packed);
		if (put_labels(pp, r) != 0)
			return -1;
		ht_pb_message(&pp->out, PROFILE_SAMPLE, smp);
		ht_pprof_flush(pp, 1 << 16);
	}
	return 0;
}

static void
value_type(struct pprof *pp, uint32_t field, int64_t type, int64_t unit)
{
	ht_pb_reset(&pp->line);
	ht_pb_int(&pp->line, VALUE_TYPE_TYPE, type);
	ht_pb_int(&pp->line, VALUE_TYPE_UNIT, unit);
	ht_pb_message(&pp->out, field, &pp->line);
}

/* The mappings, one per module, now that their frames are known. */
static int
put_mappings(struct pprof *pp)
{
	const struct ht_profile *prof = pp->v->prof;
	const struct ht_module_rec *m;
	const struct pmapping *pm;
	char hex[2 * HT_PROFILE_MAX_BUILD_ID + 1];
	struct ht_pb *t = &pp->loc;
	int64_t filename, build_id;
	uint32_t idlen, j;
	size_t i;

	for (i = 0; i < prof->nmodules; i++) {
		m = &prof->modules[i];
		pm = &pp->mappings[i];
		idlen = m->build_id_len < HT_PROFILE_MAX_BUILD_ID ?
		    m->build_id_len :
		    HT_PROFILE_MAX_BUILD_ID;
		for (j = 0; j < idlen; j++) {
			hex[2 * j] = "0123456789abcdef"[m->build_id[j] >> 4];
			hex[2 * j + 1] =
			    "0123456789abcdef"[m->build_id[j] & 15];
		}
		hex[2 * idlen] = '\0';
		if ((filename = ht_pprof_intern(pp, m->path)) < 0 ||
		    (build_id = ht_pprof_intern(pp, hex)) < 0)
			return -1;
		ht_pb_reset(t);
		ht_pb_uint(t, MAPPING_ID, i + 1);
		ht_pb_uint(t, MAPPING_MEMORY_START, m->start);
		ht_pb_uint(t, MAPPING_MEMORY_LIMIT, m->end);
		/* The lowest mapped address is the start of the first
		 * PT_LOAD segment, which the linker puts at file offset 0
		 * (it holds the ELF header). */
		ht_pb_uint(t, MAPPING_FILE_OFFSET, 0);
		ht_pb_int(t, MAPPING_FILENAME, filename);
		ht_pb_int(t, MAPPING_BUILD_ID, build_id);
		ht_pb_uint(t, MAPPING_HAS_FUNCTIONS, pm->functions);
		ht_pb_uint(t, MAPPING_HAS_FILENAMES, pm->filenames);
		ht_pb_uint(t, MAPPING_HAS_LINE_NUMBERS, pm->line_numbers);
		/* Lines come from DWARF, which gives the inlined calls. */
		ht_pb_uint(t, MAPPING_HAS_INLINE_FRAMES, pm->line_numbers);
		ht_pb_message(&pp->out, PROFILE_MAPPING, t);
		ht_pprof_flush(pp, 1 << 16);
	}
	return 0;
}

static int
by_start_cmp_ctx(const struct ht_module_rec *mods, size_t a, size_t b)
{
	if (mods[a].start != mods[b].start)
		return mods[a].start < mods[b].start ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* For the sort of module indexes by start. */
static const struct ht_module_rec *sort_mods;

static int
by_start(const void *a, const void *b)
{
	return by_start_cmp_ctx(sort_mods, *(const size_t *)a,
	    *(const size_t *)b);
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

/* The informational fields after the samples: times, period, comments. */
static int
put_trailer(struct pprof *pp, const int64_t *fixed)
{
	struct ht_view *v = pp->v;
	const struct ht_meta *m = &v->prof->meta;
	int64_t comments[8 + 2 * MAX_UNSEEN], deftype;
	size_t i, ncomments = 0;
	int kind;
	char text[600];

	snprintf(text, sizeof(text),
	    "heaptool %s: pid %" PRIu64 " (%.*s), "
	    "session %" PRIu64 ", rate %" PRIu64 "%s",
	    PACKAGE_VERSION, m->pid,
	    (int)strnlen(m->command, sizeof(m->command)), m->command, m->epoch,
	    m->rate,
	    v->exact	 ? " (exact)" :
		v->every ? " (every allocation, NOT EXACT: samples dropped)" :
			   " (estimates)");
	if ((comments[ncomments++] = ht_pprof_intern(pp, text)) < 0)
		return -1;
	if (pp->values != NULL) {
		snprintf(text, sizeof(text),
		    "delta over %.3f s: the later profile minus the earlier, "
		    "sites that did not change left out",
		    (double)pp->delta_ns / 1e9);
		if ((comments[ncomments++] = ht_pprof_intern(pp, text)) < 0)
			return -1;
	}
	if (m->dropped_samples > 0) {
		ht_text_drop_line(m, text, sizeof(text));
		if ((comments[ncomments++] = ht_pprof_intern(pp, text)) < 0)
			return -1;
	}
	if (v->opts.at_peak) {
		snprintf(text, sizeof(text),
		    "in use at the peak; allocated "
		    "over the whole session");
		if ((comments[ncomments++] = ht_pprof_intern(pp, text)) < 0)
			return -1;
	}
	if (v->nrows > 0 && v->rows[v->nrows - 1].site == NULL) {
		snprintf(text, sizeof(text),
		    "%zu smaller sites folded into "
		    "one sample",
		    v->rows[v->nrows - 1].nfolded);
		if ((comments[ncomments++] = ht_pprof_intern(pp, text)) < 0)
			return -1;
	}
	/* The allocators the hooks do not reach, as the text report says
	 * them (the first MAX_UNSEEN modules). */
	for (i = 0; i < v->prof->nallocators && i < MAX_UNSEEN; i++)
		for (kind = 0; kind < 2; kind++) {
			if (ht_text_unseen_line(text, sizeof(text), kind,
				v->prof->allocators[i].names,
				v->prof->allocators[i].path) != 0)
				continue;
			if ((comments[ncomments++] =
				    ht_pprof_intern(pp, text)) < 0)
				return -1;
		}
	deftype = v->opts.sort == HT_VIEW_ALLOC ? fixed[S_ALLOC_SPACE] :
	    v->opts.sort == HT_VIEW_OBJECTS	? fixed[S_INUSE_OBJECTS] :
						  fixed[S_INUSE_SPACE];
	if (pp->values != NULL) {
		ht_pb_int(&pp->out, PROFILE_TIME_NANOS,
		    clamp(pp->delta_start_ns));
		ht_pb_int(&pp->out, PROFILE_DURATION_NANOS,
		    clamp(pp->delta_ns));
	} else if (m->start_ns != 0)
		ht_pb_int(&pp->out, PROFILE_TIME_NANOS, clamp(m->start_ns));
	if (pp->values == NULL && m->start_ns != 0 && m->end_ns >= m->start_ns)
		ht_pb_int(&pp->out, PROFILE_DURATION_NANOS,
		    clamp(m->end_ns - m->start_ns));
	value_type(pp, PROFILE_PERIOD_TYPE, fixed[S_SPACE], fixed[S_BYTES]);
	ht_pb_int(&pp->out, PROFILE_PERIOD, clamp(m->rate));
	for (i = 0; i < ncomments; i++)
		ht_pb_int(&pp->out, PROFILE_COMMENT, comments[i]);
	ht_pb_int(&pp->out, PROFILE_DEFAULT_SAMPLE_TYPE, deftype);
	return 0;
}

/* Write v, with values (or NULL: the rows' figures) as the samples'. */
static int
write_view(FILE *fp, struct ht_view *v, const int64_t (*values)[4],
    uint64_t delta_start_ns, uint64_t delta_ns)
{
	const struct ht_profile *prof = v->prof;
	struct pprof pp;
	int64_t fixed[NFIXED];
	size_t i;
	int rc = -1, failed;

	memset(&pp, 0, sizeof(pp));
	pp.v = v;
	pp.values = values;
	pp.delta_start_ns = delta_start_ns;
	pp.delta_ns = delta_ns;
	if (ht_pb_gz_open(&pp.gz, fp) != 0)
		return -1;
	pp.mappings = calloc(prof->nmodules + 1, sizeof(*pp.mappings));
	pp.by_start = calloc(prof->nmodules + 1, sizeof(*pp.by_start));
	if (pp.mappings == NULL || pp.by_start == NULL) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < prof->nmodules; i++)
		pp.by_start[i] = i;
	sort_mods = prof->modules;
	qsort(pp.by_start, prof->nmodules, sizeof(*pp.by_start), by_start);

	/* string_table[0] must be "". */
	if (ht_pprof_intern(&pp, "") != 0)
		goto out;
	for (i = 0; i < NFIXED; i++)
		if ((fixed[i] = ht_pprof_intern(&pp, fixed_strings[i])) < 0)
			goto out;
	value_type(&pp, PROFILE_SAMPLE_TYPE, fixed[S_ALLOC_OBJECTS],
	    fixed[S_COUNT]);
	value_type(&pp, PROFILE_SAMPLE_TYPE, fixed[S_ALLOC_SPACE],
	    fixed[S_BYTES]);
	value_type(&pp, PROFILE_SAMPLE_TYPE, fixed[S_INUSE_OBJECTS],
	    fixed[S_COUNT]);
	value_type(&pp, PROFILE_SAMPLE_TYPE, fixed[S_INUSE_SPACE],
	    fixed[S_BYTES]);
	if (put_samples(&pp) != 0 || put_mappings(&pp) != 0 ||
	    put_trailer(&pp, fixed) != 0)
		goto out;
	rc = 0;
out:
	failed = pp.out.failed || pp.loc.failed || pp.line.failed ||
	    pp.sample.failed || pp.packed.failed;
	if (rc == 0 && failed) {
		errno = ENOMEM;
		rc = -1;
	}
	if (rc == 0)
		ht_pprof_flush(&pp, 0);
	if (ht_pb_gz_close(&pp.gz) != 0)
		rc = -1;
	else if (rc != 0 && errno == 0)
		errno = ENOMEM;
	for (i = 0; i < pp.nkept; i++)
		free(pp.strings[i].s);
	free(pp.strings);
	free(pp.functions);
	free(pp.locs.slots);
	free(pp.mappings);
	free(pp.by_start);
	ht_view_index_free(&pp.string_index);
	ht_view_index_free(&pp.function_index);
	ht_view_index_free(&pp.folded_index);
	free(pp.folded_addrs);
	free(pp.folded_ids);
	ht_pb_free(&pp.out);
	ht_pb_free(&pp.loc);
	ht_pb_free(&pp.line);
	ht_pb_free(&pp.sample);
	ht_pb_free(&pp.packed);
	return rc;
}

int
ht_pprof_write(FILE *fp, struct ht_view *v)
{
	return write_view(fp, v, NULL, 0, 0);
}

/* The delta of column c of site s, 0 where either side does not know it. */
static int64_t
delta_of(const struct ht_diff *d, const struct ht_diff_site *s, int c)
{
	if (ht_diff_unknown(d, 0, c) || ht_diff_unknown(d, 1, c))
		return 0;
	return ht_diff_change(s->s, c);
}

int
ht_pprof_write_delta(FILE *fp, struct ht_diff *d)
{
	static const int cols[4] = { HT_DIFF_ALLOC_OBJECTS, HT_DIFF_ALLOC_BYTES,
		HT_DIFF_INUSE_OBJECTS, HT_DIFF_INUSE_BYTES };
	const struct ht_meta *om = &d->prof[0]->meta, *nm = &d->prof[1]->meta;
	const struct ht_diff_site *s;
	struct ht_view_row *rows;
	int64_t(*values)[4];
	struct ht_view v;
	size_t i, n = 0;
	int k, rc, any;

	rows = calloc(d->nshown + 1, sizeof(*rows));
	values = calloc(d->nshown + 1, sizeof(*values));
	if (rows == NULL || values == NULL) {
		free(rows);
		free(values);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < d->nshown; i++) {
		s = d->shown[i];
		any = 0;
		for (k = 0; k < 4; k++)
			any |= (values[n][k] = delta_of(d, s, cols[k])) != 0;
		if (!any)
			continue;
		rows[n] = *s->row[ht_diff_site_side(s)];
		rows[n].nfolded = s->nfolded;
		n++;
	}
	/* The later profile's view, its modules and symbolizer, with the
	 * changed sites as its rows (a gone site's frames are looked up in
	 * the later profile's modules: those of one process). */
	v = d->v[1];
	v.rows = rows;
	v.nrows = n;
	rc = write_view(fp, &v, (const int64_t(*)[4])values, om->end_ns,
	    nm->end_ns > om->end_ns ? nm->end_ns - om->end_ns : 0);
	free(rows);
	free(values);
	return rc;
}
