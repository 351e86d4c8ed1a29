/*
 * The agent's life (agent.h): the set-up every mode needs, putting the hooks
 * in and taking them out, the one way a session starts and stops, the
 * rescans after dlopen and dlclose (whose hooks live here, since a rescan is
 * what follows them), fork, and exit.  The constructor (init.c), the
 * control thread (control.c) and the in-process API (api.c) all come here;
 * nothing here calls them.
 *
 * Two locks, always in this order: rescan_lock serializes module rescans
 * and GOT patching, and guards the hooked and detached flags;
 * ht_lock_global guards the session.  The loader's lock may be held when
 * either is taken (a dlopen hook runs inside the loader), so dlsym never
 * runs under either (ht_got_resolve comes before rescan_lock), and under
 * rescan_lock the loader is entered only by dl_iterate_phdr, whose lock no
 * thread holds while it runs constructors.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "agent.h"
#include "allocators.h"
#include "coverage.h"
#include "dump.h"
#include "final.h"
#include "follow.h"
#include "got.h"
#include "guard.h"
#include "hooks.h"
#include "ihooks.h"
#include "jemprof.h"
#include "lock.h"
#include "miprof.h"
#include "modules.h"
#include "profile.h"
#include "record.h"
#include "sampler.h"
#include "session.h"
#include "snapshot.h"
#include "tables.h"

#define CALLER ((uintptr_t)__builtin_return_address(0))

/* Serializes module rescans and GOT patching: the current module set is
 * only replaced under it, so got.c may read the set while holding it. */
static struct ht_lock rescan_lock;
/* Set up (setup() succeeded): the hooks may go in. */
static int active;
/* The GOT slots are patched (HOOK) or restored (DETACH): written under
 * rescan_lock, so a dlopen hook that was entered before a detach cannot
 * patch the slots again after it. */
static int hooked;
/* Set by a detach (DETACH), cleared when hooked again (HOOK): the API
 * must not put back hooks the user removed. */
static int detached;
/* HEAPTOOL_PID names another process: the agent stays out of this one. */
static int dormant;
/* Serializes setup(), which may fail (memory) and be tried again; a
 * fork's child takes it over from a parent's thread (lock.h). */
static struct ht_plock setup_lock;
/* The fork handlers are registered: once for the life of the process (its
 * children inherit them), however often setup is tried. */
static int atfork_done;
/* The process of launch mode (heaptool run), whose exit writes the
 * profile; 0 in attach mode.  A fork's child has another pid. */
static pid_t launch_pid;
/* The process that forks, for its child: set in fork_prepare. */
static pid_t forking_pid;
/* Called in the child of every fork, after the agent's own handler (see
 * ht_agent_on_fork). */
static void (*fork_hook)(int follow);

/* With rescan_lock held, after ht_got_resolve().  Nothing here may wait for
 * the loader's dl_load_lock (dl_iterate_phdr takes only its write lock, which
 * no thread holds while running constructors).  Returns the slots patched
 * now, or -1. */
static int
rescan(void)
{
	struct ht_modset set;
	int rc;

	if (ht_modules_scan(&set) != 0)
		return -1;
	ht_lock_acquire(&ht_lock_global);
	ht_modules_publish(&set);
	if (ht_session.state == HT_STATE_RUNNING)
		ht_session_note_modules(ht_modules_current());
	ht_lock_release(&ht_lock_global);
	/* got.c reads the set without ht_lock_global: rescan_lock keeps it
	 * from being replaced meanwhile.  So do the allocator checks, which
	 * read each new module's symbols once. */
	ht_allocators_scan(ht_modules_current());
	rc = ht_got_patch(ht_modules_current(), ht_hooks, HT_NHOOKS);
	if (rc >= 0) {
		/* The account of what the slots reach, now that they are in
		 * (coverage.h); another backend may have claimed the
		 * process since. */
		ht_coverage_scan(ht_modules_current(), 1, ht_hooks, HT_NHOOKS);
		if (ht_coverage_backend() == HT_BACKEND_NONE)
			ht_coverage_set_backend(HT_BACKEND_GOT);
	}
	return rc;
}

