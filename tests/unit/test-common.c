// SPDX-License-Identifier: MIT
/*
 * common/: the byte-order accessors against values built byte by byte, at
 * every alignment, ARRAY_SIZE (its refusal of a pointer is a compile
 * error, checked by tests/integration/common-array.sh), the checked number
 * and size parsers at their edges, and the RNG against splitmix64's
 * published values and a chi-square of rng_below().
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "bytes.h"
#include "parse.h"
#include "rng.h"

static void test_be(void **state)
{
	uint8_t buf[16];
	size_t off;

	(void)state;
	for (off = 0; off < 8; off++) {
		uint8_t *p = buf + off;

		memset(buf, 0xee, sizeof(buf));
		put_be64(p, 0x0102030405060708ull);
		assert_int_equal(p[0], 0x01);
		assert_int_equal(p[7], 0x08);
		if (off + 8 < sizeof(buf))
			assert_int_equal(buf[off + 8],
					 0xee); /* nothing past the field */
		assert_true(get_be64(p) == 0x0102030405060708ull);
		assert_int_equal(get_be32(p), 0x01020304);
		assert_int_equal(get_be24(p), 0x010203);
		assert_int_equal(get_be16(p), 0x0102);
		put_be32(p, 0xa1b2c3d4);
		assert_memory_equal(p, "\xa1\xb2\xc3\xd4", 4);
		put_be24(p, 0xfedcba);
		assert_memory_equal(p, "\xfe\xdc\xba\xd4", 4);
		put_be16(p, 0x8001);
		assert_memory_equal(p, "\x80\x01\xba", 3);
	}
}

static void test_le(void **state)
{
	uint8_t buf[16];
	size_t off;

	(void)state;
	for (off = 0; off < 8; off++) {
		uint8_t *p = buf + off;

		put_le64(p, 0x0102030405060708ull);
		assert_memory_equal(p, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
		assert_true(get_le64(p) == 0x0102030405060708ull);
		assert_int_equal(get_le32(p), 0x05060708);
		assert_int_equal(get_le16(p), 0x0708);
		put_le32(p, 0xa1b2c3d4);
		assert_memory_equal(p, "\xd4\xc3\xb2\xa1\x04", 5);
		put_le16(p, 0x8001);
		assert_memory_equal(p, "\x01\x80\xb2", 3);
	}
	/* the high bit survives the widening: no sign extension */
	memset(buf, 0xff, 8);
	assert_true(get_le64(buf) == UINT64_MAX);
	assert_true(get_be64(buf) == UINT64_MAX);
	assert_int_equal(get_be16(buf), 0xffff);
}

static void test_array_size(void **state)
{
	static const char *const names[] = {"a", "b", "c"};
	uint64_t wide[5];
	struct {
		int x[7];
	} s;

	(void)state;
	(void)wide;
	(void)s;
	assert_int_equal(ARRAY_SIZE(names), 3);
	assert_int_equal(ARRAY_SIZE(wide), 5);
	assert_int_equal(ARRAY_SIZE(s.x), 7);
	/* a constant expression: usable where C asks for one */
	_Static_assert(ARRAY_SIZE(wide) == 5, "ARRAY_SIZE is constant");
}

static void test_parse_u64(void **state)
{
	static const struct {
		const char *text;
		unsigned int base;
		uint64_t max;
		int ret;
		uint64_t v;
	} cases[] = {
		{"0", 10, 0, 0, 0},
		{"42", 10, 42, 0, 42},
		{"43", 10, 42, -ERANGE, 0},
		{"007", 10, 7, 0, 7},
		{"18446744073709551615", 10, UINT64_MAX, 0, UINT64_MAX},
		{"18446744073709551616", 10, UINT64_MAX, -ERANGE, 0},
		{"99999999999999999999x", 10, UINT64_MAX, -ERANGE, 0},
		{"0x10", 10, 100, -EINVAL, 0},
		{"0x10", 0, 100, 0, 16},
		{"0XfF", 0, 255, 0, 255},
		{"0x100", 0, 255, -ERANGE, 0},
		{"0xffffffffffffffff", 0, UINT64_MAX, 0, UINT64_MAX},
		{"0x10000000000000000", 0, UINT64_MAX, -ERANGE, 0},
		{"010", 0, 100, 0, 10}, /* never octal */
		{"ff", 0, 255, -EINVAL, 0},
		{"0x", 0, 255, -EINVAL, 0},
		{"", 10, 9, -EINVAL, 0},
		{"", 0, 9, -EINVAL, 0},
		{"-1", 10, 9, -EINVAL, 0},
		{"+1", 0, 9, -EINVAL, 0},
		{" 1", 10, 9, -EINVAL, 0},
		{"1 ", 10, 9, -EINVAL, 0},
		{"1x", 10, 9, -EINVAL, 0},
		{"1", 16, 9, -EINVAL, 0}, /* 0 or 10 only */
	};
	unsigned int i;
	uint32_t v32 = 7;
	uint64_t v;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 12345;
		if (parse_u64(cases[i].text, cases[i].base, cases[i].max, &v) !=
		    cases[i].ret)
			fail_msg("'%s' base %u: want %d", cases[i].text,
				 cases[i].base, cases[i].ret);
		if (cases[i].ret ? v != 12345 : v != cases[i].v)
			fail_msg("'%s': got %llu", cases[i].text,
				 (unsigned long long)v);
	}
	assert_int_equal(parse_u32("4294967295", 10, UINT32_MAX, &v32), 0);
	assert_true(v32 == UINT32_MAX);
	assert_int_equal(parse_u32("0x100000000", 0, UINT32_MAX, &v32),
			 -ERANGE);
	assert_true(v32 == UINT32_MAX);
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint64_t bytes;
	} cases[] = {
		{"0", 0, 0},
		{"512", 0, 512},
		{"1K", 0, 1024},
		{"1k", 0, 1024},
		{"1KiB", 0, 1024},
		{"1KB", 0, 1024},
		{"3M", 0, 3ull << 20},
		{"1G", 0, 1ull << 30},
		{"1T", 0, 1ull << 40},
		{"8P", 0, 8ull << 50},
		{"16383P", 0, 16383ull << 50},
		{"18446744073709551615", 0, UINT64_MAX},
		{"18446744073709551616", -ERANGE, 0},
		{"16384P", -ERANGE, 0},
		{"12Q", -EINVAL, 0},
		{"1E", -EINVAL, 0},
		{"1.5G", -EINVAL, 0},
		{" 1G", -EINVAL, 0},
		{"1G ", -EINVAL, 0},
		{"-1", -EINVAL, 0},
		{"", -EINVAL, 0},
		{"G", -EINVAL, 0},
		{"1Gi", -EINVAL, 0},
		{"0x10", -EINVAL, 0},
	};
	unsigned int i;
	uint64_t v;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 12345;
		if (parse_size(cases[i].text, UINT64_MAX, &v) != cases[i].ret)
			fail_msg("'%s': want %d", cases[i].text, cases[i].ret);
		if (!cases[i].ret && v != cases[i].bytes)
			fail_msg("'%s': got %llu", cases[i].text,
				 (unsigned long long)v);
	}
	/* @max is inclusive and applies after the suffix */
	assert_int_equal(parse_size("1M", 1u << 20, &v), 0);
	assert_int_equal(v, 1u << 20);
	assert_int_equal(parse_size("1025K", 1u << 20, &v), -ERANGE);
	assert_int_equal(parse_size("1048577", 1u << 20, &v), -ERANGE);
	assert_int_equal(parse_size("2G", 1u << 20, &v), -ERANGE);
}

