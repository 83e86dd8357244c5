// SPDX-License-Identifier: MIT
/*
 * LUN and target resets as every front end calls them (scsi_lun_reset(),
 * scsi_target_reset()): the reset unit attention 29h/00h for every I_T
 * nexus on exactly the LUNs reset, RESERVE(6) released there and kept
 * elsewhere, views, and LUNs outside the view or absent.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "scsi-harness.h"

#define MIB (1ull << 20)
#define NLUNS 8u /* LUNs 0..7 present in a table of 16 */

/* Two I_T nexuses, known by id only. */
static const uint32_t NEXUS[] = {1, 2};

/* One CDB from nexus @nexus to table LUN @lun; the status. */
static uint8_t x_exec(struct harness *h, uint32_t nexus, uint32_t lun,
		      const uint8_t *cdb, size_t cdb_len)
{
	h->nexus = nexus;
	h_exec(h, lun, cdb, cdb_len, SCSI_DIR_NONE, NULL, 0);
	h->nexus = 0;
	return h->cmd.status;
}

#define RESERVE6(h, n, lun) x_exec((h), (n), (lun), H_CDB(0x16, 0, 0, 0, 0, 0))

/* LUNs 0..7 of 1 MiB, both nexuses' POWER ON attentions taken. */
static struct harness *setup(void)
{
	struct harness *h = h_new_luns(16, NLUNS, MIB);
	unsigned int i;
	uint32_t l;

	for (i = 0; i < 2; i++) {
		h->nexus = NEXUS[i];
		for (l = 0; l < NLUNS; l++)
			h_clear_ua(h, l);
	}
	h->nexus = 0;
	return h;
}

static void teardown(struct harness *h)
{
	scsi_target_fini(&h->tgt);
	h_free(h);
}

/*
 * Table LUN @lun was reset (@reset) or not, as both nexuses see it: the
 * reset unit attention once each, then nothing. REQUEST SENSE reports it
 * (TEST UNIT READY would meet a RESERVE(6) of the other nexus).
 */
static void expect_reset(struct harness *h, uint32_t lun, bool reset)
{
	uint8_t buf[SCSI_SENSE_MAX];
	struct h_sense s;
	unsigned int i, k;

	for (i = 0; i < 2; i++) {
		for (k = 0; k < 2; k++) {
			h->nexus = NEXUS[i];
			h_exec(h, lun, H_CDB(0x03, 0, 0, 0, sizeof(buf), 0),
			       SCSI_DIR_READ, buf, sizeof(buf));
			h->nexus = 0;
			h_expect_good(h);
			assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
			if (reset && !k) {
				assert_int_equal(s.key, SK_UNIT_ATTENTION);
				assert_int_equal(s.asc, 0x29);
				assert_int_equal(s.ascq, 0x00);
			} else {
				assert_int_equal(s.key, SK_NO_SENSE);
				assert_int_equal(s.asc, 0);
				assert_int_equal(s.ascq, 0);
			}
		}
	}
}

/* Only table LUNs @first..@last (inclusive) were reset. */
static void expect_reset_range(struct harness *h, uint32_t first, uint32_t last)
{
	uint32_t l;

	for (l = 0; l < NLUNS; l++)
		expect_reset(h, l, l >= first && l <= last);
}

static void test_lun_reset(void **state)
{
	struct harness *h = setup();

	(void)state;
	/* nexus 1 holds RESERVE(6) on LUNs 2 and 3 */
	assert_int_equal(RESERVE6(h, NEXUS[0], 2), SCSI_GOOD);
	assert_int_equal(RESERVE6(h, NEXUS[0], 3), SCSI_GOOD);
	assert_int_equal(RESERVE6(h, NEXUS[1], 2), SCSI_RESERVATION_CONFLICT);

	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 2), 0);
	expect_reset_range(h, 2, 2);
	/* LUN 2's reservation is gone, LUN 3's stays */
	assert_int_equal(RESERVE6(h, NEXUS[1], 2), SCSI_GOOD);
	assert_int_equal(RESERVE6(h, NEXUS[1], 3), SCSI_RESERVATION_CONFLICT);

	/* a second reset: one attention again, not two */
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 2), 0);
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 2), 0);
	expect_reset_range(h, 2, 2);
	teardown(h);
}

static void test_lun_reset_view(void **state)
{
	struct harness *h = setup();
	const struct scsi_view v = {.base = 4, .count = 6};

	(void)state;
	assert_int_equal(RESERVE6(h, NEXUS[0], 5), SCSI_GOOD);
	/* view LUN 1 is table LUN 5 */
	assert_int_equal(scsi_lun_reset(&h->tgt, &v, 1), 0);
	expect_reset_range(h, 5, 5);
	assert_int_equal(RESERVE6(h, NEXUS[1], 5), SCSI_GOOD);

	/* outside the view, absent (table LUNs 8, 9), or off the table */
	assert_int_equal(scsi_lun_reset(&h->tgt, &v, 6), -ENODEV);
	assert_int_equal(scsi_lun_reset(&h->tgt, &v, 4), -ENODEV);
	assert_int_equal(scsi_lun_reset(&h->tgt, &v, 5), -ENODEV);
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 8), -ENODEV);
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 16), -ENODEV);
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, UINT32_MAX), -ENODEV);
	expect_reset_range(h, 1, 0); /* nothing */
	/* LUN 5's new reservation was not touched by any of them */
	assert_int_equal(RESERVE6(h, NEXUS[0], 5), SCSI_RESERVATION_CONFLICT);
	teardown(h);
}

static void test_target_reset(void **state)
{
	struct harness *h = setup();
	const struct scsi_view v = {.base = 2, .count = 3};
	const struct scsi_view tail = {.base = 6, .count = 10};
	uint32_t l;

	(void)state;
	/* nexus 1 holds RESERVE(6) on every LUN */
	for (l = 0; l < NLUNS; l++)
		assert_int_equal(RESERVE6(h, NEXUS[0], l), SCSI_GOOD);

	/* a view's reset: its LUNs 2..4 only */
	scsi_target_reset(&h->tgt, &v);
	expect_reset_range(h, 2, 4);
	for (l = 0; l < NLUNS; l++)
		assert_int_equal(RESERVE6(h, NEXUS[1], l),
				 l >= 2 && l <= 4 ? SCSI_GOOD
						  : SCSI_RESERVATION_CONFLICT);

	/* a view running past the present LUNs: 6 and 7 */
	scsi_target_reset(&h->tgt, &tail);
	expect_reset_range(h, 6, 7);
	assert_int_equal(RESERVE6(h, NEXUS[1], 7), SCSI_GOOD);

	/* a warm or cold reset without a view: the whole table */
	scsi_target_reset(&h->tgt, NULL);
	expect_reset_range(h, 0, NLUNS - 1);
	for (l = 0; l < NLUNS; l++)
		assert_int_equal(RESERVE6(h, NEXUS[0], l), SCSI_GOOD);
	teardown(h);
}

/* Without any reservation state, resets allocate none. */
static void test_no_reservations(void **state)
{
	struct harness *h = setup();

	(void)state;
	assert_int_equal(scsi_lun_reset(&h->tgt, NULL, 0), 0);
	scsi_target_reset(&h->tgt, NULL);
	assert_null(h->tgt.pr);
	expect_reset_range(h, 0, NLUNS - 1);
	teardown(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lun_reset),
		cmocka_unit_test(test_lun_reset_view),
		cmocka_unit_test(test_target_reset),
		cmocka_unit_test(test_no_reservations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
