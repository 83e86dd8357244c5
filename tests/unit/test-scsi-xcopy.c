// SPDX-License-Identifier: MIT
/*
 * EXTENDED COPY (LID1) and RECEIVE COPY RESULTS through scsi_exec(): copies
 * between two LUNs, within one (overlapping) and across block sizes, with
 * the data read back; every parameter list error with its sense; the copy
 * target errors (COPY ABORTED, segment number, field pointer, forwarded
 * sense); reservations on a copy target; the limits OPERATING PARAMETERS
 * reports; COPY STATUS and FAILED SEGMENT DETAILS after a success and
 * after a failed segment, per I_T nexus, LUN and LIST IDENTIFIER.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lun.h"
#include "scsi/scsi.h"
#include "scsi-harness.h"

/* The fixture's LUNs. */
#define L_A 0 /* 512-byte blocks, thin */
#define L_B 1 /* 512-byte blocks, thin */
#define L_BIG 2 /* 4096-byte blocks, thick */
#define L_ABSENT 7 /* in the table's range, never created */

#define SMALL_BLOCKS 8192u /* 4 MiB of 512 */
#define BIG_BLOCKS 1024u /* 4 MiB of 4096 */

/* What OPERATING PARAMETERS must report (xcopy.c's limits). */
#define MAX_CSCD 16u
#define MAX_SEGS 32u
#define MAX_LIST 1024u
#define MAX_SEG_BYTES (16u << 20)

#define SK_COPY_ABORTED 0x0a
#define HDR 16u
#define CSCD 32u
#define SEG 28u

/* A test's harness and the I_T nexus its commands come from. */
struct t {
	struct harness *h;
	uint32_t nexus;
};

/*
 * Copy records outlive a harness (they are the process's), so each test
 * speaks from I_T nexus ids no other test uses.
 */
static uint32_t next_nexus = 100;

static uint8_t x_exec(struct t *t, uint32_t nexus, uint32_t lun,
		      const uint8_t *cdb, size_t cdb_len, enum scsi_dir dir,
		      void *buf, size_t len)
{
	struct harness *h = t->h;

	h->nexus = nexus;
	h_exec(h, lun, cdb, cdb_len, dir, buf, len);
	h->nexus = 0;
	assert_int_equal(h->disp, SCSI_DONE);
	return h->cmd.status;
}

