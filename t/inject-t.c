/*
 * Tests for cli/inject.c, against the fixtures t/target/inject-*.c and the
 * probe libraries (t/target/libinject-probe*.so), all started here and
 * killed at the end.
 *
 * Oracles: the probe's constructor writes "probe NAME loaded" on the
 * target's output and the library shows in /proc/PID/maps; the reader
 * fixture, after the injection, still gets the bytes we write to its pipe
 * (its interrupted read was restarted correctly) with its vector register,
 * signal mask and alternate signal stack intact (the probe clobbers the
 * register); the hammering fixture's checksum equals that of a run without
 * injection and it found no corrupted block; the busy loop keeps counting
 * after a timed-out attempt, untraced.  Refusals are checked by their
 * codes, and a stopped process must still be stopped afterwards, and
 * resumable.
 *
 * The tracer's death: a child of ours makes the injection and kills itself
 * with SIGKILL right after a given step of the remote call (the private
 * hook of inject-int.h); the reader must then go on exactly as above, the
 * signal its probe raised delivered once, and a later injection work.
 *
 * The pauses measured by the injector are printed as diagnostics, never
 * asserted (a noisy 2-core machine).
 */
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "inject-int.h"
#include "target.h"

#define LINE_MS 20000 /* a target gets where it is expected in this */
#define NHAMMER 20

static char *tdir; /* .../t/target */
static char *probe1, *probe2;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

#define SP_PROBE_FD 0x1 /* the probe reports on the target's stdout */
#define SP_RAISE    0x2 /* probe2 raises SIGUSR1 */
#define SP_THREAD   0x4 /* the probe starts a thread waiting in it */

/* Start t/target/prog [arg]; NULL if it did not get ready. */
static struct target *
spawn(const char *prog, const char *arg, int flags)
{
	const char *args[] = { arg, NULL };
	const char *env[] = {
		flags & SP_PROBE_FD ? "HT_PROBE_FD=1" : "HT_PROBE_FD",
		flags & SP_RAISE ? "HT_PROBE_RAISE=probe2" : "HT_PROBE_RAISE",
		flags & SP_THREAD ? "HT_PROBE_THREAD=1" : "HT_PROBE_THREAD",
		NULL,
	};
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tdir, prog);
	return target_start(path, args, env);
}

/* Wait until the target's main thread is blocked in system call nr (or
 * nr2, if not -1). */
static int
wait_in_syscall2(pid_t pid, long nr, long nr2)
{
	char path[64], buf[256];
	uint64_t end = now_ms() + LINE_MS;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	while (now_ms() < end) {
		if ((fd = open(path, O_RDONLY)) != -1) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = '\0';
				if (buf[0] >= '0' && buf[0] <= '9' &&
				    (strtol(buf, NULL, 10) == nr ||
					strtol(buf, NULL, 10) == nr2))
					return 0;
			}
		}
		msleep(2);
	}
	return -1;
}

static int
wait_in_syscall(pid_t pid, long nr)
{
	return wait_in_syscall2(pid, nr, -1);
}

static char
proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return 0;
	return p[2];
}

static long
tracer_of(pid_t pid)
{
	char path[64], line[256];
	long tp = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "TracerPid:", 10) == 0)
			tp = strtol(line + 10, NULL, 10);
	fclose(f);
	return tp;
}

static int
mapped(pid_t pid, const char *lib)
{
	char path[64], line[PATH_MAX + 128];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, lib) != NULL)
			found = 1;
	fclose(f);
	return found;
}

static void
diag_pause(struct ht_inject *h, const char *what)
{
	diag("%s: pause %.3f ms (thread %d), longest stop of a thread let "
	     "go %.3f ms",
	    what, ht_inject_pause_ns(h) / 1e6, (int)ht_inject_tid(h),
	    ht_inject_probe_pause_ns(h) / 1e6);
}

/* Inject lib; 0 or the error code.  Prints the pause. */
static int
inject(pid_t pid, const char *lib, int timeout_ms, const char *what)
{
	struct ht_inject *h;
	int r, code;

	if ((h = ht_inject_new(pid)) == NULL)
		bail("ht_inject_new: out of memory");
	r = ht_inject_load(h, lib, timeout_ms);
	code = ht_inject_errcode(h);
	if (r == 0)
		diag_pause(h, what);
	else
		diag("%s: %s: %s", what, ht_inject_codename(code),
		    ht_inject_error(h));
	if ((r == 0) != (code == HT_INJ_OK))
		diag("%s: return value %d does not match code %s", what, r,
		    ht_inject_codename(code));
	ht_inject_free(h);
	return r == 0 ? HT_INJ_OK : code;
}

