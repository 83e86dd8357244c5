// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the fault-rule grammar (fault_rule_parse(), the text the
 * [faults] keys, the control socket and `sdswarm fault set` share). Input:
 * one rule text. A rule it accepts must be well formed, format to a line
 * fault_rule_parse() reads back to the same rule, go into a fault table, and
 * fire only inside its own ranges; a rejected one must say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fault.h"
#include "fault-rule.h"
#include "lun.h"

#define MAX_TEXT 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fault_rule r, r2;
	struct fault_table *ft;
	struct fault_hit hit;
	char text[MAX_TEXT + 1], why[256], line[256];
	uint32_t max_luns = 1024; /* "all" LUNs is lun_last UINT32_MAX */
	int ret, len;

	if (size > MAX_TEXT)
		size = MAX_TEXT;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(why, 0, sizeof(why));
	ret = fault_rule_parse(text, max_luns, &r, why, sizeof(why));
	if (ret) {
		if (!why[0] || !memchr(why, '\0', sizeof(why)))
			abort();
		return 0;
	}
	if (r.kind < FAULT_MEDIUM_READ || r.kind >= FAULT_KIND_MAX ||
	    r.lun_first > r.lun_last ||
	    (r.lun_last >= max_luns && r.lun_last != UINT32_MAX) ||
	    r.lba_first > r.lba_last || (r.ops & ~FAULT_OP_ANY))
		abort();
	len = fault_rule_format(&r, line, sizeof(line));
	if (len < 0 || (size_t)len != strlen(line))
		abort();
	if (fault_rule_parse(line, max_luns, &r2, why, sizeof(why)) ||
	    !fault_rule_same(&r, &r2))
		abort();
	if (fault_table_create(&ft))
		abort();
	if (fault_add(ft, &r) >= 0) {
		/* nothing outside the rule's LUNs and LBAs fires */
		if (r.lun_last != UINT32_MAX && r.lun_last + 1 < max_luns &&
		    fault_check(ft, r.lun_last + 1, r.lba_first, 1,
				FAULT_OP_ANY, &hit))
			abort();
		if (r.lba_first > 0 &&
		    fault_check(ft, r.lun_first, 0, r.lba_first, FAULT_OP_ANY,
				&hit))
			abort();
		fault_check(ft, r.lun_first, r.lba_first, 1, FAULT_OP_ANY,
			    &hit);
	}
	fault_table_destroy(ft);
	return 0;
}
