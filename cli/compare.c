/*
 * The comparison's verdict and its output (compare.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "json.h"

#define BOOTSTRAP 1000
#define POWER	  0.8

int
ht_compare_compute(struct ht_compare *c)
{
	double *la, *lb, hl;
	size_t i, n = c->rounds;
	int rc = -1;

	la = malloc((n + 1) * sizeof(*la));
	lb = malloc((n + 1) * sizeof(*lb));
	if (la == NULL || lb == NULL)
		goto out;
	/* A measure of 0 (a clock too coarse) would have no log: 1 is as
	 * near as the measure can tell. */
	for (i = 0; i < n; i++) {
		la[i] = log(c->a[i] > 1 ? c->a[i] : 1);
		lb[i] = log(c->b[i] > 1 ? c->b[i] : 1);
	}
	if (ht_stats_summarize(c->a, n, &c->sa) != 0 ||
	    ht_stats_summarize(c->b, n, &c->sb) != 0 ||
	    ht_stats_mann_whitney(lb, n, la, n, &c->mw) != 0 ||
	    ht_stats_hodges_lehmann(la, n, lb, n, &hl) != 0 ||
	    ht_stats_hl_bootstrap(la, n, lb, n, BOOTSTRAP, c->seed, 0.95,
		&c->lo, &c->hi) != 0)
		goto out;
	c->ratio = exp(hl);
	c->lo = exp(c->lo);
	c->hi = exp(c->hi);
	c->min_ratio = n >= 2 ?
	    exp(ht_stats_min_detectable(la, n, lb, n, c->alpha, POWER)) :
	    INFINITY;
	/* The smallest p the test can give at all, every B above every A:
	 * with too few rounds it is above alpha, and no difference, however
	 * large, could be detected. */
	{
		double nn = (double)n, var = nn * nn * (2 * nn + 1) / 12;

		c->p_floor = erfc((nn * nn / 2 - 0.5) / sqrt(var) / sqrt(2.0));
		if (c->p_floor >= c->alpha)
			c->min_ratio = INFINITY;
	}
	/* A difference only where the test and the interval both see one:
	 * the bootstrap's interval of the shift and the rank test's p are
	 * two readings of the same rounds, which near alpha can disagree (p
	 * 0.044 with an interval of 0.99 .. 1.07); a verdict must never
	 * contradict the interval printed beside it. */
	if (c->mw.p < c->alpha && c->lo > 1)
		c->verdict = "slower";
	else if (c->mw.p < c->alpha && c->hi < 1)
		c->verdict = "faster";
	else
		c->verdict = "no difference detectable";
	rc = 0;
out:
	free(la);
	free(lb);
	return rc;
}

static double
unit(const struct ht_compare *c)
{
	return strcmp(c->metric, "instructions") != 0 ? 1e6 : 1;
}

static void
row(FILE *fp, const char *name, const char *label,
    const struct ht_stats_summary *s, double u)
{
	int d = u > 1 ? 3 : 0; /* ms to the microsecond; whole instructions */

	fprintf(fp, "%-2s %3zu %12.*f %12.*f %12.*f %12.*f %12.*f  %s\n", name,
	    s->n, d, s->min / u, d, s->q1 / u, d, s->median / u, d, s->q3 / u,
	    d, s->max / u, label);
}

/* A ministat-like strip of each side's values from the lowest to the
 * highest of both: x for A, + for B, one line each. */
static void
strip(FILE *fp, const struct ht_compare *c)
{
	double lo = c->sa.min < c->sb.min ? c->sa.min : c->sb.min;
	double hi = c->sa.max > c->sb.max ? c->sa.max : c->sb.max;
	char line[2][64];
	size_t i;
	int k, side;

	for (side = 0; side < 2; side++) {
		const double *v = side ? c->b : c->a;

		memset(line[side], ' ', 60);
		line[side][60] = '\0';
		for (i = 0; i < c->rounds; i++) {
			k = hi > lo ?
			    (int)((v[i] - lo) / (hi - lo) * 59 + 0.5) :
			    0;
			line[side][k] = side ? '+' : 'x';
		}
	}
	fprintf(fp, "  +%.60s+\n",
	    "-----------------------------------------"
	    "-----------------------------------");
	fprintf(fp, "A |%s|\nB |%s|\n", line[0], line[1]);
	fprintf(fp, "  +%.60s+\n",
	    "-----------------------------------------"
	    "-----------------------------------");
}

