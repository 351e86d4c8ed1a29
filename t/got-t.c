/*
 * Tests for agent/got.c: hooks that count their calls and forward to the
 * original are patched into the GOT slots of the loaded modules, and must
 * see the calls of this program, of libc's internals, of a lazily bound and
 * of an eagerly bound library opened later, and of a library bound to
 * another malloc (got-fake.so), which must keep calling its own.
 *
 * The agent's own module: modules.c flags as HT_MOD_AGENT the module that
 * holds its code, which here is this test binary.  The first round patches
 * the set as scanned and checks that nothing of this binary was touched.
 * Later rounds clear the flag on the scanned set, so that this binary
 * stands for a target program and its own calls are hooked too.
 *
 * This binary is not PIE and takes the addresses of malloc, free and
 * aligned_alloc in code, so it has canonical PLT entries for them: libc's
 * GLOB_DAT slots for malloc and free, and got-now.so's for malloc and
 * aligned_alloc, are bound to those stubs, which jump through this binary's
 * JUMP_SLOTs (see agent/got.c).  libc and ld.so call malloc and free
 * through the stubs at once, which binds this binary's slots for them;
 * nothing calls aligned_alloc through its stub until the second round, so
 * that slot is still unbound then.
 */
#include <sys/mman.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "got.h"
#include "modules.h"

enum { H_MALLOC, H_FREE, H_CALLOC, H_REALLOC, H_ALIGNED, NHOOK };

#define CALLER	 ((uintptr_t)__builtin_return_address(0))
#define MAXSLOTS 4096
#define MAXMAPS	 8192

static void *hook_malloc(size_t);
static void hook_free(void *);
static void *hook_calloc(size_t, size_t);
static void *hook_realloc(void *, size_t);
static void *hook_aligned(size_t, size_t);

static struct ht_hook_def hooks[NHOOK] = {
	[H_MALLOC] = { "malloc", (void *)hook_malloc, NULL, 0 },
	[H_FREE] = { "free", (void *)hook_free, NULL, 0 },
	[H_CALLOC] = { "calloc", (void *)hook_calloc, NULL, 0 },
	[H_REALLOC] = { "realloc", (void *)hook_realloc, NULL, 0 },
	[H_ALIGNED] = { "aligned_alloc", (void *)hook_aligned, NULL, 0 },
};
static const char *hname[NHOOK] = { "malloc", "free", "calloc", "realloc",
	"aligned_alloc" };
static unsigned long ncalls[NHOOK];
static __thread void *last_orig[NHOOK];

/* Set in code (not in a static initializer) so that the link makes
 * canonical PLT entries for them. */
void *(*volatile addr_malloc)(size_t);
void (*volatile addr_free)(void *);
void *(*volatile addr_aligned)(size_t, size_t);

static void *real[NHOOK]; /* libc's own functions */
static struct ht_got_slot slots[MAXSLOTS];
static struct ht_got_slot saved[MAXSLOTS];

struct mapent {
	uintptr_t lo, hi;
	int prot;
};
static struct mapent maps_before[MAXMAPS], maps_now[MAXMAPS];

static void *
orig_of(int h, uintptr_t caller)
{
	void *f;

	if (__atomic_load_n(&hooks[h].flags, __ATOMIC_ACQUIRE) & HT_HOOK_MULTI)
		f = ht_got_orig_for_caller(hooks, (size_t)h, caller);
	else
		f = __atomic_load_n(&hooks[h].orig, __ATOMIC_ACQUIRE);
	last_orig[h] = f;
	__atomic_add_fetch(&ncalls[h], 1, __ATOMIC_RELAXED);
	return f;
}

static void *
hook_malloc(size_t n)
{
	return ((void *(*)(size_t))orig_of(H_MALLOC, CALLER))(n);
}

static void
hook_free(void *p)
{
	((void (*)(void *))orig_of(H_FREE, CALLER))(p);
}

static void *
hook_calloc(size_t n, size_t m)
{
	return ((void *(*)(size_t, size_t))orig_of(H_CALLOC, CALLER))(n, m);
}

static void *
hook_realloc(void *p, size_t n)
{
	return ((void *(*)(void *, size_t))orig_of(H_REALLOC, CALLER))(p, n);
}

static void *
hook_aligned(size_t a, size_t n)
{
	return ((void *(*)(size_t, size_t))orig_of(H_ALIGNED, CALLER))(a, n);
}

