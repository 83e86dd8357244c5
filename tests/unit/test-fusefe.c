// SPDX-License-Identifier: MIT
/*
 * The FUSE front end in-process: a real mount in a temporary directory,
 * served by fusefe over a small LUN table, used through ordinary system
 * calls. Names and inode numbers, malformed lookups, sizes, reads and
 * writes through a disk and its partitions at odd offsets, every error a
 * LUN or a fault rule can raise, fallocate and SEEK_DATA/SEEK_HOLE,
 * xattrs, statfs, LUNs removed and added and tables rewritten while the
 * kernel caches entries for 30 s, and a clean unmount; then the cache
 * coherence of each path that changes a disk (another file of it, the LUN
 * layer's writes as iSCSI and TCMU make them, resize, offline, removal, a
 * fault rule) and the requests a cached file costs. All of it twice: with
 * [fuse] cache = page, then direct. Skips (77) without /dev/fuse or the
 * right to mount.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "config.h"
#include "fault.h"
#include "frontend/fuse/fusefe.h"
#include "log.h"
#include "lun.h"
#include "ptable.h"
#include "scsi/scsi.h"
#include "sdnum.h"
#include "store/store.h"
#include "target.h"

#define FUSE_MAGIC 0x65735546

/* LUNs 0-29: 64 MiB, 512-byte blocks, GPT with 2 partitions; 40-41: 4 KiB
 * blocks, MBR with 5 (so 6 partitions: 4 is the extended one). */
static const char conf[] = "[target]\n"
			   "seed = 3\n"
			   "max_luns = 64\n"
			   "[luns]\n"
			   "count = 30\n"
			   "size = 64M\n"
			   "partitions = 2\n"
			   "ptable = gpt\n"
			   "[luns.big]\n"
			   "first = 40\n"
			   "count = 2\n"
			   "size = 64M\n"
			   "block_size = 4096\n"
			   "partitions = 5\n"
			   "ptable = mbr\n"
			   "[store]\n"
			   "type = mem\n"
			   "mem_limit = 8M\n"
			   "[fuse]\n"
			   "attr_timeout = 30\n"
			   "threads = 4\n";

struct fx {
	char dir[64];
	struct cfg *cfg;
	struct store *store;
	struct lun_table *t;
	struct fault_table *ft;
	struct scsi_target tgt;
	struct target target;
	void *fe;
	int start_ret;
	bool still_mounted; /* a FUSE file system there after the stop */
};

static struct fx F;
/* [fuse] cache of this round */
static const char *cache_mode = "page";

static void quiet_sink(void *arg, int level, const char *line)
{
	(void)arg;
	if (level <= LOG_WARNING)
		fprintf(stderr, "log: %s\n", line);
}

static int build(struct fx *f)
{
	struct cfg_parser *p;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-fusefe.XXXXXX");
	if (!mkdtemp(f->dir))
		return -errno;
	if (cfg_parser_create(&p))
		return -ENOMEM;
	cfg_parse_string(p, "t.conf", conf);
	cfg_override(p, "fuse", "mountpoint", f->dir);
	cfg_override(p, "fuse", "cache", cache_mode);
	if (cfg_finish(p, &f->cfg)) {
		fprintf(stderr, "%s", cfg_errors(p));
		cfg_parser_destroy(p);
		return -EINVAL;
	}
	cfg_parser_destroy(p);
	if (store_mem_create(&f->store, &f->cfg->store.mem))
		return -ENOMEM;
	struct lun_table_params tp = {.max_luns = f->cfg->target.max_luns,
				      .seed = f->cfg->target.seed,
				      .store = f->store};
	if (lun_table_create(&f->t, &tp))
		return -ENOMEM;
	for (i = 0; i < f->cfg->ngroups; i++)
		if (lun_group_add(f->t, &f->cfg->groups[i]) < 0)
			return -EINVAL;
	if (fault_table_create(&f->ft))
		return -ENOMEM;
	f->tgt = (struct scsi_target){.luns = f->t, .faults = f->ft};
	/* as sdswarmd makes it */
	f->target = (struct target){
		.luns = f->t,
		.faults = f->ft,
		.scsi = &f->tgt,
		.scheme = f->cfg->target.scheme,
		.name_prefix = f->cfg->target.name_prefix,
		.groups = f->cfg->groups,
		.ngroups = f->cfg->ngroups,
		.space_limit = f->cfg->store.mem.mem_limit,
	};
	if (target_init(&f->target))
		return -ENOMEM;
	f->start_ret = fusefe_start(&f->cfg->fuse, &f->target, &f->fe);
	return f->start_ret;
}

