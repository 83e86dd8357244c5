// SPDX-License-Identifier: MIT
/*
 * sdnum: the sd naming and dev_t rules on the command line. Every command
 * takes its arguments either on the command line or, when the first one is
 * "-", from standard input, one invocation per line (one answer per line).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdnum.h"

#define MAX_FIELDS 4

struct opts {
	const char *prefix;
	const struct sdnum_scheme *scheme;
	struct sdnum_extmap ext;
	int have_ext;
};

/* One command: checks its fields, prints an answer or returns a reason. */
struct cmd {
	const char *name;
	const char *usage;
	int min_args, max_args;
	/* Return: 0 and answer printed to out, or -1 with *why set. */
	int (*run)(const struct opts *o, int argc, char **argv, FILE *out,
		   const char **why);
};

static const char *errstr(int err)
{
	switch (err) {
	case -EINVAL: return "invalid";
	case -ERANGE: return "out of range";
	case -ENODEV: return "not a number of this scheme";
	case -EXDEV: return "allocated at run time (give --parts to predict)";
	case -EOVERFLOW: return "does not fit the encoding";
	default: return strerror(-err);
	}
}

/* Strict decimal: digits only, no sign, no leading junk, fits @max. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return -ERANGE;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_majmin(const char *s, uint32_t *major, uint32_t *minor)
{
	char buf[32];
	char *colon;
	int ret;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	ret = parse_u32(buf, SDNUM_MAX_MAJOR, major);
	if (ret)
		return ret;
	return parse_u32(colon + 1, SDNUM_MINORMASK, minor);
}

/* ---- commands -------------------------------------------------------- */

static int cmd_name(const struct opts *o, int argc, char **argv, FILE *out,
		    const char **why)
{
	char buf[SDNUM_NAME_MAX];
	uint32_t index, part = 0;
	int ret;

	ret = parse_u32(argv[0], INT_MAX, &index);
	if (ret) {
		*why = ret == -ERANGE ? "index above 2147483647" : "index is not a number";
		return -1;
	}
	if (argc > 1) {
		ret = parse_u32(argv[1], SDNUM_MAX_PART_NUMBER, &part);
		if (ret) {
			*why = ret == -ERANGE ? "partition above 255" : "partition is not a number";
			return -1;
		}
	}
	ret = sdnum_name_part(o->prefix, index, part, buf, sizeof(buf));
	if (ret < 0) {
		*why = errstr(ret);
		return -1;
	}
	fprintf(out, "%s\n", buf);
	return 0;
}

static int cmd_parse(const struct opts *o, int argc, char **argv, FILE *out,
		     const char **why)
{
	uint32_t index;
	unsigned int part;
	int ret;

	(void)argc;
	ret = sdnum_parse(o->prefix, argv[0], &index, &part);
	if (ret) {
		*why = ret == -ERANGE ? "index or partition out of range" :
					"not a disk or partition name";
		return -1;
	}
	fprintf(out, "%" PRIu32 " %u\n", index, part);
	return 0;
}

static int cmd_devt(const struct opts *o, int argc, char **argv, FILE *out,
		    const char **why)
{
	uint32_t index, part = 0, dev;
	int ret;

	if (parse_u32(argv[0], UINT32_MAX, &index)) {
		*why = "index is not a number";
		return -1;
	}
	if (argc > 1 && parse_u32(argv[1], UINT32_MAX, &part)) {
		*why = "partition is not a number";
		return -1;
	}
	ret = o->scheme->encode(o->have_ext ? &o->ext : NULL, index, part, &dev);
	if (ret) {
		*why = ret == -ERANGE ? "disk or partition outside the scheme" :
					errstr(ret);
		return -1;
	}
	fprintf(out, "%" PRIu32 ":%" PRIu32 "\n", SDNUM_MAJOR(dev),
		SDNUM_MINOR(dev));
	return 0;
}

static int cmd_decode(const struct opts *o, int argc, char **argv, FILE *out,
		      const char **why)
{
	char buf[SDNUM_NAME_MAX];
	uint32_t major, minor, disk, part;
	int ret;

	(void)argc;
	if (parse_majmin(argv[0], &major, &minor)) {
		*why = "not MAJOR:MINOR (major 0-4095, minor 0-1048575)";
		return -1;
	}
	ret = o->scheme->decode(o->have_ext ? &o->ext : NULL,
				SDNUM_MKDEV(major, minor), &disk, &part);
	if (ret) {
		*why = errstr(ret);
		return -1;
	}
	ret = sdnum_name_part(o->prefix, disk, part, buf, sizeof(buf));
	if (ret < 0) {
		*why = "disk index has no name (above 2147483647)";
		return -1;
	}
	fprintf(out, "%" PRIu32 " %" PRIu32 " %s\n", disk, part, buf);
	return 0;
}

