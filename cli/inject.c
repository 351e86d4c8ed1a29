/*
 * The injector (see inject.h for the contract).
 *
 * The work is ordered so that the thread we stop is stopped for as short a
 * time as possible: the process checks, /proc/PID/maps, libc's dynamic
 * symbol table and every module's ELF file, unwind tables and symbols are
 * read before any thread is touched.  Then, round after round until the
 * deadline, the threads are listed and tried one at a time, best candidates
 * first; the first one found at a safe point makes the call.
 *
 * How the call returns: we push 0 as its return address.  dlopen returns to
 * address 0 and the fetch faults; the SIGSEGV stops the thread in a
 * signal-delivery-stop, where we recognise it by rip == 0 together with rsp
 * == our slot + 8 (a stray jump to 0 inside the call cannot match both) and
 * suppress it.  Nothing is ever mapped at 0 (vm.mmap_min_addr; we refuse a
 * process that maps page 0 anyway), so no other thread can execute there,
 * and unlike an int3 in a scratch page this needs no remote mmap: no extra
 * system call in the target, no mapping left behind.  Either way the trap
 * is a forced signal, and the kernel resets the disposition of a forced
 * signal that is blocked or ignored; so threads that block or ignore
 * SIGSEGV are never chosen.
 *
 * Why restoring the saved registers is enough for the interrupted system
 * call: a thread stopped in a blocking system call (by PTRACE_INTERRUPT, or
 * at a syscall-exit-stop) has orig_rax = the call's number and rax = its
 * result, -ERESTARTSYS/-ERESTARTNOINTR/-ERESTARTNOHAND/-ERESTART_RESTARTBLOCK
 * if it was interrupted.  The kernel decides about the restart only when the
 * thread leaves its stop and finds no signal to deliver (x86's
 * arch_do_signal_or_restart): orig_rax >= 0 and rax one of those, then rax =
 * orig_rax (or restart_syscall) and rip -= 2.  We run the call with
 * orig_rax = -1, so that nothing restarts into it, and put the saved
 * registers back in the last stop (the SIGSEGV's): leaving that stop, the
 * kernel sees the original call's state and restarts it, or returns its
 * result, exactly as if we had never been there.  A signal that arrived
 * during the call is handed back in that same stop (PTRACE_SETSIGINFO and
 * the detach's signal), so its handler sees the original call interrupted
 * and SA_RESTART applies as usual.  (ERESTART_RESTARTBLOCK also relies on
 * the thread's restart_block, which only a sleep with a timeout that a
 * signal interrupts could overwrite; dlopen does not sleep that way.)
 *
 * Limits: a thread blocked in a call that the kernel ends with EINTR when
 * interrupted (epoll_wait, semop, sigtimedwait, io_getevents...) sees that
 * EINTR, as under any debugger; such threads are tried only when no other
 * thread is there to try, or after a quarter of the timeout (at most
 * 250 ms: a server idle in epoll_wait everywhere must not wait seconds).
 * A call that never returns (dlopen blocked for good) cannot be undone:
 * after 10 s we let the thread go and say so.
 */
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "inject.h"

#if !defined(__x86_64__)
#error "cli/inject.c supports x86-64 only (registers, system call restart)"
#endif

#define DEFAULT_TIMEOUT_MS	5000
#define CALL_GRACE_MS		10000	/* the remote call's own allowance */
#define STOP_GRACE_MS		2000	/* to stop, once told to */
#define SLICE_MS		20	/* following a running thread */
#define ROUND_PAUSE_US		1000	/* between rounds: let threads move, */
#define ROUND_PAUSE_MAX_US	16000	/* doubling up to this */
#define EINTR_DELAY_MS		250	/* before threads that get EINTR */
#define MAXFRAMES		256
#define MAXDEFER		32
#define MAXTHREADS		4096
#define XSTATE_MAX		16384	/* > any XSAVE area (AMX: 11 KB) */
#define RED_ZONE		128
#define STACK_NEED		(32 * 1024)	/* dlopen, constructors */
#define MAXVMAS			65536
#define ERRSTR_MAX		512

#define NSEC			1000000000ULL
#define MSEC			1000000ULL

static const struct {
	const char	*name;
	const char	*advice;
} codes[HT_INJ_NCODES] = {
#define HT_INJECT_TABLE(n, a)	[HT_INJ_##n] = { #n, a },
	HT_INJECT_CODES(HT_INJECT_TABLE)
#undef HT_INJECT_TABLE
};

/* Why the threads of the last round were not used, for the timeout
 * message. */
struct reasons {
	int	running;	/* user code, reached no system call */
	int	unsafe;		/* a frame of malloc/loader/fork/exit */
	int	unwind;		/* stack could not be unwound */
	int	eintr;		/* in a call that would see EINTR: left */
	int	dstate;		/* uninterruptible sleep */
	int	sigsegv;	/* blocks or ignores SIGSEGV */
	int	stack;		/* too little stack left */
	int	shstk;		/* shadow stack */
	int	traced;		/* traced by someone else */
	int	stopped;	/* in a group-stop */
	char	fn[128];	/* the last unsafe frame seen */
	char	unwind_msg[128];
};

/* A mapping of the target, to tell how much stack a thread has left. */
struct vma {
	uint64_t	lo, hi;
	int		grows;		/* the main stack, which grows down */
};

/* The address range of a function that may hold one of dlopen's locks. */
struct urange {
	uint64_t	 lo, hi;
	const char	*name;		/* in the Dwfl's symbol table */
};

struct ht_inject {
	pid_t		 pid;
	int		 code;
	int		 allow_seccomp;	/* ht_inject_allow_seccomp */
	char		 msg[1024];
	pid_t		 tid;
	uint64_t	 pause_ns;
	uint64_t	 probe_ns;
	uint64_t	 handle;

	/* One ht_inject_load. */
	char		 libc_path[PATH_MAX];
	uint64_t	 dlopen_addr;
	uint64_t	 dlerror_addr;
	unsigned char	 dlopen_code[16];	/* to notice an execve */
	int		 page0;		/* something is mapped at address 0 */
	Dwfl		*dwfl;
	int		 dwfl_stale;	/* an unwind failed: maps changed? */
	uint64_t	 maps_hash;	/* of /proc/PID/maps at dwfl_setup */
	struct urange	*ur;		/* unsafe functions, sorted */
	size_t		 nur, urcap;
	struct reasons	 why;		/* this round's */
	struct reasons	 lastwhy;	/* the last round's that saw any */

	int		 sfd;		/* signalfd for SIGCHLD, or -1 */
	struct vma	*vmas;		/* this round's mappings, sorted */
	size_t		 nvma;

	/* The thread in hand. */
	pid_t		 cur;		/* seized, 0 if none */
	uint64_t	 t_stop;	/* when it was stopped for good */
	struct user_regs_struct regs;	/* its registers at that stop */
	siginfo_t	 defer[MAXDEFER];	/* signals held back */
	int		 ndefer;

	/* The unwinder's one-page window on the target's memory. */
	uint64_t	 cpage;
	int		 cvalid;
	unsigned char	 cbuf[4096];

	/* The thread's extended state while it makes the call. */
	unsigned char	 xstate[XSTATE_MAX];
	size_t		 xlen;
	int		 xkind;		/* 1 NT_X86_XSTATE, 2 FPREGS */
	struct user_fpregs_struct fpregs;
};

enum { T_SAFE, T_UNSAFE, T_GONE, T_FATAL };

enum { S_GONE, S_EVENT, S_GROUP, S_SYSCALL, S_SIGNAL };

/* ---- errors: every message is composed here ---- */

