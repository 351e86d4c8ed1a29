/*
 * The hooks' gate (gate.h).  A table added while the generation changes on
 * another thread ends with the new one: ht_gate_add publishes the table
 * before it reads the generation, ht_gate_set_gen publishes the generation
 * before it reads the tables (both sequentially consistent), so at least
 * one of them sees the other's store, and a word's compare-and-swap fails
 * and retries if the other wrote it in between.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gate.h"

struct gate_table {
	struct ht_hook_def *hooks;
	size_t n;
	const uint8_t *filter; /* the live-sample filter its frees read */
};

static struct gate_table tables[HT_GATE_TABLES];
/* The filter of a hook with a bit set: "maybe" everywhere.  Filled before
 * the first pointer to it is stored. */
static uint8_t maybe_all[HT_GATE_FILTER_SIZE];
static int maybe_filled;
static unsigned ntables;
static unsigned gate_gen;

static void
sync_table(struct ht_hook_def *hooks, size_t n)
{
	unsigned w, want;
	size_t i;

	for (i = 0; i < n; i++) {
		w = __atomic_load_n(&hooks[i].flags, __ATOMIC_SEQ_CST);
		do
			want = (w & HT_GATE_FLAGS) |
			    __atomic_load_n(&gate_gen, __ATOMIC_SEQ_CST);
		while (want != w &&
		    !__atomic_compare_exchange_n(&hooks[i].flags, &w, want, 0,
			__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	}
}

/* The table d is in, or NULL. */
static const struct gate_table *
table_of(const struct ht_hook_def *d)
{
	struct ht_hook_def *hooks;
	unsigned i, k;

	k = __atomic_load_n(&ntables, __ATOMIC_SEQ_CST);
	for (i = 0; i < k && i < HT_GATE_TABLES; i++) {
		hooks = __atomic_load_n(&tables[i].hooks, __ATOMIC_SEQ_CST);
		if (hooks != NULL && d >= hooks && d < hooks + tables[i].n)
			return &tables[i];
	}
	return NULL;
}

/* Point d's filter where its bits say.  Another thread changing them
 * meanwhile stores its own pointer after its change: whoever stores last
 * checks the bits again after its store, and stores again when they
 * moved. */
static void
sync_filter(struct ht_hook_def *d, const uint8_t *filter)
{
	unsigned f;

	do {
		f = __atomic_load_n(&d->flags, __ATOMIC_SEQ_CST) &
		    HT_GATE_FLAGS;
		__atomic_store_n(&d->filter, f != 0 ? maybe_all : filter,
		    __ATOMIC_SEQ_CST);
	} while ((__atomic_load_n(&d->flags, __ATOMIC_SEQ_CST) &
		     HT_GATE_FLAGS) != f);
}

static void
fill_maybe(void)
{
	if (!__atomic_load_n(&maybe_filled, __ATOMIC_ACQUIRE)) {
		/* Two threads may fill it at once: both write ones. */
		memset(maybe_all, 1, sizeof(maybe_all));
		__atomic_store_n(&maybe_filled, 1, __ATOMIC_RELEASE);
	}
}

void
ht_gate_bits(struct ht_hook_def *d, unsigned bits, int on)
{
	const struct gate_table *t = table_of(d);

	bits &= HT_GATE_FLAGS;
	if (on)
		__atomic_or_fetch(&d->flags, bits, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(&d->flags, ~bits, __ATOMIC_SEQ_CST);
	if (t != NULL)
		sync_filter(d, t->filter);
}

int
ht_gate_add(struct ht_hook_def *hooks, size_t n, const uint8_t *filter)
{
	unsigned i, k;
	size_t j;

	k = __atomic_load_n(&ntables, __ATOMIC_SEQ_CST);
	for (i = 0; i < k; i++)
		if (tables[i].hooks == hooks)
			return 0;
	/* Tables are added by the agent's initialisation and its loader
	 * hooks, one at a time: the slot is claimed with a CAS all the same,
	 * so two adders never share one. */
	do {
		if (k >= HT_GATE_TABLES)
			return -1;
	} while (!__atomic_compare_exchange_n(&ntables, &k, k + 1, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	fill_maybe();
	tables[k].n = n;
	tables[k].filter = filter;
	__atomic_store_n(&tables[k].hooks, hooks, __ATOMIC_SEQ_CST);
	sync_table(hooks, n);
	for (j = 0; j < n; j++)
		sync_filter(&hooks[j], filter);
	return 0;
}

void
ht_gate_set_gen(unsigned gen)
{
	struct ht_hook_def *hooks;
	unsigned i, k;

	__atomic_store_n(&gate_gen, gen & ~HT_GATE_FLAGS, __ATOMIC_SEQ_CST);
	k = __atomic_load_n(&ntables, __ATOMIC_SEQ_CST);
	for (i = 0; i < k; i++) {
		/* A slot claimed but not yet filled is its adder's to sync. */
		hooks = __atomic_load_n(&tables[i].hooks, __ATOMIC_SEQ_CST);
		if (hooks != NULL)
			sync_table(hooks, tables[i].n);
	}
}
