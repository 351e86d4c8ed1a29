/*
 * The recorder (record.h): its start and stop, and the events the hooks
 * hand it.
 */
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocnames.h"
#include "callsite.h"
#include "guard.h"
#include "lock.h"
#include "prim.h"
#include "recbuf.h"
#include "recdrain.h"
#include "record.h"
#include "recfn.h"
#include "recmap.h"
#include "sampler.h"
#include "tables.h"
#include "trace.h"
#include "wrap.h"

#define DEFAULT_BUFFER 4096 /* events in a thread's ring */
#define TICK_MS	       20
#define WAIT_NS	       (10 * 1000 * 1000) /* a waiting thread looks again */
#define LEAVE_MS       2000 /* the stop waits this long for the hooks */
#define SELF_DRAIN                                                             \
	3 /* waits (of WAIT_NS at most) before a thread
				drains by itself */

static uint32_t state;	  /* enum ht_record_state */
static uint32_t gen;	  /* bumped at each start: threads start over */
static uint64_t seq;	  /* the last number handed out */
static uint32_t inflight; /* threads inside the recorder */
static uint32_t nthreads; /* indexes handed out */
static uint64_t waits, lost, mono0;
static uint32_t lost_why;
static uint32_t want; /* 0, or the state the drain is to stop with */
/* The recorder's process and its start time (ht_prim_proc_start), 0 and 0
 * when none is watched; when it was last looked at (ht_record_tick). */
static pid_t owner;
static uint64_t owner_start, owner_seen_ms;
#define OWNER_CHECK_MS 500
static uint32_t waiters; /* threads asleep until the drain makes room */
static struct ht_recstat last;
static struct ht_lock drain_lock, ctl_lock;
static int wake_fd = -1;
static int status_fd = -1;
static uint64_t agent_peak;

struct rec_tls {
	struct ht_recbuf *b;
	uint32_t gen;
};
static __thread struct rec_tls rec_tls
    __attribute__((tls_model("initial-exec")));

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
wake_drain(void)
{
	uint64_t one = 1;
	ssize_t n;

	if (wake_fd >= 0)
		n = write(wake_fd, &one, sizeof(one));
	(void)n;
}

/* The drain is to stop the recording as s (FULL, FAILED with err). */
static void
ask_stop(uint32_t s, int err, uint64_t nlost)
{
	uint32_t zero = 0;

	if (nlost != 0)
		__atomic_add_fetch(&lost, nlost, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(&want, &zero, s, 0, __ATOMIC_ACQ_REL,
		__ATOMIC_RELAXED) &&
	    err != 0)
		__atomic_store_n(&lost_why, (uint32_t)err, __ATOMIC_RELAXED);
	wake_drain();
}

/* A pass of the drain, by whoever holds its lock; the threads that wait
 * for room are woken. */
static void
pass_locked(void)
{
	int rc = ht_recdrain_pass(0);

	if (__atomic_load_n(&waiters, __ATOMIC_SEQ_CST) != 0)
		(void)syscall(SYS_futex, ht_recbuf_gen(), FUTEX_WAKE_PRIVATE,
		    INT32_MAX, NULL, NULL, 0);
	if (rc == HT_RECDRAIN_FULL)
		ask_stop(HT_RECORD_FULL, 0, 0);
	else if (rc != 0) /* what is not written is counted at the stop */
		ask_stop(HT_RECORD_FAILED, rc, 0);
}

/* Enter the recorder: 1 if a recording runs (the guard set), else 0. */
static int
enter(void)
{
	if (ht_guard_held())
		return 0;
	__atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&state, __ATOMIC_SEQ_CST) != HT_RECORD_RUNNING ||
	    __atomic_load_n(&want, __ATOMIC_RELAXED) != 0) {
		__atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE);
		return 0;
	}
	ht_guard_enter();
	return 1;
}

static void
leave(void)
{
	ht_guard_leave();
	__atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE);
}

/* Wait for a drain to move the rings' word from g (or WAIT_NS). */
static void
wait_gen(uint32_t g)
{
	struct timespec ts = { 0, WAIT_NS };

	(void)syscall(SYS_futex, ht_recbuf_gen(), FUTEX_WAIT_PRIVATE, g, &ts,
	    NULL, 0);
}

/* The thread's ring, with room for one more event; NULL when the
 * recording is ending. */
