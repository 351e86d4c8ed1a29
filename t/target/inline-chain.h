/*
 * The always_inline chains of t/target/inline-chain.c, included by both of
 * its files: under -flto their abstract instances live in the units of
 * each file's early debug information, and every inlined instance names
 * its abstract origin in another unit.
 *
 * Each chain is three levels deep: icN_3 allocates (the allocation call on
 * the line of its "SITE icN_3" marker), icN_2 calls icN_3, icN_1 calls
 * icN_2; each call on the line of its marker "CALL caller>callee".  Work
 * after each call keeps it from becoming a tail call.
 */
#ifndef HT_INLINE_CHAIN_H
#define HT_INLINE_CHAIN_H

#include <stdlib.h>

#include "fixture.h"

#define IC_INLINE static inline __attribute__((always_inline))

/* Sizes come through a volatile so that no call is specialized on them. */
extern volatile size_t ic_one;
extern uint64_t ic_sum;

IC_INLINE void *
ic1_3(size_t n)
{
	void *p = malloc(n * ic_one); /* SITE ic1_3 */

	if (p == NULL)
		exit(1);
	fx_fill(p, n, n, &ic_sum);
	return p;
}

IC_INLINE void *
ic1_2(size_t n)
{
	void *p = ic1_3(n + 1); /* CALL ic1_2>ic1_3 */

	ic_sum += (uintptr_t)p & 1;
	return p;
}

IC_INLINE void *
ic1_1(size_t n)
{
	void *p = ic1_2(n + 2); /* CALL ic1_1>ic1_2 */

	ic_sum += (uintptr_t)p & 3;
	return p;
}

IC_INLINE void *
ic2_3(size_t n)
{
	void *p = calloc(n * ic_one, 2); /* SITE ic2_3 */

	if (p == NULL)
		exit(1);
	fx_fill(p, 2 * n, n, &ic_sum);
	return p;
}

IC_INLINE void *
ic2_2(size_t n)
{
	void *p = ic2_3(n + 3); /* CALL ic2_2>ic2_3 */

	ic_sum += (uintptr_t)p & 7;
	return p;
}

IC_INLINE void *
ic2_1(size_t n)
{
	void *p = ic2_2(n + 4); /* CALL ic2_1>ic2_2 */

	ic_sum += (uintptr_t)p & 15;
	return p;
}

void *ic_site_b(size_t);
void *ic_site_c(size_t);

#endif
