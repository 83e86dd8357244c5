// SPDX-License-Identifier: MIT
/*
 * Reservations as initiators see them across several I_T nexuses: every
 * PERSISTENT RESERVE IN and OUT service action, the access rules of all
 * six types for the holder, a registrant and a stranger, the unit
 * attentions preempt, clear and release raise (for the right nexus only),
 * REPORT CAPABILITIES and READ FULL STATUS byte for byte, parameter list
 * errors, RESERVE/RELEASE (6)/(10) and their conflicts with persistent
 * reservations, nexus loss and resets, and the cost-free path of a target
 * without reservations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "scsi-harness.h"
#include "scsi/scsi_i.h"

#define MIB (1ull << 20)

/* An I_T nexus: its id and, for iSCSI, its initiator port name. */
struct nx {
	uint32_t id;
	const char *name;
};

static const struct nx A = {1, "iqn.2024-01.test:host-a,i,0x23d000000001"};
static const struct nx B = {2, "iqn.2024-01.test:host-b,i,0x23d000000002"};
static const struct nx C = {3, NULL}; /* known by its id only */
static const struct nx D = {4, "iqn.2024-01.test:host-d,i,0x23d000000004"};

/* Persistent reservation types */
enum { WE = 1, EA = 3, WE_RO = 5, EA_RO = 6, WE_AR = 7, EA_AR = 8 };

/* PR OUT service actions */
enum {
	REGISTER = 0,
	RESERVE,
	RELEASE,
	CLEAR,
	PREEMPT,
	PREEMPT_ABORT,
	REGISTER_IGNORE,
	REGISTER_MOVE,
};

/* One command from nexus @n; status, sense and data in h->cmd. */
static uint8_t x_exec(struct harness *h, const struct nx *n, uint32_t lun,
		      const uint8_t *cdb, size_t cdb_len, enum scsi_dir dir,
		      void *buf, size_t len)
{
	h->nexus = n->id;
	h->initiator_name = n->name;
	h_exec(h, lun, cdb, cdb_len, dir, buf, len);
	h->nexus = 0;
	h->initiator_name = NULL;
	assert_int_equal(h->disp, SCSI_DONE);
	return h->cmd.status;
}

#define X(h, n, lun, dir, buf, len, ...)                                       \
	x_exec((h), (n), (lun), H_CDB(__VA_ARGS__), (dir), (buf), (len))

static uint8_t tur(struct harness *h, const struct nx *n, uint32_t lun)
{
	return X(h, n, lun, SCSI_DIR_NONE, NULL, 0, 0x00, 0, 0, 0, 0, 0);
}

static uint8_t rd(struct harness *h, const struct nx *n, uint32_t lun)
{
	static uint8_t buf[512];

	return X(h, n, lun, SCSI_DIR_READ, buf, sizeof(buf), 0x28, 0, 0, 0, 0,
		 0, 0, 0, 1, 0);
}

static uint8_t wr(struct harness *h, const struct nx *n, uint32_t lun)
{
	static uint8_t buf[512];

	return X(h, n, lun, SCSI_DIR_WRITE, buf, sizeof(buf), 0x2a, 0, 0, 0, 0,
		 0, 0, 0, 1, 0);
}

static uint8_t prout_list(struct harness *h, const struct nx *n, uint32_t lun,
			  uint8_t sa, uint8_t scope_type, const uint8_t *list,
			  uint32_t pll, size_t xfer)
{
	uint8_t cdb[10] = {0x5f, sa, scope_type};
	uint8_t buf[512] = {0};

	assert_true(xfer <= sizeof(buf));
	put_be32(cdb + 5, pll);
	memcpy(buf, list, xfer);
	return x_exec(h, n, lun, cdb, sizeof(cdb), SCSI_DIR_WRITE, buf, xfer);
}

/* PERSISTENT RESERVE OUT with the basic 24-byte list; @b20: byte 20. */
static uint8_t prout(struct harness *h, const struct nx *n, uint32_t lun,
		     uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key,
		     uint8_t b20)
{
	uint8_t p[24] = {0};

	put_be64(p, key);
	put_be64(p + 8, sa_key);
	p[20] = b20;
	return prout_list(h, n, lun, sa, type, p, 24, 24);
}

static uint8_t prin(struct harness *h, const struct nx *n, uint32_t lun,
		    uint8_t sa, uint8_t *buf, uint16_t alloc)
{
	uint8_t cdb[10] = {0x5e, sa};

	put_be16(cdb + 7, alloc);
	memset(buf, 0xee, alloc);
	return x_exec(h, n, lun, cdb, sizeof(cdb), SCSI_DIR_READ, buf, alloc);
}

/* REGISTER AND IGNORE EXISTING KEY, expected GOOD. */
static void reg(struct harness *h, const struct nx *n, uint32_t lun,
		uint64_t key)
{
	prout(h, n, lun, REGISTER_IGNORE, 0, 0, key, 0);
	h_expect_good(h);
}

static void resv(struct harness *h, const struct nx *n, uint32_t lun,
		 uint64_t key, uint8_t type)
{
	prout(h, n, lun, RESERVE, type, key, 0, 0);
	h_expect_good(h);
}

/* READ KEYS: the keys into @keys (at most 16), their count; @gen. */
static unsigned int read_keys(struct harness *h, const struct nx *n,
			      uint32_t lun, uint64_t *keys, uint32_t *gen)
{
	uint8_t buf[8 + 16 * 8];
	unsigned int i, cnt;

	prin(h, n, lun, 0, buf, sizeof(buf));
	h_expect_good(h);
	cnt = get_be32(buf + 4) / 8;
	assert_true(cnt <= 16);
	assert_int_equal(h->cmd.data_len, 8 + 8 * cnt);
	for (i = 0; keys && i < cnt; i++)
		keys[i] = get_be64(buf + 8 + 8 * i);
	if (gen)
		*gen = get_be32(buf);
	return cnt;
}

/* READ RESERVATION: the type (0: none) and *@key. */
static uint8_t read_resv(struct harness *h, const struct nx *n, uint32_t lun,
			 uint64_t *key)
{
	uint8_t buf[24];

	prin(h, n, lun, 1, buf, sizeof(buf));
	h_expect_good(h);
	if (!get_be32(buf + 4)) {
		assert_int_equal(h->cmd.data_len, 8);
		return 0;
	}
	assert_int_equal(get_be32(buf + 4), 16);
	assert_int_equal(h->cmd.data_len, 24);
	assert_int_equal(buf[21] & 0xf0, 0); /* LU_SCOPE */
	if (key)
		*key = get_be64(buf + 8);
	return buf[21] & 0x0f;
}

#define expect_conflict(h)                                                     \
	do {                                                                   \
		assert_int_equal((h)->cmd.status, SCSI_RESERVATION_CONFLICT);  \
		assert_int_equal((h)->cmd.sense_len, 0);                       \
	} while (0)

/* The next command of @n reports unit attention 2Ah/@ascq, then no more. */
#define expect_ua(h, n, lun, ascq)                                             \
	do {                                                                   \
		tur((h), (n), (lun));                                          \
		h_expect_sense((h), SK_UNIT_ATTENTION, 0x2a, (ascq));          \
	} while (0)
#define expect_no_ua(h, n, lun)                                                \
	do {                                                                   \
		tur((h), (n), (lun));                                          \
		h_expect_good(h);                                              \
	} while (0)

/* LUNs 0..3 of 1 MiB, their POWER ON attentions taken. */
static struct harness *setup(void)
{
	struct harness *h = h_new_luns(16, 4, MIB);
	uint32_t l;

	for (l = 0; l < 4; l++)
		h_clear_ua(h, l);
	return h;
}

static void teardown(struct harness *h)
{
	scsi_target_fini(&h->tgt);
	scsi_target_fini(&h->tgt); /* twice is harmless */
	assert_null(h->tgt.pr);
	h_free(h);
}

/* ---- the path without reservations ------------------------------------ */

/*
 * No reservation command, no allocation: reads, writes, PR IN, RELEASE
 * leave the state root NULL. Registrations alone do not send commands into
 * pr.c; a reservation or a pending unit attention does, until it is gone.
 */
