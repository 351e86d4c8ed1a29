/*
 * The control channel (control.h), served by the agent's thread
 * (ctlthread.c) in one poll loop over the listening socket, the
 * connections and the dump triggers' eventfd.  Between wake-ups it
 * patches modules the loader brought in
 * behind the dlopen hook's back, and writes the dumps whose time has come
 * (dump.h): a sample that crosses an every-bytes mark wakes it through the
 * eventfd, and its timeout is no later than the next interval dump, RSS
 * check, connection deadline or look at the loader's counters.
 *
 * No client can hold up another.  Every socket is non-blocking and the
 * loop never waits on one: there are CONNS places for connections, each
 * with its own request buffer (mapped at the first connection), and a step
 * only reads what has arrived or sends what the socket takes.  A request
 * must arrive whole within REQUEST_MS of the accept, a reply must make
 * progress every HT_CONN_STALL_MS and be sent within HT_CONN_REPLY_MS
 * (conn.h); past its deadline a
 * connection is closed.  When every place is taken, a new connection
 * drops an idle one (one whose request is not whole yet) rather than being
 * refused: the oldest of the process that holds the most.  So a client
 * that opens many connections and says nothing crowds out only itself, and
 * a client whose request has arrived is served at once.
 *
 * A profile is encoded into a memfd under ht_lock_global, mapped, and sent
 * from the mapping as fast as its reader takes it: the lock is never held
 * while a socket waits, and a reader that stops reading holds only its own
 * place.  Each report in flight is a copy of the profile in the target's
 * memory, so at most REPORTS are sent at once; one more is told ERR BUSY
 * at once rather than queued behind readers that may be slow on purpose.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "conn.h"
#include "control.h"
#include "inline.h"
#include "dump.h"
#include "jemprof.h"
#include "got.h"
#include "guard.h"
#include "lock.h"
#include "mem.h"
#include "prim.h"
#include "proto.h"
#include "record.h"
#include "session.h"
#include "snapshot.h"
#include "status.h"
#include "tables.h"
#include "timeline.h"

#define REQUEST_S  2 /* to send a whole request, from the accept */
#define REQUEST_MS (REQUEST_S * 1000)
#define WATCH_MS   1000
#define BACKLOG	   64
#define CONNS	   32 /* connections served at once */
#define REPORTS	   4  /* of them sending a profile */

#define STR(x)	#x
#define XSTR(x) STR(x)

/* A revival asks the thread to bind its socket again (it has none), and
 * the thread answers by clearing it, with bind_err set if it failed. */
static int rebind;
static int bind_err;

/* The listening socket and its identity: the program may close or dup2
 * over "its" descriptors (daemons close everything they do not know), and
 * a number that now names one of its files must never be accepted on. */
static int lfd = -1;
static dev_t lfd_dev;
static ino_t lfd_ino;
static int lost; /* it was taken from us: bind again */
/* The memfd a report is being encoded into, for fork_child. */
static int report_fd = -1;

static struct conn *conns; /* CONNS places, mapped at the first connection */
static uint64_t accepts;

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
	if (fd < 0) {
		bind_err = errno;
		return -1;
	}
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
		bind_err = errno;
		close(fd);
		errno = bind_err;
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

static void
reply_status(struct conn *c)
{
	static struct ht_status st; /* large; this thread only */
	size_t n;

	ht_status_fill(&st);
	n = ht_proto_encode_status(c->buf, sizeof(c->buf), &st);
	if (n == 0)
		ht_conn_reply_err(c, HT_ERR_INTERNAL, "status does not fit");
	else
		ht_conn_reply(c, n);
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
	case ELOOP:
		return "a symbolic link is on the dump prefix's path, which "
		       "could lead the dumps anywhere";
	case EPERM:
		/* src/safedir.c: the directory is not safe to write in. */
		return "the dump directory belongs to another user, or others "
		       "may write in it and it is not sticky: they could "
		       "replace the dumps";
	case EACCES:
	case EROFS:
		return "the target may not write in the dump directory (as "
		       "its user, where it sees its files)";
	default:
		return "the target cannot use the dump directory";
	}
}

