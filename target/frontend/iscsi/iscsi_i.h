/* SPDX-License-Identifier: MIT */
/*
 * Inside the iSCSI front end: the PDU codec (pdu.c), text negotiation and
 * the login state machine (login.c), CHAP (chap.c), the session registry
 * (session.c), the per-connection protocol engine (conn.c) and the worker
 * loops (loop.c). Nothing outside target/frontend/iscsi includes this.
 */
#ifndef SDSWARM_ISCSI_I_H
#define SDSWARM_ISCSI_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bhs_i.h"
#include "bytes.h"
#include "config.h"
#include "scsi/scsi.h"

/* ---- RFC 7143 constants ------------------------------------------------ */

#define ISCSI_DIGEST_LEN 4
#define ISCSI_RSVD_TAG 0xffffffffu
#define ISCSI_AHS_MAX 1020 /* TotalAHSLength is 8 bits of 4-byte words */

/* Initiator opcodes (RFC 7143 11.1.1). */
#define ISCSI_OP_NOP_OUT 0x00
#define ISCSI_OP_SCSI_CMD 0x01
#define ISCSI_OP_TMF_REQ 0x02
#define ISCSI_OP_LOGIN_REQ 0x03
#define ISCSI_OP_TEXT_REQ 0x04
#define ISCSI_OP_DATA_OUT 0x05
#define ISCSI_OP_LOGOUT_REQ 0x06
#define ISCSI_OP_SNACK 0x10
/* Target opcodes. */
#define ISCSI_OP_NOP_IN 0x20
#define ISCSI_OP_SCSI_RSP 0x21
#define ISCSI_OP_TMF_RSP 0x22
#define ISCSI_OP_LOGIN_RSP 0x23
#define ISCSI_OP_TEXT_RSP 0x24
#define ISCSI_OP_DATA_IN 0x25
#define ISCSI_OP_LOGOUT_RSP 0x26
#define ISCSI_OP_R2T 0x31
#define ISCSI_OP_ASYNC 0x32
#define ISCSI_OP_REJECT 0x3f

/* Byte 1 flags. */
#define ISCSI_FLAG_F 0x80
#define ISCSI_CMD_R 0x40
#define ISCSI_CMD_W 0x20
#define ISCSI_LOGIN_T 0x80
#define ISCSI_LOGIN_C 0x40
#define ISCSI_TEXT_C 0x40
#define ISCSI_DATA_S 0x01
#define ISCSI_RES_U 0x02
#define ISCSI_RES_O 0x04

/* Reject reasons (11.17.1). */
#define ISCSI_REJECT_DIGEST 0x02
#define ISCSI_REJECT_SNACK 0x03
#define ISCSI_REJECT_PROTOCOL 0x04
#define ISCSI_REJECT_UNSUPPORTED 0x05
#define ISCSI_REJECT_IMMEDIATE 0x06
#define ISCSI_REJECT_INVALID_FIELD 0x09
#define ISCSI_REJECT_LONG_OP 0x0a

/* Task management functions (11.5.1) and responses (11.6.1). */
#define ISCSI_TMF_ABORT_TASK 1
#define ISCSI_TMF_ABORT_TASK_SET 2
#define ISCSI_TMF_CLEAR_ACA 3
#define ISCSI_TMF_CLEAR_TASK_SET 4
#define ISCSI_TMF_LUN_RESET 5
#define ISCSI_TMF_TARGET_WARM_RESET 6
#define ISCSI_TMF_TARGET_COLD_RESET 7
#define ISCSI_TMF_TASK_REASSIGN 8
#define ISCSI_TMF_RSP_COMPLETE 0
#define ISCSI_TMF_RSP_NO_TASK 1
#define ISCSI_TMF_RSP_NO_LUN 2
#define ISCSI_TMF_RSP_NO_REASSIGN 4
#define ISCSI_TMF_RSP_UNSUPPORTED 5

/* Login status, class << 8 | detail (11.13.5). */
#define ISCSI_LOGIN_OK 0x0000
#define ISCSI_LOGIN_INITIATOR_ERROR 0x0200
#define ISCSI_LOGIN_AUTH_FAILED 0x0201
#define ISCSI_LOGIN_FORBIDDEN 0x0202
#define ISCSI_LOGIN_NOT_FOUND 0x0203
#define ISCSI_LOGIN_UNSUPPORTED_VERSION 0x0205
#define ISCSI_LOGIN_TOO_MANY_CONNECTIONS 0x0206
#define ISCSI_LOGIN_MISSING_PARAMETER 0x0207
#define ISCSI_LOGIN_NO_SESSION_SPANNING 0x0208
#define ISCSI_LOGIN_NO_SUCH_SESSION 0x020a
#define ISCSI_LOGIN_INVALID_REQUEST 0x020b
#define ISCSI_LOGIN_TARGET_ERROR 0x0300
#define ISCSI_LOGIN_SERVICE_UNAVAILABLE 0x0301
#define ISCSI_LOGIN_OUT_OF_RESOURCES 0x0302

/* Login stages (CSG/NSG). */
#define ISCSI_STAGE_SECURITY 0
#define ISCSI_STAGE_OPERATIONAL 1
#define ISCSI_STAGE_FFP 3

/* ---- front-end limits --------------------------------------------------- */

