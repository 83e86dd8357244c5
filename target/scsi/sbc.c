// SPDX-License-Identifier: MIT
/*
 * SBC-4 block commands over lun.c: READ and WRITE (6/10/12/16), VERIFY,
 * WRITE AND VERIFY, WRITE SAME, UNMAP, COMPARE AND WRITE, SYNCHRONIZE CACHE,
 * READ CAPACITY (10/16) and GET LBA STATUS. Data moves straight between the
 * command's iovecs and the store; nothing is allocated per command.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "scsi_i.h"

/* The opcodes and service actions whose CDBs differ in layout. */
#define SBC_READ_6 0x08
#define SBC_WRITE_6 0x0a
#define SBC_WRITE_SAME_16 0x93
#define SBC_SA_READ_CAPACITY_16 0x10
#define SBC_SA_GET_LBA_STATUS 0x12

/* Byte 1 of the 10/12/16-byte CDBs. */
#define SBC_PROTECT_MASK 0xe0 /* RDPROTECT, WRPROTECT, VRPROTECT */
#define SBC_FUA 0x08
#define SBC_WS_ANCHOR 0x10
#define SBC_WS_UNMAP 0x08
#define SBC_WS_PBDATA 0x04 /* obsolete in SBC-4 */
#define SBC_WS_LBDATA 0x02 /* obsolete in SBC-4 */
#define SBC_WS_NDOB 0x01 /* WRITE SAME (16) only */
#define SBC_UNMAP_ANCHOR 0x01
#define SBC_BYTCHK(b1) (((b1) >> 1) & 3u)

/*
 * Most blocks one COMPARE AND WRITE may name: the Block Limits VPD page's
 * MAXIMUM COMPARE AND WRITE LENGTH (spc.c must report the same value). One
 * block keeps the lock below exact: a command locks the one stripe of its
 * one block.
 */
#define SBC_CAW_MAX_BLOCKS 1u
#define SBC_CAW_LOCKS 256u

/*
 * The per-thread bounce buffer: a WRITE SAME pattern replicated, the two
 * sides of a VERIFY or COMPARE AND WRITE comparison, an UNMAP parameter
 * list (at most 65,535 bytes, so always whole), GET LBA STATUS data, and
 * transfers whose iovecs are too fragmented to hand to lun.c as they are.
 * A command runs on one thread from start to end, so one buffer per thread
 * suffices. Cost: 64 KiB of static TLS in every thread, virtual until the
 * thread first runs one of those commands; threads need stacks of more than
 * 64 KiB (glibc carves static TLS out of the stack mapping).
 */
#define SBC_BUF_SIZE 65536u
#define SBC_HALF (SBC_BUF_SIZE / 2)
static __thread uint8_t sbc_buf[SBC_BUF_SIZE] __attribute__((aligned(64)));

/* Iovecs a transfer may be split into before it goes through sbc_buf. */
#define SBC_IOV_MAX 32u

/* GET LBA STATUS descriptors per command: what fits in sbc_buf. */
#define SBC_GLS_MAX_DESC ((SBC_BUF_SIZE - 8) / 16)

_Static_assert(SBC_BUF_SIZE > 65535, "an UNMAP list fits whole");
_Static_assert(SBC_HALF >= 4096, "each side of a VERIFY holds a block");
_Static_assert(3 * SBC_CAW_MAX_BLOCKS * 4096 <= SBC_BUF_SIZE,
	       "COMPARE AND WRITE's verify, write and medium blocks fit");

/*
 * COMPARE AND WRITE atomicity: commands on the same (LUN, LBA) serialise on
 * one of 256 striped mutexes (unrelated blocks share a stripe now and then;
 * that costs only waiting). Plain WRITEs do not take these locks: against a
 * concurrent WRITE of the same block a COMPARE AND WRITE is only as atomic
 * as the store's per-chunk copy makes each of the two.
 */
