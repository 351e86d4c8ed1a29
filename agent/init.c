/*
 * The agent's constructor and destructor: which mode this process is in,
 * and what the environment asks for.
 *
 * Launch mode (heaptool run) passes its settings in the environment:
 * HEAPTOOL_PID (the process to profile: the agent stays dormant in any
 * other, so children that exec are not profiled), HEAPTOOL_RATE (bytes),
 * HEAPTOOL_MAX_SAMPLES (the tables' bound, tables.h; unset: the default),
 * HEAPTOOL_OUTPUT (the profile path), and the session's dumps (dump.h):
 * HEAPTOOL_DUMP_PREFIX (absolute), HEAPTOOL_DUMP_INTERVAL_MS,
 * HEAPTOOL_DUMP_EVERY, HEAPTOOL_DUMP_AT_RSS and HEAPTOOL_THRESHOLD (bytes,
 * decimal), and HEAPTOOL_FOLLOW_FORKS=1 (children of fork start sessions
 * of their own: HT_AGENT_FOLLOW), HEAPTOOL_INLINE_FD and HEAPTOOL_INLINE_ID
 * (a socket on which heaptool run, and record, hook inline before main,
 * inline.h; the ID, "DEV:INO", tells it from a file that took its number
 * after an exec), HEAPTOOL_BACKEND
 * (got: the hooks; jemalloc: jemalloc's own sampling, refused where it
 * cannot run; unset: jemalloc where it samples by itself, else the hooks;
 * agent.h's ht_agent_launch).  HEAPTOOL_SEED (a fixed seed for the
 * sampler) is read in every mode.  The constructor sets up, starts the
 * session and patches (ht_agent_launch), then starts the control thread
 * (control.h) if a trigger needs it, HEAPTOOL_LIVE=1 asks for a live
 * report, or the session follows forks (each child serves its own).
 *
 * Attach mode (no HEAPTOOL_PID: loaded by heaptool attach, inside a dlopen
 * called by an injected thread, or linked into a program that uses the
 * in-process API) must not block the constructor: it only starts the
 * control thread, which sets up and patches the GOT slots with no session
 * (sampling begins at START) before it serves.  The API (api.c) may get
 * there first from a thread of the program: setup runs once, and patching
 * is idempotent.
 *
 * Recording launch mode (heaptool record -- CMD): HEAPTOOL_PID as above
 * and HEAPTOOL_RECORD_FD, the trace file's descriptor (opened by heaptool
 * record, inherited across the exec), instead of HEAPTOOL_OUTPUT; with
 * HEAPTOOL_RECORD_MAX (the size limit, bytes), HEAPTOOL_RECORD_BUFFER
 * (the events of each thread's buffer; for tests), HEAPTOOL_RECORD_STATUS_FD
 * (a pipe that hears how the recording ended), and HEAPTOOL_RECORD_ID and
 * HEAPTOOL_RECORD_STATUS_ID, the two files' "DEV:INO".  The constructor
 * puts the hooks in with no session, starts recording and starts the
 * agent's thread, which drains.
 *
 * Launch mode also tells heaptool run how the profile fared, on the status
 * page HEAPTOOL_STATUS_FD names (src/runstat.h): running once the session
 * started, then at exit written, failed (with errno and the process's ids:
 * a program that changed its user writes as that user) or no session.
 *
 * Nothing here may print, exit or abort: on any failure the agent stays
 * dormant or stops sampling, and the process runs on as if it were absent.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "agent.h"
#include "ctlthread.h"
#include "dump.h"
#include "final.h"
#include "hooks.h"
#include "inline.h"
#include "profile.h"
#include "record.h"
#include "runpage.h"
#include "sampler.h"
#include "snapshot.h"

#define DEFAULT_RATE (512 * 1024)

/* Launch mode's profile path; "" in attach mode. */
static char output[4096];

