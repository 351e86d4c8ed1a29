/*
 * Layout constants of the profile format shared by its writer (profile.c,
 * linked into the agent) and its reader (profile-read.c, CLI only).  See
 * man/heaptool-format.5.
 */
#ifndef HT_PROFILE_LAYOUT_H
#define HT_PROFILE_LAYOUT_H

/* Fixed parts of the version 1 payloads, strings and frames excluded. */
#define META_FIXED		   128
#define MODULE_FIXED		   24
#define THREAD_FIXED		   44
#define SITE_FIXED		   84
#define HEADER_SIZE		   16
/* Version 2 appends to SITE, after the frames, u32 folded. */
#define SITE_V2_TAIL		   4
#define PROFILE_VERSION_MIN	   1 /* the oldest the reader takes */
/* Version 3: END's payload, u32 CRC-32 of everything before it. */
#define END_FIXED		   4
#define PROFILE_VERSION_CRC	   3
/* Version 4 appends to META, after the command: u64 max_samples, u64
 * dropped_bytes, u64 dropped_objects, u32 drop_why. */
#define META_V4_TAIL		   28
#define PROFILE_VERSION_DROPS	   4
/* Version 5 appends u32 signal to META, after version 4's tail; and has
 * ALLOCATOR records (u64 names, then the path). */
#define META_V5_TAIL		   4
#define ALLOCATOR_FIXED		   8
#define PROFILE_VERSION_ALLOCATORS 5
/* Version 6 appends u32 backend to META, after version 5's signal; and has
 * COVERAGE records (u32 backend, reason, kind, slots, then the family, the
 * function's name and the module's path). */
#define META_V6_TAIL		   4
#define COVERAGE_FIXED		   16
#define PROFILE_VERSION_COVERAGE   6
/* Version 7 appends to META, after version 6's backend: u32 tags, u32
 * tags_refused, u64 tag_cache_bytes, u64 tag_name_bytes; to SITE, after
 * folded, u32 tag and u32 kind; and has TAG records (u32 id, u32 0, u64
 * malloc peak bytes, objects, u64 arena peak bytes, objects, the name). */
#define META_V7_TAIL		   24
#define SITE_V7_TAIL		   8
#define TAG_FIXED		   40
#define PROFILE_VERSION_TAGS	   7
/* Version 8: TIMELINE records (u64 t_ms, inuse_bytes, alloc_bytes,
 * rss_bytes, samples, double inuse_var). */
#define TIMELINE_FIXED		   48
#define PROFILE_VERSION_TIMELINE   8
/* Version 9: a SIZES record (u32 nbuckets, u32 0, then nbuckets u64
 * objects and nbuckets u64 bytes). */
#define SIZES_FIXED		   8
#define PROFILE_VERSION_SIZES	   9
/* Version 10 appends to SITE, after kind: u64 temp_objects, u64
 * temp_samples (the site's short-lived allocations and their samples). */
#define SITE_V10_TAIL		   16
#define PROFILE_VERSION_TEMPORARY  10

/* The reader's bounds: a profile file, and the modules of one process
 * (a real one maps a few thousand). */
#define MAX_FILE       (1ULL << 30)
#define MAX_MODULES    65536
#define MAX_ALLOCATORS 4096
#define MAX_COVERAGE   65536
#define MAX_TAGS       (1 << 20)
#define MAX_TIMELINE   65536

#endif
