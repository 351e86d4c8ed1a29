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
	int32_t cfa_off;
	int8_t ra_off8;
	int8_t bp_off8;
	uint16_t flags;
};

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

static struct rule *cache;
static unsigned cache_gen;
static int cache_failed;
static struct ht_unwind_stats stats;

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
	if (cache == NULL && !cache_failed) {
		cache = ht_mem_map(CACHE_BYTES);
		if (cache == NULL)
			cache_failed = 1; /* work uncached */
		cache_gen = ht_modules_generation;
	}
	if (cache_gen != ht_modules_generation) {
		if (cache != NULL)
			memset(cache, 0, CACHE_BYTES);
		cache_gen = ht_modules_generation;
		cache_failed = 0;
	}
}

static inline const struct rule *
lookup(uintptr_t pc, struct rule *tmp, uint64_t *hits, uint64_t *misses)
{
	struct rule *set;

	if (__builtin_expect(cache == NULL, 0)) {
		(*misses)++;
		compute(pc, tmp);
		return tmp;
	}
	set = &cache[((pc * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_SETS_LOG2)) *
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
	set[1] = set[0];
	compute(pc, &set[0]);
	return &set[0];
}

/* An 8-byte stack slot at a, in [sp, sp + STACK_SPAN). */
static inline int
slot_ok(uintptr_t a, uintptr_t sp)
{
	return (a & 7) == 0 && a - sp < STACK_SPAN - 8;
}

/* The walk of ht_unwind and ht_unwind_return: the first frame's rule is
 * looked up at first, r->pc or r->pc - 1. */
static int
walk(const struct ht_regs *r, uintptr_t first, uintptr_t *pcs, int max)
{
	const struct rule *ru, *next;
	struct rule tmp[2];
	uintptr_t sp = r->sp, bp = r->bp, v[3], a, ra, nbp;
	uint64_t hits = 0, misses = 0;
	unsigned f, k;
	int n = 0, t = 0;

	if (max < 1)
		return 0;
	pcs[n++] = r->pc;
	stats.walks++;
	if (r->pc < 4096) {
		stats.stops_bad_frame++;
		goto out;
	}
	cache_check();
	ru = lookup(first, &tmp[t], &hits, &misses);
	for (;;) {
		f = ru->flags;
		if (__builtin_expect(f & RF_STOP, 0)) {
			switch (f >> RF_STOP_SHIFT) {
			case STOP_OUTERMOST:
				stats.stops_outermost++;
				break;
			case STOP_NOCFI:
				stats.stops_no_cfi++;
				break;
			default:
				stats.stops_bad_frame++;
				break;
			}
			break;
		}
		if (n >= max) {
			stats.stops_max++;
			break;
		}
		k = (f >> RF_BP_SHIFT) & 7;
		if (__builtin_expect((f & RF_SIMPLE) && (sp & 7) == 0, 1)) {
			/* simple(): the checks below hold already. */
			a = sp + (uintptr_t)(intptr_t)ru->cfa_off;
			v[HT_CFA_BASE_CFA] = a;
			ra =
			    *(const uintptr_t *)(a + (intptr_t)ru->ra_off8 * 8);
			if (k == BP_SAME)
				nbp = bp;
			else if (k == BP_UNDEF)
				nbp = 0;
			else
				nbp = *(const uintptr_t *)(a +
				    (intptr_t)ru->bp_off8 * 8);
			goto stepped;
		}
		v[HT_CFA_BASE_SP] = sp;
		v[HT_CFA_BASE_BP] = bp;
		a = v[f & RF_CFA_BASE] + (intptr_t)ru->cfa_off;
		if (f & RF_CFA_DEREF) {
			if (!slot_ok(a, sp))
				goto bad;
			a = *(const uintptr_t *)a;
		}
		/*
		 * The CFA is the caller's sp: above ours, within reach.  A
		 * signal frame's CFA is the interrupted sp, which the kernel
		 * wrote and which may lie on another stack (sigaltstack).
		 */
		if ((a & 7) != 0 ||
		    (!(f & RF_SIGNAL) && a - sp - 1 >= STACK_SPAN))
			goto bad;
		v[HT_CFA_BASE_CFA] = a;
		a = v[(f >> RF_RA_SHIFT) & 3] + (intptr_t)ru->ra_off8 * 8;
		if (!slot_ok(a, sp))
			goto bad;
		ra = *(const uintptr_t *)a;
		if (k == BP_SAME)
			nbp = bp;
		else if (k == BP_UNDEF)
			nbp = 0;
		else {
			a = v[k - BP_AT] + (intptr_t)ru->bp_off8 * 8;
			if (!slot_ok(a, sp))
				goto bad;
			nbp = *(const uintptr_t *)a;
		}
stepped:
		if (ra == 0) {
			/* A zeroed return address ends some hand-made
			 * outermost frames. */
			stats.stops_outermost++;
			break;
		}
		if (ra < 4096)
			goto bad;
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
		if ((next->flags >> RF_STOP_SHIFT) == STOP_NOTEXT)
			goto bad;
		pcs[n++] = ra;
		sp = v[HT_CFA_BASE_CFA];
		bp = nbp;
		ru = next;
	}
	goto out;
bad:
	stats.stops_bad_frame++;
out:
	stats.frames += (uint64_t)n;
	stats.cache_hits += hits;
	stats.cache_misses += misses;
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
	if (cache != NULL)
		memset(cache, 0, CACHE_BYTES);
	cache_gen = ht_modules_generation;
	cache_failed = 0;
}

void
ht_unwind_get_stats(struct ht_unwind_stats *st)
{
	*st = stats;
}
