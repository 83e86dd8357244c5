// SPDX-License-Identifier: MIT
/*
 * The FUSE front end (libfuse 3 low-level API). Nothing is kept per name:
 * LOOKUP parses the name, READDIR walks the LUN bitmap, inode numbers and
 * directory offsets are functions of (LUN, partition). A partition file is
 * a window onto its disk, found in the synthetic table (computed, O(1)) or,
 * once the host owns the table, in a small cache of parsed tables
 * (ptcache.c). I/O goes to lun.h's block calls; byte ranges that do not
 * cover whole blocks are read-modify-written through a per-thread bounce
 * buffer.
 *
 * Two cache modes ([fuse] cache). "page" (the default) keeps each file's
 * data in the kernel's page cache, one cache per file as /dev/sda and
 * /dev/sda1 have, with no OPEN or RELEASE (FUSE_NO_OPEN_SUPPORT); every
 * change that reaches the LUN layer by any path (another file of the same
 * disk, iSCSI, TCMU, the control socket, a fault rule) is heard through
 * lun_watch_add() and invalidated in every other file it overlaps before
 * the writer is told it is done (the notifier, notify.c). "direct" sends
 * every read and write as a request (direct_io), and opens and releases
 * each file.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "config.h"
#include "fault.h"
#include "frontend/fuse/fusefe.h"
#include "frontend/fuse/fusefe_i.h"
#include "log.h"
#include "lun.h"
#include "ptable.h"
#include "scsi/scsi.h"
#include "sdnum.h"
#include "target.h"

#define FE_FUSE_MAGIC 0x65735546 /* FUSE_SUPER_MAGIC */
#define FE_PART_BITS 8
#define FE_PART_MASK ((1u << FE_PART_BITS) - 1)
#define FE_DIR_BASE 3 /* directory offset of (LUN 0, disk) */
#define FE_TICK_NS (FE_NS / 10) /* hang/delay slices; stop latency */
#define FE_STOP_ABORT_NS (5 * FE_NS)
#define FE_WAKE_SIGNAL (SIGRTMIN + 5)

/* How long fusefe_start() waits for the kernel's INIT. */
#define FE_INIT_WAIT_NS (10 * FE_NS)
/* Negative entries of names that may appear later (an absent LUN, a
 * missing partition) are kept this long at most: the scan's period. */
#define FE_NEG_MAYBE_S 1.0

static const char *const fe_op_names[FE_OPS] = {
	[FE_OP_LOOKUP] = "lookup",
	[FE_OP_GETATTR] = "getattr",
	[FE_OP_OPEN] = "open",
	[FE_OP_READ] = "read",
	[FE_OP_WRITE] = "write",
	[FE_OP_FLUSH] = "flush",
	[FE_OP_RELEASE] = "release",
	[FE_OP_READDIR] = "readdir",
	[FE_OP_READDIRPLUS] = "readdirplus",
	[FE_OP_OTHER] = "other",
};
/* ---- small helpers ------------------------------------------------------ */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / FE_NS),
			      .tv_nsec = (long)(ns % FE_NS)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The errno a file operation reports for a LUN layer error. */
static int fe_errno(int ret)
{
	switch (ret) {
	case -ENOMEDIUM:
	case -EIO:
	case -ENOSPC:
	case -EROFS:
	case -ENOMEM:
	case -EFBIG:
	case -EINTR:
	case -ENXIO:
	case -ENOENT:
	case -EMFILE:
		return -ret;
	default:
		return EIO;
	}
}

static bool fe_ino_decode(const struct fusefe *fe, fuse_ino_t ino,
			  uint32_t *lun, unsigned int *part)
{
	uint64_t x = (uint64_t)ino & 0xffffffffu;

	if (x < 2)
		return false;
	x -= 2;
	if ((x >> FE_PART_BITS) >= fe->max_luns)
		return false;
	*lun = (uint32_t)(x >> FE_PART_BITS);
	*part = (unsigned int)(x & FE_PART_MASK);
	return true;
}

/* A data request arrives: in flight until fe_done(). Return: now. */
static uint64_t fe_begin(struct fusefe *fe)
{
	/* relaxed: a gauge for `sdswarm sessions`, ordered with nothing */
	atomic_fetch_add_explicit(&fe->fstats.inflight, 1,
				  memory_order_relaxed);
	return fusefe_now_ns();
}

/* One answered data request, for `sdswarm stats` (@t0: its arrival). */
static void fe_done(struct fusefe *fe, enum target_file_op op, uint64_t t0,
		    uint64_t bytes, bool error)
{
	target_file_record(&fe->fstats, op, error ? 0 : bytes, error,
			   fusefe_now_ns() - t0);
	atomic_fetch_sub_explicit(&fe->fstats.inflight, 1,
				  memory_order_relaxed);
}

static void fe_count(struct fusefe *fe, enum fe_op op)
{
	/* relaxed: a statistic, read only as a whole now and then */
	atomic_fetch_add_explicit(&fe->ops[op], 1, memory_order_relaxed);
}

/* Per-thread scratch memory: bounce buffers and readdir replies. */
static pthread_key_t fe_scratch_key;
static pthread_once_t fe_once = PTHREAD_ONCE_INIT;

struct fe_scratch {
	void *p;
	size_t cap;
};

static void fe_scratch_free(void *arg)
{
	struct fe_scratch *s = arg;

	free(s->p);
	free(s);
}

static void fe_wake_handler(int sig)
{
	(void)sig; /* only here to make sem_wait() in the loop return */
}

static void fe_once_init(void)
{
	struct sigaction sa;

	if (pthread_key_create(&fe_scratch_key, fe_scratch_free))
		abort();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fe_wake_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(FE_WAKE_SIGNAL, &sa, NULL);
}

/* A buffer of at least @len bytes owned by the calling thread, or NULL. */
static void *fe_scratch(size_t len)
{
	struct fe_scratch *s = pthread_getspecific(fe_scratch_key);
	void *p;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		if (pthread_setspecific(fe_scratch_key, s)) {
			free(s);
			return NULL;
		}
	}
	if (s->cap < len) {
		/* round up: the sizes the kernel sends repeat */
		size_t cap = (len + 65535) & ~(size_t)65535;

		p = malloc(cap);
		if (!p)
			return NULL;
		free(s->p);
		s->p = p;
		s->cap = cap;
	}
	return s->p;
}

/* ---- partition tables ---------------------------------------------------- */

/* Pin LUN @lun and find partition @part. Pair with lun_put() on 0. */
static int fe_pin(struct fusefe *fe, uint32_t lun, unsigned int part,
		  struct lun_info *li, struct fe_win *w)
{
	int ret;

	if (lun >= fe->max_luns || lun_get(fe->luns, lun, li))
		return -ENOENT;
	ret = fusefe_ptcache_window(&fe->pt, li, part, w);
	if (ret) {
		lun_put(fe->luns, li);
		return ret;
	}
	return 0;
}

/* Direct mode's handles: FE_FH_GEN | the LUN generation at OPEN. */
#define FE_FH_GEN (1ull << 32)

/* fe_pin() by inode number, checking an open file's LUN generation. */
static int fe_pin_ino(struct fusefe *fe, fuse_ino_t ino,
		      const struct fuse_file_info *fi, struct lun_info *li,
		      struct fe_win *w, unsigned int *part)
{
	uint32_t lun;
	int ret;

	*part = 0;
	if (!fe_ino_decode(fe, ino, &lun, part))
		return -ENOENT;
	ret = fe_pin(fe, lun, *part, li, w);
	if (ret)
		return fi ? -ENXIO : ret;
	if ((uint32_t)((uint64_t)ino >> 32) != li->gen ||
	    (fi && (fi->fh & FE_FH_GEN) && (uint32_t)fi->fh != li->gen)) {
		/* the LUN was removed (and maybe added again) since the
		 * kernel made this inode, or since the file was opened */
		lun_put(fe->luns, li);
		return fi ? -ENXIO : -ENOENT;
	}
	return 0;
}

