// SPDX-License-Identifier: MIT
/*
 * The iSCSI PDU codec: CRC32C against RFC 3720 B.4's vectors (the digest
 * RFC 7143 13.1 keeps), digest byte order, the receive parser over every
 * split of a PDU, digest and length errors, and CmdSN window arithmetic.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "frontend/iscsi/iscsi_i.h"

static void test_crc32c_vectors(void **state)
{
	static const uint8_t read10[48] = {
		0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
		0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t b[32];
	unsigned int i;
	uint32_t reg;

	(void)state;
	memset(b, 0, sizeof(b));
	assert_int_equal(iscsi_crc32c(b, 32), 0x8a9136aau);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(iscsi_crc32c(b, 32), 0x62a8ab43u);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(iscsi_crc32c(b, 32), 0x46dd794eu);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(iscsi_crc32c(b, 32), 0x113fdb5cu);
	assert_int_equal(iscsi_crc32c(read10, 48), 0xd9963a56u);
	/* in pieces, as the receive path computes it */
	reg = iscsi_crc32c_begin();
	reg = iscsi_crc32c_update(reg, read10, 7);
	reg = iscsi_crc32c_update(reg, read10 + 7, 41);
	assert_int_equal(iscsi_crc32c_finish(reg), 0xd9963a56u);
}

static void test_digest_byte_order(void **state)
{
	uint8_t p[4];

	(void)state;
	/* B.4 shows 32 zero bytes' CRC as the bytes aa 36 91 8a */
	iscsi_digest_put(p, 0x8a9136aau);
	assert_int_equal(p[0], 0xaa);
	assert_int_equal(p[1], 0x36);
	assert_int_equal(p[2], 0x91);
	assert_int_equal(p[3], 0x8a);
	assert_int_equal(iscsi_digest_get(p), 0x8a9136aau);
}

/* A NOP-Out with @dlen bytes of data, built as the target builds PDUs. */
static size_t make_pdu(uint8_t *out, uint32_t dlen, bool hd, bool dd)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0}, data[300];
	uint32_t i;

	bhs[0] = ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE;
	bhs[1] = ISCSI_FLAG_F;
	put_be32(bhs + 16, 0x1234);
	for (i = 0; i < dlen; i++)
		data[i] = (uint8_t)(i * 7);
	return iscsi_pdu_build(out, bhs, data, dlen, hd, dd);
}

/* Feeds @len bytes in pieces of @step; returns the data and a verdict. */
static int feed(struct iscsi_rx *rx, const uint8_t *in, size_t len,
		size_t step, uint8_t *dst)
{
	size_t off = 0, used, n;
	int ret = ISCSI_RX_MORE;

	while (off < len) {
		n = len - off < step ? len - off : step;
		ret = iscsi_rx_feed(rx, in + off, n, &used);
		if (ret < 0)
			return ret;
		off += used;
		if (ret == ISCSI_RX_HEADER) {
			rx->dst = dst;
			ret = iscsi_rx_feed(rx, NULL, 0, &used);
		}
		if (ret == ISCSI_RX_PDU)
			return off == len ? ret : -EFBIG;
	}
	return ret;
}

static void test_rx_every_split(void **state)
{
	uint8_t pdu[512], dst[300];
	unsigned int dlens[] = {0, 1, 3, 4, 257};
	unsigned int i, step, j;
	struct iscsi_rx rx;
	size_t len;

	(void)state;
	for (i = 0; i < 5; i++) {
		for (j = 0; j < 4; j++) {
			bool hd = j & 1, dd = j & 2;

			len = make_pdu(pdu, dlens[i], hd, dd);
			assert_int_equal(len, iscsi_pdu_size(dlens[i], hd, dd));
			for (step = 1; step <= len; step += 13) {
				iscsi_rx_init(&rx, 8192);
				rx.hdigest = hd;
				rx.ddigest = dd;
				memset(dst, 0, sizeof(dst));
				assert_int_equal(feed(&rx, pdu, len, step, dst),
						 ISCSI_RX_PDU);
				assert_int_equal(rx.data_len, dlens[i]);
				assert_int_equal(iscsi_bhs_itt(rx.bhs), 0x1234);
				if (dlens[i])
					assert_int_equal(dst[dlens[i] - 1],
							 (uint8_t)((dlens[i] - 1) *
								   7));
			}
		}
	}
}

