/*
 * heaptool start: start a profiling session in the target, with its rate
 * and its dumps (dumpopts.h).
 */
#include "allocnames.h"
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "ctl.h"
#include "dumpopts.h"
#include "profile.h"
#include "proto.h"
#include "size.h"
#include "finals.h"
#include "target.h"
#include "text.h"

static const char start_usage[] =
    "usage: heaptool start [-p PID] [--rate SIZE] [--max-samples N] "
    "[--restart]\n"
    "                      [--backend got|inline|jemalloc|mimalloc]\n"
    "                      [--follow-forks] [--no-final-dump]\n"
    "                      [--dump-prefix P] [--dump-interval DUR]\n"
    "                      [--dump-every SIZE] [--dump-at-rss SIZE]\n"
    "                      [--threshold SIZE]\n"
    "\n"
    "Start a profiling session in the target: its allocations from now on\n"
    "are sampled and attributed to their call sites.  Each session starts\n"
    "from zero.  When the target ends (exit, or a crash), it writes the\n"
    "session's final profile, which heaptool report -p PID then reads.\n"
    "\n"
    "  -p, --pid PID      the process (default: the current "
    "target)\n" HT_CMD_RATE_HELP HT_CMD_MAX_SAMPLES_HELP
    "      --restart      end a running session and start a new "
    "one\n"
    "      --backend B    how to sample: got (the GOT hooks alone: the\n"
    "                     functions attach hooked inline are put back),\n"
    "                     inline (the GOT hooks and inline hooks for the\n"
    "                     allocator functions no GOT slot reaches),\n"
    "                     jemalloc (its own sampling, where opt.prof is\n"
    "                     on; the rate rounded to a power of 2) or\n"
    "                     mimalloc (its profiler API); default: what\n"
    "                     attach chose\n" HT_CMD_FOLLOW_HELP
    "      --no-final-dump  write no final profile when the target ends\n"
    "      --dump-prefix P     the target writes dumps P.PID.SEQ.heap (P as\n"
    "                          the target sees its files): when an\n"
    "                          allocation fails, at exit, and "
    "on:\n" HT_DUMP_HELP "  -h, --help         show this help\n"
    "\n"
    "See man heaptool for the details.\n";

/* Its own option code, beyond the letters and the shared codes. */
#define OPT_NO_FINAL 1200
#define OPT_BACKEND  1201

/* The backend named by --backend (HT_BACKEND_*), or 0. */
static uint32_t
backend_of(const char *name)
{
	uint32_t b;

	for (b = HT_BACKEND_GOT; b <= HT_BACKEND_MIMALLOC; b++)
		if (strcmp(name, ht_backend_name(b)) == 0)
			return b;
	return 0;
}

