/*
 * The agent's thread: set up (attach mode), then serve the control socket
 * one connection at a time and, between connections, patch modules the
 * loader brought in behind the dlopen hook's back.
 *
 * Between connections it also writes the dumps whose time has come
 * (dump.h): it polls the eventfd through which a sample that crosses an
 * every-bytes mark wakes it, with a timeout no later than the next
 * interval dump or RSS check.
 *
 * Every wait is bounded: a whole request must arrive within IO_TIMEOUT_MS,
 * and a reply must make progress every IO_TIMEOUT_MS and be done within
 * REPLY_DEADLINE_MS, so a client that stalls delays the next one by seconds
 * at most.  ht_lock_global is held only while the profile is encoded into a
 * memfd, never while the socket blocks, so a slow client never holds up the
 * target's allocations.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "control.h"
#include "dump.h"
#include "got.h"
#include "guard.h"
#include "lock.h"
#include "mem.h"
#include "prim.h"
#include "proto.h"
#include "session.h"
#include "snapshot.h"
#include "tables.h"

#define STACK_SIZE	  (256 * 1024)
#define IO_TIMEOUT_MS	  2000
#define REPLY_DEADLINE_MS 60000
#define WATCH_MS	  1000
#define BACKLOG		  16
#define ERR_MAX		  160

#define STR(x)	#x
#define XSTR(x) STR(x)

static int attach_mode;

/* The listening socket and its identity: the program may close or dup2
 * over "its" descriptors (daemons close everything they do not know), and
 * a number that now names one of its files must never be accepted on. */
static int lfd = -1;
static dev_t lfd_dev;
static ino_t lfd_ino;
static int lost; /* it was taken from us: bind again */
/* The connection being served and the report's memfd, for fork_child. */
static int conn_fd = -1, report_fd = -1;

/* dl_iterate_phdr's counters: seen at the last rescan, and at the last
 * look. */
struct dlcount {
	unsigned long long adds;
	unsigned long long subs;
};
static struct dlcount seen = { ~0ull, ~0ull }, last = { ~0ull, ~0ull };
/* Patch again at the next tick: got.c leaves for later a slot that another
 * thread's lazy binding resolved while it was patching, and only a later
 * patch takes it; repeated while one makes progress. */
static int settle;

static uint8_t req[HT_PROTO_MAX_REQUEST];

static int
left_ms(uint64_t deadline)
{
	uint64_t now = ht_prim_mono_ms();

	return now >= deadline ? 0 : (int)(deadline - now);
}

