// SPDX-License-Identifier: MIT
/*
 * The configuration parser: every key, size suffixes, [faults],
 * command-line overrides, the built-in default, and every error
 * path with the exact "file:line: [section] key = value: why" it prints.
 * Also the log module the parser's log_level feeds (levels, sink, per-LUN
 * prefix, CDB trace, no argument evaluation when off).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "config.h"
#include "log.h"
#include "parse.h"

/* Parses @text as "t.conf" and finishes; the parser is the caller's. */
static struct cfg_parser *parse(const char *text, struct cfg **out)
{
	struct cfg_parser *p;

	assert_int_equal(cfg_parser_create(&p), 0);
	cfg_parse_string(p, "t.conf", text);
	*out = NULL;
	cfg_finish(p, out);
	return p;
}

/* @text must parse cleanly; returns the configuration. */
static struct cfg *good(const char *text)
{
	struct cfg *c;
	struct cfg_parser *p = parse(text, &c);

	if (!c)
		fail_msg("unexpected errors:\n%s", cfg_errors(p));
	assert_string_equal(cfg_errors(p), "");
	cfg_parser_destroy(p);
	return c;
}

/* Does @errors hold @want as one whole line? */
static bool has_line(const char *errors, const char *want)
{
	size_t n = strlen(want);
	const char *s = errors;

	while ((s = strstr(s, want))) {
		if ((s == errors || s[-1] == '\n') && s[n] == '\n')
			return true;
		s++;
	}
	return false;
}

/* @text must fail, and one of its messages must be exactly @want. */
static void bad(const char *text, const char *want)
{
	struct cfg *c;
	struct cfg_parser *p = parse(text, &c);

	if (c)
		fail_msg("accepted, wanted: %s", want);
	if (!has_line(cfg_errors(p), want))
		fail_msg("wanted the line\n  %s\ngot\n%s", want, cfg_errors(p));
	cfg_parser_destroy(p);
}

/* ---- keys --------------------------------------------------------------- */

static void test_defaults(void **state)
{
	struct cfg *c;

	(void)state;
	c = good("");
	assert_int_equal(c->ngroups, 0);
	assert_int_equal(c->nfaults, 0);
	assert_int_equal(c->target.max_luns, 262144);
	assert_ptr_equal(c->target.scheme, &sdnum_scheme_linux);
	assert_string_equal(c->target.name_prefix, "sd");
	assert_string_equal(c->target.control, "");
	assert_int_equal(c->target.log_level, LOG_NOTICE);
	assert_int_equal(c->store.type, CFG_STORE_MEM);
	assert_int_equal(c->store.mem.chunk_size, 4096);
	assert_int_equal(c->store.mem.mem_limit, 0);
	assert_false(c->iscsi.enabled);
	assert_string_equal(c->iscsi.portal, "127.0.0.1:3260");
	assert_int_equal(c->iscsi.targets, 16);
	assert_int_equal(c->iscsi.luns_per_target, 16384);
	assert_false(c->tcmu.enabled);
	assert_string_equal(c->tcmu.hba, "user_0");
	assert_false(c->fuse.enabled);
	cfg_free(c);

	/* an empty [luns] is one default LUN: 1 GiB, 512, thin, no table */
	c = good("[luns]\n");
	assert_int_equal(c->ngroups, 1);
	assert_string_equal(c->groups[0].name, "default");
	assert_int_equal(c->groups[0].first, 0);
	assert_int_equal(c->groups[0].count, 1);
	assert_int_equal(c->groups[0].size, 1ull << 30);
	assert_int_equal(c->groups[0].block_size, 512);
	assert_true(c->groups[0].thin);
	assert_true(c->groups[0].lbprz);
	assert_int_equal(c->groups[0].nparts, 0);
	assert_string_equal(c->groups[0].vendor, "SDSWARM");
	assert_int_equal(c->groups[0].mode_default, LUN_MODE_WCE);
	assert_int_equal(c->groups[0].max_xfer_blocks, 8192);
	assert_int_equal(c->groups[0].rotation_rate, 1);
	assert_false(c->groups[0].removable);
	assert_true(c->target.power_on_ua);
	assert_int_equal(c->target.control_idle_timeout, 30);
	assert_int_equal(c->store.file_mode, 0600);
	assert_int_equal(c->groups[0].sanitize_ms, 0);
	assert_int_equal(cfg_total_luns(c), 1);
	cfg_free(c);
}

static void test_target_keys(void **state)
{
	struct cfg *c;

	(void)state;
	c = good("[target]\n"
		 "seed = 0xdeadbeefcafe\n"
		 "oui = 0x001405\n"
		 "max_luns = 1048576\n"
		 "scheme = dynamic\n"
		 "name_prefix = vd\n"
		 "control = /tmp/x/control\n"
		 "log_level = debug\n");
	assert_int_equal(c->target.seed, 0xdeadbeefcafeull);
	assert_int_equal(c->target.oui, 0x001405);
	assert_int_equal(c->target.max_luns, 1048576);
	assert_string_equal(c->target.scheme->name, "dynamic");
	assert_string_equal(c->target.name_prefix, "vd");
	assert_string_equal(c->target.control, "/tmp/x/control");
	assert_int_equal(c->target.log_level, LOG_DEBUG);
	cfg_free(c);
	c = good("[target]\nlog_level = 8\n");
	assert_int_equal(c->target.log_level, LOG_TRACE);
	cfg_free(c);
	c = good("[target]\ncontrol_idle_timeout = 0\n");
	assert_int_equal(c->target.control_idle_timeout, 0);
	cfg_free(c);
}

static void test_group_keys(void **state)
{
	const struct lun_group *g;
	struct cfg *c;

	(void)state;
	c = good("[luns.big]\n"
		 "first = 100\n"
		 "count = 50\n"
		 "size = 2T\n"
		 "block_size = 4096\n"
		 "physical_block_exponent = 3\n"
		 "thin = no\n"
		 "lbprz = no\n"
		 "vendor = ACME\n"
		 "product = Roadrunner 9000\n"
		 "revision = 1.2\n"
		 "partitions = 5\n"
		 "ptable = mbr\n"
		 "partition_sizes = 1G, 512M,4K\n"
		 "max_transfer = 8M\n"
		 "opt_transfer = 1M\n"
		 "max_unmap = 2G\n"
		 "max_unmap_descriptors = 16\n"
		 "max_write_same = 64M\n"
		 "rotation_rate = 7200\n"
		 "write_cache = no\n"
		 "removable = yes\n"
		 "sanitize_time = 2.5\n");
	assert_int_equal(c->ngroups, 1);
	g = &c->groups[0];
	assert_string_equal(g->name, "big");
	assert_int_equal(g->first, 100);
	assert_int_equal(g->count, 50);
	assert_int_equal(g->size, 2ull << 40);
	assert_int_equal(g->block_size, 4096);
	assert_int_equal(g->phys_exp, 3);
	assert_false(g->thin);
	assert_false(g->lbprz);
	assert_string_equal(g->vendor, "ACME");
	assert_string_equal(g->product, "Roadrunner 9000");
	assert_string_equal(g->revision, "1.2");
	assert_int_equal(g->nparts, 5);
	assert_int_equal(g->ptable, PTABLE_MBR);
	/* partition sizes become blocks of the group's block size */
	assert_int_equal(g->nsizes, 3);
	assert_int_equal(g->part_sizes[0], (1u << 30) / 4096);
	assert_int_equal(g->part_sizes[1], (512u << 20) / 4096);
	assert_int_equal(g->part_sizes[2], 1);
	assert_int_equal(g->max_xfer_blocks, 2048);
	assert_int_equal(g->opt_xfer_blocks, 256);
	assert_int_equal(g->max_unmap_blocks, (2u << 30) / 4096);
	assert_int_equal(g->max_unmap_desc, 16);
	assert_int_equal(g->max_ws_blocks, (64u << 20) / 4096);
	assert_int_equal(g->rotation_rate, 7200);
	assert_int_equal(g->mode_default, 0);
	assert_true(g->removable);
	assert_int_equal(g->sanitize_ms, 2500);
	cfg_free(c);

	c = good("[luns]\nrotation_rate = ssd\nptable = dos\npartitions = 1\n");
	assert_int_equal(c->groups[0].rotation_rate, 1);
	assert_int_equal(c->groups[0].ptable, PTABLE_MBR);
	cfg_free(c);
}

static void test_groups_layout(void **state)
{
	struct cfg *c;

	(void)state;
	/* an unset first follows the group before it in the file */
	c = good("[luns.a]\ncount = 10\n[luns.b]\ncount = 5\n"
		 "[luns.c]\nfirst = 1000\ncount = 0\n[luns.d]\ncount = 2\n");
	assert_int_equal(c->ngroups, 4);
	assert_int_equal(c->groups[0].first, 0);
	assert_int_equal(c->groups[1].first, 10);
	assert_int_equal(c->groups[2].first, 1000);
	assert_int_equal(c->groups[2].count, 0);
	assert_int_equal(c->groups[3].first, 1000);
	assert_int_equal(cfg_total_luns(c), 17);
	cfg_free(c);
	/* adjacent ranges do not overlap; max_luns may come after [luns] */
	c = good("[luns]\ncount = 100\n[luns.x]\nfirst = 100\ncount = 28\n"
		 "[target]\nmax_luns = 128\n");
	assert_int_equal(c->target.max_luns, 128);
	cfg_free(c);
}

