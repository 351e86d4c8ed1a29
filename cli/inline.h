/*
 * The inline backend, CLI side: allocator functions that no GOT slot leads
 * to (defined in the executable or a static library, called directly) get
 * their first instructions replaced by a jump to the agent's inline hook
 * (agent/inline.h), and detach puts those bytes back.
 *
 * The candidates are the functions named in the agent's hook table (read
 * from the agent's block, src/inline-block.h) that a module defines: any
 * definition in the executable, and definitions in shared libraries that
 * are not exported (an exported one is what the GOT slots bind to).  Each
 * is decoded with Zydis (inline-code.c) and refused, with its reason, when
 * it cannot be patched safely.  The rest of a module's set is patched
 * while every thread of the process is stopped (inline-stop.c), after
 * checking that no thread's instruction pointer, nor any word near the top
 * of its stack, lies inside the bytes to patch; if any write of the set
 * fails, all of the set is put back.
 *
 * Every call here is made by the tracer thread (ptrace), with the agent
 * answering on its socket.
 */
#ifndef HT_INLINE_H
#define HT_INLINE_H

#include <sys/types.h>

#include <stddef.h>

#include "ctl.h"

/* What ht_inline_apply did: functions hooked now or before, refused
 * (each with a line in the notes), excluded (counted inside another). */
#define HT_INLINE_NOTES_MAX 4097 /* the block's notes, and a NUL */

struct ht_inline_result {
	int hooked;
	int refused;
	int excluded;
	char notes[4096]; /* "name (module): reason\n" lines */
};

/*
 * Hook every candidate of pid inline (the agent loaded and answering on
 * c, or, when bell is not -1, on heaptool run's doorbell socket bell,
 * agent/inline.h).  Returns 0 (res says what was done; nothing to hook is
 * 0 too), or -1 with a one-line message in err (nothing left patched).
 */
int ht_inline_apply(pid_t pid, struct ht_ctl *c, int bell,
    struct ht_inline_result *res, char *err, size_t errlen);

/* Does the ELF file at path define any allocator function of
 * src/allocnames.h (one that allocates or frees)?  1, 0, or -1 if it
 * cannot be read. */
int ht_inline_file_has_allocator(const char *path);

/*
 * Put back the bytes of every function patched in pid, checking that they
 * are still ours first (bytes someone else changed are left, and counted
 * as an error).  Returns the number restored, or -1 with err (a process
 * without the agent's block has nothing patched: 0).
 */
int ht_inline_restore(pid_t pid, char *err, size_t errlen);

/*
 * For status: the functions hooked inline now, as "name (module)" joined
 * with ", " into hooked, and the refusals of the last apply into notes.
 * Returns the number hooked, or -1 if the agent's block cannot be read.
 */
int ht_inline_describe(pid_t pid, char *hooked, size_t hlen, char *notes,
    size_t nlen);

#endif
