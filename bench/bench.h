/* SPDX-License-Identifier: MIT */
/*
 * sdswarm-bench: what every subcommand shares. A monotonic clock, calibrated
 * timing loops that keep the best of R repetitions, an aligned text table, a
 * report that prints as that table or as one JSON object, and the barriers
 * that stop the compiler from deleting the work being measured.
 */
#ifndef SDSWARM_BENCH_H
#define SDSWARM_BENCH_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "array.h"

/*
 * The subcommands, in --help order: X(function, "name", "summary").
 *
 * Adding one is one line here, ending in a backslash like the others, e.g.
 *	X(open_all, "open-all", "open every node of a tree with io_uring") \
 * plus a bench/NAME.c that defines int bench_FUNCTION(int argc, char **argv):
 * argv[0] is "sdswarm-bench NAME" (for getopt's messages), the return value
 * is the exit status (0 done, 1 error). The line declares the function for
 * that file and enters it in sdswarm-bench.c's dispatch table; the Makefile
 * compiles every bench .c file by itself.
 */
#define BENCH_COMMANDS(X)                                                       \
	X(numbering, "numbering",                                               \
	  "names, dev_t schemes, id allocators, dev_t registry, per-disk slab") \
	X(target, "target",                                                     \
	  "LUN creation, bytes/LUN, 4K IOPS through scsi/, config parsing")     \
	X(open_all, "open-all", "io_uring open+read+close of every node")       \
	X(mktree, "mktree", "make a tree of disk/partition files (tmpfs)")      \
	X(io, "io", "random 4 KiB I/O over every disk file, io_uring")          \
	X(iscsi, "iscsi", "libiscsi client: IOPS and latency of one target")    \
	X(stress, "stress",                                                     \
	  "CI stress: verified I/O, LUN churn, faults; verdict")                \
	X(compare, "compare",                                                   \
	  "two --json runs side by side; regressions flagged")                  \
	X(stamp, "stamp",                                                       \
	  "the JSON stamp (schema, version, commit) for scripts")               \
	/* (the list ends here) */

#define BENCH_DECLARE(fn, name, summary) int bench_##fn(int argc, char **argv);
BENCH_COMMANDS(BENCH_DECLARE)
#undef BENCH_DECLARE

/* ------------------------------------------------------------------ */
/* Options every subcommand takes                                     */
/* ------------------------------------------------------------------ */

struct bench_opts {
	/* --json: one JSON object on stdout instead of the table. */
	bool json;
	/* --quick: tiny sizes and short runs, for the smoke test. */
	bool quick;
	/* --reps R: repetitions per measurement, best kept; 0 = default. */
	unsigned int reps;
	/* -v, --verbose: the notes on how it was measured (internals). */
	bool verbose;
	/* --only GROUP[,GROUP]: as given; bench_only() checks it against the
	 * command's groups. NULL: every group. */
	const char *only;
};

/* The version of the --json layout: "schema" in every report. Raised when
 * a key changes meaning or goes away (new keys do not raise it). */
#define BENCH_SCHEMA 1

/* getopt_long() values of the common options; outside the char range. */
enum {
	BENCH_OPT_JSON = 0x100,
	BENCH_OPT_QUICK,
	BENCH_OPT_REPS,
	BENCH_OPT_ONLY,
	/* The tree's options (bench_tree_opt()). */
	BENCH_OPT_DISKS,
	BENCH_OPT_PARTS,
	BENCH_OPT_SCHEME,
	BENCH_OPT_PREFIX,
};

/* The short options every subcommand takes: -h (help), -v (verbose). */
#define BENCH_SHORTOPTS "hv"

/* The common options' struct option entries (needs <getopt.h>), for a
 * subcommand's table. */
/* clang-format off */
#define BENCH_COMMON_LONGOPTS                                                \
	{ "json", no_argument, NULL, BENCH_OPT_JSON },                       \
	{ "quick", no_argument, NULL, BENCH_OPT_QUICK },                     \
	{ "reps", required_argument, NULL, BENCH_OPT_REPS },                 \
	{ "only", required_argument, NULL, BENCH_OPT_ONLY },                 \
	{ "verbose", no_argument, NULL, 'v' },                               \
	{ "help", no_argument, NULL, 'h' }
/* clang-format on */

/* Most repetitions --reps accepts. */
#define BENCH_MAX_REPS 1000u

