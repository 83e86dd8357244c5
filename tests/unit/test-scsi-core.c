// SPDX-License-Identifier: MIT
/*
 * scsi_exec()'s own behaviour: the opcode table and its CDB usage check,
 * LUN addressing and views, unit attentions, LUN states, write protect,
 * injected faults, sense formats, the -errno mapping, data copy bounds,
 * statistics, and unique serial numbers across 2^20 LUNs.
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

#include "array.h"
#include "scsi-harness.h"
#include "scsi/scsi_i.h"

#define GIB (1ull << 30)

static const uint8_t tur[6] = {0x00, 0, 0, 0, 0, 0};

static uint8_t run_tur(struct harness *h, uint32_t lun)
{
	return h_exec(h, lun, tur, sizeof(tur), SCSI_DIR_NONE, NULL, 0);
}

static uint8_t run_read10(struct harness *h, uint32_t lun, uint32_t lba,
			  uint16_t n, void *buf, size_t len)
{
	uint8_t cdb[10] = {0x28};

	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, n);
	return h_exec(h, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf, len);
}

/* ---- pure functions ---------------------------------------------------- */

static void test_cdb_len(void **state)
{
	(void)state;
	assert_int_equal(scsi_cdb_len(0x00), 6);
	assert_int_equal(scsi_cdb_len(0x1f), 6);
	assert_int_equal(scsi_cdb_len(0x28), 10);
	assert_int_equal(scsi_cdb_len(0x5a), 10);
	assert_int_equal(scsi_cdb_len(0x7f), -1);
	assert_int_equal(scsi_cdb_len(0x88), 16);
	assert_int_equal(scsi_cdb_len(0xa0), 12);
	assert_int_equal(scsi_cdb_len(0xc0), 0);
	assert_int_equal(scsi_cdb_len(0xff), 0);
}

static void test_lun_encode_decode(void **state)
{
	/* logical unit and extended addressing, a bus, a second level */
	static const uint8_t bad[][8] = {
		{0x80, 1},
		{0xc0, 1},
		{0x01, 1},
		{0, 1, 0, 1},
		{0, 1, 0, 0, 0, 0, 0, 1},
		{0x40, 1, 0x40, 1},
	};
	uint8_t f[8];
	uint32_t lun, got;

	(void)state;
	for (lun = 0; lun < 16384; lun++) {
		assert_int_equal(scsi_lun_encode(lun, f), 0);
		assert_int_equal(scsi_lun_decode(f, &got), 0);
		assert_int_equal(got, lun);
		/* what the kernel's scsilun_to_int() reads back */
		assert_int_equal(((uint32_t)f[0] << 8 | f[1]) & 0x3fff, lun);
		assert_true(lun < 256 ? f[0] == 0 : (f[0] & 0xc0) == 0x40);
		assert_int_equal(get_be32(f + 2) | get_be16(f + 6), 0);
	}
	assert_int_equal(scsi_lun_encode(255, f), 0);
	assert_memory_equal(f, ((uint8_t[8]){0x00, 0xff}), 8);
	assert_int_equal(scsi_lun_encode(256, f), 0);
	assert_memory_equal(f, ((uint8_t[8]){0x41, 0x00}), 8);
	assert_int_equal(scsi_lun_encode(16383, f), 0);
	assert_memory_equal(f, ((uint8_t[8]){0x7f, 0xff}), 8);
	assert_int_equal(scsi_lun_encode(16384, f), -ERANGE);
	assert_int_equal(scsi_lun_encode(UINT32_MAX, f), -ERANGE);

	for (lun = 0; lun < ARRAY_SIZE(bad); lun++)
		assert_int_equal(scsi_lun_decode(bad[lun], &got), -EINVAL);
}

static void test_opcode_names(void **state)
{
	(void)state;
	assert_string_equal(scsi_opcode_name(0x12), "INQUIRY");
	assert_string_equal(scsi_opcode_name(0x28), "READ_10");
	assert_string_equal(scsi_opcode_name(0xa0), "REPORT_LUNS");
	assert_string_equal(scsi_opcode_name(0x9e), "SERVICE_ACTION_IN_16");
	assert_null(scsi_opcode_name(0x04)); /* FORMAT UNIT */
	assert_null(scsi_opcode_name(0xff));
}

