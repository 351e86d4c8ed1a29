/*
 * The library t/inject-t injects (built as libinject-probe.so and, with
 * PROBE_NAME "probe2", libinject-probe2.so).
 *
 * Its constructor counts its loads in an exported variable, writes "probe
 * NAME loaded" to the file descriptor named by HT_PROBE_FD if that is set,
 * and then sets xmm8 to all ones, as any code may: a thread that the
 * injector borrowed and did not restore would see it (see inject-read.c).
 * If HT_PROBE_RAISE names it, it also sends SIGUSR1 to its own thread: a
 * signal that arrives while the injector's call is running.
 *
 * If HT_PROBE_THREAD is set, the constructor also starts a thread that
 * waits in pause(), called from this library: a thread at a system call
 * with a frame of the library on its stack, which ht_inject_call must not
 * borrow to call the library's function.  ht_probe_call(), the function
 * t/inject-t calls that way, counts its calls, writes "probe NAME called
 * N" to HT_PROBE_FD, clobbers xmm8 as the constructor does, and returns
 * 0x5150 + N.
 *
 * Built with PROBE_SYSCALLS (libinject-slow.so, the stand-in for the agent
 * of t/t0023-attach-kill.sh), the constructor also makes that many system
 * calls: the injector stops at each one, so the remote call lasts long
 * enough for a kill at a random time to land in it often.
 */
#include <sys/syscall.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROBE_NAME
#define PROBE_NAME "probe"
#endif

int ht_probe_loads;
int ht_probe_calls;

/* Where the library's thread waits: a frame of this library. */
static void *
probe_wait(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

long
ht_probe_call(void)
{
	const char *fd = getenv("HT_PROBE_FD");
	char buf[64];
	int n;

	ht_probe_calls++;
	if (fd != NULL) {
		n = snprintf(buf, sizeof(buf), "probe %s called %d\n",
		    PROBE_NAME, ht_probe_calls);
		if (n > 0 && write(atoi(fd), buf, (size_t)n) < 0)
			ht_probe_calls = -1000;
	}
	__asm__ volatile("pcmpeqd %%xmm8, %%xmm8" : : : "xmm8");
	return 0x5150 + ht_probe_calls;
}

__attribute__((constructor)) static void
probe_init(void)
{
	const char *fd = getenv("HT_PROBE_FD");
	char buf[64];
	int n;

#ifdef PROBE_SYSCALLS
	for (n = 0; n < PROBE_SYSCALLS; n++)
		(void)syscall(SYS_getppid);
#endif
	ht_probe_loads++;
	if (fd != NULL) {
		n = snprintf(buf, sizeof(buf), "probe %s loaded\n", PROBE_NAME);
		if (n > 0 && write(atoi(fd), buf, (size_t)n) < 0)
			ht_probe_loads = -1;
	}
	if (getenv("HT_PROBE_THREAD") != NULL) {
		pthread_t t;
		sigset_t all, old;

		/* Its signals are the program's other threads' business. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&t, NULL, probe_wait, NULL) != 0)
			ht_probe_loads = -1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if ((fd = getenv("HT_PROBE_RAISE")) != NULL &&
	    strcmp(fd, PROBE_NAME) == 0)
		raise(SIGUSR1);
	__asm__ volatile("pcmpeqd %%xmm8, %%xmm8" : : : "xmm8");
}
