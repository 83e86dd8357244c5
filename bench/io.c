// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench io: random 4 KiB reads and writes across every disk file of
 * a tree through io_uring, on registered files and registered buffers with
 * --depth in flight, against a synchronous pread/pwrite loop over the same
 * files and the same offsets in the same run. Bounded in time and in ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <jansson.h>
#include <liburing.h>

#include "array.h"
#include "bench.h"
#include "cli.h"
#include "parse.h"
#include "rng.h"
#include "sdnum.h"

#define IO_DEPTH 64u
#define IO_MAX_DEPTH 4096u
#define IO_BS 4096u
#define IO_MAX_BS (1u << 20)
/* O_DIRECT needs whole logical blocks; 512 is the smallest there is. */
#define IO_MIN_BS 512u
#define IO_ALIGN 4096u
#define IO_SECONDS 5.0
#define IO_QUICK_SECONDS 0.5
#define IO_MAX_SECONDS 86400.0
/*
 * Offsets spread over at most this many bytes in all, --working-set split
 * evenly over the files: writes to sparse tmpfs files allocate what they
 * touch, and 5 s of 4 KiB writes at a million IOPS would be 20 GiB.
 */
#define IO_WORKING_SET (1ull << 30)
/* The kernel's IORING_MAX_FIXED_FILES. */
#define IO_MAX_FIXED_FILES (1u << 20)
/* Descriptors kept free for stdio, the ring, the folder, gnuplot... */
#define IO_FD_RESERVE 64u
/* The synchronous baseline runs a fifth of the io_uring phase's time and
 * op budget: a rate, it needs no longer. */
#define IO_BASELINE_SHARE 5u
/* Latency samples kept per direction and phase (a uniform reservoir):
 * 512 Ki of them leave 500 above the p99.9; 4 MiB each. */
#define IO_LAT_SAMPLES (1u << 19)
#define IO_ERRNO_SLOTS 256u

enum io_rw { IO_READ, IO_WRITE, IO_MIX };

static const char *const io_rw_name[] = {"read", "write", "mix"};

struct io_file {
	int fd;
	uint32_t disk;
	uint64_t blocks;
};

/* A uniform sample of latencies (Vitter's algorithm R) and exact
 * count, sum and max. */
struct io_lat {
	double *v;
	size_t n;
	uint64_t seen;
	uint64_t max;
	double sum;
};

struct io_phase {
	uint64_t ns;
	uint64_t ops;
	uint64_t reads;
	uint64_t writes;
	uint64_t failed;
	uint64_t short_ops;
	uint64_t err[IO_ERRNO_SLOTS];
	int first_err;
	struct io_lat lat[2];
	struct rng rng_lat;
};

struct io_slot {
	uint64_t t_submit;
	bool write;
};

struct io_opts {
	struct bench_opts common;
	const char *dir;
	struct bench_tree_opts tree;
	enum io_rw rw;
	double seconds;
	bool have_seconds;
	uint64_t max_ops;
	unsigned int depth;
	unsigned int bs;
	uint64_t working_set;
	bool direct;
	bool baseline;
};

struct io_ctx {
	struct io_opts o;
	int dirfd;
	bool tmpfs;
	uint64_t disks_total;
	struct io_file *files;
	uint32_t nfiles;
	uint64_t span;
	/* RLIMIT_NOFILE soft limit before and after raising it. */
	uint64_t nofile_was;
	uint64_t nofile;
	struct io_uring ring;
	bool ring_ok;
	unsigned int setup_flags;
	bool fixed_bufs;
	int bufs_err;
	/* The files lack FMODE_NOWAIT: every SQE goes to io-wq at once. */
	bool async;
	uint8_t *bufs;
	struct io_slot *slots;
	unsigned int *free;
	unsigned int nfree;
	unsigned int *batch;
	/* Room for a whole CQ ring: one peek takes every ready CQE. */
	struct io_uring_cqe **cqes;
	unsigned int ncqes;
	struct io_phase sync;
	struct io_phase uring;
};

/* ---- helpers -------------------------------------------------------- */

/* Two RNG streams (common/rng.h): the I/O pattern (same seed in both
 * phases) and the reservoir's choices (a stream of its own, so sampling
 * does not change the pattern). */
#define IO_SEED_PATTERN 0x5d5a5e11ull
#define IO_SEED_LAT 0x9e3779b97f4a7c15ull

static void io_lat_add(struct io_lat *l, uint64_t ns, struct rng *rng)
{
	uint64_t j;

	l->seen++;
	l->sum += (double)ns;
	if (ns > l->max)
		l->max = ns;
	if (l->n < IO_LAT_SAMPLES) {
		l->v[l->n++] = (double)ns;
		return;
	}
	j = rng_below(rng, l->seen);
	if (j < IO_LAT_SAMPLES)
		l->v[j] = (double)ns;
}

