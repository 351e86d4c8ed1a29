/*
 * The heaptool profile format, written by the agent (to a socket or a dump
 * file) and read by the CLI.  One format travels both ways; the full layout is
 * documented in man/heaptool-format.5.
 *
 * A profile is a header followed by records.  All integers are little-endian;
 * doubles are IEEE 754 binary64 stored as their 64-bit pattern.
 *
 *   header:  "HEAPPROF" (8 bytes), u32 version (HT_PROFILE_VERSION), u32 0
 *   record:  u32 type, u32 length of payload, payload
 *
 * Records: exactly one META first, then MODULE, THREAD, SITE, (version 5)
 * ALLOCATOR, (version 6) COVERAGE, (version 7) TAG, (version 8) TIMELINE
 * and (version 9) at most one SIZES record in any order, then END
 * (TIMELINE records in the order of their times).  Since version 3 END's payload is a u32, the CRC-32
 * (zlib's) of every byte of the file before it, header and END's own type
 * and length included; the reader refuses a file whose CRC differs, so a
 * corrupt byte anywhere is an error, never a wrong figure.  Versions 1 and
 * 2 have an empty END and are read unchecked.  A reader skips record types it does not
 * know (so adding a type is compatible) but refuses another major version.
 * A record's payload may be longer than the fields this version knows; readers
 * ignore the tail (so appending fields is compatible).  Strings are a u16
 * length and that many bytes, no NUL.
 *
 * Estimates are stored as integers already rounded from the agent's sums; the
 * variances are doubles.  A site's frames are raw return addresses (the
 * innermost first: the caller of the allocation function), already adjusted
 * by nothing: the symbolizer looks up pc - 1 for every frame.
 *
 * The writer needs no allocation (the agent uses it inside malloc hooks): the
 * caller gives it a buffer and a flush callback.  The reader (CLI only)
 * allocates the decoded profile with malloc and bounds-checks everything: any
 * input, however hostile, yields either a profile or an error message.
 */
#ifndef HT_PROFILE_H
#define HT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define HT_PROFILE_MAGIC	"HEAPPROF"
#define HT_PROFILE_VERSION	10 /* written; the reader takes 1 to 10 */
#define HT_PROFILE_MAX_FRAMES	64
#define HT_PROFILE_MAX_PATH	4096
#define HT_PROFILE_MAX_BUILD_ID 64

enum ht_record_type {
	HT_REC_END = 0,
	HT_REC_META = 1,
	HT_REC_MODULE = 2,
	HT_REC_THREAD = 3,
	HT_REC_SITE = 4,
	HT_REC_ALLOCATOR = 5, /* version 5 */
	HT_REC_COVERAGE = 6,  /* version 6 */
	HT_REC_TAG = 7,	      /* version 7 */
	HT_REC_TIMELINE = 8,  /* version 8 */
	HT_REC_SIZES = 9,     /* version 9 */
};

/* Version 9: the allocations of the session by size, bucket k holding the
 * sizes from 2^k to 2^(k+1) - 1 (bucket 0: sizes 0 and 1). */
#define HT_SIZE_BUCKETS 64

enum ht_session_state {
	HT_STATE_NONE = 0, /* no session was ever started */
	HT_STATE_RUNNING = 1,
	HT_STATE_STOPPED = 2,
};

/* "running", "stopped" or "none": the state's name in reports and JSON. */
const char *ht_profile_state_name(uint32_t state);