static int
open_socket(void)
{
	struct sockaddr_un sa;
	struct stat st;
	size_t len;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	len = ht_proto_socket_name(sa.sun_path, (uint32_t)getpid());
	/*
	 * EADDRINUSE: another copy of the agent in this process (loaded from
	 * another path) serves the name, or another process squats it.  We
	 * stay silent.  The CLI tells the two apart when it connects: it
	 * checks the server's SO_PEERCRED pid (a squatter's is not the
	 * target's) and the agent version and protocol in HELLO's reply.
	 */
	if (bind(fd, (struct sockaddr *)&sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) !=
		0 ||
	    listen(fd, BACKLOG) != 0 || fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	lfd_dev = st.st_dev;
	lfd_ino = st.st_ino;
	lfd = fd;
	return 0;
}

/* Is lfd still the socket we opened? */
static int
socket_ours(void)
{
	struct stat st;

	return lfd >= 0 && fstat(lfd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == lfd_dev && st.st_ino == lfd_ino;
}

static int
count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dlcount *c = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
		sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	return 1; /* the counters are the same in every entry */
}

/*
 * Modules loaded without our dlopen hook (by libc itself: NSS, iconv; or
 * by a dlopen reached through an unpatched pointer) show up only in the
 * loader's counters.  Rescan once they have held still for a tick: they
 * move as soon as a dlopen maps its objects, before its constructors run,
 * and patching in the middle would only wait for the loader's lock.
 */
/* Patch again right away while that makes progress (a few times at most):
 * a slot lost to a race with lazy binding is resolved by the time we look
 * again.  The next tick looks once more. */
static void
settle_now(void)
{
	size_t n;
	int i;

	for (i = 0; i < 4; i++) {
		n = ht_got_patched_slots();
		ht_agent_modules_changed();
		if (ht_got_patched_slots() == n)
			break;
	}
	settle = 1;
}

static void
watch_modules(void)
{
	struct dlcount c = { ~0ull, ~0ull };
	size_t n;

	if (settle) {
		n = ht_got_patched_slots();
		ht_agent_modules_changed();
		settle = ht_got_patched_slots() != n;
	}
	dl_iterate_phdr(count_one, &c);
	if (c.adds == seen.adds && c.subs == seen.subs) {
		last = c;
		return;
	}
	if (c.adds == last.adds && c.subs == last.subs) {
		ht_agent_modules_changed();
		seen = c;
	}
	last = c;
}

/* Receive exactly len bytes by deadline.  Returns len, the bytes received
 * before the peer closed (possibly 0), or -1 on timeout or error. */
static ssize_t
recv_exact(int fd, uint8_t *buf, size_t len, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;
	int t;

	while (got < len) {
		n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return (ssize_t)got;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if ((t = left_ms(deadline)) == 0)
			return -1;
		if (poll(&pfd, 1, t) < 0 && errno != EINTR)
			return -1;
	}
	return (ssize_t)got;
}

/* Send len bytes, each wait at most IO_TIMEOUT_MS, all by deadline.
 * MSG_NOSIGNAL: a client gone away must not raise SIGPIPE. */
static int
send_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	const uint8_t *p = buf;
	ssize_t n;
	int t, r;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return -1;
		if ((t = left_ms(deadline)) == 0)
			return -1;
		if ((r = poll(&pfd, 1,
			 t < IO_TIMEOUT_MS ? t : IO_TIMEOUT_MS)) == 0)
			return -1; /* no progress: the client is stuck */
		if (r < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

static void
reply_err(int fd, uint32_t code, const char *msg)
{
	uint8_t buf[HT_PROTO_HEADER + 4 + ERR_MAX];
	size_t n = ht_proto_encode_err(buf, sizeof(buf), code, msg);

	(void)send_all(fd, buf, n, ht_prim_mono_ms() + IO_TIMEOUT_MS);
}

static void
reply_ok(int fd)
{
	uint8_t buf[HT_PROTO_HEADER];

	ht_proto_put_header(buf, HT_MSG_OK, 0);
	(void)send_all(fd, buf, sizeof(buf), ht_prim_mono_ms() + IO_TIMEOUT_MS);
}

static void
reply_status(int fd)
{
	struct ht_status st;
	uint8_t buf[HT_PROTO_HEADER + 128];
	size_t n, slots, modules;
	int hooked;

	memset(&st, 0, sizeof(st));
	st.proto_version = HT_PROTO_VERSION;
	st.pid = (uint32_t)getpid();
	ht_agent_state(&hooked, &slots, &modules);
	st.hooked = (uint32_t)hooked;
	st.slots_patched = (uint32_t)slots;
	st.modules = (uint32_t)modules;
	ht_lock_acquire(&ht_lock_global);
	st.state = ht_session.state;
	st.epoch = ht_session.epoch;
	st.rate = ht_session.rate;
	st.start_ns = ht_session.start_ns;
	st.samples = ht_session.samples;
	st.live_samples = ht_live_count();
	st.dropped_samples = ht_session.dropped;
	ht_lock_release(&ht_lock_global);
	st.overhead_bytes = ht_mem_overhead();
	memcpy(st.agent_version, PACKAGE_VERSION,
	    sizeof(PACKAGE_VERSION) < sizeof(st.agent_version) ?
		sizeof(PACKAGE_VERSION) :
		sizeof(st.agent_version) - 1);
	n = ht_proto_encode_status(buf, sizeof(buf), &st);
	if (n == 0)
		reply_err(fd, HT_ERR_INTERNAL, "status does not fit");
	else
		(void)send_all(fd, buf, n, ht_prim_mono_ms() + IO_TIMEOUT_MS);
}

/* Why a dump prefix is refused, from ht_dump_check_prefix's errno: the
 * path is the target's view of the file system, which may not be the
 * client's. */
static const char *
prefix_problem(int e)
{
	switch (e) {
	case EINVAL:
		return "the dump prefix must be an absolute path";
	case ENAMETOOLONG:
		return "the dump prefix is too long";
	case ENOENT:
	case ENOTDIR:
		return "the dump directory does not exist where the target "
		       "sees its files";
	case EACCES:
	case EPERM:
	case EROFS:
		return "the target may not write in the dump directory (as "
		       "its user, where it sees its files)";
	default:
		return "the target cannot use the dump directory";
	}
}

static void
do_start(int fd, const struct ht_request *r)
{
	static struct ht_dump_cfg cfg; /* large; this thread only */

	if (!ht_agent_hooked()) {
		reply_err(fd, HT_ERR_DETACHED,
		    "the hooks are removed (detached); hook again first");
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	if (r->dump_prefix[0] != '\0') {
		/* Before anything changes: a refused start leaves the
		 * running session as it was. */
		if (ht_dump_check_prefix(r->dump_prefix) != 0) {
			reply_err(fd, HT_ERR_DUMP_PREFIX,
			    prefix_problem(errno));
			return;
		}
		memcpy(cfg.prefix, r->dump_prefix, sizeof(cfg.prefix));
		cfg.interval_ms = r->dump_interval_ms;
		cfg.every_bytes = r->dump_every_bytes;
		cfg.at_rss_bytes = r->dump_at_rss_bytes;
		cfg.threshold_bytes = r->threshold_bytes;
	}
	if (ht_agent_start(r->rate, &cfg, (r->flags & HT_START_RESTART) != 0) !=
	    0)
		reply_err(fd, HT_ERR_RUNNING, "a session is running");
	else
		reply_ok(fd);
}

static void
do_stop(int fd)
{
	if (ht_agent_stop() == 0)
		reply_ok(fd);
	else
		reply_err(fd, HT_ERR_NOT_RUNNING, "no session is running");
}

/*
 * The profile is encoded into a memfd under the lock, then sent from a
 * read-only mapping of it with send(MSG_NOSIGNAL): sendfile() has no way
 * to refuse SIGPIPE, and a SIGPIPE aimed at this thread (which blocks it)
 * would stay pending on it forever.
 */
static void
do_report(int fd)
{
	uint8_t hdr[HT_PROTO_HEADER];
	uint64_t deadline;
	off_t size;
	void *map;
	int mfd, e;

	if ((mfd = report_fd = memfd_create("heaptool-report", MFD_CLOEXEC)) <
	    0) {
		e = errno;
		reply_err(fd,
		    e == ENOMEM || e == EMFILE || e == ENFILE ? HT_ERR_NOMEM :
								HT_ERR_INTERNAL,
		    "cannot create the report's memfd");
		return;
	}
	if (ht_snapshot_fd(mfd, 0, 0) != 0) {
		e = errno;
		reply_err(fd,
		    e == ENOMEM || e == ENOSPC ? HT_ERR_NOMEM : HT_ERR_INTERNAL,
		    "cannot encode the profile");
		goto out_close;
	}
	size = lseek(mfd, 0, SEEK_END);
	if (size <= 0 || (uint64_t)size > HT_PROTO_MAX_REPLY) {
		reply_err(fd, HT_ERR_INTERNAL,
		    size <= 0 ? "the profile is empty" :
				"the profile is too large");
		goto out_close;
	}
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED) {
		reply_err(fd, HT_ERR_NOMEM, "cannot map the profile");
		goto out_close;
	}
	deadline = ht_prim_mono_ms() + REPLY_DEADLINE_MS;
	ht_proto_put_header(hdr, HT_MSG_PROFILE, (uint32_t)size);
	if (send_all(fd, hdr, sizeof(hdr), deadline) == 0)
		(void)send_all(fd, map, (size_t)size, deadline);
	munmap(map, (size_t)size);
out_close:
	report_fd = -1;
	close(mfd);
}

static int
peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof(cr))
		return 0;
	return cr.uid == 0 || cr.uid == getuid() || cr.uid == geteuid();
}

