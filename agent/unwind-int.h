/*
 * What the two walks of unwind.h share, private to them: unwind.c (the
 * rules, their cache and the walk under ht_lock_global) and unwind-fast.c
 * (the walk without the lock and its memo).  The cache's entry, the step
 * from a frame to its caller's, and how a walk ends.
 */
#ifndef HT_UNWIND_INT_H
#define HT_UNWIND_INT_H

#include <stdint.h>

#include "cfa.h"
#include "unwind.h"

/* How far above the current sp a frame may reach: far more than any sane
 * frame, far less than the gap to unrelated mappings in most layouts. */
#define STACK_SPAN ((uintptr_t)64 << 20)

/* 4096 sets of 2 ways, 16 bytes an entry: 128 KiB. */
#define CACHE_SETS_LOG2 12
#define CACHE_SETS	(1u << CACHE_SETS_LOG2)
#define CACHE_WAYS	2
#define CACHE_BYTES	(CACHE_SETS * CACHE_WAYS * sizeof(struct rule))

/*
 * A cached rule.  Offsets of saved registers are multiples of 8 (anything
 * else would be a misaligned read, which the walk refuses anyway), so they
 * are stored divided by 8.
 */
struct rule {
	uintptr_t pc; /* lookup address (key) */
	/* The rule itself, one word: a walk without the lock
	 * (ht_unwind_fast) reads it in one load, so that what it reads is
	 * always a rule that reduce() made (or zeros), whose RF_SIMPLE
	 * holds for its own offsets, however its entry is being
	 * rewritten meanwhile. */
	union {
		struct {
			int32_t cfa_off;
			int8_t ra_off8;
			int8_t bp_off8;
			uint16_t flags;
		};
		uint64_t word;
	};
};

_Static_assert(sizeof(struct rule) == 16, "a rule is two words");

#define RF_CFA_BASE   0x0003 /* HT_CFA_BASE_SP or HT_CFA_BASE_BP */
#define RF_CFA_DEREF  0x0004
#define RF_RA_SHIFT   3	     /* 2 bits: HT_CFA_BASE_* of the RA's slot */
#define RF_BP_SHIFT   5	     /* 3 bits: BP_* */
#define RF_SIGNAL     0x0100 /* "S": the next frame's pc is exact */
#define RF_SIMPLE     0x0200 /* see simple() */
#define RF_STOP_SHIFT 12     /* 2 bits: STOP_* */
#define RF_STOP	      (3u << RF_STOP_SHIFT)

enum { BP_SAME, BP_UNDEF, BP_AT }; /* BP_AT + HT_CFA_BASE_*: saved there */
enum { STOP_NONE, STOP_OUTERMOST, STOP_NOCFI, STOP_NOTEXT };

#define MEMO_SLOTS  64
#define MEMO_FRAMES 80 /* the sampler's walks: HT_MAX_FRAMES + 16 */
#define MEMO_READS  (MEMO_FRAMES * 3) /* at most 3 reads a step */

/* How a walk ended: after its last frame's rule (a stop), at max, or
 * after the reads of its last step. */
enum {
	END_RULE_OUTERMOST,
	END_RULE_NOCFI,
	END_RULE_BAD,
	END_MAX,
	END_READ_OUTERMOST,
	END_READ_BAD,
};

struct memo_frame {
	uintptr_t key; /* its rule's lookup address */
	uintptr_t sp;
	uintptr_t bp;
	uint32_t read; /* its step's first read */
};

struct memo_read {
	uintptr_t addr;
	uintptr_t val;
};

struct memo {
	unsigned gen; /* ht_modules_generation of the walk */
	int n;	      /* frames (0: none) */
	int nreads;
	int max;		    /* the walk's max */
	int end;		    /* END_* */
	uint64_t id;		    /* this walk's, unique (ht_unwind_fast) */
	uintptr_t pcs[MEMO_FRAMES]; /* as stored in pcs */
	struct memo_frame f[MEMO_FRAMES];
	struct memo_read r[MEMO_READS];
};

/* The cache (unwind.c), its module generation and its sequence count (odd
 * while it is written, always under ht_lock_global: a walk without the
 * lock reads it before and after and keeps what it read only when it did
 * not change), and the walks' statistics. */
extern struct rule *ht_unwind_cache __attribute__((visibility("hidden")));
extern unsigned ht_unwind_cache_gen __attribute__((visibility("hidden")));
extern unsigned ht_unwind_cache_seq __attribute__((visibility("hidden")));
extern struct ht_unwind_stats ht_unwind_stats
    __attribute__((visibility("hidden")));