static void test_rng(void **state)
{
	/* splitmix64's published outputs for seed 1234567 */
	static const uint64_t want[] = {
		6457827717110365317ull,	 3203168211198807973ull,
		9817491932198370423ull,	 4593380528125082431ull,
		16408922859458223821ull,
	};
	unsigned int count[10] = {0}, i;
	struct rng r = rng_init(1234567), fork;
	double chi2 = 0;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(want); i++)
		assert_true(rng_next(&r) == want[i]);
	r = rng_init(0);
	assert_true(rng_next(&r) == 0xe220a8397b1dcdafull);
	/* a copy replays the stream */
	fork = r;
	assert_true(rng_next(&fork) == rng_next(&r));
	/* rng_below(): in range, and the ten buckets even (chi-square with
	 * 9 degrees of freedom: 27.9 is the 0.1% tail) */
	assert_true(rng_below(&r, 0) == 0);
	assert_true(rng_below(&r, 1) == 0);
	for (i = 0; i < 100000; i++) {
		uint64_t x = rng_below(&r, 10);

		assert_true(x < 10);
		count[x]++;
	}
	for (i = 0; i < 10; i++)
		chi2 += (count[i] - 10000.0) * (count[i] - 10000.0) / 10000.0;
	assert_true(chi2 < 27.9);
	/* a bound just above 2^63 rejects about half the draws; the answer
	 * still lands below it */
	for (i = 0; i < 1000; i++)
		assert_true(rng_below(&r, (1ull << 63) + 1) <= 1ull << 63);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_be),
		cmocka_unit_test(test_le),
		cmocka_unit_test(test_array_size),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_rng),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
