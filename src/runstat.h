/*
 * The status page of heaptool run: how the agent of the launched command
 * fared with the profile it writes when the command exits, for heaptool
 * run to say the true cause when no profile appeared (the agent itself
 * never prints).
 *
 * heaptool run makes the page, HT_RUNSTAT_SIZE bytes of a memfd, writes
 * its magic and a random cookie, and hands the descriptor (inherited
 * across the exec) and the cookie to the agent in the environment:
 * HEAPTOOL_STATUS_FD and HEAPTOOL_STATUS_COOKIE, decimal.  The agent of the
 * profiled process (HEAPTOOL_PID's) maps the page shared if the descriptor
 * is a regular file of that size, open for reading and writing, whose
 * magic and cookie are these, and only then closes it: a descriptor number
 * the program reused for a file of its own is neither written nor closed.
 * From then on only a mapping remains, which the agent writes with plain
 * stores (no system call that could fail or block at exit); heaptool run
 * reads it after the command has exited.  A program replaced by an exec
 * keeps neither the mapping nor the descriptor: its page then tells no
 * more than "running".
 *
 * The state is written last, after the fields it qualifies.
 */
#ifndef HT_RUNSTAT_H
#define HT_RUNSTAT_H

#include <stdint.h>

#define HT_RUNSTAT_FD_ENV     "HEAPTOOL_STATUS_FD"
#define HT_RUNSTAT_COOKIE_ENV "HEAPTOOL_STATUS_COOKIE"
#define HT_RUNSTAT_SIZE	      4096
/* "HTRUNST1": the layout below, version 1. */
#define HT_RUNSTAT_MAGIC      0x3154534e55525448ULL

enum ht_runstat_state {
	HT_RUNSTAT_NONE,      /* the agent never took the page */
	HT_RUNSTAT_RUNNING,   /* profiling; the exit has not come */
	HT_RUNSTAT_NOSTART,   /* the session could not start (err) */
	HT_RUNSTAT_WRITTEN,   /* the profile was written at exit */
	HT_RUNSTAT_FAILED,    /* writing it at exit failed (err, ids) */
	HT_RUNSTAT_NOSESSION, /* at exit no session ran: nothing to write */
	HT_RUNSTAT_NOBACKEND  /* the backend asked for cannot run (why) */
};

#define HT_RUNSTAT_WHY 256

struct ht_runstat {
	uint64_t magic;	 /* HT_RUNSTAT_MAGIC, by heaptool run */
	uint64_t cookie; /* by heaptool run */
	uint64_t pid;	 /* the agent's process */
	int32_t err;	 /* errno of the failure, 0 if none */
	/* The process's ids when the state was set: the profile is
	 * written as its effective user and group. */
	uint32_t uid, euid, gid, egid;
	uint32_t state; /* enum ht_runstat_state */
	/* With HT_RUNSTAT_NOBACKEND: the agent's phrase, NUL-terminated
	 * (heaptool run ends it with the NUL whatever it reads). */
	char why[HT_RUNSTAT_WHY];
};

#endif
