/*
 * agent/file.c (file.h): files made unseen and named whole, on both of its
 * paths: an O_TMPFILE, and the named temporary file of a file system
 * without O_TMPFILE, which a seccomp filter stands in for here (openat
 * with O_TMPFILE fails with EOPNOTSUPP, as on such a file system).  On
 * each, in a fresh directory:
 *   - a new file shows no name (O_TMPFILE), or exactly one, the final
 *     name, ".tmp." and 16 hex digits, different for each file;
 *   - published, it has its name, mode 0600, what was written, and no
 *     other name is left;
 *   - a name taken by a file, or by a symbolic link (to a file or to
 *     nothing), fails with EEXIST and the file stays ready for another
 *     name; what held the name, and what a link points to, is untouched;
 *   - with replace, it takes the place of what held the name;
 *   - discarded, it leaves nothing.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "file.h"

static char top[PATH_MAX];

/* The names in dir, but "." and "..", sorted and joined by spaces. */
static const char *
names(const char *dir)
{
	static char buf[4096];
	struct dirent **list;
	size_t len = 0;
	int i, n;

	buf[0] = '\0';
	if ((n = scandir(dir, &list, NULL, alphasort)) < 0)
		return "(unreadable)";
	for (i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") != 0 &&
		    strcmp(list[i]->d_name, "..") != 0 &&
		    len + strlen(list[i]->d_name) + 2 < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			    "%s%s", len > 0 ? " " : "", list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return buf;
}

/* The content of dir/name ("(none)" if it cannot be read). */
static const char *
content(const char *dir, const char *name)
{
	static char buf[256];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW)) < 0)
		return "(none)";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    close(fd) != 0)
		bail("%s: %s", path, strerror(errno));
}

/* A new file in dirfd for name, with text written: or bail. */
static void
made(struct ht_file *f, int dirfd, const char *name, const char *text)
{
	if (ht_file_create(f, dirfd, name) != 0 ||
	    write(f->fd, text, strlen(text)) != (ssize_t)strlen(text))
		bail("ht_file_create %s: %s", name, strerror(errno));
}

/* Is s name + ".tmp." + 16 lowercase hex digits? */
static int
tmp_shaped(const char *s, const char *name)
{
	size_t n = strlen(name), i;

	if (strncmp(s, name, n) != 0 || strncmp(s + n, ".tmp.", 5) != 0 ||
	    strlen(s + n + 5) != 16)
		return 0;
	for (i = n + 5; s[i] != '\0'; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL)
			return 0;
	return 1;
}

static void
run(const char *mode, int named)
{
	struct ht_file f, g;
	char dir[PATH_MAX + 16], want[PATH_MAX + 32], victim[PATH_MAX + 16];
	static const char *const taken[] = { "taken.heap", "link.heap",
		"dangling.heap" };
	static const char *const takers[] = { "a file", "a symbolic link",
		"a dangling link" };
	struct stat st;
	int dirfd, rc, e, i;

	snprintf(dir, sizeof(dir), "%s/%s", top, mode);
	if (mkdir(dir, 0700) != 0 ||
	    (dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		bail("%s: %s", dir, strerror(errno));

	made(&f, dirfd, "a.heap", "first");
	if (named) {
		ok(tmp_shaped(f.tmp, "a.heap") &&
			strcmp(names(dir), f.tmp) == 0,
		    "%s: a new file has one name, a.heap.tmp. and 16 hex "
		    "digits (%s)",
		    mode, names(dir));
		made(&g, dirfd, "a.heap", "");
		ok(tmp_shaped(g.tmp, "a.heap") && strcmp(g.tmp, f.tmp) != 0,
		    "%s: another new file, another name (%s, %s)", mode, f.tmp,
		    g.tmp);
	} else {
		is_string("", names(dir), "%s: a new file has no name", mode);
		made(&g, dirfd, "a.heap", "");
		is_string("", g.tmp, "%s: nor has another", mode);
	}
	ht_file_discard(&g);
	is_int(0, ht_file_publish(&f, "a.heap", 0), "%s: publish a.heap", mode);
	is_string("a.heap", names(dir), "%s: a.heap, and no other name", mode);
	is_string("first", content(dir, "a.heap"), "%s: what was written",
	    mode);
	snprintf(want, sizeof(want), "%s/a.heap", dir);
	ok(stat(want, &st) == 0 && (st.st_mode & 07777) == 0600 &&
		S_ISREG(st.st_mode),
	    "%s: a regular file, mode 0600", mode);

	/* Names someone took first: a file, links to a file and to
	 * nothing. */
	put(dir, "taken.heap", "theirs");
	snprintf(victim, sizeof(victim), "%s/victim", top);
	if (symlinkat(victim, dirfd, "link.heap") != 0 ||
	    symlinkat("planted", dirfd, "dangling.heap") != 0)
		bail("symlinkat: %s", strerror(errno));
	made(&f, dirfd, "taken.heap", "second");
	for (i = 0; i < 3; i++) {
		errno = 0;
		rc = ht_file_publish(&f, taken[i], 0);
		e = errno;
		ok(rc == -1 && e == EEXIST,
		    "%s: a name taken by %s: EEXIST (%s)", mode, takers[i],
		    strerror(e));
	}
	is_string("theirs", content(dir, "taken.heap"),
	    "%s: the taken file is untouched", mode);
	is_string("victim", content(top, "victim"),
	    "%s: the link's target is untouched", mode);
	ok(readlinkat(dirfd, "dangling.heap", want, sizeof(want)) == 7 &&
		faccessat(dirfd, "planted", F_OK, 0) != 0,
	    "%s: the dangling link is still one, nothing planted", mode);
	is_int(0, ht_file_publish(&f, "b.heap", 0),
	    "%s: then another name is taken", mode);
	is_string("second", content(dir, "b.heap"), "%s: with what was written",
	    mode);

	made(&f, dirfd, "taken.heap", "third");
	is_int(0, ht_file_publish(&f, "taken.heap", 1),
	    "%s: publish with replace over a taken name", mode);
	is_string("third", content(dir, "taken.heap"), "%s: it is replaced",
	    mode);

	made(&f, dirfd, "c.heap", "fourth");
	ht_file_discard(&f);
	is_string("a.heap b.heap dangling.heap link.heap taken.heap",
	    names(dir), "%s: a discarded file leaves nothing", mode);
	close(dirfd);
}

/* From here on, openat with O_TMPFILE fails with EOPNOTSUPP.  Returns 0,
 * or -1 if the kernel will not have it. */
static int
no_tmpfile(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_TMPFILE & ~O_DIRECTORY,
		    0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return -1;
	return 0;
}

static void
cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (top[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			diag("could not remove %s", top);
	}
}

int
main(void)
{
	int fd;

	plan(0);
	test_timeout(60);
	test_tmpdir("file-t", top);
	put(top, "victim", "victim");

	fd = open(top, O_TMPFILE | O_WRONLY, 0600);
	if (fd >= 0) {
		close(fd);
		run("tmpfile", 0);
	} else
		skip("%s: no O_TMPFILE here (%s): only the fallback is tested",
		    top, strerror(errno));
	if (no_tmpfile() != 0)
		skip("no seccomp filter (%s): the fallback is not tested",
		    strerror(errno));
	else {
		fd = open(top, O_TMPFILE | O_WRONLY, 0600);
		ok(fd < 0 && errno == EOPNOTSUPP,
		    "the filter makes O_TMPFILE fail with EOPNOTSUPP");
		run("named", 1);
	}
	/* Not a cleanup of test_cleanup_register: system(3) is not
	 * async-signal-safe. */
	cleanup();
	return 0;
}
