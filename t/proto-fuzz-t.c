/*
 * The protocol's fuzz harness (t/fuzz/proto-fuzz.c) in make check, without
 * libFuzzer: a fixed-seed mutation loop over valid requests and replies (bit
 * flips, byte changes, inserts, deletes, splices, truncations, random
 * lengths, and header fields set to edge values with a consistent length so
 * that the payload checks are reached), for a fixed number of inputs:
 * HT_FUZZ_INPUTS, default FUZZ_INPUTS, a few seconds on a small machine.  A
 * count, not a time budget, so that what make check covers is the same on
 * every machine: the same seed gives the same inputs.  Longer runs set
 * HT_FUZZ_INPUTS (make fuzz runs libFuzzer); HT_FUZZ_SEED changes the
 * seed.  Each input is placed right before an inaccessible page, so a read
 * past its end crashes the test.  The harness checks the properties and
 * calls fuzz_failed() on a violation; this file checks that the loop really
 * reached every kind of outcome.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "proto.h"

#define MAXIN	    (HT_PROTO_MAX_REQUEST + 128)
#define FUZZ_INPUTS 1000000
#define NSEEDS	    64
#define POOL	    64

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
extern unsigned long fuzz_accepted[HT_MSG_RECSTAT + 1];
extern unsigned long fuzz_refused, fuzz_version, fuzz_err_ok, fuzz_status_ok;
extern unsigned long fuzz_recstat_ok;
void fuzz_failed(const char *what, const uint8_t *data, size_t size);

struct input {
	uint8_t b[MAXIN];
	size_t n;
};

static struct input seeds[NSEEDS], pool[POOL];
static size_t nseeds, npool;
static uint64_t rng;
static uint8_t *area; /* data pages, then a PROT_NONE page */
static size_t area_data;

void
fuzz_failed(const char *what, const uint8_t *data, size_t size)
{
	char line[3 * 32 + 1];
	size_t i, j;

	diag("harness check failed: %s; input of %zu bytes:", what, size);
	for (i = 0; i < size && i < 512; i += 32) {
		for (j = 0; j < 32 && i + j < size; j++)
			snprintf(line + 3 * j, 4, " %02x", data[i + j]);
		diag("%s", line);
	}
	bail("protocol fuzz property violated: %s", what);
}

static uint64_t
next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static size_t
below(size_t n)
{
	return n == 0 ? 0 : (size_t)(next() % n);
}

static void
le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
add_seed(const uint8_t *b, size_t n)
{
	if (nseeds == NSEEDS || n > MAXIN)
		bail("too many seeds");
	memcpy(seeds[nseeds].b, b, n);
	seeds[nseeds++].n = n;
}