static void
do_start(struct conn *c, const struct ht_request *r)
{
	static struct ht_dump_cfg cfg; /* large; this thread only */

	if (!ht_agent_hooked()) {
		ht_conn_reply_err(c, HT_ERR_DETACHED,
		    "the hooks are removed (detached); hook again first");
		return;
	}
	/* A start --backend got put the inline patches back: the account
	 * says so from this session on. */
	ht_inline_account(1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.final = (r->flags & HT_START_NO_FINAL) == 0;
	if (r->dump_prefix[0] != '\0') {
		/* Before anything changes: a refused start leaves the
		 * running session as it was. */
		if (ht_dump_check_prefix(r->dump_prefix) != 0) {
			ht_conn_reply_err(c, HT_ERR_DUMP_PREFIX,
			    prefix_problem(errno));
			return;
		}
		memcpy(cfg.prefix, r->dump_prefix, sizeof(cfg.prefix));
		cfg.interval_ms = r->dump_interval_ms;
		cfg.every_bytes = r->dump_every_bytes;
		cfg.at_rss_bytes = r->dump_at_rss_bytes;
		cfg.threshold_bytes = r->threshold_bytes;
	}
	switch (ht_agent_start(r->rate, r->max_samples, &cfg,
	    ((r->flags & HT_START_RESTART) ? HT_AGENT_RESTART : 0) |
		((r->flags & HT_START_FOLLOW) ? HT_AGENT_FOLLOW : 0) |
		HT_AGENT_BACKEND(HT_START_BACKEND_OF(r->flags)))) {
	case 0:
		ht_conn_reply_ok(c);
		break;
	case HT_AGENT_EBACKEND:
		ht_conn_reply_err(c, HT_ERR_BACKEND,
		    ht_agent_backend_why(HT_START_BACKEND_OF(r->flags)));
		break;
	case HT_AGENT_ENOMEM:
		ht_conn_reply_err(c, HT_ERR_NOMEM,
		    "cannot map the sample tables");
		break;
	default:
		ht_conn_reply_err(c, HT_ERR_RUNNING, "a session is running");
		break;
	}
}

static void
do_stop(struct conn *c)
{
	if (ht_agent_stop() == 0)
		ht_conn_reply_ok(c);
	else
		ht_conn_reply_err(c, HT_ERR_NOT_RUNNING,
		    "no session is running");
}

/*
 * The profile is encoded into a memfd under the lock, then sent from a
 * read-only mapping of it with sendmsg(MSG_NOSIGNAL), not sendfile(), which
 * has no way to refuse SIGPIPE.  The mapping alone keeps the memfd's pages:
 * the descriptor is closed at once, and a fork's child does not inherit
 * the mapping (MADV_DONTFORK), so neither holds a copy of the profile.
 */
static void
do_report(struct conn *c)
{
	off_t size;
	void *map;
	int mfd, e, i, n;

	/* Those whose reader has gone free their place here, not only once
	 * the loop polls them. */
	for (i = 0, n = 0; i < CONNS; i++) {
		if (conns[i].fd < 0 || conns[i].map == NULL)
			continue;
		ht_conn_flush(&conns[i]);
		n += conns[i].fd >= 0;
	}
	if (n >= REPORTS) {
		ht_conn_reply_err(c, HT_ERR_BUSY,
		    "other reports are being sent; try again");
		return;
	}
	if (__atomic_load_n(&ht_session.released, __ATOMIC_RELAXED)) {
		/* A detach gave the last profile back with the tables. */
		if (ht_agent_hooked())
			ht_conn_reply_err(c, HT_ERR_NOT_RUNNING,
			    "no session since the detach");
		else
			ht_conn_reply_err(c, HT_ERR_DETACHED,
			    "detached: the profile was released");
		return;
	}
	if ((mfd = report_fd = memfd_create("heaptool-report", MFD_CLOEXEC)) <
	    0) {
		e = errno;
		ht_conn_reply_err(c,
		    e == ENOMEM || e == EMFILE || e == ENFILE ? HT_ERR_NOMEM :
								HT_ERR_INTERNAL,
		    "cannot create the report's memfd");
		return;
	}
	/* jemalloc's samples as they are now (a no-op for the others). */
	(void)ht_jemprof_collect();
	if (ht_snapshot_fd(mfd, 0, 0) != 0) {
		e = errno;
		ht_conn_reply_err(c,
		    e == ENOMEM || e == ENOSPC ? HT_ERR_NOMEM : HT_ERR_INTERNAL,
		    "cannot encode the profile");
		goto out_close;
	}
	size = lseek(mfd, 0, SEEK_END);
	if (size <= 0 || (uint64_t)size > HT_PROTO_MAX_REPLY) {
		ht_conn_reply_err(c, HT_ERR_INTERNAL,
		    size <= 0 ? "the profile is empty" :
				"the profile is too large");
		goto out_close;
	}
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED) {
		ht_conn_reply_err(c, HT_ERR_NOMEM, "cannot map the profile");
		goto out_close;
	}
	(void)madvise(map, (size_t)size, MADV_DONTFORK);
	c->map = map;
	c->maplen = (size_t)size;
	ht_proto_put_header(c->buf, HT_MSG_PROFILE, (uint32_t)size);
	ht_conn_reply(c, HT_PROTO_HEADER);
out_close:
	report_fd = -1;
	close(mfd);
}

