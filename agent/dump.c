/*
 * Snapshot the tables into the profile format, and the dumps the agent
 * writes by itself (dump.h): their settings, triggers and file names.
 */
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>	/* rename */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "hooks.h"
#include "lock.h"
#include "mem.h"
#include "profile.h"
#include "sampler.h"
#include "session.h"
#include "tables.h"

#define DUMP_BUF	(64 * 1024)

static uint8_t	*dump_buf;

/* The eventfd that wakes the agent's thread, and its identity: the program
 * may close "its" descriptors, and a number that now names one of its
 * files must never be written to. */
static int	wake_fd = -1;
static dev_t	wake_dev;
static ino_t	wake_ino;

/* The running session's dumps; guarded by ht_lock_global. */
static struct {
	struct ht_dump_cfg	cfg;
	int			armed;
	double			alloc_est;	/* bytes, by the samples */
	double			next_every;
	int			every_due;
	uint64_t		next_interval;	/* CLOCK_MONOTONIC ms */
	uint64_t		next_rss_check;
	uint64_t		rss_next;	/* bytes */
	uint64_t		failures;
	uint64_t		last_failure;
} ds;
/* SEQ of the next file: per process, never reset, so that no file of a
 * session replaces one of an earlier session. */
static uint64_t	seq = 1;

static uint64_t
mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
ht_dump_init(void)
{
	struct stat	st;
	int		fd;

	if (dump_buf == NULL)
		dump_buf = ht_mem_map(DUMP_BUF);
	if (dump_buf == NULL)
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
	struct stat	st;

	return wake_fd >= 0 && fstat(wake_fd, &st) == 0 &&
	    st.st_dev == wake_dev && st.st_ino == wake_ino;
}