static void
make_seeds(void)
{
	static const uint64_t rates[] = { 1, 2, 4096, 524288, UINT64_MAX };
	static struct ht_request r;
	struct ht_status s;
	static uint8_t b[HT_PROTO_MAX_STATUS];
	size_t i, n;

	for (i = HT_MSG_HELLO; i <= HT_MSG_RECSTAT; i++) {
		memset(&r, 0, sizeof(r));
		r.type = (uint16_t)i;
		if (i == HT_MSG_START) {
			size_t k;

			for (k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
				r.rate = rates[k];
				r.flags = k & 1 ? HT_START_RESTART : 0;
				if (k == 2)
					r.flags |= HT_START_FOLLOW;
				n = ht_proto_encode_request(b, &r);
				add_seed(b, n);
			}
			/* With dump settings and prefixes of a few
			 * lengths, up to the longest. */
			r.dump_interval_ms = 1000;
			r.dump_every_bytes = 1 << 20;
			r.dump_at_rss_bytes = 1ull << 30;
			r.threshold_bytes = 4096;
			strcpy(r.dump_prefix, "/tmp/heaptool/app");
			add_seed(b, ht_proto_encode_request(b, &r));
			r.dump_interval_ms = r.dump_every_bytes = 0;
			r.dump_at_rss_bytes = r.threshold_bytes = 0;
			strcpy(r.dump_prefix, "/");
			add_seed(b, ht_proto_encode_request(b, &r));
			memset(r.dump_prefix, 'q', HT_PROTO_MAX_PREFIX);
			r.dump_prefix[0] = '/';
			r.dump_prefix[HT_PROTO_MAX_PREFIX] = '\0';
			add_seed(b, ht_proto_encode_request(b, &r));
			continue;
		}
		if (i == HT_MSG_RECORD) {
			r.rec_max_bytes = 1 << 20;
			r.rec_buffer = 8;
			add_seed(b, ht_proto_encode_request(b, &r));
			r.rec_max_bytes = 0;
			r.rec_buffer = HT_PROTO_MAX_REC_BUFFER;
		}
		if (i == HT_MSG_RECSTAT) {
			r.flags = HT_RECSTAT_STOP;
			add_seed(b, ht_proto_encode_request(b, &r));
			r.flags = 0;
		}
		add_seed(b, ht_proto_encode_request(b, &r));
	}
	{
		struct ht_recstat rs = { HT_RECORD_FULL, 0, 123456, 1 << 21, 0,
			17, 9 };

		add_seed(b, ht_proto_encode_recstat(b, sizeof(b), &rs));
		rs.state = HT_RECORD_FAILED;
		rs.lost_why = 28;
		rs.lost = 4096;
		add_seed(b, ht_proto_encode_recstat(b, sizeof(b), &rs));
	}
	add_seed(b,
	    ht_proto_encode_err(b, sizeof(b), HT_ERR_RUNNING,
		"a session is running"));
	add_seed(b,
	    ht_proto_encode_err(b, sizeof(b), HT_ERR_VERSION,
		"this agent speaks protocol 1 \xc3\xa9"));
	add_seed(b, ht_proto_encode_err(b, sizeof(b), HT_ERR_INTERNAL, ""));
	memset(&s, 0, sizeof(s));
	s.proto_version = HT_PROTO_VERSION;
	s.pid = 4242;
	s.hooked = 1;
	s.slots_patched = 12;
	s.modules = 7;
	s.state = 1;
	s.epoch = 3;
	s.rate = 524288;
	s.overhead_bytes = 1 << 20;
	strcpy(s.agent_version, "0.1.0");
	add_seed(b, ht_proto_encode_status(b, sizeof(b), &s));
	strcpy(s.agent_version, "");
	add_seed(b, ht_proto_encode_status(b, sizeof(b), &s));
	s.follow = 1;
	s.parent_pid = 4241;
	s.nchildren = 3;
	s.children[0] = 4300;
	s.children[1] = 4299;
	s.children[2] = 4250;
	add_seed(b, ht_proto_encode_status(b, sizeof(b), &s));
	/* The allocators and the final profile's directory. */
	s.nallocators = 2;
	s.allocators[0].names = 0xf;
	strcpy(s.allocators[0].path, "/usr/bin/own-malloc");
	s.allocators[1].names = 1u << 14;
	strcpy(s.allocators[1].path, "/usr/lib/libmimalloc.so.2");
	s.allocators_more = 3;
	s.final_armed = 1;
	strcpy(s.final_dir, "/home/u/.local/state/heaptool");
	add_seed(b, ht_proto_encode_status(b, sizeof(b), &s));
	/* The dumps, written and failed. */
	s.dumps_written = 4;
	s.dump_written_ns = 1700000000000000000ull;
	strcpy(s.dump_written, "/var/tmp/app.4242.4.heap");
	s.dumps_failed = 2;
	s.dump_failed_ns = 1700000005000000000ull;
	s.dump_failed_errno = 28;
	strcpy(s.dump_failed, "/var/tmp/app.4242.6.heap");
	add_seed(b, ht_proto_encode_status(b, sizeof(b), &s));
	/* Another version, and a long request. */
	memset(&r, 0, sizeof(r));
	r.type = HT_MSG_HELLO;
	n = ht_proto_encode_request(b, &r);
	le(b + 4, HT_PROTO_VERSION + 1, 2);
	add_seed(b, n);
	memset(b, 0, 512);
	ht_proto_put_header(b, HT_MSG_HELLO, 512 - HT_PROTO_HEADER);
	add_seed(b, 512);
}

