// SPDX-License-Identifier: MIT
/*
 * The file store: persistence across reopen, lazily created sparse files,
 * punch-hole and write-zeroes, SEEK_DATA/SEEK_HOLE runs, drop_lun, the
 * bounded fd cache, the directory lock, and data acknowledged after FUA or
 * flush surviving a SIGKILL of the writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)
#define TiB (1024ULL * 1024 * 1024 * 1024)

struct fix {
	char dir[256];
};

static void rm_tree(const char *dir)
{
	char path[512];
	struct dirent *d;
	DIR *dh = opendir(dir);

	if (!dh)
		return;
	while ((d = readdir(dh))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dh);
	rmdir(dir);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test-store-file-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	rm_tree(f->dir);
	free(f);
	return 0;
}

static struct store *open_store(const char *dir, unsigned int max_open)
{
	struct store_file_params p = {.dir = dir, .max_open_files = max_open};
	struct store *s = NULL;

	assert_int_equal(store_file_create(&s, &p), 0);
	assert_non_null(s);
	return s;
}

static void lun_path(char *buf, size_t n, const char *dir, uint32_t lun)
{
	snprintf(buf, n, "%s/lun-%07u.img", dir, lun);
}

static bool lun_stat(const char *dir, uint32_t lun, struct stat *st)
{
	char path[512];

	lun_path(path, sizeof(path), dir, lun);
	return stat(path, st) == 0;
}

static void pattern(unsigned char *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + 1 + (i >> 8));
}

static bool all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static unsigned int open_fds(void)
{
	struct dirent *d;
	unsigned int n = 0;
	DIR *dh = opendir("/proc/self/fd");

	assert_non_null(dh);
	while ((d = readdir(dh)))
		n += d->d_name[0] != '.';
	closedir(dh);
	return n - 1; /* the directory stream's own descriptor */
}

