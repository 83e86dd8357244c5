/* SPDX-License-Identifier: MIT */
/*
 * The iSCSI front end: an RFC 7143 target on the [iscsi] portal, serving
 * up to 16 targets of 16,384 LUNs each from N worker threads, each with
 * its own epoll loop over non-blocking sockets.
 */
#ifndef SDSWARM_ISCSI_H
#define SDSWARM_ISCSI_H

struct cfg_iscsi;
struct cfg_portal;
struct target;

/**
 * iscsi_fe_start() - listen on the portal and start the worker threads.
 * @ic: the [iscsi] section (copied).
 * @t: the target: its SCSI state (commands point at @t->scsi, whose
 *	target name, PREEMPT AND ABORT hook and protocol id are filled in
 *	when unset) and the registry of counters and sessions; must outlive
 *	the front end.
 * @state: out, the front end (for iscsi_fe_stop()), only on 0.
 *
 * Target i is "cfg_iscsi_target_name(i)" and sees table LUNs
 * i * luns_per_target onwards. Each worker registers its SCSI counters,
 * and the front end its session list, in @t's registry.
 * Context: the daemon's main thread, before it serves.
 * Return: 0 running; 1 when [iscsi] enabled is false (nothing started);
 * -EADDRINUSE, -EADDRNOTAVAIL or another -errno of socket(), bind() or
 * listen(); -ENOMEM; the -errno of pthread_create().
 */
int iscsi_fe_start(const struct cfg_iscsi *ic, struct target *t, void **state);

/**
 * iscsi_fe_portal() - where portal @i listens.
 * @state: from iscsi_fe_start().
 * @i: the portal's position in [iscsi] portal, from 0.
 * @out: out, its text ("HOST:PORT", IPv6 in brackets), host and port:
 *	for a portal written with port 0, the port the kernel picked.
 *
 * Context: any thread, once iscsi_fe_start() returned 0.
 * Return: 0, or -ENOENT past the portals.
 */
int iscsi_fe_portal(const void *state, unsigned int i, struct cfg_portal *out);

/**
 * iscsi_fe_stop() - close the portal and every connection, dropping the
 * commands in flight, and join the workers.
 * @state: from iscsi_fe_start(); NULL is a no-op.
 *
 * Context: the thread that started it.
 */
void iscsi_fe_stop(void *state);

#endif /* SDSWARM_ISCSI_H */
