/*
 * Loaded by t/target/ctl-target through a pointer to the libc's dlopen, so
 * that the agent's dlopen hook never sees it: only the agent thread's watch
 * of the loader's counters can patch its malloc slot.  Its one site makes
 * blocks of 5555 bytes, a size no other site of the fixture uses.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fixture.h"

uint64_t ctl_late_alloc(size_t n);

static void *kept[4096];
static size_t nkept;

FX_NOINLINE uint64_t
ctl_late_alloc(size_t n)
{
	uint64_t sum = 0;
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(5555); /* SITE ctl_late_alloc */
		if (p == NULL)
			return 0;
		fx_fill(p, 5555, i, &sum);
		if (nkept < sizeof(kept) / sizeof(kept[0]))
			kept[nkept++] = p;
	}
	return sum;
}
