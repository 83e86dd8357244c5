// SPDX-License-Identifier: MIT
/*
 * The mem store: holes read as zeros, unaligned round trips against a shadow
 * copy, zero-detect, unmap of whole and partial chunks, the memory limit
 * (whole-write failure, recovery after unmap), the 2% metadata budget,
 * drop_lun, store_mapped runs, threads and per-chunk atomicity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "store/store.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)

/* Reproducible pseudo-random bytes, never zero, from @seed. */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	struct rng r = rng_init(seed);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(rng_next(&r) | 1);
}

static bool all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static struct store *mk(size_t chunk, uint64_t limit, unsigned int shards)
{
	struct store_mem_params p = {
		.chunk_size = chunk, .mem_limit = limit, .shards = shards};
	struct store *s = NULL;

	assert_int_equal(store_mem_create(&s, &p), 0);
	assert_non_null(s);
	return s;
}

static struct store_stats stats(struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	return st;
}

static void test_holes(void **state)
{
	unsigned char buf[10000];
	struct store_stats st0, st;
	struct store *s = mk(0, 0, 0);

	(void)state;
	assert_string_equal(store_kind(s), "mem");
	assert_int_equal(store_granularity(s), 4096);
	st0 = stats(s);
	assert_int_equal(st0.data_bytes, 0);
	assert_int_equal(st0.chunks, 0);
	/* Nothing but the shard array and the store itself. */
	assert_true(st0.meta_bytes < 16 * KiB);

	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(store_read(s, 0, 0, buf, sizeof(buf)), 0);
	assert_true(all_zero(buf, sizeof(buf)));
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(store_read(s, STORE_MAX_LUNS - 1,
				    STORE_MAX_BYTES - sizeof(buf), buf,
				    sizeof(buf)),
			 0);
	assert_true(all_zero(buf, sizeof(buf)));

	/* A written LUN's holes read as zeros too, around its data. */
	memset(buf, 0x5a, 100);
	assert_int_equal(store_write(s, 3, 8190, buf, 100, 0), 0);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(store_read(s, 3, 4096 * 5, buf, 4096), 0);
	assert_true(all_zero(buf, 4096));

	/* Reads allocate nothing. */
	st = stats(s);
	assert_int_equal(st.chunks, 2);
	assert_int_equal(st.reads, 3);
	assert_int_equal(st.writes, 1);
	assert_int_equal(store_lun_bytes(s, 3), 2 * 4096);
	assert_int_equal(store_lun_bytes(s, 0), 0);
	store_destroy(s);
}

/* Random writes and reads at any alignment against a shadow copy. */
static void roundtrip(size_t chunk)
{
	const size_t span = 64 * chunk + 777;
	unsigned char *shadow = calloc(1, span), *buf = malloc(span);
	struct store *s = mk(chunk, 0, 4);
	struct rng rng = rng_init(0x1234 + chunk);
	int i;

	assert_non_null(shadow);
	assert_non_null(buf);
	for (i = 0; i < 3000; i++) {
		size_t off = rng_below(&rng, span);
		size_t len = 1 + rng_below(&rng, 3 * chunk + 5);
		uint64_t base = 1000 * MiB; /* not chunk 0 of the LUN */

		if (len > span - off)
			len = span - off;
		if (rng_below(&rng, 3)) {
			if (rng_below(&rng, 5) == 0)
				memset(buf, 0, len);
			else
				fill(buf, len, rng_next(&rng));
			assert_int_equal(
				store_write(s, 7, base + off, buf, len, 0), 0);
			memcpy(shadow + off, buf, len);
		} else {
			memset(buf, 0xee, len);
			assert_int_equal(store_read(s, 7, base + off, buf, len),
					 0);
			assert_memory_equal(buf, shadow + off, len);
		}
	}
	assert_int_equal(store_read(s, 7, 1000 * MiB, buf, span), 0);
	assert_memory_equal(buf, shadow, span);
	/* Other LUNs saw none of it. */
	assert_int_equal(store_read(s, 8, 1000 * MiB, buf, span), 0);
	assert_true(all_zero(buf, span));
	store_destroy(s);
	free(buf);
	free(shadow);
}

