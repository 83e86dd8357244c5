// SPDX-License-Identifier: MIT
/*
 * dev_t schemes: every (disk, partition) of every scheme through encode and
 * decode with no two sharing a dev_t, legacy compatibility, the naive remap's
 * broken nodes, the bugs of the 2003 mail's make_sd_dev(), the extended and
 * dynamic contexts, and the user-space encodings against glibc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "rng.h"
#include "sdnum.h"

/* One bit per dev_t on the majors the schemes use: sd, 259 and dynamic. */
struct seen {
	uint64_t *bits[SDNUM_MAX_MAJOR + 1];
};

static struct seen *seen_new(void)
{
	struct seen *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static void seen_free(struct seen *s)
{
	unsigned int i;

	for (i = 0; i <= SDNUM_MAX_MAJOR; i++)
		free(s->bits[i]);
	free(s);
}

/* Marks @dev; fails the test if it was already marked. */
static void seen_mark(struct seen *s, uint32_t dev)
{
	uint32_t ma = SDNUM_MAJOR(dev), mi = SDNUM_MINOR(dev);
	uint64_t bit = 1ull << (mi & 63);

	if (!s->bits[ma]) {
		s->bits[ma] = calloc((1u << SDNUM_MINORBITS) / 64, 8);
		assert_non_null(s->bits[ma]);
	}
	if (s->bits[ma][mi / 64] & bit)
		fail_msg("dev_t %u:%u handed out twice", ma, mi);
	s->bits[ma][mi / 64] |= bit;
}

static void test_sd_majors(void **state)
{
	static const unsigned int want[16] = {8,   65,	66,  67,  68,  69,
					      70,  71,	128, 129, 130, 131,
					      132, 133, 134, 135};
	unsigned int i, m;

	(void)state;
	for (i = 0; i < 16; i++) {
		assert_int_equal(sdnum_sd_major(i), want[i]);
		assert_int_equal(sdnum_sd_major_index(want[i]), (int)i);
	}
	assert_int_equal(sdnum_sd_major(16), 0);
	for (m = 0; m <= SDNUM_MAX_MAJOR; m++) {
		int in = 0;

		for (i = 0; i < 16; i++)
			in |= want[i] == m;
		if (!in)
			assert_int_equal(sdnum_sd_major_index(m), -ENODEV);
	}
}

/*
 * Every (disk, part) of the scheme's computed range: encode, decode back,
 * and no dev_t twice. 2^24 pairs for the big schemes.
 */
static void roundtrip_all(const struct sdnum_scheme *s, const void *ctx,
			  uint32_t parts)
{
	struct seen *seen = seen_new();
	uint32_t d, p, dev, d2, p2;

	for (d = 0; d < s->max_disks; d++) {
		for (p = 0; p <= parts; p++) {
			if (s->encode(ctx, d, p, &dev))
				fail_msg("%s: encode(%u, %u) failed", s->name,
					 d, p);
			if (s->decode(ctx, dev, &d2, &p2) || d2 != d || p2 != p)
				fail_msg("%s: decode(encode(%u, %u)) = %u, %u",
					 s->name, d, p, d2, p2);
			seen_mark(seen, dev);
		}
	}
	/* just past the edges */
	assert_int_equal(s->encode(ctx, s->max_disks, 0, &dev), -ERANGE);
	assert_int_equal(s->encode(ctx, 0, s->max_parts + 1, &dev), -ERANGE);
	seen_free(seen);
}

static void test_roundtrip_legacy(void **state)
{
	(void)state;
	roundtrip_all(&sdnum_scheme_legacy, NULL, 15);
}

static void test_roundtrip_naive(void **state)
{
	(void)state;
	roundtrip_all(&sdnum_scheme_naive, NULL, 63);
}

static void test_roundtrip_wilcox(void **state)
{
	(void)state;
	roundtrip_all(&sdnum_scheme_wilcox, NULL, 63);
}

static void test_roundtrip_linux(void **state)
{
	uint32_t dev;

	(void)state;
	roundtrip_all(&sdnum_scheme_linux, NULL, 15);
	/* partition 16 is allocated at run time: no context, no answer */
	assert_int_equal(sdnum_scheme_linux.encode(NULL, 0, 16, &dev), -EXDEV);
	assert_int_equal(sdnum_scheme_linux.decode(NULL, SDNUM_MKDEV(259, 0),
						   &dev, &dev),
			 -EXDEV);
}

static void test_roundtrip_dynamic(void **state)
{
	(void)state;
	roundtrip_all(&sdnum_scheme_dynamic, NULL, 63);
}

/*
 * Every dev_t on the 16 sd majors decodes under naive, wilcox and linux, and
 * encodes back to itself: the layouts are bijections of the whole space.
 */
static void test_bijective(void **state)
{
	static const struct sdnum_scheme *s[] = {
		&sdnum_scheme_naive, &sdnum_scheme_wilcox, &sdnum_scheme_linux};
	uint32_t g, mi, dev, d, p, back;
	unsigned int k;

	(void)state;
	for (k = 0; k < 3; k++) {
		for (g = 0; g < 16; g++) {
			for (mi = 0; mi <= SDNUM_MINORMASK;
			     mi += k == 2 ? 1 : 7) {
				dev = SDNUM_MKDEV(sdnum_sd_major(g), mi);
				if (s[k]->decode(NULL, dev, &d, &p))
					fail_msg("%s: %u:%u does not decode",
						 s[k]->name, sdnum_sd_major(g),
						 mi);
				assert_int_equal(
					s[k]->encode(NULL, d, p, &back), 0);
				assert_int_equal(back, dev);
			}
		}
		assert_int_equal(s[k]->decode(NULL, SDNUM_MKDEV(3, 0), &d, &p),
				 -ENODEV);
	}
}

/* wilcox and linux give every 2.6.0 node its old meaning; naive does not. */
static void test_legacy_compat(void **state)
{
	uint32_t d, p, ldev, dev, d2, p2;
	unsigned int broken = 0;

	(void)state;
	for (d = 0; d < 256; d++) {
		for (p = 0; p < 16; p++) {
			assert_int_equal(
				sdnum_scheme_legacy.encode(NULL, d, p, &ldev),
				0);
			assert_int_equal(
				sdnum_scheme_wilcox.encode(NULL, d, p, &dev),
				0);
			assert_int_equal(dev, ldev);
			assert_int_equal(
				sdnum_scheme_linux.encode(NULL, d, p, &dev), 0);
			assert_int_equal(dev, ldev);

			/* What does an old node mean under naive? */
			assert_int_equal(
				sdnum_scheme_naive.decode(NULL, ldev, &d2, &p2),
				0);
			if (d2 != d || p2 != p) {
				broken++;
				/*
				 * Only sda's nodes survive: 8:0..8:15. From
				 * sdb (8:16) on, an old node opens another
				 * disk's partition: 8:16 is now sda16.
				 */
				assert_true(d != 0);
				assert_int_equal(
					d2, (d >> 4) * 16384 +
						    ((d & 15) << 4 | p) / 64);
			} else {
				assert_int_equal(d, 0);
			}
		}
	}
	assert_int_equal(broken, 255 * 16);
	assert_int_equal(
		sdnum_scheme_naive.decode(NULL, SDNUM_MKDEV(8, 16), &d2, &p2),
		0);
	assert_int_equal(d2, 0);
	assert_int_equal(p2, 16);
	/* and sdb itself moved to 8:64 */
	assert_int_equal(sdnum_scheme_naive.encode(NULL, 1, 0, &dev), 0);
	assert_int_equal(dev, SDNUM_MKDEV(8, 64));
}

/*
 * The mail's code, transcribed. make_sd_dev() as posted reads `dev`, which
 * is not declared in it: it cannot compile. Bug 1 is modelled by passing the
 * value a stray `dev` in scope would have (here the caller's last dev_t):
 * the disk number is then ignored. Bug 2, sd_major(dev & 0xf0) without the
 * >> 4, is modelled with dev := sd_nr.
 */
static unsigned int mail_inv_sd_major(unsigned int major)
{
	return (unsigned int)sdnum_sd_major_index(major);
}

static unsigned int mail_dev_to_sd_nr(unsigned int dev)
{
	return ((dev >> 4) & 15) | (mail_inv_sd_major(dev >> 20) << 4) |
	       (dev & 0x3ff00);
}

static unsigned int mail_dev_to_sd_part(unsigned int dev)
{
	return (dev & 15) | ((dev >> 14) & 0x30);
}

static unsigned int mail_make_sd_dev(unsigned int sd_nr, unsigned int part,
				     unsigned int dev)
{
	(void)sd_nr; /* the posted code never reads sd_nr */
	return (part & 0xf) | ((part & 0x30) << 14) | ((dev & 0xf) << 4) |
	       (sdnum_sd_major(dev & 0xf0) << 20) | (dev & 0x3ff00);
}

static void test_wilcox_mail_bugs(void **state)
{
	uint32_t d, p, dev, a, b, first_bad = 0;

	(void)state;
	/* The decoders in the mail are right: they equal ours everywhere. */
	for (d = 0; d < 1u << 18; d += 3) {
		for (p = 0; p < 64; p += 5) {
			assert_int_equal(
				sdnum_scheme_wilcox.encode(NULL, d, p, &dev),
				0);
			assert_int_equal(mail_dev_to_sd_nr(dev), d);
			assert_int_equal(mail_dev_to_sd_part(dev), p);
		}
	}

	/* Bug 1: `dev` for sd_nr. With a stray dev of 0, sdb and sdc collide. */
	a = mail_make_sd_dev(1, 0, 0);
	b = mail_make_sd_dev(2, 0, 0);
	assert_int_equal(a, b);
	assert_int_equal(sdnum_scheme_wilcox.encode(NULL, 1, 0, &dev), 0);
	assert_int_not_equal(a, dev);

	/*
	 * Bug 2: with dev := sd_nr, sd_major(sd_nr & 0xf0) is sd_major(16)
	 * for sd_nr 16: no such group, major 0. Disks 0..15 come out right,
	 * every disk from sdq (16) on does not.
	 */
	for (d = 0; d < 1u << 18; d++) {
		a = mail_make_sd_dev(d, 0, d);
		assert_int_equal(sdnum_scheme_wilcox.encode(NULL, d, 0, &dev),
				 0);
		if (a != dev) {
			if (!first_bad)
				first_bad = d;
			assert_true(d >= 16);
		} else {
			assert_true(d < 16 || (d & 0xf0) == 0);
		}
	}
	assert_int_equal(first_bad, 16);
	assert_int_equal(SDNUM_MAJOR(mail_make_sd_dev(16, 0, 16)), 0);
}

/* linux, partitions >= 16 on major 259 in allocation order. */
static void test_linux_ext(void **state)
{
	const struct sdnum_extmap m = {.ndisks = 21845, .parts = 63, .base = 0};
	const struct sdnum_extmap big = {.ndisks = 262144, .parts = 63};
	struct seen *seen = seen_new();
	uint32_t d, p, dev, d2, p2;

	(void)state;
	for (d = 0; d < m.ndisks; d++) {
		for (p = 0; p <= 63; p++) {
			assert_int_equal(
				sdnum_scheme_linux.encode(&m, d, p, &dev), 0);
			if (p >= 16) {
				assert_int_equal(SDNUM_MAJOR(dev), 259);
				assert_int_equal(SDNUM_MINOR(dev),
						 d * 48 + p - 16);
			}
			assert_int_equal(
				sdnum_scheme_linux.decode(&m, dev, &d2, &p2),
				0);
			assert_int_equal(d2, d);
			assert_int_equal(p2, p);
			seen_mark(seen, dev);
		}
	}
	seen_free(seen);
	/*
	 * Major 259 has 2^20 minors for every disk in the system: at 48
	 * extended partitions each, only 21,845 disks fit whole; disk 21845
	 * gets partitions 16..31 and partition 32 has no number.
	 */
	assert_int_equal(sdnum_scheme_linux.encode(&big, 21845, 31, &dev), 0);
	assert_int_equal(SDNUM_MINOR(dev), SDNUM_MINORMASK);
	assert_int_equal(sdnum_scheme_linux.encode(&big, 21845, 32, &dev),
			 -ERANGE);
	assert_int_equal(sdnum_scheme_linux.encode(&big, 21844, 63, &dev), 0);
	assert_int_equal(sdnum_scheme_linux.encode(&m, 0, 64, &dev), -EXDEV);
	assert_int_equal(sdnum_scheme_linux.decode(
				 &m, SDNUM_MKDEV(259, 21845 * 48), &d2, &p2),
			 -ENODEV);
}

/* dynamic: a shuffled discovery order, and the compat map at open time. */
static void test_dynamic(void **state)
{
	enum { N = 5000 };
	uint32_t *ord = malloc(N * sizeof(*ord)),
		 *index = malloc(N * sizeof(*index));
	struct sdnum_dynmap m = {.n = N, .ord = ord, .index = index};
	struct rng rng = rng_init(88172645463325252ull);
	uint32_t i, j, t, dev, d, p, ldev;

	(void)state;
	assert_non_null(ord);
	assert_non_null(index);
	for (i = 0; i < N; i++)
		index[i] = i;
	for (i = N - 1; i > 0; i--) { /* Fisher-Yates */
		j = (uint32_t)rng_below(&rng, i + 1);
		t = index[i];
		index[i] = index[j];
		index[j] = t;
	}
	index[N - 1] = UINT32_MAX; /* one ordinal unused */
	for (i = 0; i < N; i++)
		ord[i] = UINT32_MAX;
	for (i = 0; i < N; i++)
		if (index[i] != UINT32_MAX)
			ord[index[i]] = i;
	for (i = 0; i < N; i++) {
		int r = sdnum_scheme_dynamic.encode(&m, i, 3, &dev);

		if (ord[i] == UINT32_MAX) {
			assert_int_equal(r, -EXDEV);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(SDNUM_MAJOR(dev),
				 SDNUM_DYNAMIC_MAJOR_BASE + ord[i] / 16384);
		assert_int_equal(sdnum_scheme_dynamic.decode(&m, dev, &d, &p),
				 0);
		assert_int_equal(d, i);
		assert_int_equal(p, 3);
		if (i < 256) {
			/* the old number of disk i opens the same disk */
			assert_int_equal(
				sdnum_scheme_legacy.encode(NULL, i, 3, &ldev),
				0);
			assert_int_equal(sdnum_dynamic_compat(&m, ldev, &t), 0);
			assert_int_equal(t, dev);
		}
	}
	assert_int_equal(sdnum_dynamic_compat(&m, SDNUM_MKDEV(3, 0), &t),
			 -ENODEV);
	assert_int_equal(sdnum_dynamic_compat(NULL, SDNUM_MKDEV(8, 17), &t), 0);
	assert_int_equal(t, SDNUM_MKDEV(SDNUM_DYNAMIC_MAJOR_BASE, 64 + 1));
	free(ord);
	free(index);
}

static void test_find(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; sdnum_scheme_at(i); i++)
		assert_ptr_equal(sdnum_scheme_find(sdnum_scheme_at(i)->name),
				 sdnum_scheme_at(i));
	assert_int_equal(i, 5);
	assert_null(sdnum_scheme_find("Linux"));
	assert_null(sdnum_scheme_find(NULL));
	assert_int_equal(sdnum_scheme_linux.max_disks, 1u << 20);
	assert_int_equal(sdnum_scheme_wilcox.max_disks, 262144);
	assert_int_equal(sdnum_scheme_legacy.max_disks, 256);
}

/* Kernel <-> user-space encodings, checked against glibc's own macros. */
static void test_encodings(void **state)
{
	uint32_t ma, mi, dev;
	uint16_t old;

	(void)state;
	for (ma = 0; ma <= SDNUM_MAX_MAJOR; ma++) {
		for (mi = 0; mi <= SDNUM_MINORMASK; mi += 4093) {
			dev = SDNUM_MKDEV(ma, mi);
			assert_int_equal(SDNUM_MAJOR(dev), ma);
			assert_int_equal(SDNUM_MINOR(dev), mi);
			assert_int_equal(
				sdnum_new_decode(sdnum_new_encode(dev)), dev);
			assert_true(sdnum_makedev(ma, mi) == makedev(ma, mi));
			assert_int_equal(sdnum_user_major(makedev(ma, mi)), ma);
			assert_int_equal(sdnum_user_minor(makedev(ma, mi)), mi);
			/* new_encode_dev is makedev for 12-bit majors */
			assert_true((uint64_t)sdnum_new_encode(dev) ==
				    makedev(ma, mi));
			if (ma < 256 && mi < 256) {
				assert_int_equal(sdnum_old_encode(dev, &old),
						 0);
				assert_int_equal(old, ma << 8 | mi);
				assert_int_equal(sdnum_old_decode(old), dev);
			} else {
				assert_int_equal(sdnum_old_encode(dev, &old),
						 -EOVERFLOW);
			}
		}
	}
	/* glibc's format reaches past the kernel's 12/20 bits */
	assert_true(sdnum_makedev(0xfffffu, 0xffffffffu) ==
		    makedev(0xfffffu, 0xffffffffu));
	assert_int_equal(sdnum_user_major(makedev(0xabcdef, 7)), 0xabcdef);
	assert_int_equal(sdnum_user_minor(makedev(7, 0xfedcba98u)),
			 0xfedcba98u);
	/* 8:16 is sdb in every encoding that can hold it */
	assert_int_equal(sdnum_old_encode(SDNUM_MKDEV(8, 16), &old), 0);
	assert_int_equal(old, 0x0810);
	assert_int_equal(sdnum_old_encode(SDNUM_MKDEV(8, 256), &old),
			 -EOVERFLOW);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sd_majors),
		cmocka_unit_test(test_roundtrip_legacy),
		cmocka_unit_test(test_roundtrip_naive),
		cmocka_unit_test(test_roundtrip_wilcox),
		cmocka_unit_test(test_roundtrip_linux),
		cmocka_unit_test(test_roundtrip_dynamic),
		cmocka_unit_test(test_bijective),
		cmocka_unit_test(test_legacy_compat),
		cmocka_unit_test(test_wilcox_mail_bugs),
		cmocka_unit_test(test_linux_ext),
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_encodings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
