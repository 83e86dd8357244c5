// SPDX-License-Identifier: MIT
/*
 * Synthetic partition tables: GPT fields and CRCs checked against zlib,
 * GUID uniqueness, parse(read()) == layout, the sizes rule, table blocks vs.
 * a brute-force scan, and a parser that survives hostile tables.
 *
 * Also the image writer the integration script runs the real tools on:
 *   test-ptable --write-image FILE --ptable gpt|mbr --parts N --size BYTES
 *               --block BS [--sizes B1,B2,...] [--wwn X] [--lun N]
 *   test-ptable --parse-image FILE --block BS
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "array.h"
#include "bytes.h"
#include "parse.h"
#include "ptable.h"
#include "rng.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

static const uint8_t linux_guid[16] = {
	0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
	0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4,
};

static struct ptable_geom geom(enum ptable_kind kind, uint32_t bs,
			       uint64_t bytes, unsigned int n)
{
	struct ptable_geom g = {
		.kind = kind,
		.block_size = bs,
		.nblocks = bytes / bs,
		.nparts = n,
		.wwn = 0x6001405abcdef000ull,
		.lun = 7,
	};
	return g;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t z[4096];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		if (memcmp(p, z, k))
			return false;
		p += k;
		n -= k;
	}
	return true;
}

/* ---------------------------------------------------------------- */
/* Read callbacks                                                   */
/* ---------------------------------------------------------------- */

/* Straight from the synthetic table: what a host reads from a fresh LUN. */
static int read_synthetic(void *arg, uint64_t lba, uint32_t n, void *buf)
{
	const struct ptable_geom *g = arg;

	assert_true(lba + n <= g->nblocks);
	return ptable_read(g, lba, n, buf);
}

/* An image in memory, which the hostile tests then damage. */
struct image {
	uint8_t *data;
	uint32_t bs;
	uint64_t nblocks;
	unsigned long reads;
	unsigned long fail_at; /* 1-based read that fails with -EIO; 0 never */
};

static int read_image(void *arg, uint64_t lba, uint32_t n, void *buf)
{
	struct image *im = arg;

	assert_true(n >= 1 && n <= 4096 / im->bs);
	assert_true(lba < im->nblocks && n <= im->nblocks - lba);
	im->reads++;
	if (im->fail_at && im->reads == im->fail_at)
		return -EIO;
	memcpy(buf, im->data + lba * im->bs, (size_t)n * im->bs);
	return 0;
}

static void image_from(struct image *im, const struct ptable_geom *g)
{
	im->bs = g->block_size;
	im->nblocks = g->nblocks;
	im->reads = 0;
	im->fail_at = 0;
	im->data = malloc(g->nblocks * g->block_size);
	assert_non_null(im->data);
	assert_int_equal(ptable_read(g, 0, (uint32_t)g->nblocks, im->data), 0);
}

static uint8_t *blk(struct image *im, uint64_t lba)
{
	return im->data + lba * im->bs;
}

static void part_equal(const struct ptable_part *a, const struct ptable_part *b)
{
	assert_int_equal(a->number, b->number);
	assert_int_equal(a->start, b->start);
	assert_int_equal(a->nblocks, b->nblocks);
	assert_int_equal(a->table_nblocks, b->table_nblocks);
	assert_int_equal(a->mbr_type, b->mbr_type);
	assert_int_equal(a->extended, b->extended);
	assert_memory_equal(a->type_guid, b->type_guid, 16);
	assert_memory_equal(a->guid, b->guid, 16);
}

/* parse() of what the callback serves must be exactly ptable_layout(). */
static void
expect_parse_is_layout(const struct ptable_geom *g,
		       int (*cb)(void *, uint64_t, uint32_t, void *), void *arg)
{
	struct ptable_part got[PTABLE_MAX_NUMBER], want;
	unsigned int nfound = 999, i;
	int count = ptable_count(g);
	int kind = ptable_parse(cb, arg, g->block_size, g->nblocks, got,
				PTABLE_MAX_NUMBER, &nfound);

	assert_true(count >= 0);
	assert_int_equal(kind, g->kind);
	assert_int_equal(nfound, (unsigned int)count);
	for (i = 0; i < nfound; i++) {
		assert_int_equal(ptable_layout(g, i, &want), 0);
		part_equal(&got[i], &want);
	}
}

/* ---------------------------------------------------------------- */
/* GPT structure                                                    */
/* ---------------------------------------------------------------- */

static void check_header(const struct ptable_geom *g, const uint8_t *h,
			 uint64_t my, uint64_t alt, uint64_t entries,
			 const uint8_t *array)
{
	uint32_t e = 16384 / g->block_size;
	uint8_t copy[92], disk[16];

	assert_memory_equal(h, "EFI PART", 8);
	assert_int_equal(get_le32(h + 8), 0x00010000);
	assert_int_equal(get_le32(h + 12), 92);
	assert_int_equal(get_le32(h + 20), 0);
	assert_int_equal(get_le64(h + 24), my);
	assert_int_equal(get_le64(h + 32), alt);
	assert_int_equal(get_le64(h + 40), 2 + e);
	assert_int_equal(get_le64(h + 48), g->nblocks - 2 - e);
	ptable_disk_guid(g->wwn, g->lun, disk);
	assert_memory_equal(h + 56, disk, 16);
	assert_int_equal(get_le64(h + 72), entries);
	assert_int_equal(get_le32(h + 80), 128);
	assert_int_equal(get_le32(h + 84), 128);
	/* CRCs recomputed here with zlib, independently of ptable.c. */
	assert_int_equal(get_le32(h + 88), (uint32_t)crc32(0, array, 16384));
	memcpy(copy, h, 92);
	memset(copy + 16, 0, 4);
	assert_int_equal(get_le32(h + 16), (uint32_t)crc32(0, copy, 92));
	assert_true(all_zero(h + 92, g->block_size - 92));
}