static pthread_mutex_t sbc_caw_locks[SBC_CAW_LOCKS] = {
	[0 ... SBC_CAW_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t *sbc_caw_lock(uint32_t lun, uint64_t lba)
{
	uint64_t h = (lba ^ (uint64_t)lun << 40) * 0x9e3779b97f4a7c15ull;

	return &sbc_caw_locks[h >> 56];
}

/* LBA and length fields of a CDB, located by its group code. */
struct sbc_rw {
	uint64_t lba;
	uint64_t nblocks;
	uint16_t len_byte; /* CDB byte the length field starts at */
};

static void sbc_decode(const uint8_t *cdb, struct sbc_rw *rw)
{
	switch (cdb[0] >> 5) {
	case 0: /* 6-byte: 21-bit LBA, 8-bit length */
		rw->lba = get_be24(cdb + 1) & 0x1fffffu;
		rw->nblocks = cdb[4];
		rw->len_byte = 4;
		break;
	case 1:
	case 2: /* 10-byte */
		rw->lba = get_be32(cdb + 2);
		rw->nblocks = get_be16(cdb + 7);
		rw->len_byte = 7;
		break;
	case 5: /* 12-byte */
		rw->lba = get_be32(cdb + 2);
		rw->nblocks = get_be32(cdb + 6);
		rw->len_byte = 6;
		break;
	default: /* group 4, 16-byte */
		rw->lba = get_be64(cdb + 2);
		rw->nblocks = get_be32(cdb + 10);
		rw->len_byte = 10;
		break;
	}
}

/* No protection information: any nonzero xxPROTECT field is invalid. */
static bool sbc_protect_ok(struct scsi_ctx *c)
{
	if (c->cdb[0] >> 5 == 0 || !(c->cdb[1] & SBC_PROTECT_MASK))
		return true;
	scsi_sense_cdb(c, 1, 7);
	return false;
}

/* The Block Limits MAXIMUM TRANSFER LENGTH (0: no limit reported). */
static bool sbc_xfer_ok(struct scsi_ctx *c, const struct sbc_rw *rw)
{
	uint32_t max = c->li.group->max_xfer_blocks;

	if (!max || rw->nblocks <= max)
		return true;
	scsi_sense_cdb(c, rw->len_byte, -1);
	return false;
}

/*
 * [lba, lba + n) inside the medium, written so lba + n cannot overflow. A
 * zero-length command may name the LBA just past the end (as lun.c's own
 * check allows).
 */
static bool sbc_range_ok(struct scsi_ctx *c, uint64_t lba, uint64_t n)
{
	if (lba <= c->li.nblocks && n <= c->li.nblocks - lba)
		return true;
	scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	return false;
}

/*
 * The transport's expected transfer length is shorter than the data this
 * command cannot do without: INVALID FIELD IN COMMAND INFORMATION UNIT, the
 * code iSCSI conformance suites accept for it.
 */
static void sbc_sense_short(struct scsi_ctx *c)
{
	scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
}

/*
 * Injected faults for a medium access. Return: true when the command ends
 * here with *@disp (a hang, or a CHECK CONDITION the rule set); false to
 * go on and finish with *@disp (SCSI_DONE or SCSI_DELAY).
 */
static bool sbc_faults(struct scsi_ctx *c, uint64_t lba, uint64_t n,
		       unsigned int op, enum scsi_disposition *disp)
{
	enum scsi_disposition d = scsi_check_faults(c, lba, n, op);

	if (d == SCSI_HOLD || c->cmd->status != SCSI_GOOD) {
		*disp = d;
		return true;
	}
	if (d == SCSI_DELAY)
		*disp = SCSI_DELAY;
	return false;
}

/*
 * Write flags: FUA from the CDB, and every write when the caching mode page
 * has WCE off (a write-through cache completes writes only once they are
 * durable).
 */
static unsigned int sbc_io_flags(const struct scsi_ctx *c, bool fua)
{
	return fua || !(c->li.mode & LUN_MODE_WCE) ? LUN_IO_FUA : 0;
}

static struct lun_table *sbc_luns(const struct scsi_ctx *c)
{
	return c->cmd->tgt->luns;
}

/*
 * Bytes [@off, @off + @len) of the command's buffer as at most SBC_IOV_MAX
 * iovecs in @dst. Return: their count; 0 if that takes more or the buffer
 * is shorter.
 */
static unsigned int sbc_iov_slice(const struct scsi_cmd *cmd, size_t off,
				  size_t len, struct iovec *dst)
{
	unsigned int i, n = 0;

	for (i = 0; i < cmd->iovcnt && len; i++) {
		size_t l = cmd->iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		if (n == SBC_IOV_MAX)
			return 0;
		l -= off;
		if (l > len)
			l = len;
		dst[n].iov_base = (uint8_t *)cmd->iov[i].iov_base + off;
		dst[n].iov_len = l;
		n++;
		len -= l;
		off = 0;
	}
	return len ? 0 : n;
}

/*
 * Bytes of Data-In or Data-Out the command can carry: as scsi_copy_in()
 * and scsi_copy_out() rule, never against the declared direction.
 */
static uint32_t sbc_in_room(const struct scsi_ctx *c)
{
	return c->cmd->dir == SCSI_DIR_WRITE ? 0 : c->cmd->xfer_len;
}

static uint32_t sbc_out_room(const struct scsi_ctx *c)
{
	return c->cmd->dir == SCSI_DIR_READ ? 0 : c->cmd->xfer_len;
}

/* Reads @n blocks into sbc_buf (@n * block size <= SBC_BUF_SIZE). */
static int sbc_read_buf(struct scsi_ctx *c, uint64_t lba, uint32_t n,
			uint8_t *buf)
{
	struct iovec v = {
		.iov_base = buf,
		.iov_len = (size_t)n * c->li.block_size,
	};

	return lun_read(sbc_luns(c), &c->li, lba, n, &v, 1);
}

/*
 * Reads @n blocks at @lba into the Data-In buffer at byte @off: in one
 * lun_read() straight into the command's iovecs when they slice into
 * SBC_IOV_MAX pieces, else through sbc_buf 64 KiB at a time.
 * Return: true; false with the sense set.
 */
static bool sbc_read_in(struct scsi_ctx *c, uint64_t lba, uint32_t n,
			size_t off)
{
	uint32_t bs = c->li.block_size, per = SBC_BUF_SIZE / bs, k;
	struct iovec v[SBC_IOV_MAX];
	unsigned int cnt;
	int ret;

	cnt = sbc_iov_slice(c->cmd, off, (size_t)n * bs, v);
	if (cnt) {
		ret = lun_read(sbc_luns(c), &c->li, lba, n, v, cnt);
		if (ret)
			goto out_sense;
		return true;
	}
	while (n) {
		k = n < per ? n : per;
		ret = sbc_read_buf(c, lba, k, sbc_buf);
		if (ret)
			goto out_sense;
		scsi_copy_in_at(c, sbc_buf, (size_t)k * bs, off);
		lba += k;
		n -= k;
		off += (size_t)k * bs;
	}
	return true;
out_sense:
	scsi_sense_errno(c, ret, false, lba);
	return false;
}

/*
 * Writes @n blocks at @lba from the Data-Out buffer at byte @off, like
 * sbc_read_in(). Return: true; false with the sense set.
 */
static bool sbc_write_out(struct scsi_ctx *c, uint64_t lba, uint32_t n,
			  size_t off, unsigned int flags)
{
	uint32_t bs = c->li.block_size, per = SBC_BUF_SIZE / bs, k;
	struct iovec v[SBC_IOV_MAX];
	unsigned int cnt;
	int ret;

	cnt = sbc_iov_slice(c->cmd, off, (size_t)n * bs, v);
	if (cnt) {
		ret = lun_write(sbc_luns(c), &c->li, lba, n, v, cnt, flags);
		if (ret)
			goto out_sense;
		return true;
	}
	while (n) {
		struct iovec b = {.iov_base = sbc_buf};

		k = n < per ? n : per;
		b.iov_len = (size_t)k * bs;
		if (scsi_copy_out(c, sbc_buf, b.iov_len, off) != b.iov_len) {
			sbc_sense_short(c);
			return false;
		}
		ret = lun_write(sbc_luns(c), &c->li, lba, k, &b, 1, flags);
		if (ret)
			goto out_sense;
		lba += k;
		n -= k;
		off += b.iov_len;
	}
	return true;
out_sense:
	scsi_sense_errno(c, ret, true, lba);
	return false;
}

/* Offset of the first byte where @a and @b differ (they do differ). */
static size_t sbc_first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i = 0;

	while (i + 64 <= len && !memcmp(a + i, b + i, 64))
		i += 64;
	while (i < len && a[i] == b[i])
		i++;
	return i;
}

static void sbc_sense_miscompare(struct scsi_ctx *c, uint64_t offset)
{
	scsi_sense_info(c, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY, offset);
}

static bool sbc_all_zero(const uint8_t *p, size_t len)
{
	return !p[0] && !memcmp(p, p + 1, len - 1);
}

/*
 * READ (6/10/12/16). DPO, FUA and RARC need nothing here: there is no cache
 * to bypass. An expected transfer length shorter than the command moves
 * what fits (SAM: the device server never passes the Data-In buffer's end);
 * the front end reports the overflow.
 */
enum scsi_disposition sbc_read(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	uint32_t bs = c->li.block_size;
	uint64_t bytes, whole;
	struct sbc_rw rw;
	size_t part;
	int ret;

	sbc_decode(c->cdb, &rw);
	if (c->cdb[0] == SBC_READ_6 && !rw.nblocks)
		rw.nblocks = 256;
	if (!sbc_protect_ok(c) || !sbc_xfer_ok(c, &rw) ||
	    !sbc_range_ok(c, rw.lba, rw.nblocks))
		return SCSI_DONE;
	if (sbc_faults(c, rw.lba, rw.nblocks, FAULT_OP_READ, &d))
		return d;
	bytes = rw.nblocks * bs;
	if (bytes > sbc_in_room(c))
		bytes = sbc_in_room(c);
	whole = bytes / bs;
	part = bytes % bs;
	if (whole && !sbc_read_in(c, rw.lba, (uint32_t)whole, 0))
		return d;
	if (part) {
		/* the block the Data-In buffer ends inside */
		ret = sbc_read_buf(c, rw.lba + whole, 1, sbc_buf);
		if (ret) {
			scsi_sense_errno(c, ret, false, rw.lba + whole);
			return d;
		}
		scsi_copy_in_at(c, sbc_buf, part, whole * bs);
	}
	c->cmd->data_len = (uint32_t)bytes;
	return d;
}

/*
 * WRITE (6/10/12/16) and the write of WRITE AND VERIFY. A Data-Out buffer
 * shorter than the command is written as far as it holds whole blocks (the
 * iSCSI conformance suites check that the rest stays untouched).
 */
static enum scsi_disposition
sbc_do_write(struct scsi_ctx *c, const struct sbc_rw *rw, unsigned int flags)
{
	enum scsi_disposition d = SCSI_DONE;
	uint32_t bs = c->li.block_size;
	uint64_t n = rw->nblocks;

	if (!sbc_xfer_ok(c, rw) || !sbc_range_ok(c, rw->lba, n))
		return SCSI_DONE;
	if (sbc_faults(c, rw->lba, n, FAULT_OP_WRITE, &d))
		return d;
	if (n > sbc_out_room(c) / bs)
		n = sbc_out_room(c) / bs;
	if (n && !sbc_write_out(c, rw->lba, (uint32_t)n, 0, flags))
		return d;
	c->cmd->data_len = (uint32_t)(n * bs);
	return d;
}

enum scsi_disposition sbc_write(struct scsi_ctx *c)
{
	struct sbc_rw rw;
	bool fua;

	sbc_decode(c->cdb, &rw);
	if (c->cdb[0] == SBC_WRITE_6 && !rw.nblocks)
		rw.nblocks = 256;
	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	fua = c->cdb[0] != SBC_WRITE_6 && (c->cdb[1] & SBC_FUA);
	return sbc_do_write(c, &rw, sbc_io_flags(c, fua));
}

/*
 * WRITE AND VERIFY (10/12/16). The store hands back exactly what it took,
 * so the write is the verification: BYTCHK 00b (medium check) and 01b
 * (compare with the Data-Out) both become a write that is durable before
 * the command completes; 10b and 11b are reserved for this command.
 */
enum scsi_disposition sbc_write_verify(struct scsi_ctx *c)
{
	struct sbc_rw rw;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	if (SBC_BYTCHK(c->cdb[1]) > 1) {
		scsi_sense_cdb(c, 1, 2);
		return SCSI_DONE;
	}
	sbc_decode(c->cdb, &rw);
	return sbc_do_write(c, &rw, LUN_IO_FUA);
}

/*
 * VERIFY with BYTCHK 01b (@single false: the Data-Out holds every block) or
 * 11b (@single true: one block, compared with each). INFORMATION of a
 * miscompare is the byte offset into the Data-Out buffer; for 11b, into
 * that block repeated once per LBA, so it names the LBA too.
 */
static void sbc_compare(struct scsi_ctx *c, uint64_t lba, uint64_t n,
			bool single)
{
	uint32_t bs = c->li.block_size, per = SBC_HALF / bs, k, i;
	uint8_t *medium = sbc_buf, *host = sbc_buf + SBC_HALF;
	uint64_t off = 0;
	size_t len, at;
	int ret;

	if (single && scsi_copy_out(c, host, bs, 0) != bs)
		goto out_short;
	while (n) {
		k = n < per ? (uint32_t)n : per;
		len = (size_t)k * bs;
		ret = sbc_read_buf(c, lba, k, medium);
		if (ret) {
			scsi_sense_errno(c, ret, false, lba);
			return;
		}
		if (single) {
			for (i = 0; i < k; i++) {
				const uint8_t *m = medium + (size_t)i * bs;

				if (!memcmp(m, host, bs))
					continue;
				at = (size_t)i * bs +
				     sbc_first_diff(m, host, bs);
				goto out_miscompare;
			}
		} else {
			if (scsi_copy_out(c, host, len, off) != len)
				goto out_short;
			if (memcmp(medium, host, len)) {
				at = sbc_first_diff(medium, host, len);
				goto out_miscompare;
			}
		}
		lba += k;
		n -= k;
		off += len;
	}
	return;
out_miscompare:
	sbc_sense_miscompare(c, off + at);
	return;
out_short:
	sbc_sense_short(c);
}

/*
 * VERIFY (10/12/16). BYTCHK 00b, a medium check, reads nothing (one
 * VERIFY (16) may name 2^32 blocks): the range check and injected faults
 * are the whole of it. 01b and 11b compare with the Data-Out; 10b is
 * reserved. MAXIMUM TRANSFER LENGTH limits only 01b, the one form whose
 * Data-Out is as long as the verification length.
 */
enum scsi_disposition sbc_verify(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	unsigned int bytchk = SBC_BYTCHK(c->cdb[1]);
	uint32_t bs = c->li.block_size;
	struct sbc_rw rw;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	if (bytchk == 2) {
		scsi_sense_cdb(c, 1, 2);
		return SCSI_DONE;
	}
	sbc_decode(c->cdb, &rw);
	if ((bytchk == 1 && !sbc_xfer_ok(c, &rw)) ||
	    !sbc_range_ok(c, rw.lba, rw.nblocks))
		return SCSI_DONE;
	if (sbc_faults(c, rw.lba, rw.nblocks, FAULT_OP_READ, &d))
		return d;
	if (!rw.nblocks || !bytchk)
		return d;
	if (bytchk == 1 && sbc_out_room(c) < rw.nblocks * bs) {
		sbc_sense_short(c);
		return d;
	}
	/* scsi_copy_out() has counted the Data-Out compared in data_len */
	sbc_compare(c, rw.lba, rw.nblocks, bytchk == 3);
	return d;
}

/* Writes the block at the start of sbc_buf to [lba, lba + n). */
static bool sbc_write_pattern(struct scsi_ctx *c, uint64_t lba, uint64_t n,
			      unsigned int flags)
{
	uint32_t bs = c->li.block_size, per = SBC_BUF_SIZE / bs, k;
	size_t have = bs, want;
	struct iovec v = {.iov_base = sbc_buf};
	int ret;

	/* replicate by doubling: log2(64 KiB / block size) copies */
	want = n < per ? (size_t)n * bs : SBC_BUF_SIZE;
	while (have < want) {
		size_t l = want - have < have ? want - have : have;

		memcpy(sbc_buf + have, sbc_buf, l);
		have += l;
	}
	while (n) {
		k = n < per ? (uint32_t)n : per;
		v.iov_len = (size_t)k * bs;
		ret = lun_write(sbc_luns(c), &c->li, lba, k, &v, 1, flags);
		if (ret) {
			scsi_sense_errno(c, ret, true, lba);
			return false;
		}
		lba += k;
		n -= k;
	}
	return true;
}

/*
 * WRITE SAME (10/16). A zero block (or NDOB) becomes lun_write_zeroes(),
 * which deallocates with UNMAP set and on the mem store frees whole zero
 * chunks either way; any other pattern is written 64 KiB at a time. NUMBER
 * OF LOGICAL BLOCKS 0 means to the end of the medium (WSNZ is 0); MAXIMUM
 * WRITE SAME LENGTH applies to the field as SBC-4 words it, so 0 passes it.
 * No anchored state (ANC_SUP 0), and no PBDATA/LBDATA (obsolete).
 */
enum scsi_disposition sbc_write_same(struct scsi_ctx *c)
{
	const uint8_t *cdb = c->cdb;
	const struct lun_group *g = c->li.group;
	enum scsi_disposition d = SCSI_DONE;
	bool unmap = cdb[1] & SBC_WS_UNMAP, zero;
	bool ndob = cdb[0] == SBC_WRITE_SAME_16 && (cdb[1] & SBC_WS_NDOB);
	uint32_t bs = c->li.block_size;
	unsigned int flags;
	struct sbc_rw rw;
	uint64_t n;
	int ret;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	if (cdb[1] & SBC_WS_ANCHOR) {
		scsi_sense_cdb(c, 1, 4);
		return SCSI_DONE;
	}
	if (cdb[1] & (SBC_WS_PBDATA | SBC_WS_LBDATA)) {
		scsi_sense_cdb(c, 1, cdb[1] & SBC_WS_PBDATA ? 2 : 1);
		return SCSI_DONE;
	}
	if (unmap && !g->thin) {
		scsi_sense_cdb(c, 1, 3);
		return SCSI_DONE;
	}
	sbc_decode(cdb, &rw);
	n = rw.nblocks;
	if (!n) {
		/* to the end: the LBA must name a block */
		if (rw.lba >= c->li.nblocks) {
			scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
			return SCSI_DONE;
		}
		n = c->li.nblocks - rw.lba;
	}
	/* the limit holds for "to the end" too (SBC-4 WRITE SAME) */
	if (g->max_ws_blocks && n > g->max_ws_blocks) {
		scsi_sense_cdb(c, rw.len_byte, -1);
		return SCSI_DONE;
	}
	if (!sbc_range_ok(c, rw.lba, n))
		return SCSI_DONE;
	/* one block of Data-Out, no less and no more */
	if (!ndob && (sbc_out_room(c) < bs || c->cmd->xfer_len > bs)) {
		sbc_sense_short(c);
		return SCSI_DONE;
	}
	if (sbc_faults(c, rw.lba, n, FAULT_OP_WRITE, &d))
		return d;
	if (ndob) {
		zero = true;
	} else {
		if (scsi_copy_out(c, sbc_buf, bs, 0) != bs) {
			sbc_sense_short(c);
			return d;
		}
		/*
		 * UNMAP on a thin LUN deallocates whatever the block holds:
		 * the range then reads as zeros (LBPRZ), as LIO does and as
		 * initiators that discard through WRITE SAME expect.
		 */
		zero = unmap || sbc_all_zero(sbc_buf, bs);
	}
	flags = sbc_io_flags(c, false);
	if (zero) {
		ret = lun_write_zeroes(sbc_luns(c), &c->li, rw.lba, n,
				       flags | (unmap ? LUN_IO_UNMAP : 0));
		if (ret) {
			scsi_sense_errno(c, ret, true, rw.lba);
			return d;
		}
	} else if (!sbc_write_pattern(c, rw.lba, n, flags)) {
		return d;
	}
	c->cmd->data_len = ndob ? 0 : bs;
	return d;
}

/* The Block Limits UNMAP limits: 0 and FFFFFFFFh both mean none. */
static bool sbc_unmap_limited(uint32_t max)
{
	return max && max != UINT32_MAX;
}

/*
 * UNMAP. A LUN without logical block provisioning does not have the
 * command (LBPU 0): INVALID COMMAND OPERATION CODE, as LIO answers with TPU
 * off. The whole parameter list is checked (lengths, limits, ranges) before
 * anything is deallocated, so a rejected list changes nothing. An UNMAP
 * BLOCK DESCRIPTOR DATA LENGTH that is not a multiple of 16 or runs past
 * the list ends at the last whole descriptor (SBC-4: the partial one is
 * ignored). The total of the counts is held against MAXIMUM UNMAP LBA COUNT.
 */
enum scsi_disposition sbc_unmap(struct scsi_ctx *c)
{
	const struct lun_group *g = c->li.group;
	enum scsi_disposition d = SCSI_DONE;
	uint32_t plen = get_be16(c->cdb + 7), bdl, ndesc, i, cnt;
	uint64_t lba, total = 0;
	const uint8_t *p;
	size_t got;
	int ret;

	if (!g->thin) {
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_INVALID_COMMAND_OPERATION_CODE);
		return SCSI_DONE;
	}
	if (c->cdb[1] & SBC_UNMAP_ANCHOR) {
		scsi_sense_cdb(c, 1, 0);
		return SCSI_DONE;
	}
	if (!plen)
		return SCSI_DONE;
	/* a Data-Out shorter than the list is a shorter list */
	got = scsi_copy_out(c, sbc_buf, plen, 0);
	if (got < 8) {
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_PARAMETER_LIST_LENGTH_ERROR);
		return SCSI_DONE;
	}
	bdl = get_be16(sbc_buf + 2);
	if (bdl > got - 8)
		bdl = (uint32_t)got - 8;
	ndesc = bdl / 16;
	if (sbc_unmap_limited(g->max_unmap_desc) && ndesc > g->max_unmap_desc) {
		scsi_sense_param(c, 2, -1);
		return SCSI_DONE;
	}
	for (i = 0, p = sbc_buf + 8; i < ndesc; i++, p += 16) {
		lba = get_be64(p);
		cnt = get_be32(p + 8);
		total += cnt;
		if (sbc_unmap_limited(g->max_unmap_blocks) &&
		    total > g->max_unmap_blocks) {
			scsi_sense_param(c, (uint16_t)(8 + 16 * i + 8), -1);
			return SCSI_DONE;
		}
		if (!sbc_range_ok(c, lba, cnt))
			return SCSI_DONE;
	}
	for (i = 0, p = sbc_buf + 8; i < ndesc; i++, p += 16) {
		lba = get_be64(p);
		cnt = get_be32(p + 8);
		if (!cnt)
			continue;
		if (sbc_faults(c, lba, cnt, FAULT_OP_WRITE, &d))
			return d;
		ret = lun_unmap(sbc_luns(c), &c->li, lba, cnt);
		if (ret) {
			scsi_sense_errno(c, ret, true, lba);
			return d;
		}
	}
	c->cmd->data_len = (uint32_t)got;
	return d;
}

