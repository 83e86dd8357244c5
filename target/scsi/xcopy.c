// SPDX-License-Identifier: MIT
/*
 * Third-party copy, the LID1 commands of SPC-4: EXTENDED COPY (83h/00h)
 * copies blocks between any two LUNs of the target's table (or within one)
 * named by their VPD 83h NAA designators, synchronously through lun.c in
 * 64 KiB pieces; RECEIVE COPY RESULTS (84h) reports a copy's status, its
 * failed segment's sense data, and the limits below.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "scsi_i.h"

/*
 * The copy manager's limits, reported by OPERATING PARAMETERS. A list of
 * one CSCD descriptor too many (with one segment), or of one segment
 * descriptor too many (with one CSCD), still fits XC_MAX_LIST, so it is
 * refused for its count (TOO MANY ... DESCRIPTORS), not its length. A
 * segment moves at most XC_MAX_SEG_BYTES, so one command moves at most
 * 32 x 16 MiB = 512 MiB and holds its front end thread for that long
 * (about a second on the mem store).
 */
#define XC_MAX_CSCD 16u
#define XC_MAX_SEGS 32u
#define XC_MAX_LIST 1024u /* CSCD + segment descriptor bytes */
#define XC_MAX_SEG_BYTES (16u << 20)
#define XC_DATA_GRAN_LOG2 9u /* every segment is whole 512-byte units */

#define XC_HDR_LEN 16u
#define XC_CSCD_LEN 32u
#define XC_B2B_LEN 28u
#define XC_PARAM_MAX (XC_HDR_LEN + XC_MAX_LIST)

_Static_assert((XC_MAX_CSCD + 1) * XC_CSCD_LEN + XC_B2B_LEN <= XC_MAX_LIST &&
		       XC_CSCD_LEN + (XC_MAX_SEGS + 1) * XC_B2B_LEN <=
			       XC_MAX_LIST,
	       "one descriptor too many is refused for the count");
_Static_assert(XC_MAX_CSCD *XC_CSCD_LEN + XC_MAX_SEGS * XC_B2B_LEN >=
		       XC_MAX_LIST,
	       "the largest counts can fill the list");

/* Descriptor type codes (SPC-4 tables 120 and 125). */
#define XC_SEG_B2B 0x02 /* block device to block device */
#define XC_CSCD_ID 0xe4 /* identification descriptor CSCD */
#define XC_CSCD_SELF 0xffffu /* CSCD ID: the LU that got the command */

/* LIST ID USAGE (parameter list byte 1 bits 4-3). */
#define XC_USAGE_HOLD 0u /* held, results kept after completion */
#define XC_USAGE_RESERVED 1u
#define XC_USAGE_DISCARD 2u /* held while it runs, then discarded */
#define XC_USAGE_NONE 3u /* not held; LIST IDENTIFIER must be 0 */

/* RECEIVE COPY RESULTS service actions. */
#define XC_SA_COPY_STATUS 0x00
#define XC_SA_RECEIVE_DATA 0x01
#define XC_SA_OP_PARAMS 0x03
#define XC_SA_FAILED_SEGMENT 0x04

/* COPY STATUS: COPY MANAGER STATUS and TRANSFER COUNT UNITS. */
#define XC_CS_IN_PROGRESS 0x00
#define XC_CS_DONE 0x01
#define XC_CS_DONE_ERRORS 0x02
#define XC_TC_BYTES 0x00
#define XC_TC_KIB 0x01
#define XC_TC_MIB 0x02

#define SK_COPY_ABORTED 0x0a

/* Sense data descriptors (SPC-4 4.5.2). */
#define XC_DESC_CSI 0x01 /* command-specific information */
#define XC_DESC_SKS 0x02 /* sense key specific */
#define XC_DESC_FWD 0x0c /* forwarded sense data */
#define XC_FWD_SOURCE 0x1 /* SENSE DATA SOURCE: the source CSCD */
#define XC_FWD_DEST 0x2 /* ... the destination CSCD */
#define XC_FWD_MAX 32u /* forwarded sense bytes kept */
#define XC_SENSE_MAX 64u /* 8 + 12 + 8 + 4 + XC_FWD_MAX */

_Static_assert(XC_SENSE_MAX <= SCSI_SENSE_MAX, "copy sense fits a command");

/*
 * The bounce buffer a copy moves through, one per thread: a command runs
 * on one thread from start to end. Cost: 64 KiB of static TLS in every
 * thread, virtual until the thread's first EXTENDED COPY (glibc carves
 * static TLS out of the stack mapping, so threads need stacks well past
 * 128 KiB with sbc.c's buffer).
 */
