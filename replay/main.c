/*
 * heaptool-replay TRACE [-l]: play TRACE back and print what the run did
 * (replay.h).  heaptool replay runs it, with the allocator to time (and
 * the agent) preloaded; it is not meant to be run by hand, but can be.
 *
 * Output, one "key value..." a line: version 1, threads, workers (the
 * threads that played them), events, wall_ns,
 * cpu_ns (the CPU time of the replay's threads together), with -l
 * alloc_ns and timer_ns (the time inside the calls, less the clock's cost
 * timer_ns a call),
 * count OP N BYTES (per op played), skipped_preexisting, skipped_failed,
 * skipped_unmatched, failed, waits, substituted, peak_requested (the peak
 * of the live bytes this run asked for, in the trace's sequence order),
 * rss_base and rss_peak (bytes; rss_peak from VmHWM, reset before the run
 * when rss_reset is 1), and with -l lat OP CLASS BUCKET N for each
 * histogram cell that is not empty.  Exit 0, or 1 after one line on
 * stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "replay.h"

/* A field of /proc/self/status in kB, as bytes; 0 if absent. */
static uint64_t
status_kb(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *fp = fopen("/proc/self/status", "r");

	if (fp == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10) * 1024;
			break;
		}
	fclose(fp);
	return v;
}

/* Reset the peak RSS (VmHWM) to the current RSS, so that the peak is the
 * run's and not the trace's reading (proc(5), clear_refs 5).  1 if done. */
static int
reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int done;

	if (fd < 0)
		return 0;
	done = write(fd, "5", 1) == 1;
	close(fd);
	return done;
}

/* The run's RSS at its start (rp_rss_mark). */
static uint64_t mark_base;
static int mark_reset;

/* Each page of the n bytes at p written: calloc's zero pages are mapped
 * to nothing until written, and the steps write the plan's tables, which
 * would then count as the allocator's growth. */
static void
touch(void *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = 0;
}

void
rp_rss_mark(void)
{
	mark_reset = reset_hwm();
	mark_base = status_kb("VmRSS");
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	struct rp_result r;
	struct rp_plan p;
	struct ht_trace *t;
	uint64_t base, peak_rss, o, c, b;
	int64_t live = 0, peak = 0;
	int latency = 0, reset, i;
	char err[256];
	size_t k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0)
			latency = 1;
		else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else {
			fprintf(stderr, "usage: heaptool-replay [-l] TRACE\n");
			return 2;
		}
	}
	if (path == NULL) {
		fprintf(stderr, "usage: heaptool-replay [-l] TRACE\n");
		return 2;
	}
	if ((t = ht_trace_read_file(path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "heaptool-replay: %s: %s\n", path, err);
		return 1;
	}
	if (rp_plan_build(t, &p, err, sizeof(err)) != 0 ||
	    rp_ops_init(p.need_cxx, err, sizeof(err)) != 0) {
		fprintf(stderr, "heaptool-replay: %s: %s\n", path, err);
		return 1;
	}
	touch(p.ptr, (p.nslots + 1) * sizeof(*p.ptr));
	touch(p.size, (p.nslots + 1) * sizeof(*p.size));
	touch(p.kind, (p.nslots + 1) * sizeof(*p.kind));
	touch(p.delta, (p.nevents + 1) * sizeof(*p.delta));
	if (rp_play(&p, latency, &r, err, sizeof(err)) != 0) {
		fprintf(stderr, "heaptool-replay: %s: %s\n", path, err);
		return 1;
	}
	peak_rss = status_kb("VmHWM");
	reset = mark_reset;
	base = mark_base;
	for (k = 0; k < p.nevents; k++) {
		live += p.delta[k];
		if (live > peak)
			peak = live;
	}
	printf("version 1\nthreads %zu\nworkers %zu\nevents %zu\n"
	       "wall_ns %llu\ncpu_ns %llu\nalloc_ns %llu\ntimer_ns %llu\n",
	    p.nthreads, r.workers, p.nevents, (unsigned long long)r.wall_ns,
	    (unsigned long long)r.cpu_ns, (unsigned long long)r.alloc_ns,
	    (unsigned long long)r.timer_ns);
	for (o = 1; o <= HT_TROP_MAX; o++)
		if (r.count[o] > 0)
			printf("count %s %llu %llu\n", ht_trace_op_name(o),
			    (unsigned long long)r.count[o],
			    (unsigned long long)r.bytes[o]);
	printf("skipped_preexisting %llu\nskipped_failed %llu\n"
	       "skipped_unmatched %llu\nfailed %llu\nwaits %llu\n"
	       "substituted %llu\npeak_requested %lld\n"
	       "rss_reset %d\nrss_base %llu\nrss_peak %llu\n",
	    (unsigned long long)p.skipped[RP_SKIP_PREEXISTING],
	    (unsigned long long)p.skipped[RP_SKIP_FAILED],
	    (unsigned long long)p.skipped[RP_SKIP_UNMATCHED],
	    (unsigned long long)r.failed, (unsigned long long)r.waits,
	    (unsigned long long)rp_ops_substituted, (long long)peak, reset,
	    (unsigned long long)base, (unsigned long long)peak_rss);
	for (o = 0; latency && o <= HT_TROP_MAX; o++)
		for (c = 0; c < RP_CLASSES; c++)
			for (b = 0; b < RP_BUCKETS; b++)
				if (r.lat[o][c][b] > 0)
					printf("lat %s %llu %llu %u\n",
					    ht_trace_op_name(o),
					    (unsigned long long)c,
					    (unsigned long long)b,
					    r.lat[o][c][b]);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "heaptool-replay: stdout: %s\n",
		    strerror(errno));
		return 1;
	}
	/* The blocks still live stay: the process ends, as the recorded
	 * one's did (or had not yet). */
	rp_plan_free(&p);
	ht_trace_free(t);
	return 0;
}
