// SPDX-License-Identifier: MIT
/*
 * The FUSE front end's notifier: what changed below the kernel's caches,
 * told to the kernel. Every change the LUN layer reports (lun_watch_add(),
 * from any path: a FUSE write, iSCSI, TCMU, the control socket) and every
 * new read fault (fault_watch_set()) becomes a job; the writer waits, at
 * most FE_INVAL_WAIT_NS, until the notifier thread has dropped the pages
 * and entries the kernel holds of it (libfuse's notify calls may deadlock
 * from a request's own path, so never there). Rewritten partition tables
 * invalidate their entries; once a second the LUN bitmap is compared
 * with what the kernel was last shown, for LUNs added and removed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "fault.h"
#include "frontend/fuse/fusefe.h"
#include "frontend/fuse/fusefe_i.h"
#include "log.h"
#include "lun.h"
#include "ptable.h"
#include "sdnum.h"

/*
 * How long a writer waits for the notifier to invalidate what it changed.
 * Normally well under a millisecond; it only runs out when the pages to
 * drop are locked by a request that waits for this writer (two writers of
 * the same bytes through a disk and its partition at once), and then the
 * invalidation still happens, just after the writer returns.
 */
#define FE_INVAL_WAIT_NS FE_NS
#define FE_POLL_NS FE_NS /* LUN add/remove scan */

/* Whether the kernel may hold entries of LUN @lun (fe_mark(), fusefe.c). */
static bool fe_held(struct fusefe *fe, uint32_t lun)
{
	return atomic_load(&fe->held[lun / 64]) & (1ull << (lun % 64));
}

/* Whether the kernel may hold data pages of LUN @lun. */
static bool fe_paged(struct fusefe *fe, uint32_t lun)
{
	return atomic_load(&fe->paged[lun / 64]) & (1ull << (lun % 64));
}

/*
 * Queue a LUN whose table blocks were just written: its parse is dropped
 * now, the kernel's entries by the notifier (never from a request's own
 * path, where libfuse says it may deadlock). Caller holds notify_lock.
 */
static void fe_table_dirty_locked(struct fusefe *fe, uint32_t lun)
{
	int maxnum = fusefe_ptcache_drop(&fe->pt, lun);
	unsigned int i;

	for (i = 0; i < fe->ndirty; i++) {
		if (fe->dirty[i].lun == lun)
			break;
	}
	if (i < fe->ndirty) {
		if (maxnum > (int)fe->dirty[i].maxnum)
			fe->dirty[i].maxnum = (unsigned int)maxnum;
	} else if (fe->ndirty < FE_DIRTY_MAX) {
		fe->dirty[fe->ndirty].lun = lun;
		fe->dirty[fe->ndirty].maxnum =
			maxnum > 0 ? (unsigned int)maxnum : 0;
		fe->ndirty++;
	} else {
		fe->dirty_overflow = true;
	}
}

/* The node id the kernel holds for (@lun, @part), if it holds one. */
static fuse_ino_t fe_knode(struct fusefe *fe, uint32_t lun, unsigned int part)
{
	return fusefe_nodeid(
		atomic_load_explicit(&fe->kgen[lun], memory_order_relaxed), lun,
		part);
}

static void fe_inval_parts(struct fusefe *fe, uint32_t lun, unsigned int from,
			   unsigned int to, bool deleted)
{
	char name[SDNUM_NAME_MAX];
	unsigned int p;
	int len;

	for (p = from; p <= to; p++) {
		len = fusefe_name(fe, lun, p, name, sizeof(name));
		if (len < 0)
			continue;
		/* -ENOENT: the kernel had nothing cached; that is fine */
		if (deleted)
			fuse_lowlevel_notify_delete(fe->se, FUSEFE_ROOT_INO,
						    fe_knode(fe, lun, p), name,
						    (size_t)len);
		else
			fuse_lowlevel_notify_inval_entry(
				fe->se, FUSEFE_ROOT_INO, name, (size_t)len);
		/* an open file keeps its inode: its pages must go too */
		fuse_lowlevel_notify_inval_inode(fe->se, fe_knode(fe, lun, p),
						 fe->page ? 0 : -1, 0);
	}
}

