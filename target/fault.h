/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: rules over a LUN range and an LBA range, set from the
 * config or at run time, checked on the command path at the cost of one
 * atomic load when no rule exists; and the rules' one-line text form.
 */
#ifndef SDSWARM_FAULT_H
#define SDSWARM_FAULT_H

/* Rules held at once; one more is refused (-ENOSPC). */
#define FAULT_MAX_RULES 4096u
/* The longest delay a rule may set: 600 s, past every initiator's timeout. */
#define FAULT_MAX_DELAY_NS (600ull * 1000000000ull)
/* The longest rule text fault_rule_parse() reads: a config line's. */
#define FAULT_RULE_TEXT_MAX 4000
/* fault_rule_format() never needs more, the NUL included. */
#define FAULT_RULE_FORMAT_LEN 256

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fault_kind {
	FAULT_MEDIUM_READ =
		1, /* MEDIUM ERROR 11h/00h, INFORMATION = first bad LBA */
	FAULT_MEDIUM_WRITE, /* MEDIUM ERROR 0Ch/00h, INFORMATION = first bad LBA */
	FAULT_DELAY, /* complete after delay_ns */
	FAULT_HANG, /* never complete (front-end timeouts, aborts) */
	FAULT_UA, /* UNIT ATTENTION asc/ascq, one-shot or repeating */
	FAULT_NOT_READY, /* NOT READY asc/ascq on medium access */
	FAULT_KIND_MAX,
};

/* Which commands a rule applies to (struct fault_rule.ops). */
#define FAULT_OP_READ 1u /* READ, VERIFY, the read half of COMPARE AND WRITE */
#define FAULT_OP_WRITE 2u /* WRITE, WRITE SAME, UNMAP, WRITE AND VERIFY */
#define FAULT_OP_OTHER 4u /* everything else addressed to the LUN */
#define FAULT_OP_ANY 7u

struct fault_rule {
	uint32_t id; /* set by fault_add() */
	enum fault_kind kind;
	unsigned int ops; /* FAULT_OP_* mask; 0 = the kind's default */
	uint32_t lun_first; /* inclusive */
	uint32_t lun_last; /* inclusive */
	uint64_t lba_first; /* inclusive */
	uint64_t lba_last; /* inclusive; UINT64_MAX: to the end */
	uint64_t delay_ns; /* FAULT_DELAY */
	uint8_t asc, ascq; /* FAULT_UA, FAULT_NOT_READY */
	uint32_t count; /* hits left; 0 = unlimited (repeating) */
	uint64_t hits; /* times it fired (read back by fault_list()) */
};

/* What fired. */
struct fault_hit {
	enum fault_kind kind;
	uint32_t id;
	uint64_t lba; /* first LBA of the command inside the rule */
	uint64_t delay_ns;
	uint8_t asc, ascq;
};

struct fault_table;

/**
 * fault_table_create() - an empty table.
 * @out: out, the table.
 *
 * Return: 0, -ENOMEM.
 */
int fault_table_create(struct fault_table **out);

/**
 * fault_table_destroy() - free the table. NULL is a no-op.
 * @ft: the table.
 */
void fault_table_destroy(struct fault_table *ft);

/**
 * fault_add() - add a rule.
 * @ft: the table.
 * @r: the rule (copied; its id and hits are ignored).
 *
 * Context: any thread.
 * Return: the new rule's id (>= 1); -EINVAL for a bad kind, an empty range
 * or a delay over 10 minutes; -ENOSPC past 4096 rules.
 */
int fault_add(struct fault_table *ft, const struct fault_rule *r);

/*
 * fault_watch_set()'s callback: a rule was just added (after fault_add()
 * has it, before fault_add() returns). A cache of what reads return must
 * drop what the rule's range held, or reads it serves would not fail.
 */
typedef void fault_watch_fn(void *arg, const struct fault_rule *r);

/**
 * fault_watch_set() - call @fn(@arg, rule) for every rule added from now on;
 * @fn NULL stops it, and then no call is running or will start.
 * @ft: the table.
 * @fn: the watcher, or NULL.
 * @arg: its argument.
 *
 * Context: not from inside the watcher.
 * Return: 0; -EBUSY when another watcher is set.
 */
int fault_watch_set(struct fault_table *ft, fault_watch_fn *fn, void *arg);

/**
 * fault_clear() - remove rule @id, or every rule when @id is 0.
 * @ft: the table.
 * @id: rule id or 0.
 *
 * Return: the number of rules removed; -ENOENT for an unknown id.
 */