/* Every change of the session is made under the guard and ht_lock_global,
 * from change_begin() to change_end(). */
static void
change_begin(void)
{
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
}

/* End a change; if it was made (rc 0), wake the agent's thread to take the
 * session's new deadlines (or their end).  Returns rc. */
static int
change_end(int rc)
{
	ht_lock_release(&ht_lock_global);
	if (rc == 0)
		ht_dump_wake();
	ht_guard_leave();
	return rc;
}

/* With ht_lock_global held: give the running session the dumps of cfg.
 * Failure dumps need the hooks' slow path while they are armed. */
static void
arm_locked(const struct ht_dump_cfg *cfg)
{
	int on = ht_dump_arm(cfg);

	ht_hooks_set_slow(on);
	ht_ihooks_set_slow(on);
}

/* With ht_lock_global held: end the session and its dumps.  In the child
 * of a fork (child), the session is the parent's: forget it instead. */
static void
end_locked(int child)
{
	ht_dump_disarm();
	ht_hooks_set_slow(0);
	ht_ihooks_set_slow(0);
	if (child)
		ht_session_forget();
	else
		ht_session_stop();
}

uint32_t
ht_agent_backends(uint32_t *present)
{
	uint32_t ok = 1u << HT_BACKEND_GOT, there = ok;
	int j = ht_jemprof_detect(), m = ht_miprof_detect();

	if (j != HT_NATIVE_ABSENT)
		there |= 1u << HT_BACKEND_JEMALLOC;
	if (j == HT_NATIVE_READY)
		ok |= 1u << HT_BACKEND_JEMALLOC;
	if (m != HT_NATIVE_ABSENT)
		there |= 1u << HT_BACKEND_MIMALLOC;
	if (m == HT_NATIVE_READY)
		ok |= 1u << HT_BACKEND_MIMALLOC;
	if (present != NULL)
		*present = there;
	return ok;
}

uint32_t
ht_agent_backend_default(void)
{
	uint32_t ok = ht_agent_backends(NULL);

	if (ok & (1u << HT_BACKEND_JEMALLOC))
		return HT_BACKEND_JEMALLOC;
	if (ok & (1u << HT_BACKEND_MIMALLOC))
		return HT_BACKEND_MIMALLOC;
	return HT_BACKEND_GOT;
}

const char *
ht_agent_backend_why(uint32_t b)
{
	switch (b) {
	case HT_BACKEND_JEMALLOC:
		return ht_jemprof_why();
	case HT_BACKEND_MIMALLOC:
		return ht_miprof_why();
	case HT_BACKEND_GOT:
		return "";
	default:
		return "this agent has no such backend";
	}
}

/* The backend in use before a native one took the process over, given
 * back when a session of the hooks starts again; and the module the
 * native one claimed.  Under rescan_lock. */
static unsigned hooks_backend;
static char native_module[512];

/* With rescan_lock held: every function of module's account (coverage.h)
 * that allocates or frees goes to backend b for reason r. */
static void
claim(const char *module, unsigned b, unsigned r)
{
	struct ht_coverage_item it;
	size_t i;

	for (i = 0; i < ht_coverage_count(); i++) {
		ht_coverage_get(i, &it);
		if (strcmp(it.module, module) != 0 ||
		    it.reason == HT_COV_NOTHING ||
		    it.reason == HT_COV_PREEMPTED || it.fn >= HT_NALLOCFNS)
			continue;
		(void)ht_coverage_set(module, ht_allocfns[it.fn].name, b, r);
	}
}

/*
 * After a start with backend, outside ht_lock_global: the account of
 * coverage says who samples.  A native backend claims every function of
 * its allocator's module (its own sampling sees every block it hands out,
 * whoever calls); a session of the hooks after one gives those functions
 * back to the GOT scan, which accounts them again.
 */
