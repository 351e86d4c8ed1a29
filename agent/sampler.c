/*
 * The slow paths of sampling: starting a thread over after a session change,
 * taking a sample (stack, site, live entry, statistics, peak) and accounting
 * a free.  The stack is walked before the lock where it can be (walk_fast).
 * All table work happens under ht_lock_global, taken only with the
 * thread's guard set, so a hook re-entered on the same thread (a signal
 * handler that allocates) passes through instead of deadlocking.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "dump.h"
#include "guard.h"
#include "lock.h"
#include "modules.h"
#include "prim.h"
#include "sampler.h"
#include "session.h"
#include "tables.h"
#include "timeline.h"
#include "unwind.h"
#include "wrap.h"

__thread struct ht_tls ht_tls __attribute__((tls_model("initial-exec")));
uint64_t ht_sampler_seed;
int ht_sampler_dlclose_busy;

static uint64_t thread_seq;

static void
seed_thread(struct ht_tls *t)
{
	uint64_t n = __atomic_add_fetch(&thread_seq, 1, __ATOMIC_RELAXED);
	uint64_t s;

	if (ht_sampler_seed != 0)
		s = ht_sampler_seed + n * 0x9e3779b97f4a7c15ull;
	else
		s = ht_prim_now_ns() ^ ((uint64_t)(uintptr_t)t << 16) ^
		    (n * 0x9e3779b97f4a7c15ull);
	ht_rng_seed(&t->rng, s);
}

/* Peak bookkeeping (DESIGN.md §3): before a site's in-use changes, it saves
 * its value if it has not done so since the latest peak. */
static void
site_touch(struct ht_site *s)
{
	if (s->peak_gen != ht_session.peak_gen) {
		s->peak_gen = ht_session.peak_gen;
		s->peak_bytes = s->st.inuse_bytes;
		s->peak_objects = s->st.inuse_objects;
	}
}

/* A tag line's peak is raised the moment it is passed (issue 12: never
 * computed at report time). */
static void
line_peak(struct ht_tagline *l)
{
	if (l->st.inuse_bytes > l->peak_bytes) {
		l->peak_bytes = l->st.inuse_bytes;
		l->peak_objects = l->st.inuse_objects;
	}
}

/* The line of site s, grown to with grow (a line never grown to holds
 * nothing to subtract). */
static struct ht_tagline *
site_line(const struct ht_site *s, int grow)
{
	return ht_taglines_get(s->tag, s->kind, grow);
}

/* A sample's weight in use: added when taken (or put back), subtracted
 * when freed.  Inline everywhere: a sample adds to three sets of sums and
 * a free subtracts from three, and a call for each costs a third of the
 * sums themselves. */
static inline __attribute__((always_inline)) void
inuse_add(struct ht_stats *st, const struct ht_sample_weight *w)
{
	st->inuse_bytes += w->bytes;
	st->inuse_objects += w->objects;
	st->inuse_var += w->var_bytes;
	st->live_samples++;
}

static inline __attribute__((always_inline)) void
inuse_sub(struct ht_stats *st, const struct ht_sample_weight *w)
{
	st->inuse_bytes -= w->bytes;
	st->inuse_objects -= w->objects;
	st->inuse_var -= w->var_bytes;
	st->live_samples--;
}

static inline __attribute__((always_inline)) void
stats_add(struct ht_stats *st, const struct ht_sample_weight *w)
{
	inuse_add(st, w);
	st->alloc_bytes += w->bytes;
	st->alloc_objects += w->objects;
	st->alloc_var += w->var_bytes;
	st->samples++;
}

static inline const struct ht_sample_weight *
weigh(uint64_t size, uint64_t rate, struct ht_sample_weight *scratch);

/*
 * What a thread's allocations have changed since its last sample: each
 * charges its countdown at least one byte, and each sample draws a new
 * countdown and counts the draw.  The count is what tells two draws apart
 * where they are equal (at rate 1 every draw is 0).
 */
static inline uint32_t
alloc_mark(const struct ht_tls *t)
{
	return (uint32_t)t->countdown ^ (t->draws * 0x9e3779b1u);
}

