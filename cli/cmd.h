/*
 * The commands of heaptool, one file each (cmd-NAME.c), and what their
 * files share.
 *
 * A command is a function taking its own argc/argv (argv[0] is the
 * command's name, as main matched it) and returning the process exit
 * status (cli.h).  It parses its options with getopt_long, prints what it
 * has to say and every error itself, and leaves the work to the services
 * below it: the target (target.h), the agent's file (staging.h), the dump
 * options (dumpopts.h), the control client (ctl.h), the injector
 * (inject.h), reports and diffs (report.h, diff.h).  A command never calls
 * another command; what two of them share is here (cmd.c).
 */
#ifndef HT_CMD_H
#define HT_CMD_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "fold.h"
#include "symbolize.h"

int ht_cmd_run(int argc, char **argv);
int ht_cmd_report(int argc, char **argv);
int ht_cmd_attach(int argc, char **argv);
int ht_cmd_start(int argc, char **argv);
int ht_cmd_stop(int argc, char **argv);
int ht_cmd_status(int argc, char **argv);
int ht_cmd_dump(int argc, char **argv);
int ht_cmd_record(int argc, char **argv);
int ht_cmd_detach(int argc, char **argv);
int ht_cmd_baseline(int argc, char **argv);
int ht_cmd_diff(int argc, char **argv);
int ht_cmd_serve(int argc, char **argv);
int ht_cmd_top(int argc, char **argv);
/* The trace's analysis and replay (issue 13). */
int ht_cmd_trace_stats(int argc, char **argv);
int ht_cmd_replay(int argc, char **argv);

/* Get getopt_long ready for a command's arguments: from the first, and
 * silent (the command says what is wrong, in its own words). */
void ht_cmd_getopt_reset(void);

/* The usage error for getopt_long's answer c (':' for a missing value,
 * anything else for an unknown option) to command name; optind must be
 * where getopt_long left it.  Returns HT_EXIT_USAGE. */
int ht_cmd_opt_error(const char *name, int c, char **argv);

/* Print a command's help text on stdout.  Returns HT_EXIT_OK, or
 * HT_EXIT_FAIL when the text did not reach its reader (e.g. a full disk
 * behind a redirection). */
int ht_cmd_help(const char *text);

/* Flush stdout at the end of a command.  Returns HT_EXIT_OK, or
 * HT_EXIT_FAIL after printing why. */
int ht_cmd_flush(void);

/* The file execvp would run for cmd (a path, or the first executable
 * regular file of that name in PATH) into buf[len].  Returns 0, or -1 if
 * there is none (execvp then says why). */
int ht_cmd_find(const char *cmd, char *buf, size_t len);

/* Set the variable name to "DEV:INO" of descriptor fd, by which the agent
 * knows the file again (agent/init.c): a program may have closed that
 * number and taken it for a file of its own before an exec.  0, or -1
 * with errno set. */
int ht_cmd_setenv_fdid(const char *name, int fd);

/* Take the argument of -o, the path of what the command writes (what:
 * "report", "profile" ...), into *out.  Returns HT_EXIT_OK, or
 * HT_EXIT_USAGE after printing why. */
int ht_cmd_parse_out(const char *s, const char *what, const char **out);

/*
 * The options of a command that takes only -p PID (and -h): parse them,
 * refuse any other argument (the message ends with hint, or when hint is
 * NULL points at the command's help), then resolve the target
 * (ht_target_resolve).  Returns HT_EXIT_OK and the pid in *pid, HT_EXIT_OK
 * and 0 in *pid once the help is printed, or an exit status after printing
 * why.
 */
int ht_cmd_target(int argc, char **argv, const char *usage, const char *hint,
    pid_t *pid);

/*
 * Such a command that sends the target one request, of type, answered by
 * OK (stop, detach): ht_cmd_target, then ht_target_command.  Returns as
 * ht_cmd_target does.
 */
int ht_cmd_request(int argc, char **argv, const char *usage, uint16_t type,
    pid_t *pid);

struct ht_status;

/* Print the warnings of a status about the allocators the hooks do not
 * reach (as reports print them), each line starting with lead. */
void
ht_cmd_status_unseen(FILE *fp, const char *lead, const struct ht_status *st);

struct ht_ctl;

/*
 * The inline backend (cmd-inline.c).  apply: hook inline what the GOT
 * cannot reach in pid (its agent answering on c) and print what was hooked
 * and what was not, each line after lead; 0, or -1 after a warning (the
 * GOT hooks stay, alone).  restore: put back every patched function; the
 * number restored, or -1 after a warning naming what (the command).
 * status: the backends' lines of heaptool status.
 */
int ht_cmd_inline_apply(FILE *fp, const char *lead, pid_t pid, struct ht_ctl *c,
    const char *what);
int ht_cmd_inline_restore(pid_t pid, const char *what);
void ht_cmd_inline_status(FILE *fp, const char *lead, pid_t pid);
/* heaptool run's and record's inline hooks: wait for the agent of the
 * child pid on its doorbell socket fd (agent/inline.h), hook inline, say
 * so on stderr, let the child go on to main; fd is closed.  The number of
 * functions hooked, or -1 (after a warning naming what, the command,
 * unless the agent never launched): the child runs on with the GOT hooks
 * alone. */