#define XC_CHUNK 65536u
static __thread uint8_t xc_buf[XC_CHUNK] __attribute__((aligned(64)));

_Static_assert(XC_CHUNK % 4096 == 0, "a piece is whole blocks of any size");

/*
 * What COPY STATUS and FAILED SEGMENT DETAILS report: the last copy of
 * each (target, I_T nexus, LUN, LIST IDENTIFIER), held for LIST ID USAGE
 * 00b after it ends, and while it runs for 00b and 10b (a second copy with
 * the list identifier of a running one fails). XC_RECORDS records for the
 * whole process: 64 x 112 bytes = 7 KiB of static memory, nothing
 * allocated. A new copy takes its key's record, else a free one, else the
 * one that ended longest ago, so records of a gone I_T nexus age out
 * instead of needing a hook; a running record is never taken, so at most
 * XC_RECORDS copies run at once (TOTAL CONCURRENT COPIES). The LUN's
 * generation is in the key: a LUN number re-added is a new LU without
 * copy results. Every look-up is an O(XC_RECORDS) scan under one mutex;
 * only EXTENDED COPY and RECEIVE COPY RESULTS take it, once per command
 * and once per 64 KiB piece (the progress COPY STATUS reports).
 */
#define XC_RECORDS 64u

enum xc_state {
	XC_FREE = 0,
	XC_RUNNING,
	XC_DONE,
	XC_FAILED,
};

struct xc_record {
	const struct scsi_target *tgt;
	uint32_t nexus;
	uint32_t lun; /* table LUN */
	uint32_t gen;
	uint8_t list_id;
	uint8_t state; /* enum xc_state */
	bool hold; /* kept after the copy ends */
	uint8_t sense_len;
	uint16_t segments; /* segments completed */
	uint64_t seq; /* when it ended: the oldest goes first */
	uint64_t bytes; /* written to the destinations */
	uint8_t sense[XC_SENSE_MAX]; /* XC_FAILED: the command's sense */
};

static struct xc_record xc_records[XC_RECORDS];
static pthread_mutex_t xc_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t xc_seq; /* under xc_lock */

static bool xc_key_is(const struct xc_record *r, const struct scsi_ctx *c,
		      uint8_t list_id)
{
	return r->state != XC_FREE && r->tgt == c->cmd->tgt &&
	       r->nexus == c->cmd->nexus && r->lun == c->table_lun &&
	       r->gen == c->li.gen && r->list_id == list_id;
}

/* The record of @list_id for @c's nexus and LUN, or NULL. xc_lock held. */
static struct xc_record *xc_find(const struct scsi_ctx *c, uint8_t list_id)
{
	unsigned int i;

	for (i = 0; i < XC_RECORDS; i++)
		if (xc_key_is(&xc_records[i], c, list_id))
			return &xc_records[i];
	return NULL;
}

/*
 * A record for a new copy, marked running. Return: 0 with *@out set;
 * -EBUSY when a copy of that list identifier runs; -ENOSPC when every
 * record holds a running copy.
 */
static int xc_claim(const struct scsi_ctx *c, uint8_t list_id, bool hold,
		    struct xc_record **out)
{
	struct xc_record *r, *victim = NULL;
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&xc_lock);
	r = xc_find(c, list_id);
	if (r && r->state == XC_RUNNING) {
		ret = -EBUSY;
		goto out_unlock;
	}
	for (i = 0; !r && i < XC_RECORDS; i++) {
		struct xc_record *e = &xc_records[i];

		if (e->state == XC_FREE) {
			r = e;
		} else if (e->state != XC_RUNNING &&
			   (!victim || e->seq < victim->seq)) {
			victim = e;
		}
	}
	if (!r)
		r = victim;
	if (!r) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	memset(r, 0, sizeof(*r));
	r->tgt = c->cmd->tgt;
	r->nexus = c->cmd->nexus;
	r->lun = c->table_lun;
	r->gen = c->li.gen;
	r->list_id = list_id;
	r->hold = hold;
	r->state = XC_RUNNING;
	*out = r;
out_unlock:
	pthread_mutex_unlock(&xc_lock);
	return ret;
}

static void xc_progress(struct xc_record *r, uint64_t bytes, bool segment)
{
	if (!r)
		return;
	pthread_mutex_lock(&xc_lock);
	r->bytes += bytes;
	if (segment)
		r->segments++;
	pthread_mutex_unlock(&xc_lock);
}

