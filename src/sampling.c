/*
 * The sampling math, without libm: the agent runs it inside malloc hooks and
 * links nothing but libc.  log, exp and sqrt are reduced to a small interval
 * by their exponent and finished with a short series or Newton's method; a
 * few ulp is plenty for statistics whose own error is a percent.
 */
#include <stdint.h>
#include <string.h>

#include "sampling.h"

/* ln 2 split so that k * LN2_HI is exact for |k| < 2^20 (its low 32 bits
 * are zero) and LN2_LO carries the rest. */
#define LN2_HI	6.93147180369123816490e-01
#define LN2_LO	1.90821492927058770002e-10
#define INV_LN2 1.44269504088896338700e+00
#define SQRT2	1.41421356237309504880
/* Beyond these exp overflows to inf or underflows to 0. */
#define EXP_MAX 709.782712893383973096
#define EXP_MIN -745.133219101941108420

static uint64_t
bits_of(double x)
{
	uint64_t b;

	memcpy(&b, &x, sizeof(b));
	return b;
}

static double
double_of(uint64_t b)
{
	double x;

	memcpy(&x, &b, sizeof(x));
	return x;
}

/* 2^k for -1022 <= k <= 1023, built from its bits. */
static double
pow2(int k)
{
	return double_of((uint64_t)(k + 1023) << 52);
}

/* x * 2^k in steps whose factors are normal, so that only the last step
 * rounds (into the subnormals) if it must. */
static double
scale2(double x, int k)
{
	while (k > 1023) {
		x *= 0x1p1023;
		k -= 1023;
	}
	while (k < -1022) {
		x *= 0x1p-1022;
		k += 1022;
	}
	return x * pow2(k);
}

/* splitmix64: spreads any seed, 0 included, over the whole state. */
void
ht_rng_seed(struct ht_rng *r, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	/* xorshift's one forbidden state. */
	r->s = z != 0 ? z : 0x9e3779b97f4a7c15ULL;
}

