/*
 * Tests for src/profile.c: the writer and the reader round trip every field;
 * the byte layout matches man/heaptool-format.5 (encodings built here by hand
 * decode, and the writer's bytes are checked at known offsets); every
 * rejection has its reason; and a fixed-seed mutation loop feeds 100000
 * corrupted encodings to the reader, which must answer each with a profile
 * or an error.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "basic.h"
#include "crc32.h"
#include "profile.h"

#define NMUTATE 100000

/* ---- a byte builder for hand-made encodings, independent of the writer */

struct bb {
	uint8_t b[1 << 16];
	size_t n;
};

static void
bb_put(struct bb *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b))
		bail("test builder overflow");
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void
bb_le(struct bb *b, uint64_t v, int n)
{
	int i;

	if (b->n + (size_t)n > sizeof(b->b))
		bail("test builder overflow");
	for (i = 0; i < n; i++)
		b->b[b->n + (size_t)i] = (uint8_t)(v >> (8 * i));
	b->n += (size_t)n;
}

static void
bb_str(struct bb *b, const char *s, size_t n)
{
	bb_le(b, n, 2);
	bb_put(b, s, n);
}

static void
bb_header(struct bb *b, uint32_t version)
{
	b->n = 0;
	bb_put(b, "HEAPPROF", 8);
	bb_le(b, version, 4);
	bb_le(b, 0, 4);
}

static void
bb_rec(struct bb *b, uint32_t type, uint32_t len)
{
	bb_le(b, type, 4);
	bb_le(b, len, 4);
}

/* A META record: pid 100 + i for the i-th u64 field, state 1, flags 0. */
static void
bb_meta(struct bb *b, const char *cmd, size_t cmdlen)
{
	int i;

	bb_rec(b, HT_REC_META, (uint32_t)(128 + 2 + cmdlen));
	for (i = 0; i < 3; i++)
		bb_le(b, 100 + i, 8);
	bb_le(b, 1, 4);
	bb_le(b, 0, 4);
	for (i = 3; i < 15; i++)
		bb_le(b, 100 + i, 8);
	bb_str(b, cmd, cmdlen);
}

/* A version 4 META: version 1's, then max_samples 200, dropped_bytes 201,
 * dropped_objects 202, drop_why HT_DROP_LIVE. */
static void
bb_meta4(struct bb *b, const char *cmd, size_t cmdlen)
{
	int i;

	bb_rec(b, HT_REC_META, (uint32_t)(128 + 2 + cmdlen + 28));
	for (i = 0; i < 3; i++)
		bb_le(b, 100 + i, 8);
	bb_le(b, 1, 4);
	bb_le(b, 0, 4);
	for (i = 3; i < 15; i++)
		bb_le(b, 100 + i, 8);
	bb_str(b, cmd, cmdlen);
	for (i = 0; i < 3; i++)
		bb_le(b, 200 + i, 8);
	bb_le(b, HT_DROP_LIVE, 4);
}

/* A version 5 META: version 4's, then u32 signal. */
static void
bb_meta5(struct bb *b, const char *cmd, size_t cmdlen, uint32_t sig)
{
	int i;

	bb_rec(b, HT_REC_META, (uint32_t)(128 + 2 + cmdlen + 28 + 4));
	for (i = 0; i < 3; i++)
		bb_le(b, 100 + i, 8);
	bb_le(b, 1, 4);
	bb_le(b, 0, 4);
	for (i = 3; i < 15; i++)
		bb_le(b, 100 + i, 8);
	bb_str(b, cmd, cmdlen);
	for (i = 0; i < 3; i++)
		bb_le(b, 200 + i, 8);
	bb_le(b, HT_DROP_LIVE, 4);
	bb_le(b, sig, 4);
}

/* A version 6 META: version 5's (signal 6), then u32 backend. */
static void
bb_meta6(struct bb *b, uint32_t backend)
{
	int i;

	bb_rec(b, HT_REC_META, (uint32_t)(128 + 2 + 3 + 28 + 4 + 4));
	for (i = 0; i < 3; i++)
		bb_le(b, 100 + i, 8);
	bb_le(b, 1, 4);
	bb_le(b, 0, 4);
	for (i = 3; i < 15; i++)
		bb_le(b, 100 + i, 8);
	bb_str(b, "cmd", 3);
	for (i = 0; i < 3; i++)
		bb_le(b, 200 + i, 8);
	bb_le(b, HT_DROP_LIVE, 4);
	bb_le(b, 6, 4);
	bb_le(b, backend, 4);
}

/* A version 6 COVERAGE: backend, reason, kind 1, slots 7, three strings. */
static void
bb_coverage(struct bb *b, uint32_t backend, uint32_t reason, const char *fam,
    const char *name, const char *mod)
{
	bb_rec(b, HT_REC_COVERAGE,
	    (uint32_t)(16 + 6 + strlen(fam) + strlen(name) + strlen(mod)));
	bb_le(b, backend, 4);
	bb_le(b, reason, 4);
	bb_le(b, 1, 4);
	bb_le(b, 7, 4);
	bb_str(b, fam, strlen(fam));
	bb_str(b, name, strlen(name));
	bb_str(b, mod, strlen(mod));
}

/* A version 5 ALLOCATOR: u64 names, the path. */
static void
bb_allocator(struct bb *b, uint64_t names, const char *path)
{
	bb_rec(b, HT_REC_ALLOCATOR, (uint32_t)(8 + 2 + strlen(path)));
	bb_le(b, names, 8);
	bb_str(b, path, strlen(path));
}

static void
bb_thread(struct bb *b, uint32_t tid, const char *name, size_t extra)
{
	size_t i;
	int k;

	bb_rec(b, HT_REC_THREAD, (uint32_t)(44 + 2 + strlen(name) + extra));
	bb_le(b, tid, 4);
	for (k = 0; k < 5; k++)
		bb_le(b, tid * 10 + k, 8);
	bb_str(b, name, strlen(name));
	for (i = 0; i < extra; i++)
		bb_le(b, 0xee, 1);
}

static void
bb_site(struct bb *b, uint32_t nframes)
{
	uint32_t i;

	bb_rec(b, HT_REC_SITE, 84 + 8 * nframes);
	for (i = 0; i < 10; i++)
		bb_le(b, i, 8);
	bb_le(b, nframes, 4);
	for (i = 0; i < nframes; i++)
		bb_le(b, 0x400000 + i, 8);
}

/* A version 2 SITE: version 1's fields, then u32 folded. */
static void
bb_site2(struct bb *b, uint32_t nframes, uint32_t folded)
{
	uint32_t i;

	bb_rec(b, HT_REC_SITE, 84 + 8 * nframes + 4);
	for (i = 0; i < 10; i++)
		bb_le(b, i, 8);
	bb_le(b, nframes, 4);
	for (i = 0; i < nframes; i++)
		bb_le(b, 0x400000 + i, 8);
	bb_le(b, folded, 4);
}

static void
bb_module(struct bb *b, uint32_t bidlen, const char *path)
{
	uint32_t i;

	bb_rec(b, HT_REC_MODULE,
	    (uint32_t)(24 + 2 + bidlen + 2 + strlen(path)));
	bb_le(b, 0x1000, 8);
	bb_le(b, 0x7f0000000000, 8);
	bb_le(b, 0x7f0000100000, 8);
	bb_le(b, bidlen, 2);
	for (i = 0; i < bidlen; i++)
		bb_le(b, i, 1);
	bb_str(b, path, strlen(path));
}

static void
bb_end(struct bb *b)
{
	bb_rec(b, HT_REC_END, 0);
}

/* A version 3 END: its CRC of every byte before its payload. */
static void
bb_end3(struct bb *b)
{
	bb_rec(b, HT_REC_END, 4);
	bb_le(b, ht_crc32(0, b->b, b->n), 4);
}

/* ---- the sample profile */

static struct ht_meta meta;
static struct ht_module_rec mods[3];
static char longest[HT_PROFILE_MAX_PATH];
static struct ht_thread_rec thr[2];
static struct ht_site_rec sites[4];
static struct ht_allocator_rec allocs[2];
/* Version 7: the tags, 0 (untagged) first. */
static struct ht_tag_rec tagrecs[2] = {
	{ 0, { 4096, 0 }, { 1, 0 }, "" },
	{ 1, { 1ULL << 40, 7 }, { 3, UINT64_MAX }, "reader.cc::1923" },
};