static const struct option start_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "rate", required_argument, NULL, 'r' },
	{ "restart", no_argument, NULL, 'R' },
	{ "follow-forks", no_argument, NULL, HT_OPT_FOLLOW_FORKS },
	{ "max-samples", required_argument, NULL, 'M' },
	{ "no-final-dump", no_argument, NULL, OPT_NO_FINAL },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	HT_DUMP_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_start(int argc, char **argv)
{
	static struct ht_request req;
	static struct ht_status st;
	struct ht_dump_opts dumps;
	uint64_t start;
	struct ht_ctl *c;
	const char *popt = NULL;
	uint64_t rate = HT_CMD_DEFAULT_RATE, max_samples = 0;
	uint32_t flags = 0, backend = 0;
	char rs[32], as[32];
	int ch, rc;
	pid_t pid;

	memset(&dumps, 0, sizeof(dumps));
	ht_cmd_getopt_reset();
	while ((ch = getopt_long(argc, argv, ":p:r:h", start_options, NULL)) !=
	    -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'r':
			if ((rc = ht_cmd_parse_rate(optarg, &rate)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'R':
			flags |= HT_START_RESTART;
			break;
		case HT_OPT_FOLLOW_FORKS:
			flags |= HT_START_FOLLOW;
			break;
		case 'M':
			if ((rc = ht_cmd_parse_max_samples(optarg,
				 &max_samples)) != HT_EXIT_OK)
				return rc;
			break;
		case OPT_NO_FINAL:
			flags |= HT_START_NO_FINAL;
			break;
		case OPT_BACKEND:
			if ((backend = backend_of(optarg)) == 0)
				return ht_usage("start: --backend %s: no such "
						"backend; use got, inline, "
						"jemalloc or mimalloc",
				    optarg);
			flags |= HT_START_BACKEND(backend);
			break;
		case 'h':
			return ht_cmd_help(start_usage);
		default:
			if (!HT_IS_DUMP_OPT(ch))
				return ht_cmd_opt_error("start", ch, argv);
			if ((rc = ht_dump_opt(ch, optarg, &dumps)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		}
	}
	if (optind < argc)
		return ht_usage("start: %s: unexpected argument; see "
				"'heaptool start --help'",
		    argv[optind]);
	if ((rc = ht_dump_opts_finish(&dumps)) != HT_EXIT_OK)
		return rc;
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;
	/* The backends before the session: its first allocation is then
	 * counted the way its last will be. */
	if (backend == HT_BACKEND_GOT &&
	    ht_cmd_inline_restore(pid, "start") < 0) {
		rc = HT_EXIT_FAIL;
		goto out_free;
	}
	if (backend == HT_BACKEND_INLINE &&
	    ht_cmd_inline_apply(stdout, "heaptool: ", pid, c, "start") < 0) {
		rc = HT_EXIT_FAIL;
		goto out_free;
	}
	memset(&req, 0, sizeof(req));
	req.type = HT_MSG_START;
	req.rate = rate;
	req.flags = flags;
	req.dump_interval_ms = dumps.interval_ms;
	req.dump_every_bytes = dumps.every_bytes;
	req.dump_at_rss_bytes = dumps.at_rss_bytes;
	req.threshold_bytes = dumps.threshold_bytes;
	req.max_samples = max_samples;
	memcpy(req.dump_prefix, dumps.prefix, strlen(dumps.prefix) + 1);
	if (ht_ctl_start(c, &req) != 0) {
		/* The agent can only name its errno: where we can see what
		 * it saw, say exactly what is wrong with the prefix. */
		if (ht_ctl_agent_err(c) != HT_ERR_DUMP_PREFIX ||
		    (rc = ht_dump_opts_check(&dumps, pid)) == HT_EXIT_OK)
			rc = ht_target_failed(c, pid);
		goto out_free;
	}
	if (rate == 1)
		snprintf(rs, sizeof(rs), "1 (every allocation)");
	else
		ht_size_format(rate, rs, sizeof(rs));
	/* The epoch is only known to the agent; a failure to ask is no
	 * failure of the start. */
	if (ht_ctl_status(c, HT_MSG_STATUS, &st) == 0) {
		printf("heaptool: %ld: session %" PRIu64 " started, rate ",
		    (long)pid, st.epoch);
		if (st.rate != st.rate_asked && st.rate_asked != 0) {
			/* jemalloc samples at powers of 2 only. */
			ht_size_format(st.rate_asked, as, sizeof(as));
			if (st.rate == 1)
				snprintf(rs, sizeof(rs),
				    "1 (every allocation)");
			else
				ht_size_format(st.rate, rs, sizeof(rs));
			printf("%s (rounded from %s: a power of 2)", rs, as);
		} else
			printf("%s", rs);
		if (st.backend != HT_BACKEND_GOT)
			printf(", backend %s", ht_backend_name(st.backend));
		putchar('\n');
	} else {
		memset(&st, 0, sizeof(st));
		printf("heaptool: %ld: session started, rate %s\n", (long)pid,
		    rs);
	}
	/* Where the final profile goes, remembered for when the target is
	 * gone (another user's heaptool would not know its directory). */
	if (st.final_armed) {
		printf("heaptool: %ld: its final profile goes to ", (long)pid);
		ht_text_safe(stdout, st.final_dir, SIZE_MAX);
		printf("/final.%ld.*.heap when it ends\n", (long)pid);
		if (ht_target_start_time(pid, &start) == 0 &&
		    ht_final_remember(pid, start, st.final_dir) != 0)
			ht_warn("start %ld: cannot remember where its final "
				"profile goes: %s; heaptool report -p %ld "
				"may not find it",
			    (long)pid, strerror(errno), (long)pid);
	} else if ((flags & HT_START_NO_FINAL) == 0 && st.proto_version != 0)
		ht_warn("start %ld: the target's agent will write no final "
			"profile (it is older than this heaptool, or it may "
			"make no state directory: $XDG_STATE_HOME, "
			"$HOME/.local/state or /var/tmp/heaptool-UID); use "
			"--dump-prefix to keep its profile",
		    (long)pid);
	if (dumps.prefix[0] != '\0')
		printf("heaptool: %ld: dumps to %s%s.%ld.SEQ.heap (as the "
		       "target sees its files)\n",
		    (long)pid, dumps.prefix,
		    dumps.prefix[strlen(dumps.prefix) - 1] == '/' ? "heaptool" :
								    "",
		    (long)pid);
	if (flags & HT_START_FOLLOW)
		printf("heaptool: %ld: its children start sessions of their "
		       "own when forked (heaptool status -p %ld lists them)\n",
		    (long)pid, (long)pid);
	rc = ht_cmd_flush();
out_free:
	ht_ctl_free(c);
	return rc;
}
