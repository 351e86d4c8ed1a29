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

#endif
