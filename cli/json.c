/*
 * The JSON writer (see json.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void
ht_json_init(struct ht_json *j, FILE *fp, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->fp = fp;
	j->pretty = pretty;
	j->empty[0] = 1;
}

int
ht_json_is_c1(const char *s, size_t n)
{
	return n == 2 && (unsigned char)s[0] == 0xc2 &&
	    (unsigned char)s[1] < 0xa0;
}

static void
put_plain(FILE *fp, int c)
{
	putc(c < 0x20 || c == 0x7f ? '?' : c, fp);
}

/* Printable ASCII that put would write as it is: a bit per byte, made
 * once a call (strchr on every byte of millions of names was a fifth of
 * the time of collapsed stacks). */
static int
as_is(const uint64_t plain[4], unsigned char c)
{
	return (plain[c >> 6] >> (c & 63)) & 1;
}

size_t
ht_json_put_text(FILE *fp, const char *s, size_t max,
    void (*put)(FILE *, int c), const char *special)
{
	size_t i, n, len = strlen(s), chars = 0;
	/* 0x20 to 0x7e. */
	uint64_t plain[4] = { 0xffffffff00000000ULL, 0x7fffffffffffffffULL, 0,
		0 };
	unsigned c;

	if (put == NULL)
		put = put_plain;
	for (; special != NULL && *special != '\0'; special++) {
		c = (unsigned char)*special;
		plain[c >> 6] &= ~(1ULL << (c & 63));
	}
	for (i = 0; i < len && chars < max; i += n, chars++) {
		if (as_is(plain, (unsigned char)s[i])) {
			for (n = 1; i + n < len && chars + n < max &&
			     as_is(plain, (unsigned char)s[i + n]);
			     n++)
				continue;
			fwrite(s + i, 1, n, fp);
			chars += n - 1;
			continue;
		}
		if ((n = ht_json_utf8_len(s + i, len - i)) == 0) {
			putc('?', fp);
			n = 1;
		} else if (n > 1 && !ht_json_is_c1(s + i, n))
			fwrite(s + i, 1, n, fp);
		else if (n > 1)
			putc('?', fp);
		else
			put(fp, (unsigned char)s[i]);
	}
	return chars;
}

size_t
ht_json_utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len, i;
	uint32_t cp;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not
	 * UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static void
flush(struct ht_json *j)
{
	if (j->len > 0)
		fwrite(j->buf, 1, j->len, j->fp);
	j->len = 0;
}

static void
out(struct ht_json *j, const void *p, size_t n)
{
	if (n <= sizeof(j->buf) - j->len) {
		memcpy(j->buf + j->len, p, n);
		j->len += n;
		return;
	}
	flush(j);
	if (n > sizeof(j->buf)) {
		fwrite(p, 1, n, j->fp);
		return;
	}
	memcpy(j->buf + j->len, p, n);
	j->len += n;
}

static void
outc(struct ht_json *j, int c)
{
	if (j->len == sizeof(j->buf))
		flush(j);
	j->buf[j->len++] = (char)c;
}

static void
outs(struct ht_json *j, const char *s)
{
	out(j, s, strlen(s));
}

/* A literal: its length is a constant, and so its copy is inlined. */
#define OUTL(j, lit) out((j), (lit), sizeof(lit) - 1)

static void
newline_indent(struct ht_json *j)
{
	static const char spaces[2 * HT_JSON_MAX_DEPTH] = {
		[0 ...(2 * HT_JSON_MAX_DEPTH - 1)] = ' '
	};

	if (!j->pretty)
		return;
	outc(j, '\n');
	out(j, spaces, 2 * (size_t)j->depth);
}

/* Write the escape of byte c, which cannot appear as is in a string. */
static void
write_escape(struct ht_json *j, unsigned char c)
{
	char buf[8];

	switch (c) {
	case '"':
		outs(j, "\\\"");
		break;
	case '\\':
		outs(j, "\\\\");
		break;
	case '\n':
		outs(j, "\\n");
		break;
	case '\r':
		outs(j, "\\r");
		break;
	case '\t':
		outs(j, "\\t");
		break;
	case '\b':
		outs(j, "\\b");
		break;
	case '\f':
		outs(j, "\\f");
		break;
	default:
		/* Controls, and bytes that are not UTF-8: the latter keep
		 * their Latin-1 code point, so that nothing is lost or
		 * invented. */
		snprintf(buf, sizeof(buf), "\\u%04x", c);
		outs(j, buf);
		break;
	}
}

