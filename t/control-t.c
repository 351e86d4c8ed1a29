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
 *   - the agent's thread is named "heaptool" and blocks every signal;
 *   - launch mode (HEAPTOOL_PID = the process) serves too, and a process
 *     whose HEAPTOOL_PID is another's has no agent thread;
 *   - the fixture prints the same lines as a run without the agent.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "basic.h"
#include "profile.h"
#include "proto.h"

#define KEEP_SIZE	4321
#define LATE_SIZE	5555
#define CLIENT_TIMEOUT	10	/* seconds: far above the agent's 2 s */

struct target {
	pid_t		 pid;
	FILE		*in;		/* its stdin */
	FILE		*out;		/* its stdout */
	char		 errpath[PATH_MAX];
	uintptr_t	 keep_fn;	/* ctl_keep */
	char		 transcript[8192];	/* commands and answers */
};

struct reply {
	struct ht_msg_header	 h;
	uint8_t			*payload;
	int			 eof;	/* closed after the reply */
};

static char	builddir[PATH_MAX];
static char	agent[PATH_MAX + 64], fixture[PATH_MAX + 64];

static void
find_builddir(void)
{
	const char	*e = getenv("HT_BUILDDIR");
	ssize_t		 n;
	char		*s;

	if (e != NULL && *e != '\0') {
		snprintf(builddir, sizeof(builddir), "%s", e);
	} else {
		/* t/control-t: the build directory is the one above. */
		n = readlink("/proc/self/exe", builddir, sizeof(builddir) - 1);
		if (n <= 0)
			bail("readlink /proc/self/exe: %s", strerror(errno));
		builddir[n] = '\0';
		if ((s = strrchr(builddir, '/')) != NULL)
			*s = '\0';
		if ((s = strrchr(builddir, '/')) != NULL)
			*s = '\0';
	}
	snprintf(agent, sizeof(agent), "%s/libheaptool-agent.so", builddir);
	snprintf(fixture, sizeof(fixture), "%s/t/target/ctl-target",
	    builddir);
}

/* mode: 0 plain, 1 attach (preload, no HEAPTOOL_PID), 2 launch
 * (HEAPTOOL_PID = itself, output to out), 3 dormant (HEAPTOOL_PID = 1),
 * 4 plain with CTL_AGENT set, for its "agent" command. */