static void test_lazy_state(void **state)
{
	struct harness *h = setup();
	uint8_t buf[64];

	(void)state;
	rd(h, &A, 0);
	wr(h, &B, 0);
	prin(h, &A, 0, 0, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 0);
	assert_int_equal(get_be32(buf + 4), 0);
	prin(h, &A, 0, 3, buf, sizeof(buf));
	h_expect_good(h);
	X(h, &A, 0, SCSI_DIR_NONE, NULL, 0, 0x17, 0, 0, 0, 0, 0);
	h_expect_good(h);
	assert_null(h->tgt.pr);
	assert_int_equal(h->tgt.pr_active, 0);

	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	assert_non_null(h->tgt.pr);
	assert_int_equal(h->tgt.pr_active, 0);
	resv(h, &A, 0, 0xa, WE_RO);
	assert_int_equal(h->tgt.pr_active, 1);
	prout(h, &B, 1, RESERVE, EA, 0xb, 0, 0); /* not registered there */
	expect_conflict(h);
	assert_int_equal(h->tgt.pr_active, 1);
	prout(h, &A, 0, RELEASE, WE_RO, 0xa, 0, 0);
	h_expect_good(h);
	/* B's RESERVATIONS RELEASED keeps LUN 0 counted until B sees it */
	assert_int_equal(h->tgt.pr_active, 1);
	expect_ua(h, &B, 0, 0x04);
	assert_int_equal(h->tgt.pr_active, 0);
	X(h, &C, 2, SCSI_DIR_NONE, NULL, 0, 0x16, 0, 0, 0, 0, 0);
	h_expect_good(h);
	assert_int_equal(h->tgt.pr_active, 1);
	X(h, &C, 2, SCSI_DIR_NONE, NULL, 0, 0x17, 0, 0, 0, 0, 0);
	h_expect_good(h);
	assert_int_equal(h->tgt.pr_active, 0);
	teardown(h);
}

/* ---- REGISTER, REGISTER AND IGNORE EXISTING KEY, READ KEYS ------------ */

static void test_register(void **state)
{
	struct harness *h = setup();
	uint64_t keys[16];
	uint32_t gen;

	(void)state;
	/* unregistered: RESERVATION KEY must be 0 */
	prout(h, &A, 0, REGISTER, 0, 0x99, 0xa, 0);
	expect_conflict(h);
	/* key 0 from an unregistered nexus: nothing, not counted */
	prout(h, &A, 0, REGISTER, 0, 0, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &A, 0, NULL, &gen), 0);
	assert_int_equal(gen, 0);

	prout(h, &A, 0, REGISTER, 0, 0, 0xa, 0);
	h_expect_good(h);
	prout(h, &C, 0, REGISTER, 0, 0, 0xc, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &B, 0, keys, &gen), 2);
	assert_int_equal(gen, 2);
	assert_true(keys[0] == 0xa && keys[1] == 0xc);
	/* the wrong current key conflicts, the right one changes it */
	prout(h, &A, 0, REGISTER, 0, 0xb, 0xaa, 0);
	expect_conflict(h);
	prout(h, &A, 0, REGISTER, 0, 0xa, 0xaa, 0);
	h_expect_good(h);
	/* REGISTER AND IGNORE EXISTING KEY does not look */
	prout(h, &C, 0, REGISTER_IGNORE, 0, 0x12345, 0xcc, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &A, 0, keys, &gen), 2);
	assert_int_equal(gen, 4);
	assert_true(keys[0] == 0xaa && keys[1] == 0xcc);
	/* per LUN */
	assert_int_equal(read_keys(h, &A, 1, NULL, &gen), 0);
	assert_int_equal(gen, 0);
	/* unregister with SERVICE ACTION RESERVATION KEY 0 */
	prout(h, &A, 0, REGISTER, 0, 0xaa, 0, 0);
	h_expect_good(h);
	prout(h, &C, 0, REGISTER_IGNORE, 0, 0, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &A, 0, NULL, &gen), 0);
	assert_int_equal(gen, 6);
	/* a key shared by two nexuses is two registrations */
	reg(h, &A, 0, 0x55);
	reg(h, &B, 0, 0x55);
	assert_int_equal(read_keys(h, &A, 0, keys, NULL), 2);
	assert_true(keys[0] == 0x55 && keys[1] == 0x55);
	/* SCOPE and TYPE mean nothing to REGISTER */
	prout(h, &B, 0, REGISTER, 0xf2, 0x55, 0x56, 0);
	h_expect_good(h);
	teardown(h);
}

/* The I_T nexus is its port name when there is one, case-insensitively. */
static void test_named_nexus(void **state)
{
	struct harness *h = setup();
	const struct nx a2 = {77, "IQN.2024-01.TEST:HOST-A,I,0X23D000000001"};
	const struct nx other_isid = {
		78, "iqn.2024-01.test:host-a,i,0x23d000000009"};

	(void)state;
	reg(h, &A, 0, 0xa);
	resv(h, &A, 0, 0xa, EA);
	/* a new session of the same port: same registration, holder */
	wr(h, &a2, 0);
	h_expect_good(h);
	/* another ISID is another initiator port */
	wr(h, &other_isid, 0);
	expect_conflict(h);
	/* an unnamed nexus with A's id is someone else */
	wr(h, &(struct nx){A.id, NULL}, 0);
	expect_conflict(h);
	/* an empty or overlong name counts as none: known by the id */
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		reg(h, &(struct nx){90, longname}, 1, 0x90);
		resv(h, &(struct nx){90, ""}, 1, 0x90, WE);
		wr(h, &(struct nx){90, longname}, 1);
		h_expect_good(h);
		wr(h, &(struct nx){90, NULL}, 1);
		h_expect_good(h);
		wr(h, &C, 1);
		expect_conflict(h);
	}
	teardown(h);
}

/* ---- RESERVE, RELEASE, READ RESERVATION ------------------------------- */

static void test_reserve_release(void **state)
{
	struct harness *h = setup();
	uint64_t key = 0;
	uint32_t gen;

	(void)state;
	/* an unregistered nexus cannot reserve */
	prout(h, &A, 0, RESERVE, WE, 0, 0, 0);
	expect_conflict(h);
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	assert_int_equal(read_resv(h, &A, 0, NULL), 0);
	/* the wrong key */
	prout(h, &A, 0, RESERVE, WE, 0xb, 0, 0);
	expect_conflict(h);
	resv(h, &A, 0, 0xa, WE);
	assert_int_equal(read_resv(h, &C, 0, &key), WE);
	assert_int_equal(key, 0xa);
	/* again, same type: GOOD; another type: conflict */
	resv(h, &A, 0, 0xa, WE);
	prout(h, &A, 0, RESERVE, EA, 0xa, 0, 0);
	expect_conflict(h);
	/* another registrant */
	prout(h, &B, 0, RESERVE, WE, 0xb, 0, 0);
	expect_conflict(h);
	/* release from a non-holder: GOOD, nothing happens */
	prout(h, &B, 0, RELEASE, WE, 0xb, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), WE);
	/* from an unregistered nexus, or with the wrong key: conflict */
	prout(h, &C, 0, RELEASE, WE, 0, 0, 0);
	expect_conflict(h);
	prout(h, &A, 0, RELEASE, WE, 0xb, 0, 0);
	expect_conflict(h);
	/* the holder with the wrong type or scope */
	prout(h, &A, 0, RELEASE, EA, 0xa, 0, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x26, 0x04);
	prout(h, &A, 0, RELEASE, 0x10 | WE, 0xa, 0, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x26, 0x04);
	prout(h, &A, 0, RELEASE, WE, 0xa, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), 0);
	/* no reservation: GOOD */
	prout(h, &A, 0, RELEASE, EA, 0xa, 0, 0);
	h_expect_good(h);
	/* RESERVE and RELEASE do not count in PRgeneration */
	read_keys(h, &A, 0, NULL, &gen);
	assert_int_equal(gen, 2);
	/* an all registrants reservation reads with key 0 */
	resv(h, &B, 0, 0xb, EA_AR);
	assert_int_equal(read_resv(h, &A, 0, &key), EA_AR);
	assert_int_equal(key, 0);
	/* every registrant holds it: A may ask again, and release it */
	resv(h, &A, 0, 0xa, EA_AR);
	prout(h, &A, 0, RELEASE, EA_AR, 0xa, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &A, 0, NULL), 0);
	expect_ua(h, &B, 0, 0x04);
	expect_no_ua(h, &A, 0);
	teardown(h);
}

/* ---- the access rules ------------------------------------------------- */

struct access_row {
	uint8_t type;
	bool reg_read, reg_write; /* a registered non-holder */
	bool other_read, other_write; /* an unregistered nexus */
};

/*
 * SPC-4's table columns: Write Exclusive and Exclusive Access treat every
 * non-holder alike, registered or not; the registrants only and all
 * registrants types let every registrant in.
 */
static const struct access_row access_rows[] = {
	{WE, true, false, true, false},	  {EA, false, false, false, false},
	{WE_RO, true, true, true, false}, {EA_RO, true, true, false, false},
	{WE_AR, true, true, true, false}, {EA_AR, true, true, false, false},
};

static void expect_status(struct harness *h, bool allowed, int line)
{
	if (allowed && h->cmd.status != SCSI_GOOD) {
		print_error(
			"line %d: opcode %02Xh status %02Xh, expected GOOD\n",
			line, h->cdb[0], h->cmd.status);
		fail();
	}
	if (!allowed && h->cmd.status != SCSI_RESERVATION_CONFLICT) {
		print_error(
			"line %d: opcode %02Xh status %02Xh, expected RESERVATION CONFLICT\n",
			line, h->cdb[0], h->cmd.status);
		fail();
	}
}

