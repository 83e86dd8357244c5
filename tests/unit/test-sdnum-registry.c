// SPDX-License-Identifier: MIT
/*
 * The dev_t registries: both kinds give the same answers as a sorted array
 * searched by bisection, over the mainline sd layout at 262,144 disks,
 * extended minors on major 259 and random ranges; failures change nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "rng.h"
#include "sdnum.h"

static const enum sdnum_reg_kind kinds[] = {SDNUM_REG_CHAIN, SDNUM_REG_RADIX};
#define NKINDS (ARRAY_SIZE(kinds))

/* The objects registered: only their addresses matter. */
static char objs[8];
#define OBJ(i) ((void *)&objs[(i)])

static struct sdnum_reg *reg_new(enum sdnum_reg_kind kind)
{
	struct sdnum_reg *r = NULL;

	assert_int_equal(sdnum_reg_create(&r, kind), 0);
	assert_non_null(r);
	return r;
}

/* lookup() must give @obj at offset @off; NULL @obj: unregistered. */
static void expect(const struct sdnum_reg *r, uint32_t dev, void *obj,
		   uint32_t off)
{
	uint32_t got_off = UINT32_MAX;
	void *got = sdnum_reg_lookup(r, dev, &got_off);

	if (got != obj)
		fail_msg("%u:%u: object %p, expected %p", SDNUM_MAJOR(dev),
			 SDNUM_MINOR(dev), got, obj);
	if (obj && got_off != off)
		fail_msg("%u:%u: offset %u, expected %u", SDNUM_MAJOR(dev),
			 SDNUM_MINOR(dev), got_off, off);
	if (!obj && got_off != UINT32_MAX)
		fail_msg("%u:%u: offset written for a miss", SDNUM_MAJOR(dev),
			 SDNUM_MINOR(dev));
}

static void test_create_bad(void **state)
{
	struct sdnum_reg *r = NULL;

	(void)state;
	assert_int_equal(sdnum_reg_create(&r, (enum sdnum_reg_kind)5), -EINVAL);
	assert_null(r);
	assert_int_equal(sdnum_reg_create(NULL, SDNUM_REG_RADIX), -EINVAL);
	sdnum_reg_destroy(NULL);
}

