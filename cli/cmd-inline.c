/*
 * What attach, start --backend, detach and status say of the inline
 * backend (inline.h): the functions it hooked, and those it did not, each
 * with its reason.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "inline.h"

#define RUN_WAIT_MS 30000

/* Each line of notes ("name (module): reason"), after lead and what. */
static void
print_notes(FILE *fp, const char *lead, const char *what, const char *notes)
{
	const char *p = notes, *e;

	while (*p != '\0') {
		if ((e = strchr(p, '\n')) == NULL)
			e = p + strlen(p);
		fprintf(fp, "%s%s%.*s\n", lead, what, (int)(e - p), p);
		p = *e == '\n' ? e + 1 : e;
	}
}

/* Returns the number of functions hooked, or -1 after a warning. */
static int
apply(FILE *fp, const char *lead, pid_t pid, struct ht_ctl *c, int bell,
    const char *what)
{
	static struct ht_inline_result res;
	static char hooked[8192], notes[HT_INLINE_NOTES_MAX];
	char err[512];

	if (ht_inline_apply(pid, c, bell, &res, err, sizeof(err)) != 0) {
		ht_warn("%s %ld: inline hooks: %s; the GOT hooks alone are in",
		    what, (long)pid, err);
		return -1;
	}
	if (res.hooked > 0 &&
	    ht_inline_describe(pid, hooked, sizeof(hooked), notes,
		sizeof(notes)) > 0)
		fprintf(fp, "%sinline: hooked %s\n", lead, hooked);
	print_notes(fp, lead, "inline: not hooked: ", res.notes);
	return res.hooked > 0 ? (int)res.hooked : 0;
}

int
ht_cmd_inline_apply(FILE *fp, const char *lead, pid_t pid, struct ht_ctl *c,
    const char *what)
{
	return apply(fp, lead, pid, c, -1, what) < 0 ? -1 : 0;
}

int
ht_cmd_inline_run(pid_t pid, int fd, const char *what)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c = 0, go = 'G';
	ssize_t n;
	int k, rc = -1;

	/* The agent says 'R' once its constructor has the GOT hooks in;
	 * an agent that does not load closes nothing, so the wait is
	 * bounded (and the child's end of the socket closes if it exits). */
	while ((k = poll(&p, 1, RUN_WAIT_MS)) == -1 && errno == EINTR)
		;
	if (k == 1) {
		do
			n = read(fd, &c, 1);
		while (n == -1 && errno == EINTR);
	}
	if (k != 1 || c != 'R') {
		if (k == 0)
			ht_warn("%s %ld: inline hooks: its agent did not ask "
				"for them within 30 s; the GOT hooks alone are "
				"in",
			    what, (long)pid);
		close(fd);
		return -1; /* no agent, or it did not launch: nothing to do */
	}
	rc = apply(stderr, "heaptool: ", pid, NULL, fd, what);
	do
		n = write(fd, &go, 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	return rc;
}

int
ht_cmd_inline_restore(pid_t pid, const char *what)
{
	char err[512];
	int n;

	if ((n = ht_inline_restore(pid, err, sizeof(err))) < 0) {
		ht_warn("%s %ld: inline hooks: %s; the process runs on with "
			"them (they pass every call on)",
		    what, (long)pid, err);
		return -1;
	}
	return n;
}

void
ht_cmd_inline_status(FILE *fp, const char *lead, pid_t pid)
{
	static char hooked[8192], notes[HT_INLINE_NOTES_MAX];
	int n;

	if ((n = ht_inline_describe(pid, hooked, sizeof(hooked), notes,
		 sizeof(notes))) < 0)
		return; /* never asked to hook inline */
	fprintf(fp, "%sbackend: GOT%s\n", lead, n > 0 ? " + inline" : "");
	if (n > 0)
		fprintf(fp, "%sinline: hooked %s\n", lead, hooked);
	print_notes(fp, lead, "inline: not hooked: ", notes);
}