/* xorshift64* (Vigna): state never becomes 0 from a nonzero start. */
uint64_t
ht_rng_next(struct ht_rng *r)
{
	uint64_t x = r->s;

	if (x == 0)
		x = 0x9e3779b97f4a7c15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/*
 * The top 53 bits as k / 2^53, k = 0 drawn again: every value is exact and
 * the interval is open at both ends ((k + 0.5) / 2^53 would round the last
 * step up to 1.0).
 */
double
ht_rng_uniform(struct ht_rng *r)
{
	uint64_t k;

	while ((k = ht_rng_next(r) >> 11) == 0)
		;
	return (double)k * 0x1p-53;
}

/*
 * 1/n for the series below: a division costs some 20 cycles, a multiply by
 * a correctly rounded constant 4, and the agent evaluates these inside
 * malloc on every sample.
 */
static const double inv[26] = {
	0,
	1,
	1.0 / 2,
	1.0 / 3,
	1.0 / 4,
	1.0 / 5,
	1.0 / 6,
	1.0 / 7,
	1.0 / 8,
	1.0 / 9,
	1.0 / 10,
	1.0 / 11,
	1.0 / 12,
	1.0 / 13,
	1.0 / 14,
	1.0 / 15,
	1.0 / 16,
	1.0 / 17,
	1.0 / 18,
	1.0 / 19,
	1.0 / 20,
	1.0 / 21,
	1.0 / 22,
	1.0 / 23,
	1.0 / 24,
	1.0 / 25,
};

/*
 * log x for a normal, positive, finite x: ht_log's work once its special
 * cases are out of the way, and the whole of the countdown's, whose
 * uniform variate is always such an x.
 */
static inline double
log_normal(double x, int e)
{
	uint64_t b;
	double m, f, s, t;
	int k;

	b = bits_of(x);
	e += (int)((b >> 52) & 0x7ff) - 1023;
	m = double_of((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
	if (m > SQRT2) {
		m *= 0.5;
		e++;
	}
	/*
	 * m in [sqrt(2)/2, sqrt(2)]: log m = 2 atanh f with f = (m-1)/(m+1),
	 * |f| <= 0.172, and atanh f = f (1 + f^2/3 + f^4/5 + ...); m - 1 is
	 * exact (Sterbenz), so results near 1 keep their relative accuracy.
	 * f^2 <= 0.0295, so 13 terms reach below 1e-19.  Unrolled: the
	 * loop's counter and loads were half of a sample's countdown.
	 */
	f = (m - 1) / (m + 1);
	s = f * f;
	t = 0;
#pragma GCC unroll 16
	for (k = 25; k >= 3; k -= 2)
		t = (inv[k] + t) * s;
	t = 2 * f + 2 * f * t;
	return (double)e * LN2_HI + (t + (double)e * LN2_LO);
}

double
ht_log(double x)
{
	int e = 0;

	if (x != x)
		return x;
	if (x < 0)
		return __builtin_nan("");
	if (x == 0)
		return -__builtin_inf();
	if (x == __builtin_inf())
		return x;
	if (x < 0x1p-1022) {
		/* Subnormal: normalize first. */
		x *= 0x1p54;
		e = -54;
	}
	return log_normal(x, e);
}

double
ht_exp(double x)
{
	double r, t;
	int k, n;

	if (x != x)
		return x;
	if (x > EXP_MAX)
		return __builtin_inf();
	if (x < EXP_MIN)
		return 0;
	/* x = k ln 2 + r, |r| <= ln 2 / 2; exp x = 2^k exp r. */
	k = (int)(x * INV_LN2 + (x < 0 ? -0.5 : 0.5));
	r = (x - k * LN2_HI) - k * LN2_LO;
	/* Taylor in nested form; 0.347^15 / 15! < 1e-19. */
	t = 1;
	for (n = 15; n >= 1; n--)
		t = 1 + r * t * inv[n];
	return scale2(t, k);
}

double
ht_one_minus_exp_neg(double x)
{
	double r, t;
	int n;

	if (x != x)
		return x;
	if (x > -0.5 && x < 0.5) {
		/*
		 * 1 - exp(-x) = -expm1(-x), summed as a series so that tiny x
		 * (a small allocation at a large rate) keeps full relative
		 * accuracy instead of cancelling to 0.  0.5^20 / 20! < 1e-24.
		 */
		r = -x;
		t = 1;
		for (n = 20; n >= 2; n--)
			t = 1 + r * t * inv[n];
		return -(r * t);
	}
	return 1 - ht_exp(-x);
}

double
ht_sqrt(double x)
{
	double y;
	int i, k = 0;

	if (x != x || x < 0)
		return __builtin_nan("");
	if (x == 0 || x == __builtin_inf())
		return x;
	if (x < 0x1p-1022) {
		x *= 0x1p108;
		k = -54;
	}
	/*
	 * Halving the exponent bits gives a first guess within 6%; Newton's
	 * method doubles the correct digits each step (6% -> 2e-3 -> 2e-6 ->
	 * 2e-12 -> ulp), approaching from above.
	 */
	y = double_of((bits_of(x) >> 1) + (0x3ff0000000000000ULL >> 1));
	for (i = 0; i < 6; i++)
		y = 0.5 * (y + x / y);
	return k != 0 ? scale2(y, k) : y;
}

/*
 * floor, not round: floor(Exp(mean R)) is geometric, P(C >= n) =
 * exp(-n / R), hence memoryless on the integers.  Subtracting s + 1 and
 * sampling below zero then samples an allocation with P(C <= s) =
 * 1 - exp(-(s + 1) / R) exactly, whatever came before it, which is the p that
 * ht_sample_weigh divides by.  Rounding would make p(s) = 1 - exp(-(s + 0.5)
 * / R) and bias small allocations by up to a factor of two.
 */
int64_t
ht_sample_countdown(struct ht_rng *r, uint64_t rate)
{
	double v;

	if (rate <= 1)
		return 0;
	/* The variate lies in [2^-53, 1): normal, positive, finite. */
	v = -(double)rate * log_normal(ht_rng_uniform(r), 0);
	if (v >= 0x1p63)
		return INT64_MAX;
	return v > 0 ? (int64_t)v : 0;
}

void
ht_sample_weigh(uint64_t size, uint64_t rate, struct ht_sample_weight *w)
{
	double s = (double)size, x, p, q;

	if (rate <= 1) {
		w->bytes = s;
		w->objects = 1;
		w->var_bytes = 0;
		w->var_objects = 0;
		return;
	}
	x = (s + 1) / (double)rate;
	/* 1 - p directly, not by subtraction: it is what is left when p is
	 * close to 1 (large allocations); and p from the series when it is
	 * tiny (small allocations), where 1 - q would cancel. */
	q = ht_exp(-x);
	p = x < 0.5 ? ht_one_minus_exp_neg(x) : 1 - q;
	w->bytes = s / p;
	w->objects = 1 / p;
	w->var_objects = q / (p * p);
	w->var_bytes = w->var_objects * s * s;
}

void
ht_sample_weigh_native(uint64_t size, uint64_t rate, struct ht_sample_weight *w)
{
	double s = (double)size, x, p, q;

	if (rate <= 1 || size == 0) {
		/* A zero-size allocation is never sampled by a countdown of
		 * bytes: if one is, it stands for itself. */
		w->bytes = s;
		w->objects = 1;
		w->var_bytes = 0;
		w->var_objects = 0;
		return;
	}
	x = s / (double)rate;
	q = ht_exp(-x);
	p = x < 0.5 ? ht_one_minus_exp_neg(x) : 1 - q;
	w->bytes = s / p;
	w->objects = 1 / p;
	w->var_objects = q / (p * p);
	w->var_bytes = w->var_objects * s * s;
}

/* p for a mean size m at rate, and 1 - p, each without cancellation. */
static void
prob_of(double m, uint64_t rate, double *p, double *q)
{
	double x = m / (double)rate;

	*q = ht_exp(-x);
	*p = x < 0.5 ? ht_one_minus_exp_neg(x) : 1 - *q;
}

double
ht_sample_unsample_scale(double objects, double bytes, uint64_t rate)
{
	double p, q;

	if (rate <= 1 || objects <= 0 || bytes <= 0)
		return 1;
	prob_of(bytes / objects, rate, &p, &q);
	return p > 0 ? 1 / p : 1;
}

void
ht_sample_aggregate(double objects, double bytes, uint64_t rate,
    struct ht_sample_agg *a)
{
	double m, p, q;

	if (rate <= 1 || objects <= 0 || bytes <= 0) {
		a->samples = objects > 0 ? objects : 0;
		a->var_bytes = 0;
		a->var_objects = 0;
		return;
	}
	m = bytes / objects;
	prob_of(m, rate, &p, &q);
	a->samples = objects * p;
	/* Sum over the samples of (1 - p) / p^2 * y^2, with objects * p
	 * samples of y = m bytes (or 1 object) each. */
	a->var_bytes = bytes * m * q / p;
	a->var_objects = objects * q / p;
}

void
ht_sample_interval(double est, double var, double *lo, double *hi)
{
	double half;

	half = var > 0 ? 1.96 * ht_sqrt(var) : 0;
	*lo = est - half;
	if (*lo < 0)
		*lo = 0;
	*hi = est + half;
}

uint64_t
ht_sample_round(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)(v + 0.5);
}
