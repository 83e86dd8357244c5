// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench's shared helpers: options, the clock, the calibrated timing
 * loops, text tables, and the report that prints as a table or JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "array.h"
#include "bench.h"
#include "cli.h"
#include "parse.h"

/* ---- options ------------------------------------------------------- */

int bench_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	ret = parse_u64(s, 10, max, &v);
	if (ret)
		return ret;
	if (v < min)
		return -ERANGE;
	*out = v;
	return 0;
}

int bench_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* !(v >= min): NaN compares false both ways. */
	if (errno || end == s || *end || !(v >= min) || !(v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

void bench_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	bench_progress_done();
	fprintf(stderr, "sdswarm-bench %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int bench_common_opt(struct bench_opts *o, int opt, const char *arg,
		     const char *cmd)
{
	uint64_t v;

	switch (opt) {
	case BENCH_OPT_JSON:
		o->json = true;
		return 1;
	case BENCH_OPT_QUICK:
		o->quick = true;
		return 1;
	case BENCH_OPT_REPS:
		if (bench_parse_u64(arg, 1, BENCH_MAX_REPS, &v)) {
			fprintf(stderr,
				"sdswarm-bench %s: --reps '%s': need 1..%u\n",
				cmd, arg, BENCH_MAX_REPS);
			return -EINVAL;
		}
		o->reps = (unsigned int)v;
		return 1;
	case BENCH_OPT_ONLY:
		o->only = arg;
		return 1;
	case 'v':
		o->verbose = true;
		return 1;
	default:
		return 0;
	}
}

int bench_parse_list(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		     unsigned int maxn, unsigned int *n)
{
	char buf[32];
	const char *p = s, *comma;
	unsigned int k = 0;
	size_t len;
	int ret;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!len || len >= sizeof(buf))
			return -EINVAL;
		if (k == maxn)
			return -E2BIG;
		memcpy(buf, p, len);
		buf[len] = '\0';
		ret = bench_parse_u64(buf, min, max, &out[k]);
		if (ret)
			return ret;
		k++;
		if (!comma)
			break;
		p = comma + 1;
	}
	*n = k;
	return 0;
}

/* "a, b, c" for a message. */
static void groups_str(char *buf, size_t len, const char *const *groups,
		       unsigned int n)
{
	size_t used = 0;
	unsigned int i;
	int w;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			     groups[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

int bench_only(const struct bench_opts *o, const char *cmd,
	       const char *const *groups, unsigned int ngroups, uint32_t *mask)
{
	char list[256], word[64];
	const char *p, *comma, *best;
	unsigned int i;
	size_t len;
	uint32_t m = 0;

	if (!o->only) {
		*mask = ngroups >= 32 ? UINT32_MAX : (1u << ngroups) - 1;
		return 0;
	}
	if (!groups || !ngroups) {
		fprintf(stderr,
			"sdswarm-bench %s: --only: this command has no groups to choose from (the commands that have: numbering, target)\n",
			cmd);
		return -EINVAL;
	}
	groups_str(list, sizeof(list), groups, ngroups);
	p = o->only;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!len) {
			fprintf(stderr,
				"sdswarm-bench %s: --only '%s': an empty group name; groups: %s\n",
				cmd, o->only, list);
			return -EINVAL;
		}
		if (len >= sizeof(word))
			len = sizeof(word) - 1;
		memcpy(word, p, len);
		word[len] = '\0';
		for (i = 0; i < ngroups; i++)
			if (!strcmp(word, groups[i]))
				break;
		if (i == ngroups) {
			best = cli_suggest(word, groups, ngroups);
			if (best)
				fprintf(stderr,
					"sdswarm-bench %s: --only: no group '%s' (did you mean %s?); groups: %s\n",
					cmd, word, best, list);
			else
				fprintf(stderr,
					"sdswarm-bench %s: --only: no group '%s'; groups: %s\n",
					cmd, word, list);
			return -EINVAL;
		}
		m |= 1u << i;
		if (!comma)
			break;
		p = comma + 1;
	}
	*mask = m;
	return 0;
}

