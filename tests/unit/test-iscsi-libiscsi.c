// SPDX-License-Identifier: MIT
/*
 * The iSCSI front end as a libiscsi user sees it, in process: each test
 * starts iscsi_fe_start() on a free 127.0.0.1 port over a LUN table built
 * from a real configuration text, then drives it with libiscsi's sync API
 * (discovery, digests, INQUIRY and VPD, READ CAPACITY (16), REPORT LUNS
 * past 256 LUNs, WRITE/READ (16) with R2T bursts, CHAP and the initiator
 * ACL, LUN RESET and its unit attention, two sessions, logout and stop).
 * Every libiscsi call is bounded by iscsi_set_timeout(); a watchdog alarm
 * ends the whole run should anything still block.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "config.h"
#include "frontend/iscsi/iscsi.h"
#include "log.h"
#include "lun.h"
#include "rng.h"
#include "scsi/scsi.h"
#include "store/store.h"
#include "target.h"

#define IQN "iqn.2026-12.org.sdswarm"
#define T0 IQN ":t0"
#define T1 IQN ":t1"
#define T2 IQN ":t2"
#define INI_A "iqn.2026-12.org.sdswarm.test:client-a"
#define INI_B "iqn.2026-12.org.sdswarm.test:client-b"
#define INI_STRANGER "iqn.2026-12.org.sdswarm.test:stranger"
#define CHAP_USER "alice"
#define CHAP_SECRET "alice-secret-0123"
#define MUTUAL_USER "target"
#define MUTUAL_SECRET "target-secret-4567"

/* libiscsi's per-PDU timeout, seconds: no sync call blocks longer */
#define WAIT_S 10
/* the whole run, seconds: SIGALRM's default action ends it */
#define WATCHDOG_S 120
/* port picks tried when another process takes ours first */
#define PORT_TRIES 8

/* flat space addressing (SAM-5 4.7.7), as libiscsi takes and reports it */
#define FLAT(n) (0x4000 | (n))

/*
 * The geometry every test sees. t0 (table LUNs 0..511): a thin 8 MiB LUN 0
 * with its own identity and block limits, a thick 4 MiB LUN 1 of 4096-byte
 * blocks, and 300 small LUNs 2..301, so REPORT LUNS crosses 256. t1: one
 * LUN (table LUN 512). t2: none. Small bursts make large writes use R2T.
 */
#define T0_LUNS 302
#define LUN0_BLOCKS 16384u /* 8M / 512 */
#define LUN1_BLOCKS 1024u /* 4M / 4096 */
#define MANY_BLOCKS 2048u /* 1M / 512 */
#define MAX_BURST 65536u
#define FIRST_BURST 16384u
static const char base_conf[] = "[target]\n"
				"seed = 77\n"
				"max_luns = 1536\n"
				"[luns]\n"
				"first = 0\n"
				"count = 1\n"
				"size = 8M\n"
				"thin = yes\n"
				"partitions = 0\n"
				"vendor = ACME\n"
				"product = SWARMDISK\n"
				"revision = 7.1A\n"
				"max_transfer = 2M\n"
				"opt_transfer = 64K\n"
				"max_unmap = 1M\n"
				"max_unmap_descriptors = 32\n"
				"max_write_same = 4M\n"
				"[luns.thick]\n"
				"first = 1\n"
				"count = 1\n"
				"size = 4M\n"
				"block_size = 4096\n"
				"thin = no\n"
				"partitions = 0\n"
				"[luns.many]\n"
				"first = 2\n"
				"count = 300\n"
				"size = 1M\n"
				"partitions = 0\n"
				"[luns.t1]\n"
				"first = 512\n"
				"count = 1\n"
				"size = 1M\n"
				"partitions = 0\n"
				"[store]\n"
				"type = mem\n"
				"[iscsi]\n"
				"enabled = yes\n"
				"targets = 3\n"
				"luns_per_target = 512\n"
				"threads = 2\n"
				"max_burst_length = 64K\n"
				"first_burst_length = 16K\n";

/* [iscsi] keys of the CHAP tests, after base_conf */
static const char chap_conf[] = "chap_user = " CHAP_USER "\n"
				"chap_secret = " CHAP_SECRET "\n"
				"mutual_user = " MUTUAL_USER "\n"
				"mutual_secret = " MUTUAL_SECRET "\n"
				"initiators = " INI_A ", " INI_B "\n";

/* One running front end and everything under it. */
struct env {
	struct cfg *cfg;
	struct store *store;
	struct lun_table *luns;
	struct scsi_target tgt;
	struct target target;
	void *fe;
	char portal[32]; /* "127.0.0.1:PORT" */
};

/*
 * libiscsi's log, level 6: the target's login answers ("TargetLoginReply:
 * KEY=VALUE [TARGET]"), one a line, so a test can see what was
 * negotiated. libiscsi's log callback has no argument: a static it is,
 * written only by the test's own thread.
 */
static char login_log[16384];
static size_t login_log_len;

