/*
 * heaptool run: start a command with the agent preloaded.
 *
 * The agent reads its instructions from the environment in its
 * constructor (the contract between this file and agent/agent.c):
 *   LD_PRELOAD        the agent's absolute path, before any existing entries
 *   HEAPTOOL_PID      the pid the agent may profile: the command's own pid,
 *                     so that its children (same environment, other pid)
 *                     run unprofiled
 *   HEAPTOOL_RATE     the sampling rate in bytes, decimal
 *   HEAPTOOL_MAX_SAMPLES  the tables' bound (--max-samples), set only when
 *                     given
 *   HEAPTOOL_OUTPUT   the absolute path of the profile, written atomically
 *                     by the agent when the process exits
 *   HEAPTOOL_DUMP_PREFIX, HEAPTOOL_DUMP_INTERVAL_MS, HEAPTOOL_DUMP_EVERY,
 *   HEAPTOOL_DUMP_AT_RSS, HEAPTOOL_THRESHOLD
 *                     the session's dumps (--dump-prefix ... --threshold:
 *                     an absolute prefix, milliseconds, bytes), each set
 *                     only when given and removed otherwise
 *   HEAPTOOL_BACKEND  got (--backend got or inline, or inline by default:
 *                     the hooks) or jemalloc (--backend jemalloc); removed
 *                     otherwise (jemalloc where it samples, else the GOT)
 *   HEAPTOOL_FOLLOW_FORKS  1 with --follow-forks (children of fork start
 *                     sessions of their own), removed otherwise
 *   HEAPTOOL_STATUS_FD, HEAPTOOL_STATUS_COOKIE
 *                     the status page (src/runstat.h), on which the agent
 *                     says how the profile fared: this file reads it when
 *                     no profile appeared, to say why (the agent cannot
 *                     write one as the user the command switched to, a
 *                     full disk, a command that did not load the agent)
 * HEAPTOOL_SEED, when set by the user (tests fix it), passes through.
 *
 * The parent waits as system(3) does, ignoring SIGINT and SIGQUIT (the
 * terminal sends them to the command too; the command decides), then
 * reads the profile and prints the summary on stderr.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocnames.h"
#include "cli.h"
#include "cmd.h"
#include "dumpopts.h"
#include "files.h"
#include "inline.h"
#include "profile.h"
#include "report.h"
#include "runstat.h"
#include "size.h"
#include "staging.h"
#include "symbolize.h"

static const char run_usage[] =
    "usage: heaptool run [--rate SIZE] [--max-samples N] [-o FILE] [--live]\n"
    "                    [--follow-forks] [--dump-prefix P]\n"
    "                    [--dump-interval DUR] [--dump-every SIZE]\n"
    "                    [--dump-at-rss SIZE] [--threshold SIZE]\n"
    "                    [--backend got|inline|jemalloc] [--] CMD [ARG...]\n"
    "\n"
    "Run CMD with the heap profiler loaded from its start.  When CMD exits,\n"
    "its profile is saved to FILE (as the user CMD runs as then) and a\n"
    "summary is printed on stderr, or why there is none.  Children of CMD\n"
    "are not profiled, unless --follow-forks.\n"
    "\n" HT_CMD_RATE_HELP HT_CMD_MAX_SAMPLES_HELP
    "  -o, --output FILE  save the profile to FILE\n"
    "                     (default heaptool.PID.heap in this directory)\n"
    "      --live         serve live reports too (heaptool report -p PID);\n"
    "                     costs an agent thread, and with it glibc's arena\n"
    "                     locks on every allocation above 1 KiB\n"
    "      --follow-forks children that CMD forks (without exec) start\n"
    "                     sessions of their own at the fork, served live\n"
    "                     (report -p CHILD) and dumped with --dump-prefix\n"
    "                     under their own pid; implies --live\n"
    "      --backend B    got: the GOT hooks alone; inline: the allocator\n"
    "                     functions no GOT slot leads to (an allocator in\n"
    "                     the executable) are hooked inline too, before\n"
    "                     main (heaptool traces CMD for that moment);\n"
    "                     jemalloc: jemalloc's own sampling (CMD's jemalloc\n"
    "                     must run with opt.prof on, e.g. MALLOC_CONF=\n"
    "                     prof:true,prof_active:false; the rate rounded to\n"
    "                     a power of 2), refused if it cannot; default:\n"
    "                     inline if CMD's executable defines an allocator\n"
    "                     function, else jemalloc where it samples, else got\n"
    "      --dump-prefix P     also write dumps P.PID.SEQ.heap: when an\n"
    "                          allocation fails, at exit, and on the\n"
    "                          triggers below\n" HT_DUMP_HELP
    "  -h, --help         show this help\n"
    "\n"
    "The exit status is CMD's, or 128+N if a signal N killed it.\n"
    "See man heaptool for the details.\n";

#define OPT_BACKEND 1201

static const struct option run_options[] = {
	{ "rate", required_argument, NULL, 'r' },
	{ "output", required_argument, NULL, 'o' },
	{ "live", no_argument, NULL, 'l' },
	{ "follow-forks", no_argument, NULL, HT_OPT_FOLLOW_FORKS },
	{ "max-samples", required_argument, NULL, 'M' },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	HT_DUMP_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
setenv_u64(const char *name, uint64_t v)
{
	char num[32];

	if (v == 0)
		return unsetenv(name);
	snprintf(num, sizeof(num), "%" PRIu64, v);
	return setenv(name, num, 1);
}

/* Make path absolute against the current directory. */
static int
absolute(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];

	if (path[0] == '/') {
		if ((size_t)snprintf(buf, len, "%s", path) >= len)
			goto toolong;
		return 0;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		ht_warn("current directory: %s; run heaptool from a directory "
			"that exists, or give -o an absolute path",
		    strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(buf, len, "%s%s%s", cwd,
		strcmp(cwd, "/") == 0 ? "" : "/", path) >= len)
		goto toolong;
	return 0;

toolong:
	ht_warn("-o %s: path too long; choose a shorter path", path);
	return -1;
}

