/*
 * heaptool report: print a profile, saved in a file or the current one of
 * a live target (target.h), in one of the report formats (report.h); with
 * --diff, what changed in the target since its baseline, as heaptool diff
 * prints it.
 */
#include "allocnames.h"
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "report.h"
#include "size.h"
#include "target.h"
#include "text.h"

static const char report_usage[] =
    "usage: heaptool report [-p PID] [--detail] [--format FORMAT | --json]\n"
    "                       [--sort COLUMN] [--top N] [--threshold SIZE]\n"
    "                       [--at-peak] [--coverage] [--bytes] [-o OUT]\n"
    "                       [--tag NAME] [--group-by tag] [--timeline]\n"
    "                       [--sizes]\n"
    "                       [--fold FUNC]... [--no-fold] [--short-names]\n"
    "                       [--sysroot DIR]\n"
    "                       [--debug-dir DIR]... [--diff | FILE]\n"
    "\n"
    "Print a profile: the session, the totals with their 95% intervals,\n"
    "memory by module and by thread.  The profile is the one saved in FILE\n"
    "(by heaptool run or dump; - reads stdin), or without FILE the current\n"
    "one of the target (PID, or the current target of heaptool attach); of\n"
    "a target that is gone, the final profile it wrote as it ended.\n"
    "\n"
    "  -p, --pid PID        report on the running process PID\n"
    "  -d, --detail         also list every allocation site with its stack\n"
    "  -f, --format FORMAT  text (default), json, pprof (gzip'd "
    "profile.proto),\n"
    "                       collapsed (stacks for flamegraph.pl), svg (an\n"
    "                       interactive flame graph) or html (one page:\n"
    "                       memory over time, summary, top sites, flame\n"
    "                       graphs); pprof and svg need -o or a redirection\n"
    "  -j, --json           same as --format json\n"
    "  -s, --sort COLUMN    inuse (bytes in use, default), alloc (bytes\n"
    "                       allocated), objects (objects in use) or temporary\n"
    "                       (short-lived allocations): the order of the\n"
    "                       sites and the value of collapsed and svg\n"
    "  -t, --top N          list the N first sites, fold the rest into one\n"
    "      --threshold SIZE fold the sites below SIZE in use and allocated\n"
    "      --at-peak        the sites as they were at the peak of memory in "
    "use\n"
    "      --tag NAME       only the sites of tag NAME (heaptool_tag(3));\n"
    "                       the totals are then that tag's\n"
    "      --group-by tag   collapsed and svg: root each stack at its tag\n"
    "      --timeline       text and JSON: add the session's memory over\n"
    "                       time (a point each 100 ms at most)\n"
    "      --sizes          text and JSON: add the allocations by size\n"
    "                       (powers of 2: how many, how many bytes)\n"
    "      --coverage       list which allocator functions of which modules\n"
    "                       are hooked, by which backend, and why not\n"
    "      --diff           what changed since heaptool baseline, as heaptool\n"
    "                       diff prints it (with --detail, --json, --top,\n"
    "                       --bytes and -o only)\n"
    "  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
    "  -o, --output OUT     write the report to OUT instead of "
    "stdout\n" HT_CMD_FOLD_HELP HT_CMD_FILES_HELP HT_CMD_MAX_SYMBOLS_HELP
    "  -h, --help           show this help\n"
    "\n"
    "HEAPTOOL_SYSROOT and HEAPTOOL_DEBUG_DIR (DIR:DIR...) stand for\n"
    "--sysroot and --debug-dir when they are not given.\n"
    "See man heaptool for the details and the JSON keys.\n";

enum {
	OPT_THRESHOLD = 256,
	OPT_AT_PEAK,
	OPT_DIFF,
	OPT_COVERAGE,
	OPT_TAG,
	OPT_GROUP_BY,
	OPT_TIMELINE,
	OPT_SIZES,
};

static const struct option report_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "format", required_argument, NULL, 'f' },
	{ "sort", required_argument, NULL, 's' },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "at-peak", no_argument, NULL, OPT_AT_PEAK },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "coverage", no_argument, NULL, OPT_COVERAGE },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "timeline", no_argument, NULL, OPT_TIMELINE },
	{ "sizes", no_argument, NULL, OPT_SIZES },
	HT_CMD_PRINT_LONGOPTS,
	HT_CMD_FILES_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The target's baseline, read back.  Returns it, or NULL after printing
 * why. */
