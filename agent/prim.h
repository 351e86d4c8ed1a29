/*
 * The agent's OS primitives: its clocks, its reads of /proc/self and the
 * system calls behind a thread's identity.  The rest of the agent asks
 * here rather than calling the kernel for these itself.
 *
 * None of them allocates or takes a lock, so any of them may run inside a
 * hook, under ht_lock_global, or in a dl_iterate_phdr callback.  Those that
 * read a file make several system calls: callers keep them out of
 * ht_lock_global where they can (RSS checks), since every allocating thread
 * may be waiting for it.
 */
#ifndef HT_PRIM_H
#define HT_PRIM_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* CLOCK_REALTIME in nanoseconds: the times of the profile. */
uint64_t ht_prim_now_ns(void);
/* CLOCK_MONOTONIC in milliseconds: deadlines and rate limits. */
uint64_t ht_prim_mono_ms(void);
/* The same clock at the kernel's tick (a few ms behind at most), cheaper
 * to read: for checks made at every sample. */
uint64_t ht_prim_coarse_ms(void);

/* The page size (AT_PAGESZ; 4096 if the auxiliary vector has none). */
size_t ht_prim_page_size(void);

/* The calling thread's kernel id, and its name (PR_GET_NAME) into
 * name[16], NUL-terminated; "" if the kernel will not say. */
pid_t ht_prim_tid(void);
void ht_prim_thread_name(char name[16]);

/* Read the small file path (a /proc file) into buf, NUL-terminated, at
 * most len - 1 bytes in one read; "" on failure. */
void ht_prim_read_proc(const char *path, char *buf, size_t len);
/*
 * "/proc/thread-self/NAME" into buf[len] ("" if it does not fit): the
 * calling thread's view of its process, whose maps, exe and statm are
 * there even when the main thread has called pthread_exit (then
 * /proc/self/maps is empty and /proc/self/exe unreadable).
 * "/proc/self/NAME" before Linux 3.17, which has no thread-self.
 */
void ht_prim_self_path(char *buf, size_t len, const char *name);
/* The start time of process pid (/proc/PID/stat's starttime, in clock
 * ticks since boot): with its pid, what names a process for good, since
 * a pid is reused.  0 if the process is gone, a zombie, or /proc will not
 * say. */
uint64_t ht_prim_proc_start(pid_t pid);
/* The process's command name (/proc/self/comm, without its newline) into
 * buf, as ht_prim_read_proc. */
void ht_prim_command(char *buf, size_t len);
/* The process's RSS in bytes (statm); 0 if unknown. */
uint64_t ht_prim_rss_bytes(void);
/*
 * The memory this process may still take, in bytes: the lower of the
 * system's MemAvailable (/proc/meminfo) and, under a cgroup v2 memory limit,
 * that limit less the cgroup's current use.  0 when neither can be read.
 * Several files are read: for rare decisions only (a table's growth).
 */
uint64_t ht_prim_mem_available(void);
/* The executable's path (the exe link; without /proc, AT_EXECFN if it is
 * absolute) into buf, NUL-terminated and truncated to len - 1 bytes; ""
 * on failure. */
void ht_prim_exe_path(char *buf, size_t len);

/*
 * Read path line by line through buf[len] (no line may be longer), calling
 * line(arg, start, end) for each line that ends in a newline, end at the
 * newline.  Returns 0 at the end of the file, or -1 if it cannot be read,
 * a line does not fit buf, or line returned nonzero.
 */
int ht_prim_read_lines(const char *path, char *buf, size_t len,
    int (*line)(void *arg, const char *start, const char *end), void *arg);

/* For lock.h: sleep while *word is val (a private futex: the word is this
 * process's), for a millisecond at most, or return at once when it is not;
 * a wake or a signal may end the sleep early.  And wake one thread sleeping on word.  Both leave errno
 * as it was (they run inside hooks, free's among them). */
void ht_prim_futex_wait(int *word, int val);
void ht_prim_futex_wake(int *word);

#endif
