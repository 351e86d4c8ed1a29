/*
 * The allocator entry points the agent looks for (allocnames.h).  Append
 * only: a bit's name is part of the profile format (heaptool-format(5)).
 */
#include <string.h>

#include "allocnames.h"
#include "nameidx.h"

const struct ht_allocname ht_allocnames[] = {
	{ "malloc", "malloc" },
	{ "calloc", "malloc" },
	{ "realloc", "malloc" },
	{ "free", "malloc" },
	{ "reallocarray", "malloc" },
	{ "posix_memalign", "malloc" },
	{ "aligned_alloc", "malloc" },
	{ "memalign", "malloc" },
	{ "valloc", "malloc" },
	{ "pvalloc", "malloc" },
	/* jemalloc's non-standard API, unprefixed, with its je_ prefix (as
	 * redis builds it) and with Rust's tikv-jemallocator's. */
	{ "mallocx", "jemalloc" },
	{ "je_malloc", "jemalloc" },
	{ "je_mallocx", "jemalloc" },
	{ "_rjem_mallocx", "jemalloc" },
	{ "mi_malloc", "mimalloc" },
	{ "mi_free", "mimalloc" },
	/* gperftools' tcmalloc, and Google's (its internal names). */
	{ "tc_malloc", "tcmalloc" },
	{ "tc_new", "tcmalloc" },
	{ "TCMallocInternalMalloc", "tcmalloc" },
};

const size_t ht_nallocnames = sizeof(ht_allocnames) / sizeof(ht_allocnames[0]);

uint64_t
ht_allocnames_malloc_mask(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < ht_nallocnames; i++)
		if (strcmp(ht_allocnames[i].family, "malloc") == 0)
			m |= (uint64_t)1 << i;
	return m;
}

const char *
ht_allocnames_name(unsigned i)
{
	return i < ht_nallocnames ? ht_allocnames[i].name : "?";
}

const char *
ht_allocnames_family(unsigned i)
{
	return i < ht_nallocnames ? ht_allocnames[i].family : "?";
}

const struct ht_allocfn ht_allocfns[HT_NALLOCFNS] = {
#define HT_FN_ROW(id, nm, fam, k, s, fl)                                       \
	[HT_AF_##id] = { .name = nm,                                           \
		.family = fam,                                                 \
		.kind = k,                                                     \
		.sig = HT_SIG_##s,                                             \
		.flags = fl },
	HT_ALLOCFN_LIST(HT_FN_ROW)
#undef HT_FN_ROW
};

/*
 * ht_allocfns_find is asked about every function symbol of an executable
 * (heaptool run's look for an allocator of its own: cc1 has 28,000), so
 * the names are indexed (nameidx.h), at the first call.  Whoever makes the
 * index (a compare-and-swap from 0 to 1) fills it and then publishes 2; a
 * caller that finds it being made scans the list instead.
 */
static const char *const fn_names[HT_NALLOCFNS] = {
#define HT_FN_NAME(id, nm, fam, k, s, fl) [HT_AF_##id] = nm,
	HT_ALLOCFN_LIST(HT_FN_NAME)
#undef HT_FN_NAME
};

_Static_assert(HT_NALLOCFNS <= HT_NAMEIDX_MAX, "too many names to index");

static struct ht_nameidx fn_index;
static int fn_index_state; /* 0 none, 1 being made, 2 made */

int
ht_allocfns_find(const char *name)
{
	int state = __atomic_load_n(&fn_index_state, __ATOMIC_ACQUIRE);
	int zero = 0;
	size_t i;

	if (state != 2) {
		if (state != 0 ||
		    !__atomic_compare_exchange_n(&fn_index_state, &zero, 1, 0,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			for (i = 0; i < HT_NALLOCFNS; i++)
				if (strcmp(fn_names[i], name) == 0)
					return (int)i;
			return -1;
		}
		ht_nameidx_build(&fn_index, fn_names, HT_NALLOCFNS);
		__atomic_store_n(&fn_index_state, 2, __ATOMIC_RELEASE);
	}
	return ht_nameidx_find(&fn_index, fn_names, name);
}

const char *
ht_backend_name(unsigned b)
{
	static const char *const names[HT_NBACKENDS] = {
		[HT_BACKEND_NONE] = "none",
		[HT_BACKEND_GOT] = "got",
		[HT_BACKEND_INLINE] = "inline",
		[HT_BACKEND_JEMALLOC] = "jemalloc",
		[HT_BACKEND_MIMALLOC] = "mimalloc",
	};

	return b < HT_NBACKENDS ? names[b] : "?";
}

int
ht_cov_reason_hooked(unsigned r)
{
	return r == HT_COV_SLOTS || r == HT_COV_PATCHED || r == HT_COV_NATIVE ||
	    r == HT_COV_WRAPPER;
}

const char *
ht_cov_reason_text(unsigned r)
{
	static const char *const text[HT_NCOVREASONS] = {
		[HT_COV_SLOTS] = "GOT slots lead to it",
		[HT_COV_PATCHED] = "its first instructions jump to the agent",
		[HT_COV_NATIVE] = "the allocator's own sampling",
		[HT_COV_WRAPPER] = "it calls the malloc family, counted there",
		[HT_COV_NO_SLOT] =
		    "no module calls it through a GOT slot: calls from inside "
		    "its module are not seen (the inline backend reaches them)",
		[HT_COV_DIRECT] =
		    "defined in the executable, which calls it directly: "
		    "needs the inline backend",
		[HT_COV_NOTHING] = "allocates and frees nothing",
		[HT_COV_UNSUPPORTED] = "no hook stands in for it",
		[HT_COV_REFUSED] = "it could not be hooked safely",
		[HT_COV_SHORT] = "too short to patch",
		[HT_COV_BRANCH_IN] =
		    "a branch lands inside the instructions to patch",
		[HT_COV_UNDECODED] = "its first instructions do not decode",
		[HT_COV_DETACHED] = "the hooks are out (detached)",
		[HT_COV_PREEMPTED] =
		    "unused: another module's is the one calls bind to",
		[HT_COV_CLOSED] =
		    "closed call graph: callers may rely on registers it "
		    "leaves (interprocedural register allocation)",
	};

	return r < HT_NCOVREASONS && text[r] != NULL ? text[r] : "?";
}

const char *
ht_fn_kind_name(unsigned k)
{
	switch (k) {
	case HT_KIND_ALLOC:
		return "alloc";
	case HT_KIND_FREE:
		return "free";
	case HT_KIND_REALLOC:
		return "realloc";
	case HT_KIND_QUERY:
		return "none";
	case HT_KIND_HEAPFREE:
		return "heap";
	}
	return "?";
}
