/*
 * Workload 2 of the overhead benchmark: two threads, each freeing the blocks
 * the other allocated.  The threads work in rounds over a double buffer: in
 * round r each thread allocates a batch of blocks (16..1039 bytes) into its
 * half r % 2, then waits for its peer to finish round r, then frees the
 * batch its peer allocated in that round.  Every free is thus of a block
 * another thread allocated, the case that the allocator and the profiler's
 * sampled-pointer table must handle across threads.
 *
 * Why rounds and not a free-running ring: with a ring the two threads fall
 * into lock-step or out of it at the scheduler's whim, and the run time on
 * this 2-core machine varied by a factor of 5 from run to run.  Rounds do the
 * same work every run.  The hand-over uses plain acquire/release loads and
 * stores (no read-modify-write, no system call while the peer keeps up),
 * identical in the plain and the profiled run, so the runs differ only in
 * the allocator calls.
 *
 * Why the threads are pinned to two CPUs: even in rounds, the time was
 * bimodal, about 0.15 s when the scheduler put both threads on one CPU (they
 * take turns and glibc's arena locks are never contended) and 0.7 s when it
 * ran them at once (cross-thread frees contend for the arena locks, as they
 * do in real producer/consumer programs).  Pinning fixes the second mode.
 * With a single CPU allowed, the threads are not pinned.
 *
 * usage: handoff [ROUNDS]	(default 8000, 256 blocks per thread each)
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 256

struct worker {
	void *batch[2][BATCH];
	/* Rounds this worker has finished allocating; its own cache line
	 * so that the peer's polling does not slow its stores. */
	_Alignas(64) _Atomic uint64_t done;
	_Alignas(64) struct worker *peer;
	uint64_t rounds;
	uint64_t seed;
	int failed;
};

/* Wait until the peer has allocated its batch of round r.  Spin briefly,
 * then yield: the peer may have been descheduled. */
static void
wait_peer(struct worker *w, uint64_t r)
{
	unsigned spins = 0;

	while (atomic_load_explicit(&w->peer->done, memory_order_acquire) <= r)
		if (++spins > 1000) {
			sched_yield();
			spins = 0;
		}
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	uint64_t r, x = w->seed;
	unsigned char *p;
	size_t i, size;

	for (r = 0; r < w->rounds; r++) {
		for (i = 0; i < BATCH; i++) {
			/* xorshift64 */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size = 16 + (x >> 32) % 1024;
			if ((p = malloc(size)) == NULL) {
				w->failed = 1;
				size = 0;
			} else {
				p[0] = (unsigned char)i;
				p[size - 1] = (unsigned char)i;
			}
			w->batch[r & 1][i] = p;
		}
		atomic_store_explicit(&w->done, r + 1, memory_order_release);
		wait_peer(w, r);
		/* The peer writes its half r % 2 again only in round r + 2,
		 * after it has seen this worker finish round r + 1, hence after
		 * these frees. */
		for (i = 0; i < BATCH; i++)
			free(w->peer->batch[r & 1][i]);
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	static struct worker a, b;
	uint64_t rounds = 8000;
	pthread_attr_t attr[2];
	pthread_t ta, tb;
	cpu_set_t allowed, one;
	int error, cpu, n;

	if (argc > 1)
		rounds = strtoull(argv[1], NULL, 10);
	a.peer = &b;
	b.peer = &a;
	a.rounds = b.rounds = rounds;
	a.seed = 0x9e3779b97f4a7c15ULL;
	b.seed = 0xd1b54a32d192ed03ULL;
	/* Thread n runs on the n-th CPU this process may use. */
	pthread_attr_init(&attr[0]);
	pthread_attr_init(&attr[1]);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 &&
	    CPU_COUNT(&allowed) >= 2)
		for (cpu = 0, n = 0; cpu < CPU_SETSIZE && n < 2; cpu++) {
			if (!CPU_ISSET(cpu, &allowed))
				continue;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			pthread_attr_setaffinity_np(&attr[n++], sizeof(one),
			    &one);
		}
	if ((error = pthread_create(&ta, &attr[0], work, &a)) != 0 ||
	    (error = pthread_create(&tb, &attr[1], work, &b)) != 0) {
		fprintf(stderr, "handoff: pthread_create: %s\n",
		    strerror(error));
		return 1;
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	if (a.failed || b.failed) {
		fprintf(stderr, "handoff: malloc failed\n");
		return 1;
	}
	return 0;
}