/*
 * COMPARE AND WRITE. The Data-Out holds the verify blocks, then the write
 * blocks. Under the stripe lock: read, compare, write. A miscompare leaves
 * the medium as it was, INFORMATION the offset of the first differing byte.
 */
enum scsi_disposition sbc_compare_and_write(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	uint64_t lba = get_be64(c->cdb + 2);
	uint32_t n = c->cdb[13], bs = c->li.block_size;
	size_t len = (size_t)n * bs;
	uint8_t *verify = sbc_buf, *data = sbc_buf + len;
	uint8_t *medium = sbc_buf + 2 * len;
	pthread_mutex_t *lock;
	struct iovec v;
	int ret;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	/*
	 * Zero blocks is no error (SBC-4) unless the initiator sends data
	 * with it: then the CDB cannot be what it meant (libiscsi's 256 in
	 * a one-byte field).
	 */
	if (n > SBC_CAW_MAX_BLOCKS || (!n && c->cmd->xfer_len)) {
		scsi_sense_cdb(c, 13, -1);
		return SCSI_DONE;
	}
	if (!sbc_range_ok(c, lba, n) || !n)
		return SCSI_DONE;
	/* the verify and the write blocks, no less and no more */
	if (sbc_out_room(c) < 2 * len || c->cmd->xfer_len > 2 * len) {
		sbc_sense_short(c);
		return SCSI_DONE;
	}
	if (sbc_faults(c, lba, n, FAULT_OP_READ, &d) ||
	    sbc_faults(c, lba, n, FAULT_OP_WRITE, &d))
		return d;
	if (scsi_copy_out(c, sbc_buf, 2 * len, 0) != 2 * len) {
		sbc_sense_short(c);
		return d;
	}
	lock = sbc_caw_lock(c->li.lun, lba);
	pthread_mutex_lock(lock);
	ret = sbc_read_buf(c, lba, n, medium);
	if (ret) {
		pthread_mutex_unlock(lock);
		scsi_sense_errno(c, ret, false, lba);
		return d;
	}
	if (memcmp(verify, medium, len)) {
		pthread_mutex_unlock(lock);
		sbc_sense_miscompare(c, sbc_first_diff(verify, medium, len));
		return d;
	}
	v.iov_base = data;
	v.iov_len = len;
	ret = lun_write(sbc_luns(c), &c->li, lba, n, &v, 1,
			sbc_io_flags(c, c->cdb[1] & SBC_FUA));
	pthread_mutex_unlock(lock);
	if (ret) {
		scsi_sense_errno(c, ret, true, lba);
		return d;
	}
	c->cmd->data_len = (uint32_t)(2 * len);
	return d;
}

