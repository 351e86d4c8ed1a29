/*
 * Fixture of t/t0067-tags-stub.sh: the tag calls of include/heaptool.h in
 * a program with no link to the agent.  Usage: tags-stub none | agent.
 * Each "ok"/"not ok" line is one check.
 *   none   no agent in the process: every call does nothing (tags are 0,
 *          assign returns 0) and the program runs on;
 *   agent  under heaptool run: names intern (same name, same tag), enter
 *          and leave nest, bad arguments are refused, the table's layout
 *          is the header's; and the blocks of stub_scoped (HEAPTOOL_TAG_SCOPE
 *          "scoped", 3 x 1000 bytes) and stub_plain (2 x 500, after the
 *          scope) are kept for the test to find in the profile.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "heaptool.h"

static int failed;
static uint64_t sum;

static void
check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	failed |= !cond;
}

FX_NOINLINE static void
stub_plain(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		void *p = malloc(500); /* SITE stub_plain */

		fx_fill(p, 500, i, &sum);
		fx_keep(p);
	}
}

FX_NOINLINE static void
stub_scoped(void)
{
	HEAPTOOL_TAG_SCOPE("scoped");
	int i;

	for (i = 0; i < 3; i++) {
		void *p = malloc(1000); /* SITE stub_scoped */

		fx_fill(p, 1000, i, &sum);
		fx_keep(p);
	}
}

int
main(int argc, char **argv)
{
	void *p = malloc(64);
	uint32_t a, b, prev;
	int agent;

	if (argc != 2 || p == NULL)
		return 2;
	agent = strcmp(argv[1], "agent") == 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!agent) {
		check(dlsym(RTLD_DEFAULT, HEAPTOOL_TAGS_SYMBOL) == NULL,
		    "no agent in the process");
		check(heaptool_tag("x") == 0, "heaptool_tag: 0");
		check(heaptool_tag_enter(5) == 0, "heaptool_tag_enter: 0");
		heaptool_tag_leave(7);
		check(heaptool_tag_enter(0) == 0,
		    "heaptool_tag_leave: nothing");
		check(heaptool_assign(p, 3, HEAPTOOL_ARENA) == 0,
		    "heaptool_assign: 0");
		check(heaptool_assign(NULL, 3, 9) == 0,
		    "heaptool_assign of nonsense: 0 (nothing checked)");
		stub_scoped();
		stub_plain();
		check(1, "HEAPTOOL_TAG_SCOPE runs");
		printf("sum %llu\n", (unsigned long long)sum);
		free(p);
		return failed;
	}
	{
		const struct heaptool_tags_ops *o =
		    dlsym(RTLD_DEFAULT, HEAPTOOL_TAGS_SYMBOL);

		check(o != NULL && o->version == 1 &&
			o->size == sizeof(struct heaptool_tags_ops),
		    "the agent's table: version 1, the header's size");
	}
	a = heaptool_tag("alpha");
	b = heaptool_tag("beta");
	check(a != 0 && b != 0 && a != b, "two names, two tags");
	check(heaptool_tag("alpha") == a, "the same name, the same tag");
	check(heaptool_tag(NULL) == 0 && heaptool_tag("") == 0,
	    "NULL and \"\" are untagged");
	prev = heaptool_tag_enter(a);
	check(prev == 0, "enter: the previous tag was 0");
	check(heaptool_tag_enter(b) == a, "enter again: the previous is alpha");
	heaptool_tag_leave(a);
	check(heaptool_tag_enter(prev) == a, "leave: alpha is current again");
	check(heaptool_tag_enter(12345) == 0,
	    "enter a tag that does not exist");
	check(heaptool_tag_enter(0) == 0, "... changes nothing");
	check(heaptool_assign(p, a, 2) == HEAPTOOL_EINVAL, "assign: bad kind");
	check(heaptool_assign(p, 12345, HEAPTOOL_MALLOC) == HEAPTOOL_EINVAL,
	    "assign: a tag that does not exist");
	check(heaptool_assign(NULL, a, HEAPTOOL_MALLOC) == HEAPTOOL_EINVAL,
	    "assign: NULL");
	check(heaptool_assign(p, a, HEAPTOOL_ARENA) == 0,
	    "assign: a live block, 0");
	stub_scoped();
	stub_plain();
	printf("sum %llu\n", (unsigned long long)sum);
	return failed;
}
