/*
 * The replay's threads (replay.h): one per recorded thread, each playing
 * its steps in the recorded order.
 *
 * A step that frees or reallocates a block waits until the step that made
 * the block has published its pointer, in whichever thread that ran: a
 * release store of the pointer after the block's size and kind, an
 * acquire load before using them.  Waiting spins briefly (the maker is
 * usually a few steps away on another core) and then yields the core.
 *
 * This cannot deadlock.  The sequence numbers order all events in a way
 * consistent with each thread's own order (plan.c refuses a trace whose
 * threads are out of order), and a step only ever waits for a step with a
 * smaller sequence number (plan.c does not let it wait otherwise).  Take,
 * at any moment, the step with the smallest sequence number of all those
 * not played yet: every step before it in its thread has a smaller number,
 * so it is played, and that step is next in its thread; what it waits for
 * has a smaller number too, so it is played.  That step can go, and by
 * induction every step is played.
 *
 * A recorded thread that began after another ended is played by that
 * one's worker, after it (assign): a program that starts its threads one
 * after another (a thread per connection, a pool renewed) recorded 12,000
 * of them, which played at once on 2 cores took minutes of their waiting
 * for each other, and 40,000 were more than the system would make.  The
 * workers are as many as the recorded threads that were alive at once.
 * This keeps the argument above: a worker's steps are still in sequence
 * order (all of a recorded thread's come before the next one's), so the
 * smallest step not played is next in its worker.  What it changes: the
 * later thread finds the allocator's per-thread caches of the earlier
 * one, where the program's had new ones.
 *
 * The replayer's own memory for the run (histograms) comes from mmap, not
 * from the allocator it times.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "replay.h"

#define LAT_BYTES ((HT_TROP_MAX + 1) * sizeof(uint32_t[RP_CLASSES][RP_BUCKETS]))

struct worker {
	struct rp_plan *p;
	struct rp_thread_plan *
	    *tps; /* the recorded threads it plays, in turn */
	size_t ntps;
	int latency;
	struct rp_result r;
	uint64_t cpu_ns;
	pthread_t th;
};

static atomic_uint ready;
static atomic_int go, stop; /* stop: a thread could not be made */

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void
relax(unsigned *spins)
{
	if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		sched_yield();
	}
}

static uintptr_t
wait_for(_Atomic uintptr_t *a, uint64_t *waits)
{
	uintptr_t v = atomic_load_explicit(a, memory_order_acquire);
	unsigned spins = 0;

	if (v != 0)
		return v;
	(*waits)++;
	while ((v = atomic_load_explicit(a, memory_order_acquire)) == 0)
		relax(&spins);
	return v;
}

static unsigned
log2_class(uint64_t v, unsigned max)
{
	unsigned k = v ? 64 - (unsigned)__builtin_clzll(v) : 0;

	return k < max ? k : max - 1;
}

static void
step(struct worker *w, const struct rp_step *s)
{
	struct rp_plan *p = w->p;
	void *old = NULL, *q;
	uint64_t oldsize = 0, t0 = 0, bytes;
	int kind = 0, ok;

	if (s->ref != RP_NONE) {
		old = (void *)(wait_for(&p->ptr[s->ref], &w->r.waits) &
		    ~(uintptr_t)1);
		oldsize = p->size[s->ref];
		kind = p->kind[s->ref];
	}
	if (w->latency)
		t0 = now_ns();
	if (ht_trace_op_frees(s->op)) {
		rp_ops_free(s, old, oldsize, kind);
		p->delta[s->order] = -(int64_t)oldsize;
		bytes = oldsize;
	} else {
		q = rp_ops_alloc(s, old, &ok);
		if (ok) {
			if (q != NULL && s->size > 0)
				*(volatile char *)q = 1;
			p->size[s->slot] = s->size;
			p->kind[s->slot] = s->how == RP_ALIGNED_NEW ?
			    (uint8_t)(s->align + 1) :
			    0;
			p->delta[s->order] =
			    (int64_t)s->size - (int64_t)oldsize;
		} else {
			/* A failed realloc leaves the old block, which the
			 * new block's free then frees. */
			w->r.failed++;
			q = old;
			p->size[s->slot] = oldsize;
			p->kind[s->slot] = (uint8_t)kind;
		}
		atomic_store_explicit(&p->ptr[s->slot], (uintptr_t)q | 1,
		    memory_order_release);
		bytes = s->size;
	}
	if (w->latency) {
		uint64_t dt = now_ns() - t0;

		w->r.alloc_ns += dt;
		w->r.lat[s->op][log2_class(bytes, RP_CLASSES)]
			[log2_class(dt, RP_BUCKETS)]++;
	}
	w->r.count[s->op]++;
	w->r.bytes[s->op] += bytes;
}

