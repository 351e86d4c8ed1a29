/*
 * The heaptool profile format's reader, which trusts nothing: every length is
 * checked against what remains, every count against its bound.  CLI only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocnames.h"
#include "crc32.h"
#include "profile.h"
#include "profile-cursor.h"
#include "profile-layout.h"

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *
type_name(uint32_t type, char *buf, size_t len)
{
	switch (type) {
	case HT_REC_END:
		return "END";
	case HT_REC_META:
		return "META";
	case HT_REC_MODULE:
		return "MODULE";
	case HT_REC_THREAD:
		return "THREAD";
	case HT_REC_SITE:
		return "SITE";
	case HT_REC_ALLOCATOR:
		return "ALLOCATOR";
	case HT_REC_COVERAGE:
		return "COVERAGE";
	case HT_REC_TAG:
		return "TAG";
	case HT_REC_TIMELINE:
		return "TIMELINE";
	case HT_REC_SIZES:
		return "SIZES";
	}
	snprintf(buf, len, "type-%u", (unsigned)type);
	return buf;
}

/*
 * Where a profile's bytes come from: memory (a live target's reply, a
 * buffer), or a file read through a window.  Decoding a file costs its
 * decoded size and the window, not the file's size besides: the decoded
 * profile of a 121 MB file took 240 MB when the file was read whole first.
 */
struct source {
	const uint8_t *mem; /* all len bytes, or NULL for the file */
	int fd;
	size_t len;
	uint8_t *win; /* file bytes [woff, woff + wlen) */
	size_t woff;
	size_t wlen;
	int ioerr; /* errno of a failed read, or 0 */
};

/* The window; any record's known fields fit in it (a string is at most
 * 65,535 bytes), so only a record's unknown tail may lie beyond. */
#define WINDOW (1U << 20)

/*
 * The n bytes (at most WINDOW) at off, which the caller has checked lie
 * in the profile.  Returns a pointer valid until the next call, or NULL
 * after a read error (ioerr says which; EIO for a file that shrank).
 */
static const uint8_t *
source_at(struct source *s, size_t off, size_t n)
{
	size_t want;
	ssize_t got;

	if (s->mem != NULL)
		return s->mem + off;
	if (off >= s->woff && n <= s->wlen && off - s->woff <= s->wlen - n)
		return s->win + (off - s->woff);
	want = s->len - off < WINDOW ? s->len - off : WINDOW;
	s->woff = off;
	s->wlen = 0;
	while (s->wlen < want) {
		got = pread(s->fd, s->win + s->wlen, want - s->wlen,
		    (off_t)(off + s->wlen));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			s->ioerr = got < 0 ? errno : EIO;
			return NULL;
		}
		s->wlen += (size_t)got;
	}
	return s->win;
}

/* Fold the n bytes at off into *crc (through the window, a piece at a
 * time).  Returns 0, or -1 after a read error. */
static int
source_crc(struct source *s, size_t off, size_t n, uint32_t *crc)
{
	const uint8_t *p;
	size_t k;

	while (n > 0) {
		k = n < WINDOW ? n : WINDOW;
		if ((p = source_at(s, off, k)) == NULL)
			return -1;
		*crc = ht_crc32(*crc, p, k);
		off += k;
		n -= k;
	}
	return 0;
}

/* What the records of a profile need: counted before they are decoded,
 * so that each array is allocated once, at its size (no array grown by
 * doubling, no site given room for frames it does not have). */
struct counts {
	size_t modules;
	size_t threads;
	size_t sites;
	size_t frames;
	size_t allocators;
	size_t coverage;
	size_t tags;
	size_t timeline;
};

/*
 * Count the records of the profile (whose header is checked) up to END or
 * the first record that does not fit.  What is wrong with a record is for
 * the decoding pass to say; this one only bounds what it stores.  Returns
 * 0, or -1 after a read error.
 */
