// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the CDB emulator. Each input is a run of commands
 * against a fresh set of five LUNs (GPT, MBR, 4 KiB blocks, tight block
 * limits, a few fault rules) built with the unit tests' SCSI harness; no
 * sockets. A command is
 *
 *   lun:1  flags:1  cdb_len:1  xfer_len:2 (LE)  cdb[cdb_len]  data-out
 *
 * flags: bits 0-1 the direction (NONE, READ, WRITE), bits 2-3 the I_T
 * nexus (0-3, with initiator names, for reservations), bit 4 through a view
 * of LUNs 1-3, bit 5 two data buffers split in the middle. A WRITE takes
 * xfer_len bytes of data-out from the input (zeros past its end). The
 * data buffer is allocated to exactly xfer_len, so ASan sees any access
 * past it; scsi_exec()'s out fields are checked against its contract.
 *
 * No data may be lost or change by itself: every block a READ or WRITE
 * (10, 12, 16) moved with GOOD status is remembered (the last 512), and a
 * later GOOD READ of it must return the same bytes. Commands that only
 * report (INQUIRY, MODE SENSE, READ CAPACITY...) keep what is remembered;
 * any other command, or a READ or WRITE that did not end GOOD at once,
 * forgets everything, since it may change blocks legitimately.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scsi-harness.h"

#define MAX_CMDS 64
#define MAX_XFER 65536
#define MAX_SEEN 512

/* What a block last held, as a GOOD READ or WRITE moved it. */
struct seen {
	uint32_t lun; /* table LUN */
	uint64_t lba;
	uint32_t bs;
	uint8_t data[4096];
};

static struct seen seen[MAX_SEEN];
static unsigned int nseen, seen_next;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const initiators[4] = {
	NULL,
	"iqn.2026-01.test:fuzz-a,i,0x000000000001",
	"iqn.2026-01.test:fuzz-b,i,0x000000000002",
	"iqn.2026-01.test:fuzz-a,i,0x000000000003",
};

static void add_fault(struct harness *h, struct fault_rule r)
{
	if (fault_add(h->faults, &r) < 0)
		abort();
}

static struct harness *setup(void)
{
	struct harness *h = h_new(8);
	struct lun_group g;

	/* LUNs 0-1: 8 MiB of 512-byte blocks, a 4-partition GPT */
	g = h_group("gpt", 0, 2, 8 << 20);
	g.ptable = PTABLE_GPT;
	g.nparts = 4;
	h_add_group(h, &g);
	/* LUN 2: thick, 4 KiB blocks, removable, an MBR with logicals */
	g = h_group("mbr4k", 2, 1, 16 << 20);
	g.block_size = 4096;
	g.thin = false;
	g.lbprz = false;
	g.removable = true;
	g.ptable = PTABLE_MBR;
	g.nparts = 6;
	h_add_group(h, &g);
	/* LUNs 3-4: 64 KiB, 4 KiB physical blocks, tight limits */
	g = h_group("tight", 3, 2, 64 << 10);
	g.phys_exp = 3;
	g.max_xfer_blocks = 16;
	g.opt_xfer_blocks = 8;
	g.max_unmap_blocks = 32;
	g.max_unmap_desc = 2;
	g.max_ws_blocks = 16;
	h_add_group(h, &g);

