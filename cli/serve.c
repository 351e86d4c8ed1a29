/*
 * The HTTP server of heaptool serve (see serve.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diff.h"
#include "live.h"
#include "metrics.h"
#include "pprof.h"
#include "serve.h"
#include "view.h"

struct ht_serve {
	struct ht_serve_opts opts;
	struct MHD_Daemon *daemon;
	struct ht_live *live;
	/* Held while a profile is taken or written: the live handle and
	 * the symbolizers are not thread-safe. */
	pthread_mutex_t lock;
	/* Guards stopping and inflight; deltas wait on wake, the stop on
	 * idle. */
	pthread_mutex_t stop_lock;
	pthread_cond_t wake, idle;
	int stopping;
	unsigned inflight; /* requests answered but not yet sent */
};

/* How long a stop waits for the requests in flight to be sent. */
#define STOP_GRACE_S 5

/* A response body: malloc'd bytes, or the one-line reason of a failure
 * with its status. */
struct body {
	char *buf;
	size_t len;
	unsigned status;
	const char *type;
};

static const char index_html[] =
    "<!DOCTYPE html>\n"
    "<html><head><meta charset=\"utf-8\"><title>heaptool serve</title>"
    "</head>\n<body>\n"
    "<p>heaptool serve: the heap profile of process %ld "
    "(see heaptool(1), SERVE).</p>\n"
    "<ul>\n"
    "<li><a href=\"/debug/pprof/heap\">/debug/pprof/heap</a>: the heap "
    "profile, gzip'd profile.proto (go tool pprof, Parca, Pyroscope); "
    "<a href=\"/debug/pprof/heap?seconds=30\">?seconds=N</a>: what "
    "changed over N seconds</li>\n"
    "<li><a href=\"/metrics\">/metrics</a>: totals, modules and the "
    "largest sites, in the Prometheus text format</li>\n"
    "</ul>\n</body></html>\n";

static void fail(struct body *b, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(struct body *b, unsigned status, const char *fmt, ...)
{
	va_list ap;
	char line[1024];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		line[0] = '\0';
	free(b->buf);
	b->buf = NULL;
	b->len = 0;
	if (asprintf(&b->buf, "heaptool: %s\n", line) >= 0)
		b->len = strlen(b->buf);
	else
		b->buf = NULL;
	b->status = status;
	b->type = "text/plain; charset=utf-8";
}

/* Open a memory stream for the body.  NULL after fail(). */
static FILE *
body_open(struct body *b)
{
	FILE *fp;

	if ((fp = open_memstream(&b->buf, &b->len)) == NULL)
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: %s",
		    strerror(errno));
	return fp;
}

/* Close the body's stream after a writer returned rc (errno set when
 * -1); on failure the body is the reason, what names the writer. */
static void
body_close(struct body *b, FILE *fp, int rc, const char *what)
{
	int e = errno;

	if (fclose(fp) != 0 && rc == 0) {
		e = errno;
		rc = -1;
	}
	if (rc != 0)
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: %s: %s", what,
		    strerror(e));
	else
		b->status = MHD_HTTP_OK;
}

/* With s->lock held: the view of the current profile into v (sites named
 * as report names them).  Returns 0, or -1 after filling b with the error
 * (503: the process is gone or has no agent). */
