// SPDX-License-Identifier: MIT
/*
 * Synthetic GPT and MBR partition tables, computed block by block from the
 * geometry (nothing is stored), and a parser with the kernel's semantics.
 *
 * Every public function first turns the geometry into a struct plan on the
 * stack (O(nsizes): it walks the listed sizes once); after that the position
 * of any partition or table block is O(1) arithmetic, or a binary search
 * over the listed sizes for MBR logicals.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "ptable.h"

#define MIB (1024u * 1024u)
#define MAX_BLOCK 4096u
#define MAX_NBLOCKS (1ull << 62)
#define MBR_LIMIT (1ull << 32) /* an MBR addresses blocks 0..2^32 - 1 */

#define MBR_DISKSIG 440
#define MBR_ENTRIES 446
#define MBR_ENTRY_SIZE 16
#define MBR_MAGIC 510
#define MBR_TYPE_GPT 0xee

#define GPT_HDR_SIZE 92
#define GPT_REVISION 0x00010000u
#define GPT_ENTRIES_BYTES (PTABLE_GPT_ENTRIES * PTABLE_GPT_ENTRY_SIZE)
#define GPT_NAME_UNITS 36 /* UTF-16 code units in an entry's name */

/*
 * The kernel refuses entry arrays larger than KMALLOC_MAX_SIZE (4 MiB on
 * x86-64 with 4 KiB pages); the same bound caps what a hostile header can
 * make us read.
 */
#define GPT_MAX_ARRAY (4u * MIB)
/* parse_extended(): give up after 100 EBRs in a row without a partition. */
#define EBR_LOOP_MAX 100

/* Linux filesystem data, 0FC63DAF-8483-4772-8E79-3D69D8477DE4, on disk. */
static const uint8_t linux_data_guid[16] = {
	0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
	0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4,
};

static const uint8_t zero_guid[16];

/* ------------------------------------------------------------------ */
/* Identity: GUIDs and the MBR signature                              */
/* ------------------------------------------------------------------ */

/*
 * The splitmix64 finalizer: a bijection on 64 bits whose output bits each
 * depend on every input bit, so WWNs that differ in one bit (consecutive
 * LUNs) give unrelated GUIDs.
 */
static uint64_t mix64(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ull;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z;
}

/*
 * 122 random-looking bits from (wwn, lun, slot); slot 0 is the disk, n the
 * partition numbered n. The two halves come from different combinations of
 * two independent 64-bit keys, so two inputs collide only if both halves do
 * (about 2^-122 a pair): 630,000 GUIDs are unique with certainty in practice.
 */
static void make_guid(uint64_t wwn, uint32_t lun, unsigned int slot,
		      uint8_t g[16])
{
	uint64_t a = mix64(wwn ^ 0x7364737761726d21ull); /* "sdswarm!" */
	uint64_t key = (uint64_t)lun << 16 | slot;
	uint64_t b = mix64(key + 0x9e3779b97f4a7c15ull);
	uint64_t hi = mix64(a + b);
	uint64_t lo = mix64(a ^ mix64(b ^ 0xd1b54a32d192ed03ull));
	uint16_t ver = (uint16_t)((hi & 0x0fff) | 0x4000); /* version 4 */
	uint16_t clk = (uint16_t)(((lo >> 48) & 0x3fff) | 0x8000); /* 10xx */
	int i;

	/* time_low, time_mid, time_hi_and_version: little-endian on disk. */
	put_le32(g, (uint32_t)(hi >> 32));
	put_le16(g + 4, (uint16_t)(hi >> 16));
	put_le16(g + 6, ver);
	/* clock_seq and node: big-endian, as in the text form. */
	g[8] = (uint8_t)(clk >> 8);
	g[9] = (uint8_t)clk;
	for (i = 0; i < 6; i++)
		g[10 + i] = (uint8_t)(lo >> (40 - 8 * i));
}

void ptable_disk_guid(uint64_t wwn, uint32_t lun, uint8_t guid[16])
{
	make_guid(wwn, lun, 0, guid);
}

uint32_t ptable_mbr_signature(uint64_t wwn, uint32_t lun)
{
	uint64_t x = mix64(mix64(wwn ^ 0x6d62722d7369676eull) + lun);
	uint32_t sig = (uint32_t)(x >> 32);

	/* 0 means "no signature" to several tools. */
	return sig ? sig : 1;
}

void ptable_guid_format(const uint8_t g[16], char buf[PTABLE_GUID_STR_LEN + 1])
{
	snprintf(buf, PTABLE_GUID_STR_LEN + 1,
		 "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X",
		 get_le32(g), (unsigned int)(g[4] | g[5] << 8),
		 (unsigned int)(g[6] | g[7] << 8), g[8], g[9], g[10], g[11],
		 g[12], g[13], g[14], g[15]);
}