/* range.N: LUNs beyond first and count, with their own size and state */
static void test_group_ranges(void **state)
{
	struct cfg *c;

	(void)state;
	c = good("[target]\nmax_luns = 64\n[luns]\ncount = 2\nsize = 1M\n"
		 "range.1 = 5-7 size=2M\nrange.2 = 9 offline\n"
		 "[luns.b]\nfirst = 20\ncount = 0\nrange.1 = 30\n");
	assert_int_equal(c->nranges, 3);
	assert_int_equal(c->ranges[0].group, 0);
	assert_int_equal(c->ranges[0].first, 5);
	assert_int_equal(c->ranges[0].last, 7);
	assert_int_equal(c->ranges[0].size, 2u << 20);
	assert_false(c->ranges[0].offline);
	assert_int_equal(c->ranges[1].first, 9);
	assert_int_equal(c->ranges[1].size, 0);
	assert_true(c->ranges[1].offline);
	assert_int_equal(c->ranges[2].group, 1);
	assert_int_equal(cfg_total_luns(c), 2 + 3 + 1 + 1);
	/* what save-config writes back: the keys set, by section */
	assert_non_null(strstr(c->settings, "[target]\nmax_luns = 64\n"));
	assert_string_equal(c->group_settings[0], "size = 1M\n");
	assert_string_equal(c->group_settings[1], "");
	cfg_free(c);
	bad("[target]\nmax_luns = 64\n[luns]\ncount = 4\nrange.1 = 3\n",
	    "t.conf:5: [luns] range.1: LUNs 3-3 overlap [luns] (LUNs 0-3, line 3)");
	bad("[luns]\ncount = 0\nrange.1 = 1\nrange.2 = 0-1\n",
	    "t.conf:3: [luns] range.1: LUNs 1-1 overlap range.2 of [luns] (LUNs 0-1, line 4)");
	bad("[luns]\ncount = 0\nrange.1 = 2-1\n",
	    "t.conf:3: [luns] range.1 = 2-1: LUNs 2-1: not a range within 0-1048575");
	bad("[luns]\ncount = 0\nrange.0 = 1\n",
	    "t.conf:3: [luns] range.0 = 1: unknown key (ranges are range.N = A[-B] [size=S] [offline], N from 1)");
	bad("[luns]\ncount = 0\nrange.1 = 1\nrange.1 = 2\n",
	    "t.conf:4: [luns] range.1 = 2: duplicate key (first set on line 3)");
	bad("[luns]\ncount = 0\nrange.1 = 1 size=0\n",
	    "t.conf:3: [luns] range.1 = 1 size=0: size=0: not a size from 512 to 8P");
	bad("[luns]\ncount = 0\nrange.1 = 1 offline offline\n",
	    "t.conf:3: [luns] range.1 = 1 offline offline: 'offline': not size=S or offline (given once each)");
}

/* @text's errors, which must not hold @unwanted anywhere. */
static void bad_without(const char *text, const char *unwanted)
{
	struct cfg *c;
	struct cfg_parser *p = parse(text, &c);

	if (c)
		fail_msg("accepted, wanted errors without: %s", unwanted);
	if (strstr(cfg_errors(p), unwanted))
		fail_msg("did not want\n  %s\ngot\n%s", unwanted,
			 cfg_errors(p));
	cfg_parser_destroy(p);
}

/*
 * A [luns] group with no first and count LUNs and @n range lines, range.N
 * at LUN N - 1 (the order save-config writes), every other one offline:
 * in line order when @stride is 1, else N = 1 + (i * @stride) % @n for
 * line i (@stride coprime with @n: every N once, out of order). A range
 * line of its own, @extra, follows if not NULL. Freed by the caller.
 */
static char *ranges_text(unsigned int n, unsigned int stride, const char *extra)
{
	char *text = NULL;
	size_t len = 0;
	unsigned int i, num;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fprintf(f, "[target]\nmax_luns = %u\n[luns]\ncount = 0\n", n + 16);
	for (i = 0; i < n; i++) {
		num = (unsigned int)(1 + (uint64_t)i * stride % n);
		fprintf(f, "range.%u = %u%s\n", num, num - 1,
			num % 2 ? " offline" : "");
	}
	if (extra)
		fprintf(f, "%s\n", extra);
	assert_int_equal(fclose(f), 0);
	return text;
}

/*
 * The duplicate and overlap checks of range.N, whatever the order of the
 * lines: each message names the line it is about and the earlier line it
 * clashes with, as it did when every line was checked against every
 * earlier one (issue 25: that took 17 s at 131,072 lines).
 */
static void test_range_checks(void **state)
{
	struct cfg_parser *p;
	char *text, *more = NULL;
	struct cfg *c;
	size_t len = 0;
	FILE *f;
	int i;

	(void)state;
	/* adjacent ranges and first/count LUNs, out of order, do not overlap */
	c = good("[target]\nmax_luns = 64\n[luns]\nfirst = 10\ncount = 2\n"
		 "range.3 = 12-15\nrange.1 = 0-9 offline\nrange.2 = 16\n"
		 "[luns.b]\nfirst = 17\ncount = 0\nrange.1 = 18-19\n"
		 "range.3 = 17\n");
	assert_int_equal(c->nranges, 5);
	assert_int_equal(cfg_total_luns(c), 2 + 4 + 10 + 1 + 2 + 1);
	/* kept in line order, whatever N says */
	assert_int_equal(c->ranges[0].first, 12);
	assert_int_equal(c->ranges[1].first, 0);
	assert_true(c->ranges[1].offline);
	assert_int_equal(c->ranges[2].first, 16);
	assert_int_equal(c->ranges[3].group, 1);
	cfg_free(c);

	/* overlaps out of line order: the message goes to the range that
	 * starts later, and names the one it runs into */
	bad("[luns]\ncount = 0\nrange.1 = 10-20\nrange.2 = 0-3\n"
	    "range.3 = 15\n",
	    "t.conf:5: [luns] range.3: LUNs 15-15 overlap range.1 of [luns] (LUNs 10-20, line 3)");
	bad("[luns]\ncount = 0\nrange.1 = 5-9\nrange.2 = 0-5\n",
	    "t.conf:3: [luns] range.1: LUNs 5-9 overlap range.2 of [luns] (LUNs 0-5, line 4)");
	/* a range inside a wider one that ends later: the wide one is named */
	bad("[luns]\ncount = 0\nrange.1 = 0-100\nrange.2 = 20-30\n"
	    "range.3 = 40\n",
	    "t.conf:5: [luns] range.3: LUNs 40-40 overlap range.1 of [luns] (LUNs 0-100, line 3)");
	/* a group's first and count LUNs after a range, from another group */
	bad("[luns]\ncount = 0\nrange.1 = 30-40\n"
	    "[luns.b]\nfirst = 35\ncount = 10\n",
	    "t.conf:3: [luns] range.1: LUNs 30-40 overlap [luns.b] (LUNs 35-44, line 4)");
	/* the same start: the earlier line is the one run into */
	bad("[luns]\ncount = 0\nrange.2 = 7\n[luns.b]\ncount = 0\n"
	    "range.1 = 7-8\n",
	    "t.conf:6: [luns.b] range.1: LUNs 7-8 overlap range.2 of [luns] (LUNs 7-7, line 3)");

	/* duplicate N out of order: the first line that set it is named */
	bad("[luns]\ncount = 0\nrange.3 = 1\nrange.1 = 2\nrange.3 = 4\n",
	    "t.conf:5: [luns] range.3 = 4: duplicate key (first set on line 3)");
	/* a third time: still the first line, not the second */
	bad("[luns]\ncount = 0\nrange.7 = 1\nrange.7 = 2\nrange.7 = 3\n",
	    "t.conf:5: [luns] range.7 = 3: duplicate key (first set on line 3)");
	/* a duplicate's value is not judged */
	bad_without("[luns]\ncount = 0\nrange.1 = 1\nrange.1 = 2-1\n",
		    "not a range");
	bad("[luns]\ncount = 0\nrange.1 = 1\nrange.1 = 2-1\n",
	    "t.conf:4: [luns] range.1 = 2-1: duplicate key (first set on line 3)");
	/* a line that was refused sets nothing: the next one is no duplicate */
	bad_without("[luns]\ncount = 0\nrange.1 = 2-1\nrange.1 = 5\n",
		    "duplicate");
	/* the same N in two groups is two keys */
	c = good("[luns]\ncount = 0\nrange.1 = 1\n[luns.b]\nfirst = 2\n"
		 "count = 0\nrange.1 = 2\n");
	assert_int_equal(c->nranges, 2);
	cfg_free(c);
	/* N as large as it goes, and N apart by powers of two */
	c = good("[luns]\ncount = 0\nrange.4294967295 = 1\n"
		 "range.65536 = 2\nrange.131072 = 3\nrange.1 = 4\n"
		 "range.4294901760 = 5\n");
	assert_int_equal(c->nranges, 5);
	cfg_free(c);

	/* many lines, out of order, then one duplicate and one overlap */
	text = ranges_text(4099, 1000, NULL);
	c = good(text);
	assert_int_equal(c->nranges, 4099);
	assert_int_equal(cfg_total_luns(c), 4099);
	cfg_free(c);
	free(text);
	/* line 5 holds N 1 (i = 0), line 6 N 1001 */
	text = ranges_text(4099, 1000, "range.1001 = 4100");
	bad(text,
	    "t.conf:4104: [luns] range.1001 = 4100: duplicate key (first set on line 6)");
	free(text);
	text = ranges_text(4099, 1000, "range.5000 = 1000-1001");
	bad(text,
	    "t.conf:4104: [luns] range.5000: LUNs 1000-1001 overlap range.1001 of [luns] (LUNs 1000-1000, line 6)");
	free(text);
	/* in line order, as save-config writes them */
	text = ranges_text(4096, 1, "range.4096 = 5000");
	bad(text,
	    "t.conf:4101: [luns] range.4096 = 5000: duplicate key (first set on line 4100)");
	free(text);

	/* duplicates are counted as their lines come, among the other errors:
	 * the 50 shown are the file's first 50 */
	text = ranges_text(2, 1, NULL);
	f = open_memstream(&more, &len);
	assert_non_null(f);
	fputs(text, f);
	for (i = 0; i < 30; i++)
		fprintf(f, "range.2 = %d\nbogus%d = 1\n", 100 + i, i);
	assert_int_equal(fclose(f), 0);
	free(text);
	p = parse(more, &c);
	assert_null(c);
	assert_int_equal(cfg_error_count(p), 60);
	/* line 7 is the first duplicate, line 56 the 50th error */
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:7: [luns] range.2 = 100: duplicate key (first set on line 6)"));
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:56: [luns] bogus24 = 1: unknown key (see sdswarm.conf(5))"));
	assert_null(strstr(cfg_errors(p), "range.2 = 125"));
	assert_true(has_line(cfg_errors(p), "t.conf: more errors not shown"));
	cfg_parser_destroy(p);
	free(more);
}