void bench_cfg_init(struct bench_cfg *cfg, const struct bench_opts *o)
{
	cfg->min_ns = o->quick ? BENCH_QUICK_MIN_NS : BENCH_MIN_NS;
	cfg->max_ops = 0;
	cfg->reps = o->quick ? BENCH_QUICK_REPS : BENCH_REPS;
	if (o->reps)
		cfg->reps = o->reps;
}

/* ---- time ---------------------------------------------------------- */

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid pointer; no check. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- statistics ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_percentile(double *v, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (!n || !(p >= 0.0 && p <= 100.0))
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	if (lo >= n - 1)
		return v[n - 1];
	frac = rank - (double)lo;
	return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void bench_result_set(struct bench_result *out, double *samples, size_t n,
		      uint64_t ops)
{
	out->median_ns_per_op = bench_percentile(samples, n, 50.0);
	/* Sorted by bench_percentile(): the best is first. */
	out->ns_per_op = samples[0];
	out->ops_per_s = out->ns_per_op > 0 ? 1e9 / out->ns_per_op : INFINITY;
	out->ops = ops;
	out->reps = (unsigned int)n;
}

/* ---- timing loops -------------------------------------------------- */

/* Calibration batches shorter than this are too close to the clock's own
 * cost and jitter to extrapolate from; they only double n. */
#define CALIBRATE_MIN_NS 1000000ull

static int time_batch(bench_fn fn, void *arg, uint64_t n, uint64_t *ns)
{
	uint64_t t0, t1;
	int ret;

	t0 = bench_now_ns();
	ret = fn(arg, n);
	t1 = bench_now_ns();
	*ns = t1 - t0;
	return ret;
}

int bench_measure(const struct bench_cfg *cfg, bench_fn fn, void *arg,
		  struct bench_result *out)
{
	unsigned int reps = cfg->reps ? cfg->reps : 1, i;
	uint64_t n = 1, ns, next;
	double *samples;
	int ret;

	samples = calloc(reps, sizeof(*samples));
	if (!samples)
		return -ENOMEM;

	for (;;) {
		if (cfg->max_ops && n > cfg->max_ops)
			n = cfg->max_ops;
		ret = time_batch(fn, arg, n, &ns);
		if (ret)
			goto out_free;
		if (ns >= cfg->min_ns || (cfg->max_ops && n >= cfg->max_ops))
			break;
		/* An operation the compiler reduced to nothing would
		 * otherwise double n until it overflows. */
		if (n >= UINT64_MAX / 16)
			break;
		if (ns < CALIBRATE_MIN_NS) {
			n *= 2;
			continue;
		}
		/* Aim 10% past the goal so the next batch is the last; grow
		 * at most 10x so one slow batch does not overshoot wildly. */
		next = (uint64_t)((double)n * 1.1 * (double)cfg->min_ns /
				  (double)ns) +
		       1;
		n = next > n * 10 ? n * 10 : next;
	}
	samples[0] = (double)ns / (double)n;
	for (i = 1; i < reps; i++) {
		ret = time_batch(fn, arg, n, &ns);
		if (ret)
			goto out_free;
		samples[i] = (double)ns / (double)n;
	}
	bench_result_set(out, samples, reps, n);
	ret = 0;
out_free:
	free(samples);
	return ret;
}

int bench_measure_rounds(const struct bench_cfg *cfg, unsigned int reps,
			 bench_round_fn fn, void *arg, uint64_t ops_per_round,
			 struct bench_result *out)
{
	uint64_t timed, wall0, rounds;
	double *samples;
	unsigned int i;
	int ret;

	if (!ops_per_round)
		return -EINVAL;
	if (!reps)
		reps = cfg->reps ? cfg->reps : 1;
	samples = calloc(reps, sizeof(*samples));
	if (!samples)
		return -ENOMEM;

	for (i = 0; i < reps; i++) {
		timed = 0;
		rounds = 0;
		wall0 = bench_now_ns();
		do {
			ret = fn(arg, &timed);
			if (ret)
				goto out_free;
			rounds++;
		} while (timed < cfg->min_ns &&
			 bench_now_ns() - wall0 < 2 * cfg->min_ns);
		samples[i] = (double)timed /
			     ((double)rounds * (double)ops_per_round);
	}
	bench_result_set(out, samples, reps, ops_per_round);
	ret = 0;
out_free:
	free(samples);
	return ret;
}

/* ---- progress ------------------------------------------------------ */

/* The bar waits this long, so short runs do not flicker, and is redrawn at
 * most this often. */
#define BENCH_PROGRESS_AFTER_NS 2000000000ull
#define BENCH_PROGRESS_EVERY_NS 200000000ull

static bool progress_drawn;

void bench_progress(const char *fmt, ...)
{
	va_list ap;

	if (!isatty(STDERR_FILENO))
		return;
	/* \r and erase-line: the next message replaces this one. */
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_drawn = true;
}

void bench_progress_done(void)
{
	if (!progress_drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_drawn = false;
}

void bench_progress_bar(const char *what, uint64_t done, uint64_t total,
			uint64_t t0, uint64_t now, uint64_t *last)
{
	char bar[33];
	unsigned int fill, i;
	double secs;

	if (now - t0 < BENCH_PROGRESS_AFTER_NS ||
	    now - *last < BENCH_PROGRESS_EVERY_NS)
		return;
	*last = now;
	fill = total ? (unsigned int)(done * 32 / total) : 32;
	for (i = 0; i < 32; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[32] = '\0';
	secs = (double)(now - t0) / 1e9;
	bench_progress("%s [%s] %3u%% %" PRIu64 "/%" PRIu64 " %.0f/s", what,
		       bar, total ? (unsigned int)(done * 100 / total) : 100,
		       done, total, (double)done / secs);
}

/* ---- text tables --------------------------------------------------- */

struct bench_table {
	unsigned int ncols;
	char *align;
	char **cells;
	size_t ncells, cap;
};

int bench_table_create(struct bench_table **out, unsigned int ncols,
		       const char *align)
{
	struct bench_table *t;
	unsigned int i;

	if (!ncols || !align || strlen(align) != ncols)
		return -EINVAL;
	for (i = 0; i < ncols; i++)
		if (align[i] != 'l' && align[i] != 'r')
			return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->align = strdup(align);
	if (!t->align) {
		free(t);
		return -ENOMEM;
	}
	t->ncols = ncols;
	*out = t;
	return 0;
}

void bench_table_destroy(struct bench_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->align);
	free(t);
}

static int table_vadd(struct bench_table *t, const char *fmt, va_list ap)
{
	char **cells;
	char *s;

	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		cells = realloc(t->cells, cap * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	t->cells[t->ncells++] = s;
	return 0;
}

int bench_table_add(struct bench_table *t, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = table_vadd(t, fmt, ap);
	va_end(ap);
	return ret;
}

int bench_table_print(const struct bench_table *t, FILE *f)
{
	size_t *width, rows, r, len;
	unsigned int c;
	const char *cell;
	int ret = 0;

	width = calloc(t->ncols, sizeof(*width));
	if (!width)
		return -ENOMEM;
	for (r = 0; r < t->ncells; r++) {
		len = strlen(t->cells[r]);
		if (len > width[r % t->ncols])
			width[r % t->ncols] = len;
	}
	rows = (t->ncells + t->ncols - 1) / t->ncols;
	for (r = 0; r < rows; r++) {
		for (c = 0; c < t->ncols; c++) {
			size_t k = r * t->ncols + c;
			bool last = c + 1 == t->ncols;

			cell = k < t->ncells ? t->cells[k] : "";
			if (t->align[c] == 'r')
				fprintf(f, "%*s", (int)width[c], cell);
			else if (last)
				fputs(cell, f);
			else
				fprintf(f, "%-*s", (int)width[c], cell);
			fputs(last ? "\n" : "  ", f);
		}
		if (r)
			continue;
		for (c = 0; c < t->ncols; c++) {
			for (len = 0; len < width[c]; len++)
				fputc('-', f);
			fputs(c + 1 == t->ncols ? "\n" : "  ", f);
		}
	}
	free(width);
	if (ferror(f))
		ret = -EIO;
	return ret;
}

/* ---- the machine --------------------------------------------------- */

void bench_meminfo(const char *const *keys, unsigned int n, uint64_t *kib)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long v;
	char line[128];
	unsigned int i;
	size_t len;

	for (i = 0; i < n; i++)
		kib[i] = 0;
	if (!f)
		return;
	/* "Slab:           123456 kB" */
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < n; i++) {
			len = strlen(keys[i]);
			if (strncmp(line, keys[i], len) == 0 &&
			    line[len] == ':' &&
			    sscanf(line + len + 1, "%llu", &v) == 1) {
				kib[i] = v;
				break;
			}
		}
	fclose(f);
}

/* "key\t: value" lines of /proc/cpuinfo; the first key found wins, in the
 * order x86 ("model name"), some ARM ("Hardware"), MIPS ("cpu model"). */
static bool cpuinfo_value(FILE *f, const char *key, char *buf, size_t len)
{
	char line[512];
	size_t klen = strlen(key), n;
	char *v;

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) != 0)
			continue;
		v = line + klen;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != ':')
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		n = strcspn(v, "\n");
		if (!n)
			continue;
		if (n >= len)
			n = len - 1;
		memcpy(buf, v, n);
		buf[n] = '\0';
		return true;
	}
	return false;
}

