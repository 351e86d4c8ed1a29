/*
 * The agent's control channel (agent/control.c), end to end without ptrace:
 * t/target/ctl-target is started with LD_PRELOAD=libheaptool-agent.so and no
 * HEAPTOOL_PID, which is attach mode (the constructor only starts the
 * agent's thread; that thread patches with no session and serves
 * "\0heaptool.PID").  The test speaks src/proto.h to it and decodes the
 * profiles with src/profile-read.c:
 *   - HELLO/STATUS before anything; REPORT with no session; STOP refused;
 *   - START rate 1: exact counts for the fixture's known site; START while
 *     running refused; START restart: new epoch, tables emptied;
 *   - STOP: the profile is frozen (two reports equal site by site);
 *   - DETACH: no slot patched, START refused as detached; HOOK: patched
 *     again and sampling again;
 *   - a library loaded behind the dlopen hook gets patched by the thread's
 *     watch of the loader's counters, and its site is sampled;
 *   - garbage, other versions, truncated, oversized and silent clients get
 *     an ERR or a closed connection and never stop the agent; several
 *     clients at once are all served; another uid is refused (as root);
 *   - no client holds up another: with 20 idle connections open (silent,
 *     or stalled inside a request) a HELLO is answered within 1 s (a
 *     server of one client at a time, 2 s each, would take 40 s), and the
 *     idle ones are closed at their deadline, not before; with more idle
 *     connections than the agent has room for, the oldest are dropped, and
 *     those of the process that holds the most go first; a reader that
 *     stops reading a report of megabytes holds up no one, still gets the
 *     whole profile, and only a few reports are sent at once (ERR BUSY);
 *   - the agent's thread is named "heaptool" and blocks every signal;
 *   - launch mode (HEAPTOOL_PID = the process) serves too, and a process
 *     whose HEAPTOOL_PID is another's has no agent thread;
 *   - the fixture prints the same lines as a run without the agent.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "basic.h"
#include "profile.h"
#include "proto.h"
#include "target.h"

#define KEEP_SIZE  4321
#define LATE_SIZE  5555
#define STR(x)	   #x
#define XSTR(x)	   STR(x)
#define TREE_SIZE  24
#define TREE_DEPTH 13 /* 8192 sites: a profile of megabytes */

#define IDLE		20 /* idle connections held while a client is served */
#define MANY		80 /* more than the agent has room for */
#define SERVE_MS	1000 /* the bound on serving a client meanwhile */
/* The agent closes a connection whose request is not whole 2 s after it
 * connected: look for that between these bounds. */
#define CLOSE_MIN_MS	1000
#define CLOSE_MAX_MS	6000
/* Reports the agent sends at once (agent/control.c's REPORTS). */
#define REPORTS_AT_ONCE 4

/* ctl-target, and what the test knows of it. */
struct fixture {
	struct target *proc;
	pid_t pid;
	uintptr_t keep_fn;     /* ctl_keep */
	char transcript[8192]; /* commands and answers */
};

static char *agent, *fixture, *heaptool;

/* mode: 0 plain, 1 attach (preload, no HEAPTOOL_PID), 2 launch
 * (HEAPTOOL_PID = itself, output to out), 3 dormant (HEAPTOOL_PID = 1),
 * 4 plain with CTL_AGENT set, for its "agent" command. */
static void
fixture_start(struct fixture *t, int mode, const char *out)
{
	char preload[PATH_MAX + 16], ctl_agent[PATH_MAX + 16];
	char output[PATH_MAX + 32];
	const char *env[12];
	void *fn;
	int n = 0;

	memset(t, 0, sizeof(*t));
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", agent);
	snprintf(ctl_agent, sizeof(ctl_agent), "CTL_AGENT=%s", agent);
	snprintf(output, sizeof(output), "HEAPTOOL_OUTPUT=%s",
	    out != NULL ? out : "");
	env[n++] = "HEAPTOOL_PID";
	env[n++] = "HEAPTOOL_OUTPUT";
	env[n++] = "HEAPTOOL_RATE";
	env[n++] = "LD_PRELOAD";
	if (mode == 4)
		env[n++] = ctl_agent;
	else if (mode != 0)
		env[n++] = preload;
	if (mode == 2) {
		env[n++] = "HEAPTOOL_PID=" TARGET_OWN_PID;
		env[n++] = output;
		env[n++] = "HEAPTOOL_RATE=1";
		/* heaptool run --live: launch mode serves only then. */
		env[n++] = "HEAPTOOL_LIVE=1";
	} else if (mode == 3)
		env[n++] = "HEAPTOOL_PID=1";
	env[n] = NULL;
	if ((t->proc = target_start(fixture, NULL, env)) == NULL)
		bail("ctl-target did not start (mode %d)", mode);
	t->pid = target_pid(t->proc);
	if (sscanf(target_ready(t->proc), "ready %p", &fn) != 1)
		bail("ctl-target: ready line \"%s\"", target_ready(t->proc));
	t->keep_fn = (uintptr_t)fn;
}

/* Send one command; return its answer line (without newline). */
static const char *
fixture_cmd(struct fixture *t, const char *cmd)
{
	static char line[256];
	size_t n;

	if (target_send(t->proc, "%s\n", cmd) != 0 ||
	    target_line(t->proc, line, sizeof(line)) == NULL)
		bail("ctl-target: no answer to \"%s\"", cmd);
	n = strlen(t->transcript);
	snprintf(t->transcript + n, sizeof(t->transcript) - n, "%s -> %s\n",
	    cmd, line);
	return line;
}

/* quit; returns its exit status; *err_empty if it wrote nothing to
 * stderr. */
static int
fixture_finish(struct fixture *t, int *err_empty)
{
	fixture_cmd(t, "quit");
	return target_wait(t->proc, err_empty);
}

