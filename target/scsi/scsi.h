/* SPDX-License-Identifier: MIT */
/*
 * SCSI emulation: a front end fills a struct scsi_cmd (LUN, CDB, data
 * buffers) and calls scsi_exec(); it gets back status, sense and data. No
 * sockets, no file descriptors, no allocation per command.
 */
#ifndef SDSWARM_SCSI_H
#define SDSWARM_SCSI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "asc.h"

struct lun_table;
struct fault_table;
struct scsi_stats;
struct scsi_cmd;
struct scsi_pr;
struct scsi_alua;

/* SAM status codes */
#define SCSI_GOOD 0x00
#define SCSI_CHECK_CONDITION 0x02
#define SCSI_CONDITION_MET 0x04
#define SCSI_BUSY 0x08
#define SCSI_RESERVATION_CONFLICT 0x18
#define SCSI_TASK_SET_FULL 0x28
#define SCSI_TASK_ABORTED 0x40

/* Sense keys */
#define SK_NO_SENSE 0x0
#define SK_RECOVERED_ERROR 0x1
#define SK_NOT_READY 0x2
#define SK_MEDIUM_ERROR 0x3
#define SK_HARDWARE_ERROR 0x4
#define SK_ILLEGAL_REQUEST 0x5
#define SK_UNIT_ATTENTION 0x6
#define SK_DATA_PROTECT 0x7
#define SK_ABORTED_COMMAND 0xb
#define SK_MISCOMPARE 0xe

#define SCSI_SENSE_MAX 96
#define SCSI_CDB_MAX 32

enum scsi_dir {
	SCSI_DIR_NONE = 0,
	SCSI_DIR_READ, /* data from target to initiator (Data-In) */
	SCSI_DIR_WRITE, /* data from initiator to target (Data-Out) */
};

/* What the front end does with a command scsi_exec() returned. */
enum scsi_disposition {
	SCSI_DONE = 0, /* complete it now */
	SCSI_DELAY, /* complete it after cmd->delay_ns (injected delay) */
	SCSI_HOLD, /* never complete it: a fault; only an abort ends it */
};

/*
 * The LUNs one initiator can see: numbers 0..count-1 in the view are table
 * LUNs base..base+count-1 (an iSCSI target's 16,384 LUNs, say), under the
 * view's own SCSI target name when it has one (each iSCSI target's IQN in
 * VPD 83h; NULL: struct scsi_target's). A NULL view is the whole table.
 */
struct scsi_view {
	uint32_t base;
	uint32_t count;
	const char *name;
};

/*
 * The target's shared state: what every command needs besides its own
 * fields. Owned by the daemon; the front ends point their commands at it.
 */
struct scsi_target {
	struct lun_table *luns;
	struct fault_table *faults; /* may be NULL: no faults */
	const char *target_name; /* VPD 83h SCSI name string, or NULL */
	const char *port_name; /* VPD 83h target port name, or NULL */
	uint16_t port_id; /* relative target port identifier, >= 1;
				      * 0: no such designator in VPD 83h */
	uint16_t tpg; /* target port group */
	/*
	 * SPC-4 protocol identifier of the port (SCSI_PROTOCOL_ISCSI...),
	 * reported with PIV = 1 in VPD 83h's target port and target device
	 * designators when @protocol_valid; otherwise PIV = 0 (the field is
	 * then ignored by initiators, which is what the zero default gives).
	 */
	uint8_t protocol_id;
	bool protocol_valid;
	/*
	 * PREEMPT AND ABORT: abort the commands in flight on table LUN @lun
	 * from each of the @n I_T nexus ids in @nexus, all but @self (the
	 * PREEMPT AND ABORT itself, whose own nexus may be in the list).
	 * Called from scsi_exec() of @self on its thread, no scsi/ lock
	 * held; it must not wait for the aborted commands. NULL: nothing
	 * is aborted; the reservation changes happen either way.
	 */
	void (*pr_abort)(void *arg, const struct scsi_cmd *self, uint32_t lun,
			 const uint32_t *nexus, unsigned int n);
	void *pr_abort_arg;
	/*
	 * Reservation state, private to scsi/ (pr.c): created on the first
	 * PERSISTENT RESERVE OUT or RESERVE, freed by scsi_target_fini().
	 * A zeroed target has none; one that never sees a reservation
	 * command costs nothing more.
	 */
	struct scsi_pr *pr;
	uint32_t pr_active; /* LUNs whose commands pr.c checks */
	/*
	 * Asymmetric logical unit access (SPC-4 5.15), implicit only: the
	 * target port groups, their states and which relative target port
	 * is in which; NULL: no ALUA (TPGS 00b in standard INQUIRY, REPORT
	 * TARGET PORT GROUPS not offered). Owned by the daemon; every LUN
	 * shares it.
	 */
	struct scsi_alua *alua;
};

