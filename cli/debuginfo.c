/*
 * Separate debug information, found without trusting the file system: see
 * debuginfo.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "crc32.h"
#include "debuginfo.h"
#include "modfile.h"

#define DEBUG_DIR "/usr/lib/debug"
#define ID_MAX	  64

/* What a candidate must be: of this build-id, or else of this CRC. */
struct want {
	unsigned char id[ID_MAX];
	size_t idlen;
	uint32_t crc;
	int use_crc;
};

/* Where to look: inside the target's root (fd and its name), else here. */
struct where {
	int rootfd; /* -1: no root */
	const char *root;
};

static int
file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t c = 0;
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = ht_crc32(c, buf, (size_t)n);
		off += n;
	}
	if (n == -1)
		return -1;
	*crc = c;
	return 0;
}

static int
is_wanted(int fd, const struct want *w)
{
	const void *id;
	uint32_t crc;
	ssize_t n;
	Elf *elf;
	int yes;

	if (w->idlen > 0) {
		if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL)
			return 0;
		n = dwelf_elf_gnu_build_id(elf, &id);
		yes = n > 0 && (size_t)n == w->idlen &&
		    memcmp(id, w->id, w->idlen) == 0;
		elf_end(elf);
		return yes;
	}
	/* Without either there is nothing to tell the right file from a
	 * stale one: none is taken. */
	return w->use_crc && file_crc(fd, &crc) == 0 && crc == w->crc;
}

static int
in_debug_dir(const char *path)
{
	return strncmp(path, DEBUG_DIR "/", sizeof(DEBUG_DIR)) == 0;
}

/* Open path (as the target saw it) if it is the wanted file: inside the
 * root first, then as it stands if there is no root or it lies in our
 * debug directory.  Returns the fd and its name, or -1. */
static int
try_path(const struct where *at, const char *path, const struct want *w,
    char **name)
{
	char buf[PATH_MAX * 2];
	int fd, pass;

	for (pass = at->rootfd != -1 ? 0 : 1; pass < 2; pass++) {
		/* A live target's own directories are not ours: after its
		 * root, only our debug directory is searched. */
		if (pass == 1 && at->rootfd != -1 && !in_debug_dir(path))
			break;
		fd = ht_modfile_open_regular(pass == 0 ? at->rootfd : AT_FDCWD,
		    path, NULL);
		if (fd == -1)
			continue;
		if (!is_wanted(fd, w)) {
			close(fd);
			continue;
		}
		snprintf(buf, sizeof(buf), "%s%s", pass == 0 ? at->root : "",
		    path);
		if ((*name = strdup(buf)) == NULL) {
			close(fd);
			return -1;
		}
		return fd;
	}
	return -1;
}

int
ht_debuginfo_build_id_path(const unsigned char *id, size_t len, char *buf,
    size_t size)
{
	size_t i, k;

	if (len < 2 || size < sizeof(DEBUG_DIR) + 16 + 2 * len + 8)
		return -1;
	k = (size_t)snprintf(buf, size, DEBUG_DIR "/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		k += (size_t)snprintf(buf + k, size - k, "%02x", id[i]);
	snprintf(buf + k, size - k, ".debug");
	return 0;
}

static int
try_build_id(const struct where *at, const struct want *w, char **name)
{
	char path[sizeof(DEBUG_DIR) + 16 + 2 * ID_MAX + 8];

	if (ht_debuginfo_build_id_path(w->id, w->idlen, path, sizeof(path)) !=
	    0)
		return -1;
	return try_path(at, path, w, name);
}

/* The user's debug directories, as they stand: D/REL for each D (REL
 * starts with a slash).  Returns the fd, or -1. */
static int
try_dirs(const struct ht_debuginfo_ctx *ctx, const char *rel,
    const struct want *w, char **name)
{
	static const struct where here = { -1, NULL };
	char path[PATH_MAX * 2];
	size_t i;
	int fd;

	for (i = 0; i < ctx->ndirs; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", ctx->dirs[i],
			rel) >= sizeof(path))
			continue;
		if ((fd = try_path(&here, path, w, name)) != -1)
			return fd;
	}
	return -1;
}

/* The build-id path of w relative to the debug directory, into rel. */
static int
build_id_rel(const struct want *w, char *rel, size_t size)
{
	char path[sizeof(DEBUG_DIR) + 16 + 2 * ID_MAX + 8];

	if (w->idlen == 0 ||
	    ht_debuginfo_build_id_path(w->id, w->idlen, path, sizeof(path)) !=
		0)
		return -1;
	snprintf(rel, size, "%s", path + sizeof(DEBUG_DIR) - 1);
	return 0;
}

/* The directory of path, with its final slash ("/usr/lib/" of
 * "/usr/lib/libx.so"), into dir. */
static void
dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) + 1 : 0;

	snprintf(dir, size, "%.*s", (int)n, path);
}

/*
 * The .gnu_debugaltlink of the file named (a debug file we opened, by its
 * name as we gave it): if it links to altname, its build-id goes into w.
 * Returns 1 then, else 0.
 */
