/*
 * A small TAP producer for heaptool's C tests: plan, ok, is_int, is_string,
 * diag, skip_all, bail.  Output goes to stdout; the exit status is nonzero if
 * any test failed or the plan was not met.  Uses the libc allocator freely
 * (tests are not agent code).
 */
#ifndef HT_TAP_BASIC_H
#define HT_TAP_BASIC_H

#include <stdint.h>

void	plan(int n);			/* 0: lazy plan, printed at exit */
int	ok(int cond, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	is_int(long long want, long long got, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	is_uint(unsigned long long want, unsigned long long got,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int	is_string(const char *want, const char *got, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	skip_all(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
