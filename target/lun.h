/* SPDX-License-Identifier: MIT */
/*
 * The LUN table: up to 2^20 LUNs in flat arrays, 32 bytes a LUN, nothing
 * allocated per LUN. Geometry and identity come from the LUN's group (one
 * [luns] section); serial and WWN are computed from the LUN number and the
 * target seed. Block I/O overlays the synthetic partition table on the store.
 */
#ifndef SDSWARM_LUN_H
#define SDSWARM_LUN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ptable.h"
#include "store/store.h"

#define LUN_MAX_LUNS (1u << 20)
#define LUN_DEFAULT_MAX 262144u
#define LUN_MAX_GROUPS 256u
#define LUN_NAME_MAX 32
/* "no I_T nexus": a condition raised by no initiator (the control socket) */
#define LUN_NEXUS_NONE UINT32_MAX

enum lun_state {
	LUN_ABSENT = 0, /* no LUN with this number */
	LUN_ONLINE, /* serving */
	LUN_OFFLINE, /* present, every medium access fails: NOT READY, offline */
	LUN_NOT_READY, /* present, becoming ready (NOT READY, in process) */
	LUN_STOPPED, /* START STOP UNIT stopped it: initializing command required */
	LUN_REMOVING, /* removed; waiting for commands in flight to finish */
	LUN_NO_MEDIUM, /* removable, medium ejected: NOT READY, not present */
	LUN_SANITIZING, /* a SANITIZE runs: NOT READY, sanitize in progress */
};

/* Unit attention conditions, highest priority first (SAM-5 5.14). */
enum lun_ua {
	LUN_UA_POWER_ON = 1u << 0, /* 29h/01h POWER ON OCCURRED */
	LUN_UA_RESET = 1u << 1, /* 29h/00h after a LUN or target reset */
	LUN_UA_MODE_CHANGED = 1u << 2, /* 2Ah/01h MODE PARAMETERS CHANGED */
	LUN_UA_CAPACITY = 1u << 3, /* 2Ah/09h CAPACITY DATA HAS CHANGED */
	LUN_UA_LUNS_CHANGED = 1u
			      << 4, /* 3Fh/0Eh REPORTED LUNS DATA HAS CHANGED */
	LUN_UA_INJECTED =
		1u << 5, /* a fault's unit attention (its own ASC/ASCQ) */
	/*
	 * 2Ah/06h ASYMMETRIC ACCESS STATE CHANGED: table-wide, reported after
	 * CAPACITY DATA HAS CHANGED and before REPORTED LUNS DATA HAS CHANGED
	 */
	LUN_UA_ALUA_CHANGED = 1u << 6,
};

/* Mode page bits a host can change with MODE SELECT, per LUN. */
enum lun_mode {
	LUN_MODE_WCE = 1u << 0, /* caching page: write cache enable */
	LUN_MODE_RCD = 1u << 1, /* caching page: read cache disable */
	LUN_MODE_D_SENSE = 1u << 2, /* control page: descriptor-format sense */
	LUN_MODE_SWP = 1u << 3, /* control page: software write protect */
	LUN_MODE_DEXCPT = 1u << 4, /* IE page: disable exceptions */
	LUN_MODE_TEST = 1u << 5, /* IE page: test (report a false failure) */
	LUN_MODE_QERR = 1u << 6, /* control page: QErr = 01b */
};

/*
 * A group of LUNs sharing geometry and identity: one [luns] or [luns.NAME]
 * section. Every LUN points at its group by a 16-bit index.
 */