static int
vfail(struct ht_inject *h, int code, int err, const char *advice,
    const char *fmt, va_list ap)
{
	size_t	n;

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

static int __attribute__((format(printf, 4, 5)))
fail(struct ht_inject *h, int code, int err, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vfail(h, code, err, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

static int __attribute__((format(printf, 5, 6)))
fail_advice(struct ht_inject *h, int code, int err, const char *advice,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vfail(h, code, err, advice, fmt, ap);
	va_end(ap);
	return -1;
}

static ssize_t	read_small(const char *, char *, size_t);
static int	status_field(const char *, const char *, char *, size_t);

/* "Not permitted", with advice that fits this system and this target. */
static int
fail_perm(struct ht_inject *h, int err, const char *what)
{
	char	path[64], buf[4096], v[64], advice[256];
	long	scope = -1, tuid = -1;

	if (read_small("/proc/sys/kernel/yama/ptrace_scope", v, sizeof(v)) > 0)
		scope = strtol(v, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)h->pid);
	if (read_small(path, buf, sizeof(buf)) > 0 &&
	    status_field(buf, "Uid", v, sizeof(v)) == 0)
		tuid = strtol(v, NULL, 10);
	if (scope == 3)
		snprintf(advice, sizeof(advice), "kernel.yama.ptrace_scope is "
		    "3, which forbids ptrace until reboot");
	else if (scope == 2 && geteuid() != 0)
		snprintf(advice, sizeof(advice), "kernel.yama.ptrace_scope is "
		    "2: run as root, or set it to 0 or 1");
	else if (geteuid() != 0 && tuid >= 0 && (uid_t)tuid != geteuid())
		snprintf(advice, sizeof(advice), "the process runs as uid %ld: "
		    "run as that user or as root", tuid);
	else if (geteuid() == 0)
		snprintf(advice, sizeof(advice), "root without CAP_SYS_PTRACE "
		    "(a container?): grant CAP_SYS_PTRACE, or run where the "
		    "target is visible with that capability");
	else
		advice[0] = '\0';
	return fail_advice(h, HT_INJ_EPERM, err, advice[0] != '\0' ? advice :
	    NULL, "%s", what);
}

/* ---- small helpers ---- */

static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

static void
sleep_us(unsigned us)
{
	struct timespec	ts = { 0, (long)us * 1000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Read a small /proc file, NUL-terminated.  -1 with errno on failure. */
static ssize_t
read_small(const char *path, char *buf, size_t size)
{
	ssize_t	n, got = 0;
	int	fd, err;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)got < size - 1) {
		n = read(fd, buf + got, size - 1 - (size_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	close(fd);
	return got;
}

/* The value of "key:" in a /proc status file. */
static int
status_field(const char *status, const char *key, char *out, size_t outlen)
{
	const char	*p = status;
	size_t		 klen = strlen(key), n;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			n = strcspn(p, "\n");
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return -1;
}

/* The state letter of /proc/PID/task/TID/stat, 0 if gone. */
static char
task_state(pid_t pid, pid_t tid)
{
	char	path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
	    (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

static int
mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec	l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int
mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec	l = { (void *)(uintptr_t)buf, len };
	struct iovec	r = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ?
	    0 : -1;
}

static const char *
basename_of(const char *path)
{
	const char	*s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/* ---- the process as a whole ---- */

static int
count_live_tasks(pid_t pid)
{
	char		 path[64];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;
	char		 st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		st = task_state(pid, (pid_t)atoi(de->d_name));
		if (st != 0 && st != 'Z' && st != 'X')
			n++;
	}
	closedir(d);
	return n;
}

static int
check_process(struct ht_inject *h)
{
	char	path[64], buf[8192], v[256], comm[64];
	long	tgid, tracer;

	if (h->pid <= 0)
		return fail(h, HT_INJ_ENOPROC, 0, "no process %d", (int)h->pid);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)h->pid);
	if (read_small(path, buf, sizeof(buf)) == -1) {
		if (errno == ENOENT || errno == ESRCH)
			return fail(h, HT_INJ_ENOPROC, 0, "no process %d",
			    (int)h->pid);
		return fail(h, HT_INJ_ESYS, errno, "%s", path);
	}
	if (status_field(buf, "Tgid", v, sizeof(v)) == 0 &&
	    (tgid = strtol(v, NULL, 10)) != h->pid) {
		char	advice[96];

		snprintf(advice, sizeof(advice), "use the process ID, %ld",
		    tgid);
		return fail_advice(h, HT_INJ_ENOPROC, 0, advice,
		    "%d is a thread of process %ld, not a process",
		    (int)h->pid, tgid);
	}
	if (status_field(buf, "Name", comm, sizeof(comm)) != 0)
		strcpy(comm, "?");
	if (status_field(buf, "State", v, sizeof(v)) != 0)
		return fail(h, HT_INJ_ENOPROC, 0, "no process %d", (int)h->pid);
	if ((v[0] == 'Z' || v[0] == 'X') && count_live_tasks(h->pid) == 0)
		return fail(h, HT_INJ_EZOMBIE, 0, "process %d (%s) is a zombie",
		    (int)h->pid, comm);
	if (v[0] == 'T')
		return fail(h, HT_INJ_ESTOPPED, 0, "process %d (%s) is stopped "
		    "(SIGSTOP or job control): attaching now would leave it in "
		    "an unclear state", (int)h->pid, comm);
	if (status_field(buf, "TracerPid", v, sizeof(v)) == 0 &&
	    (tracer = strtol(v, NULL, 10)) != 0) {
		char	tc[64] = "?", tp[64];

		snprintf(tp, sizeof(tp), "/proc/%ld/comm", tracer);
		if (read_small(tp, tc, sizeof(tc)) > 0)
			tc[strcspn(tc, "\n")] = '\0';
		return fail(h, HT_INJ_ETRACED, 0, "process %d (%s) is already "
		    "traced by process %ld (%s)", (int)h->pid, comm, tracer,
		    tc);
	}
	if (status_field(buf, "Seccomp", v, sizeof(v)) == 0 && v[0] == '1')
		return fail_advice(h, HT_INJ_EUNSUPP, 0, "it cannot load a "
		    "library", "process %d (%s) runs in seccomp strict mode",
		    (int)h->pid, comm);
	/* Mode 2: a filter, which may kill the process on a system call the
	 * loader makes (openat, mmap, mprotect...); we cannot read it. */
	if (status_field(buf, "Seccomp", v, sizeof(v)) == 0 && v[0] == '2' &&
	    !h->allow_seccomp)
		return fail(h, HT_INJ_ESECCOMP, 0, "process %d (%s) runs under "
		    "a seccomp filter, which may kill it when it loads the "
		    "agent", (int)h->pid, comm);
	return 0;
}

/* ---- libc: where it is, and dlopen and dlerror in it ---- */

/* The file's NT_GNU_BUILD_ID: its bytes and where they are mapped. */
static int
elf_build_id(Elf *elf, const unsigned char **id, size_t *len,
    GElf_Addr *vaddr)
{
	size_t		 i, nph, off, noff, doff;
	GElf_Phdr	 ph;
	GElf_Nhdr	 nh;
	Elf_Data	*d;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
		    ph.p_filesz, ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d == NULL)
			continue;
		off = 0;
		while (off < d->d_size &&
		    (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0) {
				*id = (const unsigned char *)d->d_buf + doff;
				*len = nh.n_descsz;
				*vaddr = ph.p_vaddr + doff;
				return 0;
			}
		}
	}
	return -1;
}

/* The load bias of the mapping whose file offset 0 is at lo. */
static int
elf_bias(Elf *elf, uint64_t lo, uint64_t *bias)
{
	size_t		 i, nph;
	GElf_Phdr	 ph;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_LOAD)
			continue;
		*bias = lo - (ph.p_vaddr - ph.p_offset);
		return 0;
	}
	return -1;
}

/* A function in .dynsym; the default version if there are several. */
static int
elf_dynsym(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn		*scn = NULL, *dyn = NULL, *ver = NULL;
	Elf_Data	*dd, *vd = NULL;
	GElf_Shdr	 sh, dsh;
	GElf_Sym	 sym;
	GElf_Versym	 vs;
	size_t		 i, n;
	const char	*s;
	int		 found = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			ver = scn;
	}
	if (dyn == NULL || gelf_getshdr(dyn, &dsh) == NULL ||
	    dsh.sh_entsize == 0 || (dd = elf_getdata(dyn, NULL)) == NULL)
		return -1;
	if (ver != NULL)
		vd = elf_getdata(ver, NULL);
	n = dsh.sh_size / dsh.sh_entsize;
	for (i = 1; i < n; i++) {
		if (gelf_getsym(dd, (int)i, &sym) == NULL ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		s = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		*value = sym.st_value;
		found = 1;
		/* A hidden version (bit 15) is a compat alias: keep looking
		 * for the default one. */
		if (vd == NULL || gelf_getversym(vd, (int)i, &vs) == NULL ||
		    (vs & 0x8000) == 0)
			return 0;
	}
	return found ? 0 : -1;
}

/* Open the mapped file: through the target's root (containers), else the
 * map_files link, which is the very file mapped even if it was replaced
 * on disk since.  The file is accepted only if its build-id equals the one
 * in the target's memory. */
