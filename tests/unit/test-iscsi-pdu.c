// SPDX-License-Identifier: MIT
/*
 * The iSCSI PDU codec: CRC32C against RFC 3720 B.4's vectors (the digest
 * RFC 7143 13.1 keeps), digest byte order, the receive parser over every
 * split of a PDU, digest and length errors, CmdSN window arithmetic, and
 * every PDU kind's header built through the BHS accessors against the
 * bytes at RFC 7143 11's offsets.
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
		0x01, 0xc0, 0, 0,    0,	   0, 0, 0,    0,    0, 0,    0,
		0,    0,    0, 0,    0x14, 0, 0, 0,    0,    0, 0x04, 0,
		0,    0,    0, 0x14, 0,	   0, 0, 0x18, 0x28, 0, 0,    0,
		0,    0,    0, 0,    0x02, 0, 0, 0,    0,    0, 0,    0,
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

	iscsi_bhs_set_opcode(bhs, ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_itt(bhs, 0x1234);
	for (i = 0; i < dlen; i++)
		data[i] = (uint8_t)(i * 7);
	return iscsi_pdu_build(out, bhs, data, dlen, hd, dd);
}

/* Feeds @len bytes in pieces of @step; returns the data and a verdict. */
static int feed(struct iscsi_rx *rx, const uint8_t *in, size_t len, size_t step,
		uint8_t *dst)
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
					assert_int_equal(
						dst[dlens[i] - 1],
						(uint8_t)((dlens[i] - 1) * 7));
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
	assert_int_equal(iscsi_digest_get(out + 48), iscsi_crc32c(out, 48));
	/* the data digest covers the padding too */
	assert_int_equal(iscsi_digest_get(out + 60), iscsi_crc32c(out + 52, 8));
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

/*
 * Every PDU kind's header through the accessors, against the bytes RFC
 * 7143 11 draws, four to a row. Each field gets a value whose bytes say
 * where they belong: W(0x11) is 0x11 0x12 0x13 0x14, the value
 * 0x11121314; the LUN is a0..a7, the CDB c0..cf, the ISID 90..95.
 * The tables keep the RFC's rows: clang-format is fenced off them.
 */
#define W(x) (x), (x) + 1, (x) + 2, (x) + 3
#define LUN_BYTES 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7
#define ZERO4 0, 0, 0, 0

static const uint8_t lun[ISCSI_LUN_LEN] = {LUN_BYTES};
static const uint8_t isid[ISCSI_ISID_LEN] = {0x90, 0x91, 0x92,
					     0x93, 0x94, 0x95};

/* A target's response: StatSN, ExpCmdSN, MaxCmdSN at 24, 28, 32. */
static void set_sns(uint8_t *bhs)
{
	iscsi_bhs_set_statsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_cmdsn(bhs, 0x41424344);
	iscsi_bhs_set_max_cmdsn(bhs, 0x51525354);
}

static void check_sns(const uint8_t *bhs)
{
	assert_int_equal(iscsi_bhs_statsn(bhs), 0x31323334);
	assert_int_equal(iscsi_bhs_exp_cmdsn(bhs), 0x41424344);
	assert_int_equal(iscsi_bhs_max_cmdsn(bhs), 0x51525354);
}