void
ht_dump_wake(void)
{
	uint64_t	one = 1;
	int		saved = errno;

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
	uint64_t	v;

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

static uint64_t
round_est(double x)
{
	return x < 0.5 ? 0 : (uint64_t)(x + 0.5);
}

static int
write_all(void *ctx, const void *buf, size_t len)
{
	int		 fd = *(int *)ctx;
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read a small /proc file into buf (NUL-terminated); "" on failure. */
static void
read_proc(const char *path, char *buf, size_t len)
{
	int	fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t	n = -1;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
}

/* The process's RSS in bytes, from /proc/self/statm; 0 if unknown. */
static uint64_t
rss_bytes(void)
{
	char		 buf[256];
	const char	*q;
	uint64_t	 resident = 0;

	read_proc("/proc/self/statm", buf, sizeof(buf));
	/* statm: size resident shared ...; in pages. */
	if ((q = strchr(buf, ' ')) == NULL)
		return 0;
	for (q++; *q >= '0' && *q <= '9'; q++)
		resident = resident * 10 + (uint64_t)(*q - '0');
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void
fill_process(struct ht_meta *m)
{
	struct mallinfo2	mi = mallinfo2();
	char			buf[256], *nl;

	m->heap_inuse_bytes = mi.uordblks + mi.hblkhd;
	m->heap_free_bytes = mi.fordblks;
	m->heap_mmap_bytes = mi.hblkhd;
	m->rss_bytes = rss_bytes();
	read_proc("/proc/self/comm", buf, sizeof(buf));
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	memcpy(m->command, buf, sizeof(buf) < sizeof(m->command) ?
	    sizeof(buf) : sizeof(m->command));
	m->command[sizeof(m->command) - 1] = '\0';
}

static void
site_record(const struct ht_site *s, struct ht_site_rec *r)
{
	const uintptr_t	*f = ht_sites_frames(s);
	int		 cur = s->peak_gen == ht_session.peak_gen;
	uint32_t	 i;

	r->inuse_bytes = round_est(s->st.inuse_bytes);
	r->inuse_objects = round_est(s->st.inuse_objects);
	r->alloc_bytes = round_est(s->st.alloc_bytes);
	r->alloc_objects = round_est(s->st.alloc_objects);
	r->samples = s->st.samples;
	r->live_samples = s->st.live_samples;
	r->inuse_var = s->st.inuse_var > 0 ? s->st.inuse_var : 0;
	r->alloc_var = s->st.alloc_var > 0 ? s->st.alloc_var : 0;
	r->peak_inuse_bytes = round_est(cur ? s->peak_bytes :
	    s->st.inuse_bytes);
	r->peak_inuse_objects = round_est(cur ? s->peak_objects :
	    s->st.inuse_objects);
	r->nframes = s->nframes;
	for (i = 0; i < s->nframes; i++)
		r->frames[i] = f[i];
	r->folded = 0;
}

/* Add a site's (rounded) figures to the folded record: the file's totals,
 * sums of its SITE records, stay what they would be unfolded. */
static void
fold(struct ht_site_rec *acc, const struct ht_site_rec *r)
{
	acc->inuse_bytes += r->inuse_bytes;
	acc->inuse_objects += r->inuse_objects;
	acc->alloc_bytes += r->alloc_bytes;
	acc->alloc_objects += r->alloc_objects;
	acc->samples += r->samples;
	acc->live_samples += r->live_samples;
	acc->inuse_var += r->inuse_var;
	acc->alloc_var += r->alloc_var;
	acc->peak_inuse_bytes += r->peak_inuse_bytes;
	acc->peak_inuse_objects += r->peak_inuse_objects;
	acc->folded++;
}

int
ht_dump_fd(int fd, uint32_t flags, uint64_t threshold)
{
	static struct ht_meta		meta;
	static struct ht_module_rec	mod;
	static struct ht_site_rec	site, folded;
	static struct ht_thread_rec	thr;
	struct ht_pwriter		w;
	size_t				i;
	int				rc;

	if (dump_buf == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* The records are static (they are large) and so is the buffer:
	 * dumps are serialized by the lock. */
	ht_lock_acquire(&ht_lock_global);
	memset(&meta, 0, sizeof(meta));
	fill_process(&meta);
	meta.pid = (uint64_t)getpid();
	meta.epoch = ht_session.epoch;
	meta.rate = ht_session.rate;
	meta.state = ht_session.state;
	meta.flags = flags;
	meta.start_ns = ht_session.start_ns;
	meta.end_ns = ht_session.state == HT_STATE_RUNNING ? ht_now_ns() :
	    ht_session.end_ns;
	meta.peak_inuse_bytes = round_est(ht_session.peak_bytes);
	meta.peak_ns = ht_session.peak_ns;
	meta.overhead_bytes = ht_mem_overhead();
	meta.dropped_samples = ht_session.dropped;
	meta.samples = ht_session.samples;
	meta.live_samples = ht_live_count();

	ht_pw_init(&w, dump_buf, DUMP_BUF, write_all, &fd);
	ht_pw_meta(&w, &meta);
	for (i = 0; i < ht_session_module_count(); i++) {
		ht_session_module_get(i, &mod);
		ht_pw_module(&w, &mod);
	}
	for (i = 0; i < ht_threads_count(); i++) {
		const struct ht_thread	*t = ht_threads_get(i);

		memset(&thr, 0, sizeof(thr));
		thr.tid = t->tid;
		memcpy(thr.name, t->name, sizeof(thr.name));
		thr.inuse_bytes = round_est(t->st.inuse_bytes);
		thr.inuse_objects = round_est(t->st.inuse_objects);
		thr.alloc_bytes = round_est(t->st.alloc_bytes);
		thr.alloc_objects = round_est(t->st.alloc_objects);
		thr.samples = t->st.samples;
		ht_pw_thread(&w, &thr);
	}
	memset(&folded, 0, sizeof(folded));
	for (i = 0; i < ht_sites_count(); i++) {
		site_record(ht_sites_get(i), &site);
		if (site.inuse_bytes < threshold &&
		    site.alloc_bytes < threshold)
			fold(&folded, &site);
		else
			ht_pw_site(&w, &site);
	}
	if (folded.folded > 0)
		ht_pw_site(&w, &folded);
	rc = ht_pw_finish(&w);
	ht_lock_release(&ht_lock_global);
	if (rc != 0 && errno == 0)
		errno = EIO;
	return rc;
}

int
ht_dump_path(const char *path, uint32_t flags, uint64_t threshold)
{
	char	tmp[4096 + 32], digits[24];
	size_t	len = strlen(path), nd = 0;
	long	pid = (long)getpid();
	int	fd, saved;

	/* path.tmp.PID, built by hand: no stdio inside the target. */
	if (len > 4096) {
		errno = ENAMETOOLONG;
		return -1;
	}
	do
		digits[nd++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmp.", 5);
	len += 5;
	while (nd > 0)
		tmp[len++] = digits[--nd];
	tmp[len] = '\0';
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		return -1;
	if (ht_dump_fd(fd, flags, threshold) != 0 || close(fd) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	if (rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

int
ht_dump_check_prefix(const char *prefix)
{
	char	dir[HT_DUMP_PREFIX_MAX + 1];
	size_t	len = strlen(prefix), d;

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
	char	digits[24];
	size_t	n = 0;

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
	size_t	len = strlen(ds.cfg.prefix);
	char	*p = buf;

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

void
ht_dump_arm(const struct ht_dump_cfg *cfg)
{
	uint64_t	now = mono_ms();

	ht_dump_disarm();
	if (cfg == NULL || cfg->prefix[0] == '\0')
		return;
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
	ht_hooks_set_slow(1);
}

void
ht_dump_disarm(void)
{
	if (ds.armed)
		ht_hooks_set_slow(0);
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
	double	n;

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
	uint64_t	next = UINT64_MAX;

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
	char		path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t	rss = 0, threshold = 0, next;
	uint32_t	due = 0;
	int		check_rss = 0;

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
		if (ds.next_interval <= now)	/* fell behind: no burst */
			ds.next_interval = now + ds.cfg.interval_ms;
	}
	if (ds.cfg.at_rss_bytes != 0 && now >= ds.next_rss_check) {
		ds.next_rss_check = now + HT_DUMP_RSS_MS;
		check_rss = 1;
	}
	ht_lock_release(&ht_lock_global);

	/* Outside the lock: it reads a file. */
	if (check_rss)
		rss = rss_bytes();
	ht_lock_acquire(&ht_lock_global);
	if (check_rss && live() && rss != 0 && rss >= ds.rss_next) {
		due |= HT_META_ON_RSS;
		/* Then at each further 10%: one dump however far RSS
		 * jumped. */
		while (ds.rss_next <= rss)
			ds.rss_next += ds.rss_next / 10 > 0 ?
			    ds.rss_next / 10 : 1;
	}
	if (due != 0 && live()) {
		next_path(path);
		threshold = ds.cfg.threshold_bytes;
	} else
		due = 0;
	ht_lock_release(&ht_lock_global);

	if (due != 0)
		(void)ht_dump_path(path, due, threshold);

	ht_lock_acquire(&ht_lock_global);
	next = next_deadline();
	ht_lock_release(&ht_lock_global);
	return next;
}

void
ht_dump_on_failure(void)
{
	struct ht_tls	*t = &ht_tls;
	char		 path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t	 threshold = 0, now;
	int		 saved, go = 0;

	if (t->guard)
		return;	/* the agent's own work, or re-entered */
	saved = errno;
	t->guard = 1;
	now = mono_ms();
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
		(void)ht_dump_path(path, HT_META_ON_FAILURE, threshold);
	t->guard = 0;
	errno = saved;
}

static int
dump_named(uint32_t flags)
{
	char		path[HT_DUMP_PREFIX_MAX + 64];
	uint64_t	threshold = 0;
	int		go = 0;

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
	return ht_dump_path(path, flags, threshold);
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
