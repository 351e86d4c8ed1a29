/*
 * A hook's entry in its table, and the gate: what lets a hook's common path
 * tell with one load, one compare and one branch that it has no reason to
 * go out of line.
 *
 * An allocating hook compares its entry's word with the calling thread's
 * generation (sampler.h).  The word holds the hook's HT_HOOK_* bits in the
 * low byte and the session generation above; ht_session_gen advances by
 * HT_GATE_GEN_STEP, so its low byte is always zero, and the two are equal
 * exactly when no bit is set and the thread's countdown is the running
 * session's.
 *
 * A free needs no countdown, and reads the live-sample filter (tables.h)
 * anyway: it reads it through its entry's filter pointer, which points at
 * the filter itself while no bit is set, and at a filter that says "maybe"
 * for every block while one is, so the filter's test sends the call out of
 * line for both reasons.
 *
 * Bits change only through ht_gate_bits(), which keeps the filter pointer
 * in step; the generation is rewritten with a compare-and-swap that leaves
 * the bits alone.  Lock-free, never called from a hook's path.
 */
#ifndef HT_GATE_H
#define HT_GATE_H

#include <stddef.h>
#include <stdint.h>

#define HT_HOOK_MULTI  0x1 /* modules were bound to different originals */
#define HT_HOOK_SLOW   0x2 /* take the slow path (failure dumps armed) */
#define HT_HOOK_RECORD 0x4 /* take the slow path (a recording runs) */

#define HT_GATE_FLAGS	    0xffu  /* the HT_HOOK_* bits */
#define HT_GATE_GEN_STEP    0x100u /* between two session generations */
#define HT_GATE_TABLES	    4	   /* the most tables of hooks */
#define HT_GATE_FILTER_SIZE 65536  /* bytes of a live-sample filter */

struct ht_hook_def {
	const char *name; /* symbol name, e.g. "malloc", "_Znwm" */
	void *hook;	  /* our replacement */
	/* Set by ht_got_patch before the first slot of this name is written:
	 * the original of the first module patched.  Hooks call it. */
	void *orig;
	/* HT_HOOK_* bits in the low byte, the session generation above,
	 * read by an allocating hook's fast path in one load: any bit set
	 * sends the call out of line.  ht_got_patch sets HT_HOOK_MULTI when
	 * some module's original differs from orig: the hook then asks
	 * ht_got_orig_for_caller().  The agent sets and clears HT_HOOK_SLOW
	 * and HT_HOOK_RECORD on its own (got.c never touches them). */
	unsigned flags;
	/* dlsym(RTLD_DEFAULT, name), set by ht_got_resolve(): the original
	 * of a slot still bound lazily to its PLT stub. */
	void *dl;
	/* HT_GOT_* rules (got.h), set before the first patch. */
	unsigned rules;
	/* The filter a free hook's fast path reads (above): never NULL in a
	 * table whose hooks read it (hooks.c initialises it). */
	const uint8_t *filter;
};

/* Set (on) or clear bits in d's word and, in a kept table, point its
 * filter where they say.  Any thread; atomic. */
void ht_gate_bits(struct ht_hook_def *d, unsigned bits, int on);

/* From now on, keep the generation of hooks[0..n) (a table that stays for
 * the agent's life) equal to the last ht_gate_set_gen(), and their filter
 * pointers at filter (HT_GATE_FILTER_SIZE bytes: tables.h's) while no bit
 * is set; idempotent.  Before any bit of the table is set.  Returns 0, or
 * -1 when HT_GATE_TABLES tables are kept already. */
int ht_gate_add(struct ht_hook_def *hooks, size_t n, const uint8_t *filter);

/* The session generation is gen now (a multiple of HT_GATE_GEN_STEP):
 * write it into every kept table's words. */
void ht_gate_set_gen(unsigned gen);

#endif
