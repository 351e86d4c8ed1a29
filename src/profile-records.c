/*
 * The profile's records, field by field (profile-cursor.h): what each
 * version appended, read where the version has it.  CLI only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile-cursor.h"
#include "profile-layout.h"
#include "profile.h"

void
ht_prec_meta(struct cursor *c, struct ht_meta *m, uint32_t version)
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
	if (version >= PROFILE_VERSION_COVERAGE)
		m->backend = get_u32(c);
	if (version >= PROFILE_VERSION_TAGS) {
		m->tags = get_u32(c);
		m->tags_refused = get_u32(c);
		m->tag_cache_bytes = get_u64(c);
		m->tag_name_bytes = get_u64(c);
	}
}

/* A TAG record, its name copied out: returns 0, or -1 out of memory. */
/* A SIZES record into s; -1 for more buckets than there are, or a
 * record shorter than its buckets. */
int
ht_prec_sizes(struct cursor *c, struct ht_sizes_rec *s)
{
	uint32_t n = get_u32(c), i;

	(void)get_u32(c);
	if (n == 0 || n > HT_SIZE_BUCKETS)
		return -1;
	for (i = 0; i < n; i++)
		s->objects[i] = get_u64(c);
	for (i = 0; i < n; i++)
		s->bytes[i] = get_u64(c);
	s->nbuckets = n;
	return c->short_ ? -1 : 0;
}

/* A TIMELINE record into t; -1 if it is older than prev, the point before
 * it (the writer puts them in the order of their times). */
int
ht_prec_timeline(struct cursor *c, struct ht_timeline_rec *t,
    const struct ht_timeline_rec *prev)
{
	t->t_ms = get_u64(c);
	t->inuse_bytes = get_u64(c);
	t->alloc_bytes = get_u64(c);
	t->rss_bytes = get_u64(c);
	t->samples = get_u64(c);
	t->inuse_var = get_f64(c);
	return prev != NULL && t->t_ms < prev->t_ms ? -1 : 0;
}

int
ht_prec_tag(struct cursor *c, struct ht_tag_rec *t, char *buf)
{
	t->id = get_u32(c);
	(void)get_u32(c);
	t->peak_bytes[0] = get_u64(c);
	t->peak_objects[0] = get_u64(c);
	t->peak_bytes[1] = get_u64(c);
	t->peak_objects[1] = get_u64(c);
	get_str(c, buf, 256);
	return (t->name = strdup(buf)) == NULL ? -1 : 0;
}

/* A COVERAGE record's strings are copied out: returns 0, or -1 out of
 * memory (the cursor's short flag reports a short payload). */
int
ht_prec_coverage(struct cursor *c, struct ht_coverage_rec *r, char *buf)
{
	r->backend = get_u32(c);
	r->reason = get_u32(c);
	r->kind = get_u32(c);
	r->slots = get_u32(c);
	get_str(c, buf, HT_PROFILE_MAX_PATH);
	if ((r->family = strdup(buf)) == NULL)
		return -1;
	get_str(c, buf, HT_PROFILE_MAX_PATH);
	if ((r->name = strdup(buf)) == NULL)
		return -1;
	get_str(c, buf, HT_PROFILE_MAX_PATH);
	if ((r->module = strdup(buf)) == NULL)
		return -1;
	return 0;
}

/* Returns 0, or -1 if the build-id is too long (the cursor's short flag
 * reports a short payload). */
int
ht_prec_module(struct cursor *c, struct ht_module_rec *mod, char *path)
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

void
ht_prec_thread(struct cursor *c, struct ht_thread_rec *t)
{
	t->tid = get_u32(c);
	t->inuse_bytes = get_u64(c);
	t->inuse_objects = get_u64(c);
	t->alloc_bytes = get_u64(c);
	t->alloc_objects = get_u64(c);
	t->samples = get_u64(c);
	get_str(c, t->name, sizeof(t->name));
}

/* Returns 0, or -1 if nframes is over the limit.  The frames go to
 * frames, which has room for room of them (what the counting pass saw:
 * more would be the reader's own bug, -2). */
int
ht_prec_site(struct cursor *c, struct ht_profile_site *s, uint64_t *frames,
    size_t room, uint32_t version)
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
	if (s->nframes > room)
		return -2;
	for (i = 0; i < s->nframes; i++)
		frames[i] = get_u64(c);
	s->frames = frames;
	if (version >= 2)
		s->folded = get_u32(c);
	if (version >= PROFILE_VERSION_TAGS) {
		s->tag = get_u32(c);
		s->kind = get_u32(c);
	}
	if (version >= PROFILE_VERSION_TEMPORARY) {
		s->temp_objects = get_u64(c);
		s->temp_samples = get_u64(c);
	}
	return 0;
}
