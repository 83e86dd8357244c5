// SPDX-License-Identifier: MIT
/*
 * One connection's protocol engine: receive PDUs, window the CmdSNs,
 * collect immediate, unsolicited and solicited (R2T) data, execute through
 * scsi/, send Data-In with phase-collapsed status or a SCSI Response with
 * sense and residuals, NOP-In/Out both ways, task management, logout,
 * rejects and Async Messages. Command slots are preallocated per
 * connection; each keeps its data buffer for the next command, so steady
 * traffic allocates nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iscsi_i.h"
#include "log.h"
#include "lun.h"

#define RBUF_SIZE (64u << 10)

/* Room kept free for the answer to any one PDU (see rx_blocked()). */
static size_t ctrl_reserve(const struct iscsi_conn *c)
{
	return (size_t)c->p.max_recv_dsl + 8192 + 4096;
}

/* ---- transmit buffer --------------------------------------------------- */

static size_t tx_used(const struct iscsi_conn *c)
{
	return c->otail - c->ohead;
}

static size_t tx_free(const struct iscsi_conn *c)
{
	return c->ocap - tx_used(c);
}

/* @n contiguous bytes at the tail, compacting once if needed; or NULL. */
static uint8_t *tx_reserve(struct iscsi_conn *c, size_t n)
{
	if (c->ocap - c->otail < n) {
		if (tx_free(c) < n)
			return NULL;
		memmove(c->obuf, c->obuf + c->ohead, tx_used(c));
		c->otail -= c->ohead;
		c->ohead = 0;
	}
	return c->obuf + c->otail;
}

static void window_update(struct iscsi_conn *c)
{
	uint32_t want = c->exp_cmd_sn + c->nfree_cmd - 1;

	/* MaxCmdSN never goes back: it only grows as slots free up */
	if (iscsi_sn_lt(c->max_cmd_sn, want))
		c->max_cmd_sn = want;
}

void iscsi_conn_fill_sn(struct iscsi_conn *c, uint8_t *bhs, bool status)
{
	window_update(c);
	iscsi_bhs_set_statsn(bhs, status ? c->stat_sn++ : c->stat_sn);
	iscsi_bhs_set_exp_cmdsn(bhs, c->exp_cmd_sn);
	iscsi_bhs_set_max_cmdsn(bhs, c->max_cmd_sn);
}

/* Digests apply in full feature phase only. */
static bool tx_hdigest(const struct iscsi_conn *c)
{
	return c->state != ISCSI_CONN_LOGIN && c->p.header_digest;
}

static bool tx_ddigest(const struct iscsi_conn *c)
{
	return c->state != ISCSI_CONN_LOGIN && c->p.data_digest;
}

int iscsi_conn_queue_pdu(struct iscsi_conn *c, uint8_t *bhs, const void *data,
			 uint32_t dlen)
{
	bool hd = tx_hdigest(c), dd = tx_ddigest(c);
	uint8_t *p = tx_reserve(c, iscsi_pdu_size(dlen, hd, dd));

	if (!p) {
		log_err("iscsi: %s: transmit buffer full", c->peer);
		c->state = ISCSI_CONN_DEAD;
		return -ENOBUFS;
	}
	c->otail += iscsi_pdu_build(p, bhs, data, dlen, hd, dd);
	iscsi_worker_dirty(c->w, c);
	return 0;
}

static bool tx_has_room(struct iscsi_conn *c, uint32_t dlen)
{
	return tx_free(c) >=
	       iscsi_pdu_size(dlen, tx_hdigest(c), tx_ddigest(c)) + 64;
}

bool iscsi_conn_rx_blocked(const struct iscsi_conn *c)
{
	return tx_free(c) < ctrl_reserve(c);
}

static int send_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bad)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	iscsi_bhs_set_opcode(bhs, ISCSI_OP_REJECT);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_reason(bhs, reason);
	iscsi_bhs_set_itt(bhs, ISCSI_RSVD_TAG);
	iscsi_conn_fill_sn(c, bhs, true);
	log_debug("iscsi: %s: reject opcode 0x%02x: reason 0x%02x", c->peer,
		  iscsi_bhs_opcode(bad), reason);
	return iscsi_conn_queue_pdu(c, bhs, bad, ISCSI_BHS_LEN);
}

/* ---- slots --------------------------------------------------------------- */

static struct iscsi_task *task_get(struct iscsi_conn *c, bool immediate)
{
	struct iscsi_task **head = immediate ? &c->free_imm : &c->free_cmd;
	struct iscsi_task *t = *head;

	if (!t)
		return NULL;
	*head = t->next;
	t->next = NULL;
	if (!immediate)
		c->nfree_cmd--;
	/* relaxed, one writer: a gauge the control thread reads */
	atomic_store_explicit(
		&c->inflight,
		atomic_load_explicit(&c->inflight, memory_order_relaxed) + 1,
		memory_order_relaxed);
	t->immediate = immediate;
	t->accounted = false;
	return t;
}

/*
 * Gives @n bytes back to the connection's, the initiator's and the
 * daemon's budgets.
 */
static void buf_uncharge(struct iscsi_conn *c, uint64_t n)
{
	c->buf_bytes -= n;
	/* relaxed is enough: budgets, not synchronisation points */
	if (c->ini)
		atomic_fetch_sub_explicit(&c->ini->buf_bytes, n,
					  memory_order_relaxed);
	atomic_fetch_sub_explicit(&c->fe->buf_total, n, memory_order_relaxed);
}

/* Frees a slot's buffer and takes it off the budgets. */
static void buf_release(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (!t->buf)
		return;
	free(t->buf);
	buf_uncharge(c, t->buf_cap);
	t->buf = NULL;
	t->buf_cap = 0;
}

/*
 * Whether a slot done with its command keeps its buffer for the next one.
 * A big transfer's buffer goes: idle connections stay small. So do all
 * while the daemon's buffers are over half their budget, or the
 * initiator's over half its share or too near it for one largest command:
 * the buffers idle slots keep count, and no one but their own connection
 * frees them (buf_trim()), so kept ones must not leave other initiators
 * only BUSY, nor this one TASK SET FULL with nothing of its own to wait
 * for. Kept buffers so never hold more than half of either, nor leave the
 * initiator less than one largest command: each was kept while all the
 * buffers held, the kept ones among them, were within that.
 */
static bool buf_keep(const struct iscsi_conn *c, const struct iscsi_task *t)
{
	const struct cfg_iscsi *ic = &c->fe->icfg;
	uint64_t ini;

	/* relaxed loads: a rough level is enough to decide on a cache */
	if (t->buf_cap > ISCSI_BUF_KEEP ||
	    2 * atomic_load_explicit(&c->fe->buf_total, memory_order_relaxed) >
		    ic->max_buffer)
		return false;
	if (!c->ini)
		return true;
	ini = atomic_load_explicit(&c->ini->buf_bytes, memory_order_relaxed);
	return 2 * ini <= ic->max_buffer_per_initiator &&
	       ini + ISCSI_XFER_MAX <= ic->max_buffer_per_initiator;
}

