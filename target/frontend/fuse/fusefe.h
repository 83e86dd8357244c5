/* SPDX-License-Identifier: MIT */
/*
 * The FUSE front end: every disk and partition as a regular file in one
 * directory, named as the kernel's sd driver would name it. Reads, writes
 * and fallocate go straight to the LUN layer (no SCSI in between).
 */
#ifndef SDSWARM_FUSEFE_H
#define SDSWARM_FUSEFE_H

struct cfg_fuse;
struct target;

/*
 * The naming rule. The disk of table LUN L is sdnum_name(prefix, L): the
 * disk index is the LUN number itself, which is the kernel's probe order
 * whenever the LUNs are dense from 0 (the default and every shipped
 * config). Names of absent LUNs do not exist; with sparse LUNs the kernel
 * would compact the indices and this front end does not. Partition N of
 * that disk is sdnum_name_part(prefix, L, N): the numbers of the synthetic
 * table while the host has not written its own (ptable_layout()), and
 * afterwards the numbers ptable_parse() finds on the disk, up to 255.
 *
 * Inode numbers: the directory is 1; (L, N) is 2 + L * 256 + N (st_ino);
 * the FUSE node id the kernel keys its inodes by adds the LUN's generation
 * in its high 32 bits, so a LUN removed and added again is new inodes
 * (new page caches), and the old ones answer ENXIO. Directory
 * offsets: "." and ".." end at 1 and 2; the entry (L, N) sits at
 * 3 + L * 256 + N, so a telldir() cookie stays valid across LUNs coming
 * and going.
 */

/* The inode of the directory, and of LUN @lun's partition @part (0: disk). */
#define FUSEFE_ROOT_INO 1u
#define FUSEFE_INO(lun, part) (2u + ((unsigned long long)(lun) << 8 | (part)))

/* A request held by a hang fault gives up with EIO after this long. */
#define FUSEFE_HANG_TIMEOUT_S 60
/* Injected delays are cut to this long in a FUSE worker. */
#define FUSEFE_DELAY_MAX_S 60

/**
 * fusefe_start() - mount the front end and start serving it.
 * @fc: the [fuse] section (mountpoint, threads, options, attr_timeout,
 *	cache, prefetch, prefetch_budget).
 * @t: the target: its LUN table and fault rules, its names' scheme and
 *	prefix, its groups' partition counts (to predict dev_ts past
 *	partition 15, and the files prefetch would fill), its space limit
 *	(statfs) and the registry the request counters go into; must
 *	outlive the front end.
 * @state: out, the front end (for fusefe_stop()), only on 0.
 *
 * Mounts with "default_permissions,fsname=sdswarm,subtype=sdswarm" and the
 * [fuse] options after them, serves with up to [fuse] threads workers
 * (one cloned /dev/fuse descriptor each) and starts a thread that notices
 * LUNs added and removed once a second and rewritten partition tables at
 * once, and tells the kernel to drop what it cached about them. Waits for
 * the kernel's INIT: [fuse] cache = page without FUSE_NO_OPEN_SUPPORT is
 * refused. Subscribes to the LUN layer's and the fault table's changes
 * (lun_watch_add(), fault_watch_set()). A stale
 * mount left by a daemon that died (the mount point answers ENOTCONN) is
 * reported with the commands that clear it, and nothing is mounted.
 *
 * Context: the daemon's main thread, with SIGTERM and SIGINT blocked.
 * Installs a no-op handler for SIGRTMIN + 5 (how fusefe_stop() wakes the
 * session loop) and routes libfuse's messages to the log.
 * Return: 0 running; 1 when [fuse] has no mount point (nothing started);
 * -ENOTCONN for a stale mount; -EOPNOTSUPP for a cache mode the kernel
 * does not offer; -ETIMEDOUT with no INIT in 10 s; -ENOSPC with every
 * change watcher slot taken; -EBUSY if the mount point already is a FUSE
 * mount; -ENOENT or -ENOTDIR for a bad mount point; -ENODEV when there is
 * no /dev/fuse; -EINVAL when libfuse rejects the options; the -errno of
 * the mount (-EPERM without the privilege); -ENOMEM; the -errno of
 * pthread_create().
 */
int fusefe_start(const struct cfg_fuse *fc, struct target *t, void **state);

/**
 * fusefe_stop() - stop serving, unmount and free the front end.
 * @state: from fusefe_start(); NULL is a no-op.
 *
 * Requests held by a hang or delay fault end with EIO; files still open
 * fail with ENOTCONN from then on. Bounded: if the session loop does not
 * end within 5 s the connection is aborted (a forced unmount).
 *
 * Context: the thread that started it.
 */
void fusefe_stop(void *state);

#endif /* SDSWARM_FUSEFE_H */
