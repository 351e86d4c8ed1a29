/*
 * Run a command with a time limit and say what it took, for the tests of
 * bounded work (t/t0036-hostile-bounds.sh) and bench/hostile.sh:
 *
 *   runmax SECONDS OUT CMD [ARG...]
 *
 * runs CMD with stdout to OUT and stderr to OUT.err, in a process group of
 * its own, killed (the whole group) after SECONDS of wall-clock time, and
 * prints one line "STATUS MAXRSS_KIB WALL_S CPU_S": the exit status, or
 * "timeout", or "signal N"; the peak resident set of CMD (wait4's
 * ru_maxrss, which counts the forked copy of this small program before the
 * exec, not a script interpreter's memory as a wrapper in Python would);
 * the wall-clock seconds; its user and system seconds.  Exit status 0, or
 * 2 on misuse and 1 when CMD could not be run.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
secs(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static double
since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int
main(int argc, char **argv)
{
	struct timespec t0;
	struct rusage ru;
	char err[4096];
	double limit;
	pid_t pid;
	int status, fd, timed_out = 0;

	if (argc < 4 || (limit = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: runmax SECONDS OUT CMD [ARG...]\n");
		return 2;
	}
	snprintf(err, sizeof(err), "%s.err", argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) == -1) {
		perror("runmax: fork");
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644)) ==
			-1 ||
		    dup2(fd, STDOUT_FILENO) == -1 ||
		    (fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644)) ==
			-1 ||
		    dup2(fd, STDERR_FILENO) == -1)
			_exit(127);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		if (wait4(pid, &status, WNOHANG, &ru) == pid)
			break;
		if (!timed_out && since(&t0) > limit) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			timed_out = 1;
		}
		usleep(10000);
	}
	if (timed_out)
		printf("timeout");
	else if (WIFSIGNALED(status))
		printf("signal %d", WTERMSIG(status));
	else
		printf("%d", WEXITSTATUS(status));
	printf(" %ld %.2f %.2f\n", ru.ru_maxrss, since(&t0),
	    secs(ru.ru_utime) + secs(ru.ru_stime));
	return 0;
}