/**
 * bench_common_opt() - apply one getopt_long() result if it is a common option.
 * @o: the options to update.
 * @opt: getopt_long()'s return value.
 * @arg: optarg.
 * @cmd: the subcommand's name, for the error message.
 *
 * 'h' (--help) is not handled here: each subcommand prints its own usage.
 *
 * Context: single-threaded option parsing.
 * Return: 1 if @opt was a common option and was applied, 0 if it is not a
 * common option, -EINVAL for a bad --reps value (a message is on stderr).
 */
int bench_common_opt(struct bench_opts *o, int opt, const char *arg,
		     const char *cmd);

/**
 * bench_only() - the groups --only selects, checked against a command's.
 * @o: the parsed options (@o->only as given, or NULL).
 * @cmd: the subcommand's name, for the messages.
 * @groups: the command's groups, in the order it runs them; NULL for a
 * command without groups (any --only is then refused).
 * @ngroups: how many there are (at most 32).
 * @mask: out, bit i set when @groups[i] is to run; all of them without
 * --only.
 *
 * A list is comma-separated names, each one of @groups (a repeated name is
 * fine); an empty list, an empty name or an unknown one is refused with
 * the list of groups and, when one is close, "did you mean".
 *
 * Context: single-threaded option checking.
 * Return: 0, or -EINVAL after a message on stderr (a usage error).
 */
int bench_only(const struct bench_opts *o, const char *cmd,
	       const char *const *groups, unsigned int ngroups, uint32_t *mask);

/**
 * bench_parse_list() - a comma-separated list of whole decimal numbers.
 * @s: the text ("256,4096"); no spaces, no empty entry.
 * @min: smallest value accepted.
 * @max: largest value accepted (inclusive).
 * @out: out, the values, in the order given.
 * @maxn: room in @out.
 * @n: out, how many were given.
 *
 * Context: any.
 * Return: 0, -EINVAL for an entry that is not a number or an empty one,
 * -ERANGE for one outside @min..@max, -E2BIG for more than @maxn.
 */
int bench_parse_list(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		     unsigned int maxn, unsigned int *n);

/**
 * bench_parse_u64() - a whole decimal number in a range.
 * @s: the text; no sign, no spaces, no suffix.
 * @min: smallest value accepted.
 * @max: largest value accepted (inclusive).
 * @out: out, the value; written only on success.
 *
 * Context: any.
 * Return: 0, -EINVAL for text that is not a number, -ERANGE outside
 * @min..@max.
 */
int bench_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/**
 * bench_parse_double() - a decimal number (a fraction, an exponent) in a
 * range: seconds, percentages, figures read back from a file.
 * @s: the text; strtod()'s syntax, nothing after the number.
 * @min: smallest value accepted.
 * @max: largest value accepted (inclusive); INFINITY accepts "inf".
 * @out: out, the value; written only on success.
 *
 * Context: any.
 * Return: 0, or -EINVAL for text that is not a number, one strtod() cannot
 * hold (ERANGE), NaN, or a value outside @min..@max.
 */
int bench_parse_double(const char *s, double min, double max, double *out);

/**
 * bench_err() - "sdswarm-bench CMD: " and the message, one line on stderr,
 * after clearing the progress line.
 * @cmd: the subcommand's name ("open-all").
 * @fmt: printf format.
 *
 * Context: single-threaded, as the progress line is.
 */
void bench_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* A tree of disk and partition nodes (open-all, mktree, io)          */
/* ------------------------------------------------------------------ */

struct sdnum_scheme;

/* Disk indices sdnum can name: 0..INT_MAX. */
#define BENCH_TREE_MAX_DISKS (1ull << 31)
/* The partitions a disk has when --parts is not given: the classic 16
 * minors per disk, a whole disk and 15 partitions. */
#define BENCH_TREE_PARTS 15u

/* --disks, --parts, --scheme and --prefix, as given. */
struct bench_tree_opts {
	/* Driver prefix of the names; "sd" unless --prefix. */
	const char *prefix;
	/* --scheme: the dev_t scheme N and P must fit; NULL: any. */
	const struct sdnum_scheme *scheme;
	bool have_disks;
	uint64_t ndisks;
	bool have_parts;
	unsigned int parts;
};

