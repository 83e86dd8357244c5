/* SPDX-License-Identifier: MIT */
/*
 * libsdnum: the Linux sd naming and dev_t rules, the index allocators, a
 * per-disk object cache and a dev_t -> disk registry. Pure arithmetic in the
 * name and scheme paths: no I/O, no globals, no malloc.
 */
#ifndef SDSWARM_SDNUM_H
#define SDSWARM_SDNUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Names                                                              */
/* ------------------------------------------------------------------ */

/* The kernel's DISK_MAX_PARTS: partition numbers are 1..255. */
#define SDNUM_MAX_PART_NUMBER 255
/* Longest name body for an index up to INT_MAX: 7 letters ("fxshrxx"). */
#define SDNUM_MAX_BODY 7
/* Longest prefix sdnum_name() accepts. */
#define SDNUM_MAX_PREFIX 32
/* A buffer this big holds any name sdnum_name_part() can produce. */
#define SDNUM_NAME_MAX (SDNUM_MAX_PREFIX + SDNUM_MAX_BODY + 1 + 3 + 1)

/**
 * sdnum_name() - the kernel's name for a 0-based disk index.
 * @prefix: the driver prefix ("sd", "vd", "xvd"); at most SDNUM_MAX_PREFIX bytes.
 * @index: 0-based index, 0..INT_MAX inclusive.
 * @buf: output buffer, NUL-terminated on success.
 * @len: size of @buf in bytes.
 *
 * Bijective base 26, as sd_format_disk_name(): 0 "sda", 25 "sdz", 26 "sdaa",
 * 701 "sdzz", 702 "sdaaa", 18278 "sdaaaa".
 *
 * Context: any; pure.
 * Return: the length of the name (excluding the NUL), -EINVAL for a NULL or
 * over-long prefix or an index above INT_MAX, -ENOSPC if @len is too small.
 */
int sdnum_name(const char *prefix, uint32_t index, char *buf, size_t len);

/**
 * sdnum_part_name() - a partition's name from its disk's name.
 * @disk: the disk name ("sda", "nvme0n1").
 * @part: partition number, 1..SDNUM_MAX_PART_NUMBER inclusive; 0 copies @disk.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * As the kernel's disk_name(): a "p" goes between a disk name that ends in a
 * digit and the partition number ("nvme0n1p1"); otherwise none ("sda1").
 *
 * Context: any; pure.
 * Return: the length of the name, -EINVAL for a bad @part or empty @disk,
 * -ENOSPC if @len is too small.
 */
int sdnum_part_name(const char *disk, unsigned int part, char *buf, size_t len);

/**
 * sdnum_name_part() - sdnum_name() followed by sdnum_part_name().
 * @prefix: driver prefix.
 * @index: disk index, 0..INT_MAX inclusive.
 * @part: partition number, 0 (the whole disk) .. SDNUM_MAX_PART_NUMBER.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * Context: any; pure.
 * Return: as sdnum_name().
 */
int sdnum_name_part(const char *prefix, uint32_t index, unsigned int part,
		    char *buf, size_t len);

/**
 * sdnum_parse() - the exact inverse of sdnum_name_part().
 * @prefix: driver prefix the name must start with.
 * @name: NUL-terminated name ("sdaa", "sdaa12"); never read past its NUL.
 * @index: out, the 0-based disk index.
 * @part: out, the partition number (0 for the whole disk).
 *
 * Strict: the body is 1..7 lower-case letters, an optional partition number
 * follows with no leading zero, in 1..SDNUM_MAX_PART_NUMBER, and nothing else.
 *
 * Context: any; pure.
 * Return: 0 on success; -EINVAL for a missing prefix, an empty or non
 * lower-case body, a partition of 0 or with a leading zero, or trailing junk;
 * -ERANGE for a body whose index exceeds INT_MAX or a partition above 255.
 * @index and @part are written only on success.
 */
int sdnum_parse(const char *prefix, const char *name, uint32_t *index,
		unsigned int *part);

/**
 * sdnum_parse_len() - sdnum_parse() over a name that is not NUL-terminated.
 * @prefix: driver prefix.
 * @name: the name's bytes; exactly @len of them are read.
 * @len: length of @name.
 * @index: out, disk index.
 * @part: out, partition number.
 *
 * Context: any; pure.
 * Return: as sdnum_parse(); a NUL inside the @len bytes is -EINVAL.
 */
