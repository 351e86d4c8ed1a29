/*
 * heaptool record: every allocation and free of a process, into a trace
 * file (src/trace.h, heaptool-format(5)).
 *
 * The file is this command's: created here with the user's permissions
 * (mode 0600, never through a symbolic link, never over what is not a
 * regular file) and handed to the agent open, which only writes into it.
 * A running process (-p PID, or the current target; attached first, and
 * detached at the end, if its agent is absent or idle) gets the descriptor with its RECORD request (SCM_RIGHTS);
 * a command (-- CMD) inherits it across its exec, with the agent
 * preloaded as heaptool run does (agent/init.c reads HEAPTOOL_RECORD_FD,
 * HEAPTOOL_RECORD_MAX and HEAPTOOL_RECORD_STATUS_FD, a pipe on which it
 * says how the recording ended, and the two files' identities).  Both
 * stay open across CMD's own exec in place, so that a wrapper (env, nice,
 * a shell's last command) has the program it becomes recorded: the trace
 * is that program's, started over by its agent.  A CMD whose executable
 * defines allocator functions of its own has them hooked inline before
 * main, as heaptool run does (HEAPTOOL_INLINE_FD); a program exec'd in
 * its place has the GOT hooks alone.
 *
 * The recording ends at --duration, at SIGINT or SIGTERM (asked of the
 * agent with RECSTAT STOP, whose reply comes once END is written), at
 * --max-size (the agent stops by itself, the trace complete), or when
 * the process exits.  The trace's chunk heads are then walked and its
 * CRC checked (never the whole trace in memory), and one line says what
 * it holds.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "crc32.h"
#include "ctl.h"
#include "files.h"
#include "inline.h"
#include "monotime.h"
#include "proto.h"
#include "size.h"
#include "staging.h"
#include "target.h"
#include "trace.h"

static const char record_usage[] =
    "usage: heaptool record [-p PID] -o TRACE [--duration DUR]\n"
    "                       [--max-size SIZE]\n"
    "       heaptool record -o TRACE [--duration DUR] [--max-size SIZE]\n"
    "                       -- CMD [ARG...]\n"
    "\n"
    "Record every allocation and free of a process into TRACE: of the\n"
    "running process PID (default: the current target; attached first\n"
    "if its agent is not hooked, and detached again at the end), or of\n"
    "CMD from its start.  Ends at --duration, at Ctrl-C, at --max-size,\n"
    "or when the process exits (by attach, also when this heaptool is\n"
    "killed); then one line says what the trace holds.  See\n"
    "heaptool-format(5) for the file.\n"
    "\n"
    "  -p, --pid PID        the process (default: the current target)\n"
    "  -o, --output TRACE   the trace file to create (mode 0600)\n"
    "  -d, --duration DUR   stop after DUR (500ms, 10s, 5m)\n"
    "  -s, --max-size SIZE  stop before the trace grows past SIZE\n"
    "                       (at least 1MiB); the trace stays complete\n"
    "  -h, --help           show this help\n"
    "\n"
    "With -- CMD, the exit status is CMD's (128+N if a signal N killed\n"
    "it); a CMD that execs another program in its place (env, nice,\n"
    "a shell's exec) has that program recorded from its start.  An\n"
    "executable that defines allocator functions of its own has them\n"
    "hooked inline before main, as heaptool run does, so that its\n"
    "internal calls are recorded too (record warns if it cannot); a\n"
    "program exec'd in its place has the GOT hooks only.  See man\n"
    "heaptool for the details.\n";

static const struct option record_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "max-size", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MIN_SIZE (1024 * 1024)
#define POLL_MS	 50

/* SIGINT or SIGTERM came: the number of the last. */
static volatile sig_atomic_t stop_sig;

static void
on_stop(int sig)
{
	stop_sig = sig;
}

struct rec {
	const char *out;
	uint64_t duration_ms; /* 0: none */
	uint64_t max_bytes;   /* 0: none */
	uint32_t state;	      /* how it ended (enum ht_record_state) */
	FILE *line;	      /* where the line goes: stderr beside CMD */
};

