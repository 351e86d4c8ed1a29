/*
 * Page protections for GOT patching (maps.h): the ranges of
 * /proc/self/maps that overlap the module set of the pass, sorted as the
 * kernel lists them, looked up by binary search.
 */
#include <sys/mman.h>

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "prim.h"

#define RANGES_FIRST 256
#define MAPS_BUF     16384 /* longer than any line of maps */

struct range {
	uintptr_t start;
	uintptr_t end;
	int prot; /* -1: shared mapping, never written */
};

static struct range *ranges;
static size_t nranges, capranges;
static char *mapsbuf;
static size_t pagesz;
static const struct ht_modset *pass_set;
static int pass_maps; /* 1 read, -1 failed, 0 to do */

int
ht_maps_init(void)
{
	if (pagesz == 0)
		pagesz = ht_prim_page_size();
	if (ranges == NULL &&
	    (ranges = ht_mem_map(RANGES_FIRST * sizeof(*ranges))) != NULL)
		capranges = RANGES_FIRST;
	if (mapsbuf == NULL)
		mapsbuf = ht_mem_map(MAPS_BUF);
	return ranges != NULL && mapsbuf != NULL ? 0 : -1;
}

void
ht_maps_begin(const struct ht_modset *set)
{
	pass_set = set;
	pass_maps = 0;
}

static int
set_overlaps(const struct ht_modset *set, uintptr_t lo, uintptr_t hi)
{
	size_t a = ht_modules_lower(set, hi);

	/* Modules are sorted by start and do not overlap: only the last one
	 * starting below hi can reach into [lo, hi). */
	return a > 0 && set->mods[a - 1].end > lo;
}

static int
parse_hex(const char **pp, const char *end, uintptr_t *out)
{
	const char *p = *pp;
	uintptr_t v = 0;
	int d, digits = 0;

	for (; p < end; p++, digits++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v << 4 | (uintptr_t)d;
	}
	*pp = p;
	*out = v;
	return digits > 0 && digits <= 16 ? 0 : -1;
}

static int
maps_line(void *arg, const char *p, const char *end)
{
	const struct ht_modset *set = arg;
	struct range *r;
	uintptr_t lo, hi;
	int prot = 0;

	if (parse_hex(&p, end, &lo) != 0 || p == end || *p++ != '-' ||
	    parse_hex(&p, end, &hi) != 0 || end - p < 5 || *p++ != ' ')
		return 0; /* not a mapping line: nothing to learn */
	if (!set_overlaps(set, lo, hi))
		return 0;
	if (p[0] == 'r')
		prot |= PROT_READ;
	if (p[1] == 'w')
		prot |= PROT_WRITE;
	if (p[2] == 'x')
		prot |= PROT_EXEC;
	if (p[3] != 'p')
		prot = -1;
	if (nranges == capranges) {
		r = ht_mem_map(2 * capranges * sizeof(*r));
		if (r == NULL)
			return -1;
		memcpy(r, ranges, nranges * sizeof(*r));
		ht_mem_unmap(ranges, capranges * sizeof(*r));
		ranges = r;
		capranges *= 2;
	}
	r = &ranges[nranges++];
	r->start = lo;
	r->end = hi;
	r->prot = prot;
	return 0;
}

static int
read_maps(const struct ht_modset *set)
{
	char path[64];

	nranges = 0;
	ht_prim_self_path(path, sizeof(path), "maps");
	return ht_prim_read_lines(path, mapsbuf, MAPS_BUF, maps_line,
	    (void *)set);
}

/* The loader's view: the PT_LOAD's flags, but read-only inside RELRO (glibc
 * protects [start, end) of PT_GNU_RELRO, both rounded down to pages). */
static int
phdr_prot(const struct ht_module *m, uintptr_t addr)
{
	const ElfW(Phdr) * ph;
	uintptr_t a, lo, hi;
	int prot = -1;
	size_t i;

	for (i = 0; i < m->phnum; i++) {
		ph = &m->phdr[i];
		a = m->bias + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= (a & ~(pagesz - 1)) &&
		    addr < a + ph->p_memsz) {
			prot = 0;
			if (ph->p_flags & PF_R)
				prot |= PROT_READ;
			if (ph->p_flags & PF_W)
				prot |= PROT_WRITE;
			if (ph->p_flags & PF_X)
				prot |= PROT_EXEC;
		}
	}
	for (i = 0; prot >= 0 && i < m->phnum; i++) {
		ph = &m->phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		lo = (m->bias + ph->p_vaddr) & ~(pagesz - 1);
		hi = (m->bias + ph->p_vaddr + ph->p_memsz) & ~(pagesz - 1);
		if (addr >= lo && addr < hi)
			prot = PROT_READ;
	}
	return prot;
}

int
ht_maps_prot(const struct ht_module *m, uintptr_t addr)
{
	size_t lo = 0, hi;

	if (pass_maps == 0)
		pass_maps = read_maps(pass_set) == 0 ? 1 : -1;
	if (pass_maps < 0)
		return phdr_prot(m, addr);
	hi = nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < ranges[mid].start)
			hi = mid;
		else if (addr >= ranges[mid].end)
			lo = mid + 1;
		else
			return ranges[mid].prot;
	}
	return -1;
}
