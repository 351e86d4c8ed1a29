/*
 * Fuzz harness for the control protocol (src/proto.c): the agent's request
 * parser, which reads what any local client sends into the target, and the
 * CLI's reply decoders.  Built two ways:
 *   - with libFuzzer by make fuzz (configure --enable-fuzz CC=clang), under
 *     ASan and UBSan;
 *   - with -DHT_FUZZ_STANDALONE into t/proto-fuzz-t, a plain make check
 *     test whose own mutation loop calls LLVMFuzzerTestOneInput and reads
 *     the counters below.
 * Properties: nothing crashes or reads outside the input; the parser
 * answers 0, HT_ERR_BAD_REQUEST or HT_ERR_VERSION; an accepted START has a
 * terminated dump prefix of at most HT_PROTO_MAX_PREFIX bytes and no dump
 * setting without one; every accepted request
 * re-encodes to exactly the input bytes (the parser accepts one encoding per
 * request, so nothing it accepts is ambiguous) and parses again to the same
 * request; every decoded ERR or STATUS re-encodes and decodes to the same
 * values (STATUS to the same bytes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#ifdef HT_FUZZ_STANDALONE
unsigned long fuzz_accepted[HT_MSG_RECSTAT + 1]; /* by type */
unsigned long fuzz_refused, fuzz_version, fuzz_err_ok, fuzz_status_ok;
unsigned long fuzz_recstat_ok;
void fuzz_failed(const char *what, const uint8_t *data, size_t size);
#define FAIL(what) fuzz_failed(what, data, size)
#define COUNT(x)   ((x)++)
#else
#define FAIL(what) ((void)data, (void)size, abort())
#define COUNT(x)   ((void)0)
#endif

static int
same_request(const struct ht_request *a, const struct ht_request *b)
{
	return a->type == b->type && a->rate == b->rate &&
	    a->flags == b->flags &&
	    a->dump_interval_ms == b->dump_interval_ms &&
	    a->dump_every_bytes == b->dump_every_bytes &&
	    a->dump_at_rss_bytes == b->dump_at_rss_bytes &&
	    a->threshold_bytes == b->threshold_bytes &&
	    a->rec_max_bytes == b->rec_max_bytes &&
	    a->rec_buffer == b->rec_buffer &&
	    strcmp(a->dump_prefix, b->dump_prefix) == 0;
}

static void
fuzz_request(const uint8_t *data, size_t size)
{
	static struct ht_request r, q;
	static uint8_t out[HT_PROTO_MAX_REQUEST];
	size_t n, pl;
	int rc;

	rc = ht_proto_parse_request(data, size, &r);
	if (rc == HT_ERR_BAD_REQUEST) {
		COUNT(fuzz_refused);
		return;
	}
	if (rc == HT_ERR_VERSION) {
		COUNT(fuzz_version);
		return;
	}
	if (rc != 0)
		FAIL("parser returned an unknown code");
	if (r.type < HT_MSG_HELLO || r.type > HT_MSG_RECSTAT)
		FAIL("parser accepted an unknown type");
	pl = strnlen(r.dump_prefix, sizeof(r.dump_prefix));
	if (pl > HT_PROTO_MAX_PREFIX)
		FAIL("parser left the dump prefix unterminated");
	if (r.type == HT_MSG_START ?
		r.rate == 0 || (r.flags & ~(uint32_t)HT_START_FLAGS) != 0 ||
		    (pl == 0 &&
			(r.dump_interval_ms | r.dump_every_bytes |
			    r.dump_at_rss_bytes | r.threshold_bytes) != 0) :
		r.rate != 0 ||
		    (r.type == HT_MSG_RECSTAT ?
			    (r.flags & ~(uint32_t)HT_RECSTAT_STOP) != 0 :
			    r.flags != 0) ||
		    pl != 0 || r.dump_interval_ms != 0 ||
		    r.dump_every_bytes != 0 || r.dump_at_rss_bytes != 0 ||
		    r.threshold_bytes != 0)
		FAIL("parser accepted bad START fields");
	if (r.type == HT_MSG_RECORD ? r.rec_buffer > HT_PROTO_MAX_REC_BUFFER :
				      r.rec_buffer != 0 || r.rec_max_bytes != 0)
		FAIL("parser accepted bad RECORD fields");
	n = ht_proto_encode_request(out, &r);
	if (n != size || memcmp(out, data, n) != 0)
		FAIL("accepted request re-encodes to other bytes");
	if (ht_proto_parse_request(out, n, &q) != 0 || !same_request(&r, &q))
		FAIL("re-encoded request parses differently");
#ifdef HT_FUZZ_STANDALONE
	fuzz_accepted[r.type]++;
#endif
}

