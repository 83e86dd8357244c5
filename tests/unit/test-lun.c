// SPDX-License-Identifier: MIT
/*
 * The LUN table: creation at scale, identity, add/remove with commands in
 * flight, unit attentions, state and mode, and the partition-table overlay
 * on the store (computed on read, owned by the host after its first write).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lun.h"

struct fx {
	struct store *store;
	struct lun_table *t;
};

static struct fx *fx_new(uint32_t max)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store_mem_params mp = {.chunk_size = 4096};
	struct lun_table_params tp = {.max_luns = max,
				      .seed = 0x1234567890abcdefull};

	assert_non_null(f);
	assert_int_equal(store_mem_create(&f->store, &mp), 0);
	tp.store = f->store;
	assert_int_equal(lun_table_create(&f->t, &tp), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	lun_table_destroy(f->t);
	store_destroy(f->store);
	free(f);
}

static struct lun_group group(uint32_t first, uint32_t count)
{
	struct lun_group g = {
		.name = "g",
		.first = first,
		.count = count,
		.size = 1ull << 40,
		.block_size = 512,
		.thin = true,
	};

	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "TEST");
	strcpy(g.revision, "0001");
	return g;
}

static void test_create_many(void **state)
{
	struct fx *f = fx_new(LUN_DEFAULT_MAX);
	struct lun_group g = group(0, LUN_DEFAULT_MAX);
	struct lun_info li;

	(void)state;
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_count(f->t), LUN_DEFAULT_MAX);
	/* 32 bytes a LUN plus a bit of bitmap: well under the 64-byte budget */
	assert_true(lun_table_bytes(f->t) / LUN_DEFAULT_MAX <= 64);
	assert_int_equal(lun_get(f->t, 262143, &li), 0);
	assert_int_equal(li.nblocks, (1ull << 40) / 512);
	assert_int_equal(li.state, LUN_ONLINE);
	lun_put(f->t, &li);
	assert_int_equal(lun_get(f->t, 262144, &li), -ENODEV);
	/* overlapping group and past the end */
	g = group(100, 1);
	assert_int_equal(lun_group_add(f->t, &g), -EEXIST);
	g = group(262143, 2);
	assert_int_equal(lun_group_add(f->t, &g), -ERANGE);
	fx_free(f);
}

static int cmp_u64pair(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static void test_identity(void **state)
{
	struct fx *f = fx_new(LUN_MAX_LUNS);
	uint64_t(*w)[2] = malloc(sizeof(*w) * LUN_MAX_LUNS);
	char s1[32], s2[32];
	uint32_t i;

	(void)state;
	assert_non_null(w);
	for (i = 0; i < LUN_MAX_LUNS; i++) {
		uint64_t hi, lo;

		lun_wwn(f->t, i, &hi, &lo);
		assert_int_equal(hi >> 60, 6); /* NAA 6 */
		/* big-endian bytes, so memcmp sorts like the 16-byte designator */
		w[i][0] = __builtin_bswap64(hi);
		w[i][1] = __builtin_bswap64(lo);
	}
	qsort(w, LUN_MAX_LUNS, sizeof(*w), cmp_u64pair);
	for (i = 1; i < LUN_MAX_LUNS; i++)
		assert_true(memcmp(w[i - 1], w[i], 16) != 0);
	free(w);
	/* serials: distinct, and scsi_debug's collision past 1000 is not ours */
	assert_int_equal(lun_serial(f->t, 1, s1, sizeof(s1)), LUN_SERIAL_LEN);
	assert_int_equal(lun_serial(f->t, 1001, s2, sizeof(s2)),
			 LUN_SERIAL_LEN);
	assert_string_not_equal(s1, s2);
	assert_int_equal(lun_serial(f->t, 1048575, s2, sizeof(s2)),
			 LUN_SERIAL_LEN);
	assert_string_not_equal(s1, s2);
	assert_int_equal(lun_serial(f->t, 1, s1, LUN_SERIAL_LEN), -ENOSPC);
	fx_free(f);
}

/*
 * power_on_ua = no: a LUN's first command sees no POWER ON OCCURRED, and
 * the other conditions still reach every nexus.
 */
static void test_no_power_on_ua(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store_mem_params mp = {.chunk_size = 4096};
	struct lun_table_params tp = {.max_luns = 16, .no_power_on_ua = true};
	struct lun_group g = group(0, 2);
	struct lun_info li;
	uint8_t asc, ascq;

	(void)state;
	assert_non_null(f);
	assert_int_equal(store_mem_create(&f->store, &mp), 0);
	tp.store = f->store;
	assert_int_equal(lun_table_create(&f->t, &tp), 0);
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), 0);
	lun_ua_set(f->t, 1, LUN_UA_RESET, 0, 0, LUN_NEXUS_NONE);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), LUN_UA_RESET);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), 0);
	lun_put(f->t, &li);
	fx_free(f);
}

