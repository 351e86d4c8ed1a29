/*
 * The chain of inlined calls at an address, read from the DWARF DIE tree
 * of its unit, with the function, file and line of every level.
 *
 * libdw's dwarf_getscopes (elfutils 0.188) loses the chain in units made
 * by GCC's link-time optimization: their inlined subroutines name their
 * abstract origin in another unit (DW_FORM_ref_addr), and it stops at the
 * subprogram.  So the chain is found here as llvm-symbolizer finds it: the
 * subprogram whose ranges hold the address (from an index of the unit's
 * subprograms, built once per unit), then down through its lexical blocks
 * to the deepest DW_TAG_inlined_subroutine that holds it.  The innermost
 * level's file and line come from the line table; each outer level's from
 * the DW_AT_call_file and DW_AT_call_line of the level inside it.  Names
 * follow DW_AT_abstract_origin and DW_AT_specification wherever they lead
 * (another unit, a dwz alternate file), the linkage name first (it says
 * which C++ overload, and which clone: "f.part.0.lto_priv.0").
 *
 * File names are those llvm-symbolizer prints: the line table's entry
 * joined with its directory, and a relative result with the unit's
 * DW_AT_comp_dir; then made lexically normal ("a/./b/../c" is "a/c"), so
 * that "/build/py/build-static/../Objects/obmalloc.c" reads
 * "/build/py/Objects/obmalloc.c".  A DWARF 5 entry of directory 0 is
 * already in the compilation directory and is not joined with it again
 * (LLVM 14 does join it, which doubles a relative DW_AT_comp_dir).
 */
#ifndef HT_DWARF_INLINE_H
#define HT_DWARF_INLINE_H

#include <elfutils/libdw.h>

/* The indexes of the units of one module's DWARF. */
struct ht_inline;

/* One level of the chain.  function is libdw's (alive as long as the
 * Dwarf), file is malloc'd; either may be NULL (line is then 0). */
struct ht_inline_frame {
	const char *function;
	char *file;
	int line;
};

/* Returns a new, empty set of indexes, or NULL when out of memory. */
struct ht_inline *ht_inline_new(void);
/* Frees the indexes (not the Dwarf they were made from). */
void ht_inline_free(struct ht_inline *);

/*
 * The chain at pc (an address of the unit's Dwarf, bias removed) in the
 * unit cu: stores a malloc'd array of frames, innermost first, the last
 * the subprogram that holds the code, in *frames.  Returns their number;
 * 0 (and no array) when no subprogram of the unit holds pc; -1 when out of
 * memory.  The Dwarf of cu must outlive inl.
 */
int ht_inline_frames(struct ht_inline *inl, Dwarf_Die *cu, Dwarf_Addr pc,
    struct ht_inline_frame **frames);
/* Frees an array of ht_inline_frames and its files. */
void ht_inline_frames_free(struct ht_inline_frame *frames, int n);

/*
 * The path to print for name, a file name libdw gives for an entry of the
 * line table of unit cu (dwarf_linesrc, dwarf_filesrc): see above.
 * Returns it malloc'd; NULL for a NULL name or when out of memory.
 */
char *ht_inline_path(Dwarf_Die *cu, const char *name);

/* The name of a subprogram or inlined instance, following abstract
 * origins and specifications, the linkage name first; or NULL. */
const char *ht_inline_die_name(Dwarf_Die *die);

#endif
