// SPDX-License-Identifier: MIT
/*
 * The FUSE front end's parsed partition tables: where partition N of a
 * LUN lies, computed for the synthetic table and read with ptable_parse()
 * once the host owns it, kept per LUN for FE_TABLE_TTL_NS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "frontend/fuse/fusefe_i.h"
#include "lun.h"
#include "ptable.h"

#define FE_TABLE_TTL_NS FE_NS /* a parsed table is re-read after this */
/* Blocks at each end of a disk that hold a GPT (0..33, last 33). */
#define FE_GPT_HEAD 34u
#define FE_GPT_TAIL 33u
/* Parsed tables kept; about 4 KiB each with 128 partitions. */
#define FE_CACHE_MAX 8192u
/* Block ranges a parse read, kept to notice a write to them. */
#define FE_RANGES 16u

struct fe_cpart {
	uint64_t start;
	uint64_t nblocks;
	unsigned int number;
};

/* One LUN's table as ptable_parse() read it from the store. */
struct fe_cached {
	struct fe_cached *next;
	uint32_t lun;
	uint32_t gen;
	uint64_t nblocks;
	uint64_t when_ns;
	unsigned int nranges;
	bool overflow; /* more ranges than fit: any write may change it */
	struct {
		uint64_t first, last; /* inclusive */
	} ranges[FE_RANGES];
	unsigned int n;
	struct fe_cpart parts[];
};

void fusefe_ptcache_init(struct fusefe_ptcache *pc, struct lun_table *luns)
{
	pc->luns = luns;
	pthread_mutex_init(&pc->lock, NULL);
}

void fusefe_ptcache_fini(struct fusefe_ptcache *pc)
{
	unsigned int i;

	for (i = 0; i < FE_CACHE_BUCKETS; i++) {
		struct fe_cached *c, *next;

		for (c = pc->cache[i]; c; c = next) {
			next = c->next;
			free(c);
		}
	}
	pthread_mutex_destroy(&pc->lock);
}

/* The LUN layer overlays its synthetic table: layouts are computed. */
static bool fe_synthetic(const struct lun_info *li)
{
	return li->geom.kind != PTABLE_NONE && !li->table_owned;
}

static unsigned int fe_bucket(uint32_t lun)
{
	return (lun * 2654435761u) >> 22; /* 10 bits: FE_CACHE_BUCKETS */
}

static struct fe_cached **fe_slot(struct fusefe_ptcache *pc, uint32_t lun)
{
	struct fe_cached **pp = &pc->cache[fe_bucket(lun)];

	while (*pp && (*pp)->lun != lun)
		pp = &(*pp)->next;
	return pp;
}

/* Caller holds pc->lock. Return: the highest number it had, or -1. */
static int fe_drop_locked(struct fusefe_ptcache *pc, uint32_t lun)
{
	struct fe_cached **pp = fe_slot(pc, lun), *c = *pp;
	int maxnum;

	if (!c)
		return -1;
	maxnum = c->n ? (int)c->parts[c->n - 1].number : 0;
	*pp = c->next;
	free(c);
	pc->ncached--;
	return maxnum;
}

