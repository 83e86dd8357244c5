// SPDX-License-Identifier: MIT
/*
 * The index allocators against the kernel ida's contract: lowest free id
 * first, inclusive ranges, exact error codes, and the bitmap and the tree
 * agreeing with a trivial model over a long random run.
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
#include "rng.h"
#include "sdnum.h"

static const enum sdnum_idx_kind kinds[] = {SDNUM_IDX_BITMAP, SDNUM_IDX_TREE};
#define NKINDS (ARRAY_SIZE(kinds))

static struct sdnum_idx *idx_new(enum sdnum_idx_kind kind, uint32_t max)
{
	struct sdnum_idx *idx = NULL;

	assert_int_equal(sdnum_idx_create(&idx, kind, max), 0);
	assert_non_null(idx);
	return idx;
}

static void test_create_bad(void **state)
{
	struct sdnum_idx *idx = NULL;

	(void)state;
	assert_int_equal(sdnum_idx_create(&idx, SDNUM_IDX_TREE, 0), -EINVAL);
	assert_int_equal(sdnum_idx_create(&idx, SDNUM_IDX_BITMAP, 0), -EINVAL);
	assert_int_equal(sdnum_idx_create(&idx, SDNUM_IDX_TREE, (1u << 31) + 1),
			 -EINVAL);
	assert_int_equal(sdnum_idx_create(&idx, (enum sdnum_idx_kind)7, 10),
			 -EINVAL);
	assert_null(idx);
	assert_int_equal(sdnum_idx_create(NULL, SDNUM_IDX_TREE, 10), -EINVAL);
	sdnum_idx_destroy(NULL);
}

static void test_lowest_first_and_refill(void **state)
{
	const uint32_t n = 300;
	size_t k;
	uint32_t i;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_idx *idx = idx_new(kinds[k], n);

		for (i = 0; i < n; i++) {
			assert_int_equal(sdnum_idx_alloc(idx), (int)i);
			assert_int_equal(sdnum_idx_count(idx), i + 1);
		}
		assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);
		assert_int_equal(sdnum_idx_count(idx), n);

		/* Holes come back lowest first, whatever the free order. */
		assert_int_equal(sdnum_idx_free(idx, 250), 0);
		assert_int_equal(sdnum_idx_free(idx, 7), 0);
		assert_int_equal(sdnum_idx_free(idx, 64), 0);
		assert_int_equal(sdnum_idx_free(idx, 63), 0);
		assert_int_equal(sdnum_idx_test(idx, 63), 0);
		assert_int_equal(sdnum_idx_test(idx, 62), 1);
		assert_int_equal(sdnum_idx_count(idx), n - 4);
		assert_int_equal(sdnum_idx_alloc(idx), 7);
		assert_int_equal(sdnum_idx_alloc(idx), 63);
		assert_int_equal(sdnum_idx_alloc(idx), 64);
		assert_int_equal(sdnum_idx_alloc(idx), 250);
		assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);

		/* Empty it and it starts from 0 again. */
		for (i = 0; i < n; i++)
			assert_int_equal(sdnum_idx_free(idx, i), 0);
		assert_int_equal(sdnum_idx_count(idx), 0);
		assert_int_equal(sdnum_idx_alloc(idx), 0);
		sdnum_idx_destroy(idx);
	}
}

static void test_free_errors(void **state)
{
	size_t k;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_idx *idx = idx_new(kinds[k], 100);

		assert_int_equal(sdnum_idx_free(idx, 0), -ENOENT);
		assert_int_equal(sdnum_idx_free(idx, 99), -ENOENT);
		assert_int_equal(sdnum_idx_free(idx, 100), -EINVAL);
		assert_int_equal(sdnum_idx_free(idx, UINT32_MAX), -EINVAL);
		assert_int_equal(sdnum_idx_alloc(idx), 0);
		assert_int_equal(sdnum_idx_free(idx, 0), 0);
		assert_int_equal(sdnum_idx_free(idx, 0), -ENOENT);
		assert_int_equal(sdnum_idx_count(idx), 0);
		assert_int_equal(sdnum_idx_test(idx, 100), 0);
		assert_int_equal(sdnum_idx_test(idx, UINT32_MAX), 0);
		sdnum_idx_destroy(idx);
	}
}

