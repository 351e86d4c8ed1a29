/*
 * heaptool replay's report (replay-out.h).  Latencies are histograms of
 * powers of 2 of nanoseconds: a quantile is given as the upper end of the
 * bucket it falls in ("at most").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "replay-out.h"
#include "stats.h"

#define BAR 40

static uint64_t
bucket_max(unsigned b)
{
	return b == 0 ? 0 : ((uint64_t)1 << b) - 1;
}

/* The upper end of the bucket holding quantile q of h[0..n-1]. */
static uint64_t
quantile(const uint64_t *h, unsigned n, uint64_t total, double q)
{
	uint64_t want = (uint64_t)((double)total * q), seen = 0;
	unsigned b;

	for (b = 0; b < n; b++) {
		seen += h[b];
		if (seen > want || (seen == total && total > 0))
			return bucket_max(b);
	}
	return bucket_max(n - 1);
}

/* The histogram of op over every size class into h; the total. */
static uint64_t
by_op(const struct ht_replay_run *r, unsigned op, uint64_t *h)
{
	uint64_t total = 0;
	unsigned c, b;

	memset(h, 0, HT_REPLAY_BUCKETS * sizeof(*h));
	for (c = 0; c < HT_REPLAY_CLASSES; c++)
		for (b = 0; b < HT_REPLAY_BUCKETS; b++) {
			h[b] += r->lat[op][c][b];
			total += r->lat[op][c][b];
		}
	return total;
}

static uint64_t
sum(const uint64_t *h, unsigned n)
{
	uint64_t t = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		t += h[i];
	return t;
}

static double
fragmentation(const struct ht_replay_run *r)
{
	uint64_t used = r->rss_peak > r->rss_base ? r->rss_peak - r->rss_base :
						    0;

	return r->peak_requested > 0 ?
	    (double)used / (double)r->peak_requested :
	    0.0;
}

static void
summary_line(FILE *fp, const char *what, const double *v, size_t n, double u,
    const char *unit)
{
	struct ht_stats_summary s;

	if (ht_stats_summarize(v, n, &s) != 0)
		return;
	fprintf(fp,
	    "  %-13s median %.3f %s (min %.3f .. max %.3f, IQR %.3f .. "
	    "%.3f; %zu runs)\n",
	    what, s.median / u, unit, s.min / u, s.max / u, s.q1 / u, s.q3 / u,
	    n);
}

static void
latency_text(FILE *fp, const struct ht_replay_run *r)
{
	uint64_t h[HT_REPLAY_BUCKETS], total, max;
	unsigned op, b, c;

	fprintf(fp,
	    "\nLatency of the calls (ns, every run; at most the "
	    "bucket's upper end):\n");
	for (op = 1; op <= HT_TROP_MAX; op++) {
		if ((total = by_op(r, op, h)) == 0)
			continue;
		fprintf(fp,
		    "  %s: %" PRIu64 " calls, p50 <= %" PRIu64
		    ", p90 <= %" PRIu64 ", p99 <= %" PRIu64 "\n",
		    ht_trace_op_name(op), total,
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.5),
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.9),
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.99));
		for (max = 0, b = 0; b < HT_REPLAY_BUCKETS; b++)
			if (h[b] > max)
				max = h[b];
		for (b = 0; b < HT_REPLAY_BUCKETS; b++) {
			int k, n;

			if (h[b] == 0)
				continue;
			n = (int)((double)h[b] * BAR / (double)max + 0.5);
			fprintf(fp,
			    "    %10" PRIu64 " .. %10" PRIu64 " %10" PRIu64 " ",
			    b == 0 ? 0 : bucket_max(b - 1) + 1, bucket_max(b),
			    h[b]);
			for (k = 0; k < (n ? n : 1); k++)
				fputc('#', fp);
			fputc('\n', fp);
		}
		fprintf(fp, "    by size: ");
		for (c = 0; c < HT_REPLAY_CLASSES; c++) {
			const uint64_t *v = r->lat[op][c];
			uint64_t t = sum(v, HT_REPLAY_BUCKETS);

			if (t == 0)
				continue;
			fprintf(fp,
			    "[%" PRIu64 "..] %" PRIu64 " p50<=%" PRIu64 " ",
			    ht_tstats_class_min(c), t,
			    quantile(v, HT_REPLAY_BUCKETS, t, 0.5));
		}
		fputc('\n', fp);
	}
}