/*
 * With the lock held: undo a live sample's contribution to in-use.  Its
 * weight is that of its size at the session's rate, as when it was taken
 * (tables.h).  With t, the free is thread t's, and the sample is also
 * counted short-lived (heaptrack's "temporary": freed with no other
 * allocation in between) when it is; returns whether it was.
 *
 * Short-lived here: freed by the thread that made it, with no allocation
 * of that thread in between, which in a program of many threads says more
 * than an order across all of them.  The thread's mark (alloc_mark) is
 * what the sample left exactly when the thread allocated nothing since; a
 * false match needs a multiple of 4 GiB allocated in between to the byte
 * with no sample, or a sample since whose draw matches in 32 bits (about
 * one in 4 billion; never at rate 1, where the draws' count tells).  An allocator
 * that samples by itself (the jemalloc and mimalloc backends) leaves the
 * countdown alone, so there it is not known (the profile says so).
 */
static int
account_free(const struct ht_live *e, const struct ht_tls *t)
{
	struct ht_site *s = ht_sites_get(e->site);
	struct ht_thread *th = ht_threads_get(e->thread);
	struct ht_sample_weight tmp;
	const struct ht_sample_weight *w =
	    weigh(e->size, ht_session.rate, &tmp);
	struct ht_tagline *l;
	int temporary = 0;

	if (s != NULL) {
		site_touch(s);
		inuse_sub(&s->st, w);
		if ((l = site_line(s, 0)) != NULL)
			inuse_sub(&l->st, w);
		if (t != NULL && ht_session.backend < HT_BACKEND_JEMALLOC &&
		    t->gen == ht_session_gen &&
		    t->thread_epoch == ht_session.epoch &&
		    e->thread == (t->thread_idx & 0xffff) &&
		    e->mark == alloc_mark(t)) {
			s->temp_objects += w->objects;
			s->temp_samples++;
			temporary = 1;
		}
	}
	if (th != NULL)
		inuse_sub(&th->st, w);
	ht_session.inuse_bytes -= w->bytes;
	ht_session.inuse_var -= w->var_bytes;
	return temporary;
}

/* With the lock held: a sample of size bytes could not be kept, for want
 * of room in the site table (sites) or the live table, the tables' error
 * saying why.  What it stood for is counted, so that reports can say what
 * the figures lack. */
static void
drop(uint64_t size, const struct ht_sample_weight *w, int sites, int64_t why)
{
	struct ht_sample_weight tmp;

	if (w == NULL)
		w = weigh(size, ht_session.rate, &tmp);
	ht_session.dropped++;
	ht_session.dropped_bytes += w->bytes;
	ht_session.dropped_objects += w->objects;
	if (why != HT_TABLES_FULL)
		ht_session.drop_why |= HT_DROP_NOMEM;
	else
		ht_session.drop_why |= sites ? HT_DROP_SITES : HT_DROP_LIVE;
}

static uint32_t
thread_index(struct ht_tls *t)
{
	char name[16];
	int64_t i;

	if (t->thread_epoch == ht_session.epoch)
		return t->thread_idx;
	ht_prim_thread_name(name);
	i = ht_threads_add((uint32_t)ht_prim_tid(), name);
	if (i < 0)
		return UINT32_MAX;
	t->thread_idx = (uint32_t)i;
	t->thread_epoch = ht_session.epoch;
	return t->thread_idx;
}

/* The agent's own text, to strip its frames from stacks: looked up in the
 * module set until found, then fixed (it does not move while its code
 * runs), so that a walk without the lock (walk_fast) reads it once it is
 * known: agent_hi is stored last, with release, and is 0 until then. */
static uintptr_t agent_lo, agent_hi;
static unsigned agent_gen = ~0u;

/* With the lock held. */
static void
agent_text(void)
{
	const struct ht_modset *set;
	size_t i;

	if (__builtin_expect(
		agent_hi != 0 || agent_gen == ht_modules_generation, 1))
		return;
	agent_gen = ht_modules_generation;
	set = ht_modules_current();
	for (i = 0; i < set->n; i++)
		if ((set->mods[i].flags & HT_MOD_AGENT) &&
		    set->mods[i].end != 0) {
			agent_lo = set->mods[i].start;
			__atomic_store_n(&agent_hi, set->mods[i].end,
			    __ATOMIC_RELEASE);
		}
}

