/*
 * What the command files share (see cmd.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "diff.h"
#include "proto.h"
#include "size.h"
#include "target.h"
#include "text.h"

void
ht_cmd_getopt_reset(void)
{
	/* 0, not 1: glibc then also forgets where it was inside a group of
	 * short options and rereads POSIXLY_CORRECT. */
	optind = 0;
	opterr = 0;
}

int
ht_cmd_opt_error(const char *name, int c, char **argv)
{
	if (c == ':')
		return ht_usage("%s: %s needs a value; see 'heaptool %s "
				"--help'",
		    name, argv[optind - 1], name);
	return ht_usage("%s: %s: unknown option; see 'heaptool %s --help'",
	    name, argv[optind - 1], name);
}

int
ht_cmd_help(const char *text)
{
	fputs(text, stdout);
	return fflush(stdout) == 0 && !ferror(stdout) ? HT_EXIT_OK :
							HT_EXIT_FAIL;
}

int
ht_cmd_flush(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ht_warn("stdout: %s", strerror(errno));
		return HT_EXIT_FAIL;
	}
	return HT_EXIT_OK;
}

int
ht_cmd_parse_out(const char *s, const char *what, const char **out)
{
	if (s[0] == '\0')
		return ht_usage("-o: empty file name; give the %s's path",
		    what);
	*out = s;
	return HT_EXIT_OK;
}

static const struct option pid_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_target(int argc, char **argv, const char *usage, const char *hint,
    pid_t *pid)
{
	const char *popt = NULL;
	int ch;

	*pid = 0;
	ht_cmd_getopt_reset();
	while (
	    (ch = getopt_long(argc, argv, ":p:h", pid_options, NULL)) != -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'h':
			return ht_cmd_help(usage);
		default:
			return ht_cmd_opt_error(argv[0], ch, argv);
		}
	}
	if (optind < argc) {
		if (hint != NULL)
			return ht_usage("%s: %s: unexpected argument; %s",
			    argv[0], argv[optind], hint);
		return ht_usage("%s: %s: unexpected argument; see 'heaptool "
				"%s --help'",
		    argv[0], argv[optind], argv[0]);
	}
	return ht_target_resolve(popt, pid);
}

int
ht_cmd_request(int argc, char **argv, const char *usage, uint16_t type,
    pid_t *pid)
{
	int rc;

	if ((rc = ht_cmd_target(argc, argv, usage, NULL, pid)) != HT_EXIT_OK ||
	    *pid == 0)
		return rc;
	return ht_target_command(*pid, type);
}

int
ht_cmd_parse_rate(const char *s, uint64_t *rate)
{
	if (ht_size_parse(s, rate) != 0)
		return ht_usage("--rate %s: not a size; " HT_SIZE_HINT, s);
	if (*rate == 0)
		return ht_usage("--rate %s: must be at least 1; use 1 to "
				"record every allocation",
		    s);
	return HT_EXIT_OK;
}

int
ht_cmd_parse_max_samples(const char *s, uint64_t *n)
{
	if (ht_size_parse(s, n) != 0 || *n == 0 || *n > HT_PROTO_MAX_SAMPLES)
		return ht_usage("--max-samples %s: not a number from 1 to %u "
				"(K, M and G multiply by 1024: 32M is "
				"33554432)",
		    s, HT_PROTO_MAX_SAMPLES);
	return HT_EXIT_OK;
}

void
ht_cmd_warn_drops(const struct ht_meta *m, const char *what)
{
	char line[512];

	if (m->dropped_samples == 0)
		return;
	/* The line says what raises a bound that was the cause. */
	ht_warn("warning: %s: %s; every figure leaves them out%s", what,
	    ht_text_drop_line(m, line, sizeof(line)),
	    (m->drop_why & HT_DROP_NOMEM) ?
		"; free memory in the target, or sample at a larger --rate" :
		m->drop_why == 0 ? "; a larger --max-samples keeps more" :
				   "");
}