#define ALLOWED(h, ok) expect_status((h), (ok), __LINE__)

/*
 * The other commands of the table, from a nexus without access: what
 * passes every type, what passes Write Exclusive only, what never passes.
 */
static void other_commands(struct harness *h, const struct nx *n, bool we,
			   bool full)
{
	uint8_t buf[512];
	uint8_t ms[12] = {0};
	uint8_t um[24] = {0};

	tur(h, n, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_READ, buf, 64, 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0,
	  0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_READ, buf, 18, 0x03, 0, 0, 0, 18, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_READ, buf, 8, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_READ, buf, 32, 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 0, 32, 0, 0);
	ALLOWED(h, true);
	prin(h, n, 0, 0, buf, 64);
	ALLOWED(h, true);
	prin(h, n, 0, 2, buf, 8);
	ALLOWED(h, true);
	/* START STOP UNIT: START 1 passes, a stop does not */
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1b, 0, 0, 0, 0x01, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1b, 0, 0, 0, 0x00, 0);
	ALLOWED(h, full);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1b, 0, 0, 0, 0x31, 0);
	ALLOWED(h, full);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1b, 0, 0, 0, 0x01, 0);
	ALLOWED(h, true);
	/* PREVENT ALLOW: allow passes, prevent does not */
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1e, 0, 0, 0, 0, 0);
	ALLOWED(h, true);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x1e, 0, 0, 0, 1, 0);
	ALLOWED(h, full);

	we |= full;
	/* Write Exclusive lets these through, Exclusive Access does not */
	X(h, n, 0, SCSI_DIR_READ, buf, 255, 0x1a, 0, 0x3f, 0, 255, 0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_READ, buf, 255, 0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 255,
	  0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_READ, buf, 512, 0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 2, 0,
	  0, 0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_READ, buf, 16, 0xa3, 0x0d, 0, 0, 0, 0, 0, 0, 0, 16,
	  0, 0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x2f, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_READ, buf, 24, 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 0, 24, 0, 0);
	ALLOWED(h, we);
	X(h, n, 0, SCSI_DIR_READ, buf, 512, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 1, 0, 0);
	ALLOWED(h, we);

	/* never */
	ms[3] = 0;
	X(h, n, 0, SCSI_DIR_WRITE, ms, 4, 0x15, 0x10, 0, 0, 4, 0);
	ALLOWED(h, full);
	X(h, n, 0, SCSI_DIR_NONE, NULL, 0, 0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	ALLOWED(h, full);
	X(h, n, 0, SCSI_DIR_WRITE, buf, 512, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	ALLOWED(h, full);
	put_be16(um, 22);
	put_be16(um + 2, 16);
	put_be32(um + 16, 1);
	X(h, n, 0, SCSI_DIR_WRITE, um, 24, 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0);
	ALLOWED(h, full);
	X(h, n, 0, SCSI_DIR_WRITE, buf, 512, 0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 1, 0, 0);
	ALLOWED(h, full);
}

static void test_access_rules(void **state)
{
	unsigned int r;

	(void)state;
	for (r = 0; r < ARRAY_SIZE(access_rows); r++) {
		const struct access_row *a = &access_rows[r];
		struct harness *h = setup();
		bool we = !(a->type == EA || a->type == EA_RO ||
			    a->type == EA_AR);

		reg(h, &A, 0, 0xa);
		reg(h, &B, 0, 0xb);
		resv(h, &A, 0, 0xa, a->type);
		/* the holder */
		rd(h, &A, 0);
		ALLOWED(h, true);
		wr(h, &A, 0);
		ALLOWED(h, true);
		/* a registered non-holder */
		rd(h, &B, 0);
		ALLOWED(h, a->reg_read);
		wr(h, &B, 0);
		ALLOWED(h, a->reg_write);
		/* two strangers, one named, one known by its id */
		rd(h, &C, 0);
		ALLOWED(h, a->other_read);
		wr(h, &C, 0);
		ALLOWED(h, a->other_write);
		rd(h, &D, 0);
		ALLOWED(h, a->other_read);
		wr(h, &D, 0);
		ALLOWED(h, a->other_write);
		other_commands(h, &C, we, false);
		/* the holder, and a registrant of an RR type, run them all */
		other_commands(h, &A, true, true);
		if (a->type != WE && a->type != EA)
			other_commands(h, &B, true, true);
		else
			other_commands(h, &B, we, false);
		/* the reservation is the LUN's: LUN 1 is free */
		wr(h, &C, 1);
		ALLOWED(h, true);
		/* no unit attention came of any of it */
		expect_no_ua(h, &A, 0);
		expect_no_ua(h, &B, 0);
		/* B unregistered: a stranger now */
		prout(h, &B, 0, REGISTER, 0, 0xb, 0, 0);
		h_expect_good(h);
		rd(h, &B, 0);
		ALLOWED(h, a->other_read);
		wr(h, &B, 0);
		ALLOWED(h, a->other_write);
		/* released: everyone again */
		prout(h, &A, 0, RELEASE, a->type, 0xa, 0, 0);
		h_expect_good(h);
		wr(h, &C, 0);
		ALLOWED(h, true);
		teardown(h);
	}
}

/* ---- unit attentions, for the right nexus only ------------------------ */

static void test_release_and_unregister_uas(void **state)
{
	struct harness *h = setup();

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	reg(h, &D, 0, 0xd);
	/* Write Exclusive released: no unit attention at all */
	resv(h, &A, 0, 0xa, WE);
	prout(h, &A, 0, RELEASE, WE, 0xa, 0, 0);
	h_expect_good(h);
	expect_no_ua(h, &B, 0);
	expect_no_ua(h, &D, 0);
	/* registrants only released: the other registrants are told */
	resv(h, &A, 0, 0xa, WE_RO);
	prout(h, &A, 0, RELEASE, WE_RO, 0xa, 0, 0);
	h_expect_good(h);
	expect_no_ua(h, &A, 0);
	expect_no_ua(h, &C, 0);
	expect_ua(h, &B, 0, 0x04);
	expect_no_ua(h, &B, 0);
	expect_ua(h, &D, 0, 0x04);
	/* the holder unregistering releases it, with the same attentions */
	resv(h, &A, 0, 0xa, EA_RO);
	prout(h, &A, 0, REGISTER, 0, 0xa, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), 0);
	expect_ua(h, &B, 0, 0x04);
	expect_ua(h, &D, 0, 0x04);
	expect_no_ua(h, &A, 0);
	/* Exclusive Access: released silently */
	resv(h, &B, 0, 0xb, EA);
	prout(h, &B, 0, REGISTER, 0, 0xb, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), 0);
	expect_no_ua(h, &D, 0);
	/* all registrants: it outlives all but the last registrant */
	reg(h, &A, 0, 0xa);
	resv(h, &A, 0, 0xa, WE_AR);
	prout(h, &A, 0, REGISTER, 0, 0xa, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), WE_AR);
	wr(h, &D, 0);
	h_expect_good(h);
	prout(h, &D, 0, REGISTER, 0, 0xd, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), 0);
	expect_no_ua(h, &A, 0);
	expect_no_ua(h, &B, 0);
	expect_no_ua(h, &D, 0);
	teardown(h);
}

static void test_clear(void **state)
{
	struct harness *h = setup();
	uint32_t gen0, gen;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	reg(h, &C, 0, 0xc);
	reg(h, &A, 1, 0xa);
	resv(h, &A, 0, 0xa, EA);
	read_keys(h, &A, 0, NULL, &gen0);
	/* only a registrant with its own key may clear */
	prout(h, &D, 0, CLEAR, 0, 0, 0, 0);
	expect_conflict(h);
	prout(h, &B, 0, CLEAR, 0, 0xa, 0, 0);
	expect_conflict(h);
	prout(h, &B, 0, CLEAR, 0, 0xb, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &D, 0, NULL, &gen), 0);
	assert_int_equal(gen, gen0 + 1);
	assert_int_equal(read_resv(h, &D, 0, NULL), 0);
	expect_ua(h, &A, 0, 0x03);
	expect_no_ua(h, &A, 0);
	expect_ua(h, &C, 0, 0x03);
	expect_no_ua(h, &B, 0);
	expect_no_ua(h, &D, 0);
	/* LUN 1 untouched */
	assert_int_equal(read_keys(h, &D, 1, NULL, NULL), 1);
	wr(h, &D, 0);
	h_expect_good(h);
	teardown(h);
}

