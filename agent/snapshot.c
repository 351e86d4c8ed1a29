/*
 * Snapshots of the session in the profile format (snapshot.h).
 * The encoding writes through one buffer into the descriptor as it goes,
 * so a profile of any size needs no more memory than that.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "allocators.h"
#include "allocnames.h"
#include "coverage.h"
#include "file.h"
#include "lock.h"
#include "mem.h"
#include "modules.h"
#include "prim.h"
#include "profile.h"
#include "session.h"
#include "snapshot.h"
#include "tables.h"
#include "timeline.h"
#include "tags.h"

#define ENC_BUF (64 * 1024)

static uint8_t *enc_buf;
pid_t ht_snapshot_launched;

int
ht_snapshot_init(void)
{
	if (enc_buf == NULL)
		enc_buf = ht_mem_map(ENC_BUF);
	return enc_buf == NULL ? -1 : 0;
}

static void
close_keep_errno(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

static uint64_t
round_est(double x)
{
	return x < 0.5 ? 0 : (uint64_t)(x + 0.5);
}

static int
write_all(void *ctx, const void *buf, size_t len)
{
	int fd = *(int *)ctx;
	const char *p = buf;
	ssize_t n;

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

/* The process's figures.  In a signal handler (in_signal) the allocator
 * is not asked: mallinfo2 takes every arena's lock, which the interrupted
 * thread may hold (a crash inside malloc), and its figures stay 0,
 * unknown. */
static void
fill_process(struct ht_meta *m, int in_signal)
{
	struct mallinfo2 mi;
	char buf[256];

	if (!in_signal) {
		mi = mallinfo2();
		m->heap_inuse_bytes = mi.uordblks + mi.hblkhd;
		m->heap_free_bytes = mi.fordblks;
		m->heap_mmap_bytes = mi.hblkhd;
	}
	m->rss_bytes = ht_prim_rss_bytes();
	ht_prim_command(buf, sizeof(buf));
	memcpy(m->command, buf,
	    sizeof(buf) < sizeof(m->command) ? sizeof(buf) :
					       sizeof(m->command));
	m->command[sizeof(m->command) - 1] = '\0';
}

static void
site_record(const struct ht_site *s, struct ht_site_rec *r)
{
	const uintptr_t *f = ht_sites_frames(s);
	int cur = s->peak_gen == ht_session.peak_gen;
	uint32_t i;

	r->inuse_bytes = round_est(s->st.inuse_bytes);
	r->inuse_objects = round_est(s->st.inuse_objects);
	r->alloc_bytes = round_est(s->st.alloc_bytes);
	r->alloc_objects = round_est(s->st.alloc_objects);
	r->samples = s->st.samples;
	r->live_samples = s->st.live_samples;
	r->inuse_var = s->st.inuse_var > 0 ? s->st.inuse_var : 0;
	r->alloc_var = s->st.alloc_var > 0 ? s->st.alloc_var : 0;
	r->peak_inuse_bytes =
	    round_est(cur ? s->peak_bytes : s->st.inuse_bytes);
	r->peak_inuse_objects =
	    round_est(cur ? s->peak_objects : s->st.inuse_objects);
	r->nframes = s->nframes;
	for (i = 0; i < s->nframes; i++)
		r->frames[i] = f[i];
	r->folded = 0;
	r->tag = s->tag;
	r->kind = s->kind;
	r->temp_objects = round_est(s->temp_objects);
	r->temp_samples = s->temp_samples;
}

/* The TAG record of tag id: its name and its lines' peaks. */
/* With ht_lock_global held: the session's allocations by size, up to its
 * last bucket that is not empty (none: nbuckets 0). */
static void
sizes_record(struct ht_sizes_rec *r)
{
	uint32_t i;

	r->nbuckets = 0;
	for (i = 0; i < HT_SIZE_BUCKETS; i++) {
		r->objects[i] = round_est(ht_session.size_objects[i]);
		r->bytes[i] = round_est(ht_session.size_bytes[i]);
		if (r->objects[i] != 0 || r->bytes[i] != 0)
			r->nbuckets = i + 1;
	}
}

static void
tag_record(uint32_t id, struct ht_tag_rec *r)
{
	const struct ht_tagline *l;
	uint32_t k;

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->name = ht_tags_name(id);
	for (k = 0; k < 2; k++)
		if ((l = ht_taglines_get(id, k, 0)) != NULL) {
			r->peak_bytes[k] = round_est(l->peak_bytes);
			r->peak_objects[k] = round_est(l->peak_objects);
		}
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
	acc->temp_objects += r->temp_objects;
	acc->temp_samples += r->temp_samples;
	acc->folded++;
}

/* A site below the threshold into its line's fold (tables.h).  Returns 0,
 * or -1 when the line is missing (never grown to: the site is then written
 * as it is). */
