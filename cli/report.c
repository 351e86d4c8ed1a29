/*
 * Reports (see report.h).
 *
 * A report is built in two steps.  First a view: one row per site with the
 * figures to show (today the site's current figures; a report at the peak
 * will fill the rows from the peak values instead), sorted, cut after --top
 * with the rest folded into one row, and the totals and per-module sums
 * computed from the rows.  Then a writer prints the view as text or JSON.
 * New formats are new writers over the same view.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"
#include "json.h"
#include "report.h"
#include "sampling.h"
#include "size.h"

struct figures {
	uint64_t	inuse_bytes;
	uint64_t	inuse_objects;
	uint64_t	alloc_bytes;
	uint64_t	alloc_objects;
	uint64_t	samples;
	uint64_t	live_samples;
	double		inuse_var;
};

/* A site, or (site NULL) the fold of nfolded smaller sites. */
struct row {
	struct figures			 f;
	const struct ht_site_rec	*site;
	size_t				 nfolded;
};

struct modrow {
	const char	*name;
	struct figures	 f;
};

struct view {
	const struct ht_profile	*prof;
	struct ht_sym		*sym;
	const struct ht_report_opts *opts;
	struct row		*rows;	/* shown sites, then the fold */
	size_t			 nrows;
	size_t			 nsites;	/* sites in the profile */
	struct figures		 total;
	struct modrow		*mods;
	size_t			 nmods;
	const struct ht_thread_rec **threads;
	size_t			 nthreads;
};

static const char *const runtime_modules[] = {
	"libc.so", "libc-", "libstdc++.so", "ld-linux", "libheaptool-agent.so",
};

int
ht_report_format_parse(const char *name, enum ht_report_format *fmt)
{
	if (strcmp(name, "text") == 0)
		*fmt = HT_REPORT_TEXT;
	else if (strcmp(name, "json") == 0)
		*fmt = HT_REPORT_JSON;
	else
		return -1;
	return 0;
}

static void
figures_add(struct figures *to, const struct figures *f)
{
	to->inuse_bytes += f->inuse_bytes;
	to->inuse_objects += f->inuse_objects;
	to->alloc_bytes += f->alloc_bytes;
	to->alloc_objects += f->alloc_objects;
	to->samples += f->samples;
	to->live_samples += f->live_samples;
	/* Samples are independent, so the Horvitz-Thompson variances of
	 * disjoint sets of sites add up. */
	to->inuse_var += f->inuse_var;
}

static void
interval(const struct figures *f, uint64_t *lo, uint64_t *hi)
{
	double l, h;

	ht_sample_interval((double)f->inuse_bytes, f->inuse_var, &l, &h);
	*lo = l <= 0 ? 0 : (uint64_t)(l + 0.5);
	*hi = h <= 0 ? 0 : (uint64_t)(h + 0.5);
}

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint32_t i, n;

	if (x->f.inuse_bytes != y->f.inuse_bytes)
		return x->f.inuse_bytes > y->f.inuse_bytes ? -1 : 1;
	if (x->f.alloc_bytes != y->f.alloc_bytes)
		return x->f.alloc_bytes > y->f.alloc_bytes ? -1 : 1;
	if (x->f.samples != y->f.samples)
		return x->f.samples > y->f.samples ? -1 : 1;
	/* The same profile always prints in the same order. */
	n = x->site->nframes < y->site->nframes ? x->site->nframes :
	    y->site->nframes;
	for (i = 0; i < n; i++)
		if (x->site->frames[i] != y->site->frames[i])
			return x->site->frames[i] < y->site->frames[i] ? -1 : 1;
	if (x->site->nframes != y->site->nframes)
		return x->site->nframes < y->site->nframes ? -1 : 1;
	return 0;
}

