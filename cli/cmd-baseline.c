/*
 * heaptool baseline: remember the target's current profile, for heaptool
 * report --diff (the baselines are the target module's, target.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "profile.h"
#include "size.h"
#include "target.h"

static const char baseline_usage[] =
    "usage: heaptool baseline [-p PID]\n"
    "\n"
    "Remember the target's current profile (PID, or the current target of\n"
    "heaptool attach) as its baseline: heaptool report --diff then shows what\n"
    "changed since.  A new baseline replaces the previous one.\n"
    "\n"
    "  -p, --pid PID        the running process PID\n"
    "  -h, --help           show this help\n"
    "\n"
    "See man heaptool for the details.\n";

int
ht_cmd_baseline(int argc, char **argv)
{
	struct ht_profile *prof;
	const struct ht_profile_site *s;
	char path[PATH_MAX + 64], a[32];
	uint64_t start, start2, inuse = 0, objects = 0, nsites = 0;
	uint8_t *raw = NULL;
	size_t len = 0, i;
	int rc;
	pid_t pid;

	if ((rc = ht_cmd_target(argc, argv, baseline_usage,
		 "give the process "
		 "with -p PID",
		 &pid)) != HT_EXIT_OK ||
	    pid == 0)
		return rc;
	if (ht_target_start_time(pid, &start) != 0)
		return HT_EXIT_FAIL;
	if ((prof = ht_target_profile(pid, &raw, &len)) == NULL)
		return HT_EXIT_FAIL;
	rc = HT_EXIT_FAIL;
	/* The profile must be the process's whose start time names it. */
	if (ht_target_start_time(pid, &start2) != 0)
		goto out;
	if (start2 != start) {
		ht_warn("target %ld: no such process (it exited); check the "
			"PID",
		    (long)pid);
		goto out;
	}
	if (ht_target_baseline_save(path, sizeof(path), pid, start, raw, len) !=
	    0) {
		ht_warn("baseline %ld: %s; set XDG_STATE_HOME to a writable "
			"directory",
		    (long)pid, strerror(errno));
		goto out;
	}
	for (i = 0; i < prof->nsites; i++) {
		s = &prof->sites[i];
		inuse += s->inuse_bytes;
		objects += s->inuse_objects;
		nsites += s->folded > 0 ? s->folded : 1;
	}
	printf("heaptool: baseline of %ld saved to %s: session %" PRIu64
	       " (%s), %s%s in use in %" PRIu64 " object%s at %" PRIu64
	       " site%s, rate %" PRIu64 "\n",
	    (long)pid, path, prof->meta.epoch,
	    ht_profile_state_name(prof->meta.state),
	    prof->meta.rate == 1 ? "" : "about ",
	    ht_size_format(inuse, a, sizeof(a)), objects,
	    objects == 1 ? "" : "s", nsites, nsites == 1 ? "" : "s",
	    prof->meta.rate);
	rc = ht_cmd_flush();
out:
	free(raw);
	ht_profile_free(prof);
	return rc;
}