static int
count_records(struct source *s, struct counts *n)
{
	const uint8_t *b;
	size_t off, rlen, len = s->len;
	uint32_t nf, type;

	memset(n, 0, sizeof(*n));
	for (off = HEADER_SIZE; len - off >= 8; off += 8 + rlen) {
		if ((b = source_at(s, off, 8)) == NULL)
			return -1;
		type = (uint32_t)le(b, 4);
		rlen = (size_t)le(b + 4, 4);
		if (rlen > len - off - 8)
			return 0;
		switch (type) {
		case HT_REC_END:
			return 0;
		case HT_REC_MODULE:
			n->modules++;
			break;
		case HT_REC_THREAD:
			n->threads++;
			break;
		case HT_REC_ALLOCATOR:
			n->allocators++;
			break;
		case HT_REC_COVERAGE:
			n->coverage++;
			break;
		case HT_REC_TAG:
			n->tags++;
			break;
		case HT_REC_TIMELINE:
			n->timeline++;
			break;
		case HT_REC_SITE:
			n->sites++;
			if (rlen < SITE_FIXED)
				break;
			if ((b = source_at(s, off + 8 + SITE_FIXED - 4, 4)) ==
			    NULL)
				return -1;
			nf = (uint32_t)le(b, 4);
			n->frames += nf < HT_PROFILE_MAX_FRAMES ?
			    nf :
			    HT_PROFILE_MAX_FRAMES;
			break;
		}
	}
	return 0;
}

/* n elements of size, zeroed, or NULL for none; *fail set when out of
 * memory. */
static void *
array(size_t n, size_t size, int *fail)
{
	void *p;

	if (n == 0)
		return NULL;
	if ((p = calloc(n, size)) == NULL)
		*fail = 1;
	return p;
}

/* The END record at off (its payload at p) holds the CRC of the bytes
 * before its payload, computed. */
static int
check_crc(const uint8_t *p, size_t off, size_t rlen, uint32_t computed,
    char *err, size_t errlen)
{
	uint32_t stored;

	if (rlen < END_FIXED) {
		seterr(err, errlen,
		    "END record at offset %zu has no checksum "
		    "(truncated or corrupt profile)",
		    off);
		return -1;
	}
	stored = (uint32_t)le(p, 4);
	if (stored != computed) {
		seterr(err, errlen,
		    "checksum mismatch (stored %08x, computed "
		    "%08x): the profile is corrupt",
		    (unsigned)stored, (unsigned)computed);
		return -1;
	}
	return 0;
}

