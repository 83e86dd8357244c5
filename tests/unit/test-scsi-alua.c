// SPDX-License-Identifier: MIT
/*
 * ALUA as an initiator sees it through several target ports: TPGS in
 * standard INQUIRY, one LUN identity with per-port designators in VPD
 * 83h, REPORT TARGET PORT GROUPS byte for byte in both formats, what runs
 * and what fails (with which sense) in standby and unavailable, and the
 * unit attention a run-time state change gives every I_T nexus.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "scsi-harness.h"
#include "scsi/scsi_i.h"

#define GIB (1ull << 30)

/* Group "a" (id 10) holds port 1, group "b" (id 20) ports 2 and 3. */
static void alua_init(struct scsi_alua *a)
{
	memset(a, 0, sizeof(*a));
	a->ngroups = 2;
	a->nports = 3;
	strcpy(a->groups[0].name, "a");
	a->groups[0].id = 10;
	a->groups[0].state = SCSI_ALUA_OPTIMIZED;
	strcpy(a->groups[1].name, "b");
	a->groups[1].id = 20;
	a->groups[1].state = SCSI_ALUA_NON_OPTIMIZED;
	a->port_group[0] = 0;
	a->port_group[1] = 1;
	a->port_group[2] = 1;
}

struct fx {
	struct harness *h;
	struct scsi_alua a;
};

static int setup(void **state)
{
	static struct fx f;

	f.h = h_new_luns(64, 4, GIB);
	alua_init(&f.a);
	f.h->tgt.alua = &f.a;
	f.h->tgt.port_id = 1;
	f.h->tgt.tpg = 1;
	f.h->port = 1;
	h_clear_ua(f.h, 0);
	h_clear_ua(f.h, 1);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	h_free(f->h);
	return 0;
}

/* One command from (@nexus, @port). */
static uint8_t on(struct harness *h, uint32_t nexus, uint16_t port,
		  uint32_t lun, const uint8_t *cdb, size_t cdb_len,
		  enum scsi_dir dir, void *buf, size_t len)
{
	uint32_t n0 = h->nexus;
	uint16_t p0 = h->port;

	h->nexus = nexus;
	h->port = port;
	h_exec(h, lun, cdb, cdb_len, dir, buf, len);
	h->nexus = n0;
	h->port = p0;
	return h->cmd.status;
}

#define ON(h, nx, port, lun, dir, buf, len, ...)                               \
	on((h), (nx), (port), (lun), H_CDB(__VA_ARGS__), (dir), (buf), (len))

static uint8_t tur(struct harness *h, uint32_t nx, uint16_t port)
{
	return ON(h, nx, port, 0, SCSI_DIR_NONE, NULL, 0, 0, 0, 0, 0, 0, 0);
}

static uint8_t rtpg(struct harness *h, uint16_t port, uint8_t fmt, uint8_t *buf,
		    uint32_t alloc)
{
	return ON(h, 0, port, 0, SCSI_DIR_READ, buf, alloc, 0xa3,
		  (uint8_t)(fmt << 5 | 0x0a), 0, 0, 0, 0,
		  (uint8_t)(alloc >> 24), (uint8_t)(alloc >> 16),
		  (uint8_t)(alloc >> 8), (uint8_t)alloc, 0, 0);
}

/* The designator of @type and association @assoc in VPD 83h, or NULL. */
static const uint8_t *desig(const uint8_t *page, uint8_t assoc, uint8_t type)
{
	size_t len = 4 + get_be16(page + 2), off = 4;

	while (off + 4 <= len) {
		const uint8_t *d = page + off;

		if ((d[1] & 0x30) == assoc && (d[1] & 0x0f) == type)
			return d;
		off += 4 + d[3];
	}
	return NULL;
}

static void vpd83(struct harness *h, uint16_t port, uint8_t *buf)
{
	memset(buf, 0, 256);
	ON(h, 0, port, 1, SCSI_DIR_READ, buf, 256, 0x12, 1, 0x83, 1, 0, 0);
	h_expect_good(h);
}

/* ---- identity ---------------------------------------------------------- */

