// SPDX-License-Identifier: MIT
/*
 * Sense data: fixed (70h) and descriptor (72h) formats, the INFORMATION and
 * sense-key-specific field pointer in both, and the one mapping from the
 * -errno of lun/store to a SCSI outcome.
 */
#include <errno.h>
#include <string.h>

#include "scsi_i.h"

#define FIXED_LEN 18 /* 70h with ADDITIONAL SENSE LENGTH 0Ah */
#define DESC_HDR_LEN 8
#define DESC_INFO 0x00 /* information sense data descriptor */
#define DESC_INFO_LEN 12
#define DESC_SKS 0x02 /* sense key specific sense data descriptor */
#define DESC_SKS_LEN 8

#define SKSV 0x80 /* sense-key-specific bytes valid */
#define SKS_CD 0x40 /* field pointer: 1 CDB, 0 parameter list */
#define SKS_BPV 0x08 /* BIT POINTER valid */

_Static_assert(DESC_HDR_LEN + DESC_INFO_LEN + DESC_SKS_LEN <= SCSI_SENSE_MAX,
	       "the longest sense fits a command");

/*
 * What one sense carries besides key/ASC/ASCQ. The INFORMATION field of
 * fixed format is 32 bits: SPC-4 says to leave VALID 0 when the value does
 * not fit, so a medium error past LBA 2^32 - 1 names its LBA only in
 * descriptor format.
 */
struct sense_extra {
	bool info_valid;
	uint64_t info;
	bool sks_valid;
	uint8_t sks[3];
};

static size_t sense_build(uint8_t *buf, bool desc, uint8_t key, uint8_t asc,
			  uint8_t ascq, const struct sense_extra *x)
{
	size_t n;

	if (!desc) {
		memset(buf, 0, FIXED_LEN);
		buf[0] = 0x70;
		buf[2] = key & 0x0f;
		if (x && x->info_valid && x->info <= UINT32_MAX) {
			buf[0] |= 0x80; /* VALID */
			put_be32(buf + 3, (uint32_t)x->info);
		}
		buf[7] = FIXED_LEN - 8;
		buf[12] = asc;
		buf[13] = ascq;
		if (x && x->sks_valid)
			memcpy(buf + 15, x->sks, 3);
		return FIXED_LEN;
	}
	memset(buf, 0, DESC_HDR_LEN);
	buf[0] = 0x72;
	buf[1] = key & 0x0f;
	buf[2] = asc;
	buf[3] = ascq;
	n = DESC_HDR_LEN;
	if (x && x->info_valid) {
		memset(buf + n, 0, DESC_INFO_LEN);
		buf[n] = DESC_INFO;
		buf[n + 1] = DESC_INFO_LEN - 2;
		buf[n + 2] = 0x80; /* VALID */
		put_be64(buf + n + 4, x->info);
		n += DESC_INFO_LEN;
	}
	if (x && x->sks_valid) {
		memset(buf + n, 0, DESC_SKS_LEN);
		buf[n] = DESC_SKS;
		buf[n + 1] = DESC_SKS_LEN - 2;
		memcpy(buf + n + 4, x->sks, 3);
		n += DESC_SKS_LEN;
	}
	buf[7] = (uint8_t)(n - DESC_HDR_LEN);
	return n;
}

static void cmd_sense(struct scsi_cmd *cmd, bool desc, uint8_t key, uint8_t asc,
		      uint8_t ascq, const struct sense_extra *x)
{
	cmd->status = SCSI_CHECK_CONDITION;
	cmd->sense_len =
		(uint8_t)sense_build(cmd->sense, desc, key, asc, ascq, x);
}

/* D_SENSE of the control mode page; fixed format without a LUN. */
static bool ctx_desc(const struct scsi_ctx *c)
{
	return c->have_lun && (c->li.mode & LUN_MODE_D_SENSE);
}

void scsi_set_sense(struct scsi_cmd *cmd, bool descriptor, uint8_t key,
		    uint8_t asc, uint8_t ascq)
{
	cmd_sense(cmd, descriptor, key, asc, ascq, NULL);
}

size_t scsi_sense_format(uint8_t *buf, bool descriptor, uint8_t key,
			 uint8_t asc, uint8_t ascq)
{
	return sense_build(buf, descriptor, key, asc, ascq, NULL);
}

void scsi_sense(struct scsi_ctx *c, uint8_t key, uint8_t asc, uint8_t ascq)
{
	cmd_sense(c->cmd, ctx_desc(c), key, asc, ascq, NULL);
}

