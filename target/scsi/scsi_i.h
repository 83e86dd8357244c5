/* SPDX-License-Identifier: MIT */
/*
 * Inside scsi/: the opcode table's entry type and the helpers spc.c and
 * sbc.c share. Front ends never include this.
 */
#ifndef SDSWARM_SCSI_I_H
#define SDSWARM_SCSI_I_H

#include "bytes.h"
#include "lun.h"
#include "scsi.h"

struct scsi_op;

/* One command in flight through scsi_exec(): the pinned LUN and the CDB. */
struct scsi_ctx {
	struct scsi_cmd *cmd;
	const uint8_t *cdb;
	struct lun_info li; /* valid when have_lun */
	bool have_lun;
	uint32_t table_lun; /* view LUN translated to a table LUN */
	const struct scsi_op *op; /* the table entry (the SA's, if any) */
	bool pr; /* the target has reservation state that
				      * commands must pass (scsi_pr_active(),
				      * read once, when the LUN is pinned) */
};

/* flags of a struct scsi_op */
#define SCSI_OP_LUN 0x01u /* needs a present LUN (else LUN NOT SUPP.) */
#define SCSI_OP_MEDIUM 0x02u /* medium access: needs the LUN ready */
#define SCSI_OP_NO_UA 0x04u /* does not report or clear a unit attention */
#define SCSI_OP_WRITE 0x08u /* modifies the medium: software write protect */
#define SCSI_OP_DATA_OUT 0x10u /* carries Data-Out */
#define SCSI_OP_DATA_IN 0x20u /* returns Data-In */
#define SCSI_OP_FAULTS 0x40u /* injected LBA faults, checked by the handler */
#define SCSI_OP_SANITIZE 0x80u /* runs while a SANITIZE is in progress */

/*
 * @resv of a struct scsi_op: who may run the command on a LUN reserved by
 * another I_T nexus (scsi_pr_conflict()). For persistent reservations the
 * bits follow SPC-4 table "SPC commands that are allowed in the presence
 * of various reservations" and its SBC-4 counterpart: under Write
 * Exclusive and Exclusive Access the columns hold for every I_T nexus but
 * the holder; under the registrants only and all registrants types every
 * registered I_T nexus may run everything and the other ones follow the
 * Write Exclusive or Exclusive Access column. 0 conflicts with every
 * reservation: the safe default for a command added without a thought.
 */
/* clang-format off */
#define SCSI_RESV_WE   0x01u /* allowed through Write Exclusive types */
#define SCSI_RESV_EA   0x02u /* allowed through Exclusive Access types */
#define SCSI_RESV_ANY  (SCSI_RESV_WE | SCSI_RESV_EA)
#define SCSI_RESV_SPC2 0x04u /* allowed through another's RESERVE(6)/(10) */
#define SCSI_RESV_CDB  0x08u /* pr.c decides from the CDB: START STOP UNIT
			      * (START 1, POWER CONDITION 0 allowed) and
			      * PREVENT ALLOW (PREVENT 00b allowed) */
#define SCSI_RESV_SELF 0x10u /* the handler applies the rules itself: PR IN,
			      * PR OUT, RESERVE, RELEASE */
/* clang-format on */

/*
 * @alua of a struct scsi_op: the asymmetric access states that still run
 * the command (SPC-4 5.15.2.4.4 and 5.15.2.4.5); in the others it ends
 * with NOT READY, LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN STANDBY
 * STATE (04h/0Bh) or UNAVAILABLE STATE (04h/0Ch). Both active states run
 * everything. 0 runs only there: the safe default for a new command.
 */
#define SCSI_ALUA_SB 0x01u /* runs in standby */
#define SCSI_ALUA_UN 0x02u /* runs in unavailable */
#define SCSI_ALUA_ANY (SCSI_ALUA_SB | SCSI_ALUA_UN)

