/*
 * Module files of a target (see modfile.h).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/syscall.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "modfile.h"
#include "proc.h"

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

int
ht_modfile_open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how;
	int fd;

	/* Relative to rootfd: openat would take an absolute path as it
	 * stands. */
	while (*path == '/')
		path++;
	if (*path == '\0')
		path = ".";
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd == -1 && errno == ENOSYS)
		fd = openat(rootfd, path, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

static int
open_at(int rootfd, const char *path, int flags)
{
	if (rootfd == AT_FDCWD)
		return open(path, flags | O_CLOEXEC);
	return ht_modfile_open_in_root(rootfd, path, flags);
}

int
ht_modfile_open_regular(int rootfd, const char *path, mode_t *mode)
{
	struct stat st, rst;
	char self[64];
	int pfd, fd = -1, err;

	if ((pfd = open_at(rootfd, path, O_PATH)) == -1)
		return -1;
	if (fstat(pfd, &st) != 0)
		goto out_close;
	if (!S_ISREG(st.st_mode)) {
		if (mode != NULL)
			*mode = st.st_mode;
		errno = EINVAL;
		goto out_close;
	}
	/* Reopening our own O_PATH descriptor reaches the inode just
	 * checked, whatever happened to the path since.  Without /proc,
	 * the path once more: the flags keep a FIFO or a terminal swapped
	 * in meanwhile from blocking us or becoming ours, and the inode
	 * check below refuses it. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	if ((fd = open(self, READ_FLAGS)) == -1 && errno == ENOENT)
		fd = open_at(rootfd, path, READ_FLAGS);
	if (fd == -1)
		goto out_close;
	if (fstat(fd, &rst) != 0 || rst.st_dev != st.st_dev ||
	    rst.st_ino != st.st_ino) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
out_close:
	err = errno;
	close(pfd);
	errno = err;
	return fd;
}

int
ht_modfile_build_id(Elf *elf, const unsigned char **id, size_t *len,
    GElf_Addr *vaddr)
{
	size_t i, nph, off, noff, doff;
	GElf_Phdr ph;
	GElf_Nhdr nh;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
		    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d == NULL)
			continue;
		off = 0;
		while (off < d->d_size &&
		    (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0) {
				*id = (const unsigned char *)d->d_buf + doff;
				*len = nh.n_descsz;
				*vaddr = ph.p_vaddr + doff;
				return 0;
			}
		}
	}
	return -1;
}

static const char *
type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFDIR:
		return "a directory";
	}
	return "not a regular file";
}

/*
 * Open path (inside rootfd) as the module's file into mf.  Returns 0, or
 * -1 with *mismatch and why saying what was wrong with it.
 */
static int
try_file(const struct ht_modfile_req *req, int rootfd, const char *path,
    struct ht_modfile *mf, int *mismatch, char *why, size_t whylen)
{
	mode_t mode = 0;

	*mismatch = 0;
	if ((mf->fd = ht_modfile_open_regular(rootfd, path, &mode)) == -1) {
		if (mode != 0)
			snprintf(why, whylen, "not a regular file (%s)",
			    type_name(mode));
		else
			snprintf(why, whylen, "cannot open: %s",
			    strerror(errno));
		return -1;
	}
	if ((mf->elf = elf_begin(mf->fd, ELF_C_READ_MMAP, NULL)) == NULL ||
	    elf_kind(mf->elf) != ELF_K_ELF) {
		snprintf(why, whylen, "not an ELF file");
		goto out_close;
	}
	if (req->check != NULL &&
	    req->check(mf->elf, req->arg, why, whylen) != 0) {
		*mismatch = 1;
		goto out_close;
	}
	return 0;

out_close:
	ht_modfile_close(mf);
	return -1;
}

struct find {
	const struct ht_modfile_req *req;
	const char *rootlink; /* NULL: unknown */
	uint64_t lo, hi;
};

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/* The first mapping in the module's range whose file is the module's by
 * its path inside the root; by its name alone if it lies outside the root
 * (or the root cannot be read), and by its range alone if the module has
 * no path: the check decides then. */
static int
find_cb(void *arg, const struct ht_proc_map *m)
{
	struct find *f = arg;
	const char *in;

	if (m->lo < f->req->lo || m->lo >= f->req->hi || m->inode == 0 ||
	    m->path[0] != '/')
		return 0;
	in = f->rootlink != NULL ? ht_proc_in_root(f->rootlink, m->path) : NULL;
	if (f->req->path[0] != '\0' &&
	    (in != NULL ? strcmp(in, f->req->path) != 0 :
			  strcmp(base_of(m->path), base_of(f->req->path)) != 0))
		return 0;
	f->lo = m->lo;
	f->hi = m->hi;
	return 1;
}

/* The file mapped: through the kernel's link to the mapping itself. */
static int
try_mapping(const struct ht_modfile_req *req, struct ht_modfile *mf,
    int *mismatch, char *why, size_t whylen)
{
	struct find f = { req, NULL, req->vlo, req->vhi };
	char rootlink[PATH_MAX], name[64];

	*mismatch = 0;
	if (f.lo >= f.hi) {
		if (ht_proc_root_link(req->pid, rootlink, sizeof(rootlink)) ==
		    0)
			f.rootlink = rootlink;
		if (ht_proc_maps(req->pid, find_cb, &f) != 1) {
			snprintf(why, whylen, "not mapped by the process");
			return -1;
		}
	}
	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, f.lo,
	    f.hi);
	if (ht_proc_path(req->pid, name, mf->name, sizeof(mf->name)) != 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return -1;
	}
	return try_file(req, AT_FDCWD, mf->name, mf, mismatch, why, whylen);
}

int
ht_modfile_open(const struct ht_modfile_req *req, struct ht_modfile *mf)
{
	char why[sizeof(mf->why)];
	int rootfd = AT_FDCWD, r, mismatch = 0;

	mf->fd = -1;
	mf->elf = NULL;
	mf->mismatch = 0;
	mf->why[0] = '\0';
	why[0] = '\0';
	if (req->pid > 0 && (req->vlo < req->vhi || req->lo < req->hi) &&
	    try_mapping(req, mf, &mismatch, why, sizeof(why)) == 0)
		return 0;
	if (req->path[0] != '/') {
		/* Nothing else to try: say why the mapping was not used. */
		mf->mismatch = mismatch;
		snprintf(mf->why, sizeof(mf->why), "%s",
		    why[0] != '\0' ? why : "no path to open");
		return -1;
	}
	if ((size_t)snprintf(mf->name, sizeof(mf->name), "%s%s",
		req->root != NULL ? req->root : "",
		req->path) >= sizeof(mf->name)) {
		snprintf(mf->why, sizeof(mf->why), "path too long");
		return -1;
	}
	if (req->root != NULL &&
	    (rootfd = open(req->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
		-1) {
		snprintf(mf->why, sizeof(mf->why), "cannot open: %s",
		    strerror(errno));
		return -1;
	}
	r = try_file(req, rootfd, req->path, mf, &mf->mismatch, mf->why,
	    sizeof(mf->why));
	if (rootfd != AT_FDCWD)
		close(rootfd);
	return r;
}

void
ht_modfile_close(struct ht_modfile *mf)
{
	if (mf->elf != NULL)
		elf_end(mf->elf);
	if (mf->fd != -1)
		close(mf->fd);
	mf->elf = NULL;
	mf->fd = -1;
}
