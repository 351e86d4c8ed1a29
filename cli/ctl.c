/*
 * The control client (see ctl.h).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "proc.h"
#include "proto.h"

/* How long a BUSY agent is asked again (see exchange_req). */
#define BUSY_WAIT_MS 3000

/* Linux 6.5; older headers lack it, older kernels answer ENOPROTOOPT. */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* The first allocation for a reply payload; it grows as bytes arrive, so
 * a header that lies about its length costs nothing until the bytes are
 * really sent. */
#define FIRST_CHUNK (64u * 1024)

struct ht_ctl {
	pid_t pid;
	int timeout_ms;
	int code;
	uint32_t agent_err;
	unsigned agent_version;
	char err[768];
	int pass_fd;  /* a descriptor the next request carries, or -1 */
	uint8_t *buf; /* the last reply's payload */
	size_t len;
	size_t cap;
};

struct ht_ctl *
ht_ctl_new(pid_t pid)
{
	struct ht_ctl *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->pid = pid;
	h->timeout_ms = HT_CTL_TIMEOUT_MS;
	h->pass_fd = -1;
	return h;
}

void
ht_ctl_free(struct ht_ctl *h)
{
	if (h == NULL)
		return;
	free(h->buf);
	free(h);
}

void
ht_ctl_set_timeout(struct ht_ctl *h, int ms)
{
	if (ms > 0)
		h->timeout_ms = ms;
}

const char *
ht_ctl_error(const struct ht_ctl *h)
{
	return h->code == HT_CTL_OK ? "" : h->err;
}

int
ht_ctl_errcode(const struct ht_ctl *h)
{
	return h->code;
}

uint32_t
ht_ctl_agent_err(const struct ht_ctl *h)
{
	return h->code == HT_CTL_EAGENT ? h->agent_err : 0;
}

unsigned
ht_ctl_agent_version(const struct ht_ctl *h)
{
	return h->code == HT_CTL_EVERSION ? h->agent_version : 0;
}

