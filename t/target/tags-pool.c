/*
 * Fixture of t/t0065-tags-pool.sh: OpenJDK NMT's chunk pool (seed 000)
 * written against heaptool's tags (include/heaptool.h), with no link to
 * the agent: run it under heaptool run.  Usage: tags-pool DIR [SEED].
 *
 * Chunks of 32 KiB are made by chunk_new() under the tag Chunk (malloc
 * memory: free chunks of the pool); handing one to an arena assigns it to
 * the arena's tag (Compiler or Thread) as arena memory, giving it back
 * assigns it to Chunk as malloc memory again, and a pruned chunk is freed.
 * One chunk of 100 KiB (non-standard) is made for an arena at once and
 * freed straight from it.  After each step the fixture writes DIR/N.heap
 * (heaptool_dump, found with dlsym) and prints the figures it expects
 * there, its own book-keeping of the four cases of NMT's "Breakdown of
 * operations":
 *   step N NAME  TAG KIND BYTES COUNT PEAK_BYTES PEAK_COUNT ...  created
 *                CREATED_BYTES CREATED_COUNT
 * for the lines Chunk/malloc, Compiler/arena, Thread/arena; CREATED is
 * what is live of every chunk made (the total, which assign never
 * changes).  Then a new session (heaptool_stop, heaptool_start(1)): the
 * dump "epoch.heap" must show none of the old figures, though the names
 * stay, and an old chunk assigned changes nothing; "epoch2.heap" after one
 * new chunk.
 *
 * With SEED (the sampled runs of the test) it repeats the whole cycle
 * with many more chunks of random sizes, SEED drawing them, and writes
 * only DIR/sampled.heap with its exact figures on a "exact" line.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "heaptool.h"

#define CHUNK (32u << 10)
#define BIG   (100u << 10)
#define MAXCH 4096

enum { L_CHUNK, L_COMPILER, L_THREAD, NLINES };

struct line {
	const char *tag;
	const char *kind;
	uint64_t bytes, count, peak_bytes, peak_count;
};

static struct line lines[NLINES] = {
	{ "Chunk", "malloc", 0, 0, 0, 0 },
	{ "Compiler", "arena", 0, 0, 0, 0 },
	{ "Thread", "arena", 0, 0, 0, 0 },
};
static uint32_t tags[NLINES];
static uint64_t created_bytes, created_count, sum;
static const char *dir;
static int (*dump)(const char *);
static int failed;

struct chunk {
	void *p;
	size_t size;
	int line; /* -1: freed */
};
static struct chunk ch[MAXCH];
static size_t nch;

static void
line_add(int l, size_t size, int sign)
{
	struct line *x = &lines[l];

	if (sign > 0) {
		x->bytes += size;
		x->count++;
		if (x->bytes > x->peak_bytes) {
			x->peak_bytes = x->bytes;
			x->peak_count = x->count;
		}
	} else {
		x->bytes -= size;
		x->count--;
	}
}

/* Created: under the tag Chunk, as malloc memory (NMT: "total malloc"
 * size and count go up, through the normal malloc). */
FX_NOINLINE static struct chunk *
chunk_new(size_t size)
{
	HEAPTOOL_TAG_SCOPE("Chunk");
	struct chunk *c = &ch[nch++];

	c->p = malloc(size); /* SITE chunk_new */
	if (c->p == NULL)
		exit(2);
	fx_fill(c->p, size, nch, &sum);
	c->size = size;
	c->line = L_CHUNK;
	line_add(L_CHUNK, size, 1);
	created_bytes += size;
	created_count++;
	return c;
}

/* To an arena of tag l, or back to the pool (l = L_CHUNK). */
static void
chunk_move(struct chunk *c, int l)
{
	int kind = l == L_CHUNK ? HEAPTOOL_MALLOC : HEAPTOOL_ARENA;

	if (heaptool_assign(c->p, tags[l], kind) != 0) {
		printf("not ok - heaptool_assign failed\n");
		failed = 1;
	}
	line_add(c->line, c->size, -1);
	line_add(l, c->size, 1);
	c->line = l;
}

/* Destroyed: freed from wherever it is (NMT: "total malloc" down). */
static void
chunk_free(struct chunk *c)
{
	line_add(c->line, c->size, -1);
	free(c->p);
	c->line = -1;
	created_bytes -= c->size;
	created_count--;
}

