// SPDX-License-Identifier: MIT
/*
 * SPC-4 primary commands: TEST UNIT READY, REQUEST SENSE, INQUIRY with its
 * VPD pages, REPORT LUNS, MODE SENSE and MODE SELECT, START STOP UNIT,
 * PREVENT ALLOW MEDIUM REMOVAL, REPORT SUPPORTED OPERATION CODES and
 * REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS. Responses are built on the
 * stack (REPORT LUNS streams) and cut at the allocation length.
 */
#include <errno.h>
#include <string.h>

#include "array.h"
#include "scsi_i.h"

#define MODE_SELECT_10 0x55
#define MODE_SENSE_10 0x5a

/*
 * The Block Limits page's MAXIMUM COMPARE AND WRITE LENGTH: sbc.c's
 * SBC_CAW_MAX_BLOCKS, the most blocks its COMPARE AND WRITE takes.
 */
#define SPC_CAW_MAX_BLOCKS 1u

/*
 * REPORT SUPPORTED OPERATION CODES command timeouts descriptor, seconds:
 * nominal 1 (every emulated command is a memory operation unless the file
 * store blocks), recommended 30 (sd's default SD_TIMEOUT).
 */
#define SPC_NOMINAL_TIMEOUT 1u
#define SPC_RECOMMENDED_TIMEOUT 30u

/* LUNs REPORT LUNS can name: flat space addressing ends at 16383. */
#define SPC_REPORT_LUNS_MAX 16384u
#define SPC_REPORT_LUNS_CHUNK 512u /* entries per copy: 4 KiB of stack */

static struct lun_table *spc_luns(const struct scsi_ctx *c)
{
	return c->cmd->tgt->luns;
}

/* Data-In of @len bytes cut at the CDB's allocation length @alloc. */
static void spc_respond(struct scsi_ctx *c, const void *buf, size_t len,
			size_t alloc)
{
	scsi_copy_in(c, buf, len < alloc ? len : alloc);
}

/*
 * A response streamed in pieces: each piece lands at its offset, the part
 * before the allocation length only; @off keeps counting past it so the
 * caller learns the full length.
 */
struct spc_out {
	struct scsi_ctx *c;
	size_t off;
	size_t alloc;
};

static void spc_put(struct spc_out *o, const void *buf, size_t len)
{
	if (o->off < o->alloc)
		scsi_copy_in_at(o->c, buf,
				len < o->alloc - o->off ? len
							: o->alloc - o->off,
				o->off);
	o->off += len;
}

/* ---- TEST UNIT READY, REQUEST SENSE ---------------------------------- */

/* The table's SCSI_OP_MEDIUM flag has already reported a LUN not ready. */
enum scsi_disposition spc_test_unit_ready(struct scsi_ctx *c)
{
	(void)c;
	return SCSI_DONE;
}

/*
 * REQUEST SENSE: sense data as parameter data, status GOOD, in the format
 * the DESC bit asks for. In priority order: LOGICAL UNIT NOT SUPPORTED for
 * an absent LUN, a pending unit attention (reported here and cleared, as
 * SPC-4 allows), the port's standby or unavailable state, the LUN's not-ready state, the informational exceptions
 * TEST false failure (MRIE 6: reported only on request), else NO SENSE.
 */
enum scsi_disposition spc_request_sense(struct scsi_ctx *c)
{
	bool desc = c->cdb[1] & 0x01;
	uint8_t buf[SCSI_SENSE_MAX];
	uint8_t key = SK_NO_SENSE, asc = 0, ascq = 0;
	size_t n;

