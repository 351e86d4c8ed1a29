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
 * HEAPTOOL_OUTPUT (the profile path) and HEAPTOOL_SEED (fixed seed).
 *
 * Nothing here may print, exit or abort: on any failure the agent stays
 * dormant or stops sampling, and the process runs on as if it were absent.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void
rescan(void)
{
	struct ht_modset	set;

	if (ht_modules_scan(&set) != 0)
		return;
	ht_lock_acquire(&ht_agent_lock);
	ht_modules_publish(&set);
	if (ht_session.state == HT_STATE_RUNNING)
		ht_session_note_modules(ht_modules_current());
	ht_lock_release(&ht_agent_lock);
	/* got.c reads the set without ht_agent_lock: rescan_lock keeps it
	 * from being replaced meanwhile. */
	ht_got_patch(ht_modules_current(), ht_hooks, HT_NHOOKS);
}

void
ht_agent_modules_changed(void)
{
	if (!active)
		return;
	/* The loader may allocate for us (dlsym's error buffer): the guard
	 * keeps the agent's own work out of the profile. */
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
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

__attribute__((constructor)) static void
agent_init(void)
{
	uint64_t	pid, rate = DEFAULT_RATE, seed;
	const char	*s;
	size_t		len;

	if (parse_u64(getenv("HEAPTOOL_PID"), &pid) != 0 ||
	    pid != (uint64_t)getpid())
		return;
	if (parse_u64(getenv("HEAPTOOL_RATE"), &rate) != 0 || rate == 0)
		rate = DEFAULT_RATE;
	if (parse_u64(getenv("HEAPTOOL_SEED"), &seed) == 0)
		ht_sampler_seed = seed;
	s = getenv("HEAPTOOL_OUTPUT");
	if (s == NULL || (len = strlen(s)) == 0 || len >= sizeof(output))
		return;
	memcpy(output, s, len + 1);

	if (ht_tables_init() != 0 || ht_dump_init() != 0)
		return;
	ht_got_set_filter(accept_slot);
	if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		return;
	active = 1;
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_agent_lock);
	ht_session_start(rate);
	ht_lock_release(&ht_agent_lock);
	rescan();
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

__attribute__((destructor)) static void
agent_fini(void)
{
	if (!active || ht_session.pid != getpid() ||
	    ht_session.state == HT_STATE_NONE)
		return;
	ht_tls.guard++;
	ht_lock_acquire(&ht_agent_lock);
	ht_session_stop();
	ht_lock_release(&ht_agent_lock);
	ht_dump_path(output, HT_META_AT_EXIT);
	ht_tls.guard--;
}
