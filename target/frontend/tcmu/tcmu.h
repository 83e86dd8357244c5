/* SPDX-License-Identifier: MIT */
/*
 * The TCMU front end: each LUN as a LIO target_core_user backstore that
 * sdswarmd creates through configfs and serves from one epoll loop over
 * every device's command ring, optionally exported through tcm_loop.
 */
#ifndef SDSWARM_TCMU_H
#define SDSWARM_TCMU_H

struct cfg_tcmu;
struct target;

/**
 * tcmu_fe_start() - create and serve a backstore per present LUN.
 * @tc: the [tcmu] section (copied).
 * @target: the target: its LUN table, the SCSI state commands point at
 *	(@target->scsi) and the registry its SCSI counters go into; must
 *	outlive the front end.
 * @state: out, the front end (for tcmu_fe_stop()), only on 0.
 *
 * Starts the loop thread, then in LUN order makes
 * /sys/kernel/config/target/core/HBA/PREFIXlun (dev_config=sdswarm/NAME,
 * dev_size, hw_block_size, max_data_area_mb, cmd_ring_size_mb), enables
 * it, opens and maps its /dev/uioN; with fabric = loopback, then a
 * tcm_loop target naa.5001405... with a nexus, and each LUN linked in as
 * its own LUN number, which makes the kernel scan it (each link returns
 * once the kernel's INQUIRY was answered). A manager thread then follows
 * the LUNs the control socket adds and removes.
 * Context: the daemon's main thread, before it serves. Blocks for the
 * configfs work: a few ms a LUN.
 * Return: 0 running; 1 when [tcmu] enabled is false; -ENOENT when
 * configfs has no target core (target_core_user not loaded, configfs
 * not mounted); -EEXIST when a backstore of that name is left over;
 * -EPROTONOSUPPORT for a ring of another mailbox version; -ENOMEM;
 * another -errno of the configfs writes, open(), mmap() or
 * pthread_create(). Whatever it made is removed again on failure.
 */
int tcmu_fe_start(const struct cfg_tcmu *tc, struct target *target,
		  void **state);

/**
 * tcmu_fe_stop() - unexport and remove everything tcmu_fe_start() and the
 * manager made, in reverse order, then stop the loop.
 * @state: from tcmu_fe_start(); NULL is a no-op.
 *
 * The loop keeps serving while the fabric LUNs go (the kernel's sd sends
 * SYNCHRONIZE CACHE as a disk is removed).
 * Context: the thread that started it.
 */
void tcmu_fe_stop(void *state);

#endif /* SDSWARM_TCMU_H */
