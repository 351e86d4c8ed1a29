/*
 * Fixture of t/t0103-record-usable.sh: an executable built without PIE
 * that takes malloc's address, as Debian's node does, so that "malloc" in
 * it is its canonical PLT entry (what dlsym finds), not an allocator.  It
 * makes 100 blocks of 100 + i bytes through that address, adds up what
 * glibc's malloc_usable_size says of each, frees them, and prints
 * "requested R usable U" (nothing else allocates: no stdio before).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *(*volatile alloc_fn)(size_t);

int
main(void)
{
	size_t requested = 0, usable = 0, i;
	char line[64];
	void *p;
	int n;

	alloc_fn = malloc;
	for (i = 0; i < 100; i++) {
		if ((p = alloc_fn(100 + i)) == NULL)
			return 1;
		requested += 100 + i;
		usable += malloc_usable_size(p);
		free(p);
	}
	n = snprintf(line, sizeof(line), "requested %zu usable %zu\n",
	    requested, usable);
	return write(1, line, (size_t)n) == n ? 0 : 1;
}