	add_fault(h, (struct fault_rule){.kind = FAULT_MEDIUM_READ,
					 .lun_first = 3,
					 .lun_last = 3,
					 .lba_first = 8,
					 .lba_last = 15});
	add_fault(h, (struct fault_rule){.kind = FAULT_MEDIUM_WRITE,
					 .lun_first = 3,
					 .lun_last = 4,
					 .lba_first = 100,
					 .lba_last = UINT64_MAX,
					 .count = 3});
	add_fault(h, (struct fault_rule){.kind = FAULT_UA,
					 .lun_first = 4,
					 .lun_last = 4,
					 .lba_last = UINT64_MAX,
					 .asc = 0x2a,
					 .ascq = 0x09,
					 .count = 2});
	add_fault(h, (struct fault_rule){.kind = FAULT_DELAY,
					 .lun_first = 1,
					 .lun_last = 1,
					 .lba_first = 2000,
					 .lba_last = 2047,
					 .delay_ns = 1000});
	add_fault(h, (struct fault_rule){.kind = FAULT_HANG,
					 .lun_first = 1,
					 .lun_last = 1,
					 .lba_first = 1000,
					 .lba_last = 1000});
	add_fault(h, (struct fault_rule){.kind = FAULT_NOT_READY,
					 .lun_first = 4,
					 .lun_last = 4,
					 .lba_first = 50,
					 .lba_last = 60,
					 .asc = 0x04,
					 .ascq = 0x01});
	return h;
}

static uint64_t get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* READ/WRITE (10, 12, 16): 1 read, 2 write, 0 other; LBA and blocks. */
static int rw_decode(const uint8_t *cdb, size_t len, uint64_t *lba, uint32_t *n)
{
	switch (len ? cdb[0] : 0xff) {
	case 0x28:
	case 0x2a:
		if (len < 10)
			return 0;
		*lba = get_be(cdb + 2, 4);
		*n = (uint32_t)get_be(cdb + 7, 2);
		return cdb[0] == 0x28 ? 1 : 2;
	case 0xa8:
	case 0xaa:
		if (len < 12)
			return 0;
		*lba = get_be(cdb + 2, 4);
		*n = (uint32_t)get_be(cdb + 6, 4);
		return cdb[0] == 0xa8 ? 1 : 2;
	case 0x88:
	case 0x8a:
		if (len < 16)
			return 0;
		*lba = get_be(cdb + 2, 8);
		*n = (uint32_t)get_be(cdb + 10, 4);
		return cdb[0] == 0x88 ? 1 : 2;
	}
	return 0;
}

/* Commands that move no medium data and change no block. */
static bool reports_only(const uint8_t *cdb, size_t len)
{
	if (!len)
		return true;
	switch (cdb[0]) {
	case 0x00: /* TEST UNIT READY */
	case 0x03: /* REQUEST SENSE */
	case 0x12: /* INQUIRY */
	case 0x1a: /* MODE SENSE (6) */
	case 0x25: /* READ CAPACITY (10) */
	case 0x5a: /* MODE SENSE (10) */
	case 0xa0: /* REPORT LUNS */
		return true;
	case 0x9e: /* READ CAPACITY (16), GET LBA STATUS */
		return len >= 2 &&
		       ((cdb[1] & 0x1f) == 0x10 || (cdb[1] & 0x1f) == 0x12);
	}
	return false;
}

static struct seen *seen_find(uint32_t lun, uint64_t lba)
{
	unsigned int i;

	for (i = 0; i < nseen; i++)
		if (seen[i].lun == lun && seen[i].lba == lba)
			return &seen[i];
	return NULL;
}

/* Checks (read) or records (read and write) what a GOOD command moved. */
static void seen_track(uint32_t lun, uint32_t bs, uint64_t lba, uint32_t n,
		       const uint8_t *buf, bool read)
{
	struct seen *e;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const uint8_t *blk = buf + (size_t)i * bs;

		e = seen_find(lun, lba + i);
		if (e && read && (e->bs != bs || memcmp(e->data, blk, bs))) {
			fprintf(stderr,
				"fuzz-cdb: LUN %u LBA %llu changed by itself (read back other bytes than last moved)\n",
				lun, (unsigned long long)(lba + i));
			abort();
		}
		if (!e) {
			e = &seen[seen_next];
			seen_next = (seen_next + 1) % MAX_SEEN;
			if (nseen < MAX_SEEN)
				nseen++;
		}
		e->lun = lun;
		e->lba = lba + i;
		e->bs = bs;
		memcpy(e->data, blk, bs);
	}
}

