/*
 * Tests for src/sampling.c: the libm-free functions against libm, the PRNG,
 * the countdown distribution, and a simulation of the agent's sampler whose
 * estimates must fall within bounds derived from the math.  Every seed is
 * fixed, so the run is deterministic; the bounds are 4 standard deviations.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "basic.h"
#include "sampling.h"

#define REL_TOL 1e-12
#define NALLOC	1000000

static double
relerr(double got, double want)
{
	if (got == want)
		return 0;
	if (want == 0)
		return fabs(got);
	return fabs(got - want) / fabs(want);
}

/* A reference rng for test inputs, separate from the one under test. */
static uint64_t
ref_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
ref_unit(uint64_t *s)
{
	return (double)((ref_next(s) >> 11) + 1) * 0x1p-53;
}

static void
test_accuracy(void)
{
	uint64_t s = 42;
	double x, worst, w;
	int i;

	/* log over the whole range, subnormals included. */
	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = ldexp(0.5 + ref_unit(&s),
		    (int)(ref_next(&s) % 2098) - 1074);
		if (x == 0)
			continue;
		w = relerr(ht_log(x), log(x));
		if (w > worst)
			worst = w;
	}
	diag("ht_log: worst relative error %.3g over the range", worst);
	ok(worst < REL_TOL, "ht_log matches libm over 2^-1074..2^1024");

	/* log near 1, where the result is small and cancellation lurks. */
	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = 1 + (ref_unit(&s) - 0.5) * pow(10, -(double)(i % 16));
		w = relerr(ht_log(x), log(x));
		if (w > worst)
			worst = w;
	}
	diag("ht_log: worst relative error %.3g near 1", worst);
	ok(worst < REL_TOL, "ht_log matches libm near 1");

	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = -745 + ref_unit(&s) * (709.7 + 745);
		w = relerr(ht_exp(x), exp(x));
		/* Subnormal results have fewer bits: allow an ulp there. */
		if (exp(x) < 0x1p-1022 && fabs(ht_exp(x) - exp(x)) <= 0x1p-1074)
			w = 0;
		if (w > worst)
			worst = w;
	}
	diag("ht_exp: worst relative error %.3g", worst);
	ok(worst < REL_TOL, "ht_exp matches libm over [-745, 709.7]");

	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = ref_unit(&s) * 2 - 1;
		w = relerr(ht_exp(x), exp(x));
		if (w > worst)
			worst = w;
	}
	ok(worst < REL_TOL, "ht_exp matches libm on [-1, 1] (worst %.3g)",
	    worst);

	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = pow(10, -300 + ref_unit(&s) * 303);
		w = relerr(ht_one_minus_exp_neg(x), -expm1(-x));
		if (w > worst)
			worst = w;
	}
	diag("ht_one_minus_exp_neg: worst relative error %.3g", worst);
	ok(worst < REL_TOL,
	    "ht_one_minus_exp_neg matches -expm1(-x) for 1e-300 <= x <= 1000");

	worst = 0;
	for (i = 0; i < 200000; i++) {
		x = ldexp(0.5 + ref_unit(&s),
		    (int)(ref_next(&s) % 2098) - 1074);
		w = relerr(ht_sqrt(x), sqrt(x));
		if (w > worst)
			worst = w;
	}
	diag("ht_sqrt: worst relative error %.3g", worst);
	ok(worst < REL_TOL, "ht_sqrt matches libm over the range");

	ok(ht_log(1) == 0, "ht_log(1) is 0");
	ok(ht_log(2) == log(2), "ht_log(2) is ln 2 to the last bit");
	ok(isinf(ht_log(0)) && ht_log(0) < 0, "ht_log(0) is -inf");
	ok(isnan(ht_log(-1)), "ht_log(-1) is NaN");
	ok(isinf(ht_log(INFINITY)), "ht_log(inf) is inf");
	ok(ht_exp(0) == 1, "ht_exp(0) is 1");
	ok(isinf(ht_exp(710)), "ht_exp(710) overflows to inf");
	ok(ht_exp(-746) == 0, "ht_exp(-746) underflows to 0");
	ok(isnan(ht_exp(NAN)), "ht_exp(NaN) is NaN");
	ok(ht_one_minus_exp_neg(0) == 0, "1 - exp(-0) is 0");
	ok(ht_one_minus_exp_neg(1e-300) == 1e-300,
	    "1 - exp(-1e-300) is 1e-300, not 0");
	ok(ht_one_minus_exp_neg(800) == 1, "1 - exp(-800) is 1");
	ok(ht_sqrt(0) == 0 && ht_sqrt(4) == 2 && ht_sqrt(1) == 1,
	    "ht_sqrt of 0, 1, 4 exact");
	ok(ht_sqrt(0x1p-1074) == 0x1p-537, "ht_sqrt of the least subnormal");
	ok(isnan(ht_sqrt(-1)), "ht_sqrt(-1) is NaN");
	ok(isinf(ht_sqrt(INFINITY)), "ht_sqrt(inf) is inf");
}