static void test_inquiry_tpgs(void **state)
{
	struct fx *f = *state;
	uint8_t buf[96];

	ON(f->h, 0, 1, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	h_expect_good(f->h);
	assert_int_equal(buf[5] & 0x30, 0x10); /* TPGS 01b: implicit */
	assert_int_equal(buf[5] & 0x08, 0x08); /* 3PC still there */
	f->h->tgt.alua = NULL;
	ON(f->h, 0, 1, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	assert_int_equal(buf[5] & 0x30, 0x00);
}

/* Same NAA through every port; the relative port and group differ. */
static void test_vpd83_per_port(void **state)
{
	struct fx *f = *state;
	uint8_t p1[256], p2[256], p3[256];
	const uint8_t *n1, *n2, *r1, *r2, *r3, *g1, *g2, *g3;

	vpd83(f->h, 1, p1);
	vpd83(f->h, 2, p2);
	vpd83(f->h, 3, p3);
	n1 = desig(p1, 0x00, 0x3);
	n2 = desig(p2, 0x00, 0x3);
	assert_non_null(n1);
	assert_non_null(n2);
	assert_int_equal(n1[3], 16);
	assert_memory_equal(n1, n2, 20);
	r1 = desig(p1, 0x10, 0x4);
	r2 = desig(p2, 0x10, 0x4);
	r3 = desig(p3, 0x10, 0x4);
	g1 = desig(p1, 0x10, 0x5);
	g2 = desig(p2, 0x10, 0x5);
	g3 = desig(p3, 0x10, 0x5);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_non_null(r3);
	assert_non_null(g1);
	assert_non_null(g2);
	assert_non_null(g3);
	assert_int_equal(get_be16(r1 + 6), 1);
	assert_int_equal(get_be16(r2 + 6), 2);
	assert_int_equal(get_be16(r3 + 6), 3);
	assert_int_equal(get_be16(g1 + 6), 10);
	assert_int_equal(get_be16(g2 + 6), 20);
	assert_int_equal(get_be16(g3 + 6), 20);
	/* port 0: the target's own port_id and, without ALUA, its tpg */
	f->h->tgt.alua = NULL;
	vpd83(f->h, 0, p1);
	assert_int_equal(get_be16(desig(p1, 0x10, 0x4) + 6), 1);
	assert_int_equal(get_be16(desig(p1, 0x10, 0x5) + 6), 1);
}

/* ---- REPORT TARGET PORT GROUPS ---------------------------------------- */

static void test_rtpg_length_format(void **state)
{
	struct fx *f = *state;
	uint8_t buf[128];
	static const uint8_t want[] = {
		0,    0,    0, 28, /* RETURN DATA LENGTH */
		0x00, 0x0f, 0, 10, 0, 0, 0, 1, /* a: AO, all four SUP */
		0,    0,    0, 1, /* port 1 */
		0x01, 0x0f, 0, 20, 0, 0, 0, 2, /* b: AN, 2 ports */
		0,    0,    0, 2,  0, 0, 0, 3,
	};

	memset(buf, 0xee, sizeof(buf));
	rtpg(f->h, 1, 0, buf, sizeof(buf));
	h_expect_good(f->h);
	assert_int_equal(f->h->cmd.data_len, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	/* the same from another port */
	rtpg(f->h, 3, 0, buf, sizeof(buf));
	assert_memory_equal(buf, want, sizeof(want));
	/* cut at the allocation length, the header still whole */
	rtpg(f->h, 1, 0, buf, 10);
	h_expect_good(f->h);
	assert_int_equal(f->h->cmd.data_len, 10);
	assert_int_equal(get_be32(buf), 28);
	rtpg(f->h, 1, 0, buf, 0);
	h_expect_good(f->h);
	assert_int_equal(f->h->cmd.data_len, 0);
}

static void test_rtpg_extended(void **state)
{
	struct fx *f = *state;
	uint8_t buf[128];

	rtpg(f->h, 1, 1, buf, sizeof(buf));
	h_expect_good(f->h);
	assert_int_equal(f->h->cmd.data_len, 36);
	/* everything after the length field, as Linux's alua reads it */
	assert_int_equal(get_be32(buf), 32);
	assert_int_equal(buf[4], 0x10); /* FORMAT TYPE 001b */
	assert_int_equal(buf[5], 0); /* IMPLICIT TRANSITION TIME */
	assert_int_equal(get_be16(buf + 8 + 2), 10);
	assert_int_equal(buf[8 + 7], 1);
	assert_int_equal(get_be16(buf + 20 + 2), 20);
	assert_int_equal(buf[20 + 7], 2);
	/* reserved formats */
	rtpg(f->h, 1, 2, buf, sizeof(buf));
	h_expect_invalid_cdb(f->h, 1, 7);
	rtpg(f->h, 1, 7, buf, sizeof(buf));
	h_expect_invalid_cdb(f->h, 1, 7);
	/* an absent LUN */
	ON(f->h, 0, 1, 9, SCSI_DIR_READ, buf, 64, 0xa3, 0x0a, 0, 0, 0, 0, 0, 0,
	   0, 64, 0, 0);
	h_expect_sense(f->h, SK_ILLEGAL_REQUEST, 0x25, 0x00);
}

/* Without ALUA there is no such service action, and RSOC says so. */
static void test_rtpg_without_alua(void **state)
{
	struct fx *f = *state;
	uint8_t buf[64];

	f->h->tgt.alua = NULL;
	rtpg(f->h, 1, 0, buf, sizeof(buf));
	h_expect_invalid_cdb(f->h, 1, 4);
	ON(f->h, 0, 1, 0, SCSI_DIR_READ, buf, sizeof(buf), 0xa3, 0x0c, 2, 0xa3,
	   0, 0x0a, 0, 0, 0, sizeof(buf), 0, 0);
	h_expect_good(f->h);
	assert_int_equal(buf[1] & 0x07, 0x01); /* not supported */
	f->h->tgt.alua = &f->a;
	ON(f->h, 0, 1, 0, SCSI_DIR_READ, buf, sizeof(buf), 0xa3, 0x0c, 2, 0xa3,
	   0, 0x0a, 0, 0, 0, sizeof(buf), 0, 0);
	assert_int_equal(buf[1] & 0x07, 0x03);
	assert_int_equal(buf[5], 0xff); /* usage: format and SA */
}

/* ---- states ------------------------------------------------------------ */

static void test_states_names(void **state)
{
	enum scsi_alua_state s;

	(void)state;
	assert_string_equal(scsi_alua_state_name(SCSI_ALUA_OPTIMIZED),
			    "active/optimized");
	assert_string_equal(scsi_alua_state_name(SCSI_ALUA_NON_OPTIMIZED),
			    "active/non-optimized");
	assert_string_equal(scsi_alua_state_name(SCSI_ALUA_STANDBY), "standby");
	assert_string_equal(scsi_alua_state_name(SCSI_ALUA_UNAVAILABLE),
			    "unavailable");
	assert_string_equal(scsi_alua_state_name((enum scsi_alua_state)9), "?");
	assert_int_equal(scsi_alua_state_parse("Standby", &s), 0);
	assert_int_equal(s, SCSI_ALUA_STANDBY);
	assert_int_equal(scsi_alua_state_parse("an", &s), 0);
	assert_int_equal(s, SCSI_ALUA_NON_OPTIMIZED);
	assert_int_equal(scsi_alua_state_parse("active/optimized", &s), 0);
	assert_int_equal(s, SCSI_ALUA_OPTIMIZED);
	assert_int_equal(scsi_alua_state_parse("offline", &s), -EINVAL);
	assert_int_equal(scsi_alua_state_parse("", &s), -EINVAL);
}

/*
 * Standby: the medium and TEST UNIT READY fail with 04h/0Bh; INQUIRY,
 * REPORT LUNS, RTPG, REQUEST SENSE (which says why), MODE SENSE and
 * SELECT, READ CAPACITY and PERSISTENT RESERVE IN still run. Unavailable
 * keeps only INQUIRY, REPORT LUNS, RTPG and REQUEST SENSE (04h/0Ch). The
 * other group's port is untouched.
 */
static void test_standby_unavailable(void **state)
{
	struct fx *f = *state;
	struct harness *h = f->h;
	uint8_t buf[512];
	struct h_sense s;

	assert_int_equal(scsi_alua_set(&h->tgt, "b", SCSI_ALUA_STANDBY), 1);
	h_clear_ua(h, 0);
	tur(h, 0, 2);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 512, 0x28, 0, 0, 0, 0, 0, 0, 0, 1,
	   0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
	ON(h, 0, 2, 0, SCSI_DIR_WRITE, buf, 512, 0x2a, 0, 0, 0, 0, 0, 0, 0, 1,
	   0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
	ON(h, 0, 2, 0, SCSI_DIR_NONE, NULL, 0, 0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	h_expect_good(h);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 256, 0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
	   0, 0);
	h_expect_good(h);
	rtpg(h, 2, 0, buf, 64);
	h_expect_good(h);
	assert_int_equal(buf[4 + 12] & 0x0f, SCSI_ALUA_STANDBY);
	assert_int_equal(buf[4 + 12 + 5], 0x02); /* implicit change */
	assert_int_equal(buf[4 + 5], 0x00); /* a: never changed */
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 252, 0x03, 0, 0, 0, 252, 0);
	h_expect_good(h);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.key, SK_NOT_READY);
	assert_int_equal(s.asc, 0x04);
	assert_int_equal(s.ascq, 0x0b);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 252, 0x1a, 0, 0x3f, 0, 252, 0);
	h_expect_good(h);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 8, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	h_expect_good(h);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 32, 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0,
	   0, 0, 0, 0, 32, 0, 0);
	h_expect_good(h);
	ON(h, 0, 2, 0, SCSI_DIR_READ, buf, 64, 0x5e, 0, 0, 0, 0, 0, 0, 0, 64,
	   0);
	h_expect_good(h);
	/* port 1 (group a) still runs everything */
	tur(h, 0, 1);
	h_expect_good(h);
	ON(h, 0, 1, 0, SCSI_DIR_READ, buf, 512, 0x28, 0, 0, 0, 0, 0, 0, 0, 1,
	   0);
	h_expect_good(h);

	assert_int_equal(scsi_alua_set(&h->tgt, "b", SCSI_ALUA_UNAVAILABLE), 1);
	h_clear_ua(h, 0);
	tur(h, 0, 3);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0c);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 252, 0x1a, 0, 0x3f, 0, 252, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0c);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 8, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0c);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 64, 0x5e, 0, 0, 0, 0, 0, 0, 0, 64,
	   0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0c);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	h_expect_good(h);
	rtpg(h, 3, 0, buf, 64);
	h_expect_good(h);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 252, 0x03, 1, 0, 0, 252, 0);
	h_expect_good(h);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_true(s.descriptor);
	assert_int_equal(s.key, SK_NOT_READY);
	assert_int_equal(s.ascq, 0x0c);

	/* back to active: everything runs again */
	assert_int_equal(scsi_alua_set(&h->tgt, "20", SCSI_ALUA_NON_OPTIMIZED),
			 1);
	h_clear_ua(h, 0);
	tur(h, 0, 3);
	h_expect_good(h);
	ON(h, 0, 3, 0, SCSI_DIR_READ, buf, 252, 0x03, 0, 0, 0, 252, 0);
	assert_true(h_sense_parse(buf, h->cmd.data_len, &s));
	assert_int_equal(s.key, SK_NO_SENSE);
}

