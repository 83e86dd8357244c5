/* SPDX-License-Identifier: MIT */
/*
 * For the tests of the fault-rule grammar (test-fault-rule, fuzz-fault):
 * whether two rules are the same in all that fault_rule_parse() reads and
 * fault_rule_format() writes, id and hits aside. Member by member: a
 * memcmp() would compare the struct's padding too.
 */
#ifndef SDSWARM_TESTS_FAULT_RULE_H
#define SDSWARM_TESTS_FAULT_RULE_H

#include <stdbool.h>

#include "fault.h"

static inline bool fault_rule_same(const struct fault_rule *a,
				   const struct fault_rule *b)
{
	return a->kind == b->kind && a->ops == b->ops &&
	       a->lun_first == b->lun_first && a->lun_last == b->lun_last &&
	       a->lba_first == b->lba_first && a->lba_last == b->lba_last &&
	       a->delay_ns == b->delay_ns && a->asc == b->asc &&
	       a->ascq == b->ascq && a->count == b->count;
}

#endif