static void
test_rng(void)
{
	struct ht_rng a, b, z;
	double u, sum = 0, lo = 1, hi = 0, sd;
	int i, same = 1, inside = 1;

	ht_rng_seed(&a, 7);
	ht_rng_seed(&b, 7);
	for (i = 0; i < 1000; i++)
		if (ht_rng_next(&a) != ht_rng_next(&b))
			same = 0;
	ok(same, "same seed, same sequence");
	ht_rng_seed(&z, 0);
	ok(z.s != 0 && ht_rng_next(&z) != 0, "seed 0 gives a live state");
	ht_rng_seed(&b, 8);
	ok(ht_rng_next(&a) != ht_rng_next(&b), "other seed, other sequence");

	for (i = 0; i < NALLOC; i++) {
		u = ht_rng_uniform(&a);
		if (!(u > 0 && u < 1))
			inside = 0;
		if (u < lo)
			lo = u;
		if (u > hi)
			hi = u;
		sum += u;
	}
	ok(inside, "uniform stays in (0, 1) (min %.3g, max 1 - %.3g)", lo,
	    1 - hi);
	/* Var of U(0,1) is 1/12. */
	sd = sqrt(1.0 / 12 / NALLOC);
	ok(fabs(sum / NALLOC - 0.5) < 4 * sd,
	    "uniform mean %.6f within 4 sd (%.6f) of 0.5", sum / NALLOC, sd);
	/* The extreme draws keep full 53-bit resolution. */
	z.s = 1;
	ok(ht_rng_uniform(&z) > 0, "uniform never returns 0");
}

/*
 * The countdown is floor(Exp(R)), geometric with P(C >= n) = exp(-n/R):
 * mean 1/(e^(1/R) - 1), variance e^(1/R)/(e^(1/R) - 1)^2.
 */