static struct ht_recbuf *
buffer(void)
{
	struct rec_tls *r = &rec_tls;
	uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE), pg, t;
	struct ht_recbuf *b;
	int waited = 0;

	if (r->gen != g) {
		t = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
		if (t >= HT_RECDRAIN_MAX_THREADS ||
		    (r->b = ht_recbuf_take(t, (uint32_t)ht_prim_tid())) ==
			NULL) {
			ask_stop(HT_RECORD_FAILED,
			    t >= HT_RECDRAIN_MAX_THREADS ? EOVERFLOW : ENOMEM,
			    1);
			return NULL;
		}
		r->gen = g;
	}
	b = r->b;
	for (;;) {
		pg = __atomic_load_n(ht_recbuf_gen(), __ATOMIC_ACQUIRE);
		if (b->head - __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) <
		    ht_recbuf_cap())
			return b;
		if (__atomic_load_n(&want, __ATOMIC_RELAXED) != 0 ||
		    __atomic_load_n(&state, __ATOMIC_ACQUIRE) !=
			HT_RECORD_RUNNING)
			return NULL;
		if (!waited++)
			__atomic_add_fetch(&waits, 1, __ATOMIC_RELAXED);
		/* The agent's thread drains, on another CPU, as this one
		 * goes on; but it may be busy elsewhere (a reply, the
		 * loader's lock, which this thread may hold): after a
		 * while without room, this thread drains, if nobody else
		 * is. */
		if (waited > SELF_DRAIN && ht_lock_try(&drain_lock)) {
			pass_locked();
			ht_lock_release(&drain_lock);
			continue;
		}
		__atomic_add_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
		wake_drain();
		wait_gen(pg);
		__atomic_sub_fetch(&waiters, 1, __ATOMIC_RELAXED);
	}
}

/* Put e in b and publish it. */
static void
commit(struct ht_recbuf *b, struct ht_trace_event *e, uintptr_t caller)
{
	e->t_ns = mono_ns() - mono0;
	e->site = ht_recmap_site(caller);
	e->tag = (uint16_t)ht_tls.tag;
	ht_tw_event(ht_recbuf_slot(b, b->head), HT_TRACE_EVENT_SIZE, e);
	__atomic_store_n(&b->head, b->head + 1, __ATOMIC_RELEASE);
}

static uint64_t
next_seq(void)
{
	return __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
}

/* The new block p (not NULL) is e's: keep its identity. */
static void
keep(void *p, uint64_t id)
{
	if (ht_recmap_put((uintptr_t)p, id) != 0)
		ask_stop(HT_RECORD_FAILED, ENOMEM, 1);
}

static uint8_t
log2_of(uint64_t a)
{
	return (uint8_t)(63 - __builtin_clzll(a));
}

/* An event of allocator function fn, as its entry says (recfn.h): its op,
 * function and flags, the rest zero.  Returns the entry. */
static const struct ht_recfn *
event_of(struct ht_trace_event *e, unsigned fn)
{
	const struct ht_recfn *f = ht_recfn(fn);

	memset(e, 0, sizeof(*e));
	e->op = f->op;
	e->fn = (uint16_t)fn;
	e->flags = f->flags;
	return f;
}

void
ht_rec_alloc(unsigned fn, void *p, size_t n, const uintptr_t *a,
    uintptr_t caller)
{
	struct ht_trace_event e;
	const struct ht_recfn *f;
	struct ht_recbuf *b;
	uintptr_t site;
	uint64_t al = 0;
	int wrapped;

	if (fn >= HT_NALLOCFNS || !enter())
		return;
	/* libstdc++'s operator new calls malloc or aligned_alloc: its
	 * caller is the operator (wrap.h), whose forms all reach the
	 * allocator from inside operator new; the event's site is the
	 * operator's caller, found before the buffer is waited for (the walk
	 * may take ht_lock_global, which the drain takes too). */
	wrapped = ht_wrap_holds(caller - 1);
	if (wrapped && (site = ht_sampler_site_pc()) != 0)
		caller = site;
	if ((b = buffer()) == NULL)
		goto out;
	f = event_of(&e, fn);
	e.size = n;
	al = ht_recfn_align(f, a);
	if (al != 0 && (al & (al - 1)) == 0) {
		e.flags |= HT_TREV_ALIGNED;
		e.align_log2 = log2_of(al);
	}
	if ((e.op == HT_TROP_MALLOC || e.op == HT_TROP_ALIGNED) && wrapped)
		e.op = HT_TROP_NEW;
	if (p == NULL)
		e.flags |= HT_TREV_FAILED;
	e.usable_over = ht_recfn_usable_over(f, p, n);
	e.seq = next_seq();
	if (p != NULL)
		keep(p, e.seq);
	commit(b, &e, caller);
out:
	leave();
}

