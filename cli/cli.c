/*
 * The messages of the heaptool command (see cli.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

static void
vwarn(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("heaptool: ", stderr);
	vfprintf(stderr, fmt, ap);
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
