/*
 * The injector (see inject.h for the contract, inject-int.h for its parts).
 *
 * The work is ordered so that the thread we stop is stopped for as short a
 * time as possible: the process checks, /proc/PID/maps, libc's dynamic
 * symbol table and every module's ELF file, unwind tables and symbols are
 * read before any thread is touched.  Then, round after round until the
 * deadline, the threads are listed and tried one at a time, best candidates
 * first; the first one found at a safe point makes the call.
 *
 * Every message is composed here, by the failure functions below; the
 * other parts only say what failed.
 *
 * HEAPTOOL_INJECT_TRACE=FILE appends to FILE a line per step of the
 * remote call ("CALL_SET 1234567890", the step and CLOCK_MONOTONIC in
 * ns), each with one write(2): a test that kills us can tell where we
 * were (t/t0023-attach-kill.sh).
 */
#include "config.h"

#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject-int.h"
#include "modfile.h"
#include "monotime.h"
#include "proc.h"

#define DEFAULT_TIMEOUT_MS 5000

static const struct {
	const char *name;
	const char *advice;
} codes[HT_INJ_NCODES] = {
#define HT_INJECT_TABLE(n, a) [HT_INJ_##n] = { #n, a },
	HT_INJECT_CODES(HT_INJECT_TABLE)
#undef HT_INJECT_TABLE
};

static const char *const step_names[ST_NSTEPS] = {
#define HT_INJ_STEP_NAME(n) #n,
	HT_INJ_STEPS(HT_INJ_STEP_NAME)
#undef HT_INJ_STEP_NAME
};

static void
trace(struct ht_inject *h, const char *what)
{
	char buf[96];
	int n;

	n = snprintf(buf, sizeof(buf), "%s %llu\n", what,
	    (unsigned long long)ht_inj_now_ns());
	if (n > 0 && write(h->trace_fd, buf, (size_t)n) != n)
		return; /* a trace, not worth a failure */
}

const char *
ht_inj_step_name(int step)
{
	return step >= 0 && step < ST_NSTEPS ? step_names[step] : "?";
}

static void
trace_step(struct ht_inject *h, int step)
{
	trace(h, ht_inj_step_name(step));
}

/* PTRACE_GETSIGMASK gives the mask that ppoll, pselect, sigsuspend will
 * restore (not their temporary one) since Linux 5.1. */
static int
getsigmask_saved(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 5 || (major == 5 && minor >= 1);
}

static int
vfail(struct ht_inject *h, int code, int err, const char *advice,
    const char *fmt, va_list ap)
{
	size_t n;

	h->code = code;
	vsnprintf(h->msg, sizeof(h->msg), fmt, ap);
	n = strlen(h->msg);
	if (err != 0 && n < sizeof(h->msg))
		n += (size_t)snprintf(h->msg + n, sizeof(h->msg) - n, ": %s",
		    strerror(err));
	if (advice == NULL)
		advice = codes[code].advice;
	if (*advice != '\0' && n < sizeof(h->msg))
		snprintf(h->msg + n, sizeof(h->msg) - n, "; %s", advice);
	return -1;
}

