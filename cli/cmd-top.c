/*
 * heaptool top: the target's profile again every interval, its sites by
 * bytes in use, by growth since the view started (or since the user's
 * baseline) or by bytes allocated; a full screen on a terminal
 * (top-screen.c), one plain block of text per refresh otherwise.
 *
 * The terminal is always given back: every path out of the screen goes
 * through ht_top_screen_close, SIGINT, SIGTERM and SIGHUP included: they
 * are blocked but in top's waits (ppoll, pselect), their handlers only set
 * a flag, the loop sees it, closes the screen, and the signal is raised
 * again so that the shell sees how top ended.
 */
#include "config.h"

#include <sys/select.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "ctl.h"
#include "monotime.h"
#include "size.h"
#include "target.h"
#include "top.h"

static const char top_usage[] =
    "usage: heaptool top [-p PID] [--interval DUR] [--sort COLUMN]\n"
    "                    [--count N] [--top N] [--bytes]\n"
    "\n"
    "Watch the target's heap live: the session, the totals with their 95%\n"
    "intervals, the RSS, and the allocation sites with their bytes in use,\n"
    "their growth since the view started and per second, and their\n"
    "samples, refreshed every interval.  On a terminal it takes the whole\n"
    "screen (keys: i, g, a sort by in use, growth, allocated; s the next\n"
    "sort; j/k or the arrows select a site, Enter shows its stack; p or\n"
    "space pause; b takes a baseline, growth counts from then; q quits);\n"
    "otherwise it prints a block of plain text per refresh.\n"
    "\n"
    "  -p, --pid PID        the process (default: the current target)\n"
    "  -i, --interval DUR   the time between refreshes (default 1s; at\n"
    "                       least 100ms)\n"
    "  -s, --sort COLUMN    inuse (default), growth or alloc\n"
    "  -n, --count N        stop after N refreshes (default: until q, or\n"
    "                       until the target goes away)\n"
    "  -t, --top N          plain text: list the N first sites (default\n"
    "                       20; 0 all)\n"
    "  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
    "  -h, --help           show this help\n"
    "\n"
    "See man heaptool for the details.\n";

