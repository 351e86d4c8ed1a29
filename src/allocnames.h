/*
 * The allocator entry points that the agent looks for in the modules other
 * than libc: a module that defines one of them allocates in ways the GOT
 * hooks do not see (DESIGN.md section 7).  Two kinds:
 *
 *   - the C allocator's own names (family "malloc"): a module that defines
 *     malloc, free ... replaces glibc's for the whole process.  Calls that
 *     other modules make reach it through their GOT and are seen; the calls
 *     its own code makes bind inside it and are not.
 *   - the entry points of allocators with an API of their own (jemalloc's
 *     mallocx, mimalloc's mi_malloc, tcmalloc's tc_malloc): no hook is put
 *     on them, so nothing allocated through them is seen, whoever calls.
 *
 * A profile's ALLOCATOR records and the status reply carry a module's
 * names as a bit set, bit i for ht_allocnames[i].  The table only grows at
 * its end, so that a bit keeps its name in every profile ever written; a
 * reader names a bit beyond its table "?".
 *
 * Libc only, constant data: the agent and the CLI share it.
 */
#ifndef HT_ALLOCNAMES_H
#define HT_ALLOCNAMES_H

#include <stddef.h>
#include <stdint.h>

struct ht_allocname {
	const char *name;   /* the symbol, as the dynamic symbol table has it */
	const char *family; /* "malloc", "jemalloc", "mimalloc", "tcmalloc" */
};

extern const struct ht_allocname ht_allocnames[];
/* The entries of ht_allocnames (at most 64: the bits of a set). */
extern const size_t ht_nallocnames;

/* The bits of names of the C allocator's own (family "malloc"). */
uint64_t ht_allocnames_malloc_mask(void);

/* The name of bit i, "?" beyond the table. */
const char *ht_allocnames_name(unsigned i);

/* The family of bit i, "?" beyond the table. */
const char *ht_allocnames_family(unsigned i);

/*
 * Every allocator entry point the agent knows by name (ht_allocfns[]): the
 * hooks' table (agent/hooks.h) has one entry per line, in this order, and
 * the coverage account (agent/coverage.h, the profile's COVERAGE records)
 * names its functions by it.  Each line is
 *
 *   X(ID, "symbol", "family", kind, signature class, flags)
 *
 * kind (HT_KIND_*): what a call does to the heap.  The signature class
 * (HT_SIG_*) says where a call's size and old block are, for a hook that
 * stands in for the function with the function's own prototype:
 *
 *   S1     the size, alone (malloc)
 *   S      size first (more arguments after it: alignment, flags, nothrow)
 *   NS     count, size (and alignment, offset)
 *   AS     alignment, size
 *   HS     heap, size (...)          HNS    heap, count, size (...)
 *   PM     posix_memalign(void **, alignment, size), an int back
 *   STR    string: the size is the copy's (strlen + 1), known after
 *   STRN   string, at most n         RP     realpath(name, NULL) only
 *   HSTR, HSTRN, HRP   the same after a heap
 *   PS     old block, size (...)      PNS    old block, count, size (...)
 *   PSF    as PS, and the old block is freed if the call fails (reallocf)
 *   HPS, HPNS, HPSF    the same after a heap
 *   RARR   reallocarr(void *pp, count, size): *pp, an int back
 *   RAY    glibc's reallocarray: done with the caller's realloc
 *   XA     jemalloc's xallocx(p, size, extra, flags): in place, size back
 *   P1     the block to free, alone (free)
 *   P      a block to free first (size, alignment, flags after it)
 *   HEAP   mimalloc's mi_heap_destroy(heap): frees every block of heap
 *   NONE   allocates and frees nothing: known, never hooked
 *   UNSUP  allocates, but no hook stands in for it (coverage says so)
 *
 * flags: HT_FNF_ALLOCATOR, the C++ operators, which are entry points of an
 * allocator only in a module that also defines malloc (libtcmalloc,
 * libjemalloc, libmimalloc, an executable with an allocator of its own):
 * elsewhere (libstdc++) they call malloc, where they are counted.
 */
enum ht_fn_kind {
	HT_KIND_ALLOC = 1,
	HT_KIND_FREE = 2,
	HT_KIND_REALLOC = 3,
	HT_KIND_QUERY = 4,    /* allocates and frees nothing */
	HT_KIND_HEAPFREE = 5, /* frees a heap's every block */
};