int sdnum_parse_len(const char *prefix, const char *name, size_t len,
		    uint32_t *index, unsigned int *part);

/* ------------------------------------------------------------------ */
/* dev_t                                                              */
/* ------------------------------------------------------------------ */

/* The kernel's internal dev_t: 12-bit major, 20-bit minor. */
#define SDNUM_MINORBITS 20
#define SDNUM_MINORMASK ((1u << SDNUM_MINORBITS) - 1)
#define SDNUM_MKDEV(ma, mi)                                                    \
	(((uint32_t)(ma) << SDNUM_MINORBITS) | (uint32_t)(mi))
#define SDNUM_MAJOR(dev) ((uint32_t)(dev) >> SDNUM_MINORBITS)
/* clang-format off */
/* (clang-format 14 reads "(uint32_t)(dev) &" as taking an address.) */
#define SDNUM_MINOR(dev) ((uint32_t)(dev) & SDNUM_MINORMASK)
/* clang-format on */
#define SDNUM_MAX_MAJOR 4095u

/* The shared extended major (BLOCK_EXT_MAJOR) for minors past a disk's own. */
#define SDNUM_EXT_MAJOR 259u
/* Number of SCSI disk majors (8, 65-71, 128-135). */
#define SDNUM_SD_MAJORS 16u

/**
 * sdnum_sd_major() - the kernel's sd_major(): the major of SCSI disk group @i.
 * @i: group, 0..15 inclusive.
 *
 * Context: any; pure.
 * Return: 8 for 0, 65..71 for 1..7, 128..135 for 8..15; 0 for @i > 15.
 */
unsigned int sdnum_sd_major(unsigned int i);

/**
 * sdnum_sd_major_index() - the inverse of sdnum_sd_major().
 * @major: a major number.
 *
 * Context: any; pure.
 * Return: 0..15 for an sd major, -ENODEV for any other.
 */
int sdnum_sd_major_index(unsigned int major);

/**
 * sdnum_old_encode() - the kernel's old_encode_dev(): 8-bit major, 8-bit minor.
 * @dev: kernel dev_t.
 * @out: out, the 16-bit encoding.
 *
 * Context: any; pure.
 * Return: 0, or -EOVERFLOW when old_valid_dev() fails (major or minor >= 256).
 */
int sdnum_old_encode(uint32_t dev, uint16_t *out);

/**
 * sdnum_old_decode() - old_decode_dev().
 * @val: the 16-bit encoding.
 *
 * Context: any; pure.
 * Return: the kernel dev_t.
 */
uint32_t sdnum_old_decode(uint16_t val);

/**
 * sdnum_new_encode() - the kernel's new_encode_dev(), the 32-bit form user
 * space sees in stat's st_rdev on 32-bit ABIs: minor bits 0-7, major bits 8-19,
 * minor bits 8-19 in bits 20-31.
 * @dev: kernel dev_t.
 *
 * Context: any; pure.
 * Return: the encoding.
 */
uint32_t sdnum_new_encode(uint32_t dev);

/**
 * sdnum_new_decode() - new_decode_dev().
 * @val: the 32-bit encoding.
 *
 * Context: any; pure.
 * Return: the kernel dev_t.
 */
uint32_t sdnum_new_decode(uint32_t val);

/**
 * sdnum_makedev() - glibc's 64-bit makedev() for a kernel major and minor.
 * @major: 0..4095 in the kernel, up to 2^32-1 in glibc's format.
 * @minor: 0..2^20-1 in the kernel, up to 2^32-1 in glibc's format.
 *
 * Context: any; pure.
 * Return: the user-space dev_t, equal to makedev(@major, @minor).
 */
uint64_t sdnum_makedev(uint32_t major, uint32_t minor);

/**
 * sdnum_user_major() - glibc's major() of a 64-bit user-space dev_t.
 * @udev: user-space dev_t.
 *
 * Context: any; pure.
 * Return: the major.
 */
uint32_t sdnum_user_major(uint64_t udev);

