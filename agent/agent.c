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
 * HEAPTOOL_OUTPUT (the profile path), and the session's dumps (dump.h):
 * HEAPTOOL_DUMP_PREFIX (absolute), HEAPTOOL_DUMP_INTERVAL_MS,
 * HEAPTOOL_DUMP_EVERY, HEAPTOOL_DUMP_AT_RSS and HEAPTOOL_THRESHOLD (bytes,
 * decimal).  HEAPTOOL_SEED (a fixed seed for the sampler) is read in every
 * mode.  The constructor sets up, starts the session and patches, then
 * starts the control thread (control.h) so that a launched process can be
 * reported live.
 *
 * Attach mode (no HEAPTOOL_PID: loaded by heaptool attach, inside a dlopen
 * called by an injected thread, or linked into a program that uses the
 * in-process API) must not block the constructor: it only starts the
 * control thread, which sets up and patches the GOT slots with no session
 * (sampling begins at START) before it serves.  The API (api.c) may get
 * there first from a thread of the program: setup runs once, and patching
 * is idempotent.
 *
 * Nothing here may print, exit or abort: on any failure the agent stays
 * dormant or stops sampling, and the process runs on as if it were absent.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
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

/* Serializes module rescans and GOT patching: the current module set is
 * only replaced under it, so got.c may read the set while holding it. */
static struct ht_lock	rescan_lock;
static int		active;
/* The GOT slots are patched (HOOK) or restored (DETACH): written under
 * rescan_lock, so a dlopen hook that was entered before a detach cannot
 * patch the slots again after it. */
static int		hooked;
/* Set by a detach (DETACH), cleared when hooked again (HOOK): the API
 * must not put back hooks the user removed. */
static int		detached;
/* HEAPTOOL_PID names another process: the agent stays out of this one. */
static int		dormant;
static char		output[4096];
static pthread_once_t	setup_once = PTHREAD_ONCE_INIT;
static int		setup_rc = -1;

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
	ht_lock_acquire(&ht_lock_global);
	ht_modules_publish(&set);
	if (ht_session.state == HT_STATE_RUNNING)
		ht_session_note_modules(ht_modules_current());
	ht_lock_release(&ht_lock_global);
	/* got.c reads the set without ht_lock_global: rescan_lock keeps it
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
	ht_hooks_resolve_extra();
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
	ht_lock_acquire(&ht_lock_global);
}

static void
fork_parent(void)
{
	ht_lock_release(&ht_lock_global);
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
	ht_dump_disarm();
	ht_dump_fork_child();
	__atomic_store_n(&ht_session_gen, ht_session_gen + 1,
	    __ATOMIC_RELEASE);
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

static void
setup_run(void)
{
	if (ht_tables_init() != 0 || ht_dump_init() != 0)
		return;
	ht_got_set_filter(accept_slot);
	if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		return;
	active = 1;
	setup_rc = 0;
}

/* What every mode needs before a hook is installed: the tables, the dump
 * buffer, the slot filter and the fork handlers; once (the control thread
 * and the API may both come here), since fork handlers registered twice
 * would take the lock twice.  Returns 0 or -1. */
static int
setup(void)
{
	pthread_once(&setup_once, setup_run);
	return setup_rc;
}

/* Patch the slots, starting a session at rate first when rate is not 0
 * (launch mode: the first allocations after the patch are sampled), with
 * the dumps of cfg (NULL: none).  Returns the slots patched, or -1 with
 * nothing patched. */
static int
install(uint64_t rate, const struct ht_dump_cfg *cfg)
{
	int	rc;

	ht_tls.guard++;
	ht_got_resolve(ht_hooks, HT_NHOOKS);	/* before rescan_lock: see above */
	ht_hooks_resolve_extra();
	ht_lock_acquire(&rescan_lock);
	if (rate != 0) {
		ht_lock_acquire(&ht_lock_global);
		ht_session_start(rate);
		ht_dump_arm(cfg);
		ht_lock_release(&ht_lock_global);
	}
	__atomic_store_n(&hooked, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&detached, 0, __ATOMIC_RELAXED);
	if ((rc = rescan()) < 0) {
		/* ht_got_patch left nothing of this call patched. */
		__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
		if (rate != 0) {
			ht_lock_acquire(&ht_lock_global);
			ht_session_stop();
			ht_lock_release(&ht_lock_global);
		}
	}
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
	return rc;
}

int
ht_agent_attach_init(void)
{
	if (setup() != 0 || install(0, NULL) < 0)
		return -1;
	return 0;
}

