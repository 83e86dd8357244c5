// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench's plots: gnuplot run as a child on a script and data files
 * written into a private temporary folder, which is removed afterwards.
 * What a figure shows is its subcommand's; how gnuplot is driven is here.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* Files one plot writes at most (data and the script). */
#define PLOT_MAX_FILES 8u

struct bench_plot {
	/* $TMPDIR/sdswarm-plot.XXXXXX, made by mkdtemp(). */
	char dir[PATH_MAX];
	/* The files made in it, removed with it. */
	char name[PLOT_MAX_FILES][32];
	unsigned int nfiles;
};

/* Whether @prog is an executable file in a $PATH directory. */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH"), *s, *e;
	char buf[PATH_MAX];
	int len;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path;; s = e + 1) {
		e = strchrnul(s, ':');
		/* An empty element is the current folder. */
		if (e == s)
			len = snprintf(buf, sizeof(buf), "./%s", prog);
		else
			len = snprintf(buf, sizeof(buf), "%.*s/%s",
				       (int)(e - s), s, prog);
		if (len > 0 && (size_t)len < sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		if (!*e)
			return false;
	}
}

bool bench_plot_available(void)
{
	return in_path("gnuplot");
}

int bench_plot_create(struct bench_plot **out)
{
	const char *base = getenv("TMPDIR");
	struct bench_plot *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!base || !*base)
		base = "/tmp";
	snprintf(p->dir, sizeof(p->dir), "%s/sdswarm-plot.XXXXXX", base);
	if (!mkdtemp(p->dir)) {
		ret = -errno;
		free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void bench_plot_destroy(struct bench_plot *p)
{
	char path[PATH_MAX + 40];
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nfiles; i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dir, p->name[i]);
		unlink(path);
	}
	rmdir(p->dir);
	free(p);
}

int bench_plot_file(struct bench_plot *p, const char *name, FILE **out)
{
	char path[PATH_MAX + 40];

	if (!*name || strchr(name, '/') || strlen(name) >= sizeof(p->name[0]))
		return -EINVAL;
	if (p->nfiles == PLOT_MAX_FILES)
		return -E2BIG;
	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	*out = fopen(path, "we");
	if (!*out)
		return -errno;
	strcpy(p->name[p->nfiles++], name);
	return 0;
}

void bench_plot_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

void bench_plot_quote_file(FILE *f, const struct bench_plot *p,
			   const char *name)
{
	char path[PATH_MAX + 40];

	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	bench_plot_quote(f, path);
}

void bench_plot_png(FILE *f, const char *png, unsigned int width,
		    unsigned int height)
{
	/* pngcairo draws antialiased lines; the plain png terminal is what
	 * a gnuplot built without cairo has. */
	fprintf(f,
		"if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size %u,%u noenhanced\n"
		"} else {\n"
		"  set terminal png size %u,%u noenhanced\n"
		"}\nset output ",
		width, height, width, height);
	bench_plot_quote(f, png);
}

int bench_plot_run(const struct bench_plot *p, const char *script)
{
	posix_spawn_file_actions_t fa;
	char prog[] = "gnuplot", path[PATH_MAX + 40], *argv[3];
	pid_t pid;
	int ret, status;

	snprintf(path, sizeof(path), "%s/%s", p->dir, script);
	argv[0] = prog;
	argv[1] = path;
	argv[2] = NULL;
	ret = posix_spawn_file_actions_init(&fa);
	if (ret)
		return -ret;
	/* Our stdout may be JSON: anything gnuplot says goes to stderr. */
	ret = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO,
					       STDOUT_FILENO);
	if (!ret)
		ret = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -ret;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return 0;
}
