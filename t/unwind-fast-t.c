/*
 * The walk without the lock (ht_unwind_fast) against the walk under it
 * (ht_unwind), from the same registers: whatever its memo holds (the same
 * stack again, another caller at the same depth, deeper or shallower tops
 * over the same outer frames, another max), it stores the same pcs, or
 * says -1 (a rule not cached, the module set changed).  And from threads
 * walking while the cache is emptied under them: never other pcs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "basic.h"
#include "modules.h"
#include "unwind.h"

#define NOINLINE  __attribute__((noinline, noclone))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define MAXF	  80
#define THREADS	  4
#define ROUNDS	  3000

struct both {
	uintptr_t fast[MAXF + 1], slow[MAXF + 1], again[MAXF + 1];
	int nf, ns, na, max;
	struct ht_unwind_stats st, st_again;
	uint64_t id, id_again;
};

static volatile int sink;
/* The walk under "the lock": this mutex stands for ht_lock_global. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct both *cur;
static __thread int locked_too = 1;

/* Both walks from here; the locked one after, so that the fast one sees
 * the cache as the previous walks left it. */
static NOINLINE void
leaf(void)
{
	struct ht_regs r;

	HT_REGS_CAPTURE(&r);
	cur->nf =
	    ht_unwind_fast(&r, 0, cur->fast, cur->max, &cur->st, &cur->id);
	/* Nothing of the stack above r.sp changed since: the memo whole. */
	cur->na = ht_unwind_fast(&r, 0, cur->again, cur->max, &cur->st_again,
	    &cur->id_again);
	if (locked_too) {
		pthread_mutex_lock(&lock);
		cur->ns = ht_unwind(&r, cur->slow, cur->max);
		pthread_mutex_unlock(&lock);
	}
	BARRIER();
	sink++;
}

/* Two callers of leaf at the same depth, with the same frame: leaf's
 * state is the same from either, its return address is not. */
static NOINLINE void
mid_a(void)
{
	leaf();
	BARRIER();
	sink += 1;
}

static NOINLINE void
mid_b(void)
{
	leaf();
	BARRIER();
	sink += 2;
}

/* d more frames above the same outer ones. */
static NOINLINE void
deep(int d)
{
	if (d > 0)
		deep(d - 1);
	else
		mid_a();
	BARRIER();
	sink += d;
}

static NOINLINE void
run(struct both *b, int path, int max)
{
	cur = b;
	b->max = max;
	b->nf = b->ns = -2;
	if (path == 0)
		mid_a();
	else if (path == 1)
		mid_b();
	else
		deep(path - 2);
	BARRIER();
	sink++;
}

/* The fast walk stored what the locked one did. */
static int
same(const struct both *b)
{
	return b->nf == b->ns && b->nf > 0 &&
	    memcmp(b->fast, b->slow, (size_t)b->nf * sizeof(b->fast[0])) == 0;
}

/* n walks by path, from one call site (each site is another frame). */
static NOINLINE void
runs(struct both *b, int n, int path, int max)
{
	int i;

	for (i = 0; i < n; i++)
		run(&b[i],
		    path < 0	 ? i % 2 :
			path < 2 ? path :
				   2 + i % path,
		    max);
	BARRIER();
	sink++;
}

