// SPDX-License-Identifier: MIT
/*
 * The TCMU ring code on a ring laid out in ordinary memory exactly as
 * target_core_user lays it out: the mailbox at 0, the command ring at
 * cmdr_off, the data area after it; each command entry a header, the
 * request with iovec offsets into the data area, the CDB after the
 * iovecs, PAD to the ring's end when an entry would not fit. Commands go
 * through the real target core (a harness LUN table), completions and
 * cmd_tail are read back as the kernel would, and the "uio fd" is a pipe
 * that counts notifications.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fault.h"
#include "frontend/tcmu/tcmu_i.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "scsi-harness.h"

#define CMDR_OFF ((uint32_t)sizeof(struct tcmu_mailbox))
#define CMDR_SIZE 1024u /* small: a few entries force the wrap */
#define DATA_SIZE (64u << 10)
#define MAP_SIZE (CMDR_OFF + CMDR_SIZE + DATA_SIZE)
#define DATA_OFF (CMDR_OFF + CMDR_SIZE)
#define LUN_BYTES (64ull << 20)

/* The kernel's side: the mapping, its head, where data goes next. */
struct kring {
	uint8_t *map;
	uint32_t head;
	uint32_t data_next;
	uint16_t next_id;
	struct harness *h;
	struct tcmu_dev dev;
	struct tcmu_serve_ctx ctx;
	struct iovec iov[TCMU_IOV_MAX];
	int pipe[2];
};

static struct kring *kr_new(uint16_t caps)
{
	struct kring *k = calloc(1, sizeof(*k));
	struct tcmu_mailbox *mb;