static void test_store_keys(void **state)
{
	struct cfg *c;

	(void)state;
	c = good("[store]\ntype = mem\nchunk_size = 64K\nmem_limit = 1G\n"
		 "shards = 8\n");
	assert_int_equal(c->store.type, CFG_STORE_MEM);
	assert_int_equal(c->store.mem.chunk_size, 65536);
	assert_int_equal(c->store.mem.mem_limit, 1ull << 30);
	assert_int_equal(c->store.mem.shards, 8);
	cfg_free(c);
	c = good("[store]\ntype = file\ndir = /var/tmp/sds\n"
		 "max_open_files = 1000\nfile_mode = 0640\n");
	assert_int_equal(c->store.type, CFG_STORE_FILE);
	assert_string_equal(c->store.dir, "/var/tmp/sds");
	assert_int_equal(c->store.max_open_files, 1000);
	assert_int_equal(c->store.file_mode, 0640);
	cfg_free(c);
}

static void test_frontend_keys(void **state)
{
	char name[CFG_ISCSI_NAME_MAX + 1];
	struct cfg *c;

	(void)state;
	c = good(
		"[iscsi]\n"
		"enabled = yes\n"
		"portal = [::1]:3261\n"
		"targets = 4\n"
		"iqn_prefix = iqn.2030-01.com.example\n"
		"luns_per_target = 256\n"
		"chap_user = alice\n"
		"chap_secret = 0123456789ab\n"
		"mutual_user = target\n"
		"mutual_secret = ba9876543210\n"
		"initiators = iqn.1994-05.com.redhat:abc, eui.0123456789abcdef naa.60014051234567890123456789abcdef\n"
		"max_sessions = 8\n"
		"threads = 2\n"
		"max_recv_data_segment_length = 64K\n"
		"max_burst_length = 512K\n"
		"first_burst_length = 128K\n"
		"immediate_data = no\n"
		"initial_r2t = yes\n"
		"[tcmu]\n"
		"enabled = true\n"
		"hba = user_7\n"
		"name_prefix = sw\n"
		"ring_size = 64M\n"
		"fabric = none\n"
		"[fuse]\n"
		"mountpoint = /mnt/sds\n"
		"threads = 8\n"
		"options = allow_other,default_permissions\n"
		"attr_timeout = 0.5\n");
	assert_true(c->iscsi.enabled);
	assert_string_equal(c->iscsi.portal, "[::1]:3261");
	assert_string_equal(c->iscsi.host, "::1");
	assert_int_equal(c->iscsi.port, 3261);
	assert_int_equal(c->iscsi.targets, 4);
	assert_int_equal(c->iscsi.luns_per_target, 256);
	assert_string_equal(c->iscsi.chap_user, "alice");
	assert_string_equal(c->iscsi.chap_secret, "0123456789ab");
	assert_string_equal(c->iscsi.mutual_user, "target");
	assert_string_equal(c->iscsi.mutual_secret, "ba9876543210");
	assert_int_equal(c->iscsi.ninitiators, 3);
	assert_string_equal(c->iscsi.initiators[0],
			    "iqn.1994-05.com.redhat:abc");
	assert_string_equal(c->iscsi.initiators[1], "eui.0123456789abcdef");
	assert_string_equal(c->iscsi.initiators[2],
			    "naa.60014051234567890123456789abcdef");
	assert_int_equal(c->iscsi.max_sessions, 8);
	assert_int_equal(c->iscsi.threads, 2);
	assert_int_equal(c->iscsi.max_recv_data_segment_length, 65536);
	assert_int_equal(c->iscsi.max_burst_length, 524288);
	assert_int_equal(c->iscsi.first_burst_length, 131072);
	assert_false(c->iscsi.immediate_data);
	assert_true(c->iscsi.initial_r2t);
	assert_int_equal(
		cfg_iscsi_target_name(&c->iscsi, 3, name, sizeof(name)),
		strlen("iqn.2030-01.com.example:t3"));
	assert_string_equal(name, "iqn.2030-01.com.example:t3");
	assert_int_equal(
		cfg_iscsi_target_name(&c->iscsi, 4, name, sizeof(name)),
		-ERANGE);
	assert_true(c->tcmu.enabled);
	assert_string_equal(c->tcmu.hba, "user_7");
	assert_string_equal(c->tcmu.name_prefix, "sw");
	assert_int_equal(c->tcmu.ring_size, 64u << 20);
	assert_int_equal(c->tcmu.fabric, CFG_TCMU_NONE);
	assert_true(c->fuse.enabled);
	assert_string_equal(c->fuse.mountpoint, "/mnt/sds");
	assert_int_equal(c->fuse.threads, 8);
	assert_string_equal(c->fuse.options, "allow_other,default_permissions");
	assert_true(c->fuse.attr_timeout > 0.49 && c->fuse.attr_timeout < 0.51);
	cfg_free(c);

	c = good("[iscsi]\nportal = 0.0.0.0:860\n");
	assert_string_equal(c->iscsi.host, "0.0.0.0");
	assert_int_equal(c->iscsi.port, 860);
	cfg_free(c);
}

/*
 * [iscsi]'s three buffer budgets: per connection <= per initiator <= the
 * daemon's; the initiator's share, unset, a quarter of the daemon's but at
 * least a connection's, so that setting only its siblings stays good.
 */
