/*
 * heaptool: dispatch to the subcommands, and the help and version output.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

static const char usage_text[] =
    "usage: heaptool COMMAND [OPTION...]\n"
    "\n"
    "Commands:\n"
    "  run [--rate SIZE] [--max-samples N] [-o FILE] [--live]\n"
    "      [--follow-forks]\n"
    "      [DUMP OPTIONS] -- CMD [ARG...]\n"
    "        run CMD with the heap profiler loaded from its start; when it\n"
    "        exits, save the profile to FILE and print a summary; with\n"
    "        --live, also serve live reports (heaptool report -p PID)\n"
    "  attach [--timeout DUR] PID\n"
    "        load the profiler into the running process PID (or bring up\n"
    "        the one it has, as a forked child has); PID becomes the\n"
    "        current target of the commands below\n"
    "  start [-p PID] [--rate SIZE] [--max-samples N] [--restart]\n"
    "        [--backend got|jemalloc|mimalloc] [--follow-forks]\n"
    "        [--no-final-dump] [DUMP OPTIONS]\n"
    "        start a profiling session in the target (with --follow-forks,\n"
    "        the children it forks start their own); when the target\n"
    "        ends, it writes the session's final profile\n"
    "  stop [-p PID]\n"
    "        end the session; its profile stays readable\n"
    "  status [-p PID] [--json]\n"
    "        show the agent and its session\n"
    "  report [-p PID] [--detail] [--format FORMAT | --json]\n"
    "         [--sort COLUMN] [--top N] [--threshold SIZE] [--at-peak]\n"
    "         [--bytes] [-o OUT] [--fold FUNC]... [--no-fold]\n"
    "         [--short-names] [--diff | FILE]\n"
    "        print the target's profile (of a target that is gone, its\n"
    "        final profile), or the profile saved in FILE: totals, or\n"
    "        every allocation site with --detail; FORMAT text, json,\n"
    "        pprof, collapsed or svg; COLUMN inuse, alloc or objects;\n"
    "        with --diff, what changed since the baseline\n"
    "  baseline [-p PID]\n"
    "        remember the target's profile now, for report --diff\n"
    "  dump [-p PID] -o FILE\n"
    "        save the target's profile to FILE\n"
    "  record [-p PID] -o TRACE [--duration DUR] [--max-size SIZE]\n"
    "         [-- CMD [ARG...]]\n"
    "        record every allocation and free of the target (or of CMD\n"
    "        from its start) into the trace file TRACE\n"
    "  diff [--detail] [--json] [--top N] [--bytes] [-o OUT]\n"
    "       [--fold FUNC]... [--no-fold] [--short-names] OLD NEW\n"
    "        compare two profiles: what grew, per module and per site\n"
    "  serve [-p PID] --listen [ADDR:]PORT [--allow-remote] [--top N]\n"
    "        serve the target's live profile over HTTP until interrupted:\n"
    "        /debug/pprof/heap (pprof, as Go serves it) and /metrics\n"
    "        (Prometheus)\n"
    "  top [-p PID] [--interval DUR] [--sort inuse|growth|alloc]\n"
    "      [--count N] [--top N] [--bytes]\n"
    "        watch the target's sites live: in use, growth since the view\n"
    "        started and per second; full screen on a terminal, plain text\n"
    "        otherwise\n"
    "  trace-stats [--format text|json] [--rate SIZE] TRACE\n"
    "        the overhead analysis of an allocation trace: requested and\n"
    "        usable bytes, peaks, the profiler's memory; by op, size,\n"
    "        thread and tag\n"
    "  replay [--allocator LIB.so] [--with-agent RATE] [--repeat N]\n"
    "         [--callgrind] [--compare A B [--rounds N]] TRACE\n"
    "        play a trace back and time the allocator; --compare times\n"
    "        two setups (plain, agent:RATE, allocator:LIB.so) in turn\n"
    "  detach [-p PID]\n"
    "        end the session, remove every hook, give the agent's tables\n"
    "        back, forget the target\n"
    "  help [COMMAND]\n"
    "        show this help, or the help of COMMAND\n"
    "\n"
    "Dump options (the target writes P.PID.SEQ.heap files itself):\n"
    "  --dump-prefix P [--dump-interval DUR] [--dump-every SIZE]\n"
    "  [--dump-at-rss SIZE] [--threshold SIZE]\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this help\n"
    "  -V, --version  show the version\n"
    "\n"
    "Each command takes --help.  See man heaptool for the details.\n";

static int
print_usage(void)
{
	fputs(usage_text, stdout);
	/* A help text that did not reach its reader is a failure (e.g. a
	 * full disk behind a redirection). */
	if (fflush(stdout) != 0 || ferror(stdout))
		return HT_EXIT_FAIL;
	return HT_EXIT_OK;
}

struct command {
	const char *name;
	int (*fn)(int, char **);
};

static const struct command commands[] = {
	{ "run", ht_cmd_run },
	{ "report", ht_cmd_report },
	{ "attach", ht_cmd_attach },
	{ "start", ht_cmd_start },
	{ "stop", ht_cmd_stop },
	{ "status", ht_cmd_status },
	{ "dump", ht_cmd_dump },
	{ "record", ht_cmd_record },
	{ "detach", ht_cmd_detach },
	{ "baseline", ht_cmd_baseline },
	{ "diff", ht_cmd_diff },
	{ "serve", ht_cmd_serve },
	{ "top", ht_cmd_top },
	{ "trace-stats", ht_cmd_trace_stats },
	{ "replay", ht_cmd_replay },
};

static const struct command *
find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int
main(int argc, char **argv)
{
	const struct command *cmd;
	char *help_argv[3];

	if (argc < 2)
		return ht_usage("no command given; run 'heaptool --help' "
				"for the list");

	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		return print_usage();
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("heaptool %s\n", PACKAGE_VERSION);
		if (fflush(stdout) != 0 || ferror(stdout))
			return HT_EXIT_FAIL;
		return HT_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc == 2)
			return print_usage();
		if ((cmd = find_command(argv[2])) == NULL)
			return ht_usage("help %s: unknown command; run "
					"'heaptool --help' for the list",
			    argv[2]);
		help_argv[0] = argv[2];
		help_argv[1] = "--help";
		help_argv[2] = NULL;
		return cmd->fn(2, help_argv);
	}
	if (argv[1][0] == '-')
		return ht_usage("%s: unknown option; run 'heaptool --help'",
		    argv[1]);
	if ((cmd = find_command(argv[1])) == NULL)
		return ht_usage("%s: unknown command; run 'heaptool --help' "
				"for the list",
		    argv[1]);
	return cmd->fn(argc - 1, argv + 1);
}