	assert_non_null(k);
	k->map = malloc(MAP_SIZE);
	assert_non_null(k->map);
	memset(k->map, 0, MAP_SIZE);
	mb = (struct tcmu_mailbox *)k->map;
	mb->version = TCMU_MAILBOX_VERSION;
	mb->flags = caps;
	mb->cmdr_off = CMDR_OFF;
	mb->cmdr_size = CMDR_SIZE;
	k->data_next = DATA_OFF;
	k->next_id = 1;
	k->h = h_new_luns(4, 2, LUN_BYTES);
	h_clear_ua(k->h, 0);
	h_clear_ua(k->h, 1);
	assert_int_equal(pipe2(k->pipe, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(tcmu_ring_init(&k->dev.ring, k->map, MAP_SIZE), 0);
	k->dev.fd = k->pipe[1];
	k->dev.lun = 0;
	k->dev.view = (struct scsi_view){.base = 0, .count = 1};
	k->ctx = (struct tcmu_serve_ctx){.tgt = &k->h->tgt,
					 .nexus = 1,
					 .initiator = "naa.5001405000000002",
					 .iov = k->iov};
	return k;
}

static void kr_free(struct kring *k)
{
	tcmu_dev_release(&k->dev);
	close(k->pipe[0]);
	close(k->pipe[1]);
	h_free(k->h);
	free(k->map);
	free(k);
}

static struct tcmu_mailbox *mb(struct kring *k)
{
	return (struct tcmu_mailbox *)k->map;
}

static uint8_t *slot(struct kring *k, uint32_t off)
{
	return k->map + CMDR_OFF + off;
}

static uint32_t round8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

static void put_hdr(uint8_t *ent, uint32_t len, enum tcmu_opcode op,
		    uint16_t id)
{
	struct tcmu_cmd_entry_hdr hdr = {0};
	uint32_t len_op = 0;

	tcmu_hdr_set_len(&len_op, len);
	tcmu_hdr_set_op(&len_op, op);
	hdr.len_op = len_op;
	hdr.cmd_id = id;
	memcpy(ent, &hdr, sizeof(hdr));
}

/* As the kernel: PAD to the end when @len does not fit before it. */
static uint32_t reserve(struct kring *k, uint32_t len)
{
	if (k->head + len > CMDR_SIZE) {
		put_hdr(slot(k, k->head), CMDR_SIZE - k->head, TCMU_OP_PAD, 0);
		k->head = 0;
	}
	return k->head;
}

static void publish_head(struct kring *k, uint32_t at, uint32_t len)
{
	k->head = (at + len) % CMDR_SIZE;
	__atomic_store_n(&mb(k)->cmd_head, k->head, __ATOMIC_RELEASE);
}

/* Queues a command whose data buffer is split into the @n @lens. */
static uint16_t queue_cmd(struct kring *k, const uint8_t *cdb, uint32_t cdb_len,
			  const uint32_t *lens, unsigned int n)
{
	uint32_t base = round8((uint32_t)sizeof(struct tcmu_cmd_entry) +
			       n * (uint32_t)sizeof(struct iovec));
	uint32_t len = base + round8(cdb_len), at, cnt = n, i;
	uint64_t off, l, cdb_off;
	uint16_t id = k->next_id++;
	uint8_t *ent;

	at = reserve(k, len);
	ent = slot(k, at);
	memset(ent, 0xee, len); /* stale bytes the parser must not trust */
	put_hdr(ent, len, TCMU_OP_CMD, id);
	memcpy(ent + offsetof(struct tcmu_cmd_entry, req.iov_cnt), &cnt, 4);
	memset(ent + offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt), 0, 8);
	cdb_off = CMDR_OFF + at + base;
	memcpy(ent + offsetof(struct tcmu_cmd_entry, req.cdb_off), &cdb_off, 8);
	for (i = 0; i < n; i++) {
		uint8_t *v = ent + offsetof(struct tcmu_cmd_entry, req.iov) +
			     i * sizeof(struct iovec);

		if (k->data_next + lens[i] > MAP_SIZE)
			k->data_next = DATA_OFF;
		off = k->data_next;
		l = lens[i];
		k->data_next += lens[i];
		memcpy(v + offsetof(struct iovec, iov_base), &off, 8);
		memcpy(v + offsetof(struct iovec, iov_len), &l, 8);
	}
	memcpy(k->map + cdb_off, cdb, cdb_len);
	publish_head(k, at, len);
	return id;
}

static uint8_t *iov_data(struct kring *k, uint16_t id, uint32_t at,
			 unsigned int i)
{
	uint8_t *ent = slot(k, at);
	uint64_t off;

	(void)id;
	memcpy(&off,
	       ent + offsetof(struct tcmu_cmd_entry, req.iov) +
		       i * sizeof(struct iovec) +
		       offsetof(struct iovec, iov_base),
	       8);
	return k->map + off;
}

/* What the kernel reads back from a completed slot. */
struct kdone {
	uint16_t id;
	uint8_t uflags;
	uint8_t status;
	uint32_t read_len;
	uint8_t sense[TCMU_SENSE_BUFFERSIZE];
};

static struct kdone done_at(struct kring *k, uint32_t at)
{
	uint8_t *ent = slot(k, at);
	struct kdone d;