static int
modrow_cmp(const void *a, const void *b)
{
	const struct modrow *x = a, *y = b;

	if (x->f.inuse_bytes != y->f.inuse_bytes)
		return x->f.inuse_bytes > y->f.inuse_bytes ? -1 : 1;
	if (x->f.alloc_bytes != y->f.alloc_bytes)
		return x->f.alloc_bytes > y->f.alloc_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
thread_cmp(const void *a, const void *b)
{
	const struct ht_thread_rec *x = *(const struct ht_thread_rec *const *)a;
	const struct ht_thread_rec *y = *(const struct ht_thread_rec *const *)b;

	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
is_runtime(const char *name)
{
	size_t i, n;

	for (i = 0; i < sizeof(runtime_modules) / sizeof(runtime_modules[0]);
	    i++) {
		n = strlen(runtime_modules[i]);
		if (strncmp(name, runtime_modules[i], n) == 0)
			return 1;
	}
	return 0;
}

/*
 * The module a site is charged to: that of its first frame outside the C
 * and C++ runtimes, the loader and the agent (an allocation made by
 * strdup or std::vector belongs to whoever called them); failing that,
 * that of its first frame.
 */
static const char *
site_module(struct ht_sym *sym, const struct ht_site_rec *s)
{
	const char *first = NULL, *name;
	uint32_t i, n;

	n = s->nframes < HT_PROFILE_MAX_FRAMES ? s->nframes :
	    HT_PROFILE_MAX_FRAMES;
	for (i = 0; i < n; i++) {
		if ((name = ht_sym_module_name(sym, s->frames[i])) == NULL)
			continue;
		if (!is_runtime(name))
			return name;
		if (first == NULL)
			first = name;
	}
	return first != NULL ? first : "[unknown]";
}

static int
module_charge(struct view *v, const char *name, const struct figures *f)
{
	struct modrow *m;
	size_t i;

	for (i = 0; i < v->nmods; i++)
		if (strcmp(v->mods[i].name, name) == 0)
			break;
	if (i == v->nmods) {
		m = reallocarray(v->mods, v->nmods + 1, sizeof(*m));
		if (m == NULL)
			return -1;
		v->mods = m;
		memset(&v->mods[i], 0, sizeof(v->mods[i]));
		v->mods[i].name = name;
		v->nmods++;
	}
	figures_add(&v->mods[i].f, f);
	return 0;
}

static void
view_free(struct view *v)
{
	free(v->rows);
	free(v->mods);
	free(v->threads);
}

static int
view_build(struct view *v, const struct ht_profile *prof, struct ht_sym *sym,
    const struct ht_report_opts *opts)
{
	const struct ht_site_rec *s;
	struct row *r, fold;
	size_t i, keep;

	memset(v, 0, sizeof(*v));
	v->prof = prof;
	v->sym = sym;
	v->opts = opts;
	v->nsites = prof->nsites;
	/* One more for the folded remainder. */
	if ((v->rows = calloc(prof->nsites + 1, sizeof(*v->rows))) == NULL)
		goto out_nomem;
	for (i = 0; i < prof->nsites; i++) {
		s = &prof->sites[i];
		r = &v->rows[i];
		r->site = s;
		r->f.inuse_bytes = s->inuse_bytes;
		r->f.inuse_objects = s->inuse_objects;
		r->f.alloc_bytes = s->alloc_bytes;
		r->f.alloc_objects = s->alloc_objects;
		r->f.samples = s->samples;
		r->f.live_samples = s->live_samples;
		r->f.inuse_var = s->inuse_var > 0 ? s->inuse_var : 0;
		figures_add(&v->total, &r->f);
		if (module_charge(v, site_module(sym, s), &r->f) != 0)
			goto out_nomem;
	}
	qsort(v->rows, prof->nsites, sizeof(*v->rows), row_cmp);
	if (v->nmods > 1)
		qsort(v->mods, v->nmods, sizeof(*v->mods), modrow_cmp);

	keep = prof->nsites;
	if (opts->top > 0 && opts->top < prof->nsites)
		keep = opts->top;
	v->nrows = keep;
	if (keep < prof->nsites) {
		/* Fold the rest into one row: it never drops bytes. */
		memset(&fold, 0, sizeof(fold));
		for (i = keep; i < prof->nsites; i++)
			figures_add(&fold.f, &v->rows[i].f);
		fold.nfolded = prof->nsites - keep;
		v->rows[keep] = fold;
		v->nrows = keep + 1;
	}

	if (prof->nthreads > 0) {
		v->threads = calloc(prof->nthreads, sizeof(*v->threads));
		if (v->threads == NULL)
			goto out_nomem;
		for (i = 0; i < prof->nthreads; i++)
			v->threads[i] = &prof->threads[i];
		qsort(v->threads, prof->nthreads, sizeof(*v->threads),
		    thread_cmp);
		v->nthreads = prof->nthreads;
	}
	return 0;

out_nomem:
	view_free(v);
	errno = ENOMEM;
	return -1;
}

static const char *
state_name(uint32_t state)
{
	switch (state) {
	case HT_STATE_RUNNING:
		return "running";
	case HT_STATE_STOPPED:
		return "stopped";
	default:
		return "none";
	}
}

static double
duration_s(const struct ht_meta *m)
{
	if (m->start_ns == 0 || m->end_ns < m->start_ns)
		return 0;
	return (double)(m->end_ns - m->start_ns) / 1e9;
}

/* The peak can never be below what is in use now; the two are rounded
 * from different sums, so clamp rather than print a contradiction. */
static uint64_t
peak_bytes(const struct view *v)
{
	uint64_t p = v->prof->meta.peak_inuse_bytes;

	return p > v->total.inuse_bytes ? p : v->total.inuse_bytes;
}

/* What the allocator holds that the session did not see allocated. */
static uint64_t
predates_bytes(const struct view *v)
{
	uint64_t heap = v->prof->meta.heap_inuse_bytes;

	return heap > v->total.inuse_bytes ? heap - v->total.inuse_bytes : 0;
}

static uint64_t
freed_bytes(const struct figures *f)
{
	return f->alloc_bytes > f->inuse_bytes ?
	    f->alloc_bytes - f->inuse_bytes : 0;
}

/* Text output. */

struct text {
	FILE	*fp;
	int	 raw;		/* --bytes */
};

/* Bytes of a profile string, with anything that could drive a terminal
 * (control characters) shown as '?'. */
static void
put_safe(FILE *fp, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i] != '\0'; i++)
		putc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i],
		    fp);
}

