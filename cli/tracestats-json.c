/*
 * trace-stats as JSON (tracestats.h); the keys are in heaptool(1) and in
 * t/data/trace-stats-schema.json.
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "tracestats.h"

static void
memory(struct ht_json *j, const struct ht_tstats *s)
{
	ht_json_object_begin(j, "memory");
	ht_json_uint(j, "allocations", s->allocs);
	ht_json_uint(j, "requested", s->requested);
	ht_json_uint(j, "usable", s->usable);
	ht_json_uint(j, "usable_unknown", s->usable_unknown);
	ht_json_uint(j, "overhead", s->usable - s->requested);
	ht_json_double(j, "overhead_pct",
	    s->requested ? 100.0 * (double)(s->usable - s->requested) /
		    (double)s->requested :
			   0.0);
	ht_json_uint(j, "peak_requested", s->peak_requested);
	ht_json_uint(j, "peak_usable", s->peak_usable);
	ht_json_uint(j, "peak_live_blocks", s->peak_blocks);
	ht_json_uint(j, "live_blocks_end", s->live_blocks);
	ht_json_uint(j, "live_requested_end", s->live_requested);
	ht_json_uint(j, "preexisting_frees", s->preexisting_frees);
	ht_json_uint(j, "null_frees", s->null_frees);
	ht_json_uint(j, "unmatched_frees", s->unmatched);
	ht_json_uint(j, "failed", s->failed);
	ht_json_object_end(j);
}

static void
profiler(struct ht_json *j, const struct ht_trace *t, const struct ht_tstats *s)
{
	ht_json_object_begin(j, "profiler");
	ht_json_uint(j, "live_entry_bytes", t->info.live_entry_bytes);
	ht_json_uint(j, "site_entry_bytes", t->info.site_entry_bytes);
	ht_json_uint(j, "sites", s->sites);
	ht_json_object_begin(j, "rate1");
	ht_json_uint(j, "bytes", s->rate1_bytes);
	ht_json_double(j, "per_live_object",
	    s->peak_blocks ? (double)s->rate1_bytes / (double)s->peak_blocks :
			     0.0);
	ht_json_double(j, "pct_of_peak",
	    s->peak_requested ?
		100.0 * (double)s->rate1_bytes / (double)s->peak_requested :
		0.0);
	ht_json_object_end(j);
	ht_json_object_begin(j, "default_rate");
	ht_json_uint(j, "rate", s->rate);
	ht_json_double(j, "live_samples", s->rate_samples);
	ht_json_double(j, "sites", s->rate_sites);
	ht_json_double(j, "bytes", s->rate_bytes);
	ht_json_double(j, "pct_of_peak",
	    s->peak_requested ?
		100.0 * s->rate_bytes / (double)s->peak_requested :
		0.0);
	ht_json_object_end(j);
	if (t->complete)
		ht_json_uint(j, "recorder_bytes", t->end.agent_bytes);
	else
		ht_json_null(j, "recorder_bytes");
	ht_json_object_end(j);
}

static void
tables(struct ht_json *j, const struct ht_tstats *s)
{
	size_t i;
	unsigned k;

	ht_json_array_begin(j, "ops");
	for (k = 1; k <= HT_TROP_MAX; k++) {
		if (s->op[k].count == 0)
			continue;
		ht_json_object_line(j, NULL);
		ht_json_string(j, "op", ht_trace_op_name(k));
		ht_json_uint(j, "count", s->op[k].count);
		ht_json_uint(j, "bytes", s->op[k].bytes);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
	ht_json_array_begin(j, "size_classes");
	for (k = 0; k < HT_TSTATS_CLASSES; k++) {
		uint64_t lo = ht_tstats_class_min(k);

		if (s->cls[k].count == 0)
			continue;
		ht_json_object_line(j, NULL);
		ht_json_uint(j, "min", lo);
		ht_json_uint(j, "max", k == 0 ? 0 : lo + (lo - 1));
		ht_json_uint(j, "count", s->cls[k].count);
		ht_json_uint(j, "bytes", s->cls[k].bytes);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
	ht_json_array_begin(j, "threads");
	for (i = 0; i < s->nthreads; i++) {
		const struct ht_tstats_thread *th = &s->threads[i];

		ht_json_object_line(j, NULL);
		ht_json_uint(j, "thread", th->idx);
		ht_json_uint(j, "tid", th->tid);
		ht_json_string(j, "name", th->name);
		ht_json_uint(j, "events", th->events);
		ht_json_uint(j, "allocations", th->allocs);
		ht_json_uint(j, "bytes", th->alloc_bytes);
		ht_json_uint(j, "frees", th->frees);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
	ht_json_array_begin(j, "tags");
	for (i = 0; i < s->ntags; i++) {
		ht_json_object_line(j, NULL);
		ht_json_uint(j, "tag", s->tags[i].id);
		ht_json_string(j, "name", s->tags[i].name);
		ht_json_uint(j, "allocations", s->tags[i].allocs);
		ht_json_uint(j, "bytes", s->tags[i].bytes);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
}

int
ht_tstats_json(FILE *fp, const char *path, const struct ht_trace *t,
    const struct ht_tstats *s)
{
	static struct ht_json j; /* 64 KiB of buffer: not on the stack */

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_string(&j, "trace", path);
	ht_json_uint(&j, "version", t->version);
	ht_json_bool(&j, "complete", t->complete);
	if (t->complete)
		ht_json_null(&j, "incomplete_why");
	else
		ht_json_string(&j, "incomplete_why", t->incomplete_why);
	ht_json_uint(&j, "pid", t->info.pid);
	ht_json_string(&j, "command", t->command);
	ht_json_uint(&j, "events", s->events);
	ht_json_uint(&j, "frees", s->frees);
	if (t->complete) {
		ht_json_uint(&j, "duration_ns", t->end.duration_ns);
		ht_json_uint(&j, "lost", t->end.lost);
		if (t->end.lost_why)
			ht_json_string(&j, "lost_why",
			    strerror((int)t->end.lost_why));
		else
			ht_json_null(&j, "lost_why");
		ht_json_uint(&j, "waits", t->end.waits);
	} else {
		ht_json_null(&j, "duration_ns");
		ht_json_null(&j, "lost");
		ht_json_null(&j, "lost_why");
		ht_json_null(&j, "waits");
	}
	memory(&j, s);
	profiler(&j, t, s);
	tables(&j, s);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}
