/* SPDX-License-Identifier: MIT */
/*
 * Synthetic partition tables: a GPT or an MBR computed on read from a LUN's
 * geometry and WWN (nothing stored per LUN), and a parser that reads any
 * table the way the kernel's block/partitions/{efi,msdos}.c does.
 */
#ifndef SDSWARM_PTABLE_H
#define SDSWARM_PTABLE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most data partitions a synthetic table holds (the `partitions` key). */
#define PTABLE_MAX_PARTS 63
/* Highest partition number the kernel assigns (DISK_MAX_PARTS - 1). */
#define PTABLE_MAX_NUMBER 255
/* A synthetic GPT always has 128 entries of 128 bytes (16 KiB). */
#define PTABLE_GPT_ENTRIES 128
#define PTABLE_GPT_ENTRY_SIZE 128
/* MBR system ids the synthetic MBR uses. */
#define PTABLE_MBR_LINUX 0x83
#define PTABLE_MBR_EXTENDED 0x05
/* "0FC63DAF-8483-4772-8E79-3D69D8477DE4" without the NUL. */
#define PTABLE_GUID_STR_LEN 36

enum ptable_kind {
	PTABLE_NONE = 0,
	PTABLE_GPT,
	PTABLE_MBR,
};

/*
 * What a LUN's table looks like. A plain value: the LUN layer builds one on
 * the stack from the group's settings and the LUN's WWN.
 *
 * Layout rule, for both kinds: every partition starts on a 1 MiB boundary
 * (2048 blocks of 512, 256 of 4096); the first at 1 MiB. A partition with a
 * listed size has exactly that many blocks. Partitions without one (index
 * >= nfixed, where nfixed is @nsizes, or @nsizes - 1 if the last listed size
 * is 0) share what is left equally in whole MiB, and the last of them also
 * takes the whole MiB left over, up to the end of the usable space (the last
 * usable LBA for GPT; the disk's end, or block 2^32 - 1 if that comes first,
 * for MBR); less than 1 MiB at the end stays free. Only the last listed size
 * may be 0. With no sizes at all the disk is split equally.
 *
 * MBR numbering: @nparts <= 4 gives primaries 1..N. @nparts > 4 gives
 * primaries 1, 2, 3, the extended partition (type 0x05) as 4, spanning from
 * its first EBR to the end of the usable space, and logicals 5..N+1, each
 * 1 MiB after its EBR (as fdisk lays them out: EBR at the start of the gap).
 * GPT numbering is 1..N.
 */
struct ptable_geom {
	enum ptable_kind kind;
	uint32_t block_size; /* 512, 1024, 2048 or 4096 */
	uint64_t nblocks; /* capacity in blocks */
	unsigned int nparts; /* data partitions, 0..PTABLE_MAX_PARTS */
	const uint64_t *sizes; /* optional sizes in blocks (see above) */
	unsigned int nsizes; /* entries in @sizes, 0..@nparts */
	uint64_t wwn; /* NAA-6 WWN: seeds GUIDs and MBR signature */
	uint32_t lun; /* LUN number: mixed into the same seed */
};

/*
 * One partition as the kernel presents it. GUIDs are in GPT on-disk byte
 * order (first three fields little-endian); zero for MBR partitions.
 */
struct ptable_part {
	unsigned int number; /* kernel partition number, 1..255 */
	uint64_t start; /* first LBA */
	uint64_t nblocks; /* blocks the kernel gives the partition */
	uint64_t table_nblocks; /* blocks the table records (see below) */
	uint8_t mbr_type; /* MBR system id; 0 for GPT */
	bool extended; /* an MBR extended partition (0x05/0x0f/0x85) */
	uint8_t type_guid[16]; /* GPT partition type */
	uint8_t guid[16]; /* GPT unique partition GUID */
};
/*
 * @table_nblocks differs from @nblocks for an extended partition, which the
 * kernel shows as 2 blocks (512-byte sectors) or 1 block (larger ones), and
 * for a parsed partition the kernel truncates at the end of the disk.
 */

/**
 * ptable_check() - whether a geometry describes a table that can be built.
 * @g: the geometry.
 * @why: out, optional: a static sentence saying what is wrong (on error).
 *
 * Every other ptable_ function that takes a geometry runs the same check,
 * so a geometry that passes here works everywhere.
 *
 * Context: any; pure. O(@g->nsizes).
 * Return: 0; -EINVAL for an unknown kind, a bad block size, more than
 * PTABLE_MAX_PARTS partitions, partitions with kind NONE, more sizes than
 * partitions, a 0 size that is not the last, sizes that do not fit (for MBR
 * also past block 2^32 - 1, which an MBR cannot address), a disk too small
 * for the table or for 1 MiB per unsized partition, or more than 2^62 blocks.
 */