/* TEST UNIT READY from the test's nexus until no unit attention is left. */
static void clear_ua(struct t *t, uint32_t lun)
{
	struct h_sense s;
	int i;

	for (i = 0; i < 16; i++) {
		if (x_exec(t, t->nexus, lun, H_CDB(0, 0, 0, 0, 0, 0),
			   SCSI_DIR_NONE, NULL, 0) == SCSI_GOOD)
			return;
		assert_true(h_sense_parse(t->h->cmd.sense, t->h->cmd.sense_len,
					  &s));
		assert_int_equal(s.key, SK_UNIT_ATTENTION);
	}
	fail_msg("LUN %u: unit attentions do not clear", lun);
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct t setup(void)
{
	struct t t = {.h = h_new(16), .nexus = next_nexus++};
	struct lun_group g =
		h_group("small", 0, 2, (uint64_t)SMALL_BLOCKS * 512);
	struct lun_group big =
		h_group("big", L_BIG, 1, (uint64_t)BIG_BLOCKS * 4096);

	big.block_size = 4096;
	big.thin = false;
	big.lbprz = false;
	h_add_group(t.h, &g);
	h_add_group(t.h, &big);
	h_clear_ua(t.h, L_A);
	h_clear_ua(t.h, L_B);
	h_clear_ua(t.h, L_BIG);
	return t;
}

/* The NAA designator VPD 83h reports for @lun, as an initiator finds it. */
static void lun_naa(struct t *t, uint32_t lun, uint8_t naa[16])
{
	uint8_t buf[512];
	size_t off, end;

	assert_int_equal(x_exec(t, t->nexus, lun,
				H_CDB(0x12, 0x01, 0x83, 0x02, 0x00, 0),
				SCSI_DIR_READ, buf, sizeof(buf)),
			 SCSI_GOOD);
	end = 4 + get16(buf + 2);
	for (off = 4; off + 4 <= end; off += 4 + buf[off + 3]) {
		if ((buf[off + 1] & 0x3f) == 0x03 && buf[off + 3] == 16) {
			memcpy(naa, buf + off + 4, 16);
			return;
		}
	}
	fail_msg("LUN %u: no NAA designator", lun);
}

/* An identification descriptor CSCD naming @naa, block device. */
static void cscd(uint8_t *d, const uint8_t naa[16], uint32_t block_size)
{
	memset(d, 0, CSCD);
	d[0] = 0xe4;
	d[4] = 0x01; /* binary */
	d[5] = 0x03; /* LU association, NAA */
	d[7] = 16;
	memcpy(d + 8, naa, 16);
	d[29] = (uint8_t)(block_size >> 16);
	d[30] = (uint8_t)(block_size >> 8);
	d[31] = (uint8_t)block_size;
}

/* A block device to block device segment descriptor. */
static void seg_b2b(uint8_t *d, uint16_t src, uint16_t dst, uint16_t nblocks,
		    uint64_t slba, uint64_t dlba, bool dc)
{
	memset(d, 0, SEG);
	d[0] = 0x02;
	d[1] = dc ? 0x02 : 0x00;
	put16(d + 2, 0x18);
	put16(d + 4, src);
	put16(d + 6, dst);
	put16(d + 10, nblocks);
	put64(d + 12, slba);
	put64(d + 20, dlba);
}

static void list_hdr(uint8_t *p, uint8_t list_id, unsigned int usage,
		     uint32_t tdll, uint32_t sdll)
{
	memset(p, 0, HDR);
	p[0] = list_id;
	p[1] = (uint8_t)(usage << 3);
	put16(p + 2, tdll);
	put32(p + 8, sdll);
}

static uint8_t xcopy(struct t *t, uint32_t lun, uint8_t *list, uint32_t len)
{
	uint8_t cdb[16] = {0x83};

	put32(cdb + 10, len);
	return x_exec(t, t->nexus, lun, cdb, sizeof(cdb),
		      len ? SCSI_DIR_WRITE : SCSI_DIR_NONE, len ? list : NULL,
		      len);
}

static uint8_t rcr(struct t *t, uint32_t nexus, uint32_t lun, uint8_t sa,
		   uint8_t list_id, uint8_t *buf, uint32_t alloc)
{
	uint8_t cdb[16] = {0x84, sa, list_id};

	put32(cdb + 10, alloc);
	memset(buf, 0xee, alloc);
	return x_exec(t, nexus, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf,
		      alloc);
}

/* Block @lba of @lun as the pattern writes it: LUN, LBA and offset mixed. */
static uint8_t pat(uint32_t seed, uint64_t lba, size_t k)
{
	return (uint8_t)(seed * 131u + lba * 7u + k * 13u + 1u);
}

static void write_pattern(struct t *t, uint32_t lun, uint32_t bs, uint64_t lba,
			  uint32_t n, uint32_t seed)
{
	uint8_t cdb[16] = {0x8a};
	size_t len = (size_t)n * bs, k;
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	for (k = 0; k < len; k++)
		buf[k] = pat(seed, lba + k / bs, k % bs);
	put64(cdb + 2, lba);
	put32(cdb + 10, n);
	assert_int_equal(x_exec(t, t->nexus, lun, cdb, sizeof(cdb),
				SCSI_DIR_WRITE, buf, len),
			 SCSI_GOOD);
	free(buf);
}

/*
 * Whether @n blocks of @lun at @lba hold the pattern @seed wrote at
 * @from (in @from_bs-byte blocks), or zeroes with @seed UINT32_MAX.
 */
static bool holds(struct t *t, uint32_t lun, uint32_t bs, uint64_t lba,
		  uint32_t n, uint32_t seed, uint64_t from, uint32_t from_bs)
{
	uint8_t cdb[16] = {0x88};
	size_t len = (size_t)n * bs, k;
	uint8_t *buf = malloc(len);
	bool ok = true;

	assert_non_null(buf);
	put64(cdb + 2, lba);
	put32(cdb + 10, n);
	assert_int_equal(x_exec(t, t->nexus, lun, cdb, sizeof(cdb),
				SCSI_DIR_READ, buf, len),
			 SCSI_GOOD);
	for (k = 0; k < len && ok; k++) {
		uint8_t want =
			seed == UINT32_MAX
				? 0
				: pat(seed, from + k / from_bs, k % from_bs);

		ok = buf[k] == want;
	}
	free(buf);
	return ok;
}

/* A one-segment list: CSCDs @naa0 (and @naa1 if not NULL). */
static uint32_t one_segment(uint8_t *p, uint8_t list_id, unsigned int usage,
			    const uint8_t *naa0, uint32_t bs0,
			    const uint8_t *naa1, uint32_t bs1)
{
	uint32_t tdll = naa1 ? 2 * CSCD : CSCD;

	list_hdr(p, list_id, usage, tdll, SEG);
	cscd(p + HDR, naa0, bs0);
	if (naa1)
		cscd(p + HDR + CSCD, naa1, bs1);
	return HDR + tdll + SEG;
}

/* COPY ABORTED: the segment number, the field pointer into the list. */
static void expect_aborted(struct t *t, uint8_t asc, uint8_t ascq,
			   uint32_t segment, int field)
{
	const uint8_t *s = t->h->cmd.sense;
	struct h_sense hs;

	h_expect_sense(t->h, SK_COPY_ABORTED, asc, ascq);
	assert_true(h_sense_parse(s, t->h->cmd.sense_len, &hs));
	if (!hs.descriptor)
		assert_int_equal(get32(s + 8), segment);
	if (field < 0) {
		assert_false(hs.sks_valid);
		return;
	}
	assert_true(hs.sks_valid);
	assert_false(hs.cd);
	assert_int_equal(hs.field, field);
}

/* The forwarded sense data descriptor of descriptor-format sense. */
static const uint8_t *forwarded(struct t *t)
{
	const uint8_t *s = t->h->cmd.sense;
	size_t i, end = 8 + (size_t)s[7];

	assert_int_equal(s[0], 0x72);
	for (i = 8; i + 2 <= end; i += 2 + (size_t)s[i + 1])
		if (s[i] == 0x0c)
			return s + i;
	fail_msg("no forwarded sense data descriptor");
	return NULL;
}

static void set_d_sense(struct t *t, uint32_t lun)
{
	struct lun_info li;

	assert_int_equal(lun_get(t->h->luns, lun, &li), 0);
	lun_put(t->h->luns, &li);
	assert_int_equal(lun_mode_set(t->h->luns, lun,
				      li.mode | LUN_MODE_D_SENSE, t->nexus),
			 0);
}

/* ---- copies ------------------------------------------------------------ */

/*
 * 300 blocks from LUN A to LUN B (five 64 KiB pieces and a part), the
 * command sent to the 4 KiB LUN, which is in neither end: any LUN's copy
 * manager reaches any LUN of the table. Only the destination range
 * changes.
 */
static void test_copy_between_luns(void **state)
{
	struct t t = setup();
	uint8_t a[16], b[16], p[HDR + 2 * CSCD + SEG];
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_B, b);
	write_pattern(&t, L_A, 512, 100, 300, 1);
	len = one_segment(p, 1, 0, a, 512, b, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 300, 100, 5000, false);
	assert_int_equal(xcopy(&t, L_BIG, p, len), SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, len);
	assert_true(holds(&t, L_B, 512, 5000, 300, 1, 100, 512));
	assert_true(holds(&t, L_B, 512, 4999, 1, UINT32_MAX, 0, 512));
	assert_true(holds(&t, L_B, 512, 5300, 1, UINT32_MAX, 0, 512));
	/* the source is untouched */
	assert_true(holds(&t, L_A, 512, 100, 300, 1, 100, 512));
	h_free(t.h);
}

