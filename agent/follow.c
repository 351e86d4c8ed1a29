/* The followed children of this process (follow.h). */
#include <sys/wait.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "follow.h"
#include "mem.h"

/* Workers of a pre-fork server come and go: the ring keeps the last RING
 * children forked, which is more than a status can list. */
#define RING 1022

struct ring {
	uint64_t added; /* children ever written; slot added % RING next */
	uint32_t pid[RING];
};

_Static_assert(sizeof(struct ring) <= 4096, "one page");

static struct ring *ring;

int
ht_follow_prepare(void)
{
	if (ring == NULL)
		ring = ht_mem_map_shared(sizeof(*ring));
	return ring != NULL ? 0 : -1;
}

void
ht_follow_leave(void)
{
	if (ring != NULL)
		ht_mem_unmap(ring, sizeof(*ring));
	ring = NULL;
}

void
ht_follow_child(pid_t self)
{
	uint64_t i;

	if (ring != NULL) {
		i = __atomic_fetch_add(&ring->added, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&ring->pid[i % RING], (uint32_t)self,
		    __ATOMIC_RELEASE);
	}
	ht_follow_leave();
	(void)ht_follow_prepare();
}

/* Is pid a child of this process that has not exited?  WNOWAIT: a zombie
 * stays for the program to reap; ECHILD: not (or no longer) our child. */
static int
running_child(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 &&
	    si.si_pid == 0;
}

size_t
ht_follow_children(uint32_t *out, size_t max)
{
	uint64_t added, i, first;
	uint32_t pid;
	size_t n = 0, j;

	if (ring == NULL)
		return 0;
	added = __atomic_load_n(&ring->added, __ATOMIC_ACQUIRE);
	first = added > RING ? added - RING : 0;
	for (i = added; i > first && n < max; i--) {
		pid = __atomic_load_n(&ring->pid[(i - 1) % RING],
		    __ATOMIC_ACQUIRE);
		if (pid == 0)
			continue; /* its child has not written it yet */
		for (j = 0; j < n && out[j] != pid; j++)
			;
		if (j == n && running_child((pid_t)pid))
			out[n++] = pid;
	}
	return n;
}