static void check_gpt(uint32_t bs, uint64_t bytes, unsigned int n)
{
	struct ptable_geom g = geom(PTABLE_GPT, bs, bytes, n);
	uint32_t e = 16384 / bs;
	uint64_t last = g.nblocks - 1;
	uint8_t *pm = malloc(bs), *ph = malloc(bs), *bh = malloc(bs);
	uint8_t *pe = malloc(16384), *be = malloc(16384);
	const uint8_t *mbr;
	unsigned int i;

	assert_int_equal(ptable_check(&g, NULL), 0);
	assert_int_equal(ptable_read(&g, 0, 1, pm), 0);
	assert_int_equal(ptable_read(&g, 1, 1, ph), 0);
	assert_int_equal(ptable_read(&g, 2, e, pe), 0);
	assert_int_equal(ptable_read(&g, last, 1, bh), 0);
	assert_int_equal(ptable_read(&g, last - e, e, be), 0);

	/* Protective MBR: one 0xEE partition from LBA 1 over the disk. */
	mbr = pm + 446;
	assert_int_equal(mbr[0], 0);
	assert_int_equal(mbr[1], 0);
	assert_int_equal(mbr[2], 2);
	assert_int_equal(mbr[3], 0);
	assert_int_equal(mbr[4], 0xee);
	assert_int_equal(get_le32(mbr + 8), 1);
	assert_int_equal(get_le32(mbr + 12),
			 last > 0xffffffffu ? 0xffffffffu : (uint32_t)last);
	assert_true(all_zero(mbr + 16, 48));
	assert_int_equal(pm[510], 0x55);
	assert_int_equal(pm[511], 0xaa);

	check_header(&g, ph, 1, last, 2, pe);
	check_header(&g, bh, last, 1, last - e, be);
	assert_memory_equal(pe, be, 16384);
	assert_memory_not_equal(ph, bh, 92);

	for (i = 0; i < 128; i++) {
		const uint8_t *en = pe + i * 128;
		struct ptable_part p;
		char name[16];
		int k, len;

		if (i >= n) {
			assert_true(all_zero(en, 128));
			continue;
		}
		assert_int_equal(ptable_layout(&g, i, &p), 0);
		assert_memory_equal(en, linux_guid, 16);
		assert_memory_equal(en + 16, p.guid, 16);
		assert_int_equal(get_le64(en + 32), p.start);
		assert_int_equal(get_le64(en + 40), p.start + p.nblocks - 1);
		assert_int_equal(get_le64(en + 48), 0);
		len = snprintf(name, sizeof(name), "sdswarm-%u", i + 1);
		for (k = 0; k < 36; k++) {
			uint16_t want = k < len ? (uint16_t)name[k] : 0;

			assert_int_equal(en[56 + 2 * k] | en[57 + 2 * k] << 8,
					 want);
		}
		/* Inside the usable area, aligned, in order, no overlap. */
		assert_true(p.start >= 2 + e);
		assert_int_equal(p.start % (MIB / bs), 0);
		assert_true(p.start + p.nblocks - 1 <= last - 1 - e);
		/* The last one ends on a MiB boundary, less than 1 MiB
		 * before the end of the usable space. */
		if (i + 1 == n) {
			assert_int_equal((p.start + p.nblocks) % (MIB / bs), 0);
			assert_true(p.start + p.nblocks > last - e - MIB / bs);
		}
	}
	free(pm);
	free(ph);
	free(bh);
	free(pe);
	free(be);
}

static void test_gpt_structure(void **state)
{
	static const unsigned int ns[] = {0, 1, 4, 5, 15, 16, 63};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		check_gpt(512, 4 * GIB, ns[i]);
		check_gpt(4096, 4 * GIB, ns[i]);
	}
	/* Odd sizes: not a multiple of 1 MiB. */
	check_gpt(512, 100 * MIB + 512 * 7, 3);
	check_gpt(4096, 100 * MIB + 4096 * 3, 3);
}

static void test_gpt_huge_disk(void **state)
{
	/* 2^33 blocks: the protective partition saturates at 0xFFFFFFFF. */
	struct ptable_geom g = geom(PTABLE_GPT, 512, 512ull << 33, 63);
	uint8_t b[512];

	(void)state;
	check_gpt(512, 512ull << 33, 63);
	assert_int_equal(ptable_read(&g, 0, 1, b), 0);
	assert_int_equal(get_le32(b + 446 + 12), 0xffffffffu);
	assert_int_equal(b[446 + 5], 0xff);
	assert_int_equal(b[446 + 6], 0xff);
	assert_int_equal(b[446 + 7], 0xff);
	expect_parse_is_layout(&g, read_synthetic, &g);
}

/* ---------------------------------------------------------------- */
/* GUIDs                                                            */
/* ---------------------------------------------------------------- */