/*
 * ALUA: the asymmetric access states a target port group can be in (the
 * values of REPORT TARGET PORT GROUPS' ASYMMETRIC ACCESS STATE field).
 */
enum scsi_alua_state {
	SCSI_ALUA_OPTIMIZED = 0x0, /* active/optimized */
	SCSI_ALUA_NON_OPTIMIZED = 0x1, /* active/non-optimized */
	SCSI_ALUA_STANDBY = 0x2,
	SCSI_ALUA_UNAVAILABLE = 0x3,
};

#define SCSI_ALUA_MAX_GROUPS 16
#define SCSI_ALUA_MAX_PORTS 16 /* relative target ports 1..16 */
#define SCSI_ALUA_NAME_MAX 31

/* One target port group: its name (for people), number and state. */
struct scsi_alua_group {
	char name[SCSI_ALUA_NAME_MAX + 1];
	uint16_t id; /* TARGET PORT GROUP, 1..65535 */
	uint8_t state; /* enum scsi_alua_state; atomic access */
	uint8_t changed; /* set at run time: STATUS CODE 02h */
};

/*
 * The port groups of a target: relative target port p (1..@nports) is in
 * group @port_group[p - 1]. Filled by the daemon before the front ends
 * start; afterwards only the states change (scsi_alua_set()).
 */
struct scsi_alua {
	unsigned int ngroups;
	unsigned int nports;
	struct scsi_alua_group groups[SCSI_ALUA_MAX_GROUPS];
	uint8_t port_group[SCSI_ALUA_MAX_PORTS];
};

/* SPC-4 protocol identifiers for struct scsi_target.protocol_id */
#define SCSI_PROTOCOL_FCP 0x0
#define SCSI_PROTOCOL_SRP 0x4
#define SCSI_PROTOCOL_ISCSI 0x5
#define SCSI_PROTOCOL_SAS 0x6
#define SCSI_PROTOCOL_NONE 0xf /* "no specific protocol" (a TCMU loop) */

struct scsi_cmd {
	/* in: set by the front end */
	struct scsi_target *tgt;
	const struct scsi_view *view;
	uint32_t lun; /* LUN number in the view (decoded) */
	uint32_t nexus; /* I_T nexus id, for reservations */
	/*
	 * The relative target port the command came through (1..65535: an
	 * iSCSI portal's position in [iscsi] portal), which names the port in
	 * VPD 83h and, with ALUA, its target port group and access state;
	 * 0: struct scsi_target's port_id.
	 */
	uint16_t port;
	/*
	 * The initiator port name, or NULL: for iSCSI "iqn...,i,0x" and the
	 * ISID in 12 hex digits (READ FULL STATUS reports it as a TransportID
	 * of format 01b; a name without ",i,0x" as format 00b). With a name,
	 * reservations know the I_T nexus by it, case-insensitively, so a
	 * registration survives the session (a new nexus id with the same
	 * name is the same I_T nexus); without one, by @nexus alone. A front
	 * end sets it on every command or on none. At most 255 bytes; a
	 * longer or empty one counts as NULL.
	 */
	const char *initiator_name;
	const uint8_t *cdb;
	uint8_t cdb_len;
	enum scsi_dir dir; /* the direction the transport declared */
	const struct iovec *iov; /* data buffer: read into or write from */
	unsigned int iovcnt;
	uint32_t xfer_len; /* expected transfer length, bytes */
	/* the calling thread's own counters (never shared), or NULL */
	struct scsi_stats *stats;

	/* out: set by scsi_exec() */
	uint8_t status;
	uint8_t sense_len;
	uint32_t data_len; /* bytes moved (Data-In or Data-Out) */
	/*
	 * Bytes the CDB itself asks to move: its transfer length in bytes,
	 * or its allocation or parameter list length; xfer_len for a CDB
	 * that names no length scsi/ knows. A transport compares it with
	 * xfer_len for residual overflow (iSCSI's O bit, FCP_RESID_OVER).
	 */
	uint32_t cdb_xfer_len;
	uint64_t delay_ns; /* for SCSI_DELAY */
	uint8_t sense[SCSI_SENSE_MAX];
};

