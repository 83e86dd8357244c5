// SPDX-License-Identifier: MIT
/*
 * The configuration parser: a line splitter of its own (below), then one
 * table per section parses each key; what no single key can check waits
 * for cfg_finish().
 *
 * Why not inih: this file promises FILE:LINE and the reason for every bad
 * line, all of them, in line order. Debian's inih calls its handler with no
 * line number (INI_HANDLER_LINENO is fixed when the library is built),
 * returns only the first bad line's number with no reason, never tells the
 * handler of a section with no keys ("[luns]" alone is a LUN), truncates
 * section names at 50 characters and keeps its options in process-wide
 * variables. Getting those back took a reader that re-lexed every line by
 * inih's own rules before inih did: two parsers for one file. The dialect
 * is small enough that one splitter is less code than that reader was.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "config.h"
#include "log.h"
#include "parse.h"
#include "ptable.h"

/* cfg seen-line values: 0 is "not set", this one "set on the command line" */
#define LINE_CLI (-1)
/* Most keys a section has (the LUN groups have the most, 20). */
#define MAX_KEYS 32

enum sect {
	S_NONE = 0, /* before the first header */
	S_BAD, /* a header that was wrong: its keys are skipped */
	S_TARGET,
	S_GROUP,
	S_STORE,
	S_FAULTS,
	S_ISCSI,
	S_TCMU,
	S_FUSE,
	S_PGROUP, /* [port_group.NAME] */
};

/* Where and how a key was set, for duplicate checks and later messages. */
struct seen {
	int line;
	char *value;
};

struct sect_state {
	int line; /* the header's line; 0 if the section never appeared */
	struct seen keys[MAX_KEYS];
};

/* A LUN group while parsing: sizes stay in bytes until block_size is known. */
struct pgroup {
	struct lun_group lg;
	char section[LUN_NAME_MAX + 8]; /* "luns" or "luns.NAME" */
	bool write_cache;
	double sanitize_time; /* seconds */
	uint64_t max_transfer, opt_transfer, max_unmap, max_write_same;
	unsigned int nsizes;
	uint64_t sizes[PTABLE_MAX_PARTS];
	struct sect_state st;
};

/* A [port_group.NAME] while parsing. */
struct ppg {
	struct cfg_port_group pg;
	char section[SCSI_ALUA_NAME_MAX + 12]; /* "port_group.NAME" */
	struct sect_state st;
};

struct pfault {
	int line;
	uint32_t num; /* N of fault.N */
	char *key;
	char *value;
	struct fault_rule rule;
};

/* A group's range.N = A[-B] [size=S] [offline] while parsing. */
struct prange {
	int line;
	uint32_t num; /* N of range.N */
	char *key;
	char *value;
	struct cfg_range r; /* size in bytes, checked at the end */
};

struct cfg_msg {
	int line;
	char *text;
};

struct cfg_parser {
	struct cfg c; /* target, store, iscsi, tcmu, fuse */
	bool parsed;
	int lineno;
	enum sect sect;
	unsigned int cur_group;
	struct sect_state target_st, store_st, faults_st, iscsi_st, tcmu_st,
		fuse_st;
	struct pgroup *groups;
	unsigned int ngroups, groups_cap;
	struct pfault *faults;
	unsigned int nfaults, faults_cap;
	struct prange *ranges;
	unsigned int nranges, ranges_cap;
	/*
	 * The ranges by group and N, for the duplicate check of each
	 * range.N line: open addressing, at most half full, a slot holding
	 * an index into ranges plus one (0: empty); 1 << range_bits slots,
	 * none while range_bits is 0.
	 */
	uint32_t *range_slots;
	unsigned int range_bits;
	struct ppg pgs[CFG_MAX_PORT_GROUPS];
	unsigned int npgs, cur_pg;
	bool luns_override;
	uint32_t luns_total;
	struct cfg_msg *msgs;
	unsigned int nmsgs, msgs_cap;
	char *err; /* the messages' text, in order */
	unsigned int nerr;
};

/*
 * One key. @set parses @v into the field at @off of the section's object
 * (@size bytes; for strings the buffer size) within [@min, @max], or writes
 * why not into @why.
 */
struct key {
	const char *name;
	int (*set)(void *obj, const struct key *k, const char *v, char *why,
		   size_t wl);
	size_t off;
	size_t size;
	uint64_t min, max;
};

#define FIELD(obj, k, type) ((type *)((char *)(obj) + (k)->off))

/* ---- messages ----------------------------------------------------------- */

