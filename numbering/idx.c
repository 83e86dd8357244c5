// SPDX-License-Identifier: MIT
/*
 * Lowest-free index allocators with the kernel ida's contract. Both kinds
 * keep one bit per id in leaf words of 64 bits; the tree adds summary levels
 * above the leaves so that finding a free id never scans.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sdnum.h"

#define IDX_MAX_IDS (1u << 31)
#define IDX_WORD_BITS 64u
/* 2^31 ids: 2^25 leaf words, then 2^19, 2^13, 2^7, 2 and 1 summary words. */
#define IDX_MAX_LEVELS 6

struct idx_ops {
	/* Lowest free id in @min..@max (inclusive, @max < idx->max), or
	 * -ENOSPC. Does not take it. */
	int (*find)(const struct sdnum_idx *idx, uint32_t min, uint32_t max);
};

/*
 * level[0] holds the leaf bits, bit (id % 64) of word (id / 64) set iff id is
 * allocated. For the tree, bit i of a word at level l > 0 is set iff word i of
 * level l - 1 is full; the top level is a single word. Bits past the last id
 * (and past the last child word) are set at creation, so they look allocated
 * (or full) and no search has to bound-check them.
 */
struct sdnum_idx {
	const struct idx_ops *ops;
	uint32_t max;
	uint32_t count;
	unsigned int nlevels;
	size_t nwords[IDX_MAX_LEVELS];
	uint64_t *level[IDX_MAX_LEVELS];
	size_t total_words;
};

static inline unsigned int idx_ctz(uint64_t w)
{
	return (unsigned int)__builtin_ctzll(w);
}

/* The bits of a word at and above bit @bit (0..63). */
static inline uint64_t idx_from(unsigned int bit)
{
	return ~0ull << bit;
}

/*
 * O(n/64) per call: the 2.6 sd_index_bits baseline, which ran
 * find_first_zero_bit() over the whole bitmap for every probed disk.
 */
static int bitmap_find(const struct sdnum_idx *idx, uint32_t min, uint32_t max)
{
	const uint64_t *leaf = idx->level[0];
	size_t i = min / IDX_WORD_BITS;
	size_t last = max / IDX_WORD_BITS;
	uint64_t avail = ~leaf[i] & idx_from(min % IDX_WORD_BITS);

	while (!avail) {
		if (++i > last)
			return -ENOSPC;
		avail = ~leaf[i];
	}
	i = i * IDX_WORD_BITS + idx_ctz(avail);
	return i <= max ? (int)i : -ENOSPC;
}

/*
 * From a zero bit at position @pos of level @l, go down to the lowest free
 * leaf below it: a clear summary bit means its child word is not full, so
 * each level has a zero bit to take. One load per level.
 */
static size_t tree_descend(const struct sdnum_idx *idx, unsigned int l,
			   size_t pos)
{
	while (l > 0) {
		l--;
		pos = pos * IDX_WORD_BITS + idx_ctz(~idx->level[l][pos]);
	}
	return pos;
}

/*
 * The lowest free id >= @min: look in @min's leaf word at and above @min;
 * failing that, climb, at each level looking only at the siblings to the
 * right of the word just exhausted; the first clear bit found is then
 * followed down. At most 2 * nlevels word loads: O(log64 n).
 */
static int tree_find(const struct sdnum_idx *idx, uint32_t min, uint32_t max)
{
	unsigned int l = 0;
	size_t pos = min;
	uint64_t avail;

	if (min == 0) {
		/* The plain alloc: straight down from the top word. */
		l = idx->nlevels - 1;
		if (idx->level[l][0] == ~0ull)
			return -ENOSPC;
		pos = tree_descend(idx, l, idx_ctz(~idx->level[l][0]));
		return pos <= max ? (int)pos : -ENOSPC;
	}

	for (;;) {
		avail = ~idx->level[l][pos / IDX_WORD_BITS] &
			idx_from(pos % IDX_WORD_BITS);
		if (avail)
			break;
		if (++l == idx->nlevels)
			return -ENOSPC;
		/* Word pos / 64 of level l - 1 has nothing at or above pos:
		 * continue with the next word, i.e. the next bit up here. */
		pos = pos / IDX_WORD_BITS + 1;
		if (pos >= idx->nwords[l - 1])
			return -ENOSPC;
	}
	pos = (pos / IDX_WORD_BITS) * IDX_WORD_BITS + idx_ctz(avail);
	pos = tree_descend(idx, l, pos);
	return pos <= max ? (int)pos : -ENOSPC;
}

static const struct idx_ops idx_ops_table[] = {
	[SDNUM_IDX_BITMAP] = {.find = bitmap_find},
	[SDNUM_IDX_TREE] = {.find = tree_find},
};