/**
 * bench_tree_opt() - apply one getopt_long() result if it names the tree:
 * BENCH_OPT_DISKS (1..BENCH_TREE_MAX_DISKS), BENCH_OPT_PARTS (0..255),
 * BENCH_OPT_SCHEME (an sdnum scheme's name) or BENCH_OPT_PREFIX (1..32
 * characters, no '/').
 * @cmd: the subcommand's name, for the error message.
 * @t: the options to update.
 * @opt: getopt_long()'s return value.
 * @arg: optarg.
 *
 * Context: single-threaded option parsing.
 * Return: 1 if @opt was one of them and was applied, 0 if it is not one of
 * them, -EINVAL for a bad value (a message is on stderr).
 */
int bench_tree_opt(const char *cmd, struct bench_tree_opts *t, int opt,
		   const char *arg);

/**
 * bench_opendir_at() - a DIR over @dirfd's folder, on a descriptor of its
 * own (closedir() leaves @dirfd open).
 * @dirfd: the folder.
 * @out: the DIR.
 *
 * Return: 0, or -errno.
 */
int bench_opendir_at(int dirfd, DIR **out);

/**
 * bench_tree_check() - --disks and --parts against --scheme: every disk
 * index must have a number in the scheme, and so must every partition.
 * @cmd: the subcommand's name, for the error message.
 * @t: the parsed options.
 *
 * Context: single-threaded option checking.
 * Return: 0, or -EINVAL after a message on stderr.
 */
int bench_tree_check(const char *cmd, const struct bench_tree_opts *t);

/*
 * The nodes of a tree. Listed (bench_tree_readdir()): @keys holds the
 * sorted (disk << 8 | partition) keys of what was found. Generated (@keys
 * NULL, as --disks makes them): node i is disk i / (@parts + 1), partition
 * i % (@parts + 1), 0 being the whole disk, and @count is @ndisks *
 * (@parts + 1).
 */
struct bench_tree {
	const char *prefix;
	uint64_t ndisks;
	unsigned int parts;
	uint64_t *keys;
	uint64_t count;
	/* Entries a readdir passed over: other names, other file types. */
	uint64_t skipped;
};

/**
 * bench_tree_name() - the name of node @i ("sda", "sdb3").
 * @t: the tree.
 * @i: the node, 0..@t->count - 1 inclusive.
 * @buf: out, the name.
 * @len: room in @buf; SDNUM_NAME_MAX always suffices.
 *
 * Context: any.
 * Return: as sdnum_name_part(): the name's length, or -errno.
 */
int bench_tree_name(const struct bench_tree *t, uint64_t i, char *buf,
		    size_t len);

/**
 * bench_tree_readdir() - list a folder's disk and partition nodes.
 * @t: @t->prefix set; @t->keys NULL or from an earlier listing (it is
 *	reused); out, @t->keys, @t->count and @t->skipped.
 * @dirfd: the folder, read through a descriptor of its own.
 * @disks_only: keep whole disks only (partitions count as skipped).
 *
 * An entry is kept when it is a disk or partition name of @t->prefix as
 * the kernel gives them (sdnum_parse() is strict) and a block device or a
 * regular file. O(entries log entries).
 *
 * Context: allocates; the caller frees @t->keys.
 * Return: 0; -ENOMEM or the -errno of opening or reading the folder, with
 * @t->keys freed (NULL) and @t->count 0.
 */
int bench_tree_readdir(struct bench_tree *t, int dirfd, bool disks_only);

/**
 * bench_tree_tmpfs() - whether a tree's folder is on tmpfs: the reference,
 * the kernel's own VFS cost with no driver below it.
 * @dirfd: the folder.
 *
 * Context: any.
 * Return: true on tmpfs; false elsewhere or when fstatfs() fails.
 */
bool bench_tree_tmpfs(int dirfd);

/* ------------------------------------------------------------------ */
/* Plots (gnuplot)                                                    */
/* ------------------------------------------------------------------ */

/*
 * A plot in the making: a private temporary folder ($TMPDIR, else /tmp)
 * that holds its data files and its gnuplot script, all removed by
 * bench_plot_destroy(). A subcommand writes what its figure shows; this
 * writes the terminal, quotes, and runs gnuplot.
 */
struct bench_plot;

/**
 * bench_plot_available() - whether gnuplot is an executable file in a
 * $PATH directory (checked before measuring, so --plot fails at once).
 *
 * Context: any.
 * Return: true when it is.
 */