static struct ht_coverage_rec covs[2] = {
	{ 1, 1, 1, 3, "mimalloc", "mi_malloc", "/usr/lib/libmimalloc.so.2" },
	{ 0, 6, 2, 0, "malloc", "free", "" },
};

static void
fill(void)
{
	int i;

	memset(&meta, 0, sizeof(meta));
	meta.pid = 4242;
	meta.epoch = 3;
	meta.rate = 524288;
	meta.state = HT_STATE_RUNNING;
	meta.flags = HT_META_AT_EXIT;
	meta.start_ns = 1700000000123456789ULL;
	meta.end_ns = 1700000012623456789ULL;
	meta.peak_inuse_bytes = 0x123456789abcULL;
	meta.peak_ns = 1700000005000000000ULL;
	meta.overhead_bytes = 8 << 20;
	meta.dropped_samples = 17;
	meta.samples = 99999;
	meta.live_samples = 1234;
	meta.heap_inuse_bytes = 1ULL << 33;
	meta.heap_free_bytes = 77777;
	meta.heap_mmap_bytes = 1ULL << 30;
	meta.rss_bytes = UINT64_MAX;
	strcpy(meta.command, "redis-server");
	meta.max_samples = 1u << 25;
	meta.dropped_bytes = 17 * 48;
	meta.dropped_objects = 17;
	meta.drop_why = HT_DROP_LIVE | HT_DROP_NOMEM;
	meta.signal = 11;
	meta.backend = 4;
	meta.tags = 2;
	meta.tags_refused = 5;
	meta.tag_cache_bytes = 589824;
	meta.tag_name_bytes = 16;

	allocs[0].names = 0xf;
	allocs[0].path = "/usr/bin/redis-server";
	allocs[1].names = (uint64_t)1 << 63;
	allocs[1].path = "/usr/lib/libmimalloc.so.2";

	memset(mods, 0, sizeof(mods));
	mods[0].bias = 0x555555554000ULL;
	mods[0].start = 0x555555554000ULL;
	mods[0].end = 0x555555600000ULL;
	mods[0].build_id_len = 20;
	for (i = 0; i < 20; i++)
		mods[0].build_id[i] = (uint8_t)(0xa0 + i);
	mods[0].path = "/usr/bin/redis-server";
	mods[1].bias = 0x7ffff7dd0000ULL;
	mods[1].start = 0x7ffff7dd0000ULL;
	mods[1].end = 0x7ffff7fa0000ULL;
	mods[1].build_id_len = 0;
	mods[1].path = "[vdso]";
	/* The longest path the field holds, build-id of the most bytes. */
	mods[2].bias = 1;
	mods[2].start = 2;
	mods[2].end = 3;
	mods[2].build_id_len = HT_PROFILE_MAX_BUILD_ID;
	for (i = 0; i < HT_PROFILE_MAX_BUILD_ID; i++)
		mods[2].build_id[i] = (uint8_t)(255 - i);
	longest[0] = '/';
	memset(longest + 1, 'p', sizeof(longest) - 2);
	longest[sizeof(longest) - 1] = '\0';
	mods[2].path = longest;

	memset(thr, 0, sizeof(thr));
	thr[0].tid = 4242;
	strcpy(thr[0].name, "redis-server");
	thr[0].inuse_bytes = 1;
	thr[0].inuse_objects = 2;
	thr[0].alloc_bytes = 3;
	thr[0].alloc_objects = 4;
	thr[0].samples = 5;
	thr[1].tid = 4300;
	strcpy(thr[1].name, "io_thd_15_chars");
	thr[1].inuse_bytes = UINT64_MAX;
	thr[1].alloc_bytes = 1ULL << 63;

	memset(sites, 0, sizeof(sites));
	for (i = 0; i < 4; i++) {
		sites[i].inuse_bytes = 1000 * (i + 1);
		sites[i].inuse_objects = 10 + i;
		sites[i].alloc_bytes = 5000 * (i + 1);
		sites[i].alloc_objects = 50 + i;
		sites[i].samples = 7 + i;
		sites[i].live_samples = 3 + i;
		sites[i].inuse_var = 1.5e12 * (i + 1);
		sites[i].alloc_var = 0.1 * (i + 1);
		sites[i].peak_inuse_bytes = 900 * (i + 1);
		sites[i].peak_inuse_objects = 9 + i;
	}
	sites[0].nframes = 3;
	sites[0].frames[0] = 0x555555555123ULL;
	sites[0].frames[1] = 0x555555555456ULL;
	sites[0].frames[2] = 0x7ffff7dd1789ULL;
	sites[1].nframes = HT_PROFILE_MAX_FRAMES;
	for (i = 0; i < HT_PROFILE_MAX_FRAMES; i++)
		sites[1].frames[i] = 0xffffffffffff0000ULL + (uint64_t)i;
	sites[2].nframes = 0; /* the folded remainder has no frames */
	sites[2].folded = 0xfedcba98;
	sites[3].nframes = 1;
	sites[3].frames[0] = 1;
	sites[3].tag = 1;
	sites[3].kind = 1;
	sites[0].tag = 1;
	sites[0].temp_objects = 0x123456789aULL;
	sites[0].temp_samples = 77;
	sites[3].temp_objects = 5;
	sites[3].temp_samples = 0xfffffffffULL;
	sites[3].alloc_var = 0;
}

static void
write_all(struct ht_pwriter *w)
{
	size_t i;

	ht_pw_meta(w, &meta);
	ht_pw_module(w, &mods[0]);
	ht_pw_thread(w, &thr[0]);
	for (i = 0; i < 4; i++)
		ht_pw_site(w, &sites[i]);
	ht_pw_module(w, &mods[1]);
	ht_pw_allocator(w, &allocs[0]);
	ht_pw_module(w, &mods[2]);
	ht_pw_thread(w, &thr[1]);
	ht_pw_allocator(w, &allocs[1]);
	ht_pw_coverage(w, &covs[0]);
	ht_pw_coverage(w, &covs[1]);
	ht_pw_tag(w, &tagrecs[0]);
	ht_pw_tag(w, &tagrecs[1]);
}

/* ---- field-by-field comparison */

