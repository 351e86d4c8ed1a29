/*
 * Runs of heaptool-replay (replayer.h).
 *
 * The agent's environment is heaptool run's (cli/cmd-run.c describes the
 * contract): LD_PRELOAD with the agent first, HEAPTOOL_PID the child's own
 * pid, HEAPTOOL_RATE, HEAPTOOL_OUTPUT (a profile in our directory, thrown
 * away), and none of the options' variables (no live serving, no dumps,
 * the default backend).  A run's stdout and stderr go to files of our
 * directory, read when it ends.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "replayer.h"
#include "size.h"
#include "staging.h"

#define REPLAY_NAME "heaptool-replay"

static int
parse_rate(const char *cmd, const char *s, uint64_t *rate)
{
	if (ht_size_parse(s, rate) != 0 || *rate == 0) {
		ht_usage("%s: agent:%s: not a rate; give a size of at least 1 "
			 "(e.g. agent:512K)",
		    cmd, s);
		return -1;
	}
	return 0;
}

static void
label(struct ht_setup *su)
{
	char r[64];

	if (su->rate)
		snprintf(r, sizeof(r), "agent:%" PRIu64, su->rate);
	if (su->lib[0] && su->rate)
		snprintf(su->label, sizeof(su->label), "allocator:%s,%s",
		    su->lib, r);
	else if (su->lib[0])
		snprintf(su->label, sizeof(su->label), "allocator:%s", su->lib);
	else if (su->rate)
		snprintf(su->label, sizeof(su->label), "%s", r);
	else
		snprintf(su->label, sizeof(su->label), "plain");
}

int
ht_setup_make(const char *cmd, const char *lib, uint64_t rate,
    struct ht_setup *su)
{
	memset(su, 0, sizeof(*su));
	su->rate = rate;
	if (lib != NULL) {
		if (strpbrk(lib, ": ") != NULL) {
			ht_usage("%s: allocator %s: the path has ':' or ' ', "
				 "which LD_PRELOAD splits on; copy it to a "
				 "plain path",
			    cmd, lib);
			return -1;
		}
		if (realpath(lib, su->lib) == NULL) {
			ht_usage("%s: allocator %s: %s; give the path of a "
				 "shared library",
			    cmd, lib, strerror(errno));
			return -1;
		}
	}
	label(su);
	return 0;
}

int
ht_setup_parse(const char *cmd, const char *s, struct ht_setup *su)
{
	char buf[4200], *comma;
	const char *lib = NULL;
	uint64_t rate = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", s) >= sizeof(buf)) {
		ht_usage("%s: setup too long", cmd);
		return -1;
	}
	if (strcmp(buf, "plain") == 0)
		return ht_setup_make(cmd, NULL, 0, su);
	if (strncmp(buf, "agent:", 6) == 0) {
		if (parse_rate(cmd, buf + 6, &rate) != 0)
			return -1;
		return ht_setup_make(cmd, NULL, rate, su);
	}
	if (strncmp(buf, "allocator:", 10) == 0) {
		lib = buf + 10;
		if ((comma = strstr(buf, ",agent:")) != NULL) {
			*comma = '\0';
			if (parse_rate(cmd, comma + 7, &rate) != 0)
				return -1;
		}
		return ht_setup_make(cmd, lib, rate, su);
	}
	ht_usage("%s: %s: not a setup; give plain, agent:RATE, "
		 "allocator:LIB.so or allocator:LIB.so,agent:RATE",
	    cmd, s);
	return -1;
}

static int
exists(const char *path)
{
	return access(path, X_OK) == 0;
}

static int
find_replayer(char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	const char *env = getenv("HEAPTOOL_REPLAY");
	ssize_t n;

	if (env != NULL && env[0] != '\0') {
		if (realpath(env, buf) == NULL || !exists(buf)) {
			ht_warn("HEAPTOOL_REPLAY=%s: not an executable file; "
				"set it to the path of " REPLAY_NAME
				" or unset it",
			    env);
			return -1;
		}
		return 0;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/" REPLAY_NAME,
				self) < len &&
			    exists(buf))
				return 0;
		}
	}
	if ((size_t)snprintf(buf, len, "%s/" REPLAY_NAME, HT_REPLAYDIR) < len &&
	    exists(buf))
		return 0;
	ht_warn("replay: " REPLAY_NAME " not found next to heaptool nor in "
		"%s; run make install, or set HEAPTOOL_REPLAY to its path",
	    HT_REPLAYDIR);
	return -1;
}

static const int stop_sigs[3] = { SIGINT, SIGTERM, SIGHUP };
static volatile sig_atomic_t stop_sig;
static volatile pid_t running; /* the replayer now, or 0 */