static void msg(struct cfg_parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int msg_rank(int line)
{
	/* the file's own problems, then by line, then the command line */
	if (line == LINE_CLI)
		return INT_MAX - 1;
	return line;
}

/* Keeps the messages in line order and their text in p->err. */
static void msg_insert(struct cfg_parser *p, int line, const char *text)
{
	struct cfg_msg *nm;
	unsigned int i, at;
	size_t len = 0;
	char *ne;

	if (p->nmsgs == p->msgs_cap) {
		unsigned int cap = p->msgs_cap ? p->msgs_cap * 2 : 8;

		nm = realloc(p->msgs, cap * sizeof(*nm));
		if (!nm)
			return;
		p->msgs = nm;
		p->msgs_cap = cap;
	}
	ne = strdup(text);
	if (!ne)
		return;
	for (at = p->nmsgs; at > 0; at--)
		if (msg_rank(p->msgs[at - 1].line) <= msg_rank(line))
			break;
	memmove(&p->msgs[at + 1], &p->msgs[at],
		(p->nmsgs - at) * sizeof(p->msgs[0]));
	p->msgs[at].line = line;
	p->msgs[at].text = ne;
	p->nmsgs++;
	for (i = 0; i < p->nmsgs; i++)
		len += strlen(p->msgs[i].text) + 1;
	ne = realloc(p->err, len + 1);
	if (!ne)
		return;
	p->err = ne;
	len = 0;
	for (i = 0; i < p->nmsgs; i++) {
		size_t n = strlen(p->msgs[i].text);

		memcpy(p->err + len, p->msgs[i].text, n);
		len += n;
		p->err[len++] = '\n';
	}
	p->err[len] = '\0';
}

static void msg(struct cfg_parser *p, int line, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	size_t n;

	p->nerr++;
	if (p->nerr > CFG_MAX_ERRORS + 1)
		return;
	if (p->nerr == CFG_MAX_ERRORS + 1) {
		snprintf(buf, sizeof(buf), "%.900s: more errors not shown",
			 p->c.source);
		msg_insert(p, INT_MAX, buf);
		return;
	}
	if (line == LINE_CLI)
		n = (size_t)snprintf(buf, sizeof(buf), "command line: ");
	else if (line > 0)
		n = (size_t)snprintf(buf, sizeof(buf), "%s:%d: ", p->c.source,
				     line);
	else
		n = (size_t)snprintf(buf, sizeof(buf), "%s: ", p->c.source);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	msg_insert(p, line, buf);
}

/* ---- numbers and sizes -------------------------------------------------- */

int cfg_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffixes[] = "KMGTP";
	int i, n;

	for (i = 4; i >= 0; i--) {
		unsigned int shift = 10 * (unsigned int)(i + 1);

		if (bytes && bytes % (1ull << shift) == 0) {
			n = snprintf(buf, len, "%" PRIu64 "%c", bytes >> shift,
				     suffixes[i]);
			return n >= 0 && (size_t)n < len ? n : -ENOSPC;
		}
	}
	n = snprintf(buf, len, "%" PRIu64, bytes);
	return n >= 0 && (size_t)n < len ? n : -ENOSPC;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	unsigned int i;

	for (i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- key setters -------------------------------------------------------- */

static void store_uint(void *obj, const struct key *k, uint64_t n)
{
	switch (k->size) {
	case 1:
		*FIELD(obj, k, uint8_t) = (uint8_t)n;
		break;
	case 2:
		*FIELD(obj, k, uint16_t) = (uint16_t)n;
		break;
	case 4:
		*FIELD(obj, k, uint32_t) = (uint32_t)n;
		break;
	default:
		*FIELD(obj, k, uint64_t) = n;
		break;
	}
}

static int set_uint(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	uint64_t n;
	int ret = parse_u64(v, 0, UINT64_MAX, &n);

	if (ret == -EINVAL) {
		snprintf(why, wl, "not a number");
		return ret;
	}
	if (ret || n < k->min || n > k->max) {
		snprintf(why, wl, "not a number from %" PRIu64 " to %" PRIu64,
			 k->min, k->max);
		return -ERANGE;
	}
	store_uint(obj, k, n);
	return 0;
}

static int set_pow2(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	uint64_t n;

	if (parse_u64(v, 0, UINT64_MAX, &n) || n < k->min || n > k->max ||
	    (n & (n - 1))) {
		snprintf(why, wl,
			 "not a power of two from %" PRIu64 " to %" PRIu64,
			 k->min, k->max);
		return -EINVAL;
	}
	store_uint(obj, k, n);
	return 0;
}

static int size_value(const struct key *k, const char *v, uint64_t *n,
		      char *why, size_t wl)
{
	char lo[24], hi[24];
	int ret = parse_size(v, UINT64_MAX, n);

	if (ret == -EINVAL) {
		snprintf(why, wl,
			 "not a size (use a number with K, M, G, T or P)");
		return ret;
	}
	if (ret || *n < k->min || *n > k->max) {
		cfg_format_size(k->min, lo, sizeof(lo));
		cfg_format_size(k->max, hi, sizeof(hi));
		snprintf(why, wl, "not a size from %s to %s", lo, hi);
		return -ERANGE;
	}
	return 0;
}

static int set_size(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	uint64_t n;
	int ret = size_value(k, v, &n, why, wl);

	if (ret)
		return ret;
	store_uint(obj, k, n);
	return 0;
}

static int set_pow2_size(void *obj, const struct key *k, const char *v,
			 char *why, size_t wl)
{
	char lo[24], hi[24];
	uint64_t n;
	int ret = size_value(k, v, &n, why, wl);

	if (ret)
		return ret;
	if (n & (n - 1)) {
		cfg_format_size(k->min, lo, sizeof(lo));
		cfg_format_size(k->max, hi, sizeof(hi));
		snprintf(why, wl, "not a power of two from %s to %s", lo, hi);
		return -EINVAL;
	}
	store_uint(obj, k, n);
	return 0;
}

/* TCMU's data area is set in whole MiB (max_data_area_mb). */
static int set_mib_size(void *obj, const struct key *k, const char *v,
			char *why, size_t wl)
{
	uint64_t n;
	int ret = size_value(k, v, &n, why, wl);

	if (ret)
		return ret;
	if (n % (1u << 20)) {
		snprintf(why, wl, "not a whole number of MiB");
		return -EINVAL;
	}
	store_uint(obj, k, n);
	return 0;
}

static int set_bool(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	if (parse_bool(v, FIELD(obj, k, bool))) {
		snprintf(why, wl, "not yes or no");
		return -EINVAL;
	}
	return 0;
}

static int copy_str(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	size_t n = strlen(v);

	if (n < k->min) {
		snprintf(why, wl, "empty");
		return -EINVAL;
	}
	if (n >= k->size) {
		snprintf(why, wl, "longer than %zu characters", k->size - 1);
		return -EINVAL;
	}
	memcpy(FIELD(obj, k, char), v, n + 1);
	return 0;
}

static int set_path(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	return copy_str(obj, k, v, why, wl);
}

/* INQUIRY strings: printable ASCII only (SPC-5 4.3.1). */
static int set_ident(void *obj, const struct key *k, const char *v, char *why,
		     size_t wl)
{
	const char *s;

	for (s = v; *s; s++) {
		if (*s < 0x20 || *s > 0x7e) {
			snprintf(why, wl, "not printable ASCII");
			return -EINVAL;
		}
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_scheme(void *obj, const struct key *k, const char *v, char *why,
		      size_t wl)
{
	const struct sdnum_scheme *s = sdnum_scheme_find(v);
	size_t n = 0;
	unsigned int i;

	if (s) {
		*FIELD(obj, k, const struct sdnum_scheme *) = s;
		return 0;
	}
	n = (size_t)snprintf(why, wl, "unknown scheme (");
	for (i = 0; (s = sdnum_scheme_at(i)) && n < wl; i++)
		n += (size_t)snprintf(why + n, wl - n, "%s%s", i ? ", " : "",
				      s->name);
	if (n < wl)
		snprintf(why + n, wl - n, ")");
	return -EINVAL;
}

static int set_prefix(void *obj, const struct key *k, const char *v, char *why,
		      size_t wl)
{
	const char *s;

	for (s = v; *s; s++) {
		if (*s < 'a' || *s > 'z') {
			snprintf(why, wl, "not lower-case letters");
			return -EINVAL;
		}
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_log_level(void *obj, const struct key *k, const char *v,
			 char *why, size_t wl)
{
	if (log_level_parse(v, FIELD(obj, k, int))) {
		snprintf(
			why, wl,
			"not a log level (err, warning, notice, info, debug, trace or 0..8)");
		return -EINVAL;
	}
	return 0;
}

static int set_store_type(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	if (strcmp(v, "mem") == 0)
		*FIELD(obj, k, enum cfg_store_type) = CFG_STORE_MEM;
	else if (strcmp(v, "file") == 0)
		*FIELD(obj, k, enum cfg_store_type) = CFG_STORE_FILE;
	else {
		snprintf(why, wl, "not mem or file");
		return -EINVAL;
	}
	return 0;
}

static int set_block_size(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	uint64_t n;

	if (parse_size(v, UINT64_MAX, &n) || (n != 512 && n != 4096)) {
		snprintf(why, wl, "not 512 or 4096");
		return -EINVAL;
	}
	*FIELD(obj, k, uint32_t) = (uint32_t)n;
	return 0;
}

static int set_ptable(void *obj, const struct key *k, const char *v, char *why,
		      size_t wl)
{
	enum ptable_kind kind;

	if (ptable_kind_parse(v, &kind) || kind == PTABLE_NONE) {
		snprintf(why, wl, "not gpt or mbr");
		return -EINVAL;
	}
	*FIELD(obj, k, enum ptable_kind) = kind;
	return 0;
}

static int set_part_sizes(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	struct pgroup *g = obj;
	uint64_t sizes[PTABLE_MAX_PARTS];
	char item[64];
	const char *s = v, *end;
	unsigned int n = 0;
	size_t len;
	int ret;

	(void)k;
	while (*s) {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		while (len && isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
		if (n == PTABLE_MAX_PARTS) {
			snprintf(why, wl, "more than %d sizes",
				 PTABLE_MAX_PARTS);
			return -EINVAL;
		}
		if (!len || len >= sizeof(item)) {
			snprintf(why, wl, "size %u is empty or too long",
				 n + 1);
			return -EINVAL;
		}
		memcpy(item, s, len);
		item[len] = '\0';
		ret = parse_size(item, UINT64_MAX, &sizes[n]);
		if (ret) {
			snprintf(
				why, wl,
				"'%s' is not a size (use a number with K, M, G, T or P)",
				item);
			return -EINVAL;
		}
		n++;
		if (!end)
			break;
		s = end + 1;
		if (!*s) {
			snprintf(why, wl, "ends in a comma");
			return -EINVAL;
		}
	}
	if (!n) {
		snprintf(why, wl, "empty");
		return -EINVAL;
	}
	memcpy(g->sizes, sizes, n * sizeof(sizes[0]));
	g->nsizes = n;
	return 0;
}

/* SBC-4 VPD B1h: 0 not reported, 1 non-rotating, 0401h-FFFEh rpm. */
static int set_rotation(void *obj, const struct key *k, const char *v,
			char *why, size_t wl)
{
	uint64_t n;

	if (strcmp(v, "ssd") == 0 || strcmp(v, "non-rotating") == 0) {
		*FIELD(obj, k, uint16_t) = 1;
		return 0;
	}
	if (parse_u64(v, 0, UINT64_MAX, &n) || (n > 1 && n < 0x401) ||
	    n > 0xfffe) {
		snprintf(
			why, wl,
			"not 0 (not reported), 1 or ssd (non-rotating), or 1025..65534 rpm");
		return -EINVAL;
	}
	*FIELD(obj, k, uint16_t) = (uint16_t)n;
	return 0;
}

/* One "ADDRESS:PORT" (IPv6 in brackets) into @out. Return: 0, -EINVAL. */
static int parse_portal(const char *v, struct cfg_portal *out)
{
	unsigned char addr[16];
	char host[sizeof(out->host)];
	const char *colon, *hs = v;
	size_t hl;
	uint64_t port;

	if (v[0] == '[') {
		colon = strstr(v, "]:");
		if (!colon)
			return -EINVAL;
		hs = v + 1;
		hl = (size_t)(colon - hs);
		colon++;
	} else {
		colon = strrchr(v, ':');
		if (!colon || memchr(v, ':', (size_t)(colon - v)))
			return -EINVAL;
		hl = (size_t)(colon - v);
	}
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	if (inet_pton(v[0] == '[' ? AF_INET6 : AF_INET, host, addr) != 1)
		return -EINVAL;
	/* port 0: the kernel picks a free one at listen (the front end
	 * reports which) */
	if (parse_u64(colon + 1, 0, UINT64_MAX, &port) || port > 65535)
		return -EINVAL;
	if (strlen(v) >= sizeof(out->text))
		return -EINVAL;
	strcpy(out->text, v);
	strcpy(out->host, host);
	out->port = (uint16_t)port;
	return 0;
}

/*
 * A list of portals, separated by commas or blanks: each is a target
 * port (relative target port identifier = its position, from 1).
 */
static int set_portal(void *obj, const struct key *k, const char *v, char *why,
		      size_t wl)
{
	struct cfg_iscsi *c = obj;
	struct cfg_portal ps[CFG_ISCSI_MAX_PORTALS];
	char tok[sizeof(ps[0].text)];
	unsigned int n = 0, i;
	bool one = !v[strcspn(v, ", \t")];
	size_t len;

	(void)k;
	while (*v) {
		v += strspn(v, ", \t");
		if (!*v)
			break;
		len = strcspn(v, ", \t");
		if (n == CFG_ISCSI_MAX_PORTALS) {
			snprintf(why, wl, "more than %u portals",
				 CFG_ISCSI_MAX_PORTALS);
			return -EINVAL;
		}
		if (len >= sizeof(tok) || (memcpy(tok, v, len), tok[len] = '\0',
					   parse_portal(tok, &ps[n]))) {
			/* in a list, name the one that is wrong */
			snprintf(
				why, wl,
				"%.*s%snot ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1..65535, or 0 for a free one)",
				one ? 0 : (int)(len < 64 ? len : 64), v,
				one ? "" : " is ");
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (!strcmp(ps[i].host, ps[n].host) &&
			    ps[i].port == ps[n].port && ps[n].port) {
				snprintf(why, wl, "%s is listed twice",
					 ps[n].text);
				return -EINVAL;
			}
		}
		n++;
		v += len;
	}
	if (!n) {
		snprintf(
			why, wl,
			"no portal (ADDRESS:PORT, several separated by commas)");
		return -EINVAL;
	}
	memcpy(c->portals, ps, n * sizeof(ps[0]));
	c->nportals = n;
	strcpy(c->portal, ps[0].text);
	strcpy(c->host, ps[0].host);
	c->port = ps[0].port;
	return 0;
}

/* RFC 7143 4.2.7.2: "iqn." yyyy-mm "." reversed domain [":" anything]. */
static bool iqn_chars_ok(const char *s)
{
	for (; *s; s++)
		if (!(islower((unsigned char)*s) ||
		      isdigit((unsigned char)*s) || *s == '.' || *s == '-' ||
		      *s == ':'))
			return false;
	return true;
}

static bool iscsi_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n > CFG_ISCSI_NAME_MAX)
		return false;
	if (strncmp(s, "iqn.", 4) == 0)
		return n > 12 && isdigit((unsigned char)s[4]) &&
		       isdigit((unsigned char)s[5]) &&
		       isdigit((unsigned char)s[6]) &&
		       isdigit((unsigned char)s[7]) && s[8] == '-' &&
		       isdigit((unsigned char)s[9]) &&
		       isdigit((unsigned char)s[10]) && s[11] == '.' &&
		       iqn_chars_ok(s + 12);
	if (strncmp(s, "eui.", 4) == 0 || strncmp(s, "naa.", 4) == 0) {
		if (!(n == 20 || (s[0] == 'n' && n == 36)))
			return false;
		for (i = 4; i < n; i++)
			if (!isxdigit((unsigned char)s[i]))
				return false;
		return true;
	}
	return false;
}

bool cfg_iscsi_name_valid(const char *name)
{
	return iscsi_name_ok(name);
}

static int set_iqn_prefix(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	/* room for ":t15" */
	if (strlen(v) > CFG_ISCSI_NAME_MAX - 4 || !iscsi_name_ok(v) ||
	    strncmp(v, "iqn.", 4) != 0) {
		snprintf(
			why, wl,
			"not an iqn. name (iqn.YYYY-MM.reversed.domain, lower case, at most %d characters)",
			CFG_ISCSI_NAME_MAX - 4);
		return -EINVAL;
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_initiators(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	struct cfg_iscsi *c = obj;
	char name[CFG_ISCSI_NAME_MAX + 2];
	const char *s = v, *end;
	unsigned int n = 0;
	size_t len;

	(void)k;
	while (*s) {
		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		end = s;
		while (*end && *end != ',' && !isspace((unsigned char)*end))
			end++;
		len = (size_t)(end - s);
		if (n == CFG_ISCSI_MAX_INITIATORS) {
			snprintf(why, wl, "more than %d initiators",
				 CFG_ISCSI_MAX_INITIATORS);
			return -EINVAL;
		}
		if (len > CFG_ISCSI_NAME_MAX) {
			snprintf(why, wl,
				 "initiator %u is longer than %d characters",
				 n + 1, CFG_ISCSI_NAME_MAX);
			return -EINVAL;
		}
		memcpy(name, s, len);
		name[len] = '\0';
		if (!iscsi_name_ok(name)) {
			snprintf(
				why, wl,
				"'%s' is not an iSCSI name (iqn., eui. or naa.)",
				name);
			return -EINVAL;
		}
		n++;
		s = end;
	}
	/*
	 * An empty list would read as "no list" and admit everyone: a key
	 * written to restrict access must never open it.
	 */
	if (!n) {
		snprintf(
			why, wl,
			"names no initiator (remove the key to admit any initiator)");
		return -EINVAL;
	}
	s = v;
	c->ninitiators = 0;
	while (c->ninitiators < n) {
		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		end = s;
		while (*end && *end != ',' && !isspace((unsigned char)*end))
			end++;
		memcpy(c->initiators[c->ninitiators], s, (size_t)(end - s));
		c->initiators[c->ninitiators++][end - s] = '\0';
		s = end;
	}
	return 0;
}

/* CHAP names and secrets: printable, no spaces (they travel as key=value). */
static int set_chap(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	const char *s;

	for (s = v; *s; s++) {
		if (*s <= 0x20 || *s > 0x7e) {
			snprintf(why, wl, "not printable ASCII without spaces");
			return -EINVAL;
		}
	}
	return copy_str(obj, k, v, why, wl);
}

/* configfs names an HBA "<backend>_<id>": TCMU's backend is "user". */
static int set_hba(void *obj, const struct key *k, const char *v, char *why,
		   size_t wl)
{
	uint64_t id;

	if (strncmp(v, "user_", 5) != 0 ||
	    parse_u64(v + 5, 0, UINT64_MAX, &id) ||
	    (v[5] == '0' && v[6] != '\0')) {
		snprintf(why, wl,
			 "not user_N (configfs's name for a TCMU HBA)");
		return -EINVAL;
	}
	if (id > UINT32_MAX) {
		snprintf(why, wl, "HBA id above 4294967295");
		return -EINVAL;
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_name(void *obj, const struct key *k, const char *v, char *why,
		    size_t wl)
{
	const char *s;

	for (s = v; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') {
			snprintf(why, wl, "not letters, digits, _ or -");
			return -EINVAL;
		}
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_fabric(void *obj, const struct key *k, const char *v, char *why,
		      size_t wl)
{
	if (strcmp(v, "loopback") == 0)
		*FIELD(obj, k, enum cfg_tcmu_fabric) = CFG_TCMU_LOOPBACK;
	else if (strcmp(v, "none") == 0)
		*FIELD(obj, k, enum cfg_tcmu_fabric) = CFG_TCMU_NONE;
	else {
		snprintf(why, wl, "not loopback or none");
		return -EINVAL;
	}
	return 0;
}

static int set_mountpoint(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	struct cfg_fuse *f = obj;
	int ret = copy_str(obj, k, v, why, wl);

	if (!ret)
		f->enabled = true;
	return ret;
}

/* Mount options as fuse -o takes them: name or name=value, comma separated. */
static int set_fuse_options(void *obj, const struct key *k, const char *v,
			    char *why, size_t wl)
{
	const char *s;

	for (s = v; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr("_=,.-/", *s)) {
			snprintf(why, wl, "not a comma list of mount options");
			return -EINVAL;
		}
	}
	if (v[0] == ',' || strstr(v, ",,") || (*v && v[strlen(v) - 1] == ',')) {
		snprintf(why, wl, "has an empty option");
		return -EINVAL;
	}
	return copy_str(obj, k, v, why, wl);
}

static int set_fuse_cache(void *obj, const struct key *k, const char *v,
			  char *why, size_t wl)
{
	if (strcmp(v, "page") == 0)
		*FIELD(obj, k, enum cfg_fuse_cache) = CFG_FUSE_CACHE_PAGE;
	else if (strcmp(v, "direct") == 0)
		*FIELD(obj, k, enum cfg_fuse_cache) = CFG_FUSE_CACHE_DIRECT;
	else {
		snprintf(why, wl, "not page or direct");
		return -EINVAL;
	}
	return 0;
}

static int set_seconds(void *obj, const struct key *k, const char *v, char *why,
		       size_t wl)
{
	char *end;
	double d;

	if (!isdigit((unsigned char)v[0]))
		goto bad;
	errno = 0;
	d = strtod(v, &end);
	if (errno || *end || d < (double)k->min || d > (double)k->max)
		goto bad;
	*FIELD(obj, k, double) = d;
	return 0;
bad:
	snprintf(why, wl,
		 "not a number of seconds from %" PRIu64 " to %" PRIu64, k->min,
		 k->max);
	return -EINVAL;
}

/* An octal mode of read and write bits only: who may read the LUN files. */
static int set_file_mode(void *obj, const struct key *k, const char *v,
			 char *why, size_t wl)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(v, &end, 8);
	if (errno || end == v || *end || *v == '-' || (m & ~0666ul) ||
	    (m & 0600) != 0600) {
		snprintf(
			why, wl,
			"not an octal mode of read and write bits with the owner's both set (0600 to 0666, e.g. 0640)");
		return -EINVAL;
	}
	*FIELD(obj, k, unsigned int) = (unsigned int)m;
	return 0;
}

/* ---- the key tables ----------------------------------------------------- */

#define KEY(n, fn, type, field, lo, hi)                                        \
	{                                                                      \
		.name = n, .set = fn, .off = offsetof(type, field),            \
		.size = sizeof(((type *)0)->field), .min = lo, .max = hi       \
	}

static const struct key target_keys[] = {
	KEY("seed", set_uint, struct cfg_target, seed, 0, UINT64_MAX),
	KEY("oui", set_uint, struct cfg_target, oui, 0, 0xffffff),
	KEY("max_luns", set_uint, struct cfg_target, max_luns, 1, LUN_MAX_LUNS),
	KEY("scheme", set_scheme, struct cfg_target, scheme, 0, 0),
	KEY("name_prefix", set_prefix, struct cfg_target, name_prefix, 1, 0),
	KEY("control", set_path, struct cfg_target, control, 1, 0),
	KEY("log_level", set_log_level, struct cfg_target, log_level, 0, 0),
	KEY("power_on_ua", set_bool, struct cfg_target, power_on_ua, 0, 0),
	KEY("control_idle_timeout", set_uint, struct cfg_target,
	    control_idle_timeout, 0, 86400),
	KEY("syslog", set_bool, struct cfg_target, syslog, 0, 0),
};

enum {
	GK_FIRST,
	GK_COUNT,
	GK_SIZE,
	GK_BLOCK_SIZE,
	GK_PHYS_EXP,
	GK_THIN,
	GK_LBPRZ,
	GK_VENDOR,
	GK_PRODUCT,
	GK_REVISION,
	GK_PARTITIONS,
	GK_PTABLE,
	GK_PART_SIZES,
	GK_MAX_TRANSFER,
	GK_OPT_TRANSFER,
	GK_MAX_UNMAP,
	GK_MAX_UNMAP_DESC,
	GK_MAX_WRITE_SAME,
	GK_ROTATION,
	GK_WRITE_CACHE,
	GK_REMOVABLE,
	GK_SANITIZE_TIME,
};

/* Block limits: bytes here, at most 2^32 - 1 blocks of 4096 in the end. */
#define LIMIT_MAX (((1ull << 32) - 1) * 4096)

static const struct key group_keys[] = {
	[GK_FIRST] = KEY("first", set_uint, struct pgroup, lg.first, 0,
			 LUN_MAX_LUNS - 1),
	[GK_COUNT] = KEY("count", set_uint, struct pgroup, lg.count, 0,
			 LUN_MAX_LUNS),
	[GK_SIZE] = KEY("size", set_size, struct pgroup, lg.size, 512,
			STORE_MAX_BYTES),
	[GK_BLOCK_SIZE] = KEY("block_size", set_block_size, struct pgroup,
			      lg.block_size, 0, 0),
	[GK_PHYS_EXP] = KEY("physical_block_exponent", set_uint, struct pgroup,
			    lg.phys_exp, 0, 15),
	[GK_THIN] = KEY("thin", set_bool, struct pgroup, lg.thin, 0, 0),
	[GK_LBPRZ] = KEY("lbprz", set_bool, struct pgroup, lg.lbprz, 0, 0),
	[GK_VENDOR] = KEY("vendor", set_ident, struct pgroup, lg.vendor, 1, 0),
	[GK_PRODUCT] =
		KEY("product", set_ident, struct pgroup, lg.product, 1, 0),
	[GK_REVISION] =
		KEY("revision", set_ident, struct pgroup, lg.revision, 1, 0),
	[GK_PARTITIONS] = KEY("partitions", set_uint, struct pgroup, lg.nparts,
			      0, PTABLE_MAX_PARTS),
	[GK_PTABLE] = KEY("ptable", set_ptable, struct pgroup, lg.ptable, 0, 0),
	[GK_PART_SIZES] = KEY("partition_sizes", set_part_sizes, struct pgroup,
			      sizes, 0, 0),
	[GK_MAX_TRANSFER] = KEY("max_transfer", set_size, struct pgroup,
				max_transfer, 0, LIMIT_MAX),
	[GK_OPT_TRANSFER] = KEY("opt_transfer", set_size, struct pgroup,
				opt_transfer, 0, LIMIT_MAX),
	[GK_MAX_UNMAP] = KEY("max_unmap", set_size, struct pgroup, max_unmap, 0,
			     LIMIT_MAX),
	[GK_MAX_UNMAP_DESC] =
		KEY("max_unmap_descriptors", set_uint, struct pgroup,
		    lg.max_unmap_desc, 0, UINT32_MAX),
	[GK_MAX_WRITE_SAME] = KEY("max_write_same", set_size, struct pgroup,
				  max_write_same, 0, LIMIT_MAX),
	[GK_ROTATION] = KEY("rotation_rate", set_rotation, struct pgroup,
			    lg.rotation_rate, 0, 0),
	[GK_WRITE_CACHE] =
		KEY("write_cache", set_bool, struct pgroup, write_cache, 0, 0),
	[GK_REMOVABLE] =
		KEY("removable", set_bool, struct pgroup, lg.removable, 0, 0),
	[GK_SANITIZE_TIME] = KEY("sanitize_time", set_seconds, struct pgroup,
				 sanitize_time, 0, 3600),
};

enum { SK_TYPE, SK_DIR, SK_CHUNK, SK_LIMIT, SK_OPEN, SK_SHARDS, SK_MODE };

static const struct key store_keys[] = {
	[SK_TYPE] = KEY("type", set_store_type, struct cfg_store, type, 0, 0),
	[SK_DIR] = KEY("dir", set_path, struct cfg_store, dir, 1, 0),
	[SK_CHUNK] =
		KEY("chunk_size", set_pow2_size, struct cfg_store,
		    mem.chunk_size, STORE_MEM_MIN_CHUNK, STORE_MEM_MAX_CHUNK),
	[SK_LIMIT] = KEY("mem_limit", set_size, struct cfg_store, mem.mem_limit,
			 0, UINT64_MAX),
	[SK_OPEN] = KEY("max_open_files", set_uint, struct cfg_store,
			max_open_files, 1, 1u << 20),
	[SK_SHARDS] = KEY("shards", set_pow2, struct cfg_store, mem.shards, 1,
			  STORE_MEM_MAX_SHARDS),
	[SK_MODE] = KEY("file_mode", set_file_mode, struct cfg_store, file_mode,
			0, 0),
};

enum {
	IK_ENABLED,
	IK_PORTAL,
	IK_TARGETS,
	IK_IQN,
	IK_LPT,
	IK_CHAP_USER,
	IK_CHAP_SECRET,
	IK_MUTUAL_USER,
	IK_MUTUAL_SECRET,
	IK_INITIATORS,
	IK_SESSIONS,
	IK_THREADS,
	IK_MRDSL,
	IK_MBL,
	IK_FBL,
	IK_IMMEDIATE,
	IK_R2T,
	IK_NOP_INTERVAL,
	IK_NOP_TIMEOUT,
	IK_BUF_CONN,
	IK_BUF_INI,
	IK_BUF_TOTAL,
	IK_LOGIN_CONNS,
	IK_LOGIN_PER_ADDR,
	IK_LOGIN_TIMEOUT,
	IK_LOGIN_TIMEOUT_BUSY,
};

/* RFC 7143 13.12-13.14: data segment and burst lengths 512..2^24-1. */
static const struct key iscsi_keys[] = {
	[IK_ENABLED] =
		KEY("enabled", set_bool, struct cfg_iscsi, enabled, 0, 0),
	[IK_PORTAL] = KEY("portal", set_portal, struct cfg_iscsi, portal, 0, 0),
	[IK_TARGETS] = KEY("targets", set_uint, struct cfg_iscsi, targets, 1,
			   CFG_ISCSI_MAX_TARGETS),
	[IK_IQN] = KEY("iqn_prefix", set_iqn_prefix, struct cfg_iscsi,
		       iqn_prefix, 1, 0),
	[IK_LPT] = KEY("luns_per_target", set_uint, struct cfg_iscsi,
		       luns_per_target, 1, CFG_ISCSI_MAX_LUNS_PER_TARGET),
	[IK_CHAP_USER] =
		KEY("chap_user", set_chap, struct cfg_iscsi, chap_user, 1, 0),
	[IK_CHAP_SECRET] = KEY("chap_secret", set_chap, struct cfg_iscsi,
			       chap_secret, 1, 0),
	[IK_MUTUAL_USER] = KEY("mutual_user", set_chap, struct cfg_iscsi,
			       mutual_user, 1, 0),
	[IK_MUTUAL_SECRET] = KEY("mutual_secret", set_chap, struct cfg_iscsi,
				 mutual_secret, 1, 0),
	[IK_INITIATORS] = KEY("initiators", set_initiators, struct cfg_iscsi,
			      initiators, 0, 0),
	[IK_SESSIONS] = KEY("max_sessions", set_uint, struct cfg_iscsi,
			    max_sessions, 0, 65535),
	[IK_THREADS] =
		KEY("threads", set_uint, struct cfg_iscsi, threads, 1, 256),
	[IK_MRDSL] =
		KEY("max_recv_data_segment_length", set_size, struct cfg_iscsi,
		    max_recv_data_segment_length, 512, (1u << 24) - 1),
	[IK_MBL] = KEY("max_burst_length", set_size, struct cfg_iscsi,
		       max_burst_length, 512, (1u << 24) - 1),
	[IK_FBL] = KEY("first_burst_length", set_size, struct cfg_iscsi,
		       first_burst_length, 512, (1u << 24) - 1),
	[IK_IMMEDIATE] = KEY("immediate_data", set_bool, struct cfg_iscsi,
			     immediate_data, 0, 0),
	[IK_R2T] = KEY("initial_r2t", set_bool, struct cfg_iscsi, initial_r2t,
		       0, 0),
	[IK_NOP_INTERVAL] = KEY("nop_interval", set_uint, struct cfg_iscsi,
				nop_interval, 0, 3600),
	[IK_NOP_TIMEOUT] = KEY("nop_timeout", set_uint, struct cfg_iscsi,
			       nop_timeout, 1, 3600),
	/* at least one largest command (32 MiB) must always fit */
	[IK_BUF_CONN] =
		KEY("max_buffer_per_connection", set_size, struct cfg_iscsi,
		    max_buffer_per_connection, 32u << 20, 1ull << 40),
	[IK_BUF_INI] =
		KEY("max_buffer_per_initiator", set_size, struct cfg_iscsi,
		    max_buffer_per_initiator, 32u << 20, 1ull << 40),
	[IK_BUF_TOTAL] = KEY("max_buffer", set_size, struct cfg_iscsi,
			     max_buffer, 32u << 20, 1ull << 40),
	[IK_LOGIN_CONNS] =
		KEY("max_login_connections", set_uint, struct cfg_iscsi,
		    max_login_connections, 1, 65535),
	[IK_LOGIN_PER_ADDR] =
		KEY("max_login_per_address", set_uint, struct cfg_iscsi,
		    max_login_per_address, 1, 65535),
	[IK_LOGIN_TIMEOUT] = KEY("login_timeout", set_uint, struct cfg_iscsi,
				 login_timeout, 1, 3600),
	[IK_LOGIN_TIMEOUT_BUSY] =
		KEY("login_timeout_busy", set_uint, struct cfg_iscsi,
		    login_timeout_busy, 1, 3600),
};

/* [port_group.NAME] state = active/optimized | ... */
static int set_pg_state(void *obj, const struct key *k, const char *v,
			char *why, size_t wl)
{
	enum scsi_alua_state st;

	if (scsi_alua_state_parse(v, &st)) {
		snprintf(
			why, wl,
			"not active/optimized (ao), active/non-optimized (an), standby or unavailable");
		return -EINVAL;
	}
	*FIELD(obj, k, uint8_t) = (uint8_t)st;
	return 0;
}

/* [port_group.NAME] ports = 1, 2: relative target ports (portal positions) */
static int set_pg_ports(void *obj, const struct key *k, const char *v,
			char *why, size_t wl)
{
	uint32_t set = 0;
	uint64_t n;
	char tok[24];
	size_t len;

	while (*v) {
		v += strspn(v, ", \t");
		if (!*v)
			break;
		len = strcspn(v, ", \t");
		if (len >= sizeof(tok) ||
		    (memcpy(tok, v, len), tok[len] = '\0',
		     parse_u64(tok, 0, UINT64_MAX, &n)) ||
		    n < 1 || n > CFG_ISCSI_MAX_PORTALS) {
			snprintf(
				why, wl,
				"not a list of relative target ports 1..%u (positions in [iscsi] portal)",
				CFG_ISCSI_MAX_PORTALS);
			return -EINVAL;
		}
		if (set & 1u << (n - 1)) {
			snprintf(why, wl, "port %" PRIu64 " is listed twice",
				 n);
			return -EINVAL;
		}
		set |= 1u << (n - 1);
		v += len;
	}
	if (!set) {
		snprintf(why, wl, "no port (a list of 1..%u)",
			 CFG_ISCSI_MAX_PORTALS);
		return -EINVAL;
	}
	*FIELD(obj, k, uint32_t) = set;
	return 0;
}

enum { PK_ID, PK_STATE, PK_PORTS };

static const struct key pg_keys[] = {
	[PK_ID] = KEY("id", set_uint, struct cfg_port_group, id, 1, 65535),
	[PK_STATE] =
		KEY("state", set_pg_state, struct cfg_port_group, state, 0, 0),
	[PK_PORTS] =
		KEY("ports", set_pg_ports, struct cfg_port_group, ports, 0, 0),
};

static const struct key tcmu_keys[] = {
	KEY("enabled", set_bool, struct cfg_tcmu, enabled, 0, 0),
	KEY("hba", set_hba, struct cfg_tcmu, hba, 1, 0),
	KEY("name_prefix", set_name, struct cfg_tcmu, name_prefix, 1, 0),
	KEY("ring_size", set_mib_size, struct cfg_tcmu, ring_size, 1u << 20,
	    1u << 30),
	KEY("cmd_ring_size", set_mib_size, struct cfg_tcmu, cmd_ring_size,
	    1u << 20, 64u << 20),
	KEY("fabric", set_fabric, struct cfg_tcmu, fabric, 0, 0),
};

static const struct key fuse_keys[] = {
	KEY("mountpoint", set_mountpoint, struct cfg_fuse, mountpoint, 1, 0),
	KEY("threads", set_uint, struct cfg_fuse, threads, 1, 256),
	KEY("options", set_fuse_options, struct cfg_fuse, options, 0, 0),
	KEY("attr_timeout", set_seconds, struct cfg_fuse, attr_timeout, 0,
	    86400),
	KEY("cache", set_fuse_cache, struct cfg_fuse, cache, 0, 0),
	KEY("prefetch", set_size, struct cfg_fuse, prefetch, 0, 1u << 20),
	KEY("prefetch_budget", set_size, struct cfg_fuse, prefetch_budget, 0,
	    1ull << 40),
};

_Static_assert(ARRAY_SIZE(group_keys) <= MAX_KEYS, "MAX_KEYS too small");
_Static_assert(ARRAY_SIZE(iscsi_keys) <= MAX_KEYS, "MAX_KEYS too small");

struct section {
	const char *name;
	enum sect id;
	const struct key *keys;
	size_t nkeys;
};

static const struct section sections[] = {
	{"target", S_TARGET, target_keys, ARRAY_SIZE(target_keys)},
	{"luns", S_GROUP, group_keys, ARRAY_SIZE(group_keys)},
	{"store", S_STORE, store_keys, ARRAY_SIZE(store_keys)},
	{"faults", S_FAULTS, NULL, 0},
	{"iscsi", S_ISCSI, iscsi_keys, ARRAY_SIZE(iscsi_keys)},
	{"tcmu", S_TCMU, tcmu_keys, ARRAY_SIZE(tcmu_keys)},
	{"fuse", S_FUSE, fuse_keys, ARRAY_SIZE(fuse_keys)},
	{"port_group", S_PGROUP, pg_keys, ARRAY_SIZE(pg_keys)},
};

#define SECTION_LIST                                                           \
	"target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, "          \
	"port_group.NAME"

static const struct section *section_by_id(enum sect id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sections); i++)
		if (sections[i].id == id)
			return &sections[i];
	return NULL;
}

static struct sect_state *sect_state(struct cfg_parser *p, enum sect id)
{
	switch (id) {
	case S_TARGET:
		return &p->target_st;
	case S_GROUP:
		return &p->groups[p->cur_group].st;
	case S_STORE:
		return &p->store_st;
	case S_FAULTS:
		return &p->faults_st;
	case S_ISCSI:
		return &p->iscsi_st;
	case S_TCMU:
		return &p->tcmu_st;
	case S_FUSE:
		return &p->fuse_st;
	case S_PGROUP:
		return &p->pgs[p->cur_pg].st;
	default:
		return NULL;
	}
}

static void *sect_obj(struct cfg_parser *p, enum sect id)
{
	switch (id) {
	case S_TARGET:
		return &p->c.target;
	case S_GROUP:
		return &p->groups[p->cur_group];
	case S_STORE:
		return &p->c.store;
	case S_ISCSI:
		return &p->c.iscsi;
	case S_TCMU:
		return &p->c.tcmu;
	case S_FUSE:
		return &p->c.fuse;
	case S_PGROUP:
		return &p->pgs[p->cur_pg].pg;
	default:
		return NULL;
	}
}

static const char *sect_display(struct cfg_parser *p, enum sect id)
{
	if (id == S_GROUP)
		return p->groups[p->cur_group].section;
	if (id == S_PGROUP)
		return p->pgs[p->cur_pg].section;
	return section_by_id(id)->name;
}

/* ---- defaults ----------------------------------------------------------- */

static void defaults(struct cfg *c)
{
	c->target.seed = 1;
	c->target.max_luns = LUN_DEFAULT_MAX;
	c->target.power_on_ua = true;
	c->target.control_idle_timeout = CFG_CONTROL_IDLE_DEFAULT;
	c->target.scheme = &sdnum_scheme_linux;
	strcpy(c->target.name_prefix, "sd");
	c->target.log_level = LOG_DEFAULT_LEVEL;

	c->store.type = CFG_STORE_MEM;
	c->store.mem.chunk_size = STORE_MEM_DEFAULT_CHUNK;
	c->store.mem.shards = STORE_MEM_DEFAULT_SHARDS;
	c->store.max_open_files = STORE_FILE_DEFAULT_OPEN;
	c->store.file_mode = STORE_FILE_DEFAULT_MODE;

	c->iscsi.enabled = false;
	strcpy(c->iscsi.portal, "127.0.0.1:3260");
	strcpy(c->iscsi.host, "127.0.0.1");
	c->iscsi.port = 3260;
	c->iscsi.nportals = 1;
	c->iscsi.portals[0] = (struct cfg_portal){
		.text = "127.0.0.1:3260", .host = "127.0.0.1", .port = 3260};
	c->iscsi.targets = CFG_ISCSI_MAX_TARGETS;
	strcpy(c->iscsi.iqn_prefix, "iqn.2026-12.org.sdswarm");
	c->iscsi.luns_per_target = CFG_ISCSI_MAX_LUNS_PER_TARGET;
	c->iscsi.max_sessions = 64;
	c->iscsi.threads = 4;
	c->iscsi.max_recv_data_segment_length = 256u << 10;
	c->iscsi.max_burst_length = 1u << 20;
	c->iscsi.first_burst_length = 64u << 10;
	c->iscsi.immediate_data = true;
	c->iscsi.initial_r2t = false;
	c->iscsi.nop_interval = 10;
	c->iscsi.nop_timeout = 30;
	c->iscsi.max_buffer_per_connection = 64u << 20;
	c->iscsi.max_buffer_per_initiator = 256u << 20; /* see check_iscsi() */
	c->iscsi.max_buffer = 1u << 30;
	c->iscsi.max_login_connections = 256;
	c->iscsi.max_login_per_address = 16;
	c->iscsi.login_timeout = 30;
	c->iscsi.login_timeout_busy = 5;

	c->tcmu.enabled = false;
	strcpy(c->tcmu.hba, "user_0");
	strcpy(c->tcmu.name_prefix, "sdswarm");
	c->tcmu.ring_size = 8u << 20;
	c->tcmu.cmd_ring_size = 1u << 20;
	c->tcmu.fabric = CFG_TCMU_LOOPBACK;

	c->fuse.enabled = false;
	c->fuse.threads = 4;
	c->fuse.attr_timeout = 3600.0;
	c->fuse.cache = CFG_FUSE_CACHE_PAGE;
	c->fuse.prefetch = 4096;
	c->fuse.prefetch_budget = 1ull << 30;
}

static void group_defaults(struct pgroup *g)
{
	memset(g, 0, sizeof(*g));
	g->lg.count = 1;
	g->lg.size = 1ull << 30;
	g->lg.block_size = 512;
	g->lg.thin = true;
	g->lg.lbprz = true;
	strcpy(g->lg.vendor, "SDSWARM");
	strcpy(g->lg.product, "VDISK");
	strcpy(g->lg.revision, "0001");
	g->lg.ptable = PTABLE_GPT;
	g->lg.rotation_rate = 1;
	g->write_cache = true;
	g->max_transfer = 4u << 20;
	g->opt_transfer = 0;
	/*
	 * 512M: 2^20 blocks of 512 bytes, the most libiscsi's suite calls
	 * sane. 16M: under 65,536 blocks of 512, so a WRITE SAME the limit
	 * allows never needs a longer WRITE than max_transfer to set up.
	 */
	g->max_unmap = 512u << 20;
	g->lg.max_unmap_desc = 256;
	g->max_write_same = 16u << 20;
}

int cfg_parser_create(struct cfg_parser **out)
{
	struct cfg_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	defaults(&p->c);
	strcpy(p->c.source, CFG_BUILTIN_NAME);
	*out = p;
	return 0;
}

static void free_state(struct sect_state *st)
{
	unsigned int i;

	for (i = 0; i < MAX_KEYS; i++)
		free(st->keys[i].value);
}

void cfg_parser_destroy(struct cfg_parser *p)
{
	unsigned int i;

	if (!p)
		return;
	free_state(&p->target_st);
	free_state(&p->store_st);
	free_state(&p->faults_st);
	free_state(&p->iscsi_st);
	free_state(&p->tcmu_st);
	free_state(&p->fuse_st);
	for (i = 0; i < p->ngroups; i++)
		free_state(&p->groups[i].st);
	for (i = 0; i < p->npgs; i++)
		free_state(&p->pgs[i].st);
	free(p->groups);
	for (i = 0; i < p->nfaults; i++) {
		free(p->faults[i].key);
		free(p->faults[i].value);
	}
	free(p->faults);
	for (i = 0; i < p->nranges; i++) {
		free(p->ranges[i].key);
		free(p->ranges[i].value);
	}
	free(p->ranges);
	free(p->range_slots);
	for (i = 0; i < p->nmsgs; i++)
		free(p->msgs[i].text);
	free(p->msgs);
	free(p->err);
	free(p);
}

const char *cfg_errors(const struct cfg_parser *p)
{
	return p->err ? p->err : "";
}

unsigned int cfg_error_count(const struct cfg_parser *p)
{
	return p->nerr;
}

/* ---- sections ----------------------------------------------------------- */

static void begin_group(struct cfg_parser *p, int line, const char *sect,
			const char *name)
{
	struct pgroup *g;
	unsigned int i;
	const char *s;

	if (!*name || strlen(name) >= LUN_NAME_MAX) {
		msg(p, line, "[%s]: a group name is 1 to %d characters", sect,
		    LUN_NAME_MAX - 1);
		goto bad;
	}
	for (s = name; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') {
			msg(p, line,
			    "[%s]: a group name is letters, digits, _ and -",
			    sect);
			goto bad;
		}
	}
	for (i = 0; i < p->ngroups; i++) {
		if (strcmp(p->groups[i].lg.name, name) == 0) {
			msg(p, line,
			    "[%s]: group %s already defined on line %d", sect,
			    name, p->groups[i].st.line);
			goto bad;
		}
	}
	if (p->ngroups == LUN_MAX_GROUPS) {
		msg(p, line, "[%s]: more than %u LUN groups", sect,
		    LUN_MAX_GROUPS);
		goto bad;
	}
	if (p->ngroups == p->groups_cap) {
		unsigned int cap = p->groups_cap ? p->groups_cap * 2 : 4;

		g = realloc(p->groups, cap * sizeof(*g));
		if (!g) {
			msg(p, line, "[%s]: out of memory", sect);
			goto bad;
		}
		p->groups = g;
		p->groups_cap = cap;
	}
	g = &p->groups[p->ngroups];
	group_defaults(g);
	strcpy(g->lg.name, name);
	snprintf(g->section, sizeof(g->section), "%s", sect);
	g->st.line = line;
	p->cur_group = p->ngroups++;
	p->sect = S_GROUP;
	return;
bad:
	p->sect = S_BAD;
}

static void begin_port_group(struct cfg_parser *p, int line, const char *sect,
			     const char *name)
{
	struct ppg *g;
	unsigned int i;
	const char *s;

	if (!*name || strlen(name) > SCSI_ALUA_NAME_MAX) {
		msg(p, line, "[%s]: a port group name is 1 to %d characters",
		    sect, SCSI_ALUA_NAME_MAX);
		goto bad;
	}
	for (s = name; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') {
			msg(p, line,
			    "[%s]: a port group name is letters, digits, _ and -",
			    sect);
			goto bad;
		}
	}
	if (isdigit((unsigned char)*name)) {
		/* `sdswarm alua set` takes a group's number too */
		msg(p, line, "[%s]: a port group name starts with a letter",
		    sect);
		goto bad;
	}
	for (i = 0; i < p->npgs; i++) {
		if (strcmp(p->pgs[i].pg.name, name) == 0) {
			msg(p, line,
			    "[%s]: port group %s already defined on line %d",
			    sect, name, p->pgs[i].st.line);
			goto bad;
		}
	}
	if (p->npgs == CFG_MAX_PORT_GROUPS) {
		msg(p, line, "[%s]: more than %u port groups", sect,
		    CFG_MAX_PORT_GROUPS);
		goto bad;
	}
	g = &p->pgs[p->npgs];
	memset(g, 0, sizeof(*g));
	strcpy(g->pg.name, name);
	g->pg.state = SCSI_ALUA_OPTIMIZED;
	snprintf(g->section, sizeof(g->section), "%s", sect);
	g->st.line = line;
	p->cur_pg = p->npgs++;
	p->sect = S_PGROUP;
	return;
bad:
	p->sect = S_BAD;
}

static void begin_section(struct cfg_parser *p, int line, const char *name)
{
	struct sect_state *st;
	size_t i;

	if (strncmp(name, "port_group.", 11) == 0) {
		begin_port_group(p, line, name, name + 11);
		return;
	}
	if (strcmp(name, "luns") == 0) {
		begin_group(p, line, name, "default");
		return;
	}
	if (strncmp(name, "luns.", 5) == 0) {
		begin_group(p, line, name, name + 5);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(sections); i++) {
		if (strcmp(name, sections[i].name) == 0 &&
		    sections[i].id != S_PGROUP)
			break;
	}
	if (i == ARRAY_SIZE(sections)) {
		msg(p, line,
		    "[%s]: unknown section (sections: " SECTION_LIST ")", name);
		p->sect = S_BAD;
		return;
	}
	p->sect = sections[i].id;
	st = sect_state(p, p->sect);
	if (st->line) {
		msg(p, line, "[%s]: section repeated (first on line %d)", name,
		    st->line);
		p->sect = S_BAD;
		return;
	}
	st->line = line;
}

/* ---- keys --------------------------------------------------------------- */

static void unknown_key(struct cfg_parser *p, int line, const char *sect,
			const struct section *sec, const char *name,
			const char *value)
{
	const char *best = NULL;
	unsigned int d, bestd = 3;
	size_t i;

	for (i = 0; i < sec->nkeys; i++) {
		d = cli_distance(name, sec->keys[i].name);
		if (d < bestd) {
			bestd = d;
			best = sec->keys[i].name;
		}
	}
	if (best)
		msg(p, line, "[%s] %s = %s: unknown key (did you mean %s?)",
		    sect, name, value, best);
	else
		msg(p, line, "[%s] %s = %s: unknown key (see sdswarm.conf(5))",
		    sect, name, value);
}

static int set_key(struct cfg_parser *p, int line, const char *sect,
		   const struct section *sec, const struct key *k, void *obj,
		   struct sect_state *st, const char *value)
{
	struct seen *sn = &st->keys[k - sec->keys];
	char why[320];
	char *dup;

	if (sn->line && line != LINE_CLI) {
		msg(p, line,
		    "[%s] %s = %s: duplicate key (first set on line %d)", sect,
		    k->name, value, sn->line);
		return -EINVAL;
	}
	why[0] = '\0';
	if (k->set(obj, k, value, why, sizeof(why)) < 0) {
		msg(p, line, "[%s] %s = %s: %s", sect, k->name, value, why);
		return -EINVAL;
	}
	dup = strdup(value);
	if (!dup) {
		msg(p, line, "[%s] %s: out of memory", sect, k->name);
		return -ENOMEM;
	}
	free(sn->value);
	sn->value = dup;
	sn->line = line;
	return 0;
}

_Static_assert(CFG_LINE_MAX <= FAULT_RULE_TEXT_MAX,
	       "every [faults] value fits fault_rule_parse()");

static void fault_key(struct cfg_parser *p, int line, const char *name,
		      const char *value)
{
	struct pfault *f;
	struct fault_rule r;
	char why[256];
	uint64_t num;
	unsigned int i;

	if (strncmp(name, "fault.", 6) != 0 ||
	    parse_u64(name + 6, 0, UINT64_MAX, &num) || name[6] == '0' ||
	    num > UINT32_MAX) {
		msg(p, line,
		    "[faults] %s = %s: unknown key (rules are fault.N = RULE, N from 1)",
		    name, value);
		return;
	}
	for (i = 0; i < p->nfaults; i++) {
		if (p->faults[i].num == num) {
			msg(p, line,
			    "[faults] %s = %s: duplicate key (first set on line %d)",
			    name, value, p->faults[i].line);
			return;
		}
	}
	if (fault_rule_parse(value, LUN_MAX_LUNS, &r, why, sizeof(why))) {
		msg(p, line, "[faults] %s = %s: %s", name, value, why);
		return;
	}
	if (p->nfaults == p->faults_cap) {
		unsigned int cap = p->faults_cap ? p->faults_cap * 2 : 8;

		f = realloc(p->faults, cap * sizeof(*f));
		if (!f)
			goto oom;
		p->faults = f;
		p->faults_cap = cap;
	}
	f = &p->faults[p->nfaults];
	f->key = strdup(name);
	f->value = strdup(value);
	if (!f->key || !f->value) {
		free(f->key);
		free(f->value);
		goto oom;
	}
	f->line = line;
	f->num = (uint32_t)num;
	f->rule = r;
	p->nfaults++;
	return;
oom:
	msg(p, line, "[faults] %s: out of memory", name);
}

/*
 * range.N = A[-B] [size=S] [offline]: LUNs A..B of the current group; the
 * size is checked against block_size once the section is complete.
 */
static int parse_lun_range(const char *value, struct cfg_range *r, char *why,
			   size_t wl)
{
	char buf[CFG_LINE_MAX + 1], *tok, *save = NULL, *dash;
	uint64_t a, b;
	bool have_size = false;

	memset(r, 0, sizeof(*r));
	snprintf(buf, sizeof(buf), "%s", value);
	tok = strtok_r(buf, " \t", &save);
	if (!tok) {
		snprintf(why, wl,
			 "no LUNs (range.N = A[-B] [size=S] [offline])");
		return -EINVAL;
	}
	dash = strchr(tok, '-');
	if (dash)
		*dash = '\0';
	if (parse_u64(tok, 0, UINT64_MAX, &a) ||
	    (dash && parse_u64(dash + 1, 0, UINT64_MAX, &b))) {
		snprintf(why, wl, "'%s%s%s' is not a LUN or an A-B range", tok,
			 dash ? "-" : "", dash ? dash + 1 : "");
		return -EINVAL;
	}
	if (!dash)
		b = a;
	if (a > b || b >= LUN_MAX_LUNS) {
		snprintf(why, wl,
			 "LUNs %" PRIu64 "-%" PRIu64
			 ": not a range within 0-%u",
			 a, b, LUN_MAX_LUNS - 1);
		return -EINVAL;
	}
	r->first = (uint32_t)a;
	r->last = (uint32_t)b;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (strcmp(tok, "offline") == 0 && !r->offline) {
			r->offline = true;
		} else if (strncmp(tok, "size=", 5) == 0 && !have_size) {
			have_size = true;
			if (parse_size(tok + 5, UINT64_MAX, &r->size) ||
			    !r->size || r->size > STORE_MAX_BYTES) {
				snprintf(why, wl,
					 "size=%s: not a size from 512 to 8P",
					 tok + 5);
				return -EINVAL;
			}
		} else {
			snprintf(
				why, wl,
				"'%s': not size=S or offline (given once each)",
				tok);
			return -EINVAL;
		}
	}
	return 0;
}

/* The first slot to look in for range.@num of group @group. */
static size_t range_hash(unsigned int group, uint32_t num, unsigned int bits)
{
	/*
	 * Fibonacci hashing: the top bits of the key times 2^64 / phi, so
	 * N 1, 2, 3... and N apart by powers of two all spread out.
	 */
	uint64_t key = (uint64_t)group << 32 | num;

	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/*
 * The slot of range.@num of group @group: the one that holds it, or the
 * empty one where it would go. At most half the slots are taken, so the
 * probe ends at an empty one; it is bounded by the slot count all the
 * same. O(1) expected.
 */
static uint32_t *range_slot(const struct cfg_parser *p, unsigned int group,
			    uint32_t num)
{
	size_t mask = ((size_t)1 << p->range_bits) - 1;
	size_t i = range_hash(group, num, p->range_bits), n;
	const struct prange *pr;
	uint32_t *slot;

	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		slot = &p->range_slots[i];
		if (!*slot)
			return slot;
		pr = &p->ranges[*slot - 1];
		if (pr->r.group == group && pr->num == num)
			return slot;
	}
	return NULL; /* not reached: never more than half full */
}

/* The range.@num of group @group set so far, or NULL. */
static const struct prange *range_find(const struct cfg_parser *p,
				       unsigned int group, uint32_t num)
{
	const uint32_t *slot;

	if (!p->range_bits)
		return NULL;
	slot = range_slot(p, group, num);
	return slot && *slot ? &p->ranges[*slot - 1] : NULL;
}

/*
 * Room in the slots for one more range, keeping them at most half full:
 * twice the slots, every range rehashed (amortised O(1) a range).
 * Return: 0, -ENOMEM.
 */
static int range_slots_grow(struct cfg_parser *p)
{
	unsigned int bits = p->range_bits ? p->range_bits + 1 : 4, i;
	uint32_t *old = p->range_slots, *slot;

	if (p->range_bits &&
	    ((uint64_t)p->nranges + 1) * 2 <= (uint64_t)1 << p->range_bits)
		return 0;
	if (bits > 31)
		return -ENOMEM;
	p->range_slots = calloc((size_t)1 << bits, sizeof(*p->range_slots));
	if (!p->range_slots) {
		p->range_slots = old;
		return -ENOMEM;
	}
	free(old);
	p->range_bits = bits;
	for (i = 0; i < p->nranges; i++) {
		slot = range_slot(p, p->ranges[i].r.group, p->ranges[i].num);
		*slot = i + 1;
	}
	return 0;
}

static void lun_range_key(struct cfg_parser *p, int line, const char *sect,
			  const char *name, const char *value)
{
	const struct prange *first;
	struct prange *pr;
	struct cfg_range r;
	char why[320];
	uint64_t num;

	if (parse_u64(name + 6, 0, UINT64_MAX, &num) || name[6] == '0' ||
	    num > UINT32_MAX) {
		msg(p, line,
		    "[%s] %s = %s: unknown key (ranges are range.N = A[-B] [size=S] [offline], N from 1)",
		    sect, name, value);
		return;
	}
	/*
	 * A hash lookup, O(1): a scan of every earlier range made 131,072
	 * lines (save-config's table of 262,144 LUNs, every other one
	 * offline) take 17 s (issue 25).
	 */
	first = range_find(p, p->cur_group, (uint32_t)num);
	if (first) {
		msg(p, line,
		    "[%s] %s = %s: duplicate key (first set on line %d)", sect,
		    name, value, first->line);
		return;
	}
	if (parse_lun_range(value, &r, why, sizeof(why))) {
		msg(p, line, "[%s] %s = %s: %s", sect, name, value, why);
		return;
	}
	r.group = p->cur_group;
	if (p->nranges == p->ranges_cap) {
		unsigned int cap = p->ranges_cap ? p->ranges_cap * 2 : 8;

		pr = realloc(p->ranges, cap * sizeof(*pr));
		if (!pr)
			goto oom;
		p->ranges = pr;
		p->ranges_cap = cap;
	}
	if (range_slots_grow(p))
		goto oom;
	pr = &p->ranges[p->nranges];
	pr->key = strdup(name);
	pr->value = strdup(value);
	if (!pr->key || !pr->value) {
		free(pr->key);
		free(pr->value);
		goto oom;
	}
	pr->line = line;
	pr->num = (uint32_t)num;
	pr->r = r;
	*range_slot(p, pr->r.group, pr->num) = ++p->nranges;
	return;
oom:
	msg(p, line, "[%s] %s: out of memory", sect, name);
}

static void handle_key(struct cfg_parser *p, int line, const char *name,
		       const char *value)
{
	const struct section *sec;
	const char *sect;
	size_t i;

	switch (p->sect) {
	case S_NONE:
		msg(p, line,
		    "%s = %s: a key before any [section] (sections: " SECTION_LIST
		    ")",
		    name, value);
		return;
	case S_BAD:
		return; /* the header's error said it all */
	case S_FAULTS:
		fault_key(p, line, name, value);
		return;
	default:
		break;
	}
	sec = section_by_id(p->sect);
	sect = sect_display(p, p->sect);
	if (!*name) {
		msg(p, line, "[%s] = %s: the key name is missing", sect, value);
		return;
	}
	if (p->sect == S_GROUP && strncmp(name, "range.", 6) == 0) {
		lun_range_key(p, line, sect, name, value);
		return;
	}
	for (i = 0; i < sec->nkeys; i++) {
		if (strcmp(name, sec->keys[i].name) == 0) {
			set_key(p, line, sect, sec, &sec->keys[i],
				sect_obj(p, p->sect), sect_state(p, p->sect),
				value);
			return;
		}
	}
	unknown_key(p, line, sect, sec, name, value);
}

/* ---- the line splitter -------------------------------------------------- */

/*
 * The whole INI dialect (sdswarm.conf(5)), one line at a time:
 * - a UTF-8 byte order mark before line 1 is skipped; a line ends at "\n"
 *   or "\r\n" and holds at most CFG_LINE_MAX characters besides (a longer
 *   one is an error that ends the reading);
 * - white space around a line, a key and a value is dropped; an indented
 *   line is a line of its own (no continuations);
 * - a line whose first character is ';' or '#' is a comment; elsewhere a
 *   ';' that follows white space starts one ('#' does not);
 * - [NAME] opens a section, NAME exactly as written up to the first ']';
 *   only white space or a comment may follow it;
 * - KEY = VALUE, the key ending at the first '=' or ':' (as inih and
 *   Python's configparser allow), so the value keeps any later ones.
 * A line that is none of these gets its own message and changes nothing.
 */

/*
 * Bytes the reader holds of one line: CFG_LINE_MAX characters and "\r\n".
 * A line that has not ended within them is too long, whatever follows.
 */
#define LINE_BYTES (CFG_LINE_MAX + 2)

struct source {
	FILE *f; /* or */
	const char *text;
	char line[LINE_BYTES + 1]; /* and the NUL split_line() puts after it */
};

/* The next byte; EOF at the end, or on a read error (ferror()). */
static int next_byte(struct source *s)
{
	if (s->f)
		return getc_unlocked(s->f); /* cfg_parse_stream() locks it */
	return *s->text ? (unsigned char)*s->text++ : EOF;
}

/*
 * The next line into s->line, its end of line kept. Return: its length;
 * 0 at the end; -E2BIG for a line longer than CFG_LINE_MAX (nothing after
 * it is read: /dev/zero has no line end); the -errno of a failed read,
 * which is never taken for the end. A fixed buffer, not getline(): a
 * line costs no memory past LINE_BYTES, and there is no allocation to
 * fail (glibc's getline() before 2.37 returns -1 without the stream's
 * error flag when it cannot grow the line, which read as the end).
 */
static int next_line(struct source *s)
{
	size_t n = 0, len;
	int c = 0;

	errno = 0;
	while (n < LINE_BYTES && c != '\n') {
		c = next_byte(s);
		if (c == EOF)
			break;
		s->line[n++] = (char)c;
	}
	if (c == EOF && s->f && ferror(s->f))
		return errno ? -errno : -EIO;
	if (c != '\n' && c != EOF)
		return -E2BIG; /* LINE_BYTES and no line end yet */
	len = n;
	while (len && (s->line[len - 1] == '\n' || s->line[len - 1] == '\r'))
		len--;
	if (len > CFG_LINE_MAX)
		return -E2BIG;
	return (int)n;
}

static char *skip_space(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Cuts the white space off the end of @s. */
static void cut_space(char *s)
{
	char *e = s + strlen(s);

	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
}

/* Where the comment in @l starts (a ';' after white space), or its end. */
static char *comment_start(char *l)
{
	char *e;

	for (e = l + 1; *e; e++)
		if (*e == ';' && isspace((unsigned char)e[-1]))
			return e;
	return e;
}

/* A "[NAME]" line, @l at its '['. */
static void split_header(struct cfg_parser *p, char *l)
{
	char *end = strchr(l, ']'), *e;

	if (!end) {
		msg(p, p->lineno, "%s: a section header needs a closing ]", l);
		p->sect = S_BAD;
		return;
	}
	e = skip_space(end + 1);
	if (*e && *e != ';' && *e != '#') {
		msg(p, p->lineno, "%s: text after the section header", l);
		p->sect = S_BAD;
		return;
	}
	*end = '\0';
	begin_section(p, p->lineno, l + 1);
}

/*
 * Line p->lineno, @n bytes at @l with its end of line (next_line() has
 * checked its length) and room for a NUL after them.
 */
static void split_line(struct cfg_parser *p, char *l, size_t n)
{
	char *sep, *comment;

	if (memchr(l, '\0', n)) {
		msg(p, p->lineno, "a NUL byte in the line");
		return;
	}
	while (n && (l[n - 1] == '\n' || l[n - 1] == '\r'))
		n--;
	l[n] = '\0';
	if (p->lineno == 1 && strncmp(l, "\xef\xbb\xbf", 3) == 0)
		l += 3;
	l = skip_space(l);
	cut_space(l);
	if (!*l || *l == ';' || *l == '#')
		return;
	if (*l == '[') {
		split_header(p, l);
		return;
	}
	sep = l + strcspn(l, "=:");
	comment = comment_start(l);
	if (!*sep || comment < sep) {
		msg(p, p->lineno,
		    "%s: not KEY = VALUE, a [section] or a comment", l);
		return;
	}
	*comment = '\0';
	*sep = '\0';
	cut_space(l);
	sep = skip_space(sep + 1);
	cut_space(sep);
	handle_key(p, p->lineno, l, sep);
}

static int parse_source(struct cfg_parser *p, struct source *s)
{
	int n;

	p->parsed = true;
	p->lineno = 0;
	p->sect = S_NONE;
	while ((n = next_line(s)) > 0) {
		p->lineno++;
		split_line(p, s->line, (size_t)n);
	}
	if (n == -E2BIG) {
		msg(p, p->lineno + 1,
		    "line longer than %d characters; the rest of the file is not read",
		    CFG_LINE_MAX);
		return -EINVAL;
	}
	if (n < 0) {
		msg(p, p->lineno + 1, "read error: %s", strerror(-n));
		return n;
	}
	return p->nerr ? -EINVAL : 0;
}

int cfg_parse_file(struct cfg_parser *p, const char *path)
{
	FILE *f;
	int ret;

	if (p->parsed)
		return -EALREADY;
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(p->c.source, sizeof(p->c.source), "%s", path);
		msg(p, 0, "cannot open: %s", strerror(-ret));
		return ret;
	}
	ret = cfg_parse_stream(p, path, f);
	fclose(f);
	return ret;
}

int cfg_parse_stream(struct cfg_parser *p, const char *name, FILE *f)
{
	struct source s = {.f = f};
	int ret;

	if (p->parsed)
		return -EALREADY;
	snprintf(p->c.source, sizeof(p->c.source), "%s", name);
	/* one lock for the whole file, not one a byte (getc_unlocked()) */
	flockfile(f);
	ret = parse_source(p, &s);
	funlockfile(f);
	return ret;
}

int cfg_parse_string(struct cfg_parser *p, const char *name, const char *text)
{
	struct source s = {0};

	if (p->parsed)
		return -EALREADY;
	snprintf(p->c.source, sizeof(p->c.source), "%s", name);
	s.text = text;
	return parse_source(p, &s);
}

int cfg_override(struct cfg_parser *p, const char *section, const char *key,
		 const char *value)
{
	const struct section *sec = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sections); i++)
		if (strcmp(section, sections[i].name) == 0)
			sec = &sections[i];
	if (!sec || sec->id == S_GROUP || sec->id == S_FAULTS ||
	    sec->id == S_PGROUP) {
		msg(p, LINE_CLI,
		    "[%s] %s = %s: not a section the command line can set",
		    section, key, value);
		return -EINVAL;
	}
	for (i = 0; i < sec->nkeys; i++)
		if (strcmp(key, sec->keys[i].name) == 0)
			return set_key(p, LINE_CLI, sec->name, sec,
				       &sec->keys[i], sect_obj(p, sec->id),
				       sect_state(p, sec->id), value);
	unknown_key(p, LINE_CLI, section, sec, key, value);
	return -EINVAL;
}

void cfg_override_luns(struct cfg_parser *p, uint32_t total)
{
	p->luns_override = true;
	p->luns_total = total;
}

/* ---- whole-configuration checks ----------------------------------------- */

/* A message about key @k of group @g: at its line, or the header's. */
static void group_msg(struct cfg_parser *p, const struct pgroup *g,
		      unsigned int k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void group_msg(struct cfg_parser *p, const struct pgroup *g,
		      unsigned int k, const char *fmt, ...)
{
	const struct seen *sn = &g->st.keys[k];
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (sn->line)
		msg(p, sn->line, "[%s] %s = %s: %s", g->section,
		    group_keys[k].name, sn->value, why);
	else
		msg(p, g->st.line, "[%s]: %s", g->section, why);
}

/* The key a range message is about: count if set, else first. */
static unsigned int range_key(const struct pgroup *g)
{
	if (g->st.keys[GK_COUNT].line || !g->st.keys[GK_FIRST].line)
		return GK_COUNT;
	return GK_FIRST;
}

static void auto_firsts(struct cfg_parser *p)
{
	uint64_t next = 0;
	unsigned int i;

	/* An unset first follows the group before it in the file. */
	for (i = 0; i < p->ngroups; i++) {
		struct pgroup *g = &p->groups[i];

		if (!g->st.keys[GK_FIRST].line)
			g->lg.first = next < LUN_MAX_LUNS ? (uint32_t)next
							  : LUN_MAX_LUNS - 1;
		next = (uint64_t)g->lg.first + g->lg.count;
	}
}

static int by_first(const void *a, const void *b)
{
	const struct pgroup *x = *(const struct pgroup *const *)a;
	const struct pgroup *y = *(const struct pgroup *const *)b;

	if (x->lg.first != y->lg.first)
		return x->lg.first < y->lg.first ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int sorted_groups(struct cfg_parser *p, struct pgroup ***out)
{
	struct pgroup **v = calloc(p->ngroups ? p->ngroups : 1, sizeof(*v));
	unsigned int i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->ngroups; i++)
		v[i] = &p->groups[i];
	qsort(v, p->ngroups, sizeof(*v), by_first);
	*out = v;
	return 0;
}

static void apply_luns_override(struct cfg_parser *p, struct pgroup **v)
{
	uint64_t left = p->luns_total;
	char num[16];
	unsigned int i;

	if (!p->ngroups) {
		msg(p, LINE_CLI,
		    "--luns %u: the configuration has no [luns] group",
		    p->luns_total);
		return;
	}
	for (i = 0; i < p->ngroups; i++) {
		struct pgroup *g = v[i];
		uint64_t cap = i == p->ngroups - 1 ? LUN_MAX_LUNS : g->lg.count;
		uint32_t want = (uint32_t)(left < cap ? left : cap);

		left -= want;
		if (want == g->lg.count)
			continue;
		g->lg.count = want;
		snprintf(num, sizeof(num), "%u", want);
		free(g->st.keys[GK_COUNT].value);
		g->st.keys[GK_COUNT].value = strdup(num);
		g->st.keys[GK_COUNT].line =
			g->st.keys[GK_COUNT].value ? LINE_CLI : 0;
	}
}

/* A byte limit in blocks; false (after a message) if it is not whole. */
static bool limit_blocks(struct cfg_parser *p, struct pgroup *g, unsigned int k,
			 uint64_t bytes, uint32_t *out)
{
	if (bytes % g->lg.block_size) {
		group_msg(p, g, k, "not a multiple of block_size %u",
			  g->lg.block_size);
		return false;
	}
	if (bytes / g->lg.block_size > UINT32_MAX) {
		group_msg(p, g, k, "more than 4294967295 blocks");
		return false;
	}
	*out = (uint32_t)(bytes / g->lg.block_size);
	return true;
}

static void check_group(struct cfg_parser *p, struct pgroup *g)
{
	struct lun_group *lg = &g->lg;
	uint32_t max = p->c.target.max_luns;
	struct ptable_geom geom = {0};
	const char *why = NULL;
	unsigned int i;
	char sz[24];

	if (lg->size % lg->block_size) {
		/* the default size, 1G, is a multiple of both block sizes */
		group_msg(p, g, GK_SIZE, "not a multiple of block_size %u",
			  lg->block_size);
		return;
	}
	limit_blocks(p, g, GK_MAX_TRANSFER, g->max_transfer,
		     &lg->max_xfer_blocks);
	limit_blocks(p, g, GK_OPT_TRANSFER, g->opt_transfer,
		     &lg->opt_xfer_blocks);
	limit_blocks(p, g, GK_MAX_UNMAP, g->max_unmap, &lg->max_unmap_blocks);
	limit_blocks(p, g, GK_MAX_WRITE_SAME, g->max_write_same,
		     &lg->max_ws_blocks);
	if (g->max_transfer && g->opt_transfer > g->max_transfer)
		group_msg(p, g, GK_OPT_TRANSFER, "above max_transfer");
	lg->mode_default = g->write_cache ? LUN_MODE_WCE : 0;
	lg->sanitize_ms = (uint32_t)(g->sanitize_time * 1000.0 + 0.5);

	if (lg->count) {
		if ((uint64_t)lg->first + lg->count > max)
			group_msg(
				p, g, range_key(g),
				"LUNs %u-%u pass max_luns (%u)", lg->first,
				(uint32_t)((uint64_t)lg->first + lg->count - 1),
				max);
	} else if (lg->first >= max) {
		group_msg(p, g, GK_FIRST, "first LUN %u is past max_luns (%u)",
			  lg->first, max);
	}

	if (g->nsizes && !lg->nparts) {
		group_msg(p, g, GK_PART_SIZES, "needs partitions = N");
		return;
	}
	for (i = 0; i < g->nsizes; i++) {
		if (g->sizes[i] % lg->block_size) {
			cfg_format_size(g->sizes[i], sz, sizeof(sz));
			group_msg(
				p, g, GK_PART_SIZES,
				"size %u (%s) is not a multiple of block_size %u",
				i + 1, sz, lg->block_size);
			return;
		}
		lg->part_sizes[i] = g->sizes[i] / lg->block_size;
	}
	lg->nsizes = g->nsizes;
	if (!lg->nparts)
		return;
	geom.kind = lg->ptable;
	geom.block_size = lg->block_size;
	geom.nblocks = lg->size / lg->block_size;
	geom.nparts = lg->nparts;
	geom.sizes = lg->nsizes ? lg->part_sizes : NULL;
	geom.nsizes = lg->nsizes;
	if (ptable_check(&geom, &why)) {
		cfg_format_size(lg->size, sz, sizeof(sz));
		group_msg(p, g, g->nsizes ? GK_PART_SIZES : GK_PARTITIONS,
			  "the %s partition table does not fit a %s disk: %s",
			  ptable_kind_name(lg->ptable), sz,
			  why ? why : "invalid layout");
	}
}

static void check_overlaps(struct cfg_parser *p, struct pgroup **v)
{
	const struct pgroup *widest = NULL;
	uint64_t end = 0;
	unsigned int i;

	for (i = 0; i < p->ngroups; i++) {
		const struct pgroup *g = v[i];
		uint64_t gend = (uint64_t)g->lg.first + g->lg.count;

		if (!g->lg.count)
			continue;
		if (widest && g->lg.first < end)
			group_msg(
				p, g,
				g->st.keys[GK_FIRST].line ? GK_FIRST
							  : range_key(g),
				"LUNs %u-%u overlap [%s] (LUNs %u-%u, line %d)",
				g->lg.first, (uint32_t)(gend - 1),
				widest->section, widest->lg.first,
				(uint32_t)((uint64_t)widest->lg.first +
					   widest->lg.count - 1),
				widest->st.line);
		if (gend > end) {
			end = gend;
			widest = g;
		}
	}
}

static void store_only(struct cfg_parser *p, unsigned int k, const char *type)
{
	const struct seen *sn = &p->store_st.keys[k];

	if (sn->line)
		msg(p, sn->line, "[store] %s = %s: applies only to type = %s",
		    store_keys[k].name, sn->value, type);
}

static void check_store(struct cfg_parser *p)
{
	struct cfg_store *s = &p->c.store;
	const struct seen *lim = &p->store_st.keys[SK_LIMIT];
	char sz[24];

	if (s->type == CFG_STORE_FILE) {
		if (!s->dir[0]) {
			const struct seen *t = &p->store_st.keys[SK_TYPE];

			msg(p, t->line,
			    "[store] type = file: needs dir = DIRECTORY");
		}
		store_only(p, SK_CHUNK, "mem");
		store_only(p, SK_LIMIT, "mem");
		store_only(p, SK_SHARDS, "mem");
		return;
	}
	store_only(p, SK_DIR, "file");
	store_only(p, SK_OPEN, "file");
	store_only(p, SK_MODE, "file");
	if (!s->mem.mem_limit)
		return;
	cfg_format_size(s->mem.chunk_size, sz, sizeof(sz));
	if (s->mem.mem_limit < s->mem.chunk_size)
		msg(p, lim->line,
		    "[store] mem_limit = %s: less than one chunk (chunk_size %s); 0 means no limit",
		    lim->value, sz);
	else if (s->mem.mem_limit % s->mem.chunk_size)
		msg(p, lim->line,
		    "[store] mem_limit = %s: not a multiple of chunk_size %s",
		    lim->value, sz);
}

static void iscsi_pair(struct cfg_parser *p, unsigned int a, unsigned int b)
{
	const struct seen *sa = &p->iscsi_st.keys[a];
	const struct seen *sb = &p->iscsi_st.keys[b];

	if (sa->line && !sb->line)
		msg(p, sa->line, "[iscsi] %s = %s: needs %s too",
		    iscsi_keys[a].name, sa->value, iscsi_keys[b].name);
	if (sb->line && !sa->line)
		msg(p, sb->line, "[iscsi] %s = %s: needs %s too",
		    iscsi_keys[b].name, sb->value, iscsi_keys[a].name);
}

/* RFC 7143 12.1.3: CHAP secrets of at least 96 bits, not reused. */
static void secret_length(struct cfg_parser *p, unsigned int k)
{
	const struct seen *sn = &p->iscsi_st.keys[k];

	if (sn->line && strlen(sn->value) < 12)
		msg(p, sn->line,
		    "[iscsi] %s = %s: shorter than 12 characters (RFC 7143 asks for 96 bits)",
		    iscsi_keys[k].name, sn->value);
}

/*
 * Two [iscsi] buffer budgets in order: @lo's value @vlo not above @hi's
 * @vhi, else an error at @lo's line, or @hi's when @lo is a default.
 */
static void buffer_order(struct cfg_parser *p, int lo, int hi, uint64_t vlo,
			 uint64_t vhi)
{
	const struct seen *st = p->iscsi_st.keys;

	if (vlo > vhi)
		msg(p, st[lo].line ? st[lo].line : st[hi].line,
		    "[iscsi] %s %" PRIu64 " is above %s %" PRIu64,
		    iscsi_keys[lo].name, vlo, iscsi_keys[hi].name, vhi);
}

/*
 * [iscsi] max_buffer_per_initiator: set, between max_buffer_per_connection
 * and max_buffer (inclusive); unset, a quarter of max_buffer (256M of the
 * default 1G: four initiators at their share leave others nothing, one
 * leaves three quarters), but at least max_buffer_per_connection, so that
 * a configuration that sets only its siblings stays good.
 */
static void buffer_per_initiator(struct cfg_parser *p)
{
	struct cfg_iscsi *c = &p->c.iscsi;
	const struct seen *st = p->iscsi_st.keys;

	if (!st[IK_BUF_INI].line) {
		c->max_buffer_per_initiator = c->max_buffer / 4;
		if (c->max_buffer_per_initiator < c->max_buffer_per_connection)
			c->max_buffer_per_initiator =
				c->max_buffer_per_connection;
		return;
	}
	buffer_order(p, IK_BUF_CONN, IK_BUF_INI, c->max_buffer_per_connection,
		     c->max_buffer_per_initiator);
	buffer_order(p, IK_BUF_INI, IK_BUF_TOTAL, c->max_buffer_per_initiator,
		     c->max_buffer);
}

static void check_iscsi(struct cfg_parser *p)
{
	const struct cfg_iscsi *c = &p->c.iscsi;
	const struct seen *st = p->iscsi_st.keys;

	iscsi_pair(p, IK_CHAP_USER, IK_CHAP_SECRET);
	iscsi_pair(p, IK_MUTUAL_USER, IK_MUTUAL_SECRET);
	secret_length(p, IK_CHAP_SECRET);
	secret_length(p, IK_MUTUAL_SECRET);
	if (st[IK_MUTUAL_USER].line && !st[IK_CHAP_USER].line)
		msg(p, st[IK_MUTUAL_USER].line,
		    "[iscsi] mutual_user = %s: mutual CHAP needs chap_user and chap_secret",
		    st[IK_MUTUAL_USER].value);
	if (st[IK_MUTUAL_SECRET].line && st[IK_CHAP_SECRET].line &&
	    strcmp(c->chap_secret, c->mutual_secret) == 0)
		msg(p, st[IK_MUTUAL_SECRET].line,
		    "[iscsi] mutual_secret = %s: the same as chap_secret (RFC 7143 12.1.3)",
		    st[IK_MUTUAL_SECRET].value);
	if (c->first_burst_length > c->max_burst_length)
		msg(p, st[IK_FBL].line ? st[IK_FBL].line : st[IK_MBL].line,
		    "[iscsi] first_burst_length %u is above max_burst_length %u (RFC 7143 13.14)",
		    c->first_burst_length, c->max_burst_length);
	buffer_order(p, IK_BUF_CONN, IK_BUF_TOTAL, c->max_buffer_per_connection,
		     c->max_buffer);
	buffer_per_initiator(p);
	if (c->max_login_per_address > c->max_login_connections)
		msg(p,
		    st[IK_LOGIN_PER_ADDR].line ? st[IK_LOGIN_PER_ADDR].line
					       : st[IK_LOGIN_CONNS].line,
		    "[iscsi] max_login_per_address %u is above max_login_connections %u",
		    c->max_login_per_address, c->max_login_connections);
}

/*
 * Port groups against [iscsi] portal: a port past the portals is a path
 * that does not exist; with any group, each portal is in exactly one;
 * numbers unique; ids default to the group's position.
 */
static void check_port_groups(struct cfg_parser *p)
{
	const struct cfg_iscsi *ic = &p->c.iscsi;
	int pline = p->iscsi_st.keys[IK_PORTAL].line;
	uint32_t all = 0, have;
	unsigned int i, j, port;

	if (!p->npgs)
		return;
	have = ic->nportals >= 32 ? UINT32_MAX : (1u << ic->nportals) - 1;
	for (i = 0; i < p->npgs; i++) {
		struct ppg *g = &p->pgs[i];
		const struct seen *k = g->st.keys;

		if (!k[PK_ID].line)
			g->pg.id = (uint16_t)(i + 1);
		if (!k[PK_PORTS].line) {
			msg(p, g->st.line,
			    "[%s]: no ports (ports = the positions of its portals in [iscsi] portal, from 1)",
			    g->section);
			continue;
		}
		for (port = 1; port <= CFG_ISCSI_MAX_PORTALS; port++) {
			if (!(g->pg.ports & 1u << (port - 1)))
				continue;
			if (!(have & 1u << (port - 1)))
				msg(p, k[PK_PORTS].line,
				    "[%s] ports = %s: port %u, but [iscsi] portal lists %u portal%s (ports 1..%u): more paths than portals",
				    g->section, k[PK_PORTS].value, port,
				    ic->nportals, ic->nportals == 1 ? "" : "s",
				    ic->nportals);
			else if (all & 1u << (port - 1))
				msg(p, k[PK_PORTS].line,
				    "[%s] ports = %s: port %u is already in another port group",
				    g->section, k[PK_PORTS].value, port);
		}
		all |= g->pg.ports;
		for (j = 0; j < i; j++)
			if (p->pgs[j].pg.id == g->pg.id)
				msg(p,
				    k[PK_ID].line ? k[PK_ID].line : g->st.line,
				    "[%s]: id %u is also [%s]'s", g->section,
				    g->pg.id, p->pgs[j].section);
	}
	for (port = 1; port <= ic->nportals; port++)
		if (!(all & 1u << (port - 1)))
			msg(p, pline ? pline : p->pgs[0].st.line,
			    "[iscsi] portal %s (port %u) is in no [port_group.NAME]",
			    ic->portals[port - 1].text, port);
}

static void check_faults(struct cfg_parser *p)
{
	uint32_t max = p->c.target.max_luns;
	unsigned int i;

	for (i = 0; i < p->nfaults; i++) {
		const struct pfault *f = &p->faults[i];

		uint32_t bad = f->rule.lun_first;

		/* an open range ("A-", "all") runs to the table's end */
		if (bad < max) {
			if (f->rule.lun_last == UINT32_MAX ||
			    f->rule.lun_last < max)
				continue;
			bad = f->rule.lun_last;
		}
		msg(p, f->line,
		    "[faults] %s = %s: LUN %u is past max_luns (%u)", f->key,
		    f->value, bad, max);
	}
}

/* A span of LUNs a group or a range claims, for the overlap check. */
struct span {
	uint32_t first, last;
	const char *section;
	const char *key; /* NULL for a group's first and count */
	int line;
};

static int by_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/*
 * range.N keys: within max_luns, sizes whole blocks of their group, and no
 * LUN claimed twice, by two ranges or by a range and a group's first and
 * count (overlaps of groups alone are check_overlaps()'s).
 */
static void check_ranges(struct cfg_parser *p)
{
	uint32_t max = p->c.target.max_luns;
	struct span *v, *widest = NULL;
	unsigned int i, n = 0;

	if (!p->nranges)
		return;
	v = calloc(p->nranges + p->ngroups, sizeof(*v));
	if (!v) {
		msg(p, 0, "out of memory");
		return;
	}
	for (i = 0; i < p->nranges; i++) {
		const struct prange *pr = &p->ranges[i];
		const struct pgroup *g = &p->groups[pr->r.group];

		if (pr->r.last >= max)
			msg(p, pr->line,
			    "[%s] %s = %s: LUN %u is past max_luns (%u)",
			    g->section, pr->key, pr->value, pr->r.last, max);
		if (pr->r.size % g->lg.block_size)
			msg(p, pr->line,
			    "[%s] %s = %s: size is not a multiple of block_size %u",
			    g->section, pr->key, pr->value, g->lg.block_size);
		v[n++] = (struct span){pr->r.first, pr->r.last, g->section,
				       pr->key, pr->line};
	}
	for (i = 0; i < p->ngroups; i++) {
		const struct pgroup *g = &p->groups[i];

		if (g->lg.count)
			v[n++] =
				(struct span){g->lg.first,
					      (uint32_t)((uint64_t)g->lg.first +
							 g->lg.count - 1),
					      g->section, NULL, g->st.line};
	}
	qsort(v, n, sizeof(*v), by_span);
	for (i = 0; i < n; i++) {
		if (widest && v[i].first <= widest->last) {
			/* the message goes to the range, if one is a range */
			const struct span *a = v[i].key ? &v[i] : widest;
			const struct span *b = a == widest ? &v[i] : widest;

			if (a->key)
				msg(p, a->line,
				    "[%s] %s: LUNs %u-%u overlap %s%s[%s] (LUNs %u-%u, line %d)",
				    a->section, a->key, a->first, a->last,
				    b->key ? b->key : "", b->key ? " of " : "",
				    b->section, b->first, b->last, b->line);
		}
		if (!widest || v[i].last > widest->last)
			widest = &v[i];
	}
	free(v);
}

/* "key = value" lines of the keys set in @st; NULL on no memory. */
static bool put_keys(FILE *f, const struct section *sec,
		     const struct sect_state *st, const char *header,
		     unsigned int skip_a, unsigned int skip_b)
{
	bool any = false;
	size_t k;

	for (k = 0; k < sec->nkeys; k++) {
		if (!st->keys[k].line || k == skip_a || k == skip_b)
			continue;
		if (!any && header)
			fprintf(f, "[%s]\n", header);
		any = true;
		fprintf(f, "%s = %s\n", sec->keys[k].name, st->keys[k].value);
	}
	return any;
}

/* cfg.settings and cfg.group_settings (see config.h). */
static int settings_text(struct cfg_parser *p, struct cfg *c)
{
	static const enum sect order[] = {S_TARGET, S_STORE, S_ISCSI, S_TCMU,
					  S_FUSE};
	const struct section *sec;
	size_t len = 0;
	unsigned int i;
	FILE *f;

	f = open_memstream(&c->settings, &len);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		sec = section_by_id(order[i]);
		if (put_keys(f, sec, sect_state(p, order[i]), sec->name,
			     MAX_KEYS, MAX_KEYS))
			fputc('\n', f);
	}
	if (fclose(f))
		return -ENOMEM;
	c->group_settings =
		calloc(p->ngroups ? p->ngroups : 1, sizeof(*c->group_settings));
	if (!c->group_settings)
		return -ENOMEM;
	sec = section_by_id(S_GROUP);
	for (i = 0; i < p->ngroups; i++) {
		f = open_memstream(&c->group_settings[i], &len);
		if (!f)
			return -ENOMEM;
		put_keys(f, sec, &p->groups[i].st, NULL, GK_FIRST, GK_COUNT);
		if (fclose(f))
			return -ENOMEM;
	}
	return 0;
}

static int by_num(const void *a, const void *b)
{
	const struct pfault *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

uint64_t cfg_total_luns(const struct cfg *c)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < c->ngroups; i++)
		n += c->groups[i].count;
	for (i = 0; i < c->nranges; i++)
		n += (uint64_t)c->ranges[i].last - c->ranges[i].first + 1;
	return n;
}

