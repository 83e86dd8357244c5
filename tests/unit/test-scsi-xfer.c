// SPDX-License-Identifier: MIT
/*
 * cmd->cdb_xfer_len, the bytes a CDB itself asks to move, which the iSCSI
 * front end compares with the expected data transfer length for residual
 * overflow: every opcode of the table, block counts at 512 and 4096 bytes
 * a block, allocation and parameter list lengths, the odd ones (READ(6)'s
 * 0, VERIFY's BYTCHK, WRITE SAME, COMPARE AND WRITE), and the fallback to
 * the transport's own length.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "bytes.h"
#include "scsi-harness.h"
#include "scsi/scsi_i.h"

#define MIB (1ull << 20)

/* LUN 0 has 512-byte blocks, LUN 1 4096-byte ones; LUN 9 is absent. */
#define LUN_512 0
#define LUN_4K 1
#define LUN_ABSENT 9

/* The transport's expected length: no CDB below asks for exactly this. */
#define XFER 1000u

/*
 * One CDB: @opcode, @byte1 (service action, BYTCHK, NDOB...), @len bytes,
 * and @value in the @width-byte big-endian field at @off (width 0: none).
 * @want counts logical blocks if @blocks, else bytes.
 */
struct xcase {
	const char *name;
	uint8_t opcode, byte1, len;
	uint8_t off, width;
	uint32_t value;
	bool blocks;
	uint32_t want;
};

#define W2 0x0123u
#define W4B 0x00010203u /* blocks: times 4096 still fits 32 bits */
#define W4 0x01020304u

/* clang-format off */
static const struct xcase block_cases[] = {
	{ "READ_6", 0x08, 0, 6, 4, 1, 5, true, 5 },
	{ "READ_6 0 is 256", 0x08, 0, 6, 4, 1, 0, true, 256 },
	{ "WRITE_6", 0x0a, 0, 6, 4, 1, 9, true, 9 },
	{ "WRITE_6 0 is 256", 0x0a, 0, 6, 4, 1, 0, true, 256 },
	{ "READ_10", 0x28, 0, 10, 7, 2, W2, true, W2 },
	{ "WRITE_10", 0x2a, 0, 10, 7, 2, W2, true, W2 },
	{ "WRITE_AND_VERIFY_10", 0x2e, 0, 10, 7, 2, W2, true, W2 },
	{ "VERIFY_10 BYTCHK 0", 0x2f, 0x00, 10, 7, 2, W2, true, 0 },
	{ "VERIFY_10 BYTCHK 1", 0x2f, 0x02, 10, 7, 2, W2, true, W2 },
	{ "VERIFY_10 BYTCHK 2", 0x2f, 0x04, 10, 7, 2, W2, true, W2 },
	{ "VERIFY_10 BYTCHK 3", 0x2f, 0x06, 10, 7, 2, W2, true, 1 },
	{ "READ_12", 0xa8, 0, 12, 6, 4, W4B, true, W4B },
	{ "WRITE_12", 0xaa, 0, 12, 6, 4, W4B, true, W4B },
	{ "WRITE_AND_VERIFY_12", 0xae, 0, 12, 6, 4, W4B, true, W4B },
	{ "VERIFY_12 BYTCHK 0", 0xaf, 0x00, 12, 6, 4, W4B, true, 0 },
	{ "VERIFY_12 BYTCHK 1", 0xaf, 0x02, 12, 6, 4, W4B, true, W4B },
	{ "VERIFY_12 BYTCHK 3", 0xaf, 0x06, 12, 6, 4, W4B, true, 1 },
	{ "READ_16", 0x88, 0, 16, 10, 4, W4B, true, W4B },
	{ "READ_16 clamped", 0x88, 0, 16, 10, 4, 0xffffffffu, true,
	  0xffffffffu },
	{ "WRITE_16", 0x8a, 0, 16, 10, 4, W4B, true, W4B },
	{ "ORWRITE_16", 0x8b, 0, 16, 10, 4, W4B, true, W4B },
	{ "WRITE_AND_VERIFY_16", 0x8e, 0, 16, 10, 4, W4B, true, W4B },
	{ "VERIFY_16 BYTCHK 0", 0x8f, 0x00, 16, 10, 4, W4B, true, 0 },
	{ "VERIFY_16 BYTCHK 1", 0x8f, 0x02, 16, 10, 4, W4B, true, W4B },
	{ "VERIFY_16 BYTCHK 3", 0x8f, 0x06, 16, 10, 4, W4B, true, 1 },
	{ "WRITE_ATOMIC_16", 0x9c, 0, 16, 12, 2, W2, true, W2 },
	{ "WRITE_SAME_10", 0x41, 0, 10, 7, 2, W2, true, 1 },
	{ "WRITE_SAME_10 UNMAP", 0x41, 0x08, 10, 7, 2, W2, true, 1 },
	{ "WRITE_SAME_16", 0x93, 0, 16, 10, 4, W4B, true, 1 },
	{ "WRITE_SAME_16 UNMAP", 0x93, 0x08, 16, 10, 4, W4B, true, 1 },
	{ "WRITE_SAME_16 NDOB", 0x93, 0x01, 16, 10, 4, W4B, true, 0 },
	{ "WRITE_SAME_16 UNMAP NDOB", 0x93, 0x09, 16, 10, 4, W4B, true, 0 },
	{ "COMPARE_AND_WRITE", 0x89, 0, 16, 13, 1, 3, true, 6 },
};

