/*
 * Tests for src/proto.c: the socket name; every request and reply round
 * trips; the byte layout matches src/proto.h (messages built here by hand,
 * independently of the encoder, parse; the encoder's bytes are checked at
 * their offsets); and every rejection of the strict request parser and of
 * the reply decoders: bad magic, other versions, short and oversized
 * messages, payloads of the wrong size, rate 0, unknown types and flags,
 * dump prefixes that are too long, hold a NUL or disagree with the length,
 * and dump settings without a prefix.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allocnames.h"
#include "basic.h"
#include "profile.h"
#include "proto.h"

static void
le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A header built by hand: magic, version, type, length, flags. */
static void
hdr(uint8_t *p, uint32_t magic, uint16_t version, uint16_t type,
    uint32_t length, uint32_t flags)
{
	le(p, magic, 4);
	le(p + 4, version, 2);
	le(p + 6, type, 2);
	le(p + 8, length, 4);
	le(p + 12, flags, 4);
}

static int
parse(const uint8_t *b, size_t n)
{
	struct ht_request r;
	int rc;

	memset(&r, 0xa5, sizeof(r));
	rc = ht_proto_parse_request(b, n, &r);
	/* A refused request leaves nothing half-parsed behind. */
	if (rc != 0 && (r.type != 0 || r.rate != 0 || r.flags != 0))
		return -1;
	return rc;
}

static void
test_socket_name(void)
{
	char name[HT_PROTO_SOCKET_NAME_MAX];
	size_t n;

	n = ht_proto_socket_name(name, 1234);
	ok(n == 14 && memcmp(name, "\0heaptool.1234", 14) == 0,
	    "socket name of 1234 is \\0heaptool.1234, 14 bytes");
	n = ht_proto_socket_name(name, 0);
	ok(n == 11 && memcmp(name, "\0heaptool.0", 11) == 0,
	    "socket name of 0");
	n = ht_proto_socket_name(name, UINT32_MAX);
	ok(n == 20 && n <= HT_PROTO_SOCKET_NAME_MAX &&
		memcmp(name, "\0heaptool.4294967295", 20) == 0,
	    "socket name of the largest pid fits");
}

static void
test_header(void)
{
	struct ht_msg_header h;
	uint8_t b[HT_PROTO_HEADER];

	ht_proto_put_header(b, HT_MSG_PROFILE, 0x01020304);
	ok(memcmp(b, "HTCP", 4) == 0, "magic is \"HTCP\" on the wire");
	is_uint(HT_PROTO_VERSION, get(b + 4, 2), "version at offset 4");
	is_uint(HT_MSG_PROFILE, get(b + 6, 2), "type at offset 6");
	is_uint(0x01020304, get(b + 8, 4), "length at offset 8, LE");
	is_uint(0, get(b + 12, 4), "flags at offset 12 are 0");
	is_int(0, ht_proto_get_header(b, &h), "header decodes");
	ok(h.magic == HT_PROTO_MAGIC && h.version == HT_PROTO_VERSION &&
		h.type == HT_MSG_PROFILE && h.length == 0x01020304 &&
		h.flags == 0,
	    "header round trips");
	b[2] ^= 0x20;
	is_int(-1, ht_proto_get_header(b, &h), "bad magic refused");
	ok(h.version == HT_PROTO_VERSION && h.length == 0x01020304,
	    "bad magic: the rest is still decoded for the caller");
	hdr(b, HT_PROTO_MAGIC, 9, HT_MSG_OK, 0, 7);
	ok(ht_proto_get_header(b, &h) == 0 && h.version == 9 && h.flags == 7,
	    "get_header returns another version and flags as found");
}