#define SAME(f)                                                                \
	do {                                                                   \
		if (a->f != b->f) {                                            \
			diag("%s: field " #f " differs", what);                \
			return 0;                                              \
		}                                                              \
	} while (0)
#define SAME_STR(f)                                                            \
	do {                                                                   \
		if (strcmp(a->f, b->f) != 0) {                                 \
			diag("%s: field " #f " differs", what);                \
			return 0;                                              \
		}                                                              \
	} while (0)
#define SAME_MEM(f, n)                                                         \
	do {                                                                   \
		if (memcmp(&a->f, &b->f, (n)) != 0) {                          \
			diag("%s: field " #f " differs", what);                \
			return 0;                                              \
		}                                                              \
	} while (0)

static int
same_meta(const struct ht_meta *a, const struct ht_meta *b)
{
	const char *what = "META";

	SAME(pid);
	SAME(epoch);
	SAME(rate);
	SAME(state);
	SAME(flags);
	SAME(start_ns);
	SAME(end_ns);
	SAME(peak_inuse_bytes);
	SAME(peak_ns);
	SAME(overhead_bytes);
	SAME(dropped_samples);
	SAME(samples);
	SAME(live_samples);
	SAME(heap_inuse_bytes);
	SAME(heap_free_bytes);
	SAME(heap_mmap_bytes);
	SAME(rss_bytes);
	SAME_STR(command);
	SAME(max_samples);
	SAME(dropped_bytes);
	SAME(dropped_objects);
	SAME(drop_why);
	SAME(signal);
	SAME(backend);
	SAME(tags);
	SAME(tags_refused);
	SAME(tag_cache_bytes);
	SAME(tag_name_bytes);
	return 1;
}

static int
same_module(const struct ht_module_rec *a, const struct ht_module_rec *b)
{
	const char *what = "MODULE";

	SAME(bias);
	SAME(start);
	SAME(end);
	SAME(build_id_len);
	SAME_MEM(build_id, a->build_id_len);
	SAME_STR(path);
	return 1;
}

static int
same_thread(const struct ht_thread_rec *a, const struct ht_thread_rec *b)
{
	const char *what = "THREAD";

	SAME(tid);
	SAME_STR(name);
	SAME(inuse_bytes);
	SAME(inuse_objects);
	SAME(alloc_bytes);
	SAME(alloc_objects);
	SAME(samples);
	return 1;
}

static int
same_allocator(const struct ht_allocator_rec *a,
    const struct ht_allocator_rec *b)
{
	const char *what = "ALLOCATOR";

	SAME(names);
	SAME_STR(path);
	return 1;
}

static int
same_site(const struct ht_profile_site *a, const struct ht_site_rec *b)
{
	const char *what = "SITE";

	SAME(inuse_bytes);
	SAME(inuse_objects);
	SAME(alloc_bytes);
	SAME(alloc_objects);
	SAME(samples);
	SAME(live_samples);
	SAME_MEM(inuse_var, sizeof(double));
	SAME_MEM(alloc_var, sizeof(double));
	SAME(peak_inuse_bytes);
	SAME(peak_inuse_objects);
	SAME(nframes);
	if (a->nframes > 0 &&
	    memcmp(a->frames, b->frames, a->nframes * sizeof(b->frames[0])) !=
		0) {
		diag("%s: field frames differs", what);
		return 0;
	}
	SAME(folded);
	SAME(tag);
	SAME(kind);
	SAME(temp_objects);
	SAME(temp_samples);
	return 1;
}

static int
same_tag(const struct ht_tag_rec *a, const struct ht_tag_rec *b)
{
	const char *what = "TAG";

	SAME(id);
	SAME(peak_bytes[0]);
	SAME(peak_bytes[1]);
	SAME(peak_objects[0]);
	SAME(peak_objects[1]);
	SAME_STR(name);
	return 1;
}

static int
same_coverage(const struct ht_coverage_rec *a, const struct ht_coverage_rec *b)
{
	const char *what = "COVERAGE";

	SAME(backend);
	SAME(reason);
	SAME(kind);
	SAME(slots);
	SAME_STR(family);
	SAME_STR(name);
	SAME_STR(module);
	return 1;
}

static int
same_profile(const struct ht_profile *p)
{
	return p->version == HT_PROFILE_VERSION && same_meta(&p->meta, &meta) &&
	    p->nmodules == 3 && same_module(&p->modules[0], &mods[0]) &&
	    same_module(&p->modules[1], &mods[1]) &&
	    same_module(&p->modules[2], &mods[2]) && p->nthreads == 2 &&
	    same_thread(&p->threads[0], &thr[0]) &&
	    same_thread(&p->threads[1], &thr[1]) && p->nsites == 4 &&
	    same_site(&p->sites[0], &sites[0]) &&
	    same_site(&p->sites[1], &sites[1]) &&
	    same_site(&p->sites[2], &sites[2]) &&
	    same_site(&p->sites[3], &sites[3]) && p->nallocators == 2 &&
	    same_allocator(&p->allocators[0], &allocs[0]) &&
	    same_allocator(&p->allocators[1], &allocs[1]) &&
	    p->ncoverage == 2 && same_coverage(&p->coverage[0], &covs[0]) &&
	    same_coverage(&p->coverage[1], &covs[1]) && p->ntags == 2 &&
	    same_tag(&p->tags[0], &tagrecs[0]) &&
	    same_tag(&p->tags[1], &tagrecs[1]);
}

/* ---- flush sink */

struct sink {
	uint8_t buf[1 << 16];
	size_t len;
	int calls;
	int fail_at; /* fail the n-th call (1-based); 0 never */
	size_t max;  /* largest single flush */
};

static int
sink_flush(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;

	s->calls++;
	if (s->fail_at != 0 && s->calls >= s->fail_at)
		return -1;
	if (s->len + len > sizeof(s->buf))
		return -1;
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	if (len > s->max)
		s->max = len;
	return 0;
}

static uint8_t enc[1 << 16];
static size_t enclen;

static uint64_t
le_at(const uint8_t *b, size_t off, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | b[off + (size_t)n];
	return v;
}

static void
test_round_trip(void)
{
	struct ht_pwriter w;
	struct ht_profile *p;
	char err[256];
	size_t off;

	ht_pw_init(&w, enc, sizeof(enc), NULL, NULL);
	write_all(&w);
	is_int(0, ht_pw_finish(&w), "encode into a buffer, no flush");
	enclen = w.len;
	diag("sample profile: %zu bytes", enclen);

	/* The layout at known offsets (man/heaptool-format.5). */
	ok(memcmp(enc, "HEAPPROF", 8) == 0, "header magic");
	is_uint(HT_PROFILE_VERSION, le_at(enc, 8, 4), "header version");
	is_uint(0, le_at(enc, 12, 4), "header flags 0");
	is_uint(HT_REC_META, le_at(enc, 16, 4), "META first");
	is_uint(128 + 2 + strlen(meta.command) + 28 + 4 + 4 + 24,
	    le_at(enc, 20, 4),
	    "META length: 128 fixed + string + 28 of version 4 + 4 of 5 + 4 "
	    "of 6 + 24 of 7");
	is_uint(meta.pid, le_at(enc, 24, 8), "META pid at payload 0");
	is_uint(meta.state, le_at(enc, 24 + 24, 4), "META state at 24");
	is_uint(meta.start_ns, le_at(enc, 24 + 32, 8), "META start at 32");
	is_uint(meta.rss_bytes, le_at(enc, 24 + 120, 8), "META rss at 120");
	is_uint(strlen(meta.command), le_at(enc, 24 + 128, 2),
	    "META command length at 128");
	off = 24 + 130 + strlen(meta.command);
	is_uint(meta.max_samples, le_at(enc, off, 8),
	    "META max_samples after the command");
	is_uint(meta.dropped_bytes, le_at(enc, off + 8, 8),
	    "META dropped_bytes after it");
	is_uint(meta.dropped_objects, le_at(enc, off + 16, 8),
	    "META dropped_objects after it");
	is_uint(meta.drop_why, le_at(enc, off + 24, 4), "META drop_why then");
	is_uint(meta.signal, le_at(enc, off + 28, 4), "META signal then");
	is_uint(meta.backend, le_at(enc, off + 32, 4), "META backend then");
	is_uint(meta.tags, le_at(enc, off + 36, 4), "META tags then");
	is_uint(meta.tag_name_bytes, le_at(enc, off + 52, 8),
	    "META tag_name_bytes last");
	off += 60;
	is_uint(HT_REC_MODULE, le_at(enc, off, 4), "MODULE second");
	is_uint(24 + 2 + 20 + 2 + strlen(mods[0].path), le_at(enc, off + 4, 4),
	    "MODULE length");
	is_uint(20, le_at(enc, off + 8 + 24, 2), "MODULE build-id length");
	is_uint(0xa0, enc[off + 8 + 26], "MODULE build-id bytes");
	off += 8 + le_at(enc, off + 4, 4);
	is_uint(HT_REC_THREAD, le_at(enc, off, 4), "THREAD third");
	is_uint(thr[0].tid, le_at(enc, off + 8, 4), "THREAD tid");
	is_uint(thr[0].alloc_objects, le_at(enc, off + 8 + 28, 8),
	    "THREAD alloc_objects at 28");
	off += 8 + le_at(enc, off + 4, 4);
	is_uint(HT_REC_SITE, le_at(enc, off, 4), "SITE fourth");
	is_uint(84 + 3 * 8 + 4 + 8 + 16, le_at(enc, off + 4, 4), "SITE length");
	is_uint(sites[0].temp_objects, le_at(enc, off + 8 + 84 + 24 + 12, 8),
	    "SITE temp_objects after the kind (version 10)");
	is_uint(3, le_at(enc, off + 8 + 80, 4), "SITE nframes at 80");
	is_uint(sites[0].frames[0], le_at(enc, off + 8 + 84, 8),
	    "SITE first frame at 84");
	is_uint(0, le_at(enc, off + 8 + 84 + 24, 4),
	    "SITE folded after the frames (0: a site of its own)");
	off += 8 + le_at(enc, off + 4, 4);
	off += 8 + le_at(enc, off + 4, 4);
	is_uint(84 + 4 + 8 + 16, le_at(enc, off + 4, 4),
	    "folded SITE length: no frames");
	is_uint(sites[2].folded, le_at(enc, off + 8 + 84, 4),
	    "folded SITE: the number of sites folded");
	off += 8 + le_at(enc, off + 4, 4);
	off += 8 + le_at(enc, off + 4, 4);
	off += 8 + le_at(enc, off + 4, 4);
	is_uint(HT_REC_ALLOCATOR, le_at(enc, off, 4), "ALLOCATOR after them");
	is_uint(8 + 2 + strlen(allocs[0].path), le_at(enc, off + 4, 4),
	    "ALLOCATOR length: names + path");
	is_uint(allocs[0].names, le_at(enc, off + 8, 8),
	    "ALLOCATOR names at 0");
	is_uint(strlen(allocs[0].path), le_at(enc, off + 16, 2),
	    "ALLOCATOR path at 8");
	is_uint(HT_REC_END, le_at(enc, enclen - 12, 4), "END last");
	is_uint(4, le_at(enc, enclen - 8, 4), "END holds a u32");
	is_uint(crc32(0, enc, (uInt)(enclen - 4)), le_at(enc, enclen - 4, 4),
	    "END: zlib's CRC-32 of every byte before it");

	p = ht_profile_decode(enc, enclen, err, sizeof(err));
	if (!ok(p != NULL, "decode the sample profile"))
		diag("error: %s", err);
	ok(p != NULL && same_profile(p), "round trip keeps every field");
	ok(p != NULL && p->sites[1].nframes == 64 &&
		p->sites[1].frames[63] == 0xffffffffffff003fULL,
	    "a site with 64 frames survives");
	ok(p != NULL && strlen(p->modules[2].path) == 4095,
	    "a 4095-byte path survives");
	ht_profile_free(p);
	ht_profile_free(NULL);
}

static void
test_empty(void)
{
	struct ht_pwriter w;
	struct ht_profile *p;
	struct ht_meta m;
	uint8_t buf[512];
	char err[256];

	memset(&m, 0, sizeof(m));
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	is_int(0, ht_pw_finish(&w), "encode META + END");
	is_uint(16 + 8 + 130 + 60 + 8 + 4, w.len, "empty profile is 226 bytes");
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	ok(p != NULL && p->nmodules == 0 && p->nthreads == 0 &&
		p->nsites == 0 && p->meta.command[0] == '\0' &&
		p->meta.state == HT_STATE_NONE,
	    "empty profile decodes empty");
	ht_profile_free(p);
}

/* Version 8: TIMELINE records round-trip, in time order, and a point out
 * of order is refused. */
static void
test_timeline(void)
{
	struct ht_timeline_rec t[3] = {
		{ 0, 100, 100, 4096, 1, 2.5 },
		{ 100, 300, 400, 8192, 3, 1e12 },
		{ 250, 50, 450, 8192, 4, 0 },
	};
	struct ht_pwriter w;
	struct ht_profile *p;
	struct ht_meta m;
	uint8_t buf[1024];
	char err[256];
	int i;

	memset(&m, 0, sizeof(m));
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	for (i = 0; i < 3; i++)
		ht_pw_timeline(&w, &t[i]);
	is_int(0, ht_pw_finish(&w), "encode three TIMELINE records");
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	ok(p != NULL && p->ntimeline == 3 &&
		memcmp(p->timeline, t, sizeof(t)) == 0,
	    "they decode as written, in order");
	ht_profile_free(p);

	t[2].t_ms = 99;
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	for (i = 0; i < 3; i++)
		ht_pw_timeline(&w, &t[i]);
	ht_pw_finish(&w);
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	ok(p == NULL && strstr(err, "goes back in time") != NULL,
	    "a point before the one ahead of it is refused (%s)", err);
	ht_profile_free(p);
}

/* Version 9: a SIZES record round-trips; a second one, or one of more
 * buckets than there are, is refused. */
static void
test_sizes(void)
{
	static struct ht_sizes_rec s;
	struct ht_pwriter w;
	struct ht_profile *p;
	struct ht_meta m;
	uint8_t buf[4096];
	char err[256];
	int i;

	memset(&m, 0, sizeof(m));
	memset(&s, 0, sizeof(s));
	s.nbuckets = 12;
	for (i = 0; i < 12; i++) {
		s.objects[i] = (uint64_t)i * 3;
		s.bytes[i] = (uint64_t)i << i;
	}
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	ht_pw_sizes(&w, &s);
	is_int(0, ht_pw_finish(&w), "encode a SIZES record");
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	ok(p != NULL && memcmp(&p->sizes, &s, sizeof(s)) == 0,
	    "it decodes as written");
	ht_profile_free(p);
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	ht_pw_sizes(&w, &s);
	ht_pw_sizes(&w, &s);
	ht_pw_finish(&w);
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	ok(p == NULL && strstr(err, "a second SIZES record") != NULL,
	    "two are refused (%s)", err);
	ht_profile_free(p);
	is_uint(0, ht_size_bucket(1), "bucket of 1 byte");
	is_uint(10, ht_size_bucket(1024), "bucket of 1 KiB");
	is_uint(10, ht_size_bucket(2047), "bucket of 2 KiB - 1");
	is_uint(63, ht_size_bucket(UINT64_MAX), "bucket of 2^64 - 1");
}

static void
test_flush(void)
{
	static struct sink s;
	struct ht_pwriter w;
	struct ht_profile *p;
	uint8_t tiny[7], big[4096];
	char err[256];
	int calls;

	/* 7 bytes divides no field: every field crosses a flush. */
	memset(&s, 0, sizeof(s));
	ht_pw_init(&w, tiny, sizeof(tiny), sink_flush, &s);
	write_all(&w);
	is_int(0, ht_pw_finish(&w), "encode through a 7-byte buffer");
	diag("%d flushes", s.calls);
	ok(s.calls >= (int)((enclen + 6) / 7),
	    "flushed every 7 bytes (%d calls)", s.calls);
	ok(s.max <= sizeof(tiny), "no flush larger than the buffer");
	ok(s.len == enclen && memcmp(s.buf, enc, enclen) == 0,
	    "flushed bytes equal the buffered encoding");
	is_uint(0, w.len, "finish leaves the buffer empty");
	p = ht_profile_decode(s.buf, s.len, err, sizeof(err));
	ok(p != NULL && same_profile(p), "flushed profile round trips");
	ht_profile_free(p);

	/* A failing flush sticks: nothing more is flushed. */
	memset(&s, 0, sizeof(s));
	s.fail_at = 3;
	ht_pw_init(&w, tiny, sizeof(tiny), sink_flush, &s);
	write_all(&w);
	calls = s.calls;
	ht_pw_site(&w, &sites[1]);
	is_int(-1, ht_pw_finish(&w), "failed flush: finish returns -1");
	is_int(3, calls, "no flush after the failure");
	is_int(3, s.calls, "finish does not flush after the failure");

	/* No flush callback: overflowing the buffer is the failure. */
	ht_pw_init(&w, big, 300, NULL, NULL);
	write_all(&w);
	ok(w.failed, "overflow without flush marks the writer failed");
	ok(w.len <= 300, "and writes no further than cap");
	is_int(-1, ht_pw_finish(&w), "overflow without flush: finish -1");

	/* An exact fit is not an overflow. */
	ht_pw_init(&w, big, 226, NULL, NULL);
	{
		struct ht_meta m;

		memset(&m, 0, sizeof(m));
		ht_pw_meta(&w, &m);
	}
	is_int(0, ht_pw_finish(&w), "an exact fit succeeds");
	ht_pw_init(&w, big, 225, NULL, NULL);
	{
		struct ht_meta m;

		memset(&m, 0, sizeof(m));
		ht_pw_meta(&w, &m);
	}
	is_int(-1, ht_pw_finish(&w), "one byte short fails");

	/* A flush but no buffer cannot make progress: failure, no loop. */
	memset(&s, 0, sizeof(s));
	ht_pw_init(&w, NULL, 0, sink_flush, &s);
	ht_pw_meta(&w, &meta);
	is_int(-1, ht_pw_finish(&w), "zero-capacity buffer fails");
}

static void
test_writer_clamps(void)
{
	struct ht_pwriter w;
	struct ht_profile *p;
	struct ht_meta m;
	struct ht_site_rec s;
	struct ht_module_rec mod;
	struct ht_thread_rec t;
	static uint8_t buf[16384];
	char err[256];

	memset(&m, 'c', sizeof(m)); /* command without a NUL */
	memset(&s, 0, sizeof(s));
	s.nframes = 1000;
	static char path[2 * HT_PROFILE_MAX_PATH];

	memset(&mod, 'm', sizeof(mod));
	memset(path, 'm', sizeof(path) - 1);
	mod.path = path; /* longer than any path */
	mod.build_id_len = 1000;
	memset(&t, 't', sizeof(t));
	ht_pw_init(&w, buf, sizeof(buf), NULL, NULL);
	ht_pw_meta(&w, &m);
	ht_pw_site(&w, &s);
	ht_pw_module(&w, &mod);
	ht_pw_thread(&w, &t);
	is_int(0, ht_pw_finish(&w), "encode out-of-range fields");
	p = ht_profile_decode(buf, w.len, err, sizeof(err));
	if (!ok(p != NULL, "they decode"))
		diag("error: %s", err);
	if (p == NULL)
		return;
	is_uint(255, strlen(p->meta.command), "command cut to 255 bytes");
	is_uint(64, p->sites[0].nframes, "nframes clamped to 64");
	is_uint(64, p->modules[0].build_id_len, "build-id clamped to 64");
	is_uint(4095, strlen(p->modules[0].path), "path cut to 4095 bytes");
	is_uint(15, strlen(p->threads[0].name), "name cut to 15 bytes");
	ht_profile_free(p);
}

/* Decode b and expect failure with a message containing want. */
static void
rejects(const struct bb *b, const char *want, const char *what)
{
	struct ht_profile *p;
	char err[256];

	err[0] = '\0';
	errno = 0;
	p = ht_profile_decode(b->b, b->n, err, sizeof(err));
	if (!ok(p == NULL && strstr(err, want) != NULL && errno == EINVAL,
		"reject %s", what))
		diag("got %s, error \"%s\", wanted \"%s\"",
		    p != NULL ? "a profile" : "NULL", err, want);
	ht_profile_free(p);
}

static struct ht_profile *
accepts(const struct bb *b, const char *what)
{
	struct ht_profile *p;
	char err[256];

	p = ht_profile_decode(b->b, b->n, err, sizeof(err));
	if (!ok(p != NULL, "accept %s", what))
		diag("error: %s", err);
	return p;
}

static void
test_hand_made(void)
{
	static struct bb b;
	struct ht_profile *p;
	char big[300];
	size_t n;

	/* A hand-built encoding of the documented layout decodes. */
	bb_header(&b, 1);
	bb_meta(&b, "cmd", 3);
	bb_module(&b, 4, "/lib/x.so");
	bb_thread(&b, 7, "worker", 0);
	bb_site(&b, 2);
	bb_end(&b);
	p = accepts(&b, "a hand-built profile");
	ok(p != NULL && p->meta.pid == 100 && p->meta.epoch == 101 &&
		p->meta.rate == 102 && p->meta.state == 1 &&
		p->meta.start_ns == 103 && p->meta.rss_bytes == 114 &&
		strcmp(p->meta.command, "cmd") == 0,
	    "hand-built META fields");
	ok(p != NULL && p->nmodules == 1 && p->modules[0].bias == 0x1000 &&
		p->modules[0].end == 0x7f0000100000 &&
		p->modules[0].build_id_len == 4 &&
		p->modules[0].build_id[3] == 3 &&
		strcmp(p->modules[0].path, "/lib/x.so") == 0,
	    "hand-built MODULE fields");
	ok(p != NULL && p->nthreads == 1 && p->threads[0].tid == 7 &&
		p->threads[0].inuse_bytes == 70 &&
		p->threads[0].samples == 74 &&
		strcmp(p->threads[0].name, "worker") == 0,
	    "hand-built THREAD fields");
	ok(p != NULL && p->nsites == 1 && p->sites[0].inuse_bytes == 0 &&
		p->sites[0].live_samples == 5 && p->sites[0].nframes == 2 &&
		p->sites[0].peak_inuse_objects == 9 &&
		p->sites[0].frames[1] == 0x400001,
	    "hand-built SITE fields");
	ht_profile_free(p);

	b.n = 0;
	rejects(&b, "not a heaptool profile", "empty input");
	bb_put(&b, "HEAPPR", 6);
	rejects(&b, "truncated profile header", "a cut magic");
	bb_header(&b, 1);
	b.b[0] = 'h';
	rejects(&b, "not a heaptool profile", "bad magic");
	bb_header(&b, 1);
	b.n = 12;
	rejects(&b, "truncated profile header", "a cut header");
	bb_header(&b, 11);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "format version 11, this heaptool reads 1 to 10",
	    "a later major version");
	bb_header(&b, 0);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "format version 0, this heaptool reads 1 to 10",
	    "version 0");

	/* Version 2: SITE has u32 folded after the frames; version 1's
	 * SITE, without it, still reads (folded 0). */
	bb_header(&b, 2);
	bb_meta(&b, "", 0);
	bb_site2(&b, 2, 0);
	bb_site2(&b, 0, 41);
	bb_end(&b);
	p = accepts(&b, "a hand-built version 2 profile");
	ok(p != NULL && p->version == 2 && p->nsites == 2 &&
		p->sites[0].nframes == 2 && p->sites[0].frames[1] == 0x400001 &&
		p->sites[0].folded == 0 && p->sites[1].nframes == 0 &&
		p->sites[1].folded == 41 && p->sites[1].peak_inuse_objects == 9,
	    "version 2 SITE fields, folded included");
	ht_profile_free(p);
	bb_header(&b, 2);
	bb_meta(&b, "", 0);
	bb_site(&b, 2);
	bb_end(&b);
	rejects(&b, "short SITE record", "a version 2 SITE without folded");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_site(&b, 1);
	bb_end(&b);
	p = accepts(&b, "a version 1 profile");
	ok(p != NULL && p->version == 1 && p->nsites == 1 &&
		p->sites[0].folded == 0 && p->sites[0].frames[0] == 0x400000,
	    "version 1 SITE reads with folded 0");
	ht_profile_free(p);
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_site2(&b, 1, 5);
	bb_end(&b);
	p = accepts(&b, "a version 1 SITE with a longer payload");
	ok(p != NULL && p->sites[0].folded == 0,
	    "version 1: the tail is ignored, not read as folded");
	ht_profile_free(p);

	/* Version 3: END holds the CRC of everything before its payload. */
	bb_header(&b, 3);
	bb_meta(&b, "cmd", 0);
	bb_site2(&b, 2, 0);
	bb_end3(&b);
	ht_profile_free(accepts(&b, "a hand-built version 3 profile"));
	b.b[b.n - 1] ^= 0x01;
	rejects(&b, "checksum mismatch", "a version 3 CRC off by a bit");
	b.b[b.n - 1] ^= 0x01;
	b.b[40] ^= 0x80;
	rejects(&b, "checksum mismatch (stored", "a flipped bit in META");
	bb_header(&b, 3);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "has no checksum", "a version 3 END without its CRC");

	/* Version 4: META ends with the bound and the drops; version 3's
	 * META, without them, still reads (all 0). */
	bb_header(&b, 3);
	bb_meta(&b, "cmd", 3);
	bb_end3(&b);
	p = accepts(&b, "a version 3 profile");
	ok(p != NULL && p->meta.max_samples == 0 &&
		p->meta.dropped_bytes == 0 && p->meta.drop_why == 0 &&
		p->meta.rss_bytes == 114 && strcmp(p->meta.command, "cmd") == 0,
	    "version 3 META reads without the bound and the drops");
	ht_profile_free(p);
	bb_header(&b, 4);
	bb_meta4(&b, "cmd", 3);
	bb_end3(&b);
	p = accepts(&b, "a hand-built version 4 profile");
	ok(p != NULL && p->version == 4 && p->meta.max_samples == 200 &&
		p->meta.dropped_bytes == 201 &&
		p->meta.dropped_objects == 202 &&
		p->meta.drop_why == HT_DROP_LIVE &&
		strcmp(p->meta.command, "cmd") == 0,
	    "version 4 META fields, after the command");
	ht_profile_free(p);
	bb_header(&b, 4);
	bb_meta(&b, "cmd", 3);
	bb_end3(&b);
	rejects(&b, "short META record", "a version 4 META without its tail");

	/* Version 5: META ends in u32 signal; ALLOCATOR records.  A version
	 * 4 profile's META has no signal (0), and a type-5 record in it is a
	 * record that version did not know: skipped. */
	bb_header(&b, 5);
	bb_meta5(&b, "cmd", 3, 6);
	bb_allocator(&b, 0x401, "/usr/bin/own-malloc");
	bb_site2(&b, 1, 0);
	bb_allocator(&b, 0, "");
	bb_end3(&b);
	p = accepts(&b, "a hand-built version 5 profile");
	ok(p != NULL && p->version == 5 && p->meta.signal == 6 &&
		p->meta.drop_why == HT_DROP_LIVE &&
		strcmp(p->meta.command, "cmd") == 0 && p->nallocators == 2 &&
		p->allocators[0].names == 0x401 &&
		strcmp(p->allocators[0].path, "/usr/bin/own-malloc") == 0 &&
		p->allocators[1].names == 0 &&
		strcmp(p->allocators[1].path, "") == 0 && p->nsites == 1,
	    "version 5 META signal and ALLOCATOR fields");
	ht_profile_free(p);
	bb_header(&b, 5);
	bb_meta4(&b, "cmd", 3);
	bb_end3(&b);
	rejects(&b, "short META record", "a version 5 META without signal");
	bb_header(&b, 5);
	bb_meta5(&b, "", 0, 0);
	bb_rec(&b, HT_REC_ALLOCATOR, 9);
	bb_le(&b, 1, 8);
	bb_le(&b, 0, 1);
	bb_end3(&b);
	rejects(&b, "short ALLOCATOR record", "an ALLOCATOR cut in its path");
	bb_header(&b, 4);
	bb_meta4(&b, "cmd", 3);
	bb_allocator(&b, 1, "/x");
	bb_end3(&b);
	p = accepts(&b, "a version 4 profile with a type-5 record");
	ok(p != NULL && p->meta.signal == 0 && p->nallocators == 0,
	    "version 4: no signal, the unknown record skipped");
	ht_profile_free(p);
	/* Version 6: META ends in u32 backend; COVERAGE records.  A
	 * version 5 profile's META has no backend (0), and a type-6 record
	 * in it is skipped. */
	bb_header(&b, 6);
	bb_meta6(&b, 3);
	bb_coverage(&b, 2, 2, "mimalloc", "mi_malloc", "/x/libmimalloc.so");
	bb_site2(&b, 1, 0);
	bb_coverage(&b, 0, 5, "", "", "");
	bb_end3(&b);
	p = accepts(&b, "a hand-built version 6 profile");
	ok(p != NULL && p->version == 6 && p->meta.backend == 3 &&
		p->meta.signal == 6 && p->ncoverage == 2 &&
		p->coverage[0].backend == 2 && p->coverage[0].reason == 2 &&
		p->coverage[0].kind == 1 && p->coverage[0].slots == 7 &&
		strcmp(p->coverage[0].family, "mimalloc") == 0 &&
		strcmp(p->coverage[0].name, "mi_malloc") == 0 &&
		strcmp(p->coverage[0].module, "/x/libmimalloc.so") == 0 &&
		strcmp(p->coverage[1].module, "") == 0 && p->nsites == 1,
	    "version 6 META backend and COVERAGE fields");
	ht_profile_free(p);
	bb_header(&b, 6);
	bb_meta5(&b, "cmd", 3, 6);
	bb_end3(&b);
	rejects(&b, "short META record", "a version 6 META without backend");
	bb_header(&b, 6);
	bb_meta6(&b, 1);
	bb_rec(&b, HT_REC_COVERAGE, 17);
	bb_le(&b, 1, 4);
	bb_le(&b, 1, 4);
	bb_le(&b, 1, 4);
	bb_le(&b, 1, 4);
	bb_le(&b, 0, 1);
	bb_end3(&b);
	rejects(&b, "short COVERAGE record", "a COVERAGE cut in its strings");
	bb_header(&b, 5);
	bb_meta5(&b, "cmd", 3, 6);
	bb_coverage(&b, 1, 1, "malloc", "malloc", "/x");
	bb_end3(&b);
	p = accepts(&b, "a version 5 profile with a type-6 record");
	ok(p != NULL && p->meta.backend == 0 && p->ncoverage == 0,
	    "version 5: no backend, the unknown record skipped");
	ht_profile_free(p);
	/* A corrupt version field cannot turn the check off: a version 1
	 * END is empty, this one holds a CRC, which is checked. */
	memcpy(b.b, enc, enclen);
	b.n = enclen;
	b.b[8] = 1;
	rejects(&b, "checksum mismatch",
	    "a version 5 profile whose version byte reads 1");

	bb_header(&b, 1);
	rejects(&b, "missing END", "a header alone");
	bb_header(&b, 1);
	bb_end(&b);
	rejects(&b, "META record missing", "a profile without META");
	bb_header(&b, 1);
	bb_thread(&b, 1, "x", 0);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "META record missing: first record is THREAD",
	    "META not first");
	bb_header(&b, 1);
	bb_rec(&b, 99, 0);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "first record is type-99", "an unknown record before META");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_meta(&b, "", 0);
	bb_end(&b);
	rejects(&b, "second META", "two META records");

	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_site(&b, 64);
	bb_end(&b);
	ht_profile_free(accepts(&b, "a site with 64 frames"));
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_site(&b, 65);
	bb_end(&b);
	rejects(&b, "has 65 frames, at most 64", "nframes 65");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_rec(&b, HT_REC_SITE, 84);
	for (n = 0; n < 10; n++)
		bb_le(&b, 0, 8);
	bb_le(&b, 0xffffffff, 4);
	bb_end(&b);
	rejects(&b, "frames, at most 64", "nframes 2^32 - 1");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_site(&b, 3);
	b.b[b.n - 24 - 4] = 4; /* nframes 4, payload holds 3 */
	bb_end(&b);
	rejects(&b, "short SITE record", "frames past the payload");

	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_module(&b, 64, "/x");
	bb_end(&b);
	ht_profile_free(accepts(&b, "a 64-byte build-id"));
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_module(&b, 65, "/x");
	bb_end(&b);
	rejects(&b, "65-byte build-id, at most 64", "build_id_len 65");

	/* Record length beyond the buffer. */
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_thread(&b, 1, "x", 0);
	bb_end(&b);
	b.b[16 + 8 + 130 + 4] = 200;
	rejects(&b, "truncated THREAD record at offset 154",
	    "a record "
	    "longer than the input");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_end(&b);
	b.b[20] = 0xff;
	b.b[21] = 0xff;
	b.b[22] = 0xff;
	b.b[23] = 0xff;
	rejects(&b, "truncated META record", "a length of 2^32 - 1");

	/* Truncation anywhere. */
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_thread(&b, 1, "x", 0);
	n = b.n;
	bb_end(&b);
	b.n = n;
	rejects(&b, "missing END", "a profile cut before END");
	b.n = n + 5;
	rejects(&b, "truncated record header", "a profile cut inside END");
	b.n = n - 1;
	rejects(&b, "truncated THREAD record", "a profile cut inside a record");

	/* Payloads shorter than their fields. */
	bb_header(&b, 1);
	bb_rec(&b, HT_REC_META, 100);
	for (n = 0; n < 100; n++)
		bb_le(&b, 0, 1);
	bb_end(&b);
	rejects(&b, "short META record at offset 16", "a short META");
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_rec(&b, HT_REC_THREAD, 46);
	bb_le(&b, 1, 4);
	for (n = 0; n < 5; n++)
		bb_le(&b, 0, 8);
	bb_le(&b, 10, 2); /* a 10-byte name in no bytes */
	bb_end(&b);
	rejects(&b, "short THREAD record", "a string past its payload");

	/* Strings longer than their field are cut, not rejected. */
	memset(big, 'x', sizeof(big));
	bb_header(&b, 1);
	bb_meta(&b, big, sizeof(big));
	bb_thread(&b, 1, "a-thread-name-of-40-bytes-xxxxxxxxxxxxxx", 0);
	bb_end(&b);
	p = accepts(&b, "strings longer than their fields");
	ok(p != NULL && strlen(p->meta.command) == 255 &&
		strlen(p->threads[0].name) == 15 &&
		strcmp(p->threads[0].name, "a-thread-name-o") == 0,
	    "long strings cut to their fields");
	ht_profile_free(p);

	/* Unknown records are skipped, longer payloads accepted. */
	bb_header(&b, 1);
	bb_meta(&b, "", 0);
	bb_thread(&b, 1, "one", 0);
	bb_rec(&b, 99, 10);
	bb_put(&b, "0123456789", 10);
	bb_rec(&b, 0x7fffffff, 0);
	bb_thread(&b, 2, "two", 37);
	bb_end(&b);
	p = accepts(&b, "unknown records and a longer THREAD payload");
	ok(p != NULL && p->nthreads == 2 && p->threads[0].tid == 1 &&
		p->threads[1].tid == 2 && p->threads[1].samples == 24 &&
		strcmp(p->threads[1].name, "two") == 0,
	    "unknown records skipped, the extra tail ignored");
	ht_profile_free(p);

	/* A longer META (a newer writer's fields) and data after END. */
	bb_header(&b, 1);
	bb_rec(&b, HT_REC_META, 128 + 2 + 2 + 16);
	for (n = 0; n < 128; n++)
		bb_le(&b, 0, 1);
	bb_str(&b, "ab", 2);
	for (n = 0; n < 16; n++)
		bb_le(&b, 0xff, 1);
	bb_end(&b);
	bb_put(&b, "trailing", 8);
	p = accepts(&b, "a longer META and bytes after END");
	ok(p != NULL && strcmp(p->meta.command, "ab") == 0,
	    "the longer META's known fields decode");
	ht_profile_free(p);
}

