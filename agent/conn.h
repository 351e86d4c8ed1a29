/*
 * A connection of the control channel (control.c): its request buffer and
 * reply, and what is done to its socket: checked to be still ours (by the
 * socket's inode: the program may close or dup2 over our descriptors),
 * read with any descriptor passed along (SCM_RIGHTS, for RECORD), sent to
 * without ever waiting, closed.  The agent's thread only; no lock.
 */
#ifndef HT_CONN_H
#define HT_CONN_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define HT_CONN_STALL_MS 2000  /* a reply must make progress this often */
#define HT_CONN_REPLY_MS 60000 /* and be sent within this */

/*
 * A connection: its request arrives in buf, then its reply goes out of
 * buf[0..len) followed by map[0..maplen) (a profile), sent bytes of the
 * two so far.  Like the listening socket, fd is checked against the
 * socket's inode before each use.
 */
struct conn {
	int fd;		    /* -1: a free place */
	int sending;	    /* the request is whole, the reply on its way */
	ino_t ino;	    /* the socket's */
	pid_t peer;	    /* the client's process (SO_PEERCRED) */
	uint64_t seq;	    /* the order of the accepts: the oldest */
	uint64_t deadline;  /* CLOCK_MONOTONIC ms: closed then */
	uint64_t reply_end; /* the reply is sent by then */
	size_t have, need;  /* the request's bytes in buf, and its length */
	size_t len, sent;
	uint8_t *map;
	size_t maplen;
	int rfd; /* a descriptor that came with the request, or -1 */
	/* A request, or the largest reply built here (a STATUS). */
	uint8_t buf[HT_PROTO_MAX_STATUS];
};
_Static_assert(HT_PROTO_MAX_STATUS >= HT_PROTO_MAX_REQUEST,
    "a connection's buffer holds a request");

/* Is c's descriptor still the socket we accepted? */
int ht_conn_ours(const struct conn *c);
/* Forget c: close its socket if it is still ours, unmap its profile. */
void ht_conn_close(struct conn *c);
/* Send what the socket takes of c's reply, never waiting.  Returns 1 once
 * all of it is sent, 0 if more is to come (at POLLOUT), -1 if the client
 * is gone. */
int ht_conn_send(struct conn *c);
/* Send what the socket takes; close c once it is all sent, or its client
 * gone. */
void ht_conn_flush(struct conn *c);
/* c's reply is in buf[0..len), followed by its map if it has one: send it
 * from now on. */
void ht_conn_reply(struct conn *c, size_t len);
void ht_conn_reply_err(struct conn *c, uint32_t code, const char *msg);
void ht_conn_reply_ok(struct conn *c);
/* Tell c why it is dropped (what a fresh socket takes, no more), and close
 * it. */
void ht_conn_drop(struct conn *c, uint32_t code, const char *msg);
/* recv of what is missing of c's request (as recv(2)); a descriptor passed
 * with it is kept in c->rfd, one at most. */
ssize_t ht_conn_recv(struct conn *c);

#endif
