/*
 * The recorder's trace file (record.h): the drain that writes the
 * threads' published events into EVENTS chunks, and everything around
 * them (the header, INFO, FUNC, MODULE, THREAD, SITE and TAG chunks, END),
 * keeping the CRC of every byte written for END.  One consumer at a time:
 * the caller serializes (record.c's drain lock).
 *
 * Order: a thread's THREAD chunk goes before its first events, and its
 * buffers are written in the order it filled them (recbuf.h).  The file
 * never grows past max bytes: a chunk that would pass the limit less the
 * room reserved for the end (what the pool can still hold, the sites and
 * threads still to name, END) ends the recording instead (HT_RECDRAIN_FULL),
 * and what the buffers hold then still fits.
 */
#ifndef HT_RECDRAIN_H
#define HT_RECDRAIN_H

#include <stdint.h>

#include "trace.h"

#define HT_RECDRAIN_FULL	(-1) /* the size limit is reached */
/* The most threads a recording names (their indexes). */
#define HT_RECDRAIN_MAX_THREADS (1u << 20)

/* Start the file on fd (a regular file, written from its start): the
 * header, INFO, a FUNC chunk per allocator function, the modules loaded
 * now.  max: the limit in bytes (0: none).  Returns 0, or an errno value
 * (the file could not be written; nothing is kept, fd is closed).  From
 * then on, nothing is written, cut or closed through fd once it no longer
 * names the file it named here (the program took its number). */
int ht_recdrain_open(int fd, uint64_t max, const struct ht_trace_info *info);

/*
 * Write what the buffers publish, give back the buffers written whole and
 * retired (or whose thread is gone), and name the new threads and sites.
 * final: the recording has stopped and no thread writes any more: every
 * buffer is written and given back.  Returns 0, HT_RECDRAIN_FULL (stop
 * the recording; a final pass still fits), or an errno value (a write
 * failed: the rest is lost).
 */
int ht_recdrain_pass(int final);

/* The end: the tags and the modules loaded since the start, END with the
 * figures of e (its events, threads and CRC filled in here).  The file is
 * closed.  Returns 0 or an errno value. */
int ht_recdrain_close(struct ht_trace_end *e);

/* Give up the file without its end (a fork's child: not its file). */
void ht_recdrain_abandon(void);

/* The figures so far: events and bytes written, threads named. */
uint64_t ht_recdrain_events(void);
uint64_t ht_recdrain_bytes(void);
uint32_t ht_recdrain_threads(void);
/* Events published but not written (for a loss's count). */
uint64_t ht_recdrain_pending(void);

#endif