static int
parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* A number of the environment, 0 when unset; -1 if it does not parse. */
static int
env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);

	*out = 0;
	if (s == NULL || *s == '\0')
		return 0;
	return parse_u64(s, out);
}

/* Launch mode's dumps, from the environment (see the top of this file).
 * A setting that does not parse, or a prefix the process cannot use,
 * leaves the session without dumps: heaptool run checked them first. */
static void
env_dumps(struct ht_dump_cfg *cfg)
{
	const char *s = getenv("HEAPTOOL_DUMP_PREFIX");
	size_t len;

	memset(cfg, 0, sizeof(*cfg));
	if (s == NULL || (len = strlen(s)) == 0 || len > HT_DUMP_PREFIX_MAX ||
	    ht_dump_check_prefix(s) != 0)
		return;
	if (env_u64("HEAPTOOL_DUMP_INTERVAL_MS", &cfg->interval_ms) != 0 ||
	    env_u64("HEAPTOOL_DUMP_EVERY", &cfg->every_bytes) != 0 ||
	    env_u64("HEAPTOOL_DUMP_AT_RSS", &cfg->at_rss_bytes) != 0 ||
	    env_u64("HEAPTOOL_THRESHOLD", &cfg->threshold_bytes) != 0) {
		memset(cfg, 0, sizeof(*cfg));
		return;
	}
	memcpy(cfg->prefix, s, len + 1);
}

/* A descriptor number of the environment's name, or -1. */
static int
env_fd(const char *name)
{
	uint64_t fd;

	if (parse_u64(getenv(name), &fd) != 0 || fd > INT_MAX)
		return -1;
	return (int)fd;
}

/*
 * Is descriptor fd (-1: none) the file that the variable name describes as
 * "DEV:INO" (heaptool record's)?  A program may have closed it and taken
 * its number for a file of its own before it exec'd: that one is never
 * touched.
 */
static int
same_file(int fd, const char *name, struct stat *st)
{
	const char *s = getenv(name), *colon;
	uint64_t dev, ino;
	char num[32];
	size_t len;

	if (fd < 0 || s == NULL || (colon = strchr(s, ':')) == NULL ||
	    (len = (size_t)(colon - s)) == 0 || len >= sizeof(num))
		return 0;
	memcpy(num, s, len);
	num[len] = '\0';
	if (parse_u64(num, &dev) != 0 || parse_u64(colon + 1, &ino) != 0 ||
	    fstat(fd, st) != 0)
		return 0;
	return (uint64_t)st->st_dev == dev && (uint64_t)st->st_ino == ino;
}

/*
 * The socket of heaptool run's or record's inline doorbell, or -1.  Its
 * identity is checked as the trace's is: after an exec in place, the
 * number the variable names was closed by the image before (which served
 * it) and may hold one of the program's files now, never to be written.
 */
static int
inline_fd(void)
{
	struct stat st;
	int fd = env_fd("HEAPTOOL_INLINE_FD");

	if (!same_file(fd, "HEAPTOOL_INLINE_ID", &st) || !S_ISSOCK(st.st_mode))
		return -1;
	return fd;
}

/* A descendant of a recorded process that reached it by an exec the
 * fork handlers did not see (posix_spawn, vfork): the trace and the pipe
 * it inherited are the recording's, not its own.  Closed, so that it
 * neither holds heaptool record's pipe open nor takes the numbers. */
static void
forget_record(void)
{
	struct stat st;
	int fd;

	fd = env_fd("HEAPTOOL_RECORD_FD");
	if (same_file(fd, "HEAPTOOL_RECORD_ID", &st))
		close(fd);
	fd = env_fd("HEAPTOOL_RECORD_STATUS_FD");
	if (same_file(fd, "HEAPTOOL_RECORD_STATUS_ID", &st))
		close(fd);
}

/* Launch failed: close the doorbell, so that heaptool run or record waits no more. */
static void
drop_inline_fd(void)
{
	int fd = inline_fd();

	if (fd >= 0)
		close(fd);
}

