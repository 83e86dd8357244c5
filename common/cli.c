// SPDX-License-Identifier: MIT
/*
 * cli: the version string, the edit-distance suggester and the option
 * suggestion shared by the command-line tools (see cli.h).
 */
#include <string.h>

#include "cli.h"

#ifndef SDSWARM_VERSION
#error "the Makefile passes -DSDSWARM_VERSION=\"...\""
#endif
#ifndef SDSWARM_COMMIT
#error "the Makefile passes -DSDSWARM_COMMIT=\"...\" (empty outside git)"
#endif

const char *cli_version(void)
{
	return SDSWARM_VERSION;
}

const char *cli_commit(void)
{
	return SDSWARM_COMMIT;
}

int cli_print_version(const char *prog)
{
	printf("%s %s\n", prog, SDSWARM_VERSION);
	return fflush(stdout) || ferror(stdout) ? CLI_EXIT_FAILURE
						: CLI_EXIT_OK;
}

/* One row of the dynamic-programming table at a time; short strings only. */
unsigned int cli_distance(const char *a, const char *b)
{
	unsigned int row[40], i, j, prev, cur;
	size_t la = strlen(a), lb = strlen(b);

	if (la >= 40 || lb >= 40)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[lb];
}

const char *cli_suggest(const char *word, const char *const *cands,
			size_t ncands)
{
	const char *best = NULL, *prefix = NULL;
	unsigned int d, bestd = 3;
	size_t i, len = strlen(word), nprefix = 0;

	for (i = 0; i < ncands && cands[i]; i++) {
		d = cli_distance(word, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
		if (len && strncmp(word, cands[i], len) == 0) {
			prefix = cands[i];
			nprefix++;
		}
	}
	if (best)
		return best;
	/* a unique abbreviation, as getopt_long accepts for options */
	return nprefix == 1 ? prefix : NULL;
}

void cli_suggest_option(FILE *f, const char *prog,
			const struct option *longopts, const char *arg)
{
	const char *names[64], *best;
	char name[48];
	size_t n, len;

	if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2])
		return;
	len = strcspn(arg + 2, "=");
	if (len >= sizeof(name))
		return;
	memcpy(name, arg + 2, len);
	name[len] = '\0';
	for (n = 0; longopts[n].name && n < 64; n++) {
		if (strcmp(longopts[n].name, name) == 0)
			return;
		names[n] = longopts[n].name;
	}
	best = cli_suggest(name, names, n);
	if (best)
		fprintf(f, "%s: did you mean --%s?\n", prog, best);
}
