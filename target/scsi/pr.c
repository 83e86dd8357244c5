// SPDX-License-Identifier: MIT
/*
 * Reservations (SPC-4 5.12): PERSISTENT RESERVE IN and OUT with the six
 * reservation types, SPC-2 RESERVE and RELEASE with the SPC-4 5.13.3
 * exceptions (CRH 1), the access rules a command on a reserved LUN passes
 * (scsi_pr_conflict()) and the unit attentions reservations raise for one
 * I_T nexus. The state is a hash map from table LUN to a small record,
 * created on the first PERSISTENT RESERVE OUT or RESERVE and guarded by
 * one mutex; the command path of a target without reservation state pays
 * one load (scsi_pr_active()). Not supported: APTPL (PTPL_C 0) and
 * SPEC_I_PT (SIP_C 0). One target port: ALL_TG_PT is taken and reported,
 * and changes nothing else.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scsi_i.h"

/* Opcodes whose access depends on their CDB (SCSI_RESV_CDB). */
#define START_STOP_UNIT 0x1b
#define PREVENT_ALLOW_MEDIUM_REMOVAL 0x1e

/* Persistent reservation types (SPC-4 6.16.2); the others are obsolete. */
#define PR_WE 0x1
#define PR_EA 0x3
#define PR_WE_RO 0x5
#define PR_EA_RO 0x6
#define PR_WE_AR 0x7
#define PR_EA_AR 0x8
#define PR_LU_SCOPE 0x0

/* Unit attentions for one I_T nexus, in the order they are reported. */
#define PR_UA_RESV_PREEMPTED 0x01u /* 2Ah/03h RESERVATIONS PREEMPTED */
#define PR_UA_RESV_RELEASED 0x02u /* 2Ah/04h RESERVATIONS RELEASED */
#define PR_UA_REG_PREEMPTED 0x04u /* 2Ah/05h REGISTRATIONS PREEMPTED */

/* REPORT CAPABILITIES (SPC-4 6.15.4) */
#define PR_CAP_CRH 0x10
#define PR_CAP_ATP_C 0x04
#define PR_CAP_TMV 0x80
#define PR_ALLOW_CMDS 0x3 /* 011b: see scsi_pr_in() */
#define PR_TYPE_MASK_HI 0xea /* WR_EX_AR EX_AC_RO WR_EX_RO EX_AC WR_EX */
#define PR_TYPE_MASK_LO 0x01 /* EX_AC_AR */

#define PR_PARAM_LEN 24 /* the basic PR OUT parameter list */
#define PR_NAME_MAX 255 /* initiator port name, without NUL */
#define PR_TID_MAX (4 + PR_NAME_MAX + 1) /* iSCSI TransportID: 260 */
#define PR_MOVE_MAX (PR_PARAM_LEN + PR_TID_MAX)

/*
 * I_T nexuses one LUN keeps: registered, holding RESERVE(6)/(10) or with
 * a unit attention pending. A REGISTER past it fails with INSUFFICIENT
 * REGISTRATION RESOURCES; it also bounds PREEMPT AND ABORT's list.
 */
#define PR_MAX_IT 128u
#define PR_SHIFT_MIN 4u /* 16 buckets at first */
#define PR_SHIFT_MAX 20u /* 2^20: LUN_MAX_LUNS records */
#define PR_FILTER 4096u /* filter slots: LUN number modulo */

/*
 * One I_T nexus a LUN knows, named by the initiator port name when the
 * front end gives one (then a new session of that port is the same I_T
 * nexus), else by the nexus id. 32 bytes and the name.
 */
struct pr_it {
	char *name; /* owned copy, or NULL */
	uint64_t key; /* reservation key, when @registered */
	uint32_t nexus; /* the nexus id last seen with @name */
	bool nexus_valid; /* @nexus is a session that was seen */
	bool registered;
	bool all_tg_pt;
	bool holder; /* holds a reservation of a type other than
				  * all registrants (those: every registrant) */
	bool spc2; /* holds the RESERVE(6)/(10) reservation */
	uint8_t ua; /* PR_UA_* pending for it */
};

/*
 * A LUN's reservation state. It stays in the map while it holds anything
 * or its PRgeneration is not 0 (SPC-4 resets that only at power on): 40
 * bytes then, whatever the LUN's registrations were.
 */
struct pr_lun {
	struct pr_lun *next; /* hash chain */
	struct pr_it *it; /* @n in use, @cap allocated */
	uint32_t lun; /* table LUN */
	uint32_t lun_gen; /* lun_info.gen of the LUN it belongs to */
	uint32_t generation; /* PRgeneration */
	uint16_t n, cap;
	uint8_t type; /* persistent reservation type, 0: none */
	bool counted; /* counted in scsi_target.pr_active */
};

struct scsi_pr {
	pthread_mutex_t lock; /* everything below and every pr_lun */
	struct pr_lun **buckets; /* 1 << shift of them */
	unsigned int shift;
	uint32_t nluns;
	/*
	 * Counted records (pr_lun.counted) by LUN number modulo PR_FILTER,
	 * written under the mutex, read without it: a command on a LUN
	 * whose slot is 0 has nothing to check and skips the mutex, so a
	 * few reserved LUNs do not serialise the I/O of all the others.
	 * 8 KiB, with the map.
	 */
	uint16_t filter[PR_FILTER];
};

/* Who sent a command. */
struct pr_who {
	const char *name;
	uint32_t nexus;
};

/* A PERSISTENT RESERVE OUT command, taken apart and checked. */
struct pr_param {
	uint8_t sa, scope, type;
	uint64_t key, sa_key;
	bool all_tg_pt;
	bool unreg; /* REGISTER AND MOVE */
	uint16_t rtpi; /* REGISTER AND MOVE */
	char name[PR_NAME_MAX + 1]; /* REGISTER AND MOVE: the TransportID's */
};

/* I_T nexuses PREEMPT AND ABORT tells the front end to abort. */
struct pr_abort {
	unsigned int n;
	uint32_t nexus[PR_MAX_IT];
};

/* ---- reservation types ------------------------------------------------ */

static bool pr_type_valid(uint8_t type)
{
	switch (type) {
	case PR_WE:
	case PR_EA:
	case PR_WE_RO:
	case PR_EA_RO:
	case PR_WE_AR:
	case PR_EA_AR:
		return true;
	default:
		return false;
	}
}

static bool pr_all_reg(uint8_t type)
{
	return type == PR_WE_AR || type == PR_EA_AR;
}

static bool pr_reg_only(uint8_t type)
{
	return type == PR_WE_RO || type == PR_EA_RO;
}

