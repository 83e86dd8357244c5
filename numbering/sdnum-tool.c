// SPDX-License-Identifier: MIT
/*
 * sdnum: the sd naming and dev_t rules on the command line. Every command
 * takes its arguments either on the command line or, when the first one is
 * "-", from standard input, one invocation per line (one answer per line).
 * alloc replays disk adds and removes through the sd driver's index
 * allocator and says which index, name and dev_t each new disk gets.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <search.h>

#include "array.h"
#include "cli.h"
#include "parse.h"
#include "sdnum.h"

#define MAX_FIELDS 4

struct opts {
	const char *prefix;
	const struct sdnum_scheme *scheme;
	struct sdnum_extmap ext;
	int have_ext;
	int json;
};

/* One command: checks its fields, prints an answer or returns a reason. */
struct cmd {
	const char *name;
	const char *usage;
	int min_args, max_args;
	/* Return: 0 and answer printed to out, or -1 with *why set. */
	int (*run)(const struct opts *o, int argc, char **argv, FILE *out,
		   const char **why);
	/* A command that reads its own arguments and options instead:
	 * returns the exit status. @run is then NULL. */
	int (*main)(const struct opts *o, int argc, char **argv);
};

static const char *errstr(int err)
{
	switch (err) {
	case -EINVAL:
		return "invalid";
	case -ERANGE:
		return "out of range";
	case -ENODEV:
		return "not a number of this scheme";
	case -EXDEV:
		return "allocated at run time (give --parts to predict)";
	case -EOVERFLOW:
		return "does not fit the encoding";
	default:
		return strerror(-err);
	}
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
	ret = parse_u32(buf, 10, SDNUM_MAX_MAJOR, major);
	if (ret)
		return ret;
	return parse_u32(colon + 1, 10, SDNUM_MINORMASK, minor);
}

/* ---- commands -------------------------------------------------------- */