/*
 * @xfer of a struct scsi_op: where the CDB says how many bytes it moves,
 * for cmd->cdb_xfer_len (the transport's residual overflow). The count is
 * the @width-byte (1, 2 or 4) big-endian field at CDB byte @off, or
 * @fixed when @width is 0; @count, for the few commands whose field alone
 * does not say it (READ(6)'s 0, VERIFY's BYTCHK, WRITE SAME (16)'s NDOB,
 * COMPARE AND WRITE's two halves), reads the CDB instead. @unit says what
 * the count counts; SCSI_XFER_UNKNOWN (0), the default of a row that says
 * nothing, leaves cdb_xfer_len at cmd->xfer_len: never an overflow.
 */
enum scsi_xfer_unit {
	SCSI_XFER_UNKNOWN = 0,
	SCSI_XFER_NONE, /* no data: 0 bytes */
	SCSI_XFER_BYTES, /* an allocation or parameter list length */
	SCSI_XFER_BLOCKS, /* logical blocks: times the LUN's block size
			   * (cmd->xfer_len without a LUN) */
};

struct scsi_xfer {
	uint8_t unit; /* enum scsi_xfer_unit */
	uint8_t off;
	uint8_t width;
	uint8_t fixed;
	uint32_t (*count)(const struct scsi_xfer *x, const uint8_t *cdb);
};

/*
 * An emulated command. @fn sees a validated LUN (per @flags) and returns
 * the disposition; it sets status/sense through the helpers below (status
 * GOOD is the default). @usage is the CDB usage data of REPORT SUPPORTED
 * OPERATION CODES: @usage[0] is the opcode, each other byte the bits the
 * emulation looks at; a CDB with a bit set outside @usage is rejected with
 * INVALID FIELD IN CDB before @fn runs (one general check, not one per
 * command). An entry of a service-action sub-table has @has_sa and its
 * service action in @sa. A main-table entry with @nsa > 0 has no @fn of its
 * own: scsi_exec() dispatches on CDB byte 1 bits 4-0 to its @nsa entries
 * at @sa_ops (0x9e SERVICE ACTION IN (16), 0xa3 MAINTENANCE IN); its
 * @xfer still describes the opcode's CDB for a service action that is not
 * in the sub-table. @xfer: the CDB's transfer length (struct scsi_xfer).
 */
struct scsi_op {
	const char *name;
	enum scsi_disposition (*fn)(struct scsi_ctx *c);
	uint8_t flags;
	uint8_t resv; /* SCSI_RESV_* */
	uint8_t alua; /* SCSI_ALUA_* */
	uint8_t cdb_len;
	uint16_t sa;
	bool has_sa;
	uint8_t nsa;
	const struct scsi_op *sa_ops;
	struct scsi_xfer xfer;
	uint8_t usage[16];
};

/*
 * Sense helpers: CHECK CONDITION with sense data in the format the LUN's
 * D_SENSE bit asks for (fixed 70h without a LUN). A field pointer @bit of
 * 0..7 names the bit (BPV = 1; for a field, its most significant bit); a
 * negative @bit leaves BPV = 0, the whole byte.
 */
void scsi_sense(struct scsi_ctx *c, uint8_t key, uint8_t asc, uint8_t ascq);
/*
 * A sense with the sense-key-specific PROGRESS INDICATION (@progress in
 * 65536ths done): NOT READY while a SANITIZE runs. The _format variant
 * builds it without a command, for REQUEST SENSE (SCSI_SENSE_MAX bytes).
 */
void scsi_sense_progress(struct scsi_ctx *c, uint8_t key, uint8_t asc,
			 uint8_t ascq, uint16_t progress);
size_t scsi_sense_format_progress(uint8_t *buf, bool descriptor, uint8_t key,
				  uint8_t asc, uint8_t ascq, uint16_t progress);
/* INVALID FIELD IN CDB (24h/00h) with the sense-key-specific field pointer. */
void scsi_sense_cdb(struct scsi_ctx *c, uint16_t byte, int8_t bit);
/* INVALID FIELD IN PARAMETER LIST (26h/00h) with the field pointer. */
void scsi_sense_param(struct scsi_ctx *c, uint16_t byte, int8_t bit);
/*
 * A sense with the INFORMATION field set (medium errors: the LBA). Fixed
 * format holds 32 bits: a larger @info is left out there (VALID = 0).
 */
