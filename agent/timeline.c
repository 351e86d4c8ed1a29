/* The session's memory over time (timeline.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "lock.h"
#include "prim.h"
#include "sampling.h"
#include "session.h"
#include "timeline.h"

/* While no session runs the thread looks this often for one started
 * without a request to it (the API, heaptool run). */
#define IDLE_MS 1000

/* Under ht_lock_global: the list, the session it belongs to, and when the
 * next point is due (monotonic ms; read without the lock to skip it). */
static struct ht_timeline_rec points[HT_TIMELINE_POINTS];
static size_t npoints;
static uint64_t epoch;
static uint64_t next_ms;

/* Keep every other point of the older half, then the newer half whole. */
static void
thin(void)
{
	size_t half = npoints / 2, i, k = 0;

	for (i = 0; i < half; i += 2)
		points[k++] = points[i];
	memmove(&points[k], &points[half],
	    (npoints - half) * sizeof(points[0]));
	npoints = k + (npoints - half);
}

/* With ht_lock_global held, a session of this process running: the point
 * of now, unless one was taken less than a period ago. */
static void
take(uint64_t now_ms, uint64_t now_ns, uint64_t rss)
{
	struct ht_timeline_rec *p;

	if (ht_session.epoch != epoch) {
		__atomic_store_n(&epoch, ht_session.epoch, __ATOMIC_RELAXED);
		npoints = 0;
	} else if (now_ms < next_ms)
		return;
	if (npoints == HT_TIMELINE_POINTS)
		thin();
	p = &points[npoints];
	p->t_ms = now_ns > ht_session.start_ns ?
	    (now_ns - ht_session.start_ns) / 1000000 :
	    0;
	/* The realtime clock may step back: never before the last point
	 * (the format keeps them in order). */
	if (npoints > 0 && p->t_ms < points[npoints - 1].t_ms)
		p->t_ms = points[npoints - 1].t_ms;
	p->inuse_bytes = ht_sample_round(ht_session.inuse_bytes);
	p->inuse_var = ht_session.inuse_var > 0 ? ht_session.inuse_var : 0;
	p->alloc_bytes = ht_sample_round(ht_session.alloc_bytes);
	p->rss_bytes = rss;
	p->samples = ht_session.samples;
	npoints++;
	__atomic_store_n(&next_ms, now_ms + HT_TIMELINE_PERIOD_MS,
	    __ATOMIC_RELAXED);
}

/* Whether a point may be due: read without the lock (take checks again). */
static int
due(uint64_t now_ms)
{
	return now_ms >= __atomic_load_n(&next_ms, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&ht_session.epoch, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&epoch, __ATOMIC_RELAXED);
}

static int
running(void)
{
	return ht_session.state == HT_STATE_RUNNING &&
	    ht_session.pid == getpid();
}

uint64_t
ht_timeline_tick(uint64_t now_ms)
{
	uint64_t rss, now_ns, next;

	if (!due(now_ms))
		return __atomic_load_n(&next_ms, __ATOMIC_RELAXED);
	rss = ht_prim_rss_bytes();
	now_ns = ht_prim_now_ns();
	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if (running())
		take(now_ms, now_ns, rss);
	else
		__atomic_store_n(&next_ms, now_ms + IDLE_MS, __ATOMIC_RELAXED);
	next = next_ms;
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	return next;
}

void
ht_timeline_poke(void)
{
	uint64_t now_ms = ht_prim_coarse_ms(), rss, now_ns;

	if (!due(now_ms))
		return;
	rss = ht_prim_rss_bytes();
	now_ns = ht_prim_now_ns();
	ht_lock_acquire(&ht_lock_global);
	if (running())
		take(now_ms, now_ns, rss);
	ht_lock_release(&ht_lock_global);
}

size_t
ht_timeline_count(void)
{
	/* A session that took no point yet has none. */
	return ht_session.epoch == epoch ? npoints : 0;
}

const struct ht_timeline_rec *
ht_timeline_get(size_t i)
{
	return &points[i];
}