static const char *
size_str(const struct text *t, uint64_t v, char *buf, size_t len)
{
	if (t->raw) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return buf;
	}
	return ht_size_format(v, buf, len);
}

static void
text_interval(const struct text *t, const struct figures *f, int exact)
{
	char lo_s[32], hi_s[32];
	uint64_t lo, hi;

	if (exact) {
		fprintf(t->fp, "exact");
		return;
	}
	interval(f, &lo, &hi);
	fprintf(t->fp, "95%% %s..%s", size_str(t, lo, lo_s, sizeof(lo_s)),
	    size_str(t, hi, hi_s, sizeof(hi_s)));
}

/* Two spaces, then the label column of the summary lines. */
#define LABEL	"  %-15s"

static const char *
plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void
text_summary(const struct view *v, const struct text *t)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct figures *f = &v->total;
	char a[32], b[32], c[32];
	int exact = m->rate == 1;
	size_t i, w;

	fprintf(t->fp, "pid %" PRIu64 " (", m->pid);
	put_safe(t->fp, m->command, sizeof(m->command));
	fprintf(t->fp, "): session %" PRIu64 " %s%s, ", m->epoch,
	    state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (exact)
		fprintf(t->fp, "rate 1 (every allocation, exact)");
	else
		fprintf(t->fp, "rate %s (sampled: figures are estimates)",
		    size_str(t, m->rate, a, sizeof(a)));
	fprintf(t->fp, ", %.2f s\n", duration_s(m));

	fprintf(t->fp, LABEL "%10s in %" PRIu64 " object%s (", "in use",
	    size_str(t, f->inuse_bytes, a, sizeof(a)), f->inuse_objects,
	    plural(f->inuse_objects));
	text_interval(t, f, exact);
	fprintf(t->fp, "; %" PRIu64 " live sample%s)\n", f->live_samples,
	    plural(f->live_samples));
	fprintf(t->fp, LABEL "%10s in %" PRIu64 " object%s (%" PRIu64
	    " sample%s)\n", "allocated",
	    size_str(t, f->alloc_bytes, a, sizeof(a)), f->alloc_objects,
	    plural(f->alloc_objects), f->samples, plural(f->samples));
	fprintf(t->fp, LABEL "%10s\n", "freed",
	    size_str(t, freed_bytes(f), a, sizeof(a)));
	fprintf(t->fp, LABEL "%10s\n", "peak",
	    size_str(t, peak_bytes(v), a, sizeof(a)));
	if (m->heap_inuse_bytes != 0 || m->heap_free_bytes != 0 ||
	    m->heap_mmap_bytes != 0) {
		fprintf(t->fp, LABEL "%10s in use, %s free, %s mmap",
		    "allocator",
		    size_str(t, m->heap_inuse_bytes, a, sizeof(a)),
		    size_str(t, m->heap_free_bytes, b, sizeof(b)),
		    size_str(t, m->heap_mmap_bytes, c, sizeof(c)));
		if (predates_bytes(v) > 0)
			fprintf(t->fp, "; %s%s predates the session",
			    exact ? "" : "about ",
			    size_str(t, predates_bytes(v), a, sizeof(a)));
		putc('\n', t->fp);
	}
	if (m->rss_bytes != 0)
		fprintf(t->fp, LABEL "%10s\n", "RSS",
		    size_str(t, m->rss_bytes, a, sizeof(a)));
	fprintf(t->fp, LABEL "%10s overhead, %" PRIu64 " dropped sample%s\n",
	    "heaptool agent", size_str(t, m->overhead_bytes, a, sizeof(a)),
	    m->dropped_samples, plural(m->dropped_samples));

	if (v->nmods > 0) {
		w = strlen("by module");
		for (i = 0; i < v->nmods; i++)
			if (strlen(v->mods[i].name) + 2 > w)
				w = strlen(v->mods[i].name) + 2;
		if (w > 40)
			w = 40;
		fprintf(t->fp, "\n%-*s %10s %10s\n", (int)w, "by module",
		    "in use", "allocated");
		for (i = 0; i < v->nmods; i++) {
			fputs("  ", t->fp);
			put_safe(t->fp, v->mods[i].name, w - 2);
			fprintf(t->fp, "%*s %10s %10s\n",
			    (int)(w - 2 - (strlen(v->mods[i].name) < w - 2 ?
			    strlen(v->mods[i].name) : w - 2)), "",
			    size_str(t, v->mods[i].f.inuse_bytes, a,
			    sizeof(a)),
			    size_str(t, v->mods[i].f.alloc_bytes, b,
			    sizeof(b)));
		}
	}
	if (v->nthreads > 0) {
		fprintf(t->fp, "\n%-24s %10s %10s\n", "by thread", "in use",
		    "allocated");
		for (i = 0; i < v->nthreads; i++) {
			const struct ht_thread_rec *th = v->threads[i];
			int n;

			n = fprintf(t->fp, "  %" PRIu32 " ", th->tid);
			n += (int)strnlen(th->name, sizeof(th->name));
			put_safe(t->fp, th->name, sizeof(th->name));
			fprintf(t->fp, "%*s %10s %10s\n", n < 24 ? 24 - n : 0,
			    "", size_str(t, th->inuse_bytes, a, sizeof(a)),
			    size_str(t, th->alloc_bytes, b, sizeof(b)));
		}
	}
}