void scsi_sense_info(struct scsi_ctx *c, uint8_t key, uint8_t asc, uint8_t ascq,
		     uint64_t info);
/*
 * The one place -errno from lun/store becomes SCSI: -ENOSPC SPACE
 * ALLOCATION FAILED WRITE PROTECT, -EIO MEDIUM ERROR (read: 11h/00h, write:
 * 0Ch/00h) with @lba in INFORMATION, -EROFS WRITE PROTECTED, -ENOMEDIUM
 * NOT READY with the code of the LUN's state (scsi_state_sense(); 04h/03h
 * if the snapshot reads online), -ENODEV and -ENOENT (the LUN went away)
 * LUN NOT SUPPORTED, -ERANGE LBA OUT OF RANGE, -EINVAL INVALID
 * FIELD IN CDB, anything else HARDWARE ERROR internal target failure.
 */
void scsi_sense_errno(struct scsi_ctx *c, int err, bool write, uint64_t lba);

/*
 * Sense data without a command (REQUEST SENSE parameter data): @buf gets
 * SCSI_SENSE_MAX bytes at most. Return: the length, 18 fixed or 8
 * descriptor.
 */
size_t scsi_sense_format(uint8_t *buf, bool descriptor, uint8_t key,
			 uint8_t asc, uint8_t ascq);

/*
 * NOT READY's ASC/ASCQ for a LUN state: offline 04h/03h MANUAL
 * INTERVENTION REQUIRED (sd stops its spin-up loop at once), not ready
 * 04h/01h BECOMING READY (sd retries), stopped 04h/02h INITIALIZING COMMAND
 * REQUIRED (sd sends START STOP UNIT), no medium 3Ah/00h MEDIUM NOT
 * PRESENT, sanitizing 04h/1Bh SANITIZE IN PROGRESS. Return: false when the
 * state is ready (online) and nothing is set.
 */
bool scsi_state_sense(enum lun_state state, uint8_t *asc, uint8_t *ascq);

/*
 * Take the LUN's highest-priority pending unit attention (clearing it).
 * Return: false when none is pending; else true with its ASC/ASCQ.
 */
bool scsi_ua_take(struct scsi_ctx *c, uint8_t *asc, uint8_t *ascq);

/*
 * Injected faults for a medium access of [@lba, @lba + @nblocks), @op one
 * FAULT_OP_* bit (fault.h); for the SCSI_OP_FAULTS commands, which
 * scsi_exec() leaves to their handler because the LBA comes from the CDB.
 * A medium error rule sets MEDIUM ERROR with INFORMATION = the first LBA
 * the rule covers, a UA rule UNIT ATTENTION, a not-ready rule NOT READY.
 * Return: SCSI_DONE: carry on if cmd->status is still GOOD, else return
 * SCSI_DONE (the sense is set); SCSI_DELAY: carry on (cmd->delay_ns is
 * set, and scsi_exec() delays the completion even if the handler returns
 * SCSI_DONE); SCSI_HOLD: return SCSI_HOLD without executing anything.
 */
enum scsi_disposition scsi_check_faults(struct scsi_ctx *c, uint64_t lba,
					uint64_t nblocks, unsigned int op);

/*
 * Copy between the command's iovecs and a flat buffer, bounded by
 * cmd->xfer_len and the iovecs' size; cmd->data_len grows to the end of
 * what was copied. scsi_copy_in() appends at cmd->data_len (one call from
 * offset 0 for most responses); scsi_copy_in_at() writes at byte @off.
 * Data-In never goes to a buffer the transport declared SCSI_DIR_WRITE,
 * nor Data-Out come from one declared SCSI_DIR_READ. The caller bounds
 * @len by the CDB's allocation length. Return: bytes copied.
 */
/* to the host (Data-In) */
size_t scsi_copy_in(struct scsi_ctx *c, const void *buf, size_t len);
size_t scsi_copy_in_at(struct scsi_ctx *c, const void *buf, size_t len,
		       size_t off);
/* from the host (Data-Out) */
size_t scsi_copy_out(struct scsi_ctx *c, void *buf, size_t len, size_t off);