static void test_add_remove_inflight(void **state)
{
	struct fx *f = fx_new(1024);
	struct lun_group g = group(0, 4);
	struct lun_info li, li2;
	uint8_t buf[512] = {0xab};
	struct iovec iov = {buf, sizeof(buf)};
	uint8_t asc, ascq;

	(void)state;
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_get(f->t, 2, &li), 0);
	/* POWER ON OCCURRED first, once */
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_POWER_ON);
	assert_int_equal(asc, 0x29);
	assert_int_equal(ascq, 0x01);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq), 0);
	assert_int_equal(lun_write(f->t, &li, 10, 1, &iov, 1, 0), 0);
	assert_true(store_lun_bytes(f->store, 2) > 0);

	/* remove while a command holds the LUN: it finishes, data then goes */
	assert_int_equal(lun_remove(f->t, 2), 0);
	assert_false(lun_exists(f->t, 2));
	assert_int_equal(lun_get(f->t, 2, &li2), -ENODEV);
	assert_int_equal(lun_count(f->t), 3);
	assert_int_equal(lun_read(f->t, &li, 10, 1, &iov, 1), 0);
	assert_int_equal(buf[0], 0xab);
	assert_true(store_lun_bytes(f->store, 2) > 0);
	lun_put(f->t, &li);
	assert_int_equal(store_lun_bytes(f->store, 2), 0);
	assert_int_equal(lun_remove(f->t, 2), -ENOENT);

	/*
	 * LUN 2's nexus had used the table before the removal: on another LUN
	 * it sees REPORTED LUNS DATA HAS CHANGED; a nexus new to LUN 0 sees
	 * only its power on.
	 */
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 8, &asc, &ascq),
			 LUN_UA_POWER_ON);
	assert_int_equal(lun_ua_take(f->t, &li, 8, &asc, &ascq), 0);
	/* POWER ON goes once per LUN, to the first nexus */
	assert_int_equal(lun_ua_take(f->t, &li, 10, &asc, &ascq), 0);
	lun_put(f->t, &li);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 9, &asc, &ascq),
			 LUN_UA_POWER_ON);
	lun_put(f->t, &li);
	assert_int_equal(lun_remove(f->t, 3), 0);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 9, &asc, &ascq),
			 LUN_UA_LUNS_CHANGED);
	assert_int_equal(asc, 0x3f);
	assert_int_equal(ascq, 0x0e);
	assert_int_equal(lun_ua_take(f->t, &li, 9, &asc, &ascq), 0);
	lun_put(f->t, &li);

	/* lowest free number is reused, fresh (zeros, power on) */
	assert_int_equal(lun_add(f->t, UINT32_MAX, 0), 2);
	assert_int_equal(lun_get(f->t, 2, &li), 0);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(lun_read(f->t, &li, 10, 1, &iov, 1), 0);
	assert_int_equal(buf[0], 0);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_POWER_ON);
	lun_put(f->t, &li);
	assert_int_equal(lun_add(f->t, 2, 0), -EEXIST);
	assert_int_equal(lun_add(f->t, 5000, 0), -ERANGE);
	assert_int_equal(lun_add(f->t, 7, 9), -ENOENT);
	assert_int_equal(lun_find(f->t, 0, 1023), 0);
	assert_int_equal(lun_find(f->t, 4, 1023), -ENOENT);
	assert_int_equal(lun_add(f->t, 900, 0), 900);
	assert_int_equal(lun_find(f->t, 4, 1023), 900);
	assert_int_equal(lun_find(f->t, 4, 899), -ENOENT);
	fx_free(f);
}