static void test_add_lookup_remove(void **state)
{
	const uint32_t d8 = SDNUM_MKDEV(8, 0), d65 = SDNUM_MKDEV(65, 0);
	const uint32_t d259 = SDNUM_MKDEV(SDNUM_EXT_MAJOR, 0);
	size_t k;
	uint32_t m;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_reg *r = reg_new(kinds[k]);

		expect(r, d8, NULL, 0);
		assert_int_equal(sdnum_reg_add(r, d8, 16, OBJ(0)), 0);
		assert_int_equal(sdnum_reg_add(r, d8 + 16, 16, OBJ(1)), 0);
		for (m = 0; m < 16; m++) {
			expect(r, d8 + m, OBJ(0), m);
			expect(r, d8 + 16 + m, OBJ(1), m);
		}
		expect(r, d8 + 32, NULL, 0);
		expect(r, d8 - 1, NULL, 0);
		/* Same minors, another major: not registered. */
		expect(r, SDNUM_MKDEV(9, 0), NULL, 0);
		expect(r, SDNUM_MKDEV(263, 0), NULL, 0);
		assert_ptr_equal(sdnum_reg_lookup(r, d8 + 3, NULL), OBJ(0));

		/* Unaligned ranges: partial blocks at both ends. */
		assert_int_equal(sdnum_reg_add(r, d65 + 3, 40, OBJ(2)), 0);
		assert_int_equal(sdnum_reg_add(r, d65 + 43, 1, OBJ(3)), 0);
		assert_int_equal(sdnum_reg_add(r, d65, 3, OBJ(4)), 0);
		for (m = 0; m < 3; m++)
			expect(r, d65 + m, OBJ(4), m);
		for (m = 3; m < 43; m++)
			expect(r, d65 + m, OBJ(2), m - 3);
		expect(r, d65 + 43, OBJ(3), 0);
		expect(r, d65 + 44, NULL, 0);

		/* A whole major. */
		assert_int_equal(
			sdnum_reg_add(r, d259, SDNUM_MINORMASK + 1, OBJ(5)), 0);
		expect(r, d259, OBJ(5), 0);
		expect(r, d259 + 0x12345, OBJ(5), 0x12345);
		expect(r, d259 + SDNUM_MINORMASK, OBJ(5), SDNUM_MINORMASK);
		expect(r, d259 + SDNUM_MINORMASK + 1, NULL, 0);

		/* Remove needs the exact range. */
		assert_int_equal(sdnum_reg_remove(r, d8, 15), -ENOENT);
		assert_int_equal(sdnum_reg_remove(r, d8, 17), -ENOENT);
		assert_int_equal(sdnum_reg_remove(r, d8 + 1, 15), -ENOENT);
		assert_int_equal(sdnum_reg_remove(r, d8, 0), -ENOENT);
		assert_int_equal(sdnum_reg_remove(r, SDNUM_MKDEV(9, 0), 16),
				 -ENOENT);
		expect(r, d8, OBJ(0), 0);
		assert_int_equal(sdnum_reg_remove(r, d8, 16), 0);
		assert_int_equal(sdnum_reg_remove(r, d8, 16), -ENOENT);
		expect(r, d8, NULL, 0);
		expect(r, d8 + 15, NULL, 0);
		expect(r, d8 + 16, OBJ(1), 0);
		assert_int_equal(sdnum_reg_remove(r, d65 + 3, 40), 0);
		expect(r, d65 + 2, OBJ(4), 2);
		expect(r, d65 + 3, NULL, 0);
		expect(r, d65 + 42, NULL, 0);
		expect(r, d65 + 43, OBJ(3), 0);
		/* And the freed minors can be taken again, differently. */
		assert_int_equal(sdnum_reg_add(r, d65 + 5, 30, OBJ(6)), 0);
		expect(r, d65 + 34, OBJ(6), 29);
		assert_int_equal(sdnum_reg_remove(r, d259, SDNUM_MINORMASK + 1),
				 0);
		expect(r, d259 + 7, NULL, 0);
		sdnum_reg_destroy(r);
	}
}

static void test_bad_ranges(void **state)
{
	const uint32_t top = SDNUM_MKDEV(8, 0xffff0);
	size_t k;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_reg *r = reg_new(kinds[k]);

		assert_int_equal(sdnum_reg_add(r, top, 0, OBJ(0)), -EINVAL);
		assert_int_equal(sdnum_reg_add(r, top, 17, OBJ(0)), -EINVAL);
		assert_int_equal(sdnum_reg_add(r, SDNUM_MKDEV(8, 0),
					       SDNUM_MINORMASK + 2, OBJ(0)),
				 -EINVAL);
		assert_int_equal(sdnum_reg_add(r, top, UINT32_MAX, OBJ(0)),
				 -EINVAL);
		assert_int_equal(sdnum_reg_add(r, top, 1, NULL), -EINVAL);
		assert_int_equal(sdnum_reg_add(r, UINT32_MAX, 2, OBJ(0)),
				 -EINVAL);
		expect(r, top, NULL, 0);
		expect(r, top + 16, NULL, 0);
		assert_int_equal(sdnum_reg_remove(r, top, 17), -ENOENT);

		/* The last minors of a major, and the very last dev_t. */
		assert_int_equal(sdnum_reg_add(r, top, 16, OBJ(1)), 0);
		expect(r, top + 15, OBJ(1), 15);
		expect(r, SDNUM_MKDEV(9, 0), NULL, 0);
		assert_int_equal(sdnum_reg_add(r, UINT32_MAX, 1, OBJ(2)), 0);
		expect(r, UINT32_MAX, OBJ(2), 0);
		expect(r, UINT32_MAX - 1, NULL, 0);
		expect(r, 0, NULL, 0);
		assert_int_equal(sdnum_reg_remove(r, UINT32_MAX, 1), 0);
		sdnum_reg_destroy(r);
	}
}