static void
snap(unsigned long *c)
{
	int h;

	for (h = 0; h < NHOOK; h++)
		c[h] = __atomic_load_n(&ncalls[h], __ATOMIC_RELAXED);
}

static size_t
read_maps(struct mapent *out)
{
	char line[PATH_MAX + 128], perm[8];
	unsigned long lo, hi;
	size_t n = 0;
	FILE *f;

	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		bail("/proc/self/maps: cannot open");
	while (n < MAXMAPS && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3)
			continue;
		out[n].lo = lo;
		out[n].hi = hi;
		out[n].prot = (perm[0] == 'r' ? PROT_READ : 0) |
		    (perm[1] == 'w' ? PROT_WRITE : 0) |
		    (perm[2] == 'x' ? PROT_EXEC : 0);
		n++;
	}
	fclose(f);
	return n;
}

static int
prot_at(const struct mapent *m, size_t n, uintptr_t a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a >= m[i].lo && a < m[i].hi)
			return m[i].prot;
	return -1;
}

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

/* Scan the modules; unless as_agent, clear the agent flag of this binary
 * so that it stands for the target program. */
static void
scan(struct ht_modset *set, int as_agent)
{
	size_t i;

	if (ht_modules_scan(set) != 0)
		bail("ht_modules_scan failed");
	for (i = 0; !as_agent && i < set->n; i++)
		if (set->mods[i].flags & HT_MOD_MAIN)
			set->mods[i].flags &= ~(unsigned)HT_MOD_AGENT;
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

static size_t
slots_in(const struct ht_got_slot *s, size_t n, const struct ht_module *m,
    int index)
{
	size_t i, k = 0;

	for (i = 0; m != NULL && i < n; i++)
		if (s[i].addr >= m->start && s[i].addr < m->end &&
		    (index < 0 || s[i].index == (size_t)index))
			k++;
	return k;
}

/* Every slot holds its hook, and its page has the protection it had in
 * before (and the one got.c remembered). */
static void
check_patched(const char *what, size_t n, const struct mapent *before,
    size_t nbefore)
{
	size_t i, bad = 0, badprot = 0, ro = 0, nnow;

	nnow = read_maps(maps_now);
	for (i = 0; i < n; i++) {
		int p0 = prot_at(before, nbefore, slots[i].addr);

		if (*(void **)slots[i].addr != slots[i].hook ||
		    slots[i].hook != hooks[slots[i].index].hook)
			bad++;
		if (p0 != slots[i].prot ||
		    prot_at(maps_now, nnow, slots[i].addr) != p0)
			badprot++;
		if (!(p0 & PROT_WRITE))
			ro++;
	}
	is_uint(0, bad, "%s: every slot holds its hook", what);
	is_uint(0, badprot, "%s: page protections are as they were", what);
	ok(ro > 0, "%s: %zu slots are on read-only (RELRO) pages", what, ro);
}

/* After a restore: every slot of s[0..n) holds what it held before, with
 * its page's protection. */
static void
check_restored(const char *what, const struct ht_got_slot *s, size_t n,
    const struct mapent *before, size_t nbefore)
{
	size_t i, bad = 0, badprot = 0, nnow;

	nnow = read_maps(maps_now);
	for (i = 0; i < n; i++) {
		if (*(void **)s[i].addr != s[i].saved)
			bad++;
		if (prot_at(maps_now, nnow, s[i].addr) !=
		    prot_at(before, nbefore, s[i].addr))
			badprot++;
	}
	is_uint(0, bad, "%s: every slot holds its value from before", what);
	is_uint(0, badprot, "%s: page protections are as before", what);
}

static void
is_delta(const unsigned long *c0, const unsigned long *c1, const int *want,
    const char *what)
{
	int h;

	for (h = 0; h < NHOOK; h++)
		is_int(want[h], (long long)(c1[h] - c0[h]), "%s: %s hook calls",
		    what, hname[h]);
}

struct churn {
	long (*now_churn)(void);
	int stop;
	long rounds;
	long errors;
};

static void *
churner(void *arg)
{
	struct churn *ch = arg;
	char *s, *p;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		s = strdup("concurrent");
		p = malloc(32);
		if (s == NULL || p == NULL || strcmp(s, "concurrent") != 0 ||
		    ch->now_churn() != 300)
			ch->errors++;
		free(s);
		free(p);
		ch->rounds++;
	}
	return NULL;
}

