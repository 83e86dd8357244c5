// SPDX-License-Identifier: MIT
/*
 * The per-disk object cache: aligned, distinct objects, LIFO reuse, exact
 * in-use and byte accounting, and parameter checks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "sdnum.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static struct sdnum_slab *slab_new(size_t size, size_t align, size_t per_slab)
{
	struct sdnum_slab *s = NULL;

	assert_int_equal(sdnum_slab_create(&s, size, align, per_slab), 0);
	assert_non_null(s);
	return s;
}

static void test_bad_params(void **state)
{
	struct sdnum_slab *s = NULL;

	(void)state;
	assert_int_equal(sdnum_slab_create(&s, 0, 0, 0), -EINVAL);
	assert_int_equal(sdnum_slab_create(&s, (1u << 20) + 1, 0, 0), -EINVAL);
	assert_int_equal(sdnum_slab_create(&s, 64, 3, 0), -EINVAL);
	assert_int_equal(sdnum_slab_create(&s, 64, 24, 0), -EINVAL);
	assert_int_equal(sdnum_slab_create(&s, 64, 8192, 0), -EINVAL);
	assert_int_equal(sdnum_slab_create(&s, 64, 0, SIZE_MAX / 8), -EINVAL);
	assert_int_equal(sdnum_slab_create(NULL, 64, 0, 0), -EINVAL);
	assert_null(s);

	/* The limits themselves are accepted. */
	assert_int_equal(sdnum_slab_create(&s, 1u << 20, 4096, 0), 0);
	assert_non_null(sdnum_slab_alloc(s));
	sdnum_slab_destroy(s);
	sdnum_slab_destroy(NULL);
}

/* Every object honours the alignment asked for (or max_align_t's). */
static void test_alignment(void **state)
{
	static const struct {
		size_t size, align;
	} cases[] = {
		{1, 1},	   {3, 1},	 {9, 1},    {1, 0},	   {24, 0},
		{40, 8},   {17, 16},	 {64, 64},  {65, 64},	   {100, 128},
		{1, 4096}, {5000, 4096}, {4096, 2}, {1u << 20, 0},
	};
	size_t c, i;

	(void)state;
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		size_t align =
			cases[c].align ? cases[c].align : alignof(max_align_t);
		struct sdnum_slab *s =
			slab_new(cases[c].size, cases[c].align, 0);
		/* A few of the big ones: 300 MiB of memset is slow to no end.
		 */
		size_t n = cases[c].size > 65536 ? 5 : 300;
		void *objs[300];

		for (i = 0; i < n; i++) {
			objs[i] = sdnum_slab_alloc(s);
			assert_non_null(objs[i]);
			if ((uintptr_t)objs[i] % align)
				fail_msg("size %zu align %zu: object %zu at %p",
					 cases[c].size, align, i, objs[i]);
			/* Writable over its whole size. */
			memset(objs[i], 0xa5, cases[c].size);
		}
		for (i = 0; i < n; i++)
			sdnum_slab_free(s, objs[i]);
		assert_int_equal(sdnum_slab_in_use(s), 0);
		sdnum_slab_destroy(s);
	}
}

/* 100,000 objects hold 100,000 distinct patterns at once: no two overlap. */
static void test_distinct(void **state)
{
	static const size_t sizes[] = {1, 7, 8, 24, 64, 200};
	const size_t n = 100000;
	uint8_t **objs = calloc(n, sizeof(*objs));
	size_t z, i, b;

	(void)state;
	assert_non_null(objs);
	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		size_t size = sizes[z];
		struct sdnum_slab *s = slab_new(size, size < 8 ? 1 : 8, 0);

		for (i = 0; i < n; i++) {
			objs[i] = sdnum_slab_alloc(s);
			assert_non_null(objs[i]);
			for (b = 0; b < size; b++)
				objs[i][b] = (uint8_t)(i * 31 + b * 7 + size);
		}
		assert_int_equal(sdnum_slab_in_use(s), n);
		for (i = 0; i < n; i++)
			for (b = 0; b < size; b++)
				if (objs[i][b] !=
				    (uint8_t)(i * 31 + b * 7 + size))
					fail_msg(
						"size %zu: object %zu byte %zu overwritten",
						size, i, b);
		/* Free every other one; the survivors keep their bytes
		 * (the free-list link must not land in a live object). */
		for (i = 0; i < n; i += 2)
			sdnum_slab_free(s, objs[i]);
		for (i = 1; i < n; i += 2)
			for (b = 0; b < size; b++)
				if (objs[i][b] !=
				    (uint8_t)(i * 31 + b * 7 + size))
					fail_msg(
						"size %zu: live object %zu corrupted by a free",
						size, i);
		assert_int_equal(sdnum_slab_in_use(s), n / 2);
		sdnum_slab_destroy(s);
	}
	free(objs);
}