/* Record a failure: "target PID: " and the formatted text.  Returns -1. */
static int fail(struct ht_ctl *h, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct ht_ctl *h, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	h->code = code;
	n = snprintf(h->err, sizeof(h->err), "target %ld: ", (long)h->pid);
	if (n < 0 || (size_t)n >= sizeof(h->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(h->err + n, sizeof(h->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A timeout for messages: "5 s", "1.5 s", "250 ms". */
static const char *
timeout_str(const struct ht_ctl *h, char *buf, size_t len)
{
	if (h->timeout_ms % 1000 == 0)
		snprintf(buf, len, "%d s", h->timeout_ms / 1000);
	else if (h->timeout_ms > 1000)
		snprintf(buf, len, "%.1f s", h->timeout_ms / 1000.0);
	else
		snprintf(buf, len, "%d ms", h->timeout_ms);
	return buf;
}

/* The process is gone, or a zombie whose sockets are closed: what
 * explains a refused or dropped connection best. */
static int
gone(const struct ht_ctl *h)
{
	struct ht_proc p;

	if (ht_proc_read(h->pid, &p) != 0)
		return errno == ENOENT;
	return p.state == 'Z' || p.state == 'X';
}

static int
fail_gone(struct ht_ctl *h)
{
	return fail(h, HT_CTL_ENOPROC,
	    "no such process (it exited); attach "
	    "to a running process");
}

/* The agent closes, unanswered, a connection whose peer is neither the
 * target's user nor root. */
static int
fail_refused(struct ht_ctl *h)
{
	return fail(h, HT_CTL_EREFUSED,
	    "the agent refused the connection: "
	    "it serves only the target's user and root; run heaptool as one "
	    "of them");
}

/*
 * The agent closed the connection unanswered.  A process on its way out
 * closes its sockets before it is a zombie: given a moment (at most 200
 * ms), it is gone.  Else the peer check refused us, unless we are root or
 * the target's user, whom it never refuses: then the agent is stopping.
 */
static int
fail_closed(struct ht_ctl *h)
{
	struct ht_proc p;
	int i;

	for (i = 0; i < 20; i++) {
		if (gone(h))
			return fail_gone(h);
		poll(NULL, 0, 10);
	}
	if (ht_proc_read(h->pid, &p) == 0 &&
	    (geteuid() == 0 || geteuid() == p.uid))
		return fail(h, HT_CTL_EREFUSED,
		    "the agent closed the connection unanswered (the process "
		    "may be exiting, or its agent stopping); try again");
	return fail_refused(h);
}

/*
 * Make a socket in the target's network namespace: abstract names live
 * there, and a socket belongs to the namespace it was created in, so only
 * socket() needs to run inside it.  Returns the fd or -1 (message set).
 */
static int
ns_socket(struct ht_ctl *h)
{
	struct stat mine, theirs;
	char path[64];
	int fd, nsfd, selffd, e;

	/* Not allowed to look (another user's process): stay here, where
	 * the agent will judge our credentials itself.  Through a live
	 * thread: a zombie leader has no namespaces any more (proc.h). */
	if (ht_proc_path(h->pid, "ns/net", path, sizeof(path)) != 0 ||
	    stat("/proc/self/ns/net", &mine) != 0 || stat(path, &theirs) != 0 ||
	    (mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino))
		goto plain;

	if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return fail(h, HT_CTL_ENETNS,
		    "its network namespace: %s; run "
		    "heaptool as root to reach a process in another network "
		    "namespace",
		    strerror(errno));
	if ((selffd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1) {
		e = errno;
		close(nsfd);
		return fail(h, HT_CTL_ESYS,
		    "/proc/self/ns/net: %s; this is "
		    "unexpected",
		    strerror(e));
	}
	if (setns(nsfd, CLONE_NEWNET) != 0) {
		e = errno;
		close(nsfd);
		close(selffd);
		return fail(h, HT_CTL_ENETNS,
		    "entering its network namespace: "
		    "%s; run heaptool as root to reach a process in another "
		    "network namespace",
		    strerror(e));
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	e = errno;
	if (setns(selffd, CLONE_NEWNET) != 0) {
		/* Going on in the wrong namespace would surprise every
		 * later step: give up. */
		e = errno;
		if (fd != -1)
			close(fd);
		close(nsfd);
		close(selffd);
		return fail(h, HT_CTL_ESYS,
		    "returning to our network "
		    "namespace: %s; this is unexpected",
		    strerror(e));
	}
	close(nsfd);
	close(selffd);
	if (fd == -1)
		return fail(h, HT_CTL_ESYS, "socket: %s", strerror(e));
	return fd;

plain:
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return fail(h, HT_CTL_ESYS, "socket: %s", strerror(errno));
	return fd;
}

/*
 * Is the socket we connected to the target's?  SO_PEERCRED cannot say: its
 * pid is the number the listener had at listen(), and a listener that hands
 * its socket to a child and exits leaves a number that the kernel gives to
 * a later process, a root daemon say (pid reuse).  SO_PEERPIDFD (Linux 6.5)
 * names the listener's very process: ESRCH once it has exited, else its
 * pid.  Before 6.5, the listening socket of that name must be one of the
 * target's open descriptors (a squatter cannot put it there).  Returns 1;
 * 0 when it is not, with *holder the holder's pid or 0 if unknown; -1 with
 * the message set.
 */
static int
held_by_target(struct ht_ctl *h, int fd, const char *name, long *holder)
{
	struct ucred cred;
	socklen_t len;
	uint64_t inode;
	char info[64], buf[1024], val[32];
	int pidfd;

	*holder = 0;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0) {
		/* The pidfd's "Pid:" is its process's pid in our namespace
		 * (-1 once it has exited). */
		snprintf(info, sizeof(info), "self/fdinfo/%d", pidfd);
		if (ht_proc_file(0, 0, info, buf, sizeof(buf)) > 0 &&
		    ht_proc_field(buf, "Pid", val, sizeof(val)) == 0)
			*holder = strtol(val, NULL, 10);
		close(pidfd);
		if (*holder < 0)
			*holder = 0;
		return *holder == (long)h->pid;
	}
	if (errno == ESRCH)
		return 0; /* the listener has exited */
	if (errno != ENOPROTOOPT && errno != EINVAL)
		return fail(h, HT_CTL_ESYS, "SO_PEERPIDFD: %s",
		    strerror(errno));
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return fail(h, HT_CTL_ESYS, "SO_PEERCRED: %s", strerror(errno));
	if (cred.pid != h->pid) {
		*holder = (long)cred.pid;
		return 0;
	}
	if (ht_proc_unix_listener(h->pid, name, &inode) != 0)
		return 0;
	return ht_proc_has_socket(h->pid, inode) == 1;
}

/* Connect to the agent and check who answered.  Returns the fd or -1. */
static int
ctl_connect(struct ht_ctl *h)
{
	struct sockaddr_un sa;
	struct ht_proc p;
	struct timeval tv;
	socklen_t salen;
	char name[64], ts[32];
	long holder;
	int fd, e, r;

	if (ht_proc_read(h->pid, &p) != 0) {
		if (errno == ENOENT)
			return fail(h, HT_CTL_ENOPROC,
			    "no such process (it "
			    "exited); attach to a running process");
		return fail(h, HT_CTL_ESYS, "/proc/%ld: %s; is /proc mounted?",
		    (long)h->pid, strerror(errno));
	}
	if (p.state == 'Z' || p.state == 'X')
		return fail(h, HT_CTL_ENOPROC,
		    "no such process (it exited); "
		    "attach to a running process");

	/* The agent names its socket by its own getpid(): the pid in the
	 * target's innermost pid namespace. */
	snprintf(name, sizeof(name), "heaptool.%ld", (long)p.nspid);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    ht_proto_socket_name(sa.sun_path, (uint32_t)p.nspid));

	if ((fd = ns_socket(h)) == -1)
		return -1;
	tv.tv_sec = h->timeout_ms / 1000;
	tv.tv_usec = (h->timeout_ms % 1000) * 1000;
	/* SO_SNDTIMEO also bounds a connect that waits for room in a full
	 * listen queue. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		e = errno;
		close(fd);
		return fail(h, HT_CTL_ESYS, "setsockopt: %s", strerror(e));
	}
	while (connect(fd, (struct sockaddr *)&sa, salen) != 0) {
		e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		if ((e == ECONNREFUSED || e == ENOENT) && gone(h))
			return fail_gone(h);
		if (e == ECONNREFUSED || e == ENOENT)
			return fail(h, HT_CTL_ENOAGENT,
			    "no agent; run "
			    "heaptool attach %ld",
			    (long)h->pid);
		if (e == EAGAIN || e == ETIMEDOUT)
			return fail(h, HT_CTL_ETIMEDOUT,
			    "the agent did not "
			    "accept the connection within %s; the process may "
			    "be stopped or very busy; try again",
			    timeout_str(h, ts, sizeof(ts)));
		return fail(h, HT_CTL_ESYS, "connect: %s", strerror(e));
	}
	if ((r = held_by_target(h, fd, name, &holder)) != 1) {
		close(fd);
		if (r == -1)
			return -1;
		if (holder > 0)
			return fail(h, HT_CTL_ESQUAT,
			    "the socket name %s is "
			    "held by process %ld, not by the target; stop that "
			    "process, then attach again",
			    name, holder);
		return fail(h, HT_CTL_ESQUAT,
		    "the socket name %s is held by "
		    "a socket that is not the target's (its binder has "
		    "exited: a process squatting the name?); stop whatever "
		    "holds it (ss -xlp), then attach again",
		    name);
	}
	return fd;
}

static int
send_all(struct ht_ctl *h, int fd, const uint8_t *buf, size_t len)
{
	char ts[32];
	ssize_t n;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EPIPE || errno == ECONNRESET))
			return fail_closed(h);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return fail(h, HT_CTL_ETIMEDOUT,
			    "the agent did not "
			    "take the request within %s; the process may be "
			    "stopped or very busy; try again",
			    timeout_str(h, ts, sizeof(ts)));
		if (n == -1)
			return fail(h, HT_CTL_ESYS, "send: %s",
			    strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The request's first byte, with the descriptor pfd (SCM_RIGHTS). */
static int
send_fd(struct ht_ctl *h, int fd, const uint8_t *req, int pfd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct cmsghdr *cm;
	struct iovec iov;
	struct msghdr m;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	memset(&m, 0, sizeof(m));
	iov.iov_base = (void *)req;
	iov.iov_len = 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.b;
	m.msg_controllen = sizeof(ctl.b);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pfd, sizeof(int));
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	if (n == 1)
		return 0;
	if (n == -1 && (errno == EPIPE || errno == ECONNRESET))
		return fail_closed(h);
	return fail(h, HT_CTL_ESYS, "sendmsg: %s",
	    n == -1 ? strerror(errno) : "nothing sent");
}

/*
 * Receive exactly len bytes into buf.  Returns len, the number received
 * before the peer closed (short), or -1 (message set).
 */
static ssize_t
recv_all(struct ht_ctl *h, int fd, uint8_t *buf, size_t len)
{
	char ts[32];
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return fail(h, HT_CTL_ETIMEDOUT,
			    "the agent did not "
			    "answer within %s; the process may be stopped or "
			    "very busy; try again",
			    timeout_str(h, ts, sizeof(ts)));
		if (n == -1 && errno == ECONNRESET)
			break;
		if (n == -1)
			return fail(h, HT_CTL_ESYS, "recv: %s",
			    strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Receive a payload of len bytes (checked against the bound) into h->buf,
 * growing it as the bytes come. */
static int
recv_payload(struct ht_ctl *h, int fd, size_t len)
{
	size_t want, ncap;
	ssize_t n;
	uint8_t *nb;

	h->len = 0;
	while (h->len < len) {
		if (h->cap == h->len) {
			ncap = h->cap == 0 ? FIRST_CHUNK : h->cap * 2;
			if (ncap > len)
				ncap = len;
			if ((nb = realloc(h->buf, ncap)) == NULL)
				return fail(h, HT_CTL_ESYS,
				    "a reply of %zu "
				    "bytes: out of memory",
				    len);
			h->buf = nb;
			h->cap = ncap;
		}
		/* A buffer grown by an earlier, longer reply holds more
		 * than this one. */
		want = (h->cap < len ? h->cap : len) - h->len;
		if ((n = recv_all(h, fd, h->buf + h->len, want)) == -1)
			return -1;
		h->len += (size_t)n;
		if ((size_t)n < want)
			return fail(h, HT_CTL_EPROTO,
			    "the agent's reply is "
			    "truncated (%zu of %zu bytes); try again, and "
			    "reattach if it persists",
			    h->len, len);
	}
	return 0;
}

/* Printable copy of an agent's message: it comes from another process
 * and must not drive the terminal. */
static void
sanitize(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static int
agent_error(struct ht_ctl *h, uint32_t code, const char *msg)
{
	long pid = (long)h->pid;

	h->agent_err = code;
	switch (code) {
	case HT_ERR_RUNNING:
		return fail(h, HT_CTL_EAGENT,
		    "a session is running; use "
		    "heaptool start --restart or heaptool stop");
	case HT_ERR_NOT_RUNNING:
		return fail(h, HT_CTL_EAGENT,
		    "no session is running; start "
		    "one with heaptool start");
	case HT_ERR_DETACHED:
		return fail(h, HT_CTL_EAGENT,
		    "the agent is detached (its "
		    "hooks are removed); run heaptool attach %ld",
		    pid);
	case HT_ERR_NOMEM:
		return fail(h, HT_CTL_EAGENT,
		    "the agent could not map its "
		    "tables (%s); free memory in the target, then try again",
		    msg[0] != '\0' ? msg : "out of memory");
	case HT_ERR_BAD_REQUEST:
		return fail(h, HT_CTL_EAGENT,
		    "the agent refused the request "
		    "as malformed (%s); use the heaptool that matches the "
		    "agent",
		    msg[0] != '\0' ? msg : "no reason given");
	case HT_ERR_DUMP_PREFIX:
		return fail(h, HT_CTL_EAGENT,
		    "%s; the dump prefix is a path "
		    "in the target's view of the file system, as its user: "
		    "give one the target can write to, through no symbolic "
		    "link, in a directory of its user or root that others "
		    "may not write in unless it is sticky",
		    msg[0] != '\0' ? msg : "the dump prefix is unusable");
	case HT_ERR_BUSY:
		return fail(h, HT_CTL_EAGENT,
		    "the agent is still busy with other clients after "
		    "%d s (%s); try again later",
		    BUSY_WAIT_MS / 1000,
		    msg[0] != '\0' ? msg : "no reason given");
	case HT_ERR_RECORDING:
		return fail(h, HT_CTL_EAGENT,
		    "a recording is running; wait for its end, or stop its "
		    "heaptool record (Ctrl-C)");
	case HT_ERR_TRACE:
		return fail(h, HT_CTL_EAGENT,
		    "the agent could not write the trace (%s); free space "
		    "where it goes, or choose another place",
		    msg[0] != '\0' ? msg : "no reason given");
	case HT_ERR_BACKEND:
		return fail(h, HT_CTL_EAGENT,
		    "the backend asked for cannot run in the target: %s; "
		    "start without --backend, or with --backend got",
		    msg[0] != '\0' ? msg : "no reason given");
	case HT_ERR_VERSION:
		return fail(h, HT_CTL_EVERSION,
		    "the agent refused this "
		    "heaptool's protocol %d (%s); use the heaptool that "
		    "matches the agent",
		    HT_PROTO_VERSION, msg[0] != '\0' ? msg : "no reason given");
	default:
		return fail(h, HT_CTL_EAGENT,
		    "the agent failed (error %u: "
		    "%s); this is unexpected, please report it",
		    code, msg[0] != '\0' ? msg : "no reason given");
	}
}

static int
version_error(struct ht_ctl *h, unsigned version)
{
	h->agent_version = version;
	return fail(h, HT_CTL_EVERSION,
	    "the agent speaks protocol %u, this "
	    "heaptool speaks %d; use the heaptool that matches the agent, "
	    "or restart the process to load this one's",
	    version, HT_PROTO_VERSION);
}

/*
 * One exchange: send the request, read the reply into h->buf.  Returns
 * the reply type (ERR already turned into a failure), or -1.
 */
static int
exchange_once(struct ht_ctl *h, const struct ht_request *r)
{
	uint8_t req[HT_PROTO_MAX_REQUEST], hdr[HT_PROTO_HEADER];
	struct ht_msg_header mh;
	char msg[512];
	uint32_t code;
	size_t len;
	ssize_t n;
	int fd, rc = -1;

	h->code = HT_CTL_OK;
	h->err[0] = '\0';
	h->agent_err = 0;
	h->agent_version = 0;
	h->len = 0;
	len = ht_proto_encode_request(req, r);

	if ((fd = ctl_connect(h)) == -1)
		return -1;
	if (h->pass_fd >= 0 && send_fd(h, fd, req, h->pass_fd) != 0)
		goto out_close;
	if (send_all(h, fd, req + (h->pass_fd >= 0), len - (h->pass_fd >= 0)) !=
	    0)
		goto out_close;
	if ((n = recv_all(h, fd, hdr, sizeof(hdr))) == -1)
		goto out_close;
	if (n == 0) {
		/* The agent closes a connection it will not serve without
		 * a word: the peer check failed. */
		(void)fail_closed(h);
		goto out_close;
	}
	if ((size_t)n < sizeof(hdr)) {
		fail(h, HT_CTL_EPROTO,
		    "the agent's reply is truncated (%zd "
		    "bytes of header); try again, and reattach if it "
		    "persists",
		    n);
		goto out_close;
	}
	if (ht_proto_get_header(hdr, &mh) != 0) {
		fail(h, HT_CTL_EPROTO,
		    "the reply is not heaptool's protocol "
		    "(bad magic); something else answers on the agent's "
		    "socket");
		goto out_close;
	}
	if (mh.length > HT_PROTO_MAX_REPLY) {
		fail(h, HT_CTL_EPROTO,
		    "the agent announced a reply of %lu "
		    "bytes, more than the %lu allowed; refusing it",
		    (unsigned long)mh.length,
		    (unsigned long)HT_PROTO_MAX_REPLY);
		goto out_close;
	}
	/* An ERR is small whatever its version; anything else must be ours
	 * and not oversized for what it carries. */
	if (mh.type != HT_MSG_PROFILE &&
	    mh.length > HT_PROTO_MAX_STATUS - HT_PROTO_HEADER) {
		fail(h, HT_CTL_EPROTO,
		    "the agent sent a reply of type %u with "
		    "%lu bytes; refusing it",
		    mh.type, (unsigned long)mh.length);
		goto out_close;
	}
	if (recv_payload(h, fd, mh.length) != 0)
		goto out_close;

	if (mh.type == HT_MSG_ERR) {
		if (ht_proto_decode_err(h->buf, h->len, &code, msg,
			sizeof(msg)) != 0) {
			fail(h, HT_CTL_EPROTO,
			    "the agent sent a malformed "
			    "error reply; reattach, or restart the process");
			goto out_close;
		}
		sanitize(msg);
		if (mh.version != HT_PROTO_VERSION)
			version_error(h, mh.version);
		else
			agent_error(h, code, msg);
		goto out_close;
	}
	if (mh.version != HT_PROTO_VERSION) {
		version_error(h, mh.version);
		goto out_close;
	}
	rc = mh.type;

out_close:
	close(fd);
	return rc;
}

/*
 * An agent that says BUSY has not acted on the request (it refuses before
 * it reads one, or a report before encoding it), so any request may be
 * sent again.  Other clients hold its places for as long as their replies
 * take to read: wait for them with a growing pause, for BUSY_WAIT_MS in
 * all (at the top of the file), then say it is busy.
 */
static int
exchange_req(struct ht_ctl *h, const struct ht_request *r)
{
	struct timespec pause;
	long waited = 0, ms = 20;
	int rc;

	while ((rc = exchange_once(h, r)) == -1 &&
	    h->agent_err == HT_ERR_BUSY && waited < BUSY_WAIT_MS) {
		if (ms > BUSY_WAIT_MS - waited)
			ms = BUSY_WAIT_MS - waited;
		pause.tv_sec = ms / 1000;
		pause.tv_nsec = ms % 1000 * 1000000L;
		nanosleep(&pause, NULL);
		waited += ms;
		ms *= 2;
	}
	return rc;
}

static int
exchange(struct ht_ctl *h, uint16_t type, uint64_t rate, uint32_t flags)
{
	struct ht_request r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.rate = rate;
	r.flags = flags;
	return exchange_req(h, &r);
}

static int
unexpected(struct ht_ctl *h, int type, const char *want)
{
	return fail(h, HT_CTL_EPROTO,
	    "the agent answered with a message of "
	    "type %d, not %s; use the heaptool that matches the agent",
	    type, want);
}

int
ht_ctl_status(struct ht_ctl *h, uint16_t type, struct ht_status *st)
{
	int t;

	if ((t = exchange(h, type, 0, 0)) == -1)
		return -1;
	if (t != HT_MSG_STATUS_REPLY)
		return unexpected(h, t, "STATUS");
	if (ht_proto_decode_status(h->buf, h->len, st) != 0)
		return fail(h, HT_CTL_EPROTO,
		    "the agent's status reply is "
		    "malformed; use the heaptool that matches the agent");
	if (st->proto_version != HT_PROTO_VERSION)
		return version_error(h, st->proto_version);
	st->agent_version[sizeof(st->agent_version) - 1] = '\0';
	sanitize(st->agent_version);
	return 0;
}

int
ht_ctl_command(struct ht_ctl *h, uint16_t type, uint64_t rate, uint32_t flags)
{
	int t;

	if ((t = exchange(h, type, rate, flags)) == -1)
		return -1;
	if (t != HT_MSG_OK)
		return unexpected(h, t, "OK");
	return 0;
}

int
ht_ctl_start(struct ht_ctl *h, const struct ht_request *r)
{
	int t;

	if (r->type != HT_MSG_START)
		return fail(h, HT_CTL_EPROTO, "not a START request");
	if ((t = exchange_req(h, r)) == -1)
		return -1;
	if (t != HT_MSG_OK)
		return unexpected(h, t, "OK");
	return 0;
}

int
ht_ctl_record(struct ht_ctl *h, const struct ht_request *r, int fd)
{
	int t;

	if (r->type != HT_MSG_RECORD)
		return fail(h, HT_CTL_EPROTO, "not a RECORD request");
	h->pass_fd = fd;
	t = exchange_req(h, r);
	h->pass_fd = -1;
	if (t == -1)
		return -1;
	if (t != HT_MSG_OK)
		return unexpected(h, t, "OK");
	return 0;
}

int
ht_ctl_recstat(struct ht_ctl *h, uint32_t flags, struct ht_recstat *st)
{
	int t;

	if ((t = exchange(h, HT_MSG_RECSTAT, 0, flags)) == -1)
		return -1;
	if (t != HT_MSG_RECSTAT_REPLY)
		return unexpected(h, t, "RECSTAT");
	if (ht_proto_decode_recstat(h->buf, h->len, st) != 0)
		return fail(h, HT_CTL_EPROTO,
		    "the agent's recording state is malformed; use the "
		    "heaptool that matches the agent");
	return 0;
}

int
ht_ctl_report(struct ht_ctl *h, const uint8_t **buf, size_t *len)
{
	int t;

	if ((t = exchange(h, HT_MSG_REPORT, 0, 0)) == -1)
		return -1;
	if (t != HT_MSG_PROFILE)
		return unexpected(h, t, "PROFILE");
	*buf = h->buf;
	*len = h->len;
	return 0;
}