/* The trace file: a regular file reached without a symbolic link,
 * created if there is none (*created set), never emptied here: the agent
 * empties it once it takes the recording, so that a request refused (a
 * recording running, perhaps into this very file) leaves it as it was.
 * O_NONBLOCK, so a FIFO cannot hold the open up.  Returns the descriptor
 * or -1 after printing why. */
static int
open_trace(const char *path, int *created)
{
	const char *what;
	struct stat st;
	int fd;

	*created = 0;
	if ((what = ht_not_regular(path)) != NULL) {
		ht_warn("record: -o %s: %s; give a regular file's path", path,
		    what);
		return -1;
	}
	fd = open(path,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
		O_NOCTTY,
	    0600);
	if (fd >= 0)
		*created = 1;
	else if (errno == EEXIST)
		fd = open(path,
		    O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ht_warn("record: -o %s: %s; choose a writable path", path,
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ht_warn("record: -o %s: not a regular file; give a regular "
			"file's path",
		    path);
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, 0) != 0) {
		ht_warn("record: -o %s: %s; choose a writable path", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static uint32_t
env_u32(const char *name)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/* What a walk of a trace's chunks found. */
struct scan {
	int complete;	  /* END is there and its CRC holds */
	char why[96];	  /* why not */
	uint64_t events;  /* in EVENTS chunks */
	uint64_t threads; /* THREAD chunks */
	struct ht_trace_end end;
};

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/*
 * Walk the trace on fd chunk by chunk, reading only their heads (a trace
 * may be far larger than memory), then check END's CRC over every byte
 * before it, a block at a time.  The reader (src/trace-read.c) checks
 * everything else; this is what the line needs.
 */
static void
scan(int fd, struct scan *sc)
{
	uint8_t h[HT_TRACE_CHUNK_HEAD + 56], *buf;
	uint64_t off = HT_TRACE_HEADER_SIZE, at;
	uint32_t type, len, crc = 0;
	ssize_t n;

	memset(sc, 0, sizeof(*sc));
	snprintf(sc->why, sizeof(sc->why), "no END chunk");
	if (pread(fd, h, HT_TRACE_HEADER_SIZE, 0) != HT_TRACE_HEADER_SIZE ||
	    memcmp(h, HT_TRACE_MAGIC, 8) != 0) {
		snprintf(sc->why, sizeof(sc->why), "not a heaptool trace");
		return;
	}
	for (;;) {
		if (pread(fd, h, HT_TRACE_CHUNK_HEAD + 8, (off_t)off) <
		    HT_TRACE_CHUNK_HEAD)
			return;
		type = le32(h);
		len = le32(h + 4);
		if (type == HT_TRC_EVENTS)
			sc->events += le32(h + 12);
		else if (type == HT_TRC_THREAD)
			sc->threads++;
		else if (type == HT_TRC_END)
			break;
		off += ht_tw_chunk_size(len);
	}
	if (len != 56 ||
	    pread(fd, h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h)) {
		snprintf(sc->why, sizeof(sc->why), "END cut short");
		return;
	}
	if ((buf = malloc(1 << 20)) == NULL) {
		snprintf(sc->why, sizeof(sc->why), "out of memory");
		return;
	}
	for (at = 0; at < off; at += (uint64_t)n) {
		n = pread(fd, buf,
		    off - at < (1u << 20) ? (size_t)(off - at) : 1u << 20,
		    (off_t)at);
		if (n <= 0)
			break;
		crc = ht_crc32(crc, buf, (size_t)n);
	}
	free(buf);
	if (at != off || crc != le32(h + 8 + 48)) {
		snprintf(sc->why, sizeof(sc->why), "its CRC does not match");
		return;
	}
	sc->end.events = le64(h + 8);
	sc->end.lost = le64(h + 16);
	sc->end.lost_why = le32(h + 24);
	sc->end.threads = le32(h + 28);
	sc->end.duration_ns = le64(h + 32);
	sc->end.agent_bytes = le64(h + 40);
	sc->end.waits = le64(h + 48);
	sc->complete = 1;
}

/* Read the trace back and say what it holds, on one line.  Returns the
 * exit status: 0 for a complete trace that lost nothing. */
static int
summarize(const struct rec *r)
{
	struct scan sc;
	struct stat st;
	char sz[32];
	int fd, rc = HT_EXIT_OK;

	if ((fd = open(r->out, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) != 0) {
		ht_warn("record: %s: %s; the trace cannot be read", r->out,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return HT_EXIT_FAIL;
	}
	scan(fd, &sc);
	close(fd);
	if (!sc.complete) {
		ht_warn("record: %s is incomplete (%s): %" PRIu64 " events "
			"of %" PRIu64 " threads; the process ended before its "
			"agent could finish it (it exec'd a program the agent "
			"cannot be preloaded into, or was killed by a "
			"signal)",
		    r->out, sc.why, sc.events, sc.threads);
		return HT_EXIT_FAIL;
	}
	ht_size_format(r->max_bytes, sz, sizeof(sz));
	fprintf(r->line,
	    "heaptool: %s: %" PRIu64 " events, %" PRIu32 " threads, %jd "
	    "bytes, %" PRIu64 " lost, %" PRIu64 " waits%s%s%s\n",
	    r->out, sc.end.events, sc.end.threads, (intmax_t)st.st_size,
	    sc.end.lost, sc.end.waits,
	    r->state == HT_RECORD_FULL ? " (stopped at --max-size " : "",
	    r->state == HT_RECORD_FULL ? sz : "",
	    r->state == HT_RECORD_FULL ? ")" : "");
	if (sc.end.lost != 0 || r->state == HT_RECORD_FAILED) {
		ht_warn("record: %" PRIu64 " events lost, the recording "
			"stopped: %s; free space where the trace goes, or "
			"record less (--duration)",
		    sc.end.lost,
		    sc.end.lost_why != 0 ? strerror((int)sc.end.lost_why) :
					   "the trace could not be finished");
		rc = HT_EXIT_FAIL;
	}
	if (fflush(r->line) != 0 || ferror(r->line))
		return HT_EXIT_FAIL;
	return rc;
}

static void
catch_stops(struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

/* Ask pid's agent to stop and wait for its END.  Returns 0, or -1 after
 * printing why. */
static int
ask_stop(pid_t pid, struct rec *r)
{
	struct ht_recstat st;
	struct ht_ctl *c;

	if ((c = ht_target_ctl(pid)) == NULL)
		return -1;
	/* The agent writes what its buffers hold first. */
	ht_ctl_set_timeout(c, 60000);
	if (ht_ctl_recstat(c, HT_RECSTAT_STOP, &st) != 0) {
		ht_warn("record: %s", ht_ctl_error(c));
		ht_ctl_free(c);
		return -1;
	}
	if (st.state != HT_RECORD_RUNNING && st.state != HT_RECORD_NONE)
		r->state = st.state;
	ht_ctl_free(c);
	return 0;
}

/* heaptool attach PID, or detach -p PID (what: "attach" or "detach"). */
static int
run_cmd(const char *what, pid_t pid)
{
	char num[32], name[16], p[] = "-p", *av[4];

	snprintf(num, sizeof(num), "%ld", (long)pid);
	snprintf(name, sizeof(name), "%s", what);
	av[0] = name;
	if (strcmp(what, "attach") == 0) {
		av[1] = num;
		av[2] = NULL;
		return ht_cmd_attach(2, av);
	}
	av[1] = p;
	av[2] = num;
	av[3] = NULL;
	return ht_cmd_detach(3, av);
}

/* -p PID: an agent there (attached first if none, or hooked again if it
 * was detached, and then detached at the end: the process is left as it
 * was found), recording. */
static int
record_pid(const char *popt, struct rec *r)
{
	struct sigaction old_int, old_term;
	struct ht_request req;
	struct ht_recstat st;
	struct ht_status hs;
	struct ht_ctl *c;
	uint64_t end;
	pid_t pid;
	int rc, fd, created, attached = 0;

	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_ctl_status(c, HT_MSG_HELLO, &hs) != 0) {
		if (ht_ctl_errcode(c) != HT_CTL_ENOAGENT) {
			rc = ht_target_failed(c, pid);
			ht_ctl_free(c);
			return rc;
		}
		/* No agent: load it as heaptool attach does. */
		if ((rc = run_cmd("attach", pid)) != HT_EXIT_OK) {
			ht_ctl_free(c);
			return rc;
		}
		attached = 1;
	}
again:
	if ((fd = open_trace(r->out, &created)) < 0) {
		ht_ctl_free(c);
		return HT_EXIT_FAIL;
	}
	memset(&req, 0, sizeof(req));
	req.type = HT_MSG_RECORD;
	req.rec_max_bytes = r->max_bytes;
	req.rec_buffer = env_u32("HEAPTOOL_RECORD_BUFFER");
	rc = ht_ctl_record(c, &req, fd);
	close(fd);
	if (rc != 0) {
		/* Refused: the file is as it was, or gone if made here. */
		if (created)
			(void)unlink(r->out);
		/* An agent left idle by a detach: hooked again, as heaptool
		 * attach does, and asked once more. */
		if (!attached && ht_ctl_errcode(c) == HT_CTL_EAGENT &&
		    ht_ctl_agent_err(c) == HT_ERR_DETACHED) {
			if ((rc = run_cmd("attach", pid)) != HT_EXIT_OK) {
				ht_ctl_free(c);
				return rc;
			}
			attached = 1;
			goto again;
		}
		rc = ht_target_failed(c, pid);
		ht_ctl_free(c);
		if (attached)
			(void)run_cmd("detach", pid);
		return rc;
	}
	catch_stops(&old_int, &old_term);
	end = r->duration_ms != 0 ? ht_mono_ms() + r->duration_ms : UINT64_MAX;
	r->state = HT_RECORD_RUNNING;
	for (;;) {
		if (stop_sig != 0 || ht_mono_ms() >= end) {
			if (ask_stop(pid, r) != 0)
				rc = HT_EXIT_FAIL;
			break;
		}
		if (ht_ctl_recstat(c, 0, &st) != 0) {
			/* Gone: its trace says how far it got. */
			if (ht_ctl_errcode(c) != HT_CTL_ENOPROC)
				ht_warn("record: %s", ht_ctl_error(c));
			break;
		}
		if (st.state != HT_RECORD_RUNNING) {
			r->state = st.state;
			break;
		}
		poll(NULL, 0, POLL_MS);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	ht_ctl_free(c);
	if (summarize(r) != HT_EXIT_OK)
		rc = HT_EXIT_FAIL;
	/* Hooked for the recording only: put back as it was (unless it is
	 * gone). */
	if (attached && kill(pid, 0) == 0 && run_cmd("detach", pid) != 0)
		rc = HT_EXIT_FAIL;
	return rc;
}

static int
setenv_num(const char *name, uint64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRIu64, v);
	return setenv(name, num, 1);
}

/* In the child: the agent's environment, then CMD; bell: the inline
 * hooks' doorbell (agent/inline.h), or -1.  Returns only on failure, with
 * errno set. */
static void
exec_child(char **cmd, const char *agent, int fd, int sfd, int bell,
    uint64_t max)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;

	if (old != NULL && old[0] != '\0') {
		if (asprintf(&preload, "%s:%s", agent, old) == -1)
			return;
	} else if ((preload = strdup(agent)) == NULL)
		return;
	if (fcntl(fd, F_SETFD, 0) != 0 || fcntl(sfd, F_SETFD, 0) != 0 ||
	    (bell >= 0 && fcntl(bell, F_SETFD, 0) != 0) ||
	    setenv("LD_PRELOAD", preload, 1) != 0 ||
	    setenv_num("HEAPTOOL_PID", (uint64_t)getpid()) != 0 ||
	    setenv_num("HEAPTOOL_RECORD_FD", (uint64_t)fd) != 0 ||
	    setenv_num("HEAPTOOL_RECORD_STATUS_FD", (uint64_t)sfd) != 0 ||
	    ht_cmd_setenv_fdid("HEAPTOOL_RECORD_ID", fd) != 0 ||
	    ht_cmd_setenv_fdid("HEAPTOOL_RECORD_STATUS_ID", sfd) != 0 ||
	    (max != 0 ? setenv_num("HEAPTOOL_RECORD_MAX", max) :
			unsetenv("HEAPTOOL_RECORD_MAX")) != 0 ||
	    (bell >= 0 ? setenv_num("HEAPTOOL_INLINE_FD", (uint64_t)bell) :
			 unsetenv("HEAPTOOL_INLINE_FD")) != 0 ||
	    (bell >= 0 ? ht_cmd_setenv_fdid("HEAPTOOL_INLINE_ID", bell) :
			 unsetenv("HEAPTOOL_INLINE_ID")) != 0 ||
	    unsetenv("HEAPTOOL_OUTPUT") != 0)
		return;
	execvp(cmd[0], cmd);
}

/* The exit status of a command that ended with status. */
static int
cmd_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return HT_EXIT_FAIL;
}

/* -- CMD: the command, recorded from its start. */
static int
record_cmd(char **cmd, struct rec *r)
{
	struct sigaction old_int, old_term;
	char agent[PATH_MAX], exe[PATH_MAX];
	int fd, sp[2], ep[2], bell[2] = { -1, -1 }, own, status, child_errno;
	int done = 0, said = 0, rc, created;
	struct pollfd pf;
	uint64_t end;
	uint8_t v;
	ssize_t n;
	pid_t pid;

	if (ht_staging_find(agent, sizeof(agent)) != 0)
		return HT_EXIT_FAIL;
	if (strpbrk(agent, ": ") != NULL) {
		ht_warn("agent %s: path contains ':' or ' ', which LD_PRELOAD "
			"cannot carry; install heaptool elsewhere",
		    agent);
		return HT_EXIT_FAIL;
	}
	/* An executable's calls of an allocator it defines itself go
	 * through no GOT slot: hooked inline, as heaptool run does, while
	 * its agent waits before main on a socket (bell[1] in the child). */
	own = ht_cmd_find(cmd[0], exe, sizeof(exe)) == 0 &&
	    ht_inline_file_has_allocator(exe) == 1;
	if ((fd = open_trace(r->out, &created)) < 0)
		return HT_EXIT_FAIL;
	if (pipe2(sp, O_CLOEXEC) != 0 || pipe2(ep, O_CLOEXEC) != 0 ||
	    (own &&
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bell) !=
		    0)) {
		ht_warn("record: pipe or socketpair: %s", strerror(errno));
		close(fd);
		return HT_EXIT_FAIL;
	}
	catch_stops(&old_int, &old_term);
	fflush(NULL);
	if ((pid = fork()) == -1) {
		ht_warn("record: fork: %s; the system is short of processes "
			"or memory",
		    strerror(errno));
		return HT_EXIT_FAIL;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		close(sp[0]);
		close(ep[0]);
		if (bell[0] >= 0)
			close(bell[0]);
		exec_child(cmd, agent, fd, sp[1], bell[1], r->max_bytes);
		child_errno = errno;
		n = write(ep[1], &child_errno, sizeof(child_errno));
		(void)n;
		_exit(child_errno == ENOENT ? 127 : 126);
	}
	close(fd);
	close(sp[1]);
	close(ep[1]);
	if (bell[1] >= 0)
		close(bell[1]);
	do
		n = read(ep[0], &child_errno, sizeof(child_errno));
	while (n == -1 && errno == EINTR);
	close(ep[0]);
	/* Exec'd: hook inline while its constructor waits (ptrace: we are
	 * its parent), then let it go on to main. */
	if (bell[0] >= 0 && n != 0)
		close(bell[0]);
	else if (bell[0] >= 0 && ht_cmd_inline_run(pid, bell[0], "record") <= 0)
		ht_warn("warning: %s defines allocator functions of its "
			"own, not hooked inline: its internal calls to them "
			"are not recorded (the calls of other modules are)",
		    exe);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		close(sp[0]);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		if (created)
			(void)unlink(r->out);
		ht_warn("%s: %s; check the command's name and PATH", cmd[0],
		    strerror(child_errno));
		return child_errno == ENOENT ? 127 : 126;
	}
	end = r->duration_ms != 0 ? ht_mono_ms() + r->duration_ms : UINT64_MAX;
	r->state = HT_RECORD_RUNNING;
	rc = HT_EXIT_OK;
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		pf.fd = sp[0];
		pf.events = POLLIN;
		if (!done && poll(&pf, 1, POLL_MS) > 0) {
			if (read(sp[0], &v, 1) == 1)
				r->state = v;
			done = 1; /* the byte, or EOF: the agent is done */
		} else if (done)
			poll(NULL, 0, POLL_MS);
		if (!done && (stop_sig != 0 || ht_mono_ms() >= end)) {
			if (ask_stop(pid, r) != 0)
				rc = HT_EXIT_FAIL;
			done = 1;
		}
		if (done && !said && r->state != HT_RECORD_RUNNING) {
			/* Ended before CMD: say so now, then wait. */
			if (summarize(r) != HT_EXIT_OK)
				rc = HT_EXIT_FAIL;
			said = 1;
			if (stop_sig == SIGTERM)
				kill(pid, SIGTERM);
		}
	}
	/* Without waiting: a descendant that no agent runs in (a static
	 * program it spawned) may still hold the pipe open. */
	(void)fcntl(sp[0], F_SETFL, O_NONBLOCK);
	if (!done && read(sp[0], &v, 1) == 1)
		r->state = v;
	close(sp[0]);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (!said && summarize(r) != HT_EXIT_OK)
		rc = HT_EXIT_FAIL;
	/* CMD's status, unless it succeeded and the trace did not. */
	if (cmd_status(status) == 0 && rc != HT_EXIT_OK)
		return rc;
	return cmd_status(status);
}