void bench_machine_get(struct bench_machine *m)
{
	static const char *const keys[] = {"model name", "Hardware",
					   "cpu model"};
	unsigned int i;
	FILE *f;

	m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
	if (m->nproc < 1)
		m->nproc = 1;
	snprintf(m->cpu_model, sizeof(m->cpu_model), "unknown");
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (cpuinfo_value(f, keys[i], m->cpu_model,
				  sizeof(m->cpu_model)))
			break;
	fclose(f);
}

/* ---- reports ------------------------------------------------------- */

struct report_row {
	char *group;
	char *name;
	uint64_t n;
	struct bench_result res;
	double baseline_ns;
};

struct report_target {
	char *name;
	double value;
	enum bench_cmp cmp;
	double limit;
};

struct bench_report {
	char *bench;
	struct bench_machine machine;
	char **notes;
	/* per note: a detail (printed in text only with -v) */
	bool *detail;
	size_t nnotes;
	bool verbose;
	bool noisy;
	struct report_row *rows;
	size_t nrows, rows_cap;
	struct report_target *targets;
	size_t ntargets, targets_cap;
};

int bench_report_create(struct bench_report **out, const char *bench)
{
	struct bench_report *r;

	if (!bench || !*bench)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->bench = strdup(bench);
	if (!r->bench) {
		free(r);
		return -ENOMEM;
	}
	bench_machine_get(&r->machine);
	*out = r;
	return 0;
}

