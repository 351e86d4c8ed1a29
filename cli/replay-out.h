/*
 * heaptool replay's report of its runs of one setup (replayer.h), against
 * what the trace recorded (tracestats.h): the time (and instructions) of
 * the runs, what the replay did beside what was recorded, peak RSS and
 * fragmentation, and the latency of the calls by op and size class; in
 * text or JSON (heaptool(1) documents the keys).
 */
#ifndef HT_REPLAY_OUT_H
#define HT_REPLAY_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "replayer.h"
#include "tracestats.h"

struct ht_replay_report {
	const char *trace;
	const struct ht_setup *setup;
	size_t runs;
	const double *wall_ns;		 /* per run */
	const double *cpu_ns;		 /* per run */
	const double *instructions;	 /* per run, or NULL */
	const struct ht_replay_run *run; /* the last run's counts, and the
					  * latency of all runs */
	const struct ht_tstats *rec;	 /* the trace's figures */
};

int ht_replay_text(FILE *fp, const struct ht_replay_report *r);
int ht_replay_json(FILE *fp, const struct ht_replay_report *r);

#endif