/* The kernel is about to hold an entry of LUN @lun, generation @gen. */
static void fe_mark(struct fusefe *fe, uint32_t lun, uint32_t gen)
{
	uint64_t bit = 1ull << (lun % 64);
	_Atomic uint64_t *word = &fe->shadow[lun / 64];
	_Atomic uint64_t *held = &fe->held[lun / 64];

	/* relaxed: the scan's exchange orders what matters */
	if (!(atomic_load_explicit(word, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
	/* seq_cst: a writer that changes the LUN after this must see it */
	if (!(atomic_load(held) & bit))
		atomic_fetch_or(held, bit);
	/* relaxed: only the notifier reads it, to name node ids */
	if (atomic_load_explicit(&fe->kgen[lun], memory_order_relaxed) != gen)
		atomic_store_explicit(&fe->kgen[lun], gen,
				      memory_order_relaxed);
}

/*
 * The kernel is about to hold pages of LUN @lun. seq_cst, before the
 * store is read: a writer that does not see the bit wrote before the read.
 */
static void fe_mark_paged(struct fusefe *fe, uint32_t lun)
{
	uint64_t bit = 1ull << (lun % 64);

	if (fe->page && !(atomic_load(&fe->paged[lun / 64]) & bit))
		atomic_fetch_or(&fe->paged[lun / 64], bit);
}

/* ---- faults ------------------------------------------------------------- */

/*
 * Sleep up to @ns in slices, giving up when the request is interrupted or
 * the front end stops; with @id, also ends (0) when rule @id is gone.
 * Return: 0 slept (or the rule went away), -EINTR, -EIO (stopping, or
 * the hang timed out).
 */
static int fe_hold(struct fusefe *fe, fuse_req_t req, uint64_t ns, bool hang,
		   uint32_t id)
{
	uint64_t end = fusefe_now_ns() + ns, now;
	bool watch = hang && fault_exists(fe->faults, id);

	for (;;) {
		now = fusefe_now_ns();
		if (now >= end)
			return hang ? -EIO : 0;
		sleep_ns(end - now < FE_TICK_NS ? end - now : FE_TICK_NS);
		if (fuse_req_interrupted(req))
			return -EINTR;
		if (atomic_load(&fe->stopping))
			return -EIO;
		if (watch && !fault_exists(fe->faults, id))
			return 0;
	}
}

/*
 * The fault rules, as for a SCSI command on the same blocks: medium errors
 * are EIO, not-ready is ENOMEDIUM, a delay sleeps, a hang holds the
 * request until its rule is cleared (then it goes ahead) or
 * FUSEFE_HANG_TIMEOUT_S passes (EIO). A one-shot hang whose rule is gone
 * once it fired holds for the whole timeout. Unit attention rules have
 * nothing to say to a file and are passed over (their hit still counts).
 */
static int fe_faults(struct fusefe *fe, fuse_req_t req, uint32_t lun,
		     uint64_t lba, uint64_t n, unsigned int op)
{
	struct fault_hit hit;
	uint64_t ns;

	if (!fault_check(fe->faults, lun, lba, n, op, &hit))
		return 0;
	switch (hit.kind) {
	case FAULT_MEDIUM_READ:
	case FAULT_MEDIUM_WRITE:
		return -EIO;
	case FAULT_NOT_READY:
		return -ENOMEDIUM;
	case FAULT_DELAY:
		ns = hit.delay_ns;
		if (ns > FUSEFE_DELAY_MAX_S * FE_NS)
			ns = FUSEFE_DELAY_MAX_S * FE_NS;
		return fe_hold(fe, req, ns, false, 0);
	case FAULT_HANG:
		return fe_hold(fe, req, FUSEFE_HANG_TIMEOUT_S * FE_NS, true,
			       hit.id);
	default:
		return 0;
	}
}

/* ---- attributes --------------------------------------------------------- */

static void fe_ts(struct timespec *ts, int64_t ns)
{
	ts->tv_sec = (time_t)(ns / (int64_t)FE_NS);
	ts->tv_nsec = (long)(ns % (int64_t)FE_NS);
}

static void fe_root_attr(struct fusefe *fe, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSEFE_ROOT_INO;
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_uid = fe->uid;
	st->st_gid = fe->gid;
	st->st_blksize = 4096;
	st->st_atim = fe->t0;
	st->st_ctim = fe->t0;
	fe_ts(&st->st_mtim, atomic_load(&fe->root_mtime_ns));
}

/*
 * A disk or partition file. st_blocks is the store's usage of the whole
 * LUN for the disk (its thin allocation) and 0 for a partition, whose
 * share the store does not track.
 */
static void fe_file_attr(struct fusefe *fe, const struct lun_info *li,
			 unsigned int part, const struct fe_win *w,
			 struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSEFE_INO(li->lun, part);
	st->st_mode = S_IFREG | 0660;
	st->st_nlink = 1;
	st->st_uid = fe->uid;
	st->st_gid = fe->gid;
	st->st_size = (off_t)(w->nblocks * li->block_size);
	st->st_blksize = (blksize_t)li->block_size;
	st->st_blocks =
		part ? 0 : (blkcnt_t)(lun_bytes_used(fe->luns, li->lun) / 512);
	st->st_atim = fe->t0;
	st->st_mtim = fe->t0;
	st->st_ctim = fe->t0;
}

static void fe_entry(struct fusefe *fe, const struct lun_info *li,
		     unsigned int part, const struct fe_win *w,
		     struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = fusefe_nodeid(li->gen, li->lun, part);
	e->generation = li->gen;
	e->attr_timeout = fe->timeout;
	e->entry_timeout = fe->timeout;
	fe_file_attr(fe, li, part, w, &e->attr);
}

/* ---- directory and attribute operations -------------------------------- */

/*
 * What the kernel offers. Page cache needs FUSE_NO_OPEN_SUPPORT (no OPEN:
 * Linux 3.14) and is refused without it, never served some other way;
 * READDIRPLUS is asked for always, not AUTO (which sends only the first
 * few hundred entries of a listing as READDIRPLUS, so a cold pass would
 * still LOOKUP every name). fusefe_start() waits for this.
 */
static void fe_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fusefe *fe = userdata;

	pthread_mutex_lock(&fe->init_lock);
	if (fe->page && !(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT))
		snprintf(
			fe->init_err, sizeof(fe->init_err),
			"[fuse] cache = page needs the kernel's FUSE_NO_OPEN_SUPPORT (Linux 3.14 or later), which this kernel does not offer; use cache = direct");
	/* O_TRUNC on a disk means nothing (as on a block device) */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	}
	/*
	 * The data is served from plain buffers (nothing to splice); writes
	 * go through at once (no writeback cache: a write must reach the
	 * store before it returns, for the other paths to see it); pages
	 * are dropped when they change, not when an mtime moves.
	 */
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE | FUSE_CAP_WRITEBACK_CACHE |
			FUSE_CAP_AUTO_INVAL_DATA);
	fe->init_done = true;
	pthread_cond_broadcast(&fe->init_cond);
	pthread_mutex_unlock(&fe->init_lock);
}

static void fe_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct fuse_entry_param e;
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint32_t index;

	fe_count(fe, FE_OP_LOOKUP);
	if (parent != FUSEFE_ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/*
	 * The name is the whole key: a parse, then one LUN pin. A name that
	 * can never exist (not a disk or partition name, a disk past
	 * max_luns, a partition past the most a table holds) is a negative
	 * entry for as long as names are kept; one that may appear (a LUN
	 * added, a table rewritten) only for FE_NEG_MAYBE_S, since an
	 * invalidation can overtake a negative reply still on its way.
	 */
	if (sdnum_parse_len(fe->prefix, name, strlen(name), &index, &part) ||
	    index >= fe->max_luns || part > PTABLE_MAX_NUMBER) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fe->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (fe_pin(fe, index, part, &li, &w)) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fe->timeout < FE_NEG_MAYBE_S ? fe->timeout
							       : FE_NEG_MAYBE_S;
		fuse_reply_entry(req, &e);
		return;
	}
	fe_entry(fe, &li, part, &w, &e);
	fe_mark(fe, index, li.gen);
	lun_put(fe->luns, &li);
	fuse_reply_entry(req, &e);
}