/* 11.3 */
static void test_bhs_scsi_cmd(void **state)
{
	/* clang-format off */
	static const uint8_t want[ISCSI_BHS_LEN] = {
		0x41, 0xa1, 0, 0,     0x02, 0x0a, 0x0b, 0x0c,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0xc0),              W(0xc4),
		W(0xc8),              W(0xcc),
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0}, cdb[ISCSI_BHS_CDB_LEN];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cdb); i++)
		cdb[i] = (uint8_t)(0xc0 + i);
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_SCSI_CMD | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F | ISCSI_CMD_W | 1);
	iscsi_bhs_set_ahs_len(bhs, 8);
	iscsi_bhs_set_data_len(bhs, 0x0a0b0c);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_edtl(bhs, 0x21222324);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	iscsi_bhs_set_cdb(bhs, cdb);
	assert_memory_equal(bhs, want, ISCSI_BHS_LEN);

	assert_int_equal(iscsi_bhs_opcode(bhs), ISCSI_OP_SCSI_CMD);
	assert_true(iscsi_bhs_immediate(bhs));
	assert_int_equal(iscsi_bhs_flags(bhs), 0xa1);
	assert_int_equal(iscsi_bhs_ahs_len(bhs), 8);
	assert_int_equal(iscsi_bhs_data_len(bhs), 0x0a0b0c);
	assert_memory_equal(iscsi_bhs_lun(bhs), lun, ISCSI_LUN_LEN);
	assert_int_equal(iscsi_bhs_itt(bhs), 0x11121314);
	assert_int_equal(iscsi_bhs_edtl(bhs), 0x21222324);
	assert_int_equal(iscsi_bhs_cmdsn(bhs), 0x31323334);
	assert_int_equal(iscsi_bhs_exp_statsn(bhs), 0x41424344);
	assert_memory_equal(iscsi_bhs_cdb(bhs), cdb, ISCSI_BHS_CDB_LEN);
}

/* 11.4 */
static void test_bhs_scsi_rsp(void **state)
{
	/* clang-format off */
	static const uint8_t want[ISCSI_BHS_LEN] = {
		0x21, 0x82, 0x01, 0x02, 0, 0, 0, 0,
		ZERO4,                ZERO4,
		W(0x11),              ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              W(0x61),
		W(0x71),              W(0x81),
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_SCSI_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F | ISCSI_RES_U);
	iscsi_bhs_set_response(bhs, 0x01);
	iscsi_bhs_set_status(bhs, 0x02);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	set_sns(bhs);
	iscsi_bhs_set_exp_datasn(bhs, 0x61626364);
	iscsi_bhs_set_bidi_residual_count(bhs, 0x71727374);
	iscsi_bhs_set_residual_count(bhs, 0x81828384);
	assert_memory_equal(bhs, want, ISCSI_BHS_LEN);

	assert_int_equal(iscsi_bhs_opcode(bhs), ISCSI_OP_SCSI_RSP);
	assert_false(iscsi_bhs_immediate(bhs));
	assert_int_equal(iscsi_bhs_response(bhs), 0x01);
	assert_int_equal(iscsi_bhs_status(bhs), 0x02);
	check_sns(bhs);
	assert_int_equal(iscsi_bhs_exp_datasn(bhs), 0x61626364);
	assert_int_equal(iscsi_bhs_bidi_residual_count(bhs), 0x71727374);
	assert_int_equal(iscsi_bhs_residual_count(bhs), 0x81828384);
}

/* 11.5 and 11.6 */
static void test_bhs_tmf(void **state)
{
	/* clang-format off */
	static const uint8_t want_req[ISCSI_BHS_LEN] = {
		0x42, 0x85, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0x51),              W(0x61),
		ZERO4,                ZERO4,
	};
	static const uint8_t want_rsp[ISCSI_BHS_LEN] = {
		0x22, 0x80, 0x02, 0,  0, 0, 0, 0,
		ZERO4,                ZERO4,
		W(0x11),              ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              ZERO4,
		ZERO4,                ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TMF_REQ | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_function(bhs, ISCSI_TMF_LUN_RESET);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_rtt(bhs, 0x21222324);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	iscsi_bhs_set_ref_cmdsn(bhs, 0x51525354);
	iscsi_bhs_set_exp_datasn(bhs, 0x61626364);
	assert_memory_equal(bhs, want_req, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_function(bhs), ISCSI_TMF_LUN_RESET);
	assert_int_equal(iscsi_bhs_rtt(bhs), 0x21222324);
	assert_int_equal(iscsi_bhs_ref_cmdsn(bhs), 0x51525354);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TMF_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_response(bhs, ISCSI_TMF_RSP_NO_LUN);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	set_sns(bhs);
	assert_memory_equal(bhs, want_rsp, ISCSI_BHS_LEN);
	check_sns(bhs);
}

