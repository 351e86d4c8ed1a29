/*
 * Fixture of t/t0091-memo-tags.sh: one stack sampled again and again under
 * two tags in turn, and in two sessions, so that the sampler's shortcut for
 * a stack that is its memo's walk again (sampler.c, last_walk: the previous
 * sample's site) meets a tag and a session it must not carry the site
 * across.  Built -O0 with frame pointers, so that nothing the stack walk
 * reads differs from one call to the next and the shortcut is taken.
 * Usage: memo-tags DIR.  It leaves in DIR:
 *   a.heap  session A (rate 1): 60 blocks of 100 bytes at mt_alloc, every
 *           other one under tag "memo_a", the others under "memo_b" (the
 *           last one)
 *   b.heap  session B (rate 1): a helper thread makes 3 blocks of 300
 *           bytes at mt_h0, then 4 of 400 at mt_h1 (the session's first
 *           two sites), then the main thread, from the same stack as in A
 *           and under "memo_b", 5 of 100 at mt_alloc: its previous site is
 *           A's second, and B's second is mt_h1's
 * No block is freed.  Between the sessions the main thread talks to the
 * helper through pipes only.  Exit status 0 when every call succeeded.
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

#define MAKE(size)                                                             \
	do {                                                                   \
		void *p_ = malloc(one * (size));                               \
                                                                               \
		if (p_ == NULL)                                                \
			exit(2);                                               \
		fx_fill(p_, (size), 0, &sum);                                  \
		fx_keep(p_);                                                   \
	} while (0)

FX_NOINLINE static void
mt_alloc(void)
{
	MAKE(100); /* SITE mt_alloc */
}

FX_NOINLINE static void
mt_h0(void)
{
	MAKE(300); /* SITE mt_h0 */
}

FX_NOINLINE static void
mt_h1(void)
{
	MAKE(400); /* SITE mt_h1 */
}

/* n blocks at mt_alloc, each under tag a or b in turn, from one stack. */
FX_NOINLINE static void
mt_run(int n, uint32_t a, uint32_t b)
{
	uint32_t prev;
	int i;

	for (i = 0; i < n; i++) {
		prev = heaptool_tag_enter(i % 2 == 0 ? a : b);
		mt_alloc();
		heaptool_tag_leave(prev);
	}
}

static void *
helper(void *arg)
{
	char c;
	int i;

	if (read(go[0], &c, 1) != 1)
		exit(3);
	for (i = 0; i < 3; i++)
		mt_h0();
	for (i = 0; i < 4; i++)
		mt_h1();
	if (write(done[1], &c, 1) != 1)
		exit(3);
	return arg;
}

int
main(int argc, char **argv)
{
	uint32_t a = 0, b = 0;
	pthread_t t;
	char c = 'g';
	int k;

	if (argc != 2)
		return 2;
	/* The helper exists before either session. */
	if (pipe(go) != 0 || pipe(done) != 0 ||
	    pthread_create(&t, NULL, helper, NULL) != 0)
		return 1;
	for (k = 0; k < 2; k++) {
		if (heaptool_start(1) != HEAPTOOL_OK)
			return 4;
		if (k == 0) {
			a = heaptool_tag("memo_a");
			b = heaptool_tag("memo_b");
		} else if (write(go[1], &c, 1) != 1 ||
		    read(done[0], &c, 1) != 1)
			return 3;
		/* One call site for both sessions: the same stack. */
		mt_run(k == 0 ? 60 : 5, k == 0 ? a : b, b);
		if (fx_dump(argv[1], k == 0 ? "a.heap" : "b.heap") !=
			HEAPTOOL_OK ||
		    heaptool_stop() != HEAPTOOL_OK)
			return 4;
	}
	pthread_join(t, NULL);
	printf("memo-tags: checksum %llu\n", (unsigned long long)sum);
	return 0;
}