/* The highest partition number to invalidate for LUN @lun. */
static unsigned int fe_top(struct fusefe *fe, uint32_t lun, int maxnum)
{
	struct lun_info li;
	unsigned int top = fe->max_parts, now;

	if (maxnum > (int)top)
		top = (unsigned int)maxnum;
	if (!lun_get(fe->luns, lun, &li)) {
		now = fusefe_ptcache_max_part(&fe->pt, &li, NULL);
		if (now > top)
			top = now;
		lun_put(fe->luns, &li);
	}
	return top;
}

/*
 * Drop the kernel's pages of blocks [@lba, @lba + @n) of LUN @lun in
 * every file they overlap, but @skip (the writer's own file: the kernel
 * already holds what it wrote). Cost: one notify for the disk and one per
 * partition it overlaps; the table walk is computed or cached.
 */
static void fe_inval_data(struct fusefe *fe, uint32_t lun, uint64_t lba,
			  uint64_t n, fuse_ino_t skip)
{
	struct lun_info li;
	struct fe_win w;
	unsigned int p;
	uint64_t a, b;
	uint32_t bs;

	if (lun_get(fe->luns, lun, &li))
		return; /* removed: its own job drops everything */
	bs = li.block_size;
	if (lba >= li.nblocks || !n)
		goto out_put;
	if (n > li.nblocks - lba)
		n = li.nblocks - lba;
	if (fusefe_nodeid(li.gen, lun, 0) != skip)
		fuse_lowlevel_notify_inval_inode(
			fe->se, fusefe_nodeid(li.gen, lun, 0),
			(off_t)(lba * bs), (off_t)(n * bs));
	for (p = fusefe_ptcache_next_part(&fe->pt, &li, 1, &w); p;
	     p = p < PTABLE_MAX_NUMBER
			 ? fusefe_ptcache_next_part(&fe->pt, &li, p + 1, &w)
			 : 0) {
		a = lba > w.start ? lba : w.start;
		b = lba + n < w.start + w.nblocks ? lba + n
						  : w.start + w.nblocks;
		if (a >= b || fusefe_nodeid(li.gen, lun, p) == skip)
			continue;
		fuse_lowlevel_notify_inval_inode(
			fe->se, fusefe_nodeid(li.gen, lun, p),
			(off_t)((a - w.start) * bs), (off_t)((b - a) * bs));
	}
out_put:
	lun_put(fe->luns, &li);
}

/* The directory's entries changed: its mtime and the kernel's copy. */
static void fe_root_changed(struct fusefe *fe)
{
	atomic_store(&fe->root_mtime_ns, fusefe_realtime_ns());
	fuse_lowlevel_notify_inval_inode(fe->se, FUSEFE_ROOT_INO, -1, 0);
}

static void fe_notify_gone(struct fusefe *fe, uint32_t lun);

static void fe_run_job(struct fusefe *fe, const struct fe_job *j)
{
	unsigned int p, top;

	switch (j->kind) {
	case LUN_CHANGE_DATA:
	case LUN_CHANGE_FAULT:
		fe_inval_data(fe, j->lun, j->lba, j->nblocks, j->skip);
		break;
	case LUN_CHANGE_SIZE:
		/* the synthetic table follows the size: names may change */
		top = fe_top(fe, j->lun, fusefe_ptcache_drop(&fe->pt, j->lun));
		fe_inval_parts(fe, j->lun, 0, top, false);
		break;
	case LUN_CHANGE_STATE:
		/* an offline LUN's reads fail: none may come from a cache */
		top = fe_top(fe, j->lun, -1);
		for (p = 0; p <= top; p++)
			fuse_lowlevel_notify_inval_inode(
				fe->se, fe_knode(fe, j->lun, p),
				fe->page ? 0 : -1, 0);
		break;
	case LUN_CHANGE_ADDED:
		/* negative entries of its names the kernel may hold */
		top = fe_top(fe, j->lun, fusefe_ptcache_drop(&fe->pt, j->lun));
		fe_inval_parts(fe, j->lun, 0, top, false);
		fe_root_changed(fe);
		break;
	case LUN_CHANGE_REMOVED:
		fe_notify_gone(fe, j->lun);
		fe_root_changed(fe);
		break;
	}
}