static const struct xcase byte_cases[] = {
	{ "TEST_UNIT_READY", 0x00, 0, 6, 0, 0, 0, false, 0 },
	{ "REQUEST_SENSE", 0x03, 0, 6, 4, 1, 0xfc, false, 0xfc },
	{ "INQUIRY", 0x12, 0, 6, 3, 2, W2, false, W2 },
	{ "MODE_SELECT_6", 0x15, 0x10, 6, 4, 1, 0x18, false, 0x18 },
	{ "MODE_SENSE_6", 0x1a, 0, 6, 4, 1, 0xc0, false, 0xc0 },
	{ "START_STOP_UNIT", 0x1b, 0, 6, 4, 1, 0x01, false, 0 },
	{ "PREVENT_ALLOW", 0x1e, 0, 6, 4, 1, 0x01, false, 0 },
	{ "READ_CAPACITY_10", 0x25, 0, 10, 0, 0, 0, false, 8 },
	{ "PRE_FETCH_10", 0x34, 0, 10, 7, 2, W2, false, 0 },
	{ "SYNCHRONIZE_CACHE_10", 0x35, 0, 10, 7, 2, W2, false, 0 },
	{ "READ_DEFECT_DATA_10", 0x37, 0, 10, 7, 2, W2, false, W2 },
	{ "UNMAP", 0x42, 0, 10, 7, 2, W2, false, W2 },
	{ "SANITIZE OVERWRITE", 0x48, 0x01, 10, 7, 2, W2, false, W2 },
	{ "SANITIZE EXIT FAILURE MODE", 0x48, 0x1f, 10, 7, 2, W2, false, W2 },
	{ "MODE_SELECT_10", 0x55, 0x10, 10, 7, 2, W2, false, W2 },
	{ "MODE_SENSE_10", 0x5a, 0, 10, 7, 2, W2, false, W2 },
	{ "RESERVE_6", 0x16, 0, 6, 0, 0, 0, false, 0 },
	{ "RELEASE_6", 0x17, 0, 6, 0, 0, 0, false, 0 },
	{ "RESERVE_10", 0x56, 0, 10, 7, 2, W2, false, W2 },
	{ "RELEASE_10", 0x57, 0, 10, 7, 2, W2, false, W2 },
	{ "PERSISTENT_RESERVE_IN READ KEYS", 0x5e, 0x00, 10, 7, 2, W2, false,
	  W2 },
	{ "PERSISTENT_RESERVE_IN READ FULL STATUS", 0x5e, 0x03, 10, 7, 2, W2,
	  false, W2 },
	{ "PERSISTENT_RESERVE_IN unknown SA", 0x5e, 0x1f, 10, 7, 2, W2, false,
	  W2 },
	{ "PERSISTENT_RESERVE_OUT REGISTER", 0x5f, 0x00, 10, 5, 4, W4, false,
	  W4 },
	{ "PERSISTENT_RESERVE_OUT REGISTER AND MOVE", 0x5f, 0x07, 10, 5, 4, W4,
	  false, W4 },
	{ "PERSISTENT_RESERVE_OUT unknown SA", 0x5f, 0x1f, 10, 5, 4, W4, false,
	  W4 },
	{ "EXTENDED_COPY", 0x83, 0x00, 16, 10, 4, W4, false, W4 },
	{ "RECEIVE_COPY_RESULTS STATUS", 0x84, 0x00, 16, 10, 4, W4, false,
	  W4 },
	{ "RECEIVE_COPY_RESULTS FAILED SEGMENT", 0x84, 0x04, 16, 10, 4, W4,
	  false, W4 },
	{ "PRE_FETCH_16", 0x90, 0, 16, 10, 4, W4, false, 0 },
	{ "SYNCHRONIZE_CACHE_16", 0x91, 0, 16, 10, 4, W4, false, 0 },
	{ "READ_CAPACITY_16", 0x9e, 0x10, 16, 10, 4, W4, false, W4 },
	{ "GET_LBA_STATUS", 0x9e, 0x12, 16, 10, 4, W4, false, W4 },
	{ "SERVICE_ACTION_IN_16 unknown SA", 0x9e, 0x11, 16, 10, 4, W4, false,
	  W4 },
	{ "REPORT_LUNS", 0xa0, 0, 12, 6, 4, W4, false, W4 },
	{ "REPORT_TARGET_PORT_GROUPS", 0xa3, 0x0a, 12, 6, 4, W4, false, W4 },
	{ "REPORT_SUPPORTED_OPERATION_CODES", 0xa3, 0x0c, 12, 6, 4, W4, false,
	  W4 },
	{ "REPORT_SUPPORTED_TMFS", 0xa3, 0x0d, 12, 6, 4, W4, false, W4 },
	{ "MAINTENANCE_IN unknown SA", 0xa3, 0x05, 12, 6, 4, W4, false, W4 },
	{ "READ_DEFECT_DATA_12", 0xb7, 0, 12, 6, 4, W4, false, W4 },
};
/* clang-format on */