static Elf *
open_mapped(struct ht_inject *h, const char *path, uint64_t lo, uint64_t hi,
    int *fdp, uint64_t *biasp)
{
	char			 p[PATH_MAX + 64];
	const unsigned char	*id;
	unsigned char		 mem[64];
	size_t			 idlen;
	GElf_Addr		 vaddr;
	uint64_t		 bias;
	Elf			*elf;
	int			 fd, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (attempt == 0)
			snprintf(p, sizeof(p), "/proc/%d/root%s", (int)h->pid,
			    path);
		else
			snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64
			    "-%" PRIx64, (int)h->pid, lo, hi);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf == NULL || elf_kind(elf) != ELF_K_ELF ||
		    gelf_getclass(elf) != ELFCLASS64 ||
		    elf_bias(elf, lo, &bias) != 0)
			goto next;
		if (elf_build_id(elf, &id, &idlen, &vaddr) == 0) {
			if (idlen > sizeof(mem) ||
			    mem_read(h->pid, bias + vaddr, mem, idlen) != 0 ||
			    memcmp(mem, id, idlen) != 0)
				goto next;
		}
		*fdp = fd;
		*biasp = bias;
		return elf;
next:
		if (elf != NULL)
			elf_end(elf);
		close(fd);
	}
	return NULL;
}

static int
is_libc(const char *base)
{
	return strcmp(base, "libc.so.6") == 0 ||
	    (strncmp(base, "libc-2.", 7) == 0 &&
	    strcmp(base + strlen(base) - 3, ".so") == 0);
}

static int
find_libc(struct ht_inject *h)
{
	char		 path[64], line[PATH_MAX + 256], perm[8];
	char		 file[PATH_MAX], libdl[PATH_MAX] = "";
	char		*p;
	unsigned long	 lo, hi, off, ino;
	unsigned	 maj, min;
	uint64_t	 libc_lo = 0, libc_hi = 0, dl_lo = 0, dl_hi = 0, bias;
	int		 n, musl = 0, fd, pos, err;
	Elf		*elf;
	FILE		*f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)h->pid);
	if ((f = fopen(path, "re")) == NULL) {
		err = errno;
		if (err == ENOENT || err == ESRCH)
			return fail(h, HT_INJ_ENOPROC, 0, "no process %d",
			    (int)h->pid);
		if (err == EACCES || err == EPERM) {
			snprintf(line, sizeof(line), "reading %s", path);
			return fail_perm(h, err, line);
		}
		return fail(h, HT_INJ_ESYS, err, "%s", path);
	}
	h->libc_path[0] = '\0';
	h->page0 = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		pos = 0;
		n = sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perm,
		    &off, &maj, &min, &ino, &pos);
		if (n < 7)
			continue;
		if (lo == 0)
			h->page0 = 1;
		if (pos == 0 || line[pos] != '/')
			continue;
		p = line + pos;
		p[strcspn(p, "\n")] = '\0';
		if ((size_t)snprintf(file, sizeof(file), "%s", p) >=
		    sizeof(file))
			continue;
		if ((p = strstr(file, " (deleted)")) != NULL &&
		    p[10] == '\0')
			*p = '\0';
		if (strncmp(basename_of(file), "ld-musl", 7) == 0)
			musl = 1;
		if (is_libc(basename_of(file)) && off == 0 &&
		    h->libc_path[0] == '\0') {
			snprintf(h->libc_path, sizeof(h->libc_path), "%s",
			    file);
			libc_lo = lo;
			libc_hi = hi;
		}
		if (strcmp(basename_of(file), "libdl.so.2") == 0 && off == 0 &&
		    libdl[0] == '\0') {
			snprintf(libdl, sizeof(libdl), "%s", file);
			dl_lo = lo;
			dl_hi = hi;
		}
	}
	fclose(f);
	if (h->page0)
		return fail(h, HT_INJ_EUNSUPP, 0, "process %d maps memory at "
		    "address 0, which the injector needs unmapped",
		    (int)h->pid);
	if (h->libc_path[0] == '\0') {
		if (musl)
			return fail(h, HT_INJ_ESTATIC, 0, "process %d uses "
			    "musl libc, not glibc", (int)h->pid);
		return fail(h, HT_INJ_ESTATIC, 0, "process %d has no "
		    "libc.so.6 mapped: it is statically linked or does not use "
		    "glibc", (int)h->pid);
	}

	if ((elf = open_mapped(h, h->libc_path, libc_lo, libc_hi, &fd,
	    &bias)) == NULL)
		return fail(h, HT_INJ_ESTATIC, 0, "cannot read the libc of "
		    "process %d (%s) as it is mapped (a 64-bit glibc whose "
		    "build-id matches)", (int)h->pid, h->libc_path);
	h->dlopen_addr = h->dlerror_addr = 0;
	if (elf_dynsym(elf, "dlopen", &h->dlopen_addr) == 0) {
		h->dlopen_addr += bias;
		if (elf_dynsym(elf, "dlerror", &h->dlerror_addr) == 0)
			h->dlerror_addr += bias;
		else
			h->dlerror_addr = 0;
	}
	elf_end(elf);
	close(fd);
	if (h->dlopen_addr != 0)
		return 0;

	/* glibc before 2.34 has dlopen in libdl, if the program uses it. */
	if (libdl[0] != '\0' && (elf = open_mapped(h, libdl, dl_lo, dl_hi,
	    &fd, &bias)) != NULL) {
		if (elf_dynsym(elf, "dlopen", &h->dlopen_addr) == 0) {
			h->dlopen_addr += bias;
			if (elf_dynsym(elf, "dlerror", &h->dlerror_addr) == 0)
				h->dlerror_addr += bias;
			else
				h->dlerror_addr = 0;
		} else
			h->dlopen_addr = 0;
		elf_end(elf);
		close(fd);
		if (h->dlopen_addr != 0)
			return 0;
	}
	return fail(h, HT_INJ_EUNSUPP, 0, "the libc of process %d (%s) does "
	    "not export dlopen (glibc older than 2.34, and no libdl loaded)",
	    (int)h->pid, h->libc_path);
}

static int
check_lib(struct ht_inject *h, const char *lib)
{
	char		path[PATH_MAX + 64];
	struct stat	sb;

	if (lib == NULL || lib[0] == '\0' || strlen(lib) >= PATH_MAX)
		return fail(h, HT_INJ_ENOLIB, 0, "no library path given, or "
		    "too long");
	if (lib[0] != '/')
		return 0;	/* the target's loader searches for it */
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)h->pid, lib);
	if (stat(path, &sb) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return fail(h, HT_INJ_ENOLIB, 0, "%s does not exist in "
			    "the file system of process %d (its mount "
			    "namespace and root)", lib, (int)h->pid);
		return 0;	/* cannot check: let dlopen tell */
	}
	if (!S_ISREG(sb.st_mode))
		return fail(h, HT_INJ_ENOLIB, 0, "%s is not a regular file in "
		    "the file system of process %d", lib, (int)h->pid);
	return 0;
}

/* ---- the unwinder: libdwfl on our own registers and memory reads ---- */

static int
find_elf_cb(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct ht_inject	*h = *userdata;
	char			 path[PATH_MAX + 64];
	struct stat		 sb;
	int			 fd;

	/* Through the target's root, so that a container's files are the
	 * ones read. */
	if (h != NULL && name[0] == '/' && strstr(name, " (deleted)") ==
	    NULL) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)h->pid,
		    name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
			    (*file_name = strdup(path)) != NULL)
				return fd;
			close(fd);
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name,
	    elfp);
}

/* Separate debug information from the local /usr/lib/debug only: never a
 * download (debuginfod) and never a long search. */
static int
find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char	*bits;
	GElf_Addr		 vaddr;
	char			 path[PATH_MAX], *p;
	int			 n, i, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	if ((n = dwfl_module_build_id(mod, &bits, &vaddr)) < 2)
		return -1;
	p = path + snprintf(path, sizeof(path),
	    "/usr/lib/debug/.build-id/%02x/", bits[0]);
	for (i = 1; i < n && p < path + sizeof(path) - 8; i++)
		p += sprintf(p, "%02x", bits[i]);
	strcpy(p, ".debug");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((*debuginfo_file_name = strdup(path)) == NULL) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = find_elf_cb,
	.find_debuginfo = find_debuginfo_cb,
};

static pid_t
next_thread_cb(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ht_inject	*h = arg;

	(void)dwfl;
	if (*thread_argp != NULL || h->cur == 0)
		return 0;
	*thread_argp = h;
	return h->cur;
}

static bool
get_thread_cb(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct ht_inject	*h = arg;

	(void)dwfl;
	if (tid != h->cur)
		return false;
	*thread_argp = h;
	return true;
}

