/*
 * The second unit of t/target/inline-chain.c: sites whose inlined chains
 * come from the same header as the first unit's.
 */
#include "inline-chain.h"

FX_NOINLINE void *
ic_site_b(size_t n)
{
	void *p = ic2_1(n); /* CALL ic_site_b>ic2_1 */

	ic_sum++;
	return p;
}

FX_NOINLINE void *
ic_site_c(size_t n)
{
	void *p = ic1_2(n); /* CALL ic_site_c>ic1_2 */

	ic_sum += 2;
	return p;
}
