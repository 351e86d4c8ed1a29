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

size_t
ht_json_put_text(FILE *fp, const char *s, size_t max,
    void (*put)(FILE *, int c))
{
	size_t i, n, len = strlen(s), chars = 0;

	if (put == NULL)
		put = put_plain;
	for (i = 0; i < len && chars < max; i += n, chars++) {
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
newline_indent(struct ht_json *j)
{
	int i;

	if (!j->pretty)
		return;
	putc('\n', j->fp);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->fp);
}

/* Write the escape of byte c, which cannot appear as is in a string. */
static void
write_escape(FILE *fp, unsigned char c)
{
	switch (c) {
	case '"':
		fputs("\\\"", fp);
		break;
	case '\\':
		fputs("\\\\", fp);
		break;
	case '\n':
		fputs("\\n", fp);
		break;
	case '\r':
		fputs("\\r", fp);
		break;
	case '\t':
		fputs("\\t", fp);
		break;
	case '\b':
		fputs("\\b", fp);
		break;
	case '\f':
		fputs("\\f", fp);
		break;
	default:
		/* Controls, and bytes that are not UTF-8: the latter keep
		 * their Latin-1 code point, so that nothing is lost or
		 * invented. */
		fprintf(fp, "\\u%04x", c);
		break;
	}
}

static void
write_string(FILE *fp, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, len, run = 0;

	/* Runs of bytes that need no escape go out in one fwrite: one call
	 * (and one lock of the stream) per byte made large reports slow. */
	putc('"', fp);
	for (i = 0; i < n; i += len) {
		if (s[i] >= 0x20 && s[i] != 0x7f && s[i] != '"' &&
		    s[i] != '\\' &&
		    (len = ht_json_utf8_len((const char *)s + i, n - i)) != 0 &&
		    !ht_json_is_c1((const char *)s + i, len))
			continue;
		if (i > run)
			fwrite(s + run, 1, i - run, fp);
		/* A C1 control (U+0080..U+009F) is escaped as the code
		 * point it is, so that JSON on a terminal cannot act. */
		if (s[i] == 0xc2 && i + 1 < n &&
		    ht_json_is_c1((const char *)s + i, 2)) {
			fprintf(fp, "\\u%04x", s[i + 1]);
			len = 2;
		} else {
			write_escape(fp, s[i]);
			len = 1;
		}
		run = i + len;
	}
	if (n > run)
		fwrite(s + run, 1, n - run, fp);
	putc('"', fp);
}

/* Separator, indentation and key before a value. */
static void
prefix(struct ht_json *j, const char *key)
{
	if (!j->empty[j->depth])
		putc(',', j->fp);
	j->empty[j->depth] = 0;
	if (j->depth > 0)
		newline_indent(j);
	if (key != NULL) {
		write_string(j->fp, key, strlen(key));
		fputs(j->pretty ? ": " : ":", j->fp);
	}
}

static void
open_level(struct ht_json *j, const char *key, int c)
{
	prefix(j, key);
	putc(c, j->fp);
	if (j->depth + 1 < HT_JSON_MAX_DEPTH) {
		j->depth++;
		j->empty[j->depth] = 1;
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
	if (!was_empty)
		newline_indent(j);
	putc(c, j->fp);
}

void
ht_json_object_begin(struct ht_json *j, const char *key)
{
	open_level(j, key, '{');
}

void
ht_json_object_end(struct ht_json *j)
{
	close_level(j, '}');
}

void
ht_json_array_begin(struct ht_json *j, const char *key)
{
	open_level(j, key, '[');
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
		fputs("null", j->fp);
	else
		write_string(j->fp, s, n);
}

void
ht_json_string(struct ht_json *j, const char *key, const char *s)
{
	ht_json_stringn(j, key, s, s != NULL ? strlen(s) : 0);
}

void
ht_json_uint(struct ht_json *j, const char *key, uint64_t v)
{
	prefix(j, key);
	fprintf(j->fp, "%llu", (unsigned long long)v);
}

void
ht_json_int(struct ht_json *j, const char *key, int64_t v)
{
	prefix(j, key);
	fprintf(j->fp, "%lld", (long long)v);
}

void
ht_json_double(struct ht_json *j, const char *key, double v)
{
	char buf[64];
	int prec;

	prefix(j, key);
	if (!isfinite(v)) {
		fputs("null", j->fp);
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
	fputs(buf, j->fp);
}

void
ht_json_bool(struct ht_json *j, const char *key, int v)
{
	prefix(j, key);
	fputs(v ? "true" : "false", j->fp);
}

void
ht_json_null(struct ht_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->fp);
}

int
ht_json_finish(struct ht_json *j)
{
	putc('\n', j->fp);
	if (fflush(j->fp) != 0 || ferror(j->fp))
		return -1;
	return 0;
}
