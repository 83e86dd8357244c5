// SPDX-License-Identifier: MIT
/*
 * lun_watch_add() and fault_watch_set(): every change a LUN's readers could
 * notice reaches the watchers, in the changing thread, with its range;
 * reads and no-op changes do not; after removal nothing more comes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "lun.h"

#define MAXREC 16

struct rec {
	unsigned int n;
	struct lun_change c[MAXREC];
};

static void watch(void *arg, const struct lun_change *c)
{
	struct rec *r = arg;

	if (r->n < MAXREC)
		r->c[r->n] = *c;
	r->n++;
}

static void expect(struct rec *r, unsigned int i, enum lun_change_kind kind,
		   uint32_t lun, uint64_t lba, uint64_t n)
{
	assert_true(i < r->n);
	assert_int_equal(r->c[i].kind, kind);
	assert_int_equal(r->c[i].lun_first, lun);
	assert_int_equal(r->c[i].lun_last, lun);
	assert_int_equal(r->c[i].lba, lba);
	assert_int_equal(r->c[i].nblocks, n);
}

static void test_lun_changes(void **state)
{
	struct store_mem_params mp = {.chunk_size = 4096};
	struct lun_table_params tp = {.max_luns = 16, .seed = 1};
	struct lun_group g = {.name = "g",
			      .count = 2,
			      .size = 1 << 20,
			      .block_size = 512,
			      .thin = true};
	struct store *st;
	struct lun_table *t;
	struct lun_info li;
	struct rec r = {0}, r2 = {0};
	char buf[1024];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	int id, id2;

	(void)state;
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(store_mem_create(&st, &mp), 0);
	tp.store = st;
	assert_int_equal(lun_table_create(&t, &tp), 0);
	assert_int_equal(lun_group_add(t, &g), 0);
	id = lun_watch_add(t, watch, &r);
	assert_true(id >= 0);
	id2 = lun_watch_add(t, watch, &r2);
	assert_true(id2 >= 0 && id2 != id);

	assert_int_equal(lun_get(t, 1, &li), 0);
	assert_int_equal(lun_read(t, &li, 0, 2, &iov, 1), 0);
	assert_int_equal(r.n, 0); /* reads change nothing */
	assert_int_equal(lun_write(t, &li, 10, 2, &iov, 1, 0), 0);
	expect(&r, 0, LUN_CHANGE_DATA, 1, 10, 2);
	assert_int_equal(lun_write_zeroes(t, &li, 20, 7, 0), 0);
	expect(&r, 1, LUN_CHANGE_DATA, 1, 20, 7);
	assert_int_equal(lun_unmap(t, &li, 30, 9), 0);
	expect(&r, 2, LUN_CHANGE_DATA, 1, 30, 9);
	/* out of range: nothing was written, nothing is said */
	assert_int_equal(lun_write(t, &li, 1 << 20, 2, &iov, 1, 0), -ERANGE);
	assert_int_equal(r.n, 3);
	lun_put(t, &li);

	assert_int_equal(lun_resize(t, 1, 2 << 20), 0);
	expect(&r, 3, LUN_CHANGE_SIZE, 1, 0, 0);
	assert_int_equal(lun_resize(t, 1, 2 << 20), 0); /* same size */
	assert_int_equal(r.n, 4);
	assert_int_equal(lun_set_state(t, 1, LUN_OFFLINE), 0);
	expect(&r, 4, LUN_CHANGE_STATE, 1, 0, 0);
	assert_int_equal(lun_set_state(t, 1, LUN_OFFLINE), 0); /* no change */
	assert_int_equal(r.n, 5);
	assert_int_equal(lun_remove(t, 1), 0);
	expect(&r, 5, LUN_CHANGE_REMOVED, 1, 0, 0);
	assert_int_equal(lun_add(t, 7, 0), 7);
	expect(&r, 6, LUN_CHANGE_ADDED, 7, 0, 0);
	assert_int_equal(r2.n, r.n); /* both watchers heard all */

	lun_watch_remove(t, id);
	assert_int_equal(lun_remove(t, 7), 0);
	assert_int_equal(r.n, 7);
	assert_int_equal(r2.n, 8);
	lun_watch_remove(t, id2);
	lun_table_destroy(t);
	store_destroy(st);
}

static unsigned int nfault;
static struct fault_rule last;

static void fwatch(void *arg, const struct fault_rule *r)
{
	(void)arg;
	last = *r;
	nfault++;
}

static void test_fault_changes(void **state)
{
	struct fault_table *ft;
	struct fault_rule r = {.kind = FAULT_MEDIUM_READ,
			       .lun_first = 2,
			       .lun_last = 3,
			       .lba_first = 100,
			       .lba_last = 199};
	int id;

	(void)state;
	assert_int_equal(fault_table_create(&ft), 0);
	assert_int_equal(fault_watch_set(ft, fwatch, NULL), 0);
	assert_int_equal(fault_watch_set(ft, fwatch, NULL), -EBUSY);
	id = fault_add(ft, &r);
	assert_true(id > 0);
	assert_int_equal(nfault, 1);
	assert_int_equal(last.id, (uint32_t)id);
	assert_int_equal(last.lun_first, 2);
	assert_int_equal(last.lba_last, 199);
	assert_true(last.ops &
		    FAULT_OP_READ); /* the kind's default filled in */
	r.lun_first = 5; /* bad: first past last */
	assert_int_equal(fault_add(ft, &r), -EINVAL);
	assert_int_equal(nfault, 1);
	assert_int_equal(fault_watch_set(ft, NULL, NULL), 0);
	r.lun_first = 2;
	assert_true(fault_add(ft, &r) > 0);
	assert_int_equal(nfault, 1);
	fault_table_destroy(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lun_changes),
		cmocka_unit_test(test_fault_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
