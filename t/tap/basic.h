/*
 * A small TAP producer for heaptool's C tests: plan, ok, is_int, is_string,
 * diag, skip_all, bail.  Output goes to stdout; the exit status is nonzero if
 * any test failed or the plan was not met.  Uses the libc allocator freely
 * (tests are not agent code).
 *
 * A test that starts processes registers a cleanup (t/tap/target.c does)
 * and sets a timeout: whichever way the test ends (exit, bail, or the
 * timeout), the cleanups run first, so that nothing it started outlives it.
 */
#ifndef HT_TAP_BASIC_H
#define HT_TAP_BASIC_H

#include <stdint.h>

void plan(int n); /* 0: lazy plan, printed at exit */
int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int is_int(long long want, long long got, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int is_uint(unsigned long long want, unsigned long long got, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
int is_string(const char *want, const char *got, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void
skip_all(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Run fn when the test ends: at exit, in bail and at the timeout, in the
 * order registered, each once.  fn may run in the SIGALRM handler of
 * test_timeout, so it may make async-signal-safe calls only (kill,
 * waitpid, unlink, write).  At most 8 functions. */
void test_cleanup_register(void (*fn)(void));
/* Bail out ("Bail out! timed out after N s"), after the cleanups, if the
 * test still runs in seconds: a hang fails instead of blocking make check.
 * Uses alarm(2) and SIGALRM. */
void test_timeout(unsigned seconds);

/* Make a new private directory name.XXXXXX in $TMPDIR (else /tmp) and put
 * its real path, with no symbolic link in it, in out[PATH_MAX]; or bail.
 * The test removes it. */
void test_tmpdir(const char *name, char *out);

#endif