static void
coverage_after_start(uint32_t backend)
{
	const char *mod = backend == HT_BACKEND_JEMALLOC ? ht_jemprof_module() :
	    backend == HT_BACKEND_MIMALLOC		 ? ht_miprof_module() :
							   NULL;
	unsigned cur = ht_coverage_backend();

	/* Nothing changes hands (launch mode's start comes here with
	 * rescan_lock held: install()). */
	if (backend < HT_BACKEND_JEMALLOC && cur < HT_BACKEND_JEMALLOC)
		return;
	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	cur = ht_coverage_backend();
	if (backend >= HT_BACKEND_JEMALLOC) {
		if (cur < HT_BACKEND_JEMALLOC)
			hooks_backend = cur;
		ht_coverage_set_backend(backend);
		if (mod != NULL) {
			if (native_module[0] != '\0' &&
			    strcmp(native_module, mod) != 0)
				claim(native_module, HT_BACKEND_NONE,
				    HT_COV_NO_SLOT);
			memcpy(native_module, mod, sizeof(native_module));
			native_module[sizeof(native_module) - 1] = '\0';
			claim(mod, backend, HT_COV_NATIVE);
		}
	} else if (cur >= HT_BACKEND_JEMALLOC) {
		ht_coverage_set_backend(
		    hooks_backend != HT_BACKEND_NONE ? hooks_backend : backend);
		if (native_module[0] != '\0')
			claim(native_module, HT_BACKEND_NONE, HT_COV_NO_SLOT);
		native_module[0] = '\0';
		ht_coverage_scan(ht_modules_current(), hooked, ht_hooks,
		    HT_NHOOKS);
	}
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
}

/*
 * The backend of a start at rate that asks for none.  At rate 1, the hooks
 * where they reach jemalloc (a shared library: its GOT slots): they count
 * every block, while jemalloc's own sampling misses each thread's first
 * bytes after a start (its countdowns are not drawn again: jemprof.c).
 * Where jemalloc is in the executable the hooks would see nothing of it,
 * so jemalloc samples, and the reports say its figures are floors.
 */
static uint32_t
backend_default_at(uint64_t rate)
{
	uint32_t b = ht_agent_backend_default();

	if (rate == 1 && b == HT_BACKEND_JEMALLOC && ht_jemprof_shared())
		return HT_BACKEND_GOT;
	return b;
}

/* Before a start at rate with the backend of flags: make the allocator
 * ready (outside the agent's locks: it calls into it).  Returns the
 * backend to record, or 0 if the one asked for cannot run.  One that was
 * not asked for (the default) falls back to the GOT. */
static uint32_t
backend_prepare(uint64_t rate, int flags)
{
	uint32_t b = HT_AGENT_BACKEND_OF(flags);
	int asked = b != HT_BACKEND_NONE, rc;

	if (!asked)
		b = backend_default_at(rate);
	switch (b) {
	case HT_BACKEND_GOT:
	case HT_BACKEND_INLINE: /* the same hooks: the CLI patched them in */
		return b;
	case HT_BACKEND_JEMALLOC:
		rc = ht_jemprof_prepare(rate);
		break;
	case HT_BACKEND_MIMALLOC:
		rc = ht_miprof_prepare();
		break;
	default:
		rc = -1;
		break;
	}
	if (rc == 0)
		return b;
	return asked ? 0 : HT_BACKEND_GOT;
}

