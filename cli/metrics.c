/*
 * The Prometheus export (see metrics.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocnames.h"
#include "json.h"
#include "metrics.h"
#include "text.h"

/* Bytes of a label value at most, before escaping. */
#define MAX_LABEL 200

/* One series of heaptool_site_inuse_*: the sites with one first frame. */
struct series {
	char *function;
	char *location;
	uint64_t bytes;
	uint64_t objects;
	size_t sites;
};

struct sites {
	struct series *s;
	size_t n, cap;
	struct ht_view_index index;
	/* For the index's callback: the key looked up. */
	const char *key_function, *key_location;
};

/*
 * s as a label value into a malloc'd string: ill-formed UTF-8 and control
 * characters as '?', cut at MAX_LABEL bytes on a character's boundary.
 * NULL when out of memory.
 */
static char *
label_value(const char *s)
{
	return ht_text_clean(s, MAX_LABEL, NULL);
}

/* A label value, escaped: backslash, double quote and line feed (the
 * last cannot occur after label_value, but the format's rule is kept). */
static void
put_escaped(FILE *fp, const char *s)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '\\':
			fputs("\\\\", fp);
			break;
		case '"':
			fputs("\\\"", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		default:
			putc(*s, fp);
		}
}

static void
header(FILE *fp, const char *name, const char *type, const char *help)
{
	fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
metric(FILE *fp, const char *name, const char *type, const char *help,
    uint64_t v)
{
	header(fp, name, type, help);
	fprintf(fp, "%s %" PRIu64 "\n", name, v);
}

static int
series_eq(void *ctx, uint32_t id)
{
	struct sites *st = ctx;

	return strcmp(st->s[id].function, st->key_function) == 0 &&
	    strcmp(st->s[id].location, st->key_location) == 0;
}

/* Add row r's figures to the series of (function, location), made if
 * new.  0, or -1 (ENOMEM). */
static int
sites_add(struct sites *st, const char *function, const char *location,
    const struct ht_view_row *r)
{
	struct series *s;
	char *f = NULL, *l = NULL;
	uint64_t h;
	int64_t id;
	void *p;

	if ((f = label_value(function)) == NULL ||
	    (l = label_value(location)) == NULL)
		goto nomem;
	h = ht_view_hash(HT_VIEW_HASH0, f, strlen(f) + 1);
	h = ht_view_hash(h, l, strlen(l));
	st->key_function = f;
	st->key_location = l;
	if ((id = ht_view_index_find(&st->index, h, series_eq, st)) >= 0) {
		free(f);
		free(l);
		s = &st->s[id];
	} else {
		if (st->n == st->cap) {
			if ((p = reallocarray(st->s,
				 st->cap == 0 ? 64 : st->cap * 2,
				 sizeof(*st->s))) == NULL)
				goto nomem;
			st->s = p;
			st->cap = st->cap == 0 ? 64 : st->cap * 2;
		}
		if (ht_view_index_add(&st->index, h, (uint32_t)st->n) != 0)
			goto nomem;
		s = &st->s[st->n++];
		memset(s, 0, sizeof(*s));
		s->function = f;
		s->location = l;
	}
	s->bytes = ht_view_sat_add(s->bytes, r->f.inuse_bytes);
	s->objects = ht_view_sat_add(s->objects, r->f.inuse_objects);
	s->sites += r->site == NULL ? r->nfolded : 1;
	return 0;
nomem:
	free(f);
	free(l);
	errno = ENOMEM;
	return -1;
}

static void
sites_free(struct sites *st)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		free(st->s[i].function);
		free(st->s[i].location);
	}
	free(st->s);
	ht_view_index_free(&st->index);
}

/* By bytes in use, the largest first; then by name, so that equal
 * figures come in one order from one scrape to the next. */
static int
by_bytes(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int c;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if ((c = strcmp(x->function, y->function)) != 0)
		return c;
	return strcmp(x->location, y->location);
}