static void
test_requests(void)
{
	static const uint16_t types[] = { HT_MSG_HELLO, HT_MSG_STATUS,
		HT_MSG_STOP, HT_MSG_REPORT, HT_MSG_DETACH, HT_MSG_HOOK };
	static const uint64_t rates[] = { 1, 2, 4096, 524288,
		0x0123456789abcdefull, UINT64_MAX };
	struct ht_request r, q;
	static uint8_t b[HT_PROTO_MAX_REQUEST];
	uint8_t h[128];
	size_t i, j, n;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.type = types[i];
		n = ht_proto_encode_request(b, &r);
		ok(n == HT_PROTO_HEADER && get(b + 8, 4) == 0 &&
			get(b + 6, 2) == types[i],
		    "request %u encodes to a bare header", types[i]);
		ok(ht_proto_parse_request(b, n, &q) == 0 &&
			q.type == types[i] && q.rate == 0 && q.flags == 0,
		    "request %u round trips", types[i]);
		hdr(h, HT_PROTO_MAGIC, HT_PROTO_VERSION, types[i], 0, 0);
		ok(ht_proto_parse_request(h, HT_PROTO_HEADER, &q) == 0 &&
			q.type == types[i],
		    "hand-made request %u parses", types[i]);
	}
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (j = 0; j < 2; j++) {
			memset(&r, 0, sizeof(r));
			r.type = HT_MSG_START;
			r.rate = rates[i];
			r.flags = j ? HT_START_RESTART : 0;
			n = ht_proto_encode_request(b, &r);
			ok(n == HT_PROTO_HEADER + 54 && get(b + 8, 4) == 54 &&
				get(b + 16, 8) == rates[i] &&
				get(b + 24, 4) == r.flags &&
				get(b + 28, 8) == 0 && get(b + 68, 2) == 0,
			    "START rate %llu flags %u: layout",
			    (unsigned long long)rates[i], r.flags);
			ok(ht_proto_parse_request(b, n, &q) == 0 &&
				q.type == HT_MSG_START && q.rate == rates[i] &&
				q.flags == r.flags && q.dump_prefix[0] == '\0',
			    "START rate %llu flags %u round trips",
			    (unsigned long long)rates[i], r.flags);
		}
	}

	/* The dump settings, each at its offset, and the prefix. */
	memset(&r, 0, sizeof(r));
	r.type = HT_MSG_START;
	r.rate = 4096;
	r.dump_interval_ms = 0x1111111111111111ull;
	r.dump_every_bytes = 0x2222222222222222ull;
	r.dump_at_rss_bytes = 0x3333333333333333ull;
	r.threshold_bytes = UINT64_MAX;
	snprintf(r.dump_prefix, sizeof(r.dump_prefix), "/tmp/dumps/app");
	n = ht_proto_encode_request(b, &r);
	ok(n == HT_PROTO_HEADER + 54 + 14 && get(b + 8, 4) == 54 + 14 &&
		get(b + 28, 8) == r.dump_interval_ms &&
		get(b + 36, 8) == r.dump_every_bytes &&
		get(b + 44, 8) == r.dump_at_rss_bytes &&
		get(b + 52, 8) == UINT64_MAX && get(b + 68, 2) == 14 &&
		memcmp(b + 70, "/tmp/dumps/app", 14) == 0,
	    "START with dump settings: layout");
	ok(ht_proto_parse_request(b, n, &q) == 0 &&
		q.dump_interval_ms == r.dump_interval_ms &&
		q.dump_every_bytes == r.dump_every_bytes &&
		q.dump_at_rss_bytes == r.dump_at_rss_bytes &&
		q.threshold_bytes == UINT64_MAX &&
		strcmp(q.dump_prefix, "/tmp/dumps/app") == 0,
	    "START with dump settings round trips");
	memset(r.dump_prefix, 'p', HT_PROTO_MAX_PREFIX);
	r.dump_prefix[HT_PROTO_MAX_PREFIX] = '\0';
	n = ht_proto_encode_request(b, &r);
	ok(n == HT_PROTO_HEADER + 54 + HT_PROTO_MAX_PREFIX &&
		n <= HT_PROTO_MAX_REQUEST &&
		ht_proto_parse_request(b, n, &q) == 0 &&
		strlen(q.dump_prefix) == HT_PROTO_MAX_PREFIX,
	    "a prefix of HT_PROTO_MAX_PREFIX bytes round trips");

	hdr(h, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 54 + 2, 0);
	memset(h + 16, 0, 54);
	le(h + 16, 65536, 8);
	le(h + 24, HT_START_RESTART, 4);
	le(h + 28, 500, 8);
	le(h + 68, 2, 2);
	memcpy(h + 70, "/d", 2);
	ok(ht_proto_parse_request(h, 72, &q) == 0 && q.rate == 65536 &&
		q.flags == HT_START_RESTART && q.dump_interval_ms == 500 &&
		strcmp(q.dump_prefix, "/d") == 0,
	    "hand-made START parses");
	le(h + 60, 12345, 8);
	ok(ht_proto_parse_request(h, 72, &q) == 0 && q.max_samples == 12345,
	    "hand-made START: max_samples at 44");
	memset(&r, 0, sizeof(r));
	r.type = HT_MSG_START;
	r.rate = 1;
	r.max_samples = HT_PROTO_MAX_SAMPLES;
	n = ht_proto_encode_request(b, &r);
	ok(get(b + 60, 8) == HT_PROTO_MAX_SAMPLES &&
		ht_proto_parse_request(b, n, &q) == 0 &&
		q.max_samples == HT_PROTO_MAX_SAMPLES,
	    "START max_samples: layout, round trip");
}

