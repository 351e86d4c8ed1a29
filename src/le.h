/*
 * Little-endian integers, byte by byte, so that the bytes of the control
 * protocol, the profile and the trace format never depend on the host or
 * on struct padding.  Libc only, no state: the agent and the CLI share it.
 */
#ifndef HT_LE_H
#define HT_LE_H

#include <stdint.h>

static inline void
ht_le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
ht_le_put32(uint8_t *p, uint32_t v)
{
	ht_le_put16(p, (uint16_t)v);
	ht_le_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void
ht_le_put64(uint8_t *p, uint64_t v)
{
	ht_le_put32(p, (uint32_t)v);
	ht_le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t
ht_le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
ht_le_get32(const uint8_t *p)
{
	return (uint32_t)ht_le_get16(p) | (uint32_t)ht_le_get16(p + 2) << 16;
}

static inline uint64_t
ht_le_get64(const uint8_t *p)
{
	return (uint64_t)ht_le_get32(p) | (uint64_t)ht_le_get32(p + 4) << 32;
}

#endif
