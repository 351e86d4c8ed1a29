/*
 * Writes a synthetic but realistic profile for the report benchmark
 * (bench/report.sh): 50 modules that are real shared libraries of this
 * machine (their real build-ids, address ranges from their PT_LOAD headers,
 * a plausible load bias each) and 20,000 sites of 8 to 20 frames whose
 * addresses lie in those modules' executable segments.  The symbolizer
 * therefore opens real files and does real lookups, as it would on a large
 * program's profile.
 *
 * A real program does not return to 280,000 different places: its stacks
 * share callers.  The frames are drawn from a pool of call sites per module
 * (1,000 each, 50,000 in all), the outermost two from a handful of "main
 * loop" addresses, so that the report meets about as many distinct
 * addresses as a big server's profile would.  The seed is fixed: every run
 * writes the same file on the same machine.
 *
 * usage: report-gen OUT [NSITES [NMODULES]]
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

#define LIBDIR		"/usr/lib/x86_64-linux-gnu"
#define POOL_PER_MODULE 1000
#define OUTER_POOL	8
#define PAGE		4096ULL

struct xseg {
	uint64_t lo, hi; /* a PF_X PT_LOAD, ELF addresses */
};

struct mod {
	struct ht_module_rec rec;
	struct xseg x[4];
	int nx;
	uint64_t pool[POOL_PER_MODULE];
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: fast, and the same sequence everywhere. */
static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t
rnd_range(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo);
}

/*
 * Fill m from the ELF file at path: the PT_LOAD extent, the executable
 * segments and the GNU build-id note.  Returns 0, or -1 if the file is not
 * a 64-bit shared object with all of them.
 */
static int
read_elf(const char *path, struct mod *m)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Nhdr *nh;
	struct stat st;
	uint64_t lo = UINT64_MAX, hi = 0, off, end;
	uint8_t *base;
	int fd, i, rc = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(*eh)) {
		close(fd);
		return -1;
	}
	base = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN ||
	    eh->e_phentsize != sizeof(*ph) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) >
		(uint64_t)st.st_size)
		goto out;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	m->nx = 0;
	m->rec.build_id_len = 0;
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			if ((ph[i].p_vaddr & ~(PAGE - 1)) < lo)
				lo = ph[i].p_vaddr & ~(PAGE - 1);
			if (ph[i].p_vaddr + ph[i].p_memsz > hi)
				hi = ph[i].p_vaddr + ph[i].p_memsz;
			if ((ph[i].p_flags & PF_X) && ph[i].p_filesz > 64 &&
			    m->nx < 4) {
				m->x[m->nx].lo = ph[i].p_vaddr;
				m->x[m->nx].hi = ph[i].p_vaddr + ph[i].p_filesz;
				m->nx++;
			}
		}
		if (ph[i].p_type != PT_NOTE ||
		    ph[i].p_offset + ph[i].p_filesz > (uint64_t)st.st_size)
			continue;
		off = ph[i].p_offset;
		end = off + ph[i].p_filesz;
		while (off + sizeof(*nh) <= end) {
			nh = (const Elf64_Nhdr *)(base + off);
			off += sizeof(*nh);
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 &&
			    off + 4 + nh->n_descsz <= end &&
			    memcmp(base + off, "GNU", 4) == 0 &&
			    nh->n_descsz <= HT_PROFILE_MAX_BUILD_ID) {
				memcpy(m->rec.build_id, base + off + 4,
				    nh->n_descsz);
				m->rec.build_id_len = nh->n_descsz;
			}
			off += ((nh->n_namesz + 3) & ~3U) +
			    ((nh->n_descsz + 3) & ~3U);
		}
	}
	if (m->nx > 0 && m->rec.build_id_len > 0 && lo < hi) {
		m->rec.start = lo; /* made absolute by the caller */
		m->rec.end = (hi + PAGE - 1) & ~(PAGE - 1);
		rc = 0;
	}
out:
	munmap(base, st.st_size);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Up to want distinct real shared objects of LIBDIR, sorted by path. */
