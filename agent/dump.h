/*
 * Writing the profile (src/profile.h) from inside the target: to a file
 * descriptor, or to a path atomically (a temporary file in the same
 * directory, created exclusively with mode 0600 and without following
 * symlinks, then renamed).  No allocation: the encoding buffer is mapped by
 * ht_dump_init(), early, so a dump still works when memory has run out.
 */
#ifndef HT_DUMP_H
#define HT_DUMP_H

#include <stdint.h>

/* Map the encoding buffer.  Returns 0 or -1. */
int	ht_dump_init(void);
/* Write the current profile to fd.  Takes ht_agent_lock: call with the
 * thread's guard set (see sampler.h) and without the lock.  flags are
 * HT_META_* bits.  Returns 0, or -1 with errno set. */
int	ht_dump_fd(int fd, uint32_t flags);
/* Write the current profile to path, atomically.  Returns 0 or -1. */
int	ht_dump_path(const char *path, uint32_t flags);

#endif