/* Command slots a connection offers through MaxCmdSN, plus immediate ones. */
#define ISCSI_CMD_SLOTS 128u
#define ISCSI_IMM_SLOTS 16u
#define ISCSI_SLOTS (ISCSI_CMD_SLOTS + ISCSI_IMM_SLOTS)
/* MaxOutstandingR2T the target offers (and tracks per task). */
#define ISCSI_MAX_R2T 8u
/* The largest Expected Data Transfer Length a command may have. */
#define ISCSI_XFER_MAX (32u << 20)
/* A slot keeps a buffer up to this size for the next command. */
#define ISCSI_BUF_KEEP (1u << 20)
/* Data-In PDUs carry at most this (and the initiator's MRDSL). */
#define ISCSI_TX_SEG (64u << 10)
/* Text a login or a Text request may accumulate over continuations. */
#define ISCSI_TEXT_MAX (64u << 10)
/*
 * Descriptors kept free of iSCSI connections for the control socket, the
 * store's files and the rest of the daemon: a connection accepted on one
 * of the last ISCSI_FD_RESERVE (at most a quarter of RLIMIT_NOFILE) is
 * closed at once.
 */
#define ISCSI_FD_RESERVE 64u
#define ISCSI_NAME_MAX CFG_ISCSI_NAME_MAX

static inline uint32_t iscsi_pad(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* ---- pdu.c: the BHS, digests, the receive parser, sequence numbers ---- */

/* The BHS's fields: iscsi_bhs_NAME() and iscsi_bhs_set_NAME(), bhs_i.h. */

/**
 * iscsi_crc32c() - CRC32C (Castagnoli) as iSCSI digests use it: initial
 * value all ones, final complement (RFC 7143 13.1, test vectors in RFC
 * 3720 B.4).
 * @buf: bytes.
 * @len: their count.
 *
 * Context: any; pure. isa-l's crc32_iscsi() underneath, which takes and
 * returns the register without the final complement.
 * Return: the digest value (sent little-endian on the wire).
 */
uint32_t iscsi_crc32c(const void *buf, size_t len);

/* Incremental form: begin, update over pieces, finish. */
uint32_t iscsi_crc32c_begin(void);
uint32_t iscsi_crc32c_update(uint32_t reg, const void *buf, size_t len);
uint32_t iscsi_crc32c_finish(uint32_t reg);

/* Digest bytes as on the wire (little-endian). */
void iscsi_digest_put(uint8_t *p, uint32_t crc);
uint32_t iscsi_digest_get(const uint8_t *p);

/* What iscsi_rx_feed() reports. */
#define ISCSI_RX_MORE 0 /* all input used; the PDU is not complete */
#define ISCSI_RX_HEADER 1 /* BHS, AHS and header digest in: set rx->dst */
#define ISCSI_RX_PDU 2 /* the whole PDU is in */

enum iscsi_rx_part {
	ISCSI_RX_BHS = 0,
	ISCSI_RX_AHS,
	ISCSI_RX_HDIGEST,
	ISCSI_RX_HEADER_DONE,
	ISCSI_RX_DATA,
	ISCSI_RX_PAD,
	ISCSI_RX_DDIGEST,
};

/*
 * The receive side of one connection: PDUs cut out of a byte stream in
 * any pieces. After ISCSI_RX_HEADER the caller points @dst at
 * iscsi_bhs_data_len() bytes of room (or leaves it NULL to discard the
 * data) and feeds on.
 */
struct iscsi_rx {
	bool hdigest;
	bool ddigest;
	uint32_t max_data; /* our MaxRecvDataSegmentLength */
	enum iscsi_rx_part part;
	uint32_t got; /* bytes of the current part */
	uint32_t need; /* bytes the current part has */
	uint32_t ahs_len;
	uint32_t data_len;
	uint32_t crc; /* running data digest register */
	uint8_t *dst;
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t ahs[ISCSI_AHS_MAX];
	uint8_t digest[ISCSI_DIGEST_LEN];
	uint8_t pad[4];
};

/**
 * iscsi_rx_init() - a parser at the start of a PDU.
 * @rx: the parser.
 * @max_data: the longest data segment accepted (our
 *	MaxRecvDataSegmentLength).
 *
 * Digests start off (login PDUs carry none); set @rx->hdigest and
 * @rx->ddigest when full feature phase starts.
 */
void iscsi_rx_init(struct iscsi_rx *rx, uint32_t max_data);

/**
 * iscsi_rx_feed() - take bytes of the stream.
 * @rx: the parser.
 * @in: bytes.
 * @len: their count.
 * @used: out, how many were taken (all of them with ISCSI_RX_MORE).
 *
 * Context: the connection's thread. Copies data to @rx->dst as it
 * arrives; computes both digests on the way.
 * Return: ISCSI_RX_MORE, ISCSI_RX_HEADER, ISCSI_RX_PDU; -EBADMSG for a
 * header digest mismatch, -EMSGSIZE for a data segment longer than
 * @max_data (both after ISCSI_RX_HEADER could not be trusted: drop the
 * connection); -EILSEQ for a data digest mismatch (the PDU was read
 * whole; its data is bad).
 */
int iscsi_rx_feed(struct iscsi_rx *rx, const uint8_t *in, size_t len,
		  size_t *used);

/**
 * iscsi_pdu_build() - one PDU into @out: the BHS, its digest, the data,
 * padding, the data digest.
 * @out: room for iscsi_pdu_size() bytes.
 * @bhs: 48 bytes; the DataSegmentLength field is set here from @dlen.
 * @data: the data segment, or NULL with @dlen 0.
 * @dlen: its length.
 * @hdigest: append a header digest.
 * @ddigest: append a data digest (only when @dlen > 0).
 *
 * Return: bytes written.
 */
size_t iscsi_pdu_build(uint8_t *out, uint8_t *bhs, const void *data,
		       uint32_t dlen, bool hdigest, bool ddigest);

/* Wire size of a PDU without AHS carrying @dlen bytes of data. */
size_t iscsi_pdu_size(uint32_t dlen, bool hdigest, bool ddigest);

/*
 * Serial number arithmetic (RFC 1982, 32 bits) for CmdSN and friends:
 * iscsi_sn_lt(a, b) is a < b; undefined pairs (2^31 apart) are "not less".
 */
static inline bool iscsi_sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (int32_t)(a - b) < 0;
}