struct lun_group {
	char name[LUN_NAME_MAX];
	uint32_t first; /* first LUN number */
	uint32_t count; /* number of LUNs created at start */
	uint64_t size; /* bytes; a multiple of block_size */
	uint32_t block_size; /* 512 or 4096 */
	uint8_t phys_exp; /* physical block = block_size << phys_exp */
	bool thin; /* logical block provisioning (LBPME, UNMAP) */
	bool lbprz; /* unmapped blocks read as zero (reported) */
	uint16_t mode_default; /* enum lun_mode bits at power on */
	char vendor[9]; /* INQUIRY T10 vendor, space padded on output */
	char product[17];
	char revision[5];
	uint32_t max_xfer_blocks; /* block limits VPD: MAXIMUM TRANSFER LENGTH */
	uint32_t opt_xfer_blocks; /* OPTIMAL TRANSFER LENGTH */
	uint32_t max_unmap_blocks; /* MAXIMUM UNMAP LBA COUNT */
	uint32_t max_unmap_desc; /* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	uint32_t max_ws_blocks; /* MAXIMUM WRITE SAME LENGTH */
	uint16_t rotation_rate; /* VPD B1: 1 = non-rotating */
	bool removable; /* RMB: START STOP UNIT ejects and loads */
	uint32_t sanitize_ms; /* how long a SANITIZE keeps it busy */
	enum ptable_kind ptable;
	unsigned int nparts;
	unsigned int nsizes;
	uint64_t part_sizes[64]; /* blocks, see ptable.h for the rule */
};

/* A LUN as the command path sees it: a snapshot, cheap to take. */
struct lun_info {
	uint32_t lun;
	uint32_t gen; /* bumps on every add: commands from before fail */
	enum lun_state state;
	const struct lun_group *group;
	uint64_t nblocks; /* current capacity in logical blocks */
	uint32_t block_size;
	uint16_t mode; /* enum lun_mode bits */
	uint64_t wwn_hi, wwn_lo; /* NAA-6 WWN, 16 bytes, big-endian halves */
	bool table_owned; /* the host wrote the table area: no overlay */
	struct ptable_geom
		geom; /* partition table geometry (kind NONE if none) */
	uint16_t progress; /* LUN_SANITIZING: done, in 65536ths */
};

struct lun_table_params {
	uint32_t max_luns; /* 1..LUN_MAX_LUNS; default LUN_DEFAULT_MAX */
	uint64_t seed; /* target seed: serials and WWNs */
	uint32_t oui; /* IEEE OUI in the WWN (24 bits); 0: AC-DE-48,
				  * the block IEEE reserves for private use */
	struct store *store; /* where blocks live; not owned */
	bool no_power_on_ua; /* no POWER ON OCCURRED on a LUN's first
				  * command (iscsi-ls and other one-shot
				  * tools give up on a unit attention) */
};

struct lun_table;

/**
 * lun_table_create() - an empty table for LUN numbers 0..max_luns-1.
 * @out: out, the table.
 * @p: parameters; @p->store must outlive the table.
 *
 * Context: allocates the flat per-LUN arrays: 32 bytes a LUN up to max_luns,
 * touched (and so resident) only as LUNs are created.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int lun_table_create(struct lun_table **out, const struct lun_table_params *p);

/**
 * lun_table_destroy() - free the table (not the store). NULL is a no-op.
 * @t: the table.
 */
void lun_table_destroy(struct lun_table *t);

/**
 * lun_group_add() - register a group and create its @g->count LUNs online,
 * each with a pending POWER ON unit attention.
 * @t: the table.
 * @g: the group, copied.
 *
 * Context: control path; takes the table's writer lock.
 * Return: the group's index (>= 0); -EINVAL for a bad geometry or a
 * partition layout that does not fit (ptable_check()); -EEXIST if any LUN
 * of the range exists; -ERANGE if the range passes max_luns; -ENOSPC when
 * LUN_MAX_GROUPS groups exist.
 */
int lun_group_add(struct lun_table *t, const struct lun_group *g);

/**
 * lun_group_get() - a group by index.
 * @t: the table.
 * @index: as returned by lun_group_add().
 *
 * Return: the group, or NULL.
 */
const struct lun_group *lun_group_get(const struct lun_table *t,
				      unsigned int index);

/**
 * lun_group_find() - a group by name.
 * @t: the table.
 * @name: group name.
 *
 * Return: its index, or -ENOENT.
 */
int lun_group_find(const struct lun_table *t, const char *name);