static void
test_countdown(void)
{
	static const uint64_t rates[] = { 4, 65536, 524288 };
	struct ht_rng r;
	double sum, mean, sd, a;
	int64_t c;
	size_t k;
	int i, zero, neg, ok0 = 1;

	ht_rng_seed(&r, 1234);
	for (i = 0; i < 1000; i++)
		if (ht_sample_countdown(&r, 1) != 0 ||
		    ht_sample_countdown(&r, 0) != 0)
			ok0 = 0;
	ok(ok0, "rate 1 (and 0) always draws countdown 0");

	for (k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		sum = 0;
		zero = neg = 0;
		for (i = 0; i < NALLOC; i++) {
			c = ht_sample_countdown(&r, rates[k]);
			if (c < 0)
				neg++;
			if (c == 0)
				zero++;
			sum += (double)c;
		}
		a = exp(1.0 / (double)rates[k]);
		mean = sum / NALLOC;
		sd = sqrt(a) / (a - 1) / sqrt(NALLOC);
		is_int(0, neg, "rate %llu: no negative countdown",
		    (unsigned long long)rates[k]);
		diag("rate %llu: mean countdown %.2f, expected %.2f, "
		     "4 sd = %.2f",
		    (unsigned long long)rates[k], mean, 1 / (a - 1), 4 * sd);
		ok(fabs(mean - (double)rates[k]) < 4 * sd + 0.5,
		    "rate %llu: mean countdown within 4 sd of the rate",
		    (unsigned long long)rates[k]);
		ok(fabs(mean - 1 / (a - 1)) < 4 * sd,
		    "rate %llu: mean countdown within 4 sd of the geometric "
		    "mean",
		    (unsigned long long)rates[k]);
		if (rates[k] == 4) {
			/* P(C = 0) = 1 - e^(-1/R): round() would halve it. */
			double p = 1 - 1 / a;
			double psd = sqrt(p * (1 - p) / NALLOC);

			ok(fabs((double)zero / NALLOC - p) < 4 * psd,
			    "rate 4: P(countdown 0) %.4f, expected %.4f "
			    "(4 sd %.4f)",
			    (double)zero / NALLOC, p, 4 * psd);
		}
	}
}

/*
 * Each countdown is floor(-R log U) of the generator's next uniform U, to
 * the byte, as libm's log makes it: the draw's own log is a table and a
 * short series (sampling.c), whose error must stay a few units in the
 * last place of the result, as libm's.  A copy of the generator gives the
 * same U.  Draws within 2^-48 of a whole number (relative: the ulp of a
 * countdown near 2^45 at rate 2^40 is 2^-7 bytes) may round either way
 * and are left out, counted.
 */
static void
test_countdown_exact(void)
{
	static const uint64_t rates[] = { 4, 4096, 524288, 1ull << 40 };
	struct ht_rng r, copy;
	double want;
	int64_t c;
	size_t k;
	int i, bad, ties;

	for (k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		ht_rng_seed(&r, 99 + k);
		bad = ties = 0;
		for (i = 0; i < 1000000; i++) {
			copy = r;
			want = -(double)rates[k] * log(ht_rng_uniform(&copy));
			c = ht_sample_countdown(&r, rates[k]);
			if (fabs(want - floor(want + 0.5)) <
				(want + 1) * 0x1p-48 &&
			    want > 0.5) {
				ties++;
				continue;
			}
			if (c != (int64_t)want)
				bad++;
		}
		ok(bad == 0,
		    "rate %llu: 1000000 countdowns are floor(-R log U) to the "
		    "byte (%d differ, %d near a whole number left out)",
		    (unsigned long long)rates[k], bad, ties);
	}
}

static void
test_weigh(void)
{
	struct ht_sample_weight w;
	double p, lo, hi;

	ht_sample_weigh(100, 1, &w);
	ok(w.bytes == 100 && w.objects == 1 && w.var_bytes == 0 &&
		w.var_objects == 0,
	    "rate 1: weight is the allocation, exact");
	ht_sample_weigh(0, 1, &w);
	ok(w.bytes == 0 && w.objects == 1, "rate 1: size 0 counts 1 object");

	p = -expm1(-4097.0 / 65536);
	ht_sample_weigh(4096, 65536, &w);
	ok(relerr(w.bytes, 4096 / p) < REL_TOL, "4 KiB at 64 KiB: bytes s/p");
	ok(relerr(w.objects, 1 / p) < REL_TOL, "4 KiB at 64 KiB: objects 1/p");
	ok(relerr(w.var_objects, (1 - p) / (p * p)) < REL_TOL,
	    "4 KiB at 64 KiB: var_objects (1-p)/p^2");
	ok(relerr(w.var_bytes, (1 - p) / (p * p) * 4096.0 * 4096) < REL_TOL,
	    "4 KiB at 64 KiB: var_bytes (1-p)/p^2 s^2");

	p = -expm1(-1.0 / 524288);
	ht_sample_weigh(0, 524288, &w);
	ok(w.bytes == 0 && relerr(w.objects, 1 / p) < REL_TOL,
	    "size 0 at 512 KiB: 0 bytes, 1/p objects (%.0f)", w.objects);

	ht_sample_weigh(1ULL << 40, 4096, &w);
	ok(w.bytes == 0x1p40 && w.objects == 1 && w.var_bytes == 0,
	    "1 TiB at 4 KiB: p = 1, exact");

	ht_sample_interval(100, 25, &lo, &hi);
	ok(fabs(lo - 90.2) < 1e-9 && fabs(hi - 109.8) < 1e-9,
	    "interval 100 +- 1.96 * 5");
	ht_sample_interval(1, 100, &lo, &hi);
	ok(lo == 0 && fabs(hi - 20.6) < 1e-9, "interval clamps at 0");
	ht_sample_interval(42, 0, &lo, &hi);
	ok(lo == 42 && hi == 42, "interval with variance 0 is a point");
}

