/*
 * The control protocol (proto.h): explicit little-endian encoding byte by
 * byte, so that neither the host's byte order nor the alignment of a
 * received buffer matters, and a strict request parser that accepts exactly
 * one encoding of each request.  That strictness is what the fuzz test
 * checks: every accepted input re-encodes to the same bytes.
 */
#include <string.h>

#include "le.h"
#include "proto.h"

/* STATUS payload: six u32, eight u64, one u32, the u16-prefixed version,
 * then STATUS_TAIL bytes (follow, parent_pid, the children's u16 count)
 * and the children, then the allocators and the final profile's
 * directory (proto.h). */
#define STATUS_FIXED   (6 * 4 + 8 * 8 + 4)
#define STATUS_TAIL    (4 + 4 + 2)
/* Version 6, at the end after backend and the two coverage figures:
 * backend_default, backends, backends_present, rate_asked. */
#define STATUS_BACKEND (4 + 4 + 4 + 8)
/* START: rate, flags, four u64 dump settings, max_samples, the prefix's u16
 * length. */
#define RECORD_FIXED   16 /* RECORD's payload */
#define RECSTAT_FIXED  48 /* RECSTAT_REPLY's */
#define START_FIXED    (8 + 4 + 4 * 8 + 8 + 2)

size_t
ht_proto_socket_name(char *out, uint32_t pid)
{
	char digits[10];
	size_t n = 0, len;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	out[0] = '\0';
	memcpy(out + 1, "heaptool.", 9);
	len = 10;
	while (n > 0)
		out[len++] = digits[--n];
	return len;
}

void
ht_proto_put_header(uint8_t *out, uint16_t type, uint32_t length)
{
	ht_le_put32(out, HT_PROTO_MAGIC);
	ht_le_put16(out + 4, HT_PROTO_VERSION);
	ht_le_put16(out + 6, type);
	ht_le_put32(out + 8, length);
	ht_le_put32(out + 12, 0);
}

int
ht_proto_get_header(const uint8_t *in, struct ht_msg_header *h)
{
	h->magic = ht_le_get32(in);
	h->version = ht_le_get16(in + 4);
	h->type = ht_le_get16(in + 6);
	h->length = ht_le_get32(in + 8);
	h->flags = ht_le_get32(in + 12);
	return h->magic == HT_PROTO_MAGIC ? 0 : -1;
}

int
ht_proto_parse_request(const uint8_t *buf, size_t len, struct ht_request *r)
{
	struct ht_msg_header h;
	const uint8_t *p = buf + HT_PROTO_HEADER;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (len < HT_PROTO_HEADER || ht_proto_get_header(buf, &h) != 0)
		return HT_ERR_BAD_REQUEST;
	/* The version before anything else: another version may lay out its
	 * payloads differently, and its client deserves to hear why. */
	if (h.version != HT_PROTO_VERSION)
		return HT_ERR_VERSION;
	if (len > HT_PROTO_MAX_REQUEST || h.length != len - HT_PROTO_HEADER ||
	    h.flags != 0)
		return HT_ERR_BAD_REQUEST;
	switch (h.type) {
	case HT_MSG_HELLO:
	case HT_MSG_STATUS:
	case HT_MSG_STOP:
	case HT_MSG_REPORT:
	case HT_MSG_DETACH:
	case HT_MSG_HOOK:
		if (h.length != 0)
			return HT_ERR_BAD_REQUEST;
		break;
	case HT_MSG_START:
		if (h.length < START_FIXED)
			return HT_ERR_BAD_REQUEST;
		r->rate = ht_le_get64(p);
		r->flags = ht_le_get32(p + 8);
		r->dump_interval_ms = ht_le_get64(p + 12);
		r->dump_every_bytes = ht_le_get64(p + 20);
		r->dump_at_rss_bytes = ht_le_get64(p + 28);
		r->threshold_bytes = ht_le_get64(p + 36);
		r->max_samples = ht_le_get64(p + 44);
		n = ht_le_get16(p + 52);
		if (r->rate == 0 || (r->flags & ~(uint32_t)HT_START_FLAGS) ||
		    r->max_samples > HT_PROTO_MAX_SAMPLES ||
		    n > HT_PROTO_MAX_PREFIX || h.length != START_FIXED + n ||
		    memchr(p + START_FIXED, '\0', n) != NULL)
			goto bad;
		/* Dump settings without a place to dump mean nothing: one
		 * encoding per request, so they are refused. */
		if (n == 0 &&
		    (r->dump_interval_ms | r->dump_every_bytes |
			r->dump_at_rss_bytes | r->threshold_bytes) != 0)
			goto bad;
		memcpy(r->dump_prefix, p + START_FIXED, n);
		r->dump_prefix[n] = '\0';
		break;
	case HT_MSG_RECORD:
		if (h.length != RECORD_FIXED)
			return HT_ERR_BAD_REQUEST;
		r->rec_max_bytes = ht_le_get64(p);
		r->rec_buffer = ht_le_get32(p + 8);
		r->flags = ht_le_get32(p + 12);
		if (r->flags != 0 || r->rec_buffer > HT_PROTO_MAX_REC_BUFFER)
			goto bad;
		break;
	case HT_MSG_RECSTAT:
		if (h.length != 4)
			return HT_ERR_BAD_REQUEST;
		r->flags = ht_le_get32(p);
		if (r->flags & ~(uint32_t)HT_RECSTAT_STOP)
			goto bad;
		break;
	default:
		return HT_ERR_BAD_REQUEST;
	}
	r->type = h.type;
	return 0;
bad:
	memset(r, 0, sizeof(*r));
	return HT_ERR_BAD_REQUEST;
}