/* Not static: heaptool replay --callgrind counts the instructions under
 * this function (valgrind --toggle-collect), not those of the setup. */
void *rp_thread_main(void *arg);

void *
rp_thread_main(void *arg)
{
	struct worker *w = arg;
	unsigned spins = 0;
	uint64_t cpu0;
	size_t i, k;

	atomic_fetch_add(&ready, 1);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		relax(&spins);
	if (atomic_load(&stop))
		return NULL;
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (k = 0; k < w->ntps; k++)
		for (i = 0; i < w->tps[k]->nsteps; i++)
			if (!w->tps[k]->steps[i].skip)
				step(w, &w->tps[k]->steps[i]);
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return NULL;
}

/* The sequence order of recorded thread t's first and last steps. */
static uint32_t
first_of(const struct rp_thread_plan *t)
{
	return t->steps[0].order;
}

static uint32_t
last_of(const struct rp_thread_plan *t)
{
	return t->steps[t->nsteps - 1].order;
}

static int
by_first(const void *a, const void *b)
{
	uint32_t x = first_of(*(struct rp_thread_plan *const *)a),
		 y = first_of(*(struct rp_thread_plan *const *)b);

	return x < y ? -1 : x > y;
}

/* A min-heap of workers by the last step of the thread they play last. */
struct heap {
	uint32_t *w; /* worker indexes */
	size_t n;
	const uint32_t *last;
};

static void
heap_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t t;

		if (l < h->n && h->last[h->w[l]] < h->last[h->w[m]])
			m = l;
		if (l + 1 < h->n && h->last[h->w[l + 1]] < h->last[h->w[m]])
			m = l + 1;
		if (m == i)
			return;
		t = h->w[i];
		h->w[i] = h->w[m];
		h->w[m] = t;
		i = m;
	}
}

