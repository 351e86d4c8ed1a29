/*
 * Live profiles of one target (see live.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "live.h"
#include "monotime.h"
#include "proc.h"
#include "target.h"

struct ht_live {
	pid_t pid;
	uint64_t start;
	struct ht_sym_opts files;
	uint64_t max_age_ns;
	struct ht_live_snap cur; /* prof NULL: none kept */
};

uint64_t
ht_live_now_ns(void)
{
	return ht_mono_ns();
}

struct ht_live *
ht_live_new(pid_t pid, uint64_t start, const struct ht_sym_opts *files,
    uint64_t max_age_ns)
{
	struct ht_live *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->pid = pid;
	l->start = start;
	if (files != NULL)
		l->files = *files;
	l->max_age_ns = max_age_ns;
	return l;
}

void
ht_live_snap_free(struct ht_live_snap *s)
{
	if (s->sym != NULL)
		ht_sym_free(s->sym);
	ht_profile_free(s->prof);
	memset(s, 0, sizeof(*s));
}

void
ht_live_free(struct ht_live *l)
{
	if (l == NULL)
		return;
	ht_live_snap_free(&l->cur);
	free(l);
}

/* Is pid still the process the handle was made for?  0, or -1 with the
 * reason. */
static int
check_process(const struct ht_live *l, char *err, size_t errlen)
{
	struct ht_proc p;

	if (ht_proc_read(l->pid, &p) != 0 || p.state == 'Z' || p.state == 'X') {
		snprintf(err, errlen,
		    "target %ld: no such process (it exited); serve "
		    "another process",
		    (long)l->pid);
		return -1;
	}
	if (p.start_time != l->start) {
		snprintf(err, errlen,
		    "target %ld: the process exited and its pid "
		    "belongs to another now; serve another process",
		    (long)l->pid);
		return -1;
	}
	return 0;
}

/* The profile bytes from the agent, decoded, into *prof.  0, or -1 with
 * the reason. */
static int
fetch(const struct ht_live *l, struct ht_profile **prof, char *err,
    size_t errlen)
{
	const uint8_t *buf;
	struct ht_ctl *c;
	char derr[256];
	size_t len;
	int rc = -1;

	*prof = NULL;
	if (check_process(l, err, errlen) != 0)
		return -1;
	if ((c = ht_ctl_new(l->pid)) == NULL) {
		snprintf(err, errlen, "target %ld: out of memory",
		    (long)l->pid);
		return -1;
	}
	if (ht_ctl_report(c, &buf, &len) != 0) {
		snprintf(err, errlen, "%s", ht_ctl_error(c));
		goto out;
	}
	if ((*prof = ht_profile_decode(buf, len, derr, sizeof(derr))) == NULL) {
		snprintf(err, errlen,
		    "target %ld: the agent sent a profile that "
		    "does not decode (%s); use the heaptool that matches the "
		    "agent",
		    (long)l->pid, derr);
		goto out;
	}
	rc = 0;
out:
	ht_ctl_free(c);
	return rc;
}

static int
make_sym(const struct ht_live *l, struct ht_live_snap *s, char *err,
    size_t errlen)
{
	if ((s->sym = ht_target_sym(l->pid, s->prof, &l->files)) == NULL) {
		snprintf(err, errlen, "target %ld: symbolizer: %s",
		    (long)l->pid, strerror(errno));
		return -1;
	}
	return 0;
}

int
ht_live_take(struct ht_live *l, struct ht_live_snap *snap, char *err,
    size_t errlen)
{
	memset(snap, 0, sizeof(*snap));
	if (fetch(l, &snap->prof, err, errlen) != 0)
		return -1;
	snap->taken_ns = ht_live_now_ns();
	if (make_sym(l, snap, err, errlen) != 0) {
		ht_live_snap_free(snap);
		return -1;
	}
	return 0;
}

int
ht_live_current(struct ht_live *l, const struct ht_live_snap **snap, char *err,
    size_t errlen)
{
	struct ht_profile *prof;
	uint64_t now = ht_live_now_ns();

	/* A kept profile of a process that is gone is not served: the
	 * reader is told at once. */
	if (l->cur.prof != NULL && now - l->cur.taken_ns < l->max_age_ns) {
		if (check_process(l, err, errlen) != 0) {
			ht_live_snap_free(&l->cur);
			return -1;
		}
		*snap = &l->cur;
		return 0;
	}
	if (fetch(l, &prof, err, errlen) != 0) {
		/* What is gone is not served from the cache either. */
		ht_live_snap_free(&l->cur);
		return -1;
	}
	/* The symbolizer keeps what it looked up: kept while the modules
	 * are where they were. */
	if (l->cur.prof != NULL && ht_profile_same_modules(l->cur.prof, prof)) {
		ht_profile_free(l->cur.prof);
		l->cur.prof = prof;
	} else {
		ht_live_snap_free(&l->cur);
		l->cur.prof = prof;
		if (make_sym(l, &l->cur, err, errlen) != 0) {
			ht_live_snap_free(&l->cur);
			return -1;
		}
	}
	l->cur.taken_ns = now;
	*snap = &l->cur;
	return 0;
}
