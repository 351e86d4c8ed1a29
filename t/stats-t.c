/*
 * The benchmark statistics (src/stats.c) against small examples computed
 * by hand: the quantiles of four numbers; Mann-Whitney U of two separated
 * samples of three (U 0, var 9/12 * 7, z -4/sqrt(5.25), p 0.08086) and of
 * samples with a group of three ties (U 4 by counting pairs, var
 * 8 - 24/42, z -1.5/sqrt(var), p 0.58208); Hodges-Lehmann as the median
 * of the pairwise differences listed in the comments; a bootstrap that a
 * fixed seed repeats; the normal quantile; the smallest detectable shift.
 */
#include <math.h>
#include <stdint.h>

#include "basic.h"
#include "stats.h"

static int
near(double want, double got, double tol)
{
	if (fabs(want - got) <= tol)
		return 1;
	diag("want %.9g, got %.9g", want, got);
	return 0;
}

int
main(void)
{
	double q[4] = { 4, 1, 3, 2 };
	double a1[3] = { 1, 2, 3 }, b1[3] = { 6, 4, 5 };
	double a2[4] = { 1, 2, 2, 5 }, b2[3] = { 2, 3, 4 };
	double a3[2] = { 1, 3 }, b3[2] = { 2, 7 };
	double same[3] = { 7, 7, 7 };
	double lo, hi, lo2, hi2, shift;
	struct ht_stats_summary s;
	struct ht_stats_mw mw;

	plan(26);

	ok(ht_stats_summarize(q, 4, &s) == 0, "summarize");
	ok(s.min == 1 && s.max == 4, "min 1, max 4");
	ok(near(1.75, s.q1, 1e-12), "q1 of 1..4 is 1.75 (type 7)");
	ok(near(2.5, s.median, 1e-12), "median of 1..4 is 2.5");
	ok(near(3.25, s.q3, 1e-12), "q3 of 1..4 is 3.25");

	/* a = 1 2 3 below b = 4 5 6: no pair with a > b. */
	ok(ht_stats_mann_whitney(a1, 3, b1, 3, &mw) == 0, "Mann-Whitney");
	ok(near(0, mw.u, 0), "U of separated samples is 0");
	ok(near(5.25, mw.var, 1e-12), "var = 9/12 * 7 = 5.25");
	ok(near(-4 / sqrt(5.25), mw.z, 1e-12), "z = (0 - 4.5 + 0.5) / sd");
	ok(near(0.0808555984, mw.p, 1e-9), "two-sided p 0.08086");
	ok(ht_stats_mann_whitney(b1, 3, a1, 3, &mw) == 0 && mw.u == 9 &&
		near(0.0808555984, mw.p, 1e-9),
	    "swapped: U 9, same p");

	/* Ranks of 1 2 2 2 3 4 5: 1, 3 3 3 (ties), 5 6 7; R_a = 14, U 4. */
	ok(ht_stats_mann_whitney(a2, 4, b2, 3, &mw) == 0, "with ties");
	ok(near(4, mw.u, 1e-12), "U 4 (a=2 against b=2 counts one half)");
	ok(near(8 - 24.0 / 42, mw.var, 1e-12), "tie-corrected variance");
	ok(near(-1.5 / sqrt(8 - 24.0 / 42), mw.z, 1e-12), "z");
	ok(near(0.5820796519, mw.p, 1e-9), "p 0.58208");
	ok(ht_stats_mann_whitney(same, 3, same, 3, &mw) == 0 && mw.p == 1,
	    "all tied: p 1");

	/* Differences b - a: 3 2 1 4 3 2 5 4 3, median 3. */
	ok(ht_stats_hodges_lehmann(a1, 3, b1, 3, &shift) == 0 &&
		near(3, shift, 0),
	    "HL of 1 2 3 vs 4 5 6 is 3");
	/* -3 -2 -1 0 0 1 1 1 2 2 2 3: median 1. */
	ok(ht_stats_hodges_lehmann(a2, 4, b2, 3, &shift) == 0 &&
		near(1, shift, 0),
	    "HL with ties is 1");
	/* 1 -1 6 4: even count, median (1 + 4) / 2. */
	ok(ht_stats_hodges_lehmann(a3, 2, b3, 2, &shift) == 0 &&
		near(2.5, shift, 0),
	    "HL of an even number of differences is 2.5");

	ok(ht_stats_hl_bootstrap(a1, 3, b1, 3, 2000, 42, 0.95, &lo, &hi) == 0,
	    "bootstrap");
	ok(lo >= 1 && hi <= 5 && lo <= 3 && hi >= 3,
	    "its interval is within the differences' range, around 3 "
	    "(%g..%g)",
	    lo, hi);
	ok(ht_stats_hl_bootstrap(a1, 3, b1, 3, 2000, 42, 0.95, &lo2, &hi2) ==
		    0 &&
		lo == lo2 && hi == hi2,
	    "the same seed gives the same interval");

	ok(near(1.959963985, ht_stats_normal_quantile(0.975), 1e-8),
	    "z(0.975) = 1.95996");
	ok(near(-0.841621234, ht_stats_normal_quantile(0.2), 1e-8),
	    "z(0.2) = -0.84162");
	/* Both variances 1: 2.801585 * sqrt(2/3) * sqrt(pi/3). */
	ok(near(2.3408442405, ht_stats_min_detectable(a1, 3, b1, 3, 0.05, 0.8),
	       1e-8),
	    "smallest detectable shift");
	return 0;
}