static int cmp_guid(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static void test_guid_unique(void **state)
{
	const unsigned int luns = 10000, n = 63;
	size_t total = (size_t)luns * (n + 1), k = 0, i;
	uint8_t(*all)[16] = malloc(total * 16);
	struct ptable_part p;
	char text[PTABLE_GUID_STR_LEN + 1];

	(void)state;
	assert_non_null(all);
	for (unsigned int lun = 0; lun < luns; lun++) {
		/* NAA-6 WWNs as the LUN layer makes them: only the low bits
		 * differ from LUN to LUN, the worst case for a weak mixer. */
		struct ptable_geom g = geom(PTABLE_GPT, 512, 4 * GIB, n);

		g.wwn = 0x6001405000000000ull | lun;
		g.lun = lun;
		ptable_disk_guid(g.wwn, g.lun, all[k++]);
		for (i = 0; i < n; i++) {
			assert_int_equal(ptable_layout(&g, (unsigned int)i, &p),
					 0);
			memcpy(all[k++], p.guid, 16);
		}
	}
	assert_int_equal(k, total);
	for (i = 0; i < total; i++) {
		/* Version 4 (byte 7 high nibble: LE time_hi), variant 10. */
		assert_int_equal(all[i][7] >> 4, 4);
		assert_int_equal(all[i][8] >> 6, 2);
	}
	qsort(all, total, 16, cmp_guid);
	for (i = 1; i < total; i++)
		assert_memory_not_equal(all[i - 1], all[i], 16);

	/* Deterministic, and formatted in the mixed-endian text order. */
	{
		uint8_t a[16], b[16];

		ptable_disk_guid(1, 2, a);
		ptable_disk_guid(1, 2, b);
		assert_memory_equal(a, b, 16);
		ptable_guid_format(linux_guid, text);
		assert_string_equal(text,
				    "0FC63DAF-8483-4772-8E79-3D69D8477DE4");
		ptable_guid_format(a, text);
		assert_int_equal(strlen(text), 36);
		assert_int_equal(text[14], '4');
	}
	/* The LUN number counts as well as the WWN, in all its bits. */
	{
		uint8_t a[16], b[16];

		ptable_disk_guid(0x6001405000000001ull, 1, a);
		ptable_disk_guid(0x6001405000000001ull, 257, b);
		assert_memory_not_equal(a, b, 16);
		ptable_disk_guid(0x6001405000000001ull, 1u << 31 | 1, b);
		assert_memory_not_equal(a, b, 16);
		ptable_disk_guid(0x6001405000000002ull, 1, b);
		assert_memory_not_equal(a, b, 16);
	}
	assert_int_not_equal(ptable_mbr_signature(1, 2), 0);
	assert_int_not_equal(ptable_mbr_signature(1, 2),
			     ptable_mbr_signature(1, 3));
	free(all);
}

/* ---------------------------------------------------------------- */
/* Round trip                                                       */
/* ---------------------------------------------------------------- */

static void check_mbr_layout(const struct ptable_geom *g)
{
	uint64_t a = MIB / g->block_size, limit;
	int count = ptable_count(g), i;
	struct ptable_part p, prev = {0};

	limit = g->nblocks < (1ull << 32) ? g->nblocks : 1ull << 32;
	assert_int_equal(count, g->nparts + (g->nparts > 4));
	for (i = 0; i < count; i++) {
		assert_int_equal(ptable_layout(g, (unsigned int)i, &p), 0);
		assert_int_equal(p.number, (unsigned int)i + 1);
		if (p.extended) {
			/* Kernel view 2 blocks of 512 (1 of 4096); the table
			 * spans to the end of the usable space. */
			assert_int_equal(i, 3);
			assert_int_equal(p.mbr_type, 0x05);
			assert_int_equal(p.nblocks,
					 g->block_size == 512 ? 2 : 1);
			assert_int_equal(p.start + p.table_nblocks, limit);
			assert_int_equal(p.start % a, 0);
			continue;
		}
		assert_int_equal(p.mbr_type, 0x83);
		assert_int_equal(p.start % a, 0);
		assert_true(p.start + p.nblocks <= limit);
		if (i)
			assert_true(p.start >= prev.start + prev.table_nblocks);
		if (i > 3)
			/* One MiB gap for the EBR before every logical. */
			assert_true(p.start >= prev.start + prev.table_nblocks +
						       a ||
				    prev.extended);
		prev = p;
	}
	if (count) {
		assert_int_equal((prev.start + prev.nblocks) % a, 0);
		assert_true(prev.start + prev.nblocks > limit - a);
	}
}

static void test_roundtrip(void **state)
{
	static const unsigned int ns[] = {0, 1, 4, 5, 15, 16, 63};
	static const uint32_t bss[] = {512, 4096};
	unsigned int i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		for (j = 0; j < 2; j++) {
			struct ptable_geom g =
				geom(PTABLE_GPT, bss[j], 4 * GIB, ns[i]);

			expect_parse_is_layout(&g, read_synthetic, &g);
			g.kind = PTABLE_MBR;
			assert_int_equal(ptable_check(&g, NULL), 0);
			check_mbr_layout(&g);
			expect_parse_is_layout(&g, read_synthetic, &g);
		}
	}
}

static void test_mbr_past_2tib(void **state)
{
	/* 4 TiB of 512: the MBR uses the first 2^32 blocks only. */
	struct ptable_geom g = geom(PTABLE_MBR, 512, 512ull << 33, 15);
	uint64_t sizes[2] = {1ull << 32, 0};
	const char *why = NULL;

	(void)state;
	assert_int_equal(ptable_check(&g, NULL), 0);
	check_mbr_layout(&g);
	expect_parse_is_layout(&g, read_synthetic, &g);
	g.nparts = 4;
	expect_parse_is_layout(&g, read_synthetic, &g);

	g.sizes = sizes;
	g.nsizes = 2;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "2^32"));
	/* A GPT takes the same sizes. */
	g.kind = PTABLE_GPT;
	assert_int_equal(ptable_check(&g, NULL), 0);
	expect_parse_is_layout(&g, read_synthetic, &g);
}

/* ---------------------------------------------------------------- */
/* The sizes rule                                                   */
/* ---------------------------------------------------------------- */

