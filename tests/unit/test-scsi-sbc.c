// SPDX-License-Identifier: MIT
/*
 * SBC block commands through scsi_exec(): data round trips, every rejection
 * with its sense and field pointer, provisioning (UNMAP, WRITE SAME, GET LBA
 * STATUS), READ CAPACITY, COMPARE AND WRITE atomicity, a full store, FUA on
 * the file store, and injected faults.
 */
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "bytes.h"
#include "fault.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "store/store.h"
#include "scsi-harness.h"

/* LUNs of the standard fixture */
#define L_THIN 0 /* 512-byte blocks, thin, LBPRZ, 4 KiB physical */
#define L_THICK 1 /* 4096-byte blocks, fully provisioned */
#define L_HUGE 2 /* 2^33 blocks: past READ CAPACITY (10) */
#define L_SMALL 3 /* 2048 blocks, thin */
#define L_GPT 4 /* thin, a synthetic GPT */
#define L_WT 5 /* thin, write cache off */

#define THIN_BLOCKS 131072u
#define THICK_BLOCKS 16384u
#define HUGE_BLOCKS (1ull << 33)
#define SMALL_BLOCKS 2048u

#define MAX_XFER_THIN 2048u
#define MAX_XFER_THICK 256u
#define MAX_UNMAP_BLOCKS 65536u
#define MAX_UNMAP_DESC 4u
#define MAX_WS 65536u

/* Geometry and limits on top of the harness's typical thin group. */
static struct lun_group group(const char *name, uint32_t first,
			      uint64_t nblocks, uint32_t bs, bool thin)
{
	struct lun_group g = h_group(name, first, 1, nblocks * bs);

	g.block_size = bs;
	g.thin = thin;
	g.lbprz = thin;
	g.max_xfer_blocks = MAX_XFER_THIN;
	g.max_unmap_blocks = thin ? MAX_UNMAP_BLOCKS : 0;
	g.max_unmap_desc = thin ? MAX_UNMAP_DESC : 0;
	g.max_ws_blocks = MAX_WS;
	return g;
}

static void add_groups(struct harness *h, const struct lun_group *g,
		       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		h_add_group(h, &g[i]);
		h_clear_ua(h, g[i].first);
	}
}

/* The harness over another store than its default mem store. */
static struct harness *h_on_store(struct store *s)
{
	struct lun_table_params p = {.max_luns = 16, .store = s};
	struct harness *h = h_new(16);

	lun_table_destroy(h->luns);
	store_destroy(h->store);
	h->store = s;
	assert_int_equal(lun_table_create(&h->luns, &p), 0);
	h->tgt.luns = h->luns;
	return h;
}

static int setup_std(void **state)
{
	struct lun_group g[6];
	struct harness *h = h_new(16);

	g[0] = group("thin", L_THIN, THIN_BLOCKS, 512, true);
	g[0].phys_exp = 3;
	g[1] = group("thick", L_THICK, THICK_BLOCKS, 4096, false);
	g[1].max_xfer_blocks = MAX_XFER_THICK;
	g[2] = group("huge", L_HUGE, HUGE_BLOCKS, 512, true);
	g[3] = group("small", L_SMALL, SMALL_BLOCKS, 512, true);
	g[4] = group("gpt", L_GPT, THIN_BLOCKS, 512, true);
	g[4].ptable = PTABLE_GPT;
	g[4].nparts = 1;
	g[5] = group("wt", L_WT, THIN_BLOCKS, 512, true);
	g[5].mode_default = 0;
	add_groups(h, g, 6);
	*state = h;
	return 0;
}

/* A mem store that holds 8 chunks of 4 KiB. */
static int setup_limited(void **state)
{
	struct store_mem_params mp = {.chunk_size = 4096, .mem_limit = 32768};
	struct lun_group g = group("thin", 0, THIN_BLOCKS, 512, true);
	struct store *s;
	struct harness *h;

	assert_int_equal(store_mem_create(&s, &mp), 0);
	h = h_on_store(s);
	add_groups(h, &g, 1);
	*state = h;
	return 0;
}

static char file_dir[64];

/* A file store: LUN 0 with the write cache on, LUN 1 with it off. */
static int setup_file(void **state)
{
	struct store_file_params fp = {0};
	struct lun_group g[2];
	struct store *s;
	struct harness *h;

	snprintf(file_dir, sizeof(file_dir), "/tmp/test-scsi-sbc.XXXXXX");
	assert_non_null(mkdtemp(file_dir));
	fp.dir = file_dir;
	assert_int_equal(store_file_create(&s, &fp), 0);
	h = h_on_store(s);
	g[0] = group("wb", 0, 4096, 512, true);
	g[1] = group("wt", 1, 4096, 512, true);
	g[1].mode_default = 0;
	add_groups(h, g, 2);
	*state = h;
	return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int type,
		    struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	h_free(*state);
	if (file_dir[0]) {
		nftw(file_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		file_dir[0] = 0;
	}
	return 0;
}

/* Runs one command with the data buffer split into @niov iovecs. */
static enum scsi_disposition exec_iov(struct harness *h, uint32_t lun,
				      const uint8_t *cdb, enum scsi_dir dir,
				      void *buf, size_t len, unsigned int niov)
{
	struct iovec iov[256];
	size_t per = niov ? (len + niov - 1) / niov : 0, off = 0;
	unsigned int i = 0;

	assert_true(niov <= 256);
	while (off < len) {
		iov[i].iov_base = (uint8_t *)buf + off;
		iov[i].iov_len = len - off < per ? len - off : per;
		off += iov[i].iov_len;
		i++;
	}
	h_exec_iov(h, lun, cdb, (size_t)scsi_cdb_len(cdb[0]), dir, iov, i,
		   (uint32_t)len);
	return h->disp;
}

static enum scsi_disposition exec(struct harness *h, uint32_t lun,
				  const uint8_t *cdb, enum scsi_dir dir,
				  void *buf, size_t len)
{
	h_exec(h, lun, cdb, (size_t)scsi_cdb_len(cdb[0]), dir, buf, len);
	return h->disp;
}

static uint64_t be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

#define expect_lba_range(h) h_expect_sense((h), SK_ILLEGAL_REQUEST, 0x21, 0x00)
#define expect_info(h, key, asc, info)                                         \
	do {                                                                   \
		h_expect_sense((h), (key), (asc), 0x00);                       \
		h_expect_info((h), (info));                                    \
	} while (0)

/* ---- CDBs ------------------------------------------------------------- */

#define READ_6 0x08
#define WRITE_6 0x0a
#define READ_CAPACITY_10 0x25
#define READ_10 0x28
#define WRITE_10 0x2a
#define WRITE_VERIFY_10 0x2e
#define VERIFY_10 0x2f
#define SYNC_CACHE_10 0x35
#define WRITE_SAME_10 0x41
#define UNMAP 0x42
#define READ_16 0x88
#define COMPARE_AND_WRITE 0x89
#define WRITE_16 0x8a
#define WRITE_VERIFY_16 0x8e
#define VERIFY_16 0x8f
#define SYNC_CACHE_16 0x91
#define WRITE_SAME_16 0x93
#define SAI_16 0x9e
#define READ_12 0xa8
#define WRITE_12 0xaa
#define WRITE_VERIFY_12 0xae
#define VERIFY_12 0xaf

static void put(uint8_t *p, uint64_t v, unsigned int n)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static void cdb6(uint8_t *cdb, uint8_t op, uint32_t lba, uint8_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	put(cdb + 1, lba, 3);
	cdb[4] = n;
}

static void cdb10(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba,
		  uint16_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = b1;
	put(cdb + 2, lba, 4);
	put(cdb + 7, n, 2);
}

static void cdb12(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba,
		  uint32_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = b1;
	put(cdb + 2, lba, 4);
	put(cdb + 6, n, 4);
}

static void cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba,
		  uint32_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = b1;
	put(cdb + 2, lba, 8);
	put(cdb + 10, n, 4);
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 9));
}

static void write16(struct harness *h, uint32_t lun, uint64_t lba, uint32_t n,
		    uint32_t bs, const void *buf)
{
	uint8_t cdb[16];

	cdb16(cdb, WRITE_16, 0, lba, n);
	assert_int_equal(
		exec(h, lun, cdb, SCSI_DIR_WRITE, (void *)buf, (size_t)n * bs),
		SCSI_DONE);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, (size_t)n * bs);
}

static void read16(struct harness *h, uint32_t lun, uint64_t lba, uint32_t n,
		   uint32_t bs, void *buf)
{
	uint8_t cdb[16];

	cdb16(cdb, READ_16, 0, lba, n);
	assert_int_equal(exec(h, lun, cdb, SCSI_DIR_READ, buf, (size_t)n * bs),
			 SCSI_DONE);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, (size_t)n * bs);
}

