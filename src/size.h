/*
 * Sizes and durations as users type and read them.
 *
 * Sizes are binary: a bare number is bytes; K, KB, KiB all mean 1024, and so on
 * for M, G, T (case-insensitive).  Durations take ms, s, m and h.  Both parsers
 * reject junk, negative numbers, empty strings and overflow.  Libc only, no
 * allocation: shared by the agent and the CLI.
 */
#ifndef HT_SIZE_H
#define HT_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parse s as a size.  Returns 0 and stores the byte count, or -1 (errno EINVAL
 * or ERANGE) leaving *out untouched. */
int ht_size_parse(const char *s, uint64_t *out);

/* Parse s as a duration ("500ms", "10s", "5m", "1h"; a bare number is
 * seconds).  Returns 0 and stores milliseconds, or -1 (errno EINVAL/ERANGE). */
int ht_duration_parse(const char *s, uint64_t *ms);

/* Format a byte count for people: below 1024 the exact count ("512 B"),
 * otherwise in the largest binary unit (KiB ... EiB) that keeps the value at
 * least 1, with three significant digits rounded half up: "1.50 KiB",
 * "12.0 MiB", "512 KiB", "3.25 GiB" (1000 to 1023 keep four digits; a value
 * that rounds to 1024 moves up: "1.00 MiB").  Writes at most len bytes (NUL
 * included) into buf and returns buf. */
char *ht_size_format(uint64_t bytes, char *buf, size_t len);

#endif