static size_t
find_modules(struct mod *mods, size_t want)
{
	char **names = NULL, **seen, real[PATH_MAX], path[PATH_MAX];
	struct dirent *d;
	size_t n = 0, cap = 0, i, j, nseen = 0, got = 0;
	DIR *dir;

	if ((dir = opendir(LIBDIR)) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		if (strstr(d->d_name, ".so") == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((names = realloc(names, cap * sizeof(*names))) ==
			    NULL)
				abort();
		}
		if ((names[n++] = strdup(d->d_name)) == NULL)
			abort();
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_str);
	if ((seen = calloc(n + 1, sizeof(*seen))) == NULL)
		abort();
	for (i = 0; i < n && got < want; i++) {
		snprintf(path, sizeof(path), "%s/%s", LIBDIR, names[i]);
		if (realpath(path, real) == NULL)
			continue;
		for (j = 0; j < nseen; j++)
			if (strcmp(seen[j], real) == 0)
				break;
		if (j < nseen)
			continue;
		if ((seen[nseen++] = strdup(real)) == NULL)
			abort();
		memset(&mods[got], 0, sizeof(mods[got]));
		if (read_elf(real, &mods[got]) != 0)
			continue;
		/* The path as a process would have it mapped. */
		if ((mods[got].rec.path = strdup(real)) == NULL)
			abort();
		got++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	for (i = 0; i < nseen; i++)
		free(seen[i]);
	free(names);
	free(seen);
	return got;
}

static int
flush_file(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static uint8_t buf[1 << 16];
	struct ht_pwriter w;
	struct ht_meta meta;
	struct ht_thread_rec th;
	struct ht_site_rec *sites, *s;
	struct mod *mods, *m;
	struct xseg *x;
	uint64_t outer[OUTER_POOL], base, rate = 64 * 1024, tot = 0;
	uint64_t nsamp = 0, nlive = 0, tobj = 0, abytes = 0, aobj = 0;
	size_t nsites = 20000, nmods = 50, got, i, k;
	FILE *fp;
	int f;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: report-gen OUT [NSITES [NMODULES]]\n");
		return 2;
	}
	if (argc > 2)
		nsites = strtoul(argv[2], NULL, 10);
	if (argc > 3)
		nmods = strtoul(argv[3], NULL, 10);
	if (nmods == 0 || (mods = calloc(nmods, sizeof(*mods))) == NULL)
		return 1;
	if ((got = find_modules(mods, nmods)) < nmods) {
		fprintf(stderr,
		    "report-gen: found %zu shared objects with a "
		    "build-id in %s, want %zu\n",
		    got, LIBDIR, nmods);
		return 1;
	}

	/* Load each module at its own page-aligned place, as ld.so would,
	 * and pick its call sites: addresses in its executable segments. */
	base = 0x7f3a10000000ULL;
	for (i = 0; i < nmods; i++) {
		m = &mods[i];
		m->rec.bias = base - m->rec.start;
		m->rec.start += m->rec.bias;
		m->rec.end += m->rec.bias;
		base = (m->rec.end + 0x100000 + PAGE - 1) & ~(PAGE - 1);
		for (k = 0; k < POOL_PER_MODULE; k++) {
			x = &m->x[rnd() % m->nx];
			m->pool[k] = m->rec.bias + rnd_range(x->lo, x->hi);
		}
	}
	for (k = 0; k < OUTER_POOL; k++)
		outer[k] = mods[k % nmods].pool[k];

	/* The sites first: the header holds their peak. */
	if ((sites = calloc(nsites, sizeof(*sites))) == NULL)
		return 1;
	for (i = 0; i < nsites; i++) {
		s = &sites[i];
		s->samples = 1 + rnd() % 10;
		s->live_samples = rnd() % (s->samples + 1);
		s->alloc_bytes = s->samples * rate;
		s->alloc_objects = s->samples * (1 + rnd() % 64);
		s->inuse_bytes = s->live_samples * rate;
		s->inuse_objects =
		    s->alloc_objects * s->live_samples / s->samples;
		s->inuse_var = (double)s->live_samples * rate * rate;
		s->alloc_var = (double)s->samples * rate * rate;
		s->peak_inuse_bytes = s->inuse_bytes;
		s->peak_inuse_objects = s->inuse_objects;
		s->nframes = 8 + rnd() % 13;
		/* Innermost frames cluster in a few modules (the code that
		 * allocates), outer ones spread over all of them. */
		m = &mods[rnd() % (nmods < 10 ? nmods : 10)];
		for (f = 0; f < (int)s->nframes - 2; f++) {
			s->frames[f] = m->pool[rnd() % POOL_PER_MODULE];
			if (rnd() % 3 == 0)
				m = &mods[rnd() % nmods];
		}
		s->frames[f++] = outer[rnd() % OUTER_POOL];
		s->frames[f] = outer[0];
		tot += s->inuse_bytes;
		nsamp += s->samples;
		nlive += s->live_samples;
		tobj += s->inuse_objects;
		abytes += s->alloc_bytes;
		aobj += s->alloc_objects;
	}
	if ((fp = fopen(argv[1], "wb")) == NULL) {
		fprintf(stderr, "report-gen: %s: %s\n", argv[1],
		    strerror(errno));
		return 1;
	}
	ht_pw_init(&w, buf, sizeof(buf), flush_file, fp);
	memset(&meta, 0, sizeof(meta));
	meta.pid = 4242;
	meta.epoch = 1;
	meta.rate = rate;
	meta.state = HT_STATE_STOPPED;
	meta.start_ns = 1780000000ULL * 1000000000ULL;
	meta.end_ns = meta.start_ns + 3600ULL * 1000000000ULL;
	meta.peak_ns = meta.start_ns + 1800ULL * 1000000000ULL;
	meta.overhead_bytes = 24 << 20;
	meta.samples = nsamp;
	meta.live_samples = nlive;
	snprintf(meta.command, sizeof(meta.command), "report-gen");
	meta.peak_inuse_bytes = tot;
	ht_pw_meta(&w, &meta);
	for (i = 0; i < nmods; i++)
		ht_pw_module(&w, &mods[i].rec);
	for (i = 0; i < nsites; i++)
		ht_pw_site(&w, &sites[i]);

	memset(&th, 0, sizeof(th));
	th.tid = 4242;
	snprintf(th.name, sizeof(th.name), "report-gen");
	th.inuse_bytes = tot;
	th.inuse_objects = tobj;
	th.alloc_bytes = abytes;
	th.alloc_objects = aobj;
	th.samples = nsamp;
	ht_pw_thread(&w, &th);
	if (ht_pw_finish(&w) != 0 || fclose(fp) != 0) {
		fprintf(stderr, "report-gen: %s: write failed\n", argv[1]);
		return 1;
	}
	printf("%zu sites over %zu modules\n", nsites, nmods);
	return 0;
}