static int cmd_encode(const struct opts *o, int argc, char **argv, FILE *out,
		      const char **why)
{
	uint32_t major, minor, dev;
	uint16_t old;

	(void)o;
	(void)argc;
	if (parse_majmin(argv[0], &major, &minor)) {
		*why = "not MAJOR:MINOR (major 0-4095, minor 0-1048575)";
		return -1;
	}
	dev = SDNUM_MKDEV(major, minor);
	fprintf(out, "kernel=0x%08" PRIx32 " new=0x%08" PRIx32, dev,
		sdnum_new_encode(dev));
	if (sdnum_old_encode(dev, &old) == 0)
		fprintf(out, " old=0x%04x", old);
	else
		fprintf(out, " old=invalid");
	fprintf(out, " makedev=0x%016" PRIx64 "\n", sdnum_makedev(major, minor));
	return 0;
}

static void print_names_table(FILE *out, const char *prefix)
{
	char a[SDNUM_NAME_MAX], b[SDNUM_NAME_MAX];
	uint64_t first = 0, span = 26;
	int len;

	fprintf(out, "names (prefix %s): bijective base 26\n", prefix);
	fprintf(out, "  %-7s %12s %-12s %12s %-12s %12s\n", "letters",
		"first", "name", "last", "name", "count");
	for (len = 1; len <= SDNUM_MAX_BODY; len++) {
		uint64_t last = first + span - 1;

		if (last > INT_MAX)
			last = INT_MAX;
		sdnum_name(prefix, (uint32_t)first, a, sizeof(a));
		sdnum_name(prefix, (uint32_t)last, b, sizeof(b));
		fprintf(out, "  %-7d %12" PRIu64 " %-12s %12" PRIu64 " %-12s %12" PRIu64 "%s\n",
			len, first, a, last, b, last - first + 1,
			last == INT_MAX ? " (INT_MAX)" : "");
		first += span;
		span *= 26;
	}
}

static void print_scheme_table(FILE *out, const char *prefix,
			       const struct sdnum_scheme *s)
{
	char name[SDNUM_NAME_MAX];
	uint32_t major, disk, part, majors[SDNUM_SD_MAJORS + SDNUM_DYNAMIC_MAJORS];
	unsigned int i, n = 0;

	fprintf(out, "\nscheme %s: %s\n", s->name, s->summary);
	fprintf(out, "  disks %" PRIu32 ", partitions per disk %" PRIu32
		" (%" PRIu32 " computed), dev_t per disk %" PRIu32 "\n",
		s->max_disks, s->max_parts, s->static_parts, s->max_parts + 1);
	if (s == &sdnum_scheme_dynamic) {
		for (i = 0; i < SDNUM_DYNAMIC_MAJORS; i++)
			majors[n++] = SDNUM_DYNAMIC_MAJOR_BASE + i;
	} else {
		for (i = 0; i < SDNUM_SD_MAJORS; i++)
			majors[n++] = sdnum_sd_major(i);
	}
	fprintf(out, "  %-6s %10s %-10s\n", "major", "first disk", "name");
	for (i = 0; i < n; i++) {
		major = majors[i];
		/* Minor 0 of a major holds the lowest disk on it in every scheme. */
		if (s->decode(NULL, SDNUM_MKDEV(major, 0), &disk, &part))
			continue;
		sdnum_name(prefix, disk, name, sizeof(name));
		fprintf(out, "  %-6" PRIu32 " %10" PRIu32 " %-10s\n", major, disk,
			name);
	}
	if (s->static_parts < s->max_parts && s != &sdnum_scheme_dynamic)
		fprintf(out, "  partitions %" PRIu32 "-%" PRIu32 ": major %u, "
			"minors in allocation order\n", s->static_parts + 1,
			s->max_parts, SDNUM_EXT_MAJOR);
}

static int cmd_table(const struct opts *o, int argc, char **argv, FILE *out,
		     const char **why)
{
	const struct sdnum_scheme *s;
	unsigned int i;

	(void)argc;
	(void)argv;
	(void)why;
	print_names_table(out, o->prefix);
	for (i = 0; (s = sdnum_scheme_at(i)); i++)
		print_scheme_table(out, o->prefix, s);
	return 0;
}

static int cmd_schemes(const struct opts *o, int argc, char **argv, FILE *out,
		       const char **why)
{
	const struct sdnum_scheme *s;
	unsigned int i;

	(void)o;
	(void)argc;
	(void)argv;
	(void)why;
	fprintf(out, "%-8s %8s %6s  %s\n", "scheme", "disks", "parts",
		"summary");
	for (i = 0; (s = sdnum_scheme_at(i)); i++)
		fprintf(out, "%-8s %8" PRIu32 " %6" PRIu32 "  %s\n", s->name,
			s->max_disks, s->max_parts, s->summary);
	return 0;
}

