/*
 * Fixture of t/t0090-epoch-sites.sh: a program linked with the agent that
 * runs two rate-1 sessions through include/heaptool.h, so that a thread's
 * memory of its previous site (sampler.c) comes from another session.
 * Usage: epoch-sites DIR.  It leaves in DIR:
 *   a.heap  session A: 1 block of 100 bytes at ep_z, then 2 of 200 at ep_x
 *           (main thread), in that order: ep_x is the session's second site
 *   b.heap  session B: a helper thread makes 3 blocks of 300 bytes at ep_y0,
 *           then 4 of 400 at ep_y1 (the session's first two sites), and
 *           only then the main thread, which has allocated nothing since
 *           session A, 5 of 500 at ep_x: its previous site is A's second,
 *           and B's second is ep_y1's
 * No block is freed.  Between the sessions the main thread talks to the
 * helper through pipes only (no allocation of its own).  Exit status 0
 * when every call succeeded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"
#include "fx-dump.h"
#include "heaptool.h"

static uint64_t sum;
static volatile size_t one = 1;
static int go[2], done[2];

/* n blocks of size bytes at the caller's site. */
#define MAKE(n, size)                                                          \
	do {                                                                   \
		for (size_t i_ = 0; i_ < (n); i_++) {                          \
			void *p_ = malloc(one * (size));                       \
                                                                               \
			if (p_ == NULL)                                        \
				exit(2);                                       \
			fx_fill(p_, (size), i_, &sum);                         \
			fx_keep(p_);                                           \
		}                                                              \
	} while (0)

FX_NOINLINE static void
ep_z(size_t n, size_t size)
{
	MAKE(n, size); /* SITE ep_z */
}

FX_NOINLINE static void
ep_x(size_t n, size_t size)
{
	MAKE(n, size); /* SITE ep_x */
}

FX_NOINLINE static void
ep_y0(size_t n, size_t size)
{
	MAKE(n, size); /* SITE ep_y0 */
}

FX_NOINLINE static void
ep_y1(size_t n, size_t size)
{
	MAKE(n, size); /* SITE ep_y1 */
}

static void *
helper(void *arg)
{
	char c;

	if (read(go[0], &c, 1) != 1)
		exit(3);
	ep_y0(3, 300);
	ep_y1(4, 400);
	if (write(done[1], &c, 1) != 1)
		exit(3);
	return arg;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	char c = 'g';

	if (argc != 2)
		return 2;
	/* The helper exists before either session: its creation allocates
	 * nothing on the main thread then. */
	if (pipe(go) != 0 || pipe(done) != 0 ||
	    pthread_create(&t, NULL, helper, NULL) != 0)
		return 1;
	if (heaptool_start(1) != HEAPTOOL_OK)
		return 4;
	ep_z(1, 100);
	ep_x(2, 200);
	if (fx_dump(argv[1], "a.heap") != HEAPTOOL_OK ||
	    heaptool_stop() != HEAPTOOL_OK || heaptool_start(1) != HEAPTOOL_OK)
		return 4;
	if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		return 3;
	ep_x(5, 500);
	if (fx_dump(argv[1], "b.heap") != HEAPTOOL_OK ||
	    heaptool_stop() != HEAPTOOL_OK)
		return 4;
	pthread_join(t, NULL);
	printf("epoch-sites: checksum %llu\n", (unsigned long long)sum);
	return 0;
}