static bool
memory_read_cb(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ht_inject	*h = arg;
	uint64_t		 page = addr & ~(uint64_t)4095;

	(void)dwfl;
	if (addr - page > sizeof(h->cbuf) - sizeof(*result))
		return mem_read(h->pid, addr, result, sizeof(*result)) == 0;
	if (!h->cvalid || h->cpage != page) {
		h->cvalid = 0;
		if (mem_read(h->pid, page, h->cbuf, sizeof(h->cbuf)) != 0)
			return mem_read(h->pid, addr, result,
			    sizeof(*result)) == 0;
		h->cpage = page;
		h->cvalid = 1;
	}
	memcpy(result, h->cbuf + (addr - page), sizeof(*result));
	return true;
}

static bool
set_initial_registers_cb(Dwfl_Thread *thread, void *arg)
{
	struct ht_inject		*h = arg;
	const struct user_regs_struct	*r = &h->regs;
	/* DWARF numbering of x86-64; 16 is the return address column. */
	Dwarf_Word	dw[17] = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi,
			    r->rdi, r->rbp, r->rsp, r->r8, r->r9, r->r10,
			    r->r11, r->r12, r->r13, r->r14, r->r15, r->rip };

	return dwfl_thread_state_registers(thread, 0, 17, dw);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread_cb,
	.get_thread = get_thread_cb,
	.memory_read = memory_read_cb,
	.set_initial_registers = set_initial_registers_cb,
};

/*
 * Frames that may hold a lock dlopen needs, by function name after
 * dropping glibc's "__GI_" alias prefix, leading underscores and a
 * "libc_" prefix (__libc_malloc -> malloc, _int_free -> int_free,
 * _dl_open -> dl_open).  A trailing '*' matches a prefix.
 *   allocator: every arena and tcache lock;
 *   loader: dl_load_lock, dl_load_write_lock, the TLS lock;
 *   fork/spawn: fork takes the allocator's locks, a vforked parent
 *     shares its memory with the child;
 *   threads: the stack cache lock (pthread_create in a constructor);
 *   exit: destructors run under the loader;
 *   gettext/locale: the locks dlerror's messages take.
 * Any frame in the dynamic loader's module counts as well, named or not.
 */
static const char *const unsafe_fns[] = {
	"malloc*", "free", "cfree", "calloc", "realloc", "reallocarray",
	"memalign", "posix_memalign", "aligned_alloc", "valloc", "pvalloc",
	"mallinfo*", "mallopt", "mid_memalign", "int_*", "sysmalloc*",
	"systrim", "mtrim", "heap_trim", "new_heap", "alloc_new_heap",
	"grow_heap", "shrink_heap", "tcache*", "arena_*", "get_free_list",
	"reused_arena", "detach_arena", "remove_from_free_list",
	"ptmalloc_*", "Znw*", "Zna*", "Zdl*", "Zda*",
	"dl_*", "dlopen*", "dlmopen*", "dlclose*", "dlsym*", "dlvsym*",
	"dladdr*", "dlinfo*", "dlerror*", "tls_get_addr", "early_init",
	"fork*", "Fork", "vfork", "posix_spawn*", "spawni*", "nptl_fork*",
	"run_fork_handlers",
	"pthread_create*", "allocate_stack", "nptl_deallocate_stack",
	"nptl_free_stacks", "free_stacks", "queue_stack", "thread_freeres",
	"exit", "run_exit_handlers", "call_tls_dtors", "cxa_finalize",
	"dcgettext", "dcngettext", "dcigettext", "nl_*", "setlocale",
	"newlocale", "textdomain", "bindtextdomain",
	NULL
};

static int
unsafe_name(const char *fn)
{
	const char *const	*u;
	size_t			 n;

	if (strncmp(fn, "__GI_", 5) == 0)
		fn += 5;
	while (*fn == '_')
		fn++;
	if (strncmp(fn, "libc_", 5) == 0)
		fn += 5;
	for (u = unsafe_fns; *u != NULL; u++) {
		n = strlen(*u);
		if ((*u)[n - 1] == '*' ? strncmp(fn, *u, n - 1) == 0 :
		    strcmp(fn, *u) == 0)
			return 1;
	}
	return 0;
}

/*
 * Give each module our handle (find_elf reads files through the target's
 * root) and load now what unwinding will need, so that no file is read
 * while a thread is stopped; and collect the address ranges of the unsafe
 * functions, so that judging a frame is a binary search (libdwfl's own
 * address-to-name lookup scans the whole symbol table: about 0.2 ms per
 * frame in libc with its debug symbols, all of it pause).
 */
static int
prime_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	struct ht_inject	*h = arg;
	struct urange		*nu;
	Dwarf_Addr		 bias;
	GElf_Sym		 sym;
	GElf_Addr		 addr;
	const char		*fn;
	int			 i, n;

	(void)name;
	(void)start;
	*userdata = arg;
	if (dwfl_module_getelf(mod, &bias) == NULL)
		return DWARF_CB_OK;
	(void)dwfl_module_eh_cfi(mod, &bias);
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		fn = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL,
		    NULL);
		if (fn == NULL || sym.st_size == 0 ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
		    !unsafe_name(fn))
			continue;
		if (h->nur == h->urcap) {
			h->urcap = h->urcap ? h->urcap * 2 : 256;
			if ((nu = realloc(h->ur, h->urcap * sizeof(*nu))) ==
			    NULL) {
				h->urcap = h->nur;
				return DWARF_CB_ABORT;
			}
			h->ur = nu;
		}
		h->ur[h->nur].lo = addr;
		h->ur[h->nur].hi = addr + sym.st_size;
		h->ur[h->nur].name = fn;
		h->nur++;
	}
	return DWARF_CB_OK;
}

