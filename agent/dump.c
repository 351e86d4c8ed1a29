/* Snapshot the tables into the profile format. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>	/* rename */
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "lock.h"
#include "mem.h"
#include "profile.h"
#include "sampler.h"
#include "session.h"
#include "tables.h"

#define DUMP_BUF	(64 * 1024)

static uint8_t	*dump_buf;

int
ht_dump_init(void)
{
	if (dump_buf == NULL)
		dump_buf = ht_mem_map(DUMP_BUF);
	return dump_buf != NULL ? 0 : -1;
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

static void
fill_process(struct ht_meta *m)
{
	struct mallinfo2	mi = mallinfo2();
	char			buf[256], *nl;
	const char		*q;
	uint64_t		 resident = 0;

	m->heap_inuse_bytes = mi.uordblks + mi.hblkhd;
	m->heap_free_bytes = mi.fordblks;
	m->heap_mmap_bytes = mi.hblkhd;
	read_proc("/proc/self/statm", buf, sizeof(buf));
	/* statm: size resident shared ...; in pages. */
	q = strchr(buf, ' ');
	if (q != NULL) {
		for (q++; *q >= '0' && *q <= '9'; q++)
			resident = resident * 10 + (uint64_t)(*q - '0');
		m->rss_bytes = resident * (uint64_t)sysconf(_SC_PAGESIZE);
	}
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
}

int
ht_dump_fd(int fd, uint32_t flags)
{
	static struct ht_meta		meta;
	static struct ht_module_rec	mod;
	static struct ht_site_rec	site;
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
	ht_lock_acquire(&ht_agent_lock);
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
	for (i = 0; i < ht_sites_count(); i++) {
		site_record(ht_sites_get(i), &site);
		ht_pw_site(&w, &site);
	}
	rc = ht_pw_finish(&w);
	ht_lock_release(&ht_agent_lock);
	if (rc != 0 && errno == 0)
		errno = EIO;
	return rc;
}

int
ht_dump_path(const char *path, uint32_t flags)
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
	if (ht_dump_fd(fd, flags) != 0 || close(fd) != 0) {
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
