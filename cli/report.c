/*
 * Reports (see report.h).
 *
 * A report is built in two steps.  First the view (view.h): the rows to
 * show, sorted, cut and folded, with their totals.  Then a writer prints
 * the view: text and JSON here, pprof, collapsed stacks and the flame graph
 * in modules of their own.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collapsed.h"
#include "ctl.h"
#include "diff.h"
#include "flame.h"
#include "json.h"
#include "pprof.h"
#include "report.h"
#include "size.h"

static const struct {
	const char		*name;
	enum ht_report_format	 format;
} formats[] = {
	{ "text", HT_REPORT_TEXT },
	{ "json", HT_REPORT_JSON },
	{ "pprof", HT_REPORT_PPROF },
	{ "collapsed", HT_REPORT_COLLAPSED },
	{ "svg", HT_REPORT_SVG },
};

static const char *const sort_names[] = {
	[HT_VIEW_INUSE] = "inuse",
	[HT_VIEW_ALLOC] = "alloc",
	[HT_VIEW_OBJECTS] = "objects",
};

int
ht_report_format_parse(const char *name, enum ht_report_format *fmt)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(name, formats[i].name) == 0) {
			*fmt = formats[i].format;
			return 0;
		}
	return -1;
}

int
ht_report_sort_parse(const char *name, enum ht_view_sort *sort)
{
	size_t i;

	for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
		if (strcmp(name, sort_names[i]) == 0) {
			*sort = (enum ht_view_sort)i;
			return 0;
		}
	return -1;
}

/* Seconds from the session's start to ns, or 0. */
static double
since_start_s(const struct ht_meta *m, uint64_t ns)
{
	if (m->start_ns == 0 || ns < m->start_ns)
		return 0;
	return (double)(ns - m->start_ns) / 1e9;
}

static double
duration_s(const struct ht_meta *m)
{
	return since_start_s(m, m->end_ns);
}

/* Text output. */

struct text {
	FILE	*fp;
	int	 raw;		/* --bytes */
};

/* Bytes of a profile string, with anything that could drive a terminal
 * (control characters) shown as '?'. */
void
ht_report_put_safe(FILE *fp, const char *s, size_t max)
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
text_interval(const struct text *t, const struct ht_view_figures *f,
    int exact)
{
	char lo_s[32], hi_s[32];
	uint64_t lo, hi;

	if (exact) {
		fprintf(t->fp, "exact");
		return;
	}
	ht_view_interval(f, &lo, &hi);
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
text_summary(const struct ht_view *v, const struct text *t)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct ht_view_figures *f = &v->total;
	char a[32], b[32], c[32];
	uint64_t predates = ht_view_predates_bytes(v);
	size_t i, w;

	fprintf(t->fp, "pid %" PRIu64 " (", m->pid);
	ht_report_put_safe(t->fp, m->command, sizeof(m->command));
	fprintf(t->fp, "): session %" PRIu64 " %s%s, ", m->epoch,
	    ht_profile_state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (v->exact)
		fprintf(t->fp, "rate 1 (every allocation, exact)");
	else
		fprintf(t->fp, "rate %s (sampled: figures are estimates)",
		    size_str(t, m->rate, a, sizeof(a)));
	fprintf(t->fp, ", %.2f s", duration_s(m));
	if (v->opts.at_peak)
		fprintf(t->fp, "; at peak, %.2f s in",
		    since_start_s(m, m->peak_ns));
	putc('\n', t->fp);

	fprintf(t->fp, LABEL "%10s in %" PRIu64 " object%s (", "in use",
	    size_str(t, f->inuse_bytes, a, sizeof(a)), f->inuse_objects,
	    plural(f->inuse_objects));
	text_interval(t, f, v->exact);
	if (v->live_known)
		fprintf(t->fp, "; %" PRIu64 " live sample%s", f->live_samples,
		    plural(f->live_samples));
	fputs(")\n", t->fp);
	fprintf(t->fp, LABEL "%10s in %" PRIu64 " object%s (%" PRIu64
	    " sample%s%s)\n", "allocated",
	    size_str(t, f->alloc_bytes, a, sizeof(a)), f->alloc_objects,
	    plural(f->alloc_objects), f->samples, plural(f->samples),
	    v->opts.at_peak ? "; whole session" : "");
	fprintf(t->fp, LABEL "%10s%s\n", "freed",
	    size_str(t, ht_view_freed_bytes(v), a, sizeof(a)),
	    v->opts.at_peak ? " (whole session)" : "");
	fprintf(t->fp, LABEL "%10s\n", "peak",
	    size_str(t, ht_view_peak_bytes(v), a, sizeof(a)));
	if (m->heap_inuse_bytes != 0 || m->heap_free_bytes != 0 ||
	    m->heap_mmap_bytes != 0) {
		fprintf(t->fp, LABEL "%10s in use, %s free, %s mmap",
		    "allocator",
		    size_str(t, m->heap_inuse_bytes, a, sizeof(a)),
		    size_str(t, m->heap_free_bytes, b, sizeof(b)),
		    size_str(t, m->heap_mmap_bytes, c, sizeof(c)));
		if (predates > 0)
			fprintf(t->fp, "; %s%s predates the session",
			    v->exact ? "" : "about ",
			    size_str(t, predates, a, sizeof(a)));
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
			ht_report_put_safe(t->fp, v->mods[i].name, w - 2);
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
			ht_report_put_safe(t->fp, th->name, sizeof(th->name));
			fprintf(t->fp, "%*s %10s %10s\n", n < 24 ? 24 - n : 0,
			    "", size_str(t, th->inuse_bytes, a, sizeof(a)),
			    size_str(t, th->alloc_bytes, b, sizeof(b)));
		}
	}
}