static void login_log_fn(int level, const char *msg)
{
	static const char tag[] = "TargetLoginReply: ";
	size_t n = strlen(msg);

	(void)level;
	if (strncmp(msg, tag, sizeof(tag) - 1))
		return;
	if (login_log_len + n + 2 > sizeof(login_log))
		return;
	memcpy(login_log + login_log_len, msg, n);
	login_log_len += n;
	login_log[login_log_len++] = '\n';
	login_log[login_log_len] = '\0';
}

static void login_log_reset(void)
{
	login_log_len = 0;
	login_log[0] = '\0';
}

/* Did the target answer KEY=VALUE (exactly) in the last login? */
static bool login_answered(const char *kv)
{
	char want[160];
	const char *p = login_log;

	snprintf(want, sizeof(want), "TargetLoginReply: %s", kv);
	while ((p = strstr(p, want))) {
		p += strlen(want);
		if (*p == ' ' || *p == '\n')
			return true;
	}
	return false;
}

/* A port nobody listens on now: bind port 0, read it back, close. */
static uint16_t pick_port(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void env_free(struct env *e)
{
	iscsi_fe_stop(e->fe);
	e->fe = NULL;
	target_fini(&e->target);
	scsi_target_fini(&e->tgt);
	lun_table_destroy(e->luns);
	e->luns = NULL;
	store_destroy(e->store);
	e->store = NULL;
	cfg_free(e->cfg);
	e->cfg = NULL;
}

/* Parse base_conf + the portal + @extra, build the LUNs, start. */
static int env_try(struct env *e, uint16_t port, const char *extra)
{
	struct lun_table_params tp;
	struct cfg_parser *p;
	char text[sizeof(base_conf) + sizeof(chap_conf) + 64];
	unsigned int i;
	int ret;

	snprintf(text, sizeof(text), "%sportal = 127.0.0.1:%u\n%s", base_conf,
		 port, extra);
	snprintf(e->portal, sizeof(e->portal), "127.0.0.1:%u", port);
	assert_int_equal(cfg_parser_create(&p), 0);
	ret = cfg_parse_string(p, "test-iscsi-libiscsi", text);
	if (!ret)
		ret = cfg_finish(p, &e->cfg);
	if (ret)
		fail_msg("config: %s", cfg_errors(p));
	cfg_parser_destroy(p);

	assert_int_equal(store_mem_create(&e->store, &e->cfg->store.mem), 0);
	tp = (struct lun_table_params){
		.max_luns = e->cfg->target.max_luns,
		.seed = e->cfg->target.seed,
		.oui = e->cfg->target.oui,
		.store = e->store,
		.no_power_on_ua = !e->cfg->target.power_on_ua,
	};
	assert_int_equal(lun_table_create(&e->luns, &tp), 0);
	for (i = 0; i < e->cfg->ngroups; i++)
		assert_true(lun_group_add(e->luns, &e->cfg->groups[i]) >= 0);
	/* as sdswarmd sets it up */
	e->tgt = (struct scsi_target){.luns = e->luns, .port_id = 1, .tpg = 1};
	e->target = (struct target){.luns = e->luns, .scsi = &e->tgt};
	assert_int_equal(target_init(&e->target), 0);
	ret = iscsi_fe_start(&e->cfg->iscsi, &e->target, &e->fe);
	if (ret) {
		e->fe = NULL;
		env_free(e);
	}
	return ret;
}

static struct env *env_start(const char *extra)
{
	struct env *e = calloc(1, sizeof(*e));
	unsigned int i;
	int ret = -EADDRINUSE;

	assert_non_null(e);
	/* the port may be taken between pick_port() and the bind */
	for (i = 0; i < PORT_TRIES && ret == -EADDRINUSE; i++)
		ret = env_try(e, pick_port(), extra);
	assert_int_equal(ret, 0);
	return e;
}

static int setup_plain(void **state)
{
	*state = env_start("");
	return 0;
}

static int setup_chap(void **state)
{
	*state = env_start(chap_conf);
	return 0;
}

static int teardown(void **state)
{
	env_free(*state);
	free(*state);
	return 0;
}

/* A context as the tests use it: bounded, no reconnects, logging. */
static struct iscsi_context *ctx_new(const char *initiator)
{
	struct iscsi_context *ctx = iscsi_create_context(initiator);

	assert_non_null(ctx);
	assert_int_equal(iscsi_set_timeout(ctx, WAIT_S), 0);
	/* a dropped session must fail the test's command, not be retried */
	iscsi_set_noautoreconnect(ctx, 1);
	iscsi_set_log_level(ctx, 6);
	iscsi_set_log_fn(ctx, login_log_fn);
	return ctx;
}

struct login_opts {
	const char *initiator; /* NULL: INI_A */
	const char *target; /* NULL: T0 */
	int lun; /* UAs cleared at login; -1: none */
	enum iscsi_header_digest hd; /* 0: None */
	const char *user, *secret; /* CHAP */
	const char *tuser, *tsecret; /* mutual CHAP */
	bool r2t_only; /* ImmediateData=No, InitialR2T=Yes */
};

/* A normal session; on failure the context stays for iscsi_get_error(). */
static int ctx_login(struct env *e, struct iscsi_context **out,
		     const struct login_opts *o)
{
	struct iscsi_context *ctx =
		ctx_new(o->initiator ? o->initiator : INI_A);

	*out = ctx;
	assert_int_equal(iscsi_set_targetname(ctx, o->target ? o->target : T0),
			 0);
	assert_int_equal(iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL), 0);
	assert_int_equal(iscsi_set_header_digest(ctx, o->hd), 0);
	if (o->user)
		assert_int_equal(iscsi_set_initiator_username_pwd(ctx, o->user,
								  o->secret),
				 0);
	if (o->tuser)
		assert_int_equal(iscsi_set_target_username_pwd(ctx, o->tuser,
							       o->tsecret),
				 0);
	assert_int_equal(iscsi_set_immediate_data(
				 ctx, o->r2t_only ? ISCSI_IMMEDIATE_DATA_NO
						  : ISCSI_IMMEDIATE_DATA_YES),
			 0);
	assert_int_equal(
		iscsi_set_initial_r2t(ctx, o->r2t_only ? ISCSI_INITIAL_R2T_YES
						       : ISCSI_INITIAL_R2T_NO),
		0);
	login_log_reset();
	return iscsi_full_connect_sync(ctx, e->portal, o->lun);
}