/*
 * SYNCHRONIZE CACHE (10/16). The range is checked, then the whole LUN is
 * flushed (the store flushes per LUN). IMMED is honoured by finishing the
 * flush first: status after the work is never wrong, only later.
 */
enum scsi_disposition sbc_sync_cache(struct scsi_ctx *c)
{
	struct sbc_rw rw;
	int ret;

	sbc_decode(c->cdb, &rw);
	if (!sbc_range_ok(c, rw.lba, rw.nblocks))
		return SCSI_DONE;
	ret = lun_flush(sbc_luns(c), &c->li);
	if (ret)
		scsi_sense_errno(c, ret, true, rw.lba);
	return SCSI_DONE;
}

/* SBC-3 made PMI obsolete; a zero PMI still requires a zero LBA field. */
static bool sbc_pmi_ok(struct scsi_ctx *c, bool pmi, uint64_t lba)
{
	if (pmi || !lba)
		return true;
	scsi_sense_cdb(c, 2, -1);
	return false;
}

enum scsi_disposition sbc_read_capacity10(struct scsi_ctx *c)
{
	uint64_t last = c->li.nblocks - 1;
	uint8_t buf[8];

	if (!sbc_pmi_ok(c, c->cdb[8] & 1, get_be32(c->cdb + 2)))
		return SCSI_DONE;
	/* FFFFFFFFh: too big for this command, use READ CAPACITY (16) */
	put_be32(buf, last >= UINT32_MAX ? UINT32_MAX : (uint32_t)last);
	put_be32(buf + 4, c->li.block_size);
	scsi_copy_in(c, buf, sizeof(buf));
	return SCSI_DONE;
}