/* The copy ended: keep its outcome (and sense) or drop the record. */
static void xc_finish(struct xc_record *r, const struct scsi_cmd *cmd)
{
	if (!r)
		return;
	pthread_mutex_lock(&xc_lock);
	if (!r->hold) {
		r->state = XC_FREE;
	} else if (cmd->status == SCSI_GOOD) {
		r->state = XC_DONE;
	} else {
		r->state = XC_FAILED;
		r->sense_len = cmd->sense_len < XC_SENSE_MAX ? cmd->sense_len
							     : XC_SENSE_MAX;
		memcpy(r->sense, cmd->sense, r->sense_len);
	}
	r->seq = ++xc_seq;
	pthread_mutex_unlock(&xc_lock);
}

/* ---- sense data --------------------------------------------------------- */

/* What a copy target said about the access that failed. */
struct xc_fwd {
	uint8_t source; /* XC_FWD_SOURCE, XC_FWD_DEST; 0: none */
	uint8_t status;
	uint8_t len;
	uint8_t sense[XC_FWD_MAX];
};

/*
 * COPY ABORTED for segment @seg: COMMAND-SPECIFIC INFORMATION holds the
 * segment number, the sense-key-specific segment pointer (SD 0) the byte
 * @field of the parameter list at fault (< 0: none). Descriptor format
 * also forwards the copy target's status and sense (@fwd, may be NULL),
 * which fixed format has no room for.
 */
static void xc_abort(struct scsi_ctx *c, uint8_t asc, uint8_t ascq,
		     unsigned int seg, int field, const struct xc_fwd *fwd)
{
	struct scsi_cmd *cmd = c->cmd;
	uint8_t *s = cmd->sense;
	uint8_t sks[3] = {0};
	size_t n;

	if (field >= 0) {
		sks[0] = 0x80; /* SKSV; SD 0, BPV 0 */
		put_be16(sks + 1, (uint16_t)field);
	}
	cmd->status = SCSI_CHECK_CONDITION;
	if (!(c->li.mode & LUN_MODE_D_SENSE)) {
		memset(s, 0, 18);
		s[0] = 0x70;
		s[2] = SK_COPY_ABORTED;
		s[7] = 10;
		put_be32(s + 8, seg);
		s[12] = asc;
		s[13] = ascq;
		memcpy(s + 15, sks, 3);
		cmd->sense_len = 18;
		return;
	}
	memset(s, 0, 8 + 12 + 8);
	s[0] = 0x72;
	s[1] = SK_COPY_ABORTED;
	s[2] = asc;
	s[3] = ascq;
	n = 8;
	s[n] = XC_DESC_CSI;
	s[n + 1] = 10;
	put_be64(s + n + 4, seg);
	n += 12;
	if (field >= 0) {
		s[n] = XC_DESC_SKS;
		s[n + 1] = 6;
		memcpy(s + n + 4, sks, 3);
		n += 8;
	}
	if (fwd && fwd->source) {
		s[n] = XC_DESC_FWD;
		s[n + 1] = (uint8_t)(2 + fwd->len);
		s[n + 2] = fwd->source;
		s[n + 3] = fwd->status;
		memcpy(s + n + 4, fwd->sense, fwd->len);
		n += 4 + fwd->len;
	}
	s[7] = (uint8_t)(n - 8);
	cmd->sense_len = (uint8_t)n;
}

