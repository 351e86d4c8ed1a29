/*
 * The inline backend, agent side: the block heaptool_inline shared with
 * the CLI (src/inline-block.h), which patches allocator functions that no
 * GOT slot leads to.  The agent never writes code: it maps the areas the
 * CLI writes stubs and trampolines into (read and execute only: the CLI
 * writes through /proc/PID/mem), publishes the hook table, and arms the
 * records the CLI wrote: each trampoline becomes its inline hook's original
 * (ihooks.h) and every GOT original equal to the function (got.h), so that
 * a call is counted once whichever way it comes.  Nothing here is ever
 * unmapped or unarmed: a thread may be inside a trampoline at any time, and
 * a trampoline stays a valid original after the function is restored.
 */
#ifndef HT_INLINE_H
#define HT_INLINE_H

/*
 * Serve the block: publish the table, map the area asked for, arm the
 * records in ARMING (and again those ARMED, which a detach's GOT restore
 * may have undone).  From the control thread, on HT_MSG_HOOK, after the
 * GOT slots are patched; with no lock held.  Returns 0, or -1 if a record
 * could not be armed (it stays in ARMING; the CLI then patches nothing).
 */
int ht_inline_sync(void);

/*
 * The inline backend's part of the account of coverage (coverage.h): each
 * function patched is hooked inline, each refusal of the CLI's last apply
 * is listed with its reason, and the backend is inline while any function
 * is patched.  Functions put back (detach, start --backend got: the block's
 * wanted is 0) go back to the GOT backend's account, or are detached when
 * hooked is 0 (after ht_agent_unhook).  From the control thread, after
 * ht_inline_sync() or the detach, with no lock held.
 */
void ht_inline_account(int hooked);

/*
 * Launch mode's doorbell (heaptool run): the constructor, its session
 * started and the GOT slots in, serves the CLI on fd (a socket the CLI
 * made, HEAPTOOL_INLINE_FD) before main runs, so that the first allocation
 * of main is counted by the inline hooks too.  One byte each way: 'R' is
 * sent first; each 'H' read is a HT_MSG_HOOK's inline part (sync and
 * account), answered 'K' or 'E'; 'G', end of file or 30 s of silence end
 * it.  fd is closed on return.  No control thread is needed.
 */
void ht_inline_serve_fd(int fd);

#endif