/* What major 8's minors 0..299 should map to in test_overlap. */
static void overlap_expect_all(const struct sdnum_reg *r)
{
	uint32_t m, d8 = SDNUM_MKDEV(8, 0);

	for (m = 0; m < 300; m++) {
		if (m >= 16 && m < 32)
			expect(r, d8 + m, OBJ(0), m - 16);
		else if (m == 40)
			expect(r, d8 + m, OBJ(1), 0);
		else if (m >= 100 && m < 200)
			expect(r, d8 + m, OBJ(2), m - 100);
		else
			expect(r, d8 + m, NULL, 0);
	}
}

static void test_overlap(void **state)
{
	static const struct {
		uint32_t minor, count;
	} clash[] = {
		{0, 17},       {31, 1},	 {16, 16},   {20, 2},
		{32, 9},       {40, 1},	 {39, 2},    {41, 60},
		{0, 1u << 20}, {199, 1}, {150, 500}, {33, 200},
	};
	const uint32_t d8 = SDNUM_MKDEV(8, 0);
	size_t k, c;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_reg *r = reg_new(kinds[k]);
		size_t bytes;

		assert_int_equal(sdnum_reg_add(r, d8 + 16, 16, OBJ(0)), 0);
		assert_int_equal(sdnum_reg_add(r, d8 + 40, 1, OBJ(1)), 0);
		assert_int_equal(sdnum_reg_add(r, d8 + 100, 100, OBJ(2)), 0);
		bytes = sdnum_reg_bytes(r);
		for (c = 0; c < ARRAY_SIZE(clash); c++) {
			if (sdnum_reg_add(r, d8 + clash[c].minor,
					  clash[c].count, OBJ(7)) != -EEXIST)
				fail_msg("kind %zu: 8:%u+%u was not -EEXIST", k,
					 clash[c].minor, clash[c].count);
			/* Nothing half-written, nothing leaked. */
			overlap_expect_all(r);
			assert_int_equal(sdnum_reg_bytes(r), bytes);
		}
		/* The gaps between them are still free to take. */
		assert_int_equal(sdnum_reg_add(r, d8 + 32, 8, OBJ(3)), 0);
		assert_int_equal(sdnum_reg_add(r, d8 + 41, 59, OBJ(4)), 0);
		assert_int_equal(sdnum_reg_add(r, d8, 16, OBJ(5)), 0);
		expect(r, d8 + 39, OBJ(3), 7);
		expect(r, d8 + 41, OBJ(4), 0);
		expect(r, d8 + 99, OBJ(4), 58);
		expect(r, d8 + 40, OBJ(1), 0);
		sdnum_reg_destroy(r);
	}
}

/* Ranges over many 65536-minor chunks, empty ones between taken ones. */
static void test_overlap_far(void **state)
{
	const uint32_t d = SDNUM_MKDEV(70, 0);
	size_t k;

	(void)state;
	for (k = 0; k < NKINDS; k++) {
		struct sdnum_reg *r = reg_new(kinds[k]);

		assert_int_equal(sdnum_reg_add(r, d + 0x10000, 16, OBJ(0)), 0);
		assert_int_equal(sdnum_reg_add(r, d + 0x30005, 1, OBJ(1)), 0);
		assert_int_equal(sdnum_reg_add(r, d, 0x10001, OBJ(7)), -EEXIST);
		assert_int_equal(sdnum_reg_add(r, d + 0x20000, 0x10006, OBJ(7)),
				 -EEXIST);
		assert_int_equal(
			sdnum_reg_add(r, d, SDNUM_MINORMASK + 1, OBJ(7)),
			-EEXIST);
		expect(r, d, NULL, 0);
		expect(r, d + 0x20000, NULL, 0);
		/* Right up to them is free. */
		assert_int_equal(sdnum_reg_add(r, d + 0x8000, 0x8000, OBJ(2)),
				 0);
		assert_int_equal(sdnum_reg_add(r, d + 0x20000, 0x10005, OBJ(3)),
				 0);
		expect(r, d + 0xffff, OBJ(2), 0x7fff);
		expect(r, d + 0x10000, OBJ(0), 0);
		expect(r, d + 0x10010, NULL, 0);
		expect(r, d + 0x30004, OBJ(3), 0x10004);
		expect(r, d + 0x30005, OBJ(1), 0);
		expect(r, d + 0x30006, NULL, 0);
		assert_int_equal(sdnum_reg_remove(r, d + 0x20000, 0x10005), 0);
		expect(r, d + 0x2abcd, NULL, 0);
		expect(r, d + 0x30005, OBJ(1), 0);
		sdnum_reg_destroy(r);
	}
}

