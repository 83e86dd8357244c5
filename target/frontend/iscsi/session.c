// SPDX-License-Identifier: MIT
/*
 * The session registry: every logged-in session with its TSIH, ISID,
 * initiator and target, and the worker that owns its connection. Consulted
 * at the end of a login (max_sessions, reinstatement of a session with the
 * same initiator, ISID and target) and by resets that reach every session
 * of a target. One mutex: logins and resets only, never the command path.
 * Beside it, the initiators by name, each with the buffers its connections
 * hold: found at login under a mutex of its own, charged on the command
 * path through the connection's pointer alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* ---- the initiators ------------------------------------------------------ */

#define INI_BUCKETS_MIN 64u

/* FNV-1a over the name folded to lower case: equal names, equal hashes. */
static uint32_t ini_hash(const char *name)
{
	uint32_t h = 2166136261u;
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		h ^= (uint32_t)(*p >= 'A' && *p <= 'Z' ? *p + ('a' - 'A') : *p);
		h *= 16777619u;
	}
	return h;
}

int iscsi_ini_init(struct iscsi_initiators *t)
{
	memset(t, 0, sizeof(*t));
	t->v = calloc(INI_BUCKETS_MIN, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->mask = INI_BUCKETS_MIN - 1;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void iscsi_ini_fini(struct iscsi_initiators *t)
{
	struct iscsi_initiator *ini, *next;
	unsigned int i;

	if (!t->v)
		return;
	/* none should be left: their connections are gone first */
	for (i = 0; i <= t->mask; i++)
		for (ini = t->v[i]; ini; ini = next) {
			next = ini->next;
			free(ini);
		}
	pthread_mutex_destroy(&t->lock);
	free(t->v);
	t->v = NULL;
}

/*
 * Twice the buckets, once there are more initiators than buckets: O(n)
 * now and then, at login. Without the memory the chains just get longer.
 */
static void ini_grow(struct iscsi_initiators *t)
{
	unsigned int i, mask = 2 * t->mask + 1;
	struct iscsi_initiator **nv, *ini, *next;

	if (t->count <= t->mask + 1 || mask > (1u << 20) - 1)
		return;
	nv = calloc((size_t)mask + 1, sizeof(*nv));
	if (!nv)
		return;
	for (i = 0; i <= t->mask; i++)
		for (ini = t->v[i]; ini; ini = next) {
			next = ini->next;
			ini->next = nv[ini->hash & mask];
			nv[ini->hash & mask] = ini;
		}
	free(t->v);
	t->v = nv;
	t->mask = mask;
}

int iscsi_ini_get(struct iscsi_initiators *t, const char *name,
		  struct iscsi_initiator **out)
{
	uint32_t h = ini_hash(name);
	struct iscsi_initiator *ini;
	int ret = 0;

	pthread_mutex_lock(&t->lock);
	for (ini = t->v[h & t->mask]; ini; ini = ini->next)
		if (ini->hash == h && !strcasecmp(ini->name, name))
			break;
	if (!ini) {
		ini = calloc(1, sizeof(*ini));
		if (!ini) {
			ret = -ENOMEM;
			goto out;
		}
		ini->hash = h;
		snprintf(ini->name, sizeof(ini->name), "%s", name);
		ini->next = t->v[h & t->mask];
		t->v[h & t->mask] = ini;
		t->count++;
		ini_grow(t);
	}
	ini->refs++;
	*out = ini;
out:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void iscsi_ini_put(struct iscsi_initiators *t, struct iscsi_initiator *ini)
{
	struct iscsi_initiator **pp;

	if (!ini)
		return;
	pthread_mutex_lock(&t->lock);
	if (--ini->refs == 0) {
		for (pp = &t->v[ini->hash & t->mask]; *pp != ini;
		     pp = &(*pp)->next)
			;
		*pp = ini->next;
		t->count--;
		free(ini);
	}
	pthread_mutex_unlock(&t->lock);
}