static void
on_stop(int sig)
{
	pid_t pid = running;

	stop_sig = sig;
	if (pid > 0)
		(void)kill(pid, SIGTERM);
}

int
ht_replayer_stopped(void)
{
	return stop_sig;
}

int
ht_replayer_init(struct ht_replayer *r, int agent)
{
	const char *tmp = getenv("TMPDIR");
	struct sigaction sa;
	int i;

	memset(r, 0, sizeof(*r));
	if (find_replayer(r->exe, sizeof(r->exe)) != 0)
		return -1;
	if (agent && ht_staging_find(r->agent, sizeof(r->agent)) != 0)
		return -1;
	if (agent && strpbrk(r->agent, ": ") != NULL) {
		ht_warn("agent %s: path contains ':' or ' ', which LD_PRELOAD "
			"splits on; set HEAPTOOL_AGENT to a plain path",
		    r->agent);
		return -1;
	}
	snprintf(r->tmp, sizeof(r->tmp), "%s/heaptool-replay.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(r->tmp) == NULL) {
		ht_warn("replay: %s: %s; set TMPDIR to a writable directory",
		    r->tmp, strerror(errno));
		r->tmp[0] = '\0';
		return -1;
	}
	/* No SA_RESTART: the wait for the replayer sees the signal. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	stop_sig = 0;
	for (i = 0; i < 3; i++)
		(void)sigaction(stop_sigs[i], &sa, &r->old[i]);
	return 0;
}

static const char *const run_files[] = { "out", "err", "agent.heap",
	"callgrind.out", NULL };

static void
path_of(const struct ht_replayer *r, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", r->tmp, name);
}

static void
clean(const struct ht_replayer *r)
{
	char p[4200];
	int i;

	for (i = 0; run_files[i] != NULL; i++) {
		path_of(r, run_files[i], p, sizeof(p));
		unlink(p);
	}
}

void
ht_replayer_done(struct ht_replayer *r)
{
	int i;

	if (r->tmp[0] == '\0')
		return;
	clean(r);
	rmdir(r->tmp);
	r->tmp[0] = '\0';
	for (i = 0; i < 3; i++)
		(void)sigaction(stop_sigs[i], &r->old[i], NULL);
}

/* In the child: the setup's environment, stdout and stderr to our files,
 * and the exec.  Never returns. */
static void
child(const struct ht_replayer *r, const char *trace, const struct ht_setup *su,
    int latency, int callgrind)
{
	static const char *const unset[] = { "HEAPTOOL_LIVE",
		"HEAPTOOL_FOLLOW_FORKS", "HEAPTOOL_DUMP_PREFIX",
		"HEAPTOOL_DUMP_INTERVAL_MS", "HEAPTOOL_DUMP_EVERY",
		"HEAPTOOL_DUMP_AT_RSS", "HEAPTOOL_THRESHOLD",
		"HEAPTOOL_MAX_SAMPLES", "HEAPTOOL_INLINE_FD",
		"HEAPTOOL_BACKEND", "HEAPTOOL_STATUS_FD",
		"HEAPTOOL_STATUS_COOKIE", NULL };
	char p[4200], preload[12400], num[32], cgout[4300];
	const char *argv[12], *old = getenv("LD_PRELOAD");
	int fd, i, n = 0;

	path_of(r, "out", p, sizeof(p));
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
	    dup2(fd, 1) < 0)
		_exit(127);
	path_of(r, "err", p, sizeof(p));
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
	    dup2(fd, 2) < 0)
		_exit(127);
	for (i = 0; unset[i] != NULL; i++)
		unsetenv(unset[i]);
	if (su->rate || su->lib[0]) {
		snprintf(preload, sizeof(preload), "%s%s%s%s%s",
		    su->rate ? r->agent : "", su->rate && su->lib[0] ? ":" : "",
		    su->lib, old != NULL && old[0] ? ":" : "",
		    old != NULL ? old : "");
		setenv("LD_PRELOAD", preload, 1);
	}
	if (su->rate) {
		snprintf(num, sizeof(num), "%ld", (long)getpid());
		setenv("HEAPTOOL_PID", num, 1);
		snprintf(num, sizeof(num), "%" PRIu64, su->rate);
		setenv("HEAPTOOL_RATE", num, 1);
		path_of(r, "agent.heap", p, sizeof(p));
		setenv("HEAPTOOL_OUTPUT", p, 1);
	} else {
		unsetenv("HEAPTOOL_PID");
	}
	if (callgrind) {
		path_of(r, "callgrind.out", p, sizeof(p));
		snprintf(cgout, sizeof(cgout), "--callgrind-out-file=%s", p);
		argv[n++] = "valgrind";
		argv[n++] = "--tool=callgrind";
		argv[n++] = "-q";
		argv[n++] = cgout;
		argv[n++] = "--collect-atstart=no";
		argv[n++] = "--toggle-collect=rp_thread_main";
	}
	argv[n++] = r->exe;
	if (latency)
		argv[n++] = "-l";
	argv[n++] = trace;
	argv[n] = NULL;
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "heaptool-replay: exec %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/* The file's first line, for a message. */
static void
first_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");

	buf[0] = '\0';
	if (fp == NULL)
		return;
	if (fgets(buf, (int)len, fp) != NULL)
		buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

