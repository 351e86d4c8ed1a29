/*
 * Reading a trace for a command (traceload.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "traceload.h"

struct ht_trace *
ht_traceload(const char *cmd, const char *path, int incomplete_ok)
{
	struct ht_trace *t;
	char err[256];

	if ((t = ht_trace_read_file(path, err, sizeof(err))) == NULL) {
		const char *hint;

		if (strstr(err, "damaged") != NULL ||
		    strstr(err, "malformed") != NULL)
			hint = "the file was changed or corrupted since it "
			       "was recorded; record it again";
		else if (strstr(err, "version") != NULL)
			hint = "read it with the heaptool that recorded it";
		else if (strstr(err, "not a heaptool trace") != NULL)
			hint = "give a file written by heaptool record";
		else
			hint = "check the path, or record the trace again";
		ht_warn("%s %s: %s; %s", cmd, path, err, hint);
		return NULL;
	}
	if (!t->complete && !incomplete_ok) {
		ht_warn("%s %s: the trace is incomplete (%s), the recording "
			"was cut short; record it again (heaptool trace-stats "
			"shows what it has)",
		    cmd, path, t->incomplete_why);
		ht_trace_free(t);
		return NULL;
	}
	return t;
}
