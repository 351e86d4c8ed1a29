/*
 * The messages of the heaptool command (see cli.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "json.h"

/*
 * Messages name paths, commands and errors that came from a profile or a
 * target, i.e. from someone else: every character that a terminal could
 * act on (C0 and C1 controls, DEL, bytes that are not UTF-8) is written as
 * '?', here, once for every message.
 */
static void
vwarn(const char *fmt, va_list ap)
{
	char buf[8192];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fflush(stdout);
	fputs("heaptool: ", stderr);
	ht_json_put_text(stderr, buf, SIZE_MAX, NULL, NULL);
	fputc('\n', stderr);
}

void
ht_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

int
ht_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	return HT_EXIT_USAGE;
}
