/*
 * Fixture of t/t0014-cxx-runtime.sh: a program that replaces the plain
 * operator new and delete (the C++ rules let it), in one of two ways:
 *
 *   cxx-replace malloc   its operator new calls malloc, its delete free
 *   cxx-replace pool     its operator new carves blocks out of a static
 *                        arena, its delete does nothing: no call of the
 *                        malloc family at all
 *
 * work_replace then allocates through every path that reaches the
 * replacement: std::string buffers built by libstdc++'s own code (which
 * calls operator new through its PLT), the nodes of a std::map (operator
 * new called from here), new[] and the nothrow form (libstdc++'s, which
 * call the plain operator new, the replaced one), and frees them all.
 *
 * It prints "cxx-replace MODE: new N", N being the calls of the
 * replacement during work_replace, and exits 0.  In malloc mode each is
 * one malloc: heaptool must count N blocks under work_replace, once each.
 * In pool mode the allocator is the program's own and nothing reaches the
 * malloc family, so there is nothing to count.
 */
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>

#include "fixture.h"

namespace {

bool use_pool;
bool counting;
size_t ncalls;
alignas(std::max_align_t) unsigned char arena[4 << 20];
size_t used;
uint64_t sum = 0xcbf29ce484222325ULL;
volatile size_t ten = 10;

void *
pool_alloc(size_t n)
{
	size_t a = alignof(std::max_align_t);

	n = (n + a - 1) / a * a;
	if (n > sizeof(arena) - used)
		return nullptr;
	used += n;
	return arena + used - n;
}

} // namespace

/* Out of line, as a replacement in a library would be: each call of the
 * plain operator new, from here or from libstdc++, is a call of this. */
FX_NOINLINE void *
operator new(size_t n)
{
	void *p;

	if (counting)
		ncalls++;
	if (n == 0)
		n = 1;
	p = use_pool ? pool_alloc(n) : std::malloc(n);
	if (p == nullptr)
		throw std::bad_alloc();
	return p;
}

FX_NOINLINE void
operator delete(void *p) noexcept
{
	if (!use_pool)
		std::free(p);
}

FX_NOINLINE void
operator delete(void *p, size_t) noexcept
{
	if (!use_pool)
		std::free(p);
}

FX_NOINLINE static void
work_replace(void)
{
	std::map<int, std::string> m;

	for (int i = 0; i < 100; i++) {
		std::string s(30, 'r'); /* SITE work_replace */
		m.emplace(i, s);
		int *a = new int[ten];
		fx_fill(a, ten * sizeof(int), (uint64_t)i, &sum);
		delete[] a;
		long *b = new (std::nothrow) long;
		if (b == nullptr)
			std::exit(1);
		*b = i;
		sum = fx_mix(sum, (uint64_t)*b + s.size());
		delete b;
	}
	for (const auto &e : m)
		sum = fx_mix(sum, (uint64_t)e.first + e.second.size());
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (std::strcmp(mode, "pool") == 0)
		use_pool = true;
	else if (std::strcmp(mode, "malloc") != 0) {
		std::fprintf(stderr, "usage: cxx-replace malloc|pool\n");
		return 2;
	}
	counting = true;
	work_replace();
	counting = false;
	std::printf("cxx-replace %s: new %zu checksum %016llx\n", mode, ncalls,
	    static_cast<unsigned long long>(sum));
	return 0;
}
