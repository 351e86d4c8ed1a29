/* Fixture programs of the C tests (see target.h). */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "target.h"

struct target {
	pid_t pid;
	int in;		/* its standard input, -1 once closed */
	int out;	/* its standard output */
	char buf[8192]; /* output read but not returned yet */
	size_t len;
	char name[64]; /* basename of its program, for messages */
	char ready[256];
	char errpath[PATH_MAX];
};

/* The targets running, for the cleanup: it may run in a signal handler, so
 * a fixed table it only reads and clears. */
#define MAX_LIVE 32
static struct target *volatile live[MAX_LIVE];
static int registered;
static char builddir[PATH_MAX];

static void
kill_all(void)
{
	struct target *t;
	int i;

	for (i = 0; i < MAX_LIVE; i++) {
		if ((t = live[i]) == NULL)
			continue;
		live[i] = NULL;
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		unlink(t->errpath);
	}
}

static void
track(struct target *t)
{
	int i;

	if (!registered) {
		test_cleanup_register(kill_all);
		registered = 1;
	}
	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == NULL) {
			live[i] = t;
			return;
		}
	bail("more than %d targets at once", MAX_LIVE);
}

static void
untrack(struct target *t)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == t)
			live[i] = NULL;
}

const char *
test_builddir(void)
{
	const char *e = getenv("HT_BUILDDIR");
	ssize_t n;
	char *s;
	int i;

	if (builddir[0] != '\0')
		return builddir;
	if (e != NULL && *e != '\0') {
		snprintf(builddir, sizeof(builddir), "%s", e);
		return builddir;
	}
	/* t/NAME-t: the build directory is the one above. */
	n = readlink("/proc/self/exe", builddir, sizeof(builddir) - 1);
	if (n <= 0)
		bail("readlink /proc/self/exe: %s", strerror(errno));
	builddir[n] = '\0';
	for (i = 0; i < 2; i++)
		if ((s = strrchr(builddir, '/')) != NULL)
			*s = '\0';
	return builddir;
}

