/*
 * Protocol buffers encoding and gzip output (see pb.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "pb.h"

enum {
	WIRE_VARINT = 0,
	WIRE_LEN = 2,
};

void
ht_pb_init(struct ht_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void
ht_pb_free(struct ht_pb *pb)
{
	free(pb->buf);
	memset(pb, 0, sizeof(*pb));
}

void
ht_pb_reset(struct ht_pb *pb)
{
	pb->len = 0;
}

int
ht_pb_failed(const struct ht_pb *pb)
{
	return pb->failed;
}

static int
reserve(struct ht_pb *pb, size_t more)
{
	uint8_t *p;
	size_t cap;

	if (pb->failed)
		return -1;
	if (more <= pb->cap - pb->len)
		return 0;
	cap = pb->cap == 0 ? 256 : pb->cap;
	while (cap - pb->len < more) {
		if (cap > SIZE_MAX / 2)
			goto out_nomem;
		cap *= 2;
	}
	if ((p = realloc(pb->buf, cap)) == NULL)
		goto out_nomem;
	pb->buf = p;
	pb->cap = cap;
	return 0;

out_nomem:
	pb->failed = 1;
	errno = ENOMEM;
	return -1;
}

void
ht_pb_varint(struct ht_pb *pb, uint64_t v)
{
	/* Seven bits a byte, low first; the high bit says more follow. */
	if (reserve(pb, 10) != 0)
		return;
	while (v >= 0x80) {
		pb->buf[pb->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	pb->buf[pb->len++] = (uint8_t)v;
}

static void
tag(struct ht_pb *pb, uint32_t field, unsigned wire)
{
	ht_pb_varint(pb, (uint64_t)field << 3 | wire);
}

void
ht_pb_uint(struct ht_pb *pb, uint32_t field, uint64_t v)
{
	tag(pb, field, WIRE_VARINT);
	ht_pb_varint(pb, v);
}

void
ht_pb_int(struct ht_pb *pb, uint32_t field, int64_t v)
{
	/* A negative int64 is a ten-byte varint of its two's complement. */
	ht_pb_uint(pb, field, (uint64_t)v);
}

void
ht_pb_bytes(struct ht_pb *pb, uint32_t field, const void *p, size_t n)
{
	tag(pb, field, WIRE_LEN);
	ht_pb_varint(pb, n);
	if (n == 0 || reserve(pb, n) != 0)
		return;
	memcpy(pb->buf + pb->len, p, n);
	pb->len += n;
}

void
ht_pb_message(struct ht_pb *pb, uint32_t field, const struct ht_pb *sub)
{
	if (sub->failed) {
		pb->failed = 1;
		return;
	}
	ht_pb_bytes(pb, field, sub->buf, sub->len);
}

void
ht_pb_append(struct ht_pb *pb, const struct ht_pb *more)
{
	if (more->failed) {
		pb->failed = 1;
		return;
	}
	if (more->len == 0 || reserve(pb, more->len) != 0)
		return;
	memcpy(pb->buf + pb->len, more->buf, more->len);
	pb->len += more->len;
}

int
ht_pb_gzip(FILE *fp, const void *buf, size_t len)
{
	unsigned char out[16384];
	z_stream z;
	size_t n;
	int rc, flush;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer around the deflate
	 * stream, as pprof expects of a profile on disk.  The fastest level:
	 * the tables compress well anyway, and the default level took a
	 * third of the export's time. */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
		Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)buf;
	do {
		/* avail_in is 32 bits wide: feed a large buffer in pieces. */
		if (z.avail_in == 0 && len > 0) {
			n = len > 1U << 30 ? 1U << 30 : len;
			z.avail_in = (uInt)n;
			len -= n;
		}
		flush = len == 0 ? Z_FINISH : Z_NO_FLUSH;
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, flush);
		if (rc == Z_STREAM_ERROR)
			goto out_zerr;
		n = sizeof(out) - z.avail_out;
		if (n > 0 && fwrite(out, 1, n, fp) != n)
			goto out_end;
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;

out_zerr:
	errno = EIO;
out_end:
	deflateEnd(&z);
	return -1;
}
