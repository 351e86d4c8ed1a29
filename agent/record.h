/*
 * The recorder (heaptool record): every allocator event of the process,
 * through the same hooks as sampling, written to a trace file (src/trace.h)
 * by the drain, which the agent's thread runs between requests.
 *
 * While a recording runs, every hook's flag word has HT_HOOK_RECORD
 * (agent.c sets and clears it around ht_record_start and _stop), so each
 * call goes out of line, where the hook calls ht_rec_alloc after the
 * allocator returned a block, ht_rec_free before a block goes back to it,
 * and ht_rec_take / ht_rec_realloc around a reallocation.  Each event
 * takes the next number of one global sequence: a free's before the block
 * is given back, an allocation's after it is handed out, so that the reuse
 * of an address always has a larger number than the free that gave it
 * up.  A block's identity is the number of the event that made it, kept
 * by address (recmap.h) until its free names it.
 *
 * Events go into the thread's buffer (recbuf.h); the drain writes them
 * (recdrain.h).  Nothing is dropped: a thread whose buffer is full and
 * finds none free waits for the drain (counted in END's waits), or drains
 * itself when the drain is busy elsewhere.  What cannot be written (a
 * failed write, a full disk) stops the recording, counted as lost with
 * the errno of the failure; so does a block whose identity could not be
 * kept (no memory).
 *
 * The agent's own allocations (a guard is set) are not recorded, nor a
 * hook re-entered on a thread that is inside the recorder (a signal
 * handler that allocates).
 */
#ifndef HT_RECORD_H
#define HT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct ht_record_cfg {
	int fd;		    /* the trace file, the recorder's from now on */
	uint64_t max_bytes; /* 0: no limit */
	uint32_t buffer;    /* events of a thread's buffer; 0: the default */
	/* A pipe that hears the recording's end state as one byte (enum
	 * ht_record_state), or -1: heaptool record -- CMD's. */
	int status_fd;
	/* Leave both descriptors open across an exec (heaptool record --
	 * CMD: the program an exec makes of this process records on); else
	 * they are closed at one. */
	int across_exec;
	/* The recorder's process (heaptool record), or 0: a recording whose
	 * recorder is gone (killed, its terminal closed) stops by itself,
	 * complete, rather than run on unbounded with no one to end it. */
	pid_t owner;
};

/* Start recording into cfg->fd (closed by the recorder whatever happens),
 * emptied first: the recorder's from here on.
 * From the agent's thread or the constructor, guarded.  Returns 0, EBUSY
 * (a recording runs), or an errno value. */
int ht_record_start(const struct ht_record_cfg *cfg);

/* Stop the recording (if one runs), as state (HT_RECORD_DONE): wait for
 * the threads inside the recorder, write everything, END, close the
 * file.  Returns once it is done. */
void ht_record_stop(uint32_t state);

/* Is a recording running? */
int ht_record_running(void);

/* The current or last recording's figures. */
void ht_record_stat(struct ht_recstat *st);

/* The agent's thread: drain what the threads published, stop a
 * recording that reached its limit or failed; returns when to come back
 * (CLOCK_MONOTONIC ms, UINT64_MAX while none runs).  A thread that waits
 * for a buffer makes the descriptor readable: poll it, then clear it. */
uint64_t ht_record_tick(uint64_t now_ms);
int ht_record_wake_fd(void);
void ht_record_wake_clear(void);

/* In a fork's child: the recording is the parent's; forget it (its file
 * closed here, its memory given back). */
void ht_record_fork_child(void);

/* The hooks' side.  fn: the hook's index (src/allocnames.h's list);
 * a: the hook's arguments (NULL: only the size), for the alignment. */
void ht_rec_alloc(unsigned fn, void *p, size_t n, const uintptr_t *a,
    uintptr_t caller);
/* A free of p; a: the arguments (sized frees: the size is a[1]). */
void ht_rec_free(unsigned fn, void *p, const uintptr_t *a, uintptr_t caller);
/* Before a reallocation of old: its identity (0: none known), which the
 * reallocation's event then names. */
uint64_t ht_rec_take(void *old);
/* After it: p the new block (NULL: failed, or freed for n == 0);
 * freed_on_fail: a failure freed old (reallocf). */
void ht_rec_realloc(unsigned fn, void *old, uint64_t id, void *p, size_t n,
    int freed_on_fail, uintptr_t caller);

#endif
