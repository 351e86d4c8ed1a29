/*
 * Fixture of t/inject-t: a busy loop that makes no system call at all, so
 * that no thread ever reaches a safe point.  Prints "ready PID ADDRESS",
 * ADDRESS being that of the counter the loop increments, which the test
 * reads from outside to see that the process keeps running.
 *
 * With the argument "sys" the loop makes a system call (getppid) every
 * 4096 turns: it never blocks, so the injector must follow it to a
 * syscall-exit-stop.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long counter;

int
main(int argc, char **argv)
{
	int sys = argc > 1 && strcmp(argv[1], "sys") == 0;

	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	printf("ready %d %p\n", (int)getpid(), (void *)&counter);
	fflush(stdout);
	for (;;)
		if ((++counter & 4095) == 0 && sys)
			(void)syscall(SYS_getppid);
}
