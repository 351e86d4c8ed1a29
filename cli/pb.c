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

int
ht_pb_reserve(struct ht_pb *pb, size_t more)
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

static void
tag(struct ht_pb *pb, uint32_t field, unsigned wire)
{
	ht_pb_varint(pb, (uint64_t)field << 3 | wire);
}

void
ht_pb_bytes(struct ht_pb *pb, uint32_t field, const void *p, size_t n)
{
	tag(pb, field, WIRE_LEN);
	ht_pb_varint(pb, n);
	if (n == 0 || ht_pb_reserve(pb, n) != 0)
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
	if (more->len == 0 || ht_pb_reserve(pb, more->len) != 0)
		return;
	memcpy(pb->buf + pb->len, more->buf, more->len);
	pb->len += more->len;
}

int
ht_pb_gz_open(struct ht_pb_gz *g, FILE *fp)
{
	z_stream *z;

	memset(g, 0, sizeof(*g));
	g->fp = fp;
	if ((z = calloc(1, sizeof(*z))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* windowBits 15 + 16: a gzip header and trailer around the deflate
	 * stream, as pprof expects of a profile on disk.  The fastest level:
	 * the tables compress well anyway, and the default level took a
	 * third of the export's time. */
	if (deflateInit2(z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
		Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z);
		errno = ENOMEM;
		return -1;
	}
	g->z = z;
	return 0;
}

/* Deflate len bytes at buf with flush; 0, or -1 (errno set, sticks). */
static int
deflate_out(struct ht_pb_gz *g, const void *buf, size_t len, int flush)
{
	unsigned char out[16384];
	z_stream *z = g->z;
	size_t n;
	int rc;

	z->next_in = (Bytef *)(uintptr_t)buf;
	z->avail_in = 0;
	do {
		/* avail_in is 32 bits wide: feed a large buffer in pieces. */
		if (z->avail_in == 0 && len > 0) {
			n = len > 1U << 30 ? 1U << 30 : len;
			z->avail_in = (uInt)n;
			len -= n;
		}
		z->next_out = out;
		z->avail_out = sizeof(out);
		rc = deflate(z, len == 0 ? flush : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR) {
			errno = EIO;
			goto out_fail;
		}
		n = sizeof(out) - z->avail_out;
		if (n > 0 && fwrite(out, 1, n, g->fp) != n)
			goto out_fail;
		/* Without Z_FINISH, done once the input is in and the output
		 * did not fill. */
	} while (flush == Z_FINISH ?
		rc != Z_STREAM_END :
		(z->avail_in > 0 || len > 0 || z->avail_out == 0));
	return 0;

out_fail:
	g->failed = errno != 0 ? errno : EIO;
	return -1;
}

/*
 * Store what follows rather than deflate it.  zlib deflates what it holds
 * at the old level first (deflateParams runs deflate with Z_BLOCK) and
 * says Z_BUF_ERROR until its output has had room for all of it.
 */
static void
go_stored(struct ht_pb_gz *g)
{
	unsigned char out[16384];
	z_stream *z = g->z;
	size_t n;
	int rc;

	g->stored = 1;
	z->avail_in = 0;
	do {
		z->next_out = out;
		z->avail_out = sizeof(out);
		rc = deflateParams(z, Z_NO_COMPRESSION, Z_DEFAULT_STRATEGY);
		n = sizeof(out) - z->avail_out;
		if (n > 0 && fwrite(out, 1, n, g->fp) != n) {
			g->failed = errno != 0 ? errno : EIO;
			return;
		}
	} while (rc == Z_BUF_ERROR && n > 0);
	/* Z_BUF_ERROR without output: it stays at the old level, which
	 * costs time, not correctness. */
	if (rc == Z_STREAM_ERROR)
		g->failed = EIO;
}

void
ht_pb_gz_write(struct ht_pb_gz *g, struct ht_pb *pb)
{
	if (pb->failed && !g->failed)
		g->failed = ENOMEM;
	if (!g->failed && g->z != NULL && !g->stored &&
	    g->in >= HT_PB_GZ_DEFLATE)
		go_stored(g);
	if (!g->failed && g->z != NULL && pb->len > 0) {
		(void)deflate_out(g, pb->buf, pb->len, Z_NO_FLUSH);
		g->in += pb->len;
	}
	ht_pb_reset(pb);
}

int
ht_pb_gz_close(struct ht_pb_gz *g)
{
	if (g->z == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (!g->failed)
		(void)deflate_out(g, NULL, 0, Z_FINISH);
	deflateEnd(g->z);
	free(g->z);
	g->z = NULL;
	if (g->failed) {
		errno = g->failed;
		return -1;
	}
	return 0;
}
