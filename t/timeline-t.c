/*
 * The agent's timeline (agent/timeline.c): at most one point a period,
 * none while no session runs, a new list at a new session, and a long
 * session kept whole in HT_TIMELINE_POINTS, its older half thinned each
 * time the list fills: every point in order, the first and the latest
 * kept, older points never denser than newer ones.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "session.h"
#include "timeline.h"

/* The session, as the test makes it (session.c is not linked). */
struct ht_session ht_session;

static void
session(uint64_t epoch)
{
	memset(&ht_session, 0, sizeof(ht_session));
	ht_session.epoch = epoch;
	ht_session.state = HT_STATE_RUNNING;
	ht_session.pid = getpid();
}

int
main(void)
{
	uint64_t now = 1000, i, ticks = 20000, prev;
	size_t n, k;
	int ordered = 1, kept_first, dense = 1;
	uint64_t gap, last_gap;

	plan(9);

	session(1);
	ht_session.samples = 7;
	ht_timeline_tick(now);
	ok(ht_timeline_count() == 1,
	    "a running session: the first tick takes a point");
	ht_timeline_tick(now + 50);
	ok(ht_timeline_count() == 1, "none again within the period");
	ht_timeline_tick(now + HT_TIMELINE_PERIOD_MS);
	ok(ht_timeline_count() == 2, "the next, a period later");

	ht_session.state = HT_STATE_STOPPED;
	ht_timeline_tick(now + 10 * HT_TIMELINE_PERIOD_MS);
	ok(ht_timeline_count() == 2,
	    "a stopped session takes none, and keeps its own");

	/* A new session, and a long one: samples numbers the ticks. */
	session(2);
	now += 100 * HT_TIMELINE_PERIOD_MS;
	for (i = 0; i < ticks; i++) {
		ht_session.samples = i;
		ht_timeline_tick(now + i * HT_TIMELINE_PERIOD_MS);
	}
	n = ht_timeline_count();
	ok(n > HT_TIMELINE_POINTS / 2 && n <= HT_TIMELINE_POINTS,
	    "20,000 periods in at most %d points (%zu)", HT_TIMELINE_POINTS, n);
	kept_first = n > 0 && ht_timeline_get(0)->samples == 0;
	ok(kept_first,
	    "a new session's list holds none of the last one's, and "
	    "its first point stays");
	ok(n > 0 && ht_timeline_get(n - 1)->samples == ticks - 1,
	    "the latest point is the latest tick");
	prev = 0;
	last_gap = UINT64_MAX;
	for (k = 1; k < n; k++) {
		uint64_t s = ht_timeline_get(k)->samples;

		if (s <= prev ||
		    ht_timeline_get(k)->t_ms < ht_timeline_get(k - 1)->t_ms)
			ordered = 0;
		prev = s;
	}
	ok(ordered, "in order, of ticks and of times");
	/* From the newest back, the gaps between points never shrink. */
	for (k = n - 1; k > 0; k--) {
		gap = ht_timeline_get(k)->samples -
		    ht_timeline_get(k - 1)->samples;
		if (last_gap != UINT64_MAX && gap < last_gap)
			dense = 0;
		last_gap = gap;
	}
	ok(dense, "older points are never denser than newer ones");
	return 0;
}