static void task_put(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (t->buf && !buf_keep(c, t))
		buf_release(c, t);
	if (!t->immediate && !t->accounted)
		c->nfree_cmd++;
	atomic_store_explicit(
		&c->inflight,
		atomic_load_explicit(&c->inflight, memory_order_relaxed) - 1,
		memory_order_relaxed);
	t->state = ISCSI_TASK_FREE;
	t->nr2t = 0;
	t->discard = false;
	t->gen++;
	if (t->immediate) {
		t->next = c->free_imm;
		c->free_imm = t;
	} else {
		t->next = c->free_cmd;
		c->free_cmd = t;
	}
}

/* Frees the buffers the free slots keep: O(slots), under pressure only. */
static void buf_trim(struct iscsi_conn *c)
{
	unsigned int i;

	for (i = 0; i < ISCSI_SLOTS; i++)
		if (c->tasks[i].state == ISCSI_TASK_FREE)
			buf_release(c, &c->tasks[i]);
}

/* Adds @n to @used, unless that takes it past @limit. Return: it did. */
static bool charge(_Atomic uint64_t *used, uint64_t n, uint64_t limit)
{
	/*
	 * relaxed: a budget, not a synchronisation point. Add, then look:
	 * two at once near the limit may both fail and go back, never both
	 * pass it.
	 */
	uint64_t now = atomic_fetch_add_explicit(used, n, memory_order_relaxed);

	if (now + n <= limit)
		return true;
	atomic_fetch_sub_explicit(used, n, memory_order_relaxed);
	return false;
}

/*
 * Charges @n bytes to the connection's budget, its initiator's share and
 * the daemon's budget, all or none. O(1): the initiator is the one the
 * login found.
 * Return: 0; -ENOBUFS past the connection's budget or the initiator's
 * share (its own commands free them); -EBUSY past the daemon's.
 */
static int buf_charge(struct iscsi_conn *c, uint64_t n)
{
	const struct cfg_iscsi *ic = &c->fe->icfg;

	if (c->buf_bytes + n > ic->max_buffer_per_connection)
		return -ENOBUFS;
	if (c->ini &&
	    !charge(&c->ini->buf_bytes, n, ic->max_buffer_per_initiator))
		return -ENOBUFS;
	if (!charge(&c->fe->buf_total, n, ic->max_buffer)) {
		/* the initiator's charge goes back: relaxed, as charge() */
		if (c->ini)
			atomic_fetch_sub_explicit(&c->ini->buf_bytes, n,
						  memory_order_relaxed);
		return -EBUSY;
	}
	c->buf_bytes += n;
	return 0;
}

/*
 * The slot's buffer, at least @n bytes (small ones rounded up to a power
 * of two: fewer reallocations), within the connection's budget, the
 * initiator's share and the daemon's budget ([iscsi]
 * max_buffer_per_connection, max_buffer_per_initiator, max_buffer); the
 * buffers idle slots keep count too, and this connection's are given up
 * before a command is refused.
 * Return: 0; -ENOBUFS over the connection's budget or the initiator's
 * share; -EBUSY over the daemon's; -ENOMEM.
 */
static int task_buf(struct iscsi_conn *c, struct iscsi_task *t, uint32_t n)
{
	uint64_t cap = 4096;
	int ret;

	if (t->buf_cap >= n)
		return 0;
	if (n > ISCSI_BUF_KEEP)
		cap = ((uint64_t)n + 4095) & ~(uint64_t)4095;
	else
		while (cap < n)
			cap *= 2;
	buf_release(c, t);
	ret = buf_charge(c, cap);
	if (ret) {
		buf_trim(c);
		ret = buf_charge(c, cap);
		if (ret)
			return ret;
	}
	t->buf = malloc(cap);
	if (!t->buf) {
		buf_uncharge(c, cap);
		return -ENOMEM;
	}
	t->buf_cap = (uint32_t)cap;
	return 0;
}

/*
 * The longest Expected Data Transfer Length a command to table LUN @lun
 * may have: the LUN's Block Limits MAXIMUM TRANSFER LENGTH in bytes, but
 * at least ISCSI_BUF_KEEP (commands other than READ and WRITE, such as
 * REPORT LUNS, have their own lengths) and at most ISCSI_XFER_MAX. The
 * LUN is looked up only for transfers over ISCSI_BUF_KEEP.
 */
static uint32_t xfer_limit(struct iscsi_conn *c, uint32_t lun, uint32_t edtl)
{
	struct lun_table *luns = c->fe->tgt->luns;
	uint64_t max = ISCSI_XFER_MAX;
	struct lun_info li;

	if (edtl <= ISCSI_BUF_KEEP || lun == UINT32_MAX ||
	    lun_get(luns, lun, &li))
		return ISCSI_XFER_MAX;
	if (li.group->max_xfer_blocks)
		max = (uint64_t)li.group->max_xfer_blocks * li.block_size;
	lun_put(luns, &li);
	if (max < ISCSI_BUF_KEEP)
		max = ISCSI_BUF_KEEP;
	return max < ISCSI_XFER_MAX ? (uint32_t)max : ISCSI_XFER_MAX;
}

static void txq_remove(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct iscsi_task **pp = &c->txq, *prev = NULL;

	while (*pp && *pp != t) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = t->next;
	if (c->txq_tail == t)
		c->txq_tail = prev;
	t->next = NULL;
}

/* A CmdSN past the gap used up out of order. Return: false, no room. */
static bool sn_used_add(struct iscsi_conn *c, uint32_t sn)
{
	if (c->nsn_used == ISCSI_CMD_SLOTS)
		return false;
	c->sn_used[c->nsn_used++] = sn;
	return true;
}

/* Ends a task without a response (an abort, a reset, a closing session). */
static void task_abort(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (t->held) {
		/* never delivered, but its CmdSN is spent */
		t->held = false;
		c->nheld--;
		sn_used_add(c, t->cmdsn);
	}
	switch (t->state) {
	case ISCSI_TASK_DELAYED:
		iscsi_timer_del(c->w, c, t->slot);
		break;
	case ISCSI_TASK_QUEUED:
		txq_remove(c, t);
		break;
	default:
		break;
	}
	if (c->cur == t) {
		/* its PDU is half in: the rest of its data is dropped */
		c->rx.dst = NULL;
		c->cur_drop = true;
		c->cur = NULL;
	}
	task_put(c, t);
}

void iscsi_conn_abort(struct iscsi_conn *c, uint32_t lun, uint64_t before_ns)
{
	unsigned int i;

	for (i = 0; i < ISCSI_SLOTS; i++)
		if (c->tasks[i].state != ISCSI_TASK_FREE &&
		    (lun == ISCSI_LUN_ALL || c->tasks[i].table_lun == lun) &&
		    c->tasks[i].rx_ns <= before_ns)
			task_abort(c, &c->tasks[i]);
}

/* ---- responses --------------------------------------------------------- */

static void task_queue(struct iscsi_conn *c, struct iscsi_task *t)
{
	t->state = ISCSI_TASK_QUEUED;
	t->in_off = 0;
	t->burst_left = c->p.max_burst;
	t->next = NULL;
	if (c->txq_tail)
		c->txq_tail->next = t;
	else
		c->txq = t;
	c->txq_tail = t;
	iscsi_worker_dirty(c->w, c);
}

/*
 * RFC 7143 11.4.5: overflow when the CDB asks for more than the expected
 * data transfer length (the residual is what did not fit), underflow when
 * less than that length moved.
 */