/**
 * sdnum_user_minor() - glibc's minor() of a 64-bit user-space dev_t.
 * @udev: user-space dev_t.
 *
 * Context: any; pure.
 * Return: the minor.
 */
uint32_t sdnum_user_minor(uint64_t udev);

/* ------------------------------------------------------------------ */
/* Schemes                                                            */
/* ------------------------------------------------------------------ */

/*
 * A dev_t layout for SCSI disks. @encode maps (disk index, partition) to a
 * kernel dev_t, @decode the reverse. Partition 0 is the whole disk.
 *
 * Schemes whose numbers depend on run-time order take a context: `linux`
 * for partitions >= 16 (extended minors on major 259, handed out in
 * allocation order: struct sdnum_extmap) and `dynamic` (disks numbered in
 * discovery order: struct sdnum_dynmap). With a NULL context, `dynamic`
 * assumes disks were discovered in index order, and `linux` answers
 * -EXDEV for a number it cannot compute.
 */
struct sdnum_scheme {
	const char *name;
	const char *summary;
	/* Disks the scheme numbers: indices 0..max_disks-1. */
	uint32_t max_disks;
	/* Partitions per disk: numbers 1..max_parts. */
	uint32_t max_parts;
	/* Partitions per disk whose numbers are computed, not allocated. */
	uint32_t static_parts;
	/**
	 * encode - (disk, part) to dev_t.
	 * Return: 0; -ERANGE if @disk or @part is out of the scheme's range;
	 * -EXDEV if the number is allocated at run time and @ctx cannot answer.
	 */
	int (*encode)(const void *ctx, uint32_t disk, uint32_t part,
		      uint32_t *dev);
	/**
	 * decode - dev_t to (disk, part).
	 * Return: 0; -ENODEV if @dev is not a number of this scheme;
	 * -EXDEV if it is allocated at run time and @ctx cannot answer.
	 */
	int (*decode)(const void *ctx, uint32_t dev, uint32_t *disk,
		      uint32_t *part);
};

extern const struct sdnum_scheme sdnum_scheme_legacy;
extern const struct sdnum_scheme sdnum_scheme_naive;
extern const struct sdnum_scheme sdnum_scheme_wilcox;
extern const struct sdnum_scheme sdnum_scheme_linux;
extern const struct sdnum_scheme sdnum_scheme_dynamic;

/*
 * The new majors `dynamic` hands out: 384..399, a range above 255 that
 * devices.txt assigns to nothing (block majors 240-254 are for local use and
 * 259 is the extended major), so the model never collides with a real one.
 */
#define SDNUM_DYNAMIC_MAJOR_BASE 384u
#define SDNUM_DYNAMIC_MAJORS 16u
#define SDNUM_DYNAMIC_DISKS_PER_MAJOR 16384u

/**
 * sdnum_scheme_find() - a scheme by name.
 * @name: "legacy", "naive", "wilcox", "linux" or "dynamic".
 *
 * Context: any; pure.
 * Return: the scheme, or NULL for an unknown name.
 */
const struct sdnum_scheme *sdnum_scheme_find(const char *name);

/**
 * sdnum_scheme_at() - iterate the schemes.
 * @i: 0-based position.
 *
 * Context: any; pure.
 * Return: the @i-th scheme, or NULL past the last.
 */
const struct sdnum_scheme *sdnum_scheme_at(unsigned int i);

/*
 * struct sdnum_extmap - the `linux` scheme's context: which extended minor on
 * major 259 each partition >= 16 got. Built by the caller (from a probe-order
 * prediction or from what a real kernel reported); the scheme only reads it.
 * Predicted layout: disks 0..ndisks-1 each with parts partitions, probed in
 * index order, partitions added in order, nobody else on major 259: disk d's
 * partition p (p >= 16) is minor base + d * (parts - 15) + (p - 16).
 */
struct sdnum_extmap {
	uint32_t ndisks;
	uint32_t parts;
	uint32_t base;
};

/*
 * struct sdnum_dynmap - the `dynamic` scheme's context: discovery ordinal of
 * each disk index (ord[index]) and its inverse (index[ord]), UINT32_MAX where
 * none. Disk with ordinal o gets major SDNUM_DYNAMIC_MAJOR_BASE + o / 16384 and
 * minor (o % 16384) * 64 + part.
 */
