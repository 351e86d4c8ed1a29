/*
 * The recorder's trace file and its drain (recdrain.h).
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "crc32.h"
#include "lock.h"
#include "mem.h"
#include "modules.h"
#include "prim.h"
#include "recbuf.h"
#include "recdrain.h"
#include "recmap.h"
#include "tags.h"
#include "trace.h"

#define MAX_THREADS HT_RECDRAIN_MAX_THREADS
#define STAGE	    (64 * 1024)
#define END_ROOM    (64 * 1024) /* tags, new modules, END */
#define MAX_START   HT_MAX_MODULES

static int fd = -1;
static uint64_t max_bytes, bytes, events;
static uint32_t crc, nthreads, sites_done;
static uint8_t *named; /* per thread: its THREAD chunk is written */
static uint8_t *stage;
static size_t staged;
static uintptr_t start_mods[MAX_START];
static size_t nstart;
/* A write failed (its errno): the file was cut back to the last whole
 * chunk, mark, where only END goes now. */
static int failed;
static uint64_t mark_bytes;
static uint32_t mark_crc, staged_threads;

/* The trace's identity when it was opened.  The program may close the
 * descriptor and take its number for a file of its own (a shell's
 * "exec 9>file", a daemon closing every descriptor): the recorder then
 * writes, cuts and closes nothing more through it. */
static dev_t fd_dev;
static ino_t fd_ino;

static int
ours(void)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == fd_dev &&
	    st.st_ino == fd_ino;
}

