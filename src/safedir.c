/*
 * Opening a directory that nobody else controls (safedir.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "safedir.h"

#define DIR_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)

/* Fill *why, close fd (if any) and fail with err. */
static int
refuse(struct ht_safedir_why *why, enum ht_safedir_fault fault, int err,
    size_t len, int fd)
{
	why->fault = fault;
	why->err = err;
	why->len = len;
	if (fd >= 0)
		close(fd);
	errno = err;
	return -1;
}

/* Why openat(fd, name, O_NOFOLLOW|O_DIRECTORY) failed with err.  On a
 * symbolic link the kernel says ENOTDIR (O_PATH opens the link itself,
 * which O_DIRECTORY then refuses); older ones said ELOOP. */
static enum ht_safedir_fault
lookup_fault(int fd, const char *name, int err)
{
	struct stat st;

	if (err == ELOOP)
		return HT_SAFEDIR_SYMLINK;
	if (err != ENOTDIR)
		return HT_SAFEDIR_LOOKUP;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return HT_SAFEDIR_SYMLINK;
	return HT_SAFEDIR_NOTDIR;
}

int
ht_safedir_open(int rootfd, const char *path, size_t len, uid_t uid, int flags,
    struct ht_safedir_why *why)
{
	char name[NAME_MAX + 1];
	enum ht_safedir_fault f;
	size_t i = 0, n, depth = 0;
	struct stat st;
	int fd, next, e;

	memset(why, 0, sizeof(*why));
	if (len == 0 || path[0] != '/')
		return refuse(why, HT_SAFEDIR_RELATIVE, EINVAL, 0, -1);
	fd = rootfd >= 0 ? fcntl(rootfd, F_DUPFD_CLOEXEC, 0) :
			   open("/", DIR_FLAGS);
	if (fd < 0)
		return refuse(why, HT_SAFEDIR_LOOKUP, errno, 1, -1);
	for (;;) {
		while (i < len && path[i] == '/')
			i++;
		for (n = 0; i + n < len && path[i + n] != '/'; n++)
			;
		if (n == 0)
			break;
		if (n > NAME_MAX)
			return refuse(why, HT_SAFEDIR_TOOLONG, ENAMETOOLONG,
			    i + n, fd);
		memcpy(name, path + i, n);
		name[n] = '\0';
		i += n;
		if (strcmp(name, ".") == 0)
			continue;
		/* At the root, ".." is the root, as the kernel has it;
		 * counting keeps a walk from rootfd inside it. */
		if (strcmp(name, "..") == 0) {
			if (depth == 0)
				continue;
			depth--;
		} else
			depth++;
		next = openat(fd, name, DIR_FLAGS | O_NOFOLLOW);
		/* Made where missing, in the directory just checked to be
		 * what the path says: mkdirat never follows a link either. */
		if (next < 0 && errno == ENOENT &&
		    (flags & HT_SAFEDIR_CREATE) != 0 &&
		    (mkdirat(fd, name, 0700) == 0 || errno == EEXIST))
			next = openat(fd, name, DIR_FLAGS | O_NOFOLLOW);
		if (next < 0) {
			e = errno;
			f = lookup_fault(fd, name, e);
			if (f == HT_SAFEDIR_SYMLINK)
				e = ELOOP;
			else if (f == HT_SAFEDIR_NOTDIR)
				e = ENOTDIR;
			return refuse(why, f, e, i, fd);
		}
		close(fd);
		fd = next;
	}
	if (fstat(fd, &st) != 0)
		return refuse(why, HT_SAFEDIR_LOOKUP, errno, len, fd);
	why->owner = st.st_uid;
	why->mode = st.st_mode;
	/* Another owner could rename our files away or swap the directory's
	 * contents; so could anyone who may write in a directory that is
	 * not sticky. */
	if (st.st_uid != uid && st.st_uid != 0)
		return refuse(why, HT_SAFEDIR_OWNER, EPERM, len, fd);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st.st_mode & S_ISVTX) == 0)
		return refuse(why, HT_SAFEDIR_SHARED, EPERM, len, fd);
	/* "." from the descriptor: the directory itself, not the path. */
	if ((flags & HT_SAFEDIR_WRITE) != 0 &&
	    faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0)
		return refuse(why, HT_SAFEDIR_ACCESS, errno, len, fd);
	return fd;
}