/*
 * The table: every entry has a handler, a name, its group's CDB length,
 * usage data that starts with the opcode, covers the service action and
 * stops at the CONTROL byte (NACA and LINK unsupported); sub-tables sorted.
 */
static void test_table_consistency(void **state)
{
	const struct scsi_op *op, *prev = NULL;
	unsigned int i, b, n = 0;

	(void)state;
	for (i = 0; (op = scsi_op_at(i)); i++, n++) {
		assert_non_null(op->fn);
		assert_non_null(op->name);
		assert_int_equal(op->cdb_len, scsi_cdb_len(op->usage[0]));
		assert_ptr_equal(op->has_sa ? scsi_op_sa(op->usage[0], op->sa)
					    : &scsi_ops[op->usage[0]],
				 op);
		if (op->has_sa)
			assert_int_equal(op->usage[1] & 0x1f, 0x1f);
		assert_int_equal(op->usage[op->cdb_len - 1], 0);
		for (b = op->cdb_len; b < sizeof(op->usage); b++)
			assert_int_equal(op->usage[b], 0);
		if (prev)
			assert_true(prev->usage[0] < op->usage[0] ||
				    (prev->usage[0] == op->usage[0] &&
				     prev->sa < op->sa));
		/* only the three commands SAM exempts skip unit attention */
		assert_int_equal(!!(op->flags & SCSI_OP_NO_UA),
				 op->usage[0] == 0x12 || op->usage[0] == 0xa0 ||
					 op->usage[0] == 0x03);
		assert_int_equal(!(op->flags & SCSI_OP_LUN),
				 !!(op->flags & SCSI_OP_NO_UA));
		prev = op;
	}
	assert_int_equal(n, 67);
	assert_null(scsi_op_sa(0x9e, 0x11));
	assert_null(scsi_op_sa(0x28, 0));
	assert_int_equal(scsi_ops[0x9e].nsa, 2);
	assert_int_equal(scsi_ops[0xa3].nsa, 3);
	assert_int_equal(scsi_ops[0x48].nsa, 4);
	assert_null(scsi_op_sa(0x48, 0x00));
}

/* ---- dispatch and the CDB usage check --------------------------------- */

