/*
 * The workload of bench/hooks-ir.sh: PAIRS malloc/free pairs of 32 bytes,
 * then PAIRS new/delete pairs of a 32-byte object, each in a function of its
 * own, so that callgrind counts the instructions of each hook per call.  g++
 * emits the sized operator delete (_ZdlPvm) for the plain "delete p".
 *
 * usage: newdel [PAIRS]	(default 100000)
 */
#include <cstdio>
#include <cstdlib>

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

int
main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 100000;

	c_pairs(n);
	cxx_pairs(n);
	std::printf("newdel: %ld and %ld pairs\n", n, n);
	return 0;
}
