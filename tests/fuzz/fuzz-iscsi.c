// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the iSCSI PDU decoder, the login and text state
 * machines and full feature phase, as one connection sees them. The real
 * front end runs (iscsi_fe_start(), one worker thread); each input becomes
 * one connection handed to the worker as a socketpair end, exactly as
 * accept() would (ISCSI_MSG_CONN), so no network is involved. The harness
 * writes the input after its first byte, shuts its side down and reads
 * everything the target answers until the target closes: each input runs
 * to its end, and a target that never closes is a hang (-timeout).
 *
 * First byte, bit 0: which portal. 0: no authentication, two targets of
 * 16 LUNs (a GPT LUN, 4 KiB blocks, a delay and a hang fault); 1: CHAP
 * with mutual CHAP and an initiator ACL.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "fault.h"
#include "frontend/iscsi/iscsi.h"
#include "frontend/iscsi/iscsi_i.h"
#include "log.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "store/store.h"
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_open[] = "[target]\n"
				"seed = 11\n"
				"max_luns = 64\n"
				"[luns]\n"
				"count = 3\n"
				"size = 4M\n"
				"partitions = 1\n"
				"ptable = gpt\n"
				"[luns.big]\n"
				"first = 16\n"
				"count = 2\n"
				"size = 4M\n"
				"block_size = 4096\n"
				"partitions = 0\n"
				"[faults]\n"
				"fault.1 = delay luns=1 lba=0-7 delay=1us\n"
				"fault.2 = hang luns=2 lba=100\n"
				"fault.3 = medium-read luns=16 lba=8-15\n"
				"[iscsi]\n"
				"enabled = yes\n"
				"portal = 127.0.0.1:3260\n"
				"iqn_prefix = iqn.2026-01.io.sdswarm.fuzz\n"
				"targets = 2\n"
				"luns_per_target = 16\n"
				"threads = 1\n"
				"max_recv_data_segment_length = 8192\n"
				"max_burst_length = 65536\n"
				"first_burst_length = 16384\n";

static const char conf_chap[] =
	"[target]\n"
	"max_luns = 64\n"
	"[luns]\n"
	"count = 1\n"
	"size = 1M\n"
	"partitions = 0\n"
	"[iscsi]\n"
	"enabled = yes\n"
	"portal = 127.0.0.1:3260\n"
	"iqn_prefix = iqn.2026-01.io.sdswarm.chap\n"
	"targets = 1\n"
	"luns_per_target = 1\n"
	"threads = 1\n"
	"chap_user = fuzzuser\n"
	"chap_secret = fuzzsecret123\n"
	"mutual_user = fuzztarget\n"
	"mutual_secret = mutualsecret99\n"
	"initiators = iqn.2026-01.test:fuzz-a, iqn.2026-01.test:fuzz-b\n";

/* One daemon's worth of state behind one portal. */
struct portal {
	struct cfg *cfg;
	struct store *store;
	struct lun_table *luns;
	struct fault_table *faults;
	struct scsi_target tgt;
	struct target target;
	struct iscsi_fe *fe;
};

static struct portal portals[2];

static void portal_start(struct portal *p, const char *conf)
{
	struct lun_table_params tp;
	struct cfg_parser *cp;
	unsigned int i;
	void *state;

	if (cfg_parser_create(&cp) || cfg_parse_string(cp, "fuzz", conf) ||
	    cfg_finish(cp, &p->cfg)) {
		fprintf(stderr, "fuzz-iscsi: config: %s\n",
			cp ? cfg_errors(cp) : "no memory");
		abort();
	}
	cfg_parser_destroy(cp);
	/* the listeners are unused: any free port */
	p->cfg->iscsi.port = 0;
	for (i = 0; i < p->cfg->iscsi.nportals; i++)
		p->cfg->iscsi.portals[i].port = 0;
	tp = (struct lun_table_params){.max_luns = p->cfg->target.max_luns,
				       .seed = p->cfg->target.seed};
	if (store_mem_create(&p->store, NULL))
		abort();
	tp.store = p->store;
	if (lun_table_create(&p->luns, &tp))
		abort();
	for (i = 0; i < p->cfg->ngroups; i++)
		if (lun_group_add(p->luns, &p->cfg->groups[i]) < 0)
			abort();
	if (fault_table_create(&p->faults))
		abort();
	for (i = 0; i < p->cfg->nfaults; i++)
		if (fault_add(p->faults, &p->cfg->faults[i]) < 0)
			abort();
	p->tgt = (struct scsi_target){
		.luns = p->luns, .faults = p->faults, .port_id = 1, .tpg = 1};
	p->target = (struct target){
		.luns = p->luns, .faults = p->faults, .scsi = &p->tgt};
	if (target_init(&p->target) ||
	    iscsi_fe_start(&p->cfg->iscsi, &p->target, &state))
		abort();
	p->fe = state;
}

static void portal_stop(struct portal *p)
{
	iscsi_fe_stop(p->fe);
	target_fini(&p->target);
	scsi_target_fini(&p->tgt);
	fault_table_destroy(p->faults);
	lun_table_destroy(p->luns);
	store_destroy(p->store);
	cfg_free(p->cfg);
}

static void stop_all(void)
{
	portal_stop(&portals[0]);
	portal_stop(&portals[1]);
}

static void init(void)
{
	log_set_level(LOG_CRIT);
	signal(SIGPIPE, SIG_IGN);
	portal_start(&portals[0], conf_open);
	portal_start(&portals[1], conf_chap);
	atexit(stop_all);
}

/* Feeds @data to a new connection and drains it until the target closes. */
static void one_connection(struct iscsi_fe *fe, const uint8_t *data,
			   size_t size)
{
	struct pollfd pfd;
	uint8_t sink[65536];
	size_t off = 0;
	bool wr_open = true;
	ssize_t n;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv))
		abort();
	if (iscsi_worker_post(fe->workers[0], ISCSI_MSG_CONN, sv[0], 0, 0))
		abort();
	pfd.fd = sv[1];
	for (;;) {
		if (wr_open && off == size) {
			shutdown(sv[1], SHUT_WR);
			wr_open = false;
		}
		pfd.events = POLLIN | (wr_open ? POLLOUT : 0);
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (pfd.revents & POLLOUT) {
			n = write(sv[1], data + off, size - off);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN)
				wr_open = false; /* the target closed early */
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(sv[1], sink, sizeof(sink));
			if (n == 0 || (n < 0 && errno != EAGAIN))
				break; /* the target closed: input done */
		}
	}
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!portals[0].fe)
		init();
	if (size < 1)
		return 0;
	one_connection(portals[data[0] & 1].fe, data + 1, size - 1);
	return 0;
}