static void fe_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	struct stat st;
	unsigned int part;
	int ret;

	(void)fi;
	fe_count(fe, FE_OP_GETATTR);
	if (ino == FUSEFE_ROOT_INO) {
		fe_root_attr(fe, &st);
		fuse_reply_attr(req, &st, fe->timeout);
		return;
	}
	ret = fe_pin_ino(fe, ino, NULL, &li, &w, &part);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fe_file_attr(fe, &li, part, &w, &st);
	lun_put(fe->luns, &li);
	fuse_reply_attr(req, &st, fe->timeout);
}

/*
 * Disks do not change size, owner or mode through the file system: a size
 * other than the current one is EINVAL (ftruncate() on a block device),
 * mode and owner EPERM; times are accepted and not kept.
 */
static void fe_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	struct stat st;
	unsigned int part;
	int ret;

	if (to_set &
	    (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (ino == FUSEFE_ROOT_INO) {
		if (to_set & FUSE_SET_ATTR_SIZE) {
			fuse_reply_err(req, EISDIR);
			return;
		}
		fe_root_attr(fe, &st);
		fuse_reply_attr(req, &st, fe->timeout);
		return;
	}
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fe_file_attr(fe, &li, part, &w, &st);
	lun_put(fe->luns, &li);
	if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size != st.st_size) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_attr(req, &st, fe->timeout);
}

/* Forget the LUN's push: the kernel dropped one of its inodes (and so its
 * pages), or the LUN changed. */
static void fe_unpush(struct fusefe *fe, fuse_ino_t ino)
{
	uint32_t lun;
	unsigned int part;

	if (fe->prefetch && fe_ino_decode(fe, ino, &lun, &part))
		atomic_fetch_and(&fe->pushed[lun / 64], ~(1ull << (lun % 64)));
}

static void fe_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)nlookup;
	fe_unpush(fuse_req_userdata(req), ino);
	fuse_reply_none(req);
}

static void fe_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct fusefe *fe = fuse_req_userdata(req);
	size_t i;

	for (i = 0; i < count; i++)
		fe_unpush(fe, forgets[i].ino);
	fuse_reply_none(req);
}

static int fe_read_blocks(struct fusefe *fe, const struct lun_info *li,
			  uint64_t lba, uint32_t n, void *buf);

/* Push the head of file (@li, @part, @w) into the kernel's page cache. */
static void fe_push_one(struct fusefe *fe, const struct lun_info *li,
			unsigned int part, const struct fe_win *w, char *buf)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	uint64_t bytes = w->nblocks * li->block_size, c0;
	uint32_t n;

	if (bytes > fe->prefetch)
		bytes = fe->prefetch;
	n = (uint32_t)(bytes / li->block_size);
	if (!n)
		return;
	fe_mark_paged(fe, li->lun);
	c0 = atomic_load(&fe->changes);
	if (fe_read_blocks(fe, li, w->start, n, buf))
		return;
	bv.buf[0].mem = buf;
	bv.buf[0].size = (size_t)n * li->block_size;
	fuse_lowlevel_notify_store(
		fe->se, fusefe_nodeid(li->gen, li->lun, part), 0, &bv, 0);
	/* a change since the read may have been invalidated before the
	 * store landed: take the pushed copy back */
	if (atomic_load(&fe->changes) != c0)
		fuse_lowlevel_notify_inval_inode(
			fe->se, fusefe_nodeid(li->gen, li->lun, part), 0,
			(off_t)bv.buf[0].size);
}

/*
 * The kernel asks for the reply after offset @off: it has made the inodes
 * of the reply that ended there. Push the heads of their files, unless
 * their LUN's were pushed already. Cost: one store read and one
 * notify_store (a copy into a new page) a file.
 */
static void fe_push(struct fusefe *fe, uint64_t off)
{
	uint64_t start = 0, pos, end = 0;
	uint32_t lun, last;
	unsigned int i, part;
	struct lun_info li;
	struct fe_win w;
	bool found = false;
	char *buf;
	int l;

	pthread_mutex_lock(&fe->pend_lock);
	for (i = 0; i < FE_PENDING; i++) {
		if (fe->pending[i].end == off && off) {
			start = fe->pending[i].start;
			end = fe->pending[i].end;
			fe->pending[i].end = 0;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&fe->pend_lock);
	if (!found || end <= FE_DIR_BASE)
		return;
	if (start < FE_DIR_BASE)
		start = FE_DIR_BASE;
	/* malloc: the thread's scratch holds the reply being built */
	buf = malloc(fe->prefetch);
	if (!buf)
		return;
	lun = (uint32_t)((start - FE_DIR_BASE) >> FE_PART_BITS);
	last = (uint32_t)((end - 1 - FE_DIR_BASE) >> FE_PART_BITS);
	lun_for_each(fe->luns, l, lun, last) {
		uint64_t bit = 1ull << (l % 64);

		if (atomic_load(&fe->pushed[l / 64]) & bit)
			continue;
		if (lun_get(fe->luns, (uint32_t)l, &li))
			continue;
		w.start = 0;
		w.nblocks = li.nblocks;
		for (part = 0;;) {
			pos = FE_DIR_BASE + ((uint64_t)l << FE_PART_BITS) +
			      part;
			if (pos >= end)
				break;
			if (pos >= start)
				fe_push_one(fe, &li, part, &w, buf);
			if (part >= PTABLE_MAX_NUMBER)
				break;
			part = fusefe_ptcache_next_part(&fe->pt, &li, part + 1,
							&w);
			if (!part)
				break;
		}
		/* the whole LUN's files were in replies up to here */
		if (pos >= end || part == 0)
			atomic_fetch_or(&fe->pushed[l / 64], bit);
		lun_put(fe->luns, &li);
	}
	free(buf);
}

/* A READDIRPLUS reply covers offsets [@start, @end): push it later. */
static void fe_push_later(struct fusefe *fe, uint64_t start, uint64_t end)
{
	pthread_mutex_lock(&fe->pend_lock);
	fe->pending[fe->pend_next].start = start;
	fe->pending[fe->pend_next].end = end;
	fe->pend_next = (fe->pend_next + 1) % FE_PENDING;
	pthread_mutex_unlock(&fe->pend_lock);
}

/*
 * One reply's worth of entries from directory offset @off. Entries come in
 * (LUN, partition) order; a LUN pinned for its entries is one lun_get().
 */
static void fe_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size,
			      off_t off, bool plus)
{
	struct fusefe *fe = fuse_req_userdata(req);
	char name[SDNUM_NAME_MAX];
	struct fuse_entry_param e;
	struct lun_info li;
	struct fe_win w;
	uint64_t pos;
	uint32_t lun;
	unsigned int part;
	size_t used = 0, need;
	uint64_t first_off = (uint64_t)off, last_off = (uint64_t)off;
	char *buf;
	int l, len;

	if (ino != FUSEFE_ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (plus && fe->prefetch)
		fe_push(fe, (uint64_t)off);
	buf = fe_scratch(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&e, 0, sizeof(e));
	fe_root_attr(fe, &e.attr);
	e.ino = FUSEFE_ROOT_INO;
	e.attr_timeout = e.entry_timeout = fe->timeout;
	/* "." and ".." are not looked up again: no entry counts for them */
	for (; off < FE_DIR_BASE - 1; off++) {
		const char *dots = off == 0 ? "." : "..";

		need = plus ? fuse_add_direntry_plus(req, buf + used,
						     size - used, dots, &e,
						     off + 1)
			    : fuse_add_direntry(req, buf + used, size - used,
						dots, &e.attr, off + 1);
		if (need > size - used)
			goto out_reply;
		used += need;
	}
	pos = (uint64_t)off - (FE_DIR_BASE - 1);
	/* pos counts from 1 past "..": entry (L, N) is pos L * 256 + N + 1 */
	pos = pos ? pos - 1 : 0;
	lun = pos >> FE_PART_BITS >= fe->max_luns
		      ? fe->max_luns
		      : (uint32_t)(pos >> FE_PART_BITS);
	part = (unsigned int)(pos & FE_PART_MASK);
	lun_for_each(fe->luns, l, lun, fe->max_luns - 1) {
		if ((uint32_t)l != lun)
			part = 0;
		lun = (uint32_t)l;
		if (lun_get(fe->luns, lun, &li))
			continue;
		if (plus)
			fe_mark(fe, lun, li.gen);
		if (part == 0) {
			w.start = 0;
			w.nblocks = li.nblocks;
		} else {
			part = fusefe_ptcache_next_part(&fe->pt, &li, part, &w);
			if (!part) {
				lun_put(fe->luns, &li);
				continue;
			}
		}
		while (1) {
			len = fusefe_name(fe, lun, part, name, sizeof(name));
			if (len < 0)
				break;
			pos = FE_DIR_BASE + ((uint64_t)lun << FE_PART_BITS) +
			      part;
			if (plus) {
				fe_entry(fe, &li, part, &w, &e);
				need = fuse_add_direntry_plus(
					req, buf + used, size - used, name, &e,
					(off_t)pos + 1);
			} else {
				/* only the inode and the type are sent */
				e.attr.st_ino = FUSEFE_INO(lun, part);
				e.attr.st_mode = S_IFREG | 0660;
				need = fuse_add_direntry(
					req, buf + used, size - used, name,
					&e.attr, (off_t)pos + 1);
			}
			if (need > size - used) {
				lun_put(fe->luns, &li);
				goto out_reply;
			}
			used += need;
			last_off = pos + 1;
			if (part >= PTABLE_MAX_NUMBER)
				break;
			part = fusefe_ptcache_next_part(&fe->pt, &li, part + 1,
							&w);
			if (!part)
				break;
		}
		lun_put(fe->luns, &li);
	}
out_reply:
	if (plus && fe->prefetch && used)
		fe_push_later(fe, (uint64_t)first_off, (uint64_t)last_off);
	fuse_reply_buf(req, buf, used);
}

static void fe_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	fe_count(fuse_req_userdata(req), FE_OP_READDIR);
	fe_readdir_common(req, ino, size, off, false);
}