static enum scsi_disposition sbc_read_capacity16(struct scsi_ctx *c)
{
	const struct lun_group *g = c->li.group;
	uint32_t alloc = get_be32(c->cdb + 10);
	uint8_t buf[32] = {0};

	if (!sbc_pmi_ok(c, c->cdb[14] & 1, get_be64(c->cdb + 2)))
		return SCSI_DONE;
	put_be64(buf, c->li.nblocks - 1);
	put_be32(buf + 8, c->li.block_size);
	/* byte 12: P_TYPE 0, PROT_EN 0; byte 13: P_I_EXPONENT 0 */
	buf[13] = g->phys_exp & 0x0f;
	if (g->thin)
		buf[14] |= 0x80; /* LBPME */
	if (g->lbprz)
		buf[14] |= 0x40; /* LBPRZ */
	/* LOWEST ALIGNED LOGICAL BLOCK ADDRESS 0 */
	scsi_copy_in(c, buf, alloc < sizeof(buf) ? alloc : sizeof(buf));
	return SCSI_DONE;
}

/*
 * The provisioning state of @lba and how far it runs, at most @max blocks.
 * A LUN without logical block provisioning is mapped everywhere.
 * Return: 1 mapped, 0 deallocated, -errno.
 */
static int sbc_lba_state(struct scsi_ctx *c, uint64_t lba, uint64_t max,
			 uint64_t *run)
{
	int ret;

	if (!c->li.group->thin) {
		*run = max;
		return 1;
	}
	ret = lun_lba_status(sbc_luns(c), &c->li, lba, max, run);
	if (ret >= 0 && *run > max)
		*run = max;
	return ret;
}

