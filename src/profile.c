/*
 * The heaptool profile format's writer, which runs inside the target: no
 * allocation, no stdio, streaming through a caller's buffer.  Every integer
 * is encoded byte by byte, little-endian, so that the bytes never depend on
 * the host or on struct padding.  The reader is in profile-read.c (the agent
 * must not link it: it allocates).  The layout is documented in
 * man/heaptool-format.5; keep the three in step.
 */
#include <stdint.h>
#include <string.h>

#include "crc32.h"
#include "le.h"
#include "profile.h"
#include "profile-layout.h"

void
ht_pw_init(struct ht_pwriter *w, uint8_t *buf, size_t cap,
    int (*flush)(void *, const void *, size_t), void *ctx)
{
	w->buf = buf;
	w->cap = buf != NULL ? cap : 0;
	w->len = 0;
	w->flush = flush;
	w->ctx = ctx;
	w->failed = 0;
	w->crc = 0;
}

/*
 * Append n bytes, flushing whenever the buffer is full, so that a record may
 * be larger than the buffer.  Without a flush callback a full buffer is the
 * failure.
 */
static void
put(struct ht_pwriter *w, const void *src, size_t n)
{
	const uint8_t *p = src;
	size_t k;

	while (n > 0 && !w->failed) {
		if (w->len == w->cap) {
			if (w->flush == NULL || w->cap == 0 ||
			    w->flush(w->ctx, w->buf, w->len) != 0) {
				w->failed = 1;
				return;
			}
			w->len = 0;
		}
		k = w->cap - w->len;
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, p, k);
		w->crc = ht_crc32(w->crc, p, k);
		w->len += k;
		p += k;
		n -= k;
	}
}

static void
put_u16(struct ht_pwriter *w, uint16_t v)
{
	uint8_t b[2];

	ht_le_put16(b, v);
	put(w, b, sizeof(b));
}

static void
put_u32(struct ht_pwriter *w, uint32_t v)
{
	uint8_t b[4];

	ht_le_put32(b, v);
	put(w, b, sizeof(b));
}

static void
put_u64(struct ht_pwriter *w, uint64_t v)
{
	uint8_t b[8];

	ht_le_put64(b, v);
	put(w, b, sizeof(b));
}

static void
put_f64(struct ht_pwriter *w, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put_u64(w, v);
}

/* Length of a string field: up to its NUL, never past the field, and short
 * enough to leave room for the NUL the reader adds. */
static size_t
field_len(const char *s, size_t size)
{
	return strnlen(s, size - 1);
}

static void
put_str(struct ht_pwriter *w, const char *s, size_t n)
{
	put_u16(w, (uint16_t)n);
	put(w, s, n);
}

static void
put_rec(struct ht_pwriter *w, uint32_t type, size_t len)
{
	put_u32(w, type);
	put_u32(w, (uint32_t)len);
}

void
ht_pw_meta(struct ht_pwriter *w, const struct ht_meta *m)
{
	size_t cl = field_len(m->command, sizeof(m->command));

	put(w, HT_PROFILE_MAGIC, 8);
	put_u32(w, HT_PROFILE_VERSION);
	put_u32(w, 0);

	put_rec(w, HT_REC_META,
	    META_FIXED + 2 + cl + META_V4_TAIL + META_V5_TAIL + META_V6_TAIL +
		META_V7_TAIL);
	put_u64(w, m->pid);
	put_u64(w, m->epoch);
	put_u64(w, m->rate);
	put_u32(w, m->state);
	put_u32(w, m->flags);
	put_u64(w, m->start_ns);
	put_u64(w, m->end_ns);
	put_u64(w, m->peak_inuse_bytes);
	put_u64(w, m->peak_ns);
	put_u64(w, m->overhead_bytes);
	put_u64(w, m->dropped_samples);
	put_u64(w, m->samples);
	put_u64(w, m->live_samples);
	put_u64(w, m->heap_inuse_bytes);
	put_u64(w, m->heap_free_bytes);
	put_u64(w, m->heap_mmap_bytes);
	put_u64(w, m->rss_bytes);
	put_str(w, m->command, cl);
	put_u64(w, m->max_samples);
	put_u64(w, m->dropped_bytes);
	put_u64(w, m->dropped_objects);
	put_u32(w, m->drop_why);
	put_u32(w, m->signal);
	put_u32(w, m->backend);
	put_u32(w, m->tags);
	put_u32(w, m->tags_refused);
	put_u64(w, m->tag_cache_bytes);
	put_u64(w, m->tag_name_bytes);
}

void
ht_pw_module(struct ht_pwriter *w, const struct ht_module_rec *mod)
{
	size_t bl = mod->build_id_len, pl;

	if (bl > HT_PROFILE_MAX_BUILD_ID)
		bl = HT_PROFILE_MAX_BUILD_ID;
	pl = mod->path != NULL ? field_len(mod->path, HT_PROFILE_MAX_PATH) : 0;
	put_rec(w, HT_REC_MODULE, MODULE_FIXED + 2 + bl + 2 + pl);
	put_u64(w, mod->bias);
	put_u64(w, mod->start);
	put_u64(w, mod->end);
	put_u16(w, (uint16_t)bl);
	put(w, mod->build_id, bl);
	put_str(w, mod->path != NULL ? mod->path : "", pl);
}