static void test_alloc_range(void **state)
{
	size_t k;
	uint32_t i;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_idx *idx = idx_new(kinds[k], 1000);

		assert_int_equal(sdnum_idx_alloc_range(idx, 5, 4), -EINVAL);
		assert_int_equal(sdnum_idx_alloc_range(idx, UINT32_MAX, 0),
				 -EINVAL);
		/* Both bounds are inclusive. */
		assert_int_equal(sdnum_idx_alloc_range(idx, 10, 10), 10);
		assert_int_equal(sdnum_idx_alloc_range(idx, 10, 10), -ENOSPC);
		assert_int_equal(sdnum_idx_alloc_range(idx, 10, 11), 11);
		assert_int_equal(sdnum_idx_alloc_range(idx, 9, 11), 9);
		/* @max is clamped to the last id. */
		assert_int_equal(sdnum_idx_alloc_range(idx, 999, UINT32_MAX),
				 999);
		assert_int_equal(sdnum_idx_alloc_range(idx, 999, UINT32_MAX),
				 -ENOSPC);
		assert_int_equal(sdnum_idx_alloc_range(idx, 1000, UINT32_MAX),
				 -ENOSPC);
		assert_int_equal(sdnum_idx_alloc_range(idx, 5000, 6000),
				 -ENOSPC);
		/* A full range is -ENOSPC even with ids free either side. */
		for (i = 100; i <= 300; i++)
			assert_int_equal(sdnum_idx_alloc_range(idx, 100, 300),
					 (int)i);
		assert_int_equal(sdnum_idx_alloc_range(idx, 100, 300), -ENOSPC);
		assert_int_equal(sdnum_idx_alloc_range(idx, 150, 301), 301);
		assert_int_equal(sdnum_idx_alloc_range(idx, 99, 300), 99);
		/* Plain alloc still takes the lowest free. */
		assert_int_equal(sdnum_idx_alloc(idx), 0);
		assert_int_equal(sdnum_idx_count(idx), 4 + 201 + 3);
		sdnum_idx_destroy(idx);
	}
}

/* Sizes around word and summary boundaries; every id comes out in order,
 * the last one included, and the next is -ENOSPC. */
static void test_odd_sizes(void **state)
{
	static const uint32_t sizes[] = {1,	 2,	 63,	 64,	 65,
					 127,	 128,	 4095,	 4096,	 4097,
					 262143, 262144, 262145, 1048576};
	size_t k, s;
	uint32_t i;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		for (s = 0; s < ARRAY_SIZE(sizes); s++) {
			uint32_t n = sizes[s];
			struct sdnum_idx *idx = idx_new(kinds[k], n);

			/* The last id, from a range and from alloc. */
			assert_int_equal(
				sdnum_idx_alloc_range(idx, n - 1, UINT32_MAX),
				(int)(n - 1));
			assert_int_equal(sdnum_idx_free(idx, n - 1), 0);
			for (i = 0; i < n; i++) {
				int got;

				/* The bitmap's alloc rescans from 0: past
				 * 65536 ids, continue from the last one. */
				if (kinds[k] == SDNUM_IDX_BITMAP && i >= 65536)
					got = sdnum_idx_alloc_range(idx, i - 1,
								    UINT32_MAX);
				else
					got = sdnum_idx_alloc(idx);
				if (got != (int)i)
					fail_msg(
						"kind %zu size %u: id %d, expected %u",
						k, n, got, i);
			}
			assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);
			assert_int_equal(sdnum_idx_alloc_range(idx, 0, n - 1),
					 -ENOSPC);
			assert_int_equal(sdnum_idx_test(idx, n - 1), 1);
			assert_int_equal(sdnum_idx_free(idx, n - 1), 0);
			assert_int_equal(
				sdnum_idx_alloc_range(idx, 0, UINT32_MAX),
				(int)(n - 1));
			assert_int_equal(sdnum_idx_free(idx, n), -EINVAL);
			assert_int_equal(sdnum_idx_count(idx), n);
			sdnum_idx_destroy(idx);
		}
	}
}

/* 2^20 ids: the tree hands every one out in order and refills holes
 * lowest-first; the bitmap's O(n) alloc is exercised at 65536. */