int
ht_replay_text(FILE *fp, const struct ht_replay_report *r)
{
	const struct ht_replay_run *x = r->run;
	unsigned op;

	fprintf(fp,
	    "replay of %s: %" PRIu64 " events, %" PRIu64 " threads, setup %s\n",
	    r->trace, x->events, x->threads, r->setup->label);
	summary_line(fp, "time", r->wall_ns, r->runs, 1e6, "ms");
	summary_line(fp, "CPU time", r->cpu_ns, r->runs, 1e6,
	    "ms (the replay's threads)");
	if (r->instructions != NULL)
		summary_line(fp, "instructions", r->instructions, r->runs, 1e6,
		    "M (callgrind, user mode)");
	fprintf(fp,
	    "  peak requested %" PRId64 " bytes (recorded %" PRIu64 "%s)\n",
	    x->peak_requested, r->rec->peak_requested,
	    (uint64_t)x->peak_requested == r->rec->peak_requested ?
		", the same" :
		", DIFFERENT: see the skipped steps");
	fprintf(fp,
	    "  peak RSS %" PRIu64 " bytes, %" PRIu64
	    " at the start%s: fragmentation %.3f (RSS growth over peak "
	    "requested)\n",
	    x->rss_peak, x->rss_base,
	    x->rss_reset ? "" : " (peak not reset: includes the setup)",
	    fragmentation(x));
	fprintf(fp, "\n  %-16s %12s %12s %16s\n", "op", "recorded", "replayed",
	    "bytes");
	for (op = 1; op <= HT_TROP_MAX; op++)
		if (r->rec->op[op].count || x->count[op])
			fprintf(fp,
			    "  %-16s %12" PRIu64 " %12" PRIu64 " %16" PRIu64
			    "\n",
			    ht_trace_op_name(op), r->rec->op[op].count,
			    x->count[op], x->bytes[op]);
	fprintf(fp,
	    "  not played: %" PRIu64 " frees of blocks older than the trace, "
	    "%" PRIu64 " failed allocations, %" PRIu64 " unmatched; %" PRIu64
	    " calls failed, %" PRIu64
	    " by malloc/free for want of C++'s; %" PRIu64
	    " waits for other threads\n",
	    x->skipped_preexisting, x->skipped_failed, x->skipped_unmatched,
	    x->failed, x->substituted, x->waits);
	fprintf(fp,
	    "  played by %" PRIu64 " thread%s: a recorded thread that began "
	    "after another ended is played by its thread\n",
	    x->workers, x->workers == 1 ? "" : "s");
	latency_text(fp, x);
	return fflush(fp) != 0 || ferror(fp) ? -1 : 0;
}

static void
summary_json(struct ht_json *j, const char *key, const double *v, size_t n)
{
	struct ht_stats_summary s;
	size_t i;

	if (v == NULL || ht_stats_summarize(v, n, &s) != 0) {
		ht_json_null(j, key);
		return;
	}
	ht_json_object_begin(j, key);
	ht_json_double(j, "median", s.median);
	ht_json_double(j, "min", s.min);
	ht_json_double(j, "q1", s.q1);
	ht_json_double(j, "q3", s.q3);
	ht_json_double(j, "max", s.max);
	ht_json_array_begin(j, "runs");
	for (i = 0; i < n; i++)
		ht_json_double(j, NULL, v[i]);
	ht_json_array_end(j);
	ht_json_object_end(j);
}