/* After agent_text() in the same hold of the lock, or once walk_fast saw
 * agent_hi set. */
static inline int
in_agent(uintptr_t pc)
{
	return pc - agent_lo < agent_hi - agent_lo;
}

/*
 * Weights by size for the current rate: programs allocate a few sizes over
 * and over, and the exponential behind each weight costs more than the rest
 * of the bookkeeping.  Guarded by the lock; a new rate misses everywhere.
 */
#define WCACHE 256

static struct {
	uint64_t size;
	uint64_t rate;
	struct ht_sample_weight w;
} wcache[WCACHE];

/* The weight of size at rate: in scratch, or in the cache (not copied:
 * it is read in place), valid until the next weigh. */
static inline const struct ht_sample_weight *
weigh(uint64_t size, uint64_t rate, struct ht_sample_weight *scratch)
{
	size_t i;

	/* At rate 1 a weight is the size itself (sampling.h): nothing to
	 * cache, and the sizes of the frees would only thrash the cache.
	 * mimalloc's countdown is charged the size alone (sampling.h). */
	if (ht_session.backend == HT_BACKEND_MIMALLOC) {
		ht_sample_weigh_native(size, rate, scratch);
		return scratch;
	}
	if (rate <= 1) {
		scratch->bytes = (double)size;
		scratch->objects = 1;
		scratch->var_bytes = 0;
		scratch->var_objects = 0;
		return scratch;
	}
	i = (size_t)((size * 0x9e3779b97f4a7c15ull) >> 56);
	if (wcache[i].rate != rate || wcache[i].size != size) {
		ht_sample_weigh(size, rate, &wcache[i].w);
		wcache[i].size = size;
		wcache[i].rate = rate;
	}
	return &wcache[i].w;
}

/*
 * Remove the agent's frames below the top of pcs[i..n) too: the agent's
 * dlopen hook calls the loader, whose constructors allocate, so its frame
 * sits between theirs and the program's.  The agent is not the program's
 * code, and a site must not depend on which hook was crossed.  Returns the
 * new n.
 */
static int
drop_agent_frames(uintptr_t *pcs, int i, int n)
{
	int j, k;

	if (i >= n)
		return n;
	/* Nearly always none: a scan, and a copy only past the first. */
	for (j = i + 1; j < n && !in_agent(pcs[j] - 1); j++)
		;
	for (k = j; j < n; j++)
		if (!in_agent(pcs[j] - 1))
			pcs[k++] = pcs[j];
	return k;
}

/* With the lock held: record a sample of p (size bytes).  Returns 1 when
 * an every-bytes dump became due (wake the agent's thread after the
 * lock), else 0. */
static int keep(struct ht_tls *t, void *p, size_t size, const uintptr_t *pcs,
    int n, uint64_t memo, int i, int raw);

/* A sample's stack: pcs[i..n) are its frames once walked (n -1 until). */
struct stack {
	uintptr_t pcs[HT_MAX_FRAMES + 16];
	struct ht_unwind_stats st; /* of a walk without the lock */
	uint64_t memo;		   /* its memo's id (ht_unwind_fast), or 0 */
	int n;
	int i;
	int raw; /* n as walked */
};

/*
 * The thread's last sample whose stack was a memo's walk (ht_unwind_fast:
 * the same id, the same pcs), where stripping it moved no frame: the next
 * walk of that id has the same frames from the same i, and, in the same
 * session under the same tag, the same site (last_site), since a session's
 * sites keep their indices (a thread's first sample in a new session walks
 * under the lock and leaves memo 0 here, so the epoch is a second guard;
 * t0091 checks both).  memo 0: none.  Used with the lock held, but for
 * walk_fast's reading of i.
 */
static __thread struct {
	uint64_t memo;
	uint64_t epoch;
	uint32_t tag;
	int i, n;
} last_walk __attribute__((tls_model("initial-exec")));