static void test_roundtrip(void **state)
{
	(void)state;
	roundtrip(512);
	roundtrip(4096);
	roundtrip(65536);
}

static void test_zero_detect(void **state)
{
	unsigned char buf[3 * 4096], z[3 * 4096] = {0};
	struct store *s = mk(4096, 0, 0);
	struct store_stats st;

	(void)state;
	/* Zeroes written into a hole allocate nothing. */
	assert_int_equal(store_write(s, 1, 100, z, sizeof(z), 0), 0);
	assert_int_equal(stats(s).chunks, 0);

	fill(buf, sizeof(buf), 1);
	assert_int_equal(store_write(s, 1, 0, buf, sizeof(buf), 0), 0);
	assert_int_equal(stats(s).chunks, 3);

	/* Half a chunk zeroed: still data in it. */
	assert_int_equal(store_write(s, 1, 4096, z, 2048, 0), 0);
	assert_int_equal(stats(s).chunks, 3);
	/* The other half too: the chunk is freed. */
	assert_int_equal(store_write(s, 1, 4096 + 2048, z, 2048, 0), 0);
	st = stats(s);
	assert_int_equal(st.chunks, 2);
	assert_int_equal(st.unmapped_bytes, 4096);
	assert_int_equal(store_lun_bytes(s, 1), 2 * 4096);

	/* An unaligned zero write across the remaining two frees both. */
	assert_int_equal(store_write(s, 1, 0, z, 4096, 0), 0);
	assert_int_equal(store_write(s, 1, 2 * 4096, z, 4096, 0), 0);
	assert_int_equal(stats(s).chunks, 0);
	assert_int_equal(stats(s).free_bytes, 3 * 4096);
	assert_int_equal(store_read(s, 1, 0, buf, sizeof(buf)), 0);
	assert_true(all_zero(buf, sizeof(buf)));

	/* Freed chunks are reused (same keys, so the same shards), and their
	 * stale bytes never show through a partial write. */
	{
		uint64_t slab = stats(s).slab_bytes;

		fill(buf, sizeof(buf), 2);
		assert_int_equal(store_write(s, 1, 0, buf, sizeof(buf), 0), 0);
		assert_int_equal(stats(s).free_bytes, 0);
		assert_int_equal(store_unmap(s, 1, 0, sizeof(buf)), 0);
		assert_int_equal(store_write(s, 1, 4000, buf, 10, 0), 0);
		assert_int_equal(stats(s).slab_bytes, slab);
		assert_int_equal(store_read(s, 1, 0, z, 4096), 0);
		assert_true(all_zero(z, 4000));
		assert_memory_equal(z + 4000, buf, 10);
		assert_true(all_zero(z + 4010, 86));
	}
	store_destroy(s);
}

static int mapped(struct store *s, uint32_t lun, uint64_t off, uint64_t limit,
		  uint64_t *len)
{
	return store_mapped(s, lun, off, limit, len);
}

