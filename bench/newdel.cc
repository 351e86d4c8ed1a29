/*
 * The workload of bench/hooks-ir.sh: PAIRS malloc/free pairs of 32 bytes,
 * then PAIRS new/delete pairs of a 32-byte object, then PAIRS of each of
 * calloc, realloc (a 32-byte block grown to 48 and freed), memalign,
 * posix_memalign and aligned_alloc with free, each in a function of its
 * own, so that callgrind counts the instructions of each hook per call.  g++
 * emits the sized operator delete (_ZdlPvm) for the plain "delete p".
 *
 * usage: newdel [PAIRS]	(default 100000)
 */
#include <cstdio>
#include <cstdlib>

#include <malloc.h>

struct node {
	long v[4];
};

static void *volatile sink;

__attribute__((noinline)) static void
c_pairs(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = std::malloc(sizeof(node));

		sink = p;
		std::free(p);
	}
}

__attribute__((noinline)) static void
cxx_pairs(long n)
{
	for (long i = 0; i < n; i++) {
		node *p = new node;

		sink = p;
		delete p;
	}
}

__attribute__((noinline)) static void
c_others(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = std::calloc(1, sizeof(node));

		sink = p;
		std::free(p);
	}
	for (long i = 0; i < n; i++) {
		void *p = std::malloc(sizeof(node));

		p = std::realloc(p, sizeof(node) + 16);
		sink = p;
		std::free(p);
	}
	for (long i = 0; i < n; i++) {
		void *p = memalign(64, sizeof(node));

		sink = p;
		std::free(p);
	}
	for (long i = 0; i < n; i++) {
		void *p;

		if (posix_memalign(&p, 64, sizeof(node)) != 0)
			std::abort();
		sink = p;
		std::free(p);
	}
	for (long i = 0; i < n; i++) {
		void *p = std::aligned_alloc(64, 64);

		sink = p;
		std::free(p);
	}
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 100000;

	c_pairs(n);
	cxx_pairs(n);
	c_others(n);
	std::printf("newdel: %ld and %ld pairs\n", n, n);
	return 0;
}
