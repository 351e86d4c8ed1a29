/*
 * The inline backend's hooks: the hooks of hooks.c compiled once more
 * (ihooks.c), over a table of their own, ht_ihooks, with the same names in
 * the same order.  An allocator function patched by the CLI jumps to its
 * entry's hook here; the entry's original is that function's trampoline
 * (the displaced instructions and a jump back, inline.c), set before the
 * function is patched.  So the inline hooks are the GOT hooks, instruction
 * for instruction, and follow every change of hooks.c and of its table.
 * One function per table entry: the table has one original per name.
 *
 * ht_ihooks' flags never have HT_HOOK_MULTI (no GOT slot leads here);
 * HT_HOOK_SLOW follows the GOT hooks' (agent.c sets both).
 */
#ifndef HT_IHOOKS_H
#define HT_IHOOKS_H

#include <stddef.h>

#include "got.h"
#include "hooks.h"

extern struct ht_hook_def ht_ihooks[HT_NHOOKS];

/* ht_hooks_set_slow() for the inline hooks. */
void ht_ihooks_set_slow(int on);
void ht_ihooks_set_record(int on);
void ht_ihooks_gate(void);

/* Can entry i be hooked inline: it has a hook that calls its own
 * original only (reallocarray's calls realloc's, which belongs to another
 * function, dlopen's and dlclose's are agent.c's, _exit's and _Exit's
 * init.c's). */
int ht_ihooks_inlinable(size_t i);

#endif