int
ht_agent_start(uint64_t rate, uint64_t max_samples,
    const struct ht_dump_cfg *cfg, int flags)
{
	uint32_t backend;
	unsigned lg;

	ht_guard_enter();
	if (__atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) ==
		HT_STATE_RUNNING &&
	    !(flags & HT_AGENT_RESTART)) {
		ht_guard_leave();
		return HT_AGENT_ERUNNING;
	}
	/* A session of jemalloc's that this one replaces stops first, its
	 * profile collected as at a stop. */
	if (ht_session.backend == HT_BACKEND_JEMALLOC)
		ht_jemprof_stop();
	backend = backend_prepare(rate, flags);
	ht_guard_leave();
	if (backend == 0)
		return HT_AGENT_EBACKEND;
	change_begin();
	if (ht_session.state == HT_STATE_RUNNING && !(flags & HT_AGENT_RESTART))
		return change_end(HT_AGENT_ERUNNING);
	/* The ring the children write their pids into must exist before
	 * the first fork; without it they are followed all the same. */
	if (flags & HT_AGENT_FOLLOW)
		(void)ht_follow_prepare();
	if (ht_session_start(rate, max_samples) != 0) {
		end_locked(0); /* the dumps of a session it replaced */
		return change_end(HT_AGENT_ENOMEM);
	}
	ht_session.follow = (flags & HT_AGENT_FOLLOW) != 0;
	ht_session.backend = backend;
	if (backend == HT_BACKEND_JEMALLOC)
		ht_session.rate = ht_jemprof_round(rate, &lg);
	arm_locked(cfg);
	(void)change_end(0);
	if (backend == HT_BACKEND_JEMALLOC)
		(void)ht_jemprof_activate();
	coverage_after_start(backend);
	/* Outside the lock: it may make a directory. */
	(void)ht_final_arm(cfg != NULL && cfg->final);
	return 0;
}

int
ht_agent_stop(void)
{
	/* jemalloc stops sampling, and its profile is read once more, so
	 * that it stays as it was now (outside the locks: it dumps). */
	if (__atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) ==
		HT_STATE_RUNNING &&
	    ht_session.backend == HT_BACKEND_JEMALLOC &&
	    ht_session.pid == getpid()) {
		ht_guard_enter();
		ht_jemprof_stop();
		ht_guard_leave();
	}
	change_begin();
	if (ht_session.state != HT_STATE_RUNNING)
		return change_end(HT_AGENT_ENOTRUNNING);
	end_locked(0);
	return change_end(0);
}

int
ht_agent_dumps(struct ht_dump_cfg *cfg)
{
	static struct ht_dump_cfg old; /* large; under the lock */

	change_begin();
	if (ht_session.state != HT_STATE_RUNNING)
		return change_end(HT_AGENT_ENOTRUNNING);
	if (ht_dump_armed(&old))
		cfg->at_rss_bytes = old.at_rss_bytes;
	arm_locked(cfg);
	return change_end(0);
}

void
ht_agent_modules_changed(void)
{
	if (!active)
		return;
	/* The loader may allocate for us (dlsym's error buffer): the guard
	 * keeps the agent's own work out of the profile. */
	ht_guard_enter();
	/* dlsym before rescan_lock, never under it: this thread may be
	 * inside a constructor run by dlopen, holding the loader's lock,
	 * and the holder of rescan_lock must never wait for that lock. */
	ht_hooks_resolve();
	ht_lock_acquire(&rescan_lock);
	if (hooked)
		rescan();
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
}

static void *
hook_dlopen(const char *file, int flags)
{
	void *h = ((void *(*)(const char *, int))ht_hooks_orig(HT_H_DLOPEN,
	    CALLER))(file, flags);

	if (h != NULL)
		ht_agent_modules_changed();
	return h;
}

static int
hook_dlclose(void *h)
{
	int rc;

	/* The unwinder must not read the CFI of a module being unmapped:
	 * samples taken meanwhile keep only their caller.  Taking the lock
	 * to raise the flag waits out any walk under it in progress; a walk
	 * without it (ht_unwind_fast) reads no CFI at all, only rules
	 * already cached and the stack. */
	ht_lock_acquire(&ht_lock_global);
	ht_sampler_dlclose_busy++;
	ht_lock_release(&ht_lock_global);
	rc = ((int (*)(void *))ht_hooks_orig(HT_H_DLCLOSE, CALLER))(h);
	ht_agent_modules_changed();
	ht_lock_acquire(&ht_lock_global);
	ht_sampler_dlclose_busy--;
	ht_lock_release(&ht_lock_global);
	return rc;
}