static void
test_rejections(void)
{
	static const uint16_t bad_types[] = { 0, 8, 9, 63, HT_MSG_OK,
		HT_MSG_ERR, HT_MSG_STATUS_REPLY, HT_MSG_PROFILE, 68, 0x8001,
		0xffff };
	static const uint32_t bad_flags[] = { 0x8, 0xf, 0x1000, 0x80000000u,
		0xffffffffu };
	static uint8_t big[HT_PROTO_MAX_REQUEST + 64];
	uint8_t b[128];
	size_t i;
	int all;

	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_HELLO, 0, 0);
	for (i = 0, all = 1; i < HT_PROTO_HEADER; i++)
		all &= parse(b, i) == HT_ERR_BAD_REQUEST;
	ok(all, "every truncated header (0..15 bytes) refused");
	for (i = 0, all = 1; i < 4; i++) {
		b[i] ^= 0x01;
		all &= parse(b, HT_PROTO_HEADER) == HT_ERR_BAD_REQUEST;
		b[i] ^= 0x01;
	}
	ok(all, "a flipped bit in any magic byte refused");
	is_int(0, parse(b, HT_PROTO_HEADER), "the unflipped HELLO parses");

	hdr(b, HT_PROTO_MAGIC, 0, HT_MSG_HELLO, 0, 0);
	is_int(HT_ERR_VERSION, parse(b, 16), "version 0: HT_ERR_VERSION");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION + 1, HT_MSG_HELLO, 0, 0);
	is_int(HT_ERR_VERSION, parse(b, 16), "next version: HT_ERR_VERSION");
	hdr(b, HT_PROTO_MAGIC, 0xffff, 200, 40, 9);
	is_int(HT_ERR_VERSION, parse(b, 16),
	    "another version is refused as such whatever its other fields");
	hdr(b, 0x50435449, HT_PROTO_VERSION + 1, HT_MSG_HELLO, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 16),
	    "bad magic wins over another version");

	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_HELLO, 1, 0);
	b[16] = 0;
	is_int(HT_ERR_BAD_REQUEST, parse(b, 17),
	    "HELLO with a one-byte payload refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_REPORT, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 17),
	    "a byte beyond the announced length refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_REPORT, 4, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 16),
	    "an announced payload that is missing refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_STOP, 0xffffffffu, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 16),
	    "length 2^32-1 refused without reading past the buffer");

	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 12, 0);
	le(b + 16, 4096, 8);
	le(b + 24, 0, 4);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 28),
	    "START of protocol 1's 12 bytes refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 46, 0);
	memset(b + 16, 0, 56);
	le(b + 16, 4096, 8);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 62),
	    "START of protocol 2's 46 bytes refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 53, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 69), "START payload 53 refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 55, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 71),
	    "START payload 55 with an empty prefix refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 16), "START without payload");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 54, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 69),
	    "START one byte short of its announced length");
	is_int(0, parse(b, 70), "the same START, whole, parses");
	le(b + 16, 0, 8);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 70), "START rate 0 refused");
	le(b + 16, 1, 8);
	is_int(0, parse(b, 70), "START rate 1 accepted");
	for (i = 0, all = 1; i < sizeof(bad_flags) / sizeof(bad_flags[0]);
	     i++) {
		le(b + 24, bad_flags[i], 4);
		all &= parse(b, 70) == HT_ERR_BAD_REQUEST;
	}
	ok(all, "START with unknown flags refused");
	le(b + 24, HT_START_RESTART | HT_START_FOLLOW | HT_START_NO_FINAL, 4);
	is_int(0, parse(b, 70), "START with RESTART, FOLLOW and NO_FINAL");
	le(b + 24, HT_START_BACKEND(HT_BACKEND_JEMALLOC), 4);
	{
		struct ht_request r;

		ok(ht_proto_parse_request(b, 70, &r) == 0 &&
			HT_START_BACKEND_OF(r.flags) == HT_BACKEND_JEMALLOC,
		    "START with a backend in its flags");
	}
	le(b + 24, 0, 4);
	for (i = 0, all = 1; i < 4; i++) {
		le(b + 28 + 8 * i, 1, 8);
		all &= parse(b, 70) == HT_ERR_BAD_REQUEST;
		le(b + 28 + 8 * i, 0, 8);
	}
	ok(all, "START with a dump setting but no prefix refused");
	le(b + 60, HT_PROTO_MAX_SAMPLES + 1ull, 8);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 70),
	    "START max_samples above HT_PROTO_MAX_SAMPLES refused");
	le(b + 60, 0, 8);
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 54 + 3, 0);
	le(b + 68, 3, 2);
	memcpy(b + 70, "/a\0", 3);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 73), "a prefix with a NUL refused");
	memcpy(b + 70, "/ab", 3);
	is_int(0, parse(b, 73), "the same prefix without it parses");
	le(b + 68, 4, 2);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 73),
	    "a prefix longer than the payload refused");
	le(b + 68, 2, 2);
	is_int(HT_ERR_BAD_REQUEST, parse(b, 73),
	    "a prefix shorter than the payload refused");
	memset(big, 'x', sizeof(big));
	hdr(big, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START,
	    54 + HT_PROTO_MAX_PREFIX + 1, 0);
	memset(big + 16, 0, 54);
	le(big + 16, 1, 8);
	le(big + 68, HT_PROTO_MAX_PREFIX + 1, 2);
	is_int(HT_ERR_BAD_REQUEST, parse(big, 70 + HT_PROTO_MAX_PREFIX + 1),
	    "a prefix of HT_PROTO_MAX_PREFIX + 1 bytes refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_START, 54, 0);
	memset(b + 16, 0, 54);
	le(b + 16, 4096, 8);
	for (i = 0, all = 1; i < 32; i++) {
		le(b + 12, 1u << i, 4);
		all &= parse(b, 70) == HT_ERR_BAD_REQUEST;
	}
	ok(all, "any header flag refused");

	for (i = 0, all = 1; i < sizeof(bad_types) / sizeof(bad_types[0]);
	     i++) {
		hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, bad_types[i], 0, 0);
		if (parse(b, 16) != HT_ERR_BAD_REQUEST) {
			diag("type %u accepted", bad_types[i]);
			all = 0;
		}
	}
	ok(all, "unknown types and reply types refused as requests");

	memset(big, 0, sizeof(big));
	hdr(big, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_HELLO,
	    HT_PROTO_MAX_REQUEST + 1 - HT_PROTO_HEADER, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(big, HT_PROTO_MAX_REQUEST + 1),
	    "a request over HT_PROTO_MAX_REQUEST refused");
	hdr(big, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_HELLO,
	    HT_PROTO_MAX_REQUEST - HT_PROTO_HEADER, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(big, HT_PROTO_MAX_REQUEST),
	    "a HELLO of exactly HT_PROTO_MAX_REQUEST bytes refused (size)");
	hdr(big, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_HELLO, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(big, sizeof(big)),
	    "trailing garbage after a HELLO refused");
}