int cfg_finish(struct cfg_parser *p, struct cfg **out)
{
	struct pgroup **v;
	struct cfg *c;
	unsigned int i;

	auto_firsts(p);
	if (sorted_groups(p, &v)) {
		msg(p, 0, "out of memory");
		return -ENOMEM;
	}
	if (p->luns_override)
		apply_luns_override(p, v);
	for (i = 0; i < p->ngroups; i++)
		check_group(p, &p->groups[i]);
	check_overlaps(p, v);
	free(v);
	check_ranges(p);
	check_store(p);
	check_iscsi(p);
	check_port_groups(p);
	check_faults(p);
	if (p->nerr)
		return -EINVAL;

	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	*c = p->c;
	c->groups = calloc(p->ngroups ? p->ngroups : 1, sizeof(*c->groups));
	c->faults = calloc(p->nfaults ? p->nfaults : 1, sizeof(*c->faults));
	c->ranges = calloc(p->nranges ? p->nranges : 1, sizeof(*c->ranges));
	if (!c->groups || !c->faults || !c->ranges)
		goto oom_free;
	c->ngroups = p->ngroups; /* for cfg_free() from here on */
	if (settings_text(p, c))
		goto oom_free;
	for (i = 0; i < p->nranges; i++)
		c->ranges[i] = p->ranges[i].r;
	c->nranges = p->nranges;
	for (i = 0; i < p->ngroups; i++)
		c->groups[i] = p->groups[i].lg;
	c->ngroups = p->ngroups;
	if (p->nfaults)
		qsort(p->faults, p->nfaults, sizeof(*p->faults), by_num);
	for (i = 0; i < p->nfaults; i++)
		c->faults[i] = p->faults[i].rule;
	c->nfaults = p->nfaults;
	for (i = 0; i < p->npgs; i++)
		c->port_groups[i] = p->pgs[i].pg;
	c->nport_groups = p->npgs;
	*out = c;
	return 0;

oom_free:
	cfg_free(c);
oom:
	msg(p, 0, "out of memory");
	return -ENOMEM;
}