struct sdnum_dynmap {
	uint32_t n;
	const uint32_t *ord;
	const uint32_t *index;
};

/**
 * sdnum_dynamic_compat() - the compat map at open time: a legacy dev_t to the
 * dynamic number of the same disk and partition.
 * @ctx: a struct sdnum_dynmap, or NULL for discovery in index order.
 * @legacy_dev: a dev_t of the `legacy` scheme.
 * @dev: out, the dynamic dev_t.
 *
 * Context: any; pure.
 * Return: 0, -ENODEV if @legacy_dev is not a legacy sd number or its disk was
 * never discovered.
 */
int sdnum_dynamic_compat(const void *ctx, uint32_t legacy_dev, uint32_t *dev);

/* ------------------------------------------------------------------ */
/* Index allocators (the kernel ida's contract)                       */
/* ------------------------------------------------------------------ */

enum sdnum_idx_kind {
	/* A flat bitmap and a first-zero scan from bit 0: 2.6's sd_index_bits. */
	SDNUM_IDX_BITMAP,
	/* Summary words over leaf words: O(log64 n) alloc and free. */
	SDNUM_IDX_TREE,
};

struct sdnum_idx;

/**
 * sdnum_idx_create() - an allocator of ids 0..@max-1.
 * @out: out, the allocator.
 * @kind: SDNUM_IDX_BITMAP or SDNUM_IDX_TREE.
 * @max: number of ids, 1..2^31 inclusive.
 *
 * Context: allocates memory; not thread-safe (the caller serialises).
 * Return: 0, -EINVAL for a bad @kind or @max, -ENOMEM.
 */
int sdnum_idx_create(struct sdnum_idx **out, enum sdnum_idx_kind kind,
		     uint32_t max);

/**
 * sdnum_idx_destroy() - free an allocator. NULL is a no-op.
 * @idx: the allocator.
 */
void sdnum_idx_destroy(struct sdnum_idx *idx);

/**
 * sdnum_idx_alloc() - the lowest free id.
 * @idx: the allocator.
 *
 * Return: the id (>= 0), or -ENOSPC when all are taken.
 */
int sdnum_idx_alloc(struct sdnum_idx *idx);

/**
 * sdnum_idx_alloc_range() - the lowest free id in @min..@max inclusive.
 * @idx: the allocator.
 * @min: lowest acceptable id.
 * @max: highest acceptable id; clamped to the allocator's last id.
 *
 * Return: the id, -ENOSPC when none is free in range, -EINVAL if @min > @max.
 */
int sdnum_idx_alloc_range(struct sdnum_idx *idx, uint32_t min, uint32_t max);

/**
 * sdnum_idx_free() - release an id.
 * @idx: the allocator.
 * @id: an allocated id.
 *
 * Return: 0, -EINVAL for an id out of range, -ENOENT for one not allocated
 * (the kernel WARNs; we report).
 */
int sdnum_idx_free(struct sdnum_idx *idx, uint32_t id);

/**
 * sdnum_idx_test() - whether @id is allocated.
 * @idx: the allocator.
 * @id: an id.
 *
 * Return: 1 allocated, 0 free or out of range.
 */
int sdnum_idx_test(const struct sdnum_idx *idx, uint32_t id);

/**
 * sdnum_idx_count() - number of allocated ids.
 * @idx: the allocator.
 *
 * Return: the count.
 */
uint32_t sdnum_idx_count(const struct sdnum_idx *idx);

/**
 * sdnum_idx_bytes() - memory the allocator holds, in bytes.
 * @idx: the allocator.
 *
 * Return: bytes.
 */
size_t sdnum_idx_bytes(const struct sdnum_idx *idx);

/* ------------------------------------------------------------------ */
/* Per-disk object cache                                              */
/* ------------------------------------------------------------------ */

struct sdnum_slab;

/**
 * sdnum_slab_create() - a cache of fixed-size objects, carved from large
 * slabs with an intrusive free list: no per-object malloc header, O(1) alloc
 * and free, objects reused LIFO (cache-hot).
 * @out: out, the cache.
 * @size: object size in bytes, 1..1 MiB.
 * @align: alignment, a power of two up to 4096, or 0 for alignof(max_align_t).
 * @per_slab: objects per slab, 0 for a default that fills 64 KiB.
 *
 * Context: allocates; not thread-safe (the caller serialises or keeps one
 * cache per thread).
 * Return: 0, -EINVAL, -ENOMEM.
 */