/*
 * heaptool record -- CMD: record from the start.  The descriptors stay
 * open across an exec, and the variables in the environment, so that the
 * program CMD becomes by an exec in place (a wrapper: env, nice, a shell's
 * last command) is recorded in turn: its agent finds the trace holding
 * what the image before it wrote, cut short by the exec, and starts it
 * over, since an exec ends every block of the image before.  A descendant
 * (another pid) closes them instead (forget_record).
 */
static void
record_launch(void)
{
	struct ht_record_cfg cfg;
	struct stat st;
	uint64_t v;
	int fd;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = env_fd("HEAPTOOL_RECORD_FD");
	cfg.status_fd = env_fd("HEAPTOOL_RECORD_STATUS_FD");
	cfg.across_exec = 1;
	if (!same_file(cfg.status_fd, "HEAPTOOL_RECORD_STATUS_ID", &st) ||
	    !S_ISFIFO(st.st_mode))
		cfg.status_fd = -1;
	if (!same_file(cfg.fd, "HEAPTOOL_RECORD_ID", &st) ||
	    !S_ISREG(st.st_mode)) {
		ht_agent_disable();
		drop_inline_fd();
		return;
	}
	/* What an image before an exec wrote is emptied by the recorder
	 * (ht_record_start), as any trace it takes. */
	if (env_u64("HEAPTOOL_RECORD_MAX", &v) == 0)
		cfg.max_bytes = v;
	if (env_u64("HEAPTOOL_RECORD_BUFFER", &v) == 0 && v >= 1 &&
	    v <= HT_PROTO_MAX_REC_BUFFER)
		cfg.buffer = (uint32_t)v;
	/* heaptool record, whose child this is: gone, the recording ends. */
	cfg.owner = getppid();
	if (ht_agent_record(&cfg) != 0) {
		drop_inline_fd();
		return;
	}
	/* Hooked inline now, before main and before the agent's thread
	 * (inline.h); the recording is on already, so that the inline
	 * hooks record from their first call. */
	if ((fd = inline_fd()) >= 0)
		ht_inline_serve_fd(fd);
	/* The drain runs on the agent's thread. */
	(void)ht_ctlthread_start(0);
}

/* The launched process (launch or recording mode; 0: none): only it
 * writes at an _exit (exit_hook). */
static pid_t launched;

static void agent_fini(void);

/*
 * _exit and _Exit run no destructor, and a program may leave by them at
 * its end (dash does): the launched process writes its profile or trace
 * here, as agent_fini does.  Any other process passes straight on: a
 * fork's child (which calls _exit so as not to run its parent's exit
 * work) and a vfork's child above all, which shares its parent's memory.
 */
static void
exit_hook(enum ht_hook_index i, int status, uintptr_t caller)
{
	void (*fn)(int) = (void (*)(int))ht_hooks_orig(i, caller);

	if (launched != 0 && getpid() == launched)
		agent_fini();
	fn(status);
}

static void
hook_exit(int status)
{
	exit_hook(HT_H_EXIT, status, (uintptr_t)__builtin_return_address(0));
}

static void
hook_cexit(int status)
{
	exit_hook(HT_H_CEXIT, status, (uintptr_t)__builtin_return_address(0));
}

