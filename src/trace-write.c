/*
 * The trace format's writer (trace.h): each function encodes one chunk
 * into a caller's buffer, byte by byte, little-endian, so that the bytes
 * never depend on struct padding.  No allocation, no lock, libc only: the
 * agent's recorder links it and calls it from its drain thread and from
 * the hooks' slow path.
 */
#include <stdint.h>
#include <string.h>

#include "le.h"
#include "trace.h"

/* Put v at p and return the byte after it: the chunks' fields in order. */
static uint8_t *
put16(uint8_t *p, uint16_t v)
{
	ht_le_put16(p, v);
	return p + 2;
}

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	ht_le_put32(p, v);
	return p + 4;
}

static uint8_t *
put64(uint8_t *p, uint64_t v)
{
	ht_le_put64(p, v);
	return p + 8;
}

size_t
ht_tw_chunk_size(size_t n)
{
	return HT_TRACE_CHUNK_HEAD + ((n + 7) & ~(size_t)7);
}

/* The chunk's head at buf, its padding zeroed; the payload's start, or
 * NULL when the chunk does not fit in cap. */
static uint8_t *
chunk(uint8_t *buf, size_t cap, uint32_t type, size_t n)
{
	size_t total = ht_tw_chunk_size(n);

	if (n > UINT32_MAX || total > cap)
		return NULL;
	memset(buf + total - 8, 0, 8);
	put32(buf, type);
	put32(buf + 4, (uint32_t)n);
	return buf + HT_TRACE_CHUNK_HEAD;
}

/* A chunk of fixed bytes and a NUL-terminated string (empty for NULL). */
static size_t
chunk_str(uint8_t *buf, size_t cap, uint32_t type, const uint8_t *fixed,
    size_t nfixed, const char *s)
{
	size_t ns = s != NULL ? strlen(s) : 0;
	uint8_t *p = chunk(buf, cap, type, nfixed + ns + 1);

	if (p == NULL)
		return 0;
	memcpy(p, fixed, nfixed);
	if (ns > 0)
		memcpy(p + nfixed, s, ns);
	p[nfixed + ns] = 0;
	return ht_tw_chunk_size(nfixed + ns + 1);
}

size_t
ht_tw_header(uint8_t *buf, size_t cap)
{
	if (cap < HT_TRACE_HEADER_SIZE)
		return 0;
	memcpy(buf, HT_TRACE_MAGIC, 8);
	put32(buf + 8, HT_TRACE_VERSION);
	put32(buf + 12, 0);
	return HT_TRACE_HEADER_SIZE;
}

size_t
ht_tw_info(uint8_t *buf, size_t cap, const struct ht_trace_info *in)
{
	uint8_t f[32], *p = f;

	p = put32(p, in->pid);
	p = put32(p, in->page_size);
	p = put64(p, in->realtime_ns);
	p = put64(p, in->mono_ns);
	p = put32(p, in->live_entry_bytes);
	put32(p, in->site_entry_bytes);
	return chunk_str(buf, cap, HT_TRC_INFO, f, sizeof(f), in->command);
}

size_t
ht_tw_func(uint8_t *buf, size_t cap, uint32_t idx, const char *name)
{
	uint8_t f[4];

	put32(f, idx);
	return chunk_str(buf, cap, HT_TRC_FUNC, f, sizeof(f), name);
}

size_t
ht_tw_thread(uint8_t *buf, size_t cap, uint32_t idx, uint32_t tid,
    const char *name)
{
	uint8_t f[8];

	put32(put32(f, idx), tid);
	return chunk_str(buf, cap, HT_TRC_THREAD, f, sizeof(f), name);
}

size_t
ht_tw_module(uint8_t *buf, size_t cap, uint64_t start, uint64_t end,
    uint64_t offset, const char *path)
{
	uint8_t f[24];

	put64(put64(put64(f, start), end), offset);
	return chunk_str(buf, cap, HT_TRC_MODULE, f, sizeof(f), path);
}

size_t
ht_tw_site(uint8_t *buf, size_t cap, uint32_t id, uint64_t addr)
{
	uint8_t *p = chunk(buf, cap, HT_TRC_SITE, 16);

	if (p == NULL)
		return 0;
	put64(put32(put32(p, id), 0), addr);
	return ht_tw_chunk_size(16);
}

size_t
ht_tw_tag(uint8_t *buf, size_t cap, uint32_t id, const char *name)
{
	uint8_t f[4];

	put32(f, id);
	return chunk_str(buf, cap, HT_TRC_TAG, f, sizeof(f), name);
}

size_t
ht_tw_events_head(uint8_t *buf, size_t cap, uint32_t thread, uint32_t n)
{
	size_t len = 8 + (size_t)n * HT_TRACE_EVENT_SIZE;

	if (cap < HT_TRACE_CHUNK_HEAD + 8 || len > UINT32_MAX)
		return 0;
	put32(buf, HT_TRC_EVENTS);
	put32(buf + 4, (uint32_t)len);
	put32(put32(buf + 8, thread), n);
	return HT_TRACE_CHUNK_HEAD + 8;
}

size_t
ht_tw_event(uint8_t *buf, size_t cap, const struct ht_trace_event *e)
{
	uint8_t *p = buf;

	if (cap < HT_TRACE_EVENT_SIZE)
		return 0;
	p = put64(p, e->seq);
	p = put64(p, e->t_ns);
	p = put64(p, e->ref);
	p = put64(p, e->size);
	p = put32(p, e->usable_over);
	p = put32(p, e->site);
	p = put16(p, e->tag);
	p = put16(p, e->fn);
	p[0] = e->op;
	p[1] = e->flags;
	p[2] = e->align_log2;
	p[3] = 0;
	return HT_TRACE_EVENT_SIZE;
}

size_t
ht_tw_end(uint8_t *buf, size_t cap, const struct ht_trace_end *e, uint32_t crc)
{
	uint8_t *p = chunk(buf, cap, HT_TRC_END, 56);

	if (p == NULL)
		return 0;
	p = put64(p, e->events);
	p = put64(p, e->lost);
	p = put32(p, e->lost_why);
	p = put32(p, e->threads);
	p = put64(p, e->duration_ns);
	p = put64(p, e->agent_bytes);
	p = put64(p, e->waits);
	put32(put32(p, crc), 0);
	return ht_tw_chunk_size(56);
}