static int cmd_name(const struct opts *o, int argc, char **argv, FILE *out,
		    const char **why)
{
	char buf[SDNUM_NAME_MAX];
	uint32_t index, part = 0;
	int ret;

	ret = parse_u32(argv[0], 10, INT_MAX, &index);
	if (ret) {
		*why = ret == -ERANGE ? "index above 2147483647"
				      : "index is not a number";
		return -1;
	}
	if (argc > 1) {
		ret = parse_u32(argv[1], 10, SDNUM_MAX_PART_NUMBER, &part);
		if (ret) {
			*why = ret == -ERANGE ? "partition above 255"
					      : "partition is not a number";
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
		*why = ret == -ERANGE ? "index or partition out of range"
				      : "not a disk or partition name";
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

	if (parse_u32(argv[0], 10, UINT32_MAX, &index)) {
		*why = "index is not a number";
		return -1;
	}
	if (argc > 1 && parse_u32(argv[1], 10, UINT32_MAX, &part)) {
		*why = "partition is not a number";
		return -1;
	}
	ret = o->scheme->encode(o->have_ext ? &o->ext : NULL, index, part,
				&dev);
	if (ret) {
		*why = ret == -ERANGE ? "disk or partition outside the scheme"
				      : errstr(ret);
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
	fprintf(out, " makedev=0x%016" PRIx64 "\n",
		sdnum_makedev(major, minor));
	return 0;
}

static void print_names_table(FILE *out, const char *prefix)
{
	char a[SDNUM_NAME_MAX], b[SDNUM_NAME_MAX];
	uint64_t first = 0, span = 26;
	int len;

	fprintf(out, "names (prefix %s): bijective base 26\n", prefix);
	fprintf(out, "  %-7s %12s %-12s %12s %-12s %12s\n", "letters", "first",
		"name", "last", "name", "count");
	for (len = 1; len <= SDNUM_MAX_BODY; len++) {
		uint64_t last = first + span - 1;

		if (last > INT_MAX)
			last = INT_MAX;
		sdnum_name(prefix, (uint32_t)first, a, sizeof(a));
		sdnum_name(prefix, (uint32_t)last, b, sizeof(b));
		fprintf(out,
			"  %-7d %12" PRIu64 " %-12s %12" PRIu64
			" %-12s %12" PRIu64 "%s\n",
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
	uint32_t major, disk, part,
		majors[SDNUM_SD_MAJORS + SDNUM_DYNAMIC_MAJORS];
	unsigned int i, n = 0;

	fprintf(out, "\nscheme %s: %s\n", s->name, s->summary);
	fprintf(out,
		"  disks %" PRIu32 ", partitions per disk %" PRIu32 " (%" PRIu32
		" computed), dev_t per disk %" PRIu32 "\n",
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
		fprintf(out, "  %-6" PRIu32 " %10" PRIu32 " %-10s\n", major,
			disk, name);
	}
	if (s->static_parts < s->max_parts && s != &sdnum_scheme_dynamic)
		fprintf(out,
			"  partitions %" PRIu32 "-%" PRIu32
			": major %u, minors in allocation order\n",
			s->static_parts + 1, s->max_parts, SDNUM_EXT_MAJOR);
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

/* ---- alloc: the sd driver's index allocator -------------------------- */

/*
 * sd_probe() takes each new disk's index with ida_alloc(&sd_index_ida): the
 * lowest free one. scsi_disk_release() gives it back when the last
 * reference to the disk goes. alloc replays "add [TAG]" and
 * "remove NAME|INDEX|TAG" events through libsdnum's tree allocator (the
 * same contract, O(log64 n) a step) and prints what each event gives or
 * frees, so a script can predict the name the kernel gives a new disk.
 */

/* Longest tag: enough for a WWN or "target:lun", short enough to print. */
#define ALLOC_TAG_MAX 64

struct alloc_disk {
	char *tag; /* NULL for an untagged disk */
	uint32_t index;
};

struct alloc_state {
	const struct opts *o;
	struct sdnum_idx *idx;
	/* Disks the scheme numbers: the allocator's capacity. */
	uint32_t max;
	/* One past the highest index ever given. Lowest-first allocation
	 * means every index below it was allocated at some point. */
	uint32_t high;
	/* disk[i] for an allocated index i below ndisk, else NULL; grown by
	 * doubling, so its size follows the highest index, not max. */
	struct alloc_disk **disk;
	uint32_t ndisk;
	/* tsearch() tree of the tagged disks, ordered by tag. */
	void *by_tag;
	FILE *out;
	int json;
	unsigned long events;
	/* "line" (standard input) or "argument" (the command line), and
	 * the key of that number in JSON. */
	const char *where;
	const char *where_key;
	char why[256];
};

/* Sets s->why. Return: -EINVAL, the code for "bad input". */
__attribute__((format(printf, 2, 3))) static int
alloc_err(struct alloc_state *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int alloc_tag_cmp(const void *a, const void *b)
{
	const struct alloc_disk *x = a, *y = b;

	return strcmp(x->tag, y->tag);
}

static struct alloc_disk *alloc_find_tag(const struct alloc_state *s,
					 const char *tag)
{
	struct alloc_disk key = {.tag = (char *)tag};
	void *hit = tfind(&key, &s->by_tag, alloc_tag_cmp);

	return hit ? *(struct alloc_disk **)hit : NULL;
}

static void json_str(FILE *out, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	fputc('"', out);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static int alloc_print(struct alloc_state *s, const char *event,
		       unsigned long pos, const struct alloc_disk *d)
{
	char name[SDNUM_NAME_MAX];
	uint32_t dev;
	int ret;

	ret = sdnum_name(s->o->prefix, d->index, name, sizeof(name));
	if (ret < 0)
		return alloc_err(s, "index %" PRIu32 " has no name", d->index);
	/* Partition 0 never needs the extended-minor context. */
	ret = s->o->scheme->encode(NULL, d->index, 0, &dev);
	if (ret)
		return alloc_err(s,
				 "index %" PRIu32 " has no dev_t in scheme %s",
				 d->index, s->o->scheme->name);
	if (s->json) {
		fprintf(s->out,
			"%s{\"%s\":%lu,\"event\":\"%s\",\"index\":%" PRIu32
			",\"name\":",
			s->events ? "," : "", s->where_key, pos, event,
			d->index);
		json_str(s->out, name);
		fprintf(s->out,
			",\"devt\":\"%" PRIu32 ":%" PRIu32 "\",\"tag\":",
			SDNUM_MAJOR(dev), SDNUM_MINOR(dev));
		if (d->tag)
			json_str(s->out, d->tag);
		else
			fputs("null", s->out);
		fputc('}', s->out);
	} else {
		fprintf(s->out,
			"%s %" PRIu32 " %s %" PRIu32 ":%" PRIu32 "%s%s\n",
			event, d->index, name, SDNUM_MAJOR(dev),
			SDNUM_MINOR(dev), d->tag ? " " : "",
			d->tag ? d->tag : "");
	}
	s->events++;
	return 0;
}

/*
 * A tag must not read as anything else a remove accepts, so that
 * "remove X" has one meaning: not a number, not a disk or partition name
 * of the prefix, not an event's name, and not in use by a present disk;
 * nor as a comment or an option.
 */
static int alloc_tag_check(struct alloc_state *s, const char *tag)
{
	char name[SDNUM_NAME_MAX];
	const struct alloc_disk *d;
	uint32_t index;
	unsigned int part;
	size_t i, len = strlen(tag);

	if (len > ALLOC_TAG_MAX)
		return alloc_err(s,
				 "tag '%.16s...' is longer than %d characters",
				 tag, ALLOC_TAG_MAX);
	for (i = 0; i < len; i++)
		if (tag[i] < '!' || tag[i] > '~')
			return alloc_err(
				s, "tag has byte 0x%02x: printable ASCII only",
				(unsigned char)tag[i]);
	if (tag[0] == '#')
		return alloc_err(s, "tag '%s' starts a comment", tag);
	if (tag[0] == '-')
		return alloc_err(s, "tag '%s' would read as an option", tag);
	if (tag[strspn(tag, "0123456789")] == '\0')
		return alloc_err(
			s,
			"tag '%s' would read as an index: a tag is not a number",
			tag);
	if (sdnum_parse(s->o->prefix, tag, &index, &part) != -EINVAL)
		return alloc_err(s, "tag '%s' would read as a disk name", tag);
	if (!strcmp(tag, "add") || !strcmp(tag, "remove"))
		return alloc_err(s, "tag '%s' is the name of an event", tag);
	d = alloc_find_tag(s, tag);
	if (d) {
		sdnum_name(s->o->prefix, d->index, name, sizeof(name));
		return alloc_err(s,
				 "tag '%s' is already %s's (index %" PRIu32 ")",
				 tag, name, d->index);
	}
	return 0;
}

/* Makes s->disk hold @index. Return: 0 or -ENOMEM. */
static int alloc_reserve(struct alloc_state *s, uint32_t index)
{
	struct alloc_disk **d;
	uint32_t n;

	if (index < s->ndisk)
		return 0;
	n = s->ndisk ? s->ndisk : (s->max < 64 ? s->max : 64);
	while (n <= index)
		n = n > s->max / 2 ? s->max : n * 2;
	d = realloc(s->disk, (size_t)n * sizeof(*d));
	if (!d)
		return -ENOMEM;
	memset(d + s->ndisk, 0, (size_t)(n - s->ndisk) * sizeof(*d));
	s->disk = d;
	s->ndisk = n;
	return 0;
}

static int alloc_add(struct alloc_state *s, unsigned long pos, const char *tag)
{
	struct alloc_disk *d;
	int ret, id;

	if (tag) {
		ret = alloc_tag_check(s, tag);
		if (ret)
			return ret;
	}
	id = sdnum_idx_alloc(s->idx);
	if (id == -ENOSPC)
		return alloc_err(s,
				 "no free index: scheme %s numbers %" PRIu32
				 " disks and all are present",
				 s->o->scheme->name, s->max);
	if (id < 0)
		return id;
	ret = alloc_reserve(s, (uint32_t)id);
	if (ret)
		goto out_free_id;
	ret = -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto out_free_id;
	d->index = (uint32_t)id;
	if (tag) {
		d->tag = strdup(tag);
		if (!d->tag)
			goto out_free_disk;
		if (!tsearch(d, &s->by_tag, alloc_tag_cmp))
			goto out_free_tag;
	}
	s->disk[id] = d;
	if ((uint32_t)id >= s->high)
		s->high = (uint32_t)id + 1;
	return alloc_print(s, "add", pos, d);

out_free_tag:
	free(d->tag);
out_free_disk:
	free(d);
out_free_id:
	sdnum_idx_free(s->idx, (uint32_t)id);
	return ret;
}

/* The present disk @what names: an index, a disk name, or a tag. */
static int alloc_lookup(struct alloc_state *s, const char *what,
			struct alloc_disk **out)
{
	char name[SDNUM_NAME_MAX];
	uint32_t index;
	unsigned int part;
	int ret;

	if (what[strspn(what, "0123456789")] == '\0') {
		if (parse_u32(what, 10, UINT32_MAX, &index) || index >= s->max)
			return alloc_err(s,
					 "index %s is beyond the %" PRIu32
					 " disks of scheme %s",
					 what, s->max, s->o->scheme->name);
	} else if ((ret = sdnum_parse(s->o->prefix, what, &index, &part)) !=
		   -EINVAL) {
		if (ret || index >= s->max)
			return alloc_err(s,
					 "%s is beyond the %" PRIu32
					 " disks of scheme %s",
					 what, s->max, s->o->scheme->name);
		if (part)
			return alloc_err(s, "%s is a partition, not a disk",
					 what);
	} else {
		*out = alloc_find_tag(s, what);
		if (!*out)
			return alloc_err(
				s,
				"no present disk is tagged '%s' (and it is not a name or an index)",
				what);
		return 0;
	}
	if (!sdnum_idx_test(s->idx, index)) {
		sdnum_name(s->o->prefix, index, name, sizeof(name));
		if (index < s->high)
			return alloc_err(s,
					 "%s (index %" PRIu32
					 ") is not allocated: removed before",
					 name, index);
		return alloc_err(s,
				 "%s (index %" PRIu32 ") was never allocated",
				 name, index);
	}
	*out = s->disk[index];
	return 0;
}

static int alloc_remove(struct alloc_state *s, unsigned long pos,
			const char *what)
{
	struct alloc_disk *d;
	int ret;

	ret = alloc_lookup(s, what, &d);
	if (ret)
		return ret;
	ret = alloc_print(s, "remove", pos, d);
	if (ret)
		return ret;
	sdnum_idx_free(s->idx, d->index);
	s->disk[d->index] = NULL;
	if (d->tag) {
		tdelete(d, &s->by_tag, alloc_tag_cmp);
		free(d->tag);
	}
	free(d);
	return 0;
}

/* One event from its fields. Return: 0, -EINVAL (s->why says why), -ENOMEM. */
static int alloc_event(struct alloc_state *s, unsigned long pos, int n,
		       char **f)
{
	if (!strcmp(f[0], "add")) {
		if (n > 2)
			return alloc_err(s, "add takes at most one TAG");
		return alloc_add(s, pos, n == 2 ? f[1] : NULL);
	}
	if (!strcmp(f[0], "remove")) {
		if (n != 2)
			return alloc_err(s,
					 "remove takes one NAME, INDEX or TAG");
		return alloc_remove(s, pos, f[1]);
	}
	return alloc_err(
		s,
		"unknown event '%s' (want add [TAG] or remove NAME|INDEX|TAG)",
		f[0]);
}

static void alloc_report(const struct alloc_state *s, unsigned long pos, int n,
			 char **f)
{
	int i;

	fprintf(stderr, "sdnum alloc: %s %lu (", s->where, pos);
	for (i = 0; i < n && i < 2; i++)
		fprintf(stderr, "%s%s", i ? " " : "", f[i]);
	fprintf(stderr, "%s): %s\n", n > 2 ? " ..." : "", s->why);
}

/* Events one a line; blank lines and '#' comments are skipped. */
static int alloc_read(struct alloc_state *s, FILE *in)
{
	char *line = NULL, *f[3];
	unsigned long lineno = 0;
	size_t cap = 0;
	int i, n, ret = 0;

	for (;;) {
		errno = 0;
		if (getline(&line, &cap, in) == -1)
			break;
		lineno++;
		n = split(line, f, 3);
		for (i = 0; i < n && i < 3; i++)
			if (f[i][0] == '#')
				break;
		if (i < n)
			n = i;
		if (n == 0)
			continue;
		ret = alloc_event(s, lineno, n, f);
		if (ret) {
			if (ret == -EINVAL)
				alloc_report(s, lineno, n, f);
			break;
		}
	}
	/*
	 * getline() fails without the end of the file when a read fails or
	 * a line cannot grow (glibc's ENOMEM does not set ferror()): either
	 * is an error, never the end of the events.
	 */
	if (!ret && (ferror(in) || !feof(in)))
		ret = errno ? -errno : -EIO;
	free(line);
	return ret;
}

/*
 * Events as words: "add" takes the next word as its tag unless it is an
 * event; "remove" always takes the next word.
 */
static int alloc_args(struct alloc_state *s, int argc, char **argv)
{
	char *f[2];
	int i = 0, at, n, ret;

	while (i < argc) {
		at = i;
		f[0] = argv[i++];
		n = 1;
		if (!strcmp(f[0], "remove") && i < argc)
			f[n++] = argv[i++];
		else if (!strcmp(f[0], "add") && i < argc &&
			 strcmp(argv[i], "add") && strcmp(argv[i], "remove"))
			f[n++] = argv[i++];
		ret = alloc_event(s, (unsigned long)at + 1, n, f);
		if (ret) {
			if (ret == -EINVAL)
				alloc_report(s, (unsigned long)at + 1, n, f);
			return ret;
		}
	}
	return 0;
}

static void alloc_nofree(void *p)
{
	(void)p; /* the disks are freed through s->disk */
}

static void alloc_release(struct alloc_state *s)
{
	uint32_t i;

	tdestroy(s->by_tag, alloc_nofree);
	for (i = 0; i < s->ndisk; i++) {
		if (!s->disk[i])
			continue;
		free(s->disk[i]->tag);
		free(s->disk[i]);
	}
	free(s->disk);
	sdnum_idx_destroy(s->idx);
}

static void alloc_usage(FILE *f)
{
	fprintf(f,
		"usage: sdnum [--prefix P] [--scheme S] alloc [--json] [EVENT... | -]\n"
		"events: add [TAG]              a new disk (the lowest free index)\n"
		"        remove NAME|INDEX|TAG  a present disk goes; its index is free\n"
		"With no events, or -, one event a line from standard input.\n"
		"Prints \"add|remove INDEX NAME MAJOR:MINOR [TAG]\" per event; a bad\n"
		"event stops with its line (or argument) number on standard error, exit 1.\n");
}

static int cmd_alloc_main(const struct opts *o, int argc, char **argv)
{
	struct alloc_state s = {.o = o, .json = o->json};
	char *buf = NULL;
	size_t len = 0;
	int i = 0, ret, next, status = 0, from_stdin;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--json")) {
			s.json = 1;
		} else if (!strcmp(argv[i], "--help")) {
			alloc_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "sdnum alloc: unknown option '%s'%s\n",
				argv[i],
				cli_distance(argv[i], "--json") <= 2
					? " (did you mean --json?)"
					: "");
			alloc_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	argc -= i;
	argv += i;
	from_stdin = argc == 0 || (argc == 1 && !strcmp(argv[0], "-"));
	s.where = from_stdin ? "line" : "argument";
	s.where_key = from_stdin ? "line" : "arg";
	s.max = o->scheme->max_disks;
	ret = sdnum_idx_create(&s.idx, SDNUM_IDX_TREE, s.max);
	if (ret) {
		fprintf(stderr, "sdnum alloc: %s\n", strerror(-ret));
		return 1;
	}
	/* JSON is one document: nothing of it is printed after an error. */
	s.out = s.json ? open_memstream(&buf, &len) : stdout;
	if (!s.out) {
		perror("sdnum alloc");
		status = 1;
		goto out_release;
	}
	if (s.json) {
		fprintf(s.out,
			"{\"scheme\":\"%s\",\"prefix\":", o->scheme->name);
		json_str(s.out, o->prefix);
		fputs(",\"events\":[", s.out);
	}
	ret = from_stdin ? alloc_read(&s, stdin) : alloc_args(&s, argc, argv);
	if (ret == -EINVAL) {
		status = CLI_EXIT_FAILURE;
	} else if (ret) {
		fprintf(stderr, "sdnum alloc: %s\n", strerror(-ret));
		status = 1;
	} else if (s.json) {
		/* The index the next add would get, taken and given back. */
		next = sdnum_idx_alloc(s.idx);
		if (next >= 0)
			sdnum_idx_free(s.idx, (uint32_t)next);
		fprintf(s.out, "],\"in_use\":%" PRIu32 ",\"next\":",
			sdnum_idx_count(s.idx));
		if (next >= 0)
			fprintf(s.out, "%d}\n", next);
		else
			fputs("null}\n", s.out);
	}
	if (s.json) {
		if (fclose(s.out)) {
			perror("sdnum alloc");
			status = 1;
		} else if (!status) {
			fwrite(buf, 1, len, stdout);
		}
		free(buf);
	}
	if (fflush(stdout) || ferror(stdout)) {
		perror("sdnum: stdout");
		status = 1;
	}
out_release:
	alloc_release(&s);
	return status;
}

static const struct cmd cmds[] = {
	{"name", "INDEX [PART]", 1, 2, cmd_name, NULL},
	{"parse", "NAME", 1, 1, cmd_parse, NULL},
	{"devt", "INDEX [PART]", 1, 2, cmd_devt, NULL},
	{"decode", "MAJOR:MINOR", 1, 1, cmd_decode, NULL},
	{"encode", "MAJOR:MINOR", 1, 1, cmd_encode, NULL},
	{"table", "", 0, 0, cmd_table, NULL},
	{"schemes", "", 0, 0, cmd_schemes, NULL},
	{"alloc", "[--json] [EVENT... | -]", 0, 0, NULL, cmd_alloc_main},
};

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: sdnum [--prefix P] [--scheme S] [--parts N [--disks N] [--ext-base M]]\n"
		"             [--json] COMMAND [ARGS | -]\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].usage);
	fprintf(f,
		"\nname INDEX [PART]   the kernel's name for 0-based disk INDEX (sda, sdaa1)\n"
		"parse NAME          INDEX PART of a name\n"
		"devt INDEX [PART]   MAJOR:MINOR under the scheme\n"
		"decode MAJOR:MINOR  INDEX PART NAME under the scheme\n"
		"encode MAJOR:MINOR  the kernel, new_encode_dev, old and glibc makedev forms\n"
		"table               name-length boundaries; per scheme capacity and majors\n"
		"schemes             the schemes\n"
		"alloc [--json] [EVENT... | -]\n"
		"                    replay \"add [TAG]\" and \"remove NAME|INDEX|TAG\" through\n"
		"                    the sd driver's index allocator (lowest free first):\n"
		"                    the index, name and dev_t each add gets (sdnum alloc --help)\n\n"
		"A first argument of - reads the arguments from standard input, one\n"
		"invocation per line, and prints one answer per line; a bad line\n"
		"answers \"error: REASON\" and the exit status is 1 (alloc stops at a bad\n"
		"event instead, naming its line). Options may come before or after the\n"
		"command. Exit status: 0 answered, 1 an argument has no answer, 2 usage\n"
		"error (unknown command or option, wrong number of arguments).\n\n"
		"--scheme S      legacy, naive, wilcox, linux (default) or dynamic\n"
		"--prefix P      driver prefix (default sd)\n"
		"--parts N       linux: predict partitions 16..N on major 259, assuming\n"
		"                every disk has N partitions and disks were probed in\n"
		"                index order (--disks, default 1048576; --ext-base, default 0)\n"
		"--json          alloc: one JSON document instead of lines\n"
		"--version       print the version\n");
}

static const struct cmd *find_cmd(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

static int run_batch(const struct opts *o, const struct cmd *c)
{
	char *line = NULL, *fields[MAX_FIELDS];
	size_t cap = 0;
	ssize_t got;
	const char *why;
	int status = 0, n;

	for (;;) {
		errno = 0;
		if ((got = getline(&line, &cap, stdin)) == -1)
			break;
		why = NULL;
		n = split(line, fields, MAX_FIELDS);
		if (n < c->min_args || n > c->max_args)
			why = "wrong number of fields";
		else if (c->run(o, n, fields, stdout, &why) == 0)
			continue;
		printf("error: %s\n", why ? why : "failed");
		status = 1;
	}
	/* as alloc_read(): a failed read is not the end of the input */
	if (ferror(stdin) || !feof(stdin)) {
		fprintf(stderr, "sdnum: standard input: read error: %s\n",
			strerror(errno ? errno : EIO));
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
		{"scheme", required_argument, NULL, 's'},
		{"prefix", required_argument, NULL, 'p'},
		{"parts", required_argument, NULL, 'P'},
		{"disks", required_argument, NULL, 'D'},
		{"ext-base", required_argument, NULL, 'B'},
		{"json", no_argument, NULL, 'j'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {
		.prefix = "sd",
		.scheme = &sdnum_scheme_linux,
		.ext = {.ndisks = 1u << 20},
	};
	static const char *const scheme_names[] = {
		"legacy", "naive", "wilcox", "linux", "dynamic", NULL};
	const char *cmd_names[ARRAY_SIZE(cmds) + 1];
	const struct cmd *c;
	const char *why = NULL, *best;
	int opt, nargs, ret, help = 0;
	unsigned int k;

	/* No '+': options may follow the command too (GNU getopt moves
	 * them ahead of the operands); "--" ends them. */
	while ((opt = getopt_long(argc, argv, "s:p:Vh", lopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.scheme = sdnum_scheme_find(optarg);
			if (!o.scheme) {
				best = cli_suggest(optarg, scheme_names, 5);
				fprintf(stderr,
					"sdnum: unknown scheme '%s' (%s%s%s)\n",
					optarg,
					best ? "did you mean "
					     : "see sdnum schemes",
					best ? best : "", best ? "?" : "");
				return CLI_EXIT_USAGE;
			}
			break;
		case 'p':
			if (!*optarg || strlen(optarg) > SDNUM_MAX_PREFIX) {
				fprintf(stderr,
					"sdnum: prefix '%s' must be 1-%d bytes\n",
					optarg, SDNUM_MAX_PREFIX);
				return CLI_EXIT_USAGE;
			}
			o.prefix = optarg;
			break;
		case 'P':
			if (parse_u32(optarg, 10, SDNUM_MAX_PART_NUMBER,
				      &o.ext.parts) ||
			    o.ext.parts < 16) {
				fprintf(stderr,
					"sdnum: --parts '%s': need 16..255\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			o.have_ext = 1;
			break;
		case 'D':
			if (parse_u32(optarg, 10, 1u << 20, &o.ext.ndisks) ||
			    !o.ext.ndisks) {
				fprintf(stderr,
					"sdnum: --disks '%s': need 1..1048576\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'B':
			if (parse_u32(optarg, 10, SDNUM_MINORMASK,
				      &o.ext.base)) {
				fprintf(stderr,
					"sdnum: --ext-base '%s': need 0..1048575\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'j':
			o.json = 1;
			break;
		case 'V':
			return cli_print_version("sdnum");
		case 'h':
			help = 1;
			break;
		default:
			cli_suggest_option(stderr, "sdnum", lopts,
					   argv[optind - 1]);
			fprintf(stderr, "Try 'sdnum --help'.\n");
			return CLI_EXIT_USAGE;
		}
	}
	c = optind < argc ? find_cmd(argv[optind]) : NULL;
	if (help) {
		/* "sdnum alloc --help" is alloc's own */
		if (c && c->main == cmd_alloc_main)
			alloc_usage(stdout);
		else
			usage(stdout);
		return 0;
	}
	if (optind >= argc) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!c) {
		for (k = 0; k < ARRAY_SIZE(cmds); k++)
			cmd_names[k] = cmds[k].name;
		best = cli_suggest(argv[optind], cmd_names, k);
		if (best)
			fprintf(stderr,
				"sdnum: unknown command '%s' (did you mean %s?)\n",
				argv[optind], best);
		else
			fprintf(stderr, "sdnum: unknown command '%s'\n",
				argv[optind]);
		fprintf(stderr, "Try 'sdnum --help'.\n");
		return CLI_EXIT_USAGE;
	}
	argv += optind + 1;
	nargs = argc - optind - 1;
	if (c->main)
		return c->main(&o, nargs, argv);
	if (o.json) {
		fprintf(stderr, "sdnum: --json: only alloc prints JSON\n");
		return CLI_EXIT_USAGE;
	}
	if (nargs == 1 && strcmp(argv[0], "-") == 0 && c->max_args > 0)
		return run_batch(&o, c);
	if (nargs < c->min_args || nargs > c->max_args) {
		fprintf(stderr, "sdnum: usage: sdnum %s %s\n", c->name,
			c->usage);
		return CLI_EXIT_USAGE;
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
