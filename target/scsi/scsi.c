// SPDX-License-Identifier: MIT
/*
 * The command path: the opcode table, scsi_exec()'s checks in one fixed
 * order driven by the table's flags, Data-In/Data-Out copies, LUN
 * addressing and per-thread statistics.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "fault.h"
#include "scsi_i.h"

/* Operation codes (SPC-4 table D.2, SBC-4 table 29). */
enum {
	TEST_UNIT_READY = 0x00,
	REQUEST_SENSE = 0x03,
	READ_6 = 0x08,
	WRITE_6 = 0x0a,
	INQUIRY = 0x12,
	MODE_SELECT_6 = 0x15,
	RESERVE_6 = 0x16,
	RELEASE_6 = 0x17,
	MODE_SENSE_6 = 0x1a,
	START_STOP_UNIT = 0x1b,
	PREVENT_ALLOW_MEDIUM_REMOVAL = 0x1e,
	READ_CAPACITY_10 = 0x25,
	READ_10 = 0x28,
	WRITE_10 = 0x2a,
	WRITE_VERIFY_10 = 0x2e,
	VERIFY_10 = 0x2f,
	PRE_FETCH_10 = 0x34,
	SYNCHRONIZE_CACHE_10 = 0x35,
	READ_DEFECT_DATA_10 = 0x37,
	WRITE_SAME_10 = 0x41,
	UNMAP = 0x42,
	SANITIZE = 0x48,
	MODE_SELECT_10 = 0x55,
	RESERVE_10 = 0x56,
	RELEASE_10 = 0x57,
	MODE_SENSE_10 = 0x5a,
	PERSISTENT_RESERVE_IN = 0x5e,
	PERSISTENT_RESERVE_OUT = 0x5f,
	EXTENDED_COPY = 0x83,
	RECEIVE_COPY_RESULTS = 0x84,
	READ_16 = 0x88,
	COMPARE_AND_WRITE = 0x89,
	WRITE_16 = 0x8a,
	ORWRITE_16 = 0x8b,
	WRITE_VERIFY_16 = 0x8e,
	VERIFY_16 = 0x8f,
	PRE_FETCH_16 = 0x90,
	SYNCHRONIZE_CACHE_16 = 0x91,
	WRITE_SAME_16 = 0x93,
	WRITE_ATOMIC_16 = 0x9c,
	SERVICE_ACTION_IN_16 = 0x9e,
	REPORT_LUNS = 0xa0,
	MAINTENANCE_IN = 0xa3,
	READ_12 = 0xa8,
	WRITE_12 = 0xaa,
	WRITE_VERIFY_12 = 0xae,
	VERIFY_12 = 0xaf,
	READ_DEFECT_DATA_12 = 0xb7,
};

/* Service actions. */
#define SA_READ_CAPACITY_16 0x10
#define SA_GET_LBA_STATUS 0x12
#define SA_REPORT_TPGS 0x0a
#define SA_REPORT_OPCODES 0x0c
#define SA_REPORT_TMFS 0x0d

#define SA_MASK 0x1f /* CDB byte 1 bits 4-0 */

/* clang-format off */
/* Flag sets. */
#define F_READ (SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_DATA_IN | SCSI_OP_FAULTS)
#define F_WRITE (SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_WRITE | \
		 SCSI_OP_DATA_OUT | SCSI_OP_FAULTS)
#define F_VERIFY (SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_DATA_OUT | \
		  SCSI_OP_FAULTS)
#define F_MEDIUM_IN (SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_DATA_IN)
#define F_LUN_IN (SCSI_OP_LUN | SCSI_OP_DATA_IN)
#define F_ANY_LUN_IN (SCSI_OP_NO_UA | SCSI_OP_DATA_IN)
#define F_LUN_OUT (SCSI_OP_LUN | SCSI_OP_DATA_OUT)

/*
 * .resv: who may run a command on a LUN another I_T nexus reserved
 * (SCSI_RESV_*, scsi_i.h), from the command's row in SPC-4's and SBC-4's
 * tables of commands allowed in the presence of reservations. Left 0, as
 * for every write, MODE SELECT and SYNCHRONIZE CACHE: it conflicts.
 */

/*
 * CDB usage data. What each byte allows is what the handler reads; every
 * other bit is reserved here (protection information fields, since there
 * is none; GROUP NUMBER, since no grouping function is reported; obsolete
 * bits; the CONTROL byte's NACA and LINK, since ACA and linked commands are
 * not supported) and a CDB that sets one fails before the handler runs.
 */
#define LBA4 0xff, 0xff, 0xff, 0xff
#define LBA8 LBA4, LBA4

/*
 * .xfer: where each CDB says how many bytes it moves (struct scsi_xfer),
 * the field SPC-4 or SBC-4 names in the command's CDB: its allocation
 * length, parameter list length, TRANSFER LENGTH or NUMBER OF LOGICAL
 * BLOCKS.
 */
#define XFER_NONE { .unit = SCSI_XFER_NONE }
#define XFER_BYTES(off_, width_)					\
	{ .unit = SCSI_XFER_BYTES, .off = off_, .width = width_ }
#define XFER_BLOCKS(off_, width_)					\
	{ .unit = SCSI_XFER_BLOCKS, .off = off_, .width = width_ }
#define XFER_FIXED(unit_, n_) { .unit = unit_, .fixed = n_ }
/* blocks, as @fn_ counts them from the CDB (and its field, if any) */
#define XFER_HOOK(off_, width_, fn_)					\
	{ .unit = SCSI_XFER_BLOCKS, .off = off_, .width = width_,	\
	  .count = fn_ }
/* clang-format on */

/* The count @x's field holds, or its fixed one. */
static uint32_t xfer_field(const struct scsi_xfer *x, const uint8_t *cdb)
{
	switch (x->width) {
	case 1:
		return cdb[x->off];
	case 2:
		return get_be16(cdb + x->off);
	case 4:
		return get_be32(cdb + x->off);
	default:
		return x->fixed;
	}
}

/* The count @x says the CDB holds, in its unit. */
static uint32_t xfer_count(const struct scsi_xfer *x, const uint8_t *cdb)
{
	return x->count ? x->count(x, cdb) : xfer_field(x, cdb);
}

/* READ (6), WRITE (6): a TRANSFER LENGTH of 0 is 256 blocks (SBC-4). */
static uint32_t xfer_rw6(const struct scsi_xfer *x, const uint8_t *cdb)
{
	uint32_t n = xfer_field(x, cdb);

	return n ? n : 256;
}

/*
 * VERIFY (10/12/16): BYTCHK 00b has no Data-Out; 11b one block the whole
 * range is compared with; otherwise VERIFICATION LENGTH blocks.
 */
