/*
 * The files of a target's modules (its executable, its shared libraries),
 * opened for the injector and the symbolizer: the one place that opens a
 * path that a profile or /proc/PID/maps names, i.e. a path chosen by
 * someone else.
 *
 * Such a path is opened only if it is a regular file, and never in a way
 * that can block or have side effects: it is looked up with O_PATH, which
 * opens nothing, and reopened for reading (O_NONBLOCK, O_NOCTTY, O_CLOEXEC)
 * only once fstat said S_IFREG.  So a FIFO cannot hang a report, and a
 * device (a terminal, /dev/ptmx, /dev/kmsg, a tape or a watchdog, whose
 * open alone acts) is never opened at all.
 *
 * A path of a live target is resolved inside its root (/proc/TID/root of
 * a live thread, or the directory the caller names) with openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: an absolute symlink or a ".."
 * planted inside a container stays inside the container, and /proc's
 * magic links are not followed.  Before Linux 5.6, which lacks openat2, the
 * path is resolved with openat and O_NOFOLLOW, which refuses a symlink as
 * its last component at least.
 *
 * Better still, a live target's module is first read through
 * /proc/TID/map_files/LO-HI, the kernel's link to the very file mapped:
 * no path is resolved at all, so it is right for a process chrooted inside
 * another mount namespace, for a file mapped before the process chrooted
 * itself (outside its root), and for one deleted or replaced on disk since.
 * The kernel lets only a reader with CAP_SYS_ADMIN (or
 * CAP_CHECKPOINT_RESTORE) open those links; others get the path inside the
 * root.  A path is never resolved in our own file system on behalf of a
 * live target.
 */
#ifndef HT_MODFILE_H
#define HT_MODFILE_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/*
 * Open path inside the directory rootfd as if rootfd were "/" (see above;
 * rootfd is typically /proc/PID/root opened with O_PATH | O_DIRECTORY).
 * flags are open(2)'s; O_CLOEXEC is added.  Returns the fd, or -1 with
 * errno.
 */
int ht_modfile_open_in_root(int rootfd, const char *path, int flags);

/*
 * Open path for reading if it is a regular file, inside rootfd
 * (ht_modfile_open_in_root), or as it stands when rootfd is AT_FDCWD.
 * Returns the fd (read-only, non-blocking, close-on-exec), or -1 with
 * errno; a file that is not regular is EINVAL, and *mode (if not NULL)
 * then says its type.
 */
int ht_modfile_open_regular(int rootfd, const char *path, mode_t *mode);

/*
 * The file's NT_GNU_BUILD_ID note, found through the program headers as
 * the loader maps it: the bytes (inside elf's data) and the address the
 * note's descriptor has in the file's address space.  Returns 0, or -1 if
 * there is none.
 */
int ht_modfile_build_id(Elf *elf, const unsigned char **id, size_t *len,
    GElf_Addr *vaddr);

/*
 * What to open.  path is the module's path as the target sees it: inside
 * root (absolute; "" if unknown, e.g. a file mapped from outside the
 * root); root is the directory the target sees as "/" (a live target's
 * /proc/TID/root), NULL for paths taken as they stand.  With pid > 0 (a
 * live process), its mapping of the file is tried first (above): [vlo, vhi)
 * when the caller knows it exactly as maps lists it, else the first
 * mapping that starts in [lo, hi) (the module's address range) and whose
 * path, inside the root, is path (or has path's basename when it lies
 * outside the root).  Each file found must be an ELF file that check
 * accepts (NULL: any): check returns 0, or -1 after writing into why
 * (whylen bytes) how the file differs from the module's.
 */
struct ht_modfile_req {
	const char *path;
	const char *root;
	pid_t pid;
	uint64_t lo, hi;
	uint64_t vlo, vhi;
	int (*check)(Elf *, void *arg, char *why, size_t whylen);
	void *arg;
};

/* An opened module file. */
struct ht_modfile {
	int fd;			  /* read-only, close-on-exec */
	Elf *elf;		  /* ELF_C_READ_MMAP over fd */
	char name[PATH_MAX + 64]; /* the path opened */
	/* On failure, about the path inside the root if it was tried, else
	 * about the mapping: whether a file was there (and check refused
	 * it), and why it was not used. */
	int mismatch;
	char why[256];
};

/*
 * Open the module file of req into *mf.  Returns 0 (free with
 * ht_modfile_close), or -1 with mf->mismatch and mf->why set and nothing
 * left open.
 */
int ht_modfile_open(const struct ht_modfile_req *req, struct ht_modfile *mf);

/* Release mf->elf and mf->fd (either may have been taken: NULL, -1). */
void ht_modfile_close(struct ht_modfile *mf);

#endif
