/*
 * The heaptool command: what the subcommands share.
 *
 * Only cli/ prints and exits.  Every error is one line on stderr,
 * "heaptool: <what>: <why>; <what to do>", and the exit status says what
 * kind of failure it was: 0 success, 1 runtime failure, 2 usage error.
 * Each subcommand is a function taking its own argc/argv (argv[0] is the
 * subcommand's name) and returning the process exit status.
 */
#ifndef HT_CLI_H
#define HT_CLI_H

#include <sys/types.h>

#include <stdarg.h>
#include <stdint.h>

#define HT_EXIT_OK	0
#define HT_EXIT_FAIL	1
#define HT_EXIT_USAGE	2

/* Subcommands. */
int	ht_cmd_run(int argc, char **argv);
int	ht_cmd_report(int argc, char **argv);
int	ht_cmd_attach(int argc, char **argv);
int	ht_cmd_start(int argc, char **argv);
int	ht_cmd_stop(int argc, char **argv);
int	ht_cmd_status(int argc, char **argv);
int	ht_cmd_dump(int argc, char **argv);
int	ht_cmd_detach(int argc, char **argv);
int	ht_cmd_baseline(int argc, char **argv);
int	ht_cmd_diff(int argc, char **argv);

/*
 * Find the agent library (run.c): $HEAPTOOL_AGENT, else next to this
 * executable (the build tree builds both at its top), else the installed
 * copy.  Returns 0 and the absolute path in buf, or -1 after printing why.
 */
int	ht_agent_find(char *buf, size_t len);

/*
 * The process a command talks to (attach.c): popt, the argument of -p, or
 * when NULL the current target that heaptool attach remembered.  Returns
 * HT_EXIT_OK and the pid, or an exit status after printing why: no target
 * (usage), a target that exited (forgotten) or is stopped (runtime).
 */
int	ht_target_resolve(const char *popt, pid_t *pid);

/* Print "heaptool: " and the formatted message and a newline on stderr. */
void	ht_warn(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/* A usage error: print as ht_warn and return HT_EXIT_USAGE, so that callers
 * can write "return ht_usage(...)". */
int	ht_usage(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/* The hint printed after a size that does not parse. */
#define HT_SIZE_HINT	"use e.g. 4096, 64K, 512KiB, 1M"

/*
 * The dump options that start and run share (run.c): a command adds
 * HT_DUMP_LONGOPTS to its getopt_long table, hands each of their codes to
 * ht_dump_opt, then calls ht_dump_opts_finish once.  The prefix is made
 * absolute against the current directory; it names a place in the
 * target's view of the file system.
 */
#define HT_OPT_DUMP_PREFIX	1001
#define HT_OPT_DUMP_INTERVAL	1002
#define HT_OPT_DUMP_EVERY	1003
#define HT_OPT_DUMP_AT_RSS	1004
#define HT_OPT_THRESHOLD	1005
#define HT_DUMP_LONGOPTS						\
	{ "dump-prefix", required_argument, NULL, HT_OPT_DUMP_PREFIX },	\
	{ "dump-interval", required_argument, NULL, HT_OPT_DUMP_INTERVAL }, \
	{ "dump-every", required_argument, NULL, HT_OPT_DUMP_EVERY },	\
	{ "dump-at-rss", required_argument, NULL, HT_OPT_DUMP_AT_RSS },	\
	{ "threshold", required_argument, NULL, HT_OPT_THRESHOLD }

struct ht_dump_opts {
	char		prefix[4096];	/* absolute after finish; "" none */
	uint64_t	interval_ms;
	uint64_t	every_bytes;
	uint64_t	at_rss_bytes;
	uint64_t	threshold_bytes;
};

/* Is ch one of HT_DUMP_LONGOPTS? */
#define HT_IS_DUMP_OPT(ch)	((ch) >= HT_OPT_DUMP_PREFIX &&		\
				    (ch) <= HT_OPT_THRESHOLD)
/* Take option ch's argument into o.  Returns HT_EXIT_OK, or HT_EXIT_USAGE
 * after printing why. */
int	ht_dump_opt(int ch, const char *arg, struct ht_dump_opts *o);
/* Check the options together and make the prefix absolute.  Returns
 * HT_EXIT_OK, or an exit status after printing why. */
int	ht_dump_opts_finish(struct ht_dump_opts *o);

#endif