static void *
patcher(void *arg)
{
	const struct ht_modset *set = arg;
	int i;

	for (i = 0; i < 50; i++) {
		if ((ht_got_resolve(hooks, NHOOK),
			ht_got_patch(set, hooks, NHOOK)) < 0)
			return (void *)1;
		if (ht_got_restore_all() < 0)
			return (void *)1;
	}
	return NULL;
}

int
main(void)
{
	struct ht_modset set;
	const struct ht_module *self, *libc_mod, *user_mod, *lazy_mod;
	const struct ht_module *now_mod, *m;
	unsigned long c0[NHOOK], c1[NHOOK], fake0;
	unsigned long *fake_calls;
	long (*now_churn)(void), (*lazy_churn)(void);
	long (*user_alloc)(void);
	void *(*now_addr)(void), *(*now_via_ptr)(size_t);
	void *(*now_aligned_addr)(void);
	long (*now_aligned)(void);
	void *now, *user, *lazy, *libc, *fake_malloc, *p;
	size_t i, n1, n2, n3, nb, k;
	int r, r1, env_now, fake_counts, h;
	char *s;
	struct churn ch;
	pthread_t t[3];
	void *tr[3];
	const char *e;

	/* A hook that calls itself through a stub loops without a crash. */
	alarm(120);
	plan(101);
	e = getenv("LD_BIND_NOW");
	env_now = e != NULL && *e != '\0';
	addr_malloc = malloc;
	addr_free = free;
	addr_aligned = aligned_alloc;
	if ((libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD)) == NULL)
		bail("libc.so.6: %s", dlerror());
	for (h = 0; h < NHOOK; h++)
		if ((real[h] = dlsym(libc, hname[h])) == NULL)
			bail("libc has no %s", hname[h]);
	now = dlopen(libpath("got-now.so"), RTLD_NOW | RTLD_LOCAL);
	user = dlopen(libpath("got-user.so"),
	    RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (now == NULL || user == NULL)
		bail("dlopen: %s", dlerror());
	now_churn = (long (*)(void))dlsym(now, "gotlib_churn");
	now_addr = (void *(*)(void))dlsym(now, "gotlib_malloc_addr");
	now_via_ptr = (void *(*)(size_t))dlsym(now, "gotlib_malloc_via_ptr");
	now_aligned_addr = (void *(*)(void))dlsym(now, "gotlib_aligned_addr");
	now_aligned = (long (*)(void))dlsym(now, "gotlib_aligned");
	user_alloc = (long (*)(void))dlsym(user, "gotuser_alloc");
	fake_malloc = dlsym(user, "malloc");
	fake_calls = dlsym(user, "got_fake_calls");
	if (now_churn == NULL || now_addr == NULL || now_via_ptr == NULL ||
	    now_aligned_addr == NULL || now_aligned == NULL ||
	    user_alloc == NULL || fake_malloc == NULL || fake_calls == NULL)
		bail("test libraries lack their symbols");
	ok(fake_malloc != real[H_MALLOC],
	    "got-user.so is bound to another malloc than libc's");
	/* Valgrind replaces every malloc, the fake one too. */
	fake0 = *fake_calls;
	free(((void *(*)(size_t))fake_malloc)(8));
	fake_counts = *fake_calls == fake0 + 1;

	/*
	 * Round 1: the set as scanned, this binary being the agent.
	 */
	scan(&set, 1);
	self = module_of(&set, (uintptr_t)main);
	libc_mod = module_of(&set, (uintptr_t)real[H_MALLOC]);
	if (self == NULL || libc_mod == NULL)
		bail("no module for this binary or libc");
	ok((self->flags & (HT_MOD_AGENT | HT_MOD_MAIN)) ==
		(HT_MOD_AGENT | HT_MOD_MAIN),
	    "modules.c flags this binary as the agent");
	nb = read_maps(maps_before);
	r1 = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	ok(r1 > 0, "round 1: %d slots patched", r1);
	n1 = ht_got_slots(slots, MAXSLOTS);
	is_uint((size_t)r1, n1, "round 1: ht_got_slots lists them all");
	is_uint(n1, ht_got_patched_slots(), "round 1: ht_got_patched_slots");
	for (i = k = 0; i < set.n; i++)
		if (set.mods[i].flags &
		    (HT_MOD_AGENT | HT_MOD_LDSO | HT_MOD_VDSO))
			k += slots_in(slots, n1, &set.mods[i], -1);
	is_uint(0, k, "no slot of the agent, the loader or the vdso patched");
	ok(slots_in(slots, n1, libc_mod, H_MALLOC) > 0 &&
		slots_in(slots, n1, libc_mod, H_FREE) > 0,
	    "libc's own malloc and free slots patched");
	check_patched("round 1", n1, maps_before, nb);
	for (i = k = 0; i < n1; i++)
		if (slots[i].addr >= libc_mod->start &&
		    slots[i].addr < libc_mod->end &&
		    slots[i].saved == (void *)addr_malloc)
			k += slots[i].orig == real[H_MALLOC];
	ok(k > 0,
	    "libc's malloc slot, bound to this binary's PLT stub, "
	    "calls libc's malloc");
	now_mod = module_of(&set, (uintptr_t)now_churn);
	for (i = k = 0; i < n1; i++)
		if (slots[i].addr >= now_mod->start &&
		    slots[i].addr < now_mod->end &&
		    slots[i].saved == (void *)addr_aligned)
			k += slots[i].orig ==
			    (env_now ? real[H_ALIGNED] : (void *)addr_aligned);
	/* Nothing has called aligned_alloc through the stub: unless bound
	 * now, this binary's slot for it is unbound, and the stub stays. */
	is_uint(1, k,
	    "got-now.so's aligned_alloc slot keeps the stub as "
	    "original");

	snap(c0);
	p = malloc(10);
	p = realloc(p, 20);
	((void (*)(void *))real[H_FREE])(p);
	snap(c1);
	is_int(0,
	    (long long)(c1[H_MALLOC] + c1[H_REALLOC] - c0[H_MALLOC] -
		c0[H_REALLOC]),
	    "round 1: calls from the agent's own module "
	    "not hooked");
	snap(c0);
	s = strdup("strdup");
	snap(c1);
	ok(s != NULL && strcmp(s, "strdup") == 0, "round 1: strdup works");
	is_int(1, (long long)(c1[H_MALLOC] - c0[H_MALLOC]),
	    "round 1: strdup's malloc inside libc is hooked once");
	((void (*)(void *))real[H_FREE])(s);

	memcpy(saved, slots, n1 * sizeof(*slots));
	r = ht_got_restore_all();
	is_int(r1, r, "round 1: restore_all restores every slot");
	is_uint(0, ht_got_patched_slots(), "round 1: nothing left patched");
	check_restored("round 1", saved, n1, maps_before, nb);
	ht_modules_release(&set);

	/*
	 * Round 2: this binary stands for the target.
	 */
	scan(&set, 0);
	self = module_of(&set, (uintptr_t)main);
	user_mod = module_of(&set, (uintptr_t)user_alloc);
	nb = read_maps(maps_before);
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	n2 = ht_got_slots(slots, MAXSLOTS);
	ok(r > r1, "round 2: %d slots patched, this binary's too", r);
	is_uint((size_t)r, n2, "round 2: ht_got_slots lists them all");
	check_patched("round 2", n2, maps_before, nb);
	ok(slots_in(slots, n2, self, H_MALLOC) == 1 &&
		slots_in(slots, n2, self, H_FREE) == 1 &&
		slots_in(slots, n2, self, H_CALLOC) == 1 &&
		slots_in(slots, n2, self, H_REALLOC) == 1,
	    "this binary's malloc, free, calloc, realloc slots patched");
	is_uint(env_now ? 1 : 0, slots_in(slots, n2, self, H_ALIGNED),
	    "its unbound aligned_alloc slot (target unknown) is left");
	for (i = k = 0; i < n2; i++)
		if (slots[i].orig == (void *)addr_malloc ||
		    slots[i].orig == (void *)addr_free ||
		    slots[i].orig == (void *)addr_aligned)
			k++;
	is_uint(env_now ? 0 : 1, k,
	    "only got-now.so's aligned_alloc slot has a PLT stub as original");
	ok(hooks[H_MALLOC].orig == real[H_MALLOC] &&
		hooks[H_FREE].orig == real[H_FREE],
	    "hooks[].orig of malloc and free are libc's");

	/* (a) calls from this program's own code. */
	snap(c0);
	p = malloc(16);
	p = realloc(p, 64);
	ok(p != NULL && memset(p, 7, 64) == p, "round 2: direct calls work");
	free(p);
	p = calloc(3, 5);
	free(p);
	snap(c1);
	{
		int want[NHOOK] = { 1, 2, 1, 1, 0 };

		is_delta(c0, c1, want, "round 2, this binary");
	}
	ok(last_orig[H_MALLOC] == real[H_MALLOC] &&
		last_orig[H_FREE] == real[H_FREE] &&
		last_orig[H_CALLOC] == real[H_CALLOC] &&
		last_orig[H_REALLOC] == real[H_REALLOC],
	    "the hooks called libc's functions");

	/* (c) a library bound at load time: JUMP_SLOT, GLOB_DAT and an
	 * R_X86_64_64 pointer in RELRO.  Its aligned_alloc goes through the
	 * stub, whose (unhooked) slot lazy binding resolves now. */
	snap(c0);
	is_int(300, now_churn(), "got-now.so works");
	is_int(128, now_aligned(), "got-now.so's aligned_alloc works");
	snap(c1);
	{
		int want[NHOOK] = { 1, 3, 1, 1, 1 };

		is_delta(c0, c1, want, "got-now.so");
	}

	/* The next patch hooks this binary's aligned_alloc slot, bound
	 * meanwhile, after making libc's function the original of
	 * got-now.so's slot: calling the stub from the hook would now come
	 * back to the hook, forever. */
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	is_int(env_now ? 0 : 1, r, "the next patch hooks the bound slot");
	n2 = ht_got_slots(slots, MAXSLOTS);
	for (i = k = 0; i < n2; i++)
		if (slots[i].index == H_ALIGNED &&
		    slots[i].orig != real[H_ALIGNED])
			k++;
	is_uint(0, k, "every aligned_alloc slot's original is libc's now");
	snap(c0);
	p = aligned_alloc(32, 64);
	free(p);
	is_int(128, now_aligned(), "got-now.so's aligned_alloc still works");
	snap(c1);
	{
		int want[NHOOK] = { 0, 2, 0, 0, 2 };

		is_delta(c0, c1, want, "aligned_alloc here and in got-now.so");
	}

	/* (b) libc's internals, once each: through the canonical stub they
	 * would come back to the hook forever. */
	snap(c0);
	s = strdup("strdup");
	free(s);
	snap(c1);
	{
		int want[NHOOK] = { 1, 1, 0, 0, 0 };

		is_delta(c0, c1, want, "round 2, strdup and free");
	}

	ok(now_addr() == (void *)hook_malloc,
	    "got-now.so's GLOB_DAT malloc is the hook");
	ok(now_aligned_addr() == (void *)hook_aligned,
	    "got-now.so's GLOB_DAT aligned_alloc is the hook");
	snap(c0);
	p = now_via_ptr(24);
	snap(c1);
	ok(p != NULL && c1[H_MALLOC] - c0[H_MALLOC] == 1,
	    "got-now.so's R_X86_64_64 malloc pointer is hooked");
	free(p);

	/* (f) a module bound to another malloc keeps calling it. */
	ok(hooks[H_MALLOC].flags & HT_HOOK_MULTI,
	    "malloc has more than one original");
	ok(!(hooks[H_CALLOC].flags & HT_HOOK_MULTI), "calloc has one");
	ok(ht_got_orig_for_caller(hooks, H_MALLOC, (uintptr_t)user_alloc) ==
		fake_malloc,
	    "orig for a caller in got-user.so: its fake malloc");
	ok(ht_got_orig_for_caller(hooks, H_MALLOC, (uintptr_t)now_churn) ==
		real[H_MALLOC],
	    "orig for a caller in got-now.so: libc's");
	ok(ht_got_orig_for_caller(hooks, H_MALLOC, (uintptr_t)main) ==
		real[H_MALLOC],
	    "orig for a caller in this binary: libc's");
	fake0 = *fake_calls;
	snap(c0);
	is_int(64, user_alloc(), "got-user.so works");
	snap(c1);
	is_int(1, (long long)(c1[H_MALLOC] - c0[H_MALLOC]),
	    "got-user.so's malloc is hooked");
	if (fake_counts)
		is_int(1, (long long)(*fake_calls - fake0),
		    "and its hook called the fake malloc");
	else
		skip("the fake malloc does not run here (valgrind?)");
	for (i = k = 0; i < n2; i++)
		if (slots[i].addr >= user_mod->start &&
		    slots[i].addr < user_mod->end && slots[i].index == H_MALLOC)
			k += slots[i].saved == fake_malloc &&
			    slots[i].orig == fake_malloc;
	is_uint(1, k, "got-user.so's slot saved the fake malloc");

	/* (e) idempotent. */
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	is_int(0, r, "patching again patches nothing");
	is_uint(n2, ht_got_patched_slots(), "and keeps the same slots");
	ht_modules_release(&set);

	/* (c) a lazily bound library opened after patching, as the dlopen
	 * hook would: its slots still point at its PLT stubs. */
	lazy = dlopen(libpath("got-lazy.so"), RTLD_LAZY | RTLD_LOCAL);
	lazy_churn =
	    lazy != NULL ? (long (*)(void))dlsym(lazy, "gotlib_churn") : NULL;
	if (lazy_churn == NULL)
		bail("got-lazy.so: %s", dlerror());
	scan(&set, 0);
	lazy_mod = module_of(&set, (uintptr_t)lazy_churn);
	nb = read_maps(maps_before);
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	is_int(4, r, "got-lazy.so: its 4 slots patched");
	n3 = ht_got_slots(slots, MAXSLOTS);
	is_uint(n2 + 4, n3, "the others kept");
	for (i = k = 0; i < n3; i++) {
		if (slots[i].addr < lazy_mod->start ||
		    slots[i].addr >= lazy_mod->end)
			continue;
		if ((env_now ||
			(slots[i].saved >= (void *)lazy_mod->start &&
			    slots[i].saved < (void *)lazy_mod->end)) &&
		    slots[i].orig == real[slots[i].index])
			k++;
	}
	is_uint(4, k,
	    "got-lazy.so: PLT stubs saved, libc's functions as "
	    "originals");
	check_patched("got-lazy.so", n3, maps_before, nb);
	snap(c0);
	is_int(300, lazy_churn(), "got-lazy.so works");
	snap(c1);
	{
		int want[NHOOK] = { 1, 2, 1, 1, 0 };

		is_delta(c0, c1, want, "got-lazy.so");
	}

	/* (d) restore everything. */
	memcpy(saved, slots, n3 * sizeof(*slots));
	r = ht_got_restore_all();
	is_int((int)n3, r, "restore_all restores every slot");
	is_uint(0, ht_got_patched_slots(), "nothing left patched");
	check_restored("round 2", saved, n3, maps_before, nb);
	snap(c0);
	p = malloc(8);
	free(p);
	s = strdup("x");
	free(s);
	r = (int)now_churn() + (int)lazy_churn() + (int)user_alloc();
	snap(c1);
	is_int(664, r, "after restore, everything works (lazy binding too)");
	{
		int want[NHOOK] = { 0, 0, 0, 0, 0 };

		is_delta(c0, c1, want, "after restore");
	}

	/* Modules that leave the set are forgotten. */
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	is_int((int)n3, r, "patched again");
	ht_modules_release(&set);
	dlclose(lazy);
	lazy = dlopen(libpath("got-lazy.so"), RTLD_LAZY | RTLD_NOLOAD);
	ok(lazy == NULL, "got-lazy.so is unloaded");
	scan(&set, 0);
	r = (ht_got_resolve(hooks, NHOOK), ht_got_patch(&set, hooks, NHOOK));
	is_int(0, r, "a rescan without it patches nothing");
	is_uint(n2, ht_got_patched_slots(), "and forgets its slots");
	r = ht_got_restore_all();
	is_int((int)n2, r, "restore_all restores the others only");

	/* Patch and restore from two threads while a third allocates
	 * through the slots being rewritten. */
	memset(&ch, 0, sizeof(ch));
	ch.now_churn = now_churn;
	if (pthread_create(&t[0], NULL, churner, &ch) != 0 ||
	    pthread_create(&t[1], NULL, patcher, &set) != 0 ||
	    pthread_create(&t[2], NULL, patcher, &set) != 0)
		bail("pthread_create failed");
	pthread_join(t[1], &tr[1]);
	pthread_join(t[2], &tr[2]);
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t[0], &tr[0]);
	ok(tr[1] == NULL && tr[2] == NULL, "concurrent patch/restore calls");
	is_int(0, ch.errors, "an allocating thread saw no error (%ld rounds)",
	    ch.rounds);
	r = ht_got_restore_all();
	is_uint(0, ht_got_patched_slots(), "all restored after the race");
	for (i = k = 0; i < n3; i++) {
		m = module_of(&set, saved[i].addr);
		if (m != NULL && *(void **)saved[i].addr != saved[i].saved)
			k++;
	}
	is_uint(0, k, "every slot holds its value from before");
	is_uint(0, ht_got_overflows(), "no table overflowed");
	ht_modules_release(&set);
	return 0;
}