/* lun_for_each()'s range is inclusive at both ends, empty when reversed. */
static int walk(struct lun_table *t, uint32_t first, uint32_t last,
		uint32_t *out, int cap)
{
	int l, n = 0;

	lun_for_each(t, l, first, last) {
		if (n < cap)
			out[n] = (uint32_t)l;
		n++;
	}
	assert_int_equal(l, -ENOENT);
	return n;
}

static void test_for_each(void **state)
{
	struct fx *f = fx_new(1024);
	struct lun_group g = group(63, 2); /* 63 and 64: across a word */
	struct lun_group g2 = group(1023, 1); /* the last number */
	uint32_t v[8];

	(void)state;
	assert_true(lun_group_add(f->t, &g) >= 0);
	assert_true(lun_group_add(f->t, &g2) >= 0);
	assert_int_equal(walk(f->t, 0, UINT32_MAX, v, 8), 3);
	assert_int_equal(v[0], 63);
	assert_int_equal(v[1], 64);
	assert_int_equal(v[2], 1023);
	assert_int_equal(walk(f->t, 63, 63, v, 8), 1);
	assert_int_equal(v[0], 63);
	assert_int_equal(walk(f->t, 64, 1023, v, 8), 2);
	assert_int_equal(v[0], 64);
	assert_int_equal(v[1], 1023);
	assert_int_equal(walk(f->t, 65, 1022, v, 8), 0);
	assert_int_equal(walk(f->t, 64, 63, v, 8), 0);
	assert_int_equal(walk(f->t, 1023, 1023, v, 8), 1);
	assert_int_equal(lun_find(f->t, 1024, UINT32_MAX), -ENOENT);
	assert_int_equal(lun_find(f->t, 0, 62), -ENOENT);
	fx_free(f);
}

/*
 * Unit attentions are per I_T nexus: the originator of a change is not told,
 * every other nexus is, once each; a nexus that goes away starts over.
 */
static void test_ua_per_nexus(void **state)
{
	struct fx *f = fx_new(16);
	struct lun_group g = group(0, 2);
	struct lun_info li;
	uint8_t asc, ascq;
	uint32_t n;

	(void)state;
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	for (n = 1; n <= 3; n++) {
		assert_int_equal(lun_ua_take(f->t, &li, n, &asc, &ascq),
				 n == 1 ? LUN_UA_POWER_ON : 0);
		assert_int_equal(lun_ua_take(f->t, &li, n, &asc, &ascq), 0);
	}
	lun_put(f->t, &li);

	/* nexus 1's MODE SELECT: 2 and 3 hear of it, 1 does not */
	assert_int_equal(lun_mode_set(f->t, 0, LUN_MODE_SWP, 1), 0);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	assert_int_equal(asc, 0x2a);
	assert_int_equal(ascq, 0x01);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq), 0);
	/* 2 taking it left it pending for 3 */
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);

	/* 2's change, then 1's: 1 still owes 2's, once */
	assert_int_equal(lun_mode_set(f->t, 0, 0, 2), 0);
	assert_int_equal(lun_mode_set(f->t, 0, LUN_MODE_SWP, 1), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq), 0);

	/* a LUN RESET from 3: 1 and 2 see it, 3 does not; not on LUN 1 */
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	lun_ua_set(f->t, 0, LUN_UA_RESET, 0, 0, 3);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), LUN_UA_RESET);
	assert_int_equal(asc, 0x29);
	assert_int_equal(ascq, 0x00);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq), LUN_UA_RESET);
	lun_put(f->t, &li);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq),
			 LUN_UA_POWER_ON);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), 0);
	lun_put(f->t, &li);

	/* a table-wide reset from 2 reaches 1 and 3 on LUN 0, 1 on LUN 1 */
	lun_ua_set_all(f->t, LUN_UA_RESET, 2);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), LUN_UA_RESET);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), LUN_UA_RESET);
	lun_put(f->t, &li);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), LUN_UA_RESET);
	lun_put(f->t, &li);

	/* nexus 3 goes away: its id starts afresh, owing nothing */
	assert_true(lun_ua_bytes(f->t) > 0);
	lun_ua_set(f->t, 0, LUN_UA_CAPACITY, 0, 0, 1);
	lun_ua_nexus_gone(f->t, 3);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 3, &asc, &ascq), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 2, &asc, &ascq),
			 LUN_UA_CAPACITY);
	assert_int_equal(lun_ua_take(f->t, &li, 1, &asc, &ascq), 0);
	lun_put(f->t, &li);

	/* many nexuses on many LUNs: the pair table grows and keeps them */
	for (n = 100; n < 1100; n++) {
		assert_int_equal(lun_get(f->t, n & 1, &li), 0);
		assert_int_equal(lun_ua_take(f->t, &li, n, &asc, &ascq), 0);
		lun_put(f->t, &li);
	}
	lun_ua_set(f->t, 1, LUN_UA_CAPACITY, 0, 0, LUN_NEXUS_NONE);
	for (n = 100; n < 1100; n++) {
		assert_int_equal(lun_get(f->t, n & 1, &li), 0);
		assert_int_equal(lun_ua_take(f->t, &li, n, &asc, &ascq),
				 (n & 1) ? LUN_UA_CAPACITY : 0);
		lun_put(f->t, &li);
	}
	fx_free(f);
}

