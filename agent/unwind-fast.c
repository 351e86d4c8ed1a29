/*
 * The walk without ht_lock_global (unwind.h: ht_unwind_fast), from the
 * rules the cache holds (unwind.c) and a per-thread memo of the last walk.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"
#include "modules.h"
#include "unwind-int.h"

/*
 * The memo of ht_unwind_fast: per thread (a slot chosen by the thread
 * pointer), the last walk's frames, each with the state it was entered in
 * (its rule's lookup address, sp and rbp), and every stack read the walk
 * made (address and value), in order.  A walk is a function of its first
 * frame's state, the module set's rules and the values it reads, so a walk
 * that reaches a state the memo holds can check the memo's reads from
 * there instead of looking rules up: while every value read is the one the
 * memo noted, the next address is the one the walk itself would read next
 * (it reads nothing the walk would not), and the frames are the memo's.
 * The first read that differs ends the memo's part, and the walk goes on
 * by itself from the frame reached.  A program allocates from a few stacks
 * whose outer frames stay put while the inner ones change: those are
 * checked, a load and a compare a read, rather than walked.
 *
 * A slot's sequence count is odd while a walk writes it.  The common case,
 * the memo's stack again from its first frame, only reads: the count before
 * and after, and before each stack read whose address it took from the
 * memo, so that no address comes from a memo being rewritten (the reads a
 * memo was checked with are then those of one whole walk).  Any other walk
 * takes the slot (the count made odd, a try-lock: a walk that finds it
 * taken goes without), writes its own frames into the slot's other half,
 * which becomes the memo once the walk is known good, and lets go.  Threads
 * share a slot only when their thread pointers hash alike.  A memo is of
 * one module generation.
 */
struct memo_slot {
	unsigned seq; /* odd: taken */
	int cur;      /* which half is the memo */
	struct memo h[2];
};

static struct memo_slot *memo;

/* Under ht_lock_global, once: no memo if it cannot be mapped. */
void
ht_unwind_memo_init(void)
{
	if (memo == NULL)
		__atomic_store_n(&memo,
		    (struct memo_slot *)ht_mem_map(
			MEMO_SLOTS * sizeof(struct memo_slot)),
		    __ATOMIC_RELEASE);
}

/* The calling thread's slot (NULL: no memo). */
static inline struct memo_slot *
memo_slot(void)
{
	struct memo_slot *m = __atomic_load_n(&memo, __ATOMIC_ACQUIRE);
	uintptr_t tp;

	if (m == NULL)
		return NULL;
	/* The thread pointer (x86-64: %fs:0 holds its own address). */
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return m + (size_t)((tp * 0x9e3779b97f4a7c15ull) >> 58);
}