int ptable_check(const struct ptable_geom *g, const char **why);

/**
 * ptable_count() - how many partitions the kernel will see.
 * @g: the geometry.
 *
 * Context: any; pure. O(@g->nsizes).
 * Return: @g->nparts, plus one for the MBR extended partition when
 * @g->nparts > 4; -EINVAL as ptable_check().
 */
int ptable_count(const struct ptable_geom *g);

/**
 * ptable_layout() - the @i-th partition the kernel will see.
 * @g: the geometry.
 * @i: 0-based, 0..ptable_count() - 1 inclusive; the partition number is
 *     always @i + 1 (for MBR with more than 4, 4 is the extended one).
 * @out: out, the partition exactly as ptable_parse() reads it back.
 *
 * Context: any; pure. O(1) beyond the geometry check.
 * Return: 0; -EINVAL as ptable_check(); -ENOENT if @i is out of range.
 */
int ptable_layout(const struct ptable_geom *g, unsigned int i,
		  struct ptable_part *out);

/**
 * ptable_next_synthetic() - the first table block at or after @lba.
 * @g: the geometry.
 * @lba: where to start looking.
 * @next: out, the block (only when 1 is returned).
 *
 * Table blocks are those ptable_read() fills with anything but zeros: the
 * (protective) MBR, the GPT headers and the entry blocks that hold entries
 * (primary and backup), the EBRs. Entry blocks past the last entry read as
 * zeros and do not count: the store's unwritten zeros serve them the same.
 *
 * Context: any; pure. GPT or an equal split: O(1), about 10 ns; a sizes
 * list adds about 4 ns a listed size (the geometry check walks it).
 * Return: 1 found, 0 no table block at or after @lba, -EINVAL as
 * ptable_check().
 */
int ptable_next_synthetic(const struct ptable_geom *g, uint64_t lba,
			  uint64_t *next);

/**
 * ptable_range_is_synthetic() - whether [@lba, @lba + @n) holds a table block.
 * @g: the geometry.
 * @lba: first block.
 * @n: number of blocks; 0 is an empty range.
 *
 * The LUN layer's fast test on every read: false means the store alone
 * serves the range.
 *
 * Context: any; pure. Cost as ptable_next_synthetic().
 * Return: 1 yes, 0 no, -EINVAL as ptable_check().
 */
int ptable_range_is_synthetic(const struct ptable_geom *g, uint64_t lba,
			      uint64_t n);

/**
 * ptable_block_is_synthetic() - whether @lba is a table block.
 * @g: the geometry.
 * @lba: the block.
 *
 * Context: any; pure.
 * Return: 1 yes, 0 no, -EINVAL as ptable_check().
 */
int ptable_block_is_synthetic(const struct ptable_geom *g, uint64_t lba);

/**
 * ptable_read() - the synthetic content of blocks [@lba, @lba + @nblocks).
 * @g: the geometry.
 * @lba: first block.
 * @nblocks: number of blocks.
 * @buf: out, @nblocks * @g->block_size bytes; blocks that are not table
 *       blocks come back as zeros.
 *
 * No allocation. A GPT header block costs a CRC32 over its entries (about
 * 14 us with 63 of them, with zlib at 1.2 GB/s), an entry block ~0.1 us,
 * anything else a memset and a few stores.
 *
 * Context: any; pure.
 * Return: 0; -EINVAL as ptable_check() or for a NULL @buf; -ERANGE if the
 * range passes the end of the disk.
 */
int ptable_read(const struct ptable_geom *g, uint64_t lba, uint32_t nblocks,
		void *buf);