static struct ht_profile *
baseline(pid_t pid, uint64_t start)
{
	struct ht_profile *base;
	char path[PATH_MAX + 64], err[256];

	if (ht_target_baseline_path(path, sizeof(path), pid, start, 0) != 0) {
		ht_warn("report --diff: no baseline for %ld (%s); run "
			"heaptool baseline first",
		    (long)pid, strerror(errno));
		return NULL;
	}
	if ((base = ht_profile_read_file(path, err, sizeof(err))) == NULL) {
		if (errno == ENOENT)
			ht_warn("report --diff: no baseline for %ld; run "
				"heaptool baseline first",
			    (long)pid);
		else
			ht_warn("report --diff: baseline %s: %s; run heaptool "
				"baseline again",
			    path, err);
	}
	return base;
}

/* report --diff: the target now against its baseline, with the options
 * that heaptool diff has (the others do not apply to a diff). */
static int
report_diff(const char *popt, const struct ht_report_opts *opts,
    const struct ht_cmd_print *p, const char *file,
    const struct ht_sym_opts *files)
{
	struct ht_profile *base = NULL, *now = NULL;
	struct ht_sym *bsym = NULL, *nsym = NULL;
	uint64_t start;
	int rc;
	pid_t pid;

	if (file != NULL)
		return ht_usage(
		    "report --diff: %s: the diff is of the "
		    "target against its baseline; to compare two files use "
		    "heaptool diff OLD NEW",
		    file);
	if (opts->format != HT_REPORT_TEXT && opts->format != HT_REPORT_JSON)
		return ht_usage("report --diff: a diff is written as text or "
				"JSON only; drop --format or use --json");
	if (opts->sort != HT_VIEW_INUSE || opts->threshold != 0 ||
	    opts->at_peak)
		return ht_usage(
		    "report --diff: --sort, --threshold and "
		    "--at-peak do not apply to a diff; see 'heaptool diff "
		    "--help'");
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if (ht_target_start_time(pid, &start) != 0 ||
	    (base = baseline(pid, start)) == NULL)
		return HT_EXIT_FAIL;
	rc = HT_EXIT_FAIL;
	if ((now = ht_target_profile(pid, NULL, NULL)) == NULL)
		goto out;
	/* Both are the process's: its files as it sees them. */
	if ((bsym = ht_target_sym(pid, base, files)) == NULL ||
	    (nsym = ht_target_sym(pid, now, files)) == NULL) {
		ht_warn("report --diff %ld: %s", (long)pid, strerror(errno));
		goto out;
	}
	ht_cmd_print_sym(p, bsym);
	ht_cmd_print_sym(p, nsym);
	rc = ht_cmd_diff_out(p, opts->format == HT_REPORT_JSON, base, bsym, now,
	    nsym);
out:
	if (nsym != NULL)
		ht_sym_free(nsym);
	if (bsym != NULL)
		ht_sym_free(bsym);
	ht_profile_free(now);
	ht_profile_free(base);
	return rc;
}

/* Say (on stderr, so that a report on stdout stays whole) that pid is gone
 * and that its final profile at path, read into prof, is what follows. */
static void
say_final(pid_t pid, const char *path, const struct ht_profile *prof)
{
	char when[64];
	struct stat st;
	struct tm tm;

	when[0] = '\0';
	if (stat(path, &st) == 0 && localtime_r(&st.st_mtime, &tm) != NULL)
		strftime(when, sizeof(when), " at %Y-%m-%d %H:%M:%S", &tm);
	if (prof->meta.flags & HT_META_ON_SIGNAL)
		ht_warn("%ld was killed by %s%s; reading its final profile %s",
		    (long)pid, ht_text_signal_name(prof->meta.signal), when,
		    path);
	else
		ht_warn("%ld exited%s; reading its final profile %s", (long)pid,
		    when, path);
}

/* The current profile of the live target pid, with its symbolizer. */
static int
load_live(pid_t pid, const struct ht_sym_opts *files, struct ht_profile **profp,
    struct ht_sym **symp, char *what, size_t whatlen)
{
	snprintf(what, whatlen, "target %ld", (long)pid);
	if ((*profp = ht_target_profile(pid, NULL, NULL)) == NULL)
		return HT_EXIT_FAIL;
	*symp = ht_target_sym(pid, *profp, files);
	return HT_EXIT_OK;
}

/* The profile to report on: the file path, or with path NULL the current
 * one of the target (popt, the argument of -p, or NULL), or the final
 * profile of a target that is gone, with its symbolizer; what names it in
 * messages.  Returns HT_EXIT_OK, or the exit status after printing why. */
static int
load(const char *path, const char *popt, const struct ht_sym_opts *files,
    struct ht_profile **profp, struct ht_sym **symp, char *what, size_t whatlen)
{
	char err[256], final[PATH_MAX];
	int rc = HT_EXIT_OK, gone = 0;
	pid_t pid = 0;

