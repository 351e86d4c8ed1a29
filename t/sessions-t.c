/*
 * Sessions start over (the sessions issue; DESIGN.md section 3): nothing of
 * an old session leaks into a new one, however the thread that allocates
 * sat between them.  t/target/dump-target runs with the agent preloaded and
 * no HEAPTOOL_PID (attach mode) and a fixed HEAPTOOL_SEED; the test speaks
 * src/proto.h to its agent and tells the fixture, one command at a time,
 * exactly what to allocate, in one thread that is idle between every stop
 * and start:
 *   1. 32 MiB at rate 256 MiB, stop, start at 64 KiB, 32 MiB more: the
 *      estimate is 32 MiB within four standard errors of its sample count
 *      (a countdown carried over from the first session would still have
 *      about 224 MiB to run: no sample, an estimate of 0);
 *   2. stop half way into a 1 MiB period (128 blocks of 4 KiB), start at
 *      1 MiB, then one block at a time until the first sample: that sample
 *      is of a block of the new session and stands for exactly one block's
 *      weight at the new rate, nothing of the 512 KiB before the start;
 *   3. a session at rate 1, then one at 1 TiB: the second takes no sample;
 *   4. 1000 start/stop cycles at four rates while 8 threads allocate,
 *      reallocate and free: every report decodes and is consistent (the
 *      session's samples and live samples are the sums of its sites' and
 *      threads', no site has bytes in use without a live sample or more in
 *      use than allocated), the agent's memory stops growing (status
 *      overhead after the last cycle at most that of cycle 100 plus the
 *      growth of its first 100 cycles), and the fixture and the agent are
 *      alive and answer at the end;
 * and the agent refuses a relative dump prefix, one it cannot write to, or
 * one another user could redirect, leaving the running session as it was.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "basic.h"
#include "profile.h"
#include "proto.h"
#include "sampling.h"
#include "target.h"

#define MiB    (1024ull * 1024)
#define CYCLES 1000
#define SEED   "12345"

static char *agent, *fixture;

static struct target *
start_fixture(void)
{
	char preload[PATH_MAX + 16];
	const char *env[] = { "HEAPTOOL_PID", "HEAPTOOL_OUTPUT",
		"HEAPTOOL_SEED=" SEED, preload, NULL };
	struct target *t;
	long pid;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", agent);
	if ((t = target_start(fixture, NULL, env)) == NULL)
		bail("dump-target did not start");
	if (sscanf(target_ready(t), "ready %ld", &pid) != 1 ||
	    pid != (long)target_pid(t))
		bail("dump-target: ready line \"%s\"", target_ready(t));
	return t;
}

/* Send one command and check its answer ("done CMD"). */
static void cmd(struct target *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
cmd(struct target *t, const char *fmt, ...)
{
	char c[256], want[300], line[300] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c, sizeof(c), fmt, ap);
	va_end(ap);
	snprintf(want, sizeof(want), "done %s", c);
	if (target_send(t, "%s\n", c) != 0 ||
	    target_line(t, line, sizeof(line)) == NULL ||
	    strcmp(line, want) != 0)
		bail("dump-target: \"%s\" answered \"%s\"", c, line);
}

/* START, STOP: 0 for OK, the ERR code, or -1. */
static long
simple(struct target *t, uint16_t type, uint64_t rate)
{
	return agent_simple(target_pid(t), type, rate, 0);
}

static int
status(struct target *t, struct ht_status *st)
{
	return agent_status(target_pid(t), st);
}

static struct ht_profile *
report(struct target *t)
{
	return agent_report(target_pid(t));
}

static void
must(long rc, const char *what)
{
	if (rc != 0)
		bail("%s: %ld", what, rc);
}

static void
totals(const struct ht_profile *p, uint64_t *bytes, uint64_t *samples)
{
	size_t i;

	*bytes = *samples = 0;
	for (i = 0; i < p->nsites; i++) {
		*bytes += p->sites[i].alloc_bytes;
		*samples += p->sites[i].samples;
	}
}