static void
test_err(void)
{
	uint8_t b[256];
	char msg[64];
	uint32_t code;
	size_t n;

	n = ht_proto_encode_err(b, sizeof(b), HT_ERR_RUNNING,
	    "a session is running");
	ok(n == 16 + 4 + 20 && get(b + 6, 2) == HT_MSG_ERR &&
		get(b + 8, 4) == 24 && get(b + 16, 4) == HT_ERR_RUNNING &&
		memcmp(b + 20, "a session is running", 20) == 0,
	    "ERR layout: header, u32 code, message without NUL");
	ok(ht_proto_decode_err(b + 16, n - 16, &code, msg, sizeof(msg)) == 0 &&
		code == HT_ERR_RUNNING &&
		strcmp(msg, "a session is running") == 0,
	    "ERR round trips");
	ok(ht_proto_decode_err(b + 16, n - 16, &code, NULL, 0) == 0 &&
		code == HT_ERR_RUNNING,
	    "ERR decodes without a message buffer");
	ok(ht_proto_decode_err(b + 16, n - 16, &code, msg, 6) == 0 &&
		strcmp(msg, "a ses") == 0,
	    "decoded message truncated to fit");

	n = ht_proto_encode_err(b, 16 + 4 + 5, HT_ERR_INTERNAL, "hello world");
	ok(n == 25 && get(b + 8, 4) == 9 && memcmp(b + 20, "hello", 5) == 0,
	    "encoded message truncated to the buffer");
	n = ht_proto_encode_err(b, 16 + 4 + 2, HT_ERR_INTERNAL, "a\xc3\xa9");
	ok(n == 21 && b[20] == 'a',
	    "truncation does not split a UTF-8 character");
	n = ht_proto_encode_err(b, 16 + 4 + 3, HT_ERR_INTERNAL, "a\xc3\xa9");
	ok(n == 23 && memcmp(b + 20, "a\xc3\xa9", 3) == 0,
	    "a whole UTF-8 character is kept");
	is_uint(0, ht_proto_encode_err(b, 19, 1, "x"),
	    "no room for the code: 0");
	n = ht_proto_encode_err(b, 20, HT_ERR_NOMEM, "x");
	ok(n == 20 &&
		ht_proto_decode_err(b + 16, 4, &code, msg, sizeof(msg)) == 0 &&
		code == HT_ERR_NOMEM && msg[0] == '\0',
	    "ERR with an empty message");
	n = ht_proto_encode_err(b, sizeof(b), HT_ERR_VERSION, NULL);
	ok(n == 20, "NULL message encodes empty");

	is_int(-1, ht_proto_decode_err(b + 16, 3, &code, msg, sizeof(msg)),
	    "ERR payload shorter than its code refused");
	memcpy(b + 20, "ab\0cd", 5);
	is_int(-1, ht_proto_decode_err(b + 16, 9, &code, msg, sizeof(msg)),
	    "ERR message with a NUL refused");
	memcpy(b + 20, "a\033[2Jb\n", 7);
	ok(ht_proto_decode_err(b + 16, 11, &code, msg, sizeof(msg)) == 0 &&
		strcmp(msg, "a?[2Jb?") == 0,
	    "control characters of the peer never reach the terminal");
}

