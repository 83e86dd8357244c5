// SPDX-License-Identifier: MIT
/*
 * The PDU codec: CRC32C digests over isa-l, the incremental receive
 * parser that cuts PDUs out of a byte stream (BHS, AHS, header digest,
 * data, padding, data digest), PDU assembly for transmit, and CmdSN window
 * arithmetic.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "iscsi_i.h"

/*
 * isa-l's crc32_iscsi() is the bare register update: the caller seeds it
 * with all ones and complements the result, as RFC 3720 B.4's vectors
 * (32 zero bytes -> 0x8a9136aa) confirm in tests/unit/test-iscsi-pdu.c.
 */
uint32_t iscsi_crc32c_begin(void)
{
	return 0xffffffffu;
}

uint32_t iscsi_crc32c_update(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* its length is an int: feed huge buffers in pieces */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;

		reg = crc32_iscsi((unsigned char *)p, (int)n, reg);
		p += n;
		len -= n;
	}
	return reg;
}

uint32_t iscsi_crc32c_finish(uint32_t reg)
{
	return reg ^ 0xffffffffu;
}

uint32_t iscsi_crc32c(const void *buf, size_t len)
{
	return iscsi_crc32c_finish(
		iscsi_crc32c_update(iscsi_crc32c_begin(), buf, len));
}

