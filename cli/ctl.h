/*
 * The control client: one request to the agent inside a process, one
 * reply (src/proto.h is the protocol).
 *
 * Each call connects to the agent's abstract Unix socket "\0heaptool.N",
 * where N is the target's pid as the target sees it (the last entry of
 * NSpid in /proc/PID/status, so a process in a child pid namespace is
 * found too).  Abstract names belong to a network namespace: when the
 * target is in another one, the call enters it for the connect only (which
 * needs CAP_SYS_ADMIN there) and comes back.  The server must be the target
 * itself, proven before a byte is sent: the listener's process by
 * SO_PEERPIDFD, or where the kernel lacks it (before 6.5) the listening
 * socket found among the target's descriptors; a pid number alone
 * (SO_PEERCRED) is not proof, since a squatter's number can be reused by
 * the target.  Anything else holding the name is refused.  Sends and receives time out (5 s by default), a reply is read
 * only up to HT_PROTO_MAX_REPLY bytes and never trusted beyond its checked
 * length, and SIGPIPE is never raised.
 *
 * Failures keep a one-line message in the handle, "target PID: why; what
 * to do", ready for ht_warn("%s", ...), and a code that callers can test
 * (attach polls while the code is HT_CTL_ENOAGENT).  An ERR reply of the
 * agent is a failure with code HT_CTL_EAGENT; ht_ctl_agent_err() gives its
 * enum ht_err code.
 */
#ifndef HT_CTL_H
#define HT_CTL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define HT_CTL_TIMEOUT_MS 5000

enum ht_ctl_code {
	HT_CTL_OK = 0,
	HT_CTL_ENOPROC,	  /* the process does not exist (any more) */
	HT_CTL_ENOAGENT,  /* nobody listens on the name */
	HT_CTL_EREFUSED,  /* closed without a reply: not our user */
	HT_CTL_ESQUAT,	  /* another process holds the name */
	HT_CTL_ENETNS,	  /* cannot enter the target's network ns */
	HT_CTL_ETIMEDOUT, /* no (complete) reply in time */
	HT_CTL_EPROTO,	  /* a reply that does not parse */
	HT_CTL_EVERSION,  /* an agent of another protocol version */
	HT_CTL_EAGENT,	  /* an ERR reply */
	HT_CTL_ESYS,	  /* a system call failed (message says) */
};

struct ht_ctl;

/* A client for process pid (as seen from here).  Touches nothing yet.
 * NULL if out of memory. */
struct ht_ctl *ht_ctl_new(pid_t pid);
void ht_ctl_free(struct ht_ctl *);

/* The timeout of each send and receive, in milliseconds (> 0). */
void ht_ctl_set_timeout(struct ht_ctl *, int ms);

/*
 * Send request type (HT_MSG_HELLO or HT_MSG_STATUS) and decode the STATUS
 * reply into *st.  Returns 0 or -1.  A reply of another protocol version,
 * or a status whose proto_version is not ours, is HT_CTL_EVERSION.
 */
int ht_ctl_status(struct ht_ctl *, uint16_t type, struct ht_status *st);

/*
 * Send a request answered by OK (START with rate and flags, STOP, DETACH,
 * HOOK; rate and flags are ignored by the others).  Returns 0 or -1.
 */
int
ht_ctl_command(struct ht_ctl *, uint16_t type, uint64_t rate, uint32_t flags);

/*
 * Send START with everything r carries (type HT_MSG_START: rate, flags and
 * the dump settings; the prefix as the target sees its file system).
 * Returns 0 or -1.
 */
int ht_ctl_start(struct ht_ctl *, const struct ht_request *r);

/*
 * Send REPORT.  Returns 0 and the profile bytes in *buf, *len (owned by the
 * handle, valid until the next call or ht_ctl_free), or -1.  The bytes are
 * not decoded here.
 */
int ht_ctl_report(struct ht_ctl *, const uint8_t **buf, size_t *len);

/*
 * Send RECORD with r's settings (type HT_MSG_RECORD) and the descriptor
 * fd, the trace file, for the agent to write.  Returns 0 or -1.
 */
int ht_ctl_record(struct ht_ctl *, const struct ht_request *r, int fd);

/* Send RECSTAT with flags (HT_RECSTAT_STOP: stop first) and decode the
 * reply into *st.  Returns 0 or -1. */
int ht_ctl_recstat(struct ht_ctl *, uint32_t flags, struct ht_recstat *st);

/* The last failure, as one line; "" if none. */
const char *ht_ctl_error(const struct ht_ctl *);
/* The last failure's code, HT_CTL_OK after a success. */
int ht_ctl_errcode(const struct ht_ctl *);
/* After HT_CTL_EAGENT: the agent's code (enum ht_err); else 0. */
uint32_t ht_ctl_agent_err(const struct ht_ctl *);
/* After HT_CTL_EVERSION: the agent's protocol version; else 0. */
unsigned ht_ctl_agent_version(const struct ht_ctl *);

#endif
