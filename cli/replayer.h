/*
 * Runs of the replayer, heaptool-replay (replay/replay.h), for heaptool
 * replay: where it is, the environment of a setup (an allocator preloaded,
 * the agent preloaded as heaptool run preloads it), and what a run
 * printed, read back.
 *
 * A setup is written plain, agent:RATE, allocator:LIB.so, or
 * allocator:LIB.so,agent:RATE.  The agent comes first in LD_PRELOAD, then
 * the allocator, then what LD_PRELOAD held already, as heaptool run has
 * it.
 */
#ifndef HT_REPLAYER_H
#define HT_REPLAYER_H

#include <signal.h>
#include <stdint.h>

#include "trace.h"

#define HT_REPLAY_CLASSES 65
#define HT_REPLAY_BUCKETS 40

struct ht_setup {
	char lib[4096]; /* absolute path of the allocator, or "" */
	uint64_t rate;	/* the agent's rate, or 0 for no agent */
	char label[4200];
};

/* Parse s into *su.  0, or -1 after printing why (a usage error of
 * command cmd). */
int ht_setup_parse(const char *cmd, const char *s, struct ht_setup *su);
/* A setup of --allocator LIB (NULL none) and --with-agent RATE (0 none).
 * 0, or -1 after printing why. */
int ht_setup_make(const char *cmd, const char *lib, uint64_t rate,
    struct ht_setup *su);

struct ht_replay_run {
	uint64_t wall_ns, cpu_ns, alloc_ns, timer_ns, threads, events;
	uint64_t workers; /* the threads that played them (replay/play.c) */
	uint64_t count[HT_TROP_MAX + 1], bytes[HT_TROP_MAX + 1];
	uint64_t skipped_preexisting, skipped_failed, skipped_unmatched;
	uint64_t failed, waits, substituted;
	int64_t peak_requested;
	uint64_t rss_base, rss_peak;
	int rss_reset;
	uint64_t instructions; /* with callgrind */
	int have_instructions;
	/* [op][class][bucket], with latency */
	uint64_t lat[HT_TROP_MAX + 1][HT_REPLAY_CLASSES][HT_REPLAY_BUCKETS];
};

struct ht_replayer {
	char exe[4096];
	char agent[4096];
	char tmp[4096];		 /* a directory of ours for a run's files */
	struct sigaction old[3]; /* SIGINT, SIGTERM, SIGHUP before init */
};

/* Find the replayer (and, when agent, the agent), make the directory, and
 * catch SIGINT, SIGTERM and SIGHUP: each ends the run going on (the
 * replayer is sent SIGTERM) and every later one, so that the caller can
 * report the runs done and remove the directory.  0, or -1 after printing
 * why. */
int ht_replayer_init(struct ht_replayer *r, int agent);
/* Remove the directory; the signals' actions back as they were. */
void ht_replayer_done(struct ht_replayer *r);
/* The signal that stopped the runs, or 0. */
int ht_replayer_stopped(void);

/*
 * Run the replayer on trace in setup su; with latency, time each call;
 * with callgrind, under valgrind --tool=callgrind, counting the
 * instructions of the replay's threads.  The run's figures in *out
 * (latency histograms added to what *out holds, the rest overwritten).
 * 0, or -1 after printing why.
 */
int ht_replayer_run(struct ht_replayer *r, const char *trace,
    const struct ht_setup *su, int latency, int callgrind,
    struct ht_replay_run *out);

#endif
