/*
 * Fixture of t/t0014-cxx-runtime.sh: allocations the C++ runtime makes in
 * its own code (std::string's buffers built by its extern templates,
 * streams, locales, exceptions), beside those of templates instantiated
 * here, one function per kind:
 *
 *   work_strings    a vector of 1000 std::string(111, 'x'), reserved
 *                   first: 1001 blocks (112 bytes each and the vector's),
 *                   kept to the end
 *   work_map        a std::map<int, std::string> of 10,000 entries, each a
 *                   node and a 47-character string (48 bytes) on the heap:
 *                   20,000 blocks, all freed again
 *   work_stream     an ostringstream fed 2,000 numbers, its string taken
 *   work_exception  a std::runtime_error with a long message, thrown and
 *                   caught (the exception object, the message)
 *   work_forms      10 objects of an over-aligned type (192 bytes, aligned
 *                   new: aligned_alloc in libstdc++, posix_memalign in
 *                   libc++abi), 5 of them deleted, and 10 arrays of 100
 *                   chars by the nothrow new[] (which calls new[], which
 *                   calls new), all deleted: 20 blocks of 2920 bytes, 5 of
 *                   960 bytes kept
 *
 * The map counts its nodes' bytes through an allocator of its own, which
 * passes each request on to std::allocator.  Built by g++ and, by the
 * test, by clang++ -stdlib=libc++ where libc++ is installed: the lengths
 * are chosen so that both libraries allocate the same buffers (libc++
 * rounds a capacity up to a multiple of 16, and keeps up to 22 characters
 * in the string itself).
 *
 *   cxx-lib run     does the work once, prints its report line, exits 0
 *   cxx-lib wait    prints "ready PID", then does the work for each line
 *                   "work" on stdin, printing the report line and "done";
 *                   exits 0 at end of input
 *
 * The report line: "cxx-lib: strings OBJ BYTES map OBJ BYTES checksum X",
 * the blocks and bytes the C++ rules above say work_strings and work_map
 * allocate.
 */
#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "fixture.h"

namespace {

uint64_t sum = 0xcbf29ce484222325ULL;
size_t node_bytes, node_objects;

template <class T> struct counting {
	typedef T value_type;

	counting() = default;
	template <class U> counting(const counting<U> &)
	{
	}

	T *allocate(size_t n)
	{
		node_bytes += n * sizeof(T);
		node_objects++;
		return std::allocator<T>().allocate(n);
	}

	void deallocate(T *p, size_t n)
	{
		std::allocator<T>().deallocate(p, n);
	}
};

template <class T, class U>
bool
operator==(const counting<T> &, const counting<U> &)
{
	return true;
}

template <class T, class U>
bool
operator!=(const counting<T> &, const counting<U> &)
{
	return false;
}

typedef std::map<int, std::string, std::less<int>,
    counting<std::pair<const int, std::string>>>
    map_t;

} // namespace

/* Made in static storage and never destroyed: its blocks are still in use
 * at the end, and the vector itself is not an allocation. */
typedef std::vector<std::string> strings_t;
alignas(strings_t) static unsigned char vstore[sizeof(strings_t)];

FX_NOINLINE static void
work_strings(void)
{
	static strings_t *kept;

	if (kept == nullptr)
		kept = new (vstore) strings_t;
	kept->clear();
	kept->shrink_to_fit();
	kept->reserve(1000);
	for (int i = 0; i < 1000; i++)
		kept->emplace_back(111, 'x'); /* SITE work_strings */
	for (const std::string &s : *kept)
		sum = fx_mix(sum, s.size() + (unsigned char)s[50]);
}

FX_NOINLINE static void
work_map(void)
{
	map_t m;

	for (int i = 0; i < 10000; i++)
		m.emplace(i, std::string(47, 'm')); /* SITE work_map */
	for (const auto &e : m)
		sum = fx_mix(sum, (uint64_t)e.first + e.second.size());
}

FX_NOINLINE static void
work_stream(void)
{
	std::ostringstream os;

	for (int i = 0; i < 2000; i++)
		os << i << ' '; /* SITE work_stream */
	std::string s = os.str();
	sum = fx_mix(sum, s.size());
}

FX_NOINLINE static void
work_exception(void)
{
	try {
		throw std::runtime_error(std::string(200, 'e'));
	} catch (const std::exception &e) {
		sum = fx_mix(sum, strlen(e.what()));
	}
}

/* C++17: an over-aligned type is made by the aligned operator new. */
#ifndef __cpp_aligned_new
#error "cxx-lib needs C++17 or later (aligned new)"
#endif

struct alignas(64) big {
	unsigned char b[192];
};
static_assert(sizeof(big) == 192, "big is 192 bytes");

/* Never freed: kept to the end. */
static big *kept_big[5];

FX_NOINLINE static void
work_forms(void)
{
	volatile size_t hundred = 100;

	for (int i = 0; i < 10; i++) {
		big *p = new big; /* SITE work_forms */
		if ((reinterpret_cast<uintptr_t>(p) & 63) != 0)
			std::exit(1);
		fx_fill(p, sizeof(*p), (uint64_t)i, &sum);
		if (i % 2 == 0)
			kept_big[i / 2] = p;
		else
			delete p;
	}
	for (int i = 0; i < 10; i++) {
		char *a = new (std::nothrow) char[hundred];
		if (a == nullptr)
			std::exit(1);
		fx_fill(a, hundred, (uint64_t)i, &sum);
		delete[] a;
	}
}

static void
work(void)
{
	size_t sb, mb0 = node_bytes, mo0 = node_objects;

	work_strings();
	work_map();
	work_stream();
	work_exception();
	work_forms();
	/* What the C++ rules say the first two allocated: each string's
	 * 111 characters and its terminator, the vector's reserve; each
	 * entry's node (as counted) and its string's 48 bytes. */
	sb = 1000 * 112 + 1000 * sizeof(std::string);
	std::printf("cxx-lib: strings 1001 %zu map %zu %zu checksum %016llx\n",
	    sb, node_objects - mo0 + 10000, node_bytes - mb0 + 10000 * 48,
	    static_cast<unsigned long long>(sum));
	std::fflush(stdout);
}

int
main(int argc, char **argv)
{
	char line[64];

	if (argc > 1 && std::strcmp(argv[1], "run") == 0) {
		work();
		return 0;
	}
	if (argc < 2 || std::strcmp(argv[1], "wait") != 0) {
		std::fprintf(stderr, "usage: cxx-lib run|wait\n");
		return 2;
	}
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	std::printf("ready %ld\n", (long)getpid());
	std::fflush(stdout);
	while (std::fgets(line, sizeof(line), stdin) != NULL) {
		if (std::strcmp(line, "work\n") != 0)
			continue;
		work();
		std::printf("done\n");
		std::fflush(stdout);
	}
	return 0;
}