/*
 * A stream of allocations with sizes mixed at random, one countdown: each
 * allocation must be sampled with p(s) = 1 - exp(-(s+1)/R) whatever came
 * before it (the countdown is memoryless).  Rate 64 makes p large enough for
 * small sizes that round() instead of floor() would fail here.
 */
static void
test_probability(void)
{
	static const uint64_t sz[] = { 0, 1, 3, 15, 63, 64, 255, 1024 };
	enum { NSZ = sizeof(sz) / sizeof(sz[0]) };
	static const uint64_t rates[] = { 64, 4096 };
	struct ht_rng r;
	uint64_t in = 99, n[NSZ], hit[NSZ];
	double p, sd, dev;
	int64_t c;
	size_t k, j;
	int i;

	for (k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		ht_rng_seed(&r, 5 + k);
		memset(n, 0, sizeof(n));
		memset(hit, 0, sizeof(hit));
		c = ht_sample_countdown(&r, rates[k]);
		for (i = 0; i < NALLOC; i++) {
			j = ref_next(&in) % NSZ;
			n[j]++;
			c -= (int64_t)sz[j] + 1;
			if (c < 0) {
				hit[j]++;
				c = ht_sample_countdown(&r, rates[k]);
			}
		}
		for (j = 0; j < NSZ; j++) {
			p = -expm1(-((double)sz[j] + 1) / (double)rates[k]);
			sd = sqrt((double)n[j] * p * (1 - p));
			dev = (double)hit[j] - (double)n[j] * p;
			ok(fabs(dev) <= 4 * sd + 1,
			    "rate %llu, size %llu: sampled %llu of %llu, "
			    "expected %.1f (4 sd %.1f)",
			    (unsigned long long)rates[k],
			    (unsigned long long)sz[j],
			    (unsigned long long)hit[j],
			    (unsigned long long)n[j], (double)n[j] * p, 4 * sd);
		}
	}
}

/* Size classes of the simulated workload. */
enum { SMALL, MEDIUM, LARGE, HUGE, NCLASS };
static const char *const class_name[NCLASS] = { "1..256 B", "257 B..8 KiB",
	"8..64 KiB", "1..8 MiB" };

static uint64_t
draw_size(uint64_t *s, int *cls)
{
	uint64_t v = ref_next(s) % 1000;
	uint64_t u = ref_next(s);

	if (v < 700) {
		*cls = SMALL;
		return 1 + u % 256;
	}
	if (v < 950) {
		*cls = MEDIUM;
		return 257 + u % (8192 - 256);
	}
	if (v < 999) {
		*cls = LARGE;
		return 8193 + u % (65536 - 8192);
	}
	*cls = HUGE;
	return (1 << 20) + u % (7 << 20);
}

#define NTHREAD 4

