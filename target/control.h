/* SPDX-License-Identifier: MIT */
/*
 * The control socket: JSON lines over a Unix stream socket (mode 0600),
 * one request object per line, one reply object per line. Served from the
 * daemon's event loop without threads: non-blocking sockets, many clients
 * at once, replies written as the client reads them. Also the registry of
 * the front ends' per-thread SCSI counters that {"cmd":"stats"} sums.
 */
#ifndef SDSWARM_CONTROL_H
#define SDSWARM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi/scsi.h"

struct lun_table;
struct fault_table;
struct store;
struct cfg;
struct scsi_stats;
struct scsi_target;

/* Longest request line, newline excluded; a longer one closes the client. */
#define CTL_LINE_MAX 65536
/* Clients served at once; one more is told so and closed. */
#define CTL_MAX_CLIENTS 64
/* Slots beyond CTL_MAX_CLIENTS only root (uid 0) clients may take. */
#define CTL_ROOT_CLIENTS 1

/* Entries `names` sends per batch (and the client asks for per page). */
#define CTL_NAMES_BATCH 1024

/**
 * struct ctl_context - what the control socket acts on; all borrowed.
 * @luns: the LUN table.
 * @faults: the fault table.
 * @store: the store (status reports its counters).
 * @cfg: the configuration (scheme and prefix of `names`).
 * @idle_timeout: seconds a client may go without a byte either way before
 *	it is told so and closed; 0 never.
 * @tgt: the SCSI target (its ALUA port groups, for `alua`); may be NULL.
 */
struct ctl_context {
	struct lun_table *luns;
	struct fault_table *faults;
	struct store *store;
	const struct cfg *cfg;
	unsigned int idle_timeout;
	struct scsi_target *tgt;
};

struct ctl_server;

/**
 * ctl_default_path() - the control socket when neither --control nor
 * [target] control says: $XDG_RUNTIME_DIR/sdswarm/control, else
 * /run/sdswarm/control for root, else /tmp/sdswarm-$UID/control.
 * @buf: out, NUL-terminated.
 * @len: its size.
 *
 * Context: reads the environment; the daemon and the client agree.
 * Return: the length, or -ENAMETOOLONG if it does not fit @len or a
 * socket address.
 */
int ctl_default_path(char *buf, size_t len);

/**
 * ctl_server_create() - bind and listen on the control socket.
 * @out: out, the server.
 * @path: the socket path.
 * @ctx: what requests act on (copied; the pointers must outlive the server).
 *
 * Creates the socket's directory (mode 0700) if it is missing. A stale
 * socket (nobody answering) is replaced; a live one is left alone. The
 * socket is created mode 0600 (the umask is narrowed around bind()).
 * Context: the daemon's main thread.
 * Return: 0; -EADDRINUSE if another daemon answers on @path; -EEXIST if
 * @path exists and is not a socket; -ENAMETOOLONG; -EPERM (and a log line
 * saying which) if the directory belongs to a user other than the daemon's
 * or root, or is writable by group or others (allowed only for a sticky
 * root-owned one, such as /tmp); or the -errno of a system call.
 */
int ctl_server_create(struct ctl_server **out, const char *path,
		      const struct ctl_context *ctx);

/**
 * ctl_server_fd() - a descriptor that polls readable when the server has
 * work (an epoll descriptor over the socket and its clients).
 * @s: the server.
 *
 * Return: the descriptor, owned by @s.
 */
int ctl_server_fd(const struct ctl_server *s);

/**
 * ctl_server_run() - do all the work that is ready, without blocking:
 * accept clients, read requests, execute them, write replies.
 * @s: the server.
 *
 * Context: the thread that created @s, when ctl_server_fd() is readable
 * (calling it at other times is harmless).
 * Return: the number of events handled.
 */
int ctl_server_run(struct ctl_server *s);

/**
 * ctl_server_destroy() - close every client and the socket, and unlink the
 * socket if it is still the one this server bound. NULL is a no-op.
 * @s: the server.
 */
void ctl_server_destroy(struct ctl_server *s);

/**
 * ctl_execute() - run one request line in process and return the whole
 * reply (for tests and fuzzing; the socket path streams large replies).
 * @s: the server.
 * @line: the request, without its newline.
 * @len: its length.
 * @reply: out, the reply line with its newline, NUL-terminated; free().
 *
 * Return: 0, -ENOMEM.
 */
int ctl_execute(struct ctl_server *s, const char *line, size_t len,
		char **reply);

/**
 * ctl_connect() - connect to a control socket (the client side).
 * @path: the socket path.
 *
 * The peer's credentials (SO_PEERCRED) must be root's or the caller's
 * effective uid: anyone else who could bind the path might forge replies.
 *
 * Return: a connected, blocking, close-on-exec descriptor; -ENOENT (no
 * socket there), -ECONNREFUSED (no daemon behind it), -EPERM (the process
 * behind it is neither root nor the caller's uid), -ENAMETOOLONG, or
 * another -errno.
 */
int ctl_connect(const char *path);

/**
 * ctl_stats_register() - add one thread's counters to what
 * {"cmd":"stats"} sums.
 * @st: the counters; they must stay valid until ctl_stats_unregister().
 *
 * The owning thread keeps writing them without locks; the sum reads them
 * racily (a counter may be one command behind), which monitoring accepts.
 * Context: any thread.
 * Return: 0, -EEXIST (already registered), -ENOMEM.
 */
int ctl_stats_register(struct scsi_stats *st);

/**
 * ctl_stats_unregister() - stop summing @st; what it counted is kept.
 * @st: registered counters (others are ignored).
 *
 * Context: any thread.
 */
void ctl_stats_unregister(struct scsi_stats *st);