/* Freed objects come back most recent first, before any new memory. */
static void test_lifo_reuse(void **state)
{
	struct sdnum_slab *s = slab_new(48, 0, 0);
	void *a, *b, *c, *d;
	size_t bytes;

	(void)state;
	a = sdnum_slab_alloc(s);
	b = sdnum_slab_alloc(s);
	c = sdnum_slab_alloc(s);
	assert_true(a != b && b != c && a != c);
	bytes = sdnum_slab_bytes(s);

	sdnum_slab_free(s, b);
	sdnum_slab_free(s, a);
	assert_int_equal(sdnum_slab_in_use(s), 1);
	assert_ptr_equal(sdnum_slab_alloc(s), a);
	assert_ptr_equal(sdnum_slab_alloc(s), b);
	d = sdnum_slab_alloc(s);
	assert_true(d != a && d != b && d != c);
	assert_int_equal(sdnum_slab_in_use(s), 4);

	/* Churn at a steady population never grows the cache. */
	for (int i = 0; i < 100000; i++) {
		void *x = sdnum_slab_alloc(s);

		assert_non_null(x);
		sdnum_slab_free(s, x);
	}
	assert_int_equal(sdnum_slab_bytes(s), bytes);
	assert_int_equal(sdnum_slab_in_use(s), 4);

	sdnum_slab_free(s, NULL);
	assert_int_equal(sdnum_slab_in_use(s), 4);
	sdnum_slab_destroy(s);
}

/* Memory is taken a whole slab at a time: default 64 KiB of objects. */
static void test_bytes_by_slab(void **state)
{
	struct sdnum_slab *s = slab_new(64, 64, 0);
	size_t per = 65536 / 64, one, i;
	void *first;

	(void)state;
	assert_int_equal(sdnum_slab_bytes(s), 0);
	first = sdnum_slab_alloc(s);
	one = sdnum_slab_bytes(s);
	/* 1024 objects of 64 bytes and the slab's own link. */
	assert_true(one >= per * 64 && one <= per * 64 + 64);
	for (i = 1; i < per; i++)
		assert_non_null(sdnum_slab_alloc(s));
	assert_int_equal(sdnum_slab_bytes(s), one);
	assert_non_null(sdnum_slab_alloc(s));
	assert_int_equal(sdnum_slab_bytes(s), 2 * one);
	assert_int_equal(sdnum_slab_in_use(s), per + 1);
	/* Frees keep the memory for reuse. */
	sdnum_slab_free(s, first);
	assert_int_equal(sdnum_slab_bytes(s), 2 * one);
	assert_int_equal(sdnum_slab_in_use(s), per);
	sdnum_slab_destroy(s);

	/* An explicit count per slab, and a size bigger than 64 KiB. */
	s = slab_new(100, 4, 10);
	for (i = 0; i < 25; i++)
		assert_non_null(sdnum_slab_alloc(s));
	one = sdnum_slab_bytes(s) / 3;
	assert_int_equal(sdnum_slab_bytes(s), 3 * one);
	assert_true(one >= 1000 && one <= 1000 + 64);
	sdnum_slab_destroy(s);

	s = slab_new(100000, 0, 0);
	assert_non_null(sdnum_slab_alloc(s));
	assert_non_null(sdnum_slab_alloc(s));
	assert_true(sdnum_slab_bytes(s) >= 200000 &&
		    sdnum_slab_bytes(s) < 200000 + 256);
	sdnum_slab_destroy(s);
}

/* Destroy with objects outstanding frees them all (ASan's leak check). */
static void test_destroy_in_use(void **state)
{
	struct sdnum_slab *s = slab_new(32, 0, 16);

	(void)state;
	for (int i = 0; i < 1000; i++)
		assert_non_null(sdnum_slab_alloc(s));
	assert_int_equal(sdnum_slab_in_use(s), 1000);
	sdnum_slab_destroy(s);
}

/* Under ASan a freed object is poisoned, as a free()d block would be. */
static void test_poison(void **state)
{
#ifdef TEST_ASAN
	struct sdnum_slab *s = slab_new(64, 0, 0);
	char *a = sdnum_slab_alloc(s), *b = sdnum_slab_alloc(s);

	(void)state;
	assert_int_equal(__asan_address_is_poisoned(a + 63), 0);
	assert_int_equal(__asan_address_is_poisoned(b), 0);
	/* Not yet handed out. */
	assert_int_equal(__asan_address_is_poisoned(b + 64), 1);
	sdnum_slab_free(s, a);
	assert_int_equal(__asan_address_is_poisoned(a), 1);
	assert_int_equal(__asan_address_is_poisoned(a + 63), 1);
	assert_int_equal(__asan_address_is_poisoned(b), 0);
	assert_ptr_equal(sdnum_slab_alloc(s), a);
	assert_int_equal(__asan_address_is_poisoned(a + 63), 0);
	sdnum_slab_destroy(s);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_distinct),
		cmocka_unit_test(test_lifo_reuse),
		cmocka_unit_test(test_bytes_by_slab),
		cmocka_unit_test(test_destroy_in_use),
		cmocka_unit_test(test_poison),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