void
ht_report_frame(FILE *fp, const struct ht_sym_frame *fr)
{
	fputs("      ", fp);
	if (fr->inlined)
		fputs("[inlined] ", fp);
	if (fr->function != NULL)
		ht_report_put_safe(fp, fr->function, SIZE_MAX);
	else if (fr->file != NULL)
		fputs("??", fp);
	if (fr->file != NULL) {
		fputs(" (", fp);
		ht_report_put_safe(fp, fr->file, SIZE_MAX);
		if (fr->line > 0)
			fprintf(fp, ":%d", fr->line);
		fputs(")", fp);
	} else {
		if (fr->function != NULL)
			fputs(" (", fp);
		if (fr->module != NULL) {
			ht_report_put_safe(fp, fr->module, SIZE_MAX);
			fprintf(fp, "+0x%" PRIx64, fr->offset);
		} else
			fprintf(fp, "0x%" PRIx64, fr->address);
		if (fr->function != NULL)
			fputs(")", fp);
	}
	if (fr->flags & HT_SYM_BUILD_ID_MISMATCH)
		fputs(" [build-id mismatch]", fp);
	putc('\n', fp);
}

/* The first line of a row: the sorted column first, with its share. */
static void
text_row_head(const struct ht_view *v, const struct text *t,
    const struct ht_view_row *r, double pct)
{
	char a[32], b[32];
	const struct ht_view_figures *f = &r->f;

	size_str(t, f->inuse_bytes, a, sizeof(a));
	size_str(t, f->alloc_bytes, b, sizeof(b));
	switch (v->opts.sort) {
	case HT_VIEW_ALLOC:
		fprintf(t->fp, " allocated %s (%.1f%%) in %" PRIu64
		    " object%s, in use %s in %" PRIu64 " object%s\n", b, pct,
		    f->alloc_objects, plural(f->alloc_objects), a,
		    f->inuse_objects, plural(f->inuse_objects));
		break;
	case HT_VIEW_OBJECTS:
		fprintf(t->fp, " in use %s in %" PRIu64 " object%s (%.1f%%), "
		    "allocated %s in %" PRIu64 " object%s\n", a,
		    f->inuse_objects, plural(f->inuse_objects), pct, b,
		    f->alloc_objects, plural(f->alloc_objects));
		break;
	default:
		fprintf(t->fp, " in use %s (%.1f%%) in %" PRIu64 " object%s, "
		    "allocated %s in %" PRIu64 " object%s\n", a, pct,
		    f->inuse_objects, plural(f->inuse_objects), b,
		    f->alloc_objects, plural(f->alloc_objects));
		break;
	}
}

