// SPDX-License-Identifier: MIT
/*
 * The LUN table. One 32-byte slot a LUN in an anonymous mapping sized for
 * max_luns (pages become resident only as LUNs are created), a presence
 * bitmap, and up to 256 groups holding everything LUNs share. The command
 * path pins a LUN with one atomic increment; removal waits for the pins.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "lun.h"
#include "scsi/asc.h"

/* slot flags */
#define SLOT_TABLE_OWNED 0x01u /* host wrote the table area: store is truth */
#define SLOT_POWERED 0x02u /* POWER ON OCCURRED has been reported */

/*
 * 32 bytes, so 262,144 idle LUNs cost 8 MiB and 2^20 cost 32 MiB. Fields the
 * command path reads without the table lock are atomics.
 */
struct lun_slot {
	_Atomic uint8_t state;
	_Atomic uint8_t flags;
	uint8_t ua_asc, ua_ascq; /* LUN_UA_INJECTED's code */
	_Atomic uint16_t mode;
	uint16_t group;
	_Atomic uint32_t inflight; /* lun_get() pins */
	uint32_t gen;
	/*
	 * One counter per condition this LUN raises (enum ua_kind): raising
	 * bumps it, and each I_T nexus remembers the value it last reported
	 * (struct ua_entry), so a condition reaches every nexus once.
	 */
	_Atomic uint16_t ua_gen[4];
	_Atomic uint64_t nblocks;
};
_Static_assert(sizeof(struct lun_slot) == 32, "a LUN slot is 32 bytes");

/*
 * Unit attentions are per I_T nexus (SAM-5 5.14): a MODE SELECT raises MODE
 * PARAMETERS CHANGED for every nexus but its own, the first command to a new
 * LUN reports POWER ON OCCURRED, and one nexus taking a condition leaves it
 * pending for the others. The state is a counter per condition per LUN
 * (the slot's ua_gen, the table's reset_gen and luns_gen) and, per (nexus,
 * LUN) pair that has sent a command, the counters it has seen: raising is
 * O(1) whatever the number of nexuses, and the pairs exist only for LUNs a
 * nexus used (32 bytes each: one initiator scanning 262,144 LUNs costs
 * 8 MiB at most, about 12 at the table's load factor).
 */
enum ua_kind { UA_K_RESET, UA_K_MODE, UA_K_CAPACITY, UA_K_INJECTED };

#define UA_SEEN_TRESET 4 /* seen[] index of the table's reset_gen */
#define UA_SEEN_LUNS 5 /* ... of the table's luns_gen */
#define UA_STRIPES 64 /* locks: commands of different nexuses rarely meet */

struct ua_entry {
	uint32_t nexus;
	uint32_t lun;
	uint32_t lun_gen; /* the slot's gen when made; 0: a free entry */
	uint16_t seen[6]; /* ua_gen[4], then reset_gen and luns_gen */
	uint8_t power_on; /* the first command has not reported yet */
	uint8_t prevent; /* PREVENT ALLOW MEDIUM REMOVAL: prevented, valid
			     * while the two reset counters below are current */
	uint16_t prevent_rgen, prevent_tgen; /* ua_gen[RESET], reset_gen */
	uint16_t alua_seen; /* the table's alua_gen when last reported */
};
_Static_assert(sizeof(struct ua_entry) == 32, "a nexus's LUN is 32 bytes");

/* Open addressing, linear probing, grown at 3/4 full. */
struct ua_stripe {
	pthread_mutex_t lock;
	struct ua_entry *e;
	uint32_t cap; /* power of two, or 0 */
	uint32_t used;
};

struct san_entry {
	uint32_t lun;
	uint32_t gen; /* the LUN's gen; 0: a free entry */
	uint64_t t0, t1; /* CLOCK_MONOTONIC ns: started, ends */
	uint64_t pad;
};
_Static_assert(sizeof(struct san_entry) == 32, "a sanitize entry is 32 bytes");

struct lun_ctr {
	_Atomic uint64_t reads, writes, read_bytes, write_bytes, errors;
};

struct lun_table {
	struct lun_slot *slots; /* mmap'd, max_luns */
	size_t slots_bytes;
	_Atomic uint64_t *present; /* bitmap, max_luns bits */
	uint32_t max_luns;
	_Atomic uint32_t count;
	uint64_t seed;
	uint32_t oui;
	struct store *store;
	pthread_mutex_t lock; /* writers: add, remove, groups */
	pthread_mutex_t own_lock; /* materialising partition tables */
	_Atomic uint16_t luns_gen; /* REPORTED LUNS DATA HAS CHANGED */
	_Atomic uint16_t reset_gen; /* reset unit attentions */
	_Atomic uint16_t alua_gen; /* ASYMMETRIC ACCESS STATE CHANGED */
	_Atomic uint32_t gen; /* LUN generations */
	bool power_on_ua; /* report POWER ON OCCURRED */
	struct ua_stripe ua[UA_STRIPES];
	pthread_mutex_t medium_lock; /* prevent vs eject (lun_medium()) */
	/*
	 * LUNs a SANITIZE keeps busy, hashed by number (open addressing,
	 * linear probing; an entry of a LUN whose gen moved on is dead and is
	 * reused): only while any LUN sanitizes is there anything here.
	 */
	pthread_mutex_t san_lock;
	struct san_entry *san;
	uint32_t san_cap, san_used;
	unsigned int ngroups;
	/*
	 * Change watchers, called under the read side of watch_lock so that
	 * lun_watch_remove() can wait for calls in flight; nwatch lets the
	 * I/O path skip the lock while nobody watches.
	 */
	pthread_rwlock_t watch_lock;
	_Atomic unsigned int nwatch;
	struct {
		lun_watch_fn *fn;
		void *arg;
	} watch[LUN_MAX_WATCHERS];
	struct lun_group groups[LUN_MAX_GROUPS];
	/*
	 * Per-LUN I/O counters, only while asked for (lun_stats_enable()):
	 * ctr_win is first << 32 | count, 0 while off, so the I/O path pays
	 * one load and a branch when nobody counts. ctr is allocated once
	 * (LUN_STATS_MAX entries) and kept until the table goes, so a reader
	 * of an old window never touches freed memory.
	 */
	_Atomic uint64_t ctr_win;
	struct lun_ctr *ctr;
};

int lun_table_create(struct lun_table **out, const struct lun_table_params *p)
{
	struct lun_table *t;
	uint32_t max = p->max_luns ? p->max_luns : LUN_DEFAULT_MAX;
	size_t words;

	if (!p->store || max > LUN_MAX_LUNS)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->max_luns = max;
	t->seed = p->seed;
	t->oui = p->oui ? p->oui & 0xffffff : 0xacde48;
	t->power_on_ua = !p->no_power_on_ua;
	t->store = p->store;
	t->slots_bytes = (size_t)max * sizeof(struct lun_slot);
	/* Untouched pages of a private anonymous mapping cost nothing. */
	t->slots = mmap(NULL, t->slots_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t->slots == MAP_FAILED)
		goto out_free;
	words = (max + 63) / 64;
	t->present = calloc(words, sizeof(*t->present));
	if (!t->present)
		goto out_unmap;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->own_lock, NULL);
	pthread_mutex_init(&t->medium_lock, NULL);
	pthread_mutex_init(&t->san_lock, NULL);
	pthread_rwlock_init(&t->watch_lock, NULL);
	for (unsigned int i = 0; i < UA_STRIPES; i++)
		pthread_mutex_init(&t->ua[i].lock, NULL);
	*out = t;
	return 0;

