/*
 * Fixture of t/t0027-attach-final.sh: a process that ends in a way the
 * test chooses, so that the final profile of an attached session can be
 * checked for each, and the process's end compared with one without
 * heaptool (same exit status, same signal, same core dump).
 *
 * With -c it installs, before anything, a SIGSEGV handler that recovers
 * (siglongjmp back to the command loop, printing "caught"), as programs
 * that use faults on purpose (JITs, garbage collectors) do.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line, with read(2):
 *   keep N   N blocks of 1000 bytes, kept (site keep_blocks); "kept N"
 *   exit N   exit(N): the exit handlers run
 *   _exit N  _exit(N): they do not
 *   segv     write through a null pointer
 *   abort    abort()
 *   fpe      an integer division by zero
 *   kill     kill(getpid(), SIGSEGV): a SIGSEGV sent, not a fault
 *   catch    install the recovering SIGSEGV handler now; "catching"
 *   chain    install a SIGSEGV handler that prints "chained", calls the
 *            handler it replaced (if it was a function), then restores
 *            the default action and raises the signal again, as crash
 *            reporters do; "chaining"
 * End of file is exit 0.
 */
#include <sys/prctl.h>

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static volatile size_t one = 1;
static volatile int zero;
static sigjmp_buf back;
static struct sigaction chained;
static uint64_t sum;

FX_NOINLINE static void
keep_blocks(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(1000 * one); /* SITE keep_blocks */
		if (p == NULL)
			exit(1);
		fx_fill(p, 1000, i, &sum);
	}
}

static void
say(const char *s)
{
	ssize_t n = write(1, s, strlen(s));

	(void)n;
}

static void
on_segv_recover(int sig)
{
	(void)sig;
	say("caught\n");
	siglongjmp(back, 1);
}

static void
on_segv_chain(int sig, siginfo_t *info, void *uc)
{
	say("chained\n");
	if ((chained.sa_flags & SA_SIGINFO) != 0 &&
	    chained.sa_sigaction != NULL)
		chained.sa_sigaction(sig, info, uc);
	else if (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN)
		chained.sa_handler(sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
catch_segv(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv_recover;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

static void
chain_segv(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv_chain;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &chained);
}

static ssize_t
read_line(char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got < len - 1) {
		if ((n = read(0, buf + got, 1)) < 0)
			return -1;
		if (n == 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return got == 0 && n == 0 ? 0 : (ssize_t)got + 1;
}

int
main(int argc, char **argv)
{
	char line[128], out[160];
	ssize_t n;

	if (argc > 1 && strcmp(argv[1], "-c") == 0)
		catch_segv();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	say("ready\n");
	sigsetjmp(back, 1);
	while ((n = read_line(line, sizeof(line))) > 0) {
		if (strncmp(line, "keep ", 5) == 0) {
			keep_blocks((size_t)strtoul(line + 5, NULL, 10));
			snprintf(out, sizeof(out), "kept %s\n", line + 5);
			say(out);
		} else if (strncmp(line, "exit ", 5) == 0)
			exit((int)strtol(line + 5, NULL, 10));
		else if (strncmp(line, "_exit ", 6) == 0)
			_exit((int)strtol(line + 6, NULL, 10));
		else if (strcmp(line, "segv") == 0)
			*(volatile int *)(uintptr_t)zero = 1;
		else if (strcmp(line, "abort") == 0)
			abort();
		else if (strcmp(line, "fpe") == 0)
			sum += (uint64_t)(1000 / zero);
		else if (strcmp(line, "kill") == 0)
			kill(getpid(), SIGSEGV);
		else if (strcmp(line, "catch") == 0) {
			catch_segv();
			say("catching\n");
		} else if (strcmp(line, "chain") == 0) {
			chain_segv();
			say("chaining\n");
		} else
			say("unknown command\n");
	}
	return n < 0;
}
