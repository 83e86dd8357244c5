// SPDX-License-Identifier: MIT
/*
 * common/: the byte-order accessors against values built byte by byte, at
 * every alignment, and ARRAY_SIZE (its refusal of a pointer is a compile
 * error, checked by tests/integration/common-array.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "bytes.h"

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
			assert_int_equal(buf[off + 8], 0xee); /* nothing past the field */
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
	static const char *const names[] = { "a", "b", "c" };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_be),
		cmocka_unit_test(test_le),
		cmocka_unit_test(test_array_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
