/*
 * heaptool-replay: play an allocation trace (src/trace.h) back against
 * whatever allocator the process has (heaptool replay preloads the one to
 * time, and the agent when asked), one thread per recorded thread, and
 * say what it did and how long it took on stdout, as "key value" lines
 * that cli/replayer.c reads.  Libc and pthread only, so that it adds no
 * allocator calls and no library of its own to what is timed.
 *
 * The modules, lowest first: plan.c turns the trace into each thread's
 * steps and the table of blocks; ops.c does one step's allocator call;
 * play.c runs the threads; main.c reads the trace, runs, prints.
 */
#ifndef HT_REPLAY_H
#define HT_REPLAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Latency histograms: per op, size class (0 for size 0, k for sizes
 * 2^(k-1) to 2^k-1) and bucket (b for 2^(b-1) to 2^b-1 ns). */
#define RP_CLASSES 65
#define RP_BUCKETS 40

/* One event, as a thread plays it. */
struct rp_step {
	uint64_t size;	/* bytes asked (calloc: count * size) */
	uint32_t slot;	/* the block it makes, or RP_NONE */
	uint32_t ref;	/* the block it frees or reallocates, or RP_NONE */
	uint32_t order; /* its place in the sequence order of all events */
	uint8_t op;
	uint8_t how;   /* enum rp_how: which function exactly */
	uint8_t align; /* log2 of the alignment of an aligned op */
	uint8_t skip;  /* enum rp_skip: why the step is not played, or 0 */
};
#define RP_NONE UINT32_MAX

/* The exact function of a step. */
enum rp_how {
	RP_PLAIN = 0, /* the op's own (malloc, free, operator new ...) */
	RP_MEMALIGN,  /* memalign */
	RP_ALIGNED_ALLOC,
	RP_VALLOC,
	RP_PVALLOC,
	RP_POSIX_MEMALIGN,
	RP_NOTHROW,	/* operator new/delete (std::nothrow_t) */
	RP_ALIGNED_NEW, /* operator new/delete (std::align_val_t) */
};

enum rp_skip {
	RP_SKIP_PREEXISTING = 1, /* frees a block made before the trace */
	RP_SKIP_FAILED,		 /* an allocation that failed */
	RP_SKIP_UNMATCHED,	 /* names a block the trace has not (lost) */
};

struct rp_thread_plan {
	uint32_t idx;
	struct rp_step *steps;
	size_t nsteps;
};

/* The blocks: pointer published by the step that made it, read by the
 * one that frees it; 0 until then (a pointer stored with its low bit set,
 * so that NULL, from malloc(0) or a realloc to 0, is published too). */
struct rp_plan {
	struct rp_thread_plan *threads;
	size_t nthreads;
	_Atomic uintptr_t *ptr; /* per slot */
	uint64_t *size;		/* per slot: bytes asked, set by its maker */
	uint8_t *kind;		/* per slot: 1 + log2 of the alignment when an
			* aligned new made it, else 0 */
	size_t nslots;
	size_t nevents;
	int64_t *delta; /* per order: live bytes the step added (or took) */
	uint64_t skipped[4];
	int need_cxx; /* some step is a new or a delete */
};

/* Build the plan of t.  0, or -1 with a reason in err. */
int rp_plan_build(const struct ht_trace *t, struct rp_plan *p, char *err,
    size_t errlen);
void rp_plan_free(struct rp_plan *p);

/* Find the allocator's functions (operator new and delete from
 * libstdc++, loaded when need_cxx).  0, or -1 with a reason in err. */
int rp_ops_init(int need_cxx, char *err, size_t errlen);
/* Steps whose function was not found and were played by malloc/free. */
extern uint64_t rp_ops_substituted;
/* Make the block of s (old: the block a realloc takes, else NULL); the
 * new pointer, and *ok 0 when the allocation failed. */
void *rp_ops_alloc(const struct rp_step *s, void *old, int *ok);
/* Free p, of size bytes asked, with kind (struct rp_plan's). */
void rp_ops_free(const struct rp_step *s, void *p, uint64_t size, int kind);

/* What a run measured. */
struct rp_result {
	uint64_t wall_ns;
	/* CPU time of the replay's threads, user and system, from their
	 * start to their end: what another process's time slices do not
	 * count in. */
	uint64_t cpu_ns;
	/* With latency: the time inside the allocator calls, summed over the
	 * steps, each less the clock's own cost (timer_ns, the median of
	 * back-to-back reads). */
	uint64_t alloc_ns, timer_ns;
	uint64_t count[HT_TROP_MAX + 1], bytes[HT_TROP_MAX + 1];
	uint64_t failed; /* allocations that failed in the replay */
	uint64_t waits;	 /* steps that waited for another thread */
	size_t workers;	 /* the threads that played them (play.c) */
	uint32_t (*lat)[RP_CLASSES][RP_BUCKETS]; /* [op], or NULL */
};

/* Play p, each thread's steps in order; with latency, time each call
 * (two clock reads a step, counted in wall_ns).  0, or -1 with a reason
 * in err. */
int rp_play(struct rp_plan *p, int latency, struct rp_result *r, char *err,
    size_t errlen);

/* Called by rp_play once everything of the replayer's own is in memory
 * (the plan's tables, the threads and their stacks, the histograms) and
 * before the first step: where the run's RSS is measured from (main.c). */
void rp_rss_mark(void);

#endif
