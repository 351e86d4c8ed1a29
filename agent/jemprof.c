/*
 * The jemalloc backend (jemprof.h): jemalloc 5.3's controls, our unwinder
 * in its backtrace hook, and its heap profile read into the tables.
 */
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "guard.h"
#include "heapv2.h"
#include "jemprof.h"
#include "lock.h"
#include "modules.h"
#include "prim.h"
#include "profile.h"
#include "sampler.h"
#include "sampling.h"
#include "session.h"
#include "tables.h"
#include "unwind.h"

/* jemalloc's mallctl(3) and its experimental backtrace hook (5.3.0,
 * include/jemalloc/internal/prof_hook.h): fill vec with at most max
 * return addresses and *len with their number. */
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*bt_hook_fn)(void **, unsigned *, unsigned);

/* A dump larger than this is not read (its stacks would not fit the
 * tables anyway). */
#define MAX_DUMP ((size_t)1 << 30)
/*
 * jemalloc's rate while no session runs.  prof.reset does not draw the
 * threads' countdowns again: each thread's first sample after a start
 * comes when what remained of its old countdown runs out, and the bytes
 * before it are not sampled (by memorylessness, about one old rate's worth
 * per thread).  So between sessions jemalloc runs at 4 KiB, with prof.active
 * false (no sample taken; its countdown check fires every 4 KiB or so).
 */
#define IDLE_LG	 12

/* The settling churn of launch mode (ht_jemprof_settle): blocks of this
 * size, at most this many (256 MiB in all). */
#define SETTLE_SIZE ((size_t)64 * 1024)
#define SETTLE_MAX  4096

static mallctl_fn mallctl_p;
static unsigned jem_prefix; /* which of names[] found mallctl */
static pid_t settle_tid;    /* the thread that settles, or 0 */
static int settle_hit;	    /* jemalloc took a sample of it */
static int state = HT_NATIVE_ABSENT;
static const char *why = "the process has no jemalloc (no mallctl)";
static int accum; /* opt.prof_accum: allocated totals known */
static bt_hook_fn old_hook;
static int hook_in; /* our unwinder is jemalloc's */
static int frozen;  /* stopped and collected: the profile stays */
static unsigned lg_sample;
static size_t lg_orig; /* prof.lg_sample before the agent changed it */
static int idled;      /* the agent set the idle rate */
static uintptr_t jem_lo, jem_hi; /* jemalloc's module: frames stripped */
static char jem_path[512];	 /* and its path, for the coverage */
static int dump_fd = -1;
static char dump_path[32];
/* Serializes the controls and the collections: the agent's thread and the
 * API's callers may both come here.  Never taken in the backtrace hook. */
static struct ht_plock jem_lock;

static int
ctl_bool(const char *name, int *out)
{
	bool b = false;
	size_t sz = sizeof(b);

	if (mallctl_p(name, &b, &sz, NULL, 0) != 0 || sz != sizeof(b))
		return -1;
	*out = b;
	return 0;
}

static int
set_active(int on)
{
	bool b = on != 0;

	return mallctl_p("prof.active", NULL, NULL, &b, sizeof(b)) == 0 ? 0 :
									  -1;
}

/* Where jemalloc does not sample (prof.active false, as heaptool expects
 * it), set the idle rate, remembering the rate it had. */
static void
idle(void)
{
	size_t lg = IDLE_LG, sz = sizeof(lg_orig);
	int active = 1;

	if (ctl_bool("prof.active", &active) != 0 || active)
		return;
	if (!idled && mallctl_p("prof.lg_sample", &lg_orig, &sz, NULL, 0) != 0)
		return;
	if (mallctl_p("prof.reset", NULL, NULL, &lg, sizeof(lg)) == 0)
		idled = 1;
}

