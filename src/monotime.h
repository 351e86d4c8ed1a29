/*
 * CLOCK_MONOTONIC in milliseconds and nanoseconds, for the CLI's deadlines
 * and intervals (the agent has its own, agent/prim.h, which must never
 * touch errno).  Libc only.
 */
#ifndef HT_MONOTIME_H
#define HT_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
ht_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
ht_mono_ms(void)
{
	return ht_mono_ns() / 1000000;
}

#endif