void cfg_free(struct cfg *c)
{
	unsigned int i;

	if (!c)
		return;
	if (c->group_settings)
		for (i = 0; i < c->ngroups; i++)
			free(c->group_settings[i]);
	free(c->group_settings);
	free(c->settings);
	free(c->ranges);
	free(c->groups);
	free(c->faults);
	free(c);
}

int cfg_alua(const struct cfg *c, struct scsi_alua *out)
{
	unsigned int i, port;

	memset(out, 0, sizeof(*out));
	if (!c->nport_groups)
		return 0;
	out->ngroups = c->nport_groups;
	out->nports = c->iscsi.nportals;
	for (i = 0; i < c->nport_groups; i++) {
		const struct cfg_port_group *g = &c->port_groups[i];

		strcpy(out->groups[i].name, g->name);
		out->groups[i].id = g->id;
		out->groups[i].state = g->state;
		for (port = 1; port <= out->nports; port++)
			if (g->ports & 1u << (port - 1))
				out->port_group[port - 1] = (uint8_t)i;
	}
	return 1;
}

int cfg_iscsi_target_name(const struct cfg_iscsi *c, unsigned int i, char *buf,
			  size_t len)
{
	int n;

	if (i >= c->targets)
		return -ERANGE;
	n = snprintf(buf, len, "%s:t%u", c->iqn_prefix, i);
	return n >= 0 && (size_t)n < len ? n : -ENOSPC;
}

/* ---- the embedded default ----------------------------------------------- */

static const char default_text[] =
	"# default.conf: what sdswarmd runs with no --config (the same\n"
	"# text is built into the daemon). 18,279 thin 1 TiB disks with\n"
	"# four GPT partitions each, on the sparse in-memory store.\n"
	"# 18,279 = 26 + 26^2 + 26^3 + 1, so the kernel's names run\n"
	"# sda..sdz, sdaa..sdzz, sdaaa..sdzzz and the last one is sdaaaa:\n"
	"# every change in the length of a name is crossed once.\n"
	"\n"
	"[target]\n"
	"seed = 1\n"
	"max_luns = 262144\n"
	"scheme = linux\n"
	"name_prefix = sd\n"
	"log_level = notice\n"
	"\n"
	"[luns]\n"
	"count = 18279\n"
	"size = 1T\n"
	"block_size = 512\n"
	"thin = yes\n"
	"partitions = 4\n"
	"ptable = gpt\n"
	"\n"
	"[store]\n"
	"type = mem\n";

const char *cfg_default_text(void)
{
	return default_text;
}
