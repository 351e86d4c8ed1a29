/*
 * libdlfix.so: a library that alloc-sites dlopen()s after start.  Built with
 * -O2 -fomit-frame-pointer -fPIC, so that its site is reached only through a
 * GOT slot of a module loaded late and unwound only with its CFI.
 *
 * dlfix_keep(n) keeps n blocks of 77 bytes (site dlfix_keep: 77 n bytes, n
 * objects) and returns a checksum of what it wrote.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

uint64_t dlfix_keep(size_t);

static void *blocks[64];
static volatile size_t one = 1;

FX_NOINLINE __attribute__((visibility("default"))) uint64_t
dlfix_keep(size_t n)
{
	uint64_t sum = 0;
	size_t i;
	void *p;

	for (i = 0; i < n && i < 64; i++) {
		p = malloc(77 * one); /* SITE dlfix_keep */
		if (p == NULL) {
			fprintf(stderr, "libdlfix: out of memory\n");
			exit(1);
		}
		blocks[i] = p;
		fx_fill(p, 77, i, &sum);
	}
	return sum;
}
