/*
 * The address map (see addrmap.h): a sweep over the ranges' ends.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* For the sort of range indexes by start: the starts being sorted. */
static const uint64_t *sort_start;

static int
by_start(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (sort_start[x] != sort_start[y])
		return sort_start[x] < sort_start[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A max-heap of range indexes. */
static void
heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++, p;

	while (i > 0 && h[p = (i - 1) / 2] < v) {
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static void
heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--(*n)], i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = v;
}

/* Append piece [lo, ...) answering idx, merged into the last if that
 * gives the same answer. */
static void
piece(struct ht_addrmap *m, uint64_t lo, int64_t idx)
{
	if (m->npiece > 0 && m->idx[m->npiece - 1] == idx)
		return;
	if (m->npiece > 0 && m->lo[m->npiece - 1] == lo) {
		m->idx[m->npiece - 1] = idx;
		if (m->npiece > 1 && m->idx[m->npiece - 2] == idx)
			m->npiece--;
		return;
	}
	m->lo[m->npiece] = lo;
	m->idx[m->npiece++] = idx;
}

int
ht_addrmap_build(struct ht_addrmap *m, const uint64_t *start,
    const uint64_t *end, size_t n)
{
	uint64_t *pts = NULL;
	size_t *order = NULL, *heap = NULL, npts = 0, nord = 0, nheap = 0;
	size_t i, j, k;

	memset(m, 0, sizeof(*m));
	if (n == 0)
		return 0;
	pts = calloc(2 * n, sizeof(*pts));
	order = calloc(n, sizeof(*order));
	heap = calloc(n, sizeof(*heap));
	m->lo = calloc(2 * n + 1, sizeof(*m->lo));
	m->idx = calloc(2 * n + 1, sizeof(*m->idx));
	if (pts == NULL || order == NULL || heap == NULL || m->lo == NULL ||
	    m->idx == NULL)
		goto out_nomem;
	for (i = 0; i < n; i++) {
		if (start[i] >= end[i])
			continue;
		pts[npts++] = start[i];
		pts[npts++] = end[i];
		order[nord++] = i;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	sort_start = start;
	qsort(order, nord, sizeof(*order), by_start);

	/* Each boundary starts a piece: the ranges begun by then, less those
	 * ended (dropped from the heap's top once they are, lazily: the
	 * sweep only goes up), and the greatest index of what is left. */
	piece(m, 0, -1);
	for (i = 0, k = 0; i < npts; i = j) {
		for (j = i; j < npts && pts[j] == pts[i]; j++)
			continue;
		while (k < nord && start[order[k]] <= pts[i])
			heap_push(heap, &nheap, order[k++]);
		while (nheap > 0 && end[heap[0]] <= pts[i])
			heap_pop(heap, &nheap);
		piece(m, pts[i], nheap > 0 ? (int64_t)heap[0] : -1);
	}
	free(pts);
	free(order);
	free(heap);
	return 0;

out_nomem:
	free(pts);
	free(order);
	free(heap);
	ht_addrmap_free(m);
	errno = ENOMEM;
	return -1;
}

int64_t
ht_addrmap_find(const struct ht_addrmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->npiece, mid;

	/* The last piece that starts at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->lo[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? m->idx[lo - 1] : -1;
}

void
ht_addrmap_free(struct ht_addrmap *m)
{
	free(m->lo);
	free(m->idx);
	memset(m, 0, sizeof(*m));
}
