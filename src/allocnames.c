/*
 * The allocator entry points the agent looks for (allocnames.h).  Append
 * only: a bit's name is part of the profile format (heaptool-format(5)).
 */
#include <string.h>

#include "allocnames.h"

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
