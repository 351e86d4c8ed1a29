/*
 * The final profile of an attached process (final.h): its directory and
 * name, the write at exit, and the fatal signals' handler.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "final.h"
#include "guard.h"
#include "lock.h"
#include "prim.h"
#include "profile.h"
#include "safedir.h"
#include "session.h"
#include "snapshot.h"

/* How long a handler waits for ht_lock_global, and a second crashing
 * thread for the first one's write. */
#define LOCK_WAIT_MS   2000
#define WRITER_WAIT_MS 5000

static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
#define NFATAL (sizeof(fatal) / sizeof(fatal[0]))

/* Serializes arming and disarming (the control thread, the API, fork);
 * the handler never takes it. */
static struct ht_lock arm_lock;
/* The directory the environment names, from ht_final_setup. */
static char home_dir[HT_FINAL_DIR_MAX + 1];
/*
 * The directory and the file name, set once (under arm_lock) before
 * opened is set with a release store; read by the handler only after
 * opened, so never while they change.  dir_ino and dir_dev tell our
 * descriptor from one the program may have put at its number.
 */
static char dir_path[HT_FINAL_DIR_MAX + 1];
static char name[NAME_MAX + 1];
static int dir_fd = -1;
static dev_t dir_dev;
static ino_t dir_ino;
static int opened;
static int armed;
/* Bit i: fatal[i]'s handler is ours (that we put it; the program may have
 * replaced it since). */
static unsigned installed;
/* 0, then 1 once a write is claimed (at most one in the process's life),
 * then 2 when it is over. */
static int written;
/* The thread writing on a signal, for a fault inside the write. */
static pid_t writer;
static sigjmp_buf jump;
/* What a jump out of the write must undo. */
static volatile int snap_locked;
static volatile int file_open;
static struct ht_file file;

static void on_fatal(int sig, siginfo_t *info, void *uc);
static int dir_ours(void);

/* Append s to buf[len] at *n; -1 if it does not fit. */
static int
append(char *buf, size_t len, size_t *n, const char *s)
{
	size_t k = strlen(s);

	if (*n + k >= len)
		return -1;
	memcpy(buf + *n, s, k + 1);
	*n += k;
	return 0;
}

static char *
put_num(char *p, uint64_t v)
{
	char digits[24];
	size_t n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*p++ = digits[--n];
	*p = '\0';
	return p;
}

void
ht_final_setup(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	size_t n = 0;

	home_dir[0] = '\0';
	/* As the XDG spec has it: a relative XDG_STATE_HOME is ignored.  A
	 * HOME of "/" (daemons) is no home to make directories in. */
	if (x != NULL && x[0] == '/') {
		if (append(home_dir, sizeof(home_dir), &n, x) != 0 ||
		    append(home_dir, sizeof(home_dir), &n, "/heaptool") != 0)
			home_dir[0] = '\0';
	} else if (h != NULL && h[0] == '/' && h[1] != '\0') {
		if (append(home_dir, sizeof(home_dir), &n, h) != 0 ||
		    append(home_dir, sizeof(home_dir), &n,
			"/.local/state/heaptool") != 0)
			home_dir[0] = '\0';
	}
}

/* The process's start time, field 22 of /proc/self/stat (after the
 * command, which may hold anything but ends at the last ')'). */
static uint64_t
start_time(void)
{
	char buf[1024], *p;
	uint64_t v = 0;
	int field = 2;

	ht_prim_read_proc("/proc/self/stat", buf, sizeof(buf));
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (p++; *p != '\0' && field < 22; p++)
		if (*p == ' ')
			field++;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* Make and open path as a safe directory of ours (src/safedir.h).
 * Returns 0 with dir_* set, or -1. */
static int
open_dir(const char *path)
{
	struct ht_safedir_why why;
	struct stat st;
	size_t len = strlen(path);
	int fd;

	if (len == 0 || len > HT_FINAL_DIR_MAX)
		return -1;
	fd = ht_safedir_open(-1, path, len, geteuid(),
	    HT_SAFEDIR_WRITE | HT_SAFEDIR_CREATE, &why);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	dir_fd = fd;
	dir_dev = st.st_dev;
	dir_ino = st.st_ino;
	memcpy(dir_path, path, len + 1);
	return 0;
}

/* The file's name, final.PID.START.heap, for this process. */
static void
make_name(void)
{
	char *p = name;

	memcpy(p, "final.", 6);
	p = put_num(p + 6, (uint64_t)getpid());
	*p++ = '.';
	p = put_num(p, start_time());
	memcpy(p, ".heap", 6);
}

/* Under arm_lock: the directory (the environment's, else /var/tmp's) and
 * the name, once.  Returns 0 or -1. */
static int
open_once(void)
{
	char tmp[64];

	if (opened)
		return 0;
	if (open_dir(home_dir) != 0) {
		memcpy(tmp, "/var/tmp/heaptool-", 19);
		put_num(tmp + 18, (uint64_t)geteuid());
		if (open_dir(tmp) != 0)
			return -1;
	}
	make_name();
	__atomic_store_n(&opened, 1, __ATOMIC_RELEASE);
	return 0;
}

static int
is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) != 0 && sa->sa_sigaction == on_fatal;
}