static void
fuzz_err(const uint8_t *data, size_t size, const uint8_t *p, size_t len)
{
	uint8_t out[HT_PROTO_HEADER + 4 + 512];
	char msg[300], msg2[300], tiny[2];
	uint32_t code, code2;
	size_t n;

	if (ht_proto_decode_err(p, len, &code, msg, sizeof(msg)) != 0)
		return;
	if (ht_proto_decode_err(p, len, &code2, NULL, 0) != 0 || code2 != code)
		FAIL("ERR decodes differently without a message buffer");
	memset(tiny, 'x', sizeof(tiny));
	if (ht_proto_decode_err(p, len, &code2, tiny, sizeof(tiny)) != 0 ||
	    strnlen(tiny, sizeof(tiny)) != (len > 4 ? 1u : 0u))
		FAIL("ERR message not truncated to a small buffer");
	if (strlen(msg) !=
	    (len - 4 < sizeof(msg) - 1 ? len - 4 : sizeof(msg) - 1))
		FAIL("decoded ERR message has the wrong length");
	n = ht_proto_encode_err(out, sizeof(out), code, msg);
	if (n < HT_PROTO_HEADER + 4 ||
	    ht_proto_decode_err(out + HT_PROTO_HEADER, n - HT_PROTO_HEADER,
		&code2, msg2, sizeof(msg2)) != 0 ||
	    code2 != code || strcmp(msg, msg2) != 0)
		FAIL("ERR does not round trip");
	COUNT(fuzz_err_ok);
}

static void
fuzz_status(const uint8_t *data, size_t size, const uint8_t *p, size_t len)
{
	static struct ht_status s, t;
	static uint8_t out[HT_PROTO_MAX_REQUEST];
	size_t n;

	if (ht_proto_decode_status(p, len, &s) != 0)
		return;
	if (s.agent_version[sizeof(s.agent_version) - 1] != '\0' ||
	    s.final_dir[sizeof(s.final_dir) - 1] != '\0')
		FAIL("decoded agent version or final directory not "
		     "terminated");
	n = ht_proto_encode_status(out, sizeof(out), &s);
	if (n != HT_PROTO_HEADER + len ||
	    memcmp(out + HT_PROTO_HEADER, p, len) != 0)
		FAIL("decoded STATUS re-encodes to other bytes");
	if (ht_proto_decode_status(out + HT_PROTO_HEADER, len, &t) != 0 ||
	    memcmp(&s, &t, sizeof(s)) != 0)
		FAIL("STATUS does not round trip");
	COUNT(fuzz_status_ok);
}

static void
fuzz_recstat(const uint8_t *data, size_t size, const uint8_t *p, size_t len)
{
	struct ht_recstat s, t;
	uint8_t out[HT_PROTO_HEADER + 64];
	size_t n;

	if (ht_proto_decode_recstat(p, len, &s) != 0)
		return;
	if (s.state > HT_RECORD_FAILED)
		FAIL("RECSTAT decoded an unknown state");
	n = ht_proto_encode_recstat(out, sizeof(out), &s);
	if (n != HT_PROTO_HEADER + len ||
	    memcmp(out + HT_PROTO_HEADER, p, len) != 0)
		FAIL("decoded RECSTAT re-encodes to other bytes");
	if (ht_proto_decode_recstat(out + HT_PROTO_HEADER, len, &t) != 0 ||
	    memcmp(&s, &t, sizeof(s)) != 0)
		FAIL("RECSTAT does not round trip");
	COUNT(fuzz_recstat_ok);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_msg_header h;

	fuzz_request(data, size);
	/* The decoders see payloads: the whole input, and what follows a
	 * header, as the CLI hands them over. */
	fuzz_err(data, size, data, size);
	fuzz_status(data, size, data, size);
	fuzz_recstat(data, size, data, size);
	if (size >= HT_PROTO_HEADER) {
		(void)ht_proto_get_header(data, &h);
		fuzz_err(data, size, data + HT_PROTO_HEADER,
		    size - HT_PROTO_HEADER);
		fuzz_status(data, size, data + HT_PROTO_HEADER,
		    size - HT_PROTO_HEADER);
		fuzz_recstat(data, size, data + HT_PROTO_HEADER,
		    size - HT_PROTO_HEADER);
	}
	return 0;
}
