/*
 * heaptool's in-process API: a program profiles its own heap without ptrace
 * and without the heaptool command.  See heaptool(3).
 *
 * Link with the agent, libheaptool-agent.so (pkg-config --cflags --libs
 * heaptool), or run the program under heaptool run, which preloads it.
 * Every function is safe to call from any thread and returns 0 or one of
 * the negative HEAPTOOL_E* codes below; heaptool_strerror() names them.
 * Where a code says "see errno", errno holds the system's reason.
 */
#ifndef HEAPTOOL_H
#define HEAPTOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPTOOL_OK	     0
#define HEAPTOOL_EINVAL	     (-1)  /* invalid argument */
#define HEAPTOOL_ERUNNING    (-2)  /* a session is running */
#define HEAPTOOL_ENOTRUNNING (-3)  /* no session is running */
#define HEAPTOOL_ENOSESSION  (-4)  /* no session was started */
#define HEAPTOOL_EDETACHED   (-5)  /* heaptool detach removed the hooks */
#define HEAPTOOL_EDISABLED   (-6)  /* the agent is off in this process */
#define HEAPTOOL_ENOMEM	     (-7)  /* the agent could not map memory */
#define HEAPTOOL_EIO	     (-8)  /* a profile was not written; errno */
#define HEAPTOOL_EPREFIX     (-9)  /* the dump prefix is unusable; errno */
#define HEAPTOOL_EHOOK	     (-10) /* the hooks could not be installed */

/* Start a session: sample about one allocation per rate bytes (1: every
 * allocation, exact counts).  HEAPTOOL_ERUNNING if one runs (under
 * heaptool run, one runs from the start). */
int heaptool_start(size_t rate);

/* Stop the running session; its profile stays readable until the next
 * start.  HEAPTOOL_ENOTRUNNING if none runs. */
int heaptool_stop(void);

/* Write the current session's profile to path (mode 0600, replaced
 * atomically), readable by heaptool report; with path NULL, to the next
 * PREFIX.PID.SEQ.heap of the dumps enabled below. */
int heaptool_dump(const char *path);

/* Give the running session dump files PREFIX.PID.SEQ.heap (a relative
 * prefix is taken against the current directory now): every interval_ms
 * milliseconds, after each every_bytes bytes allocated, when an allocation
 * fails, and at exit; sites below threshold_bytes fold into one record
 * (each 0: off).  A NULL or empty prefix turns the dumps off. */
int heaptool_enable_dumps(const char *prefix, uint64_t interval_ms,
    uint64_t every_bytes, uint64_t threshold_bytes);

/* A message for a code of the functions above (static storage). */
const char *heaptool_strerror(int code);

/*
 * Tags: memory attributed to what the program calls it (heaptool(3), TAGS).
 *
 * Unlike the functions above, these need no link with the agent: they are
 * static inline stubs that find the agent's table of entry points
 * (heaptool_tags_v1) with dlsym(RTLD_DEFAULT), in libc since glibc 2.34
 * (link older systems with -ldl).  Where no agent is loaded they do
 * nothing: a loaded pointer and a branch, and about every 50 ms of calls a
 * look again (one coarse clock read per call until then), so that after
 * heaptool attach the calls take effect.  Every function is thread-safe.
 */
#define HEAPTOOL_UNTAGGED 0u /* the tag of memory no tag was given */
#define HEAPTOOL_MALLOC	  0  /* a block used as it is */
#define HEAPTOOL_ARENA	  1  /* a block backing an arena of the tag */

/* The agent's table; its layout is part of the contract (version 1). */
struct heaptool_tags_ops {
	uint32_t version; /* 1 */
	uint32_t size;	  /* of this struct in the agent */
	uint32_t (*tag)(const char *name);
	uint32_t (*enter)(uint32_t tag);
	void (*leave)(uint32_t previous);
	int (*assign)(const void *block, uint32_t tag, int kind);
};

#define HEAPTOOL_TAGS_SYMBOL "heaptool_tags_v1"
#define HEAPTOOL__RETRY_NS   50000000LL

#include <dlfcn.h>
#if defined(__linux__) || defined(__unix__)
#include <time.h>
#endif

/* The agent's table, or NULL while none is loaded (internal). */
static inline const struct heaptool_tags_ops *
heaptool__ops(void)
{
	static const struct heaptool_tags_ops *ops;
	static long long next;
	const struct heaptool_tags_ops *o;
	long long now;

	o = __atomic_load_n(&ops, __ATOMIC_ACQUIRE);
	if (__builtin_expect(o != NULL, 1))
		return o;
#ifdef CLOCK_MONOTONIC_COARSE
	{
		struct timespec ts;

		/* The vDSO's coarse clock: a few loads, no system call. */
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
		if (now < __atomic_load_n(&next, __ATOMIC_RELAXED))
			return NULL;
	}
#else
	/* No POSIX clock: a look again every 4096th call instead. */
	now = __atomic_load_n(&next, __ATOMIC_RELAXED);
	if (now != 0 &&
	    (__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) & 4095) != 0)
		return NULL;