static void test_rx_back_to_back(void **state)
{
	uint8_t two[1024], dst[300];
	struct iscsi_rx rx;
	size_t a, b, used;
	int ret;

	(void)state;
	a = make_pdu(two, 5, false, false);
	b = make_pdu(two + a, 9, false, false);
	iscsi_rx_init(&rx, 8192);
	ret = iscsi_rx_feed(&rx, two, a + b, &used);
	assert_int_equal(ret, ISCSI_RX_HEADER);
	rx.dst = dst;
	ret = iscsi_rx_feed(&rx, two + used, a + b - used, &used);
	assert_int_equal(ret, ISCSI_RX_PDU);
	assert_int_equal(rx.data_len, 5);
	/* the second starts where the first ended */
	assert_int_equal(feed(&rx, two + a, b, b, dst), ISCSI_RX_PDU);
	assert_int_equal(rx.data_len, 9);
}

static void test_rx_errors(void **state)
{
	uint8_t pdu[512], dst[300];
	struct iscsi_rx rx;
	size_t len;

	(void)state;
	/* a flipped header bit: the header digest no longer matches */
	len = make_pdu(pdu, 16, true, true);
	pdu[17] ^= 1;
	iscsi_rx_init(&rx, 8192);
	rx.hdigest = rx.ddigest = true;
	assert_int_equal(feed(&rx, pdu, len, len, dst), -EBADMSG);

	/* a flipped data bit: the data digest */
	len = make_pdu(pdu, 16, true, true);
	pdu[48 + 4 + 3] ^= 0x80;
	iscsi_rx_init(&rx, 8192);
	rx.hdigest = rx.ddigest = true;
	assert_int_equal(feed(&rx, pdu, len, 7, dst), -EILSEQ);

	/* a data segment past MaxRecvDataSegmentLength */
	len = make_pdu(pdu, 257, false, false);
	iscsi_rx_init(&rx, 256);
	assert_int_equal(feed(&rx, pdu, len, len, dst), -EMSGSIZE);
}

static void test_pdu_build_padding(void **state)
{
	uint8_t out[128], bhs[ISCSI_BHS_LEN] = {0};
	size_t n;

	(void)state;
	n = iscsi_pdu_build(out, bhs, "abcde", 5, false, false);
	assert_int_equal(n, 48 + 8);
	assert_int_equal(iscsi_bhs_data_len(out), 5);
	assert_memory_equal(out + 48, "abcde\0\0\0", 8);
	n = iscsi_pdu_build(out, bhs, "abcde", 5, true, true);
	assert_int_equal(n, 48 + 4 + 8 + 4);
	assert_int_equal(iscsi_digest_get(out + 48),
			 iscsi_crc32c(out, 48));
	/* the data digest covers the padding too */
	assert_int_equal(iscsi_digest_get(out + 60),
			 iscsi_crc32c(out + 52, 8));
}

static void test_cmdsn_window(void **state)
{
	(void)state;
	assert_int_equal(iscsi_cmdsn_check(10, 10, 20), ISCSI_SN_EXPECTED);
	assert_int_equal(iscsi_cmdsn_check(15, 10, 20), ISCSI_SN_AHEAD);
	assert_int_equal(iscsi_cmdsn_check(20, 10, 20), ISCSI_SN_AHEAD);
	assert_int_equal(iscsi_cmdsn_check(21, 10, 20), ISCSI_SN_OUTSIDE);
	assert_int_equal(iscsi_cmdsn_check(9, 10, 20), ISCSI_SN_OUTSIDE);
	/* an empty window (MaxCmdSN = ExpCmdSN - 1) takes nothing */
	assert_int_equal(iscsi_cmdsn_check(10, 10, 9), ISCSI_SN_OUTSIDE);
	/* across the 2^32 wrap */
	assert_int_equal(iscsi_cmdsn_check(0xfffffffeu, 0xfffffffeu, 5),
			 ISCSI_SN_EXPECTED);
	assert_int_equal(iscsi_cmdsn_check(2, 0xfffffffeu, 5), ISCSI_SN_AHEAD);
	assert_int_equal(iscsi_cmdsn_check(6, 0xfffffffeu, 5),
			 ISCSI_SN_OUTSIDE);
	assert_int_equal(iscsi_cmdsn_check(0xfffffffdu, 0xfffffffeu, 5),
			 ISCSI_SN_OUTSIDE);
	assert_true(iscsi_sn_lt(0xffffffffu, 0));
	assert_false(iscsi_sn_lt(0, 0xffffffffu));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_digest_byte_order),
		cmocka_unit_test(test_rx_every_split),
		cmocka_unit_test(test_rx_back_to_back),
		cmocka_unit_test(test_rx_errors),
		cmocka_unit_test(test_pdu_build_padding),
		cmocka_unit_test(test_cmdsn_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
