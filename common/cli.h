/* SPDX-License-Identifier: MIT */
/*
 * cli: what the four command-line tools share: the build's version string,
 * "did you mean" for mistyped commands, options and keys, and the exit
 * statuses (0 success, 1 runtime failure, 2 usage error).
 */
#ifndef SDSWARM_CLI_H
#define SDSWARM_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses, the same in sdswarmd, sdswarm, sdnum and sdswarm-bench. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1 /* understood, but it failed */
#define CLI_EXIT_USAGE 2 /* the command line was not understood */

/**
 * cli_version() - the version string the build was made from.
 *
 * `git describe --always --dirty` when the build ran in a repository,
 * otherwise the Makefile's VERSION.
 *
 * Context: any thread.
 * Return: a static string, never NULL.
 */
const char *cli_version(void);

/**
 * cli_commit() - the full commit id the build was made from.
 *
 * `git rev-parse HEAD` at build time (40 hex digits; a dirty tree is told
 * by cli_version()'s "-dirty"), or "" when the build ran outside a
 * repository.
 *
 * Context: any thread.
 * Return: a static string, never NULL.
 */
const char *cli_commit(void);

/**
 * cli_print_version() - print "PROG VERSION" and a newline to stdout.
 * @prog: the program's name
 *
 * Context: any thread.
 * Return: 0 if it was written, 1 if stdout failed (an exit status).
 */
int cli_print_version(const char *prog);

/**
 * cli_distance() - edit distance (Levenshtein) between two short strings.
 * @a: one string
 * @b: the other
 *
 * O(|a| x |b|); strings of 40 bytes or more count as far from everything.
 *
 * Context: any thread.
 * Return: the number of single-byte insertions, deletions and substitutions
 * that turn @a into @b, or 99 when either is too long.
 */
unsigned int cli_distance(const char *a, const char *b);

/**
 * cli_suggest() - the candidate closest to a mistyped word.
 * @word: what was typed
 * @cands: the words it may have meant
 * @ncands: how many there are; a NULL entry ends the list early
 *
 * Close means an edit distance of at most 2, or @word being the start of
 * exactly one candidate ("sta" for "status").
 *
 * Context: any thread.
 * Return: the closest candidate (the first of equals), or NULL if none is
 * close.
 */
const char *cli_suggest(const char *word, const char *const *cands,
			size_t ncands);

/**
 * cli_suggest_option() - say "did you mean --X?" for an unknown long option.
 * @f: where to print (stderr)
 * @prog: the program's name, as getopt's own message shows it
 * @longopts: the getopt_long() table, ended by a zeroed entry
 * @arg: the argument getopt_long() refused (argv[optind - 1] after '?')
 *
 * Prints nothing when @arg is not a long option, is one @longopts knows
 * (getopt refused it for a missing or extra value), or resembles none.
 *
 * Context: any thread.
 */
void cli_suggest_option(FILE *f, const char *prog,
			const struct option *longopts, const char *arg);

#endif /* SDSWARM_CLI_H */
