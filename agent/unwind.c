/*
 * The stack walker behind every sample (unwind.h).  It runs inside malloc
 * hooks of a process we do not own: no malloc, no locks of the allocator or
 * the loader (so no dl_* calls and no libgcc unwinder), no stdio.  Memory
 * comes from ht_mem_map, module data from ht_modules_find under
 * ht_lock_global.
 *
 * The slow path (a cache miss) takes the pc's row of the call frame table
 * (cfa.h, which finds the FDE through ehframe.h) and reduces it to a
 * 16-byte rule:
 *
 *	CFA = (rsp | rbp) + off, optionally dereferenced
 *	RA  saved at (CFA | rsp | rbp) + off, or undefined (outermost frame)
 *	rbp unchanged, undefined, or saved at (CFA | rsp | rbp) + off
 *
 * The dereferenced and register-based forms are the DWARF expressions that
 * matter on x86-64: GCC's stack realignment (CFA = *(rbp - 8), rbp saved at
 * rbp + 0) and glibc's __restore_rt, whose CIE has the "S" augmentation and
 * whose expressions read the interrupted registers out of the kernel's
 * ucontext.  A row the rule cannot express becomes a "no CFI" rule that
 * ends the walk there.
 *
 * The fast path (a hit) is a hash, a compare and two or three loads per
 * frame.  Every read of stack memory is 8-aligned and lies in
 * [sp, sp + 64 MiB) of the frame being unwound; every read of CFI lies in the
 * readable PT_LOAD segment that holds it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cfa.h"
#include "dwarf.h"
#include "mem.h"
#include "modules.h"
#include "unwind-int.h"

struct rule *ht_unwind_cache;
unsigned ht_unwind_cache_gen;
unsigned ht_unwind_cache_seq;
struct ht_unwind_stats ht_unwind_stats;
static int cache_failed;

static void
seq_begin(void)
{
	__atomic_store_n(&ht_unwind_cache_seq, ht_unwind_cache_seq + 1,
	    __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void
seq_end(void)
{
	__atomic_store_n(&ht_unwind_cache_seq, ht_unwind_cache_seq + 1,
	    __ATOMIC_RELEASE);
}

/* Entries are written a word at a time, each word whole. */
static inline void
store_rule(struct rule *dst, const struct rule *src)
{
	__atomic_store_n(&dst->word, src->word, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->pc, src->pc, __ATOMIC_RELAXED);
}

static void
clear_cache(void)
{
	static const struct rule zero;
	size_t i;

	seq_begin();
	for (i = 0; i < CACHE_SETS * CACHE_WAYS; i++)
		store_rule(&ht_unwind_cache[i], &zero);
	seq_end();
}

static int
fit8(int64_t off, int8_t *out)
{
	if ((off & 7) != 0 || off < -128 * 8 || off > 127 * 8)
		return -1;
	*out = (int8_t)(off / 8);
	return 0;
}

/* Does [cfa + off, cfa + off + 8) lie in [sp, sp + STACK_SPAN - 8) for a
 * CFA of sp + cfa_off? */
static int
simple_slot(int64_t cfa_off, int64_t off)
{
	return cfa_off + off >= 0 && cfa_off + off < (int64_t)STACK_SPAN - 8;
}

/*
 * The rule of nearly every frame of compiled code: CFA = rsp + a positive
 * multiple of 8 within reach, the RA and a saved rbp at fixed offsets from
 * the CFA in the frame, no signal frame.  Then every check of the walk's
 * step holds by construction for an 8-aligned sp, and the step is two
 * loads (ht_unwind): the checks are made here, once per pc.
 */