static const struct cmd cmds[] = {
	{ "name", "INDEX [PART]", 1, 2, cmd_name },
	{ "parse", "NAME", 1, 1, cmd_parse },
	{ "devt", "INDEX [PART]", 1, 2, cmd_devt },
	{ "decode", "MAJOR:MINOR", 1, 1, cmd_decode },
	{ "encode", "MAJOR:MINOR", 1, 1, cmd_encode },
	{ "table", "", 0, 0, cmd_table },
	{ "schemes", "", 0, 0, cmd_schemes },
};

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: sdnum [--prefix P] [--scheme S] [--parts N [--disks N] [--ext-base M]]\n"
		"             COMMAND [ARGS | -]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].usage);
	fprintf(f,
		"\nname INDEX [PART]   the kernel's name for 0-based disk INDEX (sda, sdaa1)\n"
		"parse NAME          INDEX PART of a name\n"
		"devt INDEX [PART]   MAJOR:MINOR under the scheme\n"
		"decode MAJOR:MINOR  INDEX PART NAME under the scheme\n"
		"encode MAJOR:MINOR  the kernel, new_encode_dev, old and glibc makedev forms\n"
		"table               name-length boundaries; per scheme capacity and majors\n"
		"schemes             the schemes\n\n"
		"A first argument of - reads the arguments from standard input, one\n"
		"invocation per line, and prints one answer per line; a bad line\n"
		"answers \"error: REASON\" and the exit status is 1.\n\n"
		"--scheme S      legacy, naive, wilcox, linux (default) or dynamic\n"
		"--prefix P      driver prefix (default sd)\n"
		"--parts N       linux: predict partitions 16..N on major 259, assuming\n"
		"                every disk has N partitions and disks were probed in\n"
		"                index order (--disks, default 1048576; --ext-base, default 0)\n");
}

static const struct cmd *find_cmd(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/* Splits @line on spaces and tabs in place. */
static int split(char *line, char **fields, int max)
{
	int n = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(line, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == max)
			return max + 1;
		fields[n++] = tok;
	}
	return n;
}

static int run_batch(const struct opts *o, const struct cmd *c)
{
	char *line = NULL, *fields[MAX_FIELDS];
	size_t cap = 0;
	ssize_t got;
	const char *why;
	int status = 0, n;

	while ((got = getline(&line, &cap, stdin)) != -1) {
		why = NULL;
		n = split(line, fields, MAX_FIELDS);
		if (n < c->min_args || n > c->max_args)
			why = "wrong number of fields";
		else if (c->run(o, n, fields, stdout, &why) == 0)
			continue;
		printf("error: %s\n", why ? why : "failed");
		status = 1;
	}
	free(line);
	if (fflush(stdout) || ferror(stdout)) {
		perror("sdnum: stdout");
		return 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "scheme", required_argument, NULL, 's' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "parts", required_argument, NULL, 'P' },
		{ "disks", required_argument, NULL, 'D' },
		{ "ext-base", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.prefix = "sd",
		.scheme = &sdnum_scheme_linux,
		.ext = { .ndisks = 1u << 20 },
	};
	const struct cmd *c;
	const char *why = NULL;
	int opt, nargs, ret;

	while ((opt = getopt_long(argc, argv, "+s:p:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.scheme = sdnum_scheme_find(optarg);
			if (!o.scheme) {
				fprintf(stderr, "sdnum: unknown scheme '%s' (see sdnum schemes)\n", optarg);
				return 1;
			}
			break;
		case 'p':
			if (!*optarg || strlen(optarg) > SDNUM_MAX_PREFIX) {
				fprintf(stderr, "sdnum: prefix '%s' must be 1-%d bytes\n", optarg, SDNUM_MAX_PREFIX);
				return 1;
			}
			o.prefix = optarg;
			break;
		case 'P':
			if (parse_u32(optarg, SDNUM_MAX_PART_NUMBER, &o.ext.parts) || o.ext.parts < 16) {
				fprintf(stderr, "sdnum: --parts '%s': need 16..255\n", optarg);
				return 1;
			}
			o.have_ext = 1;
			break;
		case 'D':
			if (parse_u32(optarg, 1u << 20, &o.ext.ndisks) || !o.ext.ndisks) {
				fprintf(stderr, "sdnum: --disks '%s': need 1..1048576\n", optarg);
				return 1;
			}
			break;
		case 'B':
			if (parse_u32(optarg, SDNUM_MINORMASK, &o.ext.base)) {
				fprintf(stderr, "sdnum: --ext-base '%s': need 0..1048575\n", optarg);
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	c = find_cmd(argv[optind]);
	if (!c) {
		fprintf(stderr, "sdnum: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	argv += optind + 1;
	nargs = argc - optind - 1;
	if (nargs == 1 && strcmp(argv[0], "-") == 0 && c->max_args > 0)
		return run_batch(&o, c);
	if (nargs < c->min_args || nargs > c->max_args) {
		fprintf(stderr, "sdnum: usage: sdnum %s %s\n", c->name, c->usage);
		return 1;
	}
	ret = c->run(&o, nargs, argv, stdout, &why);
	if (ret) {
		int i;

		fprintf(stderr, "sdnum %s:", c->name);
		for (i = 0; i < nargs; i++)
			fprintf(stderr, " '%s'", argv[i]);
		fprintf(stderr, ": %s\n", why ? why : "failed");
		return 1;
	}
	return 0;
}
