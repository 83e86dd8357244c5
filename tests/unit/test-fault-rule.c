// SPDX-License-Identifier: MIT
/*
 * The fault-rule grammar: fault_rule_parse() and fault_rule_format(). Every
 * field at its edges both ways, parse(format(r)) == r over every kind and a
 * grid of values, and the exact message for each kind of bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "fault.h"
#include "fault-rule.h"
#include "lun.h"

static void test_fault_parse(void **state)
{
	struct fault_rule r;
	char why[256];

	(void)state;
	assert_int_equal(fault_rule_parse("medium-read luns=0-3 lba=100-199",
					  LUN_MAX_LUNS, &r, why, sizeof(why)),
			 0);
	assert_int_equal(r.kind, FAULT_MEDIUM_READ);
	assert_int_equal(r.lun_first, 0);
	assert_int_equal(r.lun_last, 3);
	assert_int_equal(r.lba_first, 100);
	assert_int_equal(r.lba_last, 199);
	assert_int_equal(r.ops, 0);
	assert_int_equal(r.count, 0);

	/* the example from the brief, every field */
	assert_int_equal(
		fault_rule_parse(
			"ua luns=5 lba=7- count=1 asc=0x3f ascq=3 ops=read,other",
			1000, &r, why, sizeof(why)),
		0);
	assert_int_equal(r.kind, FAULT_UA);
	assert_int_equal(r.lun_first, 5);
	assert_int_equal(r.lun_last, 5);
	assert_int_equal(r.lba_first, 7);
	assert_int_equal(r.lba_last, UINT64_MAX);
	assert_int_equal(r.count, 1);
	assert_int_equal(r.asc, 0x3f);
	assert_int_equal(r.ascq, 3);
	assert_int_equal(r.ops, FAULT_OP_READ | FAULT_OP_OTHER);

	/* defaults: all LUNs, all LBAs; ua and not-ready codes */
	assert_int_equal(fault_rule_parse("ua", 10, &r, why, sizeof(why)), 0);
	assert_int_equal(r.lun_first, 0);
	assert_int_equal(r.lun_last, UINT32_MAX);
	assert_int_equal(r.lba_first, 0);
	assert_int_equal(r.lba_last, UINT64_MAX);
	assert_int_equal(r.asc, 0x29);
	assert_int_equal(fault_rule_parse("not-ready\tluns=all", 10, &r, why,
					  sizeof(why)),
			 0);
	assert_int_equal(r.asc, 0x04);
	assert_int_equal(r.lun_last, UINT32_MAX);

	/* delays in every unit */
	assert_int_equal(
		fault_rule_parse("delay delay=10ms", 10, &r, why, sizeof(why)),
		0);
	assert_int_equal(r.delay_ns, 10000000);
	fault_rule_parse("delay delay=7us", 10, &r, why, sizeof(why));
	assert_int_equal(r.delay_ns, 7000);
	fault_rule_parse("delay delay=3s", 10, &r, why, sizeof(why));
	assert_int_equal(r.delay_ns, 3000000000ull);
	fault_rule_parse("delay delay=1ns ops=any", 10, &r, why, sizeof(why));
	assert_int_equal(r.delay_ns, 1);
	assert_int_equal(r.ops, FAULT_OP_ANY);
}