int
ht_compare_text(FILE *fp, const struct ht_compare *c)
{
	double u = unit(c);
	const char *un = u > 1 ? "ms" : "instructions";

	fprintf(fp,
	    "compare on %s: %zu rounds, A and B once each a round in an "
	    "order drawn from seed %llu\n",
	    c->trace, c->rounds, (unsigned long long)c->seed);
	strip(fp, c);
	fprintf(fp, "%-2s %3s %12s %12s %12s %12s %12s  (%s)\n", "", "N", "min",
	    "q1", "median", "q3", "max", un);
	row(fp, "A", c->label_a, &c->sa, u);
	row(fp, "B", c->label_b, &c->sb, u);
	fprintf(fp,
	    "B/A %.4f, 95%% interval %.4f .. %.4f (Hodges-Lehmann on log "
	    "%s, bootstrap)\n",
	    c->ratio, c->lo, c->hi, c->metric);
	fprintf(fp, "Mann-Whitney U %.1f, z %.3f, p %.4g (alpha %g)\n", c->mw.u,
	    c->mw.z, c->mw.p, c->alpha);
	if (strcmp(c->verdict, "no difference detectable") == 0 &&
	    c->p_floor >= c->alpha)
		fprintf(fp,
		    "verdict: no difference detectable: with %zu rounds no "
		    "p-value can fall below alpha %g (the least is %.3g); give "
		    "more --rounds\n",
		    c->rounds, c->alpha, c->p_floor);
	else if (strcmp(c->verdict, "no difference detectable") == 0)
		fprintf(fp,
		    "verdict: no difference detectable; the smallest this run "
		    "could detect is about %.1f%% (80%% power)\n",
		    (c->min_ratio - 1) * 100);
	else
		fprintf(fp,
		    "verdict: B is %s than A: %.4fx (95%% interval %.4f .. "
		    "%.4f)\n",
		    c->verdict, c->ratio, c->lo, c->hi);
	return fflush(fp) != 0 || ferror(fp) ? -1 : 0;
}

static void
side(struct ht_json *j, const char *key, const char *label,
    const struct ht_stats_summary *s, const double *v, size_t n)
{
	size_t i;

	ht_json_object_begin(j, key);
	ht_json_string(j, "setup", label);
	ht_json_uint(j, "n", s->n);
	ht_json_double(j, "min", s->min);
	ht_json_double(j, "q1", s->q1);
	ht_json_double(j, "median", s->median);
	ht_json_double(j, "q3", s->q3);
	ht_json_double(j, "max", s->max);
	ht_json_array_begin(j, "values");
	for (i = 0; i < n; i++)
		ht_json_double(j, NULL, v[i]);
	ht_json_array_end(j);
	ht_json_object_end(j);
}

int
ht_compare_json(FILE *fp, const struct ht_compare *c)
{
	static struct ht_json j;

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_string(&j, "trace", c->trace);
	ht_json_string(&j, "metric", c->metric);
	ht_json_uint(&j, "rounds", c->rounds);
	ht_json_uint(&j, "seed", c->seed);
	ht_json_double(&j, "alpha", c->alpha);
	side(&j, "a", c->label_a, &c->sa, c->a, c->rounds);
	side(&j, "b", c->label_b, &c->sb, c->b, c->rounds);
	ht_json_double(&j, "ratio", c->ratio);
	ht_json_double(&j, "ratio_lo", c->lo);
	ht_json_double(&j, "ratio_hi", c->hi);
	ht_json_double(&j, "level", 0.95);
	ht_json_object_begin(&j, "mann_whitney");
	ht_json_double(&j, "u", c->mw.u);
	ht_json_double(&j, "z", c->mw.z);
	ht_json_double(&j, "p", c->mw.p);
	ht_json_object_end(&j);
	ht_json_double(&j, "min_detectable_ratio", c->min_ratio);
	ht_json_double(&j, "p_floor", c->p_floor);
	ht_json_string(&j, "verdict", c->verdict);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}
