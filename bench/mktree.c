// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench mktree: makes a tree of empty or sparse files named as the
 * kernel names disks and partitions. On tmpfs it is open-all's reference,
 * the kernel's own VFS cost with no driver below it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <jansson.h>

#include "bench.h"
#include "cli.h"
#include "parse.h"
#include "sdnum.h"

/* The clock is read once per this many files (~20 ns a read against
 * ~1 us a file: well under 0.1%). */
#define MK_CLOCK_EVERY 64u

struct mk_opts {
	struct bench_opts common;
	const char *dir;
	struct bench_tree_opts tree;
};

enum {
	MK_OPT_SIZE = 0x200,
	MK_OPT_FORCE,
};

static void mk_usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench mktree DIR --disks N [--parts P] [--size BYTES]\n"
		"                   [--scheme S] [--prefix sd] [--force] [--json]\n\n"
		"Makes DIR (if missing) and in it one file per disk and partition node,\n"
		"named as the kernel names them: sda, sda1..sdaP, sdb, ... for disks\n"
		"0..N-1, empty (one mknodat each) or, with --size, sparse files of that\n"
		"size. On tmpfs (/dev/shm) this is open-all's reference: the kernel's own\n"
		"VFS cost, with no driver below it. Prints files/s.\n\n"
		"  --disks N       disks 0..N-1 (required)\n"
		"  --parts P       partitions per disk, 0..255 (default 15: 16 files a disk)\n"
		"  --size BYTES    sparse files of this size, K/M/G/T suffixes (default 0)\n"
		"  --scheme S      check N and P fit the dev_t scheme (default: any)\n"
		"  --prefix P      driver prefix (default sd)\n"
		"  --force         write into a non-empty DIR: files of the tree's names\n"
		"                  are truncated to --size, other entries are kept\n"
		"  --json          one JSON object instead of the table\n"
		"Refuses a non-empty DIR without --force, and a tree larger than the\n"
		"file system's free inodes. Exit status 0, or 1 on an error.\n");
}

/* 0 if DIR has no entry but . and .., -ENOTEMPTY if it has, -errno. */
static int mk_check_empty(int dirfd)
{
	struct dirent *de;
	DIR *d;
	int ret;

	ret = bench_opendir_at(dirfd, &d);
	if (ret)
		return ret;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			ret = -ENOTEMPTY;
			break;
		}
	closedir(d);
	return ret;
}

/* An existing entry @name (--force): it must be a regular file, and ends
 * up @size bytes long. */
