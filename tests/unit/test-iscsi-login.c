// SPDX-License-Identifier: MIT
/*
 * iSCSI text negotiation (RFC 7143 6 and 13): every operational key's
 * result function and range, bad values answered with Reject, duplicates
 * as protocol errors, leading-only keys outside a leading login,
 * obsolete marker keys, NotUnderstood keys, and the key=value codec;
 * login keys declared once, iSCSI names as RFC 3722 has them, and peer
 * text escaped before it is logged.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "config.h"
#include "frontend/iscsi/iscsi_i.h"

static const struct iscsi_offer offer = {
	.max_recv_dsl = 262144,
	.max_burst = 1048576,
	.first_burst = 65536,
	.immediate_data = true,
	.initial_r2t = false,
};

struct run {
	struct iscsi_neg n;
	char buf[4096];
	struct iscsi_text out;
};

static void run_init(struct run *r, const struct iscsi_offer *o)
{
	iscsi_neg_init(&r->n, o);
	memset(r->buf, 0, sizeof(r->buf));
	r->out = (struct iscsi_text){.buf = r->buf, .cap = sizeof(r->buf)};
}

/* Negotiates one key; returns the answer's value ("" for none). */
static const char *ask(struct run *r, const char *key, const char *value,
		       bool leading)
{
	size_t before = r->out.len;
	int ret = iscsi_neg_key(&r->n, key, value, leading, &r->out);
	const char *eq;

	assert_int_equal(ret, ISCSI_NEG_DONE);
	if (r->out.len == before)
		return "";
	assert_int_equal(strncmp(r->buf + before, key, strlen(key)), 0);
	eq = r->buf + before + strlen(key);
	assert_int_equal(*eq, '=');
	return eq + 1;
}

static void test_defaults(void **state)
{
	struct iscsi_params p;

	(void)state;
	iscsi_params_default(&p, 262144);
	assert_false(p.header_digest);
	assert_false(p.data_digest);
	assert_int_equal(p.max_xmit_dsl, 8192);
	assert_int_equal(p.max_burst, 262144);
	assert_int_equal(p.first_burst, 65536);
	assert_true(p.immediate_data);
	assert_true(p.initial_r2t);
	assert_int_equal(p.max_outstanding_r2t, 1);
	assert_int_equal(p.erl, 0);
	assert_int_equal(p.time2wait, 2);
	assert_int_equal(p.time2retain, 20);
}

static void test_digests(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	/* the initiator's order is its preference */
	assert_string_equal(ask(&r, "HeaderDigest", "CRC32C,None", true),
			    "CRC32C");
	assert_true(r.n.p.header_digest);
	assert_string_equal(ask(&r, "DataDigest", "None,CRC32C", true), "None");
	assert_false(r.n.p.data_digest);
	run_init(&r, &offer);
	assert_string_equal(ask(&r, "HeaderDigest", "MD5,CRC32C", true),
			    "CRC32C");
	assert_string_equal(ask(&r, "DataDigest", "MD5", true), "Reject");
}

static void test_booleans(void **state)
{
	struct run r;
	struct iscsi_offer o = offer;

	(void)state;
	run_init(&r, &offer);
	/* InitialR2T: OR; ImmediateData: AND */
	assert_string_equal(ask(&r, "InitialR2T", "No", true), "No");
	assert_false(r.n.p.initial_r2t);
	assert_string_equal(ask(&r, "ImmediateData", "Yes", true), "Yes");
	assert_true(r.n.p.immediate_data);
	assert_string_equal(ask(&r, "DataPDUInOrder", "No", true), "Yes");
	assert_string_equal(ask(&r, "DataSequenceInOrder", "No", true), "Yes");
	o.initial_r2t = true;
	o.immediate_data = false;
	run_init(&r, &o);
	assert_string_equal(ask(&r, "InitialR2T", "No", true), "Yes");
	assert_string_equal(ask(&r, "ImmediateData", "Yes", true), "No");
	run_init(&r, &offer);
	assert_string_equal(ask(&r, "InitialR2T", "yes", true), "Reject");
	assert_string_equal(ask(&r, "ImmediateData", "", true), "Reject");
}

static void test_numbers(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	/* minimum of both sides */
	assert_string_equal(ask(&r, "MaxBurstLength", "262144", true),
			    "262144");
	assert_string_equal(ask(&r, "FirstBurstLength", "16777215", true),
			    "65536");
	assert_string_equal(ask(&r, "MaxOutstandingR2T", "64", true), "8");
	assert_string_equal(ask(&r, "MaxConnections", "8", true), "1");
	assert_string_equal(ask(&r, "ErrorRecoveryLevel", "2", true), "0");
	assert_string_equal(ask(&r, "DefaultTime2Retain", "20", true), "0");
	/* DefaultTime2Wait: maximum */
	assert_string_equal(ask(&r, "DefaultTime2Wait", "0", true), "2");
	assert_int_equal(r.n.p.max_burst, 262144);
	assert_int_equal(r.n.p.first_burst, 65536);
	assert_int_equal(r.n.p.max_outstanding_r2t, 8);
	/* hex is a number too */
	run_init(&r, &offer);
	assert_string_equal(ask(&r, "MaxBurstLength", "0x1000", true), "4096");
}

