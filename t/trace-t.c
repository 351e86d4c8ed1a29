/*
 * The trace format (src/trace.h): what the writer encodes the reader
 * gives back, field by field; each thread's events in its order, however
 * its chunks interleave with other threads'; a trace cut short reads as
 * incomplete, never as whole; a damaged one, a second INFO, events of an
 * unnamed thread, an unknown op and a later version are refused; a chunk
 * of an unknown type is skipped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "crc32.h"
#include "trace.h"

static uint8_t buf[1 << 16];
static size_t len;

static void
put(size_t n)
{
	if (n == 0)
		bail("a chunk did not fit");
	len += n;
}

static struct ht_trace_event
ev(uint64_t seq, uint64_t ref, uint64_t size, unsigned op)
{
	struct ht_trace_event e = { .seq = seq,
		.t_ns = seq * 10,
		.ref = ref,
		.size = size,
		.usable_over = 8,
		.site = 3,
		.tag = 2,
		.fn = 1,
		.op = (uint8_t)op };

	return e;
}

static void
events(uint32_t thread, const struct ht_trace_event *e, uint32_t n)
{
	uint32_t i;

	put(ht_tw_events_head(buf + len, sizeof(buf) - len, thread, n));
	for (i = 0; i < n; i++)
		put(ht_tw_event(buf + len, sizeof(buf) - len, &e[i]));
}

static void
end(uint64_t nev)
{
	struct ht_trace_end e = { .events = nev,
		.threads = 2,
		.duration_ns = 12345,
		.agent_bytes = 1 << 20,
		.waits = 4 };

	put(ht_tw_end(buf + len, sizeof(buf) - len, &e, ht_crc32(0, buf, len)));
}

/* A trace of two threads: thread 1 allocates, thread 2 frees one of its
 * blocks and reallocates its own; their chunks interleave. */
static void
build(int with_end)
{
	struct ht_trace_info in = { .pid = 42,
		.page_size = 4096,
		.realtime_ns = 7,
		.mono_ns = 9,
		.live_entry_bytes = 48,
		.site_entry_bytes = 600,
		.command = "prog --arg" };
	struct ht_trace_event a[2] = { ev(1, 0, 100, HT_TROP_MALLOC),
		ev(3, 0, 16, HT_TROP_NEW) };
	struct ht_trace_event b[2] = { ev(2, 0, 50, HT_TROP_CALLOC),
		ev(4, 1, 0, HT_TROP_FREE) };
	struct ht_trace_event c[1] = { ev(5, 2, 500, HT_TROP_REALLOC) };

	len = 0;
	put(ht_tw_header(buf, sizeof(buf)));
	put(ht_tw_info(buf + len, sizeof(buf) - len, &in));
	put(ht_tw_func(buf + len, sizeof(buf) - len, 1, "malloc"));
	put(ht_tw_thread(buf + len, sizeof(buf) - len, 1, 1001, "main"));
	put(ht_tw_thread(buf + len, sizeof(buf) - len, 2, 1002, "worker"));
	put(ht_tw_module(buf + len, sizeof(buf) - len, 0x1000, 0x2000, 0,
	    "/bin/prog"));
	put(ht_tw_site(buf + len, sizeof(buf) - len, 3, 0x1234));
	put(ht_tw_tag(buf + len, sizeof(buf) - len, 2, "cache"));
	events(1, a, 2);
	events(2, b, 2);
	events(2, c, 1);
	if (with_end)
		end(5);
}