void
ht_pw_thread(struct ht_pwriter *w, const struct ht_thread_rec *t)
{
	size_t nl = field_len(t->name, sizeof(t->name));

	put_rec(w, HT_REC_THREAD, THREAD_FIXED + 2 + nl);
	put_u32(w, t->tid);
	put_u64(w, t->inuse_bytes);
	put_u64(w, t->inuse_objects);
	put_u64(w, t->alloc_bytes);
	put_u64(w, t->alloc_objects);
	put_u64(w, t->samples);
	put_str(w, t->name, nl);
}

void
ht_pw_site(struct ht_pwriter *w, const struct ht_site_rec *s)
{
	uint32_t n = s->nframes, i;

	if (n > HT_PROFILE_MAX_FRAMES)
		n = HT_PROFILE_MAX_FRAMES;
	put_rec(w, HT_REC_SITE,
	    SITE_FIXED + 8 * (size_t)n + SITE_V2_TAIL + SITE_V7_TAIL +
		SITE_V10_TAIL);
	put_u64(w, s->inuse_bytes);
	put_u64(w, s->inuse_objects);
	put_u64(w, s->alloc_bytes);
	put_u64(w, s->alloc_objects);
	put_u64(w, s->samples);
	put_u64(w, s->live_samples);
	put_f64(w, s->inuse_var);
	put_f64(w, s->alloc_var);
	put_u64(w, s->peak_inuse_bytes);
	put_u64(w, s->peak_inuse_objects);
	put_u32(w, n);
	for (i = 0; i < n; i++)
		put_u64(w, s->frames[i]);
	put_u32(w, s->folded);
	put_u32(w, s->tag);
	put_u32(w, s->kind);
	put_u64(w, s->temp_objects);
	put_u64(w, s->temp_samples);
}

void
ht_pw_tag(struct ht_pwriter *w, const struct ht_tag_rec *t)
{
	const char *n = t->name != NULL ? t->name : "";
	size_t nl = field_len(n, 256);

	put_rec(w, HT_REC_TAG, TAG_FIXED + 2 + nl);
	put_u32(w, t->id);
	put_u32(w, 0);
	put_u64(w, t->peak_bytes[0]);
	put_u64(w, t->peak_objects[0]);
	put_u64(w, t->peak_bytes[1]);
	put_u64(w, t->peak_objects[1]);
	put_str(w, n, nl);
}

void
ht_pw_allocator(struct ht_pwriter *w, const struct ht_allocator_rec *a)
{
	size_t pl = a->path != NULL ? field_len(a->path, HT_PROFILE_MAX_PATH) :
				      0;

	put_rec(w, HT_REC_ALLOCATOR, ALLOCATOR_FIXED + 2 + pl);
	put_u64(w, a->names);
	put_str(w, a->path != NULL ? a->path : "", pl);
}

void
ht_pw_coverage(struct ht_pwriter *w, const struct ht_coverage_rec *c)
{
	const char *f = c->family != NULL ? c->family : "";
	const char *n = c->name != NULL ? c->name : "";
	const char *m = c->module != NULL ? c->module : "";
	size_t fl = field_len(f, HT_PROFILE_MAX_PATH);
	size_t nl = field_len(n, HT_PROFILE_MAX_PATH);
	size_t ml = field_len(m, HT_PROFILE_MAX_PATH);

	put_rec(w, HT_REC_COVERAGE, COVERAGE_FIXED + 6 + fl + nl + ml);
	put_u32(w, c->backend);
	put_u32(w, c->reason);
	put_u32(w, c->kind);
	put_u32(w, c->slots);
	put_str(w, f, fl);
	put_str(w, n, nl);
	put_str(w, m, ml);
}

void
ht_pw_timeline(struct ht_pwriter *w, const struct ht_timeline_rec *t)
{
	put_rec(w, HT_REC_TIMELINE, TIMELINE_FIXED);
	put_u64(w, t->t_ms);
	put_u64(w, t->inuse_bytes);
	put_u64(w, t->alloc_bytes);
	put_u64(w, t->rss_bytes);
	put_u64(w, t->samples);
	put_f64(w, t->inuse_var);
}

unsigned
ht_size_bucket(uint64_t size)
{
	return size < 2 ? 0 : 63 - (unsigned)__builtin_clzll(size);
}

void
ht_pw_sizes(struct ht_pwriter *w, const struct ht_sizes_rec *s)
{
	uint32_t i,
	    n = s->nbuckets < HT_SIZE_BUCKETS ? s->nbuckets : HT_SIZE_BUCKETS;

	put_rec(w, HT_REC_SIZES, SIZES_FIXED + (size_t)n * 16);
	put_u32(w, n);
	put_u32(w, 0);
	for (i = 0; i < n; i++)
		put_u64(w, s->objects[i]);
	for (i = 0; i < n; i++)
		put_u64(w, s->bytes[i]);
}

/* END carries the CRC of every byte before its payload (version 3). */
int
ht_pw_finish(struct ht_pwriter *w)
{
	uint32_t crc;

	put_rec(w, HT_REC_END, END_FIXED);
	crc = w->crc;
	put_u32(w, crc);
	if (!w->failed && w->flush != NULL && w->len > 0) {
		if (w->flush(w->ctx, w->buf, w->len) != 0)
			w->failed = 1;
		else
			w->len = 0;
	}
	return w->failed ? -1 : 0;
}

const char *
ht_profile_state_name(uint32_t state)
{
	switch (state) {
	case HT_STATE_RUNNING:
		return "running";
	case HT_STATE_STOPPED:
		return "stopped";
	default:
		return "none";
	}
}
