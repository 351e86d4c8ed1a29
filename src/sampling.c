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

double
ht_log(double x)
{
	uint64_t b;
	double m, f, s, t;
	int e = 0, k;

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
	 * loop's counter and loads cost as much as its arithmetic.
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
 * -log of the countdown's uniform variate, which lies in [2^-53, 1): its
 * mantissa m in [1, 2) is split at c, the middle of the 64th of [1, 2)
 * that holds it, log m = log c + log1p(z) with z = (m - c) / c, |z| <
 * 2^-7, so that seven terms of log1p's series leave an error below 2^-59,
 * under the rounding of the result: a few units in its last place, as
 * libm's log (t/sampling-t.c holds the floors to it).  A table lookup and
 * a short polynomial instead of ht_log's division and twelve terms: the
 * draw is part of every sample.  Each row is log c and 1 / c, c = 1 +
 * (2j + 1) / 128, correctly rounded.
 */
static const double log_mid[64][2] = {
	{ 0x1.fe02a6b106789p-8, 0x1.fc07f01fc07f0p-1 },
	{ 0x1.7b91b07d5b11bp-6, 0x1.f44659e4a4271p-1 },
	{ 0x1.39e87b9febd60p-5, 0x1.ecc07b301ecc0p-1 },
	{ 0x1.b42dd711971bfp-5, 0x1.e573ac901e574p-1 },
	{ 0x1.16536eea37ae1p-4, 0x1.de5d6e3f8868ap-1 },
	{ 0x1.51b073f06183fp-4, 0x1.d77b654b82c34p-1 },
	{ 0x1.8c345d6319b21p-4, 0x1.d0cb58f6ec074p-1 },
	{ 0x1.c5e548f5bc743p-4, 0x1.ca4b3055ee191p-1 },
	{ 0x1.fec9131dbeabbp-4, 0x1.c3f8f01c3f8f0p-1 },
	{ 0x1.1b72ad52f67a0p-3, 0x1.bdd2b899406f7p-1 },
	{ 0x1.371fc201e8f74p-3, 0x1.b7d6c3dda338bp-1 },
	{ 0x1.526e5e3a1b438p-3, 0x1.b2036406c80d9p-1 },
	{ 0x1.6d60fe719d21dp-3, 0x1.ac5701ac5701bp-1 },
	{ 0x1.87fa06520c911p-3, 0x1.a6d01a6d01a6dp-1 },
	{ 0x1.a23bc1fe2b563p-3, 0x1.a16d3f97a4b02p-1 },
	{ 0x1.bc286742d8cd6p-3, 0x1.9c2d14ee4a102p-1 },
	{ 0x1.d5c216b4fbb91p-3, 0x1.970e4f80cb872p-1 },
	{ 0x1.ef0adcbdc5936p-3, 0x1.920fb49d0e229p-1 },
	{ 0x1.0402594b4d041p-2, 0x1.8d3018d3018d3p-1 },
	{ 0x1.1058bf9ae4ad5p-2, 0x1.886e5f0abb04ap-1 },
	{ 0x1.1c898c16999fbp-2, 0x1.83c977ab2beddp-1 },
	{ 0x1.2895a13de86a3p-2, 0x1.7f405fd017f40p-1 },
	{ 0x1.347dd9a987d55p-2, 0x1.7ad2208e0ecc3p-1 },
	{ 0x1.404308686a7e4p-2, 0x1.767dce434a9b1p-1 },
	{ 0x1.4be5f957778a1p-2, 0x1.724287f46debcp-1 },
	{ 0x1.5767717455a6cp-2, 0x1.6e1f76b4337c7p-1 },
	{ 0x1.62c82f2b9c795p-2, 0x1.6a13cd1537290p-1 },
	{ 0x1.6e08eaa2ba1e4p-2, 0x1.661ec6a5122f9p-1 },
	{ 0x1.792a55fdd47a2p-2, 0x1.623fa77016240p-1 },
	{ 0x1.842d1da1e8b17p-2, 0x1.5e75bb8d015e7p-1 },
	{ 0x1.8f11e873662c7p-2, 0x1.5ac056b015ac0p-1 },
	{ 0x1.99d958117e08bp-2, 0x1.571ed3c506b3ap-1 },
	{ 0x1.a484090e5bb0ap-2, 0x1.5390948f40febp-1 },
	{ 0x1.af1293247786bp-2, 0x1.5015015015015p-1 },
	{ 0x1.b9858969310fbp-2, 0x1.4cab88725af6ep-1 },
	{ 0x1.c3dd7a7cdad4dp-2, 0x1.49539e3b2d067p-1 },
	{ 0x1.ce1af0b85f3ebp-2, 0x1.460cbc7f5cf9ap-1 },
	{ 0x1.d83e7258a2f3ep-2, 0x1.42d6625d51f87p-1 },
	{ 0x1.e24881a7c6c26p-2, 0x1.3fb013fb013fbp-1 },
	{ 0x1.ec399d2468cc0p-2, 0x1.3c995a47babe7p-1 },
	{ 0x1.f6123fa7028acp-2, 0x1.3991c2c187f63p-1 },
	{ 0x1.ffd2e0857f498p-2, 0x1.3698df3de0748p-1 },
	{ 0x1.04bdf9da926d2p-1, 0x1.33ae45b57bcb2p-1 },
	{ 0x1.0986f4f573521p-1, 0x1.30d190130d190p-1 },
	{ 0x1.0e44985d1cc8cp-1, 0x1.2e025c04b8097p-1 },
	{ 0x1.12f719593efbcp-1, 0x1.2b404ad012b40p-1 },
	{ 0x1.179eabbd899a1p-1, 0x1.288b01288b013p-1 },
	{ 0x1.1c3b81f713c25p-1, 0x1.25e22708092f1p-1 },
	{ 0x1.20cdcd192ab6ep-1, 0x1.23456789abcdfp-1 },
	{ 0x1.2555bce98f7cbp-1, 0x1.20b470c67c0d9p-1 },
	{ 0x1.29d37fec2b08bp-1, 0x1.1e2ef3b3fb874p-1 },
	{ 0x1.2e47436e40268p-1, 0x1.1bb4a4046ed29p-1 },
	{ 0x1.32b1339121d71p-1, 0x1.19453808ca29cp-1 },
	{ 0x1.37117b54747b6p-1, 0x1.16e0689427379p-1 },
	{ 0x1.3b68449fffc23p-1, 0x1.1485f0e0acd3bp-1 },
	{ 0x1.3fb5b84d16f42p-1, 0x1.12358e75d3033p-1 },
	{ 0x1.43f9fe2f9ce67p-1, 0x1.0fef010fef011p-1 },
	{ 0x1.48353d1ea88dfp-1, 0x1.0db20a88f4696p-1 },
	{ 0x1.4c679afccee3ap-1, 0x1.0b7e6ec259dc8p-1 },
	{ 0x1.50913cc01686bp-1, 0x1.0953f39010954p-1 },
	{ 0x1.54b2467999498p-1, 0x1.073260a47f7c6p-1 },
	{ 0x1.58cadb5cd7989p-1, 0x1.05197f7d73404p-1 },
	{ 0x1.5cdb1dc6c1765p-1, 0x1.03091b51f5e1ap-1 },
	{ 0x1.60e32f44788d9p-1, 0x1.0101010101010p-1 },
};

static inline double
neg_log_unit(double x)
{
	uint64_t b = bits_of(x);
	int e = (int)(b >> 52) - 1023;
	unsigned j = (unsigned)(b >> 46) & 63;
	double m =
	    double_of((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
	double z = (m - (double)(129 + 2 * j) * 0x1p-7) * log_mid[j][1];
	double p;

	p = z * (1.0 / 6 - z * (1.0 / 7));
	p = z * (1.0 / 4 - z * (1.0 / 5 - p));
	p = z * (1.0 / 2 - z * (1.0 / 3 - p));
	p = z - z * p;
	return -((double)e * LN2_HI + (log_mid[j][0] + p + (double)e * LN2_LO));
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
	v = (double)rate * neg_log_unit(ht_rng_uniform(r));
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