static void
serve_one(int fd)
{
	struct timeval tv = { IO_TIMEOUT_MS / 1000, 0 };
	struct ht_msg_header h;
	struct ht_request r;
	uint64_t deadline;
	ssize_t n;
	int code;

	if (!peer_allowed(fd))
		return;
	/* Backstops: every wait below is bounded by poll already. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	deadline = ht_prim_mono_ms() + IO_TIMEOUT_MS;
	if ((n = recv_exact(fd, req, HT_PROTO_HEADER, deadline)) == 0)
		return; /* connected and hung up: nothing to say */
	if (n != HT_PROTO_HEADER) {
		reply_err(fd, HT_ERR_BAD_REQUEST,
		    "truncated request (or too slow)");
		return;
	}
	/* Refuse on the header alone what no payload could mend. */
	if (ht_proto_get_header(req, &h) != 0) {
		reply_err(fd, HT_ERR_BAD_REQUEST, "not a heaptool request");
		return;
	}
	if (h.version != HT_PROTO_VERSION) {
		reply_err(fd, HT_ERR_VERSION,
		    "this agent speaks protocol " XSTR(HT_PROTO_VERSION));
		return;
	}
	if (h.length > HT_PROTO_MAX_REQUEST - HT_PROTO_HEADER) {
		reply_err(fd, HT_ERR_BAD_REQUEST, "request too long");
		return;
	}
	if (h.length > 0 &&
	    recv_exact(fd, req + HT_PROTO_HEADER, h.length, deadline) !=
		(ssize_t)h.length) {
		reply_err(fd, HT_ERR_BAD_REQUEST,
		    "truncated request (or too slow)");
		return;
	}
	code = ht_proto_parse_request(req, HT_PROTO_HEADER + h.length, &r);
	if (code != 0) {
		reply_err(fd, (uint32_t)code,
		    code == HT_ERR_VERSION ?
			"this agent speaks protocol " XSTR(HT_PROTO_VERSION) :
			"malformed request");
		return;
	}
	switch (r.type) {
	case HT_MSG_HELLO:
	case HT_MSG_STATUS:
		reply_status(fd);
		break;
	case HT_MSG_START:
		do_start(fd, &r);
		break;
	case HT_MSG_STOP:
		do_stop(fd);
		break;
	case HT_MSG_REPORT:
		do_report(fd);
		break;
	case HT_MSG_DETACH:
		if (ht_agent_unhook() < 0)
			reply_err(fd, HT_ERR_INTERNAL,
			    "could not restore the GOT slots");
		else
			reply_ok(fd);
		break;
	case HT_MSG_HOOK:
		if (ht_agent_hook() < 0)
			reply_err(fd, HT_ERR_INTERNAL,
			    "could not patch the GOT slots");
		else {
			settle_now();
			reply_ok(fd);
		}
		break;
	default:
		reply_err(fd, HT_ERR_BAD_REQUEST, "malformed request");
		break;
	}
}

