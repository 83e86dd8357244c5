// SPDX-License-Identifier: MIT
/*
 * Login and text: the key=value codec, operational parameter negotiation
 * (RFC 7143 6 and 13, every key with its result function, range and
 * phase), the login phases (security with CHAP or none, operational, the
 * move to full feature phase), the login status codes, SendTargets, and
 * Text requests in full feature phase.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "iscsi_i.h"
#include "log.h"
#include "parse.h"

/* ---- text ---------------------------------------------------------------- */

void iscsi_text_add(struct iscsi_text *t, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	if (t->overflow || t->len + kl + vl + 2 > t->cap) {
		t->overflow = true;
		return;
	}
	memcpy(t->buf + t->len, key, kl);
	t->buf[t->len + kl] = '=';
	memcpy(t->buf + t->len + kl + 1, value, vl);
	t->buf[t->len + kl + 1 + vl] = '\0';
	t->len += kl + vl + 2;
}

void iscsi_text_addf(struct iscsi_text *t, const char *key, const char *fmt,
		     ...)
{
	char v[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	iscsi_text_add(t, key, v);
}

int iscsi_text_next(char **p, char *end, char **key, char **value)
{
	char *s = *p, *nul, *eq;

	/* stray NULs between pairs (padding some initiators leave) */
	while (s < end && !*s)
		s++;
	if (s >= end) {
		*p = end;
		return 0;
	}
	nul = memchr(s, '\0', (size_t)(end - s));
	eq = memchr(s, '=', (size_t)((nul ? nul : end) - s));
	if (!eq || eq == s || eq - s > 63)
		return -EPROTO;
	if (!nul) {
		/* the last pair without its NUL: it must end inside the buffer */
		return -EPROTO;
	}
	*eq = '\0';
	*key = s;
	*value = eq + 1;
	*p = nul + 1;
	return 1;
}

/* ---- negotiation ------------------------------------------------------- */

void iscsi_params_default(struct iscsi_params *p, uint32_t max_recv_dsl)
{
	*p = (struct iscsi_params){
		.header_digest = false,
		.data_digest = false,
		.max_xmit_dsl = 8192,
		.max_recv_dsl = max_recv_dsl,
		.max_burst = 262144,
		.first_burst = 65536,
		.immediate_data = true,
		.initial_r2t = true,
		.data_pdu_in_order = true,
		.data_seq_in_order = true,
		.max_outstanding_r2t = 1,
		.erl = 0,
		.max_connections = 1,
		.time2wait = 2,
		.time2retain = 20,
	};
}

void iscsi_neg_init(struct iscsi_neg *n, const struct iscsi_offer *offer)
{
	memset(n, 0, sizeof(*n));
	n->offer = *offer;
	iscsi_params_default(&n->p, offer->max_recv_dsl);
}

enum key_type {
	KT_DIGEST, /* list: None, CRC32C */
	KT_BOOL_AND,
	KT_BOOL_OR,
	KT_NUM_MIN,
	KT_NUM_MAX,
	KT_DECLARE, /* MaxRecvDataSegmentLength */
};

enum key_use {
	KU_LO, /* leading login only */
	KU_IO, /* login only (initialize) */
	KU_ALL, /* login and full feature phase */
};

struct key_def {
	const char *name;
	enum iscsi_key_id id;
	enum key_type type;
	enum key_use use;
	uint32_t min, max;
};

static const struct key_def key_defs[] = {
	{"HeaderDigest", ISCSI_KEY_HEADER_DIGEST, KT_DIGEST, KU_IO, 0, 0},
	{"DataDigest", ISCSI_KEY_DATA_DIGEST, KT_DIGEST, KU_IO, 0, 0},
	{"MaxConnections", ISCSI_KEY_MAX_CONNECTIONS, KT_NUM_MIN, KU_LO, 1,
	 65535},
	{"InitialR2T", ISCSI_KEY_INITIAL_R2T, KT_BOOL_OR, KU_LO, 0, 0},
	{"ImmediateData", ISCSI_KEY_IMMEDIATE_DATA, KT_BOOL_AND, KU_LO, 0, 0},
	{"MaxRecvDataSegmentLength", ISCSI_KEY_MRDSL, KT_DECLARE, KU_ALL, 512,
	 16777215},
	{"MaxBurstLength", ISCSI_KEY_MAX_BURST, KT_NUM_MIN, KU_LO, 512,
	 16777215},
	{"FirstBurstLength", ISCSI_KEY_FIRST_BURST, KT_NUM_MIN, KU_LO, 512,
	 16777215},
	{"DefaultTime2Wait", ISCSI_KEY_TIME2WAIT, KT_NUM_MAX, KU_LO, 0, 3600},
	{"DefaultTime2Retain", ISCSI_KEY_TIME2RETAIN, KT_NUM_MIN, KU_LO, 0,
	 3600},
	{"MaxOutstandingR2T", ISCSI_KEY_MAX_R2T, KT_NUM_MIN, KU_LO, 1, 65535},
	{"DataPDUInOrder", ISCSI_KEY_DATA_PDU_IN_ORDER, KT_BOOL_OR, KU_LO, 0,
	 0},
	{"DataSequenceInOrder", ISCSI_KEY_DATA_SEQ_IN_ORDER, KT_BOOL_OR, KU_LO,
	 0, 0},
	{"ErrorRecoveryLevel", ISCSI_KEY_ERL, KT_NUM_MIN, KU_LO, 0, 2},
};

#define NKEYS (ARRAY_SIZE(key_defs))

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "Yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "No")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* The first of the initiator's digests we support (its order is its
 * preference). Return: 0 None, 1 CRC32C, -EINVAL none of them. */
