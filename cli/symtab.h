/*
 * The ELF symbols of one module (libdwfl's choice of table: the file's
 * .symtab, else its debug file's, else .dynsym), indexed once by address
 * and by name, for the names of frames.
 *
 * Of the names at one address (aliases) a report shows a module's public
 * one: global (or weak) before local, then one without a leading
 * underscore, then the shortest (without "@VERSION"), then the first in
 * byte order: "strdup", not glibc's "__GI___strdup" or "__strdup";
 * "__libc_start_main", not "__libc_start_main_impl".
 */
#ifndef HT_SYMTAB_H
#define HT_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct ht_symtab;

/* An index of dm's symbols, built on first use; NULL when out of memory.
 * dm must outlive it. */
struct ht_symtab *ht_symtab_new(Dwfl_Module *dm);
void ht_symtab_free(struct ht_symtab *);

/*
 * The symbol that holds pc (an address of the Dwfl), the preferred among
 * aliases, or NULL.  Names are libelf's (alive with the Dwfl) and may end
 * in "@VERSION" or "@@VERSION".
 */
const char *ht_symtab_name(struct ht_symtab *, uint64_t pc);

/*
 * The name of pc's real function (the outermost frame of an address) as
 * llvm-symbolizer names it: the symbol that holds pc, when the module's
 * own symbol table has one, else dwname (its DWARF name) as
 * ht_symtab_alias gives it.  The module's own table is its .symtab, or
 * when it is stripped its .dynsym, which holds global names only; libdwfl
 * reads a stripped module's .symtab from its debug file instead, so there
 * only a global symbol is taken (a local "f.isra.0" of the debug file
 * would not be what llvm-symbolizer prints).
 */
const char *
ht_symtab_outer(struct ht_symtab *, uint64_t pc, const char *dwname);

/*
 * name, or when it is the name of a symbol at one address, the preferred
 * name at that address: glibc's DWARF calls _IO_doallocbuf
 * "__GI__IO_doallocbuf", which is a local alias of it.
 */
const char *ht_symtab_alias(struct ht_symtab *, const char *name);

#endif