static void
target_start(struct target *t, int mode, const char *out)
{
	int	 in[2], o[2], fd;
	char	 line[256], pid[32];
	void	*fn;

	memset(t, 0, sizeof(*t));
	snprintf(t->errpath, sizeof(t->errpath), "%s/ctl-target.err.%d.%d",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
	    (int)getpid(), mode);
	if (pipe(in) != 0 || pipe(o) != 0)
		bail("pipe: %s", strerror(errno));
	fflush(NULL);
	if ((t->pid = fork()) < 0)
		bail("fork: %s", strerror(errno));
	if (t->pid == 0) {
		fd = open(t->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(in[0], 0) < 0 || dup2(o[1], 1) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(127);
		close(in[0]);
		close(in[1]);
		close(o[0]);
		close(o[1]);
		close(fd);
		unsetenv("HEAPTOOL_PID");
		unsetenv("HEAPTOOL_OUTPUT");
		unsetenv("HEAPTOOL_RATE");
		unsetenv("LD_PRELOAD");
		if (mode == 4)
			setenv("CTL_AGENT", agent, 1);
		else if (mode != 0)
			setenv("LD_PRELOAD", agent, 1);
		if (mode == 2) {
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			setenv("HEAPTOOL_PID", pid, 1);
			setenv("HEAPTOOL_OUTPUT", out, 1);
			setenv("HEAPTOOL_RATE", "1", 1);
			/* heaptool run --live: launch mode serves only then. */
			setenv("HEAPTOOL_LIVE", "1", 1);
		} else if (mode == 3)
			setenv("HEAPTOOL_PID", "1", 1);
		execl(fixture, fixture, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	t->in = fdopen(in[1], "w");
	t->out = fdopen(o[0], "r");
	if (t->in == NULL || t->out == NULL)
		bail("fdopen: %s", strerror(errno));
	if (fgets(line, sizeof(line), t->out) == NULL ||
	    sscanf(line, "ready %p", &fn) != 1)
		bail("ctl-target did not start (mode %d)", mode);
	t->keep_fn = (uintptr_t)fn;
}

/* Send one command; return its answer line (without newline). */
static const char *
target_cmd(struct target *t, const char *cmd)
{
	static char	line[256];
	size_t		n;

	fprintf(t->in, "%s\n", cmd);
	fflush(t->in);
	if (fgets(line, sizeof(line), t->out) == NULL)
		bail("ctl-target: no answer to \"%s\"", cmd);
	n = strlen(line);
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	n = strlen(t->transcript);
	snprintf(t->transcript + n, sizeof(t->transcript) - n, "%s -> %s\n",
	    cmd, line);
	return line;
}

/* quit; returns its exit status; *err_empty if it wrote nothing to
 * stderr. */
static int
target_finish(struct target *t, int *err_empty)
{
	struct stat	st;
	int		status;

	target_cmd(t, "quit");
	fclose(t->in);
	fclose(t->out);
	if (waitpid(t->pid, &status, 0) != t->pid)
		bail("waitpid: %s", strerror(errno));
	*err_empty = stat(t->errpath, &st) == 0 && st.st_size == 0;
	if (!*err_empty) {
		char	buf[512];
		FILE	*f = fopen(t->errpath, "r");

		while (f != NULL && fgets(buf, sizeof(buf), f) != NULL)
			diag("ctl-target stderr: %s", buf);
		if (f != NULL)
			fclose(f);
	}
	unlink(t->errpath);
	return status;
}

static void
set_timeouts(int fd)
{
	struct timeval	tv = { CLIENT_TIMEOUT, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Connect to the agent of pid; retry while it is not listening yet. */
static int
agent_connect(pid_t pid, int patient)
{
	struct sockaddr_un	sa;
	struct timespec		ts = { 0, 10 * 1000 * 1000 };
	size_t			len;
	int			fd, i;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	len = ht_proto_socket_name(sa.sun_path, (uint32_t)pid);
	for (i = 0; i < (patient ? 1000 : 1); i++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			bail("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    len)) == 0) {
			set_timeouts(fd);
			return fd;
		}
		close(fd);
		if (errno != ECONNREFUSED && errno != ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int
read_full(int fd, void *buf, size_t len)
{
	uint8_t	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read one reply and check that the agent then closes.  0 or -1. */
static int
read_reply(int fd, struct reply *r)
{
	uint8_t	hdr[HT_PROTO_HEADER], extra;

	memset(r, 0, sizeof(*r));
	if (read_full(fd, hdr, sizeof(hdr)) != 0 ||
	    ht_proto_get_header(hdr, &r->h) != 0 ||
	    r->h.version != HT_PROTO_VERSION ||
	    r->h.length > HT_PROTO_MAX_REPLY)
		return -1;
	if ((r->payload = malloc(r->h.length + 1)) == NULL)
		bail("out of memory");
	if (read_full(fd, r->payload, r->h.length) != 0) {
		free(r->payload);
		r->payload = NULL;
		return -1;
	}
	r->eof = read(fd, &extra, 1) == 0;
	return 0;
}

static void
reply_free(struct reply *r)
{
	free(r->payload);
	r->payload = NULL;
}

/* One request, one reply.  Returns 0 or -1. */
static int
request(pid_t pid, uint16_t type, uint64_t rate, uint32_t flags,
    struct reply *r)
{
	static struct ht_request	q;
	static uint8_t			b[HT_PROTO_MAX_REQUEST];
	size_t				n;
	int				fd, rc;

	memset(&q, 0, sizeof(q));
	q.type = type;
	q.rate = rate;
	q.flags = flags;
	n = ht_proto_encode_request(b, &q);

	if ((fd = agent_connect(pid, 1)) < 0)
		return -1;
	rc = write(fd, b, n) == (ssize_t)n ? read_reply(fd, r) : -1;
	close(fd);
	return rc;
}

static int
get_status(pid_t pid, struct ht_status *s)
{
	struct reply	r;
	int		rc = -1;

	if (request(pid, HT_MSG_HELLO, 0, 0, &r) != 0)
		return -1;
	if (r.h.type == HT_MSG_STATUS_REPLY &&
	    ht_proto_decode_status(r.payload, r.h.length, s) == 0)
		rc = 0;
	reply_free(&r);
	return rc;
}

/* The ERR code of a request's reply; 0 for OK; -1 for anything else. */
static long
simple(pid_t pid, uint16_t type, uint64_t rate, uint32_t flags)
{
	struct reply	r;
	uint32_t	code;
	char		msg[256];
	long		rc = -1;

	if (request(pid, type, rate, flags, &r) != 0)
		return -1;
	if (r.h.type == HT_MSG_OK && r.h.length == 0 && r.eof)
		rc = 0;
	else if (r.h.type == HT_MSG_ERR && r.eof &&
	    ht_proto_decode_err(r.payload, r.h.length, &code, msg,
	    sizeof(msg)) == 0)
		rc = code;
	reply_free(&r);
	return rc;
}

static struct ht_profile *
get_report(pid_t pid)
{
	struct ht_profile	*p = NULL;
	struct reply		 r;
	char			 err[256];

	if (request(pid, HT_MSG_REPORT, 0, 0, &r) != 0)
		return NULL;
	if (r.h.type == HT_MSG_PROFILE && r.eof) {
		p = ht_profile_decode(r.payload, r.h.length, err, sizeof(err));
		if (p == NULL)
			diag("profile: %s", err);
	}
	reply_free(&r);
	return p;
}

/* The one site whose blocks are all of size bytes: its index, -1 if none,
 * -2 if several. */
static long
site_of_size(const struct ht_profile *p, uint64_t size)
{
	long	found = -1;
	size_t	i;

	for (i = 0; i < p->nsites; i++) {
		const struct ht_site_rec	*s = &p->sites[i];

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
keep_site_is(const struct ht_profile *p, const struct target *t,
    uint64_t n)
{
	long				 i = site_of_size(p, KEEP_SIZE);
	const struct ht_site_rec	*s;

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
	size_t	i;

	if (a->nsites != b->nsites)
		return 0;
	for (i = 0; i < a->nsites; i++) {
		const struct ht_site_rec	*x = &a->sites[i],
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
	struct reply	r;
	uint32_t	code;
	char		msg[256];
	uint8_t		b;
	int		fd, rc = -1;

	if ((fd = agent_connect(pid, 1)) < 0)
		return -1;
	if (len > 0 && send(fd, buf, len, MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE && errno != ECONNRESET) {
		close(fd);
		return -1;
	}
	if (shut)
		shutdown(fd, SHUT_WR);
	if (read_reply(fd, &r) == 0) {
		if (r.h.type == HT_MSG_ERR && ht_proto_decode_err(r.payload,
		    r.h.length, &code, msg, sizeof(msg)) == 0 &&
		    code == want)
			rc = 1;
		else
			diag("unexpected reply type %u", r.h.type);
		reply_free(&r);
	} else {
		ssize_t	n = recv(fd, &b, 1, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN))
			rc = 0;
	}
	close(fd);
	return rc;
}

static void
test_thread(pid_t pid)
{
	char		 path[PATH_MAX], buf[4096];
	DIR		*d;
	struct dirent	*e;
	FILE		*f;
	int		 found = 0, blocked = 0, mine;

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
			unsigned long long	m;

			if (strcmp(buf, "Name:\theaptool\n") == 0) {
				found++;
				mine = 1;
			}
			/* Every signal but SIGKILL, SIGSTOP and glibc's
			 * two internal ones (32, 33). */
			if (mine && sscanf(buf, "SigBlk:\t%llx", &m) == 1 &&
			    (m | 1ull << (SIGKILL - 1) | 1ull << (SIGSTOP -
			    1) | 1ull << 31 | 1ull << 32) == ~0ull)
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
	static uint8_t	junk[1 << 20];
	uint8_t		b[64];
	struct reply	r;
	struct ht_status st;
	int		a, c, rc, i, all;
	pid_t		kids[4];

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
	ok(get_status(pid, &st) == 0 && st.hooked == 1,
	    "the agent still answers HELLO after all that");

	/* A silent client, and one that stalls inside its header: each
	 * costs the next client the agent's timeout, no more. */
	a = agent_connect(pid, 1);
	c = agent_connect(pid, 1);
	ok(a >= 0 && c >= 0 && write(c, b, 8) == 8,
	    "two clients connected, one silent, one stalled");
	rc = get_status(pid, &st);
	is_int(0, rc, "a third client is served meanwhile");
	rc = a >= 0 ? read_reply(a, &r) : -1;
	ok(rc != 0 || (r.h.type == HT_MSG_ERR && r.eof),
	    "the silent client was closed (or told ERR)");
	if (rc == 0)
		reply_free(&r);
	rc = c >= 0 ? read_reply(c, &r) : -1;
	ok(rc == 0 && r.h.type == HT_MSG_ERR && r.eof,
	    "the stalled client was told ERR and closed");
	if (rc == 0)
		reply_free(&r);
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
			struct ht_profile	*p;
			int			 k, bad = 0;

			for (k = 0; k < 25; k++) {
				if (get_status(pid, &st) != 0 ||
				    st.state != HT_STATE_RUNNING)
					bad = 1;
				if ((p = get_report(pid)) == NULL ||
				    p->meta.pid != (uint64_t)pid)
					bad = 1;
				if (p != NULL)
					ht_profile_free(p);
			}
			_exit(bad);
		}
	}
	for (i = 0, all = 1; i < 4; i++)
		all &= waitpid(kids[i], &rc, 0) == kids[i] &&
		    WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
	ok(all, "4 clients x 25 STATUS and REPORT at once: all served");

	if (geteuid() != 0) {
		skip("not root: cannot test a client of another uid");
		return;
	}
	fflush(NULL);
	if ((kids[0] = fork()) == 0) {
		uint8_t	h[HT_PROTO_HEADER], x;
		ssize_t	n;
		int	fd;

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

/* The inode of pid's listening socket "@heaptool.PID", or 0. */
static unsigned long
listener_inode(pid_t pid)
{
	char		 line[512], want[64];
	unsigned long	 ino = 0, i;
	FILE		*f = fopen("/proc/net/unix", "r");
	size_t		 n;

	snprintf(want, sizeof(want), " @heaptool.%d\n", (int)pid);
	n = strlen(want);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		size_t	l = strlen(line);

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
	char		 dir[64], path[PATH_MAX], link[128], want[64];
	DIR		*d;
	struct dirent	*e;
	ssize_t		 n;
	int		 found = 0;

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
test_fork(struct target *t)
{
	char		 path[64], buf[64];
	unsigned long	 ino = listener_inode(t->pid);
	struct ht_status st;
	FILE		*f;
	long		 child = -1;

	target_cmd(t, "fork");
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
		int	p = holds_socket(t->pid, ino);
		int	c = holds_socket((pid_t)child, ino);

		ok(p == 1 && c == 0,
		    "a forked child does not hold the agent's socket "
		    "(target %d, child %d)", p, c);
	}
	ok(get_status(t->pid, &st) == 0 && st.hooked == 1,
	    "the agent serves after the fork");
	target_cmd(t, "unfork");
}

static void
test_attach(char *transcript, size_t cap)
{
	struct target		 t;
	struct ht_status	 st, st2;
	struct ht_profile	*p, *q;
	struct ucred		 cr;
	socklen_t		 crlen = sizeof(cr);
	uint32_t		 slots, modules;
	long			 li;
	size_t			 i;
	int			 fd, status, err_empty, found, n;

	target_start(&t, 1, NULL);
	fd = agent_connect(t.pid, 1);
	ok(fd >= 0, "the agent listens on \\0heaptool.%d", (int)t.pid);
	if (fd < 0)
		bail("no agent socket");
	ok(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 &&
	    cr.pid == t.pid, "the socket's server is the target (SO_PEERCRED)");
	close(fd);

	ok(get_status(t.pid, &st) == 0, "HELLO: STATUS reply");
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
		struct reply	r;

		ok(request(t.pid, HT_MSG_STATUS, 0, 0, &r) == 0 &&
		    r.h.type == HT_MSG_STATUS_REPLY && r.eof &&
		    ht_proto_decode_status(r.payload, r.h.length, &st2) == 0 &&
		    st2.hooked == 1, "STATUS request: STATUS reply, closed");
		reply_free(&r);
	}
	test_thread(t.pid);

	target_cmd(&t, "alloc 11");
	p = get_report(t.pid);
	ok(p != NULL && p->meta.state == HT_STATE_NONE && p->nsites == 0 &&
	    p->meta.pid == (uint64_t)t.pid,
	    "REPORT before START: a profile with no session and no site");
	if (p != NULL)
		ht_profile_free(p);
	is_int(HT_ERR_NOT_RUNNING, simple(t.pid, HT_MSG_STOP, 0, 0),
	    "STOP with no session: ERR NOT_RUNNING");

	is_int(0, simple(t.pid, HT_MSG_START, 1, 0), "START rate 1: OK");
	ok(get_status(t.pid, &st) == 0 && st.state == HT_STATE_RUNNING &&
	    st.epoch == 1 && st.rate == 1 && st.start_ns > 0,
	    "STATUS: running, epoch 1, rate 1");
	target_cmd(&t, "alloc 37");
	p = get_report(t.pid);
	ok(p != NULL && p->meta.epoch == 1 && p->meta.rate == 1 &&
	    p->meta.state == HT_STATE_RUNNING && p->nsites > 0 &&
	    p->nmodules > 0, "REPORT: running profile of epoch 1 with sites");
	ok(p != NULL && keep_site_is(p, &t, 37),
	    "rate 1: ctl_keep's site has exactly 37 x %d bytes", KEEP_SIZE);
	for (i = 0, found = 0; p != NULL && i < p->nmodules; i++)
		found |= strstr(p->modules[i].path, "ctl-target") != NULL;
	ok(found, "the profile's modules include the fixture");
	if (p != NULL)
		ht_profile_free(p);

	is_int(HT_ERR_RUNNING, simple(t.pid, HT_MSG_START, 1, 0),
	    "START while running: ERR RUNNING");
	ok(get_status(t.pid, &st) == 0 && st.epoch == 1 &&
	    st.state == HT_STATE_RUNNING, "the session goes on (epoch 1)");
	is_int(0, simple(t.pid, HT_MSG_START, 1, HT_START_RESTART),
	    "START restart: OK");
	ok(get_status(t.pid, &st) == 0 && st.epoch == 2 &&
	    st.state == HT_STATE_RUNNING, "restart: epoch 2");
	p = get_report(t.pid);
	ok(p != NULL && p->meta.epoch == 2 && keep_site_is(p, &t, 0),
	    "restart: the old session's site is gone");
	if (p != NULL)
		ht_profile_free(p);
	target_cmd(&t, "alloc 3");

	test_clients(t.pid);

	is_int(0, simple(t.pid, HT_MSG_STOP, 0, 0), "STOP: OK");
	ok(get_status(t.pid, &st) == 0 && st.state == HT_STATE_STOPPED &&
	    st.epoch == 2, "STATUS: stopped");
	target_cmd(&t, "alloc 5");
	p = get_report(t.pid);
	q = get_report(t.pid);
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
	is_int(HT_ERR_NOT_RUNNING, simple(t.pid, HT_MSG_STOP, 0, 0),
	    "STOP again: ERR NOT_RUNNING");

	is_int(0, simple(t.pid, HT_MSG_START, 1, 0),
	    "START after STOP: OK without restart (epoch 3)");
	ok(get_status(t.pid, &st) == 0 && st.slots_patched >= slots,
	    "slots patched before DETACH: %u", st.slots_patched);
	slots = st.slots_patched;
	is_int(0, simple(t.pid, HT_MSG_DETACH, 0, 0), "DETACH: OK");
	ok(get_status(t.pid, &st) == 0 && st.hooked == 0 &&
	    st.slots_patched == 0 && st.state == HT_STATE_STOPPED &&
	    st.epoch == 3, "after DETACH: not hooked, no slot, stopped");
	is_int(HT_ERR_DETACHED, simple(t.pid, HT_MSG_START, 1, 0),
	    "START after DETACH: ERR DETACHED");
	target_cmd(&t, "alloc 2");
	p = get_report(t.pid);
	ok(p != NULL && p->meta.epoch == 3 && keep_site_is(p, &t, 0),
	    "REPORT after DETACH: the stopped session's profile");
	if (p != NULL)
		ht_profile_free(p);
	is_int(0, simple(t.pid, HT_MSG_DETACH, 0, 0), "DETACH again: OK");

	is_int(0, simple(t.pid, HT_MSG_HOOK, 0, 0), "HOOK: OK");
	/* A slot that lazy binding resolved meanwhile is patched at the
	 * agent's next tick. */
	for (n = 0; n < 300; n++) {
		struct timespec	ts = { 0, 100 * 1000 * 1000 };

		if (get_status(t.pid, &st) != 0 || st.slots_patched >= slots)
			break;
		nanosleep(&ts, NULL);
	}
	ok(st.hooked == 1 && st.slots_patched == slots,
	    "after HOOK: hooked, the same %u slots patched", slots);
	is_int(0, simple(t.pid, HT_MSG_HOOK, 0, 0), "HOOK again: OK");
	is_int(0, simple(t.pid, HT_MSG_START, 1, 0), "START: OK");
	target_cmd(&t, "alloc 4");
	p = get_report(t.pid);
	ok(p != NULL && p->meta.epoch == 4 && keep_site_is(p, &t, 4),
	    "sampling again after HOOK: exactly 4 blocks in epoch 4");
	if (p != NULL)
		ht_profile_free(p);

	/* A library loaded behind the dlopen hook's back: the agent's thread
	 * sees the loader's counters move and patches it within seconds. */
	ok(get_status(t.pid, &st) == 0, "STATUS before the late library");
	modules = st.modules;
	slots = st.slots_patched;
	target_cmd(&t, "late");
	/* STATUS counts a module only once its slots are patched. */
	for (n = 0; n < 300; n++) {
		struct timespec	ts = { 0, 100 * 1000 * 1000 };

		if (get_status(t.pid, &st) == 0 && st.modules > modules)
			break;
		nanosleep(&ts, NULL);
	}
	ok(st.modules == modules + 1 && st.slots_patched > slots,
	    "a library loaded behind the hook gets patched (%u modules, "
	    "%u slots)", st.modules, st.slots_patched);
	target_cmd(&t, "latecall 6");
	p = get_report(t.pid);
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

	status = target_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "the fixture exits 0 with nothing on stderr");
	snprintf(transcript, cap, "%s", t.transcript);
}

static void
test_plain(const char *transcript)
{
	struct target	 t;
	char		 cmd[256];
	const char	*p, *e;
	int		 status, err_empty;

	target_start(&t, 0, NULL);
	for (p = transcript; (e = strstr(p, " -> ")) != NULL;
	    p = strchr(e, '\n') + 1) {
		snprintf(cmd, sizeof(cmd), "%.*s", (int)(e - p), p);
		if (strcmp(cmd, "quit") != 0)
			target_cmd(&t, cmd);
	}
	status = target_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "the fixture without the agent exits 0");
	is_string(t.transcript, transcript,
	    "the fixture's output is the same without the agent");
}

static void
test_launch(void)
{
	struct target		 t;
	struct ht_status	 st;
	struct ht_profile	*p;
	char			 out[PATH_MAX], err[256], path[128];
	int			 status, err_empty, fd;
	DIR			*d;
	struct dirent		*e;
	int			 tasks = 0;

	snprintf(out, sizeof(out), "%s/ctl-launch.%d.hprof",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
	    (int)getpid());
	target_start(&t, 2, out);
	ok(get_status(t.pid, &st) == 0 && st.hooked == 1 &&
	    st.state == HT_STATE_RUNNING && st.epoch == 1 && st.rate == 1,
	    "launch mode: the control thread serves the running session");
	target_cmd(&t, "alloc 9");
	p = get_report(t.pid);
	ok(p != NULL && keep_site_is(p, &t, 9),
	    "launch mode: live REPORT with exactly 9 blocks");
	if (p != NULL)
		ht_profile_free(p);
	status = target_finish(&t, &err_empty);
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
	target_start(&t, 3, NULL);
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
	status = target_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "dormant: the fixture exits 0");
}

/* The agent loaded by dlopen in a running process, as attach loads it:
 * its constructor runs inside dlopen and only starts the thread. */
static void
test_dlopen(void)
{
	struct target		 t;
	struct ht_status	 st;
	struct ht_profile	*p;
	int			 fd, status, err_empty;

	target_start(&t, 4, NULL);
	fd = agent_connect(t.pid, 0);
	ok(fd < 0, "dlopen: no agent before the load");
	if (fd >= 0)
		close(fd);
	target_cmd(&t, "alloc 1");
	target_cmd(&t, "agent");
	ok(get_status(t.pid, &st) == 0 && st.hooked == 1 &&
	    st.slots_patched > 0 && st.state == HT_STATE_NONE,
	    "dlopen: the agent's thread patched and serves, no session");
	is_int(0, simple(t.pid, HT_MSG_START, 1, 0), "dlopen: START");
	target_cmd(&t, "alloc 5");
	p = get_report(t.pid);
	ok(p != NULL && keep_site_is(p, &t, 5),
	    "dlopen: exactly the 5 blocks allocated after START");
	if (p != NULL)
		ht_profile_free(p);
	is_int(0, simple(t.pid, HT_MSG_DETACH, 0, 0), "dlopen: DETACH");
	ok(get_status(t.pid, &st) == 0 && st.hooked == 0 &&
	    st.slots_patched == 0, "dlopen: nothing patched after DETACH");
	target_cmd(&t, "alloc 2");
	status = target_finish(&t, &err_empty);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && err_empty,
	    "dlopen: the fixture exits 0");
}

int
main(void)
{
	static char	transcript[8192];

	find_builddir();
	if (access(agent, R_OK) != 0)
		skip_all("%s not built", agent);
	if (access(fixture, X_OK) != 0)
		skip_all("%s not built", fixture);
	signal(SIGPIPE, SIG_IGN);
	alarm(300);
	plan(0);
	test_attach(transcript, sizeof(transcript));
	test_plain(transcript);
	test_launch();
	test_dlopen();
	return 0;
}
