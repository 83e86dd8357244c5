// SPDX-License-Identifier: MIT
/*
 * dev_t layouts for SCSI disks (legacy 2.6.0, the article's naive remap, the
 * layout of Matthew Wilcox's mail, mainline sd, and a dynamic model) and the
 * kernel <-> user-space dev_t encodings.
 */
#include <errno.h>
#include <string.h>

#include "array.h"
#include "sdnum.h"

/* ---- majors -------------------------------------------------------- */

unsigned int sdnum_sd_major(unsigned int i)
{
	/* SCSI_DISK0_MAJOR 8, SCSI_DISK1..7 65..71, SCSI_DISK8..15 128..135 */
	if (i == 0)
		return 8;
	if (i <= 7)
		return 64 + i;
	if (i <= 15)
		return 120 + i;
	return 0;
}

int sdnum_sd_major_index(unsigned int major)
{
	if (major == 8)
		return 0;
	if (major >= 65 && major <= 71)
		return (int)major - 64;
	if (major >= 128 && major <= 135)
		return (int)major - 120;
	return -ENODEV;
}

/* ---- kernel <-> user-space encodings -------------------------------- */

int sdnum_old_encode(uint32_t dev, uint16_t *out)
{
	/* old_valid_dev(): both halves must fit 8 bits. */
	if (SDNUM_MAJOR(dev) >= 256 || SDNUM_MINOR(dev) >= 256)
		return -EOVERFLOW;
	*out = (uint16_t)(SDNUM_MAJOR(dev) << 8 | SDNUM_MINOR(dev));
	return 0;
}

uint32_t sdnum_old_decode(uint16_t val)
{
	return SDNUM_MKDEV((val >> 8) & 255, val & 255);
}

