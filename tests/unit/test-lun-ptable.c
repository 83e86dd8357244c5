// SPDX-License-Identifier: MIT
/*
 * The synthetic partition table survives the host's first write near it:
 * after a write at every offset and of every size around each table block
 * (GPT primary and backup, MBR and EBRs), every block around the table reads
 * what the generator made or what the host wrote, on the mem store at every
 * chunk size and on the file store, with 512- and 4096-byte blocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "lun.h"

#define LUN_SIZE (256ull << 20)
#define MAX_WINDOWS 16

/* A run of blocks [first, end) checked after each write. */
struct window {
	uint64_t first, end;
};

struct layout {
	const char *name;
	enum ptable_kind kind;
	unsigned int nparts;
};

static const struct layout layouts[] = {
	{"gpt63", PTABLE_GPT, 63},
	{"gpt4", PTABLE_GPT, 4},
	{"mbr8", PTABLE_MBR, 8},
};

static char tmpdir[64];

static void rm_dir(const char *dir)
{
	char path[512];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' &&
		    (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dp);
	rmdir(dir);
}

/* chunk 0: the file store in a fresh directory */
static struct store *new_store(size_t chunk)
{
	struct store *s = NULL;

	if (chunk) {
		struct store_mem_params mp = {.chunk_size = chunk};

		assert_int_equal(store_mem_create(&s, &mp), 0);
	} else {
		struct store_file_params fp = {0};

		strcpy(tmpdir, "/tmp/sdswarm-lunpt-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
		fp.dir = tmpdir;
		assert_int_equal(store_file_create(&s, &fp), 0);
	}
	return s;
}

/* Windows of @radius blocks either side of every table block, merged. */
static unsigned int windows(const struct ptable_geom *g, uint64_t radius,
			    struct window *w)
{
	unsigned int n = 0;
	uint64_t b = 0;

	while (ptable_next_synthetic(g, b, &b) == 1) {
		uint64_t first = b > radius ? b - radius : 0;
		uint64_t end = b + radius + 1;

		if (end > g->nblocks)
			end = g->nblocks;
		if (n && first <= w[n - 1].end) {
			w[n - 1].end = end;
		} else {
			assert_true(n < MAX_WINDOWS);
			w[n].first = first;
			w[n].end = end;
			n++;
		}
		b++;
	}
	return n;
}

/*
 * One store, one block size, one layout: a fresh LUN 0 for each write.
 * Return: the number of writes checked.
 */
static unsigned int check_layout(struct store *s, uint32_t bs,
				 const struct layout *lay, const char *what)
{
	struct lun_table_params tp = {.max_luns = 4, .seed = 0x5eed};
	struct lun_group g = {
		.name = "g",
		.first = 0,
		.count = 1,
		.size = LUN_SIZE,
		.block_size = bs,
		.thin = true,
		.ptable = lay->kind,
		.nparts = lay->nparts,
	};
	struct window w[MAX_WINDOWS];
	struct lun_table *t;
	struct lun_info li;
	uint8_t *want[MAX_WINDOWS], *got, *data;
	uint64_t radius = bs == 512 ? 16 : 4, a, e, wmax = 0;
	unsigned int nw, i, j, cases = 0;
	struct iovec iov;

	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "TEST");
	strcpy(g.revision, "0001");
	tp.store = s;
	assert_int_equal(lun_table_create(&t, &tp), 0);
	assert_true(lun_group_add(t, &g) >= 0);
	assert_int_equal(lun_get(t, 0, &li), 0);
	nw = windows(&li.geom, radius, w);
	assert_true(nw >= 2);
	for (i = 0; i < nw; i++) {
		uint64_t n = w[i].end - w[i].first;

		if (n > wmax)
			wmax = n;
		want[i] = malloc(n * bs);
		assert_non_null(want[i]);
		assert_int_equal(
			ptable_read(&li.geom, w[i].first, (uint32_t)n, want[i]),
			0);
	}
	lun_put(t, &li);
	assert_int_equal(lun_remove(t, 0), 0);
	got = malloc(wmax * bs);
	data = malloc(wmax * bs);
	assert_non_null(got);
	assert_non_null(data);

	for (i = 0; i < nw; i++) {
		for (a = w[i].first; a < w[i].end; a++) {
			for (e = a + 1; e <= w[i].end; e++) {
				uint64_t n = e - a;

				assert_int_equal(lun_add(t, 0, 0), 0);
				assert_int_equal(lun_get(t, 0, &li), 0);
				/* the host's bytes: distinct from any table */
				memset(data, 0xa5 ^ (int)(a + n), n * bs);
				iov = (struct iovec){data, n * bs};
				assert_int_equal(lun_write(t, &li, a,
							   (uint32_t)n, &iov, 1,
							   0),
						 0);
				for (j = 0; j < nw; j++) {
					uint64_t wn = w[j].end - w[j].first, b;

					iov = (struct iovec){got, wn * bs};
					assert_int_equal(
						lun_read(t, &li, w[j].first,
							 (uint32_t)wn, &iov, 1),
						0);
					for (b = w[j].first; b < w[j].end;
					     b++) {
						const uint8_t *x =
							b >= a && b < e
								? data + (b -
									  a) * bs
								: want[j] +
									  (b -
									   w[j].first) *
										  bs;

						if (!memcmp(got + (b -
								   w[j].first) *
									    bs,
							    x, bs))
							continue;
						fail_msg(
							"%s bs %u %s: after a write of LBA %llu+%llu, LBA %llu reads wrong",
							what, bs, lay->name,
							(unsigned long long)a,
							(unsigned long long)n,
							(unsigned long long)b);
					}
				}
				lun_put(t, &li);
				assert_int_equal(lun_remove(t, 0), 0);
				cases++;
			}
		}
	}
	for (i = 0; i < nw; i++)
		free(want[i]);
	free(got);
	free(data);
	lun_table_destroy(t);
	return cases;
}