__attribute__((constructor)) static void
agent_init(void)
{
	static struct ht_dump_cfg cfg; /* large */
	uint64_t pid, rate = DEFAULT_RATE, seed, max_samples;
	const char *s;
	size_t len;
	int follow, fd, rc;
	uint32_t backend;

	ht_ctlthread_init();
	if (parse_u64(getenv("HEAPTOOL_SEED"), &seed) == 0)
		ht_sampler_seed = seed;
	/* Where a final profile would go (final.h), from XDG_STATE_HOME and
	 * HOME as the process has them now: in any mode, since a fork's
	 * child of a launched process may be attached later. */
	ht_final_setup();
	s = getenv("HEAPTOOL_PID");
	if (s == NULL) {
		ht_ctlthread_start(1);
		return;
	}
	/* Set but not ours: a descendant of a launched process. */
	if (parse_u64(s, &pid) != 0 || pid != (uint64_t)getpid()) {
		forget_record();
		ht_agent_disable();
		return;
	}
	launched = getpid();
	ht_hooks_set_exit((void *)hook_exit, (void *)hook_cexit);
	if (getenv("HEAPTOOL_RECORD_FD") != NULL) {
		record_launch();
		return;
	}
	if (parse_u64(getenv("HEAPTOOL_RATE"), &rate) != 0 || rate == 0)
		rate = DEFAULT_RATE;
	if (env_u64("HEAPTOOL_MAX_SAMPLES", &max_samples) != 0)
		max_samples = 0;
	s = getenv("HEAPTOOL_OUTPUT");
	if (s == NULL || (len = strlen(s)) == 0 || len >= sizeof(output)) {
		ht_agent_disable();
		drop_inline_fd();
		return;
	}
	memcpy(output, s, len + 1);
	env_dumps(&cfg);
	s = getenv("HEAPTOOL_FOLLOW_FORKS");
	follow = s != NULL && strcmp(s, "1") == 0;
	ht_runpage_open();
	/* The session begins with the process: the reports must not call
	 * the allocator's own overhead memory that predates it (a followed
	 * child's session begins at its fork: not it). */
	ht_snapshot_launched = getpid();

	s = getenv("HEAPTOOL_BACKEND");
	backend = s == NULL	       ? HT_BACKEND_NONE :
	    strcmp(s, "got") == 0      ? HT_BACKEND_GOT :
	    strcmp(s, "jemalloc") == 0 ? HT_BACKEND_JEMALLOC :
					 HT_BACKEND_NONE;
	rc = ht_agent_launch(rate, max_samples, &cfg,
	    (follow ? HT_AGENT_FOLLOW : 0) | HT_AGENT_BACKEND(backend));
	if (rc == HT_AGENT_EBACKEND) {
		/* No profile at exit: the page keeps saying why. */
		output[0] = '\0';
		ht_runpage_why(ht_agent_backend_why(backend));
		ht_runpage_set(HT_RUNSTAT_NOBACKEND, 0);
		drop_inline_fd();
		return;
	}
	if (rc != 0) {
		ht_runpage_set(HT_RUNSTAT_NOSTART, errno);
		drop_inline_fd();
		return;
	}
	ht_runpage_set(HT_RUNSTAT_RUNNING, 0);
	/* heaptool run hooks inline now, before main (inline.h). */
	if ((fd = inline_fd()) >= 0)
		ht_inline_serve_fd(fd);
	/*
	 * A second thread costs a launched program more than it seems: once a
	 * process has one, glibc takes its arena lock on every allocation the
	 * thread cache does not serve (all blocks above 1 KiB), 2.5x the time
	 * of a 128 KiB malloc/free pair here.  So the agent's thread starts
	 * only for the triggers that need it; failure and exit dumps do not.
	 * A session that follows forks needs it: its children serve their
	 * own sockets, and the parent lists them.
	 */
	s = getenv("HEAPTOOL_LIVE");
	if (ht_dump_needs_thread(&cfg) || follow ||
	    (s != NULL && strcmp(s, "1") == 0))
		ht_ctlthread_start(0);
}

__attribute__((destructor)) static void
agent_fini(void)
{
	static int done;
	int r;

	/* Once: an _exit called from a destructor comes here again. */
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	r = ht_agent_exit(output);

	if (output[0] == '\0')
		return;
	ht_runpage_set(r > 0 ?
		HT_RUNSTAT_WRITTEN :
		(r < 0 ? HT_RUNSTAT_FAILED : HT_RUNSTAT_NOSESSION),
	    r < 0 ? errno : 0);
}