int ht_cmd_inline_run(pid_t pid, int fd, const char *what);

/* The end of the help of stop and detach. */
#define HT_CMD_PID_HELP                                                        \
	"  -p, --pid PID  the process (default: the current target)\n"         \
	"  -h, --help     show this help\n"                                    \
	"\n"                                                                   \
	"See man heaptool for the details.\n"

/* The sampling rate of run and start without --rate, in bytes, and the
 * lines of their help that describe --rate. */
#define HT_CMD_DEFAULT_RATE 524288
#define HT_CMD_RATE_HELP                                                       \
	"  -r, --rate SIZE    sample about one allocation per SIZE bytes\n"    \
	"                     (default 512KiB; 1 records every allocation)\n"

/* --follow-forks, of start and run: its option code and its help. */
#define HT_OPT_FOLLOW_FORKS 1100
#define HT_CMD_FOLLOW_HELP                                                     \
	"      --follow-forks children forked from now on start sessions of\n" \
	"                     their own at the fork (same rate and dumps,\n"   \
	"                     their own socket, files named by their pid)\n"

/* Parse the argument of --rate into *rate (a size of at least 1).
 * Returns HT_EXIT_OK, or HT_EXIT_USAGE after printing why. */
int ht_cmd_parse_rate(const char *s, uint64_t *rate);

/* The lines of the help of run and start that describe --max-samples (the
 * agent's default is agent/tables.h's HT_TABLES_DEFAULT_BOUND). */
#define HT_CMD_MAX_SAMPLES_HELP                                                \
	"      --max-samples N  keep at most N live samples and N sites\n"     \
	"                     (default 32Mi, 33554432; K, M, G multiply by\n"  \
	"                     1024): a sample past them is dropped, "          \
	"counted,\n"                                                           \
	"                     and the figures are then not exact\n"

/* Parse the argument of --max-samples into *n (1 to HT_PROTO_MAX_SAMPLES).
 * Returns HT_EXIT_OK, or HT_EXIT_USAGE after printing why. */
int ht_cmd_parse_max_samples(const char *s, uint64_t *n);

/*
 * After a report of the profile with meta m (what names it: "target 1234",
 * a file): when samples were dropped, say so on stderr in a warning line
 * that no format can hide (the report itself says it too, where its format
 * has room).  The exit status stays 0: the report was written.
 */
void ht_cmd_warn_drops(const struct ht_meta *m, const char *what);

/* What heaptool report and heaptool diff print, and where.  All zero:
 * the summary, on stdout. */
struct ht_cmd_print {
	int detail;	 /* -d: the sites too */
	size_t top;	 /* -t N: sites kept, 0 all */
	int raw_bytes;	 /* -b: no KiB/MiB */
	const char *out; /* -o OUT */
	/* --max-symbols N: addresses symbolized at most, 0 no limit; the
	 * symbolizer's default unless max_symbols_set. */
	size_t max_symbols;
	int max_symbols_set;
	/* --fold FUNC... (user, NULL for none), --no-fold; then
	 * ht_cmd_print_fold's list, built-in and the user's file too (NULL
	 * with --no-fold and no --fold). */
	struct ht_fold *user, *fold;
	int no_fold;
	int short_names; /* --short-names */
};

/* getopt_long's answer for --max-symbols (no short form): past the
 * commands' own (from 256) and HT_CMD_OPT_SYSROOT's (from 512). */
#define HT_CMD_OPT_MAX_SYMBOLS 0x300
#define HT_CMD_OPT_FOLD	       0x301
#define HT_CMD_OPT_NO_FOLD     0x302
#define HT_CMD_OPT_SHORT_NAMES 0x303

/* The entries of those options in a getopt_long table. */
#define HT_CMD_PRINT_LONGOPTS                                                  \
	{ "detail", no_argument, NULL, 'd' },                                  \
	    { "top", required_argument, NULL, 't' },                           \
	    { "bytes", no_argument, NULL, 'b' },                               \
	    { "output", required_argument, NULL, 'o' },                        \
	    { "fold", required_argument, NULL, HT_CMD_OPT_FOLD },              \
	    { "no-fold", no_argument, NULL, HT_CMD_OPT_NO_FOLD },              \
	    { "short-names", no_argument, NULL, HT_CMD_OPT_SHORT_NAMES },      \
	{                                                                      \
		"max-symbols", required_argument, NULL, HT_CMD_OPT_MAX_SYMBOLS \
	}

/* The lines of the help of report and diff that describe --max-symbols. */
#define HT_CMD_STR_(x) #x
#define HT_CMD_STR(x)  HT_CMD_STR_(x)
#define HT_CMD_MAX_SYMBOLS_HELP                                                \
	"      --max-symbols N  look up at most N distinct addresses in the\n" \
	"                       modules' files (default " HT_CMD_STR(          \
	    HT_SYM_MAX_DEFAULT) ", some 5 s; 0: no\n"                          \
				"                       limit); the "          \
				"others show as module+offset\n"