static bool is_zero(const uint8_t *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* ---- READ and WRITE --------------------------------------------------- */

static void test_write10_read16(void **state)
{
	struct harness *h = *state;
	uint8_t out[8 * 512], in[8 * 512], cdb[16];

	fill(out, sizeof(out), 1);
	cdb10(cdb, WRITE_10, 0, 100, 8);
	assert_int_equal(exec(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out)),
			 SCSI_DONE);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(out));

	memset(in, 0xee, sizeof(in));
	read16(h, L_THIN, 100, 8, 512, in);
	assert_memory_equal(in, out, sizeof(out));

	/* neighbours untouched: never-written blocks read as zeros */
	read16(h, L_THIN, 99, 1, 512, in);
	assert_true(is_zero(in, 512));
	read16(h, L_THIN, 108, 1, 512, in);
	assert_true(is_zero(in, 512));
}

static void test_read12_write12(void **state)
{
	struct harness *h = *state;
	uint8_t out[3 * 4096], in[3 * 4096], cdb[16];

	fill(out, sizeof(out), 2);
	cdb12(cdb, WRITE_12, 0, THICK_BLOCKS - 3, 3);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb12(cdb, READ_12, 0, THICK_BLOCKS - 3, 3);
	exec(h, L_THICK, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(in));
	assert_memory_equal(in, out, sizeof(out));
}

/* READ (6) and WRITE (6): length 0 is 256 blocks; the LBA is 21 bits. */
static void test_rw6(void **state)
{
	struct harness *h = *state;
	static uint8_t out[256 * 512], in[256 * 512];
	uint8_t cdb[16];

	fill(out, sizeof(out), 3);
	cdb6(cdb, WRITE_6, 0x1f0000, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	expect_lba_range(h); /* 0x1f0000 is past 131072 blocks */

	cdb6(cdb, WRITE_6, 0x1000, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(out));

	memset(in, 0, sizeof(in));
	cdb6(cdb, READ_6, 0x1000, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(in));
	assert_memory_equal(in, out, sizeof(out));

	/* and 16 blocks read back by READ (16) */
	read16(h, L_THIN, 0x1000 + 240, 16, 512, in);
	assert_memory_equal(in, out + 240 * 512, 16 * 512);
}

/* Zero blocks: no data, GOOD, even at the LBA just past the end. */
static void test_zero_length(void **state)
{
	struct harness *h = *state;
	uint8_t cdb[16];

	cdb10(cdb, READ_10, 0, 5, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 0);
	cdb16(cdb, WRITE_16, 0, THIN_BLOCKS, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb16(cdb, READ_16, 0, THIN_BLOCKS + 1, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_lba_range(h);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 0);
}

static void test_lba_out_of_range(void **state)
{
	struct harness *h = *state;
	uint8_t buf[2 * 4096], cdb[16];

	memset(buf, 0x5a, sizeof(buf));
	cdb10(cdb, READ_10, 0, THIN_BLOCKS - 1, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 1024);
	expect_lba_range(h);
	assert_int_equal(h->cmd.data_len, 0);

	/* the last block itself is fine */
	cdb10(cdb, READ_10, 0, THIN_BLOCKS - 1, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 512);
	assert_int_equal(h->cmd.status, SCSI_GOOD);

	/* lba + length wraps around 2^64 */
	cdb16(cdb, READ_16, 0, UINT64_MAX, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 1024);
	expect_lba_range(h);
	cdb16(cdb, WRITE_16, 0, UINT64_MAX, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, 1024);
	expect_lba_range(h);
	cdb16(cdb, WRITE_16, 0, UINT64_MAX - 1, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, 1024);
	expect_lba_range(h);
	cdb12(cdb, WRITE_12, 0, THICK_BLOCKS - 1, 2);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	expect_lba_range(h);
	cdb6(cdb, READ_6, SMALL_BLOCKS - 1, 2);
	exec(h, L_SMALL, cdb, SCSI_DIR_READ, buf, 1024);
	expect_lba_range(h);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 0);
	assert_int_equal(store_lun_bytes(h->store, L_THICK), 0);
}

/* Over MAXIMUM TRANSFER LENGTH: INVALID FIELD IN CDB at the length. */
static void test_transfer_length_limit(void **state)
{
	struct harness *h = *state;
	static uint8_t buf[(MAX_XFER_THIN + 1) * 512];
	uint8_t cdb[16];

	cdb10(cdb, READ_10, 0, 0, MAX_XFER_THIN + 1);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 7, -1);
	cdb16(cdb, READ_16, 0, 0, MAX_XFER_THIN + 1);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 10, -1);
	cdb12(cdb, WRITE_12, 0, 0, MAX_XFER_THIN + 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 6, -1);
	/* READ (6) of 256 blocks against a limit of 256 passes, 257 can't */
	cdb6(cdb, READ_6, 0, 0);
	exec(h, L_THICK, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb10(cdb, WRITE_10, 0, 0, MAX_XFER_THICK + 1);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 7, -1);
	/* exactly the limit is fine */
	cdb16(cdb, READ_16, 0, 0, MAX_XFER_THIN);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, MAX_XFER_THIN * 512);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, MAX_XFER_THIN * 512);
}

/* No protection information: RDPROTECT/WRPROTECT/VRPROTECT must be 0. */
static void test_protect_fields(void **state)
{
	static const uint8_t ops[] = {
		READ_10,	 READ_12,	  READ_16,   WRITE_10,
		WRITE_12,	 WRITE_16,	  VERIFY_10, VERIFY_16,
		WRITE_VERIFY_10, WRITE_VERIFY_16,
	};
	struct harness *h = *state;
	uint8_t buf[512], cdb[16];
	unsigned int i;

	memset(buf, 1, sizeof(buf));
	for (i = 0; i < sizeof(ops); i++) {
		uint8_t op = ops[i];
		bool w = op == WRITE_10 || op == WRITE_12 || op == WRITE_16 ||
			 op == WRITE_VERIFY_10 || op == WRITE_VERIFY_16;

		if (op == READ_12 || op == WRITE_12)
			cdb12(cdb, op, 0x80, 0, 1);
		else if (op >> 5 == 4)
			cdb16(cdb, op, 0x80, 0, 1);
		else
			cdb10(cdb, op, 0x80, 0, 1);
		exec(h, L_THIN, cdb, w ? SCSI_DIR_WRITE : SCSI_DIR_READ, buf,
		     sizeof(buf));
		h_expect_invalid_cdb(h, 1, 7);
	}
	cdb16(cdb, COMPARE_AND_WRITE, 0x80, 0, 0);
	cdb[13] = 1;
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 1, 7);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 0);
}

/* DPO and FUA are accepted on every READ and WRITE. */
static void test_dpo_fua_accepted(void **state)
{
	struct harness *h = *state;
	uint8_t out[512], in[512], cdb[16];

	fill(out, sizeof(out), 4);
	cdb16(cdb, WRITE_16, 0x18, 7, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb10(cdb, READ_10, 0x18, 7, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_memory_equal(in, out, sizeof(out));
	cdb12(cdb, READ_12, 0x08, 7, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
}

/* A Data-In buffer shorter than the command gets what fits. */
static void test_read_short_buffer(void **state)
{
	struct harness *h = *state;
	uint8_t out[2 * 512], in[2 * 512], cdb[16];

	fill(out, sizeof(out), 5);
	write16(h, L_THIN, 40, 2, 512, out);
	memset(in, 0xee, sizeof(in));
	cdb10(cdb, READ_10, 0, 40, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, in, 512 + 100);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 612);
	assert_memory_equal(in, out, 612);
	assert_int_equal(in[612], 0xee);
}

/* A Data-Out buffer shorter than the command: only its whole blocks land. */
static void test_write_short_buffer(void **state)
{
	struct harness *h = *state;
	uint8_t a[2 * 512], b[2 * 512], in[2 * 512], cdb[16];

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	write16(h, L_THIN, 60, 2, 512, a);
	cdb10(cdb, WRITE_10, 0, 60, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, b, 512);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 512);
	read16(h, L_THIN, 60, 2, 512, in);
	assert_memory_equal(in, b, 512);
	assert_memory_equal(in + 512, a, 512);

	/* a partial block is not written at all */
	cdb10(cdb, WRITE_10, 0, 61, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, b, 200);
	read16(h, L_THIN, 61, 1, 512, in);
	assert_memory_equal(in, a, 512);
}

/* Many small iovecs (the bounce path) and odd-sized ones. */
static void test_fragmented_iovecs(void **state)
{
	struct harness *h = *state;
	static uint8_t out[200 * 512], in[200 * 512];
	uint8_t cdb[16];

	fill(out, sizeof(out), 6);
	cdb16(cdb, WRITE_16, 0, 1000, 200);
	exec_iov(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out), 200);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(out));
	memset(in, 0, sizeof(in));
	cdb16(cdb, READ_16, 0, 1000, 200);
	exec_iov(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in), 256);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(in));
	assert_memory_equal(in, out, sizeof(out));
	/* 3 iovecs not on block boundaries */
	memset(in, 0, sizeof(in));
	exec_iov(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in), 3);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_memory_equal(in, out, sizeof(out));
}