/*
 * The agent's algorithm exactly: per-thread countdowns from
 * ht_sample_countdown, size + 1 subtracted per allocation, a sample when it
 * goes below zero, then a fresh countdown; each sample weighed by
 * ht_sample_weigh.  The Horvitz-Thompson estimates are unbiased with the
 * summed variances, so the truth lies within 4 sd of them.
 */
static void
simulate(uint64_t rate)
{
	struct ht_rng r;
	struct ht_sample_weight w;
	uint64_t in = 2024, size;
	int64_t c[NTHREAD];
	double tbytes[NCLASS] = { 0 }, tobj[NCLASS] = { 0 };
	double ebytes[NCLASS] = { 0 }, eobj[NCLASS] = { 0 };
	double vbytes[NCLASS] = { 0 }, vobj[NCLASS] = { 0 };
	double truth = 0, est = 0, var = 0, sd, lo, hi;
	long samples = 0;
	int i, t, cls;

	ht_rng_seed(&r, rate);
	for (t = 0; t < NTHREAD; t++)
		c[t] = ht_sample_countdown(&r, rate);
	for (i = 0; i < NALLOC; i++) {
		t = i % NTHREAD;
		size = draw_size(&in, &cls);
		tbytes[cls] += (double)size;
		tobj[cls] += 1;
		c[t] -= (int64_t)size + 1;
		if (c[t] >= 0)
			continue;
		c[t] = ht_sample_countdown(&r, rate);
		ht_sample_weigh(size, rate, &w);
		samples++;
		ebytes[cls] += w.bytes;
		eobj[cls] += w.objects;
		vbytes[cls] += w.var_bytes;
		vobj[cls] += w.var_objects;
	}
	for (cls = 0; cls < NCLASS; cls++) {
		truth += tbytes[cls];
		est += ebytes[cls];
		var += vbytes[cls];
	}
	if (rate == 1) {
		is_int(NALLOC, samples, "rate 1: every allocation sampled");
		ok(est == truth && var == 0,
		    "rate 1: estimated bytes %.0f equal the truth %.0f", est,
		    truth);
		for (cls = 0; cls < NCLASS; cls++)
			ok(eobj[cls] == tobj[cls] && ebytes[cls] == tbytes[cls],
			    "rate 1: class %s exact (%.0f objects)",
			    class_name[cls], tobj[cls]);
		return;
	}
	sd = sqrt(var);
	ht_sample_interval(est, var, &lo, &hi);
	diag("rate %llu: %ld samples; truth %.0f, estimate %.0f, sd %.0f "
	     "(%.3f%%), 95%% [%.0f, %.0f]",
	    (unsigned long long)rate, samples, truth, est, sd, 100 * sd / truth,
	    lo, hi);
	ok(fabs(est - truth) <= 4 * sd,
	    "rate %llu: total bytes within 4 sd (|error| %.0f <= %.0f)",
	    (unsigned long long)rate, fabs(est - truth), 4 * sd);
	ok(4 * sd < 0.05 * truth, "rate %llu: 4 sd is under 5%% of the total",
	    (unsigned long long)rate);
	for (cls = 0; cls < NCLASS; cls++) {
		sd = sqrt(vobj[cls]);
		ok(fabs(eobj[cls] - tobj[cls]) <= 4 * sd + 1e-6 * tobj[cls],
		    "rate %llu, %s: objects %.1f vs %.0f within 4 sd (%.1f)",
		    (unsigned long long)rate, class_name[cls], eobj[cls],
		    tobj[cls], 4 * sd);
		sd = sqrt(vbytes[cls]);
		ok(fabs(ebytes[cls] - tbytes[cls]) <=
			4 * sd + 1e-6 * tbytes[cls],
		    "rate %llu, %s: bytes %.0f vs %.0f within 4 sd (%.0f)",
		    (unsigned long long)rate, class_name[cls], ebytes[cls],
		    tbytes[cls], 4 * sd);
	}
}