/* 1. A small rate after a large one samples from its first byte. */
static void
test_rate_change(struct target *t)
{
	struct ht_profile *p;
	uint64_t bytes, k;
	double err, bound;

	must(simple(t, HT_MSG_START, 256 * MiB), "START 256 MiB");
	cmd(t, "alloc 8192 4096");
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	must(simple(t, HT_MSG_START, 64 * 1024), "START 64 KiB");
	cmd(t, "other 8192 4096");
	p = report(t);
	if (p == NULL)
		bail("no report");
	totals(p, &bytes, &k);
	ok(k > 0,
	    "1: the 64 KiB session sampled the idle thread's next "
	    "32 MiB (%llu samples)",
	    (unsigned long long)k);
	/* Each sample weighs w = 4096/p with p = 1 - exp(-4096/65536); K
	 * samples of 8192 blocks estimate 32 MiB with a standard error of
	 * w sqrt(K (1 - p)) < E / sqrt(K): four of those. */
	err = fabs((double)bytes - 32.0 * MiB);
	bound = k > 0 ? 4.0 * (double)bytes / sqrt((double)k) : 0;
	ok(k > 0 && err <= bound,
	    "1: estimate %llu bytes, 32 MiB within "
	    "%.0f (4 standard errors of %llu samples)",
	    (unsigned long long)bytes, bound, (unsigned long long)k);
	ok(p->meta.epoch == 2 && p->meta.rate == 64 * 1024,
	    "1: the report is of the second session (epoch %llu)",
	    (unsigned long long)p->meta.epoch);
	ht_profile_free(p);
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	cmd(t, "free");
}

/* 2. The first sample of a session weighs one block of it, nothing more. */
static void
test_first_sample(struct target *t)
{
	struct ht_sample_weight w;
	struct ht_status st;
	struct ht_profile *p;
	int i;

	must(simple(t, HT_MSG_START, MiB), "START 1 MiB");
	cmd(t, "alloc 128 4096"); /* half a mean period */
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	must(simple(t, HT_MSG_START, MiB), "START 1 MiB again");
	for (i = 0; i < 20000; i++) {
		cmd(t, "other 1 4096");
		if (status(t, &st) != 0)
			bail("STATUS failed");
		if (st.samples > 0)
			break;
	}
	diag("2: first sample after %d blocks of the new session", i + 1);
	p = report(t);
	if (p == NULL)
		bail("no report");
	ht_sample_weigh(4096, MiB, &w);
	ok(p->meta.samples == 1 && p->nsites == 1 && p->sites[0].samples == 1,
	    "2: one sample, at one site (%llu samples, %zu sites)",
	    (unsigned long long)p->meta.samples, p->nsites);
	ok(p->nsites == 1 &&
		p->sites[0].alloc_bytes == (uint64_t)(w.bytes + 0.5) &&
		p->sites[0].alloc_objects == (uint64_t)(w.objects + 0.5),
	    "2: it stands for one 4 KiB block at 1 MiB: %llu bytes, %llu "
	    "objects (want %.0f, %.0f)",
	    p->nsites ? (unsigned long long)p->sites[0].alloc_bytes : 0ull,
	    p->nsites ? (unsigned long long)p->sites[0].alloc_objects : 0ull,
	    w.bytes, w.objects);
	ok(p->nsites == 1 &&
		p->sites[0].inuse_bytes == p->sites[0].alloc_bytes &&
		p->meta.live_samples == 1,
	    "2: and it is the block in use, of the new session");
	ht_profile_free(p);
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	cmd(t, "free");
}

/* 3. After a rate-1 session, a 1 TiB one takes nothing. */
static void
test_huge_after_exact(struct target *t)
{
	struct ht_profile *p;
	uint64_t bytes, k;

	must(simple(t, HT_MSG_START, 1), "START 1");
	cmd(t, "alloc 100 4096");
	p = report(t);
	totals(p, &bytes, &k);
	ok(p != NULL && k >= 100 && bytes >= 100 * 4096,
	    "3: rate 1 records every block (%llu samples)",
	    (unsigned long long)k);
	ht_profile_free(p);
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	must(simple(t, HT_MSG_START, 1ull << 40), "START 1 TiB");
	cmd(t, "other 1000 4096");
	p = report(t);
	ok(p != NULL && p->meta.samples == 0 && p->nsites == 0 &&
		p->meta.rate == 1ull << 40,
	    "3: the 1 TiB session takes no sample of 4 MiB (%llu)",
	    p != NULL ? (unsigned long long)p->meta.samples : 0ull);
	ht_profile_free(p);
	must(simple(t, HT_MSG_STOP, 0), "STOP");
	cmd(t, "free");
}

