/*
 * A control connection's socket (conn.h): what control.c's loop does to
 * it, kept apart from what the requests mean.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "prim.h"
#include "proto.h"

/* Is c's descriptor still the socket we accepted?  (Sockets are told apart
 * by their inode: they all live on one device.) */
int
ht_conn_ours(const struct conn *c)
{
	struct stat st;

	return c->fd >= 0 && fstat(c->fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_ino == c->ino;
}

/*
 * Forget c: close its socket if it is still ours, unmap its profile.  fd
 * is cleared before the close: a fork in between leaves its child a copy
 * of the connection (closed at its exec) rather than have the child close
 * a number that the program may have reused after our close.
 */
void
ht_conn_close(struct conn *c)
{
	int fd = c->fd, ours = ht_conn_ours(c);

	__atomic_store_n(&c->fd, -1, __ATOMIC_RELEASE);
	if (ours)
		close(fd);
	if (c->rfd >= 0)
		close(c->rfd);
	c->rfd = -1;
	if (c->map != NULL)
		munmap(c->map, c->maplen);
	c->map = NULL;
	c->maplen = 0;
}

/*
 * Send what the socket takes of c's reply, never waiting.  Returns 1 once
 * all of it is sent, 0 if more is to come (at POLLOUT), -1 if the client
 * is gone.  MSG_NOSIGNAL: a SIGPIPE for a client gone away would stay
 * pending forever on this thread, which blocks every signal.
 */
int
ht_conn_send(struct conn *c)
{
	struct iovec iov[2];
	struct msghdr m;
	size_t off;
	ssize_t n;

	while (c->sent < c->len + c->maplen) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		if (c->sent < c->len) {
			iov[m.msg_iovlen].iov_base = c->buf + c->sent;
			iov[m.msg_iovlen++].iov_len = c->len - c->sent;
		}
		if (c->maplen > 0) {
			off = c->sent > c->len ? c->sent - c->len : 0;
			iov[m.msg_iovlen].iov_base = c->map + off;
			iov[m.msg_iovlen++].iov_len = c->maplen - off;
		}
		n = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->sent += (size_t)n;
			c->deadline = ht_prim_mono_ms() + HT_CONN_STALL_MS;
			if (c->deadline > c->reply_end)
				c->deadline = c->reply_end;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
	return 1;
}

/* Send what the socket takes of c's reply; close c once it is all sent,
 * or its client gone. */
void
ht_conn_flush(struct conn *c)
{
	if (!ht_conn_ours(c) || ht_conn_send(c) != 0)
		ht_conn_close(c);
}

/* c's reply is in buf[0..len), followed by its map if it has one: send it
 * from now on. */
void
ht_conn_reply(struct conn *c, size_t len)
{
	uint64_t now = ht_prim_mono_ms();

	c->len = len;
	c->sent = 0;
	c->sending = 1;
	c->reply_end = now + HT_CONN_REPLY_MS;
	c->deadline = now + HT_CONN_STALL_MS;
}

void
ht_conn_reply_err(struct conn *c, uint32_t code, const char *msg)
{
	ht_conn_reply(c,
	    ht_proto_encode_err(c->buf, sizeof(c->buf), code, msg));
}

void
ht_conn_reply_ok(struct conn *c)
{
	ht_proto_put_header(c->buf, HT_MSG_OK, 0);
	ht_conn_reply(c, HT_PROTO_HEADER);
}

/* Tell c why it is dropped (what a fresh socket takes, no more), and close
 * it. */
void
ht_conn_drop(struct conn *c, uint32_t code, const char *msg)
{
	if (ht_conn_ours(c)) {
		ht_conn_reply_err(c, code, msg);
		(void)ht_conn_send(c);
	}
	ht_conn_close(c);
}

/*
 * recv of what is missing of c's request; a descriptor passed with it
 * (SCM_RIGHTS, for RECORD) is kept in c->rfd, one at most: any other is
 * closed at once.
 */
ssize_t
ht_conn_recv(struct conn *c)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct cmsghdr *cm;
	struct iovec iov;
	struct msghdr m;
	ssize_t n;
	size_t i, k;
	int fds[4];

	iov.iov_base = c->buf + c->have;
	iov.iov_len = c->need - c->have;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.b;
	m.msg_controllen = sizeof(ctl.b);
	n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&m); cm != NULL; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (k > 4)
			k = 4;
		memcpy(fds, CMSG_DATA(cm), k * sizeof(int));
		for (i = 0; i < k; i++) {
			if (c->rfd < 0)
				c->rfd = fds[i];
			else
				close(fds[i]);
		}
	}
	return n;
}