static int pick_digest(const char *list)
{
	const char *s = list, *e;
	size_t n;

	while (*s) {
		e = strchr(s, ',');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == 4 && !strncmp(s, "None", 4))
			return 0;
		if (n == 6 && !strncmp(s, "CRC32C", 6))
			return 1;
		if (!e)
			break;
		s = e + 1;
	}
	return -EINVAL;
}

static const struct key_def *find_key(const char *key)
{
	unsigned int i;

	for (i = 0; i < NKEYS; i++)
		if (!strcmp(key_defs[i].name, key))
			return &key_defs[i];
	return NULL;
}

static bool *bool_field(struct iscsi_neg *n, enum iscsi_key_id id, bool *ours)
{
	switch (id) {
	case ISCSI_KEY_INITIAL_R2T:
		*ours = n->offer.initial_r2t;
		return &n->p.initial_r2t;
	case ISCSI_KEY_IMMEDIATE_DATA:
		*ours = n->offer.immediate_data;
		return &n->p.immediate_data;
	case ISCSI_KEY_DATA_PDU_IN_ORDER:
		/* we want Yes: the OR gives Yes whatever the initiator says */
		*ours = true;
		return &n->p.data_pdu_in_order;
	default:
		*ours = true;
		return &n->p.data_seq_in_order;
	}
}

/* Our value of a numerical key and where the result goes. */
static uint32_t num_ours(struct iscsi_neg *n, enum iscsi_key_id id)
{
	switch (id) {
	case ISCSI_KEY_MAX_CONNECTIONS:
		return 1;
	case ISCSI_KEY_MAX_BURST:
		return n->offer.max_burst;
	case ISCSI_KEY_FIRST_BURST:
		return n->offer.first_burst;
	case ISCSI_KEY_TIME2WAIT:
		return 2;
	case ISCSI_KEY_TIME2RETAIN:
		/* no connection recovery at ErrorRecoveryLevel 0 */
		return 0;
	case ISCSI_KEY_MAX_R2T:
		return ISCSI_MAX_R2T;
	default:
		return 0; /* ErrorRecoveryLevel */
	}
}

static void num_store(struct iscsi_neg *n, enum iscsi_key_id id, uint32_t v)
{
	switch (id) {
	case ISCSI_KEY_MAX_CONNECTIONS:
		n->p.max_connections = (uint16_t)v;
		break;
	case ISCSI_KEY_MAX_BURST:
		n->p.max_burst = v;
		break;
	case ISCSI_KEY_FIRST_BURST:
		n->p.first_burst = v;
		break;
	case ISCSI_KEY_TIME2WAIT:
		n->p.time2wait = (uint16_t)v;
		break;
	case ISCSI_KEY_TIME2RETAIN:
		n->p.time2retain = (uint16_t)v;
		break;
	case ISCSI_KEY_MAX_R2T:
		n->p.max_outstanding_r2t = (uint16_t)v;
		break;
	default:
		n->p.erl = (uint8_t)v;
		break;
	}
}

static bool obsolete_key(const char *key)
{
	return !strcmp(key, "OFMarker") || !strcmp(key, "IFMarker") ||
	       !strcmp(key, "OFMarkInt") || !strcmp(key, "IFMarkInt");
}