static void test_state_mode_resize(void **state)
{
	struct fx *f = fx_new(16);
	struct lun_group g = group(0, 1);
	struct lun_info li;
	uint8_t buf[512];
	struct iovec iov = {buf, sizeof(buf)};
	uint8_t asc, ascq;

	(void)state;
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_set_state(f->t, 0, LUN_OFFLINE), 0);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_read(f->t, &li, 0, 1, &iov, 1), -ENOMEDIUM);
	lun_put(f->t, &li);
	assert_int_equal(lun_set_state(f->t, 0, LUN_ONLINE), 0);
	assert_int_equal(lun_set_state(f->t, 0, LUN_REMOVING), -EINVAL);
	assert_int_equal(lun_set_state(f->t, 3, LUN_ONLINE), -ENOENT);

	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_POWER_ON);
	lun_put(f->t, &li);
	assert_int_equal(lun_mode_set(f->t, 0, LUN_MODE_SWP, LUN_NEXUS_NONE),
			 0);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_write(f->t, &li, 0, 1, &iov, 1, 0), -EROFS);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	lun_put(f->t, &li);
	assert_int_equal(lun_mode_set(f->t, 0, 0, LUN_NEXUS_NONE), 0);

	assert_int_equal(lun_resize(f->t, 0, 1 << 20), 0);
	assert_int_equal(lun_resize(f->t, 0, 1000), -EINVAL);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(li.nblocks, 2048);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_MODE_CHANGED);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_CAPACITY);
	assert_int_equal(asc, 0x2a);
	assert_int_equal(ascq, 0x09);
	assert_int_equal(lun_read(f->t, &li, 2047, 1, &iov, 1), 0);
	assert_int_equal(lun_read(f->t, &li, 2048, 1, &iov, 1), -ERANGE);
	assert_int_equal(lun_read(f->t, &li, UINT64_MAX, 1, &iov, 1), -ERANGE);
	lun_put(f->t, &li);

	/* table-wide reset: every LUN reports it once */
	lun_ua_set_all(f->t, LUN_UA_RESET, LUN_NEXUS_NONE);
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq), LUN_UA_RESET);
	assert_int_equal(asc, 0x29);
	assert_int_equal(ascq, 0x00);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq), 0);
	lun_ua_set(f->t, 0, LUN_UA_INJECTED, 0x3f, 0x03, LUN_NEXUS_NONE);
	assert_int_equal(lun_ua_take(f->t, &li, 7, &asc, &ascq),
			 LUN_UA_INJECTED);
	assert_int_equal(asc, 0x3f);
	assert_int_equal(ascq, 0x03);
	lun_put(f->t, &li);
	fx_free(f);
}

