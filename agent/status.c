/*
 * The agent's status, as the control channel's STATUS reply carries it
 * (src/proto.h): the hooks, the session, the backends, the followed
 * children, the dumps, the allocators no backend sees and the final
 * profile.  From the agent's thread only (it may call dlsym).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "allocators.h"
#include "config.h"
#include "coverage.h"
#include "dump.h"
#include "final.h"
#include "follow.h"
#include "lock.h"
#include "mem.h"
#include "proto.h"
#include "session.h"
#include "status.h"
#include "tables.h"

/* The status tail: the allocators the hooks do not reach, and the final
 * profile. */
static void
status_tail(struct ht_status *st)
{
	size_t i, k = 0, n = ht_allocators_count(), len, more = 0;
	const struct ht_allocator *a;
	uint64_t names;

	for (i = 0; i < n; i++) {
		a = ht_allocators_get(i);
		/* Only what no backend sees: a function hooked inline is. */
		if ((names = ht_coverage_unseen(a->path, a->names)) == 0)
			continue;
		if (k == HT_PROTO_MAX_ALLOCATORS) {
			more++;
			continue;
		}
		st->allocators[k].names = names;
		len = strnlen(a->path, HT_PROTO_MAX_ALLOCATOR_PATH);
		memcpy(st->allocators[k].path, a->path, len);
		st->allocators[k].path[len] = '\0';
		k++;
	}
	st->nallocators = (uint32_t)k;
	st->allocators_more = (uint32_t)(more + ht_allocators_overflow());
	st->final_armed =
	    (uint32_t)ht_final_state(st->final_dir, sizeof(st->final_dir));
	st->backend = ht_coverage_backend();
	ht_coverage_summary(&st->coverage_hooked, &st->coverage_unhooked);
}

void
ht_status_fill(struct ht_status *st)
{
	size_t slots, modules;
	int hooked;

	memset(st, 0, sizeof(*st));
	st->proto_version = HT_PROTO_VERSION;
	st->pid = (uint32_t)getpid();
	ht_agent_state(&hooked, &slots, &modules);
	st->hooked = (uint32_t)hooked;
	st->slots_patched = (uint32_t)slots;
	st->modules = (uint32_t)modules;
	ht_lock_acquire(&ht_lock_global);
	st->state = ht_session.state;
	st->epoch = ht_session.epoch;
	st->rate = ht_session.rate;
	st->start_ns = ht_session.start_ns;
	st->samples = ht_session.samples;
	st->live_samples = ht_live_count();
	st->dropped_samples = ht_session.dropped;
	st->follow = ht_session.follow;
	st->parent_pid = (uint32_t)ht_session.parent;
	st->max_samples = ht_session.max_samples;
	st->flags = ht_session.released ? HT_STATUS_RELEASED : 0;
	st->rate_asked = ht_session.rate_asked;
	if (ht_session.native_flags != 0)
		st->live_samples = ht_session.native_live;
	ht_lock_release(&ht_lock_global);
	/* The allocators are looked for again: this is the agent's thread,
	 * where dlsym may run. */
	st->backends = ht_agent_backends(&st->backends_present);
	st->backend_default = ht_agent_backend_default();
	st->nchildren =
	    (uint32_t)ht_follow_children(st->children, HT_PROTO_MAX_CHILDREN);
	st->overhead_bytes = ht_mem_overhead();
	memcpy(st->agent_version, PACKAGE_VERSION,
	    sizeof(PACKAGE_VERSION) < sizeof(st->agent_version) ?
		sizeof(PACKAGE_VERSION) :
		sizeof(st->agent_version) - 1);
	status_tail(st);
	ht_dump_outcomes(st);
}