/* REQUEST SENSE reports a reservation attention as data and clears it. */
static void test_ua_request_sense_and_order(void **state)
{
	struct harness *h = setup();
	uint8_t buf[18];
	struct h_sense s;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	resv(h, &B, 0, 0xb, WE_RO);
	prout(h, &B, 0, RELEASE, WE_RO, 0xb, 0, 0); /* A: 2Ah/04h */
	h_expect_good(h);
	resv(h, &B, 0, 0xb, WE);
	prout(h, &B, 0, PREEMPT, WE, 0xb, 0xa, 0); /* A: 2Ah/05h */
	h_expect_good(h);
	X(h, &A, 0, SCSI_DIR_READ, buf, sizeof(buf), 0x03, 0, 0, 0, 18, 0);
	h_expect_good(h);
	assert_true(h_sense_parse(buf, sizeof(buf), &s));
	assert_int_equal(s.key, SK_UNIT_ATTENTION);
	assert_int_equal(s.asc, 0x2a);
	assert_int_equal(s.ascq, 0x04);
	/* INQUIRY neither reports nor clears it */
	X(h, &A, 0, SCSI_DIR_READ, buf, 18, 0x12, 0, 0, 0, 18, 0);
	h_expect_good(h);
	expect_ua(h, &A, 0, 0x05);
	expect_no_ua(h, &A, 0);
	teardown(h);
}

/* ---- PREEMPT, PREEMPT AND ABORT --------------------------------------- */

static void test_preempt_reservation(void **state)
{
	struct harness *h = setup();
	uint64_t keys[16], key;
	uint32_t gen0, gen;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	reg(h, &D, 0, 0xd);
	resv(h, &A, 0, 0xa, EA);
	read_keys(h, &A, 0, NULL, &gen0);
	/* unregistered, or the wrong key */
	prout(h, &C, 0, PREEMPT, WE, 0, 0xa, 0);
	expect_conflict(h);
	prout(h, &B, 0, PREEMPT, WE, 0xd, 0xa, 0);
	expect_conflict(h);
	/* preempting the holder checks TYPE and SCOPE */
	prout(h, &B, 0, PREEMPT, 2, 0xb, 0xa, 0);
	h_expect_invalid_cdb(h, 2, 3);
	prout(h, &B, 0, PREEMPT, 0x10 | WE, 0xb, 0xa, 0);
	h_expect_invalid_cdb(h, 2, 7);
	/* B takes A's reservation as Write Exclusive */
	prout(h, &B, 0, PREEMPT, WE, 0xb, 0xa, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), WE);
	assert_int_equal(key, 0xb);
	assert_int_equal(read_keys(h, &C, 0, keys, &gen), 2);
	assert_true(keys[0] == 0xb && keys[1] == 0xd);
	assert_int_equal(gen, gen0 + 1);
	/* A lost its registration; D, still registered, saw the type change */
	expect_ua(h, &A, 0, 0x05);
	expect_no_ua(h, &A, 0);
	expect_ua(h, &D, 0, 0x04);
	expect_no_ua(h, &D, 0);
	expect_no_ua(h, &B, 0);
	expect_no_ua(h, &C, 0);
	wr(h, &A, 0);
	expect_conflict(h);
	wr(h, &B, 0);
	h_expect_good(h);
	/* the holder preempting itself keeps its registration */
	prout(h, &B, 0, PREEMPT, EA_RO, 0xb, 0xb, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), EA_RO);
	assert_int_equal(key, 0xb);
	assert_int_equal(read_keys(h, &C, 0, NULL, NULL), 2);
	expect_ua(h, &D, 0, 0x04);
	expect_no_ua(h, &B, 0);
	/* same type: no RESERVATIONS RELEASED */
	prout(h, &D, 0, PREEMPT, EA_RO, 0xd, 0xb, 0);
	h_expect_good(h);
	expect_ua(h, &B, 0, 0x05);
	expect_no_ua(h, &B, 0);
	expect_no_ua(h, &D, 0);
	teardown(h);
}

static void test_preempt_registrations(void **state)
{
	struct harness *h = setup();
	uint64_t keys[16];
	uint32_t gen0, gen;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0x5);
	reg(h, &C, 0, 0x5);
	reg(h, &D, 0, 0xd);
	read_keys(h, &A, 0, NULL, &gen0);
	/* no reservation: key 0 is invalid, an unknown key conflicts */
	prout(h, &A, 0, PREEMPT, EA, 0xa, 0, 0);
	h_expect_invalid_param(h, 8, 7);
	prout(h, &A, 0, PREEMPT, EA, 0xa, 0x77, 0);
	expect_conflict(h);
	read_keys(h, &A, 0, NULL, &gen);
	assert_int_equal(gen, gen0);
	/* both nexuses registered with 5 go; TYPE is ignored here */
	prout(h, &A, 0, PREEMPT, 0x0f, 0xa, 0x5, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &A, 0, keys, &gen), 2);
	assert_true(keys[0] == 0xa && keys[1] == 0xd);
	assert_int_equal(gen, gen0 + 1);
	assert_int_equal(read_resv(h, &A, 0, NULL), 0);
	expect_ua(h, &B, 0, 0x05);
	expect_ua(h, &C, 0, 0x05);
	expect_no_ua(h, &A, 0);
	expect_no_ua(h, &D, 0);

	/* a reservation whose holder's key it is not: registrations only */
	reg(h, &B, 0, 0xb);
	resv(h, &A, 0, 0xa, WE);
	prout(h, &B, 0, PREEMPT, EA, 0xb, 0xd, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), WE);
	assert_int_equal(read_keys(h, &C, 0, NULL, NULL), 2);
	expect_ua(h, &D, 0, 0x05);
	expect_no_ua(h, &A, 0);
	/* non-all-registrants reservation: key 0 is invalid */
	prout(h, &B, 0, PREEMPT, EA, 0xb, 0, 0);
	h_expect_invalid_param(h, 8, 7);
	/* a nexus may preempt its own key away */
	prout(h, &B, 0, PREEMPT, EA, 0xb, 0xb, 0);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &C, 0, keys, NULL), 1);
	assert_int_equal(keys[0], 0xa);
	expect_no_ua(h, &B, 0);
	teardown(h);
}

static void test_preempt_all_registrants(void **state)
{
	struct harness *h = setup();
	uint64_t keys[16], key;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	reg(h, &D, 0, 0xd);
	resv(h, &A, 0, 0xa, WE_AR);
	/* a non-zero key removes registrations, the reservation stays */
	prout(h, &B, 0, PREEMPT, EA, 0xb, 0xd, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), WE_AR);
	assert_int_equal(key, 0);
	expect_ua(h, &D, 0, 0x05);
	/* key 0 preempts it: everyone else goes, B holds the new type */
	reg(h, &D, 0, 0xd);
	prout(h, &B, 0, PREEMPT, EA, 0xb, 0, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), EA);
	assert_int_equal(key, 0xb);
	assert_int_equal(read_keys(h, &C, 0, keys, NULL), 1);
	assert_int_equal(keys[0], 0xb);
	expect_ua(h, &A, 0, 0x05);
	expect_ua(h, &D, 0, 0x05);
	expect_no_ua(h, &B, 0);
	rd(h, &A, 0);
	expect_conflict(h);
	teardown(h);
}

/* The PREEMPT AND ABORT hook's record. */
static struct {
	unsigned int calls;
	uint32_t lun;
	unsigned int n;
	uint32_t nexus[8];
	const struct scsi_cmd *self;
	void *arg;
} aborted;

static void abort_hook(void *arg, const struct scsi_cmd *self, uint32_t lun,
		       const uint32_t *nexus, unsigned int n)
{
	unsigned int i;

	aborted.calls++;
	aborted.arg = arg;
	aborted.self = self;
	aborted.lun = lun;
	aborted.n = n;
	for (i = 0; i < n && i < 8; i++)
		aborted.nexus[i] = nexus[i];
}