static int
text_detail(struct ht_view *v, const struct text *t)
{
	const struct ht_sym_frame *fr;
	const struct ht_view_row *r;
	uint64_t total = ht_view_value(v, &v->total);
	size_t i;
	int nfr, j;

	fprintf(t->fp, "\n%zu site%s, by %s%s\n", v->nsites,
	    v->nsites == 1 ? "" : "s", ht_view_value_name(v),
	    v->opts.at_peak ? " at peak" : "");
	for (i = 0; i < v->nrows; i++) {
		r = &v->rows[i];
		if (r->site == NULL)
			fprintf(t->fp, "\n(%zu smaller site%s)", r->nfolded,
			    plural(r->nfolded));
		else
			fprintf(t->fp, "\n#%zu", i + 1);
		text_row_head(v, t, r, total == 0 ? 0 :
		    100.0 * (double)ht_view_value(v, &r->f) / (double)total);
		fprintf(t->fp, "    %" PRIu64 " sample%s", r->f.samples,
		    plural(r->f.samples));
		if (v->live_known)
			fprintf(t->fp, ", %" PRIu64 " live", r->f.live_samples);
		fputs("; in use ", t->fp);
		text_interval(t, &r->f, v->exact);
		putc('\n', t->fp);
		if ((nfr = ht_view_frames(v, r, &fr)) < 0)
			return -1;
		for (j = 0; j < nfr; j++)
			ht_report_frame(t->fp, &fr[j]);
	}
	return 0;
}

static void
problem_note(void *arg, const char *path, const char *why)
{
	FILE *fp = arg;

	fputs("note: ", fp);
	ht_report_put_safe(fp, path, SIZE_MAX);
	fprintf(fp, ": %s; its frames show as module+offset\n", why);
}

static int
write_text(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts)
{
	struct text t = { fp, opts->raw_bytes };

	text_summary(v, &t);
	if (opts->detail) {
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

/* live_samples is null where the profile does not know it. */
static void
json_live(struct ht_json *j, const struct ht_view *v, uint64_t n)
{
	if (v->live_known)
		ht_json_uint(j, "live_samples", n);
	else
		ht_json_null(j, "live_samples");
}

static void
json_figures(struct ht_json *j, const struct ht_view *v,
    const struct ht_view_figures *f)
{
	uint64_t lo, hi;

	ht_view_interval(f, &lo, &hi);
	ht_json_uint(j, "inuse_bytes", f->inuse_bytes);
	ht_json_uint(j, "inuse_objects", f->inuse_objects);
	ht_json_uint(j, "alloc_bytes", f->alloc_bytes);
	ht_json_uint(j, "alloc_objects", f->alloc_objects);
	ht_json_uint(j, "samples", f->samples);
	json_live(j, v, f->live_samples);
	ht_json_uint(j, "inuse_bytes_low", lo);
	ht_json_uint(j, "inuse_bytes_high", hi);
}

static int
json_site(struct ht_json *j, struct ht_view *v, const struct ht_view_row *r)
{
	const struct ht_sym_frame *fr;
	int nfr, i;

	ht_json_object_begin(j, NULL);
	json_figures(j, v, &r->f);
	ht_json_uint(j, "folded_sites", r->nfolded);
	ht_json_array_begin(j, "frames");
	if ((nfr = ht_view_frames(v, r, &fr)) < 0)
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
	ht_json_array_end(j);
	ht_json_object_end(j);
	return 0;
}

static int
write_json(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts)
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
	ht_json_string(&j, "state", ht_profile_state_name(m->state));
	ht_json_uint(&j, "rate", m->rate);
	ht_json_double(&j, "duration_s", duration_s(m));
	ht_json_bool(&j, "exact", v->exact);
	ht_json_bool(&j, "at_exit", (m->flags & HT_META_AT_EXIT) != 0);
	ht_json_double(&j, "peak_s", since_start_s(m, m->peak_ns));
	ht_json_bool(&j, "at_peak", v->opts.at_peak);
	ht_json_string(&j, "sort", sort_names[v->opts.sort]);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "totals");
	ht_view_interval(&v->total, &lo, &hi);
	ht_json_uint(&j, "inuse_bytes", v->total.inuse_bytes);
	ht_json_uint(&j, "inuse_objects", v->total.inuse_objects);
	ht_json_uint(&j, "alloc_bytes", v->total.alloc_bytes);
	ht_json_uint(&j, "alloc_objects", v->total.alloc_objects);
	ht_json_uint(&j, "freed_bytes", ht_view_freed_bytes(v));
	ht_json_uint(&j, "peak_inuse_bytes", ht_view_peak_bytes(v));
	ht_json_uint(&j, "samples", v->total.samples);
	json_live(&j, v, v->total.live_samples);
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
	ht_json_uint(&j, "predates_session_bytes", ht_view_predates_bytes(v));
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

	if (opts->detail) {
		ht_json_array_begin(&j, "sites");
		for (i = 0; i < v->nrows; i++)
			if (json_site(&j, v, &v->rows[i]) != 0)
				return -1;
		ht_json_array_end(&j);
	}
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}

