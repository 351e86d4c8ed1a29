/*
 * Tests for agent/final.c, with a stand-in for the snapshot: each case
 * runs in a child that arms the final profile (its directory under the
 * test's XDG_STATE_HOME), then ends in its own way; the parent checks how
 * the child ended and what file it left.
 *   - a fault: the profile is written (what the snapshot was asked for:
 *     the flags, the signal, outside a signal handler's lock), and the
 *     child dies of SIGSEGV;
 *   - abort(): the same with SIGABRT;
 *   - a fault inside the write itself, on SIGSEGV and on SIGABRT, with the
 *     agent's lock taken: the write is given up, no file is left, the lock
 *     is let go, and the child dies of the signal it had, not of the
 *     write's fault;
 *   - a fault while the thread is inside the agent (its guard set): no
 *     write, the same death;
 *   - a handler the program installed later, which calls the one it
 *     replaced: the profile is written, and the program's handler goes on
 *     (it exits 42);
 *   - a handler the program had before: left alone, never called through;
 *   - exit: ht_final_at_exit writes it with HT_META_AT_EXIT;
 *   - disarmed: the default action is back, nothing is written;
 *   - no session: nothing.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "final.h"
#include "guard.h"
#include "lock.h"
#include "profile.h"
#include "session.h"
#include "snapshot.h"

/* What session.c would hold: only state and pid are read. */
struct ht_session ht_session;

enum mode { WRITE, FAULT };
static enum mode mode;

/* The stand-in: writes "flags F sig S signal I" (I: asked as in a signal
 * handler), or with FAULT takes the lock, says so, and faults. */
int
ht_snapshot_fd_final(int fd, uint32_t flags, uint32_t sig, int in_signal,
    uint64_t wait_ms, volatile int *locked)
{
	char buf[128];
	int n;

	(void)wait_ms;
	if (mode == FAULT) {
		ht_lock_acquire(&ht_lock_global);
		*locked = 1;
		*(volatile int *)(uintptr_t)(sig - sig) = 1;
	}
	n = snprintf(buf, sizeof(buf), "flags %x sig %u signal %d\n", flags,
	    sig, in_signal);
	return write(fd, buf, (size_t)n) == n ? 0 : -1;
}

static char state[PATH_MAX];

/* The final files in the test's state directory: their count, the
 * contents of the last into buf. */
static int
finals(char *buf, size_t len)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 300];
	struct dirent *de;
	DIR *dp;
	int n = 0, fd;
	ssize_t k;

	buf[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/heaptool", state);
	if ((dp = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((fd = open(path, O_RDONLY)) >= 0) {
			k = read(fd, buf, len - 1);
			buf[k > 0 ? k : 0] = '\0';
			close(fd);
		}
		unlink(path);
	}
	closedir(dp);
	return n;
}

static struct sigaction replaced;

static void
chaining(int sig, siginfo_t *info, void *uc)
{
	if (replaced.sa_flags & SA_SIGINFO)
		replaced.sa_sigaction(sig, info, uc);
	_exit(42);
}

static void
recovering(int sig)
{
	(void)sig;
	_exit(43);
}

enum end {
	E_FAULT,
	E_ABORT,
	E_FAULT_IN_WRITE,
	E_ABORT_FAULT_IN_WRITE,
	E_INSIDE,
	E_CHAINED,
	E_BEFORE,
	E_EXIT,
	E_DISARMED,
	E_NO_SESSION,
};

static void
child(enum end e)
{
	struct rlimit nocore = { 0, 0 };
	struct sigaction sa, cur;

	setrlimit(RLIMIT_CORE, &nocore);
	mode = e == E_FAULT_IN_WRITE || e == E_ABORT_FAULT_IN_WRITE ? FAULT :
								      WRITE;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (e == E_BEFORE) {
		sa.sa_handler = recovering;
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (e != E_NO_SESSION) {
		ht_session.state = HT_STATE_RUNNING;
		ht_session.pid = getpid();
	}
	ht_final_setup();
	if (ht_final_arm(1) != 0)
		_exit(90);
	switch (e) {
	case E_CHAINED:
		sa.sa_sigaction = chaining;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, &replaced);
		break;
	case E_BEFORE:
		/* Still the program's: the agent did not take it. */
		if (sigaction(SIGSEGV, NULL, &cur) != 0 ||
		    cur.sa_handler != recovering)
			_exit(91);
		break;
	case E_DISARMED:
		ht_final_arm(0);
		if (sigaction(SIGSEGV, NULL, &cur) != 0 ||
		    cur.sa_handler != SIG_DFL)
			_exit(92);
		break;
	case E_INSIDE:
		ht_guard_enter();
		break;
	case E_EXIT:
		ht_guard_enter();
		ht_final_at_exit();
		ht_guard_leave();
		_exit(
		    3); /* not exit(): the TAP library's atexit is the parent's */
	default:
		break;
	}
	if (e == E_ABORT || e == E_ABORT_FAULT_IN_WRITE)
		abort();
	*(volatile int *)(uintptr_t)(e - e) = 1;
	_exit(93);
}

/* Run end e in a child: its wait status, the number of final files it
 * left and the last one's contents. */
static int
run(enum end e, int *nfiles, char *buf, size_t len)
{
	int status;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) < 0)
		bail("fork");
	if (pid == 0)
		child(e);
	if (waitpid(pid, &status, 0) != pid)
		bail("waitpid");
	*nfiles = finals(buf, len);
	return status;
}

