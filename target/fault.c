// SPDX-License-Identifier: MIT
/*
 * Fault rules: a small array under a mutex, and an atomic rule count so the
 * command path pays one load when there are none; and the rules' one-line
 * grammar, read and written from one table of fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "fault.h"
#include "parse.h"
#include "scsi/asc.h"

struct fault_table {
	pthread_mutex_t lock;
	_Atomic unsigned int n; /* rules in use; read without the lock */
	_Atomic uint64_t total_hits;
	uint32_t next_id;
	unsigned int cap;
	struct fault_rule *rules; /* sorted by id (ids only grow) */
	/* fault_watch_set(): called under the read side of watch_lock */
	pthread_rwlock_t watch_lock;
	fault_watch_fn *watch;
	void *watch_arg;
};

static const char *const kind_names[FAULT_KIND_MAX] = {
	[FAULT_MEDIUM_READ] = "medium-read",
	[FAULT_MEDIUM_WRITE] = "medium-write",
	[FAULT_DELAY] = "delay",
	[FAULT_HANG] = "hang",
	[FAULT_UA] = "ua",
	[FAULT_NOT_READY] = "not-ready",
};

/* The commands a kind applies to when the rule gives no ops. */
static const unsigned int kind_ops[FAULT_KIND_MAX] = {
	[FAULT_MEDIUM_READ] = FAULT_OP_READ,
	[FAULT_MEDIUM_WRITE] = FAULT_OP_WRITE,
	[FAULT_DELAY] = FAULT_OP_ANY,
	[FAULT_HANG] = FAULT_OP_ANY,
	[FAULT_UA] = FAULT_OP_ANY,
	[FAULT_NOT_READY] = FAULT_OP_READ | FAULT_OP_WRITE,
};

const char *fault_kind_name(enum fault_kind kind)
{
	return kind > 0 && kind < FAULT_KIND_MAX ? kind_names[kind] : NULL;
}

int fault_kind_parse(const char *name)
{
	int k;

	for (k = 1; k < FAULT_KIND_MAX; k++)
		if (name && strcmp(kind_names[k], name) == 0)
			return k;
	return -EINVAL;
}

int fault_table_create(struct fault_table **out)
{
	struct fault_table *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return -ENOMEM;
	pthread_mutex_init(&ft->lock, NULL);
	pthread_rwlock_init(&ft->watch_lock, NULL);
	ft->next_id = 1;
	*out = ft;
	return 0;
}

void fault_table_destroy(struct fault_table *ft)
{
	if (!ft)
		return;
	pthread_mutex_destroy(&ft->lock);
	pthread_rwlock_destroy(&ft->watch_lock);
	free(ft->rules);
	free(ft);
}

int fault_add(struct fault_table *ft, const struct fault_rule *r)
{
	struct fault_rule *nr, rule;
	unsigned int n;
	int id;

	if (r->kind <= 0 || r->kind >= FAULT_KIND_MAX ||
	    r->lun_first > r->lun_last || r->lba_first > r->lba_last ||
	    r->delay_ns > FAULT_MAX_DELAY_NS || (r->ops & ~FAULT_OP_ANY) ||
	    (r->kind == FAULT_DELAY && !r->delay_ns))
		return -EINVAL;
	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (n == FAULT_MAX_RULES) {
		pthread_mutex_unlock(&ft->lock);
		return -ENOSPC;
	}
	if (n == ft->cap) {
		unsigned int cap = ft->cap ? ft->cap * 2 : 16;

		nr = realloc(ft->rules, cap * sizeof(*nr));
		if (!nr) {
			pthread_mutex_unlock(&ft->lock);
			return -ENOMEM;
		}
		ft->rules = nr;
		ft->cap = cap;
	}
	nr = &ft->rules[n];
	*nr = *r;
	nr->id = ft->next_id++;
	nr->hits = 0;
	if (!nr->ops)
		nr->ops = kind_ops[nr->kind];
	id = (int)nr->id;
	rule = *nr;
	atomic_store(&ft->n, n + 1);
	pthread_mutex_unlock(&ft->lock);
	pthread_rwlock_rdlock(&ft->watch_lock);
	if (ft->watch)
		ft->watch(ft->watch_arg, &rule);
	pthread_rwlock_unlock(&ft->watch_lock);
	return id;
}