static void test_unknown_opcode_and_sa(void **state)
{
	struct harness *h = h_new_luns(16, 2, GIB);

	(void)state;
	h_clear_ua(h, 0);
	h_exec(h, 0, H_CDB(0x04, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	h_exec(h, 0, H_CDB(0xc5, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	/* SERVICE ACTION IN (16) 11h, MAINTENANCE IN 0Ah (REPORT TPGS) */
	h_exec(h, 0,
	       H_CDB(0x9e, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0),
	       SCSI_DIR_READ, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);
	h_exec(h, 0, H_CDB(0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0),
	       SCSI_DIR_READ, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);
	/* a CDB shorter than its group's length */
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 36), SCSI_DIR_READ, NULL, 0);
	h_expect_invalid_cdb(h, 0, -1);
	/* longer is fine: iSCSI pads every CDB to 16 bytes */
	h_exec(h, 0,
	       H_CDB(0x00, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff),
	       SCSI_DIR_NONE, NULL, 0);
	h_expect_good(h);
	h_exec(h, 0, NULL, 0, SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x20, 0x00);
	h_free(h);
}

/*
 * Every bit outside every table entry's usage data, set alone, fails with
 * INVALID FIELD IN CDB pointing at exactly that byte and bit, before the
 * LUN or the handler is looked at (LUN 9 does not exist here).
 */
static void test_reserved_bits_everywhere(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	const struct scsi_op *op;
	uint8_t cdb[16];
	unsigned int i, byte, bit, tried = 0;

	(void)state;
	for (i = 0; (op = scsi_op_at(i)); i++) {
		for (byte = 1; byte < op->cdb_len; byte++) {
			for (bit = 0; bit < 8; bit++) {
				if (op->usage[byte] & (1u << bit))
					continue;
				memset(cdb, 0, sizeof(cdb));
				cdb[0] = op->usage[0];
				if (op->has_sa)
					cdb[1] = (uint8_t)op->sa;
				cdb[byte] |= (uint8_t)(1u << bit);
				h_exec(h, 9, cdb, op->cdb_len, SCSI_DIR_NONE,
				       NULL, 0);
				h_expect_invalid_cdb(h, byte, (int)bit);
				tried++;
			}
		}
	}
	assert_true(tried > 500);
	/* the CONTROL byte's NACA on a plain TEST UNIT READY */
	h_exec(h, 0, H_CDB(0x00, 0, 0, 0, 0, 0x04), SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 5, 2);
	h_free(h);
}

/* ---- LUNs: absent, views ------------------------------------------------ */

static void test_absent_lun(void **state)
{
	struct harness *h = h_new_luns(64, 4, GIB);
	uint8_t buf[256];
	struct h_sense s;

	(void)state;
	run_tur(h, 5);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	h_exec(h, 5, H_CDB(0x1a, 0, 0x3f, 0, 255, 0), SCSI_DIR_READ, buf,
	       sizeof(buf));
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	run_read10(h, 5, 0, 1, buf, 512);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	/* beyond the table itself */
	run_tur(h, 1000000);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);

	memset(buf, 0xee, sizeof(buf));
	h_exec(h, 5, H_CDB(0x12, 0, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_good(h);
	assert_int_equal(buf[0], 0x7f); /* PQ 011b, type 1Fh */
	assert_int_equal(buf[2], 0x06);
	assert_memory_equal(buf + 8, "SDSWARM ", 8);
	h_exec(h, 5, H_CDB(0x12, 1, 0x80, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);

	h_exec(h, 5, H_CDB(0x03, 0, 0, 0, 18, 0), SCSI_DIR_READ, buf, 18);
	h_expect_good(h);
	assert_true(h_sense_parse(buf, 18, &s));
	assert_int_equal(s.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(s.asc, 0x25);

	h_exec(h, 5, H_CDB(0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
	       SCSI_DIR_READ, buf, 256);
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 4 * 8);
	h_free(h);
}

static void test_view_translation(void **state)
{
	struct harness *h = h_new_luns(512, 300, GIB);
	char want[LUN_SERIAL_LEN + 1];
	uint8_t buf[64];

	(void)state;
	h_set_view(h, 100, 10);
	h_exec(h, 0, H_CDB(0x12, 1, 0x80, 0, 64, 0), SCSI_DIR_READ, buf, 64);
	h_expect_good(h);
	lun_serial(h->luns, 100, want, sizeof(want));
	assert_int_equal(get_be16(buf + 2), LUN_SERIAL_LEN);
	assert_memory_equal(buf + 4, want, LUN_SERIAL_LEN);
	h_exec(h, 9, H_CDB(0x12, 1, 0x80, 0, 64, 0), SCSI_DIR_READ, buf, 64);
	lun_serial(h->luns, 109, want, sizeof(want));
	assert_memory_equal(buf + 4, want, LUN_SERIAL_LEN);
	/* view LUN 10 is table LUN 110, present, but outside the view */
	run_tur(h, 10);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	/* the UA of table LUN 100 belongs to view LUN 0 */
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x29, 0x01);
	run_tur(h, 0);
	h_expect_good(h);
	/* a view running past the table */
	h_set_view(h, 510, 100);
	run_tur(h, 1);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	run_tur(h, 5);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	h_free(h);
}

/* ---- unit attentions --------------------------------------------------- */

static void test_ua_power_on_once(void **state)
{
	struct harness *h = h_new_luns(16, 2, GIB);
	uint8_t buf[512];

	(void)state;
	/* INQUIRY and REPORT LUNS neither report nor clear it */
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 36, 0), SCSI_DIR_READ, buf, 36);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
	       SCSI_DIR_READ, buf, 256);
	h_expect_good(h);
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x29, 0x01);
	run_tur(h, 0);
	h_expect_good(h);
	/* a reported UA means the command did not run */
	run_read10(h, 1, 0, 1, buf, 512);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x29, 0x01);
	assert_int_equal(h->cmd.data_len, 0);
	run_read10(h, 1, 0, 1, buf, 512);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 512);
	h_free(h);
}