void iscsi_digest_put(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

uint32_t iscsi_digest_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void iscsi_rx_init(struct iscsi_rx *rx, uint32_t max_data)
{
	memset(rx, 0, sizeof(*rx));
	rx->max_data = max_data;
	rx->part = ISCSI_RX_BHS;
	rx->need = ISCSI_BHS_LEN;
}

/* Moves to the next part with bytes, skipping empty ones. */
static void rx_next(struct iscsi_rx *rx)
{
	rx->got = 0;
	for (;;) {
		rx->part++;
		switch (rx->part) {
		case ISCSI_RX_AHS:
			rx->need = rx->ahs_len;
			break;
		case ISCSI_RX_HDIGEST:
			rx->need = rx->hdigest ? ISCSI_DIGEST_LEN : 0;
			break;
		case ISCSI_RX_HEADER_DONE:
			rx->need = 0;
			return;
		case ISCSI_RX_DATA:
			rx->need = rx->data_len;
			break;
		case ISCSI_RX_PAD:
			rx->need = iscsi_pad(rx->data_len);
			break;
		case ISCSI_RX_DDIGEST:
			rx->need = rx->ddigest && rx->data_len
					   ? ISCSI_DIGEST_LEN
					   : 0;
			break;
		default:
			rx->need = 0;
			return;
		}
		if (rx->need)
			return;
	}
}

/* A part is complete: check what can be checked. */
static int rx_part_done(struct iscsi_rx *rx)
{
	uint32_t crc;

	switch (rx->part) {
	case ISCSI_RX_BHS:
		rx->ahs_len = iscsi_bhs_ahs_len(rx->bhs);
		rx->data_len = iscsi_bhs_data_len(rx->bhs);
		break;
	case ISCSI_RX_HDIGEST:
		crc = iscsi_crc32c_update(iscsi_crc32c_begin(), rx->bhs,
					  ISCSI_BHS_LEN);
		crc = iscsi_crc32c_finish(
			iscsi_crc32c_update(crc, rx->ahs, rx->ahs_len));
		if (crc != iscsi_digest_get(rx->digest))
			return -EBADMSG;
		break;
	case ISCSI_RX_DDIGEST:
		if (iscsi_crc32c_finish(rx->crc) !=
		    iscsi_digest_get(rx->digest))
			return -EILSEQ;
		break;
	default:
		break;
	}
	return 0;
}

int iscsi_rx_feed(struct iscsi_rx *rx, const uint8_t *in, size_t len,
		  size_t *used)
{
	size_t off = 0;
	int ret;

	if (rx->part == ISCSI_RX_HEADER_DONE) {
		/* the caller has set dst: on to the data */
		rx->crc = iscsi_crc32c_begin();
		rx_next(rx);
		if (rx->part > ISCSI_RX_DDIGEST)
			goto pdu_done;
	} else if (rx->part > ISCSI_RX_DDIGEST) {
		/* the next PDU: no memset of the 1 KiB AHS area per PDU */
		rx->part = ISCSI_RX_BHS;
		rx->need = ISCSI_BHS_LEN;
		rx->got = 0;
		rx->dst = NULL;
	}
	while (off < len) {
		uint32_t n = rx->need - rx->got;
		uint8_t *to = NULL;

		if (n > len - off)
			n = (uint32_t)(len - off);
		switch (rx->part) {
		case ISCSI_RX_BHS:
			to = rx->bhs + rx->got;
			break;
		case ISCSI_RX_AHS:
			to = rx->ahs + rx->got;
			break;
		case ISCSI_RX_HDIGEST:
		case ISCSI_RX_DDIGEST:
			to = rx->digest + rx->got;
			break;
		case ISCSI_RX_DATA:
			if (rx->dst)
				to = rx->dst + rx->got;
			if (rx->ddigest)
				rx->crc = iscsi_crc32c_update(rx->crc, in + off,
							      n);
			break;
		case ISCSI_RX_PAD:
			to = rx->pad + rx->got;
			if (rx->ddigest)
				rx->crc = iscsi_crc32c_update(rx->crc, in + off,
							      n);
			break;
		default:
			break;
		}
		if (to)
			memcpy(to, in + off, n);
		rx->got += n;
		off += n;
		if (rx->got < rx->need)
			break;
		ret = rx_part_done(rx);
		if (ret == -EILSEQ) {
			*used = off;
			rx->part = ISCSI_RX_DDIGEST + 1;
			return ret;
		}
		if (ret) {
			*used = off;
			return ret;
		}
		if (rx->part == ISCSI_RX_BHS && rx->data_len > rx->max_data) {
			*used = off;
			return -EMSGSIZE;
		}
		rx_next(rx);
		if (rx->part == ISCSI_RX_HEADER_DONE) {
			rx->dst = NULL;
			*used = off;
			return ISCSI_RX_HEADER;
		}
		if (rx->part > ISCSI_RX_DDIGEST) {
			*used = off;
			return ISCSI_RX_PDU;
		}
	}
	*used = off;
	return ISCSI_RX_MORE;

pdu_done:
	*used = 0;
	return ISCSI_RX_PDU;
}

size_t iscsi_pdu_size(uint32_t dlen, bool hdigest, bool ddigest)
{
	size_t n = ISCSI_BHS_LEN + (hdigest ? ISCSI_DIGEST_LEN : 0);

	if (dlen)
		n += dlen + iscsi_pad(dlen) + (ddigest ? ISCSI_DIGEST_LEN : 0);
	return n;
}

size_t iscsi_pdu_build(uint8_t *out, uint8_t *bhs, const void *data,
		       uint32_t dlen, bool hdigest, bool ddigest)
{
	size_t n = ISCSI_BHS_LEN;
	uint32_t pad = iscsi_pad(dlen);

	iscsi_bhs_set_data_len(bhs, dlen);
	memcpy(out, bhs, ISCSI_BHS_LEN);
	if (hdigest) {
		iscsi_digest_put(out + n, iscsi_crc32c(bhs, ISCSI_BHS_LEN));
		n += ISCSI_DIGEST_LEN;
	}
	if (!dlen)
		return n;
	if (out + n != data)
		memcpy(out + n, data, dlen);
	n += dlen;
	memset(out + n, 0, pad);
	n += pad;
	if (ddigest) {
		iscsi_digest_put(out + n, iscsi_crc32c(out + n - dlen - pad,
						       dlen + pad));
		n += ISCSI_DIGEST_LEN;
	}
	return n;
}

enum iscsi_sn_verdict iscsi_cmdsn_check(uint32_t cmdsn, uint32_t exp,
					uint32_t max)
{
	if (cmdsn == exp && iscsi_sn_le(exp, max))
		return ISCSI_SN_EXPECTED;
	if (iscsi_sn_lt(exp, cmdsn) && iscsi_sn_le(cmdsn, max))
		return ISCSI_SN_AHEAD;
	return ISCSI_SN_OUTSIDE;
}