static int
killed_by(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

int
main(void)
{
	char tmpl[] = "/tmp/final-t.XXXXXX", buf[256], want[128];
	int st, n;

	plan(20);
	if (mkdtemp(tmpl) == NULL)
		bail("mkdtemp");
	snprintf(state, sizeof(state), "%s", tmpl);
	setenv("XDG_STATE_HOME", state, 1);

	st = run(E_FAULT, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGSEGV), "a fault: the child dies of SIGSEGV");
	snprintf(want, sizeof(want), "flags %x sig %d signal 1\n",
	    HT_META_FINAL | HT_META_ON_SIGNAL, SIGSEGV);
	ok(n == 1 && strcmp(buf, want) == 0,
	    "and leaves the final profile, written on SIGSEGV in the handler");
	if (n != 1 || strcmp(buf, want) != 0)
		diag("%d files, last: %s", n, buf);

	st = run(E_ABORT, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGABRT), "abort(): the child dies of SIGABRT");
	snprintf(want, sizeof(want), "flags %x sig %d signal 1\n",
	    HT_META_FINAL | HT_META_ON_SIGNAL, SIGABRT);
	ok(n == 1 && strcmp(buf, want) == 0, "and leaves the final profile");

	st = run(E_FAULT_IN_WRITE, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGSEGV),
	    "a fault in the write on SIGSEGV: the child dies of SIGSEGV");
	is_int(0, n, "and leaves no file");
	st = run(E_ABORT_FAULT_IN_WRITE, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGABRT),
	    "a fault in the write on SIGABRT: the child dies of SIGABRT, not "
	    "of the write's SIGSEGV");
	is_int(0, n, "and leaves no file");
	if (!killed_by(st, SIGABRT))
		diag("status %#x", st);

	st = run(E_INSIDE, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGSEGV), "a fault inside the agent: SIGSEGV");
	is_int(0, n, "and nothing written (the agent's state is not sure)");

	st = run(E_CHAINED, &n, buf, sizeof(buf));
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 42,
	    "a later handler that chains: it goes on (exit 42)");
	ok(n == 1 && strstr(buf, "sig 11 signal 1") != NULL,
	    "and the final profile was written when it called ours");

	st = run(E_BEFORE, &n, buf, sizeof(buf));
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 43,
	    "a handler of the program's from before: left alone, it runs");
	is_int(0, n, "and nothing written on its fault");

	st = run(E_EXIT, &n, buf, sizeof(buf));
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 3, "exit: the status is kept");
	snprintf(want, sizeof(want), "flags %x sig 0 signal 0\n",
	    HT_META_FINAL | HT_META_AT_EXIT);
	ok(n == 1 && strcmp(buf, want) == 0,
	    "and the final profile is written at exit, not as in a handler");

	st = run(E_DISARMED, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGSEGV), "disarmed: the default action, SIGSEGV");
	is_int(0, n, "and nothing written");

	st = run(E_NO_SESSION, &n, buf, sizeof(buf));
	ok(killed_by(st, SIGSEGV), "no session: SIGSEGV");
	is_int(0, n, "and nothing written");

	{
		char dir[PATH_MAX + 16];

		snprintf(dir, sizeof(dir), "%s/heaptool", state);
		rmdir(dir);
		rmdir(state);
	}
	return 0;
}