static int
is_default(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) == 0 && sa->sa_handler == SIG_DFL;
}

/* Put the default action back on sig if our handler is still there. */
static void
uninstall(size_t i)
{
	struct sigaction cur, dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (sigaction(fatal[i], NULL, &cur) == 0 && is_ours(&cur))
		(void)sigaction(fatal[i], &dfl, NULL);
	__atomic_and_fetch(&installed, ~(1u << i), __ATOMIC_RELAXED);
}

/*
 * Under arm_lock: our handler on each fatal signal at its default action.
 * Looking and setting are two calls: a program that sets its own handler
 * between them, on another thread, would lose it to ours; programs set
 * these handlers as they start, long before an attach.
 */
static void
install(void)
{
	struct sigaction cur, ours;
	size_t i;

	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = on_fatal;
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&ours.sa_mask);
	for (i = 0; i < NFATAL; i++) {
		if ((installed & (1u << i)) != 0 ||
		    sigaction(fatal[i], NULL, &cur) != 0 || !is_default(&cur))
			continue;
		if (sigaction(fatal[i], &ours, NULL) == 0)
			__atomic_or_fetch(&installed, 1u << i,
			    __ATOMIC_RELAXED);
	}
}

int
ht_final_arm(int on)
{
	size_t i;
	int rc = 0;

	ht_guard_enter();
	ht_lock_acquire(&arm_lock);
	if (on && open_once() == 0) {
		install();
		__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
		for (i = 0; i < NFATAL; i++)
			if ((installed & (1u << i)) != 0)
				uninstall(i);
		rc = on ? -1 : 0;
	}
	ht_lock_release(&arm_lock);
	ht_guard_leave();
	return rc;
}

int
ht_final_state(char *dir, size_t len)
{
	size_t n = 0;

	dir[0] = '\0';
	if (__atomic_load_n(&opened, __ATOMIC_ACQUIRE))
		(void)append(dir, len, &n, dir_path);
	return __atomic_load_n(&armed, __ATOMIC_ACQUIRE);
}

void
ht_final_fork_child(int follow)
{
	size_t i;

	/* A thread of the parent may have been arming: it is not here. */
	ht_lock_release(&arm_lock);
	written = 0;
	/* A followed child keeps the directory (the descriptor is its own
	 * now) and the handlers, under its own name. */
	if (follow && armed && opened && dir_ours() >= 0) {
		make_name();
		return;
	}
	armed = 0;
	for (i = 0; i < NFATAL; i++)
		if ((installed & (1u << i)) != 0)
			uninstall(i);
	if (opened && dir_ours() >= 0)
		close(dir_fd);
	dir_fd = -1;
	opened = 0;
}

/* Is there a profile for the final write: a session was started in this
 * process (not a fork's copy of its parent's)?  Read without the lock: a
 * session being changed meanwhile writes a profile of one or the other. */
static int
have_session(void)
{
	return __atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) !=
	    HT_STATE_NONE &&
	    __atomic_load_n(&ht_session.pid, __ATOMIC_RELAXED) == getpid();
}

/* The directory's descriptor if it is still ours (the program may close
 * "its" descriptors and reuse the number), else -1. */
static int
dir_ours(void)
{
	struct stat st;
	int fl;

	if (dir_fd < 0 || fstat(dir_fd, &st) != 0 || st.st_dev != dir_dev ||
	    st.st_ino != dir_ino || (fl = fcntl(dir_fd, F_GETFL)) == -1 ||
	    (fl & O_PATH) == 0)
		return -1;
	return dir_fd;
}

/*
 * Write the final profile with flags (and sig, on a signal).  Returns 0
 * or -1.  Only system calls, and the snapshot's own memory.
 */
static int
write_final(uint32_t flags, int sig)
{
	struct ht_safedir_why why;
	int dfd = dir_ours(), own = 0, rc;

	/* The program closed our descriptor: the path again, with the same
	 * checks, no longer making anything. */
	if (dfd < 0) {
		dfd = ht_safedir_open(-1, dir_path, strlen(dir_path), geteuid(),
		    HT_SAFEDIR_WRITE, &why);
		if (dfd < 0)
			return -1;
		own = 1;
	}
	if (ht_file_create(&file, dfd, name) != 0) {
		rc = -1;
		goto out;
	}
	file_open = 1;
	rc = ht_snapshot_fd_final(file.fd, flags, (uint32_t)sig, sig != 0,
	    LOCK_WAIT_MS, &snap_locked);
	/* Our directory, our name: an earlier file of it (a reboot reused
	 * the pid and the start time) is replaced. */
	if (rc == 0 && (rc = ht_file_publish(&file, name, 1)) != 0)
		ht_file_discard(&file);
	else if (rc != 0)
		ht_file_discard(&file);
	file_open = 0;
out:
	if (own)
		close(dfd);
	return rc;
}