static void
test_memo(void)
{
	static struct both b[200];
	struct ht_modset set;
	int i, bad, partial;

	runs(b, 3, 0, MAXF);
	ok(b[0].nf == -1 && b[0].ns > 3,
	    "rules not cached yet: -1 (the locked walk: %d frames)", b[0].ns);
	ok(same(&b[1]) && b[1].st.cache_hits >= (uint64_t)b[1].nf &&
		b[1].st.memo_frames == 0,
	    "cached: the locked walk's pcs, each frame's rule from the cache");
	is_uint(1, b[1].st.walks, "... counted one walk");
	/* Up to the frame whose saved rbp holds runs' loop counter, which
	 * differs, then from the cache. */
	ok(same(&b[2]) && b[2].st.memo_frames > 0 &&
		b[2].st.memo_frames + b[2].st.cache_hits >=
		    (uint64_t)b[2].nf - 1,
	    "the same stack again: the memo's frames as far as its reads "
	    "hold (%llu of %d), then the cache's",
	    (unsigned long long)b[2].st.memo_frames, b[2].nf);
	is_uint(1, b[2].st.stops_outermost, "... ending as the walk did");
	ok(b[2].na == b[2].nf &&
		memcmp(b[2].again, b[2].fast,
		    (size_t)b[2].na * sizeof(b[2].again[0])) == 0 &&
		b[2].st_again.memo_frames == (uint64_t)b[2].na - 1 &&
		b[2].st_again.cache_hits == 0 &&
		b[2].st_again.stops_outermost == 1,
	    "the very same stack: the memo's walk whole, every read checked");
	ok(b[2].id != 0 && b[2].id_again == b[2].id,
	    "... the memo its walk before left: the same id");

	runs(b, 3, 1, MAXF);
	ok(same(&b[2]) && b[2].fast[1] != b[2].fast[0],
	    "another caller at the same depth: its own pcs");
	runs(b, 200, -1, MAXF);
	for (i = 2, bad = 0; i < 200; i++)
		bad += !same(&b[i]) || b[i].na != b[i].nf ||
		    memcmp(b[i].again, b[i].fast,
			(size_t)b[i].na * sizeof(b[i].again[0])) != 0;
	is_int(0, bad, "198 walks from the two callers in turn: the same pcs");
	for (i = 3, bad = 0; i < 200; i++)
		bad += b[i].id == 0 || b[i].id == b[i - 1].id ||
		    b[i].id_again != b[i].id;
	is_int(0, bad, "... each a memo of its own id, replayed by the next");

	runs(b, 200, 9, MAXF);
	for (i = 9, bad = 0, partial = 0; i < 200; i++) {
		bad += !same(&b[i]);
		partial += b[i].st.memo_frames > 0 && b[i].st.cache_hits > 0;
	}
	is_int(0, bad, "191 walks of tops 0 to 8 frames deeper: the same pcs");
	ok(partial > 0,
	    "... of which %d took their outer frames from the memo, the rest "
	    "from the cache",
	    partial);

	runs(b, 3, 0, 3);
	ok(same(&b[2]) && b[2].nf == 3, "max 3: the first 3 of the walk");
	is_uint(1, b[2].st.stops_max, "... and a stop at max");
	runs(b, 3, 10, 6);
	ok(same(&b[2]) && b[2].nf == 6, "max 6 from a deeper top: 6");
	runs(b, 3, 0, MAXF + 1);
	ok(b[2].nf == -1 && b[2].ns > 3, "max above 80: -1");

	ok(ht_modules_scan(&set) == 0, "rescan");
	ht_modules_publish(&set);
	locked_too = 0;
	runs(b, 1, 0, MAXF);
	locked_too = 1;
	is_int(-1, b[0].nf, "a module set published since: -1");
	runs(b, 3, 0, MAXF);
	ok(same(&b[2]),
	    "once the locked walk has filled the cache again: the same");
}

struct worker {
	pthread_t t;
	int bad, done, refused;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct both b;
	int i;

	for (i = 0; i < ROUNDS || !w->done; i++) {
		run(&b, (i * 5) % 11, MAXF);
		if (b.nf == -1)
			w->refused++;
		else if (!same(&b))
			w->bad++;
		else
			w->done++;
		if (i >= 10 * ROUNDS)
			break;
	}
	return NULL;
}

/* The cache emptied, again and again, under ht_unwind_fast. */
static void
test_threads(void)
{
	struct worker w[THREADS];
	int i, bad = 0, done = 0, refused = 0, flushes = 0;

	memset(w, 0, sizeof(w));
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]) != 0)
			bail("pthread_create");
	for (i = 0; i < 2000; i++) {
		pthread_mutex_lock(&lock);
		ht_unwind_flush();
		pthread_mutex_unlock(&lock);
		flushes++;
		sched_yield();
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].t, NULL);
		bad += w[i].bad;
		done += w[i].done;
		refused += w[i].refused;
	}
	is_int(0, bad,
	    "%d threads walking while the cache is emptied %d times: never "
	    "other pcs",
	    THREADS, flushes);
	ok(done > 0 && refused > 0,
	    "... %d walks as the locked walk, %d refused", done, refused);
}

int
main(void)
{
	struct ht_modset set;

	plan(0);
	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan");
	ht_modules_publish(&set);
	test_memo();
	test_threads();
	return 0;
}