/* FUA and write-through on the file store: each costs a sync. */
/*
 * Takes every free descriptor (the soft limit lowered to what is open plus
 * a few, so this costs a few dup()s). Return: how many were taken, in fds.
 */
static int fds_exhaust(int *fds, int max, struct rlimit *saved)
{
	struct rlimit rl;
	int n = 0, hi = 0, fd;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, saved), 0);
	fd = dup(0);
	assert_true(fd >= 0);
	hi = fd;
	close(fd);
	rl = *saved;
	rl.rlim_cur = (rlim_t)hi + 8;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while (n < max && (fd = dup(0)) >= 0)
		fds[n++] = fd;
	assert_true(n < max);
	return n;
}

static void fds_release(int *fds, int n, const struct rlimit *saved)
{
	while (n)
		close(fds[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, saved), 0);
}

/*
 * The process is out of descriptors (a connection flood) and a LUN's file
 * is not open: the write is answered BUSY, which the initiator retries, not
 * MEDIUM ERROR; with another LUN's file idle in the cache, that one is
 * closed and the write succeeds.
 */
static void test_file_store_out_of_fds(void **state)
{
	struct harness *h = *state;
	struct store_stats st;
	struct rlimit saved;
	uint8_t out[512], in[512], cdb[16];
	int fds[64], n;

	fill(out, sizeof(out), 9);
	cdb10(cdb, WRITE_10, 0, 5, 1);
	n = fds_exhaust(fds, 64, &saved);
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	fds_release(fds, n, &saved);
	assert_int_equal(h->cmd.status, SCSI_BUSY);
	assert_int_equal(h->cmd.sense_len, 0);
	store_get_stats(h->store, &st);
	assert_int_equal(st.io_errors, 0);

	/* descriptors back: the retry works */
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);

	/* LUN 0's file is open and idle: LUN 1 takes its descriptor */
	n = fds_exhaust(fds, 64, &saved);
	exec(h, 1, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	fds_release(fds, n, &saved);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb10(cdb, READ_10, 0, 5, 1);
	exec(h, 1, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_memory_equal(in, out, sizeof(out));
	exec(h, 0, cdb, SCSI_DIR_READ, in, sizeof(in));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_memory_equal(in, out, sizeof(out));
}

static void test_fua_file_store(void **state)
{
	struct harness *h = *state;
	struct store_stats st;
	uint64_t syncs, flushes;
	uint8_t out[512], in[512], cdb[16];

	fill(out, sizeof(out), 7);
	cdb10(cdb, WRITE_10, 0, 3, 1);
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	store_get_stats(h->store, &st);
	syncs = st.syncs;

	/* write-back cache, no FUA: no sync */
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	store_get_stats(h->store, &st);
	assert_int_equal(st.syncs, syncs);

	/* FUA: durable before completion */
	cdb10(cdb, WRITE_10, 0x08, 3, 1);
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	store_get_stats(h->store, &st);
	assert_true(st.syncs > syncs);
	syncs = st.syncs;

	/* WCE off: every write is durable */
	cdb10(cdb, WRITE_10, 0, 3, 1);
	exec(h, 1, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	store_get_stats(h->store, &st);
	assert_true(st.syncs > syncs);

	/* SYNCHRONIZE CACHE flushes */
	flushes = st.flushes;
	cdb10(cdb, SYNC_CACHE_10, 0x02, 0, 0);
	exec(h, 0, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	store_get_stats(h->store, &st);
	assert_true(st.flushes > flushes);

	read16(h, 0, 3, 1, 512, in);
	assert_memory_equal(in, out, sizeof(out));
}

/* ---- VERIFY and WRITE AND VERIFY -------------------------------------- */

static void test_verify(void **state)
{
	struct harness *h = *state;
	uint8_t out[4 * 512], cmp[4 * 512], cdb[16];

	fill(out, sizeof(out), 8);
	write16(h, L_THIN, 500, 4, 512, out);

	/* BYTCHK 0: medium verification, no data */
	cdb10(cdb, VERIFY_10, 0, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb10(cdb, VERIFY_10, 0, THIN_BLOCKS - 2, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_lba_range(h);

	/* BYTCHK 1: equal */
	memcpy(cmp, out, sizeof(cmp));
	cdb16(cdb, VERIFY_16, 0x02, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, cmp, sizeof(cmp));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb12(cdb, VERIFY_12, 0x02, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, cmp, sizeof(cmp));
	assert_int_equal(h->cmd.status, SCSI_GOOD);

	/* BYTCHK 1: byte 777 of the data differs */
	cmp[777] ^= 0x40;
	cdb10(cdb, VERIFY_10, 0x02, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, cmp, sizeof(cmp));
	expect_info(h, SK_MISCOMPARE, 0x1d, 777);
	/* a Data-Out shorter than the verification length */
	cdb10(cdb, VERIFY_10, 0x02, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, cmp, 512);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x0e, 0x03);

	/* BYTCHK 2 is reserved */
	cdb10(cdb, VERIFY_10, 0x04, 500, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, cmp, sizeof(cmp));
	h_expect_invalid_cdb(h, 1, 2);
}

/* BYTCHK 11b: one block compared with every block of the range. */
static void test_verify_bytchk3(void **state)
{
	struct harness *h = *state;
	uint8_t blk[512], out[300 * 512], cdb[16];
	unsigned int i;

	fill(blk, sizeof(blk), 9);
	for (i = 0; i < 300; i++)
		memcpy(out + i * 512, blk, 512);
	write16(h, L_THIN, 2000, 300, 512, out);
	cdb16(cdb, VERIFY_16, 0x06, 2000, 300);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, sizeof(blk));
	assert_int_equal(h->cmd.status, SCSI_GOOD);

	/* block 250 (past one buffer's worth) differs at byte 3 */
	out[250 * 512 + 3] ^= 1;
	write16(h, L_THIN, 2250, 1, 512, out + 250 * 512);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, sizeof(blk));
	expect_info(h, SK_MISCOMPARE, 0x1d, 250 * 512 + 3);
}

static void test_write_verify(void **state)
{
	static const uint8_t ops[] = {
		WRITE_VERIFY_10,
		WRITE_VERIFY_12,
		WRITE_VERIFY_16,
	};
	struct harness *h = *state;
	uint8_t out[2 * 4096], in[2 * 4096], cdb[16];
	unsigned int i;

	for (i = 0; i < sizeof(ops); i++) {
		fill(out, sizeof(out), 10 + i);
		if (ops[i] == WRITE_VERIFY_10)
			cdb10(cdb, ops[i], 0x02, 10 * i, 2);
		else if (ops[i] == WRITE_VERIFY_12)
			cdb12(cdb, ops[i], 0x00, 10 * i, 2);
		else
			cdb16(cdb, ops[i], 0x02, 10 * i, 2);
		exec(h, L_THICK, cdb, SCSI_DIR_WRITE, out, sizeof(out));
		assert_int_equal(h->cmd.status, SCSI_GOOD);
		assert_int_equal(h->cmd.data_len, sizeof(out));
		read16(h, L_THICK, 10 * i, 2, 4096, in);
		assert_memory_equal(in, out, sizeof(out));
	}
	cdb10(cdb, WRITE_VERIFY_10, 0x06, 100, 2);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	h_expect_invalid_cdb(h, 1, 2);
	cdb16(cdb, WRITE_VERIFY_16, 0, THICK_BLOCKS - 1, 2);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	expect_lba_range(h);
}

/* ---- WRITE SAME ------------------------------------------------------- */

static void test_write_same_pattern(void **state)
{
	struct harness *h = *state;
	static uint8_t in[1000 * 512];
	uint8_t blk[512], cdb[16];
	unsigned int i;

	fill(blk, sizeof(blk), 11);
	cdb10(cdb, WRITE_SAME_10, 0, 3000, 1000);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, sizeof(blk));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 512);
	read16(h, L_THIN, 3000, 1000, 512, in);
	for (i = 0; i < 1000; i++)
		assert_memory_equal(in + i * 512, blk, 512);
	read16(h, L_THIN, 4000, 1, 512, in);
	assert_true(is_zero(in, 512));

	/* WRITE SAME (16), 4096-byte blocks, thick */
	cdb16(cdb, WRITE_SAME_16, 0, 20, 37);
	{
		uint8_t b4[4096], in4[37 * 4096];

		fill(b4, sizeof(b4), 12);
		exec(h, L_THICK, cdb, SCSI_DIR_WRITE, b4, sizeof(b4));
		assert_int_equal(h->cmd.status, SCSI_GOOD);
		read16(h, L_THICK, 20, 37, 4096, in4);
		for (i = 0; i < 37; i++)
			assert_memory_equal(in4 + i * 4096, b4, 4096);
	}
}

