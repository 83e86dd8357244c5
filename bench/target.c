// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench target: the target core in process. LUN creation time and
 * resident bytes per LUN at 262,144 LUNs, and 4 KiB random READ(16) and
 * WRITE(16) through scsi_exec() -> lun -> mem store on one core, against
 * the physical limit measured in the same run: memcpy of the same random
 * 4 KiB blocks over a working set of the same size; the READ(16) path
 * with per-LUN counters (sdswarm stats --count-luns) off and on; and the
 * configuration parser over range.N lines at two sizes, 8x apart, whose
 * time ratio says whether it is linear (8) or quadratic (64).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "config.h"
#include "lun.h"
#include "rng.h"
#include "scsi/scsi.h"

struct io_ctx {
	struct scsi_target tgt;
	struct scsi_cmd cmd;
	uint8_t cdb[16];
	uint8_t *buf;
	struct iovec iov;
	uint64_t blocks; /* working set in 4 KiB blocks */
	struct rng rng; /* the LBAs, the same every run */
	uint8_t opcode;
	uint8_t *ws; /* memcpy baseline: the working set */
};

static uint64_t rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static inline uint64_t next_block(struct io_ctx *c)
{
	return rng_below(&c->rng, c->blocks);
}

static int run_scsi(void *arg, uint64_t n)
{
	struct io_ctx *c = arg;
	uint64_t i, lba;

	for (i = 0; i < n; i++) {
		lba = next_block(c) * 8;
		c->cdb[0] = c->opcode;
		c->cdb[1] = 0;
		for (int k = 0; k < 8; k++)
			c->cdb[2 + k] = (uint8_t)(lba >> (56 - 8 * k));
		c->cdb[10] = c->cdb[11] = c->cdb[12] = 0;
		c->cdb[13] = 8;
		c->cdb[14] = c->cdb[15] = 0;
		c->cmd.status = 0;
		c->cmd.data_len = 0;
		if (scsi_exec(&c->cmd) != SCSI_DONE ||
		    c->cmd.status != SCSI_GOOD)
			return -EIO;
	}
	bench_do_not_optimize(c->buf[0]);
	return 0;
}

static int run_memcpy_read(void *arg, uint64_t n)
{
	struct io_ctx *c = arg;
	uint64_t i;

	for (i = 0; i < n; i++) {
		memcpy(c->buf, c->ws + next_block(c) * 4096, 4096);
		bench_clobber();
	}
	return 0;
}

static int run_memcpy_write(void *arg, uint64_t n)
{
	struct io_ctx *c = arg;
	uint64_t i;

	for (i = 0; i < n; i++) {
		memcpy(c->ws + next_block(c) * 4096, c->buf, 4096);
		bench_clobber();
	}
	return 0;
}

/* The LUN the per-LUN counters are turned on for: the only one. */
#define CTR_LUN 0u
/* One batch of the counters' comparison: about a millisecond, shorter
 * than a scheduler slice, so that many of them run undisturbed. */
#define CTR_BATCH_NS 1000000ull
#define CTR_MIN_PAIRS 16u

/*
 * READ(16) with per-LUN counters off and on, as one comparison: pairs of
 * ~1 ms batches of one size, off and on back to back (on first in every
 * other pair), as many pairs as fill the run's time (--reps batches of
 * >= min_ns each side, at least 16), the best batch of each kept. On a
 * shared machine the load changes from one 0.2 s batch to the next by
 * more than the counters cost; a millisecond is short enough that some
 * pairs run on an idle core, and each side's best is one of those.
 * Each counted batch must have counted every read.
 * Return: 0, -EIO when a command failed, another -errno after a message.
 */
static int measure_counters(const struct bench_cfg *cfg, struct io_ctx *c,
			    struct lun_table *t, struct bench_result *off,
			    struct bench_result *on, unsigned int *npairs)
{
	struct bench_cfg one = {.min_ns = CTR_BATCH_NS, .reps = 2};
	unsigned int pairs, i, k;
	struct bench_result cal;
	struct lun_io_stats io;
	double *s_off, *s_on;
	uint64_t n, t0, ns;
	bool counting;
	int ret;

