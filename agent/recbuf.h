/*
 * The recorder's per-thread event buffers (record.h): one ring of events
 * per thread that records, mapped at its first event and registered in a
 * global list; the thread is its single producer, the drain its single
 * consumer.
 *
 * A thread writes an event into the slot at its ring's head and publishes
 * it by a release store of the head; the drain writes the events between
 * the tail and the head it sees, any time, and gives their slots back by a
 * release store of the tail.  A thread whose ring is full waits for the
 * drain (record.c).  A thread that exited leaves its ring registered: the
 * drain sees that the thread is gone (its tid no longer exists), writes
 * the rest and puts the ring on a free list, for the next new thread.
 */
#ifndef HT_RECBUF_H
#define HT_RECBUF_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define HT_RECBUF_MAX 65536 /* rings at once: threads that record */

struct ht_recbuf {
	uint64_t head;	 /* events published (the producer's) */
	char pad[56];	 /* head and tail on lines of their own */
	uint64_t tail;	 /* events written (the drain's) */
	uint32_t thread; /* the owner's index in the trace */
	uint32_t tid;
	uint32_t live; /* owned by a thread (1), or free (0) */
	struct ht_recbuf *next_free;
	uint8_t *ev; /* cap events of HT_TRACE_EVENT_SIZE bytes */
};

/* Rings of cap events each from now on.  0, or -1 (ENOMEM). */
int ht_recbuf_init(uint32_t cap);
/* Unmap every ring. */
void ht_recbuf_fini(void);
uint32_t ht_recbuf_cap(void);
/* Rings registered (some may be free), and the bytes they take. */
uint32_t ht_recbuf_count(void);
uint64_t ht_recbuf_bytes(void);
/* Ring i of the registered, for the drain; NULL while it is being
 * registered. */
struct ht_recbuf *ht_recbuf_at(uint32_t i);

/* A ring for a thread that has none: a free one or a new one, empty,
 * owned by (thread, tid).  NULL when none can be mapped. */
struct ht_recbuf *ht_recbuf_take(uint32_t thread, uint32_t tid);
/* The drain: b's thread is gone and b written whole: free for reuse. */
void ht_recbuf_give(struct ht_recbuf *b);
/* A word that every advance of a tail bumps: a thread waits for it to
 * change (a futex word). */
uint32_t *ht_recbuf_gen(void);

/* The slot for the event at head h. */
static inline uint8_t *
ht_recbuf_slot(struct ht_recbuf *b, uint64_t h)
{
	return b->ev + (size_t)(h % ht_recbuf_cap()) * HT_TRACE_EVENT_SIZE;
}

#endif