int iscsi_neg_key(struct iscsi_neg *n, const char *key, const char *value,
		  bool leading, struct iscsi_text *out)
{
	const struct key_def *k;
	uint32_t v;
	bool b, ours, *f;
	int d;

	if (obsolete_key(key)) {
		iscsi_text_add(out, key, "Reject");
		return ISCSI_NEG_DONE;
	}
	k = find_key(key);
	if (!k)
		return ISCSI_NEG_NOT_MINE;
	if (n->seen & (1u << k->id))
		return -EPROTO;
	n->seen |= 1u << k->id;
	if ((k->use == KU_LO && !leading) || (k->use == KU_IO && !leading)) {
		iscsi_text_add(out, key, "Reject");
		return ISCSI_NEG_DONE;
	}
	switch (k->type) {
	case KT_DIGEST:
		d = pick_digest(value);
		if (d < 0) {
			iscsi_text_add(out, key, "Reject");
			break;
		}
		if (k->id == ISCSI_KEY_HEADER_DIGEST)
			n->p.header_digest = d == 1;
		else
			n->p.data_digest = d == 1;
		iscsi_text_add(out, key, d ? "CRC32C" : "None");
		break;
	case KT_BOOL_AND:
	case KT_BOOL_OR:
		if (parse_bool(value, &b)) {
			iscsi_text_add(out, key, "Reject");
			break;
		}
		f = bool_field(n, k->id, &ours);
		*f = k->type == KT_BOOL_AND ? (b && ours) : (b || ours);
		iscsi_text_add(out, key, *f ? "Yes" : "No");
		break;
	case KT_NUM_MIN:
	case KT_NUM_MAX:
		if (parse_u32(value, 0, UINT32_MAX, &v) || v < k->min ||
		    v > k->max) {
			iscsi_text_add(out, key, "Reject");
			break;
		}
		ours = false;
		if (k->type == KT_NUM_MIN)
			v = v < num_ours(n, k->id) ? v : num_ours(n, k->id);
		else
			v = v > num_ours(n, k->id) ? v : num_ours(n, k->id);
		num_store(n, k->id, v);
		iscsi_text_addf(out, key, "%u", v);
		break;
	case KT_DECLARE:
		if (parse_u32(value, 0, UINT32_MAX, &v) || v < k->min ||
		    v > k->max) {
			iscsi_text_add(out, key, "Reject");
			break;
		}
		n->p.max_xmit_dsl = v;
		if (!n->declared_mrdsl) {
			iscsi_text_addf(out, key, "%u", n->p.max_recv_dsl);
			n->declared_mrdsl = true;
		}
		break;
	}
	return ISCSI_NEG_DONE;
}

void iscsi_neg_finish(struct iscsi_neg *n, struct iscsi_text *out)
{
	if (!n->declared_mrdsl) {
		iscsi_text_addf(out, "MaxRecvDataSegmentLength", "%u",
				n->p.max_recv_dsl);
		n->declared_mrdsl = true;
	}
	/* RFC 7143 13.14: FirstBurstLength MUST NOT exceed MaxBurstLength */
	if (n->p.first_burst > n->p.max_burst)
		n->p.first_burst = n->p.max_burst;
}

bool iscsi_key_unknown(const char *key)
{
	static const char *const known[] = {
		"AuthMethod",
		"CHAP_A",
		"CHAP_I",
		"CHAP_C",
		"CHAP_N",
		"CHAP_R",
		"SendTargets",
		"TargetName",
		"InitiatorName",
		"TargetAlias",
		"InitiatorAlias",
		"TargetAddress",
		"TargetPortalGroupTag",
		"SessionType",
	};
	unsigned int i;

	if (find_key(key) || obsolete_key(key))
		return false;
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(key, known[i]))
			return false;
	return true;
}

/* ---- login keys --------------------------------------------------------- */

int iscsi_login_key_declare(uint32_t *declared, const char *key)
{
	static const char *const keys[] = {
		"InitiatorName",
		"TargetName",
		"SessionType",
		"InitiatorAlias",
		"AuthMethod",
		"CHAP_A",
		"CHAP_I",
		"CHAP_C",
		"CHAP_N",
		"CHAP_R",
		"TargetAlias",
		"TargetAddress",
		"TargetPortalGroupTag",
		"SendTargets",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(key, keys[i]))
			continue;
		if (*declared & (1u << i))
			return -EPROTO;
		*declared |= 1u << i;
		return 1;
	}
	return 0;
}

const char *iscsi_log_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	unsigned char ch;

	for (; *in; in++) {
		ch = (unsigned char)*in;
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			if (o + 1 + 4 >= cap)
				goto cut;
			out[o++] = (char)ch;
			continue;
		}
		if (o + 4 + 4 >= cap)
			goto cut;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[ch >> 4];
		out[o++] = hex[ch & 15];
	}
	out[o] = '\0';
	return out;