static void
step(int n, const char *name)
{
	char path[4096];
	int l;

	snprintf(path, sizeof(path), "%s/%d.heap", dir, n);
	if (dump(path) != 0) {
		printf("not ok - heaptool_dump %s\n", path);
		failed = 1;
	}
	printf("step %d %s", n, name);
	for (l = 0; l < NLINES; l++)
		printf(" %s %s %llu %llu %llu %llu", lines[l].tag,
		    lines[l].kind, (unsigned long long)lines[l].bytes,
		    (unsigned long long)lines[l].count,
		    (unsigned long long)lines[l].peak_bytes,
		    (unsigned long long)lines[l].peak_count);
	printf(" created %llu %llu\n", (unsigned long long)created_bytes,
	    (unsigned long long)created_count);
}

static void
exact_run(void)
{
	struct chunk *pool[4], *big;
	size_t i;

	for (i = 0; i < 4; i++)
		pool[i] = chunk_new(CHUNK);
	step(1, "create-4-into-pool");
	chunk_move(pool[0], L_COMPILER);
	chunk_move(pool[1], L_COMPILER);
	step(2, "assign-2-to-compiler");
	chunk_move(pool[2], L_THREAD);
	step(3, "assign-1-to-thread");
	big = chunk_new(BIG);
	chunk_move(big, L_COMPILER);
	step(4, "create-big-for-compiler");
	chunk_move(pool[0], L_CHUNK);
	step(5, "return-1-compiler-to-pool");
	chunk_move(pool[2], L_CHUNK);
	step(6, "return-thread-to-pool");
	chunk_free(pool[3]);
	step(7, "prune-1-from-pool");
	chunk_free(big);
	step(8, "destroy-big-from-compiler");
}

static uint64_t rng = 88172645463325252ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random chunks moved at random; the figures it ends with exact. */
static void
sampled_run(unsigned long seed)
{
	char path[4096];
	size_t i;
	int l;

	rng ^= seed * 0x9e3779b97f4a7c15ull;
	for (i = 0; i < 3000; i++) {
		uint64_t r = next();
		struct chunk *c;

		if (nch < MAXCH && (r & 3) != 0) {
			c = chunk_new(1024 + (size_t)(next() % (64u << 10)));
			if (next() % 3 != 0)
				chunk_move(c, 1 + (int)(next() % 2));
			continue;
		}
		c = &ch[next() % (nch ? nch : 1)];
		if (nch == 0 || c->line < 0)
			continue;
		if ((r >> 8) % 4 == 0)
			chunk_free(c);
		else
			chunk_move(c, (int)((r >> 16) % NLINES));
	}
	snprintf(path, sizeof(path), "%s/sampled.heap", dir);
	if (dump(path) != 0)
		failed = 1;
	printf("exact");
	for (l = 0; l < NLINES; l++)
		printf(" %s %s %llu %llu", lines[l].tag, lines[l].kind,
		    (unsigned long long)lines[l].bytes,
		    (unsigned long long)lines[l].count);
	printf("\n");
}

int
main(int argc, char **argv)
{
	int (*start)(size_t);
	int (*stop)(void);
	char path[4096];
	struct chunk *c;

	if (argc < 2)
		return 2;
	dir = argv[1];
	/* No buffer to allocate between the steps. */
	setvbuf(stdout, NULL, _IONBF, 0);
	dump = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptool_dump");
	start = (int (*)(size_t))dlsym(RTLD_DEFAULT, "heaptool_start");
	stop = (int (*)(void))dlsym(RTLD_DEFAULT, "heaptool_stop");
	if (dump == NULL || start == NULL || stop == NULL) {
		printf("not ok - no agent: run me under heaptool run\n");
		return 1;
	}
	tags[L_CHUNK] = heaptool_tag("Chunk");
	tags[L_COMPILER] = heaptool_tag("Compiler");
	tags[L_THREAD] = heaptool_tag("Thread");
	printf("tags %u %u %u same %u\n", tags[0], tags[1], tags[2],
	    heaptool_tag("Compiler"));
	if (argc > 2) {
		sampled_run(strtoul(argv[2], NULL, 10));
		return failed;
	}
	step(0, "start");
	exact_run();
	/* A new session: the lines start from nothing. */
	c = &ch[1]; /* still in Compiler's arena */
	if (stop() != 0 || start(1) != 0) {
		printf("not ok - heaptool_stop/start\n");
		return 1;
	}
	if (heaptool_assign(c->p, tags[L_THREAD], HEAPTOOL_ARENA) != 0)
		failed = 1;
	snprintf(path, sizeof(path), "%s/epoch.heap", dir);
	if (dump(path) != 0)
		failed = 1;
	(void)chunk_new(CHUNK);
	snprintf(path, sizeof(path), "%s/epoch2.heap", dir);
	if (dump(path) != 0)
		failed = 1;
	printf("sum %llu\n", (unsigned long long)sum);
	return failed;
}