/* Decode the profile s holds.  As ht_profile_decode. */
static struct ht_profile *
decode(struct source *s, char *err, size_t errlen)
{
	const uint8_t *b, *rec;
	size_t len = s->len, plen;
	uint32_t crc = 0;
	struct ht_profile *pr;
	struct ht_module_rec *mod;
	struct ht_profile_site *site;
	struct counts n;
	struct cursor c;
	struct ht_allocator_rec *al;
	size_t off, rlen;
	uint32_t version, type;
	char tn[32], path[HT_PROFILE_MAX_PATH];
	int have_meta = 0, fail = 0, rc;

	if ((b = source_at(s, 0, len < HEADER_SIZE ? len : HEADER_SIZE)) ==
	    NULL)
		goto out_io_early;
	if (len < 8 || memcmp(b, HT_PROFILE_MAGIC, 8) != 0) {
		if (len < 8 && len > 0 && memcmp(b, HT_PROFILE_MAGIC, len) == 0)
			seterr(err, errlen, "truncated profile header");
		else
			seterr(err, errlen, "not a heaptool profile");
		errno = EINVAL;
		return NULL;
	}
	if (len < HEADER_SIZE) {
		seterr(err, errlen, "truncated profile header");
		errno = EINVAL;
		return NULL;
	}
	version = (uint32_t)le(b + 8, 4);
	if (version < PROFILE_VERSION_MIN || version > HT_PROFILE_VERSION) {
		seterr(err, errlen,
		    "format version %u, this heaptool reads "
		    "%u to %u",
		    (unsigned)version, (unsigned)PROFILE_VERSION_MIN,
		    (unsigned)HT_PROFILE_VERSION);
		errno = EINVAL;
		return NULL;
	}
	if ((pr = calloc(1, sizeof(*pr))) == NULL) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	pr->version = version;
	crc = ht_crc32(0, b, HEADER_SIZE);
	if (count_records(s, &n) != 0)
		goto out_io;
	pr->modules = array(n.modules < MAX_MODULES ? n.modules : MAX_MODULES,
	    sizeof(*pr->modules), &fail);
	pr->threads = array(n.threads, sizeof(*pr->threads), &fail);
	pr->sites = array(n.sites, sizeof(*pr->sites), &fail);
	pr->frames = array(n.frames, sizeof(*pr->frames), &fail);
	pr->allocators =
	    array(n.allocators < MAX_ALLOCATORS ? n.allocators : MAX_ALLOCATORS,
		sizeof(*pr->allocators), &fail);
	pr->coverage =
	    array(n.coverage < MAX_COVERAGE ? n.coverage : MAX_COVERAGE,
		sizeof(*pr->coverage), &fail);
	pr->tags = array(n.tags < MAX_TAGS ? n.tags : MAX_TAGS,
	    sizeof(*pr->tags), &fail);
	pr->timeline =
	    array(n.timeline < MAX_TIMELINE ? n.timeline : MAX_TIMELINE,
		sizeof(*pr->timeline), &fail);
	if (fail)
		goto out_nomem;

	for (off = HEADER_SIZE;; off += 8 + rlen) {
		if (len - off < 8) {
			if (len == off)
				seterr(err, errlen,
				    "missing END record "
				    "(truncated profile) at offset %zu",
				    off);
			else
				seterr(err, errlen,
				    "truncated record header "
				    "at offset %zu",
				    off);
			goto out_inval;
		}
		if ((rec = source_at(s, off, 8)) == NULL)
			goto out_io;
		type = (uint32_t)le(rec, 4);
		rlen = (size_t)le(rec + 4, 4);
		if (rlen > len - off - 8) {
			seterr(err, errlen,
			    "truncated %s record at offset %zu "
			    "(length %zu, %zu bytes left)",
			    type_name(type, tn, sizeof(tn)), off, rlen,
			    len - off - 8);
			goto out_inval;
		}
		if (!have_meta && type != HT_REC_META) {
			seterr(err, errlen,
			    "META record missing: first "
			    "record is %s",
			    type_name(type, tn, sizeof(tn)));
			goto out_inval;
		}
		/* The record's header and its known fields; a longer
		 * payload's tail (a later version's fields, a record type
		 * this reader skips) only goes into the CRC. */
		plen = rlen < WINDOW - 8 ? rlen : WINDOW - 8;
		if ((rec = source_at(s, off, 8 + plen)) == NULL)
			goto out_io;
		if (type == HT_REC_END) {
			/* An older version's END is empty: one that holds a
			 * CRC is checked whatever the header says, so that a
			 * corrupt version field cannot turn the check off. */
			if ((version >= PROFILE_VERSION_CRC ||
				rlen >= END_FIXED) &&
			    (check_crc(rec + 8, off, rlen,
				 ht_crc32(crc, rec, 8), err, errlen) == -1))
				goto out_inval;
			return pr;
		}
		/* Summed whatever the version: an END may hold a CRC. */
		if (plen == rlen)
			crc = ht_crc32(crc, rec, 8 + rlen);
		else if (source_crc(s, off, 8 + rlen, &crc) != 0 ||
		    (rec = source_at(s, off, 8 + plen)) == NULL)
			goto out_io; /* the window moved: the record again */
		c.p = rec + 8;
		c.n = plen;
		c.short_ = 0;
		switch (type) {
		case HT_REC_META:
			if (have_meta) {
				seterr(err, errlen,
				    "second META record at "
				    "offset %zu",
				    off);
				goto out_inval;
			}
			ht_prec_meta(&c, &pr->meta, version);
			have_meta = 1;
			break;
		case HT_REC_MODULE:
			if (pr->nmodules >= MAX_MODULES) {
				seterr(err, errlen,
				    "more than %d MODULE "
				    "records",
				    MAX_MODULES);
				goto out_inval;
			}
			mod = &pr->modules[pr->nmodules];
			memset(mod, 0, sizeof(*mod));
			if (ht_prec_module(&c, mod, path) == -1) {
				seterr(err, errlen,
				    "MODULE record at offset "
				    "%zu has a %u-byte build-id, at most %d",
				    off, (unsigned)mod->build_id_len,
				    HT_PROFILE_MAX_BUILD_ID);
				goto out_inval;
			}
			/* The path on its own: a record of 26 bytes must not
			 * cost the 4 KiB a path may take. */
			if ((mod->path = strdup(path)) == NULL)
				goto out_nomem;
			pr->nmodules++;
			break;
		case HT_REC_THREAD:
			/* The counting pass walked these very records. */
			if (pr->nthreads >= n.threads)
				goto out_nomem;
			ht_prec_thread(&c, &pr->threads[pr->nthreads++]);
			break;
		case HT_REC_SITE:
			if (pr->nsites >= n.sites)
				goto out_nomem;
			site = &pr->sites[pr->nsites];
			/* No frame in the file: frames is NULL, and NULL + 0
			 * is undefined. */
			rc = ht_prec_site(&c, site,
			    pr->frames != NULL ? pr->frames + pr->nframes :
						 NULL,
			    n.frames - pr->nframes, version);
			if (rc == -2)
				goto out_nomem;
			if (rc == -1) {
				seterr(err, errlen,
				    "SITE record at offset %zu "
				    "has %u frames, at most %d",
				    off, (unsigned)site->nframes,
				    HT_PROFILE_MAX_FRAMES);
				goto out_inval;
			}
			pr->nframes += site->nframes;
			pr->nsites++;
			break;
		case HT_REC_ALLOCATOR:
			/* Unknown before version 5: skipped as any new type. */
			if (version < PROFILE_VERSION_ALLOCATORS)
				break;
			if (pr->nallocators >= MAX_ALLOCATORS) {
				seterr(err, errlen,
				    "more than %d ALLOCATOR records",
				    MAX_ALLOCATORS);
				goto out_inval;
			}
			if (pr->nallocators >= n.allocators)
				goto out_nomem;
			al = &pr->allocators[pr->nallocators];
			al->names = get_u64(&c);
			get_str(&c, path, sizeof(path));
			if ((al->path = strdup(path)) == NULL)
				goto out_nomem;
			pr->nallocators++;
			break;
		case HT_REC_COVERAGE:
			/* Unknown before version 6: skipped as any new type. */
			if (version < PROFILE_VERSION_COVERAGE)
				break;
			if (pr->ncoverage >= MAX_COVERAGE) {
				seterr(err, errlen,
				    "more than %d COVERAGE records",
				    MAX_COVERAGE);
				goto out_inval;
			}
			if (pr->ncoverage >= n.coverage)
				goto out_nomem;
			/* Counted before it is filled: freed with the profile
			 * whatever it holds. */
			if (ht_prec_coverage(&c, &pr->coverage[pr->ncoverage++],
				path) != 0)
				goto out_nomem;
			break;
		case HT_REC_TAG:
			/* Unknown before version 7: skipped as any new type. */
			if (version < PROFILE_VERSION_TAGS)
				break;
			if (pr->ntags >= MAX_TAGS) {
				seterr(err, errlen, "more than %d TAG records",
				    MAX_TAGS);
				goto out_inval;
			}
			if (pr->ntags >= n.tags)
				goto out_nomem;
			if (ht_prec_tag(&c, &pr->tags[pr->ntags++], path) != 0)
				goto out_nomem;
			break;
		case HT_REC_TIMELINE:
			/* Unknown before version 8: skipped as any new type. */
			if (version < PROFILE_VERSION_TIMELINE)
				break;
			if (pr->ntimeline >= MAX_TIMELINE) {
				seterr(err, errlen,
				    "more than %d TIMELINE records",
				    MAX_TIMELINE);
				goto out_inval;
			}
			if (pr->ntimeline >= n.timeline)
				goto out_nomem;
			if (ht_prec_timeline(&c, &pr->timeline[pr->ntimeline],
				pr->ntimeline > 0 ?
				    &pr->timeline[pr->ntimeline - 1] :
				    NULL) != 0) {
				seterr(err, errlen,
				    "TIMELINE record at offset %zu goes back "
				    "in time",
				    off);
				goto out_inval;
			}
			pr->ntimeline++;
			break;
		case HT_REC_SIZES:
			/* Unknown before version 9: skipped as any new type. */
			if (version < PROFILE_VERSION_SIZES)
				break;
			if (pr->sizes.nbuckets != 0) {
				seterr(err, errlen,
				    "a second SIZES record at offset %zu", off);
				goto out_inval;
			}
			if (ht_prec_sizes(&c, &pr->sizes) != 0) {
				seterr(err, errlen,
				    "SIZES record at offset %zu: no bucket, "
				    "more than %d, or fewer figures than "
				    "buckets",
				    off, HT_SIZE_BUCKETS);
				goto out_inval;
			}
			break;
			if (pr->sizes.nbuckets != 0 ||
			    ht_prec_sizes(&c, &pr->sizes) != 0) {
				seterr(err, errlen,
				    "SIZES record at offset %zu: %s", off,
				    pr->sizes.nbuckets != 0 && !c.short_ ?
					"a second one, or more than 64 "
					"buckets" :
					"truncated");
				goto out_inval;
			}
			break;
		default:
			/* A newer writer's record: skip it whole. */
			break;
		}
		if (c.short_) {
			seterr(err, errlen,
			    "short %s record at offset %zu "
			    "(length %zu)",
			    type_name(type, tn, sizeof(tn)), off, rlen);
			goto out_inval;
		}
	}

out_nomem:
	seterr(err, errlen, "out of memory");
	ht_profile_free(pr);
	errno = ENOMEM;
	return NULL;
out_inval:
	ht_profile_free(pr);
	errno = EINVAL;
	return NULL;
out_io:
	ht_profile_free(pr);
out_io_early:
	seterr(err, errlen, "%s",
	    s->ioerr == EIO ? "the file changed while it was read" :
			      strerror(s->ioerr));
	errno = s->ioerr;
	return NULL;
}

