/* Session state and the module history of the profile (session.h). */
#include <string.h>
#include <unistd.h>

#include "allocnames.h"
#include "gate.h"
#include "mem.h"
#include "modules.h"
#include "prim.h"
#include "session.h"
#include "tables.h"

struct ht_session ht_session;
unsigned ht_session_gen;

struct module_seen {
	uint64_t bias;
	uint64_t start;
	uint64_t end;
	uint32_t build_id_len;
	uint8_t build_id[HT_PROFILE_MAX_BUILD_ID];
	char path[512];
};

static struct module_seen *history;
static size_t nhistory;

static void
bump_gen(void)
{
	/* The hooks' words follow (gate.h): until they do, a thread may
	 * pass one more call on its old countdown, as one that read the
	 * generation just before the store would. */
	__atomic_store_n(&ht_session_gen, ht_session_gen + HT_GATE_GEN_STEP,
	    __ATOMIC_SEQ_CST);
	ht_gate_set_gen(ht_session_gen);
}

int
ht_session_start(uint64_t rate, uint64_t max_samples)
{
	if (ht_tables_reset() != 0) {
		/* The old session's tables went first: it cannot go on. */
		ht_session_stop();
		ht_session.released = 1;
		return -1;
	}
	ht_session.max_samples = ht_tables_bound(
	    max_samples > HT_TABLES_MAX_BOUND ? HT_TABLES_MAX_BOUND :
						(size_t)max_samples);
	ht_session.released = 0;
	ht_session.dropped_bytes = 0;
	ht_session.dropped_objects = 0;
	ht_session.drop_why = 0;
	ht_session.epoch++;
	ht_session.rate = rate == 0 ? 1 : rate;
	ht_session.state = HT_STATE_RUNNING;
	ht_session.pid = getpid();
	ht_session.start_ns = ht_prim_now_ns();
	ht_session.end_ns = 0;
	ht_session.inuse_bytes = 0;
	ht_session.inuse_var = 0;
	ht_session.alloc_bytes = 0;
	memset(ht_session.size_objects, 0, sizeof(ht_session.size_objects));
	memset(ht_session.size_bytes, 0, sizeof(ht_session.size_bytes));
	ht_session.peak_bytes = 0;
	ht_session.peak_ns = ht_session.start_ns;
	ht_session.peak_gen = 1;
	ht_session.samples = 0;
	ht_session.dropped = 0;
	ht_session.lost_frees = 0;
	ht_session.truncated = 0;
	ht_session.follow = 0;
	ht_session.parent = 0;
	ht_session.backend = HT_BACKEND_GOT;
	ht_session.native_flags = 0;
	ht_session.native_live = 0;
	ht_session.rate_asked = ht_session.rate;
	nhistory = 0;
	ht_session_note_modules(ht_modules_current());
	bump_gen();
	return 0;
}

void
ht_session_release(void)
{
	if (ht_session.state == HT_STATE_RUNNING)
		return;
	ht_tables_release();
	ht_mem_unmap(history, HT_MAX_MODULE_HISTORY * sizeof(*history));
	history = NULL;
	nhistory = 0;
	ht_session.released = 1;
}

void
ht_session_stop(void)
{
	if (ht_session.state != HT_STATE_RUNNING)
		return;
	ht_session.state = HT_STATE_STOPPED;
	ht_session.end_ns = ht_prim_now_ns();
	bump_gen();
}

void
ht_session_forget(void)
{
	ht_session.state = HT_STATE_NONE;
	bump_gen();
}

int
ht_session_adopt(void)
{
	uint64_t epoch = ht_session.epoch;

	if (ht_session.pid == getpid() || ht_session.pid == 0)
		return 0;
	/* Should the new tables not map, the next start maps them. */
	(void)ht_tables_reset();
	memset(&ht_session, 0, sizeof(ht_session));
	ht_session.epoch = epoch;
	ht_session.state = HT_STATE_NONE;
	ht_session.pid = getpid();
	nhistory = 0;
	bump_gen();
	return 1;
}

void
ht_session_note_modules(const struct ht_modset *set)
{
	size_t i, j;

	if (history == NULL) {
		history = ht_mem_map(HT_MAX_MODULE_HISTORY * sizeof(*history));
		if (history == NULL)
			return;
	}
	for (i = 0; i < set->n; i++) {
		const struct ht_module *m = &set->mods[i];

		for (j = 0; j < nhistory; j++)
			if (history[j].start == m->start &&
			    history[j].bias == m->bias &&
			    strcmp(history[j].path, m->path) == 0)
				break;
		if (j < nhistory || nhistory == HT_MAX_MODULE_HISTORY)
			continue;
		history[j].bias = m->bias;
		history[j].start = m->start;
		history[j].end = m->end;
		history[j].build_id_len = m->build_id_len;
		memcpy(history[j].build_id, m->build_id, m->build_id_len);
		memcpy(history[j].path, m->path, sizeof(history[j].path));
		nhistory++;
	}
}

size_t
ht_session_module_count(void)
{
	return nhistory;
}

void
ht_session_module_get(size_t i, struct ht_module_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->bias = history[i].bias;
	rec->start = history[i].start;
	rec->end = history[i].end;
	rec->build_id_len = history[i].build_id_len;
	memcpy(rec->build_id, history[i].build_id, history[i].build_id_len);
	rec->path = history[i].path;
}