static uint32_t xfer_verify(const struct scsi_xfer *x, const uint8_t *cdb)
{
	switch ((cdb[1] >> 1) & 3) {
	case 0:
		return 0;
	case 3:
		return 1;
	default:
		return xfer_field(x, cdb);
	}
}

/* WRITE SAME (16): one block of Data-Out, none with NDOB (byte 1 bit 0). */
static uint32_t xfer_write_same16(const struct scsi_xfer *x, const uint8_t *cdb)
{
	(void)x;
	return cdb[1] & 1 ? 0 : 1;
}

/* COMPARE AND WRITE: the verify data, then as many blocks to write. */
static uint32_t xfer_caw(const struct scsi_xfer *x, const uint8_t *cdb)
{
	return 2 * xfer_field(x, cdb);
}

/* clang-format off */

static const struct scsi_op service_action_in16_ops[] = {
	{
		.name = "READ_CAPACITY_16",
		.fn = sbc_service_action_in16,
		.alua = SCSI_ALUA_SB,
		.resv = SCSI_RESV_ANY,
		.flags = F_MEDIUM_IN,
		.cdb_len = 16,
		.sa = SA_READ_CAPACITY_16,
		.has_sa = true,
		.xfer = XFER_BYTES(10, 4),
		/* obsolete LBA and PMI: sbc.c still checks them as SBC-3 */
		.usage = { SERVICE_ACTION_IN_16, SA_MASK, LBA8, LBA4, 0x01,
			   0x00 },
	},
	{
		.name = "GET_LBA_STATUS",
		.fn = sbc_service_action_in16,
		.resv = SCSI_RESV_WE,
		.flags = F_MEDIUM_IN,
		.cdb_len = 16,
		.sa = SA_GET_LBA_STATUS,
		.has_sa = true,
		.xfer = XFER_BYTES(10, 4),
		.usage = { SERVICE_ACTION_IN_16, SA_MASK, LBA8, LBA4, 0x00,
			   0x00 },
	},
};

static const struct scsi_op maintenance_in_ops[] = {
	{
		.name = "REPORT_TARGET_PORT_GROUPS",
		.fn = scsi_alua_rtpg,
		.resv = SCSI_RESV_ANY,
		.alua = SCSI_ALUA_ANY,
		.flags = F_LUN_IN,
		.cdb_len = 12,
		.sa = SA_REPORT_TPGS,
		.has_sa = true,
		.xfer = XFER_BYTES(6, 4),
		/* PARAMETER DATA FORMAT; allocation length */
		.usage = { MAINTENANCE_IN, 0xe0 | SA_MASK, 0, 0, 0, 0, LBA4,
			   0x00, 0x00 },
	},
	{
		.name = "REPORT_SUPPORTED_OPERATION_CODES",
		.fn = spc_report_opcodes,
		.resv = SCSI_RESV_WE,
		.flags = F_LUN_IN | SCSI_OP_SANITIZE,
		.cdb_len = 12,
		.sa = SA_REPORT_OPCODES,
		.has_sa = true,
		.xfer = XFER_BYTES(6, 4),
		/* RCTD, REPORTING OPTIONS; opcode; SA; allocation length */
		.usage = { MAINTENANCE_IN, SA_MASK, 0x87, 0xff, 0xff, 0xff,
			   LBA4, 0x00, 0x00 },
	},
	{
		.name = "REPORT_SUPPORTED_TASK_MANAGEMENT_FUNCTIONS",
		.fn = spc_report_tmfs,
		.resv = SCSI_RESV_WE,
		.flags = F_LUN_IN | SCSI_OP_SANITIZE,
		.cdb_len = 12,
		.sa = SA_REPORT_TMFS,
		.has_sa = true,
		.xfer = XFER_BYTES(6, 4),
		/* REPD; allocation length */
		.usage = { MAINTENANCE_IN, SA_MASK, 0x80, 0x00, 0x00, 0x00,
			   LBA4, 0x00, 0x00 },
	},
};

/*
 * SANITIZE: IMMED, AUSE; parameter list length. Conflicts with every
 * reservation (SBC-4's table lists it with the writes), and software write
 * protect applies (it modifies the medium).
 */
#define SANITIZE_OP(sa_, name_) {					\
		.name = name_, .fn = sbc_sanitize,			\
		.flags = F_LUN_OUT | SCSI_OP_MEDIUM | SCSI_OP_WRITE,	\
		.cdb_len = 10, .sa = sa_, .has_sa = true,		\
		.xfer = XFER_BYTES(7, 2),				\
		.usage = { SANITIZE, 0xa0 | SA_MASK, 0, 0, 0, 0, 0,	\
			   0xff, 0xff, 0x00 },				\
	}

static const struct scsi_op sanitize_ops[] = {
	SANITIZE_OP(0x01, "SANITIZE_OVERWRITE"),
	SANITIZE_OP(0x02, "SANITIZE_BLOCK_ERASE"),
	SANITIZE_OP(0x03, "SANITIZE_CRYPTO_ERASE"),
	SANITIZE_OP(0x1f, "SANITIZE_EXIT_FAILURE_MODE"),
};

/*
 * PERSISTENT RESERVE IN: allocation length (bytes 7-8, SPC-4 6.15.1); the
 * handler takes every SA.
 */
#define PRIN_OP(sa_, name_) {						\
		.name = name_, .fn = scsi_pr_in, .flags = F_LUN_IN,	\
		.alua = SCSI_ALUA_SB,					\
		.resv = SCSI_RESV_SELF, .cdb_len = 10, .sa = sa_,	\
		.has_sa = true, .xfer = XFER_BYTES(7, 2),		\
		.usage = { PERSISTENT_RESERVE_IN, SA_MASK, 0, 0, 0, 0, 0, \
			   0xff, 0xff, 0x00 },				\
	}

static const struct scsi_op pr_in_ops[] = {
	PRIN_OP(SCSI_PRIN_READ_KEYS, "PERSISTENT_RESERVE_IN_READ_KEYS"),
	PRIN_OP(SCSI_PRIN_READ_RESERVATION,
		"PERSISTENT_RESERVE_IN_READ_RESERVATION"),
	PRIN_OP(SCSI_PRIN_REPORT_CAPABILITIES,
		"PERSISTENT_RESERVE_IN_REPORT_CAPABILITIES"),
	PRIN_OP(SCSI_PRIN_READ_FULL_STATUS,
		"PERSISTENT_RESERVE_IN_READ_FULL_STATUS"),
};

/*
 * PERSISTENT RESERVE OUT: SCOPE and TYPE (ignored where a service action
 * does not use them, as SPC-4 says), parameter list length (bytes 5-8,
 * 32 bits, SPC-4 6.16.1).
 */
