/*
 * Tags (tags.h): the interning table.  The entry points the header's stubs
 * find (the thread's current tag, heaptool_assign) are api.c's.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lock.h"
#include "mem.h"
#include "tables.h"
#include "tags.h"

/* Twice as many slots as tags: probes stay short when it is full. */
#define SLOTS	   (2 * HT_TAGS_MAX)
/* Names are packed into chunks; a chunk is mapped when the last is full,
 * so a process with a few tags maps a few pages. */
#define CHUNK	   ((size_t)64 << 10)
#define CHUNKS_MAX (HT_TAGS_MAX * (HT_TAG_NAME_MAX + 1) / CHUNK + 1)

struct entry {
	uint64_t hash;
	const char *name; /* NUL-terminated, in a chunk */
	uint32_t len;
};

/* Published once, with release: the lock-free readers load them with
 * acquire. */
static uint32_t *slots;	      /* tag id, 0 = empty */
static struct entry *entries; /* by id; 0 unused */
static uint32_t ntags = 1;
static uint32_t refused;
static struct ht_lock tags_lock;
static char *chunk;
static size_t chunk_used, nchunks;
static uint64_t name_bytes;

static uint64_t
hash_name(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The id of the name at slot j's probe run, or 0 where the run ends
 * first; *at is the slot where it ended. */
static uint32_t
find(const struct entry *ents, const uint32_t *sl, uint64_t h, const char *name,
    size_t n, size_t *at)
{
	size_t j = h & (SLOTS - 1);
	uint32_t id;

	while ((id = __atomic_load_n(&sl[j], __ATOMIC_ACQUIRE)) != 0) {
		if (ents[id].hash == h && ents[id].len == n &&
		    memcmp(ents[id].name, name, n) == 0)
			return id;
		j = (j + 1) & (SLOTS - 1);
	}
	*at = j;
	return 0;
}

/* With tags_lock: room for a name of n bytes and its NUL, or NULL. */
static char *
name_room(size_t n)
{
	char *p;

	if (chunk == NULL || chunk_used + n + 1 > CHUNK) {
		if (nchunks >= CHUNKS_MAX || (p = ht_mem_map(CHUNK)) == NULL)
			return NULL;
		chunk = p;
		chunk_used = 0;
		__atomic_store_n(&nchunks, nchunks + 1, __ATOMIC_RELAXED);
	}
	p = chunk + chunk_used;
	chunk_used += n + 1;
	return p;
}

uint32_t
ht_tags_intern(const char *name)
{
	const struct entry *ents;
	const uint32_t *sl;
	uint32_t id = 0;
	uint64_t h;
	size_t n, at = 0;
	char *copy;

	if (name == NULL || name[0] == '\0')
		return 0;
	n = strnlen(name, HT_TAG_NAME_MAX);
	h = hash_name(name, n);
	ents = __atomic_load_n(&entries, __ATOMIC_ACQUIRE);
	sl = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
	if (ents != NULL && sl != NULL &&
	    (id = find(ents, sl, h, name, n, &at)) != 0)
		return id;
	ht_lock_acquire(&tags_lock);
	if (slots == NULL) {
		uint32_t *s = ht_mem_map(SLOTS * sizeof(*s));
		struct entry *e = ht_mem_map(HT_TAGS_MAX * sizeof(*e));

		if (s == NULL || e == NULL) {
			ht_mem_unmap(s, SLOTS * sizeof(*s));
			ht_mem_unmap(e, HT_TAGS_MAX * sizeof(*e));
			goto out;
		}
		__atomic_store_n(&entries, e, __ATOMIC_RELEASE);
		__atomic_store_n(&slots, s, __ATOMIC_RELEASE);
	}
	/* Again under the lock: another thread may have added it. */
	if ((id = find(entries, slots, h, name, n, &at)) != 0)
		goto out;
	if (ntags >= HT_TAGS_MAX || (copy = name_room(n)) == NULL) {
		__atomic_store_n(&refused, refused + 1, __ATOMIC_RELAXED);
		goto out;
	}
	memcpy(copy, name, n);
	copy[n] = '\0';
	id = ntags;
	entries[id].hash = h;
	entries[id].name = copy;
	entries[id].len = (uint32_t)n;
	__atomic_store_n(&name_bytes, name_bytes + n + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ntags, id + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&slots[at], id, __ATOMIC_RELEASE);
out:
	ht_lock_release(&tags_lock);
	return id;
}

uint32_t
ht_tags_count(void)
{
	return __atomic_load_n(&ntags, __ATOMIC_ACQUIRE);
}

const char *
ht_tags_name(uint32_t id)
{
	const struct entry *ents = __atomic_load_n(&entries, __ATOMIC_ACQUIRE);

	if (id == 0 || id >= ht_tags_count() || ents == NULL)
		return "";
	return ents[id].name;
}

/* Read without the lock (a snapshot in a signal handler must not wait
 * for it): each figure is one word, written under it. */
uint64_t
ht_tags_mapped(void)
{
	if (__atomic_load_n(&slots, __ATOMIC_ACQUIRE) == NULL)
		return 0;
	return SLOTS * sizeof(*slots) + HT_TAGS_MAX * sizeof(*entries) +
	    __atomic_load_n(&nchunks, __ATOMIC_RELAXED) * CHUNK;
}

uint32_t
ht_tags_refused(void)
{
	return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

uint64_t
ht_tags_name_bytes(void)
{
	return __atomic_load_n(&name_bytes, __ATOMIC_RELAXED);
}
