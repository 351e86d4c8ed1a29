/*
 * The dumps the agent writes by itself (dump.h): their settings, their
 * triggers, their directory and their file names.  The files are snapshots
 * (snapshot.h), each made unseen and named whole (file.h).
 */
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "file.h"
#include "guard.h"
#include "lock.h"
#include "prim.h"
#include "profile.h"
#include "proto.h"
#include "safedir.h"
#include "session.h"
#include "snapshot.h"

/* How many names a dump tries (SEQ, SEQ + 1, ...) before it gives up on
 * names someone else took first. */
#define NAME_TRIES 64
/* The longest last component of a prefix: room for .PID.SEQ.heap (20
 * digits each at most) within NAME_MAX. */
#define BASE_MAX   (NAME_MAX - 47)

/* A directory the agent holds open (O_PATH), and its identity: as with
 * wake_fd, a number the program closed and reused must never be taken for
 * ours, written into or closed. */
struct dir {
	int fd;
	dev_t dev;
	ino_t ino;
};

/* The eventfd that wakes the agent's thread, and its identity: the program
 * may close "its" descriptors, and a number that now names one of its
 * files must never be written to. */
static int wake_fd = -1;
static dev_t wake_dev;
static ino_t wake_ino;

/* The running session's dumps; guarded by ht_lock_global. */
static struct {
	struct ht_dump_cfg cfg;
	int armed;
	double alloc_est; /* bytes, by the samples */
	double next_every;
	int every_due;
	uint64_t next_interval; /* CLOCK_MONOTONIC ms */
	uint64_t next_rss_check;
	uint64_t rss_next; /* bytes */
	uint64_t failures;
	uint64_t last_failure;
	/* The prefix's directory, checked (src/safedir.h) and kept open for
	 * the session, so that its dumps go where the start was allowed to
	 * put them whatever becomes of the path; fd -1 until opened. */
	struct dir dir;
	uint64_t gen; /* counts the armings */
} ds = { .dir = { -1, 0, 0 } };
/* The directory the last ht_dump_check_prefix opened, for the ht_dump_arm
 * that follows it (each caller checks a prefix, then arms it); guarded by
 * ht_lock_global. */
static struct {
	struct dir dir;
	char prefix[HT_DUMP_PREFIX_MAX + 1];
} checked = { .dir = { -1, 0, 0 } };
/* SEQ of the next file: per process, never reset, so that no file of a
 * session replaces one of an earlier session. */
static uint64_t seq = 1;
/* What became of the dumps, for STATUS: a dump that fails (its directory
 * gone, a full disk, EACCES) is said nowhere else.  Guarded by
 * ht_lock_global. */
static struct {
	uint64_t n;
	uint64_t ns; /* CLOCK_REALTIME */
	int err;
	char path[HT_PROTO_MAX_DUMP_PATH + 1];
} outcome[2]; /* written, failed */

/* One dump: its name and where it goes, taken under the lock, written
 * outside it. */
struct job {
	char base[BASE_MAX + 1]; /* the prefix's last component */
	char name[NAME_MAX + 1];
	char prefix[HT_DUMP_PREFIX_MAX + 1]; /* opened when dirfd is -1 */
	int dirfd;			     /* ours: a duplicate, or -1 */
	uint64_t gen;
	uint64_t threshold;
};

static int
dir_ours(const struct dir *d)
{
	struct stat st;
	int fl;

	return d->fd >= 0 && fstat(d->fd, &st) == 0 && st.st_dev == d->dev &&
	    st.st_ino == d->ino && (fl = fcntl(d->fd, F_GETFL)) != -1 &&
	    (fl & O_PATH) != 0;
}

/* Close d if it is still ours, and forget it. */
static void
dir_close(struct dir *d)
{
	int saved = errno;

	if (dir_ours(d))
		close(d->fd);
	d->fd = -1;
	errno = saved;
}

/* Create the eventfd that wakes the agent's thread, if there is none.
 * Without it, every-bytes dumps wait for the thread's next tick (a second
 * at most): not a reason to fail. */
