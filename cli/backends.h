/*
 * The backends of a target's agent, as heaptool attach and status show
 * them: which one its sessions use (or the next start would take), and
 * which allocators that sample by themselves are there and why they cannot
 * be used.
 */
#ifndef HT_BACKENDS_H
#define HT_BACKENDS_H

#include <stdio.h>

#include "json.h"
#include "proto.h"

/* Lines about st's backends on fp, each starting with lead: the one in use
 * (or the default), then what else is there. */
void ht_backends_print(FILE *fp, const char *lead, const struct ht_status *st);

/* The same as the JSON object "backend" of status --json:
 * { "name": ..., "rate_asked": N, "available": [...], "present": [...] } */
void ht_backends_json(struct ht_json *j, const struct ht_status *st);

#endif
