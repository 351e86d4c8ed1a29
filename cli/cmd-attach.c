/*
 * heaptool attach: load the agent into a running process and make it the
 * current target (target.h).
 *
 * attach first asks whoever answers on the agent's socket (HELLO): an agent
 * already loaded is reused, never loaded twice.  An agent that is loaded
 * but does not answer (its thread could not start in a process short of
 * memory, it gave up its socket, or the process is a fork's child of a
 * profiled one and inherited it without a thread) is brought up: the
 * injector calls its exported heaptool_agent_revive() as it would call
 * dlopen, which starts the thread (after forgetting a session inherited
 * from a parent) and says how that went, so that a failure is told with
 * its true cause.  Otherwise attach finds the path at which the target can
 * load the agent (staging.h), has the injector (inject.h) dlopen it, and
 * waits for the agent's thread to answer; one that does not within a
 * second is asked the same way why.
 */
#include "allocnames.h"
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "ctl.h"
#include "inject.h"
#include "monotime.h"
#include "profile.h"
#include "proto.h"
#include "size.h"
#include "staging.h"
#include "target.h"

#define DEFAULT_TIMEOUT_MS 5000
#define POLL_MS		   10
/* A fresh agent that has not answered by then is asked why (revive). */
#define ASK_AFTER_MS	   1000
#define REVIVE_SYMBOL	   "heaptool_agent_revive"

static const char attach_usage[] =
    "usage: heaptool attach [--timeout DUR] [--ignore-seccomp] [-p] PID\n"
    "\n"
    "Load the heap profiler's agent into the running process PID, without\n"
    "restarting or stopping it, and make PID the current target: start,\n"
    "stop, status, report, dump and detach act on it when they get no -p.\n"
    "A process that has the agent already is reconnected, never loaded\n"
    "twice; one where it is loaded but does not answer (a child forked by\n"
    "a profiled process, or a process an earlier attach left short of\n"
    "memory) has it brought up.  Allocator functions that no GOT slot\n"
    "leads to (an allocator in the executable) are hooked inline: their\n"
    "first bytes jump to the agent; those that cannot be patched safely\n"
    "are listed with the reason.  Then run heaptool start.\n"
    "\n"
    "  -t, --timeout DUR  give up when no thread of PID is at a safe point\n"
    "                     within DUR (default 5s; e.g. 500ms, 10s, 1m)\n"
    "      --ignore-seccomp  attach even though PID runs under a seccomp\n"
    "                     filter (refused by default: a filter may kill it\n"
    "                     on a system call the loader makes)\n"
    "  -p, --pid PID      the same as PID alone\n"
    "  -h, --help         show this help\n"
    "\n"
    "PID must run as your user (or you must be root) and ptrace must be\n"
    "allowed (kernel.yama.ptrace_scope).  PID may live in a container or\n"
    "a chroot: its files are read as it sees them.  See man heaptool for\n"
    "the details.\n";

