/*
 * heaptool dump: save the target's current profile to a file (or to
 * stdout), exactly as its agent sent it.
 */
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "files.h"
#include "profile.h"
#include "target.h"

static const char dump_usage[] =
    "usage: heaptool dump [-p PID] -o FILE\n"
    "\n"
    "Save the target's current profile to FILE (mode 0600, replaced\n"
    "atomically), for heaptool report FILE later or elsewhere.  With\n"
    "-o -, write it to stdout.\n"
    "\n"
    "  -p, --pid PID      the process (default: the current target)\n"
    "  -o, --output FILE  the file to write\n"
    "  -h, --help         show this help\n"
    "\n"
    "See man heaptool for the details.\n";

static const struct option dump_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_dump(int argc, char **argv)
{
	struct ht_profile *prof;
	const char *popt = NULL, *out = NULL, *what;
	uint8_t *raw;
	size_t len;
	int ch, rc;
	pid_t pid;

	ht_cmd_getopt_reset();
	while ((ch = getopt_long(argc, argv, ":p:o:h", dump_options, NULL)) !=
	    -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'o':
			if ((rc = ht_cmd_parse_out(optarg, "profile", &out)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'h':
			return ht_cmd_help(dump_usage);
		default:
			return ht_cmd_opt_error("dump", ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("dump: %s: unexpected argument; see 'heaptool "
				"dump --help'",
		    argv[optind]);
	if (out == NULL)
		return ht_usage("dump: no output file; usage: heaptool dump "
				"[-p PID] -o FILE");
	if (strcmp(out, "-") != 0 && (what = ht_not_regular(out)) != NULL)
		return ht_usage("dump: -o %s: %s, which the profile would "
				"replace; give a file's path, or -o - for "
				"stdout",
		    out, what);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	/* The profile is decoded first: never save what heaptool report
	 * could not read. */
	if ((prof = ht_target_profile(pid, &raw, &len)) == NULL)
		return HT_EXIT_FAIL;
	ht_profile_free(prof);
	rc = HT_EXIT_FAIL;
	if (strcmp(out, "-") == 0) {
		if (ht_write_all(STDOUT_FILENO, raw, len) != 0) {
			ht_warn("dump: stdout: %s", strerror(errno));
			goto out_free;
		}
		rc = HT_EXIT_OK;
		goto out_free;
	}
	if (ht_write_atomic(out, raw, len) != 0) {
		ht_warn("-o %s: %s; choose a writable path", out,
		    strerror(errno));
		goto out_free;
	}
	printf("heaptool: profile of %ld written to %s\n", (long)pid, out);
	rc = ht_cmd_flush();
out_free:
	free(raw);
	return rc;
}