static void unbuild(struct fx *f)
{
	struct statfs sfs;

	if (!f->start_ret) {
		fusefe_stop(f->fe);
		f->still_mounted =
			statfs(f->dir, &sfs) == 0 && sfs.f_type == FUSE_MAGIC;
	}
	f->fe = NULL;
	f->start_ret = -1;
	target_fini(&f->target);
	fault_table_destroy(f->ft);
	lun_table_destroy(f->t);
	store_destroy(f->store);
	cfg_free(f->cfg);
	rmdir(f->dir);
}

static void path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", F.dir, name);
}

static int openf(const char *name, int flags)
{
	char p[128];

	path(p, sizeof(p), name);
	return open(p, flags);
}

/* The partition table entry @part (1-based) of LUN @lun. */
static struct ptable_part layout(uint32_t lun, unsigned int part)
{
	struct ptable_part pp;
	struct lun_info li;

	assert_int_equal(lun_get(F.t, lun, &li), 0);
	assert_int_equal(ptable_layout(&li.geom, part - 1, &pp), 0);
	lun_put(F.t, &li);
	return pp;
}

/* stat(2) errno of @name, or 0. */
static int stat_err(const char *name)
{
	struct stat st;
	char p[512];

	path(p, sizeof(p), name);
	return stat(p, &st) < 0 ? errno : 0;
}

/* Wait up to 5 s for stat_err(@name) == @want. */
static bool wait_stat(const char *name, int want)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (stat_err(name) == want)
			return true;
		usleep(100000);
	}
	return false;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_names(void **state)
{
	char *got[256], *want[256], name[SDNUM_NAME_MAX], p[128];
	unsigned int ngot = 0, nwant = 0, i, part;
	struct dirent *de;
	struct stat st;
	uint32_t lun;
	DIR *d;

	(void)state;
	for (lun = 0; lun < 42; lun++) {
		unsigned int np = lun < 30 ? 2 : 6;

		if (lun >= 30 && lun < 40)
			continue;
		for (part = 0; part <= np; part++) {
			sdnum_name_part("sd", lun, part, name, sizeof(name));
			want[nwant++] = strdup(name);
		}
	}
	d = opendir(F.dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_true(ngot < 256);
		got[ngot++] = strdup(de->d_name);
		assert_int_equal(de->d_type, DT_REG);
		/* stable inode numbers: 2 + LUN * 256 + partition */
		assert_int_equal(sdnum_parse("sd", de->d_name, &lun, &part), 0);
		assert_int_equal(de->d_ino, FUSEFE_INO(lun, part));
	}
	closedir(d);
	assert_int_equal(ngot, nwant);
	qsort(got, ngot, sizeof(got[0]), cmpstr);
	qsort(want, nwant, sizeof(want[0]), cmpstr);
	for (i = 0; i < ngot; i++) {
		assert_string_equal(got[i], want[i]);
		free(got[i]);
		free(want[i]);
	}
	/* the ones past sdz: LUN 40 is sdao, its partition 6 sdao6 */
	path(p, sizeof(p), "sdao6");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_ino, FUSEFE_INO(40, 6));
}

/* telldir()/seekdir() cookies survive a restart of the listing. */
static void test_seekdir(void **state)
{
	char after[256] = "";
	struct dirent *de;
	long cookie = -1;
	int n = 0;
	DIR *d;

	(void)state;
	d = opendir(F.dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (++n == 40) {
			cookie = telldir(d);
			de = readdir(d);
			assert_non_null(de);
			snprintf(after, sizeof(after), "%s", de->d_name);
			break;
		}
	}
	closedir(d);
	assert_true(cookie >= 0);
	d = opendir(F.dir);
	assert_non_null(d);
	seekdir(d, cookie);
	de = readdir(d);
	assert_non_null(de);
	assert_string_equal(de->d_name, after);
	closedir(d);
}

static void test_bad_names(void **state)
{
	static const char *const bad[] = {
		"sdA",	 "sda0",     "sda01",	"sdzzzzzzzzz", "sda3",
		"sdbe",	 "sdao7",    "sd",	"xyz",	       "sda-1",
		"sda1x", "sdaa256",  "sdz3",	"sdae",	       "sdfxshrxy",
		"sda ",	 "sdao2147", "sda9999",
	};
	char longname[256];
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (stat_err(bad[i]) != ENOENT)
			fail_msg("%s: %s", bad[i], strerror(stat_err(bad[i])));
	}
	memset(longname, 'a', 255);
	memcpy(longname, "sd", 2);
	longname[255] = '\0';
	assert_int_equal(stat_err(longname), ENOENT);
	/* the present ones next to them do exist */
	assert_int_equal(stat_err("sda2"), 0);
	assert_int_equal(stat_err("sdad"), 0);
	assert_int_equal(stat_err("sdz2"), 0);
}

