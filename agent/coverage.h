/*
 * The account of coverage: for every module that defines allocator entry
 * points (the functions of src/allocnames.h's list), each function, and
 * whether a backend hooks it (which, and how: GOT slots that lead to it,
 * its first instructions patched, the allocator's own sampling) or why
 * not (no slot leads to it, it allocates nothing, it could not be patched
 * safely ...).  Status replies and profiles carry it (control.c,
 * snapshot.c), with the backend in use (a profile's META).
 *
 * The GOT backend's entries come from ht_coverage_scan(), after each patch
 * of the slots.  Any other backend records its own with ht_coverage_set()
 * and ht_coverage_set_backend(); the GOT scan then leaves an entry that
 * another backend set alone.  An entry is keyed by its module's path and
 * the function's name, and stays for the life of the process (a module
 * unloaded keeps what it last had: its allocations may be in a profile).
 *
 * Writers serialize on a lock of their own; readers take none (a snapshot
 * in a signal handler reads the table): every field is read and written
 * whole, and an entry or module is published by a release store of the
 * count after it is filled.  A reader may see one entry's fields from
 * two updates at once, never a torn field.  The tables are static, with
 * fixed bounds; what does not fit is counted (ht_coverage_overflow).
 */
#ifndef HT_COVERAGE_H
#define HT_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

#include "got.h"
#include "modules.h"

#define HT_COVERAGE_MAX	    1024 /* entries */
#define HT_COVERAGE_MODULES 64

/* One entry, as ht_coverage_get() copies it. */
struct ht_coverage_item {
	const char *module; /* its path; stays valid for the process's life */
	unsigned fn;	    /* index into ht_allocfns */
	unsigned backend;   /* enum ht_backend (allocnames.h) */
	unsigned reason;    /* enum ht_cov_reason */
	uint32_t slots;	    /* GOT slots that lead to it (GOT backend) */
};

/*
 * Record that function name (one of ht_allocfns) of the module whose path
 * is module is hooked by backend, or not, for reason (enum ht_cov_reason;
 * ht_cov_reason_hooked() says which reasons mean hooked).  Returns 0, or
 * -1 if the name is not in the list or the table is full.  Any thread, not
 * in a signal handler.
 */
int ht_coverage_set(const char *module, const char *name, unsigned backend,
    unsigned reason);

/* The backend in use (enum ht_backend), for META and the status: the GOT
 * backend sets it once its slots are patched (agent.c), another backend
 * when it takes over.  Atomic. */
void ht_coverage_set_backend(unsigned backend);
unsigned ht_coverage_backend(void);

/*
 * The GOT backend's account of every module of set (looked at once each
 * for the functions it defines; their slots counted again every time):
 * hooked says whether the slots are in (after a detach, every entry says
 * so); hooks[0..n) is the table got.c patched, whose i-th entry is
 * ht_allocfns[i] and whose dl (dlsym's answer) tells a function defined
 * here but preempted by another module's.  With agent.c's rescan_lock
 * held, after ht_got_patch(), the set kept alive.  Reads the modules'
 * memory and got.c's table only.
 */
void ht_coverage_scan(const struct ht_modset *set, int hooked,
    const struct ht_hook_def *hooks, size_t n);

/* The entries so far, and a copy of entry i (< ht_coverage_count()).
 * Lock-free. */
size_t ht_coverage_count(void);
void ht_coverage_get(size_t i, struct ht_coverage_item *out);

/* The functions hooked and not (those that allocate nothing, and those
 * another module's definition preempts, are neither), across the
 * entries.  Lock-free. */
void ht_coverage_summary(uint32_t *hooked, uint32_t *unhooked);

/*
 * The names of an allocator module that the hooks do not see (the warning
 * of allocators.h): names (bit i for ht_allocnames_name(i)) of the module
 * whose path is path, less those whose internal calls a backend sees: the
 * functions hooked inline (or counted inside one that is), and those the
 * allocator's own sampling reports.  Lock-free.
 */
uint64_t ht_coverage_unseen(const char *path, uint64_t names);

/* Entries and modules that did not fit. */
size_t ht_coverage_overflow(void);

#endif
