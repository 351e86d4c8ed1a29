/*
 * Helpers shared by the fixture programs of the integration tests.
 *
 * FX_NOINLINE keeps an allocating function a function of its own, under its
 * own name: at -O2 GCC would otherwise inline it, or clone it under a name
 * like "keep_small.constprop.0", and the stack the tests expect would not
 * exist.  fx_keep() lets a pointer escape, so that the compiler may not
 * remove a malloc/free pair whose memory it can see is never read.
 * fx_fill() writes a pattern (never zeroes: GCC turns malloc plus a zeroing
 * memset into calloc) and folds it into the checksum each fixture prints, so
 * a test can see that heaptool did not change what the program computed.
 *
 * Allocation lines carry a marker comment "SITE name" that the tests find
 * with grep; keep each allocation call on the line of its marker.
 */
#ifndef HT_FIXTURE_H
#define HT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define FX_NOINLINE __attribute__((noipa))
#else
#define FX_NOINLINE __attribute__((noinline))
#endif

/* The -O0 and -O2 builds must really differ: the Makefile passes
 * FX_WANT_O0 or FX_WANT_O2, and a build whose flags were overridden fails
 * here rather than testing the wrong thing. */
#if defined(FX_WANT_O0) && defined(__OPTIMIZE__)
#error "this fixture must be built with -O0"
#endif
#if defined(FX_WANT_O2) && !defined(__OPTIMIZE__)
#error "this fixture must be built with optimization"
#endif

#ifdef __cplusplus
extern "C" {
#endif

static void *volatile fx_sink __attribute__((unused));

static inline void
fx_keep(void *p)
{
	fx_sink = p;
}

/* FNV-1a style mixing of a 64-bit value into the running checksum. */
static inline uint64_t
fx_mix(uint64_t sum, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++) {
		sum ^= (v >> (i * 8)) & 0xff;
		sum *= 0x100000001b3ULL;
	}
	return sum;
}

/* Fill n bytes at p with a pattern derived from seed (never zero bytes),
 * read them back and mix them into *sum.  p escapes. */
static inline void
fx_fill(void *p, size_t n, uint64_t seed, uint64_t *sum)
{
	volatile unsigned char *b = (volatile unsigned char *)p;
	uint64_t acc = 0;
	size_t i;

	fx_keep(p);
	memset(p, (int)(seed % 255) + 1, n);
	for (i = 0; i < n; i += 64)
		b[i] = (unsigned char)(((seed + i) * 31 % 255) + 1);
	for (i = 0; i < n; i += 64)
		acc += b[i];
	if (n > 0)
		acc += b[n - 1];
	*sum = fx_mix(*sum, acc + n);
}

#ifdef __cplusplus
}
#endif

#endif
