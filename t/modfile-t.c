/*
 * Tests for cli/modfile.c, on a root directory made here ($TMPDIR):
 *   - a FIFO, /dev/null and a symlink to /dev/zero are refused, by type,
 *     without blocking (an alarm fails the test instead of hanging it);
 *   - inside the root, an absolute symlink, a relative one climbing above
 *     the root, and "..", all reach the root's etc/passwd, never ours;
 *   - a magic link of /proc is not followed (openat2 only);
 *   - ht_modfile_open takes an ELF file that the check accepts, reports
 *     the check's refusal as a mismatch and a FIFO as no file, and finds
 *     the file of a deleted mapping through map_files (root only);
 *   - a live process's module that is not inside the root given is read
 *     through map_files (root only) and else not at all: never at the same
 *     path in our own file system; with no path (outside the root), its
 *     mapping is found by address and name.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "modfile.h"

static char root[PATH_MAX];
static int have_openat2;

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0)
		bail("writing %s: %s", path, strerror(errno));
}

static void
link_in(const char *target, const char *rel)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path) != 0)
		bail("symlink %s: %s", path, strerror(errno));
}

/* What rootfd/path reads as, through ht_modfile_open_regular: its first
 * line, or "errno N". */
static const char *
read_in(int rootfd, const char *path)
{
	static char buf[256];
	ssize_t n;
	int fd;

	if ((fd = ht_modfile_open_regular(rootfd, path, NULL)) == -1) {
		snprintf(buf, sizeof(buf), "errno %d", errno);
		return buf;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void
test_types(void)
{
	char path[PATH_MAX + 64];
	mode_t mode;
	int fd, err;

	snprintf(path, sizeof(path), "%s/fifo", root);
	if (mkfifo(path, 0600) != 0)
		bail("mkfifo: %s", strerror(errno));
	alarm(10);
	mode = 0;
	fd = ht_modfile_open_regular(AT_FDCWD, path, &mode);
	err = errno;
	is_int(-1, fd, "a FIFO is refused, at once");
	is_int(EINVAL, err, "a FIFO: EINVAL");
	ok(S_ISFIFO(mode), "a FIFO: its type is told");
	mode = 0;
	fd = ht_modfile_open_regular(AT_FDCWD, "/dev/null", &mode);
	ok(fd == -1 && S_ISCHR(mode), "/dev/null is refused as a device");
	link_in("/dev/zero", "zero");
	snprintf(path, sizeof(path), "%s/zero", root);
	mode = 0;
	fd = ht_modfile_open_regular(AT_FDCWD, path, &mode);
	ok(fd == -1 && S_ISCHR(mode), "a symlink to /dev/zero is refused");
	alarm(0);
	put("plain", "plain file\n");
	snprintf(path, sizeof(path), "%s/plain", root);
	is_string("plain file", read_in(AT_FDCWD, path),
	    "a regular file opens and reads");
	if ((fd = ht_modfile_open_regular(AT_FDCWD, path, NULL)) != -1) {
		ok((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0,
		    "the descriptor is close-on-exec");
		close(fd);
	} else
		ok(0, "the descriptor is close-on-exec");
}

static void
test_root(void)
{
	char path[PATH_MAX + 64];
	int rootfd, procfd;

	snprintf(path, sizeof(path), "%s/etc", root);
	if (mkdir(path, 0700) != 0)
		bail("mkdir: %s", strerror(errno));
	put("etc/passwd", "inside the root\n");
	link_in("/etc/passwd", "abs");
	link_in("../../../../../../../../etc/passwd", "rel");
	if ((rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		bail("open %s: %s", root, strerror(errno));
	is_string("inside the root", read_in(rootfd, "/etc/passwd"),
	    "an absolute path is the root's");
	if (!have_openat2) {
		skip("no openat2: symlinks are not resolved inside the root");
		skip("no openat2");
		skip("no openat2");
		skip("no openat2");
		close(rootfd);
		return;
	}
	is_string("inside the root", read_in(rootfd, "/abs"),
	    "an absolute symlink resolves inside the root");
	is_string("inside the root", read_in(rootfd, "/rel"),
	    "a relative symlink cannot climb out of the root");
	is_string("inside the root", read_in(rootfd, "/../../etc/passwd"),
	    "\"..\" cannot climb out of the root");
	close(rootfd);
	/* /proc/self/root is a magic link: to "/" of this process. */
	if ((procfd = open("/proc/self", O_PATH | O_DIRECTORY)) == -1) {
		skip("no /proc/self");
		return;
	}
	ok(ht_modfile_open_in_root(procfd, "root/etc/passwd", O_PATH) == -1 &&
		errno == ELOOP,
	    "a magic link is not followed (ELOOP)");
	close(procfd);
}

static int
accept_cb(Elf *elf, void *arg, char *why, size_t whylen)
{
	(void)elf;
	if (*(int *)arg)
		return 0;
	snprintf(why, whylen, "refused by the check");
	return -1;
}

static void
test_open(const char *self)
{
	struct ht_modfile mf;
	struct ht_modfile_req req;
	char path[PATH_MAX + 64], empty[PATH_MAX + 64];
	int yes = 1, no = 0, fd, out, r;
	unsigned char buf[65536];
	ssize_t n;
	void *map;

	/* A copy of this test's executable, as an ELF file in the root. */
	snprintf(path, sizeof(path), "%s/elf", root);
	if ((fd = open(self, O_RDONLY)) == -1 ||
	    (out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0700)) == -1)
		bail("copying %s: %s", self, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			bail("copying %s: %s", self, strerror(errno));
	close(fd);
	close(out);

	memset(&req, 0, sizeof(req));
	req.path = "/elf";
	req.root = root;
	req.check = accept_cb;
	req.arg = &yes;
	ok(ht_modfile_open(&req, &mf) == 0 && mf.elf != NULL &&
		elf_kind(mf.elf) == ELF_K_ELF,
	    "an ELF file the check accepts");
	snprintf(path, sizeof(path), "%s/elf", root);
	is_string(path, mf.name, "its name is the root's path");
	ht_modfile_close(&mf);
	ok(mf.fd == -1 && mf.elf == NULL, "closed");
	req.arg = &no;
	ok(ht_modfile_open(&req, &mf) == -1 && mf.mismatch &&
		strcmp(mf.why, "refused by the check") == 0,
	    "the check's refusal is a mismatch, with its reason");
	req.path = "/plain";
	ok(ht_modfile_open(&req, &mf) == -1 && !mf.mismatch &&
		strcmp(mf.why, "not an ELF file") == 0,
	    "a text file: not ELF");
	req.path = "/fifo";
	alarm(10);
	ok(ht_modfile_open(&req, &mf) == -1 && !mf.mismatch &&
		strstr(mf.why, "FIFO") != NULL,
	    "a FIFO: no file (%s)", mf.why);
	alarm(0);

	/* The mapping of a deleted file, through map_files. */
	snprintf(path, sizeof(path), "%s/elf", root);
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    (map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0)) ==
		MAP_FAILED)
		bail("mapping %s: %s", path, strerror(errno));
	close(fd);
	unlink(path);
	req.path = path;
	req.root = NULL;
	req.pid = getpid();
	req.lo = (uint64_t)(uintptr_t)map;
	req.hi = req.lo + 1;
	req.arg = &yes;
	if (geteuid() != 0)
		skip("not root: map_files is closed to us");
	else {
		ok(ht_modfile_open(&req, &mf) == 0 &&
			strstr(mf.name, "/map_files/") != NULL,
		    "a deleted file is read through map_files (%s)", mf.name);
		ht_modfile_close(&mf);
	}
	munmap(map, 4096);

	/* A module of ours named inside an empty root: the file exists in
	 * our file system only, at that very path, and is mapped. */
	snprintf(path, sizeof(path), "%s/mapped", root);
	if ((fd = open(self, O_RDONLY)) == -1 ||
	    (out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0700)) == -1)
		bail("copying %s: %s", self, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			bail("copying %s: %s", self, strerror(errno));
	close(fd);
	close(out);
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    (map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0)) ==
		MAP_FAILED)
		bail("mapping %s: %s", path, strerror(errno));
	close(fd);
	snprintf(empty, sizeof(empty), "%s/empty", root);
	if (mkdir(empty, 0700) != 0)
		bail("mkdir %s: %s", empty, strerror(errno));
	memset(&req, 0, sizeof(req));
	req.path = path;
	req.root = empty;
	req.pid = getpid();
	req.lo = (uint64_t)(uintptr_t)map;
	req.hi = req.lo + 1;
	req.check = accept_cb;
	req.arg = &yes;
	r = ht_modfile_open(&req, &mf);
	if (geteuid() == 0)
		ok(r == 0 && strstr(mf.name, "/map_files/") != NULL,
		    "a module outside the root is read as mapped (%s)",
		    r == 0 ? mf.name : mf.why);
	else
		ok(r == -1 && strstr(mf.why, "cannot open") != NULL,
		    "a module outside the root is not read without map_files "
		    "(%s)",
		    mf.why);
	if (r == 0)
		ht_modfile_close(&mf);
	req.pid = 0;
	ok(ht_modfile_open(&req, &mf) == -1,
	    "without the process, nothing outside the root is opened");
	/* No path: the mapping in the range, by address (and as we see its
	 * path, the name its basename would have). */
	req.pid = getpid();
	req.path = "";
	r = ht_modfile_open(&req, &mf);
	if (geteuid() != 0)
		ok(r == -1, "no path, no map_files: no file");
	else
		ok(r == 0 && strstr(mf.name, "/map_files/") != NULL,
		    "no path: the mapping in the range is read (%s)",
		    r == 0 ? mf.name : mf.why);
	if (r == 0)
		ht_modfile_close(&mf);
	munmap(map, 4096);
}

int
main(int argc, char **argv)
{
	char self[PATH_MAX], tmp[PATH_MAX];
	ssize_t n;

	(void)argc;
	(void)argv;
	elf_version(EV_CURRENT);
	/* Real, so that it is the path the kernel shows for a mapping. */
	snprintf(tmp, sizeof(tmp), "%s/modfile-t.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmp) == NULL || realpath(tmp, root) == NULL)
		bail("mkdtemp: %s", strerror(errno));
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		bail("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	have_openat2 =
	    !(syscall(SYS_openat2, -1, "", NULL, 0) == -1 && errno == ENOSYS);

	plan(0);
	test_types();
	test_root();
	test_open(self);

	snprintf(tmp, sizeof(tmp), "rm -rf '%.4000s'", root);
	if (system(tmp) != 0)
		diag("could not remove %s", root);
	return 0;
}