int
ht_cmd_print_opt(int c, const char *arg, char **argv, struct ht_cmd_print *p)
{
	unsigned long long v;
	char *end;

	switch (c) {
	case 'd':
		p->detail = 1;
		return HT_EXIT_OK;
	case 'b':
		p->raw_bytes = 1;
		return HT_EXIT_OK;
	case 't':
		errno = 0;
		if (arg[0] < '0' || arg[0] > '9' ||
		    (v = strtoull(arg, &end, 10)) == 0 || errno != 0 ||
		    *end != '\0' || v > SIZE_MAX)
			return ht_usage("--top %s: not a count; use a whole "
					"number of sites, at least 1",
			    arg);
		p->top = (size_t)v;
		return HT_EXIT_OK;
	case 'o':
		return ht_cmd_parse_out(arg, argv[0], &p->out);
	case HT_CMD_OPT_MAX_SYMBOLS:
		errno = 0;
		if (arg[0] < '0' || arg[0] > '9' ||
		    (v = strtoull(arg, &end, 10), errno != 0) || *end != '\0' ||
		    v > SIZE_MAX)
			return ht_usage("--max-symbols %s: not a count; use a "
					"whole number of addresses, 0 for no "
					"limit",
			    arg);
		p->max_symbols = (size_t)v;
		p->max_symbols_set = 1;
		return HT_EXIT_OK;
	case HT_CMD_OPT_FOLD:
		if (arg[0] == '\0')
			return ht_usage("--fold: an empty name; give a "
					"function's name or a glob");
		if ((p->user == NULL && (p->user = ht_fold_new()) == NULL) ||
		    ht_fold_add(p->user, arg) != 0) {
			ht_warn("--fold %s: %s", arg, strerror(errno));
			return HT_EXIT_FAIL;
		}
		return HT_EXIT_OK;
	case HT_CMD_OPT_NO_FOLD:
		p->no_fold = 1;
		return HT_EXIT_OK;
	case HT_CMD_OPT_SHORT_NAMES:
		p->short_names = 1;
		return HT_EXIT_OK;
	}
	return ht_cmd_opt_error(argv[0], c, argv);
}

int
ht_cmd_print_fold(struct ht_cmd_print *p)
{
	char path[4096], why[256];

	if (p->no_fold) {
		p->fold = p->user;
		p->user = NULL;
		return HT_EXIT_OK;
	}
	if (p->user == NULL && (p->user = ht_fold_new()) == NULL)
		goto out_nomem;
	if (ht_fold_builtin(p->user) != 0)
		goto out_nomem;
	if (ht_fold_config_path(path, sizeof(path)) != NULL &&
	    ht_fold_load(p->user, path, why, sizeof(why)) < 0) {
		ht_warn("fold file %s: %s; fix it, or give --no-fold", path,
		    why);
		return HT_EXIT_FAIL;
	}
	p->fold = p->user;
	p->user = NULL;
	return HT_EXIT_OK;

out_nomem:
	ht_warn("fold: %s", strerror(errno));
	return HT_EXIT_FAIL;
}

void
ht_cmd_print_free(struct ht_cmd_print *p)
{
	ht_fold_free(p->user);
	ht_fold_free(p->fold);
	p->user = p->fold = NULL;
}

