/*
 * The agent's file: where this heaptool finds it, and the path at which a
 * target process can load it.
 *
 * heaptool run preloads the agent in a child that sees our file system;
 * heaptool attach has a running process load it, and that process may live
 * in another mount namespace or root (a container) and run as another
 * user.  The agent is loaded from its own path when the target sees the
 * very same file there (through /proc/TID/root of a live thread: a leader
 * that called pthread_exit has no root any more) and its user can read it;
 * otherwise a copy is staged in the target's /tmp as
 * heaptool-agent-UID-HASH.so, named by the target's uid and the content,
 * so that attaching again, or to another process of the same root, reuses
 * it, and checked before use (owner, mode, content) so that nobody else's
 * file is ever loaded in its place.
 *
 * Both functions print why they fail, with ht_warn.
 */
#ifndef HT_STAGING_H
#define HT_STAGING_H

#include <sys/types.h>

#include <stddef.h>

#include "proc.h"

/*
 * Find the agent library: $HEAPTOOL_AGENT, else next to this executable
 * (the build tree builds both at its top), else the installed copy.
 * Returns 0 and the absolute path in buf, or -1 after printing why.
 */
int ht_staging_find(char *buf, size_t len);

/* Is base (a path's last component) the agent's file name, or a staged
 * copy's?  1 or 0. */
int ht_staging_is_agent(const char *base);

/* 1 if process pid has the agent (or a staged copy) mapped, else 0. */
int ht_staging_loaded(pid_t pid);

/*
 * The path, in the target's view of the file system, at which process pid
 * (as /proc described it in *p) loads the agent: the agent itself, or a
 * staged copy.  Refused when the process has the agent mapped already
 * (loading another would not be safe: heaptool attach brings up the one
 * loaded).  Returns
 * 0 and the path in out, or -1 after printing why.
 */
int
ht_staging_path(pid_t pid, const struct ht_proc *p, char *out, size_t outlen);

#endif