/* Set @id's leaf bit and, while words become full, the summary bits above. */
static void idx_set(struct sdnum_idx *idx, uint32_t id)
{
	size_t pos = id;
	unsigned int l;

	for (l = 0; l < idx->nlevels; l++) {
		uint64_t *w = &idx->level[l][pos / IDX_WORD_BITS];

		*w |= 1ull << (pos % IDX_WORD_BITS);
		if (*w != ~0ull)
			break;
		pos /= IDX_WORD_BITS;
	}
}

/* Clear @id's leaf bit and the 'full' bits of every word that was full. */
static void idx_clear(struct sdnum_idx *idx, uint32_t id)
{
	size_t pos = id;
	unsigned int l;

	for (l = 0; l < idx->nlevels; l++) {
		uint64_t *w = &idx->level[l][pos / IDX_WORD_BITS];
		bool was_full = *w == ~0ull;

		*w &= ~(1ull << (pos % IDX_WORD_BITS));
		if (!was_full)
			break;
		pos /= IDX_WORD_BITS;
	}
}

int sdnum_idx_create(struct sdnum_idx **out, enum sdnum_idx_kind kind,
		     uint32_t max)
{
	struct sdnum_idx *idx;
	size_t n, total = 0;
	unsigned int l;

	if (!out || max == 0 || max > IDX_MAX_IDS)
		return -EINVAL;
	if (kind != SDNUM_IDX_BITMAP && kind != SDNUM_IDX_TREE)
		return -EINVAL;

	idx = calloc(1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	idx->ops = &idx_ops_table[kind];
	idx->max = max;

	n = ((size_t)max + IDX_WORD_BITS - 1) / IDX_WORD_BITS;
	for (;;) {
		idx->nwords[idx->nlevels++] = n;
		total += n;
		if (kind == SDNUM_IDX_BITMAP || n == 1)
			break;
		n = (n + IDX_WORD_BITS - 1) / IDX_WORD_BITS;
	}

	/*
	 * One zeroed block for all levels: 1/8 byte per id plus 1/63 of that
	 * for the summaries (256 MiB + 4 MiB at 2^31 ids). A large calloc is
	 * fresh anonymous memory, so pages no id has reached are never
	 * touched; creating never needs to scan it, and alloc never allocates.
	 */
	idx->level[0] = calloc(total, sizeof(uint64_t));
	if (!idx->level[0])
		goto out_free_idx;
	for (l = 1; l < idx->nlevels; l++)
		idx->level[l] = idx->level[l - 1] + idx->nwords[l - 1];
	idx->total_words = total;

	/* Ids past @max and children past the last word read as taken. */
	if (max % IDX_WORD_BITS)
		idx->level[0][idx->nwords[0] - 1] =
			idx_from(max % IDX_WORD_BITS);
	for (l = 1; l < idx->nlevels; l++) {
		n = idx->nwords[l - 1] % IDX_WORD_BITS;
		if (n)
			idx->level[l][idx->nwords[l] - 1] =
				idx_from((unsigned int)n);
	}

	*out = idx;
	return 0;

out_free_idx:
	free(idx);
	return -ENOMEM;
}

void sdnum_idx_destroy(struct sdnum_idx *idx)
{
	if (!idx)
		return;
	free(idx->level[0]);
	free(idx);
}

int sdnum_idx_alloc_range(struct sdnum_idx *idx, uint32_t min, uint32_t max)
{
	int id;

	if (min > max)
		return -EINVAL;
	if (max >= idx->max)
		max = idx->max - 1;
	if (min > max)
		return -ENOSPC;

	id = idx->ops->find(idx, min, max);
	if (id < 0)
		return id;
	idx_set(idx, (uint32_t)id);
	idx->count++;
	return id;
}

int sdnum_idx_alloc(struct sdnum_idx *idx)
{
	return sdnum_idx_alloc_range(idx, 0, idx->max - 1);
}

int sdnum_idx_test(const struct sdnum_idx *idx, uint32_t id)
{
	if (id >= idx->max)
		return 0;
	return (idx->level[0][id / IDX_WORD_BITS] >> (id % IDX_WORD_BITS)) & 1;
}

int sdnum_idx_free(struct sdnum_idx *idx, uint32_t id)
{
	if (id >= idx->max)
		return -EINVAL;
	if (!sdnum_idx_test(idx, id))
		return -ENOENT;
	idx_clear(idx, id);
	idx->count--;
	return 0;
}

uint32_t sdnum_idx_count(const struct sdnum_idx *idx)
{
	return idx->count;
}

size_t sdnum_idx_bytes(const struct sdnum_idx *idx)
{
	return sizeof(*idx) + idx->total_words * sizeof(uint64_t);
}
