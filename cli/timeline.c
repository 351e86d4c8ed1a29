/* The session's memory over time, for the reports (timeline.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "sampling.h"
#include "text.h"
#include "timeline.h"

static void
bounds(const struct ht_view *v, uint64_t est, double var,
    struct ht_timeline_point *p)
{
	double lo, hi;

	ht_sample_interval((double)est, var, &lo, &hi);
	p->inuse_low = ht_sample_round(lo);
	p->inuse_high = ht_view_meta_floor(&v->prof->meta) ?
	    UINT64_MAX :
	    ht_sample_round(hi);
}

size_t
ht_timeline_points(const struct ht_view *v, struct ht_timeline_point **out)
{
	const struct ht_profile *prof = v->prof;
	const struct ht_meta *m = &prof->meta;
	struct ht_timeline_point *p;
	size_t i, n = prof->ntimeline;

	*out = NULL;
	if (n == 0)
		return 0;
	if ((p = calloc(n + 1, sizeof(*p))) == NULL) {
		errno = ENOMEM;
		return (size_t)-1;
	}
	for (i = 0; i < n; i++) {
		const struct ht_timeline_rec *r = &prof->timeline[i];

		p[i].t_s = (double)r->t_ms / 1000.0;
		p[i].inuse_bytes = r->inuse_bytes;
		bounds(v, r->inuse_bytes, r->inuse_var, &p[i]);
		p[i].alloc_bytes = r->alloc_bytes;
		p[i].rss_bytes = r->rss_bytes;
		p[i].samples = r->samples;
	}
	/* The end: the profile's totals, where it is later than the last
	 * point (a profile at peak is not the end). */
	if (!v->opts.at_peak && ht_text_duration_s(m) > p[n - 1].t_s) {
		p[n].t_s = ht_text_duration_s(m);
		p[n].inuse_bytes = v->total.inuse_bytes;
		bounds(v, v->total.inuse_bytes, v->total.inuse_var, &p[n]);
		p[n].alloc_bytes = v->total.alloc_bytes;
		p[n].rss_bytes = m->rss_bytes;
		p[n].samples = m->samples;
		n++;
	}
	*out = p;
	return n;
}

int
ht_timeline_text(FILE *fp, const struct ht_view *v, int raw)
{
	struct ht_timeline_point *p;
	char a[32], b[32], c[32], d[32], e[32];
	size_t i, n;

	if ((n = ht_timeline_points(v, &p)) == (size_t)-1)
		return -1;
	fputc('\n', fp);
	if (n == 0) {
		fputs("memory over time: no point (a profile older than "
		      "format version 8, or a session shorter than its first "
		      "point)\n",
		    fp);
		return ferror(fp) ? -1 : 0;
	}
	fprintf(fp,
	    "memory over time: %zu point%s (one each 100 ms at most, older "
	    "ones thinned; the last is the end)\n",
	    n, n == 1 ? "" : "s");
	fprintf(fp, "%10s %12s %27s %12s %12s %9s\n", "time", "in use",
	    "95% interval", "allocated", "RSS", "samples");
	for (i = 0; i < n; i++) {
		ht_text_size(raw, p[i].inuse_low, b, sizeof(b));
		if (p[i].inuse_high == UINT64_MAX)
			snprintf(c, sizeof(c), "?");
		else
			ht_text_size(raw, p[i].inuse_high, c, sizeof(c));
		{
			char iv[72];

			snprintf(iv, sizeof(iv), "%s..%s", b, c);
			fprintf(fp,
			    "%8.2f s %12s %27s %12s %12s %9" PRIu64 "\n",
			    p[i].t_s,
			    ht_text_size(raw, p[i].inuse_bytes, a, sizeof(a)),
			    iv,
			    ht_text_size(raw, p[i].alloc_bytes, d, sizeof(d)),
			    ht_text_size(raw, p[i].rss_bytes, e, sizeof(e)),
			    p[i].samples);
		}
	}
	free(p);
	return ferror(fp) ? -1 : 0;
}

int
ht_timeline_json(struct ht_json *j, const struct ht_view *v)
{
	struct ht_timeline_point *p;
	size_t i, n;

	if ((n = ht_timeline_points(v, &p)) == (size_t)-1)
		return -1;
	ht_json_array_begin(j, "timeline");
	for (i = 0; i < n; i++) {
		ht_json_object_line(j, NULL);
		ht_json_double(j, "t_s", p[i].t_s);
		ht_json_uint(j, "inuse_bytes", p[i].inuse_bytes);
		ht_json_uint(j, "inuse_bytes_low", p[i].inuse_low);
		if (p[i].inuse_high == UINT64_MAX)
			ht_json_null(j, "inuse_bytes_high");
		else
			ht_json_uint(j, "inuse_bytes_high", p[i].inuse_high);
		ht_json_uint(j, "alloc_bytes", p[i].alloc_bytes);
		ht_json_uint(j, "rss_bytes", p[i].rss_bytes);
		ht_json_uint(j, "samples", p[i].samples);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
	free(p);
	return 0;
}