/**
 * lun_add() - create one LUN of group @group; @lun UINT32_MAX picks the
 * lowest free number at or above the group's first.
 * @t: the table.
 * @lun: LUN number or UINT32_MAX.
 * @group: group index.
 *
 * Sets REPORTED LUNS DATA HAS CHANGED for every LUN (O(1): a generation).
 * Return: the LUN number; -EEXIST, -ERANGE, -ENOENT (no such group),
 * -ENOSPC (no free number).
 */
int lun_add(struct lun_table *t, uint32_t lun, unsigned int group);

/**
 * lun_remove() - remove a LUN. New commands see it absent at once; its data
 * is dropped from the store when the last command in flight finishes.
 * @t: the table.
 * @lun: LUN number.
 *
 * Return: 0, -ENOENT.
 */
int lun_remove(struct lun_table *t, uint32_t lun);

/**
 * lun_add_as() - make LUN @lun of group @group with its own size and
 * state, as if it had always been so (a configuration's range.N keys):
 * no unit attention beyond a new LUN's POWER ON, no change notification.
 * @t: the table.
 * @lun: the LUN number.
 * @group: the group index.
 * @bytes: capacity, a multiple of the group's block size up to 8P; 0: the
 *	group's size.
 * @state: LUN_ONLINE or LUN_OFFLINE.
 *
 * Context: before the front ends start.
 * Return: @lun; -ENOENT (no group), -EEXIST, -ERANGE (past max_luns),
 * -EINVAL (size or state).
 */
int lun_add_as(struct lun_table *t, uint32_t lun, unsigned int group,
	       uint64_t bytes, enum lun_state state);

/**
 * lun_resize() - change a LUN's capacity; sets CAPACITY DATA HAS CHANGED.
 * @t: the table.
 * @lun: LUN number.
 * @bytes: new size, a multiple of the block size, > 0.
 *
 * Shrinking drops the store's data past the new end.
 * Return: 0, -ENOENT, -EINVAL.
 */
int lun_resize(struct lun_table *t, uint32_t lun, uint64_t bytes);

/**
 * lun_set_state() - online, offline, not ready or stopped.
 * @t: the table.
 * @lun: LUN number.
 * @state: LUN_ONLINE, LUN_OFFLINE, LUN_NOT_READY or LUN_STOPPED.
 *
 * A SANITIZE in progress keeps the LUN LUN_SANITIZING until it ends, and
 * only a load (lun_medium()) brings an ejected medium back.
 * Return: 0, -ENOENT, -EINVAL, -EBUSY (sanitizing or no medium).
 */
int lun_set_state(struct lun_table *t, uint32_t lun, enum lun_state state);

/**
 * lun_prevent() - PREVENT ALLOW MEDIUM REMOVAL for one I_T nexus.
 * @t: the table.
 * @info: the LUN, pinned.
 * @nexus: the I_T nexus.
 * @prevent: true: prevent removal; false: allow it (for this nexus).
 *
 * Removal stays prevented while any nexus prevents it. A nexus's
 * prevention ends with the nexus (lun_ua_nexus_gone()) and with a LUN or
 * target reset (SPC-4 6.13), and lives in the nexus's unit attention entry
 * (no extra memory).
 * Context: any thread. Return: 0, -ENOMEM.
 */
int lun_prevent(struct lun_table *t, const struct lun_info *info,
		uint32_t nexus, bool prevent);

/**
 * lun_medium() - eject or load a removable LUN's medium (START STOP UNIT
 * with LOEJ).
 * @t: the table.
 * @info: the LUN, pinned.
 * @load: true: load it (the LUN comes online); false: eject it
 *	(LUN_NO_MEDIUM). While some nexus prevents removal, neither an eject
 *	nor the load of an ejected medium happens.
 *
 * Cost: an eject looks at every nexus/LUN entry for a prevention, O(pairs);
 * ejects are rare.
 * Context: any thread. Return: 0, -EBUSY (removal prevented), -ENOENT,
 * -EPERM (the LUN is not removable).
 */
int lun_medium(struct lun_table *t, const struct lun_info *info, bool load);