	if (!c->have_lun) {
		key = SK_ILLEGAL_REQUEST;
		ASC_PUT(asc, ascq, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
	} else if (scsi_ua_take(c, &asc, &ascq)) {
		key = SK_UNIT_ATTENTION;
	} else if (scsi_alua_sense(scsi_alua_state(c), &asc, &ascq)) {
		/* why this port's commands fail: standby or unavailable */
		key = SK_NOT_READY;
	} else if (c->li.state == LUN_SANITIZING) {
		/* with the sanitize's progress, as SBC-4 asks */
		n = scsi_sense_format_progress(buf, desc, SK_NOT_READY,
					       ASC_LU_NOT_READY_SANITIZE,
					       c->li.progress);
		spc_respond(c, buf, n, c->cdb[4]);
		return SCSI_DONE;
	} else if (scsi_state_sense(c->li.state, &asc, &ascq)) {
		key = SK_NOT_READY;
	} else if ((c->li.mode & (LUN_MODE_TEST | LUN_MODE_DEXCPT)) ==
		   LUN_MODE_TEST) {
		ASC_PUT(asc, ascq, ASC_FAILURE_PREDICTION_FALSE);
	}
	n = scsi_sense_format(buf, desc, key, asc, ascq);
	spc_respond(c, buf, n, c->cdb[4]);
	return SCSI_DONE;
}

/* ---- INQUIRY ----------------------------------------------------------- */

#define INQ_STD_LEN 96 /* through the eight version descriptors */
#define VPD_BUF 640 /* the largest page: device identification */

/* @n bytes of @src (NUL-terminated or not), space padded; NULL: spaces. */
static void spc_pad(uint8_t *dst, const char *src, size_t n)
{
	size_t i = 0;

	if (src)
		for (; i < n && src[i]; i++)
			dst[i] = (uint8_t)src[i];
	memset(dst + i, ' ', n - i);
}

/*
 * Standard INQUIRY data. An absent LUN answers peripheral qualifier 011b,
 * device type 1Fh, with the rest as for the target's first group so the
 * initiator still learns the version (the kernel decides on REPORT LUNS
 * scanning from LUN 0's answer). TPGS is 01b (implicit asymmetric access
 * only) on a target with ALUA port groups, else 00b, so that ALUA
 * handlers (Linux's scsi_dh_alua) attach only where REPORT TARGET PORT
 * GROUPS answers.
 */
static size_t spc_inquiry_std(struct scsi_ctx *c, uint8_t *p)
{
	const struct lun_group *g =
		c->have_lun ? c->li.group : lun_group_get(spc_luns(c), 0);

	memset(p, 0, INQ_STD_LEN);
	p[0] = c->have_lun ? 0x00 : 0x7f;
	if (c->have_lun && g->removable)
		p[1] = 0x80; /* RMB */
	p[2] = 0x06; /* SPC-4 */
	p[3] = 0x10 | 0x02; /* HISUP, RESPONSE DATA FORMAT 2 */
	p[4] = INQ_STD_LEN - 5;
	p[5] = 0x08; /* 3PC: EXTENDED COPY (xcopy.c) */
	if (c->cmd->tgt->alua)
		p[5] |= 0x10; /* TPGS 01b: implicit ALUA */
	p[7] = 0x02; /* CMDQUE */
	spc_pad(p + 8, g ? g->vendor : NULL, 8);
	spc_pad(p + 16, g ? g->product : NULL, 16);
	spc_pad(p + 32, g ? g->revision : NULL, 4);
	put_be16(p + 58, 0x00a0); /* SAM-5 */
	put_be16(p + 60, 0x0460); /* SPC-4 */
	put_be16(p + 62, 0x04c0); /* SBC-3 */
	return INQ_STD_LEN;
}

static void spc_vpd_header(uint8_t *p, uint8_t page, size_t len)
{
	p[0] = 0x00; /* direct access block device */
	p[1] = page;
	put_be16(p + 2, (uint16_t)(len - 4));
}

static const uint8_t spc_vpd_list[] = {0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2};

static size_t spc_vpd_supported(struct scsi_ctx *c, uint8_t *p)
{
	size_t n = 4 + sizeof(spc_vpd_list);

	(void)c;
	memcpy(p + 4, spc_vpd_list, sizeof(spc_vpd_list));
	spc_vpd_header(p, 0x00, n);
	return n;
}

static size_t spc_vpd_serial(struct scsi_ctx *c, uint8_t *p)
{
	char serial[LUN_SERIAL_LEN + 1];
	int len = lun_serial(spc_luns(c), c->li.lun, serial, sizeof(serial));

	if (len < 0)
		len = 0;
	memcpy(p + 4, serial, (size_t)len);
	spc_vpd_header(p, 0x80, 4 + (size_t)len);
	return 4 + (size_t)len;
}

/* Designator header: code set, PIV/association/type, length. */
#define CODE_BINARY 0x1
#define CODE_UTF8 0x3
#define ASSOC_LU 0x00
#define ASSOC_PORT 0x10
#define ASSOC_DEVICE 0x20
#define DESIG_NAA 0x3
#define DESIG_REL_PORT 0x4
#define DESIG_TPG 0x5
#define DESIG_NAME 0x8
#define PIV 0x80

static size_t spc_desig(const struct scsi_target *tgt, uint8_t *p,
			uint8_t code_set, uint8_t assoc, uint8_t type,
			uint8_t len)
{
	p[0] = code_set;
	p[1] = assoc | type;
	/* a port or device designator names its protocol when it is known */
	if (assoc != ASSOC_LU && tgt->protocol_valid) {
		p[0] |= (uint8_t)(tgt->protocol_id << 4);
		p[1] |= PIV;
	}
	p[2] = 0;
	p[3] = len;
	return 4;
}

/*
 * SCSI name string: UTF-8, NUL-terminated and NUL-padded to a multiple of
 * four, at most 252 bytes with the NUL (the length byte's limit). A longer
 * name is left out rather than cut (a cut name would name something else);
 * iSCSI names are at most 223 bytes.
 */
static size_t spc_desig_name(const struct scsi_target *tgt, uint8_t *p,
			     const char *name, uint8_t assoc)
{
	size_t len, pad;

	if (!name || !*name)
		return 0;
	len = strlen(name);
	if (len > 251)
		return 0;
	pad = (len + 4) & ~(size_t)3;
	spc_desig(tgt, p, CODE_UTF8, assoc, DESIG_NAME, (uint8_t)pad);
	memset(p + 4, 0, pad);
	memcpy(p + 4, name, len);
	return 4 + pad;
}

/*
 * Device identification: the LUN's NAA-6 WWN (association: logical unit),
 * the relative target port the command came through and its target port
 * group (association: target port; the same LUN through another port
 * differs only there), and SCSI name strings for the target device and port when the
 * front end names them.
 */
static size_t spc_vpd_devid(struct scsi_ctx *c, uint8_t *p)
{
	const struct scsi_target *tgt = c->cmd->tgt;
	size_t n = 4;

	n += spc_desig(tgt, p + n, CODE_BINARY, ASSOC_LU, DESIG_NAA, 16);
	put_be64(p + n, c->li.wwn_hi);
	put_be64(p + n + 8, c->li.wwn_lo);
	n += 16;
	if (scsi_alua_port(c)) {
		n += spc_desig(tgt, p + n, CODE_BINARY, ASSOC_PORT,
			       DESIG_REL_PORT, 4);
		put_be16(p + n, 0);
		put_be16(p + n + 2, scsi_alua_port(c));
		n += 4;
	}
	n += spc_desig(tgt, p + n, CODE_BINARY, ASSOC_PORT, DESIG_TPG, 4);
	put_be16(p + n, 0);
	put_be16(p + n + 2, scsi_alua_group_id(c));
	n += 4;
	n += spc_desig_name(tgt, p + n, tgt->port_name, ASSOC_PORT);
	n += spc_desig_name(tgt, p + n,
			    c->cmd->view && c->cmd->view->name
				    ? c->cmd->view->name
				    : tgt->target_name,
			    ASSOC_DEVICE);
	spc_vpd_header(p, 0x83, n);
	return n;
}

/* Blocks of the store's allocation unit: the unmap granularity. */
static uint32_t spc_unmap_granularity(const struct scsi_ctx *c)
{
	uint32_t g =
		store_granularity(lun_store(spc_luns(c))) / c->li.block_size;

	return g ? g : 1;
}

/*
 * Block Limits. From the group: MAXIMUM and OPTIMAL TRANSFER LENGTH, the
 * UNMAP limits (0 in the group: no limit, FFFFFFFFh, which is how sbc.c
 * reads 0), MAXIMUM WRITE SAME LENGTH (0: none reported, sbc.c's reading
 * too). WSNZ 0 (sbc.c writes to the end for a zero length), MAXIMUM
 * COMPARE AND WRITE LENGTH 1, OPTIMAL TRANSFER LENGTH GRANULARITY the
 * physical block, OPTIMAL UNMAP GRANULARITY the store's allocation unit,
 * aligned at LBA 0 (UGAVALID). A fully provisioned LUN has no UNMAP: its
 * limits are 0.
 */
static size_t spc_vpd_block_limits(struct scsi_ctx *c, uint8_t *p)
{
	const struct lun_group *g = c->li.group;
	const size_t n = 64;

	memset(p, 0, n);
	spc_vpd_header(p, 0xb0, n);
	p[5] = SPC_CAW_MAX_BLOCKS;
	put_be16(p + 6, (uint16_t)(1u << g->phys_exp));
	put_be32(p + 8, g->max_xfer_blocks);
	put_be32(p + 12, g->opt_xfer_blocks);
	if (g->thin) {
		put_be32(p + 20, g->max_unmap_blocks ? g->max_unmap_blocks
						     : UINT32_MAX);
		put_be32(p + 24,
			 g->max_unmap_desc ? g->max_unmap_desc : UINT32_MAX);
		put_be32(p + 28, spc_unmap_granularity(c));
		put_be32(p + 32, 0x80000000u); /* UGAVALID, alignment 0 */
	}
	put_be64(p + 36, g->max_ws_blocks);
	/* WRITE ATOMIC (16): no alignment, granularity or atomic boundary */
	put_be32(p + 44,
		 scsi_atomic_max_blocks(c->li.block_size, g->max_xfer_blocks));
	return n;
}

/*
 * Block Device Characteristics: rotation rate; WABEREQ and WACEREQ 01b
 * where SANITIZE BLOCK ERASE and CRYPTO ERASE are offered (thin LUNs:
 * reads after them return data, the zeroes of deallocated blocks), 00b
 * elsewhere, as SBC-4 asks; form factor not reported.
 */
static size_t spc_vpd_bdc(struct scsi_ctx *c, uint8_t *p)
{
	const size_t n = 64;

	memset(p, 0, n);
	spc_vpd_header(p, 0xb1, n);
	put_be16(p + 4, c->li.group->rotation_rate);
	p[7] = c->li.group->thin ? 0x40 | 0x10 : 0x00;
	return n;
}

/*
 * Logical Block Provisioning: a thin group has UNMAP, WRITE SAME (16) and
 * (10) with UNMAP, LBPRZ 001b when unmapped blocks read as zero, and
 * PROVISIONING TYPE 010b; no anchored state (ANC_SUP 0) and no threshold.
 * A full group reports PROVISIONING TYPE 000b and nothing else.
 */
static size_t spc_vpd_lbp(struct scsi_ctx *c, uint8_t *p)
{
	const struct lun_group *g = c->li.group;
	const size_t n = 8;

	memset(p, 0, n);
	spc_vpd_header(p, 0xb2, n);
	if (g->thin) {
		p[5] = 0x80 | 0x40 | 0x20 | (g->lbprz ? 0x04 : 0);
		p[6] = 0x02;
	}
	return n;
}

struct spc_vpd {
	uint8_t page;
	size_t (*fn)(struct scsi_ctx *c, uint8_t *p);
};

static const struct spc_vpd spc_vpds[] = {
	{0x00, spc_vpd_supported}, {0x80, spc_vpd_serial},
	{0x83, spc_vpd_devid},	   {0xb0, spc_vpd_block_limits},
	{0xb1, spc_vpd_bdc},	   {0xb2, spc_vpd_lbp},
};

_Static_assert(ARRAY_SIZE(spc_vpds) == sizeof(spc_vpd_list),
	       "VPD page 00h lists every page");

enum scsi_disposition spc_inquiry(struct scsi_ctx *c)
{
	uint8_t buf[VPD_BUF];
	uint8_t page = c->cdb[2];
	uint16_t alloc = get_be16(c->cdb + 3);
	unsigned int i;

