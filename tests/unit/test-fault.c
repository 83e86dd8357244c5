// SPDX-License-Identifier: MIT
/*
 * Fault rules: matching by LUN, LBA and op, one-shot counts, listing, and
 * fault_exists() through adds, clears and counts running out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "fault.h"

static void test_rules(void **state)
{
	struct fault_table *ft;
	struct fault_rule r = {.kind = FAULT_MEDIUM_READ,
			       .lun_first = 5,
			       .lun_last = 9,
			       .lba_first = 100,
			       .lba_last = 199};
	struct fault_rule list[4];
	struct fault_hit h;
	int id, id2;

	(void)state;
	assert_false(fault_check(NULL, 0, 0, 1, FAULT_OP_READ, &h));
	assert_int_equal(fault_table_create(&ft), 0);
	assert_false(fault_check(ft, 5, 150, 1, FAULT_OP_READ, &h));
	id = fault_add(ft, &r);
	assert_true(id >= 1);
	/* reads overlapping the range fire, with the first bad LBA */
	assert_true(fault_check(ft, 5, 90, 20, FAULT_OP_READ, &h));
	assert_int_equal(h.kind, FAULT_MEDIUM_READ);
	assert_int_equal(h.lba, 100);
	assert_true(fault_check(ft, 9, 199, 1, FAULT_OP_READ, &h));
	assert_int_equal(h.lba, 199);
	assert_false(fault_check(ft, 9, 200, 8, FAULT_OP_READ, &h));
	assert_false(fault_check(ft, 4, 150, 1, FAULT_OP_READ, &h));
	assert_false(fault_check(ft, 10, 150, 1, FAULT_OP_READ, &h));
	/* medium-read is a read fault only */
	assert_false(fault_check(ft, 5, 150, 1, FAULT_OP_WRITE, &h));
	/* no-LBA commands match only whole-LUN rules */
	assert_false(fault_check(ft, 5, 0, 0, FAULT_OP_OTHER, &h));

	/* a one-shot UA on every LUN */
	r = (struct fault_rule){.kind = FAULT_UA,
				.lun_first = 0,
				.lun_last = UINT32_MAX,
				.lba_last = UINT64_MAX,
				.asc = 0x3f,
				.ascq = 0x03,
				.count = 1};
	id2 = fault_add(ft, &r);
	assert_true(id2 > id);
	assert_int_equal(fault_list(ft, list, 4), 2);
	assert_int_equal(list[0].hits, 2);
	assert_true(fault_check(ft, 77, 0, 0, FAULT_OP_OTHER, &h));
	assert_int_equal(h.kind, FAULT_UA);
	assert_int_equal(h.asc, 0x3f);
	assert_false(fault_check(ft, 77, 0, 0, FAULT_OP_OTHER, &h));
	assert_int_equal(fault_list(ft, list, 4), 1);
	assert_int_equal(fault_total_hits(ft), 3);

	/* bad rules */
	r = (struct fault_rule){.kind = FAULT_DELAY, .lun_last = 1};
	assert_int_equal(fault_add(ft, &r), -EINVAL); /* no delay */
	r.delay_ns = 601ull * 1000000000ull;
	assert_int_equal(fault_add(ft, &r), -EINVAL);
	r = (struct fault_rule){.kind = 99};
	assert_int_equal(fault_add(ft, &r), -EINVAL);
	r = (struct fault_rule){
		.kind = FAULT_HANG, .lun_first = 3, .lun_last = 2};
	assert_int_equal(fault_add(ft, &r), -EINVAL);

	assert_int_equal(fault_clear(ft, 12345), -ENOENT);
	assert_int_equal(fault_clear(ft, (uint32_t)id), 1);
	assert_int_equal(fault_list(ft, list, 4), 0);
	assert_int_equal(fault_kind_parse("medium-write"), FAULT_MEDIUM_WRITE);
	assert_int_equal(fault_kind_parse("bogus"), -EINVAL);
	assert_string_equal(fault_kind_name(FAULT_NOT_READY), "not-ready");
	fault_table_destroy(ft);
}

static void test_exists(void **state)
{
	struct fault_table *ft;
	struct fault_rule r = {
		.kind = FAULT_HANG, .lun_last = 3, .lba_last = UINT64_MAX};
	struct fault_hit h;
	int ids[100], i;

	(void)state;
	assert_false(fault_exists(NULL, 1));
	assert_int_equal(fault_table_create(&ft), 0);
	assert_false(fault_exists(ft, 1));
	for (i = 0; i < 100; i++) {
		ids[i] = fault_add(ft, &r);
		assert_true(ids[i] >= 1);
	}
	for (i = 0; i < 100; i++)
		assert_true(fault_exists(ft, (uint32_t)ids[i]));
	assert_false(fault_exists(ft, 0));
	assert_false(fault_exists(ft, (uint32_t)ids[99] + 1));
	/* cleared: the odd ones */
	for (i = 1; i < 100; i += 2)
		assert_int_equal(fault_clear(ft, (uint32_t)ids[i]), 1);
	for (i = 0; i < 100; i++)
		assert_int_equal(fault_exists(ft, (uint32_t)ids[i]),
				 i % 2 == 0);
	/* used up: a one-shot, alone in the table, fires once */
	assert_int_equal(fault_clear(ft, 0), 50);
	r.count = 1;
	r.lun_first = 3;
	ids[0] = fault_add(ft, &r);
	assert_true(fault_exists(ft, (uint32_t)ids[0]));
	assert_true(fault_check(ft, 3, 0, 1, FAULT_OP_READ, &h));
	assert_int_equal(h.id, ids[0]);
	assert_false(fault_exists(ft, (uint32_t)ids[0]));
	fault_table_destroy(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_exists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