static void test_buffer_budgets(void **state)
{
	struct cfg_parser *p;
	struct cfg *c;

	(void)state;
	c = good("");
	assert_int_equal(c->iscsi.max_buffer_per_connection, 64u << 20);
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 256u << 20);
	assert_int_equal(c->iscsi.max_buffer, 1u << 30);
	cfg_free(c);
	c = good("[iscsi]\nmax_buffer = 4G\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 1ull << 30);
	cfg_free(c);
	c = good(
		"[iscsi]\nmax_buffer_per_connection = 64M\nmax_buffer = 80M\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 64u << 20);
	cfg_free(c);
	c = good("[iscsi]\nmax_buffer_per_connection = 512M\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 512u << 20);
	cfg_free(c);
	/* set: both ends of its range, inclusive */
	c = good("[iscsi]\nmax_buffer_per_initiator = 64M\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 64u << 20);
	cfg_free(c);
	c = good("[iscsi]\nmax_buffer_per_initiator = 1G\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 1u << 30);
	cfg_free(c);
	c = good("[iscsi]\nmax_buffer_per_connection = 32M\n"
		 "max_buffer_per_initiator = 32M\nmax_buffer = 32M\n");
	assert_int_equal(c->iscsi.max_buffer_per_initiator, 32u << 20);
	cfg_free(c);

	bad("[iscsi]\nmax_buffer_per_initiator = 16M\n",
	    "t.conf:2: [iscsi] max_buffer_per_initiator = 16M: not a size from 32M to 1T");
	bad("[iscsi]\nmax_buffer_per_initiator = 2T\n",
	    "t.conf:2: [iscsi] max_buffer_per_initiator = 2T: not a size from 32M to 1T");
	/* out of order: at the line of the key set, the smaller one's first */
	bad("[iscsi]\nmax_buffer_per_initiator = 32M\n",
	    "t.conf:2: [iscsi] max_buffer_per_connection 67108864 is above max_buffer_per_initiator 33554432");
	bad("[iscsi]\nmax_buffer_per_initiator = 64M\n"
	    "max_buffer_per_connection = 128M\n",
	    "t.conf:3: [iscsi] max_buffer_per_connection 134217728 is above max_buffer_per_initiator 67108864");
	bad("[iscsi]\nmax_buffer_per_initiator = 2G\n",
	    "t.conf:2: [iscsi] max_buffer_per_initiator 2147483648 is above max_buffer 1073741824");
	bad("[iscsi]\nmax_buffer_per_initiator = 512M\nmax_buffer = 256M\n",
	    "t.conf:2: [iscsi] max_buffer_per_initiator 536870912 is above max_buffer 268435456");
	bad("[iscsi]\nmax_buffer_per_connection = 2G\n",
	    "t.conf:2: [iscsi] max_buffer_per_connection 2147483648 is above max_buffer 1073741824");

	/* from the command line too */
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_string(p, "t.conf", "[iscsi]\n"), 0);
	assert_int_equal(
		cfg_override(p, "iscsi", "max_buffer_per_initiator", "4G"), 0);
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	assert_true(has_line(
		cfg_errors(p),
		"command line: [iscsi] max_buffer_per_initiator 4294967296 is above max_buffer 1073741824"));
	cfg_parser_destroy(p);
}

/* Several portals and the ALUA port groups over them. */
static void test_port_groups(void **state)
{
	struct scsi_alua a;
	struct cfg *c;

	(void)state;
	c = good("[iscsi]\nportal = 127.0.0.1:3260\n");
	assert_int_equal(c->iscsi.nportals, 1);
	assert_int_equal(c->nport_groups, 0);
	assert_int_equal(cfg_alua(c, &a), 0);
	assert_int_equal(a.ngroups, 0);
	cfg_free(c);

	/* port 0: a free port at listen, for each portal written so */
	c = good("[iscsi]\nportal = 127.0.0.1:0, 127.0.0.1:0\n");
	assert_int_equal(c->iscsi.nportals, 2);
	assert_int_equal(c->iscsi.port, 0);
	assert_int_equal(c->iscsi.portals[1].port, 0);
	assert_string_equal(c->iscsi.portal, "127.0.0.1:0");
	cfg_free(c);

	c = good(
		"[iscsi]\n"
		"portal = 127.0.0.1:3260, 127.0.0.2:3260 [::1]:3262,127.0.0.1:3263\n"
		"[port_group.left]\n"
		"ports = 1, 3\n"
		"[port_group.right]\n"
		"id = 7\n"
		"state = standby\n"
		"ports = 2 4\n");
	assert_int_equal(c->iscsi.nportals, 4);
	assert_string_equal(c->iscsi.portal, "127.0.0.1:3260");
	assert_string_equal(c->iscsi.portals[1].host, "127.0.0.2");
	assert_string_equal(c->iscsi.portals[2].text, "[::1]:3262");
	assert_string_equal(c->iscsi.portals[2].host, "::1");
	assert_int_equal(c->iscsi.portals[3].port, 3263);
	assert_int_equal(c->nport_groups, 2);
	assert_int_equal(cfg_alua(c, &a), 1);
	assert_int_equal(a.ngroups, 2);
	assert_int_equal(a.nports, 4);
	assert_string_equal(a.groups[0].name, "left");
	assert_int_equal(a.groups[0].id, 1); /* by position */
	assert_int_equal(a.groups[0].state, SCSI_ALUA_OPTIMIZED);
	assert_int_equal(a.groups[1].id, 7);
	assert_int_equal(a.groups[1].state, SCSI_ALUA_STANDBY);
	assert_int_equal(a.port_group[0], 0);
	assert_int_equal(a.port_group[1], 1);
	assert_int_equal(a.port_group[2], 0);
	assert_int_equal(a.port_group[3], 1);
	cfg_free(c);

	/* the errors: each names the file, line, section and why */
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1:3261\n"
	    "[port_group.a]\nports = 1\n[port_group.b]\nports = 2, 3\n",
	    "t.conf:6: [port_group.b] ports = 2, 3: port 3, but [iscsi] portal lists 2 portals (ports 1..2): more paths than portals");
	bad("[port_group.a]\nports = 1, 2\n",
	    "t.conf:2: [port_group.a] ports = 1, 2: port 2, but [iscsi] portal lists 1 portal (ports 1..1): more paths than portals");
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1:3261\n"
	    "[port_group.a]\nports = 1\n",
	    "t.conf:2: [iscsi] portal 127.0.0.1:3261 (port 2) is in no [port_group.NAME]");
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1:3261\n"
	    "[port_group.a]\nports = 1,2\n[port_group.b]\nports = 2\n",
	    "t.conf:6: [port_group.b] ports = 2: port 2 is already in another port group");
	bad("[port_group.a]\nstate = offline\nports = 1\n",
	    "t.conf:2: [port_group.a] state = offline: not active/optimized (ao), active/non-optimized (an), standby or unavailable");
	bad("[port_group.a]\nports = 0\n",
	    "t.conf:2: [port_group.a] ports = 0: not a list of relative target ports 1..16 (positions in [iscsi] portal)");
	bad("[port_group.a]\nports = 1 1\n",
	    "t.conf:2: [port_group.a] ports = 1 1: port 1 is listed twice");
	bad("[port_group.a]\nid = 0\nports = 1\n",
	    "t.conf:2: [port_group.a] id = 0: not a number from 1 to 65535");
	bad("[port_group.a]\nstate = standby\n",
	    "t.conf:1: [port_group.a]: no ports (ports = the positions of its portals in [iscsi] portal, from 1)");
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1:3261\n"
	    "[port_group.a]\nid = 5\nports = 1\n"
	    "[port_group.b]\nid = 5\nports = 2\n",
	    "t.conf:7: [port_group.b]: id 5 is also [port_group.a]'s");
	bad("[port_group.a]\nports = 1\n[port_group.a]\nports = 1\n",
	    "t.conf:3: [port_group.a]: port group a already defined on line 1");
	bad("[port_group.7]\nports = 1\n",
	    "t.conf:1: [port_group.7]: a port group name starts with a letter");
	bad("[port_group]\nports = 1\n",
	    "t.conf:1: [port_group]: unknown section (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)");
	bad("[port_group.a]\nport = 1\n",
	    "t.conf:2: [port_group.a] port = 1: unknown key (did you mean ports?)");
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1:3260\n",
	    "t.conf:2: [iscsi] portal = 127.0.0.1:3260, 127.0.0.1:3260: 127.0.0.1:3260 is listed twice");
	bad("[iscsi]\nportal = 127.0.0.1:3260, 127.0.0.1\n",
	    "t.conf:2: [iscsi] portal = 127.0.0.1:3260, 127.0.0.1: 127.0.0.1 is not ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1..65535, or 0 for a free one)");
	bad("[iscsi]\nportal = ,\n",
	    "t.conf:2: [iscsi] portal = ,: no portal (ADDRESS:PORT, several separated by commas)");
	bad("[iscsi]\nportal = 127.0.0.1:1 127.0.0.1:2 127.0.0.1:3 127.0.0.1:4 127.0.0.1:5 127.0.0.1:6 127.0.0.1:7 127.0.0.1:8 127.0.0.1:9 127.0.0.1:10 127.0.0.1:11 127.0.0.1:12 127.0.0.1:13 127.0.0.1:14 127.0.0.1:15 127.0.0.1:16 127.0.0.1:17\n",
	    "t.conf:2: [iscsi] portal = 127.0.0.1:1 127.0.0.1:2 127.0.0.1:3 127.0.0.1:4 127.0.0.1:5 127.0.0.1:6 127.0.0.1:7 127.0.0.1:8 127.0.0.1:9 127.0.0.1:10 127.0.0.1:11 127.0.0.1:12 127.0.0.1:13 127.0.0.1:14 127.0.0.1:15 127.0.0.1:16 127.0.0.1:17: more than 16 portals");
}

static void test_file_syntax(void **state)
{
	struct cfg *c;

	(void)state;
	/* BOM, CRLF, comments of both kinds, inline ';' comments, blanks */
	c = good("\xef\xbb\xbf# header\r\n"
		 "; another\r\n"
		 "\r\n"
		 "[luns]   ; the default group\r\n"
		 "count = 3 ; three\r\n"
		 "  size=2G\r\n");
	assert_int_equal(c->groups[0].count, 3);
	assert_int_equal(c->groups[0].size, 2ull << 30);
	cfg_free(c);
	/* line numbers survive comments and blank lines */
	bad("# one\n\n; three\n[luns]\n\n\nsize = 0\n",
	    "t.conf:7: [luns] size = 0: not a size from 512 to 8P");
}

/*
 * What a line may look like, one case each: the rules inih and the reader
 * around it kept between them, which config.c's line splitter now keeps.
 */
