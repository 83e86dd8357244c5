/* SPDX-License-Identifier: MIT */
/*
 * The target a front end serves: its LUN table, its fault rules, the SCSI
 * state commands run against, and one registry of what the front ends
 * report (counters, sessions) for the control socket to read.
 */
#ifndef SDSWARM_TARGET_H
#define SDSWARM_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "scsi/scsi.h"

struct lun_table;
struct lun_group;
struct fault_table;
struct sdnum_scheme;
struct target_registry;

/**
 * struct target - what every front end receives besides its own section of
 * the configuration; owned by the daemon, outlives the front ends.
 * @luns: the LUN table.
 * @faults: the fault rules; may be NULL (no faults).
 * @scsi: the SCSI target state commands point at (names, ALUA,
 *	reservations); its @luns and @faults are this target's.
 * @scheme: the sdnum scheme the target's disk names follow.
 * @name_prefix: the driver prefix of those names ("sd").
 * @groups: the LUN groups the table was made of at start.
 * @ngroups: how many.
 * @space_limit: most bytes of data the store may hold; 0: no limit.
 * @reg: the registry, from target_init(); private to target.c.
 */
struct target {
	struct lun_table *luns;
	struct fault_table *faults;
	struct scsi_target *scsi;
	const struct sdnum_scheme *scheme;
	const char *name_prefix;
	const struct lun_group *groups;
	unsigned int ngroups;
	uint64_t space_limit;
	struct target_registry *reg;
};

/**
 * target_init() - create @t's registry; the other fields are the caller's.
 * @t: the target.
 *
 * Context: before any front end starts.
 * Return: 0, -ENOMEM.
 */
int target_init(struct target *t);

/**
 * target_fini() - free the registry; every source must be unregistered.
 * @t: the target; a @t never initialised (reg NULL) is a no-op.
 */
void target_fini(struct target *t);

/*
 * What a file front end (FUSE) serves, counted like the SCSI commands of
 * the others: requests, errors, bytes and latency per kind of request.
 */
enum target_file_op {
	TARGET_FILE_READ,
	TARGET_FILE_WRITE,
	TARGET_FILE_FALLOCATE, /* hole punching and zeroing */
	TARGET_FILE_FSYNC,
	TARGET_FILE_OPS,
};

/**
 * struct target_file_stats - a file front end's counters, shared by its
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
struct target_file_stats {
	_Atomic uint64_t count[TARGET_FILE_OPS];
	_Atomic uint64_t errors[TARGET_FILE_OPS];
	_Atomic uint64_t bytes[TARGET_FILE_OPS];
	_Atomic uint64_t lat[SCSI_LAT_BUCKETS];
	_Atomic uint64_t inflight;
};

/**
 * struct target_file_sum - a plain snapshot of struct target_file_stats,
 * summed over the file front ends running and gone.
 */
struct target_file_sum {
	uint64_t count[TARGET_FILE_OPS];
	uint64_t errors[TARGET_FILE_OPS];
	uint64_t bytes[TARGET_FILE_OPS];
	uint64_t lat[SCSI_LAT_BUCKETS];
	uint64_t inflight;
};

/**
 * target_file_op_name() - "read", "write", "fallocate", "fsync".
 * @op: the kind.
 *
 * Return: a static string; "?" out of range.
 */
const char *target_file_op_name(enum target_file_op op);

/**
 * target_file_record() - count one answered request.
 * @st: the counters.
 * @op: its kind.
 * @bytes: bytes it moved.
 * @error: it was answered with an error.
 * @ns: its latency.
 *
 * Context: any thread; relaxed atomics.
 */
void target_file_record(struct target_file_stats *st, enum target_file_op op,
			uint64_t bytes, bool error, uint64_t ns);

/* Longest initiator or target name in a session (iSCSI's 223, a NUL). */
#define TARGET_SESSION_NAME_MAX 224

/**
 * struct target_session - one session a front end serves, for `sessions`.
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
struct target_session {
	const char *transport;
	char initiator[TARGET_SESSION_NAME_MAX];
	char target[TARGET_SESSION_NAME_MAX];
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
typedef unsigned int target_sessions_fn(void *arg, struct target_session *out,
					unsigned int cap);

/* The kinds of source the registry holds, and what @obj points at. */
enum target_source_kind {
	TARGET_SRC_SCSI, /* struct scsi_stats, one thread's */
	TARGET_SRC_FILE, /* struct target_file_stats, a file front end's */
	TARGET_SRC_SESSIONS, /* a front end's sessions: @obj is the fn's arg */
	TARGET_SRC_KINDS,
};

/**
 * struct target_source - one thing a front end reports.
 * @kind: what @obj is.
 * @obj: the counters (or the session list's argument); the key of
 *	target_unregister(); must stay valid until then.
 * @sessions: for TARGET_SRC_SESSIONS, the list function; else NULL.
 */
struct target_source {
	enum target_source_kind kind;
	void *obj;
	target_sessions_fn *sessions;
};

/**
 * target_register() - add a source to what the control socket reads.
 * @t: the target.
 * @src: the source (copied).
 *
 * Counters are written by their owners without the registry's lock and
 * read with relaxed atomic loads while they count (a counter may be one
 * request behind), which monitoring accepts.
 * Context: any thread.
 * Return: 0, -EEXIST (@src->obj is registered), -EINVAL (bad kind, or a
 * sessions source without its function), -ENOMEM.
 */
int target_register(struct target *t, const struct target_source *src);

/**
 * target_unregister() - remove the source registered with @obj; what its
 * counters counted is kept in the snapshots (nothing stays in flight).
 * @t: the target.
 * @obj: as registered; others are ignored.
 *
 * Context: any thread. Returns once no call of the source's session
 * function is in progress.
 */
void target_unregister(struct target *t, const void *obj);

/**
 * struct target_snapshot - every source's counters added up, running and
 * gone.
 * @scsi: the SCSI front ends' threads'.
 * @file: the file front ends'.
 * @sources: sources registered now, by kind.
 */
struct target_snapshot {
	struct scsi_stats_sum scsi;
	struct target_file_sum file;
	unsigned int sources[TARGET_SRC_KINDS];
};

/* target_snapshot()'s @kinds: a bit per enum target_source_kind. */
#define TARGET_KIND(k) (1u << (k))

/**
 * target_snapshot() - add up the counters of the sources of @kinds.
 * @t: the target.
 * @out: out, the sum; the fields of other kinds are zero, but
 *	@out->sources counts every kind.
 * @kinds: TARGET_KIND() bits: only what is asked for is read.
 *
 * Context: any thread. Cost: one add per registered source of @kinds.
 */
void target_snapshot(struct target *t, struct target_snapshot *out,
		     unsigned int kinds);

/**
 * target_sessions() - the sessions every front end serves now.
 * @t: the target.
 * @out: out, a malloc()ed array; free() it (NULL when there are none).
 *
 * Context: any thread; the front ends' list functions run under the
 * registry's lock.
 * Return: the number of entries in @out; -ENOMEM.
 */
int target_sessions(struct target *t, struct target_session **out);

#endif /* SDSWARM_TARGET_H */