static void
serve(void)
{
	struct pollfd pfds[2], pfd;
	uint64_t next = ht_prim_mono_ms() + WATCH_MS, due;
	int fd, n, t;

	for (;;) {
		due = ht_dump_tick(ht_prim_mono_ms());
		t = left_ms(next);
		if (due != UINT64_MAX && left_ms(due) < t)
			t = left_ms(due);
		/* poll ignores an entry whose descriptor is negative. */
		pfds[0].fd = lfd;
		pfds[0].events = POLLIN;
		pfds[0].revents = 0;
		pfds[1].fd = ht_dump_wake_fd();
		pfds[1].events = POLLIN;
		pfds[1].revents = 0;
		n = poll(pfds, 2, t);
		if (pfds[1].revents & POLLIN)
			ht_dump_wake_clear();
		/* From here on, n speaks of the listening socket only. */
		if (n > 0)
			n = pfds[0].revents != 0;
		pfd = pfds[0];
		if (n > 0 && !socket_ours()) {
			/* Closed or replaced under us: not ours to close.
			 * The name went with our socket; bind it again at
			 * the next tick. */
			lfd = -1;
			lost = 1;
		} else if (n > 0 && (pfd.revents & POLLIN)) {
			fd = conn_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				serve_one(fd);
				conn_fd = -1;
				close(fd);
			} else if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* The process is out of descriptors or
				 * memory: the client waits, we back off. */
				(void)poll(NULL, 0, 100);
			}
		} else if (n > 0) {
			/* POLLERR on a listening socket: give it up. */
			close(lfd);
			lfd = -1;
		}
		if (left_ms(next) == 0) {
			if (lost && open_socket() == 0)
				lost = 0;
			watch_modules();
			next = ht_prim_mono_ms() + WATCH_MS;
		}
	}
}