static int
simple(const struct rule *ru)
{
	unsigned f = ru->flags, k = (f >> RF_BP_SHIFT) & 7;

	if ((f & (RF_CFA_BASE | RF_CFA_DEREF | RF_SIGNAL | RF_STOP)) !=
		HT_CFA_BASE_SP ||
	    ((f >> RF_RA_SHIFT) & 3) != HT_CFA_BASE_CFA)
		return 0;
	if (ru->cfa_off < 8 || (ru->cfa_off & 7) != 0 ||
	    (uint64_t)ru->cfa_off >= STACK_SPAN - 8)
		return 0;
	if (!simple_slot(ru->cfa_off, (int64_t)ru->ra_off8 * 8))
		return 0;
	if (k == BP_SAME || k == BP_UNDEF)
		return 1;
	return k == BP_AT + HT_CFA_BASE_CFA &&
	    simple_slot(ru->cfa_off, (int64_t)ru->bp_off8 * 8);
}

/* Reduce the row r of pc to a rule in out.  Returns 0 or -1 (the rule
 * cannot express the row). */
static int
reduce(const struct ht_cfa_row *r, uintptr_t pc, struct rule *out)
{
	unsigned k;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	if (r->ra.how == HT_CFA_UNDEF) {
		out->flags = STOP_OUTERMOST << RF_STOP_SHIFT;
		return 0;
	}
	if (r->ra.how != HT_CFA_AT || (r->sp_bad && !r->signal))
		return -1;
	if (r->cfa_how == HT_CFA_DEF_REG && r->cfa_reg == HT_DW_RSP)
		out->flags = HT_CFA_BASE_SP;
	else if (r->cfa_how == HT_CFA_DEF_REG && r->cfa_reg == HT_DW_RBP)
		out->flags = HT_CFA_BASE_BP;
	else if (r->cfa_how == HT_CFA_DEF_EXPR)
		out->flags =
		    (uint16_t)(r->cfa_reg | (r->cfa_deref ? RF_CFA_DEREF : 0));
	else
		return -1;
	if (r->cfa_off < INT32_MIN || r->cfa_off > INT32_MAX)
		return -1;
	out->cfa_off = (int32_t)r->cfa_off;
	if (fit8(r->ra.off, &out->ra_off8) != 0)
		return -1;
	out->flags |= r->ra.base << RF_RA_SHIFT;
	switch (r->bp.how) {
	case HT_CFA_SAME:
		k = BP_SAME;
		break;
	case HT_CFA_UNDEF:
		k = BP_UNDEF;
		break;
	case HT_CFA_AT:
		if (fit8(r->bp.off, &out->bp_off8) != 0)
			return -1;
		k = BP_AT + r->bp.base;
		break;
	default:
		return -1;
	}
	out->flags |= k << RF_BP_SHIFT;
	if (r->signal)
		out->flags |= RF_SIGNAL;
	if (simple(out))
		out->flags |= RF_SIMPLE;
	return 0;
}

static void
compute(uintptr_t pc, struct rule *out)
{
	const struct ht_module *m = ht_modules_find(pc);
	struct ht_cfa_row r;

	if (m == NULL || pc < m->text_start || pc >= m->text_end) {
		memset(out, 0, sizeof(*out));
		out->pc = pc;
		out->flags = STOP_NOTEXT << RF_STOP_SHIFT;
		return;
	}
	if (ht_cfa_row(m, pc, &r) != 0 || reduce(&r, pc, out) != 0) {
		memset(out, 0, sizeof(*out));
		out->pc = pc;
		out->flags = STOP_NOCFI << RF_STOP_SHIFT;
	}
}

static void
cache_check(void)
{
	if (ht_unwind_cache == NULL && !cache_failed) {
		struct rule *c = ht_mem_map(CACHE_BYTES);

		if (c == NULL)
			cache_failed = 1; /* work uncached */
		__atomic_store_n(&ht_unwind_cache_gen, ht_modules_generation,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&ht_unwind_cache, c, __ATOMIC_RELEASE);
		ht_unwind_memo_init();
	}
	if (ht_unwind_cache_gen != ht_modules_generation) {
		if (ht_unwind_cache != NULL)
			clear_cache();
		__atomic_store_n(&ht_unwind_cache_gen, ht_modules_generation,
		    __ATOMIC_RELAXED);
		cache_failed = 0;
	}
}