static const struct option top_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "interval", required_argument, NULL, 'i' },
	{ "sort", required_argument, NULL, 's' },
	{ "count", required_argument, NULL, 'n' },
	{ "top", required_argument, NULL, 't' },
	{ "bytes", no_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MIN_INTERVAL_MS 100

/* The signal that asks top to end, 0 until one does. */
static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* The signal mask of top's waits: the signals that end it are blocked
 * everywhere else, so that one is seen at the next wait, never lost
 * between the check of the flag and the wait. */
static sigset_t wait_mask;

/* Catch the signals that end top (before the screen opens, so curses
 * leaves them to us) and block them outside the waits. */
static void
catch_stops(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	sigset_t block;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
}

/* End as the signal asked: by it, with its default action. */
static void
raise_stop(void)
{
	int sig = stop_signal;

	if (sig == 0)
		return;
	signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	raise(sig);
}

/*
 * Take the target's profile into t.  Returns 0, or -1 with the reason in
 * err (one line): the target went away (it exited, or its agent no longer
 * answers: detached), or a failure of ours.
 */
static int
refresh(struct ht_top *t, struct ht_ctl *c, pid_t pid, char *err, size_t len)
{
	struct ht_profile *prof;
	struct ht_sym *sym;
	const uint8_t *buf;
	char why[256];
	size_t n;

	if (ht_ctl_report(c, &buf, &n) != 0) {
		if (ht_ctl_errcode(c) == HT_CTL_ENOPROC)
			ht_target_forget(pid);
		snprintf(err, len, "top: %s", ht_ctl_error(c));
		return -1;
	}
	if ((prof = ht_profile_decode(buf, n, why, sizeof(why))) == NULL) {
		snprintf(err, len,
		    "top: target %ld: the agent sent a profile that does "
		    "not decode (%s); use the heaptool that matches the agent",
		    (long)pid, why);
		return -1;
	}
	/* One symbolizer while the modules stay: its lookups are kept. */
	if (ht_top_sym_fits(t, prof))
		sym = t->csym;
	else if ((sym = ht_target_sym(pid, prof, NULL)) == NULL) {
		ht_profile_free(prof);
		snprintf(err, len, "top: target %ld: %s", (long)pid,
		    strerror(errno));
		return -1;
	}
	if (ht_top_update(t, prof, sym) != 0) {
		snprintf(err, len, "top: target %ld: %s", (long)pid,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Sleep until deadline (monotonic ms) or a stop signal. */
static void
sleep_until(uint64_t deadline)
{
	struct timespec ts;
	uint64_t now;

	while (!stop_signal && (now = ht_mono_ms()) < deadline) {
		ts.tv_sec = (time_t)((deadline - now) / 1000);
		ts.tv_nsec = (long)((deadline - now) % 1000) * 1000000;
		pselect(0, NULL, NULL, NULL, &ts, &wait_mask);
	}
}

/* Plain text: a block per refresh until count blocks, a stop signal or
 * the target's end. */
static int
run_plain(struct ht_top *t, struct ht_ctl *c, pid_t pid, uint64_t interval,
    uint64_t count, size_t top)
{
	char err[1024];
	uint64_t next;

	for (;;) {
		next = ht_mono_ms() + interval;
		if (ht_top_text(stdout, t, top) != 0) {
			ht_warn("top: stdout: %s", strerror(errno));
			return HT_EXIT_FAIL;
		}
		if (count > 0 && t->refreshes >= count)
			return HT_EXIT_OK;
		sleep_until(next);
		if (stop_signal)
			return HT_EXIT_FAIL;
		if (refresh(t, c, pid, err, sizeof(err)) != 0) {
			/* A request cut short by a stop signal is no
			 * failure to tell of. */
			if (!stop_signal)
				ht_warn("%s", err);
			return HT_EXIT_FAIL;
		}
	}
}

/* What a key asks of the screen's loop. */
static void
on_key(enum ht_top_key k, struct ht_top *t, struct ht_top_ui *ui,
    uint64_t *next)
{
	switch (k) {
	case HT_TOP_KEY_INUSE:
		ht_top_set_sort(t, HT_TOP_INUSE);
		break;
	case HT_TOP_KEY_GROWTH:
		ht_top_set_sort(t, HT_TOP_GROWTH);
		break;
	case HT_TOP_KEY_ALLOC:
		ht_top_set_sort(t, HT_TOP_ALLOC);
		break;
	case HT_TOP_KEY_SORT_NEXT:
		ht_top_set_sort(t,
		    (enum ht_top_sort)((t->sort + 1) % HT_TOP_NSORTS));
		break;
	case HT_TOP_KEY_UP:
		ht_top_screen_move(t, ui, -1);
		break;
	case HT_TOP_KEY_DOWN:
		ht_top_screen_move(t, ui, 1);
		break;
	case HT_TOP_KEY_TOGGLE:
		ht_top_screen_toggle(t, ui);
		break;
	case HT_TOP_KEY_PAUSE:
		ui->paused = !ui->paused;
		/* Resumed: take a profile at once. */
		if (!ui->paused)
			*next = 0;
		break;
	case HT_TOP_KEY_BASELINE:
		ui->message = ht_top_baseline(t) == 0 ?
		    "baseline taken" :
		    "no baseline: out of memory";
		break;
	default:
		break;
	}
}

/* The full screen, until q, count refreshes, a stop signal or the
 * target's end; the screen is closed on every way out. */
static int
run_screen(struct ht_top *t, struct ht_ctl *c, pid_t pid, uint64_t interval,
    uint64_t count)
{
	struct ht_top_ui ui;
	enum ht_top_key k;
	char err[1024];
	uint64_t next, now;
	int rc = HT_EXIT_OK;

	memset(&ui, 0, sizeof(ui));
	if (ht_top_screen_open() != 0) {
		ht_warn("top: the terminal (TERM=%s) cannot be used; set TERM "
			"to a terminal terminfo knows, or redirect stdout for "
			"plain text",
		    getenv("TERM") != NULL ? getenv("TERM") : "");
		return HT_EXIT_FAIL;
	}
	next = ht_mono_ms() + interval;
	err[0] = '\0';
	for (;;) {
		ht_top_screen_draw(t, &ui);
		if (count > 0 && t->refreshes >= count)
			break;
		now = ht_mono_ms();
		if (!ui.paused && now >= next) {
			if (refresh(t, c, pid, err, sizeof(err)) != 0) {
				rc = HT_EXIT_FAIL;
				break;
			}
			ui.message = NULL;
			next = ht_mono_ms() + interval;
			continue;
		}
		if (stop_signal)
			break;
		k = ht_top_screen_key(ui.paused ? 1000 : (int)(next - now),
		    &wait_mask);
		if (stop_signal || k == HT_TOP_KEY_QUIT)
			break;
		on_key(k, t, &ui, &next);
	}
	ht_top_screen_close();
	if (err[0] != '\0' && !stop_signal)
		ht_warn("%s", err);
	return rc;
}

int
ht_cmd_top(int argc, char **argv)
{
	enum ht_top_sort sort = HT_TOP_INUSE;
	const char *popt = NULL;
	uint64_t interval = 1000, count = 0, n;
	size_t top = 20;
	struct ht_ctl *c;
	struct ht_cmd_print print;
	struct ht_top t;
	char err[1024], *end;
	int ch, rc, raw = 0;
	pid_t pid;

	ht_cmd_getopt_reset();
	while ((ch = getopt_long(argc, argv, ":p:i:s:n:t:bh", top_options,
		    NULL)) != -1) {
		switch (ch) {
		case 'h':
			return ht_cmd_help(top_usage);
		case 'p':
			popt = optarg;
			break;
		case 'b':
			raw = 1;
			break;
		case 'i':
			if (ht_duration_parse(optarg, &interval) != 0 ||
			    interval < MIN_INTERVAL_MS)
				return ht_usage("top: --interval %s: not a "
						"duration of 100ms or more; "
						"use e.g. 500ms, 2s",
				    optarg);
			break;
		case 's':
			if (ht_top_sort_parse(optarg, &sort) != 0)
				return ht_usage("top: --sort %s: not a column; "
						"use inuse, growth or alloc",
				    optarg);
			break;
		case 'n':
		case 't':
			errno = 0;
			n = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' ||
			    *end != '\0' || errno != 0 ||
			    (ch == 'n' && n == 0) || n > UINT32_MAX)
				return ht_usage(
				    "top: --%s %s: not a count; use "
				    "a number%s",
				    ch == 'n' ? "count" : "top", optarg,
				    ch == 'n' ? " from 1" : "");
			if (ch == 'n')
				count = n;
			else
				top = (size_t)n;
			break;
		default:
			return ht_cmd_opt_error(argv[0], ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("top: %s: unexpected argument; see 'heaptool "
				"top --help'",
		    argv[optind]);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;
	ht_top_init(&t, sort);
	t.raw = raw;
	/* Sites named as report names them: allocator wrappers folded. */
	memset(&print, 0, sizeof(print));
	if (ht_cmd_print_fold(&print) != HT_EXIT_OK) {
		ht_top_free(&t);
		ht_ctl_free(c);
		return HT_EXIT_FAIL;
	}
	t.fold = print.fold;
	catch_stops();
	/* The first profile before the screen: a target that cannot be
	 * read is said in one line on a terminal left alone. */
	if (refresh(&t, c, pid, err, sizeof(err)) != 0) {
		ht_warn("%s", err);
		rc = HT_EXIT_FAIL;
	} else if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
		rc = run_screen(&t, c, pid, interval, count);
	else
		rc = run_plain(&t, c, pid, interval, count, top);
	ht_top_free(&t);
	ht_cmd_print_free(&print);
	ht_ctl_free(c);
	raise_stop();
	return rc;
}