static void
latency_json(struct ht_json *j, const struct ht_replay_run *r)
{
	uint64_t h[HT_REPLAY_BUCKETS], total;
	unsigned op, b, c;

	ht_json_array_begin(j, "latency");
	for (op = 1; op <= HT_TROP_MAX; op++) {
		if ((total = by_op(r, op, h)) == 0)
			continue;
		ht_json_object_begin(j, NULL);
		ht_json_string(j, "op", ht_trace_op_name(op));
		ht_json_uint(j, "count", total);
		ht_json_uint(j, "p50_ns",
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.5));
		ht_json_uint(j, "p90_ns",
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.9));
		ht_json_uint(j, "p99_ns",
		    quantile(h, HT_REPLAY_BUCKETS, total, 0.99));
		ht_json_array_begin(j, "buckets");
		for (b = 0; b < HT_REPLAY_BUCKETS; b++) {
			if (h[b] == 0)
				continue;
			ht_json_object_line(j, NULL);
			ht_json_uint(j, "max_ns", bucket_max(b));
			ht_json_uint(j, "count", h[b]);
			ht_json_object_end(j);
		}
		ht_json_array_end(j);
		ht_json_array_begin(j, "size_classes");
		for (c = 0; c < HT_REPLAY_CLASSES; c++) {
			const uint64_t *v = r->lat[op][c];
			uint64_t t = sum(v, HT_REPLAY_BUCKETS);

			if (t == 0)
				continue;
			ht_json_object_line(j, NULL);
			ht_json_uint(j, "min", ht_tstats_class_min(c));
			ht_json_uint(j, "count", t);
			ht_json_uint(j, "p50_ns",
			    quantile(v, HT_REPLAY_BUCKETS, t, 0.5));
			ht_json_uint(j, "p99_ns",
			    quantile(v, HT_REPLAY_BUCKETS, t, 0.99));
			ht_json_object_end(j);
		}
		ht_json_array_end(j);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
}

int
ht_replay_json(FILE *fp, const struct ht_replay_report *r)
{
	static struct ht_json j;
	const struct ht_replay_run *x = r->run;
	unsigned op;

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_string(&j, "trace", r->trace);
	ht_json_object_begin(&j, "setup");
	ht_json_string(&j, "label", r->setup->label);
	ht_json_string(&j, "allocator",
	    r->setup->lib[0] ? r->setup->lib : NULL);
	if (r->setup->rate)
		ht_json_uint(&j, "agent_rate", r->setup->rate);
	else
		ht_json_null(&j, "agent_rate");
	ht_json_object_end(&j);
	ht_json_uint(&j, "events", x->events);
	ht_json_uint(&j, "threads", x->threads);
	ht_json_uint(&j, "workers", x->workers);
	ht_json_uint(&j, "runs", r->runs);
	summary_json(&j, "time_ns", r->wall_ns, r->runs);
	summary_json(&j, "cpu_ns", r->cpu_ns, r->runs);
	summary_json(&j, "instructions", r->instructions, r->runs);
	ht_json_int(&j, "peak_requested", x->peak_requested);
	ht_json_uint(&j, "recorded_peak_requested", r->rec->peak_requested);
	ht_json_uint(&j, "rss_base", x->rss_base);
	ht_json_uint(&j, "rss_peak", x->rss_peak);
	ht_json_bool(&j, "rss_peak_reset", x->rss_reset);
	ht_json_double(&j, "fragmentation", fragmentation(x));
	ht_json_array_begin(&j, "ops");
	for (op = 1; op <= HT_TROP_MAX; op++) {
		if (r->rec->op[op].count == 0 && x->count[op] == 0)
			continue;
		ht_json_object_line(&j, NULL);
		ht_json_string(&j, "op", ht_trace_op_name(op));
		ht_json_uint(&j, "recorded", r->rec->op[op].count);
		ht_json_uint(&j, "replayed", x->count[op]);
		ht_json_uint(&j, "bytes", x->bytes[op]);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);
	ht_json_object_begin(&j, "skipped");
	ht_json_uint(&j, "preexisting", x->skipped_preexisting);
	ht_json_uint(&j, "failed", x->skipped_failed);
	ht_json_uint(&j, "unmatched", x->skipped_unmatched);
	ht_json_object_end(&j);
	ht_json_uint(&j, "failed", x->failed);
	ht_json_uint(&j, "substituted", x->substituted);
	ht_json_uint(&j, "waits", x->waits);
	latency_json(&j, x);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}