void bench_report_destroy(struct bench_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].group);
		free(r->rows[i].name);
	}
	for (i = 0; i < r->ntargets; i++)
		free(r->targets[i].name);
	free(r->notes);
	free(r->detail);
	free(r->rows);
	free(r->targets);
	free(r->bench);
	free(r);
}

/* Room for one more element in *@v (of @size bytes, *@cap allocated). */
static int grow(void **v, size_t size, size_t used, size_t *cap)
{
	size_t ncap;
	void *p;

	if (used < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*v, ncap * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

static int report_vnote(struct bench_report *r, bool detail, const char *fmt,
			va_list ap)
{
	char **notes;
	bool *flags;
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	notes = realloc(r->notes, (r->nnotes + 1) * sizeof(*notes));
	if (!notes) {
		free(s);
		return -ENOMEM;
	}
	r->notes = notes;
	flags = realloc(r->detail, (r->nnotes + 1) * sizeof(*flags));
	if (!flags) {
		free(s);
		return -ENOMEM;
	}
	r->detail = flags;
	r->detail[r->nnotes] = detail;
	r->notes[r->nnotes++] = s;
	return 0;
}

int bench_report_note(struct bench_report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = report_vnote(r, false, fmt, ap);
	va_end(ap);
	return ret;
}

int bench_report_detail(struct bench_report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = report_vnote(r, true, fmt, ap);
	va_end(ap);
	return ret;
}

void bench_report_set_verbose(struct bench_report *r, bool verbose)
{
	r->verbose = verbose;
}

int bench_report_noisy(struct bench_report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = report_vnote(r, false, fmt, ap);
	va_end(ap);
	if (!ret)
		r->noisy = true;
	return ret;
}

int bench_report_add(struct bench_report *r, const char *group,
		     const char *name, uint64_t n,
		     const struct bench_result *res, double baseline_ns)
{
	struct report_row *row;

	if (!r || !group || !name || !res)
		return -EINVAL;
	if (grow((void **)&r->rows, sizeof(*r->rows), r->nrows, &r->rows_cap))
		return -ENOMEM;
	row = &r->rows[r->nrows];
	row->group = strdup(group);
	row->name = strdup(name);
	if (!row->group || !row->name) {
		free(row->group);
		free(row->name);
		return -ENOMEM;
	}
	row->n = n;
	row->res = *res;
	row->baseline_ns = baseline_ns;
	r->nrows++;
	return 0;
}

int bench_report_target(struct bench_report *r, const char *name, double value,
			enum bench_cmp cmp, double limit)
{
	struct report_target *t;

	if (!r || !name || (cmp != BENCH_BELOW && cmp != BENCH_AT_LEAST))
		return -EINVAL;
	if (grow((void **)&r->targets, sizeof(*r->targets), r->ntargets,
		 &r->targets_cap))
		return -ENOMEM;
	t = &r->targets[r->ntargets];
	t->name = strdup(name);
	if (!t->name)
		return -ENOMEM;
	t->value = value;
	t->cmp = cmp;
	t->limit = limit;
	r->ntargets++;
	return 0;
}

static double row_ratio(const struct report_row *row)
{
	if (isnan(row->baseline_ns) || !(row->res.ns_per_op > 0))
		return NAN;
	return row->baseline_ns / row->res.ns_per_op;
}

/* -1 not measured, 0 missed, 1 met. */
static int target_met(const struct report_target *t)
{
	if (isnan(t->value))
		return -1;
	if (t->cmp == BENCH_BELOW)
		return t->value < t->limit;
	return t->value >= t->limit;
}

static const char *cmp_str(enum bench_cmp cmp)
{
	return cmp == BENCH_BELOW ? "<" : ">=";
}

/* ---- report as text ------------------------------------------------ */

/* ns/op with the precision its size deserves: 3.27, 812.4, 1523004. */
static void fmt_ns(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else if (ns < 100)
		snprintf(buf, len, "%.2f", ns);
	else if (ns < 10000)
		snprintf(buf, len, "%.1f", ns);
	else
		snprintf(buf, len, "%.0f", ns);
}

/* Operations per second with an SI suffix: 305.8M, 12.40k. */
static void fmt_rate(char *buf, size_t len, double v)
{
	static const char suffix[] = " kMGT";
	unsigned int i = 0;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	while (v >= 1000 && i + 1 < sizeof(suffix) - 1) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.*f%c", v < 100 ? 2 : 1, v, suffix[i]);
}

static int print_results(const struct bench_report *r, FILE *f)
{
	static const char *const head[] = {"group", "case",  "N",
					   "ns/op", "ops/s", "baseline ns/op",
					   "ratio"};
	struct bench_table *t;
	char ns[32], rate[32], base[32];
	unsigned int c;
	size_t i;
	int ret;

	ret = bench_table_create(&t, 7, "llrrrrr");
	if (ret)
		return ret;
	for (c = 0; c < 7 && !ret; c++)
		ret = bench_table_add(t, "%s", head[c]);
	for (i = 0; i < r->nrows && !ret; i++) {
		const struct report_row *row = &r->rows[i];
		double ratio = row_ratio(row);

		fmt_ns(ns, sizeof(ns), row->res.ns_per_op);
		fmt_rate(rate, sizeof(rate), row->res.ops_per_s);
		fmt_ns(base, sizeof(base), row->baseline_ns);
		ret = bench_table_add(t, "%s", row->group) ?:
		      bench_table_add(t, "%s", row->name) ?:
		      bench_table_add(t, "%llu", (unsigned long long)row->n) ?:
		      bench_table_add(t, "%s", ns) ?:
		      bench_table_add(t, "%s", rate) ?:
		      bench_table_add(t, "%s", base);
		if (ret)
			break;
		if (isnan(ratio))
			ret = bench_table_add(t, "-");
		else
			ret = bench_table_add(t, "%.*fx",
					      ratio < 0.1  ? 3
					      : ratio < 10 ? 2
							   : 1,
					      ratio);
	}
	if (!ret)
		ret = bench_table_print(t, f);
	bench_table_destroy(t);
	return ret;
}

static void fmt_value(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (v < 100)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.1f", v);
}

static int print_targets(const struct bench_report *r, FILE *f)
{
	static const char *const verdict[] = {"not measured", "MISSED", "met"};
	struct bench_table *t;
	char value[32], limit[32];
	size_t i;
	int ret;

	ret = bench_table_create(&t, 4, "lrrl");
	if (ret)
		return ret;
	ret = bench_table_add(t, "target") ?: bench_table_add(t, "value") ?:
	      bench_table_add(t, "limit") ?: bench_table_add(t, "result");
	for (i = 0; i < r->ntargets && !ret; i++) {
		const struct report_target *tg = &r->targets[i];

		fmt_value(value, sizeof(value), tg->value);
		fmt_value(limit, sizeof(limit), tg->limit);
		ret = bench_table_add(t, "%s", tg->name) ?:
		      bench_table_add(t, "%s", value) ?:
		      bench_table_add(t, "%s %s", cmp_str(tg->cmp), limit) ?:
		      bench_table_add(t, "%s%s", verdict[target_met(tg) + 1],
				      r->noisy ? " (noisy)" : "");
	}
	if (!ret)
		ret = bench_table_print(t, f);
	bench_table_destroy(t);
	return ret;
}

static int print_text(const struct bench_report *r, FILE *f)
{
	size_t i, hidden = 0;
	int ret;

	fprintf(f, "sdswarm-bench %s: %ld CPU%s, %s\n", r->bench,
		r->machine.nproc, r->machine.nproc == 1 ? "" : "s",
		r->machine.cpu_model);
	for (i = 0; i < r->nnotes; i++) {
		if (r->detail[i] && !r->verbose) {
			hidden++;
			continue;
		}
		fprintf(f, "  %s\n", r->notes[i]);
	}
	if (hidden)
		fprintf(f, "  (%zu note%s on how it was measured: -v)\n",
			hidden, hidden == 1 ? "" : "s");
	fputc('\n', f);
	ret = print_results(r, f);
	if (ret || !r->ntargets)
		return ret;
	fputs("\ntargets (reported, not asserted)\n", f);
	return print_targets(r, f);
}

/* ---- report as JSON ------------------------------------------------ */

/* jansson refuses NaN and infinities; those mean "does not exist". */
json_t *bench_jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* json_object_set_new() takes ownership even when it fails, and fails on a
 * NULL value: checking its result covers a failed json_*() constructor. */
int bench_jset(json_t *obj, const char *key, json_t *v)
{
	return json_object_set_new(obj, key, v) ? -ENOMEM : 0;
}

static int append(json_t *arr, json_t *v)
{
	return json_array_append_new(arr, v) ? -ENOMEM : 0;
}

static int json_row(json_t *arr, const struct report_row *row)
{
	json_t *o = json_object();

	if (!o)
		return -ENOMEM;
	if (bench_jset(o, "group", json_string(row->group)) ||
	    bench_jset(o, "case", json_string(row->name)) ||
	    bench_jset(o, "n", json_integer((json_int_t)row->n)) ||
	    bench_jset(o, "ns_per_op", bench_jnum(row->res.ns_per_op)) ||
	    bench_jset(o, "median_ns_per_op",
		       bench_jnum(row->res.median_ns_per_op)) ||
	    bench_jset(o, "ops_per_s", bench_jnum(row->res.ops_per_s)) ||
	    bench_jset(o, "reps", json_integer(row->res.reps)) ||
	    bench_jset(o, "baseline_ns_per_op", bench_jnum(row->baseline_ns)) ||
	    bench_jset(o, "ratio", bench_jnum(row_ratio(row)))) {
		json_decref(o);
		return -ENOMEM;
	}
	return append(arr, o);
}

static int json_target(json_t *arr, const struct report_target *t, bool noisy)
{
	json_t *o = json_object();
	int met = target_met(t);

	if (!o)
		return -ENOMEM;
	if (bench_jset(o, "name", json_string(t->name)) ||
	    bench_jset(o, "value", bench_jnum(t->value)) ||
	    bench_jset(o, "cmp", json_string(cmp_str(t->cmp))) ||
	    bench_jset(o, "limit", bench_jnum(t->limit)) ||
	    bench_jset(o, "met", met < 0 ? json_null() : json_boolean(met)) ||
	    bench_jset(o, "noisy", json_boolean(noisy))) {
		json_decref(o);
		return -ENOMEM;
	}
	return append(arr, o);
}

int bench_json_stamp(json_t *obj)
{
	const char *commit = cli_commit();

	if (bench_jset(obj, "schema", json_integer(BENCH_SCHEMA)) ||
	    bench_jset(obj, "tool", json_string("sdswarm-bench")) ||
	    bench_jset(obj, "version", json_string(cli_version())) ||
	    bench_jset(obj, "commit",
		       *commit ? json_string(commit) : json_null()))
		return -ENOMEM;
	return 0;
}

static int print_json(const struct bench_report *r, FILE *f, json_t *extra)
{
	static const char *const keys[] = {"machine", "notes", "results",
					   "targets"};
	json_t *root, *part[4];
	size_t i, j;
	int ret = -ENOMEM;

	root = json_object();
	part[0] = json_object();
	part[1] = json_array();
	part[2] = json_array();
	part[3] = json_array();
	if (!root || !part[0] || !part[1] || !part[2] || !part[3])
		goto out_parts;
	if (bench_json_stamp(root) ||
	    bench_jset(root, "bench", json_string(r->bench)) ||
	    bench_jset(root, "noisy", json_boolean(r->noisy)))
		goto out_parts;
	for (i = 0; i < 4; i++) {
		/* A failed set already released part[i]; release the rest. */
		if (bench_jset(root, keys[i], part[i])) {
			for (j = i + 1; j < 4; j++)
				json_decref(part[j]);
			goto out_root;
		}
	}
	if (bench_jset(part[0], "nproc", json_integer(r->machine.nproc)) ||
	    bench_jset(part[0], "cpu_model", json_string(r->machine.cpu_model)))
		goto out_root;
	for (i = 0; i < r->nnotes; i++)
		if (append(part[1], json_string(r->notes[i])))
			goto out_root;
	for (i = 0; i < r->nrows; i++)
		if (json_row(part[2], &r->rows[i]))
			goto out_root;
	for (i = 0; i < r->ntargets; i++)
		if (json_target(part[3], &r->targets[i], r->noisy))
			goto out_root;
	if (extra && json_object_update(root, extra))
		goto out_root;
	ret = json_dumpf(root, f,
			 JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				 JSON_REAL_PRECISION(6))
		      ? -EIO
		      : 0;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	goto out_root;
out_parts:
	for (i = 0; i < 4; i++)
		json_decref(part[i]);
out_root:
	json_decref(root);
	return ret;
}

int bench_report_print(const struct bench_report *r, FILE *f, bool json)
{
	int ret = json ? print_json(r, f, NULL) : print_text(r, f);

	if (!ret && (fflush(f) || ferror(f)))
		ret = -EIO;
	return ret;
}

int bench_report_print_json(const struct bench_report *r, FILE *f,
			    json_t *extra)
{
	int ret = print_json(r, f, extra);

	if (!ret && (fflush(f) || ferror(f)))
		ret = -EIO;
	return ret;
}