/**
 * lun_sanitize_start() - mark a LUN busy with a sanitize operation for
 * @ms milliseconds from now: LUN_SANITIZING, which lun_get() ends by itself
 * once the time is up (the erase itself is the caller's, done before).
 * @t: the table.
 * @info: the LUN, pinned.
 * @ms: the duration; 0 ends at once (nothing changes).
 *
 * Context: any thread. Cost: one entry in a small table of LUNs being
 * sanitized (32 bytes each, only while they are).
 * Return: 0, -EBUSY (already sanitizing), -ENOMEM, -ENOENT.
 */
int lun_sanitize_start(struct lun_table *t, const struct lun_info *info,
		       uint32_t ms);

/**
 * lun_get() - snapshot a LUN and pin it against final removal.
 * @t: the table.
 * @lun: LUN number.
 * @info: out, the snapshot.
 *
 * Every successful lun_get() must be paired with lun_put(). A removed LUN
 * is not returned.
 * Context: command path; lock-free (an atomic increment).
 * Return: 0, -ENODEV (no such LUN, or being removed).
 */
int lun_get(struct lun_table *t, uint32_t lun, struct lun_info *info);

/**
 * lun_put() - release a lun_get() pin.
 * @t: the table.
 * @info: the snapshot from lun_get().
 */
void lun_put(struct lun_table *t, const struct lun_info *info);

/**
 * lun_exists() - whether a LUN number is present (any state but absent or
 * removing).
 * @t: the table.
 * @lun: LUN number.
 *
 * Return: true or false.
 */
bool lun_exists(const struct lun_table *t, uint32_t lun);

/**
 * lun_find() - the lowest present LUN number in @first..@last inclusive
 * (REPORT LUNS, readdir).
 * @t: the table.
 * @first: first number to consider.
 * @last: last number to consider (inclusive); clamped to lun_max() - 1.
 *
 * Cost: O(gap) over a bitmap, 64 LUNs a word.
 * Return: the LUN number, or -ENOENT (none there, or @first > @last).
 */
int lun_find(const struct lun_table *t, uint32_t first, uint32_t last);

/**
 * lun_for_each() - iterate over the present LUNs in @first..@last
 * inclusive, lowest first, as the kernel's xa_for_each_range().
 * @t: the table.
 * @l: an int, the LUN number in the body; -ENOENT after the loop.
 * @first: the first LUN number to consider.
 * @last: the last (inclusive); UINT32_MAX or lun_max() - 1 for all.
 *
 * @t and @last are evaluated again at each step. LUNs added or removed
 * during the walk may or may not be seen (the bitmap is read racily); the
 * body may lun_get() and must not assume one succeeds.
 * Cost: O(@last - @first) / 64 bitmap words over the whole walk.
 */
#define lun_for_each(t, l, first, last)                                        \
	for ((l) = lun_find((t), (first), (last)); (l) >= 0;                   \
	     (l) = (uint32_t)(l) < (uint32_t)(last)                            \
			   ? lun_find((t), (uint32_t)(l) + 1, (last))          \
			   : -ENOENT)

/**
 * lun_count() - present LUNs.
 * @t: the table.
 *
 * Return: the count.
 */
uint32_t lun_count(const struct lun_table *t);

/**
 * lun_luns_generation() - a counter that changes whenever the set of LUNs
 * changes (lun_add(), lun_remove(), lun_ua_set_all() with
 * LUN_UA_LUNS_CHANGED): the notifier a front end polls to tell its
 * initiators (iSCSI's Async Message) instead of a callback into its
 * threads.
 * @t: the table.
 *
 * Context: any thread; one relaxed atomic load.
 * Return: the counter (16 bits; compare for inequality, it wraps).
 */
unsigned int lun_luns_generation(const struct lun_table *t);

/**
 * lun_max() - the table's LUN number limit.
 * @t: the table.
 *
 * Return: max_luns.
 */
uint32_t lun_max(const struct lun_table *t);