/*
 * Write the CRC a version 3 reader expects into the first END record that
 * lies within len bytes, as a hostile writer would.  Returns 1 if there was
 * one to seal.
 */
static int
reseal(uint8_t *b, size_t len)
{
	size_t off, rlen;
	uint32_t crc;
	int i;

	for (off = 16; off + 8 <= len; off += 8 + rlen) {
		rlen = le_at(b, off + 4, 4);
		if (rlen > len - off - 8)
			return 0;
		if (le_at(b, off, 4) == HT_REC_END) {
			if (rlen < 4)
				return 0;
			crc = ht_crc32(0, b, off + 8);
			for (i = 0; i < 4; i++)
				b[off + 8 + i] = (uint8_t)(crc >> (8 * i));
			return 1;
		}
	}
	return 0;
}

/*
 * Corrupt the sample encoding NMUTATE times and decode each.  Half the
 * corrupted inputs are resealed (their CRC made right), so that the
 * structural checks behind the checksum are reached; every other changed
 * input must be refused.  Under valgrind or ASan this also proves no read
 * strays outside the input: the input is copied to a buffer of exactly its
 * length.
 */
static void
test_mutations(void)
{
	static uint8_t buf[1 << 16];
	struct ht_profile *p;
	uint64_t s = 0x5eed, r;
	size_t recs[64], nrec = 0, off, len, i, k;
	char err[256];
	uint8_t *copy;
	int it, good = 0, bad = 0, sane = 1, answered = 1;
	int sealed, sgood = 0, sbad = 0, leaked = 0;

	for (off = 16; off + 8 <= enclen && nrec < 64;
	     off += 8 + le_at(enc, off + 4, 4))
		recs[nrec++] = off;

	for (it = 0; it < NMUTATE; it++) {
		memcpy(buf, enc, enclen);
		len = enclen;
		/* xorshift64: the mutation stream is fixed by the seed. */
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		r = s;
		switch (r % 5) {
		case 0: /* bit flips */
			for (k = 1 + (r >> 8) % 8; k > 0; k--) {
				i = (size_t)((r >> 16) * 2654435761u +
					k * 40503u) %
				    len;
				buf[i] ^= (uint8_t)(1u << ((r >> (k + 3)) % 8));
			}
			break;
		case 1: /* truncation */
			len = (size_t)((r >> 8) % len);
			break;
		case 2: /* a record length edited */
			off = recs[(r >> 8) % nrec] + 4;
			switch ((r >> 16) % 4) {
			case 0:
				k = (size_t)(r >> 32);
				break;
			case 1:
				k = le_at(buf, off, 4) + 1 + (r >> 40) % 16;
				break;
			case 2:
				k = le_at(buf, off, 4) - 1 - (r >> 40) % 16;
				break;
			default:
				k = (r >> 40) % 256;
				break;
			}
			for (i = 0; i < 4; i++)
				buf[off + i] = (uint8_t)(k >> (8 * i));
			break;
		case 3: /* a string length or count edited */
			off = recs[(r >> 8) % nrec] + 8 + (r >> 16) % 200;
			if (off + 2 <= len) {
				buf[off] = (uint8_t)(r >> 32);
				buf[off + 1] = (uint8_t)(r >> 40);
			}
			break;
		default: /* random bytes over a random span */
			off = (size_t)((r >> 8) % len);
			for (k = 0; k < 1 + (r >> 24) % 16 && off + k < len;
			     k++)
				buf[off + k] = (uint8_t)(r >> (k % 8 * 8));
			break;
		}
		sealed = (r >> 60) & 1 ? reseal(buf, len) : 0;
		if ((copy = malloc(len != 0 ? len : 1)) == NULL)
			bail("out of memory");
		memcpy(copy, buf, len);
		err[0] = '\0';
		p = ht_profile_decode(copy, len, err, sizeof(err));
		if (sealed)
			p != NULL ? sgood++ : sbad++;
		else if (p != NULL &&
		    (len != enclen || memcmp(buf, enc, len) != 0))
			leaked++;
		if (p != NULL) {
			good++;
			for (i = 0; i < p->nsites; i++)
				if (p->sites[i].nframes > 64)
					sane = 0;
			for (i = 0; i < p->nmodules; i++)
				if (p->modules[i].build_id_len > 64 ||
				    strnlen(p->modules[i].path, 4096) == 4096)
					sane = 0;
			for (i = 0; i < p->nthreads; i++)
				if (strnlen(p->threads[i].name, 16) == 16)
					sane = 0;
			if (strnlen(p->meta.command, 256) == 256)
				sane = 0;
		} else {
			bad++;
			if (err[0] == '\0')
				answered = 0;
		}
		ht_profile_free(p);
		free(copy);
	}
	diag("%d mutations: %d decoded, %d rejected; resealed %d decoded, "
	     "%d rejected",
	    NMUTATE, good, bad, sgood, sbad);
	ok(good + bad == NMUTATE && answered,
	    "every corrupted input yields a profile or an error message");
	ok(sane, "decoded profiles respect every field bound");
	ok(sgood > 0 && sbad > 0, "resealed mutations reach both outcomes");
	is_int(0, leaked, "the checksum refuses every other changed input");
}