#define PROUT_OP(sa_, name_) {						\
		.name = name_, .fn = scsi_pr_out, .flags = F_LUN_OUT,	\
		.alua = SCSI_ALUA_SB,					\
		.resv = SCSI_RESV_SELF, .cdb_len = 10, .sa = sa_,	\
		.has_sa = true, .xfer = XFER_BYTES(5, 4),		\
		.usage = { PERSISTENT_RESERVE_OUT, SA_MASK, 0xff, 0, 0,	\
			   LBA4, 0x00 },				\
	}

static const struct scsi_op pr_out_ops[] = {
	PROUT_OP(SCSI_PROUT_REGISTER, "PERSISTENT_RESERVE_OUT_REGISTER"),
	PROUT_OP(SCSI_PROUT_RESERVE, "PERSISTENT_RESERVE_OUT_RESERVE"),
	PROUT_OP(SCSI_PROUT_RELEASE, "PERSISTENT_RESERVE_OUT_RELEASE"),
	PROUT_OP(SCSI_PROUT_CLEAR, "PERSISTENT_RESERVE_OUT_CLEAR"),
	PROUT_OP(SCSI_PROUT_PREEMPT, "PERSISTENT_RESERVE_OUT_PREEMPT"),
	PROUT_OP(SCSI_PROUT_PREEMPT_AND_ABORT,
		 "PERSISTENT_RESERVE_OUT_PREEMPT_AND_ABORT"),
	PROUT_OP(SCSI_PROUT_REGISTER_AND_IGNORE,
		 "PERSISTENT_RESERVE_OUT_REGISTER_AND_IGNORE_EXISTING_KEY"),
	PROUT_OP(SCSI_PROUT_REGISTER_AND_MOVE,
		 "PERSISTENT_RESERVE_OUT_REGISTER_AND_MOVE"),
};

/*
 * EXTENDED COPY (LID1): parameter list length. The handler checks the
 * reservations of each copy target it reads (as READ) or writes (as
 * WRITE), the addressed LUN only when it is one of them.
 */
static const struct scsi_op extended_copy_ops[] = {
	{
		.name = "EXTENDED_COPY_LID1", .fn = scsi_xcopy_lid1,
		.flags = F_LUN_OUT, .resv = SCSI_RESV_SELF, .cdb_len = 16,
		.sa = 0x00, .has_sa = true,
		.xfer = XFER_BYTES(10, 4),
		.usage = { EXTENDED_COPY, SA_MASK, 0, 0, 0, 0, 0, 0, 0, 0,
			   LBA4, 0, 0 },
	},
};

/* RECEIVE COPY RESULTS: LIST IDENTIFIER; allocation length */
#define RCR_OP(sa_, name_) {						\
		.name = name_, .fn = scsi_xcopy_results, .flags = F_LUN_IN, \
		.resv = SCSI_RESV_WE, .cdb_len = 16, .sa = sa_,		\
		.has_sa = true,						\
		.xfer = XFER_BYTES(10, 4),				\
		.usage = { RECEIVE_COPY_RESULTS, SA_MASK, 0xff, 0, 0, 0, 0, \
			   0, 0, 0, LBA4, 0, 0 },			\
	}

static const struct scsi_op receive_copy_results_ops[] = {
	RCR_OP(0x00, "RECEIVE_COPY_RESULTS_COPY_STATUS"),
	RCR_OP(0x01, "RECEIVE_COPY_RESULTS_RECEIVE_DATA"),
	RCR_OP(0x03, "RECEIVE_COPY_RESULTS_OPERATING_PARAMETERS"),
	RCR_OP(0x04, "RECEIVE_COPY_RESULTS_FAILED_SEGMENT_DETAILS"),
};