#endif
	/* (void *)0 is glibc's RTLD_DEFAULT, which <dlfcn.h> names only
	 * under _GNU_SOURCE: every object of the process, in load order. */
	o = (const struct heaptool_tags_ops *)dlsym((void *)0,
	    HEAPTOOL_TAGS_SYMBOL);
	if (o != NULL &&
	    (o->version != 1 || o->size < sizeof(struct heaptool_tags_ops)))
		o = NULL;
	/* The wait before the next look starts only once a look found no
	 * agent: threads that look at once, the first time, all look (had
	 * the first set it before its look, the others would have had no
	 * agent, and their tags none, while it looked). */
	if (o != NULL) {
		__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
		return o;
	}
#ifdef CLOCK_MONOTONIC_COARSE
	__atomic_store_n(&next, now + HEAPTOOL__RETRY_NS, __ATOMIC_RELAXED);
#else
	__atomic_store_n(&next, 1, __ATOMIC_RELAXED);
#endif
	return NULL;
}

/* The tag of name, interned: the same name always gives the same tag, the
 * string is copied once (names are cut to 255 bytes).  HEAPTOOL_UNTAGGED
 * for NULL or "", without an agent, or when the agent's table of tags is
 * full. */
static inline uint32_t
heaptool_tag(const char *name)
{
	const struct heaptool_tags_ops *o = heaptool__ops();

	return o != NULL ? o->tag(name) : HEAPTOOL_UNTAGGED;
}

/* Make tag the calling thread's current tag: what it allocates from now on
 * is charged to that tag (as HEAPTOOL_MALLOC).  Returns the previous
 * current tag, for heaptool_tag_leave. */
static inline uint32_t
heaptool_tag_enter(uint32_t tag)
{
	const struct heaptool_tags_ops *o = heaptool__ops();

	return o != NULL ? o->enter(tag) : HEAPTOOL_UNTAGGED;
}

/* Make previous (what heaptool_tag_enter returned) current again. */
static inline void
heaptool_tag_leave(uint32_t previous)
{
	const struct heaptool_tags_ops *o = heaptool__ops();

	if (o != NULL)
		o->leave(previous);
}

/*
 * The live block (as malloc returned it) now belongs to tag as kind
 * (HEAPTOOL_MALLOC or HEAPTOOL_ARENA): its size and count move to that
 * line at once, and stay there until it is freed or assigned again.
 * Returns 0 (also for a block the profiler did not sample, which stands
 * for nothing, and without an agent), HEAPTOOL_EINVAL for a kind or tag
 * that does not exist, HEAPTOOL_ENOMEM when the agent's site table is
 * full (the block stays where it was).
 */
static inline int
heaptool_assign(const void *block, uint32_t tag, int kind)
{
	const struct heaptool_tags_ops *o = heaptool__ops();

	return o != NULL ? o->assign(block, tag, kind) : 0;
}

/* The cleanup of HEAPTOOL_TAG_SCOPE (internal). */
static inline void
heaptool__scope_leave(uint32_t *previous)
{
	heaptool_tag_leave(*previous);
}

#define HEAPTOOL__CAT2(a, b) a##b
#define HEAPTOOL__CAT(a, b)  HEAPTOOL__CAT2(a, b)
/* In a C block: name is the thread's current tag until the block ends
 * (GCC and Clang's cleanup attribute). */
#define HEAPTOOL_TAG_SCOPE(name)                                               \
	uint32_t HEAPTOOL__CAT(heaptool__scope_, __LINE__)                     \
	    __attribute__((cleanup(heaptool__scope_leave), unused)) =          \
		heaptool_tag_enter(heaptool_tag(name))

#ifdef __cplusplus
}

namespace heaptool {
/* C++: the tag is the thread's current tag for the object's lifetime. */
class tag_scope {
      public:
	explicit tag_scope(uint32_t tag) : previous_(heaptool_tag_enter(tag))
	{
	}
	explicit tag_scope(const char *name)
	    : previous_(heaptool_tag_enter(heaptool_tag(name)))
	{
	}
	~tag_scope()
	{
		heaptool_tag_leave(previous_);
	}
	tag_scope(const tag_scope &) = delete;
	tag_scope &operator=(const tag_scope &) = delete;

      private:
	uint32_t previous_;
};
} // namespace heaptool
#endif

#endif
