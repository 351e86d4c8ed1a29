/*
 * heaptool status: the target's agent (version, protocol, hooks) and its
 * session, as text or as one JSON object (keys in heaptool(1)).
 */
#include "config.h"

#include <sys/types.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "allocnames.h"
#include "backends.h"
#include "cli.h"
#include "cmd.h"
#include "coverage.h"
#include "ctl.h"
#include "json.h"
#include "profile.h"
#include "proto.h"
#include "size.h"
#include "target.h"
#include "text.h"

static const char status_usage[] =
    "usage: heaptool status [-p PID] [--json]\n"
    "\n"
    "Show the target's agent (version, protocol, hooks) and session (state,\n"
    "rate, duration, samples, the agent's own memory), the dumps it wrote\n"
    "and failed to write, where its final profile goes, the backend (how\n"
    "it samples: the hooks, or jemalloc's own sampling) and how many\n"
    "allocator functions it hooks (heaptool report --coverage lists them),\n"
    "the functions hooked inline and those refused and why, and the\n"
    "modules whose allocators heaptool does not see.\n"
    "\n"
    "  -p, --pid PID  the process (default: the current target)\n"
    "  -j, --json     print one JSON object\n"
    "  -h, --help     show this help\n"
    "\n"
    "See man heaptool for the details and the JSON keys.\n";

static const struct option status_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Seconds since the session started, or -1 when not running (the status
 * carries no end time). */
/* Whether the session's figures are exact: at rate 1, nothing dropped, and
 * sampled by the agent's hooks (an allocator's own sampling misses each
 * thread's first bytes after a start: ht_view_meta_floor). */
static int
status_exact(const struct ht_status *st)
{
	return st->rate == 1 && st->dropped_samples == 0 &&
	    st->backend < HT_BACKEND_JEMALLOC;
}