char *
test_build_path(const char *rel)
{
	const char *dir = test_builddir();
	size_t n = strlen(dir) + 1 + strlen(rel) + 1;
	char *p;

	if ((p = malloc(n)) == NULL)
		bail("out of memory");
	snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

char *
test_build_need(const char *rel)
{
	char *p = test_build_path(rel);

	if (access(p, X_OK) != 0)
		skip_all("%s not built", p);
	return p;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Show what it wrote on its standard error; 1 if nothing. */
static int
show_stderr(const struct target *t)
{
	char line[512];
	FILE *f;
	size_t n;
	int quiet = 1;

	if ((f = fopen(t->errpath, "r")) == NULL)
		return 1;
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		diag("%s stderr: %s", t->name, line);
		quiet = 0;
	}
	fclose(f);
	return quiet;
}

static void
release(struct target *t)
{
	untrack(t);
	if (t->in >= 0)
		close(t->in);
	if (t->out >= 0)
		close(t->out);
	unlink(t->errpath);
	free(t);
}

/* In the child: the environment env asks for. */
static void
apply_env(const char *const *env)
{
	char name[256], pid[32];
	const char *eq, *value;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (; env != NULL && *env != NULL; env++) {
		if ((eq = strchr(*env, '=')) == NULL) {
			unsetenv(*env);
			continue;
		}
		if ((size_t)(eq - *env) >= sizeof(name))
			_exit(127);
		memcpy(name, *env, (size_t)(eq - *env));
		name[eq - *env] = '\0';
		value = strcmp(eq + 1, TARGET_OWN_PID) == 0 ? pid : eq + 1;
		if (setenv(name, value, 1) != 0)
			_exit(127);
	}
}

struct target *
target_start(const char *path, const char *const *args, const char *const *env)
{
	struct target *t;
	const char **argv;
	const char *base, *tmp;
	size_t nargs = 0, i;
	pid_t parent = getpid();
	int in[2], out[2], errfd;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		bail("out of memory");
	base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	snprintf(t->name, sizeof(t->name), "%s", base);
	tmp = getenv("TMPDIR") != NULL && *getenv("TMPDIR") != '\0' ?
	    getenv("TMPDIR") :
	    "/tmp";
	snprintf(t->errpath, sizeof(t->errpath), "%s/%s.err.XXXXXX", tmp,
	    t->name);
	if ((errfd = mkostemp(t->errpath, O_CLOEXEC)) < 0)
		bail("mkostemp %s: %s", t->errpath, strerror(errno));
	/* Close-on-exec everywhere: a target must not hold the pipes of
	 * another (its end of file would never come). */
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		bail("pipe: %s", strerror(errno));
	while (args != NULL && args[nargs] != NULL)
		nargs++;
	if ((argv = calloc(nargs + 2, sizeof(*argv))) == NULL)
		bail("out of memory");
	argv[0] = path;
	for (i = 0; i < nargs; i++)
		argv[i + 1] = args[i];

	fflush(NULL);
	if ((t->pid = fork()) < 0)
		bail("fork: %s", strerror(errno));
	if (t->pid == 0) {
		/* Dies with the test, whatever kills it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent)
			_exit(127);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
		    dup2(errfd, 2) < 0)
			_exit(127);
		/* Tests ignore SIGPIPE; a fixture runs as it would alone. */
		signal(SIGPIPE, SIG_DFL);
		apply_env(env);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	free(argv);
	close(in[0]);
	close(out[1]);
	close(errfd);
	t->in = in[1];
	t->out = out[0];
	track(t);

	if (target_line(t, t->ready, sizeof(t->ready)) == NULL ||
	    strncmp(t->ready, "ready", 5) != 0) {
		diag("%s did not start: %s", path,
		    t->ready[0] != '\0' ? t->ready : "no ready line");
		target_kill(t);
		return NULL;
	}
	return t;
}

pid_t
target_pid(const struct target *t)
{
	return t->pid;
}

const char *
target_ready(const struct target *t)
{
	return t->ready;
}

int
target_send(struct target *t, const char *fmt, ...)
{
	char buf[1024], *p;
	va_list ap;
	ssize_t w;
	size_t n;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(buf) || t->in < 0)
		return -1;
	for (p = buf, n = (size_t)len; n > 0; p += w, n -= (size_t)w)
		if ((w = write(t->in, p, n)) <= 0) {
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			return -1;
		}
	return 0;
}

char *
target_line(struct target *t, char *line, size_t size)
{
	uint64_t end = now_ms() + TARGET_LINE_MS, now;
	struct pollfd pfd = { t->out, POLLIN, 0 };
	char *nl;
	ssize_t n;
	size_t k;

	for (;;) {
		if ((nl = memchr(t->buf, '\n', t->len)) != NULL) {
			k = (size_t)(nl - t->buf);
			if (k >= size)
				k = size - 1;
			memcpy(line, t->buf, k);
			line[k] = '\0';
			k = (size_t)(nl - t->buf) + 1;
			memmove(t->buf, t->buf + k, t->len - k);
			t->len -= k;
			return line;
		}
		if ((now = now_ms()) >= end) {
			diag("%s: no line in %d ms", t->name, TARGET_LINE_MS);
			return NULL;
		}
		if (t->len == sizeof(t->buf)) {
			diag("%s: a line longer than %zu bytes", t->name,
			    sizeof(t->buf));
			return NULL;
		}
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		n = read(t->out, t->buf + t->len, sizeof(t->buf) - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		t->len += (size_t)n;
	}
}

int
target_wait(struct target *t, int *quiet)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t end = now_ms() + TARGET_EXIT_MS;
	pid_t r;
	int status = 0, q;

	close(t->in);
	t->in = -1;
	for (;;) {
		r = waitpid(t->pid, &status, WNOHANG);
		if (r == t->pid)
			break;
		if (r < 0 && errno != EINTR)
			bail("waitpid %d: %s", (int)t->pid, strerror(errno));
		if (now_ms() >= end) {
			diag("%s did not exit in %d ms: killed", t->name,
			    TARGET_EXIT_MS);
			kill(t->pid, SIGKILL);
			if (waitpid(t->pid, &status, 0) != t->pid)
				bail("waitpid %d: %s", (int)t->pid,
				    strerror(errno));
			break;
		}
		nanosleep(&ts, NULL);
	}
	untrack(t);
	q = show_stderr(t);
	if (quiet != NULL)
		*quiet = q;
	release(t);
	return status;
}

void
target_kill(struct target *t)
{
	if (t == NULL)
		return;
	untrack(t);
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	show_stderr(t);
	release(t);
}
