// SPDX-License-Identifier: MIT
/*
 * The SCSI test harness (scsi-harness.h). Linked into every unit test but
 * the sdnum ones, so it has no main() and no state of its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bytes.h"
#include "scsi-harness.h"

struct harness *h_new(uint32_t max_luns)
{
	struct lun_table_params p = {
		.max_luns = max_luns,
		.seed = 0x5d5a12345678ull,
	};
	struct harness *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(store_mem_create(&h->store, NULL), 0);
	p.store = h->store;
	assert_int_equal(lun_table_create(&h->luns, &p), 0);
	assert_int_equal(fault_table_create(&h->faults), 0);
	h->tgt.luns = h->luns;
	h->tgt.faults = h->faults;
	h->tgt.port_id = 1;
	return h;
}

void h_free(struct harness *h)
{
	if (!h)
		return;
	fault_table_destroy(h->faults);
	lun_table_destroy(h->luns);
	store_destroy(h->store);
	free(h);
}

struct lun_group h_group(const char *name, uint32_t first, uint32_t count,
			 uint64_t size)
{
	struct lun_group g = {
		.first = first,
		.count = count,
		.size = size,
		.block_size = 512,
		.thin = true,
		.lbprz = true,
		.mode_default = LUN_MODE_WCE,
		.vendor = "SDSWARM",
		.product = "VDISK",
		.revision = "0001",
		.max_xfer_blocks = 65535,
		.opt_xfer_blocks = 128,
		.max_unmap_blocks = 1u << 22,
		.max_unmap_desc = 256,
		.max_ws_blocks = 1u << 22,
		.rotation_rate = 1,
		.ptable = PTABLE_NONE,
	};

	snprintf(g.name, sizeof(g.name), "%s", name);
	return g;
}

unsigned int h_add_group(struct harness *h, const struct lun_group *g)
{
	int ret = lun_group_add(h->luns, g);

	if (ret < 0) {
		print_error("lun_group_add(%s): %d\n", g->name, ret);
		fail();
	}
	return (unsigned int)ret;
}

struct harness *h_new_luns(uint32_t max_luns, uint32_t count, uint64_t size)
{
	struct harness *h = h_new(max_luns);
	struct lun_group g = h_group("g0", 0, count, size);

	h_add_group(h, &g);
	return h;
}

void h_set_view(struct harness *h, uint32_t base, uint32_t count)
{
	h->view.base = base;
	h->view.count = count;
	h->use_view = true;
}

uint8_t h_exec_iov(struct harness *h, uint32_t lun, const uint8_t *cdb,
		   size_t cdb_len, enum scsi_dir dir, const struct iovec *iov,
		   unsigned int iovcnt, uint32_t xfer_len)
{
	struct scsi_cmd *cmd = &h->cmd;

	assert_true(cdb_len <= SCSI_CDB_MAX);
	memset(cmd, 0, sizeof(*cmd));
	memset(h->cdb, 0, sizeof(h->cdb));
	if (cdb_len)
		memcpy(h->cdb, cdb, cdb_len);
	cmd->tgt = &h->tgt;
	cmd->view = h->use_view ? &h->view : NULL;
	cmd->lun = lun;
	cmd->nexus = h->nexus;
	cmd->port = h->port;
	cmd->initiator_name = h->initiator_name;
	cmd->cdb = cdb ? h->cdb : NULL;
	cmd->cdb_len = (uint8_t)cdb_len;
	cmd->dir = dir;
	cmd->iov = iov;
	cmd->iovcnt = iovcnt;
	cmd->xfer_len = xfer_len;
	cmd->stats = &h->stats;
	/* out fields start as garbage: scsi_exec() must set every one */
	cmd->status = 0xff;
	cmd->sense_len = 0xff;
	cmd->data_len = 0xdeadbeef;
	cmd->delay_ns = 0xdeadbeef;
	h->disp = scsi_exec(cmd);
	assert_true(cmd->sense_len <= SCSI_SENSE_MAX);
	assert_true(cmd->data_len <= xfer_len);
	return cmd->status;
}

uint8_t h_exec(struct harness *h, uint32_t lun, const uint8_t *cdb,
	       size_t cdb_len, enum scsi_dir dir, void *buf, size_t len)
{
	h->iov.iov_base = buf;
	h->iov.iov_len = len;
	return h_exec_iov(h, lun, cdb, cdb_len, dir, &h->iov, buf ? 1 : 0,
			  (uint32_t)len);
}

