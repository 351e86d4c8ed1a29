/*
 * Dynamic sections and relocation tables of loaded modules (reloc.h).
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "modules.h"
#include "reloc.h"

#define DYN_MAX 4096 /* a sane bound on dynamic entries */

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
	uintptr_t symtab = 0, strtab = 0;
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
	return 0;
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
