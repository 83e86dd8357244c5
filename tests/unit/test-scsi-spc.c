// SPDX-License-Identifier: MIT
/*
 * The SPC-4 commands as an initiator sees them: INQUIRY and its VPD pages
 * parsed field by field, REPORT LUNS at 16,384 LUNs, REQUEST SENSE, MODE
 * SENSE/SELECT with every rejection path, START STOP UNIT, PREVENT ALLOW
 * MEDIUM REMOVAL, REPORT SUPPORTED OPERATION CODES against the table, and
 * REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scsi-harness.h"
#include "scsi/scsi_i.h"

#define GIB (1ull << 30)

static struct harness *one_lun(void)
{
	struct harness *h = h_new_luns(64, 4, GIB);

	h_clear_ua(h, 0);
	return h;
}

/*
 * One ALUA port group holding port 1, for the tests that walk the whole
 * opcode table: REPORT TARGET PORT GROUPS is offered only with ALUA.
 */
static struct scsi_alua one_group = {
	.ngroups = 1,
	.nports = 1,
	.groups = {{.name = "a", .id = 1}},
};

static struct harness *one_lun_alua(void)
{
	struct harness *h = one_lun();

	h->tgt.alua = &one_group;
	return h;
}

static uint8_t tur(struct harness *h, uint32_t lun)
{
	return h_exec(h, lun, H_CDB(0, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
}

static uint8_t inquiry(struct harness *h, uint32_t lun, bool evpd, uint8_t page,
		       uint16_t alloc, void *buf, size_t len)
{
	uint8_t cdb[6] = {0x12, evpd, page};

	put_be16(cdb + 3, alloc);
	return h_exec(h, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf, len);
}

/* ---- TEST UNIT READY, REQUEST SENSE ---------------------------------- */

static void test_test_unit_ready(void **state)
{
	struct harness *h = one_lun();

	(void)state;
	tur(h, 0);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	h_exec(h, 0, H_CDB(0, 0, 0, 0, 1, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 4, 0);
	h_free(h);
}

static void test_request_sense(void **state)
{
	struct harness *h = h_new_luns(64, 4, GIB);
	uint8_t buf[252];
	struct h_sense s;

	(void)state;
	/* a pending UA comes back as data, and is gone afterwards */
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 18);
	assert_true(h_sense_parse(buf, 18, &s));
	assert_false(s.descriptor);
	assert_int_equal(s.key, SK_UNIT_ATTENTION);
	assert_int_equal(s.asc, 0x29);
	tur(h, 0);
	h_expect_good(h);
	/* nothing pending: NO SENSE, in either format */
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.key, SK_NO_SENSE);
	assert_int_equal(s.asc, 0);
	h_exec(h, 0, H_CDB(0x03, 1, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	assert_int_equal(h->cmd.data_len, 8);
	assert_int_equal(buf[0], 0x72);
	/* allocation length 0 and short */
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 0, 0), SCSI_DIR_READ, buf, 252);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 4, 0), SCSI_DIR_READ, buf, 252);
	assert_int_equal(h->cmd.data_len, 4);
	/* a stopped LUN says so */
	assert_int_equal(lun_set_state(h->luns, 0, LUN_STOPPED), 0);
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	h_expect_good(h);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.key, SK_NOT_READY);
	assert_int_equal(s.ascq, 0x02);
	assert_int_equal(lun_set_state(h->luns, 0, LUN_ONLINE), 0);
	/* informational exceptions TEST, DEXCPT off: a false failure */
	assert_int_equal(
		lun_mode_set(h->luns, 0, LUN_MODE_TEST, LUN_NEXUS_NONE), 0);
	h_clear_ua(h, 0);
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.key, SK_NO_SENSE);
	assert_int_equal(s.asc, 0x5d);
	assert_int_equal(s.ascq, 0xff);
	assert_int_equal(lun_mode_set(h->luns, 0,
				      LUN_MODE_TEST | LUN_MODE_DEXCPT,
				      LUN_NEXUS_NONE),
			 0);
	h_clear_ua(h, 0);
	h_exec(h, 0, H_CDB(0x03, 0, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.asc, 0);
	/* reserved bits */
	h_exec(h, 0, H_CDB(0x03, 0x02, 0, 0, 252, 0), SCSI_DIR_READ, buf, 252);
	h_expect_invalid_cdb(h, 1, 1);
	h_free(h);
}

/* ---- INQUIRY ----------------------------------------------------------- */