/* Skip everything unless we may trace a child of ours. */
static void
check_ptrace(void)
{
	pid_t pid;
	int err;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == -1) {
		err = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		skip_all("ptrace is not permitted here: %s", strerror(err));
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
}

/*
 * (1), (5), (6): a reader blocked in read(2), injected three times.  The
 * first probe clobbers the vector register the reader keeps across its
 * read.  The second also raises SIGUSR1 in its constructor, that is during
 * the remote call: the signal stays pending, blocked, and the kernel
 * delivers it once the thread's mask is restored, so that its handler
 * (without SA_RESTART) interrupts the original read, which returns EINTR
 * exactly once.  The third load is the first library again: only a
 * reference, no constructor.
 */
static void
test_reader(const char *prog)
{
	struct target *t;
	pid_t pid;
	char line[512];

	if ((t = spawn(prog, NULL, SP_PROBE_FD | SP_RAISE)) == NULL) {
		ok(0, "%s: started", prog);
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	ok(wait_in_syscall(pid, 0) == 0, "%s: blocked in read", prog);
	is_string("OK", ht_inject_codename(inject(pid, probe1, 5000, prog)),
	    "%s: probe injected", prog);
	is_string("probe probe loaded", target_line(t, line, sizeof(line)),
	    "%s: the probe's constructor ran in the target", prog);
	ok(mapped(pid, probe1), "%s: the probe is in its maps", prog);
	is_int(0, tracer_of(pid), "%s: no longer traced", prog);
	ok(target_send(t, "hello\n") == 0, "%s: written to its pipe", prog);
	is_string("got 6 hello xmm=ok", target_line(t, line, sizeof(line)),
	    "%s: the interrupted read returned the data, vector register "
	    "intact",
	    prog);

	ok(wait_in_syscall(pid, 0) == 0, "%s: blocked in read again", prog);
	is_string("OK", ht_inject_codename(inject(pid, probe2, 5000, prog)),
	    "%s: second library injected", prog);
	is_string("probe probe2 loaded", target_line(t, line, sizeof(line)),
	    "%s: its constructor ran", prog);
	is_string("eintr usr1=1 xmm=ok", target_line(t, line, sizeof(line)),
	    "%s: the signal raised during the call was delivered once, after "
	    "it, to the original read",
	    prog);

	ok(wait_in_syscall(pid, 0) == 0, "%s: blocked in read again", prog);
	is_string("OK", ht_inject_codename(inject(pid, probe1, 5000, prog)),
	    "%s: first library injected again (only a reference)", prog);
	ok(target_send(t, "again\n") == 0, "%s: written again", prog);
	is_string("got 6 again xmm=ok", target_line(t, line, sizeof(line)),
	    "%s: read restarted, nothing else printed", prog);
	target_kill(t);
}

/*
 * The restart of a call interrupted with -ERESTART_RESTARTBLOCK: poll(2)
 * with a timeout resumes through restart_syscall with the time left.
 */
static void
test_poll(void)
{
	struct target *t;
	pid_t pid;
	char line[512];

	if ((t = spawn("inject-read", "poll", SP_PROBE_FD)) == NULL) {
		ok(0, "poll: started");
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	ok(wait_in_syscall(pid, SYS_poll) == 0, "poll: blocked in poll");
	is_string("OK", ht_inject_codename(inject(pid, probe1, 5000, "poll")),
	    "poll: probe injected");
	is_string("probe probe loaded", target_line(t, line, sizeof(line)),
	    "poll: the probe's constructor ran");
	/* Now in restart_syscall, which continues the poll. */
	ok(wait_in_syscall2(pid, SYS_poll, SYS_restart_syscall) == 0,
	    "poll: blocked in poll (or its restart) again");
	is_string("OK",
	    ht_inject_codename(inject(pid, probe2, 5000, "poll (restarted)")),
	    "poll: injected again");
	is_string("probe probe2 loaded", target_line(t, line, sizeof(line)),
	    "poll: the second constructor ran");
	ok(target_send(t, "data\n") == 0, "poll: written to its pipe");
	is_string("got 5 data xmm=ok", target_line(t, line, sizeof(line)),
	    "poll: the restarted poll returned 1, the read the data");
	target_kill(t);
}

/*
 * The safe point: the only thread is blocked in read(2), but inside a
 * dl_iterate_phdr callback (holding the loader's lock), or inside a signal
 * handler (which may have interrupted anything).  No injection until it
 * leaves; then one goes through.
 */
static void
test_unsafe(const char *mode, const char *in, const char *left,
    const char *named)
{
	struct ht_inject *h;
	struct target *t;
	pid_t pid;
	char line[512];
	int code;

	if ((t = spawn("inject-read", mode, SP_PROBE_FD)) == NULL ||
	    target_line(t, line, sizeof(line)) == NULL ||
	    strcmp(line, in) != 0) {
		ok(0, "unsafe %s: started", mode);
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	ok(wait_in_syscall(pid, 0) == 0, "unsafe %s: blocked in read", mode);
	h = ht_inject_new(pid);
	code = ht_inject_load(h, probe1, 500) == 0 ? HT_INJ_OK :
						     ht_inject_errcode(h);
	is_string("ETIMEDOUT", ht_inject_codename(code),
	    "unsafe %s: no safe point (ETIMEDOUT)", mode);
	diag("unsafe %s: %s", mode, ht_inject_error(h));
	ok(strstr(ht_inject_error(h), named) != NULL,
	    "unsafe %s: the message names %s", mode, named);
	diag("unsafe %s: longest stop of a thread let go %.3f ms", mode,
	    ht_inject_probe_pause_ns(h) / 1e6);
	ht_inject_free(h);
	ok(!mapped(pid, probe1), "unsafe %s: nothing loaded", mode);
	is_int(0, tracer_of(pid), "unsafe %s: not traced", mode);
	ok(target_send(t, "go\n") == 0, "unsafe %s: written to its pipe", mode);
	is_string(left, target_line(t, line, sizeof(line)),
	    "unsafe %s: its read got the line (restarted after each look)",
	    mode);
	ok(wait_in_syscall(pid, 0) == 0, "unsafe %s: blocked in a plain read",
	    mode);
	is_string("OK",
	    ht_inject_codename(inject(pid, probe1, 5000, "unsafe, then safe")),
	    "unsafe %s: injected once out of it", mode);
	is_string("probe probe loaded", target_line(t, line, sizeof(line)),
	    "unsafe %s: the probe's constructor ran", mode);
	target_kill(t);
}

/* The step after which the tracer child dies, and after how many such
 * steps (ST_CALL_SYSCALL comes once per system call stop of the call). */
static int die_step = -1, die_nth;

static void
die_at(struct ht_inject *h, int step)
{
	(void)h;
	if (step == die_step && --die_nth <= 0)
		raise(SIGKILL);
}

/* Inject lib into pid from a child that dies after step (the nth time).
 * Returns 1 if it died there, 0 if it finished, -1 on trouble. */
static int
inject_and_die(pid_t pid, const char *lib, int step, int nth)
{
	struct ht_inject *h;
	pid_t c;
	int st;

	if ((c = fork()) == -1)
		bail("fork: %s", strerror(errno));
	if (c == 0) {
		if ((h = ht_inject_new(pid)) == NULL)
			_exit(2);
		die_step = step;
		die_nth = nth;
		h->on_step = die_at;
		_exit(ht_inject_load(h, lib, 5000) == 0 ? 0 : 1);
	}
	if (waitpid(c, &st, 0) != c)
		return -1;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return 1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Wait until nobody traces pid (the kernel detaches a dead tracer's
 * tracees as it exits, so this is at once). */
static int
untraced(pid_t pid)
{
	uint64_t end = now_ms() + LINE_MS;

	while (tracer_of(pid) != 0 && now_ms() < end)
		msleep(1);
	return tracer_of(pid) == 0;
}

/*
 * The reader (or the poll reader, whose poll restarts through
 * restart_block, and whose restart rt_sigreturn cannot make: with the
 * tracer dead it is issued again, its timeout full) with the tracer dying
 * after step: whatever it left, the thread finishes by itself; then a
 * second injection, with a live tracer, makes sure the library is loaded.
 * probe2 raises SIGUSR1 during the call: a handler without SA_RESTART,
 * so the original read (or poll) must end with EINTR once (decided by the
 * trampoline if we died before the mask was restored), exactly as with a
 * live tracer.  Then the reader must read normally: the same output as
 * test_reader's, whatever the step.
 */
static void
test_death(const char *mode, int step, int nth)
{
	struct target *t;
	char line[512], what[96];
	const char *intr = mode != NULL ? "poll -4 xmm=ok" :
					  "eintr usr1=1 xmm=ok";
	int died, loaded = 0, eintr = 0, other = 0, i;

	snprintf(what, sizeof(what), "death after %s%s #%d",
	    ht_inj_step_name(step), mode != NULL ? " (poll)" : "", nth);
	if ((t = spawn("inject-read", mode, SP_PROBE_FD | SP_RAISE)) == NULL ||
	    wait_in_syscall(target_pid(t), mode != NULL ? SYS_poll : 0) != 0) {
		ok(0, "%s: started", what);
		target_kill(t);
		return;
	}
	died = inject_and_die(target_pid(t), probe2, step, nth);
	ok(died >= 0, "%s: the tracer %s", what,
	    died == 1 ? "died there" : "finished (no such step)");
	ok(untraced(target_pid(t)), "%s: the target is no longer traced", what);
	ok(kill(target_pid(t), 0) == 0 && proc_state(target_pid(t)) != 'Z',
	    "%s: the target is alive", what);
	is_string("OK",
	    ht_inject_codename(inject(target_pid(t), probe2, 5000, what)),
	    "%s: a later injection works", what);
	ok(target_send(t, "death\n") == 0, "%s: written to its pipe", what);
	for (i = 0; i < 4; i++) {
		if (target_line(t, line, sizeof(line)) == NULL)
			break;
		if (strcmp(line, "probe probe2 loaded") == 0)
			loaded++;
		else if (strcmp(line, intr) == 0)
			eintr++;
		else if (strcmp(line, "got 6 death xmm=ok") == 0)
			break;
		else {
			diag("%s: unexpected line \"%s\"", what, line);
			other++;
		}
	}
	ok(i < 4 && other == 0 && loaded == 1 && eintr == 1,
	    "%s: loaded once, the signal ended the read once, the read "
	    "restarted with its registers, mask and signal stack",
	    what);
	target_kill(t);
}

static void
test_deaths(void)
{
	int step;

	for (step = 0; step < ST_NSTEPS; step++)
		test_death(NULL, step, 1);
	test_death(NULL, ST_CALL_SYSCALL, 5);
	test_death(NULL, ST_CALL_SYSCALL, 20);
	test_death("poll", ST_FRAME, 1);
	test_death("poll", ST_CALL_SYSCALL, 10);
	test_death("poll", ST_RETURNED, 1);
	test_death("poll", ST_MASK, 1);
}

/* The target's VmSize in bytes, 0 if unknown. */
static uint64_t
vm_size(pid_t pid)
{
	char path[64], line[256];
	uint64_t kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmSize:", 7) == 0)
			kb = strtoull(line + 7, NULL, 10);
	fclose(f);
	return kb * 1024;
}

/*
 * The call given up half way: the reader's address space limited to what
 * it maps already, so that the mmap of the trampoline's page fails.  The
 * thread must come back from its frame as it was; with the limit lifted,
 * an injection works.
 */
static void
test_nomem(void)
{
	struct ht_inject *h;
	struct target *t;
	struct rlimit rl, old;
	char line[512];
	int code;

	if ((t = spawn("inject-read", NULL, SP_PROBE_FD)) == NULL ||
	    wait_in_syscall(target_pid(t), 0) != 0 ||
	    prlimit(target_pid(t), RLIMIT_AS, NULL, &old) != 0) {
		ok(0, "no memory: started");
		target_kill(t);
		return;
	}
	rl.rlim_cur = vm_size(target_pid(t));
	rl.rlim_max = old.rlim_max;
	ok(rl.rlim_cur > 0 && prlimit(target_pid(t), RLIMIT_AS, &rl, NULL) == 0,
	    "no memory: address space limited to %llu bytes",
	    (unsigned long long)rl.rlim_cur);
	h = ht_inject_new(target_pid(t));
	code = ht_inject_load(h, probe1, 5000) == 0 ? HT_INJ_OK :
						      ht_inject_errcode(h);
	diag("no memory: %s", ht_inject_error(h));
	is_string("ESYS", ht_inject_codename(code), "no memory: ESYS");
	ok(strstr(ht_inject_error(h), "mmap") != NULL,
	    "no memory: the message names the mmap");
	ht_inject_free(h);
	is_int(0, tracer_of(target_pid(t)), "no memory: not traced");
	ok(!mapped(target_pid(t), probe1), "no memory: nothing loaded");
	ok(prlimit(target_pid(t), RLIMIT_AS, &old, NULL) == 0,
	    "no memory: limit lifted");
	is_string("OK",
	    ht_inject_codename(
		inject(target_pid(t), probe1, 5000, "no memory, then some")),
	    "no memory: then injected");
	is_string("probe probe loaded", target_line(t, line, sizeof(line)),
	    "no memory: the probe's constructor ran");
	ok(target_send(t, "after\n") == 0, "no memory: written to its pipe");
	is_string("got 6 after xmm=ok", target_line(t, line, sizeof(line)),
	    "no memory: the read restarted, registers, mask and stack kept");
	target_kill(t);
}

/* (2): 8 threads hammering the allocator, injected NHAMMER times. */
static int
hammer_result(struct target *t, char *sum, size_t sumsize,
    unsigned long *rounds, unsigned long *bad)
{
	char line[256], cs[64];

	if (target_send(t, "stop\n") != 0 ||
	    target_line(t, line, sizeof(line)) == NULL)
		return -1;
	if (sscanf(line, "rounds %lu bad %lu checksum %63s", rounds, bad, cs) !=
	    3)
		return -1;
	snprintf(sum, sumsize, "%s", cs);
	return 0;
}

static void
test_hammer(void)
{
	struct target *t;
	pid_t pid;
	char base[64] = "", sum[64] = "";
	unsigned long rounds = 0, bad = 0;
	int i, nok = 0, alive = 1, code;

	/* The checksum of a run without injection. */
	if ((t = spawn("inject-hammer", NULL, 0)) == NULL ||
	    hammer_result(t, base, sizeof(base), &rounds, &bad) != 0)
		diag("hammer: no baseline");
	target_kill(t);
	diag("hammer: baseline %s after %lu rounds", base, rounds);

	if ((t = spawn("inject-hammer", NULL, 0)) == NULL) {
		ok(0, "hammer: started");
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	for (i = 0; i < NHAMMER && alive; i++) {
		char what[64];

		snprintf(what, sizeof(what), "hammer #%d", i + 1);
		code = inject(pid, i % 4 == 3 ? probe2 : probe1, 5000, what);
		if (code == HT_INJ_OK)
			nok++;
		alive = kill(pid, 0) == 0 && proc_state(pid) != 'Z';
	}
	is_int(NHAMMER, nok, "hammer: %d injections succeeded", NHAMMER);
	ok(alive, "hammer: the target is alive");
	ok(mapped(pid, probe1) && mapped(pid, probe2),
	    "hammer: both libraries are loaded");
	is_int(0, tracer_of(pid), "hammer: no longer traced");
	rounds = bad = 0;
	ok(hammer_result(t, sum, sizeof(sum), &rounds, &bad) == 0,
	    "hammer: stopped and reported");
	diag("hammer: %s after %lu rounds", sum, rounds);
	ok(rounds > 0, "hammer: the workers ran");
	is_int(0, (long long)bad,
	    "hammer: no corrupted block, every round "
	    "alike");
	is_string(base, sum,
	    "hammer: checksum equal to the run without "
	    "injection");
	target_kill(t);
}

/* (3): a busy loop: no safe point, a clean timeout, the target unharmed. */
static unsigned long
read_counter(pid_t pid, uintptr_t addr)
{
	unsigned long v = 0;
	struct iovec l = { &v, sizeof(v) }, r = { (void *)addr, sizeof(v) };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

static int
is_probe1(const char *base)
{
	return strcmp(base, "libinject-probe.so") == 0;
}

/* A thread of pid other than its main thread, or 0. */
static pid_t
other_thread(pid_t pid)
{
	char path[64];
	struct dirent *e;
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) != pid)
			tid = (pid_t)atoi(e->d_name);
	closedir(d);
	return tid;
}

/*
 * ht_inject_call: a function of a library the target has loaded, called
 * like dlopen.  The target's main thread never blocks (it makes a system
 * call now and then and is followed to one); the library's own thread
 * waits in pause() inside the library, the first candidate a plain search
 * would take, and the one the call must not borrow.  The function's
 * result comes back; a library not loaded, or a function it does not
 * export, is ENOLIB with nothing done.
 */
static void
test_call(void)
{
	struct target *t;
	struct ht_inject *h;
	uintptr_t addr = 0;
	unsigned long c0, c1;
	char line[512];
	uint64_t end;
	pid_t pid, lt;
	int r;

	if ((t = spawn("inject-busy", "sys", SP_PROBE_FD | SP_THREAD)) ==
		NULL ||
	    sscanf(target_ready(t), "ready %*d %lx", &addr) != 1) {
		ok(0, "call: started");
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	if ((h = ht_inject_new(pid)) == NULL)
		bail("ht_inject_new: out of memory");
	r = ht_inject_call(h, is_probe1, "ht_probe_call", 2000);
	is_string("ENOLIB",
	    ht_inject_codename(r == 0 ? 0 : ht_inject_errcode(h)),
	    "call: a library not loaded is ENOLIB");
	is_string("OK", ht_inject_codename(inject(pid, probe1, 5000, "call")),
	    "call: the probe loaded");
	is_string("probe probe loaded", target_line(t, line, sizeof(line)),
	    "call: its constructor ran");
	lt = other_thread(pid);
	ok(lt != 0 && wait_in_syscall(lt, SYS_pause) == 0,
	    "call: the library's thread waits in pause() (thread %d)", (int)lt);
	r = ht_inject_call(h, is_probe1, "ht_probe_call", 5000);
	ok(r == 0, "call: the function called (%s)", ht_inject_error(h));
	is_int(0x5151, (long)ht_inject_handle(h), "call: its result came back");
	is_int(pid, ht_inject_tid(h),
	    "call: made by the main thread, not by the one inside the "
	    "library");
	if (r == 0)
		diag_pause(h, "call");
	is_string("probe probe called 1", target_line(t, line, sizeof(line)),
	    "call: the function ran once in the target");
	r = ht_inject_call(h, is_probe1, "ht_probe_nonesuch", 2000);
	is_string("ENOLIB",
	    ht_inject_codename(r == 0 ? 0 : ht_inject_errcode(h)),
	    "call: a function the library does not export is ENOLIB");
	is_int(0, tracer_of(pid), "call: not traced");
	c0 = read_counter(pid, addr);
	end = now_ms() + LINE_MS;
	do {
		msleep(5);
		c1 = read_counter(pid, addr);
	} while (c1 == c0 && now_ms() < end);
	ok(c1 != c0, "call: the target still counts");
	ht_inject_free(h);
	target_kill(t);
}

/* A thread that never blocks but makes system calls: followed with
 * PTRACE_SYSCALL and injected at a syscall-exit-stop. */
static void
test_busy_sys(void)
{
	struct target *t;
	pid_t pid;
	unsigned long c0, c1;
	uintptr_t addr = 0;
	uint64_t end;

	if ((t = spawn("inject-busy", "sys", 0)) == NULL ||
	    sscanf(target_ready(t), "ready %*d %lx", &addr) != 1) {
		ok(0, "busy with system calls: started");
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	is_string("OK",
	    ht_inject_codename(
		inject(pid, probe1, 5000, "busy with system calls")),
	    "busy with system calls: injected");
	ok(mapped(pid, probe1), "busy with system calls: probe loaded");
	is_int(0, tracer_of(pid), "busy with system calls: not traced");
	c0 = read_counter(pid, addr);
	end = now_ms() + LINE_MS;
	do {
		msleep(5);
		c1 = read_counter(pid, addr);
	} while (c1 == c0 && now_ms() < end);
	ok(c1 != c0, "busy with system calls: still counting");
	target_kill(t);
}

static void
test_busy(void)
{
	struct target *t;
	pid_t pid;
	unsigned long c0, c1;
	uintptr_t addr = 0;
	uint64_t t0, el, end;
	int code;

	if ((t = spawn("inject-busy", NULL, 0)) == NULL ||
	    sscanf(target_ready(t), "ready %*d %lx", &addr) != 1) {
		ok(0, "busy: started");
		target_kill(t);
		return;
	}
	pid = target_pid(t);
	/* In the loop, past its last system call. */
	end = now_ms() + LINE_MS;
	while (read_counter(pid, addr) == 0 && now_ms() < end)
		msleep(1);
	t0 = now_ms();
	code = inject(pid, probe1, 500, "busy");
	el = now_ms() - t0;
	is_string("ETIMEDOUT", ht_inject_codename(code),
	    "busy: times out (ETIMEDOUT)");
	diag("busy: gave up after %llu ms (timeout 500 ms)",
	    (unsigned long long)el);
	/* Not a timing test: only that it does give up, far from hanging. */
	ok(el < 500 + 10000, "busy: gave up within the timeout and grace");
	ok(!mapped(pid, probe1), "busy: nothing loaded");
	is_int(0, tracer_of(pid), "busy: not traced");
	ok(proc_state(pid) == 'R', "busy: running (state %c)", proc_state(pid));
	c0 = read_counter(pid, addr);
	end = now_ms() + LINE_MS;
	do {
		msleep(5);
		c1 = read_counter(pid, addr);
	} while (c1 == c0 && now_ms() < end);
	ok(c1 != c0, "busy: still counting (%lu -> %lu)", c0, c1);
	target_kill(t);
}

/* prog (inject-read or inject-static) started and blocked in read(2), its
 * pid in *pid; NULL if it did not get there. */
static struct target *
blocked(const char *prog, pid_t *pid)
{
	struct target *t;

	if ((t = spawn(prog, NULL, 0)) == NULL)
		return NULL;
	*pid = target_pid(t);
	if (wait_in_syscall(*pid, 0) != 0) {
		diag("%s: not blocked in read", prog);
		target_kill(t);
		return NULL;
	}
	return t;
}

/* (4): refusals. */
static void
test_refusals(void)
{
	struct target *t;
	char line[256], buf[64], garbage[PATH_MAX];
	pid_t z, pid;
	long pidmax = 4194304;
	int fd, st, code;
	FILE *f;

	if ((f = fopen("/proc/sys/kernel/pid_max", "r")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL)
			pidmax = strtol(buf, NULL, 10);
		fclose(f);
	}
	/* pid_max itself is never a process ID. */
	is_string("ENOPROC",
	    ht_inject_codename(
		inject((pid_t)pidmax, probe1, 1000, "no such pid")),
	    "no such process: ENOPROC");
	is_string("ENOPROC",
	    ht_inject_codename(inject(0, probe1, 1000, "pid 0")),
	    "pid 0: ENOPROC");

	/* A zombie: a child of ours that exited, not reaped yet. */
	if ((z = fork()) == 0)
		_exit(0);
	while (proc_state(z) != 'Z')
		msleep(1);
	is_string("EZOMBIE",
	    ht_inject_codename(inject(z, probe1, 1000, "zombie")),
	    "zombie: EZOMBIE");
	waitpid(z, NULL, 0);

	/* Stopped: refused, still stopped, resumable. */
	if ((t = blocked("inject-read", &pid)) != NULL) {
		kill(pid, SIGSTOP);
		waitpid(pid, &st, WUNTRACED);
		is_string("ESTOPPED",
		    ht_inject_codename(inject(pid, probe1, 1000, "stopped")),
		    "stopped: ESTOPPED");
		msleep(50);
		ok(proc_state(pid) == 'T', "stopped: still stopped (%c)",
		    proc_state(pid));
		is_int(0, tracer_of(pid), "stopped: not traced");
		kill(pid, SIGCONT);
		target_send(t, "wake\n");
		is_string("got 5 wake xmm=ok",
		    target_line(t, line, sizeof(line)),
		    "stopped: resumed, reads normally");
	} else
		ok(0, "stopped: fixture started");
	target_kill(t);

	/* Already traced (by us). */
	if ((t = blocked("inject-read", &pid)) != NULL &&
	    ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0) {
		is_string("ETRACED",
		    ht_inject_codename(inject(pid, probe1, 1000, "traced")),
		    "traced: ETRACED");
		ptrace(PTRACE_INTERRUPT, pid, NULL, NULL);
		waitpid(pid, &st, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		target_send(t, "free\n");
		is_string("got 5 free xmm=ok",
		    target_line(t, line, sizeof(line)),
		    "traced: reads normally afterwards");
	} else
		ok(0, "traced: fixture started and seized");
	target_kill(t);

	/* Statically linked. */
	if ((t = blocked("inject-static", &pid)) != NULL)
		is_string("ESTATIC",
		    ht_inject_codename(inject(pid, probe1, 1000, "static")),
		    "static: ESTATIC");
	else
		ok(0, "static: fixture started");
	target_kill(t);

	/* A library that is not there, and one that is not a library: the
	 * message carries dlerror()'s text, read from the target. */
	if ((t = blocked("inject-read", &pid)) != NULL) {
		struct ht_inject *h;

		is_string("ENOLIB",
		    ht_inject_codename(inject(pid, "/nonexistent/libnothing.so",
			1000, "no library")),
		    "missing library: ENOLIB");
		snprintf(garbage, sizeof(garbage), "/tmp/inject-t-%d.so",
		    (int)getpid());
		/* Longer than an ELF header, so that dlopen reads it. */
		if ((fd = open(garbage, O_WRONLY | O_CREAT | O_TRUNC, 0644)) !=
		    -1) {
			memset(line, 'x', sizeof(line));
			if (write(fd, line, sizeof(line)) !=
			    (ssize_t)sizeof(line))
				diag("short write");
			close(fd);
		}
		h = ht_inject_new(pid);
		code = ht_inject_load(h, garbage, 5000) == 0 ?
		    HT_INJ_OK :
		    ht_inject_errcode(h);
		is_string("EDLOPEN", ht_inject_codename(code),
		    "not a library: EDLOPEN");
		diag("%s", ht_inject_error(h));
		ok(strstr(ht_inject_error(h), "ELF") != NULL,
		    "not a library: dlerror's text in the message");
		ht_inject_free(h);
		unlink(garbage);
		target_send(t, "still\n");
		is_string("got 6 still xmm=ok",
		    target_line(t, line, sizeof(line)),
		    "not a library: the target reads normally");
	} else
		ok(0, "library errors: fixture started");
	target_kill(t);

	/* Not permitted: an unprivileged user against a root process. */
	if (geteuid() != 0) {
		skip("not root: cannot test an unprivileged attach");
		return;
	}
	if ((t = blocked("inject-read", &pid)) != NULL) {
		if ((z = fork()) == 0) {
			struct ht_inject *h;

			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
			    setuid(65534) != 0)
				_exit(100);
			h = ht_inject_new(pid);
			code = ht_inject_load(h, probe1, 1000) == 0 ?
			    HT_INJ_OK :
			    ht_inject_errcode(h);
			_exit(code);
		}
		waitpid(z, &st, 0);
		is_string("EPERM",
		    ht_inject_codename(WIFEXITED(st) ? WEXITSTATUS(st) : -1),
		    "other user: EPERM");
		target_send(t, "ok\n");
		is_string("got 3 ok xmm=ok", target_line(t, line, sizeof(line)),
		    "other user: target unaffected");
	} else
		ok(0, "permission: fixture started");
	target_kill(t);
}

int
main(void)
{
	test_timeout(600);
	signal(SIGPIPE, SIG_IGN);
	tdir = test_build_path("t/target");
	probe1 = test_build_path("t/target/libinject-probe.so");
	probe2 = test_build_path("t/target/libinject-probe2.so");
#if !defined(__x86_64__)
	skip_all("the injector supports x86-64 only");
#endif
	check_ptrace();
	plan(0);

	test_reader("inject-read");
	test_reader("inject-read-pie");
	test_poll();
	test_unsafe("dliter", "in dl_iterate_phdr", "left dl_iterate_phdr",
	    "dl_iterate_phdr");
	test_unsafe("handler", "in handler", "left handler",
	    "a signal handler");
	test_deaths();
	test_nomem();
	test_hammer();
	test_busy();
	test_busy_sys();
	test_call();
	test_refusals();
	return 0;
}
