/*
 * The profile reader's parts (profile-read.c, the file and its records'
 * order and bounds; profile-records.c, each record's fields): a cursor
 * over one payload, which reads zeros past its end and says so (short_),
 * so that a record is decoded first and judged once, and the decoders of
 * the records.  CLI only.
 */
#ifndef HT_PROFILE_CURSOR_H
#define HT_PROFILE_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "profile.h"

struct cursor {
	const uint8_t *p;
	size_t n;
	int short_;
};

static inline int
take(struct cursor *c, size_t n, const uint8_t **out)
{
	if (c->short_ || c->n < n) {
		c->short_ = 1;
		return -1;
	}
	*out = c->p;
	c->p += n;
	c->n -= n;
	return 0;
}

static inline uint64_t
le(const uint8_t *b, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static inline uint16_t
get_u16(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 2, &b) == 0 ? (uint16_t)le(b, 2) : 0;
}

static inline uint32_t
get_u32(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 4, &b) == 0 ? (uint32_t)le(b, 4) : 0;
}

static inline uint64_t
get_u64(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 8, &b) == 0 ? le(b, 8) : 0;
}

static inline double
get_f64(struct cursor *c)
{
	uint64_t v = get_u64(c);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/*
 * A string into a field of size bytes: a longer string is cut to size - 1
 * bytes (the reader does not reject it; a later writer may allow more) and
 * the field is always NUL-terminated.
 */
static inline void
get_str(struct cursor *c, char *dst, size_t size)
{
	const uint8_t *b;
	size_t n = get_u16(c), k;

	dst[0] = '\0';
	if (take(c, n, &b) == -1)
		return;
	k = n < size - 1 ? n : size - 1;
	memcpy(dst, b, k);
	dst[k] = '\0';
}

/* The decoders of the records' payloads (profile-records.c).  Each reads
 * its fields from c (short_ set where the payload ends first); those that
 * can fail say so with -1 (out of memory, or a value they refuse). */
void ht_prec_meta(struct cursor *c, struct ht_meta *m, uint32_t version);
int ht_prec_sizes(struct cursor *c, struct ht_sizes_rec *s);
int ht_prec_timeline(struct cursor *c, struct ht_timeline_rec *t,
    const struct ht_timeline_rec *prev);
int ht_prec_tag(struct cursor *c, struct ht_tag_rec *t, char *buf);
int ht_prec_coverage(struct cursor *c, struct ht_coverage_rec *r, char *buf);
int ht_prec_module(struct cursor *c, struct ht_module_rec *mod, char *path);
void ht_prec_thread(struct cursor *c, struct ht_thread_rec *t);
int ht_prec_site(struct cursor *c, struct ht_profile_site *s, uint64_t *frames,
    size_t room, uint32_t version);

#endif
