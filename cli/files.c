/*
 * Files of the CLI: the per-user state directory (the current target,
 * baselines) and files written atomically (a temporary file created with
 * mode 0600 beside the target, then renamed).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

/* The state file's directory; with create, made (mode 0700) if missing.
 * Returns 0, or -1 with errno. */
int
ht_state_dir(char *buf, size_t len, int create)
{
	const char *base;
	struct passwd *pw;
	char *p;
	int n, last;

	base = getenv("XDG_STATE_HOME");
	/* The XDG spec: a relative value is invalid and ignored. */
	if (base != NULL && base[0] == '/')
		n = snprintf(buf, len, "%s/heaptool", base);
	else {
		base = getenv("HOME");
		if ((base == NULL || base[0] != '/') &&
		    (pw = getpwuid(getuid())) != NULL)
			base = pw->pw_dir;
		if (base == NULL || base[0] != '/') {
			errno = ENOENT;
			return -1;
		}
		n = snprintf(buf, len, "%s/.local/state/heaptool", base);
	}
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!create)
		return 0;
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		last = *p == '\0';
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		if (last)
			return 0;
		*p = '/';
	}
}

int
ht_write_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *
ht_not_regular(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return NULL;
	if (S_ISCHR(st.st_mode))
		return "a character device";
	if (S_ISBLK(st.st_mode))
		return "a block device";
	if (S_ISDIR(st.st_mode))
		return "a directory";
	if (S_ISLNK(st.st_mode))
		return "a symbolic link";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO";
	if (S_ISSOCK(st.st_mode))
		return "a socket";
	return "not a regular file";
}

/* Write buf to path through a temporary file in its directory, renamed
 * over it once complete: a reader never sees a partial profile.  Never
 * over what is not a regular file (ht_not_regular): EEXIST. */
int
ht_write_atomic(const char *path, const uint8_t *buf, size_t len)
{
	char tmp[PATH_MAX];
	int fd, e;

	if (ht_not_regular(path) != NULL) {
		errno = EEXIST;
		return -1;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* mkostemp creates the file with mode 0600. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	if (ht_write_all(fd, buf, len) != 0 || fsync(fd) != 0)
		goto out_unlink;
	if (close(fd) != 0) {
		fd = -1;
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto out_unlink;
	return 0;

out_unlink:
	e = errno;
	if (fd != -1)
		close(fd);
	unlink(tmp);
	errno = e;
	return -1;
}
