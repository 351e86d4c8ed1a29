/*
 * The string set (see intern.h): open addressing over FNV-1a.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

static uint64_t
hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static char **
slot(char **slots, size_t cap, const char *s)
{
	size_t i, mask = cap - 1;

	for (i = hash(s) & mask; slots[i] != NULL; i = (i + 1) & mask)
		if (strcmp(slots[i], s) == 0)
			break;
	return &slots[i];
}

static int
grow(struct ht_intern *t)
{
	char **slots;
	size_t cap = t->cap == 0 ? 256 : t->cap * 2, i;

	if ((slots = calloc(cap, sizeof(*slots))) == NULL)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i] != NULL)
			*slot(slots, cap, t->slots[i]) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *
ht_intern_take(struct ht_intern *t, char *s)
{
	char **sl;

	if (s == NULL)
		return NULL;
	/* At most half full: probes stay short. */
	if ((t->n + 1) * 2 > t->cap && grow(t) != 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	sl = slot(t->slots, t->cap, s);
	if (*sl != NULL) {
		free(s);
		return *sl;
	}
	*sl = s;
	t->n++;
	return s;
}

const char *
ht_intern(struct ht_intern *t, const char *s)
{
	char **sl;
	char *copy;

	if (s == NULL)
		return NULL;
	if (t->cap > 0 && *(sl = slot(t->slots, t->cap, s)) != NULL)
		return *sl;
	if ((copy = strdup(s)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	return ht_intern_take(t, copy);
}

void
ht_intern_free(struct ht_intern *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
