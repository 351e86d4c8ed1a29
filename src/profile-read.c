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

#include "crc32.h"
#include "profile.h"
#include "profile-layout.h"

/* A cursor over one payload; reading past its end sets short and yields
 * zeros, so a record is decoded first and judged once. */
struct cursor {
	const uint8_t *p;
	size_t n;
	int short_;
};

static int
take(struct cursor *c, size_t n, const uint8_t **out)
{
	if (c->short_ || c->n < n) {
		c->short_ = 1;
		return -1;
	}
	*out = c->p;
	c->p += n;
	c->n -= n;
	return 0;
}

static uint64_t
le(const uint8_t *b, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static uint16_t
get_u16(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 2, &b) == 0 ? (uint16_t)le(b, 2) : 0;
}

static uint32_t
get_u32(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 4, &b) == 0 ? (uint32_t)le(b, 4) : 0;
}

static uint64_t
get_u64(struct cursor *c)
{
	const uint8_t *b;

	return take(c, 8, &b) == 0 ? le(b, 8) : 0;
}

static double
get_f64(struct cursor *c)
{
	uint64_t v = get_u64(c);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/*
 * A string into a field of size bytes: a longer string is cut to size - 1
 * bytes (the reader does not reject it; a later writer may allow more) and
 * the field is always NUL-terminated.
 */
static void
get_str(struct cursor *c, char *dst, size_t size)
{
	const uint8_t *b;
	size_t n = get_u16(c), k;

	dst[0] = '\0';
	if (take(c, n, &b) == -1)
		return;
	k = n < size - 1 ? n : size - 1;
	memcpy(dst, b, k);
	dst[k] = '\0';
}

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
	}
	snprintf(buf, len, "type-%u", (unsigned)type);
	return buf;
}

/* Make room for one more element of an array that grows by doubling.
 * Returns the array (moved, perhaps), or NULL with arr left as it was. */
static void *
grow(void *arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap != 0 ? *cap * 2 : 16;
	if (ncap > SIZE_MAX / size)
		return NULL;
	if ((p = realloc(arr, ncap * size)) == NULL)
		return NULL;
	*cap = ncap;
	return p;
}

static void
decode_meta(struct cursor *c, struct ht_meta *m, uint32_t version)
{
	m->pid = get_u64(c);
	m->epoch = get_u64(c);
	m->rate = get_u64(c);
	m->state = get_u32(c);
	m->flags = get_u32(c);
	m->start_ns = get_u64(c);
	m->end_ns = get_u64(c);
	m->peak_inuse_bytes = get_u64(c);
	m->peak_ns = get_u64(c);
	m->overhead_bytes = get_u64(c);
	m->dropped_samples = get_u64(c);
	m->samples = get_u64(c);
	m->live_samples = get_u64(c);
	m->heap_inuse_bytes = get_u64(c);
	m->heap_free_bytes = get_u64(c);
	m->heap_mmap_bytes = get_u64(c);
	m->rss_bytes = get_u64(c);
	get_str(c, m->command, sizeof(m->command));
	if (version >= PROFILE_VERSION_DROPS) {
		m->max_samples = get_u64(c);
		m->dropped_bytes = get_u64(c);
		m->dropped_objects = get_u64(c);
		m->drop_why = get_u32(c);
	}
	if (version >= PROFILE_VERSION_ALLOCATORS)
		m->signal = get_u32(c);
}

/* Returns 0, or -1 if the build-id is too long (the cursor's short flag
 * reports a short payload). */
static int
decode_module(struct cursor *c, struct ht_module_rec *mod, char *path)
{
	const uint8_t *b;

	mod->bias = get_u64(c);
	mod->start = get_u64(c);
	mod->end = get_u64(c);
	mod->build_id_len = get_u16(c);
	if (mod->build_id_len > HT_PROFILE_MAX_BUILD_ID)
		return -1;
	if (take(c, mod->build_id_len, &b) == 0)
		memcpy(mod->build_id, b, mod->build_id_len);
	get_str(c, path, HT_PROFILE_MAX_PATH);
	return 0;
}

static void
decode_thread(struct cursor *c, struct ht_thread_rec *t)
{
	t->tid = get_u32(c);
	t->inuse_bytes = get_u64(c);
	t->inuse_objects = get_u64(c);
	t->alloc_bytes = get_u64(c);
	t->alloc_objects = get_u64(c);
	t->samples = get_u64(c);
	get_str(c, t->name, sizeof(t->name));
}

