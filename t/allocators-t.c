/*
 * Tests for agent/allocators.c: in this process, the modules that define
 * allocator entry points of their own are found by their dynamic symbols,
 * through the GNU hash table (got-fake.so, which defines malloc) and the
 * SysV one (alloc-mi.so, mi_malloc and mi_free; not je_malloc, undefined,
 * nor its own reallocarray, without a malloc);
 * libc, the loader, the vdso and this program are not reported, though
 * this program, not PIE, takes malloc's address (an undefined malloc with
 * a value: its canonical PLT entry).  A scan reports each module once, and
 * once only however often it runs or the module is loaded again; and a
 * module whose tables are corrupt is read no further than itself, with
 * nothing reported.
 */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocators.h"
#include "allocnames.h"
#include "basic.h"
#include "modules.h"

/* Takes malloc's address in code: a non-PIE program then has a canonical
 * PLT entry for it, an undefined dynamic symbol with a value. */
void *(*volatile take_malloc)(size_t);

static uint64_t
bits(const char *const *names)
{
	uint64_t b = 0;
	size_t i;

	for (; *names != NULL; names++)
		for (i = 0; i < ht_nallocnames; i++)
			if (strcmp(ht_allocnames[i].name, *names) == 0)
				b |= (uint64_t)1 << i;
	return b;
}

static const char *
base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL ? b + 1 : path;
}

static void *
open_lib(const char *name)
{
	char path[PATH_MAX], *slash;
	ssize_t n;
	void *h;

	if ((n = readlink("/proc/self/exe", path, sizeof(path) - 32)) <= 0)
		bail("readlink /proc/self/exe");
	path[n] = '\0';
	if ((slash = strrchr(path, '/')) == NULL)
		bail("no directory in %s", path);
	strcpy(slash + 1, name);
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		bail("dlopen %s: %s", path, dlerror());
	return h;
}

/* A module of one readable segment, buf, with a dynamic section at its
 * start: for tables that lie. */
static _Alignas(64) unsigned char buf[4096];
static ElfW(Phdr) phdr;

static void
fake_module(struct ht_module *m)
{
	memset(m, 0, sizeof(*m));
	memset(buf, 0, sizeof(buf));
	phdr.p_type = PT_LOAD;
	phdr.p_flags = PF_R;
	phdr.p_vaddr = (uintptr_t)buf;
	phdr.p_memsz = sizeof(buf);
	m->phdr = &phdr;
	m->phnum = 1;
	m->start = (uintptr_t)buf;
	m->end = (uintptr_t)buf + sizeof(buf);
	m->dynamic = (const ElfW(Dyn) *)buf;
	strcpy(m->path, "/fake.so");
}

static void
test_corrupt(void)
{
	struct ht_module m;
	ElfW(Dyn) *d = (ElfW(Dyn) *)buf;
	ElfW(Sym) * sym;
	uint32_t *gh;
	uint64_t *bloom;

	/* A GNU hash chain with no end: every chain entry is malloc's hash
	 * but names another symbol, up to the end of the segment. */
	fake_module(&m);
	d[0].d_tag = DT_SYMTAB;
	d[0].d_un.d_ptr = (uintptr_t)buf + 512;
	d[1].d_tag = DT_STRTAB;
	d[1].d_un.d_ptr = (uintptr_t)buf + 256;
	d[2].d_tag = DT_STRSZ;
	d[2].d_un.d_val = 16;
	d[3].d_tag = DT_GNU_HASH;
	d[3].d_un.d_ptr = (uintptr_t)buf + 1024;
	d[4].d_tag = DT_NULL;
	memcpy(buf + 256, "\0mallocx\0", 9);
	gh = (uint32_t *)(buf + 1024);
	gh[0] = 1; /* buckets */
	gh[1] = 0; /* symoffset */
	gh[2] = 1; /* bloom words */
	gh[3] = 0;
	bloom = (uint64_t *)(gh + 4);
	bloom[0] = ~(uint64_t)0;
	gh[6] = 1; /* bucket 0: symbol 1 */
	for (sym = (ElfW(Sym) *)(buf + 512);
	     (unsigned char *)(sym + 1) <= buf + 1024; sym++)
		sym->st_name = 1; /* "mallocx", never "malloc" */
	for (gh += 7; (unsigned char *)(gh + 1) <= buf + sizeof(buf); gh++)
		*gh = 0x0ddba11eu & ~1u; /* never the end of a chain */
	is_uint(0, ht_allocators_names_of(&m),
	    "a GNU hash chain with no end: nothing, no read past the segment");

	/* A string table longer than the segment. */
	d[2].d_un.d_val = sizeof(buf);
	is_uint(0, ht_allocators_names_of(&m),
	    "a string table past the segment: nothing");
	/* A hash table outside the module. */
	d[2].d_un.d_val = 16;
	d[3].d_un.d_ptr = 8;
	is_uint(0, ht_allocators_names_of(&m),
	    "a hash table outside the module: nothing");
	/* A bucket that points past the symbol table. */
	d[3].d_un.d_ptr = (uintptr_t)buf + 1024;
	gh = (uint32_t *)(buf + 1024);
	gh[6] = 0x7ffffff0u;
	is_uint(0, ht_allocators_names_of(&m),
	    "a bucket past the symbols: nothing");
}