static int
detect_locked(void)
{
	static const char *const names[] = { "mallctl", "je_mallctl",
		"_rjem_mallctl" };
	const char *version = NULL;
	size_t i, sz = sizeof(version);
	mallctl_fn f = NULL;
	int prof = 0;

	if (state == HT_NATIVE_READY)
		return state;
	for (i = 0; f == NULL && i < sizeof(names) / sizeof(names[0]); i++)
		if ((f = (mallctl_fn)(uintptr_t)dlsym(RTLD_DEFAULT,
			 names[i])) != NULL)
			jem_prefix = (unsigned)i;
	if (f == NULL) {
		state = HT_NATIVE_ABSENT;
		why = "the process has no jemalloc (no mallctl)";
		return state;
	}
	mallctl_p = f;
	if (f("version", &version, &sz, NULL, 0) != 0 || version == NULL) {
		state = HT_NATIVE_ABSENT;
		why = "its mallctl is not jemalloc's";
		return state;
	}
	state = HT_NATIVE_PRESENT;
	if (ctl_bool("opt.prof", &prof) != 0) {
		why = "its jemalloc is built without profiling "
		      "(--enable-prof)";
		return state;
	}
	if (!prof) {
		why = "its jemalloc runs with opt.prof off (start it with "
		      "MALLOC_CONF=prof:true,prof_active:false)";
		return state;
	}
	if (ctl_bool("opt.prof_accum", &accum) != 0)
		accum = 0;
	why = "";
	state = HT_NATIVE_READY;
	idle();
	return state;
}

int
ht_jemprof_detect(void)
{
	int rc;

	ht_plock_acquire(&jem_lock);
	rc = detect_locked();
	ht_plock_release(&jem_lock);
	return rc;
}

int
ht_jemprof_state(void)
{
	return state;
}

const char *
ht_jemprof_why(void)
{
	return why;
}

const char *
ht_jemprof_module(void)
{
	return jem_path[0] != '\0' ? jem_path : NULL;
}

uint64_t
ht_jemprof_round(uint64_t rate, unsigned *lg)
{
	unsigned k = 0;

	/* The nearest power of 2 on a log scale: 2^k when rate is below
	 * 2^k * sqrt(2), i.e. rate^2 < 2^(2k+1). */
	while (k < 62 && rate > ((uint64_t)1 << k)) {
		uint64_t lo = (uint64_t)1 << k;

		if (rate < ((uint64_t)1 << (k + 1)) &&
		    (double)rate * (double)rate < 2.0 * (double)lo * (double)lo)
			break;
		k++;
	}
	*lg = k;
	return (uint64_t)1 << k;
}

/*
 * jemalloc calls this where it would walk the stack itself, before the
 * sampled allocation is made and with none of its locks held, as a
 * reentrant call (an allocation made here is not sampled).  The agent's
 * own allocations are not jemalloc's samples: a thread inside the agent
 * gets the caller of the hook as its only frame.
 */
static void
backtrace_hook(void **vec, unsigned *len, unsigned max)
{
	uintptr_t pcs[HT_MAX_FRAMES];
	struct ht_regs regs;
	int n, i;

	if (__atomic_load_n(&settle_tid, __ATOMIC_ACQUIRE) != 0 &&
	    ht_prim_tid() == settle_tid)
		__atomic_store_n(&settle_hit, 1, __ATOMIC_RELEASE);
	if (max > HT_MAX_FRAMES)
		max = HT_MAX_FRAMES;
	if (ht_guard_held() || max == 0) {
		*len = max > 0;
		if (max > 0)
			vec[0] = __builtin_return_address(0);
		return;
	}
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	HT_REGS_CAPTURE(&regs);
	n = ht_sampler_stack(&regs, jem_lo, jem_hi, pcs, (int)max);
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	if (n == 0) {
		pcs[0] = (uintptr_t)__builtin_return_address(0);
		n = 1;
	}
	for (i = 0; i < n; i++)
		vec[i] = (void *)pcs[i];
	*len = (unsigned)n;
}

/* With dladdr, not the agent's module set: launch mode asks before the
 * set is scanned.  The executable is the object that holds its program
 * headers. */