/* The handlers, by file. spc.c: primary commands; sbc.c: block commands. */
enum scsi_disposition spc_test_unit_ready(struct scsi_ctx *c);
enum scsi_disposition spc_request_sense(struct scsi_ctx *c);
enum scsi_disposition spc_inquiry(struct scsi_ctx *c);
enum scsi_disposition spc_report_luns(struct scsi_ctx *c);
enum scsi_disposition spc_mode_sense(struct scsi_ctx *c); /* 6 and 10 */
enum scsi_disposition spc_mode_select(struct scsi_ctx *c); /* 6 and 10 */
enum scsi_disposition spc_start_stop_unit(struct scsi_ctx *c);
enum scsi_disposition spc_prevent_allow(struct scsi_ctx *c);
enum scsi_disposition spc_report_opcodes(struct scsi_ctx *c);
enum scsi_disposition spc_report_tmfs(struct scsi_ctx *c);

/*
 * alua.c: REPORT TARGET PORT GROUPS (MAINTENANCE IN 0Ah), both parameter
 * data formats; INVALID FIELD IN CDB (an unsupported service action)
 * on a target without ALUA.
 */
enum scsi_disposition scsi_alua_rtpg(struct scsi_ctx *c);

/*
 * The asymmetric access state of the port @c's command came through;
 * SCSI_ALUA_OPTIMIZED without ALUA or for a port in no group.
 */
enum scsi_alua_state scsi_alua_state(const struct scsi_ctx *c);

/*
 * The relative target port of @c's command (cmd->port, else the target's
 * port_id) and its target port group number (from the ALUA groups, else
 * the target's tpg).
 */
uint16_t scsi_alua_port(const struct scsi_ctx *c);
uint16_t scsi_alua_group_id(const struct scsi_ctx *c);

/*
 * NOT READY's ASC/ASCQ for an inaccessible state: standby 04h/0Bh,
 * unavailable 04h/0Ch. Return: false (nothing set) for the active ones.
 */
bool scsi_alua_sense(enum scsi_alua_state state, uint8_t *asc, uint8_t *ascq);

enum scsi_disposition sbc_read(struct scsi_ctx *c); /* 6/10/12/16 */
enum scsi_disposition sbc_write(struct scsi_ctx *c); /* 6/10/12/16 */
enum scsi_disposition sbc_write_verify(struct scsi_ctx *c); /* 10/12/16 */
enum scsi_disposition sbc_verify(struct scsi_ctx *c); /* 10/12/16 */
enum scsi_disposition sbc_write_same(struct scsi_ctx *c); /* 10/16 */
enum scsi_disposition sbc_unmap(struct scsi_ctx *c);
enum scsi_disposition sbc_compare_and_write(struct scsi_ctx *c);
enum scsi_disposition sbc_prefetch(struct scsi_ctx *c); /* 10/16 */
enum scsi_disposition sbc_read_defect_data(struct scsi_ctx *c); /* 10/12 */
enum scsi_disposition sbc_orwrite(struct scsi_ctx *c); /* 16 */
enum scsi_disposition sbc_write_atomic(struct scsi_ctx *c); /* 16 */
enum scsi_disposition sbc_sanitize(struct scsi_ctx *c); /* every SA */

/*
 * WRITE ATOMIC (16)'s most blocks, the Block Limits page's MAXIMUM ATOMIC
 * TRANSFER LENGTH: MAXIMUM TRANSFER LENGTH (@max_xfer), or 4 MiB when that
 * is unlimited, since the data is gathered whole in memory before anything
 * is written.
 */
static inline uint32_t scsi_atomic_max_blocks(uint32_t block_size,
					      uint32_t max_xfer)
{
	uint32_t n = (4u << 20) / block_size;

	return max_xfer && max_xfer < n ? max_xfer : n;
}
enum scsi_disposition sbc_sync_cache(struct scsi_ctx *c); /* 10/16 */
enum scsi_disposition sbc_read_capacity10(struct scsi_ctx *c);
/* 0x9e: READ CAPACITY (16), GET LBA STATUS */
enum scsi_disposition sbc_service_action_in16(struct scsi_ctx *c);

