/*
 * The final profiles of attached processes that are gone: the agent writes
 * DIR/final.PID.START.heap as an attached process ends (agent/final.h),
 * DIR being the target's own per-user state directory as its environment
 * names it ($XDG_STATE_HOME/heaptool, ~/.local/state/heaptool, else
 * /var/tmp/heaptool-UID), and START its start time in clock ticks after
 * boot (field 22 of /proc/PID/stat).
 *
 * A heaptool of another user or with another environment (root profiling
 * a service) would not know DIR, so heaptool start remembers the directory
 * the agent reported, in this user's state directory (files.h), as
 * final.PID.START.where.  A gone pid's final profile is looked for in the
 * directories remembered (for any process: the children that start
 * --follow-forks profiles write where their parent does), then in this
 * user's state directory, then in /var/tmp/heaptool-EUID; the latest file of that pid (by modification
 * time) is the one, or with START known only that process's.  A directory
 * inside the target's container (another mount namespace) cannot be
 * reached once the target is gone.
 */
#ifndef HT_FINALS_H
#define HT_FINALS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Remember dir as where the final profile of pid, started at start, goes,
 * and forget what was remembered of processes that are gone and whose
 * final profile is gone too.  Returns 0, or -1 with errno. */
int ht_final_remember(pid_t pid, uint64_t start, const char *dir);

/* The final profile of pid (of the process started at start; 0: any) into
 * path[len], and its modification time into *when.  Returns 0, or -1 if
 * there is none. */
int
ht_final_find(pid_t pid, uint64_t start, char *path, size_t len, time_t *when);

#endif