/* Where the walked s->pcs[0..n) starts outside the agent and the
 * wrappers; the agent's frames below are removed too. */
static void
strip(struct stack *s, int ret)
{
	int i = 0, n = s->n;

	while (i < n && in_agent(s->pcs[i]))
		i++;
	/* The site of an allocation made by operator new is the operator's
	 * caller (wrap.h); pcs past the first (and the first, from a return
	 * address) are return addresses, inside their function at pc - 1. */
	while (i + 1 < n && ht_wrap_holds(s->pcs[i] - (i > 0 || ret)))
		i++;
	s->n = drop_agent_frames(s->pcs, i, n);
	s->i = i;
}

/*
 * Before the lock: the stack of the sample, walked without it where the
 * walk needs nothing the lock guards (ht_unwind_fast: the rules cached, the
 * thread's memo; the agent's text known).  It reads neither the CFI nor
 * the module set, so a dlclose in progress cannot hurt it; it is skipped
 * then all the same, as the walk under the lock is, so that what the
 * stacks say during a dlclose does not depend on which walk ran.
 */
static void
walk_fast(struct stack *s, const struct ht_regs *from, int ret)
{
	struct ht_regs regs;

	if (__atomic_load_n(&ht_sampler_dlclose_busy, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&agent_hi, __ATOMIC_ACQUIRE) == 0)
		return;
	if (from != NULL)
		regs = *from;
	else
		HT_REGS_CAPTURE(&regs);
	s->n = s->raw = ht_unwind_fast(&regs, ret, s->pcs, HT_MAX_FRAMES + 16,
	    &s->st, &s->memo);
	if (s->n >= 0 && s->memo != 0 && s->memo == last_walk.memo &&
	    s->n == last_walk.n)
		s->i = last_walk.i;
	else if (s->n >= 0)
		strip(s, ret);
}

static int
record(struct ht_tls *t, void *p, size_t size, uintptr_t caller,
    const struct ht_regs *from, int ret, struct stack *s)
{
	struct ht_regs regs;
	int r;

	/* Never without a session: its tables may be released (detach). */
	if (ht_session.state != HT_STATE_RUNNING)
		return 0;
	if (s->n >= 0)
		ht_unwind_add_stats(&s->st);
	/* A full table drops the sample before its site is made (a site
	 * with no sample would be a row of zeros), and before its stack is
	 * walked where it was not yet (the walk is most of a sample's
	 * cost). */
	if ((r = ht_live_room((uintptr_t)p)) != 0) {
		drop(size, NULL, 0, r);
		return 0;
	}
	if (s->n < 0)
		s->memo = 0;
	if (s->n < 0 && !ht_sampler_dlclose_busy) {
		if (from != NULL)
			regs = *from;
		else
			HT_REGS_CAPTURE(&regs);
		s->n = ret ?
		    ht_unwind_return(&regs, s->pcs, HT_MAX_FRAMES + 16) :
		    ht_unwind(&regs, s->pcs, HT_MAX_FRAMES + 16);
		agent_text();
		strip(s, ret);
	} else if (s->n < 0) {
		ht_session.truncated++;
		s->n = s->i = 0;
	}
	if (s->i >= s->n) {
		/* No frame outside the agent: keep at least the caller. */
		s->pcs[0] = caller;
		s->n = 1;
		s->i = 0;
		s->memo = 0;
	}
	if (s->n - s->i > HT_MAX_FRAMES)
		s->n = s->i + HT_MAX_FRAMES;
	/* A memo's walk whose stripping moved no frame (last_walk). */
	return keep(t, p, size, &s->pcs[s->i], s->n - s->i,
	    s->n == s->raw ? s->memo : 0, s->i, s->raw);
}

/*
 * The site of the thread's previous sample, as its index: a program takes
 * its samples from the same few stacks over and over, and comparing the
 * stack with that site's frames costs a fraction of interning it.  The
 * index is checked against the table every time, never trusted: it may be
 * an older session's, or past the end of a table made anew, and a site
 * whose frames, tag and kind are these is the one site of that key
 * (ht_sites_intern_tag never makes two), whichever session it was found
 * in.  Used with the lock held.
 */
