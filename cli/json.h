/*
 * A tiny streaming JSON writer for heaptool's machine-readable output.
 *
 * The caller opens and closes objects and arrays in order; the writer puts
 * the commas, the indentation and the quotes.  Inside an object every value
 * takes a key; inside an array (or at the top) the key must be NULL.
 * Strings are written as valid JSON whatever their bytes: quotes,
 * backslashes and control characters are escaped, well-formed UTF-8 passes
 * through, and any byte that is not part of well-formed UTF-8 is written as
 * \u00XX (its Latin-1 reading), so that a path in a legacy encoding still
 * yields a parseable document.  Non-finite doubles are written as null.
 *
 * The writer is a plain value (no allocation) with a buffer of its own:
 * its text reaches the stream in large writes (a report of millions of
 * frames spent most of its time in stdio's per-call locking), so nothing
 * else may write to the stream between ht_json_init and ht_json_finish.
 * Nesting deeper than HT_JSON_MAX_DEPTH is a programming error and is
 * ignored.
 */
#ifndef HT_JSON_H
#define HT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HT_JSON_MAX_DEPTH 32

struct ht_json {
	FILE *fp;
	int pretty; /* indent two spaces per level */
	int depth;
	/* Per level: nothing written yet at this level (no comma needed). */
	unsigned char empty[HT_JSON_MAX_DEPTH];
	/* Per level: its members go on one line (ht_json_object_line). */
	unsigned char line[HT_JSON_MAX_DEPTH];
	size_t len; /* bytes in buf */
	char buf[65536];
};

void ht_json_init(struct ht_json *, FILE *, int pretty);

void ht_json_object_begin(struct ht_json *, const char *key);
/* An object written on one line, {"a": 1, "b": null}, whatever pretty
 * says, and so is everything inside it: for the many small objects of a
 * long array (a report's frames), a third of the bytes of one key a
 * line. */
void ht_json_object_line(struct ht_json *, const char *key);
void ht_json_object_end(struct ht_json *);
void ht_json_array_begin(struct ht_json *, const char *key);
void ht_json_array_end(struct ht_json *);

/* A NULL string is written as null. */
void ht_json_string(struct ht_json *, const char *key, const char *);
void ht_json_stringn(struct ht_json *, const char *key, const char *, size_t);
void ht_json_uint(struct ht_json *, const char *key, uint64_t);
/* v as a string "0x1a2b" (addresses: JSON numbers lose 64-bit precision
 * in most readers). */
void ht_json_hex(struct ht_json *, const char *key, uint64_t);
void ht_json_int(struct ht_json *, const char *key, int64_t);
void ht_json_double(struct ht_json *, const char *key, double);
void ht_json_bool(struct ht_json *, const char *key, int);
void ht_json_null(struct ht_json *, const char *key);

/*
 * Raw JSON, for a writer's hot loop (millions of frames): the separator,
 * indentation and key any value gets, then room for n bytes (at most
 * HT_JSON_RAW_MAX) at the pointer returned, which the caller fills with
 * one complete JSON value of one line and hands back, past its last byte,
 * to ht_json_raw_end.  Strings put there must be plain (ht_json_plain).
 */
#define HT_JSON_RAW_MAX 4096
char *ht_json_raw_begin(struct ht_json *, const char *key, size_t n);
void ht_json_raw_end(struct ht_json *, char *end);
/* Whether the n bytes at s are printable ASCII other than '"' and '\\',
 * which a JSON string holds as they are. */
int ht_json_plain(const char *s, size_t n);

/* Ends the document with a newline and writes what is buffered.  Returns
 * 0, or -1 if the stream has an error (errno as left by stdio). */
int ht_json_finish(struct ht_json *);

/* Length of the valid UTF-8 sequence at s (at most n bytes): 1 to 4, or 0
 * when the bytes there are not valid UTF-8 (or n is 0). */
size_t ht_json_utf8_len(const char *s, size_t n);
/* Is the n-byte sequence at s (n from ht_json_utf8_len) a C1 control,
 * U+0080 to U+009F?  Terminals may act on them as on ESC sequences
 * (U+009B is CSI), so text for a terminal shows them as '?'. */
int ht_json_is_c1(const char *s, size_t n);

/*
 * Print the characters of s, at most max of them: a well-formed UTF-8
 * sequence of two bytes or more as it is (but a C1 control as '?'), a byte
 * that is not part of one as '?', printable ASCII not in special as it is
 * (in runs: one write for a name, not one a byte), and every other byte
 * through put, which writes it as the format takes it (an escape, a
 * replacement); put NULL writes C0 controls and DEL as '?' and the rest as
 * they are.  The one printer of text from a profile or a target, for every
 * writer and every message.  Returns how many characters were printed.
 */
size_t ht_json_put_text(FILE *fp, const char *s, size_t max,
    void (*put)(FILE *, int c), const char *special);

#endif