static int
urange_cmp(const void *a, const void *b)
{
	const struct urange	*x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The unsafe function holding pc, or NULL. */
static const char *
unsafe_at(const struct ht_inject *h, uint64_t pc)
{
	size_t	lo = 0, hi = h->nur, mid;

	/* The last range starting at or below pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->ur[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && pc < h->ur[lo - 1].hi)
		return h->ur[lo - 1].name;
	return NULL;
}

/* A hash of /proc/PID/maps, to tell whether modules came or went. */
static uint64_t
maps_hash(pid_t pid)
{
	char		path[64], buf[4096];
	uint64_t	hash = 0xcbf29ce484222325ULL;
	ssize_t		n, i;
	int		fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			hash = (hash ^ (unsigned char)buf[i]) *
			    0x100000001b3ULL;
	close(fd);
	return hash;
}

static void
dwfl_teardown(struct ht_inject *h)
{
	if (h->dwfl != NULL)
		dwfl_end(h->dwfl);
	h->dwfl = NULL;
	free(h->ur);
	h->ur = NULL;
	h->nur = h->urcap = 0;
}

static int
dwfl_setup(struct ht_inject *h)
{
	int	r;

	dwfl_teardown(h);
	h->dwfl_stale = 0;
	h->maps_hash = maps_hash(h->pid);
	if ((h->dwfl = dwfl_begin(&dwfl_cbs)) == NULL)
		return fail(h, HT_INJ_ESYS, 0, "libdwfl: %s", dwfl_errmsg(-1));
	dwfl_report_begin(h->dwfl);
	r = dwfl_linux_proc_report(h->dwfl, h->pid);
	if (dwfl_report_end(h->dwfl, NULL, NULL) != 0 || r != 0) {
		dwfl_teardown(h);
		if (r == ENOENT || r == ESRCH)
			return fail(h, HT_INJ_ENOPROC, 0, "process %d exited",
			    (int)h->pid);
		return fail(h, HT_INJ_ESYS, r > 0 ? r : 0, "libdwfl: reading "
		    "the modules of process %d", (int)h->pid);
	}
	if (dwfl_getmodules(h->dwfl, prime_module_cb, h, 0) != 0) {
		dwfl_teardown(h);
		return fail(h, HT_INJ_ESYS, ENOMEM, "injector");
	}
	qsort(h->ur, h->nur, sizeof(*h->ur), urange_cmp);
	if (!dwfl_attach_state(h->dwfl, NULL, h->pid, &thread_cbs, h)) {
		fail(h, HT_INJ_ESYS, 0, "libdwfl: %s", dwfl_errmsg(-1));
		dwfl_teardown(h);
		return -1;
	}
	return 0;
}

static int
is_loader(const char *path)
{
	const char	*b = basename_of(path);

	return strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld64.so", 7) ==
	    0 || (strncmp(b, "ld-", 3) == 0 && strstr(b, ".so") != NULL);
}

struct walk {
	struct ht_inject	*h;
	int			 depth;
	int			 bad;
	char			 what[128];
};

static int
frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk	*w = arg;
	Dwfl_Module	*mod;
	Dwarf_Addr	 pc;
	const char	*mname = NULL, *fn = NULL;
	bool		 activation;

	if (!dwfl_frame_pc(frame, &pc, &activation)) {
		w->bad = 2;
		snprintf(w->what, sizeof(w->what), "%s", dwfl_errmsg(-1));
		return DWARF_CB_ABORT;
	}
	/* Below a signal frame: the thread runs a handler, which may have
	 * interrupted anything, even code that holds a lock under a name we
	 * cannot know; and dlopen is not async-signal-safe. */
	if (activation && w->depth > 0) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "a signal handler");
		return DWARF_CB_ABORT;
	}
	/* A return address points after the call: look up the call. */
	if (!activation)
		pc--;
	if ((mod = dwfl_addrmodule(w->h->dwfl, pc)) != NULL)
		mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
		    NULL, NULL);
	if (mname != NULL && is_loader(mname)) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "the dynamic loader (%s)",
		    basename_of(mname));
		return DWARF_CB_ABORT;
	}
	if ((fn = unsafe_at(w->h, pc)) != NULL) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "%s", fn);
		return DWARF_CB_ABORT;
	}
	if (++w->depth > MAXFRAMES) {
		w->bad = 2;
		snprintf(w->what, sizeof(w->what), "more than %d frames",
		    MAXFRAMES);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* Is the thread in hand (stopped, h->regs read) at a safe point?  It must
 * be in a system call, and its whole stack must unwind without a frame
 * that may hold one of dlopen's locks. */
static int
safe_point(struct ht_inject *h)
{
	struct walk	w;
	uint64_t	mask = 0;
	int		r;

	if ((long)h->regs.orig_rax < 0) {
		h->why.running++;
		return 0;
	}
	/* The trap is a forced SIGSEGV (see the top of this file). */
	if (ptrace(PTRACE_GETSIGMASK, h->cur, (void *)sizeof(mask), &mask) ==
	    0 && (mask >> (SIGSEGV - 1) & 1)) {
		h->why.sigsegv++;
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.h = h;
	h->cvalid = 0;
	r = dwfl_getthread_frames(h->dwfl, h->cur, frame_cb, &w);
	if (w.bad == 1) {
		h->why.unsafe++;
		snprintf(h->why.fn, sizeof(h->why.fn), "%s", w.what);
		return 0;
	}
	if (w.bad == 2 || r != 0) {
		h->why.unwind++;
		snprintf(h->why.unwind_msg, sizeof(h->why.unwind_msg), "%s",
		    w.bad ? w.what : dwfl_errmsg(-1));
		/* Perhaps a module loaded since we listed them. */
		h->dwfl_stale = 1;
		return 0;
	}
	return 1;
}

/* ---- ptrace: stops ---- */

/*
 * Wait for a stop of tid until deadline (never an unbounded wait).  The
 * kernel sends the tracer SIGCHLD at each stop of a tracee; we sleep on it
 * through a signalfd, so that we notice a stop at once (on a busy machine,
 * sleeping in steps loses a scheduling round each time), but never trust
 * it alone: the caller may ignore SIGCHLD or another of its threads may
 * take it, so the sleep is short and waitpid is asked anyway.
 * 1: *status set; 0: timed out; -1: no such child any more.
 */
static int
wait_stop(struct ht_inject *h, pid_t tid, uint64_t deadline, int *status)
{
	struct signalfd_siginfo	ssi;
	struct pollfd		pfd = { h->sfd, POLLIN, 0 };
	unsigned		us = 5;
	uint64_t		t;
	pid_t			r;

	for (;;) {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid)
			return 1;
		if (r == -1 && errno != EINTR)
			return -1;
		if ((t = now_ns()) >= deadline)
			return 0;
		if (h->sfd != -1) {
			if (poll(&pfd, 1, deadline - t > 2 * MSEC ? 2 :
			    (int)((deadline - t + MSEC - 1) / MSEC)) > 0)
				while (read(h->sfd, &ssi, sizeof(ssi)) > 0)
					;
			continue;
		}
		sleep_us(us);
		if (us < 200)
			us *= 2;
	}
}

static int
decode(int status, int *sig)
{
	*sig = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return S_GONE;
	*sig = WSTOPSIG(status);
	if ((status >> 16) == PTRACE_EVENT_STOP) {
		/* Under PTRACE_SEIZE a group-stop reports its signal here;
		 * PTRACE_INTERRUPT reports SIGTRAP. */
		if (*sig == SIGSTOP || *sig == SIGTSTP || *sig == SIGTTIN ||
		    *sig == SIGTTOU)
			return S_GROUP;
		return S_EVENT;
	}
	if (*sig == (SIGTRAP | 0x80))
		return S_SYSCALL;
	if ((status >> 16) != 0)
		return S_EVENT;
	return S_SIGNAL;
}

/* Let the thread in hand go from the stop it is in, with sig delivered
 * (a signal whose delivery-stop this is), and account its pause. */
static void
release(struct ht_inject *h, int sig, uint64_t t0)
{
	uint64_t	d;

	(void)ptrace(PTRACE_DETACH, h->cur, NULL, (void *)(long)sig);
	d = now_ns() - t0;
	if (t0 != 0 && d > h->probe_ns)
		h->probe_ns = d;
	h->cur = 0;
}

/* The thread in hand is seized and running: stop it and let it go.  A
 * thread that will not stop (uninterruptible sleep) stays seized until it
 * does; the tracer's exit or ht_inject_free lets it go then. */
static int
stop_and_release(struct ht_inject *h, uint64_t t0)
{
	int	st, sig, k;

	(void)ptrace(PTRACE_INTERRUPT, h->cur, NULL, NULL);
	for (;;) {
		switch (wait_stop(h, h->cur, now_ns() + STOP_GRACE_MS * MSEC,
		    &st)) {
		case 0:
			return -1;
		case -1:
			h->cur = 0;
			return 0;
		}
		k = decode(st, &sig);
		if (k == S_GONE) {
			h->cur = 0;
			return 0;
		}
		release(h, k == S_SIGNAL ? sig : 0, t0);
		return 0;
	}
}

/* The syscall-stop just reported: an exit-stop? */
static int
at_syscall_exit(struct ht_inject *h)
{
	struct __ptrace_syscall_info	si;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, h->cur, (void *)sizeof(si),
	    &si) > 0)
		return si.op == PTRACE_SYSCALL_INFO_EXIT;
	/* Before Linux 5.3: at the entry-stop rax is still -ENOSYS. */
	return (long)h->regs.rax != -ENOSYS;
}

/*
 * Seize tid and bring it to a safe point, or let it go.  A thread stopped
 * in a system call is judged at once.  A thread in user code, if follow,
 * is resumed with PTRACE_SYSCALL and judged at each syscall-exit-stop until
 * slice_end; at the end of the slice it is interrupted, which ends a
 * blocking call with a last exit-stop, judged too.
 */
