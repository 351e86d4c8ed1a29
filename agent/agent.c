/*
 * The agent's life: the constructor decides whether this process is ours,
 * sets up the tables, starts the session and patches the GOT slots; the
 * dlopen/dlclose hooks bring new modules in; fork handlers keep the lock
 * sane in children (which are not profiled); the destructor writes the
 * profile at exit.
 *
 * Launch mode (heaptool run) passes its settings in the environment:
 * HEAPTOOL_PID (the process to profile: the agent stays dormant in any
 * other, so children that exec are not profiled), HEAPTOOL_RATE (bytes),
 * HEAPTOOL_OUTPUT (the profile path) and HEAPTOOL_SEED (fixed seed).  The
 * constructor sets up, starts the session and patches, then starts the
 * control thread (control.h) so that a launched process can be reported live.
 *
 * Attach mode (no HEAPTOOL_PID: loaded by heaptool attach, inside a dlopen
 * called by an injected thread) must not block the constructor: it only
 * starts the control thread, which sets up and patches the GOT slots with no
 * session (sampling begins at START) before it serves.
 *
 * Nothing here may print, exit or abort: on any failure the agent stays
 * dormant or stops sampling, and the process runs on as if it were absent.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "dump.h"
#include "got.h"
#include "hooks.h"
#include "lock.h"
#include "modules.h"
#include "sampler.h"
#include "session.h"
#include "tables.h"

#define DEFAULT_RATE	(512 * 1024)

struct ht_lock		ht_agent_lock;

/* Serializes module rescans and GOT patching: the current module set is
 * only replaced under it, so got.c may read the set while holding it. */
static struct ht_lock	rescan_lock;
static int		active;
/* The GOT slots are patched (HOOK) or restored (DETACH): written under
 * rescan_lock, so a dlopen hook that was entered before a detach cannot
 * patch the slots again after it. */
static int		hooked;
static char		output[4096];

static int
parse_u64(const char *s, uint64_t *out)
{
	uint64_t	v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * libstdc++'s operators call each other (new[] calls new, the nothrow forms
 * call the throwing ones) and malloc and free, all through libstdc++'s own
 * PLT.  Patching those slots would count each object two or three times, so
 * no slot of libstdc++ itself is patched, and new and delete are hooked in
 * the modules that call them, where they are bound to libstdc++'s (another
 * library's operator new calls malloc, which is hooked: hooking its new as
 * well would count twice).
 */
static int
is_libstdcxx(const char *path)
{
	const char	*b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	return strncmp(b, "libstdc++.so", 12) == 0;
}

static int
accept_slot(const struct ht_module *m, size_t index, void *original)
{
	const struct ht_module	*om;

	if (index == HT_H_DLOPEN || index == HT_H_DLCLOSE)
		return 1;
	if (is_libstdcxx(m->path))
		return 0;
	if (index >= HT_H_NEW && index <= HT_H_DELETE_ARRAY_ALIGN_NOTHROW) {
		om = ht_modules_find((uintptr_t)original);
		return om != NULL && is_libstdcxx(om->path);
	}
	return 1;
}

/* With rescan_lock held, after ht_got_resolve().  Nothing here may wait for
 * the loader's dl_load_lock (dl_iterate_phdr takes only its write lock, which
 * no thread holds while running constructors).  Returns the slots patched
 * now, or -1. */
static int
rescan(void)
{
	struct ht_modset	set;

	if (ht_modules_scan(&set) != 0)
		return -1;
	ht_lock_acquire(&ht_agent_lock);
	ht_modules_publish(&set);
	if (ht_session.state == HT_STATE_RUNNING)
		ht_session_note_modules(ht_modules_current());
	ht_lock_release(&ht_agent_lock);
	/* got.c reads the set without ht_agent_lock: rescan_lock keeps it
	 * from being replaced meanwhile. */
	return ht_got_patch(ht_modules_current(), ht_hooks, HT_NHOOKS);
}

void
ht_agent_modules_changed(void)
{
	if (!active)
		return;
	/* The loader may allocate for us (dlsym's error buffer): the guard
	 * keeps the agent's own work out of the profile. */
	ht_tls.guard++;
	/* dlsym before rescan_lock, never under it: this thread may be
	 * inside a constructor run by dlopen, holding the loader's lock,
	 * and the holder of rescan_lock must never wait for that lock. */
	ht_got_resolve(ht_hooks, HT_NHOOKS);
	ht_lock_acquire(&rescan_lock);
	if (hooked)
		rescan();
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

static void
fork_prepare(void)
{
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_agent_lock);
}