static void test_fault_errors(void **state)
{
	static const struct {
		const char *rule;
		const char *why;
	} cases[] = {
		{"",
		 "empty rule (KIND [luns=A-B] [lba=X-Y] [ops=...] [delay=T] [count=N] [asc=N] [ascq=N])"},
		{"explode",
		 "unknown kind 'explode' (medium-read, medium-write, delay, hang, ua, not-ready)"},
		{"hang luns", "'luns' is not FIELD=VALUE"},
		{"hang =5", "'=5' is not FIELD=VALUE"},
		{"hang colour=red",
		 "unknown field 'colour' (luns, lba, ops, delay, count, asc, ascq)"},
		{"hang luns=1 luns=2", "luns= given twice"},
		{"hang luns=9-3", "luns=9-3: first above last"},
		{"hang luns=x", "luns=x: not all, N, A-B or A-"},
		{"hang luns=100", "luns=100: past max_luns (100)"},
		{"hang luns=5-100", "luns=5-100: past max_luns (100)"},
		{"hang lba=10-5", "lba=10-5: first above last"},
		{"hang lba=-5", "lba=-5: not all, N, X-Y or X-"},
		{"hang ops=read,bogus",
		 "ops=read,bogus: not a comma list of read, write, other, any"},
		{"delay", "kind delay needs delay=TIME"},
		{"delay delay=10",
		 "delay=10: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=601s",
		 "delay=601s: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=0ms",
		 "delay=0ms: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"hang delay=1s", "delay= applies only to kind delay"},
		{"medium-read asc=0x11",
		 "asc= and ascq= apply only to kinds ua and not-ready"},
		{"ua asc=256", "asc=256: not a byte (0..255 or 0x00..0xff)"},
		{"ua count=-1",
		 "count=-1: not a number from 0 (forever) to 4294967295"},
		/* a typo is told the field it is closest to */
		{"hang lun=3", "unknown field 'lun' (did you mean luns?)"},
		{"hang lab=3", "unknown field 'lab' (did you mean lba?)"},
		{"ua ascqq=1", "unknown field 'ascqq' (did you mean ascq?)"},
		{"hang cont=3", "unknown field 'cont' (did you mean count?)"},
		/* bad numbers, in every numeric field */
		{"hang count=12abc",
		 "count=12abc: not a number from 0 (forever) to 4294967295"},
		{"hang count=4294967296",
		 "count=4294967296: not a number from 0 (forever) to 4294967295"},
		{"hang count=0x",
		 "count=0x: not a number from 0 (forever) to 4294967295"},
		{"hang count= 1",
		 "count=: not a number from 0 (forever) to 4294967295"},
		{"ua ascq=0x100",
		 "ascq=0x100: not a byte (0..255 or 0x00..0xff)"},
		{"ua asc=+1", "asc=+1: not a byte (0..255 or 0x00..0xff)"},
		{"hang luns=1x-3", "luns=1x-3: not all, N, A-B or A-"},
		{"hang luns=4294967296",
		 "luns=4294967296: not all, N, A-B or A-"},
		{"hang lba=99999999999999999999",
		 "lba=99999999999999999999: not all, N, X-Y or X-"},
		{"hang lba=1-2-3", "lba=1-2-3: not all, N, X-Y or X-"},
		{"hang ops=",
		 "ops=: not a comma list of read, write, other, any"},
		{"hang ops=,",
		 "ops=,: not a comma list of read, write, other, any"},
		/* bad ranges */
		{"hang lba=18446744073709551615-0",
		 "lba=18446744073709551615-0: first above last"},
		{"hang luns=100-", "luns=100-: past max_luns (100)"},
		{"hang luns=99-", NULL}, /* to the end of any table: fine */
		/* delays past the limit, or not a time */
		{"delay delay=600001ms",
		 "delay=600001ms: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=600000000001ns",
		 "delay=600000000001ns: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=99999999999999999999s",
		 "delay=99999999999999999999s: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=1h",
		 "delay=1h: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		{"delay delay=ms",
		 "delay=ms: not a time from 1ns to 600s (a number and ns, us, ms or s)"},
		/* fields for another kind, twice, or missing */
		{"hang count=1 count=1", "count= given twice"},
		{"ua delay=1s", "delay= applies only to kind delay"},
		{"delay delay=1s ascq=1",
		 "asc= and ascq= apply only to kinds ua and not-ready"},
		{"delay count=1", "kind delay needs delay=TIME"},
	};
	struct fault_rule r;
	char why[256];
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		why[0] = '\0';
		if (!cases[i].why) {
			if (fault_rule_parse(cases[i].rule, 100, &r, why,
					     sizeof(why)))
				fail_msg("'%s': %s", cases[i].rule, why);
			continue;
		}
		if (fault_rule_parse(cases[i].rule, 100, &r, why,
				     sizeof(why)) != -EINVAL)
			fail_msg("'%s' accepted", cases[i].rule);
		if (strcmp(why, cases[i].why) != 0)
			fail_msg("'%s': want '%s', got '%s'", cases[i].rule,
				 cases[i].why, why);
	}
}

static void test_fault_round_trip(void **state)
{
	static const struct {
		const char *in;
		const char *canon;
	} cases[] = {
		{"medium-read luns=0-3 lba=100-199",
		 "medium-read luns=0-3 lba=100-199"},
		{"medium-write   lba=5   luns=7", "medium-write luns=7 lba=5"},
		{"delay delay=1500ms luns=0- count=2",
		 "delay delay=1500ms count=2"},
		{"delay delay=2000ms", "delay delay=2s"},
		{"delay delay=2000000ns ops=write",
		 "delay ops=write delay=2ms"},
		{"hang ops=read,write,other", "hang ops=any"},
		{"hang luns=4-", "hang luns=4-"},
		{"ua luns=all lba=all", "ua asc=0x29 ascq=0x00"},
		{"ua luns=16-17 asc=0x3f ascq=0x03 count=1",
		 "ua luns=16-17 count=1 asc=0x3f ascq=0x03"},
		{"not-ready lba=0x10-0x1f ascq=1",
		 "not-ready lba=16-31 asc=0x04 ascq=0x01"},
	};
	struct fault_rule r, back;
	char buf[256], why[256];
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (fault_rule_parse(cases[i].in, LUN_MAX_LUNS, &r, why,
				     sizeof(why)))
			fail_msg("'%s': %s", cases[i].in, why);
		assert_true(fault_rule_format(&r, buf, sizeof(buf)) > 0);
		if (strcmp(buf, cases[i].canon) != 0)
			fail_msg("'%s': want '%s', got '%s'", cases[i].in,
				 cases[i].canon, buf);
		assert_int_equal(fault_rule_parse(buf, LUN_MAX_LUNS, &back, why,
						  sizeof(why)),
				 0);
		assert_memory_equal(&r, &back, sizeof(r));
	}
	assert_int_equal(fault_rule_format(&r, buf, 8), -ENOSPC);
}