/* Sub-tables and chunks are released: add/remove churn over the 4,095 other
 * blocks of a chunk leaves the memory where it was after the first. */
static void test_radix_memory(void **state)
{
	const uint32_t d259 = SDNUM_MKDEV(SDNUM_EXT_MAJOR, 0);
	struct sdnum_reg *r = reg_new(SDNUM_REG_RADIX);
	size_t empty = sdnum_reg_bytes(r), bytes = 0;
	uint32_t b;

	(void)state;
	assert_int_equal(sdnum_reg_add(r, d259, 1, OBJ(0)), 0);
	/* A chunk of 4096 16-byte block slots, and a sub-table. */
	assert_true(sdnum_reg_bytes(r) >= empty + 65536);
	assert_true(sdnum_reg_bytes(r) <= empty + 65536 + 65536 + 1024);
	for (b = 1; b < 4096; b++) {
		assert_int_equal(sdnum_reg_add(r, d259 + b * 16 + 3, 1, OBJ(1)),
				 0);
		expect(r, d259 + b * 16 + 3, OBJ(1), 0);
		assert_int_equal(sdnum_reg_remove(r, d259 + b * 16 + 3, 1), 0);
		expect(r, d259 + b * 16 + 3, NULL, 0);
		if (b == 1)
			bytes = sdnum_reg_bytes(r);
		else if (sdnum_reg_bytes(r) != bytes)
			fail_msg("memory grew at block %u", b);
	}
	expect(r, d259, OBJ(0), 0);
	/* The major's last range goes, and its chunk with it. */
	assert_int_equal(sdnum_reg_remove(r, d259, 1), 0);
	assert_true(sdnum_reg_bytes(r) + 65536 <= bytes);
	sdnum_reg_destroy(r);
}

/* ------------------------------------------------------------------ */
/* The reference: ranges sorted by first dev_t, found by bisection.   */
/* ------------------------------------------------------------------ */

struct ref_range {
	uint32_t dev;
	uint32_t count;
	uint32_t id;
	bool live;
};

