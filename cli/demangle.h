/*
 * Symbol names as people read them: C++ (Itanium ABI), Rust (legacy
 * _ZN...17h<hash>E and v0 _R...) and D names demangled with libiberty,
 * the demangler of binutils and GDB (cplus_demangle, rust_demangle,
 * dlang_demangle), and, on request, shortened: a C++ name's template
 * arguments folded to "<…>" and a Rust name's hashes and crate
 * disambiguators left out.
 */
#ifndef HT_DEMANGLE_H
#define HT_DEMANGLE_H

/* ht_demangle's flags. */
#define HT_DEMANGLE_SHORT 0x1 /* --short-names */

/*
 * The demangled name of the symbol name, malloc'd; NULL when name is not a
 * mangled name that libiberty can read (errno then 0), or when out of
 * memory (errno ENOMEM).  A C++ name has its parameter list; a legacy Rust
 * name keeps its hash ("::h0123456789abcdef") and a v0 one its crates'
 * disambiguators ("mycrate[1a2b3c]::f") unless HT_DEMANGLE_SHORT.
 */
char *ht_demangle(const char *name, int flags);

/*
 * name with each outermost template argument list replaced by "<…>"
 * ("std::vector<int, std::allocator<int> >::push_back(int const&)" gives
 * "std::vector<…>::push_back(int const&)"), operators such as
 * "operator<<" kept; malloc'd, or NULL (ENOMEM).
 */
char *ht_demangle_shorten(const char *name);

#endif