static void test_line_rules(void **state)
{
	char line[CFG_LINE_MAX + 40];
	struct cfg_parser *p;
	struct cfg *c;

	(void)state;
	/* ':' also ends a key; a value keeps later '=' and ':' */
	c = good("[luns]\nsize: 2G\ncount:3\nproduct = a=b:c\n");
	assert_int_equal(c->groups[0].size, 2ull << 30);
	assert_int_equal(c->groups[0].count, 3);
	assert_string_equal(c->groups[0].product, "a=b:c");
	cfg_free(c);
	/* ';' starts a comment only after a space or tab; '#' only at the
	 * start of a line */
	c = good("[luns] # the group\n"
		 "product = A;B # C\n"
		 "count = 3\t; three\n"
		 "vendor = V ;x ; y\n");
	assert_string_equal(c->groups[0].product, "A;B # C");
	assert_string_equal(c->groups[0].vendor, "V");
	assert_int_equal(c->groups[0].count, 3);
	cfg_free(c);
	c = good("[luns]\nproduct =;x\n");
	assert_string_equal(c->groups[0].product, ";x");
	cfg_free(c);
	bad("[luns]\nproduct = ; a comment\n",
	    "t.conf:2: [luns] product = : empty");
	/* indented comments, white-space-only lines, no final newline */
	c = good("  ; one\n\t# two\n \t \n[luns]\r\ncount = 4");
	assert_int_equal(c->groups[0].count, 4);
	cfg_free(c);
	/* a byte order mark counts on line 1 only */
	bad("[luns]\n\xef\xbb\xbf"
	    "count = 3\n",
	    "t.conf:2: [luns] \xef\xbb\xbf"
	    "count = 3: unknown key (see sdswarm.conf(5))");
	/* 4,000 characters are allowed, the line end not counted */
	memset(line, 'x', sizeof(line));
	line[0] = ';';
	memcpy(line + CFG_LINE_MAX, "\r\n[luns]\n", 10);
	c = good(line);
	cfg_free(c);
	/* 4,001 are not, and nothing after such a line is read */
	memset(line, 'x', sizeof(line));
	line[0] = ';';
	memcpy(line + CFG_LINE_MAX + 1, "\n[lunz]\n", 9);
	p = parse(line, &c);
	assert_null(c);
	assert_string_equal(
		cfg_errors(p),
		"t.conf:1: line longer than 4000 characters; the rest of the file is not read\n");
	cfg_parser_destroy(p);
	/* a comment before the '=' leaves no key */
	bad("[luns]\nsize ; = 1G\n",
	    "t.conf:2: size ; = 1G: not KEY = VALUE, a [section] or a comment");
	/* section names are taken as written, however long */
	bad("[ luns ]\n",
	    "t.conf:1: [ luns ]: unknown section (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)");
	bad("[luns.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz]\n",
	    "t.conf:1: [luns.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz]: a group name is 1 to 31 characters");
	/* every bad line is reported; a bad header's keys are skipped */
	p = parse("[luns]\nfoo\n[store\nx = 1\n[luns] x\ny = 2\nbar\n", &c);
	assert_null(c);
	assert_int_equal(cfg_error_count(p), 4);
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:2: foo: not KEY = VALUE, a [section] or a comment"));
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:7: bar: not KEY = VALUE, a [section] or a comment"));
	cfg_parser_destroy(p);
}

/* A NUL byte can only come from a file. */
static void test_nul_byte(void **state)
{
	static const char text[] = "[luns]\ncount = 3\0\nsize = 1G\n";
	char path[] = "/tmp/test-config-XXXXXX", want[64];
	struct cfg_parser *p;
	struct cfg *c = NULL;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_file(p, path), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: a NUL byte in the line", path);
	assert_true(has_line(cfg_errors(p), want));
	assert_int_equal(cfg_error_count(p), 1);
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	cfg_parser_destroy(p);
	unlink(path);
}

/* ---- sizes -------------------------------------------------------------- */

/* Parsing is common/parse.h's (tests/unit/test-common.c); the config
 * writes sizes back in a form it reads. */
