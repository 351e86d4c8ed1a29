/*
 * The account of coverage as text and JSON (coverage.h).  Names and paths
 * come from the profile, which may be hostile: printed through
 * ht_text_safe and the JSON writer only.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allocnames.h"
#include "coverage.h"
#include "json.h"
#include "profile.h"
#include "text.h"

void
ht_coverage_count(const struct ht_profile *prof, uint32_t *hooked,
    uint32_t *unhooked)
{
	size_t i;

	*hooked = *unhooked = 0;
	for (i = 0; i < prof->ncoverage; i++) {
		if (prof->coverage[i].reason == HT_COV_NOTHING ||
		    prof->coverage[i].reason == HT_COV_PREEMPTED)
			continue;
		if (ht_cov_reason_hooked(prof->coverage[i].reason))
			(*hooked)++;
		else
			(*unhooked)++;
	}
}

void
ht_coverage_line(FILE *fp, const char *lead, uint32_t backend, uint32_t hooked,
    uint32_t unhooked, const char *where)
{
	fprintf(fp,
	    "%s%-15s %s backend: %" PRIu32 " allocator function%s hooked, "
	    "%" PRIu32 " not",
	    lead, "coverage", ht_backend_name(backend), hooked,
	    hooked == 1 ? "" : "s", unhooked);
	if (hooked + unhooked > 0)
		fprintf(fp, " (%s lists them)", where);
	putc('\n', fp);
}

void
ht_coverage_summary(FILE *fp, const char *lead, const struct ht_profile *prof)
{
	uint32_t h, u;

	if (prof->version < 6)
		return;
	ht_coverage_count(prof, &h, &u);
	ht_coverage_line(fp, lead, prof->meta.backend, h, u,
	    "report --coverage");
}

/* The entries of the module of entry first, from it on, printed. */
static void
list_module(FILE *fp, const struct ht_profile *prof, size_t first)
{
	const struct ht_coverage_rec *c;
	const char *mod = prof->coverage[first].module;
	size_t i, w = strlen("function");

	for (i = first; i < prof->ncoverage; i++)
		if (strcmp(prof->coverage[i].module, mod) == 0)
			w = ht_text_width(w, prof->coverage[i].name);
	fputs("\ncoverage of ", fp);
	ht_text_safe(fp, mod[0] != '\0' ? mod : "?", SIZE_MAX);
	putc('\n', fp);
	for (i = first; i < prof->ncoverage; i++) {
		c = &prof->coverage[i];
		if (strcmp(c->module, mod) != 0)
			continue;
		fputs("  ", fp);
		ht_text_column(fp, c->name, w);
		if (c->reason == HT_COV_NOTHING ||
		    c->reason == HT_COV_PREEMPTED)
			fputs(" -       ", fp);
		else if (ht_cov_reason_hooked(c->reason))
			fprintf(fp, " %-7s ", ht_backend_name(c->backend));
		else
			fputs(" NOT     ", fp);
		fprintf(fp, "%-7s %s", ht_fn_kind_name(c->kind),
		    ht_cov_reason_text(c->reason));
		if (c->reason == HT_COV_SLOTS)
			fprintf(fp, " (%" PRIu32 ")", c->slots);
		putc('\n', fp);
	}
}

void
ht_coverage_list(FILE *fp, const struct ht_profile *prof)
{
	size_t i, k;

	if (prof->version < 6) {
		fprintf(fp, "\ncoverage: not in a version %u profile\n",
		    (unsigned)prof->version);
		return;
	}
	for (i = 0; i < prof->ncoverage; i++) {
		/* Each module once, where its first entry is. */
		for (k = 0; k < i; k++)
			if (strcmp(prof->coverage[k].module,
				prof->coverage[i].module) == 0)
				break;
		if (k == i)
			list_module(fp, prof, i);
	}
}

void
ht_coverage_json(struct ht_json *j, const struct ht_profile *prof)
{
	const struct ht_coverage_rec *c;
	uint32_t h, u;
	size_t i;

	ht_coverage_count(prof, &h, &u);
	ht_json_object_begin(j, "coverage");
	ht_json_string(j, "backend", ht_backend_name(prof->meta.backend));
	ht_json_uint(j, "hooked", h);
	ht_json_uint(j, "not_hooked", u);
	ht_json_array_begin(j, "functions");
	for (i = 0; i < prof->ncoverage; i++) {
		c = &prof->coverage[i];
		ht_json_object_begin(j, NULL);
		ht_json_string(j, "module", c->module);
		ht_json_string(j, "function", c->name);
		ht_json_string(j, "family", c->family);
		ht_json_string(j, "kind", ht_fn_kind_name(c->kind));
		ht_json_bool(j, "hooked", ht_cov_reason_hooked(c->reason));
		ht_json_string(j, "backend", ht_backend_name(c->backend));
		ht_json_string(j, "reason", ht_cov_reason_text(c->reason));
		ht_json_uint(j, "slots", c->slots);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
	ht_json_object_end(j);
}