static void test_inquiry_standard(void **state)
{
	struct harness *h = one_lun();
	uint8_t buf[4096];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	inquiry(h, 0, false, 0, 4096, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 96);
	assert_int_equal(buf[0], 0x00); /* direct access, connected */
	assert_int_equal(buf[1], 0x00); /* not removable */
	assert_int_equal(buf[2], 0x06); /* SPC-4 */
	assert_int_equal(buf[3], 0x12); /* HISUP, format 2 */
	assert_int_equal(buf[4], 96 - 5);
	assert_int_equal(buf[5] & 0x30, 0); /* no ALUA */
	assert_int_equal(buf[5] & 0x08, 0x08); /* 3PC: EXTENDED COPY */
	assert_int_equal(buf[7] & 0x02, 0x02); /* CMDQUE */
	assert_memory_equal(buf + 8, "SDSWARM ", 8);
	assert_memory_equal(buf + 16, "VDISK           ", 16);
	assert_memory_equal(buf + 32, "0001", 4);
	assert_int_equal(get_be16(buf + 58), 0x00a0);
	assert_int_equal(get_be16(buf + 60), 0x0460);
	assert_int_equal(buf[96], 0xee);

	/* allocation length: 36 (the kernel's first try), 5, 0 */
	memset(buf, 0xee, sizeof(buf));
	inquiry(h, 0, false, 0, 36, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 36);
	assert_int_equal(buf[36], 0xee);
	inquiry(h, 0, false, 0, 5, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 5);
	inquiry(h, 0, false, 0, 0, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	/* the largest allocation length into a 40-byte buffer */
	memset(buf, 0xee, sizeof(buf));
	inquiry(h, 0, false, 0, 0xffff, buf, 40);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 40);
	assert_int_equal(buf[40], 0xee);

	/* a page code without EVPD; the obsolete CMDDT bit */
	inquiry(h, 0, false, 0x80, 96, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 7);
	h_exec(h, 0, H_CDB(0x12, 0x02, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_invalid_cdb(h, 1, 1);
	h_free(h);
}

/* Product id and vendor come space padded from the group; short ones too. */
static void test_inquiry_identity_padding(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group g = h_group("x", 0, 1, GIB);
	uint8_t buf[96];

	(void)state;
	memcpy(g.vendor, "AB", 3);
	memcpy(g.product, "0123456789ABCDEF", 17);
	memcpy(g.revision, "", 1);
	h_add_group(h, &g);
	inquiry(h, 0, false, 0, 96, buf, sizeof(buf));
	h_expect_good(h);
	assert_memory_equal(buf + 8, "AB      ", 8);
	assert_memory_equal(buf + 16, "0123456789ABCDEF", 16);
	assert_memory_equal(buf + 32, "    ", 4);
	h_free(h);
}

static void test_vpd_supported_and_each(void **state)
{
	struct harness *h = one_lun();
	uint8_t list[64], buf[1024];
	unsigned int i, n;

	(void)state;
	inquiry(h, 0, true, 0x00, sizeof(list), list, sizeof(list));
	h_expect_good(h);
	assert_int_equal(list[0], 0);
	assert_int_equal(list[1], 0);
	n = get_be16(list + 2);
	assert_int_equal(h->cmd.data_len, 4 + n);
	assert_memory_equal(
		list + 4, ((uint8_t[]){0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2}), 6);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		inquiry(h, 0, true, list[4 + i], sizeof(buf), buf, sizeof(buf));
		h_expect_good(h);
		assert_int_equal(buf[1], list[4 + i]);
		assert_int_equal(h->cmd.data_len, 4u + get_be16(buf + 2));
		/* a 4-byte allocation gets the header: the length to ask */
		inquiry(h, 0, true, list[4 + i], 4, buf, sizeof(buf));
		assert_int_equal(h->cmd.data_len, 4);
	}
	/* pages not supported */
	inquiry(h, 0, true, 0x86, 255, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 7);
	inquiry(h, 0, true, 0x89, 255, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 7);
	h_free(h);
}

static void test_vpd_serial(void **state)
{
	struct harness *h = one_lun();
	char want[LUN_SERIAL_LEN + 1], other[LUN_SERIAL_LEN + 1];
	uint8_t buf[64];

	(void)state;
	inquiry(h, 3, true, 0x80, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(lun_serial(h->luns, 3, want, sizeof(want)),
			 LUN_SERIAL_LEN);
	assert_int_equal(get_be16(buf + 2), LUN_SERIAL_LEN);
	assert_memory_equal(buf + 4, want, LUN_SERIAL_LEN);
	inquiry(h, 2, true, 0x80, sizeof(buf), buf, sizeof(buf));
	lun_serial(h->luns, 2, other, sizeof(other));
	assert_memory_equal(buf + 4, other, LUN_SERIAL_LEN);
	assert_memory_not_equal(want, other, LUN_SERIAL_LEN);
	h_free(h);
}

/* One parsed designation descriptor of VPD page 83h. */
struct desig {
	uint8_t proto, code_set, piv, assoc, type, len;
	const uint8_t *d;
};

static unsigned int parse_devid(const uint8_t *p, size_t len, struct desig *out,
				unsigned int max)
{
	size_t off = 4, end = 4 + get_be16(p + 2);
	unsigned int n = 0;

	assert_int_equal(end, len);
	while (off < end) {
		assert_true(off + 4 <= end);
		assert_true(n < max);
		out[n].proto = p[off] >> 4;
		out[n].code_set = p[off] & 0x0f;
		out[n].piv = p[off + 1] >> 7;
		out[n].assoc = (p[off + 1] >> 4) & 3;
		out[n].type = p[off + 1] & 0x0f;
		out[n].len = p[off + 3];
		out[n].d = p + off + 4;
		off += 4 + p[off + 3];
		assert_true(off <= end);
		n++;
	}
	return n;
}

static const struct desig *find_desig(const struct desig *d, unsigned int n,
				      uint8_t type, uint8_t assoc)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (d[i].type == type && d[i].assoc == assoc)
			return &d[i];
	return NULL;
}

static void test_vpd_device_identification(void **state)
{
	struct harness *h = one_lun();
	static const char tname[] = "iqn.2025-01.org.sdswarm:target0";
	static const char pname[] = "iqn.2025-01.org.sdswarm:target0,t,0x0001";
	uint8_t buf[1024];
	struct desig d[8];
	const struct desig *x;
	struct lun_info li;
	unsigned int n;

	(void)state;
	assert_int_equal(lun_get(h->luns, 2, &li), 0);
	lun_put(h->luns, &li);

	/* the harness target: port 1, group 0, no names, no protocol */
	inquiry(h, 2, true, 0x83, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	n = parse_devid(buf, h->cmd.data_len, d, 8);
	assert_int_equal(n, 3);
	x = find_desig(d, n, 3, 0); /* NAA, logical unit */
	assert_non_null(x);
	assert_int_equal(x->code_set, 1);
	assert_int_equal(x->piv, 0);
	assert_int_equal(x->len, 16);
	assert_int_equal(x->d[0] >> 4, 6); /* NAA 6 */
	assert_int_equal(get_be64(x->d), li.wwn_hi);
	assert_int_equal(get_be64(x->d + 8), li.wwn_lo);
	x = find_desig(d, n, 4, 1); /* relative target port */
	assert_non_null(x);
	assert_int_equal(x->len, 4);
	assert_int_equal(get_be16(x->d + 2), 1);
	assert_int_equal(x->piv, 0);
	x = find_desig(d, n, 5, 1); /* target port group */
	assert_non_null(x);
	assert_int_equal(get_be16(x->d + 2), 0);

	/* an iSCSI front end's target: names, port 3, group 7, PIV */
	h->tgt.target_name = tname;
	h->tgt.port_name = pname;
	h->tgt.port_id = 3;
	h->tgt.tpg = 7;
	h->tgt.protocol_id = SCSI_PROTOCOL_ISCSI;
	h->tgt.protocol_valid = true;
	inquiry(h, 2, true, 0x83, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	n = parse_devid(buf, h->cmd.data_len, d, 8);
	assert_int_equal(n, 5);
	x = find_desig(d, n, 3, 0);
	assert_int_equal(x->piv, 0); /* LU designators: never */
	assert_int_equal(x->proto, 0);
	x = find_desig(d, n, 4, 1);
	assert_int_equal(get_be16(x->d + 2), 3);
	assert_int_equal(x->piv, 1);
	assert_int_equal(x->proto, 5);
	x = find_desig(d, n, 5, 1);
	assert_int_equal(get_be16(x->d + 2), 7);
	x = find_desig(d, n, 8, 2); /* SCSI name, target device */
	assert_non_null(x);
	assert_int_equal(x->code_set, 3);
	assert_int_equal(x->piv, 1);
	assert_int_equal(x->len % 4, 0);
	assert_true(x->len > strlen(tname));
	assert_string_equal((const char *)x->d, tname);
	x = find_desig(d, n, 8, 1); /* SCSI name, target port */
	assert_non_null(x);
	assert_int_equal(x->len % 4, 0);
	assert_string_equal((const char *)x->d, pname);

	/* no relative port id configured: no such designator */
	h->tgt.port_id = 0;
	inquiry(h, 2, true, 0x83, sizeof(buf), buf, sizeof(buf));
	n = parse_devid(buf, h->cmd.data_len, d, 8);
	assert_int_equal(n, 4);
	assert_null(find_desig(d, n, 4, 1));
	/* distinct LUNs, distinct WWNs */
	inquiry(h, 1, true, 0x83, sizeof(buf), buf, sizeof(buf));
	n = parse_devid(buf, h->cmd.data_len, d, 8);
	x = find_desig(d, n, 3, 0);
	assert_int_not_equal(get_be64(x->d + 8), li.wwn_lo);
	h_free(h);
}

static void test_vpd_block_pages(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group thin = h_group("thin", 0, 1, GIB);
	struct lun_group full = h_group("full", 1, 1, GIB);
	uint8_t b[64];

	(void)state;
	thin.phys_exp = 3;
	full.thin = false;
	full.lbprz = false;
	full.rotation_rate = 7200;
	full.max_unmap_blocks = 0;
	h_add_group(h, &thin);
	h_add_group(h, &full);

	inquiry(h, 0, true, 0xb0, sizeof(b), b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(get_be16(b + 2), 0x3c);
	assert_int_equal(b[4] & 1, 0); /* WSNZ */
	assert_int_equal(b[5], 1); /* COMPARE AND WRITE */
	assert_int_equal(get_be16(b + 6), 8); /* 4 KiB physical */
	assert_int_equal(get_be32(b + 8), 65535);
	assert_int_equal(get_be32(b + 12), 128);
	assert_int_equal(get_be32(b + 20), 1u << 22);
	assert_int_equal(get_be32(b + 24), 256);
	assert_int_equal(get_be32(b + 28), store_granularity(h->store) / 512);
	assert_int_equal(get_be32(b + 32), 0x80000000u); /* UGAVALID, 0 */
	assert_int_equal(get_be64(b + 36), 1u << 22);

	inquiry(h, 1, true, 0xb0, sizeof(b), b, sizeof(b));
	assert_int_equal(get_be32(b + 20), 0); /* no UNMAP */
	assert_int_equal(get_be32(b + 24), 0);
	assert_int_equal(get_be32(b + 32), 0);
	assert_int_equal(get_be16(b + 6), 1);

	inquiry(h, 0, true, 0xb1, sizeof(b), b, sizeof(b));
	assert_int_equal(get_be16(b + 2), 0x3c);
	assert_int_equal(get_be16(b + 4), 1); /* non-rotating */
	inquiry(h, 1, true, 0xb1, sizeof(b), b, sizeof(b));
	assert_int_equal(get_be16(b + 4), 7200);

	inquiry(h, 0, true, 0xb2, sizeof(b), b, sizeof(b));
	assert_int_equal(get_be16(b + 2), 4);
	assert_int_equal(b[5], 0x80 | 0x40 | 0x20 | 0x04); /* LBPU WS WS10 RZ */
	assert_int_equal(b[6] & 7, 2); /* thin */
	inquiry(h, 1, true, 0xb2, sizeof(b), b, sizeof(b));
	assert_int_equal(b[5], 0);
	assert_int_equal(b[6] & 7, 0); /* full */
	h_free(h);
}

/* A thin group with no UNMAP limits reports "no limit", as sbc.c reads 0. */
static void test_vpd_block_limits_unlimited(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group g = h_group("g", 0, 1, GIB);
	uint8_t b[64];

	(void)state;
	g.max_unmap_blocks = 0;
	g.max_unmap_desc = 0;
	g.max_ws_blocks = 0;
	h_add_group(h, &g);
	inquiry(h, 0, true, 0xb0, sizeof(b), b, sizeof(b));
	assert_int_equal(get_be32(b + 20), UINT32_MAX);
	assert_int_equal(get_be32(b + 24), UINT32_MAX);
	assert_int_equal(get_be64(b + 36), 0);
	h_free(h);
}

/* ---- REPORT LUNS --------------------------------------------------------- */

static uint8_t report_luns(struct harness *h, uint32_t lun, uint8_t sel,
			   uint32_t alloc, void *buf, size_t len)
{
	uint8_t cdb[12] = {0xa0, 0, sel};

	put_be32(cdb + 6, alloc);
	return h_exec(h, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf, len);
}

static void test_report_luns_small(void **state)
{
	struct harness *h = one_lun();
	uint8_t buf[256];
	uint32_t field;
	unsigned int i;

	(void)state;
	assert_int_equal(lun_add(h->luns, 40, 0), 40);
	report_luns(h, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 5 * 8);
	assert_int_equal(get_be32(buf + 4), 0);
	assert_int_equal(h->cmd.data_len, 8 + 5 * 8);
	for (i = 0; i < 5; i++) {
		assert_int_equal(scsi_lun_decode(buf + 8 + 8 * i, &field), 0);
		assert_int_equal(field, i < 4 ? i : 40);
	}
	report_luns(h, 0, 2, sizeof(buf), buf, sizeof(buf));
	assert_int_equal(get_be32(buf), 5 * 8);
	/* well known LUNs only: none */
	report_luns(h, 0, 1, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 0);
	assert_int_equal(h->cmd.data_len, 8);
	/* other SELECT REPORT values */
	report_luns(h, 0, 3, sizeof(buf), buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 7);
	report_luns(h, 0, 0x10, sizeof(buf), buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 7);
	/* allocation length under 16: an error; 16: one entry, full length */
	report_luns(h, 0, 0, 15, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 6, 7);
	report_luns(h, 0, 0, 0, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 6, 7);
	report_luns(h, 0, 0, 16, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 16);
	assert_int_equal(get_be32(buf), 5 * 8);
	/* a cut mid-entry copies the part before the cut */
	memset(buf, 0xee, sizeof(buf));
	report_luns(h, 0, 0, 20, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 20);
	assert_int_equal(buf[20], 0xee);
	/* answered for an absent LUN, and does not take a UA */
	report_luns(h, 33, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	tur(h, 1);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x29, 0x01);
	h_free(h);
}

/*
 * 20,000 LUNs in the table, a view of 16,384 of them starting at table LUN
 * 1000: every view LUN reported, peripheral addressing up to 255, flat
 * space above, the right gaps, and truncation that keeps the full length.
 */
static void test_report_luns_16384(void **state)
{
	const uint32_t n = 16384, len = 8 + 8 * n;
	struct harness *h = h_new_luns(32768, 20000, GIB);
	uint8_t *buf = malloc(len + 64);
	uint32_t i, lun;

	(void)state;
	assert_non_null(buf);
	h_set_view(h, 1000, n);
	report_luns(h, 0, 0, len + 64, buf, len + 64);
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 8 * n);
	assert_int_equal(h->cmd.data_len, len);
	for (i = 0; i < n; i++) {
		const uint8_t *e = buf + 8 + 8 * i;

		assert_int_equal(scsi_lun_decode(e, &lun), 0);
		assert_int_equal(lun, i);
		assert_int_equal(e[0] & 0xc0, i < 256 ? 0x00 : 0x40);
	}
	assert_memory_equal(buf + 8 + 8 * 255, ((uint8_t[8]){0x00, 0xff}), 8);
	assert_memory_equal(buf + 8 + 8 * 256, ((uint8_t[8]){0x41, 0x00}), 8);
	assert_memory_equal(buf + 8 + 8 * 16383, ((uint8_t[8]){0x7f, 0xff}), 8);

	/* truncated by the allocation length, by the transfer length */
	memset(buf, 0xee, len);
	report_luns(h, 0, 0, 8 + 8 * 100, buf, len);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 8 + 8 * 100);
	assert_int_equal(get_be32(buf), 8 * n);
	assert_int_equal(buf[8 + 8 * 100], 0xee);
	report_luns(h, 0, 0, len, buf, 4096);
	assert_int_equal(h->cmd.data_len, 4096);
	assert_int_equal(get_be32(buf), 8 * n);

	/* gaps: view LUNs 300 and 16383 removed */
	assert_int_equal(lun_remove(h->luns, 1000 + 300), 0);
	assert_int_equal(lun_remove(h->luns, 1000 + 16383), 0);
	report_luns(h, 0, 0, len, buf, len);
	assert_int_equal(get_be32(buf), 8 * (n - 2));
	assert_int_equal(scsi_lun_decode(buf + 8 + 8 * 299, &lun), 0);
	assert_int_equal(lun, 299);
	assert_int_equal(scsi_lun_decode(buf + 8 + 8 * 300, &lun), 0);
	assert_int_equal(lun, 301);
	assert_int_equal(scsi_lun_decode(buf + 8 + 8 * (n - 3), &lun), 0);
	assert_int_equal(lun, 16382);

	/* no view: table LUNs 0..16383 (1300 is gone), the most one can name */
	h->use_view = false;
	report_luns(h, 0, 0, len, buf, len);
	assert_int_equal(get_be32(buf), 8 * (n - 1));
	assert_int_equal(scsi_lun_decode(buf + 8 + 8 * (n - 2), &lun), 0);
	assert_int_equal(lun, 16383);
	h_free(h);
	free(buf);
}

/* ---- MODE SENSE ---------------------------------------------------------- */

static uint8_t mode_sense6(struct harness *h, uint8_t b1, uint8_t page,
			   uint8_t sub, uint8_t alloc, void *buf, size_t len)
{
	return h_exec(h, 0, H_CDB(0x1a, b1, page, sub, alloc, 0), SCSI_DIR_READ,
		      buf, len);
}

static uint8_t mode_sense10(struct harness *h, uint8_t b1, uint8_t page,
			    uint16_t alloc, void *buf, size_t len)
{
	uint8_t cdb[10] = {0x5a, b1, page};

	put_be16(cdb + 7, alloc);
	return h_exec(h, 0, cdb, sizeof(cdb), SCSI_DIR_READ, buf, len);
}

/* The page with code @code in mode data of @len bytes from @off, or NULL. */
static const uint8_t *find_page(const uint8_t *p, size_t off, size_t len,
				uint8_t code)
{
	while (off + 2 <= len) {
		if ((p[off] & 0x3f) == code)
			return p + off;
		off += 2 + p[off + 1];
	}
	return NULL;
}

static void test_mode_sense_all(void **state)
{
	struct harness *h = one_lun();
	uint8_t b[255];
	const uint8_t *pg;

	(void)state;
	mode_sense6(h, 0, 0x3f, 0, 255, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 4 + 8 + 20 + 12 + 12);
	assert_int_equal(b[0], h->cmd.data_len - 1);
	assert_int_equal(b[1], 0);
	assert_int_equal(b[2], 0x10); /* DPOFUA, not WP */
	assert_int_equal(b[3], 8);
	assert_int_equal(get_be32(b + 4), GIB / 512);
	assert_int_equal(get_be24(b + 9), 512);
	assert_int_equal(b[12], 0x08);
	assert_int_equal(b[13], 0x12);
	assert_int_equal(b[14] & 0x05, 0x04); /* WCE, not RCD */
	assert_int_equal(b[32], 0x0a);
	assert_int_equal(b[33], 0x0a);
	assert_int_equal(b[34] & 0x04, 0); /* D_SENSE off */
	assert_int_equal(b[44], 0x1c);
	assert_int_equal(b[45], 0x0a);
	assert_int_equal(b[47] & 0x0f, 6); /* MRIE */
	/* subpage FFh: the same pages (none has subpages) */
	mode_sense6(h, 0, 0x3f, 0xff, 255, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 56);
	/* DBD */
	mode_sense6(h, 0x08, 0x08, 0, 255, b, sizeof(b));
	assert_int_equal(h->cmd.data_len, 4 + 20);
	assert_int_equal(b[3], 0);
	assert_int_equal(b[4], 0x08);
	/* the kernel's sd_read_cache_type(): MODE SENSE page 08h alone */
	mode_sense6(h, 0, 0x08, 0, 255, b, sizeof(b));
	pg = find_page(b, 4 + b[3], h->cmd.data_len, 0x08);
	assert_non_null(pg);
	assert_int_equal(pg[2] & 0x04, 0x04);
	/* truncation: the header still says the full length */
	mode_sense6(h, 0, 0x3f, 0, 4, b, sizeof(b));
	assert_int_equal(h->cmd.data_len, 4);
	assert_int_equal(b[0], 55);
	mode_sense6(h, 0, 0x3f, 0, 0, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	h_free(h);
}

static void test_mode_sense_pc(void **state)
{
	struct harness *h = one_lun();
	uint8_t b[255];
	const uint8_t *pg;

	(void)state;
	assert_int_equal(lun_mode_set(h->luns, 0, LUN_MODE_RCD | LUN_MODE_SWP,
				      LUN_NEXUS_NONE),
			 0);
	h_clear_ua(h, 0);
	/* current */
	mode_sense6(h, 0x08, 0x3f, 0, 255, b, sizeof(b));
	assert_int_equal(b[2], 0x80 | 0x10); /* WP */
	pg = find_page(b, 4, h->cmd.data_len, 0x08);
	assert_int_equal(pg[2] & 0x05, 0x01);
	pg = find_page(b, 4, h->cmd.data_len, 0x0a);
	assert_int_equal(pg[4] & 0x08, 0x08);
	/* changeable: exactly the masks */
	mode_sense6(h, 0x08, 0x40 | 0x3f, 0, 255, b, sizeof(b));
	h_expect_good(h);
	pg = find_page(b, 4, h->cmd.data_len, 0x08);
	assert_int_equal(pg[2], 0x05);
	assert_int_equal(pg[3] | pg[12], 0);
	pg = find_page(b, 4, h->cmd.data_len, 0x0a);
	assert_int_equal(pg[2], 0x04);
	assert_int_equal(pg[3], 0x06);
	assert_int_equal(pg[4], 0x08);
	assert_int_equal(pg[5], 0x00);
	pg = find_page(b, 4, h->cmd.data_len, 0x1c);
	assert_int_equal(pg[2], 0x0c);
	assert_int_equal(pg[3], 0x00);
	/* changeable block descriptor: nothing */
	mode_sense6(h, 0, 0x40 | 0x08, 0, 255, b, sizeof(b));
	assert_int_equal(b[3], 8);
	assert_int_equal(get_be32(b + 4) | get_be32(b + 8), 0);
	/* default and saved: the group's, WCE on */
	mode_sense6(h, 0x08, 0x80 | 0x08, 0, 255, b, sizeof(b));
	assert_int_equal(b[6] & 0x05, 0x04);
	mode_sense6(h, 0x08, 0xc0 | 0x08, 0, 255, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(b[6] & 0x05, 0x04);
	h_free(h);
}

static void test_mode_sense_errors(void **state)
{
	struct harness *h = one_lun();
	uint8_t b[255];

	(void)state;
	mode_sense6(h, 0, 0x01, 0, 255, b, sizeof(b));
	h_expect_invalid_cdb(h, 2, 5);
	mode_sense6(h, 0, 0x19, 0, 255, b, sizeof(b));
	h_expect_invalid_cdb(h, 2, 5);
	mode_sense6(h, 0, 0x0a, 0x01, 255, b, sizeof(b));
	h_expect_invalid_cdb(h, 3, 7);
	mode_sense6(h, 0x10, 0x08, 0, 255, b, sizeof(b)); /* LLBAA in (6) */
	h_expect_invalid_cdb(h, 1, 4);
	mode_sense10(h, 0x01, 0x08, 255, b, sizeof(b));
	h_expect_invalid_cdb(h, 1, 0);
	h_free(h);
}

static void test_mode_sense10_descriptors(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group g = h_group("big", 0, 1, 4096 * GIB);
	uint8_t b[512];

	(void)state;
	g.block_size = 4096;
	h_add_group(h, &g);
	h_clear_ua(h, 0);
	/* short descriptor: the block count saturates */
	mode_sense10(h, 0, 0x0a, 512, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(get_be16(b), h->cmd.data_len - 2);
	assert_int_equal(b[4] & 1, 0);
	assert_int_equal(get_be16(b + 6), 8);
	assert_int_equal(get_be32(b + 8), (uint32_t)(4096 * GIB / 4096));
	assert_int_equal(get_be24(b + 13), 4096);
	/* the long descriptor with LLBAA */
	mode_sense10(h, 0x10, 0x0a, 512, b, sizeof(b));
	h_expect_good(h);
	assert_int_equal(b[4] & 1, 1); /* LONGLBA */
	assert_int_equal(get_be16(b + 6), 16);
	assert_int_equal(get_be64(b + 8), 4096 * GIB / 4096);
	assert_int_equal(get_be32(b + 20), 4096);
	assert_int_equal(b[24], 0x0a);
	assert_int_equal(h->cmd.data_len, 8 + 16 + 12);
	/* LLBAA with DBD: no descriptor, LONGLBA 0 */
	mode_sense10(h, 0x18, 0x0a, 512, b, sizeof(b));
	assert_int_equal(b[4] & 1, 0);
	assert_int_equal(get_be16(b + 6), 0);
	h_free(h);

	h = h_new(16);
	g = h_group("huge", 0, 1, 4096 * GIB); /* 2^33 blocks */
	h_add_group(h, &g);
	h_clear_ua(h, 0);
	mode_sense10(h, 0, 0x0a, 512, b, sizeof(b));
	assert_int_equal(get_be32(b + 8), UINT32_MAX);
	h_free(h);
}

/* ---- MODE SELECT --------------------------------------------------------- */

static uint8_t mode_select6(struct harness *h, uint8_t b1, const void *p,
			    uint8_t len)
{
	h->iov.iov_base = (void *)p;
	h->iov.iov_len = len;
	return h_exec_iov(h, 0, H_CDB(0x15, b1, 0, 0, len, 0), SCSI_DIR_WRITE,
			  &h->iov, 1, len);
}

static uint8_t mode_select10(struct harness *h, const void *p, uint16_t len)
{
	uint8_t cdb[10] = {0x55, 0x10};

	put_be16(cdb + 7, len);
	h->iov.iov_base = (void *)p;
	h->iov.iov_len = len;
	return h_exec_iov(h, 0, cdb, sizeof(cdb), SCSI_DIR_WRITE, &h->iov, 1,
			  len);
}

/*
 * What the kernel's sd_cache_type_store() does: MODE SENSE page 08h with
 * DBD, flip WCE, clear the mode data length and device-specific byte, send
 * it back.
 */
/*
 * TEST UNIT READY from I_T nexus @nexus (the harness's own commands come
 * from nexus 0): h_exec() with the nexus id set, status and sense in h->cmd.
 */
static uint8_t tur_from(struct harness *h, uint32_t nexus, uint32_t lun)
{
	h->nexus = nexus;
	tur(h, lun);
	h->nexus = 0;
	assert_int_equal(h->disp, SCSI_DONE);
	return h->cmd.status;
}

/* Nexus @nexus takes every unit attention it has (a new nexus: POWER ON). */
static void clear_ua_from(struct harness *h, uint32_t nexus, uint32_t lun)
{
	unsigned int i;

	for (i = 0; i < 16 && tur_from(h, nexus, lun) != SCSI_GOOD; i++)
		;
	h_expect_good(h);
}

static size_t caching_select_list(struct harness *h, uint8_t *out, bool wce)
{
	uint8_t b[64];

	mode_sense6(h, 0x08, 0x08, 0, 64, b, sizeof(b));
	h_expect_good(h);
	memcpy(out, b, 4 + 20);
	out[0] = 0;
	out[2] = 0;
	out[4 + 2] = (uint8_t)((out[4 + 2] & ~0x04) | (wce ? 0x04 : 0));
	return 4 + 20;
}

static void test_mode_select_caching(void **state)
{
	struct harness *h = one_lun();
	struct lun_info li;
	uint8_t list[64], b[64];
	size_t n;

	(void)state;
	clear_ua_from(h, 1, 0);
	n = caching_select_list(h, list, false);
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_good(h);
	assert_int_equal(lun_get(h->luns, 0, &li), 0);
	assert_int_equal(li.mode & LUN_MODE_WCE, 0);
	lun_put(h->luns, &li);
	/*
	 * MODE PARAMETERS CHANGED goes to every other I_T nexus (SPC-4
	 * 7.5.4), once each; the nexus that made the change knows already.
	 */
	tur(h, 0);
	h_expect_good(h);
	tur_from(h, 1, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x01);
	tur_from(h, 1, 0);
	h_expect_good(h);
	mode_sense6(h, 0x08, 0x08, 0, 64, b, sizeof(b));
	assert_int_equal(b[6] & 0x04, 0);
	/* the same values again: no change, no unit attention */
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_good(h);
	tur_from(h, 1, 0);
	h_expect_good(h);

	/* MODE SELECT (10) with a block descriptor turns it back on */
	memset(list, 0, sizeof(list));
	put_be16(list + 6, 8);
	put_be32(list + 8, 12345); /* ignored */
	put_be24(list + 13, 512);
	mode_sense6(h, 0x08, 0x08, 0, 64, b, sizeof(b));
	memcpy(list + 16, b + 4, 20);
	list[16 + 2] |= 0x04;
	mode_select10(h, list, 16 + 20);
	h_expect_good(h);
	h_clear_ua(h, 0);
	mode_sense6(h, 0x08, 0x08, 0, 64, b, sizeof(b));
	assert_int_equal(b[6] & 0x04, 0x04);
	/* parameter list length 0: nothing, GOOD, PF not even looked at */
	h_exec(h, 0, H_CDB(0x15, 0, 0, 0, 0, 0), SCSI_DIR_WRITE, NULL, 0);
	h_expect_good(h);
	h_free(h);
}

static void test_mode_select_d_sense(void **state)
{
	struct harness *h = one_lun();
	uint8_t list[4 + 12] = {0}, b[64];
	struct h_sense s;

	(void)state;
	clear_ua_from(h, 1, 0);
	mode_sense6(h, 0x08, 0x0a, 0, 64, b, sizeof(b));
	memcpy(list + 4, b + 4, 12);
	list[4 + 2] |= 0x04; /* D_SENSE */
	mode_select6(h, 0x10, list, sizeof(list));
	h_expect_good(h);
	/*
	 * from now on descriptor format, starting with the UA it raised for
	 * the other nexus
	 */
	tur_from(h, 1, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x01);
	assert_true(h_sense_parse(h->cmd.sense, h->cmd.sense_len, &s));
	assert_true(s.descriptor);
	assert_int_equal(h->cmd.sense[0], 0x72);
	inquiry(h, 0, false, 1, 96, b, sizeof(b));
	h_expect_invalid_cdb(h, 2, 7);
	assert_int_equal(h->cmd.sense[0], 0x72);
	/* other LUNs keep fixed format */
	inquiry(h, 1, false, 1, 96, b, sizeof(b));
	assert_int_equal(h->cmd.sense[0], 0x70);
	/* and back */
	list[4 + 2] &= (uint8_t)~0x04;
	mode_select6(h, 0x10, list, sizeof(list));
	h_expect_good(h);
	tur_from(h, 1, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x01);
	assert_int_equal(h->cmd.sense[0], 0x70);
	h_free(h);
}

static void test_mode_select_qerr_swp_ie(void **state)
{
	struct harness *h = one_lun();
	uint8_t list[4 + 12 + 12] = {0}, b[128];
	struct lun_info li;

	(void)state;
	mode_sense6(h, 0x08, 0x0a, 0, 64, b, sizeof(b));
	memcpy(list + 4, b + 4, 12);
	mode_sense6(h, 0x08, 0x1c, 0, 64, b, sizeof(b));
	memcpy(list + 16, b + 4, 12);
	list[4 + 3] |= 0x02; /* QERR 01b */
	list[4 + 4] |= 0x08; /* SWP */
	list[16 + 2] |= 0x08 | 0x04; /* DEXCPT, TEST */
	mode_select6(h, 0x10, list, sizeof(list));
	h_expect_good(h);
	assert_int_equal(lun_get(h->luns, 0, &li), 0);
	assert_int_equal(li.mode, LUN_MODE_WCE | LUN_MODE_QERR | LUN_MODE_SWP |
					  LUN_MODE_DEXCPT | LUN_MODE_TEST);
	lun_put(h->luns, &li);
	h_clear_ua(h, 0);
	/* QERR 11b and 10b are not offered */
	list[4 + 3] |= 0x06;
	mode_select6(h, 0x10, list, sizeof(list));
	h_expect_invalid_param(h, 4 + 3, 2);
	list[4 + 3] = (uint8_t)((list[4 + 3] & ~0x06) | 0x04);
	mode_select6(h, 0x10, list, sizeof(list));
	h_expect_invalid_param(h, 4 + 3, 2);
	h_free(h);
}

static void test_mode_select_errors(void **state)
{
	struct harness *h = one_lun();
	uint8_t list[64], good[64], b[64];
	struct lun_info li;
	size_t n;

	(void)state;
	/* WCE on, as it is: a list that changes nothing */
	n = caching_select_list(h, good, true);
#define RESET() memcpy(list, good, sizeof(good))
	/* SP = 1, PF = 0 */
	RESET();
	mode_select6(h, 0x11, list, (uint8_t)n);
	h_expect_invalid_cdb(h, 1, 0);
	mode_select6(h, 0x00, list, (uint8_t)n);
	h_expect_invalid_cdb(h, 1, 4);
	/* header: MODE DATA LENGTH, MEDIUM TYPE */
	RESET();
	list[0] = 23;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 0, 7);
	RESET();
	list[1] = 1;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 1, 7);
	/* the device-specific byte is ignored (WP and DPOFUA echoed back) */
	RESET();
	list[2] = 0x90;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_good(h);
	/* block descriptor length, block length */
	RESET();
	list[3] = 7;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 3, 7);
	memset(list, 0, sizeof(list));
	list[3] = 8;
	put_be24(list + 9, 4096);
	memcpy(list + 12, good + 4, 20);
	mode_select6(h, 0x10, list, 32);
	h_expect_invalid_param(h, 9, 7);
	/* page: unknown code, PS, SPF, page length */
	RESET();
	list[4] = 0x19;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 4, 5);
	RESET();
	list[4] |= 0x80;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 4, 7);
	RESET();
	list[4] |= 0x40;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 4, 6);
	RESET();
	list[5] = 0x11;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 5, 7);
	/* a bit that is not changeable: caching page IC (byte 2 bit 7) */
	RESET();
	list[6] |= 0x80;
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 6, 7);
	RESET();
	list[4 + 13] = 1; /* NUMBER OF CACHE SEGMENTS */
	mode_select6(h, 0x10, list, (uint8_t)n);
	h_expect_invalid_param(h, 4 + 13, 0);
	/* lengths: shorter than the header, cutting a page, Data-Out short */
	RESET();
	mode_select6(h, 0x10, list, 3);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	mode_select6(h, 0x10, list, (uint8_t)(n - 1));
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	mode_select6(h, 0x10, list, 5);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	h->iov.iov_base = list;
	h->iov.iov_len = n;
	h_exec_iov(h, 0, H_CDB(0x15, 0x10, 0, 0, (uint8_t)n, 0), SCSI_DIR_WRITE,
		   &h->iov, 1, (uint32_t)n - 4);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* a good page (WCE off) followed by a bad one changes nothing */
	memcpy(list, good, n);
	list[4 + 2] &= (uint8_t)~0x04;
	mode_sense6(h, 0x08, 0x0a, 0, 64, b, sizeof(b));
	memcpy(list + n, b + 4, 12);
	list[n + 2] |= 0x01; /* RLEC: not changeable */
	mode_select6(h, 0x10, list, (uint8_t)(n + 12));
	h_expect_invalid_param(h, n + 2, 0);
	assert_int_equal(lun_get(h->luns, 0, &li), 0);
	assert_int_equal(li.mode & LUN_MODE_WCE, LUN_MODE_WCE);
	lun_put(h->luns, &li);
	tur(h, 0);
	h_expect_good(h);