static const struct option attach_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "ignore-seccomp", no_argument, NULL, 'S' },
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Have the injector load the library at path (in the target's view) into
 * pid.  Returns 0, or -1 after printing why.
 *
 * Signals that would end heaptool are held meanwhile: a tracer that dies
 * while its tracee runs our call would leave the thread in the middle of
 * it.  They are delivered once the thread is let go.
 */
static int
inject_agent(pid_t pid, const char *path, int timeout_ms, int allow_seccomp,
    long *revived)
{
	static const int held[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP,
		SIGTTIN, SIGTTOU };
	struct ht_inject *inj;
	sigset_t set, old;
	size_t i;
	int rc;

	if ((inj = ht_inject_new(pid)) == NULL) {
		ht_warn("attach %ld: out of memory", (long)pid);
		return -1;
	}
	ht_inject_allow_seccomp(inj, allow_seccomp);
	sigemptyset(&set);
	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		sigaddset(&set, held[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (path != NULL)
		rc = ht_inject_load(inj, path, timeout_ms);
	else {
		rc = ht_inject_call(inj, ht_staging_is_agent, REVIVE_SYMBOL,
		    timeout_ms);
		*revived = (long)ht_inject_handle(inj);
	}
	if (rc != 0 && path == NULL && ht_inject_errcode(inj) == HT_INJ_ENOLIB)
		ht_warn("attach %ld: the agent is loaded in the process but "
			"does not answer, and it cannot be brought up (%s); "
			"restart the process to profile it",
		    (long)pid, ht_inject_error(inj));
	else if (rc != 0)
		ht_warn("attach %ld: %s", (long)pid, ht_inject_error(inj));
	ht_inject_free(inj);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * Bring up the agent loaded in pid (see the top of this file).  Returns 1
 * when its thread serves or is on its way, 0 after printing the true
 * cause of a failure, -1 if the call itself failed (printed).
 */
static int
revive_agent(pid_t pid, int timeout_ms, int allow_seccomp)
{
	long v = 0;
	int err;

	if (inject_agent(pid, NULL, timeout_ms, allow_seccomp, &v) != 0)
		return -1;
	err = HT_REVIVE_ERRNO(v);
	switch (HT_REVIVE_WHAT(v)) {
	case HT_REVIVE_SERVING:
	case HT_REVIVE_PENDING:
		return 1;
	case HT_REVIVE_ETHREAD:
		ht_warn("attach %ld: the agent is loaded but its thread could "
			"not start: %s; free memory (or raise the process's "
			"limits on memory and threads: prlimit) and attach "
			"again",
		    (long)pid, strerror(err));
		break;
	case HT_REVIVE_EMEMORY:
		ht_warn("attach %ld: the agent is loaded but could not map its "
			"tables: %s; free memory (or raise the process's "
			"address space limit: prlimit --as) and attach again",
		    (long)pid, strerror(err));
		break;
	case HT_REVIVE_ESOCKET:
		ht_warn("attach %ld: the agent is loaded but cannot bind its "
			"control socket: %s; %s",
		    (long)pid, strerror(err),
		    err == EADDRINUSE ?
			"another process, or another copy of the agent, holds "
			"its name (ss -xlp | grep heaptool); restart the "
			"process to profile it" :
			"attach again");
		break;
	case HT_REVIVE_EHOOK:
		ht_warn("attach %ld: the agent is loaded but could not patch "
			"the process's GOT slots; this is unexpected, please "
			"report it",
		    (long)pid);
		break;
	default:
		ht_warn("attach %ld: the agent loaded in the process answered "
			"%#lx, which this heaptool does not know; use the "
			"heaptool that matches the agent",
		    (long)pid, (unsigned long)v);
		break;
	}
	return 0;
}

/* After a HELLO: reinstall the hooks a detach removed. */
static int
rehook(struct ht_ctl *c, pid_t pid, const struct ht_status *st)
{
	if (st->hooked)
		return 0;
	if (ht_ctl_command(c, HT_MSG_HOOK, 0, 0) != 0) {
		ht_target_failed(c, pid);
		return -1;
	}
	return 0;
}

/* The warnings of allocators no hook sees, asked again after the inline
 * hooks went in (a function hooked inline is seen); st if that fails. */
static void
unseen(struct ht_ctl *c, struct ht_status *st)
{
	(void)ht_ctl_status(c, HT_MSG_STATUS, st);
	ht_cmd_status_unseen(stdout, "heaptool: ", st);
}

static void
remember(pid_t pid, const struct ht_proc *p)
{
	if (ht_target_save(pid, p->start_time) != 0)
		ht_warn("attach %ld: cannot remember it as the current "
			"target: %s; give -p %ld to the other commands, or set "
			"XDG_STATE_HOME to a writable directory",
		    (long)pid, strerror(errno), (long)pid);
}

int
ht_cmd_attach(int argc, char **argv)
{
	static struct ht_status st;
	struct ht_proc p;
	struct ht_ctl *c;
	uint64_t t0, deadline, tmo;
	char path[PATH_MAX];
	const char *popt = NULL;
	int ch, timeout_ms = DEFAULT_TIMEOUT_MS, rc = HT_EXIT_FAIL;
	int allow_seccomp = 0, revived = 0, asked_done = 0;
	uint64_t asked;
	pid_t pid;

	ht_cmd_getopt_reset();
	while ((ch = getopt_long(argc, argv, ":t:p:h", attach_options, NULL)) !=
	    -1) {
		switch (ch) {
		case 't':
			if (ht_duration_parse(optarg, &tmo) != 0 || tmo == 0 ||
			    tmo > INT_MAX)
				return ht_usage("--timeout %s: not a duration; "
						"use e.g. 500ms, 5s, 1m",
				    optarg);
			timeout_ms = (int)tmo;
			break;
		case 'p':
			popt = optarg;
			break;
		case 'S':
			allow_seccomp = 1;
			break;
		case 'h':
			return ht_cmd_help(attach_usage);
		default:
			return ht_cmd_opt_error("attach", ch, argv);
		}
	}
	if (popt == NULL && optind < argc)
		popt = argv[optind++];
	if (popt == NULL)
		return ht_usage("attach: no process given; usage: heaptool "
				"attach [--timeout DUR] PID");
	if (optind < argc)
		return ht_usage("attach: %s: one process at a time; see "
				"'heaptool attach --help'",
		    argv[optind]);
	if (ht_target_parse_pid(popt, &pid) != 0)
		return ht_usage("%s: not a process ID; give the PID of a "
				"running process",
		    popt);

	t0 = ht_mono_ms();
	if (ht_proc_read(pid, &p) != 0) {
		if (errno == ENOENT)
			ht_warn("attach %ld: no such process; check the PID",
			    (long)pid);
		else
			ht_warn("attach %ld: /proc/%ld: %s; is /proc mounted?",
			    (long)pid, (long)pid, strerror(errno));
		return HT_EXIT_FAIL;
	}
	if (p.state == 'Z' || p.state == 'X') {
		ht_warn("attach %ld: the process has exited (a zombie): its "
			"parent has not reaped it yet; attach to a running "
			"process",
		    (long)pid);
		return HT_EXIT_FAIL;
	}
	if (ht_target_check(pid, "attach", &p) != HT_EXIT_OK)
		return HT_EXIT_FAIL;
	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;

	/* An agent answers already: reconnect. */
	if (ht_ctl_status(c, HT_MSG_HELLO, &st) == 0) {
		if (rehook(c, pid, &st) != 0)
			goto out_free;
		remember(pid, &p);
		printf("heaptool: attached to %ld (agent already loaded)\n",
		    (long)pid);
		(void)ht_cmd_inline_apply(stdout, "heaptool: ", pid, c,
		    "attach");
		if (st.backend_default > HT_BACKEND_INLINE)
			printf("heaptool: %ld: backend %s\n", (long)pid,
			    ht_backend_name(st.backend_default));
		unseen(c, &st);
		rc = ht_cmd_flush();
		goto out_free;
	}
	if (ht_ctl_errcode(c) != HT_CTL_ENOAGENT) {
		ht_target_failed(c, pid);
		goto out_free;
	}
	if (ht_staging_loaded(pid)) {
		/* Loaded, and no answer: bring it up. */
		if (revive_agent(pid, timeout_ms, allow_seccomp) != 1)
			goto out_free;
		revived = 1;
	} else if (ht_staging_path(pid, &p, path, sizeof(path)) != 0 ||
	    inject_agent(pid, path, timeout_ms, allow_seccomp, NULL) != 0)
		goto out_free;

	/* The agent's thread patches the hooks, then opens its socket. */
	asked = ht_mono_ms() + ASK_AFTER_MS;
	deadline = ht_mono_ms() + (uint64_t)timeout_ms;
	for (;;) {
		if (ht_ctl_status(c, HT_MSG_HELLO, &st) == 0)
			break;
		if (ht_ctl_errcode(c) != HT_CTL_ENOAGENT) {
			ht_target_failed(c, pid);
			goto out_free;
		}
		/* A fresh agent whose thread could not start says nothing:
		 * ask it why, once (which starts it if it can). */
		if (!revived && !asked_done && ht_mono_ms() >= asked) {
			if (revive_agent(pid, timeout_ms, allow_seccomp) != 1)
				goto out_free;
			asked_done = 1;
		}
		if (ht_mono_ms() >= deadline) {
			ht_warn(
			    "attach %ld: the agent was loaded but did not "
			    "answer within %d ms; the process may be very busy "
			    "or short of memory: try heaptool attach %ld again "
			    "later",
			    (long)pid, timeout_ms, (long)pid);
			goto out_free;
		}
		usleep(POLL_MS * 1000);
	}
	if (rehook(c, pid, &st) != 0)
		goto out_free;
	remember(pid, &p);
	printf("heaptool: attached to %ld in %" PRIu64 " ms%s\n", (long)pid,
	    ht_mono_ms() - t0,
	    revived ? " (the agent was loaded, not serving: brought up)" : "");
	(void)ht_cmd_inline_apply(stdout, "heaptool: ", pid, c, "attach");
	if (st.backend_default > HT_BACKEND_INLINE)
		printf("heaptool: %ld: backend %s: its allocator samples by "
		       "itself; start --backend got samples with the hooks "
		       "instead\n",
		    (long)pid, ht_backend_name(st.backend_default));
	unseen(c, &st);
	rc = ht_cmd_flush();
out_free:
	ht_ctl_free(c);
	return rc;
}