static void test_unmap(void **state)
{
	const size_t cs = 4096;
	unsigned char buf[4 * 4096], rd[4 * 4096];
	struct store *s = mk(cs, 0, 0);
	struct store_stats st;
	uint64_t len;

	(void)state;
	fill(buf, sizeof(buf), 3);
	assert_int_equal(store_write(s, 5, 0, buf, sizeof(buf), 0), 0);

	/* Half of chunk 0, chunks 1-2 whole, half of chunk 3. */
	assert_int_equal(store_unmap(s, 5, cs / 2, 3 * cs), 0);
	st = stats(s);
	assert_int_equal(st.chunks, 2);
	assert_int_equal(st.unmapped_bytes, 2 * cs);
	assert_int_equal(store_read(s, 5, 0, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, buf, cs / 2);
	assert_true(all_zero(rd + cs / 2, 3 * cs));
	assert_memory_equal(rd + cs / 2 + 3 * cs, buf + cs / 2 + 3 * cs,
			    cs / 2);
	/* The edge chunks are still allocated, the middle ones are holes. */
	assert_int_equal(mapped(s, 5, 0, 4 * cs, &len), 1);
	assert_int_equal(len, cs);
	assert_int_equal(mapped(s, 5, cs, 4 * cs, &len), 0);
	assert_int_equal(len, 2 * cs);
	assert_int_equal(mapped(s, 5, 3 * cs, 4 * cs, &len), 1);
	assert_int_equal(len, cs);

	/* Inside one chunk, touching neither edge. */
	assert_int_equal(store_unmap(s, 5, 10, 20), 0);
	assert_int_equal(store_read(s, 5, 0, rd, cs), 0);
	assert_memory_equal(rd, buf, 10);
	assert_true(all_zero(rd + 10, 20));
	assert_memory_equal(rd + 30, buf + 30, cs / 2 - 30);
	assert_int_equal(stats(s).chunks, 2);

	/* Unmapping the last non-zero bytes of a chunk frees it. */
	assert_int_equal(store_unmap(s, 5, 0, cs / 2), 0);
	assert_int_equal(stats(s).chunks, 1);

	/* write_zeroes, with and without UNMAP, behaves the same here. */
	assert_int_equal(store_write_zeroes(s, 5, 3 * cs, cs, 0), 0);
	assert_int_equal(stats(s).chunks, 0);
	assert_int_equal(store_write(s, 5, 0, buf, sizeof(buf), 0), 0);
	assert_int_equal(
		store_write_zeroes(s, 5, cs, 2 * cs, STORE_UNMAP | STORE_FUA),
		0);
	assert_int_equal(stats(s).chunks, 2);
	assert_int_equal(store_read(s, 5, cs, rd, 2 * cs), 0);
	assert_true(all_zero(rd, 2 * cs));

	/* A huge range takes the table-scan path and frees only this LUN. */
	assert_int_equal(store_write(s, 5, 1ULL << 40, buf, cs, 0), 0);
	assert_int_equal(store_write(s, 6, 0, buf, cs, 0), 0);
	assert_int_equal(store_unmap(s, 5, cs, STORE_MAX_BYTES - cs), 0);
	assert_int_equal(stats(s).chunks, 2);
	assert_int_equal(store_lun_bytes(s, 5), cs);
	assert_int_equal(store_lun_bytes(s, 6), cs);
	assert_int_equal(store_read(s, 5, 0, rd, cs), 0);
	assert_memory_equal(rd, buf, cs);
	store_destroy(s);
}

static void test_limit(void **state)
{
	const size_t cs = 4096;
	unsigned char buf[8 * 4096], rd[8 * 4096], old[8 * 4096];
	struct store *s = mk(cs, 16 * cs, 0);
	struct store_stats st;
	int i;

	(void)state;
	/* Fill to the limit: one 8-chunk write, then 8 single chunks. */
	fill(old, sizeof(old), 4);
	assert_int_equal(store_write(s, 1, 0, old, sizeof(old), 0), 0);
	for (i = 0; i < 8; i++) {
		fill(buf, cs, 100 + i);
		assert_int_equal(store_write(s, 2, i * 10 * cs, buf, cs, 0), 0);
	}
	st = stats(s);
	assert_int_equal(st.data_bytes, 16 * cs);
	assert_int_equal(st.limit_hits, 0);

	/* One more chunk: refused, nothing allocated, nothing written. */
	fill(buf, sizeof(buf), 5);
	assert_int_equal(store_write(s, 3, 0, buf, 100, 0), -ENOSPC);
	assert_int_equal(store_lun_bytes(s, 3), 0);
	assert_int_equal(store_read(s, 3, 0, rd, 100), 0);
	assert_true(all_zero(rd, 100));

	/* A write over 7 existing chunks and 2 new ones fails whole: the
	 * existing chunks keep their old data. */
	assert_int_equal(store_write(s, 1, cs / 2, buf, 9 * cs, 0), -ENOSPC);
	assert_int_equal(store_read(s, 1, 0, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, old, sizeof(old));
	assert_int_equal(store_read(s, 1, sizeof(old), rd, 2 * cs), 0);
	assert_true(all_zero(rd, 2 * cs));
	st = stats(s);
	assert_int_equal(st.limit_hits, 2);
	assert_int_equal(st.data_bytes, 16 * cs);

	/* Overwrites and zero writes need nothing new: they still work. */
	assert_int_equal(store_write(s, 1, cs / 2, buf, 7 * cs, 0), 0);
	assert_int_equal(store_read(s, 1, cs / 2, rd, 7 * cs), 0);
	assert_memory_equal(rd, buf, 7 * cs);
	memset(rd, 0, cs);
	assert_int_equal(store_write(s, 9, 0, rd, cs, 0), 0);

	/* After an unmap there is room again, exactly one chunk's worth. */
	assert_int_equal(store_unmap(s, 2, 0, cs), 0);
	assert_int_equal(store_write(s, 3, 0, buf, 100, 0), 0);
	assert_int_equal(store_write(s, 3, cs, buf, 100, 0), -ENOSPC);
	assert_int_equal(store_read(s, 3, 0, rd, 100), 0);
	assert_memory_equal(rd, buf, 100);
	/* Two freed, then a two-chunk write that needs exactly two fits. */
	assert_int_equal(store_drop_lun(s, 3), 0);
	assert_int_equal(store_unmap(s, 2, 10 * cs, cs), 0);
	assert_int_equal(store_write(s, 4, cs - 1, buf, 2, 0), 0);
	st = stats(s);
	assert_int_equal(st.data_bytes, 16 * cs);
	assert_int_equal(st.limit_hits, 3);
	store_destroy(s);

	/* A limit below one chunk allows no data at all, yet zeroes are ok. */
	s = mk(cs, cs - 1, 0);
	assert_int_equal(store_write(s, 0, 0, buf, 1, 0), -ENOSPC);
	memset(rd, 0, 10);
	assert_int_equal(store_write(s, 0, 0, rd, 10, 0), 0);
	store_destroy(s);
}

static void test_meta_budget(void **state)
{
	const unsigned int n = 100000;
	unsigned char buf[4096], rd[4096];
	uint64_t *keys;
	struct store *s = mk(4096, 0, 0);
	struct store_stats st;
	struct rng rng = rng_init(42);
	unsigned int i;

	(void)state;
	keys = malloc(n * sizeof(*keys));
	assert_non_null(keys);
	for (i = 0; i < n; i++) {
		/* 32 LUNs, chunk indices up to 2^28: collisions are rare
		 * and harmless (the same chunk is written twice). */
		uint32_t lun = (uint32_t)rng_below(&rng, 32);
		uint64_t c = rng_below(&rng, 1u << 28);

		keys[i] = (uint64_t)lun << 32 | c;
		memcpy(buf, &keys[i], sizeof(keys[i]));
		memset(buf + 8, (int)(i | 1), sizeof(buf) - 8);
		assert_int_equal(store_write(s, lun, c * 4096, buf, 4096, 0),
				 0);
	}
	st = stats(s);
	assert_true(st.chunks > n - 100 && st.chunks <= n);
	assert_int_equal(st.data_bytes, st.chunks * 4096);
	print_message("%llu chunks, %llu data bytes, %llu meta (%.3f%%)\n",
		      (unsigned long long)st.chunks,
		      (unsigned long long)st.data_bytes,
		      (unsigned long long)st.meta_bytes,
		      100.0 * (double)st.meta_bytes / (double)st.data_bytes);
	assert_true(st.meta_bytes * 50 <= st.data_bytes);
	assert_int_equal(st.luns, 32);

	/* Spot-check the data: each chunk starts with its own key. */
	for (i = 0; i < n; i += 97) {
		uint64_t got;

		assert_int_equal(store_read(s, (uint32_t)(keys[i] >> 32),
					    (keys[i] & 0xffffffff) * 4096, rd,
					    sizeof(rd)),
				 0);
		memcpy(&got, rd, sizeof(got));
		assert_int_equal(got, keys[i]);
	}

	/* Free it all and write as much again: the freed chunks are reused,
	 * so only per-shard imbalance is left over in the free lists. */
	for (i = 0; i < 32; i++)
		assert_int_equal(store_unmap(s, i, 0, STORE_MAX_BYTES), 0);
	st = stats(s);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.luns, 0);
	for (i = 0; i < n; i++) {
		memset(buf, (int)(i | 1), sizeof(buf));
		assert_int_equal(
			store_write(s, 40, (uint64_t)i * 4096, buf, 4096, 0),
			0);
	}
	st = stats(s);
	assert_int_equal(st.chunks, n);
	assert_true(st.free_bytes < (uint64_t)(n / 20) * 4096);
	free(keys);
	store_destroy(s);
}

static void test_drop_lun(void **state)
{
	unsigned char buf[4096], rd[4096];
	struct store *s = mk(4096, 0, 8);
	struct store_stats st;
	uint64_t c;

	(void)state;
	for (c = 0; c < 3000; c++) {
		fill(buf, sizeof(buf), c);
		assert_int_equal(store_write(s, 1, c * 4096, buf, 4096, 0), 0);
		if (c < 2000)
			assert_int_equal(
				store_write(s, 2, c * 8192, buf, 4096, 0), 0);
		if (c < 1000)
			assert_int_equal(
				store_write(s, 3, c * 4096 + 5, buf, 100, 0),
				0);
	}
	st = stats(s);
	assert_int_equal(st.chunks, 3000 + 2000 + 1000);
	assert_int_equal(store_drop_lun(s, 2), 0);
	st = stats(s);
	assert_int_equal(st.chunks, 4000);
	assert_int_equal(st.luns, 2);
	assert_int_equal(store_lun_bytes(s, 2), 0);
	assert_int_equal(store_lun_bytes(s, 1), 3000 * 4096);
	assert_int_equal(store_lun_bytes(s, 3), 1000 * 4096);
	/* Dropping is not an unmap. */
	assert_int_equal(st.unmapped_bytes, 0);
	for (c = 0; c < 3000; c += 7) {
		fill(buf, sizeof(buf), c);
		assert_int_equal(store_read(s, 1, c * 4096, rd, 4096), 0);
		assert_memory_equal(rd, buf, 4096);
		assert_int_equal(store_read(s, 2, c * 8192, rd, 4096), 0);
		assert_true(all_zero(rd, 4096));
	}
	/* A LUN without data, twice: nothing to do. */
	assert_int_equal(store_drop_lun(s, 2), 0);
	assert_int_equal(store_drop_lun(s, 77), 0);
	assert_int_equal(stats(s).chunks, 4000);
	store_destroy(s);
}

static void test_mapped(void **state)
{
	const uint64_t cs = 4096;
	unsigned char buf[4096];
	struct store *s = mk(cs, 0, 0);
	uint64_t len;

	(void)state;
	/* A LUN without data is one hole up to the limit. */
	assert_int_equal(mapped(s, 9, 12345, 1ULL << 40, &len), 0);
	assert_int_equal(len, 1ULL << 40);

	fill(buf, sizeof(buf), 9);
	assert_int_equal(store_write(s, 9, 2 * cs, buf, cs, 0), 0);
	assert_int_equal(store_write(s, 9, 3 * cs, buf, cs, 0), 0);
	assert_int_equal(store_write(s, 9, 4 * cs, buf, 1, 0), 0);
	assert_int_equal(store_write(s, 9, 10 * cs + 7, buf, 1, 0), 0);

	assert_int_equal(mapped(s, 9, 0, 100 * cs, &len), 0);
	assert_int_equal(len, 2 * cs);
	assert_int_equal(mapped(s, 9, 2 * cs, 100 * cs, &len), 1);
	assert_int_equal(len, 3 * cs);
	/* Unaligned starts and a limit that cuts the run. */
	assert_int_equal(mapped(s, 9, 2 * cs + 100, 100 * cs, &len), 1);
	assert_int_equal(len, 3 * cs - 100);
	assert_int_equal(mapped(s, 9, 2 * cs, 5, &len), 1);
	assert_int_equal(len, 5);
	assert_int_equal(mapped(s, 9, 100, cs, &len), 0);
	assert_int_equal(len, cs);
	assert_int_equal(mapped(s, 9, 5 * cs + 1, 100 * cs, &len), 0);
	assert_int_equal(len, 5 * cs - 1);
	/* Short ranges, answered by lookups rather than a scan. */
	assert_int_equal(mapped(s, 9, 5 * cs, 3 * cs, &len), 0);
	assert_int_equal(len, 3 * cs);
	assert_int_equal(mapped(s, 9, 8 * cs, 2 * cs + 8, &len), 0);
	assert_int_equal(len, 2 * cs);
	assert_int_equal(mapped(s, 9, 10 * cs, 100 * cs, &len), 1);
	assert_int_equal(len, cs);
	/* Past the last chunk: a hole to the limit, by lookups and by the
	 * table scan (a range far larger than the tables). */
	assert_int_equal(mapped(s, 9, 11 * cs, 100 * cs, &len), 0);
	assert_int_equal(len, 100 * cs);
	assert_int_equal(mapped(s, 9, 11 * cs, 1ULL << 50, &len), 0);
	assert_int_equal(len, 1ULL << 50);
	assert_int_equal(mapped(s, 9, 5 * cs, 1ULL << 50, &len), 0);
	assert_int_equal(len, 5 * cs);
	/* The limit is clamped to the end of the address space. */
	assert_int_equal(mapped(s, 9, STORE_MAX_BYTES - 10, 1000, &len), 0);
	assert_int_equal(len, 10);
	assert_int_equal(mapped(s, 9, 0, 0, &len), -EINVAL);
	assert_int_equal(mapped(s, 9, STORE_MAX_BYTES, 1, &len), -EINVAL);
	store_destroy(s);
}

static void test_args(void **state)
{
	struct store_mem_params p = {0};
	unsigned char b[16] = {0};
	struct store *s = NULL;

	(void)state;
	assert_int_equal(store_mem_create(NULL, NULL), -EINVAL);
	p.chunk_size = 256;
	assert_int_equal(store_mem_create(&s, &p), -EINVAL);
	p.chunk_size = 3000;
	assert_int_equal(store_mem_create(&s, &p), -EINVAL);
	p.chunk_size = 2 * MiB;
	assert_int_equal(store_mem_create(&s, &p), -EINVAL);
	p.chunk_size = 0;
	p.shards = 3;
	assert_int_equal(store_mem_create(&s, &p), -EINVAL);
	p.shards = 8192;
	assert_int_equal(store_mem_create(&s, &p), -EINVAL);
	assert_null(s);

	assert_int_equal(store_mem_create(&s, NULL), 0);
	assert_int_equal(store_read(s, STORE_MAX_LUNS, 0, b, 1), -EINVAL);
	assert_int_equal(store_read(s, 0, STORE_MAX_BYTES - 1, b, 2), -EINVAL);
	assert_int_equal(store_read(s, 0, UINT64_MAX, b, 2), -EINVAL);
	assert_int_equal(store_read(s, 0, 0, NULL, 1), -EINVAL);
	assert_int_equal(store_read(s, 0, 0, NULL, 0), 0);
	assert_int_equal(store_write(s, 0, 0, b, 1, 0x80), -EINVAL);
	assert_int_equal(store_write(s, 0, 0, b, 1, STORE_UNMAP), -EINVAL);
	assert_int_equal(store_write(s, 0, 0, b, 1, STORE_FUA), 0);
	assert_int_equal(store_write_zeroes(s, 0, 0, 1, 0x80), -EINVAL);
	assert_int_equal(store_unmap(s, 0, 1, STORE_MAX_BYTES), -EINVAL);
	assert_int_equal(store_flush(s, STORE_MAX_LUNS), -EINVAL);
	assert_int_equal(store_flush(s, STORE_ALL_LUNS), 0);
	assert_int_equal(store_flush(s, 3), 0);
	assert_int_equal(store_drop_lun(s, STORE_MAX_LUNS), -EINVAL);
	assert_int_equal(store_lun_bytes(s, STORE_MAX_LUNS), 0);
	assert_int_equal(stats(s).flushes, 2);
	store_destroy(s);
	store_destroy(NULL);
}

/* ---- threads ------------------------------------------------------------ */

#define T_THREADS 4
#define T_SHARED_LUN 1000
#define T_REGION (256 * KiB)

struct tctx {
	struct store *s;
	unsigned int id;
	int fails;
};

static void *worker(void *arg)
{
	struct tctx *t = arg;
	unsigned char *own = calloc(1, T_REGION), *shared = calloc(1, T_REGION);
	unsigned char buf[3 * 4096 + 100], rd[sizeof(buf)];
	uint64_t sbase = t->id * T_REGION;
	uint32_t lun = 100 + t->id;
	struct rng rng = rng_init(77 + t->id);
	int i;

	if (!own || !shared) {
		t->fails++;
		goto out;
	}
	for (i = 0; i < 4000; i++) {
		size_t len = 1 + rng_below(&rng, sizeof(buf));
		size_t off = rng_below(&rng, T_REGION - len);
		bool use_shared = rng_next(&rng) & 1;
		uint32_t l = use_shared ? T_SHARED_LUN : lun;
		uint64_t base = use_shared ? sbase : 0;
		unsigned char *shadow = use_shared ? shared : own;

		if (rng_below(&rng, 4) == 0) {
			if (store_unmap(t->s, l, base + off, len))
				t->fails++;
			memset(shadow + off, 0, len);
		} else {
			fill(buf, len, rng_next(&rng));
			if (store_write(t->s, l, base + off, buf, len, 0))
				t->fails++;
			memcpy(shadow + off, buf, len);
		}
		if (store_read(t->s, l, base + off, rd, len) ||
		    memcmp(rd, shadow + off, len))
			t->fails++;
	}
	/* Everything this thread owns, checked at the end. */
	for (i = 0; i < 2; i++) {
		unsigned char *all = malloc(T_REGION);

		if (!all ||
		    store_read(t->s, i ? T_SHARED_LUN : lun, i ? sbase : 0, all,
			       T_REGION) ||
		    memcmp(all, i ? shared : own, T_REGION))
			t->fails++;
		free(all);
	}
out:
	free(own);
	free(shared);
	return NULL;
}

static void test_threads(void **state)
{
	struct store *s = mk(4096, 0, 0);
	pthread_t th[T_THREADS];
	struct tctx ctx[T_THREADS];
	unsigned int i;

	(void)state;
	for (i = 0; i < T_THREADS; i++) {
		ctx[i] = (struct tctx){.s = s, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &ctx[i]),
				 0);
	}
	for (i = 0; i < T_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(ctx[i].fails, 0);
	}
	store_destroy(s);
}

