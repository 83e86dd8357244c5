// SPDX-License-Identifier: MIT
/*
 * CHAP for iSCSI: the MD5 response of RFC 1994 4.1 (MD5 over identifier,
 * secret and challenge; expected values computed independently with
 * Python's hashlib), hex and base64 binary values, the target's check of
 * one-way and mutual CHAP, and the reflection check.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "frontend/iscsi/iscsi_i.h"

static const uint8_t vec1[16] = {
	0x0b, 0xa5, 0xfa, 0xb3, 0x69, 0x26, 0xa6, 0xaa,
	0xb1, 0xf2, 0xe4, 0xaa, 0x6c, 0xf1, 0x15, 0x8d,
};

static void test_md5_vector(void **state)
{
	uint8_t chal[16], out[16], ff[8];
	static const uint8_t vec2[16] = {
		0x9b, 0xae, 0xd7, 0xa1, 0x05, 0xc4, 0xd0, 0x1a,
		0x6a, 0x9a, 0xcb, 0xc0, 0x31, 0x3c, 0x93, 0x36,
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	iscsi_chap_md5(1, "abcdefghijkl", 12, chal, 16, out);
	assert_memory_equal(out, vec1, 16);
	memset(ff, 0xff, sizeof(ff));
	iscsi_chap_md5(0xa5, "mutualsecret99", 14, ff, 8, out);
	assert_memory_equal(out, vec2, 16);
}

static void test_decode(void **state)
{
	uint8_t b[32];
	unsigned int i;

	(void)state;
	assert_int_equal(iscsi_chap_decode("0x000102030405060708090a0b0c0d0e0f",
					   b, sizeof(b)),
			 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(b[i], i);
	assert_int_equal(
		iscsi_chap_decode("0bAAECAwQFBgcICQoLDA0ODw==", b, sizeof(b)),
		16);
	for (i = 0; i < 16; i++)
		assert_int_equal(b[i], i);
	/* an odd digit count takes a leading zero */
	assert_int_equal(iscsi_chap_decode("0XABC", b, sizeof(b)), 2);
	assert_int_equal(b[0], 0x0a);
	assert_int_equal(b[1], 0xbc);
	assert_int_equal(iscsi_chap_decode("0x", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0xzz", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("1234", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0bAAE", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0bA=AA", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0x0102", b, 1), -E2BIG);
}

static void test_encode(void **state)
{
	char s[40];

	(void)state;
	assert_int_equal(iscsi_chap_encode(vec1, 16, s, sizeof(s)), 34);
	assert_string_equal(s, "0x0ba5fab36926a6aab1f2e4aa6cf1158d");
	assert_int_equal(iscsi_chap_encode(vec1, 16, s, 34), -ENOSPC);
}

static void setup_chap(struct iscsi_chap *ch, struct cfg_iscsi *ic)
{
	unsigned int i;

	memset(ic, 0, sizeof(*ic));
	strcpy(ic->chap_user, "alice");
	strcpy(ic->chap_secret, "abcdefghijkl");
	ch->state = ISCSI_CHAP_WANT_R;
	ch->id = 1;
	for (i = 0; i < 16; i++)
		ch->challenge[i] = (uint8_t)i;
}

static void test_check_one_way(void **state)
{
	const char *good = "0x0ba5fab36926a6aab1f2e4aa6cf1158d";
	struct iscsi_chap ch;
	struct cfg_iscsi ic;
	char buf[256];
	struct iscsi_text out = {.buf = buf, .cap = sizeof(buf)};

	(void)state;
	setup_chap(&ch, &ic);
	assert_int_equal(
		iscsi_chap_check(&ch, &ic, "alice", good, NULL, NULL, &out), 0);
	assert_int_equal(ch.state, ISCSI_CHAP_DONE);
	assert_int_equal(out.len, 0);
	/* wrong name, wrong response, garbage */
	setup_chap(&ch, &ic);
	assert_int_equal(
		iscsi_chap_check(&ch, &ic, "bob", good, NULL, NULL, &out),
		-EACCES);
	setup_chap(&ch, &ic);
	assert_int_equal(iscsi_chap_check(&ch, &ic, "alice",
					  "0x0ba5fab36926a6aab1f2e4aa6cf1158e",
					  NULL, NULL, &out),
			 -EACCES);
	setup_chap(&ch, &ic);
	assert_int_equal(iscsi_chap_check(&ch, &ic, "alice", "nonsense", NULL,
					  NULL, &out),
			 -EINVAL);
	/* a response before any challenge */
	setup_chap(&ch, &ic);
	ch.state = ISCSI_CHAP_WANT_A;
	assert_int_equal(
		iscsi_chap_check(&ch, &ic, "alice", good, NULL, NULL, &out),
		-EINVAL);
}