static void test_fill_large(void **state)
{
	const uint32_t n = 1u << 20;
	struct sdnum_idx *idx = idx_new(SDNUM_IDX_TREE, n);
	uint32_t i, holes[64];
	size_t bytes = sdnum_idx_bytes(idx);
	struct rng rng = rng_init(0x9e3779b97f4a7c15ull);

	(void)state;
	/* One bit per id plus the summaries: 128 KiB + 2 KiB + a little. */
	assert_true(bytes >= n / 8 && bytes < n / 8 + 4096);
	for (i = 0; i < n; i++)
		if (sdnum_idx_alloc(idx) != (int)i)
			fail_msg("id %u came out of order", i);
	assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);
	assert_int_equal(sdnum_idx_count(idx), n);
	assert_int_equal(sdnum_idx_bytes(idx), bytes);

	for (i = 0; i < 64; i++) {
		holes[i] = rng_below(&rng, n);
		/* Duplicates are fine: the second free is -ENOENT. */
		if (sdnum_idx_free(idx, holes[i]) == -ENOENT)
			holes[i] = UINT32_MAX;
	}
	/* Refill: ascending order of the holes freed. */
	for (;;) {
		uint32_t low = UINT32_MAX;
		size_t at = 0;

		for (i = 0; i < 64; i++)
			if (holes[i] < low) {
				low = holes[i];
				at = i;
			}
		if (low == UINT32_MAX)
			break;
		assert_int_equal(sdnum_idx_alloc(idx), (int)low);
		holes[at] = UINT32_MAX;
	}
	assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);
	/* The range search from the middle of a full tree, after one free
	 * near the end. */
	assert_int_equal(sdnum_idx_free(idx, n - 3), 0);
	assert_int_equal(sdnum_idx_alloc_range(idx, 17, UINT32_MAX),
			 (int)(n - 3));
	sdnum_idx_destroy(idx);

	idx = idx_new(SDNUM_IDX_BITMAP, 65536);
	for (i = 0; i < 65536; i++)
		if (sdnum_idx_alloc(idx) != (int)i)
			fail_msg("bitmap id %u came out of order", i);
	assert_int_equal(sdnum_idx_alloc(idx), -ENOSPC);
	assert_int_equal(sdnum_idx_free(idx, 40000), 0);
	assert_int_equal(sdnum_idx_alloc(idx), 40000);
	sdnum_idx_destroy(idx);
}

/* The top of the contract: 2^31 ids, the last one INT_MAX. */
static void test_max_ids(void **state)
{
	const uint32_t n = 1u << 31;
	size_t k;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_idx *idx = idx_new(kinds[k], n);

		assert_int_equal(sdnum_idx_alloc(idx), 0);
		assert_int_equal(sdnum_idx_alloc_range(idx, n - 1, UINT32_MAX),
				 (int)(n - 1));
		assert_int_equal(sdnum_idx_alloc_range(idx, n - 1, UINT32_MAX),
				 -ENOSPC);
		assert_int_equal(sdnum_idx_alloc_range(idx, n - 70, n - 1),
				 (int)(n - 70));
		assert_int_equal(
			sdnum_idx_alloc_range(idx, 1u << 30, UINT32_MAX),
			1 << 30);
		assert_int_equal(sdnum_idx_test(idx, n - 1), 1);
		assert_int_equal(sdnum_idx_free(idx, n - 1), 0);
		assert_int_equal(sdnum_idx_free(idx, n), -EINVAL);
		assert_int_equal(sdnum_idx_count(idx), 3);
		assert_true(sdnum_idx_bytes(idx) >= n / 8);
		sdnum_idx_destroy(idx);
	}
}

/* The model: a bool per id, searched linearly. */
struct model {
	bool *used;
	uint32_t n;
	uint32_t count;
};

static int model_alloc_range(struct model *m, uint32_t min, uint32_t max)
{
	uint32_t i;

	if (min > max)
		return -EINVAL;
	if (max >= m->n)
		max = m->n - 1;
	for (i = min; i <= max && i < m->n; i++)
		if (!m->used[i]) {
			m->used[i] = true;
			m->count++;
			return (int)i;
		}
	return -ENOSPC;
}

static int model_free(struct model *m, uint32_t id)
{
	if (id >= m->n)
		return -EINVAL;
	if (!m->used[id])
		return -ENOENT;
	m->used[id] = false;
	m->count--;
	return 0;
}

/* A bound near the size, often just past it or at a word edge. */
static uint32_t rng_bound(struct rng *rng, uint32_t n)
{
	switch (rng_below(rng, 8)) {
	case 0:
		return UINT32_MAX;
	case 1:
		return n + rng_below(rng, 70);
	case 2:
		return rng_below(rng, n / 64 + 1) * 64 + rng_below(rng, 3) - 1;
	default:
		return rng_below(rng, n);
	}
}

