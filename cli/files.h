/*
 * Files of the CLI: the per-user state directory and atomic writes.
 */
#ifndef HT_FILES_H
#define HT_FILES_H

#include <stddef.h>
#include <stdint.h>

/* ${XDG_STATE_HOME:-$HOME/.local/state}/heaptool into buf; with create,
 * made (mode 0700) if missing.  Returns 0, or -1 with errno. */
int ht_state_dir(char *buf, size_t len, int create);

/* Write all len bytes to fd, retrying short writes and EINTR.  Returns 0,
 * or -1 with errno. */
int ht_write_all(int fd, const uint8_t *buf, size_t len);

/* Write len bytes to path atomically: a temporary file (mode 0600) in the
 * same directory, written, synced, renamed over path.  Returns 0, or -1
 * with errno (nothing left behind). */
int ht_write_atomic(const char *path, const uint8_t *buf, size_t len);

/* What path is when it exists and is not a regular file ("a character
 * device", "a directory", "a symbolic link", ...), or NULL (a regular
 * file, or nothing there).  A profile is written beside its path and
 * renamed over it: over /dev/null, as root, that would put a file where
 * the device was, so the commands refuse such a path first. */
const char *ht_not_regular(const char *path);

#endif
