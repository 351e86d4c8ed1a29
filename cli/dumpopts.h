/*
 * The dump options that heaptool start and heaptool run share: where the
 * target writes its dumps (a prefix) and what triggers one.
 *
 * A command adds HT_DUMP_LONGOPTS to its getopt_long table, hands each of
 * their codes (HT_IS_DUMP_OPT) to ht_dump_opt, then calls
 * ht_dump_opts_finish once.  The prefix is made absolute against the
 * current directory; it names a place in the target's view of the file
 * system.  Both functions print why they fail.
 */
#ifndef HT_DUMPOPTS_H
#define HT_DUMPOPTS_H

#include <sys/types.h>

#include <stdint.h>

#define HT_OPT_DUMP_PREFIX   1001
#define HT_OPT_DUMP_INTERVAL 1002
#define HT_OPT_DUMP_EVERY    1003
#define HT_OPT_DUMP_AT_RSS   1004
#define HT_OPT_THRESHOLD     1005
#define HT_DUMP_LONGOPTS                                                       \
	{ "dump-prefix", required_argument, NULL, HT_OPT_DUMP_PREFIX },        \
	    { "dump-interval", required_argument, NULL,                        \
		    HT_OPT_DUMP_INTERVAL },                                    \
	    { "dump-every", required_argument, NULL, HT_OPT_DUMP_EVERY },      \
	    { "dump-at-rss", required_argument, NULL, HT_OPT_DUMP_AT_RSS },    \
	{                                                                      \
		"threshold", required_argument, NULL, HT_OPT_THRESHOLD         \
	}

/* The lines of a command's help that describe the triggers. */
#define HT_DUMP_HELP                                                           \
	"      --dump-interval DUR every DUR (e.g. 30s)\n"                     \
	"      --dump-every SIZE   after each SIZE allocated\n"                \
	"      --dump-at-rss SIZE  when RSS reaches SIZE, then each further "  \
	"10%\n"                                                                \
	"      --threshold SIZE    fold the sites below SIZE in the dumps\n"

/* Is ch one of HT_DUMP_LONGOPTS? */
#define HT_IS_DUMP_OPT(ch)                                                     \
	((ch) >= HT_OPT_DUMP_PREFIX && (ch) <= HT_OPT_THRESHOLD)

/* All zero: no dumps. */
struct ht_dump_opts {
	char prefix[4096]; /* absolute after finish; "" none */
	uint64_t interval_ms;
	uint64_t every_bytes;
	uint64_t at_rss_bytes;
	uint64_t threshold_bytes;
};

/* Take option ch's argument into o.  Returns HT_EXIT_OK, or HT_EXIT_USAGE
 * after printing why. */
int ht_dump_opt(int ch, const char *arg, struct ht_dump_opts *o);

/* Check the options together and make the prefix absolute.  Returns
 * HT_EXIT_OK, or an exit status after printing why. */
int ht_dump_opts_finish(struct ht_dump_opts *o);

/*
 * After ht_dump_opts_finish: say why the agent refuses, or would refuse, the
 * prefix's directory (src/safedir.h: a symbolic link on the way, another
 * user's directory, or one others may write in that is not sticky).  pid 0
 * is heaptool run's command, which will run here as this user: its
 * directory must also exist and be writable.  For a running pid, whose
 * agent checks the prefix itself but can only name an errno, the walk
 * starts at /proc/PID/root, for its uid, and what depends on the target's
 * own rights (a missing or unwritable directory) is left to the agent's
 * message.  Returns HT_EXIT_OK when it finds nothing to say (also when it
 * cannot look), or HT_EXIT_FAIL after printing why.
 */
int ht_dump_opts_check(const struct ht_dump_opts *o, pid_t pid);

#endif
