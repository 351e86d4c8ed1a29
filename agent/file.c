/*
 * Files created unseen and named whole (file.h).
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h> /* renameat2 */
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "prim.h"

#define TMP_SUFFIX ".tmp."
#define TMP_HEX	   16
#define TMP_TRIES  16
#define FD_PATH	   "/proc/self/fd/"

/* "/proc/self/fd/N" into buf[sizeof(FD_PATH) + 12]. */
static void
fd_path(char *buf, int fd)
{
	char digits[12];
	size_t n = 0, len = sizeof(FD_PATH) - 1;
	unsigned v = (unsigned)fd;

	memcpy(buf, FD_PATH, len);
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len] = '\0';
}

/* Name into out[NAME_MAX + 1], cut to leave room, then ".tmp." and 16 hex
 * digits.  Without getrandom's bytes (no entropy yet this early in boot)
 * the digits are guessable; O_EXCL and O_NOFOLLOW still keep a squatter
 * from anything worse than making us pick again. */
static void
tmp_name(char *out, const char *name)
{
	static uint64_t counter;
	const char *hex = "0123456789abcdef";
	size_t len = strlen(name),
	       max = NAME_MAX - (sizeof(TMP_SUFFIX) - 1) - TMP_HEX;
	uint64_t x;
	int i;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x))
		x = ht_prim_now_ns() ^ ((uint64_t)getpid() << 40) ^
		    (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) *
			0x9e3779b97f4a7c15ull);
	if (len > max)
		len = max;
	memcpy(out, name, len);
	memcpy(out + len, TMP_SUFFIX, sizeof(TMP_SUFFIX) - 1);
	len += sizeof(TMP_SUFFIX) - 1;
	for (i = 0; i < TMP_HEX; i++, x >>= 4)
		out[len++] = hex[x & 0xf];
	out[len] = '\0';
}

/* An O_TMPFILE can be named only through its /proc/self/fd link (or with
 * CAP_DAC_READ_SEARCH, which a process cannot cheaply tell it has): is
 * that link there, and is it fd's file? */
static int
linkable(int fd)
{
	char path[sizeof(FD_PATH) + 12];
	struct stat a, b;

	fd_path(path, fd);
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Give the O_TMPFILE f its first name: never replaces (EEXIST). */
static int
link_tmpfile(struct ht_file *f, const char *name)
{
	char path[sizeof(FD_PATH) + 12];

	fd_path(path, f->fd);
	return linkat(AT_FDCWD, path, f->dirfd, name, AT_SYMLINK_FOLLOW);
}

int
ht_file_create(struct ht_file *f, int dirfd, const char *name)
{
	struct stat st;
	int i;

	f->dirfd = dirfd;
	f->tmp[0] = '\0';
	f->fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (f->fd >= 0) {
		if (linkable(f->fd))
			return 0;
		close(f->fd);
	} else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		/* EISDIR, EINVAL: a kernel before O_TMPFILE.  In a directory
		 * removed since it was opened, Linux says EPERM: the true
		 * cause, for the user who reads it in heaptool status, is
		 * that the directory is gone. */
		if (errno == EPERM && fstat(dirfd, &st) == 0 &&
		    st.st_nlink == 0)
			errno = ENOENT;
		return -1;
	}
	for (i = 0; i < TMP_TRIES; i++) {
		tmp_name(f->tmp, name);
		f->fd = openat(dirfd, f->tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	f->tmp[0] = '\0';
	return -1;
}

/* Rename f's temporary name to name without replacing anything: renameat2
 * where the file system has RENAME_NOREPLACE (NFS has not), else a hard
 * link, which fails on a taken name too. */
static int
rename_noreplace(struct ht_file *f, const char *name)
{
	if (renameat2(f->dirfd, f->tmp, f->dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (linkat(f->dirfd, f->tmp, f->dirfd, name, 0) != 0)
		return -1;
	(void)unlinkat(f->dirfd, f->tmp, 0);
	return 0;
}

int
ht_file_publish(struct ht_file *f, const char *name, int replace)
{
	struct stat st;
	int i, rc, e;

	/* Replace a file, never what is not one: renamed over /dev/null, a
	 * profile would put a file where the device was (heaptool run
	 * refuses such a path first; this is for a name that became one
	 * while the program ran). */
	if (replace && fstatat(f->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	if (f->tmp[0] == '\0' && !replace)
		rc = link_tmpfile(f, name);
	else {
		/* linkat cannot replace a name: an O_TMPFILE takes a
		 * temporary one first, to rename over the final one. */
		for (i = 0; f->tmp[0] == '\0' && i < TMP_TRIES; i++) {
			tmp_name(f->tmp, name);
			if (link_tmpfile(f, f->tmp) == 0)
				break;
			e = errno;
			f->tmp[0] = '\0';
			if (e != EEXIST) {
				errno = e;
				return -1;
			}
		}
		if (f->tmp[0] == '\0') {
			errno = EEXIST;
			return -1;
		}
		rc = replace ? renameat(f->dirfd, f->tmp, f->dirfd, name) :
			       rename_noreplace(f, name);
		if (rc == 0)
			f->tmp[0] = '\0';
	}
	if (rc != 0)
		return -1;
	/* close() is where some file systems (NFS) report a failed write:
	 * then the file is not whole, and must not keep the name it just
	 * took (in a dump directory, where no one else may rename or remove
	 * our files, the name is still ours). */
	rc = close(f->fd);
	f->fd = -1;
	if (rc != 0) {
		e = errno;
		(void)unlinkat(f->dirfd, name, 0);
		errno = e;
		return -1;
	}
	return 0;
}

void
ht_file_discard(struct ht_file *f)
{
	int saved = errno;

	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp[0] != '\0')
		(void)unlinkat(f->dirfd, f->tmp, 0);
	f->fd = -1;
	f->tmp[0] = '\0';
	errno = saved;
}