static void residual(const struct iscsi_task *t, uint8_t *flags,
		     uint32_t *count)
{
	uint32_t want = t->cmd.cdb_xfer_len, done = t->cmd.data_len;

	*count = 0;
	if (want > t->edtl) {
		*flags |= ISCSI_RES_O;
		*count = want - t->edtl;
	} else if (done < t->edtl) {
		*flags |= ISCSI_RES_U;
		*count = t->edtl - done;
	}
}

/* The slot goes back into the window before the last PDU's MaxCmdSN. */
static void task_account(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (!t->immediate && !t->accounted) {
		c->nfree_cmd++;
		t->accounted = true;
	}
}

/*
 * Moves as much of @t's response into the transmit buffer as fits.
 * Return: true when all of it is in (the task can go).
 */
static bool task_emit(struct iscsi_conn *c, struct iscsi_task *t)
{
	uint32_t seg = c->p.max_xmit_dsl < ISCSI_TX_SEG ? c->p.max_xmit_dsl
							: ISCSI_TX_SEG;
	bool hd = tx_hdigest(c), dd = tx_ddigest(c);
	const struct scsi_cmd *cmd = &t->cmd;
	uint8_t bhs[ISCSI_BHS_LEN], sense[2 + SCSI_SENSE_MAX];
	uint32_t n, count, dlen;
	uint8_t *p, flags;
	bool last, collapse;

	while (t->dir == SCSI_DIR_READ && t->in_off < cmd->data_len) {
		n = cmd->data_len - t->in_off;
		if (n > seg)
			n = seg;
		if (n > t->burst_left)
			n = t->burst_left;
		last = t->in_off + n == cmd->data_len;
		collapse = last && cmd->status == SCSI_GOOD && !cmd->sense_len;
		p = tx_reserve(c, iscsi_pdu_size(n, hd, dd));
		if (!p)
			return false;
		memset(bhs, 0, sizeof(bhs));
		iscsi_bhs_set_opcode(bhs, ISCSI_OP_DATA_IN);
		flags = last || n == t->burst_left ? ISCSI_FLAG_F : 0;
		iscsi_bhs_set_lun(bhs, t->lun_field);
		iscsi_bhs_set_itt(bhs, t->itt);
		iscsi_bhs_set_ttt(bhs, ISCSI_RSVD_TAG);
		if (collapse) {
			flags |= ISCSI_DATA_S;
			iscsi_bhs_set_status(bhs, cmd->status);
			residual(t, &flags, &count);
			iscsi_bhs_set_residual_count(bhs, count);
			task_account(c, t);
		}
		iscsi_bhs_set_flags(bhs, flags);
		iscsi_conn_fill_sn(c, bhs, collapse);
		iscsi_bhs_set_datasn(bhs, t->datasn++);
		iscsi_bhs_set_buffer_offset(bhs, t->in_off);
		c->otail +=
			iscsi_pdu_build(p, bhs, t->buf + t->in_off, n, hd, dd);
		t->in_off += n;
		t->burst_left -= n;
		if (!t->burst_left)
			t->burst_left = c->p.max_burst;
		if (collapse)
			return true;
	}
	dlen = cmd->sense_len ? 2u + cmd->sense_len : 0;
	p = tx_reserve(c, iscsi_pdu_size(dlen, hd, dd));
	if (!p)
		return false;
	memset(bhs, 0, sizeof(bhs));
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_SCSI_RSP);
	flags = ISCSI_FLAG_F;
	iscsi_bhs_set_response(bhs, 0); /* command completed at target */
	iscsi_bhs_set_status(bhs, cmd->status);
	iscsi_bhs_set_itt(bhs, t->itt);
	residual(t, &flags, &count);
	iscsi_bhs_set_flags(bhs, flags);
	task_account(c, t);
	iscsi_conn_fill_sn(c, bhs, true);
	/* ExpDataSN: the Data-In and R2T PDUs the command had */
	iscsi_bhs_set_exp_datasn(bhs, t->datasn + t->r2tsn);
	iscsi_bhs_set_residual_count(bhs, count);
	if (dlen) {
		put_be16(sense, cmd->sense_len);
		memcpy(sense + 2, cmd->sense, cmd->sense_len);
	}
	c->otail += iscsi_pdu_build(p, bhs, sense, dlen, hd, dd);
	return true;
}

/* Drains the transmit queue into the buffer while it has room. */
static void tx_pump(struct iscsi_conn *c)
{
	struct iscsi_task *t;

	while ((t = c->txq)) {
		if (!task_emit(c, t))
			return;
		c->txq = t->next;
		if (!c->txq)
			c->txq_tail = NULL;
		task_put(c, t);
	}
}

int iscsi_conn_flush(struct iscsi_conn *c)
{
	unsigned int round;
	ssize_t n;

	if (c->state == ISCSI_CONN_DEAD)
		return -EPIPE;
	/* bounded: a socket that keeps taking gets the rest next round */
	for (round = 0; round < 64; round++) {
		tx_pump(c);
		if (c->ohead == c->otail)
			return c->txq ? 0 : 1;
		n = send(c->fd, c->obuf + c->ohead, c->otail - c->ohead,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->ohead += (size_t)n;
		if (c->ohead == c->otail)
			c->ohead = c->otail = 0;
	}
	return 0;
}

/* ---- SCSI commands ----------------------------------------------------- */

static void task_execute(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct scsi_cmd *cmd = &t->cmd;
	enum scsi_disposition d = SCSI_DONE;

	if (!t->discard) {
		t->iov.iov_base = t->buf;
		t->iov.iov_len = t->edtl;
		cmd->iov = &t->iov;
		cmd->iovcnt = t->edtl ? 1 : 0;
		cmd->xfer_len = t->edtl;
		cmd->stats = iscsi_worker_stats(c->w);
		d = scsi_exec(cmd);
	}
	switch (d) {
	case SCSI_DELAY:
		t->state = ISCSI_TASK_DELAYED;
		iscsi_timer_add(c->w, c, t->slot,
				iscsi_now_ns() + cmd->delay_ns);
		break;
	case SCSI_HOLD:
		t->state = ISCSI_TASK_HELD;
		break;
	default:
		task_queue(c, t);
		break;
	}
}

void iscsi_conn_timer_fired(struct iscsi_conn *c, unsigned int slot)
{
	struct iscsi_task *t = &c->tasks[slot];

	if (t->state == ISCSI_TASK_DELAYED)
		task_queue(c, t);
}

static unsigned int max_r2t(const struct iscsi_conn *c)
{
	return c->p.max_outstanding_r2t < ISCSI_MAX_R2T
		       ? c->p.max_outstanding_r2t
		       : ISCSI_MAX_R2T;
}

/* Solicits the rest of a write, up to MaxOutstandingR2T bursts at once. */
static int send_r2ts(struct iscsi_conn *c, struct iscsi_task *t)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct iscsi_r2t *r;
	uint32_t len;
	int ret;

	while (!t->discard && t->nr2t < max_r2t(c) && t->r2t_next < t->edtl) {
		len = t->edtl - t->r2t_next;
		if (len > c->p.max_burst)
			len = c->p.max_burst;
		r = &t->r2t[t->nr2t++];
		/* the slot in the low byte finds the task again */
		r->ttt = (uint32_t)t->slot | (c->next_ttt++ & 0xffffffu) << 8;
		if (r->ttt == ISCSI_RSVD_TAG)
			r->ttt = t->slot;
		r->offset = t->r2t_next;
		r->len = len;
		r->got = 0;
		r->datasn = 0;
		memset(bhs, 0, sizeof(bhs));
		iscsi_bhs_set_opcode(bhs, ISCSI_OP_R2T);
		iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
		iscsi_bhs_set_lun(bhs, t->lun_field);
		iscsi_bhs_set_itt(bhs, t->itt);
		iscsi_bhs_set_ttt(bhs, r->ttt);
		iscsi_conn_fill_sn(c, bhs, false);
		iscsi_bhs_set_r2tsn(bhs, t->r2tsn++);
		iscsi_bhs_set_buffer_offset(bhs, r->offset);
		iscsi_bhs_set_desired_dtl(bhs, len);
		ret = iscsi_conn_queue_pdu(c, bhs, NULL, 0);
		if (ret)
			return ret;
		t->r2t_next += len;
	}
	return 0;
}

