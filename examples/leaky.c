/*
 * leaky: a small program that leaks on purpose, to try heaptool on.
 *
 * It serves 200000 made-up requests for 30000 different user names.  Each
 * request builds a reply in a scratch buffer that it frees again (a normal
 * churn), and looks the user up in a "cache" that never evicts anything: every
 * new user adds an entry and a copy of the reply, and they stay until exit.
 *
 *	heaptool run -- examples/leaky
 *	heaptool report heaptool.*.heap
 *
 * shows cache_insert() holding about 10 MiB that nothing frees, while
 * handle_request() allocated far more but holds nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKET	 65536
#define NREQUEST 200000
#define NUSER	 30000

struct entry {
	struct entry *next;
	char *key;
	char *reply;
};

static struct entry *cache[NBUCKET];
static size_t ncached;

static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n)) == NULL) {
		fprintf(stderr, "leaky: out of memory\n");
		exit(1);
	}
	return p;
}

static struct entry *
cache_lookup(const char *key)
{
	struct entry *e;

	for (e = cache[hash(key) % NBUCKET]; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* The leak: entries go in and never come out. */
static __attribute__((noinline)) void
cache_insert(const char *key, const char *reply)
{
	struct entry *e;
	uint32_t b = hash(key) % NBUCKET;

	e = xmalloc(sizeof(*e));
	e->key = strdup(key);
	e->reply = strdup(reply);
	if (e->key == NULL || e->reply == NULL) {
		fprintf(stderr, "leaky: out of memory\n");
		exit(1);
	}
	e->next = cache[b];
	cache[b] = e;
	ncached++;
}

/* The churn: a scratch buffer per request, freed before it returns. */
static __attribute__((noinline)) size_t
handle_request(unsigned int n)
{
	char key[32], *buf;
	size_t len, bufsize = 1024 + n % 1024;

	snprintf(key, sizeof(key), "user%u", (n * 2654435761u) % NUSER);
	buf = xmalloc(bufsize);
	len = (size_t)snprintf(buf, bufsize,
	    "{\"user\": \"%s\", \"request\": %u, \"motd\": \"%*s\"}", key, n,
	    (int)(128 + n % 256), "hello");
	if (cache_lookup(key) == NULL)
		cache_insert(key, buf);
	free(buf);
	return len;
}

int
main(void)
{
	unsigned int i;
	size_t bytes = 0;

	for (i = 0; i < NREQUEST; i++)
		bytes += handle_request(i);
	printf("leaky: served %u requests (%zu bytes of replies), "
	       "%zu users cached\n",
	    NREQUEST, bytes, ncached);
	return 0;
}