/* The hooks' HT_HOOK_RECORD bits are set. */
static int record_bits;

static void
record_bits_set(int on)
{
	ht_hooks_set_record(on);
	ht_ihooks_set_record(on);
	__atomic_store_n(&record_bits, on, __ATOMIC_RELEASE);
}

int
ht_agent_record(const struct ht_record_cfg *cfg)
{
	int rc;

	if ((rc = ht_agent_prepare()) != 0) {
		close(cfg->fd);
		if (cfg->status_fd >= 0)
			close(cfg->status_fd);
		return rc;
	}
	if ((rc = ht_record_start(cfg)) != 0) {
		if (cfg->status_fd >= 0)
			close(cfg->status_fd);
		return rc;
	}
	record_bits_set(1);
	return 0;
}

void
ht_agent_record_stop(uint32_t state)
{
	if (__atomic_load_n(&record_bits, __ATOMIC_ACQUIRE))
		record_bits_set(0);
	ht_record_stop(state);
}

uint64_t
ht_agent_record_tick(uint64_t now_ms)
{
	uint64_t due = ht_record_tick(now_ms);

	if (!ht_record_running() &&
	    __atomic_load_n(&record_bits, __ATOMIC_ACQUIRE))
		record_bits_set(0);
	return due;
}

static void
fork_prepare(void)
{
	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_lock_global);
	forking_pid = getpid();
}

static void
fork_parent(void)
{
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
}

/*
 * In the child, only this thread exists and it holds both our locks
 * (fork_prepare took them), so nothing of the agent is half-changed.  A
 * child of a session that follows forks starts its own at once, before
 * fork returns to the program: a new epoch, every table emptied (the
 * parent's unmapped, not copied: ht_tables_reset), the same rate, bound and
 * dumps,
 * so that its first allocation is sampled as the parent's would have
 * been.  Any other child ends the session here, so every thread (only
 * this one exists now) starts over at its next allocation and finds
 * nothing to sample; the parent's profile is untouched.  Then, without
 * our locks, the hook (the agent's thread: control.c) runs.
 */
static void
fork_child(void)
{
	uint64_t rate = ht_session.rate, max_samples = ht_session.max_samples;
	int follow = ht_session.state == HT_STATE_RUNNING &&
	    ht_session.follow && ht_session.pid == forking_pid;

	/* A dlclose in progress in another thread of the parent never ends
	 * here. */
	ht_sampler_dlclose_busy = 0;
	/* The child's session keeps the parent's bound; should its tables
	 * not map, the child is not followed. */
	if (follow && ht_session_start(rate, max_samples) != 0)
		follow = 0;
	if (follow) {
		ht_session.follow = 1;
		ht_session.parent = forking_pid;
		ht_follow_child(getpid());
		ht_dump_fork_child(1);
	} else {
		end_locked(1);
		ht_dump_fork_child(0);
		ht_follow_leave();
	}
	/* A followed child's session has the final profile its parent's
	 * had, under its own name; any other child, none. */
	ht_final_fork_child(follow);
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	/* A recording is the parent's: its file, its buffers. */
	ht_record_fork_child();
	ht_hooks_set_record(0);
	ht_ihooks_set_record(0);
	record_bits = 0;
	/* A followed child of jemalloc's session samples with the hooks
	 * (jemalloc's controls are not called in a fork's child, whose
	 * jemalloc may not have taken back its locks yet): its account of
	 * coverage, and the backend its profiles name, are the hooks'. */
	if (follow && ht_coverage_backend() >= HT_BACKEND_JEMALLOC)
		coverage_after_start(HT_BACKEND_GOT);
	if (fork_hook != NULL)
		fork_hook(follow);
	ht_guard_leave();
}

void
ht_agent_on_fork(void (*child)(int follow))
{
	fork_hook = child;
}

