/*
 * The trace format's reader (trace.h), the CLI's only: it allocates.  Two
 * passes over the chunks: the first checks every chunk's bounds and
 * counts, the second copies each thread's events into one array.  The
 * file is untrusted: every length is checked against what is left before
 * it is used, and the tables' sizes are bounded by the file's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "le.h"
#include "trace.h"

#define MAX_THREADS (1u << 20)

struct rd {
	const uint8_t *buf;
	size_t len;
	char *err;
	size_t errlen;
};

static __attribute__((format(printf, 2, 3))) int
fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A copy of the NUL-terminated string at p, of at most n bytes with its
 * NUL; NULL when there is no NUL in them (or no memory). */
static char *
dup_str(const uint8_t *p, size_t n)
{
	const uint8_t *nul = memchr(p, 0, n);
	char *s;

	if (nul == NULL)
		return NULL;
	s = malloc((size_t)(nul - p) + 1);
	if (s != NULL)
		memcpy(s, p, (size_t)(nul - p) + 1);
	return s;
}

static int
cmp_thread(const void *a, const void *b)
{
	const struct ht_trace_thread *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
cmp_site(const void *a, const void *b)
{
	const struct ht_trace_site *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int
cmp_name(const void *a, const void *b)
{
	const struct ht_trace_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct ht_trace_thread *
find_thread(struct ht_trace *t, uint32_t idx)
{
	struct ht_trace_thread key = { .idx = idx };

	if (t->nthreads == 0)
		return NULL;
	return bsearch(&key, t->threads, t->nthreads, sizeof(key), cmp_thread);
}

void
ht_trace_decode_event(const uint8_t *p, struct ht_trace_event *e)
{
	e->seq = ht_le_get64(p);
	e->t_ns = ht_le_get64(p + 8);
	e->ref = ht_le_get64(p + 16);
	e->size = ht_le_get64(p + 24);
	e->usable_over = ht_le_get32(p + 32);
	e->site = ht_le_get32(p + 36);
	e->tag = ht_le_get16(p + 40);
	e->fn = ht_le_get16(p + 42);
	e->op = p[44];
	e->flags = p[45];
	e->align_log2 = p[46];
}

/* The chunks' walk.  Pass 0 checks and counts, pass 1 fills.  Returns 0,
 * or -1 with the reason in r->err. */
static int
walk(struct rd *r, struct ht_trace *t, int pass)
{
	size_t off = HT_TRACE_HEADER_SIZE, nthr = 0, nsite = 0, nmod = 0;
	size_t nfunc = 0, ntag = 0;
	int have_info = 0;

	while (off < r->len) {
		const uint8_t *c = r->buf + off, *p;
		uint32_t type, n;
		size_t total;

		if (r->len - off < HT_TRACE_CHUNK_HEAD) {
			snprintf(t->incomplete_why, sizeof(t->incomplete_why),
			    "cut short in a chunk's head at byte %zu", off);
			break;
		}
		type = ht_le_get32(c);
		n = ht_le_get32(c + 4);
		total = ht_tw_chunk_size(n);
		if (total > r->len - off) {
			snprintf(t->incomplete_why, sizeof(t->incomplete_why),
			    "cut short in a chunk of %u bytes at byte %zu", n,
			    off);
			break;
		}
		p = c + HT_TRACE_CHUNK_HEAD;
		if (!have_info && type != HT_TRC_INFO)
			return fail(r, "the first chunk is not INFO");
		switch (type) {
		case HT_TRC_INFO:
			if (have_info)
				return fail(r, "a second INFO at byte %zu",
				    off);
			if (n < 33)
				return fail(r, "a short INFO");
			have_info = 1;
			if (pass == 0)
				break;
			t->info.pid = ht_le_get32(p);
			t->info.page_size = ht_le_get32(p + 4);
			t->info.realtime_ns = ht_le_get64(p + 8);
			t->info.mono_ns = ht_le_get64(p + 16);
			t->info.live_entry_bytes = ht_le_get32(p + 24);
			t->info.site_entry_bytes = ht_le_get32(p + 28);
			t->command = dup_str(p + 32, n - 32);
			if (t->command == NULL)
				return fail(r,
				    "INFO's command is not a string");
			t->info.command = t->command;
			break;
		case HT_TRC_FUNC:
		case HT_TRC_TAG:
			if (n < 5 || memchr(p + 4, 0, n - 4) == NULL)
				return fail(r, "a malformed %s at byte %zu",
				    type == HT_TRC_FUNC ? "FUNC" : "TAG", off);
			if (pass == 1) {
				struct ht_trace_name *nm = type == HT_TRC_FUNC ?
				    &t->funcs[nfunc] :
				    &t->tags[ntag];

				nm->id = ht_le_get32(p);
				nm->name = dup_str(p + 4, n - 4);
				if (nm->name == NULL)
					return fail(r, "out of memory");
			}
			if (type == HT_TRC_FUNC)
				nfunc++;
			else
				ntag++;
			break;
		case HT_TRC_THREAD: {
			struct ht_trace_thread *th;

			if (n < 9 || memchr(p + 8, 0, n - 8) == NULL)
				return fail(r, "a malformed THREAD at byte %zu",
				    off);
			if (pass == 0) {
				nthr++;
				break;
			}
			/* A later THREAD of the same index renames it. */
			th = find_thread(t, ht_le_get32(p));
			if (th == NULL)
				return fail(r, "THREAD table inconsistent");
			th->tid = ht_le_get32(p + 4);
			free(th->name);
			th->name = dup_str(p + 8, n - 8);
			if (th->name == NULL)
				return fail(r, "out of memory");
			break;
		}
		case HT_TRC_MODULE:
			if (n < 25 || memchr(p + 24, 0, n - 24) == NULL)
				return fail(r, "a malformed MODULE at byte %zu",
				    off);
			if (pass == 1) {
				struct ht_trace_module *m = &t->modules[nmod];

				m->start = ht_le_get64(p);
				m->end = ht_le_get64(p + 8);
				m->offset = ht_le_get64(p + 16);
				m->path = dup_str(p + 24, n - 24);
				if (m->path == NULL)
					return fail(r, "out of memory");
			}
			nmod++;
			break;
		case HT_TRC_SITE:
			if (n != 16)
				return fail(r, "a malformed SITE at byte %zu",
				    off);
			if (pass == 1) {
				t->sites[nsite].id = ht_le_get32(p);
				t->sites[nsite].addr = ht_le_get64(p + 8);
			}
			nsite++;
			break;
		case HT_TRC_EVENTS: {
			uint32_t thread, count, i;
			struct ht_trace_thread *th;

			if (n < 8)
				return fail(r, "a malformed EVENTS at byte %zu",
				    off);
			thread = ht_le_get32(p);
			count = ht_le_get32(p + 4);
			if ((uint64_t)count * HT_TRACE_EVENT_SIZE != n - 8)
				return fail(r,
				    "EVENTS at byte %zu: %u events in %u bytes",
				    off, count, n - 8);
			if (pass == 0) {
				t->nevents += count;
				break;
			}
			th = find_thread(t, thread);
			if (th == NULL)
				return fail(r,
				    "EVENTS at byte %zu: thread %u has no "
				    "THREAD chunk",
				    off, thread);
			for (i = 0; i < count; i++) {
				struct ht_trace_event *e = &th->ev[th->nev++];

				ht_trace_decode_event(
				    p + 8 + (size_t)i * HT_TRACE_EVENT_SIZE, e);
				if (e->op == 0 || e->op > HT_TROP_MAX)
					return fail(r,
					    "event %llu: unknown op %u",
					    (unsigned long long)e->seq, e->op);
			}
			break;
		}
		case HT_TRC_END: {
			uint32_t crc;

			if (n != 56)
				return fail(r, "a malformed END");
			crc = ht_le_get32(p + 48);
			if (crc != ht_crc32(0, r->buf, off))
				return fail(r,
				    "the trace's checksum does not match "
				    "(the file is damaged)");
			if (off + total != r->len)
				return fail(r, "bytes after END");
			if (pass == 1) {
				t->end.events = ht_le_get64(p);
				t->end.lost = ht_le_get64(p + 8);
				t->end.lost_why = ht_le_get32(p + 16);
				t->end.threads = ht_le_get32(p + 20);
				t->end.duration_ns = ht_le_get64(p + 24);
				t->end.agent_bytes = ht_le_get64(p + 32);
				t->end.waits = ht_le_get64(p + 40);
				t->complete = 1;
			}
			break;
		}
		default:
			break; /* a later version's: skipped */
		}
		off += total;
	}
	if (!have_info)
		return fail(r, "no INFO chunk");
	if (pass == 0) {
		if (nthr > MAX_THREADS)
			return fail(r, "%zu threads", nthr);
		t->nthreads = nthr;
		t->nsites = nsite;
		t->nmodules = nmod;
		t->nfuncs = nfunc;
		t->ntags = ntag;
	} else if (!t->complete && t->incomplete_why[0] == '\0') {
		snprintf(t->incomplete_why, sizeof(t->incomplete_why),
		    "no END chunk");
	}
	return 0;
}

/* The thread table from the THREAD chunks, before pass 1: the indexes,
 * sorted and unique; each thread's event count and array. */
static int
setup_threads(struct rd *r, struct ht_trace *t)
{
	size_t off = HT_TRACE_HEADER_SIZE, k = 0, i, j;

	t->threads = calloc(t->nthreads + 1, sizeof(*t->threads));
	if (t->threads == NULL)
		return fail(r, "out of memory");
	while (off + HT_TRACE_CHUNK_HEAD <= r->len) {
		const uint8_t *c = r->buf + off;
		uint32_t n = ht_le_get32(c + 4);
		size_t total = ht_tw_chunk_size(n);

		if (total > r->len - off)
			break;
		if (ht_le_get32(c) == HT_TRC_THREAD)
			t->threads[k++].idx = ht_le_get32(c + 8);
		off += total;
	}
	qsort(t->threads, k, sizeof(*t->threads), cmp_thread);
	for (i = j = 0; i < k; i++)
		if (j == 0 || t->threads[j - 1].idx != t->threads[i].idx)
			t->threads[j++] = t->threads[i];
	t->nthreads = j;
	/* Count each thread's events. */
	for (off = HT_TRACE_HEADER_SIZE; off + HT_TRACE_CHUNK_HEAD <= r->len;) {
		const uint8_t *c = r->buf + off;
		uint32_t n = ht_le_get32(c + 4);
		size_t total = ht_tw_chunk_size(n);
		struct ht_trace_thread *th;

		if (total > r->len - off)
			break;
		if (ht_le_get32(c) == HT_TRC_EVENTS && n >= 8) {
			th = find_thread(t, ht_le_get32(c + 8));
			if (th == NULL)
				return fail(r,
				    "EVENTS at byte %zu: thread %u has no "
				    "THREAD chunk",
				    off, ht_le_get32(c + 8));
			th->nev += ht_le_get32(c + 12);
		}
		off += total;
	}
	for (i = 0; i < t->nthreads; i++) {
		t->threads[i].ev =
		    malloc((t->threads[i].nev + 1) * sizeof(*t->threads[i].ev));
		if (t->threads[i].ev == NULL)
			return fail(r, "out of memory");
		t->threads[i].nev = 0;
	}
	return 0;
}

struct ht_trace *
ht_trace_decode(const void *buf, size_t len, char *err, size_t errlen)
{
	struct rd r = { buf, len, err, errlen };
	struct ht_trace *t = calloc(1, sizeof(*t));
	uint32_t version;

	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (len < HT_TRACE_HEADER_SIZE || memcmp(buf, HT_TRACE_MAGIC, 8) != 0) {
		fail(&r, "not a heaptool trace");
		goto bad;
	}
	version = ht_le_get32(r.buf + 8);
	if (version < 1 || version > HT_TRACE_VERSION) {
		fail(&r,
		    "trace format version %u (this heaptool reads 1 to %d)",
		    version, HT_TRACE_VERSION);
		goto bad;
	}
	t->version = version;
	if (walk(&r, t, 0) != 0)
		goto bad;
	t->incomplete_why[0] = '\0';
	t->sites = calloc(t->nsites + 1, sizeof(*t->sites));
	t->modules = calloc(t->nmodules + 1, sizeof(*t->modules));
	t->funcs = calloc(t->nfuncs + 1, sizeof(*t->funcs));
	t->tags = calloc(t->ntags + 1, sizeof(*t->tags));
	if (t->sites == NULL || t->modules == NULL || t->funcs == NULL ||
	    t->tags == NULL) {
		fail(&r, "out of memory");
		goto bad;
	}
	if (setup_threads(&r, t) != 0 || walk(&r, t, 1) != 0)
		goto bad;
	qsort(t->sites, t->nsites, sizeof(*t->sites), cmp_site);
	qsort(t->funcs, t->nfuncs, sizeof(*t->funcs), cmp_name);
	qsort(t->tags, t->ntags, sizeof(*t->tags), cmp_name);
	return t;
bad:
	ht_trace_free(t);
	return NULL;
}

struct ht_trace *
ht_trace_read_file(const char *path, char *err, size_t errlen)
{
	struct ht_trace *t;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_size == 0) {
		close(fd);
		return ht_trace_decode("", 0, err, errlen);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	t = ht_trace_decode(map, (size_t)st.st_size, err, errlen);
	munmap(map, (size_t)st.st_size);
	return t;
}

void
ht_trace_free(struct ht_trace *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; t->threads != NULL && i < t->nthreads; i++) {
		free(t->threads[i].name);
		free(t->threads[i].ev);
	}
	for (i = 0; t->modules != NULL && i < t->nmodules; i++)
		free(t->modules[i].path);
	for (i = 0; t->funcs != NULL && i < t->nfuncs; i++)
		free(t->funcs[i].name);
	for (i = 0; t->tags != NULL && i < t->ntags; i++)
		free(t->tags[i].name);
	free(t->threads);
	free(t->modules);
	free(t->funcs);
	free(t->tags);
	free(t->sites);
	free(t->command);
	free(t);
}

static const char *
find_name(const struct ht_trace_name *v, size_t n, uint32_t id)
{
	struct ht_trace_name key = { .id = id }, *hit;

	if (n == 0)
		return NULL;
	hit = bsearch(&key, v, n, sizeof(key), cmp_name);
	return hit != NULL ? hit->name : NULL;
}

const char *
ht_trace_func_name(const struct ht_trace *t, uint32_t fn)
{
	return find_name(t->funcs, t->nfuncs, fn);
}

const char *
ht_trace_tag_name(const struct ht_trace *t, uint32_t tag)
{
	return find_name(t->tags, t->ntags, tag);
}

const struct ht_trace_site *
ht_trace_site(const struct ht_trace *t, uint32_t id)
{
	struct ht_trace_site key = { .id = id };

	if (t->nsites == 0)
		return NULL;
	return bsearch(&key, t->sites, t->nsites, sizeof(key), cmp_site);
}

const char *
ht_trace_op_name(unsigned op)
{
	static const char *const names[] = {
		[HT_TROP_MALLOC] = "malloc",
		[HT_TROP_CALLOC] = "calloc",
		[HT_TROP_REALLOC] = "realloc",
		[HT_TROP_REALLOC_INPLACE] = "realloc-inplace",
		[HT_TROP_ALIGNED] = "aligned",
		[HT_TROP_FREE] = "free",
		[HT_TROP_FREE_SIZED] = "free-sized",
		[HT_TROP_NEW] = "new",
		[HT_TROP_NEW_ARRAY] = "new[]",
		[HT_TROP_DELETE] = "delete",
		[HT_TROP_DELETE_ARRAY] = "delete[]",
		[HT_TROP_DELETE_SIZED] = "delete-sized",
		[HT_TROP_DELETE_ARRAY_SIZED] = "delete[]-sized",
	};

	if (op == 0 || op > HT_TROP_MAX)
		return "?";
	return names[op];
}

int
ht_trace_op_allocates(unsigned op)
{
	return op == HT_TROP_MALLOC || op == HT_TROP_CALLOC ||
	    op == HT_TROP_REALLOC || op == HT_TROP_REALLOC_INPLACE ||
	    op == HT_TROP_ALIGNED || op == HT_TROP_NEW ||
	    op == HT_TROP_NEW_ARRAY;
}

int
ht_trace_op_frees(unsigned op)
{
	return op == HT_TROP_FREE || op == HT_TROP_FREE_SIZED ||
	    (op >= HT_TROP_DELETE && op <= HT_TROP_DELETE_ARRAY_SIZED);
}
