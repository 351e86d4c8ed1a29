/*
 * Fixture of t0101: a program that leaves by _exit or _Exit, which run no
 * destructor (the agent writes its profile or trace in one).
 *
 *   exit-early MODE
 *     _exit   keeps 7 blocks of 300 bytes (site keep_exit), then _exit(3)
 *     _Exit   the same (site keep_exit), then _Exit(4)
 *     fork    keeps the 7; a child keeps 5 blocks of 200 (site keep_child)
 *             and leaves by _exit(0), which must write nothing over the
 *             parent's; the parent waits for it and then _exit(3)
 *     vfork   keeps the 7; a vfork child fails an exec and leaves by
 *             _exit(127), as posix_spawn's do (it shares the parent's
 *             memory: nothing may run there); the parent then _exit(3)
 *
 * Prints a checksum of its blocks first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

static uint64_t sum = 0xcbf29ce484222325ULL;

static FX_NOINLINE void
keep_exit(void)
{
	int i;

	for (i = 0; i < 7; i++) {
		char *p = malloc(300); /* SITE keep_exit */

		if (p == NULL)
			exit(1);
		fx_fill(p, 300, (uint64_t)i, &sum);
	}
}

static FX_NOINLINE void
keep_child(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		char *p = malloc(200); /* SITE keep_child */

		if (p == NULL)
			_exit(1);
		fx_keep(p);
	}
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "_exit";
	pid_t pid;
	int st;

	keep_exit();
	printf("sum %llu\n", (unsigned long long)sum);
	fflush(stdout);
	if (strcmp(mode, "_Exit") == 0)
		_Exit(4);
	if (strcmp(mode, "fork") == 0) {
		if ((pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			keep_child();
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return 1;
	} else if (strcmp(mode, "vfork") == 0) {
		if ((pid = vfork()) < 0)
			return 1;
		if (pid == 0) {
			execl("/nonexistent/heaptool-fixture", "x",
			    (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 127)
			return 1;
	}
	_exit(3);
}
