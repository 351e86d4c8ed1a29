/*
 * The messages of the heaptool command (see cli.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
	size_t i, n, len;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	fflush(stdout);
	fputs("heaptool: ", stderr);
	for (i = 0; i < len; i += n) {
		n = ht_json_utf8_len(buf + i, len - i);
		if (n == 0 || ht_json_is_c1(buf + i, n) ||
		    (n == 1 &&
			((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f))) {
			fputc('?', stderr);
			n = n == 0 ? 1 : n;
		} else
			fwrite(buf + i, 1, n, stderr);
	}
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
