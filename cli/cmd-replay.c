/*
 * heaptool replay: play an allocation trace back with the replayer
 * (replayer.h) in one setup, or --compare two setups (compare.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "compare.h"
#include "replay-out.h"
#include "replayer.h"
#include "size.h"
#include "traceload.h"
#include "tracestats.h"

static const char replay_usage[] =
    "usage: heaptool replay [--allocator LIB.so] [--with-agent RATE]\n"
    "                       [--repeat N] [--callgrind] [--format F] TRACE\n"
    "       heaptool replay --compare A B [--rounds N] [--seed S]\n"
    "                       [--alpha P] [--metric alloc|cpu|wall]\n"
    "                       [--callgrind] [--format F] TRACE\n"
    "\n"
    "Play an allocation trace (heaptool record) back: one thread per\n"
    "recorded thread, each doing its calls in order, a free waiting for\n"
    "its block's allocation wherever that was made; then the time, what\n"
    "was played against what was recorded, peak RSS and fragmentation,\n"
    "and each call's latency by op and size.  With --compare, run setups\n"
    "A and B in turn, once each a round in a random order, and say\n"
    "whether B is faster, slower, or not detectably different.\n"
    "A setup: plain, agent:RATE (the agent as heaptool run loads it,\n"
    "sampling at RATE), allocator:LIB.so, or allocator:LIB.so,agent:RATE.\n"
    "\n"
    "  -a, --allocator LIB.so  preload LIB.so, the allocator to time\n"
    "  -w, --with-agent RATE   preload the agent too, sampling at RATE\n"
    "  -n, --repeat N          run N times: the median and spread (default "
    "1)\n"
    "      --callgrind         run under valgrind's callgrind and count the\n"
    "                          replay's user-mode instructions\n"
    "  -c, --compare A B       compare setup B against setup A\n"
    "  -r, --rounds N          rounds of the comparison (default 20)\n"
    "  -s, --seed S            the seed of the order and the bootstrap\n"
    "                          (default 1)\n"
    "      --alpha P           the test's level for the verdict (default "
    "0.05)\n"
    "      --metric M          what --compare compares: cpu, the CPU time\n"
    "                          of the replay's threads (default); alloc,\n"
    "                          the time inside the allocator's calls, from\n"
    "                          two clock reads a call; wall, the elapsed\n"
    "                          time (both lengthened by other processes'\n"
    "                          time slices)\n"
    "  -f, --format F          text (default) or json (keys in man "
    "heaptool)\n"
    "  -h, --help              show this help\n"
    "\n"
    "See man heaptool for the details.\n";

#define OPT_CALLGRIND 1300
#define OPT_ALPHA     1301
#define OPT_METRIC    1302

enum { METRIC_ALLOC, METRIC_CPU, METRIC_WALL };

static const struct option replay_options[] = {
	{ "allocator", required_argument, NULL, 'a' },
	{ "with-agent", required_argument, NULL, 'w' },
	{ "repeat", required_argument, NULL, 'n' },
	{ "callgrind", no_argument, NULL, OPT_CALLGRIND },
	{ "compare", required_argument, NULL, 'c' },
	{ "rounds", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 's' },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "format", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct opts {
	const char *lib, *cmp_a, *cmp_b, *trace;
	uint64_t rate, repeat, rounds, seed;
	double alpha;
	int callgrind, json, metric;
};

static int
parse_count(const char *opt, const char *s, uint64_t min, uint64_t max,
    uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *v < min || *v > max ||
	    s[0] == '-')
		return ht_usage("replay: %s %s: not a number from %" PRIu64
				" to %" PRIu64 "; give one in that range",
		    opt, s, min, max);
	return HT_EXIT_OK;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	char *end;
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->repeat = 1;
	o->rounds = 20;
	o->seed = 1;
	o->alpha = 0.05;
	o->metric = METRIC_CPU;
	ht_cmd_getopt_reset();
	/* '+': options before TRACE, so that --compare may take B from
	 * the next argument. */
	while ((c = getopt_long(argc, argv, "+:a:w:n:c:r:s:f:h", replay_options,
		    NULL)) != -1) {
		rc = HT_EXIT_OK;
		switch (c) {
		case 'a':
			o->lib = optarg;
			break;
		case 'w':
			rc = ht_cmd_parse_rate(optarg, &o->rate);
			break;
		case 'n':
			rc = parse_count("--repeat", optarg, 1, 100000,
			    &o->repeat);
			break;
		case OPT_CALLGRIND:
			o->callgrind = 1;
			break;
		case 'c':
			if (optind >= argc || argv[optind][0] == '-')
				return ht_usage("replay: --compare needs two "
						"setups, A and B; see "
						"'heaptool replay --help'");
			o->cmp_a = optarg;
			o->cmp_b = argv[optind++];
			break;
		case 'r':
			rc = parse_count("--rounds", optarg, 2, 100000,
			    &o->rounds);
			break;
		case 's':
			rc = parse_count("--seed", optarg, 0, UINT64_MAX,
			    &o->seed);
			break;
		case OPT_ALPHA:
			errno = 0;
			o->alpha = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(o->alpha > 0 && o->alpha < 1))
				return ht_usage("replay: --alpha %s: not a "
						"probability between 0 and 1; "
						"give e.g. 0.05",
				    optarg);
			break;
		case OPT_METRIC:
			if (strcmp(optarg, "alloc") == 0)
				o->metric = METRIC_ALLOC;
			else if (strcmp(optarg, "cpu") == 0)
				o->metric = METRIC_CPU;
			else if (strcmp(optarg, "wall") == 0)
				o->metric = METRIC_WALL;
			else
				return ht_usage("replay: --metric %s: not a "
						"measure; give alloc, cpu or "
						"wall",
				    optarg);
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o->json = 1;
			else if (strcmp(optarg, "text") != 0)
				return ht_usage("replay: --format %s: not a "
						"format; give text or json",
				    optarg);
			break;
		case 'h':
			return -1;
		default:
			return ht_cmd_opt_error(argv[0], c, argv);
		}
		if (rc != HT_EXIT_OK)
			return rc;
	}
	if (optind >= argc)
		return ht_usage("replay: no trace given; give the file "
				"heaptool record wrote");
	if (optind + 1 < argc)
		return ht_usage("replay: %s: unexpected argument; options "
				"come before the trace",
		    argv[optind + 1]);
	o->trace = argv[optind];
	if (o->cmp_a != NULL && (o->lib != NULL || o->rate != 0))
		return ht_usage("replay: --compare names its setups; drop "
				"--allocator and --with-agent");
	if (o->cmp_a != NULL && o->repeat != 1)
		return ht_usage("replay: --compare runs --rounds; drop "
				"--repeat");
	return HT_EXIT_OK;
}