/* The agent refuses a dump prefix it cannot use, before anything changes:
 * a relative one (the CLI makes prefixes absolute; another client may
 * not), one in a directory that does not exist, or one another user could
 * redirect (a symbolic link on the way, a directory anyone may write in
 * that is not sticky: the CLI says so first, another client may not).  A
 * sticky one passes, and meets the running session. */
static void
test_bad_prefix(struct target *t)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct ht_status st, st2;
	struct ht_request q;
	size_t i;
	static const char *const subs[] = { "real", "ww", "sticky" };
	static const mode_t modes[] = { 0700, 0777, 01777 };

	must(simple(t, HT_MSG_START, 4096), "START 4096");
	if (status(t, &st) != 0)
		bail("STATUS failed");
	memset(&q, 0, sizeof(q));
	q.type = HT_MSG_START;
	q.rate = 1;
	snprintf(q.dump_prefix, sizeof(q.dump_prefix), "relative/app");
	is_int(HT_ERR_DUMP_PREFIX, agent_ask(target_pid(t), &q),
	    "a relative dump prefix: ERR DUMP_PREFIX");
	snprintf(q.dump_prefix, sizeof(q.dump_prefix),
	    "/nonexistent-heaptool-dir/app");
	is_int(HT_ERR_DUMP_PREFIX, agent_ask(target_pid(t), &q),
	    "a prefix in a missing directory: ERR DUMP_PREFIX");

	test_tmpdir("sessions-t", dir);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
		if (mkdir(path, 0700) != 0 || chmod(path, modes[i]) != 0)
			bail("%s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink("real", path) != 0)
		bail("%s: %s", path, strerror(errno));
	snprintf(q.dump_prefix, sizeof(q.dump_prefix), "%.900s/link/app", dir);
	is_int(HT_ERR_DUMP_PREFIX, agent_ask(target_pid(t), &q),
	    "a prefix through a symbolic link: ERR DUMP_PREFIX");
	snprintf(q.dump_prefix, sizeof(q.dump_prefix), "%.900s/ww/app", dir);
	is_int(HT_ERR_DUMP_PREFIX, agent_ask(target_pid(t), &q),
	    "a prefix in a directory anyone may write in: ERR DUMP_PREFIX");
	snprintf(q.dump_prefix, sizeof(q.dump_prefix), "%.900s/sticky/app",
	    dir);
	is_int(HT_ERR_RUNNING, agent_ask(target_pid(t), &q),
	    "a prefix in a sticky one passes: ERR RUNNING");
	unlink(path);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
		rmdir(path);
	}
	rmdir(dir);
	ok(status(t, &st2) == 0 && st2.epoch == st.epoch && st2.rate == 4096 &&
		st2.state == HT_STATE_RUNNING,
	    "the refused starts left the session running as it was");
	must(simple(t, HT_MSG_STOP, 0), "STOP");
}

/* A report's figures agree with each other.  NULL, or what is wrong. */
static const char *
inconsistent(const struct ht_profile *p)
{
	uint64_t samples = 0, live = 0, tsamples = 0;
	size_t i;

	for (i = 0; i < p->nsites; i++) {
		const struct ht_profile_site *s = &p->sites[i];

		samples += s->samples;
		live += s->live_samples;
		if (s->live_samples > s->samples)
			return "a site has more live samples than samples";
		if (s->live_samples == 0 &&
		    (s->inuse_bytes != 0 || s->inuse_objects != 0))
			return "a site has bytes in use but no live sample";
		if (s->live_samples > 0 && s->inuse_bytes == 0)
			return "a site has live samples but no bytes in use";
		if (s->inuse_bytes > s->alloc_bytes + 1 ||
		    s->inuse_objects > s->alloc_objects + 1)
			return "a site has more in use than allocated";
		if (!(s->inuse_var >= 0) || !(s->alloc_var >= 0))
			return "a variance is negative or NaN";
		if (s->nframes == 0 || s->folded != 0)
			return "a site without a stack";
	}
	for (i = 0; i < p->nthreads; i++)
		tsamples += p->threads[i].samples;
	if (samples != p->meta.samples)
		return "the session's samples are not the sum of its sites'";
	if (live != p->meta.live_samples)
		return "the live samples are not the sum of the sites'";
	if (tsamples != p->meta.samples)
		return "the session's samples are not the sum of its threads'";
	return NULL;
}

