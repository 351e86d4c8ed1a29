/*
 * The dumps the agent writes by itself (dump.h): their settings, their
 * triggers and their file names.  The files are snapshots (snapshot.h).
 */
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "guard.h"
#include "lock.h"
#include "prim.h"
#include "profile.h"
#include "session.h"
#include "snapshot.h"

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
} ds;
/* SEQ of the next file: per process, never reset, so that no file of a
 * session replaces one of an earlier session. */
static uint64_t seq = 1;

int
ht_dump_init(void)
{
	struct stat st;
	int fd;

	if (ht_snapshot_init() != 0)
		return -1;
	/* Without the eventfd, every-bytes dumps wait for the thread's next
	 * tick (a second at most): not a reason to fail. */
	if (wake_fd < 0 && (fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0) {
		if (fstat(fd, &st) == 0) {
			wake_dev = st.st_dev;
			wake_ino = st.st_ino;
			wake_fd = fd;
		} else
			close(fd);
	}
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

void
ht_dump_fork_child(void)
{
	if (wake_fd >= 0 && wake_ours())
		close(wake_fd);
	wake_fd = -1;
}

int
ht_dump_check_prefix(const char *prefix)
{
	char dir[HT_DUMP_PREFIX_MAX + 1];
	size_t len = strlen(prefix), d;

	if (prefix[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (len > HT_DUMP_PREFIX_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (d = len; prefix[d - 1] != '/'; d--)
		;
	/* The directory: everything up to the last slash ("/" itself). */
	memcpy(dir, prefix, d);
	dir[d > 1 ? d - 1 : 1] = '\0';
	/* As the process opens files (its effective ids), in its mount
	 * namespace: the target's view of the path. */
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
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

/* With the lock held and a prefix armed: the next file's name into
 * buf[HT_DUMP_PREFIX_MAX + 64]: P.PID.SEQ.heap, or P/heaptool.PID.SEQ.heap
 * for a prefix that names a directory. */
static void
next_path(char *buf)
{
	size_t len = strlen(ds.cfg.prefix);
	char *p = buf;

	memcpy(p, ds.cfg.prefix, len);
	p += len;
	if (len > 0 && ds.cfg.prefix[len - 1] == '/') {
		memcpy(p, "heaptool", 8);
		p += 8;
	}
	*p++ = '.';
	p = put_num(p, (uint64_t)getpid());
	*p++ = '.';
	p = put_num(p, seq++);
	memcpy(p, ".heap", 6);
}

int
ht_dump_arm(const struct ht_dump_cfg *cfg)
{
	uint64_t now = ht_prim_mono_ms();

	ht_dump_disarm();
	if (cfg == NULL || cfg->prefix[0] == '\0')
		return 0;
	ds.cfg = *cfg;
	ds.armed = 1;
	ds.alloc_est = 0;
	ds.next_every = (double)cfg->every_bytes;
	ds.every_due = 0;
	ds.next_interval = now + cfg->interval_ms;
	ds.next_rss_check = now;
	ds.rss_next = cfg->at_rss_bytes;
	ds.failures = 0;
	ds.last_failure = 0;
	return 1;
}

void
ht_dump_disarm(void)
{
	ds.armed = 0;
	ds.every_due = 0;
	ds.cfg.prefix[0] = '\0';
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

uint64_t
ht_dump_tick(uint64_t now)
{
	char path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t rss = 0, threshold = 0, next;
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
	if (due != 0 && live()) {
		next_path(path);
		threshold = ds.cfg.threshold_bytes;
	} else
		due = 0;
	ht_lock_release(&ht_lock_global);

	if (due != 0)
		(void)ht_snapshot_path(path, due, threshold);

	ht_lock_acquire(&ht_lock_global);
	next = next_deadline();
	ht_lock_release(&ht_lock_global);
	return next;
}

void
ht_dump_on_failure(void)
{
	char path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t threshold = 0, now;
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
		next_path(path);
		threshold = ds.cfg.threshold_bytes;
		go = 1;
	}
	ht_lock_release(&ht_lock_global);
	if (go)
		(void)ht_snapshot_path(path, HT_META_ON_FAILURE, threshold);
	ht_guard_leave();
	errno = saved;
}

static int
dump_named(uint32_t flags)
{
	char path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t threshold = 0;
	int go = 0;

	ht_lock_acquire(&ht_lock_global);
	if (live()) {
		next_path(path);
		threshold = ds.cfg.threshold_bytes;
		go = 1;
	}
	ht_lock_release(&ht_lock_global);
	if (!go) {
		errno = ENOENT;
		return -1;
	}
	return ht_snapshot_path(path, flags, threshold);
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