/*
 * Within one LUN, through CSCD ID FFFFh (the LUN that got the command)
 * and no CSCD descriptor at all: a destination overlapping the source
 * from above (copied back to front) and one overlapping from below; both
 * end up with the source's original data. A zero-block segment copies
 * nothing and is no error.
 */
static void test_copy_within_lun(void **state)
{
	struct t t = setup();
	uint8_t p[HDR + 3 * SEG];

	(void)state;
	write_pattern(&t, L_A, 512, 1000, 400, 2);
	list_hdr(p, 2, 0, 0, SEG);
	seg_b2b(p + HDR, 0xffff, 0xffff, 400, 1000, 1010, false);
	assert_int_equal(xcopy(&t, L_A, p, HDR + SEG), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 1010, 400, 2, 1000, 512));
	assert_true(holds(&t, L_A, 512, 1000, 10, 2, 1000, 512));

	write_pattern(&t, L_A, 512, 3000, 400, 3);
	list_hdr(p, 3, 0, 0, 2 * SEG);
	seg_b2b(p + HDR, 0xffff, 0xffff, 400, 3000, 2990, false);
	seg_b2b(p + HDR + SEG, 0xffff, 0xffff, 0, 0, 0, false);
	assert_int_equal(xcopy(&t, L_A, p, HDR + 2 * SEG), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 2990, 400, 3, 3000, 512));
	h_free(t.h);
}

/*
 * Between 4096- and 512-byte blocks: NUMBER OF BLOCKS counts source
 * blocks, or destination blocks with DC; a byte count that is not whole
 * blocks on the other side is UNEXPECTED INEXACT SEGMENT. A DISK BLOCK
 * LENGTH that is not the LUN's is refused.
 */