static void run_property(uint32_t n, unsigned int ops, uint64_t seed)
{
	struct sdnum_idx *idx[NKINDS];
	struct model m = {.n = n};
	uint32_t *live = calloc(n, sizeof(*live));
	uint32_t nlive = 0, a, b, id;
	unsigned int op, phase_alloc = 60;
	struct rng rng = rng_init(seed);
	int want, got;
	size_t k;

	m.used = calloc(n, sizeof(*m.used));
	assert_non_null(live);
	assert_non_null(m.used);
	for (k = 0; k < NKINDS; k++)
		idx[k] = idx_new(kinds[k], n);

	for (op = 0; op < ops; op++) {
		unsigned int dice = rng_below(&rng, 100);
		bool took = false;

		/* Swing between filling up and draining so that both the
		 * full and the sparse cases are well covered. */
		if (op % 5000 == 0)
			phase_alloc = 25 + rng_below(&rng, 60);

		if (dice < phase_alloc / 2) {
			want = model_alloc_range(&m, 0, n - 1);
			for (k = 0; k < NKINDS; k++) {
				got = sdnum_idx_alloc(idx[k]);
				if (got != want)
					fail_msg(
						"op %u kind %zu alloc: %d, model %d",
						op, k, got, want);
			}
			took = want >= 0;
		} else if (dice < phase_alloc) {
			a = rng_bound(&rng, n);
			b = rng_bound(&rng, n);
			/* Mostly ordered; sometimes -EINVAL. */
			if (rng_below(&rng, 16) && a > b) {
				id = a;
				a = b;
				b = id;
			}
			want = model_alloc_range(&m, a, b);
			for (k = 0; k < NKINDS; k++) {
				got = sdnum_idx_alloc_range(idx[k], a, b);
				if (got != want)
					fail_msg(
						"op %u kind %zu range %u..%u: %d, model %d",
						op, k, a, b, got, want);
			}
			took = want >= 0;
		} else {
			uint32_t at = 0;

			if (dice < 97 && nlive) {
				at = rng_below(&rng, nlive);
				id = live[at];
			} else {
				/* Anything: often -ENOENT or -EINVAL. */
				id = rng_below(&rng, n + 100);
				while (at < nlive && live[at] != id)
					at++;
			}
			want = model_free(&m, id);
			for (k = 0; k < NKINDS; k++) {
				got = sdnum_idx_free(idx[k], id);
				if (got != want)
					fail_msg(
						"op %u kind %zu free %u: %d, model %d",
						op, k, id, got, want);
			}
			if (want == 0)
				live[at] = live[--nlive];
		}
		if (took)
			live[nlive++] = (uint32_t)want;

		id = rng_below(&rng, n);
		for (k = 0; k < NKINDS; k++) {
			if (sdnum_idx_test(idx[k], id) != m.used[id])
				fail_msg("op %u kind %zu test %u", op, k, id);
			if (sdnum_idx_count(idx[k]) != m.count)
				fail_msg("op %u kind %zu count %u, model %u",
					 op, k, sdnum_idx_count(idx[k]),
					 m.count);
		}
	}
	assert_int_equal(nlive, m.count);

	for (k = 0; k < NKINDS; k++)
		sdnum_idx_destroy(idx[k]);
	free(m.used);
	free(live);
}

/* 3 tree levels (71 leaf words), 200,000 operations. */
static void test_property(void **state)
{
	(void)state;
	run_property(4500, 200000, 0x2545f4914f6cdd1dull);
}

/* Small and exactly-full-word sizes, where padding bits matter most. */
static void test_property_small(void **state)
{
	(void)state;
	run_property(1, 2000, 1);
	run_property(65, 20000, 2);
	run_property(4096, 20000, 3);
	run_property(4097, 20000, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_bad),
		cmocka_unit_test(test_lowest_first_and_refill),
		cmocka_unit_test(test_free_errors),
		cmocka_unit_test(test_alloc_range),
		cmocka_unit_test(test_odd_sizes),
		cmocka_unit_test(test_fill_large),
		cmocka_unit_test(test_max_ids),
		cmocka_unit_test(test_property),
		cmocka_unit_test(test_property_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