	memcpy(&d.id, ent + offsetof(struct tcmu_cmd_entry_hdr, cmd_id), 2);
	d.uflags = ent[offsetof(struct tcmu_cmd_entry_hdr, uflags)];
	d.status = ent[offsetof(struct tcmu_cmd_entry, rsp.scsi_status)];
	memcpy(&d.read_len, ent + offsetof(struct tcmu_cmd_entry, rsp.read_len),
	       4);
	memcpy(d.sense, ent + offsetof(struct tcmu_cmd_entry, rsp.sense_buffer),
	       sizeof(d.sense));
	return d;
}

/* Notifications in the pipe since the last call (4 bytes each). */
static unsigned int notifies(struct kring *k)
{
	uint32_t v;
	unsigned int n = 0;

	while (read(k->pipe[0], &v, sizeof(v)) == sizeof(v)) {
		assert_int_equal(v, 1);
		n++;
	}
	return n;
}

static uint32_t tail(struct kring *k)
{
	return __atomic_load_n(&mb(k)->cmd_tail, __ATOMIC_ACQUIRE);
}

static const uint8_t tur[6] = {0x00};
static const uint8_t inquiry[6] = {0x12, 0, 0, 0, 0xff, 0};

static void test_init_checks(void **state)
{
	uint8_t *map = calloc(1, MAP_SIZE);
	struct tcmu_mailbox *m = (struct tcmu_mailbox *)map;
	struct tcmu_ring r;

	(void)state;
	m->version = 1;
	m->cmdr_off = CMDR_OFF;
	m->cmdr_size = CMDR_SIZE;
	assert_int_equal(tcmu_ring_init(&r, map, MAP_SIZE), -EPROTONOSUPPORT);
	m->version = TCMU_MAILBOX_VERSION;
	m->cmdr_size = MAP_SIZE; /* past the mapping */
	assert_int_equal(tcmu_ring_init(&r, map, MAP_SIZE), -EPROTO);
	m->cmdr_size = CMDR_SIZE + 4; /* not 8-aligned */
	assert_int_equal(tcmu_ring_init(&r, map, MAP_SIZE), -EPROTO);
	m->cmdr_size = CMDR_SIZE;
	m->flags = TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN;
	assert_int_equal(tcmu_ring_init(&r, map, MAP_SIZE), 0);
	assert_int_equal(r.caps, m->flags);
	assert_int_equal(r.cmdr_size, CMDR_SIZE);
	assert_ptr_equal(r.cmdr, map + CMDR_OFF);
	free(map);
}

/* INQUIRY through the ring: sdswarm's identity in the data area, GOOD,
 * the read length reported, cmd_tail at cmd_head, one notification. */
static void test_inquiry(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC |
				 TCMU_MAILBOX_FLAG_CAP_READ_LEN);
	uint32_t len = 255, at = k->head;
	uint16_t id = queue_cmd(k, inquiry, 6, &len, 1);
	uint8_t *data = iov_data(k, id, at, 0);
	struct kdone d;

	(void)state;
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	d = done_at(k, at);
	assert_int_equal(d.id, id);
	assert_int_equal(d.status, SCSI_GOOD);
	assert_int_equal(d.uflags, TCMU_UFLAG_READ_LEN);
	assert_true(d.read_len >= 36 && d.read_len < 255);
	assert_int_equal(data[0] & 0x1f, 0); /* direct-access block device */
	assert_memory_equal(data + 8, "SDSWARM ", 8);
	assert_int_equal(tail(k), k->head);
	assert_int_equal(notifies(k), 1);
	/* nothing new: no completion, no notification */
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 0);
	assert_int_equal(notifies(k), 0);
	kr_free(k);
}

/* Without CAP_READ_LEN the flag is never set. */
static void test_no_read_len_cap(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint32_t len = 255, at = k->head;

	(void)state;
	queue_cmd(k, inquiry, 6, &len, 1);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	assert_int_equal(done_at(k, at).uflags, 0);
	assert_int_equal(done_at(k, at).status, SCSI_GOOD);
	kr_free(k);
}

/* WRITE(10) from two iovecs, READ(10) back into three: the bytes agree,
 * so the iovec offsets were mapped into the data area in order. */