static int
line_fold(const struct ht_site_rec *r)
{
	struct ht_tagline *l = ht_taglines_get(r->tag, r->kind, 0);
	struct ht_tagfold *f;

	if (l == NULL)
		return -1;
	f = &l->fold;
	f->v[0] += r->inuse_bytes;
	f->v[1] += r->inuse_objects;
	f->v[2] += r->alloc_bytes;
	f->v[3] += r->alloc_objects;
	f->v[4] += r->samples;
	f->v[5] += r->live_samples;
	f->v[6] += r->peak_inuse_bytes;
	f->v[7] += r->peak_inuse_objects;
	f->v[8] += r->temp_objects;
	f->v[9] += r->temp_samples;
	f->inuse_var += r->inuse_var;
	f->alloc_var += r->alloc_var;
	f->folded++;
	return 0;
}

/* The folded record of each line that has one, written, and the line's
 * fold emptied for the next snapshot. */
static void
line_folds_write(struct ht_pwriter *w, struct ht_site_rec *r)
{
	struct ht_tagline *l;
	struct ht_tagfold *f;
	size_t i, k;

	for (i = 0; i < ht_taglines_count(); i++)
		for (k = 0; k < 2; k++) {
			l = ht_taglines_get((uint32_t)i, (uint32_t)k, 0);
			if (l == NULL || l->fold.folded == 0)
				continue;
			f = &l->fold;
			memset(r, 0, sizeof(*r));
			r->inuse_bytes = f->v[0];
			r->inuse_objects = f->v[1];
			r->alloc_bytes = f->v[2];
			r->alloc_objects = f->v[3];
			r->samples = f->v[4];
			r->live_samples = f->v[5];
			r->peak_inuse_bytes = f->v[6];
			r->peak_inuse_objects = f->v[7];
			r->temp_objects = f->v[8];
			r->temp_samples = f->v[9];
			r->inuse_var = f->inuse_var;
			r->alloc_var = f->alloc_var;
			r->folded = f->folded;
			r->tag = (uint32_t)i;
			r->kind = (uint32_t)k;
			ht_pw_site(w, r);
			memset(f, 0, sizeof(*f));
		}
}

/* In a signal handler: take ht_lock_global within wait_ms, never spinning
 * longer (its holder may be a thread that will not run again soon).
 * Returns 0 with the lock held, or -1. */
static int
lock_within(uint64_t wait_ms)
{
	uint64_t deadline = ht_prim_mono_ms() + wait_ms;

	while (!ht_lock_try(&ht_lock_global)) {
		if (ht_prim_mono_ms() >= deadline)
			return -1;
		sched_yield();
	}
	return 0;
}

/* What ht_snapshot_fd and ht_snapshot_fd_signal share: in_signal says
 * which, and then locked tells the caller when the lock is held. */