cut:
	memcpy(out + o, "...", 4);
	return out;
}

/* ---- SendTargets ------------------------------------------------------- */

/* The initiator ACL ([iscsi] initiators), the same for login and discovery. */
static bool acl_allows(const struct cfg_iscsi *ic, const char *name)
{
	unsigned int i;

	if (!ic->ninitiators)
		return true;
	for (i = 0; i < ic->ninitiators; i++)
		if (!strcmp(ic->initiators[i], name))
			return true;
	return false;
}

static void add_target(struct iscsi_conn *c, unsigned int i,
		       struct iscsi_text *out)
{
	unsigned int p;

	iscsi_text_add(out, "TargetName", c->fe->names[i]);
	/* every portal: each one a path (its own portal group) */
	for (p = 0; p < c->fe->nportals; p++)
		iscsi_text_add(out, "TargetAddress", c->fe->address[p]);
}

void iscsi_sendtargets(struct iscsi_conn *c, const char *value,
		       struct iscsi_text *out)
{
	unsigned int i;

	/*
	 * Discovery shows only what login would let this initiator into
	 * (every target shares the one ACL): a stranger learns no names.
	 */
	if (!acl_allows(&c->fe->icfg, c->initiator))
		return;
	if (!strcmp(value, "All")) {
		/* every target in a discovery session; in a normal one too
		 * (RFC 7143 allows All there as well) */
		for (i = 0; i < c->fe->ntargets; i++)
			add_target(c, i, out);
		return;
	}
	if (!value[0]) {
		if (c->target >= 0)
			add_target(c, (unsigned int)c->target, out);
		return;
	}
	for (i = 0; i < c->fe->ntargets; i++)
		if (!strcmp(value, c->fe->names[i]))
			add_target(c, i, out);
}

/* ---- login --------------------------------------------------------------- */

/* The keys of one login request that the login itself handles. */
struct login_keys {
	const char *initiator, *target, *type, *auth;
	const char *chap_a, *chap_n, *chap_r, *chap_i, *chap_c;
};

static int find_target(const struct iscsi_fe *fe, const char *name)
{
	unsigned int i;

	for (i = 0; i < fe->ntargets; i++)
		if (!strcmp(fe->names[i], name))
			return (int)i;
	return -1;
}

static bool list_has(const char *list, const char *want)
{
	size_t wl = strlen(want), n;
	const char *s = list, *e;

	for (;;) {
		e = strchr(s, ',');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == wl && !strncmp(s, want, wl))
			return true;
		if (!e)
			return false;
		s = e + 1;
	}
}

/* Sends a login response; @status nonzero fails the login. */
static int login_respond(struct iscsi_conn *c, const uint8_t *req,
			 uint16_t status, bool transit, uint8_t csg,
			 uint8_t nsg, const struct iscsi_text *t)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0};
	int ret;

	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGIN_RSP);
	iscsi_bhs_set_csg(bhs, csg);
	if (!status && transit) {
		iscsi_bhs_set_flags(bhs, iscsi_bhs_flags(bhs) | ISCSI_LOGIN_T);
		iscsi_bhs_set_nsg(bhs, nsg);
	}
	iscsi_bhs_set_version_max(bhs, 0);
	iscsi_bhs_set_version_active(bhs, 0);
	iscsi_bhs_set_isid(bhs, iscsi_bhs_isid(req));
	iscsi_bhs_set_tsih(bhs, status ? 0 : c->login.tsih);
	iscsi_bhs_set_itt(bhs, iscsi_bhs_itt(req));
	iscsi_conn_fill_sn(c, bhs, true);
	iscsi_bhs_set_login_status(bhs, status);
	ret = iscsi_conn_queue_pdu(c, bhs, status ? NULL : t->buf,
				   status ? 0 : (uint32_t)t->len);
	if (status) {
		log_info("iscsi: %s: login of %s refused: status 0x%04x",
			 c->peer, c->initiator[0] ? c->initiator : "?", status);
		c->state = ISCSI_CONN_CLOSING;
	}
	return ret;
}