static void test_write_read_iovecs(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint8_t wr[10] = {0x2a, 0, 0, 0, 0, 100, 0, 0, 8, 0};
	uint8_t rd[10] = {0x28, 0, 0, 0, 0, 100, 0, 0, 8, 0};
	uint32_t wl[2] = {1024, 3072}, rl[3] = {512, 2048, 1536};
	uint32_t at, i, n;
	uint8_t *p, want[4096], got[4096];

	(void)state;
	for (i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i * 7 + 3);
	at = k->head;
	queue_cmd(k, wr, 10, wl, 2);
	memcpy(iov_data(k, 0, at, 0), want, 1024);
	memcpy(iov_data(k, 0, at, 1), want + 1024, 3072);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	assert_int_equal(done_at(k, at).status, SCSI_GOOD);
	at = k->head;
	queue_cmd(k, rd, 10, rl, 3);
	/* iov_data reads the request before the completion overwrote the
	 * slot's union: take the pointers first */
	{
		uint8_t *b[3];

		for (i = 0; i < 3; i++)
			b[i] = iov_data(k, 0, at, i);
		assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
		assert_int_equal(done_at(k, at).status, SCSI_GOOD);
		for (i = 0, n = 0; i < 3; n += rl[i], i++) {
			p = b[i];
			memcpy(got + n, p, rl[i]);
		}
	}
	assert_memory_equal(got, want, sizeof(want));
	kr_free(k);
}

/* Entries that do not fit before the ring's end follow a PAD; the
 * parser skips it, the completion lands at offset 0, and cmd_tail wraps. */
static void test_pad_wrap(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint32_t ats[32], n = 0, i, before = 0;
	uint16_t ids[32];
	bool wrapped = false;

	(void)state;
	while (!wrapped && n < 32) {
		before = k->head;
		ids[n] = queue_cmd(k, tur, 6, NULL, 0);
		ats[n] = (k->head + CMDR_SIZE -
			  round8((uint32_t)sizeof(struct tcmu_cmd_entry)) - 8) %
			 CMDR_SIZE;
		wrapped = ats[n] < before;
		n++;
		/* serve every three, as a loop woken now and then would */
		if (n % 3 == 0)
			assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0),
					 3);
	}
	assert_true(wrapped);
	assert_int_equal(ats[n - 1], 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), (int)(n % 3));
	/* the slots since the last reuse hold their own completions */
	for (i = n >= 8 ? n - 8 : 0; i < n; i++) {
		if (i + 1 < n && ats[i] < ats[n - 1] + 120)
			continue; /* overwritten by a later entry */
		assert_int_equal(done_at(k, ats[i]).id, ids[i]);
		assert_int_equal(done_at(k, ats[i]).status, SCSI_GOOD);
	}
	assert_int_equal(done_at(k, 0).id, ids[n - 1]);
	assert_int_equal(tail(k), k->head);
	assert_true(tail(k) < before);
	kr_free(k);
}

/* A CHECK CONDITION's sense goes into the slot: READ past the end. */
static void test_sense(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint64_t lba = LUN_BYTES / 512;
	uint8_t rd[10] = {0x28,
			  0,
			  (uint8_t)(lba >> 24),
			  (uint8_t)(lba >> 16),
			  (uint8_t)(lba >> 8),
			  (uint8_t)lba,
			  0,
			  0,
			  1,
			  0};
	uint32_t len = 512, at = k->head;
	struct h_sense s;
	struct kdone d;

	(void)state;
	queue_cmd(k, rd, 10, &len, 1);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	d = done_at(k, at);
	assert_int_equal(d.status, SCSI_CHECK_CONDITION);
	assert_true(h_sense_parse(d.sense, sizeof(d.sense), &s));
	assert_int_equal(s.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(s.asc, 0x21); /* LBA out of range */
	assert_int_equal(d.read_len, 0);
	kr_free(k);
}

/* Five commands queued, one serve: five completions, one notification. */
static void test_batch_notify(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		queue_cmd(k, tur, 6, NULL, 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 5);
	assert_int_equal(notifies(k), 1);
	assert_int_equal(k->dev.notifies, 1);
	assert_int_equal(tail(k), k->head);
	kr_free(k);
}

/* An entry of an unknown opcode is flagged and skipped; a bidirectional
 * command is completed with UNKNOWN_OP (the kernel fails it); the next
 * command is served either way. */
static void test_unknown_and_bad(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint32_t unk = k->head, bidi_at, ok_at, one = 1, len = 255;
	uint16_t bidi_id;

	(void)state;
	put_hdr(slot(k, unk), 16, 5, 0);
	publish_head(k, unk, 16);
	bidi_at = k->head;
	bidi_id = queue_cmd(k, inquiry, 6, &len, 1);
	memcpy(slot(k, bidi_at) +
		       offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt),
	       &one, 4);
	ok_at = k->head;
	queue_cmd(k, tur, 6, NULL, 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 2);
	assert_true(slot(k, unk)[offsetof(struct tcmu_cmd_entry_hdr, uflags)] &
		    TCMU_UFLAG_UNKNOWN_OP);
	assert_int_equal(done_at(k, bidi_at).id, bidi_id);
	assert_true(done_at(k, bidi_at).uflags & TCMU_UFLAG_UNKNOWN_OP);
	assert_int_equal(done_at(k, ok_at).status, SCSI_GOOD);
	assert_int_equal(done_at(k, ok_at).uflags, 0);
	assert_int_equal(tail(k), k->head);
	kr_free(k);
}

