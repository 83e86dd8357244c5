// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench: the benchmark program. main() only dispatches to a
 * subcommand; each lives in its own bench/NAME.c.
 *
 * Adding a subcommand: one X(function, "name", "summary") line in
 * BENCH_COMMANDS in bench.h, and bench/NAME.c defining
 * int bench_FUNCTION(int argc, char **argv). That line both declares the
 * function and enters it in the table below. Document it in
 * man/sdswarm-bench.1 and, if `make bench` should run it, add a step to
 * bench/run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

struct bench_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

static const struct bench_cmd cmds[] = {
#define BENCH_ENTRY(fn, cmd_name, cmd_summary)                                \
	{ .name = cmd_name, .summary = cmd_summary, .run = bench_##fn },
	BENCH_COMMANDS(BENCH_ENTRY)
#undef BENCH_ENTRY
};

#define NCMDS BENCH_ARRAY_SIZE(cmds)

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: sdswarm-bench COMMAND [--json] [--quick] [--reps R] [OPTIONS]\n"
		"       sdswarm-bench COMMAND --help\n\n"
		"commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\nEvery command prints an aligned table (or, with --json, one JSON\n"
		"object), compares each fast path against a baseline measured in the\n"
		"same run, and reports its targets as met or MISSED without failing.\n"
		"--quick    tiny sizes, for a smoke test (seconds)\n"
		"--reps R   repetitions per measurement; the best is kept\n"
		"Exit status: 0 when the measurements ran (targets missed or not),\n"
		"1 on an error (bad usage, a failed allocation, a wrong result).\n"
		"See sdswarm-bench(1).\n");
}

static const struct bench_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(name, cmds[i].name) == 0)
			return &cmds[i];
	return NULL;
}

/* argv[0] becomes "sdswarm-bench NAME", so getopt's messages say who. */
static int run_cmd(const struct bench_cmd *c, int argc, char **argv)
{
	static char prog[64];

	snprintf(prog, sizeof(prog), "sdswarm-bench %s", c->name);
	argv[0] = prog;
	return c->run(argc, argv);
}

int main(int argc, char **argv)
{
	const struct bench_cmd *c;
	bool help;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	       strcmp(argv[1], "help") == 0;
	if (help && argc == 2) {
		usage(stdout);
		return 0;
	}
	c = find_cmd(argv[help ? 2 : 1]);
	if (!c) {
		fprintf(stderr, "sdswarm-bench: unknown command '%s'\n",
			argv[help ? 2 : 1]);
		usage(stderr);
		return 1;
	}
	if (help) {
		char opt[] = "--help";
		char *sub[] = { NULL, opt, NULL };

		return run_cmd(c, 2, sub);
	}
	return run_cmd(c, argc - 1, argv + 1);
}
