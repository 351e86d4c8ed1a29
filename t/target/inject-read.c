/*
 * Fixture of t/inject-t: a reader blocked in read(2) on its standard input,
 * the oracle for the restart of an interrupted system call and for the
 * vector registers.
 *
 * Prints "ready PID", then for each chunk read "got N TEXT xmm=ok" (or
 * "xmm=bad"), "eintr usr1=K xmm=ok" for a read that failed with EINTR (K:
 * the SIGUSR1 handler's runs so far; it is installed without SA_RESTART),
 * "end N" at the end of its input.  The read (and the poll) is issued in
 * inline assembly with a pattern in ymm8 (xmm8 without AVX) loaded just
 * before the syscall instruction and compared just after it: the kernel
 * keeps vector registers across a system call, so a difference can only
 * come from an injector that borrowed this thread and did not restore them
 * (the probe library clobbers xmm8).  If the injector broke the restart of
 * the read, N shows the kernel's -ERESTARTSYS (-512) instead of the bytes
 * written.
 * The reader also runs with SIGWINCH blocked and an alternate signal stack,
 * and prints "state changed" if either differs after a read: the injector
 * restores both (the mask explicitly, the stack by leaving it alone).
 *
 * Modes (the first argument):
 *   poll     wait in poll(2) with a timeout before each read; the kernel
 *            restarts it through restart_syscall (-ERESTART_RESTARTBLOCK);
 *            "poll R xmm=ok" if it returns anything but 1 (-4: EINTR),
 *            "poll 1 xmm=bad" if it broke the pattern;
 *   dliter   first block reading a line inside a dl_iterate_phdr callback,
 *            that is holding the loader's lock (no safe point), between
 *            "in dl_iterate_phdr" and "left dl_iterate_phdr";
 *   handler  likewise inside a SIGUSR2 handler ("in handler", "left
 *            handler").
 *
 * Built three ways: non-PIE with lazy binding, PIE with full RELRO, static.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const uint64_t pattern[4] = { 0x0123456789abcdefULL,
	0xfedcba9876543210ULL, 0x1122334455667788ULL, 0x99aabbccddeeff00ULL };

static volatile sig_atomic_t usr1;
static char altstack[65536];

static void
on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static int
blocked_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
	char c;

	(void)info;
	(void)size;
	(void)arg;
	printf("in dl_iterate_phdr\n");
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	printf("left dl_iterate_phdr\n");
	return 1;
}

static void
blocked_handler(int sig)
{
	static const char in[] = "in handler\n", out[] = "left handler\n";
	char c;

	(void)sig;
	if (write(1, in, sizeof(in) - 1) < 0)
		return;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	if (write(1, out, sizeof(out) - 1) < 0)
		return;
}

/* The signal mask and alternate stack as set up in main, still? */
static int
state_ok(void)
{
	sigset_t m;
	stack_t ss;

	if (sigprocmask(SIG_BLOCK, NULL, &m) != 0 ||
	    sigaltstack(NULL, &ss) != 0)
		return 0;
	return sigismember(&m, SIGWINCH) && !sigismember(&m, SIGUSR1) &&
	    ss.ss_sp == altstack && ss.ss_size == sizeof(altstack) &&
	    ss.ss_flags == 0;
}

/* System call nr(a0, a1, a2) with the pattern in ymm8 across it. */
static long
raw_syscall(long nr, long a0, long a1, long a2, int avx, int *vec_ok)
{
	uint64_t out[4] = { 0, 0, 0, 0 };
	long ret;

	if (avx)
		__asm__ volatile("vmovdqu (%[in]), %%ymm8\n\t"
				 "syscall\n\t"
				 "vmovdqu %%ymm8, (%[out])\n\t"
				 "vzeroupper"
				 : "=a"(ret)
				 : "a"(nr), "D"(a0), "S"(a1),
				 "d"(a2), [in] "r"(pattern), [out] "r"(out)
				 : "rcx", "r11", "memory", "xmm8");
	else
		__asm__ volatile("movdqu (%[in]), %%xmm8\n\t"
				 "syscall\n\t"
				 "movdqu %%xmm8, (%[out])"
				 : "=a"(ret)
				 : "a"(nr), "D"(a0), "S"(a1),
				 "d"(a2), [in] "r"(pattern), [out] "r"(out)
				 : "rcx", "r11", "memory", "xmm8");
	*vec_ok = memcmp(out, pattern, avx ? 32 : 16) == 0;
	return ret;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	struct pollfd pfd = { 0, POLLIN, 0 };
	sigset_t mask;
	stack_t ss;
	char buf[256];
	long n, r;
	int avx, vec_ok, use_poll;

	__builtin_cpu_init();
	avx = __builtin_cpu_supports("avx");
	use_poll = argc > 1 && strcmp(argv[1], "poll") == 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	ss.ss_sp = altstack;
	ss.ss_flags = 0;
	ss.ss_size = sizeof(altstack);
	sigaltstack(&ss, NULL);
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	if (argc > 1 && strcmp(argv[1], "dliter") == 0)
		dl_iterate_phdr(blocked_callback, NULL);
	if (argc > 1 && strcmp(argv[1], "handler") == 0) {
		sa.sa_handler = blocked_handler;
		sigaction(SIGUSR2, &sa, NULL);
		raise(SIGUSR2);
	}
	for (;;) {
		if (use_poll) {
			r = raw_syscall(SYS_poll, (long)&pfd, 1, 600000, avx,
			    &vec_ok);
			if (!state_ok())
				printf("state changed\n");
			if (r != 1 || !vec_ok) {
				printf("poll %ld xmm=%s\n", r,
				    vec_ok ? "ok" : "bad");
				continue;
			}
		}
		n = raw_syscall(SYS_read, 0, (long)buf, sizeof(buf) - 1, avx,
		    &vec_ok);
		if (!state_ok())
			printf("state changed\n");
		if (n == -4) {
			printf("eintr usr1=%d xmm=%s\n", (int)usr1,
			    vec_ok ? "ok" : "bad");
			continue;
		}
		if (n <= 0) {
			printf("end %ld\n", n);
			return 0;
		}
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		printf("got %ld %s xmm=%s\n", n, buf, vec_ok ? "ok" : "bad");
	}
}