/* The data a write still waits for, or its execution. */
static int task_progress(struct iscsi_conn *c, struct iscsi_task *t)
{
	uint32_t need = t->discard ? t->unsol_end : t->edtl;

	if (t->dir != SCSI_DIR_WRITE || t->received >= need) {
		task_execute(c, t);
		return 0;
	}
	t->state = ISCSI_TASK_DATA_OUT;
	return send_r2ts(c, t);
}

/*
 * ExpCmdSN moved: deliver, in CmdSN order, the held commands (and step
 * over the CmdSNs used up) that now follow on. O(slots) per step, only
 * while something is held.
 */
static int sn_release(struct iscsi_conn *c)
{
	struct iscsi_task *t;
	unsigned int i, guard;
	bool found;
	int ret;

	for (guard = 0; guard < 2 * ISCSI_SLOTS && (c->nheld || c->nsn_used);
	     guard++) {
		found = false;
		for (i = 0; i < c->nsn_used; i++) {
			if (c->sn_used[i] == c->exp_cmd_sn) {
				c->sn_used[i] = c->sn_used[--c->nsn_used];
				c->exp_cmd_sn++;
				found = true;
				break;
			}
		}
		if (found)
			continue;
		t = NULL;
		for (i = 0; i < ISCSI_SLOTS && c->nheld; i++) {
			if (c->tasks[i].held &&
			    c->tasks[i].cmdsn == c->exp_cmd_sn) {
				t = &c->tasks[i];
				break;
			}
		}
		if (!t)
			break;
		t->held = false;
		c->nheld--;
		c->exp_cmd_sn++;
		ret = task_progress(c, t);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether a held command already has CmdSN @sn (a duplicate is dropped). */
static bool sn_held(const struct iscsi_conn *c, uint32_t sn)
{
	unsigned int i;

	for (i = 0; i < ISCSI_SLOTS && c->nheld; i++)
		if (c->tasks[i].held && c->tasks[i].cmdsn == sn)
			return true;
	for (i = 0; i < c->nsn_used; i++)
		if (c->sn_used[i] == sn)
			return true;
	return false;
}

/* A SCSI Command's header: take a slot and say where its data goes. */
static int cmd_header(struct iscsi_conn *c)
{
	const uint8_t *bhs = c->cur_bhs;
	uint8_t flags = iscsi_bhs_flags(bhs);
	bool imm = iscsi_bhs_immediate(bhs), r = flags & ISCSI_CMD_R,
	     w = flags & ISCSI_CMD_W, fin = flags & ISCSI_FLAG_F;
	uint32_t dlen = c->rx.data_len, cmdsn = iscsi_bhs_cmdsn(bhs), vlun;
	struct iscsi_task *t;
	enum iscsi_sn_verdict v = ISCSI_SN_EXPECTED;
	struct scsi_cmd *cmd;
	size_t extra = 0;
	int ret;

	if (c->discovery) {
		c->cur_reject = ISCSI_REJECT_PROTOCOL;
		return 0;
	}
	if (!imm)
		v = iscsi_cmdsn_check(cmdsn, c->exp_cmd_sn, c->max_cmd_sn);
	if (v == ISCSI_SN_OUTSIDE ||
	    (v == ISCSI_SN_AHEAD && sn_held(c, cmdsn))) {
		/* RFC 7143 4.2.2.1: outside the window, silently ignored */
		log_debug(
			"iscsi: %s: CmdSN %u outside %u..%u or a duplicate: dropped",
			c->peer, cmdsn, c->exp_cmd_sn, c->max_cmd_sn);
		c->cur_drop = true;
		return 0;
	}
	t = task_get(c, imm);
	if (!t) {
		c->cur_reject =
			imm ? ISCSI_REJECT_IMMEDIATE : ISCSI_REJECT_LONG_OP;
		if (v == ISCSI_SN_AHEAD)
			sn_used_add(c, cmdsn);
		if (v != ISCSI_SN_EXPECTED || imm)
			return 0;
		/* its CmdSN is spent: what was held behind it goes on */
		c->exp_cmd_sn++;
		return sn_release(c);
	}
	/*
	 * In the window past a gap: the command is taken (its slot, its
	 * immediate and unsolicited data) but delivered only when every
	 * CmdSN before it is in (RFC 7143 3.2.2.1).
	 */
	t->held = v == ISCSI_SN_AHEAD;
	if (t->held)
		c->nheld++;
	else if (!imm)
		c->exp_cmd_sn++;
	t->itt = iscsi_bhs_itt(bhs);
	t->cmdsn = cmdsn;
	t->rx_ns = iscsi_now_ns();
	memcpy(t->lun_field, iscsi_bhs_lun(bhs), ISCSI_LUN_LEN);
	if (scsi_lun_decode(t->lun_field, &vlun))
		vlun = UINT32_MAX;
	t->table_lun =
		vlun < c->view->count ? c->view->base + vlun : UINT32_MAX;
	memcpy(t->cdb, iscsi_bhs_cdb(bhs), ISCSI_BHS_CDB_LEN);
	/* an extended CDB AHS carries bytes 16 onwards */
	if (c->rx.ahs_len >= ISCSI_AHS_HDR_LEN &&
	    iscsi_ahs_type(c->rx.ahs) == ISCSI_AHS_EXT_CDB) {
		extra = iscsi_ahs_length(c->rx.ahs);
		extra = extra ? extra - 1 : 0;
		if (extra > SCSI_CDB_MAX - ISCSI_BHS_CDB_LEN ||
		    extra + ISCSI_AHS_HDR_LEN > c->rx.ahs_len)
			return -EPROTO;
		memcpy(t->cdb + ISCSI_BHS_CDB_LEN,
		       c->rx.ahs + ISCSI_AHS_HDR_LEN, extra);
	}
	t->edtl = iscsi_bhs_edtl(bhs);
	t->dir = w ? SCSI_DIR_WRITE : r ? SCSI_DIR_READ : SCSI_DIR_NONE;
	if (!r && !w)
		t->edtl = 0;
	t->received = 0;
	t->unsol_got = 0;
	t->unsol_datasn = 0;
	t->r2tsn = 0;
	t->datasn = 0;
	t->nr2t = 0;
	t->discard = false;

	cmd = &t->cmd;
	memset(cmd, 0, sizeof(*cmd));
	cmd->tgt = c->fe->tgt;
	cmd->view = c->view;
	cmd->port = (uint16_t)(c->portal + 1);
	cmd->lun = vlun;
	/* the connection id names the I_T nexus: unique, never reused */
	cmd->nexus = (uint32_t)c->id;
	cmd->initiator_name = c->iport;
	cmd->cdb = t->cdb;
	cmd->cdb_len = (uint8_t)(16 + extra);
	cmd->dir = t->dir;

	if (dlen && (!w || !c->p.immediate_data || dlen > t->edtl ||
		     dlen > c->p.first_burst)) {
		log_info("iscsi: %s: immediate data of %u bytes not allowed",
			 c->peer, dlen);
		task_put(c, t);
		return -EPROTO;
	}
	if (r && w) {
		/* bidirectional commands: no emulated command has them */
		t->discard = true;
		scsi_set_sense(cmd, false, SK_ILLEGAL_REQUEST,
			       ASC_INVALID_FIELD_IN_CDB);
	} else if (t->edtl > xfer_limit(c, t->table_lun, t->edtl)) {
		/* checked before any data is buffered */
		log_debug(
			"iscsi: %s: ITT 0x%x: expected length %u is over the LUN's limit",
			c->peer, t->itt, t->edtl);
		t->discard = true;
		scsi_set_sense(cmd, false, SK_ILLEGAL_REQUEST,
			       ASC_INVALID_FIELD_IN_CDB);
	} else if ((ret = task_buf(c, t, t->edtl))) {
		/*
		 * SAM-5: TASK SET FULL when this I_T nexus or its
		 * initiator holds the resources (its other commands free
		 * them), BUSY when the whole daemon is short.
		 */
		t->discard = true;
		cmd->status = ret == -ENOBUFS ? SCSI_TASK_SET_FULL : SCSI_BUSY;
	}
	if (t->discard) {
		cmd->cdb_xfer_len = t->edtl;
		t->dir = w ? SCSI_DIR_WRITE : SCSI_DIR_NONE;
	}
	if (w) {
		if (fin || c->p.initial_r2t)
			t->unsol_end = dlen;
		else
			t->unsol_end = t->edtl < c->p.first_burst
					       ? t->edtl
					       : c->p.first_burst;
		if (t->unsol_end < dlen)
			t->unsol_end = dlen;
	} else {
		t->unsol_end = 0;
	}
	t->r2t_next = t->unsol_end;
	c->cur = t;
	c->rx.dst = t->discard ? NULL : t->buf;
	return 0;
}

static int cmd_pdu(struct iscsi_conn *c)
{
	struct iscsi_task *t = c->cur;
	uint32_t dlen = c->rx.data_len;

	int ret;

	c->cur = NULL;
	t->received = dlen;
	t->unsol_got = dlen;
	if (t->held) {
		/* its unsolicited Data-Out may come; nothing else yet */
		t->state = ISCSI_TASK_DATA_OUT;
		return 0;
	}
	ret = task_progress(c, t);
	if (ret || t->immediate)
		return ret;
	return sn_release(c);
}

/* A Data-Out's header: find its task and R2T, check DataSN and offset. */
static int dataout_header(struct iscsi_conn *c)
{
	const uint8_t *bhs = c->cur_bhs;
	uint32_t itt = iscsi_bhs_itt(bhs), ttt = iscsi_bhs_ttt(bhs);
	uint32_t datasn = iscsi_bhs_datasn(bhs);
	uint32_t off = iscsi_bhs_buffer_offset(bhs);
	uint32_t dlen = c->rx.data_len, slot;
	struct iscsi_task *t = NULL;
	struct iscsi_r2t *r;
	unsigned int i;
	int ri = -1;

	if (c->discovery) {
		c->cur_reject = ISCSI_REJECT_PROTOCOL;
		return 0;
	}
	if (ttt != ISCSI_RSVD_TAG) {
		slot = ttt & 0xff;
		if (slot < ISCSI_SLOTS &&
		    c->tasks[slot].state == ISCSI_TASK_DATA_OUT &&
		    c->tasks[slot].itt == itt) {
			t = &c->tasks[slot];
			for (i = 0; i < t->nr2t; i++)
				if (t->r2t[i].ttt == ttt)
					ri = (int)i;
			if (ri < 0)
				t = NULL;
		}
	} else {
		/* unsolicited: O(slots) search, only on unsolicited data */
		for (i = 0; i < ISCSI_SLOTS; i++)
			if (c->tasks[i].state == ISCSI_TASK_DATA_OUT &&
			    c->tasks[i].itt == itt) {
				t = &c->tasks[i];
				break;
			}
	}
	if (!t) {
		/* data for a task that is gone (aborted): dropped */
		c->cur_drop = true;
		return 0;
	}
	if ((uint64_t)off + dlen > t->edtl)
		goto bad;
	if (ri < 0) {
		if (off < t->unsol_got && c->p.data_pdu_in_order)
			goto bad;
		if ((uint64_t)off + dlen > t->unsol_end ||
		    datasn != t->unsol_datasn ||
		    (c->p.data_pdu_in_order && off != t->unsol_got))
			goto bad;
		t->unsol_datasn++;
	} else {
		r = &t->r2t[ri];
		if (off < r->offset ||
		    (uint64_t)off + dlen > (uint64_t)r->offset + r->len ||
		    datasn != r->datasn ||
		    (c->p.data_pdu_in_order && off != r->offset + r->got))
			goto bad;
		r->datasn++;
	}
	c->cur = t;
	c->cur_r2t = ri;
	c->rx.dst = t->discard ? NULL : t->buf + off;
	return 0;
bad:
	/*
	 * ErrorRecoveryLevel 0 has no recovery within a command: the
	 * command ends here with CHECK CONDITION (ABORTED COMMAND, DATA
	 * PHASE ERROR), this PDU's data and any later Data-Out for it are
	 * dropped, and the session carries on.
	 */
	log_info(
		"iscsi: %s: Data-Out ITT 0x%x TTT 0x%x DataSN %u offset %u length %u out of sequence: command failed",
		c->peer, itt, ttt, datasn, off, dlen);
	t->nr2t = 0;
	t->discard = true;
	t->dir = SCSI_DIR_NONE;
	scsi_set_sense(&t->cmd, false, SK_ABORTED_COMMAND,
		       ASC_DATA_PHASE_ERROR);
	t->cmd.data_len = 0;
	t->cmd.cdb_xfer_len = t->edtl;
	task_queue(c, t);
	c->cur_drop = true;
	return 0;
}

static int dataout_pdu(struct iscsi_conn *c)
{
	struct iscsi_task *t = c->cur;
	uint32_t dlen = c->rx.data_len;
	struct iscsi_r2t *r;
	bool burst_done = false;

	c->cur = NULL;
	if (c->cur_r2t < 0) {
		t->unsol_got += dlen;
	} else {
		r = &t->r2t[c->cur_r2t];
		r->got += dlen;
		if (r->got >= r->len) {
			*r = t->r2t[--t->nr2t];
			burst_done = true;
		}
	}
	t->received += dlen;
	if (t->held)
		return 0; /* it waits for its CmdSN's turn */
	if (t->received >= (t->discard ? t->unsol_end : t->edtl)) {
		task_execute(c, t);
		return 0;
	}
	return burst_done ? send_r2ts(c, t) : 0;
}

/* ---- other requests ------------------------------------------------------ */

/* A non-SCSI request's CmdSN: immediate ones take none. */
static bool cmdsn_accept(struct iscsi_conn *c, const uint8_t *bhs)
{
	uint32_t sn = iscsi_bhs_cmdsn(bhs);

	if (iscsi_bhs_immediate(bhs))
		return true;
	switch (iscsi_cmdsn_check(sn, c->exp_cmd_sn, c->max_cmd_sn)) {
	case ISCSI_SN_EXPECTED:
		c->exp_cmd_sn++;
		/* the commands held behind it go now, before its answer */
		sn_release(c);
		return true;
	case ISCSI_SN_AHEAD:
		/*
		 * Past a gap: handled now (it has no slot to wait in), its
		 * CmdSN marked used so ExpCmdSN steps over it later.
		 */
		return !sn_held(c, sn) && sn_used_add(c, sn);
	default:
		return false;
	}
}

static int nop_out(struct iscsi_conn *c, const uint8_t *data, uint32_t dlen)
{
	const uint8_t *req = c->cur_bhs;
	uint32_t itt = iscsi_bhs_itt(req), ttt = iscsi_bhs_ttt(req);
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	if (itt == ISCSI_RSVD_TAG) {
		/* the answer to our ping, or a one-way ping: no reply */
		if (ttt != ISCSI_RSVD_TAG && ttt == c->ping_ttt)
			c->ping_ttt = ISCSI_RSVD_TAG;
		return 0;
	}
	if (!cmdsn_accept(c, req))
		return 0;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_NOP_IN);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_lun(bhs, iscsi_bhs_lun(req));
	iscsi_bhs_set_itt(bhs, itt);
	iscsi_bhs_set_ttt(bhs, ISCSI_RSVD_TAG);
	iscsi_conn_fill_sn(c, bhs, true);
	/* the ping data comes back, as much as the initiator takes */
	if (dlen > c->p.max_xmit_dsl)
		dlen = c->p.max_xmit_dsl;
	return iscsi_conn_queue_pdu(c, bhs, data, dlen);
}

static int tmf_respond(struct iscsi_conn *c, uint8_t response)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	iscsi_bhs_set_opcode(bhs, ISCSI_OP_TMF_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_response(bhs, response);
	iscsi_bhs_set_itt(bhs, iscsi_bhs_itt(c->cur_bhs));
	iscsi_conn_fill_sn(c, bhs, true);
	return iscsi_conn_queue_pdu(c, bhs, NULL, 0);
}

/*
 * Resets that reach the other sessions of this target: a message to the
 * worker of each (a snapshot of the registry; one calloc, control path).
 */
static void reset_others(struct iscsi_conn *c, bool cold)
{
	uint64_t now = iscsi_now_ns();
	struct iscsi_sess_entry *v;
	unsigned int n, i;

	n = iscsi_sess_count(&c->fe->sessions) + 16;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	i = iscsi_sess_collect(&c->fe->sessions, c->target, v, n);
	if (i < n)
		n = i;
	for (i = 0; i < n; i++)
		if (v[i].conn_id != c->id)
			iscsi_worker_post_abort(
				v[i].w,
				cold ? ISCSI_MSG_CLOSE : ISCSI_MSG_ABORT_CONN,
				v[i].conn_id, ISCSI_LUN_ALL, now);
	free(v);
}

static int tmf(struct iscsi_conn *c)
{
	const uint8_t *req = c->cur_bhs;
	uint8_t func = iscsi_bhs_function(req);
	uint32_t rtt = iscsi_bhs_rtt(req), ref = iscsi_bhs_ref_cmdsn(req);
	struct lun_table *luns = c->fe->tgt->luns;
	uint32_t vlun, tlun = UINT32_MAX;
	bool lun_ok;
	unsigned int i;
	int ret;

	if (c->discovery)
		return send_reject(c, ISCSI_REJECT_PROTOCOL, req);
	if (!cmdsn_accept(c, req))
		return 0;
	if (!scsi_lun_decode(iscsi_bhs_lun(req), &vlun) &&
	    vlun < c->view->count)
		tlun = c->view->base + vlun;
	lun_ok = tlun != UINT32_MAX && lun_exists(luns, tlun);
	switch (func) {
	case ISCSI_TMF_ABORT_TASK:
		for (i = 0; i < ISCSI_SLOTS; i++) {
			struct iscsi_task *t = &c->tasks[i];

			if (t->state != ISCSI_TASK_FREE && t->itt == rtt) {
				log_info("iscsi: %s: ABORT TASK ITT 0x%x",
					 c->peer, rtt);
				task_abort(c, t);
				return tmf_respond(c, ISCSI_TMF_RSP_COMPLETE);
			}
		}
		/*
		 * RFC 7143 11.5.1: a task not (yet) received whose RefCmdSN
		 * is in the window counts as received and done; one outside
		 * it does not exist.
		 */
		if (!iscsi_sn_lt(ref, c->exp_cmd_sn) &&
		    iscsi_sn_le(ref, c->max_cmd_sn))
			return tmf_respond(c, ISCSI_TMF_RSP_COMPLETE);
		return tmf_respond(c, ISCSI_TMF_RSP_NO_TASK);
	case ISCSI_TMF_ABORT_TASK_SET:
	case ISCSI_TMF_CLEAR_TASK_SET:
		if (!lun_ok)
			return tmf_respond(c, ISCSI_TMF_RSP_NO_LUN);
		iscsi_conn_abort(c, tlun, UINT64_MAX);
		if (func == ISCSI_TMF_CLEAR_TASK_SET)
			iscsi_fe_broadcast_lun(c->fe, tlun, c->id);
		return tmf_respond(c, ISCSI_TMF_RSP_COMPLETE);
	case ISCSI_TMF_LUN_RESET:
		if (!lun_ok)
			return tmf_respond(c, ISCSI_TMF_RSP_NO_LUN);
		log_info("iscsi: %s: LUN RESET of LUN %u", c->peer, tlun);
		iscsi_conn_abort(c, tlun, UINT64_MAX);
		iscsi_fe_broadcast_lun(c->fe, tlun, c->id);
		scsi_lun_reset(c->fe->tgt, c->view, vlun);
		return tmf_respond(c, ISCSI_TMF_RSP_COMPLETE);
	case ISCSI_TMF_TARGET_WARM_RESET:
	case ISCSI_TMF_TARGET_COLD_RESET:
		log_info("iscsi: %s: TARGET %s RESET of %s", c->peer,
			 func == ISCSI_TMF_TARGET_COLD_RESET ? "COLD" : "WARM",
			 c->fe->names[c->target]);
		iscsi_conn_abort(c, ISCSI_LUN_ALL, UINT64_MAX);
		reset_others(c, func == ISCSI_TMF_TARGET_COLD_RESET);
		scsi_target_reset(c->fe->tgt, c->view);
		ret = tmf_respond(c, ISCSI_TMF_RSP_COMPLETE);
		if (func == ISCSI_TMF_TARGET_COLD_RESET)
			c->state = ISCSI_CONN_CLOSING;
		return ret;
	case ISCSI_TMF_TASK_REASSIGN:
		return tmf_respond(c, ISCSI_TMF_RSP_NO_REASSIGN);
	case ISCSI_TMF_CLEAR_ACA:
		return tmf_respond(c, ISCSI_TMF_RSP_UNSUPPORTED);
	default:
		return tmf_respond(c, 255); /* function rejected */
	}
}

static int logout(struct iscsi_conn *c)
{
	const uint8_t *req = c->cur_bhs;
	uint8_t reason = iscsi_bhs_reason_code(req), response = 0;
	uint8_t bhs[ISCSI_BHS_LEN] = {0};
	int ret;

	if (!cmdsn_accept(c, req))
		return 0;
	if (reason == 1 && iscsi_bhs_cid(req) != c->cid)
		response = 1; /* CID not found */
	else if (reason == 2)
		response = 2; /* connection recovery is not supported */
	else if (reason > 2)
		return send_reject(c, ISCSI_REJECT_INVALID_FIELD, req);
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_LOGOUT_RSP);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_response(bhs, response);
	iscsi_bhs_set_itt(bhs, iscsi_bhs_itt(req));
	if (!response) {
		iscsi_conn_abort(c, ISCSI_LUN_ALL, UINT64_MAX);
		/*
		 * The I_T nexus ends here, not when the socket closes: an
		 * initiator that logs in again at once must find this
		 * nexus's prevention and RESERVE(6) gone (libiscsi's
		 * PreventAllow.Logout). iscsi_conn_destroy() repeats it,
		 * which changes nothing.
		 */
		if (c->registered && !c->discovery)
			scsi_pr_nexus_lost(c->fe->tgt, (uint32_t)c->id);
	}
	iscsi_conn_fill_sn(c, bhs, true);
	/* Time2Wait and Time2Retain stay 0: nothing to reconnect to */
	ret = iscsi_conn_queue_pdu(c, bhs, NULL, 0);
	if (!response) {
		log_info("iscsi: %s: %s logged out", c->peer, c->initiator);
		c->state = ISCSI_CONN_CLOSING;
	}
	return ret;
}