static void test_sizes(void **state)
{
	struct ptable_part pp;
	struct stat st;
	char p[128];

	(void)state;
	path(p, sizeof(p), "sdb");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 64 << 20);
	assert_int_equal(st.st_blksize, 512);
	assert_true(st.st_mtime > 1600000000);
	pp = layout(1, 2);
	path(p, sizeof(p), "sdb2");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, pp.nblocks * 512);
	path(p, sizeof(p), "sdao");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_blksize, 4096);
	/* MBR partition 4 is the extended one: like the kernel, one block long */
	path(p, sizeof(p), "sdao4");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4096);
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7 + seed);
}

/* Unaligned writes through a partition read back through the disk. */
static void check_alias(const char *disk, uint32_t lun, unsigned int part,
			uint32_t bs, off_t x, size_t len)
{
	char pname[32];
	unsigned char *wbuf = malloc(len), *rbuf = malloc(len + 2);
	struct ptable_part pp = layout(lun, part);
	off_t dx = (off_t)(pp.start * bs) + x;
	int pfd, dfd;

	snprintf(pname, sizeof(pname), "%s%u", disk, part);
	pfd = openf(pname, O_RDWR);
	dfd = openf(disk, O_RDWR);
	assert_true(pfd >= 0 && dfd >= 0);
	fill(wbuf, len, (unsigned int)x);
	assert_int_equal(pwrite(pfd, wbuf, len, x), (ssize_t)len);
	/* one byte either side too: untouched zeros */
	assert_int_equal(pread(dfd, rbuf, len + 2, dx - 1), (ssize_t)len + 2);
	assert_int_equal(rbuf[0], 0);
	assert_int_equal(rbuf[len + 1], 0);
	assert_memory_equal(rbuf + 1, wbuf, len);
	/* and the other way: a write through the disk shows in the partition */
	fill(wbuf, len, 99);
	assert_int_equal(pwrite(dfd, wbuf, len, dx), (ssize_t)len);
	assert_int_equal(pread(pfd, rbuf, len, x), (ssize_t)len);
	assert_memory_equal(rbuf, wbuf, len);
	memset(wbuf, 0, len);
	assert_int_equal(pwrite(pfd, wbuf, len, x), (ssize_t)len);
	close(pfd);
	close(dfd);
	free(wbuf);
	free(rbuf);
}

static void test_rw_alias(void **state)
{
	(void)state;
	check_alias("sdc", 2, 2, 512, 1000, 3000);
	check_alias("sdc", 2, 1, 512, 0, 512);
	check_alias("sdc", 2, 1, 512, 511, 2);
	check_alias("sdc", 2, 2, 512, 77777, 200000);
	check_alias("sdao", 40, 5, 4096, 4095, 10);
	check_alias("sdao", 40, 1, 4096, 12345, 70000);
}

