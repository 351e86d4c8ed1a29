/*
 * The allocation trace format (heaptool record, trace-stats, replay):
 * every allocator event of a recorded process, in the order each thread
 * made them, with a global sequence number that orders them across
 * threads.  man/heaptool-format.5 documents the layout; keep the two in
 * step.
 *
 * A file is a 16-byte header ("HTTRACE\0", u32 version, u32 0), then
 * chunks: u32 type, u32 payload length, the payload, padded with zeros to
 * a multiple of 8 bytes.  Every integer is little-endian.  A reader skips
 * a chunk type it does not know, so that a later version may add some.
 * The last chunk is END, whose CRC-32 covers every byte before END's own
 * header; a trace without END was cut short (the process died, or the
 * disk filled) and reads as incomplete, never as whole.
 *
 * Events come in EVENTS chunks, each of one thread's buffer: the thread's
 * index (a THREAD chunk before it names it: a trace cut short must still
 * name every thread it has events of), a count, and that many 48-byte
 * events.
 * Within a thread the events are in the order the thread made them; the
 * sequence numbers of all threads together are unique and order them as
 * the allocator saw them (a block's free has a larger number than its
 * allocation).  A block's identity is the sequence number of the event
 * that made it (its allocation, or the reallocation that moved or resized
 * it): addresses are reused, these never are.  A free or reallocation
 * names its block by that number in ref, or has HT_TREV_PREEXISTING when
 * the block was made before the recording began (ref 0).
 *
 * Writer (trace-write.c): encodes into a caller's buffer, no allocation,
 * libc only: the agent links it.  Reader (trace-read.c): the CLI's only.
 */
#ifndef HT_TRACE_H
#define HT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define HT_TRACE_MAGIC	     "HTTRACE" /* 8 bytes with its NUL */
#define HT_TRACE_VERSION     1
#define HT_TRACE_HEADER_SIZE 16
#define HT_TRACE_CHUNK_HEAD  8
#define HT_TRACE_EVENT_SIZE  48

enum ht_trace_chunk {
	HT_TRC_INFO = 1,   /* the recording: process, clocks, command */
	HT_TRC_FUNC = 2,   /* an allocator function's index and name */
	HT_TRC_THREAD = 3, /* a thread's index, tid and name */
	HT_TRC_MODULE = 4, /* a mapped module: range, offset, path */
	HT_TRC_SITE = 5,   /* a call site's id and address */
	HT_TRC_TAG = 6,	   /* a tag's id and name (tags.h) */
	HT_TRC_EVENTS = 7, /* one thread's events */
	HT_TRC_END = 8,	   /* totals, losses, CRC-32 */
};

/* What an event did.  The exact function is in fn (FUNC chunks name it). */
enum ht_trace_op {
	HT_TROP_MALLOC = 1,	     /* malloc-like: size bytes */
	HT_TROP_CALLOC = 2,	     /* zeroed: size = count * size */
	HT_TROP_REALLOC = 3,	     /* ref's block moved to a new one */
	HT_TROP_REALLOC_INPLACE = 4, /* ref's block resized where it is */
	HT_TROP_ALIGNED = 5,	   /* memalign, aligned_alloc, posix_memalign */
	HT_TROP_FREE = 6,	   /* free of ref's block */
	HT_TROP_FREE_SIZED = 7,	   /* free_sized, sdallocx: size given */
	HT_TROP_NEW = 8,	   /* operator new */
	HT_TROP_NEW_ARRAY = 9,	   /* operator new[] */
	HT_TROP_DELETE = 10,	   /* operator delete */
	HT_TROP_DELETE_ARRAY = 11, /* operator delete[] */
	HT_TROP_DELETE_SIZED = 12, /* operator delete(void *, size_t) */
	HT_TROP_DELETE_ARRAY_SIZED = 13,
	HT_TROP_MAX = 13
};

/* flags of an event. */
#define HT_TREV_PREEXISTING 0x01 /* the freed block predates the recording */
#define HT_TREV_FAILED	    0x02 /* the allocation failed (NULL) */
#define HT_TREV_NOTHROW	    0x04 /* a nothrow operator new or delete */
#define HT_TREV_ALIGNED	    0x08 /* align_log2 holds the alignment asked */
#define HT_TREV_NULL	    0x10 /* a free or realloc of NULL (no block) */

/* usable_over when the usable size is not known. */
#define HT_TRACE_USABLE_UNKNOWN UINT32_MAX

/*
 * One event, 48 bytes on disk in this order:
 *   u64 seq, t_ns, ref, size; u32 usable_over, site; u16 tag, fn;
 *   u8 op, flags, align_log2, 0.
 */
struct ht_trace_event {
	uint64_t seq;	      /* global order; a block's identity */
	uint64_t t_ns;	      /* CLOCK_MONOTONIC since INFO's mono_ns */
	uint64_t ref;	      /* the block freed or reallocated, or 0 */
	uint64_t size;	      /* bytes asked (sized frees: bytes given) */
	uint32_t usable_over; /* usable size - size, or ..._UNKNOWN */
	uint32_t site;	      /* call-site id (SITE), 0 unknown */
	uint16_t tag;	      /* tag id (TAG), 0 none */
	uint16_t fn;	      /* allocator function (FUNC) */
	uint8_t op;	      /* enum ht_trace_op */
	uint8_t flags;	      /* HT_TREV_* */
	uint8_t align_log2;   /* with HT_TREV_ALIGNED */
};

