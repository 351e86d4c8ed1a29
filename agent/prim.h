/*
 * The agent's OS primitives: its reads of /proc/self and the system calls
 * behind a thread's identity.  The rest of the agent asks here rather than
 * calling the kernel for these itself.
 *
 * None of them allocates or takes a lock, so any of them may run inside a
 * hook, under ht_lock_global, or in a dl_iterate_phdr callback.  Those that
 * read a file make several system calls: callers keep them out of
 * ht_lock_global where they can, since every allocating thread may be
 * waiting for it.
 */
#ifndef HT_PRIM_H
#define HT_PRIM_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* The page size (AT_PAGESZ; 4096 if the auxiliary vector has none). */
size_t		ht_prim_page_size(void);

/* The calling thread's kernel id. */
pid_t		ht_prim_tid(void);

/* The executable's path (/proc/self/exe) into buf, NUL-terminated and
 * truncated to len - 1 bytes; "" on failure. */
void		ht_prim_exe_path(char *buf, size_t len);

/*
 * Read path line by line through buf[len] (no line may be longer), calling
 * line(arg, start, end) for each line that ends in a newline, end at the
 * newline.  Returns 0 at the end of the file, or -1 if it cannot be read,
 * a line does not fit buf, or line returned nonzero.
 */
int		ht_prim_read_lines(const char *path, char *buf, size_t len,
		    int (*line)(void *arg, const char *start, const char *end),
		    void *arg);

#endif