static void test_edges(void **state)
{
	unsigned char buf[1024];
	struct stat st;
	int fd;

	(void)state;
	fd = openf("sdd1", O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	/* a read across the end is cut; at the end it is 0 */
	assert_int_equal(pread(fd, buf, sizeof(buf), st.st_size - 100), 100);
	assert_int_equal(pread(fd, buf, sizeof(buf), st.st_size), 0);
	/* a write across the end is short; at the end ENOSPC */
	assert_int_equal(pwrite(fd, buf, sizeof(buf), st.st_size - 10), 10);
	errno = 0;
	assert_int_equal(pwrite(fd, buf, sizeof(buf), st.st_size), -1);
	assert_int_equal(errno, ENOSPC);
	/* a disk does not change size */
	assert_int_equal(ftruncate(fd, 4096), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ftruncate(fd, st.st_size), 0);
	assert_int_equal(fchmod(fd, 0600), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(fdatasync(fd), 0);
	close(fd);
	/* O_TRUNC means nothing, as on a block device */
	fd = openf("sdd1", O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size > 0);
	close(fd);
	/* O_DIRECT with aligned buffers works */
	fd = openf("sdd", O_RDONLY | O_DIRECT);
	assert_true(fd >= 0);
	void *al = aligned_alloc(4096, 4096);
	assert_non_null(al);
	assert_int_equal(pread(fd, al, 4096, 0), 4096);
	/* the synthetic protective MBR */
	assert_int_equal(((unsigned char *)al)[510], 0x55);
	assert_int_equal(((unsigned char *)al)[450], 0xee);
	free(al);
	close(fd);
}

static void expect_read_errno(const char *name, int want)
{
	char buf[4096];
	int fd = openf(name, O_RDONLY);

	assert_true(fd >= 0);
	errno = 0;
	assert_int_equal(pread(fd, buf, sizeof(buf), 8192), -1);
	assert_int_equal(errno, want);
	close(fd);
}

static int add_rule(const char *text)
{
	struct fault_rule r;
	char why[128];

	assert_int_equal(fault_rule_parse(text, 64, &r, why, sizeof(why)), 0);
	return fault_add(F.ft, &r);
}

struct reader {
	const char *name;
	ssize_t ret;
	int err;
	double secs;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *read_thread(void *arg)
{
	struct reader *r = arg;
	char buf[4096];
	double t0 = mono();
	int fd = openf(r->name, O_RDONLY);

	r->ret = fd < 0 ? -1 : pread(fd, buf, sizeof(buf), 0);
	r->err = errno;
	r->secs = mono() - t0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void test_errors(void **state)
{
	unsigned char buf[4096] = {1};
	struct reader r = {.name = "sdf"};
	pthread_t th;
	int fd, id;

	(void)state;
	/* LUN states and write protect */
	assert_int_equal(lun_set_state(F.t, 4, LUN_OFFLINE), 0);
	expect_read_errno("sde", ENOMEDIUM);
	expect_read_errno("sde1", ENOMEDIUM);
	assert_int_equal(lun_set_state(F.t, 4, LUN_ONLINE), 0);
	fd = openf("sde", O_RDWR);
	assert_int_equal(pread(fd, buf, sizeof(buf), 8192), 4096);
	assert_int_equal(lun_mode_set(F.t, 4, LUN_MODE_SWP, LUN_NEXUS_NONE), 0);
	assert_int_equal(pwrite(fd, buf, 100, 8192), -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(lun_mode_set(F.t, 4, 0, LUN_NEXUS_NONE), 0);
	assert_int_equal(pwrite(fd, buf, 100, 8192), 100);
	close(fd);

	/* injected faults: medium error, not ready, on the disk's LBAs */
	id = add_rule("medium-read luns=4 lba=16-16");
	assert_true(id > 0);
	expect_read_errno("sde", EIO);
	fd = openf("sde", O_RDONLY);
	assert_int_equal(pread(fd, buf, 512, 0), 512); /* LBA 0 is fine */
	close(fd);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);
	id = add_rule("not-ready luns=4");
	expect_read_errno("sde", ENOMEDIUM);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);
	id = add_rule("medium-write luns=4");
	fd = openf("sde2", O_RDWR);
	assert_int_equal(pwrite(fd, buf, 10, 0), -1);
	assert_int_equal(errno, EIO);
	close(fd);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);

	/* a delay sleeps in the worker */
	id = add_rule("delay luns=5 delay=300ms");
	read_thread(&r);
	assert_int_equal(r.ret, 4096);
	assert_true(r.secs >= 0.29);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);

	/* a hang holds the read until the rule is cleared */
	id = add_rule("hang luns=5");
	assert_int_equal(pthread_create(&th, NULL, read_thread, &r), 0);
	usleep(500000);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);
	pthread_join(th, NULL);
	assert_int_equal(r.ret, 4096);
	assert_true(r.secs >= 0.45 && r.secs < 5);

	/* the mem store's limit */
	{
		size_t big = 9 << 20;
		unsigned char *b = malloc(big);

		memset(b, 0xab, big);
		fd = openf("sdg2", O_RDWR);
		errno = 0;
		ssize_t w = 0, n;
		while (w < (ssize_t)big &&
		       (n = pwrite(fd, b + w, big - (size_t)w, (off_t)w)) > 0)
			w += n;
		assert_true(w < (ssize_t)big);
		assert_int_equal(errno, ENOSPC);
		assert_int_equal(
			fallocate(fd,
				  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				  (off_t)big),
			0);
		close(fd);
		free(b);
	}
	assert_true(store_lun_bytes(F.store, 6) <= 4096 * 8);
}