int
ht_jemprof_shared(void)
{
	Dl_info jem, exe;
	void *phdr = (void *)(uintptr_t)getauxval(AT_PHDR);

	if (mallctl_p == NULL || phdr == NULL ||
	    dladdr((void *)(uintptr_t)mallctl_p, &jem) == 0 ||
	    dladdr(phdr, &exe) == 0)
		return 0;
	return jem.dli_fbase != exe.dli_fbase;
}

/* jemalloc's text, whose frames are stripped: the module that holds
 * mallctl, unless it is the executable (jemalloc linked in statically,
 * where the program's frames are in the same module; then none is). */
static void
find_module(void)
{
	const struct ht_module *m;

	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	m = ht_modules_find((uintptr_t)mallctl_p);
	jem_lo = jem_hi = 0;
	jem_path[0] = '\0';
	if (m != NULL && !(m->flags & HT_MOD_MAIN)) {
		jem_lo = m->start;
		jem_hi = m->end;
		memcpy(jem_path, m->path, sizeof(jem_path));
		jem_path[sizeof(jem_path) - 1] = '\0';
	}
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
}

static int
open_dump(void)
{
	char *p;
	int fd, k;

	if (dump_fd >= 0)
		return 0;
	/* A memfd: no file anyone else can see, open or put there first;
	 * jemalloc creat()s its path, which reopens this very file. */
	if ((fd = memfd_create("heaptool-jemprof", MFD_CLOEXEC)) < 0)
		return -1;
	memcpy(dump_path, "/proc/self/fd/", 14);
	p = dump_path + 14;
	k = fd;
	{
		char rev[12];
		int n = 0;

		do {
			rev[n++] = (char)('0' + k % 10);
			k /= 10;
		} while (k > 0);
		while (n > 0)
			*p++ = rev[--n];
		*p = '\0';
	}
	dump_fd = fd;
	return 0;
}

static int prepare_locked(uint64_t rate);

int
ht_jemprof_prepare(uint64_t rate)
{
	int rc;

	ht_plock_acquire(&jem_lock);
	rc = prepare_locked(rate);
	ht_plock_release(&jem_lock);
	return rc;
}

static int
prepare_locked(uint64_t rate)
{
	size_t lg;
	bt_hook_fn h = backtrace_hook, old = NULL;
	size_t sz = sizeof(old);

	if (detect_locked() != HT_NATIVE_READY)
		return -1;
	(void)ht_jemprof_round(rate, &lg_sample);
	lg = lg_sample;
	find_module();
	if (open_dump() != 0) {
		why = "the agent cannot make a memfd for jemalloc's dumps";
		return -1;
	}
	if (set_active(0) != 0)
		goto fail;
	if (!hook_in) {
		if (mallctl_p("experimental.hooks.prof_backtrace", &old, &sz,
			&h, sizeof(h)) != 0)
			goto fail;
		old_hook = old;
		hook_in = 1;
	}
	/* Every sample before this one is forgotten, with the threads'
	 * records: a new epoch. */
	if (mallctl_p("prof.reset", NULL, NULL, &lg, sizeof(lg)) != 0)
		goto fail;
	frozen = 0;
	return 0;
fail:
	why = "its jemalloc refused a control (prof.active, prof.reset or "
	      "experimental.hooks.prof_backtrace)";
	return -1;
}

int
ht_jemprof_activate(void)
{
	return mallctl_p != NULL ? set_active(1) : -1;
}

