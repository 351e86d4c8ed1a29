/*
 * The JSON report (see report.h): the keys of DESIGN.md section 2, and
 * more, all documented in heaptool(1).
 */
#include "allocnames.h"
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report-int.h"
#include "coverage.h"
#include "text.h"
#include "sizes.h"
#include "timeline.h"

/* live_samples is null where the profile does not know it. */
static void
json_live(struct ht_json *j, const struct ht_view *v, uint64_t n)
{
	if (v->live_known)
		ht_json_uint(j, "live_samples", n);
	else
		ht_json_null(j, "live_samples");
}

/* What was allocated, or null where the backend cannot know it
 * (HT_META_ALLOC_UNKNOWN: jemalloc without opt.prof_accum). */
static void
json_alloc(struct ht_json *j, const struct ht_view *v, uint64_t bytes,
    uint64_t objects)
{
	if (v->prof->meta.flags & HT_META_ALLOC_UNKNOWN) {
		ht_json_null(j, "alloc_bytes");
		ht_json_null(j, "alloc_objects");
	} else {
		ht_json_uint(j, "alloc_bytes", bytes);
		ht_json_uint(j, "alloc_objects", objects);
	}
}

/* Short-lived allocations, null where the profile does not count them
 * (before format 10, or an allocator's own sampling). */
static void
json_temp(struct ht_json *j, const struct ht_view *v,
    const struct ht_view_figures *f)
{
	if (v->temp_known) {
		ht_json_uint(j, "temporary_objects", f->temp_objects);
		ht_json_uint(j, "temporary_samples", f->temp_samples);
	} else {
		ht_json_null(j, "temporary_objects");
		ht_json_null(j, "temporary_samples");
	}
}

/* The high end of an interval, null where it is unknown (the figures are
 * floors: ht_view_meta_floor). */
static void
json_high(struct ht_json *j, const struct ht_view *v, uint64_t hi)
{
	if (ht_view_meta_floor(&v->prof->meta))
		ht_json_null(j, "inuse_bytes_high");
	else
		ht_json_uint(j, "inuse_bytes_high", hi);
}

static void
json_figures(struct ht_json *j, const struct ht_view *v,
    const struct ht_view_figures *f)
{
	uint64_t lo, hi;

	ht_view_interval(v, f, &lo, &hi);
	ht_json_uint(j, "inuse_bytes", f->inuse_bytes);
	ht_json_uint(j, "inuse_objects", f->inuse_objects);
	json_alloc(j, v, f->alloc_bytes, f->alloc_objects);
	ht_json_uint(j, "samples", f->samples);
	json_live(j, v, f->live_samples);
	json_temp(j, v, f);
	ht_json_uint(j, "inuse_bytes_low", lo);
	json_high(j, v, hi);
}

static int
json_site(struct ht_json *j, struct ht_view *v, const struct ht_view_row *r)
{
	ht_json_object_begin(j, NULL);
	json_figures(j, v, &r->f);
	ht_json_uint(j, "folded_sites", r->nfolded);
	ht_report_tag_site_json(j, v, r);
	if (ht_text_json_frames(j, v, r) != 0)
		return -1;
	ht_json_object_end(j);
	return 0;
}