static void test_check_mutual(void **state)
{
	const char *good = "0x0ba5fab36926a6aab1f2e4aa6cf1158d";
	struct iscsi_chap ch;
	struct cfg_iscsi ic;
	char buf[256];
	struct iscsi_text out = {.buf = buf, .cap = sizeof(buf)};

	(void)state;
	setup_chap(&ch, &ic);
	/* no mutual secret configured: the target cannot answer */
	assert_int_equal(iscsi_chap_check(&ch, &ic, "alice", good, "165",
					  "0xffffffffffffffff", &out),
			 -EACCES);
	setup_chap(&ch, &ic);
	strcpy(ic.mutual_user, "target");
	strcpy(ic.mutual_secret, "mutualsecret99");
	assert_int_equal(iscsi_chap_check(&ch, &ic, "alice", good, "165",
					  "0xffffffffffffffff", &out),
			 0);
	assert_memory_equal(
		buf, "CHAP_N=target\0CHAP_R=0x9baed7a105c4d01a6a9acbc0313c9336",
		out.len);
	/* the initiator echoing our challenge back: a reflection */
	setup_chap(&ch, &ic);
	strcpy(ic.mutual_user, "target");
	strcpy(ic.mutual_secret, "mutualsecret99");
	out.len = 0;
	assert_int_equal(iscsi_chap_check(&ch, &ic, "alice", good, "7",
					  "0x000102030405060708090a0b0c0d0e0f",
					  &out),
			 -EACCES);
	/* half of the mutual pair */
	setup_chap(&ch, &ic);
	strcpy(ic.mutual_user, "target");
	strcpy(ic.mutual_secret, "mutualsecret99");
	assert_int_equal(
		iscsi_chap_check(&ch, &ic, "alice", good, "7", NULL, &out),
		-EINVAL);
	setup_chap(&ch, &ic);
	strcpy(ic.mutual_user, "target");
	strcpy(ic.mutual_secret, "mutualsecret99");
	assert_int_equal(
		iscsi_chap_check(&ch, &ic, "alice", good, "256", "0xff", &out),
		-EINVAL);
}

static void test_challenge(void **state)
{
	struct iscsi_chap a = {0}, b = {0};
	char buf[256];
	struct iscsi_text out = {.buf = buf, .cap = sizeof(buf)};

	(void)state;
	assert_int_equal(iscsi_chap_challenge(&a, &out), 0);
	assert_int_equal(a.state, ISCSI_CHAP_WANT_R);
	assert_memory_equal(buf, "CHAP_A=5\0CHAP_I=", 16);
	assert_non_null(memmem(buf, out.len, "CHAP_C=0x", 9));
	assert_int_equal(iscsi_chap_challenge(&b, &out), 0);
	/* 128 random bits: two challenges differ */
	assert_memory_not_equal(a.challenge, b.challenge, 16);
}

#define SEC 1000000000ull

static void test_throttle(void **state)
{
	static struct iscsi_auth_throttle t;
	uint8_t a[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
	uint8_t b[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 2};
	uint64_t now = 1000 * SEC;
	unsigned int i, n;

	(void)state;
	pthread_mutex_init(&t.lock, NULL);
	/* the first ISCSI_AUTH_FREE failures cost nothing */
	for (i = 0; i < ISCSI_AUTH_FREE; i++) {
		assert_int_equal(iscsi_auth_wait(&t, a, now), 0);
		assert_int_equal(iscsi_auth_result(&t, a, false, now), 0);
	}
	/* then 1, 2, 4, 8, 16, 16 s */
	assert_int_equal(iscsi_auth_result(&t, a, false, now), 1);
	assert_int_equal(iscsi_auth_wait(&t, a, now), 1);
	assert_int_equal(iscsi_auth_wait(&t, a, now + SEC / 2), 1);
	assert_int_equal(iscsi_auth_wait(&t, a, now + SEC), 0);
	/* another address is not slowed down */
	assert_int_equal(iscsi_auth_wait(&t, b, now), 0);
	for (n = 2; n <= 32; n *= 2) {
		now += 20 * SEC;
		assert_int_equal(
			iscsi_auth_result(&t, a, false, now),
			n < ISCSI_AUTH_DELAY_MAX ? n : ISCSI_AUTH_DELAY_MAX);
	}
	assert_int_equal(iscsi_auth_wait(&t, a, now), ISCSI_AUTH_DELAY_MAX);
	/* a success forgets */
	iscsi_auth_result(&t, a, true, now + 20 * SEC);
	assert_int_equal(iscsi_auth_result(&t, a, false, now + 21 * SEC), 0);
	/* so does a long quiet time */
	for (i = 0; i < 8; i++)
		iscsi_auth_result(&t, a, false, now + 22 * SEC);
	assert_int_equal(
		iscsi_auth_result(&t, a, false,
				  now + (22 + ISCSI_AUTH_FORGET_S + 1) * SEC),
		0);
	pthread_mutex_destroy(&t.lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md5_vector),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_check_one_way),
		cmocka_unit_test(test_check_mutual),
		cmocka_unit_test(test_challenge),
		cmocka_unit_test(test_throttle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