static uint8_t buf[XFER];

/* The harness's LUNs: LUN_512 and LUN_4K, 1 MiB each. */
static struct harness *xfer_harness(void)
{
	struct harness *h = h_new(16);
	struct lun_group g = h_group("b512", LUN_512, 1, MIB);

	h_add_group(h, &g);
	g = h_group("b4k", LUN_4K, 1, MIB);
	g.block_size = 4096;
	h_add_group(h, &g);
	return h;
}

/* RESERVE and PERSISTENT RESERVE OUT leave reservation state behind. */
static void xfer_free(struct harness *h)
{
	scsi_target_fini(&h->tgt);
	h_free(h);
}

/* Runs @x on @lun with XFER bytes expected; returns cdb_xfer_len. */
static uint32_t run(struct harness *h, uint32_t lun, const struct xcase *x,
		    size_t cdb_len)
{
	uint8_t cdb[16] = {0};

	cdb[0] = x->opcode;
	cdb[1] = x->byte1;
	switch (x->width) {
	case 1:
		cdb[x->off] = (uint8_t)x->value;
		break;
	case 2:
		put_be16(cdb + x->off, (uint16_t)x->value);
		break;
	case 4:
		put_be32(cdb + x->off, x->value);
		break;
	}
	memset(buf, 0, sizeof(buf));
	h_exec(h, lun, cdb, cdb_len, SCSI_DIR_NONE, buf, sizeof(buf));
	return h->cmd.cdb_xfer_len;
}

static uint32_t times(uint32_t blocks, uint32_t bs)
{
	uint64_t n = (uint64_t)blocks * bs;

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static void check(const struct xcase *x, uint32_t lun, uint32_t got,
		  uint32_t want)
{
	if (got != want)
		print_error("%s on LUN %u: cdb_xfer_len %u, want %u\n", x->name,
			    lun, got, want);
	assert_int_equal(got, want);
}

/*
 * Block counts: times the LUN's block size, whatever the command did (the
 * first one on each LUN ends with a unit attention, others with errors of
 * their own); the transport's length without a LUN to give a block size.
 */
static void test_block_counts(void **state)
{
	struct harness *h = xfer_harness();
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(block_cases); i++) {
		const struct xcase *x = &block_cases[i];

		check(x, LUN_512, run(h, LUN_512, x, x->len),
		      times(x->want, 512));
		check(x, LUN_4K, run(h, LUN_4K, x, x->len),
		      times(x->want, 4096));
		check(x, LUN_ABSENT, run(h, LUN_ABSENT, x, x->len), XFER);
	}
	xfer_free(h);
}

/* Allocation and parameter list lengths, fixed and no data: any LUN. */
static void test_byte_counts(void **state)
{
	struct harness *h = xfer_harness();
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(byte_cases); i++) {
		const struct xcase *x = &byte_cases[i];

		check(x, LUN_ABSENT, run(h, LUN_ABSENT, x, x->len), x->want);
	}
	/* a present LUN changes nothing, whatever its block size */
	for (i = 0; i < ARRAY_SIZE(byte_cases); i++) {
		const struct xcase *x = &byte_cases[i];

		/* no SANITIZE or START STOP UNIT on a LUN still needed */
		if (x->opcode == 0x48 || x->opcode == 0x1b)
			continue;
		check(x, LUN_4K, run(h, LUN_4K, x, x->len), x->want);
	}
	xfer_free(h);
}

