/*
 * Fixture of t0020-attach: 8 threads hammering malloc, calloc, realloc and
 * free while the main thread waits in pthread_join, for heaptool attach to
 * load the agent into, and detach to take it out of, again and again.
 *
 * Each thread runs rounds of the same deterministic workload (seeded by its
 * number only): blocks in 64 slots are allocated (malloc or calloc, whose
 * zeroes are checked), filled with a pattern, grown or shrunk with realloc
 * (whose kept prefix is checked), checked and freed; at the end of a round
 * every block is freed.  A round's checksum mixes the sizes and the bytes
 * read back, so every round of a thread has the same checksum; a round that
 * differs from the thread's first, or a check that fails, counts as bad.
 * The printed checksum (of the first rounds of all threads) is thus the
 * same however many rounds ran, with or without heaptool:
 *
 *   attach-hammer: checksum 0123456789abcdef, 0 bad
 *
 * attach-hammer [--rounds N] runs N rounds per thread (default 2).
 * attach-hammer --until FILE prints "ready" once every thread runs (after
 * prctl(PR_SET_PTRACER_ANY), so that Yama's ptrace_scope 1 lets heaptool
 * attach), and the threads go on until FILE exists (a watcher thread looks
 * for it every 10 ms), each finishing the round it is in.
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

#define NTHREAD 8
#define NSLOT	64
#define NOPS	4000

struct worker {
	pthread_t thread;
	int id;
	uint64_t first; /* checksum of round 0 */
	uint64_t rounds;
	uint64_t bad;
};

static struct worker workers[NTHREAD];
static long nrounds = 2;
static const char *until;
static int stop;
static int started;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
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
	if (r % 1000 == 0)
		return (150000 + (size_t)(r >> 24) % 200000) * one;
	if (r % 9 == 0)
		return (1024 + (size_t)(r >> 24) % 16000) * one;
	return (1 + (size_t)(r >> 24) % 600) * one;
}

static unsigned char
pattern(uint64_t seed)
{
	return (unsigned char)(seed % 251 + 1);
}

/* Check that n bytes at p hold byte b (at the ends and every 61 bytes). */
static int
holds(const unsigned char *p, size_t n, unsigned char b)
{
	size_t i;

	for (i = 0; i < n; i += 61)
		if (p[i] != b)
			return 0;
	return n == 0 || p[n - 1] == b;
}

struct slot {
	unsigned char *p;
	size_t n;
	unsigned char b;
};

static void
fill(struct slot *s, uint64_t seed, uint64_t *sum)
{
	s->b = pattern(seed);
	memset(s->p, s->b, s->n);
	fx_keep(s->p);
	*sum = fx_mix(*sum, s->n ^ ((uint64_t)s->b << 40));
}

static void
release(struct slot *s, uint64_t *sum, uint64_t *bad)
{
	if (!holds(s->p, s->n, s->b))
		(*bad)++;
	*sum = fx_mix(*sum, s->p[s->n / 2]);
	free(s->p);
	s->p = NULL;
}

FX_NOINLINE static uint64_t
round_work(int id, uint64_t *bad)
{
	struct slot slots[NSLOT];
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(id + 1), sum = 0, r;
	unsigned char *np;
	size_t k, n, keep;
	int i;

	memset(slots, 0, sizeof(slots));
	for (i = 0; i < NOPS; i++) {
		r = rng(&s);
		k = (size_t)(r % NSLOT);
		n = pick_size(rng(&s));
		if (slots[k].p == NULL) {
			if ((r >> 8) % 3 == 0) {
				slots[k].p = calloc(1, n);
				if (slots[k].p != NULL &&
				    !holds(slots[k].p, n, 0))
					(*bad)++;
			} else
				slots[k].p = malloc(n);
			if (slots[k].p == NULL) {
				fprintf(stderr,
				    "attach-hammer: out of "
				    "memory\n");
				exit(1);
			}
			slots[k].n = n;
			fill(&slots[k], r, &sum);
			continue;
		}
		switch ((r >> 8) % 4) {
		case 0:
		case 1:
			release(&slots[k], &sum, bad);
			break;
		case 2:
			keep = n < slots[k].n ? n : slots[k].n;
			np = realloc(slots[k].p, n);
			if (np == NULL) {
				fprintf(stderr,
				    "attach-hammer: out of "
				    "memory\n");
				exit(1);
			}
			if (!holds(np, keep, slots[k].b))
				(*bad)++;
			slots[k].p = np;
			slots[k].n = n;
			fill(&slots[k], r, &sum);
			break;
		default:
			if (!holds(slots[k].p, slots[k].n, slots[k].b))
				(*bad)++;
			sum = fx_mix(sum, slots[k].p[0]);
			break;
		}
	}
	for (k = 0; k < NSLOT; k++)
		if (slots[k].p != NULL)
			release(&slots[k], &sum, bad);
	return sum;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	uint64_t sum;

	pthread_mutex_lock(&start_lock);
	started++;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);
	do {
		sum = round_work(w->id, &w->bad);
		if (w->rounds == 0)
			w->first = sum;
		else if (sum != w->first)
			w->bad++;
		w->rounds++;
	} while (until != NULL ? !__atomic_load_n(&stop, __ATOMIC_RELAXED) :
				 (long)w->rounds < nrounds);
	return NULL;
}

static void *
watch(void *arg)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	(void)arg;
	while (access(until, F_OK) != 0)
		nanosleep(&ts, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t watcher;
	uint64_t sum = 0, bad = 0, rounds = 0;
	int i, error;
	char *end;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--until") == 0 && i + 1 < argc)
			until = argv[++i];
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			nrounds = strtol(argv[++i], &end, 10);
			if (*end != '\0' || nrounds < 1) {
				fprintf(stderr,
				    "attach-hammer: bad --rounds\n");
				return 2;
			}
		} else {
			fprintf(stderr,
			    "usage: attach-hammer [--rounds N] "
			    "[--until FILE]\n");
			return 2;
		}
	}
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	for (i = 0; i < NTHREAD; i++) {
		workers[i].id = i;
		error =
		    pthread_create(&workers[i].thread, NULL, work, &workers[i]);
		if (error != 0) {
			fprintf(stderr, "attach-hammer: pthread_create: %s\n",
			    strerror(error));
			return 1;
		}
	}
	if (until != NULL) {
		error = pthread_create(&watcher, NULL, watch, NULL);
		if (error != 0) {
			fprintf(stderr, "attach-hammer: pthread_create: %s\n",
			    strerror(error));
			return 1;
		}
		pthread_mutex_lock(&start_lock);
		while (started < NTHREAD)
			pthread_cond_wait(&start_cond, &start_lock);
		pthread_mutex_unlock(&start_lock);
		printf("ready\n");
		fflush(stdout);
	}
	for (i = 0; i < NTHREAD; i++) {
		pthread_join(workers[i].thread, NULL);
		sum = fx_mix(sum, workers[i].first);
		bad += workers[i].bad;
		rounds += workers[i].rounds;
	}
	if (until != NULL)
		pthread_join(watcher, NULL);
	printf("attach-hammer: checksum %016llx, %llu bad\n",
	    (unsigned long long)sum, (unsigned long long)bad);
	fprintf(stderr, "attach-hammer: %llu rounds\n",
	    (unsigned long long)rounds);
	return bad != 0;
}
