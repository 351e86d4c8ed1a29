/*
 * tracegen: write an allocation trace (src/trace.h) of a made-up process
 * with the trace writer, for the tests of heaptool trace-stats and replay
 * before heaptool record exists; and print the statistics the trace must
 * give, computed here as the events are made, by code of its own (not
 * cli/tracestats.c's), as "key value" lines.
 *
 * usage: tracegen -o TRACE [-s SEED] [-t THREADS] [-n EVENTS]
 *            [-x CROSS%] [-P PREEXISTING] [-a MINSIZE] [-b MAXSIZE]
 *            [-m mix|malloc] [-L LOST] [-E] [-e] [-q]
 *
 * The process: one global sequence of n events, each made by a thread
 * drawn at random; an allocation (malloc, realloc of NULL, calloc,
 * aligned, new, new[] in mix, malloc alone in malloc mode) of a size drawn log-uniformly from
 * MINSIZE to MAXSIZE (and 1% of malloc(0) in mix), or the free of a live
 * block drawn at random (by its kind's free: free or free_sized, delete or
 * its sized form, delete[] or its sized form) made by another thread than
 * the block's with probability CROSS%, or a realloc of a malloc-family
 * block, moved or in place.  PREEXISTING frees of blocks the recording never
 * saw are spread over the sequence, and in mix 1% of free(NULL).  Each
 * event has a site (1 to 8), a tag (0 to 3) and a usable size (glibc's
 * rounding: 8 bytes of header, 16-byte chunks, 24 usable at least).  -E
 * leaves END out (a trace cut short); -L puts LOST in END's lost; -e prints
 * the expected statistics on stdout; -q makes the threads one after
 * another (thread k makes the k-th stretch of the sequence, and frees
 * there its blocks or an earlier thread's), as a thread per connection.  The blocks still live at the end are
 * left live (a recording ends before the process frees everything).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32.h"
#include "trace.h"

#define NSITES	8
#define NTAGS	3
#define RATE	524288.0 /* heaptool's default rate */
#define LIVE_B	48	 /* INFO's live_entry_bytes */
#define SITE_B	600	 /* INFO's site_entry_bytes */
#define AGENT_B 4321000	 /* END's agent_bytes */

enum kind { K_MALLOC, K_NEW, K_NEWA };

struct block {
	uint64_t seq, size, usable;
	uint32_t owner;
	enum kind kind;
};

struct thread {
	struct ht_trace_event *ev;
	size_t n, cap;
	uint64_t allocs, alloc_bytes, frees;
};