static void
test_read_file(void)
{
	struct ht_profile *p;
	const char *tmp = getenv("TMPDIR");
	char path[4096], err[256];
	int fd, saved;

	snprintf(path, sizeof(path), "%s/profile-t.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkstemp(path)) == -1)
		bail("mkstemp: %s", strerror(errno));
	if (write(fd, enc, enclen) != (ssize_t)enclen)
		bail("write: %s", strerror(errno));
	close(fd);
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p != NULL && same_profile(p), "read_file round trips");
	ht_profile_free(p);

	/* "-" is stdin (which may be closed when the test starts: then the
	 * open below lands on descriptor 0 by itself). */
	saved = dup(STDIN_FILENO);
	if ((fd = open(path, O_RDONLY)) == -1)
		bail("open %s: %s", path, strerror(errno));
	if (fd != STDIN_FILENO) {
		if (dup2(fd, STDIN_FILENO) == -1)
			bail("dup2: %s", strerror(errno));
		close(fd);
	}
	p = ht_profile_read_file("-", err, sizeof(err));
	ok(p != NULL && same_profile(p), "read_file(\"-\") reads stdin");
	ht_profile_free(p);
	if (saved != -1) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	} else
		close(STDIN_FILENO);

	if (truncate(path, (off_t)enclen - 3) == -1)
		bail("truncate: %s", strerror(errno));
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p == NULL && strstr(err, "truncated") != NULL,
	    "read_file of a cut file: %s", err);
	if (truncate(path, 0) == -1)
		bail("truncate: %s", strerror(errno));
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p == NULL && strstr(err, "not a heaptool profile") != NULL,
	    "read_file of an empty file: %s", err);
	unlink(path);

	errno = 0;
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p == NULL && errno == ENOENT && strcmp(err, strerror(ENOENT)) == 0,
	    "read_file of a missing file: %s", err);
	p = ht_profile_read_file("/", err, sizeof(err));
	ok(p == NULL && strcmp(err, "not a regular file") == 0,
	    "read_file of a directory: %s", err);
	p = ht_profile_read_file("/dev/null", err, sizeof(err));
	ok(p == NULL && strcmp(err, "not a regular file") == 0,
	    "read_file of a device: %s", err);
	/* A FIFO with no writer: a blocking open would wait forever (the
	 * test's alarm ends it then). */
	strcat(path, ".fifo");
	if (mkfifo(path, 0600) == 0) {
		alarm(10);
		p = ht_profile_read_file(path, err, sizeof(err));
		alarm(0);
		ok(p == NULL && strcmp(err, "not a regular file") == 0,
		    "read_file of a FIFO returns at once: %s", err);
		unlink(path);
	} else
		skip("mkfifo %s: %s", path, strerror(errno));
}

