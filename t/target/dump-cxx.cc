/*
 * Fixture of t/t0041-dumps.sh: C++ allocation failures, one per run.
 *   dump-cxx new DIR         ::operator new(1 << 62) throws std::bad_alloc
 *   dump-cxx new-array DIR   ::operator new[](1 << 62)
 *   dump-cxx new-align DIR   ::operator new(1 << 62, std::align_val_t(64))
 *   dump-cxx new-nothrow DIR ::operator new(1 << 62, std::nothrow) is NULL
 *   dump-cxx new-handler DIR as new, with a std::new_handler that counts its
 *                            calls and then throws std::bad_alloc
 * It prints "caught bad_alloc FILES" or "null FILES" (FILES: the *.heap
 * files in DIR right after the failure reached the program), then
 * "handler CALLS" for new-handler; exit status 0 when the failure came as
 * the C++ rules say it must.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include <new>

static volatile size_t huge = (size_t)1 << 62;
static int handler_calls;

static int
count_heaps(const char *dir)
{
	DIR *d;
	struct dirent *e;
	size_t n;
	int c = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		c += n > 5 && strcmp(e->d_name + n - 5, ".heap") == 0;
	}
	closedir(d);
	return c;
}

static void
handler(void)
{
	handler_calls++;
	std::set_new_handler(nullptr);
	throw std::bad_alloc();
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *dir = argc > 2 ? argv[2] : ".";
	void *p = nullptr;

	if (strcmp(what, "new-nothrow") == 0) {
		p = ::operator new(huge, std::nothrow);
		printf("%s %d\n", p == nullptr ? "null" : "ptr",
		    count_heaps(dir));
		return p == nullptr ? 0 : 1;
	}
	if (strcmp(what, "new-handler") == 0)
		std::set_new_handler(handler);
	try {
		if (strcmp(what, "new-array") == 0)
			p = ::operator new[](huge);
		else if (strcmp(what, "new-align") == 0)
			p = ::operator new(huge, std::align_val_t(64));
		else
			p = ::operator new(huge);
	} catch (const std::bad_alloc &) {
		printf("caught bad_alloc %d\n", count_heaps(dir));
		if (strcmp(what, "new-handler") == 0)
			printf("handler %d\n", handler_calls);
		return 0;
	}
	printf("ptr %p\n", p);
	return 1;
}