int fault_watch_set(struct fault_table *ft, fault_watch_fn *fn, void *arg)
{
	int ret = 0;

	pthread_rwlock_wrlock(&ft->watch_lock);
	if (fn && ft->watch) {
		ret = -EBUSY;
	} else {
		ft->watch = fn;
		ft->watch_arg = fn ? arg : NULL;
	}
	pthread_rwlock_unlock(&ft->watch_lock);
	return ret;
}

/* Caller holds the lock. */
static void remove_at(struct fault_table *ft, unsigned int i)
{
	unsigned int n = atomic_load(&ft->n);

	memmove(&ft->rules[i], &ft->rules[i + 1],
		(n - i - 1) * sizeof(ft->rules[0]));
	atomic_store(&ft->n, n - 1);
}

int fault_clear(struct fault_table *ft, uint32_t id)
{
	unsigned int i, n;
	int ret = -ENOENT;

	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (id == 0) {
		atomic_store(&ft->n, 0);
		ret = (int)n;
	} else {
		for (i = 0; i < n; i++) {
			if (ft->rules[i].id == id) {
				remove_at(ft, i);
				ret = 1;
				break;
			}
		}
	}
	pthread_mutex_unlock(&ft->lock);
	return ret;
}

int fault_list(struct fault_table *ft, struct fault_rule *out, unsigned int max)
{
	unsigned int n;

	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (n && max)
		memcpy(out, ft->rules, (n < max ? n : max) * sizeof(*out));
	pthread_mutex_unlock(&ft->lock);
	return (int)n;
}

bool fault_exists(struct fault_table *ft, uint32_t id)
{
	unsigned int lo = 0, hi, mid;
	bool found = false;

	if (!ft)
		return false;
	pthread_mutex_lock(&ft->lock);
	/* binary search: rules stay sorted by id (ids only grow) */
	hi = atomic_load(&ft->n);
	while (lo < hi && !found) {
		mid = lo + (hi - lo) / 2;
		if (ft->rules[mid].id < id)
			lo = mid + 1;
		else if (ft->rules[mid].id > id)
			hi = mid;
		else
			found = true;
	}
	pthread_mutex_unlock(&ft->lock);
	return found;
}

