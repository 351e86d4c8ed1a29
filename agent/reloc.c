/*
 * Dynamic sections and relocation tables of loaded modules (reloc.h).
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "modules.h"
#include "reloc.h"

#define DYN_MAX	  4096	     /* a sane bound on dynamic entries */
#define CHAIN_MAX (1u << 20) /* and on the steps of a hash chain */

/*
 * Addresses in the dynamic section.  glibc rewrites most d_ptr entries to
 * run-time addresses, but not all of them, and not in every object (the
 * vdso, or ports whose dynamic section is read-only): an address outside
 * the module is taken as a link-time address and moved by the bias.
 */
static uintptr_t
dyn_addr(const struct ht_module *m, uintptr_t v, size_t len)
{
	if (v == 0)
		return 0;
	if (!ht_modules_holds(m, v))
		v += m->bias;
	if (!ht_modules_holds(m, v) || len > m->end - v)
		return 0;
	return v;
}

int
ht_reloc_read(const struct ht_module *m, struct ht_reloc *d)
{
	const ElfW(Dyn) * dyn;
	uintptr_t symtab = 0, strtab = 0, gnu_hash = 0, hash = 0;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->pltrela = 1;
	d->relaent = sizeof(ElfW(Rela));
	d->relent = sizeof(ElfW(Rel));
	if (m->dynamic == NULL || !ht_modules_holds(m, (uintptr_t)m->dynamic))
		return -1;
	for (dyn = m->dynamic, i = 0; dyn->d_tag != DT_NULL && i < DYN_MAX;
	     dyn++, i++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = dyn->d_un.d_ptr;
			break;
		case DT_STRTAB:
			strtab = dyn->d_un.d_ptr;
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = dyn->d_un.d_ptr;
			break;
		case DT_PLTRELSZ:
			d->pltrelsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			d->pltrela = dyn->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			d->rela = dyn->d_un.d_ptr;
			break;
		case DT_RELASZ:
			d->relasz = dyn->d_un.d_val;
			break;
		case DT_RELAENT:
			d->relaent = dyn->d_un.d_val;
			break;
		case DT_REL:
			d->rel = dyn->d_un.d_ptr;
			break;
		case DT_RELSZ:
			d->relsz = dyn->d_un.d_val;
			break;
		case DT_RELENT:
			d->relent = dyn->d_un.d_val;
			break;
		case DT_BIND_NOW:
			d->bind_now = 1;
			break;
		case DT_GNU_HASH:
			gnu_hash = dyn->d_un.d_ptr;
			break;
		case DT_HASH:
			hash = dyn->d_un.d_ptr;
			break;
		case DT_FLAGS:
			if (dyn->d_un.d_val & DF_BIND_NOW)
				d->bind_now = 1;
			break;
		case DT_FLAGS_1:
			if (dyn->d_un.d_val & DF_1_NOW)
				d->bind_now = 1;
			break;
		}
	}
	d->symtab = (const ElfW(Sym) *)dyn_addr(m, symtab, sizeof(ElfW(Sym)));
	d->strtab = (const char *)dyn_addr(m, strtab, d->strsz);
	if (d->symtab == NULL || d->strtab == NULL || d->strsz == 0)
		return -1;
	d->jmprel = dyn_addr(m, d->jmprel, d->pltrelsz);
	d->rela = dyn_addr(m, d->rela, d->relasz);
	d->rel = dyn_addr(m, d->rel, d->relsz);
	/* Their sizes are in their headers: lookup checks every read. */
	d->gnu_hash = (const uint32_t *)dyn_addr(m, gnu_hash, 16);
	d->hash = (const uint32_t *)dyn_addr(m, hash, 8);
	return 0;
}

/* Can n words (of 4 bytes) be read at p, inside m? */
static int
words_in(const struct ht_module *m, const uint32_t *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	return a % 4 == 0 && ht_modules_holds(m, a) && n <= (m->end - a) / 4;
}

/* Symbol symi if it is named name and defined. */
static const ElfW(Sym) *
    sym_named(const struct ht_module *m, const struct ht_reloc *d, size_t symi,
	const char *name, size_t len)
{
	const ElfW(Sym) *sym = ht_reloc_sym(m, d, symi);
	size_t off;

	if (sym == NULL || sym->st_shndx == SHN_UNDEF)
		return NULL;
	off = sym->st_name;
	if (off >= d->strsz || len >= d->strsz - off ||
	    memcmp(d->strtab + off, name, len + 1) != 0)
		return NULL;
	return sym;
}

/*
 * DT_GNU_HASH: nbuckets, symoffset, bloom words, bloom shift; the bloom
 * filter (address-sized words); the buckets; then one chain word per
 * symbol from symoffset on, the symbol's hash with its low bit set on the
 * last of a chain.
 */