/* Before a dump (dump.h): the samples of the allocator that samples by
 * itself. */
static void
collect_native(void)
{
	(void)ht_jemprof_collect();
}

/* What every mode needs before a hook is installed: the tables, the dump
 * buffer, the C++ wrappers, the loader's hooks and the fork handlers.  The
 * control thread and the API may both come here; a setup that failed (the
 * process was short of memory) is tried again by the next caller, but the
 * fork handlers are registered once, since handlers registered twice
 * would take the locks twice.  Returns 0 or -1. */
static int
setup(void)
{
	int rc = 0;

	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		return 0;
	ht_guard_enter();
	ht_plock_acquire(&setup_lock);
	if (active)
		goto out;
	rc = -1;
	if (ht_tables_init() != 0 || ht_dump_init() != 0)
		goto out;
	ht_hooks_gate();
	ht_ihooks_gate();
	ht_hooks_set_wrappers();
	ht_hooks_set_loader((void *)hook_dlopen, (void *)hook_dlclose);
	ht_dump_set_collect(collect_native);
	if (!atfork_done) {
		if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
			goto out;
		atfork_done = 1;
	}
	__atomic_store_n(&active, 1, __ATOMIC_RELEASE);
	rc = 0;
out:
	ht_plock_release(&setup_lock);
	ht_guard_leave();
	return rc;
}

/* Patch the slots, starting a session at rate first when rate is not 0
 * (launch mode: the first allocations after the patch are sampled), with
 * the dumps of cfg (NULL: none) and flags (HT_AGENT_FOLLOW).  Returns the
 * slots patched, or -1 with nothing patched (and the session stopped). */
static int
install(uint64_t rate, uint64_t max_samples, const struct ht_dump_cfg *cfg,
    int flags)
{
	int rc;

	ht_guard_enter();
	ht_hooks_resolve(); /* before rescan_lock */
	ht_lock_acquire(&rescan_lock);
	/* Launch mode samples through the GOT unless told otherwise: the
	 * constructor is no place to call into the allocator's controls. */
	if (rate != 0)
		(void)ht_agent_start(rate, max_samples, cfg,
		    flags | HT_AGENT_RESTART |
			(HT_AGENT_BACKEND_OF(flags) != 0 ?
				0 :
				HT_AGENT_BACKEND(HT_BACKEND_GOT)));
	__atomic_store_n(&hooked, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&detached, 0, __ATOMIC_RELAXED);
	if ((rc = rescan()) < 0) {
		/* ht_got_patch left nothing of this call patched. */
		__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
		if (rate != 0)
			(void)ht_agent_stop();
	}
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
	return rc;
}

/*
 * Launch mode with the jemalloc backend, as attach does it: the slots
 * patched with no session (the hooks sample nothing while jemalloc's
 * session runs, but follow dlopen, fork and exit), then the session
 * started, then the main thread's countdown settled (jemprof.h), all
 * before main.  A backend chosen by default falls back to the hooks.
 */
static int
launch_jemalloc(uint64_t rate, uint64_t max_samples,
    const struct ht_dump_cfg *cfg, int flags, int asked)
{
	int rc;

	if (install(0, 0, NULL, 0) < 0)
		return -1;
	rc = ht_agent_start(rate, max_samples, cfg,
	    (flags & HT_AGENT_FOLLOW) | HT_AGENT_RESTART |
		HT_AGENT_BACKEND(HT_BACKEND_JEMALLOC));
	if (rc == 0) {
		(void)ht_jemprof_settle();
		return 0;
	}
	if (rc != HT_AGENT_EBACKEND || asked)
		return rc == HT_AGENT_EBACKEND ? HT_AGENT_EBACKEND : -1;
	return ht_agent_start(rate, max_samples, cfg,
		   (flags & HT_AGENT_FOLLOW) | HT_AGENT_RESTART |
		       HT_AGENT_BACKEND(HT_BACKEND_GOT)) == 0 ?
	    0 :
	    -1;
}

