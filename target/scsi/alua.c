// SPDX-License-Identifier: MIT
/*
 * Asymmetric logical unit access, implicit only (SPC-4 5.15): the state
 * of each target port group, REPORT TARGET PORT GROUPS, and the run-time
 * state changes the control socket makes, with their unit attention.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "parse.h"
#include "scsi_i.h"

static const char *const state_names[] = {
	[SCSI_ALUA_OPTIMIZED] = "active/optimized",
	[SCSI_ALUA_NON_OPTIMIZED] = "active/non-optimized",
	[SCSI_ALUA_STANDBY] = "standby",
	[SCSI_ALUA_UNAVAILABLE] = "unavailable",
};

const char *scsi_alua_state_name(enum scsi_alua_state state)
{
	if ((unsigned int)state >= ARRAY_SIZE(state_names))
		return "?";
	return state_names[state];
}

int scsi_alua_state_parse(const char *text, enum scsi_alua_state *out)
{
	static const struct {
		const char *name;
		enum scsi_alua_state state;
	} names[] = {
		{"active/optimized", SCSI_ALUA_OPTIMIZED},
		{"optimized", SCSI_ALUA_OPTIMIZED},
		{"ao", SCSI_ALUA_OPTIMIZED},
		{"active/non-optimized", SCSI_ALUA_NON_OPTIMIZED},
		{"non-optimized", SCSI_ALUA_NON_OPTIMIZED},
		{"an", SCSI_ALUA_NON_OPTIMIZED},
		{"standby", SCSI_ALUA_STANDBY},
		{"s", SCSI_ALUA_STANDBY},
		{"unavailable", SCSI_ALUA_UNAVAILABLE},
		{"u", SCSI_ALUA_UNAVAILABLE},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcasecmp(text, names[i].name)) {
			*out = names[i].state;
			return 0;
		}
	}
	return -EINVAL;
}

/* The group of relative target port @port, or NULL. */
static struct scsi_alua_group *port_group(const struct scsi_alua *a,
					  uint16_t port)
{
	unsigned int g;

	if (!port || port > a->nports)
		return NULL;
	g = a->port_group[port - 1];
	return g < a->ngroups ? (struct scsi_alua_group *)&a->groups[g] : NULL;
}

uint16_t scsi_alua_port(const struct scsi_ctx *c)
{
	return c->cmd->port ? c->cmd->port : c->cmd->tgt->port_id;
}

uint16_t scsi_alua_group_id(const struct scsi_ctx *c)
{
	const struct scsi_target *t = c->cmd->tgt;
	const struct scsi_alua_group *g;

	if (!t->alua)
		return t->tpg;
	g = port_group(t->alua, scsi_alua_port(c));
	return g ? g->id : t->tpg;
}

enum scsi_alua_state scsi_alua_state(const struct scsi_ctx *c)
{
	const struct scsi_target *t = c->cmd->tgt;
	const struct scsi_alua_group *g;

	if (!t->alua)
		return SCSI_ALUA_OPTIMIZED;
	g = port_group(t->alua, scsi_alua_port(c));
	/* relaxed: a command racing a change may see either state */
	return g ? (enum scsi_alua_state)__atomic_load_n(&g->state,
							 __ATOMIC_RELAXED)
		 : SCSI_ALUA_OPTIMIZED;
}

bool scsi_alua_sense(enum scsi_alua_state state, uint8_t *asc, uint8_t *ascq)
{
	switch (state) {
	case SCSI_ALUA_STANDBY:
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_ACCESSIBLE_STANDBY);
		return true;
	case SCSI_ALUA_UNAVAILABLE:
		ASC_PUT(*asc, *ascq, ASC_LU_NOT_ACCESSIBLE_UNAVAILABLE);
		return true;
	default:
		return false;
	}
}

int scsi_alua_set(struct scsi_target *t, const char *group,
		  enum scsi_alua_state state)
{
	struct scsi_alua *a = t->alua;
	struct scsi_alua_group *g = NULL;
	unsigned int i;
	uint32_t id;

