/*
 * For the fixtures linked with the agent (its in-process API): dump the
 * profile to DIR/NAME.  Returns heaptool_dump's result.
 */
#ifndef HT_FX_DUMP_H
#define HT_FX_DUMP_H

#include <stdio.h>

#include "heaptool.h"

static inline int
fx_dump(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return heaptool_dump(path);
}

#endif
