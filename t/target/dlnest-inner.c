/* libdlnest-inner.so: opened by libdlnest-outer.so's constructor. */
#include <stdlib.h>

#include "fixture.h"

static void *kept;

__attribute__((constructor)) static void
inner_init(void)
{
	kept = malloc(64);
}

__attribute__((destructor)) static void
inner_fini(void)
{
	free(kept);
}