struct ht_trace_info {
	uint32_t pid;
	uint32_t page_size;
	uint64_t realtime_ns; /* CLOCK_REALTIME at the start */
	uint64_t mono_ns;     /* CLOCK_MONOTONIC at the start */
	/* The agent's own memory per recorded live block and per live
	 * sample of a profiling session (its tables' entry sizes), for
	 * trace-stats' overhead analysis. */
	uint32_t live_entry_bytes;
	uint32_t site_entry_bytes;
	const char *command; /* may be empty */
};

struct ht_trace_end {
	uint64_t events;      /* events written */
	uint64_t lost;	      /* events lost, 0 unless the writes failed */
	uint32_t lost_why;    /* an errno of the failed write, or 0 */
	uint32_t threads;     /* threads seen */
	uint64_t duration_ns; /* from the start to the end */
	uint64_t agent_bytes; /* the recorder's memory at its peak */
	uint64_t waits;	      /* times a thread waited for the drain */
};

/*
 * Writer.  Each function encodes one chunk at buf (cap bytes) and returns
 * the bytes it took, or 0 when they do not fit.  A chunk's size is known
 * beforehand: ht_tw_*_size().  The CRC of END is the caller's to keep
 * (ht_crc32 of every byte written before END).
 */
size_t ht_tw_header(uint8_t *buf, size_t cap);
size_t ht_tw_info(uint8_t *buf, size_t cap, const struct ht_trace_info *);
size_t ht_tw_func(uint8_t *buf, size_t cap, uint32_t idx, const char *name);
size_t ht_tw_thread(uint8_t *buf, size_t cap, uint32_t idx, uint32_t tid,
    const char *name);
size_t ht_tw_module(uint8_t *buf, size_t cap, uint64_t start, uint64_t end,
    uint64_t offset, const char *path);
size_t ht_tw_site(uint8_t *buf, size_t cap, uint32_t id, uint64_t addr);
size_t ht_tw_tag(uint8_t *buf, size_t cap, uint32_t id, const char *name);
/* The EVENTS chunk's head, for n events that follow it, each put by
 * ht_tw_event (HT_TRACE_EVENT_SIZE bytes; no padding is needed). */
size_t ht_tw_events_head(uint8_t *buf, size_t cap, uint32_t thread, uint32_t n);
size_t ht_tw_event(uint8_t *buf, size_t cap, const struct ht_trace_event *);
size_t
ht_tw_end(uint8_t *buf, size_t cap, const struct ht_trace_end *, uint32_t crc);
/* The bytes a chunk with a payload of n bytes takes, padding included. */
size_t ht_tw_chunk_size(size_t n);

/*
 * Reader.  The whole trace in memory: each thread's events in one array,
 * in the order the thread made them.
 */
struct ht_trace_thread {
	uint32_t idx;
	uint32_t tid;
	char *name; /* "" when none was recorded */
	struct ht_trace_event *ev;
	size_t nev;
};

struct ht_trace_site {
	uint32_t id;
	uint64_t addr;
};

struct ht_trace_module {
	uint64_t start, end, offset;
	char *path;
};

struct ht_trace_name {
	uint32_t id;
	char *name;
};

struct ht_trace {
	uint32_t version;
	struct ht_trace_info info;
	char *command;
	struct ht_trace_thread *threads; /* sorted by idx */
	size_t nthreads;
	struct ht_trace_site *sites; /* sorted by id */
	size_t nsites;
	struct ht_trace_module *modules;
	size_t nmodules;
	struct ht_trace_name *funcs; /* sorted by id */
	size_t nfuncs;
	struct ht_trace_name *tags; /* sorted by id */
	size_t ntags;
	uint64_t nevents;	 /* in all threads */
	int complete;		 /* END was there and its CRC held */
	struct ht_trace_end end; /* when complete */
	char incomplete_why[128];
};

/*
 * Read a trace file.  NULL on failure, with a one-line reason in err.  A
 * trace cut short (no END, or a last chunk cut off) reads with complete
 * 0 and the reason in incomplete_why; a wrong CRC, a malformed chunk or
 * an event of a thread no THREAD chunk named fails.
 */
struct ht_trace *ht_trace_read_file(const char *path, char *err, size_t errlen);
struct ht_trace *
ht_trace_decode(const void *buf, size_t len, char *err, size_t errlen);
void ht_trace_free(struct ht_trace *);
/* Decode one event's HT_TRACE_EVENT_SIZE bytes. */
void ht_trace_decode_event(const uint8_t *p, struct ht_trace_event *e);

/* Lookups in the sorted tables: NULL, or the name/entry. */
const char *ht_trace_func_name(const struct ht_trace *, uint32_t fn);
const char *ht_trace_tag_name(const struct ht_trace *, uint32_t tag);
const struct ht_trace_site *ht_trace_site(const struct ht_trace *, uint32_t id);
/* The name of an op ("malloc", "realloc-inplace", ...), "?" if unknown. */
const char *ht_trace_op_name(unsigned op);
/* Does op make a block (an allocation or a reallocation)? free one? */
int ht_trace_op_allocates(unsigned op);
int ht_trace_op_frees(unsigned op);

#endif
