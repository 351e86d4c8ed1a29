/*
 * The dump options (see dumpopts.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dumpopts.h"
#include "proto.h"
#include "size.h"

int
ht_dump_opt(int ch, const char *arg, struct ht_dump_opts *o)
{
	uint64_t v;

	switch (ch) {
	case HT_OPT_DUMP_PREFIX:
		if (arg[0] == '\0')
			return ht_usage(
			    "--dump-prefix: empty; give the start "
			    "of the dump files' paths, e.g. /tmp/app");
		if ((size_t)snprintf(o->prefix, sizeof(o->prefix), "%s", arg) >=
		    sizeof(o->prefix))
			return ht_usage("--dump-prefix: too long");
		return HT_EXIT_OK;
	case HT_OPT_DUMP_INTERVAL:
		if (ht_duration_parse(arg, &v) != 0 || v == 0)
			return ht_usage("--dump-interval %s: not a duration "
					"above 0; use e.g. 500ms, 10s, 5m",
			    arg);
		o->interval_ms = v;
		return HT_EXIT_OK;
	case HT_OPT_THRESHOLD:
		if (ht_size_parse(arg, &v) != 0)
			return ht_usage(
			    "--threshold %s: not a size; " HT_SIZE_HINT, arg);
		o->threshold_bytes = v;
		return HT_EXIT_OK;
	}
	if (ht_size_parse(arg, &v) != 0 || v == 0)
		return ht_usage("%s %s: not a size above 0; " HT_SIZE_HINT,
		    ch == HT_OPT_DUMP_EVERY ? "--dump-every" : "--dump-at-rss",
		    arg);
	if (ch == HT_OPT_DUMP_EVERY)
		o->every_bytes = v;
	else
		o->at_rss_bytes = v;
	return HT_EXIT_OK;
}

int
ht_dump_opts_finish(struct ht_dump_opts *o)
{
	char cwd[PATH_MAX], abs[sizeof(o->prefix)];

	if (o->prefix[0] == '\0') {
		if (o->interval_ms != 0 || o->every_bytes != 0 ||
		    o->at_rss_bytes != 0 || o->threshold_bytes != 0)
			return ht_usage(
			    "--dump-interval, --dump-every, "
			    "--dump-at-rss and --threshold need "
			    "--dump-prefix, which says where the dumps go");
		return HT_EXIT_OK;
	}
	if (o->prefix[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			ht_warn("current directory: %s; give --dump-prefix "
				"an absolute path",
			    strerror(errno));
			return HT_EXIT_FAIL;
		}
		if ((size_t)snprintf(abs, sizeof(abs), "%s%s%s", cwd,
			strcmp(cwd, "/") == 0 ? "" : "/",
			o->prefix) >= sizeof(abs))
			return ht_usage("--dump-prefix %s: too long",
			    o->prefix);
		memcpy(o->prefix, abs, sizeof(abs));
	}
	if (strlen(o->prefix) > HT_PROTO_MAX_PREFIX)
		return ht_usage("--dump-prefix %s: longer than %d bytes; "
				"choose a shorter path",
		    o->prefix, HT_PROTO_MAX_PREFIX);
	return HT_EXIT_OK;
}
