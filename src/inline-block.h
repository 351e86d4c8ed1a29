/*
 * The inline backend's shared block: the one structure that the agent and
 * the CLI both read and write, the agent in its own memory and the CLI
 * through /proc/PID/mem while it patches.  It lives in the agent's data as
 * the exported symbol heaptool_inline (the CLI finds it in the agent's
 * .dynsym), so no control message carries it: the CLI writes what it wants
 * (an area near a module, the records of the functions it patches), then
 * sends HT_MSG_HOOK, whose handler calls the agent's ht_inline_sync().
 *
 * Layout: fixed-size little-endian fields in declaration order, no
 * padding surprises (every member is naturally aligned).  A reader checks
 * magic and version first and refuses any other.  Libc only, no code.
 *
 * The life of a record (state):
 *   FREE     unused.
 *   ARMING   written by the CLI: its stub and trampoline are in an area,
 *            the bytes to patch and the original ones are here.  The next
 *            sync makes the trampoline the inline hook's original for
 *            index, and every GOT original equal to fn the trampoline
 *            (ht_got_redirect), so that nothing is counted twice once fn
 *            jumps to the hook.  Kind EXCLUDE: fn is a function that calls
 *            a hooked one directly (counted there): the GOT slots bound to
 *            it are put back and left alone (ht_got_exclude).
 *   ARMED    done by the agent; fn's bytes are the original ones.
 *   PATCHED  the CLI wrote patch[] at `at' while every thread was
 *            stopped; detach writes orig[] back (after checking that the
 *            bytes there are still patch[]) and sets ARMED again.
 * After the patches, the CLI writes the refusals (text and records) and
 * rings HT_MSG_HOOK once more: the agent's account of coverage then says
 * which functions are hooked inline and why the others are not
 * (ht_inline_account).
 * Records are never freed: a trampoline may still run in some thread, and
 * a later attach reuses the record of the same function (same bytes).
 */
#ifndef HT_INLINE_BLOCK_H
#define HT_INLINE_BLOCK_H

#include <stdint.h>

#define HT_INLINE_MAGIC	    0x4e495448u /* "HTIN" */
#define HT_INLINE_VERSION   3
#define HT_INLINE_NAMES	    256 /* hook table entries described */
#define HT_INLINE_RECORDS   128
#define HT_INLINE_AREAS	    8
#define HT_INLINE_AREA_SIZE (64u * 1024)
#define HT_INLINE_BYTES	    32	 /* the most bytes patched at a function */
#define HT_INLINE_NOTES	    4096 /* the refusals' text */
#define HT_INLINE_REFUSALS  128

enum ht_inline_state {
	HT_INLINE_FREE = 0,
	HT_INLINE_ARMING = 1,
	HT_INLINE_ARMED = 2,
	HT_INLINE_PATCHED = 3,
};

enum ht_inline_kind {
	HT_INLINE_HOOK = 0,    /* fn jumps to the inline hook of index */
	HT_INLINE_EXCLUDE = 1, /* fn is counted inside: no GOT slot to it */
};

struct ht_inline_rec {
	uint64_t fn;	/* the function's first byte */
	uint64_t at;	/* where the jump is written (fn, or after endbr64) */
	uint64_t stub;	/* its stub in an area: jmp *hook */
	uint64_t tramp; /* its trampoline: the displaced code, jmp back */
	uint32_t index; /* hook table index */
	uint32_t kind;	/* enum ht_inline_kind */
	uint32_t state; /* enum ht_inline_state */
	uint32_t len;	/* bytes of orig and patch */
	uint8_t orig[HT_INLINE_BYTES];
	uint8_t patch[HT_INLINE_BYTES];
};

/* A function the CLI would not patch, for the account of coverage: the
 * agent finds its module by fn. */
struct ht_inline_refusal {
	uint64_t fn;	 /* the function's first byte */
	uint32_t index;	 /* hook table index */
	uint32_t reason; /* enum ht_cov_reason (src/allocnames.h) */
};

struct ht_inline_area {
	uint64_t lo;   /* 0: none */
	uint64_t used; /* bytes handed out, by the CLI */
};

struct ht_inline_shared {
	uint32_t magic;	  /* set by the agent's first sync */
	uint32_t version; /* HT_INLINE_VERSION */
	uint32_t nnames;  /* entries of names and hooks */
	uint32_t busy;	  /* unused: CLIs serialize on a flock of
			   * /proc/PID/mem (cli/inline.c) */
	/* The hook table (agent/hooks.h): each entry's name (an address of a
	 * NUL-terminated string in the agent) and its inline hook (0: the
	 * entry cannot be hooked inline). */
	uint64_t names[HT_INLINE_NAMES];
	uint64_t hooks[HT_INLINE_NAMES];
	/* The CLI asks for an area within reach of this address (0: none);
	 * the agent clears it once served, and sets near_errno on failure. */
	uint64_t near;
	uint32_t near_errno;
	/* 1 from the CLI's apply on, 0 after its restore (detach, start
	 * --backend got): whether the inline backend is asked for. */
	uint32_t wanted;
	struct ht_inline_area areas[HT_INLINE_AREAS];
	struct ht_inline_rec rec[HT_INLINE_RECORDS];
	/* What the CLI could not patch, and why: lines of text ("module
	 * name: reason\n"), for status and the reports' headers. */
	uint32_t notes_len;
	uint32_t pad2;
	char notes[HT_INLINE_NOTES];
	/* The same refusals as records, those of the last apply, which the
	 * agent turns into coverage entries on the HT_MSG_HOOK that ends
	 * it (and at detach). */
	uint32_t nrefusals;
	uint32_t pad3;
	struct ht_inline_refusal refusals[HT_INLINE_REFUSALS];
};

#endif
