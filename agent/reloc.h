/*
 * A loaded module's dynamic section and relocation tables, read in place
 * in the running process: where its symbol and string tables are, its
 * DT_RELA, DT_REL and DT_JMPREL tables, its symbol hash tables, and
 * whether it binds now.  For got.c, which looks in them for the slots of
 * the names it hooks and for the functions a module defines.
 *
 * Every address taken from the dynamic section must lie inside the module
 * (an address outside it is taken as a link-time one and moved by the
 * bias), and every table must end inside it.  No allocation, no lock; the
 * module must stay mapped while its tables are read.
 */
#ifndef HT_RELOC_H
#define HT_RELOC_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "modules.h"

struct ht_reloc {
	const ElfW(Sym) * symtab;
	const char *strtab;
	size_t strsz;
	uintptr_t jmprel;
	size_t pltrelsz;
	int pltrela;
	uintptr_t rela;
	size_t relasz;
	size_t relaent;
	uintptr_t rel;
	size_t relsz;
	size_t relent;
	int bind_now;		  /* DT_BIND_NOW, DF_BIND_NOW, DF_1_NOW */
	const uint32_t *gnu_hash; /* DT_GNU_HASH, or NULL */
	const uint32_t *hash;	  /* DT_HASH, or NULL */
};

/* Read module m's dynamic section into *d.  Returns 0, or -1 when m has no
 * dynamic section inside it, or no symbol or string table. */
int ht_reloc_read(const struct ht_module *m, struct ht_reloc *d);

/* Symbol symi of d's symbol table, or NULL for symbol 0 or one that does
 * not lie inside m. */
const ElfW(Sym) *
    ht_reloc_sym(const struct ht_module *m, const struct ht_reloc *d,
	size_t symi);

/* The symbol named name that m defines (st_shndx not SHN_UNDEF), found
 * through its DT_GNU_HASH table, or failing that its DT_HASH table; NULL
 * if it has none, or neither table.  Every read is checked to lie inside
 * m, and chains are walked a bounded number of steps. */
const ElfW(Sym) *
    ht_reloc_lookup(const struct ht_module *m, const struct ht_reloc *d,
	const char *name);

/* Call fn(arg, offset, type, symbol index, addend) for each relocation of
 * d's DT_RELA, DT_REL and DT_JMPREL tables, in that order.  A table listed
 * twice (DT_RELASZ covering DT_JMPREL) is walked twice. */
void ht_reloc_walk(const struct ht_reloc *d,
    void (*fn)(void *arg, uintptr_t off, unsigned type, size_t symi,
	int64_t addend),
    void *arg);

#endif