int
ht_agent_prepare(void)
{
	int	rc = 0;

	if (dormant)
		return HT_API_EDISABLED;
	if (setup() != 0)
		return HT_API_ENOMEM;
	/* The flags change under rescan_lock (install, unhook). */
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	if (detached)
		rc = HT_API_EDETACHED;
	else if (!hooked)
		rc = 1;
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
	if (rc == 1)
		rc = install(0, NULL) < 0 ? HT_API_EHOOK : 0;
	return rc;
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
	return install(0, NULL);
}

int
ht_agent_unhook(void)
{
	int	rc;

	if (!active)
		return -1;
	ht_tls.guard++;
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_lock_global);
	ht_session_stop();
	ht_lock_release(&ht_lock_global);
	__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&detached, 1, __ATOMIC_RELAXED);
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
	ht_lock_acquire(&ht_lock_global);
	*modules = ht_modules_current()->n;
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_tls.guard--;
}

/* A number of the environment, 0 when unset; -1 if it does not parse. */
static int
env_u64(const char *name, uint64_t *out)
{
	const char	*s = getenv(name);

	*out = 0;
	if (s == NULL || *s == '\0')
		return 0;
	return parse_u64(s, out);
}

/* Launch mode's dumps, from the environment (see the top of this file).
 * A setting that does not parse, or a prefix the process cannot use,
 * leaves the session without dumps: heaptool run checked them first. */
static void
env_dumps(struct ht_dump_cfg *cfg)
{
	const char	*s = getenv("HEAPTOOL_DUMP_PREFIX");
	size_t		 len;

	memset(cfg, 0, sizeof(*cfg));
	if (s == NULL || (len = strlen(s)) == 0 || len > HT_DUMP_PREFIX_MAX ||
	    ht_dump_check_prefix(s) != 0)
		return;
	if (env_u64("HEAPTOOL_DUMP_INTERVAL_MS", &cfg->interval_ms) != 0 ||
	    env_u64("HEAPTOOL_DUMP_EVERY", &cfg->every_bytes) != 0 ||
	    env_u64("HEAPTOOL_DUMP_AT_RSS", &cfg->at_rss_bytes) != 0 ||
	    env_u64("HEAPTOOL_THRESHOLD", &cfg->threshold_bytes) != 0) {
		memset(cfg, 0, sizeof(*cfg));
		return;
	}
	memcpy(cfg->prefix, s, len + 1);
}

__attribute__((constructor)) static void
agent_init(void)
{
	static struct ht_dump_cfg	cfg;	/* large */
	uint64_t			pid, rate = DEFAULT_RATE, seed;
	const char			*s;
	size_t				len;

	if (parse_u64(getenv("HEAPTOOL_SEED"), &seed) == 0)
		ht_sampler_seed = seed;
	s = getenv("HEAPTOOL_PID");
	if (s == NULL) {
		ht_control_start(1);
		return;
	}
	/* Set but not ours: a descendant of a launched process. */
	if (parse_u64(s, &pid) != 0 || pid != (uint64_t)getpid()) {
		dormant = 1;
		return;
	}
	if (parse_u64(getenv("HEAPTOOL_RATE"), &rate) != 0 || rate == 0)
		rate = DEFAULT_RATE;
	s = getenv("HEAPTOOL_OUTPUT");
	if (s == NULL || (len = strlen(s)) == 0 || len >= sizeof(output)) {
		dormant = 1;
		return;
	}
	memcpy(output, s, len + 1);
	env_dumps(&cfg);

	if (setup() != 0 || install(rate, &cfg) < 0)
		return;
	/*
	 * A second thread costs a launched program more than it seems: once a
	 * process has one, glibc takes its arena lock on every allocation the
	 * thread cache does not serve (all blocks above 1 KiB), 2.5x the time
	 * of a 128 KiB malloc/free pair here.  So the agent's thread starts
	 * only for the triggers that need it; failure and exit dumps do not.
	 */
	s = getenv("HEAPTOOL_LIVE");
	if (ht_control_needed(&cfg) || (s != NULL && strcmp(s, "1") == 0))
		ht_control_start(0);
}

__attribute__((destructor)) static void
agent_fini(void)
{
	if (!active)
		return;
	ht_tls.guard++;
	/* The session's exit dump, if it runs with a prefix (any mode). */
	ht_dump_at_exit();
	/* Only launch mode names an output (attach mode leaves it empty). */
	if (output[0] != '\0' && ht_session.pid == getpid() &&
	    ht_session.state != HT_STATE_NONE) {
		ht_lock_acquire(&ht_lock_global);
		ht_session_stop();
		ht_lock_release(&ht_lock_global);
		ht_dump_path(output, HT_META_AT_EXIT, 0);
	}
	ht_tls.guard--;
}