	*profp = NULL;
	*symp = NULL;
	if (path == NULL) {
		if ((rc = ht_target_resolve_final(popt, &pid, final,
			 sizeof(final))) != HT_EXIT_OK)
			return rc;
		if (final[0] == '\0')
			rc = load_live(pid, files, profp, symp, what, whatlen);
		else {
			path = final;
			gone = 1;
		}
	}
	if (path != NULL) {
		if ((*profp = ht_profile_read_file(path, err, sizeof(err))) ==
		    NULL) {
			if (gone)
				ht_warn("report %ld: it exited; its final "
					"profile %s does not read (%s): "
					"remove it",
				    (long)pid, path, err);
			else
				ht_warn("report %s: %s; %s", path, err,
				    errno == ENOENT ?
					"check the file name" :
					"pass a profile written by heaptool");
			return HT_EXIT_FAIL;
		}
		if (gone)
			say_final(pid, path, *profp);
		snprintf(what, whatlen, "%s", path);
		*symp =
		    ht_sym_new((*profp)->modules, (*profp)->nmodules, files);
	}
	if (rc != HT_EXIT_OK)
		return rc;
	if (*symp == NULL) {
		ht_warn("report %s: %s", what, strerror(errno));
		ht_profile_free(*profp);
		*profp = NULL;
		return HT_EXIT_FAIL;
	}
	return HT_EXIT_OK;
}