static void test_fallocate_seek(void **state)
{
	unsigned char buf[8192], rb[4096];
	uint64_t before;
	int fd;

	(void)state;
	fd = openf("sdh1", O_RDWR);
	assert_true(fd >= 0);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 65536), 8192);
	assert_int_equal(lseek(fd, 0, SEEK_DATA), 65536);
	assert_int_equal(lseek(fd, 65536, SEEK_HOLE), 65536 + 8192);
	assert_int_equal(lseek(fd, 70000, SEEK_DATA), 70000);
	/* the end of the file is a hole */
	assert_int_equal(lseek(fd, 80000, SEEK_DATA), -1);
	assert_int_equal(errno, ENXIO);
	before = store_lun_bytes(F.store, 7);
	assert_int_equal(before, 8192);
	/* a partial punch zeroes in place */
	assert_int_equal(fallocate(fd,
				   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   65536 + 100, 100),
			 0);
	assert_int_equal(pread(fd, rb, 4096, 65536), 4096);
	assert_int_equal(rb[99], 0xff);
	assert_int_equal(rb[100], 0);
	assert_int_equal(rb[199], 0);
	assert_int_equal(rb[200], 0xff);
	/* a whole-block punch frees the store's memory */
	assert_int_equal(fallocate(fd,
				   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   65536 + 4096, 4096),
			 0);
	assert_int_equal(store_lun_bytes(F.store, 7), 4096);
	assert_int_equal(lseek(fd, 0, SEEK_DATA), 65536);
	assert_int_equal(lseek(fd, 65536, SEEK_HOLE), 65536 + 4096);
	/* zero range */
	assert_int_equal(fallocate(fd, FALLOC_FL_ZERO_RANGE, 65536, 4096), 0);
	assert_int_equal(pread(fd, rb, 4096, 65536), 4096);
	memset(buf, 0, sizeof(buf));
	assert_memory_equal(rb, buf, 4096);
	assert_int_equal(store_lun_bytes(F.store, 7), 0);
	assert_int_equal(lseek(fd, 0, SEEK_DATA), -1);
	assert_int_equal(errno, ENXIO);
	/* allocating is not a thing a disk does */
	assert_int_equal(fallocate(fd, 0, 0, 4096), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 1ll << 40), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
	/* the disk's first blocks are the synthetic table: data */
	fd = openf("sdh", O_RDONLY);
	assert_int_equal(lseek(fd, 0, SEEK_DATA), 0);
	/* protective MBR, GPT header, the entry block holding both entries */
	assert_int_equal(lseek(fd, 0, SEEK_HOLE), 3 * 512);
	close(fd);
}