/*
 * GET LBA STATUS (16): descriptors from the starting LBA, adjacent runs of
 * one state merged, each at most FFFFFFFFh blocks (the field's size), as
 * many as fit the allocation length (at least one, so the PARAMETER DATA
 * LENGTH of a short allocation is still true) and sbc_buf. Provisioning
 * status 0 mapped, 1 deallocated.
 */
static enum scsi_disposition sbc_get_lba_status(struct scsi_ctx *c)
{
	uint64_t lba = get_be64(c->cdb + 2), end = c->li.nblocks;
	uint32_t alloc = get_be32(c->cdb + 10);
	uint64_t len, run, pend_run = 0;
	unsigned int max, nd = 0;
	int state, ret, pend = -1;
	uint8_t *p;

	if (lba >= end) {
		scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return SCSI_DONE;
	}
	max = alloc < 24 ? 1 : (alloc - 8) / 16;
	if (max > SBC_GLS_MAX_DESC)
		max = SBC_GLS_MAX_DESC;
	memset(sbc_buf, 0, 8);
	while (nd < max && lba < end) {
		if (pend >= 0) {
			/* the run that ended the previous descriptor */
			state = pend;
			len = pend_run;
			pend = -1;
		} else {
			state = sbc_lba_state(
				c, lba,
				end - lba < UINT32_MAX ? end - lba : UINT32_MAX,
				&len);
			if (state < 0) {
				ret = state;
				goto out_sense;
			}
		}
		while (lba + len < end && len < UINT32_MAX) {
			uint64_t room = UINT32_MAX - len;

			if (room > end - lba - len)
				room = end - lba - len;
			ret = sbc_lba_state(c, lba + len, room, &run);
			if (ret < 0)
				goto out_sense;
			if (ret != state) {
				pend = ret;
				pend_run = run;
				break;
			}
			len += run;
		}
		p = sbc_buf + 8 + 16 * nd;
		memset(p, 0, 16);
		put_be64(p, lba);
		put_be32(p + 8, (uint32_t)len);
		p[12] = state ? 0x0 : 0x1;
		lba += len;
		nd++;
	}
	put_be32(sbc_buf, 4 + 16 * nd);
	scsi_copy_in(c, sbc_buf, alloc < 8 + 16 * nd ? alloc : 8 + 16 * nd);
	return SCSI_DONE;
out_sense:
	scsi_sense_errno(c, ret, false, lba);
	return SCSI_DONE;
}

/* SERVICE ACTION IN (16): READ CAPACITY (16) and GET LBA STATUS. */
enum scsi_disposition sbc_service_action_in16(struct scsi_ctx *c)
{
	switch (c->cdb[1] & 0x1f) {
	case SBC_SA_READ_CAPACITY_16:
		return sbc_read_capacity16(c);
	case SBC_SA_GET_LBA_STATUS:
		return sbc_get_lba_status(c);
	}
	scsi_sense_cdb(c, 1, 4);
	return SCSI_DONE;
}

/* ---- PRE-FETCH, READ DEFECT DATA, ORWRITE, WRITE ATOMIC ---------------- */

/*
 * PRE-FETCH (10/16). Every block is already in memory, or one store read
 * away, and there is no cache to load: the range is checked (and a fault
 * rule on it fires, as a medium error would on a real prefetch), then GOOD,
 * the status SBC-4 gives when nothing was moved into a cache. IMMED needs
 * nothing: the command is over at once either way.
 */
enum scsi_disposition sbc_prefetch(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	struct sbc_rw rw;

	sbc_decode(c->cdb, &rw);
	if (!sbc_range_ok(c, rw.lba, rw.nblocks))
		return SCSI_DONE;
	sbc_faults(c, rw.lba, rw.nblocks, FAULT_OP_READ, &d);
	return d;
}

/*
 * READ DEFECT DATA (10/12). A virtual medium has no defects: the primary
 * and grown lists asked for (REQ_PLIST, REQ_GLIST) are reported valid and
 * empty, in the format asked for, since an empty list is the same in every
 * format. Format 7 is reserved.
 */
#define SBC_RDD_PLIST 0x10
#define SBC_RDD_GLIST 0x08
#define SBC_RDD_FORMAT 0x07

enum scsi_disposition sbc_read_defect_data(struct scsi_ctx *c)
{
	bool d12 = c->cdb[0] == 0xb7;
	uint8_t req = d12 ? c->cdb[1] : c->cdb[2], hdr[8] = {0};
	size_t alloc = d12 ? get_be32(c->cdb + 6) : get_be16(c->cdb + 7);
	size_t n = d12 ? 8 : 4;

