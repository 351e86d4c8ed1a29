/*
 * The parser of jemalloc's heap profile (agent/heapv2.c): a dump as
 * jemalloc 5.3.0 writes it (prof_data.c: the header, the threads' lines,
 * each stack and its threads' counts, the mapped libraries) gives its rate
 * and its stacks; stacks cut at HT_HEAPV2_FRAMES; malformed lines (a
 * number past 2^64 - 1, an address of 17 digits, a stack without counts)
 * skip their stack only; and no prefix of a dump, nor a run of random
 * bytes after a valid header, reads outside the buffer (each input is
 * copied to a mapping that ends at a page without access) or calls back
 * with more than it holds.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "heapv2.h"

struct seen {
	int n;
	uint32_t nframes[8];
	uintptr_t first[8];
	uintptr_t last[8];
	uint64_t v[8][4];
};

static void
record(void *ctx, const uintptr_t *frames, uint32_t n, const uint64_t v[4])
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->nframes[s->n] = n;
		s->first[s->n] = frames[0];
		s->last[s->n] = frames[n - 1];
		memcpy(s->v[s->n], v, sizeof(s->v[0]));
	}
	s->n++;
}

static const char dump[] = "heap_v2/524288\n"
			   "  t*: 28106: 56637512 [0: 0]\n"
			   "  t0: 0: 0 [0: 0]\n"
			   "  t3: 352: 16777344 [0: 0] worker\n"
			   "@ 0x401234 0x7f0000001000 0x7f0000002000\n"
			   "  t*: 13: 6688 [20: 9000]\n"
			   "  t3: 12: 6496 [0: 0]\n"
			   "  t99: 1: 192 [0: 0]\n"
			   "@ 0xabc\n"
			   "  t*: 1: 4096 [1: 4096]\n"
			   "\n"
			   "MAPPED_LIBRARIES:\n"
			   "@ 0x1\n"
			   "  t*: 5: 5 [5: 5]\n";

/* A copy of buf[0..len) that ends where a page without access begins, so
 * that a read past its end faults. */
static char *
fenced(const char *buf, size_t len, char **base, size_t *maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t n = (len + pg - 1) / pg * pg + pg;
	char *m;

	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (m == MAP_FAILED)
		bail("mmap");
	if (mprotect(m + n - pg, pg, PROT_NONE) != 0)
		bail("mprotect");
	memcpy(m + n - pg - len, buf, len);
	*base = m;
	*maplen = n;
	return m + n - pg - len;
}

static int
parse(const char *buf, size_t len, uint64_t *rate, struct seen *s)
{
	char *base, *p;
	size_t n;
	int rc;

	memset(s, 0, sizeof(*s));
	p = fenced(buf, len, &base, &n);
	rc = ht_heapv2_parse(p, len, rate, record, s);
	munmap(base, n);
	return rc;
}

static void
test_dump(void)
{
	struct seen s;
	uint64_t rate = 0;

	is_int(0, parse(dump, strlen(dump), &rate, &s), "a dump parses");
	is_uint(524288, rate, "its rate");
	is_int(2, s.n,
	    "two stacks; the threads' lines and the libraries' "
	    "are skipped");
	ok(s.nframes[0] == 3 && s.first[0] == 0x401234 &&
		s.last[0] == 0x7f0000002000,
	    "the first stack's frames, in order");
	ok(s.v[0][0] == 13 && s.v[0][1] == 6688 && s.v[0][2] == 20 &&
		s.v[0][3] == 9000,
	    "its counts from its t* line, not its threads'");
	ok(s.nframes[1] == 1 && s.first[1] == 0xabc && s.v[1][1] == 4096,
	    "the second stack");
}

