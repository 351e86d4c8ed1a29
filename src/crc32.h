/*
 * CRC-32 as zlib's crc32() computes it, for the profile format's checksum
 * (src/profile.c writes it, src/profile-read.c checks it).  Libc only, no
 * allocation, no lock: safe inside the agent's malloc hooks.
 */
#ifndef HT_CRC32_H
#define HT_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of buf[0..len) continued from crc, the CRC of what came before
 * (0 to start).  ht_crc32(ht_crc32(0, a, n), b, m) is the CRC of a then b. */
uint32_t ht_crc32(uint32_t crc, const void *buf, size_t len);

#endif
