/*
 * A client of the agent's control socket for the C tests, speaking
 * src/proto.h: connect to "\0heaptool.PID", send one request, read the one
 * reply, see the agent close.  Every socket has send and receive timeouts
 * of AGENT_TIMEOUT seconds, so a silent agent fails a test instead of
 * hanging it.  Link src/proto.c, src/profile.c and src/profile-read.c.
 */
#ifndef HT_TAP_AGENT_H
#define HT_TAP_AGENT_H

#include <sys/types.h>

#include <stdint.h>

#include "profile.h"
#include "proto.h"

#define AGENT_TIMEOUT 30 /* seconds: far above the agent's own 2 s */

struct agent_reply {
	struct ht_msg_header h;
	uint8_t *payload; /* h.length bytes, malloc'd */
	int eof;	  /* the agent closed after it */
};

/* Connect to pid's agent; if patient, retry for 10 s while nothing listens
 * there yet.  Returns the socket, or -1. */
int agent_connect(pid_t pid, int patient);

/* Read exactly len bytes from fd into buf: 0, or -1 at end of file, on
 * an error or after the socket's receive timeout. */
int agent_read_full(int fd, void *buf, size_t len);

/* Read one reply of this protocol version from fd, and whether the agent
 * then closes the connection.  Returns 0, or -1 (r->payload NULL). */
int agent_read_reply(int fd, struct agent_reply *r);
void agent_reply_free(struct agent_reply *r);

/* Send q to pid's agent (patiently) and read the reply.  Returns 0, or -1
 * if there is no agent or no well-formed reply. */
int agent_request(pid_t pid, const struct ht_request *q, struct agent_reply *r);

/* The outcome of q: 0 for OK (empty, then closed), the code of an ERR,
 * -1 for anything else. */
long agent_ask(pid_t pid, const struct ht_request *q);
/* The same for a request of type with rate and flags (START's) and
 * nothing else. */
long agent_simple(pid_t pid, uint16_t type, uint64_t rate, uint32_t flags);

/* HELLO: 0 and the status in *st, or -1. */
int agent_status(pid_t pid, struct ht_status *st);

/* REPORT: the profile decoded by src/profile-read.c (free it with
 * ht_profile_free), or NULL (a diagnostic says why if it did not decode). */
struct ht_profile *agent_report(pid_t pid);

#endif
