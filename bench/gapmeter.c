/*
 * Target of the attach benchmark.  Four threads loop: a malloc/free pair,
 * then a 1 ms sleep, and each measures the gap between its iterations beyond
 * the sleep it asked for; the largest such excess is the longest pause any
 * thread saw (heaptool stops one thread at a time, and only briefly).  The
 * main thread reads commands from stdin, so it blocks in read() like an idle
 * server's:
 *
 *   reset        forget the gaps seen so far
 *   max          print the longest excess gap in microseconds
 *   churn N      time N malloc/free pairs (16..1039 bytes, window of 1024
 *                live blocks, as bench/churn) and print ns per pair
 *   quit
 *
 * It prints "ready" once the threads run, after prctl(PR_SET_PTRACER_ANY).
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREAD	 4
#define SLEEP_NS 1000000L
#define WINDOW	 1024

static uint64_t max_gap_ns; /* guarded by lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *
meter(void *arg)
{
	struct timespec d = { 0, SLEEP_NS };
	uint64_t last = now_ns(), t, gap;
	volatile char *p;

	(void)arg;
	for (;;) {
		p = malloc(64);
		p[0] = 1;
		free((void *)p);
		nanosleep(&d, NULL);
		t = now_ns();
		gap = t - last > (uint64_t)SLEEP_NS ? t - last - SLEEP_NS : 0;
		last = t;
		pthread_mutex_lock(&lock);
		if (gap > max_gap_ns)
			max_gap_ns = gap;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static double
churn(long pairs)
{
	static void *slots[WINDOW];
	uint64_t s = 88172645463325252ull, t0;
	long i;
	size_t k;

	t0 = now_ns();
	for (i = 0; i < pairs; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		k = s % WINDOW;
		free(slots[k]);
		slots[k] = malloc(16 + (s >> 32) % 1024);
	}
	for (k = 0; k < WINDOW; k++) {
		free(slots[k]);
		slots[k] = NULL;
	}
	return (double)(now_ns() - t0) / (double)pairs;
}

int
main(void)
{
	pthread_t th;
	char line[128];
	int i;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	for (i = 0; i < NTHREAD; i++)
		if (pthread_create(&th, NULL, meter, NULL) != 0)
			return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "reset", 5) == 0) {
			pthread_mutex_lock(&lock);
			max_gap_ns = 0;
			pthread_mutex_unlock(&lock);
			printf("ok\n");
		} else if (strncmp(line, "max", 3) == 0) {
			pthread_mutex_lock(&lock);
			printf("%llu\n", (unsigned long long)max_gap_ns / 1000);
			pthread_mutex_unlock(&lock);
		} else if (strncmp(line, "churn ", 6) == 0)
			printf("%.2f\n", churn(atol(line + 6)));
		else if (strncmp(line, "quit", 4) == 0)
			break;
		else
			printf("?\n");
		fflush(stdout);
	}
	return 0;
}