/* The one site whose blocks are all of size bytes: its index, -1 if none,
 * -2 if several. */
static long
site_of_size(const struct ht_profile *p, uint64_t size)
{
	long found = -1;
	size_t i;

	for (i = 0; i < p->nsites; i++) {
		const struct ht_profile_site *s = &p->sites[i];

		if (s->alloc_objects > 0 &&
		    s->alloc_bytes == s->alloc_objects * size) {
			if (found >= 0)
				return -2;
			found = (long)i;
		}
	}
	return found;
}

/* The site of ctl_keep has exactly n blocks live and allocated. */
static int
keep_site_is(const struct ht_profile *p, const struct fixture *t, uint64_t n)
{
	long i = site_of_size(p, KEEP_SIZE);
	const struct ht_profile_site *s;

	if (n == 0)
		return i == -1;
	if (i < 0) {
		diag("no single site of %d-byte blocks (%ld)", KEEP_SIZE, i);
		return 0;
	}
	s = &p->sites[i];
	if (s->alloc_objects != n || s->inuse_objects != n ||
	    s->alloc_bytes != n * KEEP_SIZE ||
	    s->inuse_bytes != n * KEEP_SIZE || s->samples != n ||
	    s->live_samples != n) {
		diag("keep site: alloc %llu/%llu inuse %llu/%llu samples %llu",
		    (unsigned long long)s->alloc_bytes,
		    (unsigned long long)s->alloc_objects,
		    (unsigned long long)s->inuse_bytes,
		    (unsigned long long)s->inuse_objects,
		    (unsigned long long)s->samples);
		return 0;
	}
	if (s->nframes == 0 || s->frames[0] < t->keep_fn ||
	    s->frames[0] - t->keep_fn > 4096) {
		diag("keep site's first frame %#llx is not in ctl_keep %#llx",
		    s->nframes ? (unsigned long long)s->frames[0] : 0ull,
		    (unsigned long long)t->keep_fn);
		return 0;
	}
	return 1;
}

static int
same_sites(const struct ht_profile *a, const struct ht_profile *b)
{
	size_t i;

	if (a->nsites != b->nsites)
		return 0;
	for (i = 0; i < a->nsites; i++) {
		const struct ht_profile_site *x = &a->sites[i],
					     *y = &b->sites[i];

		if (x->inuse_bytes != y->inuse_bytes ||
		    x->inuse_objects != y->inuse_objects ||
		    x->alloc_bytes != y->alloc_bytes ||
		    x->alloc_objects != y->alloc_objects ||
		    x->samples != y->samples ||
		    x->live_samples != y->live_samples ||
		    x->peak_inuse_bytes != y->peak_inuse_bytes ||
		    x->nframes != y->nframes ||
		    memcmp(x->frames, y->frames,
			x->nframes * sizeof(x->frames[0])) != 0)
			return 0;
	}
	return 1;
}

/* Send raw bytes (then maybe shut the write side); read what comes back:
 * 1 if an ERR with code want arrives and then EOF, 0 if the connection is
 * closed without any reply (acceptable for garbage), -1 otherwise. */
