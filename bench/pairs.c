/*
 * The target of bench/inline-cost.sh: one malloc(64)/free pair per "pair"
 * line read on stdin (pair_once, whose instructions gdb counts), "done"
 * after each.  Built twice: over glibc's malloc (bench/pairs-glibc, reached
 * through GOT slots) and over t/target/inline-alloc.c (bench/pairs-own,
 * called directly: reached by inline hooks).
 */
#include <sys/prctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

__attribute__((noinline)) void
pair_once(void)
{
	void *p = malloc(64);

	sink = p;
	free(p);
}

int
main(void)
{
	char line[64];
	int i;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 0; i < 100; i++) /* warm: lazy binding, first chunk */
		pair_once();
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strcmp(line, "pair\n") == 0) {
			pair_once();
			printf("done\n");
		}
	}
	return 0;
}
