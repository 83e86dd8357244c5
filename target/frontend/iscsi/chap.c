// SPDX-License-Identifier: MIT
/*
 * CHAP for iSCSI login (RFC 7143 12.1.3, RFC 1994): MD5 only (CHAP_A=5),
 * one-way and mutual, binary values in hex or base64. MD5 comes from
 * nettle; the challenge from getrandom(). Failed answers slow their source
 * address down (iscsi_auth_wait()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/md5.h>

#include "iscsi_i.h"
#include "parse.h"

void iscsi_chap_md5(uint8_t id, const void *secret, size_t slen,
		    const uint8_t *challenge, size_t clen, uint8_t *out)
{
	struct md5_ctx ctx;

	md5_init(&ctx);
	md5_update(&ctx, 1, &id);
	md5_update(&ctx, slen, secret);
	md5_update(&ctx, clen, challenge);
	md5_digest(&ctx, MD5_DIGEST_SIZE, out);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Hex digits, an odd count taking a leading zero (RFC 7143 6.1). */
static int decode_hex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s), i, o = 0;
	int hi, lo;

	if (!n)
		return -EINVAL;
	if ((n + 1) / 2 > cap)
		return -E2BIG;
	i = 0;
	if (n & 1) {
		lo = hexval(s[0]);
		if (lo < 0)
			return -EINVAL;
		out[o++] = (uint8_t)lo;
		i = 1;
	}
	for (; i < n; i += 2) {
		hi = hexval(s[i]);
		lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[o++] = (uint8_t)(hi << 4 | lo);
	}
	return (int)o;
}

/* Base64 with '=' padding to a multiple of four characters. */
static int decode_b64(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s), i, o = 0;
	unsigned int acc = 0;
	int bits = 0, v, pads = 0;

	if (!n || n % 4)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] == '=') {
			/* only at the end, at most two */
			if (i < n - 2 || (i == n - 2 && s[n - 1] != '='))
				return -EINVAL;
			pads++;
			continue;
		}
		v = b64val(s[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -E2BIG;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	(void)pads;
	return o ? (int)o : -EINVAL;
}

int iscsi_chap_decode(const char *text, uint8_t *out, size_t cap)
{
	if (text[0] != '0')
		return -EINVAL;
	if (text[1] == 'x' || text[1] == 'X')
		return decode_hex(text + 2, out, cap);
	if (text[1] == 'b' || text[1] == 'B')
		return decode_b64(text + 2, out, cap);
	return -EINVAL;
}

int iscsi_chap_encode(const uint8_t *in, size_t len, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (cap < 3 + 2 * len)
		return -ENOSPC;
	out[0] = '0';
	out[1] = 'x';
	for (i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[in[i] >> 4];
		out[3 + 2 * i] = digits[in[i] & 15];
	}
	out[2 + 2 * len] = '\0';
	return (int)(2 + 2 * len);
}

int iscsi_chap_challenge(struct iscsi_chap *ch, struct iscsi_text *out)
{
	char hex[3 + 2 * ISCSI_CHAP_CHALLENGE_LEN];
	uint8_t id;
	ssize_t n;

	n = getrandom(ch->challenge, sizeof(ch->challenge), 0);
	if (n != (ssize_t)sizeof(ch->challenge))
		return n < 0 ? -errno : -EIO;
	if (getrandom(&id, 1, 0) != 1)
		return -EIO;
	ch->id = id;
	iscsi_chap_encode(ch->challenge, sizeof(ch->challenge), hex,
			  sizeof(hex));
	iscsi_text_addf(out, "CHAP_A", "%d", ISCSI_CHAP_MD5);
	iscsi_text_addf(out, "CHAP_I", "%u", id);
	iscsi_text_add(out, "CHAP_C", hex);
	ch->state = ISCSI_CHAP_WANT_R;
	return 0;
}

/* Constant-time compare: a response check should not leak where it fails. */
static bool same(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return !d;
}

int iscsi_chap_check(struct iscsi_chap *ch, const struct cfg_iscsi *icfg,
		     const char *name, const char *response, const char *mid,
		     const char *mchallenge, struct iscsi_text *out)
{
	uint8_t got[ISCSI_CHAP_BIN_MAX], want[ISCSI_CHAP_DIGEST_LEN];
	uint8_t mch[ISCSI_CHAP_BIN_MAX];
	char hex[3 + 2 * ISCSI_CHAP_DIGEST_LEN];
	uint32_t idv;
	uint8_t id;
	int n, m;

	if (ch->state != ISCSI_CHAP_WANT_R || !name || !response)
		return -EINVAL;
	n = iscsi_chap_decode(response, got, sizeof(got));
	if (n < 0)
		return -EINVAL;
	if (strcmp(name, icfg->chap_user) != 0)
		return -EACCES;
	iscsi_chap_md5(ch->id, icfg->chap_secret, strlen(icfg->chap_secret),
		       ch->challenge, sizeof(ch->challenge), want);
	if (n != ISCSI_CHAP_DIGEST_LEN || !same(got, want, sizeof(want)))
		return -EACCES;
	ch->state = ISCSI_CHAP_DONE;
	if (!mid && !mchallenge)
		return 0;
	/* mutual CHAP: the initiator authenticates the target */
	if (!mid || !mchallenge)
		return -EINVAL;
	if (!icfg->mutual_user[0])
		return -EACCES;
	/* CHAP_I: 0..255, decimal or 0x hex as every iSCSI number */
	if (parse_u32(mid, 0, 255, &idv))
		return -EINVAL;
	id = (uint8_t)idv;
	m = iscsi_chap_decode(mchallenge, mch, sizeof(mch));
	if (m < 0)
		return -EINVAL;
	/* a challenge equal to ours is a reflection attack (12.1.3) */
	if ((size_t)m == sizeof(ch->challenge) &&
	    !memcmp(mch, ch->challenge, sizeof(ch->challenge)))
		return -EACCES;
	iscsi_chap_md5(id, icfg->mutual_secret, strlen(icfg->mutual_secret),
		       mch, (size_t)m, want);
	iscsi_chap_encode(want, sizeof(want), hex, sizeof(hex));
	iscsi_text_add(out, "CHAP_N", icfg->mutual_user);
	iscsi_text_add(out, "CHAP_R", hex);
	return 0;
}

/* ---- throttling failed answers ------------------------------------------- */

static struct iscsi_auth_slot *auth_slot(struct iscsi_auth_throttle *t,
					 const uint8_t *addr)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	unsigned int k;

	for (k = 0; k < 16; k++)
		h = (h ^ addr[k]) * 16777619u;
	return &t->v[h % ISCSI_AUTH_SLOTS];
}