static void check_store(size_t chunk)
{
	static const uint32_t bss[] = {512, 4096};
	char what[32];
	unsigned int i, k, cases = 0;

	if (chunk)
		snprintf(what, sizeof(what), "mem chunk %zu", chunk);
	else
		snprintf(what, sizeof(what), "file");
	for (i = 0; i < 2; i++) {
		for (k = 0; k < ARRAY_SIZE(layouts); k++) {
			struct store *s = new_store(chunk);

			cases += check_layout(s, bss[i], &layouts[k], what);
			store_destroy(s);
			if (!chunk)
				rm_dir(tmpdir);
		}
	}
	print_message("%s: %u writes, every block around both tables checked\n",
		      what, cases);
}

static void test_mem_every_chunk(void **state)
{
	size_t chunk;

	(void)state;
	for (chunk = STORE_MEM_MIN_CHUNK; chunk <= STORE_MEM_MAX_CHUNK;
	     chunk *= 2)
		check_store(chunk);
}

static void test_file(void **state)
{
	(void)state;
	check_store(0);
}

/*
 * What the issue saw: a tool rewrites LBA 0 (or the last LBA) with the bytes
 * it read; every GPT block must keep its content, on the default store.
 */
static void test_rewrite_own_bytes(void **state)
{
	struct store *s = new_store(STORE_MEM_DEFAULT_CHUNK);
	struct lun_table_params tp = {
		.max_luns = 4, .seed = 0x5eed, .store = s};
	struct lun_group g = {
		.name = "g",
		.first = 0,
		.count = 2,
		.size = LUN_SIZE,
		.block_size = 512,
		.thin = true,
		.ptable = PTABLE_GPT,
		.nparts = 63,
	};
	uint8_t before[34 * 512], after[34 * 512], blk[512];
	struct lun_table *t;
	struct lun_info li;
	struct iovec iov;
	uint32_t lun;

	(void)state;
	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "TEST");
	strcpy(g.revision, "0001");
	assert_int_equal(lun_table_create(&t, &tp), 0);
	assert_true(lun_group_add(t, &g) >= 0);
	for (lun = 0; lun < 2; lun++) {
		uint64_t lba;

		assert_int_equal(lun_get(t, lun, &li), 0);
		lba = lun ? li.nblocks - 1 : 0;
		iov = (struct iovec){before, sizeof(before)};
		assert_int_equal(lun_read(t, &li, 0, 34, &iov, 1), 0);
		iov = (struct iovec){blk, 512};
		assert_int_equal(lun_read(t, &li, lba, 1, &iov, 1), 0);
		assert_int_equal(lun_write(t, &li, lba, 1, &iov, 1, 0), 0);
		lun_put(t, &li);
		assert_int_equal(lun_get(t, lun, &li), 0);
		assert_true(li.table_owned);
		iov = (struct iovec){after, sizeof(after)};
		assert_int_equal(lun_read(t, &li, 0, 34, &iov, 1), 0);
		assert_memory_equal(before, after, sizeof(before));
		iov = (struct iovec){before, 33 * 512};
		assert_int_equal(
			ptable_read(&li.geom, li.nblocks - 33, 33, before), 0);
		iov = (struct iovec){after, 33 * 512};
		assert_int_equal(lun_read(t, &li, li.nblocks - 33, 33, &iov, 1),
				 0);
		assert_memory_equal(before, after, 33 * 512);
		lun_put(t, &li);
	}
	lun_table_destroy(t);
	store_destroy(s);
}

/*
 * A command pins the LUN before the table is owned and then both writes and
 * reads it (EXTENDED COPY within one LUN, a FUSE read-modify-write): after it
 * zeroes a whole chunk of the table, which the mem store frees, its own later
 * read must see the zeros, not the generator's table again.
 */
static void test_zeroed_under_one_pin(void **state)
{
	struct store *s = new_store(STORE_MEM_DEFAULT_CHUNK);
	struct lun_table_params tp = {
		.max_luns = 4, .seed = 0x5eed, .store = s};
	struct lun_group g = {
		.name = "g",
		.first = 0,
		.count = 1,
		.size = LUN_SIZE,
		.block_size = 512,
		.thin = true,
		.ptable = PTABLE_GPT,
		.nparts = 63,
	};
	uint8_t zero[8 * 512] = {0}, got[8 * 512];
	struct lun_table *t;
	struct lun_info li;
	struct iovec iov;
	uint64_t run;

	(void)state;
	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "TEST");
	strcpy(g.revision, "0001");
	assert_int_equal(lun_table_create(&t, &tp), 0);
	assert_true(lun_group_add(t, &g) >= 0);
	assert_int_equal(lun_get(t, 0, &li), 0);
	assert_false(li.table_owned);
	iov = (struct iovec){zero, sizeof(zero)};
	assert_int_equal(lun_write(t, &li, 0, 8, &iov, 1, 0), 0);
	assert_int_equal(store_lun_bytes(s, 0) % 4096, 0);
	iov = (struct iovec){got, sizeof(got)};
	assert_int_equal(lun_read(t, &li, 0, 8, &iov, 1), 0);
	assert_memory_equal(got, zero, sizeof(zero));
	assert_int_equal(lun_lba_status(t, &li, 1, 1, &run), 0);
	lun_put(t, &li);
	lun_table_destroy(t);
	store_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite_own_bytes),
		cmocka_unit_test(test_zeroed_under_one_pin),
		cmocka_unit_test(test_mem_every_chunk),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
