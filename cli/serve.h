/*
 * The HTTP server of heaptool serve: the endpoints a Go program's
 * net/http/pprof and a Prometheus exporter have, over the live profiles of
 * one target (live.h), served by libmicrohttpd.
 *
 *   /debug/pprof/heap   the current profile as gzip'd profile.proto
 *                       (pprof.h); ?seconds=N (1 to HT_SERVE_MAX_SECONDS):
 *                       the delta over the next N seconds, as Go serves it;
 *                       ?gc=1 is accepted and ignored (nothing to collect);
 *                       ?debug=N other than 0 (Go's legacy text) is a 400
 *   /debug/pprof/       an HTML index of the endpoints (also /debug/pprof
 *                       and /)
 *   /metrics            the Prometheus text format (metrics.h)
 *
 * Anything else is a 404; methods other than GET and HEAD a 405.  Where
 * the target cannot give a profile (gone, detached, no session), a 503
 * whose body is one line saying why; the server goes on.
 *
 * One process: a thread per connection, at most opts->connections of them
 * (libmicrohttpd closes a connection past them at once), each closed after
 * opts->timeout_s seconds without a byte from its client, so that a
 * client that sends nothing holds one thread for that long and blocks no
 * other.  The profiles are taken and written one request at a time (the
 * symbolizer is not thread-safe); a delta waits for its second profile
 * without holding anything, and gives up with a 503 when the server stops.
 */
#ifndef HT_SERVE_H
#define HT_SERVE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

#define HT_SERVE_MAX_SECONDS 300

struct ht_serve_opts {
	pid_t pid;
	uint64_t start; /* the process's start time (ht_proc) */
	/* Where the modules' files are looked for (kept by the caller for
	 * as long as the server runs). */
	struct ht_sym_opts files;
	int listen_fd;	      /* bound and listening */
	int ipv6;	      /* of AF_INET6 */
	uint64_t cache_ns;    /* how long a profile is reused */
	size_t top_sites;     /* per-site series of /metrics */
	unsigned connections; /* at once, at most */
	unsigned timeout_s;   /* idle time before a connection closes */
	int verbose;	      /* a line on stderr per request */
	/* The allocator wrappers folded in the sites' names (fold.h: the
	 * built-in list and the user's file), the caller's; or NULL. */
	struct ht_fold *fold;
};

struct ht_serve;

/*
 * Start serving on opts->listen_fd (the server owns it from then on, in
 * failure too).  Returns the server, or NULL with the reason in err.
 * Signals should be blocked in the calling thread first: the server's
 * threads inherit its mask.
 */
struct ht_serve *
ht_serve_start(const struct ht_serve_opts *opts, char *err, size_t errlen);

/* Stop: wake the deltas that wait, close the connections, free. */
void ht_serve_stop(struct ht_serve *);

#endif