/* NUMBER OF LOGICAL BLOCKS 0: to the last LBA. */
static void test_write_same_to_end(void **state)
{
	struct harness *h = *state;
	uint8_t blk[512], in[8 * 512], cdb[16];
	unsigned int i;

	fill(blk, sizeof(blk), 13);
	cdb10(cdb, WRITE_SAME_10, 0, SMALL_BLOCKS - 5, 0);
	exec(h, L_SMALL, cdb, SCSI_DIR_WRITE, blk, sizeof(blk));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	read16(h, L_SMALL, SMALL_BLOCKS - 8, 8, 512, in);
	assert_true(is_zero(in, 3 * 512));
	for (i = 3; i < 8; i++)
		assert_memory_equal(in + i * 512, blk, 512);

	cdb16(cdb, WRITE_SAME_16, 0, SMALL_BLOCKS, 0);
	exec(h, L_SMALL, cdb, SCSI_DIR_WRITE, blk, sizeof(blk));
	expect_lba_range(h);
}

static void test_write_same_rejects(void **state)
{
	struct harness *h = *state;
	uint8_t blk[4096], cdb[16];

	memset(blk, 0, sizeof(blk));
	/* UNMAP on a fully provisioned LUN */
	cdb16(cdb, WRITE_SAME_16, 0x08, 0, 8);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, blk, 4096);
	h_expect_invalid_cdb(h, 1, 3);
	/* ANCHOR is not supported */
	cdb16(cdb, WRITE_SAME_16, 0x18, 0, 8);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, 512);
	h_expect_invalid_cdb(h, 1, 4);
	/* over MAXIMUM WRITE SAME LENGTH */
	cdb16(cdb, WRITE_SAME_16, 0, 0, MAX_WS + 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, 512);
	h_expect_invalid_cdb(h, 10, -1);
	/* WRPROTECT */
	cdb10(cdb, WRITE_SAME_10, 0x80, 0, 8);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, 512);
	h_expect_invalid_cdb(h, 1, 7);
	/* out of range, and lba + n wrapping */
	cdb10(cdb, WRITE_SAME_10, 0, THIN_BLOCKS - 4, 8);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, 512);
	expect_lba_range(h);
	cdb16(cdb, WRITE_SAME_16, 0, UINT64_MAX - 3, 8);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, blk, 512);
	expect_lba_range(h);
	/* no data block */
	cdb10(cdb, WRITE_SAME_10, 0, 0, 8);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x0e, 0x03);
}

/* UNMAP bit with a zero block deallocates; NDOB needs no Data-Out. */
static void test_write_same_unmap_ndob(void **state)
{
	struct harness *h = *state;
	static uint8_t out[64 * 512], in[64 * 512];
	uint8_t zero[512] = {0}, cdb[16];

	fill(out, sizeof(out), 14);
	write16(h, L_THIN, 0, 64, 512, out);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 64 * 512);

	cdb16(cdb, WRITE_SAME_16, 0x08, 0, 32);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, zero, sizeof(zero));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 32 * 512);
	read16(h, L_THIN, 0, 64, 512, in);
	assert_true(is_zero(in, 32 * 512));
	assert_memory_equal(in + 32 * 512, out + 32 * 512, 32 * 512);

	/* NDOB + UNMAP: no data at all */
	cdb16(cdb, WRITE_SAME_16, 0x09, 32, 16);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 0);
	assert_int_equal(store_lun_bytes(h->store, L_THIN), 16 * 512);

	/* NDOB without UNMAP writes zeros */
	cdb16(cdb, WRITE_SAME_16, 0x01, 48, 16);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	read16(h, L_THIN, 0, 64, 512, in);
	assert_true(is_zero(in, sizeof(in)));

	/* a zero block without UNMAP on thick: needs its Data-Out */
	fill(out, 4096, 15);
	write16(h, L_THICK, 5, 1, 4096, out);
	cdb10(cdb, WRITE_SAME_10, 0, 5, 1);
	exec(h, L_THICK, cdb, SCSI_DIR_WRITE, zero, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x0e, 0x03);
	{
		uint8_t z4[4096] = {0};

		exec(h, L_THICK, cdb, SCSI_DIR_WRITE, z4, sizeof(z4));
		assert_int_equal(h->cmd.status, SCSI_GOOD);
		read16(h, L_THICK, 5, 1, 4096, in);
		assert_true(is_zero(in, 4096));
	}
}

/* ---- UNMAP and GET LBA STATUS ----------------------------------------- */

struct lba_desc {
	uint64_t lba;
	uint32_t count;
	uint8_t status;
};

/* GET LBA STATUS; returns the descriptor count in the data. */
static unsigned int get_lba_status(struct harness *h, uint32_t lun,
				   uint64_t lba, uint32_t alloc,
				   struct lba_desc *d, unsigned int max,
				   uint32_t *param_len)
{
	uint8_t buf[8 + 16 * 64], cdb[16];
	unsigned int i, n;

	assert_true(alloc <= sizeof(buf));
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SAI_16;
	cdb[1] = 0x12;
	put(cdb + 2, lba, 8);
	put(cdb + 10, alloc, 4);
	exec(h, lun, cdb, SCSI_DIR_READ, buf, alloc);
	if (h->cmd.status != SCSI_GOOD)
		return 0;
	assert_true(h->cmd.data_len >= 8 || h->cmd.data_len == alloc);
	*param_len = (uint32_t)be(buf, 4);
	n = h->cmd.data_len < 8 ? 0 : (h->cmd.data_len - 8) / 16;
	for (i = 0; i < n && i < max; i++) {
		d[i].lba = be(buf + 8 + 16 * i, 8);
		d[i].count = (uint32_t)be(buf + 16 + 16 * i, 4);
		d[i].status = buf[20 + 16 * i] & 0x0f;
	}
	return n;
}

static void unmap_cmd(struct harness *h, uint32_t lun, const uint64_t *lba,
		      const uint32_t *cnt, unsigned int n, uint8_t b1)
{
	uint8_t list[8 + 16 * 8], cdb[16];
	unsigned int i;

	assert_true(n <= 8);
	memset(list, 0, sizeof(list));
	put(list, 6 + 16 * n, 2);
	put(list + 2, 16 * n, 2);
	for (i = 0; i < n; i++) {
		put(list + 8 + 16 * i, lba[i], 8);
		put(list + 16 + 16 * i, cnt[i], 4);
	}
	cdb10(cdb, UNMAP, b1, 0, (uint16_t)(8 + 16 * n));
	exec(h, lun, cdb, SCSI_DIR_WRITE, list, 8 + 16 * n);
}

static void test_unmap_and_lba_status(void **state)
{
	struct harness *h = *state;
	static uint8_t out[72 * 512], in[72 * 512];
	struct lba_desc d[8];
	uint32_t plen;
	unsigned int n;

	/* blocks 0..15 and 64..71 written (4 KiB chunks: 8 blocks each) */
	fill(out, sizeof(out), 16);
	write16(h, L_THIN, 0, 16, 512, out);
	write16(h, L_THIN, 64, 8, 512, out + 64 * 512);
	n = get_lba_status(h, L_THIN, 0, 8 + 16 * 8, d, 8, &plen);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(n, 4);
	assert_int_equal(plen, 4 + 16 * 4);
	assert_int_equal(d[0].lba, 0);
	assert_int_equal(d[0].count, 16);
	assert_int_equal(d[0].status, 0);
	assert_int_equal(d[1].lba, 16);
	assert_int_equal(d[1].count, 48);
	assert_int_equal(d[1].status, 1);
	assert_int_equal(d[2].lba, 64);
	assert_int_equal(d[2].count, 8);
	assert_int_equal(d[2].status, 0);
	assert_int_equal(d[3].lba, 72);
	assert_int_equal(d[3].count, THIN_BLOCKS - 72);
	assert_int_equal(d[3].status, 1);

	/* unmap 8..15 and 64..71 */
	{
		uint64_t lba[2] = {8, 64};
		uint32_t cnt[2] = {8, 8};

		unmap_cmd(h, L_THIN, lba, cnt, 2, 0);
		assert_int_equal(h->cmd.status, SCSI_GOOD);
	}
	n = get_lba_status(h, L_THIN, 0, 8 + 16 * 8, d, 8, &plen);
	assert_int_equal(n, 2);
	assert_int_equal(d[0].lba, 0);
	assert_int_equal(d[0].count, 8);
	assert_int_equal(d[0].status, 0);
	assert_int_equal(d[1].lba, 8);
	assert_int_equal(d[1].count, THIN_BLOCKS - 8);
	assert_int_equal(d[1].status, 1);
	read16(h, L_THIN, 0, 72, 512, in);
	assert_memory_equal(in, out, 8 * 512);
	assert_true(is_zero(in + 8 * 512, 64 * 512));

	/* then written again: mapped */
	write16(h, L_THIN, 8, 8, 512, out);
	n = get_lba_status(h, L_THIN, 4, 8 + 16 * 8, d, 8, &plen);
	assert_int_equal(n, 2);
	assert_int_equal(d[0].lba, 4);
	assert_int_equal(d[0].count, 12);
	assert_int_equal(d[0].status, 0);

	/* an allocation length of one descriptor gets one */
	n = get_lba_status(h, L_THIN, 0, 24, d, 8, &plen);
	assert_int_equal(n, 1);
	assert_int_equal(plen, 20);
	/* the last block; past the end */
	n = get_lba_status(h, L_THIN, THIN_BLOCKS - 1, 8 + 16 * 4, d, 8, &plen);
	assert_int_equal(n, 1);
	assert_int_equal(d[0].lba, THIN_BLOCKS - 1);
	assert_int_equal(d[0].count, 1);
	get_lba_status(h, L_THIN, THIN_BLOCKS, 8 + 16 * 4, d, 8, &plen);
	expect_lba_range(h);
}