struct ht_meta {
	uint64_t pid;
	uint64_t epoch;		   /* session number, 1 for the first */
	uint64_t rate;		   /* bytes; 1 = every allocation */
	uint32_t state;		   /* enum ht_session_state */
	uint32_t flags;		   /* HT_META_* */
	uint64_t start_ns;	   /* CLOCK_REALTIME at session start */
	uint64_t end_ns;	   /* at stop, or at the snapshot if running */
	uint64_t peak_inuse_bytes; /* high-water mark of the estimate */
	uint64_t peak_ns;	   /* CLOCK_REALTIME when it was reached */
	uint64_t overhead_bytes;   /* memory the agent has mapped */
	uint64_t dropped_samples;  /* table overflow, lost stacks */
	uint64_t samples;	   /* samples taken in the session */
	uint64_t live_samples;	   /* samples not yet freed */
	/* The allocator's own view at the snapshot (glibc mallinfo2); all
	 * zero where unknown. */
	uint64_t heap_inuse_bytes;
	uint64_t heap_free_bytes;
	uint64_t heap_mmap_bytes;
	uint64_t rss_bytes; /* process RSS at the snapshot */
	char command[256];  /* the target's comm or argv[0], NUL-terminated */
	/* Version 4, after the command: the session's bound on live samples
	 * (and sites), what the dropped samples stood for (rounded estimates,
	 * exact at rate 1) and why they were dropped (HT_DROP_*).  All 0 in
	 * older profiles, whose drops are known by their number only. */
	uint64_t max_samples;
	uint64_t dropped_bytes;
	uint64_t dropped_objects;
	uint32_t drop_why;
	/* Version 5, after those: the signal the profile was written on
	 * (HT_META_ON_SIGNAL), else 0. */
	uint32_t signal;
	/* Version 6, after the signal: the backend in use (enum ht_backend
	 * of src/allocnames.h: 0 unknown, 1 got, 2 inline, 3 jemalloc, 4
	 * mimalloc); 0 in older profiles. */
	uint32_t backend;
	/* Version 7, after the backend: the tags the process has interned
	 * (0, untagged, included), the names refused for a full table, and
	 * the agent's memory for them: mapped, and taken by the names. */
	uint32_t tags;
	uint32_t tags_refused;
	uint64_t tag_cache_bytes;
	uint64_t tag_name_bytes;
};
/* Why samples were dropped: the live-sample table or the site table held
 * as many as the bound allows, or a table could not grow for want of
 * memory. */
#define HT_DROP_LIVE	      0x1
#define HT_DROP_SITES	      0x2
#define HT_DROP_NOMEM	      0x4
#define HT_META_AT_EXIT	      0x1 /* written by the agent as the process exited */
/* Dump files written by the agent itself say what made it write them. */
#define HT_META_ON_FAILURE    0x2  /* an allocation failed */
#define HT_META_ON_INTERVAL   0x4  /* --dump-interval */
#define HT_META_ON_EVERY      0x8  /* --dump-every */
#define HT_META_ON_RSS	      0x10 /* --dump-at-rss */
#define HT_META_ON_REQUEST    0x20 /* heaptool_dump() */
/* Version 5.  The final profile of an attached process, written as it
 * ended: at exit (with HT_META_AT_EXIT) or on the fatal signal of
 * ht_meta.signal (with HT_META_ON_SIGNAL). */
#define HT_META_FINAL	      0x40
#define HT_META_ON_SIGNAL     0x80
/* Version 5: the session began with the process (heaptool run): no block
 * of the heap predates it but the loader's. */
#define HT_META_LAUNCHED      0x100
/* The figures a backend that reads the allocator's own samples (jemalloc's
 * heap profile) cannot give: the peak (it keeps none), and what was
 * allocated and freed (jemalloc without opt.prof_accum).  They are shown as
 * unknown, never as 0. */
#define HT_META_PEAK_UNKNOWN  0x200
#define HT_META_ALLOC_UNKNOWN 0x400

struct ht_module_rec {
	uint64_t bias;	/* load bias: runtime address - ELF vaddr */
	uint64_t start; /* lowest mapped address */
	uint64_t end;	/* one past the highest mapped address */
	uint32_t build_id_len;
	uint8_t build_id[HT_PROFILE_MAX_BUILD_ID];
	/* The absolute path as the target saw it, NUL-terminated; written
	 * cut to HT_PROFILE_MAX_PATH - 1 bytes.  In a decoded profile it is
	 * the profile's (freed with it); a writer's caller owns its own. */
	const char *path;
};

/*
 * Version 5: a module that defines allocator entry points the hooks do not
 * reach (src/allocnames.h), so that part of the heap is not seen.
 */
struct ht_allocator_rec {
	uint64_t names; /* bit i: it defines ht_allocnames[i] */
	/* As ht_module_rec's path (the profile's when decoded). */
	const char *path;
};

/*
 * Version 6: one function of a module's allocator entry points, and
 * whether a backend hooks it (agent/coverage.h).  The version 6 writer
 * writes these instead of ALLOCATOR records.
 */