static void
open_wake(void)
{
	struct stat st;
	int fd;

	if (wake_fd >= 0 || (fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return;
	if (fstat(fd, &st) == 0) {
		wake_dev = st.st_dev;
		wake_ino = st.st_ino;
		wake_fd = fd;
	} else
		close(fd);
}

int
ht_dump_init(void)
{
	if (ht_snapshot_init() != 0)
		return -1;
	open_wake();
	return 0;
}

static int
wake_ours(void)
{
	struct stat st;

	return wake_fd >= 0 && fstat(wake_fd, &st) == 0 &&
	    st.st_dev == wake_dev && st.st_ino == wake_ino;
}

void
ht_dump_wake(void)
{
	uint64_t one = 1;
	int saved = errno;

	if (wake_ours() && write(wake_fd, &one, sizeof(one)) < 0) {
		/* Full counter or gone: the thread looks at its next tick
		 * anyway. */
	}
	errno = saved;
}

int
ht_dump_wake_fd(void)
{
	return wake_ours() ? wake_fd : -1;
}

void
ht_dump_wake_clear(void)
{
	uint64_t v;

	if (wake_ours() && read(wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was pending. */
	}
}

/* With the lock held: the triggers of the armed settings, from zero. */
static void
reset_triggers(void)
{
	uint64_t now = ht_prim_mono_ms();

	ds.alloc_est = 0;
	ds.next_every = (double)ds.cfg.every_bytes;
	ds.every_due = 0;
	ds.next_interval = now + ds.cfg.interval_ms;
	ds.next_rss_check = now;
	ds.rss_next = ds.cfg.at_rss_bytes;
	ds.failures = 0;
	ds.last_failure = 0;
}

void
ht_dump_fork_child(int keep)
{
	/* The eventfd is the parent's too (one object, two descriptors): a
	 * child that wrote to it would wake its parent's thread. */
	if (wake_fd >= 0 && wake_ours())
		close(wake_fd);
	wake_fd = -1;
	dir_close(&checked.dir);
	memset(outcome, 0, sizeof(outcome));
	if (keep && ds.armed) {
		/* The parent's directory, still open here, checked when the
		 * parent armed it; the names carry this pid, so SEQ starts
		 * again at 1. */
		open_wake();
		reset_triggers();
		seq = 1;
		return;
	}
	dir_close(&ds.dir);
}

/* The length of prefix's directory: up to its last slash, "/" itself. */
static size_t
dir_len(const char *prefix)
{
	size_t d;

	for (d = strlen(prefix); prefix[d - 1] != '/'; d--)
		;
	return d > 1 ? d - 1 : 1;
}

/* Open and check the directory of the absolute prefix (safedir.h's
 * flags) into *d, as this process writes its files.  Returns 0, or -1 with
 * errno set. */
static int
dir_open(const char *prefix, int flags, struct dir *d)
{
	struct ht_safedir_why why;
	struct stat st;
	int fd;

	fd = ht_safedir_open(-1, prefix, dir_len(prefix), geteuid(), flags,
	    &why);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		why.err = errno;
		close(fd);
		errno = why.err;
		return -1;
	}
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	return 0;
}

int
ht_dump_check_prefix(const char *prefix)
{
	size_t len = strlen(prefix);
	struct dir d, old;

	if (prefix[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (len > HT_DUMP_PREFIX_MAX ||
	    strlen(strrchr(prefix, '/') + 1) > BASE_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* As the process opens files (its effective ids), in its mount
	 * namespace: the target's view of the path. */
	if (dir_open(prefix, HT_SAFEDIR_WRITE, &d) != 0)
		return -1;
	ht_lock_acquire(&ht_lock_global);
	old = checked.dir;
	checked.dir = d;
	memcpy(checked.prefix, prefix, len + 1);
	ht_lock_release(&ht_lock_global);
	dir_close(&old);
	return 0;
}

static char *
put_num(char *p, uint64_t v)
{
	char digits[24];
	size_t n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/* With the lock held: the next file's name, base.PID.SEQ.heap, into
 * j->name. */
static void
next_name(struct job *j)
{
	size_t len = strlen(j->base);
	char *p = j->name;

	memcpy(p, j->base, len);
	p += len;
	*p++ = '.';
	p = put_num(p, (uint64_t)getpid());
	*p++ = '.';
	p = put_num(p, seq++);
	memcpy(p, ".heap", 6);
}

/* With the lock held and a prefix armed: the next dump into *j: its name
 * (the prefix's last component, "heaptool" for a prefix that names a
 * directory), a duplicate of the session's directory (the session may
 * close its own while the dump is written), the settings. */
static void
take_job(struct job *j)
{
	const char *base = strrchr(ds.cfg.prefix, '/') + 1;
	size_t len = strlen(base);

	if (len == 0) {
		base = "heaptool";
		len = 8;
	} else if (len > BASE_MAX)
		len = BASE_MAX; /* ht_dump_check_prefix refused it */
	memcpy(j->base, base, len);
	j->base[len] = '\0';
	next_name(j);
	j->gen = ds.gen;
	j->threshold = ds.cfg.threshold_bytes;
	if (ds.dir.fd >= 0 && !dir_ours(&ds.dir))
		ds.dir.fd = -1; /* the program closed it: not ours to close */
	j->dirfd = ds.dir.fd >= 0 ? fcntl(ds.dir.fd, F_DUPFD_CLOEXEC, 0) : -1;
	/* Opened by the dump when dirfd is -1; its path, for STATUS. */
	memcpy(j->prefix, ds.cfg.prefix, sizeof(j->prefix));
}

/* Without the lock: count dump j as written (err 0) or failed (err its
 * errno), its path the prefix's directory and its name. */
static void
record(const struct job *j, int err)
{
	size_t d = dir_len(j->prefix), n = strlen(j->name);
	uint64_t now = ht_prim_now_ns();
	int k = err != 0;

	if (d > HT_PROTO_MAX_DUMP_PATH - 1)
		d = HT_PROTO_MAX_DUMP_PATH - 1;
	if (n > HT_PROTO_MAX_DUMP_PATH - 1 - d)
		n = HT_PROTO_MAX_DUMP_PATH - 1 - d;
	ht_lock_acquire(&ht_lock_global);
	outcome[k].n++;
	outcome[k].ns = now;
	outcome[k].err = err;
	memcpy(outcome[k].path, j->prefix, d);
	if (outcome[k].path[d - 1] != '/') /* "/" is its own */
		outcome[k].path[d++] = '/';
	memcpy(outcome[k].path + d, j->name, n);
	outcome[k].path[d + n] = '\0';
	ht_lock_release(&ht_lock_global);
}

void
ht_dump_outcomes(struct ht_status *st)
{
	ht_lock_acquire(&ht_lock_global);
	st->dumps_written = outcome[0].n;
	st->dump_written_ns = outcome[0].ns;
	memcpy(st->dump_written, outcome[0].path, sizeof(st->dump_written));
	st->dumps_failed = outcome[1].n;
	st->dump_failed_ns = outcome[1].ns;
	st->dump_failed_errno = (uint32_t)outcome[1].err;
	memcpy(st->dump_failed, outcome[1].path, sizeof(st->dump_failed));
	ht_lock_release(&ht_lock_global);
}

/* Without the lock, guard set: write the dump j with flags.  Returns 0, or
 * -1 with errno set. */
static int
run_job(struct job *j, uint32_t flags)
{
	struct ht_file f;
	struct dir d;
	int i, rc, saved;

	if (j->dirfd < 0) {
		/* The session's first dump, or the program closed our
		 * descriptor: open the directory now, checked as at the
		 * start, and keep it for the session's next dumps. */
		if (dir_open(j->prefix, 0, &d) != 0) {
			saved = errno;
			record(j, saved);
			errno = saved;
			return -1;
		}
		j->dirfd = d.fd;
		ht_lock_acquire(&ht_lock_global);
		if (ds.armed && ds.gen == j->gen && ds.dir.fd < 0 &&
		    (d.fd = fcntl(j->dirfd, F_DUPFD_CLOEXEC, 0)) >= 0)
			ds.dir = d;
		ht_lock_release(&ht_lock_global);
	}
	rc = ht_snapshot_file(&f, j->dirfd, j->name, flags, j->threshold);
	for (i = 1; rc == 0 && ht_file_publish(&f, j->name, 0) != 0; i++) {
		/* A name someone took first (anyone may create in a sticky
		 * directory) is theirs: never follow or replace it, take
		 * the next SEQ. */
		if (errno != EEXIST || i == NAME_TRIES) {
			ht_file_discard(&f);
			rc = -1;
			break;
		}
		ht_lock_acquire(&ht_lock_global);
		next_name(j);
		ht_lock_release(&ht_lock_global);
	}
	saved = errno;
	close(j->dirfd);
	record(j, rc == 0 ? 0 : saved);
	errno = saved;
	return rc;
}

int
ht_dump_arm(const struct ht_dump_cfg *cfg)
{
	ht_dump_disarm();
	if (cfg == NULL || cfg->prefix[0] == '\0') {
		dir_close(&checked.dir);
		return 0;
	}
	ds.cfg = *cfg;
	ds.armed = 1;
	ds.gen++;
	/* The directory its check opened, if that was of this prefix; else
	 * the first dump opens it. */
	if (checked.dir.fd >= 0 && strcmp(checked.prefix, cfg->prefix) == 0) {
		ds.dir = checked.dir;
		checked.dir.fd = -1;
	} else
		dir_close(&checked.dir);
	reset_triggers();
	return 1;
}

void
ht_dump_disarm(void)
{
	ds.armed = 0;
	ds.every_due = 0;
	ds.cfg.prefix[0] = '\0';
	dir_close(&ds.dir);
}

int
ht_dump_armed(struct ht_dump_cfg *cfg)
{
	if (!ds.armed)
		return 0;
	*cfg = ds.cfg;
	return 1;
}

/* With the lock held: a dump may be written for the session now. */
static int
live(void)
{
	return ds.armed && ht_session.state == HT_STATE_RUNNING &&
	    ht_session.pid == getpid();
}

int
ht_dump_note_alloc(double bytes)
{
	double n;

	if (!ds.armed || ds.cfg.every_bytes == 0)
		return 0;
	ds.alloc_est += bytes;
	if (ds.alloc_est < ds.next_every)
		return 0;
	/* The next multiple above what was allocated: a sample that
	 * crosses several multiples at once makes one dump. */
	n = (double)(uint64_t)(ds.alloc_est / (double)ds.cfg.every_bytes);
	ds.next_every = (n + 1) * (double)ds.cfg.every_bytes;
	if (ds.every_due)
		return 0;
	ds.every_due = 1;
	return 1;
}

/* With the lock held: the earliest deadline of the armed timers. */
static uint64_t
next_deadline(void)
{
	uint64_t next = UINT64_MAX;

	if (!live())
		return next;
	if (ds.cfg.interval_ms != 0)
		next = ds.next_interval;
	if (ds.cfg.at_rss_bytes != 0 && ds.next_rss_check < next)
		next = ds.next_rss_check;
	return next;
}

/* Set by agent.c (ht_dump_set_collect). */
static void (*collect_hook)(void);

void
ht_dump_set_collect(void (*collect)(void))
{
	collect_hook = collect;
}

uint64_t
ht_dump_tick(uint64_t now)
{
	static struct job j; /* large; the agent's thread only */
	uint64_t rss = 0, next;
	uint32_t due = 0;
	int check_rss = 0;

	ht_lock_acquire(&ht_lock_global);
	if (!live()) {
		ds.every_due = 0;
		ht_lock_release(&ht_lock_global);
		return UINT64_MAX;
	}
	if (ds.every_due) {
		ds.every_due = 0;
		due |= HT_META_ON_EVERY;
	}
	if (ds.cfg.interval_ms != 0 && now >= ds.next_interval) {
		due |= HT_META_ON_INTERVAL;
		ds.next_interval += ds.cfg.interval_ms;
		if (ds.next_interval <= now) /* fell behind: no burst */
			ds.next_interval = now + ds.cfg.interval_ms;
	}
	if (ds.cfg.at_rss_bytes != 0 && now >= ds.next_rss_check) {
		ds.next_rss_check = now + HT_DUMP_RSS_MS;
		check_rss = 1;
	}
	ht_lock_release(&ht_lock_global);

	/* Outside the lock: it reads a file. */
	if (check_rss)
		rss = ht_prim_rss_bytes();
	ht_lock_acquire(&ht_lock_global);
	if (check_rss && live() && rss != 0 && rss >= ds.rss_next) {
		due |= HT_META_ON_RSS;
		/* Then at each further 10%: one dump however far RSS
		 * jumped. */
		while (ds.rss_next <= rss)
			ds.rss_next += ds.rss_next / 10 > 0 ? ds.rss_next / 10 :
							      1;
	}
	if (due != 0 && live())
		take_job(&j);
	else
		due = 0;
	ht_lock_release(&ht_lock_global);

	if (due != 0) {
		/* The allocator's own samples as they are now (the agent's
		 * thread). */
		if (collect_hook != NULL)
			collect_hook();
		(void)run_job(&j, due);
	}

	ht_lock_acquire(&ht_lock_global);
	next = next_deadline();
	ht_lock_release(&ht_lock_global);
	return next;
}

void
ht_dump_on_failure(void)
{
	struct job j;
	uint64_t now;
	int saved, go = 0;

	if (ht_guard_held())
		return; /* the agent's own work, or re-entered */
	saved = errno;
	ht_guard_enter();
	now = ht_prim_mono_ms();
	ht_lock_acquire(&ht_lock_global);
	/* A program that probes with impossible sizes must not fill the
	 * disk: one a second, HT_DUMP_MAX_FAILURES a session. */
	if (live() && ds.failures < HT_DUMP_MAX_FAILURES &&
	    (ds.failures == 0 || now - ds.last_failure >= 1000)) {
		ds.failures++;
		ds.last_failure = now;
		take_job(&j);
		go = 1;
	}
	ht_lock_release(&ht_lock_global);
	if (go)
		(void)run_job(&j, HT_META_ON_FAILURE);
	ht_guard_leave();
	errno = saved;
}

static int
dump_named(uint32_t flags)
{
	struct job j;
	int go = 0;

	ht_lock_acquire(&ht_lock_global);
	if (live()) {
		take_job(&j);
		go = 1;
	}
	ht_lock_release(&ht_lock_global);
	if (!go) {
		errno = ENOENT;
		return -1;
	}
	if (collect_hook != NULL)
		collect_hook();
	return run_job(&j, flags);
}

void
ht_dump_at_exit(void)
{
	(void)dump_named(HT_META_AT_EXIT);
}

int
ht_dump_now(uint32_t flags)
{
	return dump_named(flags);
}