static __thread uint32_t last_site __attribute__((tls_model("initial-exec")));

static int64_t
site_of(const uintptr_t *pcs, uint32_t n, uint32_t tag)
{
	const struct ht_site *s = ht_sites_get(last_site);
	const uintptr_t *f;
	int64_t site;
	uint32_t i;

	if (s != NULL && s->nframes == n && s->tag == tag && s->kind == 0) {
		f = ht_sites_frames(s);
		for (i = 0; i < n && f[i] == pcs[i]; i++)
			;
		if (i == n)
			return last_site;
	}
	site = ht_sites_intern_tag(pcs, n, tag, 0);
	if (site >= 0)
		last_site = (uint32_t)site;
	return site;
}

/* With the lock held, a session running and room for p in the live table
 * (ht_live_room): record the sample of p (size bytes) at the site of the
 * n frames at pcs.  Returns as record. */
static int
keep(struct ht_tls *t, void *p, size_t size, const uintptr_t *pcs, int n,
    uint64_t memo, int i, int raw)
{
	struct ht_sample_weight tmp;
	const struct ht_sample_weight *w;
	struct ht_live e, old;
	struct ht_site *s;
	struct ht_thread *th;
	struct ht_tagline *l;
	int64_t site;
	unsigned b;
	int r;

	if (memo != 0 && memo == last_walk.memo &&
	    last_walk.epoch == ht_session.epoch && last_walk.tag == t->tag &&
	    ht_sites_get(last_site) != NULL)
		site = last_site;
	else
		site = site_of(pcs, (uint32_t)n, t->tag);
	if (site < 0) {
		last_walk.memo = 0;
		drop(size, NULL, 1, site);
		return 0;
	}
	last_walk.memo = memo;
	last_walk.epoch = ht_session.epoch;
	last_walk.tag = t->tag;
	last_walk.i = i;
	last_walk.n = raw;
	e.ptr = (uintptr_t)p;
	e.size = size;
	e.site = (uint32_t)site;
	e.thread = thread_index(t) & 0xffff;
	/* The caller drew the thread's next countdown before the sample
	 * (ht_sampler_alloc): a free that finds it unchanged is of a
	 * short-lived block (account_free). */
	e.mark = alloc_mark(t);
	r = ht_live_insert(&e, &old);
	if (r < 0) {
		drop(size, NULL, 0, r);
		return 0;
	}
	if (r == 1) {
		/* The address came back from the allocator, so its old block
		 * was freed without us seeing it: account that free now. */
		ht_session.lost_frees++;
		account_free(&old, NULL);
	}
	/* After account_free: its weigh may take the cache's slot. */
	w = weigh(size, ht_session.rate, &tmp);
	s = ht_sites_get((size_t)site);
	site_touch(s);
	stats_add(&s->st, w);
	if ((l = site_line(s, 1)) != NULL) {
		stats_add(&l->st, w);
		line_peak(l);
	}
	th = ht_threads_get(e.thread);
	if (th != NULL)
		stats_add(&th->st, w);
	ht_session.samples++;
	ht_session.inuse_bytes += w->bytes;
	ht_session.inuse_var += w->var_bytes;
	ht_session.alloc_bytes += w->bytes;
	b = ht_size_bucket(size);
	ht_session.size_objects[b] += w->objects;
	ht_session.size_bytes[b] += w->bytes;
	if (ht_session.inuse_bytes > ht_session.peak_bytes) {
		ht_session.peak_bytes = ht_session.inuse_bytes;
		ht_session.peak_ns = ht_prim_now_ns();
		ht_session.peak_gen++;
	}
	return ht_dump_note_alloc(w->bytes);
}

static void
drain_pending(struct ht_tls *t)
{
	struct ht_live e;

	while (t->npending > 0) {
		ht_guard_enter();
		ht_lock_acquire(&ht_lock_global);
		while (t->npending > 0) {
			uintptr_t p = t->pending[--t->npending];

			if (ht_session.state == HT_STATE_RUNNING &&
			    ht_live_remove(p, &e))
				account_free(&e, NULL);
		}
		ht_lock_release(&ht_lock_global);
		ht_guard_leave();
	}
}

