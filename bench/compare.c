// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench compare: two --json reports of the same command side by
 * side. Rows are matched by (group, case, N); for each, the ns/op of both
 * runs, the change, and each run's ratio against its own baseline; a row
 * whose ns/op grew by more than --threshold percent is a regression, and
 * any regression makes the exit status 3. Targets are shown side by side
 * too (a target newly MISSED is flagged, but only rows decide the status).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "cli.h"

#define CMD "compare"

/* The exit status when a row regressed past the threshold. */
#define CMP_EXIT_REGRESSION 3
/* --threshold: percent; the default suits a quiet machine's best-of-R. */
#define CMP_THRESHOLD 10.0
#define CMP_MAX_THRESHOLD 1000.0

/* One run, as read from its file. */
struct cmp_run {
	const char *path;
	json_t *root;
	/* borrowed from root */
	const char *bench;
	const char *version;
	const char *commit;
	const char *cpu;
	long long nproc;
	long long schema;
	bool noisy;
	json_t *results;
	json_t *targets;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench compare A.json B.json [--threshold PCT] [--json]\n\n"
		"Two reports of the same command (sdswarm-bench COMMAND --json),\n"
		"A the reference and B the run judged, side by side: rows matched\n"
		"by group, case and N, with each run's ns/op, the change from A to\n"
		"B, and each run's ratio against its own baseline; then the\n"
		"targets of both. A row whose ns/op grew by more than PCT percent\n"
		"(default 10) is flagged REGRESSED.\n\n"
		"  --threshold PCT  0..1000, decimals allowed\n"
		"  --json           one JSON object instead of the tables\n"
		"Exit status: 0 no regression, 3 a regression beyond PCT, 1 a file\n"
		"that cannot be read or is no report (or nothing in common), 2 a\n"
		"usage error.\n");
}

/* The string under @key, or NULL. */
static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A number (integer or real) as a double; NAN for null, missing or not a
 * number. */
static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Every row an object with a string group and case and an integer n. */
static int cmp_check_rows(const struct cmp_run *r)
{
	size_t i;
	json_t *row;

	json_array_foreach(r->results, i, row) {
		if (!json_is_object(row) || !jstr(row, "group") ||
		    !jstr(row, "case") ||
		    !json_is_integer(json_object_get(row, "n"))) {
			bench_err(
				CMD,
				"%s: results[%zu] is not a row (an object with \"group\", \"case\" and an integer \"n\")",
				r->path, i);
			return -EINVAL;
		}
		if (json_object_get(row, "ns_per_op") &&
		    !json_is_number(json_object_get(row, "ns_per_op")) &&
		    !json_is_null(json_object_get(row, "ns_per_op"))) {
			bench_err(
				CMD,
				"%s: results[%zu]: \"ns_per_op\" is not a number",
				r->path, i);
			return -EINVAL;
		}
	}
	return 0;
}

static int cmp_load(struct cmp_run *r, const char *path)
{
	json_error_t err;
	json_t *m, *v;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!r->root) {
		if (err.line > 0)
			bench_err(CMD, "%s:%d:%d: not valid JSON: %s", path,
				  err.line, err.column, err.text);
		else
			bench_err(CMD, "%s: %s", path, err.text);
		return -EINVAL;
	}
	if (!json_is_object(r->root)) {
		bench_err(
			CMD,
			"%s: not a sdswarm-bench --json report (the top is not an object)",
			path);
		return -EINVAL;
	}
	r->bench = jstr(r->root, "bench");
	r->results = json_object_get(r->root, "results");
	if (!r->bench || !json_is_array(r->results)) {
		bench_err(
			CMD,
			"%s: not a sdswarm-bench --json report (no \"bench\" name or no \"results\" array)",
			path);
		return -EINVAL;
	}
	v = json_object_get(r->root, "schema");
	if (v && !json_is_integer(v)) {
		bench_err(CMD, "%s: \"schema\" is not an integer", path);
		return -EINVAL;
	}
	/* reports from before the schema was recorded are schema 0 */
	r->schema = v ? json_integer_value(v) : 0;
	if (r->schema < 0 || r->schema > BENCH_SCHEMA) {
		bench_err(
			CMD,
			"%s: schema %lld: this sdswarm-bench reads schema 0 to %d (a newer one wrote it?)",
			path, r->schema, BENCH_SCHEMA);
		return -EINVAL;
	}
	r->targets = json_object_get(r->root, "targets");
	if (r->targets && !json_is_array(r->targets)) {
		bench_err(CMD, "%s: \"targets\" is not an array", path);
		return -EINVAL;
	}
	r->version = jstr(r->root, "version");
	r->commit = jstr(r->root, "commit");
	r->noisy = json_is_true(json_object_get(r->root, "noisy"));
	m = json_object_get(r->root, "machine");
	r->cpu = jstr(m, "cpu_model");
	v = json_object_get(m, "nproc");
	r->nproc = json_is_integer(v) ? json_integer_value(v) : 0;
	return cmp_check_rows(r);
}

