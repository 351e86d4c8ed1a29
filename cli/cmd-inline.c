/*
 * What attach, start --backend, detach and status say of the inline
 * backend (inline.h): the functions it hooked, and those it did not, each
 * with its reason.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "inline.h"

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

int
ht_cmd_inline_apply(FILE *fp, const char *lead, pid_t pid, struct ht_ctl *c,
    const char *what)
{
	static struct ht_inline_result res;
	static char hooked[8192], notes[HT_INLINE_NOTES_MAX];
	char err[512];

	if (ht_inline_apply(pid, c, &res, err, sizeof(err)) != 0) {
		ht_warn("%s %ld: inline hooks: %s; the GOT hooks alone are in",
		    what, (long)pid, err);
		return -1;
	}
	if (res.hooked > 0 &&
	    ht_inline_describe(pid, hooked, sizeof(hooked), notes,
		sizeof(notes)) > 0)
		fprintf(fp, "%sinline: hooked %s\n", lead, hooked);
	print_notes(fp, lead, "inline: not hooked: ", res.notes);
	return 0;
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