/* The job queue overflowed: every file of every LUN the kernel holds. */
static void fe_run_all(struct fusefe *fe)
{
	uint32_t l;

	for (l = 0; l < fe->max_luns; l++) {
		if (atomic_load(&fe->stopping))
			return;
		if (!fe_held(fe, l))
			continue;
		fe_inval_parts(fe, l, 0,
			       fe_top(fe, l, fusefe_ptcache_drop(&fe->pt, l)),
			       !lun_exists(fe->luns, l));
	}
	fe_root_changed(fe);
}

/*
 * Queue @j (if @j) and a table rewrite of @table_lun (if @table), then
 * wait for the notifier to have told the kernel, at most FE_INVAL_WAIT_NS.
 */
static void fe_post(struct fusefe *fe, const struct fe_job *j, bool table,
		    uint32_t table_lun)
{
	struct timespec ts;
	uint64_t my, end;

	pthread_mutex_lock(&fe->notify_lock);
	if (table)
		fe_table_dirty_locked(fe, table_lun);
	if (j) {
		if (fe->njobs < FE_JOBS)
			fe->jobs[fe->njobs++] = *j;
		else
			fe->jobs_overflow = true;
	}
	my = ++fe->posted;
	pthread_cond_signal(&fe->notify_cond);
	end = fusefe_now_ns() + FE_INVAL_WAIT_NS;
	ts.tv_sec = (time_t)(end / FE_NS);
	ts.tv_nsec = (long)(end % FE_NS);
	while (fe->done < my && !atomic_load(&fe->stopping)) {
		if (pthread_cond_timedwait(&fe->done_cond, &fe->notify_lock,
					   &ts) == ETIMEDOUT) {
			log_lun_debug(
				j ? j->lun : table_lun,
				"fuse: invalidation still running after 1 s; the writer goes on");
			break;
		}
	}
	pthread_mutex_unlock(&fe->notify_lock);
}

/* The file a FUSE write of this thread is for (0: none). */
__thread fuse_ino_t fusefe_writer;