static int mk_reuse(int dirfd, const char *name, uint64_t size)
{
	struct stat st;
	int fd, ret = 0;

	/* O_NONBLOCK: a FIFO of that name must not hang us; O_NOFOLLOW: a
	 * symlink is not followed out of the tree. */
	fd = openat(dirfd, name,
		    O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == EISDIR || errno == ENXIO
			       ? -EEXIST
			       : -errno;
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EEXIST;
	else if ((uint64_t)st.st_size != size && ftruncate(fd, (off_t)size))
		ret = -errno;
	close(fd);
	return ret;
}

static int mk_one(int dirfd, const char *name, uint64_t size, bool force)
{
	int fd, ret = 0;

	if (!size) {
		/* One syscall and no descriptor: the cheapest way to make
		 * an empty file. */
		if (!mknodat(dirfd, name, S_IFREG | 0644, 0))
			return 0;
		ret = -errno;
	} else {
		fd = openat(dirfd, name,
			    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (ftruncate(fd, (off_t)size))
				ret = -errno;
			close(fd);
			return ret;
		}
		ret = -errno;
	}
	if (ret == -EEXIST && force)
		ret = mk_reuse(dirfd, name, size);
	return ret;
}

static int mk_parse(int argc, char **argv, struct mk_opts *o, uint64_t *size,
		    bool *force)
{
	uint32_t none;
	static const struct option lopts[] = {
		BENCH_COMMON_LONGOPTS,
		{"disks", required_argument, NULL, BENCH_OPT_DISKS},
		{"parts", required_argument, NULL, BENCH_OPT_PARTS},
		{"scheme", required_argument, NULL, BENCH_OPT_SCHEME},
		{"prefix", required_argument, NULL, BENCH_OPT_PREFIX},
		{"size", required_argument, NULL, MK_OPT_SIZE},
		{"force", no_argument, NULL, MK_OPT_FORCE},
		{NULL, 0, NULL, 0},
	};
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		ret = bench_common_opt(&o->common, opt, optarg, "mktree");
		if (!ret)
			ret = bench_tree_opt("mktree", &o->tree, opt, optarg);
		if (ret < 0)
			return 1;
		if (ret)
			continue;
		switch (opt) {
		case 'h':
			mk_usage(stdout);
			return 0;
		case MK_OPT_SIZE:
			if (parse_size(optarg, INT64_MAX, size)) {
				bench_err(
					"mktree",
					"--size '%s': need bytes (K, M, G, T: powers of 1024), up to 2^63-1",
					optarg);
				return 1;
			}
			break;
		case MK_OPT_FORCE:
			*force = true;
			break;
		default:
			cli_suggest_option(stderr, argv[0], lopts,
					   argv[optind - 1]);
			mk_usage(stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		mk_usage(stderr);
		return 1;
	}
	o->dir = argv[optind];
	if (bench_only(&o->common, "mktree", NULL, 0, &none))
		return 1;
	if (!o->tree.have_disks) {
		bench_err("mktree", "--disks N is required");
		return 1;
	}
	if (bench_tree_check("mktree", &o->tree))
		return 1;
	return -1;
}

/*
 * A tmpfs file costs about 1 KiB of unswappable kernel memory (inode,
 * dentry, their slab overhead) before any data: a tree of millions of
 * files is gigabytes. Inodes are a hard limit (nr_inodes); memory only
 * warned about.
 */
#define MK_TMPFS_FILE_BYTES 1024ull

static int mk_check_room(int dirfd, const char *dir, uint64_t count, bool tmpfs)
{
	static const char *const mem_available = "MemAvailable";
	struct statvfs sv;
	uint64_t avail;

	if (fstatvfs(dirfd, &sv) == 0 && sv.f_files && sv.f_favail < count) {
		bench_err(
			"mktree",
			"%s: %llu free inodes, the tree needs %" PRIu64 "%s",
			dir, (unsigned long long)sv.f_favail, count,
			tmpfs ? " (tmpfs: mount with a larger nr_inodes=, or make fewer disks)"
			      : "");
		return -ENOSPC;
	}
	bench_meminfo(&mem_available, 1, &avail);
	avail *= 1024;
	if (tmpfs && avail && count * MK_TMPFS_FILE_BYTES > avail / 2)
		fprintf(stderr,
			"sdswarm-bench mktree: warning: %" PRIu64
			" tmpfs files cost about %" PRIu64
			" MiB of kernel memory; %" PRIu64
			" MiB are available\n",
			count, (uint64_t)(count * MK_TMPFS_FILE_BYTES >> 20),
			avail >> 20);
	return 0;
}

int bench_mktree(int argc, char **argv)
{
	struct mk_opts o = {
		.tree = {.prefix = "sd", .parts = BENCH_TREE_PARTS},
	};
	struct bench_tree nodes = {0};
	struct bench_report *rep = NULL;
	struct bench_result res;
	char name[SDNUM_NAME_MAX];
	uint64_t size = 0, i, t0, now, last = 0;
	json_t *extra = NULL;
	bool force = false, tmpfs;
	double ns;
	int dirfd, ret, status = 1;

	ret = mk_parse(argc, argv, &o, &size, &force);
	if (ret >= 0)
		return ret ? CLI_EXIT_USAGE : 0; /* 1: the command line */
	nodes.prefix = o.tree.prefix;
	nodes.ndisks = o.tree.ndisks;
	nodes.parts = o.tree.parts;
	nodes.count = o.tree.ndisks * (o.tree.parts + 1);

	if (mkdir(o.dir, 0755) && errno != EEXIST) {
		bench_err("mktree", "%s: %s", o.dir, strerror(errno));
		return 1;
	}
	dirfd = open(o.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		bench_err("mktree", "%s: %s", o.dir, strerror(errno));
		return 1;
	}
	tmpfs = bench_tree_tmpfs(dirfd);
	ret = mk_check_empty(dirfd);
	if (ret == -ENOTEMPTY && !force) {
		bench_err("mktree",
			  "%s is not empty: --force writes the tree into it",
			  o.dir);
		goto out;
	}
	if (ret && ret != -ENOTEMPTY) {
		bench_err("mktree", "%s: readdir: %s", o.dir, strerror(-ret));
		goto out;
	}
	if (mk_check_room(dirfd, o.dir, nodes.count, tmpfs))
		goto out;

	t0 = bench_now_ns();
	for (i = 0; i < nodes.count; i++) {
		bench_tree_name(&nodes, i, name, sizeof(name));
		ret = mk_one(dirfd, name, size, force);
		if (ret) {
			bench_err("mktree",
				  "%s/%s: %s (after %" PRIu64
				  " files; the files made are left in place)",
				  o.dir, name, strerror(-ret), i);
			goto out;
		}
		if ((i + 1) % MK_CLOCK_EVERY == 0) {
			now = bench_now_ns();
			bench_progress_bar("mktree", i + 1, nodes.count, t0,
					   now, &last);
		}
	}
	now = bench_now_ns();
	bench_progress_done();

	ns = (double)(now - t0) / (double)nodes.count;
	bench_result_set(&res, &ns, 1, nodes.count);
	ret = bench_report_create(&rep, "mktree");
	if (!ret)
		ret = bench_report_note(
			rep,
			"%s%s: %" PRIu64 " disks x %u files = %" PRIu64
			" files, %s, in %.3f s",
			o.dir, tmpfs ? " (tmpfs)" : "", o.tree.ndisks,
			o.tree.parts + 1, nodes.count,
			size ? "sparse" : "empty", (double)(now - t0) / 1e9);
	if (!ret)
		ret = bench_report_add(rep, "mktree",
				       size ? "openat(O_CREAT)+ftruncate+close"
					    : "mknodat(S_IFREG)",
				       nodes.count, &res, NAN);
	if (ret)
		goto out_report;
	if (!o.common.json) {
		ret = bench_report_print(rep, stdout, false);
		goto out_report;
	}
	extra = json_object();
	if (!extra || bench_jset(extra, "dir", json_string(o.dir)) ||
	    bench_jset(extra, "disks",
		       json_integer((json_int_t)o.tree.ndisks)) ||
	    bench_jset(extra, "parts", json_integer(o.tree.parts)) ||
	    bench_jset(extra, "size", json_integer((json_int_t)size)) ||
	    bench_jset(extra, "tmpfs", json_boolean(tmpfs)) ||
	    bench_jset(extra, "files", json_integer((json_int_t)nodes.count)) ||
	    bench_jset(extra, "seconds", json_real((double)(now - t0) / 1e9)) ||
	    bench_jset(extra, "files_per_s", bench_jnum(res.ops_per_s)))
		ret = -ENOMEM;
	else
		ret = bench_report_print_json(rep, stdout, extra);
out_report:
	if (ret)
		bench_err("mktree", "printing the report: %s", strerror(-ret));
	else
		status = 0;
	json_decref(extra);
	bench_report_destroy(rep);
out:
	close(dirfd);
	return status;
}