static const ElfW(Sym) *
    gnu_lookup(const struct ht_module *m, const struct ht_reloc *d,
	const char *name, size_t len)
{
	const uint32_t *h = d->gnu_hash, *buckets, *chain;
	const ElfW(Sym) * sym;
	uint32_t nb, symoff, nbloom, hv = 5381, c, i, k;
	size_t j;

	if (!words_in(m, h, 4))
		return NULL;
	nb = h[0];
	symoff = h[1];
	nbloom = h[2];
	if (nb == 0 || nbloom > CHAIN_MAX)
		return NULL;
	buckets = h + 4 + (size_t)nbloom * (sizeof(ElfW(Addr)) / 4);
	if (!words_in(m, buckets, nb))
		return NULL;
	chain = buckets + nb;
	for (j = 0; j < len; j++)
		hv = hv * 33 + (unsigned char)name[j];
	i = buckets[hv % nb];
	if (i < symoff)
		return NULL; /* an empty bucket */
	for (k = 0; k < CHAIN_MAX; k++, i++) {
		if (!words_in(m, chain + (i - symoff), 1))
			return NULL;
		c = chain[i - symoff];
		if ((c | 1) == (hv | 1) &&
		    (sym = sym_named(m, d, i, name, len)) != NULL)
			return sym;
		if (c & 1)
			break;
	}
	return NULL;
}

/* DT_HASH: nbucket, nchain, the buckets, the chains (one per symbol). */
static const ElfW(Sym) *
    sysv_lookup(const struct ht_module *m, const struct ht_reloc *d,
	const char *name, size_t len)
{
	const uint32_t *h = d->hash, *bucket, *chain;
	const ElfW(Sym) * sym;
	uint32_t nb, nc, hv = 0, g, i, k;
	size_t j;

	if (!words_in(m, h, 2))
		return NULL;
	nb = h[0];
	nc = h[1];
	bucket = h + 2;
	chain = bucket + nb;
	if (nb == 0 || !words_in(m, bucket, (size_t)nb + nc))
		return NULL;
	for (j = 0; j < len; j++) {
		hv = (hv << 4) + (unsigned char)name[j];
		g = hv & 0xf0000000u;
		hv ^= g >> 24;
		hv &= ~g;
	}
	i = bucket[hv % nb];
	for (k = 0; i != STN_UNDEF && i < nc && k < CHAIN_MAX; k++) {
		if ((sym = sym_named(m, d, i, name, len)) != NULL)
			return sym;
		i = chain[i];
	}
	return NULL;
}

const ElfW(Sym) *
    ht_reloc_lookup(const struct ht_module *m, const struct ht_reloc *d,
	const char *name)
{
	size_t len = strlen(name);

	if (d->gnu_hash != NULL)
		return gnu_lookup(m, d, name, len);
	if (d->hash != NULL)
		return sysv_lookup(m, d, name, len);
	return NULL;
}

const ElfW(Sym) *
    ht_reloc_sym(const struct ht_module *m, const struct ht_reloc *d,
	size_t symi)
{
	const ElfW(Sym) *sym = d->symtab + symi;

	if (symi == 0 ||
	    symi > (m->end - (uintptr_t)d->symtab) / sizeof(*sym) - 1)
		return NULL;
	return sym;
}

static void
walk_table(uintptr_t tab, size_t size, size_t ent, int rela,
    void (*fn)(void *, uintptr_t, unsigned, size_t, int64_t), void *arg)
{
	const ElfW(Rela) * ra;
	const ElfW(Rel) * r;
	uintptr_t p;

	if (tab == 0 || ent < (rela ? sizeof(*ra) : sizeof(*r)))
		return;
	for (p = tab; p + ent <= tab + size; p += ent) {
		if (rela) {
			ra = (const ElfW(Rela) *)p;
			fn(arg, ra->r_offset,
			    (unsigned)ELF64_R_TYPE(ra->r_info),
			    ELF64_R_SYM(ra->r_info), ra->r_addend);
		} else {
			/* REL keeps the addend in the slot; x86-64 objects
			 * do not use REL, so take it as 0. */
			r = (const ElfW(Rel) *)p;
			fn(arg, r->r_offset, (unsigned)ELF64_R_TYPE(r->r_info),
			    ELF64_R_SYM(r->r_info), 0);
		}
	}
}

void
ht_reloc_walk(const struct ht_reloc *d,
    void (*fn)(void *, uintptr_t, unsigned, size_t, int64_t), void *arg)
{
	walk_table(d->rela, d->relasz, d->relaent, 1, fn, arg);
	walk_table(d->rel, d->relsz, d->relent, 0, fn, arg);
	walk_table(d->jmprel, d->pltrelsz,
	    d->pltrela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)), d->pltrela, fn,
	    arg);
}
