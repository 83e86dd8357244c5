// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench's tree of disk and partition nodes, the one open-all reads,
 * mktree makes and io writes into: the options that name it, its node
 * names, and the readdir that lists one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "bench.h"
#include "sdnum.h"

int bench_tree_opt(const char *cmd, struct bench_tree_opts *t, int opt,
		   const char *arg)
{
	uint64_t v;

	switch (opt) {
	case BENCH_OPT_DISKS:
		if (bench_parse_u64(arg, 1, BENCH_TREE_MAX_DISKS, &v)) {
			bench_err(cmd, "--disks '%s': need 1..%llu", arg,
				  BENCH_TREE_MAX_DISKS);
			return -EINVAL;
		}
		t->ndisks = v;
		t->have_disks = true;
		return 1;
	case BENCH_OPT_PARTS:
		if (bench_parse_u64(arg, 0, SDNUM_MAX_PART_NUMBER, &v)) {
			bench_err(cmd, "--parts '%s': need 0..%u", arg,
				  SDNUM_MAX_PART_NUMBER);
			return -EINVAL;
		}
		t->parts = (unsigned int)v;
		t->have_parts = true;
		return 1;
	case BENCH_OPT_SCHEME:
		t->scheme = sdnum_scheme_find(arg);
		if (!t->scheme) {
			bench_err(
				cmd,
				"--scheme '%s': legacy, naive, wilcox, linux or dynamic",
				arg);
			return -EINVAL;
		}
		return 1;
	case BENCH_OPT_PREFIX:
		if (!*arg || strlen(arg) > SDNUM_MAX_PREFIX ||
		    strchr(arg, '/')) {
			bench_err(
				cmd,
				"--prefix '%s': need 1..%u characters, no '/'",
				arg, SDNUM_MAX_PREFIX);
			return -EINVAL;
		}
		t->prefix = arg;
		return 1;
	default:
		return 0;
	}
}

int bench_tree_check(const char *cmd, const struct bench_tree_opts *t)
{
	if (t->scheme && t->ndisks > t->scheme->max_disks) {
		bench_err(cmd,
			  "--disks %" PRIu64
			  ": the %s scheme numbers at most %" PRIu32 " disks",
			  t->ndisks, t->scheme->name, t->scheme->max_disks);
		return -EINVAL;
	}
	if (t->scheme && t->parts > t->scheme->max_parts) {
		bench_err(cmd,
			  "--parts %u: the %s scheme has at most %" PRIu32
			  " partitions per disk",
			  t->parts, t->scheme->name, t->scheme->max_parts);
		return -EINVAL;
	}
	return 0;
}

int bench_tree_name(const struct bench_tree *t, uint64_t i, char *buf,
		    size_t len)
{
	uint32_t disk;
	unsigned int part;

	if (t->keys) {
		disk = (uint32_t)(t->keys[i] >> 8);
		part = (unsigned int)(t->keys[i] & 0xff);
	} else {
		disk = (uint32_t)(i / (t->parts + 1));
		part = (unsigned int)(i % (t->parts + 1));
	}
	return sdnum_name_part(t->prefix, disk, part, buf, len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Whether entry @de of @dirfd is a block device or a regular file; a
 * file system that does not fill d_type costs an fstatat(). */
static bool tree_node_type(int dirfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_BLK || de->d_type == DT_REG;
	if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	return S_ISBLK(st.st_mode) || S_ISREG(st.st_mode);
}

/* DIR over @dirfd's folder, on a descriptor of its own: 0 or -errno. */
int bench_opendir_at(int dirfd, DIR **out)
{
	int fd, ret;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*out = fdopendir(fd);
	if (!*out) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return 0;
}

int bench_tree_readdir(struct bench_tree *t, int dirfd, bool disks_only)
{
	size_t cap = 0;
	struct dirent *de;
	uint32_t index;
	unsigned int part;
	uint64_t *keys;
	DIR *d;
	int ret;

	ret = bench_opendir_at(dirfd, &d);
	if (ret)
		return ret;
	t->count = 0;
	t->skipped = 0;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			ret = -errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (sdnum_parse(t->prefix, de->d_name, &index, &part) ||
		    (disks_only && part) || !tree_node_type(dirfd, de)) {
			t->skipped++;
			continue;
		}
		if (t->count == cap) {
			cap = cap ? cap * 2 : 4096;
			keys = realloc(t->keys, cap * sizeof(*keys));
			if (!keys) {
				ret = -ENOMEM;
				break;
			}
			t->keys = keys;
		}
		t->keys[t->count++] = (uint64_t)index << 8 | part;
	}
	closedir(d);
	if (ret) {
		free(t->keys);
		t->keys = NULL;
		t->count = 0;
		return ret;
	}
	if (t->keys)
		qsort(t->keys, t->count, sizeof(*t->keys), cmp_u64);
	return 0;
}

bool bench_tree_tmpfs(int dirfd)
{
	struct statfs sfs;

	return fstatfs(dirfd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}
