/*
 * The account of coverage a profile carries (version 6: its COVERAGE
 * records and META's backend; agent/coverage.h says what they mean), as
 * text and JSON: a one-line summary for every report's header and for
 * status, the full list (report --coverage), and the "coverage" object of
 * report --json.  A profile older than version 6 has no account: the
 * summary says so, the list and the JSON array are empty.
 */
#ifndef HT_CLI_COVERAGE_H
#define HT_CLI_COVERAGE_H

#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "profile.h"

/* The functions of prof's account that are hooked and not (those that
 * allocate nothing are neither). */
void ht_coverage_count(const struct ht_profile *prof, uint32_t *hooked,
    uint32_t *unhooked);

/* "LEAD%-15s got backend: 12 allocator functions hooked, 3 not (WHERE
 * lists them)\n" from the figures; where: the command that lists them. */
void ht_coverage_line(FILE *fp, const char *lead, uint32_t backend,
    uint32_t hooked, uint32_t unhooked, const char *where);

/* The summary line of prof (nothing for a profile older than version 6). */
void
ht_coverage_summary(FILE *fp, const char *lead, const struct ht_profile *prof);

/* Every function of prof's account, by module: hooked or not, by which
 * backend, and why. */
void ht_coverage_list(FILE *fp, const struct ht_profile *prof);

/* The "coverage" object: backend, hooked, not_hooked, functions[]. */
void ht_coverage_json(struct ht_json *j, const struct ht_profile *prof);

#endif
