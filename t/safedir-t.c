/*
 * src/safedir.c (safedir.h): the directories a dump may go to, in a tree
 * made here:
 *   - a private directory, a sticky one that anyone may write in (as
 *     /tmp), and "/" are taken, and the descriptor names the directory;
 *   - "." and ".." are taken as written, and ".." stays at the root, also
 *     from a rootfd;
 *   - a symbolic link anywhere on the path (the last component, one in the
 *     middle, a link to a directory of our own) is refused with ELOOP and
 *     the path up to it;
 *   - a file on the way: ENOTDIR; a missing component: ENOENT, with the
 *     path up to it;
 *   - a directory others (or its group) may write in, not sticky: EPERM;
 *   - as root, a directory of another user: EPERM, and its owner given;
 *   - a relative path: EINVAL; a component above NAME_MAX: ENAMETOOLONG;
 *   - the path need not end in NUL (only len bytes are read);
 *   - with HT_SAFEDIR_WRITE, a directory we may not write in: EACCES (not
 *     as root, who may);
 *   - with HT_SAFEDIR_CREATE, the missing components are made, mode 0700,
 *     and the last is taken; but nothing is made through a symbolic link,
 *     below a file, or in a directory others may write in.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "safedir.h"

static char top[PATH_MAX];

/* Open top + rel for uid with flags: the fault (0 if taken), errno in *e
 * and why in *w. */
static int
try(const char *rel, uid_t uid, int flags, int *e, struct ht_safedir_why *w)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s%s", top, rel);
	errno = 0;
	fd = ht_safedir_open(-1, path, strlen(path), uid, flags, w);
	*e = errno;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return (int)w->fault;
}

/* Is the directory of fd top + rel? */
static int
names(int fd, const char *rel)
{
	char path[PATH_MAX * 2];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s%s", top, rel);
	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void
mk(const char *rel, mode_t mode)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", top, rel);
	if (mkdir(path, 0700) != 0 || chmod(path, mode) != 0)
		bail("%s: %s", path, strerror(errno));
}

static void
ln(const char *to, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", top, rel);
	if (symlink(to, path) != 0)
		bail("%s: %s", path, strerror(errno));
}

static void
refused(const char *rel, int flags, enum ht_safedir_fault fault, int err,
    const char *at, const char *what)
{
	struct ht_safedir_why w;
	char path[PATH_MAX * 2];
	size_t n = strlen(top);
	int e, f;

	snprintf(path, sizeof(path), "%s%s", top, rel);
	f = try(rel, geteuid(), flags, &e, &w);
	if (!ok(f == (int)fault && e == err && w.err == err &&
		    w.len == n + strlen(at),
		"%s: %s, at %s", what, strerror(err), at))
		diag("fault %d (want %d), %s, at %.*s", f, fault, strerror(e),
		    (int)(w.len > n && w.len <= strlen(path) ? w.len - n : 0),
		    path + n);
}

/* Remove the tree main made: what is in it, deepest first, then it. */
static void
cleanup(void)
{
	static const char *const made[] = { "/priv/sub", "/new/a/b", "/new/a",
		"/new", "/priv/made", "/priv", "/sticky", "/shared", "/group",
		"/ro", "/theirs", "/link", "/up", "/file", "" };
	char path[PATH_MAX * 2];
	size_t i;

	for (i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", top, made[i]);
		if (rmdir(path) != 0 && errno == ENOTDIR)
			(void)unlink(path);
	}
}

/* The refusals of the tree main makes, for any user. */
static const struct {
	const char *rel, *at, *what;
	enum ht_safedir_fault fault;
	int err;
} refusals[] = {
	{ "/link", "/link", "a link to our own directory", HT_SAFEDIR_SYMLINK,
	    ELOOP },
	{ "/link/sub", "/link", "a link in the middle", HT_SAFEDIR_SYMLINK,
	    ELOOP },
	{ "/up/priv", "/up", "a link to the tree's own top", HT_SAFEDIR_SYMLINK,
	    ELOOP },
	{ "/file/x", "/file", "a file on the way", HT_SAFEDIR_NOTDIR, ENOTDIR },
	{ "/none/x", "/none", "a missing component", HT_SAFEDIR_LOOKUP,
	    ENOENT },
	{ "/shared", "/shared", "writable by others, not sticky",
	    HT_SAFEDIR_SHARED, EPERM },
	{ "/group", "/group", "writable by its group, not sticky",
	    HT_SAFEDIR_SHARED, EPERM },
};