/* 11.7 and 11.8 */
static void test_bhs_data(void **state)
{
	/* clang-format off */
	static const uint8_t want_out[ISCSI_BHS_LEN] = {
		0x05, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		ZERO4,                W(0x41),
		ZERO4,                W(0x61),
		W(0x71),              ZERO4,
	};
	static const uint8_t want_in[ISCSI_BHS_LEN] = {
		0x25, 0x83, 0, 0x02,  0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0x51),              W(0x61),
		W(0x71),              W(0x81),
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_DATA_OUT);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	iscsi_bhs_set_datasn(bhs, 0x61626364);
	iscsi_bhs_set_buffer_offset(bhs, 0x71727374);
	assert_memory_equal(bhs, want_out, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_ttt(bhs), 0x21222324);
	assert_int_equal(iscsi_bhs_datasn(bhs), 0x61626364);
	assert_int_equal(iscsi_bhs_buffer_offset(bhs), 0x71727374);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_DATA_IN);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F | ISCSI_RES_U | ISCSI_DATA_S);
	iscsi_bhs_set_status(bhs, 0x02);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	set_sns(bhs);
	iscsi_bhs_set_datasn(bhs, 0x61626364);
	iscsi_bhs_set_buffer_offset(bhs, 0x71727374);
	iscsi_bhs_set_residual_count(bhs, 0x81828384);
	assert_memory_equal(bhs, want_in, ISCSI_BHS_LEN);
}

/* 11.8 and 11.9 */
static void test_bhs_r2t_async(void **state)
{
	/* clang-format off */
	static const uint8_t want_r2t[ISCSI_BHS_LEN] = {
		0x31, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0x51),              W(0x61),
		W(0x71),              W(0x81),
	};
	static const uint8_t want_async[ISCSI_BHS_LEN] = {
		0x32, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		0xff, 0xff, 0xff, 0xff, ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              0x03, 0x07, 0, 0,
		ZERO4,                ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_R2T);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	set_sns(bhs);
	iscsi_bhs_set_r2tsn(bhs, 0x61626364);
	iscsi_bhs_set_buffer_offset(bhs, 0x71727374);
	iscsi_bhs_set_desired_dtl(bhs, 0x81828384);
	assert_memory_equal(bhs, want_r2t, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_r2tsn(bhs), 0x61626364);
	assert_int_equal(iscsi_bhs_desired_dtl(bhs), 0x81828384);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_ASYNC);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, ISCSI_RSVD_TAG);
	set_sns(bhs);
	iscsi_bhs_set_async_event(bhs, 0x03);
	iscsi_bhs_set_async_vcode(bhs, 0x07);
	assert_memory_equal(bhs, want_async, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_async_event(bhs), 0x03);
	assert_int_equal(iscsi_bhs_async_vcode(bhs), 0x07);
}

/* 11.10 and 11.11 */
static void test_bhs_text(void **state)
{
	/* clang-format off */
	static const uint8_t want_req[ISCSI_BHS_LEN] = {
		0x44, 0x40, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		ZERO4,                ZERO4,
		ZERO4,                ZERO4,
	};
	static const uint8_t want_rsp[ISCSI_BHS_LEN] = {
		0x24, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0x51),              ZERO4,
		ZERO4,                ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TEXT_REQ | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_TEXT_C);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	assert_memory_equal(bhs, want_req, ISCSI_BHS_LEN);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TEXT_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	set_sns(bhs);
	assert_memory_equal(bhs, want_rsp, ISCSI_BHS_LEN);
}