void h_clear_ua(struct harness *h, uint32_t lun)
{
	struct h_sense s;
	int i;

	for (i = 0; i < 16; i++) {
		if (h_exec(h, lun, H_CDB(0, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL,
			   0) == SCSI_GOOD)
			return;
		if (!h_sense_parse(h->cmd.sense, h->cmd.sense_len, &s) ||
		    s.key != SK_UNIT_ATTENTION)
			return; /* not ready or the like: no UA left */
	}
	print_error("LUN %u: unit attentions do not clear\n", lun);
	fail();
}

bool h_sense_parse(const uint8_t *s, size_t len, struct h_sense *out)
{
	size_t end, i;

	memset(out, 0, sizeof(*out));
	if (len < 8)
		return false;
	switch (s[0] & 0x7f) {
	case 0x70:
	case 0x71:
		if (len < 14)
			return false;
		out->key = s[2] & 0x0f;
		out->asc = s[12];
		out->ascq = s[13];
		out->info_valid = s[0] & 0x80;
		out->info = get_be32(s + 3);
		if (len >= 18 && (s[15] & 0x80)) {
			out->sks_valid = true;
			out->cd = s[15] & 0x40;
			out->bpv = s[15] & 0x08;
			out->bit = s[15] & 0x07;
			out->field = (uint16_t)(s[16] << 8 | s[17]);
		}
		return true;
	case 0x72:
	case 0x73:
		out->descriptor = true;
		out->key = s[1] & 0x0f;
		out->asc = s[2];
		out->ascq = s[3];
		end = 8 + (size_t)s[7];
		if (end > len)
			return false;
		for (i = 8; i + 2 <= end; i += 2 + (size_t)s[i + 1]) {
			const uint8_t *d = s + i;

			if (i + 2 + d[1] > end)
				return false;
			if (d[0] == 0x00 && d[1] == 0x0a) {
				out->info_valid = d[2] & 0x80;
				out->info = (uint64_t)get_be32(d + 4) << 32 |
					    get_be32(d + 8);
			} else if (d[0] == 0x02 && d[1] == 0x06 &&
				   (d[4] & 0x80)) {
				out->sks_valid = true;
				out->cd = d[4] & 0x40;
				out->bpv = d[4] & 0x08;
				out->bit = d[4] & 0x07;
				out->field = (uint16_t)(d[5] << 8 | d[6]);
			}
		}
		return true;
	default:
		return false;
	}
}

static const char *status_name(uint8_t st)
{
	switch (st) {
	case SCSI_GOOD:
		return "GOOD";
	case SCSI_CHECK_CONDITION:
		return "CHECK CONDITION";
	case SCSI_BUSY:
		return "BUSY";
	default:
		return "other";
	}
}

/* The last command's sense, or a failure at @file:@line. */
static void need_sense(struct harness *h, struct h_sense *s, const char *file,
		       int line)
{
	if (h->cmd.status != SCSI_CHECK_CONDITION) {
		print_error(
			"opcode %02Xh: status %02Xh (%s), expected CHECK CONDITION\n",
			h->cdb[0], h->cmd.status, status_name(h->cmd.status));
		_fail(file, line);
	}
	if (!h_sense_parse(h->cmd.sense, h->cmd.sense_len, s)) {
		print_error("opcode %02Xh: malformed sense (%u bytes)\n",
			    h->cdb[0], h->cmd.sense_len);
		_fail(file, line);
	}
}

void h_expect_good_at(struct harness *h, const char *file, int line)
{
	struct h_sense s;

	if (h->cmd.status == SCSI_GOOD && h->cmd.sense_len == 0)
		return;
	h_sense_parse(h->cmd.sense, h->cmd.sense_len, &s);
	print_error(
		"opcode %02Xh: status %02Xh (%s) sense %X/%02Xh/%02Xh, expected GOOD\n",
		h->cdb[0], h->cmd.status, status_name(h->cmd.status), s.key,
		s.asc, s.ascq);
	_fail(file, line);
}

void h_expect_sense_at(struct harness *h, uint8_t key, uint8_t asc,
		       uint8_t ascq, const char *file, int line)
{
	struct h_sense s;

	need_sense(h, &s, file, line);
	if (s.key == key && s.asc == asc && s.ascq == ascq)
		return;
	print_error(
		"opcode %02Xh: sense %X/%02Xh/%02Xh, expected %X/%02Xh/%02Xh\n",
		h->cdb[0], s.key, s.asc, s.ascq, key, asc, ascq);
	_fail(file, line);
}

void h_expect_field_at(struct harness *h, bool cd, uint16_t byte, int bit,
		       const char *file, int line)
{
	struct h_sense s;

	need_sense(h, &s, file, line);
	if (s.sks_valid && s.cd == cd && s.field == byte &&
	    (bit < 0 ? !s.bpv : (s.bpv && s.bit == bit)))
		return;
	print_error(
		"opcode %02Xh: field pointer %s %s byte %u bit %d, expected %s byte %u bit %d\n",
		h->cdb[0], s.sks_valid ? "valid" : "absent",
		s.cd ? "CDB" : "param", s.field, s.bpv ? s.bit : -1,
		cd ? "CDB" : "param", byte, bit);
	_fail(file, line);
}

void h_expect_info_at(struct harness *h, uint64_t info, const char *file,
		      int line)
{
	struct h_sense s;

	need_sense(h, &s, file, line);
	if (s.info_valid && s.info == info)
		return;
	print_error("opcode %02Xh: INFORMATION %s %llu, expected %llu\n",
		    h->cdb[0], s.info_valid ? "valid" : "not valid",
		    (unsigned long long)s.info, (unsigned long long)info);
	_fail(file, line);
}
