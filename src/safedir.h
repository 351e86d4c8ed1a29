/*
 * A directory to write files in that no other user can redirect or
 * pre-empt: the dump prefix's.  Its path is walked one component at a time
 * from the root, each opened O_PATH|O_NOFOLLOW, so that no symbolic link on
 * the way is followed (one that another user could point elsewhere later);
 * "." and ".." are taken as they come, which without symbolic links is the
 * same as reading the path lexically, and ".." never climbs above the root.
 * The directory reached must belong to the writer's uid or to root, and
 * must not be writable by group or others unless it is sticky (as /tmp is:
 * there nobody may rename or remove a file of ours, though they may still
 * take a name first, which the writer must allow for).  The descriptor
 * returned names that directory for as long as it is open, whatever
 * happens to the path afterwards.
 *
 * Libc only, no allocation: the agent calls it inside its target, the CLI
 * to refuse a prefix early with a precise reason.
 */
#ifndef HT_SAFEDIR_H
#define HT_SAFEDIR_H

#include <sys/types.h>

#include <stddef.h>

/* Why a directory was refused. */
enum ht_safedir_fault {
	HT_SAFEDIR_OK = 0,
	HT_SAFEDIR_RELATIVE, /* the path does not start with '/' */
	HT_SAFEDIR_TOOLONG,  /* a component is longer than NAME_MAX */
	HT_SAFEDIR_LOOKUP,   /* a component could not be opened (err) */
	HT_SAFEDIR_NOTDIR,   /* a component is not a directory */
	HT_SAFEDIR_SYMLINK,  /* a component is a symbolic link */
	HT_SAFEDIR_OWNER,    /* the directory belongs to another user */
	HT_SAFEDIR_SHARED,   /* others may write in it, and it is not sticky */
	HT_SAFEDIR_ACCESS,   /* the caller may not create files in it (err) */
};

struct ht_safedir_why {
	enum ht_safedir_fault fault;
	int err;     /* the errno the call returned with */
	size_t len;  /* path[0..len) names the component at fault */
	uid_t owner; /* the directory's owner and mode, for OWNER, SHARED */
	mode_t mode;
};

/* For ht_safedir_open's flags: also check, with faccessat(AT_EACCESS),
 * that the caller may create files in the directory. */
#define HT_SAFEDIR_WRITE  0x1
/* Also make the components that do not exist, mode 0700 (as the caller,
 * under its umask), each in the directory the walk has just opened. */
#define HT_SAFEDIR_CREATE 0x2

/*
 * Open the directory path[0..len) (absolute; it need not end in NUL) with
 * O_PATH|O_DIRECTORY|O_CLOEXEC, as described above, for a writer whose
 * files belong to uid.  rootfd is the directory the path starts from: -1
 * for the caller's own root, or one such as /proc/PID/root to walk another
 * process's view.  Returns the descriptor (the caller closes it), or -1
 * with errno set and *why filled: ELOOP for SYMLINK, EPERM for OWNER and
 * SHARED, EINVAL for RELATIVE, ENAMETOOLONG, ENOTDIR, and otherwise that of
 * the lookup or access check.
 */
int ht_safedir_open(int rootfd, const char *path, size_t len, uid_t uid,
    int flags, struct ht_safedir_why *why);

#endif