/* An iovec pointing outside the data area is not served. */
static void test_iov_out_of_bounds(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint32_t len = 255, at = k->head;
	uint64_t off = CMDR_OFF; /* into the ring itself */

	(void)state;
	queue_cmd(k, inquiry, 6, &len, 1);
	memcpy(slot(k, at) + offsetof(struct tcmu_cmd_entry, req.iov) +
		       offsetof(struct iovec, iov_base),
	       &off, 8);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	assert_true(done_at(k, at).uflags & TCMU_UFLAG_UNKNOWN_OP);
	kr_free(k);
}

/* A zero-length entry breaks the ring: the device stops being served. */
static void test_broken_ring(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	uint32_t at = k->head;

	(void)state;
	put_hdr(slot(k, at), 0, TCMU_OP_CMD, 9);
	publish_head(k, at, 8);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), -EPROTO);
	assert_true(k->dev.broken);
	assert_int_equal(tail(k), 0);
	kr_free(k);
}

/* Out-of-order completion: the second command completes first, into the
 * first slot, relabelled with its id (CAP_OOOC), then the first. */
static void test_out_of_order(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	struct tcmu_req req = {.iov = k->iov};
	struct tcmu_done good = {.status = SCSI_GOOD};
	uint32_t a_at = k->head, b_at;
	uint16_t a, b;

	(void)state;
	a = queue_cmd(k, tur, 6, NULL, 0);
	b_at = k->head;
	b = queue_cmd(k, tur, 6, NULL, 0);
	assert_int_equal(tcmu_ring_next(&k->dev.ring, &req), TCMU_NEXT_CMD);
	assert_int_equal(req.cmd_id, a);
	assert_int_equal(tcmu_ring_next(&k->dev.ring, &req), TCMU_NEXT_CMD);
	assert_int_equal(req.cmd_id, b);
	assert_int_equal(tcmu_ring_next(&k->dev.ring, &req), TCMU_NEXT_EMPTY);
	assert_int_equal(tcmu_ring_complete(&k->dev.ring, b, &good), 0);
	assert_true(tcmu_ring_publish(&k->dev.ring));
	assert_int_equal(tail(k), b_at); /* only the first slot is done */
	assert_int_equal(done_at(k, a_at).id, b);
	assert_int_equal(tcmu_ring_complete(&k->dev.ring, a, &good), 0);
	assert_true(tcmu_ring_publish(&k->dev.ring));
	assert_int_equal(done_at(k, b_at).id, a);
	assert_int_equal(tail(k), k->head);
	assert_false(tcmu_ring_publish(&k->dev.ring));
	assert_int_equal(tcmu_ring_complete(&k->dev.ring, a, &good), -EPROTO);
	kr_free(k);
}

/* A hung command (injected fault) is held back while later commands
 * complete around it; a TMR entry naming it ends it with TASK ABORTED. */
