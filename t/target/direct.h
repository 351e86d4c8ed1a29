/*
 * The driver of the fixtures that call an allocator's own API directly
 * (mi-direct.c, je-direct.c, tc-direct.cc; t/t0051 to t0053): they keep
 * their own count of what they allocated, freed and still hold, by the
 * rules heaptool states (heaptool(1): a reallocation is a free of the old
 * block and a new one of the size asked for, also in place), and a
 * checksum of what they wrote.
 *
 * Each prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line, with read(2) (no stdio: its buffers are allocations too):
 *   work   the fixture's work (fx_work, the fixture's own); prints
 *          "worked ALLOC_OBJECTS ALLOC_BYTES INUSE_OBJECTS INUSE_BYTES
 *          FREED_OBJECTS CHECKSUM" (the totals so far, in decimal, the
 *          checksum in hex)
 *   free   frees every block it still holds (fx_release); prints "freed"
 *          and the totals as above
 *   quit   exit 0 (so does end of file)
 */
#ifndef HT_DIRECT_H
#define HT_DIRECT_H

#include <sys/prctl.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define FX_KEEP 4096

struct fx_block {
	void *p;
	size_t n;
	int how; /* the fixture's own: how to free it */
};

static struct fx_block fx_kept[FX_KEEP];
static size_t fx_nkept;
static uint64_t fx_aobj, fx_abytes, fx_iobj, fx_ibytes, fx_fobj;
static uint64_t fx_sum = 0xcbf29ce484222325ULL;

/* p, n bytes, was allocated: count it, write it, keep it (how). */
static inline void *
fx_got(void *p, size_t n, int how)
{
	if (p == NULL || fx_nkept == FX_KEEP)
		_exit(3);
	fx_aobj++;
	fx_abytes += n;
	fx_iobj++;
	fx_ibytes += n;
	fx_fill(p, n, fx_aobj, &fx_sum);
	fx_kept[fx_nkept].p = p;
	fx_kept[fx_nkept].n = n;
	fx_kept[fx_nkept].how = how;
	fx_nkept++;
	return p;
}

/* A block of n bytes that the fixture does not keep (freed at once by the
 * caller): counted as allocated and freed. */
static inline void
fx_transient(void *p, size_t n)
{
	if (p == NULL)
		_exit(3);
	fx_aobj++;
	fx_abytes += n;
	fx_fobj++;
	fx_fill(p, n, fx_aobj, &fx_sum);
}

/* The kept block i is about to go (freed, or reallocated away). */
static inline void
fx_gone(size_t i)
{
	fx_iobj--;
	fx_ibytes -= fx_kept[i].n;
	fx_fobj++;
	fx_kept[i] = fx_kept[--fx_nkept];
}

/* The index of the last block kept. */
static inline size_t
fx_last(void)
{
	return fx_nkept - 1;
}

static inline void
fx_say(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
	    "%s %llu %llu %llu %llu %llu %016llx\n", what,
	    (unsigned long long)fx_aobj, (unsigned long long)fx_abytes,
	    (unsigned long long)fx_iobj, (unsigned long long)fx_ibytes,
	    (unsigned long long)fx_fobj, (unsigned long long)fx_sum);

	if (n > 0 && write(1, buf, (size_t)n) != n)
		_exit(2);
}

void fx_work(void);
void fx_release(void);

static inline int
fx_main(void)
{
	char line[64];
	size_t len = 0;
	ssize_t r;

	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		return 2;
	for (;;) {
		char *nl = (char *)memchr(line, '\n', len);

		if (nl == NULL) {
			if (len == sizeof(line))
				return 2;
			r = read(0, line + len, sizeof(line) - len);
			if (r <= 0)
				return 0;
			len += (size_t)r;
			continue;
		}
		*nl = '\0';
		if (strcmp(line, "work") == 0) {
			fx_work();
			fx_say("worked");
		} else if (strcmp(line, "free") == 0) {
			fx_release();
			fx_say("freed");
		} else if (strcmp(line, "quit") == 0)
			return 0;
		len -= (size_t)(nl + 1 - line);
		memmove(line, nl + 1, len);
	}
}

#endif