static void test_copy_block_sizes(void **state)
{
	struct t t = setup();
	uint8_t a[16], big[16], p[HDR + 2 * CSCD + SEG];
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_BIG, big);
	write_pattern(&t, L_BIG, 4096, 10, 3, 4);
	len = one_segment(p, 4, 0, big, 4096, a, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 3, 10, 200, false);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 200, 24, 4, 10, 4096));

	/* DC: 16 destination blocks are 2 source blocks */
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 16, 11, 400, true);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 400, 16, 4, 11, 4096));

	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 3, 10, 600, true);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x26, 0x0a, 0, HDR + 2 * CSCD + 10);
	assert_true(holds(&t, L_A, 512, 600, 8, UINT32_MAX, 0, 512));

	/* the 4 KiB LUN described as 512-byte blocks */
	cscd(p + HDR, big, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 1, 10, 800, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x26, 0x00, 0, HDR + 29);
	/* DISK BLOCK LENGTH 0: the LUN's own */
	cscd(p + HDR, big, 0);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 800, 8, 4, 10, 4096));
	h_free(t.h);
}

/*
 * A hole in the source stays a hole: 256 unwritten blocks of A copied
 * over data on thin LUN B leave B's range reading zeroes and deallocated
 * (no memory), and the written blocks after the hole arrive as data.
 */
static void test_copy_keeps_holes(void **state)
{
	struct t t = setup();
	uint8_t a[16], b[16], p[HDR + 2 * CSCD + SEG];
	struct lun_info li;
	uint64_t run = 0;
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_B, b);
	write_pattern(&t, L_B, 512, 4096, 256, 7);
	write_pattern(&t, L_A, 512, 4352, 16, 8);
	len = one_segment(p, 1, 0, a, 512, b, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 272, 4096, 4096, false);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_B, 512, 4096, 256, UINT32_MAX, 0, 512));
	assert_true(holds(&t, L_B, 512, 4352, 16, 8, 4352, 512));
	assert_int_equal(lun_get(t.h->luns, L_B, &li), 0);
	assert_int_equal(lun_lba_status(t.h->luns, &li, 4096, 256, &run), 0);
	assert_true(run >= 256);
	assert_int_equal(lun_lba_status(t.h->luns, &li, 4352, 16, &run), 1);
	lun_put(t.h->luns, &li);
	h_free(t.h);
}

/* ---- the parameter list ------------------------------------------------- */

static void test_param_list_errors(void **state)
{
	struct t t = setup();
	uint8_t a[16], p[HDR + (MAX_CSCD + 1) * CSCD + (MAX_SEGS + 1) * SEG];
	uint32_t len, i;

	(void)state;
	lun_naa(&t, L_A, a);
	/* PARAMETER LIST LENGTH 0: nothing to do */
	assert_int_equal(xcopy(&t, L_A, NULL, 0), SCSI_GOOD);
	/* shorter than the header */
	len = one_segment(p, 1, 0, a, 512, NULL, 0);
	seg_b2b(p + HDR + CSCD, 0, 0, 8, 0, 100, false);
	xcopy(&t, L_A, p, 15);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* cutting the CSCD descriptor, then the segment descriptor */
	xcopy(&t, L_A, p, HDR + CSCD - 1);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	xcopy(&t, L_A, p, len - 1);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);

	/* LIST ID USAGE 01b is reserved; 11b needs LIST IDENTIFIER 0 */
	p[1] = 1 << 3;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, 1, 4);
	p[1] = 3 << 3;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, 0, 7);
	p[0] = 0;
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	/* reserved bits and bytes of the header; inline data */
	p[1] = 0x40;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, 1, 6);
	p[1] = 0;
	p[5] = 0x10;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, 5, 4);
	p[5] = 0;
	put32(p + 12, 4);
	xcopy(&t, L_A, p, len + 4);
	h_expect_invalid_param(t.h, 12, 7);
	put32(p + 12, 0);

	/* unsupported CSCD and segment descriptor type codes */
	p[HDR] = 0xe0;
	xcopy(&t, L_A, p, len);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x26, 0x07);
	p[HDR] = 0xe4;
	p[HDR + CSCD] = 0x03;
	xcopy(&t, L_A, p, len);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x26, 0x09);
	p[HDR + CSCD] = 0x02;
	/* DESCRIPTOR LENGTH, reserved bits of the segment descriptor */
	put16(p + HDR + CSCD + 2, 0x14);
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, HDR + CSCD + 2, 7);
	put16(p + HDR + CSCD + 2, 0x18);
	p[HDR + CSCD + 1] = 0x04;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, HDR + CSCD + 1, 2);
	p[HDR + CSCD + 1] = 0;
	p[HDR + CSCD + 9] = 0x01;
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, HDR + CSCD + 9, 0);
	p[HDR + CSCD + 9] = 0;
	/* a CSCD list length that is not whole descriptors */
	list_hdr(p, 1, 0, CSCD + 4, SEG);
	cscd(p + HDR, a, 512);
	memset(p + HDR + CSCD, 0xe4, 4);
	seg_b2b(p + HDR + CSCD + 4, 0, 0, 8, 0, 100, false);
	xcopy(&t, L_A, p, HDR + CSCD + 4 + SEG);
	h_expect_invalid_param(t.h, 2, 7);
	/* a segment list length that cuts its last descriptor */
	len = one_segment(p, 1, 0, a, 512, NULL, 0);
	seg_b2b(p + HDR + CSCD, 0, 0, 8, 0, 100, false);
	put32(p + 8, SEG - 2);
	xcopy(&t, L_A, p, len);
	h_expect_invalid_param(t.h, 8, 7);

	/* one CSCD descriptor too many, then one segment descriptor */
	list_hdr(p, 1, 0, (MAX_CSCD + 1) * CSCD, SEG);
	for (i = 0; i <= MAX_CSCD; i++)
		cscd(p + HDR + i * CSCD, a, 512);
	seg_b2b(p + HDR + (MAX_CSCD + 1) * CSCD, 0, 0, 8, 0, 100, false);
	xcopy(&t, L_A, p, HDR + (MAX_CSCD + 1) * CSCD + SEG);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x26, 0x06);
	list_hdr(p, 1, 0, MAX_CSCD * CSCD, SEG);
	seg_b2b(p + HDR + MAX_CSCD * CSCD, 0, 0, 8, 0, 100, false);
	assert_int_equal(xcopy(&t, L_A, p, HDR + MAX_CSCD * CSCD + SEG),
			 SCSI_GOOD);
	list_hdr(p, 1, 0, CSCD, (MAX_SEGS + 1) * SEG);
	for (i = 0; i <= MAX_SEGS; i++)
		seg_b2b(p + HDR + CSCD + i * SEG, 0, 0, 1, i, 100 + i, false);
	xcopy(&t, L_A, p, HDR + CSCD + (MAX_SEGS + 1) * SEG);
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x26, 0x08);
	list_hdr(p, 1, 0, CSCD, MAX_SEGS * SEG);
	assert_int_equal(xcopy(&t, L_A, p, HDR + CSCD + MAX_SEGS * SEG),
			 SCSI_GOOD);
	/* descriptors past MAXIMUM DESCRIPTOR LIST LENGTH */
	list_hdr(p, 1, 0, (MAX_CSCD + 1) * CSCD, (MAX_SEGS + 1) * SEG);
	xcopy(&t, L_A, p, sizeof(p));
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	h_free(t.h);
}