static void test_partition_overlay(void **state)
{
	struct fx *f = fx_new(16);
	struct lun_group g = group(0, 2);
	struct lun_info li;
	uint8_t *buf = calloc(64, 512), zero[512] = {0};
	struct iovec iov = {buf, 64 * 512};
	struct store_stats st;
	uint64_t run, last;

	(void)state;
	g.size = 1ull << 30;
	g.ptable = PTABLE_GPT;
	g.nparts = 8;
	assert_int_equal(lun_group_add(f->t, &g), 0);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	last = li.nblocks - 1;
	/* read costs no memory; GPT header at LBA 1, backup at the end */
	assert_int_equal(lun_read(f->t, &li, 0, 64, &iov, 1), 0);
	store_get_stats(f->store, &st);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(buf[510], 0x55);
	assert_int_equal(buf[511], 0xaa);
	assert_memory_equal(buf + 512, "EFI PART", 8);
	iov.iov_len = 512;
	assert_int_equal(lun_read(f->t, &li, last, 1, &iov, 1), 0);
	assert_memory_equal(buf, "EFI PART", 8);
	assert_int_equal(lun_lba_status(f->t, &li, 1, 100, &run), 1);
	assert_int_equal(lun_lba_status(f->t, &li, 4096, 100, &run), 0);
	assert_int_equal(run, 100);
	lun_put(f->t, &li);

	/* the host zaps the primary header: that block reads zero, the rest stay */
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	iov.iov_base = zero;
	assert_int_equal(lun_write(f->t, &li, 1, 1, &iov, 1, 0), 0);
	lun_put(f->t, &li);
	assert_int_equal(lun_get(f->t, 1, &li), 0);
	assert_true(li.table_owned);
	iov.iov_base = buf;
	assert_int_equal(lun_read(f->t, &li, 1, 1, &iov, 1), 0);
	assert_memory_equal(buf, zero, 512);
	assert_int_equal(lun_read(f->t, &li, 0, 1, &iov, 1), 0);
	assert_int_equal(buf[510], 0x55);
	assert_int_equal(lun_read(f->t, &li, last, 1, &iov, 1), 0);
	assert_memory_equal(buf, "EFI PART", 8);
	/* and a wipe of the whole table area really reads back zeros */
	assert_int_equal(lun_write_zeroes(f->t, &li, 0, 64, 0), 0);
	assert_int_equal(
		lun_write_zeroes(f->t, &li, last - 40, 41, LUN_IO_UNMAP), 0);
	assert_int_equal(lun_read(f->t, &li, 0, 1, &iov, 1), 0);
	assert_memory_equal(buf, zero, 512);
	assert_int_equal(lun_read(f->t, &li, last, 1, &iov, 1), 0);
	assert_memory_equal(buf, zero, 512);
	lun_put(f->t, &li);

	/* LUN 0 never written: still synthetic, still free */
	assert_int_equal(lun_get(f->t, 0, &li), 0);
	assert_false(li.table_owned);
	assert_int_equal(lun_read(f->t, &li, 1, 1, &iov, 1), 0);
	assert_memory_equal(buf, "EFI PART", 8);
	lun_put(f->t, &li);
	assert_int_equal(store_lun_bytes(f->store, 0), 0);

	/* a layout that cannot fit is refused */
	g = group(8, 1);
	g.size = 1 << 20;
	g.ptable = PTABLE_GPT;
	g.nparts = 63;
	assert_int_equal(lun_group_add(f->t, &g), -EINVAL);
	free(buf);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_many),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_add_remove_inflight),
		cmocka_unit_test(test_no_power_on_ua),
		cmocka_unit_test(test_for_each),
		cmocka_unit_test(test_ua_per_nexus),
		cmocka_unit_test(test_state_mode_resize),
		cmocka_unit_test(test_partition_overlay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