static void
text_frame(const struct text *t, const struct ht_sym_frame *fr)
{
	fputs("      ", t->fp);
	if (fr->inlined)
		fputs("[inlined] ", t->fp);
	if (fr->function != NULL)
		put_safe(t->fp, fr->function, SIZE_MAX);
	else if (fr->file != NULL)
		fputs("??", t->fp);
	if (fr->file != NULL) {
		fputs(" (", t->fp);
		put_safe(t->fp, fr->file, SIZE_MAX);
		if (fr->line > 0)
			fprintf(t->fp, ":%d", fr->line);
		fputs(")", t->fp);
	} else {
		if (fr->function != NULL)
			fputs(" (", t->fp);
		if (fr->module != NULL) {
			put_safe(t->fp, fr->module, SIZE_MAX);
			fprintf(t->fp, "+0x%" PRIx64, fr->offset);
		} else
			fprintf(t->fp, "0x%" PRIx64, fr->address);
		if (fr->function != NULL)
			fputs(")", t->fp);
	}
	if (fr->flags & HT_SYM_BUILD_ID_MISMATCH)
		fputs(" [build-id mismatch]", t->fp);
	putc('\n', t->fp);
}

static int
text_detail(const struct view *v, const struct text *t)
{
	const struct ht_sym_frame *fr;
	const struct row *r;
	char a[32], b[32];
	size_t i;
	uint32_t k, n;
	int exact = v->prof->meta.rate == 1, nfr, j;
	double pct;

	fprintf(t->fp, "\n%zu sites, by bytes in use\n", v->nsites);
	for (i = 0; i < v->nrows; i++) {
		r = &v->rows[i];
		pct = v->total.inuse_bytes == 0 ? 0 :
		    100.0 * (double)r->f.inuse_bytes /
		    (double)v->total.inuse_bytes;
		if (r->site == NULL)
			fprintf(t->fp, "\n(%zu smaller site%s)", r->nfolded,
			    r->nfolded == 1 ? "" : "s");
		else
			fprintf(t->fp, "\n#%zu", i + 1);
		fprintf(t->fp, " in use %s (%.1f%%) in %" PRIu64 " object%s, "
		    "allocated %s in %" PRIu64 " object%s\n",
		    size_str(t, r->f.inuse_bytes, a, sizeof(a)), pct,
		    r->f.inuse_objects, plural(r->f.inuse_objects),
		    size_str(t, r->f.alloc_bytes, b, sizeof(b)),
		    r->f.alloc_objects, plural(r->f.alloc_objects));
		fprintf(t->fp, "    %" PRIu64 " sample%s, %" PRIu64 " live; "
		    "in use ", r->f.samples, plural(r->f.samples),
		    r->f.live_samples);
		text_interval(t, &r->f, exact);
		putc('\n', t->fp);
		if (r->site == NULL)
			continue;
		n = r->site->nframes < HT_PROFILE_MAX_FRAMES ?
		    r->site->nframes : HT_PROFILE_MAX_FRAMES;
		for (k = 0; k < n; k++) {
			nfr = ht_sym_lookup(v->sym, r->site->frames[k], &fr);
			if (nfr < 0)
				return -1;
			for (j = 0; j < nfr; j++)
				text_frame(t, &fr[j]);
		}
	}
	return 0;
}