int
ht_report_json(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts)
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
	ht_json_double(&j, "duration_s", ht_text_duration_s(m));
	ht_json_string(&j, "backend", ht_backend_name(m->backend));
	ht_json_bool(&j, "exact", v->exact);
	ht_json_bool(&j, "at_exit", (m->flags & HT_META_AT_EXIT) != 0);
	ht_json_bool(&j, "final", (m->flags & HT_META_FINAL) != 0);
	if (m->flags & HT_META_ON_SIGNAL)
		ht_json_uint(&j, "signal", m->signal);
	else
		ht_json_null(&j, "signal");
	ht_json_bool(&j, "launched", (m->flags & HT_META_LAUNCHED) != 0);
	ht_json_double(&j, "peak_s", ht_text_since_s(m, m->peak_ns));
	ht_json_bool(&j, "at_peak", v->opts.at_peak);
	ht_json_string(&j, "sort", ht_text_sort_name(v->opts.sort));
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "totals");
	ht_view_interval(v, &v->total, &lo, &hi);
	ht_json_uint(&j, "inuse_bytes", v->total.inuse_bytes);
	ht_json_uint(&j, "inuse_objects", v->total.inuse_objects);
	json_alloc(&j, v, v->total.alloc_bytes, v->total.alloc_objects);
	if (m->flags & HT_META_ALLOC_UNKNOWN)
		ht_json_null(&j, "freed_bytes");
	else
		ht_json_uint(&j, "freed_bytes", ht_view_freed_bytes(v));
	if (m->flags & HT_META_PEAK_UNKNOWN)
		ht_json_null(&j, "peak_inuse_bytes");
	else
		ht_json_uint(&j, "peak_inuse_bytes", ht_view_peak_bytes(v));
	ht_json_uint(&j, "samples", v->total.samples);
	json_live(&j, v, v->total.live_samples);
	json_temp(&j, v, &v->total);
	ht_json_uint(&j, "inuse_bytes_low", lo);
	json_high(&j, v, hi);
	ht_json_uint(&j, "site_count", v->nsites);
	ht_json_bool(&j, "saturated", v->total.saturated);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "agent");
	ht_json_uint(&j, "overhead_bytes", m->overhead_bytes);
	ht_json_uint(&j, "dropped_samples", m->dropped_samples);
	ht_json_uint(&j, "dropped_bytes", m->dropped_bytes);
	ht_json_uint(&j, "dropped_objects", m->dropped_objects);
	if (m->max_samples != 0)
		ht_json_uint(&j, "max_samples", m->max_samples);
	else
		ht_json_null(&j, "max_samples");
	ht_json_array_begin(&j, "drop_reasons");
	if (m->drop_why & HT_DROP_LIVE)
		ht_json_string(&j, NULL, "live_samples_bound");
	if (m->drop_why & HT_DROP_SITES)
		ht_json_string(&j, NULL, "sites_bound");
	if (m->drop_why & HT_DROP_NOMEM)
		ht_json_string(&j, NULL, "memory");
	ht_json_array_end(&j);
	ht_report_tag_cache_json(&j, v);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "allocator");
	ht_json_uint(&j, "heap_inuse_bytes", m->heap_inuse_bytes);
	ht_json_uint(&j, "heap_free_bytes", m->heap_free_bytes);
	ht_json_uint(&j, "heap_mmap_bytes", m->heap_mmap_bytes);
	ht_json_uint(&j, "predates_session_bytes", ht_view_predates_bytes(v));
	ht_json_uint(&j, "rss_bytes", m->rss_bytes);
	ht_json_object_end(&j);

	ht_json_array_begin(&j, "unseen_allocators");
	for (i = 0; i < v->prof->nallocators; i++)
		ht_text_json_unseen(&j, v->prof->allocators[i].names,
		    v->prof->allocators[i].path);
	ht_json_array_end(&j);
	ht_coverage_json(&j, v->prof);

	ht_json_array_begin(&j, "modules");
	for (i = 0; i < v->nmods; i++) {
		ht_json_object_begin(&j, NULL);
		ht_json_string(&j, "module", v->mods[i].name);
		ht_json_uint(&j, "inuse_bytes", v->mods[i].f.inuse_bytes);
		ht_json_uint(&j, "inuse_objects", v->mods[i].f.inuse_objects);
		json_alloc(&j, v, v->mods[i].f.alloc_bytes,
		    v->mods[i].f.alloc_objects);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);

	ht_report_tags_json(&j, v);

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
		for (i = 0; i < v->nrows; i++) {
			if (i + HT_VIEW_AHEAD < v->nrows)
				ht_view_prefetch(&v->rows[i + HT_VIEW_AHEAD]);
			if (json_site(&j, v, &v->rows[i]) != 0)
				return -1;
		}
		ht_json_array_end(&j);
	}
	if (opts->timeline && ht_timeline_json(&j, v) != 0)
		return -1;
	if (opts->sizes)
		ht_sizes_json(&j, v);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}