/**
 * ctl_stats_sum() - every registered thread's counters and those of
 * threads gone, added up.
 * @out: out, the sum.
 *
 * Context: any thread. Cost: one scsi_stats_add() per registered thread.
 * Return: the number of threads registered now.
 */
unsigned int ctl_stats_sum(struct scsi_stats *out);

/*
 * What a file front end (FUSE) serves, counted like the SCSI commands of
 * the others: requests, errors, bytes and latency per kind of request.
 */
enum ctl_file_op {
	CTL_FILE_READ,
	CTL_FILE_WRITE,
	CTL_FILE_FALLOCATE, /* hole punching and zeroing */
	CTL_FILE_FSYNC,
	CTL_FILE_OPS,
};

/**
 * struct ctl_file_stats - a file front end's counters, shared by its
 * threads (libfuse hands requests to any of them): relaxed atomics, about
 * a dozen nanoseconds a request against the microseconds of a FUSE round
 * trip.
 * @count: requests of each kind that were answered.
 * @errors: those answered with an error.
 * @bytes: bytes read or written (a fallocate's range; 0 for fsync).
 * @lat: log2 ns buckets (scsi_lat_bucket()) of the time from the handler
 *	receiving the request to its reply, fault delays included.
 * @inflight: requests received and not yet answered (sessions).
 */
struct ctl_file_stats {
	_Atomic uint64_t count[CTL_FILE_OPS];
	_Atomic uint64_t errors[CTL_FILE_OPS];
	_Atomic uint64_t bytes[CTL_FILE_OPS];
	_Atomic uint64_t lat[SCSI_LAT_BUCKETS];
	_Atomic uint64_t inflight;
};

/**
 * struct ctl_file_sum - a plain snapshot of struct ctl_file_stats, summed
 * over the file front ends running and gone.
 */
struct ctl_file_sum {
	uint64_t count[CTL_FILE_OPS];
	uint64_t errors[CTL_FILE_OPS];
	uint64_t bytes[CTL_FILE_OPS];
	uint64_t lat[SCSI_LAT_BUCKETS];
	uint64_t inflight;
};

/**
 * ctl_file_op_name() - "read", "write", "fallocate", "fsync".
 * @op: the kind.
 *
 * Return: a static string; "?" out of range.
 */
const char *ctl_file_op_name(enum ctl_file_op op);

/**
 * ctl_file_stats_record() - count one answered request.
 * @st: the counters.
 * @op: its kind.
 * @bytes: bytes it moved.
 * @error: it was answered with an error.
 * @ns: its latency.
 *
 * Context: any thread; relaxed atomics.
 */
void ctl_file_stats_record(struct ctl_file_stats *st, enum ctl_file_op op,
			   uint64_t bytes, bool error, uint64_t ns);

/**
 * ctl_file_stats_register() - add a file front end's counters to what
 * stats and metrics report.
 * @st: the counters; valid until ctl_file_stats_unregister().
 *
 * Context: any thread.
 * Return: 0, -EEXIST, -ENOSPC (more than a few file front ends).
 */
int ctl_file_stats_register(struct ctl_file_stats *st);

/**
 * ctl_file_stats_unregister() - stop reading @st; what it counted is kept.
 * @st: registered counters (others are ignored).
 *
 * Context: any thread.
 */
void ctl_file_stats_unregister(struct ctl_file_stats *st);

/**
 * ctl_file_stats_sum() - the file front ends' counters, running and gone.
 * @out: out, the sum.
 *
 * Context: any thread.
 * Return: the number of file front ends registered now.
 */
unsigned int ctl_file_stats_sum(struct ctl_file_sum *out);

/* Longest initiator or target name in a session (iSCSI's 223, a NUL). */
#define CTL_SESSION_NAME_MAX 224

/**
 * struct ctl_session - one session a front end serves, for `sessions`.
 * @transport: "iscsi" (a static string).
 * @initiator: the initiator's name.
 * @target: the target's name ("" for a discovery session).
 * @peer: the initiator's address and port.
 * @portal: the portal (address and port) it came in through.
 * @isid: the initiator session id, 12 hex digits.
 * @tsih: the target session identifying handle.
 * @discovery: a discovery session (SendTargets only).
 * @header_digest: CRC32C header digests negotiated.
 * @data_digest: CRC32C data digests negotiated.
 * @connections: connections of the session.
 * @inflight: commands received and not yet completed (queued, held,
 *	waiting for data or executing).
 * @age_ns: nanoseconds since the session's connection was accepted.
 */
struct ctl_session {
	const char *transport;
	char initiator[CTL_SESSION_NAME_MAX];
	char target[CTL_SESSION_NAME_MAX];
	char peer[64];
	char portal[96];
	char isid[13];
	uint16_t tsih;
	bool discovery;
	bool header_digest, data_digest;
	unsigned int connections;
	uint32_t inflight;
	uint64_t age_ns;
};

/*
 * A front end's list of sessions: fills up to @cap entries of @out and
 * returns how many there are (more than @cap: call again with more room).
 */
typedef unsigned int ctl_sessions_fn(void *arg, struct ctl_session *out,
				     unsigned int cap);

/**
 * ctl_sessions_register() - a front end whose sessions `sessions` lists.
 * @fn: its list function, called from the control thread.
 * @arg: passed to @fn; also the key of ctl_sessions_unregister().
 *
 * Context: any thread.
 * Return: 0, -ENOSPC (more than a few front ends).
 */
int ctl_sessions_register(ctl_sessions_fn *fn, void *arg);

/**
 * ctl_sessions_unregister() - stop listing @arg's sessions; returns once
 * no call of its function is in progress.
 * @arg: as registered.
 */
void ctl_sessions_unregister(void *arg);

#endif /* SDSWARM_CONTROL_H */