struct ht_coverage_rec {
	uint32_t backend; /* enum ht_backend (src/allocnames.h) */
	uint32_t reason;  /* enum ht_cov_reason */
	uint32_t kind;	  /* enum ht_fn_kind */
	uint32_t slots;	  /* GOT slots that lead to it */
	/* NUL-terminated; the profile's when decoded, the caller's when
	 * written (cut to HT_PROFILE_MAX_PATH - 1 bytes). */
	const char *family;
	const char *name;
	const char *module;
};

/*
 * Version 7: a tag, its name and the peaks of its two lines (kind 0,
 * malloc, and 1, arena): the most bytes each held in use at once in the
 * session, with its objects at that moment, as the agent saw them change
 * (rounded estimates; exact at rate 1).  What a line holds now is the sum
 * of its sites.  Tag 0 ("untagged") has a record with an empty name.
 */
struct ht_tag_rec {
	uint32_t id;
	uint64_t peak_bytes[2];
	uint64_t peak_objects[2];
	/* NUL-terminated: the profile's when decoded, the caller's when
	 * written (cut to 255 bytes). */
	const char *name;
};
#define HT_TAG_MALLOC 0
#define HT_TAG_ARENA  1

struct ht_thread_rec {
	uint32_t tid;
	char name[16]; /* as prctl(PR_GET_NAME) */
	uint64_t inuse_bytes;
	uint64_t inuse_objects;
	uint64_t alloc_bytes;
	uint64_t alloc_objects;
	uint64_t samples;
};

struct ht_site_rec {
	uint64_t inuse_bytes;
	uint64_t inuse_objects;
	uint64_t alloc_bytes;
	uint64_t alloc_objects;
	uint64_t samples;	   /* samples ever taken at this site */
	uint64_t live_samples;	   /* of which not yet freed */
	double inuse_var;	   /* variance of inuse_bytes */
	double alloc_var;	   /* variance of alloc_bytes */
	uint64_t peak_inuse_bytes; /* this site's in-use at the global peak */
	uint64_t peak_inuse_objects;
	uint32_t nframes;
	uint64_t frames[HT_PROFILE_MAX_FRAMES];
	/* Version 2: the number of sites folded into this record (a record
	 * with no frames that stands for the sites below a dump's threshold);
	 * 0 for a site of its own, and in version 1 profiles. */
	uint32_t folded;
	/* Version 7: the site's tag and kind (HT_TAG_MALLOC, HT_TAG_ARENA),
	 * part of its identity; 0 and 0 in older profiles. */
	uint32_t tag;
	uint32_t kind;
	/* Version 10: the estimate of the site's short-lived ("temporary")
	 * allocations, rounded, and the samples behind it; 0 and 0 in older
	 * profiles (ht_profile_temporary_known says whether they mean 0). */
	uint64_t temp_objects;
	uint64_t temp_samples;
};

/* Version 8: a point of the session's memory over time, taken by the
 * agent's thread every HT_TIMELINE_PERIOD_MS while the session runs (older
 * points thinned: agent/timeline.h).  The figures are the session's
 * totals then, estimates as the report's are. */
struct ht_timeline_rec {
	uint64_t t_ms; /* since the session's start */
	uint64_t inuse_bytes;
	uint64_t alloc_bytes;
	uint64_t rss_bytes;
	uint64_t samples;
	double inuse_var; /* variance of inuse_bytes */
};

/* Version 9: the session's allocations by size (HT_SIZE_BUCKETS), the
 * estimates of their number and bytes, rounded; nbuckets the buckets
 * written (those above are empty). */
struct ht_sizes_rec {
	uint32_t nbuckets;
	uint64_t objects[HT_SIZE_BUCKETS];
	uint64_t bytes[HT_SIZE_BUCKETS];
};

/* The bucket of an allocation of size bytes. */
unsigned ht_size_bucket(uint64_t size);

/*
 * Writer.  Records are appended to buf; when it fills, flush(ctx, buf, len)
 * is called (it returns 0, or -1 on failure, which sticks: every later call
 * is a no-op and ht_pw_finish returns -1).  Pass flush NULL to encode into
 * buf only (then overflowing buf is the failure).
 */
struct ht_pwriter {
	uint8_t *buf;
	size_t cap;
	size_t len;
	int (*flush)(void *ctx, const void *buf, size_t len);
	void *ctx;
	int failed;
	uint32_t crc; /* of every byte put so far */
};

