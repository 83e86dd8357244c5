// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the partition-table reader, ptable_parse(), on what a
 * host may have written (GPT or MBR). Input: a block size selector byte
 * (bit 7: the size is in units of 2^16 blocks), the disk size in blocks
 * (4 bytes LE), then sparse blocks, each a 4-byte LE LBA and one block of
 * data; an LBA with bit 31 set counts back from the last block (so the
 * backup GPT and far-away EBRs are cheap to say). Unlisted blocks read as
 * zeros; a later record for the same LBA wins. Every partition found must
 * lie inside the disk with a number 1..255, in increasing order, and the
 * reads must stay inside the disk and within the documented bound.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 64

struct disk {
	uint32_t bs;
	uint64_t nblocks;
	unsigned int nrec;
	uint64_t lba[MAX_RECORDS];
	const uint8_t *blk[MAX_RECORDS];
	size_t blk_len[MAX_RECORDS]; /* the last one may be short */
	unsigned long reads;
};

static int read_blocks(void *arg, uint64_t lba, uint32_t n, void *buf)
{
	struct disk *d = arg;
	uint8_t *out = buf;
	unsigned int i, k;

	d->reads++;
	if (!n || lba >= d->nblocks || n > d->nblocks - lba)
		abort(); /* the reader must ask only for blocks of the disk */
	for (i = 0; i < n; i++, out += d->bs) {
		memset(out, 0, d->bs);
		for (k = d->nrec; k-- > 0;) {
			if (d->lba[k] == lba + i) {
				memcpy(out, d->blk[k], d->blk_len[k]);
				break;
			}
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t sizes[] = {512, 1024, 2048, 4096, 520};
	struct ptable_part parts[PTABLE_MAX_NUMBER + 1];
	unsigned int nfound = 0, i;
	struct disk d = {0};
	int kind;

	if (size < 5)
		return 0;
	d.bs = sizes[data[0] % 5];
	d.nblocks = (uint64_t)data[1] | (uint64_t)data[2] << 8 |
		    (uint64_t)data[3] << 16 | (uint64_t)data[4] << 24;
	if (data[0] & 0x80)
		d.nblocks <<= 16; /* huge disks too */
	for (size_t off = 5; off + 4 < size && d.nrec < MAX_RECORDS;) {
		uint32_t v = (uint32_t)data[off] |
			     (uint32_t)data[off + 1] << 8 |
			     (uint32_t)data[off + 2] << 16 |
			     (uint32_t)data[off + 3] << 24;
		size_t len = size - off - 4 < d.bs ? size - off - 4 : d.bs;

		d.lba[d.nrec] =
			v & 0x80000000u ? d.nblocks - 1 - (v & 0x7fffffff) : v;
		d.blk[d.nrec] = data + off + 4;
		d.blk_len[d.nrec] = len;
		d.nrec++;
		off += 4 + len;
	}
	kind = ptable_parse(read_blocks, &d, d.bs, d.nblocks, parts,
			    PTABLE_MAX_NUMBER + 1, &nfound);
	if (d.bs == 520) {
		if (kind != -EINVAL)
			abort();
		return 0;
	}
	if (kind < 0)
		return 0; /* none of our reads fail */
	if (kind != PTABLE_NONE && kind != PTABLE_GPT && kind != PTABLE_MBR)
		abort();
	if (nfound > PTABLE_MAX_NUMBER || (kind == PTABLE_NONE && nfound))
		abort();
	/* 1 + 2 * (1 + 1024) for GPT, then 1 + 255 * 101 for MBR */
	if (d.reads > 2051 + 1 + 255 * 101)
		abort();
	for (i = 0; i < nfound; i++) {
		const struct ptable_part *p = &parts[i];

		if (p->number < 1 || p->number > PTABLE_MAX_NUMBER)
			abort();
		if (i && p->number <= parts[i - 1].number)
			abort();
		if (!p->nblocks || p->start >= d.nblocks ||
		    p->nblocks > d.nblocks - p->start)
			abort();
	}
	return 0;
}