/* A fully provisioned LUN is mapped everywhere, in 32-bit runs. */
static void test_lba_status_thick_and_merge(void **state)
{
	struct harness *h = *state;
	struct lba_desc d[4];
	uint32_t plen;
	unsigned int n;

	n = get_lba_status(h, L_THICK, 10, 8 + 16 * 4, d, 4, &plen);
	assert_int_equal(n, 1);
	assert_int_equal(d[0].lba, 10);
	assert_int_equal(d[0].count, THICK_BLOCKS - 10);
	assert_int_equal(d[0].status, 0);

	/*
	 * The synthetic GPT's first blocks (MBR, header, entries) are mapped
	 * one block at a time underneath; they come back as one descriptor.
	 */
	n = get_lba_status(h, L_GPT, 0, 8 + 16 * 4, d, 4, &plen);
	assert_true(n >= 2);
	assert_int_equal(d[0].lba, 0);
	assert_true(d[0].count >= 2);
	assert_int_equal(d[0].status, 0);
	assert_int_equal(d[1].lba, d[0].count);
	assert_int_equal(d[1].status, 1);

	/* a deallocated run longer than 2^32 - 1 blocks is split */
	n = get_lba_status(h, L_HUGE, 0, 8 + 16 * 4, d, 4, &plen);
	assert_int_equal(n, 3);
	assert_int_equal(d[0].count, UINT32_MAX);
	assert_int_equal(d[0].status, 1);
	assert_int_equal(d[1].lba, UINT32_MAX);
	assert_int_equal(d[1].count, UINT32_MAX);
	assert_int_equal(d[1].status, 1);
	assert_int_equal(d[2].lba, 2ull * UINT32_MAX);
	assert_int_equal(d[2].count, HUGE_BLOCKS - 2ull * UINT32_MAX);
}

static void test_unmap_rejects(void **state)
{
	struct harness *h = *state;
	uint8_t out[8 * 512], in[8 * 512], list[8 + 16 * 8], cdb[16];
	uint64_t lba[8] = {0, 10, 20, 30, 40};
	uint32_t cnt[8] = {1, 1, 1, 1, 1};

	fill(out, sizeof(out), 17);
	write16(h, L_THIN, 0, 8, 512, out);

	/* parameter list length 0: nothing, GOOD */
	cdb10(cdb, UNMAP, 0, 0, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	/* shorter than the header */
	memset(list, 0, sizeof(list));
	cdb10(cdb, UNMAP, 0, 0, 6);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, list, 6);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x1a, 0x00);
	/* more descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	unmap_cmd(h, L_THIN, lba, cnt, MAX_UNMAP_DESC + 1, 0);
	h_expect_invalid_param(h, 2, -1);
	/* more blocks in all than MAXIMUM UNMAP LBA COUNT: the second one */
	lba[0] = 0;
	cnt[0] = 60000;
	lba[1] = 60000;
	cnt[1] = 10000;
	unmap_cmd(h, L_THIN, lba, cnt, 2, 0);
	h_expect_invalid_param(h, 8 + 16 + 8, -1);
	/* a range past the end: nothing is unmapped, not even the first */
	lba[0] = 0;
	cnt[0] = 8;
	lba[1] = THIN_BLOCKS - 1;
	cnt[1] = 2;
	unmap_cmd(h, L_THIN, lba, cnt, 2, 0);
	expect_lba_range(h);
	lba[1] = UINT64_MAX;
	cnt[1] = 1;
	unmap_cmd(h, L_THIN, lba, cnt, 2, 0);
	expect_lba_range(h);
	read16(h, L_THIN, 0, 8, 512, in);
	assert_memory_equal(in, out, sizeof(out));
	/* ANCHOR */
	unmap_cmd(h, L_THIN, lba, cnt, 1, 0x01);
	h_expect_invalid_cdb(h, 1, 0);
	/* no logical block provisioning: no UNMAP command */
	unmap_cmd(h, L_THICK, lba, cnt, 1, 0);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x20, 0x00);

	/* a descriptor data length that is not a multiple of 16 */
	memset(list, 0, sizeof(list));
	put(list, 6 + 20, 2);
	put(list + 2, 20, 2);
	put(list + 8, 0, 8);
	put(list + 16, 4, 4);
	cdb10(cdb, UNMAP, 0, 0, 28);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, list, 28);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	read16(h, L_THIN, 0, 8, 512, in);
	assert_true(is_zero(in, 4 * 512));
	assert_memory_equal(in + 4 * 512, out + 4 * 512, 4 * 512);
	/* a zero count is no error and does nothing */
	lba[0] = 4;
	cnt[0] = 0;
	unmap_cmd(h, L_THIN, lba, cnt, 1, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	read16(h, L_THIN, 4, 4, 512, in);
	assert_memory_equal(in, out + 4 * 512, 4 * 512);
}

/* ---- COMPARE AND WRITE ------------------------------------------------ */

static void caw_cdb(uint8_t *cdb, uint64_t lba, uint8_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = COMPARE_AND_WRITE;
	put(cdb + 2, lba, 8);
	cdb[13] = n;
}

