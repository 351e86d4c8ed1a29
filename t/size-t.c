/* Tests for src/size.c: size and duration parsing, size formatting. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "basic.h"
#include "size.h"

static const struct {
	const char *in;
	uint64_t want;
} sizes_ok[] = {
	{ "0", 0 },
	{ "4096", 4096 },
	{ "4096B", 4096 },
	{ "64K", 64ULL << 10 },
	{ "64k", 64ULL << 10 },
	{ "64KB", 64ULL << 10 },
	{ "64kb", 64ULL << 10 },
	{ "64KiB", 64ULL << 10 },
	{ "64kib", 64ULL << 10 },
	{ "512KiB", 512ULL << 10 },
	{ "1M", 1ULL << 20 },
	{ "3MB", 3ULL << 20 },
	{ "2GiB", 2ULL << 30 },
	{ "1T", 1ULL << 40 },
	{ "1tib", 1ULL << 40 },
	{ "007", 7 },
	{ "18446744073709551615", UINT64_MAX },
	{ "16777215T", 16777215ULL << 40 },
};

static const struct {
	const char *in;
	int err;
} sizes_bad[] = {
	{ "", EINVAL },
	{ "-1", EINVAL },
	{ "+1", EINVAL },
	{ " 1", EINVAL },
	{ "1 ", EINVAL },
	{ "1 K", EINVAL },
	{ "1.5K", EINVAL },
	{ "12Q", EINVAL },
	{ "K", EINVAL },
	{ "KiB", EINVAL },
	{ "1Ki", EINVAL },
	{ "1KiBB", EINVAL },
	{ "1iB", EINVAL },
	{ "1P", EINVAL },
	{ "0x10", EINVAL },
	{ "18446744073709551616", ERANGE },
	{ "99999999999999999999999", ERANGE },
	{ "99999999999999999999999x", EINVAL },
	{ "16777216T", ERANGE },
	{ "17179869184G", ERANGE },
};

static const struct {
	const char *in;
	uint64_t want;
} durs_ok[] = {
	{ "0", 0 },
	{ "10", 10000 },
	{ "500ms", 500 },
	{ "10s", 10000 },
	{ "5m", 300000 },
	{ "1h", 3600000 },
	{ "0ms", 0 },
	{ "5124095576030h", 5124095576030ULL * 3600000 },
};

static const struct {
	const char *in;
	int err;
} durs_bad[] = {
	{ "", EINVAL },
	{ "ms", EINVAL },
	{ "-5s", EINVAL },
	{ "1.5s", EINVAL },
	{ "10 s", EINVAL },
	{ "5M", EINVAL },
	{ "5d", EINVAL },
	{ "5mss", EINVAL },
	{ "5us", EINVAL },
	{ "18446744073709551615", ERANGE },
	{ "18446744073709551615ms", 0 },
	{ "18446744073709551616ms", ERANGE },
	{ "5124095576031h", ERANGE },
};

static const struct {
	uint64_t in;
	const char *want;
} fmts[] = {
	{ 0, "0 B" },
	{ 1, "1 B" },
	{ 512, "512 B" },
	{ 1023, "1023 B" },
	{ 1024, "1.00 KiB" },
	{ 1536, "1.50 KiB" },
	{ 10 * 1024 - 5, "10.0 KiB" }, /* 9.995 carries a digit */
	{ 12ULL << 20, "12.0 MiB" },
	{ 512ULL << 10, "512 KiB" },
	{ (3ULL << 30) + (1ULL << 28), "3.25 GiB" },
	{ 1000ULL << 10, "1000 KiB" },
	{ (1ULL << 20) - 1, "1.00 MiB" },
	{ (1ULL << 20) - 600, "1023 KiB" },
	{ 99 * 1024 + 1000, "100 KiB" }, /* 99.98 carries a digit */
	{ 10 * 1024 - 6, "9.99 KiB" },
	{ 1ULL << 40, "1.00 TiB" },
	{ 1ULL << 60, "1.00 EiB" },
	{ UINT64_MAX, "16.0 EiB" },
};

int
main(void)
{
	char buf[64];
	uint64_t v;
	size_t i;
	int rc;

	plan(0);

	for (i = 0; i < sizeof(sizes_ok) / sizeof(sizes_ok[0]); i++) {
		v = 12345;
		rc = ht_size_parse(sizes_ok[i].in, &v);
		is_int(0, rc, "size \"%s\" parses", sizes_ok[i].in);
		is_uint(sizes_ok[i].want, v, "size \"%s\" value",
		    sizes_ok[i].in);
	}
	for (i = 0; i < sizeof(sizes_bad) / sizeof(sizes_bad[0]); i++) {
		v = 12345;
		errno = 0;
		rc = ht_size_parse(sizes_bad[i].in, &v);
		is_int(-1, rc, "size \"%s\" rejected", sizes_bad[i].in);
		is_int(sizes_bad[i].err, errno, "size \"%s\" errno %s",
		    sizes_bad[i].in,
		    sizes_bad[i].err == ERANGE ? "ERANGE" : "EINVAL");
		is_uint(12345, v, "size \"%s\" leaves output alone",
		    sizes_bad[i].in);
	}
	errno = 0;
	is_int(-1, ht_size_parse(NULL, &v), "size NULL rejected");

	for (i = 0; i < sizeof(durs_ok) / sizeof(durs_ok[0]); i++) {
		v = 12345;
		rc = ht_duration_parse(durs_ok[i].in, &v);
		is_int(0, rc, "duration \"%s\" parses", durs_ok[i].in);
		is_uint(durs_ok[i].want, v, "duration \"%s\" value",
		    durs_ok[i].in);
	}
	for (i = 0; i < sizeof(durs_bad) / sizeof(durs_bad[0]); i++) {
		v = 12345;
		errno = 0;
		rc = ht_duration_parse(durs_bad[i].in, &v);
		if (durs_bad[i].err == 0) {
			/* The largest count that still fits. */
			is_int(0, rc, "duration \"%s\" parses", durs_bad[i].in);
			is_uint(UINT64_MAX, v, "duration \"%s\" value",
			    durs_bad[i].in);
			continue;
		}
		is_int(-1, rc, "duration \"%s\" rejected", durs_bad[i].in);
		is_int(durs_bad[i].err, errno, "duration \"%s\" errno %s",
		    durs_bad[i].in,
		    durs_bad[i].err == ERANGE ? "ERANGE" : "EINVAL");
		is_uint(12345, v, "duration \"%s\" leaves output alone",
		    durs_bad[i].in);
	}

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		is_string(fmts[i].want,
		    ht_size_format(fmts[i].in, buf, sizeof(buf)), "format %llu",
		    (unsigned long long)fmts[i].in);

	/* Truncation: never more than len bytes, always terminated. */
	memset(buf, 'x', sizeof(buf));
	ht_size_format(12ULL << 20, buf, 4);
	is_string("12.", buf, "format truncates to len");
	is_int('x', buf[4], "format writes no further than len");
	buf[0] = 'x';
	ht_size_format(1, buf, 0);
	is_int('x', buf[0], "format with len 0 writes nothing");
	return 0;
}