static int
encode(int fd, uint32_t flags, uint64_t threshold, uint32_t sig, int in_signal,
    uint64_t wait_ms, volatile int *locked)
{
	static struct ht_meta meta;
	static struct ht_module_rec mod;
	static struct ht_site_rec site, folded;
	static struct ht_thread_rec thr;
	static struct ht_allocator_rec alloc;
	static struct ht_coverage_rec cov;
	static struct ht_tag_rec tag;
	/* Static, as the others: a snapshot may be taken on a small stack
	 * (a signal handler's); serialized by ht_lock_global. */
	static struct ht_sizes_rec sizes;
	struct ht_coverage_item it;
	struct ht_pwriter w;
	size_t i;
	int rc;

	if (enc_buf == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* The records are static (they are large) and so is the buffer:
	 * snapshots are serialized by the lock. */
	if (!in_signal)
		ht_lock_acquire(&ht_lock_global);
	else if (lock_within(wait_ms) != 0) {
		errno = EDEADLK;
		return -1;
	}
	if (ht_session.released) {
		/* Detach gave the profile back with the tables. */
		ht_lock_release(&ht_lock_global);
		errno = ESRCH;
		return -1;
	}
	if (locked != NULL)
		*locked = 1;
	memset(&meta, 0, sizeof(meta));
	fill_process(&meta, in_signal);
	meta.pid = (uint64_t)getpid();
	meta.epoch = ht_session.epoch;
	meta.rate = ht_session.rate;
	meta.state = ht_session.state;
	meta.flags = flags |
	    (ht_snapshot_launched != 0 && ht_snapshot_launched == getpid() ?
		    HT_META_LAUNCHED :
		    0);
	meta.signal = sig;
	meta.start_ns = ht_session.start_ns;
	meta.end_ns = ht_session.state == HT_STATE_RUNNING ? ht_prim_now_ns() :
							     ht_session.end_ns;
	meta.peak_inuse_bytes = round_est(ht_session.peak_bytes);
	meta.peak_ns = ht_session.peak_ns;
	meta.overhead_bytes = ht_mem_overhead();
	meta.dropped_samples = ht_session.dropped;
	meta.max_samples = ht_session.max_samples;
	meta.dropped_bytes = round_est(ht_session.dropped_bytes);
	meta.dropped_objects = round_est(ht_session.dropped_objects);
	meta.drop_why = ht_session.drop_why;
	meta.samples = ht_session.samples;
	meta.live_samples = ht_live_count() + ht_session.native_live;
	meta.backend = ht_coverage_backend();
	meta.flags |= ht_session.native_flags;
	meta.tags = ht_tags_count();
	meta.tags_refused = ht_tags_refused();
	meta.tag_cache_bytes = ht_tags_mapped();
	meta.tag_name_bytes = ht_tags_name_bytes();

	ht_pw_init(&w, enc_buf, ENC_BUF, write_all, &fd);
	ht_pw_meta(&w, &meta);
	for (i = 0; i < ht_session_module_count(); i++) {
		ht_session_module_get(i, &mod);
		ht_pw_module(&w, &mod);
	}
	for (i = 0; i < ht_threads_count(); i++) {
		const struct ht_thread *t = ht_threads_get(i);

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
		/* Untagged malloc sites fold into one record, as before
		 * tags; a tagged one into its line's, so that each line stays
		 * the sum of its own records. */
		if (site.inuse_bytes >= threshold ||
		    site.alloc_bytes >= threshold)
			ht_pw_site(&w, &site);
		else if (site.tag == 0 && site.kind == 0)
			fold(&folded, &site);
		else if (line_fold(&site) != 0)
			ht_pw_site(&w, &site);
	}
	if (folded.folded > 0)
		ht_pw_site(&w, &folded);
	line_folds_write(&w, &site);
	for (i = 0; i < meta.tags; i++) {
		tag_record((uint32_t)i, &tag);
		ht_pw_tag(&w, &tag);
	}
	for (i = 0; i < ht_timeline_count(); i++)
		ht_pw_timeline(&w, ht_timeline_get(i));
	sizes_record(&sizes);
	if (sizes.nbuckets > 0)
		ht_pw_sizes(&w, &sizes);
	for (i = 0; i < ht_allocators_count(); i++) {
		alloc.path = ht_allocators_get(i)->path;
		/* Only what no backend sees: a function hooked inline is. */
		alloc.names =
		    ht_coverage_unseen(alloc.path, ht_allocators_get(i)->names);
		if (alloc.names != 0)
			ht_pw_allocator(&w, &alloc);
	}
	/* The account of coverage, function by function. */
	for (i = 0; i < ht_coverage_count(); i++) {
		ht_coverage_get(i, &it);
		if (it.fn >= HT_NALLOCFNS)
			continue;
		cov.backend = it.backend;
		cov.reason = it.reason;
		cov.kind = ht_allocfns[it.fn].kind;
		cov.slots = it.slots;
		cov.family = ht_allocfns[it.fn].family;
		cov.name = ht_allocfns[it.fn].name;
		cov.module = it.module;
		ht_pw_coverage(&w, &cov);
	}
	rc = ht_pw_finish(&w);
	if (locked != NULL)
		*locked = 0;
	ht_lock_release(&ht_lock_global);
	if (rc != 0 && errno == 0)
		errno = EIO;
	return rc;
}

int
ht_snapshot_fd(int fd, uint32_t flags, uint64_t threshold)
{
	return encode(fd, flags, threshold, 0, 0, 0, NULL);
}

int
ht_snapshot_fd_final(int fd, uint32_t flags, uint32_t sig, int in_signal,
    uint64_t wait_ms, volatile int *locked)
{
	return encode(fd, flags, 0, sig, in_signal, wait_ms, locked);
}

int
ht_snapshot_file(struct ht_file *f, int dirfd, const char *name, uint32_t flags,
    uint64_t threshold)
{
	if (ht_file_create(f, dirfd, name) != 0)
		return -1;
	if (ht_snapshot_fd(f->fd, flags, threshold) != 0) {
		ht_file_discard(f);
		return -1;
	}
	return 0;
}

int
ht_snapshot_path(const char *path, uint32_t flags, uint64_t threshold)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct ht_file f;
	size_t dl;
	int dirfd, rc = -1;

	/* The directory as the caller named it (it chose the path,
	 * symbolic links and all), the file by its last component. */
	if (base == NULL) {
		base = path;
		dl = 1;
		dir[0] = '.';
	} else {
		base++;
		dl = (size_t)(base - path) > 1 ? (size_t)(base - path) - 1 : 1;
		if (dl >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, dl);
	}
	dir[dl] = '\0';
	if (base[0] == '\0') {
		errno = EISDIR;
		return -1;
	}
	if ((dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if (ht_snapshot_file(&f, dirfd, base, flags, threshold) == 0 &&
	    (rc = ht_file_publish(&f, base, 1)) != 0)
		ht_file_discard(&f);
	close_keep_errno(dirfd);
	return rc;
}
