/*
 * The control protocol between the heaptool CLI and the agent, spoken over
 * a Unix stream socket in the abstract namespace, "\0heaptool.PID" (the
 * target's pid).  The agent checks the peer's credentials on every
 * connection (only the target's uid and root are served); the CLI checks
 * that the server is the target process (SO_PEERCRED pid), so a squatter
 * cannot impersonate an agent.
 *
 * One request, one reply, then the agent closes the connection.  The
 * request must arrive whole soon after the connect (agent/control.h);
 * an agent serving many clients may drop an idle connection or refuse a
 * report with HT_ERR_BUSY, which asks to try again.  Every
 * message is a 16-byte header and a payload; integers little-endian:
 *
 *   u32 magic "HTCP" (0x50435448), u16 version (HT_PROTO_VERSION),
 *   u16 type (enum ht_msg), u32 payload length, u32 flags (0)
 *
 * A message of another version is answered with HT_MSG_ERR code
 * HT_ERR_VERSION whose payload still parses by every version (so the CLI can
 * say "agent speaks protocol N, this heaptool speaks M").  Requests are at
 * most HT_PROTO_MAX_REQUEST bytes with payloads of exactly the size their
 * type defines; anything else is refused, never trusted.  Replies carrying a
 * profile are at most HT_PROTO_MAX_REPLY bytes.
 *
 * Payloads:
 *   START:   u64 rate (bytes, >= 1), u32 flags (HT_START_*),
 *            u64 dump_interval_ms, u64 dump_every_bytes,
 *            u64 dump_at_rss_bytes, u64 threshold_bytes (0: off),
 *            u64 max_samples (0: the agent's default; at most
 *            HT_PROTO_MAX_SAMPLES; since version 4),
 *            then the dump prefix as u16 length + bytes (at most
 *            HT_PROTO_MAX_PREFIX, no NUL; empty: no dumps, and then the
 *            four numbers must be 0)
 *   OK:      empty
 *   ERR:     u32 code (enum ht_err), then the message: UTF-8, no NUL
 *   STATUS:  struct ht_status, encoded field by field in declaration order
 *            (u32/u64 as declared, version string as u16 length + bytes,
 *            the children as u16 count + that many u32, the allocators
 *            as u16 count (at most HT_PROTO_MAX_ALLOCATORS) + that many
 *            u64 names and path as u16 length + bytes (at most
 *            HT_PROTO_MAX_ALLOCATOR_PATH), u32 allocators_more, u32
 *            final_armed, the final profile's directory as u16 length +
 *            bytes (at most HT_PROTO_MAX_FINAL_DIR), then u32 backend,
 *            u32 coverage_hooked, u32 coverage_unhooked, u32
 *            backend_default, u32 backends, u32 backends_present, u64
 *            rate_asked, then the dumps: u64 dumps_written, u64
 *            dump_written_ns, the last written file's path as u16
 *            length + bytes, u64 dumps_failed, u64 dump_failed_ns, u32
 *            dump_failed_errno, the last failed file's path as u16
 *            length + bytes (paths at most HT_PROTO_MAX_DUMP_PATH))
 *   PROFILE: a profile (src/profile.h)
 *   RECORD:  u64 max_bytes (0: no limit), u32 buffer (the events of each
 *            thread's buffer, at most HT_PROTO_MAX_REC_BUFFER; 0: the
 *            agent's default), u32 flags (0); and the trace file's descriptor, passed with
 *            the request's first byte (SCM_RIGHTS): the agent writes the
 *            trace (src/trace.h) into it, from its start
 *   RECSTAT: u32 flags (HT_RECSTAT_*)
 *   RECSTAT_REPLY: u32 state, u32 lost_why, u64 events, u64 bytes,
 *            u64 lost, u64 waits, u32 threads, u32 0
 *   HELLO, STOP, STATUS, REPORT, DETACH, HOOK requests: empty
 *
 * Version 3 added START's HT_START_FOLLOW and STATUS's follow, parent_pid
 * and children; version 4 START's max_samples and STATUS's max_samples and
 * flags (before the version string); version 5 START's HT_START_NO_FINAL
 * and STATUS's allocators, allocators_more, final_armed and final_dir
 * (after the children); version 6 START's backend (in its flags) and
 * STATUS's backend and coverage figures, then its backend_default,
 * backends, backends_present and rate_asked (at its end); version 7
 * STATUS's dumps written and failed (at its end); version 8 RECORD,
 * RECSTAT and RECSTAT_REPLY (heaptool record).  The CLI and the agent
 * speak one version: a CLI meeting an
 * agent of another says so (HT_ERR_VERSION, or a STATUS whose
 * proto_version differs), and what to do.
 *
 * Libc only, no allocation: the agent parses requests inside the target.
 */