/* ht_sampler_alloc and ht_sampler_alloc_return: ret says from's pc is a
 * return address. */
static void
alloc(void *p, size_t size, uintptr_t caller, const struct ht_regs *from,
    int ret)
{
	struct ht_tls *t = &ht_tls;
	int saved_errno, wake = 0, sampled = 0, early;
	struct stack s;
	int64_t next = 0;
	unsigned gen;

	if (ht_guard_held())
		return; /* re-entered: the countdown stays due */
	saved_errno = errno;
	/*
	 * The next countdown is drawn first, so that the sample's entry keeps
	 * it (keep: short-lived blocks), and before the lock where it can be:
	 * the thread's own generator and rate need none, and the lock's hold
	 * is what other threads wait for.  A session that changed meanwhile
	 * (seen under the lock) draws again at its rate.
	 */
	early = t->rng.s != 0 &&
	    t->gen == __atomic_load_n(&ht_session_gen, __ATOMIC_RELAXED);
	if (early)
		next = ht_sample_countdown(&t->rng, t->rate);
	ht_guard_enter();
	/* The walk too, where it can be: it is most of a sample's cost.
	 * (A session changed meanwhile may not want the sample: the walk is
	 * then wasted, never wrong.) */
	s.n = -1;
	if (early && p != NULL)
		walk_fast(&s, from, ret);
	ht_lock_acquire(&ht_lock_global);
	gen = ht_session_gen;
	if (t->gen != gen || t->rng.s == 0) {
		/* The session changed since this thread last looked: start
		 * over at the current rate, nothing carried. */
		early = 0;
		if (t->rng.s == 0)
			seed_thread(t);
		t->gen = gen;
		/* An allocator that samples by itself feeds the session:
		 * the hooks' countdown must not sample it twice. */
		if (ht_session.state != HT_STATE_RUNNING ||
		    ht_session.pid != getpid() ||
		    ht_session.backend >= HT_BACKEND_JEMALLOC) {
			t->countdown = INT64_MAX;
			goto out;
		}
		t->rate = ht_session.rate;
		t->countdown =
		    ht_sample_countdown(&t->rng, t->rate) - ((int64_t)size + 1);
		if (t->countdown >= 0)
			goto out;
	}
	if (!early)
		next = ht_sample_countdown(&t->rng, t->rate);
	t->countdown = next;
	t->draws++;
	if (p != NULL)
		wake = record(t, p, size, caller, from, ret, &s);
	sampled = p != NULL;
out:
	ht_lock_release(&ht_lock_global);
	if (wake)
		ht_dump_wake();
	if (sampled)
		ht_timeline_poke();
	ht_guard_leave();
	if (t->npending > 0)
		drain_pending(t);
	errno = saved_errno;
}

void
ht_sampler_alloc(void *p, size_t size, uintptr_t caller,
    const struct ht_regs *from)
{
	alloc(p, size, caller, from, 0);
}

void
ht_sampler_alloc_return(void *p, size_t size, uintptr_t caller,
    const struct ht_regs *from)
{
	alloc(p, size, caller, from, 1);
}

void
ht_sampler_free(void *p)
{
	struct ht_tls *t = &ht_tls;
	struct ht_live e;

	if (p == NULL ||
	    __atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) !=
		HT_STATE_RUNNING)
		return;
	if (ht_guard_held()) {
		/* A signal handler freeing while this thread is inside the
		 * agent: the lock may be ours.  Account it on the way out. */
		if (t->npending < HT_PENDING_FREES)
			t->pending[t->npending++] = (uintptr_t)p;
		else
			__atomic_add_fetch(&ht_session.lost_frees, 1,
			    __ATOMIC_RELAXED);
		return;
	}
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if (ht_session.state == HT_STATE_RUNNING &&
	    ht_live_remove((uintptr_t)p, &e))
		account_free(&e, t);
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	if (t->npending > 0)
		drain_pending(t);
}