/* Claim the one final write.  Returns 1 if this thread writes it. */
static int
claim(void)
{
	int zero = 0;

	return __atomic_compare_exchange_n(&written, &zero, 1, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/*
 * Write the final profile with flags (sig: on that signal), guarded: a
 * fault while writing (the tables or the heap may be what is corrupt)
 * comes back to on_fatal, where our handler is the fault's, and from
 * there here by siglongjmp, even a fault of the very signal being
 * handled, which is unblocked meanwhile (else the kernel would kill the
 * process at once).  What the write held is then let go and the
 * half-written file vanishes.
 */
static void
guarded_write(uint32_t flags, int sig, pid_t tid)
{
	sigset_t set, old;
	size_t i;

	pthread_sigmask(SIG_SETMASK, NULL, &old);
	if (sigsetjmp(jump, 0) == 0) {
		__atomic_store_n(&writer, tid, __ATOMIC_RELEASE);
		sigemptyset(&set);
		for (i = 0; i < NFATAL; i++)
			sigaddset(&set, fatal[i]);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		(void)write_final(flags, sig);
	} else {
		/* The tables were only read. */
		if (snap_locked) {
			snap_locked = 0;
			ht_lock_release(&ht_lock_global);
		}
		if (file_open) {
			file_open = 0;
			ht_file_discard(&file);
		}
	}
	__atomic_store_n(&writer, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void
ht_final_at_exit(void)
{
	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || !have_session() ||
	    !claim())
		return;
	guarded_write(HT_META_FINAL | HT_META_AT_EXIT, 0, ht_prim_tid());
	__atomic_store_n(&written, 2, __ATOMIC_RELEASE);
}

/* Another thread writes the final profile: give it WRITER_WAIT_MS to
 * finish before this one dies. */
static void
wait_writer(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t deadline = ht_prim_mono_ms() + WRITER_WAIT_MS;

	while (__atomic_load_n(&written, __ATOMIC_ACQUIRE) == 1 &&
	    ht_prim_mono_ms() < deadline)
		nanosleep(&ts, NULL);
}

/* On a fatal signal, in its handler: the final profile, if this thread
 * may write it (see final.h). */
static void
write_on_signal(int sig, pid_t tid)
{
	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || ht_guard_held() ||
	    !have_session())
		return;
	if (!claim()) {
		wait_writer();
		return;
	}
	ht_guard_enter();
	guarded_write(HT_META_FINAL | HT_META_ON_SIGNAL, sig, tid);
	__atomic_store_n(&written, 2, __ATOMIC_RELEASE);
	ht_guard_leave();
}

/*
 * The signal goes on to what would have had it without us.  If our
 * handler is the signal's action, the default action is put back and the
 * signal queued again to this thread with its siginfo: blocked until this
 * handler returns, it is then delivered where the thread was interrupted.
 * So it is if the default action is back already (a detach meanwhile).
 * If another handler is the action (the program's, which called ours as
 * the action it had found), return to it.
 */
static void
pass_on(int sig, siginfo_t *info, pid_t tid)
{
	struct sigaction cur, dfl;
	size_t i;

	if (sigaction(sig, NULL, &cur) != 0 ||
	    (!is_ours(&cur) && !is_default(&cur)))
		return;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (is_ours(&cur))
		(void)sigaction(sig, &dfl, NULL);
	for (i = 0; i < NFATAL; i++)
		if (fatal[i] == sig)
			__atomic_and_fetch(&installed, ~(1u << i),
			    __ATOMIC_RELAXED);
	/* The queue may be full (RLIMIT_SIGPENDING): then a plain tgkill,
	 * and a fault faults again anyway when the handler returns. */
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, sig, info) != 0)
		(void)syscall(SYS_tgkill, getpid(), tid, sig);
}

static void
on_fatal(int sig, siginfo_t *info, void *uc)
{
	pid_t tid = ht_prim_tid();
	int saved = errno;

	(void)uc;
	if (__atomic_load_n(&writer, __ATOMIC_ACQUIRE) == tid)
		siglongjmp(jump, 1); /* a fault inside our own write */
	write_on_signal(sig, tid);
	pass_on(sig, info, tid);
	errno = saved;
}