/* Returns 0, or -1 if nframes is over the limit. */
static int
decode_site(struct cursor *c, struct ht_site_rec *s, uint32_t version)
{
	uint32_t i;

	s->inuse_bytes = get_u64(c);
	s->inuse_objects = get_u64(c);
	s->alloc_bytes = get_u64(c);
	s->alloc_objects = get_u64(c);
	s->samples = get_u64(c);
	s->live_samples = get_u64(c);
	s->inuse_var = get_f64(c);
	s->alloc_var = get_f64(c);
	s->peak_inuse_bytes = get_u64(c);
	s->peak_inuse_objects = get_u64(c);
	s->nframes = get_u32(c);
	if (s->nframes > HT_PROFILE_MAX_FRAMES)
		return -1;
	for (i = 0; i < s->nframes; i++)
		s->frames[i] = get_u64(c);
	if (version >= 2)
		s->folded = get_u32(c);
	return 0;
}

/* The END record at off holds the CRC of the bytes before its payload. */
static int
check_crc(const uint8_t *b, size_t off, size_t rlen, char *err, size_t errlen)
{
	uint32_t stored, computed;

	if (rlen < END_FIXED) {
		seterr(err, errlen,
		    "END record at offset %zu has no checksum "
		    "(truncated or corrupt profile)",
		    off);
		return -1;
	}
	stored = (uint32_t)le(b + off + 8, 4);
	computed = ht_crc32(0, b, off + 8);
	if (stored != computed) {
		seterr(err, errlen,
		    "checksum mismatch (stored %08x, computed "
		    "%08x): the profile is corrupt",
		    (unsigned)stored, (unsigned)computed);
		return -1;
	}
	return 0;
}

struct ht_profile *
ht_profile_decode(const void *buf, size_t len, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	struct ht_profile *pr;
	struct ht_module_rec *mod;
	struct ht_site_rec *site;
	struct cursor c;
	void *p;
	size_t off, mcap = 0, tcap = 0, scap = 0, acap = 0, rlen;
	struct ht_allocator_rec *al;
	uint32_t version, type;
	char tn[32], path[HT_PROFILE_MAX_PATH];
	int have_meta = 0;

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
		type = (uint32_t)le(b + off, 4);
		rlen = (size_t)le(b + off + 4, 4);
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
		c.p = b + off + 8;
		c.n = rlen;
		c.short_ = 0;
		switch (type) {
		case HT_REC_END:
			/* An older version's END is empty: one that holds a
			 * CRC is checked whatever the header says, so that a
			 * corrupt version field cannot turn the check off. */
			if ((version >= PROFILE_VERSION_CRC ||
				rlen >= END_FIXED) &&
			    check_crc(b, off, rlen, err, errlen) == -1)
				goto out_inval;
			return pr;
		case HT_REC_META:
			if (have_meta) {
				seterr(err, errlen,
				    "second META record at "
				    "offset %zu",
				    off);
				goto out_inval;
			}
			decode_meta(&c, &pr->meta, version);
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
			if ((p = grow(pr->modules, &mcap, pr->nmodules,
				 sizeof(*pr->modules))) == NULL)
				goto out_nomem;
			pr->modules = p;
			mod = &pr->modules[pr->nmodules];
			memset(mod, 0, sizeof(*mod));
			if (decode_module(&c, mod, path) == -1) {
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
			if ((p = grow(pr->threads, &tcap, pr->nthreads,
				 sizeof(*pr->threads))) == NULL)
				goto out_nomem;
			pr->threads = p;
			memset(&pr->threads[pr->nthreads], 0,
			    sizeof(*pr->threads));
			decode_thread(&c, &pr->threads[pr->nthreads++]);
			break;
		case HT_REC_SITE:
			if ((p = grow(pr->sites, &scap, pr->nsites,
				 sizeof(*pr->sites))) == NULL)
				goto out_nomem;
			pr->sites = p;
			site = &pr->sites[pr->nsites];
			memset(site, 0, sizeof(*site));
			if (decode_site(&c, site, version) == -1) {
				seterr(err, errlen,
				    "SITE record at offset %zu "
				    "has %u frames, at most %d",
				    off, (unsigned)site->nframes,
				    HT_PROFILE_MAX_FRAMES);
				goto out_inval;
			}
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
			if ((p = grow(pr->allocators, &acap, pr->nallocators,
				 sizeof(*pr->allocators))) == NULL)
				goto out_nomem;
			pr->allocators = p;
			al = &pr->allocators[pr->nallocators];
			al->names = get_u64(&c);
			get_str(&c, path, sizeof(path));
			if ((al->path = strdup(path)) == NULL)
				goto out_nomem;
			pr->nallocators++;
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
}

struct ht_profile *
ht_profile_read_file(const char *path, char *err, size_t errlen)
{
	struct ht_profile *pr = NULL;
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
	free(pr);
}