static void test_sizes(void **state)
{
	char buf[24];
	uint64_t v;

	(void)state;
	assert_int_equal(cfg_format_size(1ull << 40, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "1T");
	cfg_format_size(1536ull << 10, buf, sizeof(buf));
	assert_string_equal(buf, "1536K");
	cfg_format_size(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
	cfg_format_size(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	assert_int_equal(cfg_format_size(1ull << 40, buf, 2), -ENOSPC);
	/* format then parse is the identity */
	for (v = 1; v < (1ull << 62); v = v * 3 + 512) {
		cfg_format_size(v, buf, sizeof(buf));
		uint64_t back;

		assert_int_equal(parse_size(buf, UINT64_MAX, &back), 0);
		assert_int_equal(back, v);
	}
}

/* ---- [faults] (the rule grammar: test-fault-rule.c) ------------------- */

static void test_faults_section(void **state)
{
	struct cfg *c;

	(void)state;
	/* rules come out in N order, whatever the file order */
	c = good("[faults]\n"
		 "fault.10 = hang luns=3\n"
		 "fault.2 = delay delay=5ms\n"
		 "fault.7 = medium-read lba=0-7\n");
	assert_int_equal(c->nfaults, 3);
	assert_int_equal(c->faults[0].kind, FAULT_DELAY);
	assert_int_equal(c->faults[1].kind, FAULT_MEDIUM_READ);
	assert_int_equal(c->faults[2].kind, FAULT_HANG);
	cfg_free(c);
}

/* ---- error paths -------------------------------------------------------- */

static void test_syntax_errors(void **state)
{
	char line[CFG_LINE_MAX + 40];

	(void)state;
	bad("[lunz]\nx = 1\n",
	    "t.conf:1: [lunz]: unknown section (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)");
	bad("size = 1G\n",
	    "t.conf:1: size = 1G: a key before any [section] (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)");
	bad("[luns]\nthis is not a key\n",
	    "t.conf:2: this is not a key: not KEY = VALUE, a [section] or a comment");
	bad("[luns]\n[store\n",
	    "t.conf:2: [store: a section header needs a closing ]");
	bad("[luns] x\n", "t.conf:1: [luns] x: text after the section header");
	bad("[luns]\n= 5\n", "t.conf:2: [luns] = 5: the key name is missing");
	bad("[target]\n[target]\n",
	    "t.conf:2: [target]: section repeated (first on line 1)");
	bad("[luns]\n[luns.default]\n",
	    "t.conf:2: [luns.default]: group default already defined on line 1");
	bad("[luns.]\n",
	    "t.conf:1: [luns.]: a group name is 1 to 31 characters");
	bad("[luns.a b]\n",
	    "t.conf:1: [luns.a b]: a group name is letters, digits, _ and -");
	bad("[luns]\nsise = 1G\n",
	    "t.conf:2: [luns] sise = 1G: unknown key (did you mean size?)");
	bad("[store]\ncolour = blue\n",
	    "t.conf:2: [store] colour = blue: unknown key (see sdswarm.conf(5))");
	bad("[luns]\nsize = 1G\ncount = 2\nsize = 2G\n",
	    "t.conf:4: [luns] size = 2G: duplicate key (first set on line 2)");
	/* indented lines are keys, not continuations of the one above */
	bad("[luns]\nproduct = A\n  product = B\n",
	    "t.conf:3: [luns] product = B: duplicate key (first set on line 2)");
	memset(line, 'x', sizeof(line));
	memcpy(line, "[luns]\nvendor = ", 16);
	line[CFG_LINE_MAX + 20] = '\n';
	line[CFG_LINE_MAX + 21] = '\0';
	bad(line,
	    "t.conf:2: line longer than 4000 characters; the rest of the file is not read");
}

/* 108 characters: a socket path one too long with its leading '/' */
#define LONG108                                                                \
	"0123456789012345678901234567890123456789012345678901234567890123"     \
	"456789012345678901234567890123456789012345678"

static void test_value_errors(void **state)
{
	(void)state;
	bad("[luns]\nsize = 12Q\n",
	    "t.conf:2: [luns] size = 12Q: not a size (use a number with K, M, G, T or P)");
	bad("[luns]\nsize = 16P\n",
	    "t.conf:2: [luns] size = 16P: not a size from 512 to 8P");
	bad("[luns]\ncount = many\n",
	    "t.conf:2: [luns] count = many: not a number");
	bad("[target]\nmax_luns = 1048577\n",
	    "t.conf:2: [target] max_luns = 1048577: not a number from 1 to 1048576");
	bad("[target]\nmax_luns = 0\n",
	    "t.conf:2: [target] max_luns = 0: not a number from 1 to 1048576");
	bad("[target]\noui = 0x1000000\n",
	    "t.conf:2: [target] oui = 0x1000000: not a number from 0 to 16777215");
	bad("[target]\nseed = 010x\n",
	    "t.conf:2: [target] seed = 010x: not a number");
	bad("[target]\nscheme = bsd\n",
	    "t.conf:2: [target] scheme = bsd: unknown scheme (legacy, naive, wilcox, linux, dynamic)");
	bad("[target]\nname_prefix = SD\n",
	    "t.conf:2: [target] name_prefix = SD: not lower-case letters");
	bad("[target]\nlog_level = loud\n",
	    "t.conf:2: [target] log_level = loud: not a log level (err, warning, notice, info, debug, trace or 0..8)");
	bad("[target]\ncontrol = /" LONG108 "\n",
	    "t.conf:2: [target] control = /" LONG108
	    ": longer than 107 characters");
	bad("[luns]\nblock_size = 1024\n",
	    "t.conf:2: [luns] block_size = 1024: not 512 or 4096");
	bad("[luns]\nthin = maybe\n",
	    "t.conf:2: [luns] thin = maybe: not yes or no");
	bad("[luns]\nptable = bsd\n",
	    "t.conf:2: [luns] ptable = bsd: not gpt or mbr");
	bad("[luns]\npartitions = 64\n",
	    "t.conf:2: [luns] partitions = 64: not a number from 0 to 63");
	bad("[luns]\nphysical_block_exponent = 16\n",
	    "t.conf:2: [luns] physical_block_exponent = 16: not a number from 0 to 15");
	bad("[luns]\nvendor = TOOLONGVENDOR\n",
	    "t.conf:2: [luns] vendor = TOOLONGVENDOR: longer than 8 characters");
	bad("[luns]\nproduct = caf\xc3\xa9\n",
	    "t.conf:2: [luns] product = caf\xc3\xa9: not printable ASCII");
	bad("[luns]\nrevision = 12345\n",
	    "t.conf:2: [luns] revision = 12345: longer than 4 characters");
	bad("[luns]\nsanitize_time = 3601\n",
	    "t.conf:2: [luns] sanitize_time = 3601: not a number of seconds from 0 to 3600");
	bad("[luns]\nremovable = maybe\n",
	    "t.conf:2: [luns] removable = maybe: not yes or no");
	bad("[luns]\nrotation_rate = 2\n",
	    "t.conf:2: [luns] rotation_rate = 2: not 0 (not reported), 1 or ssd (non-rotating), or 1025..65534 rpm");
	bad("[luns]\npartitions = 2\npartition_sizes = 1G,,2G\n",
	    "t.conf:3: [luns] partition_sizes = 1G,,2G: size 2 is empty or too long");
	bad("[luns]\npartitions = 2\npartition_sizes = 1G,2X\n",
	    "t.conf:3: [luns] partition_sizes = 1G,2X: '2X' is not a size (use a number with K, M, G, T or P)");
	bad("[luns]\npartitions = 2\npartition_sizes = 1G,\n",
	    "t.conf:3: [luns] partition_sizes = 1G,: ends in a comma");
	bad("[store]\ntype = file\ndir = /x\nfile_mode = 0755\n",
	    "t.conf:4: [store] file_mode = 0755: not an octal mode of read and write bits with the owner's both set (0600 to 0666, e.g. 0640)");
	bad("[store]\ntype = file\ndir = /x\nfile_mode = 0400\n",
	    "t.conf:4: [store] file_mode = 0400: not an octal mode of read and write bits with the owner's both set (0600 to 0666, e.g. 0640)");
	bad("[target]\ncontrol_idle_timeout = 86401\n",
	    "t.conf:2: [target] control_idle_timeout = 86401: not a number from 0 to 86400");
	bad("[store]\ndisk = 1\n",
	    "t.conf:2: [store] disk = 1: unknown key (did you mean dir?)");
	bad("[store]\ntype = disk\n",
	    "t.conf:2: [store] type = disk: not mem or file");
	bad("[store]\nchunk_size = 3K\n",
	    "t.conf:2: [store] chunk_size = 3K: not a power of two from 512 to 1M");
	bad("[store]\nshards = 3\n",
	    "t.conf:2: [store] shards = 3: not a power of two from 1 to 4096");
	bad("[iscsi]\nportal = localhost:3260\n",
	    "t.conf:2: [iscsi] portal = localhost:3260: not ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1..65535, or 0 for a free one)");
	bad("[iscsi]\nportal = 127.0.0.1:65536\n",
	    "t.conf:2: [iscsi] portal = 127.0.0.1:65536: not ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1..65535, or 0 for a free one)");
	bad("[iscsi]\ntargets = 17\n",
	    "t.conf:2: [iscsi] targets = 17: not a number from 1 to 16");
	bad("[iscsi]\nluns_per_target = 16385\n",
	    "t.conf:2: [iscsi] luns_per_target = 16385: not a number from 1 to 16384");
	bad("[iscsi]\niqn_prefix = iqn.2026.org.x\n",
	    "t.conf:2: [iscsi] iqn_prefix = iqn.2026.org.x: not an iqn. name (iqn.YYYY-MM.reversed.domain, lower case, at most 219 characters)");
	bad("[iscsi]\ninitiators = iqn.2020-01.org.a, host7\n",
	    "t.conf:2: [iscsi] initiators = iqn.2020-01.org.a, host7: 'host7' is not an iSCSI name (iqn., eui. or naa.)");
	bad("[iscsi]\ninitiators =\n",
	    "t.conf:2: [iscsi] initiators = : names no initiator (remove the key to admit any initiator)");
	bad("[iscsi]\ninitiators = ,\n",
	    "t.conf:2: [iscsi] initiators = ,: names no initiator (remove the key to admit any initiator)");
	bad("[iscsi]\ninitiators = , ,,\n",
	    "t.conf:2: [iscsi] initiators = , ,,: names no initiator (remove the key to admit any initiator)");
	bad("[iscsi]\nchap_user = a b\n",
	    "t.conf:2: [iscsi] chap_user = a b: not printable ASCII without spaces");
	bad("[iscsi]\nmax_burst_length = 16M\n",
	    "t.conf:2: [iscsi] max_burst_length = 16M: not a size from 512 to 16777215");
	bad("[tcmu]\nhba = loop_0\n",
	    "t.conf:2: [tcmu] hba = loop_0: not user_N (configfs's name for a TCMU HBA)");
	bad("[tcmu]\nring_size = 1536K\n",
	    "t.conf:2: [tcmu] ring_size = 1536K: not a whole number of MiB");
	bad("[tcmu]\nfabric = fc\n",
	    "t.conf:2: [tcmu] fabric = fc: not loopback or none");
	bad("[fuse]\noptions = allow_other,,ro\n",
	    "t.conf:2: [fuse] options = allow_other,,ro: has an empty option");
	bad("[fuse]\noptions = a b\n",
	    "t.conf:2: [fuse] options = a b: not a comma list of mount options");
	bad("[fuse]\nattr_timeout = soon\n",
	    "t.conf:2: [fuse] attr_timeout = soon: not a number of seconds from 0 to 86400");
	bad("[fuse]\nthreads = 0\n",
	    "t.conf:2: [fuse] threads = 0: not a number from 1 to 256");
	bad("[faults]\nrule1 = hang\n",
	    "t.conf:2: [faults] rule1 = hang: unknown key (rules are fault.N = RULE, N from 1)");
	bad("[faults]\nfault.0 = hang\n",
	    "t.conf:2: [faults] fault.0 = hang: unknown key (rules are fault.N = RULE, N from 1)");
	bad("[faults]\nfault.1 = hang\nfault.1 = ua\n",
	    "t.conf:3: [faults] fault.1 = ua: duplicate key (first set on line 2)");
	bad("[faults]\nfault.3 = medium-read lba=9-1\n",
	    "t.conf:2: [faults] fault.3 = medium-read lba=9-1: lba=9-1: first above last");
}

/* @prefix followed by ptable_check()'s reason for this geometry. */
static const char *layout_line(const char *prefix, enum ptable_kind kind,
			       uint64_t nblocks, unsigned int nparts,
			       const uint64_t *sizes, unsigned int nsizes)
{
	static char line[512];
	struct ptable_geom g = {.kind = kind,
				.block_size = 512,
				.nblocks = nblocks,
				.nparts = nparts,
				.sizes = sizes,
				.nsizes = nsizes};
	const char *why = NULL;

	assert_int_equal(ptable_check(&g, &why), -EINVAL);
	assert_non_null(why);
	snprintf(line, sizeof(line), "%s%s", prefix, why);
	return line;
}

static void test_whole_errors(void **state)
{
	(void)state;
	/* ranges against max_luns, wherever max_luns is set */
	bad("[luns]\ncount = 200\n[target]\nmax_luns = 100\n",
	    "t.conf:2: [luns] count = 200: LUNs 0-199 pass max_luns (100)");
	bad("[luns]\nfirst = 90\ncount = 20\n[target]\nmax_luns = 100\n",
	    "t.conf:3: [luns] count = 20: LUNs 90-109 pass max_luns (100)");
	bad("[target]\nmax_luns = 100\n[luns.t]\nfirst = 100\ncount = 0\n",
	    "t.conf:4: [luns.t] first = 100: first LUN 100 is past max_luns (100)");
	bad("[luns.a]\ncount = 150\n[luns.b]\nfirst = 100\ncount = 10\n",
	    "t.conf:4: [luns.b] first = 100: LUNs 100-109 overlap [luns.a] (LUNs 0-149, line 1)");
	bad("[luns.a]\nfirst = 10\ncount = 10\n[luns.b]\ncount = 20\n"
	    "first = 0\n",
	    "t.conf:2: [luns.a] first = 10: LUNs 10-19 overlap [luns.b] (LUNs 0-19, line 4)");
	/* layouts: ptable_check() says why, in its own words */
	bad("[luns]\nsize = 64M\npartitions = 63\n",
	    layout_line(
		    "t.conf:3: [luns] partitions = 63: the gpt partition table does not fit a 64M disk: ",
		    PTABLE_GPT, 64u << 11, 63, NULL, 0));
	bad("[luns]\nsize = 1G\npartitions = 2\npartition_sizes = 1G\n",
	    layout_line(
		    "t.conf:4: [luns] partition_sizes = 1G: the gpt partition table does not fit a 1G disk: ",
		    PTABLE_GPT, 1u << 21, 2, (const uint64_t[]){1u << 21}, 1));
	bad("[luns]\npartitions = 1\nptable = mbr\npartition_sizes = 1M,1M\n",
	    layout_line(
		    "t.conf:4: [luns] partition_sizes = 1M,1M: the mbr partition table does not fit a 1G disk: ",
		    PTABLE_MBR, 1u << 21, 1, (const uint64_t[]){2048, 2048},
		    2));
	bad("[luns]\npartition_sizes = 1G\n",
	    "t.conf:2: [luns] partition_sizes = 1G: needs partitions = N");
	bad("[luns]\nblock_size = 4096\npartitions = 2\n"
	    "partition_sizes = 1001K\n",
	    "t.conf:4: [luns] partition_sizes = 1001K: size 1 (1001K) is not a multiple of block_size 4096");
	bad("[luns]\nblock_size = 4096\nsize = 1001K\n",
	    "t.conf:3: [luns] size = 1001K: not a multiple of block_size 4096");
	bad("[luns]\nblock_size = 4096\nmax_transfer = 6K\n",
	    "t.conf:3: [luns] max_transfer = 6K: not a multiple of block_size 4096");
	bad("[luns]\nmax_transfer = 1M\nopt_transfer = 2M\n",
	    "t.conf:3: [luns] opt_transfer = 2M: above max_transfer");
	/* the store */
	bad("[store]\nmem_limit = 100\n",
	    "t.conf:2: [store] mem_limit = 100: less than one chunk (chunk_size 4K); 0 means no limit");
	bad("[store]\nmem_limit = 6K\n",
	    "t.conf:2: [store] mem_limit = 6K: not a multiple of chunk_size 4K");
	bad("[store]\ntype = file\n",
	    "t.conf:2: [store] type = file: needs dir = DIRECTORY");
	bad("[store]\ntype = file\ndir = /x\nmem_limit = 1G\n",
	    "t.conf:4: [store] mem_limit = 1G: applies only to type = mem");
	bad("[store]\ndir = /x\n",
	    "t.conf:2: [store] dir = /x: applies only to type = file");
	/* iSCSI pairs and RFC 7143's rules */
	bad("[iscsi]\nchap_user = alice\n",
	    "t.conf:2: [iscsi] chap_user = alice: needs chap_secret too");
	bad("[iscsi]\nchap_user = alice\nchap_secret = short\n",
	    "t.conf:3: [iscsi] chap_secret = short: shorter than 12 characters (RFC 7143 asks for 96 bits)");
	bad("[iscsi]\nmutual_user = t\nmutual_secret = 0123456789ab\n",
	    "t.conf:2: [iscsi] mutual_user = t: mutual CHAP needs chap_user and chap_secret");
	bad("[iscsi]\nchap_user = a\nchap_secret = 0123456789ab\n"
	    "mutual_user = t\nmutual_secret = 0123456789ab\n",
	    "t.conf:5: [iscsi] mutual_secret = 0123456789ab: the same as chap_secret (RFC 7143 12.1.3)");
	bad("[iscsi]\nfirst_burst_length = 1M\nmax_burst_length = 512K\n",
	    "t.conf:2: [iscsi] first_burst_length 1048576 is above max_burst_length 524288 (RFC 7143 13.14)");
	/* fault LUNs against max_luns, checked once max_luns is known */
	bad("[faults]\nfault.1 = hang luns=5-200\n[target]\nmax_luns = 100\n",
	    "t.conf:2: [faults] fault.1 = hang luns=5-200: LUN 200 is past max_luns (100)");
}

static void test_error_cap(void **state)
{
	char text[4096], *s = text;
	struct cfg_parser *p;
	struct cfg *c;
	int i;

	(void)state;
	s += sprintf(s, "[luns]\n");
	for (i = 0; i < 60; i++)
		s += sprintf(s, "bogus%d = 1\n", i);
	p = parse(text, &c);
	assert_null(c);
	assert_int_equal(cfg_error_count(p), 60);
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:51: [luns] bogus49 = 1: unknown key (see sdswarm.conf(5))"));
	assert_false(strstr(cfg_errors(p), "bogus50"));
	assert_true(has_line(cfg_errors(p), "t.conf: more errors not shown"));
	cfg_parser_destroy(p);
}

static void test_file_errors(void **state)
{
	struct cfg_parser *p;
	struct cfg *c = NULL;
	char path[] = "/tmp/test-config-XXXXXX";
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_file(p, "/nonexistent/x.conf"), -ENOENT);
	assert_string_equal(
		cfg_errors(p),
		"/nonexistent/x.conf: cannot open: No such file or directory\n");
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	assert_null(c);
	cfg_parser_destroy(p);

	/* a real file: messages name its path */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("[luns]\ncount = 3\nsize = 12Q\n", f);
	fclose(f);
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_file(p, path), -EINVAL);
	assert_int_equal(cfg_parse_string(p, "again", ""), -EALREADY);
	assert_true(strstr(cfg_errors(p), ":3: [luns] size = 12Q: not a size"));
	assert_true(strncmp(cfg_errors(p), path, strlen(path)) == 0);
	cfg_parser_destroy(p);
	unlink(path);
}

/*
 * A stream for cfg_parse_stream(): @text, then reads that fail with @err,
 * or with @err 0, up to @endless bytes of 'x' and no line end. @served
 * counts the bytes it handed out.
 */
struct feed {
	const char *text;
	size_t off, len;
	int err;
	size_t endless, served;
};

static ssize_t feed_read(void *cookie, char *buf, size_t size)
{
	struct feed *fd = cookie;
	size_t n;

	if (fd->off < fd->len) {
		n = fd->len - fd->off < size ? fd->len - fd->off : size;
		memcpy(buf, fd->text + fd->off, n);
		fd->off += n;
	} else if (fd->err) {
		errno = fd->err;
		return -1;
	} else {
		n = fd->endless - (fd->served - fd->len);
		if (n > size)
			n = size;
		memset(buf, 'x', n);
	}
	fd->served += n;
	return (ssize_t)n;
}

/* Parses @fd as "t.conf"; returns what cfg_parse_stream() did. */
static int parse_feed(struct feed *fd, struct cfg_parser **out)
{
	cookie_io_functions_t io = {.read = feed_read};
	FILE *f;
	int ret;

	fd->len = strlen(fd->text);
	assert_int_equal(cfg_parser_create(out), 0);
	f = fopencookie(fd, "r", io);
	assert_non_null(f);
	ret = cfg_parse_stream(*out, "t.conf", f);
	fclose(f);
	return ret;
}

/*
 * A read that fails is an error naming the file and the line it was
 * reading, whatever the errno: never the end of the file, which would
 * drop every line after it (an [iscsi] ACL) and call the rest good.
 */
static void test_read_errors(void **state)
{
	static const int errs[] = {ENOMEM, EIO, EISDIR};
	char want[128], dir[] = "/tmp/test-config-XXXXXX";
	struct cfg_parser *p;
	struct cfg *c;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		struct feed fd = {.text = "[luns]\ncount = 3\n",
				  .err = errs[i]};

		assert_int_equal(parse_feed(&fd, &p), -errs[i]);
		snprintf(want, sizeof(want), "t.conf:3: read error: %s\n",
			 strerror(errs[i]));
		assert_string_equal(cfg_errors(p), want);
		c = NULL;
		assert_int_equal(cfg_finish(p, &c), -EINVAL);
		assert_null(c);
		cfg_parser_destroy(p);
	}
	/* in the middle of a line: that line */
	{
		struct feed fd = {.text = "[iscsi]\nenabled = yes\ninitiat",
				  .err = ENOMEM};

		assert_int_equal(parse_feed(&fd, &p), -ENOMEM);
		assert_string_equal(
			cfg_errors(p),
			"t.conf:3: read error: Cannot allocate memory\n");
		cfg_parser_destroy(p);
	}
	/* a directory opens, and its first read fails */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_file(p, dir), -EISDIR);
	snprintf(want, sizeof(want), "%s:1: read error: Is a directory\n", dir);
	assert_string_equal(cfg_errors(p), want);
	cfg_parser_destroy(p);
	rmdir(dir);
}

