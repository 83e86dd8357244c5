// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench numbering: libsdnum's costs, each fast path against the 2.6
 * baseline it replaces, measured in the same run: names and parsing, every
 * dev_t scheme, the id allocators, the dev_t registry and per-disk objects.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bench.h"
#include "rng.h"
#include "cli.h"
#include "sdnum.h"

#define CMD "numbering"

/* Name sweep: indices 0..2^20-1 give every name length up to 5 letters. */
#define NB_SWEEP (1u << 20)
#define NB_QUICK_SWEEP (1u << 16)
/* "sd" + 5 letters + NUL: one slot per pre-generated name. */
#define NB_NAME_SLOT 8u

/* Pseudo-random inputs per case, precomputed; a power of two (a mask picks
 * the next one). 64 Ki inputs: 256 KiB to 768 KiB of arrays. */
#define NB_SAMPLES (1u << 16)
#define NB_QUICK_SAMPLES (1u << 12)

/* Each registered disk: a 16-minor range, a whole disk and 15 partitions. */
#define NB_DISK_MINORS 16u
/* The chain walks a chain per lookup (tens of microseconds at 262,144
 * disks): cap the lookups per batch so its rows stay a fraction of a second. */
#define NB_CHAIN_MAX_OPS (1u << 14)
/* Samples checked untimed against a chain: its batches use the first ones. */
#define NB_CHAIN_CHECK 1024u
/*
 * The chain's add walks its whole chain (the overlap check): a build costs
 * n^2 / 32 steps, 10 s at 262,144 disks on a 2-core EPYC VM. The next
 * size's build is predicted from the last one built, quadratically and times
 * NB_CHAIN_CACHE_FACTOR (chains that outgrow the caches walk about twice as
 * slowly per step); a size predicted past the budget is skipped.
 */
#define NB_CHAIN_CACHE_FACTOR 2.0
#define NB_CHAIN_BUILD_BUDGET_NS 20000000000ull

/* Per-disk state objects: 262,144 of 256 bytes (64 MiB live). */
#define NB_OBJ_SIZE 256u
#define NB_OBJS 262144u
/* Churn frees this many random objects, then allocates as many again. */
#define NB_OBJ_BATCH 64u

/* From this size up the baselines cost seconds: the bitmap's fill is run
 * once, and --quick skips the bitmap and the chain. */
#define NB_LARGE 262144u

static const uint32_t nb_sizes[] = {256, 4096, 262144, 1048576};
/* --sizes: at most this many, each 1..NB_MAX_N (the linux scheme numbers
 * 2^20 disks, and the kernel's ida hands out as many indices). */
#define NB_MAX_SIZES 16u
#define NB_MAX_N (1u << 20)
/* --sweep: a power of two (the sweep wraps by mask) whose names all fit
 * NB_NAME_SLOT: 5 letters name 12,356,630 disks. */
#define NB_MAX_SWEEP (1u << 23)
/* --objects: at least two churn batches, at most 1 GiB of objects. */
#define NB_MIN_OBJS (2u * 64u)
#define NB_MAX_OBJS (1u << 22)

/* The groups, in the order they run (--only). */
enum {
	NB_G_NAMES,
	NB_G_SCHEME,
	NB_G_IDX,
	NB_G_REGISTRY,
	NB_G_SLAB,
	NB_NGROUPS
};
static const char *const nb_groups[NB_NGROUPS] = {
	"names", "scheme", "idx", "registry", "slab",
};
/* The sizes the targets judge. */
#define NB_TARGET_IDX_N 1048576u
#define NB_TARGET_REG_N 262144u

/*
 * The kernel's allocators as sd_idabench measured them (testhost/sd: in the
 * test host's guest, the sdmod-alloc scenario runs it and then this command
 * with --kernel-idx in the same boot). ns per op; NAN where not measured.
 */
#define NB_KERNEL_MAX 16u

struct nb_kernel_idx {
	uint32_t n;
	double ida_fill, ida_churn, bitmap_fill, bitmap_churn;
};

struct nb {
	struct bench_opts opt;
	/* --kernel-idx: imported rows, none when nkernel is 0. */
	struct nb_kernel_idx kernel[NB_KERNEL_MAX];
	unsigned int nkernel;
	struct bench_cfg cfg;
	struct bench_report *rep;
	uint32_t nsamples;
	struct rng rng; /* a fixed seed: every run measures the same inputs */
	/* What the targets judge; NAN until measured. */
	double name_ns;
	double parse_ns;
	double fill_ratio_1m;
	double churn_tree_1m;
	double radix_262k;
	/* --only: bit i runs nb_groups[i] */
	uint32_t groups;
	/* idx and registry sizes, ascending (--sizes, else nb_sizes) */
	uint32_t sizes[NB_MAX_SIZES];
	unsigned int nsizes;
	/* names swept (--sweep, else NB_SWEEP or NB_QUICK_SWEEP); 0: default */
	uint32_t sweep;
	/* slab objects (--objects, else NB_OBJS) */
	uint32_t nobjs;
};

static int nb_fail(const char *what, int err)
{
	bench_progress_done();
	/* -EPROTO: the library answered, wrongly (checked, never assumed). */
	fprintf(stderr, "sdswarm-bench " CMD ": %s: %s\n", what,
		err == -EPROTO ? "wrong result from libsdnum" : strerror(-err));
	return err;
}

static int nb_row(struct nb *b, const char *group, const char *name, uint64_t n,
		  const struct bench_result *res, double base)
{
	int ret = bench_report_add(b->rep, group, name, n, res, base);

	return ret ? nb_fail("report", ret) : 0;
}

static uint32_t *nb_array(uint32_t n)
{
	return calloc(n, sizeof(uint32_t));
}

/* ---- names --------------------------------------------------------- */

struct names_arg {
	uint32_t mask;
	char *names;
};

static int run_name(void *p, uint64_t n)
{
	const struct names_arg *a = p;
	char buf[SDNUM_NAME_MAX];
	uint64_t i;
	int len;

	for (i = 0; i < n; i++) {
		len = sdnum_name("sd", (uint32_t)i & a->mask, buf, sizeof(buf));
		if (len < 0)
			return len;
		/* The name must really be written, every time. */
		bench_clobber();
	}
	return 0;
}