bool bench_plot_available(void);

/**
 * bench_plot_create() - make the plot's temporary folder.
 * @out: out, the plot.
 *
 * Context: allocates; creates a folder.
 * Return: 0, -ENOMEM, or mkdtemp()'s -errno.
 */
int bench_plot_create(struct bench_plot **out);

/**
 * bench_plot_destroy() - remove the files made and the folder, and free
 * the plot. NULL is a no-op.
 * @p: the plot.
 */
void bench_plot_destroy(struct bench_plot *p);

/**
 * bench_plot_file() - create a file in the plot's folder, for writing.
 * @p: the plot.
 * @name: the file's name, 1..31 characters, no '/' ("hist.dat").
 * @out: out, the open file; the caller fcloses it (and checks that).
 *
 * Context: allocates.
 * Return: 0; -EINVAL for a bad @name, -E2BIG past 8 files, fopen()'s
 * -errno.
 */
int bench_plot_file(struct bench_plot *p, const char *name, FILE **out);

/**
 * bench_plot_quote() - @s as a gnuplot single-quoted string (a quote in
 * it is doubled).
 * @f: the script.
 * @s: the text.
 */
void bench_plot_quote(FILE *f, const char *s);

/**
 * bench_plot_quote_file() - the path of a file of the plot's folder, as
 * bench_plot_quote() writes it (for a plot command's data).
 * @f: the script.
 * @p: the plot.
 * @name: the file's name, as given to bench_plot_file().
 */
void bench_plot_quote_file(FILE *f, const struct bench_plot *p,
			   const char *name);

/**
 * bench_plot_png() - a script's first lines: a PNG terminal (pngcairo when
 * gnuplot has it, else png) of @width x @height pixels, and "set output
 * PNG" (no newline after it).
 * @f: the script.
 * @png: the PNG file to write.
 * @width: pixels.
 * @height: pixels.
 */
void bench_plot_png(FILE *f, const char *png, unsigned int width,
		    unsigned int height);

/**
 * bench_plot_run() - run gnuplot on a script of the plot's folder, with its
 * stdout sent to stderr (our stdout may be JSON), and wait for it.
 * @p: the plot.
 * @script: the script's name, as given to bench_plot_file() (closed).
 *
 * Context: forks and waits.
 * Return: 0, -ECHILD when gnuplot failed (exit status or signal), or the
 * -errno of starting or waiting for it.
 */
int bench_plot_run(const struct bench_plot *p, const char *script);

/* ------------------------------------------------------------------ */
/* Time and the compiler                                              */
/* ------------------------------------------------------------------ */

/**
 * bench_now_ns() - CLOCK_MONOTONIC in nanoseconds.
 *
 * Costs about 20 ns through the vDSO; time batches, not single operations.
 *
 * Context: any.
 * Return: nanoseconds since an arbitrary fixed point.
 */
uint64_t bench_now_ns(void);

/*
 * bench_do_not_optimize() - make the compiler believe @v is used, so that the
 * computation producing it cannot be deleted. Costs no instruction beyond
 * keeping @v in a register or in memory.
 */
#define bench_do_not_optimize(v) __asm__ volatile("" : : "r,m"(v))

/*
 * bench_clobber() - make the compiler believe all memory was read and written
 * here, so stores before it happen and loads after it are not hoisted.
 */
static inline void bench_clobber(void)
{
	__asm__ volatile("" : : : "memory");
}

/* ------------------------------------------------------------------ */
/* Timing loops                                                       */
/* ------------------------------------------------------------------ */

/*
 * How long to measure. A batch of operations runs until it lasts at least
 * min_ns or reaches max_ops; reps batches are timed and the best kept: on a
 * shared machine noise only ever adds time, so the minimum is the estimate
 * closest to the code's own cost.
 */
struct bench_cfg {
	uint64_t min_ns;
	/* 0: no cap. Bounds operations that cost milliseconds each. */
	uint64_t max_ops;
	unsigned int reps;
};

/* Defaults: >= 0.2 s batches, best of 3; --quick: >= 2 ms, best of 2. */
#define BENCH_MIN_NS 200000000ull
#define BENCH_QUICK_MIN_NS 2000000ull
#define BENCH_REPS 3u
#define BENCH_QUICK_REPS 2u

