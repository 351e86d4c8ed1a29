/*
 * What every part of the heaptool command shares: how it fails.
 *
 * Only cli/ prints and exits.  Every error is one line on stderr,
 * "heaptool: <what>: <why>; <what to do>", and the exit status says what
 * kind of failure it was: 0 success, 1 runtime failure, 2 usage error.
 * The commands are in cmd.h.
 */
#ifndef HT_CLI_H
#define HT_CLI_H

#define HT_EXIT_OK    0
#define HT_EXIT_FAIL  1
#define HT_EXIT_USAGE 2

/* Print "heaptool: " and the formatted message and a newline on stderr,
 * after flushing stdout so that the two keep their order on a terminal. */
void ht_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: print as ht_warn and return HT_EXIT_USAGE, so that callers
 * can write "return ht_usage(...)". */
int ht_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The hint printed after a size that does not parse. */
#define HT_SIZE_HINT "use e.g. 4096, 64K, 512KiB, 1M"

#endif