#ifndef HT_PROTO_H
#define HT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define HT_PROTO_MAGIC	     0x50435448u /* "HTCP" little-endian */
#define HT_PROTO_VERSION     8
#define HT_PROTO_HEADER	     16
#define HT_PROTO_MAX_REQUEST 4096
#define HT_PROTO_MAX_REPLY   (1u << 30)
#define HT_PROTO_MAX_PREFIX  1024	/* bytes of a START's dump prefix */
#define HT_PROTO_MAX_SAMPLES (1u << 30) /* the most a START may ask for */

enum ht_msg {
	/* requests */
	HT_MSG_HELLO = 1,   /* -> STATUS */
	HT_MSG_STATUS = 2,  /* -> STATUS */
	HT_MSG_START = 3,   /* -> OK | ERR */
	HT_MSG_STOP = 4,    /* -> OK | ERR */
	HT_MSG_REPORT = 5,  /* -> PROFILE */
	HT_MSG_DETACH = 6,  /* -> OK: stop, restore every GOT slot */
	HT_MSG_HOOK = 7,    /* -> OK | ERR: (re)install hooks after detach */
	HT_MSG_RECORD = 8,  /* -> OK | ERR: start recording into a file */
	HT_MSG_RECSTAT = 9, /* -> RECSTAT_REPLY: a recording's state */
	/* replies */
	HT_MSG_OK = 64,
	HT_MSG_ERR = 65,
	HT_MSG_STATUS_REPLY = 66,
	HT_MSG_PROFILE = 67,
	HT_MSG_RECSTAT_REPLY = 68,
};

/* RECSTAT's flags: stop the recording first (the reply comes once its
 * END is written). */
#define HT_RECSTAT_STOP 0x1

/* A recording's state (RECSTAT_REPLY). */
enum ht_record_state {
	HT_RECORD_NONE = 0, /* none since the agent was loaded */
	HT_RECORD_RUNNING = 1,
	HT_RECORD_DONE = 2,   /* stopped when asked (RECSTAT, detach, exit) */
	HT_RECORD_FULL = 3,   /* stopped at its size limit */
	HT_RECORD_FAILED = 4, /* stopped by a loss (lost, lost_why) */
};

/* The most events a RECORD's per-thread buffer may hold. */
#define HT_PROTO_MAX_REC_BUFFER (1u << 20)

/* RECSTAT_REPLY's payload, decoded. */
struct ht_recstat {
	uint32_t state; /* enum ht_record_state */
	uint32_t lost_why;
	uint64_t events; /* written */
	uint64_t bytes;	 /* of the file */
	uint64_t lost;
	uint64_t waits;
	uint32_t threads;
};

#define HT_START_RESTART       0x1 /* start even if a session is running */
/* Children the profiled process forks start sessions of their own, at the
 * fork, with this one's settings (and follow their own children). */
#define HT_START_FOLLOW	       0x2
/* The session's final profile is not written when the process ends
 * (start --no-final-dump). */
#define HT_START_NO_FINAL      0x4
/* Version 6: the backend of the session (HT_BACKEND_*, src/allocnames.h) in bits
 * 8-11; 0: the agent's default (STATUS's backend). */
#define HT_START_BACKEND(b)    (((uint32_t)(b)&0xf) << 8)
#define HT_START_BACKEND_OF(f) (((uint32_t)(f) >> 8) & 0xf)
#define HT_START_FLAGS                                                         \
	(HT_START_RESTART | HT_START_FOLLOW | HT_START_NO_FINAL |              \
	    HT_START_BACKEND(0xf))

/* The most children a STATUS lists (the most recent first). */
#define HT_PROTO_MAX_CHILDREN	    256
/* The bounds of the allocators and the final profile's directory in a
 * STATUS: with the most children too, the reply still fits a request
 * buffer (the agent builds it there). */
#define HT_PROTO_MAX_ALLOCATORS	    8
#define HT_PROTO_MAX_ALLOCATOR_PATH 255
#define HT_PROTO_MAX_FINAL_DIR	    512
/* A dump's path: the prefix and its .PID.SEQ.heap. */
#define HT_PROTO_MAX_DUMP_PATH	    (HT_PROTO_MAX_PREFIX + 48)
/* The most bytes of a STATUS reply, header included, which the agent
 * builds in a connection's buffer of that size: the most children,
 * allocators and paths fit. */
#define HT_PROTO_MAX_STATUS	    6144

