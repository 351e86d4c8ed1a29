/* The HTML report (html.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "allocnames.h"
#include "flame.h"
#include "html.h"
#include "size.h"
#include "sizes.h"
#include "text.h"
#include "timeline.h"

/* The chart's geometry, in pixels. */
#define CHART_W		960
#define CHART_H		240
#define PAD_L		80
#define PAD_R		20
#define PAD_T		12
#define PAD_B		36
#define TICKS		5
/* The sites listed. */
#define TOP_SITES	25
/* Frames narrower than this many pixels are left out of the page's flame
 * graphs (the flame graph file leaves out those under half of one): so a
 * profile of 20,000 sites makes a page of a few MiB. */
#define FLAME_MIN_PX	1.0
/* And where a graph's SVG is still longer than this, narrower frames go
 * too (the threshold raised by half until it fits): two graphs and the rest of
 * the page stay under 5 MB, whatever the profile. */
#define FLAME_MAX_BYTES ((size_t)2 << 20)
/* A flame graph's frame is at most this high; it scrolls within. */
#define FLAME_FRAME_H	640

static const char style[] =
    "body { font-family: sans-serif; margin: 16px 24px; color: #222; }\n"
    "h1 { font-size: 20px; margin: 0 0 4px 0; }\n"
    "h2 { font-size: 16px; margin: 22px 0 6px 0; }\n"
    "p.session { margin: 0 0 8px 0; color: #444; }\n"
    "table { border-collapse: collapse; font-size: 13px; }\n"
    "td, th { padding: 2px 10px 2px 0; text-align: left; "
    "vertical-align: top; }\n"
    "td.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "tr.site:nth-child(even) { background: #f4f4f0; }\n"
    "code { font-size: 12px; }\n"
    "iframe { border: 1px solid #ccc; width: 1210px; }\n"
    "svg text { font-size: 11px; fill: #444; }\n"
    ".note { color: #666; font-size: 12px; }\n";

static void
put_size(FILE *fp, uint64_t v)
{
	char b[32];

	fputs(ht_size_format(v, b, sizeof(b)), fp);
}

static void
put_session(FILE *fp, const struct ht_view *v)
{
	const struct ht_meta *m = &v->prof->meta;
	char a[32];

	fputs("<h1>heaptool: ", fp);
	ht_text_xml(fp, m->command, sizeof(m->command));
	fprintf(fp, " (pid %" PRIu64 ")</h1>\n<p class=\"session\">", m->pid);
	fprintf(fp, "session %" PRIu64 " %s%s, ", m->epoch,
	    ht_profile_state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (v->exact)
		fputs("rate 1 (every allocation, exact)", fp);
	else if (ht_view_meta_floor(m))
		fputs("rate 1 by the allocator's own sampling: figures are "
		      "floors",
		    fp);
	else if (v->every)
		fputs("rate 1, NOT EXACT: samples dropped", fp);
	else
		fprintf(fp, "sampled every %s: figures are estimates",
		    ht_size_format(m->rate, a, sizeof(a)));
	fprintf(fp, ", %.2f s", ht_text_duration_s(m));
	if (m->backend > HT_BACKEND_INLINE)
		fputs(", the allocator's own sampling", fp);
	fputs("</p>\n", fp);
}

/* The chart's x and y of time t and of b bytes. */
static double
chart_x(double t, double tmax)
{
	return PAD_L + (tmax > 0 ? t / tmax : 0) * (CHART_W - PAD_L - PAD_R);
}

static double
chart_y(uint64_t b, double ymax)
{
	return PAD_T +
	    (1.0 - (ymax > 0 ? (double)b / ymax : 0)) *
	    (CHART_H - PAD_T - PAD_B);
}

static void
put_axes(FILE *fp, double tmax, double ymax)
{
	int i;

	fprintf(fp,
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	    "stroke=\"#888\"/>\n",
	    PAD_L, CHART_H - PAD_B, CHART_W - PAD_R, CHART_H - PAD_B);
	fprintf(fp,
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	    "stroke=\"#888\"/>\n",
	    PAD_L, PAD_T, PAD_L, CHART_H - PAD_B);
	for (i = 0; i <= TICKS; i++) {
		double b = ymax * i / TICKS, t = tmax * i / TICKS;
		double y = chart_y((uint64_t)b, ymax), x = chart_x(t, tmax);

		fprintf(fp,
		    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		    "stroke=\"#eee\"/>\n",
		    PAD_L, y, CHART_W - PAD_R, y);
		fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
		    PAD_L - 6, y + 4);
		put_size(fp, (uint64_t)b);
		fputs("</text>\n", fp);
		fprintf(fp,
		    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g "
		    "s</text>\n",
		    x, CHART_H - PAD_B + 16, t);
	}
}

/* The chart of memory over time, or a line saying there is none. */
static int
put_chart(FILE *fp, const struct ht_view *v)
{
	struct ht_timeline_point *p;
	double tmax = 0, ymax = 0;
	size_t i, n;
	int band = !ht_view_meta_floor(&v->prof->meta);

	if ((n = ht_timeline_points(v, &p)) == (size_t)-1)
		return -1;
	fputs("<h2>Memory over time</h2>\n", fp);
	if (n == 0) {
		fputs("<p class=\"note\">No point: the profile is older than "
		      "format version 8, or its session ended before its "
		      "first point.</p>\n",
		    fp);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (p[i].t_s > tmax)
			tmax = p[i].t_s;
		if ((double)p[i].rss_bytes > ymax)
			ymax = (double)p[i].rss_bytes;
		if ((double)p[i].inuse_bytes > ymax)
			ymax = (double)p[i].inuse_bytes;
		if (band && (double)p[i].inuse_high > ymax)
			ymax = (double)p[i].inuse_high;
	}
	ymax = ymax > 0 ? ymax * 1.05 : 1;
	fprintf(fp,
	    "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
	    CHART_W, CHART_H, CHART_W, CHART_H);
	put_axes(fp, tmax, ymax);
	if (band) {
		fputs("<polygon id=\"band\" fill=\"rgb(70,110,200)\" "
		      "fill-opacity=\"0.2\" stroke=\"none\" points=\"",
		    fp);
		for (i = 0; i < n; i++)
			fprintf(fp, "%.1f,%.1f ", chart_x(p[i].t_s, tmax),
			    chart_y(p[i].inuse_low, ymax));
		for (i = n; i-- > 0;)
			fprintf(fp, "%.1f,%.1f ", chart_x(p[i].t_s, tmax),
			    chart_y(p[i].inuse_high, ymax));
		fputs("\"/>\n", fp);
	}
	fputs("<polyline id=\"rss\" fill=\"none\" stroke=\"rgb(200,90,40)\" "
	      "stroke-width=\"1.5\" points=\"",
	    fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%.1f,%.1f ", chart_x(p[i].t_s, tmax),
		    chart_y(p[i].rss_bytes, ymax));
	fputs("\"/>\n<polyline id=\"inuse\" fill=\"none\" "
	      "stroke=\"rgb(40,70,170)\" stroke-width=\"2\" points=\"",
	    fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%.1f,%.1f ", chart_x(p[i].t_s, tmax),
		    chart_y(p[i].inuse_bytes, ymax));
	fputs("\"/>\n", fp);
	fprintf(fp,
	    "<text x=\"%d\" y=\"%d\" style=\"fill: rgb(40,70,170)\">in use%s"
	    "</text>\n<text x=\"%d\" y=\"%d\" style=\"fill: "
	    "rgb(200,90,40)\">RSS</text>\n",
	    PAD_L + 10, PAD_T + 12, band ? " (band: its 95% interval)" : "",
	    PAD_L + 10, PAD_T + 26);
	fputs("</svg>\n", fp);
	fprintf(fp,
	    "<p class=\"note\">%zu points, at most one each 100 ms, older "
	    "ones thinned; the last is the profile's end.</p>\n",
	    n);
	free(p);
	return 0;
}

static void
row(FILE *fp, const char *label, const char *value)
{
	fputs("<tr><th>", fp);
	ht_text_xml(fp, label, SIZE_MAX);
	fputs("</th><td class=\"n\">", fp);
	ht_text_xml(fp, value, SIZE_MAX);
	fputs("</td></tr>\n", fp);
}

/* "1.00 MiB (95% 0.9 MiB..1.1 MiB)", "exact", or "at least". */
static const char *
interval(const struct ht_view *v, const struct ht_view_figures *f, char *buf,
    size_t len)
{
	char a[32], b[32];
	uint64_t lo, hi;

	if (v->exact)
		return "exact";
	ht_view_interval(v, f, &lo, &hi);
	if (v->every || hi == UINT64_MAX)
		return "at least";
	snprintf(buf, len, "95%% %s..%s", ht_size_format(lo, a, sizeof(a)),
	    ht_size_format(hi, b, sizeof(b)));
	return buf;
}

static void
put_summary(FILE *fp, const struct ht_view *v)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct ht_view_figures *f = &v->total;
	char a[64], b[96], c[160];

	fputs("<h2>Summary</h2>\n<table id=\"summary\">\n", fp);
	snprintf(c, sizeof(c), "%s in %" PRIu64 " objects (%s)",
	    ht_size_format(f->inuse_bytes, a, sizeof(a)), f->inuse_objects,
	    interval(v, f, b, sizeof(b)));
	row(fp, "in use", c);
	if (m->flags & HT_META_ALLOC_UNKNOWN)
		row(fp, "allocated", "unknown");
	else {
		snprintf(c, sizeof(c), "%s in %" PRIu64 " objects",
		    ht_size_format(f->alloc_bytes, a, sizeof(a)),
		    f->alloc_objects);
		row(fp, "allocated", c);
	}
	row(fp, "peak",
	    (m->flags & HT_META_PEAK_UNKNOWN) ?
		"unknown" :
		ht_size_format(ht_view_peak_bytes(v), a, sizeof(a)));
	row(fp, "RSS", ht_size_format(m->rss_bytes, a, sizeof(a)));
	snprintf(c, sizeof(c), "%" PRIu64 " (%" PRIu64 " dropped)", m->samples,
	    m->dropped_samples);
	row(fp, "samples", c);
	snprintf(c, sizeof(c), "%zu", v->nsites);
	row(fp, "sites", c);
	row(fp, "heaptool agent",
	    ht_size_format(m->overhead_bytes, a, sizeof(a)));
	fputs("</table>\n", fp);
}