static int io_phase_init(struct io_phase *p)
{
	memset(p, 0, sizeof(*p));
	p->rng_lat = rng_init(IO_SEED_LAT);
	p->lat[0].v = malloc(IO_LAT_SAMPLES * sizeof(double));
	p->lat[1].v = malloc(IO_LAT_SAMPLES * sizeof(double));
	return p->lat[0].v && p->lat[1].v ? 0 : -ENOMEM;
}

static void io_phase_free(struct io_phase *p)
{
	free(p->lat[0].v);
	free(p->lat[1].v);
	p->lat[0].v = p->lat[1].v = NULL;
}

/* One completed operation: @res as the kernel returned it. */
static void io_done(struct io_phase *p, bool write, ssize_t res,
		    unsigned int bs, uint64_t lat_ns)
{
	unsigned int slot;

	p->ops++;
	if (write)
		p->writes++;
	else
		p->reads++;
	io_lat_add(&p->lat[write], lat_ns, &p->rng_lat);
	if (res == (ssize_t)bs)
		return;
	if (res >= 0) {
		p->short_ops++;
		return;
	}
	slot = -res < IO_ERRNO_SLOTS - 1 ? (unsigned int)-res
					 : IO_ERRNO_SLOTS - 1;
	p->err[slot]++;
	if (!p->failed++)
		p->first_err = (int)-res;
}

/* The next operation of the pattern: a file, a block in its span, and
 * for --rw mix a coin. */
static inline void io_pick(struct io_ctx *c, struct rng *rng, uint32_t *file,
			   uint64_t *off, bool *write)
{
	*file = (uint32_t)rng_below(rng, c->nfiles);
	*off = rng_below(rng, c->files[*file].blocks) * c->o.bs;
	*write = c->o.rw == IO_WRITE ||
		 (c->o.rw == IO_MIX && (rng_next(rng) & 1));
}

/* ---- the disks ------------------------------------------------------ */

/*
 * As many files as io_uring can register: the registered table is bounded
 * by RLIMIT_NOFILE (checked when registering) and IORING_MAX_FIXED_FILES,
 * and the plain descriptors, kept for the baseline, by RLIMIT_NOFILE too.
 * The soft limit is raised to the hard one first.
 */
static uint32_t io_file_budget(struct io_ctx *c)
{
	struct rlimit rl;
	uint64_t cap;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024 - IO_FD_RESERVE;
	c->nofile_was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	c->nofile = rl.rlim_cur;
	cap = rl.rlim_cur > IO_FD_RESERVE * 2 ? rl.rlim_cur - IO_FD_RESERVE
					      : rl.rlim_cur / 2;
	if (cap > IO_MAX_FIXED_FILES)
		cap = IO_MAX_FIXED_FILES;
	return (uint32_t)cap;
}

static int io_disk_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*size = (uint64_t)st.st_size;
	return 0;
}

/*
 * Open the disks: all of them, or (past the descriptor budget) an evenly
 * spaced subset, so every name length is still among them. Each file's
 * offsets span min(its size, --working-set / files) bytes.
 */
static int io_open_files(struct io_ctx *c)
{
	struct bench_tree tree = {.prefix = c->o.tree.prefix};
	uint32_t budget, k;
	uint64_t size, count = 0, blocks;
	char name[SDNUM_NAME_MAX];
	int flags, ret;

	if (c->o.tree.have_disks) {
		count = c->o.tree.ndisks;
	} else {
		ret = bench_tree_readdir(&tree, c->dirfd, true);
		count = tree.count;
		if (ret) {
			bench_err("io", "%s: readdir: %s", c->o.dir,
				  strerror(-ret));
			return ret;
		}
		if (!count) {
			bench_err("io", "%s: no %s disk files in it", c->o.dir,
				  c->o.tree.prefix);
			free(tree.keys);
			return -ENOENT;
		}
	}
	c->disks_total = count;
	budget = io_file_budget(c);
	c->nfiles = count < budget ? (uint32_t)count : budget;
	c->files = calloc(c->nfiles, sizeof(*c->files));
	if (!c->files) {
		free(tree.keys);
		return -ENOMEM;
	}
	for (k = 0; k < c->nfiles; k++)
		c->files[k].fd = -1;
	c->span = c->o.working_set / c->nfiles / c->o.bs * c->o.bs;
	if (c->span < c->o.bs)
		c->span = c->o.bs;
	flags = (c->o.rw == IO_READ ? O_RDONLY : O_RDWR) | O_CLOEXEC |
		(c->o.direct ? O_DIRECT : 0);
	for (k = 0; k < c->nfiles; k++) {
		uint64_t pos = (uint64_t)k * count / c->nfiles;

		c->files[k].disk = tree.keys ? (uint32_t)(tree.keys[pos] >> 8)
					     : (uint32_t)pos;
		sdnum_name(c->o.tree.prefix, c->files[k].disk, name,
			   sizeof(name));
		c->files[k].fd = openat(c->dirfd, name, flags);
		if (c->files[k].fd < 0) {
			ret = -errno;
			bench_err("io", "%s/%s: %s", c->o.dir, name,
				  strerror(-ret));
			goto out_free;
		}
		ret = io_disk_size(c->files[k].fd, &size);
		if (ret) {
			bench_err("io", "%s/%s: size: %s", c->o.dir, name,
				  strerror(-ret));
			goto out_free;
		}
		blocks = (size < c->span ? size : c->span) / c->o.bs;
		if (!blocks) {
			bench_err(
				"io",
				"%s/%s is %" PRIu64
				" bytes, less than one %u-byte block (make the tree with mktree --size)",
				c->o.dir, name, size, c->o.bs);
			ret = -EINVAL;
			goto out_free;
		}
		c->files[k].blocks = blocks;
	}
	ret = 0;
out_free:
	free(tree.keys);
	return ret;
}