static void xc_param_len_error(struct scsi_ctx *c)
{
	scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

static int8_t xc_top_bit(uint8_t v)
{
	return (int8_t)(31 - __builtin_clz(v));
}

/* ---- copy targets ----------------------------------------------------- */

/* One end of a segment: a pinned LUN and what names it in the list. */
struct xc_end {
	struct lun_info li;
	bool pinned;
	int cscd; /* list offset of its CSCD descriptor, or
				      * -1 for CSCD ID FFFFh */
	uint8_t fwd_source; /* XC_FWD_SOURCE or XC_FWD_DEST */
};

/*
 * A scratch context for a copy target, for the helpers that take one:
 * reservation checks and the errno-to-sense mapping, whose sense lands in
 * @tmp rather than in the EXTENDED COPY's own.
 */
static void xc_target_ctx(const struct scsi_ctx *c, const struct xc_end *e,
			  struct scsi_cmd *tmp, struct scsi_ctx *t)
{
	memset(tmp, 0, sizeof(*tmp));
	tmp->tgt = c->cmd->tgt;
	tmp->nexus = c->cmd->nexus;
	tmp->initiator_name = c->cmd->initiator_name;
	memset(t, 0, sizeof(*t));
	t->cmd = tmp;
	t->cdb = c->cdb;
	t->li = e->li;
	t->have_lun = true;
	t->table_lun = e->li.lun;
	t->pr = scsi_pr_active(c->cmd->tgt);
}

static void xc_fwd_take(const struct scsi_cmd *tmp, uint8_t source,
			struct xc_fwd *f)
{
	f->source = source;
	f->status = tmp->status;
	f->len = tmp->sense_len < XC_FWD_MAX ? tmp->sense_len : XC_FWD_MAX;
	memcpy(f->sense, tmp->sense, f->len);
}

/* The forwarded outcome of -errno @err from lun.c on copy target @e. */
static void xc_fwd_errno(const struct scsi_ctx *c, const struct xc_end *e,
			 int err, bool write, uint64_t lba, struct xc_fwd *f)
{
	struct scsi_cmd tmp;
	struct scsi_ctx t;

	xc_target_ctx(c, e, &tmp, &t);
	scsi_sense_errno(&t, err, write, lba);
	xc_fwd_take(&tmp, e->fwd_source, f);
}

/*
 * The table LUN an identification descriptor CSCD at @d names: its
 * designator must be the NAA 6 one VPD 83h reports for a LUN (binary,
 * associated with the LU, 16 bytes). O(1): the WWN's low 20 bits are the
 * LUN number (lun_wwn()), and the whole WWN must then match. Return: the
 * LUN number, -ENODEV.
 */
static int xc_cscd_lun(struct lun_table *t, const uint8_t *d)
{
	uint64_t hi, lo, whi, wlo;
	uint32_t lun;

	if ((d[4] & 0x0f) != 0x1 || (d[5] & 0x30) != 0x00 ||
	    (d[5] & 0x0f) != 0x3 || d[7] != 16 || (d[8] >> 4) != 0x6)
		return -ENODEV;
	hi = get_be64(d + 8);
	lo = get_be64(d + 16);
	lun = (uint32_t)(lo & 0xfffff);
	if (lun >= lun_max(t))
		return -ENODEV;
	lun_wwn(t, lun, &whi, &wlo);
	if (whi != hi || wlo != lo)
		return -ENODEV;
	return (int)lun;
}

/* Reservations as SBC-4 has them for a READ (source) or WRITE. */
static const struct scsi_op xc_read_op = {.resv = SCSI_RESV_WE};
static const struct scsi_op xc_write_op = {.resv = 0};

/*
 * Resolve, pin and check one end of segment @seg. Return: true, or false
 * with COPY ABORTED set: COPY TARGET DEVICE NOT REACHABLE for an ID past
 * the list, a designator that names no LUN of the table or an absent LUN;
 * INCORRECT COPY TARGET DEVICE TYPE for a non-block CSCD; INVALID FIELD IN
 * PARAMETER LIST for a DISK BLOCK LENGTH that is not the LUN's; NO
 * ADDITIONAL SENSE with the copy target's forwarded outcome for a LUN that
 * is not ready or reserved by another I_T nexus.
 */
static bool xc_end_get(struct scsi_ctx *c, const uint8_t *p, uint16_t ncscd,
		       unsigned int seg, uint16_t id_field, bool write,
		       struct xc_end *e)
{
	struct lun_table *t = c->cmd->tgt->luns;
	uint16_t id = get_be16(p + id_field);
	struct scsi_cmd tmp;
	struct scsi_ctx tc;
	struct xc_fwd f;
	const uint8_t *d;
	uint8_t asc, ascq;
	int lun;

	memset(e, 0, sizeof(*e));
	e->fwd_source = write ? XC_FWD_DEST : XC_FWD_SOURCE;
	e->cscd = -1;
	if (id == XC_CSCD_SELF) {
		lun = (int)c->table_lun;
	} else if (id >= ncscd) {
		xc_abort(c, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE, seg, id_field,
			 NULL);
		return false;
	} else {
		e->cscd = (int)(XC_HDR_LEN + id * XC_CSCD_LEN);
		d = p + e->cscd;
		if ((d[1] & 0x1f) != 0x00) {
			xc_abort(c, ASC_INCORRECT_COPY_TARGET_DEVICE_TYPE, seg,
				 e->cscd + 1, NULL);
			return false;
		}
		lun = xc_cscd_lun(t, d);
	}
	if (lun < 0 || lun_get(t, (uint32_t)lun, &e->li)) {
		xc_abort(c, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE, seg, id_field,
			 NULL);
		return false;
	}
	e->pinned = true;
	if (e->cscd >= 0 && get_be24(p + e->cscd + 29) &&
	    get_be24(p + e->cscd + 29) != e->li.block_size) {
		xc_abort(c, ASC_INVALID_FIELD_IN_PARAMETER_LIST, seg,
			 e->cscd + 29, NULL);
		return false;
	}
	xc_target_ctx(c, e, &tmp, &tc);
	if (scsi_state_sense(e->li.state, &asc, &ascq)) {
		scsi_sense(&tc, SK_NOT_READY, asc, ascq);
		xc_fwd_take(&tmp, e->fwd_source, &f);
		xc_abort(c, ASC_NO_ADDITIONAL_SENSE, seg, id_field, &f);
		return false;
	}
	tc.op = write ? &xc_write_op : &xc_read_op;
	if (scsi_pr_conflict(&tc)) {
		memset(&f, 0, sizeof(f));
		f.source = e->fwd_source;
		f.status = SCSI_RESERVATION_CONFLICT;
		xc_abort(c, ASC_NO_ADDITIONAL_SENSE, seg, id_field, &f);
		return false;
	}
	return true;
}

static void xc_end_put(struct scsi_ctx *c, struct xc_end *e)
{
	if (e->pinned)
		lun_put(c->cmd->tgt->luns, &e->li);
	e->pinned = false;
}

/* ---- EXTENDED COPY ------------------------------------------------------ */

/*
 * How much of the next @n bytes at source block @lba to move as one piece:
 * a piece stays in one provisioning state of the source, so a deallocated
 * run becomes a write of zeroes (@zero) that a thin destination may
 * deallocate in turn; copying a sparse disk costs no memory for its holes.
 * A run shorter than a block of the larger size is copied as data. One
 * lun_lba_status() a piece.
 */
static size_t xc_piece(struct scsi_ctx *c, const struct xc_end *src,
		       const struct xc_end *dst, uint64_t lba, size_t n,
		       bool *zero)
{
	uint32_t sbs = src->li.block_size, dbs = dst->li.block_size;
	uint64_t unit = sbs > dbs ? sbs : dbs, run, m;
	int st;

	*zero = false;
	st = lun_lba_status(c->cmd->tgt->luns, &src->li, lba, n / sbs, &run);
	if (st < 0)
		return n;
	m = run * sbs;
	m -= m % unit;
	if (!m)
		return n;
	if (m < n)
		n = (size_t)m;
	*zero = st == 0;
	return n;
}

/*
 * Move @bytes from @src at @slba to @dst at @dlba in pieces of at most
 * XC_CHUNK (xc_piece()). Within one LUN, a destination that overlaps the
 * source from above is copied back to front in whole pieces, so every
 * block is read before it is overwritten. Writes honour the destination's
 * write cache (FUA when WCE is off). Return: true, or false with COPY
 * ABORTED, THIRD PARTY DEVICE FAILURE and the failing side's forwarded
 * sense.
 */
static bool xc_move(struct scsi_ctx *c, const struct xc_end *src,
		    const struct xc_end *dst, uint64_t slba, uint64_t dlba,
		    uint64_t bytes, unsigned int seg, uint16_t off,
		    struct xc_record *r)
{
	struct lun_table *t = c->cmd->tgt->luns;
	uint32_t sbs = src->li.block_size, dbs = dst->li.block_size;
	unsigned int flags = dst->li.mode & LUN_MODE_WCE ? 0 : LUN_IO_FUA;
	bool back = src->li.lun == dst->li.lun && dlba * dbs > slba * sbs &&
		    dlba * dbs < slba * sbs + bytes;
	unsigned int zflags = flags;
	struct iovec v = {.iov_base = xc_buf};
	uint64_t done, at;
	struct xc_fwd f;
	bool zero = false;
	size_t n;
	int ret;

	if (dst->li.group->thin && dst->li.group->lbprz)
		zflags |= LUN_IO_UNMAP;
	for (done = 0; done < bytes; done += n) {
		n = bytes - done < XC_CHUNK ? (size_t)(bytes - done) : XC_CHUNK;
		at = back ? bytes - done - n : done;
		if (!back)
			n = xc_piece(c, src, dst, slba + at / sbs, n, &zero);
		if (zero) {
			ret = lun_write_zeroes(t, &dst->li, dlba + at / dbs,
					       n / dbs, zflags);
			if (ret) {
				xc_fwd_errno(c, dst, ret, true, dlba + at / dbs,
					     &f);
				xc_abort(c, ASC_THIRD_PARTY_DEVICE_FAILURE, seg,
					 off + 20, &f);
				return false;
			}
			xc_progress(r, n, false);
			continue;
		}
		v.iov_len = n;
		ret = lun_read(t, &src->li, slba + at / sbs,
			       (uint32_t)(n / sbs), &v, 1);
		if (ret) {
			xc_fwd_errno(c, src, ret, false, slba + at / sbs, &f);
			xc_abort(c, ASC_THIRD_PARTY_DEVICE_FAILURE, seg,
				 off + 12, &f);
			return false;
		}
		ret = lun_write(t, &dst->li, dlba + at / dbs,
				(uint32_t)(n / dbs), &v, 1, flags);
		if (ret) {
			xc_fwd_errno(c, dst, ret, true, dlba + at / dbs, &f);
			xc_abort(c, ASC_THIRD_PARTY_DEVICE_FAILURE, seg,
				 off + 20, &f);
			return false;
		}
		xc_progress(r, n, false);
	}
	return true;
}

/* Whether [@lba, @lba + @n) lies on @e's LUN; else COPY ABORTED. */
static bool xc_range_ok(struct scsi_ctx *c, const struct xc_end *e,
			uint64_t lba, uint64_t n, unsigned int seg,
			uint16_t field)
{
	struct xc_fwd f;

	if (lba <= e->li.nblocks && n <= e->li.nblocks - lba)
		return true;
	xc_fwd_errno(c, e, -ERANGE, e->fwd_source == XC_FWD_DEST, lba, &f);
	xc_abort(c, ASC_NO_ADDITIONAL_SENSE, seg, field, &f);
	return false;
}

/*
 * One block device to block device segment at list offset @off: both
 * ends resolved and checked, the byte count (NUMBER OF BLOCKS of the
 * source, or of the destination with DC) whole blocks on both sides and
 * at most XC_MAX_SEG_BYTES, both ranges on their LUNs; then the copy.
 */
static bool xc_segment(struct scsi_ctx *c, const uint8_t *p, uint16_t ncscd,
		       unsigned int seg, uint16_t off, struct xc_record *r)
{
	const uint8_t *d = p + off;
	uint64_t slba = get_be64(d + 12), dlba = get_be64(d + 20), bytes;
	uint32_t nblocks = get_be16(d + 10);
	struct xc_end src = {.pinned = false}, dst = {.pinned = false};
	bool ok = false;

	if (!xc_end_get(c, p, ncscd, seg, (uint16_t)(off + 4), false, &src))
		goto out_put;
	if (!xc_end_get(c, p, ncscd, seg, (uint16_t)(off + 6), true, &dst))
		goto out_put;
	bytes = (uint64_t)nblocks *
		(d[1] & 0x02 ? dst.li.block_size : src.li.block_size);
	if (bytes > XC_MAX_SEG_BYTES) {
		xc_abort(c, ASC_INVALID_FIELD_IN_PARAMETER_LIST, seg, off + 10,
			 NULL);
		goto out_put;
	}
	if (bytes % src.li.block_size || bytes % dst.li.block_size) {
		xc_abort(c, ASC_UNEXPECTED_INEXACT_SEGMENT, seg, off + 10,
			 NULL);
		goto out_put;
	}
	if (!xc_range_ok(c, &src, slba, bytes / src.li.block_size, seg,
			 (uint16_t)(off + 12)) ||
	    !xc_range_ok(c, &dst, dlba, bytes / dst.li.block_size, seg,
			 (uint16_t)(off + 20)))
		goto out_put;
	ok = xc_move(c, &src, &dst, slba, dlba, bytes, seg, off, r);
out_put:
	xc_end_put(c, &dst);
	xc_end_put(c, &src);
	return ok;
}

/*
 * The parameter list as a whole, before anything is copied: the header
 * (LIST ID USAGE 01b reserved; 11b needs LIST IDENTIFIER 0; reserved
 * bits; no inline data, since no segment type here takes any), the
 * lengths (the descriptors at most XC_MAX_LIST bytes and within the
 * PARAMETER LIST LENGTH: PARAMETER LIST LENGTH ERROR), each CSCD
 * descriptor (a type code other than E4h: UNSUPPORTED TARGET DESCRIPTOR
 * TYPE CODE; more than XC_MAX_CSCD: TOO MANY TARGET DESCRIPTORS) and
 * each segment descriptor (a type code other than 02h: UNSUPPORTED
 * SEGMENT DESCRIPTOR TYPE CODE; more than XC_MAX_SEGS: TOO MANY SEGMENT
 * DESCRIPTORS; DESCRIPTOR LENGTH other than 18h and reserved fields:
 * INVALID FIELD IN PARAMETER LIST). Return: true with the counts.
 */
static bool xc_parse(struct scsi_ctx *c, const uint8_t *p, uint32_t pll,
		     uint16_t *ncscd, uint16_t *nseg)
{
	uint32_t tdll = get_be16(p + 2), sdll = get_be32(p + 8), off, end;
	unsigned int usage = (p[1] >> 3) & 3u, i;

	if (p[1] & 0xc0) {
		scsi_sense_param(c, 1, xc_top_bit(p[1] & 0xc0));
		return false;
	}
	if (usage == XC_USAGE_RESERVED) {
		scsi_sense_param(c, 1, 4);
		return false;
	}
	if (usage == XC_USAGE_NONE && p[0]) {
		scsi_sense_param(c, 0, 7);
		return false;
	}
	for (i = 4; i < 8; i++) {
		if (p[i]) {
			scsi_sense_param(c, (uint16_t)i, xc_top_bit(p[i]));
			return false;
		}
	}
	if ((uint64_t)tdll + sdll > XC_MAX_LIST) {
		xc_param_len_error(c);
		return false;
	}
	if (get_be32(p + 12)) {
		/* MAXIMUM INLINE DATA LENGTH is 0 */
		scsi_sense_param(c, 12, 7);
		return false;
	}
	if (XC_HDR_LEN + tdll + sdll > pll) {
		xc_param_len_error(c);
		return false;
	}
	*ncscd = 0;
	for (off = XC_HDR_LEN; off < XC_HDR_LEN + tdll; off += XC_CSCD_LEN) {
		if (*ncscd == XC_MAX_CSCD) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_TOO_MANY_TARGET_DESCRIPTORS);
			return false;
		}
		if (p[off] != XC_CSCD_ID) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE);
			return false;
		}
		if (XC_HDR_LEN + tdll - off < XC_CSCD_LEN) {
			/* the list length cuts the descriptor short */
			scsi_sense_param(c, 2, 7);
			return false;
		}
		(*ncscd)++;
	}
	*nseg = 0;
	end = XC_HDR_LEN + tdll + sdll;
	for (off = XC_HDR_LEN + tdll; off < end; off += XC_B2B_LEN) {
		if (end - off < 4) {
			scsi_sense_param(c, 8, 7);
			return false;
		}
		if (*nseg == XC_MAX_SEGS) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_TOO_MANY_SEGMENT_DESCRIPTORS);
			return false;
		}
		if (p[off] != XC_SEG_B2B) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE);
			return false;
		}
		if (get_be16(p + off + 2) != XC_B2B_LEN - 4) {
			scsi_sense_param(c, (uint16_t)(off + 2), 7);
			return false;
		}
		if (end - off < XC_B2B_LEN) {
			scsi_sense_param(c, 8, 7);
			return false;
		}
		if (p[off + 1] & 0xfc) {
			scsi_sense_param(c, (uint16_t)(off + 1),
					 xc_top_bit(p[off + 1] & 0xfc));
			return false;
		}
		for (i = 8; i < 10; i++) {
			if (p[off + i]) {
				scsi_sense_param(c, (uint16_t)(off + i),
						 xc_top_bit(p[off + i]));
				return false;
			}
		}
		(*nseg)++;
	}
	return true;
}