static void test_compare_and_write(void **state)
{
	struct harness *h = *state;
	uint8_t old[512], buf[1024], in[512], cdb[16];

	fill(old, sizeof(old), 18);
	write16(h, L_THIN, 77, 1, 512, old);
	memcpy(buf, old, 512);
	fill(buf + 512, 512, 19);
	caw_cdb(cdb, 77, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 1024);
	read16(h, L_THIN, 77, 1, 512, in);
	assert_memory_equal(in, buf + 512, 512);

	/* the medium now holds the new data: comparing with old fails at the
	 * first byte where old and new differ */
	memcpy(buf, old, 512);
	memcpy(buf, in, 100); /* the first 100 bytes match the medium */
	buf[100] = (uint8_t)(in[100] ^ 0xff);
	fill(buf + 512, 512, 20);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	expect_info(h, SK_MISCOMPARE, 0x1d, 100);
	read16(h, L_THIN, 77, 1, 512, old);
	assert_memory_equal(old, in, 512);

	/* more than MAXIMUM COMPARE AND WRITE LENGTH (1) */
	caw_cdb(cdb, 77, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 13, -1);
	/* zero blocks: nothing */
	caw_cdb(cdb, 77, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	/* past the end */
	caw_cdb(cdb, THIN_BLOCKS, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	expect_lba_range(h);
	/* a Data-Out with only the verify half */
	caw_cdb(cdb, 77, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, 512);
	h_expect_sense(h, SK_ILLEGAL_REQUEST, 0x0e, 0x03);
}

#define CAW_THREADS 4
#define CAW_ROUNDS 5000

struct caw_arg {
	struct harness *h;
	pthread_barrier_t *start;
	unsigned int retries;
};

/* Increments a counter in block 9 by read + COMPARE AND WRITE, retrying. */
static void *caw_worker(void *p)
{
	struct caw_arg *a = p;
	struct scsi_cmd cmd;
	uint8_t cur[512], buf[1024], cdb[16];
	struct iovec iov;
	unsigned int i;
	uint64_t v;

	pthread_barrier_wait(a->start);
	for (i = 0; i < CAW_ROUNDS; i++) {
		for (;;) {
			memset(&cmd, 0, sizeof(cmd));
			cdb16(cdb, READ_16, 0, 9, 1);
			iov.iov_base = cur;
			iov.iov_len = sizeof(cur);
			cmd.tgt = &a->h->tgt;
			cmd.lun = L_THIN;
			cmd.cdb = cdb;
			cmd.cdb_len = 16;
			cmd.dir = SCSI_DIR_READ;
			cmd.iov = &iov;
			cmd.iovcnt = 1;
			cmd.xfer_len = sizeof(cur);
			scsi_exec(&cmd);
			if (cmd.status != SCSI_GOOD)
				return (void *)1;
			memcpy(&v, cur, 8);
			memcpy(buf, cur, 512);
			memcpy(buf + 512, cur, 512);
			v++;
			memcpy(buf + 512, &v, 8);
			caw_cdb(cdb, 9, 1);
			iov.iov_base = buf;
			iov.iov_len = sizeof(buf);
			cmd.dir = SCSI_DIR_WRITE;
			cmd.xfer_len = sizeof(buf);
			scsi_exec(&cmd);
			if (cmd.status == SCSI_GOOD)
				break;
			if (cmd.status != SCSI_CHECK_CONDITION ||
			    (cmd.sense[2] & 0x0f) != SK_MISCOMPARE)
				return (void *)1;
			a->retries++;
		}
	}
	return NULL;
}

/* Concurrent read-compare-write increments lose no update. */
static void test_compare_and_write_atomic(void **state)
{
	struct harness *h = *state;
	pthread_t th[CAW_THREADS];
	struct caw_arg arg[CAW_THREADS];
	pthread_barrier_t start;
	uint8_t in[512];
	uint64_t v;
	void *ret;
	unsigned int i;

	assert_int_equal(pthread_barrier_init(&start, NULL, CAW_THREADS), 0);
	for (i = 0; i < CAW_THREADS; i++) {
		arg[i].h = h;
		arg[i].start = &start;
		arg[i].retries = 0;
		assert_int_equal(
			pthread_create(&th[i], NULL, caw_worker, &arg[i]), 0);
	}
	for (i = 0; i < CAW_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	pthread_barrier_destroy(&start);
	read16(h, L_THIN, 9, 1, 512, in);
	memcpy(&v, in, 8);
	assert_int_equal(v, CAW_THREADS * CAW_ROUNDS);
}

/* ---- SYNCHRONIZE CACHE, READ CAPACITY --------------------------------- */

/* PRE-FETCH checks its range and moves nothing; GROUP NUMBER is a hint. */
static void test_prefetch(void **state)
{
	struct harness *h = *state;
	uint8_t cdb[16];

	cdb10(cdb, 0x34, 0x02, 100, 8);
	cdb[6] = 3;
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 0);
	cdb16(cdb, 0x90, 0, THIN_BLOCKS - 1, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_lba_range(h);
	cdb16(cdb, 0x90, 0, THIN_BLOCKS, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	/* a bit outside the usage data */
	cdb10(cdb, 0x34, 0x01, 0, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	h_expect_invalid_cdb(h, 1, 0);
}

/* READ DEFECT DATA: the asked-for lists, valid and empty. */
static void test_read_defect_data(void **state)
{
	struct harness *h = *state;
	uint8_t cdb[16], buf[64];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x37;
	cdb[2] = 0x18 | 5; /* PLIST, GLIST, physical sector format */
	cdb[8] = sizeof(buf);
	memset(buf, 0xee, sizeof(buf));
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 4);
	assert_int_equal(buf[1], 0x18 | 5);
	assert_int_equal(be(buf + 2, 2), 0);

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0xb7;
	cdb[1] = 0x08 | 3; /* GLIST, long block format */
	cdb[9] = 6; /* allocation length shorter than the header */
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 6);
	assert_int_equal(buf[1], 0x08 | 3);
	cdb[1] = 7; /* reserved format */
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, sizeof(buf));
	h_expect_invalid_cdb(h, 1, 2);
}

/* ORWRITE: medium OR data, across the bounce buffer's 32 KiB pieces. */
static void test_orwrite(void **state)
{
	struct harness *h = *state;
	enum { N = 80 }; /* 40 KiB: two pieces */
	static uint8_t old[N * 512], data[N * 512], in[N * 512];
	uint8_t cdb[16];
	size_t i;

	fill(old, sizeof(old), 31);
	fill(data, sizeof(data), 32);
	write16(h, L_THIN, 500, N, 512, old);
	cdb16(cdb, 0x8b, 0x08, 500, N);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, sizeof(data));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, sizeof(data));
	read16(h, L_THIN, 500, N, 512, in);
	for (i = 0; i < sizeof(in); i++)
		assert_int_equal(in[i], old[i] | data[i]);

	/* ORPROTECT, past the end, zero blocks, a short Data-Out */
	cdb16(cdb, 0x8b, 0x20, 500, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 512);
	h_expect_invalid_cdb(h, 1, 5);
	cdb16(cdb, 0x8b, 0, THIN_BLOCKS, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 512);
	expect_lba_range(h);
	cdb16(cdb, 0x8b, 0, 500, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb16(cdb, 0x8b, 0, 500, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 512);
	assert_int_equal(h->cmd.status, SCSI_CHECK_CONDITION);
	read16(h, L_THIN, 500, 2, 512, data);
	assert_memory_equal(data, in, 1024);
}

/* WRITE ATOMIC: whole or not at all; its limits are the Block Limits'. */
static void test_write_atomic(void **state)
{
	struct harness *h = *state;
	static uint8_t data[MAX_XFER_THIN * 512 + 512], in[600 * 512];
	uint8_t cdb[16], vpd[64];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x12;
	cdb[1] = 1;
	cdb[2] = 0xb0;
	cdb[4] = sizeof(vpd);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, vpd, sizeof(vpd));
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(be(vpd + 44, 4), MAX_XFER_THIN);
	assert_int_equal(be(vpd + 48, 4), 0);
	assert_int_equal(be(vpd + 52, 4), 0);

	/* 600 blocks: more than the 64 KiB bounce buffer */
	fill(data, 600 * 512, 41);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x9c;
	put_be64(cdb + 2, 1000);
	cdb[12] = 600 >> 8;
	cdb[13] = 600 & 0xff;
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 600 * 512);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	read16(h, L_THIN, 1000, 600, 512, in);
	assert_memory_equal(in, data, 600 * 512);

	/* a short Data-Out writes nothing at all */
	fill(data, 600 * 512, 42);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 599 * 512);
	assert_int_equal(h->cmd.status, SCSI_CHECK_CONDITION);
	read16(h, L_THIN, 1000, 600, 512, data);
	assert_memory_equal(in, data, 600 * 512);

	/* ATOMIC BOUNDARY, more than the maximum, past the end */
	cdb[11] = 1;
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 600 * 512);
	h_expect_invalid_cdb(h, 10, -1);
	cdb[11] = 0;
	cdb[12] = (MAX_XFER_THIN + 1) >> 8;
	cdb[13] = (MAX_XFER_THIN + 1) & 0xff;
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, sizeof(data));
	h_expect_invalid_cdb(h, 12, -1);
	put_be64(cdb + 2, THIN_BLOCKS - 1);
	cdb[12] = 0;
	cdb[13] = 2;
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, data, 1024);
	expect_lba_range(h);
}