static bool pr_excl_access(uint8_t type)
{
	return type == PR_EA || type == PR_EA_RO || type == PR_EA_AR;
}

/* ---- the records of one LUN ------------------------------------------- */

static struct pr_who pr_who_of(const struct scsi_cmd *cmd)
{
	struct pr_who w = {.nexus = cmd->nexus};
	const char *n = cmd->initiator_name;

	if (n && n[0] && strnlen(n, PR_NAME_MAX + 1) <= PR_NAME_MAX)
		w.name = n;
	return w;
}

static bool pr_it_is(const struct pr_it *it, const struct pr_who *w)
{
	if (w->name)
		return it->name && !strcasecmp(it->name, w->name);
	return !it->name && it->nexus == w->nexus;
}

/*
 * The record of @w, or -1. O(records), a string compare each for named
 * ones. @touch: @w is a live session (a command of it): remember its
 * nexus id, for PREEMPT AND ABORT and scsi_pr_nexus_lost().
 */
static int pr_it_find(struct pr_lun *e, const struct pr_who *w, bool touch)
{
	unsigned int i;

	for (i = 0; i < e->n; i++) {
		if (!pr_it_is(&e->it[i], w))
			continue;
		if (touch) {
			e->it[i].nexus = w->nexus;
			e->it[i].nexus_valid = true;
		}
		return (int)i;
	}
	return -1;
}

/*
 * A new, empty record; pr_commit() drops it again if nothing is set in
 * it. Moves the array: pointers into it do not survive, indexes do.
 * Return: its index, -ENOSPC past PR_MAX_IT, -ENOMEM.
 */
static int pr_it_add(struct pr_lun *e, const struct pr_who *w, bool live)
{
	struct pr_it *it;
	char *name = NULL;

	if (e->n >= PR_MAX_IT)
		return -ENOSPC;
	if (e->n == e->cap) {
		unsigned int cap = e->cap ? 2u * e->cap : 4u;

		if (cap > PR_MAX_IT)
			cap = PR_MAX_IT;
		it = realloc(e->it, cap * sizeof(*it));
		if (!it)
			return -ENOMEM;
		e->it = it;
		e->cap = (uint16_t)cap;
	}
	if (w->name) {
		name = strdup(w->name);
		if (!name)
			return -ENOMEM;
	}
	it = &e->it[e->n];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->nexus = w->nexus;
	it->nexus_valid = live;
	return e->n++;
}

static int pr_holder(const struct pr_lun *e)
{
	unsigned int i;

	for (i = 0; i < e->n; i++)
		if (e->it[i].holder)
			return (int)i;
	return -1;
}

static int pr_spc2_holder(const struct pr_lun *e)
{
	unsigned int i;

	for (i = 0; i < e->n; i++)
		if (e->it[i].spc2)
			return (int)i;
	return -1;
}

static unsigned int pr_nregistered(const struct pr_lun *e)
{
	unsigned int i, n = 0;

	for (i = 0; i < e->n; i++)
		n += e->it[i].registered;
	return n;
}

/* SPC-4 5.12.10: the persistent reservation holders. */
static bool pr_is_holder(const struct pr_lun *e, const struct pr_it *it)
{
	return e->type && it->registered && (pr_all_reg(e->type) || it->holder);
}

/* Registered I_T nexuses of a registrants only type reserve with it. */
static bool pr_has_access(const struct pr_lun *e, const struct pr_it *it)
{
	return e->type && it->registered &&
	       (pr_all_reg(e->type) || pr_reg_only(e->type) || it->holder);
}

static void pr_drop_reg(struct pr_it *it)
{
	it->registered = false;
	it->key = 0;
	it->all_tg_pt = false;
	it->holder = false;
}

static void pr_drop_resv(struct pr_lun *e)
{
	unsigned int i;

	e->type = 0;
	for (i = 0; i < e->n; i++)
		e->it[i].holder = false;
}

/* Unit attention @bit for every registered I_T nexus but record @except. */
static void pr_ua_registered(struct pr_lun *e, int except, uint8_t bit)
{
	unsigned int i;

	for (i = 0; i < e->n; i++)
		if (e->it[i].registered && (int)i != except)
			e->it[i].ua |= bit;
}

/*
 * SPC-4 5.12.11.3, unregistering: a holder's reservation goes with its
 * registration, but an all registrants one only with the last registrant.
 * Releasing a registrants only type raises RESERVATIONS RELEASED for the
 * other registrants; Write Exclusive and Exclusive Access raise nothing.
 */
static void pr_unregister(struct pr_lun *e, unsigned int i)
{
	bool held = pr_is_holder(e, &e->it[i]);
	uint8_t type = e->type;

	pr_drop_reg(&e->it[i]);
	if (!held)
		return;
	if (pr_all_reg(type)) {
		if (!pr_nregistered(e))
			pr_drop_resv(e);
		return;
	}
	pr_drop_resv(e);
	if (pr_reg_only(type))
		pr_ua_registered(e, (int)i, PR_UA_RESV_RELEASED);
}

/* ---- the map ---------------------------------------------------------- */

static struct scsi_pr *pr_root(const struct scsi_target *t)
{
	/* acquire: pairs with the publishing compare-and-swap below */
	return __atomic_load_n(&t->pr, __ATOMIC_ACQUIRE);
}

/*
 * The target's map, created on first use. Racing creators each build one;
 * the compare-and-swap publishes the first, the others free theirs.
 * Return: 0, -ENOMEM.
 */
