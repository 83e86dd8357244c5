/* SPDX-License-Identifier: MIT */
/*
 * The iSCSI Basic Header Segment field by field, named as RFC 7143 11
 * names them, and the AHS's own header (11.2.2). Included by iscsi_i.h;
 * nothing outside target/frontend/iscsi includes it.
 */
#ifndef SDSWARM_ISCSI_BHS_I_H
#define SDSWARM_ISCSI_BHS_I_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bytes.h"

#define ISCSI_BHS_LEN 48
#define ISCSI_LUN_LEN 8
#define ISCSI_ISID_LEN 6
#define ISCSI_BHS_CDB_LEN 16 /* the CDB bytes the BHS holds */

/*
 * Each ISCSI_BHS_*() line below makes a getter iscsi_bhs_NAME(bhs) and a
 * setter iscsi_bhs_set_NAME(bhs, value) for the field NAME at byte OFF
 * of a 48-byte BHS, big-endian as every iSCSI field is. Where a byte
 * holds a different field in different PDU kinds, each field has its own
 * name, so a caller says which one it means (edtl, not "bytes 20-23").
 * Byte-wise: any alignment of @bhs is fine. The code is one load or
 * store and a byte swap.
 */
#define ISCSI_BHS_U8(name, off)                                                \
	static inline uint8_t iscsi_bhs_##name(const uint8_t *bhs)             \
	{                                                                      \
		return bhs[off];                                               \
	}                                                                      \
	static inline void iscsi_bhs_set_##name(uint8_t *bhs, uint8_t v)       \
	{                                                                      \
		bhs[off] = v;                                                  \
	}

#define ISCSI_BHS_BE16(name, off)                                              \
	static inline uint16_t iscsi_bhs_##name(const uint8_t *bhs)            \
	{                                                                      \
		return get_be16(bhs + (off));                                  \
	}                                                                      \
	static inline void iscsi_bhs_set_##name(uint8_t *bhs, uint16_t v)      \
	{                                                                      \
		put_be16(bhs + (off), v);                                      \
	}

#define ISCSI_BHS_BE32(name, off)                                              \
	static inline uint32_t iscsi_bhs_##name(const uint8_t *bhs)            \
	{                                                                      \
		return get_be32(bhs + (off));                                  \
	}                                                                      \
	static inline void iscsi_bhs_set_##name(uint8_t *bhs, uint32_t v)      \
	{                                                                      \
		put_be32(bhs + (off), v);                                      \
	}

/* Byte strings (LUN, ISID, CDB): the getter points into the BHS. */
#define ISCSI_BHS_BYTES(name, off, len)                                        \
	static inline const uint8_t *iscsi_bhs_##name(const uint8_t *bhs)      \
	{                                                                      \
		return bhs + (off);                                            \
	}                                                                      \
	static inline void iscsi_bhs_set_##name(uint8_t *bhs,                  \
						const uint8_t *v)              \
	{                                                                      \
		memcpy(bhs + (off), v, (len));                                 \
	}

/* Byte 0: the opcode (ISCSI_OP_*) and, in requests, the I bit. */
#define ISCSI_OP_IMMEDIATE 0x40
#define ISCSI_OP_MASK 0x3f

static inline uint8_t iscsi_bhs_opcode(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_OP_MASK;
}

static inline bool iscsi_bhs_immediate(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_OP_IMMEDIATE;
}

/* Byte 0 whole: a response's opcode, or a request's with its I bit. */
static inline void iscsi_bhs_set_opcode(uint8_t *bhs, uint8_t op)
{
	bhs[0] = op;
}

/* Byte 1: the F bit (0x80) and the flags of the PDU kind (ISCSI_*). */
ISCSI_BHS_U8(flags, 1)

/*
 * Fields that share byte 1 with flags: each setter changes its own bits
 * only. Login request and response: CSG in bits 3-2, NSG in bits 1-0
 * (ISCSI_STAGE_*). TMF request: Function, and Logout request: Reason
 * Code, in bits 6-0 (bit 7 is F).
 */
#define ISCSI_BHS_BITS(name, shift, mask)                                      \
	static inline uint8_t iscsi_bhs_##name(const uint8_t *bhs)             \
	{                                                                      \
		return (bhs[1] >> (shift)) & (mask);                           \
	}                                                                      \
	static inline void iscsi_bhs_set_##name(uint8_t *bhs, uint8_t v)       \
	{                                                                      \
		bhs[1] = (uint8_t)((bhs[1] & ~((mask) << (shift))) |           \
				   (v & (mask)) << (shift));                   \
	}

ISCSI_BHS_BITS(csg, 2, 3)
ISCSI_BHS_BITS(nsg, 0, 3)
ISCSI_BHS_BITS(function, 0, 0x7f)
ISCSI_BHS_BITS(reason_code, 0, 0x7f)

/* Byte 2: Response (SCSI, TMF and Logout responses), Reason (Reject). */
ISCSI_BHS_U8(response, 2)
ISCSI_BHS_U8(reason, 2)
/* Login: Version-max (request and response). */
ISCSI_BHS_U8(version_max, 2)