/* The rows of v grouped by their first frame.  0, or -1 (ENOMEM). */
static int
sites_build(struct sites *st, struct ht_view *v)
{
	const struct ht_sym_frame *fr;
	const struct ht_view_row *r;
	char name[4200], loc[4200];
	const char *fn;
	size_t i;
	int n, k;

	for (i = 0; i < v->nrows; i++) {
		r = &v->rows[i];
		/* The site frame: the first outside allocator wrappers. */
		if ((k = ht_view_fold(v, r, NULL)) < 0 ||
		    (n = ht_view_frames(v, r, &fr)) < 0)
			return -1;
		if (k > 0 && k < n) {
			fr += k;
			n -= k;
		}
		loc[0] = '\0';
		if (n == 0)
			fn = ht_view_row_name(r, name, sizeof(name));
		else {
			fn = ht_view_frame_name(&fr[0], name, sizeof(name));
			if (fr[0].file != NULL && fr[0].line > 0)
				snprintf(loc, sizeof(loc), "%s:%d", fr[0].file,
				    fr[0].line);
			else if (fr[0].file != NULL)
				snprintf(loc, sizeof(loc), "%s", fr[0].file);
		}
		if (sites_add(st, fn, loc, r) != 0)
			return -1;
	}
	qsort(st->s, st->n, sizeof(*st->s), by_bytes);
	return 0;
}

static void
put_sites(FILE *fp, const struct sites *st, size_t top)
{
	struct series other;
	size_t i, shown = st->n > top ? top : st->n;
	int kind;

	memset(&other, 0, sizeof(other));
	for (i = shown; i < st->n; i++) {
		other.bytes = ht_view_sat_add(other.bytes, st->s[i].bytes);
		other.objects =
		    ht_view_sat_add(other.objects, st->s[i].objects);
	}
	for (kind = 0; kind < 2; kind++) {
		if (kind == 0)
			header(fp, "heaptool_site_inuse_bytes", "gauge",
			    "Bytes in use per allocation site (the caller of "
			    "the allocator), the largest sites; the others "
			    "summed as function=\"(other sites)\".");
		else
			header(fp, "heaptool_site_inuse_objects", "gauge",
			    "Objects in use per allocation site, for the "
			    "sites of heaptool_site_inuse_bytes.");
		for (i = 0; i < shown; i++) {
			fputs(kind == 0 ? "heaptool_site_inuse_bytes"
					  "{function=\"" :
					  "heaptool_site_inuse_objects"
					  "{function=\"",
			    fp);
			put_escaped(fp, st->s[i].function);
			fputs("\",location=\"", fp);
			put_escaped(fp, st->s[i].location);
			fprintf(fp, "\"} %" PRIu64 "\n",
			    kind == 0 ? st->s[i].bytes : st->s[i].objects);
		}
		if (st->n > shown)
			fprintf(fp,
			    "%s{function=\"(other sites)\",location=\"\"} "
			    "%" PRIu64 "\n",
			    kind == 0 ? "heaptool_site_inuse_bytes" :
					"heaptool_site_inuse_objects",
			    kind == 0 ? other.bytes : other.objects);
	}
}

/* Per module: the view's sums, those of one name (two mappings of a
 * basename) added up so that no series repeats. */
