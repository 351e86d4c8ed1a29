/*
 * Fixture of t0012-run-robust: a signal handler that allocates while the
 * program allocates.
 *
 * A SIGALRM interval timer (200 us) runs a handler that mallocs and frees
 * while main churns through 100000 malloc/calloc/realloc/free operations, so
 * the handler lands in the middle of allocator calls (and of a profiler's
 * hooks around them).  Then main goes on churning, outside the checksum, until
 * the handler has run at least 20 times (for at most about 1.5 s), stops the
 * timer and prints a checksum of what it wrote.
 *
 * Calling malloc from a signal handler is not async-signal-safe, and glibc's
 * allocator is not reentrant; this program stays on the safe side of glibc
 * on purpose, so that it runs correctly by itself: the handler uses two size
 * classes (300 and 700 bytes) that main never uses and that are warmed up
 * before the timer starts, so its malloc and free are served by the thread's
 * tcache, which touches nothing else.  Whatever a profiler adds around them
 * must keep that true.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "fixture.h"

#define NOPS   100000
#define WINDOW 256
#define MINSIG 20

static volatile sig_atomic_t nsig;
static volatile size_t one = 1;
static void *slot[WINDOW];
static size_t slotsize[WINDOW];

FX_NOINLINE static void
on_alarm(int sig)
{
	int save = errno;
	char *a, *b;

	(void)sig;
	a = malloc(300 * one); /* SITE on_alarm */
	b = malloc(700 * one);
	if (a != NULL && b != NULL) {
		memset(a, 0x5a, 300);
		memset(b, 0xa5, 700);
		fx_keep(a);
		fx_keep(b);
	}
	free(b);
	free(a);
	nsig++;
	errno = save;
}

static uint64_t
rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A size in main's classes: 1..200 bytes (tcache classes up to 208) or
 * 1100..3099 bytes (above the tcache), never near 300 or 700. */
static size_t
pick_size(uint64_t r)
{
	if (r & 1)
		return (size_t)(1 + (r >> 8) % 200);
	return (size_t)(1100 + (r >> 8) % 2000);
}

FX_NOINLINE static void
churn(uint64_t seed, size_t nops, uint64_t *sum)
{
	uint64_t s = seed, r;
	size_t i, k, size;
	void *p;

	for (i = 0; i < nops; i++) {
		r = rng(&s);
		k = (size_t)(r >> 40) % WINDOW;
		size = pick_size(rng(&s)) * one;
		switch (r % 4) {
		case 0:
			free(slot[k]);
			p = calloc(1, size); /* SITE churn_calloc */
			break;
		case 1:
			p = realloc(slot[k], size); /* SITE churn_realloc */
			break;
		default:
			free(slot[k]);
			p = malloc(size); /* SITE churn_malloc */
			break;
		}
		if (p == NULL) {
			fprintf(stderr, "sigalloc: out of memory\n");
			exit(1);
		}
		slot[k] = p;
		slotsize[k] = size;
		if (sum != NULL)
			fx_fill(p, size, i, sum);
		else
			memset(p, 1, size);
	}
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(void)
{
	struct itimerval it;
	struct sigaction sa;
	uint64_t sum = 0xcbf29ce484222325ULL;
	sigset_t set;
	double deadline;
	size_t k;
	void *a, *b;

	/* Warm up the handler's tcache bins (see above). */
	a = malloc(300 * one);
	b = malloc(700 * one);
	fx_keep(a);
	fx_keep(b);
	free(b);
	free(a);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) == -1) {
		perror("sigalloc: sigaction");
		return 1;
	}
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 200;
	it.it_value.tv_usec = 200;
	if (setitimer(ITIMER_REAL, &it, NULL) == -1) {
		perror("sigalloc: setitimer");
		return 1;
	}

	churn(42, NOPS, &sum);
	for (k = 0; k < WINDOW; k++)
		sum = fx_mix(sum, slotsize[k]);
	deadline = now() + 1.5;
	while (nsig < MINSIG && now() < deadline)
		churn(7, 1000, NULL);

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	for (k = 0; k < WINDOW; k++)
		free(slot[k]);
	printf("sigalloc: %d operations, handler ran %s %d times, "
	       "checksum %016llx\n",
	    NOPS, nsig >= MINSIG ? "at least" : "fewer than", MINSIG,
	    (unsigned long long)sum);
	return 0;
}