static bool same_row(json_t *a, json_t *b)
{
	return !strcmp(jstr(a, "group"), jstr(b, "group")) &&
	       !strcmp(jstr(a, "case"), jstr(b, "case")) &&
	       json_integer_value(json_object_get(a, "n")) ==
		       json_integer_value(json_object_get(b, "n"));
}

/* "numbering, version v0.1-3-gabc (commit 0123456789ab), 2 CPUs, EPYC" */
static void run_line(FILE *f, const char *tag, const struct cmp_run *r)
{
	fprintf(f, "%s: %s: %s, version %s", tag, r->path, r->bench,
		r->version ? r->version : "unknown");
	if (r->commit)
		fprintf(f, " (commit %.12s)", r->commit);
	if (r->nproc)
		fprintf(f, ", %lld CPU%s", r->nproc, r->nproc == 1 ? "" : "s");
	if (r->cpu)
		fprintf(f, ", %s", r->cpu);
	fprintf(f, "%s\n", r->noisy ? "; marked noisy" : "");
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) < 100)
		snprintf(buf, len, "%.2f", v);
	else if (fabs(v) < 10000)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_ratio(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*fx", v < 0.1 ? 3 : v < 10 ? 2 : 1, v);
}

/* What one matched row says. */
struct cmp_row {
	json_t *a, *b;
	double a_ns, b_ns, change_pct, a_ratio, b_ratio;
	const char *verdict;
};

static void judge(struct cmp_row *c, double threshold)
{
	c->a_ns = jnum(c->a, "ns_per_op");
	c->b_ns = jnum(c->b, "ns_per_op");
	c->a_ratio = jnum(c->a, "ratio");
	c->b_ratio = jnum(c->b, "ratio");
	c->change_pct = NAN;
	c->verdict = "not measured";
	if (!(c->a_ns > 0) || !(c->b_ns > 0))
		return;
	c->change_pct = (c->b_ns / c->a_ns - 1.0) * 100.0;
	if (c->change_pct > threshold)
		c->verdict = "REGRESSED";
	else if (c->change_pct < -threshold)
		c->verdict = "faster";
	else
		c->verdict = "same";
}

/* The target named @name in @arr, or NULL. */
static json_t *find_target(json_t *arr, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(arr, i, t)
		if (json_is_object(t) && jstr(t, "name") &&
		    !strcmp(jstr(t, "name"), name))
			return t;
	return NULL;
}

static const char *met_str(json_t *t)
{
	json_t *m = json_object_get(t, "met");

	if (!t)
		return "absent";
	return json_is_true(m)	  ? "met"
	       : json_is_false(m) ? "MISSED"
				  : "not measured";
}

static int add_row_json(json_t *arr, const struct cmp_row *c)
{
	json_t *o = json_pack(
		"{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:s}", "group",
		jstr(c->a, "group"), "case", jstr(c->a, "case"), "n",
		(json_int_t)json_integer_value(json_object_get(c->a, "n")),
		"a_ns_per_op",
		isnan(c->a_ns) ? json_null() : json_real(c->a_ns),
		"b_ns_per_op",
		isnan(c->b_ns) ? json_null() : json_real(c->b_ns), "change_pct",
		isnan(c->change_pct) ? json_null() : json_real(c->change_pct),
		"a_ratio",
		isnan(c->a_ratio) ? json_null() : json_real(c->a_ratio),
		"b_ratio",
		isnan(c->b_ratio) ? json_null() : json_real(c->b_ratio),
		"verdict", c->verdict);

	return !o || json_array_append_new(arr, o) ? -ENOMEM : 0;
}