/* ctx_login() that must succeed. */
static struct iscsi_context *login_ok(struct env *e, const struct login_opts *o)
{
	struct iscsi_context *ctx;

	if (ctx_login(e, &ctx, o))
		fail_msg("login to %s failed: %s", o->target ? o->target : T0,
			 iscsi_get_error(ctx));
	assert_true(iscsi_is_logged_in(ctx));
	return ctx;
}

/* The simplest session: INI_A on t0, LUN 0 cleared. */
static struct iscsi_context *login_t0(struct env *e)
{
	const struct login_opts o = {.lun = 0};

	return login_ok(e, &o);
}

static void logout(struct iscsi_context *ctx)
{
	if (iscsi_logout_sync(ctx))
		fail_msg("logout: %s", iscsi_get_error(ctx));
	assert_false(iscsi_is_logged_in(ctx));
	iscsi_destroy_context(ctx);
}

static void task_good_at(struct iscsi_context *ctx, struct scsi_task *t,
			 const char *file, int line)
{
	if (!t) {
		print_error("no answer: %s\n", iscsi_get_error(ctx));
		_fail(file, line);
	}
	if (t->status != SCSI_STATUS_GOOD) {
		print_error("status 0x%x, sense key %d ASC/ASCQ 0x%04x: %s\n",
			    t->status, (int)t->sense.key, t->sense.ascq,
			    iscsi_get_error(ctx));
		_fail(file, line);
	}
}

static void task_sense_at(struct iscsi_context *ctx, struct scsi_task *t,
			  int key, int ascq, const char *file, int line)
{
	if (!t) {
		print_error("no answer: %s\n", iscsi_get_error(ctx));
		_fail(file, line);
	}
	if (t->status != SCSI_STATUS_CHECK_CONDITION ||
	    (int)t->sense.key != key || t->sense.ascq != ascq) {
		print_error(
			"want CHECK CONDITION %d/0x%04x, got status 0x%x, sense key %d ASC/ASCQ 0x%04x\n",
			key, ascq, t->status, (int)t->sense.key, t->sense.ascq);
		_fail(file, line);
	}
}

/* The command ended GOOD. */
#define expect_good(ctx, t) task_good_at((ctx), (t), __FILE__, __LINE__)
/* The command ended CHECK CONDITION with this key and ASC/ASCQ. */
#define expect_sense(ctx, t, key, ascq)                                        \
	task_sense_at((ctx), (t), (key), (ascq), __FILE__, __LINE__)

/* TEST UNIT READY until GOOD, past pending unit attentions (at most 4). */
static void clear_ua(struct iscsi_context *ctx, int lun)
{
	struct scsi_task *t;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		t = iscsi_testunitready_sync(ctx, lun);
		assert_non_null(t);
		if (t->status == SCSI_STATUS_GOOD) {
			scsi_free_scsi_task(t);
			return;
		}
		assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
		assert_int_equal(t->sense.key, SCSI_SENSE_UNIT_ATTENTION);
		scsi_free_scsi_task(t);
	}
	fail_msg("LUN 0x%x: unit attentions do not end", lun);
}

/* A pattern nobody would mistake for another LBA's or for zeroes. */
static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	struct rng r = rng_init(seed);
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)rng_next(&r);
}

static void write_ok(struct iscsi_context *ctx, int lun, uint64_t lba,
		     uint8_t *buf, uint32_t len, int bs)
{
	struct scsi_task *t;

	t = iscsi_write16_sync(ctx, lun, lba, buf, len, bs, 0, 0, 0, 0, 0);
	expect_good(ctx, t);
	scsi_free_scsi_task(t);
}

/* READ (16) of @len bytes must return exactly @want. */
static void read_expect(struct iscsi_context *ctx, int lun, uint64_t lba,
			const uint8_t *want, uint32_t len, int bs)
{
	struct scsi_task *t;

	t = iscsi_read16_sync(ctx, lun, lba, len, bs, 0, 0, 0, 0, 0);
	expect_good(ctx, t);
	assert_int_equal(t->datain.size, len);
	assert_memory_equal(t->datain.data, want, len);
	scsi_free_scsi_task(t);
}