static void test_preempt_and_abort(void **state)
{
	struct harness *h = setup();
	int cookie;
	uint64_t key;

	(void)state;
	memset(&aborted, 0, sizeof(aborted));
	/* no hook: the PR part still happens */
	h_set_view(h, 2, 2);
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	resv(h, &A, 0, 0xa, EA);
	prout(h, &B, 0, PREEMPT_ABORT, WE, 0xb, 0xa, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), WE);
	assert_int_equal(key, 0xb);
	expect_ua(h, &A, 0, 0x05);

	h->tgt.pr_abort = abort_hook;
	h->tgt.pr_abort_arg = &cookie;
	reg(h, &A, 0, 0xa);
	/* PREEMPT does not abort */
	prout(h, &A, 0, PREEMPT, WE, 0xa, 0xb, 0);
	h_expect_good(h);
	assert_int_equal(aborted.calls, 0);
	expect_ua(h, &B, 0, 0x05);
	reg(h, &B, 0, 0xb);
	prout(h, &B, 0, PREEMPT_ABORT, EA, 0xb, 0xa, 0);
	h_expect_good(h);
	assert_int_equal(aborted.calls, 1);
	assert_ptr_equal(aborted.arg, &cookie);
	assert_ptr_equal(aborted.self, &h->cmd);
	assert_int_equal(aborted.lun, 2); /* the table LUN of view LUN 0 */
	assert_int_equal(aborted.n, 1);
	assert_int_equal(aborted.nexus[0], A.id);
	expect_ua(h, &A, 0, 0x05);
	/* all registrants with key 0: every registered nexus, self too */
	reg(h, &A, 0, 0xa);
	reg(h, &C, 0, 0xc);
	prout(h, &B, 0, PREEMPT, EA_AR, 0xb, 0xb, 0);
	h_expect_good(h);
	assert_int_equal(aborted.calls, 1);
	expect_ua(h, &C, 0, 0x04);
	prout(h, &C, 0, PREEMPT_ABORT, EA, 0xc, 0, 0);
	h_expect_good(h);
	assert_int_equal(aborted.calls, 2);
	assert_int_equal(aborted.n, 3); /* in registration order */
	assert_int_equal(aborted.nexus[0], B.id);
	assert_int_equal(aborted.nexus[1], A.id);
	assert_int_equal(aborted.nexus[2], C.id);
	expect_ua(h, &A, 0, 0x04);
	expect_ua(h, &A, 0, 0x05);
	expect_ua(h, &B, 0, 0x05);
	/* a failed one aborts nothing */
	prout(h, &C, 0, PREEMPT_ABORT, EA, 0xc, 0x77, 0);
	expect_conflict(h);
	assert_int_equal(aborted.calls, 2);
	teardown(h);
}

/* ---- REPORT CAPABILITIES, READ KEYS and READ FULL STATUS data --------- */

static void test_report_capabilities(void **state)
{
	struct harness *h = setup();
	static const uint8_t want[8] = {
		0x00, 0x08, /* LENGTH */
		0x14, /* CRH, ATP_C; SIP_C 0, PTPL_C 0 */
		0xb0, /* TMV, ALLOW COMMANDS 011b, PTPL_A 0 */
		0xea, 0x01, /* all six types */
		0x00, 0x00,
	};
	uint8_t buf[16];

	(void)state;
	prin(h, &A, 0, 2, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 8);
	assert_memory_equal(buf, want, 8);
	prin(h, &A, 0, 2, buf, 4);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 4);
	assert_memory_equal(buf, want, 4);
	teardown(h);
}

static void test_read_keys_truncated(void **state)
{
	struct harness *h = setup();
	uint8_t buf[32];

	(void)state;
	reg(h, &A, 0, 0x1122334455667788ull);
	reg(h, &B, 0, 0xb);
	prin(h, &C, 0, 0, buf, 12);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 12);
	assert_int_equal(get_be32(buf), 2);
	assert_int_equal(get_be32(buf + 4), 16); /* the full length */
	assert_memory_equal(buf + 8, "\x11\x22\x33\x44", 4);
	prin(h, &C, 0, 0, buf, 6);
	assert_int_equal(h->cmd.data_len, 6);
	prin(h, &C, 0, 0, buf, 0);
	h_expect_good(h);
	assert_int_equal(h->cmd.data_len, 0);
	/* READ RESERVATION cut the same way */
	resv(h, &A, 0, 0x1122334455667788ull, WE);
	prin(h, &C, 0, 1, buf, 10);
	assert_int_equal(h->cmd.data_len, 10);
	assert_int_equal(get_be32(buf + 4), 16);
	assert_memory_equal(buf + 8, "\x11\x22", 2);
	teardown(h);
}

/* One READ FULL STATUS descriptor: its fields and the end of it. */
static const uint8_t *full_desc(const uint8_t *d, uint64_t key, uint8_t b12,
				uint8_t b13, uint8_t tid0, size_t tid_len)
{
	assert_int_equal(get_be64(d), key);
	assert_int_equal(d[12], b12);
	assert_int_equal(d[13], b13);
	assert_int_equal(get_be16(d + 18), 1); /* the relative port */
	assert_int_equal(get_be32(d + 20), tid_len);
	assert_int_equal(d[24], tid0);
	/* iSCSI's ADDITIONAL LENGTH; reserved in SAS's */
	if ((tid0 & 0x0f) == SCSI_PROTOCOL_ISCSI)
		assert_int_equal(get_be16(d + 26), tid_len - 4);
	else
		assert_int_equal(get_be16(d + 26), 0);
	return d + 24 + tid_len;
}

static void test_read_full_status(void **state)
{
	struct harness *h = setup();
	const struct nx dev = {9, "iqn.2024-01.test:dev-f"}; /* 22 bytes */
	const struct nx tiny = {10, "iqn.x"};
	uint8_t buf[1024];
	const uint8_t *d;
	size_t alen = strlen(A.name); /* 40: 44 with NUL and padding */
	size_t all = (24 + 48) * 2 + (24 + 24) + (24 + 28) + (24 + 24);

	(void)state;
	reg(h, &A, 0, 0xa);
	prout(h, &B, 0, REGISTER, 0, 0, 0xb, 0x04); /* ALL_TG_PT */
	h_expect_good(h);
	reg(h, &C, 0, 0xc);
	reg(h, &dev, 0, 0xf);
	reg(h, &tiny, 0, 0x1);
	resv(h, &A, 0, 0xa, WE_RO);
	prin(h, &C, 0, 3, buf, sizeof(buf));
	h_expect_good(h);
	assert_int_equal(get_be32(buf), 5);
	assert_int_equal(get_be32(buf + 4),
			 (24 + 48) * 2 + (24 + 24) + (24 + 28) + (24 + 24));
	assert_int_equal(h->cmd.data_len, 8 + get_be32(buf + 4));
	d = buf + 8;
	/* A: the holder, format 01b with the ISID */
	assert_int_equal(alen, 40);
	assert_memory_equal(d + 28, A.name, alen);
	assert_int_equal(d[28 + alen], 0);
	d = full_desc(d, 0xa, 0x01, WE_RO, 0x45, 48);
	/* B: ALL_TG_PT */
	assert_memory_equal(d + 28, B.name, strlen(B.name));
	d = full_desc(d, 0xb, 0x02, 0x00, 0x45, 48);
	/* C: no name, a SAS TransportID with a NAA 3h address of its id */
	assert_int_equal(get_be64(d + 28), 0x3000000000000003ull);
	d = full_desc(d, 0xc, 0x00, 0x00, 0x06, 24);
	/* a name without an ISID: format 00b, the initiator device */
	assert_memory_equal(d + 28, "iqn.2024-01.test:dev-f\0\0", 24);
	d = full_desc(d, 0xf, 0x00, 0x00, 0x05, 28);
	/* the shortest: 20 bytes of name and padding */
	assert_memory_equal(d + 28, "iqn.x\0\0\0", 8);
	d = full_desc(d, 0x1, 0x00, 0x00, 0x05, 24);
	assert_ptr_equal(d, buf + h->cmd.data_len);

	/* all registrants: every registrant is a holder */
	prout(h, &A, 0, RELEASE, WE_RO, 0xa, 0, 0);
	h_expect_good(h);
	resv(h, &A, 0, 0xa, EA_AR);
	prin(h, &A, 0, 3, buf, sizeof(buf));
	h_expect_good(h);
	d = full_desc(buf + 8, 0xa, 0x01, EA_AR, 0x45, 48);
	d = full_desc(d, 0xb, 0x03, EA_AR, 0x45, 48);
	d = full_desc(d, 0xc, 0x01, EA_AR, 0x06, 24);
	d = full_desc(d, 0xf, 0x01, EA_AR, 0x05, 28);
	full_desc(d, 0x1, 0x01, EA_AR, 0x05, 24);
	/* cut at the allocation length, the length still the full one */
	prin(h, &A, 0, 3, buf, 8);
	assert_int_equal(h->cmd.data_len, 8);
	assert_int_equal(get_be32(buf + 4), all);
	prin(h, &A, 0, 3, buf, 40);
	assert_int_equal(h->cmd.data_len, 40);
	assert_int_equal(get_be64(buf + 8), 0xa);
	/* the release told the others */
	expect_ua(h, &B, 0, 0x04);
	expect_ua(h, &C, 0, 0x04);
	teardown(h);
}

/* ---- errors ----------------------------------------------------------- */

