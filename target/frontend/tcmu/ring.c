// SPDX-License-Identifier: MIT
/*
 * One target_core_user command ring: parsing the entries the kernel queues
 * (PAD, CMD, TMR), writing completions into their slots, publishing
 * cmd_tail, and serving a device's ring through scsi_exec() with one
 * notification per batch. The layout is the uAPI's (linux/
 * target_core_user.h): mailbox at offset 0, the ring at cmdr_off, the data
 * area after it; every offset in an entry is from the mailbox.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tcmu_i.h"

/* The fields of a packed header, read and written without alignment. */
static uint32_t hdr_len_op(const uint8_t *ent)
{
	uint32_t v;

	memcpy(&v, ent + offsetof(struct tcmu_cmd_entry_hdr, len_op),
	       sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int tcmu_ring_init(struct tcmu_ring *r, void *base, size_t size)
{
	struct tcmu_mailbox *mb = base;
	uint32_t off, len, tail;

	memset(r, 0, sizeof(*r));
	if (size < sizeof(*mb))
		return -EPROTO;
	if (mb->version != TCMU_MAILBOX_VERSION)
		return -EPROTONOSUPPORT;
	off = mb->cmdr_off;
	len = mb->cmdr_size;
	tail = __atomic_load_n(&mb->cmd_tail, __ATOMIC_RELAXED);
	if (off < sizeof(*mb) || len < sizeof(struct tcmu_cmd_entry) ||
	    len % TCMU_OP_ALIGN_SIZE || (uint64_t)off + len > size ||
	    tail >= len)
		return -EPROTO;
	r->base = base;
	r->size = size;
	r->mb = mb;
	r->cmdr = r->base + off;
	r->cmdr_size = len;
	r->read = r->tail = r->published = tail;
	r->caps = mb->flags;
	return 0;
}

/* The CDB's length as the kernel's scsi_command_size() sees it. */
static unsigned int cdb_length(const uint8_t *cdb, size_t room)
{
	int n = scsi_cdb_len(cdb[0]);

	if (n > 0)
		return (unsigned int)n;
	if (n == 0)
		return 10; /* groups 6 and 7: the kernel's table says 10 */
	if (cdb[0] != 0x7f)
		return 12;
	return room >= 8 ? cdb[7] + 8u : SCSI_CDB_MAX + 1;
}

static void parse_cmd(struct tcmu_ring *r, const uint8_t *ent, uint32_t len,
		      struct tcmu_req *req)
{
	const size_t iov_at = offsetof(struct tcmu_cmd_entry, req.iov);
	const size_t data_off = (size_t)(r->cmdr - r->base) + r->cmdr_size;
	uint32_t iov_cnt, bidi, dif, i;
	uint64_t cdb_off, sum = 0;
	unsigned int n;

	memset(req, 0, offsetof(struct tcmu_req, iov));
	req->tmr_cnt = 0;
	req->tmr_ids = NULL;
	memcpy(&req->cmd_id, ent + offsetof(struct tcmu_cmd_entry_hdr, cmd_id),
	       sizeof(req->cmd_id));
	iov_cnt = get32(ent + offsetof(struct tcmu_cmd_entry, req.iov_cnt));
	bidi = get32(ent + offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt));
	dif = get32(ent + offsetof(struct tcmu_cmd_entry, req.iov_dif_cnt));
	cdb_off = get64(ent + offsetof(struct tcmu_cmd_entry, req.cdb_off));
	/* bidirectional and protection data: no emulated command has them */
	if (bidi || dif || iov_cnt > TCMU_IOV_MAX ||
	    iov_at + (uint64_t)iov_cnt * sizeof(struct iovec) > len ||
	    cdb_off >= r->size) {
		req->bad = true;
		return;
	}
	n = cdb_length(r->base + cdb_off, r->size - cdb_off);
	if (n > SCSI_CDB_MAX || cdb_off + n > r->size) {
		req->bad = true;
		return;
	}
	memcpy(req->cdb, r->base + cdb_off, n);
	req->cdb_len = (uint8_t)n;
	for (i = 0; i < iov_cnt; i++) {
		const uint8_t *v = ent + iov_at + i * sizeof(struct iovec);
		uint64_t b = get64(v + offsetof(struct iovec, iov_base));
		uint64_t l = get64(v + offsetof(struct iovec, iov_len));

		if (b < data_off || b > r->size || l > r->size - b) {
			req->bad = true;
			return;
		}
		req->iov[i].iov_base = r->base + b;
		req->iov[i].iov_len = l;
		sum += l;
	}
	if (sum > UINT32_MAX) {
		req->bad = true;
		return;
	}
	req->iovcnt = iov_cnt;
	req->xfer_len = (uint32_t)sum;
}

int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_req *req)
{
	/* acquire: the entry's bytes were written before cmd_head moved */
	uint32_t head = __atomic_load_n(&r->mb->cmd_head, __ATOMIC_ACQUIRE);

	if (head >= r->cmdr_size)
		return -EPROTO;
	while (r->read != head) {
		uint8_t *ent = r->cmdr + r->read;
		uint32_t len_op = hdr_len_op(ent);
		uint32_t len = tcmu_hdr_get_len(len_op);
		uint32_t avail = (head + r->cmdr_size - r->read) % r->cmdr_size;
		uint32_t at = r->read, cnt;
		size_t ids_at;

		if (!len || len > avail || len > r->cmdr_size - r->read ||
		    len < sizeof(struct tcmu_cmd_entry_hdr))
			return -EPROTO;
		switch (tcmu_hdr_get_op(len_op)) {
		case TCMU_OP_PAD:
			r->read = (at + len) % r->cmdr_size;
			continue;
		case TCMU_OP_CMD:
			/* the completion is written into this slot */
			if (len < sizeof(struct tcmu_cmd_entry))
				return -EPROTO;
			r->read = (at + len) % r->cmdr_size;
			r->open++;
			parse_cmd(r, ent, len, req);
			return TCMU_NEXT_CMD;
		case TCMU_OP_TMR:
			r->read = (at + len) % r->cmdr_size;
			ids_at = offsetof(struct tcmu_tmr_entry, cmd_ids);
			if (len < ids_at)
				continue;
			cnt = get32(ent +
				    offsetof(struct tcmu_tmr_entry, cmd_cnt));
			if (cnt > (len - ids_at) / sizeof(uint16_t))
				cnt = (uint32_t)((len - ids_at) /
						 sizeof(uint16_t));
			req->tmr_type =
				ent[offsetof(struct tcmu_tmr_entry, tmr_type)];
			req->tmr_cnt = cnt;
			req->tmr_ids = (const uint16_t *)(ent + ids_at);
			return TCMU_NEXT_TMR;
		default:
			/* an entry of a newer kernel: say so, and move on */
			ent[offsetof(struct tcmu_cmd_entry_hdr, uflags)] |=
				TCMU_UFLAG_UNKNOWN_OP;
			r->read = (at + len) % r->cmdr_size;
			continue;
		}
	}
	return TCMU_NEXT_EMPTY;
}

int tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id,
		       const struct tcmu_done *d)
{
	uint8_t *ent;
	uint32_t len_op;
	uint8_t uflags = 0, pad[4] = {0};
	size_t n;

	if (!r->open)
		return -EPROTO;
	/* Skip the PAD, TMR and unknown slots between tail and read: every
	 * slot there was checked by tcmu_ring_next(), and at least one is a
	 * command's (r->open > 0). */
	for (;;) {
		ent = r->cmdr + r->tail;
		len_op = hdr_len_op(ent);
		if (tcmu_hdr_get_op(len_op) == TCMU_OP_CMD)
			break;
		r->tail = (r->tail + tcmu_hdr_get_len(len_op)) % r->cmdr_size;
	}
	memcpy(ent + offsetof(struct tcmu_cmd_entry_hdr, cmd_id), &cmd_id,
	       sizeof(cmd_id));
	if (d->unknown)
		uflags |= TCMU_UFLAG_UNKNOWN_OP;
	if (d->read_len && (r->caps & TCMU_MAILBOX_FLAG_CAP_READ_LEN))
		uflags |= TCMU_UFLAG_READ_LEN;
	ent[offsetof(struct tcmu_cmd_entry_hdr, uflags)] = uflags;
	ent[offsetof(struct tcmu_cmd_entry, rsp.scsi_status)] = d->status;
	memcpy(ent + offsetof(struct tcmu_cmd_entry, rsp.__pad1), pad, 3);
	memcpy(ent + offsetof(struct tcmu_cmd_entry, rsp.read_len),
	       &d->read_len, sizeof(d->read_len));
	n = d->sense ? d->sense_len : 0;
	if (n > TCMU_SENSE_BUFFERSIZE)
		n = TCMU_SENSE_BUFFERSIZE;
	if (n)
		memcpy(ent + offsetof(struct tcmu_cmd_entry, rsp.sense_buffer),
		       d->sense, n);
	memset(ent + offsetof(struct tcmu_cmd_entry, rsp.sense_buffer) + n, 0,
	       TCMU_SENSE_BUFFERSIZE - n);
	r->tail = (r->tail + tcmu_hdr_get_len(len_op)) % r->cmdr_size;
	r->open--;
	return 0;
}

