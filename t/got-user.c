/*
 * A library for t/got-t linked against got-fake.so, whose malloc it uses
 * when opened with RTLD_DEEPBIND; free is glibc's.  Returns 64 if the
 * memory was usable.
 */
#include <stdlib.h>
#include <string.h>

long
gotuser_alloc(void)
{
	char *p;
	long sum = 0;
	int i;

	if ((p = malloc(64)) == NULL)
		return -1;
	memset(p, 1, 64);
	for (i = 0; i < 64; i++)
		sum += p[i];
	free(p);
	return sum;
}