/* A growing buffer, the writer's sink for profiles larger than a bb. */
struct dyn {
	uint8_t *b;
	size_t n, cap;
};

static void
dyn_put(struct dyn *d, const void *p, size_t n)
{
	if (d->n + n > d->cap) {
		d->cap = (d->n + n) * 2;
		if ((d->b = realloc(d->b, d->cap)) == NULL)
			bail("out of memory");
	}
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static int
dyn_flush(void *ctx, const void *buf, size_t len)
{
	dyn_put(ctx, buf, len);
	return 0;
}

static void
dyn_le(struct dyn *d, uint64_t v, int n)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	dyn_put(d, b, (size_t)n);
}

static void
write_file(const char *path, const struct dyn *d)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    write(fd, d->b, d->n) != (ssize_t)d->n || close(fd) != 0)
		bail("write %s: %s", path, strerror(errno));
}

/* Two decoded profiles hold the same sites and modules. */
static int
same_decoded(const struct ht_profile *a, const struct ht_profile *b)
{
	size_t i;

	if (a->nsites != b->nsites || a->nmodules != b->nmodules ||
	    a->nframes != b->nframes ||
	    memcmp(a->frames, b->frames, a->nframes * sizeof(a->frames[0])))
		return 0;
	for (i = 0; i < a->nsites; i++)
		if (a->sites[i].nframes != b->sites[i].nframes ||
		    a->sites[i].frames - a->frames !=
			b->sites[i].frames - b->frames ||
		    a->sites[i].inuse_bytes != b->sites[i].inuse_bytes ||
		    a->sites[i].folded != b->sites[i].folded)
			return 0;
	for (i = 0; i < a->nmodules; i++)
		if (strcmp(a->modules[i].path, b->modules[i].path) != 0)
			return 0;
	return 1;
}