static int
raw(pid_t pid, const void *buf, size_t len, int shut, uint32_t want)
{
	struct agent_reply r;
	uint32_t code;
	char msg[256];
	uint8_t b;
	int fd, rc = -1;

	if ((fd = agent_connect(pid, 1)) < 0)
		return -1;
	if (len > 0 && send(fd, buf, len, MSG_NOSIGNAL) < 0 && errno != EPIPE &&
	    errno != ECONNRESET) {
		close(fd);
		return -1;
	}
	if (shut)
		shutdown(fd, SHUT_WR);
	if (agent_read_reply(fd, &r) == 0) {
		if (r.h.type == HT_MSG_ERR &&
		    ht_proto_decode_err(r.payload, r.h.length, &code, msg,
			sizeof(msg)) == 0 &&
		    code == want)
			rc = 1;
		else
			diag("unexpected reply type %u", r.h.type);
		agent_reply_free(&r);
	} else {
		ssize_t n = recv(fd, &b, 1, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN))
			rc = 0;
	}
	close(fd);
	return rc;
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)(t.tv_sec - t0->tv_sec) * 1000 +
	    (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Connect to pid's agent and send len bytes of buf (none: a silent
 * client).  The connect and the send time out after send_ms (the connect
 * otherwise waits for as long as the agent's listen queue is full), each
 * receive after recv_ms.  Returns the socket, or -1.
 */
static int
client_open(pid_t pid, int send_ms, int recv_ms, const void *buf, size_t len)
{
	struct timeval st = { send_ms / 1000, (send_ms % 1000) * 1000 };
	struct timeval rt = { recv_ms / 1000, (recv_ms % 1000) * 1000 };
	struct sockaddr_un sa;
	size_t n;
	int fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		bail("socket: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = ht_proto_socket_name(sa.sun_path, (uint32_t)pid);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt)) != 0 ||
	    connect(fd, (struct sockaddr *)&sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) != 0 ||
	    (len > 0 && send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read a STATUS reply and the agent's close from fd: 0, or -1. */
static int
status_reply(int fd)
{
	struct agent_reply r;
	struct ht_status st;
	int rc = -1;

	if (agent_read_reply(fd, &r) != 0)
		return -1;
	if (r.h.type == HT_MSG_STATUS_REPLY && r.eof &&
	    ht_proto_decode_status(r.payload, r.h.length, &st) == 0)
		rc = 0;
	agent_reply_free(&r);
	return rc;
}

/* HELLO on a connection of its own, every wait at most 5 s: 0 if a STATUS
 * reply came, with *ms the time from before the connect to the agent's
 * close; -1 otherwise. */
static int
timed_hello(pid_t pid, long *ms)
{
	struct timespec t0;
	uint8_t h[HT_PROTO_HEADER];
	int fd, rc;

	ht_proto_put_header(h, HT_MSG_HELLO, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = client_open(pid, 5000, 5000, h, sizeof(h));
	rc = fd >= 0 ? status_reply(fd) : -1;
	*ms = ms_since(&t0);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Has the agent closed fd, or said something on it?  Does not wait. */
static int
stirred(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* The agent's last word on an idle fd: the code of an ERR followed by its
 * close, 0 for a close with nothing said, -1 for anything else (nothing
 * within fd's receive timeout, another reply). */
static long
last_word(int fd)
{
	struct agent_reply r;
	uint32_t code;
	char msg[256];
	uint8_t b;
	long rc = -1;

	if (agent_read_reply(fd, &r) == 0) {
		if (r.h.type == HT_MSG_ERR && r.eof &&
		    ht_proto_decode_err(r.payload, r.h.length, &code, msg,
			sizeof(msg)) == 0)
			rc = code;
		agent_reply_free(&r);
	} else if (recv(fd, &b, 1, MSG_DONTWAIT) == 0)
		rc = 0;
	return rc;
}

/*
 * Open n idle connections into fds: by turns silent, half a header, a
 * whole START header with part of its payload.  A connect may wait 1 s for
 * room in the agent's listen queue; the first that cannot get in ends the
 * run (the rest of fds is -1).  Returns how many opened.
 */
static int
idle_open(pid_t pid, int *fds, int n)
{
	uint8_t b[HT_PROTO_HEADER + 20];
	int i, opened = 0;

	ht_proto_put_header(b, HT_MSG_START, 46);
	memset(b + HT_PROTO_HEADER, 0, 20);
	for (i = 0; i < n; i++)
		fds[i] = -1;
	for (i = 0; i < n; i++) {
		size_t len = i % 3 == 0 ? 0 : i % 3 == 1 ? 8 : sizeof(b);

		if ((fds[i] = client_open(pid, 1000, CLOSE_MAX_MS, b, len)) < 0)
			break;
		opened++;
	}
	return opened;
}

static void
idle_close(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void
test_thread(pid_t pid)
{
	char path[PATH_MAX], buf[4096];
	DIR *d;
	struct dirent *e;
	FILE *f;
	int found = 0, blocked = 0, mine;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		bail("opendir %s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
		    (int)pid, e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		mine = 0;
		while (fgets(buf, sizeof(buf), f) != NULL) {
			unsigned long long m;

			if (strcmp(buf, "Name:\theaptool\n") == 0) {
				found++;
				mine = 1;
			}
			/* Every signal but SIGKILL, SIGSTOP and glibc's
			 * two internal ones (32, 33). */
			if (mine && sscanf(buf, "SigBlk:\t%llx", &m) == 1 &&
			    (m | 1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1) |
				1ull << 31 | 1ull << 32) == ~0ull)
				blocked = 1;
		}
		fclose(f);
	}
	closedir(d);
	is_int(1, found, "one agent thread named heaptool");
	ok(blocked, "the agent thread blocks every signal");
}

static void
test_clients(pid_t pid)
{
	static uint8_t junk[1 << 20];
	uint8_t b[64];
	struct agent_reply r;
	struct ht_status st;
	int a, c, rc, i, all;
	pid_t kids[4];

	memset(b, 0xa7, sizeof(b));
	is_int(1, raw(pid, b, 16, 0, HT_ERR_BAD_REQUEST),
	    "16 bytes of garbage: ERR BAD_REQUEST");
	ht_proto_put_header(b, HT_MSG_HELLO, 0);
	b[4] = HT_PROTO_VERSION + 1;
	is_int(1, raw(pid, b, 16, 0, HT_ERR_VERSION),
	    "another protocol version: ERR VERSION");
	ht_proto_put_header(b, HT_MSG_HELLO, 100000);
	is_int(1, raw(pid, b, 16, 0, HT_ERR_BAD_REQUEST),
	    "announced length of 100000: ERR BAD_REQUEST, at once");
	ht_proto_put_header(b, HT_MSG_HELLO, 5);
	is_int(1, raw(pid, b, 21, 0, HT_ERR_BAD_REQUEST),
	    "HELLO with a payload: ERR BAD_REQUEST");
	ht_proto_put_header(b, HT_MSG_START, 46);
	memset(b + 16, 0, 46);
	is_int(1, raw(pid, b, 62, 0, HT_ERR_BAD_REQUEST),
	    "START rate 0: ERR BAD_REQUEST");
	b[16] = 1;
	b[24] = 0x80;
	is_int(1, raw(pid, b, 62, 0, HT_ERR_BAD_REQUEST),
	    "START with an unknown flag: ERR BAD_REQUEST");
	ht_proto_put_header(b, HT_MSG_START, 12);
	memset(b + 16, 0, 12);
	b[16] = 1;
	is_int(1, raw(pid, b, 28, 0, HT_ERR_BAD_REQUEST),
	    "START of protocol 1's size: ERR BAD_REQUEST");
	ht_proto_put_header(b, 99, 0);
	is_int(1, raw(pid, b, 16, 0, HT_ERR_BAD_REQUEST),
	    "unknown request type: ERR BAD_REQUEST");
	ht_proto_put_header(b, HT_MSG_START, 46);
	is_int(1, raw(pid, b, 20, 1, HT_ERR_BAD_REQUEST),
	    "truncated payload, then EOF: ERR BAD_REQUEST");
	is_int(1, raw(pid, b, 10, 1, HT_ERR_BAD_REQUEST),
	    "truncated header, then EOF: ERR BAD_REQUEST");
	is_int(0, raw(pid, b, 0, 1, 0), "connect and hang up: closed");
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	ok(raw(pid, junk, sizeof(junk), 1, HT_ERR_BAD_REQUEST) >= 0,
	    "a MiB of garbage: ERR or closed");
	ok(agent_status(pid, &st) == 0 && st.hooked == 1,
	    "the agent still answers HELLO after all that");

	/* A silent client, and one that stalls inside its header: neither
	 * holds up a third, and both are closed at their deadline. */
	a = agent_connect(pid, 1);
	c = agent_connect(pid, 1);
	ok(a >= 0 && c >= 0 && write(c, b, 8) == 8,
	    "two clients connected, one silent, one stalled");
	rc = agent_status(pid, &st);
	is_int(0, rc, "a third client is served meanwhile");
	rc = a >= 0 ? agent_read_reply(a, &r) : -1;
	ok(rc != 0 || (r.h.type == HT_MSG_ERR && r.eof),
	    "the silent client was closed (or told ERR)");
	if (rc == 0)
		agent_reply_free(&r);
	rc = c >= 0 ? agent_read_reply(c, &r) : -1;
	ok(rc == 0 && r.h.type == HT_MSG_ERR && r.eof,
	    "the stalled client was told ERR and closed");
	if (rc == 0)
		agent_reply_free(&r);
	if (a >= 0)
		close(a);
	if (c >= 0)
		close(c);

	/* Several clients at once, each with its own run of requests. */
	fflush(NULL);
	for (i = 0; i < 4; i++) {
		if ((kids[i] = fork()) < 0)
			bail("fork: %s", strerror(errno));
		if (kids[i] == 0) {
			struct ht_profile *p;
			int k, bad = 0;

			for (k = 0; k < 25; k++) {
				if (agent_status(pid, &st) != 0 ||
				    st.state != HT_STATE_RUNNING)
					bad = 1;
				if ((p = agent_report(pid)) == NULL ||
				    p->meta.pid != (uint64_t)pid)
					bad = 1;
				if (p != NULL)
					ht_profile_free(p);
			}
			_exit(bad);
		}
	}
	for (i = 0, all = 1; i < 4; i++)
		all &= waitpid(kids[i], &rc, 0) == kids[i] && WIFEXITED(rc) &&
		    WEXITSTATUS(rc) == 0;
	ok(all, "4 clients x 25 STATUS and REPORT at once: all served");

	if (geteuid() != 0) {
		skip("not root: cannot test a client of another uid");
		return;
	}
	fflush(NULL);
	if ((kids[0] = fork()) == 0) {
		uint8_t h[HT_PROTO_HEADER], x;
		ssize_t n;
		int fd;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		if ((fd = agent_connect(pid, 1)) < 0)
			_exit(2);
		ht_proto_put_header(h, HT_MSG_HELLO, 0);
		(void)send(fd, h, sizeof(h), MSG_NOSIGNAL);
		n = read(fd, &x, 1);
		_exit(n <= 0 ? 0 : 1);
	}
	rc = -1;
	waitpid(kids[0], &rc, 0);
	ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
	    "a client of uid 65534 is closed without a reply (status %d)",
	    WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

/*
 * Idle connections hold up no one: with IDLE of them open, a HELLO is
 * answered at once; they stay open until their deadline, and then each is
 * told ERR and closed.
 */
static void
test_idle(pid_t pid)
{
	struct timespec t0;
	int fds[IDLE], i, still, bad, rc;
	long ms, code, first = -1, last = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(IDLE, idle_open(pid, fds, IDLE),
	    "%d idle connections open (silent, half a header, part of a "
	    "payload)",
	    IDLE);
	rc = timed_hello(pid, &ms);
	ok(rc == 0 && ms < SERVE_MS,
	    "meanwhile a HELLO is answered in %ld ms (< %d)", ms, SERVE_MS);
	if (ms_since(&t0) < CLOSE_MIN_MS) {
		for (i = 0, still = 0; i < IDLE; i++)
			still += fds[i] >= 0 && !stirred(fds[i]);
		is_int(IDLE, still,
		    "the idle connections are still open (not dropped to "
		    "make room)");
	} else
		skip("too slow to look at the connections before %d ms",
		    CLOSE_MIN_MS);
	for (i = 0, bad = 0; i < IDLE; i++) {
		code = fds[i] >= 0 ? last_word(fds[i]) : -1;
		ms = ms_since(&t0);
		if (code != HT_ERR_BAD_REQUEST && code != 0)
			bad++;
		if (i == 0)
			first = ms;
		last = ms;
	}
	ok(bad == 0 && first >= CLOSE_MIN_MS && last <= CLOSE_MAX_MS,
	    "each is told ERR BAD_REQUEST and closed at its deadline (the "
	    "first after %ld ms, the last after %ld ms; %d not)",
	    first, last, bad);
	idle_close(fds, IDLE);
}

/*
 * More idle connections than the agent has room for: it drops the oldest
 * rather than refuse the newest, so a client still gets in; and it drops
 * first those of the process that holds the most, so that a process
 * opening connections in a loop cannot push out another's.
 */
static void
test_crowd(pid_t pid)
{
	static int fds[MANY];
	uint8_t h[HT_PROTO_HEADER];
	struct timespec t0;
	int go[2], done[2], lone, rc;
	long ms;
	pid_t kid;
	char c;

	is_int(MANY, idle_open(pid, fds, MANY), "%d idle connections open",
	    MANY);
	rc = timed_hello(pid, &ms);
	ok(rc == 0 && ms < SERVE_MS,
	    "meanwhile a HELLO is answered in %ld ms (< %d)", ms, SERVE_MS);
	ok(fds[MANY - 1] >= 0 && !stirred(fds[MANY - 1]),
	    "the newest idle connection is still open");
	is_int(HT_ERR_BUSY, fds[0] >= 0 ? last_word(fds[0]) : -1,
	    "the oldest was dropped to make room: ERR BUSY");
	idle_close(fds, MANY);

	ht_proto_put_header(h, HT_MSG_HELLO, 0);
	lone = client_open(pid, 5000, 5000, NULL, 0);
	if (pipe(go) != 0 || pipe(done) != 0)
		bail("pipe: %s", strerror(errno));
	fflush(NULL);
	if ((kid = fork()) < 0)
		bail("fork: %s", strerror(errno));
	if (kid == 0) {
		close(go[0]);
		close(done[1]);
		c = idle_open(pid, fds, MANY) == MANY ? 'y' : 'n';
		(void)write(go[1], &c, 1);
		/* Hold them until the test has its answer (or is gone). */
		(void)read(done[0], &c, 1);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	c = 'n';
	(void)read(go[0], &c, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = lone >= 0 &&
		send(lone, h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) ?
	    status_reply(lone) :
	    -1;
	ms = ms_since(&t0);
	ok(c == 'y' && rc == 0 && ms < SERVE_MS,
	    "a silent client outlasts another process's %d idle "
	    "connections: its HELLO is answered in %ld ms",
	    MANY, ms);
	close(done[1]);
	close(go[0]);
	waitpid(kid, NULL, 0);
	if (lone >= 0)
		close(lone);
}

/* A REPORT on a connection of its own, its reply's header read: the
 * socket, or -1 (h then says what came instead, if anything did). */
static int
report_begin(pid_t pid, struct ht_msg_header *h)
{
	uint8_t b[HT_PROTO_HEADER];
	int fd;

	memset(h, 0, sizeof(*h));
	ht_proto_put_header(b, HT_MSG_REPORT, 0);
	if ((fd = client_open(pid, 5000, 5000, b, sizeof(b))) < 0)
		return -1;
	if (agent_read_full(fd, b, sizeof(b)) != 0 ||
	    ht_proto_get_header(b, h) != 0 || h->type != HT_MSG_PROFILE) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * heaptool report -p pid while every report place is held: the agent
 * says BUSY; the readers go 800 ms later, and the command, which tries
 * again, must then be served.  Returns its exit status (-1: not run).
 */
static int
cli_report_waits(pid_t pid, int *fds, int n)
{
	struct timespec later = { 0, 800 * 1000 * 1000 };
	char spid[32];
	pid_t cli;
	int st;

	snprintf(spid, sizeof(spid), "%ld", (long)pid);
	if ((cli = fork()) == -1)
		return -1;
	if (cli == 0) {
		execl(heaptool, heaptool, "report", "-p", spid, "-o",
		    "/dev/null", (char *)NULL);
		_exit(127);
	}
	nanosleep(&later, NULL);
	idle_close(fds, n);
	if (waitpid(cli, &st, 0) != cli)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * A reader that stops reading a report holds up no one, and still gets
 * the whole profile.  The profile of 2^TREE_DEPTH sites is far larger than
 * a socket holds (some 200 KiB), so the agent cannot have sent it whole
 * while the reader pauses.  Only REPORTS_AT_ONCE reports are sent at once
 * (each is a copy of the profile in the target's memory): one more is
 * told ERR BUSY, and served once one is done.
 */
static void
test_slow_reader(struct fixture *t)
{
	struct ht_msg_header h;
	struct ht_profile *p;
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	int fd, fds[REPORTS_AT_ONCE], i, n, rc;
	uint8_t *buf = NULL, b[HT_PROTO_HEADER];
	char err[256] = "";
	size_t k, sites;
	long ms, code;

	fixture_cmd(t, "tree " XSTR(TREE_DEPTH));
	fd = report_begin(t->pid, &h);
	ok(fd >= 0 && h.length > 1u << 20,
	    "a REPORT of %u bytes begins; its reader pauses", h.length);
	rc = timed_hello(t->pid, &ms);
	ok(rc == 0 && ms < SERVE_MS,
	    "meanwhile a HELLO is answered in %ld ms (< %d)", ms, SERVE_MS);
	nanosleep(&pause, NULL);
	if (fd >= 0 && (buf = malloc(h.length)) == NULL)
		bail("out of memory");
	p = fd >= 0 && agent_read_full(fd, buf, h.length) == 0 ?
	    ht_profile_decode(buf, h.length, err, sizeof(err)) :
	    NULL;
	if (fd >= 0 && p == NULL)
		diag("the paused reader's profile: %s",
		    buf != NULL && err[0] != '\0' ? err : "cut short");
	for (k = 0, sites = 0; p != NULL && k < p->nsites; k++)
		sites += p->sites[k].alloc_objects == 1 &&
		    p->sites[k].alloc_bytes == TREE_SIZE &&
		    p->sites[k].inuse_bytes == 0;
	ok(p != NULL && sites == 1u << TREE_DEPTH,
	    "the paused reader gets the whole profile: %zu sites of one "
	    "%d-byte block",
	    sites, TREE_SIZE);
	if (p != NULL)
		ht_profile_free(p);
	free(buf);
	if (fd >= 0)
		close(fd);

	for (i = 0, n = 0; i < REPORTS_AT_ONCE; i++)
		n += (fds[i] = report_begin(t->pid, &h)) >= 0;
	is_int(REPORTS_AT_ONCE, n, "%d REPORTs begin, their readers pause",
	    REPORTS_AT_ONCE);
	ht_proto_put_header(b, HT_MSG_REPORT, 0);
	fd = client_open(t->pid, 5000, 5000, b, sizeof(b));
	code = fd >= 0 ? last_word(fd) : -1;
	is_int(HT_ERR_BUSY, code, "one more REPORT: ERR BUSY");
	if (fd >= 0)
		close(fd);
	rc = timed_hello(t->pid, &ms);
	ok(rc == 0 && ms < SERVE_MS,
	    "meanwhile a HELLO is answered in %ld ms (< %d)", ms, SERVE_MS);
	rc = cli_report_waits(t->pid, fds, REPORTS_AT_ONCE);
	is_int(0, rc,
	    "heaptool report, told BUSY, tries again and is served once "
	    "the readers are gone");
	p = agent_report(t->pid);
	ok(p != NULL, "once their readers are gone, a REPORT is served");
	if (p != NULL)
		ht_profile_free(p);
}

/* The inode of pid's listening socket "@heaptool.PID", or 0. */
static unsigned long
listener_inode(pid_t pid)
{
	char line[512], want[64];
	unsigned long ino = 0, i;
	FILE *f = fopen("/proc/net/unix", "r");
	size_t n;

	snprintf(want, sizeof(want), " @heaptool.%d\n", (int)pid);
	n = strlen(want);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		size_t l = strlen(line);

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (l > n && strcmp(line + l - n, want) == 0 &&
		    sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", &i) == 1)
			ino = i;
	}
	if (f != NULL)
		fclose(f);
	return ino;
}

/* Does pid hold a descriptor of socket inode ino? */
static int
holds_socket(pid_t pid, unsigned long ino)
{
	char dir[64], path[PATH_MAX], link[128], want[64];
	DIR *d;
	struct dirent *e;
	ssize_t n;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			found |= strcmp(link, want) == 0;
		}
	}
	closedir(d);
	return found;
}

/* A child forked by the target has no agent thread and must not keep the
 * agent's socket open. */
static void
test_fork(struct fixture *t)
{
	char path[64], buf[64];
	unsigned long ino = listener_inode(t->pid);
	struct ht_status st;
	FILE *f;
	long child = -1;

	fixture_cmd(t, "fork");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)t->pid,
	    (int)t->pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL)
			child = strtol(buf, NULL, 10);
		fclose(f);
	}
	if (ino == 0 || child <= 0)
		skip("no /proc/net/unix inode or no %s", path);
	else {
		int p = holds_socket(t->pid, ino);
		int c = holds_socket((pid_t)child, ino);

		ok(p == 1 && c == 0,
		    "a forked child does not hold the agent's socket "
		    "(target %d, child %d)",
		    p, c);
	}
	ok(agent_status(t->pid, &st) == 0 && st.hooked == 1,
	    "the agent serves after the fork");
	fixture_cmd(t, "unfork");
}

static void
test_attach(char *transcript, size_t cap)
{
	struct fixture t;
	struct ht_status st, st2;
	struct ht_profile *p, *q;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	uint32_t slots, modules;
	uint64_t over;
	long li;
	size_t i;
	int fd, status, err_empty, found, n;

	fixture_start(&t, 1, NULL);
	fd = agent_connect(t.pid, 1);
	ok(fd >= 0, "the agent listens on \\0heaptool.%d", (int)t.pid);
	if (fd < 0)
		bail("no agent socket");
	ok(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 &&
		cr.pid == t.pid,
	    "the socket's server is the target (SO_PEERCRED)");
	close(fd);

	ok(agent_status(t.pid, &st) == 0, "HELLO: STATUS reply");
	ok(st.proto_version == HT_PROTO_VERSION && st.pid == (uint32_t)t.pid &&
		strcmp(st.agent_version, PACKAGE_VERSION) == 0,
	    "STATUS: protocol, pid, agent version %s", st.agent_version);
	ok(st.hooked == 1 && st.slots_patched > 0 && st.modules > 0,
	    "attach mode: hooked, %u slots, %u modules", st.slots_patched,
	    st.modules);
	ok(st.state == HT_STATE_NONE && st.epoch == 0 && st.samples == 0,
	    "attach mode: no session until START");
	ok(st.overhead_bytes > 0, "overhead reported (%llu bytes)",
	    (unsigned long long)st.overhead_bytes);
	slots = st.slots_patched;
	{
		struct agent_reply r;

		ok(agent_request(t.pid,
		       &(struct ht_request){ .type = HT_MSG_STATUS },
		       &r) == 0 &&
			r.h.type == HT_MSG_STATUS_REPLY && r.eof &&
			ht_proto_decode_status(r.payload, r.h.length, &st2) ==
			    0 &&
			st2.hooked == 1,
		    "STATUS request: STATUS reply, closed");
		agent_reply_free(&r);
	}
	test_thread(t.pid);

	fixture_cmd(&t, "alloc 11");
	p = agent_report(t.pid);
	ok(p != NULL && p->meta.state == HT_STATE_NONE && p->nsites == 0 &&
		p->meta.pid == (uint64_t)t.pid,
	    "REPORT before START: a profile with no session and no site");
	if (p != NULL)
		ht_profile_free(p);
	is_int(HT_ERR_NOT_RUNNING, agent_simple(t.pid, HT_MSG_STOP, 0, 0),
	    "STOP with no session: ERR NOT_RUNNING");

	is_int(0, agent_simple(t.pid, HT_MSG_START, 1, 0), "START rate 1: OK");
	ok(agent_status(t.pid, &st) == 0 && st.state == HT_STATE_RUNNING &&
		st.epoch == 1 && st.rate == 1 && st.start_ns > 0,
	    "STATUS: running, epoch 1, rate 1");
	fixture_cmd(&t, "alloc 37");
	p = agent_report(t.pid);
	ok(p != NULL && p->meta.epoch == 1 && p->meta.rate == 1 &&
		p->meta.state == HT_STATE_RUNNING && p->nsites > 0 &&
		p->nmodules > 0,
	    "REPORT: running profile of epoch 1 with sites");
	ok(p != NULL && keep_site_is(p, &t, 37),
	    "rate 1: ctl_keep's site has exactly 37 x %d bytes", KEEP_SIZE);
	for (i = 0, found = 0; p != NULL && i < p->nmodules; i++)
		found |= strstr(p->modules[i].path, "ctl-target") != NULL;
	ok(found, "the profile's modules include the fixture");
	if (p != NULL)
		ht_profile_free(p);

	is_int(HT_ERR_RUNNING, agent_simple(t.pid, HT_MSG_START, 1, 0),
	    "START while running: ERR RUNNING");
	ok(agent_status(t.pid, &st) == 0 && st.epoch == 1 &&
		st.state == HT_STATE_RUNNING,
	    "the session goes on (epoch 1)");
	is_int(0, agent_simple(t.pid, HT_MSG_START, 1, HT_START_RESTART),
	    "START restart: OK");
	ok(agent_status(t.pid, &st) == 0 && st.epoch == 2 &&
		st.state == HT_STATE_RUNNING,
	    "restart: epoch 2");
	p = agent_report(t.pid);
	ok(p != NULL && p->meta.epoch == 2 && keep_site_is(p, &t, 0),
	    "restart: the old session's site is gone");
	if (p != NULL)
		ht_profile_free(p);
	fixture_cmd(&t, "alloc 3");

	test_clients(t.pid);
	test_idle(t.pid);
	test_crowd(t.pid);
	test_slow_reader(&t);

	is_int(0, agent_simple(t.pid, HT_MSG_STOP, 0, 0), "STOP: OK");
	ok(agent_status(t.pid, &st) == 0 && st.state == HT_STATE_STOPPED &&
		st.epoch == 2,
	    "STATUS: stopped");
	fixture_cmd(&t, "alloc 5");
	p = agent_report(t.pid);
	q = agent_report(t.pid);
	ok(p != NULL && keep_site_is(p, &t, 3),
	    "after STOP: the site holds the 3 blocks of the session");
	ok(p != NULL && q != NULL && p->meta.state == HT_STATE_STOPPED &&
		same_sites(p, q) && p->meta.end_ns == q->meta.end_ns &&
		p->meta.samples == q->meta.samples,
	    "two reports after STOP are the same, site by site");
	if (p != NULL)
		ht_profile_free(p);
	if (q != NULL)
		ht_profile_free(q);
	is_int(HT_ERR_NOT_RUNNING, agent_simple(t.pid, HT_MSG_STOP, 0, 0),
	    "STOP again: ERR NOT_RUNNING");

	is_int(0, agent_simple(t.pid, HT_MSG_START, 1, 0),
	    "START after STOP: OK without restart (epoch 3)");
	ok(agent_status(t.pid, &st) == 0 && st.slots_patched >= slots,
	    "slots patched before DETACH: %u", st.slots_patched);
	slots = st.slots_patched;
	ok(agent_status(t.pid, &st) == 0 && !(st.flags & HT_STATUS_RELEASED),
	    "before DETACH: the tables are mapped");
	over = st.overhead_bytes;
	is_int(0, agent_simple(t.pid, HT_MSG_DETACH, 0, 0), "DETACH: OK");
	ok(agent_status(t.pid, &st) == 0 && st.hooked == 0 &&
		st.slots_patched == 0 && st.state == HT_STATE_STOPPED &&
		st.epoch == 3,
	    "after DETACH: not hooked, no slot, stopped");
	ok((st.flags & HT_STATUS_RELEASED) && st.live_samples == 0 &&
		st.overhead_bytes < over,
	    "after DETACH: the tables released (overhead %llu, was %llu)",
	    (unsigned long long)st.overhead_bytes, (unsigned long long)over);
	is_int(HT_ERR_DETACHED, agent_simple(t.pid, HT_MSG_START, 1, 0),
	    "START after DETACH: ERR DETACHED");
	fixture_cmd(&t, "alloc 2");
	is_int(HT_ERR_DETACHED, agent_simple(t.pid, HT_MSG_REPORT, 0, 0),
	    "REPORT after DETACH: ERR DETACHED (the profile went with the "
	    "tables)");
	is_int(0, agent_simple(t.pid, HT_MSG_DETACH, 0, 0), "DETACH again: OK");

	is_int(0, agent_simple(t.pid, HT_MSG_HOOK, 0, 0), "HOOK: OK");
	/* A slot that lazy binding resolved meanwhile is patched at the
	 * agent's next tick. */
	for (n = 0; n < 300; n++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		if (agent_status(t.pid, &st) != 0 || st.slots_patched >= slots)
			break;
		nanosleep(&ts, NULL);
	}
	ok(st.hooked == 1 && st.slots_patched == slots,
	    "after HOOK: hooked, the same %u slots patched", slots);
	is_int(0, agent_simple(t.pid, HT_MSG_HOOK, 0, 0), "HOOK again: OK");
	is_int(HT_ERR_NOT_RUNNING, agent_simple(t.pid, HT_MSG_REPORT, 0, 0),
	    "REPORT after HOOK, before START: ERR NOT_RUNNING");
	is_int(0, agent_simple(t.pid, HT_MSG_START, 1, 0), "START: OK");
	fixture_cmd(&t, "alloc 4");
	p = agent_report(t.pid);
	ok(p != NULL && p->meta.epoch == 4 && keep_site_is(p, &t, 4),
	    "sampling again after HOOK: exactly 4 blocks in epoch 4");
	if (p != NULL)
		ht_profile_free(p);

	/* A library loaded behind the dlopen hook's back: the agent's thread
	 * sees the loader's counters move and patches it within seconds. */
	ok(agent_status(t.pid, &st) == 0, "STATUS before the late library");
	modules = st.modules;
	slots = st.slots_patched;
	fixture_cmd(&t, "late");
	/* STATUS counts a module only once its slots are patched. */
	for (n = 0; n < 300; n++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		if (agent_status(t.pid, &st) == 0 && st.modules > modules)
			break;
		nanosleep(&ts, NULL);
	}
	ok(st.modules == modules + 1 && st.slots_patched > slots,
	    "a library loaded behind the hook gets patched (%u modules, "
	    "%u slots)",
	    st.modules, st.slots_patched);
	fixture_cmd(&t, "latecall 6");
	p = agent_report(t.pid);
	li = p != NULL ? site_of_size(p, LATE_SIZE) : -1;
	ok(li >= 0 && p->sites[li].alloc_objects == 6 &&
		p->sites[li].inuse_bytes == 6 * LATE_SIZE,
	    "its site is sampled: 6 x %d bytes", LATE_SIZE);
	for (i = 0, found = 0; p != NULL && i < p->nmodules; i++)
		found |= strstr(p->modules[i].path, "libctl-late.so") != NULL;
	ok(found, "the profile's modules include libctl-late.so");
	if (p != NULL)
		ht_profile_free(p);

	test_fork(&t);

	status = fixture_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "the fixture exits 0 with nothing on stderr");
	snprintf(transcript, cap, "%s", t.transcript);
}

static void
test_plain(const char *transcript)
{
	struct fixture t;
	char cmd[256];
	const char *p, *e;
	int status, err_empty;

	fixture_start(&t, 0, NULL);
	for (p = transcript; (e = strstr(p, " -> ")) != NULL;
	     p = strchr(e, '\n') + 1) {
		snprintf(cmd, sizeof(cmd), "%.*s", (int)(e - p), p);
		if (strcmp(cmd, "quit") != 0)
			fixture_cmd(&t, cmd);
	}
	status = fixture_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "the fixture without the agent exits 0");
	is_string(t.transcript, transcript,
	    "the fixture's output is the same without the agent");
}

static void
test_launch(void)
{
	struct fixture t;
	struct ht_status st;
	struct ht_profile *p;
	char out[PATH_MAX], err[256], path[128];
	int status, err_empty, fd;
	DIR *d;
	struct dirent *e;
	int tasks = 0;

	snprintf(out, sizeof(out), "%s/ctl-launch.%d.hprof",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
	    (int)getpid());
	fixture_start(&t, 2, out);
	ok(agent_status(t.pid, &st) == 0 && st.hooked == 1 &&
		st.state == HT_STATE_RUNNING && st.epoch == 1 && st.rate == 1,
	    "launch mode: the control thread serves the running session");
	fixture_cmd(&t, "alloc 9");
	p = agent_report(t.pid);
	ok(p != NULL && keep_site_is(p, &t, 9),
	    "launch mode: live REPORT with exactly 9 blocks");
	if (p != NULL)
		ht_profile_free(p);
	status = fixture_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "launch mode: the fixture exits 0");
	p = ht_profile_read_file(out, err, sizeof(err));
	ok(p != NULL && keep_site_is(p, &t, 9) &&
		(p->meta.flags & HT_META_AT_EXIT),
	    "launch mode: the profile written at exit has the 9 blocks");
	if (p != NULL)
		ht_profile_free(p);
	unlink(out);

	/* A descendant of a launched process: the agent stays dormant, so
	 * no thread and no socket. */
	fixture_start(&t, 3, NULL);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t.pid);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL)
			tasks += e->d_name[0] != '.';
		closedir(d);
	}
	fd = agent_connect(t.pid, 0);
	ok(tasks == 2 && fd < 0,
	    "dormant (HEAPTOOL_PID of another process): no agent thread, "
	    "no socket");
	if (fd >= 0)
		close(fd);
	status = fixture_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "dormant: the fixture exits 0");
}

/* The agent loaded by dlopen in a running process, as attach loads it:
 * its constructor runs inside dlopen and only starts the thread. */
static void
test_dlopen(void)
{
	struct fixture t;
	struct ht_status st;
	struct ht_profile *p;
	int fd, status, err_empty;

	fixture_start(&t, 4, NULL);
	fd = agent_connect(t.pid, 0);
	ok(fd < 0, "dlopen: no agent before the load");
	if (fd >= 0)
		close(fd);
	fixture_cmd(&t, "alloc 1");
	fixture_cmd(&t, "agent");
	ok(agent_status(t.pid, &st) == 0 && st.hooked == 1 &&
		st.slots_patched > 0 && st.state == HT_STATE_NONE,
	    "dlopen: the agent's thread patched and serves, no session");
	is_int(0, agent_simple(t.pid, HT_MSG_START, 1, 0), "dlopen: START");
	fixture_cmd(&t, "alloc 5");
	p = agent_report(t.pid);
	ok(p != NULL && keep_site_is(p, &t, 5),
	    "dlopen: exactly the 5 blocks allocated after START");
	if (p != NULL)
		ht_profile_free(p);
	is_int(0, agent_simple(t.pid, HT_MSG_DETACH, 0, 0), "dlopen: DETACH");
	ok(agent_status(t.pid, &st) == 0 && st.hooked == 0 &&
		st.slots_patched == 0,
	    "dlopen: nothing patched after DETACH");
	fixture_cmd(&t, "alloc 2");
	status = fixture_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "dlopen: the fixture exits 0");
}

int
main(void)
{
	static char transcript[8192];

	agent = test_build_need("libheaptool-agent.so");
	fixture = test_build_need("t/target/ctl-target");
	heaptool = test_build_need("heaptool");
	signal(SIGPIPE, SIG_IGN);
	test_timeout(300);
	plan(0);
	test_attach(transcript, sizeof(transcript));
	test_plain(transcript);
	test_launch();
	test_dlopen();
	return 0;
}