size_t
ht_proto_encode_request(uint8_t *out, const struct ht_request *r)
{
	uint8_t *p = out + HT_PROTO_HEADER;
	size_t n;

	if (r->type == HT_MSG_START) {
		n = strnlen(r->dump_prefix, HT_PROTO_MAX_PREFIX);
		ht_proto_put_header(out, r->type, (uint32_t)(START_FIXED + n));
		ht_le_put64(p, r->rate);
		ht_le_put32(p + 8, r->flags);
		ht_le_put64(p + 12, r->dump_interval_ms);
		ht_le_put64(p + 20, r->dump_every_bytes);
		ht_le_put64(p + 28, r->dump_at_rss_bytes);
		ht_le_put64(p + 36, r->threshold_bytes);
		ht_le_put64(p + 44, r->max_samples);
		ht_le_put16(p + 52, (uint16_t)n);
		memcpy(p + START_FIXED, r->dump_prefix, n);
		return HT_PROTO_HEADER + START_FIXED + n;
	}
	if (r->type == HT_MSG_RECORD) {
		ht_proto_put_header(out, r->type, RECORD_FIXED);
		ht_le_put64(p, r->rec_max_bytes);
		ht_le_put32(p + 8, r->rec_buffer);
		ht_le_put32(p + 12, r->flags);
		return HT_PROTO_HEADER + RECORD_FIXED;
	}
	if (r->type == HT_MSG_RECSTAT) {
		ht_proto_put_header(out, r->type, 4);
		ht_le_put32(p, r->flags);
		return HT_PROTO_HEADER + 4;
	}
	ht_proto_put_header(out, r->type, 0);
	return HT_PROTO_HEADER;
}

size_t
ht_proto_encode_recstat(uint8_t *out, size_t cap, const struct ht_recstat *s)
{
	uint8_t *p = out + HT_PROTO_HEADER;

	if (cap < HT_PROTO_HEADER + RECSTAT_FIXED)
		return 0;
	ht_proto_put_header(out, HT_MSG_RECSTAT_REPLY, RECSTAT_FIXED);
	ht_le_put32(p, s->state);
	ht_le_put32(p + 4, s->lost_why);
	ht_le_put64(p + 8, s->events);
	ht_le_put64(p + 16, s->bytes);
	ht_le_put64(p + 24, s->lost);
	ht_le_put64(p + 32, s->waits);
	ht_le_put32(p + 40, s->threads);
	ht_le_put32(p + 44, 0);
	return HT_PROTO_HEADER + RECSTAT_FIXED;
}