int sdnum_slab_create(struct sdnum_slab **out, size_t size, size_t align,
		      size_t per_slab);

/**
 * sdnum_slab_destroy() - free the cache and every slab. NULL is a no-op.
 * @s: the cache.
 */
void sdnum_slab_destroy(struct sdnum_slab *s);

/**
 * sdnum_slab_alloc() - one object, uninitialised.
 * @s: the cache.
 *
 * Return: the object, or NULL when memory is exhausted.
 */
void *sdnum_slab_alloc(struct sdnum_slab *s);

/**
 * sdnum_slab_free() - return an object to its cache.
 * @s: the cache it came from.
 * @obj: the object, or NULL (a no-op).
 */
void sdnum_slab_free(struct sdnum_slab *s, void *obj);

/**
 * sdnum_slab_in_use() - objects allocated and not freed.
 * @s: the cache.
 *
 * Return: the count.
 */
size_t sdnum_slab_in_use(const struct sdnum_slab *s);

/**
 * sdnum_slab_bytes() - memory held by the cache's slabs, in bytes.
 * @s: the cache.
 *
 * Return: bytes.
 */
size_t sdnum_slab_bytes(const struct sdnum_slab *s);

/* ------------------------------------------------------------------ */
/* dev_t -> disk registry                                             */
/* ------------------------------------------------------------------ */

enum sdnum_reg_kind {
	/* 2.6's kobj_map: 255 chains by major % 255, each a list of ranges
	 * sorted by size; lookup walks the chain. O(ranges on the chain). */
	SDNUM_REG_CHAIN,
	/* A radix table: major -> 16-minor blocks -> range; O(1) lookup. */
	SDNUM_REG_RADIX,
};

struct sdnum_reg;

/**
 * sdnum_reg_create() - an empty registry.
 * @out: out, the registry.
 * @kind: SDNUM_REG_CHAIN or SDNUM_REG_RADIX.
 *
 * Context: allocates; not thread-safe for writers; lookups may run
 * concurrently with each other but not with add or remove.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int sdnum_reg_create(struct sdnum_reg **out, enum sdnum_reg_kind kind);

/**
 * sdnum_reg_destroy() - free the registry (not the objects). NULL is a no-op.
 * @r: the registry.
 */
void sdnum_reg_destroy(struct sdnum_reg *r);

/**
 * sdnum_reg_add() - register @count dev_ts from @dev (one major) to @obj.
 * @r: the registry.
 * @dev: first dev_t.
 * @count: number of minors, >= 1; @dev + @count - 1 stays on @dev's major.
 * @obj: non-NULL object to return for any dev_t in the range.
 *
 * Return: 0, -EINVAL for a bad range or NULL @obj, -EEXIST if any dev_t of
 * the range is already registered, -ENOMEM.
 */
int sdnum_reg_add(struct sdnum_reg *r, uint32_t dev, uint32_t count, void *obj);

/**
 * sdnum_reg_remove() - unregister the range added as (@dev, @count).
 * @r: the registry.
 * @dev: first dev_t, as given to sdnum_reg_add().
 * @count: as given to sdnum_reg_add().
 *
 * Return: 0, -ENOENT if no such range was added.
 */
int sdnum_reg_remove(struct sdnum_reg *r, uint32_t dev, uint32_t count);

/**
 * sdnum_reg_lookup() - the object registered for @dev.
 * @r: the registry.
 * @dev: a dev_t.
 * @offset: out (may be NULL), @dev minus its range's first dev_t.
 *
 * Return: the object, or NULL if @dev is not registered.
 */
void *sdnum_reg_lookup(const struct sdnum_reg *r, uint32_t dev,
		       uint32_t *offset);

/**
 * sdnum_reg_bytes() - memory the registry holds, in bytes.
 * @r: the registry.
 *
 * Return: bytes.
 */
size_t sdnum_reg_bytes(const struct sdnum_reg *r);

#ifdef __cplusplus
}
#endif

#endif /* SDSWARM_SDNUM_H */
