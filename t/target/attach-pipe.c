/*
 * Fixture of t0021-attach-env: a process blocked in read(2) on a pipe (its
 * standard input), for heaptool attach to interrupt and the read to resume
 * as if nothing happened.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and then reads its
 * commands, one per line, with read(2) directly (no stdio buffering, so the
 * process sits in the system call whenever it waits):
 *
 *   dlopen    dlopen libdlfix.so from this program's directory and call
 *             dlfix_keep(9): 9 blocks of 77 bytes at site dlfix_keep, in a
 *             module loaded after the attach; prints "dlopen done"
 *   keep N    keep N blocks of 1000 bytes (site keep_blocks); "kept N"
 *   quit      exit 0 (so does end of file)
 *   other     echoed back as "got: LINE"
 *
 * A read that returns an error (EINTR included: the agent's loading must
 * never surface as one) prints "read error: ..." and exits 1.
 */
#include <sys/prctl.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static volatile size_t one = 1;
static void *kept[1024];
static size_t nkept;

FX_NOINLINE static void
keep_blocks(size_t n)
{
	uint64_t sum = 0;
	size_t i;
	void *p;

	for (i = 0; i < n && nkept < 1024; i++) {
		p = malloc(1000 * one); /* SITE keep_blocks */
		if (p == NULL) {
			fprintf(stderr, "attach-pipe: out of memory\n");
			exit(1);
		}
		fx_fill(p, 1000, i, &sum);
		kept[nkept++] = p;
	}
}

static int
use_dlfix(void)
{
	char path[PATH_MAX], *slash;
	uint64_t (*fn)(size_t);
	ssize_t n;
	void *h;

	if ((n = readlink("/proc/self/exe", path, sizeof(path) - 16)) <= 0)
		return -1;
	path[n] = '\0';
	if ((slash = strrchr(path, '/')) == NULL)
		return -1;
	strcpy(slash + 1, "libdlfix.so");
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "attach-pipe: %s\n", dlerror());
		return -1;
	}
	if ((fn = (uint64_t(*)(size_t))dlsym(h, "dlfix_keep")) == NULL)
		return -1;
	fn(9);
	return 0;
}

/* One line from fd 0 into buf, with read(2) only.  Returns its length,
 * 0 at end of file, -1 on error. */
static ssize_t
read_line(char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got < len - 1) {
		n = read(0, buf + got, 1);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		if (buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return got == 0 && n == 0 ? 0 : (ssize_t)got + 1;
}

int
main(void)
{
	char line[256];
	ssize_t n;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (;;) {
		if ((n = read_line(line, sizeof(line))) < 0) {
			printf("read error: %s\n", strerror(errno));
			return 1;
		}
		if (n == 0 || strcmp(line, "quit") == 0)
			break;
		if (strcmp(line, "dlopen") == 0) {
			if (use_dlfix() != 0)
				return 1;
			printf("dlopen done\n");
		} else if (strncmp(line, "keep ", 5) == 0) {
			keep_blocks((size_t)strtoul(line + 5, NULL, 10));
			printf("kept %s\n", line + 5);
		} else
			printf("got: %s\n", line);
	}
	return 0;
}