static void
problem_note(void *arg, const char *path, const char *why)
{
	FILE *fp = arg;

	fputs("note: ", fp);
	put_safe(fp, path, SIZE_MAX);
	fprintf(fp, ": %s; its frames show as module+offset\n", why);
}

static int
write_text(FILE *fp, const struct view *v)
{
	struct text t = { fp, v->opts->raw_bytes };

	text_summary(v, &t);
	if (v->opts->detail) {
		if (text_detail(v, &t) != 0)
			return -1;
		if (ht_sym_problems(v->sym, NULL, NULL) > 0) {
			putc('\n', fp);
			ht_sym_problems(v->sym, problem_note, fp);
		}
	}
	return 0;
}

/* JSON output: the keys of DESIGN.md section 2, and more. */

static void
json_hex(struct ht_json *j, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	ht_json_string(j, key, buf);
}

static void
json_figures(struct ht_json *j, const struct figures *f)
{
	uint64_t lo, hi;

	interval(f, &lo, &hi);
	ht_json_uint(j, "inuse_bytes", f->inuse_bytes);
	ht_json_uint(j, "inuse_objects", f->inuse_objects);
	ht_json_uint(j, "alloc_bytes", f->alloc_bytes);
	ht_json_uint(j, "alloc_objects", f->alloc_objects);
	ht_json_uint(j, "samples", f->samples);
	ht_json_uint(j, "live_samples", f->live_samples);
	ht_json_uint(j, "inuse_bytes_low", lo);
	ht_json_uint(j, "inuse_bytes_high", hi);
}