	if (!(c->cdb[1] & 0x01)) {
		if (page) {
			scsi_sense_cdb(c, 2, 7);
			return SCSI_DONE;
		}
		spc_respond(c, buf, spc_inquiry_std(c, buf), alloc);
		return SCSI_DONE;
	}
	if (!c->have_lun) {
		/* no vital product data for a LUN that is not there */
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		return SCSI_DONE;
	}
	for (i = 0; i < ARRAY_SIZE(spc_vpds); i++) {
		if (spc_vpds[i].page == page) {
			spc_respond(c, buf, spc_vpds[i].fn(c, buf), alloc);
			return SCSI_DONE;
		}
	}
	scsi_sense_cdb(c, 2, 7);
	return SCSI_DONE;
}

/* ---- REPORT LUNS --------------------------------------------------------- */

/*
 * The LUNs of the initiator's view (base..base + count - 1 of the table,
 * reported as 0..count - 1; the whole table without a view), at most the
 * 16,384 that flat space addressing can name. SELECT REPORT 00h and 02h
 * list them all (there are no well-known LUNs to leave out), 01h (well
 * known only) lists none. Entries stream into the Data-In buffer 512 at a
 * time while the allocation length lasts; the walk goes on to count the
 * rest, because LUN LIST LENGTH is always the full length. Cost: one
 * lun_find() a LUN, O(view / 64) bitmap words in all.
 */
enum scsi_disposition spc_report_luns(struct scsi_ctx *c)
{
	const struct scsi_view *v = c->cmd->view;
	struct lun_table *t = spc_luns(c);
	uint32_t alloc = get_be32(c->cdb + 6), n = 0, base = 0, count;
	uint8_t chunk[SPC_REPORT_LUNS_CHUNK * 8];
	uint8_t hdr[8] = {0};
	struct spc_out o = {.c = c, .off = 8, .alloc = alloc};
	size_t fill = 0;
	uint64_t end;
	int l;

