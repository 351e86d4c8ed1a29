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
 * Built with PROBE_SYSCALLS (libinject-slow.so, the stand-in for the agent
 * of t/t0023-attach-kill.sh), the constructor also makes that many system
 * calls: the injector stops at each one, so the remote call lasts long
 * enough for a kill at a random time to land in it often.
 */
#include <sys/syscall.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROBE_NAME
#define PROBE_NAME "probe"
#endif

int ht_probe_loads;

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
	if ((fd = getenv("HT_PROBE_RAISE")) != NULL &&
	    strcmp(fd, PROBE_NAME) == 0)
		raise(SIGUSR1);
	__asm__ volatile("pcmpeqd %%xmm8, %%xmm8" : : : "xmm8");
}