struct layout {
	struct ref_range *v;
	size_t n;
	char *objs;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_range *x = a, *y = b;

	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* The live range holding @dev, or NULL. Ranges are disjoint, so only the
 * last one starting at or before @dev can hold it. */
static const struct ref_range *ref_find(const struct layout *L, uint32_t dev)
{
	size_t lo = 0, hi = L->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (L->v[mid].dev <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (!L->v[lo - 1].live || dev - L->v[lo - 1].dev >= L->v[lo - 1].count)
		return NULL;
	return &L->v[lo - 1];
}

static void layout_push(struct layout *L, size_t cap, uint32_t dev,
			uint32_t count)
{
	assert_true(L->n < cap);
	L->v[L->n].dev = dev;
	L->v[L->n].count = count;
	L->v[L->n].id = (uint32_t)L->n;
	L->v[L->n].live = true;
	L->n++;
}

/*
 * @ndisks sd disks of 16 minors in the mainline layout, @nsingles extended
 * minors on major 259 in allocation order, then @nrandom attempts at random
 * ranges (1..300 minors) on major 300: each attempt is added to every
 * registry in @regs and must succeed or be -EEXIST exactly as the reference
 * (a bitmap of that major's first 16384 minors) says.
 */
static void layout_build(struct layout *L, struct sdnum_reg **regs,
			 size_t nregs, uint32_t ndisks, uint32_t nsingles,
			 uint32_t nrandom, uint64_t seed)
{
	const size_t cap = (size_t)ndisks + nsingles + nrandom;
	const uint32_t span = 16384;
	bool *taken = calloc(span, sizeof(*taken));
	struct rng rng = rng_init(seed);
	uint32_t i, m;
	size_t k;

	assert_non_null(taken);
	L->v = calloc(cap, sizeof(*L->v));
	L->objs = calloc(cap, 1);
	L->n = 0;
	assert_non_null(L->v);
	assert_non_null(L->objs);

	for (i = 0; i < ndisks; i++) {
		uint32_t major = sdnum_sd_major((i & 0xf0) >> 4);
		uint32_t minor = ((i & 0xf) << 4) | (i & 0xfff00);

		layout_push(L, cap, SDNUM_MKDEV(major, minor), 16);
	}
	for (i = 0; i < nsingles; i++)
		layout_push(L, cap, SDNUM_MKDEV(SDNUM_EXT_MAJOR, i), 1);
	for (i = 0; i < L->n; i++)
		for (k = 0; k < nregs; k++)
			if (sdnum_reg_add(regs[k], L->v[i].dev, L->v[i].count,
					  &L->objs[i]) != 0)
				fail_msg("range %u (%u:%u+%u) not added", i,
					 SDNUM_MAJOR(L->v[i].dev),
					 SDNUM_MINOR(L->v[i].dev),
					 L->v[i].count);

	for (i = 0; i < nrandom; i++) {
		uint32_t count = 1 + rng_below(&rng, 300);
		uint32_t first = rng_below(&rng, span - count + 1);
		uint32_t dev = SDNUM_MKDEV(300, first);
		int want = 0;

		for (m = first; m < first + count; m++)
			if (taken[m])
				want = -EEXIST;
		for (k = 0; k < nregs; k++) {
			int got = sdnum_reg_add(regs[k], dev, count,
						&L->objs[L->n]);

			if (got != want)
				fail_msg(
					"random range 300:%u+%u: %d, expected %d",
					first, count, got, want);
		}
		if (want)
			continue;
		for (m = first; m < first + count; m++)
			taken[m] = true;
		layout_push(L, cap, dev, count);
	}
	free(taken);

	/* Sorted by dev, the ids still name each range's object. */
	qsort(L->v, L->n, sizeof(*L->v), ref_cmp);
}

static void layout_free(struct layout *L)
{
	free(L->v);
	free(L->objs);
}

/* A dev_t to look up: inside, just outside, or anywhere. */
static uint32_t pick_dev(const struct layout *L, struct rng *rng)
{
	const struct ref_range *x = &L->v[rng_below(rng, (uint32_t)L->n)];

	switch (rng_below(rng, 10)) {
	case 0:
		return x->dev - 1;
	case 1:
		return x->dev + x->count;
	case 2:
		return (uint32_t)rng_next(rng);
	case 3:
		return SDNUM_MKDEV(sdnum_sd_major(rng_below(rng, 16)),
				   rng_below(rng, 1u << 19));
	case 4:
		return SDNUM_MKDEV(rng_below(rng, 2) ? SDNUM_EXT_MAJOR : 300,
				   rng_below(rng, 20000));
	default:
		return x->dev + rng_below(rng, x->count);
	}
}

static void check_lookups(const struct layout *L, struct sdnum_reg **regs,
			  size_t nregs, unsigned int n, uint64_t seed)
{
	struct rng rng = rng_init(seed);
	unsigned int i;
	size_t k;

	for (i = 0; i < n; i++) {
		uint32_t dev = pick_dev(L, &rng);
		const struct ref_range *x = ref_find(L, dev);

		for (k = 0; k < nregs; k++) {
			if (x)
				expect(regs[k], dev, &L->objs[x->id],
				       dev - x->dev);
			else
				expect(regs[k], dev, NULL, 0);
		}
	}
}

/* Remove about half, check, try the removed again, re-add a quarter. */
static void churn(struct layout *L, struct sdnum_reg **regs, size_t nregs,
		  uint64_t seed)
{
	struct rng rng = rng_init(seed);
	size_t i, k;

	for (i = 0; i < L->n; i++) {
		struct ref_range *x = &L->v[i];

		if (rng_below(&rng, 2))
			continue;
		for (k = 0; k < nregs; k++) {
			/* The wrong length is not the range added. */
			assert_int_equal(
				sdnum_reg_remove(regs[k], x->dev, x->count + 1),
				-ENOENT);
			assert_int_equal(
				sdnum_reg_remove(regs[k], x->dev, x->count), 0);
			assert_int_equal(
				sdnum_reg_remove(regs[k], x->dev, x->count),
				-ENOENT);
		}
		x->live = false;
	}
	check_lookups(L, regs, nregs, 300000, seed + 1);

	for (i = 0; i < L->n; i++) {
		struct ref_range *x = &L->v[i];

		if (x->live || rng_below(&rng, 2))
			continue;
		for (k = 0; k < nregs; k++)
			assert_int_equal(sdnum_reg_add(regs[k], x->dev,
						       x->count,
						       &L->objs[x->id]),
					 0);
		x->live = true;
	}
	check_lookups(L, regs, nregs, 300000, seed + 2);
}

static void remove_all(struct layout *L, struct sdnum_reg **regs, size_t nregs)
{
	size_t i, k;

	for (i = 0; i < L->n; i++) {
		if (!L->v[i].live)
			continue;
		for (k = 0; k < nregs; k++)
			assert_int_equal(sdnum_reg_remove(regs[k], L->v[i].dev,
							  L->v[i].count),
					 0);
		L->v[i].live = false;
	}
	check_lookups(L, regs, nregs, 20000, 99);
}

/* 262,144 disks, 3,000 extended minors and random ranges, radix only. */
static void test_layout_radix(void **state)
{
	struct sdnum_reg *r = reg_new(SDNUM_REG_RADIX);
	struct layout L;
	size_t full, empty = sdnum_reg_bytes(r);

	(void)state;
	layout_build(&L, &r, 1, 1u << 18, 3000, 3000, 0x853c49e6748fea9bull);
	/* A 64 KiB chunk per 4096 disks (64 of them), one for major 259's
	 * minors, one for major 300's; sub-tables for the shared blocks. */
	full = sdnum_reg_bytes(r);
	assert_true(full >= empty + 66 * 65536);
	assert_true(full <= empty + 66 * 65536 + (1u << 20));
	check_lookups(&L, &r, 1, 1000000, 7);
	churn(&L, &r, 1, 11);
	remove_all(&L, &r, 1);
	/* Every chunk is gone; the sub-table slab stays for reuse. */
	assert_true(sdnum_reg_bytes(r) + 66 * 65536 <= full);
	sdnum_reg_destroy(r);
	layout_free(&L);
}

/* The baseline and the fast path side by side on a smaller sample. */
static void test_layout_both(void **state)
{
	struct sdnum_reg *regs[NKINDS];
	struct layout L;
	size_t k;

	(void)state;
	for (k = 0; k < NKINDS; k++)
		regs[k] = reg_new(kinds[k]);
	layout_build(&L, regs, NKINDS, 4096, 1000, 1500, 0xda942042e4dd58b5ull);
	check_lookups(&L, regs, NKINDS, 200000, 5);
	churn(&L, regs, NKINDS, 13);
	remove_all(&L, regs, NKINDS);
	for (k = 0; k < NKINDS; k++)
		sdnum_reg_destroy(regs[k]);
	layout_free(&L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_bad),
		cmocka_unit_test(test_add_lookup_remove),
		cmocka_unit_test(test_bad_ranges),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_overlap_far),
		cmocka_unit_test(test_radix_memory),
		cmocka_unit_test(test_layout_radix),
		cmocka_unit_test(test_layout_both),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