static int run_parse(void *p, uint64_t n)
{
	const struct names_arg *a = p;
	uint32_t index, sum = 0;
	unsigned int part;
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = sdnum_parse("sd", a->names + (i & a->mask) * NB_NAME_SLOT,
				  &index, &part);
		if (ret)
			return ret;
		sum += index + part;
	}
	bench_do_not_optimize(sum);
	return 0;
}

static int bench_names(struct nb *b)
{
	uint32_t sweep = b->sweep, i, index;
	struct names_arg a = {.mask = sweep - 1};
	struct bench_result res;
	unsigned int part;
	int ret, len;

	bench_progress("names: sdnum_name over 0..%u", sweep - 1);
	ret = bench_measure(&b->cfg, run_name, &a, &res);
	if (ret)
		return nb_fail("sdnum_name", ret);
	ret = nb_row(b, "names", "name", sweep, &res, NAN);
	if (ret)
		return ret;
	b->name_ns = res.ns_per_op;

	a.names = malloc((size_t)sweep * NB_NAME_SLOT);
	if (!a.names)
		return nb_fail("names", -ENOMEM);
	for (i = 0; i < sweep; i++) {
		len = sdnum_name("sd", i, a.names + (size_t)i * NB_NAME_SLOT,
				 NB_NAME_SLOT);
		if (len < 0) {
			ret = nb_fail("sdnum_name", len);
			goto out_free;
		}
	}
	/* Untimed: parse must invert name, or its speed means nothing. */
	for (i = 0; i < sweep; i++) {
		ret = sdnum_parse("sd", a.names + (size_t)i * NB_NAME_SLOT,
				  &index, &part);
		if (ret || index != i || part) {
			fprintf(stderr,
				"sdswarm-bench " CMD
				": sdnum_parse(\"%s\") does not give back index %u\n",
				a.names + (size_t)i * NB_NAME_SLOT, i);
			ret = -EPROTO;
			goto out_free;
		}
	}
	bench_progress("names: sdnum_parse of %u names", sweep);
	ret = bench_measure(&b->cfg, run_parse, &a, &res);
	if (ret) {
		nb_fail("sdnum_parse", ret);
		goto out_free;
	}
	ret = nb_row(b, "names", "parse", sweep, &res, NAN);
	b->parse_ns = res.ns_per_op;
out_free:
	free(a.names);
	return ret;
}

/* ---- schemes ------------------------------------------------------- */

struct scheme_arg {
	const struct sdnum_scheme *s;
	uint32_t mask;
	uint32_t *disk;
	uint32_t *part;
	uint32_t *dev;
};

static int run_encode(void *p, uint64_t n)
{
	const struct scheme_arg *a = p;
	uint32_t dev, sum = 0, j;
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		j = (uint32_t)i & a->mask;
		ret = a->s->encode(NULL, a->disk[j], a->part[j], &dev);
		if (ret)
			return ret;
		sum += dev;
	}
	bench_do_not_optimize(sum);
	return 0;
}

static int run_decode(void *p, uint64_t n)
{
	const struct scheme_arg *a = p;
	uint32_t disk, part, sum = 0;
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = a->s->decode(NULL, a->dev[i & a->mask], &disk, &part);
		if (ret)
			return ret;
		sum += disk + part;
	}
	bench_do_not_optimize(sum);
	return 0;
}

/* Samples (disk, part) over @a->s's space and checks decode inverts encode. */
static int scheme_samples(struct nb *b, struct scheme_arg *a)
{
	const struct sdnum_scheme *s = a->s;
	uint32_t parts = s->max_parts, dev, disk, part, i;
	int ret;

	/* Numbers allocated at run time (linux's partitions 16 and up) need
	 * a context; without one, sample only the computed ones. */
	if (s->encode(NULL, 0, parts, &dev) == -EXDEV)
		parts = s->static_parts;
	for (i = 0; i < b->nsamples; i++) {
		a->disk[i] = rng_below(&b->rng, s->max_disks);
		a->part[i] = rng_below(&b->rng, parts + 1);
		ret = s->encode(NULL, a->disk[i], a->part[i], &a->dev[i]);
		if (ret) {
			fprintf(stderr,
				"sdswarm-bench " CMD
				": %s encode(%u, %u): %s\n",
				s->name, a->disk[i], a->part[i],
				strerror(-ret));
			return ret;
		}
		ret = s->decode(NULL, a->dev[i], &disk, &part);
		if (ret || disk != a->disk[i] || part != a->part[i]) {
			fprintf(stderr,
				"sdswarm-bench " CMD
				": %s decode(%u:%u) does not give back disk %u part %u\n",
				s->name, SDNUM_MAJOR(a->dev[i]),
				SDNUM_MINOR(a->dev[i]), a->disk[i], a->part[i]);
			return -EPROTO;
		}
	}
	return 0;
}

static int bench_one_scheme(struct nb *b, const struct sdnum_scheme *s)
{
	struct scheme_arg a = {.s = s, .mask = b->nsamples - 1};
	struct bench_result res;
	char name[64];
	int ret = -ENOMEM;

	a.disk = nb_array(b->nsamples);
	a.part = nb_array(b->nsamples);
	a.dev = nb_array(b->nsamples);
	if (!a.disk || !a.part || !a.dev) {
		nb_fail(s->name, ret);
		goto out_free;
	}
	ret = scheme_samples(b, &a);
	if (ret)
		goto out_free;

	bench_progress("schemes: %s encode", s->name);
	ret = bench_measure(&b->cfg, run_encode, &a, &res);
	if (ret) {
		nb_fail(s->name, ret);
		goto out_free;
	}
	snprintf(name, sizeof(name), "%s encode", s->name);
	ret = nb_row(b, "scheme", name, s->max_disks, &res, NAN);
	if (ret)
		goto out_free;

	bench_progress("schemes: %s decode", s->name);
	ret = bench_measure(&b->cfg, run_decode, &a, &res);
	if (ret) {
		nb_fail(s->name, ret);
		goto out_free;
	}
	snprintf(name, sizeof(name), "%s decode", s->name);
	ret = nb_row(b, "scheme", name, s->max_disks, &res, NAN);
out_free:
	free(a.dev);
	free(a.part);
	free(a.disk);
	return ret;
}