static void test_ua_luns_changed_and_capacity(void **state)
{
	struct harness *h = h_new_luns(64, 4, GIB);

	(void)state;
	h_clear_ua(h, 0);
	h_clear_ua(h, 1);
	assert_int_equal(lun_add(h->luns, 20, 0), 20);
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	run_tur(h, 0);
	h_expect_good(h);
	run_tur(h, 20);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x29, 0x01);
	assert_int_equal(lun_remove(h->luns, 20), 0);
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	run_tur(h, 0);
	h_expect_good(h);
	run_tur(h, 20);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
	/* LUN 1 saw two changes; one report covers them */
	run_tur(h, 1);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x3f, 0x0e);
	run_tur(h, 1);
	h_expect_good(h);

	assert_int_equal(lun_resize(h->luns, 0, 2 * GIB), 0);
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x09);
	run_tur(h, 0);
	h_expect_good(h);
	h_free(h);
}

/* ---- LUN states and write protect ------------------------------------- */

static void test_states(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	uint8_t buf[512];
	static const struct {
		enum lun_state st;
		uint8_t ascq;
	} cases[] = {
		{LUN_OFFLINE, 0x03},
		{LUN_NOT_READY, 0x01},
		{LUN_STOPPED, 0x02},
	};
	unsigned int i;

	(void)state;
	h_clear_ua(h, 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(lun_set_state(h->luns, 0, cases[i].st), 0);
		run_tur(h, 0);
		h_expect_sense(h, SK_NOT_READY, 0x04, cases[i].ascq);
		run_read10(h, 0, 0, 1, buf, 512);
		h_expect_sense(h, SK_NOT_READY, 0x04, cases[i].ascq);
		h_exec(h, 0, H_CDB(0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		       SCSI_DIR_READ, buf, 8);
		h_expect_sense(h, SK_NOT_READY, 0x04, cases[i].ascq);
		/* no medium access: these still answer */
		h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 36, 0), SCSI_DIR_READ, buf,
		       36);
		h_expect_good(h);
		h_exec(h, 0, H_CDB(0x1a, 0, 0x3f, 0, 255, 0), SCSI_DIR_READ,
		       buf, 255);
		h_expect_good(h);
	}
	assert_int_equal(lun_set_state(h->luns, 0, LUN_ONLINE), 0);
	run_tur(h, 0);
	h_expect_good(h);
	h_free(h);
}

static void test_software_write_protect(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	uint8_t buf[512] = {1, 2, 3};
	uint8_t w10[10] = {0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0};

	(void)state;
	h_clear_ua(h, 0);
	assert_int_equal(lun_mode_set(h->luns, 0, LUN_MODE_SWP, LUN_NEXUS_NONE),
			 0);
	h_clear_ua(h, 0); /* MODE PARAMETERS CHANGED */
	h_exec(h, 0, w10, sizeof(w10), SCSI_DIR_WRITE, buf, 512);
	h_expect_sense(h, SK_DATA_PROTECT, 0x27, 0x00);
	assert_int_equal(h->cmd.data_len, 0);
	h_exec(h, 0, H_CDB(0x41, 0x08, 0, 0, 0, 0, 0, 0, 4, 0), SCSI_DIR_WRITE,
	       buf, 512);
	h_expect_sense(h, SK_DATA_PROTECT, 0x27, 0x00);
	run_read10(h, 0, 8, 1, buf, 512);
	h_expect_good(h);
	assert_int_equal(buf[0], 0);
	assert_int_equal(lun_mode_set(h->luns, 0, 0, LUN_NEXUS_NONE), 0);
	h_clear_ua(h, 0);
	buf[0] = 7;
	h_exec(h, 0, w10, sizeof(w10), SCSI_DIR_WRITE, buf, 512);
	h_expect_good(h);
	h_free(h);
}

/* ---- injected faults --------------------------------------------------- */

static int add_rule(struct harness *h, enum fault_kind kind, unsigned int ops,
		    uint64_t lba_first, uint64_t lba_last, uint32_t count)
{
	struct fault_rule r = {
		.kind = kind,
		.ops = ops,
		.lun_first = 0,
		.lun_last = 0,
		.lba_first = lba_first,
		.lba_last = lba_last,
		.delay_ns = 5000000,
		.asc = 0x3f,
		.ascq = 0x03,
		.count = count,
	};
	int id = fault_add(h->faults, &r);

	assert_true(id > 0);
	return id;
}