bool tcmu_ring_publish(struct tcmu_ring *r)
{
	/* nothing open: the PAD and TMR slots up to read are done too */
	if (!r->open)
		r->tail = r->read;
	if (r->tail == r->published)
		return false;
	/* release: the completions' bytes before the tail that covers them */
	__atomic_store_n(&r->mb->cmd_tail, r->tail, __ATOMIC_RELEASE);
	r->published = r->tail;
	return true;
}

/* ---- serving a device ------------------------------------------------ */

static void complete_parked(struct tcmu_dev *d, unsigned int i)
{
	struct tcmu_parked *p = &d->parked[i];
	struct tcmu_done done = {.status = p->status,
				 .sense_len = p->sense_len,
				 .read_len = p->read_len,
				 .sense = p->sense};

	tcmu_ring_complete(&d->ring, p->cmd_id, &done);
	d->parked[i] = d->parked[--d->nparked];
}

static int complete_due(struct tcmu_dev *d, uint64_t now_ns)
{
	unsigned int i = 0;
	int n = 0;

	while (i < d->nparked) {
		if (d->parked[i].due_ns <= now_ns) {
			complete_parked(d, i);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

/* A TMR names the commands the kernel aborted: end the held ones. */
static int abort_parked(struct tcmu_dev *d, const struct tcmu_req *req)
{
	uint32_t k;
	unsigned int i;
	uint16_t id;
	int n = 0;

	log_lun_info(d->lun, "tcmu: task management %u for %u command(s)",
		     req->tmr_type, req->tmr_cnt);
	for (k = 0; k < req->tmr_cnt; k++) {
		memcpy(&id, req->tmr_ids + k, sizeof(id));
		for (i = 0; i < d->nparked; i++) {
			if (d->parked[i].cmd_id != id)
				continue;
			d->parked[i].status = SCSI_TASK_ABORTED;
			d->parked[i].sense_len = 0;
			d->parked[i].read_len = 0;
			complete_parked(d, i);
			n++;
			break;
		}
	}
	return n;
}

static bool park(struct tcmu_dev *d, const struct tcmu_req *req,
		 const struct scsi_cmd *cmd, enum scsi_disposition disp,
		 uint64_t now_ns)
{
	struct tcmu_parked *p;

	if (!d->parked) {
		d->parked = calloc(TCMU_PARK_MAX, sizeof(*d->parked));
		if (!d->parked)
			return false;
	}
	p = &d->parked[d->nparked++];
	p->cmd_id = req->cmd_id;
	p->status = cmd->status;
	p->sense_len = cmd->sense_len;
	p->read_len = cmd->data_len;
	memcpy(p->sense, cmd->sense, cmd->sense_len);
	p->due_ns = disp == SCSI_HOLD ? UINT64_MAX : now_ns + cmd->delay_ns;
	return true;
}

/* Without out-of-order completion a held command stops the ring. */
static bool may_read(const struct tcmu_dev *d)
{
	if (d->nparked >= TCMU_PARK_MAX)
		return false;
	return !d->nparked || (d->ring.caps & TCMU_MAILBOX_FLAG_CAP_OOOC);
}

static void exec_one(struct tcmu_serve_ctx *x, struct tcmu_dev *d,
		     const struct tcmu_req *req, uint64_t now_ns, int *done)
{
	struct scsi_cmd cmd = {
		.tgt = x->tgt,
		.view = &d->view,
		.lun = 0,
		.nexus = x->nexus,
		.initiator_name = x->initiator,
		.cdb = req->cdb,
		.cdb_len = req->cdb_len,
		/* the ring states no direction: the CDB's rules, and the
		 * iovecs serve as Data-In or Data-Out as it needs */
		.dir = SCSI_DIR_NONE,
		.iov = req->iov,
		.iovcnt = req->iovcnt,
		.xfer_len = req->xfer_len,
		.stats = x->stats,
	};
	struct tcmu_done res;
	enum scsi_disposition disp;

	log_cdb(d->lun, req->cdb, req->cdb_len);
	disp = scsi_exec(&cmd);
	if (disp != SCSI_DONE && park(d, req, &cmd, disp, now_ns))
		return;
	res = (struct tcmu_done){.status = cmd.status,
				 .sense_len = cmd.sense_len,
				 .read_len = cmd.data_len,
				 .sense = cmd.sense};
	tcmu_ring_complete(&d->ring, req->cmd_id, &res);
	(*done)++;
}

int tcmu_dev_serve(struct tcmu_serve_ctx *x, struct tcmu_dev *d,
		   uint64_t now_ns)
{
	const struct tcmu_done unknown = {.status = SCSI_CHECK_CONDITION,
					  .unknown = true};
	struct tcmu_req req = {.iov = x->iov};
	uint32_t one = 1;
	int done, ret = 0;

	if (d->broken)
		return -EPROTO;
	done = complete_due(d, now_ns);
	while (may_read(d)) {
		ret = tcmu_ring_next(&d->ring, &req);
		if (ret <= 0)
			break;
		if (ret == TCMU_NEXT_TMR) {
			done += abort_parked(d, &req);
			continue;
		}
		if (req.bad) {
			log_lun_warn(
				d->lun,
				"tcmu: command %u: entry not servable (bidirectional, protection data or bad offsets)",
				req.cmd_id);
			tcmu_ring_complete(&d->ring, req.cmd_id, &unknown);
			done++;
			continue;
		}
		exec_one(x, d, &req, now_ns, &done);
	}
	if (ret < 0) {
		d->broken = true;
		log_lun_err(
			d->lun,
			"tcmu: the command ring is broken (read %u of %u): no longer served",
			d->ring.read, d->ring.cmdr_size);
	}
	if (tcmu_ring_publish(&d->ring)) {
		d->notifies++;
		/* uio's write is the kernel's cue to reap completions */
		if (d->fd >= 0 && write(d->fd, &one, sizeof(one)) < 0)
			log_lun_debug(d->lun, "tcmu: uio notify: %m");
	}
	return ret < 0 ? -EPROTO : done;
}

uint64_t tcmu_dev_next_due(const struct tcmu_dev *d)
{
	uint64_t due = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < d->nparked; i++)
		if (d->parked[i].due_ns < due)
			due = d->parked[i].due_ns;
	return due;
}

void tcmu_dev_release(struct tcmu_dev *d)
{
	free(d->parked);
	d->parked = NULL;
	d->nparked = 0;
}