static void fe_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	fe_count(fuse_req_userdata(req), FE_OP_READDIRPLUS);
	fe_readdir_common(req, ino, size, off, true);
}

/*
 * f_blocks: every LUN's capacity; f_bfree: that less what the store holds
 * (its data bytes, shared by all LUNs: thin usage), and f_bavail also
 * within the mem store's limit; f_files: the names. In 512-byte units.
 * Recomputed at most once a second: O(LUNs) lun_get()s (~8 ms at 262,144).
 */
static void fe_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct statvfs sv;
	struct lun_info li;
	uint64_t now = fusefe_now_ns(), blocks = 0, files = 0, used, avail,
		 data;
	unsigned int n;
	int l;

	(void)ino;
	pthread_mutex_lock(&fe->stat_lock);
	if (!fe->stat_when_ns || now - fe->stat_when_ns >= FE_NS) {
		lun_for_each(fe->luns, l, 0, fe->max_luns - 1) {
			if (lun_get(fe->luns, (uint32_t)l, &li))
				continue;
			blocks += li.nblocks * (li.block_size / 512);
			fusefe_ptcache_max_part(&fe->pt, &li, &n);
			files += 1 + n;
			lun_put(fe->luns, &li);
		}
		fe->stat_blocks = blocks;
		fe->stat_files = files;
		fe->stat_when_ns = now;
	}
	blocks = fe->stat_blocks;
	files = fe->stat_files;
	pthread_mutex_unlock(&fe->stat_lock);

	data = lun_data_bytes(fe->luns);
	used = data / 512;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 512;
	sv.f_blocks = blocks;
	sv.f_bfree = used < blocks ? blocks - used : 0;
	sv.f_bavail = sv.f_bfree;
	if (fe->mem_limit) {
		/* the mem store's limit is what writes can still get */
		avail = data < fe->mem_limit ? (fe->mem_limit - data) / 512 : 0;
		if (avail < sv.f_bavail)
			sv.f_bavail = avail;
	}
	sv.f_files = files;
	sv.f_ffree = 0;
	sv.f_favail = 0;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* ---- file operations ---------------------------------------------------- */

/*
 * Page cache: ENOSYS, which the kernel takes (FUSE_NO_OPEN_SUPPORT) as
 * "opens need no request" from then on; files keep their cache across
 * opens (FOPEN_KEEP_CACHE) and send no RELEASE. The LUN generation is
 * checked against the node id's (fusefe_nodeid()). Direct: every open is
 * direct I/O, and the handle remembers the LUN's generation: a handle
 * whose LUN was removed (and maybe added again) gets ENXIO.
 */
static void fe_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	int ret;

	fe_count(fe, FE_OP_OPEN);
	if (ino == FUSEFE_ROOT_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	ret = fe_pin_ino(fe, ino, NULL, &li, &w, &part);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	if (fe->page) {
		lun_put(fe->luns, &li);
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->fh = FE_FH_GEN | li.gen;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->noflush = 1;
	lun_put(fe->luns, &li);
	fuse_reply_open(req, fi);
}

/* Nothing is buffered here: ENOSYS tells the kernel to send no more. */
static void fe_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);

	(void)ino;
	(void)fi;
	fe_count(fe, FE_OP_FLUSH);
	fuse_reply_err(req, ENOSYS);
}

static void fe_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);

	(void)ino;
	(void)fi;
	fe_count(fe, FE_OP_RELEASE);
	fuse_reply_err(req, 0);
}

/* Locks the stripes of blocks @a and @b (in order: no deadlock). */
static void fe_stripe_lock(struct fusefe *fe, const struct lun_info *li,
			   uint64_t a, uint64_t b, bool lock)
{
	unsigned int x = (unsigned int)((li->lun * 40503u + a) % FE_STRIPES);
	unsigned int y = (unsigned int)((li->lun * 40503u + b) % FE_STRIPES);
	unsigned int t;

	if (x > y) {
		t = x;
		x = y;
		y = t;
	}
	if (lock) {
		pthread_mutex_lock(&fe->stripes[x]);
		if (y != x)
			pthread_mutex_lock(&fe->stripes[y]);
	} else {
		if (y != x)
			pthread_mutex_unlock(&fe->stripes[y]);
		pthread_mutex_unlock(&fe->stripes[x]);
	}
}

static int fe_read_blocks(struct fusefe *fe, const struct lun_info *li,
			  uint64_t lba, uint32_t n, void *buf)
{
	struct iovec iov = {.iov_base = buf,
			    .iov_len = (size_t)n * li->block_size};

	return lun_read(fe->luns, li, lba, n, &iov, 1);
}

/*
 * Write @len bytes at disk byte offset @doff. Whole blocks go straight
 * from the request's buffer; otherwise the covering blocks are assembled
 * in the thread's bounce buffer, the partial first and last block read
 * back under a stripe lock (so two writers of different bytes of one block
 * through a disk and its partition do not undo each other).
 */
static int fe_write_bytes(struct fusefe *fe, const struct lun_info *li,
			  uint64_t doff, const char *src, size_t len,
			  unsigned int flags)
{
	uint32_t bs = li->block_size;
	uint64_t lba = doff / bs, end = doff + len;
	size_t head = doff % bs, tail = end % bs;
	uint32_t n = (uint32_t)((head + len + bs - 1) / bs);
	struct iovec iov;
	char *buf;
	int ret = 0;

	if (!head && !tail) {
		iov.iov_base = (void *)src;
		iov.iov_len = len;
		return lun_write(fe->luns, li, lba, n, &iov, 1, flags);
	}
	buf = fe_scratch((size_t)n * bs);
	if (!buf)
		return -ENOMEM;
	fe_stripe_lock(fe, li, lba, lba + n - 1, true);
	if (head)
		ret = fe_read_blocks(fe, li, lba, 1, buf);
	if (!ret && tail && (n > 1 || !head))
		ret = fe_read_blocks(fe, li, lba + n - 1, 1,
				     buf + (size_t)(n - 1) * bs);
	if (!ret) {
		memcpy(buf + head, src, len);
		iov.iov_base = buf;
		iov.iov_len = (size_t)n * bs;
		ret = lun_write(fe->luns, li, lba, n, &iov, 1, flags);
	}
	fe_stripe_lock(fe, li, lba, lba + n - 1, false);
	return ret;
}

