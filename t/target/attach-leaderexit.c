/*
 * Fixture of t0021-attach-env: a process whose main thread ended with
 * pthread_exit while a second thread reads on.  The leader stays a zombie
 * thread (PTRACE_SEIZE of it fails with EPERM, as for any thread that is
 * exiting) and the process lives: heaptool attach must use the reader,
 * not report a permission it does not lack.
 *
 * The reader prints "ready" (after prctl(PR_SET_PTRACER_ANY)) once the
 * leader is a zombie, then for each line of standard input:
 *
 *   keep N    keep N blocks of 1000 bytes (site keep_blocks, called by
 *             reader); prints "kept N"
 *   quit      exit 0 (so does end of file)
 *   other     echoed back as "got: LINE"
 *
 * At exit it prints "sum X", a checksum of the blocks' contents.
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static pid_t leader;
static volatile size_t one = 1;
static void *kept[1024];
static size_t nkept;
static uint64_t sum;

FX_NOINLINE static void
keep_blocks(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n && nkept < 1024; i++) {
		p = malloc(1000 * one); /* SITE keep_blocks */
		if (p == NULL) {
			fprintf(stderr, "attach-leaderexit: out of memory\n");
			exit(1);
		}
		fx_fill(p, 1000, i, &sum);
		kept[nkept++] = p;
	}
}

static char
leader_state(void)
{
	char path[64], buf[512], *p;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", (long)leader);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* The state follows the command's closing parenthesis. */
	return (p = strrchr(buf, ')')) != NULL && p[1] == ' ' ? p[2] : 0;
}

static void *
reader(void *arg)
{
	char line[256];
	int i;

	(void)arg;
	for (i = 0; i < 1000 && leader_state() != 'Z'; i++)
		usleep(10000);
	printf("%s\n", leader_state() == 'Z' ? "ready" : "leader still runs");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strcmp(line, "quit\n") == 0)
			break;
		if (strncmp(line, "keep ", 5) == 0) {
			keep_blocks((size_t)strtoul(line + 5, NULL, 10));
			printf("kept %s", line + 5);
		} else
			printf("got: %s", line);
		fflush(stdout);
	}
	printf("sum %llu\n", (unsigned long long)sum);
	fflush(stdout);
	exit(0);
}

int
main(void)
{
	pthread_t t;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	leader = getpid();
	if (pthread_create(&t, NULL, reader, NULL) != 0)
		return 1;
	pthread_exit(NULL);
}