static json_t *row_key(json_t *row)
{
	return json_pack(
		"{s:s, s:s, s:I}", "group", jstr(row, "group"), "case",
		jstr(row, "case"), "n",
		(json_int_t)json_integer_value(json_object_get(row, "n")));
}

struct cmp_out {
	struct bench_table *rows;
	struct bench_table *tg;
	json_t *jrows, *only_a, *only_b, *jtg;
	unsigned int regressions, matched, newly_missed;
};

static int compare_rows(const struct cmp_run *a, const struct cmp_run *b,
			double threshold, struct cmp_out *o)
{
	size_t na = json_array_size(a->results);
	size_t nb = json_array_size(b->results);
	bool *used = calloc(nb ? nb : 1, sizeof(*used));
	char an[32], bn[32], ch[32], ar[32], br[32];
	struct cmp_row c;
	size_t i, j;
	int ret = 0;

	if (!used)
		return -ENOMEM;
	for (i = 0; i < na && !ret; i++) {
		c.a = json_array_get(a->results, i);
		c.b = NULL;
		for (j = 0; j < nb; j++) {
			if (!used[j] &&
			    same_row(c.a, json_array_get(b->results, j))) {
				used[j] = true;
				c.b = json_array_get(b->results, j);
				break;
			}
		}
		if (!c.b) {
			ret = json_array_append_new(o->only_a, row_key(c.a))
				      ? -ENOMEM
				      : 0;
			continue;
		}
		o->matched++;
		judge(&c, threshold);
		if (!strcmp(c.verdict, "REGRESSED"))
			o->regressions++;
		fmt_num(an, sizeof(an), c.a_ns);
		fmt_num(bn, sizeof(bn), c.b_ns);
		if (isnan(c.change_pct))
			snprintf(ch, sizeof(ch), "-");
		else
			snprintf(ch, sizeof(ch), "%+.1f%%", c.change_pct);
		fmt_ratio(ar, sizeof(ar), c.a_ratio);
		fmt_ratio(br, sizeof(br), c.b_ratio);
		ret = bench_table_add(o->rows, "%s", jstr(c.a, "group")) ?:
		      bench_table_add(o->rows, "%s", jstr(c.a, "case")) ?:
		      bench_table_add(o->rows, "%lld",
				      (long long)json_integer_value(
					      json_object_get(c.a, "n"))) ?:
		      bench_table_add(o->rows, "%s", an) ?:
		      bench_table_add(o->rows, "%s", bn) ?:
		      bench_table_add(o->rows, "%s", ch) ?:
		      bench_table_add(o->rows, "%s", ar) ?:
		      bench_table_add(o->rows, "%s", br) ?:
		      bench_table_add(o->rows, "%s", c.verdict) ?:
		      add_row_json(o->jrows, &c);
	}
	for (j = 0; j < nb && !ret; j++)
		if (!used[j] &&
		    json_array_append_new(
			    o->only_b, row_key(json_array_get(b->results, j))))
			ret = -ENOMEM;
	free(used);
	return ret;
}

static int compare_targets(const struct cmp_run *a, const struct cmp_run *b,
			   struct cmp_out *o)
{
	size_t i;
	json_t *ta, *tb, *j;
	const char *ma, *mb, *flag;
	char av[32], bv[32];
	int ret = 0;

