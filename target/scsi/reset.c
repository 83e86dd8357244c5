// SPDX-License-Identifier: MIT
/*
 * What a LOGICAL UNIT RESET and a TARGET WARM or COLD RESET do to the
 * logical units (SAM-5 6.3.2, 7.7, 7.8), whatever transport asked for
 * them: RESERVE reservations released, the reset unit attention raised.
 * Ending the tasks and the connections stays with the transport.
 */
#include <errno.h>

#include "lun.h"
#include "scsi_i.h"

int scsi_lun_reset(struct scsi_target *t, const struct scsi_view *view,
		   uint32_t lun)
{
	uint64_t table = lun;

	if (view) {
		if (lun >= view->count)
			return -ENODEV;
		table += view->base;
	}
	if (table > UINT32_MAX || !lun_exists(t->luns, (uint32_t)table))
		return -ENODEV;
	scsi_pr_lun_reset(t, view, lun);
	/* SAM-5: every I_T nexus, the one that asked too */
	lun_ua_set(t->luns, (uint32_t)table, LUN_UA_RESET, 0, 0,
		   LUN_NEXUS_NONE);
	return 0;
}

void scsi_target_reset(struct scsi_target *t, const struct scsi_view *view)
{
	uint32_t first = 0, last = UINT32_MAX;
	int l;

	scsi_pr_target_reset(t, view);
	if (view) {
		if (!view->count)
			return;
		first = view->base;
		last = view->base + view->count - 1;
	}
	/*
	 * This target's LUNs only: with views, each (an iSCSI IQN) is a
	 * target of its own, and the other targets' LUNs were not reset.
	 * One raise per present LUN (16,384 at most in a view), for a rare
	 * TMF; lun_find() clamps @last to the table.
	 */
	lun_for_each(t->luns, l, first, last)
		lun_ua_set(t->luns, (uint32_t)l, LUN_UA_RESET, 0, 0,
			   LUN_NEXUS_NONE);
}