static void test_parameter_list_errors(void **state)
{
	struct harness *h = setup();
	uint8_t p[64] = {0};
	uint8_t buf[16];
	uint32_t gen;

	(void)state;
	reg(h, &A, 0, 0xa);
	put_be64(p, 0xa);
	put_be64(p + 8, 0xaa);
	/* PARAMETER LIST LENGTH other than 24 */
	prout_list(h, &A, 0, REGISTER, 0, p, 0, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	prout_list(h, &A, 0, REGISTER, 0, p, 23, 23);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	prout_list(h, &A, 0, REGISTER, 0, p, 25, 25);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	prout_list(h, &A, 0, RESERVE, WE, p, 32, 32);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* a Data-Out shorter than the list */
	prout_list(h, &A, 0, REGISTER, 0, p, 24, 16);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* SPEC_I_PT: not supported (SIP_C 0), whatever the length */
	prout(h, &A, 0, REGISTER, 0, 0xa, 0xaa, 0x08);
	h_expect_invalid_param(h, 20, 3);
	p[20] = 0x08;
	prout_list(h, &A, 0, REGISTER, 0, p, 48, 48);
	h_expect_invalid_param(h, 20, 3);
	p[20] = 0;
	/* APTPL: not supported (PTPL_C 0) where it means something */
	prout(h, &A, 0, REGISTER, 0, 0xa, 0xaa, 0x01);
	h_expect_invalid_param(h, 20, 0);
	prout(h, &B, 0, REGISTER_IGNORE, 0, 0, 0xbb, 0x01);
	h_expect_invalid_param(h, 20, 0);
	/* reserved bits of byte 20 and byte 21 */
	prout(h, &A, 0, REGISTER, 0, 0xa, 0xaa, 0x02);
	h_expect_invalid_param(h, 20, 1);
	prout(h, &A, 0, REGISTER, 0, 0xa, 0xaa, 0x80);
	h_expect_invalid_param(h, 20, 7);
	p[21] = 0x10;
	prout_list(h, &A, 0, REGISTER, 0, p, 24, 24);
	h_expect_invalid_param(h, 21, 4);
	p[21] = 0;
	/* RESERVE: SCOPE and TYPE */
	prout(h, &A, 0, RESERVE, 0x10 | WE, 0xa, 0, 0);
	h_expect_invalid_cdb(h, 2, 7);
	prout(h, &A, 0, RESERVE, 0, 0xa, 0, 0);
	h_expect_invalid_cdb(h, 2, 3);
	prout(h, &A, 0, RESERVE, 4, 0xa, 0, 0);
	h_expect_invalid_cdb(h, 2, 3);
	prout(h, &A, 0, RESERVE, 9, 0xa, 0, 0);
	h_expect_invalid_cdb(h, 2, 3);
	/* unknown service actions */
	prout(h, &A, 0, 8, 0, 0xa, 0, 0);
	h_expect_invalid_cdb(h, 1, 4);
	prin(h, &A, 0, 4, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 1, 4);
	X(h, &A, 0, SCSI_DIR_READ, buf, 8, 0x5e, 0, 0, 1, 0, 0, 0, 0, 8, 0);
	h_expect_invalid_cdb(h, 3, 0);
	/* nothing of it happened; APTPL means nothing to RESERVE */
	read_keys(h, &A, 0, NULL, &gen);
	assert_int_equal(gen, 1);
	assert_int_equal(read_resv(h, &A, 0, NULL), 0);
	prout(h, &A, 0, RESERVE, WE, 0xa, 0, 0x01);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &A, 0, NULL), WE);
	teardown(h);
}

/* 128 I_T nexuses a LUN; the next one is told there is no room. */
static void test_registration_limit(void **state)
{
	struct harness *h = setup();
	uint32_t i;

	(void)state;
	for (i = 0; i < 128; i++) {
		prout(h, &(struct nx){1000 + i, NULL}, 0, REGISTER, 0, 0, i + 1,
		      0);
		h_expect_good(h);
	}
	prout(h, &(struct nx){5000, NULL}, 0, REGISTER, 0, 0, 0x99, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x55, 0x04);
	/* another LUN has its own room */
	reg(h, &(struct nx){5000, NULL}, 1, 0x99);
	/* one leaves, one more fits */
	prout(h, &(struct nx){1000, NULL}, 0, REGISTER, 0, 1, 0, 0);
	h_expect_good(h);
	reg(h, &(struct nx){5000, NULL}, 0, 0x99);
	teardown(h);
}

/* ---- REGISTER AND MOVE ------------------------------------------------ */

/* A REGISTER AND MOVE list for @name (TransportID format @fmt). */
static uint8_t move(struct harness *h, const struct nx *n, uint64_t key,
		    uint64_t sa_key, uint8_t b17, uint16_t rtpi, uint8_t tid0,
		    const char *name)
{
	uint8_t p[24 + 260] = {0};
	size_t len = strlen(name), pad = (len + 4) & ~(size_t)3;

	if (pad < 20)
		pad = 20;
	put_be64(p, key);
	put_be64(p + 8, sa_key);
	p[17] = b17;
	put_be16(p + 18, rtpi);
	put_be32(p + 20, (uint32_t)(4 + pad));
	p[24] = tid0;
	put_be16(p + 26, (uint16_t)pad);
	memcpy(p + 28, name, len);
	return prout_list(h, n, 0, REGISTER_MOVE, 0, p, (uint32_t)(28 + pad),
			  28 + pad);
}

static void test_register_and_move(void **state)
{
	struct harness *h = setup();
	uint64_t keys[16], key;
	uint32_t gen0, gen;

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &D, 0, 0xd);
	/* no reservation */
	move(h, &A, 0xa, 0xb1, 0, 1, 0x45, B.name);
	h_expect_invalid_cdb(h, 1, 4);
	resv(h, &A, 0, 0xa, WE_RO);
	/* only the holder */
	move(h, &D, 0xd, 0xb1, 0, 1, 0x45, B.name);
	expect_conflict(h);
	move(h, &A, 0xd, 0xb1, 0, 1, 0x45, B.name);
	expect_conflict(h);
	/* the list */
	move(h, &A, 0xa, 0, 0, 1, 0x45, B.name);
	h_expect_invalid_param(h, 8, 7);
	move(h, &A, 0xa, 0xb1, 0, 2, 0x45, B.name);
	h_expect_invalid_param(h, 18, 7);
	move(h, &A, 0xa, 0xb1, 0x01, 1, 0x45, B.name);
	h_expect_invalid_param(h, 17, 0);
	move(h, &A, 0xa, 0xb1, 0x04, 1, 0x45, B.name);
	h_expect_invalid_param(h, 17, 2);
	move(h, &A, 0xa, 0xb1, 0, 1, 0x05, "iqn.2024-01.test:host-b");
	h_expect_invalid_param(h, 24, 7);
	move(h, &A, 0xa, 0xb1, 0, 1, 0x40, B.name); /* FCP */
	h_expect_invalid_param(h, 24, 3);
	move(h, &A, 0xa, 0xb1, 0, 1, 0x45, A.name); /* itself */
	h_expect_invalid_param(h, 28, -1);
	{
		uint8_t p[64] = {0};

		put_be64(p, 0xa);
		put_be64(p + 8, 0xb1);
		put_be16(p + 18, 1);
		put_be32(p + 20, 24);
		p[24] = 0x45;
		put_be16(p + 26, 20);
		memcpy(p + 28, "iqn.b,i,0x1", 11);
		/* the list must be the header and the TransportID */
		prout_list(h, &A, 0, REGISTER_MOVE, 0, p, 52, 52);
		h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
		prout_list(h, &A, 0, REGISTER_MOVE, 0, p, 47, 47);
		h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
		/* a TransportID without its NUL */
		memset(p + 28, 'x', 20);
		prout_list(h, &A, 0, REGISTER_MOVE, 0, p, 48, 48);
		h_expect_invalid_param(h, 28, -1);
	}
	read_keys(h, &A, 0, NULL, &gen0);
	assert_int_equal(gen0, 2);

	/* to B, which never logged in; A stays registered */
	move(h, &A, 0xa, 0xb1, 0, 1, 0x45,
	     "iqn.2024-01.test:host-b,i,0x23D000000002");
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), WE_RO);
	assert_int_equal(key, 0xb1);
	assert_int_equal(read_keys(h, &C, 0, keys, &gen), 3);
	assert_int_equal(gen, gen0 + 1);
	assert_true(keys[0] == 0xa && keys[1] == 0xd && keys[2] == 0xb1);
	expect_no_ua(h, &A, 0);
	expect_no_ua(h, &D, 0);
	/* B's first command finds its registration and reservation */
	move(h, &B, 0xb1, 0xa2, 0x02, 1, 0x45, A.name); /* back, UNREG */
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, &key), WE_RO);
	assert_int_equal(key, 0xa2);
	assert_int_equal(read_keys(h, &C, 0, keys, NULL), 2);
	assert_true(keys[0] == 0xa2 && keys[1] == 0xd);
	wr(h, &B, 0);
	expect_conflict(h);
	wr(h, &A, 0);
	h_expect_good(h);
	/* all registrants reservations do not move */
	prout(h, &A, 0, RELEASE, WE_RO, 0xa2, 0, 0);
	h_expect_good(h);
	expect_ua(h, &D, 0, 0x04);
	resv(h, &A, 0, 0xa2, EA_AR);
	move(h, &A, 0xa2, 0xb1, 0, 1, 0x45, B.name);
	expect_conflict(h);
	teardown(h);
}