static void io_close_files(struct io_ctx *c)
{
	uint32_t k;

	if (!c->files)
		return;
	for (k = 0; k < c->nfiles; k++)
		if (c->files[k].fd >= 0)
			close(c->files[k].fd);
	free(c->files);
	c->files = NULL;
}

/* ---- io_uring ------------------------------------------------------- */

/* The cheapest completion mode the kernel has: one task submits and reaps,
 * so SINGLE_ISSUER|DEFER_TASKRUN (6.1), else COOP_TASKRUN (5.19), else
 * none. */
static int io_ring_init(struct io_ctx *c)
{
	static const unsigned int tries[] = {
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
			IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	unsigned int i;
	int ret = -EINVAL;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = tries[i];
		ret = io_uring_queue_init_params(c->o.depth, &c->ring, &p);
		if (!ret) {
			c->setup_flags = tries[i];
			c->ring_ok = true;
			/* Saves an fget/fput per io_uring_enter (5.18). */
			io_uring_register_ring_fd(&c->ring);
			return 0;
		}
		if (ret != -EINVAL)
			break;
	}
	return ret;
}

/*
 * Whether io_uring can do the I/O inline. On files without FMODE_NOWAIT
 * (tmpfs on Linux 6.18 is one) it tries each operation, gets
 * -EAGAIN and hands it to an io-wq worker; preadv2(RWF_NOWAIT) fails with
 * EOPNOTSUPP on exactly those. 1 inline-capable, 0 not, -errno unknown.
 */
static int io_probe_nowait(struct io_ctx *c)
{
	struct iovec iov = {.iov_base = c->bufs, .iov_len = c->o.bs};

	if (preadv2(c->files[0].fd, &iov, 1, 0, RWF_NOWAIT) >= 0 ||
	    errno == EAGAIN)
		return 1;
	return errno == EOPNOTSUPP ? 0 : -errno;
}

