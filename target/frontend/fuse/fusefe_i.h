/* SPDX-License-Identifier: MIT */
/*
 * Inside the FUSE front end: struct fusefe, the state fusefe.c's requests
 * and notifier share, and the cache of parsed partition tables (ptcache.c)
 * that finds a partition file's window. Nothing outside
 * target/frontend/fuse includes this.
 */
#ifndef SDSWARM_FUSEFE_I_H
#define SDSWARM_FUSEFE_I_H

/* Every file of the front end is built against the same libfuse API. */
#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "config.h"
#include "frontend/fuse/fusefe.h"
#include "lun.h"
#include "sdnum.h"
#include "target.h"

struct fault_rule;
struct fault_table;

#define FE_NS 1000000000ull

/* Parsed tables are hashed by LUN into this many buckets (10 bits). */
#define FE_CACHE_BUCKETS 1024u
/* Table rewrites queued for the notifier between two of its passes. */
#define FE_DIRTY_MAX 256u
/* Locks serialising read-modify-write of partial blocks. */
#define FE_STRIPES 64u
/* Invalidations queued for the notifier between two of its passes. */
#define FE_JOBS 1024u
/* READDIRPLUS replies whose files wait to be prefetched (fe_push()). */
#define FE_PENDING 16u

/* Requests counted by opcode (the root's user.sdswarm.requests). */
enum fe_op {
	FE_OP_LOOKUP,
	FE_OP_GETATTR,
	FE_OP_OPEN,
	FE_OP_READ,
	FE_OP_WRITE,
	FE_OP_FLUSH,
	FE_OP_RELEASE,
	FE_OP_READDIR,
	FE_OP_READDIRPLUS,
	FE_OP_OTHER,
	FE_OPS
};

/* One change for the notifier to tell the kernel about. */
struct fe_job {
	enum lun_change_kind kind;
	uint32_t lun;
	uint64_t lba, nblocks; /* LUN_CHANGE_DATA, _FAULT */
	fuse_ino_t skip; /* the writer's own file: the kernel has it */
};

/* A partition's place on its disk, in blocks; part 0 is the whole disk. */
struct fe_win {
	uint64_t start;
	uint64_t nblocks;
};

struct fe_dirty {
	uint32_t lun;
	unsigned int maxnum; /* highest partition number it had */
};

/*
 * The parsed tables of LUNs whose host owns the table, hashed by LUN; the
 * fields are ptcache.c's. @lock is a leaf: never held across a call out
 * of ptcache.c (a parse reads the store without it).
 */
struct fe_cached;
struct fusefe_ptcache {
	struct lun_table *luns;
	pthread_mutex_t lock;
	unsigned int ncached;
	unsigned int evict_next;
	struct fe_cached *cache[FE_CACHE_BUCKETS];
};

struct fusefe {
	struct lun_table *luns;
	struct fault_table *faults;
	struct target *target;
	uint64_t mem_limit; /* the store's space limit in bytes; 0: none */
	uint32_t max_luns;
	const struct sdnum_scheme *scheme;
	struct sdnum_extmap ext;
	unsigned int max_parts; /* most partitions a group's table has */
	char prefix[SDNUM_MAX_PREFIX + 1];
	char mountpoint[CFG_PATH_MAX + 1];
	double timeout;
	bool page; /* [fuse] cache = page */
	struct timespec t0;
	uid_t uid;
	gid_t gid;

	struct fuse_session *se;
	struct fuse_loop_config *loop_cfg;
	pthread_t loop_thread;
	pthread_t notify_thread;
	atomic_bool stopping;
	int loop_ret;

	struct fusefe_ptcache pt;

	pthread_mutex_t notify_lock;
	pthread_cond_t notify_cond;
	unsigned int ndirty;
	bool dirty_overflow;
	struct fe_dirty dirty[FE_DIRTY_MAX];
	/*
	 * Changes heard from the LUN layer. Each one queued bumps posted;
	 * the notifier sets done to the posted count it took before its
	 * pass, and broadcasts done_cond: a writer waits for done >= its
	 * own posted count.
	 */
	unsigned int njobs;
	bool jobs_overflow;
	struct fe_job jobs[FE_JOBS];
	struct fe_job *job_batch; /* the notifier's copy, FE_JOBS */
	uint64_t posted, done;
	pthread_cond_t done_cond;
	int lun_watch_id;
	bool fault_watching;

	/* INIT: what fe_init() found, for fusefe_start() */
	pthread_mutex_t init_lock;
	pthread_cond_t init_cond;
	bool init_done;
	char init_err[160];