/* lun_watch_add()'s callback: any change, from any path. */
void fusefe_lun_changed(void *arg, const struct lun_change *c)
{
	struct fusefe *fe = arg;
	struct fe_job j = {.kind = c->kind, .lun = c->lun_first};
	struct lun_info li;
	bool table = false;
	uint32_t l;

	/* seq_cst: a prefetch that read the store before this sees it */
	atomic_fetch_add(&fe->changes, 1);
	if (fe->prefetch)
		for (l = c->lun_first; l <= c->lun_last && l < fe->max_luns;
		     l++) {
			atomic_fetch_and(&fe->pushed[l / 64],
					 ~(1ull << (l % 64)));
			if (l == UINT32_MAX)
				break;
		}

	switch (c->kind) {
	case LUN_CHANGE_DATA:
		if (!fe_held(fe, c->lun_first))
			return; /* the kernel holds nothing of this LUN */
		if (!lun_get(fe->luns, c->lun_first, &li)) {
			table = fusefe_ptcache_touches_table(
				&fe->pt, &li, c->lba, c->nblocks);
			lun_put(fe->luns, &li);
		}
		if (!fe->page || !fe_paged(fe, c->lun_first)) {
			if (table)
				fe_post(fe, NULL, true, c->lun_first);
			return;
		}
		j.lba = c->lba;
		j.nblocks = c->nblocks;
		j.skip = fusefe_writer;
		fe_post(fe, &j, table, c->lun_first);
		return;
	case LUN_CHANGE_FAULT:
		if (!fe->page)
			return;
		j.lba = c->lba;
		j.nblocks = c->nblocks;
		pthread_mutex_lock(&fe->notify_lock);
		for (l = c->lun_first; l <= c->lun_last && l < fe->max_luns;
		     l++) {
			if (!fe_paged(fe, l))
				continue;
			j.lun = l;
			if (fe->njobs < FE_JOBS)
				fe->jobs[fe->njobs++] = j;
			else
				fe->jobs_overflow = true;
			if (l == UINT32_MAX)
				break;
		}
		pthread_mutex_unlock(&fe->notify_lock);
		fe_post(fe, NULL, false, c->lun_first);
		return;
	case LUN_CHANGE_ADDED:
	case LUN_CHANGE_REMOVED:
	case LUN_CHANGE_SIZE:
	case LUN_CHANGE_STATE:
		if (c->kind != LUN_CHANGE_ADDED && !fe_held(fe, c->lun_first))
			return;
		/* a state change drops pages only */
		if (c->kind == LUN_CHANGE_STATE &&
		    (!fe->page || !fe_paged(fe, c->lun_first)))
			return;
		fe_post(fe, &j, false, 0);
		return;
	}
}

/* fault_watch_set()'s callback: reads of the rule's range must reach us. */
void fusefe_fault_added(void *arg, const struct fault_rule *r)
{
	struct fusefe *fe = arg;
	struct lun_change c = {
		.kind = LUN_CHANGE_FAULT,
		.lun_first = r->lun_first,
		.lun_last = r->lun_last,
		.lba = r->lba_first,
		.nblocks = r->lba_last == UINT64_MAX
				   ? UINT64_MAX
				   : r->lba_last - r->lba_first + 1,
	};

	if (r->kind == FAULT_UA || !(r->ops & FAULT_OP_READ))
		return;
	fusefe_lun_changed(fe, &c);
}

/* A table was rewritten: partitions may have come, gone or moved. */
static void fe_notify_table(struct fusefe *fe, const struct fe_dirty *d)
{
	struct lun_info li;
	unsigned int top = d->maxnum;

	if (top < fe->max_parts)
		top = fe->max_parts;
	if (!lun_get(fe->luns, d->lun, &li)) {
		unsigned int now = fusefe_ptcache_max_part(&fe->pt, &li, NULL);

		if (now > top)
			top = now;
		lun_put(fe->luns, &li);
	}
	fe_inval_parts(fe, d->lun, 1, top, false);
}

static void fe_notify_gone(struct fusefe *fe, uint32_t lun)
{
	int maxnum = fusefe_ptcache_drop(&fe->pt, lun);
	unsigned int top = fe->max_parts;

	if (maxnum > (int)top)
		top = (unsigned int)maxnum;
	fe_inval_parts(fe, lun, 0, top, true);
}

/* The notifier's pass over what the LUN layer told it. */
static void fe_run_jobs(struct fusefe *fe, const struct fe_job *jobs,
			unsigned int n, bool all)
{
	unsigned int i;

	if (all) {
		fe_run_all(fe);
		return;
	}
	for (i = 0; i < n; i++)
		fe_run_job(fe, &jobs[i]);
}

/*
 * Compare the LUN bitmap with what the kernel was last shown. Cost:
 * O(max_luns / 64 + present LUNs) lun_find() calls, about 1 ms at 262,144
 * LUNs, once a second.
 */
