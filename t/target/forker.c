/*
 * Fixture of t0012-run-robust: a program that forks.
 *
 *   forker [-p PIDFILE]       allocate; fork 4 children that allocate, free
 *                             and exit() with status 10 + i; fork and exec
 *                             /bin/true; check every status; allocate again;
 *                             print a checksum; exit 0.  With -p, write
 *                             "parent PID" and "child PID" lines to PIDFILE
 *                             (the tests check no child left a profile).
 *   forker exit N             allocate, print a checksum, exit(N)
 *   forker kill SIG           allocate, print a checksum, die of signal SIG
 *                             (a number)
 *
 * Children leave through exit(), not _exit(), so that any exit-time code of a
 * profiler runs in them too.  Nothing printed depends on pids.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define NCHILD 4

static uint64_t sum = 0xcbf29ce484222325ULL;
static volatile size_t one = 1;

/* Allocate n blocks of assorted sizes; free every other one, keep the rest. */
FX_NOINLINE static void
work(size_t n, uint64_t seed)
{
	size_t i, size;
	void *p;

	for (i = 0; i < n; i++) {
		size = (16 + (seed + i) * 37 % 3000) * one;
		p = malloc(size); /* SITE work */
		if (p == NULL)
			exit(1);
		fx_fill(p, size, seed + i, &sum);
		if (i % 2 == 0)
			free(p);
	}
}

static void
fail(const char *what)
{
	fprintf(stderr, "forker: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int
run_children(const char *pidfile)
{
	pid_t pids[NCHILD + 1], w;
	FILE *pf = NULL;
	int i, status, bad = 0;

	if (pidfile != NULL && (pf = fopen(pidfile, "w")) == NULL)
		fail(pidfile);
	/* Flush before fork so that no child repeats buffered output. */
	fflush(NULL);
	for (i = 0; i < NCHILD; i++) {
		if ((pids[i] = fork()) == -1)
			fail("fork");
		if (pids[i] == 0) {
			work(500 + 100 * i, i);
			exit(10 + i);
		}
	}
	if ((pids[NCHILD] = fork()) == -1)
		fail("fork");
	if (pids[NCHILD] == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pf != NULL) {
		fprintf(pf, "parent %ld\n", (long)getpid());
		for (i = 0; i <= NCHILD; i++)
			fprintf(pf, "child %ld\n", (long)pids[i]);
		if (fclose(pf) != 0)
			fail(pidfile);
	}
	work(1000, 99);
	for (i = 0; i <= NCHILD; i++) {
		while (
		    (w = waitpid(pids[i], &status, 0)) == -1 && errno == EINTR)
			;
		if (w == -1)
			fail("waitpid");
		if (!WIFEXITED(status) ||
		    WEXITSTATUS(status) != (i < NCHILD ? 10 + i : 0)) {
			printf("forker: child %d: unexpected status %#x\n", i,
			    status);
			bad = 1;
		}
	}
	work(200, 7);
	printf("forker: children exited 10 11 12 13, /bin/true exited 0%s\n",
	    bad ? " NOT" : "");
	printf("forker: checksum %016llx\n", (unsigned long long)sum);
	return bad;
}

int
main(int argc, char *argv[])
{
	const char *pidfile = NULL;

	work(300, 1);
	if (argc == 3 && strcmp(argv[1], "-p") == 0)
		pidfile = argv[2];
	else if (argc == 3 && strcmp(argv[1], "exit") == 0) {
		printf("forker: checksum %016llx, exiting %d\n",
		    (unsigned long long)sum, atoi(argv[2]));
		exit(atoi(argv[2]));
	} else if (argc == 3 && strcmp(argv[1], "kill") == 0) {
		printf("forker: checksum %016llx, dying of signal %d\n",
		    (unsigned long long)sum, atoi(argv[2]));
		fflush(stdout);
		signal(atoi(argv[2]), SIG_DFL);
		raise(atoi(argv[2]));
		return 1;
	} else if (argc != 1) {
		fprintf(stderr,
		    "usage: forker [-p pidfile] | exit N | kill SIG\n");
		return 2;
	}
	return run_children(pidfile);
}
