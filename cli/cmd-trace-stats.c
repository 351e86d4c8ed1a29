/*
 * heaptool trace-stats: the overhead analysis of an allocation trace
 * without replaying it (tracestats.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "traceload.h"
#include "tracestats.h"

static const char trace_stats_usage[] =
    "usage: heaptool trace-stats [--format text|json] [--rate SIZE] TRACE\n"
    "\n"
    "Analyse an allocation trace (heaptool record) without replaying it:\n"
    "requested against usable bytes and the allocator's rounding, the\n"
    "peaks of live bytes and blocks, the memory heaptool would take for it\n"
    "(at rate 1 and at SIZE) and the recorder took, and counts and bytes\n"
    "by op, size class, thread and tag.  A trace cut short is analysed as\n"
    "far as it goes, and says so on its first line.\n"
    "\n"
    "  -f, --format F     text (default) or json (keys in man heaptool)\n"
    "  -r, --rate SIZE    the sampling rate of the estimate (default "
    "512KiB)\n"
    "  -h, --help         show this help\n"
    "\n"
    "See man heaptool for the details.\n";

static const struct option trace_stats_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "rate", required_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_trace_stats(int argc, char **argv)
{
	uint64_t rate = HT_CMD_DEFAULT_RATE;
	struct ht_tstats s;
	struct ht_trace *t;
	int c, json = 0, rc;

	ht_cmd_getopt_reset();
	while ((c = getopt_long(argc, argv, ":f:r:h", trace_stats_options,
		    NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") == 0)
				json = 0;
			else
				return ht_usage("trace-stats: --format %s: "
						"not a format; give text or "
						"json",
				    optarg);
			break;
		case 'r':
			if ((rc = ht_cmd_parse_rate(optarg, &rate)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'h':
			return ht_cmd_help(trace_stats_usage);
		default:
			return ht_cmd_opt_error(argv[0], c, argv);
		}
	}
	if (optind >= argc)
		return ht_usage("trace-stats: no trace given; give the file "
				"heaptool record wrote");
	if (optind + 1 < argc)
		return ht_usage("trace-stats: %s: unexpected argument; give "
				"one trace",
		    argv[optind + 1]);
	if ((t = ht_traceload("trace-stats", argv[optind], 1)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_tstats_compute(t, rate, &s) != 0) {
		ht_warn("trace-stats %s: out of memory; free some memory",
		    argv[optind]);
		ht_trace_free(t);
		return HT_EXIT_FAIL;
	}
	if (!t->complete)
		ht_warn("warning: %s is incomplete (%s): the figures are of "
			"the events it has",
		    argv[optind], t->incomplete_why);
	rc = json ? ht_tstats_json(stdout, argv[optind], t, &s) :
		    ht_tstats_text(stdout, argv[optind], t, &s);
	ht_tstats_free(&s);
	ht_trace_free(t);
	if (rc != 0) {
		ht_warn("trace-stats: stdout: %s; check where the output goes",
		    strerror(errno));
		return HT_EXIT_FAIL;
	}
	return ht_cmd_flush();
}
