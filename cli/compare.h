/*
 * heaptool replay --compare's verdict (src/stats.h): two sides' measures
 * (times, or instruction counts), their summaries, the shift of B against
 * A as a ratio, and what can be said of it, in text (ministat-like) and
 * JSON.
 *
 * The shift is the Hodges-Lehmann estimate on log measures: B/A =
 * exp(HL), with a percentile bootstrap 95% interval (1000 resamples, from
 * a fixed seed).  The verdict is Mann-Whitney's: p below alpha says
 * "slower" (B/A above 1) or "faster", else "no difference detectable",
 * with the smallest ratio the run could have seen (ht_stats_min_detectable
 * at 80% power, on the log measures; infinite when even samples wholly
 * apart could not give a p below alpha: too few rounds).
 */
#ifndef HT_COMPARE_H
#define HT_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

struct ht_compare {
	const char *trace, *label_a, *label_b;
	const char *metric; /* "cpu_time", "time" (ns) or "instructions" */
	size_t rounds;
	uint64_t seed;
	double alpha;
	const double *a, *b; /* the measures, n = rounds each */
	/* Results. */
	struct ht_stats_summary sa, sb;
	struct ht_stats_mw mw;
	double ratio, lo, hi; /* B/A and its 95% interval */
	double min_ratio;     /* smallest detectable: exp(d), or infinite */
	double p_floor;	      /* the least p these rounds can give */
	const char *verdict;  /* "slower", "faster", "no difference ..." */
};

/* Compute c's results from its measures.  0, or -1 (errno ENOMEM). */
int ht_compare_compute(struct ht_compare *c);

int ht_compare_text(FILE *fp, const struct ht_compare *c);
int ht_compare_json(FILE *fp, const struct ht_compare *c);

#endif