enum scsi_disposition scsi_xcopy_lid1(struct scsi_ctx *c)
{
	uint32_t pll = get_be32(c->cdb + 10), want;
	uint8_t p[XC_PARAM_MAX];
	struct xc_record *r = NULL;
	uint16_t ncscd, nseg, i;
	unsigned int usage;
	int ret;

	if (!pll)
		return SCSI_DONE; /* SPC-4: not an error; nothing is copied */
	if (pll < XC_HDR_LEN) {
		xc_param_len_error(c);
		return SCSI_DONE;
	}
	want = pll < sizeof(p) ? pll : (uint32_t)sizeof(p);
	if (scsi_copy_out(c, p, want, 0) != want) {
		xc_param_len_error(c);
		return SCSI_DONE;
	}
	if (!xc_parse(c, p, pll, &ncscd, &nseg))
		return SCSI_DONE;
	usage = (p[1] >> 3) & 3u;
	if (usage != XC_USAGE_NONE) {
		ret = xc_claim(c, p[0], usage == XC_USAGE_HOLD, &r);
		if (ret == -EBUSY) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_OPERATION_IN_PROGRESS);
			return SCSI_DONE;
		}
		if (ret) {
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_INSUFFICIENT_RESOURCES);
			return SCSI_DONE;
		}
	}
	for (i = 0; i < nseg; i++) {
		if (!xc_segment(c, p, ncscd, i,
				(uint16_t)(XC_HDR_LEN + get_be16(p + 2) +
					   i * XC_B2B_LEN),
				r))
			break;
		xc_progress(r, 0, true);
	}
	xc_finish(r, c->cmd);
	return SCSI_DONE;
}

