/*
 * The CLI's reading of an allocation trace (src/trace.h) for trace-stats
 * and replay: the reader's reason turned into heaptool's one-line error,
 * with what to do about it.
 */
#ifndef HT_TRACELOAD_H
#define HT_TRACELOAD_H

#include "trace.h"

/*
 * Read the trace at path for command cmd ("trace-stats", "replay").  A
 * trace cut short is returned (complete 0) when incomplete_ok, else
 * refused.  Returns the trace (ht_trace_free), or NULL after printing why.
 */
struct ht_trace *
ht_traceload(const char *cmd, const char *path, int incomplete_ok);

#endif