const char *ptable_kind_name(enum ptable_kind kind)
{
	switch (kind) {
	case PTABLE_NONE:
		return "none";
	case PTABLE_GPT:
		return "gpt";
	case PTABLE_MBR:
		return "mbr";
	}
	return "?";
}

int ptable_kind_parse(const char *name, enum ptable_kind *out)
{
	if (!name || !out)
		return -EINVAL;
	if (!strcmp(name, "none"))
		*out = PTABLE_NONE;
	else if (!strcmp(name, "gpt"))
		*out = PTABLE_GPT;
	else if (!strcmp(name, "mbr") || !strcmp(name, "dos"))
		*out = PTABLE_MBR;
	else
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The plan: where everything goes                                    */
/* ------------------------------------------------------------------ */

struct plan {
	const struct ptable_geom *g;
	uint64_t align; /* blocks in 1 MiB */
	uint64_t limit; /* exclusive end of the space partitions use */
	uint32_t ent_blocks; /* GPT: blocks of one entry array */
	uint32_t ent_used; /* GPT: of those, blocks holding entries */
	unsigned int n; /* data partitions */
	unsigned int nfixed; /* data partitions 0..nfixed-1 have a size */
	bool logicals; /* MBR with an extended partition */
	uint64_t auto_base; /* start of unsized partition nfixed's room */
	uint64_t auto_size; /* each unsized partition (but the last) */
	uint64_t fixed_start[PTABLE_MAX_PARTS];
};

/* a is a power of two (1 MiB / block size): masks, not divisions. */
static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static uint64_t align_down(uint64_t x, uint64_t a)
{
	return x & ~(a - 1);
}

static bool is_logical(const struct plan *p, unsigned int d)
{
	return p->logicals && d >= 3;
}

static int bad(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -EINVAL;
}

static bool block_size_ok(uint32_t bs)
{
	return bs >= 512 && bs <= MAX_BLOCK && !(bs & (bs - 1));
}

static int plan_make(const struct ptable_geom *g, struct plan *p,
		     const char **why)
{
	uint64_t end = 0, overhead, room;
	unsigned int d, nauto, first_log;

	if (!g)
		return bad(why, "no geometry");
	p->g = g;
	p->n = g->nparts;
	p->limit = 0;
	p->ent_blocks = 0;
	p->ent_used = 0;
	p->nfixed = 0;
	p->logicals = false;
	p->auto_base = 0;
	p->auto_size = 0;
	if (g->kind != PTABLE_NONE && g->kind != PTABLE_GPT &&
	    g->kind != PTABLE_MBR)
		return bad(why, "unknown partition table kind");
	if (!block_size_ok(g->block_size))
		return bad(why, "block size must be 512, 1024, 2048 or 4096");
	if (g->nblocks > MAX_NBLOCKS)
		return bad(why, "disk larger than 2^62 blocks");
	p->align = MIB / g->block_size;
	if (g->kind == PTABLE_NONE) {
		if (g->nparts || g->nsizes)
			return bad(
				why,
				"partitions need a partition table (ptable = gpt or mbr)");
		return 0;
	}
	if (g->nparts > PTABLE_MAX_PARTS)
		return bad(why, "at most 63 partitions");
	if (g->nsizes > g->nparts)
		return bad(why, "more partition sizes than partitions");
	if (g->nsizes && !g->sizes)
		return bad(why, "partition sizes missing");
	p->nfixed = g->nsizes;
	if (g->nsizes && g->sizes[g->nsizes - 1] == 0)
		p->nfixed--;
	for (d = 0; d < p->nfixed; d++)
		if (!g->sizes[d])
			return bad(
				why,
				"only the last partition size may be 0 (the rest of the disk)");

	if (g->kind == PTABLE_GPT) {
		p->ent_blocks = GPT_ENTRIES_BYTES / g->block_size;
		/* First usable (2 + E) must not pass last usable (N-2-E). */
		if (g->nblocks < 2ull * p->ent_blocks + 4)
			return bad(why, "disk too small for a GPT");
		p->limit = g->nblocks - 1 - p->ent_blocks;
		p->ent_used =
			(p->n * PTABLE_GPT_ENTRY_SIZE + g->block_size - 1) /
			g->block_size;
	} else {
		if (!g->nblocks)
			return bad(why, "disk has no blocks");
		p->limit = g->nblocks < MBR_LIMIT ? g->nblocks : MBR_LIMIT;
		p->logicals = p->n > 4;
	}
	if (!p->n)
		return 0;

	/* Sized partitions, in order; each starts on the next boundary. */
	for (d = 0; d < p->nfixed; d++) {
		uint64_t base = d ? align_up(end, p->align) : p->align;
		uint64_t start = base + (is_logical(p, d) ? p->align : 0);

		if (start >= p->limit || g->sizes[d] > p->limit - start) {
			if (g->kind == PTABLE_MBR && g->nblocks > MBR_LIMIT)
				return bad(
					why,
					"partition sizes pass block 2^32 - 1, the last an MBR can address (use ptable = gpt)");
			return bad(why, "partition sizes exceed the disk");
		}
		p->fixed_start[d] = start;
		end = start + g->sizes[d];
	}
	p->auto_base = p->nfixed ? align_up(end, p->align) : p->align;
	nauto = p->n - p->nfixed;
	if (!nauto)
		return 0;

	/* Unsized ones: equal whole MiB; each logical also needs 1 MiB. */
	first_log = p->nfixed > 3 ? p->nfixed : 3;
	overhead = p->logicals ? (uint64_t)(p->n - first_log) * p->align : 0;
	room = p->auto_base < p->limit ? p->limit - p->auto_base : 0;
	if (room < overhead + (uint64_t)nauto * p->align)
		return bad(
			why,
			"disk too small: every unsized partition needs 1 MiB (and every logical 1 MiB more)");
	p->auto_size = align_down((room - overhead) / nauto, p->align);
	return 0;
}

static uint64_t data_start(const struct plan *p, unsigned int d)
{
	unsigned int first_log;
	uint64_t nlog = 0;

	if (d < p->nfixed)
		return p->fixed_start[d];
	if (is_logical(p, d)) {
		first_log = p->nfixed > 3 ? p->nfixed : 3;
		nlog = d + 1 - first_log;
	}
	return p->auto_base + (uint64_t)(d - p->nfixed) * p->auto_size +
	       nlog * p->align;
}

static uint64_t data_size(const struct plan *p, unsigned int d)
{
	if (d < p->nfixed)
		return p->g->sizes[d];
	/* The last one takes all the whole MiB that are left: ending on a
	 * boundary too keeps gdisk (and encryption tools) content. */
	if (d == p->n - 1)
		return align_down(p->limit - data_start(p, d), p->align);
	return p->auto_size;
}

/* The EBR of logical d sits at the start of the 1 MiB gap before it. */
static uint64_t ebr_lba(const struct plan *p, unsigned int d)
{
	return data_start(p, d) - p->align;
}

static uint64_t ext_start(const struct plan *p)
{
	return ebr_lba(p, 3);
}

/*
 * The first logical whose EBR is at or after lba, or p->n if none: a binary
 * search over the sized logicals (their EBRs ascend), then arithmetic over
 * the unsized ones, whose EBRs are auto_size + align apart.
 */
static unsigned int ebr_search(const struct plan *p, uint64_t lba)
{
	unsigned int lo = 3, hi = p->nfixed > 3 ? p->nfixed : 3;
	uint64_t first, stride, k;

	if (!p->logicals)
		return p->n;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ebr_lba(p, mid) >= lba)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < p->nfixed || lo >= p->n)
		return lo;
	first = ebr_lba(p, lo);
	if (lba <= first)
		return lo;
	stride = p->auto_size + p->align;
	k = (lba - first + stride - 1) / stride;
	return k < p->n - lo ? lo + (unsigned int)k : p->n;
}