	/* A's targets in order, then those only B has */
	for (i = 0; !ret && i < json_array_size(a->targets) +
					    json_array_size(b->targets);
	     i++) {
		if (i < json_array_size(a->targets)) {
			ta = json_array_get(a->targets, i);
			if (!json_is_object(ta) || !jstr(ta, "name"))
				continue;
			tb = find_target(b->targets, jstr(ta, "name"));
		} else {
			tb = json_array_get(b->targets,
					    i - json_array_size(a->targets));
			if (!json_is_object(tb) || !jstr(tb, "name") ||
			    find_target(a->targets, jstr(tb, "name")))
				continue;
			ta = NULL;
		}
		ma = met_str(ta);
		mb = met_str(tb);
		flag = "";
		if (!strcmp(ma, "met") && !strcmp(mb, "MISSED")) {
			flag = "now MISSED";
			o->newly_missed++;
		} else if (!strcmp(ma, "MISSED") && !strcmp(mb, "met")) {
			flag = "now met";
		}
		fmt_num(av, sizeof(av), ta ? jnum(ta, "value") : NAN);
		fmt_num(bv, sizeof(bv), tb ? jnum(tb, "value") : NAN);
		ret = bench_table_add(o->tg, "%s",
				      jstr(ta ? ta : tb, "name")) ?:
		      bench_table_add(o->tg, "%s", av) ?:
		      bench_table_add(o->tg, "%s", bv) ?:
		      bench_table_add(o->tg, "%s", ma) ?:
		      bench_table_add(o->tg, "%s", mb) ?:
		      bench_table_add(o->tg, "%s", flag);
		if (ret)
			break;
		j = json_pack("{s:s, s:o, s:o, s:s, s:s}", "name",
			      jstr(ta ? ta : tb, "name"), "a_value",
			      ta && json_is_number(json_object_get(ta, "value"))
				      ? json_real(jnum(ta, "value"))
				      : json_null(),
			      "b_value",
			      tb && json_is_number(json_object_get(tb, "value"))
				      ? json_real(jnum(tb, "value"))
				      : json_null(),
			      "a", ma, "b", mb);
		if (!j || json_array_append_new(o->jtg, j))
			ret = -ENOMEM;
	}
	return ret;
}

static json_t *run_json(const struct cmp_run *r)
{
	return json_pack("{s:s, s:I, s:o, s:o, s:b}", "file", r->path, "schema",
			 (json_int_t)r->schema, "version",
			 r->version ? json_string(r->version) : json_null(),
			 "commit",
			 r->commit ? json_string(r->commit) : json_null(),
			 "noisy", r->noisy);
}

static int print_json_out(const struct cmp_run *a, const struct cmp_run *b,
			  double threshold, struct cmp_out *o)
{
	json_t *root = json_pack(
		"{s:s, s:f, s:o, s:o, s:O, s:O, s:O, s:O, s:i}", "bench",
		a->bench, "threshold_pct", threshold, "a", run_json(a), "b",
		run_json(b), "rows", o->jrows, "only_in_a", o->only_a,
		"only_in_b", o->only_b, "targets", o->jtg, "regressions",
		(int)o->regressions);
	json_t *out = json_object();
	int ret;

	/* the stamp first, then the comparison */
	if (!root || !out || bench_json_stamp(out) ||
	    json_object_update(out, root)) {
		json_decref(root);
		json_decref(out);
		return -ENOMEM;
	}
	json_decref(root);
	root = out;
	ret = json_dumpf(root, stdout,
			 JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				 JSON_REAL_PRECISION(6))
		      ? -EIO
		      : 0;
	json_decref(root);
	if (!ret && (fputc('\n', stdout) == EOF || fflush(stdout)))
		ret = -EIO;
	return ret;
}

static void print_keys(const char *what, json_t *arr)
{
	size_t i;
	json_t *k;

	if (!json_array_size(arr))
		return;
	printf("\nonly in %s (group, case, N not in the other):\n", what);
	json_array_foreach(arr, i, k)
		printf("  %s  %s  %lld\n", jstr(k, "group"), jstr(k, "case"),
		       (long long)json_integer_value(json_object_get(k, "n")));
}