static int
put_modules(FILE *fp, const struct ht_view *v)
{
	char **names;
	uint64_t *bytes;
	size_t i, j, n = 0;

	names = calloc(v->nmods + 1, sizeof(*names));
	bytes = calloc(v->nmods + 1, sizeof(*bytes));
	if (names == NULL || bytes == NULL)
		goto nomem;
	for (i = 0; i < v->nmods; i++) {
		char *name = label_value(
		    v->mods[i].name != NULL ? v->mods[i].name : "?");

		if (name == NULL)
			goto nomem;
		for (j = 0; j < n && strcmp(names[j], name) != 0; j++)
			;
		if (j < n)
			free(name);
		else
			names[n++] = name;
		bytes[j] = ht_view_sat_add(bytes[j], v->mods[i].f.inuse_bytes);
	}
	header(fp, "heaptool_module_inuse_bytes", "gauge",
	    "Bytes in use per module the allocation sites are charged to "
	    "(the first of the stack that is not a runtime library).");
	for (i = 0; i < n; i++) {
		fputs("heaptool_module_inuse_bytes{module=\"", fp);
		put_escaped(fp, names[i]);
		fprintf(fp, "\"} %" PRIu64 "\n", bytes[i]);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(bytes);
	return 0;
nomem:
	if (names != NULL)
		for (i = 0; i < n; i++)
			free(names[i]);
	free(names);
	free(bytes);
	errno = ENOMEM;
	return -1;
}

static void
put_info(FILE *fp, const struct ht_view *v)
{
	const struct ht_meta *m = &v->prof->meta;
	char cmd[sizeof(m->command)], *c;

	memcpy(cmd, m->command, sizeof(cmd));
	cmd[sizeof(cmd) - 1] = '\0';
	header(fp, "heaptool_session_info", "gauge",
	    "The profiled process and its session (value 1).");
	fprintf(fp, "heaptool_session_info{pid=\"%" PRIu64 "\",command=\"",
	    m->pid);
	if ((c = label_value(cmd)) != NULL) {
		put_escaped(fp, c);
		free(c);
	}
	fprintf(fp,
	    "\",epoch=\"%" PRIu64 "\",state=\"%s\",backend=\"%s\","
	    "exact=\"%s\"} 1\n",
	    m->epoch, ht_profile_state_name(m->state),
	    ht_backend_name(m->backend), v->exact ? "true" : "false");
}

int
ht_metrics_write(FILE *fp, struct ht_view *v, size_t top)
{
	const struct ht_meta *m = &v->prof->meta;
	struct sites st;
	int rc = -1, alloc = !(m->flags & HT_META_ALLOC_UNKNOWN);

	memset(&st, 0, sizeof(st));
	if (sites_build(&st, v) != 0)
		goto out;
	put_info(fp, v);
	metric(fp, "heaptool_inuse_bytes", "gauge",
	    "Bytes in use, allocated in the session and not freed "
	    "(an estimate unless exact).",
	    v->total.inuse_bytes);
	metric(fp, "heaptool_inuse_objects", "gauge",
	    "Objects in use, allocated in the session and not freed.",
	    v->total.inuse_objects);
	if (alloc) {
		metric(fp, "heaptool_allocated_bytes_total", "counter",
		    "Bytes allocated in the session (starts over with each "
		    "session).",
		    v->total.alloc_bytes);
		metric(fp, "heaptool_allocated_objects_total", "counter",
		    "Objects allocated in the session.",
		    v->total.alloc_objects);
		metric(fp, "heaptool_freed_bytes_total", "counter",
		    "Bytes allocated in the session and freed since.",
		    ht_view_freed_bytes(v));
	}
	if (!(m->flags & HT_META_PEAK_UNKNOWN))
		metric(fp, "heaptool_peak_inuse_bytes", "gauge",
		    "The session's high-water mark of bytes in use.",
		    ht_view_peak_bytes(v));
	metric(fp, "heaptool_samples_total", "counter",
	    "Samples taken in the session.", m->samples);
	metric(fp, "heaptool_live_samples", "gauge",
	    "Samples of blocks not yet freed.", m->live_samples);
	metric(fp, "heaptool_dropped_samples_total", "counter",
	    "Samples dropped (tables full, or no memory): the figures "
	    "are then not exact.",
	    m->dropped_samples);
	metric(fp, "heaptool_agent_overhead_bytes", "gauge",
	    "Memory the heaptool agent has mapped in the process.",
	    m->overhead_bytes);
	metric(fp, "heaptool_rss_bytes", "gauge",
	    "The process's resident set size when the profile was taken.",
	    m->rss_bytes);
	metric(fp, "heaptool_sampling_rate_bytes", "gauge",
	    "Mean bytes between samples (1: every allocation).", m->rate);
	metric(fp, "heaptool_sites", "gauge",
	    "Allocation sites in the profile.", v->nsites);
	if (put_modules(fp, v) != 0)
		goto out;
	put_sites(fp, &st, top);
	rc = 0;
out:
	sites_free(&st);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}