static int
parse_out(const char *path, struct ht_replay_run *o)
{
	char line[512], op[32];
	unsigned long long a, b, c;
	int version = 0, k;
	FILE *fp = fopen(path, "r");

	if (fp == NULL)
		return -1;
	memset(o->count, 0, sizeof(o->count));
	memset(o->bytes, 0, sizeof(o->bytes));
	while (fgets(line, sizeof(line), fp) != NULL) {
		long long v;

#define KEY(name, field)                                                       \
	if (sscanf(line, name " %llu", &a) == 1) {                             \
		o->field = a;                                                  \
		continue;                                                      \
	}
		if (sscanf(line, "version %d", &version) == 1)
			continue;
		KEY("threads", threads)
		KEY("workers", workers)
		KEY("events", events)
		KEY("wall_ns", wall_ns)
		KEY("cpu_ns", cpu_ns)
		KEY("alloc_ns", alloc_ns)
		KEY("timer_ns", timer_ns)
		KEY("skipped_preexisting", skipped_preexisting)
		KEY("skipped_failed", skipped_failed)
		KEY("skipped_unmatched", skipped_unmatched)
		KEY("failed", failed)
		KEY("waits", waits)
		KEY("substituted", substituted)
		KEY("rss_base", rss_base)
		KEY("rss_peak", rss_peak)
#undef KEY
		if (sscanf(line, "rss_reset %d", &o->rss_reset) == 1)
			continue;
		if (sscanf(line, "peak_requested %lld", &v) == 1) {
			o->peak_requested = v;
			continue;
		}
		if (sscanf(line, "count %31s %llu %llu", op, &a, &b) == 3) {
			for (k = 1; k <= HT_TROP_MAX; k++)
				if (strcmp(op, ht_trace_op_name(k)) == 0) {
					o->count[k] = a;
					o->bytes[k] = b;
				}
			continue;
		}
		if (sscanf(line, "lat %31s %llu %llu %llu", op, &a, &b, &c) ==
			4 &&
		    a < HT_REPLAY_CLASSES && b < HT_REPLAY_BUCKETS) {
			for (k = 0; k <= HT_TROP_MAX; k++)
				if (strcmp(op, ht_trace_op_name(k)) == 0)
					o->lat[k][a][b] += c;
		}
	}
	fclose(fp);
	return version == 1 ? 0 : -1;
}

