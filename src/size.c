/*
 * Sizes and durations as users type and read them.  The parsers are written
 * out by hand rather than with strtoull(3), which accepts leading blanks, a
 * sign and locale-dependent input that a size should not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "size.h"

/*
 * Read a run of decimal digits at *sp into *out and advance *sp past it.
 * Returns 0, or -1 with errno EINVAL (no digit) or ERANGE (overflow).
 */
static int
parse_digits(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;
	unsigned d;

	if (*s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10) {
			/* Keep consuming so that "99999999999999999999x"
			 * is still junk (EINVAL), not merely too big. */
			while (*s >= '0' && *s <= '9')
				s++;
			*sp = s;
			errno = ERANGE;
			return -1;
		}
		v = v * 10 + d;
	}
	*sp = s;
	*out = v;
	return 0;
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* The shift of a unit letter (k, m, g, t, any case), or -1. */
static int
unit_shift(int c)
{
	switch (lower(c)) {
	case 'k':
		return 10;
	case 'm':
		return 20;
	case 'g':
		return 30;
	case 't':
		return 40;
	default:
		return -1;
	}
}

int
ht_size_parse(const char *s, uint64_t *out)
{
	uint64_t v;
	int shift = 0, range = 0;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (parse_digits(&s, &v) == -1) {
		if (errno != ERANGE)
			return -1;
		range = 1;
	}
	/* Suffixes: none, B, K, KB, KiB (and M, G, T), any case. */
	if (*s != '\0') {
		if (lower(*s) == 'b')
			s++;
		else if ((shift = unit_shift(*s)) != -1) {
			s++;
			if (lower(s[0]) == 'i' && lower(s[1]) == 'b')
				s += 2;
			else if (lower(s[0]) == 'b')
				s++;
		} else {
			errno = EINVAL;
			return -1;
		}
	}
	if (*s != '\0') {
		errno = EINVAL;
		return -1;
	}
	if (range || (shift > 0 && v > UINT64_MAX >> shift)) {
		errno = ERANGE;
		return -1;
	}
	*out = v << shift;
	return 0;
}

int
ht_duration_parse(const char *s, uint64_t *ms)
{
	uint64_t v, mul;
	int range = 0;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (parse_digits(&s, &v) == -1) {
		if (errno != ERANGE)
			return -1;
		range = 1;
	}
	/* Lower case only: "5M" reads too much like a size to guess. */
	if (s[0] == '\0' || (s[0] == 's' && s[1] == '\0'))
		mul = 1000;
	else if (s[0] == 'm' && s[1] == 's' && s[2] == '\0')
		mul = 1;
	else if (s[0] == 'm' && s[1] == '\0')
		mul = 60 * 1000;
	else if (s[0] == 'h' && s[1] == '\0')
		mul = 3600 * 1000;
	else {
		errno = EINVAL;
		return -1;
	}
	if (range || v > UINT64_MAX / mul) {
		errno = ERANGE;
		return -1;
	}
	*ms = v * mul;
	return 0;
}

/*
 * Round bytes / 2^shift * 10^dec half up, in 128-bit arithmetic so that
 * every uint64_t is exact (a double would not be above 2^53).
 */
static uint64_t
scaled(uint64_t bytes, int shift, int dec)
{
	unsigned __int128 v = bytes;
	int i;

	for (i = 0; i < dec; i++)
		v *= 10;
	v += ((unsigned __int128)1 << shift) / 2;
	return (uint64_t)(v >> shift);
}

char *
ht_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
		"PiB", "EiB" };
	uint64_t q, ip;
	int u, dec;

	if (len == 0)
		return buf;
	if (bytes < 1024) {
		snprintf(buf, len, "%u B", (unsigned)bytes);
		return buf;
	}
	for (u = 1; u < 6 && bytes >> (10 * (u + 1)) != 0; u++)
		;
	/*
	 * Three significant digits: two decimals below 10, one below 100,
	 * none from 100 up (so 1000 to 1023 print with four digits).  When
	 * rounding carries into another digit, drop a decimal; when it
	 * reaches 1024, move to the next unit ("1023.6 KiB" is "1.00 MiB").
	 */
	ip = bytes >> (10 * u);
	dec = ip < 10 ? 2 : ip < 100 ? 1 : 0;
	for (;;) {
		q = scaled(bytes, 10 * u, dec);
		if (dec == 2 && q >= 1000)
			dec = 1;
		else if (dec == 1 && q >= 1000)
			dec = 0;
		else if (dec == 0 && q >= 1024 && u < 6) {
			u++;
			dec = 2;
		} else
			break;
	}
	if (dec == 2)
		snprintf(buf, len, "%u.%02u %s", (unsigned)(q / 100),
		    (unsigned)(q % 100), units[u]);
	else if (dec == 1)
		snprintf(buf, len, "%u.%u %s", (unsigned)(q / 10),
		    (unsigned)(q % 10), units[u]);
	else
		snprintf(buf, len, "%llu %s", (unsigned long long)q, units[u]);
	return buf;
}