static inline const struct rule *
lookup(uintptr_t pc, struct rule *tmp, uint64_t *hits, uint64_t *misses)
{
	struct rule *set;

	if (__builtin_expect(ht_unwind_cache == NULL, 0)) {
		(*misses)++;
		compute(pc, tmp);
		return tmp;
	}
	set = &ht_unwind_cache[((pc * 0x9e3779b97f4a7c15ull) >>
				   (64 - CACHE_SETS_LOG2)) *
	    CACHE_WAYS];
	if (__builtin_expect(set[0].pc == pc, 1)) {
		(*hits)++;
		return &set[0];
	}
	if (set[1].pc == pc) {
		(*hits)++;
		return &set[1];
	}
	(*misses)++;
	compute(pc, tmp);
	seq_begin();
	store_rule(&set[1], &set[0]);
	store_rule(&set[0], tmp);
	seq_end();
	return &set[0];
}

/* The walk of ht_unwind and ht_unwind_return: the first frame's rule is
 * looked up at first, r->pc or r->pc - 1. */
static int
walk(const struct ht_regs *r, uintptr_t first, uintptr_t *pcs, int max)
{
	const struct rule *ru, *next;
	struct rule tmp[2];
	uintptr_t sp = r->sp, bp = r->bp, cfa, ra, nbp;
	uint64_t hits = 0, misses = 0;
	unsigned f;
	int n = 0, t = 0, end;

	if (max < 1)
		return 0;
	pcs[n++] = r->pc;
	ht_unwind_stats.walks++;
	if (r->pc < 4096) {
		end = END_RULE_BAD;
		goto out;
	}
	cache_check();
	ru = lookup(first, &tmp[t], &hits, &misses);
	for (;;) {
		f = ru->flags;
		if (__builtin_expect(f & RF_STOP, 0)) {
			end = ht_unwind_rule_end(f);
			break;
		}
		if (n >= max) {
			end = END_MAX;
			break;
		}
		if (ht_unwind_step(ru, sp, bp, &cfa, &ra, &nbp, NULL) != 0) {
			end = END_READ_BAD;
			break;
		}
		if (ra == 0) {
			/* A zeroed return address ends some hand-made
			 * outermost frames. */
			end = END_READ_OUTERMOST;
			break;
		}
		if (ra < 4096) {
			end = END_READ_BAD;
			break;
		}
		/*
		 * A return address is looked up at ra - 1, inside the call
		 * (the call may be the last instruction of a noreturn
		 * function).  After a signal frame the pc is where the
		 * thread was interrupted: exact, and stored + 1 so that
		 * every pcs[i > 0] is symbolized at pcs[i] - 1.
		 */
		if (f & RF_SIGNAL) {
			next = lookup(ra, &tmp[t ^= 1], &hits, &misses);
			ra++;
		} else
			next = lookup(ra - 1, &tmp[t ^= 1], &hits, &misses);
		if ((next->flags >> RF_STOP_SHIFT) == STOP_NOTEXT) {
			end = END_READ_BAD;
			break;
		}
		pcs[n++] = ra;
		sp = cfa;
		bp = nbp;
		ru = next;
	}
out:
	ht_unwind_count_end(&ht_unwind_stats, end);
	ht_unwind_stats.frames += (uint64_t)n;
	ht_unwind_stats.cache_hits += hits;
	ht_unwind_stats.cache_misses += misses;
	return n;
}

int
ht_unwind(const struct ht_regs *r, uintptr_t *pcs, int max)
{
	return walk(r, r->pc, pcs, max);
}

int
ht_unwind_return(const struct ht_regs *r, uintptr_t *pcs, int max)
{
	return walk(r, r->pc - 1, pcs, max);
}

void
ht_unwind_flush(void)
{
	if (ht_unwind_cache != NULL)
		clear_cache();
	__atomic_store_n(&ht_unwind_cache_gen, ht_modules_generation,
	    __ATOMIC_RELAXED);
	cache_failed = 0;
}

void
ht_unwind_get_stats(struct ht_unwind_stats *st)
{
	*st = ht_unwind_stats;
}