/* ---- RESERVE and RELEASE (6) and (10) --------------------------------- */

#define RESERVE6(h, n, lun)                                                    \
	X((h), (n), (lun), SCSI_DIR_NONE, NULL, 0, 0x16, 0, 0, 0, 0, 0)
#define RELEASE6(h, n, lun)                                                    \
	X((h), (n), (lun), SCSI_DIR_NONE, NULL, 0, 0x17, 0, 0, 0, 0, 0)
#define RESERVE10(h, n, lun)                                                   \
	X((h), (n), (lun), SCSI_DIR_NONE, NULL, 0, 0x56, 0, 0, 0, 0, 0, 0, 0,  \
	  0, 0)
#define RELEASE10(h, n, lun)                                                   \
	X((h), (n), (lun), SCSI_DIR_NONE, NULL, 0, 0x57, 0, 0, 0, 0, 0, 0, 0,  \
	  0, 0)

static void test_reserve6(void **state)
{
	struct harness *h = setup();
	uint8_t buf[255];

	(void)state;
	RESERVE6(h, &A, 0);
	h_expect_good(h);
	RESERVE6(h, &A, 0);
	h_expect_good(h);
	RESERVE6(h, &B, 0);
	expect_conflict(h);
	RESERVE10(h, &C, 0);
	expect_conflict(h);
	/* another's RELEASE: GOOD, no effect */
	RELEASE6(h, &B, 0);
	h_expect_good(h);
	RESERVE6(h, &B, 0);
	expect_conflict(h);
	/* the holder runs everything */
	rd(h, &A, 0);
	h_expect_good(h);
	wr(h, &A, 0);
	h_expect_good(h);
	X(h, &A, 0, SCSI_DIR_READ, buf, 255, 0x1a, 0, 0x3f, 0, 255, 0);
	h_expect_good(h);
	/* the others: INQUIRY, REPORT LUNS, REQUEST SENSE only */
	tur(h, &B, 0);
	expect_conflict(h);
	rd(h, &B, 0);
	expect_conflict(h);
	wr(h, &C, 0);
	expect_conflict(h);
	X(h, &B, 0, SCSI_DIR_READ, buf, 255, 0x1a, 0, 0x3f, 0, 255, 0);
	expect_conflict(h);
	X(h, &B, 0, SCSI_DIR_READ, buf, 8, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	expect_conflict(h);
	X(h, &B, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	h_expect_good(h);
	X(h, &B, 0, SCSI_DIR_READ, buf, 64, 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0,
	  0);
	h_expect_good(h);
	X(h, &B, 0, SCSI_DIR_READ, buf, 18, 0x03, 0, 0, 0, 18, 0);
	h_expect_good(h);
	/* PR commands conflict for everyone, the holder included */
	prin(h, &A, 0, 0, buf, 64);
	expect_conflict(h);
	prin(h, &B, 0, 2, buf, 8);
	expect_conflict(h);
	prout(h, &A, 0, REGISTER, 0, 0, 0xa, 0);
	expect_conflict(h);
	/* other LUNs are free */
	wr(h, &B, 1);
	h_expect_good(h);
	/* released; the (10) forms do the same */
	RELEASE6(h, &A, 0);
	h_expect_good(h);
	RESERVE10(h, &B, 0);
	h_expect_good(h);
	wr(h, &A, 0);
	expect_conflict(h);
	RELEASE10(h, &B, 0);
	h_expect_good(h);
	wr(h, &A, 0);
	h_expect_good(h);
	/* third-party and extent forms are refused by the CDB check */
	X(h, &A, 0, SCSI_DIR_NONE, NULL, 0, 0x56, 0x10, 0, 5, 0, 0, 0, 0, 0, 0);
	h_expect_invalid_cdb(h, 1, 4);
	X(h, &A, 0, SCSI_DIR_NONE, NULL, 0, 0x16, 0x01, 0, 0, 0, 0);
	h_expect_invalid_cdb(h, 1, 0);
	assert_int_equal(h->tgt.pr_active, 0);
	teardown(h);
}

/* SPC-4 5.13.3 (CRH 1): RESERVE/RELEASE with registrations present. */
static void test_reserve6_with_registrations(void **state)
{
	struct harness *h = setup();

	(void)state;
	reg(h, &A, 0, 0xa);
	/* registrations alone: RESERVE and RELEASE conflict for everyone */
	RESERVE6(h, &B, 0);
	expect_conflict(h);
	RESERVE6(h, &A, 0);
	expect_conflict(h);
	RELEASE6(h, &A, 0);
	expect_conflict(h);
	resv(h, &A, 0, 0xa, WE_RO);
	/* the holder: GOOD, nothing changes */
	RESERVE6(h, &A, 0);
	h_expect_good(h);
	RELEASE10(h, &A, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), WE_RO);
	rd(h, &C, 0);
	h_expect_good(h); /* no RESERVE(6) reservation was made */
	/* a registrant of a registrants only type: the same */
	reg(h, &B, 0, 0xb);
	RESERVE10(h, &B, 0);
	h_expect_good(h);
	RELEASE6(h, &B, 0);
	h_expect_good(h);
	assert_int_equal(read_resv(h, &C, 0, NULL), WE_RO);
	/* an unregistered nexus conflicts */
	RESERVE6(h, &C, 0);
	expect_conflict(h);
	RELEASE6(h, &C, 0);
	expect_conflict(h);
	/* Write Exclusive: a registrant that is not the holder conflicts */
	prout(h, &A, 0, RELEASE, WE_RO, 0xa, 0, 0);
	h_expect_good(h);
	expect_ua(h, &B, 0, 0x04);
	resv(h, &A, 0, 0xa, WE);
	RESERVE6(h, &B, 0);
	expect_conflict(h);
	RESERVE6(h, &A, 0);
	h_expect_good(h);
	teardown(h);
}

/* ---- nexus loss, resets, LUN removal, views --------------------------- */

static void test_nexus_loss_and_resets(void **state)
{
	struct harness *h = setup();
	const struct nx a_again = {101, A.name};
	struct scsi_view v = {.base = 1, .count = 1};
	uint64_t key;

	(void)state;
	/* nexus loss releases RESERVE(6) */
	RESERVE6(h, &A, 0);
	h_expect_good(h);
	scsi_pr_nexus_lost(&h->tgt, B.id); /* not the holder: nothing */
	RESERVE6(h, &B, 0);
	expect_conflict(h);
	scsi_pr_nexus_lost(&h->tgt, A.id);
	RESERVE6(h, &B, 0);
	h_expect_good(h);
	/* LUN reset releases it */
	scsi_pr_lun_reset(&h->tgt, NULL, 1); /* another LUN */
	RESERVE6(h, &C, 0);
	expect_conflict(h);
	scsi_pr_lun_reset(&h->tgt, NULL, 0);
	RESERVE6(h, &C, 0);
	h_expect_good(h);
	scsi_pr_lun_reset(&h->tgt, &v, 0); /* view LUN 0 = table LUN 1 */
	RESERVE6(h, &A, 0);
	expect_conflict(h);
	/* target reset: every LUN of the view */
	RESERVE6(h, &C, 1);
	h_expect_good(h);
	RESERVE6(h, &C, 2);
	h_expect_good(h);
	scsi_pr_target_reset(&h->tgt, &v);
	RESERVE6(h, &A, 1);
	h_expect_good(h);
	RESERVE6(h, &A, 2);
	expect_conflict(h);
	scsi_pr_target_reset(&h->tgt, NULL);
	RESERVE6(h, &B, 0);
	h_expect_good(h);
	RESERVE6(h, &B, 2);
	h_expect_good(h);
	scsi_pr_target_reset(&h->tgt, NULL);
	assert_int_equal(h->tgt.pr_active, 0);

	/* persistent reservations survive all of it */
	reg(h, &A, 3, 0xa);
	resv(h, &A, 3, 0xa, EA);
	reg(h, &C, 2, 0xc);
	resv(h, &C, 2, 0xc, WE);
	scsi_pr_nexus_lost(&h->tgt, A.id);
	scsi_pr_nexus_lost(&h->tgt, C.id);
	scsi_pr_lun_reset(&h->tgt, NULL, 3);
	scsi_pr_target_reset(&h->tgt, NULL);
	assert_int_equal(read_resv(h, &B, 3, &key), EA);
	assert_int_equal(key, 0xa);
	assert_int_equal(read_resv(h, &B, 2, &key), WE);
	/* A's new session is the same I_T nexus: still the holder */
	wr(h, &a_again, 3);
	h_expect_good(h);
	wr(h, &B, 3);
	expect_conflict(h);
	/* an unnamed nexus's registration stays with its id */
	wr(h, &C, 2);
	h_expect_good(h);
	teardown(h);
}

/* Unit attentions of an unnamed nexus go with it; a named one's stay. */
static void test_nexus_loss_uas(void **state)
{
	struct harness *h = setup();
	const struct nx b_again = {55, B.name};

	(void)state;
	reg(h, &A, 0, 0xa);
	reg(h, &B, 0, 0xb);
	reg(h, &C, 0, 0xc);
	prout(h, &A, 0, CLEAR, 0, 0xa, 0, 0);
	h_expect_good(h);
	assert_int_equal(h->tgt.pr_active, 1);
	scsi_pr_nexus_lost(&h->tgt, C.id);
	scsi_pr_nexus_lost(&h->tgt, B.id);
	expect_no_ua(h, &C, 0);
	expect_ua(h, &b_again, 0, 0x03);
	assert_int_equal(h->tgt.pr_active, 0);
	teardown(h);
}

/* A LUN removed and created again starts with no reservation state. */
static void test_lun_recreated(void **state)
{
	struct harness *h = setup();
	uint32_t gen;

	(void)state;
	reg(h, &A, 2, 0xa);
	resv(h, &A, 2, 0xa, EA);
	assert_int_equal(h->tgt.pr_active, 1);
	assert_int_equal(lun_remove(h->luns, 2), 0);
	assert_int_equal(lun_add(h->luns, 2, 0), 2);
	h_clear_ua(h, 2);
	assert_int_equal(h->tgt.pr_active, 0);
	assert_int_equal(read_keys(h, &A, 2, NULL, &gen), 0);
	assert_int_equal(gen, 0);
	wr(h, &C, 2);
	h_expect_good(h);
	h_clear_ua(h, 3); /* REPORTED LUNS DATA HAS CHANGED */
	RESERVE6(h, &C, 3);
	h_expect_good(h);
	assert_int_equal(lun_remove(h->luns, 3), 0);
	assert_int_equal(lun_add(h->luns, 3, 0), 3);
	h_clear_ua(h, 3);
	RESERVE6(h, &A, 3);
	h_expect_good(h);
	teardown(h);
}

/* The state is the table LUN's, whatever view it is reached through. */
static void test_views(void **state)
{
	struct harness *h = setup();

	(void)state;
	h_set_view(h, 2, 2);
	reg(h, &A, 1, 0xa); /* table LUN 3 */
	resv(h, &A, 1, 0xa, EA);
	h->use_view = false;
	wr(h, &C, 3);
	expect_conflict(h);
	wr(h, &C, 1);
	h_expect_good(h);
	assert_int_equal(read_keys(h, &C, 3, NULL, NULL), 1);
	assert_int_equal(read_keys(h, &C, 1, NULL, NULL), 0);
	teardown(h);
}

/*
 * LUNs 4096 apart share pr.c's lock-free filter slot: the neighbour of a
 * reserved LUN takes the slow path and still finds nothing to obey.
 */
static void test_filter_neighbours(void **state)
{
	struct harness *h = h_new_luns(8200, 8200, MIB);

	(void)state;
	h_clear_ua(h, 5);
	h_clear_ua(h, 4101);
	h_clear_ua(h, 8197);
	h_clear_ua(h, 6);
	reg(h, &A, 5, 0xa);
	resv(h, &A, 5, 0xa, EA);
	wr(h, &C, 5);
	expect_conflict(h);
	wr(h, &C, 4101);
	h_expect_good(h);
	wr(h, &C, 6);
	h_expect_good(h);
	reg(h, &A, 8197, 0xa);
	resv(h, &A, 8197, 0xa, WE);
	wr(h, &C, 8197);
	expect_conflict(h);
	prout(h, &A, 5, RELEASE, EA, 0xa, 0, 0);
	h_expect_good(h);
	wr(h, &C, 5);
	h_expect_good(h);
	wr(h, &C, 8197);
	expect_conflict(h);
	teardown(h);
}

/* ---- threads ---------------------------------------------------------- */

struct worker {
	struct harness *h;
	pthread_barrier_t *start;
	uint32_t lun;
	unsigned int bad;
};

static uint8_t w_exec(struct worker *w, struct scsi_cmd *cmd, uint8_t *cdb,
		      size_t cdb_len, enum scsi_dir dir, void *buf, size_t len)
{
	struct iovec iov = {buf, len};

	memset(cmd, 0, sizeof(*cmd));
	cmd->tgt = &w->h->tgt;
	cmd->lun = w->lun;
	cmd->nexus = 100 + w->lun;
	cmd->cdb = cdb;
	cmd->cdb_len = (uint8_t)cdb_len;
	cmd->dir = dir;
	cmd->iov = &iov;
	cmd->iovcnt = buf ? 1 : 0;
	cmd->xfer_len = (uint32_t)len;
	scsi_exec(cmd);
	return cmd->status;
}

/*
 * Each thread its own LUN and nexus, all racing to create the state root:
 * register, reserve, write, release, unregister, 300 times; a second
 * nexus's write must conflict exactly while the reservation is held.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t p[24], blk[512] = {0};
	uint8_t out[10] = {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t wcdb[10] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	struct scsi_cmd cmd;
	unsigned int i;

	pthread_barrier_wait(w->start);
	for (i = 0; i < 300; i++) {
		memset(p, 0, sizeof(p));
		put_be64(p + 8, 0x1000 + w->lun);
		out[1] = REGISTER_IGNORE;
		w->bad += w_exec(w, &cmd, out, 10, SCSI_DIR_WRITE, p, 24) != 0;
		put_be64(p, 0x1000 + w->lun);
		out[1] = RESERVE;
		out[2] = EA;
		w->bad += w_exec(w, &cmd, out, 10, SCSI_DIR_WRITE, p, 24) != 0;
		w->bad += w_exec(w, &cmd, wcdb, 10, SCSI_DIR_WRITE, blk, 512) !=
			  SCSI_GOOD;
		memset(&cmd, 0, sizeof(cmd));
		cmd.tgt = &w->h->tgt;
		cmd.lun = w->lun;
		cmd.nexus = 9999;
		cmd.cdb = wcdb;
		cmd.cdb_len = 10;
		cmd.dir = SCSI_DIR_WRITE;
		cmd.iov = &(struct iovec){blk, 512};
		cmd.iovcnt = 1;
		cmd.xfer_len = 512;
		scsi_exec(&cmd);
		w->bad += cmd.status != SCSI_RESERVATION_CONFLICT;
		out[1] = RELEASE;
		w->bad += w_exec(w, &cmd, out, 10, SCSI_DIR_WRITE, p, 24) != 0;
		out[1] = REGISTER;
		out[2] = 0;
		memset(p + 8, 0, 8);
		w->bad += w_exec(w, &cmd, out, 10, SCSI_DIR_WRITE, p, 24) != 0;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct harness *h = h_new_luns(16, 8, MIB);
	struct worker w[8];
	pthread_t th[8];
	pthread_barrier_t start;
	uint32_t i, gen;

	(void)state;
	for (i = 0; i < 8; i++)
		h_clear_ua(h, i);
	pthread_barrier_init(&start, NULL, 8);
	for (i = 0; i < 8; i++) {
		w[i] = (struct worker){.h = h, .start = &start, .lun = i};
		assert_int_equal(
			pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].bad, 0);
	}
	pthread_barrier_destroy(&start);
	assert_int_equal(h->tgt.pr_active, 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(read_keys(h, &A, i, NULL, &gen), 0);
		assert_int_equal(gen, 600);
	}
	teardown(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_state),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_named_nexus),
		cmocka_unit_test(test_reserve_release),
		cmocka_unit_test(test_access_rules),
		cmocka_unit_test(test_release_and_unregister_uas),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_ua_request_sense_and_order),
		cmocka_unit_test(test_preempt_reservation),
		cmocka_unit_test(test_preempt_registrations),
		cmocka_unit_test(test_preempt_all_registrants),
		cmocka_unit_test(test_preempt_and_abort),
		cmocka_unit_test(test_report_capabilities),
		cmocka_unit_test(test_read_keys_truncated),
		cmocka_unit_test(test_read_full_status),
		cmocka_unit_test(test_parameter_list_errors),
		cmocka_unit_test(test_registration_limit),
		cmocka_unit_test(test_register_and_move),
		cmocka_unit_test(test_reserve6),
		cmocka_unit_test(test_reserve6_with_registrations),
		cmocka_unit_test(test_nexus_loss_and_resets),
		cmocka_unit_test(test_nexus_loss_uas),
		cmocka_unit_test(test_lun_recreated),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_filter_neighbours),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