out_unmap:
	munmap(t->slots, t->slots_bytes);
out_free:
	free(t);
	return -ENOMEM;
}

void lun_table_destroy(struct lun_table *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->own_lock);
	pthread_mutex_destroy(&t->medium_lock);
	pthread_mutex_destroy(&t->san_lock);
	pthread_rwlock_destroy(&t->watch_lock);
	free(t->san);
	for (unsigned int i = 0; i < UA_STRIPES; i++) {
		pthread_mutex_destroy(&t->ua[i].lock);
		free(t->ua[i].e);
	}
	free(t->present);
	free(t->ctr);
	munmap(t->slots, t->slots_bytes);
	free(t);
}

/* ---- change watchers ------------------------------------------------ */

int lun_watch_add(struct lun_table *t, lun_watch_fn *fn, void *arg)
{
	int i, ret = -ENOSPC;

	pthread_rwlock_wrlock(&t->watch_lock);
	for (i = 0; i < LUN_MAX_WATCHERS; i++) {
		if (!t->watch[i].fn) {
			t->watch[i].fn = fn;
			t->watch[i].arg = arg;
			atomic_fetch_add(&t->nwatch, 1);
			ret = i;
			break;
		}
	}
	pthread_rwlock_unlock(&t->watch_lock);
	return ret;
}

void lun_watch_remove(struct lun_table *t, int id)
{
	if (id < 0 || id >= LUN_MAX_WATCHERS)
		return;
	/* the write lock waits for every call in flight to return */
	pthread_rwlock_wrlock(&t->watch_lock);
	if (t->watch[id].fn) {
		t->watch[id].fn = NULL;
		atomic_fetch_sub(&t->nwatch, 1);
	}
	pthread_rwlock_unlock(&t->watch_lock);
}

void lun_changed(struct lun_table *t, const struct lun_change *c)
{
	unsigned int i;

	/* relaxed would do for a hint, but a watcher added before this
	 * change was made must see it: seq_cst, one load per write */
	if (!atomic_load(&t->nwatch))
		return;
	pthread_rwlock_rdlock(&t->watch_lock);
	for (i = 0; i < LUN_MAX_WATCHERS; i++)
		if (t->watch[i].fn)
			t->watch[i].fn(t->watch[i].arg, c);
	pthread_rwlock_unlock(&t->watch_lock);
}

static void changed(struct lun_table *t, enum lun_change_kind kind,
		    uint32_t lun, uint64_t lba, uint64_t nblocks)
{
	struct lun_change c = {.kind = kind,
			       .lun_first = lun,
			       .lun_last = lun,
			       .lba = lba,
			       .nblocks = nblocks};

	lun_changed(t, &c);
}

uint64_t lun_seed(const struct lun_table *t)
{
	return t->seed;
}

struct store *lun_store(const struct lun_table *t)
{
	return t->store;
}

uint64_t lun_bytes_used(const struct lun_table *t, uint32_t lun)
{
	return lun < t->max_luns ? store_lun_bytes(t->store, lun) : 0;
}

uint64_t lun_data_bytes(const struct lun_table *t)
{
	struct store_stats ss;

	store_get_stats(t->store, &ss);
	return ss.data_bytes;
}

uint32_t lun_max(const struct lun_table *t)
{
	return t->max_luns;
}

uint32_t lun_count(const struct lun_table *t)
{
	return atomic_load_explicit(&((struct lun_table *)t)->count,
				    memory_order_relaxed);
}

unsigned int lun_luns_generation(const struct lun_table *t)
{
	return atomic_load_explicit(&((struct lun_table *)t)->luns_gen,
				    memory_order_relaxed);
}

size_t lun_table_bytes(const struct lun_table *t)
{
	/* resident part of the slot array: the slots of created LUNs */
	return sizeof(*t) + (size_t)(t->max_luns + 63) / 64 * 8 +
	       (size_t)lun_count(t) * sizeof(struct lun_slot);
}

/* ---- identity --------------------------------------------------------- */

void lun_wwn(const struct lun_table *t, uint32_t lun, uint64_t *hi,
	     uint64_t *lo)
{
	/*
	 * NAA 6 (IEEE Registered Extended): 4 bits NAA, 24 bits OUI, 36 bits
	 * vendor specific identifier, 64 bits extension. The seed's low 36
	 * bits fill the identifier, its next 44 bits and the 20-bit LUN number
	 * the extension: distinct LUNs of one seed never share a WWN.
	 */
	*hi = 6ull << 60 | (uint64_t)t->oui << 36 | (t->seed & 0xfffffffffull);
	*lo = ((t->seed >> 36) & 0xfffffffffffull) << 20 | (lun & 0xfffff);
}

int lun_serial(const struct lun_table *t, uint32_t lun, char *buf, size_t len)
{
	uint32_t s = (uint32_t)(t->seed ^ t->seed >> 32);

	if (len < LUN_SERIAL_LEN + 1)
		return -ENOSPC;
	snprintf(buf, len, "SDS%08X%06X", s, lun & 0xffffff);
	return LUN_SERIAL_LEN;
}

/* ---- groups and presence --------------------------------------------- */

static bool present(const struct lun_table *t, uint32_t lun)
{
	return atomic_load_explicit(&t->present[lun / 64],
				    memory_order_relaxed) >>
		       (lun % 64) &
	       1;
}

static void set_present(struct lun_table *t, uint32_t lun, bool on)
{
	uint64_t bit = 1ull << (lun % 64);

	if (on)
		atomic_fetch_or(&t->present[lun / 64], bit);
	else
		atomic_fetch_and(&t->present[lun / 64], ~bit);
}

static void fill_geom(const struct lun_table *t, const struct lun_group *g,
		      uint32_t lun, uint64_t nblocks, struct ptable_geom *geom)
{
	uint64_t hi, lo;

	memset(geom, 0, sizeof(*geom));
	geom->kind = g->nparts ? g->ptable : PTABLE_NONE;
	if (geom->kind == PTABLE_NONE)
		return;
	lun_wwn(t, lun, &hi, &lo);
	geom->block_size = g->block_size;
	geom->nblocks = nblocks;
	geom->nparts = g->nparts;
	geom->sizes = g->nsizes ? g->part_sizes : NULL;
	geom->nsizes = g->nsizes;
	geom->wwn = hi ^ (lo * 0x9e3779b97f4a7c15ull);
	geom->lun = lun;
}

static int check_group(const struct lun_table *t, const struct lun_group *g)
{
	struct ptable_geom geom;

	if (g->block_size != 512 && g->block_size != 4096)
		return -EINVAL;
	if (!g->size || g->size % g->block_size || g->phys_exp > 15)
		return -EINVAL;
	if (g->nsizes > 64 || g->nparts > PTABLE_MAX_PARTS)
		return -EINVAL;
	if (g->nparts) {
		fill_geom(t, g, g->first, g->size / g->block_size, &geom);
		if (ptable_check(&geom, NULL))
			return -EINVAL;
	}
	return 0;
}

/*
 * Brings slot @lun up as a new LUN of group @gi, @nblocks long, in @state.
 * Caller holds t->lock.
 */