static void test_hang_then_tmr(void **state)
{
	struct kring *k =
		kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_TMR);
	struct fault_rule r = {.kind = FAULT_HANG,
			       .lun_first = 1,
			       .lun_last = 1,
			       .lba_last = UINT64_MAX,
			       .count = 1};
	uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint32_t len = 512, hung_at, tmr_at, tlen, cnt = 1;
	uint16_t hung, next;

	(void)state;
	assert_true(fault_add(k->h->faults, &r) > 0);
	k->dev.lun = 1;
	k->dev.view = (struct scsi_view){.base = 1, .count = 1};
	hung_at = k->head;
	hung = queue_cmd(k, rd, 10, &len, 1);
	next = queue_cmd(k, tur, 6, NULL, 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	assert_int_equal(k->dev.nparked, 1);
	assert_int_equal(tcmu_dev_next_due(&k->dev), UINT64_MAX);
	/* the TUR's completion went into the hung command's slot */
	assert_int_equal(done_at(k, hung_at).id, next);
	assert_int_equal(
		tail(k),
		hung_at +
			round8((uint32_t)sizeof(struct tcmu_cmd_entry) +
			       (uint32_t)sizeof(struct iovec)) +
			round8(10));
	/* the kernel aborts it: a TMR entry with its id */
	tlen = round8((uint32_t)offsetof(struct tcmu_tmr_entry, cmd_ids) + 2);
	tmr_at = reserve(k, tlen);
	put_hdr(slot(k, tmr_at), tlen, TCMU_OP_TMR, 0);
	slot(k, tmr_at)[offsetof(struct tcmu_tmr_entry, tmr_type)] =
		TCMU_TMR_ABORT_TASK;
	memcpy(slot(k, tmr_at) + offsetof(struct tcmu_tmr_entry, cmd_cnt), &cnt,
	       4);
	memcpy(slot(k, tmr_at) + offsetof(struct tcmu_tmr_entry, cmd_ids),
	       &hung, 2);
	publish_head(k, tmr_at, tlen);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 0), 1);
	assert_int_equal(k->dev.nparked, 0);
	assert_int_equal(tail(k), k->head);
	kr_free(k);
}

/* A delayed command completes once its time has come, not before. */
static void test_delay(void **state)
{
	struct kring *k = kr_new(TCMU_MAILBOX_FLAG_CAP_OOOC);
	struct fault_rule r = {.kind = FAULT_DELAY,
			       .lun_first = 1,
			       .lun_last = 1,
			       .lba_last = UINT64_MAX,
			       .delay_ns = 5000000,
			       .count = 1};
	uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	uint32_t len = 512, at = k->head;
	uint16_t id;

	(void)state;
	assert_true(fault_add(k->h->faults, &r) > 0);
	k->dev.lun = 1;
	k->dev.view = (struct scsi_view){.base = 1, .count = 1};
	id = queue_cmd(k, rd, 10, &len, 1);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 1000), 0);
	assert_int_equal(tcmu_dev_next_due(&k->dev), 1000 + 5000000);
	assert_int_equal(tail(k), at);
	assert_int_equal(notifies(k), 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 4000000), 0);
	assert_int_equal(tcmu_dev_serve(&k->ctx, &k->dev, 5001000), 1);
	assert_int_equal(done_at(k, at).id, id);
	assert_int_equal(done_at(k, at).status, SCSI_GOOD);
	assert_int_equal(tail(k), k->head);
	assert_int_equal(notifies(k), 1);
	kr_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_checks),
		cmocka_unit_test(test_inquiry),
		cmocka_unit_test(test_no_read_len_cap),
		cmocka_unit_test(test_write_read_iovecs),
		cmocka_unit_test(test_pad_wrap),
		cmocka_unit_test(test_sense),
		cmocka_unit_test(test_batch_notify),
		cmocka_unit_test(test_unknown_and_bad),
		cmocka_unit_test(test_iov_out_of_bounds),
		cmocka_unit_test(test_broken_ring),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_hang_then_tmr),
		cmocka_unit_test(test_delay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