static uint64_t rng;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static double
unif(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

static uint64_t
usable_of(uint64_t size)
{
	uint64_t chunk = (size + 8 + 15) & ~(uint64_t)15;

	if (chunk < 32)
		chunk = 32;
	return chunk - 8;
}

/* Expected figures. */
static uint64_t op_count[HT_TROP_MAX + 1], op_bytes[HT_TROP_MAX + 1];
static uint64_t requested, usable, live_req, live_use, peak_req, peak_use;
static uint64_t live_n, peak_n, preexisting, nullfrees, class_n[65];
static uint64_t class_b[65], tag_n[NTAGS + 1], tag_b[NTAGS + 1];
static double site_bytes[NSITES + 1], live_p, peak_p;

static struct thread *thr;
static struct block *live;
static size_t nlive, caplive;
static uint64_t seq;

static void
die(const char *what)
{
	fprintf(stderr, "tracegen: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ht_trace_event *
emit(uint32_t t, unsigned op, uint64_t ref, uint64_t size, uint64_t use,
    unsigned flags)
{
	struct thread *th = &thr[t];
	struct ht_trace_event *e;

	if (th->n == th->cap) {
		th->cap = th->cap ? th->cap * 2 : 256;
		th->ev = realloc(th->ev, th->cap * sizeof(*th->ev));
		if (th->ev == NULL)
			die("realloc");
	}
	e = &th->ev[th->n++];
	memset(e, 0, sizeof(*e));
	e->seq = ++seq;
	e->t_ns = seq * 100;
	e->ref = ref;
	e->size = size;
	e->usable_over = op == HT_TROP_FREE || op == HT_TROP_FREE_SIZED ||
		op >= HT_TROP_DELETE ?
	    HT_TRACE_USABLE_UNKNOWN :
	    (uint32_t)(use - size);
	e->site = 1 + (uint32_t)(rnd() % NSITES);
	e->tag = (uint16_t)(rnd() % (NTAGS + 1));
	e->fn = (uint16_t)op;
	e->op = (uint8_t)op;
	e->flags = (uint8_t)flags;
	op_count[op]++;
	return e;
}

static double
p_sampled(uint64_t size)
{
	return 1 - exp(-((double)size + 1) / RATE);
}

static void
peaks(void)
{
	if (live_req > peak_req)
		peak_req = live_req;
	if (live_use > peak_use)
		peak_use = live_use;
	if (live_n > peak_n)
		peak_n = live_n;
	if (live_p > peak_p)
		peak_p = live_p;
}

static void
made(uint32_t t, const struct ht_trace_event *e, uint64_t size, uint64_t use)
{
	unsigned c = 0;

	requested += size;
	usable += use;
	op_bytes[e->op] += size;
	live_req += size;
	live_use += use;
	live_n++;
	live_p += p_sampled(size);
	while (c < 64 && (size >> (c + 1)) != 0)
		c++;
	/* class 0 holds size 0 and 1 alike: both are below 2 */
	class_n[size == 0 ? 64 : c]++;
	class_b[size == 0 ? 64 : c] += size;
	tag_n[e->tag]++;
	tag_b[e->tag] += size;
	site_bytes[e->site] += (double)size + 1;
	thr[t].allocs++;
	thr[t].alloc_bytes += size;
}

static void
gone(const struct block *b, unsigned op)
{
	op_bytes[op] += b->size;
	live_req -= b->size;
	live_use -= b->usable;
	live_n--;
	live_p -= p_sampled(b->size);
}

static uint64_t
draw_size(uint64_t lo, uint64_t hi)
{
	return (uint64_t)((double)lo * pow((double)hi / (double)lo, unif()));
}

static void
allocate(uint32_t t, int mix, uint64_t lo, uint64_t hi)
{
	double r = mix ? unif() : 0;
	struct ht_trace_event *e;
	struct block b = { .owner = t, .kind = K_MALLOC };
	unsigned op = HT_TROP_MALLOC, al = 0, flags = 0;

	b.size = mix && rnd() % 100 == 0 ? 0 : draw_size(lo, hi);
	if (mix && r < 0.02)
		op = HT_TROP_REALLOC, flags = HT_TREV_NULL; /* realloc(NULL) */
	else if (r < 0.40)
		op = HT_TROP_MALLOC;
	else if (r < 0.50)
		op = HT_TROP_CALLOC;
	else if (r < 0.60)
		op = HT_TROP_ALIGNED, al = 4 + (unsigned)(rnd() % 5);
	else if (r < 0.85)
		op = HT_TROP_NEW, b.kind = K_NEW;
	else
		op = HT_TROP_NEW_ARRAY, b.kind = K_NEWA;
	b.usable = usable_of(b.size);
	e = emit(t, op, 0, b.size, b.usable, al ? HT_TREV_ALIGNED : flags);
	e->align_log2 = (uint8_t)al;
	b.seq = e->seq;
	made(t, e, b.size, b.usable);
	if (nlive == caplive) {
		caplive = caplive ? caplive * 2 : 256;
		if ((live = realloc(live, caplive * sizeof(*live))) == NULL)
			die("realloc");
	}
	live[nlive++] = b;
}

static void
release(uint32_t t, size_t i, int sized)
{
	static const unsigned ops[3][2] = {
		{ HT_TROP_FREE, HT_TROP_FREE_SIZED },
		{ HT_TROP_DELETE, HT_TROP_DELETE_SIZED },
		{ HT_TROP_DELETE_ARRAY, HT_TROP_DELETE_ARRAY_SIZED },
	};
	struct block *b = &live[i];
	unsigned op = ops[b->kind][sized];

	emit(t, op, b->seq, sized ? b->size : 0, 0, 0);
	thr[t].frees++;
	gone(b, op);
	peaks();
	live[i] = live[--nlive];
}

static void
reallocate(uint32_t t, size_t i, uint64_t lo, uint64_t hi)
{
	struct block *b = &live[i], nb = *b;
	unsigned op = rnd() % 2 ? HT_TROP_REALLOC : HT_TROP_REALLOC_INPLACE;
	struct ht_trace_event *e;

	nb.size = draw_size(lo, hi);
	nb.usable = usable_of(nb.size);
	nb.owner = t;
	e = emit(t, op, b->seq, nb.size, nb.usable, 0);
	nb.seq = e->seq;
	/* The old block goes, the new one comes: one live block still; the
	 * op's bytes are the new block's. */
	live_req -= b->size;
	live_use -= b->usable;
	live_n--;
	live_p -= p_sampled(b->size);
	made(t, e, nb.size, nb.usable);
	*b = nb;
}

static uint8_t *out;
static size_t outlen, outcap;

static uint8_t *
room(size_t n)
{
	if (outlen + n > outcap) {
		outcap = (outlen + n) * 2;
		if ((out = realloc(out, outcap)) == NULL)
			die("realloc");
	}
	return out + outlen;
}

#define PUT(call, n)                                                           \
	do {                                                                   \
		size_t n_ = (n);                                               \
		uint8_t *p_ = room(n_);                                        \
		size_t got_ = call;                                            \
		if (got_ == 0) {                                               \
			errno = ENOSPC;                                        \
			die("a chunk did not fit");                            \
		}                                                              \
		outlen += got_;                                                \
	} while (0)

static void
write_trace(const char *path, uint32_t nthreads, int with_end, uint64_t lost)
{
	struct ht_trace_info in = { .pid = 4242,
		.page_size = 4096,
		.realtime_ns = 1700000000000000000ULL,
		.mono_ns = 1000,
		.live_entry_bytes = LIVE_B,
		.site_entry_bytes = SITE_B,
		.command = "tracegen --made-up" };
	static const char *fns[HT_TROP_MAX + 1] = { "", "malloc", "calloc",
		"realloc", "realloc", "posix_memalign", "free", "free_sized",
		"_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm" };
	struct ht_trace_end end = { 0 };
	size_t *done = calloc(nthreads, sizeof(*done)), left = 0;
	char name[32];
	uint32_t t, i;
	FILE *fp;

	PUT(ht_tw_header(p_, n_), 64);
	PUT(ht_tw_info(p_, n_, &in), 256);
	for (i = 1; i <= HT_TROP_MAX; i++)
		PUT(ht_tw_func(p_, n_, i, fns[i]), 64);
	for (t = 0; t < nthreads; t++) {
		if (t == 0)
			snprintf(name, sizeof(name), "main");
		else
			snprintf(name, sizeof(name), "worker-%u", t);
		PUT(ht_tw_thread(p_, n_, t + 1, 1000 + t, name), 64);
	}
	PUT(ht_tw_module(p_, n_, 0x400000, 0x500000, 0, "/usr/bin/made-up"),
	    128);
	for (i = 1; i <= NSITES; i++)
		PUT(ht_tw_site(p_, n_, i, 0x401000 + 16 * i), 64);
	for (i = 1; i <= NTAGS; i++) {
		snprintf(name, sizeof(name), "tag-%u", i);
		PUT(ht_tw_tag(p_, n_, i, name), 64);
	}
	/* Each thread's buffer in batches of up to 64, round robin, as a
	 * drain thread would interleave them. */
	for (t = 0; t < nthreads; t++)
		left += thr[t].n;
	while (left > 0) {
		for (t = 0; t < nthreads; t++) {
			uint32_t n = (uint32_t)(thr[t].n - done[t]);

			if (n > 64)
				n = 64;
			if (n == 0)
				continue;
			PUT(ht_tw_events_head(p_, n_, t + 1, n), 64);
			for (i = 0; i < n; i++)
				PUT(ht_tw_event(p_, n_,
					&thr[t].ev[done[t] + i]),
				    HT_TRACE_EVENT_SIZE);
			done[t] += n;
			left -= n;
		}
	}
	if (with_end) {
		end.events = seq;
		end.lost = lost;
		end.lost_why = lost ? ENOSPC : 0;
		end.threads = nthreads;
		end.duration_ns = seq * 100;
		end.agent_bytes = AGENT_B;
		PUT(ht_tw_end(p_, n_, &end, ht_crc32(0, out, outlen)), 128);
	}
	if ((fp = fopen(path, "wb")) == NULL)
		die(path);
	if (fwrite(out, 1, outlen, fp) != outlen || fclose(fp) != 0)
		die(path);
	free(done);
}

static void
expect(uint32_t nthreads, int with_end, uint64_t lost)
{
	uint64_t nsites_rate1 = 0;
	double sites_rate = 0;
	unsigned i;

	printf("events %llu\n", (unsigned long long)seq);
	printf("complete %d\n", with_end);
	printf("lost %llu\n", (unsigned long long)lost);
	for (i = 1; i <= HT_TROP_MAX; i++) {
		printf("op.%s.count %llu\n", ht_trace_op_name(i),
		    (unsigned long long)op_count[i]);
		printf("op.%s.bytes %llu\n", ht_trace_op_name(i),
		    (unsigned long long)op_bytes[i]);
	}
	printf("requested %llu\n", (unsigned long long)requested);
	printf("usable %llu\n", (unsigned long long)usable);
	printf("overhead_pct %.6f\n",
	    requested ?
		100.0 * (double)(usable - requested) / (double)requested :
		0.0);
	printf("peak_requested %llu\n", (unsigned long long)peak_req);
	printf("peak_usable %llu\n", (unsigned long long)peak_use);
	printf("peak_live_blocks %llu\n", (unsigned long long)peak_n);
	printf("live_blocks_end %llu\n", (unsigned long long)live_n);
	printf("live_requested_end %llu\n", (unsigned long long)live_req);
	printf("preexisting_frees %llu\n", (unsigned long long)preexisting);
	printf("null_frees %llu\n", (unsigned long long)nullfrees);
	for (i = 1; i <= NSITES; i++)
		if (site_bytes[i] > 0) {
			nsites_rate1++;
			sites_rate += 1 - exp(-site_bytes[i] / RATE);
		}
	printf("sites %llu\n", (unsigned long long)nsites_rate1);
	printf("heaptool_rate1_bytes %llu\n",
	    (unsigned long long)(peak_n * LIVE_B + nsites_rate1 * SITE_B));
	printf("heaptool_default_bytes %.6f\n",
	    peak_p * LIVE_B + sites_rate * SITE_B);
	printf("agent_bytes %llu\n",
	    with_end ? (unsigned long long)AGENT_B : 0);
	for (i = 0; i < 65; i++) {
		if (class_n[i] == 0)
			continue;
		/* the class by its lowest size: 0 for size 0, else 2^i */
		printf("class.%llu.count %llu\n", i == 64 ? 0ULL : 1ULL << i,
		    (unsigned long long)class_n[i]);
		printf("class.%llu.bytes %llu\n", i == 64 ? 0ULL : 1ULL << i,
		    (unsigned long long)class_b[i]);
	}
	for (i = 0; i < nthreads; i++) {
		printf("thread.%u.events %zu\n", i + 1, thr[i].n);
		printf("thread.%u.allocs %llu\n", i + 1,
		    (unsigned long long)thr[i].allocs);
		printf("thread.%u.alloc_bytes %llu\n", i + 1,
		    (unsigned long long)thr[i].alloc_bytes);
		printf("thread.%u.frees %llu\n", i + 1,
		    (unsigned long long)thr[i].frees);
	}
	for (i = 0; i <= NTAGS; i++) {
		printf("tag.%u.allocs %llu\n", i, (unsigned long long)tag_n[i]);
		printf("tag.%u.bytes %llu\n", i, (unsigned long long)tag_b[i]);
	}
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1, n = 1000, npre = 0, lo = 8, hi = 4096, lost = 0;
	unsigned cross = 30, nthreads = 4;
	const char *path = NULL;
	int c, mix = 1, with_end = 1, print = 0, one_by_one = 0;
	uint64_t k;

	while ((c = getopt(argc, argv, "o:s:t:n:x:P:a:b:m:L:Eeq")) != -1) {
		switch (c) {
		case 'q':
			one_by_one = 1;
			break;
		case 'o':
			path = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			nthreads = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			cross = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			npre = strtoull(optarg, NULL, 0);
			break;
		case 'a':
			lo = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			hi = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			mix = strcmp(optarg, "malloc") != 0;
			break;
		case 'L':
			lost = strtoull(optarg, NULL, 0);
			break;
		case 'E':
			with_end = 0;
			break;
		case 'e':
			print = 1;
			break;
		default:
			fprintf(stderr,
			    "usage: tracegen -o TRACE [-s SEED] "
			    "[-t THREADS] [-n EVENTS] [-x CROSS%%] "
			    "[-P N] [-a MIN] [-b MAX] [-m mix|malloc] "
			    "[-L LOST] [-E] [-e] [-q]\n");
			return 2;
		}
	}
	if (path == NULL || nthreads < 1 || lo < 1 || hi < lo) {
		fprintf(stderr,
		    "tracegen: -o TRACE required; 1 <= MIN <= MAX; "
		    "THREADS >= 1\n");
		return 2;
	}
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	if ((thr = calloc(nthreads, sizeof(*thr))) == NULL)
		die("calloc");
	for (k = 0; k < n; k++) {
		uint32_t t = one_by_one ? (uint32_t)(k * nthreads / n) :
					  (uint32_t)(rnd() % nthreads);
		double r = unif();

		/* Spread the preexisting frees: each remaining step takes one
		 * with probability (left to place) / (steps left). */
		if (preexisting < npre &&
		    rnd() % (n - k) < npre - preexisting) {
			emit(t,
			    mix && rnd() % 2 ? HT_TROP_DELETE : HT_TROP_FREE, 0,
			    0, 0, HT_TREV_PREEXISTING);
			thr[t].frees++;
			preexisting++;
			continue;
		}
		if (mix && rnd() % 100 == 0) {
			emit(t, HT_TROP_FREE, 0, 0, 0, HT_TREV_NULL);
			thr[t].frees++;
			nullfrees++;
			continue;
		}
		if (nlive > 0 && r < 0.50) {
			size_t i = (size_t)(rnd() % nlive);

			if (nthreads > 1 && rnd() % 100 < cross)
				t = (live[i].owner + 1 +
					(uint32_t)(rnd() % (nthreads - 1))) %
				    nthreads;
			else
				t = live[i].owner;
			/* One by one: the thread of this stretch frees
			 * (its own block, or an earlier thread's). */
			if (one_by_one)
				t = (uint32_t)(k * nthreads / n);
			if (mix && r < 0.10 && live[i].kind == K_MALLOC)
				reallocate(t, i, lo, hi);
			else
				release(t, i, mix && rnd() % 4 == 0);
		} else {
			allocate(t, mix, lo, hi);
		}
		peaks();
	}
	write_trace(path, nthreads, with_end, lost);
	if (print)
		expect(nthreads, with_end, lost);
	return ferror(stdout) ? 1 : 0;
}
