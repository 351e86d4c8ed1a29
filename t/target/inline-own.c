/*
 * Fixture of t/t0055-inline-own.sh: an executable whose malloc family is
 * its own (t/target/inline-alloc.c), called directly from its own code, so
 * that heaptool sees these calls only through inline hooks.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line, with read(2):
 *   alloc N   N blocks of 1000 + i bytes by malloc (site alloc_site),
 *             kept; prints "allocated N"
 *   mix N     N rounds of calloc(1, 200), realloc of it to 400,
 *             aligned_alloc(64, 128), posix_memalign(32, 96), then frees
 *             of all three (site mix_site); prints "mixed N"
 *   release   frees the blocks of alloc; prints "released"
 *   counts    prints "counts A B F" where A is the calls to its malloc,
 *             calloc, realloc and memalign so far, B their bytes, F the
 *             frees (realloc's included)
 *   main      the same figures at main's start: "main A B F"
 *   exec PATH opens PATH for appending EXEC_FILES times (descriptors
 *             kept across an exec, taking the lowest free numbers: those
 *             an agent's doorbell had), then execs itself in place, which
 *             prints "open N" (N: its descriptors open on PATH) before
 *             "ready" and reads on
 *   quit      exit 0 (so does end of file), after printing
 *             "checksum HEX": of the bytes written and read back
 */
#include <sys/prctl.h>
#include <sys/stat.h>

#include <fcntl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "inline-alloc.h"

#define MAXKEEP	   100000
#define EXEC_FILES 16

static void *kept[MAXKEEP];
static size_t nkept;
static uint64_t sum = 1;

FX_NOINLINE static void
alloc_site(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n && nkept < MAXKEEP; i++) {
		if ((p = malloc(1000 + i)) == NULL) /* SITE alloc_site */
			exit(1);
		fx_fill(p, 1000 + i, i, &sum);
		kept[nkept++] = p;
	}
}

FX_NOINLINE static void
mix_site(size_t n)
{
	size_t i;
	char *p, *q, *r;
	void *s;

	for (i = 0; i < n; i++) {
		if ((p = calloc(1, 200)) == NULL)
			exit(1);
		sum = fx_mix(sum, (uint64_t)p[199]);
		if ((q = realloc(p, 400)) == NULL)
			exit(1);
		fx_fill(q, 400, i, &sum);
		if ((r = aligned_alloc(64, 128)) == NULL ||
		    ((uintptr_t)r & 63) != 0)
			exit(1);
		fx_fill(r, 128, i, &sum);
		if (posix_memalign(&s, 32, 96) != 0 || ((uintptr_t)s & 31))
			exit(1);
		fx_fill(s, 96, i, &sum);
		free(q);
		free(r);
		free(s);
	}
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

static void
counts(const char *what, const struct ia_counts *c)
{
	printf("%s %llu %llu %llu\n", what,
	    (unsigned long long)(c->malloc + c->calloc + c->realloc +
		c->memalign),
	    (unsigned long long)c->bytes, (unsigned long long)c->free);
}

/* exec PATH: the files, then this program again, told of them. */
static void
exec_self(const char *path)
{
	char *av[4];
	int i;

	for (i = 0; i < EXEC_FILES; i++)
		if (open(path, O_WRONLY | O_APPEND | O_CREAT, 0600) < 0)
			exit(1);
	av[0] = "inline-own";
	av[1] = "after";
	av[2] = (char *)path;
	av[3] = NULL;
	execv("/proc/self/exe", av);
	exit(1);
}

/* The descriptors open on path's file. */
static int
open_on(const char *path)
{
	struct stat a, b;
	int fd, n = 0;

	if (stat(path, &a) != 0)
		return -1;
	for (fd = 3; fd < 1024; fd++)
		if (fstat(fd, &b) == 0 && b.st_dev == a.st_dev &&
		    b.st_ino == a.st_ino)
			n++;
	return n;
}

int
main(int argc, char **argv)
{
	struct ia_counts ia0 = ia_count;
	char line[128];
	size_t i;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && strcmp(argv[1], "after") == 0)
		printf("open %d\n", open_on(argv[2]));
	printf("ready\n");
	while (read_line(line, sizeof(line)) > 0) {
		if (strncmp(line, "alloc ", 6) == 0) {
			alloc_site(strtoul(line + 6, NULL, 10));
			printf("allocated %s\n", line + 6);
		} else if (strncmp(line, "mix ", 4) == 0) {
			mix_site(strtoul(line + 4, NULL, 10));
			printf("mixed %s\n", line + 4);
		} else if (strcmp(line, "release") == 0) {
			for (i = 0; i < nkept; i++)
				free(kept[i]);
			nkept = 0;
			printf("released\n");
		} else if (strcmp(line, "counts") == 0)
			counts("counts", &ia_count);
		else if (strcmp(line, "main") == 0)
			counts("main", &ia0);
		else if (strncmp(line, "exec ", 5) == 0)
			exec_self(line + 5);
		else if (strcmp(line, "quit") == 0)
			break;
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