static void
fix_length(struct input *in)
{
	if (in->n >= HT_PROTO_HEADER)
		le(in->b + 8, in->n - HT_PROTO_HEADER, 4);
}

static void
mutate(struct input *in)
{
	static const uint16_t types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 63, 64, 65,
		66, 67, 68, 0xffff };
	static const uint64_t vals[] = { 0, 1, 2, 0x7f, 0x80, 0xff, 0xffff,
		0x10000, 0x7fffffff, 0xffffffff, UINT64_MAX };
	const struct input *o;
	size_t k, at, len;

	switch (next() % 11) {
	case 0: /* flip bits */
		for (k = 1 + below(4); k > 0 && in->n > 0; k--)
			in->b[below(in->n)] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* set bytes */
		for (k = 1 + below(4); k > 0 && in->n > 0; k--)
			in->b[below(in->n)] = (uint8_t)next();
		break;
	case 2: /* insert */
		len = 1 + below(8);
		if (in->n + len > MAXIN)
			break;
		at = below(in->n + 1);
		memmove(in->b + at + len, in->b + at, in->n - at);
		for (k = 0; k < len; k++)
			in->b[at + k] = (uint8_t)next();
		in->n += len;
		break;
	case 3: /* delete */
		if (in->n == 0)
			break;
		at = below(in->n);
		len = 1 + below(in->n - at < 8 ? in->n - at : 8);
		memmove(in->b + at, in->b + at + len, in->n - at - len);
		in->n -= len;
		break;
	case 4: /* splice with a seed or a pooled input */
		o = npool > 0 && (next() & 1) ? &pool[below(npool)] :
						&seeds[below(nseeds)];
		at = below(in->n + 1);
		k = below(o->n + 1);
		if (at + (o->n - k) > MAXIN)
			break;
		memcpy(in->b + at, o->b + k, o->n - k);
		in->n = at + (o->n - k);
		break;
	case 5: /* truncate */
		in->n = below(in->n + 1);
		break;
	case 6: /* extend to a random length */
		len = below(MAXIN + 1);
		for (k = in->n; k < len; k++)
			in->b[k] = (uint8_t)(next() & 1 ? next() : 0);
		if (len > in->n)
			in->n = len;
		break;
	case 7: /* a consistent length, to reach the payload */
		fix_length(in);
		break;
	case 8: /* header fields at edge values */
		if (in->n < HT_PROTO_HEADER)
			break;
		switch (next() % 4) {
		case 0:
			le(in->b + 6,
			    types[below(sizeof(types) / sizeof(types[0]))], 2);
			break;
		case 1:
			le(in->b + 4, below(HT_PROTO_VERSION + 2), 2);
			break;
		case 2:
			le(in->b + 12,
			    vals[below(sizeof(vals) / sizeof(vals[0]))], 4);
			break;
		default:
			le(in->b + 8,
			    vals[below(sizeof(vals) / sizeof(vals[0]))], 4);
			break;
		}
		break;
	case 9: /* START payload fields at edge values */
		if (in->n < HT_PROTO_HEADER + 46)
			break;
		switch (next() % 4) {
		case 0: /* rate, or a dump setting */
			le(in->b + 16 + 12 * (next() & 1) + 8 * below(4),
			    vals[below(sizeof(vals) / sizeof(vals[0]))], 8);
			break;
		case 1:
			le(in->b + 24,
			    vals[below(sizeof(vals) / sizeof(vals[0]))], 4);
			break;
		case 2: /* the prefix's length, near the payload's */
			le(in->b + 60, (in->n - 62 + below(3) - 1) & 0xffff, 2);
			break;
		default: /* a NUL, or a slash, in the prefix */
			if (in->n > 62)
				in->b[62 + below(in->n - 62)] =
				    next() & 1 ? 0 : '/';
			break;
		}
		break;
	default: /* start over from a seed */
		*in = seeds[below(nseeds)];
		break;
	}
}

/* Run one input from memory that ends where an inaccessible page begins. */
static void
run(const struct input *in)
{
	uint8_t *p = area + area_data - in->n;

	memcpy(p, in->b, in->n);
	LLVMFuzzerTestOneInput(p, in->n);
}