const struct scsi_op scsi_ops[256] = {
	[TEST_UNIT_READY] = {
		.name = "TEST_UNIT_READY", .fn = spc_test_unit_ready,
		.resv = SCSI_RESV_ANY,
		.flags = SCSI_OP_LUN | SCSI_OP_MEDIUM, .cdb_len = 6,
		.xfer = XFER_NONE,
		.usage = { TEST_UNIT_READY, 0, 0, 0, 0, 0 },
	},
	[REQUEST_SENSE] = {
		.alua = SCSI_ALUA_ANY,
		.name = "REQUEST_SENSE", .fn = spc_request_sense,
		.resv = SCSI_RESV_ANY | SCSI_RESV_SPC2,
		.flags = F_ANY_LUN_IN, .cdb_len = 6,
		.xfer = XFER_BYTES(4, 1),
		.usage = { REQUEST_SENSE, 0x01, 0, 0, 0xff, 0 },
	},
	[READ_6] = {
		.name = "READ_6", .fn = sbc_read, .flags = F_READ,
		.resv = SCSI_RESV_WE,
		.cdb_len = 6,
		.xfer = XFER_HOOK(4, 1, xfer_rw6),
		.usage = { READ_6, 0x1f, 0xff, 0xff, 0xff, 0 },
	},
	[WRITE_6] = {
		.name = "WRITE_6", .fn = sbc_write, .flags = F_WRITE,
		.cdb_len = 6,
		.xfer = XFER_HOOK(4, 1, xfer_rw6),
		.usage = { WRITE_6, 0x1f, 0xff, 0xff, 0xff, 0 },
	},
	[INQUIRY] = {
		.alua = SCSI_ALUA_ANY,
		.name = "INQUIRY", .fn = spc_inquiry,
		.resv = SCSI_RESV_ANY | SCSI_RESV_SPC2,
		.flags = F_ANY_LUN_IN, .cdb_len = 6,
		.xfer = XFER_BYTES(3, 2),
		/* EVPD; page code; allocation length (CMDDT is obsolete) */
		.usage = { INQUIRY, 0x01, 0xff, 0xff, 0xff, 0 },
	},
	[MODE_SELECT_6] = {
		.alua = SCSI_ALUA_SB,
		.name = "MODE_SELECT_6", .fn = spc_mode_select,
		.flags = SCSI_OP_LUN | SCSI_OP_DATA_OUT, .cdb_len = 6,
		.xfer = XFER_BYTES(4, 1),
		/* PF only: SP = 1 fails here, nothing is saved */
		.usage = { MODE_SELECT_6, 0x10, 0, 0, 0xff, 0 },
	},
	[RESERVE_6] = {
		.name = "RESERVE_6", .fn = scsi_pr_reserve,
		.flags = SCSI_OP_LUN, .resv = SCSI_RESV_SELF, .cdb_len = 6,
		.xfer = XFER_NONE,
		/* no third-party or extent reservation (obsolete fields) */
		.usage = { RESERVE_6, 0, 0, 0, 0, 0 },
	},
	[RELEASE_6] = {
		.name = "RELEASE_6", .fn = scsi_pr_release,
		.flags = SCSI_OP_LUN, .resv = SCSI_RESV_SELF, .cdb_len = 6,
		.xfer = XFER_NONE,
		.usage = { RELEASE_6, 0, 0, 0, 0, 0 },
	},
	[MODE_SENSE_6] = {
		.alua = SCSI_ALUA_SB,
		.name = "MODE_SENSE_6", .fn = spc_mode_sense,
		.resv = SCSI_RESV_WE,
		.flags = F_LUN_IN, .cdb_len = 6,
		.xfer = XFER_BYTES(4, 1),
		/* DBD; PC, page code; subpage; allocation length */
		.usage = { MODE_SENSE_6, 0x08, 0xff, 0xff, 0xff, 0 },
	},
	[START_STOP_UNIT] = {
		.name = "START_STOP_UNIT", .fn = spc_start_stop_unit,
		.resv = SCSI_RESV_CDB,
		.flags = SCSI_OP_LUN, .cdb_len = 6,
		.xfer = XFER_NONE,
		/* IMMED; POWER CONDITION, NO_FLUSH, LOEJ, START */
		.usage = { START_STOP_UNIT, 0x01, 0, 0, 0xf7, 0 },
	},
	[PREVENT_ALLOW_MEDIUM_REMOVAL] = {
		.name = "PREVENT_ALLOW_MEDIUM_REMOVAL", .fn = spc_prevent_allow,
		.resv = SCSI_RESV_CDB,
		.flags = SCSI_OP_LUN, .cdb_len = 6,
		.xfer = XFER_NONE,
		.usage = { PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 0x03, 0 },
	},
	[READ_CAPACITY_10] = {
		.alua = SCSI_ALUA_SB,
		.name = "READ_CAPACITY_10", .fn = sbc_read_capacity10,
		.resv = SCSI_RESV_ANY,
		.flags = F_MEDIUM_IN, .cdb_len = 10,
		.xfer = XFER_FIXED(SCSI_XFER_BYTES, 8),
		/* obsolete LBA and PMI: sbc.c still checks them as SBC-3 */
		.usage = { READ_CAPACITY_10, 0, LBA4, 0, 0, 0x01, 0 },
	},
	[READ_10] = {
		.name = "READ_10", .fn = sbc_read, .flags = F_READ,
		.resv = SCSI_RESV_WE,
		.cdb_len = 10,
		.xfer = XFER_BLOCKS(7, 2),
		/* DPO, FUA, RARC */
		.usage = { READ_10, 0x1c, LBA4, 0, 0xff, 0xff, 0 },
	},
	[WRITE_10] = {
		.name = "WRITE_10", .fn = sbc_write, .flags = F_WRITE,
		.cdb_len = 10,
		.xfer = XFER_BLOCKS(7, 2),
		/* DPO, FUA */
		.usage = { WRITE_10, 0x18, LBA4, 0, 0xff, 0xff, 0 },
	},
	[WRITE_VERIFY_10] = {
		.name = "WRITE_AND_VERIFY_10", .fn = sbc_write_verify,
		.flags = F_WRITE, .cdb_len = 10,
		.xfer = XFER_BLOCKS(7, 2),
		/* DPO, BYTCHK */
		.usage = { WRITE_VERIFY_10, 0x16, LBA4, 0, 0xff, 0xff, 0 },
	},
	[VERIFY_10] = {
		.name = "VERIFY_10", .fn = sbc_verify, .flags = F_VERIFY,
		.resv = SCSI_RESV_WE,
		.cdb_len = 10,
		.xfer = XFER_HOOK(7, 2, xfer_verify),
		.usage = { VERIFY_10, 0x16, LBA4, 0, 0xff, 0xff, 0 },
	},
	[SYNCHRONIZE_CACHE_10] = {
		.name = "SYNCHRONIZE_CACHE_10", .fn = sbc_sync_cache,
		.flags = SCSI_OP_LUN | SCSI_OP_MEDIUM, .cdb_len = 10,
		.xfer = XFER_NONE,
		/*
		 * SYNC_NV (obsolete since SBC-3, and older initiators still
		 * set it; no cache is non-volatile, so nothing changes),
		 * IMMED
		 */
		.usage = { SYNCHRONIZE_CACHE_10, 0x06, LBA4, 0, 0xff, 0xff, 0 },
	},
	[PRE_FETCH_10] = {
		.name = "PRE_FETCH_10", .fn = sbc_prefetch,
		.flags = SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_FAULTS,
		.resv = SCSI_RESV_WE, .cdb_len = 10,
		.xfer = XFER_NONE,
		/* IMMED; GROUP NUMBER accepted, as a hint with no effect */
		.usage = { PRE_FETCH_10, 0x02, LBA4, 0x1f, 0xff, 0xff, 0 },
	},
	[READ_DEFECT_DATA_10] = {
		.name = "READ_DEFECT_DATA_10", .fn = sbc_read_defect_data,
		.flags = F_MEDIUM_IN, .resv = SCSI_RESV_WE, .cdb_len = 10,
		.xfer = XFER_BYTES(7, 2),
		/* REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT; allocation length */
		.usage = { READ_DEFECT_DATA_10, 0, 0x1f, 0, 0, 0, 0, 0xff, 0xff,
			   0 },
	},
	[WRITE_SAME_10] = {
		.name = "WRITE_SAME_10", .fn = sbc_write_same,
		.flags = F_WRITE, .cdb_len = 10,
		.xfer = XFER_FIXED(SCSI_XFER_BLOCKS, 1),
		/* UNMAP (ANCHOR: ANC_SUP is 0; PBDATA, LBDATA obsolete) */
		.usage = { WRITE_SAME_10, 0x08, LBA4, 0, 0xff, 0xff, 0 },
	},
	[UNMAP] = {
		.name = "UNMAP", .fn = sbc_unmap, .flags = F_WRITE,
		.cdb_len = 10,
		.xfer = XFER_BYTES(7, 2),
		/* parameter list length (ANCHOR: ANC_SUP is 0) */
		.usage = { UNMAP, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0 },
	},
	[MODE_SELECT_10] = {
		.alua = SCSI_ALUA_SB,
		.name = "MODE_SELECT_10", .fn = spc_mode_select,
		.flags = SCSI_OP_LUN | SCSI_OP_DATA_OUT, .cdb_len = 10,
		.xfer = XFER_BYTES(7, 2),
		.usage = { MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, 0xff, 0xff, 0 },
	},
	[RESERVE_10] = {
		.name = "RESERVE_10", .fn = scsi_pr_reserve,
		.flags = SCSI_OP_LUN, .resv = SCSI_RESV_SELF, .cdb_len = 10,
		/* SPC-2's PARAMETER LIST LENGTH (only 0 passes the usage) */
		.xfer = XFER_BYTES(7, 2),
		/* 3RDPTY 0, LONGID 0: no parameter list */
		.usage = { RESERVE_10, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	},
	[RELEASE_10] = {
		.name = "RELEASE_10", .fn = scsi_pr_release,
		.flags = SCSI_OP_LUN, .resv = SCSI_RESV_SELF, .cdb_len = 10,
		.xfer = XFER_BYTES(7, 2),
		.usage = { RELEASE_10, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	},
	[MODE_SENSE_10] = {
		.alua = SCSI_ALUA_SB,
		.name = "MODE_SENSE_10", .fn = spc_mode_sense,
		.resv = SCSI_RESV_WE,
		.flags = F_LUN_IN, .cdb_len = 10,
		.xfer = XFER_BYTES(7, 2),
		/* LLBAA, DBD; PC, page code; subpage; allocation length */
		.usage = { MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff,
			   0 },
	},
	[PERSISTENT_RESERVE_IN] = {
		.name = "PERSISTENT_RESERVE_IN", .cdb_len = 10,
		.nsa = ARRAY_SIZE(pr_in_ops), .sa_ops = pr_in_ops,
		.xfer = XFER_BYTES(7, 2),
	},
	[PERSISTENT_RESERVE_OUT] = {
		.name = "PERSISTENT_RESERVE_OUT", .cdb_len = 10,
		.nsa = ARRAY_SIZE(pr_out_ops), .sa_ops = pr_out_ops,
		.xfer = XFER_BYTES(5, 4),
	},
	[SANITIZE] = {
		.name = "SANITIZE", .cdb_len = 10,
		.nsa = ARRAY_SIZE(sanitize_ops), .sa_ops = sanitize_ops,
		.xfer = XFER_BYTES(7, 2),
	},
	[EXTENDED_COPY] = {
		.name = "EXTENDED_COPY", .cdb_len = 16,
		.nsa = ARRAY_SIZE(extended_copy_ops), .sa_ops = extended_copy_ops,
		.xfer = XFER_BYTES(10, 4),
	},
	[RECEIVE_COPY_RESULTS] = {
		.name = "RECEIVE_COPY_RESULTS", .cdb_len = 16,
		.nsa = ARRAY_SIZE(receive_copy_results_ops),
		.sa_ops = receive_copy_results_ops,
		.xfer = XFER_BYTES(10, 4),
	},
	[READ_16] = {
		.name = "READ_16", .fn = sbc_read, .flags = F_READ,
		.resv = SCSI_RESV_WE,
		.cdb_len = 16,
		.xfer = XFER_BLOCKS(10, 4),
		.usage = { READ_16, 0x1c, LBA8, LBA4, 0, 0 },
	},
	[COMPARE_AND_WRITE] = {
		.name = "COMPARE_AND_WRITE", .fn = sbc_compare_and_write,
		.flags = F_WRITE, .cdb_len = 16,
		.xfer = XFER_HOOK(13, 1, xfer_caw),
		/* DPO, FUA; LBA; NUMBER OF LOGICAL BLOCKS */
		.usage = { COMPARE_AND_WRITE, 0x18, LBA8, 0, 0, 0, 0xff, 0, 0 },
	},
	[WRITE_16] = {
		.name = "WRITE_16", .fn = sbc_write, .flags = F_WRITE,
		.cdb_len = 16,
		.xfer = XFER_BLOCKS(10, 4),
		.usage = { WRITE_16, 0x18, LBA8, LBA4, 0, 0 },
	},
	[ORWRITE_16] = {
		.name = "ORWRITE_16", .fn = sbc_orwrite, .flags = F_WRITE,
		.cdb_len = 16,
		.xfer = XFER_BLOCKS(10, 4),
		/* DPO, FUA; LBA; TRANSFER LENGTH; GROUP NUMBER (a hint) */
		.usage = { ORWRITE_16, 0x18, LBA8, LBA4, 0x1f, 0 },
	},
	[WRITE_VERIFY_16] = {
		.name = "WRITE_AND_VERIFY_16", .fn = sbc_write_verify,
		.flags = F_WRITE, .cdb_len = 16,
		.xfer = XFER_BLOCKS(10, 4),
		.usage = { WRITE_VERIFY_16, 0x16, LBA8, LBA4, 0, 0 },
	},
	[VERIFY_16] = {
		.name = "VERIFY_16", .fn = sbc_verify, .flags = F_VERIFY,
		.resv = SCSI_RESV_WE,
		.cdb_len = 16,
		.xfer = XFER_HOOK(10, 4, xfer_verify),
		.usage = { VERIFY_16, 0x16, LBA8, LBA4, 0, 0 },
	},
	[PRE_FETCH_16] = {
		.name = "PRE_FETCH_16", .fn = sbc_prefetch,
		.flags = SCSI_OP_LUN | SCSI_OP_MEDIUM | SCSI_OP_FAULTS,
		.resv = SCSI_RESV_WE, .cdb_len = 16,
		.xfer = XFER_NONE,
		.usage = { PRE_FETCH_16, 0x02, LBA8, LBA4, 0x1f, 0 },
	},
	[WRITE_ATOMIC_16] = {
		.name = "WRITE_ATOMIC_16", .fn = sbc_write_atomic,
		.flags = F_WRITE, .cdb_len = 16,
		.xfer = XFER_BLOCKS(12, 2),
		/* DPO, FUA; LBA; ATOMIC BOUNDARY; TRANSFER LENGTH; GROUP */
		.usage = { WRITE_ATOMIC_16, 0x18, LBA8, 0xff, 0xff, 0xff, 0xff,
			   0x1f, 0 },
	},
	[SYNCHRONIZE_CACHE_16] = {
		.name = "SYNCHRONIZE_CACHE_16", .fn = sbc_sync_cache,
		.flags = SCSI_OP_LUN | SCSI_OP_MEDIUM, .cdb_len = 16,
		.xfer = XFER_NONE,
		/* SYNC_NV, IMMED, as SYNCHRONIZE CACHE (10) */
		.usage = { SYNCHRONIZE_CACHE_16, 0x06, LBA8, LBA4, 0, 0 },
	},
	[WRITE_SAME_16] = {
		.name = "WRITE_SAME_16", .fn = sbc_write_same,
		.flags = F_WRITE, .cdb_len = 16,
		.xfer = XFER_HOOK(0, 0, xfer_write_same16),
		/* UNMAP, NDOB */
		.usage = { WRITE_SAME_16, 0x09, LBA8, LBA4, 0, 0 },
	},
	[SERVICE_ACTION_IN_16] = {
		.name = "SERVICE_ACTION_IN_16", .cdb_len = 16,
		.nsa = ARRAY_SIZE(service_action_in16_ops),
		.sa_ops = service_action_in16_ops,
		.xfer = XFER_BYTES(10, 4),
	},
	[REPORT_LUNS] = {
		.alua = SCSI_ALUA_ANY,
		.name = "REPORT_LUNS", .fn = spc_report_luns,
		.resv = SCSI_RESV_ANY | SCSI_RESV_SPC2,
		.flags = F_ANY_LUN_IN, .cdb_len = 12,
		.xfer = XFER_BYTES(6, 4),
		/* SELECT REPORT; allocation length */
		.usage = { REPORT_LUNS, 0, 0xff, 0, 0, 0, LBA4, 0, 0 },
	},
	[MAINTENANCE_IN] = {
		.name = "MAINTENANCE_IN", .cdb_len = 12,
		.nsa = ARRAY_SIZE(maintenance_in_ops),
		.sa_ops = maintenance_in_ops,
		.xfer = XFER_BYTES(6, 4),
	},
	[READ_12] = {
		.name = "READ_12", .fn = sbc_read, .flags = F_READ,
		.resv = SCSI_RESV_WE,
		.cdb_len = 12,
		.xfer = XFER_BLOCKS(6, 4),
		.usage = { READ_12, 0x1c, LBA4, LBA4, 0, 0 },
	},
	[WRITE_12] = {
		.name = "WRITE_12", .fn = sbc_write, .flags = F_WRITE,
		.cdb_len = 12,
		.xfer = XFER_BLOCKS(6, 4),
		.usage = { WRITE_12, 0x18, LBA4, LBA4, 0, 0 },
	},
	[WRITE_VERIFY_12] = {
		.name = "WRITE_AND_VERIFY_12", .fn = sbc_write_verify,
		.flags = F_WRITE, .cdb_len = 12,
		.xfer = XFER_BLOCKS(6, 4),
		.usage = { WRITE_VERIFY_12, 0x16, LBA4, LBA4, 0, 0 },
	},
	[VERIFY_12] = {
		.name = "VERIFY_12", .fn = sbc_verify, .flags = F_VERIFY,
		.resv = SCSI_RESV_WE,
		.cdb_len = 12,
		.xfer = XFER_HOOK(6, 4, xfer_verify),
		.usage = { VERIFY_12, 0x16, LBA4, LBA4, 0, 0 },
	},
	[READ_DEFECT_DATA_12] = {
		.name = "READ_DEFECT_DATA_12", .fn = sbc_read_defect_data,
		.flags = F_MEDIUM_IN, .resv = SCSI_RESV_WE, .cdb_len = 12,
		.xfer = XFER_BYTES(6, 4),
		/* REQ_PLIST, REQ_GLIST, FORMAT; ADDRESS DESCRIPTOR INDEX (no
		 * descriptors: any index); allocation length */
		.usage = { READ_DEFECT_DATA_12, 0x1f, LBA4, LBA4, 0, 0 },
	},
};
/* clang-format on */

const struct scsi_op *scsi_op_sa(uint8_t opcode, uint16_t sa)
{
	const struct scsi_op *op = &scsi_ops[opcode];
	unsigned int i;

	for (i = 0; i < op->nsa; i++)
		if (op->sa_ops[i].sa == sa)
			return &op->sa_ops[i];
	return NULL;
}

const struct scsi_op *scsi_op_at(unsigned int i)
{
	unsigned int opcode;

	for (opcode = 0; opcode < 256; opcode++) {
		const struct scsi_op *op = &scsi_ops[opcode];

		if (op->nsa) {
			if (i < op->nsa)
				return &op->sa_ops[i];
			i -= op->nsa;
		} else if (op->fn) {
			if (!i)
				return op;
			i--;
		}
	}
	return NULL;
}

const char *scsi_opcode_name(uint8_t opcode)
{
	return scsi_ops[opcode].name;
}

int scsi_cdb_len(uint8_t opcode)
{
	switch (opcode >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 3:
		return -1;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		return 0;
	}
}

int scsi_lun_decode(const uint8_t field[8], uint32_t *lun)
{
	unsigned int i;

	for (i = 2; i < 8; i++)
		if (field[i])
			return -EINVAL;
	switch (field[0] >> 6) {
	case 0: /* peripheral device addressing, bus 0 */
		if (field[0] & 0x3f)
			return -EINVAL;
		*lun = field[1];
		return 0;
	case 1: /* flat space addressing */
		*lun = (uint32_t)(field[0] & 0x3f) << 8 | field[1];
		return 0;
	default:
		return -EINVAL;
	}
}

int scsi_lun_encode(uint32_t lun, uint8_t field[8])
{
	if (lun > 0x3fff)
		return -ERANGE;
	memset(field, 0, 8);
	/* peripheral below 256, flat space above: int_to_scsilun() alike */
	field[0] = (uint8_t)(lun > 0xff ? 0x40 | lun >> 8 : 0);
	field[1] = (uint8_t)lun;
	return 0;
}

/* ---- data movement ---------------------------------------------------- */

/* Bytes the transport's buffer takes from @off: xfer_len and the iovecs. */
static size_t room_at(const struct scsi_cmd *cmd, size_t off, size_t len)
{
	if (off >= cmd->xfer_len)
		return 0;
	return len < cmd->xfer_len - off ? len : cmd->xfer_len - off;
}

/* Copies between @buf and the iovecs at @off; @in: to the iovecs. */
static size_t iov_copy(const struct scsi_cmd *cmd, void *buf, size_t len,
		       size_t off, bool in)
{
	uint8_t *p = buf;
	size_t done = 0;
	unsigned int i;

	for (i = 0; i < cmd->iovcnt && done < len; i++) {
		size_t n = cmd->iov[i].iov_len;
		uint8_t *base = cmd->iov[i].iov_base;

		if (off >= n) {
			off -= n;
			continue;
		}
		n -= off;
		if (n > len - done)
			n = len - done;
		if (in)
			memcpy(base + off, p + done, n);
		else
			memcpy(p + done, base + off, n);
		done += n;
		off = 0;
	}
	return done;
}

static void grow_data_len(struct scsi_cmd *cmd, size_t end)
{
	if (end > cmd->data_len)
		cmd->data_len = (uint32_t)end;
}

size_t scsi_copy_in_at(struct scsi_ctx *c, const void *buf, size_t len,
		       size_t off)
{
	struct scsi_cmd *cmd = c->cmd;
	size_t n;

	if (cmd->dir == SCSI_DIR_WRITE)
		return 0;
	n = iov_copy(cmd, (void *)buf, room_at(cmd, off, len), off, true);
	if (n)
		grow_data_len(cmd, off + n);
	return n;
}

size_t scsi_copy_in(struct scsi_ctx *c, const void *buf, size_t len)
{
	return scsi_copy_in_at(c, buf, len, c->cmd->data_len);
}

size_t scsi_copy_out(struct scsi_ctx *c, void *buf, size_t len, size_t off)
{
	struct scsi_cmd *cmd = c->cmd;
	size_t n;

	if (cmd->dir == SCSI_DIR_READ)
		return 0;
	n = iov_copy(cmd, buf, room_at(cmd, off, len), off, false);
	if (n)
		grow_data_len(cmd, off + n);
	return n;
}

/*
 * Adds @n to one of a thread's own counters (struct scsi_stats): a relaxed
 * load and store, not a read-modify-write, as only the owner writes, so
 * no lock prefix on x86: the cost of the plain += it replaces. Atomic all
 * the same: the control thread loads it while the owner counts.
 */
static void stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* ---- checks shared with the handlers ---------------------------------- */

bool scsi_ua_take(struct scsi_ctx *c, uint8_t *asc, uint8_t *ascq)
{
	if (!c->have_lun)
		return false;
	/* the LUN's own conditions first, then this I_T nexus's (pr.c) */
	return lun_ua_take(c->cmd->tgt->luns, &c->li, c->cmd->nexus, asc,
			   ascq) != 0 ||
	       scsi_pr_ua_take(c, asc, ascq);
}

enum scsi_disposition scsi_check_faults(struct scsi_ctx *c, uint64_t lba,
					uint64_t nblocks, unsigned int op)
{
	struct scsi_cmd *cmd = c->cmd;
	struct fault_hit hit;

	if (!cmd->tgt->faults || !fault_check(cmd->tgt->faults, c->table_lun,
					      lba, nblocks, op, &hit))
		return SCSI_DONE;
	if (cmd->stats)
		stat_add(&cmd->stats->faults, 1);
	switch (hit.kind) {
	case FAULT_MEDIUM_READ:
		scsi_sense_info(c, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR,
				hit.lba);
		return SCSI_DONE;
	case FAULT_MEDIUM_WRITE:
		scsi_sense_info(c, SK_MEDIUM_ERROR, ASC_WRITE_ERROR, hit.lba);
		return SCSI_DONE;
	case FAULT_DELAY:
		cmd->delay_ns += hit.delay_ns;
		return SCSI_DELAY;
	case FAULT_HANG:
		return SCSI_HOLD;
	case FAULT_UA:
		scsi_sense(c, SK_UNIT_ATTENTION, hit.asc, hit.ascq);
		return SCSI_DONE;
	case FAULT_NOT_READY:
		scsi_sense(c, SK_NOT_READY, hit.asc, hit.ascq);
		return SCSI_DONE;
	default:
		return SCSI_DONE;
	}
}

/* ---- scsi_exec() ------------------------------------------------------- */

/*
 * Every bit the CDB sets must be in the usage data; the first one that is
 * not is reported with its byte and bit (the highest such bit).
 */
static bool cdb_usage_ok(struct scsi_ctx *c, const struct scsi_op *op)
{
	unsigned int i;
	uint8_t bad;

	for (i = 1; i < op->cdb_len; i++) {
		bad = c->cdb[i] & (uint8_t)~op->usage[i];
		if (bad) {
			scsi_sense_cdb(c, (uint16_t)i,
				       (int8_t)(31 - __builtin_clz(bad)));
			return false;
		}
	}
	return true;
}

/*
 * The port's asymmetric access state lets @op run (SCSI_ALUA_* of the
 * table); else NOT READY with the state's code. One pointer test on a
 * target without ALUA.
 */
static bool alua_refuses(struct scsi_ctx *c, const struct scsi_op *op)
{
	enum scsi_alua_state st;
	uint8_t asc, ascq;

	if (!c->cmd->tgt->alua)
		return false;
	st = scsi_alua_state(c);
	if (!scsi_alua_sense(st, &asc, &ascq))
		return false;
	if (op->alua & (st == SCSI_ALUA_STANDBY ? SCSI_ALUA_SB : SCSI_ALUA_UN))
		return false;
	scsi_sense(c, SK_NOT_READY, asc, ascq);
	return true;
}

/* The view LUN as a table LUN, pinned if present. */
static void pin_lun(struct scsi_ctx *c)
{
	const struct scsi_cmd *cmd = c->cmd;
	const struct scsi_view *v = cmd->view;
	uint64_t lun = cmd->lun;

	if (v) {
		if (cmd->lun >= v->count)
			return;
		lun += v->base;
	}
	if (lun > UINT32_MAX)
		return;
	c->table_lun = (uint32_t)lun;
	c->have_lun = lun_get(cmd->tgt->luns, c->table_lun, &c->li) == 0;
	c->pr = c->have_lun && scsi_pr_active(cmd->tgt);
}

/*
 * The checks, in order: the opcode and its service action, the CDB's
 * length and usage data, a present LUN (LOGICAL UNIT NOT SUPPORTED), a
 * SANITIZE in progress, a pending unit attention, injected faults without
 * an LBA, a reservation conflict, the LUN's state for medium access,
 * software write protect for writes; then the handler.
 */
static enum scsi_disposition exec_checked(struct scsi_ctx *c)
{
	struct scsi_cmd *cmd = c->cmd;
	const struct scsi_op *op;
	enum scsi_disposition d;
	uint8_t asc, ascq;

	if (!cmd->cdb || !cmd->cdb_len) {
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_INVALID_COMMAND_OPERATION_CODE);
		return SCSI_DONE;
	}
	op = &scsi_ops[c->cdb[0]];
	if (!op->fn && !op->nsa) {
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_INVALID_COMMAND_OPERATION_CODE);
		return SCSI_DONE;
	}
	if (cmd->cdb_len < op->cdb_len) {
		/* the transport cut the CDB short of its group's length */
		scsi_sense_cdb(c, 0, -1);
		return SCSI_DONE;
	}
	if (op->nsa) {
		op = scsi_op_sa(c->cdb[0], c->cdb[1] & SA_MASK);
		if (!op) {
			scsi_sense_cdb(c, 1, 4);
			return SCSI_DONE;
		}
	}
	c->op = op;
	if (!cdb_usage_ok(c, op))
		return SCSI_DONE;
	if (!c->have_lun) {
		if (op->flags & SCSI_OP_LUN) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_LOGICAL_UNIT_NOT_SUPPORTED);
			return SCSI_DONE;
		}
		return op->fn(c);
	}
	/*
	 * A SANITIZE in progress stops everything but INQUIRY, REPORT LUNS,
	 * REQUEST SENSE and the REPORT SUPPORTED commands (SBC-4 4.11), ahead
	 * of a unit attention, which stays pending until it ends.
	 */
	if (c->li.state == LUN_SANITIZING &&
	    !(op->flags & (SCSI_OP_NO_UA | SCSI_OP_SANITIZE))) {
		scsi_sense_progress(c, SK_NOT_READY, ASC_LU_NOT_READY_SANITIZE,
				    c->li.progress);
		return SCSI_DONE;
	}
	if (!(op->flags & SCSI_OP_NO_UA)) {
		if (scsi_ua_take(c, &asc, &ascq)) {
			scsi_sense(c, SK_UNIT_ATTENTION, asc, ascq);
			return SCSI_DONE;
		}
		if (alua_refuses(c, op))
			return SCSI_DONE;
		if (!(op->flags & SCSI_OP_FAULTS)) {
			d = scsi_check_faults(c, 0, 0, FAULT_OP_OTHER);
			if (d == SCSI_HOLD || cmd->status != SCSI_GOOD)
				return d;
		}
	}
	if (scsi_pr_conflict(c)) {
		cmd->status = SCSI_RESERVATION_CONFLICT;
		return SCSI_DONE;
	}
	if ((op->flags & SCSI_OP_MEDIUM) &&
	    scsi_state_sense(c->li.state, &asc, &ascq)) {
		scsi_sense(c, SK_NOT_READY, asc, ascq);
		return SCSI_DONE;
	}
	if ((op->flags & SCSI_OP_WRITE) && (c->li.mode & LUN_MODE_SWP)) {
		scsi_sense(c, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return SCSI_DONE;
	}
	return op->fn(c);
}