/* ---- copy targets ------------------------------------------------------- */

static void test_copy_target_errors(void **state)
{
	struct t t = setup();
	uint8_t a[16], b[16], ghost[16], p[HDR + 2 * CSCD + 2 * SEG];
	const uint8_t *f;
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_B, b);
	/* LUN 7's WWN, derived like the others: the LUN is not there */
	memcpy(ghost, b, 16);
	ghost[15] = (uint8_t)((ghost[15] & 0xf0) | L_ABSENT);
	write_pattern(&t, L_A, 512, 0, 16, 5);

	/* a CSCD ID past the list: destination index 1 of 1 */
	len = one_segment(p, 1, 0, a, 512, NULL, 0);
	seg_b2b(p + HDR + CSCD, 0, 1, 8, 0, 100, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x02, 0, HDR + CSCD + 6);
	/* a designator no LUN has, one the table has but absent */
	len = one_segment(p, 1, 0, a, 512, ghost, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, 100, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x02, 0, HDR + 2 * CSCD + 6);
	ghost[8] ^= 0x01;
	cscd(p + HDR + CSCD, ghost, 512);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x02, 0, HDR + 2 * CSCD + 6);
	/* a code set other than binary: not a designator of ours */
	cscd(p + HDR + CSCD, b, 512);
	p[HDR + CSCD + 4] = 0x02;
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x02, 0, HDR + 2 * CSCD + 6);
	/* a CSCD that is not a block device */
	cscd(p + HDR + CSCD, b, 512);
	p[HDR + CSCD + 1] = 0x01;
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x03, 0, HDR + CSCD + 1);
	p[HDR + CSCD + 1] = 0;
	/* LU ID TYPE and NUL are obsolete in SPC-4: ignored */
	p[HDR + CSCD + 1] = 0xa0;
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	p[HDR + CSCD + 1] = 0;

	/* source and destination ranges past the end */
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, SMALL_BLOCKS - 7, 100, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 0, HDR + 2 * CSCD + 12);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, SMALL_BLOCKS - 1, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 0, HDR + 2 * CSCD + 20);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, UINT64_MAX - 2, 0, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 0, HDR + 2 * CSCD + 12);
	/* up to the last block is fine */
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, SMALL_BLOCKS - 8, false);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_B, 512, SMALL_BLOCKS - 8, 8, 5, 0, 512));

	/*
	 * Descriptor format: the same range error forwards the destination's
	 * ILLEGAL REQUEST, LBA OUT OF RANGE; the segment number is that of
	 * the second segment, after the first was copied.
	 */
	set_d_sense(&t, L_A);
	list_hdr(p, 1, 0, 2 * CSCD, 2 * SEG);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, 50, false);
	seg_b2b(p + HDR + 2 * CSCD + SEG, 0, 1, 8, 0, SMALL_BLOCKS, false);
	xcopy(&t, L_A, p, HDR + 2 * CSCD + 2 * SEG);
	expect_aborted(&t, 0x00, 0x00, 1, HDR + 2 * CSCD + SEG + 20);
	f = forwarded(&t);
	assert_int_equal(f[2] & 0x0f, 0x2); /* destination */
	assert_int_equal(f[3], SCSI_CHECK_CONDITION);
	assert_int_equal(f[4], 0x70);
	assert_int_equal(f[4 + 2] & 0x0f, SK_ILLEGAL_REQUEST);
	assert_int_equal(f[4 + 12], 0x21);
	assert_true(holds(&t, L_B, 512, 50, 8, 5, 0, 512));

	/* a segment past MAXIMUM SEGMENT LENGTH (4097 4 KiB blocks) */
	lun_naa(&t, L_BIG, b);
	len = one_segment(p, 1, 0, b, 4096, NULL, 0);
	seg_b2b(p + HDR + CSCD, 0, 0, MAX_SEG_BYTES / 4096 + 1, 0, 0, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x26, 0x00, 0, HDR + CSCD + 10);

	/* an offline destination: forwarded NOT READY */
	lun_naa(&t, L_B, b);
	len = one_segment(p, 1, 0, a, 512, b, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, 100, false);
	assert_int_equal(lun_set_state(t.h->luns, L_B, LUN_OFFLINE), 0);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 0, HDR + 2 * CSCD + 6);
	f = forwarded(&t);
	assert_int_equal(f[4 + 2] & 0x0f, SK_NOT_READY);
	assert_int_equal(f[4 + 12], 0x04);
	assert_int_equal(lun_set_state(t.h->luns, L_B, LUN_ONLINE), 0);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	/* a removed one is not reachable */
	assert_int_equal(lun_remove(t.h->luns, L_B), 0);
	clear_ua(&t, L_A);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x0d, 0x02, 0, HDR + 2 * CSCD + 6);
	h_free(t.h);
}