void scsi_sense_info(struct scsi_ctx *c, uint8_t key, uint8_t asc, uint8_t ascq,
		     uint64_t info)
{
	struct sense_extra x = {.info_valid = true, .info = info};

	cmd_sense(c->cmd, ctx_desc(c), key, asc, ascq, &x);
}

/* ILLEGAL REQUEST with a field pointer (SPC-4 4.5.2.4.2). */
static void sense_field(struct scsi_ctx *c, uint8_t asc, uint8_t ascq, bool cdb,
			uint16_t byte, int8_t bit)
{
	struct sense_extra x = {.sks_valid = true};

	x.sks[0] = SKSV | (cdb ? SKS_CD : 0);
	if (bit >= 0)
		x.sks[0] |= SKS_BPV | (bit & 7);
	put_be16(x.sks + 1, byte);
	cmd_sense(c->cmd, ctx_desc(c), SK_ILLEGAL_REQUEST, asc, ascq, &x);
}

void scsi_sense_progress(struct scsi_ctx *c, uint8_t key, uint8_t asc,
			 uint8_t ascq, uint16_t progress)
{
	struct sense_extra x = {.sks_valid = true};

	x.sks[0] = SKSV;
	put_be16(x.sks + 1, progress);
	cmd_sense(c->cmd, ctx_desc(c), key, asc, ascq, &x);
}

size_t scsi_sense_format_progress(uint8_t *buf, bool descriptor, uint8_t key,
				  uint8_t asc, uint8_t ascq, uint16_t progress)
{
	struct sense_extra x = {.sks_valid = true};

	x.sks[0] = SKSV;
	put_be16(x.sks + 1, progress);
	return sense_build(buf, descriptor, key, asc, ascq, &x);
}

void scsi_sense_cdb(struct scsi_ctx *c, uint16_t byte, int8_t bit)
{
	sense_field(c, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

void scsi_sense_param(struct scsi_ctx *c, uint16_t byte, int8_t bit)
{
	sense_field(c, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte, bit);
}

bool scsi_state_sense(enum lun_state state, uint8_t *asc, uint8_t *ascq)
{
	switch (state) {
	case LUN_OFFLINE:
		/*
		 * 04h/03h rather than 04h/12h LOGICAL UNIT OFFLINE: sd's
		 * spin-up loop gives up on 04h/03h at once, while on 04h/12h
		 * it sends START STOP UNIT and polls TEST UNIT READY for
		 * 100 seconds per disk; I/O fails without retries on both.
		 */
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_READY_MANUAL_INTERVENTION);
		return true;
	case LUN_NOT_READY:
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_READY_BECOMING_READY);
		return true;
	case LUN_STOPPED:
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_READY_INIT_REQUIRED);
		return true;
	case LUN_NO_MEDIUM:
		ASC_PUT(*asc, *ascq, ASC_MEDIUM_NOT_PRESENT);
		return true;
	case LUN_SANITIZING:
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_READY_SANITIZE);
		return true;
	default:
		return false;
	}
}

void scsi_sense_errno(struct scsi_ctx *c, int err, bool write, uint64_t lba)
{
	uint8_t asc, ascq;

	switch (err) {
	case 0:
		return;
	case -ENOSPC:
		/* thin provisioning ran out: SBC-4 4.7.3.6 */
		scsi_sense(c, SK_DATA_PROTECT,
			   ASC_SPACE_ALLOC_FAILED_WRITE_PROTECT);
		return;
	case -EIO:
		if (write)
			scsi_sense_info(c, SK_MEDIUM_ERROR, ASC_WRITE_ERROR,
					lba);
		else
			scsi_sense_info(c, SK_MEDIUM_ERROR,
					ASC_UNRECOVERED_READ_ERROR, lba);
		return;
	case -EROFS:
		scsi_sense(c, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return;
	case -EMFILE:
		/*
		 * The daemon is out of descriptors (the file store could not
		 * open the LUN's file): nothing is wrong with the medium, and
		 * the command may well work in a moment. BUSY (SAM-5 5.3.1)
		 * makes the initiator retry; a MEDIUM ERROR would fail the
		 * I/O for good.
		 */
		c->cmd->status = SCSI_BUSY;
		c->cmd->sense_len = 0;
		return;
	case -ENOMEDIUM:
		if (!c->have_lun || !scsi_state_sense(c->li.state, &asc, &ascq))
			ASC_PUT(asc, ascq,
				ASC_LU_NOT_READY_MANUAL_INTERVENTION);
		scsi_sense(c, SK_NOT_READY, asc, ascq);
		return;
	case -ENODEV:
	case -ENOENT:
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		return;
	case -ERANGE:
		scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return;
	case -EINVAL:
		scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		return;
	default:
		scsi_sense(c, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
}
