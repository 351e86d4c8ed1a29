/* The TAP producer behind t/tap/basic.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"

static int planned = -1;
static int ran;
static int failed;
static int lazy;

static void (*cleanups[8])(void);
static volatile sig_atomic_t ncleanups;
static unsigned timeout_s;

/* Each cleanup once, even when one of them ends the test. */
static void
run_cleanups(void)
{
	int i, n = (int)ncleanups;
	void (*fn)(void);

	ncleanups = 0;
	for (i = 0; i < n; i++) {
		fn = cleanups[i];
		cleanups[i] = NULL;
		if (fn != NULL)
			fn();
	}
}

void
test_cleanup_register(void (*fn)(void))
{
	if (ncleanups == sizeof(cleanups) / sizeof(cleanups[0]))
		bail("test_cleanup_register: too many cleanups");
	/* At exit even without a plan (skip_all, a plain return). */
	if (ncleanups == 0)
		atexit(run_cleanups);
	cleanups[ncleanups] = fn;
	ncleanups = ncleanups + 1;
}

static void
on_alarm(int sig)
{
	static const char head[] = "\nBail out! timed out after ";
	char msg[sizeof(head) + 16], num[12];
	size_t n = sizeof(head) - 1, k = 0;
	unsigned v = timeout_s;
	ssize_t w;

	(void)sig;
	run_cleanups();
	/* No stdio in a signal handler: the message by hand. */
	memcpy(msg, head, n);
	do
		num[k++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (k > 0)
		msg[n++] = num[--k];
	memcpy(msg + n, " s\n", 3);
	n += 3;
	w = write(STDOUT_FILENO, msg, n);
	(void)w;
	_exit(255);
}

void
test_timeout(unsigned seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		bail("sigaction SIGALRM");
	timeout_s = seconds;
	alarm(seconds);
}

void
test_tmpdir(const char *name, char *out)
{
	const char *dir = getenv("TMPDIR");
	char tmp[PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX",
		dir != NULL && dir[0] != '\0' ? dir : "/tmp",
		name) >= sizeof(tmp) ||
	    mkdtemp(tmp) == NULL || realpath(tmp, out) == NULL)
		bail("mkdtemp %s: %s", tmp, strerror(errno));
}

static void
finish(void)
{
	run_cleanups();
	if (planned < 0)
		return;
	if (lazy)
		printf("1..%d\n", ran);
	else if (ran != planned) {
		printf("# planned %d tests but ran %d\n", planned, ran);
		fflush(stdout);
		_exit(255);
	}
	fflush(stdout);
	if (failed)
		_exit(failed > 254 ? 254 : failed);
}

void
plan(int n)
{
	planned = n;
	if (n == 0)
		lazy = 1;
	else
		printf("1..%d\n", n);
	fflush(stdout);
	atexit(finish);
}

static int
vreport(int cond, const char *fmt, va_list ap)
{
	ran++;
	if (!cond)
		failed++;
	printf("%sok %d - ", cond ? "" : "not ", ran);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

int
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, fmt, ap);
	va_end(ap);
	return cond;
}

int
is_int(long long want, long long got, const char *fmt, ...)
{
	va_list ap;
	int cond = want == got;

	va_start(ap, fmt);
	vreport(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("wanted: %lld\n     got: %lld", want, got);
	return cond;
}

int
is_uint(unsigned long long want, unsigned long long got, const char *fmt, ...)
{
	va_list ap;
	int cond = want == got;

	va_start(ap, fmt);
	vreport(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("wanted: %llu\n     got: %llu", want, got);
	return cond;
}

int
is_string(const char *want, const char *got, const char *fmt, ...)
{
	va_list ap;
	int cond;

	if (want == NULL || got == NULL)
		cond = want == got;
	else
		cond = strcmp(want, got) == 0;
	va_start(ap, fmt);
	vreport(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("wanted: %s\n     got: %s", want ? want : "(null)",
		    got ? got : "(null)");
	return cond;
}

void
diag(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
skip(const char *fmt, ...)
{
	va_list ap;

	ran++;
	printf("ok %d # skip ", ran);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("1..0 # skip ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	planned = -1;
	exit(0);
}

void
bail(const char *fmt, ...)
{
	va_list ap;

	run_cleanups();
	fflush(stdout);
	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(255);
}
