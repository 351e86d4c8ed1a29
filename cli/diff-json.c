/*
 * The JSON of a diff (see diff.h): both sessions, old, new and delta of
 * every total and per module, and with detail every site with its status,
 * its sides, its delta and its stack.  The keys are documented in
 * heaptool(1).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "json.h"
#include "text.h"

/* The keys of a site's columns (enum ht_diff_col). */
static const char *const col_keys[HT_DIFF_NCOLS] = {
	"inuse_bytes",
	"inuse_objects",
	"alloc_bytes",
	"alloc_objects",
	"freed_bytes",
	"samples",
	"temporary_objects",
};

static void
json_session(struct ht_json *j, const char *key, const struct ht_diff *d, int k)
{
	const struct ht_meta *m = &d->prof[k]->meta;

	ht_json_object_begin(j, key);
	ht_json_uint(j, "pid", m->pid);
	ht_json_stringn(j, "command", m->command,
	    strnlen(m->command, sizeof(m->command)));
	ht_json_uint(j, "epoch", m->epoch);
	ht_json_string(j, "state", ht_profile_state_name(m->state));
	ht_json_uint(j, "rate", m->rate);
	ht_json_double(j, "duration_s", ht_text_duration_s(m));
	ht_json_bool(j, "exact", ht_view_meta_exact(m));
	ht_json_uint(j, "dropped_samples", m->dropped_samples);
	ht_json_bool(j, "at_exit", (m->flags & HT_META_AT_EXIT) != 0);
	ht_json_uint(j, "site_count", d->v[k].nsites);
	ht_json_object_end(j);
}

/* {"old": o, "new": n, "delta": n - o}, null where column c of a side is
 * unknown (ht_diff_unknown). */
static void
json_triple(struct ht_json *j, const struct ht_diff *d, int c, const char *key,
    uint64_t o, uint64_t n)
{
	int uo = ht_diff_unknown(d, 0, c), un = ht_diff_unknown(d, 1, c);

	ht_json_object_begin(j, key);
	if (uo)
		ht_json_null(j, "old");
	else
		ht_json_uint(j, "old", o);
	if (un)
		ht_json_null(j, "new");
	else
		ht_json_uint(j, "new", n);
	if (uo || un)
		ht_json_null(j, "delta");
	else
		ht_json_int(j, "delta", ht_diff_delta(o, n));
	ht_json_object_end(j);
}

/* Side k of a site: null where a column is unknown. */
static void
json_side(struct ht_json *j, const struct ht_diff *d, int k,
    const struct ht_diff_side *s)
{
	int c;

	ht_json_object_begin(j, k == 0 ? "old" : "new");
	for (c = 0; c < HT_DIFF_NCOLS; c++)
		if (ht_diff_unknown(d, k, c))
			ht_json_null(j, col_keys[c]);
		else
			ht_json_uint(j, col_keys[c], s->v[c]);
	ht_json_object_end(j);
}

/* An end of a change's interval, null where it is unknown (d->floor). */
static void
json_bound(struct ht_json *j, const struct ht_diff *d, const char *key,
    int64_t v)
{
	if (d->floor)
		ht_json_null(j, key);
	else
		ht_json_int(j, key, v);
}

static int
json_site(struct ht_json *j, struct ht_diff *d, const struct ht_diff_site *s)
{
	int64_t lo, hi;
	int c, k;

	ht_json_object_begin(j, NULL);
	ht_json_string(j, "status", ht_diff_status_name(s->status));
	json_side(j, d, 0, &s->s[0]);
	json_side(j, d, 1, &s->s[1]);
	ht_json_object_begin(j, "delta");
	for (c = 0; c < HT_DIFF_NCOLS; c++)
		if (ht_diff_unknown(d, 0, c) || ht_diff_unknown(d, 1, c))
			ht_json_null(j, col_keys[c]);
		else
			ht_json_int(j, col_keys[c], ht_diff_change(s->s, c));
	ht_diff_interval(d, &s->s[0], &s->s[1], &lo, &hi);
	json_bound(j, d, "inuse_bytes_low", lo);
	json_bound(j, d, "inuse_bytes_high", hi);
	ht_json_object_end(j);
	ht_json_uint(j, "folded_sites",
	    s->status == HT_DIFF_FOLDED ? s->nfolded : 0);
	k = ht_diff_site_side(s);
	if (s->status != HT_DIFF_FOLDED && s->row[k] != NULL &&
	    s->row[k]->site != NULL) {
		char buf[32];

		ht_json_string(j, "tag",
		    ht_view_tag_name(&d->v[k], s->row[k]->site->tag, buf,
			sizeof(buf)));
		ht_json_string(j, "kind",
		    ht_view_kind_name(s->row[k]->site->kind));
	} else {
		ht_json_null(j, "tag");
		ht_json_null(j, "kind");
	}
	if (ht_text_json_frames(j, &d->v[k],
		s->status == HT_DIFF_FOLDED ? NULL : s->row[k]) != 0)
		return -1;
	ht_json_object_end(j);
	return 0;
}

int
ht_diff_json(FILE *fp, struct ht_diff *d, const struct ht_diff_opts *opts)
{
	const struct ht_diff_side *o = &d->tot[0], *n = &d->tot[1];
	struct ht_json j;
	int64_t lo, hi;
	size_t i;
	int c;

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	json_session(&j, "old", d, 0);
	json_session(&j, "new", d, 1);
	ht_json_bool(&j, "exact", d->exact);
	ht_json_bool(&j, "saturated",
	    d->v[0].total.saturated || d->v[1].total.saturated);

	ht_json_object_begin(&j, "totals");
	for (c = 0; c < HT_DIFF_NCOLS; c++) {
		if (c != HT_DIFF_INUSE_BYTES) {
			json_triple(&j, d, c, col_keys[c], o->v[c], n->v[c]);
			continue;
		}
		ht_json_object_begin(&j, col_keys[c]);
		ht_json_uint(&j, "old", o->v[c]);
		ht_json_uint(&j, "new", n->v[c]);
		ht_json_int(&j, "delta", ht_diff_delta(o->v[c], n->v[c]));
		ht_diff_interval(d, o, n, &lo, &hi);
		json_bound(&j, d, "delta_low", lo);
		json_bound(&j, d, "delta_high", hi);
		ht_json_object_end(&j);
	}
	json_triple(&j, d, HT_DIFF_PEAK, "peak_inuse_bytes",
	    ht_view_peak_bytes(&d->v[0]), ht_view_peak_bytes(&d->v[1]));
	json_triple(&j, d, HT_DIFF_SAMPLES, "site_count", d->v[0].nsites,
	    d->v[1].nsites);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "status_counts");
	for (c = HT_DIFF_SAME; c < HT_DIFF_FOLDED; c++)
		ht_json_uint(&j, ht_diff_status_name(c), d->count[c]);
	ht_json_object_end(&j);

	ht_json_array_begin(&j, "modules");
	for (i = 0; i < d->nmods; i++) {
		ht_json_object_begin(&j, NULL);
		ht_json_string(&j, "module", d->mods[i].name);
		for (c = 0; c < HT_DIFF_MOD_COLS; c++)
			json_triple(&j, d, c, col_keys[c], d->mods[i].v[0][c],
			    d->mods[i].v[1][c]);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);
	ht_diff_tags_json(&j, d);

	if (opts->detail) {
		ht_json_array_begin(&j, "sites");
		for (i = 0; i < d->nshown; i++) {
			ht_diff_prefetch(d, i);
			if (json_site(&j, d, d->shown[i]) != 0)
				return -1;
		}
		ht_json_array_end(&j);
	}
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}