/* ---- RECEIVE COPY RESULTS ------------------------------------------------ */

static void xc_respond(struct scsi_ctx *c, const void *buf, size_t len)
{
	uint32_t alloc = get_be32(c->cdb + 10);

	scsi_copy_in(c, buf, len < alloc ? len : alloc);
}

/*
 * OPERATING PARAMETERS: the limits above; SNLID (LIST ID USAGE 11b is
 * taken); no inline or held data, no stream devices; the implemented
 * descriptor type codes in ascending order.
 */
static void xc_op_params(struct scsi_ctx *c)
{
	static const uint8_t codes[] = {XC_SEG_B2B, XC_CSCD_ID};
	uint8_t buf[44 + sizeof(codes)];

	memset(buf, 0, sizeof(buf));
	put_be32(buf, sizeof(buf) - 4);
	buf[4] = 0x01; /* SNLID */
	put_be16(buf + 8, XC_MAX_CSCD);
	put_be16(buf + 10, XC_MAX_SEGS);
	put_be32(buf + 12, XC_MAX_LIST);
	put_be32(buf + 16, XC_MAX_SEG_BYTES);
	put_be16(buf + 34, XC_RECORDS);
	buf[36] = XC_RECORDS;
	buf[37] = XC_DATA_GRAN_LOG2;
	buf[43] = sizeof(codes);
	memcpy(buf + 44, codes, sizeof(codes));
	xc_respond(c, buf, sizeof(buf));
}