/* The row's site frame (its first outside allocator wrappers: view.h's
 * ht_view_fold): function and file:line, or the row's name. */
static int
put_site_where(FILE *fp, struct ht_view *v, const struct ht_view_row *r)
{
	const struct ht_sym_frame *fr;
	char buf[128];
	int n, k;

	if ((k = ht_view_fold(v, r, NULL)) < 0 ||
	    (n = ht_view_frames(v, r, &fr)) < 0)
		return -1;
	if (k > 0 && k < n) {
		fr += k;
		n -= k;
	}
	fputs("<td><code>", fp);
	if (n == 0)
		ht_text_xml(fp, ht_view_row_name(r, buf, sizeof(buf)),
		    SIZE_MAX);
	else
		ht_text_xml(fp, ht_view_frame_name(&fr[0], buf, sizeof(buf)),
		    SIZE_MAX);
	fputs("</code></td><td><code>", fp);
	if (n > 0 && fr[0].file != NULL) {
		ht_text_xml(fp, fr[0].file, SIZE_MAX);
		if (fr[0].line > 0)
			fprintf(fp, ":%d", fr[0].line);
	}
	fputs("</code></td>", fp);
	return 0;
}

static int
put_sites(FILE *fp, struct ht_view *v)
{
	const struct ht_meta *m = &v->prof->meta;
	char a[32], b[96];
	size_t i;

	/* Short-lived allocations where the profile counts them. */
	fprintf(fp,
	    "<h2>Top sites, by bytes in use</h2>\n<table id=\"sites\">\n"
	    "<tr><th>#</th><th>in use</th><th>interval</th>"
	    "<th>allocated</th><th>samples</th>%s<th>function</th>"
	    "<th>where</th></tr>\n",
	    v->temp_known ? "<th>short-lived</th>" : "");
	for (i = 0; i < v->nrows && i < TOP_SITES; i++) {
		const struct ht_view_row *r = &v->rows[i];

		fprintf(fp, "<tr class=\"site\"><td class=\"n\">%zu</td>",
		    i + 1);
		fprintf(fp, "<td class=\"n\">%s</td>",
		    ht_size_format(r->f.inuse_bytes, a, sizeof(a)));
		fprintf(fp, "<td class=\"n\">%s</td>",
		    interval(v, &r->f, b, sizeof(b)));
		fprintf(fp, "<td class=\"n\">%s</td>",
		    (m->flags & HT_META_ALLOC_UNKNOWN) ?
			"unknown" :
			ht_size_format(r->f.alloc_bytes, a, sizeof(a)));
		fprintf(fp, "<td class=\"n\">%" PRIu64 "</td>", r->f.samples);
		if (v->temp_known)
			fprintf(fp, "<td class=\"n\">%" PRIu64 "</td>",
			    r->f.temp_objects);
		if (put_site_where(fp, v, r) != 0)
			return -1;
		fputs("</tr>\n", fp);
	}
	fputs("</table>\n", fp);
	if (v->nrows > TOP_SITES)
		fprintf(fp,
		    "<p class=\"note\">%zu more rows: heaptool report "
		    "--detail lists them all.</p>\n",
		    v->nrows - TOP_SITES);
	return 0;
}