	/*
	 * Per LUN: the generation the kernel was last given in an entry
	 * (0: none), to name its node ids in notifications (fe_nodeid()).
	 */
	_Atomic uint32_t *kgen;
	/* LUNs the kernel was given entries of since start (a filter for
	 * data invalidations; a stale bit costs one -ENOENT notify) */
	_Atomic uint64_t *held;
	/* LUNs the kernel may hold data pages of: set before any READ,
	 * write or push of one of its files is served (a data change of a
	 * LUN without it needs no invalidation) */
	_Atomic uint64_t *paged;

	_Atomic uint64_t ops[FE_OPS];
	/* reads, writes, fallocates, fsyncs for stats and metrics */
	struct target_file_stats fstats;
	bool fstats_registered;

	/*
	 * Prefetch: the first @prefetch bytes of each file a READDIRPLUS
	 * listed are pushed into its page cache (notify_store) once the
	 * kernel has made its inode, i.e. when it asks for the next reply.
	 * pending holds the directory offsets [start, end) of replies sent
	 * and not yet pushed; pushed marks LUNs whose files were (cleared by
	 * any change and by FORGET); changes counts every change, so that a
	 * push that raced a write is undone.
	 */
	uint32_t prefetch;
	pthread_mutex_t pend_lock;
	struct {
		uint64_t start, end;
	} pending[FE_PENDING];
	unsigned int pend_next;
	_Atomic uint64_t *pushed;
	_Atomic uint64_t changes;
	/*
	 * LUNs the kernel may hold entries of: the LUNs present at the last
	 * scan, plus any a LOOKUP or READDIRPLUS answered since (so a LUN
	 * added and removed between two scans is still invalidated).
	 */
	_Atomic uint64_t *shadow;
	_Atomic int64_t root_mtime_ns;

	pthread_mutex_t stat_lock;
	uint64_t stat_when_ns;
	uint64_t stat_blocks; /* 512-byte units */
	uint64_t stat_files;

	pthread_mutex_t stripes[FE_STRIPES];
};

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t fusefe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * FE_NS + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in nanoseconds: the root directory's mtime. */
static inline int64_t fusefe_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)FE_NS + ts.tv_nsec;
}

/*
 * A file's FUSE node id: its inode number (FUSEFE_INO, < 2^29) with the
 * LUN's generation in the high 32 bits. With no OPEN there is no handle
 * to carry the generation; in the node id, a request on a file whose LUN
 * was removed (and maybe added again) still says which LUN it meant, and
 * gets ENXIO. The kernel keys its inodes by node id, so the new LUN's
 * files are new inodes, with their own page caches.
 */
static inline fuse_ino_t fusefe_nodeid(uint32_t gen, uint32_t lun,
				       unsigned int part)
{
	return (fuse_ino_t)((uint64_t)gen << 32 | FUSEFE_INO(lun, part));
}

/* The file name of (@lun, @part), e.g. "sdb3". Return: its length. */
static inline int fusefe_name(const struct fusefe *fe, uint32_t lun,
			      unsigned int part, char *buf, size_t len)
{
	return sdnum_name_part(fe->prefix, lun, part, buf, len);
}

/* ---- the notifier (notify.c) ------------------------------------------ */

/*
 * The file a FUSE write of this thread is for, while it writes (0: none):
 * its own pages are the kernel's already, so fusefe_lun_changed() leaves
 * them alone.
 */
extern __thread fuse_ino_t fusefe_writer;

/**
 * fusefe_lun_changed() - lun_watch_add()'s callback: any change of any LUN.
 * @arg: the struct fusefe.
 * @c: the change.
 *
 * Queues what the kernel must forget (pages of the blocks written, in
 * every file they overlap; entries of a LUN added, removed or resized;
 * entries of a rewritten table) and waits for the notifier to have told
 * it, at most FE_INVAL_WAIT_NS. Changes of LUNs the kernel holds nothing
 * of cost two atomic loads.
 * Context: the writer's thread, any front end's; never from the notifier.
 */
void fusefe_lun_changed(void *arg, const struct lun_change *c);

/**
 * fusefe_fault_added() - fault_watch_set()'s callback: a new rule.
 * @arg: the struct fusefe.
 * @r: the rule.
 *
 * A rule that fails reads drops the pages of its range, so that those
 * reads reach the front end (and fail) instead of the page cache.
 * Context: the thread that added the rule.
 */
void fusefe_fault_added(void *arg, const struct fault_rule *r);

