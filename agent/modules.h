/*
 * The set of loaded modules (executable, shared objects, vdso) as the agent
 * sees them: address ranges, .eh_frame_hdr for the unwinder, the dynamic
 * section for GOT patching, build-id and path for the profile.
 *
 * ht_modules_scan() walks dl_iterate_phdr, which takes a loader lock: call it
 * without holding ht_lock_global (see lock.h) and never from a malloc hook's
 * sample path.  It fills a fresh set; ht_modules_publish() makes it current
 * under ht_lock_global.  ht_modules_find() and ht_modules_current() are called
 * with ht_lock_global held; what they return stays valid until the lock is
 * released.
 */
#ifndef HT_MODULES_H
#define HT_MODULES_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define HT_MAX_MODULES 1024

enum {
	HT_MOD_MAIN = 0x1,  /* the executable */
	HT_MOD_AGENT = 0x2, /* libheaptool-agent.so itself */
	HT_MOD_LDSO = 0x4,  /* the dynamic loader */
	HT_MOD_VDSO = 0x8,
	HT_MOD_LIBC = 0x10, /* libc.so.6 */
};

struct ht_module {
	uintptr_t bias;	      /* dlpi_addr / l_addr */
	uintptr_t start;      /* lowest PT_LOAD, page-aligned */
	uintptr_t end;	      /* end of highest PT_LOAD, page-aligned up */
	uintptr_t text_start; /* lowest executable PT_LOAD */
	uintptr_t text_end;   /* end of highest executable PT_LOAD */
	const uint8_t *eh_frame_hdr; /* PT_GNU_EH_FRAME at run time, or NULL */
	size_t eh_frame_hdr_len;
	const ElfW(Dyn) * dynamic; /* PT_DYNAMIC at run time, or NULL */
	const ElfW(Phdr) * phdr;   /* program headers (dlpi_phdr) */
	uint16_t phnum;
	unsigned flags; /* HT_MOD_* */
	uint32_t build_id_len;
	uint8_t build_id[HT_PROFILE_MAX_BUILD_ID];
	char path[512]; /* absolute; truncated if longer */
};

struct ht_modset {
	struct ht_module *mods; /* sorted by start */
	size_t n;
	size_t maplen; /* bytes mapped for mods */
};

/* Fill *out with the modules loaded now (memory from ht_mem_map).  Returns 0,
 * or -1 if memory could not be mapped.  Takes the loader lock. */
int ht_modules_scan(struct ht_modset *out);
/* Release a set's memory. */
void ht_modules_release(struct ht_modset *);
/* With ht_lock_global held: make *set current (taking ownership; *set is left
 * empty) and release the previous one.  Bumps ht_modules_generation. */
void ht_modules_publish(struct ht_modset *set);
/* With ht_lock_global held: the module whose [start, end) holds addr, or
 * NULL. */
const struct ht_module *ht_modules_find(uintptr_t addr);
/* Of any set the caller keeps alive (the current one under
 * ht_lock_global): the index of its first module that starts at or above
 * addr (set->n if none), and the module whose start is start, or NULL. */
size_t ht_modules_lower(const struct ht_modset *set, uintptr_t addr);
const struct ht_module *
ht_modules_at(const struct ht_modset *set, uintptr_t start);
/* With ht_lock_global held: the current set (never NULL; may be empty). */
const struct ht_modset *ht_modules_current(void);
/* Incremented by every publish; the unwind cache keys on it. */
extern unsigned ht_modules_generation;

/* Does m's [start, end) hold addr? */
static inline int
ht_modules_holds(const struct ht_module *m, uintptr_t addr)
{
	return addr >= m->start && addr < m->end;
}

#endif
