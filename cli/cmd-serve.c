/*
 * heaptool serve: serve the live profile of a target over HTTP, as a Go
 * program's net/http/pprof and a Prometheus exporter do (serve.h), until
 * SIGINT or SIGTERM.
 *
 * The listening socket is made here, so that an address in use or one we
 * may not bind is said in our words, and so that port 0 can be asked for
 * and the port the kernel chose printed.  Only a loopback address is
 * listened on unless --allow-remote says otherwise: a heap profile names
 * the functions and files of the process, and this server has no
 * authentication.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "proc.h"
#include "serve.h"
#include "size.h"
#include "target.h"

static const char serve_usage[] =
    "usage: heaptool serve [-p PID] --listen [ADDR:]PORT [--allow-remote]\n"
    "                      [--top N] [--cache DUR] [--connections N]\n"
    "                      [--timeout DUR] [--verbose] [--sysroot DIR]\n"
    "                      [--debug-dir DIR]...\n"
    "\n"
    "Serve the live heap profile of the target (PID, or the current target\n"
    "of heaptool attach) over HTTP until interrupted: /debug/pprof/heap (as\n"
    "Go's net/http/pprof: gzip'd profile.proto; ?seconds=N for what changed\n"
    "over N seconds), /debug/pprof/ (an index) and /metrics (Prometheus).\n"
    "\n"
    "  -p, --pid PID        serve the running process PID\n"
    "  -l, --listen ADDR:PORT  the address to listen on (ADDR defaults to\n"
    "                       127.0.0.1; [::1]:PORT for IPv6; PORT 0 picks a\n"
    "                       free port); printed on stdout once listening\n"
    "      --allow-remote   allow an address other than loopback (anyone\n"
    "                       who reaches it reads the profile)\n"
    "  -t, --top N          per-site series of /metrics, the largest\n"
    "                       (default 20; the rest summed in one)\n"
    "      --cache DUR      reuse a profile for DUR (default 1s; 0: none)\n"
    "      --connections N  clients served at once (default 16)\n"
    "      --timeout DUR    close a connection idle for DUR (default 10s)\n"
    "  -v, --verbose        a line on stderr for each "
    "request\n" HT_CMD_FILES_HELP "  -h, --help           show this help\n"
    "\n"
    "See man heaptool (Serving over HTTP) for the pages and scrape configs.\n";

enum {
	OPT_ALLOW_REMOTE = 256,
	OPT_CACHE,
	OPT_CONNECTIONS,
	OPT_TIMEOUT,
};

static const struct option serve_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "listen", required_argument, NULL, 'l' },
	{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
	{ "top", required_argument, NULL, 't' },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "verbose", no_argument, NULL, 'v' },
	HT_CMD_FILES_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A listening address, parsed. */
struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int ipv6;
};

/*
 * Parse [ADDR:]PORT, [IPV6]:PORT or :PORT (ADDR a numeric address or
 * "localhost"; none means 127.0.0.1) into *a.  Returns 0, or -1 after
 * printing why.
 */
static int
parse_listen(const char *s, struct addr *a)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
	char host[INET6_ADDRSTRLEN + 8];
	const char *port, *colon;
	char *end;
	unsigned long p;
	size_t hlen;

	memset(a, 0, sizeof(*a));
	if (s[0] == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			goto bad;
		hlen = (size_t)(colon - s - 1);
		port = colon + 2;
		if (hlen == 0 || hlen >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hlen);
		host[hlen] = '\0';
		a->ipv6 = 1;
	} else if ((colon = strrchr(s, ':')) != NULL) {
		hlen = (size_t)(colon - s);
		port = colon + 1;
		if (hlen >= sizeof(host) || memchr(s, ':', hlen) != NULL)
			goto bad; /* an IPv6 address needs its brackets */
		memcpy(host, s, hlen);
		host[hlen] = '\0';
	} else {
		host[0] = '\0';
		port = s;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || *end != '\0' || errno != 0 ||
	    p > 65535)
		goto bad;
	if (host[0] == '\0' || strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (a->ipv6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			goto bad;
		a->len = sizeof(*in6);
	} else {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			goto bad;
		a->len = sizeof(*in);
	}
	return 0;
bad:
	ht_usage("serve: --listen %s: not ADDR:PORT; use e.g. 127.0.0.1:6060, "
		 ":6060 or [::1]:6060 (numeric addresses)",
	    s);
	return -1;
}

static int
is_loopback(const struct addr *a)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)&a->ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->ss;

	if (!a->ipv6)
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
	    in6->sin6_addr.s6_addr[12] == 127;
}

/* The address as text, "127.0.0.1:6060" or "[::1]:6060". */
static void
format_addr(const struct addr *a, char *buf, size_t len)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)&a->ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->ss;
	char host[INET6_ADDRSTRLEN];

	if (a->ipv6) {
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	}
}

/* A socket listening on *a (its port, if 0, the one the kernel chose).
 * Returns it, or -1 after printing why. */