/*
 * A line past CFG_LINE_MAX is an error, and the reader holds no more of it
 * than that: a file with no line end (/dev/zero) is not read to its end,
 * and nothing after the long line is read.
 */
static void test_long_line_bounded(void **state)
{
	struct feed fd = {.text = "[luns]\ncount = 3\n; ", .endless = 1 << 20};
	struct cfg_parser *p;

	(void)state;
	assert_int_equal(parse_feed(&fd, &p), -EINVAL);
	/* the line, and what one stdio buffer read ahead of it */
	if (fd.served > 64 * 1024)
		fail_msg("read %zu bytes, %zu of them of the long line",
			 fd.served, fd.served - fd.len);
	assert_string_equal(
		cfg_errors(p),
		"t.conf:3: line longer than 4000 characters; the rest of the file is not read\n");
	cfg_parser_destroy(p);
}

/* ---- overrides and the built-in default --------------------------------- */

static void test_overrides(void **state)
{
	struct cfg_parser *p;
	struct cfg *c;

	(void)state;
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_parse_string(p, "t.conf",
					  "[store]\nmem_limit = 1G\n"
					  "[target]\ncontrol = /a\n"),
			 0);
	/* the command line replaces the file's values: no duplicate error */
	assert_int_equal(cfg_override(p, "store", "mem_limit", "2G"), 0);
	assert_int_equal(cfg_override(p, "target", "control", "/b"), 0);
	assert_int_equal(cfg_override(p, "fuse", "mountpoint", "/mnt"), 0);
	assert_int_equal(cfg_finish(p, &c), 0);
	assert_int_equal(c->store.mem.mem_limit, 2ull << 30);
	assert_string_equal(c->target.control, "/b");
	assert_true(c->fuse.enabled);
	cfg_free(c);
	cfg_parser_destroy(p);

	/* errors from the command line say so */
	assert_int_equal(cfg_parser_create(&p), 0);
	assert_int_equal(cfg_override(p, "store", "mem_limit", "12Q"), -EINVAL);
	assert_int_equal(cfg_override(p, "store", "colour", "1"), -EINVAL);
	assert_int_equal(cfg_override(p, "luns", "size", "1G"), -EINVAL);
	assert_true(has_line(
		cfg_errors(p),
		"command line: [store] mem_limit = 12Q: not a size (use a number with K, M, G, T or P)"));
	assert_true(has_line(
		cfg_errors(p),
		"command line: [store] colour = 1: unknown key (see sdswarm.conf(5))"));
	assert_true(has_line(
		cfg_errors(p),
		"command line: [luns] size = 1G: not a section the command line can set"));
	cfg_parser_destroy(p);

	/* --store DIR on a file that tunes the mem store */
	assert_int_equal(cfg_parser_create(&p), 0);
	cfg_parse_string(p, "t.conf", "[store]\nchunk_size = 8K\n");
	cfg_override(p, "store", "type", "file");
	cfg_override(p, "store", "dir", "/d");
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	assert_true(has_line(
		cfg_errors(p),
		"t.conf:2: [store] chunk_size = 8K: applies only to type = mem"));
	cfg_parser_destroy(p);
}