static void test_bad_numbers(void **state)
{
	static const char *const bad[][2] = {
		{"MaxBurstLength", "511"},
		{"MaxBurstLength", "16777216"},
		{"FirstBurstLength", "-1"},
		{"MaxOutstandingR2T", "0"},
		{"MaxConnections", "65536"},
		{"ErrorRecoveryLevel", "3"},
		{"DefaultTime2Wait", "3601"},
		{"DefaultTime2Retain", "12abc"},
		{"MaxRecvDataSegmentLength", "100"},
		{"MaxBurstLength", "0x"},
		{"MaxBurstLength", "99999999999999999999"},
	};
	unsigned int i;
	struct run r;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		run_init(&r, &offer);
		assert_string_equal(ask(&r, bad[i][0], bad[i][1], true),
				    "Reject");
	}
	/* nothing changed */
	assert_int_equal(r.n.p.max_burst, 262144);
}

static void test_mrdsl_declared(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	/* declarative: the initiator's value is ours to send with; ours
	 * goes back once */
	assert_string_equal(ask(&r, "MaxRecvDataSegmentLength", "65536", true),
			    "262144");
	assert_int_equal(r.n.p.max_xmit_dsl, 65536);
	run_init(&r, &offer);
	iscsi_neg_finish(&r.n, &r.out);
	assert_string_equal(r.buf, "MaxRecvDataSegmentLength=262144");
	/* only once */
	iscsi_neg_finish(&r.n, &r.out);
	assert_int_equal(r.out.len, strlen(r.buf) + 1);
}

static void test_first_burst_clamped(void **state)
{
	struct run r;
	struct iscsi_offer o = offer;

	(void)state;
	o.max_burst = 8192;
	o.first_burst = 65536;
	run_init(&r, &o);
	ask(&r, "MaxBurstLength", "16384", true);
	ask(&r, "FirstBurstLength", "65536", true);
	iscsi_neg_finish(&r.n, &r.out);
	assert_int_equal(r.n.p.max_burst, 8192);
	assert_int_equal(r.n.p.first_burst, 8192);
}

static void test_duplicate_is_error(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	ask(&r, "MaxBurstLength", "4096", true);
	assert_int_equal(
		iscsi_neg_key(&r.n, "MaxBurstLength", "4096", true, &r.out),
		-EPROTO);
}

static void test_phase_and_obsolete(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	/* leading-only and login-only keys in full feature phase */
	assert_string_equal(ask(&r, "MaxBurstLength", "4096", false), "Reject");
	assert_string_equal(ask(&r, "HeaderDigest", "None", false), "Reject");
	/* MaxRecvDataSegmentLength may change at any time */
	assert_string_equal(ask(&r, "MaxRecvDataSegmentLength", "4096", false),
			    "262144");
	assert_int_equal(r.n.p.max_xmit_dsl, 4096);
	/* RFC 7143 13.26 */
	assert_string_equal(ask(&r, "OFMarker", "No", true), "Reject");
	assert_string_equal(ask(&r, "IFMarkInt", "2048", true), "Reject");
}

static void test_not_mine_and_unknown(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, &offer);
	assert_int_equal(
		iscsi_neg_key(&r.n, "X-com.example.Foo", "1", true, &r.out),
		ISCSI_NEG_NOT_MINE);
	assert_int_equal(
		iscsi_neg_key(&r.n, "InitiatorName", "iqn.x", true, &r.out),
		ISCSI_NEG_NOT_MINE);
	assert_int_equal(r.out.len, 0);
	assert_true(iscsi_key_unknown("X-com.example.Foo"));
	assert_true(iscsi_key_unknown("iSCSIProtocolLevel"));
	assert_true(iscsi_key_unknown("headerdigest"));
	assert_false(iscsi_key_unknown("HeaderDigest"));
	assert_false(iscsi_key_unknown("SendTargets"));
	assert_false(iscsi_key_unknown("CHAP_R"));
}