static int
try_thread(struct ht_inject *h, pid_t tid, int follow, uint64_t slice_end)
{
	uint64_t	t0;
	int		st, sig, k, r, ending = 0, pass = 0;

	if (ptrace(PTRACE_SEIZE, tid, NULL,
	    (void *)(long)PTRACE_O_TRACESYSGOOD) == -1) {
		if (errno == ESRCH)
			return T_GONE;
		if (errno == EPERM) {
			char	what[96];

			snprintf(what, sizeof(what), "ptrace(PTRACE_SEIZE) of "
			    "process %d", (int)h->pid);
			fail_perm(h, errno, what);
			return T_FATAL;
		}
		fail(h, HT_INJ_ESYS, errno, "ptrace(PTRACE_SEIZE) of thread %d",
		    (int)tid);
		return T_FATAL;
	}
	h->cur = tid;
	t0 = now_ns();
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == -1) {
		release(h, 0, 0);
		return T_GONE;
	}

	/* The interrupt-stop.  A signal may be reported first: pass it on,
	 * the interrupt stays pending. */
	for (;;) {
		r = wait_stop(h, tid, now_ns() + STOP_GRACE_MS * MSEC, &st);
		if (r == 0) {
			fail(h, HT_INJ_ESYS, 0, "thread %d of process %d did "
			    "not stop within %d ms of PTRACE_INTERRUPT",
			    (int)tid, (int)h->pid, STOP_GRACE_MS);
			return T_FATAL;	/* h->cur stays: still seized */
		}
		if (r == -1 || (k = decode(st, &sig)) == S_GONE) {
			h->cur = 0;
			return T_GONE;
		}
		if (k == S_GROUP) {
			release(h, 0, t0);
			h->why.stopped++;
			return T_UNSAFE;
		}
		if (k == S_EVENT)
			break;
		(void)ptrace(PTRACE_CONT, tid, NULL,
		    (void *)(long)(k == S_SIGNAL ? sig : 0));
	}
	if (ptrace(PTRACE_GETREGS, tid, NULL, &h->regs) == -1) {
		release(h, 0, t0);
		return T_GONE;
	}
	if ((long)h->regs.orig_rax >= 0) {
		h->t_stop = t0;
		if (safe_point(h))
			return T_SAFE;
		release(h, 0, t0);
		return T_UNSAFE;
	}
	if (!follow) {
		h->why.running++;
		release(h, 0, t0);
		return T_UNSAFE;
	}

	/* Follow it to its next system calls. */
	sig = 0;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig) ==
		    -1) {
			h->cur = 0;
			return T_GONE;
		}
		sig = 0;
		r = wait_stop(h, tid, ending ? now_ns() + STOP_GRACE_MS * MSEC :
		    slice_end, &st);
		if (r == 0 && !ending) {
			(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			ending = 1;
			r = wait_stop(h, tid, now_ns() + STOP_GRACE_MS * MSEC,
			    &st);
		}
		if (r == 0) {
			fail(h, HT_INJ_ESYS, 0, "thread %d of process %d did "
			    "not stop within %d ms of PTRACE_INTERRUPT",
			    (int)tid, (int)h->pid, STOP_GRACE_MS);
			return T_FATAL;
		}
		if (r == -1 || (k = decode(st, &sig)) == S_GONE) {
			h->cur = 0;
			return T_GONE;
		}
		switch (k) {
		case S_GROUP:
			release(h, 0, 0);
			h->why.stopped++;
			return T_UNSAFE;
		case S_SIGNAL:
			/* Delivered as we resume it (or as we let it go). */
			if (ending) {
				release(h, sig, 0);
				h->why.running++;
				return T_UNSAFE;
			}
			continue;
		case S_SYSCALL:
			sig = 0;
			if (ptrace(PTRACE_GETREGS, tid, NULL, &h->regs) == -1) {
				release(h, 0, 0);
				return T_GONE;
			}
			if (!at_syscall_exit(h))
				break;
			pass++;
			h->t_stop = now_ns();
			if (safe_point(h))
				return T_SAFE;
			break;
		default:
			sig = 0;
			break;
		}
		if (ending) {
			/* The interrupt's own stop may still be pending; the
			 * detach drops it. */
			release(h, 0, 0);
			if (pass == 0)
				h->why.running++;
			return T_UNSAFE;
		}
	}
}

/* ---- stacks ---- */

/* Read the target's mappings (sorted: the kernel lists them in order). */
static void
read_vmas(struct ht_inject *h)
{
	char		 path[64], line[PATH_MAX + 256];
	unsigned long	 lo, hi;
	int		 pos;
	FILE		*f;

	h->nvma = 0;
	if (h->vmas == NULL &&
	    (h->vmas = calloc(MAXVMAS, sizeof(*h->vmas))) == NULL)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)h->pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (h->nvma < MAXVMAS && fgets(line, sizeof(line), f) != NULL) {
		pos = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi,
		    &pos) < 2)
			continue;
		h->vmas[h->nvma].lo = lo;
		h->vmas[h->nvma].hi = hi;
		h->vmas[h->nvma].grows = pos > 0 &&
		    strncmp(line + pos, "[stack]", 7) == 0;
		h->nvma++;
	}
	fclose(f);
}

/* Bytes of stack below sp; (uint64_t)-1 for the growing main stack, 0 if
 * sp is in no known mapping. */
static uint64_t
stack_room(const struct ht_inject *h, uint64_t sp)
{
	size_t	lo = 0, hi = h->nvma, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->vmas[mid].hi <= sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->nvma || sp < h->vmas[lo].lo)
		return 0;
	return h->vmas[lo].grows ? (uint64_t)-1 : sp - h->vmas[lo].lo;
}

/* ---- the remote call ---- */

/* Send a held-back signal again to the thread. */
static void
resend(struct ht_inject *h, pid_t tid, siginfo_t *si)
{
	/* The kernel lets us queue a siginfo only with a negative si_code
	 * other than SI_TKILL; the others go again as tgkill() (their
	 * sender becomes us). */
	if (si->si_code < 0 && si->si_code != SI_TKILL &&
	    syscall(SYS_rt_tgsigqueueinfo, h->pid, tid, si->si_signo, si) ==
	    0)
		return;
	(void)syscall(SYS_tgkill, h->pid, tid, si->si_signo);
}

static int
is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	    sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS) &&
	    si->si_code > 0;
}

enum { CALL_OK, CALL_GONE, CALL_HUNG, CALL_ERR };

/*
 * Run fn(a0, a1) on the thread in hand with its stack pointer at sp (where
 * the return address 0 is written), and wait for its return to 0.  Signals
 * that arrive meanwhile are held back (h->defer) to be handed back once
 * the thread's own state is restored: a handler must not run on top of
 * dlopen, nor see our registers.  Faults raised by the call itself are
 * delivered: the call is broken, nothing we could restore would be right.
 */
static int
remote_call(struct ht_inject *h, uint64_t fn, uint64_t a0, uint64_t a1,
    uint64_t sp, uint64_t deadline, uint64_t *ret)
{
	struct user_regs_struct	c = h->regs, now;
	static const uint64_t	zero = 0;
	pid_t			tid = h->cur;
	siginfo_t		si;
	int			st, sig, k, r;

	if (mem_write(h->pid, sp, &zero, sizeof(zero)) != 0) {
		fail(h, HT_INJ_ESYS, errno, "writing the stack of thread %d",
		    (int)tid);
		return CALL_ERR;
	}
	c.rip = fn;
	c.rdi = a0;
	c.rsi = a1;
	c.rax = 0;
	c.rsp = sp;
	c.orig_rax = (unsigned long)-1;
	c.eflags &= ~(0x400UL | 0x100UL);	/* DF and TF clear, per ABI */
	if (ptrace(PTRACE_SETREGS, tid, NULL, &c) == -1 ||
	    ptrace(PTRACE_CONT, tid, NULL, NULL) == -1) {
		fail(h, HT_INJ_ESYS, errno, "ptrace: starting the call in "
		    "thread %d", (int)tid);
		return CALL_ERR;
	}
	for (;;) {
		r = wait_stop(h, tid, deadline, &st);
		if (r == 0)
			return CALL_HUNG;
		if (r == -1 || (k = decode(st, &sig)) == S_GONE) {
			h->cur = 0;
			if (r != -1 && WIFSIGNALED(st))
				fail(h, HT_INJ_ECRASH, 0, "process %d was "
				    "killed by signal %d (%s) during the "
				    "call%s",
				    (int)h->pid, WTERMSIG(st),
				    strsignal(WTERMSIG(st)), WTERMSIG(st) ==
				    SIGSYS ? " (a seccomp filter forbids a "
				    "system call that dlopen needs)" : "");
			else
				fail(h, HT_INJ_ENOPROC, 0, "process %d exited "
				    "during the call", (int)h->pid);
			return CALL_GONE;
		}
		sig = k == S_SIGNAL ? sig : 0;
		if (k == S_SIGNAL) {
			if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == -1)
				memset(&si, 0, sizeof(si));
			if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, NULL,
			    &now) == 0 && now.rip == 0 && now.rsp == sp + 8) {
				*ret = now.rax;
				return CALL_OK;
			}
			if (!is_fault(sig, &si) && h->ndefer < MAXDEFER) {
				si.si_signo = sig;
				h->defer[h->ndefer++] = si;
				sig = 0;
			}
		}
		/* A group-stop (someone stopped the process) is not waited
		 * out: the call finishes, and the thread, detached, joins
		 * the stop again (__ptrace_unlink re-arms it). */
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) == -1) {
			h->cur = 0;
			fail(h, HT_INJ_ENOPROC, 0, "process %d exited during "
			    "the call", (int)h->pid);
			return CALL_GONE;
		}
	}
}

