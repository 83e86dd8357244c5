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
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bench.h"
#include "cli.h"

struct bench_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

static const struct bench_cmd cmds[] = {
#define BENCH_ENTRY(fn, cmd_name, cmd_summary)                                 \
	{.name = cmd_name, .summary = cmd_summary, .run = bench_##fn},
	BENCH_COMMANDS(BENCH_ENTRY)
#undef BENCH_ENTRY
};

#define NCMDS ARRAY_SIZE(cmds)

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: sdswarm-bench COMMAND [--json] [--quick] [--reps R]\n"
		"                     [--only GROUP[,GROUP]] [-v] [OPTIONS]\n"
		"       sdswarm-bench compare A.json B.json [--threshold PCT]\n"
		"       sdswarm-bench COMMAND --help\n"
		"       sdswarm-bench --version\n\n"
		"commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\nEvery command prints an aligned table (or, with --json, one JSON\n"
		"object), compares each fast path against a baseline measured in the\n"
		"same run, and reports its targets as met or MISSED without failing.\n"
		"A target is a figure the project aims for; MISSED is reported, not\n"
		"failed.\n"
		"--quick    tiny sizes, for a smoke test (seconds)\n"
		"--reps R   repetitions per measurement; the best is kept\n"
		"--only G   only these groups (numbering, target: see COMMAND --help)\n"
		"-v         also the notes on how it was measured (internals)\n"
		"--json     one object with \"schema\", \"version\" and \"commit\"\n"
		"Sizes are each command's options (COMMAND --help). Options may come\n"
		"before or after the command.\n"
		"Exit status: 0 when the measurements ran (targets missed or not),\n"
		"1 on a failure (a failed allocation or operation, a wrong result),\n"
		"2 on a usage error; compare: 3 on a regression past its threshold.\n"
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

/*
 * The first argument that names a command, or 0. Options given before it
 * (sdswarm-bench --json numbering) are the command's own and move after
 * it. The value of a common option that takes one is skipped, so
 * `--only io target` is the target command with --only io; the value of
 * another option before the command that happens to spell a command name
 * would be taken for the command.
 */
static int find_cmd_arg(int argc, char **argv)
{
	static const char *const with_value[] = {"--only", "--reps",
						 "--threshold"};
	size_t k;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (find_cmd(argv[i]))
			return i;
		for (k = 0; k < ARRAY_SIZE(with_value); k++)
			if (strcmp(argv[i], with_value[k]) == 0) {
				i++;
				break;
			}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *names[NCMDS + 1], *best;
	const struct bench_cmd *c;
	char **args;
	int at, i, n, ret;

	if (argc == 2 &&
	    (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0))
		return cli_print_version("sdswarm-bench");
	if (argc == 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	     strcmp(argv[1], "help") == 0)) {
		usage(stdout);
		return 0;
	}
	at = find_cmd_arg(argc, argv);
	if (!at) {
		/* the first word that is not an option is the typo */
		for (i = 1; i < argc && argv[i][0] == '-'; i++)
			;
		if (i >= argc) {
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
		for (n = 0; n < (int)NCMDS; n++)
			names[n] = cmds[n].name;
		best = cli_suggest(argv[i], names, NCMDS);
		if (best)
			fprintf(stderr,
				"sdswarm-bench: unknown command '%s' (did you mean %s?)\n",
				argv[i], best);
		else
			fprintf(stderr, "sdswarm-bench: unknown command '%s'\n",
				argv[i]);
		fprintf(stderr, "Try 'sdswarm-bench --help'.\n");
		return CLI_EXIT_USAGE;
	}
	c = find_cmd(argv[at]);
	/* "help COMMAND" is "COMMAND --help" */
	if (at == 2 && strcmp(argv[1], "help") == 0) {
		char opt[] = "--help";
		char *sub[] = {NULL, opt, NULL};

		return run_cmd(c, 2, sub);
	}
	/* argv for the command: its name, then every other argument in
	 * order (those before the name first) */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		fprintf(stderr, "sdswarm-bench: out of memory\n");
		return CLI_EXIT_FAILURE;
	}
	args[0] = argv[at];
	for (i = 1, n = 1; i < argc; i++)
		if (i != at)
			args[n++] = argv[i];
	ret = run_cmd(c, n, args);
	free(args);
	return ret;
}
