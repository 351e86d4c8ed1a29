/*
 * Fixture of t0021-attach-env: a busy loop that makes no system call, so
 * that no thread ever reaches a safe point for heaptool attach, which must
 * give up after its --timeout and leave the process running untouched.
 *
 * Prints "ready" (after prctl(PR_SET_PTRACER_ANY)), then spins.  SIGUSR1
 * makes it print how far it got ("spins N") and exit 0: the test's proof
 * that it still runs and still takes its signals.
 */
#include <sys/prctl.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void
on_usr1(int sig)
{
	(void)sig;
	done = 1;
}

int
main(void)
{
	struct sigaction sa;
	volatile unsigned long spins = 0;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!done)
		spins++;
	printf("spins %lu\n", (unsigned long)spins);
	return 0;
}
