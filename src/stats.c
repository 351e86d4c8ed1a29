/*
 * Benchmark statistics (stats.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double *
sorted_copy(const double *x, size_t n)
{
	double *s;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((s = malloc(n * sizeof(*s))) == NULL)
		return NULL;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

double
ht_stats_quantile(const double *sorted, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int
ht_stats_summarize(const double *x, size_t n, struct ht_stats_summary *s)
{
	double *v = sorted_copy(x, n);

	if (v == NULL)
		return -1;
	s->n = n;
	s->min = v[0];
	s->q1 = ht_stats_quantile(v, n, 0.25);
	s->median = ht_stats_quantile(v, n, 0.5);
	s->q3 = ht_stats_quantile(v, n, 0.75);
	s->max = v[n - 1];
	free(v);
	return 0;
}

struct ranked {
	double v;
	int side; /* 0 a, 1 b */
};

static int
cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v,
	    &((const struct ranked *)b)->v);
}

int
ht_stats_mann_whitney(const double *a, size_t n, const double *b, size_t m,
    struct ht_stats_mw *r)
{
	size_t N = n + m, i, j;
	struct ranked *all;
	double ra = 0, ties = 0, nm = (double)n * (double)m, d;

	if (n == 0 || m == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((all = malloc(N * sizeof(*all))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		all[i] = (struct ranked){ a[i], 0 };
	for (i = 0; i < m; i++)
		all[n + i] = (struct ranked){ b[i], 1 };
	qsort(all, N, sizeof(*all), cmp_ranked);
	/* Ranks from 1, a group of ties sharing the mean of its ranks. */
	for (i = 0; i < N; i = j) {
		double t, rank;

		for (j = i + 1; j < N && all[j].v == all[i].v; j++)
			;
		t = (double)(j - i);
		rank = ((double)i + 1 + (double)j) / 2;
		for (size_t k = i; k < j; k++)
			if (all[k].side == 0)
				ra += rank;
		ties += t * t * t - t;
	}
	free(all);
	r->u = ra - (double)n * ((double)n + 1) / 2;
	r->mean = nm / 2;
	r->var =
	    nm / 12 * (((double)N + 1) - ties / ((double)N * ((double)N - 1)));
	if (r->var <= 0) {
		r->z = 0;
		r->p = 1;
		return 0;
	}
	d = r->u - r->mean;
	/* The continuity correction: U moves in steps of 1/2 at least. */
	if (d > 0.5)
		d -= 0.5;
	else if (d < -0.5)
		d += 0.5;
	else
		d = 0;
	r->z = d / sqrt(r->var);
	r->p = erfc(fabs(r->z) / sqrt(2.0));
	if (r->p > 1)
		r->p = 1;
	return 0;
}

/* The median of the differences b_j - a_i, in scratch (n*m doubles). */
static double
hl_into(const double *a, size_t n, const double *b, size_t m, double *scratch)
{
	size_t i, j, k = 0, nm = n * m;

	for (i = 0; i < n; i++)
		for (j = 0; j < m; j++)
			scratch[k++] = b[j] - a[i];
	qsort(scratch, nm, sizeof(*scratch), cmp_double);
	return nm % 2 ? scratch[nm / 2] :
			(scratch[nm / 2 - 1] + scratch[nm / 2]) / 2;
}

int
ht_stats_hodges_lehmann(const double *a, size_t n, const double *b, size_t m,
    double *shift)
{
	double *s;

	if (n == 0 || m == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((s = malloc(n * m * sizeof(*s))) == NULL)
		return -1;
	*shift = hl_into(a, n, b, m, s);
	free(s);
	return 0;
}

/* splitmix64: a different stream for every seed, no zero state. */
static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in 0..n-1; the modulo's bias is below n / 2^64. */
static size_t
pick(uint64_t *s, size_t n)
{
	return (size_t)(next(s) % n);
}

int
ht_stats_hl_bootstrap(const double *a, size_t n, const double *b, size_t m,
    unsigned iters, uint64_t seed, double level, double *lo, double *hi)
{
	double *ra, *rb, *scratch, *shifts;
	uint64_t s = seed;
	unsigned it;
	size_t i;
	int rc = -1;

	if (n == 0 || m == 0 || iters == 0) {
		errno = EINVAL;
		return -1;
	}
	ra = malloc(n * sizeof(*ra));
	rb = malloc(m * sizeof(*rb));
	scratch = malloc(n * m * sizeof(*scratch));
	shifts = malloc(iters * sizeof(*shifts));
	if (ra == NULL || rb == NULL || scratch == NULL || shifts == NULL)
		goto out;
	for (it = 0; it < iters; it++) {
		for (i = 0; i < n; i++)
			ra[i] = a[pick(&s, n)];
		for (i = 0; i < m; i++)
			rb[i] = b[pick(&s, m)];
		shifts[it] = hl_into(ra, n, rb, m, scratch);
	}
	qsort(shifts, iters, sizeof(*shifts), cmp_double);
	*lo = ht_stats_quantile(shifts, iters, (1 - level) / 2);
	*hi = ht_stats_quantile(shifts, iters, (1 + level) / 2);
	rc = 0;
out:
	free(ra);
	free(rb);
	free(scratch);
	free(shifts);
	return rc;
}

double
ht_stats_normal_quantile(double p)
{
	double lo = -40, hi = 40, mid;
	int i;

	/* Bisection on the normal CDF, 0.5 erfc(-x / sqrt 2): 100 halvings
	 * of 80 reach the double's precision; this is not a hot path. */
	for (i = 0; i < 100; i++) {
		mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2.0)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double
variance(const double *x, size_t n, double *mean)
{
	double s = 0, ss = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += x[i];
	*mean = s / (double)n;
	for (i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	return n > 1 ? ss / (double)(n - 1) : 0;
}

double
ht_stats_min_detectable(const double *a, size_t n, const double *b, size_t m,
    double alpha, double power)
{
	double ma, mb, va = variance(a, n, &ma), vb = variance(b, m, &mb);
	double pooled, z;

	if (n + m <= 2)
		return INFINITY;
	pooled =
	    ((double)(n - 1) * va + (double)(m - 1) * vb) / (double)(n + m - 2);
	z = ht_stats_normal_quantile(1 - alpha / 2) +
	    ht_stats_normal_quantile(power);
	return z * sqrt(pooled) * sqrt(1 / (double)n + 1 / (double)m) *
	    sqrt(M_PI / 3);
}