static int
json_site(struct ht_json *j, const struct view *v, const struct row *r)
{
	const struct ht_sym_frame *fr;
	uint32_t k, n;
	int nfr, i;

	ht_json_object_begin(j, NULL);
	json_figures(j, &r->f);
	ht_json_uint(j, "folded_sites", r->nfolded);
	ht_json_array_begin(j, "frames");
	n = r->site == NULL ? 0 : r->site->nframes < HT_PROFILE_MAX_FRAMES ?
	    r->site->nframes : HT_PROFILE_MAX_FRAMES;
	for (k = 0; k < n; k++) {
		if ((nfr = ht_sym_lookup(v->sym, r->site->frames[k],
		    &fr)) < 0)
			return -1;
		for (i = 0; i < nfr; i++) {
			ht_json_object_begin(j, NULL);
			json_hex(j, "address", fr[i].address);
			ht_json_string(j, "module", fr[i].module);
			json_hex(j, "offset", fr[i].offset);
			ht_json_string(j, "function", fr[i].function);
			ht_json_string(j, "file", fr[i].file);
			if (fr[i].line > 0)
				ht_json_uint(j, "line", fr[i].line);
			else
				ht_json_null(j, "line");
			ht_json_bool(j, "inlined", fr[i].inlined);
			if (fr[i].flags & HT_SYM_BUILD_ID_MISMATCH)
				ht_json_bool(j, "build_id_mismatch", 1);
			ht_json_object_end(j);
		}
	}
	ht_json_array_end(j);
	ht_json_object_end(j);
	return 0;
}

static int
write_json(FILE *fp, const struct view *v)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct ht_thread_rec *th;
	struct ht_json j;
	uint64_t lo, hi;
	size_t i;

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_uint(&j, "pid", m->pid);
	ht_json_stringn(&j, "command", m->command,
	    strnlen(m->command, sizeof(m->command)));

	ht_json_object_begin(&j, "session");
	ht_json_uint(&j, "epoch", m->epoch);
	ht_json_string(&j, "state", state_name(m->state));
	ht_json_uint(&j, "rate", m->rate);
	ht_json_double(&j, "duration_s", duration_s(m));
	ht_json_bool(&j, "exact", m->rate == 1);
	ht_json_bool(&j, "at_exit", (m->flags & HT_META_AT_EXIT) != 0);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "totals");
	interval(&v->total, &lo, &hi);
	ht_json_uint(&j, "inuse_bytes", v->total.inuse_bytes);
	ht_json_uint(&j, "inuse_objects", v->total.inuse_objects);
	ht_json_uint(&j, "alloc_bytes", v->total.alloc_bytes);
	ht_json_uint(&j, "alloc_objects", v->total.alloc_objects);
	ht_json_uint(&j, "freed_bytes", freed_bytes(&v->total));
	ht_json_uint(&j, "peak_inuse_bytes", peak_bytes(v));
	ht_json_uint(&j, "samples", v->total.samples);
	ht_json_uint(&j, "live_samples", v->total.live_samples);
	ht_json_uint(&j, "inuse_bytes_low", lo);
	ht_json_uint(&j, "inuse_bytes_high", hi);
	ht_json_uint(&j, "site_count", v->nsites);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "agent");
	ht_json_uint(&j, "overhead_bytes", m->overhead_bytes);
	ht_json_uint(&j, "dropped_samples", m->dropped_samples);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "allocator");
	ht_json_uint(&j, "heap_inuse_bytes", m->heap_inuse_bytes);
	ht_json_uint(&j, "heap_free_bytes", m->heap_free_bytes);
	ht_json_uint(&j, "heap_mmap_bytes", m->heap_mmap_bytes);
	ht_json_uint(&j, "predates_session_bytes", predates_bytes(v));
	ht_json_uint(&j, "rss_bytes", m->rss_bytes);
	ht_json_object_end(&j);

	ht_json_array_begin(&j, "modules");
	for (i = 0; i < v->nmods; i++) {
		ht_json_object_begin(&j, NULL);
		ht_json_string(&j, "module", v->mods[i].name);
		ht_json_uint(&j, "inuse_bytes", v->mods[i].f.inuse_bytes);
		ht_json_uint(&j, "inuse_objects", v->mods[i].f.inuse_objects);
		ht_json_uint(&j, "alloc_bytes", v->mods[i].f.alloc_bytes);
		ht_json_uint(&j, "alloc_objects", v->mods[i].f.alloc_objects);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);

	ht_json_array_begin(&j, "threads");
	for (i = 0; i < v->nthreads; i++) {
		th = v->threads[i];
		ht_json_object_begin(&j, NULL);
		ht_json_uint(&j, "tid", th->tid);
		ht_json_stringn(&j, "name", th->name,
		    strnlen(th->name, sizeof(th->name)));
		ht_json_uint(&j, "inuse_bytes", th->inuse_bytes);
		ht_json_uint(&j, "inuse_objects", th->inuse_objects);
		ht_json_uint(&j, "alloc_bytes", th->alloc_bytes);
		ht_json_uint(&j, "alloc_objects", th->alloc_objects);
		ht_json_uint(&j, "samples", th->samples);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);

	if (v->opts->detail) {
		ht_json_array_begin(&j, "sites");
		for (i = 0; i < v->nrows; i++)
			if (json_site(&j, v, &v->rows[i]) != 0)
				return -1;
		ht_json_array_end(&j);
	}
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}