/* A reader never sees half of a whole-chunk write: every byte it reads from
 * the chunk belongs to the same write. */
struct actx {
	struct store *s;
	atomic_bool stop;
	int torn;
	int reads;
};

static void *chunk_reader(void *arg)
{
	struct actx *a = arg;
	unsigned char rd[4096];

	while (!atomic_load(&a->stop)) {
		if (store_read(a->s, 0, 8192, rd, sizeof(rd))) {
			a->torn++;
			break;
		}
		/* All zero (unwritten yet) or all one value. */
		if (memcmp(rd, rd + 1, sizeof(rd) - 1))
			a->torn++;
		a->reads++;
	}
	return NULL;
}

static void test_chunk_atomic(void **state)
{
	struct actx a = {.s = mk(4096, 0, 0)};
	unsigned char buf[4096];
	pthread_t th;
	int i;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, chunk_reader, &a), 0);
	for (i = 0; i < 20000; i++) {
		memset(buf, 1 + i % 255, sizeof(buf));
		assert_int_equal(store_write(a.s, 0, 8192, buf, sizeof(buf), 0),
				 0);
	}
	atomic_store(&a.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(a.torn, 0);
	assert_true(a.reads > 0);
	store_destroy(a.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holes),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_zero_detect),
		cmocka_unit_test(test_unmap),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_meta_budget),
		cmocka_unit_test(test_drop_lun),
		cmocka_unit_test(test_mapped),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_chunk_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