void
ht_rec_free(unsigned fn, void *p, const uintptr_t *a, uintptr_t caller)
{
	struct ht_trace_event e;
	const struct ht_recfn *f;
	struct ht_recbuf *b;
	unsigned d;

	if (fn >= HT_NALLOCFNS || !enter())
		return;
	/* libstdc++'s operator delete reaches free by a tail call, which
	 * leaves no frame: the call that returns to caller tells, when it
	 * called an operator delete (callsite.h; before the buffer is waited
	 * for, as ht_rec_alloc's walk). */
	if (fn == HT_AF_FREE &&
	    (d = ht_recfn_delete_of(ht_callsite_callee(caller))) < HT_NALLOCFNS)
		fn = d;
	if ((b = buffer()) == NULL)
		goto out;
	f = event_of(&e, fn);
	e.usable_over = HT_TRACE_USABLE_UNKNOWN;
	if (a != NULL &&
	    (f->op == HT_TROP_FREE_SIZED || f->op == HT_TROP_DELETE_SIZED ||
		f->op == HT_TROP_DELETE_ARRAY_SIZED))
		e.size = a[1];
	if (p == NULL)
		e.flags |= HT_TREV_NULL;
	else if ((e.ref = ht_recmap_take((uintptr_t)p)) == 0)
		e.flags |= HT_TREV_PREEXISTING;
	e.seq = next_seq();
	commit(b, &e, caller);
out:
	leave();
}

uint64_t
ht_rec_take(void *old)
{
	uint64_t id;

	if (old == NULL || !enter())
		return 0;
	id = ht_recmap_take((uintptr_t)old);
	leave();
	return id;
}

void
ht_rec_realloc(unsigned fn, void *old, uint64_t id, void *p, size_t n,
    int freed_on_fail, uintptr_t caller)
{
	struct ht_trace_event e;
	const struct ht_recfn *f;
	struct ht_recbuf *b;

	if (fn >= HT_NALLOCFNS || !enter())
		return;
	if ((b = buffer()) == NULL)
		goto out;
	f = ht_recfn(fn);
	memset(&e, 0, sizeof(e));
	e.fn = (uint16_t)fn;
	e.size = n;
	e.ref = id;
	if (old == NULL)
		e.flags |= HT_TREV_NULL;
	else if (id == 0)
		e.flags |= HT_TREV_PREEXISTING;
	if (p == NULL && n == 0 && old != NULL) {
		/* realloc(p, 0) that freed p (glibc's). */
		e.op = HT_TROP_FREE;
		e.usable_over = HT_TRACE_USABLE_UNKNOWN;
		e.seq = next_seq();
	} else if (p == NULL) {
		e.op = HT_TROP_REALLOC;
		e.flags |= HT_TREV_FAILED;
		e.usable_over = HT_TRACE_USABLE_UNKNOWN;
		e.seq = next_seq();
		/* The old block is still the caller's, as it was. */
		if (old != NULL && id != 0 && !freed_on_fail)
			keep(old, id);
	} else {
		e.op = p == old ? HT_TROP_REALLOC_INPLACE : HT_TROP_REALLOC;
		e.usable_over = ht_recfn_usable_over(f, p, n);
		e.seq = next_seq();
		keep(p, e.seq);
	}
	commit(b, &e, caller);
out:
	leave();
}

/* Wait for the threads inside the recorder to leave (LEAVE_MS at most:
 * one may be stopped by a debugger). */
static void
wait_leave(void)
{
	uint64_t end = ht_prim_mono_ms() + LEAVE_MS;
	struct timespec ts = { 0, 1000000 };

	while (__atomic_load_n(&inflight, __ATOMIC_SEQ_CST) != 0 &&
	    ht_prim_mono_ms() < end)
		nanosleep(&ts, NULL);
}

static void
take_figures(struct ht_recstat *st)
{
	st->events = ht_recdrain_events();
	st->bytes = ht_recdrain_bytes();
	st->threads = ht_recdrain_threads();
	st->lost = __atomic_load_n(&lost, __ATOMIC_RELAXED);
	st->lost_why = __atomic_load_n(&lost_why, __ATOMIC_RELAXED);
	st->waits = __atomic_load_n(&waits, __ATOMIC_RELAXED);
}