	if ((req & SBC_RDD_FORMAT) == 7) {
		scsi_sense_cdb(c, d12 ? 1 : 2, 2);
		return SCSI_DONE;
	}
	hdr[1] = req & (SBC_RDD_PLIST | SBC_RDD_GLIST | SBC_RDD_FORMAT);
	/* the lengths (and READ DEFECT DATA (12)'s generation) are all 0 */
	scsi_copy_in(c, hdr, n < alloc ? n : alloc);
	return SCSI_DONE;
}

/*
 * The COMPARE AND WRITE stripes of blocks [@lba, @lba + @n), locked (or
 * unlocked) in index order, so commands that take several never deadlock
 * with each other or with one COMPARE AND WRITE. ORWRITE and WRITE ATOMIC
 * are thereby atomic with respect to each other and to COMPARE AND WRITE;
 * a plain READ or WRITE of the same blocks does not take the locks (the
 * hot path stays lock-free), as SBC-4 allows for commands that are not
 * themselves atomic.
 */
static void sbc_lock_range(uint32_t lun, uint64_t lba, uint64_t n, bool lock)
{
	uint64_t set[SBC_CAW_LOCKS / 64] = {0};
	uint64_t i, k;

	for (i = 0; i < n && i < 4 * SBC_CAW_LOCKS; i++) {
		k = (uint64_t)(sbc_caw_lock(lun, lba + i) - sbc_caw_locks);
		set[k / 64] |= 1ull << (k % 64);
	}
	if (n > 4 * SBC_CAW_LOCKS)
		memset(set, 0xff, sizeof(set)); /* surely every stripe */
	for (k = 0; k < SBC_CAW_LOCKS; k++) {
		if (!(set[k / 64] & (1ull << (k % 64))))
			continue;
		if (lock)
			pthread_mutex_lock(&sbc_caw_locks[k]);
		else
			pthread_mutex_unlock(&sbc_caw_locks[k]);
	}
}

/*
 * ORWRITE (16): each block becomes itself OR the Data-Out block, read and
 * written under the stripe locks in 32 KiB pieces. ORPROTECT must be 0 (no
 * protection information); zero blocks is no error.
 */
enum scsi_disposition sbc_orwrite(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	uint32_t bs = c->li.block_size, per = SBC_HALF / bs, k;
	uint8_t *medium = sbc_buf, *data = sbc_buf + SBC_HALF;
	unsigned int flags;
	struct sbc_rw rw;
	struct iovec v;
	uint64_t lba, left;
	size_t off = 0, j;
	int ret = 0;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	sbc_decode(c->cdb, &rw);
	if (!sbc_xfer_ok(c, &rw) || !sbc_range_ok(c, rw.lba, rw.nblocks))
		return SCSI_DONE;
	if (!rw.nblocks)
		return SCSI_DONE;
	if (sbc_out_room(c) < rw.nblocks * bs) {
		sbc_sense_short(c);
		return SCSI_DONE;
	}
	if (sbc_faults(c, rw.lba, rw.nblocks, FAULT_OP_READ, &d) ||
	    sbc_faults(c, rw.lba, rw.nblocks, FAULT_OP_WRITE, &d))
		return d;
	flags = sbc_io_flags(c, c->cdb[1] & SBC_FUA);
	sbc_lock_range(c->li.lun, rw.lba, rw.nblocks, true);
	for (lba = rw.lba, left = rw.nblocks; left; lba += k, left -= k) {
		k = left < per ? (uint32_t)left : per;
		v.iov_base = medium;
		v.iov_len = (size_t)k * bs;
		if (scsi_copy_out(c, data, v.iov_len, off) != v.iov_len) {
			ret = -EPROTO;
			break;
		}
		ret = sbc_read_buf(c, lba, k, medium);
		if (ret)
			break;
		for (j = 0; j < v.iov_len; j++)
			medium[j] |= data[j];
		ret = lun_write(sbc_luns(c), &c->li, lba, k, &v, 1, flags);
		if (ret)
			break;
		off += v.iov_len;
	}
	sbc_lock_range(c->li.lun, rw.lba, rw.nblocks, false);
	if (ret == -EPROTO)
		sbc_sense_short(c);
	else if (ret)
		scsi_sense_errno(c, ret, true, lba);
	else
		c->cmd->data_len = (uint32_t)off;
	return d;
}

/*
 * WRITE ATOMIC (16): all of the blocks or none, and no other atomic command
 * (COMPARE AND WRITE, ORWRITE, WRITE ATOMIC) sees a part. The Block Limits
 * page says MAXIMUM ATOMIC TRANSFER LENGTH scsi_atomic_max_blocks(), no
 * alignment or granularity, no atomic boundary: ATOMIC BOUNDARY must be 0. The
 * data is gathered whole before the first block is written, so a short
 * Data-Out leaves the medium as it was.
 */
enum scsi_disposition sbc_write_atomic(struct scsi_ctx *c)
{
	enum scsi_disposition d = SCSI_DONE;
	uint64_t lba = get_be64(c->cdb + 2);
	uint32_t n = get_be16(c->cdb + 12), bs = c->li.block_size;
	size_t len = (size_t)n * bs;
	struct iovec v = {.iov_base = sbc_buf, .iov_len = len};
	int ret;

	if (!sbc_protect_ok(c))
		return SCSI_DONE;
	if (get_be16(c->cdb + 10)) {
		scsi_sense_cdb(c, 10, -1);
		return SCSI_DONE;
	}
	if (!sbc_range_ok(c, lba, n) || !n)
		return SCSI_DONE;
	if (n > scsi_atomic_max_blocks(bs, c->li.group->max_xfer_blocks)) {
		scsi_sense_cdb(c, 12, -1);
		return SCSI_DONE;
	}
	if (sbc_out_room(c) < len) {
		sbc_sense_short(c);
		return SCSI_DONE;
	}
	if (sbc_faults(c, lba, n, FAULT_OP_WRITE, &d))
		return d;
	/* past the bounce buffer: a buffer of its own, at most 4 MiB */
	if (len > SBC_BUF_SIZE) {
		v.iov_base = malloc(len);
		if (!v.iov_base) {
			scsi_sense_errno(c, -ENOMEM, true, lba);
			return d;
		}
	}
	if (scsi_copy_out(c, v.iov_base, len, 0) != len) {
		sbc_sense_short(c);
		goto out_free;
	}
	sbc_lock_range(c->li.lun, lba, n, true);
	ret = lun_write(sbc_luns(c), &c->li, lba, n, &v, 1,
			sbc_io_flags(c, c->cdb[1] & SBC_FUA));
	sbc_lock_range(c->li.lun, lba, n, false);
	if (ret)
		scsi_sense_errno(c, ret, true, lba);
	else
		c->cmd->data_len = (uint32_t)len;
out_free:
	if (v.iov_base != sbc_buf)
		free(v.iov_base);
	return d;
}