/*
 * Every field at its edges: "KIND FIELD" parses, formats with the field in
 * its canonical form (or left out, NULL, when it is the default), and that
 * text parses back to the same rule.
 */
static void test_every_field(void **state)
{
	static const struct {
		const char *rule;
		const char *canon;
	} cases[] = {
		{"hang luns=0", "hang luns=0"},
		{"hang luns=16383", "hang luns=16383"},
		{"hang luns=3-7", "hang luns=3-7"},
		{"hang luns=0x10-", "hang luns=16-"},
		{"hang luns=0-", "hang"},
		{"hang luns=all", "hang"},
		{"hang lba=0", "hang lba=0"},
		{"hang lba=18446744073709551615",
		 "hang lba=18446744073709551615"},
		{"hang lba=0-18446744073709551614",
		 "hang lba=0-18446744073709551614"},
		{"hang lba=5-", "hang lba=5-"},
		{"hang lba=0-18446744073709551615", "hang"},
		{"hang ops=read", "hang ops=read"},
		{"hang ops=write", "hang ops=write"},
		{"hang ops=other", "hang ops=other"},
		{"hang ops=write,read", "hang ops=read,write"},
		{"hang ops=other,write", "hang ops=write,other"},
		{"hang ops=read,,other", "hang ops=read,other"},
		{"hang ops=any,read", "hang ops=any"},
		{"delay delay=1ns", "delay delay=1ns"},
		{"delay delay=600s", "delay delay=600s"},
		{"delay delay=600000ms", "delay delay=600s"},
		{"delay delay=1001us", "delay delay=1001us"},
		{"delay delay=1000us", "delay delay=1ms"},
		{"delay delay=0x10ms", NULL}, /* digits only before the unit */
		{"hang count=0", "hang"},
		{"hang count=1", "hang count=1"},
		{"hang count=0xffffffff", "hang count=4294967295"},
		{"ua asc=0", "ua asc=0x00 ascq=0x00"},
		{"ua asc=255 ascq=0xFF", "ua asc=0xff ascq=0xff"},
		{"not-ready ascq=0x3a", "not-ready asc=0x04 ascq=0x3a"},
		{"medium-write\tluns=1\t\tlba=2", "medium-write luns=1 lba=2"},
	};
	struct fault_rule r, back;
	char buf[FAULT_RULE_FORMAT_LEN], why[256];
	unsigned int i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ret = fault_rule_parse(cases[i].rule, LUN_MAX_LUNS, &r, why,
				       sizeof(why));
		if (!cases[i].canon) {
			if (ret != -EINVAL)
				fail_msg("'%s' accepted", cases[i].rule);
			continue;
		}
		if (ret)
			fail_msg("'%s': %s", cases[i].rule, why);
		ret = fault_rule_format(&r, buf, sizeof(buf));
		assert_int_equal(ret, (int)strlen(buf));
		if (strcmp(buf, cases[i].canon) != 0)
			fail_msg("'%s': want '%s', got '%s'", cases[i].rule,
				 cases[i].canon, buf);
		if (fault_rule_parse(buf, LUN_MAX_LUNS, &back, why,
				     sizeof(why)))
			fail_msg("'%s' does not read back: %s", buf, why);
		assert_true(fault_rule_same(&r, &back));
	}
}

/*
 * parse(format(r)) == r from the struct side: every kind, over a grid of
 * each field's edge values (34,560 rules).
 */