/* The lines of the help of report and diff that describe --fold,
 * --no-fold and --short-names. */
#define HT_CMD_FOLD_HELP                                                       \
	"      --fold FUNC      show sites at their first frame outside "      \
	"FUNC\n"                                                               \
	"                       too (a name or a glob; repeatable), beside\n"  \
	"                       the built-in allocator wrappers and those "    \
	"of\n"                                                                 \
	"                       ~/.config/heaptool/fold\n"                     \
	"      --no-fold        fold only the --fold names: show every "       \
	"frame\n"                                                              \
	"      --short-names    C++ template arguments as <…>, no Rust "     \
	"hashes\n"

/*
 * After the options: the list of wrappers to fold into p->fold: unless
 * --no-fold, the built-in list and the names of the user's file
 * (ht_fold_config_path), then the --fold names.  Returns HT_EXIT_OK, or
 * HT_EXIT_FAIL after printing why (the file cannot be read, no memory).
 */
int ht_cmd_print_fold(struct ht_cmd_print *p);
/* Free p's lists. */
void ht_cmd_print_free(struct ht_cmd_print *p);

/* Apply p's --max-symbols, if given, to sym (which may be NULL). */
void ht_cmd_print_sym(const struct ht_cmd_print *p, struct ht_sym *sym);

/*
 * Take getopt_long's answer c and its argument arg into *p when it is one
 * of those options; any other c is the usage error of an unknown option or
 * a missing value of command argv[0].  Returns HT_EXIT_OK, or
 * HT_EXIT_USAGE after printing why.
 */
int
ht_cmd_print_opt(int c, const char *arg, char **argv, struct ht_cmd_print *p);

/*
 * Where report and diff find the files of a profile taken before the
 * files changed (symbolize.h): --sysroot DIR and --debug-dir DIR
 * (repeatable), or without them the environment's HEAPTOOL_SYSROOT and
 * HEAPTOOL_DEBUG_DIR (directories separated by colons).
 */
#define HT_CMD_MAX_DEBUG_DIRS 32
struct ht_cmd_files {
	const char *sysroot;
	const char *dirs[HT_CMD_MAX_DEBUG_DIRS];
	size_t ndirs;
	int sysroot_opt, dirs_opt; /* given as options */
	char *env;		   /* the split copy of HEAPTOOL_DEBUG_DIR */
};
enum {
	HT_CMD_OPT_SYSROOT = 512,
	HT_CMD_OPT_DEBUG_DIR,
};
#define HT_CMD_FILES_LONGOPTS                                                  \
	{ "sysroot", required_argument, NULL, HT_CMD_OPT_SYSROOT },            \
	{                                                                      \
		"debug-dir", required_argument, NULL, HT_CMD_OPT_DEBUG_DIR     \
	}
#define HT_CMD_FILES_HELP                                                      \
	"      --sysroot DIR    look for the modules' files of the "           \
	"profile's\n"                                                          \
	"                       time in DIR first (e.g. old packages "         \
	"unpacked\n"                                                           \
	"                       there), and for their debug files in\n"        \
	"                       DIR/usr/lib/debug\n"                           \
	"      --debug-dir DIR  look for separate debug files in DIR first, "  \
	"laid\n"                                                               \
	"                       out as /usr/lib/debug is (repeatable)\n"

/*
 * Take getopt_long's answer c with its argument arg into *f when it is one
 * of those options.  Returns HT_EXIT_OK, HT_EXIT_USAGE after printing why
 * (not a directory, too many), or -1 when c is none of them.
 */
int ht_cmd_files_opt(int c, const char *arg, struct ht_cmd_files *f);
/*
 * Complete *f after the options: the environment for what they did not
 * give.  Returns HT_EXIT_OK, or an exit status after printing why.
 */
int ht_cmd_files_env(struct ht_cmd_files *f);
/* The symbolizer's options of *f, pointing into it, in *o (its other
 * fields untouched). */
void ht_cmd_files_sym(const struct ht_cmd_files *f, struct ht_sym_opts *o);
void ht_cmd_files_free(struct ht_cmd_files *f);

/*
 * The output of a command: the file out (created or truncated), or stdout
 * when out is NULL or, with dash, "-".  Returns the stream, or NULL after
 * printing why.
 */
FILE *ht_cmd_out_open(const char *out, int dash);
/* Close a stream of ht_cmd_out_open (stdout stays open).  Returns rc, or
 * HT_EXIT_FAIL after printing why when the close failed and rc was
 * HT_EXIT_OK. */
int ht_cmd_out_close(FILE *fp, const char *out, int rc);

/*
 * Write the diff from old to new (osym and nsym built from each one's
 * modules) as p says, as text or with json as JSON, to p->out ("-" is
 * stdout too), as heaptool diff and heaptool report --diff both do; a
 * profile with dropped samples is warned of on stderr (ht_cmd_warn_drops).
 * Returns the exit status, after printing why on failure.
 */
int ht_cmd_diff_out(const struct ht_cmd_print *p, int json,
    const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym);

#endif
