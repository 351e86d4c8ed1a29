/*
 * t/t0067: the header's stubs when many threads make their first tag call
 * at once.  THREADS threads spin until main lets them all go (a barrier's
 * wake-ups are too far apart), then each asks for a tag of its own and
 * enters it: under the agent every one must get a tag (none left untagged
 * because another thread was looking the agent up).
 * Prints "ok - ..." or "not ok - ..." lines, as tags-stub does.
 */
#include <pthread.h>
#include <stdio.h>

#include "heaptool.h"

#define THREADS 8

static int go, ready;
static uint32_t got[THREADS];

static void *
worker(void *arg)
{
	int i = (int)(long)arg;
	char name[32];

	snprintf(name, sizeof(name), "race%d", i);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	got[i] = heaptool_tag(name);
	(void)heaptool_tag_enter(got[i]);
	return NULL;
}

int
main(void)
{
	pthread_t t[THREADS];
	int i, untagged = 0;

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i) != 0)
			return 1;
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < THREADS)
		;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		untagged += got[i] == HEAPTOOL_UNTAGGED;
	printf("%s - %d threads' first calls at once: %d untagged\n",
	    untagged == 0 ? "ok" : "not ok", THREADS, untagged);
	return 0;
}