/**
 * bench_cfg_init() - the timing configuration the options ask for.
 * @cfg: out.
 * @o: parsed options (--quick, --reps).
 *
 * Context: any.
 */
void bench_cfg_init(struct bench_cfg *cfg, const struct bench_opts *o);

struct bench_result {
	/* Best (lowest) ns per operation over the repetitions. */
	double ns_per_op;
	/* Median over the repetitions: how noisy the best one was. */
	double median_ns_per_op;
	/* 1e9 / ns_per_op. */
	double ops_per_s;
	/* Operations per repetition. */
	uint64_t ops;
	unsigned int reps;
};

/*
 * A measured operation: perform @n iterations (the loop lives in the callee,
 * so the indirect call is paid once per batch, not per operation).
 * Return: 0, or -errno to abort the measurement.
 */
typedef int (*bench_fn)(void *arg, uint64_t n);

/**
 * bench_measure() - the calibrated loop: ns per operation of @fn.
 * @cfg: batch length, op cap and repetitions.
 * @fn: runs n operations.
 * @arg: passed to @fn.
 * @out: out, the result.
 *
 * Calibrates by growing n (extrapolating from the last batch's time) until a
 * batch lasts >= @cfg->min_ns or reaches @cfg->max_ops; that batch is the
 * first repetition, and @cfg->reps - 1 more of the same n follow.
 *
 * Context: runs @fn on the calling thread.
 * Return: 0, or what @fn returned when it failed (@out is then unset).
 */
int bench_measure(const struct bench_cfg *cfg, bench_fn fn, void *arg,
		  struct bench_result *out);

/*
 * One round of an operation that needs untimed setup around it (create an
 * allocator, fill it, destroy it). The callee times only the part that is
 * measured, adds those nanoseconds to *@timed_ns, and returns 0 or -errno.
 */
typedef int (*bench_round_fn)(void *arg, uint64_t *timed_ns);

/**
 * bench_measure_rounds() - ns per operation over rounds with untimed setup.
 * @cfg: batch length (of timed time) and repetitions; max_ops is ignored.
 * @reps: repetitions, overriding @cfg->reps; 0 uses @cfg->reps. A round that
 * costs seconds (the bitmap baseline at a million ids) is run once: @reps 1.
 * @fn: one round.
 * @arg: passed to @fn.
 * @ops_per_round: operations one round performs.
 * @out: out, the result.
 *
 * A repetition runs rounds until their timed parts add up to @cfg->min_ns,
 * or the wall time (setup included) reaches twice that, and at least one.
 *
 * Context: runs @fn on the calling thread.
 * Return: 0, -EINVAL for @ops_per_round 0, or what @fn returned.
 */
int bench_measure_rounds(const struct bench_cfg *cfg, unsigned int reps,
			 bench_round_fn fn, void *arg, uint64_t ops_per_round,
			 struct bench_result *out);

/**
 * bench_result_set() - fill a result from per-repetition ns/op samples.
 * @out: out.
 * @samples: ns per operation of each repetition; reordered (sorted).
 * @n: number of samples, >= 1.
 * @ops: operations per repetition.
 *
 * Context: any.
 */
void bench_result_set(struct bench_result *out, double *samples, size_t n,
		      uint64_t ops);

/**
 * bench_percentile() - the @p-th percentile of @v.
 * @v: values; sorted in place.
 * @n: number of values.
 * @p: 0..100 inclusive; 50 is the median.
 *
 * Linear interpolation between the two closest ranks, so 0 is the minimum,
 * 100 the maximum, and the median of an even count is the mean of the middle
 * two. O(n log n).
 *
 * Context: any.
 * Return: the percentile; NAN for @n 0 or @p outside 0..100.
 */
double bench_percentile(double *v, size_t n, double p);

/* ------------------------------------------------------------------ */
/* Progress                                                           */
/* ------------------------------------------------------------------ */

/**
 * bench_progress() - say what is being measured, on one line of stderr that
 * the next call overwrites; nothing at all unless stderr is a terminal.
 * @fmt: printf format.
 *
 * Context: single-threaded.
 */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * bench_progress_bar() - a bar of @done out of @total, with the rate so far,
 * as bench_progress() draws it; drawn only once the work has lasted 2 s
 * (short runs do not flicker) and then at most every 200 ms.
 * @what: what is being done ("mktree").
 * @done: items done.
 * @total: items in all.
 * @t0: bench_now_ns() when the work began.
 * @now: bench_now_ns() now.
 * @last: when the bar was last drawn; 0 at first, updated.
 *
 * Context: single-threaded.
 */