/* what names a directory of the user's: it must be one. */
static int
user_dir(const char *what, const char *dir)
{
	struct stat st;

	if (dir[0] == '\0')
		return ht_usage("%s: an empty directory name; give a directory",
		    what);
	if (stat(dir, &st) != 0)
		return ht_usage("%s %s: %s; give a directory", what, dir,
		    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return ht_usage("%s %s: not a directory; give a directory",
		    what, dir);
	return HT_EXIT_OK;
}

static int
add_dir(struct ht_cmd_files *f, const char *what, const char *dir)
{
	int rc;

	if ((rc = user_dir(what, dir)) != HT_EXIT_OK)
		return rc;
	if (f->ndirs == HT_CMD_MAX_DEBUG_DIRS)
		return ht_usage("%s: more than %d debug directories; give "
				"fewer",
		    what, HT_CMD_MAX_DEBUG_DIRS);
	f->dirs[f->ndirs++] = dir;
	return HT_EXIT_OK;
}

int
ht_cmd_files_opt(int c, const char *arg, struct ht_cmd_files *f)
{
	switch (c) {
	case HT_CMD_OPT_SYSROOT:
		f->sysroot = arg;
		f->sysroot_opt = 1;
		return user_dir("--sysroot", arg);
	case HT_CMD_OPT_DEBUG_DIR:
		f->dirs_opt = 1;
		return add_dir(f, "--debug-dir", arg);
	}
	return -1;
}

int
ht_cmd_files_env(struct ht_cmd_files *f)
{
	struct stat st;
	const char *v;
	char *dir, *save;
	int rc;

	if (!f->sysroot_opt && (v = getenv("HEAPTOOL_SYSROOT")) != NULL &&
	    v[0] != '\0') {
		if ((rc = user_dir("HEAPTOOL_SYSROOT", v)) != HT_EXIT_OK)
			return rc;
		f->sysroot = v;
	}
	if (f->dirs_opt || (v = getenv("HEAPTOOL_DEBUG_DIR")) == NULL)
		return HT_EXIT_OK;
	if ((f->env = strdup(v)) == NULL) {
		ht_warn("HEAPTOOL_DEBUG_DIR: %s", strerror(errno));
		return HT_EXIT_FAIL;
	}
	/* As in PATH, empty entries and directories that are not there are
	 * skipped: one list may serve several machines. */
	for (dir = strtok_r(f->env, ":", &save); dir != NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if ((rc = add_dir(f, "HEAPTOOL_DEBUG_DIR", dir)) != HT_EXIT_OK)
			return rc;
	}
	return HT_EXIT_OK;
}

void
ht_cmd_files_sym(const struct ht_cmd_files *f, struct ht_sym_opts *o)
{
	o->sysroot = f->sysroot;
	o->debug_dirs = f->dirs;
	o->ndebug_dirs = f->ndirs;
}

void
ht_cmd_files_free(struct ht_cmd_files *f)
{
	free(f->env);
	f->env = NULL;
}

void
ht_cmd_print_sym(const struct ht_cmd_print *p, struct ht_sym *sym)
{
	if (sym != NULL && p->max_symbols_set)
		ht_sym_limit(sym, p->max_symbols);
}

FILE *
ht_cmd_out_open(const char *out, int dash)
{
	FILE *fp;

	if (out == NULL || (dash && strcmp(out, "-") == 0))
		return stdout;
	if ((fp = fopen(out, "w")) == NULL)
		ht_warn("-o %s: %s; choose a writable path", out,
		    strerror(errno));
	return fp;
}

int
ht_cmd_out_close(FILE *fp, const char *out, int rc)
{
	if (fp != stdout && fclose(fp) != 0 && rc == HT_EXIT_OK) {
		ht_warn("-o %s: %s", out, strerror(errno));
		rc = HT_EXIT_FAIL;
	}
	return rc;
}

/* Build the diff and write it with its writer.  Returns 0, or -1 with
 * errno. */
static int
diff_write(FILE *fp, const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts)
{
	struct ht_diff d;
	char msg[300];
	int rc;

	if (ht_diff_build(&d, old, osym, new, nsym, opts) != 0)
		return -1;
	if (opts->detail && ht_diff_symbolize(&d) != 0) {
		ht_diff_free(&d);
		return -1;
	}
	if (ht_text_skipped(&d.symbols, msg, sizeof(msg)) != NULL)
		ht_warn("warning: %s", msg);
	if (opts->json)
		rc = ht_diff_json(fp, &d, opts);
	else
		rc = ht_diff_text(fp, &d, opts);
	ht_diff_free(&d);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}

int
ht_cmd_diff_out(const struct ht_cmd_print *p, int json,
    const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym)
{
	struct ht_diff_opts opts;
	FILE *fp;
	int rc = HT_EXIT_OK;

	memset(&opts, 0, sizeof(opts));
	opts.detail = p->detail;
	opts.json = json;
	opts.top = p->top;
	opts.raw_bytes = p->raw_bytes;
	opts.fold = p->fold;
	if ((fp = ht_cmd_out_open(p->out, 1)) == NULL)
		return HT_EXIT_FAIL;
	if (diff_write(fp, old, osym, new, nsym, &opts) != 0) {
		ht_warn("diff: %s: %s", fp == stdout ? "stdout" : p->out,
		    strerror(errno));
		rc = HT_EXIT_FAIL;
	}
	if ((rc = ht_cmd_out_close(fp, p->out, rc)) == HT_EXIT_OK) {
		ht_cmd_warn_drops(&old->meta, "the old profile");
		ht_cmd_warn_drops(&new->meta, "the new profile");
	}
	return rc;
}

void
ht_cmd_status_unseen(FILE *fp, const char *lead, const struct ht_status *st)
{
	uint32_t i;

	for (i = 0; i < st->nallocators && i < HT_PROTO_MAX_ALLOCATORS; i++)
		ht_text_unseen(fp, lead, st->allocators[i].names,
		    st->allocators[i].path);
	if (st->allocators_more > 0)
		fprintf(fp,
		    "%swarning: and %" PRIu32 " more module%s like %s "
		    "(heaptool report lists them)\n",
		    lead, st->allocators_more,
		    st->allocators_more == 1 ? "" : "s",
		    st->allocators_more == 1 ? "it" : "these");
}

int
ht_cmd_find(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat st;
	size_t n;

	if (strchr(cmd, '/') != NULL)
		return (size_t)snprintf(buf, len, "%s", cmd) < len ? 0 : -1;
	if (path == NULL)
		path = "/bin:/usr/bin";
	for (p = path;; p = e + 1) {
		e = strchr(p, ':');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if ((size_t)snprintf(buf, len, "%.*s%s%s", (int)n, p,
			n > 0 ? "/" : "", cmd) < len &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0)
			return 0;
		if (e == NULL)
			return -1;
	}
}

int
ht_cmd_setenv_fdid(const char *name, int fd)
{
	struct stat st;
	char id[64];

	if (fstat(fd, &st) != 0)
		return -1;
	snprintf(id, sizeof(id), "%ju:%ju", (uintmax_t)st.st_dev,
	    (uintmax_t)st.st_ino);
	return setenv(name, id, 1);
}