static void test_luns_override(void **state)
{
	struct cfg_parser *p;
	struct cfg *c;

	(void)state;
	/* fewer: groups in LUN order keep theirs until the total is reached */
	assert_int_equal(cfg_parser_create(&p), 0);
	cfg_parse_string(p, "t.conf",
			 "[luns.b]\nfirst = 100\ncount = 50\n"
			 "[luns.a]\nfirst = 0\ncount = 100\n"
			 "[luns.c]\nfirst = 500\ncount = 10\n");
	cfg_override_luns(p, 120);
	assert_int_equal(cfg_finish(p, &c), 0);
	assert_int_equal(c->groups[0].count, 20); /* b: 100-119 */
	assert_int_equal(c->groups[1].count, 100); /* a: 0-99 */
	assert_int_equal(c->groups[2].count, 0); /* c */
	assert_int_equal(cfg_total_luns(c), 120);
	cfg_free(c);
	cfg_parser_destroy(p);

	/* more: the last group grows; the usual range checks then apply */
	assert_int_equal(cfg_parser_create(&p), 0);
	cfg_parse_string(p, "t.conf",
			 "[target]\nmax_luns = 1000\n"
			 "[luns]\ncount = 10\n");
	cfg_override_luns(p, 1001);
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	assert_true(has_line(
		cfg_errors(p),
		"command line: [luns] count = 1001: LUNs 0-1000 pass max_luns (1000)"));
	cfg_parser_destroy(p);

	assert_int_equal(cfg_parser_create(&p), 0);
	cfg_override_luns(p, 5);
	assert_int_equal(cfg_finish(p, &c), -EINVAL);
	assert_true(has_line(
		cfg_errors(p),
		"command line: --luns 5: the configuration has no [luns] group"));
	cfg_parser_destroy(p);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_builtin_default(void **state)
{
	const char *top = getenv("SDSWARM_TOP");
	char path[4096];
	char *file;
	struct cfg *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/configs/default.conf",
		 top ? top : ".");
	file = slurp(path);
	if (!file)
		fail_msg(
			"cannot read %s (run from the top of the tree or set SDSWARM_TOP)",
			path);
	/* the daemon's embedded default is configs/default.conf, verbatim */
	assert_string_equal(cfg_default_text(), file);
	free(file);
	c = good(cfg_default_text());
	assert_int_equal(c->ngroups, 1);
	assert_int_equal(cfg_total_luns(c), 18279);
	assert_int_equal(c->groups[0].size, 1ull << 40);
	assert_int_equal(c->groups[0].nparts, 4);
	assert_int_equal(c->groups[0].ptable, PTABLE_GPT);
	assert_true(c->groups[0].thin);
	assert_int_equal(c->store.type, CFG_STORE_MEM);
	cfg_free(c);
}

/* ---- the log module ----------------------------------------------------- */

struct capture {
	int n;
	int level;
	char line[LOG_LINE_MAX];
};

static void capture_sink(void *arg, int level, const char *line)
{
	struct capture *cap = arg;

	cap->n++;
	cap->level = level;
	snprintf(cap->line, sizeof(cap->line), "%s", line);
}

static int evaluated;

static int count_eval(void)
{
	return ++evaluated;
}

static void test_log(void **state)
{
	static const uint8_t cdb[10] = {0x28, 0, 0, 0, 8, 0, 0, 0, 8, 0};
	struct capture cap = {0};
	char big[2 * LOG_LINE_MAX];
	int level;

	(void)state;
	log_set_sink(capture_sink, &cap);
	log_set_level(LOG_NOTICE);
	log_info("dropped %d", count_eval());
	assert_int_equal(cap.n, 0);
	/* a disabled message does not even evaluate its arguments */
	assert_int_equal(evaluated, 0);
	log_warn("kept %d", 7);
	assert_int_equal(cap.n, 1);
	assert_int_equal(cap.level, LOG_WARNING);
	assert_string_equal(cap.line, "kept 7");
	log_lun_err(17, "bad block %u", 5u);
	assert_string_equal(cap.line, "lun 17: bad block 5");
	log_lun_info(3, "quiet");
	assert_int_equal(cap.n, 2);

	log_cdb(3, cdb, sizeof(cdb));
	assert_int_equal(cap.n, 2);
	log_set_level(LOG_TRACE);
	log_cdb(3, cdb, sizeof(cdb));
	assert_int_equal(cap.level, LOG_TRACE);
	assert_string_equal(cap.line,
			    "lun 3: cdb 28 00 00 00 08 00 00 00 08 00");
	log_debug("now %d", count_eval());
	assert_int_equal(evaluated, 1);

	memset(big, 'y', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	log_err("%s", big);
	assert_int_equal(strlen(cap.line), LOG_LINE_MAX - 1);
	assert_string_equal(cap.line + LOG_LINE_MAX - 4, "...");

	log_set_level(99);
	assert_int_equal(log_get_level(), LOG_TRACE);
	log_set_level(-3);
	assert_int_equal(log_get_level(), LOG_EMERG);
	log_set_level(LOG_DEFAULT_LEVEL);
	log_set_sink(NULL, NULL);

	assert_int_equal(log_level_parse("warning", &level), 0);
	assert_int_equal(level, LOG_WARNING);
	assert_int_equal(log_level_parse("warn", &level), 0);
	assert_int_equal(level, LOG_WARNING);
	assert_int_equal(log_level_parse("error", &level), 0);
	assert_int_equal(level, LOG_ERR);
	assert_int_equal(log_level_parse("6", &level), 0);
	assert_int_equal(level, LOG_INFO);
	assert_int_equal(log_level_parse("9", &level), -EINVAL);
	assert_int_equal(log_level_parse("", &level), -EINVAL);
	assert_string_equal(log_level_name(LOG_TRACE), "trace");
	assert_string_equal(log_level_name(42), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_target_keys),
		cmocka_unit_test(test_group_keys),
		cmocka_unit_test(test_groups_layout),
		cmocka_unit_test(test_group_ranges),
		cmocka_unit_test(test_range_checks),
		cmocka_unit_test(test_store_keys),
		cmocka_unit_test(test_frontend_keys),
		cmocka_unit_test(test_buffer_budgets),
		cmocka_unit_test(test_file_syntax),
		cmocka_unit_test(test_line_rules),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_faults_section),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_value_errors),
		cmocka_unit_test(test_whole_errors),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_long_line_bounded),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_luns_override),
		cmocka_unit_test(test_builtin_default),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_port_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