enum ht_fn_sig {
	HT_SIG_S1 = 1,
	HT_SIG_S,
	HT_SIG_NS,
	HT_SIG_AS,
	HT_SIG_HS,
	HT_SIG_HNS,
	HT_SIG_PM,
	HT_SIG_STR,
	HT_SIG_STRN,
	HT_SIG_RP,
	HT_SIG_HSTR,
	HT_SIG_HSTRN,
	HT_SIG_HRP,
	HT_SIG_PS,
	HT_SIG_PNS,
	HT_SIG_PSF,
	HT_SIG_HPS,
	HT_SIG_HPNS,
	HT_SIG_HPSF,
	HT_SIG_RARR,
	HT_SIG_RAY,
	HT_SIG_XA,
	HT_SIG_P1,
	HT_SIG_P,
	HT_SIG_HEAP,
	HT_SIG_NONE,
	HT_SIG_UNSUP,
};

#define HT_FNF_ALLOCATOR 0x1

#define HT_JE_LIST(XM, PFX, ID)                                                \
	XM(ID##MALLOC, PFX "malloc", "jemalloc", HT_KIND_ALLOC, S1, 0)         \
	XM(ID##CALLOC, PFX "calloc", "jemalloc", HT_KIND_ALLOC, NS, 0)         \
	XM(ID##REALLOC, PFX "realloc", "jemalloc", HT_KIND_REALLOC, PS, 0)     \
	XM(ID##FREE, PFX "free", "jemalloc", HT_KIND_FREE, P1, 0)              \
	XM(ID##POSIX_MEMALIGN, PFX "posix_memalign", "jemalloc",               \
	    HT_KIND_ALLOC, PM, 0)                                              \
	XM(ID##ALIGNED_ALLOC, PFX "aligned_alloc", "jemalloc", HT_KIND_ALLOC,  \
	    AS, 0)                                                             \
	XM(ID##MEMALIGN, PFX "memalign", "jemalloc", HT_KIND_ALLOC, AS, 0)     \
	XM(ID##VALLOC, PFX "valloc", "jemalloc", HT_KIND_ALLOC, S1, 0)         \
	XM(ID##MALLOCX, PFX "mallocx", "jemalloc", HT_KIND_ALLOC, S, 0)        \
	XM(ID##RALLOCX, PFX "rallocx", "jemalloc", HT_KIND_REALLOC, PS, 0)     \
	XM(ID##XALLOCX, PFX "xallocx", "jemalloc", HT_KIND_REALLOC, XA, 0)     \
	XM(ID##SDALLOCX, PFX "sdallocx", "jemalloc", HT_KIND_FREE, P, 0)       \
	XM(ID##DALLOCX, PFX "dallocx", "jemalloc", HT_KIND_FREE, P, 0)         \
	XM(ID##NALLOCX, PFX "nallocx", "jemalloc", HT_KIND_QUERY, NONE, 0)     \
	XM(ID##SALLOCX, PFX "sallocx", "jemalloc", HT_KIND_QUERY, NONE, 0)     \
	XM(ID##MALLOC_USABLE_SIZE, PFX "malloc_usable_size", "jemalloc",       \
	    HT_KIND_QUERY, NONE, 0)

#define HT_ALLOCFN_LIST(X)                                                     \
	X(MALLOC, "malloc", "malloc", HT_KIND_ALLOC, S1, 0)                    \
	X(CALLOC, "calloc", "malloc", HT_KIND_ALLOC, NS, 0)                    \
	X(REALLOC, "realloc", "malloc", HT_KIND_REALLOC, PS, 0)                \
	X(REALLOCARRAY, "reallocarray", "malloc", HT_KIND_REALLOC, RAY, 0)     \
	X(FREE, "free", "malloc", HT_KIND_FREE, P1, 0)                         \
	X(POSIX_MEMALIGN, "posix_memalign", "malloc", HT_KIND_ALLOC, PM, 0)    \
	X(ALIGNED_ALLOC, "aligned_alloc", "malloc", HT_KIND_ALLOC, AS, 0)      \
	X(MEMALIGN, "memalign", "malloc", HT_KIND_ALLOC, AS, 0)                \
	X(VALLOC, "valloc", "malloc", HT_KIND_ALLOC, S1, 0)                    \
	X(PVALLOC, "pvalloc", "malloc", HT_KIND_ALLOC, S1, 0)                  \
	X(FREE_SIZED, "free_sized", "malloc", HT_KIND_FREE, P, 0)              \
	X(FREE_ALIGNED_SIZED, "free_aligned_sized", "malloc", HT_KIND_FREE, P, \
	    0)                                                                 \
	X(ZNWM, "_Znwm", "c++", HT_KIND_ALLOC, S1, HT_FNF_ALLOCATOR)           \
	X(ZNAM, "_Znam", "c++", HT_KIND_ALLOC, S1, HT_FNF_ALLOCATOR)           \
	X(ZNWM_NT, "_ZnwmRKSt9nothrow_t", "c++", HT_KIND_ALLOC, S,             \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZNAM_NT, "_ZnamRKSt9nothrow_t", "c++", HT_KIND_ALLOC, S,             \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZNWM_AL, "_ZnwmSt11align_val_t", "c++", HT_KIND_ALLOC, S,            \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZNAM_AL, "_ZnamSt11align_val_t", "c++", HT_KIND_ALLOC, S,            \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZNWM_AL_NT, "_ZnwmSt11align_val_tRKSt9nothrow_t", "c++",             \
	    HT_KIND_ALLOC, S, HT_FNF_ALLOCATOR)                                \
	X(ZNAM_AL_NT, "_ZnamSt11align_val_tRKSt9nothrow_t", "c++",             \
	    HT_KIND_ALLOC, S, HT_FNF_ALLOCATOR)                                \
	X(ZDLPV, "_ZdlPv", "c++", HT_KIND_FREE, P1, HT_FNF_ALLOCATOR)          \
	X(ZDAPV, "_ZdaPv", "c++", HT_KIND_FREE, P1, HT_FNF_ALLOCATOR)          \
	X(ZDLPVM, "_ZdlPvm", "c++", HT_KIND_FREE, P, HT_FNF_ALLOCATOR)         \
	X(ZDAPVM, "_ZdaPvm", "c++", HT_KIND_FREE, P, HT_FNF_ALLOCATOR)         \
	X(ZDLPV_NT, "_ZdlPvRKSt9nothrow_t", "c++", HT_KIND_FREE, P,            \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDAPV_NT, "_ZdaPvRKSt9nothrow_t", "c++", HT_KIND_FREE, P,            \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDLPV_AL, "_ZdlPvSt11align_val_t", "c++", HT_KIND_FREE, P,           \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDAPV_AL, "_ZdaPvSt11align_val_t", "c++", HT_KIND_FREE, P,           \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDLPVM_AL, "_ZdlPvmSt11align_val_t", "c++", HT_KIND_FREE, P,         \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDAPVM_AL, "_ZdaPvmSt11align_val_t", "c++", HT_KIND_FREE, P,         \
	    HT_FNF_ALLOCATOR)                                                  \
	X(ZDLPV_AL_NT, "_ZdlPvSt11align_val_tRKSt9nothrow_t", "c++",           \
	    HT_KIND_FREE, P, HT_FNF_ALLOCATOR)                                 \
	X(ZDAPV_AL_NT, "_ZdaPvSt11align_val_tRKSt9nothrow_t", "c++",           \
	    HT_KIND_FREE, P, HT_FNF_ALLOCATOR)                                 \
	X(MALLOCX, "mallocx", "jemalloc", HT_KIND_ALLOC, S, 0)                 \
	X(RALLOCX, "rallocx", "jemalloc", HT_KIND_REALLOC, PS, 0)              \
	X(XALLOCX, "xallocx", "jemalloc", HT_KIND_REALLOC, XA, 0)              \
	X(SDALLOCX, "sdallocx", "jemalloc", HT_KIND_FREE, P, 0)                \
	X(DALLOCX, "dallocx", "jemalloc", HT_KIND_FREE, P, 0)                  \
	X(NALLOCX, "nallocx", "jemalloc", HT_KIND_QUERY, NONE, 0)              \
	X(SALLOCX, "sallocx", "jemalloc", HT_KIND_QUERY, NONE, 0)              \
	HT_JE_LIST(X, "je_", JE_)                                              \
	HT_JE_LIST(X, "_rjem_", RJEM_)                                         \
	X(MI_MALLOC, "mi_malloc", "mimalloc", HT_KIND_ALLOC, S1, 0)            \
	X(MI_CALLOC, "mi_calloc", "mimalloc", HT_KIND_ALLOC, NS, 0)            \
	X(MI_REALLOC, "mi_realloc", "mimalloc", HT_KIND_REALLOC, PS, 0)        \
	X(MI_EXPAND, "mi_expand", "mimalloc", HT_KIND_REALLOC, PS, 0)          \
	X(MI__EXPAND, "mi__expand", "mimalloc", HT_KIND_REALLOC, PS, 0)        \
	X(MI_FREE, "mi_free", "mimalloc", HT_KIND_FREE, P1, 0)                 \
	X(MI_CFREE, "mi_cfree", "mimalloc", HT_KIND_FREE, P1, 0)               \
	X(MI_STRDUP, "mi_strdup", "mimalloc", HT_KIND_ALLOC, STR, 0)           \
	X(MI_STRNDUP, "mi_strndup", "mimalloc", HT_KIND_ALLOC, STRN, 0)        \
	X(MI_REALPATH, "mi_realpath", "mimalloc", HT_KIND_ALLOC, RP, 0)        \
	X(MI_MALLOC_SMALL, "mi_malloc_small", "mimalloc", HT_KIND_ALLOC, S1,   \
	    0)                                                                 \
	X(MI_ZALLOC_SMALL, "mi_zalloc_small", "mimalloc", HT_KIND_ALLOC, S1,   \
	    0)                                                                 \
	X(MI_ZALLOC, "mi_zalloc", "mimalloc", HT_KIND_ALLOC, S1, 0)            \
	X(MI_MALLOCN, "mi_mallocn", "mimalloc", HT_KIND_ALLOC, NS, 0)          \
	X(MI_REALLOCN, "mi_reallocn", "mimalloc", HT_KIND_REALLOC, PNS, 0)     \
	X(MI_REALLOCF, "mi_reallocf", "mimalloc", HT_KIND_REALLOC, PSF, 0)     \
	X(MI_MALLOC_ALIGNED, "mi_malloc_aligned", "mimalloc", HT_KIND_ALLOC,   \
	    S, 0)                                                              \
	X(MI_MALLOC_ALIGNED_AT, "mi_malloc_aligned_at", "mimalloc",            \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(MI_ZALLOC_ALIGNED, "mi_zalloc_aligned", "mimalloc", HT_KIND_ALLOC,   \
	    S, 0)                                                              \
	X(MI_ZALLOC_ALIGNED_AT, "mi_zalloc_aligned_at", "mimalloc",            \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(MI_CALLOC_ALIGNED, "mi_calloc_aligned", "mimalloc", HT_KIND_ALLOC,   \
	    NS, 0)                                                             \
	X(MI_CALLOC_ALIGNED_AT, "mi_calloc_aligned_at", "mimalloc",            \
	    HT_KIND_ALLOC, NS, 0)                                              \
	X(MI_REALLOC_ALIGNED, "mi_realloc_aligned", "mimalloc",                \
	    HT_KIND_REALLOC, PS, 0)                                            \
	X(MI_REALLOC_ALIGNED_AT, "mi_realloc_aligned_at", "mimalloc",          \
	    HT_KIND_REALLOC, PS, 0)                                            \
	X(MI_REZALLOC, "mi_rezalloc", "mimalloc", HT_KIND_REALLOC, PS, 0)      \
	X(MI_RECALLOC, "mi_recalloc", "mimalloc", HT_KIND_REALLOC, PNS, 0)     \
	X(MI_REZALLOC_ALIGNED, "mi_rezalloc_aligned", "mimalloc",              \
	    HT_KIND_REALLOC, PS, 0)                                            \
	X(MI_REZALLOC_ALIGNED_AT, "mi_rezalloc_aligned_at", "mimalloc",        \
	    HT_KIND_REALLOC, PS, 0)                                            \
	X(MI_RECALLOC_ALIGNED, "mi_recalloc_aligned", "mimalloc",              \
	    HT_KIND_REALLOC, PNS, 0)                                           \
	X(MI_RECALLOC_ALIGNED_AT, "mi_recalloc_aligned_at", "mimalloc",        \
	    HT_KIND_REALLOC, PNS, 0)                                           \
	X(MI_ALIGNED_RECALLOC, "mi_aligned_recalloc", "mimalloc",              \
	    HT_KIND_REALLOC, PNS, 0)                                           \
	X(MI_ALIGNED_OFFSET_RECALLOC, "mi_aligned_offset_recalloc",            \
	    "mimalloc", HT_KIND_REALLOC, PNS, 0)                               \
	X(MI_VALLOC, "mi_valloc", "mimalloc", HT_KIND_ALLOC, S1, 0)            \
	X(MI_PVALLOC, "mi_pvalloc", "mimalloc", HT_KIND_ALLOC, S1, 0)          \
	X(MI_ALIGNED_ALLOC, "mi_aligned_alloc", "mimalloc", HT_KIND_ALLOC, AS, \
	    0)                                                                 \
	X(MI_MEMALIGN, "mi_memalign", "mimalloc", HT_KIND_ALLOC, AS, 0)        \
	X(MI_POSIX_MEMALIGN, "mi_posix_memalign", "mimalloc", HT_KIND_ALLOC,   \
	    PM, 0)                                                             \
	X(MI_REALLOCARRAY, "mi_reallocarray", "mimalloc", HT_KIND_REALLOC,     \
	    PNS, 0)                                                            \
	X(MI_REALLOCARR, "mi_reallocarr", "mimalloc", HT_KIND_REALLOC, RARR,   \
	    0)                                                                 \
	X(MI_FREE_SIZE, "mi_free_size", "mimalloc", HT_KIND_FREE, P, 0)        \
	X(MI_FREE_ALIGNED, "mi_free_aligned", "mimalloc", HT_KIND_FREE, P, 0)  \
	X(MI_FREE_SIZE_ALIGNED, "mi_free_size_aligned", "mimalloc",            \
	    HT_KIND_FREE, P, 0)                                                \
	X(MI_NEW, "mi_new", "mimalloc", HT_KIND_ALLOC, S1, 0)                  \
	X(MI_NEW_ALIGNED, "mi_new_aligned", "mimalloc", HT_KIND_ALLOC, S, 0)   \
	X(MI_NEW_NOTHROW, "mi_new_nothrow", "mimalloc", HT_KIND_ALLOC, S1, 0)  \
	X(MI_NEW_ALIGNED_NOTHROW, "mi_new_aligned_nothrow", "mimalloc",        \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(MI_NEW_N, "mi_new_n", "mimalloc", HT_KIND_ALLOC, NS, 0)              \
	X(MI_NEW_REALLOC, "mi_new_realloc", "mimalloc", HT_KIND_REALLOC, PS,   \
	    0)                                                                 \
	X(MI_NEW_REALLOCN, "mi_new_reallocn", "mimalloc", HT_KIND_REALLOC,     \
	    PNS, 0)                                                            \
	X(MI_HEAP_MALLOC, "mi_heap_malloc", "mimalloc", HT_KIND_ALLOC, HS, 0)  \
	X(MI_HEAP_ZALLOC, "mi_heap_zalloc", "mimalloc", HT_KIND_ALLOC, HS, 0)  \
	X(MI_HEAP_CALLOC, "mi_heap_calloc", "mimalloc", HT_KIND_ALLOC, HNS, 0) \
	X(MI_HEAP_MALLOCN, "mi_heap_mallocn", "mimalloc", HT_KIND_ALLOC, HNS,  \
	    0)                                                                 \
	X(MI_HEAP_MALLOC_SMALL, "mi_heap_malloc_small", "mimalloc",            \
	    HT_KIND_ALLOC, HS, 0)                                              \
	X(MI_HEAP_REALLOC, "mi_heap_realloc", "mimalloc", HT_KIND_REALLOC,     \
	    HPS, 0)                                                            \
	X(MI_HEAP_REALLOCN, "mi_heap_reallocn", "mimalloc", HT_KIND_REALLOC,   \
	    HPNS, 0)                                                           \
	X(MI_HEAP_REALLOCF, "mi_heap_reallocf", "mimalloc", HT_KIND_REALLOC,   \
	    HPSF, 0)                                                           \
	X(MI_HEAP_STRDUP, "mi_heap_strdup", "mimalloc", HT_KIND_ALLOC, HSTR,   \
	    0)                                                                 \
	X(MI_HEAP_STRNDUP, "mi_heap_strndup", "mimalloc", HT_KIND_ALLOC,       \
	    HSTRN, 0)                                                          \
	X(MI_HEAP_REALPATH, "mi_heap_realpath", "mimalloc", HT_KIND_ALLOC,     \
	    HRP, 0)                                                            \
	X(MI_HEAP_MALLOC_ALIGNED, "mi_heap_malloc_aligned", "mimalloc",        \
	    HT_KIND_ALLOC, HS, 0)                                              \
	X(MI_HEAP_MALLOC_ALIGNED_AT, "mi_heap_malloc_aligned_at", "mimalloc",  \
	    HT_KIND_ALLOC, HS, 0)                                              \
	X(MI_HEAP_ZALLOC_ALIGNED, "mi_heap_zalloc_aligned", "mimalloc",        \
	    HT_KIND_ALLOC, HS, 0)                                              \
	X(MI_HEAP_ZALLOC_ALIGNED_AT, "mi_heap_zalloc_aligned_at", "mimalloc",  \
	    HT_KIND_ALLOC, HS, 0)                                              \
	X(MI_HEAP_CALLOC_ALIGNED, "mi_heap_calloc_aligned", "mimalloc",        \
	    HT_KIND_ALLOC, HNS, 0)                                             \
	X(MI_HEAP_CALLOC_ALIGNED_AT, "mi_heap_calloc_aligned_at", "mimalloc",  \
	    HT_KIND_ALLOC, HNS, 0)                                             \
	X(MI_HEAP_REALLOC_ALIGNED, "mi_heap_realloc_aligned", "mimalloc",      \
	    HT_KIND_REALLOC, HPS, 0)                                           \
	X(MI_HEAP_REALLOC_ALIGNED_AT, "mi_heap_realloc_aligned_at",            \
	    "mimalloc", HT_KIND_REALLOC, HPS, 0)                               \
	X(MI_HEAP_REZALLOC, "mi_heap_rezalloc", "mimalloc", HT_KIND_REALLOC,   \
	    HPS, 0)                                                            \
	X(MI_HEAP_RECALLOC, "mi_heap_recalloc", "mimalloc", HT_KIND_REALLOC,   \
	    HPNS, 0)                                                           \
	X(MI_HEAP_REZALLOC_ALIGNED, "mi_heap_rezalloc_aligned", "mimalloc",    \
	    HT_KIND_REALLOC, HPS, 0)                                           \
	X(MI_HEAP_REZALLOC_ALIGNED_AT, "mi_heap_rezalloc_aligned_at",          \
	    "mimalloc", HT_KIND_REALLOC, HPS, 0)                               \
	X(MI_HEAP_RECALLOC_ALIGNED, "mi_heap_recalloc_aligned", "mimalloc",    \
	    HT_KIND_REALLOC, HPNS, 0)                                          \
	X(MI_HEAP_RECALLOC_ALIGNED_AT, "mi_heap_recalloc_aligned_at",          \
	    "mimalloc", HT_KIND_REALLOC, HPNS, 0)                              \
	X(MI_HEAP_ALLOC_NEW, "mi_heap_alloc_new", "mimalloc", HT_KIND_ALLOC,   \
	    HS, 0)                                                             \
	X(MI_HEAP_ALLOC_NEW_N, "mi_heap_alloc_new_n", "mimalloc",              \
	    HT_KIND_ALLOC, HNS, 0)                                             \
	X(MI_HEAP_DESTROY, "mi_heap_destroy", "mimalloc", HT_KIND_HEAPFREE,    \
	    HEAP, 0)                                                           \
	X(MI_HEAP_DELETE, "mi_heap_delete", "mimalloc", HT_KIND_QUERY, NONE,   \
	    0)                                                                 \
	X(MI_USABLE_SIZE, "mi_usable_size", "mimalloc", HT_KIND_QUERY, NONE,   \
	    0)                                                                 \
	X(MI_GOOD_SIZE, "mi_good_size", "mimalloc", HT_KIND_QUERY, NONE, 0)    \
	X(MI_WCSDUP, "mi_wcsdup", "mimalloc", HT_KIND_ALLOC, UNSUP, 0)         \
	X(MI_MBSDUP, "mi_mbsdup", "mimalloc", HT_KIND_ALLOC, UNSUP, 0)         \
	X(MI_DUPENV_S, "mi_dupenv_s", "mimalloc", HT_KIND_ALLOC, UNSUP, 0)     \
	X(MI_WDUPENV_S, "mi_wdupenv_s", "mimalloc", HT_KIND_ALLOC, UNSUP, 0)   \
	X(TC_MALLOC, "tc_malloc", "tcmalloc", HT_KIND_ALLOC, S1, 0)            \
	X(TC_MALLOC_SKIP_NEW_HANDLER, "tc_malloc_skip_new_handler",            \
	    "tcmalloc", HT_KIND_ALLOC, S1, 0)                                  \
	X(TC_FREE, "tc_free", "tcmalloc", HT_KIND_FREE, P1, 0)                 \
	X(TC_FREE_SIZED, "tc_free_sized", "tcmalloc", HT_KIND_FREE, P, 0)      \
	X(TC_REALLOC, "tc_realloc", "tcmalloc", HT_KIND_REALLOC, PS, 0)        \
	X(TC_CALLOC, "tc_calloc", "tcmalloc", HT_KIND_ALLOC, NS, 0)            \
	X(TC_CFREE, "tc_cfree", "tcmalloc", HT_KIND_FREE, P1, 0)               \
	X(TC_MEMALIGN, "tc_memalign", "tcmalloc", HT_KIND_ALLOC, AS, 0)        \
	X(TC_POSIX_MEMALIGN, "tc_posix_memalign", "tcmalloc", HT_KIND_ALLOC,   \
	    PM, 0)                                                             \
	X(TC_VALLOC, "tc_valloc", "tcmalloc", HT_KIND_ALLOC, S1, 0)            \
	X(TC_PVALLOC, "tc_pvalloc", "tcmalloc", HT_KIND_ALLOC, S1, 0)          \
	X(TC_NEW, "tc_new", "tcmalloc", HT_KIND_ALLOC, S1, 0)                  \
	X(TC_NEW_NOTHROW, "tc_new_nothrow", "tcmalloc", HT_KIND_ALLOC, S, 0)   \
	X(TC_DELETE, "tc_delete", "tcmalloc", HT_KIND_FREE, P1, 0)             \
	X(TC_DELETE_SIZED, "tc_delete_sized", "tcmalloc", HT_KIND_FREE, P, 0)  \
	X(TC_DELETE_NOTHROW, "tc_delete_nothrow", "tcmalloc", HT_KIND_FREE, P, \
	    0)                                                                 \
	X(TC_NEWARRAY, "tc_newarray", "tcmalloc", HT_KIND_ALLOC, S1, 0)        \
	X(TC_NEWARRAY_NOTHROW, "tc_newarray_nothrow", "tcmalloc",              \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(TC_DELETEARRAY, "tc_deletearray", "tcmalloc", HT_KIND_FREE, P1, 0)   \
	X(TC_DELETEARRAY_SIZED, "tc_deletearray_sized", "tcmalloc",            \
	    HT_KIND_FREE, P, 0)                                                \
	X(TC_DELETEARRAY_NOTHROW, "tc_deletearray_nothrow", "tcmalloc",        \
	    HT_KIND_FREE, P, 0)                                                \
	X(TC_NEW_ALIGNED, "tc_new_aligned", "tcmalloc", HT_KIND_ALLOC, S, 0)   \
	X(TC_NEW_ALIGNED_NOTHROW, "tc_new_aligned_nothrow", "tcmalloc",        \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(TC_DELETE_ALIGNED, "tc_delete_aligned", "tcmalloc", HT_KIND_FREE, P, \
	    0)                                                                 \
	X(TC_DELETE_SIZED_ALIGNED, "tc_delete_sized_aligned", "tcmalloc",      \
	    HT_KIND_FREE, P, 0)                                                \
	X(TC_DELETE_ALIGNED_NOTHROW, "tc_delete_aligned_nothrow", "tcmalloc",  \
	    HT_KIND_FREE, P, 0)                                                \
	X(TC_NEWARRAY_ALIGNED, "tc_newarray_aligned", "tcmalloc",              \
	    HT_KIND_ALLOC, S, 0)                                               \
	X(TC_NEWARRAY_ALIGNED_NOTHROW, "tc_newarray_aligned_nothrow",          \
	    "tcmalloc", HT_KIND_ALLOC, S, 0)                                   \
	X(TC_DELETEARRAY_ALIGNED, "tc_deletearray_aligned", "tcmalloc",        \
	    HT_KIND_FREE, P, 0)                                                \
	X(TC_DELETEARRAY_SIZED_ALIGNED, "tc_deletearray_sized_aligned",        \
	    "tcmalloc", HT_KIND_FREE, P, 0)                                    \
	X(TC_DELETEARRAY_ALIGNED_NOTHROW, "tc_deletearray_aligned_nothrow",    \
	    "tcmalloc", HT_KIND_FREE, P, 0)                                    \
	X(TC_NALLOCX, "tc_nallocx", "tcmalloc", HT_KIND_QUERY, NONE, 0)        \
	X(TC_MALLOC_SIZE, "tc_malloc_size", "tcmalloc", HT_KIND_QUERY, NONE, 0)

enum ht_fn_index {
#define HT_FN_ENUM(id, name, fam, kind, sig, fl) HT_AF_##id,
	HT_ALLOCFN_LIST(HT_FN_ENUM)
#undef HT_FN_ENUM
	    HT_NALLOCFNS
};

struct ht_allocfn {
	const char *name;   /* the symbol */
	const char *family; /* "malloc", "c++", "jemalloc", ... */
	uint8_t kind;	    /* enum ht_fn_kind */
	uint8_t sig;	    /* enum ht_fn_sig */
	uint8_t flags;	    /* HT_FNF_* */
};

extern const struct ht_allocfn ht_allocfns[HT_NALLOCFNS];

/* The index of the function named name, or -1. */
int ht_allocfns_find(const char *name);

/* Does a call of function i allocate (HT_KIND_ALLOC or HT_KIND_REALLOC)? */
static inline int
ht_allocfn_allocates(unsigned i)
{
	return i < HT_NALLOCFNS &&
	    (ht_allocfns[i].kind == HT_KIND_ALLOC ||
		ht_allocfns[i].kind == HT_KIND_REALLOC);
}

/*
 * The backends, as a profile's META and a status carry them, and the
 * coverage account's reasons (a function hooked, or why not).  The
 * numbers are part of the format (heaptool-format(5)): append only.
 */
enum ht_backend {
	HT_BACKEND_NONE = 0, /* unknown, or nothing hooked */
	HT_BACKEND_GOT = 1,
	HT_BACKEND_INLINE = 2,
	HT_BACKEND_JEMALLOC = 3,
	HT_BACKEND_MIMALLOC = 4,
};
#define HT_NBACKENDS 5

enum ht_cov_reason {
	HT_COV_SLOTS = 1,	/* hooked: GOT slots lead to it */
	HT_COV_PATCHED = 2,	/* hooked: its first bytes jump to the agent */
	HT_COV_NATIVE = 3,	/* the allocator's own sampling reports it */
	HT_COV_WRAPPER = 4,	/* calls the malloc family: counted there */
	HT_COV_NO_SLOT = 5,	/* no module calls it through a GOT slot */
	HT_COV_DIRECT = 6,	/* in the executable: its calls bind directly */
	HT_COV_NOTHING = 7,	/* allocates and frees nothing */
	HT_COV_UNSUPPORTED = 8, /* no hook stands in for it */
	HT_COV_REFUSED = 9,	/* a backend could not hook it safely */
	HT_COV_SHORT = 10,	/* too short to patch */
	HT_COV_BRANCH_IN = 11,	/* a branch lands inside the bytes to patch */
	HT_COV_UNDECODED = 12,	/* its first instructions would not decode */
	HT_COV_DETACHED = 13,	/* the hooks are out (detach) */
	HT_COV_PREEMPTED = 14,	/* another module's is the one calls reach */
	HT_COV_CLOSED = 15,	/* callers may keep values in its free regs */
};
#define HT_NCOVREASONS 16

/* The backend's name ("got", "inline", ...; "none"; "?" if unknown). */
const char *ht_backend_name(unsigned b);
/* Whether reason r means the function is hooked. */
int ht_cov_reason_hooked(unsigned r);
/* Why, in a few words, for a report ("?" if unknown). */
const char *ht_cov_reason_text(unsigned r);
/* The kind's name: "alloc", "free", "realloc", "none", "heap" ("?"). */
const char *ht_fn_kind_name(unsigned k);

#endif