/* callgrind's total of instructions (Ir): its "totals:" line, else
 * "summary:". */
static int
parse_callgrind(const char *path, uint64_t *ir)
{
	char line[512];
	unsigned long long v;
	int found = 0;
	FILE *fp = fopen(path, "r");

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "totals: %llu", &v) == 1) {
			*ir = v;
			found = 1;
		} else if (!found && sscanf(line, "summary: %llu", &v) == 1) {
			*ir = v;
			found = 1;
		}
	}
	fclose(fp);
	return found ? 0 : -1;
}

int
ht_replayer_run(struct ht_replayer *r, const char *trace,
    const struct ht_setup *su, int latency, int callgrind,
    struct ht_replay_run *out)
{
	char p[4200], msg[512];
	int status;
	pid_t pid;

	clean(r);
	fflush(NULL);
	if (stop_sig != 0)
		return -1;
	if ((pid = fork()) < 0) {
		ht_warn("replay: fork: %s; the system is short of processes "
			"or memory",
		    strerror(errno));
		return -1;
	}
	if (pid == 0)
		child(r, trace, su, latency, callgrind);
	running = pid;
	if (stop_sig != 0) /* came before running was set */
		(void)kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			running = 0;
			ht_warn("replay: waitpid: %s", strerror(errno));
			return -1;
		}
	running = 0;
	if (stop_sig != 0)
		return -1; /* the caller says so */
	path_of(r, "err", p, sizeof(p));
	first_line(p, msg, sizeof(msg));
	if (WIFSIGNALED(status)) {
		ht_warn("replay %s (%s): the replayer died of signal %d%s%s; "
			"the allocator (or the trace) is at fault: try it "
			"plain",
		    trace, su->label, WTERMSIG(status), msg[0] ? ": " : "",
		    msg);
		return -1;
	}
	if (WEXITSTATUS(status) != 0) {
		ht_warn("replay %s (%s): %s; %s", trace, su->label,
		    msg[0] ? msg : "the replayer failed",
		    WEXITSTATUS(status) == 127 && callgrind ?
			"install valgrind (apt-get install valgrind)" :
			"check the trace with heaptool trace-stats");
		return -1;
	}
	/* ld.so only warns of a preload it could not load, and runs on
	 * without it: the run would have timed the wrong allocator. */
	if (strstr(msg, "cannot be preloaded") != NULL) {
		ht_warn("replay %s (%s): %s; give the path of a shared library "
			"that loads here",
		    trace, su->label, msg);
		return -1;
	}
	path_of(r, "out", p, sizeof(p));
	if (parse_out(p, out) != 0) {
		ht_warn("replay %s (%s): the replayer's output is not what "
			"this heaptool reads; reinstall heaptool",
		    trace, su->label);
		return -1;
	}
	/* The agent writes its profile as the process ends: none means it
	 * did not load, or gave up, and the run did not time it. */
	path_of(r, "agent.heap", p, sizeof(p));
	if (su->rate && access(p, F_OK) != 0) {
		ht_warn("replay %s (%s): the agent wrote no profile, so it was "
			"not running; check that heaptool run works here",
		    trace, su->label);
		return -1;
	}
	out->have_instructions = 0;
	if (callgrind) {
		path_of(r, "callgrind.out", p, sizeof(p));
		if (parse_callgrind(p, &out->instructions) != 0) {
			ht_warn("replay %s (%s): callgrind wrote no totals; "
				"check that valgrind works here",
			    trace, su->label);
			return -1;
		}
		out->have_instructions = 1;
	}
	return 0;
}