/* The login succeeded: register the session and start full feature phase. */
static uint16_t login_register(struct iscsi_conn *c)
{
	struct iscsi_sess_entry e = {0}, old;
	int ret;

	e.target = c->discovery ? -1 : c->target;
	e.tpgt = (uint16_t)(c->portal + 1);
	memcpy(e.isid, c->isid, 6);
	e.w = c->w;
	e.conn_id = c->id;
	snprintf(e.initiator, sizeof(e.initiator), "%s", c->initiator);
	snprintf(e.peer, sizeof(e.peer), "%s", c->peer);
	e.portal = c->portal;
	e.header_digest = c->neg.p.header_digest;
	e.data_digest = c->neg.p.data_digest;
	e.born_ns = c->born_ns;
	e.inflight = &c->inflight;
	/* its share of the buffers: every connection of the name charges it */
	if (iscsi_ini_get(&c->fe->initiators, c->initiator, &c->ini))
		return ISCSI_LOGIN_OUT_OF_RESOURCES;
	ret = iscsi_sess_add(&c->fe->sessions, &e, &old);
	if (ret < 0) {
		iscsi_ini_put(&c->fe->initiators, c->ini);
		c->ini = NULL;
		return ret == -EBUSY ? ISCSI_LOGIN_OUT_OF_RESOURCES
				     : ISCSI_LOGIN_TARGET_ERROR;
	}
	if (ret == 1) {
		/* session reinstatement: the old connection goes */
		log_info("iscsi: %s: %s reinstates session tsih %u", c->peer,
			 c->initiator, old.tsih);
		iscsi_worker_post(old.w, ISCSI_MSG_KILL, -1, old.conn_id, 0);
	}
	c->tsih = e.tsih;
	c->login.tsih = e.tsih;
	c->registered = true;
	snprintf(c->iport, sizeof(c->iport), "%s,i,0x%02x%02x%02x%02x%02x%02x",
		 c->initiator, c->isid[0], c->isid[1], c->isid[2], c->isid[3],
		 c->isid[4], c->isid[5]);
	return ISCSI_LOGIN_OK;
}

/* Security stage work on this PDU. Return: a login status. */
static uint16_t login_security(struct iscsi_conn *c, const struct login_keys *k,
			       struct iscsi_text *out)
{
	const struct cfg_iscsi *ic = &c->fe->icfg;
	struct iscsi_login *l = &c->login;
	bool need_chap = ic->chap_user[0] != '\0';
	int ret;

	if (k->auth) {
		if (l->auth_chosen) {
			iscsi_text_add(out, "AuthMethod", "Reject");
			return ISCSI_LOGIN_INITIATOR_ERROR;
		}
		l->auth_chosen = true;
		if (need_chap && list_has(k->auth, "CHAP")) {
			l->auth_chap = true;
			l->chap.state = ISCSI_CHAP_WANT_A;
			iscsi_text_add(out, "AuthMethod", "CHAP");
		} else if (!need_chap && list_has(k->auth, "None")) {
			l->authenticated = true;
			iscsi_text_add(out, "AuthMethod", "None");
		} else {
			iscsi_text_add(out, "AuthMethod", "Reject");
			return ISCSI_LOGIN_AUTH_FAILED;
		}
	}
	if (!l->auth_chap) {
		if (k->chap_a || k->chap_n || k->chap_r)
			return ISCSI_LOGIN_INITIATOR_ERROR;
		return ISCSI_LOGIN_OK;
	}
	if (l->chap.state == ISCSI_CHAP_WANT_A && k->chap_a) {
		char want[4];

		snprintf(want, sizeof(want), "%d", ISCSI_CHAP_MD5);
		if (!list_has(k->chap_a, want)) {
			iscsi_text_add(out, "CHAP_A", "Reject");
			return ISCSI_LOGIN_AUTH_FAILED;
		}
		if (iscsi_chap_challenge(&l->chap, out))
			return ISCSI_LOGIN_TARGET_ERROR;
		return ISCSI_LOGIN_OK;
	}
	if (l->chap.state == ISCSI_CHAP_WANT_R && (k->chap_n || k->chap_r)) {
		uint64_t now = iscsi_now_ns();
		unsigned int wait;

		/*
		 * An address whose last answers were wrong waits before the
		 * next one is even checked: a guessing loop gets one guess
		 * in 16 s, not thousands a second; "retry later" (class 3)
		 * lets a real initiator come back.
		 */
		wait = iscsi_auth_wait(&c->fe->auth, c->addr, now);
		if (wait) {
			log_info(
				"iscsi: %s: CHAP answer not checked: %u s left after failed ones",
				c->peer, wait);
			return ISCSI_LOGIN_SERVICE_UNAVAILABLE;
		}
		ret = iscsi_chap_check(&l->chap, ic, k->chap_n, k->chap_r,
				       k->chap_i, k->chap_c, out);
		if (ret) {
			wait = iscsi_auth_result(&c->fe->auth, c->addr, false,
						 now);
			log_info(
				"iscsi: %s: CHAP answer wrong; the next from this address waits %u s",
				c->peer, wait);
			return ISCSI_LOGIN_AUTH_FAILED;
		}
		iscsi_auth_result(&c->fe->auth, c->addr, true, now);
		l->authenticated = true;
		return ISCSI_LOGIN_OK;
	}
	if (k->chap_a || k->chap_n || k->chap_r || k->chap_i || k->chap_c)
		return ISCSI_LOGIN_INITIATOR_ERROR;
	return ISCSI_LOGIN_OK;
}