static void test_xattrs(void **state)
{
	char val[128], list[256], p[128], want[64];
	uint64_t hi, lo;
	uint32_t dev;
	ssize_t n;

	(void)state;
	path(p, sizeof(p), "sdb2");
	n = getxattr(p, "user.sdswarm.devt", val, sizeof(val));
	assert_true(n > 0);
	val[n] = '\0';
	assert_int_equal(sdnum_scheme_linux.encode(NULL, 1, 2, &dev), 0);
	snprintf(want, sizeof(want), "%u:%u", SDNUM_MAJOR(dev),
		 SDNUM_MINOR(dev));
	assert_string_equal(val, want);
	assert_string_equal(val, "8:18");
	n = getxattr(p, "user.sdswarm.lun", val, sizeof(val));
	val[n] = '\0';
	assert_string_equal(val, "1");
	n = getxattr(p, "user.sdswarm.wwn", val, sizeof(val));
	val[n] = '\0';
	lun_wwn(F.t, 1, &hi, &lo);
	snprintf(want, sizeof(want), "naa.%016" PRIx64 "%016" PRIx64, hi, lo);
	assert_string_equal(val, want);
	assert_true(!strncmp(val, "naa.6", 5));
	n = getxattr(p, "user.sdswarm.serial", val, sizeof(val));
	val[n] = '\0';
	lun_serial(F.t, 1, want, sizeof(want));
	assert_string_equal(val, want);
	/* size probe and ERANGE */
	assert_int_equal(getxattr(p, "user.sdswarm.lun", NULL, 0), 1);
	assert_int_equal(getxattr(p, "user.sdswarm.serial", val, 3), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(getxattr(p, "user.other", val, sizeof(val)), -1);
	assert_int_equal(errno, ENODATA);
	n = listxattr(p, list, sizeof(list));
	assert_int_equal(n, sizeof("user.sdswarm.devt") +
				    sizeof("user.sdswarm.lun") +
				    sizeof("user.sdswarm.wwn") +
				    sizeof("user.sdswarm.serial"));
	assert_string_equal(list, "user.sdswarm.devt");
	assert_int_equal(setxattr(p, "user.sdswarm.lun", "2", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(setxattr(p, "user.mine", "2", 1, 0), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(removexattr(p, "user.sdswarm.lun"), -1);
	assert_int_equal(errno, EPERM);
	/* a disk past sdp on 4 KiB blocks: 65:224 + 1 (sdao1) */
	path(p, sizeof(p), "sdao1");
	n = getxattr(p, "user.sdswarm.devt", val, sizeof(val));
	val[n] = '\0';
	assert_int_equal(sdnum_scheme_linux.encode(NULL, 40, 1, &dev), 0);
	snprintf(want, sizeof(want), "%u:%u", SDNUM_MAJOR(dev),
		 SDNUM_MINOR(dev));
	assert_string_equal(val, want);
}

static void test_statfs(void **state)
{
	struct statvfs sv;
	uint64_t blocks = 32ull * (64 << 20) / 512;

	(void)state;
	assert_int_equal(statvfs(F.dir, &sv), 0);
	assert_int_equal(sv.f_frsize, 512);
	assert_int_equal(sv.f_blocks, blocks);
	assert_true(sv.f_bfree <= blocks);
	/* the mem limit (8 MiB) bounds what is available */
	assert_true(sv.f_bavail <= (8 << 20) / 512);
	assert_int_equal(sv.f_files, 30 * 3 + 2 * 7);
}

/* LUNs removed and added show within the notifier's second, although the
 * kernel may cache entries for 30 s. */
static void test_runtime(void **state)
{
	char p[128];
	struct stat st;
	int fd, gi;
	char c;

	(void)state;
	assert_int_equal(stat_err("sdj"), 0);
	assert_int_equal(stat_err("sdj1"), 0);
	fd = openf("sdj", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lun_remove(F.t, 9), 0);
	assert_true(wait_stat("sdj", ENOENT));
	assert_true(wait_stat("sdj2", ENOENT));
	/* a handle on the removed LUN fails */
	assert_int_equal(pread(fd, &c, 1, 0), -1);
	assert_int_equal(errno, ENXIO);
	close(fd);
	gi = lun_group_find(F.t, "default");
	assert_true(gi >= 0);
	assert_int_equal(lun_add(F.t, 9, (unsigned int)gi), 9);
	assert_true(wait_stat("sdj2", 0));
	/* and a LUN that was never there appears */
	assert_int_equal(lun_add(F.t, 50, (unsigned int)gi), 50);
	assert_true(wait_stat("sday", 0));
	path(p, sizeof(p), "sday1");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(lun_remove(F.t, 50), 0);
	assert_true(wait_stat("sday1", ENOENT));
}

/* The host rewrites the table: partitions vanish and come back changed. */
static void test_table_rewrite(void **state)
{
	unsigned char zero[34 * 512], mbr[512];
	struct stat st;
	char p[128];
	int fd;

	(void)state;
	assert_int_equal(stat_err("sdk2"), 0);
	fd = openf("sdk", O_RDWR);
	assert_true(fd >= 0);
	memset(zero, 0, sizeof(zero));
	assert_int_equal(pwrite(fd, zero, sizeof(zero), 0), sizeof(zero));
	assert_true(wait_stat("sdk1", ENOENT));
	assert_true(wait_stat("sdk2", ENOENT));
	/* an MBR with one partition: 4096 sectors at 2048 */
	memset(mbr, 0, sizeof(mbr));
	mbr[446 + 4] = 0x83;
	mbr[446 + 8] = 0x00;
	mbr[446 + 9] = 0x08; /* start 2048 */
	mbr[446 + 12] = 0x00;
	mbr[446 + 13] = 0x10; /* 4096 sectors */
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	assert_int_equal(pwrite(fd, mbr, sizeof(mbr), 0), sizeof(mbr));
	close(fd);
	assert_true(wait_stat("sdk1", 0));
	path(p, sizeof(p), "sdk1");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4096 * 512);
	assert_int_equal(stat_err("sdk2"), ENOENT);
	/* a write through the new partition lands at sector 2048 */
	fd = open(p, O_RDWR);
	assert_int_equal(pwrite(fd, "hello", 5, 0), 5);
	close(fd);
	fd = openf("sdk", O_RDONLY);
	assert_int_equal(pread(fd, zero, 5, 2048 * 512), 5);
	assert_memory_equal(zero, "hello", 5);
	close(fd);
}

static void rd(int fd, void *buf, size_t n, off_t off)
{
	assert_int_equal(pread(fd, buf, n, off), (ssize_t)n);
}

static void wr(int fd, const void *buf, size_t n, off_t off)
{
	assert_int_equal(pwrite(fd, buf, n, off), (ssize_t)n);
}

static void expect_bytes(int fd, int c, size_t n, off_t off)
{
	unsigned char want[4096], got[4096];

	assert_true(n <= sizeof(got));
	memset(want, c, n);
	memset(got, 0x5a, n);
	rd(fd, got, n, off);
	assert_memory_equal(got, want, n);
}

static void lun_fill(uint32_t lun, uint64_t lba, int c, unsigned int op)
{
	unsigned char buf[4096];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct lun_info li;

	memset(buf, c, sizeof(buf));
	assert_int_equal(lun_get(F.t, lun, &li), 0);
	if (op == 0)
		assert_int_equal(lun_write(F.t, &li, lba, 8, &iov, 1, 0), 0);
	else if (op == 1)
		assert_int_equal(lun_write_zeroes(F.t, &li, lba, 8, 0), 0);
	else
		assert_int_equal(lun_unmap(F.t, &li, lba, 8), 0);
	lun_put(F.t, &li);
}

/*
 * Write through one path, read through another that has the old bytes
 * cached: the new bytes must be seen. No waiting anywhere: the writer is
 * only done once every other file's copy is gone.
 */
static void test_coherence(void **state)
{
	struct ptable_part p1 = layout(12, 1);
	off_t d1 = (off_t)p1.start * 512;
	unsigned char a[4096], b[4096];
	struct stat st;
	int fdd, fdp, id, gi;

	(void)state;
	fdd = openf("sdm", O_RDWR);
	fdp = openf("sdm1", O_RDWR);
	assert_true(fdd >= 0 && fdp >= 0);
	/* a disk and its partition: both cached, then written through one */
	rd(fdd, b, 4096, d1);
	rd(fdp, b, 4096, 0);
	memset(a, 0x11, sizeof(a));
	wr(fdp, a, 4096, 0);
	expect_bytes(fdd, 0x11, 4096, d1);
	memset(a, 0x22, 100);
	wr(fdd, a, 100, d1 + 10); /* part of a page, part of a block */
	expect_bytes(fdp, 0x22, 100, 10);
	expect_bytes(fdp, 0x11, 10, 0);

	/* the LUN layer's writes, as iSCSI's and TCMU's commands make them */
	rd(fdp, b, 4096, 0);
	rd(fdd, b, 4096, d1);
	lun_fill(12, p1.start, 0x33, 0); /* WRITE */
	expect_bytes(fdp, 0x33, 4096, 0);
	expect_bytes(fdd, 0x33, 4096, d1);
	lun_fill(12, p1.start, 0, 1); /* WRITE SAME with zeros */
	expect_bytes(fdp, 0, 4096, 0);
	expect_bytes(fdd, 0, 4096, d1);
	lun_fill(12, p1.start, 0x44, 0);
	expect_bytes(fdp, 0x44, 4096, 0);
	lun_fill(12, p1.start, 0, 2); /* UNMAP */
	expect_bytes(fdp, 0, 4096, 0);
	expect_bytes(fdd, 0, 4096, d1);

	/* O_DIRECT goes around the cache, and sees what the cache shows */
	{
		int fdo = openf("sdm1", O_RDONLY | O_DIRECT);
		void *al = NULL;

		assert_true(fdo >= 0);
		assert_int_equal(posix_memalign(&al, 4096, 4096), 0);
		lun_fill(12, p1.start, 0x55, 0);
		rd(fdo, al, 4096, 0);
		memset(a, 0x55, sizeof(a));
		assert_memory_equal(al, a, 4096);
		expect_bytes(fdp, 0x55, 4096, 0);
		free(al);
		close(fdo);
	}

	/* a fault rule over cached blocks: the read reaches it */
	rd(fdp, b, 512, 0);
	{
		char rule[96];

		snprintf(rule, sizeof(rule),
			 "medium-read luns=12 lba=%" PRIu64 "-%" PRIu64,
			 p1.start, p1.start);
		id = add_rule(rule);
	}
	assert_true(id > 0);
	errno = 0;
	assert_int_equal(pread(fdp, b, 512, 0), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fault_clear(F.ft, (uint32_t)id), 1);
	expect_bytes(fdp, 0x55, 512, 0);

	/* offline: cached blocks fail like the rest */
	rd(fdd, b, 4096, 0);
	assert_int_equal(lun_set_state(F.t, 12, LUN_OFFLINE), 0);
	errno = 0;
	assert_int_equal(pread(fdd, b, 4096, 0), -1);
	assert_int_equal(errno, ENOMEDIUM);
	assert_int_equal(lun_set_state(F.t, 12, LUN_ONLINE), 0);
	rd(fdd, b, 4096, 0);

	/* resize: the size the kernel keeps for 30 s changes at once */
	assert_int_equal(fstat(fdd, &st), 0);
	assert_int_equal(st.st_size, 64 << 20);
	assert_int_equal(lun_resize(F.t, 12, 96 << 20), 0);
	assert_int_equal(fstat(fdd, &st), 0);
	assert_int_equal(st.st_size, 96 << 20);

	/* removal: no cached block is served; the name goes at once */
	rd(fdp, b, 4096, 0);
	assert_int_equal(lun_remove(F.t, 12), 0);
	errno = 0;
	assert_int_equal(pread(fdp, b, 4096, 0), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(stat_err("sdm1"), ENOENT);
	/* added again: the old files stay dead, the name works again */
	gi = lun_group_find(F.t, "default");
	assert_int_equal(lun_add(F.t, 12, (unsigned int)gi), 12);
	assert_int_equal(stat_err("sdm1"), 0);
	errno = 0;
	assert_int_equal(pread(fdd, b, 4096, 0), -1);
	assert_true(errno == ENXIO || errno == EIO);
	close(fdd);
	close(fdp);
	fdd = openf("sdm", O_RDONLY);
	assert_true(fdd >= 0);
	expect_bytes(fdd, 0, 4096, d1);
	close(fdd);
}

/* The request counter of @op in the root's user.sdswarm.requests. */
static uint64_t reqs(const char *op)
{
	char buf[512], key[32], *p;
	ssize_t n;

	n = getxattr(F.dir, "user.sdswarm.requests", buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	snprintf(key, sizeof(key), "%s=", op);
	p = strstr(buf, key);
	assert_non_null(p);
	return strtoull(p + strlen(key), NULL, 10);
}

static void list_dir(void)
{
	DIR *d = opendir(F.dir);
	unsigned int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	assert_true(n > 2);
}

/*
 * What a file costs once the kernel has it: page cache, no OPEN, the
 * first 4 KiB pushed at READDIRPLUS (with what the store holds), and no
 * second READ of the same bytes; direct, an OPEN and a READ every time.
 */
static void test_requests(void **state)
{
	struct ptable_part p1 = layout(13, 1);
	uint64_t open0, read0, rel0;
	char b[4096];
	int fd, i;

	(void)state;
	fd = openf("sdn", O_RDONLY); /* the first open of all may ask */
	assert_true(fd >= 0);
	close(fd);
	lun_fill(13, p1.start, 0x66, 0);
	list_dir();
	open0 = reqs("open");
	read0 = reqs("read");
	rel0 = reqs("release");
	for (i = 0; i < 3; i++) {
		fd = openf("sdn1", O_RDONLY);
		assert_true(fd >= 0);
		expect_bytes(fd, 0x66, 4096, 0);
		close(fd);
	}
	if (!strcmp(cache_mode, "page")) {
		assert_int_equal(reqs("open") - open0, 0);
		assert_int_equal(reqs("release") - rel0, 0);
		assert_int_equal(reqs("read") - read0, 0);
	} else {
		assert_int_equal(reqs("open") - open0, 3);
		assert_int_equal(reqs("read") - read0, 3);
	}
	/* past what was pushed: one READ, then the cache */
	read0 = reqs("read");
	fd = openf("sdn1", O_RDONLY);
	rd(fd, b, sizeof(b), 1 << 20);
	rd(fd, b, sizeof(b), 1 << 20);
	close(fd);
	assert_int_equal(reqs("read") - read0,
			 strcmp(cache_mode, "page") ? 2 : 1);
	/* a name that cannot exist is asked for once */
	read0 = reqs("lookup");
	assert_int_equal(stat_err("nosuchdisk"), ENOENT);
	assert_int_equal(stat_err("nosuchdisk"), ENOENT);
	assert_int_equal(reqs("lookup") - read0, 1);
}

static int group_setup(void **state)
{
	(void)state;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unbuild(&F);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_seekdir),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_rw_alias),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fallocate_seek),
		cmocka_unit_test(test_xattrs),
		cmocka_unit_test(test_statfs),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_table_rewrite),
		cmocka_unit_test(test_coherence),
		cmocka_unit_test(test_requests),
	};
	static const char *const modes[] = {"page", "direct"};
	unsigned int m;
	int ret = 0;

	log_set_sink(quiet_sink, NULL);
	if (access("/dev/fuse", R_OK | W_OK)) {
		printf("SKIP: no usable /dev/fuse\n");
		return 77;
	}
	for (m = 0; m < 2 && !ret; m++) {
		cache_mode = modes[m];
		printf("[fuse] cache = %s\n", cache_mode);
		ret = build(&F);
		if (ret == -EPERM || ret == -ENODEV || ret == -EACCES) {
			printf("SKIP: cannot mount FUSE here: %s\n",
			       strerror(-ret));
			unbuild(&F);
			return 77;
		}
		if (ret) {
			fprintf(stderr, "fusefe_start: %s\n", strerror(-ret));
			unbuild(&F);
			return 1;
		}
		ret = cmocka_run_group_tests_name(cache_mode, tests,
						  group_setup, group_teardown);
		/* after fusefe_stop() nothing is mounted there any more */
		if (F.still_mounted) {
			fprintf(stderr, "FAIL: %s is still a FUSE mount\n",
				F.dir);
			return 1;
		}
	}
	return ret;
}
