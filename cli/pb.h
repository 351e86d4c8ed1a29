/*
 * A small protocol buffers encoder and a gzip writer, for the pprof export.
 *
 * Messages are built in growable buffers: a nested message is encoded into
 * a buffer of its own and appended to its parent with its length, so no
 * size has to be known in advance.  Only the wire types the pprof schema
 * uses are here: varint (0) and length-delimited (2).  A failed allocation
 * sticks (every later call does nothing) and is reported once, by
 * ht_pb_failed, so that encoding code stays flat.
 */
#ifndef HT_PB_H
#define HT_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ht_pb {
	uint8_t *buf;
	size_t len;
	size_t cap;
	int failed; /* out of memory */
};

/* An empty buffer (also what a zeroed struct is). */
void ht_pb_init(struct ht_pb *);
void ht_pb_free(struct ht_pb *);
/* Empty the buffer, keeping its memory (and a failure). */
void ht_pb_reset(struct ht_pb *);

/* Make room for more bytes (the slow path of the writers below).
 * Returns 0, or -1 with the failure recorded. */
int ht_pb_reserve(struct ht_pb *, size_t more);

/* A bare varint, as in a packed repeated field.  Inline, as the next two:
 * an export of millions of frames calls them tens of millions of times. */
static inline void
ht_pb_varint(struct ht_pb *pb, uint64_t v)
{
	uint8_t *p;

	/* Seven bits a byte, low first; the high bit says more follow. */
	if (pb->cap - pb->len < 10 && ht_pb_reserve(pb, 10) != 0)
		return;
	p = pb->buf + pb->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	pb->len = (size_t)(p - pb->buf);
}

/* Field number field of wire type varint.  int64 fields take the two's
 * complement, as protobuf does. */
static inline void
ht_pb_uint(struct ht_pb *pb, uint32_t field, uint64_t v)
{
	ht_pb_varint(pb, (uint64_t)field << 3); /* wire type 0 */
	ht_pb_varint(pb, v);
}

static inline void
ht_pb_int(struct ht_pb *pb, uint32_t field, int64_t v)
{
	/* A negative int64 is a ten-byte varint of its two's complement. */
	ht_pb_uint(pb, field, (uint64_t)v);
}
/* Field of wire type length-delimited: bytes, a string, a packed array or
 * a message encoded in another buffer. */
void ht_pb_bytes(struct ht_pb *, uint32_t field, const void *, size_t);
void ht_pb_message(struct ht_pb *, uint32_t field, const struct ht_pb *);

/* Append the bytes of another buffer: fields encoded apart. */
void ht_pb_append(struct ht_pb *, const struct ht_pb *);

/* Nonzero if an allocation failed (errno was ENOMEM). */
int ht_pb_failed(const struct ht_pb *);

/*
 * A gzip member (RFC 1952) written to a stream as it is made, with zlib:
 * a large message need never be whole in memory.  Failures stick, as the
 * buffers' do, and are reported by ht_pb_gz_close.
 *
 * The first HT_PB_GZ_DEFLATE bytes are compressed at zlib's fastest
 * level; the rest is stored (deflate's uncompressed blocks: still one
 * gzip member, every reader takes it).  Deflating runs at some 50 MB/s
 * here, so that the export of a profile of millions of distinct
 * addresses (240 MB of protocol buffers) would take 5 s for that alone;
 * what a real profile exports stays under the bound, compressed whole.
 */
#define HT_PB_GZ_DEFLATE ((size_t)16 << 20)

struct ht_pb_gz {
	FILE *fp;
	void *z;    /* zlib's z_stream */
	int failed; /* the errno of the first failure, or 0 */
	size_t in;  /* bytes taken so far */
	int stored; /* past HT_PB_GZ_DEFLATE: no more compression */
};

/* Start a member on fp.  Returns 0, or -1 with errno ENOMEM. */
int ht_pb_gz_open(struct ht_pb_gz *, FILE *fp);
/* Compress the bytes of pb into the member, and empty pb. */
void ht_pb_gz_write(struct ht_pb_gz *, struct ht_pb *pb);
/* End the member and free its state.  Returns 0, or -1 with errno set (a
 * write error, or EIO for a compressor failure). */
int ht_pb_gz_close(struct ht_pb_gz *);

#endif
