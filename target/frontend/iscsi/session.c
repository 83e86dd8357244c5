// SPDX-License-Identifier: MIT
/*
 * The session registry: every logged-in session with its TSIH, ISID,
 * initiator and target, and the worker that owns its connection. Consulted
 * at the end of a login (max_sessions, reinstatement of a session with the
 * same initiator, ISID and target) and by resets that reach every session
 * of a target. One mutex: logins and resets only, never the command path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_i.h"

int iscsi_sess_init(struct iscsi_sessions *s, unsigned int max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->next_tsih = 1;
	s->cap = 64;
	s->v = calloc(s->cap, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	return 0;
}

void iscsi_sess_fini(struct iscsi_sessions *s)
{
	if (!s->v)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->v);
	s->v = NULL;
}

static bool tsih_used(const struct iscsi_sessions *s, uint16_t tsih)
{
	unsigned int i;

	for (i = 0; i < s->cap; i++)
		if (s->v[i].used && s->v[i].tsih == tsih)
			return true;
	return false;
}

/* The next free TSIH: nonzero (0 means "new session" in a login). */
static uint16_t next_tsih(struct iscsi_sessions *s)
{
	unsigned int tries;
	uint16_t t = 0;

	/* bounded: fewer than 65535 sessions exist, so one is free */
	for (tries = 0; tries < 65536; tries++) {
		t = s->next_tsih++;
		if (!s->next_tsih)
			s->next_tsih = 1;
		if (t && !tsih_used(s, t))
			break;
	}
	return t;
}

int iscsi_sess_add(struct iscsi_sessions *s, struct iscsi_sess_entry *e,
		   struct iscsi_sess_entry *old)
{
	struct iscsi_sess_entry *slot = NULL, *nv;
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->cap; i++) {
		struct iscsi_sess_entry *x = &s->v[i];

		if (!x->used) {
			if (!slot)
				slot = x;
			continue;
		}
		if (x->target == e->target && x->tpgt == e->tpgt &&
		    !memcmp(x->isid, e->isid, 6) &&
		    !strcmp(x->initiator, e->initiator)) {
			/* reinstatement: the old session ends, its slot is ours */
			*old = *x;
			x->used = false;
			s->count--;
			slot = x;
			ret = 1;
			break;
		}
	}
	if (ret == 0 && s->max && s->count >= s->max) {
		ret = -EBUSY;
		goto out;
	}
	if (!slot) {
		if (s->cap >= 65535) {
			ret = -EBUSY;
			goto out;
		}
		nv = realloc(s->v, 2 * s->cap * sizeof(*nv));
		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		memset(nv + s->cap, 0, s->cap * sizeof(*nv));
		slot = nv + s->cap;
		s->v = nv;
		s->cap *= 2;
	}
	e->tsih = next_tsih(s);
	e->used = true;
	*slot = *e;
	s->count++;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void iscsi_sess_remove(struct iscsi_sessions *s, uint16_t tsih,
		       uint64_t conn_id)
{
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->cap; i++) {
		struct iscsi_sess_entry *x = &s->v[i];

		if (x->used && x->tsih == tsih && x->conn_id == conn_id) {
			x->used = false;
			s->count--;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

unsigned int iscsi_sess_collect(struct iscsi_sessions *s, int target,
				struct iscsi_sess_entry *out, unsigned int cap)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->cap; i++) {
		const struct iscsi_sess_entry *x = &s->v[i];

		if (!x->used || (target != -2 && x->target != target))
			continue;
		if (n < cap)
			out[n] = *x;
		n++;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned int iscsi_sess_count(struct iscsi_sessions *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->count;
	pthread_mutex_unlock(&s->lock);
	return n;
}

struct iscsi_worker *iscsi_sess_worker(struct iscsi_sessions *s,
				       uint64_t conn_id)
{
	struct iscsi_worker *w = NULL;
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->cap; i++)
		if (s->v[i].used && s->v[i].conn_id == conn_id) {
			w = s->v[i].w;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return w;
}