	if (c->cdb[2] > 0x02) {
		scsi_sense_cdb(c, 2, 7);
		return SCSI_DONE;
	}
	if (alloc < 16) {
		/* SPC-4: an allocation length under 16 is an error here */
		scsi_sense_cdb(c, 6, 7);
		return SCSI_DONE;
	}
	if (v) {
		base = v->base;
		count = v->count;
	} else {
		count = lun_max(t);
	}
	if (count > SPC_REPORT_LUNS_MAX)
		count = SPC_REPORT_LUNS_MAX;
	end = (uint64_t)base + count;
	if (end > lun_max(t))
		end = lun_max(t);
	if (c->cdb[2] == 0x01 || base >= end)
		end = base; /* well-known LUNs only: there are none */
	if (base < end) {
		lun_for_each(t, l, base, (uint32_t)end - 1) {
			n++;
			if (o.off + fill >= alloc)
				continue; /* past the allocation length: count only */
			scsi_lun_encode((uint32_t)l - base, chunk + fill);
			fill += 8;
			if (fill == sizeof(chunk)) {
				spc_put(&o, chunk, fill);
				fill = 0;
			}
		}
	}
	spc_put(&o, chunk, fill);
	put_be32(hdr, n * 8);
	scsi_copy_in_at(c, hdr, sizeof(hdr), 0); /* alloc >= 16 holds it */
	return SCSI_DONE;
}

/* ---- MODE SENSE, MODE SELECT ------------------------------------------ */

#define MODE_PAGE_MAX 20 /* the caching page */
#define MODE_BUF 128 /* header, long block descriptor, all pages */
#define MODE_SELECT_MAX 512 /* the longest parameter list taken */

/*
 * The mode pages: their fixed content (what no MODE SELECT can change) and,
 * in spc_mode_fields, each field a host may change, tied to its LUN mode
 * bit. Caching (08h): WCE and RCD changeable, nothing else claimed. Control
 * (0Ah): QUEUE ALGORITHM MODIFIER 1 (commands on one LUN run concurrently,
 * in any order), D_SENSE, QERR (00b or 01b) and SWP changeable.
 * Informational exceptions (1Ch): MRIE 6 (report on request: REQUEST
 * SENSE), DEXCPT and TEST changeable. No page has subpages, nothing is
 * saveable (PS 0): saved values read as the defaults, SP = 1 is refused.
 */
struct spc_mode_page {
	uint8_t code;
	uint8_t len; /* bytes with the 2-byte header */
	uint8_t fixed[MODE_PAGE_MAX];
};

static const struct spc_mode_page spc_mode_pages[] = {
	{0x08, 20, {0x08, 0x12}},
	{0x0a, 12, {0x0a, 0x0a, 0x00, 0x10}},
	{0x1c, 12, {0x1c, 0x0a, 0x00, 0x06}},
};

#define SPC_NPAGES (ARRAY_SIZE(spc_mode_pages))

/* @mask bits of byte @byte are @value when @bit is set, else zero. */
struct spc_mode_field {
	uint8_t page;
	uint8_t byte;
	uint8_t mask;
	uint8_t value;
	uint16_t bit;
};

static const struct spc_mode_field spc_mode_fields[] = {
	{0x08, 2, 0x04, 0x04, LUN_MODE_WCE},
	{0x08, 2, 0x01, 0x01, LUN_MODE_RCD},
	{0x0a, 2, 0x04, 0x04, LUN_MODE_D_SENSE},
	{0x0a, 3, 0x06, 0x02, LUN_MODE_QERR},
	{0x0a, 4, 0x08, 0x08, LUN_MODE_SWP},
	{0x1c, 2, 0x08, 0x08, LUN_MODE_DEXCPT},
	{0x1c, 2, 0x04, 0x04, LUN_MODE_TEST},
};

#define SPC_NFIELDS (ARRAY_SIZE(spc_mode_fields))

enum { PC_CURRENT = 0, PC_CHANGEABLE, PC_DEFAULT, PC_SAVED };

/* Page @pg's values under @pc into @p. */
static void spc_mode_fill(const struct spc_mode_page *pg, unsigned int pc,
			  uint16_t mode, uint8_t *p)
{
	unsigned int i;

	if (pc == PC_CHANGEABLE) {
		memset(p, 0, pg->len);
		p[0] = pg->code;
		p[1] = pg->len - 2;
	} else {
		memcpy(p, pg->fixed, pg->len);
	}
	for (i = 0; i < SPC_NFIELDS; i++) {
		const struct spc_mode_field *f = &spc_mode_fields[i];

		if (f->page != pg->code)
			continue;
		if (pc == PC_CHANGEABLE)
			p[f->byte] |= f->mask;
		else if (mode & f->bit)
			p[f->byte] |= f->value;
	}
}

static const struct spc_mode_page *spc_mode_page_find(uint8_t code)
{
	unsigned int i;

	for (i = 0; i < SPC_NPAGES; i++)
		if (spc_mode_pages[i].code == code)
			return &spc_mode_pages[i];
	return NULL;
}

/* The changeable bits of byte @byte of page @code. */
static uint8_t spc_mode_mask(uint8_t code, unsigned int byte)
{
	uint8_t m = 0;
	unsigned int i;

	for (i = 0; i < SPC_NFIELDS; i++)
		if (spc_mode_fields[i].page == code &&
		    spc_mode_fields[i].byte == byte)
			m |= spc_mode_fields[i].mask;
	return m;
}

static int8_t spc_top_bit(uint8_t v)
{
	return (int8_t)(31 - __builtin_clz(v));
}

/*
 * MODE SENSE (6) and (10). The header's device-specific parameter carries
 * WP (software write protect, current) and DPOFUA (sbc.c honours FUA). One
 * block descriptor unless DBD: short (blocks capped at FFFFFFFFh) or, for
 * MODE SENSE (10) with LLBAA, long; nothing in it is changeable. Page 3Fh
 * returns every page; subpage 00h or FFh (no page has subpages).
 */
enum scsi_disposition spc_mode_sense(struct scsi_ctx *c)
{
	const uint8_t *cdb = c->cdb;
	bool ten = cdb[0] == MODE_SENSE_10;
	bool dbd = cdb[1] & 0x08, llbaa = ten && (cdb[1] & 0x10);
	unsigned int pc = cdb[2] >> 6, i;
	uint8_t code = cdb[2] & 0x3f, sub = cdb[3];
	size_t alloc = ten ? get_be16(cdb + 7) : cdb[4];
	size_t hl = ten ? 8 : 4, n, bdl = 0;
	uint16_t mode;
	uint8_t buf[MODE_BUF];
	bool found = false;

