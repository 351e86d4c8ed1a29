/*
 * The lines heaptool top prints (top-int.h) and its plain text: one block
 * a refresh, for a reader that is not a terminal (a file, a pipe, a
 * test).  The format is stable: a first line "heaptool top: N", the
 * session, the totals, the growth, the header of the sites' columns, a
 * line per site and a blank line.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "size.h"
#include "text.h"
#include "top-int.h"

char *
ht_top_clean(char *s)
{
	unsigned char *p;

	for (p = (unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
	return s;
}

const char *
ht_top_growth_str(const struct ht_top *t, int64_t g, char *buf, size_t len)
{
	char s[32];

	if (g == 0) {
		snprintf(buf, len, "0 B");
		return buf;
	}
	ht_text_size(t->raw, ht_diff_magnitude(g), s, sizeof(s));
	snprintf(buf, len, "%c%s", g < 0 ? '-' : '+', s);
	return buf;
}

const char *
ht_top_rate_str(const struct ht_top *t, int64_t g, char *buf, size_t len)
{
	double r = ht_top_rate(t, g);
	char s[32];

	if (t->elapsed_s <= 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (fabs(r) >= 18446744073709551615.0)
		r = r < 0 ? -18446744073709551615.0 : 18446744073709551615.0;
	if (llround(fabs(r)) == 0) {
		snprintf(buf, len, "0 B/s");
		return buf;
	}
	ht_text_size(t->raw, (uint64_t)llround(fabs(r)), s, sizeof(s));
	snprintf(buf, len, "%c%s/s", r < 0 ? '-' : '+', s);
	return buf;
}

const char *
ht_top_session_line(struct ht_top *t, char *buf, size_t len)
{
	const struct ht_meta *m = &t->cur->meta;
	struct ht_view *v = ht_top_view(t);
	char cmd[sizeof(m->command)], r[64], sz[32];
	const char *rate;

	memcpy(cmd, m->command, sizeof(cmd));
	cmd[sizeof(cmd) - 1] = '\0';
	if (v->exact)
		rate = "rate 1 (exact)";
	else if (v->every)
		rate = "rate 1 (NOT EXACT)";
	else {
		snprintf(r, sizeof(r), "rate %s (estimates)",
		    ht_text_size(t->raw, m->rate, sz, sizeof(sz)));
		rate = r;
	}
	snprintf(buf, len,
	    "pid %" PRIu64 " (%s), session %" PRIu64 " %s, %s, "
	    "%.2f s",
	    m->pid, ht_top_clean(cmd), m->epoch,
	    ht_profile_state_name(m->state), rate, ht_text_duration_s(m));
	return buf;
}

const char *
ht_top_totals_line(struct ht_top *t, char *buf, size_t len)
{
	struct ht_view *v = ht_top_view(t);
	const struct ht_meta *m = &t->cur->meta;
	const struct ht_view_figures *f = &v->total;
	char a[32], lo_s[32], hi_s[32], iv[80], al[48];
	uint64_t lo, hi;

	if (v->exact)
		snprintf(iv, sizeof(iv), "exact");
	else {
		ht_view_interval(v, f, &lo, &hi);
		if (v->every || hi == UINT64_MAX)
			snprintf(iv, sizeof(iv), "at least");
		else
			snprintf(iv, sizeof(iv), "95%% %s..%s",
			    ht_text_size(t->raw, lo, lo_s, sizeof(lo_s)),
			    ht_text_size(t->raw, hi, hi_s, sizeof(hi_s)));
	}
	if (m->flags & HT_META_ALLOC_UNKNOWN)
		snprintf(al, sizeof(al), ", allocated unknown");
	else
		snprintf(al, sizeof(al), ", allocated %s",
		    ht_text_size(t->raw, f->alloc_bytes, lo_s, sizeof(lo_s)));
	snprintf(buf, len, "in use %s in %" PRIu64 " object%s (%s)%s",
	    ht_text_size(t->raw, f->inuse_bytes, a, sizeof(a)),
	    f->inuse_objects, f->inuse_objects == 1 ? "" : "s", iv, al);
	return buf;
}

const char *
ht_top_growth_line(struct ht_top *t, char *buf, size_t len)
{
	int64_t g = ht_top_total_growth(t);
	uint64_t rss = t->cur->meta.rss_bytes;
	char a[32], b[32], c[32], since[64];

	if (t->why == HT_TOP_BASE_USER)
		snprintf(since, sizeof(since), "the baseline");
	else if (t->why == HT_TOP_BASE_SESSION)
		snprintf(since, sizeof(since), "session %" PRIu64 " was seen",
		    t->base->meta.epoch);
	else
		snprintf(since, sizeof(since), "the view started");
	snprintf(buf, len, "RSS %s; growth %s in %.1f s (%s) since %s",
	    rss != 0 ? ht_text_size(t->raw, rss, c, sizeof(c)) : "unknown",
	    ht_top_growth_str(t, g, a, sizeof(a)), t->elapsed_s,
	    ht_top_rate_str(t, g, b, sizeof(b)), since);
	return buf;
}

const char *
ht_top_where(const struct ht_sym_frame *fr, char *buf, size_t len)
{
	const char *base;

	if (fr->file != NULL) {
		base = strrchr(fr->file, '/');
		base = base != NULL ? base + 1 : fr->file;
		if (fr->line > 0)
			snprintf(buf, len, "%s:%d", base, fr->line);
		else
			snprintf(buf, len, "%s", base);
	} else if (fr->module != NULL)
		snprintf(buf, len, "%s+0x%" PRIx64, fr->module, fr->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, fr->address);
	return ht_top_clean(buf);
}

const char *
ht_top_header(char *buf, size_t len)
{
	snprintf(buf, len, "%10s %10s %11s %8s  %s", "in use", "growth", "/s",
	    "samples", "function  file:line");
	return buf;
}

const char *
ht_top_site_line(struct ht_top *t, const struct ht_top_site *s, char *buf,
    size_t len)
{
	const struct ht_sym_frame *fr;
	char a[32], g[32], r[32], name[256], where[256];
	const char *fn;

	fn = ht_top_site_name(t, s, name, sizeof(name));
	if (fn != name)
		snprintf(name, sizeof(name), "%s", fn);
	ht_top_clean(name);
	where[0] = '\0';
	if ((fr = ht_top_site_frame(t, s)) != NULL &&
	    (fr->function != NULL || fr->file != NULL))
		ht_top_where(fr, where, sizeof(where));
	snprintf(buf, len, "%10s %10s %11s %8" PRIu64 "  %s%s%s",
	    ht_text_size(t->raw, s->inuse_bytes, a, sizeof(a)),
	    ht_top_growth_str(t, s->growth, g, sizeof(g)),
	    ht_top_rate_str(t, s->growth, r, sizeof(r)), s->samples, name,
	    where[0] != '\0' ? "  " : "", where);
	return buf;
}

const char *
ht_top_frame_line(const struct ht_sym_frame *fr, char *buf, size_t len)
{
	char name[256], where[256];
	const char *fn;

	fn = ht_view_frame_name(fr, name, sizeof(name));
	if (fn != name)
		snprintf(name, sizeof(name), "%s", fn);
	ht_top_clean(name);
	where[0] = '\0';
	/* A frame known by module+offset only says it once. */
	if (fr->function != NULL || fr->file != NULL)
		ht_top_where(fr, where, sizeof(where));
	snprintf(buf, len, "%s%s%s%s", fr->inlined ? "[inlined] " : "", name,
	    where[0] != '\0' ? "  " : "", where);
	return buf;
}

int
ht_top_text(FILE *fp, struct ht_top *t, size_t nsites)
{
	char line[1024];
	size_t i, n;

	if (ht_top_view(t) == NULL)
		return 0;
	n = nsites > 0 && nsites < t->nsites ? nsites : t->nsites;
	fprintf(fp, "heaptool top: %" PRIu64 "\n", t->refreshes);
	fprintf(fp, "%s\n", ht_top_session_line(t, line, sizeof(line)));
	fprintf(fp, "%s\n", ht_top_totals_line(t, line, sizeof(line)));
	fprintf(fp, "%s\n", ht_top_growth_line(t, line, sizeof(line)));
	fprintf(fp, "%zu site%s by %s%s\n", t->nsites,
	    t->nsites == 1 ? "" : "s", ht_top_sort_name(t->sort),
	    n < t->nsites ? ", the first shown" : "");
	fprintf(fp, "%s\n", ht_top_header(line, sizeof(line)));
	for (i = 0; i < n; i++)
		fprintf(fp, "%s\n",
		    ht_top_site_line(t, &t->sites[i], line, sizeof(line)));
	putc('\n', fp);
	if (fflush(fp) != 0 || ferror(fp))
		return -1;
	return 0;
}
