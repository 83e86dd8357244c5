// SPDX-License-Identifier: MIT
/*
 * Fault rules: a small array under a mutex, and an atomic rule count so the
 * command path pays one load when there are none.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

struct fault_table {
	pthread_mutex_t lock;
	_Atomic unsigned int n;        /* rules in use; read without the lock */
	_Atomic uint64_t total_hits;
	uint32_t next_id;
	unsigned int cap;
	struct fault_rule *rules;      /* sorted by id (ids only grow) */
	/* fault_watch_set(): called under the read side of watch_lock */
	pthread_rwlock_t watch_lock;
	fault_watch_fn *watch;
	void *watch_arg;
};

static const char *const kind_names[FAULT_KIND_MAX] = {
	[FAULT_MEDIUM_READ] = "medium-read",
	[FAULT_MEDIUM_WRITE] = "medium-write",
	[FAULT_DELAY] = "delay",
	[FAULT_HANG] = "hang",
	[FAULT_UA] = "ua",
	[FAULT_NOT_READY] = "not-ready",
};

/* The commands a kind applies to when the rule gives no ops. */
static const unsigned int kind_ops[FAULT_KIND_MAX] = {
	[FAULT_MEDIUM_READ] = FAULT_OP_READ,
	[FAULT_MEDIUM_WRITE] = FAULT_OP_WRITE,
	[FAULT_DELAY] = FAULT_OP_ANY,
	[FAULT_HANG] = FAULT_OP_ANY,
	[FAULT_UA] = FAULT_OP_ANY,
	[FAULT_NOT_READY] = FAULT_OP_READ | FAULT_OP_WRITE,
};

const char *fault_kind_name(enum fault_kind kind)
{
	return kind > 0 && kind < FAULT_KIND_MAX ? kind_names[kind] : NULL;
}

int fault_kind_parse(const char *name)
{
	int k;

	for (k = 1; k < FAULT_KIND_MAX; k++)
		if (name && strcmp(kind_names[k], name) == 0)
			return k;
	return -EINVAL;
}

int fault_table_create(struct fault_table **out)
{
	struct fault_table *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return -ENOMEM;
	pthread_mutex_init(&ft->lock, NULL);
	pthread_rwlock_init(&ft->watch_lock, NULL);
	ft->next_id = 1;
	*out = ft;
	return 0;
}

void fault_table_destroy(struct fault_table *ft)
{
	if (!ft)
		return;
	pthread_mutex_destroy(&ft->lock);
	pthread_rwlock_destroy(&ft->watch_lock);
	free(ft->rules);
	free(ft);
}

int fault_add(struct fault_table *ft, const struct fault_rule *r)
{
	struct fault_rule *nr, rule;
	unsigned int n;
	int id;

	if (r->kind <= 0 || r->kind >= FAULT_KIND_MAX ||
	    r->lun_first > r->lun_last || r->lba_first > r->lba_last ||
	    r->delay_ns > FAULT_MAX_DELAY_NS || (r->ops & ~FAULT_OP_ANY) ||
	    (r->kind == FAULT_DELAY && !r->delay_ns))
		return -EINVAL;
	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (n == FAULT_MAX_RULES) {
		pthread_mutex_unlock(&ft->lock);
		return -ENOSPC;
	}
	if (n == ft->cap) {
		unsigned int cap = ft->cap ? ft->cap * 2 : 16;

		nr = realloc(ft->rules, cap * sizeof(*nr));
		if (!nr) {
			pthread_mutex_unlock(&ft->lock);
			return -ENOMEM;
		}
		ft->rules = nr;
		ft->cap = cap;
	}
	nr = &ft->rules[n];
	*nr = *r;
	nr->id = ft->next_id++;
	nr->hits = 0;
	if (!nr->ops)
		nr->ops = kind_ops[nr->kind];
	id = (int)nr->id;
	rule = *nr;
	atomic_store(&ft->n, n + 1);
	pthread_mutex_unlock(&ft->lock);
	pthread_rwlock_rdlock(&ft->watch_lock);
	if (ft->watch)
		ft->watch(ft->watch_arg, &rule);
	pthread_rwlock_unlock(&ft->watch_lock);
	return id;
}

int fault_watch_set(struct fault_table *ft, fault_watch_fn *fn, void *arg)
{
	int ret = 0;

	pthread_rwlock_wrlock(&ft->watch_lock);
	if (fn && ft->watch) {
		ret = -EBUSY;
	} else {
		ft->watch = fn;
		ft->watch_arg = fn ? arg : NULL;
	}
	pthread_rwlock_unlock(&ft->watch_lock);
	return ret;
}

/* Caller holds the lock. */
static void remove_at(struct fault_table *ft, unsigned int i)
{
	unsigned int n = atomic_load(&ft->n);

	memmove(&ft->rules[i], &ft->rules[i + 1],
		(n - i - 1) * sizeof(ft->rules[0]));
	atomic_store(&ft->n, n - 1);
}

int fault_clear(struct fault_table *ft, uint32_t id)
{
	unsigned int i, n;
	int ret = -ENOENT;

	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (id == 0) {
		atomic_store(&ft->n, 0);
		ret = (int)n;
	} else {
		for (i = 0; i < n; i++) {
			if (ft->rules[i].id == id) {
				remove_at(ft, i);
				ret = 1;
				break;
			}
		}
	}
	pthread_mutex_unlock(&ft->lock);
	return ret;
}

int fault_list(struct fault_table *ft, struct fault_rule *out, unsigned int max)
{
	unsigned int n;

	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	if (n && max)
		memcpy(out, ft->rules, (n < max ? n : max) * sizeof(*out));
	pthread_mutex_unlock(&ft->lock);
	return (int)n;
}

bool fault_check(struct fault_table *ft, uint32_t lun, uint64_t lba,
		 uint64_t nblocks, unsigned int op, struct fault_hit *hit)
{
	struct fault_rule *r;
	unsigned int i, n;
	uint64_t last;
	bool fired = false;

	/* relaxed: a rule added concurrently may miss this one command */
	if (!ft || !atomic_load_explicit(&ft->n, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&ft->lock);
	n = atomic_load(&ft->n);
	for (i = 0; i < n; i++) {
		r = &ft->rules[i];
		if (!(r->ops & op) || lun < r->lun_first || lun > r->lun_last)
			continue;
		if (nblocks) {
			last = lba + nblocks - 1;
			if (last < lba)
				last = UINT64_MAX;
			if (last < r->lba_first || lba > r->lba_last)
				continue;
		} else if (r->lba_first != 0 || r->lba_last != UINT64_MAX) {
			continue;
		}
		hit->kind = r->kind;
		hit->id = r->id;
		hit->lba = lba > r->lba_first ? lba : r->lba_first;
		hit->delay_ns = r->delay_ns;
		hit->asc = r->asc;
		hit->ascq = r->ascq;
		r->hits++;
		atomic_fetch_add_explicit(&ft->total_hits, 1,
					  memory_order_relaxed);
		if (r->count && --r->count == 0)
			remove_at(ft, i);
		fired = true;
		break;
	}
	pthread_mutex_unlock(&ft->lock);
	return fired;
}

uint64_t fault_total_hits(struct fault_table *ft)
{
	return ft ? atomic_load_explicit(&ft->total_hits, memory_order_relaxed) : 0;
}