int
ht_agent_launch(uint64_t rate, uint64_t max_samples,
    const struct ht_dump_cfg *cfg, int flags)
{
	uint32_t b = HT_AGENT_BACKEND_OF(flags);
	int asked = b != HT_BACKEND_NONE;

	launch_pid = getpid();
	if (setup() != 0)
		return -1;
	/* The backend: jemalloc where it samples by itself (found here,
	 * with dlsym, before any of the agent's locks), else the hooks, and
	 * the hooks at rate 1 where they reach it (backend_default_at).
	 * jemalloc is initialized by its first mallctl if not yet. */
	if (!asked)
		b = ht_jemprof_detect() == HT_NATIVE_READY &&
			!(rate == 1 && ht_jemprof_shared()) ?
		    HT_BACKEND_JEMALLOC :
		    HT_BACKEND_GOT;
	else if (b == HT_BACKEND_JEMALLOC &&
	    ht_jemprof_detect() != HT_NATIVE_READY)
		return HT_AGENT_EBACKEND;
	if (b == HT_BACKEND_JEMALLOC)
		return launch_jemalloc(rate, max_samples, cfg, flags, asked);
	if (b != HT_BACKEND_GOT && b != HT_BACKEND_INLINE)
		return HT_AGENT_EBACKEND;
	if (install(rate, max_samples, cfg,
		(flags & ~HT_AGENT_BACKEND(0xf)) | HT_AGENT_BACKEND(b)) < 0)
		return -1;
	return 0;
}

/*
 * heaptool attach loads the agent with dlopen(RTLD_NOW), local: the tag
 * stubs of heaptool.h, which look for heaptool_tags_v1 with
 * dlsym(RTLD_DEFAULT), would never see it.  Opening ourselves again with
 * RTLD_NOLOAD | RTLD_GLOBAL promotes the loaded object to the global scope
 * (dlopen(3)); the version script exports only heaptool_* names, so no
 * lookup of the program's can bind to us instead.  From the agent's thread,
 * never under ht_lock_global (the loader's lock), guarded: the loader may
 * allocate.  The handle is kept: the agent stays mapped for good anyway.
 * A failure only leaves the stubs without the agent.
 */