int
main(void)
{
	char err[256];
	struct ht_trace *t;
	uint8_t copy[sizeof(buf)];
	size_t whole;

	plan(28);

	build(1);
	t = ht_trace_decode(buf, len, err, sizeof(err));
	if (t == NULL)
		bail("decode: %s", err);
	ok(t->complete, "a whole trace reads as complete");
	is_uint(42, t->info.pid, "INFO's pid");
	is_uint(48, t->info.live_entry_bytes, "INFO's live entry bytes");
	is_string("prog --arg", t->command, "INFO's command");
	is_uint(2, t->nthreads, "two threads");
	is_string("worker", t->threads[1].name, "the second thread's name");
	is_uint(1002, t->threads[1].tid, "its tid");
	is_uint(5, t->nevents, "five events in all");
	is_uint(3, t->threads[1].nev, "thread 2 has its three events");
	ok(t->threads[1].ev[0].seq == 2 && t->threads[1].ev[1].seq == 4 &&
		t->threads[1].ev[2].seq == 5,
	    "in the order it made them, across its chunks");
	ok(t->threads[1].ev[1].ref == 1 &&
		t->threads[1].ev[1].op == HT_TROP_FREE,
	    "the cross-thread free names its block");
	ok(t->threads[0].ev[1].usable_over == 8 &&
		t->threads[0].ev[1].site == 3 && t->threads[0].ev[1].tag == 2 &&
		t->threads[0].ev[1].fn == 1 && t->threads[0].ev[1].t_ns == 30,
	    "every field of an event comes back");
	is_string("cache", ht_trace_tag_name(t, 2), "the tag's name");
	is_string("malloc", ht_trace_func_name(t, 1), "the function's name");
	ok(ht_trace_site(t, 3) != NULL && ht_trace_site(t, 3)->addr == 0x1234,
	    "the site's address");
	is_string("/bin/prog", t->modules[0].path, "the module's path");
	ok(t->end.waits == 4 && t->end.agent_bytes == 1 << 20, "END's figures");
	ht_trace_free(t);
	whole = len;

	/* Cut short: every length short of the whole reads, incomplete. */
	{
		size_t cut;
		int all_incomplete = 1, all_read = 1;

		for (cut = 16 + ht_tw_chunk_size(32 + 11); cut < whole; cut++) {
			t = ht_trace_decode(buf, cut, err, sizeof(err));
			if (t == NULL) {
				all_read = 0;
				diag("cut at %zu: %s", cut, err);
				continue;
			}
			if (t->complete)
				all_incomplete = 0;
			ht_trace_free(t);
		}
		ok(all_read, "a trace cut anywhere past INFO still reads");
		ok(all_incomplete, "and never as complete");
	}
	build(0);
	t = ht_trace_decode(buf, len, err, sizeof(err));
	ok(t != NULL && !t->complete && strstr(t->incomplete_why, "no END"),
	    "without END it says so");
	ht_trace_free(t);

	/* Damage. */
	build(1);
	memcpy(copy, buf, len);
	copy[200] ^= 1;
	t = ht_trace_decode(copy, len, err, sizeof(err));
	ok(t == NULL && strstr(err, "checksum") != NULL,
	    "a flipped byte fails the checksum: %s", err);
	ht_trace_free(t);

	memcpy(copy, buf, len);
	copy[8] = 2;
	t = ht_trace_decode(copy, len, err, sizeof(err));
	ok(t == NULL && strstr(err, "version 2") != NULL, "version 2 refused");
	ht_trace_free(t);

	/* An unknown op: thread 1's first event's op byte. */
	build(0);
	{
		struct ht_trace_event bad = ev(9, 0, 1, 99);

		events(1, &bad, 1);
		end(6);
	}
	t = ht_trace_decode(buf, len, err, sizeof(err));
	ok(t == NULL && strstr(err, "unknown op") != NULL, "an unknown op");
	ht_trace_free(t);

	/* Events of a thread no THREAD chunk names. */
	build(0);
	{
		struct ht_trace_event e = ev(9, 0, 1, HT_TROP_MALLOC);

		events(7, &e, 1);
		end(6);
	}
	t = ht_trace_decode(buf, len, err, sizeof(err));
	ok(t == NULL && strstr(err, "thread 7") != NULL,
	    "events of an unnamed thread: %s", err);
	ht_trace_free(t);

	/* An unknown chunk type is skipped; a second INFO is not. */
	build(0);
	buf[len] = 99, buf[len + 1] = buf[len + 2] = buf[len + 3] = 0;
	memset(buf + len + 4, 0, 4);
	buf[len + 4] = 3;
	memset(buf + len + 8, 0xee, 8);
	len += 16;
	end(5);
	t = ht_trace_decode(buf, len, err, sizeof(err));
	ok(t != NULL && t->complete && t->nevents == 5,
	    "an unknown chunk is skipped");
	ht_trace_free(t);

	build(0);
	{
		struct ht_trace_info in = { .pid = 1, .command = "" };

		put(ht_tw_info(buf + len, sizeof(buf) - len, &in));
		end(5);
	}
	t = ht_trace_decode(buf, len, err, sizeof(err));
	ok(t == NULL && strstr(err, "second INFO") != NULL, "a second INFO");
	ht_trace_free(t);

	t = ht_trace_decode("HTPROF", 6, err, sizeof(err));
	ok(t == NULL && strstr(err, "not a heaptool trace") != NULL,
	    "another file");
	ht_trace_free(t);
	is_string("realloc-inplace", ht_trace_op_name(HT_TROP_REALLOC_INPLACE),
	    "op names");
	return 0;
}