uint32_t sdnum_new_encode(uint32_t dev)
{
	uint32_t major = SDNUM_MAJOR(dev), minor = SDNUM_MINOR(dev);

	return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

uint32_t sdnum_new_decode(uint32_t val)
{
	uint32_t major = (val & 0xfff00) >> 8;
	uint32_t minor = (val & 0xff) | ((val >> 12) & 0xfff00);

	return SDNUM_MKDEV(major, minor);
}

uint64_t sdnum_makedev(uint32_t major, uint32_t minor)
{
	/* glibc's __SYSMACROS_DEFINE_MAKEDEV for the 64-bit dev_t. */
	uint64_t d;

	d = ((uint64_t)(major & 0x00000fffu)) << 8;
	d |= ((uint64_t)(major & 0xfffff000u)) << 32;
	d |= ((uint64_t)(minor & 0x000000ffu)) << 0;
	d |= ((uint64_t)(minor & 0xffffff00u)) << 12;
	return d;
}

uint32_t sdnum_user_major(uint64_t udev)
{
	return (uint32_t)(((udev & 0x00000000000fff00ull) >> 8) |
			  ((udev & 0xfffff00000000000ull) >> 32));
}

uint32_t sdnum_user_minor(uint64_t udev)
{
	return (uint32_t)(((udev & 0x00000000000000ffull) >> 0) |
			  ((udev & 0x00000ffffff00000ull) >> 12));
}

/* ---- legacy: 2.6.0, 256 disks x 15 partitions ----------------------- */

static int legacy_encode(const void *ctx, uint32_t disk, uint32_t part,
			 uint32_t *dev)
{
	(void)ctx;
	if (disk >= 256 || part > 15)
		return -ERANGE;
	*dev = SDNUM_MKDEV(sdnum_sd_major(disk >> 4), (disk & 15) << 4 | part);
	return 0;
}

static int legacy_decode(const void *ctx, uint32_t dev, uint32_t *disk,
			 uint32_t *part)
{
	int g = sdnum_sd_major_index(SDNUM_MAJOR(dev));
	uint32_t minor = SDNUM_MINOR(dev);

	(void)ctx;
	if (g < 0 || minor >= 256)
		return -ENODEV;
	*disk = (uint32_t)g << 4 | minor >> 4;
	*part = minor & 15;
	return 0;
}

/* ---- naive: minor bits 0-5 partition, 6-19 disk ---------------------- */

static int naive_encode(const void *ctx, uint32_t disk, uint32_t part,
			uint32_t *dev)
{
	(void)ctx;
	if (disk >= SDNUM_SD_MAJORS * 16384 || part > 63)
		return -ERANGE;
	*dev = SDNUM_MKDEV(sdnum_sd_major(disk / 16384),
			   (disk % 16384) << 6 | part);
	return 0;
}

static int naive_decode(const void *ctx, uint32_t dev, uint32_t *disk,
			uint32_t *part)
{
	int g = sdnum_sd_major_index(SDNUM_MAJOR(dev));
	uint32_t minor = SDNUM_MINOR(dev);

	(void)ctx;
	if (g < 0)
		return -ENODEV;
	*disk = (uint32_t)g * 16384 + (minor >> 6);
	*part = minor & 63;
	return 0;
}

/*
 * ---- wilcox: the mail's layout, corrected ----------------------------
 *
 *     major     p2    disc2   disc  p1
 * |............|..|..........|....|....|
 *  31        20 19 18 17     8 7  4 3  0
 *
 * Disk bits 0-3 stay in minor bits 4-7 and disk bits 4-7 pick the major,
 * exactly as 2.6.0 does, so every old node keeps its meaning; disk bits
 * 8-17 go to minor bits 8-17, partitions 16-63 put their high two bits in
 * minor bits 18-19. The mail's make_sd_dev() reads an undeclared `dev` where
 * it means sd_nr and passes sd_nr & 0xf0 to sd_major() without the >> 4;
 * this is the layout it intends (tests/unit/test-sdnum-schemes.c shows both).
 */
static int wilcox_encode(const void *ctx, uint32_t disk, uint32_t part,
			 uint32_t *dev)
{
	(void)ctx;
	if (disk >= 1u << 18 || part > 63)
		return -ERANGE;
	*dev = SDNUM_MKDEV(sdnum_sd_major((disk & 0xf0) >> 4),
			   (part & 0xf) | (part & 0x30) << 14 |
				   (disk & 0xf) << 4 | (disk & 0x3ff00));
	return 0;
}

static int wilcox_decode(const void *ctx, uint32_t dev, uint32_t *disk,
			 uint32_t *part)
{
	int g = sdnum_sd_major_index(SDNUM_MAJOR(dev));
	uint32_t minor = SDNUM_MINOR(dev);

	(void)ctx;
	if (g < 0)
		return -ENODEV;
	*disk = ((minor >> 4) & 15) | (uint32_t)g << 4 | (minor & 0x3ff00);
	*part = (minor & 15) | ((minor >> 14) & 0x30);
	return 0;
}

/*
 * ---- linux: mainline sd --------------------------------------------
 *
 * sd_major((index & 0xf0) >> 4), minor ((index & 0xf) << 4) |
 * (index & 0xfff00): 2^20 disks with 16 minors each. Partitions past 15 get
 * an extended minor on major 259 from a shared ida, lowest free first, in the
 * order partitions are added: only a context (struct sdnum_extmap) knows them.
 */
static int linux_encode(const void *ctx, uint32_t disk, uint32_t part,
			uint32_t *dev)
{
	const struct sdnum_extmap *m = ctx;
	uint64_t minor;

	if (disk >= 1u << 20 || part > SDNUM_MAX_PART_NUMBER)
		return -ERANGE;
	if (part < 16) {
		*dev = SDNUM_MKDEV(sdnum_sd_major((disk & 0xf0) >> 4),
				   (disk & 0xf) << 4 | (disk & 0xfff00) | part);
		return 0;
	}
	if (!m || m->parts <= 15 || disk >= m->ndisks || part > m->parts)
		return -EXDEV;
	minor = (uint64_t)m->base + (uint64_t)disk * (m->parts - 15) +
		(part - 16);
	if (minor > SDNUM_MINORMASK)
		return -ERANGE;
	*dev = SDNUM_MKDEV(SDNUM_EXT_MAJOR, (uint32_t)minor);
	return 0;
}

static int linux_decode(const void *ctx, uint32_t dev, uint32_t *disk,
			uint32_t *part)
{
	const struct sdnum_extmap *m = ctx;
	uint32_t minor = SDNUM_MINOR(dev);
	uint32_t per, off;
	int g;

	if (SDNUM_MAJOR(dev) == SDNUM_EXT_MAJOR) {
		if (!m || m->parts <= 15)
			return -EXDEV;
		per = m->parts - 15;
		if (minor < m->base)
			return -ENODEV;
		off = minor - m->base;
		if (off / per >= m->ndisks)
			return -ENODEV;
		*disk = off / per;
		*part = 16 + off % per;
		return 0;
	}
	g = sdnum_sd_major_index(SDNUM_MAJOR(dev));
	if (g < 0)
		return -ENODEV;
	*disk = ((minor >> 4) & 0xf) | (uint32_t)g << 4 | (minor & 0xfff00);
	*part = minor & 0xf;
	return 0;
}

/*
 * ---- dynamic: the article's long-term plan -------------------------
 *
 * New majors, numbers handed out in discovery order: the disk discovered
 * o-th gets 64 minors at (o % 16384) * 64 on major BASE + o / 16384. Nothing
 * about the number says which sd index it is; the context (struct
 * sdnum_dynmap) is the discovery record, and sdnum_dynamic_compat() answers
 * the old numbers at open time.
 */
static int dyn_ord(const struct sdnum_dynmap *m, uint32_t disk, uint32_t *o)
{
	if (!m) {
		*o = disk;
		return 0;
	}
	if (disk >= m->n || m->ord[disk] == UINT32_MAX)
		return -EXDEV;
	*o = m->ord[disk];
	return 0;
}

static int dynamic_encode(const void *ctx, uint32_t disk, uint32_t part,
			  uint32_t *dev)
{
	uint32_t o;
	int ret;

	if (disk >= SDNUM_DYNAMIC_MAJORS * SDNUM_DYNAMIC_DISKS_PER_MAJOR ||
	    part > 63)
		return -ERANGE;
	ret = dyn_ord(ctx, disk, &o);
	if (ret)
		return ret;
	if (o >= SDNUM_DYNAMIC_MAJORS * SDNUM_DYNAMIC_DISKS_PER_MAJOR)
		return -ERANGE;
	*dev = SDNUM_MKDEV(SDNUM_DYNAMIC_MAJOR_BASE +
				   o / SDNUM_DYNAMIC_DISKS_PER_MAJOR,
			   (o % SDNUM_DYNAMIC_DISKS_PER_MAJOR) << 6 | part);
	return 0;
}

static int dynamic_decode(const void *ctx, uint32_t dev, uint32_t *disk,
			  uint32_t *part)
{
	const struct sdnum_dynmap *m = ctx;
	uint32_t major = SDNUM_MAJOR(dev), o;

	if (major < SDNUM_DYNAMIC_MAJOR_BASE ||
	    major >= SDNUM_DYNAMIC_MAJOR_BASE + SDNUM_DYNAMIC_MAJORS)
		return -ENODEV;
	o = (major - SDNUM_DYNAMIC_MAJOR_BASE) * SDNUM_DYNAMIC_DISKS_PER_MAJOR +
	    (SDNUM_MINOR(dev) >> 6);
	if (m) {
		if (o >= m->n || m->index[o] == UINT32_MAX)
			return -ENODEV;
		*disk = m->index[o];
	} else {
		*disk = o;
	}
	*part = SDNUM_MINOR(dev) & 63;
	return 0;
}

int sdnum_dynamic_compat(const void *ctx, uint32_t legacy_dev, uint32_t *dev)
{
	uint32_t disk, part;
	int ret;

	ret = legacy_decode(NULL, legacy_dev, &disk, &part);
	if (ret)
		return ret;
	ret = dynamic_encode(ctx, disk, part, dev);
	return ret == -EXDEV ? -ENODEV : ret;
}

/* ---- the table ------------------------------------------------------ */

const struct sdnum_scheme sdnum_scheme_legacy = {
	.name = "legacy",
	.summary = "2.6.0: 16 majors x 16 disks x 15 partitions, minor 0-255",
	.max_disks = 256,
	.max_parts = 15,
	.static_parts = 15,
	.encode = legacy_encode,
	.decode = legacy_decode,
};

const struct sdnum_scheme sdnum_scheme_naive = {
	.name = "naive",
	.summary =
		"article's remap: minor bits 0-5 partition, 6-19 disk; breaks old nodes",
	.max_disks = SDNUM_SD_MAJORS * 16384,
	.max_parts = 63,
	.static_parts = 63,
	.encode = naive_encode,
	.decode = naive_decode,
};

const struct sdnum_scheme sdnum_scheme_wilcox = {
	.name = "wilcox",
	.summary =
		"the mail's layout (corrected): p2 in minor bits 18-19, old nodes kept",
	.max_disks = 1u << 18,
	.max_parts = 63,
	.static_parts = 63,
	.encode = wilcox_encode,
	.decode = wilcox_decode,
};

const struct sdnum_scheme sdnum_scheme_linux = {
	.name = "linux",
	.summary =
		"mainline sd: 2^20 disks x 15, partitions 16+ on major 259 in allocation order",
	.max_disks = 1u << 20,
	.max_parts = SDNUM_MAX_PART_NUMBER,
	.static_parts = 15,
	.encode = linux_encode,
	.decode = linux_decode,
};

const struct sdnum_scheme sdnum_scheme_dynamic = {
	.name = "dynamic",
	.summary =
		"new majors 384-399 in discovery order, legacy numbers by compat map",
	.max_disks = SDNUM_DYNAMIC_MAJORS * SDNUM_DYNAMIC_DISKS_PER_MAJOR,
	.max_parts = 63,
	.static_parts = 0,
	.encode = dynamic_encode,
	.decode = dynamic_decode,
};

static const struct sdnum_scheme *const schemes[] = {
	&sdnum_scheme_legacy, &sdnum_scheme_naive,   &sdnum_scheme_wilcox,
	&sdnum_scheme_linux,  &sdnum_scheme_dynamic,
};

const struct sdnum_scheme *sdnum_scheme_at(unsigned int i)
{
	return i < ARRAY_SIZE(schemes) ? schemes[i] : NULL;
}

const struct sdnum_scheme *sdnum_scheme_find(const char *name)
{
	unsigned int i;

	if (!name)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(schemes); i++)
		if (strcmp(schemes[i]->name, name) == 0)
			return schemes[i];
	return NULL;
}
