/*
 * libfxalias.so: functions known by several names at one address, as
 * glibc's are (hidden_def, weak_alias, versioned_symbol), for the
 * alias-name rule of heaptool's symbolizer (t0034-inline-chain).  Among the
 * names at one address a report shows global (or weak) before local, then
 * one without a leading underscore, then the shortest:
 *
 *   site       DWARF name         symbols at its address         shown
 *   fx_strdup  __GI___fx_strdup   __GI___fx_strdup (local),      fx_strdup
 *                                 __fx_strdup (global),
 *                                 fx_strdup (weak)
 *   fx_start   fx_start_impl      fx_start_impl,                 fx_start
 *                                 fx_start_alias_1/2 (local),
 *                                 fx_start@FX_1, fx_start@@FX_2
 *   fx_dup     fx_dup_with_a_long_name                           fx_dup
 *                                 fx_dup_with_a_long_name,
 *                                 fx_dup (both global)
 *
 * Each allocates once per call, on the line of its "SITE" marker.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* glibc's hidden_proto: calls inside the library bind to an internal,
 * hidden name (so DWARF's linkage name is that one). */
extern char *__fx_strdup(const char *) __asm__("__GI___fx_strdup")
    __attribute__((visibility("hidden")));

FX_NOINLINE char *
__fx_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n); /* SITE fx_strdup */

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}
/* hidden_def and weak_alias. */
extern __typeof(__fx_strdup) __fx_strdup_global __asm__("__fx_strdup")
    __attribute__((alias("__GI___fx_strdup")));
extern __typeof(__fx_strdup) fx_strdup
    __attribute__((weak, alias("__GI___fx_strdup")));

void *fx_start_impl(size_t) __attribute__((visibility("hidden")));

FX_NOINLINE void *
fx_start_impl(size_t n)
{
	void *p = malloc(n); /* SITE fx_start */

	fx_keep(p);
	return p;
}
/* versioned_symbol and compat_symbol: two versions of one name. */
extern __typeof(fx_start_impl) fx_start_alias_1
    __attribute__((alias("fx_start_impl")));
extern __typeof(fx_start_impl) fx_start_alias_2
    __attribute__((alias("fx_start_impl")));
__asm__(".symver fx_start_alias_1, fx_start@FX_1");
__asm__(".symver fx_start_alias_2, fx_start@@FX_2");

FX_NOINLINE void *
fx_dup_with_a_long_name(size_t n)
{
	void *p = malloc(n); /* SITE fx_dup */

	fx_keep(p);
	return p;
}
extern __typeof(fx_dup_with_a_long_name) fx_dup
    __attribute__((alias("fx_dup_with_a_long_name")));
