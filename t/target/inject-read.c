/*
 * Fixture of t/inject-t: a reader blocked in read(2) on its standard input,
 * the oracle for the restart of an interrupted system call and for the
 * vector registers.
 *
 * Prints "ready PID", then for each chunk read "got N TEXT xmm=ok" (or
 * "xmm=bad"), "eintr usr1=K" for a read that failed with EINTR (K: the
 * SIGUSR1 handler's runs so far; it is installed without SA_RESTART), "end
 * N" at the end of its input.  The read is issued in inline assembly with a
 * pattern in ymm8 (xmm8 without AVX) loaded just before the syscall
 * instruction and compared just after it: the kernel keeps vector
 * registers across a system call, so a difference can only come from an
 * injector that borrowed this thread and did not restore them (the probe
 * library clobbers xmm8).  If the injector broke the restart of the read,
 * N shows the kernel's -ERESTARTSYS (-512) instead of the bytes written.
 *
 * Modes (the first argument):
 *   poll     wait in poll(2) with a timeout before each read; the kernel
 *            restarts it through restart_syscall (-ERESTART_RESTARTBLOCK);
 *            "poll R" if it returns anything but 1;
 *   dliter   first block reading a line inside a dl_iterate_phdr callback,
 *            that is holding the loader's lock (no safe point), between
 *            "in dl_iterate_phdr" and "left dl_iterate_phdr";
 *   handler  likewise inside a SIGUSR2 handler ("in handler", "left
 *            handler").
 *
 * Built three ways: non-PIE with lazy binding, PIE with full RELRO, static.
 */
#include <sys/prctl.h>

#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const uint64_t	pattern[4] = { 0x0123456789abcdefULL,
			    0xfedcba9876543210ULL, 0x1122334455667788ULL,
			    0x99aabbccddeeff00ULL };

static volatile sig_atomic_t	usr1;

static void
on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static int
blocked_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
	char	c;

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
	static const char	in[] = "in handler\n", out[] = "left handler\n";
	char			c;

	(void)sig;
	if (write(1, in, sizeof(in) - 1) < 0)
		return;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	if (write(1, out, sizeof(out) - 1) < 0)
		return;
}

static long
raw_read(void *buf, size_t len, int avx, int *vec_ok)
{
	uint64_t	out[4] = { 0, 0, 0, 0 };
	long		ret;

	if (avx)
		__asm__ volatile("vmovdqu (%[in]), %%ymm8\n\t"
		    "syscall\n\t"
		    "vmovdqu %%ymm8, (%[out])\n\t"
		    "vzeroupper"
		    : "=a"(ret)
		    : "a"(0L), "D"(0L), "S"(buf), "d"(len),
		      [in] "r"(pattern), [out] "r"(out)
		    : "rcx", "r11", "memory", "xmm8");
	else
		__asm__ volatile("movdqu (%[in]), %%xmm8\n\t"
		    "syscall\n\t"
		    "movdqu %%xmm8, (%[out])"
		    : "=a"(ret)
		    : "a"(0L), "D"(0L), "S"(buf), "d"(len),
		      [in] "r"(pattern), [out] "r"(out)
		    : "rcx", "r11", "memory", "xmm8");
	*vec_ok = memcmp(out, pattern, avx ? 32 : 16) == 0;
	return ret;
}

int
main(int argc, char **argv)
{
	struct sigaction	sa;
	struct pollfd		pfd = { 0, POLLIN, 0 };
	char			buf[256];
	long			n;
	int			avx, vec_ok, r, use_poll;

	__builtin_cpu_init();
	avx = __builtin_cpu_supports("avx");
	use_poll = argc > 1 && strcmp(argv[1], "poll") == 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
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
		if (use_poll && (r = poll(&pfd, 1, 600000)) != 1) {
			printf("poll %d\n", r);
			continue;
		}
		n = raw_read(buf, sizeof(buf) - 1, avx, &vec_ok);
		if (n == -4) {
			printf("eintr usr1=%d\n", (int)usr1);
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