static int
write_all(const uint8_t *p, size_t n)
{
	ssize_t w;

	if (!ours())
		return EBADF;
	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A chunk starts here. */
static void
mark(void)
{
	mark_bytes = bytes;
	mark_crc = crc;
}

/* A write failed with rc: what it wrote of its chunk goes (the trace
 * ends with whole chunks), and END is all that may follow. */
static int
fail(int rc)
{
	if (failed == 0)
		failed = rc;
	bytes = mark_bytes;
	crc = mark_crc;
	staged = 0;
	staged_threads = 0;
	if (ours()) {
		(void)ftruncate(fd, (off_t)bytes);
		(void)lseek(fd, (off_t)bytes, SEEK_SET);
	}
	return rc;
}

/* Bytes p[0..n) of the chunk begun at the mark. */
static int
put(const uint8_t *p, size_t n)
{
	int rc;

	if ((rc = write_all(p, n)) != 0)
		return fail(rc);
	crc = ht_crc32(crc, p, n);
	bytes += n;
	return 0;
}

/* The staged chunks, whole. */
static int
flush(void)
{
	int rc;

	if (staged == 0)
		return 0;
	mark();
	if ((rc = put(stage, staged)) != 0)
		return rc;
	nthreads += staged_threads;
	staged_threads = 0;
	staged = 0;
	return 0;
}

/* A chunk of bytes p[0..n), after what is staged. */
static int
out(const uint8_t *p, size_t n)
{
	int rc;

	if ((rc = flush()) != 0)
		return rc;
	mark();
	return put(p, n);
}

/* What the rings may still hold when the recording stops, with a site
 * for each event and a thread for each ring, and the end. */
static uint64_t
reserve(void)
{
	uint64_t n = ht_recbuf_count(), c = ht_recbuf_cap();

	return n * c * (HT_TRACE_EVENT_SIZE + ht_tw_chunk_size(16)) +
	    n * (ht_tw_chunk_size(8 + 16) + HT_TRACE_CHUNK_HEAD + 8) + END_ROOM;
}

/* Room for n bytes more: final passes use the reserve (limit: max less
 * END), others stop short of it. */
static int
room(size_t n, int final)
{
	uint64_t keep = final ? HT_TRACE_CHUNK_HEAD + 64 : reserve();

	return max_bytes == 0 || bytes + staged + n + keep <= max_bytes;
}

/* The stage's next n bytes (flushed first if they do not fit), or NULL
 * when the file cannot take them. */
static uint8_t *
stage_room(size_t n, int final, int *rc)
{
	if (!room(n, final)) {
		*rc = HT_RECDRAIN_FULL;
		return NULL;
	}
	if (staged + n > STAGE && (*rc = flush()) != 0)
		return NULL;
	return stage + staged;
}

#define STAGE_CHUNK(call, size, final, rc)                                     \
	do {                                                                   \
		uint8_t *p_ = stage_room((size), (final), &(rc));              \
                                                                               \
		if (p_ == NULL)                                                \
			return (rc);                                           \
		staged += (call);                                              \
	} while (0)

static size_t
str_chunk(size_t fixed, const char *s)
{
	return ht_tw_chunk_size(fixed + strlen(s) + 1);
}

static int
write_modules(int at_start, int final)
{
	const struct ht_modset *set;
	const struct ht_module *m;
	size_t i, j, n;
	int rc = 0;

	ht_lock_acquire(&ht_lock_global);
	set = ht_modules_current();
	for (i = 0; i < set->n && rc == 0; i++) {
		m = &set->mods[i];
		if (at_start) {
			if (nstart < MAX_START)
				start_mods[nstart++] = m->start;
		} else {
			for (j = 0; j < nstart && start_mods[j] != m->start;
			     j++)
				;
			if (j < nstart)
				continue;
		}
		n = str_chunk(24, m->path);
		if (!room(n, final))
			break; /* no room for more: the rest unnamed */
		if (staged + n > STAGE && (rc = flush()) != 0)
			break;
		staged += ht_tw_module(stage + staged, STAGE - staged, m->start,
		    m->end, m->start - m->bias, m->path);
	}
	ht_lock_release(&ht_lock_global);
	return rc;
}

int
ht_recdrain_open(int f, uint64_t max, const struct ht_trace_info *info)
{
	uint8_t head[HT_TRACE_HEADER_SIZE];
	struct stat st;
	unsigned i;
	int rc = 0;

	named = ht_mem_map(MAX_THREADS);
	stage = ht_mem_map(STAGE);
	if (named == NULL || stage == NULL) {
		rc = ENOMEM;
		close(f);
		goto fail;
	}
	if (fstat(f, &st) != 0) {
		rc = errno;
		close(f);
		goto fail;
	}
	fd_dev = st.st_dev;
	fd_ino = st.st_ino;
	fd = f;
	max_bytes = max;
	bytes = events = 0;
	crc = 0;
	nthreads = sites_done = 0;
	staged = nstart = 0;
	failed = 0;
	staged_threads = 0;
	ht_tw_header(head, sizeof(head));
	if ((rc = out(head, sizeof(head))) != 0)
		goto fail;
	staged += ht_tw_info(stage, STAGE, info);
	for (i = 0; i < HT_NALLOCFNS; i++) {
		if (staged + str_chunk(4, ht_allocfns[i].name) > STAGE &&
		    (rc = flush()) != 0)
			goto fail;
		staged += ht_tw_func(stage + staged, STAGE - staged, i,
		    ht_allocfns[i].name);
	}
	if ((rc = write_modules(1, 0)) != 0 || (rc = flush()) != 0)
		goto fail;
	return 0;
fail:
	ht_recdrain_abandon();
	return rc;
}

void
ht_recdrain_abandon(void)
{
	if (named != NULL)
		ht_mem_unmap(named, MAX_THREADS);
	if (stage != NULL)
		ht_mem_unmap(stage, STAGE);
	named = NULL;
	stage = NULL;
	if (ours())
		close(fd);
	fd = -1;
}

static int
thread_gone(uint32_t tid)
{
	return syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) != 0 &&
	    errno == ESRCH;
}

/* b's events [from, to) as one EVENTS chunk: to - from events that
 * do not wrap around the ring. */
static int
write_events(struct ht_recbuf *b, uint64_t from, uint64_t to, int final)
{
	uint8_t head[HT_TRACE_CHUNK_HEAD + 8];
	uint32_t k = (uint32_t)(to - from);
	size_t len = (size_t)k * HT_TRACE_EVENT_SIZE;
	int rc;

	if (!room(sizeof(head) + len, final))
		return HT_RECDRAIN_FULL;
	ht_tw_events_head(head, sizeof(head), b->thread, k);
	if ((rc = out(head, sizeof(head))) != 0)
		return rc;
	if ((rc = put(ht_recbuf_slot(b, from), len)) != 0)
		return rc;
	events += k;
	return 0;
}