/*
 * The allocators' own sampling: weights with p = 1 - exp(-s / R), and a
 * site's figures from its unbiased sums.  A simulation of jemalloc's
 * scheme (Exp countdown charged s bytes) checks that the aggregate
 * estimates and variances describe what the sampling does.
 */
static void
test_native(void)
{
	struct ht_sample_weight w;
	struct ht_sample_agg a;
	struct ht_rng r;
	double p, est, var, sum, sum2, k, inside;
	int64_t c;
	int run, i, n;

	ht_sample_weigh_native(4096, 1, &w);
	ok(w.bytes == 4096 && w.objects == 1 && w.var_bytes == 0,
	    "native weight at rate 1: exact");
	ht_sample_weigh_native(4096, 65536, &w);
	p = 1 - exp(-4096.0 / 65536);
	ok(fabs(w.objects - 1 / p) < 1e-9 && fabs(w.bytes - 4096 / p) < 1e-6,
	    "native weight of 4096 at 64 KiB: 1/p with p = 1 - exp(-s/R)");
	ok(fabs(w.var_bytes - (1 - p) / (p * p) * 4096.0 * 4096) < 1e-3,
	    "its variance (1 - p) / p^2 s^2");
	ht_sample_aggregate(10 / p, 10 * 4096 / p, 65536, &a);
	ok(fabs(a.samples - 10) < 1e-9 &&
		fabs(a.var_bytes - 10 * w.var_bytes) < 1e-3 * w.var_bytes,
	    "aggregate of 10 samples of one size: 10 samples, 10 variances");
	ht_sample_aggregate(10, 40960, 1, &a);
	ok(a.samples == 10 && a.var_bytes == 0 && a.var_objects == 0,
	    "aggregate at rate 1: exact");
	k = ht_sample_unsample_scale(10, 40960, 65536);
	ok(fabs(k - 1 / p) < 1e-9, "jeprof's scale 1 / (1 - exp(-m/R))");
	ok(ht_sample_unsample_scale(10, 40960, 1) == 1 &&
		ht_sample_unsample_scale(0, 0, 65536) == 1,
	    "scale 1 at rate 1 and for an empty site");

	/* 200 runs of 3000 allocations of 4096 bytes at 64 KiB, sampled as
	 * jemalloc does; each run's estimate from its raw counts. */
	ht_rng_seed(&r, 42);
	sum = sum2 = inside = 0;
	for (run = 0; run < 200; run++) {
		c = ht_sample_countdown(&r, 65536) + 1;
		n = 0;
		for (i = 0; i < 3000; i++) {
			c -= 4096;
			if (c <= 0) {
				n++;
				c = ht_sample_countdown(&r, 65536) + 1;
			}
		}
		k = ht_sample_unsample_scale(n, 4096.0 * n, 65536);
		est = 4096.0 * n * k;
		ht_sample_aggregate(n * k, est, 65536, &a);
		var = a.var_bytes;
		sum += est;
		sum2 += est * est;
		inside += fabs(est - 3000 * 4096.0) <= 1.96 * sqrt(var);
	}
	est = sum / 200;
	var = sum2 / 200 - est * est;
	/* The mean of 200 runs is within 4 standard errors of the truth;
	 * the intervals hold it in at least 88% of runs (95% expected). */
	ok(fabs(est - 3000 * 4096.0) < 4 * sqrt(var / 200),
	    "native estimates are unbiased (mean %.0f, truth %.0f)", est,
	    3000 * 4096.0);
	ok(inside >= 176, "their 95%% intervals hold the truth in %.0f of 200",
	    inside);
}

int
main(void)
{
	plan(0);
	test_accuracy();
	test_rng();
	test_countdown();
	test_countdown_exact();
	test_weigh();
	test_probability();
	test_native();
	simulate(1);
	simulate(65536);
	simulate(524288);
	return 0;
}
