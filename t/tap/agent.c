/* A client of the agent's control socket for the C tests (see agent.h). */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "basic.h"

static void
set_timeouts(int fd)
{
	struct timeval tv = { AGENT_TIMEOUT, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int
agent_connect(pid_t pid, int patient)
{
	struct sockaddr_un sa;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	size_t len;
	int fd, i;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	len = ht_proto_socket_name(sa.sun_path, (uint32_t)pid);
	for (i = 0; i < (patient ? 1000 : 1); i++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			bail("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa,
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			    len)) == 0) {
			set_timeouts(fd);
			return fd;
		}
		close(fd);
		/* Not listening yet: the agent's thread is starting. */
		if (errno != ECONNREFUSED && errno != ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	return -1;
}

int
agent_read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
agent_read_reply(int fd, struct agent_reply *r)
{
	uint8_t hdr[HT_PROTO_HEADER], extra;

	memset(r, 0, sizeof(*r));
	if (agent_read_full(fd, hdr, sizeof(hdr)) != 0 ||
	    ht_proto_get_header(hdr, &r->h) != 0 ||
	    r->h.version != HT_PROTO_VERSION ||
	    r->h.length > HT_PROTO_MAX_REPLY)
		return -1;
	if ((r->payload = malloc(r->h.length + 1)) == NULL)
		bail("out of memory");
	if (agent_read_full(fd, r->payload, r->h.length) != 0) {
		agent_reply_free(r);
		return -1;
	}
	r->eof = read(fd, &extra, 1) == 0;
	return 0;
}

void
agent_reply_free(struct agent_reply *r)
{
	free(r->payload);
	r->payload = NULL;
}

int
agent_request(pid_t pid, const struct ht_request *q, struct agent_reply *r)
{
	static uint8_t b[HT_PROTO_MAX_REQUEST];
	size_t n;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	n = ht_proto_encode_request(b, q);
	if ((fd = agent_connect(pid, 1)) < 0)
		return -1;
	rc = write(fd, b, n) == (ssize_t)n ? agent_read_reply(fd, r) : -1;
	close(fd);
	return rc;
}

long
agent_ask(pid_t pid, const struct ht_request *q)
{
	struct agent_reply r;
	uint32_t code;
	char msg[256];
	long rc = -1;

	if (agent_request(pid, q, &r) != 0)
		return -1;
	if (r.h.type == HT_MSG_OK && r.h.length == 0 && r.eof)
		rc = 0;
	else if (r.h.type == HT_MSG_ERR && r.eof &&
	    ht_proto_decode_err(r.payload, r.h.length, &code, msg,
		sizeof(msg)) == 0)
		rc = code;
	agent_reply_free(&r);
	return rc;
}

long
agent_simple(pid_t pid, uint16_t type, uint64_t rate, uint32_t flags)
{
	struct ht_request q;

	memset(&q, 0, sizeof(q));
	q.type = type;
	q.rate = rate;
	q.flags = flags;
	return agent_ask(pid, &q);
}

int
agent_status(pid_t pid, struct ht_status *st)
{
	struct ht_request q;
	struct agent_reply r;
	int rc = -1;

	memset(&q, 0, sizeof(q));
	q.type = HT_MSG_HELLO;
	if (agent_request(pid, &q, &r) != 0)
		return -1;
	if (r.h.type == HT_MSG_STATUS_REPLY &&
	    ht_proto_decode_status(r.payload, r.h.length, st) == 0)
		rc = 0;
	agent_reply_free(&r);
	return rc;
}

struct ht_profile *
agent_report(pid_t pid)
{
	struct ht_request q;
	struct ht_profile *p = NULL;
	struct agent_reply r;
	char err[256];

	memset(&q, 0, sizeof(q));
	q.type = HT_MSG_REPORT;
	if (agent_request(pid, &q, &r) != 0)
		return NULL;
	if (r.h.type == HT_MSG_PROFILE && r.eof) {
		p = ht_profile_decode(r.payload, r.h.length, err, sizeof(err));
		if (p == NULL)
			diag("profile: %s", err);
	}
	agent_reply_free(&r);
	return p;
}