/* ---- receive dispatch -------------------------------------------------- */

static int on_header(struct iscsi_conn *c)
{
	uint8_t op;

	memcpy(c->cur_bhs, c->rx.bhs, ISCSI_BHS_LEN);
	op = iscsi_bhs_opcode(c->cur_bhs);
	c->cur = NULL;
	c->cur_drop = false;
	c->cur_reject = 0;
	c->cur_r2t = -1;
	if (c->state == ISCSI_CONN_LOGIN) {
		if (op != ISCSI_OP_LOGIN_REQ) {
			log_info("iscsi: %s: opcode 0x%02x before login",
				 c->peer, op);
			return -EPROTO;
		}
		c->rx.dst = c->dbuf;
		return 0;
	}
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return cmd_header(c);
	case ISCSI_OP_DATA_OUT:
		return dataout_header(c);
	default:
		c->rx.dst = c->dbuf;
		return 0;
	}
}

/* Text segments end with a NUL the parser relies on: add one past @len. */
static char *text_data(struct iscsi_conn *c, uint32_t *len)
{
	c->dbuf[*len] = '\0';
	return (char *)c->dbuf;
}

static int on_pdu(struct iscsi_conn *c)
{
	const uint8_t *bhs = c->cur_bhs;
	uint32_t dlen = c->rx.data_len;
	uint8_t op = iscsi_bhs_opcode(bhs);

	if (c->cur_drop)
		return 0;
	if (c->cur_reject)
		return send_reject(c, c->cur_reject, bhs);
	if (c->state == ISCSI_CONN_LOGIN)
		return iscsi_login_pdu(c, text_data(c, &dlen), dlen);
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return cmd_pdu(c);
	case ISCSI_OP_DATA_OUT:
		return dataout_pdu(c);
	case ISCSI_OP_NOP_OUT:
		return nop_out(c, c->dbuf, dlen);
	case ISCSI_OP_TMF_REQ:
		return tmf(c);
	case ISCSI_OP_TEXT_REQ:
		if (!cmdsn_accept(c, bhs))
			return 0;
		return iscsi_text_pdu(c, text_data(c, &dlen), dlen);
	case ISCSI_OP_LOGOUT_REQ:
		return logout(c);
	case ISCSI_OP_SNACK:
		/* ErrorRecoveryLevel 0: no SNACK support */
		return send_reject(c, ISCSI_REJECT_SNACK, bhs);
	case ISCSI_OP_LOGIN_REQ:
		send_reject(c, ISCSI_REJECT_PROTOCOL, bhs);
		c->state = ISCSI_CONN_CLOSING;
		return 0;
	default:
		return send_reject(c, ISCSI_REJECT_UNSUPPORTED, bhs);
	}
}