static void test_text_codec(void **state)
{
	char seg[] = "A=1\0B=\0\0C=x=y\0D";
	char *p = seg, *end = seg + sizeof(seg) - 1, *k, *v;
	char bad1[] = "NoEquals\0", bad2[] = "=v\0", buf[32];
	struct iscsi_text t = {.buf = buf, .cap = sizeof(buf)};

	(void)state;
	assert_int_equal(iscsi_text_next(&p, end, &k, &v), 1);
	assert_string_equal(k, "A");
	assert_string_equal(v, "1");
	assert_int_equal(iscsi_text_next(&p, end, &k, &v), 1);
	assert_string_equal(k, "B");
	assert_string_equal(v, "");
	assert_int_equal(iscsi_text_next(&p, end, &k, &v), 1);
	assert_string_equal(k, "C");
	assert_string_equal(v, "x=y");
	/* "D" has no '=' */
	assert_int_equal(iscsi_text_next(&p, end, &k, &v), -EPROTO);
	p = bad1;
	assert_int_equal(iscsi_text_next(&p, bad1 + 9, &k, &v), -EPROTO);
	p = bad2;
	assert_int_equal(iscsi_text_next(&p, bad2 + 3, &k, &v), -EPROTO);

	iscsi_text_add(&t, "Key", "Value");
	assert_int_equal(t.len, 10);
	assert_memory_equal(buf, "Key=Value\0", 10);
	iscsi_text_addf(&t, "N", "%u", 123456789u);
	assert_false(t.overflow);
	iscsi_text_add(&t, "TooLong", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	assert_true(t.overflow);
}

static void test_login_keys_once(void **state)
{
	static const char *const keys[] = {
		"InitiatorName", "TargetName", "SessionType", "InitiatorAlias",
		"AuthMethod",	 "CHAP_A",     "CHAP_I",      "CHAP_C",
		"CHAP_N",	 "CHAP_R",
	};
	uint32_t declared = 0;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		assert_int_equal(iscsi_login_key_declare(&declared, keys[i]),
				 1);
	/* RFC 7143 6.2: the second one is an initiator error */
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		assert_int_equal(iscsi_login_key_declare(&declared, keys[i]),
				 -EPROTO);
	/* operational keys are iscsi_neg_key()'s; others are not login keys */
	declared = 0;
	assert_int_equal(iscsi_login_key_declare(&declared, "HeaderDigest"), 0);
	assert_int_equal(iscsi_login_key_declare(&declared, "initiatorname"),
			 0);
	assert_int_equal(declared, 0);
}

static void test_names(void **state)
{
	char longname[300];

	(void)state;
	assert_true(cfg_iscsi_name_valid("iqn.2026-12.org.sdswarm:raw"));
	assert_true(cfg_iscsi_name_valid("iqn.1993-08.org.debian:01:1a2b3c"));
	assert_true(cfg_iscsi_name_valid("iqn.2001-04.com.example"));
	assert_true(cfg_iscsi_name_valid("eui.02004567a425678d"));
	assert_true(cfg_iscsi_name_valid("naa.52004567ba64678d"));
	assert_true(
		cfg_iscsi_name_valid("naa.62004567ba64678d0123456789abcdef"));
	assert_false(cfg_iscsi_name_valid(""));
	assert_false(cfg_iscsi_name_valid("iqn."));
	assert_false(cfg_iscsi_name_valid("iqn.2026-12."));
	assert_false(cfg_iscsi_name_valid("iqn.26-12.org.x"));
	assert_false(cfg_iscsi_name_valid("iqn.2026-12.org.x\nforged"));
	assert_false(cfg_iscsi_name_valid("iqn.2026-12.org.x\x1b[31m"));
	assert_false(cfg_iscsi_name_valid("iqn.2026-12.org.x y"));
	assert_false(cfg_iscsi_name_valid("iqn.2026-12.org.X"));
	assert_false(cfg_iscsi_name_valid("eui.02004567a425678"));
	assert_false(cfg_iscsi_name_valid("eui.02004567a425678g"));
	assert_false(cfg_iscsi_name_valid("naa.52004567ba64678d01"));
	assert_false(cfg_iscsi_name_valid("host.example.com"));
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "iqn.2026-12.org.x:", 18);
	longname[224] = '\0';
	assert_false(cfg_iscsi_name_valid(longname));
	longname[223] = '\0';
	assert_true(cfg_iscsi_name_valid(longname));
}

static void test_log_escape(void **state)
{
	char out[40], tiny[12];

	(void)state;
	assert_string_equal(iscsi_log_escape("iqn.x", out, sizeof(out)),
			    "iqn.x");
	assert_string_equal(
		iscsi_log_escape("a\nb\x1b[2Jc\\", out, sizeof(out)),
		"a\\x0ab\\x1b[2Jc\\x5c");
	assert_string_equal(iscsi_log_escape("\xc3\xa9\r", out, sizeof(out)),
			    "\\xc3\\xa9\\x0d");
	/* cut, never a half escape */
	assert_string_equal(
		iscsi_log_escape("abcdefghijklmnop", tiny, sizeof(tiny)),
		"abcdefg...");
	assert_string_equal(iscsi_log_escape("ab\n\n\n", tiny, sizeof(tiny)),
			    "ab\\x0a...");
	assert_null(strchr(out, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_digests),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_mrdsl_declared),
		cmocka_unit_test(test_first_burst_clamped),
		cmocka_unit_test(test_duplicate_is_error),
		cmocka_unit_test(test_phase_and_obsolete),
		cmocka_unit_test(test_not_mine_and_unknown),
		cmocka_unit_test(test_text_codec),
		cmocka_unit_test(test_login_keys_once),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_log_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