static void slot_init(struct lun_table *t, uint32_t lun, unsigned int gi,
		      uint64_t nblocks, enum lun_state state)
{
	struct lun_slot *s = &t->slots[lun];
	const struct lun_group *g = &t->groups[gi];

	s->group = (uint16_t)gi;
	s->ua_asc = s->ua_ascq = 0;
	s->gen = atomic_fetch_add(&t->gen, 1) + 1;
	atomic_store(&s->flags, 0);
	atomic_store(&s->mode, g->mode_default);
	atomic_store(&s->nblocks, nblocks);
	/*
	 * A new gen makes every nexus's old entry for this number stale: the
	 * next command sees a new LUN (POWER ON), not the old one's UAs.
	 */
	/* state last: lun_get() trusts the other fields once it sees ONLINE */
	atomic_store(&s->state, (uint8_t)state);
	set_present(t, lun, true);
	atomic_fetch_add(&t->count, 1);
}

int lun_group_add(struct lun_table *t, const struct lun_group *g)
{
	uint64_t end = (uint64_t)g->first + g->count;
	unsigned int gi;
	uint32_t i;
	int ret;

	ret = check_group(t, g);
	if (ret)
		return ret;
	if (end > t->max_luns)
		return -ERANGE;
	pthread_mutex_lock(&t->lock);
	if (t->ngroups == LUN_MAX_GROUPS) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	for (i = g->first; i < end; i++) {
		if (present(t, i) ||
		    atomic_load(&t->slots[i].state) != LUN_ABSENT) {
			ret = -EEXIST;
			goto out_unlock;
		}
	}
	gi = t->ngroups++;
	t->groups[gi] = *g;
	t->groups[gi].name[LUN_NAME_MAX - 1] = '\0';
	for (i = g->first; i < end; i++)
		slot_init(t, i, gi, g->size / g->block_size, LUN_ONLINE);
	ret = (int)gi;
out_unlock:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

const struct lun_group *lun_group_get(const struct lun_table *t,
				      unsigned int index)
{
	return index < t->ngroups ? &t->groups[index] : NULL;
}

int lun_group_find(const struct lun_table *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->ngroups; i++)
		if (strcmp(t->groups[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

int lun_add(struct lun_table *t, uint32_t lun, unsigned int group)
{
	int ret;

	pthread_mutex_lock(&t->lock);
	if (group >= t->ngroups) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (lun == UINT32_MAX) {
		/* O(LUNs / 64): the control path, not the command path */
		for (lun = t->groups[group].first; lun < t->max_luns; lun++)
			if (!present(t, lun) &&
			    atomic_load(&t->slots[lun].state) == LUN_ABSENT)
				break;
		if (lun >= t->max_luns) {
			ret = -ENOSPC;
			goto out_unlock;
		}
	} else if (lun >= t->max_luns) {
		ret = -ERANGE;
		goto out_unlock;
	} else if (present(t, lun) ||
		   atomic_load(&t->slots[lun].state) != LUN_ABSENT) {
		ret = -EEXIST;
		goto out_unlock;
	}
	slot_init(t, lun, group,
		  t->groups[group].size / t->groups[group].block_size,
		  LUN_ONLINE);
	atomic_fetch_add(&t->luns_gen, 1);
	ret = (int)lun;
out_unlock:
	pthread_mutex_unlock(&t->lock);
	if (ret >= 0)
		changed(t, LUN_CHANGE_ADDED, (uint32_t)ret, 0, 0);
	return ret;
}

int lun_add_as(struct lun_table *t, uint32_t lun, unsigned int group,
	       uint64_t bytes, enum lun_state state)
{
	const struct lun_group *g;
	int ret;

	if (state != LUN_ONLINE && state != LUN_OFFLINE)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (group >= t->ngroups) {
		ret = -ENOENT;
		goto out_unlock;
	}
	g = &t->groups[group];
	if (!bytes)
		bytes = g->size;
	if (bytes % g->block_size ||
	    bytes / g->block_size > (1ull << 53) / g->block_size) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (lun >= t->max_luns) {
		ret = -ERANGE;
		goto out_unlock;
	}
	if (present(t, lun) ||
	    atomic_load(&t->slots[lun].state) != LUN_ABSENT) {
		ret = -EEXIST;
		goto out_unlock;
	}
	slot_init(t, lun, group, bytes / g->block_size, state);
	ret = (int)lun;
out_unlock:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

/* The last pin of a removed LUN is gone: drop its data, free the number. */
static void finish_removal(struct lun_table *t, uint32_t lun)
{
	struct lun_slot *s = &t->slots[lun];
	uint8_t want = LUN_REMOVING;

	/* Whoever moves REMOVING -> ABSENT drops the data, exactly once. */
	if (!atomic_compare_exchange_strong(&s->state, &want, LUN_ABSENT))
		return;
	store_drop_lun(t->store, lun);
}

int lun_remove(struct lun_table *t, uint32_t lun)
{
	struct lun_slot *s;
	uint8_t st;

	if (lun >= t->max_luns)
		return -ENOENT;
	s = &t->slots[lun];
	pthread_mutex_lock(&t->lock);
	st = atomic_load(&s->state);
	if (!present(t, lun) || st == LUN_ABSENT || st == LUN_REMOVING) {
		pthread_mutex_unlock(&t->lock);
		return -ENOENT;
	}
	set_present(t, lun, false);
	atomic_fetch_sub(&t->count, 1);
	/*
	 * seq_cst store then load, against lun_get()'s seq_cst increment then
	 * load: either the getter sees REMOVING and backs off, or we see its
	 * pin and the last lun_put() finishes the removal.
	 */
	atomic_store(&s->state, LUN_REMOVING);
	atomic_fetch_add(&t->luns_gen, 1);
	pthread_mutex_unlock(&t->lock);
	if (atomic_load(&s->inflight) == 0)
		finish_removal(t, lun);
	changed(t, LUN_CHANGE_REMOVED, lun, 0, 0);
	return 0;
}

bool lun_exists(const struct lun_table *t, uint32_t lun)
{
	return lun < t->max_luns && present(t, lun);
}

int lun_find(const struct lun_table *t, uint32_t first, uint32_t last)
{
	uint64_t w;
	uint32_t i;

	if (!t->max_luns)
		return -ENOENT;
	if (last >= t->max_luns)
		last = t->max_luns - 1;
	/* no wrap: last < max_luns <= LUN_MAX_LUNS */
	for (i = first; i <= last;) {
		w = atomic_load_explicit(&t->present[i / 64],
					 memory_order_relaxed) >>
		    (i % 64);
		if (w) {
			i += (uint32_t)__builtin_ctzll(w);
			return i <= last ? (int)i : -ENOENT;
		}
		i = (i / 64 + 1) * 64;
	}
	return -ENOENT;
}

/* ---- state, size, mode ------------------------------------------------ */

/* Runs @fn on a present LUN's slot under the table lock. */
static struct lun_slot *locked_slot(struct lun_table *t, uint32_t lun)
{
	uint8_t st;

	if (lun >= t->max_luns)
		return NULL;
	pthread_mutex_lock(&t->lock);
	st = atomic_load(&t->slots[lun].state);
	if (!present(t, lun) || st == LUN_ABSENT || st == LUN_REMOVING) {
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	return &t->slots[lun];
}

int lun_resize(struct lun_table *t, uint32_t lun, uint64_t bytes)
{
	struct lun_slot *s = locked_slot(t, lun);
	const struct lun_group *g;
	uint64_t old, nb;

	if (!s)
		return -ENOENT;
	g = &t->groups[s->group];
	if (!bytes || bytes % g->block_size ||
	    bytes / g->block_size > (1ull << 53) / g->block_size) {
		pthread_mutex_unlock(&t->lock);
		return -EINVAL;
	}
	nb = bytes / g->block_size;
	old = atomic_exchange(&s->nblocks, nb);
	if (nb < old)
		store_unmap(t->store, lun, nb * g->block_size,
			    (old - nb) * g->block_size);
	if (nb != old)
		atomic_fetch_add(&s->ua_gen[UA_K_CAPACITY], 1);
	pthread_mutex_unlock(&t->lock);
	if (nb != old)
		changed(t, LUN_CHANGE_SIZE, lun, 0, 0);
	return 0;
}

int lun_set_state(struct lun_table *t, uint32_t lun, enum lun_state state)
{
	struct lun_slot *s;

	if (state != LUN_ONLINE && state != LUN_OFFLINE &&
	    state != LUN_NOT_READY && state != LUN_STOPPED)
		return -EINVAL;
	uint8_t cur;
	int ret = 0;

	s = locked_slot(t, lun);
	if (!s)
		return -ENOENT;
	/* a compare-exchange: a sanitize starts and ends without t->lock */
	cur = atomic_load(&s->state);
	do {
		if (cur == LUN_SANITIZING) {
			ret = -EBUSY;
			break;
		}
	} while (
		!atomic_compare_exchange_weak(&s->state, &cur, (uint8_t)state));
	pthread_mutex_unlock(&t->lock);
	if (!ret && cur != (uint8_t)state)
		changed(t, LUN_CHANGE_STATE, lun, 0, 0);
	return ret;
}

static void ua_raise(struct lun_table *t, uint32_t lun, enum ua_kind k,
		     uint32_t except);

int lun_mode_set(struct lun_table *t, uint32_t lun, uint16_t mode,
		 uint32_t except)
{
	struct lun_slot *s = locked_slot(t, lun);
	bool changed;

	if (!s)
		return -ENOENT;
	changed = atomic_exchange(&s->mode, mode) != mode;
	pthread_mutex_unlock(&t->lock);
	if (changed)
		ua_raise(t, lun, UA_K_MODE, except);
	return 0;
}

/* ---- sanitize ------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t san_hash(uint32_t lun)
{
	return (uint32_t)(((uint64_t)lun * 0x9e3779b97f4a7c15ull) >> 32);
}

/* @lun's entry, or NULL. Caller holds san_lock. */
static struct san_entry *san_find(struct lun_table *t, uint32_t lun)
{
	uint32_t i;

	if (!t->san_cap)
		return NULL;
	for (i = san_hash(lun) & (t->san_cap - 1);;
	     i = (i + 1) & (t->san_cap - 1)) {
		if (!t->san[i].gen)
			return NULL;
		if (t->san[i].lun == lun)
			return &t->san[i];
	}
}

/*
 * An entry for @lun, found or new; entries of LUNs no longer sanitizing
 * are left in place (a LUN number keeps at most one) and reused. Caller
 * holds san_lock. Return: the entry, or NULL without memory.
 */
static struct san_entry *san_get(struct lun_table *t, uint32_t lun)
{
	struct san_entry *e = san_find(t, lun), *old;
	uint32_t i, j, ocap;

	if (e)
		return e;
	if ((t->san_used + 1) * 4 > t->san_cap * 3) {
		old = t->san;
		ocap = t->san_cap;
		e = calloc(ocap ? ocap * 2 : 16, sizeof(*e));
		if (!e)
			return NULL;
		t->san = e;
		t->san_cap = ocap ? ocap * 2 : 16;
		for (i = 0; i < ocap; i++) {
			if (!old[i].gen)
				continue;
			j = san_hash(old[i].lun) & (t->san_cap - 1);
			while (t->san[j].gen)
				j = (j + 1) & (t->san_cap - 1);
			t->san[j] = old[i];
		}
		free(old);
	}
	i = san_hash(lun) & (t->san_cap - 1);
	while (t->san[i].gen)
		i = (i + 1) & (t->san_cap - 1);
	t->san_used++;
	t->san[i].lun = lun;
	return &t->san[i];
}

/*
 * A LUN whose slot says LUN_SANITIZING: still busy (the progress so far)
 * or done, when the slot goes back online. Return: the state to report.
 */
static enum lun_state san_state(struct lun_table *t, struct lun_slot *s,
				uint32_t lun, uint16_t *progress)
{
	struct san_entry *e;
	uint64_t now = mono_ns();
	uint8_t want = LUN_SANITIZING;
	enum lun_state st = LUN_SANITIZING;

	pthread_mutex_lock(&t->san_lock);
	e = san_find(t, lun);
	if (e && e->gen == s->gen && now < e->t1) {
		*progress = (uint16_t)((now - e->t0) * 65536 / (e->t1 - e->t0));
	} else {
		if (atomic_compare_exchange_strong(&s->state, &want,
						   LUN_ONLINE))
			st = LUN_ONLINE;
		else
			st = (enum lun_state)want;
	}
	pthread_mutex_unlock(&t->san_lock);
	return st;
}

int lun_sanitize_start(struct lun_table *t, const struct lun_info *info,
		       uint32_t ms)
{
	struct lun_slot *s = &t->slots[info->lun];
	struct san_entry *e;
	uint8_t want = LUN_ONLINE;
	uint64_t now;
	int ret = 0;

	if (!ms)
		return 0;
	pthread_mutex_lock(&t->san_lock);
	e = san_get(t, info->lun);
	if (!e) {
		ret = -ENOMEM;
		goto out;
	}
	/* the entry first: whoever sees LUN_SANITIZING finds its times */
	now = mono_ns();
	if (atomic_load(&s->state) != LUN_SANITIZING) {
		e->gen = s->gen;
		e->t0 = now;
		e->t1 = now + (uint64_t)ms * 1000000ull;
	}
	if (!atomic_compare_exchange_strong(&s->state, &want, LUN_SANITIZING))
		ret = want == LUN_SANITIZING ? -EBUSY : -ENOENT;
out:
	pthread_mutex_unlock(&t->san_lock);
	if (!ret)
		changed(t, LUN_CHANGE_STATE, info->lun, 0, 0);
	return ret;
}

/* ---- the command path: pin, snapshot, unit attentions ---------------- */

int lun_get(struct lun_table *t, uint32_t lun, struct lun_info *info)
{
	struct lun_slot *s;
	const struct lun_group *g;
	uint8_t st;

	if (lun >= t->max_luns)
		return -ENODEV;
	s = &t->slots[lun];
	atomic_fetch_add(&s->inflight, 1); /* seq_cst: see lun_remove() */
	st = atomic_load(&s->state);
	if (st == LUN_ABSENT || st == LUN_REMOVING) {
		lun_put(t, &(struct lun_info){.lun = lun});
		return -ENODEV;
	}
	g = &t->groups[s->group];
	info->lun = lun;
	info->gen = s->gen;
	info->progress = 0;
	info->state = st == LUN_SANITIZING
			      ? san_state(t, s, lun, &info->progress)
			      : (enum lun_state)st;
	info->group = g;
	info->nblocks = atomic_load_explicit(&s->nblocks, memory_order_relaxed);
	info->block_size = g->block_size;
	info->mode = atomic_load_explicit(&s->mode, memory_order_relaxed);
	info->table_owned =
		atomic_load_explicit(&s->flags, memory_order_acquire) &
		SLOT_TABLE_OWNED;
	lun_wwn(t, lun, &info->wwn_hi, &info->wwn_lo);
	fill_geom(t, g, lun, info->nblocks, &info->geom);
	return 0;
}

void lun_put(struct lun_table *t, const struct lun_info *info)
{
	struct lun_slot *s = &t->slots[info->lun];

	if (atomic_fetch_sub(&s->inflight, 1) == 1 &&
	    atomic_load(&s->state) == LUN_REMOVING)
		finish_removal(t, info->lun);
}

static struct ua_stripe *ua_stripe_of(struct lun_table *t, uint32_t nexus,
				      uint32_t lun)
{
	return &t->ua[(nexus * 31u + lun) % UA_STRIPES];
}

static uint32_t ua_hash(uint32_t nexus, uint32_t lun)
{
	uint64_t h = ((uint64_t)nexus << 32 | lun) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

/* The entry of (@nexus, @lun) in @st, or NULL. Caller holds st->lock. */
static struct ua_entry *ua_find(struct ua_stripe *st, uint32_t nexus,
				uint32_t lun)
{
	uint32_t i;

	if (!st->cap)
		return NULL;
	for (i = ua_hash(nexus, lun) & (st->cap - 1);;
	     i = (i + 1) & (st->cap - 1)) {
		struct ua_entry *e = &st->e[i];

		if (!e->lun_gen)
			return NULL;
		if (e->nexus == nexus && e->lun == lun)
			return e;
	}
}

static struct ua_entry *ua_slot_for(struct ua_stripe *st, uint32_t nexus,
				    uint32_t lun)
{
	uint32_t i = ua_hash(nexus, lun) & (st->cap - 1);

	while (st->e[i].lun_gen)
		i = (i + 1) & (st->cap - 1);
	return &st->e[i];
}

/*
 * Rebuilds @st at @cap entries, dropping those of @drop_nexus (UINT32_MAX:
 * none). Caller holds st->lock. Return: 0 or -ENOMEM (@st unchanged).
 */
static int ua_rehash(struct ua_stripe *st, uint32_t cap, uint32_t drop_nexus)
{
	struct ua_entry *old = st->e, *e;
	uint32_t i, ocap = st->cap;

	e = calloc(cap, sizeof(*e));
	if (!e)
		return -ENOMEM;
	st->e = e;
	st->cap = cap;
	st->used = 0;
	for (i = 0; i < ocap; i++) {
		if (!old[i].lun_gen || old[i].nexus == drop_nexus)
			continue;
		*ua_slot_for(st, old[i].nexus, old[i].lun) = old[i];
		st->used++;
	}
	free(old);
	return 0;
}

static void ua_entry_init(struct lun_table *t, struct lun_slot *s,
			  struct ua_entry *e, uint32_t gen)
{
	unsigned int k;

	e->lun_gen = gen;
	e->prevent = 0;
	for (k = 0; k < 4; k++)
		e->seen[k] = atomic_load(&s->ua_gen[k]);
	e->seen[UA_SEEN_TRESET] = atomic_load(&t->reset_gen);
	e->seen[UA_SEEN_LUNS] = atomic_load(&t->luns_gen);
	e->alua_seen = atomic_load(&t->alua_gen);
	/*
	 * POWER ON OCCURRED goes to the first nexus that uses a new LUN, as
	 * scsi_debug and LIO do; later nexuses log in to a unit long powered.
	 */
	e->power_on =
		t->power_on_ua &&
		!(atomic_fetch_or(&s->flags, SLOT_POWERED) & SLOT_POWERED);
}

/*
 * (@nexus, @info's LUN)'s entry in @st, made if new (or re-made if the
 * number was reused since). Caller holds st->lock. Return: NULL without
 * memory.
 */
static struct ua_entry *ua_entry_locked(struct lun_table *t,
					struct ua_stripe *st,
					const struct lun_info *info,
					uint32_t nexus)
{
	struct lun_slot *s = &t->slots[info->lun];
	struct ua_entry *e = ua_find(st, nexus, info->lun);

	if (!e) {
		if ((st->used + 1) * 4 > st->cap * 3 &&
		    ua_rehash(st, st->cap ? st->cap * 2 : 64, UINT32_MAX))
			return NULL;
		e = ua_slot_for(st, nexus, info->lun);
		e->nexus = nexus;
		e->lun = info->lun;
		st->used++;
		ua_entry_init(t, s, e, info->gen);
	} else if (e->lun_gen != info->gen) {
		ua_entry_init(t, s, e, info->gen); /* the number was reused */
	}
	return e;
}

unsigned int lun_ua_take(struct lun_table *t, const struct lun_info *info,
			 uint32_t nexus, uint8_t *asc, uint8_t *ascq)
{
	struct lun_slot *s = &t->slots[info->lun];
	struct ua_stripe *st = ua_stripe_of(t, nexus, info->lun);
	struct ua_entry *e;
	uint16_t g[6], alua;
	unsigned int k, bit = 0;

	pthread_mutex_lock(&st->lock);
	e = ua_entry_locked(t, st, info, nexus);
	if (!e) {
		/* no memory for the pair: report nothing, try again */
		pthread_mutex_unlock(&st->lock);
		return 0;
	}
	for (k = 0; k < 4; k++)
		g[k] = atomic_load(&s->ua_gen[k]);
	g[UA_SEEN_TRESET] = atomic_load(&t->reset_gen);
	g[UA_SEEN_LUNS] = atomic_load(&t->luns_gen);
	alua = atomic_load(&t->alua_gen);

	if (e->power_on) {
		/* POWER ON OCCURRED reports the resets too (SAM-5 6.3.1) */
		e->power_on = 0;
		e->seen[UA_K_RESET] = g[UA_K_RESET];
		e->seen[UA_SEEN_TRESET] = g[UA_SEEN_TRESET];
		bit = LUN_UA_POWER_ON;
	} else if (e->seen[UA_K_RESET] != g[UA_K_RESET] ||
		   e->seen[UA_SEEN_TRESET] != g[UA_SEEN_TRESET]) {
		e->seen[UA_K_RESET] = g[UA_K_RESET];
		e->seen[UA_SEEN_TRESET] = g[UA_SEEN_TRESET];
		bit = LUN_UA_RESET;
	} else if (e->seen[UA_K_MODE] != g[UA_K_MODE]) {
		e->seen[UA_K_MODE] = g[UA_K_MODE];
		bit = LUN_UA_MODE_CHANGED;
	} else if (e->seen[UA_K_CAPACITY] != g[UA_K_CAPACITY]) {
		e->seen[UA_K_CAPACITY] = g[UA_K_CAPACITY];
		bit = LUN_UA_CAPACITY;
	} else if (e->alua_seen != alua) {
		e->alua_seen = alua;
		bit = LUN_UA_ALUA_CHANGED;
	} else if (e->seen[UA_SEEN_LUNS] != g[UA_SEEN_LUNS]) {
		e->seen[UA_SEEN_LUNS] = g[UA_SEEN_LUNS];
		bit = LUN_UA_LUNS_CHANGED;
	} else if (e->seen[UA_K_INJECTED] != g[UA_K_INJECTED]) {
		e->seen[UA_K_INJECTED] = g[UA_K_INJECTED];
		bit = LUN_UA_INJECTED;
	}
	pthread_mutex_unlock(&st->lock);

	switch (bit) {
	case 0:
		break;
	case LUN_UA_POWER_ON:
		ASC_PUT(*asc, *ascq, ASC_POWER_ON_OCCURRED);
		break;
	case LUN_UA_RESET:
		ASC_PUT(*asc, *ascq, ASC_POWER_ON_OR_RESET);
		break;
	case LUN_UA_MODE_CHANGED:
		ASC_PUT(*asc, *ascq, ASC_MODE_PARAMETERS_CHANGED);
		break;
	case LUN_UA_CAPACITY:
		ASC_PUT(*asc, *ascq, ASC_CAPACITY_DATA_HAS_CHANGED);
		break;
	case LUN_UA_LUNS_CHANGED:
		ASC_PUT(*asc, *ascq, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
		break;
	case LUN_UA_ALUA_CHANGED:
		ASC_PUT(*asc, *ascq, ASC_ASYMMETRIC_ACCESS_STATE_CHANGED);
		break;
	default:
		*asc = s->ua_asc;
		*ascq = s->ua_ascq;
		break;
	}
	return bit;
}

/*
 * Marks generation @now of seen[@k] as reported for @e (the originator of
 * the condition), unless @e still owes an older raise of it: then the
 * nexus reports it once, for that older one.
 */
static void ua_mark_seen(struct ua_entry *e, unsigned int k, uint16_t now)
{
	if (e->seen[k] == (uint16_t)(now - 1))
		e->seen[k] = now;
}

static void ua_raise(struct lun_table *t, uint32_t lun, enum ua_kind k,
		     uint32_t except)
{
	struct lun_slot *s = &t->slots[lun];
	uint16_t now = (uint16_t)(atomic_fetch_add(&s->ua_gen[k], 1) + 1);
	struct ua_stripe *st;
	struct ua_entry *e;

	if (except == LUN_NEXUS_NONE)
		return;
	st = ua_stripe_of(t, except, lun);
	pthread_mutex_lock(&st->lock);
	e = ua_find(st, except, lun);
	if (e)
		ua_mark_seen(e, k, now);
	pthread_mutex_unlock(&st->lock);
}

void lun_ua_set(struct lun_table *t, uint32_t lun, unsigned int bits,
		uint8_t asc, uint8_t ascq, uint32_t except)
{
	struct lun_slot *s;

	if (lun >= t->max_luns)
		return;
	s = &t->slots[lun];
	if (bits & LUN_UA_INJECTED) {
		s->ua_asc = asc;
		s->ua_ascq = ascq;
		ua_raise(t, lun, UA_K_INJECTED, except);
	}
	if (bits & LUN_UA_RESET)
		ua_raise(t, lun, UA_K_RESET, except);
	if (bits & LUN_UA_MODE_CHANGED)
		ua_raise(t, lun, UA_K_MODE, except);
	if (bits & LUN_UA_CAPACITY)
		ua_raise(t, lun, UA_K_CAPACITY, except);
	if (bits & LUN_UA_LUNS_CHANGED)
		lun_ua_set_all(t, LUN_UA_LUNS_CHANGED, except);
}

/* Applies ua_mark_seen(k, now) to every entry of @nexus: O(entries). */
static void ua_mark_nexus(struct lun_table *t, uint32_t nexus, unsigned int k,
			  uint16_t now)
{
	unsigned int i;
	uint32_t j;

	for (i = 0; i < UA_STRIPES; i++) {
		struct ua_stripe *st = &t->ua[i];

		pthread_mutex_lock(&st->lock);
		for (j = 0; j < st->cap; j++)
			if (st->e[j].lun_gen && st->e[j].nexus == nexus)
				ua_mark_seen(&st->e[j], k, now);
		pthread_mutex_unlock(&st->lock);
	}
}

void lun_ua_set_all(struct lun_table *t, unsigned int bits, uint32_t except)
{
	uint16_t now;

	if (bits & LUN_UA_RESET) {
		now = (uint16_t)(atomic_fetch_add(&t->reset_gen, 1) + 1);
		if (except != LUN_NEXUS_NONE)
			ua_mark_nexus(t, except, UA_SEEN_TRESET, now);
	}
	if (bits & LUN_UA_LUNS_CHANGED) {
		now = (uint16_t)(atomic_fetch_add(&t->luns_gen, 1) + 1);
		if (except != LUN_NEXUS_NONE)
			ua_mark_nexus(t, except, UA_SEEN_LUNS, now);
	}
	/* only implicit transitions: every nexus is told, none excepted */
	if (bits & LUN_UA_ALUA_CHANGED)
		atomic_fetch_add(&t->alua_gen, 1);
}

void lun_ua_nexus_gone(struct lun_table *t, uint32_t nexus)
{
	unsigned int i;

	for (i = 0; i < UA_STRIPES; i++) {
		struct ua_stripe *st = &t->ua[i];

		pthread_mutex_lock(&st->lock);
		/* on -ENOMEM the entries stay: a later command re-reports */
		if (st->cap)
			(void)ua_rehash(st, st->cap, nexus);
		pthread_mutex_unlock(&st->lock);
	}
}

size_t lun_ua_bytes(struct lun_table *t)
{
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < UA_STRIPES; i++) {
		pthread_mutex_lock(&t->ua[i].lock);
		n += (size_t)t->ua[i].cap * sizeof(struct ua_entry);
		pthread_mutex_unlock(&t->ua[i].lock);
	}
	return n;
}

/* ---- removable medium ----------------------------------------------- */

/* @e holds a prevention still in force (no reset since it was made). */
static bool ua_prevents(struct lun_table *t, const struct ua_entry *e)
{
	const struct lun_slot *s = &t->slots[e->lun];

	return e->prevent && e->lun_gen == s->gen &&
	       e->prevent_rgen == atomic_load(&s->ua_gen[UA_K_RESET]) &&
	       e->prevent_tgen == atomic_load(&t->reset_gen);
}

static bool removal_prevented(struct lun_table *t, uint32_t lun)
{
	unsigned int i;
	uint32_t j;
	bool found = false;

	for (i = 0; i < UA_STRIPES && !found; i++) {
		struct ua_stripe *st = &t->ua[i];

		pthread_mutex_lock(&st->lock);
		for (j = 0; j < st->cap && !found; j++)
			found = st->e[j].lun_gen && st->e[j].lun == lun &&
				ua_prevents(t, &st->e[j]);
		pthread_mutex_unlock(&st->lock);
	}
	return found;
}

int lun_prevent(struct lun_table *t, const struct lun_info *info,
		uint32_t nexus, bool prevent)
{
	struct lun_slot *s = &t->slots[info->lun];
	struct ua_stripe *st = ua_stripe_of(t, nexus, info->lun);
	struct ua_entry *e;
	int ret = 0;

	pthread_mutex_lock(&t->medium_lock);
	pthread_mutex_lock(&st->lock);
	e = ua_entry_locked(t, st, info, nexus);
	if (!e) {
		ret = -ENOMEM;
	} else {
		e->prevent = prevent;
		e->prevent_rgen = atomic_load(&s->ua_gen[UA_K_RESET]);
		e->prevent_tgen = atomic_load(&t->reset_gen);
	}
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_unlock(&t->medium_lock);
	return ret;
}

int lun_medium(struct lun_table *t, const struct lun_info *info, bool load)
{
	struct lun_slot *s = &t->slots[info->lun];
	uint8_t cur;
	int ret = 0;

	if (!info->group->removable)
		return -EPERM;
	pthread_mutex_lock(&t->medium_lock);
	cur = atomic_load(&s->state);
	/* a locked tray neither ejects nor takes a medium in */
	if ((!load || cur == LUN_NO_MEDIUM) &&
	    removal_prevented(t, info->lun)) {
		ret = -EBUSY;
		goto out;
	}
	do {
		if (cur == LUN_ABSENT || cur == LUN_REMOVING) {
			ret = -ENOENT;
			break;
		}
		if (cur == LUN_SANITIZING || cur == LUN_OFFLINE) {
			ret = -EBUSY;
			break;
		}
	} while (!atomic_compare_exchange_weak(
		&s->state, &cur, load ? LUN_ONLINE : LUN_NO_MEDIUM));
out:
	pthread_mutex_unlock(&t->medium_lock);
	if (!ret)
		changed(t, LUN_CHANGE_STATE, info->lun, 0, 0);
	return ret;
}

/* ---- block I/O --------------------------------------------------------- */

static int check_range(const struct lun_info *info, uint64_t lba, uint64_t n)
{
	if (lba > info->nblocks || n > info->nblocks - lba)
		return -ERANGE;
	return 0;
}

static int check_medium(const struct lun_info *info)
{
	if (info->state == LUN_OFFLINE || info->state == LUN_NOT_READY ||
	    info->state == LUN_STOPPED)
		return -ENOMEDIUM;
	return 0;
}

/* Copies @len bytes of @buf into the iovecs at byte offset @off. */
static void iov_put(const struct iovec *iov, unsigned int iovcnt, size_t off,
		    const void *buf, size_t len)
{
	const uint8_t *p = buf;
	unsigned int i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off;
		if (n > len)
			n = len;
		memcpy((uint8_t *)iov[i].iov_base + off, p, n);
		p += n;
		len -= n;
		off = 0;
	}
}

/*
 * Whether the generator still serves the table. Asked of the slot, not only
 * of @info: a command pinned before its own write took the table (EXTENDED
 * COPY within one LUN, a FUSE read-modify-write) must read what it wrote.
 */
static bool overlay(const struct lun_table *t, const struct lun_info *info)
{
	if (info->geom.kind == PTABLE_NONE || info->table_owned)
		return false;
	/* acquire: pairs with own_table()'s release of the flag */
	return !(atomic_load_explicit(&t->slots[info->lun].flags,
				      memory_order_acquire) &
		 SLOT_TABLE_OWNED);
}

/*
 * Whether a table block comes from the store or from the generator is
 * decided per unit, the store's granularity (or the block, if larger):
 * store_mapped() can only answer per unit, so one stored byte makes the
 * whole unit "held". The read overlay and own_table() apply the same rule,
 * so what the host reads before the table is owned is what stays after.
 */
static uint64_t unit_blocks(const struct lun_table *t,
			    const struct lun_info *info)
{
	uint64_t ub = store_granularity(t->store) / info->block_size;

	return ub ? ub : 1;
}

/* 1 if any byte of blocks [@first, @first + @n) is stored, 0 if none. */
static int unit_held(struct lun_table *t, const struct lun_info *info,
		     uint64_t first, uint64_t n)
{
	uint64_t bytes, run;
	int ret;

	if (first + n > info->nblocks)
		n = info->nblocks - first;
	bytes = n * info->block_size;
	ret = store_mapped(t->store, info->lun, first * info->block_size, bytes,
			   &run);
	if (ret)
		return ret;
	return run < bytes; /* a hole, then data within the unit */
}

/* ---- per-LUN counters --------------------------------------------------- */

int lun_stats_enable(struct lun_table *t, uint32_t first, uint32_t last)
{
	struct lun_ctr *c;
	uint32_t i;

	if (last < first || last >= t->max_luns ||
	    last - first >= LUN_STATS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (!t->ctr) {
		t->ctr = calloc(LUN_STATS_MAX, sizeof(*t->ctr));
		if (!t->ctr) {
			pthread_mutex_unlock(&t->lock);
			return -ENOMEM;
		}
	}
	/* off while the counters are zeroed: a count in flight may still
	 * land (a statistic), never outside the array */
	atomic_store_explicit(&t->ctr_win, 0, memory_order_relaxed);
	for (i = 0; i <= last - first; i++) {
		c = &t->ctr[i];
		atomic_store_explicit(&c->reads, 0, memory_order_relaxed);
		atomic_store_explicit(&c->writes, 0, memory_order_relaxed);
		atomic_store_explicit(&c->read_bytes, 0, memory_order_relaxed);
		atomic_store_explicit(&c->write_bytes, 0, memory_order_relaxed);
		atomic_store_explicit(&c->errors, 0, memory_order_relaxed);
	}
	/* release: the I/O path that sees the window sees t->ctr */
	atomic_store_explicit(&t->ctr_win,
			      (uint64_t)first << 32 | (last - first + 1),
			      memory_order_release);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void lun_stats_disable(struct lun_table *t)
{
	atomic_store_explicit(&t->ctr_win, 0, memory_order_relaxed);
}

int lun_stats_window(const struct lun_table *t, uint32_t *first, uint32_t *last)
{
	uint64_t w = atomic_load_explicit(&t->ctr_win, memory_order_relaxed);

	if (!w)
		return 0;
	*first = (uint32_t)(w >> 32);
	*last = *first + (uint32_t)w - 1;
	return 1;
}

int lun_stats_get(const struct lun_table *t, uint32_t lun,
		  struct lun_io_stats *out)
{
	/* acquire: pairs with lun_stats_enable()'s release of t->ctr */
	uint64_t w = atomic_load_explicit(&t->ctr_win, memory_order_acquire);
	uint32_t idx = lun - (uint32_t)(w >> 32);
	struct lun_ctr *c;

	if (!w || lun < (uint32_t)(w >> 32) || idx >= (uint32_t)w)
		return -ENOENT;
	c = &t->ctr[idx];
	out->reads = atomic_load_explicit(&c->reads, memory_order_relaxed);
	out->writes = atomic_load_explicit(&c->writes, memory_order_relaxed);
	out->read_bytes =
		atomic_load_explicit(&c->read_bytes, memory_order_relaxed);
	out->write_bytes =
		atomic_load_explicit(&c->write_bytes, memory_order_relaxed);
	out->errors = atomic_load_explicit(&c->errors, memory_order_relaxed);
	return 0;
}

/* One read or write of @lun, if its counters are on. */
static void io_count(struct lun_table *t, uint32_t lun, bool write,
		     uint64_t bytes, int ret)
{
	/* acquire: pairs with lun_stats_enable()'s release of t->ctr */
	uint64_t w = atomic_load_explicit(&t->ctr_win, memory_order_acquire);
	uint32_t idx = lun - (uint32_t)(w >> 32);
	struct lun_ctr *c;

	if (!w || lun < (uint32_t)(w >> 32) || idx >= (uint32_t)w)
		return;
	c = &t->ctr[idx];
	/* relaxed: counters, read now and then, ordered with nothing */
	if (ret) {
		atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
		return;
	}
	if (write) {
		atomic_fetch_add_explicit(&c->writes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->write_bytes, bytes,
					  memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(&c->reads, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->read_bytes, bytes,
					  memory_order_relaxed);
	}
}

static int read_blocks(struct lun_table *t, const struct lun_info *info,
		       uint64_t lba, uint32_t nblocks, const struct iovec *iov,
		       unsigned int iovcnt);

int lun_read(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	     uint32_t nblocks, const struct iovec *iov, unsigned int iovcnt)
{
	int ret = read_blocks(t, info, lba, nblocks, iov, iovcnt);

	io_count(t, info->lun, false, (uint64_t)nblocks * info->block_size,
		 ret);
	return ret;
}

static int read_blocks(struct lun_table *t, const struct lun_info *info,
		       uint64_t lba, uint32_t nblocks, const struct iovec *iov,
		       unsigned int iovcnt)
{
	uint64_t off = lba * info->block_size, end, blk, ub, unit = UINT64_MAX;
	uint8_t block[4096];
	unsigned int i;
	int ret, held = 0;

	ret = check_range(info, lba, nblocks);
	if (!ret)
		ret = check_medium(info);
	if (ret)
		return ret;
	for (i = 0; i < iovcnt; i++) {
		ret = store_read(t->store, info->lun, off, iov[i].iov_base,
				 iov[i].iov_len);
		if (ret)
			return ret;
		off += iov[i].iov_len;
	}
	if (!overlay(t, info) ||
	    ptable_range_is_synthetic(&info->geom, lba, nblocks) != 1)
		return 0;
	/*
	 * The few table blocks in range whose unit the store does not hold
	 * come from the generator: a handful of blocks (MBR, EBRs, GPT headers
	 * and entry blocks), so one store_mapped() a unit is cheap.
	 */
	end = lba + nblocks;
	ub = unit_blocks(t, info);
	for (blk = lba;
	     blk < end && ptable_next_synthetic(&info->geom, blk, &blk) == 1 &&
	     blk < end;
	     blk++) {
		if (blk / ub != unit) {
			unit = blk / ub;
			held = unit_held(t, info, unit * ub, ub);
			if (held < 0)
				return held;
		}
		if (held)
			continue;
		ret = ptable_read(&info->geom, blk, 1, block);
		if (ret)
			return ret;
		iov_put(iov, iovcnt, (blk - lba) * info->block_size, block,
			info->block_size);
	}
	return 0;
}

/*
 * The host is about to write near the synthetic table. From here on the
 * store is the only truth for this LUN: write every table block into it
 * first (once), so that blocks the write does not cover keep their content
 * and a later zeroing of the table really reads back as zeros. Each unit is
 * judged before anything is written into it: writing its first table block
 * makes the whole unit mapped, and a later question about its next block
 * would take that for "already there" and skip it.
 */
static int own_table(struct lun_table *t, const struct lun_info *info)
{
	struct lun_slot *s = &t->slots[info->lun];
	uint8_t block[4096];
	uint64_t blk, ub, uend;
	int ret = 0, held;

	pthread_mutex_lock(&t->own_lock);
	if (atomic_load(&s->flags) & SLOT_TABLE_OWNED)
		goto out_unlock;
	ub = unit_blocks(t, info);
	for (blk = 0; ptable_next_synthetic(&info->geom, blk, &blk) == 1;
	     blk = uend) {
		uend = blk / ub * ub + ub;
		held = unit_held(t, info, blk / ub * ub, ub);
		if (held < 0) {
			ret = held;
			goto out_unlock;
		}
		if (held)
			continue; /* file store after a restart: already there */
		for (; blk < uend; blk++) {
			ret = ptable_next_synthetic(&info->geom, blk, &blk);
			if (ret != 1 || blk >= uend)
				break;
			ret = ptable_read(&info->geom, blk, 1, block);
			if (!ret)
				ret = store_write(t->store, info->lun,
						  blk * info->block_size, block,
						  info->block_size, 0);
			if (ret)
				goto out_unlock;
		}
		if (ret < 0)
			goto out_unlock;
	}
	ret = 0;
	/* release: a lun_get() that sees the flag sees the table written */
	atomic_fetch_or_explicit(&s->flags, SLOT_TABLE_OWNED,
				 memory_order_release);
out_unlock:
	pthread_mutex_unlock(&t->own_lock);
	return ret;
}

/* Before a modification of [lba, lba+n): take the table if it is touched. */
static int before_modify(struct lun_table *t, const struct lun_info *info,
			 uint64_t lba, uint64_t n)
{
	uint64_t gran, first, last;
	int ret;

	if (info->mode & LUN_MODE_SWP)
		return -EROFS;
	ret = check_medium(info);
	if (ret || !overlay(t, info))
		return ret;
	/* Widen to the store's allocation unit: a chunk is stored whole. */
	gran = unit_blocks(t, info);
	first = lba / gran * gran;
	last = (lba + n + gran - 1) / gran * gran;
	if (last > info->nblocks)
		last = info->nblocks;
	if (ptable_range_is_synthetic(&info->geom, first, last - first) != 1)
		return 0;
	return own_table(t, info);
}

int lun_write(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	      uint32_t nblocks, const struct iovec *iov, unsigned int iovcnt,
	      unsigned int flags)
{
	uint64_t off = lba * info->block_size;
	unsigned int i, sf = flags & LUN_IO_FUA ? STORE_FUA : 0;
	int ret;

	ret = check_range(info, lba, nblocks);
	if (!ret)
		ret = before_modify(t, info, lba, nblocks);
	if (ret)
		return ret;
	for (i = 0; i < iovcnt && !ret; i++) {
		ret = store_write(t->store, info->lun, off, iov[i].iov_base,
				  iov[i].iov_len, sf);
		off += iov[i].iov_len;
	}
	/* even a failed write may have changed some of the blocks */
	changed(t, LUN_CHANGE_DATA, info->lun, lba, nblocks);
	io_count(t, info->lun, true, (uint64_t)nblocks * info->block_size, ret);
	return ret;
}

int lun_write_zeroes(struct lun_table *t, const struct lun_info *info,
		     uint64_t lba, uint64_t nblocks, unsigned int flags)
{
	unsigned int sf = 0;
	int ret;

	ret = check_range(info, lba, nblocks);
	if (!ret)
		ret = before_modify(t, info, lba, nblocks);
	if (ret)
		return ret;
	if (flags & LUN_IO_FUA)
		sf |= STORE_FUA;
	if (flags & LUN_IO_UNMAP)
		sf |= STORE_UNMAP;
	ret = store_write_zeroes(t->store, info->lun, lba * info->block_size,
				 nblocks * info->block_size, sf);
	changed(t, LUN_CHANGE_DATA, info->lun, lba, nblocks);
	return ret;
}

int lun_unmap(struct lun_table *t, const struct lun_info *info, uint64_t lba,
	      uint64_t nblocks)
{
	int ret;

	ret = check_range(info, lba, nblocks);
	if (!ret)
		ret = before_modify(t, info, lba, nblocks);
	if (ret)
		return ret;
	ret = store_unmap(t->store, info->lun, lba * info->block_size,
			  nblocks * info->block_size);
	changed(t, LUN_CHANGE_DATA, info->lun, lba, nblocks);
	return ret;
}

int lun_flush(struct lun_table *t, const struct lun_info *info)
{
	int ret = check_medium(info);

	return ret ? ret : store_flush(t->store, info->lun);
}

int lun_lba_status(struct lun_table *t, const struct lun_info *info,
		   uint64_t lba, uint64_t max, uint64_t *run)
{
	uint64_t next, bytes;
	int ret;

	if (lba >= info->nblocks)
		return -ERANGE;
	if (max > info->nblocks - lba)
		max = info->nblocks - lba;
	if (!max)
		max = 1;
	if (overlay(t, info)) {
		if (ptable_block_is_synthetic(&info->geom, lba) == 1) {
			*run = 1;
			return 1;
		}
		/* stop the store's run at the next table block */
		if (ptable_next_synthetic(&info->geom, lba, &next) == 1 &&
		    next - lba < max)
			max = next - lba;
	}
	ret = store_mapped(t->store, info->lun, lba * info->block_size,
			   max * info->block_size, &bytes);
	if (ret < 0)
		return ret;
	*run = (bytes + info->block_size - 1) / info->block_size;
	if (!*run)
		*run = 1;
	return ret;
}