static void fe_scan(struct fusefe *fe)
{
	uint32_t words = (fe->max_luns + 63) / 64, w, base;
	uint64_t cur, old, bits;
	bool changed = false;
	int l;

	for (w = 0; w < words; w++) {
		base = w * 64;
		cur = 0;
		lun_for_each(fe->luns, l, base, base + 63)
			cur |= 1ull << ((uint32_t)l - base);
		if (atomic_load_explicit(&fe->shadow[w],
					 memory_order_relaxed) == cur)
			continue;
		/* a bit a lookup sets from here on stays for the next scan */
		old = atomic_exchange(&fe->shadow[w], cur);
		changed = true;
		for (bits = old & ~cur; bits; bits &= bits - 1)
			fe_notify_gone(fe,
				       base + (uint32_t)__builtin_ctzll(bits));
		for (bits = cur & ~old; bits; bits &= bits - 1)
			fusefe_ptcache_drop(
				&fe->pt,
				base + (uint32_t)__builtin_ctzll(bits));
	}
	if (changed) {
		atomic_store(&fe->root_mtime_ns, fusefe_realtime_ns());
		fuse_lowlevel_notify_inval_inode(fe->se, FUSEFE_ROOT_INO, -1,
						 0);
	}
}

/* The dirty queue overflowed: every partition entry of every LUN. */
static void fe_notify_all(struct fusefe *fe)
{
	struct fe_dirty d = {.maxnum = PTABLE_MAX_NUMBER};
	int l;

	lun_for_each(fe->luns, l, 0, fe->max_luns - 1) {
		if (atomic_load(&fe->stopping))
			return;
		d.lun = (uint32_t)l;
		fusefe_ptcache_drop(&fe->pt, d.lun);
		fe_notify_table(fe, &d);
	}
}

void *fusefe_notifier(void *arg)
{
	struct fusefe *fe = arg;
	struct fe_dirty batch[FE_DIRTY_MAX];
	struct fe_job *jobs = fe->job_batch;
	uint64_t next = fusefe_now_ns() + FE_POLL_NS, upto;
	struct timespec ts;
	unsigned int n, i, nj;
	bool all, jall;

	pthread_mutex_lock(&fe->notify_lock);
	while (!atomic_load(&fe->stopping)) {
		if (!fe->ndirty && !fe->dirty_overflow && !fe->njobs &&
		    !fe->jobs_overflow && fe->done == fe->posted &&
		    fusefe_now_ns() < next) {
			ts.tv_sec = (time_t)(next / FE_NS);
			ts.tv_nsec = (long)(next % FE_NS);
			pthread_cond_timedwait(&fe->notify_cond,
					       &fe->notify_lock, &ts);
			continue;
		}
		n = fe->ndirty;
		memcpy(batch, fe->dirty, n * sizeof(batch[0]));
		all = fe->dirty_overflow;
		fe->ndirty = 0;
		fe->dirty_overflow = false;
		nj = fe->njobs;
		memcpy(jobs, fe->jobs, nj * sizeof(jobs[0]));
		jall = fe->jobs_overflow;
		fe->njobs = 0;
		fe->jobs_overflow = false;
		upto = fe->posted;
		pthread_mutex_unlock(&fe->notify_lock);

		if (all)
			fe_notify_all(fe);
		else
			for (i = 0; i < n; i++)
				fe_notify_table(fe, &batch[i]);
		fe_run_jobs(fe, jobs, nj, jall);
		pthread_mutex_lock(&fe->notify_lock);
		fe->done = upto;
		pthread_cond_broadcast(&fe->done_cond);
		pthread_mutex_unlock(&fe->notify_lock);
		if (fusefe_now_ns() >= next) {
			fe_scan(fe);
			next = fusefe_now_ns() + FE_POLL_NS;
		}
		pthread_mutex_lock(&fe->notify_lock);
	}
	/* wake any writer still waiting: nothing more will be done */
	pthread_cond_broadcast(&fe->done_cond);
	pthread_mutex_unlock(&fe->notify_lock);
	return NULL;
}
