/*
 * Tests for the wrappers of agent/wrap.c and the symbol lookup of
 * agent/reloc.c under them: got.c must find the functions a module
 * defines through the module's own hash table, GNU (got-now.so) or SysV
 * (wrap-sysv.so, the same code linked with --hash-style=sysv), exactly
 * where the loader finds them (dlsym, dladdr1 for the size), never an
 * undefined reference; and record them as wrappers, with the retry query,
 * the first time it scans a module, forgetting them when the module goes.
 *
 * This binary holds got.c, so modules.c flags it as the agent, which got.c
 * never scans: only the libraries are looked at.
 */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "got.h"
#include "modules.h"
#include "reloc.h"
#include "wrap.h"

static const char *
libpath(const char *name)
{
	static char buf[PATH_MAX];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		bail("/proc/self/exe: cannot read");
	buf[n] = '\0';
	if ((slash = strrchr(buf, '/')) == NULL ||
	    (size_t)(slash - buf) + strlen(name) + 2 > sizeof(buf))
		bail("path too long");
	strcpy(slash + 1, name);
	return buf;
}

static const struct ht_module *
module_of(const struct ht_modset *set, uintptr_t a)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (a >= set->mods[i].start && a < set->mods[i].end)
			return &set->mods[i];
	return NULL;
}

/* Where the loader has the function name of h: its address and size. */
static void
loader_fn(void *h, const char *name, uintptr_t *lo, size_t *size)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *p;

	if ((p = dlsym(h, name)) == NULL ||
	    dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) == 0 ||
	    sym == NULL)
		bail("the loader does not find %s", name);
	*lo = (uintptr_t)p;
	*size = sym->st_size;
}

static const char *const fns[] = { "gotlib_churn", "gotlib_aligned",
	"gotlib_malloc_via_ptr" };
#define NFNS (sizeof(fns) / sizeof(fns[0]))

/* Look up every function of fns in the library h, and what it must not
 * find: an undefined reference (malloc), a name it lacks. */
static void
check_lookup(const char *what, void *h, int gnu)
{
	struct ht_modset set;
	struct ht_reloc d;
	const struct ht_module *m;
	const ElfW(Sym) * sym;
	uintptr_t lo;
	size_t i, size;

	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan failed");
	loader_fn(h, fns[0], &lo, &size);
	if ((m = module_of(&set, lo)) == NULL)
		bail("%s: no module", what);
	ok(ht_reloc_read(m, &d) == 0, "%s: dynamic section read", what);
	if (gnu)
		ok(d.gnu_hash != NULL, "%s: has DT_GNU_HASH", what);
	else
		ok(d.gnu_hash == NULL && d.hash != NULL, "%s: has DT_HASH only",
		    what);
	for (i = 0; i < NFNS; i++) {
		loader_fn(h, fns[i], &lo, &size);
		sym = ht_reloc_lookup(m, &d, fns[i]);
		ok(sym != NULL && m->bias + sym->st_value == lo &&
			sym->st_size == size && size > 0,
		    "%s: %s found where the loader has it", what, fns[i]);
	}
	ok(ht_reloc_lookup(m, &d, "malloc") == NULL,
	    "%s: an undefined reference (malloc) is not a definition", what);
	ok(ht_reloc_lookup(m, &d, "gotlib_no_such_function") == NULL,
	    "%s: a name it lacks is not found", what);
	ok(ht_reloc_lookup(m, &d, "gotlib_churn_") == NULL &&
		ht_reloc_lookup(m, &d, "gotlib_chur") == NULL,
	    "%s: names are matched whole", what);
	ht_modules_release(&set);
}

/* Patch the current modules with no hook, which records the wrappers of
 * those scanned for the first time. */
static int
patch(void)
{
	struct ht_modset set;
	int r;

	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan failed");
	r = ht_got_patch(&set, NULL, 0);
	ht_modules_release(&set);
	return r;
}

/* The wrappers of library h: inside each, at both ends, and not outside;
 * retry: whether its retry query answers yes (gotlib_malloc_addr returns
 * malloc's address, never NULL). */
static void
check_wrappers(const char *what, void *h, int retry)
{
	uintptr_t lo, lo2;
	size_t i, size, size2, outside = 0;
	int in = 1, ret = 1;

	for (i = 0; i < 2; i++) {
		loader_fn(h, fns[i], &lo, &size);
		in &= ht_wrap_holds(lo) && ht_wrap_holds(lo + size - 1) &&
		    !ht_wrap_holds(lo + size);
		ret &= ht_wrap_may_retry(lo + 1) == retry;
		/* Just before, unless that is the other wrapper's end. */
		loader_fn(h, fns[1 - i], &lo2, &size2);
		if (lo2 + size2 != lo && ht_wrap_holds(lo - 1))
			outside++;
	}
	ok(in, "%s: the wrappers' code, and not past it", what);
	is_uint(0, outside, "%s: nothing just before them", what);
	loader_fn(h, fns[2], &lo, &size);
	ok(!ht_wrap_holds(lo) && !ht_wrap_holds(lo + size / 2),
	    "%s: a function not named as a wrapper is none", what);
	ok(ret, "%s: the retry query %s", what,
	    retry ? "is called and answers yes" : "is missing: no retry");
}

int
main(void)
{
	static const char *const names[] = { "gotlib_churn", "gotlib_aligned" };
	void *now, *sysv;
	uintptr_t lo;
	size_t size;

	plan(31);
	if ((now = dlopen(libpath("got-now.so"), RTLD_NOW | RTLD_LOCAL)) ==
	    NULL)
		bail("dlopen got-now.so: %s", dlerror());
	check_lookup("got-now.so", now, 1);

	/* A retry query that the library lacks: none. */
	ht_got_set_wrappers(names, 2, "gotlib_no_such_query");
	is_int(0, patch(), "no slot is patched without hooks");
	check_wrappers("got-now.so", now, 0);

	/* A module is looked at once: got-now.so keeps what it had, the
	 * library opened now gets the query it defines. */
	ht_got_set_wrappers(names, 2, "gotlib_malloc_addr");
	if ((sysv = dlopen(libpath("wrap-sysv.so"), RTLD_NOW | RTLD_LOCAL)) ==
	    NULL)
		bail("dlopen wrap-sysv.so: %s", dlerror());
	check_lookup("wrap-sysv.so", sysv, 0);
	patch();
	check_wrappers("wrap-sysv.so", sysv, 1);
	check_wrappers("got-now.so, again", now, 0);

	/* A module that is gone takes its wrappers with it. */
	loader_fn(sysv, names[0], &lo, &size);
	if (dlclose(sysv) != 0)
		bail("dlclose: %s", dlerror());
	patch();
	ok(!ht_wrap_holds(lo) && !ht_wrap_holds(lo + size - 1),
	    "wrap-sysv.so closed: its wrappers are forgotten");
	loader_fn(now, names[0], &lo, &size);
	ok(ht_wrap_holds(lo), "got-now.so's stay");
	return 0;
}
