// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench stamp: the JSON stamp every report of this program begins
 * with ("schema", "tool", "version", "commit"), printed alone, so that a
 * benchmark written as a script (bench/iscsi-vs-tgt.sh, iscsi-ls-scale.sh)
 * stamps its report from the binary that ran, not from a copy of its own.
 */
#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "bench.h"
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench stamp [--machine]\n\n"
		"One JSON object: {\"schema\", \"tool\", \"version\", \"commit\"},\n"
		"the keys every sdswarm-bench --json report begins with, for a\n"
		"script that writes a report of its own to merge in.\n"
		"  --machine  also \"machine\": {\"nproc\", \"cpu_model\"}, as the\n"
		"             reports give it\n");
}

int bench_stamp(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"machine", no_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct bench_machine m;
	bool machine = false;
	json_t *o, *mo;
	int opt, ret = CLI_EXIT_FAILURE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		case 'm':
			machine = true;
			break;
		default:
			cli_suggest_option(stderr, argv[0], lopts,
					   argv[optind - 1]);
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sdswarm-bench stamp: unexpected '%s'\n",
			argv[optind]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	o = json_object();
	if (!o || bench_json_stamp(o))
		goto out;
	if (machine) {
		bench_machine_get(&m);
		mo = json_pack("{s:I, s:s}", "nproc", (json_int_t)m.nproc,
			       "cpu_model", m.cpu_model);
		if (!mo || json_object_set_new(o, "machine", mo))
			goto out;
	}
	if (json_dumpf(o, stdout, JSON_PRESERVE_ORDER) ||
	    fputc('\n', stdout) == EOF || fflush(stdout)) {
		fprintf(stderr,
			"sdswarm-bench stamp: cannot write the stamp\n");
		json_decref(o);
		return CLI_EXIT_FAILURE;
	}
	ret = CLI_EXIT_OK;
out:
	if (ret)
		fprintf(stderr, "sdswarm-bench stamp: out of memory\n");
	json_decref(o);
	return ret;
}