int
ht_cmd_report(int argc, char **argv)
{
	struct ht_report_opts opts;
	struct ht_cmd_files files;
	struct ht_sym_opts sopts;
	struct ht_cmd_print p;
	struct ht_profile *prof;
	struct ht_sym *sym;
	const char *out, *popt = NULL, *tag = NULL;
	char what[PATH_MAX + 64];
	FILE *fp;
	int c, diff = 0, rc;

	memset(&opts, 0, sizeof(opts));
	memset(&p, 0, sizeof(p));
	memset(&files, 0, sizeof(files));
	memset(&sopts, 0, sizeof(sopts));
	opts.format = HT_REPORT_TEXT;
	ht_cmd_getopt_reset();
	while ((c = getopt_long(argc, argv, ":p:djf:s:t:bo:h", report_options,
		    NULL)) != -1) {
		switch (c) {
		case 'h':
			return ht_cmd_help(report_usage);
		case 'p':
			popt = optarg;
			break;
		case 'j':
			opts.format = HT_REPORT_JSON;
			break;
		case 'f':
			if (ht_report_format_parse(optarg, &opts.format) != 0)
				return ht_usage(
				    "--format %s: not a format "
				    "this heaptool writes; use text, json, "
				    "pprof, collapsed, svg or html",
				    optarg);
			break;
		case 's':
			if (ht_report_sort_parse(optarg, &opts.sort) != 0)
				return ht_usage("--sort %s: not a column; use "
						"inuse, alloc, objects or "
						"temporary",
				    optarg);
			break;
		case OPT_THRESHOLD:
			if (ht_size_parse(optarg, &opts.threshold) != 0)
				return ht_usage(
				    "--threshold %s: not a size; " HT_SIZE_HINT,
				    optarg);
			break;
		case OPT_AT_PEAK:
			opts.at_peak = 1;
			break;
		case OPT_DIFF:
			diff = 1;
			break;
		case OPT_COVERAGE:
			opts.coverage = 1;
			break;
		case OPT_TAG:
			tag = optarg;
			break;
		case OPT_TIMELINE:
			opts.timeline = 1;
			break;
		case OPT_SIZES:
			opts.sizes = 1;
			break;
		case OPT_GROUP_BY:
			if (strcmp(optarg, "tag") != 0)
				return ht_usage(
				    "--group-by %s: not a grouping; "
				    "use --group-by tag",
				    optarg);
			opts.group_by_tag = 1;
			break;
		default:
			if ((rc = ht_cmd_files_opt(c, optarg, &files)) == -1)
				rc = ht_cmd_print_opt(c, optarg, argv, &p);
			if (rc != HT_EXIT_OK)
				return rc;
			break;
		}
	}
	opts.detail = p.detail;
	opts.top = p.top;
	opts.raw_bytes = p.raw_bytes;
	out = p.out;
	if ((rc = ht_cmd_print_fold(&p)) != HT_EXIT_OK)
		return rc;
	opts.fold = p.fold;
	sopts.short_names = p.short_names;
	if (argc - optind > 1)
		return ht_usage("report: %s: one profile at a time; see "
				"'heaptool report --help'",
		    argv[optind + 1]);
	if ((opts.timeline || opts.sizes) && opts.format != HT_REPORT_TEXT &&
	    opts.format != HT_REPORT_JSON)
		return ht_usage("report: --%s adds to a text or JSON report "
				"(--format html always has it); drop --format "
				"or use --json",
		    opts.timeline ? "timeline" : "sizes");
	if (opts.group_by_tag && opts.format != HT_REPORT_COLLAPSED &&
	    opts.format != HT_REPORT_SVG)
		return ht_usage("report: --group-by tag roots the stacks of "
				"--format collapsed or svg; give one of those");
	if (diff) {
		if (tag != NULL || opts.group_by_tag)
			return ht_usage("report --diff: --tag and --group-by "
					"do not apply; the diff compares every "
					"tag");
		if (opts.timeline || opts.sizes)
			return ht_usage("report --diff: --%s does not apply; "
					"drop it, or report without --diff",
			    opts.timeline ? "timeline" : "sizes");
		if ((rc = ht_cmd_files_env(&files)) == HT_EXIT_OK) {
			ht_cmd_files_sym(&files, &sopts);
			rc = report_diff(popt, &opts, &p,
			    optind < argc ? argv[optind] : NULL, &sopts);
		}
		ht_cmd_files_free(&files);
		ht_cmd_print_free(&p);
		return rc;
	}
	if (optind < argc && popt != NULL)
		return ht_usage("report: -p %s and %s: give a process or a "
				"file, not both",
		    popt, argv[optind]);
	if ((opts.format == HT_REPORT_PPROF || opts.format == HT_REPORT_SVG) &&
	    out == NULL && isatty(STDOUT_FILENO))
		return ht_usage(
		    "report: --format %s writes a file, not "
		    "text for a terminal; give -o FILE or redirect stdout",
		    opts.format == HT_REPORT_PPROF ? "pprof" : "svg");

	if ((rc = ht_cmd_files_env(&files)) != HT_EXIT_OK) {
		ht_cmd_files_free(&files);
		return rc;
	}
	ht_cmd_files_sym(&files, &sopts);
	rc = load(optind < argc ? argv[optind] : NULL, popt, &sopts, &prof,
	    &sym, what, sizeof(what));
	ht_cmd_files_free(&files); /* the symbolizer keeps copies */
	if (rc != HT_EXIT_OK)
		return rc;
	ht_cmd_print_sym(&p, sym);
	rc = HT_EXIT_FAIL;
	if (tag != NULL) {
		int64_t id = ht_view_tag_find(prof, tag);

		if (id < 0) {
			ht_warn("report: --tag %s: %s has no such tag; "
				"heaptool report lists its tags under "
				"\"by tag\"",
			    tag, what);
			goto out_free;
		}
		opts.filter_tag = 1;
		opts.tag = (uint32_t)id;
	}
	/* A figure the backend could not give is never made up. */
	if (opts.at_peak && (prof->meta.flags & HT_META_PEAK_UNKNOWN)) {
		ht_warn("report: --at-peak: %s has no peak (the %s backend's "
			"samples keep none); report without --at-peak",
		    what, ht_backend_name(prof->meta.backend));
		goto out_free;
	}
	if (opts.sort == HT_VIEW_ALLOC &&
	    (prof->meta.flags & HT_META_ALLOC_UNKNOWN)) {
		ht_warn("report: --sort alloc: %s does not know what was "
			"allocated (the %s backend without opt.prof_accum); "
			"sort by inuse or objects",
		    what, ht_backend_name(prof->meta.backend));
		goto out_free;
	}
	if (opts.sort == HT_VIEW_TEMPORARY &&
	    !ht_profile_temporary_known(prof)) {
		ht_warn("report: --sort temporary: %s does not count "
			"short-lived allocations (%s); sort by inuse, alloc "
			"or objects",
		    what,
		    prof->version < 10 ? "profile format before 10" :
					 "the allocator's own sampling");
		goto out_free;
	}
	if ((fp = ht_cmd_out_open(out, 0)) == NULL)
		goto out_free;
	if (ht_report_write(fp, prof, sym, &opts) != 0)
		ht_warn("report %s: %s", out != NULL ? out : "stdout",
		    strerror(errno));
	else
		rc = HT_EXIT_OK;
	rc = ht_cmd_out_close(fp, out, rc);
	if (rc == HT_EXIT_OK)
		ht_cmd_warn_drops(&prof->meta, what);
out_free:
	ht_sym_free(sym);
	ht_profile_free(prof);
	ht_cmd_print_free(&p);
	return rc;
}
