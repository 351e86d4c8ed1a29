/*
 * The module set, read from dl_iterate_phdr.  The callback runs with the
 * loader's lock held, so it only copies what it needs into memory mapped
 * before the walk; nothing here allocates through malloc.
 */
#include <sys/auxv.h>

#include <elf.h>
#include <link.h>
#include <string.h>

#include "mem.h"
#include "modules.h"
#include "prim.h"

unsigned ht_modules_generation;
static struct ht_modset current;

struct scan {
	struct ht_module *mods;
	size_t cap;
	size_t n;
	size_t seen;
};

static void
copy_path(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void
read_build_id(struct ht_module *m, uintptr_t bias, const ElfW(Phdr) * ph)
{
	const uint8_t *p = (const uint8_t *)(bias + ph->p_vaddr);
	const uint8_t *end = p + ph->p_memsz;

	/* ELF notes: namesz, descsz, type, then name and desc, each padded
	 * to 4 bytes (8-byte alignment for PT_NOTE with p_align 8 pads the
	 * same way for GNU notes, whose name is 4 bytes). */
	while (p + 12 <= end) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
		size_t nsz = (nh->n_namesz + 3) & ~3u;
		size_t dsz = (nh->n_descsz + 3) & ~3u;
		const uint8_t *name = p + sizeof(*nh);
		const uint8_t *desc = name + nsz;

		if (desc + dsz > end || desc + dsz < p)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 &&
		    nh->n_descsz <= HT_PROFILE_MAX_BUILD_ID) {
			memcpy(m->build_id, desc, nh->n_descsz);
			m->build_id_len = nh->n_descsz;
			return;
		}
		p = desc + dsz;
	}
}

static int
scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	struct ht_module *m;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	uintptr_t tlo = UINTPTR_MAX, thi = 0;
	uintptr_t self = (uintptr_t)&ht_modules_scan;
	const char *base;
	int i;

	(void)size;
	s->seen++;
	if (s->n >= s->cap)
		return 0;
	m = &s->mods[s->n];
	memset(m, 0, sizeof(*m));
	m->bias = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	m->phnum = info->dlpi_phnum;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		switch (ph->p_type) {
		case PT_LOAD:
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
			if (ph->p_flags & PF_X) {
				if (a < tlo)
					tlo = a;
				if (a + ph->p_memsz > thi)
					thi = a + ph->p_memsz;
			}
			break;
		case PT_GNU_EH_FRAME:
			m->eh_frame_hdr = (const uint8_t *)a;
			m->eh_frame_hdr_len = ph->p_memsz;
			break;
		case PT_DYNAMIC:
			m->dynamic = (const ElfW(Dyn) *)a;
			break;
		case PT_NOTE:
			if (m->build_id_len == 0)
				read_build_id(m, info->dlpi_addr, ph);
			break;
		}
	}
	if (hi == 0)
		return 0; /* nothing mapped: not a module we can use */
	m->start = lo & ~(uintptr_t)4095;
	m->end = (hi + 4095) & ~(uintptr_t)4095;
	if (thi != 0) {
		m->text_start = tlo;
		m->text_end = thi;
	}

	if (info->dlpi_addr == getauxval(AT_SYSINFO_EHDR) &&
	    info->dlpi_addr != 0) {
		m->flags |= HT_MOD_VDSO;
		copy_path(m->path, sizeof(m->path), "[vdso]");
	} else if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
		m->flags |= HT_MOD_MAIN;
		ht_prim_exe_path(m->path, sizeof(m->path));
	} else
		copy_path(m->path, sizeof(m->path), info->dlpi_name);
	if (info->dlpi_addr != 0 && info->dlpi_addr == getauxval(AT_BASE))
		m->flags |= HT_MOD_LDSO;
	if (self >= m->start && self < m->end)
		m->flags |= HT_MOD_AGENT;
	base = strrchr(m->path, '/');
	base = base != NULL ? base + 1 : m->path;
	if (strncmp(base, "libc.so", 7) == 0)
		m->flags |= HT_MOD_LIBC;
	s->n++;
	return 0;
}

static int
count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(*(size_t *)arg)++;
	return 0;
}

int
ht_modules_scan(struct ht_modset *out)
{
	struct scan s;
	size_t count = 0, i, j;

	memset(out, 0, sizeof(*out));
	dl_iterate_phdr(count_one, &count);
	/* Modules may be loaded between the count and the walk: leave room,
	 * and walk again with more if the room was not enough. */
	for (s.cap = count + 16;; s.cap = s.seen + 16) {
		if (s.cap > HT_MAX_MODULES)
			s.cap = HT_MAX_MODULES;
		out->maplen = s.cap * sizeof(struct ht_module);
		s.mods = ht_mem_map(out->maplen);
		if (s.mods == NULL)
			return -1;
		s.n = s.seen = 0;
		dl_iterate_phdr(scan_one, &s);
		if (s.seen <= s.cap || s.cap == HT_MAX_MODULES)
			break;
		ht_mem_unmap(s.mods, out->maplen);
	}
	/* Insertion sort by start: the set is small and nearly sorted. */
	for (i = 1; i < s.n; i++) {
		struct ht_module t = s.mods[i];

		for (j = i; j > 0 && s.mods[j - 1].start > t.start; j--)
			s.mods[j] = s.mods[j - 1];
		s.mods[j] = t;
	}
	out->mods = s.mods;
	out->n = s.n;
	return 0;
}

void
ht_modules_release(struct ht_modset *set)
{
	if (set->mods != NULL)
		ht_mem_unmap(set->mods, set->maplen);
	memset(set, 0, sizeof(*set));
}

void
ht_modules_publish(struct ht_modset *set)
{
	struct ht_modset old = current;

	current = *set;
	memset(set, 0, sizeof(*set));
	ht_modules_generation++;
	ht_modules_release(&old);
}

const struct ht_module *
ht_modules_find(uintptr_t addr)
{
	size_t lo = 0, hi = current.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < current.mods[mid].start)
			hi = mid;
		else if (addr >= current.mods[mid].end)
			lo = mid + 1;
		else
			return &current.mods[mid];
	}
	return NULL;
}

size_t
ht_modules_lower(const struct ht_modset *set, uintptr_t addr)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->mods[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ht_module *
ht_modules_at(const struct ht_modset *set, uintptr_t start)
{
	size_t i = ht_modules_lower(set, start);

	return i < set->n && set->mods[i].start == start ? &set->mods[i] : NULL;
}

const struct ht_modset *
ht_modules_current(void)
{
	return &current;
}