/* "/proc/self/task/TID/comm" into path[64]. */
static void
comm_path(char *path, uint32_t tid)
{
	char num[16];
	int i = 0, j = 16;

	memcpy(path, "/proc/self/task/", 16);
	do
		num[i++] = (char)('0' + tid % 10);
	while ((tid /= 10) != 0);
	while (i > 0)
		path[j++] = num[--i];
	memcpy(path + j, "/comm", 6);
}

/* One ring's turn. */
static int
drain_one(struct ht_recbuf *b, int final)
{
	uint64_t h, t, cap = ht_recbuf_cap(), end;
	char path[64], name[32];
	int rc = 0, gone;

	if (b == NULL || !__atomic_load_n(&b->live, __ATOMIC_ACQUIRE))
		return 0;
	if (b->thread >= MAX_THREADS)
		return 0;
	if (!named[b->thread]) {
		name[0] = '\0';
		comm_path(path, b->tid);
		ht_prim_read_proc(path, name, sizeof(name));
		name[strcspn(name, "\n")] = '\0';
		STAGE_CHUNK(
		    ht_tw_thread(p_, STAGE - staged, b->thread, b->tid, name),
		    str_chunk(8, name), final, rc);
		named[b->thread] = 1;
		staged_threads++;
	}
	t = b->tail;
	h = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
	/* Its thread is gone (or the recording over): what it published
	 * last is all there is. */
	gone = h == t && (final || thread_gone(b->tid));
	if (gone)
		h = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
	while (t < h) {
		end = t + (cap - t % cap);
		if (end > h)
			end = h;
		if ((rc = write_events(b, t, end, final)) != 0)
			return rc;
		t = end;
		__atomic_store_n(&b->tail, t, __ATOMIC_RELEASE);
		__atomic_add_fetch(ht_recbuf_gen(), 1, __ATOMIC_RELEASE);
	}
	if (gone)
		ht_recbuf_give(b);
	return 0;
}

int
ht_recdrain_pass(int final)
{
	uint32_t i, id, nb = ht_recbuf_count();
	uint64_t pc;
	int rc = 0, k;

	if (fd < 0)
		return EBADF;
	if (failed != 0)
		return failed;
	for (i = 0; i < nb; i++)
		if ((rc = drain_one(ht_recbuf_at(i), final)) != 0)
			return rc;
	while ((k = ht_recmap_site_at(sites_done, &id, &pc)) == 1) {
		STAGE_CHUNK(ht_tw_site(p_, STAGE - staged, id, pc),
		    ht_tw_chunk_size(16), final, rc);
		sites_done++;
	}
	return flush();
}

int
ht_recdrain_close(struct ht_trace_end *e)
{
	uint8_t end[HT_TRACE_CHUNK_HEAD + 64];
	uint32_t i, n = ht_tags_count();
	int rc = 0;
	size_t len;

	/* After a failed write, END alone: it may still fit where the
	 * failed chunk was cut. */
	for (i = 1; i < n && rc == 0 && failed == 0; i++) {
		const char *nm = ht_tags_name(i);

		len = str_chunk(4, nm);
		if (!room(len, 1))
			break;
		if (staged + len > STAGE && (rc = flush()) != 0)
			break;
		staged += ht_tw_tag(stage + staged, STAGE - staged, i, nm);
	}
	if (rc == 0 && failed == 0)
		rc = write_modules(0, 1);
	if (rc == 0 && failed == 0)
		rc = flush();
	rc = 0;
	staged = 0;
	e->events = events;
	e->threads = nthreads;
	if (rc == 0) {
		len = ht_tw_end(end, sizeof(end), e, crc);
		rc = write_all(end, len);
		if (rc == 0)
			bytes += len;
	}
	ht_recdrain_abandon();
	return rc;
}

uint64_t
ht_recdrain_events(void)
{
	return events;
}

uint64_t
ht_recdrain_bytes(void)
{
	return bytes + staged;
}

uint32_t
ht_recdrain_threads(void)
{
	return nthreads;
}

uint64_t
ht_recdrain_pending(void)
{
	uint32_t i, nb = ht_recbuf_count();
	uint64_t n = 0;
	struct ht_recbuf *b;

	for (i = 0; i < nb; i++) {
		b = ht_recbuf_at(i);
		if (b != NULL && __atomic_load_n(&b->live, __ATOMIC_ACQUIRE))
			n += __atomic_load_n(&b->head, __ATOMIC_ACQUIRE) -
			    b->tail;
	}
	return n;
}