/* 4. Many short sessions while 8 threads allocate. */
static void
test_cycles(struct target *t)
{
	static const uint64_t rates[] = { 1, 4096, 65536, MiB };
	struct ht_status st;
	struct ht_profile *p;
	const char *why = NULL;
	uint64_t epoch0, o1 = 0, o100 = 0, olast = 0;
	uint64_t sampled = 0;
	int i, bad = 0;

	if (status(t, &st) != 0)
		bail("STATUS failed");
	epoch0 = st.epoch;
	cmd(t, "threads 8");
	for (i = 0; i < CYCLES; i++) {
		if (simple(t, HT_MSG_START, rates[i % 4]) != 0) {
			diag("4: cycle %d: START refused", i);
			bad++;
			break;
		}
		if (status(t, &st) != 0 || st.state != HT_STATE_RUNNING ||
		    st.epoch != epoch0 + (uint64_t)i + 1) {
			diag("4: cycle %d: STATUS wrong", i);
			bad++;
			break;
		}
		if (i == 0)
			o1 = st.overhead_bytes;
		else if (i == 99)
			o100 = st.overhead_bytes;
		olast = st.overhead_bytes;
		if (simple(t, HT_MSG_STOP, 0) != 0) {
			diag("4: cycle %d: STOP refused", i);
			bad++;
			break;
		}
		if ((p = report(t)) == NULL) {
			diag("4: cycle %d: no report", i);
			bad++;
			break;
		}
		if (p->meta.epoch != epoch0 + (uint64_t)i + 1 ||
		    p->meta.state != HT_STATE_STOPPED)
			why = "the report is not of the session just stopped";
		else
			why = inconsistent(p);
		sampled += p->meta.samples;
		ht_profile_free(p);
		if (why != NULL) {
			diag("4: cycle %d (rate %llu): %s", i,
			    (unsigned long long)rates[i % 4], why);
			bad++;
			break;
		}
	}
	ok(bad == 0, "4: %d start/stop cycles, every report consistent", i);
	ok(sampled > 0, "4: the sessions sampled the threads (%llu samples)",
	    (unsigned long long)sampled);
	/* What it grew by from the first cycle to the 100th (none where it
	 * shrank: a table given back), it may grow once more, no further. */
	ok(o1 > 0 && olast <= o100 + (o100 > o1 ? o100 - o1 : 0),
	    "4: the agent's memory stops growing: %llu bytes after one "
	    "cycle, %llu after 100, %llu after %d",
	    (unsigned long long)o1, (unsigned long long)o100,
	    (unsigned long long)olast, CYCLES);
	cmd(t, "join");
	ok(status(t, &st) == 0 && st.hooked == 1,
	    "4: the agent answers after the cycles");
}

int
main(void)
{
	struct target *t;
	int st, quiet;

	agent = test_build_need("libheaptool-agent.so");
	fixture = test_build_need("t/target/dump-target");
	signal(SIGPIPE, SIG_IGN);
	test_timeout(600);
	plan(0);
	t = start_fixture();
	test_rate_change(t);
	test_first_sample(t);
	test_huge_after_exact(t);
	test_bad_prefix(t);
	test_cycles(t);
	st = target_send(t, "quit\n") == 0 ? target_wait(t, &quiet) : -1;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && quiet,
	    "the fixture exits 0 with nothing on stderr");
	return 0;
}