int
ht_report_write(FILE *fp, const struct ht_profile *prof, struct ht_sym *sym,
    const struct ht_report_opts *opts)
{
	struct view v;
	int rc;

	if (view_build(&v, prof, sym, opts) != 0)
		return -1;
	switch (opts->format) {
	case HT_REPORT_JSON:
		rc = write_json(fp, &v);
		break;
	default:
		rc = write_text(fp, &v);
		break;
	}
	view_free(&v);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}

/* The report command. */

static const char report_usage[] =
"usage: heaptool report [-p PID] [--detail] [--json | --format FORMAT]\n"
"                       [--top N] [--bytes] [-o OUT] [FILE]\n"
"\n"
"Print a profile: the session, the totals with their 95% intervals,\n"
"memory by module and by thread.  The profile is the one saved in FILE\n"
"(by heaptool run or dump; - reads stdin), or without FILE the current\n"
"one of the target (PID, or the current target of heaptool attach).\n"
"\n"
"  -p, --pid PID        report on the running process PID\n"
"  -d, --detail         also list every allocation site with its stack\n"
"  -j, --json           same as --format json\n"
"  -f, --format FORMAT  text (default) or json\n"
"  -t, --top N          list the N largest sites, fold the rest into one\n"
"  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
"  -o, --output OUT     write the report to OUT instead of stdout\n"
"  -h, --help           show this help\n"
"\n"
"See man heaptool for the details and the JSON keys.\n";