static void fe_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint64_t bytes, doff, lba;
	uint32_t bs, n;
	size_t head;
	char *buf = NULL;
	uint64_t t0 = fe_begin(fe);
	int ret;

	fe_count(fe, FE_OP_READ);
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fe_done(fe, TARGET_FILE_READ, t0, 0, true);
		fuse_reply_err(req, -ret);
		return;
	}
	fe_mark_paged(fe, li.lun);
	bs = li.block_size;
	bytes = w.nblocks * bs;
	if (off < 0 || (uint64_t)off >= bytes || !size) {
		lun_put(fe->luns, &li);
		fe_done(fe, TARGET_FILE_READ, t0, 0, off < 0);
		if (off < 0)
			fuse_reply_err(req, EINVAL);
		else
			fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > bytes - (uint64_t)off)
		size = (size_t)(bytes - (uint64_t)off);
	doff = w.start * bs + (uint64_t)off;
	lba = doff / bs;
	head = doff % bs;
	n = (uint32_t)((head + size + bs - 1) / bs);
	ret = fe_faults(fe, req, li.lun, lba, n, FAULT_OP_READ);
	if (!ret) {
		buf = fe_scratch((size_t)n * bs);
		ret = buf ? fe_read_blocks(fe, &li, lba, n, buf) : -ENOMEM;
	}
	lun_put(fe->luns, &li);
	fe_done(fe, TARGET_FILE_READ, t0, size, ret != 0);
	if (ret) {
		log_lun_debug(li.lun, "fuse: read of %zu at %" PRIu64 ": %s",
			      size, doff, strerror(-ret));
		fuse_reply_err(req, fe_errno(ret));
	} else {
		fuse_reply_buf(req, buf + head, size);
	}
}

static void fe_write(fuse_req_t req, fuse_ino_t ino, const char *src,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint64_t bytes, doff, lba;
	uint32_t bs, n;
	uint64_t t0 = fe_begin(fe);
	int ret;

	fe_count(fe, FE_OP_WRITE);
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fe_done(fe, TARGET_FILE_WRITE, t0, 0, true);
		fuse_reply_err(req, -ret);
		return;
	}
	fe_mark_paged(fe, li.lun);
	bs = li.block_size;
	bytes = w.nblocks * bs;
	if (off < 0 || !size || (uint64_t)off >= bytes) {
		lun_put(fe->luns, &li);
		fe_done(fe, TARGET_FILE_WRITE, t0, 0, off < 0 || size);
		if (off < 0)
			fuse_reply_err(req, EINVAL);
		else if (!size)
			fuse_reply_write(req, 0);
		else
			fuse_reply_err(req, ENOSPC); /* past a disk's end */
		return;
	}
	if (size > bytes - (uint64_t)off)
		size = (size_t)(bytes - (uint64_t)off); /* a short write */
	doff = w.start * bs + (uint64_t)off;
	lba = doff / bs;
	n = (uint32_t)((doff % bs + size + bs - 1) / bs);
	ret = fe_faults(fe, req, li.lun, lba, n, FAULT_OP_WRITE);
	if (!ret) {
		/* fusefe_lun_changed() leaves this file's own pages alone */
		fusefe_writer = ino;
		ret = fe_write_bytes(fe, &li, doff, src, size,
				     fi->flags & O_DSYNC ? LUN_IO_FUA : 0);
		fusefe_writer = 0;
	}
	lun_put(fe->luns, &li);
	fe_done(fe, TARGET_FILE_WRITE, t0, size, ret != 0);
	if (ret) {
		log_lun_debug(li.lun, "fuse: write of %zu at %" PRIu64 ": %s",
			      size, doff, strerror(-ret));
		fuse_reply_err(req, fe_errno(ret));
	} else {
		fuse_reply_write(req, size);
	}
}

static void fe_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint64_t t0 = fe_begin(fe);
	int ret;

	(void)datasync; /* the store has no metadata to leave out */
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fe_done(fe, TARGET_FILE_FSYNC, t0, 0, true);
		fuse_reply_err(req, -ret);
		return;
	}
	ret = lun_flush(fe->luns, &li);
	lun_put(fe->luns, &li);
	fe_done(fe, TARGET_FILE_FSYNC, t0, 0, ret != 0);
	fuse_reply_err(req, ret ? fe_errno(ret) : 0);
}

/* Zero bytes [@from, @from + @len) of block @lba (read-modify-write). */
static int fe_zero_partial(struct fusefe *fe, const struct lun_info *li,
			   uint64_t lba, size_t from, size_t len)
{
	uint8_t block[4096];
	struct iovec iov = {.iov_base = block, .iov_len = li->block_size};
	int ret;

	fe_stripe_lock(fe, li, lba, lba, true);
	ret = lun_read(fe->luns, li, lba, 1, &iov, 1);
	if (!ret) {
		memset(block + from, 0, len);
		ret = lun_write(fe->luns, li, lba, 1, &iov, 1, 0);
	}
	fe_stripe_lock(fe, li, lba, lba, false);
	return ret;
}

/* Zero or deallocate disk bytes [@doff, @dend): whole blocks in one call. */
static int fe_zero_bytes(struct fusefe *fe, const struct lun_info *li,
			 uint64_t doff, uint64_t dend, bool punch)
{
	uint32_t bs = li->block_size;
	uint64_t a = (doff + bs - 1) / bs, b = dend / bs;
	int ret = 0;

	if (a > b) /* inside one block */
		return fe_zero_partial(fe, li, doff / bs, doff % bs,
				       (size_t)(dend - doff));
	if (doff % bs)
		ret = fe_zero_partial(fe, li, doff / bs, doff % bs,
				      bs - doff % bs);
	if (!ret && b > a)
		ret = punch ? lun_unmap(fe->luns, li, a, b - a)
			    : lun_write_zeroes(fe->luns, li, a, b - a, 0);
	if (!ret && dend % bs)
		ret = fe_zero_partial(fe, li, b, 0, dend % bs);
	return ret;
}

/*
 * PUNCH_HOLE|KEEP_SIZE deallocates (lun_unmap()), ZERO_RANGE zeroes
 * (lun_write_zeroes(), which the mem store also deallocates); partial
 * blocks at the edges are zeroed in place. With KEEP_SIZE a range past
 * the end is cut at the end; without it, that is EINVAL, as on a block
 * device (a disk cannot grow). Any other mode is EOPNOTSUPP.
 */
static void fe_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			 off_t len, struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	const int known = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE |
			  FALLOC_FL_KEEP_SIZE;
	bool punch = mode & FALLOC_FL_PUNCH_HOLE;
	bool zero = mode & FALLOC_FL_ZERO_RANGE;
	bool keep = mode & FALLOC_FL_KEEP_SIZE;
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint64_t bytes, end, doff, dend = 0, lba, n, t0 = fe_begin(fe);
	int ret;

	if ((mode & ~known) || punch == zero || (punch && !keep)) {
		fe_done(fe, TARGET_FILE_FALLOCATE, t0, 0, true);
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0) {
		fe_done(fe, TARGET_FILE_FALLOCATE, t0, 0, true);
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fe_done(fe, TARGET_FILE_FALLOCATE, t0, 0, true);
		fuse_reply_err(req, -ret);
		return;
	}
	doff = 0;
	bytes = w.nblocks * li.block_size;
	end = (uint64_t)off + (uint64_t)len;
	if (end > bytes) {
		if (!keep) {
			ret = -EINVAL;
			goto out_put;
		}
		end = bytes;
	}
	if ((uint64_t)off >= end)
		goto out_put;
	doff = w.start * li.block_size + (uint64_t)off;
	dend = doff + (end - (uint64_t)off);
	lba = doff / li.block_size;
	n = (dend + li.block_size - 1) / li.block_size - lba;
	ret = fe_faults(fe, req, li.lun, lba, n, FAULT_OP_WRITE);
	if (!ret) {
		/* the kernel drops this file's pages of the range itself */
		fusefe_writer = ino;
		ret = fe_zero_bytes(fe, &li, doff, dend, punch);
		fusefe_writer = 0;
	}