	lun_stats_disable(t);
	ret = bench_measure(&one, run_scsi, c, &cal);
	if (ret)
		return ret;
	/* sized from the faster of two calibrating batches: a preempted
	 * first one stops the growth early */
	n = (uint64_t)((double)CTR_BATCH_NS / cal.ns_per_op) + 1;
	pairs = (unsigned int)((cfg->reps ? cfg->reps : 1) *
			       (cfg->min_ns / CTR_BATCH_NS));
	if (pairs < CTR_MIN_PAIRS)
		pairs = CTR_MIN_PAIRS;
	s_off = calloc(pairs, sizeof(*s_off));
	s_on = calloc(pairs, sizeof(*s_on));
	ret = -ENOMEM;
	if (!s_off || !s_on) {
		fprintf(stderr, "sdswarm-bench target: out of memory\n");
		goto out_free;
	}
	for (i = 0; i < pairs; i++) {
		for (k = 0; k < 2; k++) {
			counting = (i + k) & 1;
			if (counting) {
				/* from zero, as stats --count-luns 0-0 */
				ret = lun_stats_enable(t, CTR_LUN, CTR_LUN);
				if (ret) {
					fprintf(stderr,
						"sdswarm-bench target: lun_stats_enable: %s\n",
						strerror(-ret));
					goto out_free;
				}
			} else {
				lun_stats_disable(t);
			}
			t0 = bench_now_ns();
			ret = run_scsi(c, n);
			ns = bench_now_ns() - t0;
			if (ret)
				goto out_free;
			if (!counting) {
				s_off[i] = (double)ns / (double)n;
				continue;
			}
			s_on[i] = (double)ns / (double)n;
			if (lun_stats_get(t, CTR_LUN, &io) || io.reads != n ||
			    io.read_bytes != n * 4096 || io.errors) {
				fprintf(stderr,
					"sdswarm-bench target: the per-LUN counters counted %" PRIu64
					" reads of %" PRIu64 "\n",
					io.reads, n);
				ret = -EPROTO;
				goto out_free;
			}
		}
	}
	bench_result_set(off, s_off, pairs, n);
	bench_result_set(on, s_on, pairs, n);
	*npairs = pairs;
	ret = 0;
out_free:
	lun_stats_disable(t);
	free(s_off);
	free(s_on);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench target [--json] [--quick] [--reps R] [-v]\n"
		"                            [--only luns|io|config] [--luns N]\n"
		"                            [--working-set BYTES] [--ranges N]\n"
		"Groups:\n"
		"  luns  LUN creation time and resident bytes per LUN (--luns N,\n"
		"        1..1048576, default 262144; --quick 16384)\n"
		"  io    4 KiB random READ(16)/WRITE(16) through scsi_exec() on a mem\n"
		"        store over a working set (--working-set, 1 MiB..64 GiB in\n"
		"        bytes, default 1 GiB; --quick 16 MiB), each against memcpy\n"
		"        of the same random blocks over the same working set; and\n"
		"        READ(16) with per-LUN counters (stats --count-luns) off\n"
		"        and on, alternating; target: on/off below 1.05\n"
		"  config parsing and checking a configuration of N range.N lines\n"
		"        and of N/8 (--ranges N, 8..1048576, default 131072; --quick\n"
		"        8192), the lines save-config writes for N LUNs, every\n"
		"        other one offline; target: N takes below 16x the time of\n"
		"        N/8 (8x is linear, 64x quadratic)\n"
		"A size given on the command line is kept with --quick.\n");
}

/* One create-N-LUNs measurement: time and resident growth. */
static int measure_create(uint32_t nluns, struct bench_result *time,
			  double *bytes_per_lun)
{
	struct store_mem_params mp = {.chunk_size = 4096};
	struct lun_table_params tp = {.max_luns = nluns, .seed = 42};
	struct lun_group g = {.name = "bench",
			      .first = 0,
			      .count = nluns,
			      .size = 1ull << 40,
			      .block_size = 512,
			      .thin = true,
			      .lbprz = true};
	struct store *s;
	struct lun_table *t;
	uint64_t rss0, rss1, t0, t1;
	double ns;
	int ret;

	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "BENCH");
	strcpy(g.revision, "0001");
	rss0 = rss_bytes();
	ret = store_mem_create(&s, &mp);
	if (ret)
		return ret;
	tp.store = s;
	t0 = bench_now_ns();
	ret = lun_table_create(&t, &tp);
	if (!ret)
		ret = lun_group_add(t, &g) < 0 ? -EINVAL : 0;
	t1 = bench_now_ns();
	rss1 = rss_bytes();
	if (!ret) {
		ns = (double)(t1 - t0) / nluns;
		bench_result_set(time, &ns, 1, nluns);
		*bytes_per_lun = (double)(rss1 - rss0) / nluns;
		lun_table_destroy(t);
	}
	store_destroy(s);
	return ret;
}

