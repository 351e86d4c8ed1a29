/* jemalloc's heap profile, parsed (heapv2.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "heapv2.h"

/* A position in the text, never past end. */
struct cursor {
	const char *p;
	const char *end;
};

static int
at_eol(const struct cursor *c)
{
	return c->p >= c->end || *c->p == '\n';
}

static void
skip_line(struct cursor *c)
{
	while (c->p < c->end && *c->p != '\n')
		c->p++;
	if (c->p < c->end)
		c->p++;
}

static void
skip_blanks(struct cursor *c)
{
	while (c->p < c->end && *c->p == ' ')
		c->p++;
}

/* A decimal number; returns 0, or -1 (none, or beyond 2^64 - 1). */
static int
get_dec(struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
		c->p++;
		n++;
	}
	*v = x;
	return n > 0 ? 0 : -1;
}

/* "0x" and hex digits: an address. */
static int
get_hex(struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	if (c->end - c->p < 2 || c->p[0] != '0' || c->p[1] != 'x')
		return -1;
	c->p += 2;
	while (c->p < c->end) {
		char ch = *c->p;
		unsigned d;

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			break;
		if (n == 16)
			return -1;
		x = x << 4 | d;
		c->p++;
		n++;
	}
	*v = x;
	return n > 0 ? 0 : -1;
}

static int
expect(struct cursor *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return -1;
	c->p += n;
	return 0;
}

/* "  t*: curobjs: curbytes [accumobjs: accumbytes]" */
static int
get_counts(struct cursor *c, uint64_t v[4])
{
	skip_blanks(c);
	if (expect(c, "t*:") != 0)
		return -1;
	skip_blanks(c);
	if (get_dec(c, &v[0]) != 0 || expect(c, ":") != 0)
		return -1;
	skip_blanks(c);
	if (get_dec(c, &v[1]) != 0)
		return -1;
	skip_blanks(c);
	if (expect(c, "[") != 0 || get_dec(c, &v[2]) != 0 ||
	    expect(c, ":") != 0)
		return -1;
	skip_blanks(c);
	if (get_dec(c, &v[3]) != 0 || expect(c, "]") != 0)
		return -1;
	return 0;
}

int
ht_heapv2_parse(const char *buf, size_t len, uint64_t *rate,
    ht_heapv2_stack_fn each, void *ctx)
{
	uintptr_t frames[HT_HEAPV2_FRAMES];
	struct cursor c = { buf, buf + len };
	uint64_t v[4], a;
	const char *line;
	uint32_t n;

	if (expect(&c, "heap_v2/") != 0 || get_dec(&c, rate) != 0 || *rate == 0)
		return -1;
	skip_line(&c);
	while (c.p < c.end) {
		if (expect(&c, "MAPPED_LIBRARIES:") == 0)
			break;
		if (*c.p != '@') {
			skip_line(&c);
			continue;
		}
		c.p++;
		n = 0;
		for (;;) {
			skip_blanks(&c);
			if (at_eol(&c) || get_hex(&c, &a) != 0)
				break;
			if (n < HT_HEAPV2_FRAMES)
				frames[n++] = (uintptr_t)a;
		}
		skip_line(&c);
		/* The counts are on the next line; a stack without them is
		 * skipped, and that line read again for what it is. */
		line = c.p;
		if (get_counts(&c, v) != 0) {
			c.p = line;
			continue;
		}
		skip_line(&c);
		if (n > 0)
			each(ctx, frames, n, v);
	}
	return 0;
}