static void test_sizes_rule(void **state)
{
	struct ptable_geom g = geom(PTABLE_GPT, 512, 1 * GIB, 3);
	uint64_t sizes[4] = {1000, 5000, 0, 0};
	uint64_t limit = g.nblocks - 33; /* last usable + 1 */
	struct ptable_part p[4];
	const char *why = NULL;
	int i;

	(void)state;
	/* Two sized, the third takes the rest. */
	g.sizes = sizes;
	g.nsizes = 2;
	for (i = 0; i < 3; i++)
		assert_int_equal(ptable_layout(&g, (unsigned int)i, &p[i]), 0);
	assert_int_equal(p[0].start, 2048);
	assert_int_equal(p[0].nblocks, 1000);
	assert_int_equal(p[1].start, 4096);
	assert_int_equal(p[1].nblocks, 5000);
	assert_int_equal(p[2].start, 10240);
	assert_int_equal(p[2].nblocks, (limit - 10240) / 2048 * 2048);
	expect_parse_is_layout(&g, read_synthetic, &g);

	/* A trailing 0 means the same as leaving it out. */
	g.nsizes = 3;
	assert_int_equal(ptable_layout(&g, 2, &p[3]), 0);
	part_equal(&p[2], &p[3]);

	/* Every partition sized: the rest of the disk stays free. */
	sizes[2] = 2048;
	assert_int_equal(ptable_layout(&g, 2, &p[2]), 0);
	assert_int_equal(p[2].start, 10240);
	assert_int_equal(p[2].nblocks, 2048);
	expect_parse_is_layout(&g, read_synthetic, &g);

	/* Equal split: whole MiB each, the last also takes the remainder. */
	g.nsizes = 0;
	g.nparts = 4;
	for (i = 0; i < 4; i++)
		assert_int_equal(ptable_layout(&g, (unsigned int)i, &p[i]), 0);
	assert_int_equal(p[0].start, 2048);
	assert_int_equal(p[0].nblocks % 2048, 0);
	assert_int_equal(p[0].nblocks, (limit - 2048) / 4 / 2048 * 2048);
	for (i = 1; i < 4; i++)
		assert_int_equal(p[i].start, p[i - 1].start + p[0].nblocks);
	assert_int_equal(p[1].nblocks, p[0].nblocks);
	assert_int_equal(p[2].nblocks, p[0].nblocks);
	assert_true(p[3].nblocks >= p[0].nblocks);
	assert_int_equal(p[3].nblocks % 2048, 0);
	assert_int_equal(p[3].start + p[3].nblocks, limit / 2048 * 2048);

	/* Sized then unsized: the unsized ones split what is left. */
	g.sizes = sizes;
	sizes[0] = 4096;
	sizes[1] = 0;
	g.nsizes = 2;
	for (i = 0; i < 4; i++)
		assert_int_equal(ptable_layout(&g, (unsigned int)i, &p[i]), 0);
	assert_int_equal(p[0].nblocks, 4096);
	assert_int_equal(p[1].start, 6144);
	assert_int_equal(p[1].nblocks, (limit - 6144) / 3 / 2048 * 2048);
	assert_int_equal(p[3].start + p[3].nblocks, limit / 2048 * 2048);

	/* Rejected layouts, each with its reason. */
	sizes[0] = 0;
	sizes[1] = 10;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "last"));
	sizes[0] = 1000;
	g.nsizes = 5;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "more partition sizes"));
	g.nsizes = 1;
	sizes[0] = g.nblocks;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "exceed"));
	sizes[0] = limit - 2048 - 3 * 2048; /* leaves 3 MiB minus alignment */
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "too small"));
	sizes[0] = limit - 2048 - 3 * 2048 - 2048;
	assert_int_equal(ptable_check(&g, NULL), 0);
	g.nsizes = 0;
	g.sizes = NULL;
	g.nsizes = 1;
	assert_int_equal(ptable_check(&g, NULL), -EINVAL);
	g.nsizes = 0;
	g.nparts = 64;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "63"));
	g.nparts = 63;
	g.nblocks = 65 * 2048; /* 65 MiB: 63 one-MiB partitions fit */
	assert_int_equal(ptable_check(&g, NULL), 0);
	g.nblocks = 64 * 2048; /* 1 MiB in front, the backup GPT behind */
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "too small"));
	g.nparts = 0;
	g.nblocks = 67;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "GPT"));
	g.nblocks = 68;
	assert_int_equal(ptable_check(&g, NULL), 0);
	expect_parse_is_layout(&g, read_synthetic, &g);
	g.block_size = 520;
	assert_int_equal(ptable_check(&g, NULL), -EINVAL);
	g.block_size = 512;
	g.kind = PTABLE_NONE;
	assert_int_equal(ptable_check(&g, NULL), 0);
	assert_int_equal(ptable_count(&g), 0);
	assert_int_equal(ptable_block_is_synthetic(&g, 0), 0);
	g.nparts = 1;
	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	g.kind = (enum ptable_kind)9;
	assert_int_equal(ptable_check(&g, NULL), -EINVAL);
	assert_int_equal(ptable_check(NULL, &why), -EINVAL);
}

static void test_mbr_sized_logicals(void **state)
{
	/* Sized logicals: EBRs where fdisk puts them, 1 MiB before each. */
	struct ptable_geom g = geom(PTABLE_MBR, 512, 1 * GIB, 7);
	uint64_t sizes[6] = {2048, 2048, 2048, 1001, 4096, 0};
	struct ptable_part p;
	uint64_t ebrs[4] = {0}, at = 1;
	uint8_t b[512];
	int k = 0;

	(void)state;
	g.sizes = sizes;
	g.nsizes = 6;
	assert_int_equal(ptable_check(&g, NULL), 0);
	check_mbr_layout(&g);
	expect_parse_is_layout(&g, read_synthetic, &g);
	while (ptable_next_synthetic(&g, at, &at) == 1) {
		assert_true(k < 4);
		ebrs[k++] = at++;
	}
	assert_int_equal(k, 4);
	/* Primaries end at 8192; EBR, 1 MiB, logical, next boundary. */
	assert_int_equal(ebrs[0], 8192); /* the extended partition's start */
	assert_int_equal(ebrs[1], 12288); /* after 10240 + 1001 */
	assert_int_equal(ebrs[2], 18432); /* after 14336 + 4096 */
	assert_int_equal(ptable_layout(&g, 7, &p), 0);
	assert_int_equal(ebrs[3], p.start - 2048);
	assert_int_equal(ptable_layout(&g, 3, &p), 0);
	assert_true(p.extended);
	assert_int_equal(p.start, 8192);
	assert_int_equal(p.table_nblocks, g.nblocks - 8192);
	/* The first EBR: the logical relative to the EBR; the link to the
	 * next EBR relative to the extended start, sized from that EBR to
	 * the end of its logical. */
	assert_int_equal(ptable_read(&g, 8192, 1, b), 0);
	assert_int_equal(b[446 + 4], 0x83);
	assert_int_equal(get_le32(b + 446 + 8), 2048);
	assert_int_equal(get_le32(b + 446 + 12), 1001);
	assert_int_equal(b[446 + 16 + 4], 0x05);
	assert_int_equal(get_le32(b + 446 + 16 + 8), 12288 - 8192);
	assert_int_equal(get_le32(b + 446 + 16 + 12), 2048 + 4096);
	assert_true(all_zero(b + 446 + 32, 32));
	assert_int_equal(b[510], 0x55);
	assert_int_equal(b[511], 0xaa);
	assert_int_equal(ptable_read(&g, 0, 1, b), 0);
	assert_int_equal(get_le32(b + 440), ptable_mbr_signature(g.wwn, g.lun));
}

/* ---------------------------------------------------------------- */
/* Table blocks vs. brute force                                     */
/* ---------------------------------------------------------------- */