int
ht_jemprof_settle(void)
{
	typedef void *(*mallocx_fn)(size_t, int);
	typedef void (*dallocx_fn)(void *, int);
	static const char *const mx_names[] = { "mallocx", "je_mallocx",
		"_rjem_mallocx" };
	static const char *const dx_names[] = { "dallocx", "je_dallocx",
		"_rjem_dallocx" };
	mallocx_fn mx;
	dallocx_fn dx;
	size_t lg = lg_sample;
	void *p;
	int i, rc = -1;

	if (mallctl_p == NULL || state != HT_NATIVE_READY || jem_prefix > 2)
		return -1;
	/* jemalloc's own entry points, next to its mallctl: not the
	 * program's malloc, which may be another allocator's. */
	mx = (mallocx_fn)(uintptr_t)dlsym(RTLD_DEFAULT, mx_names[jem_prefix]);
	dx = (dallocx_fn)(uintptr_t)dlsym(RTLD_DEFAULT, dx_names[jem_prefix]);
	if (mx == NULL || dx == NULL)
		return -1;
	ht_guard_enter();
	ht_plock_acquire(&jem_lock);
	__atomic_store_n(&settle_hit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&settle_tid, ht_prim_tid(), __ATOMIC_RELEASE);
	/* Until jemalloc samples this thread: its next countdown is drawn
	 * at the session's rate. */
	for (i = 0;
	     i < SETTLE_MAX && !__atomic_load_n(&settle_hit, __ATOMIC_ACQUIRE);
	     i++) {
		if ((p = mx(SETTLE_SIZE, 0)) == NULL)
			break;
		dx(p, 0);
	}
	__atomic_store_n(&settle_tid, 0, __ATOMIC_RELEASE);
	/* The churn's sample is forgotten with the rest: a new epoch. */
	if (__atomic_load_n(&settle_hit, __ATOMIC_ACQUIRE) &&
	    mallctl_p("prof.reset", NULL, NULL, &lg, sizeof(lg)) == 0)
		rc = 0;
	ht_plock_release(&jem_lock);
	ht_guard_leave();
	return rc;
}

static int collect_locked(void);

void
ht_jemprof_stop(void)
{
	if (mallctl_p == NULL)
		return;
	ht_plock_acquire(&jem_lock);
	(void)set_active(0);
	if (collect_locked() >= 0)
		frozen = 1;
	/* The profile is in the tables now: jemalloc's may go. */
	if (frozen)
		idle();
	ht_plock_release(&jem_lock);
}

void
ht_jemprof_detach(void)
{
	bt_hook_fn h = old_hook;

	if (mallctl_p == NULL || !hook_in)
		return;
	ht_plock_acquire(&jem_lock);
	(void)set_active(0);
	/* jemalloc's rate as it was before the agent came. */
	if (idled &&
	    mallctl_p("prof.reset", NULL, NULL, &lg_orig, sizeof(lg_orig)) == 0)
		idled = 0;
	if (h != NULL &&
	    mallctl_p("experimental.hooks.prof_backtrace", NULL, NULL, &h,
		sizeof(h)) == 0)
		hook_in = 0;
	ht_plock_release(&jem_lock);
}

/* A site's figures from its counts: jeprof's unsampling, the variances
 * of sampling.h.  objects and bytes come as jemalloc wrote them. */
static void
site_stats(struct ht_stats *st, const uint64_t v[4], uint64_t rate)
{
	struct ht_sample_agg a;
	double o, b, k;

	o = (double)v[0];
	b = (double)v[1];
	k = ht_sample_unsample_scale(o, b, rate);
	st->inuse_objects = o * k;
	st->inuse_bytes = b * k;
	ht_sample_aggregate(st->inuse_objects, st->inuse_bytes, rate, &a);
	st->inuse_var = a.var_bytes;
	st->live_samples = (uint64_t)(a.samples + 0.5);
	if (accum) {
		o = (double)v[2];
		b = (double)v[3];
		k = ht_sample_unsample_scale(o, b, rate);
		st->alloc_objects = o * k;
		st->alloc_bytes = b * k;
		ht_sample_aggregate(st->alloc_objects, st->alloc_bytes, rate,
		    &a);
		st->alloc_var = a.var_bytes;
		st->samples = (uint64_t)(a.samples + 0.5);
	} else
		st->samples = st->live_samples;
}

/* What a collection adds up, across the dump's stacks. */
struct totals {
	uint64_t rate;
	double inuse;
	uint64_t live;
	uint64_t samples;
};

/* With ht_lock_global held, the tables emptied: one stack of the dump
 * into a site. */