static double
running_for(const struct ht_status *st)
{
	struct timespec ts;
	uint64_t now;

	if (st->state != HT_STATE_RUNNING || st->start_ns == 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return now > st->start_ns ? (double)(now - st->start_ns) / 1e9 : 0;
}

/* A time of the status (CLOCK_REALTIME ns) as local time, into buf. */
static const char *
local_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (ns == 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

/* The dumps the agent wrote and failed to write (none: nothing). */
static void
status_dumps_text(const struct ht_status *st)
{
	char t[64];

	if (st->dumps_written > 0) {
		printf("  dumps written   %" PRIu64 ", the last ",
		    st->dumps_written);
		ht_text_safe(stdout, st->dump_written, SIZE_MAX);
		printf(" at %s\n",
		    local_time(st->dump_written_ns, t, sizeof(t)));
	}
	if (st->dumps_failed > 0) {
		printf("  dumps FAILED    %" PRIu64 ", the last ",
		    st->dumps_failed);
		ht_text_safe(stdout, st->dump_failed, SIZE_MAX);
		printf(": %s, at %s\n", strerror((int)st->dump_failed_errno),
		    local_time(st->dump_failed_ns, t, sizeof(t)));
	}
}

static void
status_dumps_json(struct ht_json *j, const struct ht_status *st)
{
	ht_json_object_begin(j, "dumps");
	ht_json_uint(j, "written", st->dumps_written);
	if (st->dumps_written > 0) {
		ht_json_object_begin(j, "last_written");
		ht_json_string(j, "path", st->dump_written);
		ht_json_uint(j, "time_ns", st->dump_written_ns);
		ht_json_object_end(j);
	} else
		ht_json_null(j, "last_written");
	ht_json_uint(j, "failed", st->dumps_failed);
	if (st->dumps_failed > 0) {
		ht_json_object_begin(j, "last_failure");
		ht_json_string(j, "path", st->dump_failed);
		ht_json_uint(j, "errno", st->dump_failed_errno);
		ht_json_string(j, "error",
		    strerror((int)st->dump_failed_errno));
		ht_json_uint(j, "time_ns", st->dump_failed_ns);
		ht_json_object_end(j);
	} else
		ht_json_null(j, "last_failure");
	ht_json_object_end(j);
}

static const char *
record_state_name(uint32_t state)
{
	switch (state) {
	case HT_RECORD_RUNNING:
		return "running";
	case HT_RECORD_DONE:
		return "done";
	case HT_RECORD_FULL:
		return "stopped at its --max-size";
	case HT_RECORD_FAILED:
		return "stopped by a failed write";
	}
	return "none";
}

/* The agent's recording (heaptool record), where it has had one: rs NULL
 * where the agent is older than protocol 8 or said nothing. */
static void
status_record_text(const struct ht_recstat *rs)
{
	char a[32];

	if (rs == NULL || rs->state == HT_RECORD_NONE)
		return;
	printf("  recording       %s: %" PRIu64 " event%s, %" PRIu32
	       " thread%s, %s written, %" PRIu64 " lost, %" PRIu64 " wait%s",
	    record_state_name(rs->state), rs->events,
	    rs->events == 1 ? "" : "s", rs->threads,
	    rs->threads == 1 ? "" : "s",
	    ht_size_format(rs->bytes, a, sizeof(a)), rs->lost, rs->waits,
	    rs->waits == 1 ? "" : "s");
	if (rs->lost_why != 0)
		printf(" (%s)", strerror((int)rs->lost_why));
	putchar('\n');
}

static void
status_record_json(struct ht_json *j, const struct ht_recstat *rs)
{
	if (rs == NULL || rs->state == HT_RECORD_NONE) {
		ht_json_null(j, "recording");
		return;
	}
	ht_json_object_begin(j, "recording");
	ht_json_string(j, "state", record_state_name(rs->state));
	ht_json_uint(j, "events", rs->events);
	ht_json_uint(j, "threads", rs->threads);
	ht_json_uint(j, "bytes", rs->bytes);
	ht_json_uint(j, "lost", rs->lost);
	if (rs->lost_why != 0)
		ht_json_string(j, "lost_why", strerror((int)rs->lost_why));
	else
		ht_json_null(j, "lost_why");
	ht_json_uint(j, "waits", rs->waits);
	ht_json_object_end(j);
}

static void
status_text(pid_t pid, const struct ht_status *st, const struct ht_recstat *rs)
{
	char a[32];
	uint32_t i;
	double d;

	printf("pid %ld: agent %s, protocol %" PRIu32 "\n", (long)pid,
	    st->agent_version[0] != '\0' ? st->agent_version : "?",
	    st->proto_version);
	if (st->hooked)
		printf("  hooks           installed: %" PRIu32
		       " slot%s in %" PRIu32 " module%s\n",
		    st->slots_patched, st->slots_patched == 1 ? "" : "s",
		    st->modules, st->modules == 1 ? "" : "s");
	else
		printf("  hooks           removed (detached; heaptool attach "
		       "%ld hooks again)\n",
		    (long)pid);
	if (st->state == HT_STATE_NONE)
		printf("  session         none yet; heaptool start begins "
		       "one\n");
	else {
		printf("  session         %" PRIu64 " %s, ", st->epoch,
		    ht_profile_state_name(st->state));
		if (status_exact(st))
			printf("rate 1 (every allocation, exact)");
		else if (st->rate == 1 && st->backend >= HT_BACKEND_JEMALLOC)
			printf("rate 1 (NOT EXACT: %s's own sampling misses "
			       "each thread's first bytes after the start; "
			       "--backend got counts exactly)",
			    ht_backend_name(st->backend));
		else if (st->rate == 1)
			printf("rate 1 (every allocation; NOT EXACT: samples "
			       "dropped)");
		else
			printf("rate %s",
			    ht_size_format(st->rate, a, sizeof(a)));
		if ((d = running_for(st)) >= 0)
			printf(", for %.2f s", d);
		putchar('\n');
		printf("  samples         %" PRIu64 " (%" PRIu64
		       " live), %" PRIu64 " dropped",
		    st->samples, st->live_samples, st->dropped_samples);
		if (st->max_samples != 0)
			printf("; at most %" PRIu64 " live", st->max_samples);
		putchar('\n');
		if (st->dropped_samples > 0)
			printf("  %s%" PRIu64 " sample%s dropped: the tables "
			       "were full, and the figures leave them out "
			       "(start --max-samples raises the bound, memory "
			       "permitting)\n",
			    st->rate == 1 ? "NOT EXACT: " : "WARNING: ",
			    st->dropped_samples,
			    st->dropped_samples == 1 ? "" : "s");
		if (st->flags & HT_STATUS_RELEASED)
			printf("  profile         released at detach, with the "
			       "agent's tables\n");
	}
	if (st->parent_pid != 0)
		printf("  follows         its parent %" PRIu32 ": a session of "
		       "its own since it was forked\n",
		    st->parent_pid);
	if (st->follow || st->nchildren > 0) {
		printf("  children        %s",
		    st->follow ?
			"followed: each starts its own session when forked" :
			"followed by an earlier session");
		for (i = 0; i < st->nchildren; i++)
			printf("%s%" PRIu32, i == 0 ? "; running: " : " ",
			    st->children[i]);
		if (st->nchildren == HT_PROTO_MAX_CHILDREN)
			printf(" (the most recent %d)", HT_PROTO_MAX_CHILDREN);
		putchar('\n');
	}
	if (st->flags & HT_STATUS_RELEASED)
		printf("  heaptool agent  %s still held (its tables were "
		       "returned at detach)\n",
		    ht_size_format(st->overhead_bytes, a, sizeof(a)));
	else
		printf("  heaptool agent  %s overhead\n",
		    ht_size_format(st->overhead_bytes, a, sizeof(a)));
	if (st->final_armed) {
		printf("  final profile   at exit or on a fatal signal, to ");
		ht_text_safe(stdout, st->final_dir, SIZE_MAX);
		printf("/final.%ld.*.heap\n", (long)pid);
	}
	if (st->hooked)
		ht_coverage_line(stdout, "  ", st->backend, st->coverage_hooked,
		    st->coverage_unhooked, "heaptool report --coverage");
	status_dumps_text(st);
	status_record_text(rs);
	ht_backends_print(stdout, "  ", st);
	ht_cmd_status_unseen(stdout, "  ", st);
	ht_cmd_inline_status(stdout, "  ", pid);
}

static int
status_json(pid_t pid, const struct ht_status *st, const struct ht_recstat *rs)
{
	struct ht_json j;
	uint32_t i;
	double d;

	ht_json_init(&j, stdout, 1);
	ht_json_object_begin(&j, NULL);
	ht_json_uint(&j, "pid", (uint64_t)pid);
	ht_json_string(&j, "agent_version", st->agent_version);
	ht_json_uint(&j, "protocol", st->proto_version);
	ht_json_bool(&j, "hooked", st->hooked != 0);
	ht_json_uint(&j, "slots_patched", st->slots_patched);
	ht_json_uint(&j, "modules", st->modules);
	ht_json_object_begin(&j, "session");
	ht_json_string(&j, "state", ht_profile_state_name(st->state));
	ht_json_uint(&j, "epoch", st->epoch);
	ht_json_uint(&j, "rate", st->rate);
	ht_json_bool(&j, "exact", status_exact(st));
	if (st->max_samples != 0)
		ht_json_uint(&j, "max_samples", st->max_samples);
	else
		ht_json_null(&j, "max_samples");
	ht_json_bool(&j, "released", (st->flags & HT_STATUS_RELEASED) != 0);
	if ((d = running_for(st)) >= 0)
		ht_json_double(&j, "duration_s", d);
	else
		ht_json_null(&j, "duration_s");
	ht_json_object_end(&j);
	ht_json_uint(&j, "samples", st->samples);
	ht_json_uint(&j, "live_samples", st->live_samples);
	ht_json_uint(&j, "dropped_samples", st->dropped_samples);
	ht_json_uint(&j, "overhead_bytes", st->overhead_bytes);
	ht_json_bool(&j, "follow_forks", st->follow != 0);
	if (st->parent_pid != 0)
		ht_json_uint(&j, "parent", st->parent_pid);
	else
		ht_json_null(&j, "parent");
	ht_json_array_begin(&j, "children");
	for (i = 0; i < st->nchildren; i++)
		ht_json_uint(&j, NULL, st->children[i]);
	ht_json_array_end(&j);
	ht_json_object_begin(&j, "final_profile");
	ht_json_bool(&j, "armed", st->final_armed != 0);
	ht_json_string(&j, "directory",
	    st->final_dir[0] != '\0' ? st->final_dir : NULL);
	ht_json_object_end(&j);
	ht_json_object_begin(&j, "coverage");
	ht_json_string(&j, "backend", ht_backend_name(st->backend));
	ht_json_uint(&j, "hooked", st->coverage_hooked);
	ht_json_uint(&j, "not_hooked", st->coverage_unhooked);
	ht_json_object_end(&j);
	status_dumps_json(&j, st);
	status_record_json(&j, rs);
	ht_json_array_begin(&j, "unseen_allocators");
	for (i = 0; i < st->nallocators && i < HT_PROTO_MAX_ALLOCATORS; i++)
		ht_text_json_unseen(&j, st->allocators[i].names,
		    st->allocators[i].path);
	ht_json_array_end(&j);
	ht_json_uint(&j, "unseen_allocators_more", st->allocators_more);
	ht_backends_json(&j, st);
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}

int
ht_cmd_status(int argc, char **argv)
{
	static struct ht_status st;
	struct ht_recstat rs, *rsp = NULL;
	struct ht_ctl *c;
	const char *popt = NULL;
	int ch, rc, json = 0;
	pid_t pid;

	ht_cmd_getopt_reset();
	while ((ch = getopt_long(argc, argv, ":p:jh", status_options, NULL)) !=
	    -1) {
		switch (ch) {
		case 'p':
			popt = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			return ht_cmd_help(status_usage);
		default:
			return ht_cmd_opt_error("status", ch, argv);
		}
	}
	if (optind < argc)
		return ht_usage("status: %s: unexpected argument; see "
				"'heaptool status --help'",
		    argv[optind]);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if ((c = ht_target_ctl(pid)) == NULL)
		return HT_EXIT_FAIL;
	if (ht_ctl_status(c, HT_MSG_STATUS, &st) != 0) {
		rc = ht_target_failed(c, pid);
		goto out_free;
	}
	/* The recording's state, from an agent that knows RECSTAT. */
	if (st.proto_version >= 8 && ht_ctl_recstat(c, 0, &rs) == 0)
		rsp = &rs;
	if (json)
		status_json(pid, &st, rsp);
	else
		status_text(pid, &st, rsp);
	rc = ht_cmd_flush();
out_free:
	ht_ctl_free(c);
	return rc;
}
