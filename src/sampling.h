/*
 * The sampling math (DESIGN.md section 3), libc only and without libm so that
 * the agent can use it inside malloc.
 *
 * Every allocated byte is sampled with probability 1/rate.  A thread keeps a
 * countdown drawn from Exp(mean rate) and subtracts size + 1 per allocation;
 * when it goes below zero the allocation is sampled.  By memorylessness an
 * allocation of s bytes is then sampled with probability
 * p = 1 - exp(-(s + 1) / rate), and its sample stands for s / p bytes and
 * 1 / p objects, with Horvitz-Thompson variance (1 - p) / p^2 * y^2 for a
 * quantity y.  Rate 1 is special: every allocation is sampled with p = 1, so
 * counts are exact.
 */
#ifndef HT_SAMPLING_H
#define HT_SAMPLING_H

#include <stdint.h>

/* A small, fast PRNG (xorshift64* or similar); never returns a zero state. */
struct ht_rng {
	uint64_t s;
};

void ht_rng_seed(struct ht_rng *, uint64_t seed);
uint64_t ht_rng_next(struct ht_rng *);
/* Uniform in the open interval (0, 1). */
double ht_rng_uniform(struct ht_rng *);

/* Natural log of x > 0 and exp(x), accurate to a few ulp over the ranges we
 * use (|x| < 700); no libm. */
double ht_log(double x);
double ht_exp(double x);
/* 1 - exp(-x) for x >= 0, accurate also for tiny x. */
double ht_one_minus_exp_neg(double x);
/* Square root of x >= 0. */
double ht_sqrt(double x);

/* Draw the next countdown in bytes for the given rate: floor(Exp(mean rate)),
 * a geometric variable, so that the countdown is memoryless and an allocation
 * of s bytes is sampled with exactly p = 1 - exp(-(s + 1) / rate); its mean
 * is about rate - 1/2.  Rate 1 (or 0) returns 0, so that every allocation is
 * sampled. */
int64_t ht_sample_countdown(struct ht_rng *, uint64_t rate);

/* The weight of a sampled allocation of size bytes at rate. */
struct ht_sample_weight {
	double bytes;	    /* s / p */
	double objects;	    /* 1 / p */
	double var_bytes;   /* (1 - p) / p^2 * s^2 */
	double var_objects; /* (1 - p) / p^2 */
};
void ht_sample_weigh(uint64_t size, uint64_t rate, struct ht_sample_weight *);

/*
 * For allocators that sample by themselves (jemalloc, mimalloc's profiler):
 * their countdown is charged size bytes, not size + 1, so an allocation of s
 * bytes is sampled with p = 1 - exp(-s / rate).  Rate 1 (or 0) is exact.
 */
void
ht_sample_weigh_native(uint64_t size, uint64_t rate, struct ht_sample_weight *);

/*
 * The figures of a call site from an allocator's aggregated samples, where
 * only the sums are known: objects and bytes already unbiased (each sample
 * counted 1/p times, as jemalloc's heap profile gives them once jeprof's
 * scaling is applied), at rate.  The samples are taken as all of the site's
 * mean size m = bytes / objects (exact for a site of one size class, the
 * usual case): p = 1 - exp(-m / rate), the number of samples objects * p,
 * and the variances their Horvitz-Thompson sums, bytes * m * (1 - p) / p
 * and objects * (1 - p) / p.  At rate 1 the figures are exact (variance 0).
 */
struct ht_sample_agg {
	double samples;
	double var_bytes;
	double var_objects;
};
void ht_sample_aggregate(double objects, double bytes, uint64_t rate,
    struct ht_sample_agg *);

/* jeprof's unsampling of a heap profile's raw sums: scale = 1 / (1 - exp(-m
 * / rate)), m the mean size bytes / objects.  Returns the scale (1 at rate
 * 1 or with no objects). */
double ht_sample_unsample_scale(double objects, double bytes, uint64_t rate);

/* A 95% interval for an estimate est whose variance estimate is var:
 * est -/+ 1.96 sqrt(var), the low end clamped at 0.  With var 0 (rate 1)
 * the interval is [est, est]. */
void ht_sample_interval(double est, double var, double *lo, double *hi);

/* An estimate as a count: v rounded to the nearest, 0 for v not above 0
 * (NaN included), UINT64_MAX from 2^64 on (where a conversion would be
 * undefined). */
uint64_t ht_sample_round(double v);

#endif
