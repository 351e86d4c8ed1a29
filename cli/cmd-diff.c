/*
 * heaptool diff: compare two profile files (diff.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "profile.h"
#include "symbolize.h"

static const char diff_usage[] =
    "usage: heaptool diff [--detail] [--json] [--top N] [--bytes] [-o OUT]\n"
    "                     [--fold FUNC]... [--no-fold] [--short-names]\n"
    "                     [--sysroot DIR] [--debug-dir DIR]... OLD NEW\n"
    "\n"
    "Compare two profiles (files written by heaptool run or dump; - reads\n"
    "stdin): the change of every total and of the memory of each module, and\n"
    "with --detail of each allocation site, the largest growth first.  Sites\n"
    "are matched by their stacks as module and offset, so two runs of one\n"
    "program match; a site only NEW has is new, one only OLD has is gone.\n"
    "\n"
    "  -d, --detail         also list the sites, each with old, new and delta\n"
    "  -j, --json           write JSON (keys in man heaptool)\n"
    "  -t, --top N          list the N sites that changed most, fold the rest\n"
    "  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
    "  -o, --output OUT     write the diff to OUT instead of "
    "stdout\n" HT_CMD_FOLD_HELP HT_CMD_FILES_HELP HT_CMD_MAX_SYMBOLS_HELP
    "  -h, --help           show this help\n"
    "\n"
    "HEAPTOOL_SYSROOT and HEAPTOOL_DEBUG_DIR (DIR:DIR...) stand for\n"
    "--sysroot and --debug-dir when they are not given.\n"
    "See man heaptool for the details.\n";

static const struct option diff_options[] = {
	{ "json", no_argument, NULL, 'j' },
	HT_CMD_PRINT_LONGOPTS,
	HT_CMD_FILES_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The command of m, its control characters as '?', into buf[len]. */
static const char *
command(const struct ht_meta *m, char *buf, size_t len)
{
	size_t i, n = strnlen(m->command, sizeof(m->command));

	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)m->command[i] < 0x20 ||
			m->command[i] == 0x7f ?
		    '?' :
		    m->command[i];
	buf[n] = '\0';
	return buf;
}

/* Sites are matched by module and offset: those of two different programs
 * seldom match, and the diff would show all of one as gone and all of the
 * other as new.  Say so, and go on (it may be one program renamed). */
static void
warn_programs(const char *old, const struct ht_profile *a, const char *new,
    const struct ht_profile *b)
{
	char ca[sizeof(a->meta.command)], cb[sizeof(b->meta.command)];

	if (strncmp(a->meta.command, b->meta.command,
		sizeof(a->meta.command)) == 0)
		return;
	ht_warn("warning: %s is a profile of %s (pid %" PRIu64 "), %s of %s "
		"(pid %" PRIu64 "): the sites of two programs seldom match; "
		"compare profiles of one program",
	    old, command(&a->meta, ca, sizeof(ca)), a->meta.pid, new,
	    command(&b->meta, cb, sizeof(cb)), b->meta.pid);
}

int
ht_cmd_diff(int argc, char **argv)
{
	struct ht_cmd_print p;
	struct ht_cmd_files files;
	struct ht_sym_opts sopts;
	struct ht_profile *prof[2] = { NULL, NULL };
	struct ht_sym *sym[2] = { NULL, NULL };
	char err[256];
	int c, k, rc, json = 0;

	memset(&p, 0, sizeof(p));
	memset(&files, 0, sizeof(files));
	memset(&sopts, 0, sizeof(sopts));
	ht_cmd_getopt_reset();
	while ((c = getopt_long(argc, argv, ":djt:bo:h", diff_options, NULL)) !=
	    -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			return ht_cmd_help(diff_usage);
		default:
			if ((rc = ht_cmd_files_opt(c, optarg, &files)) == -1)
				rc = ht_cmd_print_opt(c, optarg, argv, &p);
			if (rc != HT_EXIT_OK)
				return rc;
			break;
		}
	}
	if (argc - optind != 2)
		return ht_usage("diff: %s; usage: heaptool diff [OPTION...] "
				"OLD NEW",
		    argc - optind < 2 ? "two profiles needed" :
					"only two profiles at a time");
	if (strcmp(argv[optind], "-") == 0 &&
	    strcmp(argv[optind + 1], "-") == 0)
		return ht_usage("diff: - and -: standard input holds one "
				"profile; give at least one file");

	if ((rc = ht_cmd_files_env(&files)) != HT_EXIT_OK ||
	    (rc = ht_cmd_print_fold(&p)) != HT_EXIT_OK)
		goto out;
	ht_cmd_files_sym(&files, &sopts);
	sopts.short_names = p.short_names;
	rc = HT_EXIT_FAIL;
	for (k = 0; k < 2; k++) {
		const char *path = argv[optind + k];

		if ((prof[k] = ht_profile_read_file(path, err, sizeof(err))) ==
		    NULL) {
			ht_warn("diff %s: %s; %s", path, err,
			    errno == ENOENT ?
				"check the file name" :
				"pass a profile written by heaptool");
			goto out;
		}
		if ((sym[k] = ht_sym_new(prof[k]->modules, prof[k]->nmodules,
			 &sopts)) == NULL) {
			ht_warn("diff %s: %s", path, strerror(errno));
			goto out;
		}
		ht_cmd_print_sym(&p, sym[k]);
	}
	warn_programs(argv[optind], prof[0], argv[optind + 1], prof[1]);
	rc = ht_cmd_diff_out(&p, json, prof[0], sym[0], prof[1], sym[1]);
out:
	for (k = 0; k < 2; k++) {
		if (sym[k] != NULL)
			ht_sym_free(sym[k]);
		if (prof[k] != NULL)
			ht_profile_free(prof[k]);
	}
	ht_cmd_files_free(&files);
	ht_cmd_print_free(&p);
	return rc;
}
