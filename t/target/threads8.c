/*
 * Fixture of t0012-run-robust: 8 threads allocating at once, with blocks
 * freed by another thread than the one that allocated them.
 *
 * Two waves of 8 threads (so that threads exit and new ones take their
 * place).  Each thread makes blocks with malloc, calloc or a realloc chain,
 * stamps each with a value and its size, and hands them over through a
 * mutex-protected queue; the threads take blocks from the queue, check the
 * stamp, add the value to the sum and free them.  A thread also churns
 * private blocks.  Whoever frees a block, the sum of all values is the same,
 * so the output is deterministic: the number of blocks, the sum, and the
 * number of corrupted blocks (0) or calloc blocks that were not zero (0).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define NTHREAD 8
#define NWAVE	2
#define NOPS	20000
#define QSIZE	1024

struct stamp {
	uint64_t value;
	uint64_t size;
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static void *queue[QSIZE];
static size_t qhead, qlen;
static uint64_t total_sum, total_blocks, total_bad;
static volatile size_t one = 1;

static uint64_t
rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t
pick_size(uint64_t r)
{
	if (r % 500 == 0)
		return 150000 + (size_t)(r >> 20) % 100000;
	if (r % 7 == 0)
		return 1024 + (size_t)(r >> 20) % 7000;
	return sizeof(struct stamp) + (size_t)(r >> 20) % 500;
}

static void
stamp(void *p, uint64_t value, size_t size)
{
	struct stamp *st = p;

	memset((char *)p + sizeof(*st), (int)(value % 255) + 1,
	    size - sizeof(*st));
	st->value = value;
	st->size = size;
}

/* Check a block's stamp, free it, and return its value (0 if corrupted). */
static uint64_t
consume(void *p, uint64_t *bad)
{
	struct stamp *st = p;
	unsigned char *b = p, want;
	uint64_t value = st->value;
	size_t size = st->size, i;

	want = (unsigned char)(value % 255 + 1);
	for (i = sizeof(*st); i < size; i += 97) {
		if (b[i] != want) {
			(*bad)++;
			break;
		}
	}
	if (size > sizeof(*st) && b[size - 1] != want)
		(*bad)++;
	free(p);
	return value;
}

FX_NOINLINE static void *
make_block(uint64_t *s, uint64_t value, uint64_t *bad)
{
	uint64_t r = rng(s);
	size_t size = pick_size(rng(s)) * one, i;
	unsigned char *p;

	switch (r % 3) {
	case 0:
		p = calloc(1, size); /* SITE make_calloc */
		if (p == NULL)
			break;
		for (i = 0; i < size; i += 61)
			if (p[i] != 0) {
				(*bad)++;
				break;
			}
		break;
	case 1:
		p = malloc(sizeof(struct stamp) * one); /* SITE make_realloc */
		if (p == NULL)
			break;
		memset(p, 0x11, sizeof(struct stamp));
		p = realloc(p, size / 2 + sizeof(struct stamp));
		if (p != NULL)
			p = realloc(p, size);
		break;
	default:
		p = malloc(size); /* SITE make_malloc */
		break;
	}
	if (p == NULL) {
		fprintf(stderr, "threads8: out of memory\n");
		exit(1);
	}
	stamp(p, value, size);
	return p;
}

static void *
worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	uint64_t s = 0x9e3779b97f4a7c15ULL * (id + 1), r;
	uint64_t sum = 0, blocks = 0, bad = 0;
	void *priv[16] = { NULL }, *p, *take;
	size_t i, k;

	for (i = 0; i < NOPS; i++) {
		r = rng(&s);
		switch (r % 4) {
		case 0:
		case 1:
			p = make_block(&s, fx_mix(id, i), &bad);
			blocks++;
			pthread_mutex_lock(&qlock);
			if (qlen < QSIZE) {
				queue[(qhead + qlen) % QSIZE] = p;
				qlen++;
				p = NULL;
			}
			pthread_mutex_unlock(&qlock);
			if (p != NULL)
				sum += consume(p, &bad);
			break;
		case 2:
			take = NULL;
			pthread_mutex_lock(&qlock);
			if (qlen > 0) {
				take = queue[qhead];
				qhead = (qhead + 1) % QSIZE;
				qlen--;
			}
			pthread_mutex_unlock(&qlock);
			if (take != NULL)
				sum += consume(take, &bad);
			break;
		default:
			k = (size_t)(r >> 32) % 16;
			p = realloc(priv[k], pick_size(rng(&s)));
			if (p == NULL)
				exit(1);
			priv[k] = p;
			memset(p, 0x33, sizeof(struct stamp));
			break;
		}
	}
	for (k = 0; k < 16; k++)
		free(priv[k]);
	pthread_mutex_lock(&qlock);
	total_sum += sum;
	total_blocks += blocks;
	total_bad += bad;
	pthread_mutex_unlock(&qlock);
	return NULL;
}

int
main(void)
{
	pthread_t t[NTHREAD];
	int w, i, error;

	for (w = 0; w < NWAVE; w++) {
		for (i = 0; i < NTHREAD; i++) {
			error = pthread_create(&t[i], NULL, worker,
			    (void *)(uintptr_t)(w * NTHREAD + i));
			if (error != 0) {
				fprintf(stderr,
				    "threads8: pthread_create: %s\n",
				    strerror(error));
				return 1;
			}
		}
		for (i = 0; i < NTHREAD; i++)
			pthread_join(t[i], NULL);
	}
	while (qlen > 0) {
		total_sum += consume(queue[qhead], &total_bad);
		qhead = (qhead + 1) % QSIZE;
		qlen--;
	}
	printf("threads8: %d waves x %d threads, %llu blocks, sum %016llx, "
	       "%llu bad\n",
	    NWAVE, NTHREAD, (unsigned long long)total_blocks,
	    (unsigned long long)total_sum, (unsigned long long)total_bad);
	return total_bad != 0;
}