static void
publish_tags(void)
{
	Dl_info info;

	ht_guard_enter();
	if (dladdr((void *)&ht_agent_attach_init, &info) != 0 &&
	    info.dli_fname != NULL)
		(void)dlopen(info.dli_fname,
		    RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
	ht_guard_leave();
}

int
ht_agent_attach_init(void)
{
	if (setup() != 0)
		return HT_AGENT_ENOMEM;
	if (install(0, 0, NULL, 0) < 0)
		return HT_AGENT_EHOOK;
	publish_tags();
	/* The backend a start will take: found now, from the agent's
	 * thread, with dlsym (never from a hook). */
	(void)ht_agent_backends(NULL);
	return 0;
}

void
ht_agent_disable(void)
{
	dormant = 1;
}

int
ht_agent_adopt(void)
{
	int adopted;

	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	ht_lock_acquire(&ht_lock_global);
	/* heaptool attach asked for this process: the launch environment
	 * that put the agent to sleep here was for another. */
	dormant = 0;
	if ((adopted = ht_session_adopt()) != 0) {
		ht_dump_disarm();
		ht_hooks_set_slow(0);
		ht_ihooks_set_slow(0);
	}
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
	return adopted;
}

int
ht_agent_following(void)
{
	int rc;

	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	rc = ht_session.state == HT_STATE_RUNNING && ht_session.follow &&
	    ht_session.pid == getpid();
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	return rc;
}

int
ht_agent_prepare(void)
{
	int rc = 0;

	if (dormant)
		return HT_AGENT_EDISABLED;
	if (setup() != 0)
		return HT_AGENT_ENOMEM;
	/* The flags change under rescan_lock (install, unhook). */
	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	if (detached)
		rc = HT_AGENT_EDETACHED;
	else if (!hooked)
		rc = 1;
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
	if (rc == 1)
		rc = install(0, 0, NULL, 0) < 0 ? HT_AGENT_EHOOK : 0;
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
	return install(0, 0, NULL, 0);
}

int
ht_agent_unhook(void)
{
	int rc;

	if (!active)
		return -1;
	/* A recording ends first, whole (its file is the CLI's). */
	ht_agent_record_stop(HT_RECORD_DONE);
	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	(void)ht_agent_stop();
	ht_jemprof_detach();
	/* Detached, the process is left as it was: no file at its end. */
	(void)ht_final_arm(0);
	__atomic_store_n(&hooked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&detached, 1, __ATOMIC_RELAXED);
	rc = ht_got_restore_all();
	/* A native backend's functions go back to the scan, which says
	 * they are detached: jemalloc has its own unwinder back. */
	if (native_module[0] != '\0')
		claim(native_module, HT_BACKEND_NONE, HT_COV_NO_SLOT);
	native_module[0] = '\0';
	ht_coverage_scan(ht_modules_current(), 0, ht_hooks, HT_NHOOKS);
	if (ht_coverage_backend() == HT_BACKEND_GOT ||
	    ht_coverage_backend() >= HT_BACKEND_JEMALLOC)
		ht_coverage_set_backend(HT_BACKEND_NONE);
	/*
	 * The tables go back to the system now.  Threads may still be inside
	 * a hook (entered through a slot before it was restored, or through
	 * a function pointer the program took from a slot), and they may
	 * stay there for as long as the allocator makes them wait: no point
	 * in time proves them gone.  None needs to be: a hook's fast path
	 * reads only the agent's own data (its flag words, the thread's
	 * countdown, the session generation, the static free filter), and
	 * its slow path touches a table only under ht_lock_global after
	 * seeing there that a session runs.  The session stopped above,
	 * under that lock; this release is made under it too, so it waits
	 * for any thread inside the tables to leave, and every thread after
	 * it finds no session and touches nothing.  Only a new start maps
	 * the tables again, under the same lock.
	 */
	ht_lock_acquire(&ht_lock_global);
	ht_session_release();
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
	return rc;
}

void
ht_agent_state(int *is_hooked, size_t *slots, size_t *modules)
{
	ht_guard_enter();
	ht_lock_acquire(&rescan_lock);
	*is_hooked = hooked;
	*slots = ht_got_patched_slots();
	ht_lock_acquire(&ht_lock_global);
	*modules = ht_modules_current()->n;
	ht_lock_release(&ht_lock_global);
	ht_lock_release(&rescan_lock);
	ht_guard_leave();
}

int
ht_agent_exit(const char *output)
{
	int rc = 0, err = 0;

	/* exit() called in a signal handler that interrupted the agent on
	 * this thread: it may hold the agent's lock, and nothing is
	 * written. */
	if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE) || ht_guard_held())
		return 0;
	ht_guard_enter();
	/* A recording's end: every event the process made. */
	ht_agent_record_stop(HT_RECORD_DONE);
	/* jemalloc's samples as they are at the end. */
	(void)ht_jemprof_collect();
	/* The session's exit dump, if it runs with a prefix (any mode), and
	 * an attached session's final profile. */
	ht_dump_at_exit();
	ht_final_at_exit();
	/* Only launch mode names an output (attach mode leaves it empty),
	 * and only for the launched process: a fork's child that profiles
	 * itself (followed, or attached) must not write over it. */
	if (output != NULL && output[0] != '\0' && getpid() == launch_pid &&
	    ht_session.pid == getpid() && ht_session.state != HT_STATE_NONE) {
		(void)ht_agent_stop();
		rc = ht_snapshot_path(output, HT_META_AT_EXIT, 0) == 0 ? 1 : -1;
		err = errno;
	}
	ht_guard_leave();
	errno = err;
	return rc;
}