enum ht_err {
	HT_ERR_VERSION = 1,	/* other protocol version */
	HT_ERR_BAD_REQUEST = 2, /* malformed: bad magic, length, payload */
	HT_ERR_RUNNING = 3,	/* start while running, without restart */
	HT_ERR_NOT_RUNNING = 4, /* stop with no session running */
	HT_ERR_DETACHED = 5,	/* start while the hooks are removed */
	HT_ERR_NOMEM = 6,	/* the agent could not map its tables */
	HT_ERR_INTERNAL = 7,
	HT_ERR_DUMP_PREFIX = 8, /* the dump prefix is relative, or its
				   directory is not writable by the target */
	HT_ERR_BUSY = 9,	/* other clients hold every place: a
				   connection dropped to make room, or a
				   report while others are being sent */
	HT_ERR_BACKEND = 10,	/* version 6: the backend asked for cannot
				   run in the target (the message says why) */
	HT_ERR_RECORDING = 11,	/* version 8: RECORD while one runs */
	HT_ERR_TRACE = 12,	/* version 8: the trace's start could not
				   be written (the message says why) */
};

struct ht_msg_header {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
	uint32_t flags;
};

struct ht_status {
	uint32_t proto_version;
	uint32_t pid;
	uint32_t hooked; /* 1 if the GOT slots are patched */
	uint32_t slots_patched;
	uint32_t modules; /* modules in the agent's current set */
	uint32_t state;	  /* enum ht_session_state (profile.h) */
	uint64_t epoch;
	uint64_t rate;
	uint64_t start_ns;
	uint64_t samples;
	uint64_t live_samples;
	uint64_t dropped_samples;
	uint64_t overhead_bytes;
	uint64_t max_samples;	/* the session's bound on live samples */
	uint32_t flags;		/* HT_STATUS_* */
	char agent_version[32]; /* e.g. "0.1.0" */
	uint32_t follow;	/* 1 if the session follows forks */
	uint32_t parent_pid;	/* the session follows that process's, or 0 */
	uint32_t nchildren;	/* encoded as u16, <= HT_PROTO_MAX_CHILDREN */
	/* Followed children that are running, the most recent first. */
	uint32_t children[HT_PROTO_MAX_CHILDREN];
	/* The modules that define allocators the hooks do not reach
	 * (src/allocnames.h), the first HT_PROTO_MAX_ALLOCATORS of them;
	 * allocators_more counts the others. */
	uint32_t nallocators;
	struct ht_status_allocator {
		uint64_t names;
		char path[HT_PROTO_MAX_ALLOCATOR_PATH + 1]; /* cut if longer */
	} allocators[HT_PROTO_MAX_ALLOCATORS];
	uint32_t allocators_more;
	/* 1 if the process writes its session's final profile when it ends,
	 * in final_dir (as the target sees its files; "" if never armed). */
	uint32_t final_armed;
	char final_dir[HT_PROTO_MAX_FINAL_DIR + 1];
	/* The backend in use (enum ht_backend, src/allocnames.h) and the
	 * account of coverage in two figures (agent/coverage.h). */
	uint32_t backend;
	uint32_t coverage_hooked;
	uint32_t coverage_unhooked;
	/* The backend a start without --backend takes (jemalloc where its
	 * sampling is on), the backends that can run (bit HT_BACKEND_*) and
	 * those whose allocator is in the process (able to run or not), and
	 * the rate the session's start asked for (rate may be rounded from
	 * it: jemalloc samples at powers of 2). */
	uint32_t backend_default;
	uint32_t backends;
	uint32_t backends_present;
	uint64_t rate_asked;
	/* The dumps the agent wrote by itself (since it was loaded, or
	 * since this process was forked): how many, and the last one's path
	 * and time (CLOCK_REALTIME ns); those it failed to write (the
	 * directory gone, a full disk, EACCES): how many, and the last
	 * one's path, time and errno.  "" and 0 where there was none. */
	uint64_t dumps_written;
	uint64_t dump_written_ns;
	char dump_written[HT_PROTO_MAX_DUMP_PATH + 1];
	uint64_t dumps_failed;
	uint64_t dump_failed_ns;
	uint32_t dump_failed_errno;
	char dump_failed[HT_PROTO_MAX_DUMP_PATH + 1];
};

/*
 * What the agent's exported heaptool_agent_revive() returns to heaptool
 * attach, which calls it (a remote call, as it calls dlopen) in a process
 * where the agent is loaded but does not answer: the low 16 bits say what
 * happened (HT_REVIVE_*), bits 16-31 the errno of a failure (0 if none).
 * Never 0, so that a call that did not happen cannot pass for a result.
 */