static int io_ring_setup(struct io_ctx *c)
{
	struct iovec *iov;
	int *fds, ret;
	unsigned int i;

	ret = io_ring_init(c);
	if (ret) {
		bench_err("io", "io_uring: %s", strerror(-ret));
		return ret;
	}
	c->ncqes = c->ring.cq.ring_entries;
	c->cqes = calloc(c->ncqes, sizeof(*c->cqes));
	if (!c->cqes)
		return -ENOMEM;
	fds = malloc(c->nfiles * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < c->nfiles; i++)
		fds[i] = c->files[i].fd;
	ret = io_uring_register_files(&c->ring, fds, c->nfiles);
	free(fds);
	if (ret) {
		bench_err("io",
			  "io_uring_register_files(%" PRIu32 " files): %s",
			  c->nfiles, strerror(-ret));
		return ret;
	}
	iov = calloc(c->o.depth, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (i = 0; i < c->o.depth; i++) {
		iov[i].iov_base = c->bufs + (size_t)i * c->o.bs;
		iov[i].iov_len = c->o.bs;
	}
	/* They count against RLIMIT_MEMLOCK; a refusal costs a page-table
	 * walk per operation and is noted, not fatal. */
	c->bufs_err = io_uring_register_buffers(&c->ring, iov, c->o.depth);
	c->fixed_bufs = c->bufs_err == 0;
	free(iov);
	c->async = io_probe_nowait(c) == 0;
	return 0;
}

static void io_prep(struct io_ctx *c, unsigned int slot, uint32_t file,
		    uint64_t off, bool write)
{
	/* At most --depth SQEs are outstanding: never NULL. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);
	void *buf = c->bufs + (size_t)slot * c->o.bs;

	if (write && c->fixed_bufs)
		io_uring_prep_write_fixed(sqe, (int)file, buf, c->o.bs, off,
					  (int)slot);
	else if (write)
		io_uring_prep_write(sqe, (int)file, buf, c->o.bs, off);
	else if (c->fixed_bufs)
		io_uring_prep_read_fixed(sqe, (int)file, buf, c->o.bs, off,
					 (int)slot);
	else
		io_uring_prep_read(sqe, (int)file, buf, c->o.bs, off);
	sqe->flags |= IOSQE_FIXED_FILE | (c->async ? IOSQE_ASYNC : 0);
	io_uring_sqe_set_data64(sqe, slot);
	c->slots[slot].write = write;
}

/*
 * The io_uring phase: keep --depth operations in flight, each batch
 * submitted and at least one completion waited for in one io_uring_enter,
 * until the time or op budget is spent; then drain.
 */
static int io_uring_phase(struct io_ctx *c, double seconds, uint64_t max_ops)
{
	struct io_phase *p = &c->uring;
	struct rng rng = rng_init(IO_SEED_PATTERN);
	uint64_t budget = (uint64_t)(seconds * 1e9);
	uint64_t t0, now, issued = 0, off, last = 0;
	unsigned int inflight = 0, nb, i, n, slot;
	struct io_uring_cqe *cqe;
	bool write, stop = false;
	uint32_t file;
	int ret;

	for (i = 0; i < c->o.depth; i++)
		c->free[i] = c->o.depth - 1 - i;
	c->nfree = c->o.depth;
	t0 = bench_now_ns();
	now = t0;
	while (!stop || inflight) {
		nb = 0;
		while (!stop && c->nfree && (!max_ops || issued < max_ops)) {
			slot = c->free[--c->nfree];
			io_pick(c, &rng, &file, &off, &write);
			io_prep(c, slot, file, off, write);
			c->batch[nb++] = slot;
			issued++;
		}
		inflight += nb;
		now = bench_now_ns();
		for (i = 0; i < nb; i++)
			c->slots[c->batch[i]].t_submit = now;
		ret = io_uring_submit_and_wait(&c->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			return ret;
		now = bench_now_ns();
		n = io_uring_peek_batch_cqe(&c->ring, c->cqes, c->ncqes);
		for (i = 0; i < n; i++) {
			cqe = c->cqes[i];
			slot = (unsigned int)cqe->user_data;
			io_done(p, c->slots[slot].write, cqe->res, c->o.bs,
				now - c->slots[slot].t_submit);
			c->free[c->nfree++] = slot;
		}
		io_uring_cq_advance(&c->ring, n);
		inflight -= n;
		if (now - t0 >= budget || (max_ops && issued >= max_ops))
			stop = true;
		if (now - t0 >= 2000000000ull && now - last >= 200000000ull) {
			last = now;
			bench_progress(
				"io io_uring: %.1f of %.1f s, %" PRIu64 " ops",
				(double)(now - t0) / 1e9, seconds, p->ops);
		}
	}
	p->ns = now - t0;
	return 0;
}

/* The baseline: the same pattern one operation at a time, pread/pwrite
 * on the plain descriptors. Latency is clock to clock, one read a op. */
static void io_sync_phase(struct io_ctx *c, double seconds, uint64_t max_ops)
{
	struct io_phase *p = &c->sync;
	struct rng rng = rng_init(IO_SEED_PATTERN);
	uint64_t budget = (uint64_t)(seconds * 1e9);
	uint64_t t0, prev, now, off;
	uint8_t *buf = c->bufs;
	uint32_t file;
	ssize_t res;
	bool write;

	t0 = bench_now_ns();
	prev = t0;
	do {
		io_pick(c, &rng, &file, &off, &write);
		if (write)
			res = pwrite(c->files[file].fd, buf, c->o.bs,
				     (off_t)off);
		else
			res = pread(c->files[file].fd, buf, c->o.bs,
				    (off_t)off);
		if (res < 0)
			res = -errno;
		now = bench_now_ns();
		io_done(p, write, res, c->o.bs, now - prev);
		prev = now;
	} while (now - t0 < budget && (!max_ops || p->ops < max_ops));
	p->ns = now - t0;
}

/* ---- the report ----------------------------------------------------- */

static double io_pct(struct io_lat *l, double p)
{
	return bench_percentile(l->v, l->n, p);
}

/* Whole nanoseconds: a JSON real keeps 6 significant digits, which could
 * print a percentile as more than the max. */
static json_t *io_jns(double ns)
{
	return isfinite(ns) ? json_integer((json_int_t)llround(ns))
			    : json_null();
}

static json_t *io_json_lat(struct io_lat *l)
{
	json_t *o;

	if (!l->seen)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	if (bench_jset(o, "p50", io_jns(io_pct(l, 50))) ||
	    bench_jset(o, "p99", io_jns(io_pct(l, 99))) ||
	    bench_jset(o, "p99.9", io_jns(io_pct(l, 99.9))) ||
	    bench_jset(o, "max", json_integer((json_int_t)l->max)) ||
	    bench_jset(o, "mean", io_jns(l->sum / (double)l->seen))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *io_json_phase_lat(struct io_phase *p)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (bench_jset(o, "read", io_json_lat(&p->lat[0])) ||
	    bench_jset(o, "write", io_json_lat(&p->lat[1]))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *io_json_errors(const struct io_phase *p)
{
	json_t *o = json_object();
	const char *s;
	char nb[16];
	unsigned int e;

	if (!o)
		return NULL;
	for (e = 0; e < IO_ERRNO_SLOTS; e++) {
		if (!p->err[e])
			continue;
		s = strerrorname_np((int)e);
		if (!s) {
			snprintf(nb, sizeof(nb), "E%u", e);
			s = nb;
		}
		if (bench_jset(o, s, json_integer((json_int_t)p->err[e]))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static double io_rate(const struct io_phase *p)
{
	return p->ns ? (double)p->ops * 1e9 / (double)p->ns : NAN;
}

static int io_build_json(struct io_ctx *c, json_t **out)
{
	double rate = io_rate(&c->uring), base = NAN;
	json_t *x = json_object();

	if (c->o.baseline)
		base = io_rate(&c->sync);
	if (!x)
		return -ENOMEM;
	if (bench_jset(x, "dir", json_string(c->o.dir)) ||
	    bench_jset(x, "disks", json_integer((json_int_t)c->disks_total)) ||
	    bench_jset(x, "disks_used", json_integer(c->nfiles)) ||
	    bench_jset(x, "rw", json_string(io_rw_name[c->o.rw])) ||
	    bench_jset(x, "bs", json_integer(c->o.bs)) ||
	    bench_jset(x, "depth", json_integer(c->o.depth)) ||
	    bench_jset(x, "direct", json_boolean(c->o.direct)) ||
	    bench_jset(x, "working_set",
		       json_integer((json_int_t)(c->span * c->nfiles))) ||
	    bench_jset(x, "ops", json_integer((json_int_t)c->uring.ops)) ||
	    bench_jset(x, "reads", json_integer((json_int_t)c->uring.reads)) ||
	    bench_jset(x, "writes",
		       json_integer((json_int_t)c->uring.writes)) ||
	    bench_jset(x, "errors",
		       json_integer((json_int_t)(c->uring.failed +
						 c->uring.short_ops))) ||
	    bench_jset(x, "short",
		       json_integer((json_int_t)c->uring.short_ops)) ||
	    bench_jset(x, "errors_by_errno", io_json_errors(&c->uring)) ||
	    bench_jset(x, "seconds", json_real((double)c->uring.ns / 1e9)) ||
	    bench_jset(x, "iops", bench_jnum(rate)) ||
	    bench_jset(x, "latency_ns", io_json_phase_lat(&c->uring)) ||
	    bench_jset(x, "baseline_ops",
		       c->o.baseline ? json_integer((json_int_t)c->sync.ops)
				     : json_null()) ||
	    bench_jset(x, "baseline_errors",
		       c->o.baseline
			       ? json_integer((json_int_t)(c->sync.failed +
							   c->sync.short_ops))
			       : json_null()) ||
	    bench_jset(x, "baseline_seconds",
		       c->o.baseline ? json_real((double)c->sync.ns / 1e9)
				     : json_null()) ||
	    bench_jset(x, "baseline_iops", bench_jnum(base)) ||
	    bench_jset(x, "baseline_latency_ns",
		       c->o.baseline ? io_json_phase_lat(&c->sync)
				     : json_null()) ||
	    bench_jset(x, "ratio", bench_jnum(rate / base))) {
		json_decref(x);
		return -ENOMEM;
	}
	*out = x;
	return 0;
}

static int io_lat_rows(struct bench_table *t, const char *what,
		       struct io_phase *p)
{
	static const char *const dir[] = {"read", "write"};
	unsigned int d;
	int ret = 0;

	for (d = 0; d < 2 && !ret; d++) {
		struct io_lat *l = &p->lat[d];

		if (!l->seen)
			continue;
		ret = bench_table_add(t, "%s %s", what, dir[d]) ?:
		      bench_table_add(t, "%" PRIu64, l->seen) ?:
		      bench_table_add(t, "%.1f", io_pct(l, 50) / 1e3) ?:
		      bench_table_add(t, "%.1f", io_pct(l, 99) / 1e3) ?:
		      bench_table_add(t, "%.1f", io_pct(l, 99.9) / 1e3) ?:
		      bench_table_add(t, "%.1f", (double)l->max / 1e3);
	}
	return ret;
}

static int io_print_text(struct io_ctx *c, struct bench_report *rep)
{
	struct bench_table *t;
	int ret;

	ret = bench_report_print(rep, stdout, false);
	if (ret)
		return ret;
	ret = bench_table_create(&t, 6, "lrrrrr");
	if (ret)
		return ret;
	ret = bench_table_add(t, "latency, us") ?: bench_table_add(t, "ops") ?:
	      bench_table_add(t, "p50") ?: bench_table_add(t, "p99") ?:
	      bench_table_add(t, "p99.9") ?: bench_table_add(t, "max");
	if (!ret && c->o.baseline)
		ret = io_lat_rows(t, "sync", &c->sync);
	if (!ret)
		ret = io_lat_rows(t, "io_uring", &c->uring);
	if (!ret) {
		fputc('\n', stdout);
		ret = bench_table_print(t, stdout);
	}
	bench_table_destroy(t);
	return ret;
}

static void io_flags_str(unsigned int flags, char *buf, size_t len)
{
	if (flags & IORING_SETUP_DEFER_TASKRUN)
		snprintf(buf, len, "SUBMIT_ALL|SINGLE_ISSUER|DEFER_TASKRUN");
	else if (flags & IORING_SETUP_COOP_TASKRUN)
		snprintf(buf, len, "SUBMIT_ALL|COOP_TASKRUN");
	else
		snprintf(buf, len, "none");
}

static int io_report(struct io_ctx *c)
{
	struct bench_report *rep;
	struct bench_result sres, ures;
	char name[96], flags[64];
	const char *op = c->o.rw == IO_READ    ? "READ"
			 : c->o.rw == IO_WRITE ? "WRITE"
					       : "READ/WRITE";
	double ns, ratio = NAN;
	json_t *extra;
	int ret;

	ret = bench_report_create(&rep, "io");
	if (ret)
		return ret;
	ret = bench_report_note(
		rep,
		"%s%s: %" PRIu32 " of %" PRIu64
		" disk files, %u-byte random %s%s, offsets over the first %" PRIu64
		" KiB of each (%" PRIu64 " MiB in all)",
		c->o.dir, c->tmpfs ? " (tmpfs)" : "", c->nfiles, c->disks_total,
		c->o.bs, io_rw_name[c->o.rw], c->o.direct ? ", O_DIRECT" : "",
		c->span >> 10, (c->span * c->nfiles) >> 20);
	if (!ret && c->nfiles < c->disks_total && c->nofile_was < c->nofile)
		ret = bench_report_note(
			rep,
			"RLIMIT_NOFILE: soft limit %" PRIu64
			" raised to the hard limit %" PRIu64 "; %" PRIu64
			" disks need more, so %" PRIu32
			" evenly spaced ones are used",
			c->nofile_was, c->nofile, c->disks_total, c->nfiles);
	else if (!ret && c->nfiles < c->disks_total)
		ret = bench_report_note(rep,
					"RLIMIT_NOFILE: %" PRIu64
					", already the hard limit; %" PRIu64
					" disks need more, so %" PRIu32
					" evenly spaced ones are used",
					c->nofile, c->disks_total, c->nfiles);
	io_flags_str(c->setup_flags, flags, sizeof(flags));
	if (!ret)
		ret = bench_report_note(
			rep,
			"io_uring: %" PRIu32
			" registered files, %s, depth %u, one io_uring_enter per batch; ring %s",
			c->nfiles,
			c->fixed_bufs
				? "registered buffers"
				: "plain buffers (registering them was refused)",
			c->o.depth, flags);
	if (!ret && c->async)
		ret = bench_report_note(
			rep,
			"the files lack FMODE_NOWAIT (preadv2 RWF_NOWAIT: EOPNOTSUPP): io_uring cannot do the I/O inline, so each operation is sent to an io-wq worker at once (IOSQE_ASYNC)");
	if (!ret && c->o.baseline)
		ret = bench_report_note(
			rep,
			"baseline: pread/pwrite of the same offsets, one at a time, for a fifth of the io_uring phase's budget");
	if (!ret && c->o.baseline) {
		ns = (double)c->sync.ns / (double)c->sync.ops;
		bench_result_set(&sres, &ns, 1, c->sync.ops);
		ret = bench_report_add(
			rep, "io",
			c->o.rw == IO_READ    ? "sync pread, depth 1"
			: c->o.rw == IO_WRITE ? "sync pwrite, depth 1"
					      : "sync pread/pwrite, depth 1",
			c->nfiles, &sres, NAN);
	}
	if (!ret) {
		ns = (double)c->uring.ns / (double)c->uring.ops;
		bench_result_set(&ures, &ns, 1, c->uring.ops);
		snprintf(name, sizeof(name), "io_uring %s%s, depth %u", op,
			 c->fixed_bufs ? "_FIXED" : "", c->o.depth);
		ret = bench_report_add(rep, "io", name, c->nfiles, &ures,
				       c->o.baseline ? sres.ns_per_op : NAN);
		if (c->o.baseline)
			ratio = sres.ns_per_op / ures.ns_per_op;
	}
	if (!ret)
		ret = bench_report_target(rep, "io_uring / sync IOPS", ratio,
					  BENCH_AT_LEAST, 1.5);
	if (ret)
		goto out;
	if (c->o.common.json) {
		ret = io_build_json(c, &extra);
		if (!ret) {
			ret = bench_report_print_json(rep, stdout, extra);
			json_decref(extra);
		}
	} else {
		ret = io_print_text(c, rep);
	}
out:
	bench_report_destroy(rep);
	return ret;
}

/* ---- options -------------------------------------------------------- */

static void io_usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench io DIR [--disks N] [--scheme S] [--prefix sd]\n"
		"                   [--rw read|write|mix] [--seconds S] [--ops N]\n"
		"                   [--depth D] [--bs BYTES] [--working-set BYTES]\n"
		"                   [--direct] [--no-baseline] [--json] [--quick]\n\n"
		"Random reads and/or writes of --bs bytes across every disk file of DIR\n"
		"(DIR/sda, DIR/sdb, ...) through io_uring, on registered files and\n"
		"registered buffers, --depth in flight; then the same offsets through\n"
		"pread/pwrite one at a time, the baseline. Prints IOPS, their ratio and\n"
		"latency percentiles. Stops by itself.\n\n"
		"  DIR                 without --disks: its whole-disk entries (readdir)\n"
		"  --disks N           instead, exactly disks 0..N-1 (sda .. )\n"
		"  --scheme S          check N fits the dev_t scheme (default: any)\n"
		"  --prefix P          driver prefix of the names (default sd)\n"
		"  --rw MODE           read (default), write, or mix (half each)\n"
		"  --seconds S         the io_uring phase's length (default 5; --quick 0.5);\n"
		"                      the baseline runs a fifth of it\n"
		"  --ops N             stop the io_uring phase after N operations\n"
		"                      (the baseline after N/5)\n"
		"  --depth D           operations in flight, 1..4096 (default 64)\n"
		"  --bs BYTES          bytes per operation, a multiple of 512 (default 4K)\n"
		"  --working-set BYTES offsets over this many bytes in all, split evenly\n"
		"                      over the files (default 1 GiB): writes to sparse\n"
		"                      tmpfs files allocate what they touch\n"
		"  --direct            O_DIRECT\n"
		"  --no-baseline       only io_uring\n"
		"  --json              one JSON object instead of the tables\n"
		"More disks than RLIMIT_NOFILE allows: the soft limit is raised to the\n"
		"hard one and an evenly spaced subset is used (the notes say so).\n"
		"Exit status 0; 1 on any failed or short operation, or a usage or\n"
		"setup error.\n");
}

enum {
	IO_OPT_RW = 0x200,
	IO_OPT_SECONDS,
	IO_OPT_OPS,
	IO_OPT_DEPTH,
	IO_OPT_BS,
	IO_OPT_WS,
	IO_OPT_DIRECT,
	IO_OPT_NO_BASELINE,
};

static int io_parse(int argc, char **argv, struct io_opts *o)
{
	uint32_t none;
	static const struct option lopts[] = {
		BENCH_COMMON_LONGOPTS,
		{"disks", required_argument, NULL, BENCH_OPT_DISKS},
		{"scheme", required_argument, NULL, BENCH_OPT_SCHEME},
		{"prefix", required_argument, NULL, BENCH_OPT_PREFIX},
		{"rw", required_argument, NULL, IO_OPT_RW},
		{"seconds", required_argument, NULL, IO_OPT_SECONDS},
		{"ops", required_argument, NULL, IO_OPT_OPS},
		{"depth", required_argument, NULL, IO_OPT_DEPTH},
		{"bs", required_argument, NULL, IO_OPT_BS},
		{"working-set", required_argument, NULL, IO_OPT_WS},
		{"direct", no_argument, NULL, IO_OPT_DIRECT},
		{"no-baseline", no_argument, NULL, IO_OPT_NO_BASELINE},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		ret = bench_common_opt(&o->common, opt, optarg, "io");
		if (!ret)
			ret = bench_tree_opt("io", &o->tree, opt, optarg);
		if (ret < 0)
			return 1;
		if (ret)
			continue;
		switch (opt) {
		case 'h':
			io_usage(stdout);
			return 0;
		case IO_OPT_RW:
			if (strcmp(optarg, "read") == 0) {
				o->rw = IO_READ;
			} else if (strcmp(optarg, "write") == 0) {
				o->rw = IO_WRITE;
			} else if (strcmp(optarg, "mix") == 0) {
				o->rw = IO_MIX;
			} else {
				bench_err("io", "--rw '%s': read, write or mix",
					  optarg);
				return 1;
			}
			break;
		case IO_OPT_SECONDS:
			if (bench_parse_double(optarg, 0.01, IO_MAX_SECONDS,
					       &o->seconds)) {
				bench_err("io",
					  "--seconds '%s': need 0.01..%.0f",
					  optarg, IO_MAX_SECONDS);
				return 1;
			}
			o->have_seconds = true;
			break;
		case IO_OPT_OPS:
			if (bench_parse_u64(optarg, 1, UINT64_MAX,
					    &o->max_ops)) {
				bench_err("io", "--ops '%s': need a count >= 1",
					  optarg);
				return 1;
			}
			break;
		case IO_OPT_DEPTH:
			if (bench_parse_u64(optarg, 1, IO_MAX_DEPTH, &v)) {
				bench_err("io", "--depth '%s': need 1..%u",
					  optarg, IO_MAX_DEPTH);
				return 1;
			}
			o->depth = (unsigned int)v;
			break;
		case IO_OPT_BS:
			if (parse_size(optarg, IO_MAX_BS, &v) ||
			    v < IO_MIN_BS || v % IO_MIN_BS) {
				bench_err(
					"io",
					"--bs '%s': need a multiple of %u up to %u",
					optarg, IO_MIN_BS, IO_MAX_BS);
				return 1;
			}
			o->bs = (unsigned int)v;
			break;
		case IO_OPT_WS:
			if (parse_size(optarg, 1ull << 50, &o->working_set) ||
			    !o->working_set) {
				bench_err(
					"io",
					"--working-set '%s': need bytes (K, M, G, T: powers of 1024), up to 2^50",
					optarg);
				return 1;
			}
			break;
		case IO_OPT_DIRECT:
			o->direct = true;
			break;
		case IO_OPT_NO_BASELINE:
			o->baseline = false;
			break;
		default:
			cli_suggest_option(stderr, argv[0], lopts,
					   argv[optind - 1]);
			io_usage(stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		io_usage(stderr);
		return 1;
	}
	if (bench_only(&o->common, "io", NULL, 0, &none))
		return 1;
	o->dir = argv[optind];
	if (bench_tree_check("io", &o->tree))
		return 1;
	if (!o->have_seconds && o->common.quick)
		o->seconds = IO_QUICK_SECONDS;
	return -1;
}

int bench_io(int argc, char **argv)
{
	struct io_ctx *c;
	double bsecs;
	uint64_t bops;
	unsigned int i;
	int ret, status = 1;

	c = calloc(1, sizeof(*c));
	if (!c) {
		bench_err("io", "out of memory");
		return 1;
	}
	c->o = (struct io_opts){
		.tree = {.prefix = "sd"},
		.rw = IO_READ,
		.seconds = IO_SECONDS,
		.depth = IO_DEPTH,
		.bs = IO_BS,
		.working_set = IO_WORKING_SET,
		.baseline = true,
	};
	c->dirfd = -1;
	ret = io_parse(argc, argv, &c->o);
	if (ret >= 0) {
		free(c);
		return ret ? CLI_EXIT_USAGE : 0; /* 1: the command line */
	}
	c->dirfd = open(c->o.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		bench_err("io", "%s: %s", c->o.dir, strerror(errno));
		goto out;
	}
	c->tmpfs = bench_tree_tmpfs(c->dirfd);
	if (io_open_files(c))
		goto out;
	c->bufs = aligned_alloc(IO_ALIGN, (size_t)c->o.depth * c->o.bs);
	c->slots = calloc(c->o.depth, sizeof(*c->slots));
	c->free = calloc(c->o.depth, sizeof(*c->free));
	c->batch = calloc(c->o.depth, sizeof(*c->batch));
	if (!c->bufs || !c->slots || !c->free || !c->batch ||
	    io_phase_init(&c->sync) || io_phase_init(&c->uring)) {
		bench_err("io", "out of memory");
		goto out;
	}
	/* A pattern in what is written, and every page touched before the
	 * clock starts. */
	for (i = 0; i < c->o.depth * c->o.bs; i++)
		c->bufs[i] = (uint8_t)(i * 131 + 7);
	if (io_ring_setup(c))
		goto out;

	if (c->o.baseline) {
		bsecs = c->o.seconds / IO_BASELINE_SHARE;
		bops = c->o.max_ops ? c->o.max_ops / IO_BASELINE_SHARE : 0;
		io_sync_phase(c, bsecs, c->o.max_ops && !bops ? 1 : bops);
	}
	ret = io_uring_phase(c, c->o.seconds, c->o.max_ops);
	bench_progress_done();
	if (ret) {
		bench_err("io", "io_uring: %s", strerror(-ret));
		goto out;
	}
	ret = io_report(c);
	if (ret) {
		bench_err("io", "printing the report: %s", strerror(-ret));
		goto out;
	}
	status = 0;
	if (c->uring.failed || c->sync.failed) {
		bench_err("io",
			  "%" PRIu64 " operations failed, the first with %s",
			  c->uring.failed + c->sync.failed,
			  strerror(c->uring.failed ? c->uring.first_err
						   : c->sync.first_err));
		status = 1;
	}
	if (c->uring.short_ops || c->sync.short_ops) {
		bench_err("io", "%" PRIu64 " short transfers",
			  c->uring.short_ops + c->sync.short_ops);
		status = 1;
	}
out:
	if (c->ring_ok)
		io_uring_queue_exit(&c->ring);
	io_phase_free(&c->sync);
	io_phase_free(&c->uring);
	io_close_files(c);
	free(c->bufs);
	free(c->slots);
	free(c->free);
	free(c->batch);
	free(c->cqes);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
	return status;
}