/* A byte of an SVG in a data: URL inside a double-quoted attribute: what
 * a URL or the attribute would take for its own, percent-encoded. */
static void
put_url_byte(FILE *fp, unsigned char c)
{
	if (c < 0x20 || c >= 0x7f || c == '%' || c == '#' || c == '"' ||
	    c == '&' || c == '<' || c == '>' || c == '\'')
		fprintf(fp, "%%%02X", c);
	else
		putc(c, fp);
}

/* v's flame graph, root on top, frames under min_px left out, into a
 * malloc'd *svg of *len bytes.  Returns 0, or -1 with errno set. */
static int
flame_svg(struct ht_view *v, double min_px, char **svg, size_t *len)
{
	FILE *mem;
	int rc;

	*svg = NULL;
	*len = 0;
	if ((mem = open_memstream(svg, len)) == NULL)
		return -1;
	rc = ht_flame_write_as(mem, v, 1, min_px);
	if (fclose(mem) != 0)
		rc = -1;
	if (rc != 0) {
		free(*svg);
		*svg = NULL;
	}
	return rc;
}

/* v's flame graph, root on top, as a frame of its own, at most
 * FLAME_MAX_BYTES. */
static int
put_flame(FILE *fp, struct ht_view *v, const char *id, const char *title)
{
	double min_px = FLAME_MIN_PX;
	const char *h;
	char *svg;
	size_t len, i;
	int height = FLAME_FRAME_H;

	if (flame_svg(v, min_px, &svg, &len) != 0)
		return -1;
	while (len > FLAME_MAX_BYTES && min_px < 1024) {
		free(svg);
		min_px *= 1.5;
		if (flame_svg(v, min_px, &svg, &len) != 0)
			return -1;
	}
	/* The frame as high as the graph, up to FLAME_FRAME_H: the first
	 * height="N" of the SVG is its root's. */
	if ((h = strstr(svg, " height=\"")) != NULL &&
	    sscanf(h, " height=\"%d\"", &height) == 1 && height > 0 &&
	    height + 4 < FLAME_FRAME_H)
		height += 4;
	else
		height = FLAME_FRAME_H;
	fputs("<h2>", fp);
	ht_text_xml(fp, title, SIZE_MAX);
	fprintf(fp,
	    "</h2>\n<iframe id=\"%s\" height=\"%d\" "
	    "title=\"flame graph\" src=\"data:image/svg+xml;charset=utf-8,",
	    id, height);
	for (i = 0; i < len; i++)
		put_url_byte(fp, (unsigned char)svg[i]);
	fputs("\"></iframe>\n", fp);
	free(svg);
	return 0;
}