static void check_data(struct harness *h, uint32_t lun, const uint8_t *cdb,
		       size_t cdb_len, uint32_t xfer, const uint8_t *buf)
{
	struct lun_info li;
	uint64_t lba;
	uint32_t n, tlun = h->use_view ? lun + h->view.base : lun;
	int rw = rw_decode(cdb, cdb_len, &lba, &n);

	if (!rw) {
		if (!reports_only(cdb, cdb_len))
			nseen = seen_next = 0;
		return;
	}
	if (h->disp != SCSI_DONE || h->cmd.status != 0 ||
	    (h->use_view && lun >= h->view.count) ||
	    lun_get(h->luns, tlun, &li)) {
		nseen = seen_next = 0; /* what it did is not known exactly */
		return;
	}
	lun_put(h->luns, &li);
	if (li.block_size > 4096 || (uint64_t)n * li.block_size > xfer ||
	    h->cmd.data_len != n * li.block_size) {
		nseen = seen_next = 0;
		return;
	}
	seen_track(tlun, li.block_size, lba, n, buf, rw == 1);
}

static void run_one(struct harness *h, uint8_t lun, uint8_t flags,
		    const uint8_t *cdb, size_t cdb_len, uint32_t xfer,
		    const uint8_t *dout, size_t dout_len)
{
	enum scsi_dir dir = (enum scsi_dir)(flags & 3);
	struct iovec iov[2];
	unsigned int iovcnt = 0;
	uint8_t *buf = NULL;

	if (dir > SCSI_DIR_WRITE)
		dir = SCSI_DIR_NONE;
	if (xfer) {
		buf = malloc(xfer);
		if (!buf)
			abort();
		memset(buf, 0xa5, xfer);
		if (dir == SCSI_DIR_WRITE) {
			memset(buf, 0, xfer);
			memcpy(buf, dout, dout_len < xfer ? dout_len : xfer);
		}
		if ((flags & 0x20) && xfer > 1) {
			iov[0] = (struct iovec){buf, xfer / 2};
			iov[1] =
				(struct iovec){buf + xfer / 2, xfer - xfer / 2};
			iovcnt = 2;
		} else {
			iov[0] = (struct iovec){buf, xfer};
			iovcnt = 1;
		}
	}
	h->nexus = (flags >> 2) & 3;
	h->initiator_name = initiators[h->nexus];
	h->use_view = flags & 0x10;
	/* h_exec_iov() asserts sense_len and data_len against the contract */
	h_exec_iov(h, lun, cdb_len ? cdb : NULL, cdb_len, dir,
		   iovcnt ? iov : NULL, iovcnt, xfer);
	if (h->cmd.status == 0x02 && h->cmd.sense_len < 8)
		abort(); /* CHECK CONDITION without sense */
	if (h->disp > SCSI_HOLD)
		abort();
	check_data(h, lun, cdb, cdb_len, xfer, buf);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct harness *h = setup();
	unsigned int n = 0;
	size_t off = 0;

	nseen = seen_next = 0;
	h_set_view(h, 1, 3);
	h->use_view = false;
	while (size - off >= 5 && n++ < MAX_CMDS) {
		uint8_t lun = data[off] & 7, flags = data[off + 1];
		size_t cdb_len = data[off + 2] % (SCSI_CDB_MAX + 1);
		uint32_t xfer =
			(uint32_t)data[off + 3] | (uint32_t)data[off + 4] << 8;
		const uint8_t *cdb;
		size_t dout_len = 0;

		off += 5;
		if (cdb_len > size - off)
			cdb_len = size - off;
		cdb = data + off;
		off += cdb_len;
		if ((flags & 3) == SCSI_DIR_WRITE) {
			dout_len = size - off < xfer ? size - off : xfer;
			if (dout_len > MAX_XFER)
				dout_len = MAX_XFER;
		}
		run_one(h, lun, flags, cdb, cdb_len, xfer, data + off,
			dout_len);
		off += dout_len;
	}
	scsi_target_fini(&h->tgt);
	h_free(h);
	return 0;
}
