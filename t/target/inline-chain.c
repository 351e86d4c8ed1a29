/*
 * Fixture of t0034-inline-chain: allocations at the end of always_inline
 * chains of depth 3 (t/target/inline-chain.h), built -O2 -g
 * (inline-chain-O2) and -flto -O2 -g (inline-chain-lto), and the alias names
 * of libfxalias.so (t/target/fxalias.c), dlopen'ed from this executable's
 * directory.  Sites (each allocation call on the line of its marker "SITE
 * name", each call of a stack on the line of its marker "CALL
 * caller>callee"):
 *
 *   innermost  stack                                               allocated
 *   ic1_3      ic1_3 <- ic1_2 <- ic1_1 <- ic_site_a <- main        5 x 103
 *   ic2_3      ic2_3 <- ic2_2 <- ic2_1 <- ic_site_b <- main        4 x 2 x 207
 *              (ic_site_b in inline-chain2.c: another unit)
 *   ic1_3      ic1_3 <- ic1_2 <- ic_site_c <- main                 3 x 301
 *              (a chain of depth 2 into the same functions)
 *   fx_strdup, fx_start, fx_dup: see fxalias.c.
 *
 * It prints a checksum of what it wrote and exits 0.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inline-chain.h"

volatile size_t ic_one = 1;
uint64_t ic_sum;

static void *kept[64];
static size_t nkept;

static void
keep(void *p)
{
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
	fx_keep(p);
}

FX_NOINLINE void *
ic_site_a(size_t n)
{
	void *p = ic1_1(n); /* CALL ic_site_a>ic1_1 */

	ic_sum++;
	return p;
}

/* libfxalias.so's functions, by the names a caller links against. */
static void
use_aliases(void)
{
	char path[PATH_MAX];
	char *(*dup)(const char *);
	void *(*start)(size_t), *(*dup2)(size_t);
	char *slash;
	ssize_t len;
	void *h;

	len = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (len < 0) {
		fprintf(stderr, "inline-chain: /proc/self/exe: %s\n",
		    strerror(errno));
		exit(1);
	}
	path[len] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash + 1, "libfxalias.so");
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL ||
	    (*(void **)&dup = dlsym(h, "fx_strdup")) == NULL ||
	    (*(void **)&start = dlsym(h, "fx_start")) == NULL ||
	    (*(void **)&dup2 = dlsym(h, "fx_dup")) == NULL) {
		fprintf(stderr, "inline-chain: %s\n", dlerror());
		exit(1);
	}
	keep(dup("inline-chain")); /* CALL use_aliases>fx_strdup */
	keep(start(111));	   /* CALL use_aliases>fx_start */
	keep(dup2(222));	   /* CALL use_aliases>fx_dup */
	/* Never dlclose: the module must still be mapped at exit. */
}

int
main(void)
{
	int i;

	for (i = 0; i < 5; i++)
		keep(ic_site_a(100)); /* CALL main>ic_site_a */
	for (i = 0; i < 4; i++)
		keep(ic_site_b(200)); /* CALL main>ic_site_b */
	for (i = 0; i < 3; i++)
		keep(ic_site_c(298)); /* CALL main>ic_site_c */
	use_aliases();		      /* CALL main>use_aliases */
	for (i = 0; i < (int)nkept; i++)
		ic_sum = fx_mix(ic_sum, *(unsigned char *)kept[i]);
	printf("inline-chain: checksum %016llx\n", (unsigned long long)ic_sum);
	return 0;
}