/*
 * The "luns" group: LUN creation, a fresh table each time, best of the
 * repetitions. @bpl: out, the resident growth per LUN of that best one;
 * @create_s: out, its seconds. 0, or -1 after a message.
 */
static int luns_group(const struct bench_cfg *cfg, struct bench_report *r,
		      uint64_t luns, double *bpl, double *create_s)
{
	double best = 1e300, best_bpl = 0;
	struct bench_result res;
	unsigned int rep;

	for (rep = 0; rep < cfg->reps; rep++) {
		if (measure_create((uint32_t)luns, &res, bpl)) {
			fprintf(stderr,
				"sdswarm-bench target: creating %" PRIu64
				" LUNs failed\n",
				luns);
			return -1;
		}
		if (res.ns_per_op < best) {
			best = res.ns_per_op;
			best_bpl = *bpl;
		}
	}
	bench_result_set(&res, &best, 1, luns);
	bench_report_add(r, "luns", "create (ns per LUN)", luns, &res, NAN);
	*bpl = best_bpl;
	*create_s = best * (double)luns / 1e9;
	bench_report_note(r,
			  "created %" PRIu64
			  " LUNs in %.3f s; resident growth %.1f bytes/LUN",
			  luns, *create_s, *bpl);
	return 0;
}

/*
 * The "io" group's setup: @c's buffers, a @ws-byte working set (the
 * memcpy baseline) and a WRITE(16) command on the LUN of @t, with the
 * power-on unit attention cleared and every block of the set written
 * once. 0, or -1 after a message.
 */
static int io_prepare(struct io_ctx *c, struct lun_table *t, uint64_t ws)
{
	uint64_t lba;

	c->buf = aligned_alloc(4096, 4096);
	c->ws = aligned_alloc(4096, ws);
	if (!c->buf || !c->ws) {
		fprintf(stderr,
			"sdswarm-bench target: no memory for a %" PRIu64
			"-byte working set\n",
			ws);
		return -1;
	}
	memset(c->buf, 0x5a, 4096);
	memset(c->ws, 0xa5, ws);
	c->blocks = ws / 4096;
	c->rng = rng_init(0x2545f4914f6cdd1dull);
	c->tgt.luns = t;
	c->iov.iov_base = c->buf;
	c->iov.iov_len = 4096;
	c->cmd.tgt = &c->tgt;
	c->cmd.cdb = c->cdb;
	c->cmd.cdb_len = 16;
	c->cmd.iov = &c->iov;
	c->cmd.iovcnt = 1;
	c->cmd.xfer_len = 4096;

	/* clear the power-on unit attention, then fill the working set */
	c->cdb[0] = 0x00;
	memset(c->cdb + 1, 0, 15);
	c->cmd.cdb_len = 6;
	c->cmd.dir = SCSI_DIR_NONE;
	scsi_exec(&c->cmd);
	c->cmd.cdb_len = 16;
	c->cmd.dir = SCSI_DIR_WRITE;
	c->opcode = 0x8a; /* WRITE(16) */
	/* sequential fill so every block of the set is stored */
	for (lba = 0; lba < c->blocks * 8; lba += 8) {
		c->cdb[0] = 0x8a;
		for (int k = 0; k < 8; k++)
			c->cdb[2 + k] = (uint8_t)(lba >> (56 - 8 * k));
		c->cdb[13] = 8;
		c->cmd.status = 0;
		c->cmd.data_len = 0;
		if (scsi_exec(&c->cmd) != SCSI_DONE || c->cmd.status) {
			fprintf(stderr,
				"sdswarm-bench target: fill failed at LBA %" PRIu64
				"\n",
				lba);
			return -1;
		}
	}
	return 0;
}

/* Where the config group's generated configuration says it came from. */
#define RANGES_SOURCE "ranges.conf"
/* The config group's two sizes are this far apart. */
#define RANGES_STEP 8u

/* The config group: one generated configuration and its line count. */
struct ranges_arg {
	char *text;
	uint32_t n;
};

/*
 * A configuration of @n range.N lines, as `sdswarm save-config` writes a
 * table of @n LUNs with every other one offline: range.N = N - 1, in N's
 * order, each line its own range (no two neighbours alike, so none merge).
 * 0, or -ENOMEM.
 */