/*
 * A file larger than the reader's window (1 MiB), with records across its
 * edges, an unknown record larger than the window and a SITE whose tail
 * is: read through the window, it decodes as the same bytes in memory do,
 * and a byte changed where only the CRC looks (beyond the window's part of
 * a record) is still caught.
 */
static void
test_read_window(void)
{
	static struct ht_site_rec s;
	struct ht_profile *p, *q;
	struct ht_pwriter w;
	struct dyn d = { NULL, 0, 0 };
	uint8_t chunk[4096];
	const char *tmp = getenv("TMPDIR");
	char path[4096], err[256];
	size_t i, unknown, tail, k;

	ht_pw_init(&w, chunk, sizeof(chunk), dyn_flush, &d);
	ht_pw_meta(&w, &meta);
	ht_pw_module(&w, &mods[0]);
	memset(&s, 0, sizeof(s));
	s.nframes = HT_PROFILE_MAX_FRAMES;
	for (i = 0; i < 6000; i++) {
		s.inuse_bytes = i;
		for (k = 0; k < HT_PROFILE_MAX_FRAMES; k++)
			s.frames[k] = 0x400000 + 64 * i + k;
		ht_pw_site(&w, &s);
	}
	if (ht_pw_finish(&w) != 0)
		bail("the writer failed");
	d.n -= 12; /* its END: ours follows the records added below */
	unknown = d.n;
	dyn_le(&d, 77, 4);
	dyn_le(&d, 5 << 19, 4);
	for (i = 0; i < 5 << 19; i++)
		dyn_le(&d, i * 7, 1);
	/* A SITE of 3 frames with 1.5 MiB of a later version's fields. */
	dyn_le(&d, HT_REC_SITE, 4);
	dyn_le(&d, 84 + 3 * 8 + 4 + (3 << 19), 4);
	for (i = 0; i < 10; i++)
		dyn_le(&d, 4242, 8);
	dyn_le(&d, 3, 4);
	for (i = 0; i < 3; i++)
		dyn_le(&d, 0x500000 + i, 8);
	dyn_le(&d, 0, 4);
	tail = d.n;
	for (i = 0; i < 3 << 19; i++)
		dyn_le(&d, i * 13, 1);
	dyn_le(&d, HT_REC_END, 4);
	dyn_le(&d, 4, 4);
	dyn_le(&d, ht_crc32(0, d.b, d.n), 4);

	snprintf(path, sizeof(path), "%s/profile-t-win.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((i = (size_t)mkstemp(path)) == (size_t)-1)
		bail("mkstemp: %s", strerror(errno));
	close((int)i);
	write_file(path, &d);
	p = ht_profile_read_file(path, err, sizeof(err));
	q = ht_profile_decode(d.b, d.n, err, sizeof(err));
	ok(p != NULL && q != NULL && p->nsites == 6001 &&
		p->sites[6000].nframes == 3 &&
		p->sites[6000].frames[2] == 0x500002 &&
		p->sites[6000].inuse_bytes == 4242 && same_decoded(p, q),
	    "a %zu-byte file read through the window decodes as in memory",
	    d.n);
	ht_profile_free(p);
	ht_profile_free(q);

	d.b[unknown + 8 + (2 << 20)] ^= 1;
	write_file(path, &d);
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p == NULL && strstr(err, "checksum mismatch") != NULL,
	    "a byte of an unknown record beyond the window: %s", err);
	d.b[unknown + 8 + (2 << 20)] ^= 1;
	d.b[tail + (1 << 20) + 17] ^= 0x40;
	write_file(path, &d);
	p = ht_profile_read_file(path, err, sizeof(err));
	ok(p == NULL && strstr(err, "checksum mismatch") != NULL,
	    "a byte of a SITE's tail beyond the window: %s", err);
	unlink(path);
	free(d.b);
}