static void
test_refused(void)
{
	struct seen s;
	uint64_t rate;

	is_int(-1, parse("heap_v1/512\n", 12, &rate, &s),
	    "another format is refused");
	is_int(-1, parse("heap_v2/0\n", 10, &rate, &s), "rate 0 is refused");
	is_int(-1, parse("heap_v2/\n", 9, &rate, &s), "no rate is refused");
	is_int(-1, parse("heap_v2/99999999999999999999\n", 29, &rate, &s),
	    "a rate past 2^64 - 1 is refused");
	is_int(-1, parse("", 0, &rate, &s), "an empty buffer is refused");
	is_int(0, s.n, "and nothing is called back");
}

static void
test_malformed(void)
{
	static char buf[8192];
	struct seen s;
	uint64_t rate;
	size_t n;
	int i;

	n = (size_t)snprintf(buf, sizeof(buf), "heap_v2/1\n@");
	for (i = 0; i < 130; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " 0x%x", i + 1);
	n +=
	    (size_t)snprintf(buf + n, sizeof(buf) - n, "\n  t*: 1: 8 [0: 0]\n");
	ok(parse(buf, n, &rate, &s) == 0 && s.n == 1 &&
		s.nframes[0] == HT_HEAPV2_FRAMES && s.last[0] == 64,
	    "a stack of 130 frames keeps its first %d", HT_HEAPV2_FRAMES);

	n = (size_t)snprintf(buf, sizeof(buf),
	    "heap_v2/1\n@ 0x1\n  t*: 18446744073709551616: 8 [0: 0]\n"
	    "@ 0x2\n  t*: 1: 8 [0: 0]\n");
	ok(parse(buf, n, &rate, &s) == 0 && s.n == 1 && s.first[0] == 2,
	    "a count past 2^64 - 1 skips its stack only");

	n = (size_t)snprintf(buf, sizeof(buf),
	    "heap_v2/1\n@ 0x1 0x12345678901234567 0x3\n  t*: 1: 8 [0: 0]\n");
	ok(parse(buf, n, &rate, &s) == 0 && s.n == 1 && s.nframes[0] == 1,
	    "an address of 17 digits ends the stack's frames");

	n = (size_t)snprintf(buf, sizeof(buf),
	    "heap_v2/1\n@ 0x1\n@ 0x2\n  t*: 1: 8 [0: 0]\n"
	    "@ 0x3\n  t*: 1: 8 [0: 0]\n");
	ok(parse(buf, n, &rate, &s) == 0 && s.n == 2 && s.first[0] == 2 &&
		s.first[1] == 3,
	    "a stack without its counts is skipped, the next one read");

	n = (size_t)snprintf(buf, sizeof(buf),
	    "heap_v2/1\n@\n  t*: 1: 8 [0: 0]\n@ zz\n  t*: 1: 8 [0: 0]\n");
	ok(parse(buf, n, &rate, &s) == 0 && s.n == 0,
	    "a stack without frames is never called back");
}

static void
test_bounded(void)
{
	static char buf[4096];
	struct seen s;
	uint64_t rate, x = 0x9e3779b97f4a7c15ull;
	size_t len = strlen(dump), i, j, bad = 0;

	for (i = 0; i <= len; i++)
		if (parse(dump, i, &rate, &s) == 0 && s.n > 2)
			bad++;
	is_uint(0, bad,
	    "every prefix of a dump parses within its bytes, with at most its "
	    "stacks");
	memcpy(buf, "heap_v2/7\n", 10);
	for (i = 0; i < 2000; i++) {
		size_t n = 10 + (size_t)(x >> 40) % (sizeof(buf) - 10);

		for (j = 10; j < n; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Mostly the dump's own alphabet. */
			buf[j] = "@ 0x12af:[]*t\n"[(x >> 20) % 14];
			if ((x & 0xff) == 0)
				buf[j] = (char)(x >> 8);
		}
		if (parse(buf, n, &rate, &s) != 0 || rate != 7)
			bad++;
	}
	is_uint(0, bad,
	    "2000 random texts after a header parse within "
	    "their bytes");
}

int
main(void)
{
	plan(0);
	test_dump();
	test_refused();
	test_malformed();
	test_bounded();
	return 0;
}