int
ht_proto_decode_recstat(const uint8_t *p, size_t len, struct ht_recstat *s)
{
	memset(s, 0, sizeof(*s));
	if (len != RECSTAT_FIXED || ht_le_get32(p + 44) != 0 ||
	    ht_le_get32(p) > HT_RECORD_FAILED)
		return -1;
	s->state = ht_le_get32(p);
	s->lost_why = ht_le_get32(p + 4);
	s->events = ht_le_get64(p + 8);
	s->bytes = ht_le_get64(p + 16);
	s->lost = ht_le_get64(p + 24);
	s->waits = ht_le_get64(p + 32);
	s->threads = ht_le_get32(p + 40);
	return 0;
}

size_t
ht_proto_encode_err(uint8_t *out, size_t cap, uint32_t code, const char *msg)
{
	size_t n = msg != NULL ? strlen(msg) : 0;

	if (cap < HT_PROTO_HEADER + 4)
		return 0;
	if (n > cap - HT_PROTO_HEADER - 4) {
		n = cap - HT_PROTO_HEADER - 4;
		/* Cut before a character, not inside its UTF-8 sequence:
		 * back off continuation bytes (10xxxxxx) and the lead byte
		 * whose sequence they would have completed. */
		while (n > 0 && ((uint8_t)msg[n] & 0xc0) == 0x80)
			n--;
	}
	ht_proto_put_header(out, HT_MSG_ERR, (uint32_t)(4 + n));
	ht_le_put32(out + HT_PROTO_HEADER, code);
	memcpy(out + HT_PROTO_HEADER + 4, msg != NULL ? msg : "", n);
	return HT_PROTO_HEADER + 4 + n;
}

/* The allocators, the final profile's directory, the coverage figures and
 * the dumps of a STATUS: their length, and with q their encoding at q. */
static size_t
put_unseen_final(uint8_t *q, const struct ht_status *s)
{
	size_t i, n, k, len = 2;

	n = s->nallocators < HT_PROTO_MAX_ALLOCATORS ? s->nallocators :
						       HT_PROTO_MAX_ALLOCATORS;
	if (q != NULL)
		ht_le_put16(q, (uint16_t)n);
	for (i = 0; i < n; i++) {
		k = strnlen(s->allocators[i].path, HT_PROTO_MAX_ALLOCATOR_PATH);
		if (q != NULL) {
			ht_le_put64(q + len, s->allocators[i].names);
			ht_le_put16(q + len + 8, (uint16_t)k);
			memcpy(q + len + 10, s->allocators[i].path, k);
		}
		len += 10 + k;
	}
	k = strnlen(s->final_dir, HT_PROTO_MAX_FINAL_DIR);
	if (q != NULL) {
		ht_le_put32(q + len, s->allocators_more);
		ht_le_put32(q + len + 4, s->final_armed);
		ht_le_put16(q + len + 8, (uint16_t)k);
		memcpy(q + len + 10, s->final_dir, k);
		ht_le_put32(q + len + 10 + k, s->backend);
		ht_le_put32(q + len + 14 + k, s->coverage_hooked);
		ht_le_put32(q + len + 18 + k, s->coverage_unhooked);
		ht_le_put32(q + len + 22 + k, s->backend_default);
		ht_le_put32(q + len + 26 + k, s->backends);
		ht_le_put32(q + len + 30 + k, s->backends_present);
		ht_le_put64(q + len + 34 + k, s->rate_asked);
	}
	len += 10 + k + 12 + STATUS_BACKEND;
	/* The dumps (version 7). */
	k = strnlen(s->dump_written, HT_PROTO_MAX_DUMP_PATH);
	if (q != NULL) {
		ht_le_put64(q + len, s->dumps_written);
		ht_le_put64(q + len + 8, s->dump_written_ns);
		ht_le_put16(q + len + 16, (uint16_t)k);
		memcpy(q + len + 18, s->dump_written, k);
	}
	len += 18 + k;
	k = strnlen(s->dump_failed, HT_PROTO_MAX_DUMP_PATH);
	if (q != NULL) {
		ht_le_put64(q + len, s->dumps_failed);
		ht_le_put64(q + len + 8, s->dump_failed_ns);
		ht_le_put32(q + len + 16, s->dump_failed_errno);
		ht_le_put16(q + len + 20, (uint16_t)k);
		memcpy(q + len + 22, s->dump_failed, k);
	}
	return len + 22 + k;
}