static void
fill_status(struct ht_status *s)
{
	memset(s, 0, sizeof(*s));
	s->proto_version = HT_PROTO_VERSION;
	s->pid = 4000000001u;
	s->hooked = 1;
	s->slots_patched = 0x01020304;
	s->modules = 17;
	s->state = 2;
	s->epoch = 0x1122334455667788ull;
	s->rate = 524288;
	s->start_ns = 1700000000123456789ull;
	s->samples = 3;
	s->live_samples = 2;
	s->dropped_samples = UINT64_MAX;
	s->overhead_bytes = 1234567;
	s->max_samples = 0x0102030405060708ull;
	s->flags = HT_STATUS_RELEASED;
	strcpy(s->agent_version, "0.1.0");
	s->follow = 1;
	s->parent_pid = 77;
	s->nchildren = 2;
	s->children[0] = 0xa1b2c3d4u;
	s->children[1] = 5;
	s->backend = 3;
	s->coverage_hooked = 0x0a0b0c0d;
	s->coverage_unhooked = 7;
	s->backend_default = HT_BACKEND_JEMALLOC;
	s->backends = 0xa;
	s->backends_present = 0x1a;
	s->rate_asked = 100000;
}

static void
test_status(void)
{
	static struct ht_status s, t;
	static uint8_t b[HT_PROTO_MAX_STATUS];
	size_t n, plen, i, kids;

	fill_status(&s);
	n = ht_proto_encode_status(b, sizeof(b), &s);
	/* Up to the children, then no allocator, allocators_more,
	 * final_armed, no directory, the backend and coverage, then the
	 * dumps: written (count, time, path) and failed (count, time,
	 * errno, path). */
	kids = 6 * 4 + 8 * 8 + 4 + 2 + 5 + 4 + 4 + 2 + 2 * 4;
	plen = kids + 2 + 4 + 4 + 2 + 12 + 20 + 8 + 8 + 2 + 8 + 8 + 4 + 2;
	ok(n == 16 + plen && get(b + 6, 2) == HT_MSG_STATUS_REPLY &&
		get(b + 8, 4) == plen,
	    "STATUS header and length");
	ok(get(b + 16, 4) == HT_PROTO_VERSION && get(b + 20, 4) == s.pid &&
		get(b + 24, 4) == 1 && get(b + 28, 4) == 0x01020304 &&
		get(b + 32, 4) == 17 && get(b + 36, 4) == 2 &&
		get(b + 40, 8) == s.epoch && get(b + 48, 8) == 524288 &&
		get(b + 56, 8) == s.start_ns && get(b + 64, 8) == 3 &&
		get(b + 72, 8) == 2 && get(b + 80, 8) == UINT64_MAX &&
		get(b + 88, 8) == 1234567 &&
		get(b + 96, 8) == 0x0102030405060708ull &&
		get(b + 104, 4) == HT_STATUS_RELEASED && get(b + 108, 2) == 5 &&
		memcmp(b + 110, "0.1.0", 5) == 0 && get(b + 115, 4) == 1 &&
		get(b + 119, 4) == 77 && get(b + 123, 2) == 2 &&
		get(b + 125, 4) == 0xa1b2c3d4u && get(b + 129, 4) == 5 &&
		get(b + 133, 2) == 0 && get(b + 135, 4) == 0 &&
		get(b + 139, 4) == 0 && get(b + 143, 2) == 0 &&
		get(b + 145, 4) == 3 && get(b + 149, 4) == 0x0a0b0c0d &&
		get(b + 153, 4) == 7 &&
		get(b + 157, 4) == HT_BACKEND_JEMALLOC &&
		get(b + 161, 4) == 0xa && get(b + 165, 4) == 0x1a &&
		get(b + 169, 8) == 100000 && get(b + 177, 8) == 0 &&
		get(b + 193, 2) == 0 && get(b + 211, 4) == 0 &&
		get(b + 215, 2) == 0,
	    "STATUS fields in declaration order, little-endian");
	memset(&t, 0x5a, sizeof(t));
	ok(ht_proto_decode_status(b + 16, plen, &t) == 0 &&
		memcmp(&s, &t, sizeof(s)) == 0,
	    "STATUS round trips");
	is_uint(0, ht_proto_encode_status(b, 16 + plen - 1, &s),
	    "STATUS does not fit one byte short: 0");
	is_uint(16 + plen, ht_proto_encode_status(b, 16 + plen, &s),
	    "STATUS fits exactly");

	is_int(-1, ht_proto_decode_status(b + 16, plen - 1, &t),
	    "truncated STATUS refused");
	is_int(-1, ht_proto_decode_status(b + 16, plen + 1, &t),
	    "STATUS with a trailing byte refused");
	is_int(-1, ht_proto_decode_status(b + 16, 93, &t),
	    "STATUS without its version string refused");
	for (i = 1; i <= plen - kids; i++)
		if (ht_proto_decode_status(b + 16, plen - i, &t) != -1)
			break;
	is_uint(plen - kids + 1, i,
	    "a STATUS cut in its allocators, final directory or dumps "
	    "refused (every length)");
	b[108] = 6;
	is_int(-1, ht_proto_decode_status(b + 16, plen, &t),
	    "version length past the payload refused");
	b[108] = 5;
	b[111] = '\n';
	is_int(-1, ht_proto_decode_status(b + 16, plen, &t),
	    "control character in the version refused");
	b[111] = '.';
	is_int(0, ht_proto_decode_status(b + 16, plen, &t),
	    "and the STATUS as it was decodes");

	b[123] = 3;
	is_int(-1, ht_proto_decode_status(b + 16, plen, &t),
	    "a child count past the payload refused");
	b[123] = 1;
	is_int(-1, ht_proto_decode_status(b + 16, plen, &t),
	    "a child count short of the payload refused");
	b[123] = 2;

	s.nchildren = HT_PROTO_MAX_CHILDREN + 5;
	for (i = 0; i < HT_PROTO_MAX_CHILDREN; i++)
		s.children[i] = (uint32_t)(1000 + i);
	n = ht_proto_encode_status(b, sizeof(b), &s);
	ok(n ==
		    16 + 6 * 4 + 8 * 8 + 4 + 2 + 5 + 10 +
			4 * HT_PROTO_MAX_CHILDREN + 12 + 12 + 20 + 40 &&
		ht_proto_decode_status(b + 16, n - 16, &t) == 0 &&
		t.nchildren == HT_PROTO_MAX_CHILDREN &&
		t.children[HT_PROTO_MAX_CHILDREN - 1] ==
		    1000 + HT_PROTO_MAX_CHILDREN - 1,
	    "at most HT_PROTO_MAX_CHILDREN children are sent");
	le(b + 123, HT_PROTO_MAX_CHILDREN + 1, 2);
	is_int(-1, ht_proto_decode_status(b + 16, n - 16 + 4, &t),
	    "more children than HT_PROTO_MAX_CHILDREN refused");
	s.nchildren = 0;

	memset(s.agent_version, 'v', sizeof(s.agent_version));
	n = ht_proto_encode_status(b, sizeof(b), &s);
	ok(n == 16 + 6 * 4 + 8 * 8 + 4 + 2 + 31 + 10 + 12 + 12 + 20 + 40 &&
		ht_proto_decode_status(b + 16, n - 16, &t) == 0 &&
		strlen(t.agent_version) == 31,
	    "an unterminated version is cut at 31 bytes");
	le(b + 108, 32, 2);
	memset(b + 110, 'v', 32);
	memset(b + 142, 0, 10);
	is_int(-1, ht_proto_decode_status(b + 16, 92 + 2 + 32 + 10, &t),
	    "a version of 32 bytes (no room for NUL) refused");
	is_int(-1, ht_proto_decode_status(b + 16, 0, &t), "empty STATUS");

	/* The allocators, the final directory and the dumps' paths, the
	 * longest they hold, with the most children: the largest STATUS. */
	fill_status(&s);
	s.nchildren = HT_PROTO_MAX_CHILDREN;
	s.nallocators = HT_PROTO_MAX_ALLOCATORS;
	for (i = 0; i < HT_PROTO_MAX_ALLOCATORS; i++) {
		s.allocators[i].names = (uint64_t)1 << (i * 7);
		memset(s.allocators[i].path, 'a' + (int)i,
		    HT_PROTO_MAX_ALLOCATOR_PATH);
	}
	s.allocators_more = 5;
	s.final_armed = 1;
	memset(s.final_dir, 'd', HT_PROTO_MAX_FINAL_DIR);
	s.dumps_written = 12;
	s.dump_written_ns = 1700000000987654321ull;
	memset(s.dump_written, 'w', HT_PROTO_MAX_DUMP_PATH);
	s.dumps_failed = 0x0102030405060708ull;
	s.dump_failed_ns = 1700000001000000000ull;
	s.dump_failed_errno = 28;
	memset(s.dump_failed, 'f', HT_PROTO_MAX_DUMP_PATH);
	n = ht_proto_encode_status(b, sizeof(b), &s);
	ok(n != 0 && n <= HT_PROTO_MAX_STATUS,
	    "the largest STATUS fits the agent's buffer (%zu bytes)", n);
	memset(&t, 0x5a, sizeof(t));
	ok(n != 0 && ht_proto_decode_status(b + 16, n - 16, &t) == 0 &&
		memcmp(&s, &t, sizeof(s)) == 0,
	    "and round trips");
	s.nallocators = HT_PROTO_MAX_ALLOCATORS + 3;
	n = ht_proto_encode_status(b, sizeof(b), &s);
	ok(n != 0 && ht_proto_decode_status(b + 16, n - 16, &t) == 0 &&
		t.nallocators == HT_PROTO_MAX_ALLOCATORS,
	    "at most HT_PROTO_MAX_ALLOCATORS allocators are sent");
	fill_status(&s);
	s.nallocators = 1;
	strcpy(s.allocators[0].path, "/bin/x");
	strcpy(s.final_dir, "/d");
	strcpy(s.dump_failed, "/f/x");
	s.dumps_failed = 1;
	n = ht_proto_encode_status(b, sizeof(b), &s);
	b[n - 1] = '\x1b';
	is_int(-1, ht_proto_decode_status(b + 16, n - 16, &t),
	    "control character in a failed dump's path refused");
	b[n - 1] = 'x';
	b[n - 1 - 4 - 40 - 12 - 20] = '\x1b';
	is_int(-1, ht_proto_decode_status(b + 16, n - 16, &t),
	    "control character in the final directory refused");
	b[n - 1 - 4 - 40 - 12 - 20] = 'd';
	ok(ht_proto_decode_status(b + 16, n - 16, &t) == 0 &&
		t.dumps_failed == 1 && strcmp(t.dump_failed, "/f/x") == 0 &&
		strcmp(t.final_dir, "/d") == 0,
	    "a failed dump's path decodes");
	b[16 + kids + 2 + 8 + 2] = '\n';
	is_int(-1, ht_proto_decode_status(b + 16, n - 16, &t),
	    "control character in an allocator's path refused");
	b[16 + kids + 2 + 8 + 2] = '/';
	is_int(0, ht_proto_decode_status(b + 16, n - 16, &t),
	    "and as it was, it decodes");
	le(b + 16 + kids, HT_PROTO_MAX_ALLOCATORS + 1, 2);
	is_int(-1, ht_proto_decode_status(b + 16, n - 16, &t),
	    "more allocators than a STATUS may hold refused");
}