static inline bool iscsi_sn_le(uint32_t a, uint32_t b)
{
	return a == b || iscsi_sn_lt(a, b);
}

/* Where a non-immediate command's CmdSN falls (iscsi_cmdsn_check()). */
enum iscsi_sn_verdict {
	ISCSI_SN_EXPECTED = 0, /* == ExpCmdSN: deliver now */
	ISCSI_SN_AHEAD, /* in the window past ExpCmdSN: a gap */
	ISCSI_SN_OUTSIDE, /* below ExpCmdSN or past MaxCmdSN: drop */
};

/**
 * iscsi_cmdsn_check() - place a CmdSN against the command window.
 * @cmdsn: the PDU's CmdSN.
 * @exp: ExpCmdSN.
 * @max: MaxCmdSN (the window is exp..max inclusive; empty when max is
 *	exp - 1).
 *
 * Context: any; pure.
 * Return: enum iscsi_sn_verdict.
 */
enum iscsi_sn_verdict iscsi_cmdsn_check(uint32_t cmdsn, uint32_t exp,
					uint32_t max);

/* ---- login.c: text and negotiation ------------------------------------ */

/* Text being built for a Login or Text response. */
struct iscsi_text {
	char *buf;
	size_t len;
	size_t cap;
	bool overflow; /* something did not fit */
};

