/*
 * A snapshot of the session: the tables, the module history and the session
 * metadata encoded in the profile format (src/profile.h), written to a file
 * descriptor, or to a file that nobody sees until it is whole (file.h).
 * This is what a live report sends and what every dump file holds.  No allocation: the encoding buffer is mapped by
 * ht_snapshot_init(), early, so a snapshot still works when memory has run
 * out.
 */
#ifndef HT_SNAPSHOT_H
#define HT_SNAPSHOT_H

#include <sys/types.h>

#include <stdint.h>

#include "file.h"

/* Map the encoding buffer.  Returns 0 or -1.  Idempotent. */
int ht_snapshot_init(void);

/* The launched process (heaptool run), set by init.c before its session
 * starts: its snapshots carry HT_META_LAUNCHED, those of its followed
 * children (another pid) do not.  0 in attach mode. */
extern pid_t ht_snapshot_launched;

/* Write the current profile to fd.  Takes ht_lock_global: call with the
 * thread's guard set (guard.h) and without the lock.  flags are HT_META_*
 * bits; sites below threshold bytes (0: none), in use and allocated, are
 * folded into one SITE record with no frames, the totals unchanged.
 * Returns 0, or -1 with errno set (ENOMEM before ht_snapshot_init; ESRCH
 * once a detach has released the profile). */
int ht_snapshot_fd(int fd, uint32_t flags, uint64_t threshold);

/*
 * For the final profile (final.h): as ht_snapshot_fd with no threshold,
 * sig in META, and *locked 1 while ht_lock_global is held, so that a
 * caller that leaves by siglongjmp (a fault while encoding) can release
 * it.  With in_signal, fit for a signal handler of a thread that is not
 * inside the agent (its guard clear): no call into the allocator (META's
 * allocator figures stay 0, unknown), and the lock waited for at most
 * wait_ms, then EDEADLK.  Returns 0, or -1 with errno set.
 */
int ht_snapshot_fd_final(int fd, uint32_t flags, uint32_t sig, int in_signal,
    uint64_t wait_ms, volatile int *locked);

/* Write the current profile, as ht_snapshot_fd, into *f, a new file in the
 * directory dirfd that is to be named name (ht_file_create); then the
 * caller names it (ht_file_publish) or discards it.  Returns 0, or -1 with
 * errno set and nothing left of f. */
int ht_snapshot_file(struct ht_file *f, int dirfd, const char *name,
    uint32_t flags, uint64_t threshold);

/* Write the current profile to path, as ht_snapshot_fd, replacing whatever
 * path names only once the file is whole; mode 0600.  The directory is
 * reached as path says (the caller chose it), the last component is never
 * followed.  Returns 0 or -1 with errno set. */
int ht_snapshot_path(const char *path, uint32_t flags, uint64_t threshold);

#endif