int fusefe_ptcache_drop(struct fusefe_ptcache *pc, uint32_t lun)
{
	int ret;

	pthread_mutex_lock(&pc->lock);
	ret = fe_drop_locked(pc, lun);
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

struct fe_parse {
	struct fusefe_ptcache *pc;
	const struct lun_info *li;
	unsigned int nranges;
	bool overflow;
	struct {
		uint64_t first, last;
	} ranges[FE_RANGES];
};

/* ptable_parse()'s reader: the store through the LUN, ranges recorded. */
static int fe_parse_read(void *arg, uint64_t lba, uint32_t n, void *buf)
{
	struct fe_parse *p = arg;
	struct iovec iov = {.iov_base = buf,
			    .iov_len = (size_t)n * p->li->block_size};
	unsigned int i = p->nranges;

	if (i && p->ranges[i - 1].last + 1 == lba) {
		p->ranges[i - 1].last = lba + n - 1;
	} else if (i < FE_RANGES) {
		p->ranges[i].first = lba;
		p->ranges[i].last = lba + n - 1;
		p->nranges++;
	} else {
		p->overflow = true;
	}
	return lun_read(p->pc->luns, p->li, lba, n, &iov, 1);
}

/*
 * Parse @li's table from the store into a new cache entry. Cost: the
 * blocks ptable_parse() reads (about 35 for a GPT) and ~18 KiB of stack.
 */
static int fe_parse(struct fusefe_ptcache *pc, const struct lun_info *li,
		    struct fe_cached **out)
{
	struct ptable_part parts[PTABLE_MAX_NUMBER];
	struct fe_parse p = {.pc = pc, .li = li};
	struct fe_cached *c;
	unsigned int n = 0, i;
	int ret;

	ret = ptable_parse(fe_parse_read, &p, li->block_size, li->nblocks,
			   parts, PTABLE_MAX_NUMBER, &n);
	if (ret < 0)
		return ret;
	if (n > PTABLE_MAX_NUMBER)
		n = PTABLE_MAX_NUMBER;
	c = malloc(sizeof(*c) + n * sizeof(c->parts[0]));
	if (!c)
		return -ENOMEM;
	c->next = NULL;
	c->lun = li->lun;
	c->gen = li->gen;
	c->nblocks = li->nblocks;
	c->when_ns = fusefe_now_ns();
	c->nranges = p.nranges;
	c->overflow = p.overflow;
	memcpy(c->ranges, p.ranges, sizeof(c->ranges));
	c->n = n;
	for (i = 0; i < n; i++) {
		c->parts[i].start = parts[i].start;
		c->parts[i].nblocks = parts[i].nblocks;
		c->parts[i].number = parts[i].number;
	}
	*out = c;
	return 0;
}

/* Caller holds pc->lock: keep the cache bounded, a bucket at a time. */
static void fe_evict_locked(struct fusefe_ptcache *pc)
{
	struct fe_cached *c;

	while (pc->ncached >= FE_CACHE_MAX) {
		unsigned int b = pc->evict_next++ % FE_CACHE_BUCKETS;

		while ((c = pc->cache[b])) {
			pc->cache[b] = c->next;
			free(c);
			pc->ncached--;
		}
	}
}

static bool fe_fresh(const struct fe_cached *c, const struct lun_info *li,
		     uint64_t now)
{
	return c->gen == li->gen && c->nblocks == li->nblocks &&
	       now - c->when_ns < FE_TABLE_TTL_NS;
}

/*
 * What a parsed table says, copied out under the lock. @from is the lowest
 * partition number wanted; *@out gets the first at or above it.
 * Return: 1 found, 0 none, -errno if the table cannot be read.
 */
static int fe_parsed_find(struct fusefe_ptcache *pc, const struct lun_info *li,
			  unsigned int from, bool exact, struct fe_cpart *out)
{
	struct fe_cached *c, **pp;
	uint64_t now = fusefe_now_ns();
	unsigned int i;
	int ret = 0;

	/* never written: reads as zeros, so no table at all */
	if (!lun_bytes_used(pc->luns, li->lun))
		return 0;
	pthread_mutex_lock(&pc->lock);
	c = *fe_slot(pc, li->lun);
	if (!c || !fe_fresh(c, li, now)) {
		pthread_mutex_unlock(&pc->lock);
		ret = fe_parse(pc, li, &c);
		if (ret)
			return ret;
		pthread_mutex_lock(&pc->lock);
		fe_drop_locked(pc, li->lun);
		fe_evict_locked(pc);
		pp = &pc->cache[fe_bucket(li->lun)];
		c->next = *pp;
		*pp = c;
		pc->ncached++;
	}
	ret = 0;
	for (i = 0; i < c->n; i++) {
		if (c->parts[i].number < from)
			continue;
		if (!exact || c->parts[i].number == from) {
			*out = c->parts[i];
			ret = 1;
		}
		break;
	}
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

/*
 * The window of partition @part of a pinned LUN (0: the disk).
 * Return: 0, -ENOENT (no such partition), -errno of reading the table.
 */
int fusefe_ptcache_window(struct fusefe_ptcache *pc, const struct lun_info *li,
			  unsigned int part, struct fe_win *w)
{
	struct ptable_part pp;
	struct fe_cpart cp;
	int ret;

	if (!part) {
		w->start = 0;
		w->nblocks = li->nblocks;
		return 0;
	}
	if (fe_synthetic(li)) {
		ret = ptable_count(&li->geom);
		if (ret < 0 || part > (unsigned int)ret)
			return -ENOENT;
		if (ptable_layout(&li->geom, part - 1, &pp))
			return -ENOENT;
		w->start = pp.start;
		w->nblocks = pp.nblocks;
		return 0;
	}
	ret = fe_parsed_find(pc, li, part, true, &cp);
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	w->start = cp.start;
	w->nblocks = cp.nblocks;
	return 0;
}

/*
 * The first partition numbered @from or more (@from >= 1).
 * Return: its number, or 0 when there is none (or the table is unreadable).
 */
unsigned int fusefe_ptcache_next_part(struct fusefe_ptcache *pc,
				      const struct lun_info *li,
				      unsigned int from, struct fe_win *w)
{
	struct fe_cpart cp;
	int n;

	if (fe_synthetic(li)) {
		n = ptable_count(&li->geom);
		if (n < 0 || from > (unsigned int)n)
			return 0;
		return fusefe_ptcache_window(pc, li, from, w) ? 0 : from;
	}
	if (fe_parsed_find(pc, li, from, false, &cp) != 1)
		return 0;
	w->start = cp.start;
	w->nblocks = cp.nblocks;
	return cp.number;
}

/*
 * The highest partition number a LUN has now; *@count (optional) gets how
 * many it has (they differ for a parsed GPT with empty slots).
 */
unsigned int fusefe_ptcache_max_part(struct fusefe_ptcache *pc,
				     const struct lun_info *li,
				     unsigned int *count)
{
	struct fe_win w;
	unsigned int n, last = 0, k = 0;
	int c;

	if (fe_synthetic(li)) {
		c = ptable_count(&li->geom);
		last = k = c > 0 ? (unsigned int)c : 0;
	} else {
		for (n = fusefe_ptcache_next_part(pc, li, 1, &w); n;
		     n = n < PTABLE_MAX_NUMBER
				 ? fusefe_ptcache_next_part(pc, li, n + 1, &w)
				 : 0) {
			last = n;
			k++;
		}
	}
	if (count)
		*count = k;
	return last;
}

/* Whether a write of [@lba, @lba + @n) may change what the table says. */
bool fusefe_ptcache_touches_table(struct fusefe_ptcache *pc,
				  const struct lun_info *li, uint64_t lba,
				  uint64_t n)
{
	struct fe_cached *c;
	uint64_t last = lba + n - 1;
	bool hit = false;
	unsigned int i;

	if (!n)
		return false;
	if (lba < FE_GPT_HEAD ||
	    (li->nblocks > FE_GPT_TAIL && last >= li->nblocks - FE_GPT_TAIL))
		return true;
	if (fe_synthetic(li))
		return ptable_range_is_synthetic(&li->geom, lba, n) == 1;
	if (li->geom.kind == PTABLE_NONE && !lun_bytes_used(pc->luns, li->lun))
		return false;
	pthread_mutex_lock(&pc->lock);
	c = *fe_slot(pc, li->lun);
	/* no parse kept (never read, or evicted): the kernel may still hold
	 * partition entries from it, so any write may have changed them */
	hit = !c;
	if (c) {
		hit = c->overflow;
		for (i = 0; i < c->nranges && !hit; i++)
			hit = lba <= c->ranges[i].last &&
			      last >= c->ranges[i].first;
	}
	pthread_mutex_unlock(&pc->lock);
	return hit;
}