	if (code != 0x3f && !spc_mode_page_find(code)) {
		scsi_sense_cdb(c, 2, 5);
		return SCSI_DONE;
	}
	if (sub != 0x00 && sub != 0xff) {
		scsi_sense_cdb(c, 3, 7);
		return SCSI_DONE;
	}
	mode = pc == PC_CURRENT ? c->li.mode : c->li.group->mode_default;
	memset(buf, 0, sizeof(buf));
	n = hl;
	if (!dbd) {
		bdl = llbaa ? 16 : 8;
		if (pc != PC_CHANGEABLE && llbaa) {
			put_be64(buf + n, c->li.nblocks);
			put_be32(buf + n + 12, c->li.block_size);
		} else if (pc != PC_CHANGEABLE) {
			put_be32(buf + n, c->li.nblocks > UINT32_MAX
						  ? UINT32_MAX
						  : (uint32_t)c->li.nblocks);
			put_be24(buf + n + 5, c->li.block_size);
		}
		n += bdl;
	}
	for (i = 0; i < SPC_NPAGES; i++) {
		const struct spc_mode_page *pg = &spc_mode_pages[i];

		if (code != 0x3f && code != pg->code)
			continue;
		spc_mode_fill(pg, pc, mode, buf + n);
		n += pg->len;
		found = true;
	}
	if (!found) {
		scsi_sense_cdb(c, 2, 5);
		return SCSI_DONE;
	}
	buf[ten ? 3 : 2] = (c->li.mode & LUN_MODE_SWP ? 0x80 : 0) | 0x10;
	if (ten) {
		put_be16(buf, (uint16_t)(n - 2));
		buf[4] = llbaa && bdl ? 0x01 : 0x00; /* LONGLBA */
		put_be16(buf + 6, (uint16_t)bdl);
	} else {
		buf[0] = (uint8_t)(n - 1);
		buf[3] = (uint8_t)bdl;
	}
	spc_respond(c, buf, n, alloc);
	return SCSI_DONE;
}

static void spc_param_length_error(struct scsi_ctx *c)
{
	scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

/*
 * A MODE SELECT block descriptor at @p (parameter list offset @off): the
 * capacity cannot change through it, so NUMBER OF LOGICAL BLOCKS is ignored
 * (SBC-4 allows that); the block length must be the LUN's.
 */
static bool spc_mode_select_bd(struct scsi_ctx *c, const uint8_t *p,
			       bool is_long, size_t off)
{
	if (is_long) {
		if (get_be32(p + 8)) {
			scsi_sense_param(c, (uint16_t)(off + 8), 7);
			return false;
		}
		if (get_be32(p + 12) != c->li.block_size) {
			scsi_sense_param(c, (uint16_t)(off + 12), 7);
			return false;
		}
		return true;
	}
	if (p[4]) {
		scsi_sense_param(c, (uint16_t)(off + 4), spc_top_bit(p[4]));
		return false;
	}
	if (get_be24(p + 5) != c->li.block_size) {
		scsi_sense_param(c, (uint16_t)(off + 5), 7);
		return false;
	}
	return true;
}

/*
 * One mode page of a MODE SELECT list at @p (offset @off, @left bytes to
 * the list's end): every byte must match the current value outside the
 * changeable mask, and each changeable field must hold a value it can take.
 * @mode gets the page's bits. Return: the page length, or 0 with the sense
 * set.
 */
static size_t spc_mode_select_page(struct scsi_ctx *c, const uint8_t *p,
				   size_t off, size_t left, uint16_t *mode)
{
	const struct spc_mode_page *pg;
	uint8_t cur[MODE_PAGE_MAX], diff, v;
	unsigned int i;

	if (left < 2) {
		spc_param_length_error(c);
		return 0;
	}
	pg = spc_mode_page_find(p[0] & 0x3f);
	if (!pg) {
		scsi_sense_param(c, (uint16_t)off, 5);
		return 0;
	}
	if (p[0] & 0xc0) {
		/* PS is reserved in MODE SELECT; SPF: no subpages here */
		scsi_sense_param(c, (uint16_t)off, spc_top_bit(p[0] & 0xc0));
		return 0;
	}
	if (p[1] != pg->len - 2) {
		scsi_sense_param(c, (uint16_t)(off + 1), 7);
		return 0;
	}
	if (left < pg->len) {
		spc_param_length_error(c);
		return 0;
	}
	spc_mode_fill(pg, PC_CURRENT, c->li.mode, cur);
	for (i = 2; i < pg->len; i++) {
		diff = (p[i] ^ cur[i]) & (uint8_t)~spc_mode_mask(pg->code, i);
		if (diff) {
			scsi_sense_param(c, (uint16_t)(off + i),
					 spc_top_bit(diff));
			return 0;
		}
	}
	for (i = 0; i < SPC_NFIELDS; i++) {
		const struct spc_mode_field *f = &spc_mode_fields[i];

		if (f->page != pg->code)
			continue;
		v = p[f->byte] & f->mask;
		if (v == f->value) {
			*mode |= f->bit;
		} else if (!v) {
			*mode &= (uint16_t)~f->bit;
		} else {
			scsi_sense_param(c, (uint16_t)(off + f->byte),
					 spc_top_bit(f->mask));
			return 0;
		}
	}
	return pg->len;
}

/*
 * MODE SELECT (6) and (10), PF = 1 (SP = 1 fails the CDB usage check).
 * The whole list is checked before anything changes: the header (MODE DATA
 * LENGTH and MEDIUM TYPE 0; the device-specific parameter is ignored, as
 * SBC-4 says for WP and DPOFUA), at most one block descriptor, then each
 * page. A list that ends inside a header, descriptor or page is a
 * PARAMETER LIST LENGTH ERROR, and so is a Data-Out shorter than the list.
 * lun_mode_set() then raises MODE PARAMETERS CHANGED if a bit changed.
 * Two MODE SELECTs racing on one LUN may lose one's change: each starts
 * from its own snapshot (lun.h has no compare-and-set; hosts do not race
 * their own MODE SELECTs).
 */
enum scsi_disposition spc_mode_select(struct scsi_ctx *c)
{
	bool ten = c->cdb[0] == MODE_SELECT_10;
	size_t pll = ten ? get_be16(c->cdb + 7) : c->cdb[4];
	size_t hl = ten ? 8 : 4, bdl, off, len;
	uint16_t mode = c->li.mode;
	uint8_t buf[MODE_SELECT_MAX];
	bool is_long;
	int ret;

	if (!pll)
		return SCSI_DONE;
	if (!(c->cdb[1] & 0x10)) {
		/* PF 0: a vendor-specific list; there is none */
		scsi_sense_cdb(c, 1, 4);
		return SCSI_DONE;
	}
	if (pll > sizeof(buf)) {
		scsi_sense_cdb(c, ten ? 7 : 4, 7);
		return SCSI_DONE;
	}
	if (pll < hl || scsi_copy_out(c, buf, pll, 0) != pll) {
		spc_param_length_error(c);
		return SCSI_DONE;
	}
	if (ten ? get_be16(buf) : buf[0]) {
		scsi_sense_param(c, 0, 7);
		return SCSI_DONE;
	}
	if (buf[ten ? 2 : 1]) {
		scsi_sense_param(c, ten ? 2 : 1, 7);
		return SCSI_DONE;
	}
	if (ten && (buf[4] & 0xfe)) {
		scsi_sense_param(c, 4, spc_top_bit(buf[4] & 0xfe));
		return SCSI_DONE;
	}
	if (ten && buf[5]) {
		scsi_sense_param(c, 5, spc_top_bit(buf[5]));
		return SCSI_DONE;
	}
	is_long = ten && (buf[4] & 0x01);
	bdl = ten ? get_be16(buf + 6) : buf[3];
	if (bdl && bdl != (is_long ? 16u : 8u)) {
		scsi_sense_param(c, ten ? 6 : 3, 7);
		return SCSI_DONE;
	}
	if (hl + bdl > pll) {
		spc_param_length_error(c);
		return SCSI_DONE;
	}
	if (bdl && !spc_mode_select_bd(c, buf + hl, is_long, hl))
		return SCSI_DONE;
	for (off = hl + bdl; off < pll; off += len) {
		len = spc_mode_select_page(c, buf + off, off, pll - off, &mode);
		if (!len)
			return SCSI_DONE;
	}
	if (mode == c->li.mode)
		return SCSI_DONE;
	ret = lun_mode_set(spc_luns(c), c->li.lun, mode, c->cmd->nexus);
	if (ret)
		scsi_sense_errno(c, ret, false, 0);
	return SCSI_DONE;
}

/* ---- START STOP UNIT, PREVENT ALLOW MEDIUM REMOVAL --------------------- */

/*
 * START STOP UNIT. POWER CONDITION 0 (START_VALID): START 1 brings a
 * stopped LUN online, START 0 flushes (unless NO_FLUSH) and stops it, as
 * sd's manage_start_stop does. 1 (ACTIVE, what sd sends with
 * start_stop_pwr_cond): start. Every other value (IDLE, STANDBY - sd's
 * stop then - LU_CONTROL, the FORCE ones, and the reserved ones, which
 * libiscsi's suite sends to a removable LUN and expects to pass) is
 * accepted and changes nothing, since a LUN in any power condition still
 * serves commands; START and LOEJ are ignored then (SBC-4). LOEJ on a
 * removable LUN ejects the medium (START 0) or loads it and starts (START
 * 1), both refused with MEDIUM REMOVAL PREVENTED while any I_T nexus
 * prevents removal (the tray is locked either way); on a fixed disk LOEJ is
 * ignored, so eject(1) only stops it. START without LOEJ on a removable
 * LUN changes nothing (it spins up by itself on the next access, as an
 * optical drive does), except that with no medium START 1 is NOT READY,
 * MEDIUM NOT PRESENT. IMMED needs nothing: the
 * change is done before status. An offline LUN stays offline (it is the
 * control socket's to change): NOT READY, MANUAL INTERVENTION REQUIRED;
 * one becoming ready is left to become ready.
 */
enum scsi_disposition spc_start_stop_unit(struct scsi_ctx *c)
{
	uint8_t b4 = c->cdb[4], asc, ascq;
	bool start = b4 & 0x01, loej = b4 & 0x02;
	enum lun_state to;
	int ret;

	switch (b4 >> 4) {
	case 0x0:
		break;
	case 0x1:
		start = true;
		loej = false;
		break;
	default:
		return SCSI_DONE;
	}
	if (c->li.state == LUN_OFFLINE) {
		scsi_state_sense(c->li.state, &asc, &ascq);
		scsi_sense(c, SK_NOT_READY, asc, ascq);
		return SCSI_DONE;
	}
	if (loej && c->li.group->removable) {
		if (!start && !(b4 & 0x04) && c->li.state == LUN_ONLINE) {
			ret = lun_flush(spc_luns(c), &c->li);
			if (ret) {
				scsi_sense_errno(c, ret, true, 0);
				return SCSI_DONE;
			}
		}
		ret = lun_medium(spc_luns(c), &c->li, start);
		if (ret == -EBUSY)
			scsi_sense(c, SK_ILLEGAL_REQUEST,
				   ASC_MEDIUM_REMOVAL_PREVENTED);
		else if (ret)
			scsi_sense_errno(c, ret, false, 0);
		return SCSI_DONE;
	}
	if (c->li.state == LUN_NO_MEDIUM) {
		if (start)
			scsi_sense(c, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
		return SCSI_DONE;
	}
	if (c->li.group->removable)
		return SCSI_DONE;
	if (start) {
		if (c->li.state != LUN_STOPPED)
			return SCSI_DONE;
		to = LUN_ONLINE;
	} else {
		if (c->li.state == LUN_STOPPED)
			return SCSI_DONE;
		if (!(b4 & 0x04) && c->li.state == LUN_ONLINE) {
			ret = lun_flush(spc_luns(c), &c->li);
			if (ret) {
				scsi_sense_errno(c, ret, true, 0);
				return SCSI_DONE;
			}
		}
		to = LUN_STOPPED;
	}
	ret = lun_set_state(spc_luns(c), c->li.lun, to);
	if (ret)
		scsi_sense_errno(c, ret, false, 0);
	return SCSI_DONE;
}

/*
 * PREVENT ALLOW MEDIUM REMOVAL: PREVENT 01b prevents removal for this I_T
 * nexus, 00b allows it; removal stays prevented while any nexus prevents
 * it, until that nexus allows it, goes away, or a LUN or target reset
 * (lun_prevent()). On a fixed disk both are accepted and change nothing
 * (SBC-4 lets a disk take them). 10b and 11b are obsolete (medium
 * changers).
 */
enum scsi_disposition spc_prevent_allow(struct scsi_ctx *c)
{
	uint8_t prevent = c->cdb[4] & 0x03;
	int ret;

	if (prevent > 1) {
		scsi_sense_cdb(c, 4, 1);
		return SCSI_DONE;
	}
	if (!c->li.group->removable)
		return SCSI_DONE;
	ret = lun_prevent(spc_luns(c), &c->li, c->cmd->nexus, prevent == 1);
	if (ret)
		scsi_sense_errno(c, ret, false, 0);
	return SCSI_DONE;
}

/* ---- REPORT SUPPORTED OPERATION CODES ----------------------------------- */

#define RSOC_DESC_LEN 8
#define RSOC_TIMEOUTS_LEN 12
#define CTDP_ALL 0x02 /* all_commands descriptor: CTDP */
#define SERVACTV 0x01
#define CTDP_ONE 0x80 /* one_command data: CTDP */
#define SUPPORT_NO 0x01
#define SUPPORT_YES 0x03

static void spc_timeouts(uint8_t *p)
{
	memset(p, 0, RSOC_TIMEOUTS_LEN);
	put_be16(p, RSOC_TIMEOUTS_LEN - 2);
	put_be32(p + 4, SPC_NOMINAL_TIMEOUT);
	put_be32(p + 8, SPC_RECOMMENDED_TIMEOUT);
}

/*
 * Whether this LUN offers @op, as the LUN will answer it: UNMAP and
 * SANITIZE BLOCK and CRYPTO ERASE need logical block provisioning, so a thick LUN
 * (INVALID COMMAND OPERATION CODE or INVALID FIELD IN CDB there) reports
 * them unsupported. Every other entry of the table holds for every LUN.
 */
static bool spc_offers(const struct scsi_ctx *c, const struct scsi_op *op)
{
	if (op->fn == scsi_alua_rtpg)
		return c->cmd->tgt->alua != NULL;
	if (op->fn == sbc_sanitize && (op->sa == 0x02 || op->sa == 0x03))
		return c->li.group->thin; /* BLOCK, CRYPTO ERASE: see sbc.c */
	return op->fn != sbc_unmap || c->li.group->thin;
}

/*
 * @op's CDB usage data on this LUN, into @out (op->cdb_len bytes): WRITE
 * SAME's UNMAP bit is only usable where there is provisioning to undo (a
 * thick LUN refuses it with INVALID FIELD IN CDB).
 */
static void spc_usage(const struct scsi_ctx *c, const struct scsi_op *op,
		      uint8_t *out)
{
	memcpy(out, op->usage, op->cdb_len);
	if (op->fn == sbc_write_same && !c->li.group->thin)
		out[1] &= (uint8_t)~0x08;
}

/*
 * REPORTING OPTIONS 000b: every command descriptor this LUN offers, from
 * the table. Two walks over the table (about 60 entries): the first counts
 * for the header.
 */
static void spc_rsoc_all(struct scsi_ctx *c, bool rctd, uint32_t alloc)
{
	size_t each = RSOC_DESC_LEN + (rctd ? RSOC_TIMEOUTS_LEN : 0);
	uint8_t d[RSOC_DESC_LEN + RSOC_TIMEOUTS_LEN];
	struct spc_out o = {.c = c, .alloc = alloc};
	const struct scsi_op *op;
	unsigned int i, n = 0;
	uint8_t hdr[4];

	for (i = 0; (op = scsi_op_at(i)); i++)
		n += spc_offers(c, op);
	put_be32(hdr, (uint32_t)(n * each));
	spc_put(&o, hdr, sizeof(hdr));
	for (i = 0; (op = scsi_op_at(i)) && o.off < alloc; i++) {
		if (!spc_offers(c, op))
			continue;
		memset(d, 0, RSOC_DESC_LEN);
		d[0] = op->usage[0];
		put_be16(d + 2, op->has_sa ? op->sa : 0);
		d[5] = (rctd ? CTDP_ALL : 0) | (op->has_sa ? SERVACTV : 0);
		put_be16(d + 6, op->cdb_len);
		if (rctd)
			spc_timeouts(d + RSOC_DESC_LEN);
		spc_put(&o, d, each);
	}
}

/*
 * REPORTING OPTIONS 001b (an opcode without service actions), 010b (an
 * opcode and service action) and 011b (SPC-5: whichever the opcode has).
 * A mismatch between the option and the opcode is INVALID FIELD IN CDB at
 * REPORTING OPTIONS; an opcode the target or this LUN lacks is SUPPORT 001b.
 */
static void spc_rsoc_one(struct scsi_ctx *c, unsigned int opt, bool rctd,
			 uint32_t alloc)
{
	const struct scsi_op *main = &scsi_ops[c->cdb[3]], *op = NULL;
	uint16_t sa = get_be16(c->cdb + 4);
	uint8_t buf[4 + 16 + RSOC_TIMEOUTS_LEN];
	size_t n = 4;

	if ((opt == 1 && main->nsa) || (opt == 2 && main->fn)) {
		scsi_sense_cdb(c, 2, 2);
		return;
	}
	if (main->nsa)
		op = opt == 1 ? NULL : scsi_op_sa(c->cdb[3], sa);
	else if (main->fn)
		op = main;
	if (op && !spc_offers(c, op))
		op = NULL;
	memset(buf, 0, sizeof(buf));
	if (!op) {
		buf[1] = SUPPORT_NO;
	} else {
		buf[1] = SUPPORT_YES | (rctd ? CTDP_ONE : 0);
		put_be16(buf + 2, op->cdb_len);
		spc_usage(c, op, buf + 4);
		n += op->cdb_len;
		if (rctd) {
			spc_timeouts(buf + n);
			n += RSOC_TIMEOUTS_LEN;
		}
	}
	spc_respond(c, buf, n, alloc);
}

enum scsi_disposition spc_report_opcodes(struct scsi_ctx *c)
{
	bool rctd = c->cdb[2] & 0x80;
	unsigned int opt = c->cdb[2] & 0x07;
	uint32_t alloc = get_be32(c->cdb + 6);

	switch (opt) {
	case 0:
		spc_rsoc_all(c, rctd, alloc);
		break;
	case 1:
	case 2:
	case 3:
		spc_rsoc_one(c, opt, rctd, alloc);
		break;
	default:
		scsi_sense_cdb(c, 2, 2);
		break;
	}
	return SCSI_DONE;
}

/*
 * REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS: what the iSCSI front end
 * carries out. ABORT TASK, ABORT TASK SET, LOGICAL UNIT RESET and TARGET
 * RESET (iSCSI's TARGET WARM RESET and TARGET COLD RESET both). Not CLEAR
 * TASK SET, CLEAR ACA, QUERY TASK/TASK SET/ASYNCHRONOUS EVENT or I_T NEXUS
 * RESET. REPD 1: the 16-byte extended form, no timeouts (TMFTMOV 0).
 */
enum scsi_disposition spc_report_tmfs(struct scsi_ctx *c)
{
	bool repd = c->cdb[2] & 0x80;
	uint32_t alloc = get_be32(c->cdb + 6);
	uint8_t buf[16] = {0};

	buf[0] = 0x80 | 0x40 | 0x08 | 0x02; /* ATS, ATSS, LURS, TRS */
	if (repd)
		buf[3] = 0x0c;
	spc_respond(c, buf, repd ? 16 : 4, alloc);
	return SCSI_DONE;
}