out_put:
	lun_put(fe->luns, &li);
	fe_done(fe, TARGET_FILE_FALLOCATE, t0, dend - doff, ret != 0);
	fuse_reply_err(req,
		       ret ? (ret == -EINVAL ? EINVAL : fe_errno(ret)) : 0);
}

/*
 * SEEK_DATA / SEEK_HOLE from the LUN's block map (lun_lba_status(): the
 * store's allocation unit; synthetic table blocks are data). The end of
 * the file is a hole.
 */
static void fe_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	unsigned int part;
	uint64_t bytes, lba, end, run, pos;
	int ret;

	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = fe_pin_ino(fe, ino, fi, &li, &w, &part);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	bytes = w.nblocks * li.block_size;
	if (off < 0 || (uint64_t)off >= bytes) {
		ret = off < 0 ? -EINVAL : -ENXIO;
		goto out_put;
	}
	lba = w.start + (uint64_t)off / li.block_size;
	end = w.start + w.nblocks;
	pos = bytes; /* SEEK_HOLE: the implicit hole at the end */
	ret = whence == SEEK_DATA ? -ENXIO : 0;
	while (lba < end) {
		int st = lun_lba_status(fe->luns, &li, lba, end - lba, &run);

		if (st < 0) {
			ret = st;
			break;
		}
		if ((st == 1) == (whence == SEEK_DATA)) {
			pos = (lba - w.start) * li.block_size;
			if (pos < (uint64_t)off)
				pos = (uint64_t)off;
			ret = 0;
			break;
		}
		lba += run;
	}
out_put:
	lun_put(fe->luns, &li);
	if (ret)
		fuse_reply_err(req, ret == -ENXIO || ret == -EINVAL
					    ? -ret
					    : fe_errno(ret));
	else
		fuse_reply_lseek(req, (off_t)pos);
}

/* ---- extended attributes ------------------------------------------------ */

#define FE_XATTR_PREFIX "user.sdswarm."

static const char *const fe_xattrs[] = {
	FE_XATTR_PREFIX "devt",
	FE_XATTR_PREFIX "lun",
	FE_XATTR_PREFIX "wwn",
	FE_XATTR_PREFIX "serial",
};

#define FE_NXATTRS (ARRAY_SIZE(fe_xattrs))

/*
 * Attribute @i of (LUN, partition) into @buf. devt is the number the
 * kernel would give it under the configured scheme with disk index = LUN
 * number; it is absent (-ENODATA) where the scheme has none (legacy past
 * sdp, a partition number the prediction cannot place).
 * Return: the length, or -ENODATA.
 */
static int fe_xattr_value(struct fusefe *fe, const struct lun_info *li,
			  unsigned int part, unsigned int i, char *buf,
			  size_t len)
{
	const void *ctx = fe->scheme == &sdnum_scheme_linux ? &fe->ext : NULL;
	uint32_t dev;
	int ret;

	switch (i) {
	case 0:
		if (fe->scheme->encode(ctx, li->lun, part, &dev))
			return -ENODATA;
		ret = snprintf(buf, len, "%" PRIu32 ":%" PRIu32,
			       SDNUM_MAJOR(dev), SDNUM_MINOR(dev));
		break;
	case 1:
		ret = snprintf(buf, len, "%" PRIu32, li->lun);
		break;
	case 2:
		ret = snprintf(buf, len, "naa.%016" PRIx64 "%016" PRIx64,
			       li->wwn_hi, li->wwn_lo);
		break;
	case 3:
		ret = lun_serial(fe->luns, li->lun, buf, len);
		break;
	default:
		return -ENODATA;
	}
	return ret < 0 || (size_t)ret >= len ? -ENODATA : ret;
}

/*
 * The directory's one attribute: the requests served so far, by opcode,
 * "lookup=N getattr=N ..." (FE_OPS counters; reading it is one "other").
 */
#define FE_XATTR_REQUESTS FE_XATTR_PREFIX "requests"

static int fe_requests(struct fusefe *fe, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;
	int n;

	for (i = 0; i < FE_OPS; i++) {
		n = snprintf(buf + used, len - used, "%s%s=%" PRIu64,
			     i ? " " : "", fe_op_names[i],
			     atomic_load_explicit(&fe->ops[i],
						  memory_order_relaxed));
		if (n < 0 || (size_t)n >= len - used)
			return -ERANGE;
		used += (size_t)n;
	}
	return (int)used;
}

static void fe_reply_value(fuse_req_t req, const char *val, int len,
			   size_t size)
{
	if (len < 0)
		fuse_reply_err(req, -len);
	else if (!size)
		fuse_reply_xattr(req, (size_t)len);
	else if (size < (size_t)len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, (size_t)len);
}

static void fe_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct fusefe *fe = fuse_req_userdata(req);
	struct lun_info li;
	struct fe_win w;
	char val[256];
	unsigned int part, i;
	int ret;

	fe_count(fe, FE_OP_OTHER);
	if (ino == FUSEFE_ROOT_INO && !strcmp(name, FE_XATTR_REQUESTS)) {
		fe_reply_value(req, val, fe_requests(fe, val, sizeof(val)),
			       size);
		return;
	}
	for (i = 0; i < FE_NXATTRS && strcmp(name, fe_xattrs[i]); i++)
		;
	if (ino == FUSEFE_ROOT_INO || i == FE_NXATTRS) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	ret = fe_pin_ino(fe, ino, NULL, &li, &w, &part);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	ret = fe_xattr_value(fe, &li, part, i, val, sizeof(val));
	lun_put(fe->luns, &li);
	fe_reply_value(req, val, ret, size);
}

static void fe_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fusefe *fe = fuse_req_userdata(req);
	char list[128], val[64];
	struct lun_info li;
	struct fe_win w;
	size_t used = 0, n;
	unsigned int part, i;
	int ret;

	if (ino != FUSEFE_ROOT_INO) {
		ret = fe_pin_ino(fe, ino, NULL, &li, &w, &part);
		if (ret) {
			fuse_reply_err(req, -ret);
			return;
		}
		for (i = 0; i < FE_NXATTRS; i++) {
			if (fe_xattr_value(fe, &li, part, i, val, sizeof(val)) <
			    0)
				continue;
			n = strlen(fe_xattrs[i]) + 1;
			memcpy(list + used, fe_xattrs[i], n);
			used += n;
		}
		lun_put(fe->luns, &li);
	} else {
		n = strlen(FE_XATTR_REQUESTS) + 1;
		memcpy(list, FE_XATTR_REQUESTS, n);
		used = n;
	}
	if (!size)
		fuse_reply_xattr(req, used);
	else if (size < used)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, used);
}

/* The attributes describe the disk: EPERM for ours, ENOTSUP for others. */
static void fe_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	(void)ino;
	(void)value;
	(void)size;
	(void)flags;
	fuse_reply_err(req,
		       strncmp(name, FE_XATTR_PREFIX, strlen(FE_XATTR_PREFIX))
			       ? ENOTSUP
			       : EPERM);
}

static void fe_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fe_setxattr(req, ino, name, NULL, 0, 0);
}

static const struct fuse_lowlevel_ops fe_ops = {
	.init = fe_init,
	.lookup = fe_lookup,
	.getattr = fe_getattr,
	.setattr = fe_setattr,
	.open = fe_open,
	.flush = fe_flush,
	.release = fe_release,
	.read = fe_read,
	.write = fe_write,
	.fsync = fe_fsync,
	.readdir = fe_readdir,
	.readdirplus = fe_readdirplus,
	.forget = fe_forget,
	.forget_multi = fe_forget_multi,
	.statfs = fe_statfs,
	.setxattr = fe_setxattr,
	.getxattr = fe_getxattr,
	.listxattr = fe_listxattr,
	.removexattr = fe_removexattr,
	.fallocate = fe_fallocate,
	.lseek = fe_lseek,
};

/* ---- the session -------------------------------------------------------- */

__attribute__((format(printf, 2, 0))) static void
fe_fuse_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char buf[LOG_LINE_MAX];
	size_t n;

	if (!log_enabled((int)level))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg((int)level, "fuse: %s", buf);
}