/**
 * lun_ua_take() - the highest-priority unit attention pending for one I_T
 * nexus on a LUN, cleared for that nexus only (SAM-5 5.14: each nexus has
 * its own). The first command to a new LUN (or to a LUN number since
 * re-added), from whichever nexus, reports POWER ON OCCURRED, which covers
 * pending resets; a nexus new to a LUN starts with nothing pending.
 * @t: the table.
 * @info: the LUN.
 * @nexus: the I_T nexus id the command came on.
 * @asc: out, ASC (for LUN_UA_INJECTED: the fault's).
 * @ascq: out, ASCQ.
 *
 * Context: any thread; one striped lock. Cost: a hash lookup, and the first
 * time a nexus uses a LUN, a 32-byte entry.
 * Return: the enum lun_ua bit taken, or 0 if none is pending.
 */
unsigned int lun_ua_take(struct lun_table *t, const struct lun_info *info,
			 uint32_t nexus, uint8_t *asc, uint8_t *ascq);

/**
 * lun_ua_set() - raise unit attention @bits on one LUN for every I_T nexus
 * except @except (SPC-4: the nexus whose command caused a change is not
 * told of it; a LUN RESET is reported to the other nexuses).
 * @t: the table.
 * @lun: LUN number.
 * @bits: enum lun_ua bits; LUN_UA_INJECTED uses @asc and @ascq;
 *	LUN_UA_LUNS_CHANGED is table-wide (as lun_ua_set_all()).
 * @asc: ASC for LUN_UA_INJECTED.
 * @ascq: ASCQ for LUN_UA_INJECTED.
 * @except: the originating nexus, or LUN_NEXUS_NONE.
 *
 * Cost: O(1) per condition, whatever the number of nexuses.
 */
void lun_ua_set(struct lun_table *t, uint32_t lun, unsigned int bits,
		uint8_t asc, uint8_t ascq, uint32_t except);

/**
 * lun_ua_set_all() - raise unit attention @bits on every LUN, for every I_T
 * nexus except @except.
 * @t: the table.
 * @bits: LUN_UA_RESET, LUN_UA_LUNS_CHANGED or LUN_UA_ALUA_CHANGED.
 * @except: the originating nexus, or LUN_NEXUS_NONE.
 *
 * Cost: O(1) (a table generation each nexus compares on its next command),
 * plus, with @except, one pass over the nexus/LUN entries.
 */
void lun_ua_set_all(struct lun_table *t, unsigned int bits, uint32_t except);

/**
 * lun_ua_nexus_gone() - forget an I_T nexus's unit attention state (its
 * session ended); should the id come back, it starts afresh.
 * @t: the table.
 * @nexus: the nexus id.
 *
 * Cost: one pass over the nexus/LUN entries.
 */
void lun_ua_nexus_gone(struct lun_table *t, uint32_t nexus);

/**
 * lun_ua_bytes() - memory the per-nexus unit attention state holds.
 * @t: the table.
 *
 * Return: bytes.
 */
size_t lun_ua_bytes(struct lun_table *t);

/**
 * lun_mode_set() - store a LUN's changeable mode bits (MODE SELECT);
 * raises MODE PARAMETERS CHANGED on the LUN when they change, for every
 * I_T nexus but @except.
 * @t: the table.
 * @lun: LUN number.
 * @mode: enum lun_mode bits.
 * @except: the nexus whose MODE SELECT it is, or LUN_NEXUS_NONE.
 *
 * Return: 0, -ENOENT.
 */
int lun_mode_set(struct lun_table *t, uint32_t lun, uint16_t mode,
		 uint32_t except);

/**
 * lun_serial() - the unit serial number, "SDS" + 8 hex digits of the seed +
 * 6 of the LUN number: unique across 2^20 LUNs (scsi_debug's repeat past
 * LUN 1000) and distinct between targets with different seeds.
 * @t: the table.
 * @lun: LUN number (present or not: the serial is a function of it).
 * @buf: out, NUL-terminated.
 * @len: size of @buf, at least LUN_SERIAL_LEN + 1.
 *
 * Return: the length (LUN_SERIAL_LEN), or -ENOSPC.
 */