/* Version 8: RECORD, RECSTAT and RECSTAT_REPLY, byte for byte. */
static void
test_record(void)
{
	struct ht_request r, q;
	struct ht_recstat st, su;
	uint8_t b[128];
	size_t n;

	memset(&r, 0, sizeof(r));
	r.type = HT_MSG_RECORD;
	r.rec_max_bytes = 0x0102030405060708ull;
	r.rec_buffer = 4096;
	n = ht_proto_encode_request(b, &r);
	ok(n == HT_PROTO_HEADER + 16 && get(b + 8, 4) == 16 &&
		get(b + 16, 8) == 0x0102030405060708ull &&
		get(b + 24, 4) == 4096 && get(b + 28, 4) == 0,
	    "RECORD: u64 max_bytes, u32 buffer, u32 flags");
	ok(ht_proto_parse_request(b, n, &q) == 0 && q.type == HT_MSG_RECORD &&
		q.rec_max_bytes == r.rec_max_bytes && q.rec_buffer == 4096 &&
		q.flags == 0,
	    "RECORD round trips");
	le(b + 28, 1, 4);
	is_int(HT_ERR_BAD_REQUEST, parse(b, n), "RECORD with flags refused");
	le(b + 28, 0, 4);
	le(b + 24, HT_PROTO_MAX_REC_BUFFER + 1, 4);
	is_int(HT_ERR_BAD_REQUEST, parse(b, n),
	    "RECORD with a buffer past the bound refused");
	le(b + 24, HT_PROTO_MAX_REC_BUFFER, 4);
	is_int(0, parse(b, n), "RECORD at the bound parses");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_RECORD, 15, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, HT_PROTO_HEADER + 15),
	    "RECORD one byte short refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_RECORD, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, HT_PROTO_HEADER),
	    "RECORD without its payload refused");

	memset(&r, 0, sizeof(r));
	r.type = HT_MSG_RECSTAT;
	r.flags = HT_RECSTAT_STOP;
	n = ht_proto_encode_request(b, &r);
	ok(n == HT_PROTO_HEADER + 4 && get(b + 16, 4) == HT_RECSTAT_STOP &&
		ht_proto_parse_request(b, n, &q) == 0 &&
		q.type == HT_MSG_RECSTAT && q.flags == HT_RECSTAT_STOP,
	    "RECSTAT STOP round trips");
	le(b + 16, 2, 4);
	is_int(HT_ERR_BAD_REQUEST, parse(b, n),
	    "RECSTAT with an unknown flag refused");
	hdr(b, HT_PROTO_MAGIC, HT_PROTO_VERSION, HT_MSG_RECSTAT, 0, 0);
	is_int(HT_ERR_BAD_REQUEST, parse(b, HT_PROTO_HEADER),
	    "RECSTAT without its flags refused");

	memset(&st, 0, sizeof(st));
	st.state = HT_RECORD_FAILED;
	st.lost_why = 28;
	st.events = 1000000;
	st.bytes = 48000123;
	st.lost = 77;
	st.waits = 5;
	st.threads = 9;
	n = ht_proto_encode_recstat(b, sizeof(b), &st);
	ok(n == HT_PROTO_HEADER + 48 && get(b + 6, 2) == HT_MSG_RECSTAT_REPLY &&
		get(b + 16, 4) == HT_RECORD_FAILED && get(b + 20, 4) == 28 &&
		get(b + 24, 8) == 1000000 && get(b + 32, 8) == 48000123 &&
		get(b + 40, 8) == 77 && get(b + 48, 8) == 5 &&
		get(b + 56, 4) == 9 && get(b + 60, 4) == 0,
	    "RECSTAT_REPLY: its fields in order");
	ok(ht_proto_decode_recstat(b + 16, 48, &su) == 0 &&
		memcmp(&st, &su, sizeof(st)) == 0,
	    "RECSTAT_REPLY round trips");
	is_int(0, (int)ht_proto_encode_recstat(b, HT_PROTO_HEADER + 47, &st),
	    "RECSTAT_REPLY does not fit a short buffer");
	is_int(-1, ht_proto_decode_recstat(b + 16, 47, &su),
	    "a short RECSTAT_REPLY is refused");
	le(b + 60, 1, 4);
	is_int(-1, ht_proto_decode_recstat(b + 16, 48, &su),
	    "a RECSTAT_REPLY whose padding is not 0 is refused");
	le(b + 60, 0, 4);
	le(b + 16, HT_RECORD_FAILED + 1, 4);
	is_int(-1, ht_proto_decode_recstat(b + 16, 48, &su),
	    "a RECSTAT_REPLY of an unknown state is refused");
}

int
main(void)
{
	plan(0);
	test_socket_name();
	test_header();
	test_requests();
	test_rejections();
	test_err();
	test_status();
	test_record();
	return 0;
}