/* RECORD: the trace file came with it. */
static void
do_record(struct conn *c, const struct ht_request *r)
{
	struct ht_record_cfg cfg;
	struct stat st;
	int rc;

	if (c->rfd < 0 || fstat(c->rfd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ht_conn_reply_err(c, HT_ERR_BAD_REQUEST,
		    "RECORD needs a regular file's descriptor with it");
		return;
	}
	if (!ht_agent_hooked() && ht_agent_prepare() == HT_AGENT_EDETACHED) {
		ht_conn_reply_err(c, HT_ERR_DETACHED,
		    "the hooks are removed (detached); hook again first");
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = c->rfd;
	c->rfd = -1; /* the recorder's now */
	cfg.max_bytes = r->rec_max_bytes;
	cfg.buffer = r->rec_buffer;
	cfg.status_fd = -1;
	cfg.owner = c->peer; /* heaptool record: gone, the recording ends */
	rc = ht_agent_record(&cfg);
	if (rc == 0)
		ht_conn_reply_ok(c);
	else if (rc == EBUSY)
		ht_conn_reply_err(c, HT_ERR_RECORDING,
		    "a recording is running");
	else if (rc == ENOMEM || rc == HT_AGENT_ENOMEM)
		ht_conn_reply_err(c, HT_ERR_NOMEM,
		    "cannot map the recorder's buffers");
	else if (rc == HT_AGENT_EDETACHED)
		ht_conn_reply_err(c, HT_ERR_DETACHED,
		    "the hooks are removed (detached); hook again first");
	else if (rc < 0)
		ht_conn_reply_err(c, HT_ERR_INTERNAL,
		    "could not put the hooks in");
	else if (rc == ENOSPC || rc == EDQUOT)
		ht_conn_reply_err(c, HT_ERR_TRACE, "no space left");
	else if (rc == EFBIG)
		ht_conn_reply_err(c, HT_ERR_TRACE, "the file is too large");
	else
		ht_conn_reply_err(c, HT_ERR_TRACE, "a write failed");
}

/* RECSTAT: the recording's figures, after stopping it if asked. */
static void
do_recstat(struct conn *c, const struct ht_request *r)
{
	struct ht_recstat st;

	if (r->flags & HT_RECSTAT_STOP)
		ht_agent_record_stop(HT_RECORD_DONE);
	ht_record_stat(&st);
	ht_conn_reply(c, ht_proto_encode_recstat(c->buf, sizeof(c->buf), &st));
}

/* c's request is whole in buf: carry it out and put the reply in c. */
static void
serve_request(struct conn *c)
{
	struct ht_request r;
	int code;

	code = ht_proto_parse_request(c->buf, c->have, &r);
	if (code != 0) {
		ht_conn_reply_err(c, (uint32_t)code,
		    code == HT_ERR_VERSION ?
			"this agent speaks protocol " XSTR(HT_PROTO_VERSION) :
			"malformed request");
		return;
	}
	switch (r.type) {
	case HT_MSG_HELLO:
	case HT_MSG_STATUS:
		reply_status(c);
		break;
	case HT_MSG_START:
		do_start(c, &r);
		break;
	case HT_MSG_STOP:
		do_stop(c);
		break;
	case HT_MSG_REPORT:
		do_report(c);
		break;
	case HT_MSG_DETACH:
		if (ht_agent_unhook() < 0)
			ht_conn_reply_err(c, HT_ERR_INTERNAL,
			    "could not restore the GOT slots");
		else {
			ht_inline_account(0);
			ht_conn_reply_ok(c);
		}
		break;
	case HT_MSG_RECORD:
		do_record(c, &r);
		break;
	case HT_MSG_RECSTAT:
		do_recstat(c, &r);
		break;
	case HT_MSG_HOOK:
		if (ht_agent_hook() < 0)
			ht_conn_reply_err(c, HT_ERR_INTERNAL,
			    "could not patch the GOT slots");
		else if (ht_inline_sync() != 0)
			ht_conn_reply_err(c, HT_ERR_INTERNAL,
			    "could not arm the inline hooks");
		else {
			ht_inline_account(1);
			settle_now();
			ht_conn_reply_ok(c);
		}
		break;
	default:
		ht_conn_reply_err(c, HT_ERR_BAD_REQUEST, "malformed request");
		break;
	}
}

/*
 * Read what has arrived of c's request, never past its end (the header
 * says where), and serve it once it is whole.  What no payload could mend
 * is refused on the header alone.
 */
static void
conn_read(struct conn *c)
{
	struct ht_msg_header h;
	ssize_t n;

	while (!c->sending) {
		n = ht_conn_recv(c);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 || (n == 0 && c->have == 0)) {
			/* Connected and hung up: nothing to say. */
			ht_conn_close(c);
			return;
		}
		if (n == 0) {
			ht_conn_reply_err(c, HT_ERR_BAD_REQUEST,
			    "truncated request");
			return;
		}
		c->have += (size_t)n;
		if (c->have < c->need)
			continue;
		if (c->need == HT_PROTO_HEADER) {
			if (ht_proto_get_header(c->buf, &h) != 0) {
				ht_conn_reply_err(c, HT_ERR_BAD_REQUEST,
				    "not a heaptool request");
				return;
			}
			if (h.version != HT_PROTO_VERSION) {
				ht_conn_reply_err(c, HT_ERR_VERSION,
				    "this agent speaks protocol " XSTR(
					HT_PROTO_VERSION));
				return;
			}
			if (h.length > HT_PROTO_MAX_REQUEST - HT_PROTO_HEADER) {
				ht_conn_reply_err(c, HT_ERR_BAD_REQUEST,
				    "request too long");
				return;
			}
			c->need = HT_PROTO_HEADER + h.length;
			if (c->have < c->need)
				continue;
		}
		serve_request(c);
	}
}

/* The socket of c may have something for us (or room for its reply). */
static void
step(struct conn *c)
{
	if (!ht_conn_ours(c)) {
		ht_conn_close(c); /* not ours to close: forgotten */
		return;
	}
	if (!c->sending)
		conn_read(c);
	if (c->fd >= 0 && c->sending && ht_conn_send(c) != 0)
		ht_conn_close(c);
}

/*
 * A place for a new connection: a free one, else that of an idle
 * connection, dropped: of the process with the most idle connections, the
 * oldest.  NULL if every place is sending a reply.
 */
static struct conn *
place(void)
{
	struct conn *c, *victim = NULL;
	int i, j, k, most = 0;

	for (i = 0; i < CONNS; i++)
		if (conns[i].fd < 0)
			return &conns[i];
	for (i = 0; i < CONNS; i++) {
		c = &conns[i];
		if (c->sending)
			continue;
		for (j = 0, k = 0; j < CONNS; j++)
			k += !conns[j].sending && conns[j].peer == c->peer;
		if (k > most || (k == most && c->seq < victim->seq)) {
			most = k;
			victim = c;
		}
	}
	if (victim != NULL)
		ht_conn_drop(victim, HT_ERR_BUSY,
		    "too many connections: the oldest idle one is dropped");
	return victim;
}

/* The places, mapped at the first connection (and until one can be). */
static int
map_places(void)
{
	struct conn *t;
	int i;

	if (conns != NULL)
		return 0;
	if ((t = ht_mem_map(CONNS * sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < CONNS; i++) {
		t[i].fd = -1;
		t[i].rfd = -1;
	}
	conns = t;
	return 0;
}

/*
 * Take in fd, just accepted: only the target's user and root are served
 * (anyone else is closed without a word).  Its request may be there
 * already: it is served before anything else can take its place.
 */
static void
conn_new(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat st;
	struct conn *c;
	uint8_t buf[HT_PROTO_HEADER + 64];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof(cr) ||
	    (cr.uid != 0 && cr.uid != getuid() && cr.uid != geteuid()) ||
	    fstat(fd, &st) != 0 || map_places() != 0) {
		close(fd);
		return;
	}
	if ((c = place()) == NULL) {
		(void)send(fd, buf,
		    ht_proto_encode_err(buf, sizeof(buf), HT_ERR_BUSY,
			"too many replies being sent; try again"),
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	c->ino = st.st_ino;
	c->peer = cr.pid;
	c->seq = accepts++;
	c->deadline = ht_prim_mono_ms() + REQUEST_MS;
	c->sending = 0;
	c->have = 0;
	c->need = HT_PROTO_HEADER;
	c->len = c->sent = c->maplen = 0;
	c->map = NULL;
	c->rfd = -1;
	__atomic_store_n(&c->fd, fd, __ATOMIC_RELEASE);
	step(c);
}

/* Accept what waits on the listening socket, CONNS connections at most,
 * so that a flood of them cannot keep the loop from its deadlines. */
static void
accept_some(void)
{
	int fd, i;

	for (i = 0; i < CONNS; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			conn_new(fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* The process is out of descriptors or memory: the
			 * client waits, we back off. */
			(void)poll(NULL, 0, 100);
		}
		return;
	}
}

/* Close the connections past their deadline: those whose request is not
 * whole are told so.  Returns the next deadline (UINT64_MAX: none). */
static uint64_t
expire(void)
{
	uint64_t now = ht_prim_mono_ms(), next = UINT64_MAX;
	struct conn *c;
	int i;

	for (i = 0; conns != NULL && i < CONNS; i++) {
		c = &conns[i];
		if (c->fd < 0)
			continue;
		if (now < c->deadline) {
			if (c->deadline < next)
				next = c->deadline;
		} else if (!c->sending)
			ht_conn_drop(c, HT_ERR_BAD_REQUEST,
			    "no whole request within " XSTR(REQUEST_S) " s");
		else
			ht_conn_close(
			    c); /* stalled, or past HT_CONN_REPLY_MS */
	}
	return next;
}

static void
serve(void)
{
	struct pollfd pfds[3 + CONNS];
	struct conn *at[CONNS];
	uint64_t next = ht_prim_mono_ms() + WATCH_MS, due, soon;
	int i, k, n;

	for (;;) {
		if (__atomic_load_n(&rebind, __ATOMIC_ACQUIRE)) {
			if (lfd < 0 && open_socket() == 0)
				lost = 0;
			__atomic_store_n(&rebind, 0, __ATOMIC_RELEASE);
		}
		soon = expire();
		due = ht_dump_tick(ht_prim_mono_ms());
		if (due < soon)
			soon = due;
		due = ht_timeline_tick(ht_prim_mono_ms());
		if (due < soon)
			soon = due;
		due = ht_agent_record_tick(ht_prim_mono_ms());
		if (due < soon)
			soon = due;
		if (next < soon)
			soon = next;
		/* poll ignores an entry whose descriptor is negative. */
		pfds[0].fd = lfd;
		pfds[0].events = POLLIN;
		pfds[1].fd = ht_dump_wake_fd();
		pfds[1].events = POLLIN;
		pfds[2].fd = ht_record_wake_fd();
		pfds[2].events = POLLIN;
		for (i = 0, k = 0; conns != NULL && i < CONNS; i++) {
			if (conns[i].fd < 0)
				continue;
			pfds[3 + k].fd = conns[i].fd;
			pfds[3 + k].events = conns[i].sending ? POLLOUT :
								POLLIN;
			at[k++] = &conns[i];
		}
		for (i = 0; i < 3 + k; i++)
			pfds[i].revents = 0;
		n = poll(pfds, (nfds_t)(3 + k), left_ms(soon));
		if (n > 0 && (pfds[1].revents & POLLIN))
			ht_dump_wake_clear();
		if (n > 0 && (pfds[2].revents & POLLIN))
			ht_record_wake_clear();
		/* The connections first: one whose request is whole is
		 * served before a new one could take its place. */
		for (i = 0; n > 0 && i < k; i++)
			if (pfds[3 + i].revents != 0 &&
			    at[i]->fd == pfds[3 + i].fd)
				step(at[i]);
		if (n > 0 && pfds[0].revents != 0) {
			if (!socket_ours()) {
				/* Closed or replaced under us: not ours to
				 * close.  The name went with our socket;
				 * bind it again at the next tick. */
				lfd = -1;
				lost = 1;
			} else if (pfds[0].revents & POLLIN)
				accept_some();
			else {
				/* POLLERR on a listening socket: give it
				 * up. */
				close(lfd);
				lfd = -1;
			}
		}
		if (left_ms(next) == 0) {
			if (lost && open_socket() == 0)
				lost = 0;
			watch_modules();
			next = ht_prim_mono_ms() + WATCH_MS;
		}
	}
}

int
ht_control_bind(void)
{
	/* Before the first scan, so that no module loaded after it goes
	 * unnoticed. */
	dl_iterate_phdr(count_one, &seen);
	last = seen;
	return open_socket() == 0 ? 0 : bind_err;
}

void
ht_control_unbind(void)
{
	if (lfd >= 0)
		close(lfd);
	lfd = -1;
}

void
ht_control_serve(void)
{
	settle_now();
	serve();
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

long
ht_control_rebind(uint64_t deadline)
{
	bind_err = 0;
	__atomic_store_n(&rebind, 1, __ATOMIC_RELEASE);
	ht_dump_wake();
	while (__atomic_load_n(&rebind, __ATOMIC_ACQUIRE) &&
	    ht_prim_mono_ms() < deadline)
		sleep_ms(1);
	if (__atomic_load_n(&rebind, __ATOMIC_ACQUIRE))
		return HT_REVIVE(HT_REVIVE_PENDING, 0);
	if (__atomic_load_n(&lfd, __ATOMIC_ACQUIRE) < 0)
		return HT_REVIVE(HT_REVIVE_ESOCKET, bind_err);
	return HT_REVIVE(HT_REVIVE_SERVING, 0);
}

/*
 * In the child of a fork, which has no agent thread: it must not hold our
 * descriptors.  A copy of the listening socket would keep the name bound
 * after this process exits (and a process that reuses the pid could not
 * bind it), and a copy of a connection would keep its client from seeing
 * the end of the reply.  Each is closed only if it is still ours: the
 * number may be one of the program's files by now.
 */
void
ht_control_forget(void)
{
	int i;

	if (socket_ours())
		close(lfd);
	if (report_fd >= 0)
		close(report_fd);
	lfd = report_fd = -1;
	lost = 0;
	for (i = 0; conns != NULL && i < CONNS; i++) {
		if (ht_conn_ours(&conns[i]))
			close(conns[i].fd);
		conns[i].fd = -1;
		if (conns[i].rfd >= 0)
			close(conns[i].rfd);
		conns[i].rfd = -1;
		/* MADV_DONTFORK: the parent's report is not mapped here. */
		conns[i].map = NULL;
		conns[i].maplen = 0;
	}
	__atomic_store_n(&rebind, 0, __ATOMIC_RELAXED);
}