int
main(void)
{
	struct input in;
	const char *e;
	unsigned long iters, inputs = FUZZ_INPUTS, accepted = 0, before;
	uint64_t seed = 0x5eed0fc0de15ull;
	size_t i, page = (size_t)sysconf(_SC_PAGESIZE);
	int all;

	plan(0);
	if ((e = getenv("HT_FUZZ_INPUTS")) != NULL && *e != '\0')
		inputs = strtoul(e, NULL, 10);
	if ((e = getenv("HT_FUZZ_SEED")) != NULL && *e != '\0')
		seed = strtoull(e, NULL, 0);
	rng = seed != 0 ? seed : 1;
	diag("seed %#llx, %lu inputs", (unsigned long long)seed, inputs);

	area_data = (MAXIN + page - 1) / page * page;
	area = mmap(NULL, area_data + page, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED ||
	    mprotect(area + area_data, page, PROT_NONE) != 0)
		bail("cannot map the input area");

	make_seeds();
	for (i = 0; i < nseeds; i++)
		run(&seeds[i]);
	for (i = HT_MSG_HELLO, all = 1; i <= HT_MSG_RECSTAT; i++)
		all &= fuzz_accepted[i] > 0;
	ok(all && fuzz_err_ok > 0 && fuzz_status_ok > 0 && fuzz_version > 0 &&
		fuzz_recstat_ok > 0,
	    "every seed gives its expected outcome");
	for (i = HT_MSG_HELLO; i <= HT_MSG_RECSTAT; i++)
		fuzz_accepted[i] = 0;
	fuzz_err_ok = fuzz_status_ok = fuzz_version = fuzz_refused = 0;
	fuzz_recstat_ok = 0;

	in = seeds[0];
	for (iters = 0; iters < inputs; iters++) {
		if (below(4) == 0)
			in = npool > 0 && (next() & 1) ? pool[below(npool)] :
							 seeds[below(nseeds)];
		for (i = 1 + below(4); i > 0; i--)
			mutate(&in);
		before = fuzz_err_ok + fuzz_status_ok + fuzz_recstat_ok;
		for (i = HT_MSG_HELLO; i <= HT_MSG_RECSTAT; i++)
			before += fuzz_accepted[i];
		run(&in);
		accepted = fuzz_err_ok + fuzz_status_ok + fuzz_recstat_ok;
		for (i = HT_MSG_HELLO; i <= HT_MSG_RECSTAT; i++)
			accepted += fuzz_accepted[i];
		/* Keep what some decoder took: mutations of it probe the
		 * edges of what is accepted. */
		if (accepted != before) {
			if (npool < POOL)
				pool[npool++] = in;
			else
				pool[below(POOL)] = in;
		}
	}

	accepted = 0;
	for (i = HT_MSG_HELLO; i <= HT_MSG_RECSTAT; i++)
		accepted += fuzz_accepted[i];
	diag("%lu inputs: %lu requests accepted, %lu refused, %lu other "
	     "version; %lu ERR and %lu STATUS payloads decoded",
	    iters, accepted, fuzz_refused, fuzz_version, fuzz_err_ok,
	    fuzz_status_ok);
	ok(iters > 0, "%lu mutated inputs, no crash, no property violated",
	    iters);
	for (i = HT_MSG_HELLO, all = 1; i <= HT_MSG_RECSTAT; i++)
		all &= fuzz_accepted[i] > 0;
	ok(all,
	    "mutated requests of every type were accepted and "
	    "re-encoded to the same bytes");
	ok(fuzz_refused > 0, "malformed requests were refused");
	ok(fuzz_version > 0, "requests of other versions got HT_ERR_VERSION");
	ok(fuzz_err_ok > 0, "mutated ERR payloads decoded and round tripped");
	ok(fuzz_status_ok > 0,
	    "mutated STATUS payloads decoded and round tripped");
	ok(fuzz_recstat_ok > 0,
	    "mutated RECSTAT payloads decoded and round tripped");
	return 0;
}