int
ht_sampler_take(void *p, struct ht_live *e, uint64_t *epoch)
{
	int found = 0;

	if (p == NULL || ht_guard_held() ||
	    __atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) !=
		HT_STATE_RUNNING)
		return 0;
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if (ht_session.state == HT_STATE_RUNNING &&
	    ht_live_remove((uintptr_t)p, e)) {
		/* A block reallocated before its thread allocated again is
		 * short-lived as a freed one is (heaptrack counts it so):
		 * ht_sampler_restore takes that back if the call failed. */
		ht_tls.took_temporary = account_free(e, &ht_tls);
		*epoch = ht_session.epoch;
		found = 1;
	}
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	return found;
}

void
ht_sampler_restore(const struct ht_live *e, uint64_t epoch)
{
	struct ht_sample_weight w, tmp;
	struct ht_live old;
	struct ht_site *s;
	struct ht_thread *th;
	struct ht_tagline *l;

	if (ht_guard_held())
		return;
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	s = ht_sites_get(e->site);
	if (ht_session.state == HT_STATE_RUNNING && ht_session.epoch == epoch &&
	    s != NULL && ht_live_insert(e, &old) == 0) {
		w = *weigh(e->size, ht_session.rate, &tmp);
		if (ht_tls.took_temporary) {
			s->temp_objects -= w.objects;
			s->temp_samples--;
		}
		site_touch(s);
		inuse_add(&s->st, &w);
		if ((l = site_line(s, 1)) != NULL) {
			inuse_add(&l->st, &w);
			line_peak(l);
		}
		th = ht_threads_get(e->thread);
		if (th != NULL)
			inuse_add(&th->st, &w);
		ht_session.inuse_bytes += w.bytes;
		ht_session.inuse_var += w.var_bytes;
	}
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
}

/* With the lock held: the record of sample e leaves site from for site
 * to, and their lines. */
static void
move(const struct ht_live *e, struct ht_site *from, struct ht_site *to)
{
	struct ht_sample_weight w, tmp;
	struct ht_tagline *l;

	w = *weigh(e->size, ht_session.rate, &tmp);
	site_touch(from);
	site_touch(to);
	inuse_sub(&from->st, &w);
	from->st.alloc_bytes -= w.bytes;
	from->st.alloc_objects -= w.objects;
	from->st.alloc_var -= w.var_bytes;
	from->st.samples--;
	stats_add(&to->st, &w);
	if ((l = site_line(from, 0)) != NULL) {
		inuse_sub(&l->st, &w);
		l->st.alloc_bytes -= w.bytes;
		l->st.alloc_objects -= w.objects;
		l->st.alloc_var -= w.var_bytes;
		l->st.samples--;
	}
	if ((l = site_line(to, 1)) != NULL) {
		stats_add(&l->st, &w);
		line_peak(l);
	}
}

int
ht_sampler_assign(const void *p, uint32_t tag, uint32_t kind)
{
	uintptr_t frames[HT_MAX_FRAMES];
	struct ht_site *from, *to;
	struct ht_live *e;
	uint32_t n = 0;
	int64_t site;
	int rc = 0;

	/* Nearly every block is no sample: the free path's filter says so
	 * without the lock.  Re-entered (a signal handler inside the
	 * agent), the lock may be ours: the block is left where it is. */
	if (p == NULL || !ht_live_maybe((uintptr_t)p) || ht_guard_held() ||
	    __atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) !=
		HT_STATE_RUNNING)
		return 0;
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if (ht_session.state != HT_STATE_RUNNING ||
	    (e = ht_live_find((uintptr_t)p)) == NULL ||
	    (from = ht_sites_get(e->site)) == NULL ||
	    (from->tag == tag && from->kind == kind))
		goto out;
	/* The frames are copied out: a new site may move the pool. */
	n = from->nframes <= HT_MAX_FRAMES ? from->nframes : HT_MAX_FRAMES;
	memcpy(frames, ht_sites_frames(from), n * sizeof(frames[0]));
	site = ht_sites_intern_tag(frames, n, tag, kind);
	if (site < 0) {
		rc = (int)site;
		goto out;
	}
	/* The tables may have moved: the entry and the sites again. */
	e = ht_live_find((uintptr_t)p);
	from = ht_sites_get(e->site);
	to = ht_sites_get((size_t)site);
	move(e, from, to);
	e->site = (uint32_t)site;