void bench_progress_bar(const char *what, uint64_t done, uint64_t total,
			uint64_t t0, uint64_t now, uint64_t *last);

/**
 * bench_progress_done() - clear the progress line (if one was drawn).
 *
 * Context: single-threaded.
 */
void bench_progress_done(void);

/* ------------------------------------------------------------------ */
/* Aligned text tables                                                */
/* ------------------------------------------------------------------ */

struct bench_table;

/**
 * bench_table_create() - an empty table; its first row is the header.
 * @out: out, the table.
 * @ncols: columns, >= 1.
 * @align: one character per column, 'l' (text) or 'r' (numbers).
 *
 * Context: allocates.
 * Return: 0, -EINVAL for @ncols 0 or an @align of the wrong length or with
 * other characters, -ENOMEM.
 */
int bench_table_create(struct bench_table **out, unsigned int ncols,
		       const char *align);

/**
 * bench_table_destroy() - free a table. NULL is a no-op.
 * @t: the table.
 */
void bench_table_destroy(struct bench_table *t);

/**
 * bench_table_add() - append the next cell, filling rows left to right.
 * @t: the table.
 * @fmt: printf format of the cell's text.
 *
 * Context: allocates.
 * Return: 0, -ENOMEM.
 */
int bench_table_add(struct bench_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * bench_table_print() - print with every column as wide as its widest cell,
 * two spaces between columns and a dashed line under the header.
 * @t: the table; a last, partial row is padded with empty cells.
 * @f: where to print.
 *
 * Context: any.
 * Return: 0, -EIO if writing failed.
 */
int bench_table_print(const struct bench_table *t, FILE *f);

/* ------------------------------------------------------------------ */
/* Reports: the table, targets, and JSON                              */
/* ------------------------------------------------------------------ */

/* The machine a run was on. */
struct bench_machine {
	long nproc;
	/* /proc/cpuinfo's "model name" (or "Hardware", "cpu model"), else
	 * "unknown". */
	char cpu_model[128];
};

/**
 * bench_machine_get() - describe this machine.
 * @m: out.
 *
 * Context: reads /proc/cpuinfo.
 */
void bench_machine_get(struct bench_machine *m);

/**
 * bench_meminfo() - fields of /proc/meminfo, in KiB, from one read of it.
 * @keys: the fields' names, without the colon ("Slab", "MemAvailable").
 * @n: how many.
 * @kib: out, @kib[i] the value of @keys[i]; 0 for a field not there, and
 * all 0 when the file cannot be read.
 *
 * Context: any; reads /proc/meminfo.
 */
void bench_meminfo(const char *const *keys, unsigned int n, uint64_t *kib);

/* How a target's value is judged against its limit. */
enum bench_cmp {
	/* met when value < limit (a cost). */
	BENCH_BELOW,
	/* met when value >= limit (a speedup). */
	BENCH_AT_LEAST,
};

struct bench_report;

/**
 * bench_report_create() - an empty report.
 * @out: out, the report.
 * @bench: the benchmark's name, the JSON "bench" key ("numbering").
 *
 * Context: allocates; reads /proc/cpuinfo.
 * Return: 0, -EINVAL for a NULL or empty @bench, -ENOMEM.
 */
int bench_report_create(struct bench_report **out, const char *bench);

/**
 * bench_report_destroy() - free a report. NULL is a no-op.
 * @r: the report.
 */
void bench_report_destroy(struct bench_report *r);

/**
 * bench_report_note() - a line printed under the report's heading (and in
 * JSON's "notes"): how it was measured, what was skipped.
 * @r: the report.
 * @fmt: printf format.
 *
 * Context: allocates.
 * Return: 0, -ENOMEM.
 */
int bench_report_note(struct bench_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * bench_report_detail() - a note on the internals of the measurement (ring
 * flags, kernel probes, what a latency spans): printed in the text report
 * only with -v (a line says how many were left out), always in JSON's
 * "notes".
 * @r: the report.
 * @fmt: printf format.
 *
 * Context: allocates.
 * Return: 0, -ENOMEM.
 */
int bench_report_detail(struct bench_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * bench_report_set_verbose() - print the detail notes in the text report.
 * @r: the report.
 * @verbose: -v was given.
 */
void bench_report_set_verbose(struct bench_report *r, bool verbose);

/**
 * bench_report_noisy() - mark the report's figures as too noisy to judge
 * (measured on too little to mean anything): a note says why, every target
 * prints "(noisy)" after its result, and JSON has "noisy": true at the top
 * and in each target.
 * @r: the report.
 * @fmt: printf format of why.
 *
 * Context: allocates.
 * Return: 0, -ENOMEM.
 */
int bench_report_noisy(struct bench_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * bench_report_add() - one result row.
 * @r: the report.
 * @group: the row's group ("idx"); copied.
 * @name: the case ("fill tree"); copied.
 * @n: the size measured at (ids, disks, objects).
 * @res: the measurement.
 * @baseline_ns: the baseline's ns/op measured in the same run, for the
 * speedup column (baseline / @res->ns_per_op); NAN for a row that has none.
 *
 * Context: allocates.
 * Return: 0, -EINVAL for a NULL argument, -ENOMEM.
 */
int bench_report_add(struct bench_report *r, const char *group,
		     const char *name, uint64_t n,
		     const struct bench_result *res, double baseline_ns);

/**
 * bench_report_target() - a goal checked and reported, never asserted.
 * @r: the report.
 * @name: what is judged ("name generation, ns/op"); copied.
 * @value: the measured value; NAN when this run did not measure it (the
 * target prints "not measured" and JSON has null value and met).
 * @cmp: BENCH_BELOW or BENCH_AT_LEAST.
 * @limit: the goal.
 *
 * Context: allocates.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int bench_report_target(struct bench_report *r, const char *name, double value,
			enum bench_cmp cmp, double limit);

/**
 * bench_report_print() - the report as text or as JSON.
 * @r: the report.
 * @f: where to print.
 * @json: one JSON object, {"schema" (BENCH_SCHEMA), "tool": "sdswarm-bench",
 * "version" (the build's), "commit" (40 hex digits, or null outside git),
 * "bench", "noisy", "machine": {"nproc", "cpu_model"}, "notes", "results": [{"group", "case", "n", "ns_per_op",
 * "median_ns_per_op", "ops_per_s", "reps", "baseline_ns_per_op", "ratio"}],
 * "targets": [{"name", "value", "cmp", "limit", "met", "noisy"}]}; otherwise a
 * heading, the notes, the results table and a targets section. Values that
 * do not exist (no baseline, not measured) are JSON null and "-" in text.
 *
 * Context: allocates while formatting.
 * Return: 0, -ENOMEM, -EIO if writing failed.
 */
int bench_report_print(const struct bench_report *r, FILE *f, bool json);

struct json_t;

/**
 * bench_json_stamp() - what every JSON this program prints begins with:
 * "schema" (BENCH_SCHEMA), "tool" ("sdswarm-bench"), "version" (the
 * build's) and "commit" (40 hex digits, null outside git).
 * @obj: a jansson object; the keys are set (replaced if there).
 *
 * Return: 0, -ENOMEM.
 */
int bench_json_stamp(struct json_t *obj);

/**
 * bench_jnum() - a JSON number, or null for NaN and infinities (which JSON
 * cannot hold: a figure that was not measured).
 * @v: the value.
 *
 * Return: a new reference, NULL when out of memory.
 */
struct json_t *bench_jnum(double v);

/**
 * bench_jset() - json_object_set_new() with one check for everything: it
 * takes @v even when it fails, and fails on a NULL @v, so a constructor that
 * failed is caught here too.
 * @o: the object.
 * @key: the key.
 * @v: the value (consumed).
 *
 * Return: 0, -ENOMEM.
 */
int bench_jset(struct json_t *o, const char *key, struct json_t *v);

/**
 * bench_report_print_json() - the report as JSON, as bench_report_print()
 * prints it, with @extra's keys (a jansson object: a command's own figures)
 * after the common ones.
 * @r: the report.
 * @f: where to.
 * @extra: an object whose keys are added (a key of the report's own is
 *	replaced); NULL adds nothing. Not consumed.
 *
 * Return: 0, -ENOMEM, -EIO if writing failed.
 */
int bench_report_print_json(const struct bench_report *r, FILE *f,
			    struct json_t *extra);

#endif /* SDSWARM_BENCH_H */