static int print_text_out(const struct cmp_run *a, const struct cmp_run *b,
			  double threshold, struct cmp_out *o)
{
	run_line(stdout, "A", a);
	run_line(stdout, "B", b);
	printf("  change = B ns/op / A ns/op - 1 (+ is slower); ratio = each run's baseline / fast path; REGRESSED past +%g%%\n",
	       threshold);
	if (a->nproc != b->nproc ||
	    (a->cpu && b->cpu && strcmp(a->cpu, b->cpu)))
		printf("  the runs are from different machines: the changes say more about them than about the code\n");
	if (a->noisy || b->noisy)
		printf("  %s marked noisy (measured on too little): its changes may be noise\n",
		       a->noisy && b->noisy ? "both runs are"
		       : a->noisy	    ? "A is"
					    : "B is");
	putchar('\n');
	if (bench_table_print(o->rows, stdout))
		return -EIO;
	print_keys("A", o->only_a);
	print_keys("B", o->only_b);
	if (json_array_size(o->jtg)) {
		printf("\ntargets\n");
		if (bench_table_print(o->tg, stdout))
			return -EIO;
	}
	printf("\n%u of %u figures regressed by more than %g%%%s\n",
	       o->regressions, o->matched, threshold,
	       o->newly_missed
		       ? "; a target newly MISSED (not a regression by itself)"
		       : "");
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

int bench_compare(int argc, char **argv)
{
	enum { OPT_THRESHOLD = 0x200 };
	static const struct option lopts[] = {
		{"threshold", required_argument, NULL, OPT_THRESHOLD},
		{"json", no_argument, NULL, BENCH_OPT_JSON},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cmp_run a, b;
	struct cmp_out o = {0};
	double threshold = CMP_THRESHOLD;
	bool json = false;
	int opt, ret, status = CLI_EXIT_FAILURE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			break;
		case BENCH_OPT_JSON:
			json = true;
			break;
		case OPT_THRESHOLD:
			if (bench_parse_double(optarg, 0, CMP_MAX_THRESHOLD,
					       &threshold)) {
				bench_err(
					CMD,
					"--threshold '%s': need a percentage, 0 to %g",
					optarg, CMP_MAX_THRESHOLD);
				return CLI_EXIT_USAGE;
			}
			break;
		default:
			cli_suggest_option(stderr, argv[0], lopts,
					   argv[optind - 1]);
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		bench_err(CMD, "%s",
			  argc - optind < 2
				  ? "need two files, A.json and B.json"
				  : "only two files, A.json and B.json");
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cmp_load(&a, argv[optind])) {
		json_decref(a.root);
		return CLI_EXIT_FAILURE;
	}
	if (cmp_load(&b, argv[optind + 1]))
		goto out_runs;
	if (strcmp(a.bench, b.bench)) {
		bench_err(
			CMD,
			"%s is a '%s' report, %s a '%s' one: only reports of the same command compare",
			a.path, a.bench, b.path, b.bench);
		goto out_runs;
	}
	o.jrows = json_array();
	o.only_a = json_array();
	o.only_b = json_array();
	o.jtg = json_array();
	ret = !o.jrows || !o.only_a || !o.only_b || !o.jtg ? -ENOMEM : 0;
	if (!ret)
		ret = bench_table_create(&o.rows, 9, "llrrrrrrl");
	if (!ret)
		ret = bench_table_create(&o.tg, 6, "lrrlll");
	if (!ret)
		ret = bench_table_add(o.rows, "group") ?:
		      bench_table_add(o.rows, "case") ?:
		      bench_table_add(o.rows, "N") ?:
		      bench_table_add(o.rows, "A ns/op") ?:
		      bench_table_add(o.rows, "B ns/op") ?:
		      bench_table_add(o.rows, "change") ?:
		      bench_table_add(o.rows, "A ratio") ?:
		      bench_table_add(o.rows, "B ratio") ?:
		      bench_table_add(o.rows, "verdict") ?:
		      bench_table_add(o.tg, "target") ?:
		      bench_table_add(o.tg, "A value") ?:
		      bench_table_add(o.tg, "B value") ?:
		      bench_table_add(o.tg, "A") ?:
		      bench_table_add(o.tg, "B") ?:
		      bench_table_add(o.tg, "%s", "");
	if (!ret)
		ret = compare_rows(&a, &b, threshold, &o);
	if (!ret)
		ret = compare_targets(&a, &b, &o);
	if (ret) {
		bench_err(CMD, "%s", strerror(-ret));
		goto out;
	}
	if (!o.matched) {
		bench_err(
			CMD,
			"nothing to compare: no row of %s is in %s (a row is matched by its group, case and N: were the runs of different sizes or groups?)",
			a.path, b.path);
		goto out;
	}
	ret = json ? print_json_out(&a, &b, threshold, &o)
		   : print_text_out(&a, &b, threshold, &o);
	if (ret) {
		bench_err(CMD, "stdout: %s", strerror(-ret));
		goto out;
	}
	status = o.regressions ? CMP_EXIT_REGRESSION : CLI_EXIT_OK;
out:
	bench_table_destroy(o.rows);
	bench_table_destroy(o.tg);
	json_decref(o.jrows);
	json_decref(o.only_a);
	json_decref(o.only_b);
	json_decref(o.jtg);
out_runs:
	json_decref(a.root);
	json_decref(b.root);
	return status;
}