/* The first PDU's names: who logs in where. Return: a login status. */
static uint16_t login_names(struct iscsi_conn *c, const struct login_keys *k)
{
	const struct iscsi_fe *fe = c->fe;
	int t;

	char esc[96];

	if (!k->initiator)
		return ISCSI_LOGIN_MISSING_PARAMETER;
	if (!cfg_iscsi_name_valid(k->initiator)) {
		log_info(
			"iscsi: %s: InitiatorName \"%s\" is not an iSCSI name (RFC 3722)",
			c->peer,
			iscsi_log_escape(k->initiator, esc, sizeof(esc)));
		return ISCSI_LOGIN_INITIATOR_ERROR;
	}
	snprintf(c->initiator, sizeof(c->initiator), "%s", k->initiator);
	if (k->type && !strcmp(k->type, "Discovery")) {
		c->discovery = true;
		c->neg.discovery = true;
		c->target = -1;
		return ISCSI_LOGIN_OK;
	}
	if (k->type && strcmp(k->type, "Normal") != 0)
		return 0x0209; /* session type not supported */
	if (!k->target)
		return ISCSI_LOGIN_MISSING_PARAMETER;
	if (!cfg_iscsi_name_valid(k->target)) {
		log_info(
			"iscsi: %s: TargetName \"%s\" is not an iSCSI name (RFC 3722)",
			c->peer, iscsi_log_escape(k->target, esc, sizeof(esc)));
		return ISCSI_LOGIN_INITIATOR_ERROR;
	}
	t = find_target(fe, k->target);
	if (t < 0)
		return ISCSI_LOGIN_NOT_FOUND;
	if (!acl_allows(&fe->icfg, c->initiator))
		return ISCSI_LOGIN_FORBIDDEN;
	c->target = t;
	c->view = &fe->views[t];
	return ISCSI_LOGIN_OK;
}

/* Every key of the request. Return: a login status. */
static uint16_t login_keys(struct iscsi_conn *c, char *data, size_t len,
			   struct login_keys *k, struct iscsi_text *out)
{
	char *p = data, *end = data + len, *key, *val;
	int ret;

	/* a last pair without its NUL: the caller put one past @len */
	if (len && data[len - 1])
		end++;
	while ((ret = iscsi_text_next(&p, end, &key, &val)) == 1) {
		if (iscsi_login_key_declare(&c->login.declared, key) < 0) {
			log_info("iscsi: %s: login key %s sent twice", c->peer,
				 key);
			return ISCSI_LOGIN_INITIATOR_ERROR;
		}
		if (!strcmp(key, "InitiatorName"))
			k->initiator = val;
		else if (!strcmp(key, "TargetName"))
			k->target = val;
		else if (!strcmp(key, "SessionType"))
			k->type = val;
		else if (!strcmp(key, "InitiatorAlias"))
			;
		else if (!strcmp(key, "AuthMethod"))
			k->auth = val;
		else if (!strcmp(key, "CHAP_A"))
			k->chap_a = val;
		else if (!strcmp(key, "CHAP_N"))
			k->chap_n = val;
		else if (!strcmp(key, "CHAP_R"))
			k->chap_r = val;
		else if (!strcmp(key, "CHAP_I"))
			k->chap_i = val;
		else if (!strcmp(key, "CHAP_C"))
			k->chap_c = val;
		else if (!strcmp(key, "TargetAlias") ||
			 !strcmp(key, "TargetAddress") ||
			 !strcmp(key, "TargetPortalGroupTag") ||
			 !strcmp(key, "SendTargets"))
			/* the target's own declarations, or FFP only */
			iscsi_text_add(out, key, "Irrelevant");
		else {
			ret = iscsi_neg_key(&c->neg, key, val, true, out);
			if (ret < 0)
				return ISCSI_LOGIN_INITIATOR_ERROR;
			if (ret == ISCSI_NEG_NOT_MINE)
				iscsi_text_add(out, key, "NotUnderstood");
		}
	}
	return ret < 0 ? ISCSI_LOGIN_INITIATOR_ERROR : ISCSI_LOGIN_OK;
}