static int
current_view(struct ht_serve *s, struct body *b, struct ht_view *v)
{
	const struct ht_live_snap *snap;
	struct ht_view_opts vopts;
	char err[1024];

	memset(&vopts, 0, sizeof(vopts));
	vopts.fold = s->opts.fold;
	if (ht_live_current(s->live, &snap, err, sizeof(err)) != 0) {
		fail(b, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err);
		return -1;
	}
	if (ht_view_build(v, snap->prof, snap->sym, &vopts) != 0) {
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

static void
metrics(struct ht_serve *s, struct body *b)
{
	struct ht_view v;
	FILE *fp;
	int rc;

	pthread_mutex_lock(&s->lock);
	if (current_view(s, b, &v) != 0)
		goto out;
	if ((fp = body_open(b)) != NULL) {
		rc = ht_metrics_write(fp, &v, s->opts.top_sites);
		body_close(b, fp, rc, "metrics");
		b->type = HT_METRICS_CONTENT_TYPE;
	}
	ht_view_free(&v);
out:
	pthread_mutex_unlock(&s->lock);
}

/* The current profile as pprof. */
static void
heap_now(struct ht_serve *s, struct body *b)
{
	struct ht_view v;
	FILE *fp;
	int rc;

	pthread_mutex_lock(&s->lock);
	if (current_view(s, b, &v) != 0)
		goto out;
	/* In the order of the sites, as heaptool report does: if the
	 * symbolizer's limit is reached, the largest sites have names. */
	if (ht_view_symbolize(&v) == 0 && (fp = body_open(b)) != NULL) {
		rc = ht_pprof_write(fp, &v);
		body_close(b, fp, rc, "pprof");
	} else if (b->buf == NULL)
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: %s",
		    strerror(errno));
	ht_view_free(&v);
out:
	pthread_mutex_unlock(&s->lock);
}

/* Wait seconds, or less if the server stops.  0, or -1 when it stops. */
static int
wait_seconds(struct ht_serve *s, unsigned seconds)
{
	struct timespec until;
	int stopping;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	pthread_mutex_lock(&s->stop_lock);
	while (!s->stopping &&
	    pthread_cond_timedwait(&s->wake, &s->stop_lock, &until) !=
		ETIMEDOUT)
		;
	stopping = s->stopping;
	pthread_mutex_unlock(&s->stop_lock);
	return stopping ? -1 : 0;
}

/* What changed over the next seconds, as pprof. */
static void
heap_delta(struct ht_serve *s, struct body *b, unsigned seconds,
    const char *url)
{
	struct ht_live_snap p0, p1;
	struct ht_diff_opts dopts;
	struct ht_diff d;
	char err[1024];
	FILE *fp;
	int rc;

	memset(&p1, 0, sizeof(p1));
	pthread_mutex_lock(&s->lock);
	rc = ht_live_take(s->live, &p0, err, sizeof(err));
	pthread_mutex_unlock(&s->lock);
	if (rc != 0) {
		fail(b, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err);
		return;
	}
	if (s->opts.verbose)
		fprintf(stderr,
		    "heaptool: serve: %s: first profile taken, the "
		    "second in %u s\n",
		    url, seconds);
	if (wait_seconds(s, seconds) != 0) {
		fail(b, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "serve: stopping; ask the next heaptool serve");
		goto out;
	}
	memset(&dopts, 0, sizeof(dopts));
	dopts.fold = s->opts.fold;
	pthread_mutex_lock(&s->lock);
	if (ht_live_take(s->live, &p1, err, sizeof(err)) != 0)
		fail(b, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err);
	else if (p1.prof->meta.epoch != p0.prof->meta.epoch)
		/* Two sessions' figures do not subtract. */
		fail(b, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "target %ld: a new session (%" PRIu64 ") began during "
		    "the %u s; ask again",
		    (long)s->opts.pid, p1.prof->meta.epoch, seconds);
	else if (ht_diff_build(&d, p0.prof, p0.sym, p1.prof, p1.sym, &dopts) !=
	    0)
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: %s",
		    strerror(errno));
	else {
		if ((fp = body_open(b)) != NULL) {
			rc = ht_pprof_write_delta(fp, &d);
			body_close(b, fp, rc, "pprof");
		}
		ht_diff_free(&d);
	}
	pthread_mutex_unlock(&s->lock);
out:
	ht_live_snap_free(&p1);
	ht_live_snap_free(&p0);
}

static void
heap(struct ht_serve *s, struct MHD_Connection *conn, struct body *b,
    const char *url)
{
	const char *secs, *debug;
	char *end;
	unsigned long n;

	debug =
	    MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "debug");
	if (debug != NULL && strcmp(debug, "0") != 0 && debug[0] != '\0') {
		fail(b, MHD_HTTP_BAD_REQUEST,
		    "serve: debug=%.40s: only the profile.proto format "
		    "(debug=0) is served; drop debug",
		    debug);
		return;
	}
	/* gc=1 asks Go to collect garbage first: nothing to collect here,
	 * so it is accepted and changes nothing. */
	secs =
	    MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	if (secs == NULL || secs[0] == '\0') {
		heap_now(s, b);
		return;
	}
	errno = 0;
	n = strtoul(secs, &end, 10);
	if (errno != 0 || *end != '\0' || secs[0] < '0' || secs[0] > '9' ||
	    n < 1 || n > HT_SERVE_MAX_SECONDS) {
		fail(b, MHD_HTTP_BAD_REQUEST,
		    "serve: seconds=%.40s: not a number of seconds from 1 to "
		    "%d",
		    secs, HT_SERVE_MAX_SECONDS);
		return;
	}
	heap_delta(s, b, (unsigned)n, url);
}

static void
index_page(struct ht_serve *s, struct body *b)
{
	if (asprintf(&b->buf, index_html, (long)s->opts.pid) < 0) {
		b->buf = NULL;
		fail(b, MHD_HTTP_INTERNAL_SERVER_ERROR, "serve: out of memory");
		return;
	}
	b->len = strlen(b->buf);
	b->status = MHD_HTTP_OK;
	b->type = "text/html; charset=utf-8";
}

