/*
 * t/t0094: a process with two allocators.  The program allocates with
 * glibc's; deepbind-lib.so, dlopened with RTLD_DEEPBIND, with mini-alloc.so's.
 * Prints what mini-alloc counted: frees it made, and calls it was handed a
 * block not its own (0 unless a call reached the wrong allocator).
 * argv[1]: the directory of the two libraries; argv[2]: rounds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	void (*churn)(int);
	unsigned long (*frees)(void), (*foreign)(void);
	char path[4096];
	void *h, *m;
	int i, n;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	snprintf(path, sizeof(path), "%s/deepbind-lib.so", argv[1]);
	if ((h = dlopen(path, RTLD_NOW | RTLD_DEEPBIND)) == NULL) {
		fprintf(stderr, "deepbind-main: %s\n", dlerror());
		return 1;
	}
	snprintf(path, sizeof(path), "%s/mini-alloc.so", argv[1]);
	if ((m = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) == NULL) {
		fprintf(stderr, "deepbind-main: %s\n", dlerror());
		return 1;
	}
	*(void **)&churn = dlsym(h, "lib_churn");
	*(void **)&frees = dlsym(m, "mini_frees");
	*(void **)&foreign = dlsym(m, "mini_foreign");
	if (churn == NULL || frees == NULL || foreign == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		char *own = malloc(64 + i % 64); /* SITE main */

		if (own == NULL)
			return 1;
		memset(own, 1, 64);
		churn(10);
		free(own);
	}
	printf("mini frees %lu foreign %lu\n", frees(), foreign());
	return 0;
}