static int
listen_on(struct addr *a, const char *text)
{
	int fd, one = 1;

	if ((fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		ht_warn("serve: socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ipv6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (struct sockaddr *)&a->ss, a->len) != 0) {
		ht_warn("serve: --listen %s: %s; %s", text, strerror(errno),
		    errno == EADDRINUSE ?
			"pick another port (0: any free one)" :
			"pick an address of this machine");
		close(fd);
		return -1;
	}
	if (listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a->ss, &a->len) != 0) {
		ht_warn("serve: --listen %s: %s", text, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Parse a positive count (1 to max) into *n.  0, or -1. */
static int
parse_count(const char *s, unsigned long max, unsigned long *n)
{
	char *end;

	errno = 0;
	*n = strtoul(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && *end == '\0' && errno == 0 &&
		*n >= 1 && *n <= max ?
	    0 :
	    -1;
}

int
ht_cmd_serve(int argc, char **argv)
{
	struct ht_serve_opts so;
	struct ht_cmd_print print;
	struct ht_cmd_files files;
	struct ht_serve *s;
	struct ht_proc proc;
	struct addr a;
	const char *popt = NULL, *listen_arg = NULL;
	char err[1024], where[INET6_ADDRSTRLEN + 16];
	unsigned long n;
	uint64_t ms;
	sigset_t sigs;
	int c, sig, rc, remote = 0;
	pid_t pid;

	memset(&so, 0, sizeof(so));
	memset(&print, 0, sizeof(print));
	memset(&files, 0, sizeof(files));
	so.cache_ns = 1000000000u;
	so.top_sites = 20;
	so.connections = 16;
	so.timeout_s = 10;
	ht_cmd_getopt_reset();
	while ((c = getopt_long(argc, argv, ":p:l:t:vh", serve_options,
		    NULL)) != -1) {
		switch (c) {
		case 'h':
			return ht_cmd_help(serve_usage);
		case 'p':
			popt = optarg;
			break;
		case 'l':
			listen_arg = optarg;
			break;
		case OPT_ALLOW_REMOTE:
			remote = 1;
			break;
		case 't':
			if (parse_count(optarg, 100000, &n) != 0)
				return ht_usage("serve: --top %s: not a count "
						"from 1 to 100000",
				    optarg);
			so.top_sites = n;
			break;
		case OPT_CACHE:
			if (ht_duration_parse(optarg, &ms) != 0 || ms > 3600000)
				return ht_usage("serve: --cache %s: not a "
						"duration up to 1h; use e.g. "
						"500ms, 2s or 0",
				    optarg);
			so.cache_ns = ms * 1000000u;
			break;
		case OPT_CONNECTIONS:
			if (parse_count(optarg, 1024, &n) != 0)
				return ht_usage("serve: --connections %s: not "
						"a count from 1 to 1024",
				    optarg);
			so.connections = (unsigned)n;
			break;
		case OPT_TIMEOUT:
			if (ht_duration_parse(optarg, &ms) != 0 || ms < 1000 ||
			    ms > 3600000)
				return ht_usage(
				    "serve: --timeout %s: not a "
				    "duration from 1s to 1h; use e.g. 10s",
				    optarg);
			so.timeout_s = (unsigned)(ms / 1000);
			break;
		case 'v':
			so.verbose = 1;
			break;
		default:
			if ((rc = ht_cmd_files_opt(c, optarg, &files)) == -1)
				rc = ht_cmd_opt_error("serve", c, argv);
			if (rc != HT_EXIT_OK) {
				ht_cmd_files_free(&files);
				return rc;
			}
			break;
		}
	}
	rc = HT_EXIT_USAGE;
	if (optind < argc) {
		ht_usage("serve: %s: unexpected argument; give the process "
			 "with -p PID",
		    argv[optind]);
		goto out_files;
	}
	if (listen_arg == NULL) {
		ht_usage("serve: no address; give --listen [ADDR:]PORT, e.g. "
			 "--listen 127.0.0.1:6060");
		goto out_files;
	}
	if (parse_listen(listen_arg, &a) != 0)
		goto out_files;
	if (!remote && !is_loopback(&a)) {
		ht_usage("serve: --listen %s: not a loopback address, and "
			 "anyone who reaches it would read the profile; add "
			 "--allow-remote to mean it",
		    listen_arg);
		goto out_files;
	}
	if ((rc = ht_cmd_files_env(&files)) != HT_EXIT_OK)
		goto out_files;
	/* The sites are named as report names them: allocator wrappers
	 * folded (the built-in list and the user's file). */
	if ((rc = ht_cmd_print_fold(&print)) != HT_EXIT_OK)
		goto out_files;
	so.fold = print.fold;
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		goto out_files;
	rc = HT_EXIT_FAIL;
	if (ht_proc_read(pid, &proc) != 0) {
		ht_warn("serve: target %ld: no such process (it exited); "
			"check the PID",
		    (long)pid);
		goto out_files;
	}
	so.pid = pid;
	so.start = proc.start_time;
	ht_cmd_files_sym(&files, &so.files);
	so.ipv6 = a.ipv6;
	if ((so.listen_fd = listen_on(&a, listen_arg)) < 0)
		goto out_files;
	/* Blocked before the server's threads exist, which inherit the
	 * mask: the signals come to sigwait here.  SIGPIPE: a client gone
	 * mid-response is an error of that write only. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if ((s = ht_serve_start(&so, err, sizeof(err))) == NULL) {
		ht_warn("%s", err);
		goto out_files;
	}
	format_addr(&a, where, sizeof(where));
	printf("heaptool serve: process %ld on http://%s/debug/pprof/\n",
	    (long)pid, where);
	if (fflush(stdout) != 0)
		ht_warn("serve: stdout: %s", strerror(errno));
	sigdelset(&sigs, SIGPIPE);
	do {
		if (sigwait(&sigs, &sig) != 0)
			sig = SIGTERM;
	} while (sig != SIGINT && sig != SIGTERM);
	ht_serve_stop(s);
	rc = HT_EXIT_OK;
out_files:
	ht_cmd_print_free(&print);
	ht_cmd_files_free(&files);
	return rc;
}
