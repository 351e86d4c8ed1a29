/*
 * Fixture of t0084-record: 4 threads allocating with malloc, calloc,
 * realloc, posix_memalign and aligned_alloc, and handing half of their
 * blocks to the next thread, which frees them (cross-thread frees).
 *
 * Every allocator call is made under one mutex, with the fixture's own
 * account of it: how many calls of each kind (a realloc counted as moved
 * or in place by the addresses it returned), and the live requested bytes
 * and their peak.  Under the mutex the calls happen in one order, the
 * order in which a recording numbers them, so a trace of this program
 * gives exactly these figures.  It prints, one "key value" a line, as
 * trace-dump names them:
 *
 *   op malloc N, op calloc N, op realloc N, op realloc-inplace N,
 *   op aligned N, op free N, peak BYTES
 *
 * rec-threads [ROUNDS [tags]] (default 2000 per thread).  With "tags",
 * each worker runs under a tag of its own, "worker0" to "worker3"
 * (include/heaptool.h: its calls find the agent, or do nothing), and
 * "tagged N" says how many calls the workers made.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "heaptool.h"

#define NTHREAD 4
#define QSIZE	256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_malloc, n_calloc, n_realloc, n_inplace, n_aligned, n_free;
static uint64_t live, peak, tagged;
static int rounds = 2000, tags;
static __thread int in_worker;

/* A block handed to the next thread: its address and requested size. */
struct hand {
	void *p;
	size_t n;
};

static struct queue {
	pthread_mutex_t lock;
	struct hand q[QSIZE];
	size_t head, len;
} queues[NTHREAD];

/* Every call is counted here once (frees in rec_free), by whether a
 * worker made it. */
static void
grow(size_t n)
{
	tagged += in_worker;
	live += n;
	if (live > peak)
		peak = live;
}

static FX_NOINLINE void *
rec_malloc(size_t n)
{
	void *p;

	pthread_mutex_lock(&lock);
	p = malloc(n);
	n_malloc++;
	grow(n);
	pthread_mutex_unlock(&lock);
	return p;
}

static FX_NOINLINE void *
rec_calloc(size_t c, size_t n)
{
	void *p;

	pthread_mutex_lock(&lock);
	p = calloc(c, n);
	n_calloc++;
	grow(c * n);
	pthread_mutex_unlock(&lock);
	return p;
}

static FX_NOINLINE void *
rec_realloc(void *old, size_t oldn, size_t n)
{
	void *p;

	pthread_mutex_lock(&lock);
	p = realloc(old, n);
	if (p == old)
		n_inplace++;
	else
		n_realloc++;
	live -= oldn;
	grow(n);
	pthread_mutex_unlock(&lock);
	return p;
}

static FX_NOINLINE void *
rec_aligned(size_t al, size_t n, int posix)
{
	void *p = NULL;

	pthread_mutex_lock(&lock);
	if (posix) {
		if (posix_memalign(&p, al, n) != 0)
			p = NULL;
	} else
		p = aligned_alloc(al, n);
	n_aligned++;
	grow(n);
	pthread_mutex_unlock(&lock);
	return p;
}

static FX_NOINLINE void
rec_free(void *p, size_t n)
{
	pthread_mutex_lock(&lock);
	free(p);
	n_free++;
	tagged += in_worker;
	live -= n;
	pthread_mutex_unlock(&lock);
}

static void
put(struct queue *q, void *p, size_t n)
{
	pthread_mutex_lock(&q->lock);
	if (q->len == QSIZE) {
		pthread_mutex_unlock(&q->lock);
		rec_free(p, n);
		return;
	}
	q->q[(q->head + q->len) % QSIZE] = (struct hand){ p, n };
	q->len++;
	pthread_mutex_unlock(&q->lock);
}

/* Free what the previous thread handed over. */
static void
drain(struct queue *q)
{
	struct hand h;

	for (;;) {
		pthread_mutex_lock(&q->lock);
		if (q->len == 0) {
			pthread_mutex_unlock(&q->lock);
			return;
		}
		h = q->q[q->head];
		q->head = (q->head + 1) % QSIZE;
		q->len--;
		pthread_mutex_unlock(&q->lock);
		rec_free(h.p, h.n);
	}
}

static void *
worker(void *arg)
{
	int id = (int)(intptr_t)arg, i;
	uint64_t s = (uint64_t)id * 0x9e3779b97f4a7c15ull + 1;
	struct queue *next = &queues[(id + 1) % NTHREAD];
	char name[16];

	if (tags) {
		snprintf(name, sizeof(name), "worker%d", id);
		(void)heaptool_tag_enter(heaptool_tag(name));
		in_worker = 1;
	}

	for (i = 0; i < rounds; i++) {
		size_t n, m;
		void *p;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		n = 16 + (size_t)(s % 4000);
		switch (s >> 60 & 3) {
		case 0:
			p = rec_malloc(n);
			break;
		case 1:
			p = rec_calloc(1, n);
			break;
		case 2:
			p = rec_aligned(64, n, (int)(s >> 59 & 1));
			break;
		default:
			p = rec_malloc(n);
			m = n + (size_t)(s >> 40 & 8191);
			p = rec_realloc(p, n, m);
			n = m;
			break;
		}
		memset(p, 0x5a, n < 64 ? n : 64);
		if (i & 1)
			put(next, p, n);
		else
			rec_free(p, n);
		drain(&queues[id]);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[NTHREAD];
	int i;

	if (argc > 1)
		rounds = atoi(argv[1]);
	tags = argc > 2 && strcmp(argv[2], "tags") == 0;
	for (i = 0; i < NTHREAD; i++)
		pthread_mutex_init(&queues[i].lock, NULL);
	for (i = 0; i < NTHREAD; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (i = 0; i < NTHREAD; i++)
		pthread_join(t[i], NULL);
	/* What is still queued goes now, from this thread. */
	for (i = 0; i < NTHREAD; i++)
		drain(&queues[i]);
	printf("op malloc %llu\nop calloc %llu\nop realloc %llu\n"
	       "op realloc-inplace %llu\nop aligned %llu\nop free %llu\n"
	       "peak %llu\ntagged %llu\n",
	    (unsigned long long)n_malloc, (unsigned long long)n_calloc,
	    (unsigned long long)n_realloc, (unsigned long long)n_inplace,
	    (unsigned long long)n_aligned, (unsigned long long)n_free,
	    (unsigned long long)peak, (unsigned long long)tagged);
	return 0;
}