void ht_pw_init(struct ht_pwriter *, uint8_t *buf, size_t cap,
    int (*flush)(void *, const void *, size_t), void *ctx);
/* ht_pw_meta writes the file header first, then META. */
void ht_pw_meta(struct ht_pwriter *, const struct ht_meta *);
void ht_pw_module(struct ht_pwriter *, const struct ht_module_rec *);
void ht_pw_thread(struct ht_pwriter *, const struct ht_thread_rec *);
void ht_pw_site(struct ht_pwriter *, const struct ht_site_rec *);
void ht_pw_allocator(struct ht_pwriter *, const struct ht_allocator_rec *);
void ht_pw_coverage(struct ht_pwriter *, const struct ht_coverage_rec *);
void ht_pw_tag(struct ht_pwriter *, const struct ht_tag_rec *);
void ht_pw_timeline(struct ht_pwriter *, const struct ht_timeline_rec *);
void ht_pw_sizes(struct ht_pwriter *, const struct ht_sizes_rec *);
/* Writes END and flushes.  Returns 0, or -1 if anything failed. */
int ht_pw_finish(struct ht_pwriter *);

/*
 * A site as the reader decodes it: the figures of its SITE record, and its
 * frames in the profile's one array of frames.  So a decoded profile takes
 * about the memory its file does, however few frames its sites have (a
 * struct ht_site_rec holds room for HT_PROFILE_MAX_FRAMES).
 */
struct ht_profile_site {
	uint64_t inuse_bytes;
	uint64_t inuse_objects;
	uint64_t alloc_bytes;
	uint64_t alloc_objects;
	uint64_t samples;
	uint64_t live_samples;
	double inuse_var;
	double alloc_var;
	uint64_t peak_inuse_bytes;
	uint64_t peak_inuse_objects;
	const uint64_t *frames; /* nframes, inside the profile's frames */
	uint32_t nframes;	/* at most HT_PROFILE_MAX_FRAMES */
	uint32_t folded;
	uint32_t tag; /* version 7 */
	uint32_t kind;
	uint64_t temp_objects; /* version 10 */
	uint64_t temp_samples;
};

/*
 * A decoded profile; arrays allocated with malloc, owned by the struct, each
 * of exactly the size its records need (the reader counts them first).
 */
struct ht_profile {
	uint32_t version;
	struct ht_meta meta;
	struct ht_module_rec *modules;
	size_t nmodules;
	struct ht_thread_rec *threads;
	size_t nthreads;
	struct ht_profile_site *sites;
	size_t nsites;
	struct ht_allocator_rec *allocators;
	size_t nallocators;
	struct ht_coverage_rec *coverage; /* version 6 */
	size_t ncoverage;
	struct ht_tag_rec *tags; /* version 7, in the file's order */
	size_t ntags;
	struct ht_timeline_rec *timeline; /* version 8, by time */
	size_t ntimeline;
	struct ht_sizes_rec sizes; /* version 9; nbuckets 0 where none */
	uint64_t *frames; /* every site's frames, one site after the other */
	size_t nframes;
};

/* Whether the profile counts short-lived allocations: version 10 and
 * later, where the hooks sample (not an allocator's own sampling, the
 * jemalloc and mimalloc backends). */
int ht_profile_temporary_known(const struct ht_profile *);

/* The record a writer would take for decoded site s (to write a decoded
 * profile again). */
void
ht_profile_site_rec(const struct ht_profile_site *s, struct ht_site_rec *r);

/* Decode len bytes at buf.  Returns a profile, or NULL with a one-line
 * reason in err (e.g. "not a heaptool profile", "truncated SITE record at
 * offset 1234", "format version 8, this heaptool reads 1 to 7",
 * "checksum mismatch: ..."). */
struct ht_profile *
ht_profile_decode(const void *buf, size_t len, char *err, size_t errlen);
/* Read and decode a whole file (path "-" is stdin).  NULL with err as above,
 * or with strerror for I/O failures. */
struct ht_profile *
ht_profile_read_file(const char *path, char *err, size_t errlen);
void ht_profile_free(struct ht_profile *);

/* Whether profiles a and b map the same modules at the same places (so a
 * symbolizer built for one serves the other). */
int
ht_profile_same_modules(const struct ht_profile *a, const struct ht_profile *b);

#endif