static int ranges_text(struct ranges_arg *a, uint32_t n)
{
	size_t len = 0;
	uint32_t i;
	FILE *f;

	a->n = n;
	a->text = NULL;
	f = open_memstream(&a->text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f,
		"[target]\nmax_luns = %" PRIu32
		"\n\n[luns]\nfirst = 0\ncount = 0\nsize = 1G\n",
		n);
	for (i = 1; i <= n; i++)
		fprintf(f, "range.%" PRIu32 " = %" PRIu32 "%s\n", i, i - 1,
			i % 2 ? " offline" : "");
	if (fclose(f) || !a->text) {
		free(a->text);
		a->text = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * One round: what sdswarmd --check does with the file before it builds
 * the LUN table (cfg_parse_string() and cfg_finish()), and the freeing,
 * all timed. A configuration refused (the parser's first message is
 * printed) or short of ranges is an error.
 */
static int parse_round(void *arg, uint64_t *timed_ns)
{
	const struct ranges_arg *a = arg;
	struct cfg_parser *p;
	struct cfg *c = NULL;
	const char *why;
	uint64_t t0;
	int ret;

	t0 = bench_now_ns();
	ret = cfg_parser_create(&p);
	if (ret)
		return ret;
	cfg_parse_string(p, RANGES_SOURCE, a->text);
	ret = cfg_finish(p, &c);
	if (ret) {
		why = cfg_errors(p);
		fprintf(stderr, "sdswarm-bench target: %.*s\n",
			(int)strcspn(why, "\n"), why);
	} else if (c->nranges != a->n) {
		fprintf(stderr,
			"sdswarm-bench target: %" PRIu32
			" range lines made %u ranges\n",
			a->n, c->nranges);
		ret = -EPROTO;
	}
	cfg_free(c);
	cfg_parser_destroy(p);
	*timed_ns += bench_now_ns() - t0;
	return ret;
}

/*
 * The "config" group: @big range lines and @big / 8, each a row of ns per
 * line (the larger with the smaller as its baseline: 1.0 when linear), and
 * the whole parse's time ratio as a target. 0, or -1 after a message.
 */
static int config_group(const struct bench_cfg *cfg, struct bench_report *r,
			uint32_t big)
{
	static const char rows[] = "range.N lines, parse and check (ns/line)";
	struct ranges_arg a[2] = {{0}};
	struct bench_result res[2];
	double ratio;
	unsigned int k;
	int ret = -1;

	for (k = 0; k < 2; k++) {
		uint32_t n = k ? big : big / RANGES_STEP;

		if (ranges_text(&a[k], n)) {
			fprintf(stderr,
				"sdswarm-bench target: no memory for %" PRIu32
				" range lines\n",
				n);
			goto out;
		}
		bench_progress("config: %" PRIu32 " range lines", n);
		if (bench_measure_rounds(cfg, 0, parse_round, &a[k], n,
					 &res[k])) {
			bench_progress_done();
			fprintf(stderr,
				"sdswarm-bench target: parsing %" PRIu32
				" range lines failed\n",
				n);
			goto out;
		}
	}
	bench_progress_done();
	bench_report_add(r, "config", rows, a[0].n, &res[0], NAN);
	bench_report_add(r, "config", rows, a[1].n, &res[1], res[0].ns_per_op);
	ratio = res[1].ns_per_op * a[1].n / (res[0].ns_per_op * a[0].n);
	bench_report_target(r, "range.N lines, time ratio at 8x the lines",
			    ratio, BENCH_BELOW, 2.0 * RANGES_STEP);
	bench_report_note(
		r,
		"config: %" PRIu32
		" range.N lines parsed and checked in %.3f s, %" PRIu32
		" in %.3f s: %.2fx the time for %ux the lines (linear: %u, quadratic: %u)",
		a[1].n, res[1].ns_per_op * a[1].n / 1e9, a[0].n,
		res[0].ns_per_op * a[0].n / 1e9, ratio, RANGES_STEP,
		RANGES_STEP, RANGES_STEP * RANGES_STEP);
	bench_report_detail(
		r,
		"config: cfg_parser_create(), cfg_parse_string() of the text in memory, cfg_finish() and the freeing, all timed, as sdswarmd --check reads a file before it builds the LUN table; the text is what save-config writes for a table of N LUNs with every other one offline (range.N = N-1, alternately offline, max_luns N), made untimed; the best of the repetitions of each size");
	ret = 0;
out:
	free(a[0].text);
	free(a[1].text);
	return ret;
}

/*
 * The command line: @o, the groups to run (@only, a bit each) and the
 * sizes. Return: -1 to run, else the exit status (0 after --help).
 */
static int parse(int argc, char **argv, struct bench_opts *o, uint32_t *only,
		 uint64_t *luns, uint64_t *ws, uint64_t *ranges)
{
	static const struct option lopts[] = {
		BENCH_COMMON_LONGOPTS,
		{"luns", required_argument, NULL, 'L'},
		{"working-set", required_argument, NULL, 'W'},
		{"ranges", required_argument, NULL, 'R'},
		{NULL, 0, NULL, 0},
	};
	static const char *const groups[] = {"luns", "io", "config"};
	bool have_luns = false, have_ws = false, have_ranges = false;
	int opt;

	*luns = 262144;
	*ws = 1ull << 30;
	*ranges = 131072;
	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'L':
			if (bench_parse_u64(optarg, 1, LUN_MAX_LUNS, luns)) {
				fprintf(stderr,
					"sdswarm-bench target: --luns '%s': need 1..%u\n",
					optarg, LUN_MAX_LUNS);
				return CLI_EXIT_USAGE;
			}
			have_luns = true;
			break;
		case 'W':
			if (bench_parse_u64(optarg, 1 << 20, 1ull << 36, ws)) {
				fprintf(stderr,
					"sdswarm-bench target: --working-set '%s': need 1 MiB..64 GiB in bytes\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			have_ws = true;
			break;
		case 'R':
			if (bench_parse_u64(optarg, RANGES_STEP, LUN_MAX_LUNS,
					    ranges)) {
				fprintf(stderr,
					"sdswarm-bench target: --ranges '%s': need %u..%u\n",
					optarg, RANGES_STEP, LUN_MAX_LUNS);
				return CLI_EXIT_USAGE;
			}
			have_ranges = true;
			break;
		default:
			if (bench_common_opt(o, opt, optarg, "target") != 1) {
				cli_suggest_option(stderr, argv[0], lopts,
						   argv[optind - 1]);
				usage(stderr);
				return CLI_EXIT_USAGE;
			}
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sdswarm-bench target: unexpected '%s'\n",
			argv[optind]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (bench_only(o, "target", groups, ARRAY_SIZE(groups), only))
		return CLI_EXIT_USAGE;
	if (o->quick && !have_luns)
		*luns = 16384;
	if (o->quick && !have_ws)
		*ws = 16u << 20;
	if (o->quick && !have_ranges)
		*ranges = 8192;
	return -1;
}

int bench_target(int argc, char **argv)
{
	struct bench_opts o = {0};
	struct bench_cfg cfg;
	struct bench_report *r = NULL;
	struct bench_result res, base;
	struct store_mem_params mp = {.chunk_size = 4096};
	struct lun_table_params tp = {.max_luns = 1, .seed = 7};
	struct lun_group g = {.name = "io",
			      .count = 1,
			      .size = 1ull << 40,
			      .block_size = 512,
			      .thin = true,
			      .lbprz = true,
			      .max_xfer_blocks = 65536};
	struct store *s = NULL;
	struct lun_table *t = NULL;
	struct io_ctx *c = NULL;
	uint64_t luns, ws, ranges;
	double bpl = NAN, create_s = NAN;
	uint32_t only;
	unsigned int pairs = 0;
	int err, ret;

	ret = parse(argc, argv, &o, &only, &luns, &ws, &ranges);
	if (ret >= 0)
		return ret;
	ret = 1;
	bench_cfg_init(&cfg, &o);
	if (bench_report_create(&r, "target")) {
		fprintf(stderr, "sdswarm-bench target: out of memory\n");
		return 1;
	}
	bench_report_set_verbose(r, o.verbose);

	if ((only & 1) && luns_group(&cfg, r, luns, &bpl, &create_s))
		goto out;

	if (!(only & 2))
		goto report;
	/* 4 KiB random I/O through scsi_exec on one LUN of a mem store */
	c = calloc(1, sizeof(*c));
	if (!c || store_mem_create(&s, &mp)) {
		fprintf(stderr,
			"sdswarm-bench target: cannot create the mem store\n");
		goto out;
	}
	tp.store = s;
	strcpy(g.vendor, "SDSWARM");
	strcpy(g.product, "BENCH");
	strcpy(g.revision, "0001");
	ret = lun_table_create(&t, &tp);
	if (!ret)
		ret = lun_group_add(t, &g);
	if (ret < 0) {
		fprintf(stderr,
			"sdswarm-bench target: cannot create the LUN: %s\n",
			strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 1;
	if (io_prepare(c, t, ws))
		goto out;

	c->cmd.dir = SCSI_DIR_READ;
	c->opcode = 0x88; /* READ(16) */
	if (bench_measure(&cfg, run_memcpy_read, c, &base) ||
	    bench_measure(&cfg, run_scsi, c, &res))
		goto out_io;
	bench_report_add(r, "io", "memcpy 4K random read (limit)", c->blocks,
			 &base, NAN);
	bench_report_add(r, "io", "READ(16) 4K random, mem store", c->blocks,
			 &res, base.ns_per_op);
	bench_report_target(r, "READ(16) 4K random, IOPS on one core",
			    res.ops_per_s, BENCH_AT_LEAST, 2e6);

	/* the same reads, per-LUN counters off and on */
	err = measure_counters(&cfg, c, t, &base, &res, &pairs);
	if (err == -EIO)
		goto out_io;
	if (err)
		goto out; /* said why */
	bench_report_add(r, "io", "READ(16) 4K random, per-LUN counters off",
			 c->blocks, &base, NAN);
	bench_report_add(r, "io", "READ(16) 4K random, per-LUN counters on",
			 c->blocks, &res, base.ns_per_op);
	bench_report_target(r,
			    "READ(16) 4K random, per-LUN counters on / off, ns",
			    res.ns_per_op / base.ns_per_op, BENCH_BELOW, 1.05);
	bench_report_note(
		r,
		"per-LUN counters (sdswarm stats --count-luns) on: READ(16) takes %.3fx the time with them off (%.1f ns against %.1f)",
		res.ns_per_op / base.ns_per_op, res.ns_per_op, base.ns_per_op);
	bench_report_detail(
		r,
		"per-LUN counters: the same random READ(16)s with counting off (lun_stats_disable) and on for the LUN (lun_stats_enable 0-0, what stats --count-luns 0-0 does), %u pairs of ~1 ms batches (%" PRIu64
		" reads) back to back, on first in every other pair, the best batch of each side kept (medians %.1f off, %.1f on); every counted batch checked to have counted all its reads; off pays a load and a branch a command, on adds two relaxed atomic adds",
		pairs, res.ops, base.median_ns_per_op, res.median_ns_per_op);

	c->cmd.dir = SCSI_DIR_WRITE;
	c->opcode = 0x8a;
	if (bench_measure(&cfg, run_memcpy_write, c, &base) ||
	    bench_measure(&cfg, run_scsi, c, &res))
		goto out_io;
	bench_report_add(r, "io", "memcpy 4K random write (limit)", c->blocks,
			 &base, NAN);
	bench_report_add(r, "io", "WRITE(16) 4K random, mem store", c->blocks,
			 &res, base.ns_per_op);
	bench_report_target(r, "WRITE(16) 4K random, IOPS on one core",
			    res.ops_per_s, BENCH_AT_LEAST, 2e6);

	bench_report_note(
		r,
		"working set %" PRIu64
		" MiB; ratio = memcpy ns / scsi ns: the share of the memory-copy limit reached",
		ws >> 20);
report:
	/* the config group, then the luns group's targets */
	if ((only & 4) && config_group(&cfg, r, (uint32_t)ranges))
		goto out;
	if (only & 1) {
		bench_report_target(r, "resident bytes per idle LUN", bpl,
				    BENCH_BELOW, 64.0);
		bench_report_target(r, "seconds to create the LUNs", create_s,
				    BENCH_BELOW, 1.0);
	}
	if (bench_report_print(r, stdout, o.json)) {
		fprintf(stderr,
			"sdswarm-bench target: cannot write the report\n");
		goto out;
	}
	ret = 0;
	goto out;
out_io:
	fprintf(stderr,
		"sdswarm-bench target: I/O through scsi_exec failed (status %u)\n",
		c->cmd.status);
out:
	if (c) {
		free(c->buf);
		free(c->ws);
	}
	free(c);
	lun_table_destroy(t);
	store_destroy(s);
	bench_report_destroy(r);
	return ret;
}