/* 11.12 and 11.13 */
static void test_bhs_login(void **state)
{
	/* clang-format off */
	static const uint8_t want_req[ISCSI_BHS_LEN] = {
		0x43, 0x87, 0x02, 0x01, 0x01, 0, 0x01, 0x02,
		0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
		W(0x11),              0x21, 0x22, 0, 0,
		W(0x31),              W(0x41),
		ZERO4,                ZERO4,
		ZERO4,                ZERO4,
	};
	static const uint8_t want_rsp[ISCSI_BHS_LEN] = {
		0x23, 0x87, 0x02, 0x01, 0, 0, 0, 0,
		0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
		W(0x11),              ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              0x02, 0x01, 0, 0,
		ZERO4,                ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_LOGIN_T);
	iscsi_bhs_set_csg(bhs, ISCSI_STAGE_OPERATIONAL);
	iscsi_bhs_set_nsg(bhs, ISCSI_STAGE_FFP);
	iscsi_bhs_set_version_max(bhs, 0x02);
	iscsi_bhs_set_version_min(bhs, 0x01);
	iscsi_bhs_set_ahs_len(bhs, 4);
	iscsi_bhs_set_data_len(bhs, 0x102);
	iscsi_bhs_set_isid(bhs, isid);
	iscsi_bhs_set_tsih(bhs, 0x9697);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_cid(bhs, 0x2122);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	assert_memory_equal(bhs, want_req, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_csg(bhs), ISCSI_STAGE_OPERATIONAL);
	assert_int_equal(iscsi_bhs_nsg(bhs), ISCSI_STAGE_FFP);
	assert_true(iscsi_bhs_flags(bhs) & ISCSI_LOGIN_T);
	assert_false(iscsi_bhs_flags(bhs) & ISCSI_LOGIN_C);
	assert_int_equal(iscsi_bhs_version_max(bhs), 0x02);
	assert_int_equal(iscsi_bhs_version_min(bhs), 0x01);
	assert_memory_equal(iscsi_bhs_isid(bhs), isid, ISCSI_ISID_LEN);
	assert_int_equal(iscsi_bhs_tsih(bhs), 0x9697);
	assert_int_equal(iscsi_bhs_cid(bhs), 0x2122);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGIN_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_LOGIN_T);
	iscsi_bhs_set_csg(bhs, ISCSI_STAGE_OPERATIONAL);
	iscsi_bhs_set_nsg(bhs, ISCSI_STAGE_FFP);
	iscsi_bhs_set_version_max(bhs, 0x02);
	iscsi_bhs_set_version_active(bhs, 0x01);
	iscsi_bhs_set_isid(bhs, isid);
	iscsi_bhs_set_tsih(bhs, 0x9697);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	set_sns(bhs);
	iscsi_bhs_set_login_status(bhs, ISCSI_LOGIN_AUTH_FAILED);
	assert_memory_equal(bhs, want_rsp, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_version_active(bhs), 0x01);
	assert_int_equal(iscsi_bhs_login_status(bhs), ISCSI_LOGIN_AUTH_FAILED);
}

