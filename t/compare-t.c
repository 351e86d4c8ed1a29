/*
 * The verdict of heaptool replay --compare (cli/compare.c) against its own
 * interval: over 400 made-up comparisons of 20 rounds each, B a few
 * percent slower than A or not, with noise, the verdict "slower" comes
 * only with an interval above 1, "faster" only with one below 1, and "no
 * difference detectable" whenever the interval holds 1 — also where the
 * rank test alone says p < 0.05 (such comparisons occur among these: the
 * test counts them, and asks for at least one).  B twice A's time says
 * "slower", its interval holding 2.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "basic.h"
#include "compare.h"

#define ROUNDS 20

static uint64_t rng = 88172645463325252ull;

static double
unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static int
run(double *a, double *b, uint64_t seed, struct ht_compare *c)
{
	memset(c, 0, sizeof(*c));
	c->metric = "cpu_time";
	c->rounds = ROUNDS;
	c->seed = seed;
	c->alpha = 0.05;
	c->a = a;
	c->b = b;
	return ht_compare_compute(c);
}

int
main(void)
{
	double a[ROUNDS], b[ROUNDS];
	struct ht_compare c;
	int bad = 0, disagree = 0, computed = 1, k, i;

	plan(5);
	for (k = 0; k < 400; k++) {
		double shift = 1 + 0.04 * unif();

		for (i = 0; i < ROUNDS; i++) {
			a[i] = 1e8 * (1 + 0.05 * unif());
			b[i] = 1e8 * shift * (1 + 0.05 * unif());
		}
		if (run(a, b, (uint64_t)k + 1, &c) != 0) {
			computed = 0;
			break;
		}
		if (c.mw.p < c.alpha && c.lo <= 1 && c.hi >= 1)
			disagree++;
		if ((strcmp(c.verdict, "slower") == 0 && !(c.lo > 1)) ||
		    (strcmp(c.verdict, "faster") == 0 && !(c.hi < 1)) ||
		    (strcmp(c.verdict, "no difference detectable") == 0 &&
			(c.lo > 1 || c.hi < 1) && c.mw.p < c.alpha)) {
			diag("seed %d: %s, p %.4f, %.4f .. %.4f", k + 1,
			    c.verdict, c.mw.p, c.lo, c.hi);
			bad++;
		}
	}
	ok(computed, "400 comparisons computed");
	ok(bad == 0, "every verdict agrees with its interval");
	ok(disagree > 0, "some had p < 0.05 with 1 in the interval (%d)",
	    disagree);
	for (i = 0; i < ROUNDS; i++) {
		a[i] = 1e8 * (1 + 0.05 * unif());
		b[i] = 2e8 * (1 + 0.05 * unif());
	}
	ok(run(a, b, 7, &c) == 0 && strcmp(c.verdict, "slower") == 0,
	    "twice the time: slower");
	ok(c.lo <= 2 && c.hi >= 2, "its interval %.3f .. %.3f holds 2", c.lo,
	    c.hi);
	return 0;
}