static int
out_status(int rc)
{
	if (rc != 0) {
		ht_warn("replay: stdout: %s; check where the output goes",
		    strerror(errno));
		return HT_EXIT_FAIL;
	}
	return ht_cmd_flush();
}

/* Whether the runs ended early at a signal (ht_replayer_stopped): then
 * say so, and whether what is done (at least least of them) is shown. */
static int
stopped(uint64_t done, uint64_t want, const char *what, uint64_t least)
{
	int sig = ht_replayer_stopped();

	if (sig == 0)
		return 0;
	if (done < least)
		ht_warn("replay: stopped by signal %d (%s) after %" PRIu64
			" of its %" PRIu64 " %s; too few to show",
		    sig, strsignal(sig), done, want, what);
	else
		ht_warn("replay: stopped by signal %d (%s) after %" PRIu64
			" of its %" PRIu64 " %s: what follows is of those",
		    sig, strsignal(sig), done, want, what);
	return 1;
}

static int
replay(const struct opts *o, const struct ht_tstats *rec)
{
	struct ht_replay_report rep = { 0 };
	struct ht_replayer r;
	struct ht_replay_run *run;
	struct ht_setup su;
	double *wall, *cpu, *ir;
	uint64_t i;
	int rc = HT_EXIT_FAIL;

	if (ht_setup_make("replay", o->lib, o->rate, &su) != 0)
		return HT_EXIT_USAGE;
	run = calloc(1, sizeof(*run));
	wall = calloc(o->repeat, sizeof(*wall));
	cpu = calloc(o->repeat, sizeof(*cpu));
	ir = calloc(o->repeat, sizeof(*ir));
	if (run == NULL || wall == NULL || cpu == NULL || ir == NULL) {
		ht_warn("replay: out of memory; free some memory");
		goto out;
	}
	if (ht_replayer_init(&r, o->rate != 0) != 0)
		goto out;
	for (i = 0; i < o->repeat; i++) {
		if (ht_replayer_run(&r, o->trace, &su, 1, o->callgrind, run) !=
		    0)
			break;
		wall[i] = (double)run->wall_ns;
		cpu[i] = (double)run->cpu_ns;
		ir[i] = (double)run->instructions;
	}
	ht_replayer_done(&r);
	if (i < o->repeat && !stopped(i, o->repeat, "runs", 1))
		goto out;
	if (i == 0)
		goto out_stopped;
	rep.trace = o->trace;
	rep.setup = &su;
	rep.runs = i;
	rep.wall_ns = wall;
	rep.cpu_ns = cpu;
	rep.instructions = o->callgrind ? ir : NULL;
	rep.run = run;
	rep.rec = rec;
	rc = out_status(o->json ? ht_replay_json(stdout, &rep) :
				  ht_replay_text(stdout, &rep));
out_stopped:
	if (ht_replayer_stopped() != 0)
		rc = 128 + ht_replayer_stopped();
out:
	free(run);
	free(wall);
	free(cpu);
	free(ir);
	return rc;
}