static bool rx_at_boundary(const struct iscsi_conn *c)
{
	return (c->rx.part == ISCSI_RX_BHS && c->rx.got == 0) ||
	       c->rx.part > ISCSI_RX_DDIGEST;
}

/* Processes the bytes in rbuf. Return: 0, or -errno to close. */
static int rx_process(struct iscsi_conn *c)
{
	size_t used;
	int ret;

	while (c->roff < c->rlen && c->state <= ISCSI_CONN_FFP) {
		if (rx_at_boundary(c) && iscsi_conn_rx_blocked(c))
			return 0;
		ret = iscsi_rx_feed(&c->rx, c->rbuf + c->roff,
				    c->rlen - c->roff, &used);
		c->roff += used;
		switch (ret) {
		case ISCSI_RX_MORE:
			break;
		case ISCSI_RX_HEADER:
			ret = on_header(c);
			if (ret)
				return ret;
			/* a PDU without data is complete already */
			ret = iscsi_rx_feed(&c->rx, NULL, 0, &used);
			if (ret == ISCSI_RX_PDU) {
				ret = on_pdu(c);
				if (ret)
					return ret;
			}
			break;
		case ISCSI_RX_PDU:
			ret = on_pdu(c);
			if (ret)
				return ret;
			break;
		case -EILSEQ:
			/* the data is bad: reject it; ERL 0 ends the session */
			log_info("iscsi: %s: data digest error", c->peer);
			send_reject(c, ISCSI_REJECT_DIGEST, c->rx.bhs);
			c->state = ISCSI_CONN_CLOSING;
			return 0;
		case -EMSGSIZE:
			log_info(
				"iscsi: %s: data segment of %u bytes is over MaxRecvDataSegmentLength %u",
				c->peer, c->rx.data_len, c->rx.max_data);
			send_reject(c, ISCSI_REJECT_PROTOCOL, c->rx.bhs);
			c->state = ISCSI_CONN_CLOSING;
			return 0;
		default:
			log_info("iscsi: %s: header digest error", c->peer);
			return ret;
		}
	}
	if (c->roff == c->rlen)
		c->roff = c->rlen = 0;
	return 0;
}