static void test_faults_without_lba(void **state)
{
	struct harness *h = h_new_luns(16, 2, GIB);
	uint8_t buf[96];

	(void)state;
	h_clear_ua(h, 0);
	h_clear_ua(h, 1);
	/* one-shot UA: INQUIRY does not see it, TUR does, then it is gone */
	add_rule(h, FAULT_UA, 0, 0, UINT64_MAX, 1);
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_good(h);
	run_tur(h, 1);
	h_expect_good(h); /* another LUN */
	run_tur(h, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x3f, 0x03);
	run_tur(h, 0);
	h_expect_good(h);

	/* delay: the command runs, its completion waits */
	add_rule(h, FAULT_DELAY, 0, 0, UINT64_MAX, 1);
	h_exec(h, 0, H_CDB(0x1a, 0, 0x3f, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_good(h);
	assert_int_equal(h->disp, SCSI_DELAY);
	assert_int_equal(h->cmd.delay_ns, 5000000);
	assert_true(h->cmd.data_len > 0);
	run_tur(h, 0);
	assert_int_equal(h->disp, SCSI_DONE);
	assert_int_equal(h->cmd.delay_ns, 0);

	/* hang: nothing runs, nothing completes */
	add_rule(h, FAULT_HANG, 0, 0, UINT64_MAX, 1);
	h_exec(h, 0, H_CDB(0x1a, 0, 0x3f, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	assert_int_equal(h->disp, SCSI_HOLD);
	assert_int_equal(h->cmd.data_len, 0);

	/* not ready for "other" commands, by request */
	add_rule(h, FAULT_NOT_READY, FAULT_OP_OTHER, 0, UINT64_MAX, 1);
	run_tur(h, 0);
	h_expect_sense(h, SK_NOT_READY, 0x3f, 0x03);
	run_tur(h, 0);
	h_expect_good(h);

	/* a rule limited to an LBA range never hits LBA-less commands */
	add_rule(h, FAULT_UA, 0, 10, 20, 0);
	run_tur(h, 0);
	h_expect_good(h);
	assert_int_equal(h->stats.faults, 4);
	h_free(h);
}

static void test_faults_with_lba(void **state)
{
	struct harness *h = h_new(16);
	struct lun_group g = h_group("big", 0, 1, 4096 * GIB);
	uint8_t buf[20 * 512];
	uint8_t r16[16] = {0x88};
	struct h_sense s;

	(void)state;
	h_add_group(h, &g);
	h_clear_ua(h, 0);
	add_rule(h, FAULT_MEDIUM_READ, 0, 100, 199, 0);
	run_read10(h, 0, 150, 1, buf, 512);
	h_expect_sense(h, SK_MEDIUM_ERROR, 0x11, 0x00);
	h_expect_info(h, 150);
	run_read10(h, 0, 90, 20, buf, sizeof(buf));
	h_expect_sense(h, SK_MEDIUM_ERROR, 0x11, 0x00);
	h_expect_info(h, 100);
	run_read10(h, 0, 200, 20, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(fault_clear(h->faults, 0), 1);

	/* past 2^32: fixed format cannot carry the LBA, descriptor can */
	add_rule(h, FAULT_MEDIUM_READ, 0, (1ull << 32) + 5, (1ull << 32) + 5,
		 0);
	put_be64(r16 + 2, (1ull << 32) + 5);
	put_be32(r16 + 10, 1);
	h_exec(h, 0, r16, sizeof(r16), SCSI_DIR_READ, buf, 512);
	h_expect_sense(h, SK_MEDIUM_ERROR, 0x11, 0x00);
	assert_true(h_sense_parse(h->cmd.sense, h->cmd.sense_len, &s));
	assert_false(s.descriptor);
	assert_false(s.info_valid);
	assert_int_equal(
		lun_mode_set(h->luns, 0, LUN_MODE_D_SENSE, LUN_NEXUS_NONE), 0);
	h_clear_ua(h, 0);
	h_exec(h, 0, r16, sizeof(r16), SCSI_DIR_READ, buf, 512);
	h_expect_sense(h, SK_MEDIUM_ERROR, 0x11, 0x00);
	h_expect_info(h, (1ull << 32) + 5);
	assert_true(h_sense_parse(h->cmd.sense, h->cmd.sense_len, &s));
	assert_true(s.descriptor);
	h_free(h);
}

/* ---- sense formats and the errno mapping ------------------------------ */

static void test_sense_bytes(void **state)
{
	struct scsi_cmd cmd;
	uint8_t buf[SCSI_SENSE_MAX];
	static const uint8_t fixed[18] = {
		0x70, 0, 0x06, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x29, 0x01,
	};
	static const uint8_t desc[8] = {0x72, 0x06, 0x29, 0x01, 0, 0, 0, 0};

	(void)state;
	memset(&cmd, 0, sizeof(cmd));
	scsi_set_sense(&cmd, false, SK_UNIT_ATTENTION, 0x29, 0x01);
	assert_int_equal(cmd.status, SCSI_CHECK_CONDITION);
	assert_int_equal(cmd.sense_len, 18);
	assert_memory_equal(cmd.sense, fixed, 18);
	scsi_set_sense(&cmd, true, SK_UNIT_ATTENTION, 0x29, 0x01);
	assert_int_equal(cmd.sense_len, 8);
	assert_memory_equal(cmd.sense, desc, 8);
	assert_int_equal(scsi_sense_format(buf, false, 0, 0, 0), 18);
	assert_int_equal(buf[0], 0x70);
	assert_int_equal(scsi_sense_format(buf, true, 0, 0, 0), 8);
	assert_int_equal(buf[0], 0x72);
}

/* The exact field pointer bytes in both formats. */
static void test_sense_field_pointer_bytes(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	uint8_t buf[36];
	const uint8_t *s = h->cmd.sense;

	(void)state;
	h_clear_ua(h, 0);
	h_exec(h, 0, H_CDB(0x12, 0, 0x80, 0, 36, 0), SCSI_DIR_READ, buf, 36);
	h_expect_invalid_cdb(h, 2, 7);
	assert_int_equal(h->cmd.sense_len, 18);
	assert_int_equal(s[0], 0x70);
	assert_int_equal(s[7], 10);
	assert_int_equal(s[15], 0x80 | 0x40 | 0x08 | 7);
	assert_int_equal(s[16], 0);
	assert_int_equal(s[17], 2);

	assert_int_equal(
		lun_mode_set(h->luns, 0, LUN_MODE_D_SENSE, LUN_NEXUS_NONE), 0);
	h_exec(h, 0, H_CDB(0x12, 0, 0x80, 0, 36, 0), SCSI_DIR_READ, buf, 36);
	h_expect_invalid_cdb(h, 2, 7);
	assert_int_equal(h->cmd.sense_len, 16);
	assert_int_equal(s[0], 0x72);
	assert_int_equal(s[7], 8);
	assert_memory_equal(s + 8,
			    ((uint8_t[8]){0x02, 0x06, 0, 0, 0xcf, 0, 2, 0}), 8);
	h_free(h);
}

static void test_errno_mapping(void **state)
{
	static const struct {
		int err;
		bool write;
		uint8_t key, asc, ascq;
		bool info;
	} cases[] = {
		{-ENOSPC, true, SK_DATA_PROTECT, 0x27, 0x07, false},
		{-EIO, false, SK_MEDIUM_ERROR, 0x11, 0x00, true},
		{-EIO, true, SK_MEDIUM_ERROR, 0x0c, 0x00, true},
		{-EROFS, true, SK_DATA_PROTECT, 0x27, 0x00, false},
		{-ENOMEDIUM, false, SK_NOT_READY, 0x04, 0x03, false},
		{-ENODEV, false, SK_ILLEGAL_REQUEST, 0x25, 0x00, false},
		{-ERANGE, false, SK_ILLEGAL_REQUEST, 0x21, 0x00, false},
		{-EINVAL, false, SK_ILLEGAL_REQUEST, 0x24, 0x00, false},
		{-ENOMEM, true, SK_HARDWARE_ERROR, 0x44, 0x00, false},
		{-EFBIG, true, SK_HARDWARE_ERROR, 0x44, 0x00, false},
	};
	struct scsi_cmd cmd;
	struct scsi_ctx c = {.cmd = &cmd};
	struct h_sense s;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&cmd, 0, sizeof(cmd));
		scsi_sense_errno(&c, cases[i].err, cases[i].write, 1234);
		assert_int_equal(cmd.status, SCSI_CHECK_CONDITION);
		assert_true(h_sense_parse(cmd.sense, cmd.sense_len, &s));
		assert_int_equal(s.key, cases[i].key);
		assert_int_equal(s.asc, cases[i].asc);
		assert_int_equal(s.ascq, cases[i].ascq);
		assert_int_equal(s.info_valid, cases[i].info);
		if (cases[i].info)
			assert_int_equal(s.info, 1234);
	}
	memset(&cmd, 0, sizeof(cmd));
	scsi_sense_errno(&c, 0, false, 0);
	assert_int_equal(cmd.status, SCSI_GOOD);
	assert_int_equal(cmd.sense_len, 0);
	/* -ENOMEDIUM names the LUN's own state */
	c.have_lun = true;
	c.li.state = LUN_STOPPED;
	scsi_sense_errno(&c, -ENOMEDIUM, false, 0);
	assert_true(h_sense_parse(cmd.sense, cmd.sense_len, &s));
	assert_int_equal(s.ascq, 0x02);
}

/* ---- data copies -------------------------------------------------------- */

static void test_copy_bounds(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	uint8_t a[7], b[5], c[200], flat[96];
	struct iovec iov[3] = {
		{a, sizeof(a)},
		{b, sizeof(b)},
		{c, sizeof(c)},
	};
	static const uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};

	(void)state;
	h_exec(h, 0, inq, sizeof(inq), SCSI_DIR_READ, flat, sizeof(flat));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 96);
	/* split over three iovecs: the same bytes */
	h_exec_iov(h, 0, inq, sizeof(inq), SCSI_DIR_READ, iov, 3, 212);
	assert_int_equal(h->cmd.data_len, 96);
	assert_memory_equal(a, flat, 7);
	assert_memory_equal(b, flat + 7, 5);
	assert_memory_equal(c, flat + 12, 84);
	/* xfer_len shorter than the allocation length wins */
	memset(c, 0xaa, sizeof(c));
	h_exec_iov(h, 0, inq, sizeof(inq), SCSI_DIR_READ, iov, 3, 20);
	assert_int_equal(h->cmd.data_len, 20);
	assert_int_equal(c[8], 0xaa);
	/* iovecs smaller than xfer_len: what fits */
	h_exec_iov(h, 0, inq, sizeof(inq), SCSI_DIR_READ, iov, 2, 96);
	assert_int_equal(h->cmd.data_len, 12);
	/* never into a buffer declared Data-Out */
	memset(flat, 0x55, sizeof(flat));
	h_exec(h, 0, inq, sizeof(inq), SCSI_DIR_WRITE, flat, sizeof(flat));
	assert_int_equal(h->cmd.data_len, 0);
	assert_int_equal(flat[0], 0x55);
	/* no buffer at all */
	h_exec(h, 0, inq, sizeof(inq), SCSI_DIR_READ, NULL, 0);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	h_free(h);
}

/* ---- statistics --------------------------------------------------------- */

static void test_stats(void **state)
{
	struct harness *h = h_new_luns(16, 1, GIB);
	struct scsi_stats *st = &h->stats;
	struct scsi_stats_sum sum;
	struct scsi_cmd cmd;
	uint8_t buf[96];
	uint64_t lat = 0;
	unsigned int i;

	(void)state;
	run_tur(h, 0); /* UA: an error */
	run_tur(h, 0);
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 36, 0), SCSI_DIR_READ, buf, 96);
	assert_int_equal(st->op[0x00].count, 2);
	assert_int_equal(st->op[0x00].errors, 1);
	assert_int_equal(st->op[0x12].count, 2);
	assert_int_equal(st->op[0x12].errors, 0);
	assert_int_equal(st->op[0x12].bytes, 96 + 36);
	for (i = 0; i < SCSI_LAT_BUCKETS; i++)
		lat += st->lat[i];
	assert_int_equal(lat, 4);

	memset(&sum, 0, sizeof(sum));
	scsi_stats_add(&sum, st);
	scsi_stats_add(&sum, st);
	assert_int_equal(sum.op[0x12].bytes, 2 * (96 + 36));
	assert_int_equal(sum.op[0x00].errors, 2);

	/* no counters: still runs */
	memset(&cmd, 0, sizeof(cmd));
	cmd.tgt = &h->tgt;
	cmd.cdb = tur;
	cmd.cdb_len = 6;
	assert_int_equal(scsi_exec(&cmd), SCSI_DONE);
	assert_int_equal(cmd.status, SCSI_GOOD);
	assert_int_equal(st->op[0x00].count, 2);

	assert_int_equal(scsi_lat_bucket(0), 0);
	assert_int_equal(scsi_lat_bucket(1), 1);
	assert_int_equal(scsi_lat_bucket(2), 2);
	assert_int_equal(scsi_lat_bucket(3), 2);
	assert_int_equal(scsi_lat_bucket(1024), 11);
	assert_int_equal(scsi_lat_bucket(UINT64_MAX), SCSI_LAT_BUCKETS - 1);

	memset(&sum, 0, sizeof(sum));
	assert_int_equal(scsi_lat_percentile(&sum, 50), 0);
	sum.lat[scsi_lat_bucket(1000)] = 90; /* 512..1023 ns */
	sum.lat[scsi_lat_bucket(100000)] = 9; /* 65536..131071 */
	sum.lat[scsi_lat_bucket(10000000)] = 1; /* 2^23..2^24-1 */
	assert_int_equal(scsi_lat_percentile(&sum, 0), 1023);
	assert_int_equal(scsi_lat_percentile(&sum, 50), 1023);
	assert_int_equal(scsi_lat_percentile(&sum, 90), 1023);
	assert_int_equal(scsi_lat_percentile(&sum, 90.5), 131071);
	assert_int_equal(scsi_lat_percentile(&sum, 99), 131071);
	assert_int_equal(scsi_lat_percentile(&sum, 100), (1u << 24) - 1);
	h_free(h);
}