static void brute_force(const struct ptable_geom *g)
{
	const uint32_t chunk = 512;
	uint64_t nb = g->nblocks, lba, at, found = 0, i;
	uint8_t *buf = malloc((size_t)chunk * g->block_size);
	uint8_t *one = malloc(g->block_size);
	uint64_t *nz = calloc(nb + 1, sizeof(*nz)); /* prefix counts */
	struct rng rng = rng_init(12345);

	assert_non_null(buf);
	assert_non_null(one);
	assert_non_null(nz);
	for (lba = 0; lba < nb; lba += chunk) {
		uint32_t n = nb - lba < chunk ? (uint32_t)(nb - lba) : chunk;

		assert_int_equal(ptable_read(g, lba, n, buf), 0);
		for (i = 0; i < n; i++) {
			const uint8_t *b = buf + i * g->block_size;
			bool z = all_zero(b, g->block_size);
			int syn = ptable_block_is_synthetic(g, lba + i);

			assert_int_equal(syn, !z);
			nz[lba + i + 1] = nz[lba + i] + !z;
			if (!z) {
				/* A wide read gives what a single one does. */
				assert_int_equal(
					ptable_read(g, lba + i, 1, one), 0);
				assert_memory_equal(one, b, g->block_size);
			}
		}
	}
	/* next_synthetic() visits exactly the non-zero blocks. */
	at = 0;
	while (ptable_next_synthetic(g, at, &at) == 1) {
		assert_true(at < nb);
		assert_int_equal(nz[at + 1] - nz[at], 1);
		assert_int_equal(nz[at], found);
		found++;
		at++;
	}
	assert_int_equal(found, nz[nb]);
	/* Ranges: random, and every range ending or starting at a table
	 * block's neighbours. */
	for (i = 0; i < 20000; i++) {
		uint64_t a = rng_below(&rng, nb);
		uint64_t len = rng_below(&rng, i % 2 ? 5000 : 40);

		if (len > nb - a)
			len = nb - a;
		assert_int_equal(ptable_range_is_synthetic(g, a, len),
				 nz[a + len] - nz[a] > 0);
	}
	at = 0;
	while (ptable_next_synthetic(g, at, &at) == 1) {
		if (at)
			assert_int_equal(ptable_range_is_synthetic(g, 0, at),
					 nz[at] > 0);
		assert_int_equal(
			ptable_range_is_synthetic(g, at + 1, nb - at - 1),
			nz[nb] - nz[at + 1] > 0);
		at++;
	}
	assert_int_equal(ptable_range_is_synthetic(g, 0, 0), 0);
	assert_int_equal(ptable_next_synthetic(g, nb, &at), 0);
	assert_int_equal(ptable_read(g, nb - 1, 2, buf), -ERANGE);
	free(buf);
	free(one);
	free(nz);
}

static void test_synthetic_blocks(void **state)
{
	static const unsigned int ns[] = {0, 1, 4, 5, 15, 63};
	static const uint32_t bss[] = {512, 4096};
	unsigned int i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		for (j = 0; j < 2; j++) {
			/* 1.5 MiB, 1 MiB, one block, the rest. */
			uint64_t sizes[4] = {3 * MIB / 2 / bss[j], MIB / bss[j],
					     1, 0};
			uint64_t bytes = (2 * ns[i] + 8) * MIB + 3 * bss[j];
			struct ptable_geom g =
				geom(PTABLE_GPT, bss[j], bytes, ns[i]);

			brute_force(&g);
			g.kind = PTABLE_MBR;
			brute_force(&g);
			if (ns[i] >= 4) {
				g.sizes = sizes;
				g.nsizes = 4;
				brute_force(&g);
				g.kind = PTABLE_GPT;
				brute_force(&g);
			}
		}
	}
}

/* ---------------------------------------------------------------- */
/* Hostile tables                                                   */
/* ---------------------------------------------------------------- */

static int parse_image(struct image *im, struct ptable_part *parts,
		       unsigned int max, unsigned int *nfound)
{
	im->reads = 0;
	return ptable_parse(read_image, im, im->bs, im->nblocks, parts, max,
			    nfound);
}

/* Recompute a GPT header's CRC after editing it (512-byte blocks). */
static void fix_header_crc(uint8_t *h)
{
	uint32_t size = get_le32(h + 12);

	if (size < 92 || size > 512)
		size = 92;
	put_le32(h + 16, 0);
	put_le32(h + 16, (uint32_t)crc32(0, h, size));
}

static void test_hostile_gpt(void **state)
{
	struct ptable_geom g = geom(PTABLE_GPT, 512, 16 * MIB, 5);
	struct ptable_part parts[PTABLE_MAX_NUMBER];
	uint64_t last = g.nblocks - 1;
	unsigned int nfound;
	struct image im;
	uint8_t *save = malloc(g.nblocks * 512);

	(void)state;
	image_from(&im, &g);
	memcpy(save, im.data, g.nblocks * 512);
	expect_parse_is_layout(&g, read_image, &im);

	/* Primary header CRC wrong: the backup serves. */
	blk(&im, 1)[60] ^= 1;
	expect_parse_is_layout(&g, read_image, &im);
	/* Both headers wrong: no GPT, and the 0xEE entry stops msdos. */
	blk(&im, last)[60] ^= 1;
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_NONE);
	assert_int_equal(nfound, 0);
	memcpy(im.data, save, g.nblocks * 512);

	/* Primary entry array damaged (CRC mismatch): the backup serves. */
	blk(&im, 2)[100] ^= 0x40;
	expect_parse_is_layout(&g, read_image, &im);
	/* ... and the backup's too: nothing. */
	blk(&im, last - 32)[100] ^= 0x40;
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_NONE);
	assert_int_equal(nfound, 0);
	memcpy(im.data, save, g.nblocks * 512);

	/* Giant entry counts, with a correct header CRC: rejected (the
	 * kernel's 4 MiB bound), without reading gigabytes. */
	put_le32(blk(&im, 1) + 80, 0xffffffffu);
	fix_header_crc(blk(&im, 1));
	im.reads = 0;
	expect_parse_is_layout(&g, read_image, &im);
	assert_true(im.reads < 100);
	/* 32768 entries is 4 MiB, the most the kernel reads: read, and
	 * rejected for its CRC. */
	put_le32(blk(&im, 1) + 80, 32768);
	fix_header_crc(blk(&im, 1));
	im.reads = 0;
	expect_parse_is_layout(&g, read_image, &im);
	assert_true(im.reads > 1024 && im.reads < 1100);
	/* An array that would run past the end of the disk. */
	put_le32(blk(&im, 1) + 80, 128);
	put_le64(blk(&im, 1) + 72, last - 10);
	fix_header_crc(blk(&im, 1));
	im.reads = 0;
	expect_parse_is_layout(&g, read_image, &im);
	assert_true(im.reads < 100);
	/* Entry size not 128, header size huge or tiny, own LBA wrong,
	 * usable range outside the disk: each one rejected. */
	memcpy(im.data, save, g.nblocks * 512);
	put_le32(blk(&im, 1) + 84, 256);
	fix_header_crc(blk(&im, 1));
	expect_parse_is_layout(&g, read_image, &im);
	memcpy(im.data, save, g.nblocks * 512);
	put_le32(blk(&im, 1) + 12, 0xffffffffu);
	expect_parse_is_layout(&g, read_image, &im);
	put_le32(blk(&im, 1) + 12, 91);
	expect_parse_is_layout(&g, read_image, &im);
	memcpy(im.data, save, g.nblocks * 512);
	put_le64(blk(&im, 1) + 24, 2);
	fix_header_crc(blk(&im, 1));
	expect_parse_is_layout(&g, read_image, &im);
	memcpy(im.data, save, g.nblocks * 512);
	put_le64(blk(&im, 1) + 48, last + 1);
	fix_header_crc(blk(&im, 1));
	expect_parse_is_layout(&g, read_image, &im);
	memcpy(im.data, save, g.nblocks * 512);

	/* No protective MBR: not a GPT (and not an MBR either). */
	blk(&im, 0)[446 + 4] = 0x83;
	blk(&im, 0)[446 + 12] = 0;
	blk(&im, 0)[446 + 13] = 0;
	blk(&im, 0)[446 + 14] = 0;
	blk(&im, 0)[446 + 15] = 0;
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	assert_int_equal(nfound, 0);
	memcpy(im.data, save, g.nblocks * 512);

	/* Bad entries in a valid table: type zero, start or end past the
	 * disk, end before start. Numbers keep their slots. */
	{
		uint8_t *e = blk(&im, 2);

		memset(e + 0 * 128, 0, 16); /* 1: unused slot */
		put_le64(e + 1 * 128 + 32, last + 1); /* 2: past the end */
		put_le64(e + 2 * 128 + 40, last + 5); /* 3: end past it */
		put_le64(e + 3 * 128 + 40, 5); /* 4: end < start */
		memcpy(e + 9 * 128, e + 4 * 128, 128); /* 10: a copy of 5 */
		put_le32(blk(&im, 1) + 88, (uint32_t)crc32(0, e, 16384));
		fix_header_crc(blk(&im, 1));
		assert_int_equal(parse_image(&im, parts, 16, &nfound),
				 PTABLE_GPT);
		assert_int_equal(nfound, 2);
		assert_int_equal(parts[0].number, 5);
		assert_int_equal(parts[1].number, 10);
		assert_int_equal(parts[1].start, parts[0].start);
		/* Room for one: the lowest number, and the full count. */
		assert_int_equal(parse_image(&im, parts, 1, &nfound),
				 PTABLE_GPT);
		assert_int_equal(nfound, 2);
		assert_int_equal(parts[0].number, 5);
		assert_int_equal(parse_image(&im, NULL, 0, &nfound),
				 PTABLE_GPT);
		assert_int_equal(nfound, 2);
	}
	memcpy(im.data, save, g.nblocks * 512);

	/* Read errors come back as they are, wherever they happen. */
	for (im.fail_at = 1; im.fail_at <= 4; im.fail_at++)
		assert_int_equal(parse_image(&im, parts, 16, &nfound), -EIO);
	im.fail_at = 0;
	assert_int_equal(ptable_parse(read_image, &im, 500, im.nblocks, parts,
				      16, &nfound),
			 -EINVAL);
	assert_int_equal(
		ptable_parse(NULL, &im, 512, im.nblocks, parts, 16, &nfound),
		-EINVAL);
	assert_int_equal(ptable_parse(read_image, &im, 512, im.nblocks, NULL,
				      16, &nfound),
			 -EINVAL);
	free(save);
	free(im.data);
}