/* Appends continued text; the whole text so far in @all. */
static int login_gather(char **buf, size_t *blen, const char *data,
			uint32_t len)
{
	char *nb;

	if (*blen + len > ISCSI_TEXT_MAX)
		return -E2BIG;
	nb = realloc(*buf, *blen + len + 1);
	if (!nb)
		return -ENOMEM;
	memcpy(nb + *blen, data, len);
	*blen += len;
	nb[*blen] = '\0';
	*buf = nb;
	return 0;
}

int iscsi_login_pdu(struct iscsi_conn *c, char *data, uint32_t len)
{
	const uint8_t *req = c->cur_bhs;
	struct iscsi_login *l = &c->login;
	bool transit = iscsi_bhs_flags(req) & ISCSI_LOGIN_T,
	     cont = iscsi_bhs_flags(req) & ISCSI_LOGIN_C;
	uint8_t csg = iscsi_bhs_csg(req), nsg = iscsi_bhs_nsg(req);
	struct login_keys k = {0};
	char tbuf[8192];
	struct iscsi_text out = {.buf = tbuf, .cap = sizeof(tbuf)};
	uint16_t status = ISCSI_LOGIN_OK;
	char *all = data;
	size_t alen = len;
	int ret;

	if (!l->first_done) {
		/* the first request fixes ISID, TSIH, CID and the CmdSN */
		memcpy(c->isid, iscsi_bhs_isid(req), ISCSI_ISID_LEN);
		memcpy(l->isid, iscsi_bhs_isid(req), ISCSI_ISID_LEN);
		l->tsih = iscsi_bhs_tsih(req);
		l->cid = iscsi_bhs_cid(req);
		c->cid = l->cid;
		l->cmdsn = iscsi_bhs_cmdsn(req);
		c->exp_cmd_sn = l->cmdsn;
		c->max_cmd_sn = l->cmdsn + c->nfree_cmd - 1;
		l->stage = csg;
		l->first_done = true;
		/* Version-min above the only version, 0 */
		if (iscsi_bhs_version_min(req) > 0)
			return login_respond(c, req,
					     ISCSI_LOGIN_UNSUPPORTED_VERSION,
					     false, csg, nsg, &out);
		if (l->tsih) {
			/* a connection for an existing session: MaxConnections
			 * is 1, and connection recovery needs ERL 2 */
			return login_respond(c, req,
					     ISCSI_LOGIN_NO_SESSION_SPANNING,
					     false, csg, nsg, &out);
		}
	} else if (memcmp(iscsi_bhs_isid(req), l->isid, ISCSI_ISID_LEN) ||
		   iscsi_bhs_tsih(req) != l->tsih ||
		   iscsi_bhs_cid(req) != l->cid) {
		return login_respond(c, req, ISCSI_LOGIN_INITIATOR_ERROR, false,
				     csg, nsg, &out);
	}
	if ((transit && cont) || csg == 2 || (transit && nsg == 2) ||
	    (transit && nsg <= csg) || csg != l->stage)
		return login_respond(c, req, ISCSI_LOGIN_INITIATOR_ERROR, false,
				     csg, nsg, &out);

	if (cont || l->text) {
		ret = login_gather(&l->text, &l->text_len, data, len);
		if (ret)
			return login_respond(c, req,
					     ISCSI_LOGIN_INITIATOR_ERROR, false,
					     csg, nsg, &out);
		if (cont) {
			/* more text comes: an empty response asks for it */
			return login_respond(c, req, ISCSI_LOGIN_OK, false, csg,
					     csg, &out);
		}
		all = l->text;
		alen = l->text_len;
	}

	status = login_keys(c, all, alen, &k, &out);
	if (status)
		goto out;
	if (!l->have_names) {
		status = login_names(c, &k);
		if (status)
			goto out;
		l->have_names = true;
		if (!c->discovery) {
			iscsi_text_addf(&out, "TargetPortalGroupTag", "%u",
					c->portal + 1);
			l->tpgt_sent = true;
		}
	} else if (k.initiator || k.target || k.type) {
		/* the names are declared once, in the first request */
		status = ISCSI_LOGIN_INITIATOR_ERROR;
		goto out;
	}

	if (csg == ISCSI_STAGE_SECURITY) {
		status = login_security(c, &k, &out);
		if (status)
			goto out;
		if (transit && !l->authenticated) {
			if (c->fe->icfg.chap_user[0] &&
			    (!l->auth_chap ||
			     l->chap.state == ISCSI_CHAP_NONE)) {
				status = ISCSI_LOGIN_AUTH_FAILED;
				goto out;
			}
			if (!c->fe->icfg.chap_user[0] && !l->auth_chosen)
				l->authenticated = true;
			else
				transit = false; /* CHAP still going on */
		}
	} else {
		/* the operational stage: no security stage was done */
		if (k.auth || k.chap_a || k.chap_n || k.chap_r) {
			status = ISCSI_LOGIN_INITIATOR_ERROR;
			goto out;
		}
		if (!l->authenticated) {
			if (c->fe->icfg.chap_user[0]) {
				status = ISCSI_LOGIN_AUTH_FAILED;
				goto out;
			}
			l->authenticated = true;
		}
	}

	free(l->text);
	l->text = NULL;
	l->text_len = 0;
	if (transit && nsg == ISCSI_STAGE_FFP) {
		iscsi_neg_finish(&c->neg, &out);
		status = login_register(c);
		if (status)
			goto out;
	}
	if (out.overflow) {
		status = ISCSI_LOGIN_TARGET_ERROR;
		goto out;
	}
	ret = login_respond(c, req, ISCSI_LOGIN_OK, transit, csg, nsg, &out);
	if (ret)
		return ret;
	if (transit) {
		l->stage = nsg;
		if (nsg == ISCSI_STAGE_FFP) {
			c->p = c->neg.p;
			/* digests start with the first full feature PDU */
			c->rx.hdigest = c->p.header_digest;
			c->rx.ddigest = c->p.data_digest;
			c->state = ISCSI_CONN_FFP;
			iscsi_prelogin_put(c);
			log_info("iscsi: %s: %s logged in to %s (tsih %u)",
				 c->peer, c->initiator,
				 c->discovery ? "discovery"
					      : c->fe->names[c->target],
				 c->tsih);
		}
	}
	return 0;
out:
	free(l->text);
	l->text = NULL;
	l->text_len = 0;
	return login_respond(c, req, status, false, csg, nsg, &out);
}

