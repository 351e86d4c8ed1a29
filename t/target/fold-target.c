/*
 * Fixture of t0077-fold: allocations through allocator wrappers, each site
 * a function of its own that keeps what it allocates (built at -O0, so
 * that no call is merged or inlined but where always_inline says):
 *
 *   site        through                                   blocks
 *   site_x      xmalloc                                   10 x 100
 *   site_g      g_malloc0 -> g_malloc                     5 x 200
 *   site_p      my_pool_alloc -> xmalloc                  3 x 300
 *   site_i      xzalloc, inlined (always_inline)          4 x 400
 *   site_two    xmalloc, its two malloc calls (n < 4096,   2 x 60,
 *               n >= 4096): two sites, alike under the     2 x 5000
 *               fold
 *   site_z1,    z_helper, not a wrapper, into which        2 x 700 each
 *   site_z2     xzalloc is inlined: one return address
 *               for both, folded alike
 *
 * xmalloc, g_malloc, g_malloc0 and xzalloc are on heaptool's built-in list
 * of wrappers; my_pool_alloc is not (the test adds it with --fold and the
 * user's file).  t0089 watches it live (argument "wait").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

FX_NOINLINE void *
xmalloc(size_t n)
{
	void *p;

	if (n >= 4096)
		p = malloc(n); /* SITE xmalloc_big */
	else
		p = malloc(n); /* SITE xmalloc_small */
	if (p == NULL)
		abort();
	return p;
}

FX_NOINLINE void *
g_malloc(size_t n)
{
	void *p = malloc(n); /* SITE g_malloc */

	if (p == NULL)
		abort();
	return p;
}

FX_NOINLINE void *
g_malloc0(size_t n)
{
	void *p = g_malloc(n); /* SITE g_malloc0 */

	memset(p, 0, n);
	return p;
}

FX_NOINLINE void *
my_pool_alloc(size_t n)
{
	return xmalloc(n); /* SITE my_pool_alloc */
}

static inline __attribute__((always_inline)) void *
xzalloc(size_t n)
{
	void *p = calloc(1, n); /* SITE xzalloc */

	if (p == NULL)
		abort();
	return p;
}

static void *kept[64];
static int nkept;

static void
keep(void *p)
{
	kept[nkept++] = p;
	fx_keep(p);
}

FX_NOINLINE void
site_x(void)
{
	for (int i = 0; i < 10; i++)
		keep(xmalloc(100)); /* SITE site_x */
}

FX_NOINLINE void
site_g(void)
{
	for (int i = 0; i < 5; i++)
		keep(g_malloc0(200)); /* SITE site_g */
}

FX_NOINLINE void
site_p(void)
{
	for (int i = 0; i < 3; i++)
		keep(my_pool_alloc(300)); /* SITE site_p */
}

FX_NOINLINE void
site_i(void)
{
	for (int i = 0; i < 4; i++)
		keep(xzalloc(400)); /* SITE site_i */
}

FX_NOINLINE void
site_two(void)
{
	for (int i = 0; i < 4; i++)
		keep(xmalloc(i % 2 ? 60 : 5000)); /* SITE site_two */
}

/* Not a wrapper: its frame is the sites' first shown, below site_z1's
 * and site_z2's. */
FX_NOINLINE void *
z_helper(size_t n)
{
	return xzalloc(n);
}

FX_NOINLINE void
site_z1(void)
{
	for (int i = 0; i < 2; i++)
		keep(z_helper(700)); /* SITE site_z1 */
}

FX_NOINLINE void
site_z2(void)
{
	for (int i = 0; i < 2; i++)
		keep(z_helper(700)); /* SITE site_z2 */
}

/* With "wait" (t0089, live views): after "done N", it says "ready" and
 * keeps its blocks until its stdin closes. */
int
main(int argc, char **argv)
{
	site_x();
	site_g();
	site_p();
	site_i();
	site_two();
	site_z1();
	site_z2();
	printf("done %d\n", nkept);
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		printf("ready\n");
		fflush(stdout);
		while (getchar() != EOF)
			;
	}
	return 0;
}
