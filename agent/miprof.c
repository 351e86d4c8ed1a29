/*
 * The mimalloc backend (miprof.h).  Untested against a real mimalloc: see
 * the header.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "guard.h"
#include "jemprof.h"
#include "lock.h"
#include "miprof.h"
#include "modules.h"
#include "sampler.h"
#include "unwind.h"

typedef size_t (
    *on_alloc_fn)(void *, void *, size_t, size_t, size_t, size_t, uint8_t);
typedef void (*on_free_fn)(void *, void *);
typedef bool (*enable_fn)(size_t, on_alloc_fn, on_free_fn);

static enable_fn enable_p;
static void *mi_malloc_p;
static int state = HT_NATIVE_ABSENT;
static const char *why = "the process has no mimalloc (no mi_malloc)";
static int enabled;
static uintptr_t mi_lo, mi_hi; /* mimalloc's module: frames stripped */
static char mi_path[512];      /* and its path, for the coverage */

int
ht_miprof_detect(void)
{
	if (state == HT_NATIVE_READY)
		return state;
	mi_malloc_p = dlsym(RTLD_DEFAULT, "mi_malloc");
	enable_p =
	    (enable_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "mi_profiler_enable");
	if (mi_malloc_p == NULL && enable_p == NULL) {
		state = HT_NATIVE_ABSENT;
		why = "the process has no mimalloc (no mi_malloc)";
	} else if (enable_p == NULL) {
		state = HT_NATIVE_PRESENT;
		why = "its mimalloc has no profiler API (mi_profiler_enable; "
		      "no mimalloc release has it yet)";
	} else {
		state = HT_NATIVE_READY;
		why = "";
	}
	return state;
}

const char *
ht_miprof_module(void)
{
	return mi_path[0] != '\0' ? mi_path : NULL;
}

int
ht_miprof_state(void)
{
	return state;
}

const char *
ht_miprof_why(void)
{
	return why;
}

/* Called by mimalloc on a thread that allocates, holding none of its
 * locks (its state is the thread's own). */
static size_t
on_alloc(void *user_data, void *ptr, size_t requested, size_t usable,
    size_t threshold, size_t since, uint8_t tag)
{
	struct ht_regs regs;

	(void)user_data;
	(void)usable;
	(void)threshold;
	(void)since;
	(void)tag;
	HT_REGS_CAPTURE(&regs);
	return (size_t)ht_sampler_native(ptr, requested, &regs, mi_lo, mi_hi);
}

static void
on_free(void *user_data, void *ptr)
{
	(void)user_data;
	ht_sampler_free(ptr);
}

int
ht_miprof_prepare(void)
{
	const struct ht_module *m;

	if (ht_miprof_detect() != HT_NATIVE_READY)
		return -1;
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	m = ht_modules_find(
	    (uintptr_t)(mi_malloc_p != NULL ? mi_malloc_p :
					      (void *)(uintptr_t)enable_p));
	mi_lo = mi_hi = 0;
	mi_path[0] = '\0';
	if (m != NULL && !(m->flags & HT_MOD_MAIN)) {
		mi_lo = m->start;
		mi_hi = m->end;
		memcpy(mi_path, m->path, sizeof(mi_path));
		mi_path[sizeof(mi_path) - 1] = '\0';
	}
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	if (!enabled) {
		/* No user data: the live table keeps what a free needs. */
		if (!enable_p(0, on_alloc, on_free)) {
			why =
			    "its mimalloc refused mi_profiler_enable (another "
			    "profiler has it)";
			return -1;
		}
		enabled = 1;
	}
	return 0;
}