static int bench_schemes(struct nb *b)
{
	const struct sdnum_scheme *s;
	unsigned int i;
	int ret;

	for (i = 0; (s = sdnum_scheme_at(i)); i++) {
		ret = bench_one_scheme(b, s);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- id allocators ------------------------------------------------- */

static const char *const idx_kind_name[] = {
	[SDNUM_IDX_BITMAP] = "bitmap",
	[SDNUM_IDX_TREE] = "tree",
};

/* One fill: a fresh allocator (untimed), @n allocs (timed). The allocator is
 * kept full for the churn that follows. */
struct fill_arg {
	enum sdnum_idx_kind kind;
	uint32_t n;
	struct sdnum_idx *idx;
};

static int fill_round(void *p, uint64_t *timed)
{
	struct fill_arg *a = p;
	uint64_t t0, t1;
	uint32_t i;
	int ret, id;

	sdnum_idx_destroy(a->idx);
	a->idx = NULL;
	ret = sdnum_idx_create(&a->idx, a->kind, a->n);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	for (i = 0; i < a->n; i++) {
		id = sdnum_idx_alloc(a->idx);
		/* Lowest free first: a fresh allocator hands out 0, 1, 2... */
		if (id != (int)i)
			return id < 0 ? id : -EPROTO;
	}
	t1 = bench_now_ns();
	*timed += t1 - t0;
	return 0;
}

struct churn_arg {
	struct sdnum_idx *idx;
	const uint32_t *ids;
	uint32_t mask;
};

static int run_idx_churn(void *p, uint64_t n)
{
	const struct churn_arg *a = p;
	uint64_t i;
	uint32_t id;
	int ret;

	for (i = 0; i < n; i++) {
		id = a->ids[i & a->mask];
		ret = sdnum_idx_free(a->idx, id);
		if (ret)
			return ret;
		/* Full but for @id: the lowest free id is @id. */
		ret = sdnum_idx_alloc(a->idx);
		if (ret != (int)id)
			return ret < 0 ? ret : -EPROTO;
	}
	return 0;
}

static int idx_fill(struct nb *b, struct fill_arg *a, struct bench_result *res)
{
	unsigned int reps = 0;
	char what[64];
	int ret;

	if (a->kind == SDNUM_IDX_BITMAP && a->n >= NB_LARGE)
		reps = 1;
	bench_progress("idx: fill %s to %u", idx_kind_name[a->kind], a->n);
	ret = bench_measure_rounds(&b->cfg, reps, fill_round, a, a->n, res);
	if (ret) {
		snprintf(what, sizeof(what), "fill %s to %u",
			 idx_kind_name[a->kind], a->n);
		return nb_fail(what, ret);
	}
	return 0;
}

static int idx_churn(struct nb *b, const struct fill_arg *f,
		     const uint32_t *ids, struct bench_result *res)
{
	struct churn_arg a = {
		.idx = f->idx, .ids = ids, .mask = b->nsamples - 1};
	char what[64];
	int ret;

	bench_progress("idx: churn %s at %u", idx_kind_name[f->kind], f->n);
	ret = bench_measure(&b->cfg, run_idx_churn, &a, res);
	if (ret) {
		snprintf(what, sizeof(what), "churn %s at %u (free, alloc)",
			 idx_kind_name[f->kind], f->n);
		return nb_fail(what, ret);
	}
	return 0;
}

static const struct nb_kernel_idx *nb_kernel_at(const struct nb *b, uint32_t n)
{
	unsigned int i;

	for (i = 0; i < b->nkernel; i++)
		if (b->kernel[i].n == n)
			return &b->kernel[i];
	return NULL;
}

/* One imported figure as a row; nothing for one sd_idabench left out. */
static int nb_kernel_row(struct nb *b, const char *name, uint32_t n, double ns,
			 double base)
{
	struct bench_result r = {.ns_per_op = ns,
				 .median_ns_per_op = ns,
				 .ops_per_s = 1e9 / ns,
				 .ops = 0,
				 .reps = 1};

	if (isnan(ns) || ns <= 0)
		return 0;
	return nb_row(b, "idx", name, n, &r, base);
}

/*
 * The kernel's ida and 2.6 bitmap at @n beside this run's: the kernel's
 * bitmap rows have this run's libsdnum bitmap as no baseline (they are
 * the baseline); the kernel ida's ratio is against the kernel bitmap; the
 * tree's "vs kernel ida" rows have the kernel ida as their baseline.
 */
static int nb_kernel_rows(struct nb *b, uint32_t n, double tree_fill,
			  double tree_churn)
{
	const struct nb_kernel_idx *k = nb_kernel_at(b, n);
	int ret;

	if (!k)
		return 0;
	ret = nb_kernel_row(b, "fill kernel bitmap", n, k->bitmap_fill, NAN);
	if (!ret)
		ret = nb_kernel_row(b, "fill kernel ida", n, k->ida_fill,
				    k->bitmap_fill);
	if (!ret)
		ret = nb_kernel_row(b, "fill tree vs kernel ida", n, tree_fill,
				    k->ida_fill);
	if (!ret)
		ret = nb_kernel_row(b, "churn kernel bitmap", n,
				    k->bitmap_churn, NAN);
	if (!ret)
		ret = nb_kernel_row(b, "churn kernel ida", n, k->ida_churn,
				    k->bitmap_churn);
	if (!ret)
		ret = nb_kernel_row(b, "churn tree vs kernel ida", n,
				    tree_churn, k->ida_churn);
	return ret;
}

static int bench_idx_at(struct nb *b, uint32_t n, uint32_t *ids)
{
	struct fill_arg bitmap = {.kind = SDNUM_IDX_BITMAP, .n = n};
	struct fill_arg tree = {.kind = SDNUM_IDX_TREE, .n = n};
	struct bench_result fb, ft, cb, ct;
	bool with_bitmap = !(b->opt.quick && n >= NB_LARGE);
	double base = NAN;
	uint32_t i;
	int ret;

	for (i = 0; i < b->nsamples; i++)
		ids[i] = rng_below(&b->rng, n);

	if (with_bitmap) {
		ret = idx_fill(b, &bitmap, &fb);
		if (ret)
			goto out_destroy;
		ret = nb_row(b, "idx", "fill bitmap", n, &fb, NAN);
		if (ret)
			goto out_destroy;
		base = fb.ns_per_op;
	}
	ret = idx_fill(b, &tree, &ft);
	if (ret)
		goto out_destroy;
	ret = nb_row(b, "idx", "fill tree", n, &ft, base);
	if (ret)
		goto out_destroy;
	if (n == NB_TARGET_IDX_N)
		b->fill_ratio_1m = base / ft.ns_per_op;

	base = NAN;
	if (with_bitmap) {
		ret = idx_churn(b, &bitmap, ids, &cb);
		if (ret)
			goto out_destroy;
		ret = nb_row(b, "idx", "churn bitmap", n, &cb, NAN);
		if (ret)
			goto out_destroy;
		base = cb.ns_per_op;
	}
	ret = idx_churn(b, &tree, ids, &ct);
	if (ret)
		goto out_destroy;
	ret = nb_row(b, "idx", "churn tree", n, &ct, base);
	if (n == NB_TARGET_IDX_N)
		b->churn_tree_1m = ct.ns_per_op;
	if (!ret)
		ret = nb_kernel_rows(b, n, ft.ns_per_op, ct.ns_per_op);
out_destroy:
	sdnum_idx_destroy(tree.idx);
	sdnum_idx_destroy(bitmap.idx);
	return ret;
}

static int bench_idx(struct nb *b)
{
	uint32_t *ids = nb_array(b->nsamples);
	unsigned int i;
	int ret = 0;

	if (!ids)
		return nb_fail("idx", -ENOMEM);
	for (i = 0; i < b->nsizes && !ret; i++)
		ret = bench_idx_at(b, b->sizes[i], ids);
	free(ids);
	return ret;
}

/* ---- dev_t registry ------------------------------------------------ */

static const char *const reg_kind_name[] = {
	[SDNUM_REG_CHAIN] = "chain",
	[SDNUM_REG_RADIX] = "radix",
};

/* The object registered for disk @d. Never dereferenced: any non-NULL,
 * distinct value will do. */
static void *disk_obj(uint32_t d)
{
	return (void *)((uintptr_t)d + 1);
}

/* One build: a fresh registry (untimed), @n disks added (timed); the last
 * one is kept for the lookups. */
struct reg_arg {
	enum sdnum_reg_kind kind;
	uint32_t n;
	/* linux encode(d, 0) of every disk. */
	const uint32_t *base;
	struct sdnum_reg *r;
};

static int reg_round(void *p, uint64_t *timed)
{
	struct reg_arg *a = p;
	uint64_t t0, t1;
	uint32_t d;
	int ret;

	sdnum_reg_destroy(a->r);
	a->r = NULL;
	ret = sdnum_reg_create(&a->r, a->kind);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	for (d = 0; d < a->n; d++) {
		ret = sdnum_reg_add(a->r, a->base[d], NB_DISK_MINORS,
				    disk_obj(d));
		if (ret)
			return ret;
	}
	t1 = bench_now_ns();
	*timed += t1 - t0;
	return 0;
}

struct lookup_arg {
	const struct sdnum_reg *r;
	const uint32_t *dev;
	uint32_t mask;
};

static int run_lookup(void *p, uint64_t n)
{
	const struct lookup_arg *a = p;
	uintptr_t sum = 0;
	uint64_t i;
	void *obj;

	for (i = 0; i < n; i++) {
		obj = sdnum_reg_lookup(a->r, a->dev[i & a->mask], NULL);
		if (!obj)
			return -EPROTO;
		sum += (uintptr_t)obj;
	}
	bench_do_not_optimize(sum);
	return 0;
}

/* Untimed: every sampled dev_t finds its disk at the right offset. */
static int reg_check(const struct sdnum_reg *r, const uint32_t *dev,
		     const uint32_t *disk, uint32_t count)
{
	uint32_t i, off;

	for (i = 0; i < count; i++) {
		off = UINT32_MAX;
		if (sdnum_reg_lookup(r, dev[i], &off) != disk_obj(disk[i]) ||
		    off != SDNUM_MINOR(dev[i]) % NB_DISK_MINORS) {
			fprintf(stderr,
				"sdswarm-bench " CMD
				": registry lookup of %u:%u does not find disk %u\n",
				SDNUM_MAJOR(dev[i]), SDNUM_MINOR(dev[i]),
				disk[i]);
			return -EPROTO;
		}
	}
	return 0;
}

struct reg_run {
	/* Build and lookup results; reps 0 where not measured. */
	struct bench_result add;
	struct bench_result lookup;
};

static int reg_measure(struct nb *b, struct reg_arg *a, const uint32_t *dev,
		       const uint32_t *disk, struct reg_run *out)
{
	struct lookup_arg l = {.dev = dev, .mask = b->nsamples - 1};
	struct bench_cfg cfg = b->cfg;
	const char *kind = reg_kind_name[a->kind];
	uint32_t check;
	char what[64];
	int ret;

	/* Builds are measured over one repetition (of rounds): the lookups
	 * are the point, and a chain build of 262,144 disks costs seconds. */
	bench_progress("registry: add %u disks to %s", a->n, kind);
	ret = bench_measure_rounds(&b->cfg, 1, reg_round, a, a->n, &out->add);
	if (ret) {
		snprintf(what, sizeof(what), "registry %s add %u", kind, a->n);
		return nb_fail(what, ret);
	}
	/* Checking every sample on a long chain would cost seconds; the
	 * first ones are those its capped batches use. */
	check = b->nsamples;
	if (a->kind == SDNUM_REG_CHAIN && check > NB_CHAIN_CHECK)
		check = NB_CHAIN_CHECK;
	ret = reg_check(a->r, dev, disk, check);
	if (ret)
		return ret;

	l.r = a->r;
	if (a->kind == SDNUM_REG_CHAIN)
		cfg.max_ops = NB_CHAIN_MAX_OPS;
	bench_progress("registry: lookup in %s of %u disks", kind, a->n);
	ret = bench_measure(&cfg, run_lookup, &l, &out->lookup);
	if (ret) {
		snprintf(what, sizeof(what), "registry %s lookup at %u", kind,
			 a->n);
		return nb_fail(what, ret);
	}
	return 0;
}

/* The last chain built: how long its adds took, for the next prediction. */
struct chain_hist {
	uint32_t n;
	double build_ns;
};

static int bench_reg_at(struct nb *b, uint32_t n, uint32_t *base, uint32_t *dev,
			uint32_t *disk, struct chain_hist *hist)
{
	struct reg_arg chain = {.kind = SDNUM_REG_CHAIN, .n = n, .base = base};
	struct reg_arg radix = {.kind = SDNUM_REG_RADIX, .n = n, .base = base};
	struct reg_run rc = {0}, rr = {0};
	double predicted, add_base = NAN, lookup_base = NAN;
	bool with_chain = !(b->opt.quick && n >= NB_LARGE);
	uint32_t i, part;
	int ret;

	for (i = 0; i < n; i++) {
		ret = sdnum_scheme_linux.encode(NULL, i, 0, &base[i]);
		if (ret)
			return nb_fail("linux encode", ret);
	}
	for (i = 0; i < b->nsamples; i++) {
		disk[i] = rng_below(&b->rng, n);
		part = rng_below(&b->rng, NB_DISK_MINORS);
		ret = sdnum_scheme_linux.encode(NULL, disk[i], part, &dev[i]);
		if (ret)
			return nb_fail("linux encode", ret);
	}

	/* The chain's build is quadratic: predict it from the last size. */
	predicted = 0;
	if (hist->n)
		predicted = hist->build_ns * NB_CHAIN_CACHE_FACTOR *
			    ((double)n / hist->n) * ((double)n / hist->n);
	if (with_chain && predicted > (double)NB_CHAIN_BUILD_BUDGET_NS) {
		with_chain = false;
		ret = bench_report_note(
			b->rep,
			"registry: chain of %u disks not built: predicted %.0f s (each add walks its whole chain, O(n))",
			n, predicted / 1e9);
		if (ret)
			return nb_fail("report", ret);
	}

	if (with_chain) {
		ret = reg_measure(b, &chain, dev, disk, &rc);
		if (ret)
			goto out_destroy;
		hist->n = n;
		hist->build_ns = rc.add.ns_per_op * n;
		add_base = rc.add.ns_per_op;
		lookup_base = rc.lookup.ns_per_op;
		ret = nb_row(b, "registry", "add chain", n, &rc.add, NAN);
		if (ret)
			goto out_destroy;
	}
	ret = reg_measure(b, &radix, dev, disk, &rr);
	if (ret)
		goto out_destroy;
	ret = nb_row(b, "registry", "add radix", n, &rr.add, add_base);
	if (ret)
		goto out_destroy;
	if (with_chain) {
		ret = nb_row(b, "registry", "lookup chain", n, &rc.lookup, NAN);
		if (ret)
			goto out_destroy;
	}
	ret = nb_row(b, "registry", "lookup radix", n, &rr.lookup, lookup_base);
	if (n == NB_TARGET_REG_N)
		b->radix_262k = rr.lookup.ns_per_op;
out_destroy:
	sdnum_reg_destroy(radix.r);
	sdnum_reg_destroy(chain.r);
	return ret;
}

static int bench_registry(struct nb *b)
{
	uint32_t nmax = b->sizes[b->nsizes - 1];
	uint32_t *base, *dev, *disk;
	struct chain_hist hist = {0};
	unsigned int i;
	int ret = -ENOMEM;

	base = nb_array(nmax);
	dev = nb_array(b->nsamples);
	disk = nb_array(b->nsamples);
	if (!base || !dev || !disk) {
		nb_fail("registry", ret);
		goto out_free;
	}
	ret = 0;
	for (i = 0; i < b->nsizes && !ret; i++)
		ret = bench_reg_at(b, b->sizes[i], base, dev, disk, &hist);
out_free:
	free(disk);
	free(dev);
	free(base);
	return ret;
}

/* ---- per-disk objects ---------------------------------------------- */

struct obj_arg {
	uint32_t n;
	void **obj;
	struct sdnum_slab *cache;
	/* A permutation of 0..n-1: any NB_OBJ_BATCH consecutive entries
	 * (cyclically) are distinct slots. */
	const uint32_t *perm;
	uint32_t cursor;
};

/* Each object gets one field written, as a real per-disk init would; it
 * also keeps the compiler from pairing a malloc() with its free() away. */
static inline void obj_init(void *obj, uint64_t v)
{
	*(uint64_t *)obj = v;
}

static int round_malloc(void *p, uint64_t *timed)
{
	struct obj_arg *a = p;
	uint64_t t0, t1;
	uint32_t i;
	int ret = 0;

	t0 = bench_now_ns();
	for (i = 0; i < a->n; i++) {
		a->obj[i] = malloc(NB_OBJ_SIZE);
		if (!a->obj[i]) {
			ret = -ENOMEM;
			break;
		}
		obj_init(a->obj[i], i);
	}
	bench_clobber();
	while (i)
		free(a->obj[--i]);
	t1 = bench_now_ns();
	*timed += t1 - t0;
	return ret;
}

static int round_slab(void *p, uint64_t *timed)
{
	struct obj_arg *a = p;
	uint64_t t0, t1;
	uint32_t i;
	int ret;

	ret = sdnum_slab_create(&a->cache, NB_OBJ_SIZE, 0, 0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	for (i = 0; i < a->n; i++) {
		a->obj[i] = sdnum_slab_alloc(a->cache);
		if (!a->obj[i]) {
			ret = -ENOMEM;
			break;
		}
		obj_init(a->obj[i], i);
	}
	bench_clobber();
	while (i)
		sdnum_slab_free(a->cache, a->obj[--i]);
	t1 = bench_now_ns();
	*timed += t1 - t0;
	sdnum_slab_destroy(a->cache);
	a->cache = NULL;
	return ret;
}

/*
 * Churn at full occupancy: free NB_OBJ_BATCH random objects, then allocate
 * as many into the same slots. Batches (not single pairs) keep a LIFO cache
 * from simply handing back the object it was just given. A freed slot is
 * cleared at once, so that a failed allocation leaves nothing dangling.
 */
static int run_churn_malloc(void *p, uint64_t n)
{
	struct obj_arg *a = p;
	uint32_t k, batch, pos;
	uint64_t done;

	for (done = 0; done < n; done += batch) {
		batch = n - done < NB_OBJ_BATCH ? (uint32_t)(n - done)
						: NB_OBJ_BATCH;
		for (k = 0, pos = a->cursor; k < batch; k++) {
			free(a->obj[a->perm[pos]]);
			a->obj[a->perm[pos]] = NULL;
			pos = pos + 1 == a->n ? 0 : pos + 1;
		}
		for (k = 0; k < batch; k++) {
			void *obj = malloc(NB_OBJ_SIZE);

			a->obj[a->perm[a->cursor]] = obj;
			if (!obj)
				return -ENOMEM;
			obj_init(obj, done + k);
			a->cursor = a->cursor + 1 == a->n ? 0 : a->cursor + 1;
		}
	}
	return 0;
}

static int run_churn_slab(void *p, uint64_t n)
{
	struct obj_arg *a = p;
	uint32_t k, batch, pos;
	uint64_t done;

	for (done = 0; done < n; done += batch) {
		batch = n - done < NB_OBJ_BATCH ? (uint32_t)(n - done)
						: NB_OBJ_BATCH;
		for (k = 0, pos = a->cursor; k < batch; k++) {
			sdnum_slab_free(a->cache, a->obj[a->perm[pos]]);
			a->obj[a->perm[pos]] = NULL;
			pos = pos + 1 == a->n ? 0 : pos + 1;
		}
		for (k = 0; k < batch; k++) {
			void *obj = sdnum_slab_alloc(a->cache);

			a->obj[a->perm[a->cursor]] = obj;
			if (!obj)
				return -ENOMEM;
			obj_init(obj, done + k);
			a->cursor = a->cursor + 1 == a->n ? 0 : a->cursor + 1;
		}
	}
	return 0;
}

/* Frees every object in @a (NULL slots included: both frees take NULL). */
static void obj_free_all(struct obj_arg *a, bool slab)
{
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		if (slab)
			sdnum_slab_free(a->cache, a->obj[i]);
		else
			free(a->obj[i]);
		a->obj[i] = NULL;
	}
}

static int obj_churn(struct nb *b, struct obj_arg *a, bool slab,
		     struct bench_result *res)
{
	uint32_t i;
	int ret;

	if (slab) {
		ret = sdnum_slab_create(&a->cache, NB_OBJ_SIZE, 0, 0);
		if (ret)
			return ret;
	}
	/* The alloc-all rounds left freed pointers behind. */
	memset(a->obj, 0, a->n * sizeof(*a->obj));
	for (i = 0; i < a->n; i++) {
		a->obj[i] =
			slab ? sdnum_slab_alloc(a->cache) : malloc(NB_OBJ_SIZE);
		if (!a->obj[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
		obj_init(a->obj[i], i);
	}
	a->cursor = 0;
	bench_progress("slab: churn %s at %u objects", slab ? "slab" : "malloc",
		       a->n);
	ret = bench_measure(&b->cfg, slab ? run_churn_slab : run_churn_malloc,
			    a, res);
out_free:
	obj_free_all(a, slab);
	if (slab) {
		sdnum_slab_destroy(a->cache);
		a->cache = NULL;
	}
	return ret;
}

static int bench_objects(struct nb *b)
{
	struct obj_arg a = {.n = b->nobjs};
	struct bench_result rm, rs;
	uint32_t *perm, i, j, t;
	int ret = -ENOMEM;

	a.obj = calloc(a.n, sizeof(*a.obj));
	perm = nb_array(a.n);
	if (!a.obj || !perm) {
		nb_fail("slab", ret);
		goto out_free;
	}
	/* Fisher-Yates over the slots. */
	for (i = 0; i < a.n; i++)
		perm[i] = i;
	for (i = a.n - 1; i > 0; i--) {
		j = rng_below(&b->rng, i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	a.perm = perm;

	bench_progress("slab: malloc and free %u objects", a.n);
	ret = bench_measure_rounds(&b->cfg, 0, round_malloc, &a, a.n, &rm);
	if (ret) {
		nb_fail("malloc all, free all", ret);
		goto out_free;
	}
	bench_progress("slab: slab alloc and free %u objects", a.n);
	ret = bench_measure_rounds(&b->cfg, 0, round_slab, &a, a.n, &rs);
	if (ret) {
		nb_fail("slab alloc all, free all", ret);
		goto out_free;
	}
	ret = nb_row(b, "slab", "alloc+free all malloc", a.n, &rm, NAN)
		      ?: nb_row(b, "slab", "alloc+free all slab", a.n, &rs,
				rm.ns_per_op);
	if (ret)
		goto out_free;

	ret = obj_churn(b, &a, false, &rm);
	if (ret) {
		nb_fail("malloc churn", ret);
		goto out_free;
	}
	ret = obj_churn(b, &a, true, &rs);
	if (ret) {
		nb_fail("slab churn", ret);
		goto out_free;
	}
	ret = nb_row(b, "slab", "churn malloc", a.n, &rm, NAN)
		      ?: nb_row(b, "slab", "churn slab", a.n, &rs,
				rm.ns_per_op);
out_free:
	free(perm);
	free(a.obj);
	return ret;
}

/* ---- targets and the command --------------------------------------- */

static int add_targets(struct nb *b)
{
	struct bench_report *r = b->rep;
	int ret = 0;

	/* only the targets of the groups that ran (--only) */
	if (b->groups & (1u << NB_G_NAMES))
		ret = bench_report_target(r, "name generation, ns/op",
					  b->name_ns, BENCH_BELOW, 10)
			      ?: bench_report_target(r, "parse, ns/op",
						     b->parse_ns, BENCH_BELOW,
						     15);
	if (!ret && (b->groups & (1u << NB_G_IDX)))
		ret = bench_report_target(
			      r, "tree fill of 1048576 vs bitmap, speedup",
			      b->fill_ratio_1m, BENCH_AT_LEAST, 100)
			      ?: bench_report_target(
					 r,
					 "churn at full occupancy, tree, N=1048576, ns/op",
					 b->churn_tree_1m, BENCH_BELOW, 50);
	if (!ret && (b->groups & (1u << NB_G_REGISTRY)))
		ret = bench_report_target(r,
					  "radix lookup at 262144 disks, ns/op",
					  b->radix_262k, BENCH_BELOW, 10);
	return ret ? nb_fail("report", ret) : 0;
}

/* "-" or a decimal ns figure; NAN for "-". */
static int nb_kernel_num(const char *s, double *out)
{
	if (!strcmp(s, "-")) {
		*out = NAN;
		return 0;
	}
	return bench_parse_double(s, 0, INFINITY, out);
}

/*
 * --kernel-idx FILE: sd_idabench's lines, as dmesg printed them (a
 * timestamp before "sd_idabench:" is skipped; other lines are ignored):
 *   sd_idabench: n=N ida_fill_ns=F ida_churn_ns=C bitmap_fill_ns=F|- bitmap_churn_ns=C
 */
static int nb_kernel_load(struct nb *b, const char *path)
{
	char line[512], f[4][32];
	unsigned long n;
	unsigned int ln = 0;
	const char *p;
	FILE *fp;
	int ret = 0;

	fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "sdswarm-bench " CMD ": --kernel-idx %s: %s\n",
			path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), fp)) {
		struct nb_kernel_idx *k;

		ln++;
		p = strstr(line, "sd_idabench: n=");
		if (!p)
			continue;
		if (sscanf(p,
			   "sd_idabench: n=%lu ida_fill_ns=%31s ida_churn_ns=%31s bitmap_fill_ns=%31s bitmap_churn_ns=%31s",
			   &n, f[0], f[1], f[2], f[3]) != 5 ||
		    n == 0 || n > NB_SWEEP) {
			ret = -EINVAL;
			break;
		}
		if (b->nkernel == NB_KERNEL_MAX) {
			ret = -E2BIG;
			break;
		}
		k = &b->kernel[b->nkernel];
		k->n = (uint32_t)n;
		if (nb_kernel_num(f[0], &k->ida_fill) ||
		    nb_kernel_num(f[1], &k->ida_churn) ||
		    nb_kernel_num(f[2], &k->bitmap_fill) ||
		    nb_kernel_num(f[3], &k->bitmap_churn)) {
			ret = -EINVAL;
			break;
		}
		b->nkernel++;
	}
	if (!ret && ferror(fp))
		ret = -EIO;
	fclose(fp);
	if (ret == -EINVAL)
		fprintf(stderr,
			"sdswarm-bench " CMD
			": --kernel-idx %s:%u: not an sd_idabench line\n",
			path, ln);
	else if (ret == -E2BIG)
		fprintf(stderr,
			"sdswarm-bench " CMD
			": --kernel-idx %s:%u: more than %u sizes\n",
			path, ln, NB_KERNEL_MAX);
	else if (ret)
		fprintf(stderr, "sdswarm-bench " CMD ": --kernel-idx %s: %s\n",
			path, strerror(-ret));
	else if (!b->nkernel) {
		fprintf(stderr,
			"sdswarm-bench " CMD
			": --kernel-idx %s: no sd_idabench line\n",
			path);
		ret = -EINVAL;
	}
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench numbering [--json] [--quick] [--reps R] [-v]\n"
		"                               [--only GROUP[,GROUP]] [--sizes N[,N]]\n"
		"                               [--sweep N] [--objects N]\n"
		"                               [--kernel-idx FILE]\n\n"
		"Measures libsdnum, each fast path against its 2.6 baseline in the\n"
		"same run: ns/op, ops/s, baseline ns/op and ratio (baseline / fast).\n"
		"Groups:\n"
		"  names     sdnum_name over indices 0..2^20-1, sdnum_parse of them\n"
		"  scheme    encode and decode of every dev_t scheme over random\n"
		"            (disk, part) in its space (linux: parts 0..15)\n"
		"  idx       fill to N (ns per alloc) and churn at full occupancy\n"
		"            (free a random id, alloc it back): bitmap vs tree\n"
		"  registry  add N 16-minor disks, random lookups: chain vs radix\n"
		"  slab      262144 objects of 256 bytes, alloc all + free all and\n"
		"            churn in batches of 64: malloc vs sdnum_slab\n"
		"N is 256, 4096, 262144 and 1048576. Then the targets of the groups\n"
		"run, met or MISSED; they never change the exit status.\n\n"
		"  --json     one JSON object instead of the tables\n"
		"  --quick    2 ms batches, 2^16 names; no bitmap or chain baseline\n"
		"             at N >= 262144 (a smoke test: about a second)\n"
		"  --reps R   batches per measurement, best kept (default 3, quick 2)\n"
		"  --only GROUP[,GROUP]  run only these groups (names, scheme, idx,\n"
		"             registry, slab)\n"
		"  --sizes N[,N]  the idx and registry sizes, 1..1048576, up to 16\n"
		"             of them (default 256,4096,262144,1048576)\n"
		"  --sweep N  names swept, a power of two 2..8388608 (default 2^20,\n"
		"             quick 2^16)\n"
		"  --objects N  slab objects, 128..4194304 (default 262144)\n"
		"  -v, --verbose  also the notes on how it was measured\n"
		"  --kernel-idx FILE  the kernel's ida and 2.6 bitmap as sd_idabench\n"
		"             (testhost/sd) printed them, as rows beside libsdnum's\n"
		"             at the same N, the kernel ida a baseline of the tree.\n"
		"             Ratios hold only when FILE comes from the same machine\n"
		"             and run: `sdswarm-testhost run sdmod-alloc` does both\n"
		"             in a guest\n"
		"  --help     this text\n"
		"Exit status 0; 1 on an error (allocation, wrong result); 2 on a\n"
		"usage error.\n");
}

static int nb_notes(struct nb *b)
{
	int ret;

	ret = bench_report_detail(
		b->rep,
		"best of %u batches of >= %.3g s each (or a fixed op count); bitmap fills of >= %u ids run once, registry builds in 1 batch",
		b->cfg.reps, (double)b->cfg.min_ns / 1e9, NB_LARGE);
	if (!ret)
		ret = bench_report_detail(
			b->rep,
			"inputs: %u precomputed pseudo-random samples per case (fixed seed); ratio = baseline ns/op / ns/op",
			b->nsamples);
	if (!ret && b->opt.quick &&
	    (b->groups & ((1u << NB_G_IDX) | (1u << NB_G_REGISTRY))))
		ret = bench_report_note(
			b->rep,
			"--quick: short batches, bitmap and chain baselines skipped at N >= %u; figures are rough",
			NB_LARGE);
	return ret ? nb_fail("report", ret) : 0;
}

/* --sizes: ascending, without repeats (the chain's build time is
 * predicted from the size before). */
static void nb_sizes_set(struct nb *b, const uint64_t *list, unsigned int n)
{
	unsigned int i, j;

	b->nsizes = 0;
	for (i = 0; i < n; i++) {
		for (j = b->nsizes; j > 0 && b->sizes[j - 1] > list[i]; j--)
			;
		if (j > 0 && b->sizes[j - 1] == list[i])
			continue;
		memmove(&b->sizes[j + 1], &b->sizes[j],
			(b->nsizes - j) * sizeof(b->sizes[0]));
		b->sizes[j] = (uint32_t)list[i];
		b->nsizes++;
	}
}

/*
 * The command line into @b (defaults for what it leaves out) and
 * --kernel-idx's file into @kernel_path. Return: -1 to run, else the exit
 * status (0 after --help).
 */
static int nb_parse(int argc, char **argv, struct nb *b,
		    const char **kernel_path)
{
	enum {
		OPT_KERNEL_IDX = 0x200,
		OPT_SIZES,
		OPT_SWEEP,
		OPT_OBJECTS,
	};
	static const struct option lopts[] = {
		BENCH_COMMON_LONGOPTS,
		{"kernel-idx", required_argument, NULL, OPT_KERNEL_IDX},
		{"sizes", required_argument, NULL, OPT_SIZES},
		{"sweep", required_argument, NULL, OPT_SWEEP},
		{"objects", required_argument, NULL, OPT_OBJECTS},
		{NULL, 0, NULL, 0},
	};
	uint64_t v, list[NB_MAX_SIZES];
	unsigned int i, n;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		ret = bench_common_opt(&b->opt, opt, optarg, CMD);
		if (ret < 0)
			return CLI_EXIT_USAGE;
		if (ret)
			continue;
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == OPT_KERNEL_IDX) {
			*kernel_path = optarg;
			continue;
		}
		if (opt == OPT_SIZES) {
			ret = bench_parse_list(optarg, 1, NB_MAX_N, list,
					       NB_MAX_SIZES, &n);
			if (ret) {
				fprintf(stderr,
					"sdswarm-bench " CMD
					": --sizes '%s': %s\n",
					optarg,
					ret == -E2BIG
						? "at most 16 sizes"
						: "need N[,N...], each 1..1048576");
				return CLI_EXIT_USAGE;
			}
			nb_sizes_set(b, list, n);
			continue;
		}
		if (opt == OPT_SWEEP) {
			if (bench_parse_u64(optarg, 2, NB_MAX_SWEEP, &v) ||
			    (v & (v - 1))) {
				fprintf(stderr,
					"sdswarm-bench " CMD
					": --sweep '%s': need a power of two, 2..%u\n",
					optarg, NB_MAX_SWEEP);
				return CLI_EXIT_USAGE;
			}
			b->sweep = (uint32_t)v;
			continue;
		}
		if (opt == OPT_OBJECTS) {
			if (bench_parse_u64(optarg, NB_MIN_OBJS, NB_MAX_OBJS,
					    &v)) {
				fprintf(stderr,
					"sdswarm-bench " CMD
					": --objects '%s': need %u..%u\n",
					optarg, NB_MIN_OBJS, NB_MAX_OBJS);
				return CLI_EXIT_USAGE;
			}
			b->nobjs = (uint32_t)v;
			continue;
		}
		cli_suggest_option(stderr, argv[0], lopts, argv[optind - 1]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "sdswarm-bench " CMD ": unexpected '%s'\n",
			argv[optind]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (bench_only(&b->opt, CMD, nb_groups, NB_NGROUPS, &b->groups))
		return CLI_EXIT_USAGE;
	if (!b->nsizes) {
		for (i = 0; i < ARRAY_SIZE(nb_sizes); i++)
			b->sizes[i] = nb_sizes[i];
		b->nsizes = ARRAY_SIZE(nb_sizes);
	}
	if (!b->sweep)
		b->sweep = b->opt.quick ? NB_QUICK_SWEEP : NB_SWEEP;
	if (!b->nobjs)
		b->nobjs = NB_OBJS;
	return -1;
}

int bench_numbering(int argc, char **argv)
{
	const char *kernel_path = NULL;
	struct nb b = {
		.rng = rng_init(0x5d5a5e11ull),
		.name_ns = NAN,
		.parse_ns = NAN,
		.fill_ratio_1m = NAN,
		.churn_tree_1m = NAN,
		.radix_262k = NAN,
	};
	int ret;

	ret = nb_parse(argc, argv, &b, &kernel_path);
	if (ret >= 0)
		return ret;
	if (kernel_path && nb_kernel_load(&b, kernel_path))
		return 1;
	bench_cfg_init(&b.cfg, &b.opt);
	b.nsamples = b.opt.quick ? NB_QUICK_SAMPLES : NB_SAMPLES;

	ret = bench_report_create(&b.rep, CMD);
	if (ret) {
		nb_fail("report", ret);
		return 1;
	}
	bench_report_set_verbose(b.rep, b.opt.verbose);
	ret = nb_notes(&b);
	if (!ret && b.nkernel)
		ret = bench_report_note(
			b.rep,
			"kernel rows: %u sizes from %s (sd_idabench); kernel ida ratio = kernel bitmap / kernel ida, tree vs kernel ida = kernel ida / tree",
			b.nkernel, kernel_path);
	if (!ret && (b.groups & (1u << NB_G_NAMES)))
		ret = bench_names(&b);
	if (!ret && (b.groups & (1u << NB_G_SCHEME)))
		ret = bench_schemes(&b);
	if (!ret && (b.groups & (1u << NB_G_IDX)))
		ret = bench_idx(&b);
	if (!ret && (b.groups & (1u << NB_G_REGISTRY)))
		ret = bench_registry(&b);
	if (!ret && (b.groups & (1u << NB_G_SLAB)))
		ret = bench_objects(&b);
	if (!ret)
		ret = add_targets(&b);
	bench_progress_done();
	if (!ret) {
		ret = bench_report_print(b.rep, stdout, b.opt.json);
		if (ret)
			nb_fail("stdout", ret);
	}
	bench_report_destroy(b.rep);
	return ret ? 1 : 0;
}
