// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the config parser, from a memory buffer
 * (cfg_parse_string(), the same path as cfg_parse_file() after the read).
 * Input: the config text. A config that is accepted must build: every
 * group goes into a LUN table (lun_group_add(), over a store that is never
 * written) and every fault rule into a fault table; a rejected one must
 * have errors to show.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fault.h"
#include "log.h"
#include "lun.h"
#include "store/store.h"

#define MAX_TEXT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void build(const struct cfg *c)
{
	/* as sdswarmd's make_luns() and make_faults() */
	struct lun_table_params p = {
		.max_luns = c->target.max_luns,
		.seed = c->target.seed,
		.oui = c->target.oui,
		.no_power_on_ua = !c->target.power_on_ua,
	};
	struct fault_table *ft;
	struct lun_table *t;
	struct store *st;
	unsigned int i;

	/* the flat tables cost 32 bytes a LUN, each LUN a slot: keep it quick */
	if (c->target.max_luns > 65536 || cfg_total_luns(c) > 4096)
		return;
	if (store_mem_create(&st, NULL))
		abort();
	p.store = st;
	if (lun_table_create(&t, &p))
		abort();
	/* the parser must not pass what sdswarmd then fails to start with */
	for (i = 0; i < c->ngroups; i++)
		if (lun_group_add(t, &c->groups[i]) < 0)
			abort();
	if (fault_table_create(&ft))
		abort();
	for (i = 0; i < c->nfaults; i++)
		if (fault_add(ft, &c->faults[i]) < 0)
			abort();
	fault_table_destroy(ft);
	lun_table_destroy(t);
	store_destroy(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	struct cfg_parser *p;
	struct cfg *c = NULL;
	char *text;

	if (!quiet) {
		log_set_level(LOG_CRIT);
		quiet = true;
	}
	if (size > MAX_TEXT)
		size = MAX_TEXT;
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (cfg_parser_create(&p))
		abort();
	if (cfg_parse_string(p, "fuzz.conf", text) == 0 &&
	    cfg_finish(p, &c) == 0) {
		build(c);
		cfg_free(c);
	} else if (!cfg_error_count(p) || !cfg_errors(p)[0]) {
		abort(); /* refused without saying why */
	}
	cfg_parser_destroy(p);
	free(text);
	return 0;
}