static void test_sync_cache(void **state)
{
	struct harness *h = *state;
	uint8_t cdb[16];

	cdb10(cdb, SYNC_CACHE_10, 0, 0, 0);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb16(cdb, SYNC_CACHE_16, 0x02, 100, 200);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	cdb10(cdb, SYNC_CACHE_10, 0, THIN_BLOCKS - 1, 2);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_lba_range(h);
	cdb16(cdb, SYNC_CACHE_16, 0, UINT64_MAX, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_lba_range(h);
}

static void rc10(struct harness *h, uint32_t lun, uint32_t lba, bool pmi,
		 uint8_t *buf)
{
	uint8_t cdb[16];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = READ_CAPACITY_10;
	put(cdb + 2, lba, 4);
	cdb[8] = pmi;
	exec(h, lun, cdb, SCSI_DIR_READ, buf, 8);
}

static void test_read_capacity10(void **state)
{
	struct harness *h = *state;
	uint8_t buf[8];

	rc10(h, L_THIN, 0, false, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 8);
	assert_int_equal(be(buf, 4), THIN_BLOCKS - 1);
	assert_int_equal(be(buf + 4, 4), 512);
	rc10(h, L_THICK, 0, false, buf);
	assert_int_equal(be(buf, 4), THICK_BLOCKS - 1);
	assert_int_equal(be(buf + 4, 4), 4096);
	/* more than 2^32 blocks: FFFFFFFFh sends the host to RC (16) */
	rc10(h, L_HUGE, 0, false, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(be(buf, 4), 0xffffffffu);
	assert_int_equal(be(buf + 4, 4), 512);
	/* PMI 0 needs LBA 0; PMI 1 takes any (obsolete: the last LBA) */
	rc10(h, L_THIN, 5, false, buf);
	h_expect_invalid_cdb(h, 2, -1);
	rc10(h, L_THIN, 5, true, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(be(buf, 4), THIN_BLOCKS - 1);
}

static void rc16(struct harness *h, uint32_t lun, uint32_t alloc, uint8_t *buf)
{
	uint8_t cdb[16];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SAI_16;
	cdb[1] = 0x10;
	put(cdb + 10, alloc, 4);
	exec(h, lun, cdb, SCSI_DIR_READ, buf, alloc);
}

static void test_read_capacity16(void **state)
{
	struct harness *h = *state;
	uint8_t buf[32], cdb[16];

	memset(buf, 0xee, sizeof(buf));
	rc16(h, L_THIN, 32, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 32);
	assert_int_equal(be(buf, 8), THIN_BLOCKS - 1);
	assert_int_equal(be(buf + 8, 4), 512);
	assert_int_equal(buf[12], 0); /* P_TYPE, PROT_EN */
	assert_int_equal(buf[13], 3); /* 8 logical per physical */
	assert_int_equal(buf[14], 0xc0); /* LBPME, LBPRZ; aligned 0 */
	assert_int_equal(buf[15], 0);
	assert_true(is_zero(buf + 16, 16));

	rc16(h, L_THICK, 32, buf);
	assert_int_equal(be(buf, 8), THICK_BLOCKS - 1);
	assert_int_equal(be(buf + 8, 4), 4096);
	assert_int_equal(buf[13], 0);
	assert_int_equal(buf[14], 0);

	rc16(h, L_HUGE, 32, buf);
	assert_int_equal(be(buf, 8), HUGE_BLOCKS - 1);

	/* the allocation length is honoured */
	memset(buf, 0xee, sizeof(buf));
	rc16(h, L_THIN, 12, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 12);
	assert_int_equal(buf[12], 0xee);
	rc16(h, L_THIN, 0, buf);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.data_len, 0);

	/* PMI 0 with an LBA */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SAI_16;
	cdb[1] = 0x10;
	cdb[9] = 1;
	put(cdb + 10, 32, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 32);
	h_expect_invalid_cdb(h, 2, -1);
}

/* ---- a full store, injected faults ------------------------------------ */

static void test_store_full(void **state)
{
	struct harness *h = *state;
	static uint8_t out[128 * 512], in[128 * 512];
	uint8_t a[512], cdb[16];

	memset(a, 'a', sizeof(a));
	write16(h, 0, 0, 1, 512, a);
	fill(out, sizeof(out), 21);
	/* 16 chunks against a limit of 8 */
	cdb10(cdb, WRITE_10, 0, 0, 128);
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, sizeof(out));
	h_expect_sense(h, SK_DATA_PROTECT, 0x27, 0x07);
	read16(h, 0, 0, 128, 512, in);
	assert_memory_equal(in, a, 512);
	assert_true(is_zero(in + 512, sizeof(in) - 512));

	/* WRITE SAME with a pattern runs out the same way */
	cdb16(cdb, WRITE_SAME_16, 0, 1000, 128);
	exec(h, 0, cdb, SCSI_DIR_WRITE, out, 512);
	h_expect_sense(h, SK_DATA_PROTECT, 0x27, 0x07);
	/* overwriting what is there needs no space */
	write16(h, 0, 0, 1, 512, out);
	read16(h, 0, 0, 1, 512, in);
	assert_memory_equal(in, out, 512);
}

static int add_fault(struct harness *h, enum fault_kind kind, uint64_t first,
		     uint64_t last, uint64_t delay_ns)
{
	struct fault_rule r = {
		.kind = kind,
		.lun_first = L_THIN,
		.lun_last = L_THIN,
		.lba_first = first,
		.lba_last = last,
		.delay_ns = delay_ns,
	};
	int id = fault_add(h->faults, &r);

	assert_true(id >= 1);
	return id;
}

static void test_fault_medium_error(void **state)
{
	struct harness *h = *state;
	uint8_t buf[16 * 512], in[16 * 512], cdb[16];

	add_fault(h, FAULT_MEDIUM_READ, 1000, 1009, 0);
	cdb10(cdb, READ_10, 0, 995, 10);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 10 * 512);
	expect_info(h, SK_MEDIUM_ERROR, 0x11, 1000);
	/* verify reads too */
	cdb16(cdb, VERIFY_16, 0, 1005, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_NONE, NULL, 0);
	expect_info(h, SK_MEDIUM_ERROR, 0x11, 1005);
	/* outside the rule, and writes, are fine */
	cdb10(cdb, READ_10, 0, 1010, 4);
	exec(h, L_THIN, cdb, SCSI_DIR_READ, buf, 4 * 512);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	fill(buf, sizeof(buf), 22);
	write16(h, L_THIN, 1000, 1, 512, buf);

	assert_int_equal(fault_clear(h->faults, 0), 1);
	add_fault(h, FAULT_MEDIUM_WRITE, 2000, 2000, 0);
	cdb16(cdb, WRITE_16, 0, 1990, 16);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, sizeof(buf));
	expect_info(h, SK_MEDIUM_ERROR, 0x0c, 2000);
	read16(h, L_THIN, 1990, 16, 512, in);
	assert_true(is_zero(in, sizeof(in)));
	/* UNMAP and WRITE SAME are writes too */
	{
		uint64_t lba[1] = {1999};
		uint32_t cnt[1] = {4};

		unmap_cmd(h, L_THIN, lba, cnt, 1, 0);
		expect_info(h, SK_MEDIUM_ERROR, 0x0c, 2000);
	}
	cdb10(cdb, WRITE_SAME_10, 0, 2000, 1);
	exec(h, L_THIN, cdb, SCSI_DIR_WRITE, buf, 512);
	expect_info(h, SK_MEDIUM_ERROR, 0x0c, 2000);
}

static void test_fault_delay_and_hang(void **state)
{
	struct harness *h = *state;
	uint8_t out[512], in[512], cdb[16];

	fill(out, sizeof(out), 23);
	write16(h, L_THIN, 3000, 1, 512, out);
	add_fault(h, FAULT_DELAY, 3000, 3000, 2000000);
	cdb16(cdb, READ_16, 0, 3000, 1);
	memset(in, 0, sizeof(in));
	assert_int_equal(exec(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in)),
			 SCSI_DELAY);
	assert_int_equal(h->cmd.status, SCSI_GOOD);
	assert_int_equal(h->cmd.delay_ns, 2000000);
	assert_memory_equal(in, out, sizeof(out));
	/* another LBA: no delay */
	cdb16(cdb, READ_16, 0, 3001, 1);
	assert_int_equal(exec(h, L_THIN, cdb, SCSI_DIR_READ, in, sizeof(in)),
			 SCSI_DONE);

	assert_int_equal(fault_clear(h->faults, 0), 1);
	add_fault(h, FAULT_HANG, 4000, 4000, 0);
	cdb16(cdb, WRITE_16, 0, 4000, 1);
	assert_int_equal(exec(h, L_THIN, cdb, SCSI_DIR_WRITE, out, sizeof(out)),
			 SCSI_HOLD);
	assert_int_equal(fault_clear(h->faults, 0), 1);
	read16(h, L_THIN, 4000, 1, 512, in);
	assert_true(is_zero(in, sizeof(in)));
}

/* Write-through LUN: writes still land (the FUA is free on mem). */
static void test_write_through_mem(void **state)
{
	struct harness *h = *state;
	uint8_t out[512], in[512];

	fill(out, sizeof(out), 24);
	write16(h, L_WT, 1, 1, 512, out);
	read16(h, L_WT, 1, 1, 512, in);
	assert_memory_equal(in, out, sizeof(out));
}

/* ---- SANITIZE ------------------------------------------------------------ */

#define SANITIZE 0x48
#define S_OVERWRITE 0x01
#define S_BLOCK_ERASE 0x02
#define S_CRYPTO_ERASE 0x03
#define S_EXIT_FAILURE 0x1f

static void sanitize(struct harness *h, uint32_t lun, uint8_t b1,
		     const void *param, uint16_t plen)
{
	uint8_t cdb[10] = {SANITIZE, b1};

	cdb[7] = (uint8_t)(plen >> 8);
	cdb[8] = (uint8_t)plen;
	h_exec(h, lun, cdb, sizeof(cdb), plen ? SCSI_DIR_WRITE : SCSI_DIR_NONE,
	       (void *)param, plen);
}

/* OVERWRITE's parameter list: count 1, @ip pattern bytes of @byte. */
static uint16_t overwrite_list(uint8_t *p, uint8_t hdr0, uint16_t ip,
			       uint8_t byte)
{
	p[0] = hdr0;
	p[1] = 0;
	p[2] = (uint8_t)(ip >> 8);
	p[3] = (uint8_t)ip;
	memset(p + 4, byte, ip);
	return (uint16_t)(4 + ip);
}

/* Every block of @lun from @lba for @n reads back as @byte. */
static void expect_blocks(struct harness *h, uint32_t lun, uint64_t lba,
			  uint32_t n, uint8_t byte)
{
	static uint8_t in[64 * 512], want[64 * 512];

	assert_true(n <= 64);
	memset(want, byte, (size_t)n * 512);
	read16(h, lun, lba, n, 512, in);
	assert_memory_equal(in, want, (size_t)n * 512);
}

/*
 * The erases: OVERWRITE repeats the pattern over every block (INVERT with
 * an even count leaves its inverse), BLOCK ERASE deallocates a thin LUN
 * and is not there on a thick one, CRYPTO ERASE leaves zeroes; the
 * parameter and CDB checks; software write protect.
 */