static void
fork_parent(void)
{
	ht_lock_release(&ht_agent_lock);
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

static void
fork_child(void)
{
	/* Children are not profiled: end the session here so every thread
	 * (only this one exists now) starts over at its next allocation
	 * and finds nothing to sample.  The parent's profile is untouched. */
	ht_session.state = HT_STATE_NONE;
	__atomic_store_n(&ht_session_gen, ht_session_gen + 1,
	    __ATOMIC_RELEASE);
	ht_lock_release(&ht_agent_lock);
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

/* What both modes need before a hook is installed: the tables, the dump
 * buffer, the slot filter and the fork handlers.  Returns 0 or -1. */
static int
setup(void)
{
	if (ht_tables_init() != 0 || ht_dump_init() != 0)
		return -1;
	ht_got_set_filter(accept_slot);
	if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		return -1;
	active = 1;
	return 0;
}

/* Patch the slots, starting a session at rate first when rate is not 0
 * (launch mode: the first allocations after the patch are sampled).
 * Returns the slots patched, or -1 with nothing patched. */
static int
install(uint64_t rate)
{
	int	rc;

	ht_tls.guard++;
	ht_got_resolve(ht_hooks, HT_NHOOKS);	/* before rescan_lock: see above */
	ht_lock_acquire(&rescan_lock);
	if (rate != 0) {
		ht_lock_acquire(&ht_agent_lock);
		ht_session_start(rate);
		ht_lock_release(&ht_agent_lock);
	}
	__atomic_store_n(&hooked, 1, __ATOMIC_RELAXED);
	if ((rc = rescan()) < 0) {
		/* ht_got_patch left nothing of this call patched. */
		__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
		if (rate != 0) {
			ht_lock_acquire(&ht_agent_lock);
			ht_session_stop();
			ht_lock_release(&ht_agent_lock);
		}
	}
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
	return rc;
}

int
ht_agent_attach_init(void)
{
	if (setup() != 0 || install(0) < 0)
		return -1;
	return 0;
}

int
ht_agent_hooked(void)
{
	return __atomic_load_n(&hooked, __ATOMIC_RELAXED);
}

int
ht_agent_hook(void)
{
	if (!active)
		return -1;
	return install(0);
}

int
ht_agent_unhook(void)
{
	int	rc;

	if (!active)
		return -1;
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_agent_lock);
	ht_session_stop();
	ht_lock_release(&ht_agent_lock);
	__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
	rc = ht_got_restore_all();
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
	return rc;
}

void
ht_agent_state(int *is_hooked, size_t *slots, size_t *modules)
{
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	*is_hooked = hooked;
	*slots = ht_got_patched_slots();
	ht_lock_acquire(&ht_agent_lock);
	*modules = ht_modules_current()->n;
	ht_lock_release(&ht_agent_lock);
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

__attribute__((constructor)) static void
agent_init(void)
{
	uint64_t	pid, rate = DEFAULT_RATE, seed;
	const char	*s;
	size_t		len;

	s = getenv("HEAPTOOL_PID");
	if (s == NULL) {
		ht_control_start(1);
		return;
	}
	/* Set but not ours: a descendant of a launched process. */
	if (parse_u64(s, &pid) != 0 || pid != (uint64_t)getpid())
		return;
	if (parse_u64(getenv("HEAPTOOL_RATE"), &rate) != 0 || rate == 0)
		rate = DEFAULT_RATE;
	if (parse_u64(getenv("HEAPTOOL_SEED"), &seed) == 0)
		ht_sampler_seed = seed;
	s = getenv("HEAPTOOL_OUTPUT");
	if (s == NULL || (len = strlen(s)) == 0 || len >= sizeof(output))
		return;
	memcpy(output, s, len + 1);

	if (setup() != 0 || install(rate) < 0)
		return;
	ht_control_start(0);
}

__attribute__((destructor)) static void
agent_fini(void)
{
	/* Only launch mode names an output (attach mode leaves it empty). */
	if (!active || output[0] == '\0' || ht_session.pid != getpid() ||
	    ht_session.state == HT_STATE_NONE)
		return;
	ht_tls.guard++;
	ht_lock_acquire(&ht_agent_lock);
	ht_session_stop();
	ht_lock_release(&ht_agent_lock);
	ht_dump_path(output, HT_META_AT_EXIT);
	ht_tls.guard--;
}