static void mbr_entry(uint8_t *sect, int slot, uint8_t type, uint32_t start,
		      uint32_t size)
{
	uint8_t *e = sect + 446 + 16 * slot;

	memset(e, 0, 16);
	e[4] = type;
	put_le32(e + 8, start);
	put_le32(e + 12, size);
	sect[510] = 0x55;
	sect[511] = 0xaa;
}

static void test_hostile_mbr(void **state)
{
	struct ptable_part parts[PTABLE_MAX_NUMBER];
	unsigned int nfound, i;
	struct image im = {.bs = 512, .nblocks = 8192};

	(void)state;
	im.data = calloc(im.nblocks, 512);
	assert_non_null(im.data);

	/* No 0x55AA: nothing. */
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_NONE);
	assert_int_equal(nfound, 0);

	/* An EBR that links to itself and holds a logical: the kernel adds
	 * the same logical until number 255, then stops. */
	mbr_entry(blk(&im, 0), 0, 0x05, 2048, 4096);
	mbr_entry(blk(&im, 2048), 0, 0x83, 1, 100);
	mbr_entry(blk(&im, 2048), 1, 0x05, 0, 4096);
	assert_int_equal(parse_image(&im, parts, PTABLE_MAX_NUMBER, &nfound),
			 PTABLE_MBR);
	assert_int_equal(nfound, 1 + 251);
	assert_int_equal(parts[0].number, 1);
	assert_true(parts[0].extended);
	assert_int_equal(parts[0].nblocks, 2);
	assert_int_equal(parts[0].table_nblocks, 4096);
	for (i = 1; i < nfound; i++) {
		assert_int_equal(parts[i].number, 4 + i);
		assert_int_equal(parts[i].start, 2049);
	}
	assert_true(im.reads <= 2 + 251); /* GPT probe, MBR, EBRs */

	/* A loop with no logical in it: 100 EBRs, then give up. */
	memset(blk(&im, 2048), 0, 512);
	mbr_entry(blk(&im, 2048), 1, 0x05, 0, 4096);
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	assert_int_equal(nfound, 1);
	assert_true(im.reads <= 2 + 100);

	/* A two-EBR cycle with a logical in one of them. */
	mbr_entry(blk(&im, 2048), 0, 0x83, 1, 10);
	mbr_entry(blk(&im, 2048), 1, 0x05, 1000, 100);
	mbr_entry(blk(&im, 3048), 1, 0x05, 0, 100);
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	assert_int_equal(nfound, 1 + 251);
	assert_int_equal(parts[15].number, 19);

	/* Links and logicals past the end; entries 3 and 4 outside the
	 * link's span are garbage and ignored (entries 1 and 2 are not). */
	memset(blk(&im, 2048), 0, 512);
	memset(blk(&im, 3048), 0, 512);
	mbr_entry(blk(&im, 2048), 0, 0x83, 1, 10);
	mbr_entry(blk(&im, 2048), 2, 0x83, 50, 100000); /* garbage */
	mbr_entry(blk(&im, 2048), 3, 0x83, 20, 5); /* inside: kept */
	mbr_entry(blk(&im, 2048), 1, 0x05, 0xfffffff0u, 10);
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	assert_int_equal(nfound, 3);
	assert_int_equal(parts[1].number, 5);
	assert_int_equal(parts[1].start, 2049);
	assert_int_equal(parts[2].number, 6);
	assert_int_equal(parts[2].start, 2068);

	/* Primaries: size 0 skipped, start past the end dropped, one
	 * running past the end cut; logicals sorted behind their slot. */
	mbr_entry(blk(&im, 0), 1, 0x83, 100, 0);
	mbr_entry(blk(&im, 0), 2, 0x83, 9000, 10);
	mbr_entry(blk(&im, 0), 3, 0x83, 8000, 1000);
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	assert_int_equal(nfound, 4);
	assert_int_equal(parts[0].number, 1);
	assert_int_equal(parts[1].number, 4);
	assert_int_equal(parts[1].nblocks, 192);
	assert_int_equal(parts[1].table_nblocks, 1000);
	assert_int_equal(parts[2].number, 5);
	assert_int_equal(parts[3].number, 6);

	/* A boot flag other than 0 / 0x80: not a partition table. */
	blk(&im, 0)[446 + 16 * 2] = 0x12;
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_NONE);
	assert_int_equal(nfound, 0);
	blk(&im, 0)[446 + 16 * 2] = 0x80;
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_MBR);
	/* An 0xEE entry without a GPT behind it: nothing. */
	mbr_entry(blk(&im, 0), 2, 0xee, 1, 100);
	assert_int_equal(parse_image(&im, parts, 16, &nfound), PTABLE_NONE);
	assert_int_equal(nfound, 0);

	/* Tiny disks. */
	for (i = 0; i < 3; i++) {
		im.nblocks = i;
		assert_true(parse_image(&im, parts, 16, &nfound) >= 0);
	}
	free(im.data);
}