/*
 * The transport's length when the CDB names none scsi/ knows: an opcode
 * outside the table, a CDB shorter than its group's, no CDB at all.
 */
static void test_fallback(void **state)
{
	static const struct xcase format_unit = {
		.name = "FORMAT_UNIT",
		.opcode = 0x04,
		.len = 6,
	};
	static const struct xcase vendor = {
		.name = "0xc0",
		.opcode = 0xc0,
		.len = 16,
	};
	static const struct xcase inquiry = {
		"INQUIRY", 0x12, 0, 6, 3, 2, W2, false, W2,
	};
	static const struct xcase read16 = {
		"READ_16", 0x88, 0, 16, 10, 4, 8, true, 8,
	};
	static const struct xcase prout = {
		"PERSISTENT_RESERVE_OUT", 0x5f, 0, 10, 5, 4, 24, false, 24,
	};
	struct harness *h = xfer_harness();

	(void)state;
	check(&format_unit, LUN_512, run(h, LUN_512, &format_unit, 6), XFER);
	check(&vendor, LUN_512, run(h, LUN_512, &vendor, 16), XFER);
	/* whole, then cut short */
	check(&inquiry, LUN_512, run(h, LUN_512, &inquiry, 6), W2);
	check(&inquiry, LUN_512, run(h, LUN_512, &inquiry, 5), XFER);
	check(&read16, LUN_4K, run(h, LUN_4K, &read16, 16), 8 * 4096);
	check(&read16, LUN_4K, run(h, LUN_4K, &read16, 12), XFER);
	check(&prout, LUN_ABSENT, run(h, LUN_ABSENT, &prout, 10), 24);
	check(&prout, LUN_ABSENT, run(h, LUN_ABSENT, &prout, 9), XFER);
	h_exec(h, LUN_512, NULL, 0, SCSI_DIR_NONE, buf, sizeof(buf));
	assert_int_equal(h->cmd.cdb_xfer_len, XFER);
	h_exec(h, LUN_512, H_CDB(0x12), SCSI_DIR_NONE, buf, sizeof(buf));
	assert_int_equal(h->cmd.cdb_xfer_len, XFER);
	xfer_free(h);
}

/*
 * The table itself: every command, and every opcode with service actions
 * (for one outside its sub-table), says where its length lives; a field
 * is 1, 2 or 4 bytes ending before the CONTROL byte; a command that moves
 * data is not marked as moving none, nor one marked so flagged for data.
 */
static void check_row(const struct scsi_op *op)
{
	const struct scsi_xfer *x = &op->xfer;

	if (x->unit == SCSI_XFER_UNKNOWN)
		print_error("%s: no transfer length\n", op->name);
	assert_int_not_equal(x->unit, SCSI_XFER_UNKNOWN);
	assert_true(x->unit <= SCSI_XFER_BLOCKS);
	assert_true(x->width == 0 || x->width == 1 || x->width == 2 ||
		    x->width == 4);
	if (x->width) {
		assert_true(x->off >= 1);
		assert_true(x->off + x->width <= op->cdb_len - 1);
	}
	if (x->unit == SCSI_XFER_NONE) {
		assert_int_equal(x->width, 0);
		assert_null(x->count);
		assert_false(op->flags & (SCSI_OP_DATA_IN | SCSI_OP_DATA_OUT));
	} else if (!x->width) {
		/* a fixed count, or the hook's */
		assert_true(x->fixed || x->count);
	}
	if (op->flags & (SCSI_OP_DATA_IN | SCSI_OP_DATA_OUT))
		assert_int_not_equal(x->unit, SCSI_XFER_NONE);
}

static void test_every_row(void **state)
{
	const struct scsi_op *op;
	unsigned int i, n = 0, nsa = 0;

	(void)state;
	for (i = 0; (op = scsi_op_at(i)); i++, n++)
		check_row(op);
	for (i = 0; i < 256; i++) {
		if (scsi_ops[i].nsa) {
			check_row(&scsi_ops[i]);
			nsa++;
		}
	}
	assert_int_equal(n, 67);
	assert_int_equal(nsa, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_counts),
		cmocka_unit_test(test_byte_counts),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_every_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