out:
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	return rc;
}

uintptr_t
ht_sampler_site_pc(void)
{
	struct stack s;
	struct ht_regs regs;
	uintptr_t pc = 0;

	s.n = -1;
	s.i = 0;
	walk_fast(&s, NULL, 0);
	if (s.n < 0) {
		ht_lock_acquire(&ht_lock_global);
		if (!ht_sampler_dlclose_busy) {
			HT_REGS_CAPTURE(&regs);
			s.n = ht_unwind(&regs, s.pcs, HT_MAX_FRAMES + 16);
			agent_text();
			strip(&s, 0);
		}
		ht_lock_release(&ht_lock_global);
	}
	if (s.n > 0 && s.i < s.n)
		pc = s.pcs[s.i];
	return pc;
}

int
ht_sampler_stack(const struct ht_regs *from, uintptr_t lo, uintptr_t hi,
    uintptr_t *pcs, int max)
{
	uintptr_t buf[HT_MAX_FRAMES + 48];
	int n, i = 0, k;

	if (ht_sampler_dlclose_busy || max <= 0)
		return 0;
	n = ht_unwind(from, buf, HT_MAX_FRAMES + 48);
	agent_text();
	/* pcs past the first are return addresses: inside their function
	 * at pc - 1. */
	while (i < n &&
	    (in_agent(buf[i] - (i > 0)) ||
		(buf[i] - (i > 0) >= lo && buf[i] - (i > 0) < hi)))
		i++;
	while (i + 1 < n && ht_wrap_holds(buf[i] - (i > 0)))
		i++;
	n = drop_agent_frames(buf, i, n);
	for (k = 0; i < n && k < max; i++)
		pcs[k++] = buf[i];
	return k;
}

/* While no session of the backend runs, a thread calls back after this
 * many bytes on average: rare enough to cost nothing, often enough that a
 * new session finds it soon (its first crossing starts it over). */
#define NATIVE_IDLE_RATE (1u << 20)

static uint64_t
native_distance(struct ht_tls *t, uint64_t rate)
{
	/* The allocator samples when the bytes since the last sample reach
	 * the distance: floor(Exp) + 1 makes that the crossing of a
	 * continuous Exp(mean rate), p = 1 - exp(-s / rate) (sampling.h). */
	if (rate <= 1)
		return 0;
	return (uint64_t)ht_sample_countdown(&t->rng, rate) + 1;
}

uint64_t
ht_sampler_native(void *p, size_t size, const struct ht_regs *from,
    uintptr_t lo, uintptr_t hi)
{
	struct ht_tls *t = &ht_tls;
	uintptr_t pcs[HT_MAX_FRAMES];
	uint64_t next;
	int saved_errno, n, wake = 0;

	if (ht_guard_held())
		return NATIVE_IDLE_RATE;
	saved_errno = errno;
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if (t->rng.s == 0)
		seed_thread(t);
	if (ht_session.state != HT_STATE_RUNNING ||
	    ht_session.pid != getpid() ||
	    ht_session.backend != HT_BACKEND_MIMALLOC) {
		t->native_gen = 0;
		next = native_distance(t, NATIVE_IDLE_RATE);
		goto out;
	}
	if (t->native_gen != ht_session_gen) {
		/* The distance just crossed was drawn before this session
		 * (or is the allocator's first, not drawn at all): start
		 * over, nothing carried. */
		t->native_gen = ht_session_gen;
	} else if (p != NULL) {
		if ((n = ht_live_room((uintptr_t)p)) != 0)
			drop(size, NULL, 0, n);
		else if ((n = ht_sampler_stack(from, lo, hi, pcs,
			      HT_MAX_FRAMES)) > 0)
			wake = keep(t, p, size, pcs, n, 0, 0, 0);
	}
	next = native_distance(t, ht_session.rate);
out:
	ht_lock_release(&ht_lock_global);
	if (wake)
		ht_dump_wake();
	ht_guard_leave();
	errno = saved_errno;
	return next;
}
