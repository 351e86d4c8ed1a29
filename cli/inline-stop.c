/*
 * Every thread of a process stopped, for the time it takes to write a few
 * bytes: each is seized (PTRACE_SEIZE, which changes nothing the thread
 * sees) and interrupted (PTRACE_INTERRUPT), the task list read again until
 * it holds no thread not yet stopped (a thread created meanwhile by one
 * still running), so that no thread of the process runs while the caller
 * looks at instruction pointers and patches code.  A thread that reports a
 * signal before the interrupt's stop keeps it and gets it back when let go.
 * A thread that does not stop within STOP_MS (uninterruptible sleep in the
 * kernel: it runs no user code meanwhile either, but its registers cannot
 * be read) fails the whole stop.
 */
#include "config.h"

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inline-int.h"
#include "monotime.h"

#define STOP_MS	  2000
#define MAX_ROUND 64

static int
known(const struct inl_world *w, pid_t tid)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->tid[i] == tid)
			return 1;
	return 0;
}

static int
grow(struct inl_world *w)
{
	size_t cap = w->cap ? w->cap * 2 : 64;
	pid_t *t;
	int *s;
	struct user_regs_struct *r;

	if ((t = realloc(w->tid, cap * sizeof(*t))) == NULL)
		return -1;
	w->tid = t;
	if ((s = realloc(w->sig, cap * sizeof(*s))) == NULL)
		return -1;
	w->sig = s;
	if ((r = realloc(w->regs, cap * sizeof(*r))) == NULL)
		return -1;
	w->regs = r;
	w->cap = cap;
	return 0;
}

/* Wait for tid's stop: 0 stopped (sig: a signal to give back, or 0), 1
 * gone, -1 timed out. */
static int
wait_stop(pid_t tid, uint64_t deadline, int *sig)
{
	int st;
	pid_t r;

	*sig = 0;
	for (;;) {
		r = waitpid(tid, &st, __WALL | WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return 1; /* ECHILD: not ours any more, gone */
		if (r == tid) {
			if (WIFEXITED(st) || WIFSIGNALED(st))
				return 1;
			if (WIFSTOPPED(st)) {
				if ((st >> 16) == PTRACE_EVENT_STOP)
					return 0;
				/* A signal-delivery stop came first: it is
				 * a stop too; the signal is given back. */
				*sig = WSTOPSIG(st);
				return 0;
			}
		}
		if (ht_mono_ms() >= deadline)
			return -1;
		usleep(200);
	}
}

/* Seize and interrupt the threads of pid not yet in w: how many new, or
 * -1 with err. */
static int
seize_new(struct inl_world *w, size_t *first, char *err, size_t errlen)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	pid_t tid;
	int added = 0;

	*first = w->n;
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)w->pid);
	if ((dir = opendir(path)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		tid = (pid_t)atol(d->d_name);
		if (known(w, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
			if (errno == ESRCH)
				continue; /* exited */
			snprintf(err, errlen, "ptrace(PTRACE_SEIZE, %ld): %s",
			    (long)tid, strerror(errno));
			closedir(dir);
			return -1;
		}
		if (w->n == w->cap && grow(w) != 0) {
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			snprintf(err, errlen, "out of memory");
			closedir(dir);
			return -1;
		}
		w->tid[w->n] = tid;
		w->sig[w->n] = 0;
		w->n++;
		added++;
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	}
	closedir(dir);
	return added;
}

int
ht_inl_stop_all(struct inl_world *w, pid_t pid, char *err, size_t errlen)
{
	uint64_t deadline = ht_mono_ms() + STOP_MS;
	size_t first, i, j;
	int round, added, r;

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	for (round = 0; round < MAX_ROUND; round++) {
		if ((added = seize_new(w, &first, err, errlen)) < 0)
			goto fail;
		if (added == 0)
			break;
		for (i = first; i < w->n;) {
			r = wait_stop(w->tid[i], deadline, &w->sig[i]);
			if (r < 0) {
				snprintf(err, errlen,
				    "thread %ld did not stop within %d ms",
				    (long)w->tid[i], STOP_MS);
				goto fail;
			}
			if (r == 1) { /* gone */
				for (j = i; j + 1 < w->n; j++) {
					w->tid[j] = w->tid[j + 1];
					w->sig[j] = w->sig[j + 1];
				}
				w->n--;
				continue;
			}
			i++;
		}
	}
	if (round == MAX_ROUND) {
		snprintf(err, errlen, "threads kept appearing");
		goto fail;
	}
	for (i = 0; i < w->n; i++)
		if (ptrace(PTRACE_GETREGS, w->tid[i], NULL, &w->regs[i]) != 0) {
			snprintf(err, errlen, "ptrace(PTRACE_GETREGS, %ld): %s",
			    (long)w->tid[i], strerror(errno));
			goto fail;
		}
	return 0;
fail:
	ht_inl_resume_all(w);
	return -1;
}

void
ht_inl_resume_all(struct inl_world *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		ptrace(PTRACE_DETACH, w->tid[i], NULL,
		    (void *)(uintptr_t)w->sig[i]);
	free(w->tid);
	free(w->sig);
	free(w->regs);
	memset(w, 0, sizeof(*w));
}
