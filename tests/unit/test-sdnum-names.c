// SPDX-License-Identifier: MIT
/*
 * Names: known values, every index 0..2^20-1 through name and parse, the
 * partition suffix rule, and the strict rejection list of sdnum_parse().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "rng.h"
#include "sdnum.h"

static void check_name(uint32_t index, const char *want)
{
	char buf[SDNUM_NAME_MAX];
	uint32_t got;
	unsigned int part;

	assert_int_equal(sdnum_name("sd", index, buf, sizeof(buf)),
			 (int)strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(sdnum_parse("sd", want, &got, &part), 0);
	assert_int_equal(got, index);
	assert_int_equal(part, 0);
}

static void test_known(void **state)
{
	(void)state;
	check_name(0, "sda");
	check_name(25, "sdz");
	check_name(26, "sdaa");
	check_name(27, "sdab");
	check_name(701, "sdzz");
	check_name(702, "sdaaa");
	check_name(18277, "sdzzz");
	check_name(18278, "sdaaaa");
	check_name(262143, "sdnwtl");
	check_name(1048575, "sdbgqcv");
	check_name(INT_MAX, "sdfxshrxx");
	/*
	 * The 2003 mail asks about "/dev/sdabcd for discs after #18954"; four
	 * letters really start at 26 + 26^2 + 26^3 = 18278 (sdaaaa), which is
	 * where scsi_debug's 19,000-disk boot saw it appear.
	 */
	check_name(18954, "sdabaa");
}