/* PERSISTENT RESERVE OUT from @nexus: REGISTER @key, RESERVE @type. */
static void reserve(struct t *t, uint32_t nexus, uint32_t lun, uint64_t key,
		    uint8_t type)
{
	uint8_t pl[24] = {0};

	put64(pl + 8, key);
	assert_int_equal(x_exec(t, nexus, lun,
				H_CDB(0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0),
				SCSI_DIR_WRITE, pl, sizeof(pl)),
			 SCSI_GOOD);
	memset(pl, 0, sizeof(pl));
	put64(pl, key);
	assert_int_equal(x_exec(t, nexus, lun,
				H_CDB(0x5f, 0x01, type, 0, 0, 0, 0, 0, 24, 0),
				SCSI_DIR_WRITE, pl, sizeof(pl)),
			 SCSI_GOOD);
}

/*
 * Another I_T nexus holds Write Exclusive on LUN B: a copy may read it but
 * not write it (RESERVATION CONFLICT forwarded); the holder may do both.
 * Exclusive Access on LUN A, the LUN the command is sent to, blocks
 * nothing that does not touch A.
 */
static void test_reservations(void **state)
{
	struct t t = setup();
	uint32_t other = next_nexus++;
	uint8_t a[16], b[16], big[16], p[HDR + 2 * CSCD + SEG];
	const uint8_t *f;
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_B, b);
	lun_naa(&t, L_BIG, big);
	write_pattern(&t, L_B, 512, 0, 8, 6);
	reserve(&t, other, L_B, 0xabcd, 1);
	set_d_sense(&t, L_A);

	len = one_segment(p, 1, 0, a, 512, b, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, 100, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 0, HDR + 2 * CSCD + 6);
	f = forwarded(&t);
	assert_int_equal(f[2] & 0x0f, 0x2);
	assert_int_equal(f[3], SCSI_RESERVATION_CONFLICT);
	assert_int_equal(f[1], 2); /* no sense data */
	seg_b2b(p + HDR + 2 * CSCD, 1, 0, 8, 0, 100, false);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_A, 512, 100, 8, 6, 0, 512));
	/* the holder writes */
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 100, 200, false);
	t.nexus = other;
	clear_ua(&t, L_A);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	assert_true(holds(&t, L_B, 512, 200, 8, 6, 0, 512));

	/* EA on LUN A by the other nexus: a copy B -> BIG sent to A runs */
	reserve(&t, other, L_A, 0x1234, 3);
	t.nexus = next_nexus++;
	len = one_segment(p, 1, 0, b, 512, big, 4096);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 8, 0, 0, false);
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	seg_b2b(p + HDR + 2 * CSCD, 0xffff, 1, 8, 0, 0, false);
	xcopy(&t, L_A, p, len);
	h_expect_sense(t.h, SK_COPY_ABORTED, 0x00, 0x00);
	/* RECEIVE COPY RESULTS is not allowed through Exclusive Access */
	{
		uint8_t buf[64];

		rcr(&t, t.nexus, L_A, 0x03, 0, buf, sizeof(buf));
		assert_int_equal(t.h->cmd.status, SCSI_RESERVATION_CONFLICT);
	}
	scsi_target_fini(&t.h->tgt);
	h_free(t.h);
}