/* Write a fresh pattern, read it back. */
static void write_read(struct iscsi_context *ctx, int lun, uint64_t lba,
		       uint32_t len, int bs, uint32_t seed)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	fill(buf, len, seed);
	write_ok(ctx, lun, lba, buf, len, bs);
	read_expect(ctx, lun, lba, buf, len, bs);
	free(buf);
}

static void test_discovery(void **state)
{
	static const char *const names[] = {T0, T1, T2};
	struct env *e = *state;
	struct iscsi_discovery_address *list, *a;
	struct iscsi_context *ctx = ctx_new(INI_A);
	unsigned int seen[3] = {0}, i, n = 0;
	char portal[48];

	assert_int_equal(iscsi_set_session_type(ctx, ISCSI_SESSION_DISCOVERY),
			 0);
	if (iscsi_connect_sync(ctx, e->portal) || iscsi_login_sync(ctx))
		fail_msg("discovery login: %s", iscsi_get_error(ctx));
	list = iscsi_discovery_sync(ctx);
	if (!list)
		fail_msg("SendTargets: %s", iscsi_get_error(ctx));
	/* the portal's address with its target portal group tag */
	snprintf(portal, sizeof(portal), "%s,1", e->portal);
	for (a = list; a; a = a->next) {
		n++;
		for (i = 0; i < 3; i++)
			if (!strcmp(a->target_name, names[i]))
				break;
		if (i == 3)
			fail_msg("SendTargets lists unknown target %s",
				 a->target_name);
		seen[i]++;
		assert_non_null(a->portals);
		assert_string_equal(a->portals->portal, portal);
		assert_null(a->portals->next);
	}
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(seen[i], 1);
	iscsi_free_discovery_data(ctx, list);
	logout(ctx);
}

static void test_digests(void **state)
{
	static const enum iscsi_header_digest modes[] = {
		ISCSI_HEADER_DIGEST_CRC32C,
		ISCSI_HEADER_DIGEST_NONE,
	};
	struct env *e = *state;
	struct iscsi_context *ctx;
	struct scsi_task *t;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		const struct login_opts o = {.lun = 0, .hd = modes[i]};

		ctx = login_ok(e, &o);
		assert_true(login_answered(i == 0 ? "HeaderDigest=CRC32C"
						  : "HeaderDigest=None"));
		/* libiscsi 1.19 only ever offers DataDigest=None */
		assert_true(login_answered("DataDigest=None"));
		/* PDUs with data segments both ways, digested or not */
		write_read(ctx, 0, 64 + i * 128, 65536, 512, 100 + i);
		t = iscsi_inquiry_sync(ctx, 0, 0, 0, 255);
		expect_good(ctx, t);
		scsi_free_scsi_task(t);
		logout(ctx);
	}
}

/* Find the designator of @type and @assoc in a VPD 83h page. */
static const struct scsi_inquiry_device_designator *
find_desig(const struct scsi_inquiry_device_identification *id, int type,
	   int assoc)
{
	const struct scsi_inquiry_device_designator *d;

	for (d = id->designators; d; d = d->next)
		if ((int)d->designator_type == type &&
		    (int)d->association == assoc)
			return d;
	return NULL;
}

/* VPD 83h's SCSI name string of the target device is @name. */
static void expect_device_name(struct scsi_inquiry_device_identification *id,
			       const char *name)
{
	const struct scsi_inquiry_device_designator *d;
	size_t n = strlen(name);

	d = find_desig(id, SCSI_DESIGNATOR_TYPE_SCSI_NAME_STRING,
		       SCSI_ASSOCIATION_TARGET_DEVICE);
	assert_non_null(d);
	assert_true((size_t)d->designator_length >= n);
	assert_memory_equal(d->designator, name, n);
	assert_true((size_t)d->designator_length == n ||
		    d->designator[n] == '\0');
}

/* INQUIRY VPD 80h of @lun must give table LUN @tlun's serial. */
static void expect_serial(struct env *e, struct iscsi_context *ctx, int lun,
			  uint32_t tlun)
{
	struct scsi_inquiry_unit_serial_number *sn;
	char want[LUN_SERIAL_LEN + 1];
	struct scsi_task *t;

	assert_int_equal(lun_serial(e->luns, tlun, want, sizeof(want)),
			 LUN_SERIAL_LEN);
	t = iscsi_inquiry_sync(ctx, lun, 1,
			       SCSI_INQUIRY_PAGECODE_UNIT_SERIAL_NUMBER, 255);
	expect_good(ctx, t);
	sn = scsi_datain_unmarshall(t);
	assert_non_null(sn);
	assert_int_equal(sn->pagecode,
			 SCSI_INQUIRY_PAGECODE_UNIT_SERIAL_NUMBER);
	assert_string_equal(sn->usn, want);
	scsi_free_scsi_task(t);
}