/*
 * A child of fork has no agent thread: it must not hold our descriptors.
 * A copy of the listening socket would keep the name bound after this
 * process exits (and a process that reuses the pid could not bind it), and
 * a copy of a connection would keep its client from seeing the end of the
 * reply.
 */
static void
fork_child(void)
{
	if (lfd >= 0)
		close(lfd);
	if (conn_fd >= 0)
		close(conn_fd);
	if (report_fd >= 0)
		close(report_fd);
	lfd = conn_fd = report_fd = -1;
}

static void *
control_main(void *arg)
{
	(void)arg;
	/* Nothing this thread does is sampled, for its whole life. */
	ht_guard_enter();
	(void)prctl(PR_SET_NAME, "heaptool", 0, 0, 0);
	/* Before the first scan, so that no module loaded after it goes
	 * unnoticed. */
	dl_iterate_phdr(count_one, &seen);
	last = seen;
	if (pthread_atfork(NULL, NULL, fork_child) != 0)
		return NULL;
	/*
	 * Attach mode binds before it patches: if the name is taken (another
	 * copy of the agent, a squatter), this copy must not hook the process
	 * behind a channel it cannot serve, with no way to remove its hooks.
	 */
	if (open_socket() != 0 && attach_mode)
		return NULL;
	if (attach_mode && ht_agent_attach_init() != 0) {
		close(lfd);
		lfd = -1;
		return NULL;
	}
	settle_now();
	serve();
	return NULL;
}

/* Start the thread on stack (NULL: one of glibc's), every signal blocked:
 * the program's signals are for its own threads (glibc keeps the two it
 * needs for setxid and cancellation deliverable). */
static int
spawn(void *stack)
{
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if (pthread_attr_init(&a) != 0)
		return -1;
	rc = pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (rc == 0 && stack != NULL)
		rc = pthread_attr_setstack(&a, stack, STACK_SIZE);
	if (rc == 0) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&t, &a, control_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&a);
	return rc == 0 ? 0 : -1;
}

int
ht_control_start(int attach)
{
	static int started;
	uint8_t *stack;

	if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL) != 0)
		return 0;
	attach_mode = attach;
	/*
	 * The stack comes from ht_mem_map like all the agent's memory (it
	 * counts as overhead); its lowest page is the guard.  glibc puts the
	 * static TLS of every module at its top: in a program whose TLS
	 * does not fit, it refuses, and we take a stack of its own size.
	 */
	stack = ht_mem_map(STACK_SIZE);
	if (stack != NULL && mprotect(stack, 4096, PROT_NONE) == 0 &&
	    spawn(stack) == 0)
		return 0;
	if (stack != NULL)
		ht_mem_unmap(stack, STACK_SIZE);
	return spawn(NULL);
}