/*
 * A change reaches every I_T nexus once on each LUN it uses (the ports of
 * both groups, since RTPG's answer changed for all of them), before the
 * standby sense; setting the same state again raises nothing.
 */
static void test_state_change_ua(void **state)
{
	struct fx *f = *state;
	struct harness *h = f->h;
	uint8_t buf[96];

	/* nexus 7 on port 1 and nexus 8 on port 2 know LUNs 0 and 1 */
	tur(h, 7, 1);
	tur(h, 8, 2);
	ON(h, 7, 1, 1, SCSI_DIR_NONE, NULL, 0, 0, 0, 0, 0, 0, 0);
	ON(h, 8, 2, 1, SCSI_DIR_NONE, NULL, 0, 0, 0, 0, 0, 0, 0);
	tur(h, 7, 1);
	h_expect_good(h);
	tur(h, 8, 2);
	h_expect_good(h);

	assert_int_equal(scsi_alua_set(&h->tgt, "b", SCSI_ALUA_STANDBY), 1);
	/* INQUIRY neither reports nor clears it */
	ON(h, 8, 2, 0, SCSI_DIR_READ, buf, 96, 0x12, 0, 0, 0, 96, 0);
	h_expect_good(h);
	tur(h, 8, 2);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x06);
	tur(h, 8, 2);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
	ON(h, 8, 2, 1, SCSI_DIR_NONE, NULL, 0, 0, 0, 0, 0, 0, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x06);
	tur(h, 7, 1);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x06);
	tur(h, 7, 1);
	h_expect_good(h);
	/* RTPG reports it too (it is not one of the three SAM exempts) */
	ON(h, 7, 1, 1, SCSI_DIR_READ, buf, 64, 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 0,
	   64, 0, 0);
	h_expect_sense(h, SK_UNIT_ATTENTION, 0x2a, 0x06);

	/* no change, no unit attention */
	assert_int_equal(scsi_alua_set(&h->tgt, "b", SCSI_ALUA_STANDBY), 0);
	tur(h, 7, 1);
	h_expect_good(h);
	tur(h, 8, 2);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x0b);
}

