/*
 * Fixture of t0021-attach-env: a process whose main thread ended with
 * pthread_exit while a second thread reads on.  The leader stays a zombie
 * thread (PTRACE_SEIZE of it fails with EPERM, as for any thread that is
 * exiting) and the process lives: heaptool attach must use the reader,
 * not report a permission it does not lack.
 *
 * The reader prints "ready" (after prctl(PR_SET_PTRACER_ANY)) once the
 * leader is a zombie, then "got: LINE" for each line of standard input,
 * and exits 0 at "quit" or end of file.
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pid_t leader;

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
		printf("got: %s", line);
		fflush(stdout);
	}
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
