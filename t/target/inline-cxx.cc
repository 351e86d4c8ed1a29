/*
 * Fixture of t/t0058-inline-cxx.sh: a C++ executable that is an allocator
 * of its own: the malloc family of t/target/inline-alloc.c, and operators
 * new and delete that never call malloc (a bump arena of their own, whose
 * deletes only count).  Defining malloc as well makes the operators an
 * allocator's entry points (src/allocnames.h's HT_FNF_ALLOCATOR): called
 * directly from its own code, only inline hooks see them.
 *
 * Its first act in main is one new (site first_site) and one malloc
 * (site first_site too), after noting the counts at main's start.  Then
 * it prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line, with read(2):
 *   new N     N times new Node (48 bytes, site new_site) and
 *             new char[100 + i] (site newa_site), kept;
 *             prints "newed N"
 *   mix N     N rounds of a std::vector<int> reserved to 64 ints,
 *             malloc(300) and a new Node, all freed, the Node by its
 *             sized delete (site mix_site); prints "mixed N"
 *   release   deletes what new kept; prints "released"
 *   counts    prints "counts A B F": allocating calls so far (the malloc
 *             family's and the operators'), their bytes, frees and deletes
 *   main      the same figures at main's start: "main A B F"
 *   quit      exit 0 (so does end of file), after "checksum HEX"
 */
#include <sys/prctl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>
#include <vector>

#include "fixture.h"
#include "inline-alloc.h"

#define MAXKEEP 10000
#define ARENA	(32u << 20)

struct cx_counts {
	uint64_t news, newas, bytes, deletes, sdeletes;
};
static cx_counts cx_count;
alignas(64) static unsigned char arena[ARENA];
static size_t arena_used;

static void *
bump(size_t n)
{
	size_t at = __atomic_fetch_add(&arena_used, (n + 15) & ~(size_t)15,
	    __ATOMIC_RELAXED);

	if (at + n > ARENA)
		abort();
	return arena + at;
}

/* Never inlined into the fixture's own calls (GCC would: they are in this
 * file): every new and delete is a call, as it is to a real allocator.
 * noinline, not noipa: GCC's -fipa-ra lets the callers in this file keep
 * values in registers an operator does not touch across its calls when
 * the operator's call graph is closed, and the inline backend refuses such
 * a function (cli/inline-ipa.c).  So each operator calls something GCC
 * cannot see into, as real allocators do: new may abort through the PLT,
 * delete calls the debugging hook cx_on_delete when one is set. */
#define CX_OP __attribute__((noinline))

static void (*volatile cx_on_delete)(void *);

static void
deleted(void *p, uint64_t *count)
{
	void (*hook)(void *) = cx_on_delete;

	/* Called before the count: not a tail call (a jmp through a
	 * register, which could be a switch's and proves nothing). */
	if (hook != nullptr)
		hook(p);
	__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
}

CX_OP void *
operator new(size_t n)
{
	__atomic_add_fetch(&cx_count.news, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cx_count.bytes, n, __ATOMIC_RELAXED);
	return bump(n);
}

CX_OP void *
operator new[](size_t n)
{
	__atomic_add_fetch(&cx_count.newas, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cx_count.bytes, n, __ATOMIC_RELAXED);
	return bump(n);
}

CX_OP void
operator delete(void *p) noexcept
{
	if (p != nullptr)
		deleted(p, &cx_count.deletes);
}

CX_OP void
operator delete[](void *p) noexcept
{
	if (p != nullptr)
		deleted(p, &cx_count.deletes);
}

CX_OP void
operator delete(void *p, size_t n) noexcept
{
	if (p != nullptr)
		deleted(p, &cx_count.sdeletes + (n & 0));
}

CX_OP void
operator delete[](void *p, size_t n) noexcept
{
	if (p != nullptr)
		deleted(p, &cx_count.sdeletes + (n & 0));
}

struct Node {
	uint64_t v[6];
};

static Node *kept[MAXKEEP];
static char *kepta[MAXKEEP];
static size_t nkept;
static uint64_t sum = 1;
static void *volatile sink;

static void
counts(const char *what, const ia_counts &ia, const cx_counts &cx)
{
	printf("%s %llu %llu %llu\n", what,
	    (unsigned long long)(ia.malloc + ia.calloc + ia.realloc +
		ia.memalign + cx.news + cx.newas),
	    (unsigned long long)(ia.bytes + cx.bytes),
	    (unsigned long long)(ia.free + cx.deletes + cx.sdeletes));
}

FX_NOINLINE static void
first_site()
{
	Node *n = new Node;   /* SITE first_site */
	void *p = malloc(10); /* SITE first_site */

	sink = n;
	sink = p;
}

FX_NOINLINE static void
new_site(size_t n)
{
	for (size_t i = 0; i < n && nkept < MAXKEEP; i++) {
		kept[nkept] = new Node; /* SITE new_site */
		fx_fill(kept[nkept], sizeof(Node), i, &sum);
		nkept++;
	}
}

FX_NOINLINE static void
newa_site(size_t n, size_t from)
{
	for (size_t i = 0; i < n && from + i < MAXKEEP; i++) {
		kepta[from + i] = new char[100 + i]; /* SITE newa_site */
		fx_fill(kepta[from + i], 100 + i, i, &sum);
	}
}

FX_NOINLINE static void
mix_site(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		std::vector<int> v;

		v.reserve(64);
		for (int k = 0; k < 64; k++)
			v.push_back(k + (int)i);
		sum = fx_mix(sum, (uint64_t)v[63]);
		char *p = (char *)malloc(300);
		if (p == nullptr)
			exit(1);
		fx_fill(p, 300, i, &sum);
		free(p);
		Node *q = new Node;
		fx_fill(q, sizeof(Node), i, &sum);
		sink = q;
		delete q;
	}
}

static ssize_t
read_line(char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got < len - 1) {
		if ((n = read(0, buf + got, 1)) < 0)
			return -1;
		if (n == 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return got == 0 && n == 0 ? 0 : (ssize_t)got + 1;
}

int
main()
{
	ia_counts ia0 = ia_count;
	cx_counts cx0 = cx_count;
	char line[128];
	size_t n, from;

	first_site();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, nullptr, _IONBF, 0);
	printf("ready\n");
	while (read_line(line, sizeof(line)) > 0) {
		if (strncmp(line, "new ", 4) == 0) {
			n = strtoul(line + 4, nullptr, 10);
			from = nkept;
			new_site(n);
			newa_site(nkept - from, from);
			printf("newed %zu\n", n);
		} else if (strncmp(line, "mix ", 4) == 0) {
			mix_site(strtoul(line + 4, nullptr, 10));
			printf("mixed %s\n", line + 4);
		} else if (strcmp(line, "release") == 0) {
			for (size_t i = 0; i < nkept; i++) {
				delete kept[i];
				delete[] kepta[i];
			}
			nkept = 0;
			printf("released\n");
		} else if (strcmp(line, "counts") == 0)
			counts("counts", ia_count, cx_count);
		else if (strcmp(line, "main") == 0)
			counts("main", ia0, cx0);
		else if (strcmp(line, "quit") == 0)
			break;
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