/* Damage valid tables at random: never a crash, a hang or a bad result. */
static void fuzz_one(struct image *im, const uint8_t *orig, struct rng *rng,
		     unsigned int tally[3])
{
	struct ptable_part parts[PTABLE_MAX_NUMBER];
	unsigned int nfound, i, flips = 1 + (unsigned int)rng_below(rng, 8);
	uint64_t nb = im->nblocks, touched[8];
	int kind;

	for (i = 0; i < flips; i++) {
		/* Mostly in the table blocks, where it matters. */
		unsigned int where = (unsigned int)rng_below(rng, 4);
		uint64_t lba = where == 0   ? 0
			       : where == 1 ? 1
			       : where == 2 ? rng_below(rng, 40)
					    : rng_below(rng, nb);
		unsigned int off = (unsigned int)rng_below(rng, im->bs);

		if (rng_below(rng, 4) == 0)
			off = 446 + (unsigned int)rng_below(rng, 66);
		im->data[lba * im->bs + off] ^=
			(uint8_t)(1 + rng_below(rng, 255));
		touched[i] = lba;
	}
	if (rng_below(rng, 3) == 0)
		fix_header_crc(blk(im, 1));
	kind = parse_image(im, parts, PTABLE_MAX_NUMBER, &nfound);
	assert_true(kind >= PTABLE_NONE && kind <= PTABLE_MBR);
	tally[kind]++;
	assert_true(nfound <= PTABLE_MAX_NUMBER);
	assert_true(im->reads <= 1 + 2 * 1025 + 1 + 255 * 101);
	for (i = 0; i < nfound; i++) {
		assert_true(parts[i].number >= 1);
		assert_true(parts[i].number <= PTABLE_MAX_NUMBER);
		if (i)
			assert_true(parts[i].number > parts[i - 1].number);
		assert_true(parts[i].nblocks >= 1);
		assert_true(parts[i].start < nb);
		assert_true(parts[i].nblocks <= nb - parts[i].start);
	}
	/* Undo: the damaged blocks and the header whose CRC was redone. */
	for (i = 0; i < flips; i++)
		memcpy(blk(im, touched[i]), orig + touched[i] * im->bs, im->bs);
	memcpy(blk(im, 1), orig + im->bs, im->bs);
}

static void test_fuzz(void **state)
{
	static const enum ptable_kind kinds[] = {PTABLE_GPT, PTABLE_MBR};
	struct rng rng = rng_init(4242);
	unsigned int i, k, tally[3] = {0};

	(void)state;
	for (k = 0; k < 2; k++) {
		struct ptable_geom g = geom(kinds[k], 512, 24 * MIB, 7);
		struct image im;
		uint8_t *orig;

		image_from(&im, &g);
		orig = malloc(g.nblocks * 512);
		assert_non_null(orig);
		memcpy(orig, im.data, g.nblocks * 512);
		/* An MBR whose EBRs sit low, where the flips land. */
		if (kinds[k] == PTABLE_MBR) {
			memset(orig, 0, 40 * 512);
			mbr_entry(orig, 0, 0x83, 1, 3);
			mbr_entry(orig, 1, 0x05, 10, 30);
			mbr_entry(orig + 10 * 512, 0, 0x83, 1, 2);
			mbr_entry(orig + 10 * 512, 1, 0x05, 5, 5);
			mbr_entry(orig + 15 * 512, 0, 0x83, 1, 2);
			mbr_entry(orig + 15 * 512, 1, 0x05, 10, 5);
			mbr_entry(orig + 20 * 512, 0, 0x83, 1, 2);
		}
		memcpy(im.data, orig, g.nblocks * 512);
		for (i = 0; i < 20000; i++)
			fuzz_one(&im, orig, &rng, tally);
		free(orig);
		free(im.data);
	}
	/* The damage reached every outcome, so the fuzz is not idle. */
	printf("fuzz: none %u, gpt %u, mbr %u\n", tally[0], tally[1], tally[2]);
	assert_true(tally[PTABLE_NONE] > 100);
	assert_true(tally[PTABLE_GPT] > 100);
	assert_true(tally[PTABLE_MBR] > 100);
}

static void test_kind_names(void **state)
{
	enum ptable_kind k = PTABLE_NONE;

	(void)state;
	assert_int_equal(ptable_kind_parse("gpt", &k), 0);
	assert_int_equal(k, PTABLE_GPT);
	assert_int_equal(ptable_kind_parse("dos", &k), 0);
	assert_int_equal(k, PTABLE_MBR);
	assert_int_equal(ptable_kind_parse("mbr", &k), 0);
	assert_int_equal(ptable_kind_parse("none", &k), 0);
	assert_int_equal(k, PTABLE_NONE);
	assert_int_equal(ptable_kind_parse("GPT", &k), -EINVAL);
	assert_int_equal(ptable_kind_parse(NULL, &k), -EINVAL);
	assert_string_equal(ptable_kind_name(PTABLE_MBR), "mbr");
	assert_string_equal(ptable_kind_name((enum ptable_kind)7), "?");
}