static uint64_t
agent_bytes(void)
{
	uint64_t b = ht_recbuf_bytes() + ht_recmap_bytes();

	if (b > agent_peak)
		agent_peak = b;
	return agent_peak;
}

/* With ctl_lock held, a recording running: end it as s. */
static void
stop_locked(uint32_t s)
{
	struct ht_trace_end end;
	int rc;

	__atomic_store_n(&want, s, __ATOMIC_SEQ_CST);
	/* Threads waiting for a buffer give up at their next look. */
	__atomic_add_fetch(ht_recbuf_gen(), 1, __ATOMIC_RELEASE);
	(void)syscall(SYS_futex, ht_recbuf_gen(), FUTEX_WAKE_PRIVATE, INT32_MAX,
	    NULL, NULL, 0);
	wait_leave();
	ht_lock_acquire(&drain_lock);
	rc = ht_recdrain_pass(1);
	if (rc != 0) {
		if (s != HT_RECORD_FAILED || lost_why == 0)
			lost_why =
			    (uint32_t)(rc == HT_RECDRAIN_FULL ? EFBIG : rc);
		lost += ht_recdrain_pending();
		s = HT_RECORD_FAILED;
	}
	memset(&end, 0, sizeof(end));
	end.lost = lost;
	end.lost_why = lost_why;
	end.duration_ns = mono_ns() - mono0;
	end.agent_bytes = agent_bytes();
	end.waits = waits;
	take_figures(&last);
	if (ht_recdrain_close(&end) != 0 && s != HT_RECORD_FAILED) {
		/* END could not be written: the trace reads as cut short. */
		s = HT_RECORD_FAILED;
		if (last.lost_why == 0)
			last.lost_why = EIO;
	}
	last.bytes = ht_recdrain_bytes();
	last.events = end.events;
	last.threads = end.threads;
	ht_lock_release(&drain_lock);
	ht_recmap_fini();
	ht_recbuf_fini();
	last.state = s;
	__atomic_store_n(&state, s, __ATOMIC_SEQ_CST);
	if (status_fd >= 0) {
		uint8_t v = (uint8_t)s;
		ssize_t n = write(status_fd, &v, 1);

		(void)n;
		close(status_fd);
		status_fd = -1;
	}
}

/*
 * The events of a thread's ring.  Under a size limit, small enough that
 * the room kept for what the rings may hold when the recording stops
 * (recdrain.h) is a small part of the limit, for 64 threads.
 */
static uint32_t
buffer_events(const struct ht_record_cfg *cfg)
{
	uint64_t n = DEFAULT_BUFFER;

	if (cfg->buffer != 0)
		return cfg->buffer;
	if (cfg->max_bytes != 0) {
		n = cfg->max_bytes / (64 * 4 * 72);
		if (n > DEFAULT_BUFFER)
			n = DEFAULT_BUFFER;
		if (n < 64)
			n = 64;
	}
	return (uint32_t)n;
}

int
ht_record_start(const struct ht_record_cfg *cfg)
{
	struct ht_trace_info info;
	char cmd[64];
	int rc = 0;

	ht_guard_enter();
	ht_lock_acquire(&ctl_lock);
	if (state == HT_RECORD_RUNNING) {
		close(cfg->fd);
		rc = EBUSY;
		goto out;
	}
	/* Emptied only now that the recording is ours: a request refused
	 * above leaves the file as it was (it may be the running one's). */
	if (ftruncate(cfg->fd, 0) != 0 || lseek(cfg->fd, 0, SEEK_SET) != 0) {
		rc = errno;
		close(cfg->fd);
		goto out;
	}
	(void)fcntl(cfg->fd, F_SETFD, cfg->across_exec ? 0 : FD_CLOEXEC);
	if (status_fd >= 0)
		close(status_fd);
	status_fd = cfg->status_fd;
	if (status_fd >= 0)
		(void)fcntl(status_fd, F_SETFD,
		    cfg->across_exec ? 0 : FD_CLOEXEC);
	if (wake_fd < 0)
		wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ht_recfn_setup();
	if (ht_recbuf_init(buffer_events(cfg)) != 0 || ht_recmap_init() != 0) {
		rc = ENOMEM;
		ht_recbuf_fini();
		close(cfg->fd);
		goto out;
	}
	seq = 0;
	nthreads = 0;
	waits = lost = 0;
	lost_why = 0;
	want = 0;
	agent_peak = 0;
	owner = cfg->owner;
	owner_start = owner > 0 ? ht_prim_proc_start(owner) : 0;
	owner_seen_ms = 0;
	memset(&info, 0, sizeof(info));
	info.pid = (uint32_t)getpid();
	info.page_size = (uint32_t)ht_prim_page_size();
	info.realtime_ns = ht_prim_now_ns();
	info.mono_ns = mono0 = mono_ns();
	info.live_entry_bytes = (uint32_t)sizeof(struct ht_live);
	info.site_entry_bytes = (uint32_t)sizeof(struct ht_site);
	ht_prim_command(cmd, sizeof(cmd));
	info.command = cmd;
	if ((rc = ht_recdrain_open(cfg->fd, cfg->max_bytes, &info)) != 0) {
		ht_recmap_fini();
		ht_recbuf_fini();
		goto out;
	}
	memset(&last, 0, sizeof(last));
	__atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&state, HT_RECORD_RUNNING, __ATOMIC_SEQ_CST);