/* The view of v's profile by opts with sort, symbolized, into out. */
static int
view_by(struct ht_view *out, const struct ht_view *v,
    const struct ht_view_opts *opts, enum ht_view_sort sort)
{
	struct ht_view_opts o = *opts;

	o.sort = sort;
	if (ht_view_build(out, v->prof, v->sym, &o) != 0)
		return -1;
	if (ht_view_symbolize(out) != 0) {
		ht_view_free(out);
		return -1;
	}
	return 0;
}

int
ht_html_write(FILE *fp, struct ht_view *v, const struct ht_view_opts *vopts)
{
	const struct ht_meta *m = &v->prof->meta;
	struct ht_view by_inuse, by_alloc, *in = v;
	int have_in = 0, have_alloc = 0, rc = -1;

	if (v->opts.sort != HT_VIEW_INUSE) {
		if (view_by(&by_inuse, v, vopts, HT_VIEW_INUSE) != 0)
			return -1;
		in = &by_inuse;
		have_in = 1;
	}
	if (!(m->flags & HT_META_ALLOC_UNKNOWN)) {
		if (view_by(&by_alloc, v, vopts, HT_VIEW_ALLOC) != 0)
			goto out;
		have_alloc = 1;
	}
	/* The policy lets the page fetch nothing, wherever it is opened:
	 * its style and scripts are inline, its frames data: URLs. */
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" "
	      "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	      "script-src 'unsafe-inline'; img-src data:; frame-src data:\">\n"
	      "<title>heaptool: ",
	    fp);
	ht_text_xml(fp, m->command, sizeof(m->command));
	fprintf(fp,
	    " (pid %" PRIu64 ")</title>\n<style>\n%s</style>\n"
	    "</head>\n<body>\n",
	    m->pid, style);
	/* What a first screen should show: the chart and the flame graph
	 * by bytes in use; then the tables. */
	put_session(fp, in);
	if (put_chart(fp, in) != 0)
		goto out;
	if (put_flame(fp, in, "flame-inuse", "Flame graph: bytes in use") != 0)
		goto out;
	put_summary(fp, in);
	if (put_sites(fp, in) != 0)
		goto out;
	ht_sizes_html(fp, in);
	if (have_alloc) {
		if (put_flame(fp, &by_alloc, "flame-alloc",
			"Flame graph: bytes allocated") != 0)
			goto out;
	} else
		fputs("<h2>Flame graph: bytes allocated</h2>\n<p "
		      "class=\"note\">Unknown: the allocator's own sampling "
		      "kept no count of what was allocated.</p>\n",
		    fp);
	fputs("<p class=\"note\">Root at the top; a frame under one pixel "
	      "wide is left out with the frames above it. Click a frame to "
	      "zoom; its title gives file:line and its share.</p>\n"
	      "</body>\n</html>\n",
	    fp);
	rc = ferror(fp) ? -1 : 0;
out:
	if (have_alloc)
		ht_view_free(&by_alloc);
	if (have_in)
		ht_view_free(&by_inuse);
	return rc;
}