int
ht_inj_fail(struct ht_inject *h, int code, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(h, code, err, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int
ht_inj_fail_advice(struct ht_inject *h, int code, int err, const char *advice,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(h, code, err, advice, fmt, ap);
	va_end(ap);
	return -1;
}

int
ht_inj_fail_perm(struct ht_inject *h, int err, const char *what)
{
	char buf[4096], v[64], advice[256];
	long scope = -1, tuid = -1;

	if (ht_proc_file(0, 0, "sys/kernel/yama/ptrace_scope", v, sizeof(v)) >
	    0)
		scope = strtol(v, NULL, 10);
	if (ht_proc_file(h->pid, 0, "status", buf, sizeof(buf)) > 0 &&
	    ht_proc_field(buf, "Uid", v, sizeof(v)) == 0)
		tuid = strtol(v, NULL, 10);
	if (scope == 3)
		snprintf(advice, sizeof(advice),
		    "kernel.yama.ptrace_scope is "
		    "3, which forbids ptrace until reboot");
	else if (scope == 2 && geteuid() != 0)
		snprintf(advice, sizeof(advice),
		    "kernel.yama.ptrace_scope is "
		    "2: run as root, or set it to 0 or 1");
	else if (geteuid() != 0 && tuid >= 0 && (uid_t)tuid != geteuid())
		snprintf(advice, sizeof(advice),
		    "the process runs as uid %ld: "
		    "run as that user or as root",
		    tuid);
	else if (geteuid() == 0)
		snprintf(advice, sizeof(advice),
		    "root without CAP_SYS_PTRACE "
		    "(a container?): grant CAP_SYS_PTRACE, or run where the "
		    "target is visible with that capability");
	else
		advice[0] = '\0';
	return ht_inj_fail_advice(h, HT_INJ_EPERM, err,
	    advice[0] != '\0' ? advice : NULL, "%s", what);
}

uint64_t
ht_inj_now_ns(void)
{
	return ht_mono_ns();
}

void
ht_inj_sleep_us(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
live_cb(void *arg, pid_t tid, char st)
{
	(void)tid;
	if (st != 'Z' && st != 'X')
		(*(int *)arg)++;
	return 0;
}

/* A leader that called pthread_exit is a zombie while its threads run. */
static int
count_live_tasks(pid_t pid)
{
	int n = 0;

	(void)ht_proc_tasks(pid, live_cb, &n);
	return n;
}

static int
check_process(struct ht_inject *h)
{
	char buf[8192], v[256], comm[64], tc[64] = "?", advice[96];
	long tgid, tracer;

	if (h->pid <= 0)
		return ht_inj_fail(h, HT_INJ_ENOPROC, 0, "no process %d",
		    (int)h->pid);
	if (ht_proc_file(h->pid, 0, "status", buf, sizeof(buf)) == -1) {
		if (errno == ENOENT || errno == ESRCH)
			return ht_inj_fail(h, HT_INJ_ENOPROC, 0,
			    "no process "
			    "%d",
			    (int)h->pid);
		return ht_inj_fail(h, HT_INJ_ESYS, errno, "/proc/%d/status",
		    (int)h->pid);
	}
	if (ht_proc_field(buf, "Tgid", v, sizeof(v)) == 0 &&
	    (tgid = strtol(v, NULL, 10)) != h->pid) {
		snprintf(advice, sizeof(advice), "use the process ID, %ld",
		    tgid);
		return ht_inj_fail_advice(h, HT_INJ_ENOPROC, 0, advice,
		    "%d is a thread of process %ld, not a process", (int)h->pid,
		    tgid);
	}
	if (ht_proc_field(buf, "Name", comm, sizeof(comm)) != 0)
		strcpy(comm, "?");
	if (ht_proc_field(buf, "State", v, sizeof(v)) != 0)
		return ht_inj_fail(h, HT_INJ_ENOPROC, 0, "no process %d",
		    (int)h->pid);
	if ((v[0] == 'Z' || v[0] == 'X') && count_live_tasks(h->pid) == 0)
		return ht_inj_fail(h, HT_INJ_EZOMBIE, 0,
		    "process %d (%s) is "
		    "a zombie",
		    (int)h->pid, comm);
	if (v[0] == 'T')
		return ht_inj_fail(h, HT_INJ_ESTOPPED, 0,
		    "process %d (%s) is "
		    "stopped (SIGSTOP or job control): attaching now would "
		    "leave it in an unclear state",
		    (int)h->pid, comm);
	if (ht_proc_field(buf, "TracerPid", v, sizeof(v)) == 0 &&
	    (tracer = strtol(v, NULL, 10)) != 0) {
		if (ht_proc_file((pid_t)tracer, 0, "comm", tc, sizeof(tc)) > 0)
			tc[strcspn(tc, "\n")] = '\0';
		return ht_inj_fail(h, HT_INJ_ETRACED, 0,
		    "process %d (%s) is "
		    "already traced by process %ld (%s)",
		    (int)h->pid, comm, tracer, tc);
	}
	if (ht_proc_field(buf, "Seccomp", v, sizeof(v)) == 0 && v[0] == '1')
		return ht_inj_fail_advice(h, HT_INJ_EUNSUPP, 0,
		    "it cannot "
		    "load a library",
		    "process %d (%s) runs in seccomp strict "
		    "mode",
		    (int)h->pid, comm);
	/* Mode 2: a filter, which may kill the process on a system call the
	 * loader makes (openat, mmap, mprotect...); we cannot read it. */
	if (ht_proc_field(buf, "Seccomp", v, sizeof(v)) == 0 && v[0] == '2' &&
	    !h->allow_seccomp)
		return ht_inj_fail(h, HT_INJ_ESECCOMP, 0,
		    "process %d (%s) "
		    "runs under a seccomp filter, which may kill it when it "
		    "loads the agent",
		    (int)h->pid, comm);
	return 0;
}

/*
 * The thread whose /proc/TID stands for the process (proc.h): the leader,
 * unless it called pthread_exit.  Its root, and that root as our /proc
 * names it, to find inside it the files its maps show.
 */
static int
find_live_task(struct ht_inject *h)
{
	if ((h->mpid = ht_proc_live_task(h->pid)) == -1)
		return ht_inj_fail(h, HT_INJ_ENOPROC, 0,
		    "process %d has no "
		    "live thread left",
		    (int)h->pid);
	snprintf(h->root, sizeof(h->root), "/proc/%d/root", (int)h->mpid);
	if (ht_proc_root_link(h->pid, h->rootlink, sizeof(h->rootlink)) != 0)
		h->rootlink[0] = '\0';
	return 0;
}

/* Is lib there for the target's loader: a regular file as the target's
 * root resolves it? */
static int
check_lib(struct ht_inject *h, const char *lib)
{
	struct stat sb;
	int rootfd, fd, r;

	if (lib == NULL || lib[0] == '\0' || strlen(lib) >= PATH_MAX)
		return ht_inj_fail(h, HT_INJ_ENOLIB, 0,
		    "no library path "
		    "given, or too long");
	if (lib[0] != '/')
		return 0; /* the target's loader searches for it */
	if ((rootfd = open(h->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0; /* cannot check: let dlopen tell */
	fd = ht_modfile_open_in_root(rootfd, lib, O_PATH);
	close(rootfd);
	if (fd == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return ht_inj_fail(h, HT_INJ_ENOLIB, 0,
			    "%s does not "
			    "exist in the file system of process %d (its "
			    "mount namespace and root)",
			    lib, (int)h->pid);
		return 0;
	}
	r = fstat(fd, &sb);
	close(fd);
	if (r == 0 && !S_ISREG(sb.st_mode))
		return ht_inj_fail(h, HT_INJ_ENOLIB, 0,
		    "%s is not a regular "
		    "file in the file system of process %d",
		    lib, (int)h->pid);
	return 0;
}

struct ht_inject *
ht_inject_new(pid_t pid)
{
	struct ht_inject *h;
	const char *path;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->pid = pid;
	h->sfd = -1;
	h->trace_fd = -1;
	if ((path = getenv("HEAPTOOL_INJECT_TRACE")) != NULL &&
	    path[0] != '\0' &&
	    (h->trace_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		 0600)) != -1)
		h->on_step = trace_step;
	return h;
}

void
ht_inject_allow_seccomp(struct ht_inject *h, int allow)
{
	h->allow_seccomp = allow;
}

/*
 * What ht_inject_load and ht_inject_call share: the checks of the process,
 * its libc, then (symbol NULL) dlopen(lib) or (symbol set) the function
 * symbol of the library that match accepts, then the search for a thread
 * that makes the call.  Returns 0 or -1.
 */
static int
inject(struct ht_inject *h, const char *lib, int (*match)(const char *),
    const char *symbol, int timeout_ms)
{
	uint64_t start = ht_inj_now_ns(), deadline;
	char path[PATH_MAX];
	sigset_t chld, omask;
	int r;

	h->code = HT_INJ_OK;
	h->msg[0] = '\0';
	h->tid = 0;
	h->pause_ns = h->probe_ns = h->handle = 0;
	h->calling = symbol != NULL;
	h->avoid_lo = h->avoid_hi = 0;
	if (timeout_ms <= 0)
		timeout_ms = DEFAULT_TIMEOUT_MS;
	deadline = start + (uint64_t)timeout_ms * MSEC;
	if (h->cur != 0 && ht_inj_stop_and_release(h, 0) != 0)
		return ht_inj_fail(h, HT_INJ_ESYS, 0,
		    "thread %d of process "
		    "%d, seized by an earlier attempt, still does not stop",
		    (int)h->cur, (int)h->pid);
	elf_version(EV_CURRENT);
	h->saved_sigmask = getsigmask_saved();
	if (h->trace_fd != -1)
		trace(h, "LOAD");
	if (check_process(h) != 0 || find_live_task(h) != 0 ||
	    ht_inj_find_libc(h) != 0 ||
	    (symbol == NULL && check_lib(h, lib) != 0) ||
	    (symbol != NULL && ht_inj_find_export(h, match, symbol, path) != 0))
		return -1;
	if (symbol == NULL) {
		h->fn_addr = h->dlopen_addr;
		h->fn_err = h->dlerror_addr;
		snprintf(h->fn_name, sizeof(h->fn_name), "dlopen");
	} else {
		h->fn_err = 0;
		snprintf(h->fn_name, sizeof(h->fn_name), "%s", symbol);
	}
	if (ht_inj_mem_read(h->mpid, h->dlopen_addr, h->dlopen_code,
		sizeof(h->dlopen_code)) != 0 ||
	    ht_inj_mem_read(h->mpid, h->fn_addr, h->fn_code,
		sizeof(h->fn_code)) != 0)
		return ht_inj_fail(h, HT_INJ_ESYS, errno,
		    "reading the memory "
		    "of process %d",
		    (int)h->pid);
	if (ht_inj_dwfl_setup(h) != 0)
		return -1;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (pthread_sigmask(SIG_BLOCK, &chld, &omask) == 0) {
		h->sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
		r = ht_inj_search(h, lib, start, deadline, timeout_ms);
		if (h->sfd != -1)
			close(h->sfd);
		h->sfd = -1;
		pthread_sigmask(SIG_SETMASK, &omask, NULL);
	} else
		r = ht_inj_search(h, lib, start, deadline, timeout_ms);
	ht_inj_dwfl_teardown(h);
	free(h->vmas);
	h->vmas = NULL;
	h->nvma = 0;
	if (r == 0) {
		h->code = HT_INJ_OK;
		h->msg[0] = '\0';
	}
	if (h->trace_fd != -1)
		trace(h, r == 0 ? "LOADED" : "FAILED");
	return r;
}

int
ht_inject_load(struct ht_inject *h, const char *lib, int timeout_ms)
{
	return inject(h, lib, NULL, NULL, timeout_ms);
}

int
ht_inject_call(struct ht_inject *h, int (*match)(const char *base),
    const char *symbol, int timeout_ms)
{
	if (symbol == NULL || symbol[0] == '\0' || match == NULL)
		return ht_inj_fail(h, HT_INJ_ENOLIB, 0, "no function given");
	return inject(h, "", match, symbol, timeout_ms);
}

const char *
ht_inject_error(const struct ht_inject *h)
{
	return h->msg;
}

int
ht_inject_errcode(const struct ht_inject *h)
{
	return h->code;
}

const char *
ht_inject_codename(int code)
{
	if (code < 0 || code >= HT_INJ_NCODES)
		return "?";
	return codes[code].name;
}

pid_t
ht_inject_tid(const struct ht_inject *h)
{
	return h->tid;
}

uint64_t
ht_inject_pause_ns(const struct ht_inject *h)
{
	return h->pause_ns;
}

uint64_t
ht_inject_probe_pause_ns(const struct ht_inject *h)
{
	return h->probe_ns;
}

uint64_t
ht_inject_handle(const struct ht_inject *h)
{
	return h->handle;
}

void
ht_inject_free(struct ht_inject *h)
{
	if (h == NULL)
		return;
	/* A thread that would not stop in time is still seized: one last
	 * bounded try to let it go cleanly. */
	if (h->cur != 0)
		(void)ht_inj_stop_and_release(h, 0);
	ht_inj_dwfl_teardown(h);
	free(h->vmas);
	if (h->trace_fd != -1)
		close(h->trace_fd);
	free(h);
}