static const struct option report_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "detail", no_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "format", required_argument, NULL, 'f' },
	{ "top", required_argument, NULL, 't' },
	{ "bytes", no_argument, NULL, 'b' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
parse_count(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

/*
 * The live path: the current profile of process pid, from its agent.
 * Returns the decoded profile, or NULL after printing why.
 */
static struct ht_profile *
live_profile(pid_t pid)
{
	struct ht_profile *prof = NULL;
	struct ht_ctl *c;
	const uint8_t *buf;
	char err[256];
	size_t len;

	if ((c = ht_ctl_new(pid)) == NULL) {
		ht_warn("target %ld: out of memory", (long)pid);
		return NULL;
	}
	if (ht_ctl_report(c, &buf, &len) != 0)
		ht_warn("%s", ht_ctl_error(c));
	else if ((prof = ht_profile_decode(buf, len, err,
	    sizeof(err))) == NULL)
		ht_warn("target %ld: the agent sent a profile that does not "
		    "decode (%s); use the heaptool that matches the agent",
		    (long)pid, err);
	ht_ctl_free(c);
	return prof;
}

int
ht_cmd_report(int argc, char **argv)
{
	struct ht_report_opts opts;
	struct ht_sym_opts sopts;
	struct ht_profile *prof;
	struct ht_sym *sym;
	const char *path, *out = NULL, *popt = NULL;
	char err[256], root[64], what[64];
	FILE *fp;
	int c, rc = HT_EXIT_FAIL;
	pid_t pid = 0;

	memset(&opts, 0, sizeof(opts));
	memset(&sopts, 0, sizeof(sopts));
	opts.format = HT_REPORT_TEXT;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:djf:t:bo:h", report_options,
	    NULL)) != -1) {
		switch (c) {
		case 'p':
			popt = optarg;
			break;
		case 'd':
			opts.detail = 1;
			break;
		case 'j':
			opts.format = HT_REPORT_JSON;
			break;
		case 'f':
			if (ht_report_format_parse(optarg, &opts.format) != 0)
				return ht_usage("--format %s: not a format "
				    "this heaptool writes; use text or json",
				    optarg);
			break;
		case 't':
			if (parse_count(optarg, &opts.top) != 0)
				return ht_usage("--top %s: not a count; use a "
				    "whole number of sites, at least 1",
				    optarg);
			break;
		case 'b':
			opts.raw_bytes = 1;
			break;
		case 'o':
			if (optarg[0] == '\0')
				return ht_usage("-o: empty file name; give "
				    "the report's path");
			out = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return fflush(stdout) == 0 ? HT_EXIT_OK : HT_EXIT_FAIL;
		case ':':
			return ht_usage("report: %s needs a value; see "
			    "'heaptool report --help'", argv[optind - 1]);
		default:
			return ht_usage("report: %s: unknown option; see "
			    "'heaptool report --help'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return ht_usage("report: %s: one profile at a time; see "
		    "'heaptool report --help'", argv[optind + 1]);
	if (optind < argc && popt != NULL)
		return ht_usage("report: -p %s and %s: give a process or a "
		    "file, not both", popt, argv[optind]);

	if (optind < argc) {
		path = argv[optind];
		if ((prof = ht_profile_read_file(path, err,
		    sizeof(err))) == NULL) {
			ht_warn("report %s: %s; %s", path, err,
			    errno == ENOENT ? "check the file name" :
			    "pass a profile written by heaptool");
			return HT_EXIT_FAIL;
		}
	} else {
		/* No file: the target's current profile.  Its module files
		 * are read as the process sees them (its mount namespace
		 * and root), which also finds them inside a container. */
		if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
			return rc;
		rc = HT_EXIT_FAIL;
		if ((prof = live_profile(pid)) == NULL)
			return HT_EXIT_FAIL;
		snprintf(root, sizeof(root), "/proc/%ld/root", (long)pid);
		sopts.root = root;
		sopts.pid = pid;
		snprintf(what, sizeof(what), "target %ld", (long)pid);
		path = what;
	}
	if ((sym = ht_sym_new(prof->modules, prof->nmodules, &sopts)) ==
	    NULL) {
		ht_warn("report %s: %s", path, strerror(errno));
		goto out_profile;
	}
	fp = stdout;
	if (out != NULL && (fp = fopen(out, "w")) == NULL) {
		ht_warn("-o %s: %s; choose a writable path", out,
		    strerror(errno));
		goto out_sym;
	}
	if (ht_report_write(fp, prof, sym, &opts) != 0)
		ht_warn("report %s: %s", out != NULL ? out : "stdout",
		    strerror(errno));
	else
		rc = HT_EXIT_OK;
	if (out != NULL && fclose(fp) != 0 && rc == HT_EXIT_OK) {
		ht_warn("-o %s: %s", out, strerror(errno));
		rc = HT_EXIT_FAIL;
	}
out_sym:
	ht_sym_free(sym);
out_profile:
	ht_profile_free(prof);
	return rc;
}