int fault_clear(struct fault_table *ft, uint32_t id);

/**
 * fault_list() - copy out the rules, in id order.
 * @ft: the table.
 * @out: array of @max rules.
 * @max: its size.
 *
 * Return: the total number of rules (may exceed @max: only @max copied).
 */
int fault_list(struct fault_table *ft, struct fault_rule *out,
	       unsigned int max);

/**
 * fault_exists() - whether rule @id is still in the table (not cleared,
 * nor used up by its count).
 * @ft: the table, or NULL (no rules).
 * @id: a rule id, as fault_add() returned it.
 *
 * Context: any thread; takes the table's mutex for a binary search, O(log
 * n) with no allocation (a request held by a hang asks every 100 ms).
 * Return: true if the rule exists.
 */
bool fault_exists(struct fault_table *ft, uint32_t id);

/**
 * fault_kind_name() - "medium-read", "medium-write", "delay", "hang", "ua",
 * "not-ready".
 * @kind: the kind.
 *
 * Return: the name, or NULL.
 */
const char *fault_kind_name(enum fault_kind kind);

/**
 * fault_kind_parse() - the inverse of fault_kind_name().
 * @name: a name.
 *
 * Return: the kind, or -EINVAL.
 */
int fault_kind_parse(const char *name);

/**
 * fault_rule_parse() - a rule from its one-line form, the same text the
 * config's [faults] keys, the control socket and `sdswarm fault set` take:
 * "KIND [luns=A-B] [lba=X-Y] [ops=LIST] [delay=N(ns|us|ms|s)] [count=N]
 * [asc=N] [ascq=N]". KIND is a fault_kind_name(); ranges are inclusive, a
 * single number or "all" (the default), and "luns=A-" or "lba=X-" runs to
 * the end; ops is a comma list of read, write, other or any (default: the
 * kind's); delay (kind delay only, and needed there) from 1ns to 600s;
 * count 0 (the default) repeats forever; asc and ascq (kinds ua and
 * not-ready only) default to 29h/00h and 04h/00h; numbers are decimal or
 * 0x hex. Fields are separated by spaces or tabs, each given at most once.
 * @text: the rule, at most FAULT_RULE_TEXT_MAX characters.
 * @max_luns: LUN numbers must be below it (LUN_MAX_LUNS to defer the check).
 * @out: out, the rule (id and hits 0), only on success.
 * @why: out, on error: what is wrong, NUL-terminated, one line ("luns=9-3:
 *       first above last"; an unknown field says the one it is closest to).
 * @whylen: size of @why; a message quotes the text, so a long one is cut.
 *
 * Context: any thread.
 * Return: 0, -EINVAL.
 */
int fault_rule_parse(const char *text, uint32_t max_luns,
		     struct fault_rule *out, char *why, size_t whylen);

/**
 * fault_rule_format() - the canonical one-line form of a rule, which
 * fault_rule_parse() reads back to the same rule (all but id and hits):
 * KIND, then the fields in the order above, each only when it is not its
 * default (delay, asc and ascq always for the kinds they apply to).
 * @r: the rule.
 * @buf: out, NUL-terminated (cut short on -ENOSPC).
 * @len: its size; FAULT_RULE_FORMAT_LEN always suffices.
 *
 * Context: any thread.
 * Return: the length, -ENOSPC, or -EINVAL for a bad kind or @len 0.
 */
int fault_rule_format(const struct fault_rule *r, char *buf, size_t len);

/**
 * fault_check() - the first rule that matches this command, counting its hit.
 * @ft: the table, or NULL (no faults).
 * @lun: table LUN number.
 * @lba: first LBA the command touches (0 for commands without one).
 * @nblocks: blocks it touches (0: none; a rule with an LBA range then
 *           matches only if it covers the whole LUN).
 * @op: one FAULT_OP_* bit.
 * @hit: out, what fired.
 *
 * A rule whose count runs out is removed. UA rules match every command but
 * INQUIRY, REPORT LUNS and REQUEST SENSE (the caller does not ask for those).
 * Context: command path; one atomic load when the table is empty, else a
 * mutex and a scan of the rules (a handful in any real test).
 * Return: true if a rule fired.
 */
bool fault_check(struct fault_table *ft, uint32_t lun, uint64_t lba,
		 uint64_t nblocks, unsigned int op, struct fault_hit *hit);

/**
 * fault_total_hits() - faults fired since the table was created.
 * @ft: the table.
 *
 * Return: the count.
 */
uint64_t fault_total_hits(struct fault_table *ft);

#endif /* SDSWARM_FAULT_H */
