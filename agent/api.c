/*
 * The in-process API (include/heaptool.h): a program linked with the agent,
 * or running under heaptool run, starts and stops its own sessions and
 * writes its own dumps, without ptrace and without the CLI.
 *
 * Each entry point does what the control thread does for the matching
 * request, through the same operations of agent.h, with the calling
 * thread's guard set for the duration, so that nothing done here is
 * sampled.  Every call is safe from any thread: the session changes under
 * ht_lock_global, the set-up and the hooks under agent.c's own locks.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "api.h"
#include "ctlthread.h"
#include "dump.h"
#include "guard.h"
#include "lock.h"
#include "profile.h"
#include "jemprof.h"
#include "sampler.h"
#include "session.h"
#include "snapshot.h"
#include "tags.h"

int
heaptool_start(size_t rate)
{
	int rc;

	if (rate == 0)
		return HT_API_EINVAL;
	ht_guard_enter();
	if ((rc = ht_agent_prepare()) == 0)
		rc = ht_agent_start((uint64_t)rate, 0, NULL, 0);
	ht_guard_leave();
	return rc;
}

int
heaptool_stop(void)
{
	return ht_agent_stop();
}

int
heaptool_dump(const char *path)
{
	struct ht_dump_cfg cfg;
	uint64_t threshold = 0;
	uint32_t state;
	int rc = 0;

	ht_guard_enter();
	if (ht_dump_init() != 0) {
		ht_guard_leave();
		return HT_API_ENOMEM;
	}
	ht_lock_acquire(&ht_lock_global);
	state = ht_session.state;
	if (ht_dump_armed(&cfg))
		threshold = cfg.threshold_bytes;
	ht_lock_release(&ht_lock_global);
	if (state == HT_STATE_NONE)
		rc = HT_API_ENOSESSION;
	else if (path == NULL) {
		/* The next file of the session's prefix. */
		if (ht_dump_now(HT_META_ON_REQUEST) != 0)
			rc = errno == ENOENT ? HT_API_EPREFIX : HT_API_EIO;
	} else if (path[0] == '\0')
		rc = HT_API_EINVAL;
	else if (ht_jemprof_collect() < 0 ||
	    ht_snapshot_path(path, HT_META_ON_REQUEST, threshold) != 0)
		rc = HT_API_EIO;
	ht_guard_leave();
	return rc;
}

int
heaptool_enable_dumps(const char *prefix, uint64_t interval_ms,
    uint64_t every_bytes, uint64_t threshold_bytes)
{
	static struct ht_lock cfg_lock;
	static struct ht_dump_cfg cfg; /* large */
	size_t len = 0, cl = 0;
	int rc = 0;

	ht_guard_enter();
	/* One caller at a time owns the static settings. */
	ht_lock_acquire(&cfg_lock);
	memset(&cfg, 0, sizeof(cfg));
	if (prefix != NULL && prefix[0] != '\0') {
		/* A relative prefix is taken against the current directory
		 * now, so that a later chdir does not move the dumps. */
		if (prefix[0] != '/') {
			if (getcwd(cfg.prefix, sizeof(cfg.prefix)) == NULL) {
				rc = HT_API_EPREFIX;
				goto out;
			}
			cl = strlen(cfg.prefix);
			if (cl > 1)
				cfg.prefix[cl++] = '/';
		}
		len = strlen(prefix);
		if (cl + len > HT_DUMP_PREFIX_MAX) {
			errno = ENAMETOOLONG;
			rc = HT_API_EPREFIX;
			goto out;
		}
		memcpy(cfg.prefix + cl, prefix, len + 1);
		if (ht_dump_check_prefix(cfg.prefix) != 0) {
			rc = HT_API_EPREFIX;
			goto out;
		}
		cfg.interval_ms = interval_ms;
		cfg.every_bytes = every_bytes;
		cfg.threshold_bytes = threshold_bytes;
	} else if (interval_ms != 0 || every_bytes != 0 ||
	    threshold_bytes != 0) {
		rc = HT_API_EINVAL;
		goto out;
	}
	/* The API has no RSS trigger: the session keeps its own. */
	if ((rc = ht_agent_dumps(&cfg)) == 0 && ht_dump_needs_thread(&cfg))
		ht_ctlthread_start(0); /* no-op if it runs */
out:
	ht_lock_release(&cfg_lock);
	ht_guard_leave();
	return rc;
}

/* Nothing here but the call: the agent may not be relocated yet when a
 * concurrent attach calls this (ht_ctlthread_revive checks first). */
long
heaptool_agent_revive(void)
{
	return ht_ctlthread_revive();
}

const char *
heaptool_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case HT_API_EINVAL:
		return "invalid argument";
	case HT_API_ERUNNING:
		return "a session is running";
	case HT_API_ENOTRUNNING:
		return "no session is running";
	case HT_API_ENOSESSION:
		return "no session was started";
	case HT_API_EDETACHED:
		return "the profiler was detached from this process";
	case HT_API_EDISABLED:
		return "the profiler is disabled in this process";
	case HT_API_ENOMEM:
		return "the profiler could not map its memory";
	case HT_API_EIO:
		return "the profile could not be written (see errno)";
	case HT_API_EPREFIX:
		return "the dump prefix cannot be used (see errno)";
	case HT_API_EHOOK:
		return "the profiler could not install its hooks";
	default:
		return "unknown heaptool error";
	}
}

/*
 * The entry points of heaptool_tags_v1, which the header's stubs find
 * (tags.h).  The current tag is the thread's, in the sampler's
 * initial-exec TLS, which only a sample reads.
 */
static uint32_t
api_tag(const char *name)
{
	return ht_tags_intern(name);
}

/* An id that does not exist changes nothing: the current tag stays. */
static uint32_t
api_enter(uint32_t tag)
{
	struct ht_tls *t = &ht_tls;
	uint32_t prev = t->tag;

	if (tag < ht_tags_count())
		t->tag = tag;
	return prev;
}

static void
api_leave(uint32_t previous)
{
	if (previous < ht_tags_count())
		ht_tls.tag = previous;
}

static int
api_assign(const void *block, uint32_t tag, int kind)
{
	if (block == NULL || (kind != 0 && kind != 1) || tag >= ht_tags_count())
		return HT_API_EINVAL;
	return ht_sampler_assign(block, tag, (uint32_t)kind) == 0 ?
	    0 :
	    HT_API_ENOMEM;
}

/* The layout of struct heaptool_tags_ops (include/heaptool.h), which the
 * agent may not include; t/target/tags-stub checks the two agree. */
struct ht_tags_ops {
	uint32_t version;
	uint32_t size;
	uint32_t (*tag)(const char *);
	uint32_t (*enter)(uint32_t);
	void (*leave)(uint32_t);
	int (*assign)(const void *, uint32_t, int);
};

const struct ht_tags_ops heaptool_tags_v1 HT_API = {
	.version = 1,
	.size = sizeof(struct ht_tags_ops),
	.tag = api_tag,
	.enter = api_enter,
	.leave = api_leave,
	.assign = api_assign,
};
