/*
 * Fixture of t/control-t: a process that allocates while the test talks to
 * its agent.  A second thread churns (malloc(1000), free) all the time; the
 * main thread reads commands on stdin and answers each with one line:
 *
 *   alloc N     N x malloc(4321) in ctl_keep, kept       "done alloc N"
 *   late        load libctl-late.so (next to this program) through a
 *               pointer to the libc's dlopen, behind the agent's hook
 *                                                        "done late"
 *   latecall N  N x malloc(5555) in the late library, kept
 *                                                        "done latecall N"
 *   fork        fork a child that waits for "unfork"     "done fork"
 *   unfork      let the child exit and reap it           "done unfork"
 *   agent       dlopen the library named by $CTL_AGENT (the agent, loaded
 *               as heaptool attach loads it)             "done agent"
 *   tree D      2^D x malloc(24), then free, each through a call chain of
 *               its own: 2^D sites, a profile of megabytes "done tree D"
 *   quit (or EOF)  stop the churn, print the checksum    "sum HEX"
 *
 * It starts with "ready ADDR", ADDR being ctl_keep's address: the test finds
 * the site by its block size (no other site uses 4321 or 5555 bytes) and
 * checks that its innermost frame is in ctl_keep.  The checksum covers the
 * data written by the commands (not the churn), so a run with the agent must
 * print the same lines as a run without.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

static uint64_t sum;
static void *kept[100000];
static size_t nkept;
static volatile int stop;
static volatile size_t one = 1;

FX_NOINLINE static void
ctl_keep(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(4321 * one); /* SITE ctl_keep */
		if (p == NULL) {
			fprintf(stderr, "ctl-target: out of memory\n");
			exit(1);
		}
		fx_fill(p, 4321, i, &sum);
		if (nkept < sizeof(kept) / sizeof(kept[0]))
			kept[nkept++] = p;
	}
}

static void ctl_tree(unsigned depth, unsigned path);
static volatile unsigned tree_calls;

/* Two callers of ctl_tree: a path of lefts and rights through them is a
 * call chain of its own (the work after each call keeps it from being a
 * tail call, which would leave no frame). */
FX_NOINLINE static void
ctl_left(unsigned depth, unsigned path)
{
	ctl_tree(depth, path);
	tree_calls++;
}

FX_NOINLINE static void
ctl_right(unsigned depth, unsigned path)
{
	ctl_tree(depth, path);
	tree_calls++;
}

FX_NOINLINE static void
ctl_tree(unsigned depth, unsigned path)
{
	void *p;

	if (depth == 0) {
		p = malloc(24 * one); /* SITE ctl_tree */
		if (p == NULL) {
			fprintf(stderr, "ctl-target: out of memory\n");
			exit(1);
		}
		fx_fill(p, 24, path, &sum);
		free(p);
	} else if (path & 1)
		ctl_left(depth - 1, path >> 1);
	else
		ctl_right(depth - 1, path >> 1);
}

static void *
churn(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	unsigned i;
	uint64_t local = 0;
	void *p;

	(void)arg;
	for (i = 0; !stop; i++) {
		p = malloc(1000 * one); /* SITE churn */
		if (p != NULL)
			fx_fill(p, 1000, i, &local);
		free(p);
		if (i % 64 == 0)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static uint64_t (*late_alloc)(size_t);
static pid_t child = -1;
static int child_pipe = -1;

/* The child says it runs (its fork handlers are done) before "done fork",
 * then waits for its pipe to close. */
static int
fork_child(void)
{
	int p[2], r[2];
	char c = 'r';

	if (pipe(p) != 0 || pipe(r) != 0 || (child = fork()) < 0)
		return -1;
	if (child == 0) {
		close(p[1]);
		close(r[0]);
		if (write(r[1], &c, 1) != 1)
			_exit(1);
		while (read(p[0], &c, 1) < 0)
			;
		_exit(0);
	}
	close(p[0]);
	close(r[1]);
	child_pipe = p[1];
	if (read(r[0], &c, 1) != 1)
		return -1;
	close(r[0]);
	return 0;
}

static int
load_late(void)
{
	void *(*libc_dlopen)(const char *, int);
	char path[PATH_MAX];
	ssize_t n;
	char *slash;
	void *h;

	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	if ((slash = strrchr(path, '/')) == NULL)
		return -1;
	strcpy(slash + 1, "libctl-late.so");
	/* The libc's own dlopen, called through a pointer: no GOT slot of
	 * this program is involved, so no hook sees the load. */
	*(void **)&libc_dlopen = dlsym(RTLD_DEFAULT, "dlopen");
	if (libc_dlopen == NULL || (h = libc_dlopen(path, RTLD_NOW)) == NULL)
		return -1;
	*(void **)&late_alloc = dlsym(h, "ctl_late_alloc");
	return late_alloc != NULL ? 0 : -1;
}

int
main(void)
{
	pthread_t t;
	char line[256];
	unsigned long n;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pthread_create(&t, NULL, churn, NULL) != 0) {
		fprintf(stderr, "ctl-target: pthread_create failed\n");
		return 1;
	}
	printf("ready %p\n", (void *)ctl_keep);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "alloc %lu", &n) == 1) {
			ctl_keep(n);
			printf("done alloc %lu\n", n);
		} else if (sscanf(line, "tree %lu", &n) == 1 && n < 20) {
			unsigned path;

			for (path = 0; path < 1u << n; path++)
				ctl_tree((unsigned)n, path);
			printf("done tree %lu\n", n);
		} else if (strcmp(line, "late\n") == 0) {
			if (load_late() != 0) {
				fprintf(stderr,
				    "ctl-target: cannot load "
				    "libctl-late.so: %s\n",
				    dlerror());
				return 1;
			}
			printf("done late\n");
		} else if (sscanf(line, "latecall %lu", &n) == 1 &&
		    late_alloc != NULL) {
			sum = fx_mix(sum, late_alloc(n));
			printf("done latecall %lu\n", n);
		} else if (strcmp(line, "fork\n") == 0 && child < 0) {
			if (fork_child() != 0) {
				fprintf(stderr, "ctl-target: fork failed\n");
				return 1;
			}
			printf("done fork\n");
		} else if (strcmp(line, "unfork\n") == 0 && child > 0) {
			close(child_pipe);
			waitpid(child, NULL, 0);
			child = -1;
			printf("done unfork\n");
		} else if (strcmp(line, "agent\n") == 0 &&
		    getenv("CTL_AGENT") != NULL) {
			if (dlopen(getenv("CTL_AGENT"), RTLD_NOW) == NULL) {
				fprintf(stderr, "ctl-target: %s\n", dlerror());
				return 1;
			}
			printf("done agent\n");
		} else if (strcmp(line, "quit\n") == 0)
			break;
		else {
			fprintf(stderr, "ctl-target: bad command: %s", line);
			return 1;
		}
		fflush(stdout);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("sum %016llx\n", (unsigned long long)sum);
	return 0;
}