out:
	ht_lock_release(&ctl_lock);
	ht_guard_leave();
	return rc;
}

void
ht_record_stop(uint32_t s)
{
	ht_guard_enter();
	ht_lock_acquire(&ctl_lock);
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == HT_RECORD_RUNNING)
		stop_locked(s);
	ht_lock_release(&ctl_lock);
	ht_guard_leave();
}

int
ht_record_running(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == HT_RECORD_RUNNING;
}

void
ht_record_stat(struct ht_recstat *st)
{
	ht_lock_acquire(&ctl_lock);
	if (state == HT_RECORD_RUNNING) {
		ht_lock_acquire(&drain_lock);
		take_figures(st);
		ht_lock_release(&drain_lock);
		st->state = HT_RECORD_RUNNING;
	} else
		*st = last;
	st->state = state;
	ht_lock_release(&ctl_lock);
}

/*
 * Is the recorder (heaptool record) gone, looked at every OWNER_CHECK_MS?
 * It ends the recording at --duration or at a signal; killed (SIGKILL, a
 * closed terminal's SIGHUP) it cannot, and the recording would run on
 * until the disk is full.  Its pid and start time name it (a pid is
 * reused); a recorder whose start time /proc would not give is looked at
 * by kill(pid, 0) alone.
 */
static int
owner_gone(uint64_t now_ms)
{
	if (owner <= 0 || now_ms - owner_seen_ms < OWNER_CHECK_MS)
		return 0;
	owner_seen_ms = now_ms;
	if (owner_start != 0)
		return ht_prim_proc_start(owner) != owner_start;
	return kill(owner, 0) != 0 && errno == ESRCH;
}

uint64_t
ht_record_tick(uint64_t now_ms)
{
	uint32_t w;

	if (!ht_record_running())
		return UINT64_MAX;
	ht_guard_enter();
	ht_lock_acquire(&drain_lock);
	pass_locked();
	(void)agent_bytes();
	ht_lock_release(&drain_lock);
	w = __atomic_load_n(&want, __ATOMIC_ACQUIRE);
	if (w == 0 && owner_gone(now_ms))
		w = HT_RECORD_DONE;
	if (w != 0) {
		ht_lock_acquire(&ctl_lock);
		if (state == HT_RECORD_RUNNING)
			stop_locked(w);
		ht_lock_release(&ctl_lock);
	}
	ht_guard_leave();
	return ht_record_running() ? now_ms + TICK_MS : UINT64_MAX;
}

int
ht_record_wake_fd(void)
{
	return wake_fd;
}

void
ht_record_wake_clear(void)
{
	uint64_t v;
	ssize_t n;

	if (wake_fd >= 0)
		n = read(wake_fd, &v, sizeof(v));
	(void)n;
}

void
ht_record_fork_child(void)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == HT_RECORD_RUNNING) {
		__atomic_store_n(&state, HT_RECORD_NONE, __ATOMIC_SEQ_CST);
		ht_recdrain_abandon();
		ht_recmap_fini();
		ht_recbuf_fini();
	}
	state = HT_RECORD_NONE;
	memset(&last, 0, sizeof(last));
	inflight = 0;
	drain_lock.v = 0;
	ctl_lock.v = 0;
	if (wake_fd >= 0)
		close(wake_fd);
	wake_fd = -1;
	if (status_fd >= 0)
		close(status_fd);
	status_fd = -1;
}
