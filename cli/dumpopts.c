/*
 * The dump options (see dumpopts.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dumpopts.h"
#include "proc.h"
#include "proto.h"
#include "safedir.h"
#include "size.h"

int
ht_dump_opt(int ch, const char *arg, struct ht_dump_opts *o)
{
	uint64_t v;

	switch (ch) {
	case HT_OPT_DUMP_PREFIX:
		if (arg[0] == '\0')
			return ht_usage(
			    "--dump-prefix: empty; give the start "
			    "of the dump files' paths, e.g. /tmp/app");
		if ((size_t)snprintf(o->prefix, sizeof(o->prefix), "%s", arg) >=
		    sizeof(o->prefix))
			return ht_usage("--dump-prefix: too long");
		return HT_EXIT_OK;
	case HT_OPT_DUMP_INTERVAL:
		if (ht_duration_parse(arg, &v) != 0 || v == 0)
			return ht_usage("--dump-interval %s: not a duration "
					"above 0; use e.g. 500ms, 10s, 5m",
			    arg);
		o->interval_ms = v;
		return HT_EXIT_OK;
	case HT_OPT_THRESHOLD:
		if (ht_size_parse(arg, &v) != 0)
			return ht_usage(
			    "--threshold %s: not a size; " HT_SIZE_HINT, arg);
		o->threshold_bytes = v;
		return HT_EXIT_OK;
	}
	if (ht_size_parse(arg, &v) != 0 || v == 0)
		return ht_usage("%s %s: not a size above 0; " HT_SIZE_HINT,
		    ch == HT_OPT_DUMP_EVERY ? "--dump-every" : "--dump-at-rss",
		    arg);
	if (ch == HT_OPT_DUMP_EVERY)
		o->every_bytes = v;
	else
		o->at_rss_bytes = v;
	return HT_EXIT_OK;
}

int
ht_dump_opts_finish(struct ht_dump_opts *o)
{
	char cwd[PATH_MAX], abs[sizeof(o->prefix)];

	if (o->prefix[0] == '\0') {
		if (o->interval_ms != 0 || o->every_bytes != 0 ||
		    o->at_rss_bytes != 0 || o->threshold_bytes != 0)
			return ht_usage(
			    "--dump-interval, --dump-every, "
			    "--dump-at-rss and --threshold need "
			    "--dump-prefix, which says where the dumps go");
		return HT_EXIT_OK;
	}
	if (o->prefix[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			ht_warn("current directory: %s; give --dump-prefix "
				"an absolute path",
			    strerror(errno));
			return HT_EXIT_FAIL;
		}
		if ((size_t)snprintf(abs, sizeof(abs), "%s%s%s", cwd,
			strcmp(cwd, "/") == 0 ? "" : "/",
			o->prefix) >= sizeof(abs))
			return ht_usage("--dump-prefix %s: too long",
			    o->prefix);
		memcpy(o->prefix, abs, sizeof(abs));
	}
	if (strlen(o->prefix) > HT_PROTO_MAX_PREFIX)
		return ht_usage("--dump-prefix %s: longer than %d bytes; "
				"choose a shorter path",
		    o->prefix, HT_PROTO_MAX_PREFIX);
	return HT_EXIT_OK;
}

/* Say why the agent would refuse prefix, whose directory is dir[0..dl),
 * by what ht_safedir_open found (as "target PID: " says, for pid). */
static void
refusal(const char *prefix, size_t dl, pid_t pid, uid_t uid,
    const struct ht_safedir_why *w)
{
	char who[32] = "";

	if (pid != 0)
		snprintf(who, sizeof(who), "target %ld: ", (long)pid);
	switch (w->fault) {
	case HT_SAFEDIR_SYMLINK:
		ht_warn("%s--dump-prefix %s: %.*s is a symbolic link, which "
			"could lead the dumps elsewhere; give the real "
			"directory's path",
		    who, prefix, (int)w->len, prefix);
		break;
	case HT_SAFEDIR_OWNER:
		ht_warn("%s--dump-prefix %s: directory %.*s belongs to uid "
			"%lu, neither the target's (uid %lu) nor root, and its "
			"owner could replace the dumps; use a directory of the "
			"target's user",
		    who, prefix, (int)dl, prefix, (unsigned long)w->owner,
		    (unsigned long)uid);
		break;
	case HT_SAFEDIR_SHARED:
		ht_warn("%s--dump-prefix %s: directory %.*s is writable by "
			"other users and not sticky (mode %03o), so they could "
			"replace the dumps; use a private directory, or one "
			"with the sticky bit (chmod +t)",
		    who, prefix, (int)dl, prefix, (unsigned)(w->mode & 07777));
		break;
	case HT_SAFEDIR_NOTDIR:
		ht_warn("%s--dump-prefix %s: %.*s is not a directory; give "
			"the dumps' directory",
		    who, prefix, (int)w->len, prefix);
		break;
	default:
		ht_warn("%s--dump-prefix %s: directory %.*s: %s; choose a "
			"writable place for the dumps",
		    who, prefix, (int)dl, prefix, strerror(w->err));
		break;
	}
}

int
ht_dump_opts_check(const struct ht_dump_opts *o, pid_t pid)
{
	struct ht_safedir_why why;
	struct ht_proc p;
	char root[64];
	size_t dl;
	uid_t uid;
	int rootfd = -1, fd;

	if (o->prefix[0] == '\0')
		return HT_EXIT_OK;
	dl = (size_t)(strrchr(o->prefix, '/') - o->prefix);
	if (dl == 0)
		dl = 1; /* "/" */
	if (pid == 0)
		uid = geteuid();
	else {
		/* Its root, in its mount namespace: /proc/PID/root leads
		 * there, and the walk never follows a link that could lead
		 * back out. */
		if (ht_proc_path(pid, "root", root, sizeof(root)) != 0 ||
		    ht_proc_read(pid, &p) != 0 ||
		    (rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return HT_EXIT_OK;
		uid = p.fsuid;
	}
	fd = ht_safedir_open(rootfd, o->prefix, dl, uid,
	    pid == 0 ? HT_SAFEDIR_WRITE : 0, &why);
	if (rootfd >= 0)
		close(rootfd);
	if (fd >= 0) {
		close(fd);
		return HT_EXIT_OK;
	}
	/* The target's own lookups and rights may not be ours: only what
	 * holds for anyone is said here, the rest by the agent. */
	if (pid != 0 && why.fault != HT_SAFEDIR_SYMLINK &&
	    why.fault != HT_SAFEDIR_OWNER && why.fault != HT_SAFEDIR_SHARED)
		return HT_EXIT_OK;
	refusal(o->prefix, dl, pid, uid, &why);
	return HT_EXIT_FAIL;
}
