// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the control request handler, ctl_execute(), the path
 * every control socket line takes (the socket only frames lines). Input:
 * request lines separated by newlines (at most 32), run in order against a
 * fresh daemon state built from a small config (two LUN groups, one with a
 * GPT, a fault rule) so that lun add/remove/resize and fault set/clear
 * sequences are explored. Every reply must be a JSON object per line, the
 * last line ending in a newline.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "control.h"
#include "fault.h"
#include "log.h"
#include "lun.h"
#include "store/store.h"
#include "target.h"

#define MAX_LINES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf[] = "[target]\n"
			   "seed = 7\n"
			   "max_luns = 64\n"
			   "scheme = linux\n"
			   "[luns]\n"
			   "count = 4\n"
			   "size = 16M\n"
			   "partitions = 2\n"
			   "ptable = gpt\n"
			   "[luns.big]\n"
			   "first = 8\n"
			   "count = 2\n"
			   "size = 1T\n"
			   "block_size = 4096\n"
			   "partitions = 0\n"
			   "[faults]\n"
			   "fault.1 = medium-read luns=1 lba=100-200 count=2\n";

static struct cfg *cfg;
static char dir[64], path[96];

static void cleanup(void)
{
	cfg_free(cfg);
	rmdir(dir);
}

static void init(void)
{
	struct cfg_parser *p;

	log_set_level(LOG_CRIT);
	if (cfg_parser_create(&p) || cfg_parse_string(p, "fuzz", conf) ||
	    cfg_finish(p, &cfg)) {
		fprintf(stderr, "fuzz-ctl: config: %s\n",
			p ? cfg_errors(p) : "no memory");
		abort();
	}
	cfg_parser_destroy(p);
	snprintf(dir, sizeof(dir), "%s/sdswarm-fuzz-ctl.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/control", dir);
	atexit(cleanup);
}

/* Every line of @reply parses as a JSON object; the last ends the reply. */
static void check_reply(const char *reply)
{
	const char *p = reply, *nl;
	json_error_t err;
	json_t *j;

	if (!*reply)
		abort();
	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			abort(); /* an unterminated line */
		j = json_loadb(p, (size_t)(nl - p), 0, &err);
		if (!j || !json_is_object(j)) {
			fprintf(stderr, "fuzz-ctl: not a JSON object: %.*s\n",
				(int)(nl - p), p);
			abort();
		}
		json_decref(j);
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lun_table_params tp;
	struct ctl_context ctx;
	struct target target;
	struct ctl_server *s;
	struct fault_table *ft;
	struct lun_table *t;
	struct store *st;
	const char *line = (const char *)data, *end = line + size, *nl;
	unsigned int i, n = 0;
	char *reply;

	if (!cfg)
		init();
	tp = (struct lun_table_params){.max_luns = cfg->target.max_luns,
				       .seed = cfg->target.seed};
	if (store_mem_create(&st, NULL))
		abort();
	tp.store = st;
	if (lun_table_create(&t, &tp))
		abort();
	for (i = 0; i < cfg->ngroups; i++)
		if (lun_group_add(t, &cfg->groups[i]) < 0)
			abort();
	if (fault_table_create(&ft))
		abort();
	for (i = 0; i < cfg->nfaults; i++)
		if (fault_add(ft, &cfg->faults[i]) < 0)
			abort();
	target = (struct target){.luns = t, .faults = ft};
	if (target_init(&target))
		abort();
	ctx = (struct ctl_context){.target = &target, .store = st, .cfg = cfg};
	if (ctl_server_create(&s, path, &ctx))
		abort();
	while (line < end && n++ < MAX_LINES) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		if (ctl_execute(s, line, (size_t)(nl - line), &reply))
			abort();
		check_reply(reply);
		free(reply);
		line = nl + 1;
	}
	ctl_server_destroy(s);
	target_fini(&target);
	fault_table_destroy(ft);
	lun_table_destroy(t);
	store_destroy(st);
	return 0;
}
