/*
 * The session's memory over time, as its profile carries it (version 8
 * TIMELINE records: agent/timeline.h), for the reports: the points with
 * their 95% intervals, printed as text or as JSON, and read by the HTML
 * report's chart.  The last point is the profile's own totals at its end
 * (the agent takes a point at most every 100 ms: the end is seldom one).
 */
#ifndef HT_TIMELINE_H
#define HT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "view.h"

struct ht_timeline_point {
	double t_s; /* since the session's start */
	uint64_t inuse_bytes;
	uint64_t inuse_low;  /* the 95% interval */
	uint64_t inuse_high; /* UINT64_MAX: unknown (floors) */
	uint64_t alloc_bytes;
	uint64_t rss_bytes;
	uint64_t samples;
};

/* The points of v's profile, the end's last, into *out (malloc'd; NULL and
 * 0 for a profile with no point, older than version 8 or of a session that
 * took none).  Returns their number, or (size_t)-1 with errno ENOMEM. */
size_t
ht_timeline_points(const struct ht_view *v, struct ht_timeline_point **out);

/* The series as a text table (sizes as ht_text_size with raw). */
int ht_timeline_text(FILE *fp, const struct ht_view *v, int raw);

/* The series as the value of key "timeline": an array of points. */
int ht_timeline_json(struct ht_json *j, const struct ht_view *v);

#endif