static void test_inquiry(void **state)
{
	struct env *e = *state;
	struct iscsi_context *ctx = login_t0(e);
	const struct scsi_inquiry_device_designator *d;
	struct scsi_inquiry_device_identification *id;
	struct scsi_inquiry_block_limits *bl;
	struct scsi_inquiry_standard *std;
	struct scsi_task *t;
	uint8_t naa[16];
	uint64_t hi, lo;
	unsigned int i;

	t = iscsi_inquiry_sync(ctx, 0, 0, 0, 255);
	expect_good(ctx, t);
	std = scsi_datain_unmarshall(t);
	assert_non_null(std);
	assert_int_equal(std->qualifier,
			 SCSI_INQUIRY_PERIPHERAL_QUALIFIER_CONNECTED);
	assert_int_equal(std->device_type,
			 SCSI_INQUIRY_PERIPHERAL_DEVICE_TYPE_DIRECT_ACCESS);
	assert_int_equal(std->rmb, 0);
	/* T10 fields are space padded on the wire */
	assert_string_equal(std->vendor_identification, "ACME    ");
	assert_string_equal(std->product_identification, "SWARMDISK       ");
	assert_string_equal(std->product_revision_level, "7.1A");
	scsi_free_scsi_task(t);

	expect_serial(e, ctx, 0, 0);

	/* the LUN's NAA designator is its WWN, all 16 bytes */
	lun_wwn(e->luns, 0, &hi, &lo);
	for (i = 0; i < 8; i++) {
		naa[i] = (uint8_t)(hi >> (56 - 8 * i));
		naa[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	assert_int_equal(naa[0] >> 4, 6); /* NAA IEEE Registered Extended */
	t = iscsi_inquiry_sync(
		ctx, 0, 1, SCSI_INQUIRY_PAGECODE_DEVICE_IDENTIFICATION, 255);
	expect_good(ctx, t);
	id = scsi_datain_unmarshall(t);
	assert_non_null(id);
	d = find_desig(id, SCSI_DESIGNATOR_TYPE_NAA,
		       SCSI_ASSOCIATION_LOGICAL_UNIT);
	assert_non_null(d);
	assert_int_equal(d->code_set, SCSI_CODESET_BINARY);
	assert_int_equal(d->designator_length, 16);
	assert_memory_equal(d->designator, naa, 16);
	/* the port sdswarmd names: relative port 1, target port group 1 */
	d = find_desig(id, SCSI_DESIGNATOR_TYPE_RELATIVE_TARGET_PORT,
		       SCSI_ASSOCIATION_TARGET_PORT);
	assert_non_null(d);
	assert_int_equal(d->designator_length, 4);
	assert_int_equal((uint8_t)d->designator[3], 1);
	expect_device_name(id, T0);
	scsi_free_scsi_task(t);

	/* the block limits the config gave LUN 0, in 512-byte blocks */
	t = iscsi_inquiry_sync(ctx, 0, 1, SCSI_INQUIRY_PAGECODE_BLOCK_LIMITS,
			       255);
	expect_good(ctx, t);
	bl = scsi_datain_unmarshall(t);
	assert_non_null(bl);
	assert_int_equal(bl->max_xfer_len, 4096); /* max_transfer = 2M */
	assert_int_equal(bl->opt_xfer_len, 128); /* opt_transfer = 64K */
	assert_int_equal(bl->max_unmap, 2048); /* max_unmap = 1M */
	assert_int_equal(bl->max_unmap_bdc, 32); /* descriptors */
	assert_int_equal(bl->max_ws_len, 8192); /* max_write_same = 4M */
	scsi_free_scsi_task(t);

	/* the thick LUN: the defaults, its own identity, no UNMAP */
	clear_ua(ctx, 1);
	t = iscsi_inquiry_sync(ctx, 1, 0, 0, 255);
	expect_good(ctx, t);
	std = scsi_datain_unmarshall(t);
	assert_non_null(std);
	assert_string_equal(std->vendor_identification, "SDSWARM ");
	scsi_free_scsi_task(t);
	expect_serial(e, ctx, 1, 1);
	t = iscsi_inquiry_sync(ctx, 1, 1, SCSI_INQUIRY_PAGECODE_BLOCK_LIMITS,
			       255);
	expect_good(ctx, t);
	bl = scsi_datain_unmarshall(t);
	assert_non_null(bl);
	assert_int_equal(bl->max_xfer_len, 1024); /* 4M of 4096 */
	assert_int_equal(bl->max_unmap, 0);
	scsi_free_scsi_task(t);
	logout(ctx);

	/* t1's LUN 0 is table LUN 512: its serial says so */
	{
		const struct login_opts o = {.target = T1, .lun = 0};

		ctx = login_ok(e, &o);
		expect_serial(e, ctx, 0, 512);
		/* ... and its target device name is t1's, not t0's */
		clear_ua(ctx, 0);
		t = iscsi_inquiry_sync(
			ctx, 0, 1, SCSI_INQUIRY_PAGECODE_DEVICE_IDENTIFICATION,
			255);
		expect_good(ctx, t);
		id = scsi_datain_unmarshall(t);
		assert_non_null(id);
		expect_device_name(id, T1);
		scsi_free_scsi_task(t);
		logout(ctx);
	}
}

static void expect_capacity(struct iscsi_context *ctx, int lun, uint64_t blocks,
			    uint32_t bs, bool thin)
{
	struct scsi_readcapacity16 *rc;
	struct scsi_task *t;

	t = iscsi_readcapacity16_sync(ctx, lun);
	expect_good(ctx, t);
	rc = scsi_datain_unmarshall(t);
	assert_non_null(rc);
	assert_int_equal(rc->returned_lba, blocks - 1);
	assert_int_equal(rc->block_length, bs);
	assert_int_equal(rc->lbpme, thin);
	scsi_free_scsi_task(t);
}

static void test_readcapacity(void **state)
{
	struct env *e = *state;
	struct iscsi_context *ctx = login_t0(e);
	struct scsi_task *t;

	expect_capacity(ctx, 0, LUN0_BLOCKS, 512, true);
	/* a LUN's first command reports its power on (SPC-4 6.1) */
	t = iscsi_testunitready_sync(ctx, 1);
	expect_sense(ctx, t, SCSI_SENSE_UNIT_ATTENTION,
		     SCSI_SENSE_ASCQ_POWER_ON_OCCURED);
	scsi_free_scsi_task(t);
	expect_capacity(ctx, 1, LUN1_BLOCKS, 4096, false);
	clear_ua(ctx, 2);
	expect_capacity(ctx, 2, MANY_BLOCKS, 512, true);
	logout(ctx);
}

static void test_reportluns(void **state)
{
	struct env *e = *state;
	struct iscsi_context *ctx = login_t0(e);
	struct scsi_reportluns_list *list;
	const uint8_t *raw;
	struct scsi_task *t;
	unsigned int i;

	t = iscsi_reportluns_sync(ctx, 0, 8 + 8 * 512);
	expect_good(ctx, t);
	list = scsi_datain_unmarshall(t);
	assert_non_null(list);
	assert_int_equal(list->num, T0_LUNS);
	/* peripheral addressing to 255, flat space addressing above */
	for (i = 0; i < T0_LUNS; i++)
		assert_int_equal(list->luns[i], i < 256 ? i : FLAT(i));
	/* the raw entry of LUN 300: 41h 2Ch and six zero bytes */
	raw = t->datain.data + 8 + 8 * 300;
	assert_int_equal(raw[0], 0x41);
	assert_int_equal(raw[1], 0x2c);
	for (i = 2; i < 8; i++)
		assert_int_equal(raw[i], 0);
	scsi_free_scsi_task(t);

	/* LUN 300 answers through its flat address ... */
	clear_ua(ctx, FLAT(300));
	expect_serial(e, ctx, FLAT(300), 300);
	expect_capacity(ctx, FLAT(300), MANY_BLOCKS, 512, true);
	write_read(ctx, FLAT(300), MANY_BLOCKS - 8, 4096, 512, 300);
	/* ... and 012Ch (peripheral addressing, bus 1) is no LUN of ours */
	t = iscsi_testunitready_sync(ctx, 0x012c);
	expect_sense(ctx, t, SCSI_SENSE_ILLEGAL_REQUEST,
		     SCSI_SENSE_ASCQ_LOGICAL_UNIT_NOT_SUPPORTED);
	scsi_free_scsi_task(t);
	/* and LUN 302, one past the last, is absent */
	t = iscsi_testunitready_sync(ctx, FLAT(302));
	expect_sense(ctx, t, SCSI_SENSE_ILLEGAL_REQUEST,
		     SCSI_SENSE_ASCQ_LOGICAL_UNIT_NOT_SUPPORTED);
	scsi_free_scsi_task(t);
	logout(ctx);

	/* t1 has its one LUN, t2 none: an empty list, not an error */
	{
		const struct login_opts o1 = {.target = T1, .lun = 0};
		const struct login_opts o2 = {.target = T2, .lun = -1};

		ctx = login_ok(e, &o1);
		t = iscsi_reportluns_sync(ctx, 0, 8 + 8 * 16);
		expect_good(ctx, t);
		list = scsi_datain_unmarshall(t);
		assert_non_null(list);
		assert_int_equal(list->num, 1);
		assert_int_equal(list->luns[0], 0);
		scsi_free_scsi_task(t);
		logout(ctx);

		ctx = login_ok(e, &o2);
		t = iscsi_reportluns_sync(ctx, 0, 8 + 8 * 16);
		expect_good(ctx, t);
		list = scsi_datain_unmarshall(t);
		assert_non_null(list);
		assert_int_equal(list->num, 0);
		scsi_free_scsi_task(t);
		logout(ctx);
	}
}

static void test_write_read(void **state)
{
	static const uint8_t zero[4096];
	struct env *e = *state;
	struct iscsi_context *ctx = login_t0(e);
	uint8_t last[512], *big;
	struct scsi_task *t;

	write_read(ctx, 0, 0, 4096, 512, 1);
	write_read(ctx, 0, 1000, 8192, 512, 2);
	fill(last, sizeof(last), 3);
	write_ok(ctx, 0, LUN0_BLOCKS - 1, last, sizeof(last), 512);
	read_expect(ctx, 0, LUN0_BLOCKS - 1, last, sizeof(last), 512);
	/* never written: zeroes */
	read_expect(ctx, 0, 5000, zero, sizeof(zero), 512);
	/* the writes did not spill into their neighbours */
	read_expect(ctx, 0, 8, zero, 512, 512);
	read_expect(ctx, 0, 1016, zero, 512, 512);

	/* past the end: LBA OUT OF RANGE, and the last block is untouched */
	big = malloc(1024);
	assert_non_null(big);
	fill(big, 1024, 4);
	t = iscsi_write16_sync(ctx, 0, LUN0_BLOCKS - 1, big, 1024, 512, 0, 0, 0,
			       0, 0);
	expect_sense(ctx, t, SCSI_SENSE_ILLEGAL_REQUEST,
		     SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
	scsi_free_scsi_task(t);
	free(big);
	read_expect(ctx, 0, LUN0_BLOCKS - 1, last, sizeof(last), 512);
	t = iscsi_read16_sync(ctx, 0, LUN0_BLOCKS, 512, 512, 0, 0, 0, 0, 0);
	expect_sense(ctx, t, SCSI_SENSE_ILLEGAL_REQUEST,
		     SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
	scsi_free_scsi_task(t);

	/* the thick LUN's 4096-byte blocks, its last one too */
	clear_ua(ctx, 1);
	write_read(ctx, 1, 0, 16384, 4096, 5);
	write_read(ctx, 1, LUN1_BLOCKS - 1, 4096, 4096, 6);
	logout(ctx);
}

static void test_r2t(void **state)
{
	const uint32_t len = 1u << 20; /* 16 bursts of MAX_BURST */
	struct env *e = *state;
	struct iscsi_context *ctx;
	char kv[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		/* all data solicited; then immediate + unsolicited + R2T */
		const struct login_opts o = {.lun = 0, .r2t_only = i == 0};

		ctx = login_ok(e, &o);
		snprintf(kv, sizeof(kv), "MaxBurstLength=%u", MAX_BURST);
		assert_true(login_answered(kv));
		snprintf(kv, sizeof(kv), "FirstBurstLength=%u", FIRST_BURST);
		assert_true(login_answered(kv));
		assert_true(login_answered(i == 0 ? "InitialR2T=Yes"
						  : "InitialR2T=No"));
		assert_true(login_answered(i == 0 ? "ImmediateData=No"
						  : "ImmediateData=Yes"));
		write_read(ctx, 0, 4096 + i * 2048, len, 512, 10 + i);
		logout(ctx);
	}
}

static void test_chap(void **state)
{
	struct env *e = *state;
	struct iscsi_context *ctx;
	struct login_opts o = {
		.lun = 0,
		.user = CHAP_USER,
		.secret = CHAP_SECRET,
	};

	/* the right secret from an initiator on the list */
	ctx = login_ok(e, &o);
	write_read(ctx, 0, 10, 512, 512, 20);
	logout(ctx);

	/* mutual: the target proves it knows its secret */
	o.tuser = MUTUAL_USER;
	o.tsecret = MUTUAL_SECRET;
	ctx = login_ok(e, &o);
	logout(ctx);
	o.tsecret = "not-the-target-secret";
	assert_int_not_equal(ctx_login(e, &ctx, &o), 0);
	assert_false(iscsi_is_logged_in(ctx));
	iscsi_destroy_context(ctx);
	o.tuser = NULL;
	o.tsecret = NULL;

	/* a wrong secret: Authentication failure (0201h) */
	o.secret = "wrong-secret-0000";
	assert_int_not_equal(ctx_login(e, &ctx, &o), 0);
	assert_false(iscsi_is_logged_in(ctx));
	assert_non_null(
		strstr(iscsi_get_error(ctx), "Authentication failure(513)"));
	iscsi_destroy_context(ctx);

	/* no CHAP at all is refused too */
	o.user = NULL;
	o.secret = NULL;
	assert_int_not_equal(ctx_login(e, &ctx, &o), 0);
	assert_false(iscsi_is_logged_in(ctx));
	iscsi_destroy_context(ctx);

	/* the right secret from an initiator not on the list: 0202h */
	o.initiator = INI_STRANGER;
	o.user = CHAP_USER;
	o.secret = CHAP_SECRET;
	assert_int_not_equal(ctx_login(e, &ctx, &o), 0);
	assert_false(iscsi_is_logged_in(ctx));
	assert_non_null(
		strstr(iscsi_get_error(ctx), "Authorization failure(514)"));
	iscsi_destroy_context(ctx);

	/* the second listed initiator gets in: the refusals cost nothing */
	o.initiator = INI_B;
	ctx = login_ok(e, &o);
	logout(ctx);
}

static void test_lun_reset(void **state)
{
	const struct login_opts oa = {.initiator = INI_A, .lun = 0};
	const struct login_opts ob = {.initiator = INI_B, .lun = 0};
	struct env *e = *state;
	struct iscsi_context *a = login_ok(e, &oa), *b = login_ok(e, &ob);
	struct iscsi_context *who[2] = {a, b};
	uint8_t buf[4096];
	struct scsi_task *t;
	unsigned int i;

	fill(buf, sizeof(buf), 30);
	write_ok(a, 0, 300, buf, sizeof(buf), 512);

	/* 0: the response was Function Complete */
	if (iscsi_task_mgmt_lun_reset_sync(a, 0))
		fail_msg("LUN RESET: %s", iscsi_get_error(a));

	/* SAM-5: every I_T nexus sees the reset, the one that asked too */
	for (i = 0; i < 2; i++) {
		t = iscsi_testunitready_sync(who[i], 0);
		expect_sense(who[i], t, SCSI_SENSE_UNIT_ATTENTION,
			     SCSI_SENSE_ASCQ_BUS_RESET);
		scsi_free_scsi_task(t);
		/* reported once per nexus */
		t = iscsi_testunitready_sync(who[i], 0);
		expect_good(who[i], t);
		scsi_free_scsi_task(t);
	}
	/* a reset is no format: the data stays */
	read_expect(b, 0, 300, buf, sizeof(buf), 512);

	/* a LUN that does not exist: LUN Does Not Exist */
	assert_int_not_equal(iscsi_task_mgmt_lun_reset_sync(a, FLAT(400)), 0);
	assert_non_null(strstr(iscsi_get_error(a),
			       "TASK MGMT responded LUN Does Not Exist"));
	/* and the session carries on */
	t = iscsi_testunitready_sync(a, 0);
	expect_good(a, t);
	scsi_free_scsi_task(t);
	logout(a);
	logout(b);
}

/*
 * TARGET WARM RESET resets the target it came to: t0's LUNs report it,
 * t1 (another IQN, another target) sees nothing and its session goes on.
 */
static void test_target_reset_scope(void **state)
{
	const struct login_opts oa = {.initiator = INI_A, .lun = 0};
	const struct login_opts ob = {
		.initiator = INI_B, .target = T1, .lun = 0};
	struct env *e = *state;
	struct iscsi_context *a = login_ok(e, &oa), *b = login_ok(e, &ob);
	struct scsi_task *t;

	if (iscsi_task_mgmt_target_warm_reset_sync(a))
		fail_msg("TARGET WARM RESET: %s", iscsi_get_error(a));
	t = iscsi_testunitready_sync(a, 0);
	expect_sense(a, t, SCSI_SENSE_UNIT_ATTENTION,
		     SCSI_SENSE_ASCQ_BUS_RESET);
	scsi_free_scsi_task(t);
	t = iscsi_testunitready_sync(b, 0);
	expect_good(b, t);
	scsi_free_scsi_task(t);
	logout(a);
	logout(b);
}

static void test_two_sessions(void **state)
{
	const struct login_opts oa = {.initiator = INI_A, .lun = 0};
	const struct login_opts ob = {.initiator = INI_B, .lun = 0};
	struct env *e = *state;
	struct iscsi_context *a = login_ok(e, &oa), *b = login_ok(e, &ob);
	uint8_t pa[8192], pb[8192];
	struct scsi_task *t;
	struct timespec t0, t1;
	double s;

	fill(pa, sizeof(pa), 40);
	fill(pb, sizeof(pb), 41);
	write_ok(a, 0, 100, pa, sizeof(pa), 512);
	write_ok(b, 0, 200, pb, sizeof(pb), 512);
	read_expect(a, 0, 200, pb, sizeof(pb), 512);
	read_expect(b, 0, 100, pa, sizeof(pa), 512);
	/* an overwrite by one is what the other reads next */
	fill(pa, sizeof(pa), 42);
	write_ok(b, 0, 100, pa, sizeof(pa), 512);
	read_expect(a, 0, 100, pa, sizeof(pa), 512);

	/* a logs out cleanly; b stays while the front end stops */
	logout(a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	iscsi_fe_stop(e->fe);
	e->fe = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(s < 5.0);

	/* b's session is gone: its next command fails, and soon */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	t = iscsi_testunitready_sync(b, 0);
	assert_true(!t || t->status != SCSI_STATUS_GOOD);
	if (t)
		scsi_free_scsi_task(t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < WAIT_S);
	iscsi_destroy_context(b);

	/* and the portal is closed */
	assert_int_not_equal(ctx_login(e, &a, &oa), 0);
	iscsi_destroy_context(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discovery, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_digests, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_inquiry, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_readcapacity, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_reportluns, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_read, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_r2t, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_chap, setup_chap,
						teardown),
		cmocka_unit_test_setup_teardown(test_lun_reset, setup_plain,
						teardown),
		cmocka_unit_test_setup_teardown(test_target_reset_scope,
						setup_plain, teardown),
		cmocka_unit_test_setup_teardown(test_two_sessions, setup_plain,
						teardown),
	};

	/* bounded even if a libiscsi call or iscsi_fe_stop() hung */
	alarm(WATCHDOG_S);
	/* as sdswarmd: a peer gone mid-write is an error, not a signal */
	signal(SIGPIPE, SIG_IGN);
	log_set_level(LOG_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