/**
 * scsi_exec() - execute one command.
 * @cmd: the command; its out fields are written: status (GOOD unless a
 *	CHECK CONDITION with sense_len bytes of sense in the LUN's D_SENSE
 *	format), data_len, cdb_xfer_len, delay_ns.
 *
 * Checks in this order, before the command runs: opcode and service
 * action, CDB length, CDB usage data (reserved bits, NACA), the LUN,
 * a pending unit attention (the LUN's, then the reservation ones of
 * @cmd's I_T nexus), injected faults, a reservation conflict (status
 * RESERVATION CONFLICT, no sense), the LUN's readiness, software write
 * protect.
 * Context: any thread; commands on different or the same LUNs may run
 * concurrently. No allocation but the reservation state PERSISTENT
 * RESERVE OUT and RESERVE create; a few KiB of stack (REPORT LUNS streams
 * through 4 KiB). Blocks only in the store (file store I/O) and, on a
 * LUN with reservation state, on the reservation mutex. The clock is read
 * only when @cmd->stats is set.
 * Return: what to do with the completion (enum scsi_disposition).
 */
enum scsi_disposition scsi_exec(struct scsi_cmd *cmd);

/**
 * scsi_target_fini() - free what scsi/ allocated for @t on demand.
 * @t: the target.
 *
 * The reservation state, which the first PERSISTENT RESERVE OUT or
 * RESERVE creates (there is no init: a zeroed struct scsi_target is
 * ready). @t is left as a zeroed one would be: no reservations. A target
 * that never saw a reservation command has nothing to free; calling it
 * twice is harmless. The daemon calls it after stopping the front ends.
 * Context: no scsi_exec() or scsi_pr_*() call on @t may be running or
 * start while it runs.
 */
void scsi_target_fini(struct scsi_target *t);

/**
 * scsi_pr_nexus_lost() - an I_T nexus is gone (iSCSI: the session ended
 * or was reinstated): release the RESERVE(6)/(10) reservations it holds
 * on every LUN, and forget the unit attentions pending for it if it had
 * no initiator name (its nexus id will not come back). Persistent
 * reservations and registrations stay (SPC-4 5.12.1).
 * @t: the target.
 * @nexus: the nexus id its commands carried.
 *
 * Context: any thread; takes the reservation mutex. Cost: O(LUNs with
 * reservation state), nothing without any.
 */
void scsi_pr_nexus_lost(struct scsi_target *t, uint32_t nexus);

/**
 * scsi_pr_lun_reset() - a LOGICAL UNIT RESET: release the LUN's
 * RESERVE(6)/(10) reservation. Persistent reservations stay. No unit
 * attention: a front end calls scsi_lun_reset(), which does both.
 * @t: the target.
 * @view: the initiator's view, or NULL (as in struct scsi_cmd).
 * @lun: the LUN number in @view.
 *
 * Context: any thread; takes the reservation mutex. O(1).
 */
void scsi_pr_lun_reset(struct scsi_target *t, const struct scsi_view *view,
		       uint32_t lun);

/**
 * scsi_pr_target_reset() - a TARGET WARM or COLD RESET: release the
 * RESERVE(6)/(10) reservations of every LUN in @view. Persistent
 * reservations stay. No unit attention: a front end calls
 * scsi_target_reset(), which does both.
 * @t: the target.
 * @view: the LUNs reset, or NULL for the whole table.
 *
 * Context: any thread; takes the reservation mutex. Cost: O(LUNs with
 * reservation state).
 */
void scsi_pr_target_reset(struct scsi_target *t, const struct scsi_view *view);