/*
 * COPY STATUS, RECEIVE DATA and FAILED SEGMENT DETAILS of the record of
 * CDB byte 2's list identifier for this I_T nexus and LUN; none is
 * INVALID FIELD IN CDB at that byte (so is FAILED SEGMENT DETAILS of a
 * copy still running). A snapshot taken under the lock, answered after.
 */
static void xc_results(struct scsi_ctx *c, unsigned int sa)
{
	struct xc_record snap = {.state = XC_FREE}, *r;
	uint8_t buf[60 + XC_SENSE_MAX];
	uint64_t count;
	size_t n;

	pthread_mutex_lock(&xc_lock);
	r = xc_find(c, c->cdb[2]);
	if (r)
		snap = *r;
	pthread_mutex_unlock(&xc_lock);
	if (!r || (sa == XC_SA_FAILED_SEGMENT && snap.state == XC_RUNNING)) {
		scsi_sense_cdb(c, 2, 7);
		return;
	}
	memset(buf, 0, sizeof(buf));
	switch (sa) {
	case XC_SA_COPY_STATUS:
		put_be32(buf, 8);
		buf[4] = snap.state == XC_RUNNING ? XC_CS_IN_PROGRESS
			 : snap.state == XC_DONE  ? XC_CS_DONE
						  : XC_CS_DONE_ERRORS;
		put_be16(buf + 5, snap.segments);
		count = snap.bytes;
		buf[7] = XC_TC_BYTES;
		if (count > UINT32_MAX) {
			count >>= 10;
			buf[7] = XC_TC_KIB;
		}
		if (count > UINT32_MAX) {
			count >>= 10;
			buf[7] = XC_TC_MIB;
		}
		put_be32(buf + 8, (uint32_t)count);
		n = 12;
		break;
	case XC_SA_RECEIVE_DATA:
		/* no segment type here holds data: AVAILABLE DATA 0 */
		n = 4;
		break;
	default:
		if (snap.state != XC_FAILED) {
			n = 4; /* it did not fail: no details */
			break;
		}
		n = 60 + snap.sense_len;
		put_be32(buf, (uint32_t)(n - 4));
		buf[56] = XC_CS_DONE_ERRORS;
		put_be16(buf + 58, snap.sense_len);
		memcpy(buf + 60, snap.sense, snap.sense_len);
		break;
	}
	xc_respond(c, buf, n);
}

enum scsi_disposition scsi_xcopy_results(struct scsi_ctx *c)
{
	unsigned int sa = c->cdb[1] & 0x1f;

	if (sa == XC_SA_OP_PARAMS)
		xc_op_params(c);
	else
		xc_results(c, sa);
	return SCSI_DONE;
}