#define HT_REVIVE_SERVING  1 /* its thread serves (again, or already) */
#define HT_REVIVE_PENDING  2 /* its thread started, not serving yet */
#define HT_REVIVE_ETHREAD  3 /* its thread could not be created */
#define HT_REVIVE_EMEMORY  4 /* its tables could not be mapped */
#define HT_REVIVE_ESOCKET  5 /* its control socket could not be bound */
#define HT_REVIVE_EHOOK	   6 /* the GOT slots could not be patched */
#define HT_REVIVE_WHAT(v)  ((unsigned)((v)&0xffff))
#define HT_REVIVE_ERRNO(v) ((int)(((v) >> 16) & 0xffff))
#define HT_REVIVE(what, err)                                                   \
	((long)(what) | (long)((unsigned)(err)&0xffff) << 16)

/* The tables were given back at detach: the last session's profile is
 * gone, and overhead_bytes is what the agent still holds. */
#define HT_STATUS_RELEASED 0x1

/* A parsed request (agent side).  Everything but type is START's. */
struct ht_request {
	uint16_t type;
	uint64_t rate;
	uint32_t flags;
	uint64_t dump_interval_ms;  /* 0: no periodic dumps */
	uint64_t dump_every_bytes;  /* 0: no dumps by volume */
	uint64_t dump_at_rss_bytes; /* 0: no dumps by RSS */
	uint64_t threshold_bytes;   /* 0: dumps keep every site */
	uint64_t max_samples;	    /* 0: the agent's default */
	/* The dump files' prefix, NUL-terminated; "" means no dumps. */
	char dump_prefix[HT_PROTO_MAX_PREFIX + 1];
	/* RECORD's (its flags in flags) and RECSTAT's (flags). */
	uint64_t rec_max_bytes;
	uint32_t rec_buffer;
};

/* The control socket's abstract address for pid: a NUL byte, then
 * "heaptool.PID" in decimal, with no terminating NUL (an abstract address is
 * every byte up to the address length, so both sides must use this length).
 * Writes at most HT_PROTO_SOCKET_NAME_MAX bytes to out; returns how many, to
 * add to offsetof(struct sockaddr_un, sun_path). */
#define HT_PROTO_SOCKET_NAME_MAX 24
size_t ht_proto_socket_name(char *out, uint32_t pid);

/* Encode a header into out[HT_PROTO_HEADER]. */
void ht_proto_put_header(uint8_t *out, uint16_t type, uint32_t length);
/* Decode a header.  Returns 0, or -1 if the magic is wrong.  The version is
 * returned as found: the caller compares it. */
int ht_proto_get_header(const uint8_t *in, struct ht_msg_header *h);

/* Agent side: parse one complete request message (header + payload) of len
 * bytes.  Returns 0 with *r filled, or an enum ht_err code (HT_ERR_VERSION,
 * HT_ERR_BAD_REQUEST).  Never reads outside buf[0..len). */
int
ht_proto_parse_request(const uint8_t *buf, size_t len, struct ht_request *r);

/* Encode a request (CLI side) into out (at least HT_PROTO_MAX_REQUEST
 * bytes).  A dump prefix longer than HT_PROTO_MAX_PREFIX is cut there: the
 * caller checks it first.  Returns the message length. */
size_t ht_proto_encode_request(uint8_t *out, const struct ht_request *r);

/* Encode an ERR reply (header + payload) into out of cap bytes; the message
 * is truncated to fit.  Returns the length. */
size_t
ht_proto_encode_err(uint8_t *out, size_t cap, uint32_t code, const char *msg);
/* Encode a STATUS reply into out of cap bytes.  Returns the length, 0 if
 * cap is too small. */
size_t
ht_proto_encode_status(uint8_t *out, size_t cap, const struct ht_status *s);
/* Decode the payload of an ERR or STATUS reply (CLI side).  Return 0 or -1
 * (malformed).  msg gets a NUL-terminated copy, truncated to msglen. */
int ht_proto_decode_err(const uint8_t *payload, size_t len, uint32_t *code,
    char *msg, size_t msglen);
int
ht_proto_decode_status(const uint8_t *payload, size_t len, struct ht_status *s);
/* A RECSTAT_REPLY: encode it (header + payload) into out of cap bytes
 * (the length, 0 if cap is too small); decode its payload (0 or -1). */
size_t
ht_proto_encode_recstat(uint8_t *out, size_t cap, const struct ht_recstat *s);
int ht_proto_decode_recstat(const uint8_t *payload, size_t len,
    struct ht_recstat *s);

#endif