/* The agent writes the profile next to its final name and renames it:
 * the directory must be writable, and a clear error now beats a missing
 * profile after a long run. */
static int
check_output_dir(const char *path)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK) != 0) {
		ht_warn("-o %s: directory %s: %s; choose a writable place for "
			"the profile",
		    path, dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The default profile path: dir (ending in '/') + "heaptool.PID.heap". */
static int
default_output(const char *dir, pid_t pid, char *buf, size_t len)
{
	char name[64];
	size_t dl = strlen(dir), nl;

	nl = (size_t)snprintf(name, sizeof(name), "heaptool.%ld.heap",
	    (long)pid);
	if (dl + nl >= len)
		return -1;
	memcpy(buf, dir, dl);
	memcpy(buf + dl, name, nl + 1);
	return 0;
}

/* The status page (src/runstat.h): its descriptor and our mapping. */
struct page {
	int fd; /* -1: none */
	struct ht_runstat *st;
};

/* Make the page.  Without one (no memfd), the command runs all the same
 * and a missing profile is explained from its exit status alone. */
static void
page_make(struct page *pg)
{
	uint64_t cookie;
	void *m;

	pg->st = NULL;
	if ((pg->fd = memfd_create("heaptool-run-status", MFD_CLOEXEC)) == -1)
		return;
	if (ftruncate(pg->fd, HT_RUNSTAT_SIZE) != 0 ||
	    getrandom(&cookie, sizeof(cookie), 0) != (ssize_t)sizeof(cookie) ||
	    (m = mmap(NULL, HT_RUNSTAT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pg->fd, 0)) == MAP_FAILED) {
		close(pg->fd);
		pg->fd = -1;
		return;
	}
	pg->st = m;
	pg->st->cookie = cookie;
	pg->st->magic = HT_RUNSTAT_MAGIC;
}

static void
page_free(struct page *pg)
{
	if (pg->st != NULL)
		munmap(pg->st, HT_RUNSTAT_SIZE);
	if (pg->fd != -1)
		close(pg->fd);
}

/* In the child: hand the page over the exec, or say there is none. */
static int
page_env(const struct page *pg)
{
	char num[32];

	if (pg->fd == -1 || fcntl(pg->fd, F_SETFD, 0) != 0)
		return unsetenv(HT_RUNSTAT_FD_ENV) != 0 ||
			unsetenv(HT_RUNSTAT_COOKIE_ENV) != 0 ?
		    -1 :
		    0;
	snprintf(num, sizeof(num), "%d", pg->fd);
	if (setenv(HT_RUNSTAT_FD_ENV, num, 1) != 0)
		return -1;
	snprintf(num, sizeof(num), "%" PRIu64, pg->st->cookie);
	return setenv(HT_RUNSTAT_COOKIE_ENV, num, 1);
}

static void
close_bell(int *bell)
{
	if (bell[0] >= 0)
		close(bell[0]);
	if (bell[1] >= 0)
		close(bell[1]);
}

/* In the child: set up the agent's environment and exec.  Only returns
 * on failure, with errno set. */
static void
exec_child(char **cmd, const char *agent, uint64_t rate, uint64_t max_samples,
    const char *output, int live, int follow, const struct ht_dump_opts *d,
    const struct page *pg, int bell, int backend)
{
	char num[32], *preload;
	const char *old;

	old = getenv("LD_PRELOAD");
	if (old != NULL && old[0] != '\0') {
		if (asprintf(&preload, "%s:%s", agent, old) == -1)
			return;
	} else if ((preload = strdup(agent)) == NULL)
		return;
	if (setenv("LD_PRELOAD", preload, 1) != 0)
		return;
	snprintf(num, sizeof(num), "%ld", (long)getpid());
	if (setenv("HEAPTOOL_PID", num, 1) != 0)
		return;
	snprintf(num, sizeof(num), "%" PRIu64, rate);
	if (setenv("HEAPTOOL_RATE", num, 1) != 0 ||
	    setenv("HEAPTOOL_OUTPUT", output, 1) != 0 ||
	    (live ? setenv("HEAPTOOL_LIVE", "1", 1) :
		    unsetenv("HEAPTOOL_LIVE")) != 0 ||
	    (follow ? setenv("HEAPTOOL_FOLLOW_FORKS", "1", 1) :
		      unsetenv("HEAPTOOL_FOLLOW_FORKS")) != 0)
		return;
	if ((d->prefix[0] != '\0' ?
		    setenv("HEAPTOOL_DUMP_PREFIX", d->prefix, 1) :
		    unsetenv("HEAPTOOL_DUMP_PREFIX")) != 0 ||
	    setenv_u64("HEAPTOOL_DUMP_INTERVAL_MS", d->interval_ms) != 0 ||
	    setenv_u64("HEAPTOOL_DUMP_EVERY", d->every_bytes) != 0 ||
	    setenv_u64("HEAPTOOL_DUMP_AT_RSS", d->at_rss_bytes) != 0 ||
	    setenv_u64("HEAPTOOL_THRESHOLD", d->threshold_bytes) != 0 ||
	    setenv_u64("HEAPTOOL_MAX_SAMPLES", max_samples) != 0 ||
	    (bell >= 0 ? setenv_u64("HEAPTOOL_INLINE_FD", (uint64_t)bell) :
			 unsetenv("HEAPTOOL_INLINE_FD")) != 0 ||
	    (bell >= 0 ? ht_cmd_setenv_fdid("HEAPTOOL_INLINE_ID", bell) :
			 unsetenv("HEAPTOOL_INLINE_ID")) != 0 ||
	    (backend == 0 ? unsetenv("HEAPTOOL_BACKEND") :
			    setenv("HEAPTOOL_BACKEND",
				backend == 3 ? "jemalloc" : "got", 1)) != 0 ||
	    page_env(pg) != 0)
		return;
	execvp(cmd[0], cmd);
}

/*
 * Is the ELF file path linked statically?  It names no interpreter (no
 * PT_INTERP) and is no dynamic loader: not a shared object without the
 * DF_1_PIE flag (ld.so, run as a program, loads the agent), but a plain
 * executable or a static PIE.  A script or anything unreadable is not:
 * the exec will tell.
 */
static int
is_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Dyn dyn;
	off_t dyn_off = -1;
	size_t dyn_len = 0, i;
	int fd, interp = 0, pie = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		goto out_no;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
			(off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			goto out_no;
		if (ph.p_type == PT_INTERP)
			interp = 1;
		else if (ph.p_type == PT_DYNAMIC) {
			dyn_off = (off_t)ph.p_offset;
			dyn_len = ph.p_filesz;
		}
	}
	for (i = 0; dyn_off >= 0 && i + sizeof(dyn) <= dyn_len && i < 65536;
	     i += sizeof(dyn)) {
		if (pread(fd, &dyn, sizeof(dyn), dyn_off + (off_t)i) !=
			(ssize_t)sizeof(dyn) ||
		    dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
			pie = 1;
	}
	close(fd);
	return !interp && (eh.e_type == ET_EXEC || pie);
out_no:
	close(fd);
	return 0;
}

/* The advice for a profile the agent could not write as uid because of
 * err. */
static void
write_advice(int err, unsigned long uid, char *buf, size_t len)
{
	if (err == ENOSPC || err == EDQUOT)
		snprintf(buf, len,
		    "free space there, or give -o another place");
	else if (err == EACCES || err == EPERM || err == EROFS)
		snprintf(buf, len,
		    "give -o a directory that uid %lu may write to", uid);
	else
		snprintf(buf, len, "give -o another place");
}

/* Say why there is no profile at path: the command's exit status, and
 * what its agent wrote on the status page st (NULL: no page). */
static void
no_profile(const char *path, int status, const struct ht_runstat *st)
{
	char dir[PATH_MAX], advice[128], who[96];
	unsigned state = st != NULL ? st->state : HT_RUNSTAT_RUNNING;
	const char *slash;

	if (WIFSIGNALED(status)) {
		ht_warn("no profile written to %s: the command was killed by "
			"signal %d (%s) before the agent could save it",
		    path, WTERMSIG(status), strsignal(WTERMSIG(status)));
		return;
	}
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s",
	    slash == NULL || slash == path ? 1 : (int)(slash - path),
	    slash == NULL ? "." : path);
	switch (state) {
	case HT_RUNSTAT_NONE:
		ht_warn("no profile written to %s: the agent was not loaded "
			"in the command (it is statically linked or "
			"set-user-ID, or was started without LD_PRELOAD); "
			"profile a dynamically linked program",
		    path);
		break;
	case HT_RUNSTAT_NOSTART:
		ht_warn("no profile written to %s: the agent could not start "
			"its session: %s; the command may be short of memory, "
			"try again",
		    path, strerror(st->err));
		break;
	case HT_RUNSTAT_FAILED:
		who[0] = '\0';
		if (st->euid != (uint32_t)geteuid())
			snprintf(who, sizeof(who),
			    " as uid %lu (the command switched to it from uid "
			    "%lu)",
			    (unsigned long)st->euid, (unsigned long)geteuid());
		write_advice(st->err, (unsigned long)st->euid, advice,
		    sizeof(advice));
		ht_warn("no profile written to %s: the agent could not write "
			"it%s in %s: %s; %s",
		    path, who, dir, strerror(st->err), advice);
		break;
	case HT_RUNSTAT_NOSESSION:
		ht_warn("no profile written to %s: no session was running when "
			"the command exited (it stopped the session through "
			"the heaptool API)",
		    path);
		break;
	case HT_RUNSTAT_WRITTEN:
		ht_warn(
		    "no profile at %s: the agent wrote it there as the "
		    "command saw that path, but it is not there for us (the "
		    "command changed its root or mount namespace, or "
		    "something removed the file); give -o a path the "
		    "command sees as we do",
		    path);
		break;
	default:
		ht_warn("no profile written to %s: the command ended by the "
			"exit system call itself, without its exit handlers, "
			"or a program it exec'd could not write it",
		    path);
	}
}

/* Read the profile of pid at path and print its summary on stderr. */
static void
summarize(const char *path, pid_t pid, int status, uint64_t rate,
    const struct ht_runstat *st)
{
	char rs[32], as[32];
	struct ht_report_opts opts;
	struct ht_profile *prof;
	struct ht_sym *sym;
	struct stat sb;
	char err[256];

	if (stat(path, &sb) != 0 && errno == ENOENT) {
		no_profile(path, status, st);
		return;
	}
	if ((prof = ht_profile_read_file(path, err, sizeof(err))) == NULL) {
		ht_warn("%s: %s; the profile could not be read", path, err);
		return;
	}
	if (prof->meta.pid != (uint64_t)pid) {
		/* A file from an earlier run, left where -o points. */
		ht_warn("%s: holds a profile of pid %" PRIu64 ", not of this "
			"run (pid %ld)",
		    path, prof->meta.pid, (long)pid);
		no_profile(path, status, st);
		goto out_free;
	}
	if ((sym = ht_sym_new(prof->modules, prof->nmodules, NULL)) == NULL) {
		ht_warn("%s: %s", path, strerror(errno));
		goto out_free;
	}
	memset(&opts, 0, sizeof(opts));
	opts.format = HT_REPORT_TEXT;
	if (ht_report_write(stderr, prof, sym, &opts) != 0)
		ht_warn("summary: %s", strerror(errno));
	ht_warn("profile written to %s", path);
	/* jemalloc samples at powers of 2 only. */
	if (prof->meta.backend == HT_BACKEND_JEMALLOC &&
	    prof->meta.rate != rate) {
		ht_size_format(rate, as, sizeof(as));
		ht_size_format(prof->meta.rate, rs, sizeof(rs));
		ht_warn("backend jemalloc: the rate %s was rounded to %s (%s)",
		    as, rs, "jemalloc samples at a power of 2");
	}
	ht_cmd_warn_drops(&prof->meta, path);
	ht_sym_free(sym);
out_free:
	ht_profile_free(prof);
}

int
ht_cmd_run(int argc, char **argv)
{
	char agent[PATH_MAX], output[PATH_MAX], dir[PATH_MAX], exe[PATH_MAX];
	struct sigaction ign, old_int, old_quit;
	struct ht_dump_opts dumps;
	struct page pg;
	const char *outopt = NULL;
	uint64_t rate = HT_CMD_DEFAULT_RATE, max_samples = 0;
	int c, rc, status, fds[2], child_errno, live = 0, follow = 0;
	/* backend: 0 jemalloc where it samples, else got; 1 got, 2 inline,
	 * 3 jemalloc */
	int backend = 0, bell[2] = { -1, -1 };
	int found;
	ssize_t n;
	pid_t pid;

	memset(&dumps, 0, sizeof(dumps));
	ht_cmd_getopt_reset();
	/* "+": options end at CMD, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+:r:o:lh", run_options, NULL)) !=
	    -1) {
		switch (c) {
		case 'r':
			if ((rc = ht_cmd_parse_rate(optarg, &rate)) !=
			    HT_EXIT_OK)
				return rc;
			break;
		case 'o':
			if ((rc = ht_cmd_parse_out(optarg, "profile",
				 &outopt)) != HT_EXIT_OK)
				return rc;
			break;
		case 'l':
			live = 1;
			break;
		case HT_OPT_FOLLOW_FORKS:
			follow = live = 1;
			break;
		case 'M':
			if ((rc = ht_cmd_parse_max_samples(optarg,
				 &max_samples)) != HT_EXIT_OK)
				return rc;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "got") == 0)
				backend = 1;
			else if (strcmp(optarg, "inline") == 0)
				backend = 2;
			else if (strcmp(optarg, "jemalloc") == 0)
				backend = 3;
			else
				return ht_usage("--backend %s: not a backend; "
						"use got, inline or jemalloc",
				    optarg);
			break;
		case 'h':
			return ht_cmd_help(run_usage);
		default:
			if (!HT_IS_DUMP_OPT(c))
				return ht_cmd_opt_error("run", c, argv);
			if ((rc = ht_dump_opt(c, optarg, &dumps)) != HT_EXIT_OK)
				return rc;
			break;
		}
	}
	if (optind >= argc)
		return ht_usage("run: no command given; usage: heaptool run "
				"[--rate SIZE] [-o FILE] -- CMD [ARG...]");
	if ((rc = ht_dump_opts_finish(&dumps)) != HT_EXIT_OK)
		return rc;
	/* The command runs here, in this file system: say now when it
	 * could not write its dumps. */
	if ((rc = ht_dump_opts_check(&dumps, 0)) != HT_EXIT_OK)
		return rc;

	/* LD_PRELOAD means nothing to a static program: it would run
	 * unprofiled, and only then would we know. */
	found = ht_cmd_find(argv[optind], exe, sizeof(exe)) == 0;
	if (found && is_static(exe)) {
		ht_warn("run %s: %s is statically linked: heaptool loads its "
			"agent with glibc's dynamic loader, which it does not "
			"have; link the program dynamically to profile it",
		    argv[optind], exe);
		return HT_EXIT_FAIL;
	}
	if (ht_staging_find(agent, sizeof(agent)) != 0)
		return HT_EXIT_FAIL;
	if (strpbrk(agent, ": ") != NULL) {
		/* LD_PRELOAD splits on both. */
		ht_warn("agent %s: path contains ':' or ' ', which LD_PRELOAD "
			"cannot carry; install heaptool elsewhere",
		    agent);
		return HT_EXIT_FAIL;
	}
	if (outopt != NULL) {
		const char *what = ht_not_regular(outopt);

		/* The agent renames the profile over the path: refused for
		 * what is not a file (-o /dev/null would replace the
		 * device), before the command runs. */
		if (what != NULL)
			return ht_usage(
			    "run: -o %s: %s, which the profile "
			    "would replace; give a file's path (the "
			    "summary is read back from it)",
			    outopt, what);
		if (absolute(outopt, output, sizeof(output)) != 0 ||
		    check_output_dir(output) != 0)
			return HT_EXIT_FAIL;
	} else {
		/* The name takes the child's pid, known after the fork;
		 * check the directory and the length now. */
		if (absolute(".", dir, sizeof(dir)) != 0 ||
		    check_output_dir(dir) != 0)
			return HT_EXIT_FAIL;
		dir[strlen(dir) - 1] = '\0'; /* "/cwd/." to "/cwd/" */
		if (default_output(dir, INT_MAX, output, sizeof(output)) != 0) {
			ht_warn("current directory: path too long; give -o "
				"a shorter path");
			return HT_EXIT_FAIL;
		}
	}

	/* Inline hooks where the executable has an allocator of its own:
	 * its agent waits for them before main, on a socket (bell[1] in the
	 * child, kept across the exec). */
	if (backend == 0 && found && ht_inline_file_has_allocator(exe) == 1)
		backend = 2;
	if (backend == 2 &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bell) != 0) {
		ht_warn("run: socketpair: %s", strerror(errno));
		return HT_EXIT_FAIL;
	}
	/* The child reports a failed exec through a close-on-exec pipe:
	 * EOF means the exec succeeded. */
	if (pipe2(fds, O_CLOEXEC) != 0) {
		ht_warn("run: pipe: %s", strerror(errno));
		close_bell(bell);
		return HT_EXIT_FAIL;
	}
	page_make(&pg);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);

	fflush(NULL);
	if ((pid = fork()) == -1) {
		ht_warn("run: fork: %s; the system is short of processes or "
			"memory",
		    strerror(errno));
		close(fds[0]);
		close(fds[1]);
		close_bell(bell);
		status = HT_EXIT_FAIL;
		goto out_page;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(fds[0]);
		if (bell[0] >= 0) {
			close(bell[0]);
			(void)fcntl(bell[1], F_SETFD, 0);
		}
		if (outopt == NULL &&
		    default_output(dir, getpid(), output, sizeof(output)) != 0)
			errno = ENAMETOOLONG;
		else
			exec_child(argv + optind, agent, rate, max_samples,
			    output, live, follow, &dumps, &pg, bell[1],
			    backend);
		child_errno = errno;
		n = write(fds[1], &child_errno, sizeof(child_errno));
		(void)n;
		_exit(child_errno == ENOENT ? 127 : 126);
	}

	close(fds[1]);
	if (bell[1] >= 0)
		close(bell[1]);
	do
		n = read(fds[0], &child_errno, sizeof(child_errno));
	while (n == -1 && errno == EINTR);
	close(fds[0]);
	/* Exec'd: hook inline while its constructor waits (ptrace: we are
	 * its parent), then let it go on to main. */
	if (bell[0] >= 0) {
		if (n == 0)
			(void)ht_cmd_inline_run(pid, bell[0], "run");
		else
			close(bell[0]);
	}
	/* Live reports need the pid, which nothing else shows. */
	if (live && n == 0)
		ht_warn("running %s as pid %ld; heaptool report -p %ld reads "
			"its live profile",
		    argv[optind], (long)pid, (long)pid);
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			ht_warn("run: waitpid: %s", strerror(errno));
			status = HT_EXIT_FAIL;
			goto out_page;
		}
	}
	if (n == (ssize_t)sizeof(child_errno)) {
		ht_warn("%s: %s; check the command's name and PATH",
		    argv[optind], strerror(child_errno));
		status = child_errno == ENOENT ? 127 : 126;
		goto out_page;
	}

	/* The backend asked for could not run: the command ran without
	 * the agent, which said why on the page. */
	if (pg.st != NULL && pg.st->pid == (uint64_t)pid &&
	    pg.st->state == HT_RUNSTAT_NOBACKEND) {
		pg.st->why[sizeof(pg.st->why) - 1] = '\0';
		ht_warn("run %s: the backend asked for cannot run in the "
			"command: %s; run without --backend, or with "
			"--backend got",
		    argv[optind],
		    pg.st->why[0] != '\0' ? pg.st->why : "no reason given");
		status = HT_EXIT_FAIL;
		goto out_page;
	}
	if (outopt == NULL)
		(void)default_output(dir, pid, output, sizeof(output));
	/* The command has exited: its agent wrote what it will. */
	summarize(output, pid, status, rate,
	    pg.st != NULL &&
		    (pg.st->state == HT_RUNSTAT_NONE ||
			pg.st->pid == (uint64_t)pid) ?
		pg.st :
		NULL);
	if (WIFEXITED(status))
		status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		status = 128 + WTERMSIG(status);
	else
		status = HT_EXIT_FAIL;

out_page:
	page_free(&pg);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return status;
}
