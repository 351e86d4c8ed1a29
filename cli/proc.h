/*
 * What /proc says about a process and its threads: the one reader of
 * /proc/PID/stat, status and maps and of the task directory, for the
 * commands, the injector and the symbolizer.  Each file's traps are handled
 * here once: a command name in stat may hold spaces and parentheses, a path
 * in maps may hold spaces and ends in " (deleted)" once its file is gone.
 *
 * The files that belong to the process as a whole (its maps, memory, root,
 * descriptors, map_files, network and namespaces) are read through a live
 * thread of it: a leader that called pthread_exit is a zombie thread whose
 * /proc/PID/root, maps, mem, fd, map_files, net and ns went with its mm,
 * files and fs, while its other threads run on.  /proc/TID/ of any thread
 * can be looked up by name (proc(5)), and unlike /proc/PID/task/TID/ it
 * has map_files too.
 *
 * Everything read is a snapshot: the process may change or exit right
 * after.  Functions that fail return -1 with errno: ENOENT or ESRCH for no
 * such process or thread, EACCES or EPERM for one we may not look at.
 */
#ifndef HT_PROC_H
#define HT_PROC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* What /proc says about a process. */
struct ht_proc {
	/* Field 3 of stat: R S D T t Z X ...; a zombie leader whose other
	 * threads live on has the state of one of them. */
	char state;
	uint64_t start_time; /* field 22: clock ticks after boot */
	pid_t tracer;	     /* TracerPid, 0 if none */
	pid_t nspid;	     /* pid in its own namespace */
	uid_t uid;	     /* real uid */
	uid_t fsuid;	     /* filesystem uid: opens files as it */
	gid_t fsgid;
};

/* Fill *p for pid.  Returns 0, or -1 with errno (ENOENT: no such
 * process; anything else: /proc unreadable). */
int ht_proc_read(pid_t pid, struct ht_proc *p);

/*
 * Read the small file /proc/PID/NAME (tid 0) or /proc/PID/task/TID/NAME,
 * or /proc/NAME when pid is 0, into buf, NUL-terminated and cut at size - 1
 * bytes.  Returns its length, or -1 with errno.
 */
ssize_t
ht_proc_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size);

/*
 * The value of "key:" in the text of a status file, without its leading
 * blanks, up to the end of its line, into out (cut at outlen - 1 bytes).
 * Returns 0, or -1 if there is no such key.
 */
int
ht_proc_field(const char *status, const char *key, char *out, size_t outlen);

/* The state letter of thread tid (field 3 of its stat), 0 if it is gone. */
char ht_proc_task_state(pid_t pid, pid_t tid);

/*
 * Call fn(arg, tid, state) for each thread of pid that has not been reaped
 * (state as ht_proc_task_state; zombies too).  Stops at the first fn that
 * returns non-zero and returns its value; returns 0 after the last thread,
 * or -1 with errno if the task directory cannot be read.
 */
int ht_proc_tasks(pid_t pid, int (*fn)(void *, pid_t, char), void *arg);

/* The number of the system call thread tid is blocked in (first field of
 * task/TID/syscall), or -1 if it runs or cannot be read. */
long ht_proc_task_syscall(pid_t pid, pid_t tid);

/*
 * A live thread of process pid, whose /proc/TID/ stands for the process
 * (above): pid itself while its leader lives, else one of its other
 * threads.  Returns the thread's id, or -1 with errno (ENOENT: no such
 * process, or none of its threads is alive).
 */
pid_t ht_proc_live_task(pid_t pid);

/*
 * The path of name (e.g. "maps", "root", "map_files/LO-HI") in the /proc
 * directory of pid's live thread into buf.  Returns 0, or -1 with errno
 * (ENAMETOOLONG, or as ht_proc_live_task).
 */
int ht_proc_path(pid_t pid, const char *name, char *buf, size_t len);

/*
 * The target's root directory as our /proc shows paths: the target of the
 * /proc/TID/root link.  The kernel writes it, as it writes the paths of
 * /proc/PID/maps, relative to the reader's root, or to the root of the
 * target's mount namespace when ours cannot reach it; so a path of maps
 * under the target's root begins with it ("/srv/jail/lib/libc.so.6" for a
 * process chrooted in /srv/jail, which sees "/lib/libc.so.6").  Returns 0,
 * or -1 with errno.
 */
int ht_proc_root_link(pid_t pid, char *buf, size_t len);

/*
 * The path, inside the target's root, of the file at path in its maps:
 * path without the root link (see ht_proc_root_link) that begins it, as a
 * pointer into path; NULL when the file lies outside the target's root (it
 * was mapped before a chroot): such a file cannot be named in the root.
 */
const char *ht_proc_in_root(const char *rootlink, const char *path);

/* One line of /proc/PID/maps. */
struct ht_proc_map {
	uint64_t lo, hi; /* [lo, hi) */
	uint64_t offset; /* of lo in the file */
	uint64_t inode;	 /* 0: not a file */
	char perms[5];	 /* "r-xp" */
	int deleted;	 /* the file was deleted or replaced */
	/* The file, without " (deleted)"; or [stack], [heap], [vdso]...;
	 * "" for anonymous memory.  Valid during the call only. */
	const char *path;
};

/*
 * Call fn(arg, map) for each mapping of pid, in address order.  Stops at
 * the first fn that returns non-zero and returns its value; returns 0
 * after the last mapping, or -1 with errno if the maps cannot be read.
 */
int ht_proc_maps(pid_t pid, int (*fn)(void *, const struct ht_proc_map *),
    void *arg);

/*
 * Is a file whose basename satisfies match (non-zero) mapped in pid?
 * Returns 1 or 0, also 0 when the maps cannot be read.
 */
int ht_proc_mapped(pid_t pid, int (*match)(const char *base));

/*
 * The inode of the listening Unix socket bound to the abstract name
 * "\0name" in pid's network namespace (/proc/PID/net/unix).  Returns 0,
 * or -1 with errno (ENOENT: no such listener).
 */
int ht_proc_unix_listener(pid_t pid, const char *name, uint64_t *inode);

/*
 * Is the socket of that inode one of pid's open descriptors?  Returns 1 or
 * 0, or -1 with errno if the descriptors cannot be read.
 */
int ht_proc_has_socket(pid_t pid, uint64_t inode);

#endif