/* Appends "key=value\0"; sets @t->overflow when it does not fit. */
void iscsi_text_add(struct iscsi_text *t, const char *key, const char *value);
void iscsi_text_addf(struct iscsi_text *t, const char *key, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

/**
 * iscsi_text_next() - the next key=value pair of a text data segment.
 * @p: in/out, the position; start at the segment.
 * @end: the segment's end.
 * @key: out, the key (NUL-terminated in place: the segment is modified).
 * @value: out, the value.
 *
 * Pairs end in NUL (a caller whose segment lacks the last one puts a NUL
 * at @end and passes @end + 1); NULs between pairs are skipped.
 * Return: 1 a pair; 0 the end; -EPROTO for a pair without '=' or its NUL,
 * an empty key or a key longer than 63 bytes.
 */
int iscsi_text_next(char **p, char *end, char **key, char **value);

/* Operational parameters, as negotiated (defaults: RFC 7143 13). */
struct iscsi_params {
	bool header_digest; /* CRC32C */
	bool data_digest;
	uint32_t max_xmit_dsl; /* the initiator's MaxRecvDataSegmentLength */
	uint32_t max_recv_dsl; /* ours */
	uint32_t max_burst;
	uint32_t first_burst;
	bool immediate_data;
	bool initial_r2t;
	bool data_pdu_in_order;
	bool data_seq_in_order;
	uint16_t max_outstanding_r2t;
	uint8_t erl;
	uint16_t max_connections;
	uint16_t time2wait;
	uint16_t time2retain;
};

/* What the target offers: from [iscsi]. */
struct iscsi_offer {
	uint32_t max_recv_dsl;
	uint32_t max_burst;
	uint32_t first_burst;
	bool immediate_data;
	bool initial_r2t;
};

/* The operational keys, for duplicate detection (bits of iscsi_neg.seen). */
enum iscsi_key_id {
	ISCSI_KEY_HEADER_DIGEST = 0,
	ISCSI_KEY_DATA_DIGEST,
	ISCSI_KEY_MAX_CONNECTIONS,
	ISCSI_KEY_INITIAL_R2T,
	ISCSI_KEY_IMMEDIATE_DATA,
	ISCSI_KEY_MRDSL,
	ISCSI_KEY_MAX_BURST,
	ISCSI_KEY_FIRST_BURST,
	ISCSI_KEY_TIME2WAIT,
	ISCSI_KEY_TIME2RETAIN,
	ISCSI_KEY_MAX_R2T,
	ISCSI_KEY_DATA_PDU_IN_ORDER,
	ISCSI_KEY_DATA_SEQ_IN_ORDER,
	ISCSI_KEY_ERL,
	ISCSI_KEY_COUNT,
};

/* One connection's negotiation. */
struct iscsi_neg {
	struct iscsi_offer offer;
	struct iscsi_params p;
	uint32_t seen; /* 1 << enum iscsi_key_id */
	bool declared_mrdsl; /* ours went out */
	bool discovery; /* SessionType=Discovery */
};

/* The RFC 7143 defaults, before any key. */
void iscsi_params_default(struct iscsi_params *p, uint32_t max_recv_dsl);

/**
 * iscsi_neg_init() - start a negotiation.
 * @n: the negotiation.
 * @offer: the target's values.
 */
void iscsi_neg_init(struct iscsi_neg *n, const struct iscsi_offer *offer);

/* What iscsi_neg_key() did with a key. */
#define ISCSI_NEG_DONE 0 /* answered (or a declaration taken) */
#define ISCSI_NEG_NOT_MINE 1 /* not an operational key */

/**
 * iscsi_neg_key() - negotiate one operational key the initiator sent.
 * @n: the negotiation.
 * @key: the key.
 * @value: its value.
 * @leading: in the login of a new session (LO keys allowed); false in
 *	full feature phase Text negotiation.
 * @out: the answer is appended here ("key=value", "key=Reject",
 *	"key=Irrelevant"); nothing for a declaration.
 *
 * Values out of range, malformed numbers and unknown list values or
 * booleans get Reject; obsolete marker keys get Reject (RFC 7143 13.26);
 * LO keys outside a leading login get Reject; session-only keys in a
 * discovery session get Irrelevant.
 * Return: ISCSI_NEG_DONE; ISCSI_NEG_NOT_MINE; -EPROTO when the key was
 * already negotiated on this connection (a protocol error: RFC 7143 6.1).
 */
int iscsi_neg_key(struct iscsi_neg *n, const char *key, const char *value,
		  bool leading, struct iscsi_text *out);

/**
 * iscsi_neg_finish() - close the operational stage: declare our
 * MaxRecvDataSegmentLength if not yet done, and check the combination
 * (FirstBurstLength <= MaxBurstLength: the smaller wins).
 * @n: the negotiation.
 * @out: where the declaration goes.
 */
void iscsi_neg_finish(struct iscsi_neg *n, struct iscsi_text *out);

/**
 * iscsi_login_key_declare() - record a login key (InitiatorName,
 * TargetName, SessionType, InitiatorAlias, AuthMethod, the CHAP keys and
 * the target's own declarations) as sent.
 * @declared: the login's record, 0 at its start.
 * @key: the key.
 *
 * RFC 7143 6.2: a key declared twice in one login is an initiator error
 * (last one wins is not an option).
 * Return: 1 a login key, now recorded; 0 not a login key; -EPROTO sent
 * before in this login.
 */
int iscsi_login_key_declare(uint32_t *declared, const char *key);

/**
 * iscsi_log_escape() - a string a peer chose, made safe for one log line:
 * bytes outside printable ASCII (newline, ESC, UTF-8) and backslash become
 * \xNN; cut with "..." when longer than @cap allows.
 * @in: the string.
 * @out: the result.
 * @cap: its size (> 4).
 *
 * Return: @out.
 */
const char *iscsi_log_escape(const char *in, char *out, size_t cap);

/* Whether @key is one that is simply not understood (NotUnderstood). */
bool iscsi_key_unknown(const char *key);

/* ---- chap.c ------------------------------------------------------------ */

#define ISCSI_CHAP_MD5 5
#define ISCSI_CHAP_CHALLENGE_LEN 16
#define ISCSI_CHAP_DIGEST_LEN 16
#define ISCSI_CHAP_BIN_MAX 1024 /* the largest challenge we take */

/**
 * iscsi_chap_md5() - the CHAP MD5 response: MD5(id || secret || challenge)
 * (RFC 1994 4.1).
 * @id: the identifier.
 * @secret: the secret (bytes, not NUL-terminated).
 * @slen: its length.
 * @challenge: the challenge.
 * @clen: its length.
 * @out: the 16-byte response.
 */
void iscsi_chap_md5(uint8_t id, const void *secret, size_t slen,
		    const uint8_t *challenge, size_t clen, uint8_t *out);

/**
 * iscsi_chap_decode() - a binary value ("0x" hex or "0b" base64, RFC 7143
 * 6.1) to bytes.
 * @text: the value.
 * @out: room for @cap bytes.
 * @cap: its size.
 *
 * Return: the byte count (> 0); -EINVAL for a malformed value or no
 * bytes; -E2BIG when it does not fit.
 */
int iscsi_chap_decode(const char *text, uint8_t *out, size_t cap);

/**
 * iscsi_chap_encode() - bytes as "0x" and lower-case hex.
 * @in: the bytes.
 * @len: their count.
 * @out: room for 3 + 2 * @len bytes.
 * @cap: its size.
 *
 * Return: the length; -ENOSPC.
 */
int iscsi_chap_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* One connection's CHAP exchange, the target side. */
enum iscsi_chap_state {
	ISCSI_CHAP_NONE = 0,
	ISCSI_CHAP_WANT_A, /* AuthMethod=CHAP agreed: CHAP_A next */
	ISCSI_CHAP_WANT_R, /* challenge sent: CHAP_N and CHAP_R next */
	ISCSI_CHAP_DONE, /* the initiator proved itself */
};

struct iscsi_chap {
	enum iscsi_chap_state state;
	uint8_t id;
	uint8_t challenge[ISCSI_CHAP_CHALLENGE_LEN];
};

/**
 * iscsi_chap_challenge() - pick an identifier and a random challenge and
 * write CHAP_A, CHAP_I and CHAP_C.
 * @ch: the exchange (state becomes ISCSI_CHAP_WANT_R).
 * @out: the login response text.
 *
 * Return: 0; -errno from getrandom().
 */
int iscsi_chap_challenge(struct iscsi_chap *ch, struct iscsi_text *out);

/**
 * iscsi_chap_check() - check the initiator's CHAP_N and CHAP_R and, for
 * mutual CHAP, answer its CHAP_I and CHAP_C with CHAP_N and CHAP_R.
 * @ch: the exchange.
 * @icfg: the users and secrets.
 * @name: CHAP_N, or NULL.
 * @response: CHAP_R, or NULL.
 * @mid: CHAP_I of mutual CHAP, or NULL.
 * @mchallenge: CHAP_C of mutual CHAP, or NULL.
 * @out: the login response text.
 *
 * Return: 0 authenticated; -EACCES wrong name or response, mutual CHAP
 * asked without a mutual secret, or the initiator's challenge repeats
 * ours (a reflection); -EINVAL malformed or missing values.
 */
int iscsi_chap_check(struct iscsi_chap *ch, const struct cfg_iscsi *icfg,
		     const char *name, const char *response, const char *mid,
		     const char *mchallenge, struct iscsi_text *out);

/*
 * Failed CHAP answers, per source address: the first ISCSI_AUTH_FREE in a
 * row cost nothing (a mistyped secret); after the n-th one past those the
 * address's next answer is not checked for 2^(n-1) seconds (at most
 * ISCSI_AUTH_DELAY_MAX) and gets Service Unavailable (0x0301, retry
 * later) instead. A fixed table of ISCSI_AUTH_SLOTS, one address a slot
 * (a new address takes the slot of an old one): bounded memory.
 */
#define ISCSI_AUTH_SLOTS 256u
#define ISCSI_AUTH_FREE 3u
#define ISCSI_AUTH_DELAY_MAX 16u
/* A failure this long after the last one starts the count again. */
#define ISCSI_AUTH_FORGET_S 600u

struct iscsi_auth_slot {
	uint8_t addr[16];
	uint8_t fails; /* 0: the slot is free */
	uint64_t last_ns; /* the last failure */
	uint64_t until_ns; /* no answer checked before this */
};

struct iscsi_auth_throttle {
	pthread_mutex_t lock;
	struct iscsi_auth_slot v[ISCSI_AUTH_SLOTS];
};

/**
 * iscsi_auth_wait() - whether a CHAP answer from @addr must wait.
 * @t: the table.
 * @addr: the source address (16 bytes, IPv4-mapped).
 * @now: monotonic nanoseconds.
 *
 * Context: any thread; takes @t->lock.
 * Return: 0 check it now; else the seconds (rounded up) left to wait.
 */
unsigned int iscsi_auth_wait(struct iscsi_auth_throttle *t, const uint8_t *addr,
			     uint64_t now);

/**
 * iscsi_auth_result() - record a checked CHAP answer from @addr.
 * @t: the table.
 * @addr: the source address.
 * @ok: it was right (the address's failures are forgotten).
 * @now: monotonic nanoseconds.
 *
 * Return: for a failure, the seconds the address must now wait; 0.
 */
unsigned int iscsi_auth_result(struct iscsi_auth_throttle *t,
			       const uint8_t *addr, bool ok, uint64_t now);

/* ---- the front end, workers, sessions ----------------------------------- */

struct iscsi_fe;
struct iscsi_worker;
struct iscsi_conn;

/* ---- session.c: the session registry ------------------------------------ */

/* One logged-in session (one connection: MaxConnections is 1). */
struct iscsi_sess_entry {
	bool used;
	uint16_t tsih;
	uint8_t isid[6];
	int target; /* -1: discovery */
	uint16_t tpgt; /* the portal group it logged in through */
	struct iscsi_worker *w;
	uint64_t conn_id;
	char initiator[ISCSI_NAME_MAX + 1];
	/* for `sdswarm sessions`: fixed at login but the counter, which is
	 * the connection's (valid while the entry is registered: a
	 * connection leaves the registry before it is freed) */
	char peer[64];
	unsigned int portal;
	bool header_digest, data_digest;
	uint64_t born_ns;
	const _Atomic uint32_t *inflight;
};

struct iscsi_sessions {
	pthread_mutex_t lock;
	unsigned int max; /* 0: no limit */
	unsigned int count;
	unsigned int cap;
	uint16_t next_tsih;
	struct iscsi_sess_entry *v;
};

/**
 * iscsi_sess_init() - an empty registry.
 * @s: the registry.
 * @max: most sessions at once; 0 is no limit.
 *
 * Return: 0, -ENOMEM.
 */
int iscsi_sess_init(struct iscsi_sessions *s, unsigned int max);

/* Free it. */
void iscsi_sess_fini(struct iscsi_sessions *s);

/**
 * iscsi_sess_add() - register a session at the end of its login.
 * @s: the registry.
 * @e: the session: initiator, isid, target, w, conn_id; tsih out.
 * @old: out, the session it reinstates (same initiator name, ISID,
 *	target and portal group: RFC 7143 6.3.5; through another portal
 *	group it is another I_T nexus), whose connection the caller must
 *	close.
 *
 * Context: any worker; takes the registry lock.
 * Return: 0 a new session; 1 a new session reinstating @old (which is
 * gone from the registry); -EBUSY at max sessions; -ENOMEM.
 */
int iscsi_sess_add(struct iscsi_sessions *s, struct iscsi_sess_entry *e,
		   struct iscsi_sess_entry *old);

/* Drop the session of connection @conn_id (if it is still registered). */
void iscsi_sess_remove(struct iscsi_sessions *s, uint16_t tsih,
		       uint64_t conn_id);

/**
 * iscsi_sess_collect() - the sessions of target @target (all targets with
 * -2), for a reset that reaches across connections.
 * @s: the registry.
 * @target: the target index, or -2.
 * @out: room for @cap entries.
 * @cap: its size.
 *
 * Return: how many there are (more than @cap: only @cap were copied).
 */
unsigned int iscsi_sess_collect(struct iscsi_sessions *s, int target,
				struct iscsi_sess_entry *out, unsigned int cap);

/* Live sessions. */
unsigned int iscsi_sess_count(struct iscsi_sessions *s);

/* The worker of connection @conn_id's session, or NULL. */
struct iscsi_worker *iscsi_sess_worker(struct iscsi_sessions *s,
				       uint64_t conn_id);

/* ---- session.c: the initiators and their share of the buffers ---------- */

/*
 * One initiator, by its iSCSI name (every session, ISID and connection of
 * the name): the command data buffers its connections hold, against
 * [iscsi] max_buffer_per_initiator. A connection takes a reference at the
 * end of its login and drops it once its buffers are freed.
 */
struct iscsi_initiator {
	struct iscsi_initiator *next; /* the hash chain */
	uint32_t hash;
	unsigned int refs; /* its connections; under the table's lock */
	/*
	 * Bytes its connections' buffers take: charged and given back by
	 * the workers of all its connections at once, with no lock.
	 */
	_Atomic uint64_t buf_bytes;
	char name[ISCSI_NAME_MAX + 1];
};

/* The initiators with a connection logged in: a chained hash table. */
struct iscsi_initiators {
	pthread_mutex_t lock;
	unsigned int count;
	unsigned int mask; /* buckets - 1: a power of two */
	struct iscsi_initiator **v;
};

/**
 * iscsi_ini_init() - an empty table.
 * @t: the table.
 *
 * Return: 0, -ENOMEM.
 */
int iscsi_ini_init(struct iscsi_initiators *t);

/* Free it (every reference must be gone; safe after a failed init). */
void iscsi_ini_fini(struct iscsi_initiators *t);

/**
 * iscsi_ini_get() - the initiator named @name, with a reference for the
 * caller; created with nothing charged if it has no other connection.
 * @t: the table.
 * @name: its iSCSI name, compared without regard to case (RFC 3722's
 *	normalisation folds it; iqn. names are lower case already).
 * @out: out, the initiator.
 *
 * O(1) expected: the table doubles as it fills.
 * Context: login, on any worker; takes the table's lock.
 * Return: 0, -ENOMEM.
 */
int iscsi_ini_get(struct iscsi_initiators *t, const char *name,
		  struct iscsi_initiator **out);

/**
 * iscsi_ini_put() - drop a reference; the last frees the initiator.
 * @t: the table.
 * @ini: the initiator, or NULL (nothing to do). Its buffers must be back:
 *	the last reference goes with nothing charged.
 *
 * Context: a connection's end, on its worker; takes the table's lock.
 */
void iscsi_ini_put(struct iscsi_initiators *t, struct iscsi_initiator *ini);

/* ---- loop.c: workers and their mail ------------------------------------- */

/* What one worker asks of another. */
enum iscsi_msg_kind {
	ISCSI_MSG_CONN = 1, /* a new connection: @fd, on portal @lun */
	ISCSI_MSG_KILL, /* close connection @conn_id */
	ISCSI_MSG_ABORT_LUN, /* abort every task on table LUN @lun */
	ISCSI_MSG_ABORT_CONN, /* abort connection @conn_id's tasks on
				     * table LUN @lun (ISCSI_LUN_ALL: all):
				     * a warm target reset, PREEMPT AND
				     * ABORT */
	ISCSI_MSG_CLOSE, /* close connection @conn_id after its
				     * queued output */
};

/* iscsi_conn_abort()'s @lun for the tasks of every LUN. */
#define ISCSI_LUN_ALL UINT32_MAX

/**
 * iscsi_worker_post() - hand a message to a worker (wakes it).
 * @w: the worker.
 * @kind: what.
 * @fd: for ISCSI_MSG_CONN.
 * @conn_id: for the connection messages.
 * @lun: the portal's index for ISCSI_MSG_CONN; 0 otherwise (the abort
 *	messages go through iscsi_worker_post_abort()).
 *
 * Context: any thread. One malloc: the control path only (new
 * connections, resets), never per command.
 * Return: 0, -ENOMEM.
 */
int iscsi_worker_post(struct iscsi_worker *w, enum iscsi_msg_kind kind, int fd,
		      uint64_t conn_id, uint32_t lun);

/*
 * An abort message for the tasks on table LUN @lun (ISCSI_LUN_ALL: every
 * LUN) taken at or before @before_ns (the message may arrive after the
 * worker has taken commands their initiator sent once it knew of the reset
 * or preemption): ISCSI_MSG_ABORT_LUN (every connection but @conn_id),
 * ISCSI_MSG_ABORT_CONN (connection @conn_id) or ISCSI_MSG_CLOSE (all of
 * @conn_id's tasks, whatever @lun and @before_ns, then close it after its
 * queued output).
 */
int iscsi_worker_post_abort(struct iscsi_worker *w, enum iscsi_msg_kind kind,
			    uint64_t conn_id, uint32_t lun, uint64_t before_ns);

/* Post ISCSI_MSG_ABORT_LUN to every worker (all but @except_conn). */
void iscsi_fe_broadcast_lun(struct iscsi_fe *fe, uint32_t lun,
			    uint64_t except_conn);

/* The worker's SCSI counters (the commands of its connections). */
struct scsi_stats *iscsi_worker_stats(struct iscsi_worker *w);

/*
 * A connection that has not logged in yet, counted against [iscsi]
 * max_login_connections and max_login_per_address from accept until its
 * login ends (full feature phase) or it closes: iscsi_prelogin_put(),
 * once, from either. Any thread; takes fe->pre_lock.
 */
void iscsi_prelogin_put(struct iscsi_conn *c);

/* Have the worker flush @c at the end of this round. */
void iscsi_worker_dirty(struct iscsi_worker *w, struct iscsi_conn *c);

/* Monotonic nanoseconds. */
uint64_t iscsi_now_ns(void);

/* Delayed completions: the worker's timer heap. */
void iscsi_timer_add(struct iscsi_worker *w, struct iscsi_conn *c,
		     unsigned int slot, uint64_t deadline);
void iscsi_timer_del(struct iscsi_worker *w, struct iscsi_conn *c,
		     unsigned int slot);

/* Pre-login connections of one source address (an open-addressing slot). */
struct iscsi_pre_addr {
	uint8_t addr[16]; /* IPv6, or IPv4-mapped */
	unsigned int count; /* 0: the slot is free */
};

/* The front end as the connections see it. */
struct iscsi_fe {
	struct cfg_iscsi icfg;
	struct target *target; /* the registry; tgt is target->scsi */
	struct scsi_target *tgt;
	struct iscsi_offer offer;
	unsigned int ntargets;
	char names[CFG_ISCSI_MAX_TARGETS][ISCSI_NAME_MAX + 1];
	struct scsi_view views[CFG_ISCSI_MAX_TARGETS];
	/*
	 * Portal i: TargetAddress "host:port,TPGT" and its listening socket;
	 * its target portal group tag and relative target port are i + 1.
	 */
	unsigned int nportals;
	struct cfg_portal portals[CFG_ISCSI_MAX_PORTALS]; /* as listening */
	char address[CFG_ISCSI_MAX_PORTALS][96];
	int listen_fd[CFG_ISCSI_MAX_PORTALS];
	struct iscsi_sessions sessions;
	bool sessions_listed; /* target_register() took fe_sessions */
	unsigned int nworkers;
	struct iscsi_worker **workers;
	bool accept_paused; /* out of descriptors: worker 0 retries each tick */
	_Atomic unsigned int next_worker;
	_Atomic uint64_t next_conn_id;
	_Atomic uint64_t buf_total; /* command data buffers, all connections */
	struct iscsi_initiators initiators; /* and per initiator */
	/* pre-login connections (loop.c), total and per source address */
	pthread_mutex_t pre_lock;
	_Atomic unsigned int pre_total; /* written under pre_lock */
	unsigned int pre_mask; /* slots - 1: a power of two */
	struct iscsi_pre_addr *pre;
	struct iscsi_auth_throttle auth;
	/* connections closed at accept, logged once a tick (worker 0) */
	unsigned int refused_login, refused_fds;
};

/* ---- conn.c: one connection ---------------------------------------------- */

enum iscsi_task_state {
	ISCSI_TASK_FREE = 0,
	ISCSI_TASK_DATA_OUT, /* collecting Data-Out */
	ISCSI_TASK_DELAYED, /* done; completion held for a delay */
	ISCSI_TASK_HELD, /* a HANG fault: only an abort ends it */
	ISCSI_TASK_QUEUED, /* done; on the transmit queue */
};

/* One outstanding R2T. */
struct iscsi_r2t {
	uint32_t ttt;
	uint32_t offset;
	uint32_t len;
	uint32_t got;
	uint32_t datasn;
};

/* One command slot: preallocated per connection; its buffer is kept. */
struct iscsi_task {
	enum iscsi_task_state state;
	bool immediate;
	bool discard; /* no buffer: data dropped, sense set */
	uint8_t nr2t;
	uint16_t slot;
	uint16_t gen; /* makes TTTs unique over slot reuse */
	uint32_t itt;
	uint32_t cmdsn;
	uint32_t table_lun; /* UINT32_MAX: not a LUN of the view */
	uint8_t lun_field[8];
	uint8_t cdb[SCSI_CDB_MAX];
	enum scsi_dir dir;
	uint32_t edtl;
	uint8_t *buf;
	uint32_t buf_cap;
	/* Data-Out */
	uint32_t received;
	uint32_t unsol_end; /* unsolicited data ends here */
	uint32_t unsol_got;
	uint32_t unsol_datasn;
	uint32_t r2t_next;
	uint32_t r2tsn;
	struct iscsi_r2t r2t[ISCSI_MAX_R2T];
	/* completion */
	struct scsi_cmd cmd;
	struct iovec iov;
	uint32_t in_off;
	uint32_t datasn;
	uint32_t burst_left;
	uint64_t deadline;
	unsigned int heap_idx;
	bool accounted; /* its slot is already back in the window */
	bool held; /* CmdSN past a gap: waits for its turn */
	struct iscsi_task *next; /* free list or transmit queue */
	uint64_t rx_ns; /* when its command PDU was taken
				     * (iscsi_now_ns): a LUN reset from
				     * another connection aborts only what
				     * came before it */
};

enum iscsi_conn_state {
	ISCSI_CONN_LOGIN = 0,
	ISCSI_CONN_FFP,
	ISCSI_CONN_CLOSING, /* send what is queued, then close */
	ISCSI_CONN_DEAD, /* close now */
};

/* Login progress of a connection. */
struct iscsi_login {
	uint8_t stage; /* current stage */
	bool first_done; /* the first PDU was seen */
	bool have_names;
	bool auth_chosen; /* AuthMethod settled */
	bool auth_chap;
	bool authenticated;
	bool tpgt_sent;
	uint32_t declared; /* iscsi_login_key_declare() */
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	uint32_t itt;
	uint32_t cmdsn;
	struct iscsi_chap chap;
	char *text; /* continued text so far */
	size_t text_len;
};

struct iscsi_conn {
	struct iscsi_fe *fe;
	struct iscsi_worker *w;
	uint64_t id;
	int fd;
	uint32_t events; /* the epoll mask now */
	enum iscsi_conn_state state;
	bool dirty;
	struct iscsi_conn *dirty_next;
	struct iscsi_conn *prev, *next; /* the worker's list */
	char peer[64];
	uint8_t addr[16]; /* the peer's address (IPv4-mapped) */
	bool prelogin; /* counted in fe->pre_total */

	/* receive */
	struct iscsi_rx rx;
	uint8_t *rbuf;
	size_t rlen, roff;
	uint8_t *dbuf; /* data of non-SCSI PDUs */
	struct iscsi_task *cur; /* the task the current PDU feeds */
	int cur_r2t; /* the R2T it answers, -1 unsolicited */
	bool cur_drop; /* drop the current PDU silently */
	uint8_t cur_reject; /* reject it with this reason, or 0 */
	uint8_t cur_bhs[ISCSI_BHS_LEN];

	/* transmit */
	uint8_t *obuf;
	size_t ohead, otail, ocap;
	struct iscsi_task *txq, *txq_tail;

	/* login and session */
	struct iscsi_login login;
	struct iscsi_neg neg;
	struct iscsi_params p;
	bool discovery;
	int target;
	unsigned int portal; /* index of the portal it came in on */
	const struct scsi_view *view;
	uint16_t tsih;
	uint16_t cid;
	uint8_t isid[6];
	bool registered;
	char initiator[ISCSI_NAME_MAX + 1];
	/* its share of the buffers, from login on; NULL before */
	struct iscsi_initiator *ini;
	/* the SCSI initiator port name: "<name>,i,0x<ISID>" */
	char iport[ISCSI_NAME_MAX + 20];

	/* sequence numbers */
	uint32_t stat_sn;
	uint32_t exp_cmd_sn;
	uint32_t max_cmd_sn;
	/*
	 * Past a CmdSN gap (RFC 7143 3.2.2.1): SCSI commands in the window
	 * wait in their slots (held); the CmdSNs already used up there by
	 * other requests or by held commands that were aborted are listed
	 * here, so ExpCmdSN steps over them once the gap is filled.
	 */
	unsigned int nheld;
	unsigned int nsn_used;
	uint32_t sn_used[ISCSI_CMD_SLOTS];

	/* text continuation in full feature phase */
	char *text;
	size_t text_len;
	uint32_t text_itt;

	/* slots */
	uint64_t buf_bytes; /* their buffers, against the budget */
	struct iscsi_task *tasks;
	struct iscsi_task *free_cmd, *free_imm;
	unsigned int nfree_cmd;

	/*
	 * Command slots in use, for `sdswarm sessions`: written by the owner
	 * thread alone (load and store, no locked add), read by the control
	 * thread.
	 */
	_Atomic uint32_t inflight;

	/* liveness */
	uint64_t born_ns;
	uint64_t last_rx_ns;
	uint64_t ping_ns; /* when the unanswered ping went out */
	uint32_t ping_ttt; /* ISCSI_RSVD_TAG: none out */
	uint32_t next_ttt;
	unsigned int luns_gen; /* lun_luns_generation() told so far */
	bool async_due;
};

/**
 * iscsi_conn_create() - a connection on accepted socket @fd.
 * @out: out, the connection.
 * @fe: the front end.
 * @w: its worker.
 * @fd: non-blocking socket; owned by the connection from here on (closed
 *	on failure too).
 *
 * Return: 0, -ENOMEM.
 */
int iscsi_conn_create(struct iscsi_conn **out, struct iscsi_fe *fe,
		      struct iscsi_worker *w, int fd);

/* Free it: its tasks, buffers, socket, and its session's registration. */
void iscsi_conn_destroy(struct iscsi_conn *c);

/**
 * iscsi_conn_readable() - read and process what the socket has, as far as
 * the transmit buffer has room for the answers.
 * @c: the connection.
 *
 * At most 16 reads of up to 64 KiB; every byte read is processed before it
 * returns, unless transmit room ran out (iscsi_conn_rx_blocked()): then
 * the rest stays in the receive buffer for the caller to come back to
 * once a flush has made room, since the socket may never be readable
 * again (the peer waits for the answers).
 *
 * Return: 0; -errno when it must be closed (the state is DEAD).
 */
int iscsi_conn_readable(struct iscsi_conn *c);

/**
 * iscsi_conn_flush() - move queued responses into the transmit buffer and
 * write as much as the socket takes.
 * @c: the connection.
 *
 * Return: 1 all written; 0 the socket is full; -errno to close.
 */
int iscsi_conn_flush(struct iscsi_conn *c);

/* Whether the connection stopped reading for want of transmit room. */
bool iscsi_conn_rx_blocked(const struct iscsi_conn *c);

/* A delayed task's time came. */
void iscsi_conn_timer_fired(struct iscsi_conn *c, unsigned int slot);

/* Once a second: pings, the ping timeout, LUN changes. */
void iscsi_conn_tick(struct iscsi_conn *c, uint64_t now, unsigned int gen);

/*
 * Abort every task on table LUN @lun (ISCSI_LUN_ALL: every LUN) taken at
 * or before @before_ns (iscsi_now_ns(); UINT64_MAX: all). A reset or
 * preemption ordered on another connection passes the time it was done:
 * a command this connection took after it (its initiator may have seen
 * the reset's response already) is not its to abort, and its response,
 * maybe already queued, is not dropped.
 */
void iscsi_conn_abort(struct iscsi_conn *c, uint32_t lun, uint64_t before_ns);

/*
 * Queue one PDU for transmit (the caller checked the room: every PDU is
 * handled only while iscsi_conn_rx_blocked() is false, which keeps room
 * for the largest answer). Return: 0, -ENOBUFS (none: the connection dies).
 */
int iscsi_conn_queue_pdu(struct iscsi_conn *c, uint8_t *bhs, const void *data,
			 uint32_t dlen);

/*
 * StatSN, ExpCmdSN and MaxCmdSN into a response BHS (offsets 24, 28, 32);
 * @status: the PDU carries status, so StatSN advances.
 */
void iscsi_conn_fill_sn(struct iscsi_conn *c, uint8_t *bhs, bool status);

/* login.c: a Login request (BHS in c->cur_bhs); -errno: close. */
int iscsi_login_pdu(struct iscsi_conn *c, char *data, uint32_t len);

/* login.c: a Text request in full feature phase. */
int iscsi_text_pdu(struct iscsi_conn *c, char *data, uint32_t len);

/*
 * login.c: the SendTargets answer: "All" every target (discovery
 * sessions), a target name that one, "" the session's own.
 */
void iscsi_sendtargets(struct iscsi_conn *c, const char *value,
		       struct iscsi_text *out);

#endif /* SDSWARM_ISCSI_I_H */