static void test_persist(void **state)
{
	struct fix *f = *state;
	unsigned char buf[10000], rd[10000];
	struct store *s = open_store(f->dir, 0);
	struct store_stats st;
	struct stat sb;

	assert_string_equal(store_kind(s), "file");
	assert_true(store_granularity(s) >= 512);
	/* Reads, unmaps and zeroing of an unwritten LUN create no file. */
	memset(rd, 0xee, sizeof(rd));
	assert_int_equal(store_read(s, 6, 12345, rd, sizeof(rd)), 0);
	assert_true(all_zero(rd, sizeof(rd)));
	assert_int_equal(store_unmap(s, 6, 0, MiB), 0);
	assert_int_equal(store_write_zeroes(s, 6, 0, MiB, 0), 0);
	assert_false(lun_stat(f->dir, 6, &sb));

	pattern(buf, sizeof(buf), 5);
	assert_int_equal(store_write(s, 123, 4095, buf, sizeof(buf), 0), 0);
	assert_true(lun_stat(f->dir, 123, &sb));
	assert_int_equal(sb.st_size, 4095 + sizeof(buf));
	assert_int_equal(store_read(s, 123, 4095, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, buf, sizeof(rd));
	/* Past the end of the file: zeros. */
	memset(rd, 0xee, sizeof(rd));
	assert_int_equal(store_read(s, 123, 4095 + 5000, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, buf + 5000, 5000);
	assert_true(all_zero(rd + 5000, 5000));
	assert_int_equal(store_flush(s, 123), 0);
	st = (struct store_stats){0};
	store_get_stats(s, &st);
	assert_int_equal(st.chunks, 1);
	assert_int_equal(st.luns, 1);
	assert_int_equal(st.writes, 1);
	assert_int_equal(st.reads, 3);
	assert_true(st.data_bytes >= sizeof(buf));
	assert_int_equal(store_lun_bytes(s, 123), st.data_bytes);
	assert_int_equal(store_lun_bytes(s, 6), 0);
	store_destroy(s);

	/* Reopened: the data is there, and so is the LUN's file. */
	s = open_store(f->dir, 0);
	memset(rd, 0, sizeof(rd));
	assert_int_equal(store_read(s, 123, 4095, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, buf, sizeof(rd));
	assert_true(store_lun_bytes(s, 123) >= sizeof(buf));
	store_destroy(s);
}

static void test_lock(void **state)
{
	struct fix *f = *state;
	struct store_file_params p = {.dir = f->dir};
	struct store *s = open_store(f->dir, 0), *s2 = NULL;

	assert_int_equal(store_file_create(&s2, &p), -EBUSY);
	assert_null(s2);
	store_destroy(s);
	assert_int_equal(store_file_create(&s2, &p), 0);
	store_destroy(s2);
	s2 = NULL;

	p.dir = "";
	assert_int_equal(store_file_create(&s2, &p), -EINVAL);
	assert_int_equal(store_file_create(&s2, NULL), -EINVAL);
	p.dir = "/proc/self/status/x";
	assert_true(store_file_create(&s2, &p) < 0);
	assert_null(s2);
}

static void test_sparse_punch(void **state)
{
	struct fix *f = *state;
	unsigned char *buf = malloc(MiB), *rd = malloc(MiB);
	struct store *s = open_store(f->dir, 0);
	uint64_t len, before, after;
	struct stat sb;

	assert_non_null(buf);
	assert_non_null(rd);
	/* 4 KiB at 1 TiB: a 1 TiB file holding a few blocks. */
	pattern(buf, 4096, 1);
	assert_int_equal(store_write(s, 1, TiB, buf, 4096, 0), 0);
	assert_true(lun_stat(f->dir, 1, &sb));
	assert_int_equal(sb.st_size, TiB + 4096);
	assert_true((uint64_t)sb.st_blocks * 512 <= 64 * KiB);
	assert_int_equal(store_mapped(s, 1, 0, 2 * TiB, &len), 0);
	assert_int_equal(len, TiB);
	assert_int_equal(store_mapped(s, 1, TiB, 2 * TiB, &len), 1);
	assert_int_equal(len, 4096);
	assert_int_equal(store_mapped(s, 1, TiB + 4096, 1000, &len), 0);
	assert_int_equal(len, 1000);

	/* 1 MiB of data, then a 512 KiB hole punched in its middle. */
	pattern(buf, MiB, 2);
	assert_int_equal(store_write(s, 2, 0, buf, MiB, 0), 0);
	assert_int_equal(store_flush(s, 2), 0);
	assert_true(lun_stat(f->dir, 2, &sb));
	before = (uint64_t)sb.st_blocks * 512;
	assert_true(before >= MiB);
	assert_int_equal(store_unmap(s, 2, 256 * KiB, 512 * KiB), 0);
	assert_true(lun_stat(f->dir, 2, &sb));
	after = (uint64_t)sb.st_blocks * 512;
	assert_true(after + 512 * KiB <= before);
	assert_int_equal(store_lun_bytes(s, 2), after);
	assert_int_equal(store_read(s, 2, 0, rd, MiB), 0);
	assert_memory_equal(rd, buf, 256 * KiB);
	assert_true(all_zero(rd + 256 * KiB, 512 * KiB));
	assert_memory_equal(rd + 768 * KiB, buf + 768 * KiB, 256 * KiB);
	assert_int_equal(store_mapped(s, 2, 0, MiB, &len), 1);
	assert_int_equal(len, 256 * KiB);
	assert_int_equal(store_mapped(s, 2, 256 * KiB, MiB, &len), 0);
	assert_int_equal(len, 512 * KiB);
	assert_int_equal(store_mapped(s, 2, 768 * KiB, MiB, &len), 1);
	assert_int_equal(len, 256 * KiB);

	/* An unaligned unmap zeroes the partial blocks in place. */
	assert_int_equal(store_unmap(s, 2, 100, 1000), 0);
	assert_int_equal(store_read(s, 2, 0, rd, 4096), 0);
	assert_memory_equal(rd, buf, 100);
	assert_true(all_zero(rd + 100, 1000));
	assert_memory_equal(rd + 1100, buf + 1100, 4096 - 1100);

	/* write_zeroes: UNMAP punches, without it the range is zeroed. */
	assert_int_equal(store_write_zeroes(s, 2, 768 * KiB, 128 * KiB,
					    STORE_UNMAP | STORE_FUA),
			 0);
	assert_int_equal(store_mapped(s, 2, 768 * KiB, MiB, &len), 0);
	assert_int_equal(len, 128 * KiB);
	assert_int_equal(store_write_zeroes(s, 2, 900 * KiB, 4000, 0), 0);
	assert_int_equal(store_read(s, 2, 896 * KiB, rd, 128 * KiB), 0);
	assert_memory_equal(rd, buf + 896 * KiB, 4 * KiB);
	assert_true(all_zero(rd + 4 * KiB, 4000));
	assert_memory_equal(rd + 4 * KiB + 4000, buf + 900 * KiB + 4000,
			    124 * KiB - 4000);
	store_destroy(s);
	free(buf);
	free(rd);
}

static void test_drop(void **state)
{
	struct fix *f = *state;
	unsigned char buf[512] = {1}, rd[512];
	struct store *s = open_store(f->dir, 0);
	struct stat sb;

	assert_int_equal(store_write(s, 7, 0, buf, sizeof(buf), 0), 0);
	assert_int_equal(store_write(s, 8, 0, buf, sizeof(buf), 0), 0);
	assert_true(lun_stat(f->dir, 7, &sb));
	assert_int_equal(store_drop_lun(s, 7), 0);
	assert_false(lun_stat(f->dir, 7, &sb));
	assert_true(lun_stat(f->dir, 8, &sb));
	assert_int_equal(store_lun_bytes(s, 7), 0);
	memset(rd, 0xee, sizeof(rd));
	assert_int_equal(store_read(s, 7, 0, rd, sizeof(rd)), 0);
	assert_true(all_zero(rd, sizeof(rd)));
	/* Dropping a LUN without a file is fine; a flush after is too. */
	assert_int_equal(store_drop_lun(s, 7), 0);
	assert_int_equal(store_drop_lun(s, 99), 0);
	assert_int_equal(store_flush(s, STORE_ALL_LUNS), 0);
	/* The LUN can be written again from scratch. */
	assert_int_equal(store_write(s, 7, 512, buf, sizeof(buf), 0), 0);
	assert_int_equal(store_read(s, 7, 0, rd, sizeof(rd)), 0);
	assert_true(all_zero(rd, sizeof(rd)));
	store_destroy(s);
	s = open_store(f->dir, 0);
	assert_false(lun_stat(f->dir, 99, &sb));
	assert_int_equal(store_read(s, 7, 512, rd, sizeof(rd)), 0);
	assert_memory_equal(rd, buf, sizeof(rd));
	store_destroy(s);
}

static void test_fd_cache(void **state)
{
	struct fix *f = *state;
	unsigned char buf[5000], rd[5000];
	unsigned int base = open_fds(), lun, round;
	struct store *s = open_store(f->dir, 4);
	struct store_stats st;

	/* The store itself holds the directory and its lock. */
	assert_true(open_fds() <= base + 2);
	for (round = 0; round < 2; round++) {
		for (lun = 0; lun < 50; lun++) {
			pattern(buf, sizeof(buf), lun * 3 + round);
			assert_int_equal(store_write(s, lun, lun * 777, buf,
						     sizeof(buf),
						     round ? STORE_FUA : 0),
					 0);
			assert_true(open_fds() <= base + 2 + 4);
		}
		for (lun = 0; lun < 50; lun++) {
			pattern(buf, sizeof(buf), lun * 3 + round);
			assert_int_equal(
				store_read(s, lun, lun * 777, rd, sizeof(rd)),
				0);
			assert_memory_equal(rd, buf, sizeof(rd));
			assert_true(open_fds() <= base + 2 + 4);
		}
		/* Flushing reopens the evicted dirty files one at a time. */
		assert_int_equal(store_flush(s, STORE_ALL_LUNS), 0);
		assert_true(open_fds() <= base + 2 + 4);
	}
	store_get_stats(s, &st);
	assert_true(st.open_files <= 4);
	assert_true(st.fd_evictions >= 2 * 100 - 4);
	assert_int_equal(st.chunks, 50);
	assert_true(st.syncs >= 50 + 50);
	store_destroy(s);
	assert_int_equal(open_fds(), base);
}

/* ---- threads ------------------------------------------------------------ */

/* Four threads on eight LUNs through two descriptors: calls wait for a free
 * one, evict each other's, and still read back exactly what they wrote. */
struct tctx {
	struct store *s;
	uint32_t id;
	int fails;
};

static void *worker(void *arg)
{
	struct tctx *t = arg;
	unsigned char buf[3000], rd[3000];
	uint32_t i;

	for (i = 0; i < 400; i++) {
		uint32_t lun = (t->id + i) % 8;
		/* Each thread its own slice of every LUN. */
		uint64_t off = (uint64_t)t->id * MiB + (uint64_t)i * 4096;

		pattern(buf, sizeof(buf), t->id * 1000 + i);
		if (store_write(t->s, lun, off, buf, sizeof(buf),
				i % 5 ? 0 : STORE_FUA) ||
		    store_read(t->s, lun, off, rd, sizeof(rd)) ||
		    memcmp(rd, buf, sizeof(rd)))
			t->fails++;
		if (i % 50 == 0 &&
		    store_flush(t->s, i % 100 ? lun : STORE_ALL_LUNS))
			t->fails++;
		if (i % 7 == 0 && store_unmap(t->s, lun, off + 1000, 1000))
			t->fails++;
	}
	for (i = 0; i < 400; i++) {
		uint32_t lun = (t->id + i) % 8;
		uint64_t off = (uint64_t)t->id * MiB + (uint64_t)i * 4096;

		pattern(buf, sizeof(buf), t->id * 1000 + i);
		if (i % 7 == 0)
			memset(buf + 1000, 0, 1000);
		if (store_read(t->s, lun, off, rd, sizeof(rd)) ||
		    memcmp(rd, buf, sizeof(rd)))
			t->fails++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fix *f = *state;
	struct store *s = open_store(f->dir, 2);
	struct store_stats st;
	struct tctx ctx[4];
	pthread_t th[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		ctx[i] = (struct tctx){.s = s, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &ctx[i]),
				 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(ctx[i].fails, 0);
	}
	store_get_stats(s, &st);
	assert_true(st.open_files <= 2);
	assert_int_equal(st.chunks, 8);
	assert_int_equal(st.writes, 4 * 400);
	store_destroy(s);
}

/* ---- kill -9 ------------------------------------------------------------ */

/*
 * Record @i: LUN i % 7, offset i * 10007 (so records never overlap), 1..5000
 * bytes. Even records are FUA writes; odd ones are plain writes made durable
 * by a flush of the LUN or of everything.
 */
#define CRASH_ACKS 300
#define CRASH_MAX 100000

static void crash_rec(uint32_t i, uint32_t *lun, uint64_t *off, size_t *len)
{
	*lun = i % 7;
	*off = (uint64_t)i * 10007;
	*len = 1 + (i * 37) % 5000;
}

static void crash_child(const char *dir, int wfd)
{
	struct store_file_params p = {.dir = dir, .max_open_files = 3};
	unsigned char buf[5000];
	struct store *s;
	uint32_t i;

	if (store_file_create(&s, &p))
		_exit(2);
	for (i = 0; i < CRASH_MAX; i++) {
		uint32_t lun;
		uint64_t off;
		size_t len;

		crash_rec(i, &lun, &off, &len);
		pattern(buf, len, i);
		if (i % 2 == 0) {
			if (store_write(s, lun, off, buf, len, STORE_FUA))
				_exit(3);
		} else {
			if (store_write(s, lun, off, buf, len, 0) ||
			    store_flush(s, i % 4 == 1 ? lun : STORE_ALL_LUNS))
				_exit(4);
		}
		if (write(wfd, &i, sizeof(i)) != sizeof(i))
			_exit(5);
	}
	/* Never reached in the test: the parent kills us long before. */
	pause();
	_exit(0);
}

static void test_crash(void **state)
{
	struct fix *f = *state;
	unsigned char buf[5000], rd[5000];
	uint32_t i, got, acked = 0;
	bool *seen = calloc(CRASH_MAX, sizeof(*seen));
	struct store *s;
	int pfd[2], status;
	pid_t pid;
	ssize_t n;

	assert_non_null(seen);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		crash_child(f->dir, pfd[1]);
	}
	close(pfd[1]);
	/* Kill it while it is busy writing, acknowledged or not. */
	while (acked < CRASH_ACKS &&
	       (n = read(pfd[0], &got, sizeof(got))) == sizeof(got)) {
		seen[got] = true;
		acked++;
	}
	assert_int_equal(acked, CRASH_ACKS);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* Acks already in the pipe count too: drain until the child's end
	 * closes with its death. */
	while ((n = read(pfd[0], &got, sizeof(got))) == sizeof(got)) {
		assert_true(got < CRASH_MAX);
		seen[got] = true;
		acked++;
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	print_message("child killed after %u acknowledged writes\n", acked);

	/* The lock died with the child: the directory opens again, and every
	 * acknowledged byte is there. */
	s = open_store(f->dir, 0);
	for (i = 0; i < CRASH_MAX; i++) {
		uint32_t lun;
		uint64_t off;
		size_t len;

		if (!seen[i])
			continue;
		crash_rec(i, &lun, &off, &len);
		pattern(buf, len, i);
		memset(rd, 0, sizeof(rd));
		assert_int_equal(store_read(s, lun, off, rd, len), 0);
		assert_memory_equal(rd, buf, len);
	}
	store_destroy(s);
	free(seen);
}

/*
 * LUN data is the owner's: a new store directory is 0700 and its files
 * 0600 (they were 0755 and 0644: every local user could read the disks),
 * unless file_mode says otherwise; a bad mode is refused.
 */
static void test_modes(void **state)
{
	struct fix *f = *state;
	struct store_file_params p = {0};
	char dir[300], path[600];
	struct store *s = NULL;
	struct stat st;
	mode_t old = umask(022);
	unsigned int i;
	static const struct {
		unsigned int file_mode, want_file, want_dir;
	} cases[] = {
		{0, 0600, 0700},
		{0640, 0640, 0750},
		{0664, 0644, 0755}, /* the umask still applies */
	};

	for (i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/s%u", f->dir, i);
		p.dir = dir;
		p.file_mode = cases[i].file_mode;
		assert_int_equal(store_file_create(&s, &p), 0);
		assert_int_equal(store_write(s, 3, 0, "x", 1, 0), 0);
		store_destroy(s);
		assert_int_equal(stat(dir, &st), 0);
		assert_int_equal(st.st_mode & 07777, cases[i].want_dir);
		lun_path(path, sizeof(path), dir, 3);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, cases[i].want_file);
		snprintf(path, sizeof(path), "%s/.lock", dir);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, cases[i].want_file);
		rm_tree(dir);
	}
	p.file_mode = 0700;
	assert_int_equal(store_file_create(&s, &p), -EINVAL);
	umask(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_persist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_punch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
