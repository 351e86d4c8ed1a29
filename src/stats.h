/*
 * The statistics of benchmark comparisons (heaptool replay --repeat and
 * --compare), libc and libm only: order statistics, the Mann-Whitney U
 * test, the Hodges-Lehmann shift with a bootstrap interval, and the
 * smallest shift a comparison could have detected.
 *
 * Rank methods, because benchmark times are not normal: they have a floor
 * (the machine's best) and a long right tail (preemption, cache misses of
 * other processes).  Mann-Whitney U asks whether one side tends to be
 * larger than the other without assuming a shape; Hodges-Lehmann is the
 * shift estimate that goes with it, the median of all pairwise
 * differences.  On log times a shift is a ratio: exp(HL) is "B takes
 * exp(HL) times as long as A".
 */
#ifndef HT_STATS_H
#define HT_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Five numbers of a sample, from quantiles with linear interpolation
 * between order statistics (R's type 7). */
struct ht_stats_summary {
	size_t n;
	double min, q1, median, q3, max;
};

/* Summarize x[0..n-1] (n >= 1; x is not changed).  0, or -1 when out of
 * memory (errno ENOMEM) or n is 0 (EINVAL). */
int ht_stats_summarize(const double *x, size_t n, struct ht_stats_summary *s);

/* The q-quantile (0 <= q <= 1) of sorted[0..n-1], n >= 1, type 7. */
double ht_stats_quantile(const double *sorted, size_t n, double q);

/*
 * Mann-Whitney U of a[0..n-1] against b[0..m-1]: u is U of a (the number
 * of pairs with a_i > b_j, ties counting one half), so that u = 0 when every
 * a is below every b.  p is two-sided, from the normal approximation with
 * the tie correction of the variance and a continuity correction of 1/2:
 *   mean = nm/2, var = nm/12 * ((N+1) - sum(t^3 - t) / (N(N-1))), N = n+m,
 * t the sizes of the groups of tied values.  z is (u - mean) corrected
 * toward 0 by 1/2, over sqrt(var); p = erfc(|z| / sqrt 2), and 1 when every
 * value is tied (var 0).  0, or -1 (ENOMEM, or EINVAL for an empty side).
 */
struct ht_stats_mw {
	double u, mean, var, z, p;
};
int ht_stats_mann_whitney(const double *a, size_t n, const double *b, size_t m,
    struct ht_stats_mw *r);

/* The Hodges-Lehmann shift of b against a: the median of the n*m
 * differences b_j - a_i.  0 and *shift, or -1 (ENOMEM, EINVAL). */
int ht_stats_hodges_lehmann(const double *a, size_t n, const double *b,
    size_t m, double *shift);

/*
 * A percentile bootstrap interval of the Hodges-Lehmann shift: iters
 * resamples of each side with replacement, drawn from seed (a fixed seed
 * gives the same interval), and the (1-level)/2 and (1+level)/2 quantiles
 * of their shifts in *lo and *hi.  0, or -1 (ENOMEM, EINVAL).
 */
int ht_stats_hl_bootstrap(const double *a, size_t n, const double *b, size_t m,
    unsigned iters, uint64_t seed, double level, double *lo, double *hi);

/* The standard normal's quantile: x with P(Z <= x) = p, 0 < p < 1. */
double ht_stats_normal_quantile(double p);

/*
 * The smallest shift (in the units of a and b: log times give a log
 * ratio) that a two-sided test at alpha would find with probability power
 * from samples of these sizes and spreads:
 *   (z(1 - alpha/2) + z(power)) * s * sqrt(1/n + 1/m) * sqrt(pi/3),
 * s the pooled standard deviation of the two samples.  That is the normal
 * approximation for the t test, widened by sqrt(pi/3), Mann-Whitney's
 * efficiency against the t test on normal data (3/pi).  n, m >= 2.
 */
double ht_stats_min_detectable(const double *a, size_t n, const double *b,
    size_t m, double alpha, double power);

#endif
