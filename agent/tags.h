/*
 * Tags (include/heaptool.h, heaptool(3)): names the program gives its
 * memory, interned into small numbers; each thread's current tag; and
 * heaptool_assign, a block's change of owner.
 *
 * Interning: the same name gives the same tag, for the life of the process
 * (names outlive sessions; what they count does not: the lines are the
 * tables', emptied at each start).  A name is copied once into the agent's
 * own memory.  A known name is found without a lock (the table is only
 * appended to, each entry published with a release store after it is
 * written); a new one is added under the table's own lock, never
 * ht_lock_global, so heaptool_tag may be called inside a tag's sample.
 * At most HT_TAGS_MAX tags (0, "untagged", is one): past that a new name
 * gets 0 and is counted.
 *
 * The program reaches these through the table heaptool_tags_v1 (api.c),
 * which the header's stubs find with dlsym; nothing here allocates from
 * the program's allocator, prints or fails but by returning a code.
 */
#ifndef HT_TAGS_H
#define HT_TAGS_H

#include <stddef.h>
#include <stdint.h>

#define HT_TAG_NAME_MAX 255

/* The tag of name (cut to HT_TAG_NAME_MAX bytes), interned; 0 for NULL
 * or "" or when the table is full or cannot be mapped. */
uint32_t ht_tags_intern(const char *name);
/* How many tags exist (0 to n - 1; 0 always, unnamed). */
uint32_t ht_tags_count(void);
/* The name of tag id (NUL-terminated, the agent's), "" for 0 and for an
 * id that does not exist. */
const char *ht_tags_name(uint32_t id);
/* What the tag table has mapped (the label cache), in bytes; how many
 * names it refused (full); how many bytes its names take. */
uint64_t ht_tags_mapped(void);
uint32_t ht_tags_refused(void);
uint64_t ht_tags_name_bytes(void);

#endif
