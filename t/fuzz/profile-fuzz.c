/*
 * libFuzzer harness for the profile reader (make fuzz, configure
 * --enable-fuzz CC=clang).  Any input must decode to a profile or to an error
 * message without a stray access (ASan, UBSan); a decoded profile, written
 * again, must decode and re-encode to the very same bytes, so that the
 * writer and the reader agree on every field.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct out {
	uint8_t *b;
	size_t n, cap;
};

static int
append(void *ctx, const void *buf, size_t len)
{
	struct out *o = ctx;
	uint8_t *p;

	if (o->n + len > o->cap) {
		o->cap = (o->n + len) * 2;
		if ((p = realloc(o->b, o->cap)) == NULL)
			return -1;
		o->b = p;
	}
	memcpy(o->b + o->n, buf, len);
	o->n += len;
	return 0;
}

static void
encode(const struct ht_profile *p, struct out *o)
{
	static struct ht_site_rec site;
	struct ht_pwriter w;
	uint8_t buf[61]; /* odd: fields cross flushes */
	size_t i;

	o->n = 0;
	ht_pw_init(&w, buf, sizeof(buf), append, o);
	ht_pw_meta(&w, &p->meta);
	for (i = 0; i < p->nmodules; i++)
		ht_pw_module(&w, &p->modules[i]);
	for (i = 0; i < p->nthreads; i++)
		ht_pw_thread(&w, &p->threads[i]);
	for (i = 0; i < p->nsites; i++) {
		ht_profile_site_rec(&p->sites[i], &site);
		ht_pw_site(&w, &site);
	}
	for (i = 0; i < p->nallocators; i++)
		ht_pw_allocator(&w, &p->allocators[i]);
	for (i = 0; i < p->ncoverage; i++)
		ht_pw_coverage(&w, &p->coverage[i]);
	for (i = 0; i < p->ntags; i++)
		ht_pw_tag(&w, &p->tags[i]);
	for (i = 0; i < p->ntimeline; i++)
		ht_pw_timeline(&w, &p->timeline[i]);
	if (p->sizes.nbuckets > 0)
		ht_pw_sizes(&w, &p->sizes);
	if (ht_pw_finish(&w) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_profile *p, *q;
	struct out a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
	char err[256];

	err[0] = '\0';
	if ((p = ht_profile_decode(data, size, err, sizeof(err))) == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	encode(p, &a);
	if ((q = ht_profile_decode(a.b, a.n, err, sizeof(err))) == NULL)
		abort();
	encode(q, &b);
	if (a.n != b.n || memcmp(a.b, b.b, a.n) != 0)
		abort();
	ht_profile_free(p);
	ht_profile_free(q);
	free(a.b);
	free(b.b);
	return 0;
}