int
main(void)
{
	struct ht_safedir_why w;
	struct stat st, root;
	size_t i;
	char path[PATH_MAX * 2], longname[NAME_MAX + 2];
	int fd, e, rootfd;

	plan(0);
	test_timeout(60);
	test_tmpdir("safedir-t", top);
	mk("/priv", 0700);
	mk("/priv/sub", 0755);
	mk("/sticky", 01777);
	mk("/shared", 0777);
	mk("/group", 0775);
	mk("/ro", 0500);
	ln("priv", "/link");
	ln(top, "/up");
	snprintf(path, sizeof(path), "%s/file", top);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) < 0)
		bail("%s: %s", path, strerror(errno));
	close(fd);

	snprintf(path, sizeof(path), "%s/priv", top);
	fd = ht_safedir_open(-1, path, strlen(path), geteuid(), 0, &w);
	ok(names(fd, "/priv") && w.fault == HT_SAFEDIR_OK,
	    "a private directory is taken, and the descriptor names it");
	ok(fd >= 0 && (fcntl(fd, F_GETFL) & O_PATH) != 0 &&
		(fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0,
	    "an O_PATH descriptor, close-on-exec");
	close(fd);
	is_int(0, try("/sticky", geteuid(), HT_SAFEDIR_WRITE, &e, &w),
	    "a sticky directory anyone may write in is taken");
	fd = ht_safedir_open(-1, "/", 1, geteuid(), 0, &w);
	ok(fd >= 0, "\"/\" is taken (root's, not writable by others)");
	close(fd);
	snprintf(path, sizeof(path), "%s/priv/./sub/../../priv//sub/", top);
	fd = ht_safedir_open(-1, path, strlen(path), geteuid(), 0, &w);
	ok(names(fd, "/priv/sub"), "\".\", \"..\" and \"//\" as written");
	close(fd);
	snprintf(path, sizeof(path), "%s/priv/subXYZ", top);
	fd = ht_safedir_open(-1, path, strlen(path) - 3, geteuid(), 0, &w);
	ok(names(fd, "/priv/sub"), "only len bytes of the path are read");
	close(fd);
	fd = ht_safedir_open(-1, "/../../..", 9, geteuid(), 0, &w);
	ok(fd >= 0 && fstat(fd, &st) == 0 && stat("/", &root) == 0 &&
		st.st_dev == root.st_dev && st.st_ino == root.st_ino,
	    "\"..\" at the root stays there");
	close(fd);
	snprintf(path, sizeof(path), "%s/priv", top);
	if ((rootfd = open(path, O_PATH | O_DIRECTORY)) < 0)
		bail("%s: %s", path, strerror(errno));
	fd = ht_safedir_open(rootfd, "/../sub", 7, geteuid(), 0, &w);
	ok(names(fd, "/priv/sub"),
	    "from a rootfd: the path is beneath it, \"..\" stays at it");
	close(fd);
	close(rootfd);

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		refused(refusals[i].rel, 0, refusals[i].fault, refusals[i].err,
		    refusals[i].at, refusals[i].what);
	ok(try("/shared", geteuid(), 0, &e, &w) != 0 &&
		(w.mode & 07777) == 0777 && w.owner == geteuid(),
	    "the refusal gives the mode and the owner");

	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/theirs", top);
		mk("/theirs", 0755);
		if (chown(path, 65534, 65534) != 0)
			bail("chown %s: %s", path, strerror(errno));
		refused("/theirs", 0, HT_SAFEDIR_OWNER, EPERM, "/theirs",
		    "another user's directory");
		ok(try("/theirs", 0, 0, &e, &w) != 0 && w.owner == 65534,
		    "its owner is given");
		is_int(0, try("/theirs", 65534, 0, &e, &w),
		    "it is taken for its owner");
		is_int(0, try("/priv", 65534, 0, &e, &w),
		    "a root's directory is taken for another user");
		skip("root may write anywhere: no EACCES to see");
	} else {
		skip("not root: no directory of another user to make");
		refused("/ro", HT_SAFEDIR_WRITE, HT_SAFEDIR_ACCESS, EACCES,
		    "/ro", "a directory we may not write in");
	}
	is_int(0, try("/ro", geteuid(), 0, &e, &w),
	    "without HT_SAFEDIR_WRITE, writability is not asked");

	/* HT_SAFEDIR_CREATE */
	umask(022);
	is_int(0,
	    try("/new/a/b", geteuid(), HT_SAFEDIR_WRITE | HT_SAFEDIR_CREATE, &e,
		&w),
	    "CREATE: the missing components are made, the last taken");
	snprintf(path, sizeof(path), "%s/new/a/b", top);
	ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
		(st.st_mode & 07777) == 0700 && st.st_uid == geteuid(),
	    "CREATE: mode 0700, ours");
	is_int(0,
	    try("/new/a/b", geteuid(), HT_SAFEDIR_WRITE | HT_SAFEDIR_CREATE, &e,
		&w),
	    "CREATE: what exists is taken as it is");
	refused("/link/made", HT_SAFEDIR_CREATE, HT_SAFEDIR_SYMLINK, ELOOP,
	    "/link", "CREATE through a symbolic link");
	snprintf(path, sizeof(path), "%s/priv/made", top);
	ok(stat(path, &st) != 0 && errno == ENOENT,
	    "CREATE: nothing made where the link points");
	refused("/file/x", HT_SAFEDIR_CREATE, HT_SAFEDIR_NOTDIR, ENOTDIR,
	    "/file", "CREATE below a file");
	refused("/shared", HT_SAFEDIR_CREATE, HT_SAFEDIR_SHARED, EPERM,
	    "/shared", "CREATE of a shared directory that exists");

	is_int(HT_SAFEDIR_RELATIVE,
	    ht_safedir_open(-1, "tmp", 3, 0, 0, &w) < 0 ? (int)w.fault : 0,
	    "a relative path: refused");
	is_int(EINVAL, w.err, "with EINVAL");
	memset(longname, 'x', NAME_MAX + 1);
	longname[NAME_MAX + 1] = '\0';
	snprintf(path, sizeof(path), "%s/%s", top, longname);
	errno = 0;
	ok(ht_safedir_open(-1, path, strlen(path), 0, 0, &w) < 0 &&
		w.fault == HT_SAFEDIR_TOOLONG && errno == ENAMETOOLONG,
	    "a component above NAME_MAX: ENAMETOOLONG");
	cleanup();
	return 0;
}