static void test_sanitize_erases(void **state)
{
	struct harness *h = *state;
	uint8_t p[4 + 512], out[8 * 512], in1[512];
	uint64_t run;
	struct lun_info li;
	uint16_t n;

	fill(out, sizeof(out), 7);
	write16(h, L_SMALL, 0, 8, 512, out);
	write16(h, L_SMALL, SMALL_BLOCKS - 8, 8, 512, out);
	/* a 3-byte pattern, repeated across each 512-byte block */
	n = overwrite_list(p, 0x01, 3, 0);
	p[4] = 0x11;
	p[5] = 0x22;
	p[6] = 0x33;
	sanitize(h, L_SMALL, S_OVERWRITE, p, n);
	h_expect_good(h);
	assert_int_equal(h->disp, SCSI_DONE);
	read16(h, L_SMALL, SMALL_BLOCKS - 1, 1, 512, out);
	assert_int_equal(out[0], 0x11);
	assert_int_equal(out[3], 0x11);
	assert_int_equal(out[511], 0x11 + 0x11 * (511 % 3));
	n = overwrite_list(p, 0x80 | 0x02, 512, 0x55); /* INVERT, 2 passes */
	sanitize(h, L_SMALL, S_OVERWRITE, p, n);
	h_expect_good(h);
	expect_blocks(h, L_SMALL, 0, 8, 0xaa);
	expect_blocks(h, L_SMALL, SMALL_BLOCKS - 8, 8, 0xaa);

	/* OVERWRITE's lists: length, count, pattern length */
	sanitize(h, L_SMALL, S_OVERWRITE, p, 4);
	h_expect_invalid_cdb(h, 7, -1);
	sanitize(h, L_SMALL, S_OVERWRITE, p, 512 + 5);
	h_expect_invalid_cdb(h, 7, -1);
	n = overwrite_list(p, 0x00, 512, 0);
	sanitize(h, L_SMALL, S_OVERWRITE, p, n);
	h_expect_invalid_param(h, 0, 4);
	n = overwrite_list(p, 0x01, 16, 0);
	p[3] = 17;
	sanitize(h, L_SMALL, S_OVERWRITE, p, n);
	h_expect_invalid_param(h, 2, -1);
	p[3] = 0;
	sanitize(h, L_SMALL, S_OVERWRITE, p, n);
	h_expect_invalid_param(h, 2, -1);
	/* the other actions take no list; unknown ones and reserved bits */
	sanitize(h, L_SMALL, S_BLOCK_ERASE, p, 8);
	h_expect_invalid_cdb(h, 7, -1);
	sanitize(h, L_SMALL, S_EXIT_FAILURE, p, 8);
	h_expect_invalid_cdb(h, 7, -1);
	sanitize(h, L_SMALL, 0x00, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);
	sanitize(h, L_SMALL, 0x04, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);
	sanitize(h, L_SMALL, 0x40 | S_BLOCK_ERASE, NULL, 0);
	h_expect_invalid_cdb(h, 1, 6);
	sanitize(h, L_SMALL, S_EXIT_FAILURE, NULL, 0);
	h_expect_good(h);

	/* BLOCK ERASE: nothing mapped afterwards, reads zero */
	sanitize(h, L_SMALL, S_BLOCK_ERASE, NULL, 0);
	h_expect_good(h);
	expect_blocks(h, L_SMALL, 0, 8, 0);
	assert_int_equal(lun_get(h->luns, L_SMALL, &li), 0);
	assert_int_equal(lun_lba_status(h->luns, &li, 0, SMALL_BLOCKS, &run),
			 0);
	lun_put(h->luns, &li);
	assert_int_equal(run, SMALL_BLOCKS);
	/* CRYPTO ERASE: zeroes; neither erase on a thick LUN */
	fill(out, sizeof(out), 9);
	write16(h, L_SMALL, 8, 8, 512, out);
	sanitize(h, L_SMALL, 0x80 | S_CRYPTO_ERASE, NULL, 0);
	h_expect_good(h);
	expect_blocks(h, L_SMALL, 8, 8, 0);
	sanitize(h, L_THICK, S_BLOCK_ERASE, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);
	sanitize(h, L_THICK, S_CRYPTO_ERASE, NULL, 0);
	h_expect_invalid_cdb(h, 1, 4);

	/* software write protect: DATA PROTECT, nothing erased */
	write16(h, L_SMALL, 8, 8, 512, out);
	assert_int_equal(
		lun_mode_set(h->luns, L_SMALL, LUN_MODE_SWP, LUN_NEXUS_NONE),
		0);
	h_clear_ua(h, L_SMALL);
	sanitize(h, L_SMALL, S_CRYPTO_ERASE, NULL, 0);
	h_expect_sense(h, SK_DATA_PROTECT, 0x27, 0x00);
	read16(h, L_SMALL, 8, 1, 512, in1);
	assert_memory_equal(in1, out, 512);
}

static uint16_t sense_progress(const struct harness *h)
{
	/* fixed format: SKSV, then PROGRESS INDICATION */
	assert_true(h->cmd.sense[15] & 0x80);
	return (uint16_t)(h->cmd.sense[16] << 8 | h->cmd.sense[17]);
}

/*
 * A sanitize that takes its time (sanitize_time): IMMED returns at once,
 * without IMMED status comes when it ends (a delayed completion); while it
 * runs only INQUIRY, REPORT LUNS, REQUEST SENSE and REPORT SUPPORTED
 * OPERATION CODES work, the rest is NOT READY, SANITIZE IN PROGRESS with a
 * progress that grows; then the LUN is back by itself.
 */
static void test_sanitize_in_progress(void **state)
{
	struct harness *h = h_new(4);
	struct lun_group g = group("slow", 0, SMALL_BLOCKS, 512, true);
	uint8_t buf[256], rs[6] = {0x03, 0, 0, 0, 252, 0};
	uint16_t p1, p2;
	struct timespec t0, t1;
	unsigned int i;
	double ms;

	(void)state;
	/*
	 * Long enough that the checks below run inside it even on a loaded
	 * machine; the end is checked by time, not by a count of polls.
	 */
	g.sanitize_ms = 1500;
	add_groups(h, &g, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sanitize(h, 0, S_BLOCK_ERASE, NULL, 0);
	h_expect_good(h);
	assert_int_equal(h->disp, SCSI_DELAY);
	assert_int_equal(h->cmd.delay_ns, 1500000000ull);
	h_exec(h, 0, H_CDB(0x00, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x1b);
	p1 = sense_progress(h);
	h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
	       SCSI_DIR_READ, buf, 256);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
	       SCSI_DIR_READ, buf, 256);
	h_expect_good(h);
	h_exec(h, 0, H_CDB(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0), SCSI_DIR_READ, buf,
	       512);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x1b);
	sanitize(h, 0, S_BLOCK_ERASE, NULL, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x1b);
	usleep(100000);
	exec(h, 0, rs, SCSI_DIR_READ, buf, 252);
	h_expect_good(h);
	assert_int_equal(buf[2] & 0x0f, SK_NOT_READY);
	assert_int_equal(buf[12], 0x04);
	assert_int_equal(buf[13], 0x1b);
	assert_true(buf[15] & 0x80);
	p2 = (uint16_t)(buf[16] << 8 | buf[17]);
	assert_true(p2 > p1);
	for (i = 0; i < 3000; i++) { /* bounded: 30 s of 10 ms polls */
		h_exec(h, 0, H_CDB(0x00, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL,
		       0);
		if (h->cmd.status == SCSI_GOOD)
			break;
		usleep(10000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	h_expect_good(h);
	/* not back before its time: busy for all of sanitize_ms */
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms >= 1500.0);
	/* IMMED: status at once, busy all the same */
	sanitize(h, 0, 0x80 | S_CRYPTO_ERASE, NULL, 0);
	h_expect_good(h);
	assert_int_equal(h->disp, SCSI_DONE);
	h_exec(h, 0, H_CDB(0x00, 0, 0, 0, 0, 0), SCSI_DIR_NONE, NULL, 0);
	h_expect_sense(h, SK_NOT_READY, 0x04, 0x1b);
	h_free(h);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_std, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write10_read16),
		T(test_read12_write12),
		T(test_rw6),
		T(test_zero_length),
		T(test_lba_out_of_range),
		T(test_transfer_length_limit),
		T(test_protect_fields),
		T(test_dpo_fua_accepted),
		T(test_read_short_buffer),
		T(test_write_short_buffer),
		T(test_fragmented_iovecs),
		cmocka_unit_test_setup_teardown(test_fua_file_store, setup_file,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_store_out_of_fds,
						setup_file, teardown),
		T(test_verify),
		T(test_verify_bytchk3),
		T(test_write_verify),
		T(test_write_same_pattern),
		T(test_write_same_to_end),
		T(test_write_same_rejects),
		T(test_write_same_unmap_ndob),
		T(test_unmap_and_lba_status),
		T(test_lba_status_thick_and_merge),
		T(test_unmap_rejects),
		T(test_compare_and_write),
		T(test_compare_and_write_atomic),
		T(test_prefetch),
		T(test_read_defect_data),
		T(test_orwrite),
		T(test_write_atomic),
		T(test_sync_cache),
		T(test_read_capacity10),
		T(test_read_capacity16),
		cmocka_unit_test_setup_teardown(test_store_full, setup_limited,
						teardown),
		T(test_fault_medium_error),
		T(test_fault_delay_and_hang),
		T(test_write_through_mem),
		T(test_sanitize_erases),
		cmocka_unit_test(test_sanitize_in_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