int iscsi_conn_readable(struct iscsi_conn *c)
{
	unsigned int round;
	ssize_t n;
	int ret;

	for (round = 0;; round++) {
		if (c->state > ISCSI_CONN_FFP)
			return 0;
		ret = rx_process(c);
		if (ret) {
			c->state = ISCSI_CONN_DEAD;
			return ret;
		}
		if (c->roff < c->rlen)
			return 0; /* blocked on transmit room */
		/*
		 * bounded: a busy socket yields to the others after 16 reads,
		 * each handled above first, so that nothing is left in rbuf
		 * for a socket that epoll no longer reports readable
		 */
		if (round == 16)
			return 0;
		n = recv(c->fd, c->rbuf, RBUF_SIZE, MSG_DONTWAIT);
		if (n == 0) {
			c->state = ISCSI_CONN_DEAD;
			return -ECONNRESET;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			c->state = ISCSI_CONN_DEAD;
			return -errno;
		}
		c->rlen = (size_t)n;
		c->roff = 0;
		c->last_rx_ns = iscsi_now_ns();
	}
	return 0;
}

/* ---- liveness and events --------------------------------------------- */

static void send_ping(struct iscsi_conn *c, uint64_t now)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0};

	c->ping_ns = now;
	c->ping_ttt = c->next_ttt++;
	if (c->ping_ttt == ISCSI_RSVD_TAG)
		c->ping_ttt = c->next_ttt++;
	/* no room: the ping counts as sent, so a stuck peer times out */
	if (!tx_has_room(c, 0))
		return;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_NOP_IN);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_itt(bhs, ISCSI_RSVD_TAG);
	iscsi_bhs_set_ttt(bhs, c->ping_ttt);
	iscsi_conn_fill_sn(c, bhs, false);
	iscsi_conn_queue_pdu(c, bhs, NULL, 0);
}