/*
 * xcopy.c: SPC-4 third-party copy, LID1. EXTENDED COPY (LID1) copies
 * between LUNs of the table named by their VPD 83h NAA designators,
 * synchronously; it applies each copy target's reservations itself
 * (SCSI_RESV_SELF). RECEIVE COPY RESULTS answers COPY STATUS, RECEIVE DATA,
 * OPERATING PARAMETERS and FAILED SEGMENT DETAILS from a bounded table of
 * the last copies per I_T nexus, LUN and LIST IDENTIFIER.
 */
enum scsi_disposition scsi_xcopy_lid1(struct scsi_ctx *c); /* 83h/00h */
enum scsi_disposition scsi_xcopy_results(struct scsi_ctx *c); /* 84h, 4 SAs */

/* pr.c: reservations. Service actions (SPC-4 6.15.1, 6.16.2). */
#define SCSI_PRIN_READ_KEYS 0x00
#define SCSI_PRIN_READ_RESERVATION 0x01
#define SCSI_PRIN_REPORT_CAPABILITIES 0x02
#define SCSI_PRIN_READ_FULL_STATUS 0x03
#define SCSI_PROUT_REGISTER 0x00
#define SCSI_PROUT_RESERVE 0x01
#define SCSI_PROUT_RELEASE 0x02
#define SCSI_PROUT_CLEAR 0x03
#define SCSI_PROUT_PREEMPT 0x04
#define SCSI_PROUT_PREEMPT_AND_ABORT 0x05
#define SCSI_PROUT_REGISTER_AND_IGNORE 0x06
#define SCSI_PROUT_REGISTER_AND_MOVE 0x07

enum scsi_disposition scsi_pr_in(struct scsi_ctx *c); /* 0x5e, all SAs */
enum scsi_disposition scsi_pr_out(struct scsi_ctx *c); /* 0x5f, all SAs */
enum scsi_disposition scsi_pr_reserve(struct scsi_ctx *c); /* (6) and (10) */
enum scsi_disposition scsi_pr_release(struct scsi_ctx *c); /* (6) and (10) */

/*
 * Whether any LUN of @t has reservation state a command must pass (a
 * reservation of either kind, or a unit attention pending for some I_T
 * nexus). The whole cost of reservations on the command path of a target
 * without any: one load (acquire, a plain load on x86; it pairs with the
 * release pr.c counts with, and a nonzero count sends the command into
 * pr.c, which takes its mutex). A command racing the first RESERVE on
 * another I_T nexus may pass before it, as it may on a real disk.
 */
static inline bool scsi_pr_active(const struct scsi_target *t)
{
	return __atomic_load_n(&t->pr_active, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Before the handler runs (c->op set, the LUN pinned): whether the
 * command conflicts with a reservation on the LUN (the access rules of
 * c->op->resv); scsi_exec() then ends it with RESERVATION CONFLICT.
 * False at once unless c->pr.
 */
bool scsi_pr_conflict(struct scsi_ctx *c);

/*
 * Take the highest-priority reservation unit attention pending for this
 * command's I_T nexus on its LUN (RESERVATIONS PREEMPTED 2Ah/03h, then
 * RESERVATIONS RELEASED 2Ah/04h, then REGISTRATIONS PREEMPTED 2Ah/05h),
 * clearing it. scsi_ua_take() asks here after the LUN's own ones. Return:
 * false (at once unless c->pr) when none is pending.
 */
bool scsi_pr_ua_take(struct scsi_ctx *c, uint8_t *asc, uint8_t *ascq);

/* The opcode table (scsi.c) and the service-action sub-tables. */
extern const struct scsi_op scsi_ops[256];
/* The entry for @opcode/@sa of an opcode with service actions, or NULL. */
const struct scsi_op *scsi_op_sa(uint8_t opcode, uint16_t sa);
/*
 * The @i-th (opcode, sa) the target supports, in ascending order of both,
 * for REPORT SUPPORTED OPERATION CODES; NULL past the last. O(256) a call.
 */
const struct scsi_op *scsi_op_at(unsigned int i);

#endif /* SDSWARM_SCSI_I_H */
