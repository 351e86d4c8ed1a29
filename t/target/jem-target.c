/*
 * Fixture of the native-backend tests (t0060-t0063): a program run with an
 * allocator preloaded (Debian's libjemalloc.so.2 with MALLOC_CONF=prof:true,
 * prof_active:false, or libmimalloc.so) that allocates on command at two
 * sites of its own and keeps its own counts.  It reads commands on stdin
 * and answers each with one line:
 *
 *   alloc S N SIZE  N x malloc(SIZE) at site S (a or b), kept
 *                                       "done alloc S OBJECTS BYTES"
 *   free S          free every block kept at site S
 *                                       "done free S"
 *   churn N SIZE    N x malloc(SIZE) then free, at site c
 *                                       "done churn"
 *   fork N SIZE     fork a child that makes N x malloc(SIZE) at site b
 *                   and exits with them kept; wait for it
 *                                       "done fork PID"
 *   dlopen          load libctl-late.so (next to this program) with
 *                   dlopen(3), through the agent's hook
 *                                       "done dlopen"
 *   latecall N      N x malloc(5555) in ctl_late_alloc, in that library,
 *                   kept                "done latecall N"
 *   quit (or EOF)   free every block, print the checksum  "sum HEX"
 *   exit            print the checksum and exit(0) with the blocks kept
 *                                       "sum HEX"
 *
 * OBJECTS and BYTES are what site S holds now, BYTES counted in usable
 * sizes (malloc_usable_size: what jemalloc samples and reports); the
 * sizes the tests use are size classes, where the two agree.  It starts
 * with "ready" (after "early N BYTES" with the argument early: main's
 * first N allocations, of 64 bytes, kept to the end).  The checksum covers the data written, so a run with the
 * agent must print what a run without does.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define MAX_KEPT 400000

struct site {
	void **blocks;
	size_t n;
	uint64_t bytes;
};

static struct site sites[2];
static uint64_t sum;
static volatile size_t one = 1;

static void
keep(struct site *s, void *p, uint64_t i)
{
	size_t u;

	if (p == NULL || s->n == MAX_KEPT) {
		fprintf(stderr, "jem-target: out of memory or room\n");
		exit(1);
	}
	u = malloc_usable_size(p);
	fx_fill(p, u < 64 ? u : 64, i, &sum);
	s->blocks[s->n++] = p;
	s->bytes += u;
}

FX_NOINLINE static void
jem_site_a(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(&sites[0], malloc(size * one), i); /* SITE jem_site_a */
}

FX_NOINLINE static void
jem_site_b(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(&sites[1], malloc(size * one), i); /* SITE jem_site_b */
}

FX_NOINLINE static void
jem_churn(size_t n, size_t size)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(size * one); /* SITE jem_churn */
		if (p == NULL)
			exit(1);
		fx_fill(p, size < 64 ? size : 64, i, &sum);
		free(p);
	}
}

static void
release(struct site *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->blocks[i]);
	s->n = 0;
	s->bytes = 0;
}

/* libctl-late.so, from this program's directory. */
static uint64_t (*late_alloc)(size_t);

static int
load_late(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *h;

	if (n <= 0)
		return -1;
	path[n] = '\0';
	if ((slash = strrchr(path, '/')) == NULL)
		return -1;
	strcpy(slash + 1, "libctl-late.so");
	if ((h = dlopen(path, RTLD_NOW)) == NULL)
		return -1;
	late_alloc = (uint64_t(*)(size_t))(uintptr_t)dlsym(h, "ctl_late_alloc");
	return late_alloc != NULL ? 0 : -1;
}

/* With the argument "early": main's first allocations, small ones, kept
 * to the end (a sampler that skips the first bytes of main misses them). */
#define EARLY_N 2000
static void *early[EARLY_N];

FX_NOINLINE static void
jem_site_early(void)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; i < EARLY_N; i++) {
		early[i] = malloc(64 * one); /* SITE jem_site_early */
		if (early[i] == NULL)
			exit(1);
		bytes += malloc_usable_size(early[i]);
	}
	printf("early %d %" PRIu64 "\n", EARLY_N, bytes);
}

int
main(int argc, char **argv)
{
	char line[256], name[8];
	unsigned long n, size;
	struct site *s;

	if (argc > 1 && strcmp(argv[1], "early") == 0)
		jem_site_early();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sites[0].blocks = calloc(MAX_KEPT, sizeof(void *));
	sites[1].blocks = calloc(MAX_KEPT, sizeof(void *));
	if (sites[0].blocks == NULL || sites[1].blocks == NULL)
		return 1;
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "alloc %7s %lu %lu", name, &n, &size) == 3 &&
		    (name[0] == 'a' || name[0] == 'b') && name[1] == '\0') {
			s = &sites[name[0] - 'a'];
			if (s->n + n > MAX_KEPT) {
				printf("error too many\n");
				continue;
			}
			if (name[0] == 'a')
				jem_site_a(n, size);
			else
				jem_site_b(n, size);
			printf("done alloc %s %zu %" PRIu64 "\n", name, s->n,
			    s->bytes);
		} else if (sscanf(line, "free %7s", name) == 1 &&
		    (name[0] == 'a' || name[0] == 'b') && name[1] == '\0') {
			release(&sites[name[0] - 'a']);
			printf("done free %s\n", name);
		} else if (sscanf(line, "churn %lu %lu", &n, &size) == 2) {
			jem_churn(n, size);
			printf("done churn\n");
		} else if (sscanf(line, "fork %lu %lu", &n, &size) == 2 &&
		    n <= MAX_KEPT - sites[1].n) {
			pid_t pid = fork();

			if (pid == 0) {
				/* Kept at the child's exit. */
				jem_site_b(n, size);
				exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				printf("error fork\n");
			else
				printf("done fork %ld\n", (long)pid);
		} else if (strncmp(line, "dlopen", 6) == 0) {
			if (load_late() == 0)
				printf("done dlopen\n");
			else
				printf("error dlopen: %s\n",
				    dlerror() != NULL ? "dlerror" : "?");
		} else if (sscanf(line, "latecall %lu", &n) == 1 &&
		    late_alloc != NULL) {
			sum = fx_mix(sum, late_alloc(n));
			printf("done latecall %lu\n", n);
		} else if (strncmp(line, "quit", 4) == 0)
			break;
		else if (strncmp(line, "exit", 4) == 0) {
			/* The blocks kept are live at exit. */
			printf("sum %016" PRIx64 "\n", sum);
			exit(0);
		} else
			printf("error %s", line);
	}
	release(&sites[0]);
	release(&sites[1]);
	printf("sum %016" PRIx64 "\n", sum);
	return 0;
}