/* AsyncEvent 0 with sense UNIT ATTENTION, REPORTED LUNS DATA HAS CHANGED. */
static bool send_luns_changed(struct iscsi_conn *c)
{
	uint8_t bhs[ISCSI_BHS_LEN] = {0}, data[2 + 18] = {0};

	if (!tx_has_room(c, sizeof(data)))
		return false;
	put_be16(data, 18);
	data[2] = 0x70;
	data[2 + 2] = SK_UNIT_ATTENTION;
	data[2 + 7] = 10;
	data[2 + 12] = 0x3f;
	data[2 + 13] = 0x0e;
	iscsi_bhs_set_opcode(bhs, ISCSI_OP_ASYNC);
	iscsi_bhs_set_flags(bhs, ISCSI_FLAG_F);
	iscsi_bhs_set_itt(bhs, ISCSI_RSVD_TAG);
	iscsi_conn_fill_sn(c, bhs, true);
	/* a SCSI asynchronous event */
	iscsi_bhs_set_async_event(bhs, 0);
	return iscsi_conn_queue_pdu(c, bhs, data, sizeof(data)) == 0;
}

void iscsi_conn_tick(struct iscsi_conn *c, uint64_t now, unsigned int gen)
{
	const struct cfg_iscsi *ic = &c->fe->icfg;

	if (c->state == ISCSI_CONN_LOGIN) {
		unsigned int limit = ic->login_timeout;

		/* under a flood of idle connections, each gets less time */
		if (2 * atomic_load_explicit(&c->fe->pre_total,
					     memory_order_relaxed) >
			    ic->max_login_connections &&
		    limit > ic->login_timeout_busy)
			limit = ic->login_timeout_busy;
		if (now - c->born_ns > limit * 1000000000ull) {
			log_info("iscsi: %s: no login in %u s", c->peer, limit);
			c->state = ISCSI_CONN_DEAD;
		}
		return;
	}
	if (c->state != ISCSI_CONN_FFP)
		return;
	if (c->ping_ttt != ISCSI_RSVD_TAG) {
		if (now - c->ping_ns > ic->nop_timeout * 1000000000ull) {
			log_info(
				"iscsi: %s: no NOP-Out answer in %u s: dropping the connection",
				c->peer, ic->nop_timeout);
			c->state = ISCSI_CONN_DEAD;
			return;
		}
	} else if (ic->nop_interval &&
		   now - c->last_rx_ns > ic->nop_interval * 1000000000ull) {
		send_ping(c, now);
	}
	if (!c->discovery && gen != c->luns_gen && send_luns_changed(c))
		c->luns_gen = gen;
}

/* ---- life ---------------------------------------------------------------- */

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
			port = ntohs(a->sin6_port);
		}
	}
	snprintf(buf, len, "%s:%u", host, port);
}

int iscsi_conn_create(struct iscsi_conn **out, struct iscsi_fe *fe,
		      struct iscsi_worker *w, int fd)
{
	uint32_t mrdsl = fe->offer.max_recv_dsl;
	struct iscsi_conn *c;
	unsigned int i;

	c = calloc(1, sizeof(*c));
	if (!c)
		goto out_fd;
	c->fe = fe;
	c->w = w;
	c->fd = fd;
	c->id = atomic_fetch_add(&fe->next_conn_id, 1) + 1;
	c->target = -1;
	c->view = &fe->views[0];
	iscsi_neg_init(&c->neg, &fe->offer);
	iscsi_params_default(&c->p, mrdsl);
	iscsi_rx_init(&c->rx, mrdsl);
	c->rbuf = malloc(RBUF_SIZE);
	/* +4: room for the NUL text_data() adds past the longest segment */
	c->dbuf = malloc((size_t)mrdsl + 4);
	c->ocap = ctrl_reserve(c) + 2 * (ISCSI_TX_SEG + 256);
	c->obuf = malloc(c->ocap);
	c->tasks = calloc(ISCSI_SLOTS, sizeof(*c->tasks));
	if (!c->rbuf || !c->dbuf || !c->obuf || !c->tasks)
		goto out_free;
	for (i = ISCSI_SLOTS; i-- > 0;) {
		struct iscsi_task *t = &c->tasks[i];

		t->slot = (uint16_t)i;
		t->immediate = i >= ISCSI_CMD_SLOTS;
		t->accounted = true; /* not counted twice by the first put */
		task_put(c, t);
	}
	c->nfree_cmd = ISCSI_CMD_SLOTS;
	atomic_store_explicit(&c->inflight, 0, memory_order_relaxed);
	c->stat_sn = 1;
	c->ping_ttt = ISCSI_RSVD_TAG;
	c->next_ttt = 1;
	c->born_ns = c->last_rx_ns = iscsi_now_ns();
	c->luns_gen = lun_luns_generation(fe->tgt->luns);
	peer_name(fd, c->peer, sizeof(c->peer));
	*out = c;
	return 0;

out_free:
	free(c->tasks);
	free(c->obuf);
	free(c->dbuf);
	free(c->rbuf);
	free(c);
out_fd:
	close(fd);
	return -ENOMEM;
}

void iscsi_conn_destroy(struct iscsi_conn *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < ISCSI_SLOTS; i++) {
		if (c->tasks[i].state == ISCSI_TASK_DELAYED)
			iscsi_timer_del(c->w, c, i);
		buf_release(c, &c->tasks[i]);
	}
	/* after the buffers: the last connection frees it with none left */
	iscsi_ini_put(&c->fe->initiators, c->ini);
	iscsi_prelogin_put(c);
	if (c->registered) {
		iscsi_sess_remove(&c->fe->sessions, c->tsih, c->id);
		/* the I_T nexus is gone: its RESERVE(6) reservations too */
		if (!c->discovery)
			scsi_pr_nexus_lost(c->fe->tgt, (uint32_t)c->id);
	}
	close(c->fd);
	free(c->login.text);
	free(c->text);
	free(c->tasks);
	free(c->obuf);
	free(c->dbuf);
	free(c->rbuf);
	free(c);
}
