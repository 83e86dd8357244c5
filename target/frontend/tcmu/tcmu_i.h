/* SPDX-License-Identifier: MIT */
/*
 * The TCMU front end's insides: the command ring of one target_core_user
 * device as the kernel lays it out (mailbox, entries, data area), and the
 * serving of one device's ring through scsi_exec(). No configfs, no threads.
 */
#ifndef SDSWARM_TCMU_I_H
#define SDSWARM_TCMU_I_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * The uAPI header pulls in <linux/uio.h>, whose struct iovec is libc's
 * own (same layout): its guard keeps the second definition out.
 */
#ifndef __LINUX_UIO_H
#define __LINUX_UIO_H
#include <linux/types.h>
#endif
#include <linux/target_core_user.h>

#include "scsi/scsi.h"

/*
 * Iovecs one command may carry. The kernel gives one per run of
 * contiguous data-area pages: a command of N bytes has at most N / 4 KiB
 * + 1. 4,096 covers a 16 MiB command; the loop owns one array of them.
 */
#define TCMU_IOV_MAX 4096u
/* Commands a device may hold back at once (injected delays and hangs). */
#define TCMU_PARK_MAX 16u

/* Where the kernel's ring of one device is mapped, and our cursors in it. */
struct tcmu_ring {
	uint8_t *base; /* the mapping: the mailbox is at offset 0 */
	size_t size; /* bytes mapped: mailbox, ring and data area */
	struct tcmu_mailbox *mb;
	uint8_t *cmdr; /* base + cmdr_off */
	uint32_t cmdr_size;
	uint32_t read; /* next entry to parse */
	uint32_t tail; /* next slot a completion goes into */
	uint32_t published; /* the tail the kernel last saw */
	uint32_t open; /* commands read, not yet completed */
	uint16_t caps; /* TCMU_MAILBOX_FLAG_CAP_* */
};

/* What tcmu_ring_next() found. */
enum tcmu_next {
	TCMU_NEXT_EMPTY = 0, /* nothing more before cmd_head */
	TCMU_NEXT_CMD, /* a command, in the struct tcmu_req */
	TCMU_NEXT_TMR, /* a task management notification */
};

/* One parsed ring entry. */
struct tcmu_req {
	uint16_t cmd_id;
	/* the entry could not be served (bad offsets, too many iovecs,
	 * bidirectional): complete it with TCMU_DONE_UNKNOWN */
	bool bad;
	uint8_t cdb_len;
	uint8_t cdb[SCSI_CDB_MAX];
	unsigned int iovcnt;
	uint32_t xfer_len; /* sum of the iovecs */
	struct iovec *iov; /* the caller's array of TCMU_IOV_MAX */
	/* TCMU_NEXT_TMR: */
	uint8_t tmr_type;
	uint32_t tmr_cnt;
	const uint16_t *tmr_ids; /* in the ring; valid until the next call */
};

/* How tcmu_ring_complete() reports a command. */
struct tcmu_done {
	uint8_t status;
	uint8_t sense_len;
	bool unknown; /* TCMU_UFLAG_UNKNOWN_OP: the kernel fails it */
	uint32_t read_len; /* Data-In bytes moved; 0: not reported */
	const uint8_t *sense;
};

/**
 * tcmu_ring_init() - take over a mapped ring.
 * @r: out, the ring.
 * @base: the mapping of the device's map0, offset 0.
 * @size: its length (maps/map0/size).
 *
 * Checks the mailbox version (TCMU_MAILBOX_VERSION) and that the command
 * ring lies inside the mapping; reads the capability flags. The cursors
 * start at the mailbox's cmd_tail (a new device has head == tail == 0).
 * Context: any; reads the mailbox only.
 * Return: 0; -EPROTONOSUPPORT for another mailbox version; -EPROTO for a
 * ring that does not fit @size.
 */
int tcmu_ring_init(struct tcmu_ring *r, void *base, size_t size);

/**
 * tcmu_ring_next() - parse the next entry the kernel queued.
 * @r: the ring.
 * @req: out, the command or the TMR; @req->iov must point at an array of
 *	TCMU_IOV_MAX iovecs, filled with pointers into the data area.
 *
 * PAD entries are skipped; an entry of an opcode this code does not know
 * is flagged TCMU_UFLAG_UNKNOWN_OP and skipped, as the uAPI asks. The CDB
 * is copied out (a completion may overwrite the slot), the iovecs' offsets
 * are turned into pointers and bounds-checked against the data area.
 * A command must be completed with tcmu_ring_complete(), in any order
 * when the kernel offers out-of-order completion (CAP_OOOC), else in the
 * order read.
 * Context: the thread that owns @r.
 * Return: enum tcmu_next; -EPROTO when an entry's length is not a
 * nonzero multiple of 8 that ends inside the ring and before cmd_head
 * (the ring is broken: stop serving it).
 */
int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_req *req);

/**
 * tcmu_ring_complete() - write one command's completion.
 * @r: the ring.
 * @cmd_id: the command (struct tcmu_req.cmd_id).
 * @d: status, sense (at most TCMU_SENSE_BUFFERSIZE bytes are kept),
 *	read length, unknown-op.
 *
 * The completion goes into the oldest slot not yet completed, which is
 * the command's own slot unless others were held back (then the slot is
 * relabelled with @cmd_id, which CAP_OOOC allows). The kernel sees it
 * at the next tcmu_ring_publish().
 * Context: the thread that owns @r.
 * Return: 0; -EPROTO when no command is open (a caller bug).
 */
int tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id,
		       const struct tcmu_done *d);

/**
 * tcmu_ring_publish() - move the mailbox's cmd_tail to our tail.
 * @r: the ring.
 *
 * One release store, after every completion's bytes.
 * Context: the thread that owns @r.
 * Return: true when cmd_tail moved: the kernel must be told (a 4-byte
 * write to the uio fd), once for the whole batch.
 */
bool tcmu_ring_publish(struct tcmu_ring *r);

/* A command held back: an injected delay (result known) or hang. */
struct tcmu_parked {
	uint16_t cmd_id;
	uint8_t status;
	uint8_t sense_len;
	uint32_t read_len;
	uint64_t due_ns; /* CLOCK_MONOTONIC; UINT64_MAX: never */
	uint8_t sense[TCMU_SENSE_BUFFERSIZE];
};

/* One exported LUN: its backstore's ring and what its commands need. */
struct tcmu_dev {
	struct tcmu_ring ring;
	int fd; /* /dev/uioN; -1 in unit tests without one */
	uint32_t lun; /* table LUN */
	struct scsi_view view; /* {lun, 1}: the backstore sees only it */
	bool broken; /* stopped serving: a malformed ring */
	unsigned int nparked;
	struct tcmu_parked *parked; /* TCMU_PARK_MAX, on the first hold */
	uint64_t notifies; /* uio writes: batches told to the kernel */
	struct tcmu_dev *timer_next; /* on the loop's list while delays wait */
	bool on_timer;
};

/* What serving needs besides the device: one per loop thread. */
struct tcmu_serve_ctx {
	struct scsi_target *tgt;
	struct scsi_stats *stats; /* or NULL */
	const char *initiator; /* the fabric's initiator port name */
	uint32_t nexus;
	struct iovec *iov; /* TCMU_IOV_MAX */
};

/**
 * tcmu_dev_serve() - run every command the kernel queued on @d's ring
 * through scsi_exec(), complete the ones due, and tell the kernel once.
 * @x: the loop's context.
 * @d: the device.
 * @now_ns: CLOCK_MONOTONIC now, for held-back commands.
 *
 * Commands whose fault delays them are completed once @now_ns passes
 * their due time (the caller calls again then: tcmu_dev_next_due());
 * hung ones only when a TMR entry names them (then TASK ABORTED). With
 * TCMU_PARK_MAX held, or without CAP_OOOC, reading stops until one is
 * due. A broken ring marks @d broken and stops serving it.
 * Context: the thread that owns @d; no allocation but the first hold's
 * parking array (TCMU_PARK_MAX entries).
 * Return: commands completed (>= 0); -EPROTO when the ring broke.
 */
int tcmu_dev_serve(struct tcmu_serve_ctx *x, struct tcmu_dev *d,
		   uint64_t now_ns);

/**
 * tcmu_dev_next_due() - when @d's earliest delayed command is due.
 * @d: the device.
 *
 * Context: the thread that owns @d.
 * Return: CLOCK_MONOTONIC ns; UINT64_MAX when none waits on time.
 */
uint64_t tcmu_dev_next_due(const struct tcmu_dev *d);

/**
 * tcmu_dev_release() - free what tcmu_dev_serve() allocated (the parking
 * array). The ring mapping and the fd are the caller's.
 * @d: the device.
 *
 * Context: the thread that owns @d, or any once the loop forgot it.
 */
void tcmu_dev_release(struct tcmu_dev *d);

/* One TCM-USER netlink event (ADDED_DEVICE, REMOVED_DEVICE, ...). */
struct tcmu_nl_event {
	uint8_t cmd; /* enum tcmu_genl_cmd */
	int32_t minor; /* uio minor; -1 when absent */
	uint32_t device_id;
	char device[128]; /* the uio name, "tcm-user/H/NAME/CFG" */
	char dev_config[128]; /* RECONFIG: the new dev_config */
	uint64_t dev_size; /* RECONFIG: the new size, when has_size */
	bool has_size;
	uint8_t writecache; /* RECONFIG: when has_writecache */
	bool has_writecache;
};

/**
 * tcmu_nl_parse() - decode one generic netlink message of the family.
 * @buf: the message (netlink header first).
 * @len: bytes received.
 * @family: the family id tcmu_nl_open() resolved.
 * @ev: out, the event.
 *
 * Context: any; pure.
 * Return: 1 an event in @ev; 0 a message of another family (ignored);
 * -EPROTO for a truncated or malformed message.
 */
int tcmu_nl_parse(const void *buf, size_t len, uint16_t family,
		  struct tcmu_nl_event *ev);

/**
 * tcmu_nl_open() - a netlink socket joined to TCM-USER's "config" group.
 * @fd: out, the socket (blocking; the loop reads it when epoll says so).
 * @family: out, the family id.
 *
 * Never sends TCMU_CMD_SET_FEATURES: the kernel then waits for no reply
 * (netlink.c says why).
 * Context: any thread; one request to the generic netlink controller,
 * answered at once (at most 2 s).
 * Return: 0; -ENOENT when the family is not registered (target_core_user
 * not loaded); another -errno of socket(), bind(), send() or recv().
 */
int tcmu_nl_open(int *fd, uint16_t *family);

#endif /* SDSWARM_TCMU_I_H */