/* The exports cannot hold a note: say on stderr why frames are bare. */
static void
problem_warn(void *arg, const char *path, const char *why)
{
	(void)arg;
	ht_warn("note: %s: %s; its frames show as module+offset", path, why);
}

int
ht_report_write(FILE *fp, const struct ht_profile *prof, struct ht_sym *sym,
    const struct ht_report_opts *opts)
{
	struct ht_view_opts vopts;
	struct ht_view v;
	int rc;

	memset(&vopts, 0, sizeof(vopts));
	vopts.sort = opts->sort;
	vopts.top = opts->top;
	vopts.threshold = opts->threshold;
	vopts.at_peak = opts->at_peak;
	if (ht_view_build(&v, prof, sym, &vopts) != 0)
		return -1;
	switch (opts->format) {
	case HT_REPORT_JSON:
		rc = write_json(fp, &v, opts);
		break;
	case HT_REPORT_PPROF:
		rc = ht_pprof_write(fp, &v);
		break;
	case HT_REPORT_COLLAPSED:
		rc = ht_collapsed_write(fp, &v);
		break;
	case HT_REPORT_SVG:
		rc = ht_flame_write(fp, &v);
		break;
	default:
		rc = write_text(fp, &v, opts);
		break;
	}
	if (rc == 0 && opts->format != HT_REPORT_TEXT &&
	    opts->format != HT_REPORT_JSON)
		ht_sym_problems(sym, problem_warn, NULL);
	ht_view_free(&v);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}

/* The report command. */

static const char report_usage[] =
"usage: heaptool report [-p PID] [--detail] [--format FORMAT | --json]\n"
"                       [--sort COLUMN] [--top N] [--threshold SIZE]\n"
"                       [--at-peak] [--bytes] [-o OUT] [--diff | FILE]\n"
"\n"
"Print a profile: the session, the totals with their 95% intervals,\n"
"memory by module and by thread.  The profile is the one saved in FILE\n"
"(by heaptool run or dump; - reads stdin), or without FILE the current\n"
"one of the target (PID, or the current target of heaptool attach).\n"
"\n"
"  -p, --pid PID        report on the running process PID\n"
"  -d, --detail         also list every allocation site with its stack\n"
"  -f, --format FORMAT  text (default), json, pprof (gzip'd profile.proto),\n"
"                       collapsed (stacks for flamegraph.pl) or svg (an\n"
"                       interactive flame graph); pprof and svg need -o\n"
"                       or a redirection\n"
"  -j, --json           same as --format json\n"
"  -s, --sort COLUMN    inuse (bytes in use, default), alloc (bytes\n"
"                       allocated) or objects (objects in use): the order\n"
"                       of the sites and the value of collapsed and svg\n"
"  -t, --top N          list the N first sites, fold the rest into one\n"
"      --threshold SIZE fold the sites below SIZE in use and allocated\n"
"      --at-peak        the sites as they were at the peak of memory in use\n"
"      --diff           what changed since heaptool baseline, as heaptool\n"
"                       diff prints it (with --detail, --json, --top,\n"
"                       --bytes and -o only)\n"
"  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
"  -o, --output OUT     write the report to OUT instead of stdout\n"
"  -h, --help           show this help\n"
"\n"
"See man heaptool for the details and the JSON keys.\n";