/* Read a NUL-terminated string of the target, page by page. */
static void
read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t	got = 0, n;

	buf[0] = '\0';
	while (got < size - 1) {
		n = 4096 - ((addr + got) & 4095);
		if (n > size - 1 - got)
			n = size - 1 - got;
		if (mem_read(pid, addr + got, buf + got, n) != 0)
			break;
		got += n;
		if (memchr(buf + got - n, '\0', n) != NULL)
			break;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * The thread in hand is at a safe point: save its state, make the call,
 * put everything back, let it go.  T_SAFE when done (h->code tells how the
 * call went), T_UNSAFE if this thread cannot be used after all (no room on
 * its stack) and was let go untouched, T_FATAL/T_GONE otherwise.
 */
static int
inject_here(struct ht_inject *h, const char *lib, uint64_t call_deadline)
{
	struct iovec		 iov = { h->xstate, sizeof(h->xstate) };
	unsigned char		 saved[PATH_MAX + 64], frame[PATH_MAX + 64];
	unsigned char		 code[sizeof(h->dlopen_code)];
	uint64_t		 top, path_at, sp, ret = 0, errp = 0;
	size_t			 plen = strlen(lib) + 1, len;
	pid_t			 tid = h->cur;
	char			 err[ERRSTR_MAX];
	int			 r, i, sig0 = 0, result;

	/* The same program still?  An execve since we read its libc would
	 * have us call into whatever is there now. */
	if (mem_read(h->pid, h->dlopen_addr, code, sizeof(code)) != 0 ||
	    memcmp(code, h->dlopen_code, sizeof(code)) != 0) {
		release(h, 0, h->t_stop);
		fail(h, HT_INJ_ENOPROC, 0, "process %d changed (execve?) "
		    "during the attach", (int)h->pid);
		return T_FATAL;
	}

	/* Extended state first: the call will clobber vector registers. */
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		h->xkind = 1;
		h->xlen = iov.iov_len;
	} else if (ptrace(PTRACE_GETFPREGS, tid, NULL, &h->fpregs) == 0)
		h->xkind = 2;
	else {
		release(h, 0, h->t_stop);
		fail(h, HT_INJ_ESYS, errno, "ptrace: reading the FPU state of "
		    "thread %d", (int)tid);
		return T_FATAL;
	}

	/* Below the red zone: the path, then 16-byte alignment, then our
	 * return address, so that rsp + 8 is 16-aligned at dlopen's entry
	 * as after a call. */
	top = h->regs.rsp - RED_ZONE;
	path_at = (top - plen) & ~(uint64_t)15;
	sp = ((path_at - 16) & ~(uint64_t)15) - 8;
	len = (size_t)(top - sp);
	/* A thread on a small stack (or on a signal stack, which the
	 * unwinder already refused) must not overflow it in dlopen. */
	if (stack_room(h, sp) < STACK_NEED) {
		h->why.stack++;
		release(h, 0, h->t_stop);
		return T_UNSAFE;
	}
	if (mem_read(h->pid, sp, saved, len) != 0) {
		/* Not mapped yet (a main thread near the end of its stack
		 * mapping; the kernel grows it only for the thread itself). */
		h->why.stack++;
		release(h, 0, h->t_stop);
		return T_UNSAFE;
	}
	memset(frame, 0, len);
	memcpy(frame + (path_at - sp), lib, plen);
	if (mem_write(h->pid, sp, frame, len) != 0) {
		(void)mem_write(h->pid, sp, saved, len);
		h->why.stack++;
		release(h, 0, h->t_stop);
		return T_UNSAFE;
	}

	h->ndefer = 0;
	r = remote_call(h, h->dlopen_addr, path_at, RTLD_NOW, sp,
	    call_deadline, &ret);
	if (r == CALL_OK && ret == 0 && h->dlerror_addr != 0)
		r = remote_call(h, h->dlerror_addr, 0, 0, sp, call_deadline,
		    &errp);
	if (r == CALL_GONE)
		return T_GONE;
	if (r == CALL_HUNG) {
		/* Nothing can be undone inside dlopen: let it go on, with
		 * the signals it was sent meanwhile. */
		for (i = 0; i < h->ndefer; i++)
			resend(h, tid, &h->defer[i]);
		(void)stop_and_release(h, h->t_stop);
		fail(h, HT_INJ_EHUNG, 0, "dlopen in thread %d of process %d "
		    "did not return within %d s", (int)tid, (int)h->pid,
		    CALL_GRACE_MS / 1000);
		return T_FATAL;
	}
	err[0] = '\0';
	if (r == CALL_OK && ret == 0 && errp != 0)
		read_string(h->pid, errp, err, sizeof(err));

	/* Put everything back, in the SIGSEGV's signal-delivery-stop. */
	result = 0;
	if (mem_write(h->pid, sp, saved, len) != 0)
		result = fail(h, HT_INJ_ESYS, errno, "restoring the stack of "
		    "thread %d", (int)tid);
	if (h->xkind == 1) {
		iov.iov_base = h->xstate;
		iov.iov_len = h->xlen;
		if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE,
		    &iov) == -1)
			result = fail(h, HT_INJ_ESYS, errno, "ptrace: "
			    "restoring the FPU state of thread %d", (int)tid);
	} else if (ptrace(PTRACE_SETFPREGS, tid, NULL, &h->fpregs) == -1)
		result = fail(h, HT_INJ_ESYS, errno, "ptrace: restoring the "
		    "FPU state of thread %d", (int)tid);
	if (ptrace(PTRACE_SETREGS, tid, NULL, &h->regs) == -1)
		result = fail(h, HT_INJ_ESYS, errno, "ptrace: restoring the "
		    "registers of thread %d", (int)tid);
	/* Held-back signals: the first one is delivered by the detach from
	 * this stop with its own siginfo, the others are queued again. */
	for (i = 1; i < h->ndefer; i++)
		resend(h, tid, &h->defer[i]);
	if (h->ndefer > 0) {
		if (ptrace(PTRACE_SETSIGINFO, tid, NULL, &h->defer[0]) == 0)
			sig0 = h->defer[0].si_signo;
		else
			resend(h, tid, &h->defer[0]);
	}
	(void)ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig0);
	h->cur = 0;
	h->pause_ns = now_ns() - h->t_stop;
	h->tid = tid;
	if (result != 0)
		return T_FATAL;
	if (r != CALL_OK)
		return T_FATAL;	/* message set by remote_call */

	h->handle = ret;
	if (ret == 0) {
		if (err[0] != '\0')
			fail(h, HT_INJ_EDLOPEN, 0, "dlopen(\"%s\") in process "
			    "%d failed: %s", lib, (int)h->pid, err);
		else
			fail(h, HT_INJ_EDLOPEN, 0, "dlopen(\"%s\") in process "
			    "%d failed", lib, (int)h->pid);
	}
	return T_SAFE;
}

/* ---- choosing threads ---- */

/* Calls that the kernel ends with EINTR (not a restart) when the thread
 * is interrupted, even without a handler: tried last. */
static int
eintr_call(long nr)
{
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_rt_sigtimedwait:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
#ifdef SYS_io_uring_enter
	case SYS_io_uring_enter:
#endif
		return 1;
	}
	return 0;
}

struct cand {
	pid_t	tid;
	int	tier;	/* 1 blocked, 2 blocked in an EINTR call, 3 running */
};

static int
sig_in_mask(const char *hex, int sig)
{
	unsigned long long	m = strtoull(hex, NULL, 16);

	return (m >> (sig - 1)) & 1;
}

/* List the threads worth trying, and note why others are not. */
static int
list_threads(struct ht_inject *h, struct cand *c, int max, int *live)
{
	char		 path[96], buf[8192], v[256];
	struct dirent	*de;
	DIR		*d;
	pid_t		 tid;
	long		 nr;
	int		 n = 0;
	char		 st;

	*live = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)h->pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tid = (pid_t)atoi(de->d_name);
		st = task_state(h->pid, tid);
		if (st == 0 || st == 'Z' || st == 'X')
			continue;
		(*live)++;
		if (st == 'T') {
			h->why.stopped++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status",
		    (int)h->pid, (int)tid);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		if (st == 't' || (status_field(buf, "TracerPid", v,
		    sizeof(v)) == 0 && strtol(v, NULL, 10) != 0)) {
			h->why.traced++;
			continue;
		}
		if ((status_field(buf, "SigBlk", v, sizeof(v)) == 0 &&
		    sig_in_mask(v, SIGSEGV)) || (status_field(buf, "SigIgn", v,
		    sizeof(v)) == 0 && sig_in_mask(v, SIGSEGV))) {
			h->why.sigsegv++;
			continue;
		}
		/* A return to 0 through a shadow stack faults differently
		 * (and the shadow stack would not match). */
		if (status_field(buf, "x86_Thread_features", v,
		    sizeof(v)) == 0 && strstr(v, "shstk") != NULL) {
			h->why.shstk++;
			continue;
		}
		if (st == 'D') {
			h->why.dstate++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall",
		    (int)h->pid, (int)tid);
		nr = -1;
		if (read_small(path, v, sizeof(v)) > 0 && v[0] >= '0' &&
		    v[0] <= '9')
			nr = strtol(v, NULL, 10);
		c[n].tid = tid;
		if (st == 'S' && nr >= 0)
			c[n].tier = eintr_call(nr) ? 2 : 1;
		else
			c[n].tier = 3;
		n++;
	}
	closedir(d);
	return n;
}