/* ---- RECEIVE COPY RESULTS ------------------------------------------------ */

static void test_operating_parameters(void **state)
{
	struct t t = setup();
	uint8_t buf[128];

	(void)state;
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x03, 0, buf, sizeof(buf)),
			 SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, 46);
	assert_int_equal(get32(buf), 42);
	assert_int_equal(buf[4] & 0x01, 1); /* SNLID */
	assert_int_equal(get16(buf + 8), MAX_CSCD);
	assert_int_equal(get16(buf + 10), MAX_SEGS);
	assert_int_equal(get32(buf + 12), MAX_LIST);
	assert_int_equal(get32(buf + 16), MAX_SEG_BYTES);
	assert_int_equal(get32(buf + 20), 0); /* no inline data */
	assert_int_equal(get32(buf + 24), 0); /* no held data */
	assert_true(get16(buf + 34) >= 1);
	assert_true(buf[36] >= 1);
	assert_int_equal(buf[43], 2);
	assert_int_equal(buf[44], 0x02);
	assert_int_equal(buf[45], 0xe4);
	/* cut at the allocation length; the LIST IDENTIFIER is ignored */
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x03, 9, buf, 10), SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, 10);
	assert_int_equal(get32(buf), 42);
	/* an unknown service action, an absent LUN */
	rcr(&t, t.nexus, L_A, 0x02, 0, buf, sizeof(buf));
	h_expect_invalid_cdb(t.h, 1, 4);
	rcr(&t, t.nexus, L_ABSENT, 0x03, 0, buf, sizeof(buf));
	h_expect_sense(t.h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	h_free(t.h);
}

/* COPY STATUS of @list_id: status, segments, bytes (units 0). */
static void expect_status(struct t *t, uint32_t lun, uint8_t list_id,
			  uint8_t status, uint16_t segments, uint32_t bytes)
{
	uint8_t buf[32];

	assert_int_equal(rcr(t, t->nexus, lun, 0x00, list_id, buf, sizeof(buf)),
			 SCSI_GOOD);
	assert_int_equal(t->h->cmd.data_len, 12);
	assert_int_equal(get32(buf), 8);
	assert_int_equal(buf[4] & 0x7f, status);
	assert_int_equal(get16(buf + 5), segments);
	assert_int_equal(buf[7], 0);
	assert_int_equal(get32(buf + 8), bytes);
}

static void expect_no_record(struct t *t, uint32_t nexus, uint32_t lun,
			     uint8_t sa, uint8_t list_id)
{
	uint8_t buf[128];

	rcr(t, nexus, lun, sa, list_id, buf, sizeof(buf));
	h_expect_invalid_cdb(t->h, 2, 7);
}

/*
 * COPY STATUS and FAILED SEGMENT DETAILS: nothing before a copy; after a
 * success, completed with its segments and bytes (no failure details);
 * after a failed second segment, completed with errors, one segment and
 * its bytes, the failure's sense data as the command returned it. Only
 * the same I_T nexus and LUN see a record; LIST ID USAGE 10b and 11b keep
 * none; a list identifier reused after its copy ended gets a new record.
 */