int
ht_cmd_record(int argc, char **argv)
{
	struct rec r;
	const char *popt = NULL;
	int c, rc;

	memset(&r, 0, sizeof(r));
	stop_sig = 0;
	ht_cmd_getopt_reset();
	while ((c = getopt_long(argc, argv, "+:p:o:d:s:h", record_options,
		    NULL)) != -1) {
		switch (c) {
		case 'p':
			popt = optarg;
			break;
		case 'o':
			if ((rc = ht_cmd_parse_out(optarg, "trace", &r.out)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'd':
			if (ht_duration_parse(optarg, &r.duration_ms) != 0 ||
			    r.duration_ms == 0)
				return ht_usage("record: --duration %s: not a "
						"duration; use e.g. 500ms, "
						"10s, 5m",
				    optarg);
			break;
		case 's':
			if (ht_size_parse(optarg, &r.max_bytes) != 0)
				return ht_usage("record: --max-size %s: not a "
						"size; use e.g. 64M, 1GiB",
				    optarg);
			if (r.max_bytes < MIN_SIZE)
				return ht_usage("record: --max-size %s: below "
						"1MiB, the least a trace "
						"needs; give a larger size",
				    optarg);
			break;
		case 'h':
			return ht_cmd_help(record_usage);
		default:
			return ht_cmd_opt_error("record", c, argv);
		}
	}
	if (r.out == NULL)
		return ht_usage("record: no trace file; usage: heaptool record "
				"[-p PID] -o TRACE [-- CMD [ARG...]]");
	if (strcmp(r.out, "-") == 0)
		return ht_usage("record: -o -: the trace goes to a file; give "
				"a file's path");
	if (optind < argc) {
		if (popt != NULL)
			return ht_usage("record: -p and a command: give one; "
					"see 'heaptool record --help'");
		/* CMD's output is on stdout: the line goes beside its
		 * messages, as heaptool run's summary does. */
		r.line = stderr;
		return record_cmd(argv + optind, &r);
	}
	r.line = stdout;
	return record_pid(popt, &r);
}
