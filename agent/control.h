/*
 * The agent's own thread and the control channel it serves (src/proto.h):
 * an abstract Unix stream socket "\0heaptool.PID", one connection at a
 * time, one request and one reply per connection.  The thread blocks every
 * signal, is named "heaptool", and keeps its TLS guard set for its whole
 * life, so nothing it does (nor anything the loader or libc allocate for it)
 * is sampled.  Between connections it watches dl_iterate_phdr's load and
 * unload counters and patches modules that were loaded without passing
 * through the dlopen hook.
 *
 * The thread never prints, exits the process or aborts; when something it
 * needs fails it stops serving and leaves the process as it found it.
 */
#ifndef HT_CONTROL_H
#define HT_CONTROL_H

#include <stddef.h>

#include "dump.h"

/*
 * Start the agent's thread; called by the constructor, returns at once
 * (attach mode runs inside a dlopen called by an injected thread, which must
 * not wait for anything).  attach is 1 when the thread must set up the
 * agent and install the hooks itself (with no session) before it serves, 0
 * when the constructor did (launch mode).  Returns 0, or -1 if no thread
 * could be started (the agent then stays as the constructor left it).
 * Later calls do nothing and return 0: there is one thread at most.
 */
int	ht_control_start(int attach);

/* Whether dump settings need the thread (interval, every-bytes or RSS
 * triggers; failure and exit dumps are written without it). */
static inline int
ht_control_needed(const struct ht_dump_cfg *cfg)
{
	return cfg->prefix[0] != '\0' && (cfg->interval_ms != 0 ||
	    cfg->every_bytes != 0 || cfg->at_rss_bytes != 0);
}

/*
 * Implemented by agent.c for the control thread; each takes rescan_lock and
 * ht_lock_global as it needs them, so call with neither held.
 *
 * ht_agent_attach_init: set up the tables, dump buffer and fork handlers and
 * patch the GOT slots, with no session.  Returns 0, or -1 with nothing
 * patched.
 * ht_agent_hooked: 1 if the GOT slots are patched (the hooks are in).
 * ht_agent_hook: rescan the modules and patch every slot (again); returns
 * the number of slots patched now (0 if all were already), or -1.
 * ht_agent_unhook: stop the session (its profile stays readable), then put
 * every patched slot and its page protection back; returns the number of
 * slots restored, or -1.
 * ht_agent_state: whether hooked, the slots patched and the modules in the
 * current set, taken together between two rescans (a module counted there
 * has had its slots patched).
 */
int	ht_agent_attach_init(void);
int	ht_agent_hooked(void);
int	ht_agent_hook(void);
int	ht_agent_unhook(void);
void	ht_agent_state(int *hooked, size_t *slots, size_t *modules);

#endif