/* splitmix64, for the order of each round. */
static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
measure(struct ht_replayer *r, const struct opts *o, const struct ht_setup *su,
    struct ht_replay_run *run, double *v)
{
	if (ht_replayer_run(r, o->trace, su,
		!o->callgrind && o->metric == METRIC_ALLOC, o->callgrind,
		run) != 0)
		return -1;
	*v = o->callgrind	      ? (double)run->instructions :
	    o->metric == METRIC_ALLOC ? (double)run->alloc_ns :
	    o->metric == METRIC_WALL  ? (double)run->wall_ns :
					(double)run->cpu_ns;
	return 0;
}

static int
compare(const struct opts *o)
{
	struct ht_setup sa, sb;
	struct ht_compare c = { 0 };
	struct ht_replay_run *run;
	struct ht_replayer r;
	double *a, *b, warm;
	uint64_t s = o->seed ^ 0x5eed, i;
	int rc = HT_EXIT_FAIL, ok = 0;

	if (ht_setup_parse("replay", o->cmp_a, &sa) != 0 ||
	    ht_setup_parse("replay", o->cmp_b, &sb) != 0)
		return HT_EXIT_USAGE;
	run = calloc(1, sizeof(*run));
	a = calloc(o->rounds, sizeof(*a));
	b = calloc(o->rounds, sizeof(*b));
	if (run == NULL || a == NULL || b == NULL) {
		ht_warn("replay: out of memory; free some memory");
		goto out;
	}
	if (ht_replayer_init(&r, sa.rate != 0 || sb.rate != 0) != 0)
		goto out;
	/* One run of each first, not counted: the trace and the libraries
	 * come into the page cache, the CPU's clock up to speed. */
	if (measure(&r, o, &sa, run, &warm) != 0 ||
	    measure(&r, o, &sb, run, &warm) != 0) {
		(void)stopped(0, o->rounds, "rounds", 2);
		goto done;
	}
	/* Each round runs A and B in an order of its own: a drift of the
	 * machine (another process, the clock) then falls on both alike,
	 * and whichever runs second has no systematic edge. */
	for (i = 0; i < o->rounds; i++) {
		int b_first = (int)(next(&s) & 1);

		if (b_first ? measure(&r, o, &sb, run, &b[i]) != 0 ||
			    measure(&r, o, &sa, run, &a[i]) != 0 :
			      measure(&r, o, &sa, run, &a[i]) != 0 ||
			    measure(&r, o, &sb, run, &b[i]) != 0)
			break;
	}
	/* Stopped by a signal: the rounds done, if two or more, compared. */
	ok = i == o->rounds || (stopped(i, o->rounds, "rounds", 2) && i >= 2);
done:
	ht_replayer_done(&r);
	if (!ok)
		goto out;
	c.trace = o->trace;
	c.label_a = sa.label;
	c.label_b = sb.label;
	c.metric = o->callgrind	      ? "instructions" :
	    o->metric == METRIC_ALLOC ? "alloc_time" :
	    o->metric == METRIC_WALL  ? "time" :
					"cpu_time";
	c.rounds = i;
	c.seed = o->seed;
	c.alpha = o->alpha;
	c.a = a;
	c.b = b;
	if (ht_compare_compute(&c) != 0) {
		ht_warn("replay: out of memory; free some memory");
		goto out;
	}
	rc = out_status(o->json ? ht_compare_json(stdout, &c) :
				  ht_compare_text(stdout, &c));
out:
	if (ht_replayer_stopped() != 0)
		rc = 128 + ht_replayer_stopped();
	free(run);
	free(a);
	free(b);
	return rc;
}

int
ht_cmd_replay(int argc, char **argv)
{
	struct ht_tstats rec;
	struct ht_trace *t;
	struct opts o;
	int rc;

	if ((rc = parse(argc, argv, &o)) != HT_EXIT_OK)
		return rc == -1 ? ht_cmd_help(replay_usage) : rc;
	if ((t = ht_traceload("replay", o.trace, 0)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_tstats_compute(t, HT_CMD_DEFAULT_RATE, &rec) != 0) {
		ht_warn("replay %s: out of memory; free some memory", o.trace);
		ht_trace_free(t);
		return HT_EXIT_FAIL;
	}
	ht_trace_free(t);
	rc = o.cmp_a != NULL ? compare(&o) : replay(&o, &rec);
	ht_tstats_free(&rec);
	return rc;
}
