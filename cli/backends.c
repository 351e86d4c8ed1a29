/* The backends of a target's agent, as text and JSON (backends.h). */
#include "allocnames.h"
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "backends.h"
#include "profile.h"
#include "size.h"

/* What each backend is, in a few words. */
static const char *
what(uint32_t b)
{
	switch (b) {
	case HT_BACKEND_GOT:
		return "the agent's hooks (GOT slots) sample";
	case HT_BACKEND_INLINE:
		return "the agent's hooks (patched entry points) sample";
	case HT_BACKEND_JEMALLOC:
		return "jemalloc's own sampling (opt.prof), read from its heap "
		       "profile";
	case HT_BACKEND_MIMALLOC:
		return "mimalloc's profiler API (untested against a real "
		       "mimalloc)";
	default:
		return "unknown";
	}
}

/* The session's backend (the one in use), or with no session the one the
 * next start takes. */
static uint32_t
shown(const struct ht_status *st)
{
	return st->state == HT_STATE_NONE || st->backend == HT_BACKEND_NONE ?
	    st->backend_default :
	    st->backend;
}

void
ht_backends_print(FILE *fp, const char *lead, const struct ht_status *st)
{
	uint32_t k, b = shown(st);
	char r[32], q[32];

	fprintf(fp, "%sbackend         %s: %s", lead, ht_backend_name(b),
	    what(b));
	if (st->state == HT_STATE_NONE)
		fprintf(fp, " (the next start's)");
	fputc('\n', fp);
	if (b == HT_BACKEND_JEMALLOC && st->state != HT_STATE_NONE &&
	    st->rate_asked != 0 && st->rate_asked != st->rate)
		fprintf(fp,
		    "%s                rate %s rounded from %s: jemalloc "
		    "samples at powers of 2\n",
		    lead, ht_size_format(st->rate, r, sizeof(r)),
		    ht_size_format(st->rate_asked, q, sizeof(q)));
	for (k = HT_BACKEND_JEMALLOC; k <= HT_BACKEND_MIMALLOC; k++) {
		if (k == b || !(st->backends_present & (1u << k)))
			continue;
		if (st->backends & (1u << k))
			fprintf(fp,
			    "%s                %s is available too: start "
			    "--backend %s\n",
			    lead, ht_backend_name(k), ht_backend_name(k));
		else
			fprintf(fp,
			    "%s                %s is there but cannot sample "
			    "for heaptool (%s)\n",
			    lead, ht_backend_name(k),
			    k == HT_BACKEND_JEMALLOC ?
				"opt.prof off, or no profiling built in: "
				"MALLOC_CONF=prof:true,prof_active:false "
				"turns it on at the program's start" :
				"no profiler API");
	}
}

void
ht_backends_json(struct ht_json *j, const struct ht_status *st)
{
	uint32_t k;

	ht_json_object_begin(j, "backend");
	ht_json_string(j, "name", ht_backend_name(shown(st)));
	if (st->rate_asked != 0)
		ht_json_uint(j, "rate_asked", st->rate_asked);
	else
		ht_json_null(j, "rate_asked");
	ht_json_array_begin(j, "available");
	for (k = HT_BACKEND_GOT; k <= HT_BACKEND_MIMALLOC; k++)
		if (st->backends & (1u << k))
			ht_json_string(j, NULL, ht_backend_name(k));
	ht_json_array_end(j);
	ht_json_array_begin(j, "present");
	for (k = HT_BACKEND_GOT; k <= HT_BACKEND_MIMALLOC; k++)
		if (st->backends_present & (1u << k))
			ht_json_string(j, NULL, ht_backend_name(k));
	ht_json_array_end(j);
	ht_json_object_end(j);
}