static void test_struct_round_trip(void **state)
{
	static const uint32_t luns[][2] = {
		{0, 0},
		{5, 9},
		{7, UINT32_MAX},
		{0, UINT32_MAX},
		{LUN_MAX_LUNS - 1, LUN_MAX_LUNS - 1},
	};
	static const uint64_t lbas[][2] = {
		{0, 0},
		{0, UINT64_MAX},
		{UINT64_MAX, UINT64_MAX},
		{100, UINT64_MAX - 1},
	};
	static const uint32_t counts[] = {0, 1, UINT32_MAX};
	static const uint64_t delays[] = {1, 1000, 1500000, FAULT_MAX_DELAY_NS};
	static const uint8_t codes[][2] = {{0, 0}, {0xff, 0xff}, {0x29, 0}};
	struct fault_rule r, back;
	char buf[FAULT_RULE_FORMAT_LEN], why[256];
	unsigned int i, v, kind, x, n = 0;
	int len;

	(void)state;
	/* i in mixed radix: kind, luns, lbas, ops, count, delay x codes */
	for (i = 0;; i++) {
		v = i;
		kind = 1 + v % (FAULT_KIND_MAX - 1);
		v /= FAULT_KIND_MAX - 1;
		r = (struct fault_rule){.kind = (enum fault_kind)kind};
		r.lun_first = luns[v % ARRAY_SIZE(luns)][0];
		r.lun_last = luns[v % ARRAY_SIZE(luns)][1];
		v /= ARRAY_SIZE(luns);
		r.lba_first = lbas[v % ARRAY_SIZE(lbas)][0];
		r.lba_last = lbas[v % ARRAY_SIZE(lbas)][1];
		v /= ARRAY_SIZE(lbas);
		r.ops = v % (FAULT_OP_ANY + 1);
		v /= FAULT_OP_ANY + 1;
		r.count = counts[v % ARRAY_SIZE(counts)];
		v /= ARRAY_SIZE(counts);
		x = v % (ARRAY_SIZE(delays) * ARRAY_SIZE(codes));
		v /= ARRAY_SIZE(delays) * ARRAY_SIZE(codes);
		if (v)
			break;
		/* delay and the sense codes only where the kind has them */
		if (kind == FAULT_DELAY)
			r.delay_ns = delays[x % ARRAY_SIZE(delays)];
		if (kind == FAULT_UA || kind == FAULT_NOT_READY) {
			r.asc = codes[x / ARRAY_SIZE(delays)][0];
			r.ascq = codes[x / ARRAY_SIZE(delays)][1];
		}
		len = fault_rule_format(&r, buf, sizeof(buf));
		assert_true(len > 0 && len < FAULT_RULE_FORMAT_LEN);
		if (fault_rule_parse(buf, LUN_MAX_LUNS, &back, why,
				     sizeof(why)))
			fail_msg("'%s' does not read back: %s", buf, why);
		if (!fault_rule_same(&r, &back))
			fail_msg("'%s' reads back to another rule", buf);
		n++;
	}
	assert_int_equal(n, 34560);
}

/* Too long, too short: the rule's text, @buf, @why. */
static void test_limits(void **state)
{
	static char text[FAULT_RULE_TEXT_MAX + 2];
	struct fault_rule r = {0};
	char buf[FAULT_RULE_FORMAT_LEN], why[256];
	int len, i;

	(void)state;
	/* the longest text is read; one more is refused */
	memset(text, ' ', sizeof(text) - 1);
	memcpy(text, "hang", 4);
	text[FAULT_RULE_TEXT_MAX] = '\0';
	assert_int_equal(fault_rule_parse(text, 10, &r, why, sizeof(why)), 0);
	text[FAULT_RULE_TEXT_MAX] = ' ';
	assert_int_equal(fault_rule_parse(text, 10, &r, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "empty or longer than 4000 characters");
	assert_int_equal(fault_rule_parse(NULL, 10, &r, why, sizeof(why)),
			 -EINVAL);

	/* a short why is cut, NUL-terminated */
	memset(why, 'x', sizeof(why));
	assert_int_equal(fault_rule_parse("hang colour=red", 10, &r, why, 8),
			 -EINVAL);
	assert_string_equal(why, "unknown");

	/* every buffer shorter than the text: -ENOSPC, NUL-terminated */
	assert_int_equal(
		fault_rule_parse(
			"ua luns=1-2 lba=3- ops=read,other count=4 asc=5 ascq=6",
			10, &r, why, sizeof(why)),
		0);
	len = fault_rule_format(&r, buf, sizeof(buf));
	assert_int_equal(
		len,
		(int)strlen(
			"ua luns=1-2 lba=3- ops=read,other count=4 asc=0x05 ascq=0x06"));
	for (i = 1; i <= len; i++) {
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(fault_rule_format(&r, buf, (size_t)i),
				 -ENOSPC);
		assert_int_equal(strlen(buf), (size_t)i - 1);
	}
	assert_int_equal(fault_rule_format(&r, buf, 0), -EINVAL);
	r.kind = FAULT_KIND_MAX;
	assert_int_equal(fault_rule_format(&r, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_parse),
		cmocka_unit_test(test_fault_errors),
		cmocka_unit_test(test_fault_round_trip),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_struct_round_trip),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