/* 11.14 and 11.15 */
static void test_bhs_logout(void **state)
{
	/* clang-format off */
	static const uint8_t want_req[ISCSI_BHS_LEN] = {
		0x46, 0x81, 0, 0,     0, 0, 0, 0,
		ZERO4,                ZERO4,
		W(0x11),              0x21, 0x22, 0, 0,
		W(0x31),              W(0x41),
		ZERO4,                ZERO4,
		ZERO4,                ZERO4,
	};
	static const uint8_t want_rsp[ISCSI_BHS_LEN] = {
		0x26, 0x80, 0x02, 0,  0, 0, 0, 0,
		ZERO4,                ZERO4,
		W(0x11),              ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              ZERO4,
		W(0x71),              ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGOUT_REQ | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_reason_code(bhs, 1);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_cid(bhs, 0x2122);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	assert_memory_equal(bhs, want_req, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_reason_code(bhs), 1);
	assert_int_equal(iscsi_bhs_flags(bhs) & ISCSI_FLAG_F, ISCSI_FLAG_F);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGOUT_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_response(bhs, 0x02);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	set_sns(bhs);
	iscsi_bhs_set_time2wait(bhs, 0x7172);
	iscsi_bhs_set_time2retain(bhs, 0x7374);
	assert_memory_equal(bhs, want_rsp, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_time2wait(bhs), 0x7172);
	assert_int_equal(iscsi_bhs_time2retain(bhs), 0x7374);
}

/* 11.17, 11.18 and 11.19 */
static void test_bhs_reject_nop(void **state)
{
	/* clang-format off */
	static const uint8_t want_reject[ISCSI_BHS_LEN] = {
		0x3f, 0x80, 0x09, 0,  0, 0, 0, 0,
		ZERO4,                ZERO4,
		0xff, 0xff, 0xff, 0xff, ZERO4,
		W(0x31),              W(0x41),
		W(0x51),              W(0x61),
		ZERO4,                ZERO4,
	};
	static const uint8_t want_out[ISCSI_BHS_LEN] = {
		0x40, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		ZERO4,                ZERO4,
		ZERO4,                ZERO4,
	};
	static const uint8_t want_in[ISCSI_BHS_LEN] = {
		0x20, 0x80, 0, 0,     0, 0, 0, 0,
		LUN_BYTES,
		W(0x11),              W(0x21),
		W(0x31),              W(0x41),
		W(0x51),              ZERO4,
		ZERO4,                ZERO4,
	};
	/* clang-format on */
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	(void)state;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_REJECT);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_reason(bhs, ISCSI_REJECT_INVALID_FIELD);
	iscsi_bhs_set_itt(bhs, ISCSI_RSVD_TAG);
	set_sns(bhs);
	iscsi_bhs_set_datasn(bhs, 0x61626364);
	assert_memory_equal(bhs, want_reject, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_reason(bhs), ISCSI_REJECT_INVALID_FIELD);

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	iscsi_bhs_set_cmdsn(bhs, 0x31323334);
	iscsi_bhs_set_exp_statsn(bhs, 0x41424344);
	assert_memory_equal(bhs, want_out, ISCSI_BHS_LEN);
	assert_int_equal(iscsi_bhs_opcode(bhs), ISCSI_OP_NOP_OUT);
	assert_true(iscsi_bhs_immediate(bhs));

	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_NOP_IN);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, lun);
	iscsi_bhs_set_itt(bhs, 0x11121314);
	iscsi_bhs_set_ttt(bhs, 0x21222324);
	set_sns(bhs);
	assert_memory_equal(bhs, want_in, ISCSI_BHS_LEN);
}

/* The fields that share byte 1 with flags change their own bits only. */
static void test_bhs_byte1_fields(void **state)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	(void)state;
	memset(bhs, 0xff, sizeof(bhs));
	iscsi_bhs_set_csg(bhs, 1);
	assert_int_equal(bhs[1], 0xf7);
	iscsi_bhs_set_nsg(bhs, 0);
	assert_int_equal(bhs[1], 0xf4);
	iscsi_bhs_set_csg(bhs, 7); /* two bits: the rest is cut */
	assert_int_equal(bhs[1], 0xfc);
	iscsi_bhs_set_function(bhs, ISCSI_TMF_ABORT_TASK);
	assert_int_equal(bhs[1], 0x81);
	iscsi_bhs_set_reason_code(bhs, 0xff);
	assert_int_equal(bhs[1], 0xff);
	assert_int_equal(iscsi_bhs_reason_code(bhs), 0x7f);
	/* and nothing else moved */
	assert_int_equal(bhs[0], 0xff);
	assert_int_equal(bhs[2], 0xff);
}

/* 11.2.2: an extended CDB AHS's header. */
static void test_ahs_header(void **state)
{
	static const uint8_t ahs[8] = {
		0x00, 0x05, ISCSI_AHS_EXT_CDB, 0, 0xd0, 0xd1, 0xd2, 0xd3};

	(void)state;
	assert_int_equal(iscsi_ahs_length(ahs), 5);
	assert_int_equal(iscsi_ahs_type(ahs), ISCSI_AHS_EXT_CDB);
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
		cmocka_unit_test(test_bhs_scsi_cmd),
		cmocka_unit_test(test_bhs_scsi_rsp),
		cmocka_unit_test(test_bhs_tmf),
		cmocka_unit_test(test_bhs_data),
		cmocka_unit_test(test_bhs_r2t_async),
		cmocka_unit_test(test_bhs_text),
		cmocka_unit_test(test_bhs_login),
		cmocka_unit_test(test_bhs_logout),
		cmocka_unit_test(test_bhs_reject_nop),
		cmocka_unit_test(test_bhs_byte1_fields),
		cmocka_unit_test(test_ahs_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