/* ---- serial numbers ----------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t x = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++)
		x = (x ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return x;
}

/* 2^20 serials of one table: an open-addressed set of 2^21 slots. */
static void test_serials_unique(void **state)
{
	const uint32_t n = 1u << 20, slots = 1u << 21;
	struct harness *h = h_new(n);
	char *all = malloc((size_t)n * LUN_SERIAL_LEN);
	uint32_t *set = calloc(slots, sizeof(*set));
	char buf[LUN_SERIAL_LEN + 1];
	uint32_t lun, i;

	(void)state;
	assert_non_null(all);
	assert_non_null(set);
	assert_int_equal(lun_max(h->luns), n);
	for (lun = 0; lun < n; lun++) {
		char *s = all + (size_t)lun * LUN_SERIAL_LEN;

		assert_int_equal(lun_serial(h->luns, lun, buf, sizeof(buf)),
				 LUN_SERIAL_LEN);
		memcpy(s, buf, LUN_SERIAL_LEN);
		/* printable ASCII, as VPD page 80h requires */
		for (i = 0; i < LUN_SERIAL_LEN; i++)
			assert_true(buf[i] > 0x20 && buf[i] < 0x7f);
		for (i = (uint32_t)fnv1a(s, LUN_SERIAL_LEN) & (slots - 1);
		     set[i]; i = (i + 1) & (slots - 1))
			assert_memory_not_equal(all + (size_t)(set[i] - 1) *
								LUN_SERIAL_LEN,
						s, LUN_SERIAL_LEN);
		set[i] = lun + 1;
	}
	free(set);
	free(all);
	h_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdb_len),
		cmocka_unit_test(test_lun_encode_decode),
		cmocka_unit_test(test_opcode_names),
		cmocka_unit_test(test_table_consistency),
		cmocka_unit_test(test_unknown_opcode_and_sa),
		cmocka_unit_test(test_reserved_bits_everywhere),
		cmocka_unit_test(test_absent_lun),
		cmocka_unit_test(test_view_translation),
		cmocka_unit_test(test_ua_power_on_once),
		cmocka_unit_test(test_ua_luns_changed_and_capacity),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_software_write_protect),
		cmocka_unit_test(test_faults_without_lba),
		cmocka_unit_test(test_faults_with_lba),
		cmocka_unit_test(test_sense_bytes),
		cmocka_unit_test(test_sense_field_pointer_bytes),
		cmocka_unit_test(test_errno_mapping),
		cmocka_unit_test(test_copy_bounds),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_serials_unique),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