unsigned int iscsi_auth_wait(struct iscsi_auth_throttle *t, const uint8_t *addr,
			     uint64_t now)
{
	struct iscsi_auth_slot *e;
	unsigned int left = 0;

	pthread_mutex_lock(&t->lock);
	e = auth_slot(t, addr);
	if (e->fails && !memcmp(e->addr, addr, 16) && now < e->until_ns)
		left = (unsigned int)((e->until_ns - now + 999999999ull) /
				      1000000000ull);
	pthread_mutex_unlock(&t->lock);
	return left;
}

unsigned int iscsi_auth_result(struct iscsi_auth_throttle *t,
			       const uint8_t *addr, bool ok, uint64_t now)
{
	struct iscsi_auth_slot *e;
	unsigned int delay = 0;

	pthread_mutex_lock(&t->lock);
	e = auth_slot(t, addr);
	if (memcmp(e->addr, addr, 16) ||
	    now - e->last_ns > ISCSI_AUTH_FORGET_S * 1000000000ull)
		e->fails = 0; /* another address's slot, or long ago */
	if (ok) {
		if (!memcmp(e->addr, addr, 16))
			e->fails = 0;
	} else {
		memcpy(e->addr, addr, 16);
		if (e->fails < 32)
			e->fails++;
		if (e->fails <= ISCSI_AUTH_FREE)
			delay = 0;
		else if (e->fails - ISCSI_AUTH_FREE > 5)
			delay = ISCSI_AUTH_DELAY_MAX;
		else
			delay = 1u << (e->fails - ISCSI_AUTH_FREE - 1);
		if (delay > ISCSI_AUTH_DELAY_MAX)
			delay = ISCSI_AUTH_DELAY_MAX;
		e->last_ns = now;
		e->until_ns = now + delay * 1000000000ull;
	}
	pthread_mutex_unlock(&t->lock);
	return delay;
}