enum {
	OPT_THRESHOLD = 256,
	OPT_AT_PEAK,
	OPT_DIFF,
};

static const struct option report_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "detail", no_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "format", required_argument, NULL, 'f' },
	{ "sort", required_argument, NULL, 's' },
	{ "top", required_argument, NULL, 't' },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "at-peak", no_argument, NULL, OPT_AT_PEAK },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "bytes", no_argument, NULL, 'b' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_report_parse_count(const char *s, size_t *out)
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

/* report --diff: the target now against its baseline, with the options
 * that heaptool diff has (the others do not apply to a diff). */
static int
report_diff(const char *popt, const struct ht_report_opts *opts,
    const char *out, const char *file)
{
	struct ht_diff_opts dopts;

	if (file != NULL)
		return ht_usage("report --diff: %s: the diff is of the "
		    "target against its baseline; to compare two files use "
		    "heaptool diff OLD NEW", file);
	if (opts->format != HT_REPORT_TEXT && opts->format != HT_REPORT_JSON)
		return ht_usage("report --diff: a diff is written as text or "
		    "JSON only; drop --format or use --json");
	if (opts->sort != HT_VIEW_INUSE || opts->threshold != 0 ||
	    opts->at_peak)
		return ht_usage("report --diff: --sort, --threshold and "
		    "--at-peak do not apply to a diff; see 'heaptool diff "
		    "--help'");
	memset(&dopts, 0, sizeof(dopts));
	dopts.detail = opts->detail;
	dopts.json = opts->format == HT_REPORT_JSON;
	dopts.top = opts->top;
	dopts.raw_bytes = opts->raw_bytes;
	return ht_diff_live(popt, &dopts, out);
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
	int c, diff = 0, rc = HT_EXIT_FAIL;
	pid_t pid = 0;

	memset(&opts, 0, sizeof(opts));
	memset(&sopts, 0, sizeof(sopts));
	opts.format = HT_REPORT_TEXT;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:djf:s:t:bo:h", report_options,
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
				    "this heaptool writes; use text, json, "
				    "pprof, collapsed or svg", optarg);
			break;
		case 's':
			if (ht_report_sort_parse(optarg, &opts.sort) != 0)
				return ht_usage("--sort %s: not a column; use "
				    "inuse, alloc or objects", optarg);
			break;
		case OPT_THRESHOLD:
			if (ht_size_parse(optarg, &opts.threshold) != 0)
				return ht_usage("--threshold %s: not a size; "
				    HT_SIZE_HINT, optarg);
			break;
		case OPT_AT_PEAK:
			opts.at_peak = 1;
			break;
		case OPT_DIFF:
			diff = 1;
			break;
		case 't':
			if (ht_report_parse_count(optarg, &opts.top) != 0)
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
	if (diff)
		return report_diff(popt, &opts, out,
		    optind < argc ? argv[optind] : NULL);
	if (optind < argc && popt != NULL)
		return ht_usage("report: -p %s and %s: give a process or a "
		    "file, not both", popt, argv[optind]);
	if ((opts.format == HT_REPORT_PPROF || opts.format == HT_REPORT_SVG) &&
	    out == NULL && isatty(STDOUT_FILENO))
		return ht_usage("report: --format %s writes a file, not "
		    "text for a terminal; give -o FILE or redirect stdout",
		    opts.format == HT_REPORT_PPROF ? "pprof" : "svg");

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