#undef RESET
	h_free(h);
}

/* ---- START STOP UNIT, PREVENT ALLOW MEDIUM REMOVAL --------------------- */

static uint8_t start_stop(struct harness *h, uint8_t b1, uint8_t b4)
{
	return h_exec(h, 0, H_CDB(0x1b, b1, 0, 0, b4, 0), SCSI_DIR_NONE, NULL,
		      0);
}

static void test_start_stop_unit(void **state)
{
	struct harness *h = one_lun();
	struct lun_info li;

	(void)state;
	start_stop(h, 0, 0x00); /* stop */
	h_expect_good(h);
	tur(h, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x02);
	start_stop(h, 1, 0x01); /* start, IMMED: what sd sends */
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	/* with power conditions: STANDBY changes nothing, ACTIVE starts */
	start_stop(h, 0, 0x30);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	start_stop(h, 0, 0x04); /* stop, NO_FLUSH */
	tur(h, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x02);
	start_stop(h, 0, 0x11);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	/* LOEJ with START 0 (eject(1)): the disk stops, nothing ejects */
	start_stop(h, 0, 0x02);
	h_expect_good(h);
	tur(h, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x02);
	start_stop(h, 0, 0x03);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	/*
	 * the other power conditions (LU_CONTROL, FORCE_*, reserved) are
	 * accepted and change nothing, START and LOEJ with them ignored
	 */
	start_stop(h, 0, 0x50);
	h_expect_good(h);
	start_stop(h, 0, 0x72);
	h_expect_good(h);
	start_stop(h, 0, 0xf2);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	/* modifiers, reserved bits */
	h_exec(h, 0, H_CDB(0x1b, 0, 0, 0x01, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 3, 0);
	start_stop(h, 0, 0x08);
	h_expect_invalid_cdb(h, 4, 3);
	/* an offline LUN cannot be started from the host */
	assert_int_equal(lun_set_state(h->luns, 0, LUN_OFFLINE), 0);
	start_stop(h, 0, 0x01);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x03);
	assert_int_equal(lun_get(h->luns, 0, &li), 0);
	assert_int_equal(li.state, LUN_OFFLINE);
	lun_put(h->luns, &li);
	h_free(h);
}