/**
 * fusefe_notifier() - the notifier thread: runs the queued jobs, then
 * wakes their writers; once a second compares the LUN bitmap with what
 * the kernel was last shown.
 * @arg: the struct fusefe.
 *
 * Context: its own thread, until fe->stopping is set and notify_cond
 * signalled; it wakes every writer still waiting before it returns.
 * Return: NULL.
 */
void *fusefe_notifier(void *arg);

/* ---- the parsed partition tables (ptcache.c) ---------------------------- */

/**
 * fusefe_ptcache_init() - an empty cache.
 * @pc: the cache (zeroed, as in a calloc()ed struct fusefe).
 * @luns: the LUN table whose stores the tables are read from; must
 *	outlive @pc.
 *
 * Context: before any other thread sees @pc.
 */
void fusefe_ptcache_init(struct fusefe_ptcache *pc, struct lun_table *luns);

/**
 * fusefe_ptcache_fini() - free every parsed table and the lock.
 * @pc: from fusefe_ptcache_init().
 *
 * Context: no other thread uses @pc any more.
 */
void fusefe_ptcache_fini(struct fusefe_ptcache *pc);

/**
 * fusefe_ptcache_drop() - forget LUN @lun's parsed table, if one is kept.
 * @pc: the cache.
 * @lun: the LUN.
 *
 * The next lookup parses the table again from the store.
 * Context: any thread; takes @pc->lock (callers may hold notify_lock).
 * Return: the highest partition number the dropped table had (0: none);
 * -1 when no table of @lun was kept.
 */
int fusefe_ptcache_drop(struct fusefe_ptcache *pc, uint32_t lun);

/**
 * fusefe_ptcache_window() - where partition @part of a LUN lies.
 * @pc: the cache.
 * @li: the LUN, pinned by the caller (lun_get()).
 * @part: the partition number; 0 is the whole disk.
 * @w: out, its first block and length in blocks, only on 0.
 *
 * The synthetic table's layout is computed (O(1)); a table the host owns
 * comes from the cache, parsed again when it is missing, from another
 * generation or size of the LUN, or older than FE_TABLE_TTL_NS (about 35
 * blocks read for a GPT, and ~18 KiB of stack). A LUN never written has
 * no table.
 * Context: FUSE workers and the notifier; takes @pc->lock, not across
 * the reads of a parse.
 * Return: 0; -ENOENT when there is no such partition; the -errno of
 * reading the table (lun_read()) or -ENOMEM for a parse.
 */
int fusefe_ptcache_window(struct fusefe_ptcache *pc, const struct lun_info *li,
			  unsigned int part, struct fe_win *w);

/**
 * fusefe_ptcache_next_part() - the first partition numbered @from or more.
 * @pc: the cache.
 * @li: the LUN, pinned by the caller.
 * @from: the lowest number wanted (inclusive), >= 1.
 * @w: out, the window of the partition found, only when one is.
 *
 * Context: as fusefe_ptcache_window().
 * Return: its number; 0 when there is none or the table cannot be read.
 */
unsigned int fusefe_ptcache_next_part(struct fusefe_ptcache *pc,
				      const struct lun_info *li,
				      unsigned int from, struct fe_win *w);

/**
 * fusefe_ptcache_max_part() - the highest partition number a LUN has now.
 * @pc: the cache.
 * @li: the LUN, pinned by the caller.
 * @count: out (optional), how many partitions it has; less than the
 *	highest number for a parsed GPT with empty slots.
 *
 * Cost: one fusefe_ptcache_next_part() a partition for a parsed table.
 * Context: as fusefe_ptcache_window().
 * Return: the highest number; 0 with no partitions (or no readable table).
 */
unsigned int fusefe_ptcache_max_part(struct fusefe_ptcache *pc,
				     const struct lun_info *li,
				     unsigned int *count);

/**
 * fusefe_ptcache_touches_table() - whether a write may change the table.
 * @pc: the cache.
 * @li: the LUN written, pinned by the caller.
 * @lba: the first block written.
 * @n: how many blocks were written.
 *
 * True for the blocks a GPT may occupy at either end of the disk, for the
 * synthetic table's blocks, and for the blocks the kept parse read; with
 * no parse kept, true for any write to a LUN that may have a table. Reads
 * nothing from the store.
 * Context: any thread (the LUN layer's watcher callback, in the writer's
 * thread); takes @pc->lock.
 * Return: true if blocks [@lba, @lba + @n) may hold the table; false for
 * @n == 0.
 */
bool fusefe_ptcache_touches_table(struct fusefe_ptcache *pc,
				  const struct lun_info *li, uint64_t lba,
				  uint64_t n);

#endif /* SDSWARM_FUSEFE_I_H */