static void
timeout_message(struct ht_inject *h, int timeout_ms)
{
	const struct reasons	*w = &h->why;
	char			 b[768];
	size_t			 n = 0;

#define WHY(cond, ...) do {						\
	if ((cond) && n < sizeof(b))					\
		n += (size_t)snprintf(b + n, sizeof(b) - n, "%s",	\
		    n > 0 ? ", " : "");					\
	if ((cond) && n < sizeof(b))					\
		n += (size_t)snprintf(b + n, sizeof(b) - n, __VA_ARGS__); \
} while (0)
	b[0] = '\0';
	WHY(w->running, "%d running user code without system calls",
	    w->running);
	WHY(w->unsafe, "%d inside %s or the like", w->unsafe, w->fn);
	WHY(w->unwind, "%d whose stack could not be unwound (%s)", w->unwind,
	    w->unwind_msg);
	WHY(w->eintr, "%d blocked in calls that an interrupt would end with "
	    "EINTR (left alone)", w->eintr);
	WHY(w->dstate, "%d in uninterruptible sleep", w->dstate);
	WHY(w->sigsegv, "%d blocking or ignoring SIGSEGV", w->sigsegv);
	WHY(w->stack, "%d with less than %d KiB of stack left", w->stack,
	    STACK_NEED / 1024);
	WHY(w->shstk, "%d with a shadow stack", w->shstk);
	WHY(w->traced, "%d traced by another tracer", w->traced);
	WHY(w->stopped, "%d stopped", w->stopped);
#undef WHY
	fail(h, HT_INJ_ETIMEDOUT, 0, "no thread of process %d reached a safe "
	    "point in %d.%d s: %s", (int)h->pid, timeout_ms / 1000,
	    timeout_ms % 1000 / 100, n > 0 ? b : "no thread to try");
}

static int
search(struct ht_inject *h, const char *lib, uint64_t start,
    uint64_t deadline, int timeout_ms)
{
	static const struct reasons none;
	struct cand	*c;
	uint64_t	 t, slice_end;
	unsigned	 pause = ROUND_PAUSE_US;
	int		 n, i, tier, live, r, late, ret = -1;

	if ((c = calloc(MAXTHREADS, sizeof(*c))) == NULL)
		return fail(h, HT_INJ_ESYS, ENOMEM, "injector");
	memset(&h->lastwhy, 0, sizeof(h->lastwhy));
	memset(&h->why, 0, sizeof(h->why));
	for (;;) {
		if (memcmp(&h->why, &none, sizeof(none)) != 0)
			h->lastwhy = h->why;
		memset(&h->why, 0, sizeof(h->why));
		n = list_threads(h, c, MAXTHREADS, &live);
		read_vmas(h);
		if (live == 0) {
			if (kill(h->pid, 0) == -1 && errno == ESRCH)
				fail(h, HT_INJ_ENOPROC, 0, "process %d exited",
				    (int)h->pid);
			else
				fail(h, HT_INJ_EZOMBIE, 0, "process %d has no "
				    "live thread", (int)h->pid);
			goto out;
		}
		if (n == 0 && h->why.stopped == live) {
			fail(h, HT_INJ_ESTOPPED, 0, "process %d was stopped "
			    "(SIGSTOP or job control)", (int)h->pid);
			goto out;
		}
		if (n == 0 && h->why.traced == live) {
			fail(h, HT_INJ_ETRACED, 0, "every thread of process %d "
			    "is traced by another tracer", (int)h->pid);
			goto out;
		}
		if (n == 0 && h->why.shstk == live) {
			fail(h, HT_INJ_EUNSUPP, 0, "process %d uses shadow "
			    "stacks (CET), which the injector does not support",
			    (int)h->pid);
			goto out;
		}
		/* Rebuild the unwinder only if modules came or went: a stack
		 * that cannot be unwound for other reasons would otherwise
		 * cost a full rebuild each round. */
		if (h->dwfl_stale) {
			h->dwfl_stale = 0;
			if (maps_hash(h->pid) != h->maps_hash &&
			    dwfl_setup(h) != 0)
				goto out;
		}
		/* Threads in calls that would see EINTR only once the
		 * others had their chance, or if there are no others. */
		for (i = 0, late = 1; i < n; i++)
			if (c[i].tier != 2)
				late = 0;
		t = (deadline - start) / 4;
		if (t > EINTR_DELAY_MS * MSEC)
			t = EINTR_DELAY_MS * MSEC;
		if (now_ns() - start >= t)
			late = 1;
		for (tier = 1; tier <= 3; tier++) {
			for (i = 0; i < n; i++) {
				if (c[i].tier != tier)
					continue;
				if ((t = now_ns()) >= deadline)
					break;
				if (tier == 2 && !late) {
					h->why.eintr++;
					continue;
				}
				slice_end = t + SLICE_MS * MSEC;
				if (slice_end > deadline)
					slice_end = deadline;
				r = try_thread(h, c[i].tid, tier == 3,
				    slice_end);
				if (r == T_SAFE)
					r = inject_here(h, lib, (deadline > t ?
					    deadline : t) +
					    CALL_GRACE_MS * MSEC);
				if (r == T_SAFE) {
					ret = h->handle != 0 ? 0 : -1;
					goto out;
				}
				if (r == T_FATAL)
					goto out;
			}
		}
		if ((t = now_ns()) >= deadline) {
			if (memcmp(&h->why, &none, sizeof(none)) == 0)
				h->why = h->lastwhy;
			timeout_message(h, timeout_ms);
			goto out;
		}
		if (t + pause * 1000ULL > deadline)
			pause = (unsigned)((deadline - t) / 1000) + 1;
		sleep_us(pause);
		if (pause < ROUND_PAUSE_MAX_US)
			pause *= 2;
	}
out:
	free(c);
	return ret;
}

/* ---- the interface ---- */

struct ht_inject *
ht_inject_new(pid_t pid)
{
	struct ht_inject	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->pid = pid;
	h->sfd = -1;
	return h;
}

void
ht_inject_allow_seccomp(struct ht_inject *h, int allow)
{
	h->allow_seccomp = allow;
}

int
ht_inject_load(struct ht_inject *h, const char *lib, int timeout_ms)
{
	uint64_t	start = now_ns(), deadline;
	sigset_t	chld, omask;
	int		r;

	h->code = HT_INJ_OK;
	h->msg[0] = '\0';
	h->tid = 0;
	h->pause_ns = h->probe_ns = h->handle = 0;
	if (timeout_ms <= 0)
		timeout_ms = DEFAULT_TIMEOUT_MS;
	deadline = start + (uint64_t)timeout_ms * MSEC;
	if (h->cur != 0 && stop_and_release(h, 0) != 0)
		return fail(h, HT_INJ_ESYS, 0, "thread %d of process %d, "
		    "seized by an earlier attempt, still does not stop",
		    (int)h->cur, (int)h->pid);
	elf_version(EV_CURRENT);
	if (check_process(h) != 0 || find_libc(h) != 0 ||
	    check_lib(h, lib) != 0)
		return -1;
	if (mem_read(h->pid, h->dlopen_addr, h->dlopen_code,
	    sizeof(h->dlopen_code)) != 0)
		return fail(h, HT_INJ_ESYS, errno, "reading the memory of "
		    "process %d", (int)h->pid);
	if (dwfl_setup(h) != 0)
		return -1;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (pthread_sigmask(SIG_BLOCK, &chld, &omask) == 0) {
		h->sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
		r = search(h, lib, start, deadline, timeout_ms);
		if (h->sfd != -1)
			close(h->sfd);
		h->sfd = -1;
		pthread_sigmask(SIG_SETMASK, &omask, NULL);
	} else
		r = search(h, lib, start, deadline, timeout_ms);
	dwfl_teardown(h);
	free(h->vmas);
	h->vmas = NULL;
	h->nvma = 0;
	if (r == 0) {
		h->code = HT_INJ_OK;
		h->msg[0] = '\0';
	}
	return r;
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
		(void)stop_and_release(h, 0);
	dwfl_teardown(h);
	free(h->vmas);
	free(h);
}
