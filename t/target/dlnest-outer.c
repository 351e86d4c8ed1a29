/*
 * libdlnest-outer.so for t/target/dlnest.c: its constructor dlopens
 * libdlnest-inner.so (next to it) while the loader runs constructors, and
 * allocates; its destructor closes it again.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void *inner;
static long value;

__attribute__((constructor)) static void
outer_init(void)
{
	Dl_info info;
	char path[1024], *slash;
	void *p;

	if (dladdr((void *)outer_init, &info) == 0 || info.dli_fname == NULL ||
	    strlen(info.dli_fname) >= sizeof(path) - 32)
		return;
	strcpy(path, info.dli_fname);
	slash = strrchr(path, '/');
	strcpy(slash != NULL ? slash + 1 : path, "libdlnest-inner.so");
	inner = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	p = malloc(100);
	value = inner != NULL && p != NULL ? 2 : 0;
	free(p);
}

__attribute__((destructor)) static void
outer_fini(void)
{
	if (inner != NULL)
		dlclose(inner);
}

long
dlnest_value(void)
{
	return value;
}
