/*
 * The files the agent writes (dumps, launch mode's profile): made where
 * nobody can see or open them, written, then given their name whole, so
 * that a reader never finds half a file and a process killed while writing
 * (the OOM killer, SIGKILL) leaves nothing behind.
 *
 * The file is an O_TMPFILE in its directory: an inode with no name, freed
 * by the kernel if the process dies, named by linkat() when complete.
 * Where the file system has no O_TMPFILE, or the process could not link
 * one (no CAP_DAC_READ_SEARCH and no /proc), it is created under a name no
 * one can guess (the final name, ".tmp." and 16 hex digits from
 * getrandom), O_CREAT|O_EXCL|O_NOFOLLOW, and renamed; only then may a kill
 * leave that temporary file.  Either way it is mode 0600, and neither the
 * temporary nor the final name is ever reached through a symbolic link:
 * linkat and rename do not follow one, and a name already taken is never
 * replaced unless the caller asks.
 *
 * No allocation, no lock: a failure dump runs this inside a malloc hook.
 */
#ifndef HT_FILE_H
#define HT_FILE_H

#include <limits.h>

struct ht_file {
	int fd;	   /* open for writing */
	int dirfd; /* its directory, the caller's */
	/* The temporary name in dirfd, "" for an O_TMPFILE. */
	char tmp[NAME_MAX + 1];
};

/*
 * Create f, a new empty file in the directory dirfd (which may be an O_PATH
 * descriptor, and must stay open until ht_file_publish or ht_file_discard),
 * for a file to be named name.  Returns 0, or -1 with errno set.
 */
int ht_file_create(struct ht_file *f, int dirfd, const char *name);

/*
 * Give the written file f the name name in its directory and close it.  If
 * the name is taken (by anything: a file, a directory, a symbolic link),
 * replace it only if replace; else fail with EEXIST and keep f, so that the
 * caller may try another name.  Returns 0, or -1 with errno set (f is then
 * still open, except after a failed close(2), which may mean data was
 * lost: ht_file_discard it).
 */
int ht_file_publish(struct ht_file *f, const char *name, int replace);

/* Close f and remove its temporary name, if it has one.  Keeps errno. */
void ht_file_discard(struct ht_file *f);

#endif