static void test_set_errors(void **state)
{
	struct fx *f = *state;
	struct scsi_target none = {0};

	assert_int_equal(scsi_alua_set(&f->h->tgt, "c", SCSI_ALUA_STANDBY),
			 -ENOENT);
	assert_int_equal(scsi_alua_set(&f->h->tgt, "30", SCSI_ALUA_STANDBY),
			 -ENOENT);
	assert_int_equal(scsi_alua_set(&f->h->tgt, "10x", SCSI_ALUA_STANDBY),
			 -ENOENT);
	assert_int_equal(
		scsi_alua_set(&f->h->tgt, "a", (enum scsi_alua_state)4),
		-EINVAL);
	assert_int_equal(scsi_alua_set(&none, "a", SCSI_ALUA_STANDBY), -ENODEV);
	assert_int_equal(scsi_alua_set(&f->h->tgt, "10", SCSI_ALUA_OPTIMIZED),
			 0);
	/* a port in no group (4) is active/optimized, its group the tpg */
	tur(f->h, 0, 4);
	h_expect_good(f->h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inquiry_tpgs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vpd83_per_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rtpg_length_format, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rtpg_extended, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rtpg_without_alua, setup,
						teardown),
		cmocka_unit_test(test_states_names),
		cmocka_unit_test_setup_teardown(test_standby_unavailable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_change_ua, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_set_errors, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