static void test_copy_status(void **state)
{
	struct t t = setup();
	uint8_t a[16], b[16], p[HDR + 2 * CSCD + 2 * SEG], buf[128];
	uint8_t sense[SCSI_SENSE_MAX];
	uint8_t sense_len;
	uint32_t len;

	(void)state;
	lun_naa(&t, L_A, a);
	lun_naa(&t, L_B, b);
	expect_no_record(&t, t.nexus, L_A, 0x00, 7);

	list_hdr(p, 7, 0, 2 * CSCD, 2 * SEG);
	cscd(p + HDR, a, 512);
	cscd(p + HDR + CSCD, b, 512);
	seg_b2b(p + HDR + 2 * CSCD, 0, 1, 100, 0, 0, false);
	seg_b2b(p + HDR + 2 * CSCD + SEG, 0, 1, 20, 500, 500, false);
	len = HDR + 2 * CSCD + 2 * SEG;
	assert_int_equal(xcopy(&t, L_A, p, len), SCSI_GOOD);
	expect_status(&t, L_A, 7, 0x01, 2, 120 * 512);
	/* asking again gives the same answer */
	expect_status(&t, L_A, 7, 0x01, 2, 120 * 512);
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x04, 7, buf, sizeof(buf)),
			 SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, 4);
	assert_int_equal(get32(buf), 0);
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x01, 7, buf, sizeof(buf)),
			 SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, 4);
	assert_int_equal(get32(buf), 0);
	/* another nexus, another LUN, another list identifier */
	expect_no_record(&t, next_nexus++, L_A, 0x00, 7);
	expect_no_record(&t, t.nexus, L_B, 0x00, 7);
	expect_no_record(&t, t.nexus, L_A, 0x00, 8);
	expect_no_record(&t, t.nexus, L_A, 0x04, 8);

	/* the second segment fails: past the end of the source */
	list_hdr(p, 8, 0, 2 * CSCD, 2 * SEG);
	seg_b2b(p + HDR + 2 * CSCD + SEG, 0, 1, 20, SMALL_BLOCKS - 1, 0, false);
	xcopy(&t, L_A, p, len);
	expect_aborted(&t, 0x00, 0x00, 1, HDR + 2 * CSCD + SEG + 12);
	sense_len = t.h->cmd.sense_len;
	memcpy(sense, t.h->cmd.sense, sense_len);
	expect_status(&t, L_A, 8, 0x02, 1, 100 * 512);
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x04, 8, buf, sizeof(buf)),
			 SCSI_GOOD);
	assert_int_equal(t.h->cmd.data_len, 60 + sense_len);
	assert_int_equal(get32(buf), 56 + sense_len);
	assert_int_equal(buf[56], 0x02);
	assert_int_equal(get16(buf + 58), sense_len);
	assert_memory_equal(buf + 60, sense, sense_len);
	/* list 7 is still there, unchanged */
	expect_status(&t, L_A, 7, 0x01, 2, 120 * 512);

	/* list 7 again, now one segment: the new copy's record */
	list_hdr(p, 7, 0, 2 * CSCD, SEG);
	assert_int_equal(xcopy(&t, L_A, p, HDR + 2 * CSCD + SEG), SCSI_GOOD);
	expect_status(&t, L_A, 7, 0x01, 1, 100 * 512);

	/* LIST ID USAGE 10b: nothing held after the copy; 11b: never */
	list_hdr(p, 9, 2, 2 * CSCD, SEG);
	assert_int_equal(xcopy(&t, L_A, p, HDR + 2 * CSCD + SEG), SCSI_GOOD);
	expect_no_record(&t, t.nexus, L_A, 0x00, 9);
	list_hdr(p, 0, 3, 2 * CSCD, SEG);
	assert_int_equal(xcopy(&t, L_A, p, HDR + 2 * CSCD + SEG), SCSI_GOOD);
	expect_no_record(&t, t.nexus, L_A, 0x00, 0);
	h_free(t.h);
}

/*
 * The records are bounded: after 100 held copies from one nexus the
 * oldest are gone and the newest 64 (TOTAL CONCURRENT COPIES) answer.
 */
static void test_records_bounded(void **state)
{
	struct t t = setup();
	uint8_t p[HDR + SEG], buf[64];
	unsigned int i, total;

	(void)state;
	assert_int_equal(rcr(&t, t.nexus, L_A, 0x03, 0, buf, sizeof(buf)),
			 SCSI_GOOD);
	total = get16(buf + 34);
	assert_true(total < 100);
	for (i = 0; i < 100; i++) {
		list_hdr(p, (uint8_t)i, 0, 0, SEG);
		seg_b2b(p + HDR, 0xffff, 0xffff, 1, i, 1000 + i, false);
		assert_int_equal(xcopy(&t, L_A, p, sizeof(p)), SCSI_GOOD);
	}
	expect_no_record(&t, t.nexus, L_A, 0x00, 0);
	expect_no_record(&t, t.nexus, L_A, 0x00, (uint8_t)(99 - total));
	expect_status(&t, L_A, (uint8_t)(100 - total), 0x01, 1, 512);
	expect_status(&t, L_A, 99, 0x01, 1, 512);
	h_free(t.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_between_luns),
		cmocka_unit_test(test_copy_within_lun),
		cmocka_unit_test(test_copy_block_sizes),
		cmocka_unit_test(test_copy_keeps_holes),
		cmocka_unit_test(test_param_list_errors),
		cmocka_unit_test(test_copy_target_errors),
		cmocka_unit_test(test_reservations),
		cmocka_unit_test(test_operating_parameters),
		cmocka_unit_test(test_copy_status),
		cmocka_unit_test(test_records_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