#define LUN_SERIAL_LEN 17
int lun_serial(const struct lun_table *t, uint32_t lun, char *buf, size_t len);

/* I/O flags for lun_write() and friends. */
#define LUN_IO_FUA 1u /* durable before completion */
#define LUN_IO_UNMAP 2u /* write_zeroes may deallocate */

/*
 * Block I/O on a pinned LUN. LBA ranges are checked by the caller (scsi/ has
 * the sense codes); these check again and return -ERANGE. Data moves
 * through iovecs of exactly nblocks * block_size bytes. Return: 0, or
 * -errno: -ERANGE, -ENOSPC (store full), -EIO, -EROFS (software write
 * protect), -ENOMEDIUM (offline).
 */
int lun_read(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	     uint32_t nblocks, const struct iovec *iov, unsigned int iovcnt);
int lun_write(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	      uint32_t nblocks, const struct iovec *iov, unsigned int iovcnt,
	      unsigned int flags);
int lun_write_zeroes(struct lun_table *t, const struct lun_info *info,
		     uint64_t lba, uint64_t nblocks, unsigned int flags);
int lun_unmap(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	      uint64_t nblocks);
int lun_flush(struct lun_table *t, const struct lun_info *info);

/*
 * Change watchers: who keeps a copy of what a LUN reads (the FUSE front
 * end's page cache) hears of every change that reaches the LUN layer, by
 * whatever path it came (iSCSI, TCMU, FUSE, the control socket). The call
 * comes synchronously in the thread that made the change, after it is in
 * the store and before that thread reports it done, so a watcher that
 * finishes its invalidation before it returns gives read-after-write
 * coherence to every other path.
 */
enum lun_change_kind {
	LUN_CHANGE_DATA =
		1, /* [lba, lba + nblocks) written, zeroed, unmapped */
	LUN_CHANGE_SIZE, /* capacity changed (lun_resize()) */
	LUN_CHANGE_STATE, /* state or medium: reads may fail or work now */
	LUN_CHANGE_ADDED, /* lun_add() */
	LUN_CHANGE_REMOVED, /* lun_remove() */
	LUN_CHANGE_FAULT, /* a fault rule now covers [lba, lba + nblocks) */
};

struct lun_change {
	enum lun_change_kind kind;
	uint32_t lun_first; /* inclusive */
	uint32_t lun_last; /* inclusive */
	uint64_t lba; /* LUN_CHANGE_DATA and _FAULT; else 0 */
	uint64_t nblocks; /* ditto; UINT64_MAX: to the end */
};

typedef void lun_watch_fn(void *arg, const struct lun_change *c);

#define LUN_MAX_WATCHERS 4

/**
 * lun_watch_add() - call @fn(@arg, change) for every change from now on.
 * @t: the table.
 * @fn: the watcher; must not call lun_watch_add() or lun_watch_remove().
 * @arg: its argument.
 *
 * Context: any thread.
 * Return: a watcher id (>= 0) for lun_watch_remove(); -ENOSPC when
 * LUN_MAX_WATCHERS are registered.
 */
int lun_watch_add(struct lun_table *t, lun_watch_fn *fn, void *arg);

/**
 * lun_watch_remove() - stop calling watcher @id; when it returns, no call
 * of it is running or will start.
 * @t: the table.
 * @id: from lun_watch_add().
 *
 * Context: not from inside a watcher.
 */
void lun_watch_remove(struct lun_table *t, int id);

/**
 * lun_changed() - tell the watchers of a change made outside this module
 * (a fault rule added).
 * @t: the table.
 * @c: the change.
 *
 * Context: any thread that holds no lock a watcher may need.
 */
void lun_changed(struct lun_table *t, const struct lun_change *c);

/* Most LUNs per-LUN counters cover at once (40 bytes each, allocated on
 * first use and kept). */
#define LUN_STATS_MAX 65536u

/* One LUN's counters: lun_read() and lun_write() calls, whatever the
 * front end (SCSI commands and FUSE requests alike). */