/*
 * The bytes @c's CDB asks to move, for the transport's residuals, as the
 * table row's @xfer describes them: the service action's row when
 * exec_checked() found one, else the opcode's. After the handler ran (the
 * block size needs the pinned LUN).
 */
static uint32_t cdb_xfer_bytes(const struct scsi_ctx *c)
{
	const struct scsi_cmd *cmd = c->cmd;
	const struct scsi_op *op;
	const struct scsi_xfer *x;
	uint64_t n;

	if (!cmd->cdb || !cmd->cdb_len)
		return cmd->xfer_len;
	op = c->op ? c->op : &scsi_ops[cmd->cdb[0]];
	if (!op->cdb_len || cmd->cdb_len < op->cdb_len)
		return cmd->xfer_len;
	x = &op->xfer;
	switch (x->unit) {
	case SCSI_XFER_NONE:
		return 0;
	case SCSI_XFER_BYTES:
		return xfer_count(x, cmd->cdb);
	case SCSI_XFER_BLOCKS:
		if (!c->have_lun || !c->li.block_size)
			return cmd->xfer_len;
		n = (uint64_t)xfer_count(x, cmd->cdb) * c->li.block_size;
		return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	default:
		return cmd->xfer_len;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

enum scsi_disposition scsi_exec(struct scsi_cmd *cmd)
{
	struct scsi_ctx c = {.cmd = cmd, .cdb = cmd->cdb};
	enum scsi_disposition d;
	uint64_t t0 = 0;

	/* two vDSO clock reads a command, only when someone counts */
	if (cmd->stats)
		t0 = now_ns();
	cmd->status = SCSI_GOOD;
	cmd->sense_len = 0;
	cmd->data_len = 0;
	cmd->delay_ns = 0;
	pin_lun(&c);
	d = exec_checked(&c);
	cmd->cdb_xfer_len = cdb_xfer_bytes(&c);
	if (c.have_lun)
		lun_put(cmd->tgt->luns, &c.li);
	/* an injected delay holds whatever the handler returned */
	if (d == SCSI_DONE && cmd->delay_ns)
		d = SCSI_DELAY;
	if (cmd->stats && d != SCSI_HOLD)
		scsi_stats_record(cmd->stats, cmd, now_ns() - t0);
	return d;
}

/* ---- statistics -------------------------------------------------------- */

unsigned int scsi_lat_bucket(uint64_t ns)
{
	unsigned int b;

	if (!ns)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(ns);
	return b < SCSI_LAT_BUCKETS ? b : SCSI_LAT_BUCKETS - 1;
}

void scsi_stats_record(struct scsi_stats *st, const struct scsi_cmd *cmd,
		       uint64_t ns)
{
	if (cmd->cdb && cmd->cdb_len) {
		struct scsi_op_stats *o = &st->op[cmd->cdb[0]];

		stat_add(&o->count, 1);
		if (cmd->status != SCSI_GOOD)
			stat_add(&o->errors, 1);
		stat_add(&o->bytes, cmd->data_len);
	}
	stat_add(&st->lat[scsi_lat_bucket(ns)], 1);
}

/* relaxed: each counter alone, ordered with nothing; see stat_add() */
static uint64_t stat_get(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

void scsi_stats_add(struct scsi_stats_sum *dst, const struct scsi_stats *src)
{
	unsigned int i;

	for (i = 0; i < 256; i++) {
		dst->op[i].count += stat_get(&src->op[i].count);
		dst->op[i].errors += stat_get(&src->op[i].errors);
		dst->op[i].bytes += stat_get(&src->op[i].bytes);
	}
	for (i = 0; i < SCSI_LAT_BUCKETS; i++)
		dst->lat[i] += stat_get(&src->lat[i]);
	dst->faults += stat_get(&src->faults);
}

/* The largest latency bucket @b holds (scsi_lat_bucket()). */
static uint64_t bucket_top(unsigned int b)
{
	if (!b)
		return 0;
	if (b >= SCSI_LAT_BUCKETS - 1)
		return UINT64_MAX;
	return (1ull << b) - 1;
}

uint64_t scsi_lat_percentile(const struct scsi_stats_sum *st, double p)
{
	uint64_t total = 0, need, seen = 0;
	unsigned int b;
	double x;

	for (b = 0; b < SCSI_LAT_BUCKETS; b++)
		total += st->lat[b];
	if (!total)
		return 0;
	if (!(p > 0))
		p = 0;
	if (p > 100)
		p = 100;
	/* the smallest sample count that covers p% of them, at least one */
	x = p / 100.0 * (double)total;
	need = (uint64_t)x;
	if ((double)need < x)
		need++;
	if (!need)
		need = 1;
	for (b = 0; b < SCSI_LAT_BUCKETS; b++) {
		seen += st->lat[b];
		if (seen >= need)
			return bucket_top(b);
	}
	return bucket_top(SCSI_LAT_BUCKETS - 1);
}