struct ht_profile *
ht_profile_decode(const void *buf, size_t len, char *err, size_t errlen)
{
	struct source s;

	memset(&s, 0, sizeof(s));
	s.mem = buf;
	s.len = len;
	/* A source in memory has nothing to read: never NULL. */
	if (s.mem == NULL)
		s.mem = (const uint8_t *)"";
	return decode(&s, err, errlen);
}

struct ht_profile *
ht_profile_read_file(const char *path, char *err, size_t errlen)
{
	struct ht_profile *pr = NULL;
	struct source src;
	struct stat st;
	uint8_t *buf = NULL, *p;
	size_t cap = 65536, len = 0, ncap;
	ssize_t n;
	int fd, saved;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path,
		      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) == -1) {
		seterr(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	/* A named file must be a regular one: a FIFO or a device would
	 * block or have effects of its own (a profile from a pipe comes
	 * through "-").  O_NONBLOCK above keeps the open itself from
	 * waiting on a FIFO's writer. */
	if (fd != STDIN_FILENO) {
		if (fstat(fd, &st) == -1)
			goto out_errno;
		if (!S_ISREG(st.st_mode)) {
			seterr(err, errlen, "not a regular file");
			errno = EINVAL;
			goto out_close;
		}
		if (fcntl(fd, F_SETFL, 0) == -1)
			goto out_errno;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > MAX_FILE) {
			seterr(err, errlen, "larger than %llu bytes",
			    (unsigned long long)MAX_FILE);
			errno = EFBIG;
			goto out_close;
		}
		/* One more byte so that end of file needs no regrowth. */
		cap = (size_t)st.st_size + 1;
	}
	if (fd != STDIN_FILENO) {
		/* A named file is read through the window, as big as the
		 * file when that is smaller. */
		memset(&src, 0, sizeof(src));
		src.fd = fd;
		src.len = (size_t)st.st_size;
		if ((src.win = malloc(
			 src.len < WINDOW ? src.len + 1 : WINDOW)) == NULL)
			goto out_errno;
		pr = decode(&src, err, errlen);
		saved = errno;
		free(src.win);
		errno = saved;
		goto out_close;
	}
	for (;;) {
		if (len == cap) {
			if (cap > MAX_FILE) {
				seterr(err, errlen, "larger than %llu bytes",
				    (unsigned long long)MAX_FILE);
				errno = EFBIG;
				goto out_free;
			}
			ncap = cap * 2 > MAX_FILE + 1 ? MAX_FILE + 1 : cap * 2;
			if ((p = realloc(buf, ncap)) == NULL)
				goto out_errno;
			buf = p;
			cap = ncap;
		} else if (buf == NULL && (buf = malloc(cap)) == NULL)
			goto out_errno;
		n = read(fd, buf + len, cap - len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			goto out_errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	pr = ht_profile_decode(buf, len, err, errlen);
	goto out_free;

out_errno:
	seterr(err, errlen, "%s", strerror(errno));
out_free:
	saved = errno;
	free(buf);
	errno = saved;
out_close:
	if (fd != STDIN_FILENO) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return pr;
}

void
ht_profile_free(struct ht_profile *pr)
{
	size_t i;

	if (pr == NULL)
		return;
	for (i = 0; i < pr->nmodules; i++)
		free((char *)pr->modules[i].path);
	free(pr->modules);
	free(pr->threads);
	free(pr->sites);
	for (i = 0; i < pr->nallocators; i++)
		free((char *)pr->allocators[i].path);
	free(pr->allocators);
	for (i = 0; i < pr->ncoverage; i++) {
		free((char *)pr->coverage[i].family);
		free((char *)pr->coverage[i].name);
		free((char *)pr->coverage[i].module);
	}
	free(pr->coverage);
	for (i = 0; i < pr->ntags; i++)
		free((char *)pr->tags[i].name);
	free(pr->tags);
	free(pr->timeline);
	free(pr->frames);
	free(pr);
}

void
ht_profile_site_rec(const struct ht_profile_site *s, struct ht_site_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->inuse_bytes = s->inuse_bytes;
	r->inuse_objects = s->inuse_objects;
	r->alloc_bytes = s->alloc_bytes;
	r->alloc_objects = s->alloc_objects;
	r->samples = s->samples;
	r->live_samples = s->live_samples;
	r->inuse_var = s->inuse_var;
	r->alloc_var = s->alloc_var;
	r->peak_inuse_bytes = s->peak_inuse_bytes;
	r->peak_inuse_objects = s->peak_inuse_objects;
	r->nframes = s->nframes < HT_PROFILE_MAX_FRAMES ? s->nframes :
							  HT_PROFILE_MAX_FRAMES;
	if (r->nframes > 0)
		memcpy(r->frames, s->frames, r->nframes * sizeof(r->frames[0]));
	r->folded = s->folded;
	r->tag = s->tag;
	r->kind = s->kind;
	r->temp_objects = s->temp_objects;
	r->temp_samples = s->temp_samples;
}

int
ht_profile_temporary_known(const struct ht_profile *p)
{
	return p->version >= PROFILE_VERSION_TEMPORARY &&
	    p->meta.backend != HT_BACKEND_JEMALLOC &&
	    p->meta.backend != HT_BACKEND_MIMALLOC;
}

static int
same_module(const struct ht_module_rec *a, const struct ht_module_rec *b)
{
	return a->bias == b->bias && a->start == b->start && a->end == b->end &&
	    a->build_id_len == b->build_id_len &&
	    memcmp(a->build_id, b->build_id,
		a->build_id_len < HT_PROFILE_MAX_BUILD_ID ?
		    a->build_id_len :
		    HT_PROFILE_MAX_BUILD_ID) == 0 &&
	    strcmp(a->path, b->path) == 0;
}

int
ht_profile_same_modules(const struct ht_profile *a, const struct ht_profile *b)
{
	size_t i;

	if (a->nmodules != b->nmodules)
		return 0;
	for (i = 0; i < a->nmodules; i++)
		if (!same_module(&a->modules[i], &b->modules[i]))
			return 0;
	return 1;
}