/* Table blocks as up to three ascending intervals [start, end). */
static bool next_table_block(const struct plan *p, uint64_t lba, uint64_t *out)
{
	const struct ptable_geom *g = p->g;
	unsigned int d;

	if (lba >= g->nblocks)
		return false;
	switch (g->kind) {
	case PTABLE_GPT: {
		uint64_t bk = g->nblocks - 1 - p->ent_blocks;
		uint64_t iv[3][2] = {
			{0, 2 + p->ent_used},
			{bk, bk + p->ent_used},
			{g->nblocks - 1, g->nblocks},
		};
		int i;

		for (i = 0; i < 3; i++) {
			if (lba < iv[i][1] && iv[i][0] < iv[i][1]) {
				*out = lba > iv[i][0] ? lba : iv[i][0];
				return true;
			}
		}
		return false;
	}
	case PTABLE_MBR:
		if (lba == 0) {
			*out = 0;
			return true;
		}
		d = ebr_search(p, lba);
		if (d >= p->n)
			return false;
		*out = ebr_lba(p, d);
		return true;
	case PTABLE_NONE:
		break;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Block content                                                      */
/* ------------------------------------------------------------------ */

/*
 * CHS as fdisk writes it for a 255-head, 63-sector geometry; past cylinder
 * 1023 the field saturates at 1023/254/63. Nothing modern reads it.
 */
static void put_chs(uint8_t *p, uint64_t lba)
{
	uint64_t c = lba / (255 * 63);
	unsigned int h = (unsigned int)(lba / 63 % 255);
	unsigned int s = (unsigned int)(lba % 63 + 1);

	if (c > 1023) {
		c = 1023;
		h = 254;
		s = 63;
	}
	p[0] = (uint8_t)h;
	p[1] = (uint8_t)(s | ((c >> 2) & 0xc0));
	p[2] = (uint8_t)c;
}

static void put_mbr_entry(uint8_t *sect, unsigned int slot, uint8_t type,
			  uint64_t abs_start, uint64_t nblocks, uint32_t rel)
{
	uint8_t *e = sect + MBR_ENTRIES + slot * MBR_ENTRY_SIZE;

	e[0] = 0;
	put_chs(e + 1, abs_start);
	e[4] = type;
	put_chs(e + 5, abs_start + nblocks - 1);
	put_le32(e + 8, rel);
	put_le32(e + 12, (uint32_t)nblocks);
}

static void put_magic(uint8_t *sect)
{
	sect[MBR_MAGIC] = 0x55;
	sect[MBR_MAGIC + 1] = 0xaa;
}

static void fill_pmbr(const struct plan *p, uint8_t *b)
{
	uint64_t last = p->g->nblocks - 1;
	uint8_t *e = b + MBR_ENTRIES;

	/* UEFI 2.x 5.2.3: start CHS 0/0/2, end CHS of the last block or all
	 * ones if it does not fit, size min(N - 1, 0xFFFFFFFF). */
	e[1] = 0x00;
	e[2] = 0x02;
	e[3] = 0x00;
	e[4] = MBR_TYPE_GPT;
	if (last / (255 * 63) > 1023)
		memset(e + 5, 0xff, 3);
	else
		put_chs(e + 5, last);
	put_le32(e + 8, 1);
	put_le32(e + 12, last > 0xffffffffu ? 0xffffffffu : (uint32_t)last);
	put_magic(b);
}

static void fill_mbr(const struct plan *p, uint8_t *b)
{
	const struct ptable_geom *g = p->g;
	unsigned int d, nprim = p->logicals ? 3 : p->n;

	put_le32(b + MBR_DISKSIG, ptable_mbr_signature(g->wwn, g->lun));
	for (d = 0; d < nprim; d++) {
		uint64_t s = data_start(p, d);

		put_mbr_entry(b, d, PTABLE_MBR_LINUX, s, data_size(p, d),
			      (uint32_t)s);
	}
	if (p->logicals) {
		uint64_t es = ext_start(p);

		put_mbr_entry(b, 3, PTABLE_MBR_EXTENDED, es, p->limit - es,
			      (uint32_t)es);
	}
	put_magic(b);
}

/*
 * EBR of logical d: entry 1 the logical, relative to this EBR; entry 2 the
 * link to the next EBR, relative to the extended partition's start, sized
 * from that EBR to the end of its logical (what fdisk writes).
 */
static void fill_ebr(const struct plan *p, unsigned int d, uint8_t *b)
{
	uint64_t es = ext_start(p);

	put_mbr_entry(b, 0, PTABLE_MBR_LINUX, data_start(p, d), data_size(p, d),
		      (uint32_t)p->align);
	if (d + 1 < p->n) {
		uint64_t next = ebr_lba(p, d + 1);
		uint64_t span =
			data_start(p, d + 1) + data_size(p, d + 1) - next;

		put_mbr_entry(b, 1, PTABLE_MBR_EXTENDED, next, span,
			      (uint32_t)(next - es));
	}
	put_magic(b);
}

static void fill_gpt_entry(const struct plan *p, unsigned int d, uint8_t *e)
{
	static const char prefix[] = "sdswarm-";
	uint64_t start = data_start(p, d);
	unsigned int num = d + 1, i, k = 0;
	char digits[3];

	memcpy(e, linux_data_guid, 16);
	make_guid(p->g->wwn, p->g->lun, num, e + 16);
	put_le64(e + 32, start);
	put_le64(e + 40, start + data_size(p, d) - 1);
	memset(e + 48, 0, 8 + GPT_NAME_UNITS * 2); /* attributes, name */
	/* "sdswarm-N" in UTF-16LE, N <= 63: by hand, snprintf() would cost
	 * more than the rest of the entry. */
	for (i = 0; i < sizeof(prefix) - 1; i++)
		put_le16(e + 56 + 2 * k++, (uint16_t)prefix[i]);
	i = 0;
	do
		digits[i++] = (char)('0' + num % 10);
	while ((num /= 10) && i < sizeof(digits));
	while (i)
		put_le16(e + 56 + 2 * k++, (uint16_t)digits[--i]);
}

/*
 * CRC32 of the whole 128-entry array: the n entries, then the zeros after
 * them without reading them. Appending m zero bytes multiplies zlib's
 * register (~crc) by x^(8m) mod P, which crc32_combine_op() does with a
 * zero second CRC (zlib >= 1.2.12): well under a microsecond instead of
 * ~1 ns a byte. What remains, the CRC over 63 entries, is most of a
 * header's ~14 us.
 */
static uint32_t gpt_entries_crc(const struct plan *p)
{
	uint8_t e[PTABLE_GPT_ENTRY_SIZE];
	uLong crc = crc32(0, Z_NULL, 0);
	z_off_t rest;
	unsigned int d;

	for (d = 0; d < p->n; d++) {
		fill_gpt_entry(p, d, e);
		crc = crc32(crc, e, sizeof(e));
	}
	rest = (z_off_t)(PTABLE_GPT_ENTRIES - p->n) * PTABLE_GPT_ENTRY_SIZE;
	crc = ~crc32_combine_op(~crc & 0xffffffffu, 0,
				crc32_combine_gen(rest)) &
	      0xffffffffu;
	return (uint32_t)crc;
}

static void fill_gpt_header(const struct plan *p, bool primary, uint8_t *b)
{
	const struct ptable_geom *g = p->g;
	uint64_t last = g->nblocks - 1;

	memcpy(b, "EFI PART", 8);
	put_le32(b + 8, GPT_REVISION);
	put_le32(b + 12, GPT_HDR_SIZE);
	put_le64(b + 24, primary ? 1 : last);
	put_le64(b + 32, primary ? last : 1);
	put_le64(b + 40, 2 + p->ent_blocks);
	put_le64(b + 48, last - 1 - p->ent_blocks);
	ptable_disk_guid(g->wwn, g->lun, b + 56);
	put_le64(b + 72, primary ? 2 : last - p->ent_blocks);
	put_le32(b + 80, PTABLE_GPT_ENTRIES);
	put_le32(b + 84, PTABLE_GPT_ENTRY_SIZE);
	put_le32(b + 88, gpt_entries_crc(p));
	/* The header CRC covers the header with its own field zero. */
	put_le32(b + 16, (uint32_t)crc32(crc32(0, Z_NULL, 0), b, GPT_HDR_SIZE));
}

static void fill_gpt_entries(const struct plan *p, uint64_t blk, uint8_t *b)
{
	unsigned int per = p->g->block_size / PTABLE_GPT_ENTRY_SIZE;
	unsigned int d = (unsigned int)blk * per, k;

	for (k = 0; k < per && d < p->n; k++, d++)
		fill_gpt_entry(p, d, b + k * PTABLE_GPT_ENTRY_SIZE);
}

/* Write table block lba into b, which is zeroed. */
static void fill_block(const struct plan *p, uint64_t lba, uint8_t *b)
{
	const struct ptable_geom *g = p->g;
	uint64_t bk;
	unsigned int d;

	if (g->kind == PTABLE_MBR) {
		if (lba == 0) {
			fill_mbr(p, b);
			return;
		}
		d = ebr_search(p, lba);
		if (d < p->n && ebr_lba(p, d) == lba)
			fill_ebr(p, d, b);
		return;
	}
	if (g->kind != PTABLE_GPT)
		return;
	bk = g->nblocks - 1 - p->ent_blocks;
	if (lba == 0)
		fill_pmbr(p, b);
	else if (lba == 1)
		fill_gpt_header(p, true, b);
	else if (lba == g->nblocks - 1)
		fill_gpt_header(p, false, b);
	else if (lba < 2 + p->ent_blocks)
		fill_gpt_entries(p, lba - 2, b);
	else if (lba >= bk && lba < bk + p->ent_blocks)
		fill_gpt_entries(p, lba - bk, b);
}

/* ------------------------------------------------------------------ */
/* Public: layout and read                                            */
/* ------------------------------------------------------------------ */

int ptable_check(const struct ptable_geom *g, const char **why)
{
	struct plan p;

	return plan_make(g, &p, why);
}

int ptable_count(const struct ptable_geom *g)
{
	struct plan p;
	int ret = plan_make(g, &p, NULL);

	if (ret < 0)
		return ret;
	return (int)p.n + (p.logicals ? 1 : 0);
}

int ptable_layout(const struct ptable_geom *g, unsigned int i,
		  struct ptable_part *out)
{
	struct plan p;
	unsigned int d;
	int ret = plan_make(g, &p, NULL);

	if (ret < 0)
		return ret;
	if (!out)
		return -EINVAL;
	if (i >= p.n + (p.logicals ? 1u : 0u))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->number = i + 1;
	if (p.logicals && i == 3) {
		/* The kernel's msdos.c shows only the extended partition's
		 * first 2 sectors of 512 bytes, at least one logical block. */
		out->start = ext_start(&p);
		out->table_nblocks = p.limit - out->start;
		out->nblocks = g->block_size == 512 ? 2 : 1;
		out->mbr_type = PTABLE_MBR_EXTENDED;
		out->extended = true;
		return 0;
	}
	d = p.logicals && i > 3 ? i - 1 : i;
	out->start = data_start(&p, d);
	out->nblocks = data_size(&p, d);
	out->table_nblocks = out->nblocks;
	if (g->kind == PTABLE_MBR) {
		out->mbr_type = PTABLE_MBR_LINUX;
	} else {
		memcpy(out->type_guid, linux_data_guid, 16);
		make_guid(g->wwn, g->lun, d + 1, out->guid);
	}
	return 0;
}

int ptable_next_synthetic(const struct ptable_geom *g, uint64_t lba,
			  uint64_t *next)
{
	struct plan p;
	uint64_t at;
	int ret = plan_make(g, &p, NULL);

	if (ret < 0)
		return ret;
	if (!next_table_block(&p, lba, &at))
		return 0;
	if (next)
		*next = at;
	return 1;
}

int ptable_range_is_synthetic(const struct ptable_geom *g, uint64_t lba,
			      uint64_t n)
{
	struct plan p;
	uint64_t at;
	int ret = plan_make(g, &p, NULL);

	if (ret < 0)
		return ret;
	if (!n || !next_table_block(&p, lba, &at))
		return 0;
	return at - lba < n;
}

int ptable_block_is_synthetic(const struct ptable_geom *g, uint64_t lba)
{
	return ptable_range_is_synthetic(g, lba, 1);
}

int ptable_read(const struct ptable_geom *g, uint64_t lba, uint32_t nblocks,
		void *buf)
{
	struct plan p;
	uint8_t *b = buf;
	uint64_t at, end;
	int ret = plan_make(g, &p, NULL);

	if (ret < 0)
		return ret;
	if (!buf)
		return -EINVAL;
	if (lba > g->nblocks || nblocks > g->nblocks - lba)
		return -ERANGE;
	memset(b, 0, (size_t)nblocks * g->block_size);
	end = lba + nblocks;
	at = lba;
	while (next_table_block(&p, at, &at) && at < end) {
		fill_block(&p, at, b + (size_t)(at - lba) * g->block_size);
		at++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Parser                                                             */
/* ------------------------------------------------------------------ */

struct pctx {
	int (*read_blocks)(void *arg, uint64_t lba, uint32_t n, void *buf);
	void *arg;
	uint32_t bs;
	uint64_t nblocks;
	struct ptable_part *parts;
	unsigned int max;
	unsigned int stored;
	unsigned int found;
	uint8_t buf[MAX_BLOCK];
};

struct gpt_hdr {
	uint64_t entry_lba;
	uint32_t nentries;
	uint32_t entries_crc;
};

static int rd(struct pctx *c, uint64_t lba, uint32_t n)
{
	int ret = c->read_blocks(c->arg, lba, n, c->buf);

	return ret < 0 ? ret : 0;
}

static void reset(struct pctx *c)
{
	c->stored = 0;
	c->found = 0;
}

/*
 * blk_add_partition(): drop empty partitions and ones starting past the
 * end, cut the rest at the end; then keep the lowest-numbered c->max in
 * ascending order (insertion: at most 255 partitions, each O(max)).
 */
static void put(struct pctx *c, const struct ptable_part *np)
{
	struct ptable_part q = *np;
	unsigned int pos, keep;

	if (!q.nblocks || q.start >= c->nblocks)
		return;
	if (q.nblocks > c->nblocks - q.start)
		q.nblocks = c->nblocks - q.start;
	c->found++;
	pos = c->stored;
	while (pos && c->parts[pos - 1].number > q.number)
		pos--;
	if (pos >= c->max)
		return;
	keep = c->stored < c->max ? c->stored : c->max - 1;
	memmove(&c->parts[pos + 1], &c->parts[pos],
		(keep - pos) * sizeof(c->parts[0]));
	c->parts[pos] = q;
	if (c->stored < c->max)
		c->stored++;
}

/* efi.c is_pmbr_valid(): protective or hybrid, either will do. */
static bool pmbr_valid(const uint8_t *b)
{
	int i;

	if (b[MBR_MAGIC] != 0x55 || b[MBR_MAGIC + 1] != 0xaa)
		return false;
	for (i = 0; i < 4; i++) {
		const uint8_t *e = b + MBR_ENTRIES + i * MBR_ENTRY_SIZE;

		if (e[4] == MBR_TYPE_GPT && get_le32(e + 8) == 1)
			return true;
	}
	return false;
}

static bool guid_is_zero(const uint8_t *g)
{
	return !memcmp(g, zero_guid, 16);
}

/* efi.c is_gpt_valid(), the header half. 1 valid, 0 not, < 0 read error. */
static int gpt_header(struct pctx *c, uint64_t lba, struct gpt_hdr *h)
{
	static const uint8_t zero4[4];
	uint64_t last = c->nblocks - 1, first_use, last_use, pt_size, eblocks;
	uint32_t hsize;
	uLong crc;
	int ret;

	if (lba > last)
		return 0;
	ret = rd(c, lba, 1);
	if (ret < 0)
		return ret;
	if (memcmp(c->buf, "EFI PART", 8))
		return 0;
	hsize = get_le32(c->buf + 12);
	if (hsize > c->bs || hsize < GPT_HDR_SIZE)
		return 0;
	crc = crc32(0, Z_NULL, 0);
	crc = crc32(crc, c->buf, 16);
	crc = crc32(crc, zero4, 4);
	crc = crc32(crc, c->buf + 20, hsize - 20);
	if ((uint32_t)crc != get_le32(c->buf + 16))
		return 0;
	if (get_le64(c->buf + 24) != lba)
		return 0;
	first_use = get_le64(c->buf + 40);
	last_use = get_le64(c->buf + 48);
	if (first_use > last || last_use > last || last_use < first_use)
		return 0;
	if (get_le32(c->buf + 84) != PTABLE_GPT_ENTRY_SIZE)
		return 0;
	h->nentries = get_le32(c->buf + 80);
	h->entry_lba = get_le64(c->buf + 72);
	h->entries_crc = get_le32(c->buf + 88);
	pt_size = (uint64_t)h->nentries * PTABLE_GPT_ENTRY_SIZE;
	/* An empty array is a failed allocation to the kernel. */
	if (!pt_size || pt_size > GPT_MAX_ARRAY)
		return 0;
	/* read_lba() must get the whole array from inside the disk. */
	eblocks = (pt_size + c->bs - 1) / c->bs;
	if (h->entry_lba > last || eblocks > c->nblocks - h->entry_lba)
		return 0;
	return 1;
}

static void gpt_entry(struct pctx *c, unsigned int idx, const uint8_t *e)
{
	struct ptable_part q;
	uint64_t last = c->nblocks - 1, start, end;

	/* is_pte_valid(), plus end >= start. */
	if (guid_is_zero(e))
		return;
	start = get_le64(e + 32);
	end = get_le64(e + 40);
	if (start > last || end > last || end < start)
		return;
	memset(&q, 0, sizeof(q));
	q.number = idx + 1;
	q.start = start;
	q.nblocks = end - start + 1;
	q.table_nblocks = q.nblocks;
	memcpy(q.type_guid, e, 16);
	memcpy(q.guid, e + 16, 16);
	put(c, &q);
}

/*
 * The entry array in chunks of one 4 KiB buffer: CRC over all of it, and
 * the first 255 entries (state->limit - 1) taken as partitions, undone if
 * the CRC turns out wrong. 1 valid, 0 CRC mismatch, < 0 read error.
 */
static int gpt_entries(struct pctx *c, const struct gpt_hdr *h)
{
	uint64_t rest = (uint64_t)h->nentries * PTABLE_GPT_ENTRY_SIZE;
	uint64_t lba = h->entry_lba;
	uint32_t per_read = MAX_BLOCK / c->bs;
	unsigned int idx = 0;
	uLong crc = crc32(0, Z_NULL, 0);
	int ret;

	reset(c);
	while (rest) {
		uint64_t want = (rest + c->bs - 1) / c->bs;
		uint32_t n = want < per_read ? (uint32_t)want : per_read;
		uint64_t bytes = (uint64_t)n * c->bs;
		uint64_t off;

		if (bytes > rest)
			bytes = rest;
		ret = rd(c, lba, n);
		if (ret < 0)
			return ret;
		crc = crc32(crc, c->buf, (uInt)bytes);
		for (off = 0; off < bytes && idx < PTABLE_MAX_NUMBER;
		     off += PTABLE_GPT_ENTRY_SIZE, idx++)
			gpt_entry(c, idx, c->buf + off);
		rest -= bytes;
		lba += n;
	}
	if ((uint32_t)crc != h->entries_crc) {
		reset(c);
		return 0;
	}
	return 1;
}

/* 1 GPT found, 0 not a GPT, < 0 read error. */
static int parse_gpt(struct pctx *c)
{
	uint64_t where[2] = {1, c->nblocks - 1};
	struct gpt_hdr h;
	int i, ret;

	if (c->nblocks < 2)
		return 0;
	ret = rd(c, 0, 1);
	if (ret < 0)
		return ret;
	if (!pmbr_valid(c->buf))
		return 0;
	for (i = 0; i < 2; i++) {
		if (i && where[1] == where[0])
			break;
		ret = gpt_header(c, where[i], &h);
		if (ret <= 0) {
			if (ret < 0)
				return ret;
			continue;
		}
		ret = gpt_entries(c, &h);
		if (ret)
			return ret;
	}
	return 0;
}

static bool is_extended(uint8_t type)
{
	return type == 0x05 || type == 0x0f || type == 0x85;
}

static void put_mbr(struct pctx *c, unsigned int number, uint64_t start,
		    uint64_t nblocks, uint64_t table_nblocks, uint8_t type)
{
	struct ptable_part q;

	memset(&q, 0, sizeof(q));
	q.number = number;
	q.start = start;
	q.nblocks = nblocks;
	q.table_nblocks = table_nblocks;
	q.mbr_type = type;
	q.extended = is_extended(type);
	put(c, &q);
}

/*
 * msdos.c parse_extended(): walk the EBR chain of the extended partition
 * [first, first + first_size). Each EBR's non-extended entries are logicals
 * relative to that EBR (entries 3 and 4 only if they stay inside both the
 * link's span and the extended partition: they are often garbage); its
 * first extended entry links to the next EBR, relative to first. Ends at a
 * missing 0x55AA, a block past the end, number 255, or 100 EBRs in a row
 * that add nothing (a loop).
 */
static int parse_extended(struct pctx *c, uint64_t first, uint64_t first_size,
			  unsigned int *next)
{
	uint64_t ebr = first, ebr_span = first_size;
	unsigned int loopct = 0;
	int ret, i;

	for (;;) {
		const uint8_t *e;

		if (++loopct > EBR_LOOP_MAX)
			return 0;
		if (*next > PTABLE_MAX_NUMBER)
			return 0;
		if (ebr >= c->nblocks)
			return 0;
		ret = rd(c, ebr, 1);
		if (ret < 0)
			return ret;
		if (c->buf[MBR_MAGIC] != 0x55 || c->buf[MBR_MAGIC + 1] != 0xaa)
			return 0;
		for (i = 0; i < 4; i++) {
			uint64_t offs, size, at;

			e = c->buf + MBR_ENTRIES + i * MBR_ENTRY_SIZE;
			size = get_le32(e + 12);
			if (!size || is_extended(e[4]))
				continue;
			offs = get_le32(e + 8);
			at = ebr + offs;
			if (i >= 2 && (offs + size > ebr_span || at < first ||
				       at + size > first + first_size))
				continue;
			put_mbr(c, *next, at, size, size, e[4]);
			loopct = 0;
			if (++*next > PTABLE_MAX_NUMBER)
				return 0;
		}
		for (i = 0; i < 4; i++) {
			e = c->buf + MBR_ENTRIES + i * MBR_ENTRY_SIZE;
			if (get_le32(e + 12) && is_extended(e[4]))
				break;
		}
		if (i == 4)
			return 0;
		ebr = first + get_le32(e + 8);
		ebr_span = get_le32(e + 12);
	}
}

/* 1 MBR found, 0 none, < 0 read error. */
static int parse_mbr(struct pctx *c)
{
	uint8_t slots[4 * MBR_ENTRY_SIZE];
	unsigned int next = 5;
	int i, ret;

	reset(c);
	if (!c->nblocks)
		return 0;
	ret = rd(c, 0, 1);
	if (ret < 0)
		return ret;
	if (c->buf[MBR_MAGIC] != 0x55 || c->buf[MBR_MAGIC + 1] != 0xaa)
		return 0;
	memcpy(slots, c->buf + MBR_ENTRIES, sizeof(slots));
	/* A boot flag other than 0/0x80: a FAT boot sector, or junk. */
	for (i = 0; i < 4; i++)
		if (slots[i * MBR_ENTRY_SIZE] & 0x7f)
			return 0;
	/* A GPT disk whose GPT did not check out: msdos.c leaves it alone. */
	for (i = 0; i < 4; i++)
		if (slots[i * MBR_ENTRY_SIZE + 4] == MBR_TYPE_GPT)
			return 0;
	for (i = 0; i < 4; i++) {
		const uint8_t *e = slots + i * MBR_ENTRY_SIZE;
		uint64_t start = get_le32(e + 8), size = get_le32(e + 12);

		if (!size)
			continue;
		if (is_extended(e[4])) {
			/*
			 * msdos.c: n = min(size, max(sector_size, 2)) in
			 * 512-byte units, "leave room for LILO" but stop mkfs:
			 * 2 blocks of 512, one block of anything larger.
			 */
			uint64_t shown = c->bs == 512 ? 2 : 1;

			put_mbr(c, (unsigned int)i + 1, start,
				size < shown ? size : shown, size, e[4]);
			ret = parse_extended(c, start, size, &next);
			if (ret < 0)
				return ret;
			continue;
		}
		put_mbr(c, (unsigned int)i + 1, start, size, size, e[4]);
	}
	return 1;
}

int ptable_parse(int (*read_blocks)(void *arg, uint64_t lba, uint32_t n,
				    void *buf),
		 void *arg, uint32_t block_size, uint64_t nblocks,
		 struct ptable_part *parts, unsigned int max,
		 unsigned int *nfound)
{
	struct pctx c;
	int ret, kind = PTABLE_NONE;

	if (nfound)
		*nfound = 0;
	if (!read_blocks || !block_size_ok(block_size) || (max && !parts))
		return -EINVAL;
	c.read_blocks = read_blocks;
	c.arg = arg;
	c.bs = block_size;
	c.nblocks = nblocks;
	c.parts = parts;
	c.max = max;
	reset(&c);

	ret = parse_gpt(&c);
	if (ret < 0)
		return ret;
	if (ret) {
		kind = PTABLE_GPT;
	} else {
		ret = parse_mbr(&c);
		if (ret < 0)
			return ret;
		if (ret)
			kind = PTABLE_MBR;
		else
			reset(&c);
	}
	if (nfound)
		*nfound = c.found;
	return kind;
}