	if (!a)
		return -ENODEV;
	if ((unsigned int)state > SCSI_ALUA_UNAVAILABLE)
		return -EINVAL;
	for (i = 0; i < a->ngroups && !g; i++)
		if (!strcmp(a->groups[i].name, group))
			g = &a->groups[i];
	if (!g && !parse_u32(group, 10, UINT16_MAX, &id)) {
		for (i = 0; i < a->ngroups && !g; i++)
			if (a->groups[i].id == id)
				g = &a->groups[i];
	}
	if (!g)
		return -ENOENT;
	if (__atomic_exchange_n(&g->state, (uint8_t)state, __ATOMIC_RELAXED) ==
	    state)
		return 0;
	__atomic_store_n(&g->changed, 1, __ATOMIC_RELAXED);
	/*
	 * An implicit transition: SPC-4 has the unit attention go to every
	 * I_T nexus, the one that asked included (nothing asked here).
	 */
	lun_ua_set_all(t->luns, LUN_UA_ALUA_CHANGED, LUN_NEXUS_NONE);
	return 1;
}

/* ---- REPORT TARGET PORT GROUPS --------------------------------------- */

#define RTPG_FMT_LENGTH 0x0 /* PARAMETER DATA FORMAT 000b */
#define RTPG_FMT_EXT 0x1 /* 001b: the extended header */
#define RTPG_SUP_ALL 0x0f /* U_SUP, S_SUP, AN_SUP, AO_SUP */
#define RTPG_STATUS_IMPLICIT 0x02

/*
 * Each group's descriptor: 8 bytes and 4 a port. PREF stays 0 (no group
 * is preferred over the state it reports); T_SUP, O_SUP and LBD_SUP 0:
 * transitions are instant, and there is no offline or LBA-dependent state.
 * A group with no port is still listed, with a TARGET PORT COUNT of 0.
 */
enum scsi_disposition scsi_alua_rtpg(struct scsi_ctx *c)
{
	const struct scsi_alua *a = c->cmd->tgt->alua;
	uint8_t fmt = c->cdb[1] >> 5;
	uint32_t alloc = get_be32(c->cdb + 6);
	uint8_t buf[8 + SCSI_ALUA_MAX_GROUPS * 8 + SCSI_ALUA_MAX_PORTS * 4];
	size_t n, hdr;
	unsigned int i, p, count;

	if (!a) {
		scsi_sense_cdb(c, 1, 4);
		return SCSI_DONE;
	}
	if (fmt != RTPG_FMT_LENGTH && fmt != RTPG_FMT_EXT) {
		scsi_sense_cdb(c, 1, 7);
		return SCSI_DONE;
	}
	memset(buf, 0, sizeof(buf));
	hdr = fmt == RTPG_FMT_EXT ? 8 : 4;
	n = hdr;
	for (i = 0; i < a->ngroups; i++) {
		const struct scsi_alua_group *g = &a->groups[i];
		uint8_t *d = buf + n;

		d[0] = __atomic_load_n(&g->state, __ATOMIC_RELAXED);
		d[1] = RTPG_SUP_ALL;
		put_be16(d + 2, g->id);
		if (__atomic_load_n(&g->changed, __ATOMIC_RELAXED))
			d[5] = RTPG_STATUS_IMPLICIT;
		n += 8;
		count = 0;
		for (p = 1; p <= a->nports; p++) {
			if (a->port_group[p - 1] != i)
				continue;
			put_be16(buf + n + 2, (uint16_t)p);
			n += 4;
			count++;
		}
		d[7] = (uint8_t)count;
	}
	/* RETURN DATA LENGTH: the bytes after the field itself */
	put_be32(buf, (uint32_t)(n - 4));
	if (fmt == RTPG_FMT_EXT) {
		buf[4] = RTPG_FMT_EXT << 4; /* FORMAT TYPE */
		buf[5] = 0; /* IMPLICIT TRANSITION TIME: none */
	}
	scsi_copy_in(c, buf, n < alloc ? n : alloc);
	return SCSI_DONE;
}
