/*
 * The inline backend's parts (inline.h is the contract):
 *   inline.c       the order of the work: candidates, plans, the block,
 *                  the stopped process, the patches and their undoing;
 *   inline-elf.c   the modules of the process and the candidates they
 *                  define (ELF symbols), and the agent's block;
 *   inline-code.c  Zydis: what can be displaced, the trampoline, the
 *                  branches into the patched bytes;
 *   inline-ipa.c   Zydis: whether callers may rely on registers the
 *                  function leaves (its call closure is closed);
 *   inline-stop.c  every thread stopped with ptrace, and let go;
 *   inline-mem.c   the process's memory through /proc/PID/mem.
 */
#ifndef HT_INLINE_INT_H
#define HT_INLINE_INT_H

#include <sys/types.h>
#include <sys/user.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "allocnames.h"
#include "inline-block.h"
#include "inline.h"

#define INL_MAX_FNS   128
#define INL_MAX_PARTS 8
#define INL_CODE_MAX  (64 * 1024) /* bytes of a function scanned */
#define INL_SLOT      64	  /* an area's bytes per function */
#define INL_STUB      16	  /* of which the stub's */

/* A module of the process with candidates. */
struct inl_mod {
	char path[PATH_MAX];
	uint64_t lo, hi; /* its mappings' span */
	int main;	 /* the executable */
};

/* One candidate function, and its plan. */
#define INL_MAX_ALIASES 8

struct inl_fn {
	char name[64];
	int index; /* in the agent's table */
	struct inl_mod *mod;
	uint64_t addr, size;
	int exported;			  /* in .dynsym, default visibility */
	uint64_t parts[INL_MAX_PARTS][2]; /* name.cold & co: [lo, hi) */
	size_t nparts;
	/* The plan (inline-code.c). */
	uint64_t at;  /* addr, or addr + 4 after endbr64 */
	uint32_t len; /* bytes displaced */
	uint8_t orig[HT_INLINE_BYTES];
	uint64_t calls[16]; /* direct call and jump targets */
	size_t ncalls;
	char why[200]; /* refused: why; "" if not */
	unsigned cov;  /* and its enum ht_cov_reason (0: HT_COV_REFUSED) */
	int exclude;   /* calls a hooked candidate */
	int rec;       /* its record in the block, -1 */
	int done;      /* patched before this apply */
	/* Other names of the table at the same address (free and operator
	 * delete, say), of the same kind and signature: hooked with it. */
	int aliases[INL_MAX_ALIASES];
	size_t naliases;
};

/* inline-mem.c: all of len bytes, or -1 with errno. */
int ht_inl_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ht_inl_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* A NUL-terminated string of at most len - 1 bytes: 0 or -1. */
int ht_inl_read_str(pid_t pid, uint64_t addr, char *buf, size_t len);

/*
 * inline-elf.c.  find_block: the address of the agent's heaptool_inline
 * in pid, 0 if the agent is not mapped or has none.  candidates: the
 * functions the modules of pid define under the table's names (names[i]
 * for i < n, NULL where unusable), into fns (at most max) and their
 * modules into mods (at most maxmods).  Returns the number of fns, or -1
 * with err.
 */
uint64_t ht_inl_find_block(pid_t pid);
int ht_inl_candidates(pid_t pid, char *const *names, size_t n,
    struct inl_fn *fns, size_t max, struct inl_mod *mods, size_t maxmods,
    size_t *nmods, char *err, size_t errlen);
/* The module path of address a in pid ("?" if none), into buf. */
void ht_inl_module_of(pid_t pid, uint64_t a, char *buf, size_t len);

/*
 * inline-code.c.  plan: decode f's code (its bytes code[0..n), n <= its
 * size, at f->addr) and its parts (read through pid): set f->at, len,
 * orig and calls, or f->why.  Returns 0 if it can be patched, -1 if not.
 * tramp: the trampoline's bytes for f at address t into out (at least
 * INL_SLOT - INL_STUB bytes): its length, or 0 with f->why set (an operand
 * out of reach).  stub: the stub's bytes (INL_STUB) jumping to hook.
 * patch: the bytes written at f->at (f->len of them) jumping to stub.
 */
int ht_inl_plan(pid_t pid, struct inl_fn *f, const uint8_t *code, size_t n);
size_t
ht_inl_tramp(struct inl_fn *f, uint64_t t, const uint8_t *code, uint8_t *out);
void ht_inl_stub(uint64_t hook, uint8_t *out);
int ht_inl_patch(const struct inl_fn *f, uint64_t stub, uint8_t *out);

/*
 * inline-ipa.c: 0 if f's call closure (followed from its entry through
 * direct calls and jumps inside its module, through pid's memory) reaches
 * a target no compiler knows (an indirect call, a PLT entry, another
 * module), so that its callers can assume nothing of the registers it
 * leaves; -1 with f->why and HT_COV_CLOSED if not, or if too big to see.
 */
int ht_inl_closure(pid_t pid, struct inl_fn *f);

/*
 * inline-stop.c.  Every thread of pid stopped (seized, interrupted, new
 * ones caught until none appears), with its registers; or -1 with err and
 * none left stopped.  resume: let them all go (a signal that stopped one is
 * delivered).  The world is the caller's; free with resume.
 */
struct inl_world {
	pid_t pid;
	size_t n, cap;
	pid_t *tid;
	int *sig;
	struct user_regs_struct *regs;
};
int ht_inl_stop_all(struct inl_world *w, pid_t pid, char *err, size_t errlen);
void ht_inl_resume_all(struct inl_world *w);

#endif
