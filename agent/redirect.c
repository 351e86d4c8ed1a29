/*
 * The inline backend's redirects and exclusions (redirect.h).
 */
#include <stddef.h>

#include "redirect.h"

static struct {
	void *from, *to;
} redirects[HT_REDIRECT_MAX];
static size_t nredirects;
static void *excluded[HT_REDIRECT_MAX];
static size_t nexcluded;

int
ht_redirect_set(void *from, void *to)
{
	size_t i;

	for (i = 0; i < nredirects && redirects[i].from != from; i++)
		;
	if (i == nredirects) {
		if (nredirects == HT_REDIRECT_MAX)
			return -1;
		nredirects++;
	}
	redirects[i].from = from;
	redirects[i].to = to;
	return 0;
}

int
ht_redirect_exclude(void *fn)
{
	size_t i;

	for (i = 0; i < nexcluded && excluded[i] != fn; i++)
		;
	if (i == nexcluded) {
		if (nexcluded == HT_REDIRECT_MAX)
			return -1;
		excluded[nexcluded++] = fn;
	}
	return 0;
}

void *
ht_redirect_of(void *orig)
{
	size_t i;

	for (i = 0; i < nexcluded; i++)
		if (excluded[i] == orig)
			return NULL;
	for (i = 0; i < nredirects; i++)
		if (redirects[i].from == orig)
			return redirects[i].to;
	return orig;
}

void
ht_redirect_forget_excluded(void)
{
	nexcluded = 0;
}