static void test_prefixes(void **state)
{
	char buf[SDNUM_NAME_MAX];

	(void)state;
	assert_int_equal(sdnum_name("vd", 26, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "vdaa");
	assert_int_equal(sdnum_name("xvd", 1, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "xvdb");
	assert_int_equal(sdnum_name("", 0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "a");
	assert_int_equal(sdnum_name(NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(
		sdnum_name("sd", (uint32_t)INT_MAX + 1, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(sdnum_name("012345678901234567890123456789012", 0, buf,
				    sizeof(buf)),
			 -EINVAL);
}

static void test_buffer_size(void **state)
{
	char buf[16];

	(void)state;
	/* "sdaaa" needs 6 bytes with its NUL; 5 must fail and not overflow. */
	assert_int_equal(sdnum_name("sd", 702, buf, 6), 5);
	assert_int_equal(sdnum_name("sd", 702, buf, 5), -ENOSPC);
	assert_int_equal(sdnum_name("sd", 0, buf, 0), -ENOSPC);
	assert_int_equal(sdnum_name_part("sd", 0, 15, buf, 6), 5);
	assert_int_equal(sdnum_name_part("sd", 0, 15, buf, 5), -ENOSPC);
	assert_int_equal(sdnum_part_name("nvme0n1", 1, buf, 10), 9);
	assert_int_equal(sdnum_part_name("nvme0n1", 1, buf, 9), -ENOSPC);
}

static void test_partitions(void **state)
{
	char buf[SDNUM_NAME_MAX];
	uint32_t index;
	unsigned int part;

	(void)state;
	assert_int_equal(sdnum_part_name("sda", 1, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "sda1");
	assert_int_equal(sdnum_part_name("nvme0n1", 1, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "nvme0n1p1");
	assert_int_equal(sdnum_part_name("mmcblk0", 12, buf, sizeof(buf)), 10);
	assert_string_equal(buf, "mmcblk0p12");
	assert_int_equal(sdnum_part_name("sda", 0, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "sda");
	assert_int_equal(sdnum_part_name("sda", 256, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(sdnum_part_name("", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sdnum_name_part("sd", 262143, 63, buf, sizeof(buf)),
			 8);
	assert_string_equal(buf, "sdnwtl63");
	assert_int_equal(sdnum_name_part("sd", 27, 255, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "sdab255");
	assert_int_equal(sdnum_parse("sd", "sdab255", &index, &part), 0);
	assert_int_equal(index, 27);
	assert_int_equal(part, 255);
	assert_int_equal(sdnum_parse("sd", "sda1", &index, &part), 0);
	assert_int_equal(index, 0);
	assert_int_equal(part, 1);
}

/* Every index 0..2^20-1 round-trips and names come out in shortlex order. */
static void test_exhaustive(void **state)
{
	char prev[SDNUM_NAME_MAX] = "", buf[SDNUM_NAME_MAX];
	uint32_t i, index;
	unsigned int part;
	int n, pn = 0;

	(void)state;
	for (i = 0; i < 1u << 20; i++) {
		n = sdnum_name("sd", i, buf, sizeof(buf));
		assert_true(n > 2);
		if (i) {
			/* shortlex order: strictly increasing means injective */
			assert_true(n > pn ||
				    (n == pn && strcmp(buf, prev) > 0));
		}
		assert_int_equal(sdnum_parse("sd", buf, &index, &part), 0);
		assert_int_equal(index, i);
		assert_int_equal(part, 0);
		memcpy(prev, buf, (size_t)n + 1);
		pn = n;
	}
	/* and every partition of a few disks at each length boundary */
	for (i = 0; i <= SDNUM_MAX_PART_NUMBER; i++) {
		static const uint32_t disks[] = {
			0, 25, 26, 701, 702, 18277, 18278, 262143, 1048575};
		unsigned int d;

		for (d = 0; d < ARRAY_SIZE(disks); d++) {
			assert_true(sdnum_name_part("sd", disks[d], i, buf,
						    sizeof(buf)) > 0);
			assert_int_equal(sdnum_parse("sd", buf, &index, &part),
					 0);
			assert_int_equal(index, disks[d]);
			assert_int_equal(part, i);
		}
	}
}

static void test_reject(void **state)
{
	static const struct {
		const char *name;
		int err;
	} bad[] = {
		{"", -EINVAL},
		{"sd", -EINVAL}, /* empty body */
		{"sd1", -EINVAL}, /* empty body */
		{"sdA", -EINVAL}, /* upper case */
		{"sdaB", -EINVAL},
		{"SDA", -EINVAL},
		{"sda0", -EINVAL}, /* partition 0 is the disk itself */
		{"sda01", -EINVAL}, /* leading zero */
		{"sda00", -EINVAL},
		{"sda256", -ERANGE}, /* DISK_MAX_PARTS */
		{"sda999", -ERANGE},
		{"sda1000", -ERANGE},
		{"sda99999999999999999999", -ERANGE},
		{"sda1x", -EINVAL}, /* trailing junk */
		{"sda1a", -EINVAL},
		{"sda ", -EINVAL},
		{"sda-1", -EINVAL},
		{"sda+1", -EINVAL},
		{" sda", -EINVAL},
		{"xda", -EINVAL}, /* wrong prefix */
		{"s", -EINVAL},
		{"sdp1p", -EINVAL},
		{"sda\n", -EINVAL},
		{"sd\xc3\xa9", -EINVAL},
		{"sdfxshrxy", -ERANGE}, /* INT_MAX + 1 */
		{"sdzzzzzzz", -ERANGE},
		{"sdaaaaaaaa", -ERANGE}, /* 8 letters */
		{"sdaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -ERANGE},
		{"sdaaaaaaaa1x", -EINVAL}, /* junk wins over overflow */
	};
	uint32_t index = 12345;
	unsigned int i, part = 77;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = sdnum_parse("sd", bad[i].name, &index, &part);

		if (ret != bad[i].err)
			fail_msg("parse(\"%s\") = %d, want %d", bad[i].name,
				 ret, bad[i].err);
		/* outputs untouched on failure */
		assert_int_equal(index, 12345);
		assert_int_equal(part, 77);
	}
	assert_int_equal(sdnum_parse("sd", NULL, &index, &part), -EINVAL);
	assert_int_equal(sdnum_parse(NULL, "sda", &index, &part), -EINVAL);
}

/* A name that is not NUL-terminated: exactly len bytes are read (ASan). */
static void test_parse_len(void **state)
{
	uint32_t index;
	unsigned int part;
	char *p = malloc(6);

	(void)state;
	assert_non_null(p);
	memcpy(p, "sdaa12", 6);
	assert_int_equal(sdnum_parse_len("sd", p, 6, &index, &part), 0);
	assert_int_equal(index, 26);
	assert_int_equal(part, 12);
	assert_int_equal(sdnum_parse_len("sd", p, 4, &index, &part), 0);
	assert_int_equal(part, 0);
	assert_int_equal(sdnum_parse_len("sd", p, 1, &index, &part), -EINVAL);
	memcpy(p,
	       "sda\0"
	       "12",
	       6);
	assert_int_equal(sdnum_parse_len("sd", p, 6, &index, &part), -EINVAL);
	free(p);
}

/* Random bytes never crash the parser; whatever parses names itself. */
static void test_parse_random(void **state)
{
	struct rng r = rng_init(0x9e3779b97f4a7c15ull);
	char in[16], out[SDNUM_NAME_MAX];
	static const char alpha[] = "sdaz09p15xA\0-";
	uint32_t index;
	unsigned int part, i, k, len;
	uint64_t x;
	int ok = 0;

	(void)state;
	for (i = 0; i < 300000; i++) {
		x = rng_next(&r);
		len = 2 + (unsigned int)(x % 10);
		in[0] = 's';
		in[1] = 'd';
		for (k = 2; k < len; k++)
			in[k] = alpha[(x >> (k * 4)) % (sizeof(alpha) - 1)];
		if (sdnum_parse_len("sd", in, len, &index, &part) == 0) {
			ok++;
			assert_int_equal(sdnum_name_part("sd", index, part, out,
							 sizeof(out)),
					 (int)len);
			assert_memory_equal(out, in, len);
		}
	}
	assert_true(ok > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_buffer_size),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_exhaustive),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_parse_len),
		cmocka_unit_test(test_parse_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