/* Ours is zlib's CRC-32: the check value, and random buffers in pieces. */
static void
test_crc32(void)
{
	static uint8_t buf[4096];
	uint64_t s = 0x5eedc4c;
	uint32_t ours;
	size_t i, len, cut;
	int it, same = 1;

	is_uint(0xcbf43926, ht_crc32(0, "123456789", 9),
	    "CRC-32 check value of \"123456789\"");
	is_uint(0, ht_crc32(0, "", 0), "CRC-32 of nothing is 0");
	for (it = 0; it < 200; it++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		len = (size_t)(s % sizeof(buf));
		cut = len != 0 ? (size_t)(s >> 32) % len : 0;
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)(s >> (i % 57));
		ours = ht_crc32(ht_crc32(0, buf, cut), buf + cut, len - cut);
		if (ours != (uint32_t)crc32(0, buf, (uInt)len))
			same = 0;
	}
	ok(same, "ht_crc32 equals zlib's crc32 on 200 buffers, in two pieces");
}

int
main(void)
{
	plan(0);
	fill();
	test_round_trip();
	test_empty();
	test_timeline();
	test_sizes();
	test_flush();
	test_writer_clamps();
	test_hand_made();
	test_mutations();
	test_read_file();
	test_read_window();
	test_crc32();
	return 0;
}