/**
 * ptable_parse() - read a partition table as the Linux kernel would.
 * @read_blocks: reads @n blocks at @lba into @buf; returns >= 0 or -errno.
 *               Called with @n <= 4096 / @block_size, never past the end.
 * @arg: passed to @read_blocks.
 * @block_size: logical block size: 512, 1024, 2048 or 4096.
 * @nblocks: capacity in blocks.
 * @parts: out, the lowest-numbered min(@max, *@nfound) partitions in
 *         ascending number order; may be NULL if @max is 0.
 * @max: room in @parts.
 * @nfound: out, optional: how many partitions the kernel would add.
 *
 * GPT (efi.c) first: a protective or hybrid MBR (0x55AA, an 0xEE entry
 * starting at LBA 1), then the primary header at LBA 1, else the backup at
 * the last LBA; a header counts if its signature, size (92..@block_size),
 * CRC, own LBA, usable range, entry size (128) and entry array (at most
 * 4 MiB, inside the disk, CRC) all check out. Entries 1..255 with a non-zero
 * type GUID inside the disk become partitions numbered by their slot.
 * Unlike the kernel, an entry that ends before it starts is ignored (the
 * kernel would make it a huge partition). Note: the kernel itself reads the
 * backup only when booted with "gpt" (force_gpt); by default a bad primary
 * leaves a GPT disk with no partitions at all.
 *
 * Otherwise MBR (msdos.c): 0x55AA, every boot flag 0 or 0x80 and no 0xEE
 * entry (else no partitions). Slots 1..4 with a non-zero size are partitions
 * of their slot number; an extended one (0x05, 0x0f, 0x85) is presented as
 * its first 2 blocks (512-byte sectors) or 1 block and its EBR chain gives
 * logicals from 5 on, with the kernel's checks on EBR entries 3 and 4, its
 * bound of 100 EBRs without a partition and numbers up to 255. BSD, Solaris,
 * UnixWare, Minix and AIX sub-tables are not read.
 *
 * Finally, as the kernel adds them: a partition of size 0 or starting past
 * the end is dropped, one running past the end is cut at the end.
 *
 * Bounded for any input: at most 1 + 2 * (1 + 1024) block reads for GPT
 * (4 MiB entry arrays) plus 1 + 255 * 101 for MBR; no allocation.
 *
 * Context: any; uses about 4.5 KiB of stack.
 * Return: the kind found (PTABLE_NONE, PTABLE_GPT, PTABLE_MBR); -EINVAL for
 * a bad @block_size or NULL @read_blocks (or @parts with @max > 0); a
 * negative value from @read_blocks is returned as is.
 */
int ptable_parse(int (*read_blocks)(void *arg, uint64_t lba, uint32_t n,
				    void *buf),
		 void *arg, uint32_t block_size, uint64_t nblocks,
		 struct ptable_part *parts, unsigned int max,
		 unsigned int *nfound);

/**
 * ptable_disk_guid() - the GPT disk GUID of a LUN.
 * @wwn: the LUN's WWN.
 * @lun: the LUN number.
 * @guid: out, on-disk byte order, RFC 4122 version 4.
 *
 * Context: any; pure.
 */
void ptable_disk_guid(uint64_t wwn, uint32_t lun, uint8_t guid[16]);

/**
 * ptable_mbr_signature() - the MBR disk signature of a LUN (never 0).
 * @wwn: the LUN's WWN.
 * @lun: the LUN number.
 *
 * Context: any; pure.
 * Return: the signature, as stored little-endian at byte 440.
 */
uint32_t ptable_mbr_signature(uint64_t wwn, uint32_t lun);

/**
 * ptable_guid_format() - a GUID as text, upper case as sfdisk and gdisk
 * print it ("0FC63DAF-8483-4772-8E79-3D69D8477DE4").
 * @guid: on-disk (mixed-endian) byte order.
 * @buf: out, PTABLE_GUID_STR_LEN + 1 bytes, NUL-terminated.
 *
 * Context: any; pure.
 */
void ptable_guid_format(const uint8_t guid[16],
			char buf[PTABLE_GUID_STR_LEN + 1]);

/**
 * ptable_kind_name() - "none", "gpt" or "mbr".
 * @kind: the kind.
 *
 * Context: any; pure.
 * Return: a static string; "?" for a value outside the enum.
 */
const char *ptable_kind_name(enum ptable_kind kind);

/**
 * ptable_kind_parse() - the inverse of ptable_kind_name(); "dos" is taken
 * as "mbr" (sfdisk's name for it).
 * @name: the text.
 * @out: out, the kind (only on success).
 *
 * Context: any; pure.
 * Return: 0, or -EINVAL for anything else (including NULL).
 */
int ptable_kind_parse(const char *name, enum ptable_kind *out);

#ifdef __cplusplus
}
#endif

#endif /* SDSWARM_PTABLE_H */