int
main(void)
{
	static const char *const mi[] = { "mi_malloc", "mi_free", NULL };
	static const char *const fake[] = { "malloc", NULL };
	struct ht_modset set;
	void *hmi, *hfake;
	size_t i, n;
	int seen_mi = 0, seen_fake = 0, others = 0, libc = 0;
	uint64_t names;

	take_malloc = malloc;
	plan(13);
	hmi = open_lib("alloc-mi.so");
	hfake = open_lib("got-fake.so");
	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan");
	for (i = 0; i < set.n; i++) {
		const struct ht_module *m = &set.mods[i];

		names = ht_allocators_names_of(m);
		if (strcmp(base(m->path), "alloc-mi.so") == 0)
			seen_mi = names == bits(mi) ? 1 : -1;
		else if (strcmp(base(m->path), "got-fake.so") == 0)
			seen_fake = names == bits(fake) ? 1 : -1;
		else if (names != 0) {
			diag("%s: %#llx", m->path, (unsigned long long)names);
			others++;
		}
		libc += (m->flags & HT_MOD_LIBC) != 0;
	}
	is_int(1, seen_mi,
	    "alloc-mi.so (SysV hash): mi_malloc and mi_free, not the "
	    "undefined je_malloc, nor reallocarray without malloc");
	is_int(1, seen_fake, "got-fake.so (GNU hash): malloc");
	is_int(0, others,
	    "no other module: not libc, the loader, the vdso, nor this "
	    "program and its canonical PLT entry for malloc");
	is_int(1, libc, "libc was among them");

	ht_allocators_scan(&set);
	n = ht_allocators_count();
	/* alloc-mi.so's mi_* are hooked where another module calls them
	 * through a slot: a library with only those is not reported. */
	is_uint(1, n, "a scan finds got-fake.so, not alloc-mi.so");
	for (i = 0, seen_mi = seen_fake = 0; i < n; i++) {
		const struct ht_allocator *a = ht_allocators_get(i);

		seen_mi += strcmp(base(a->path), "alloc-mi.so") == 0 &&
		    a->names == bits(mi);
		seen_fake += strcmp(base(a->path), "got-fake.so") == 0 &&
		    a->names == bits(fake);
	}
	ok(seen_mi == 0 && seen_fake == 1, "with its names and path");
	ht_allocators_scan(&set);
	is_uint(1, ht_allocators_count(), "a second scan adds nothing");
	ht_modules_release(&set);

	/* Closed and opened again (perhaps elsewhere): the same file. */
	dlclose(hfake);
	hfake = open_lib("got-fake.so");
	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan");
	ht_allocators_scan(&set);
	is_uint(1, ht_allocators_count(), "a module loaded again: not twice");
	is_uint(0, ht_allocators_overflow(), "nothing overflowed");
	ht_modules_release(&set);
	test_corrupt();
	dlclose(hmi);
	dlclose(hfake);
	return 0;
}