static void test_prevent_allow(void **state)
{
	struct harness *h = one_lun();

	(void)state;
	h_exec(h, 0, H_CDB(0x1e, 0, 0, 0, 1, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0x1e, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0x1e, 0, 0, 0, 2, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 4, 1);
	h_exec(h, 0, H_CDB(0x1e, 0, 0, 0, 3, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 4, 1);
	h_exec(h, 0, H_CDB(0x1e, 0, 1, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 2, 0);
	h_free(h);
}

/* A 6-byte command with byte 4 @b4 from I_T nexus @nexus to LUN 0. */
static uint8_t cmd6_from(struct harness *h, uint32_t nexus, uint8_t op,
			 uint8_t b4)
{
	h->nexus = nexus;
	h_exec(h, 0, H_CDB(op, 0, 0, 0, b4, 0), SCSI_DIR_NONE, NULL, 0);
	h->nexus = 0;
	assert_int_equal(h->disp, SCSI_DONE);
	return h->cmd.status;
}

#define EJECT 0x02
#define LOAD 0x03
#define PREVENT_ALLOW 0x1e

/*
 * A removable LUN: RMB, eject and load, no medium is NOT READY 3Ah/00h
 * for TEST UNIT READY, READ CAPACITY and I/O; a prevention from any I_T
 * nexus locks the tray both ways, until that nexus allows, goes away, or
 * a LUN or target reset.
 */
static void test_removable_medium(void **state)
{
	struct harness *h = h_new(4);
	struct lun_group g = h_group("rm", 0, 1, GIB);
	uint8_t buf[96];

	(void)state;
	g.removable = true;
	h_add_group(h, &g);
	h_clear_ua(h, 0);
	clear_ua_from(h, 1, 0);
	inquiry(h, 0, false, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(buf[1], 0x80);

	/* eject, then every medium access: no medium; load: back */
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_good(h);
	tur(h, 0);
	h_expect_sense(h, SK_NOT_READY, 0x3a, 0x00);
	h_exec(h, 0, H_CDB(0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0), SCSI_DIR_READ, buf,
	       8);
	h_expect_sense(h, SK_NOT_READY, 0x3a, 0x00);
	h_exec(h, 0, H_CDB(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0), SCSI_DIR_READ, buf,
	       512);
	h_expect_sense(h, SK_NOT_READY, 0x3a, 0x00);
	cmd6_from(h, 0, 0x1b, 0x01); /* START without LOEJ: still none */
	h_expect_sense(h, SK_NOT_READY, 0x3a, 0x00);
	inquiry(h, 0, false, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	cmd6_from(h, 0, 0x1b, LOAD);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);
	/* STOP without LOEJ changes nothing on a removable LUN */
	cmd6_from(h, 0, 0x1b, 0x00);
	h_expect_good(h);
	tur(h, 0);
	h_expect_good(h);

	/* nexus 0 prevents: nexus 1 can neither eject nor (ejected) load */
	cmd6_from(h, 0, PREVENT_ALLOW, 1);
	h_expect_good(h);
	cmd6_from(h, 1, 0x1b, EJECT);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	tur(h, 0);
	h_expect_good(h);
	cmd6_from(h, 1, PREVENT_ALLOW,
		  0); /* nexus 1 allowing changes nothing */
	cmd6_from(h, 1, 0x1b, EJECT);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	cmd6_from(h, 0, PREVENT_ALLOW, 0);
	cmd6_from(h, 1, 0x1b, EJECT);
	h_expect_good(h);
	cmd6_from(h, 0, PREVENT_ALLOW, 1);
	cmd6_from(h, 0, 0x1b, LOAD);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	cmd6_from(h, 0, PREVENT_ALLOW, 0);
	cmd6_from(h, 0, 0x1b, LOAD);
	h_expect_good(h);

	/* the prevention ends with its nexus */
	cmd6_from(h, 1, PREVENT_ALLOW, 1);
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x53, 0x02);
	lun_ua_nexus_gone(h->luns, 1);
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_good(h);
	cmd6_from(h, 0, 0x1b, LOAD);
	h_expect_good(h);
	/* ... and with a LUN reset, and a target reset */
	cmd6_from(h, 0, PREVENT_ALLOW, 1);
	lun_ua_set(h->luns, 0, LUN_UA_RESET, 0, 0, LUN_NEXUS_NONE);
	h_clear_ua(h, 0);
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_good(h);
	cmd6_from(h, 0, 0x1b, LOAD);
	cmd6_from(h, 0, PREVENT_ALLOW, 1);
	lun_ua_set_all(h->luns, LUN_UA_RESET, LUN_NEXUS_NONE);
	h_clear_ua(h, 0);
	cmd6_from(h, 0, 0x1b, EJECT);
	h_expect_good(h);
	cmd6_from(h, 0, 0x1b, LOAD);
	h_expect_good(h);
	h_free(h);
}

/* ---- REPORT SUPPORTED OPERATION CODES ------------------------------------ */

static uint8_t rsoc_lun(struct harness *h, uint32_t lun, uint8_t b2,
			uint8_t opcode, uint16_t sa, uint32_t alloc, void *buf,
			size_t len)
{
	uint8_t cdb[12] = {0xa3, 0x0c, b2, opcode};

	put_be16(cdb + 4, sa);
	put_be32(cdb + 6, alloc);
	return h_exec(h, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf, len);
}

static uint8_t rsoc(struct harness *h, uint8_t b2, uint8_t opcode, uint16_t sa,
		    uint32_t alloc, void *buf, size_t len)
{
	return rsoc_lun(h, 0, b2, opcode, sa, alloc, buf, len);
}

/* Whether an all_commands list (8-byte descriptors, no RCTD) has @op. */
static bool rsoc_lists(const uint8_t *buf, uint8_t op)
{
	uint32_t i, n = get_be32(buf) / 8;

	for (i = 0; i < n; i++)
		if (buf[4 + 8 * i] == op)
			return true;
	return false;
}

/*
 * RSOC tells the truth per LUN: a thick LUN answers UNMAP with INVALID
 * COMMAND OPERATION CODE and WRITE SAME's UNMAP bit with INVALID FIELD IN
 * CDB, so it does not list UNMAP nor that bit; the thin LUN does.
 */
static void test_rsoc_per_lun(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group thin = h_group("thin", 0, 1, GIB);
	struct lun_group full = h_group("full", 1, 1, GIB);
	uint8_t buf[4096], one[64], list[24] = {0, 22, 0, 16};
	unsigned int n = 0;

	(void)state;
	h->tgt.alua = &one_group;
	full.thin = false;
	full.lbprz = false;
	h_add_group(h, &thin);
	h_add_group(h, &full);
	h_clear_ua(h, 0);
	h_clear_ua(h, 1);
	while (scsi_op_at(n))
		n++;

	rsoc_lun(h, 0, 0, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 8 * n);
	assert_true(rsoc_lists(buf, 0x42));
	rsoc_lun(h, 1, 0, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	/* no UNMAP, no SANITIZE BLOCK ERASE nor CRYPTO ERASE */
	assert_int_equal(get_be32(buf), 8 * (n - 3));
	assert_int_equal(h->cmd.data_len, 4 + 8 * (n - 3));
	assert_false(rsoc_lists(buf, 0x42));
	assert_true(rsoc_lists(buf, 0x93));

	/* one command: UNMAP */
	rsoc_lun(h, 0, 1, 0x42, 0, sizeof(one), one, sizeof(one));
	assert_int_equal(one[1] & 0x07, 0x03);
	rsoc_lun(h, 1, 1, 0x42, 0, sizeof(one), one, sizeof(one));
	h_expect_good(h);
	assert_int_equal(one[1] & 0x07, 0x01);
	/* ... and the LUN answers as RSOC said */
	put_be64(list + 8, 0);
	put_be32(list + 16, 1);
	h_exec(h, 1, H_CDB(0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0), SCSI_DIR_WRITE,
	       list, sizeof(list));
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x20, 0x00);

	/* WRITE SAME (16)'s UNMAP bit: usable on the thin LUN only */
	rsoc_lun(h, 0, 1, 0x93, 0, sizeof(one), one, sizeof(one));
	assert_int_equal(one[4 + 1], 0x09);
	rsoc_lun(h, 1, 1, 0x93, 0, sizeof(one), one, sizeof(one));
	h_expect_good(h);
	assert_int_equal(one[1] & 0x07, 0x03);
	assert_int_equal(one[4 + 1], 0x01);
	rsoc_lun(h, 1, 1, 0x41, 0, sizeof(one), one, sizeof(one));
	assert_int_equal(one[4 + 1], 0x00);
	h_free(h);
}

static void test_rsoc_all(void **state)
{
	struct harness *h = one_lun_alua();
	uint8_t buf[4096];
	const struct scsi_op *op;
	unsigned int i, n = 0;

	(void)state;
	while (scsi_op_at(n))
		n++;
	rsoc(h, 0, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 8 * n);
	assert_int_equal(h->cmd.data_len, 4 + 8 * n);
	for (i = 0; i < n; i++) {
		const uint8_t *d = buf + 4 + 8 * i;

		op = scsi_op_at(i);
		assert_int_equal(d[0], op->usage[0]);
		assert_int_equal(get_be16(d + 2), op->has_sa ? op->sa : 0);
		assert_int_equal(d[5], op->has_sa ? 0x01 : 0x00);
		assert_int_equal(get_be16(d + 6), op->cdb_len);
	}
	/* RCTD: 20-byte descriptors with timeouts */
	rsoc(h, 0x80, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 20 * n);
	for (i = 0; i < n; i++) {
		const uint8_t *d = buf + 4 + 20 * i;

		assert_int_equal(d[5] & 0x02, 0x02);
		assert_int_equal(get_be16(d + 8), 0x0a);
		assert_true(get_be32(d + 16) >= get_be32(d + 12));
	}
	/* truncated: the header keeps the full length */
	rsoc(h, 0, 0, 0, 4, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 4);
	assert_int_equal(get_be32(buf), 8 * n);
	rsoc(h, 0, 0, 0, 0, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	/* reserved reporting options */
	rsoc(h, 0x04, 0, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 2);
	h_free(h);
}

/* One-command data for every table entry matches the table exactly. */
static void test_rsoc_one(void **state)
{
	struct harness *h = one_lun_alua();
	uint8_t buf[64];
	const struct scsi_op *op;
	unsigned int i;

	(void)state;
	for (i = 0; (op = scsi_op_at(i)); i++) {
		rsoc(h, op->has_sa ? 2 : 1, op->usage[0], op->sa, sizeof(buf),
		     buf, sizeof(buf));
		h_expect_good(h);
		assert_int_equal(buf[1], 0x03);
		assert_int_equal(get_be16(buf + 2), op->cdb_len);
		assert_memory_equal(buf + 4, op->usage, op->cdb_len);
		assert_int_equal(h->cmd.data_len, 4 + op->cdb_len);
		/* 011b answers the same */
		rsoc(h, 0x80 | 3, op->usage[0], op->sa, sizeof(buf), buf,
		     sizeof(buf));
		assert_int_equal(buf[1], 0x83);
		assert_memory_equal(buf + 4, op->usage, op->cdb_len);
		assert_int_equal(h->cmd.data_len, 4 + op->cdb_len + 12);
		assert_int_equal(get_be16(buf + 4 + op->cdb_len), 0x0a);
	}
	/* the kernel's probe: INQUIRY and WRITE SAME (16) with option 1 */
	rsoc(h, 1, 0x93, 0, sizeof(buf), buf, sizeof(buf));
	assert_int_equal(buf[1] & 0x07, 0x03);
	/* not supported: FORMAT UNIT, SA 11h of SERVICE ACTION IN (16) */
	rsoc(h, 1, 0x04, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(buf[1] & 0x07, 0x01);
	rsoc(h, 2, 0x9e, 0x11, sizeof(buf), buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(buf[1] & 0x07, 0x01);
	rsoc(h, 3, 0x04, 0, sizeof(buf), buf, sizeof(buf));
	assert_int_equal(buf[1] & 0x07, 0x01);
	/* option and opcode disagree about service actions */
	rsoc(h, 1, 0x9e, 0x10, sizeof(buf), buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 2);
	rsoc(h, 2, 0x12, 0, sizeof(buf), buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 2);
	/* truncation of one-command data */
	rsoc(h, 1, 0x28, 0, 6, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 6);
	h_free(h);
}

/* ---- REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS ------------------------ */

static void test_report_tmfs(void **state)
{
	struct harness *h = one_lun();
	uint8_t buf[32];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	h_exec(h, 0, H_CDB(0xa3, 0x0d, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0),
	       SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 4);
	/* ABORT TASK, ABORT TASK SET, LUN RESET, TARGET RESET */
	assert_int_equal(buf[0], 0xca);
	assert_int_equal(buf[1], 0x00);
	h_exec(h, 0, H_CDB(0xa3, 0x0d, 0x80, 0, 0, 0, 0, 0, 0, 32, 0, 0),
	       SCSI_DIR_READ, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 16);
	assert_int_equal(buf[0], 0xca);
	assert_int_equal(buf[3], 0x0c);
	h_exec(h, 0, H_CDB(0xa3, 0x0d, 0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0),
	       SCSI_DIR_READ, buf, sizeof(buf));
	assert_int_equal(h->cmd.data_len, 2);
	h_exec(h, 0, H_CDB(0xa3, 0x0d, 0x40, 0, 0, 0, 0, 0, 0, 32, 0, 0),
	       SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 2, 6);
	/* a LUN must be there */
	h_exec(h, 9, H_CDB(0xa3, 0x0d, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0),
	       SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	h_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_test_unit_ready),
		cmocka_unit_test(test_request_sense),
		cmocka_unit_test(test_inquiry_standard),
		cmocka_unit_test(test_inquiry_identity_padding),
		cmocka_unit_test(test_vpd_supported_and_each),
		cmocka_unit_test(test_vpd_serial),
		cmocka_unit_test(test_vpd_device_identification),
		cmocka_unit_test(test_vpd_block_pages),
		cmocka_unit_test(test_vpd_block_limits_unlimited),
		cmocka_unit_test(test_report_luns_small),
		cmocka_unit_test(test_report_luns_16384),
		cmocka_unit_test(test_mode_sense_all),
		cmocka_unit_test(test_mode_sense_pc),
		cmocka_unit_test(test_mode_sense_errors),
		cmocka_unit_test(test_mode_sense10_descriptors),
		cmocka_unit_test(test_mode_select_caching),
		cmocka_unit_test(test_mode_select_d_sense),
		cmocka_unit_test(test_mode_select_qerr_swp_ie),
		cmocka_unit_test(test_mode_select_errors),
		cmocka_unit_test(test_start_stop_unit),
		cmocka_unit_test(test_prevent_allow),
		cmocka_unit_test(test_removable_medium),
		cmocka_unit_test(test_rsoc_all),
		cmocka_unit_test(test_rsoc_one),
		cmocka_unit_test(test_rsoc_per_lun),
		cmocka_unit_test(test_report_tmfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
