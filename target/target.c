// SPDX-License-Identifier: MIT
/*
 * The target's registry: one array of sources of every kind under one
 * lock, and a table saying how each kind adds into a snapshot. A source
 * leaving adds its counters into a retired snapshot, so totals never go
 * back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

struct target_registry {
	/* Held while sources are read or a session function runs. */
	pthread_mutex_t lock;
	struct target_source *v;
	unsigned int n, cap;
	struct target_snapshot retired; /* sources gone; sources[] unused */
};

/* ---- the kinds ---------------------------------------------------------- */

static void add_scsi(struct target_snapshot *out, void *obj, bool retiring)
{
	(void)retiring;
	scsi_stats_add(&out->scsi, obj);
}

static void add_file(struct target_snapshot *out, void *obj, bool retiring)
{
	struct target_file_stats *st = obj;
	struct target_file_sum *s = &out->file;
	unsigned int i;

	/* relaxed: statistics, ordered with nothing */
	for (i = 0; i < TARGET_FILE_OPS; i++) {
		s->count[i] += atomic_load_explicit(&st->count[i],
						    memory_order_relaxed);
		s->errors[i] += atomic_load_explicit(&st->errors[i],
						     memory_order_relaxed);
		s->bytes[i] += atomic_load_explicit(&st->bytes[i],
						    memory_order_relaxed);
	}
	for (i = 0; i < SCSI_LAT_BUCKETS; i++)
		s->lat[i] +=
			atomic_load_explicit(&st->lat[i], memory_order_relaxed);
	/* gone: nothing of it is in flight any more */
	if (!retiring)
		s->inflight += atomic_load_explicit(&st->inflight,
						    memory_order_relaxed);
}

/*
 * How each kind adds its counters into a snapshot (NULL: it has none).
 * @retiring: the source is leaving; what it counts now is kept for good.
 */
static void (*const kind_add[TARGET_SRC_KINDS])(struct target_snapshot *out,
						void *obj, bool retiring) = {
	[TARGET_SRC_SCSI] = add_scsi,
	[TARGET_SRC_FILE] = add_file,
	[TARGET_SRC_SESSIONS] = NULL,
};

/* ---- the registry ------------------------------------------------------- */

int target_init(struct target *t)
{
	struct target_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	t->reg = r;
	return 0;
}

void target_fini(struct target *t)
{
	struct target_registry *r = t->reg;

	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->v);
	free(r);
	t->reg = NULL;
}

int target_register(struct target *t, const struct target_source *src)
{
	struct target_registry *r = t->reg;
	struct target_source *nv;
	unsigned int i;
	int ret = 0;

	if ((unsigned int)src->kind >= TARGET_SRC_KINDS || !src->obj ||
	    (src->kind == TARGET_SRC_SESSIONS) != (src->sessions != NULL))
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++) {
		if (r->v[i].obj == src->obj) {
			ret = -EEXIST;
			goto out_unlock;
		}
	}
	if (r->n == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 16;

		nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n++] = *src;
out_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void target_unregister(struct target *t, const void *obj)
{
	struct target_registry *r = t->reg;
	struct target_source *s;
	unsigned int i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++) {
		s = &r->v[i];
		if (s->obj != obj)
			continue;
		if (kind_add[s->kind])
			kind_add[s->kind](&r->retired, s->obj, true);
		r->v[i] = r->v[--r->n];
		break;
	}
	pthread_mutex_unlock(&r->lock);
}

void target_snapshot(struct target *t, struct target_snapshot *out,
		     unsigned int kinds)
{
	struct target_registry *r = t->reg;
	struct target_source *s;
	unsigned int i;

	pthread_mutex_lock(&r->lock);
	memset(out, 0, sizeof(*out));
	if (kinds & TARGET_KIND(TARGET_SRC_SCSI))
		out->scsi = r->retired.scsi;
	if (kinds & TARGET_KIND(TARGET_SRC_FILE))
		out->file = r->retired.file;
	for (i = 0; i < r->n; i++) {
		s = &r->v[i];
		if (kind_add[s->kind] && (kinds & TARGET_KIND(s->kind)))
			kind_add[s->kind](out, s->obj, false);
		out->sources[s->kind]++;
	}
	pthread_mutex_unlock(&r->lock);
}

/* Most entries one front end's list is asked for. */
#define SESSIONS_MAX 65536u

int target_sessions(struct target *t, struct target_session **out)
{
	struct target_registry *r = t->reg;
	struct target_session *v = NULL, *nv;
	unsigned int i, n, len = 0, cap;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++) {
		if (r->v[i].kind != TARGET_SRC_SESSIONS)
			continue;
		/* 64 first; one more call with the room asked for */
		for (cap = 64;;) {
			nv = realloc(v, (len + cap) * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				goto out_unlock;
			}
			v = nv;
			n = r->v[i].sessions(r->v[i].obj, v + len, cap);
			if (n <= cap || cap >= SESSIONS_MAX) {
				len += n < cap ? n : cap;
				break;
			}
			cap = n < SESSIONS_MAX ? n + 16 : SESSIONS_MAX;
		}
	}
out_unlock:
	pthread_mutex_unlock(&r->lock);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	return (int)len;
}

/* ---- the file front ends' counters -------------------------------------- */

static const char *const file_op_names[TARGET_FILE_OPS] = {
	[TARGET_FILE_READ] = "read",
	[TARGET_FILE_WRITE] = "write",
	[TARGET_FILE_FALLOCATE] = "fallocate",
	[TARGET_FILE_FSYNC] = "fsync",
};

const char *target_file_op_name(enum target_file_op op)
{
	return (unsigned int)op < TARGET_FILE_OPS ? file_op_names[op] : "?";
}

void target_file_record(struct target_file_stats *st, enum target_file_op op,
			uint64_t bytes, bool error, uint64_t ns)
{
	/* relaxed: statistics, summed now and then, ordered with nothing */
	atomic_fetch_add_explicit(&st->count[op], 1, memory_order_relaxed);
	if (error)
		atomic_fetch_add_explicit(&st->errors[op], 1,
					  memory_order_relaxed);
	if (bytes)
		atomic_fetch_add_explicit(&st->bytes[op], bytes,
					  memory_order_relaxed);
	atomic_fetch_add_explicit(&st->lat[scsi_lat_bucket(ns)], 1,
				  memory_order_relaxed);
}
