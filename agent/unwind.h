/*
 * Stack capture inside a malloc hook: no malloc, no locks of the allocator or
 * the loader, correct through code built without frame pointers.
 *
 * The unwinder reads each module's .eh_frame through .eh_frame_hdr (binary
 * search table), interprets the CFA program of the FDE up to the pc, and
 * reduces it to a compact rule (CFA = rsp or rbp + offset; return address and
 * rbp saved at CFA + offset, or rbp unchanged).  Rules are cached per pc in a
 * fixed-size table keyed on (pc, ht_modules_generation), so a warm walk is a
 * few loads per frame.  Signal frames (glibc's __restore_rt, CIE augmentation
 * "S") are followed into the interrupted code.  Frames whose CFI it cannot
 * express (general DWARF expressions, CFA in another register) end the walk:
 * a short stack, never a wrong read.  Each step must move the stack pointer up
 * by at most 64 MiB (except through a signal frame), and the return address
 * must lie in a known module's text, or the walk ends.
 *
 * ht_unwind and ht_unwind_return are called with ht_lock_global held (they
 * use ht_modules_find and fill the cache).  ht_unwind_fast needs no lock:
 * it reads only cached rules (under the cache's sequence count, so a rule
 * rewritten meanwhile discards the walk) and a per-thread memo of the last
 * walk (unwind.c), and never the CFI or the module set, so neither a
 * dlclose nor a rescan nor a detach can pull memory from under it; where it
 * would need more it says so, and the caller walks under the lock.
 */
#ifndef HT_UNWIND_H
#define HT_UNWIND_H

#include <stdint.h>

struct ht_unwind_stats;

struct ht_regs {
	uintptr_t pc;
	uintptr_t sp;
	uintptr_t bp;
};

/* Capture the registers at this point of the calling function. */
#define HT_REGS_CAPTURE(r)                                                     \
	do {                                                                   \
		__asm__ volatile(                                              \
		    "lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"       \
		    : "=r"((r)->pc), "=r"((r)->sp), "=r"((r)->bp));            \
	} while (0)

/* Walk from r (the frame of the function that captured it), storing up to
 * max pcs: pcs[0] = r->pc, then each caller's return address.  Returns the
 * number stored (>= 1; 0 if max < 1).  With ht_lock_global held.
 * Every pcs[i], i > 0, is to be symbolized at pcs[i] - 1: a return address
 * points past its call.  Through a signal frame the walk continues into the
 * interrupted code, whose exact pc is stored + 1 to keep that rule. */
int ht_unwind(const struct ht_regs *r, uintptr_t *pcs, int max);

/* As ht_unwind, from registers whose pc is a return address (the sp and
 * rbp its caller has once the call returns): its rule is looked up at
 * r->pc - 1, inside the call, and pcs[0] = r->pc is then to be symbolized
 * at pcs[0] - 1 as every later pc.  A hook that was reached by a tail jump
 * starts here from its caller's frame rather than from its own. */
int ht_unwind_return(const struct ht_regs *r, uintptr_t *pcs, int max);

/*
 * As ht_unwind_return (ret) or ht_unwind, without ht_lock_global: from the
 * rules the cache holds and the thread's memo of its previous walk (whose
 * frames from a state both walks reach are checked against the stack,
 * rather than walked again).  Returns the number of pcs stored, the same as
 * the locked walk would store, or -1 when it cannot know them without the
 * lock (a rule not cached yet, the cache or the module set changing
 * meanwhile, max above 80): then call the locked form.  Its statistics go
 * to *st, for ht_unwind_add_stats under the lock.  *id is the memo's id
 * when these pcs are exactly a memo's walk (the one it replayed, or the
 * one it left), else 0: ids are never reused, so two walks of one nonzero
 * id stored the same pcs.
 */
int ht_unwind_fast(const struct ht_regs *r, int ret, uintptr_t *pcs, int max,
    struct ht_unwind_stats *st, uint64_t *id);

/* Drop every cached rule (also done implicitly when ht_modules_generation
 * changes).  With ht_lock_global held. */
void ht_unwind_flush(void);

/* Statistics for tests and benchmarks. */
struct ht_unwind_stats {
	uint64_t walks;
	uint64_t frames;
	uint64_t cache_hits;
	uint64_t cache_misses;
	uint64_t memo_frames; /* frames ht_unwind_fast took from its memo */
	/* How walks ended (each walk counts in exactly one): */
	uint64_t stops_no_cfi;	  /* a frame without usable CFI */
	uint64_t stops_outermost; /* RA undefined (or 0): complete */
	uint64_t stops_bad_frame; /* pc outside any module's text, or
					  * a frame failing a stack check */
	uint64_t stops_max;	  /* max pcs stored */
};
void ht_unwind_get_stats(struct ht_unwind_stats *);
/* With ht_lock_global held: add st (of ht_unwind_fast) to them. */
void ht_unwind_add_stats(const struct ht_unwind_stats *st);

#endif