/* ---- SANITIZE ---------------------------------------------------------- */

#define SA_SANITIZE_OVERWRITE 0x01
#define SA_SANITIZE_BLOCK_ERASE 0x02
#define SA_SANITIZE_CRYPTO_ERASE 0x03
#define SA_SANITIZE_EXIT_FAILURE 0x1f

/*
 * OVERWRITE's parameter list: OVERWRITE COUNT and INVERT (which only
 * matter to a medium that remembers earlier passes: the block holds the
 * last pass's data, which is what is written, once), the INITIALIZATION
 * PATTERN LENGTH, 1..block size, and the pattern, repeated across each
 * block. Leaves the block in sbc_buf. Return: false with the sense set.
 */
static bool sbc_overwrite_block(struct scsi_ctx *c, uint16_t plen)
{
	uint32_t bs = c->li.block_size, have, l;
	uint8_t hdr[4];
	uint16_t ip;

	/* more than the header, at most the header and one block */
	if (plen <= 4 || plen > bs + 4) {
		scsi_sense_cdb(c, 7, -1);
		return false;
	}
	if (scsi_copy_out(c, hdr, 4, 0) != 4) {
		sbc_sense_short(c);
		return false;
	}
	if (hdr[1]) {
		scsi_sense_param(c, 1, -1);
		return false;
	}
	if (!(hdr[0] & 0x1f)) {
		scsi_sense_param(c, 0, 4);
		return false;
	}
	ip = get_be16(hdr + 2);
	if (!ip || ip > bs || ip != plen - 4) {
		scsi_sense_param(c, 2, -1);
		return false;
	}
	if (scsi_copy_out(c, sbc_buf, ip, 4) != ip) {
		sbc_sense_short(c);
		return false;
	}
	if ((hdr[0] & 0x80) && !((hdr[0] & 0x1f) & 1)) {
		/* INVERT with an even count: the last pass is the inverse */
		for (l = 0; l < ip; l++)
			sbc_buf[l] = (uint8_t)~sbc_buf[l];
	}
	for (have = ip; have < bs; have += l) {
		l = bs - have < have ? bs - have : have;
		memcpy(sbc_buf + have, sbc_buf, l);
	}
	return true;
}

static bool sbc_is_zero(const uint8_t *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/*
 * SANITIZE (SBC-4 5.30). The erase is done before status, synchronously
 * (OVERWRITE with a pattern that is not zero stores it in every block: the
 * whole LUN's size in the store, written 64 KiB at a time on this thread;
 * zeroes, BLOCK ERASE and CRYPTO ERASE deallocate or zero, which is cheap
 * on a sparse store). Then the LUN reports SANITIZE IN PROGRESS to every
 * command but INQUIRY, REPORT LUNS, REQUEST SENSE and the REPORT SUPPORTED
 * ones for the group's sanitize_time, as a real drive does for minutes to
 * hours: IMMED returns at once, otherwise status comes at the end. BLOCK
 * ERASE deallocates, so it needs provisioning; CRYPTO ERASE deallocates
 * too and is offered with it only: libiscsi's CryptoErase test reads
 * WABEREQ where it means WACEREQ, and SBC-4 wants WABEREQ 00b without
 * BLOCK ERASE, so a thick LUN with CRYPTO ERASE fails one test or the
 * other. Reads work after either (WABEREQ, WACEREQ 01b): zeroes.
 * A sanitize cannot fail on its own, so the LUN is never in the failure
 * mode and EXIT FAILURE MODE has nothing to do.
 */
enum scsi_disposition sbc_sanitize(struct scsi_ctx *c)
{
	const struct lun_group *g = c->li.group;
	uint8_t sa = c->cdb[1] & 0x1f;
	bool immed = c->cdb[1] & 0x80;
	uint16_t plen = get_be16(c->cdb + 7);
	uint64_t n = c->li.nblocks;
	int ret = 0;

	if (sa != SA_SANITIZE_OVERWRITE && plen) {
		scsi_sense_cdb(c, 7, -1);
		return SCSI_DONE;
	}
	switch (sa) {
	case SA_SANITIZE_OVERWRITE:
		if (!sbc_overwrite_block(c, plen))
			return SCSI_DONE;
		if (sbc_is_zero(sbc_buf, c->li.block_size))
			ret = lun_write_zeroes(sbc_luns(c), &c->li, 0, n,
					       LUN_IO_FUA);
		else if (!sbc_write_pattern(c, 0, n, LUN_IO_FUA))
			return SCSI_DONE;
		break;
	case SA_SANITIZE_BLOCK_ERASE:
		if (!g->thin) {
			scsi_sense_cdb(c, 1, 4);
			return SCSI_DONE;
		}
		ret = lun_unmap(sbc_luns(c), &c->li, 0, n);
		break;
	case SA_SANITIZE_CRYPTO_ERASE:
		if (!g->thin) {
			scsi_sense_cdb(c, 1, 4);
			return SCSI_DONE;
		}
		ret = lun_write_zeroes(sbc_luns(c), &c->li, 0, n,
				       LUN_IO_FUA | LUN_IO_UNMAP);
		break;
	case SA_SANITIZE_EXIT_FAILURE:
		return SCSI_DONE;
	default:
		scsi_sense_cdb(c, 1, 4);
		return SCSI_DONE;
	}
	if (ret) {
		scsi_sense_errno(c, ret, true, 0);
		return SCSI_DONE;
	}
	ret = lun_sanitize_start(sbc_luns(c), &c->li, g->sanitize_ms);
	if (ret) {
		scsi_sense_errno(c, ret, true, 0);
		return SCSI_DONE;
	}
	if (!immed)
		c->cmd->delay_ns = (uint64_t)g->sanitize_ms * 1000000ull;
	return SCSI_DONE;
}
