/*
 * Run a command and write its wall-clock time and the CPU time of it and of
 * its waited-for descendants, for the benchmark script.  The shell's own
 * "time" differs between shells and writes where the command's stderr goes;
 * this writes one line "WALL USER SYS" (seconds) to FILE and nothing else.
 *
 * usage: timeit FILE CMD [ARG...]
 * Exit status: CMD's, 128 + N if it was killed by signal N, 127 if it could
 * not be started.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
tv(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

int
main(int argc, char *argv[])
{
	struct timespec t0, t1;
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: timeit FILE CMD [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) == -1) {
		fprintf(stderr, "timeit: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "timeit: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	/* wait4 reports the child's usage together with that of the children
	 * it waited for (heaptool waits for the profiled command). */
	while (wait4(pid, &status, 0, &ru) == -1)
		if (errno != EINTR) {
			fprintf(stderr, "timeit: wait4: %s\n", strerror(errno));
			return 127;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if ((f = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "timeit: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	fprintf(f, "%.6f %.6f %.6f\n",
	    (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	    tv(ru.ru_utime), tv(ru.ru_stime));
	if (fclose(f) == EOF) {
		fprintf(stderr, "timeit: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