struct lun_io_stats {
	uint64_t reads, writes;
	uint64_t read_bytes, write_bytes;
	uint64_t errors; /* reads and writes that failed */
};

/**
 * lun_stats_enable() - count reads and writes of LUNs @first..@last
 * (inclusive) from now on, from zero; replaces any earlier window.
 * @t: the table.
 * @first: first LUN.
 * @last: last LUN; at most LUN_STATS_MAX LUNs.
 *
 * While on, each read and write of a LUN in the window costs three
 * relaxed atomic adds; while off, one load and a branch.
 * Context: the control path.
 * Return: 0, -EINVAL (empty, too wide, past max_luns), -ENOMEM.
 */
int lun_stats_enable(struct lun_table *t, uint32_t first, uint32_t last);

/**
 * lun_stats_disable() - stop counting per LUN (the memory is kept).
 * @t: the table.
 */
void lun_stats_disable(struct lun_table *t);

/**
 * lun_stats_window() - the LUNs counted now.
 * @t: the table.
 * @first: out, first LUN.
 * @last: out, last LUN, inclusive.
 *
 * Return: 1 (on, @first and @last set), 0 (off).
 */
int lun_stats_window(const struct lun_table *t, uint32_t *first,
		     uint32_t *last);

/**
 * lun_stats_get() - one LUN's counters.
 * @t: the table.
 * @lun: the LUN.
 * @out: out, its counters (a little stale while I/O runs).
 *
 * Return: 0, -ENOENT (not in the window, or counting is off).
 */
int lun_stats_get(const struct lun_table *t, uint32_t lun,
		  struct lun_io_stats *out);

/**
 * lun_lba_status() - whether @lba is mapped, and for how many blocks the
 * same holds (GET LBA STATUS, SEEK_DATA/SEEK_HOLE). Table blocks of a
 * synthetic partition table count as mapped.
 * @t: the table.
 * @info: the LUN.
 * @lba: first block.
 * @max: most blocks to look at.
 * @run: out, blocks from @lba in the same state (>= 1).
 *
 * Return: 1 mapped, 0 deallocated, -ERANGE.
 */
int lun_lba_status(struct lun_table *t, const struct lun_info *info,
		   uint64_t lba, uint64_t max, uint64_t *run);

/**
 * lun_wwn() - the NAA-6 WWN of LUN @lun: 6h, the OUI, 36 bits of the seed,
 * and an extension of the seed's high bits and the LUN number.
 * @t: the table.
 * @lun: LUN number.
 * @hi: out, bytes 0-7 big-endian.
 * @lo: out, bytes 8-15 big-endian.
 */
void lun_wwn(const struct lun_table *t, uint32_t lun, uint64_t *hi,
	     uint64_t *lo);

/**
 * lun_seed() - the table's seed.
 * @t: the table.
 *
 * Return: the seed.
 */
uint64_t lun_seed(const struct lun_table *t);

/**
 * lun_store() - the table's store.
 * @t: the table.
 *
 * Return: the store.
 */
struct store *lun_store(const struct lun_table *t);

/**
 * lun_bytes_used() - bytes the store holds for one LUN (its thin usage).
 * @t: the table.
 * @lun: LUN number; a bad or absent one has none.
 *
 * Cost: mem store, a counter (O(1)); file store, one fstatat().
 * Context: any thread.
 * Return: the byte count; 0 for a LUN without data.
 */
uint64_t lun_bytes_used(const struct lun_table *t, uint32_t lun);

/**
 * lun_data_bytes() - bytes of data the store holds for every LUN.
 * @t: the table.
 *
 * Cost: a store statistics snapshot: mem store, O(shards + LUN groups in
 * use); file store, a stat of every LUN file (monitoring, not per command).
 * Context: any thread.
 * Return: the byte count.
 */
uint64_t lun_data_bytes(const struct lun_table *t);

/**
 * lun_table_bytes() - memory the table holds (for bytes/LUN).
 * @t: the table.
 *
 * Return: bytes.
 */
size_t lun_table_bytes(const struct lun_table *t);

#endif /* SDSWARM_LUN_H */