/*
 * Refuse a mount point that would mount badly or hang: a stale FUSE mount
 * (its daemon died: every access fails with ENOTCONN), a live FUSE mount
 * (another daemon serves it), or no /dev/fuse.
 */
static int fe_check_mountpoint(const char *dir)
{
	char parent[CFG_PATH_MAX + 4];
	struct stat st, pst;
	struct statfs sfs;
	int err;

	if (stat(dir, &st) < 0) {
		err = errno;
		if (err == ENOTCONN) {
			log_err("fuse: %s is a stale FUSE mount (the daemon that served it died); clear it with 'fusermount3 -u %s' (or 'umount -l %s') and start again",
				dir, dir, dir);
			return -ENOTCONN;
		}
		log_err("fuse: mount point %s: %s", dir, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("fuse: mount point %s is not a directory", dir);
		return -ENOTDIR;
	}
	snprintf(parent, sizeof(parent), "%s/..", dir);
	if (statfs(dir, &sfs) == 0 && sfs.f_type == FE_FUSE_MAGIC &&
	    stat(parent, &pst) == 0 && pst.st_dev != st.st_dev) {
		log_err("fuse: %s already has a FUSE file system mounted (another sdswarmd?); unmount it with 'fusermount3 -u %s'",
			dir, dir);
		return -EBUSY;
	}
	if (access("/dev/fuse", R_OK | W_OK) < 0) {
		err = errno;
		log_err("fuse: /dev/fuse: %s (load the fuse module, or give the container the device)",
			strerror(err));
		return -ENODEV;
	}
	return 0;
}

/* The most partitions any group's synthetic table shows the kernel. */
static unsigned int fe_group_parts(const struct target *t)
{
	struct ptable_geom g;
	unsigned int i, max = 0;
	int n;

	for (i = 0; i < t->ngroups; i++) {
		const struct lun_group *lg = &t->groups[i];

		if (!lg->nparts || lg->ptable == PTABLE_NONE)
			continue;
		g = (struct ptable_geom){
			.kind = lg->ptable,
			.block_size = lg->block_size,
			.nblocks = lg->size / lg->block_size,
			.nparts = lg->nparts,
			.sizes = lg->nsizes ? lg->part_sizes : NULL,
			.nsizes = lg->nsizes,
		};
		n = ptable_count(&g);
		if (n > 0 && (unsigned int)n > max)
			max = (unsigned int)n;
	}
	return max;
}

/*
 * Prefetch is on when every file the groups make at start gets its
 * [fuse] prefetch bytes within [fuse] prefetch_budget (files of LUNs added
 * later are not counted), and only with the page cache.
 */
static void fe_prefetch_setup(struct fusefe *fe, const struct cfg_fuse *fc,
			      const struct target *t)
{
	struct ptable_geom g;
	uint64_t files = 0, need;
	unsigned int i;
	int n;

	if (!fe->page || !fc->prefetch)
		return;
	for (i = 0; i < t->ngroups; i++) {
		const struct lun_group *lg = &t->groups[i];

		n = 0;
		if (lg->nparts && lg->ptable != PTABLE_NONE) {
			g = (struct ptable_geom){
				.kind = lg->ptable,
				.block_size = lg->block_size,
				.nblocks = lg->size / lg->block_size,
				.nparts = lg->nparts,
				.sizes = lg->nsizes ? lg->part_sizes : NULL,
				.nsizes = lg->nsizes,
			};
			n = ptable_count(&g);
		}
		files += (uint64_t)lg->count *
			 (1 + (n > 0 ? (unsigned int)n : 0));
	}
	need = files * fc->prefetch;
	if (need > fc->prefetch_budget) {
		log_notice(
			"fuse: no prefetch: %" PRIu64 " files x %" PRIu64
			" bytes = %" PRIu64
			" MiB of page cache is over [fuse] prefetch_budget (%" PRIu64
			" MiB)",
			files, fc->prefetch, need >> 20,
			fc->prefetch_budget >> 20);
		return;
	}
	fe->prefetch = (uint32_t)fc->prefetch;
	log_info(
		"fuse: prefetch of the first %u bytes of each file at READDIRPLUS (%" PRIu64
		" files, up to %" PRIu64 " MiB)",
		fe->prefetch, files, need >> 20);
}

static void *fe_loop(void *arg)
{
	struct fusefe *fe = arg;
	sigset_t wake;

	/* whatever the creator blocked, fusefe_stop() must reach this thread */
	sigemptyset(&wake);
	sigaddset(&wake, FE_WAKE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	fe->loop_ret = fuse_session_loop_mt(fe->se, fe->loop_cfg);
	if (!atomic_load(&fe->stopping))
		log_warn(
			"fuse: %s was unmounted from outside; the FUSE front end stopped serving (%d)",
			fe->mountpoint, fe->loop_ret);
	return NULL;
}

static void fe_free(struct fusefe *fe)
{
	unsigned int i;

	if (fe->fstats_registered)
		target_unregister(fe->target, &fe->fstats);
	for (i = 0; i < FE_STRIPES; i++)
		pthread_mutex_destroy(&fe->stripes[i]);
	pthread_mutex_destroy(&fe->stat_lock);
	pthread_cond_destroy(&fe->done_cond);
	pthread_cond_destroy(&fe->init_cond);
	pthread_mutex_destroy(&fe->init_lock);
	pthread_cond_destroy(&fe->notify_cond);
	pthread_mutex_destroy(&fe->notify_lock);
	fusefe_ptcache_fini(&fe->pt);
	if (fe->loop_cfg)
		fuse_loop_cfg_destroy(fe->loop_cfg);
	free(fe->shadow);
	free(fe->held);
	free(fe->kgen);
	free(fe->job_batch);
	free(fe->pushed);
	free(fe->paged);
	pthread_mutex_destroy(&fe->pend_lock);
	free(fe);
}

static int fe_new(const struct cfg_fuse *fc, struct target *t,
		  struct fusefe **out)
{
	pthread_condattr_t ca;
	struct fusefe *fe;
	uint32_t words, w;
	unsigned int threads;
	int l;

	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->target = t;
	fe->luns = t->luns;
	fe->faults = t->faults;
	fe->max_luns = lun_max(t->luns);
	fe->mem_limit = t->space_limit;
	fe->scheme = t->scheme ? t->scheme : &sdnum_scheme_linux;
	snprintf(fe->prefix, sizeof(fe->prefix), "%s",
		 t->name_prefix && t->name_prefix[0] ? t->name_prefix : "sd");
	snprintf(fe->mountpoint, sizeof(fe->mountpoint), "%s", fc->mountpoint);
	fe->timeout = fc->attr_timeout;
	fe->page = fc->cache == CFG_FUSE_CACHE_PAGE;
	fe->lun_watch_id = -1;
	clock_gettime(CLOCK_REALTIME, &fe->t0);
	atomic_init(&fe->root_mtime_ns, fusefe_realtime_ns());
	fe->uid = getuid();
	fe->gid = getgid();
	fe->max_parts = fe_group_parts(t);
	fe_prefetch_setup(fe, fc, t);
	/* the kernel's extended minors as sdnum_extmap predicts them */
	fe->ext.ndisks = fe->max_luns;
	fe->ext.parts = fe->max_parts > 15 ? fe->max_parts : 0;
	fe->ext.base = 0;
	atomic_init(&fe->stopping, false);

	fusefe_ptcache_init(&fe->pt, fe->luns);
	pthread_mutex_init(&fe->notify_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fe->notify_cond, &ca);
	pthread_cond_init(&fe->done_cond, &ca);
	pthread_cond_init(&fe->init_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&fe->init_lock, NULL);
	pthread_mutex_init(&fe->pend_lock, NULL);
	pthread_mutex_init(&fe->stat_lock, NULL);
	for (w = 0; w < FE_STRIPES; w++)
		pthread_mutex_init(&fe->stripes[w], NULL);

	words = (fe->max_luns + 63) / 64;
	fe->shadow = calloc(words ? words : 1, sizeof(*fe->shadow));
	fe->held = calloc(words ? words : 1, sizeof(*fe->held));
	/* 4 bytes a LUN; pages of LUNs never looked up stay untouched */
	fe->kgen = calloc(fe->max_luns ? fe->max_luns : 1, sizeof(*fe->kgen));
	fe->job_batch = calloc(FE_JOBS, sizeof(*fe->job_batch));
	fe->pushed = calloc(words ? words : 1, sizeof(*fe->pushed));
	fe->paged = calloc(words ? words : 1, sizeof(*fe->paged));
	fe->loop_cfg = fuse_loop_cfg_create();
	if (!fe->shadow || !fe->held || !fe->kgen || !fe->job_batch ||
	    !fe->pushed || !fe->paged || !fe->loop_cfg) {
		fe_free(fe);
		return -ENOMEM;
	}
	lun_for_each(fe->luns, l, 0, fe->max_luns - 1)
		atomic_fetch_or(&fe->shadow[l / 64], 1ull << (l % 64));
	/*
	 * [fuse] threads bounds the requests served at once: libfuse starts a
	 * worker when none is free, up to max_threads, and a request past
	 * that waits in the kernel's queue. A request held by a hang or delay
	 * fault keeps its worker, so at most that many are held at once.
	 * Idle workers are kept (up to the same count) rather than ended
	 * and started again under bursts.
	 */
	threads = fc->threads ? fc->threads : 4;
	fuse_loop_cfg_set_clone_fd(fe->loop_cfg, 1);
	fuse_loop_cfg_set_max_threads(fe->loop_cfg, threads);
	fuse_loop_cfg_set_idle_threads(fe->loop_cfg, threads);
	*out = fe;
	return 0;
}

static int fe_session(struct fusefe *fe, const struct cfg_fuse *fc)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	int err;

	if (fuse_opt_add_arg(&args, "sdswarmd") ||
	    fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(
		    &args,
		    "default_permissions,fsname=sdswarm,subtype=sdswarm") ||
	    (fc->options[0] && (fuse_opt_add_arg(&args, "-o") ||
				fuse_opt_add_arg(&args, fc->options)))) {
		fuse_opt_free_args(&args);
		return -ENOMEM;
	}
	fe->se = fuse_session_new(&args, &fe_ops, sizeof(fe_ops), fe);
	fuse_opt_free_args(&args);
	if (!fe->se) {
		log_err("fuse: libfuse rejected the mount options '%s'",
			fc->options);
		return -EINVAL;
	}
	errno = 0;
	if (fuse_session_mount(fe->se, fe->mountpoint)) {
		err = errno ? errno : EIO;
		log_err("fuse: cannot mount on %s: %s", fe->mountpoint,
			strerror(err));
		fuse_session_destroy(fe->se);
		fe->se = NULL;
		return -err;
	}
	return 0;
}

/* Wait for fe_init(): the cache mode stands or falls with what it found. */
static int fe_wait_init(struct fusefe *fe)
{
	uint64_t end = fusefe_now_ns() + FE_INIT_WAIT_NS;
	struct timespec ts = {.tv_sec = (time_t)(end / FE_NS),
			      .tv_nsec = (long)(end % FE_NS)};
	int ret = 0;

	pthread_mutex_lock(&fe->init_lock);
	while (!fe->init_done &&
	       pthread_cond_timedwait(&fe->init_cond, &fe->init_lock, &ts) !=
		       ETIMEDOUT)
		;
	if (!fe->init_done) {
		log_err("fuse: the kernel sent no INIT to %s within %llu s",
			fe->mountpoint, FE_INIT_WAIT_NS / FE_NS);
		ret = -ETIMEDOUT;
	} else if (fe->init_err[0]) {
		log_err("fuse: %s", fe->init_err);
		ret = -EOPNOTSUPP;
	}
	pthread_mutex_unlock(&fe->init_lock);
	return ret;
}

int fusefe_start(const struct cfg_fuse *fc, struct target *t, void **state)
{
	struct fusefe *fe;
	int ret;

	if (!fc->enabled || !fc->mountpoint[0])
		return 1;
	pthread_once(&fe_once, fe_once_init);
	fuse_set_log_func(fe_fuse_log);
	ret = fe_check_mountpoint(fc->mountpoint);
	if (ret)
		return ret;
	ret = fe_new(fc, t, &fe);
	if (ret)
		return ret;
	/* counted from the first request; what was counted outlives fe */
	fe->fstats_registered =
		target_register(
			t, &(struct target_source){.kind = TARGET_SRC_FILE,
						   .obj = &fe->fstats}) == 0;
	ret = fe_session(fe, fc);
	if (ret)
		goto out_free;
	ret = -pthread_create(&fe->loop_thread, NULL, fe_loop, fe);
	if (ret)
		goto out_unmount;
	ret = -pthread_create(&fe->notify_thread, NULL, fusefe_notifier, fe);
	if (ret)
		goto out_loop;
	ret = fe_wait_init(fe);
	if (!ret) {
		fe->lun_watch_id =
			lun_watch_add(fe->luns, fusefe_lun_changed, fe);
		ret = fe->lun_watch_id < 0 ? fe->lun_watch_id : 0;
	}
	if (!ret) {
		ret = fault_watch_set(fe->faults, fusefe_fault_added, fe);
		fe->fault_watching = !ret;
	}
	if (ret) {
		fusefe_stop(fe);
		return ret;
	}
	log_notice(
		"fuse: %u LUNs mounted on %s (%s scheme, prefix %s, %u threads, cache = %s, names and attributes kept %g s)",
		lun_count(fe->luns), fe->mountpoint, fe->scheme->name,
		fe->prefix, fc->threads ? fc->threads : 4,
		fe->page ? "page" : "direct", fe->timeout);
	*state = fe;
	return 0;

out_loop:
	atomic_store(&fe->stopping, true);
	fuse_session_exit(fe->se);
	fuse_session_unmount(fe->se); /* ends the loop: ENODEV */
	pthread_join(fe->loop_thread, NULL);
	fuse_session_destroy(fe->se);
	goto out_free;
out_unmount:
	fuse_session_unmount(fe->se);
	fuse_session_destroy(fe->se);
out_free:
	fe_free(fe);
	return ret;
}

/*
 * The session loop sleeps in sem_wait() until a worker ends; a signal
 * makes it look at the exit flag (and cancel the workers waiting in
 * read()). It may check the flag just before it is set and then sleep, so
 * the signal repeats until the join succeeds.
 */
void fusefe_stop(void *state)
{
	struct fusefe *fe = state;
	struct timespec ts;
	uint64_t t0;
	bool aborted = false;

	if (!fe)
		return;
	/* first: a writer in a watcher waits for the notifier */
	if (fe->fault_watching)
		fault_watch_set(fe->faults, NULL, NULL);
	if (fe->lun_watch_id >= 0)
		lun_watch_remove(fe->luns, fe->lun_watch_id);
	atomic_store(&fe->stopping, true);
	pthread_mutex_lock(&fe->notify_lock);
	pthread_cond_signal(&fe->notify_cond);
	pthread_mutex_unlock(&fe->notify_lock);
	pthread_join(fe->notify_thread, NULL);

	fuse_session_exit(fe->se);
	t0 = fusefe_now_ns();
	for (;;) {
		pthread_kill(fe->loop_thread, FE_WAKE_SIGNAL);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)FE_TICK_NS;
		if (ts.tv_nsec >= (long)FE_NS) {
			ts.tv_sec++;
			ts.tv_nsec -= (long)FE_NS;
		}
		if (!pthread_timedjoin_np(fe->loop_thread, NULL, &ts))
			break;
		if (!aborted && fusefe_now_ns() - t0 > FE_STOP_ABORT_NS) {
			/* a forced unmount aborts a FUSE connection */
			log_warn(
				"fuse: the session on %s did not end; aborting its connection",
				fe->mountpoint);
			umount2(fe->mountpoint, MNT_FORCE);
			aborted = true;
		}
	}
	fuse_session_unmount(fe->se);
	fuse_session_destroy(fe->se);
	log_info("fuse: unmounted %s", fe->mountpoint);
	fe_free(fe);
}
