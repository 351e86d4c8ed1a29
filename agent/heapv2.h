/*
 * jemalloc's heap profile (prof.dump's "heap_v2" text), parsed: the
 * sampling rate of its first line ("heap_v2/RATE"), then each stack ("@"
 * and its return addresses in hex) with the counts of its "t*:" line,
 * "curobjs: curbytes [accumobjs: accumbytes]"; the threads' lines and the
 * mapped libraries at the end are skipped.
 *
 * Bounded and allocation-free, for the agent: each byte is looked at a
 * bounded number of times, numbers that do not fit 64 bits and addresses
 * of more than 16 digits end their line, a stack keeps its first
 * HT_HEAPV2_FRAMES frames, and a stack without a well-formed count line is
 * skipped.  Any input, however malformed, gives a rate and stacks or an
 * error, never a read outside [buf, buf + len).
 */
#ifndef HT_HEAPV2_H
#define HT_HEAPV2_H

#include <stddef.h>
#include <stdint.h>

#define HT_HEAPV2_FRAMES 64

/* A stack and its counts: v[0] curobjs, v[1] curbytes, v[2] accumobjs,
 * v[3] accumbytes, as jemalloc wrote them.  frames stays valid for the
 * call only. */
typedef void (*ht_heapv2_stack_fn)(void *ctx, const uintptr_t *frames,
    uint32_t nframes, const uint64_t v[4]);

/* Parse len bytes at buf, calling each for every stack with at least one
 * frame.  Returns 0 with the rate in *rate, or -1 if buf does not begin
 * with "heap_v2/" and a rate of at least 1 (each is then never called). */
int ht_heapv2_parse(const char *buf, size_t len, uint64_t *rate,
    ht_heapv2_stack_fn each, void *ctx);

#endif