static void
add_stack(void *ctx, const uintptr_t *frames, uint32_t n, const uint64_t v[4])
{
	struct totals *t = ctx;
	struct ht_stats st;
	struct ht_site *s;
	int64_t site;

	if (v[0] == 0 && (!accum || v[2] == 0))
		return;
	site = ht_sites_intern(frames, n);
	if (site < 0) {
		ht_session.dropped++;
		ht_session.drop_why |= site == HT_TABLES_FULL ? HT_DROP_SITES :
								HT_DROP_NOMEM;
		return;
	}
	/* Two stacks of the dump may make one site (cut at
	 * HT_MAX_FRAMES): their figures add up. */
	memset(&st, 0, sizeof(st));
	site_stats(&st, v, t->rate);
	s = ht_sites_get((size_t)site);
	s->st.inuse_bytes += st.inuse_bytes;
	s->st.inuse_objects += st.inuse_objects;
	s->st.inuse_var += st.inuse_var;
	s->st.alloc_bytes += st.alloc_bytes;
	s->st.alloc_objects += st.alloc_objects;
	s->st.alloc_var += st.alloc_var;
	s->st.samples += st.samples;
	s->st.live_samples += st.live_samples;
	s->peak_gen = 0;
	t->inuse += st.inuse_bytes;
	t->live += st.live_samples;
	t->samples += st.samples;
}

/* With ht_lock_global held, the tables emptied: the dump's stacks into
 * sites.  Returns 0, or -1 if it is not a heap profile. */
static int
parse(const char *buf, size_t len)
{
	struct totals t;

	memset(&t, 0, sizeof(t));
	/* The rate comes first: ht_heapv2_parse reads it before any
	 * stack. */
	if (ht_heapv2_parse(buf, len, &t.rate, add_stack, &t) != 0)
		return -1;
	ht_session.inuse_bytes = t.inuse;
	ht_session.native_live = t.live;
	ht_session.samples = t.samples;
	ht_session.native_flags = HT_META_PEAK_UNKNOWN |
	    (accum ? 0 : HT_META_ALLOC_UNKNOWN);
	return 0;
}

int
ht_jemprof_collect(void)
{
	int rc;

	if (mallctl_p == NULL)
		return 1;
	ht_plock_acquire(&jem_lock);
	rc = collect_locked();
	ht_plock_release(&jem_lock);
	return rc;
}

static int
collect_locked(void)
{
	const char *path = dump_path;
	struct stat sb;
	void *map;
	int rc = -1, go;

	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	go = ht_session.backend == HT_BACKEND_JEMALLOC &&
	    ht_session.state != HT_STATE_NONE && !ht_session.released &&
	    ht_session.pid == getpid() && !frozen && dump_fd >= 0;
	ht_lock_release(&ht_lock_global);
	if (!go) {
		ht_guard_leave();
		return 1;
	}
	if (ftruncate(dump_fd, 0) != 0 ||
	    mallctl_p("prof.dump", NULL, NULL, &path, sizeof(path)) != 0 ||
	    fstat(dump_fd, &sb) != 0 || sb.st_size <= 0 ||
	    (size_t)sb.st_size > MAX_DUMP)
		goto out;
	map =
	    mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, dump_fd, 0);
	if (map == MAP_FAILED)
		goto out;
	ht_lock_acquire(&ht_lock_global);
	/* The session may have changed while jemalloc wrote. */
	if (ht_session.backend == HT_BACKEND_JEMALLOC &&
	    ht_session.state != HT_STATE_NONE && !ht_session.released &&
	    !frozen && ht_tables_reset() == 0) {
		ht_session.dropped = 0;
		ht_session.drop_why = 0;
		rc = parse(map, (size_t)sb.st_size);
	}
	ht_lock_release(&ht_lock_global);
	munmap(map, (size_t)sb.st_size);
out:
	/* The pages of the dump are not kept between reports. */
	(void)ftruncate(dump_fd, 0);
	ht_guard_leave();
	return rc;
}