static void
heap_push(struct heap *h, uint32_t w)
{
	size_t i = h->n++;

	h->w[i] = w;
	while (i > 0 && h->last[h->w[(i - 1) / 2]] > h->last[h->w[i]]) {
		uint32_t t = h->w[i];

		h->w[i] = h->w[(i - 1) / 2];
		h->w[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/*
 * Give each recorded thread with steps to a worker: in the order of their
 * first steps, to the worker whose last thread ended first if it ended
 * before this one began, else to a new worker.  order[] gets the threads
 * grouped by worker, each worker's in turn, and w[k] its share of order.
 * Returns the number of workers.  The memory is the caller's mmap: *tmp
 * holds 3 * nthreads words.
 */
static size_t
assign(struct rp_plan *p, struct worker *w, struct rp_thread_plan **order,
    uint32_t *tmp)
{
	uint32_t *of = tmp, *last = tmp + p->nthreads, *count;
	struct rp_thread_plan **by = order;
	struct heap h = { tmp + 2 * p->nthreads, 0, last };
	size_t n = 0, nw = 0, i, at;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].nsteps > 0)
			by[n++] = &p->threads[i];
	qsort(by, n, sizeof(*by), by_first);
	for (i = 0; i < n; i++) {
		uint32_t k;

		if (h.n > 0 && last[h.w[0]] < first_of(by[i])) {
			k = h.w[0];
			h.w[0] = h.w[--h.n];
			heap_down(&h, 0);
		} else
			k = (uint32_t)nw++;
		of[i] = k;
		last[k] = last_of(by[i]);
		heap_push(&h, k);
	}
	/* Each worker's threads, in their order, as one run of pointers:
	 * counted, then placed (count reuses last, done with). */
	count = last;
	memset(count, 0, nw * sizeof(*count));
	for (i = 0; i < n; i++)
		count[of[i]]++;
	for (i = 0, at = 0; i < nw; i++) {
		w[i].ntps = 0;
		w[i].tps = order + p->nthreads + at;
		at += count[i];
	}
	for (i = 0; i < n; i++)
		w[of[i]].tps[w[of[i]].ntps++] = by[i];
	return nw;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What two back-to-back clock reads measure, the median of 1001 pairs:
 * what a step's latency holds beside its call. */
static uint64_t
timer_cost(void)
{
	uint64_t d[1001];
	int i;

	for (i = 0; i < 1001; i++) {
		uint64_t a = now_ns();

		d[i] = now_ns() - a;
	}
	qsort(d, 1001, sizeof(d[0]), cmp_u64);
	return d[500];
}

int
rp_play(struct rp_plan *p, int latency, struct rp_result *r, char *err,
    size_t errlen)
{
	struct worker *w;
	struct rp_thread_plan **order;
	size_t i, started = 0, nw, len;
	unsigned spins = 0, o, c, b;
	uint64_t t0, t1;
	int rc = -1, e;

	memset(r, 0, sizeof(*r));
	/* The workers, the threads' order (sorted, then by worker) and
	 * assign's words, in one mapping. */
	len = (p->nthreads + 1) * sizeof(*w) +
	    (2 * p->nthreads + 1) * sizeof(*order) +
	    (3 * p->nthreads + 1) * sizeof(uint32_t);
	w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (w == MAP_FAILED) {
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
	order = (struct rp_thread_plan **)(void *)(w + p->nthreads + 1);
	nw = assign(p, w, order,
	    (uint32_t *)(void *)(order + 2 * p->nthreads + 1));
	r->workers = nw;
	for (i = 0; i < nw; i++) {
		w[i].p = p;
		w[i].latency = latency;
		if (latency) {
			/* Populated: its pages are the replayer's, not the
			 * allocator's growth (rp_rss_mark). */
			w[i].r.lat = mmap(NULL, LAT_BYTES,
			    PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
			if (w[i].r.lat == MAP_FAILED) {
				w[i].r.lat = NULL;
				snprintf(err, errlen, "mmap: %s",
				    strerror(errno));
				goto out;
			}
		}
	}
	atomic_store(&ready, 0);
	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	for (i = 0; i < nw; i++, started++)
		if ((e = pthread_create(&w[i].th, NULL, rp_thread_main,
			 &w[i])) != 0) {
			snprintf(err, errlen, "pthread_create: %s",
			    strerror(e));
			atomic_store(&stop, 1);
			atomic_store(&go, 1);
			goto join;
		}
	while (atomic_load(&ready) < nw)
		relax(&spins);
	rp_rss_mark();
	t0 = now_ns();
	atomic_store_explicit(&go, 1, memory_order_release);
	for (i = 0; i < started; i++)
		pthread_join(w[i].th, NULL);
	t1 = now_ns();
	started = 0;
	r->wall_ns = t1 - t0;
	if (latency) {
		uint64_t n = 0, o, less;

		r->timer_ns = timer_cost();
		for (o = 0; o <= HT_TROP_MAX; o++)
			for (i = 0; i < nw; i++)
				n += w[i].r.count[o];
		less = n * r->timer_ns;
		r->alloc_ns = 0;
		for (i = 0; i < nw; i++)
			r->alloc_ns += w[i].r.alloc_ns;
		r->alloc_ns = r->alloc_ns > less ? r->alloc_ns - less : 0;
	}
	if (latency) {
		r->lat = mmap(NULL, LAT_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->lat == MAP_FAILED) {
			r->lat = NULL;
			snprintf(err, errlen, "mmap: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < nw; i++) {
		for (o = 0; o <= HT_TROP_MAX; o++) {
			r->count[o] += w[i].r.count[o];
			r->bytes[o] += w[i].r.bytes[o];
			for (c = 0; latency && c < RP_CLASSES; c++)
				for (b = 0; b < RP_BUCKETS; b++)
					r->lat[o][c][b] += w[i].r.lat[o][c][b];
		}
		r->cpu_ns += w[i].cpu_ns;
		r->failed += w[i].r.failed;
		r->waits += w[i].r.waits;
	}
	rc = 0;
join:
	for (i = 0; i < started; i++)
		pthread_join(w[i].th, NULL);
out:
	for (i = 0; i < nw; i++)
		if (w[i].r.lat != NULL)
			munmap(w[i].r.lat, LAT_BYTES);
	munmap(w, len);
	return rc;
}