/* Send b (whose buffer the response takes over). */
static enum MHD_Result
send_body(struct MHD_Connection *conn, struct body *b, int allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	static char none[] = "heaptool: serve: out of memory\n";

	if (b->buf == NULL)
		r = MHD_create_response_from_buffer(sizeof(none) - 1, none,
		    MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(b->len, b->buf,
		    MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(b->buf);
		return MHD_NO;
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, b->type);
	(void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (b->status == MHD_HTTP_OK &&
	    strcmp(b->type, "application/octet-stream") == 0)
		(void)MHD_add_response_header(r,
		    MHD_HTTP_HEADER_CONTENT_DISPOSITION,
		    "attachment; filename=\"heap\"");
	if (allow)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
		    "GET, HEAD");
	ret = MHD_queue_response(conn, b->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
	struct ht_serve *s = cls;
	struct body b;
	int allow = 0;
	uint64_t t0 = ht_live_now_ns();

	(void)version;
	(void)upload_data;
	memset(&b, 0, sizeof(b));
	/* Answered at the first call; a body that comes after (a POST's)
	 * is read and dropped. */
	if (*req_cls != NULL) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* Counted until sent (completed()), so that a stop lets it go. */
	*req_cls = s;
	pthread_mutex_lock(&s->stop_lock);
	s->inflight++;
	pthread_mutex_unlock(&s->stop_lock);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		fail(&b, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "serve: %.20s: not a method served here; use GET or HEAD",
		    method);
		allow = 1;
	} else if (strcmp(url, "/debug/pprof/heap") == 0) {
		b.type = "application/octet-stream";
		heap(s, conn, &b, url);
	} else if (strcmp(url, "/metrics") == 0)
		metrics(s, &b);
	else if (strcmp(url, "/debug/pprof/") == 0 ||
	    strcmp(url, "/debug/pprof") == 0 || strcmp(url, "/") == 0)
		index_page(s, &b);
	else
		fail(&b, MHD_HTTP_NOT_FOUND,
		    "serve: %.200s: no such page; see /debug/pprof/", url);
	if (s->opts.verbose)
		fprintf(stderr,
		    "heaptool: serve: %.20s %.200s: %u, %zu bytes, "
		    "%.3f s\n",
		    method, url, b.status, b.len,
		    (double)(ht_live_now_ns() - t0) / 1e9);
	return send_body(conn, &b, allow);
}

static void
completed(void *cls, struct MHD_Connection *conn, void **req_cls,
    enum MHD_RequestTerminationCode why)
{
	struct ht_serve *s = cls;

	(void)conn;
	(void)why;
	if (*req_cls == NULL)
		return;
	*req_cls = NULL;
	pthread_mutex_lock(&s->stop_lock);
	if (--s->inflight == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->stop_lock);
}

struct ht_serve *
ht_serve_start(const struct ht_serve_opts *opts, char *err, size_t errlen)
{
	struct ht_serve *s;
	unsigned flags;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "serve: out of memory");
		close(opts->listen_fd);
		return NULL;
	}
	s->opts = *opts;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->stop_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&s->wake, &ca);
		pthread_cond_init(&s->idle, &ca);
		pthread_condattr_destroy(&ca);
	}
	if ((s->live = ht_live_new(opts->pid, opts->start, &opts->files,
		 opts->cache_ns)) == NULL) {
		snprintf(err, errlen, "serve: out of memory");
		close(opts->listen_fd);
		goto out_free;
	}
	/* A thread per connection: a delta that waits, or a client that
	 * sends nothing, holds its own thread only.  poll(): no limit on
	 * descriptor numbers. */
	flags = MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC;
	if (opts->ipv6)
		flags |= MHD_USE_IPv6;
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)opts->listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)opts->connections,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)opts->timeout_s,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_END);
	if (s->daemon == NULL) {
		snprintf(err, errlen,
		    "serve: libmicrohttpd did not start (%s); check the "
		    "address and the limits on threads",
		    strerror(errno));
		close(opts->listen_fd);
		goto out_free;
	}
	return s;
out_free:
	ht_live_free(s->live);
	pthread_cond_destroy(&s->idle);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->stop_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

void
ht_serve_stop(struct ht_serve *s)
{
	struct timespec until;
	MHD_socket fd;

	if (s == NULL)
		return;
	/* No new connection; the deltas that wait are woken and answer
	 * 503; what is answered is given a few seconds to be sent, since
	 * MHD_stop_daemon closes the connections as they are. */
	fd = MHD_quiesce_daemon(s->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += STOP_GRACE_S;
	pthread_mutex_lock(&s->stop_lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->wake);
	while (s->inflight > 0 &&
	    pthread_cond_timedwait(&s->idle, &s->stop_lock, &until) !=
		ETIMEDOUT)
		;
	pthread_mutex_unlock(&s->stop_lock);
	MHD_stop_daemon(s->daemon);
	ht_live_free(s->live);
	pthread_cond_destroy(&s->idle);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->stop_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
