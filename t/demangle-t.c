/*
 * Tests for cli/demangle.c on symbol strings whose demangling is known:
 * C++ (with and without shortening), Rust legacy (hash kept, or left out
 * with HT_DEMANGLE_SHORT), Rust v0 (crate disambiguators likewise: the v0
 * string is the one rustc 1.63 gives r::demo::allocates, so this holds
 * where no rustc can build one), D, and names that are not mangled.
 * Also fold.c's matching of demangled names (parameter lists and Rust
 * hashes ignored, globs).
 */
#include <stdlib.h>

#include "basic.h"
#include "demangle.h"
#include "fold.h"

static void
dm(const char *sym, int flags, const char *want, const char *what)
{
	char *got = ht_demangle(sym, flags);

	is_string(want, got, "%s: %s%s", what, sym,
	    (flags & HT_DEMANGLE_SHORT) ? " (short)" : "");
	free(got);
}

static void
sh(const char *name, const char *want)
{
	char *got = ht_demangle_shorten(name);

	is_string(want, got, "shorten %s", name);
	free(got);
}

int
main(void)
{
	struct ht_fold *f;

	plan(0);
	dm("_ZNSt6vectorIiSaIiEE9push_backERKi", 0,
	    "std::vector<int, std::allocator<int> >::push_back(int const&)",
	    "C++");
	dm("_ZNSt6vectorIiSaIiEE9push_backERKi", HT_DEMANGLE_SHORT,
	    "std::vector<\xe2\x80\xa6>::push_back(int const&)", "C++");
	dm("_Z3fooi", 0, "foo(int)", "C++ function");
	dm("_ZN1r4demo9allocates17hdbb56d411dc5d933E", 0,
	    "r::demo::allocates::hdbb56d411dc5d933", "Rust legacy");
	dm("_ZN1r4demo9allocates17hdbb56d411dc5d933E", HT_DEMANGLE_SHORT,
	    "r::demo::allocates", "Rust legacy");
	dm("_RNvNtCsi7GFBnvyxwE_1r4demo9allocates", 0,
	    "r[d319facf6e22082e]::demo::allocates", "Rust v0");
	dm("_RNvNtCsi7GFBnvyxwE_1r4demo9allocates", HT_DEMANGLE_SHORT,
	    "r::demo::allocates", "Rust v0");
	dm("_D3foo3barFZv", 0, "foo.bar()", "D");
	dm("_D4test3fooFiZv", 0, "test.foo(int)", "D");
	ok(ht_demangle("main", 0) == NULL, "main: not mangled");
	ok(ht_demangle("_Znotmangled", 0) == NULL, "_Znotmangled: no name");
	ok(ht_demangle("_Rxyz", 0) == NULL, "_Rxyz: no name");

	sh("std::operator<< <std::char_traits<char> >(std::basic_ostream<char, "
	   "std::char_traits<char> >&, char const*)",
	    "std::operator<< <\xe2\x80\xa6>(std::basic_ostream<\xe2\x80\xa6>&, "
	    "char const*)");
	sh("bool std::operator<=><int>(a<b> const&)",
	    "bool std::operator<=><\xe2\x80\xa6>(a<\xe2\x80\xa6> const&)");
	sh("a<b<c>, d>::operator->()", "a<\xe2\x80\xa6>::operator->()");
	sh("x<<>", "x<\xe2\x80\xa6>");
	sh("plain(int)", "plain(int)");

	if ((f = ht_fold_new()) == NULL || ht_fold_builtin(f) != 0 ||
	    ht_fold_add(f, "my::pool_*") != 0)
		bail("out of memory");
	ok(ht_fold_match(f, "xmalloc"), "fold: xmalloc");
	ok(!ht_fold_match(f, "xmalloc2"), "fold: not xmalloc2");
	ok(ht_fold_match(f,
	       "std::__new_allocator<int>::allocate(unsigned "
	       "long, void const*)"),
	    "fold: std::__new_allocator<int>::allocate(...)");
	ok(ht_fold_match(f, "alloc::alloc::alloc::hb9213c8b740e8eb8"),
	    "fold: a Rust legacy name, its hash ignored");
	ok(ht_fold_match(f,
	       "<alloc[d500228d23c6cfcc]::raw_vec::RawVec<u64>>"
	       "::allocate_in"),
	    "fold: a Rust v0 name with its disambiguator");
	ok(ht_fold_match(f, "<alloc::raw_vec::RawVec<u64>>::allocate_in"),
	    "fold: a Rust v0 name, short");
	ok(ht_fold_match(f, "my::pool_get(unsigned long) const"),
	    "fold: a glob of --fold, parameters and const ignored");
	ok(!ht_fold_match(f, "(anonymous namespace)::f()"),
	    "fold: (anonymous namespace)::f() is not on the list");
	ok(ht_fold_match(f, "g_malloc"), "fold: g_malloc");
	ok(ht_fold_count(f) > 90, "fold: the built-in list");
	ht_fold_free(f);
	return 0;
}
