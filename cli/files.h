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

#endif