/* unwind-fast.c: map the memo, once, under ht_lock_global (none if it
 * cannot be mapped). */
void ht_unwind_memo_init(void) __attribute__((visibility("hidden")));

/* An 8-byte stack slot at a, in [sp, sp + STACK_SPAN). */
static inline int
ht_unwind_slot_ok(uintptr_t a, uintptr_t sp)
{
	return (a & 7) == 0 && a - sp < STACK_SPAN - 8;
}

/* A stack slot's value; rec, when not NULL, notes the read. */
static inline __attribute__((always_inline)) uintptr_t
ht_unwind_ld(uintptr_t a, struct memo *rec)
{
	uintptr_t v = *(const uintptr_t *)a;

	if (rec != NULL) {
		rec->r[rec->nreads].addr = a;
		rec->r[rec->nreads].val = v;
		rec->nreads++;
	}
	return v;
}

/*
 * One step up from the frame at (sp, bp) by its rule ru (not a stop): the
 * caller's sp (the CFA), return address and rbp.  Returns 0, or -1 when a
 * check fails (a bad frame).
 */
static inline __attribute__((always_inline)) int
ht_unwind_step(const struct rule *ru, uintptr_t sp, uintptr_t bp,
    uintptr_t *cfa, uintptr_t *ra, uintptr_t *nbp, struct memo *rec)
{
	uintptr_t v[3], a;
	unsigned f = ru->flags, k = (f >> RF_BP_SHIFT) & 7;

	if (__builtin_expect((f & RF_SIMPLE) && (sp & 7) == 0, 1)) {
		/* simple(): the checks below hold already. */
		a = sp + (uintptr_t)(intptr_t)ru->cfa_off;
		*cfa = a;
		*ra = ht_unwind_ld(a + (intptr_t)ru->ra_off8 * 8, rec);
		if (k == BP_SAME)
			*nbp = bp;
		else if (k == BP_UNDEF)
			*nbp = 0;
		else
			*nbp = ht_unwind_ld(a + (intptr_t)ru->bp_off8 * 8, rec);
		return 0;
	}
	v[HT_CFA_BASE_SP] = sp;
	v[HT_CFA_BASE_BP] = bp;
	a = v[f & RF_CFA_BASE] + (intptr_t)ru->cfa_off;
	if (f & RF_CFA_DEREF) {
		if (!ht_unwind_slot_ok(a, sp))
			return -1;
		a = ht_unwind_ld(a, rec);
	}
	/*
	 * The CFA is the caller's sp: above ours, within reach.  A signal
	 * frame's CFA is the interrupted sp, which the kernel wrote and which
	 * may lie on another stack (sigaltstack).
	 */
	if ((a & 7) != 0 || (!(f & RF_SIGNAL) && a - sp - 1 >= STACK_SPAN))
		return -1;
	v[HT_CFA_BASE_CFA] = a;
	*cfa = a;
	a = v[(f >> RF_RA_SHIFT) & 3] + (intptr_t)ru->ra_off8 * 8;
	if (!ht_unwind_slot_ok(a, sp))
		return -1;
	*ra = ht_unwind_ld(a, rec);
	if (k == BP_SAME)
		*nbp = bp;
	else if (k == BP_UNDEF)
		*nbp = 0;
	else {
		a = v[k - BP_AT] + (intptr_t)ru->bp_off8 * 8;
		if (!ht_unwind_slot_ok(a, sp))
			return -1;
		*nbp = ht_unwind_ld(a, rec);
	}
	return 0;
}

/* The END_* of a rule that stops the walk. */
static inline int
ht_unwind_rule_end(unsigned f)
{
	switch (f >> RF_STOP_SHIFT) {
	case STOP_OUTERMOST:
		return END_RULE_OUTERMOST;
	case STOP_NOCFI:
		return END_RULE_NOCFI;
	default:
		return END_RULE_BAD;
	}
}

static inline void
ht_unwind_count_end(struct ht_unwind_stats *st, int end)
{
	switch (end) {
	case END_RULE_OUTERMOST:
	case END_READ_OUTERMOST:
		st->stops_outermost++;
		break;
	case END_RULE_NOCFI:
		st->stops_no_cfi++;
		break;
	case END_MAX:
		st->stops_max++;
		break;
	default:
		st->stops_bad_frame++;
		break;
	}
}

#endif