/**
 * scsi_lun_reset() - what a LOGICAL UNIT RESET does to the logical unit
 * (SAM-5 7.7), for any transport: its RESERVE(6)/(10) reservation is
 * released (scsi_pr_lun_reset()) and every I_T nexus, the one that asked
 * included, gets the unit attention POWER ON, RESET, OR BUS DEVICE RESET
 * OCCURRED (29h/00h) on its next command to it. Persistent reservations
 * and mode pages stay.
 * @t: the target.
 * @view: the initiator's view, or NULL (as in struct scsi_cmd).
 * @lun: the LUN number in @view.
 *
 * Ending the LUN's tasks is the transport's, before this call (an iSCSI
 * LUN RESET aborts them on every session first).
 * Context: any thread; takes the reservation mutex (the unit attention
 * is an atomic generation). O(1).
 * Return: 0; -ENODEV, nothing done, for a LUN outside @view or absent
 * (the transport's "no such LUN").
 */
int scsi_lun_reset(struct scsi_target *t, const struct scsi_view *view,
		   uint32_t lun);

/**
 * scsi_target_reset() - what a TARGET WARM RESET or TARGET COLD RESET
 * does to the logical units (SAM-5 6.3.2), for any transport: every
 * present LUN of @view has its RESERVE(6)/(10) reservation released
 * (scsi_pr_target_reset()) and raises the unit attention 29h/00h for
 * every I_T nexus, the one that asked included. Persistent reservations
 * stay. LUNs outside @view (another iSCSI target's) are not touched.
 * @t: the target.
 * @view: the LUNs reset, or NULL for the whole table.
 *
 * A warm and a cold reset do the same here; what differs is the
 * transport's (iSCSI closes every connection on a cold one), as is
 * ending the tasks, before this call.
 * Context: any thread; takes the reservation mutex (each unit attention
 * is an atomic generation). Cost: O(LUNs in @view) (a bitmap scan, one
 * raise per present LUN) plus O(LUNs with reservation state); a rare TMF.
 */
void scsi_target_reset(struct scsi_target *t, const struct scsi_view *view);

/**
 * scsi_cdb_len() - the CDB length implied by an opcode's group code.
 * @opcode: CDB byte 0.
 *
 * Context: any; pure.
 * Return: 6, 10, 12 or 16; 0 for a group whose length is vendor specific
 * (6 and 7); -1 for group 3 (0x60..0x7f: reserved, 0x7e extended and
 * 0x7f variable length, whose length is in the CDB).
 */
int scsi_cdb_len(uint8_t opcode);

/**
 * scsi_lun_decode() - a SAM 8-byte LUN field to a LUN number.
 * @field: 8 bytes, as in the iSCSI BHS or a REPORT LUNS entry.
 * @lun: out, 0..16383.
 *
 * Peripheral device addressing (LUN < 256) and flat space addressing
 * (0x40 | high bits, LUN < 16384), first level only.
 * Context: any; pure.
 * Return: 0, -EINVAL for any other addressing method or a nonzero lower
 * level.
 */
int scsi_lun_decode(const uint8_t field[8], uint32_t *lun);

/**
 * scsi_lun_encode() - a LUN number to the 8-byte field: peripheral below
 * 256, flat space addressing from 256 to 16383 (as the kernel's
 * int_to_scsilun() writes them).
 * @lun: 0..16383.
 * @field: out, 8 bytes.
 *
 * Context: any; pure.
 * Return: 0, -ERANGE.
 */
int scsi_lun_encode(uint32_t lun, uint8_t field[8]);

/**
 * scsi_set_sense() - make @cmd a CHECK CONDITION with this sense (for a
 * front end's own errors; scsi/ itself follows the LUN's D_SENSE bit).
 * @cmd: the command.
 * @descriptor: true for descriptor format (72h), false for fixed (70h).
 * @key: sense key.
 * @asc: additional sense code.
 * @ascq: its qualifier.
 *
 * Sets status, sense and sense_len (18 fixed, 8 descriptor).
 * Context: the thread that owns @cmd.
 */
void scsi_set_sense(struct scsi_cmd *cmd, bool descriptor, uint8_t key,
		    uint8_t asc, uint8_t ascq);

/**
 * scsi_alua_set() - change a target port group's asymmetric access state
 * at run time (an implicit transition): every I_T nexus then gets the
 * unit attention ASYMMETRIC ACCESS STATE CHANGED (2Ah/06h) on its next
 * command to each LUN, and REPORT TARGET PORT GROUPS shows STATUS CODE
 * 02h (altered by implicit behaviour) for the group.
 * @t: the target.
 * @group: the group's name, or its number in decimal.
 * @state: the new state.
 *
 * Setting the state a group already has changes nothing and raises no
 * unit attention.
 * Context: any thread; commands running at the same time see the old or
 * the new state. O(1) (the unit attention is a table generation).
 * Return: 1 changed, 0 already in @state, -ENODEV without ALUA, -ENOENT
 * for an unknown group, -EINVAL for a state out of range.
 */
