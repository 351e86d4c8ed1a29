/*
 * Fixture of t0010-run-exact: C++ allocation sites with exactly known totals,
 * one function per site, each allocation on the line of its "SITE name"
 * marker (name = the function's name).
 *
 *   site               what                                in use     alloc
 *   keep_new           50 x new Node (40 bytes)            2000/50    2000/50
 *   keep_new_array     10 x new int[100]                   4000/10    4000/10
 *   new_churn          100 x new Node, each deleted        0/0        4000/100
 *   delete_some        20 x new int[50], every other one
 *                      delete[]d                           2000/10    4000/20
 *   keep_aligned_new   4 x new Big (alignas(64), 192 B)    768/4      768/4
 *   aligned_churn      10 x new Big, each deleted          0/0        1920/10
 *   keep_nothrow       3 x new (std::nothrow) int[10]      120/3      120/3
 *   grow_vector        1000 push_backs into a vector<int>
 *                      (capacity 1, 2, 4, ..., 1024)       4096/1     8188/11
 *
 * grow_vector's allocation happens inside the standard library: its site is
 * the one whose stack passes through grow_vector at the marker line.
 * Prints a checksum and exits 0.
 */
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "fixture.h"

namespace {

struct Node {
	long v[5];
};

struct alignas(64) Big {
	unsigned char b[192];
};

static_assert(sizeof(Node) == 40, "Node is 40 bytes");
static_assert(sizeof(Big) == 192, "Big is 192 bytes");

uint64_t sum = 0xcbf29ce484222325ULL;
volatile size_t one = 1;

} // namespace

FX_NOINLINE static void
keep_new(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Node *p = new Node; /* SITE keep_new */
		fx_fill(p, sizeof(*p), i, &sum);
	}
}

FX_NOINLINE static void
keep_new_array(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int *p = new int[100 * one]; /* SITE keep_new_array */
		fx_fill(p, 100 * sizeof(int), i, &sum);
	}
}

FX_NOINLINE static void
new_churn(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Node *p = new Node; /* SITE new_churn */
		fx_fill(p, sizeof(*p), i, &sum);
		delete p;
	}
}

FX_NOINLINE static void
delete_some(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int *p = new int[50 * one]; /* SITE delete_some */
		fx_fill(p, 50 * sizeof(int), i, &sum);
		if (i % 2 == 0)
			delete[] p;
	}
}

FX_NOINLINE static void
keep_aligned_new(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Big *p = new Big; /* SITE keep_aligned_new */
		if ((reinterpret_cast<uintptr_t>(p) & 63) != 0)
			std::exit(1);
		fx_fill(p, sizeof(*p), i, &sum);
	}
}

FX_NOINLINE static void
aligned_churn(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Big *p = new Big; /* SITE aligned_churn */
		fx_fill(p, sizeof(*p), i, &sum);
		delete p;
	}
}

FX_NOINLINE static void
keep_nothrow(size_t n)
{
	size_t n10 = 10 * one;

	for (size_t i = 0; i < n; i++) {
		int *p = new (std::nothrow) int[n10]; /* SITE keep_nothrow */
		if (p == nullptr)
			std::exit(1);
		fx_fill(p, 10 * sizeof(int), i, &sum);
	}
}

/* The vector lives in static storage and is never destroyed, so its buffer is
 * still in use when the profile is written at exit. */
alignas(std::vector<int>) static unsigned char vstore[sizeof(std::vector<int>)];

FX_NOINLINE static void
grow_vector(size_t n)
{
	std::vector<int> *v = new (vstore) std::vector<int>;

	for (size_t i = 0; i < n; i++)
		v->push_back(static_cast<int>(i * one)); /* SITE grow_vector */
	fx_fill(v->data(), v->size() * sizeof(int), v->capacity(), &sum);
}

int
main()
{
	keep_new(50);
	keep_new_array(10);
	new_churn(100);
	delete_some(20);
	keep_aligned_new(4);
	aligned_churn(10);
	keep_nothrow(3);
	grow_vector(1000);
	std::printf("cxx-new: checksum %016llx\n",
	    static_cast<unsigned long long>(sum));
	return 0;
}