size_t
ht_proto_encode_status(uint8_t *out, size_t cap, const struct ht_status *s)
{
	size_t vlen, plen, i, nc;
	uint8_t *p = out + HT_PROTO_HEADER, *t;

	vlen = strnlen(s->agent_version, sizeof(s->agent_version) - 1);
	nc = s->nchildren < HT_PROTO_MAX_CHILDREN ? s->nchildren :
						    HT_PROTO_MAX_CHILDREN;
	plen = STATUS_FIXED + 2 + vlen + STATUS_TAIL + 4 * nc +
	    put_unseen_final(NULL, s);

	if (cap < HT_PROTO_HEADER + plen)
		return 0;
	ht_proto_put_header(out, HT_MSG_STATUS_REPLY, (uint32_t)plen);
	ht_le_put32(p, s->proto_version);
	ht_le_put32(p + 4, s->pid);
	ht_le_put32(p + 8, s->hooked);
	ht_le_put32(p + 12, s->slots_patched);
	ht_le_put32(p + 16, s->modules);
	ht_le_put32(p + 20, s->state);
	ht_le_put64(p + 24, s->epoch);
	ht_le_put64(p + 32, s->rate);
	ht_le_put64(p + 40, s->start_ns);
	ht_le_put64(p + 48, s->samples);
	ht_le_put64(p + 56, s->live_samples);
	ht_le_put64(p + 64, s->dropped_samples);
	ht_le_put64(p + 72, s->overhead_bytes);
	ht_le_put64(p + 80, s->max_samples);
	ht_le_put32(p + 88, s->flags);
	ht_le_put16(p + STATUS_FIXED, (uint16_t)vlen);
	memcpy(p + STATUS_FIXED + 2, s->agent_version, vlen);
	t = p + STATUS_FIXED + 2 + vlen;
	ht_le_put32(t, s->follow);
	ht_le_put32(t + 4, s->parent_pid);
	ht_le_put16(t + 8, (uint16_t)nc);
	for (i = 0; i < nc; i++)
		ht_le_put32(t + STATUS_TAIL + 4 * i, s->children[i]);
	(void)put_unseen_final(t + STATUS_TAIL + 4 * nc, s);
	return HT_PROTO_HEADER + plen;
}

int
ht_proto_decode_err(const uint8_t *payload, size_t len, uint32_t *code,
    char *msg, size_t msglen)
{
	size_t i, n;

	if (len < 4 || memchr(payload + 4, '\0', len - 4) != NULL)
		return -1;
	*code = ht_le_get32(payload);
	if (msg == NULL || msglen == 0)
		return 0;
	n = len - 4 < msglen - 1 ? len - 4 : msglen - 1;
	/* The CLI prints the message: no control character of the peer's
	 * reaches the user's terminal. */
	for (i = 0; i < n; i++) {
		uint8_t c = payload[4 + i];

		msg[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	msg[n] = '\0';
	return 0;
}

/* Is b[0..n) text without a control character (what the CLI prints)? */
static int
printable(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] == 0x7f)
			return 0;
	return 1;
}

/* A string of the status at *off into dst[max + 1]: its length within len
 * and max, printable.  Returns 0, or -1. */
static int
get_str(const uint8_t *payload, size_t len, size_t *off, char *dst, size_t max)
{
	size_t n;

	if (len - *off < 2)
		return -1;
	n = ht_le_get16(payload + *off);
	if (n > max || len - *off - 2 < n || !printable(payload + *off + 2, n))
		return -1;
	memcpy(dst, payload + *off + 2, n);
	dst[n] = '\0';
	*off += 2 + n;
	return 0;
}

/* The allocators, the final profile's directory, the coverage figures and
 * the dumps, from off to the end of the payload, which they must fill.
 * Returns 0, or -1. */
static int
get_unseen_final(const uint8_t *payload, size_t len, size_t off,
    struct ht_status *s)
{
	size_t i, n;