/* ---------------------------------------------------------------- */
/* Image tool for tests/integration/ptable-tools.sh                 */
/* ---------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr,
		"usage: test-ptable --write-image FILE --ptable gpt|mbr --parts N --size BYTES --block BS [--sizes B1,B2,...] [--wwn X] [--lun N]\n"
		"       test-ptable --parse-image FILE --block BS\n");
	return 2;
}

static void print_part(const struct ptable_part *p, uint64_t size)
{
	char t[PTABLE_GUID_STR_LEN + 1], u[PTABLE_GUID_STR_LEN + 1];

	if (p->mbr_type) {
		printf("%u %" PRIu64 " %" PRIu64 " %x -\n", p->number, p->start,
		       size, p->mbr_type);
		return;
	}
	ptable_guid_format(p->type_guid, t);
	ptable_guid_format(p->guid, u);
	printf("%u %" PRIu64 " %" PRIu64 " %s %s\n", p->number, p->start, size,
	       t, u);
}

/* Write only the table blocks into a sparse file; print the table view. */
static int write_image(const char *file, struct ptable_geom *g)
{
	uint64_t at = 0;
	uint8_t *b = malloc(g->block_size);
	const char *why = "";
	struct ptable_part p;
	int fd, i, count;

	if (!b || ptable_check(g, &why) < 0) {
		fprintf(stderr, "test-ptable: bad layout: %s\n", why);
		free(b);
		return 1;
	}
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(g->nblocks * g->block_size))) {
		perror(file);
		free(b);
		return 1;
	}
	while (ptable_next_synthetic(g, at, &at) == 1) {
		if (ptable_read(g, at, 1, b) ||
		    pwrite(fd, b, g->block_size, (off_t)(at * g->block_size)) !=
			    g->block_size) {
			perror(file);
			close(fd);
			free(b);
			return 1;
		}
		at++;
	}
	free(b);
	if (close(fd)) {
		perror(file);
		return 1;
	}
	if (g->kind == PTABLE_GPT) {
		char t[PTABLE_GUID_STR_LEN + 1];
		uint8_t d[16];

		ptable_disk_guid(g->wwn, g->lun, d);
		ptable_guid_format(d, t);
		printf("label-id %s\n", t);
	} else {
		printf("label-id 0x%08x\n",
		       ptable_mbr_signature(g->wwn, g->lun));
	}
	count = ptable_count(g);
	for (i = 0; i < count; i++) {
		ptable_layout(g, (unsigned int)i, &p);
		print_part(&p, p.table_nblocks);
	}
	return 0;
}

static int read_fd(void *arg, uint64_t lba, uint32_t n, void *buf)
{
	const int *ctx = arg; /* { fd, block size } */
	ssize_t len = (ssize_t)n * ctx[1];

	if (pread(ctx[0], buf, (size_t)len, (off_t)(lba * (uint64_t)ctx[1])) !=
	    len)
		return -EIO;
	return 0;
}

/* The kernel's view of an image: kind, then number start size type. */
static int parse_file(const char *file, uint32_t bs)
{
	struct ptable_part parts[PTABLE_MAX_NUMBER];
	unsigned int nfound, i;
	struct stat st;
	int ctx[2], kind;

	ctx[0] = open(file, O_RDONLY);
	if (ctx[0] < 0 || fstat(ctx[0], &st)) {
		perror(file);
		return 1;
	}
	ctx[1] = (int)bs;
	kind = ptable_parse(read_fd, ctx, bs, (uint64_t)st.st_size / bs, parts,
			    PTABLE_MAX_NUMBER, &nfound);
	close(ctx[0]);
	if (kind < 0) {
		fprintf(stderr, "test-ptable: %s: %s\n", file, strerror(-kind));
		return 1;
	}
	printf("kind %s\n", ptable_kind_name((enum ptable_kind)kind));
	for (i = 0; i < nfound; i++)
		print_part(&parts[i], parts[i].nblocks);
	return 0;
}

static int tool(int argc, char **argv)
{
	struct ptable_geom g = {.kind = PTABLE_NONE,
				.block_size = 512,
				.wwn = 0x6001405abcdef000ull};
	static uint64_t sizes[PTABLE_MAX_PARTS];
	uint64_t bytes = 0, v;
	int i;

	if (argc < 3 || argc % 2 == 0)
		return usage();
	for (i = 3; i + 1 < argc; i += 2) {
		const char *opt = argv[i], *val = argv[i + 1];

		if (!strcmp(opt, "--ptable")) {
			if (ptable_kind_parse(val, &g.kind))
				return usage();
		} else if (!strcmp(opt, "--sizes")) {
			char *copy = strdup(val), *tok, *save = NULL;

			if (!copy)
				return 1;
			for (tok = strtok_r(copy, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (g.nsizes == PTABLE_MAX_PARTS ||
				    parse_u64(tok, 0, UINT64_MAX,
					      &sizes[g.nsizes])) {
					free(copy);
					return usage();
				}
				g.nsizes++;
			}
			free(copy);
			g.sizes = sizes;
		} else {
			if (parse_u64(val, 0, UINT64_MAX, &v))
				return usage();
			if (!strcmp(opt, "--parts"))
				g.nparts = (unsigned int)v;
			else if (!strcmp(opt, "--size"))
				bytes = v;
			else if (!strcmp(opt, "--block"))
				g.block_size = (uint32_t)v;
			else if (!strcmp(opt, "--wwn"))
				g.wwn = v;
			else if (!strcmp(opt, "--lun"))
				g.lun = (uint32_t)v;
			else
				return usage();
		}
	}
	if (!strcmp(argv[1], "--parse-image"))
		return parse_file(argv[2], g.block_size);
	g.nblocks = bytes / g.block_size;
	return write_image(argv[2], &g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpt_structure),
		cmocka_unit_test(test_gpt_huge_disk),
		cmocka_unit_test(test_guid_unique),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_mbr_past_2tib),
		cmocka_unit_test(test_sizes_rule),
		cmocka_unit_test(test_mbr_sized_logicals),
		cmocka_unit_test(test_synthetic_blocks),
		cmocka_unit_test(test_hostile_gpt),
		cmocka_unit_test(test_hostile_mbr),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_kind_names),
	};

	if (argc > 1 && (!strcmp(argv[1], "--write-image") ||
			 !strcmp(argv[1], "--parse-image")))
		return tool(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