/* Take slot m, whose count was seq (even), or return 0. */
static inline int
memo_take(struct memo_slot *m, unsigned seq)
{
	if (!__atomic_compare_exchange_n(&m->seq, &seq, seq + 1, 0,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 1;
}

static inline void
memo_give(struct memo_slot *m)
{
	__atomic_store_n(&m->seq, m->seq + 1, __ATOMIC_RELEASE);
}

/*
 * Without taking slot m (count mseq, even): whether the memo is this walk
 * (state key, sp, bp and pc, max and module generation gen) with every read
 * as it was; then its pcs are in pcs and its frames and end in *n and *end.
 */
static int
memo_same(struct memo_slot *m, unsigned mseq, unsigned gen, int max,
    uintptr_t key, uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t *pcs,
    int *n, int *end, uint64_t *id)
{
	const struct memo *old = &m->h[m->cur & 1];
	const struct memo_read *mr = old->r;
	uintptr_t a;
	uint64_t w;
	uint32_t q;
	int k, e;

	if (old->gen != gen || old->max != max || old->f[0].key != key ||
	    old->f[0].sp != sp || old->f[0].bp != bp || old->pcs[0] != pc)
		return 0;
	k = old->n;
	if (k < 1 || k > max || (q = (uint32_t)old->nreads) > MEMO_READS)
		return 0;
	for (; q > 0; q--, mr++) {
		a = mr->addr;
		/* a is of the memo the count says, and so one of its walk's
		 * reads: the one this walk makes next. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&m->seq, __ATOMIC_RELAXED) != mseq)
			return 0;
		if (*(const uintptr_t *)a != mr->val)
			return 0;
	}
	/* A loop, not memcpy: libc's, for a few words, costs more than
	 * the whole check (measured: 14 ns of 25 for a walk of 4 frames). */
	for (q = 0; q < (uint32_t)k; q++)
		pcs[q] = old->pcs[q];
	e = old->end;
	w = old->id;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&m->seq, __ATOMIC_RELAXED) != mseq)
		return 0;
	*n = k;
	*end = e;
	*id = w;
	return 1;
}

/* Without the lock: the cached rule of pc into out, or 0 (not cached).
 * What it reads is kept only if ht_unwind_cache_seq did not change meanwhile. */
static inline int
lookup_fast(const struct rule *c, uintptr_t pc, struct rule *out)
{
	const struct rule *set =
	    &c[((pc * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_SETS_LOG2)) *
		CACHE_WAYS];

	if (__builtin_expect(
		__atomic_load_n(&set[0].pc, __ATOMIC_RELAXED) == pc, 1))
		out->word = __atomic_load_n(&set[0].word, __ATOMIC_RELAXED);
	else if (__atomic_load_n(&set[1].pc, __ATOMIC_RELAXED) == pc)
		out->word = __atomic_load_n(&set[1].word, __ATOMIC_RELAXED);
	else
		return 0;
	out->pc = pc;
	return 1;
}

/* Note frame n (pc, entered at key, sp, bp) in rec. */
static inline void
rec_frame(struct memo *rec, int n, uintptr_t pc, uintptr_t key, uintptr_t sp,
    uintptr_t bp)
{
	struct memo_frame *mf = &rec->f[n];

	rec->pcs[n] = pc;
	mf->key = key;
	mf->sp = sp;
	mf->bp = bp;
	mf->read = (uint32_t)rec->nreads;
}

/* The memo's frame at or after *j (sp only grows along a walk) whose state
 * is (key, sp, bp), or -1. */
static inline int
memo_find(const struct memo *old, int *j, uintptr_t key, uintptr_t sp,
    uintptr_t bp)
{
	int i = *j;

	while (i < old->n && old->f[i].sp < sp)
		i++;
	*j = i;
	if (i < old->n && old->f[i].sp == sp && old->f[i].key == key &&
	    old->f[i].bp == bp)
		return i;
	return -1;
}

/* The memos' ids: one a memo written. */
static uint64_t memo_ids;

int
ht_unwind_fast(const struct ht_regs *r, int ret, uintptr_t *pcs, int max,
    struct ht_unwind_stats *st, uint64_t *id)
{
	const struct rule *c =
	    __atomic_load_n(&ht_unwind_cache, __ATOMIC_ACQUIRE);
	unsigned gen =
		     __atomic_load_n(&ht_modules_generation, __ATOMIC_RELAXED),
		 seq;
	struct memo_slot *slot;
	unsigned mseq = 0;
	const struct memo *old = NULL;
	struct memo *rec = NULL;
	struct rule ru;
	uintptr_t key, sp = r->sp, bp = r->bp, cfa, ra, nbp;
	int n = 0, j = 0, i, k, have = 0, end;
	uint32_t q, lo, hi;

	*st = (struct ht_unwind_stats){ 0 };
	*id = 0;
	if (max < 1 || max > MEMO_FRAMES || r->pc < 4096 || c == NULL)
		return -1;
	seq = __atomic_load_n(&ht_unwind_cache_seq, __ATOMIC_ACQUIRE);
	if ((seq & 1) ||
	    __atomic_load_n(&ht_unwind_cache_gen, __ATOMIC_RELAXED) != gen)
		return -1;
	key = ret ? r->pc - 1 : r->pc;
	st->walks = 1;
	if ((slot = memo_slot()) != NULL) {
		mseq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
		/* The common case: the same stack as the memo's from its
		 * first frame, every read as it was, so the memo's walk
		 * itself, left as it is. */
		if (!(mseq & 1) &&
		    memo_same(slot, mseq, gen, max, key, r->pc, sp, bp, pcs, &n,
			&end, id)) {
			st->memo_frames = (uint64_t)n - 1;
			slot = NULL;
			goto done;
		}
		if ((mseq & 1) || !memo_take(slot, mseq))
			slot = NULL;
	}
	if (slot != NULL) {
		old = &slot->h[slot->cur];
		if (old->gen != gen || old->n == 0 || old->max != max)
			old = NULL;
		rec = &slot->h[slot->cur ^ 1];
		rec->gen = gen;
		rec->max = max;
		rec->nreads = 0;
	}
	pcs[n++] = r->pc;
	if (rec != NULL)
		rec_frame(rec, 0, r->pc, key, sp, bp);
	for (;;) {
		/* The state of frame n - 1 (stored): the memo's? */
		if (old != NULL && (i = memo_find(old, &j, key, sp, bp)) >= 0) {
			int i0 = i, k0 = n - 1, full = 0;

			for (;; i++) {
				if (i == old->n - 1 && old->end < END_MAX) {
					end = old->end; /* its rule stops */
					full = 1;
					break;
				}
				if (n >= max) {
					end = END_MAX;
					full = 1;
					break;
				}
				if (i == old->n - 1 && old->end == END_MAX)
					break; /* walk on from here */
				lo = old->f[i].read;
				hi = i == old->n - 1 ? (uint32_t)old->nreads :
						       old->f[i + 1].read;
				for (q = lo; q < hi; q++)
					if (*(const uintptr_t *)old->r[q]
						 .addr != old->r[q].val)
						break;
				if (q < hi)
					break; /* it differs: walk on */
				if (i == old->n - 1) {
					end = old->end;
					full = 2;
					break;
				}
				pcs[n++] = old->pcs[i + 1];
				st->memo_frames++;
			}
			/* Frames i0 + 1 .. i are the memo's, and with full
			 * 2 the reads of step i too. */
			if (rec != NULL) {
				uint32_t base = old->f[i0].read;
				uint32_t top = full == 2 ?
				    (uint32_t)old->nreads :
				    old->f[i].read;

				if (k0 == 0 && i0 == 0 && full != 0 &&
				    n == old->n && end == old->end) {
					/* The memo as it is. */
					rec = NULL;
					*id = old->id;
				} else {
					for (k = i0 + 1; k <= i; k++) {
						rec->pcs[k0 + k - i0] =
						    old->pcs[k];
						rec->f[k0 + k - i0] = old->f[k];
						rec->f[k0 + k - i0].read =
						    (uint32_t)rec->nreads +
						    (old->f[k].read - base);
					}
					memcpy(&rec->r[rec->nreads],
					    &old->r[base],
					    (top - base) * sizeof(old->r[0]));
					rec->nreads += (int)(top - base);
				}
			}
			if (full)
				break;
			key = old->f[i].key;
			sp = old->f[i].sp;
			bp = old->f[i].bp;
			old = NULL;
			have = 0;
		}
		if (!have) {
			if (!lookup_fast(c, key, &ru))
				goto fail;
			st->cache_hits++;
		}
		if (__builtin_expect(ru.flags & RF_STOP, 0)) {
			end = ht_unwind_rule_end(ru.flags);
			break;
		}
		if (n >= max) {
			end = END_MAX;
			break;
		}
		if (ht_unwind_step(&ru, sp, bp, &cfa, &ra, &nbp, rec) != 0) {
			end = END_READ_BAD;
			break;
		}
		if (ra == 0) {
			end = END_READ_OUTERMOST;
			break;
		}
		if (ra < 4096) {
			end = END_READ_BAD;
			break;
		}
		if (ru.flags & RF_SIGNAL)
			key = ra++;
		else
			key = ra - 1;
		sp = cfa;
		bp = nbp;
		/* A frame the memo holds is known to be a frame: stored
		 * without its rule, which the memo's part does not need. */
		have = old == NULL || memo_find(old, &j, key, sp, bp) < 0;
		if (have) {
			if (!lookup_fast(c, key, &ru))
				goto fail;
			st->cache_hits++;
			if ((ru.flags >> RF_STOP_SHIFT) == STOP_NOTEXT) {
				end = END_READ_BAD;
				break;
			}
		}
		if (rec != NULL)
			rec_frame(rec, n, ra, key, sp, bp);
		pcs[n++] = ra;
	}
done:
	/* Nothing read may have changed meanwhile: the rules (the cache's
	 * sequence) and the module set they are of. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&ht_unwind_cache_seq, __ATOMIC_RELAXED) != seq ||
	    __atomic_load_n(&ht_modules_generation, __ATOMIC_RELAXED) != gen)
		goto fail;
	if (slot != NULL) {
		if (rec != NULL) {
			rec->n = n;
			rec->end = end;
			rec->id = *id =
			    __atomic_add_fetch(&memo_ids, 1, __ATOMIC_RELAXED);
			slot->cur ^= 1;
		}
		memo_give(slot);
	}
	ht_unwind_count_end(st, end);
	st->frames = (uint64_t)n;
	return n;
fail:
	if (slot != NULL)
		memo_give(slot);
	*id = 0;
	return -1;
}

void
ht_unwind_add_stats(const struct ht_unwind_stats *st)
{
	ht_unwind_stats.walks += st->walks;
	ht_unwind_stats.frames += st->frames;
	ht_unwind_stats.cache_hits += st->cache_hits;
	ht_unwind_stats.cache_misses += st->cache_misses;
	ht_unwind_stats.memo_frames += st->memo_frames;
	ht_unwind_stats.stops_no_cfi += st->stops_no_cfi;
	ht_unwind_stats.stops_outermost += st->stops_outermost;
	ht_unwind_stats.stops_bad_frame += st->stops_bad_frame;
	ht_unwind_stats.stops_max += st->stops_max;
}