	if (len - off < 2)
		return -1;
	n = ht_le_get16(payload + off);
	off += 2;
	if (n > HT_PROTO_MAX_ALLOCATORS)
		return -1;
	for (i = 0; i < n; i++) {
		if (len - off < 8)
			return -1;
		s->allocators[i].names = ht_le_get64(payload + off);
		off += 8;
		if (get_str(payload, len, &off, s->allocators[i].path,
			HT_PROTO_MAX_ALLOCATOR_PATH) != 0)
			return -1;
	}
	s->nallocators = (uint32_t)n;
	if (len - off < 8)
		return -1;
	s->allocators_more = ht_le_get32(payload + off);
	s->final_armed = ht_le_get32(payload + off + 4);
	off += 8;
	if (get_str(payload, len, &off, s->final_dir, HT_PROTO_MAX_FINAL_DIR) !=
		0 ||
	    len - off < 12 + STATUS_BACKEND)
		return -1;
	s->backend = ht_le_get32(payload + off);
	s->coverage_hooked = ht_le_get32(payload + off + 4);
	s->coverage_unhooked = ht_le_get32(payload + off + 8);
	s->backend_default = ht_le_get32(payload + off + 12);
	s->backends = ht_le_get32(payload + off + 16);
	s->backends_present = ht_le_get32(payload + off + 20);
	s->rate_asked = ht_le_get64(payload + off + 24);
	off += 12 + STATUS_BACKEND;
	if (len - off < 16)
		return -1;
	s->dumps_written = ht_le_get64(payload + off);
	s->dump_written_ns = ht_le_get64(payload + off + 8);
	off += 16;
	if (get_str(payload, len, &off, s->dump_written,
		HT_PROTO_MAX_DUMP_PATH) != 0)
		return -1;
	if (len - off < 20)
		return -1;
	s->dumps_failed = ht_le_get64(payload + off);
	s->dump_failed_ns = ht_le_get64(payload + off + 8);
	s->dump_failed_errno = ht_le_get32(payload + off + 16);
	off += 20;
	if (get_str(payload, len, &off, s->dump_failed,
		HT_PROTO_MAX_DUMP_PATH) != 0)
		return -1;
	/* One encoding per reply: nothing may follow. */
	return off == len ? 0 : -1;
}

int
ht_proto_decode_status(const uint8_t *payload, size_t len, struct ht_status *s)
{
	const uint8_t *t;
	size_t i, vlen, nc, base;

	if (len < STATUS_FIXED + 2)
		return -1;
	vlen = ht_le_get16(payload + STATUS_FIXED);
	if (vlen >= sizeof(s->agent_version) ||
	    len < STATUS_FIXED + 2 + vlen + STATUS_TAIL)
		return -1;
	t = payload + STATUS_FIXED + 2 + vlen;
	nc = ht_le_get16(t + 8);
	base = STATUS_FIXED + 2 + vlen + STATUS_TAIL + 4 * nc;
	if (nc > HT_PROTO_MAX_CHILDREN || len < base ||
	    !printable(payload + STATUS_FIXED + 2, vlen))
		return -1;
	memset(s, 0, sizeof(*s));
	if (get_unseen_final(payload, len, base, s) != 0)
		return -1;
	s->proto_version = ht_le_get32(payload);
	s->pid = ht_le_get32(payload + 4);
	s->hooked = ht_le_get32(payload + 8);
	s->slots_patched = ht_le_get32(payload + 12);
	s->modules = ht_le_get32(payload + 16);
	s->state = ht_le_get32(payload + 20);
	s->epoch = ht_le_get64(payload + 24);
	s->rate = ht_le_get64(payload + 32);
	s->start_ns = ht_le_get64(payload + 40);
	s->samples = ht_le_get64(payload + 48);
	s->live_samples = ht_le_get64(payload + 56);
	s->dropped_samples = ht_le_get64(payload + 64);
	s->overhead_bytes = ht_le_get64(payload + 72);
	s->max_samples = ht_le_get64(payload + 80);
	s->flags = ht_le_get32(payload + 88);
	memcpy(s->agent_version, payload + STATUS_FIXED + 2, vlen);
	s->follow = ht_le_get32(t);
	s->parent_pid = ht_le_get32(t + 4);
	s->nchildren = (uint32_t)nc;
	for (i = 0; i < nc; i++)
		s->children[i] = ht_le_get32(t + STATUS_TAIL + 4 * i);
	return 0;
}
