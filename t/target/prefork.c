/*
 * Fixture of t0025-attach-fork: a pre-fork server.  The parent reads its
 * commands, one per line, from its standard input with read(2) (so that
 * it sits in that system call whenever it waits, a safe point for attach),
 * and forks a worker per "fork".  A worker allocates at once, before it
 * says anything, then waits for the parent's orders on a pipe of its own,
 * also in read(2).  Everyone writes whole lines to standard output with
 * one write(2) each, formatted on the stack: no stdio buffer, no
 * allocation the tests do not count.
 *
 *   fork          fork a worker, which keeps INIT blocks of 64 bytes
 *                 (site worker_init), then prints "worker PID"
 *   work PID N    worker PID keeps N blocks of 100 bytes (site worker_keep)
 *                 and allocates and frees N of 200 (site worker_churn),
 *                 then prints "worked PID N"
 *   keep N        the parent keeps N blocks of 300 bytes (site
 *                 parent_keep) and prints "kept N"
 *   quit          the workers exit, the parent reaps them and exits 0
 *                 (so does end of file)
 *
 * The parent prints "ready PID" first, after prctl(PR_SET_PTRACER_ANY);
 * each worker calls it too (Yama's exception is not inherited).  A
 * worker's allocations are exactly INIT x 64 bytes from its first, and N
 * x 100 kept and N x 200 freed for each "work".  Every line ends with the
 * running checksum of what the process computed ("sum HEX"), the same
 * with or without heaptool.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define INIT	16
#define MAXWORK 64
#define MAXKEEP 4096

static volatile size_t one = 1;
static uint64_t sum = 0xcbf29ce484222325ULL;
static void *kept[MAXKEEP];
static size_t nkept;

static struct {
	pid_t pid;
	int fd; /* the write end of its pipe */
} workers[MAXWORK];
static int nworkers;

/* One line, with one write(2). */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 24)
		_exit(3);
	n += snprintf(line + n, sizeof(line) - (size_t)n, " sum %016llx\n",
	    (unsigned long long)sum);
	if (write(1, line, (size_t)n) != n)
		_exit(3);
}

static void
keep(void *p, size_t size, uint64_t seed)
{
	if (p == NULL || nkept == MAXKEEP)
		_exit(4);
	fx_fill(p, size, seed, &sum);
	kept[nkept++] = p;
}

FX_NOINLINE static void
worker_init(void)
{
	size_t i;

	for (i = 0; i < INIT; i++)
		keep(malloc(64 * one), 64, i); /* SITE worker_init */
}

FX_NOINLINE static void
worker_keep(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(100 * one), 100, i); /* SITE worker_keep */
}

FX_NOINLINE static void
worker_churn(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(200 * one); /* SITE worker_churn */
		if (p == NULL)
			_exit(4);
		fx_fill(p, 200, i, &sum);
		free(p);
	}
}

FX_NOINLINE static void
parent_keep(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(300 * one), 300, i); /* SITE parent_keep */
}

/* One line from fd into buf, with read(2) only.  Returns its length + 1,
 * 0 at end of file, -1 on error. */
static ssize_t
read_line(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got < len - 1) {
		n = read(fd, buf + got, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return got == 0 && n == 0 ? 0 : (ssize_t)got + 1;
}

static void
worker(int fd)
{
	char line[64];
	long n;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	worker_init();
	say("worker %ld", (long)getpid());
	for (;;) {
		if (read_line(fd, line, sizeof(line)) <= 0 ||
		    strcmp(line, "quit") == 0)
			exit(0);
		n = strtol(line, NULL, 10);
		worker_keep((size_t)n);
		worker_churn((size_t)n);
		say("worked %ld %ld", (long)getpid(), n);
	}
}

static void
fork_worker(void)
{
	int p[2], i;
	pid_t pid;

	if (nworkers == MAXWORK || pipe(p) != 0)
		_exit(5);
	if ((pid = fork()) == -1)
		_exit(5);
	if (pid == 0) {
		close(p[1]);
		for (i = 0; i < nworkers; i++)
			close(workers[i].fd);
		worker(p[0]);
	}
	close(p[0]);
	workers[nworkers].pid = pid;
	workers[nworkers].fd = p[1];
	nworkers++;
}

static void
order(pid_t pid, long n)
{
	char line[32];
	int i, len;

	len = snprintf(line, sizeof(line), "%ld\n", n);
	for (i = 0; i < nworkers; i++)
		if (workers[i].pid == pid) {
			if (write(workers[i].fd, line, (size_t)len) != len)
				_exit(6);
			return;
		}
	say("no worker %ld", (long)pid);
}

int
main(void)
{
	char line[128], *end;
	long a;
	int i, st;

	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	say("ready %ld", (long)getpid());
	while (
	    read_line(0, line, sizeof(line)) > 0 && strcmp(line, "quit") != 0) {
		if (strcmp(line, "fork") == 0)
			fork_worker();
		else if (strncmp(line, "work ", 5) == 0) {
			a = strtol(line + 5, &end, 10);
			order((pid_t)a, strtol(end, NULL, 10));
		} else if (strncmp(line, "keep ", 5) == 0) {
			a = strtol(line + 5, NULL, 10);
			parent_keep((size_t)a);
			say("kept %ld", a);
		} else
			say("unknown command");
	}
	for (i = 0; i < nworkers; i++)
		close(workers[i].fd);
	for (i = 0; i < nworkers; i++)
		while (waitpid(workers[i].pid, &st, 0) == -1 && errno == EINTR)
			;
	return 0;
}
