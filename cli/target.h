/*
 * The target: the process a command talks to, and what heaptool keeps
 * about it between commands.
 *
 * A command names its target with -p PID; without it, the current target
 * is the process heaptool attach remembered, kept per user in
 * ${XDG_STATE_HOME:-$HOME/.local/state}/heaptool/target as "PID START\n".
 * START is the process's start time (field 22 of /proc/PID/stat, clock
 * ticks after boot): a pid reused by another process has another start
 * time, so it is reported gone rather than talked to, and the current
 * target is forgotten as soon as it is found gone.
 *
 * A baseline is the profile of a live target as its agent sent it, kept
 * beside the current target as baseline.PID.START.heap for the same
 * reason: a process that reuses the pid never finds the baseline of the
 * one that had it before.
 *
 * The functions that talk to the agent (through ctl.h) or that read /proc
 * print why they fail, with ht_warn; the others return -1 with errno.
 */
#ifndef HT_TARGET_H
#define HT_TARGET_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "proc.h"
#include "profile.h"
#include "symbolize.h"

/* Parse a process ID (a decimal number from 1 to INT_MAX).  Returns 0, or
 * -1 if s is not one. */
int ht_target_parse_pid(const char *s, pid_t *pid);

/*
 * The process a command talks to: popt, the argument of -p, or when NULL
 * the current target.  Returns HT_EXIT_OK and the pid, or an exit status
 * after printing why: no target (usage), a target that exited (forgotten)
 * or is stopped (runtime).
 */
int ht_target_resolve(const char *popt, pid_t *pid);

/*
 * As ht_target_resolve, for a command that can read a gone target's final
 * profile (finals.h): when the target is gone and left one, returns
 * HT_EXIT_OK with the pid and the profile's path in final[len] (else
 * final is "").  A gone target that left one is not forgotten, and other
 * commands say where its final profile is.
 */
int
ht_target_resolve_final(const char *popt, pid_t *pid, char *final, size_t len);

/* Can process pid, as /proc described it in *p, be talked to now?  Not
 * when it is stopped, or held by a tracer in a stop.  Returns HT_EXIT_OK,
 * or HT_EXIT_FAIL after printing why, the message starting with what. */
int ht_target_check(pid_t pid, const char *what, const struct ht_proc *p);

/* Remember pid, started at start, as the current target (atomically).
 * Returns 0, or -1 with errno. */
int ht_target_save(pid_t pid, uint64_t start);
/* Forget pid if it is the current target. */
void ht_target_forget(pid_t pid);

/* A control client for pid, or NULL after printing why. */
struct ht_ctl *ht_target_ctl(pid_t pid);
/* Print the client's last failure, and forget pid if the failure says it
 * is gone.  Returns HT_EXIT_FAIL. */
int ht_target_failed(struct ht_ctl *c, pid_t pid);

/* Send pid's agent a request of type (HT_MSG_STOP, HT_MSG_DETACH ...)
 * answered by OK.  Returns HT_EXIT_OK, or HT_EXIT_FAIL after printing
 * why. */
int ht_target_command(pid_t pid, uint16_t type);

/*
 * The current profile of pid from its agent, decoded (so that nothing is
 * ever saved that heaptool report could not read).  With raw, the bytes
 * the agent sent are copied into *raw (malloc'd, the caller frees them)
 * and their length into *rawlen.  Returns the profile, or NULL after
 * printing why.
 */
struct ht_profile *ht_target_profile(pid_t pid, uint8_t **raw, size_t *rawlen);

/* A symbolizer for prof, a profile of the live process pid: the modules'
 * files are read as the process maps them (map_files) or sees them (its
 * mount namespace and root, through a live thread), which also finds them
 * inside a container or a chroot; after the sysroot and before the
 * standard places the debug directories of files (sysroot, debug_dirs and
 * ndebug_dirs of symbolize.h; NULL: none).  NULL with errno on failure. */
struct ht_sym *ht_target_sym(pid_t pid, const struct ht_profile *prof,
    const struct ht_sym_opts *files);

/* The start time of pid into *start.  Returns 0, or -1 after printing why
 * (the process is gone). */
int ht_target_start_time(pid_t pid, uint64_t *start);

/* The path of the baseline of pid started at start into buf; with create,
 * its directory is made.  Returns 0, or -1 with errno. */
int ht_target_baseline_path(char *buf, size_t len, pid_t pid, uint64_t start,
    int create);

/*
 * Save len bytes of raw profile as the baseline of pid started at start,
 * replacing the one before, and remove the baselines of processes that
 * are gone.  The path is stored in buf.  Returns 0, or -1 with errno.
 */
int ht_target_baseline_save(char *buf, size_t buflen, pid_t pid, uint64_t start,
    const uint8_t *raw, size_t len);

#endif