/* ---- Text requests in full feature phase ----------------------------- */

static int text_respond(struct iscsi_conn *c, const uint8_t *req, bool final,
			const struct iscsi_text *t)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TEXT_RSP);
	iscsi_bhs_set_flags(bhs, final ? ISCSI_FLAG_F : ISCSI_TEXT_C);
	iscsi_bhs_set_lun(bhs, iscsi_bhs_lun(req));
	iscsi_bhs_set_itt(bhs, iscsi_bhs_itt(req));
	/* a continuation asks for more with a TTT; a final answer has none */
	iscsi_bhs_set_ttt(bhs, final ? ISCSI_RSVD_TAG : c->next_ttt++);
	iscsi_conn_fill_sn(c, bhs, true);
	return iscsi_conn_queue_pdu(c, bhs, t->buf, (uint32_t)t->len);
}

int iscsi_text_pdu(struct iscsi_conn *c, char *data, uint32_t len)
{
	const uint8_t *req = c->cur_bhs;
	bool cont = iscsi_bhs_flags(req) & ISCSI_TEXT_C;
	char tbuf[8192], *p, *end, *key, *val;
	struct iscsi_text out = {.buf = tbuf, .cap = sizeof(tbuf)};
	int ret;

	if (c->text && c->text_itt != iscsi_bhs_itt(req)) {
		/* a new text exchange while one was continuing: start over */
		free(c->text);
		c->text = NULL;
		c->text_len = 0;
	}
	if (cont || c->text) {
		if (login_gather(&c->text, &c->text_len, data, len))
			return -EPROTO;
		c->text_itt = iscsi_bhs_itt(req);
		if (cont)
			return text_respond(c, req, false, &out);
		data = c->text;
		len = (uint32_t)c->text_len;
	}
	/* the operational keys are settled at login: negotiate afresh */
	c->neg.seen = 0;
	p = data;
	end = data + len + (len && data[len - 1] ? 1 : 0);
	while ((ret = iscsi_text_next(&p, end, &key, &val)) == 1) {
		if (!strcmp(key, "SendTargets")) {
			iscsi_sendtargets(c, val, &out);
			continue;
		}
		ret = iscsi_neg_key(&c->neg, key, val, false, &out);
		if (ret == ISCSI_NEG_NOT_MINE)
			iscsi_text_add(&out, key,
				       iscsi_key_unknown(key) ? "NotUnderstood"
							      : "Reject");
	}
	c->p.max_xmit_dsl = c->neg.p.max_xmit_dsl;
	free(c->text);
	c->text = NULL;
	c->text_len = 0;
	if (ret < 0 || out.overflow) {
		out.len = 0;
		out.overflow = false;
	}
	return text_respond(c, req, true, &out);
}