static void
write_string(struct ht_json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, len, run = 0;
	char buf[8];

	outc(j, '"');
	for (i = 0; i < n; i += len) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' &&
		    s[i] != '\\') {
			len = 1;
			continue;
		}
		if (s[i] >= 0x80 &&
		    (len = ht_json_utf8_len((const char *)s + i, n - i)) != 0 &&
		    !ht_json_is_c1((const char *)s + i, len))
			continue;
		if (i > run)
			out(j, s + run, i - run);
		/* A C1 control (U+0080..U+009F) is escaped as the code
		 * point it is, so that JSON on a terminal cannot act. */
		if (s[i] == 0xc2 && i + 1 < n &&
		    ht_json_is_c1((const char *)s + i, 2)) {
			snprintf(buf, sizeof(buf), "\\u%04x", s[i + 1]);
			outs(j, buf);
			len = 2;
		} else {
			write_escape(j, s[i]);
			len = 1;
		}
		run = i + len;
	}
	if (n > run)
		out(j, s + run, n - run);
	outc(j, '"');
}

/* Separator, indentation and key before a value. */
static void
prefix(struct ht_json *j, const char *key)
{
	int first = j->empty[j->depth];

	if (!first)
		outc(j, ',');
	j->empty[j->depth] = 0;
	if (j->line[j->depth]) {
		if (!first)
			outc(j, ' ');
	} else if (j->depth > 0)
		newline_indent(j);
	if (key != NULL) {
		write_string(j, key, strlen(key));
		if (j->pretty || j->line[j->depth])
			OUTL(j, ": ");
		else
			outc(j, ':');
	}
}

static void
open_level(struct ht_json *j, const char *key, int c, int line)
{
	prefix(j, key);
	outc(j, c);
	if (j->depth + 1 < HT_JSON_MAX_DEPTH) {
		j->depth++;
		j->empty[j->depth] = 1;
		j->line[j->depth] = line || j->line[j->depth - 1];
	}
}

static void
close_level(struct ht_json *j, int c)
{
	int was_empty;

	if (j->depth == 0)
		return;
	was_empty = j->empty[j->depth];
	j->depth--;
	if (!was_empty && !j->line[j->depth + 1])
		newline_indent(j);
	outc(j, c);
}

void
ht_json_object_begin(struct ht_json *j, const char *key)
{
	open_level(j, key, '{', 0);
}

void
ht_json_object_line(struct ht_json *j, const char *key)
{
	open_level(j, key, '{', 1);
}

void
ht_json_object_end(struct ht_json *j)
{
	close_level(j, '}');
}

void
ht_json_array_begin(struct ht_json *j, const char *key)
{
	open_level(j, key, '[', 0);
}

void
ht_json_array_end(struct ht_json *j)
{
	close_level(j, ']');
}

void
ht_json_stringn(struct ht_json *j, const char *key, const char *s, size_t n)
{
	prefix(j, key);
	if (s == NULL)
		OUTL(j, "null");
	else
		write_string(j, s, n);
}

void
ht_json_string(struct ht_json *j, const char *key, const char *s)
{
	ht_json_stringn(j, key, s, s != NULL ? strlen(s) : 0);
}

/* The digits of v in base (10 or 16), after prefix pre. */
static void
put_number(struct ht_json *j, const char *pre, uint64_t v, unsigned base)
{
	static const char digits[] = "0123456789abcdef";
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = digits[v % base];
		v /= base;
	} while (v != 0);
	outs(j, pre);
	out(j, buf + i, sizeof(buf) - i);
}

void
ht_json_uint(struct ht_json *j, const char *key, uint64_t v)
{
	prefix(j, key);
	put_number(j, "", v, 10);
}

void
ht_json_hex(struct ht_json *j, const char *key, uint64_t v)
{
	prefix(j, key);
	put_number(j, "\"0x", v, 16);
	outc(j, '"');
}

void
ht_json_int(struct ht_json *j, const char *key, int64_t v)
{
	prefix(j, key);
	if (v < 0)
		put_number(j, "-", -(uint64_t)v, 10);
	else
		put_number(j, "", (uint64_t)v, 10);
}

void
ht_json_double(struct ht_json *j, const char *key, double v)
{
	char buf[64];
	int prec;

	prefix(j, key);
	if (!isfinite(v)) {
		OUTL(j, "null");
		return;
	}
	/* The shortest of %.15g..%.17g that reads back as v: 17 digits
	 * always round-trip a binary64, but turn 0.1 into
	 * 0.10000000000000001.  heaptool never calls setlocale, so the
	 * decimal point is a dot. */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	outs(j, buf);
}

void
ht_json_bool(struct ht_json *j, const char *key, int v)
{
	prefix(j, key);
	if (v)
		OUTL(j, "true");
	else
		OUTL(j, "false");
}

void
ht_json_null(struct ht_json *j, const char *key)
{
	prefix(j, key);
	OUTL(j, "null");
}

char *
ht_json_raw_begin(struct ht_json *j, const char *key, size_t n)
{
	prefix(j, key);
	if (n > sizeof(j->buf) - j->len)
		flush(j);
	return j->buf + j->len;
}

void
ht_json_raw_end(struct ht_json *j, char *end)
{
	j->len = (size_t)(end - j->buf);
}

int
ht_json_plain(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return 0;
	return 1;
}

int
ht_json_finish(struct ht_json *j)
{
	outc(j, '\n');
	flush(j);
	if (fflush(j->fp) != 0 || ferror(j->fp))
		return -1;
	return 0;
}