int scsi_alua_set(struct scsi_target *t, const char *group,
		  enum scsi_alua_state state);

/**
 * scsi_alua_state_name() - the canonical name of an asymmetric access
 * state: "active/optimized", "active/non-optimized", "standby",
 * "unavailable".
 * @state: the state.
 *
 * Return: a static string; "?" out of range.
 */
const char *scsi_alua_state_name(enum scsi_alua_state state);

/**
 * scsi_alua_state_parse() - a state from its name: the canonical ones,
 * and the short forms "ao", "optimized", "an", "non-optimized", "s",
 * "u" (case-insensitive).
 * @text: the name.
 * @out: out, the state (only on success).
 *
 * Return: 0, -EINVAL.
 */
int scsi_alua_state_parse(const char *text, enum scsi_alua_state *out);

/*
 * Per-opcode statistics, one struct scsi_stats per thread that runs
 * commands, summed on request into a plain struct scsi_stats_sum. The
 * control thread sums them while their owners count, so every counter is
 * an atomic: its owner, the one thread that writes it, adds with a
 * relaxed load and store (no read-modify-write: the cost of a plain
 * increment), the reader loads it relaxed. A sum may be a command behind,
 * never torn.
 */
#define SCSI_LAT_BUCKETS 64
struct scsi_op_stats {
	_Atomic uint64_t count;
	_Atomic uint64_t errors;
	_Atomic uint64_t bytes;
};
struct scsi_stats {
	struct scsi_op_stats op[256];
	_Atomic uint64_t lat[SCSI_LAT_BUCKETS]; /* log2 ns: scsi_lat_bucket() */
	_Atomic uint64_t faults;
};

/* A plain snapshot of struct scsi_stats, summed over threads. */
struct scsi_op_sum {
	uint64_t count;
	uint64_t errors;
	uint64_t bytes;
};
struct scsi_stats_sum {
	struct scsi_op_sum op[256];
	uint64_t lat[SCSI_LAT_BUCKETS];
	uint64_t faults;
};

/**
 * scsi_lat_bucket() - the latency bucket of @ns nanoseconds.
 * @ns: latency.
 *
 * Bucket 0 holds 0 ns; bucket b (1..62) holds 2^(b-1)..2^b - 1 ns
 * inclusive; bucket 63 everything from 2^62 ns up.
 * Context: any; pure.
 * Return: 0..SCSI_LAT_BUCKETS - 1.
 */
unsigned int scsi_lat_bucket(uint64_t ns);

/**
 * scsi_stats_record() - count one completed command.
 * @st: the thread's counters.
 * @cmd: the completed command.
 * @ns: its latency, nanoseconds.
 *
 * op[cdb[0]]: count, errors (status not GOOD), bytes (data_len); one
 * latency sample. scsi_exec() calls it when cmd->stats is set (a held
 * command is not counted: it never completes).
 * Context: the thread that owns @st, and only it: relaxed loads and
 * stores, no read-modify-write, so two writers would lose counts.
 */
void scsi_stats_record(struct scsi_stats *st, const struct scsi_cmd *cmd,
		       uint64_t ns);

/**
 * scsi_stats_add() - @dst += @src.
 * @dst: the sum.
 * @src: one thread's counters.
 *
 * Context: any thread, while @src's owner counts (relaxed loads); a sum
 * over threads still counting may be a little stale.
 */
void scsi_stats_add(struct scsi_stats_sum *dst, const struct scsi_stats *src);

/**
 * scsi_lat_percentile() - latency at percentile @p from the buckets.
 * @st: a sum.
 * @p: 0..100.
 *
 * Context: any; pure.
 * Return: nanoseconds (the bucket's upper bound), 0 with no samples.
 */
uint64_t scsi_lat_percentile(const struct scsi_stats_sum *st, double p);

/**
 * scsi_opcode_name() - a printable name for an opcode.
 * @opcode: CDB byte 0.
 *
 * Context: any; pure.
 * Return: "READ_10", ..., or NULL for one the target does not emulate.
 */
const char *scsi_opcode_name(uint8_t opcode);

#endif /* SDSWARM_SCSI_H */