static int pr_root_create(struct scsi_target *t, struct scsi_pr **out)
{
	struct scsi_pr *p = pr_root(t), *seen = NULL;

	if (p) {
		*out = p;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->shift = PR_SHIFT_MIN;
	p->buckets = calloc(1u << p->shift, sizeof(*p->buckets));
	if (!p->buckets)
		goto out_free;
	if (pthread_mutex_init(&p->lock, NULL))
		goto out_buckets;
	/* acq_rel: the map is initialised before another thread sees it */
	if (!__atomic_compare_exchange_n(&t->pr, &seen, p, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		pthread_mutex_destroy(&p->lock);
		free(p->buckets);
		free(p);
		p = seen;
	}
	*out = p;
	return 0;

out_buckets:
	free(p->buckets);
out_free:
	free(p);
	return -ENOMEM;
}

/* Fibonacci hashing: consecutive LUN numbers land in distinct buckets. */
static unsigned int pr_bucket(uint32_t lun, unsigned int shift)
{
	return (unsigned int)((lun * 0x9e3779b1u) >> (32 - shift));
}

static struct pr_lun *pr_find(const struct scsi_pr *p, uint32_t lun)
{
	struct pr_lun *e;

	for (e = p->buckets[pr_bucket(lun, p->shift)]; e; e = e->next)
		if (e->lun == lun)
			return e;
	return NULL;
}

/* Twice the buckets when the map is full; without memory, longer chains. */
static void pr_grow(struct scsi_pr *p)
{
	unsigned int shift = p->shift + 1, i;
	struct pr_lun **b, *e, *next;

	if (p->nluns < (1u << p->shift) || shift > PR_SHIFT_MAX)
		return;
	b = calloc(1u << shift, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < (1u << p->shift); i++) {
		for (e = p->buckets[i]; e; e = next) {
			next = e->next;
			e->next = b[pr_bucket(e->lun, shift)];
			b[pr_bucket(e->lun, shift)] = e;
		}
	}
	free(p->buckets);
	p->buckets = b;
	p->shift = shift;
}

static void pr_lun_free_its(struct pr_lun *e)
{
	unsigned int i;

	for (i = 0; i < e->n; i++)
		free(e->it[i].name);
	free(e->it);
	e->it = NULL;
	e->n = 0;
	e->cap = 0;
}

static void pr_lun_unlink(struct scsi_pr *p, struct pr_lun *e)
{
	struct pr_lun **pp = &p->buckets[pr_bucket(e->lun, p->shift)];

	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	p->nluns--;
}

/*
 * After any change to @e: drop the records with nothing left in them,
 * count @e in pr_active while commands must look at it (a reservation of
 * either kind or a pending unit attention), and drop @e itself when it
 * holds nothing and has a PRgeneration of 0. O(records).
 * Return: @e, or NULL once it is freed.
 */
static struct pr_lun *pr_commit(struct scsi_target *t, struct scsi_pr *p,
				struct pr_lun *e)
{
	unsigned int i, j = 0;
	bool need = e->type;

	for (i = 0; i < e->n; i++) {
		struct pr_it *it = &e->it[i];

		if (!it->registered && !it->spc2 && !it->ua) {
			free(it->name);
			continue;
		}
		need |= it->spc2 || it->ua;
		e->it[j++] = *it;
	}
	e->n = (uint16_t)j;
	if (!e->n)
		pr_lun_free_its(e);
	if (need != e->counted) {
		uint16_t *slot = &p->filter[e->lun % PR_FILTER];

		e->counted = need;
		/* release: the state is in place before a command is sent in */
		if (need) {
			__atomic_fetch_add(slot, 1, __ATOMIC_RELEASE);
			__atomic_fetch_add(&t->pr_active, 1, __ATOMIC_RELEASE);
		} else {
			__atomic_fetch_sub(slot, 1, __ATOMIC_RELEASE);
			__atomic_fetch_sub(&t->pr_active, 1, __ATOMIC_RELEASE);
		}
	}
	if (e->n || e->type || e->generation)
		return e;
	pr_lun_unlink(p, e);
	free(e);
	return NULL;
}

/*
 * The record of @c's LUN. One left by a LUN since removed (another
 * lun_info.gen) is wiped first: a new LUN starts with nothing, PRgeneration
 * 0 as after power on. @create makes one if there is none.
 * Return: 0 (*@out NULL: none), -ENOMEM.
 */
static int pr_lun_of(struct scsi_ctx *c, struct scsi_pr *p, bool create,
		     struct pr_lun **out)
{
	struct pr_lun *e = pr_find(p, c->table_lun);

	if (e && e->lun_gen != c->li.gen) {
		pr_lun_free_its(e);
		e->type = 0;
		e->generation = 0;
		e = pr_commit(c->cmd->tgt, p, e);
	}
	if (!e && create) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->lun = c->table_lun;
		e->lun_gen = c->li.gen;
		e->next = p->buckets[pr_bucket(e->lun, p->shift)];
		p->buckets[pr_bucket(e->lun, p->shift)] = e;
		p->nluns++;
		pr_grow(p);
	}
	*out = e;
	return 0;
}

/* ---- sense ------------------------------------------------------------ */

static void pr_conflict(struct scsi_ctx *c)
{
	c->cmd->status = SCSI_RESERVATION_CONFLICT;
	c->cmd->sense_len = 0;
}

static void pr_param_length_error(struct scsi_ctx *c)
{
	scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

/* -ENOSPC and -ENOMEM: INSUFFICIENT (REGISTRATION) RESOURCES. */
static void pr_no_resources(struct scsi_ctx *c, bool registration)
{
	if (registration)
		scsi_sense(c, SK_ILLEGAL_REQUEST,
			   ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
	else
		scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_RESOURCES);
}

static int8_t pr_top_bit(uint8_t v)
{
	return (int8_t)(31 - __builtin_clz(v));
}

/* ---- the command path ------------------------------------------------- */

/*
 * The map, if @c's LUN may have something its commands must pass: one
 * more load (the LUN's filter slot, acquire: pairs with pr_commit()) and
 * no mutex for a LUN whose slot is 0.
 */
static struct scsi_pr *pr_root_for(const struct scsi_ctx *c)
{
	struct scsi_pr *p;

	if (!c->pr)
		return NULL;
	p = pr_root(c->cmd->tgt);
	if (!p || !__atomic_load_n(&p->filter[c->table_lun % PR_FILTER],
				   __ATOMIC_ACQUIRE))
		return NULL;
	return p;
}

/* SCSI_RESV_CDB: the SBC-4 and SPC-4 rows that depend on a field. */
static bool pr_cdb_allowed(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case START_STOP_UNIT:
		/* START 1 with POWER CONDITION 0h; LOEJ, NO_FLUSH aside */
		return (cdb[4] & 0xf1) == 0x01;
	case PREVENT_ALLOW_MEDIUM_REMOVAL:
		return !(cdb[4] & 0x03);
	default:
		return false;
	}
}

/*
 * SPC-2 5.5.1: a LUN reserved with RESERVE conflicts every command of
 * another I_T nexus but INQUIRY, REPORT LUNS and REQUEST SENSE (and
 * RELEASE, which then completes without effect, and the PR commands, which
 * conflict for everyone: both in their handlers). A persistent reservation
 * conflicts what c->op->resv does not allow to an I_T nexus without access.
 */
bool scsi_pr_conflict(struct scsi_ctx *c)
{
	uint8_t resv = c->op->resv, type;
	struct pr_who w;
	struct scsi_pr *p;
	struct pr_lun *e;
	bool conflict = false;
	int i, h;

	if (resv & SCSI_RESV_SELF)
		return false;
	p = pr_root_for(c);
	if (!p)
		return false;
	w = pr_who_of(c->cmd);
	pthread_mutex_lock(&p->lock);
	pr_lun_of(c, p, false, &e);
	if (!e)
		goto out_unlock;
	i = pr_it_find(e, &w, true);
	h = pr_spc2_holder(e);
	if (h >= 0) {
		conflict = h != i && !(resv & SCSI_RESV_SPC2);
		goto out_unlock;
	}
	type = e->type;
	if (!type || (i >= 0 && pr_has_access(e, &e->it[i])))
		goto out_unlock;
	if (resv & SCSI_RESV_CDB)
		conflict = !pr_cdb_allowed(c->cdb);
	else
		conflict = !(resv & (pr_excl_access(type) ? SCSI_RESV_EA
							  : SCSI_RESV_WE));
out_unlock:
	pthread_mutex_unlock(&p->lock);
	return conflict;
}

bool scsi_pr_ua_take(struct scsi_ctx *c, uint8_t *asc, uint8_t *ascq)
{
	struct scsi_target *t = c->cmd->tgt;
	struct pr_who w;
	struct scsi_pr *p;
	struct pr_lun *e;
	bool taken = false;
	uint8_t bit;
	int i;

	if (!c->have_lun)
		return false;
	p = pr_root_for(c);
	if (!p)
		return false;
	w = pr_who_of(c->cmd);
	pthread_mutex_lock(&p->lock);
	pr_lun_of(c, p, false, &e);
	if (!e)
		goto out_unlock;
	i = pr_it_find(e, &w, true);
	if (i < 0 || !e->it[i].ua)
		goto out_unlock;
	bit = e->it[i].ua & (uint8_t)-e->it[i].ua;
	e->it[i].ua &= (uint8_t)~bit;
	if (bit == PR_UA_RESV_PREEMPTED)
		ASC_PUT(*asc, *ascq, ASC_RESERVATIONS_PREEMPTED);
	else if (bit == PR_UA_RESV_RELEASED)
		ASC_PUT(*asc, *ascq, ASC_RESERVATIONS_RELEASED);
	else
		ASC_PUT(*asc, *ascq, ASC_REGISTRATIONS_PREEMPTED);
	taken = true;
	pr_commit(t, p, e);
out_unlock:
	pthread_mutex_unlock(&p->lock);
	return taken;
}

/* ---- PERSISTENT RESERVE IN -------------------------------------------- */

/* Data-In in pieces, each at its offset and cut at the allocation length. */
struct pr_resp {
	struct scsi_ctx *c;
	size_t off;
	size_t alloc;
};

static void pr_put(struct pr_resp *o, const void *buf, size_t len)
{
	if (o->off < o->alloc)
		scsi_copy_in_at(o->c, buf,
				len < o->alloc - o->off ? len
							: o->alloc - o->off,
				o->off);
	o->off += len;
}

/* PRGENERATION and ADDITIONAL LENGTH (the full length, whatever is cut). */
static void pr_header(struct scsi_ctx *c, const struct pr_lun *e,
		      size_t add_len, size_t alloc)
{
	uint8_t hdr[8];

	put_be32(hdr, e ? e->generation : 0);
	put_be32(hdr + 4, (uint32_t)add_len);
	scsi_copy_in_at(c, hdr, alloc < sizeof(hdr) ? alloc : sizeof(hdr), 0);
}

static void pr_read_keys(struct scsi_ctx *c, const struct pr_lun *e,
			 size_t alloc)
{
	struct pr_resp o = {.c = c, .off = 8, .alloc = alloc};
	uint8_t key[8];
	unsigned int i;

	for (i = 0; e && i < e->n; i++) {
		if (!e->it[i].registered)
			continue;
		put_be64(key, e->it[i].key);
		pr_put(&o, key, sizeof(key));
	}
	pr_header(c, e, o.off - 8, alloc);
}

/*
 * The holder's key, or 0 for the all registrants types (SPC-4 5.12.10:
 * every registrant holds those).
 */
static void pr_read_reservation(struct scsi_ctx *c, const struct pr_lun *e,
				size_t alloc)
{
	struct pr_resp o = {.c = c, .off = 8, .alloc = alloc};
	uint8_t d[16] = {0};
	int h;

	if (e && e->type) {
		h = pr_holder(e);
		if (!pr_all_reg(e->type) && h >= 0)
			put_be64(d, e->it[h].key);
		d[13] = (uint8_t)(PR_LU_SCOPE << 4 | e->type);
		pr_put(&o, d, sizeof(d));
	}
	pr_header(c, e, o.off - 8, alloc);
}

/*
 * CRH 1 (the RESERVE/RELEASE exceptions are implemented), SIP_C 0, ATP_C 1,
 * PTPL_C 0; TMV 1 with all six types; ALLOW COMMANDS 011b: TEST UNIT READY
 * passes Write Exclusive and Exclusive Access reservations, MODE SENSE,
 * REPORT SUPPORTED OPERATION CODES and REPORT SUPPORTED TASK MANAGEMENT
 * FUNCTIONS pass Write Exclusive ones (the others of that list are not
 * emulated).
 */
static void pr_report_capabilities(struct scsi_ctx *c, size_t alloc)
{
	uint8_t d[8] = {0};

	put_be16(d, sizeof(d));
	d[2] = PR_CAP_CRH | PR_CAP_ATP_C;
	d[3] = PR_CAP_TMV | PR_ALLOW_CMDS << 4;
	d[4] = PR_TYPE_MASK_HI;
	d[5] = PR_TYPE_MASK_LO;
	scsi_copy_in(c, d, alloc < sizeof(d) ? alloc : sizeof(d));
}

/*
 * The TransportID of an I_T nexus's initiator port (SPC-4 7.6.4). A named
 * one is iSCSI's: format 01b (initiator port: name, ",i,0x", ISID) when the
 * name has the separator, else 00b (initiator device); the name with its
 * NUL padded to a multiple of 4 bytes, at least 20. An unnamed one has
 * only its nexus id: a SAS TransportID whose address is NAA 3h (locally
 * assigned) and the id, so that each I_T nexus still reads as its own
 * port. @buf holds PR_TID_MAX. Return: the length.
 */
static size_t pr_transport_id(const struct pr_it *it, uint8_t *buf)
{
	size_t len, pad;

	if (!it->name) {
		memset(buf, 0, 24);
		buf[0] = SCSI_PROTOCOL_SAS;
		put_be64(buf + 4, 0x3ull << 60 | it->nexus);
		return 24;
	}
	len = strlen(it->name);
	pad = (len + 1 + 3) & ~(size_t)3;
	if (pad < 20)
		pad = 20;
	memset(buf, 0, 4 + pad);
	buf[0] = (strcasestr(it->name, ",i,0x") ? 0x40 : 0x00) |
		 SCSI_PROTOCOL_ISCSI;
	put_be16(buf + 2, (uint16_t)pad);
	memcpy(buf + 4, it->name, len);
	return 4 + pad;
}

/*
 * One descriptor per registered I_T nexus: key, ALL_TG_PT, R_HOLDER with
 * scope and type for a holder, the relative target port identifier (the
 * only port) and the TransportID.
 */
static void pr_read_full_status(struct scsi_ctx *c, const struct pr_lun *e,
				size_t alloc)
{
	struct pr_resp o = {.c = c, .off = 8, .alloc = alloc};
	uint8_t d[24 + PR_TID_MAX];
	unsigned int i;
	size_t tl;

	for (i = 0; e && i < e->n; i++) {
		const struct pr_it *it = &e->it[i];

		if (!it->registered)
			continue;
		memset(d, 0, 24);
		put_be64(d, it->key);
		d[12] = it->all_tg_pt ? 0x02 : 0x00;
		if (pr_is_holder(e, it)) {
			d[12] |= 0x01;
			d[13] = (uint8_t)(PR_LU_SCOPE << 4 | e->type);
		}
		put_be16(d + 18, c->cmd->tgt->port_id);
		tl = pr_transport_id(it, d + 24);
		put_be32(d + 20, (uint32_t)tl);
		pr_put(&o, d, 24 + tl);
	}
	pr_header(c, e, o.off - 8, alloc);
}

/*
 * PERSISTENT RESERVE IN (the service action was checked by the table).
 * Under a RESERVE(6)/(10) reservation it conflicts for every I_T nexus,
 * the holder too (SPC-2 5.5.1). The data is built under the mutex, so it
 * is one consistent snapshot; no allocation.
 */
enum scsi_disposition scsi_pr_in(struct scsi_ctx *c)
{
	size_t alloc = get_be16(c->cdb + 7);
	struct scsi_pr *p = pr_root(c->cmd->tgt);
	struct pr_lun *e = NULL;

	if (p) {
		pthread_mutex_lock(&p->lock);
		pr_lun_of(c, p, false, &e);
		if (e && pr_spc2_holder(e) >= 0) {
			pr_conflict(c);
			goto out_unlock;
		}
	}
	switch (c->cdb[1] & 0x1f) {
	case SCSI_PRIN_READ_KEYS:
		pr_read_keys(c, e, alloc);
		break;
	case SCSI_PRIN_READ_RESERVATION:
		pr_read_reservation(c, e, alloc);
		break;
	case SCSI_PRIN_REPORT_CAPABILITIES:
		pr_report_capabilities(c, alloc);
		break;
	default:
		pr_read_full_status(c, e, alloc);
		break;
	}
out_unlock:
	if (p)
		pthread_mutex_unlock(&p->lock);
	return SCSI_DONE;
}

/* ---- PERSISTENT RESERVE OUT: the parameter list ----------------------- */

/*
 * REGISTER AND MOVE's list (SPC-4 6.16.4): UNREG, the relative target
 * port identifier and one iSCSI TransportID of format 01b: the destination
 * must be an initiator port, and a port is what an I_T nexus is known by
 * here. The list is exactly the header and the TransportID.
 */
static bool pr_move_parse(struct scsi_ctx *c, const uint8_t *buf, uint32_t pll,
			  struct pr_param *prm)
{
	const uint8_t *tid = buf + PR_PARAM_LEN;
	uint32_t tl = get_be32(buf + 20);
	size_t addl, len;

	if (buf[16]) {
		scsi_sense_param(c, 16, pr_top_bit(buf[16]));
		return false;
	}
	if (buf[17] & 0xfc) {
		scsi_sense_param(c, 17, pr_top_bit(buf[17] & 0xfc));
		return false;
	}
	if (buf[17] & 0x01) {
		scsi_sense_param(c, 17, 0); /* APTPL: PTPL_C is 0 */
		return false;
	}
	prm->unreg = buf[17] & 0x02;
	prm->rtpi = get_be16(buf + 18);
	if ((uint64_t)PR_PARAM_LEN + tl != pll) {
		pr_param_length_error(c);
		return false;
	}
	if (tl < 24 || tl % 4) {
		scsi_sense_param(c, 20, 7);
		return false;
	}
	if ((tid[0] & 0x0f) != SCSI_PROTOCOL_ISCSI || (tid[0] & 0x30)) {
		scsi_sense_param(c, PR_PARAM_LEN, (tid[0] & 0x30) ? 5 : 3);
		return false;
	}
	if (tid[0] >> 6 != 1) {
		scsi_sense_param(c, PR_PARAM_LEN, 7);
		return false;
	}
	addl = get_be16(tid + 2);
	if (addl < 20 || addl % 4 || 4 + addl > tl) {
		scsi_sense_param(c, PR_PARAM_LEN + 2, 7);
		return false;
	}
	len = strnlen((const char *)tid + 4, addl);
	if (!len || len == addl || len > PR_NAME_MAX) {
		scsi_sense_param(c, PR_PARAM_LEN + 4, -1);
		return false;
	}
	memcpy(prm->name, tid + 4, len);
	prm->name[len] = '\0';
	if (!strcasestr(prm->name, ",i,0x")) {
		scsi_sense_param(c, PR_PARAM_LEN + 4, -1);
		return false;
	}
	return true;
}

/*
 * The CDB and parameter list checks that need no state, in this order:
 * PARAMETER LIST LENGTH under 24 (1Ah/00h); a Data-Out shorter than it
 * (1Ah/00h); SPEC_I_PT 1 (unsupported: SIP_C 0) as INVALID FIELD IN
 * PARAMETER LIST; a length other than 24 (1Ah/00h); reserved bits; APTPL
 * 1 for the service actions that take it (unsupported: PTPL_C 0); for
 * RESERVE, a SCOPE other than LU_SCOPE or an unsupported TYPE as INVALID
 * FIELD IN CDB.
 */
static bool pr_out_parse(struct scsi_ctx *c, uint8_t *buf, struct pr_param *prm)
{
	const uint8_t *cdb = c->cdb;
	uint32_t pll = get_be32(cdb + 5);
	size_t want;

	memset(prm, 0, sizeof(*prm));
	prm->sa = cdb[1] & 0x1f;
	prm->scope = cdb[2] >> 4;
	prm->type = cdb[2] & 0x0f;
	if (pll < PR_PARAM_LEN) {
		pr_param_length_error(c);
		return false;
	}
	if (prm->sa == SCSI_PROUT_REGISTER_AND_MOVE && pll > PR_MOVE_MAX) {
		scsi_sense_cdb(c, 5, 7);
		return false;
	}
	want = prm->sa == SCSI_PROUT_REGISTER_AND_MOVE ? pll : PR_PARAM_LEN;
	if (scsi_copy_out(c, buf, want, 0) != want) {
		pr_param_length_error(c);
		return false;
	}
	prm->key = get_be64(buf);
	prm->sa_key = get_be64(buf + 8);
	if (prm->sa == SCSI_PROUT_REGISTER_AND_MOVE)
		return pr_move_parse(c, buf, pll, prm);
	if (buf[20] & 0x08) {
		scsi_sense_param(c, 20, 3);
		return false;
	}
	if (pll != PR_PARAM_LEN) {
		pr_param_length_error(c);
		return false;
	}
	if (buf[20] & 0xf2) {
		scsi_sense_param(c, 20, pr_top_bit(buf[20] & 0xf2));
		return false;
	}
	if (buf[21]) {
		scsi_sense_param(c, 21, pr_top_bit(buf[21]));
		return false;
	}
	if ((buf[20] & 0x01) && (prm->sa == SCSI_PROUT_REGISTER ||
				 prm->sa == SCSI_PROUT_REGISTER_AND_IGNORE)) {
		scsi_sense_param(c, 20, 0);
		return false;
	}
	prm->all_tg_pt = buf[20] & 0x04;
	if (prm->sa == SCSI_PROUT_RESERVE) {
		if (prm->scope != PR_LU_SCOPE) {
			scsi_sense_cdb(c, 2, 7);
			return false;
		}
		if (!pr_type_valid(prm->type)) {
			scsi_sense_cdb(c, 2, 3);
			return false;
		}
	}
	return true;
}

/* ---- PERSISTENT RESERVE OUT: the service actions ---------------------- */

/*
 * REGISTER and REGISTER AND IGNORE EXISTING KEY (SPC-4 5.12.7): register
 * an unregistered I_T nexus (REGISTER: only with RESERVATION KEY 0), change
 * a registered one's key, or unregister it with SERVICE ACTION RESERVATION
 * KEY 0. An unregistered one asking for key 0 changes nothing.
 * Return: whether PRgeneration counts it.
 */
static bool pr_register(struct scsi_ctx *c, struct pr_lun *e, int i,
			const struct pr_param *prm, const struct pr_who *w)
{
	struct pr_it *it;

	if (i >= 0 && e->it[i].registered) {
		if (prm->sa_key)
			e->it[i].key = prm->sa_key;
		else
			pr_unregister(e, (unsigned int)i);
		return true;
	}
	if (prm->sa == SCSI_PROUT_REGISTER && prm->key) {
		pr_conflict(c);
		return false;
	}
	if (!prm->sa_key)
		return false;
	if (i < 0) {
		i = pr_it_add(e, w, true);
		if (i < 0) {
			pr_no_resources(c, true);
			return false;
		}
	}
	it = &e->it[i];
	it->registered = true;
	it->key = prm->sa_key;
	it->all_tg_pt = prm->all_tg_pt;
	return true;
}

/*
 * RESERVE (5.12.9): a registered I_T nexus takes the reservation; the
 * holder asking again for the same type is GOOD; anything else while a
 * reservation exists conflicts.
 */
static void pr_reserve(struct scsi_ctx *c, struct pr_lun *e, int i,
		       const struct pr_param *prm)
{
	if (e->type) {
		if (!pr_is_holder(e, &e->it[i]) || e->type != prm->type)
			pr_conflict(c);
		return;
	}
	e->type = prm->type;
	e->it[i].holder = !pr_all_reg(prm->type);
}

/*
 * RELEASE (5.12.11.2): GOOD without effect from a non-holder or with no
 * reservation; from a holder whose TYPE or SCOPE differ, INVALID RELEASE
 * OF PERSISTENT RESERVATION; else released, with RESERVATIONS RELEASED
 * for the other registrants of a registrants only or all registrants type.
 */
static void pr_release(struct scsi_ctx *c, struct pr_lun *e, int i,
		       const struct pr_param *prm)
{
	uint8_t type = e->type;

	if (!type || !pr_is_holder(e, &e->it[i]))
		return;
	if (prm->type != type || prm->scope != PR_LU_SCOPE) {
		scsi_sense(c, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
		return;
	}
	pr_drop_resv(e);
	if (pr_reg_only(type) || pr_all_reg(type))
		pr_ua_registered(e, i, PR_UA_RESV_RELEASED);
}

/*
 * CLEAR (5.12.11.6): the reservation and every registration go, with
 * RESERVATIONS PREEMPTED for every other registered I_T nexus.
 */
static void pr_clear(struct pr_lun *e, int i)
{
	unsigned int j;

	pr_drop_resv(e);
	pr_ua_registered(e, i, PR_UA_RESV_PREEMPTED);
	for (j = 0; j < e->n; j++)
		pr_drop_reg(&e->it[j]);
}

static void pr_abort_add(struct pr_abort *ab, const struct pr_it *it)
{
	if (ab && it->nexus_valid && ab->n < PR_MAX_IT)
		ab->nexus[ab->n++] = it->nexus;
}

/*
 * PREEMPT and PREEMPT AND ABORT (5.12.11.4, 5.12.11.5). SERVICE ACTION
 * RESERVATION KEY 0 is only for an all registrants reservation (else
 * INVALID FIELD IN PARAMETER LIST). When it names the holder (the holder's
 * key; 0 for all registrants) the reservation is preempted: the other
 * I_T nexuses with that key (all others, for 0) lose their registrations
 * with REGISTRATIONS PREEMPTED, the sender holds a reservation of the
 * CDB's TYPE and SCOPE, and if the type changed the remaining registrants
 * get RESERVATIONS RELEASED. Otherwise only the registrations with that
 * key go (the sender's too, if it has it; TYPE and SCOPE are ignored), and
 * a key nobody has is RESERVATION CONFLICT. @ab, for PREEMPT AND ABORT,
 * gets every I_T nexus registered with the key (all of them, for 0).
 * Return: whether PRgeneration counts it.
 */
static bool pr_preempt(struct scsi_ctx *c, struct pr_lun *e, int i,
		       const struct pr_param *prm, struct pr_abort *ab)
{
	uint8_t old = e->type;
	bool ar = old && pr_all_reg(old);
	int h = pr_holder(e);
	unsigned int j, hits = 0;
	struct pr_it *it;

	if (!prm->sa_key && !ar) {
		scsi_sense_param(c, 8, 7);
		return false;
	}
	if (ar ? !prm->sa_key : h >= 0 && e->it[h].key == prm->sa_key) {
		if (prm->scope != PR_LU_SCOPE) {
			scsi_sense_cdb(c, 2, 7);
			return false;
		}
		if (!pr_type_valid(prm->type)) {
			scsi_sense_cdb(c, 2, 3);
			return false;
		}
		for (j = 0; j < e->n; j++) {
			it = &e->it[j];
			if (!it->registered ||
			    (prm->sa_key && it->key != prm->sa_key))
				continue;
			pr_abort_add(ab, it);
			if ((int)j == i)
				continue;
			pr_drop_reg(it);
			it->ua |= PR_UA_REG_PREEMPTED;
		}
		pr_drop_resv(e);
		e->type = prm->type;
		e->it[i].holder = !pr_all_reg(prm->type);
		if (prm->type != old)
			pr_ua_registered(e, i, PR_UA_RESV_RELEASED);
		return true;
	}
	for (j = 0; j < e->n; j++)
		hits += e->it[j].registered && e->it[j].key == prm->sa_key;
	if (!hits) {
		pr_conflict(c);
		return false;
	}
	for (j = 0; j < e->n; j++) {
		it = &e->it[j];
		if (!it->registered || it->key != prm->sa_key)
			continue;
		pr_abort_add(ab, it);
		pr_drop_reg(it);
		if ((int)j != i)
			it->ua |= PR_UA_REG_PREEMPTED;
	}
	if (ar && !pr_nregistered(e))
		pr_drop_resv(e);
	return true;
}

/*
 * REGISTER AND MOVE (5.12.8): the holder hands its reservation, same type
 * and scope, to the I_T nexus the TransportID names on the given target
 * port, registering it with SERVICE ACTION RESERVATION KEY (or changing
 * its key), and with UNREG unregisters itself. INVALID FIELD IN CDB
 * without a reservation; RESERVATION CONFLICT from a non-holder or for an
 * all registrants type; INVALID FIELD IN PARAMETER LIST for key 0, a port
 * that is not this one, or the sender's own port. No unit attention.
 * Return: whether PRgeneration counts it.
 */
static bool pr_move(struct scsi_ctx *c, struct pr_lun *e, int i,
		    const struct pr_param *prm)
{
	const struct pr_who dest = {.name = prm->name};
	struct pr_it *it;
	int d;

	if (!e->type) {
		scsi_sense_cdb(c, 1, 4);
		return false;
	}
	if (!pr_is_holder(e, &e->it[i]) || pr_all_reg(e->type)) {
		pr_conflict(c);
		return false;
	}
	if (!prm->sa_key) {
		scsi_sense_param(c, 8, 7);
		return false;
	}
	if (prm->rtpi != c->cmd->tgt->port_id) {
		scsi_sense_param(c, 18, 7);
		return false;
	}
	if (pr_it_is(&e->it[i], &dest)) {
		scsi_sense_param(c, PR_PARAM_LEN + 4, -1);
		return false;
	}
	d = pr_it_find(e, &dest, false);
	if (d < 0) {
		/* a port not seen yet: its first command finds it by name */
		d = pr_it_add(e, &dest, false);
		if (d < 0) {
			pr_no_resources(c, true);
			return false;
		}
	}
	e->it[i].holder = false;
	it = &e->it[d];
	it->registered = true;
	it->key = prm->sa_key;
	it->all_tg_pt = false;
	it->holder = true;
	if (prm->unreg)
		pr_drop_reg(&e->it[i]);
	return true;
}

/*
 * PERSISTENT RESERVE OUT. After the stateless checks, under the mutex:
 * RESERVATION CONFLICT for everyone under a RESERVE(6)/(10) reservation
 * (SPC-2 5.5.1), then the RESERVATION KEY check of SPC-4 6.16.3 (an
 * unregistered I_T nexus or a key other than its own conflicts, except
 * for REGISTER AND IGNORE EXISTING KEY and for REGISTER from an
 * unregistered I_T nexus), then the service action. PREEMPT AND ABORT's
 * aborts go to the front end's hook after the mutex is released.
 */
enum scsi_disposition scsi_pr_out(struct scsi_ctx *c)
{
	struct scsi_target *t = c->cmd->tgt;
	struct pr_who w = pr_who_of(c->cmd);
	struct pr_abort ab = {.n = 0};
	uint8_t buf[PR_MOVE_MAX];
	struct pr_param prm;
	struct scsi_pr *p;
	struct pr_lun *e;
	bool count = false;
	int i;

	if (!pr_out_parse(c, buf, &prm))
		return SCSI_DONE;
	if (pr_root_create(t, &p)) {
		pr_no_resources(c, true);
		return SCSI_DONE;
	}
	pthread_mutex_lock(&p->lock);
	if (pr_lun_of(c, p, true, &e)) {
		pr_no_resources(c, true);
		goto out_unlock;
	}
	if (pr_spc2_holder(e) >= 0) {
		pr_conflict(c);
		goto out_commit;
	}
	i = pr_it_find(e, &w, true);
	if (prm.sa != SCSI_PROUT_REGISTER_AND_IGNORE &&
	    (prm.sa != SCSI_PROUT_REGISTER ||
	     (i >= 0 && e->it[i].registered)) &&
	    (i < 0 || !e->it[i].registered || e->it[i].key != prm.key)) {
		pr_conflict(c);
		goto out_commit;
	}
	switch (prm.sa) {
	case SCSI_PROUT_REGISTER:
	case SCSI_PROUT_REGISTER_AND_IGNORE:
		count = pr_register(c, e, i, &prm, &w);
		break;
	case SCSI_PROUT_RESERVE:
		pr_reserve(c, e, i, &prm);
		break;
	case SCSI_PROUT_RELEASE:
		pr_release(c, e, i, &prm);
		break;
	case SCSI_PROUT_CLEAR:
		pr_clear(e, i);
		count = true;
		break;
	case SCSI_PROUT_PREEMPT:
		count = pr_preempt(c, e, i, &prm, NULL);
		break;
	case SCSI_PROUT_PREEMPT_AND_ABORT:
		count = pr_preempt(c, e, i, &prm, &ab);
		break;
	default:
		count = pr_move(c, e, i, &prm);
		break;
	}
	if (count)
		e->generation++;
out_commit:
	pr_commit(t, p, e);
out_unlock:
	pthread_mutex_unlock(&p->lock);
	if (ab.n && t->pr_abort)
		t->pr_abort(t->pr_abort_arg, c->cmd, c->table_lun, ab.nexus,
			    ab.n);
	return SCSI_DONE;
}

/* ---- RESERVE and RELEASE (6) and (10) --------------------------------- */

/*
 * SPC-4 5.13.3 (CRH 1): with registrations present, RESERVE and RELEASE
 * complete GOOD without effect from a persistent reservation holder or,
 * under a registrants only or all registrants type, from any registrant;
 * from anyone else they conflict (SPC-2 5.5.1). Return: true when @i is
 * such an exception.
 */
static bool pr_crh_exempt(const struct pr_lun *e, int i)
{
	return i >= 0 && pr_has_access(e, &e->it[i]);
}

/*
 * RESERVE(6)/(10) (SPC-2 7.21, 7.22): a whole-LUN reservation for this
 * I_T nexus; GOOD again for its holder, RESERVATION CONFLICT for another.
 * Third-party and extent reservations fail the CDB usage check.
 */
enum scsi_disposition scsi_pr_reserve(struct scsi_ctx *c)
{
	struct scsi_target *t = c->cmd->tgt;
	struct pr_who w = pr_who_of(c->cmd);
	struct scsi_pr *p;
	struct pr_lun *e;
	int i, h;

	if (pr_root_create(t, &p)) {
		pr_no_resources(c, false);
		return SCSI_DONE;
	}
	pthread_mutex_lock(&p->lock);
	if (pr_lun_of(c, p, true, &e)) {
		pr_no_resources(c, false);
		goto out_unlock;
	}
	i = pr_it_find(e, &w, true);
	if (pr_nregistered(e)) {
		if (!pr_crh_exempt(e, i))
			pr_conflict(c);
		goto out_commit;
	}
	h = pr_spc2_holder(e);
	if (h >= 0) {
		if (h != i)
			pr_conflict(c);
		goto out_commit;
	}
	if (i < 0)
		i = pr_it_add(e, &w, true);
	if (i < 0)
		pr_no_resources(c, false);
	else
		e->it[i].spc2 = true;
out_commit:
	pr_commit(t, p, e);
out_unlock:
	pthread_mutex_unlock(&p->lock);
	return SCSI_DONE;
}

/*
 * RELEASE(6)/(10): the holder's RESERVE reservation ends; from any other
 * I_T nexus, or with none, GOOD without effect.
 */
enum scsi_disposition scsi_pr_release(struct scsi_ctx *c)
{
	struct scsi_target *t = c->cmd->tgt;
	struct pr_who w = pr_who_of(c->cmd);
	struct scsi_pr *p = pr_root(t);
	struct pr_lun *e;
	int i;

	if (!p)
		return SCSI_DONE;
	pthread_mutex_lock(&p->lock);
	pr_lun_of(c, p, false, &e);
	if (!e)
		goto out_unlock;
	i = pr_it_find(e, &w, true);
	if (pr_nregistered(e)) {
		if (!pr_crh_exempt(e, i))
			pr_conflict(c);
	} else if (i >= 0 && e->it[i].spc2) {
		e->it[i].spc2 = false;
	}
	pr_commit(t, p, e);
out_unlock:
	pthread_mutex_unlock(&p->lock);
	return SCSI_DONE;
}

/* ---- front-end events ------------------------------------------------- */

/* Every record of the map, @fn(e) on each; @fn may free @e. */
static void pr_each(struct scsi_target *t, struct scsi_pr *p,
		    void (*fn)(struct scsi_target *t, struct scsi_pr *p,
			       struct pr_lun *e, const void *arg),
		    const void *arg)
{
	struct pr_lun *e, *next;
	unsigned int b;

	for (b = 0; b < (1u << p->shift); b++) {
		for (e = p->buckets[b]; e; e = next) {
			next = e->next;
			fn(t, p, e, arg);
		}
	}
}

static void pr_lost_one(struct scsi_target *t, struct scsi_pr *p,
			struct pr_lun *e, const void *arg)
{
	uint32_t nexus = *(const uint32_t *)arg;
	unsigned int i;

	for (i = 0; i < e->n; i++) {
		struct pr_it *it = &e->it[i];

		if (!it->nexus_valid || it->nexus != nexus)
			continue;
		it->spc2 = false;
		it->nexus_valid = false;
		if (!it->name)
			it->ua = 0;
	}
	pr_commit(t, p, e);
}

void scsi_pr_nexus_lost(struct scsi_target *t, uint32_t nexus)
{
	struct scsi_pr *p = pr_root(t);

	lun_ua_nexus_gone(t->luns, nexus);
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	pr_each(t, p, pr_lost_one, &nexus);
	pthread_mutex_unlock(&p->lock);
}

static void pr_reset_one(struct scsi_target *t, struct scsi_pr *p,
			 struct pr_lun *e, const void *arg)
{
	const struct scsi_view *v = arg;
	unsigned int i;

	if (v && (e->lun < v->base || e->lun - v->base >= v->count))
		return;
	for (i = 0; i < e->n; i++)
		e->it[i].spc2 = false;
	pr_commit(t, p, e);
}

void scsi_pr_lun_reset(struct scsi_target *t, const struct scsi_view *view,
		       uint32_t lun)
{
	struct scsi_pr *p = pr_root(t);
	uint64_t table = lun;
	struct pr_lun *e;

	if (!p)
		return;
	if (view) {
		if (lun >= view->count)
			return;
		table += view->base;
	}
	if (table > UINT32_MAX)
		return;
	pthread_mutex_lock(&p->lock);
	e = pr_find(p, (uint32_t)table);
	if (e)
		pr_reset_one(t, p, e, NULL);
	pthread_mutex_unlock(&p->lock);
}

void scsi_pr_target_reset(struct scsi_target *t, const struct scsi_view *view)
{
	struct scsi_pr *p = pr_root(t);

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	pr_each(t, p, pr_reset_one, view);
	pthread_mutex_unlock(&p->lock);
}

void scsi_target_fini(struct scsi_target *t)
{
	struct scsi_pr *p = pr_root(t);
	struct pr_lun *e, *next;
	unsigned int b;

	if (!p)
		return;
	for (b = 0; b < (1u << p->shift); b++) {
		for (e = p->buckets[b]; e; e = next) {
			next = e->next;
			pr_lun_free_its(e);
			free(e);
		}
	}
	free(p->buckets);
	pthread_mutex_destroy(&p->lock);
	free(p);
	t->pr = NULL;
	t->pr_active = 0;
}