static int
alt_wanted(const struct where *at, const char *file_name, const char *altname,
    struct want *w)
{
	const char *path = file_name, *sn, *p, *nul;
	size_t shstrndx, rl = at->root != NULL ? strlen(at->root) : 0;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, found = 0;

	if (rl > 0 && strncmp(file_name, at->root, rl) == 0 &&
	    file_name[rl] == '/')
		fd = ht_modfile_open_regular(at->rootfd, file_name + rl, NULL);
	else
		fd = ht_modfile_open_regular(AT_FDCWD, path, NULL);
	if (fd == -1)
		return 0;
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sn = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL ||
		    strcmp(sn, ".gnu_debugaltlink") != 0 ||
		    (d = elf_getdata(scn, NULL)) == NULL || d->d_size == 0)
			continue;
		p = d->d_buf;
		if ((nul = memchr(p, '\0', d->d_size)) == NULL ||
		    strcmp(p, altname) != 0)
			break;
		w->idlen = d->d_size - (size_t)(nul + 1 - p);
		if (w->idlen == 0 || w->idlen > ID_MAX)
			break;
		memcpy(w->id, nul + 1, w->idlen);
		found = 1;
	}
out:
	if (elf != NULL)
		elf_end(elf);
	close(fd);
	return found;
}

int
ht_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct ht_debuginfo_ctx *ctx;
	const unsigned char *bits;
	struct where at;
	struct want w;
	GElf_Addr vaddr;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	int fd = -1, n, i;

	(void)modname;
	(void)base;
	*debuginfo_file_name = NULL;
	if (userdata == NULL || (ctx = *userdata) == NULL)
		return -1;
	at.root = ctx->root;
	at.rootfd = -1;
	if (ctx->root != NULL &&
	    (at.rootfd = open(ctx->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
		-1)
		return -1;
	memset(&w, 0, sizeof(w));

	if (debuglink_file != NULL && file_name != NULL &&
	    alt_wanted(&at, file_name, debuglink_file, &w)) {
		/* A dwz alternate file: in the user's directories, then
		 * absolute, or relative to the debug file that links to it,
		 * or under its build-id. */
		if (build_id_rel(&w, path, sizeof(path)) == 0 &&
		    (fd = try_dirs(ctx, path, &w, debuginfo_file_name)) != -1)
			goto out;
		if (strncmp(debuglink_file, DEBUG_DIR "/", sizeof(DEBUG_DIR)) ==
			0 &&
		    (fd = try_dirs(ctx, debuglink_file + sizeof(DEBUG_DIR) - 1,
			 &w, debuginfo_file_name)) != -1)
			goto out;
		if (debuglink_file[0] == '/')
			fd = try_path(&at, debuglink_file, &w,
			    debuginfo_file_name);
		else {
			dir_of(file_name, dir, sizeof(dir));
			n = (int)strlen(at.root != NULL ? at.root : "");
			if (at.root != NULL && strncmp(dir, at.root, n) == 0)
				memmove(dir, dir + n, strlen(dir + n) + 1);
			snprintf(path, sizeof(path), "%s%s", dir,
			    debuglink_file);
			fd = try_path(&at, path, &w, debuginfo_file_name);
		}
		if (fd == -1)
			fd = try_build_id(&at, &w, debuginfo_file_name);
		goto out;
	}

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && n <= ID_MAX) {
		memcpy(w.id, bits, (size_t)n);
		w.idlen = (size_t)n;
	} else {
		w.crc = debuglink_crc;
		w.use_crc = 1;
	}
	dir_of(ctx->path != NULL ? ctx->path : "", dir, sizeof(dir));
	if (build_id_rel(&w, path, sizeof(path)) == 0 &&
	    (fd = try_dirs(ctx, path, &w, debuginfo_file_name)) != -1)
		goto out;
	if (debuglink_file != NULL) {
		snprintf(path, sizeof(path), "/%s", debuglink_file);
		if ((fd = try_dirs(ctx, path, &w, debuginfo_file_name)) != -1)
			goto out;
		snprintf(path, sizeof(path), "%s%s", dir, debuglink_file);
		if (dir[0] == '/' &&
		    (fd = try_dirs(ctx, path, &w, debuginfo_file_name)) != -1)
			goto out;
	}
	if ((fd = try_build_id(&at, &w, debuginfo_file_name)) != -1 ||
	    debuglink_file == NULL || ctx->path == NULL)
		goto out;
	for (i = 0; fd == -1 && i < 3; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s%s", dir,
			    debuglink_file);
		else if (i == 1)
			snprintf(path, sizeof(path), "%s.debug/%s", dir,
			    debuglink_file);
		else
			snprintf(path, sizeof(path), DEBUG_DIR "%s%s", dir,
			    debuglink_file);
		fd = try_path(&at, path, &w, debuginfo_file_name);
	}
out:
	if (at.rootfd != -1)
		close(at.rootfd);
	return fd;
}