/* Byte 3: Status (SCSI Response, Data-In with the S bit). */
ISCSI_BHS_U8(status, 3)
/* Login: Version-min (request), Version-active (response). */
ISCSI_BHS_U8(version_min, 3)
ISCSI_BHS_U8(version_active, 3)

/* Byte 4: TotalAHSLength, in 4-byte words: here in bytes. */
static inline uint32_t iscsi_bhs_ahs_len(const uint8_t *bhs)
{
	return (uint32_t)bhs[4] * 4;
}

/* @bytes: a multiple of 4, at most 1020. */
static inline void iscsi_bhs_set_ahs_len(uint8_t *bhs, uint32_t bytes)
{
	bhs[4] = (uint8_t)(bytes / 4);
}

/* Bytes 5-7: DataSegmentLength (without padding and digest). */
static inline uint32_t iscsi_bhs_data_len(const uint8_t *bhs)
{
	return get_be24(bhs + 5);
}

static inline void iscsi_bhs_set_data_len(uint8_t *bhs, uint32_t len)
{
	put_be24(bhs + 5, len);
}

/* Bytes 8-15: LUN (SCSI Command, TMF, Data, R2T, Async, Text, NOP). */
ISCSI_BHS_BYTES(lun, 8, ISCSI_LUN_LEN)
/* Login: ISID, then TSIH. */
ISCSI_BHS_BYTES(isid, 8, ISCSI_ISID_LEN)
ISCSI_BHS_BE16(tsih, 14)

/* Bytes 16-19: Initiator Task Tag, every PDU. */
ISCSI_BHS_BE32(itt, 16)

/*
 * Bytes 20-23: Target Transfer Tag (Data-Out, Data-In, R2T, Text, NOP,
 * SNACK); Expected Data Transfer Length (SCSI Command); Referenced Task
 * Tag (TMF request); CID, 16 bits (Login and Logout requests).
 */
ISCSI_BHS_BE32(ttt, 20)
ISCSI_BHS_BE32(edtl, 20)
ISCSI_BHS_BE32(rtt, 20)
ISCSI_BHS_BE16(cid, 20)

/* Bytes 24-27: CmdSN (requests); StatSN (responses, R2T, Async). */
ISCSI_BHS_BE32(cmdsn, 24)
ISCSI_BHS_BE32(statsn, 24)

/* Bytes 28-31: ExpStatSN (requests); ExpCmdSN (responses). */
ISCSI_BHS_BE32(exp_statsn, 28)
ISCSI_BHS_BE32(exp_cmdsn, 28)

/*
 * Bytes 32-35: MaxCmdSN (responses); RefCmdSN (TMF request). Bytes
 * 32-47 of a SCSI Command: the CDB (longer ones go on in an AHS).
 */
ISCSI_BHS_BE32(max_cmdsn, 32)
ISCSI_BHS_BE32(ref_cmdsn, 32)
ISCSI_BHS_BYTES(cdb, 32, ISCSI_BHS_CDB_LEN)

/*
 * Bytes 36-39: DataSN (Data-In, Data-Out, Reject); R2TSN (R2T);
 * ExpDataSN (SCSI Response, TMF request). Login response: Status-Class
 * and Status-Detail as one number, class << 8 | detail, as
 * ISCSI_LOGIN_* spell it. Async message: AsyncEvent, AsyncVCode.
 */
ISCSI_BHS_BE32(datasn, 36)
ISCSI_BHS_BE32(r2tsn, 36)
ISCSI_BHS_BE32(exp_datasn, 36)
ISCSI_BHS_BE16(login_status, 36)
ISCSI_BHS_U8(async_event, 36)
ISCSI_BHS_U8(async_vcode, 37)

/*
 * Bytes 40-43: Buffer Offset (Data-In, Data-Out, R2T); Bidirectional
 * Read Residual Count (SCSI Response); Time2Wait and Time2Retain, 16
 * bits each (Logout response).
 */
ISCSI_BHS_BE32(buffer_offset, 40)
ISCSI_BHS_BE32(bidi_residual_count, 40)
ISCSI_BHS_BE16(time2wait, 40)
ISCSI_BHS_BE16(time2retain, 42)

/*
 * Bytes 44-47: Residual Count (SCSI Response, Data-In); Desired Data
 * Transfer Length (R2T).
 */
ISCSI_BHS_BE32(residual_count, 44)
ISCSI_BHS_BE32(desired_dtl, 44)

#undef ISCSI_BHS_BITS
#undef ISCSI_BHS_U8
#undef ISCSI_BHS_BE16
#undef ISCSI_BHS_BE32
#undef ISCSI_BHS_BYTES

/*
 * An AHS (11.2.2): AHSLength (bytes 0-1: the bytes after the first 4,
 * without padding), AHSType (byte 2), then its own bytes. An extended
 * CDB AHS carries CDB bytes 16 onwards from byte 4, AHSLength being
 * their count + 1 (the reserved byte 3).
 */
#define ISCSI_AHS_EXT_CDB 1
#define ISCSI_AHS_HDR_LEN 4

static inline uint16_t iscsi_ahs_length(const uint8_t *ahs)
{
	return get_be16(ahs);
}

static inline uint8_t iscsi_ahs_type(const uint8_t *ahs)
{
	return ahs[2];
}

#endif /* SDSWARM_ISCSI_BHS_I_H */