bool fault_check(struct fault_table *ft, uint32_t lun, uint64_t lba,
		 uint64_t nblocks, unsigned int op, struct fault_hit *hit)
{
	struct fault_rule *r;
	unsigned int i, n;
	uint64_t last;
	bool fired = false;

	/* relaxed: a rule added concurrently may miss this one command */
	if (!ft || !atomic_load_explicit(&ft->n, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	for (i = 0; i < n; i++) {
		r = &ft->rules[i];
		if (!(r->ops & op) || lun < r->lun_first || lun > r->lun_last)
			continue;
		if (nblocks) {
			last = lba + nblocks - 1;
			if (last < lba)
				last = UINT64_MAX;
			if (last < r->lba_first || lba > r->lba_last)
				continue;
		} else if (r->lba_first != 0 || r->lba_last != UINT64_MAX) {
			continue;
		}
		hit->kind = r->kind;
		hit->id = r->id;
		hit->lba = lba > r->lba_first ? lba : r->lba_first;
		hit->delay_ns = r->delay_ns;
		hit->asc = r->asc;
		hit->ascq = r->ascq;
		r->hits++;
		atomic_fetch_add_explicit(&ft->total_hits, 1,
					  memory_order_relaxed);
		if (r->count && --r->count == 0)
			remove_at(ft, i);
		fired = true;
		break;
	}
	pthread_mutex_unlock(&ft->lock);
	return fired;
}

uint64_t fault_total_hits(struct fault_table *ft)
{
	return ft ? atomic_load_explicit(&ft->total_hits, memory_order_relaxed)
		  : 0;
}

/* ---- the one-line grammar ----------------------------------------------- */

/* What a field's value is. */
enum field_type {
	FT_RANGE, /* "all", "N", "A-B" or "A-" (to .max): two members */
	FT_OPS, /* a comma list of op_names[]: a FAULT_OP_* mask */
	FT_TIME, /* a number and one of time_units[], in ns */
	FT_NUM, /* decimal or 0x hex, written in decimal */
	FT_BYTE, /* decimal or 0x hex, written as 0xNN */
};

#define KIND_BIT(k) (1u << (k))
/* .off and .size of a member of struct fault_rule */
#define MEMBER(m)                                                              \
	.off = offsetof(struct fault_rule, m),                                 \
	.size = sizeof(((struct fault_rule *)0)->m)

/*
 * The fields after KIND, in the order fault_rule_format() writes them. A
 * field limited to some kinds is written for each of them (its value is
 * the kind's); any other only when it is not its default (0, or the whole
 * range). Every message about a field's value starts "NAME=VALUE: ".
 */
static const struct field {
	const char *name;
	const char *syntax; /* in the usage line */
	enum field_type type;
	size_t off, size; /* the member (FT_RANGE: the first) */
	size_t off_last; /* FT_RANGE: the inclusive last, same size */
	uint64_t min, max; /* inclusive */
	bool lun; /* also below fault_rule_parse()'s max_luns */
	unsigned int kinds; /* KIND_BIT()s it applies to; 0: every kind */
	unsigned int needed_by; /* KIND_BIT()s that must give it */
	const char *bad; /* what a refused value is not */
	const char *only; /* given for a kind outside .kinds */
	const char *needed; /* missing for a kind in .needed_by */
} fields[] = {
	{
		.name = "luns",
		.syntax = "A-B",
		.type = FT_RANGE,
		MEMBER(lun_first),
		.off_last = offsetof(struct fault_rule, lun_last),
		.max = UINT32_MAX,
		.lun = true,
		.bad = "not all, N, A-B or A-",
	},
	{
		.name = "lba",
		.syntax = "X-Y",
		.type = FT_RANGE,
		MEMBER(lba_first),
		.off_last = offsetof(struct fault_rule, lba_last),
		.max = UINT64_MAX,
		.bad = "not all, N, X-Y or X-",
	},
	{
		.name = "ops",
		.syntax = "...",
		.type = FT_OPS,
		MEMBER(ops),
		.min = 1,
		.max = FAULT_OP_ANY,
		.bad = "not a comma list of read, write, other, any",
	},
	{
		.name = "delay",
		.syntax = "T",
		.type = FT_TIME,
		MEMBER(delay_ns),
		.min = 1,
		.max = FAULT_MAX_DELAY_NS,
		.kinds = KIND_BIT(FAULT_DELAY),
		.needed_by = KIND_BIT(FAULT_DELAY),
		.bad = NULL, /* said from .min and .max */
		.only = "delay= applies only to kind delay",
		.needed = "kind delay needs delay=TIME",
	},
	{
		.name = "count",
		.syntax = "N",
		.type = FT_NUM,
		MEMBER(count),
		.max = UINT32_MAX,
		.bad = "not a number from 0 (forever) to 4294967295",
	},
	{
		.name = "asc",
		.syntax = "N",
		.type = FT_BYTE,
		MEMBER(asc),
		.max = 0xff,
		.kinds = KIND_BIT(FAULT_UA) | KIND_BIT(FAULT_NOT_READY),
		.bad = "not a byte (0..255 or 0x00..0xff)",
		.only = "asc= and ascq= apply only to kinds ua and not-ready",
	},
	{
		.name = "ascq",
		.syntax = "N",
		.type = FT_BYTE,
		MEMBER(ascq),
		.max = 0xff,
		.kinds = KIND_BIT(FAULT_UA) | KIND_BIT(FAULT_NOT_READY),
		.bad = "not a byte (0..255 or 0x00..0xff)",
		.only = "asc= and ascq= apply only to kinds ua and not-ready",
	},
};

/* FT_OPS names; fault_rule_format() takes the first that fits, "any" first. */
static const struct {
	const char *name;
	unsigned int ops;
} op_names[] = {
	{"any", FAULT_OP_ANY},
	{"read", FAULT_OP_READ},
	{"write", FAULT_OP_WRITE},
	{"other", FAULT_OP_OTHER},
};

/* FT_TIME units; fault_rule_format() takes the largest that divides. */
static const struct {
	const char *unit;
	uint64_t ns;
} time_units[] = {
	{"s", 1000000000},
	{"ms", 1000000},
	{"us", 1000},
	{"ns", 1},
};

/* The ASC a ua or not-ready rule reports when it gives none (ASCQ 0). */
static const uint8_t kind_asc[FAULT_KIND_MAX] = {
	[FAULT_UA] = ASC_OF(ASC_POWER_ON_OR_RESET),
	[FAULT_NOT_READY] = ASC_OF(ASC_LU_NOT_READY),
};

_Static_assert(sizeof(unsigned int) == 4, "ops is read as 4 bytes");
_Static_assert(ARRAY_SIZE(fields) <= 32, "seen is a 32-bit mask");

static uint64_t get_member(const struct fault_rule *r, size_t off, size_t size)
{
	const unsigned char *p = (const unsigned char *)r + off;
	uint8_t v8;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

/* @v fits: the caller checked it against the field's .max. */
static void put_member(struct fault_rule *r, size_t off, size_t size,
		       uint64_t v)
{
	unsigned char *p = (unsigned char *)r + off;
	uint8_t v8 = (uint8_t)v;
	uint32_t v32 = (uint32_t)v;

	if (size == 1)
		memcpy(p, &v8, 1);
	else if (size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

/* Text that grows past its buffer without overrunning it. */
struct out {
	char *buf;
	size_t len;
	size_t n; /* what the whole text needs; may pass len */
};

static void out_add(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_add(struct out *o, const char *fmt, ...)
{
	size_t at = o->n < o->len ? o->n : o->len;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(o->buf + at, o->len - at, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

/* "all", "N", "A-B" or "A-" (to @top); inclusive. -EDOM: A above B. */
static int parse_range(const char *v, uint64_t top, uint64_t *lo, uint64_t *hi)
{
	char buf[64];
	char *dash;

	if (strcmp(v, "all") == 0) {
		*lo = 0;
		*hi = top;
		return 0;
	}
	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_u64(buf, 0, UINT64_MAX, lo))
		return -EINVAL;
	if (!dash)
		*hi = *lo;
	else if (!dash[1])
		*hi = top;
	else if (parse_u64(dash + 1, 0, UINT64_MAX, hi))
		return -EINVAL;
	if (*lo > top || *hi > top)
		return -ERANGE;
	return *lo > *hi ? -EDOM : 0;
}

static int parse_ops(const char *v, uint64_t *ops)
{
	char buf[64];
	char *tok, *save;
	unsigned int i;

	if (strlen(v) >= sizeof(buf) || !*v)
		return -EINVAL;
	strcpy(buf, v);
	*ops = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(op_names); i++)
			if (strcmp(tok, op_names[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(op_names))
			return -EINVAL;
		*ops |= op_names[i].ops;
	}
	return *ops ? 0 : -EINVAL;
}

static int parse_time(const char *v, uint64_t *ns)
{
	char buf[32];
	size_t digits = strspn(v, "0123456789");
	uint64_t n;
	unsigned int i;

	if (!digits || digits >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, v, digits);
	buf[digits] = '\0';
	if (parse_u64(buf, 10, UINT64_MAX, &n))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(time_units); i++) {
		if (strcmp(v + digits, time_units[i].unit) == 0) {
			if (n > UINT64_MAX / time_units[i].ns)
				return -ERANGE;
			*ns = n * time_units[i].ns;
			return 0;
		}
	}
	return -EINVAL;
}

static void put_time(struct out *o, uint64_t ns)
{
	unsigned int i;

	for (i = 0; i + 1 < ARRAY_SIZE(time_units); i++)
		if (ns % time_units[i].ns == 0)
			break;
	out_add(o, "%" PRIu64 "%s", ns / time_units[i].ns, time_units[i].unit);
}

/*
 * The value of field @f from @v into *@lo (and *@hi for a range; else *@hi
 * = *@lo). Return: 0; -EDOM for a range whose first is above its last;
 * -EINVAL for anything else not a value of the field.
 */
static int parse_value(const struct field *f, const char *v, uint64_t *lo,
		       uint64_t *hi)
{
	int ret;

	switch (f->type) {
	case FT_RANGE:
		ret = parse_range(v, f->max, lo, hi);
		return ret == -EDOM ? ret : ret ? -EINVAL : 0;
	case FT_OPS:
		ret = parse_ops(v, lo);
		break;
	case FT_TIME:
		ret = parse_time(v, lo);
		break;
	case FT_NUM:
	case FT_BYTE:
		ret = parse_u64(v, 0, f->max, lo);
		break;
	default:
		ret = -EINVAL;
	}
	if (ret || *lo < f->min || *lo > f->max)
		return -EINVAL;
	*hi = *lo;
	return 0;
}

static void put_value(struct out *o, const struct field *f,
		      const struct fault_rule *r)
{
	uint64_t v = get_member(r, f->off, f->size), hi, left;
	unsigned int i;
	const char *sep = "";

	out_add(o, " %s=", f->name);
	switch (f->type) {
	case FT_RANGE:
		hi = get_member(r, f->off_last, f->size);
		if (v == hi)
			out_add(o, "%" PRIu64, v);
		else if (hi == f->max)
			out_add(o, "%" PRIu64 "-", v);
		else
			out_add(o, "%" PRIu64 "-%" PRIu64, v, hi);
		break;
	case FT_OPS:
		left = v;
		for (i = 0; i < ARRAY_SIZE(op_names); i++) {
			if ((left & op_names[i].ops) != op_names[i].ops)
				continue;
			out_add(o, "%s%s", sep, op_names[i].name);
			left &= ~(uint64_t)op_names[i].ops;
			sep = ",";
		}
		break;
	case FT_TIME:
		put_time(o, v);
		break;
	case FT_NUM:
		out_add(o, "%" PRIu64, v);
		break;
	case FT_BYTE:
		out_add(o, "0x%02" PRIx64, v);
		break;
	}
}

/* Whether field @f of @r is to be written (see fields[]). */
static bool field_shown(const struct field *f, const struct fault_rule *r)
{
	if (f->kinds)
		return f->kinds & KIND_BIT(r->kind);
	if (f->type == FT_RANGE)
		return get_member(r, f->off, f->size) != 0 ||
		       get_member(r, f->off_last, f->size) != f->max;
	return get_member(r, f->off, f->size) != 0;
}

static int say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Return: -EINVAL, for the caller's return. */
static int say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int say_usage(char *why, size_t whylen)
{
	struct out o = {why, whylen, 0};
	unsigned int i;

	out_add(&o, "empty rule (KIND");
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		out_add(&o, " [%s=%s]", fields[i].name, fields[i].syntax);
	out_add(&o, ")");
	return -EINVAL;
}

static int say_unknown_kind(char *why, size_t whylen, const char *kind)
{
	struct out o = {why, whylen, 0};
	int k;

	out_add(&o, "unknown kind '%s' (", kind);
	for (k = 1; k < FAULT_KIND_MAX; k++)
		out_add(&o, "%s%s", k > 1 ? ", " : "", kind_names[k]);
	out_add(&o, ")");
	return -EINVAL;
}

/* The list of fields, or "did you mean" the one a typo is closest to. */
static int say_unknown_field(char *why, size_t whylen, const char *name)
{
	struct out o = {why, whylen, 0};
	unsigned int i, d, bestd = 3;
	const char *best = NULL;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		d = cli_distance(name, fields[i].name);
		if (d < bestd) {
			bestd = d;
			best = fields[i].name;
		}
	}
	if (best)
		return say(why, whylen, "unknown field '%s' (did you mean %s?)",
			   name, best);
	out_add(&o, "unknown field '%s' (", name);
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		out_add(&o, "%s%s", i ? ", " : "", fields[i].name);
	out_add(&o, ")");
	return -EINVAL;
}

static int say_bad_value(char *why, size_t whylen, const struct field *f,
			 const char *v)
{
	char lo[32], hi[32];
	struct out a = {lo, sizeof(lo), 0}, b = {hi, sizeof(hi), 0};

	if (f->bad)
		return say(why, whylen, "%s=%s: %s", f->name, v, f->bad);
	put_time(&a, f->min);
	put_time(&b, f->max);
	return say(
		why, whylen,
		"%s=%s: not a time from %s to %s (a number and ns, us, ms or s)",
		f->name, v, lo, hi);
}

static unsigned int field_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (strcmp(name, fields[i].name) == 0)
			break;
	return i;
}

/* The kind's defaults: every range whole, ua and not-ready's ASC. */
static void rule_defaults(struct fault_rule *r, enum fault_kind kind)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->asc = kind_asc[kind];
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (fields[i].type == FT_RANGE)
			put_member(r, fields[i].off_last, fields[i].size,
				   fields[i].max);
}

/* What a rule given fields @seen (bits of fields[]) lacks or has too many. */
static int check_kind(const struct fault_rule *r, uint32_t seen, char *why,
		      size_t whylen)
{
	const struct field *f;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		f = &fields[i];
		if ((f->needed_by & KIND_BIT(r->kind)) && !(seen & 1u << i))
			return say(why, whylen, "%s", f->needed);
		if (f->kinds && !(f->kinds & KIND_BIT(r->kind)) &&
		    (seen & 1u << i))
			return say(why, whylen, "%s", f->only);
	}
	return 0;
}

int fault_rule_parse(const char *text, uint32_t max_luns,
		     struct fault_rule *out, char *why, size_t whylen)
{
	char buf[FAULT_RULE_TEXT_MAX + 1];
	const struct field *f;
	struct fault_rule r;
	char *tok, *save, *v;
	uint32_t seen = 0;
	uint64_t lo, hi;
	unsigned int i;
	int kind, ret;

	if (!text || strlen(text) > FAULT_RULE_TEXT_MAX)
		return say(why, whylen, "empty or longer than %d characters",
			   FAULT_RULE_TEXT_MAX);
	strcpy(buf, text);
	tok = strtok_r(buf, " \t", &save);
	if (!tok)
		return say_usage(why, whylen);
	kind = fault_kind_parse(tok);
	if (kind < 0)
		return say_unknown_kind(why, whylen, tok);
	rule_defaults(&r, (enum fault_kind)kind);
	while ((tok = strtok_r(NULL, " \t", &save))) {
		v = strchr(tok, '=');
		if (!v || v == tok)
			return say(why, whylen, "'%s' is not FIELD=VALUE", tok);
		*v++ = '\0';
		i = field_find(tok);
		if (i == ARRAY_SIZE(fields))
			return say_unknown_field(why, whylen, tok);
		f = &fields[i];
		if (seen & 1u << i)
			return say(why, whylen, "%s= given twice", f->name);
		seen |= 1u << i;
		ret = parse_value(f, v, &lo, &hi);
		if (ret == -EDOM)
			return say(why, whylen, "%s=%s: first above last",
				   f->name, v);
		if (ret)
			return say_bad_value(why, whylen, f, v);
		/* "A-" (hi at .max) runs to the end of any table */
		if (f->lun &&
		    (lo >= max_luns || (hi >= max_luns && hi != f->max)))
			return say(why, whylen, "%s=%s: past max_luns (%u)",
				   f->name, v, max_luns);
		put_member(&r, f->off, f->size, lo);
		if (f->type == FT_RANGE)
			put_member(&r, f->off_last, f->size, hi);
	}
	ret = check_kind(&r, seen, why, whylen);
	if (ret)
		return ret;
	*out = r;
	return 0;
}

int fault_rule_format(const struct fault_rule *r, char *buf, size_t len)
{
	const char *kind = fault_kind_name(r->kind);
	struct out o = {buf, len, 0};
	unsigned int i;

	if (!kind || !len)
		return -EINVAL;
	out_add(&o, "%s", kind);
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (field_shown(&fields[i], r))
			put_value(&o, &fields[i], r);
	return o.n < len ? (int)o.n : -ENOSPC;
}
