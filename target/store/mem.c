// SPDX-License-Identifier: MIT
/*
 * The sparse in-memory store.
 *
 * Every LUN's byte space is cut into chunks (a power of two, 4 KiB by
 * default). A chunk exists only while it holds a non-zero byte: unwritten
 * chunks read as zeros and cost nothing, and a write, unmap or write-zeroes
 * that leaves a chunk all zero frees it.
 *
 * Chunks live in N shards (a power of two) chosen by a hash of the key
 * lun << 44 | chunk index; each shard has its own mutex, an open-addressing
 * table (linear probing, backward-shift deletion, doubled at 3/4 full) from
 * key to chunk data, and its own slabs: chunk data is carved from large
 * anonymous mappings and recycled through an intrusive free list, so a chunk
 * carries no allocator header. Metadata is 16 bytes per table slot, i.e. at
 * most ~43 bytes per 4 KiB chunk right after a doubling (about 1%), plus 8
 * bytes per LUN in groups of 4096 LUNs.
 *
 * Each chunk is copied under its shard lock, so a write to one chunk is
 * atomic to readers of that chunk; there is no lock that every command takes.
 * The read path makes no system call and allocates nothing; the write path
 * maps a new slab once per many chunks (256 KiB, doubling to 64 MiB) and
 * grows a table by doubling (an O(shard size) rehash under that shard lock).
 *
 * With a memory limit, usage is accounted in one atomic counter of chunks
 * (allocated + reserved): a single-chunk write reserves under its shard
 * lock, a multi-chunk write counts the chunks it lacks first and reserves
 * them all at once, so a write that does not fit fails before changing
 * anything. Freed chunk memory stays mapped for reuse (see free_bytes).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "store_i.h"

/* Key layout: 20 bits of LUN over 44 bits of chunk index. With the smallest
 * chunk (512 bytes) 44 bits still cover STORE_MAX_BYTES. */
#define MEM_LUN_SHIFT 44
#define MEM_CHUNK_LIMIT (1ULL << MEM_LUN_SHIFT)
#define MEM_TABLE_MIN 16u
/* Per-LUN chunk counters come in pages of 4096 (32 KiB), made on demand. */
#define MEM_LUN_PAGE_SHIFT 12
#define MEM_LUNS_PER_PAGE (1u << MEM_LUN_PAGE_SHIFT)
#define MEM_LUN_PAGES (STORE_MAX_LUNS / MEM_LUNS_PER_PAGE)
/* A lookup (lock, hash, probe) costs about as much as scanning 16 slots:
 * ranges longer than 1/16 of all slots are handled by a table scan. */
#define MEM_SCAN_RATIO 16u
#define MEM_SLAB_MIN (256u * 1024)
#define MEM_SLAB_MAX (64u * 1024 * 1024)

/*
 * Under AddressSanitizer, free chunks and the uncarved part of a slab are
 * poisoned, so a stale pointer into a freed chunk is reported.
 */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_ASAN 1
#endif
#endif

#ifdef MEM_ASAN
#include <sanitizer/asan_interface.h>
#define mem_poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define mem_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define mem_poison(p, n) ((void)(p), (void)(n))
#define mem_unpoison(p, n) ((void)(p), (void)(n))
#endif

struct mem_slot {
	uint64_t key;
	unsigned char *data; /* NULL: the slot is empty */
};

struct mem_slab {
	void *base;
	size_t bytes;
};

/* Everything but @reads is protected by @lock. */
struct mem_shard {
	pthread_mutex_t lock;
	struct mem_slot *slots; /* NULL until the first chunk */
	uint64_t mask; /* slots - 1 */
	uint64_t used; /* chunks allocated */
	void *free_list; /* freed chunks, linked through word 0 */
	uint64_t nfree;
	unsigned char *bump; /* the newest slab's chunks not yet handed out */
	unsigned char *bump_end;
	struct mem_slab *slabs;
	size_t nslabs;
	size_t slabs_cap;
	size_t next_slab; /* bytes of the next slab to map */
	uint64_t slab_bytes;
	uint64_t writes;
	uint64_t unmapped; /* chunks */
	/* Atomic: an empty LUN's read counts here without taking @lock. */
	_Atomic uint64_t reads;
} __attribute__((aligned(64)));

struct mem_store {
	struct store base; /* base.granularity is the chunk size */
	unsigned int shift;
	uint64_t cmask;
	unsigned int nshards;
	size_t slab_max;
	bool limited;
	uint64_t limit_chunks;
	/* Chunks allocated plus reserved by writes in progress; kept only
	 * when @limited. Relaxed: a pure counter that publishes nothing. */
	_Atomic uint64_t limit_used;
	_Atomic uint64_t limit_hits;
	_Atomic uint64_t flushes;
	/* Sum of all table sizes, to choose between lookups and a scan. */
	_Atomic uint64_t slots_total;
	struct mem_shard *shards;
	/* Chunk counts per LUN. A page is installed once with release order
	 * (its zeroes are visible before its address) and freed on destroy. */
	_Atomic(_Atomic uint64_t *) lun_pages[MEM_LUN_PAGES];
};

static struct mem_store *mem_of(struct store *s)
{
	return (struct mem_store *)s;
}

static uint64_t mem_key(uint32_t lun, uint64_t c)
{
	return (uint64_t)lun << MEM_LUN_SHIFT | c;
}

/*
 * Multiply-xorshift mixer: a bijection on 64 bits in which every input bit
 * reaches every output bit, so consecutive chunks of one LUN spread evenly.
 * Bits 40.. pick the shard, the low bits the slot, so they are independent.
 */
static uint64_t mem_mix(uint64_t x)
{
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ULL;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ULL;
	x ^= x >> 32;
	return x;
}

static struct mem_shard *mem_shard_of(struct mem_store *m, uint64_t h)
{
	return &m->shards[(h >> 40) & (m->nshards - 1)];
}

static _Atomic uint64_t *mem_lun_counter(struct mem_store *m, uint32_t lun)
{
	_Atomic uint64_t *page = atomic_load_explicit(
		&m->lun_pages[lun >> MEM_LUN_PAGE_SHIFT], memory_order_acquire);

	return page ? &page[lun & (MEM_LUNS_PER_PAGE - 1)] : NULL;
}

/* Relaxed: a caller that sees a stale 0 returns the zeros a read racing the
 * LUN's first write may return anyway; a non-zero count leads to a lock. */
static uint64_t mem_lun_chunks(struct mem_store *m, uint32_t lun)
{
	_Atomic uint64_t *c = mem_lun_counter(m, lun);

	return c ? atomic_load_explicit(c, memory_order_relaxed) : 0;
}

/* The counter page of @lun's group, made on the group's first write. */
static int mem_lun_page_get(struct mem_store *m, uint32_t lun)
{
	_Atomic(_Atomic uint64_t *) *slot =
		&m->lun_pages[lun >> MEM_LUN_PAGE_SHIFT];
	_Atomic uint64_t *page, *expected = NULL;

	if (atomic_load_explicit(slot, memory_order_acquire))
		return 0;
	page = calloc(MEM_LUNS_PER_PAGE, sizeof(*page));
	if (!page)
		return -ENOMEM;
	if (!atomic_compare_exchange_strong_explicit(slot, &expected, page,
						     memory_order_release,
						     memory_order_acquire))
		free(page);
	return 0;
}

static void mem_lun_add(struct mem_store *m, uint32_t lun, int64_t d)
{
	atomic_fetch_add_explicit(mem_lun_counter(m, lun), (uint64_t)d,
				  memory_order_relaxed);
}

/*
 * Word at a time, stopping at the first non-zero 64-byte block: real data
 * usually fails on the first one, so the check costs next to nothing unless
 * the bytes really are zero.
 */
static bool mem_is_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w[8];

	while (n && ((uintptr_t)b & 7)) {
		if (*b)
			return false;
		b++;
		n--;
	}
	while (n >= sizeof(w)) {
		memcpy(w, b, sizeof(w));
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			return false;
		b += sizeof(w);
		n -= sizeof(w);
	}
	while (n >= 8) {
		memcpy(w, b, 8);
		if (w[0])
			return false;
		b += 8;
		n -= 8;
	}
	while (n) {
		if (*b)
			return false;
		b++;
		n--;
	}
	return true;
}

/* Atomically take @n chunks of the limit, or none. */
static bool mem_reserve(struct mem_store *m, uint64_t n)
{
	uint64_t cur =
		atomic_load_explicit(&m->limit_used, memory_order_relaxed);

	do {
		if (cur > m->limit_chunks || n > m->limit_chunks - cur)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
		&m->limit_used, &cur, cur + n, memory_order_relaxed,
		memory_order_relaxed));
	return true;
}

static void mem_unreserve(struct mem_store *m, uint64_t n)
{
	atomic_fetch_sub_explicit(&m->limit_used, n, memory_order_relaxed);
}

/* ---- slabs: chunk memory ------------------------------------------------ */

/* Mapped lazily: only the pages of chunks handed out become resident. */
static int mem_slab_new(struct mem_store *m, struct mem_shard *sh)
{
	size_t bytes = sh->next_slab;
	void *base;

	if (sh->nslabs == sh->slabs_cap) {
		size_t ncap = sh->slabs_cap ? sh->slabs_cap * 2 : 8;
		struct mem_slab *ns = realloc(sh->slabs, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		sh->slabs = ns;
		sh->slabs_cap = ncap;
	}
	base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -ENOMEM;
	sh->slabs[sh->nslabs].base = base;
	sh->slabs[sh->nslabs].bytes = bytes;
	sh->nslabs++;
	sh->bump = base;
	sh->bump_end = (unsigned char *)base + bytes;
	sh->slab_bytes += bytes;
	/* Doubling keeps the number of mappings (VMAs) logarithmic at first
	 * and bounded by data / 64 MiB after. */
	if (bytes < m->slab_max)
		sh->next_slab = bytes * 2;
	mem_poison(base, bytes);
	return 0;
}

/* @fresh: the chunk was never used, so it still holds mmap's zeroes. */
static unsigned char *mem_chunk_get(struct mem_store *m, struct mem_shard *sh,
				    bool *fresh)
{
	size_t cs = m->base.granularity;
	unsigned char *p = sh->free_list;

	if (p) {
		mem_unpoison(p, cs);
		memcpy(&sh->free_list, p, sizeof(void *));
		sh->nfree--;
		*fresh = false;
		return p;
	}
	if (sh->bump == sh->bump_end && mem_slab_new(m, sh) < 0)
		return NULL;
	p = sh->bump;
	sh->bump += cs;
	mem_unpoison(p, cs);
	*fresh = true;
	return p;
}

static void mem_chunk_put(struct mem_store *m, struct mem_shard *sh,
			  unsigned char *p)
{
	memcpy(p, &sh->free_list, sizeof(void *));
	sh->free_list = p;
	sh->nfree++;
	mem_poison(p, m->base.granularity);
}

/* ---- the per-shard table ------------------------------------------------ */

static struct mem_slot *mem_find(const struct mem_shard *sh, uint64_t key,
				 uint64_t h)
{
	uint64_t i;

	if (!sh->slots)
		return NULL;
	for (i = h & sh->mask;; i = (i + 1) & sh->mask) {
		struct mem_slot *e = &sh->slots[i];

		if (!e->data)
			return NULL;
		if (e->key == key)
			return e;
	}
}

/* Doubling: O(table) under the shard lock, amortized O(1) per insert. */
static int mem_grow(struct mem_store *m, struct mem_shard *sh)
{
	uint64_t ocap = sh->slots ? sh->mask + 1 : 0;
	uint64_t ncap = ocap ? ocap * 2 : MEM_TABLE_MIN;
	struct mem_slot *ns;
	uint64_t o, i;

	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (o = 0; o < ocap; o++) {
		struct mem_slot *e = &sh->slots[o];

		if (!e->data)
			continue;
		for (i = mem_mix(e->key) & (ncap - 1); ns[i].data;
		     i = (i + 1) & (ncap - 1))
			;
		ns[i] = *e;
	}
	free(sh->slots);
	sh->slots = ns;
	sh->mask = ncap - 1;
	atomic_fetch_add_explicit(&m->slots_total, ncap - ocap,
				  memory_order_relaxed);
	return 0;
}

/* @key must not be in the table. */
static int mem_insert(struct mem_store *m, struct mem_shard *sh, uint64_t key,
		      uint64_t h, unsigned char *data)
{
	uint64_t i;

	/* Grow at 3/4: probes stay short, and a freshly doubled table costs
	 * 16 / (3/8) = 43 bytes per chunk. Without memory for a bigger table
	 * a fuller one still works, up to 15/16. */
	if (!sh->slots || (sh->used + 1) * 4 > (sh->mask + 1) * 3) {
		int ret = mem_grow(m, sh);

		if (ret < 0 &&
		    (!sh->slots || (sh->used + 1) * 16 > (sh->mask + 1) * 15))
			return ret;
	}
	for (i = h & sh->mask; sh->slots[i].data; i = (i + 1) & sh->mask)
		;
	sh->slots[i].key = key;
	sh->slots[i].data = data;
	sh->used++;
	return 0;
}

/*
 * Backward-shift deletion: later members of the probe run move up into the
 * hole when their home slot allows, so no tombstones accumulate. Entries only
 * move into slots at or after @i (cyclically) within the run.
 */
static void mem_remove(struct mem_shard *sh, uint64_t i)
{
	uint64_t j = i, mask = sh->mask;

	for (;;) {
		struct mem_slot *e;
		uint64_t home;

		j = (j + 1) & mask;
		e = &sh->slots[j];
		if (!e->data)
			break;
		home = mem_mix(e->key) & mask;
		/* May move to @i iff its home is not in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			sh->slots[i] = *e;
			i = j;
		}
	}
	sh->slots[i].data = NULL;
	sh->used--;
}

/* Free the chunk in slot @i of @sh; @count: it was unmapped or zeroed. */
static void mem_release(struct mem_store *m, struct mem_shard *sh, uint64_t i,
			bool count)
{
	uint32_t lun = sh->slots[i].key >> MEM_LUN_SHIFT;
	unsigned char *data = sh->slots[i].data;

	mem_remove(sh, i);
	mem_chunk_put(m, sh, data);
	mem_lun_add(m, lun, -1);
	if (m->limited)
		mem_unreserve(m, 1);
	if (count)
		sh->unmapped++;
}

static bool mem_key_in(uint64_t key, uint32_t lun, uint64_t a, uint64_t b)
{
	uint64_t c = key & (MEM_CHUNK_LIMIT - 1);

	return (key >> MEM_LUN_SHIFT) == lun && c >= a && c < b;
}

/* A slot that starts a probe run: no run crosses it, so a scan that starts
 * there sees every run whole even while it deletes. Exists: load < 1. */
static uint64_t mem_scan_start(const struct mem_shard *sh)
{
	uint64_t i = 0;

	while (sh->slots[i].data)
		i++;
	return i;
}

/* ---- data path ---------------------------------------------------------- */

/*
 * Write @n bytes at @coff of chunk @c. @reserved counts chunks this write has
 * reserved against the limit and not used yet. @may_exceed: a multi-chunk
 * write past its point of no return takes a chunk beyond the limit rather
 * than fail half done (only when racing a free of that same chunk).
 */
static int mem_write_chunk(struct mem_store *m, uint32_t lun, uint64_t c,
			   size_t coff, const unsigned char *src, size_t n,
			   uint64_t *reserved, bool may_exceed, bool count)
{
	size_t cs = m->base.granularity;
	uint64_t key = mem_key(lun, c), h = mem_mix(key);
	struct mem_shard *sh = mem_shard_of(m, h);
	struct mem_slot *e;
	unsigned char *data;
	bool fresh;
	int ret;

	pthread_mutex_lock(&sh->lock);
	e = mem_find(sh, key, h);
	if (e) {
		memcpy(e->data + coff, src, n);
		if (mem_is_zero(src, n) && mem_is_zero(e->data, coff) &&
		    mem_is_zero(e->data + coff + n, cs - coff - n))
			mem_release(m, sh, (uint64_t)(e - sh->slots), true);
		goto out_done;
	}
	/* A hole already reads as these zeros. */
	if (mem_is_zero(src, n))
		goto out_done;
	if (m->limited) {
		if (*reserved) {
			(*reserved)--;
		} else if (!mem_reserve(m, 1)) {
			if (!may_exceed) {
				atomic_fetch_add_explicit(&m->limit_hits, 1,
							  memory_order_relaxed);
				ret = -ENOSPC;
				goto out_unlock;
			}
			atomic_fetch_add_explicit(&m->limit_used, 1,
						  memory_order_relaxed);
		}
	}
	data = mem_chunk_get(m, sh, &fresh);
	if (!data) {
		ret = -ENOMEM;
		goto out_unreserve;
	}
	ret = mem_insert(m, sh, key, h, data);
	if (ret < 0)
		goto out_put_chunk;
	if (!fresh) {
		memset(data, 0, coff);
		memset(data + coff + n, 0, cs - coff - n);
	}
	memcpy(data + coff, src, n);
	mem_lun_add(m, lun, 1);
out_done:
	if (count)
		sh->writes++;
	pthread_mutex_unlock(&sh->lock);
	return 0;

out_put_chunk:
	mem_chunk_put(m, sh, data);
out_unreserve:
	if (m->limited)
		mem_unreserve(m, 1);
out_unlock:
	pthread_mutex_unlock(&sh->lock);
	return ret;
}

/* Chunks of a write that are holes now and would receive non-zero data.
 * One extra lookup per chunk, paid only by multi-chunk writes under a limit. */
static uint64_t mem_count_missing(struct mem_store *m, uint32_t lun,
				  uint64_t off, const unsigned char *src,
				  size_t len)
{
	size_t cs = m->base.granularity, coff = off & m->cmask;
	uint64_t c = off >> m->shift, need = 0;

	while (len) {
		size_t n = len < cs - coff ? len : cs - coff;
		uint64_t key = mem_key(lun, c), h = mem_mix(key);
		struct mem_shard *sh = mem_shard_of(m, h);
		bool present;

		pthread_mutex_lock(&sh->lock);
		present = mem_find(sh, key, h) != NULL;
		pthread_mutex_unlock(&sh->lock);
		if (!present && !mem_is_zero(src, n))
			need++;
		src += n;
		len -= n;
		coff = 0;
		c++;
	}
	return need;
}

static int mem_write(struct store *s, uint32_t lun, uint64_t off,
		     const void *buf, size_t len, unsigned int flags)
{
	struct mem_store *m = mem_of(s);
	const unsigned char *src = buf;
	size_t cs = m->base.granularity, coff = off & m->cmask;
	uint64_t c = off >> m->shift, last = (off + len - 1) >> m->shift;
	uint64_t reserved = 0;
	bool multi = c != last;
	int ret;

	/* Memory is as durable as this store gets: STORE_FUA needs nothing. */
	(void)flags;
	ret = mem_lun_page_get(m, lun);
	if (ret < 0)
		return ret;
	if (m->limited && multi) {
		reserved = mem_count_missing(m, lun, off, src, len);
		if (reserved && !mem_reserve(m, reserved)) {
			atomic_fetch_add_explicit(&m->limit_hits, 1,
						  memory_order_relaxed);
			return -ENOSPC;
		}
	}
	for (;; c++) {
		size_t n = len < cs - coff ? len : cs - coff;

		ret = mem_write_chunk(m, lun, c, coff, src, n, &reserved, multi,
				      c == last);
		if (ret < 0 || c == last)
			break;
		src += n;
		len -= n;
		coff = 0;
	}
	/* Chunks another writer allocated between the count and the write. */
	if (reserved)
		mem_unreserve(m, reserved);
	return ret;
}

static int mem_read(struct store *s, uint32_t lun, uint64_t off, void *buf,
		    size_t len)
{
	struct mem_store *m = mem_of(s);
	unsigned char *dst = buf;
	size_t cs = m->base.granularity, coff = off & m->cmask;
	uint64_t c = off >> m->shift;
	struct mem_shard *sh;

	if (!mem_lun_chunks(m, lun)) {
		/* A LUN without data: no lock, no lookup. */
		memset(buf, 0, len);
		sh = mem_shard_of(m, mem_mix(mem_key(lun, c)));
		goto out_count;
	}
	for (;;) {
		size_t n = len < cs - coff ? len : cs - coff;
		uint64_t key = mem_key(lun, c), h = mem_mix(key);
		bool found;
		struct mem_slot *e;

		sh = mem_shard_of(m, h);
		pthread_mutex_lock(&sh->lock);
		e = mem_find(sh, key, h);
		found = e != NULL;
		if (found)
			memcpy(dst, e->data + coff, n);
		pthread_mutex_unlock(&sh->lock);
		if (!found)
			memset(dst, 0, n);
		len -= n;
		if (!len)
			break;
		dst += n;
		coff = 0;
		c++;
	}
out_count:
	/* Relaxed: a statistic; the line is the one just locked. */
	atomic_fetch_add_explicit(&sh->reads, 1, memory_order_relaxed);
	return 0;
}

/* Zero @n bytes at @coff of chunk @c in place; free the chunk if it is then
 * all zero. */
static void mem_zero_part(struct mem_store *m, uint32_t lun, uint64_t c,
			  size_t coff, size_t n)
{
	size_t cs = m->base.granularity;
	uint64_t key = mem_key(lun, c), h = mem_mix(key);
	struct mem_shard *sh = mem_shard_of(m, h);
	struct mem_slot *e;

	pthread_mutex_lock(&sh->lock);
	e = mem_find(sh, key, h);
	if (e) {
		memset(e->data + coff, 0, n);
		if (mem_is_zero(e->data, coff) &&
		    mem_is_zero(e->data + coff + n, cs - coff - n))
			mem_release(m, sh, (uint64_t)(e - sh->slots), true);
	}
	pthread_mutex_unlock(&sh->lock);
}

/* Free @lun's chunks [a, b) one lookup at a time: O(b - a), stopping when
 * the LUN has no chunk left. */
static void mem_free_each(struct mem_store *m, uint32_t lun, uint64_t a,
			  uint64_t b)
{
	uint64_t c;

	for (c = a; c < b && mem_lun_chunks(m, lun); c++) {
		uint64_t key = mem_key(lun, c), h = mem_mix(key);
		struct mem_shard *sh = mem_shard_of(m, h);
		struct mem_slot *e;

		pthread_mutex_lock(&sh->lock);
		e = mem_find(sh, key, h);
		if (e)
			mem_release(m, sh, (uint64_t)(e - sh->slots), true);
		pthread_mutex_unlock(&sh->lock);
	}
}

/*
 * Free @lun's chunks [a, b) with one pass over every shard's table:
 * O(all table slots, i.e. ~2x the chunks of the whole store), one shard lock
 * held at a time, stopping once the LUN has no chunk left.
 */
static void mem_free_scan(struct mem_store *m, uint32_t lun, uint64_t a,
			  uint64_t b, bool count)
{
	unsigned int i;

	for (i = 0; i < m->nshards && mem_lun_chunks(m, lun); i++) {
		struct mem_shard *sh = &m->shards[i];
		uint64_t start, k = 0, cap;

		pthread_mutex_lock(&sh->lock);
		if (!sh->slots)
			goto next;
		cap = sh->mask + 1;
		start = mem_scan_start(sh);
		while (k < cap) {
			uint64_t j = (start + k) & sh->mask;

			if (sh->slots[j].data &&
			    mem_key_in(sh->slots[j].key, lun, a, b)) {
				/* Look at slot j again: a later entry of
				 * its run may have moved into it. */
				mem_release(m, sh, j, count);
				continue;
			}
			k++;
		}
next:
		pthread_mutex_unlock(&sh->lock);
	}
}

static bool mem_scan_pays(struct mem_store *m, uint64_t chunks)
{
	return chunks >
	       atomic_load_explicit(&m->slots_total, memory_order_relaxed) /
		       MEM_SCAN_RATIO;
}

static int mem_clear(struct mem_store *m, uint32_t lun, uint64_t off,
		     uint64_t len)
{
	size_t cs = m->base.granularity;
	uint64_t end = off + len;
	uint64_t a = (off + m->cmask) >> m->shift; /* first whole chunk */
	uint64_t b = end >> m->shift; /* past the last one */

	if (!mem_lun_chunks(m, lun))
		return 0;
	if (a > b) {
		/* Inside one chunk, touching neither of its edges. */
		mem_zero_part(m, lun, off >> m->shift, off & m->cmask, len);
		return 0;
	}
	if (off & m->cmask)
		mem_zero_part(m, lun, off >> m->shift, off & m->cmask,
			      cs - (off & m->cmask));
	if (end & m->cmask)
		mem_zero_part(m, lun, b, 0, end & m->cmask);
	if (a < b) {
		if (mem_scan_pays(m, b - a))
			mem_free_scan(m, lun, a, b, true);
		else
			mem_free_each(m, lun, a, b);
	}
	return 0;
}

static int mem_write_zeroes(struct store *s, uint32_t lun, uint64_t off,
			    uint64_t len, unsigned int flags)
{
	/* An all-zero chunk is never kept, with or without STORE_UNMAP; FUA
	 * needs nothing in memory. */
	(void)flags;
	return mem_clear(mem_of(s), lun, off, len);
}

static int mem_unmap(struct store *s, uint32_t lun, uint64_t off, uint64_t len)
{
	return mem_clear(mem_of(s), lun, off, len);
}

static int mem_flush(struct store *s, uint32_t lun)
{
	(void)lun;
	atomic_fetch_add_explicit(&mem_of(s)->flushes, 1, memory_order_relaxed);
	return 0;
}

static bool mem_present(struct mem_store *m, uint32_t lun, uint64_t c)
{
	uint64_t key = mem_key(lun, c), h = mem_mix(key);
	struct mem_shard *sh = mem_shard_of(m, h);
	bool found;

	pthread_mutex_lock(&sh->lock);
	found = mem_find(sh, key, h) != NULL;
	pthread_mutex_unlock(&sh->lock);
	return found;
}

/* The lowest chunk index in [a, b) that @lun has, or @b: one pass over every
 * shard's table, O(all table slots). */
static uint64_t mem_scan_first(struct mem_store *m, uint32_t lun, uint64_t a,
			       uint64_t b)
{
	uint64_t best = b, j;
	unsigned int i;

	for (i = 0; i < m->nshards; i++) {
		struct mem_shard *sh = &m->shards[i];

		pthread_mutex_lock(&sh->lock);
		for (j = 0; sh->slots && j <= sh->mask; j++) {
			if (sh->slots[j].data &&
			    mem_key_in(sh->slots[j].key, lun, a, best))
				best = sh->slots[j].key & (MEM_CHUNK_LIMIT - 1);
		}
		pthread_mutex_unlock(&sh->lock);
	}
	return best;
}

static int mem_mapped(struct store *s, uint32_t lun, uint64_t off,
		      uint64_t limit, uint64_t *len_out)
{
	struct mem_store *m = mem_of(s);
	uint64_t c = off >> m->shift, last = (off + limit - 1) >> m->shift;
	uint64_t end = c + 1, run;
	bool state;

	if (!mem_lun_chunks(m, lun)) {
		*len_out = limit;
		return 0;
	}
	state = mem_present(m, lun, c);
	if (state) {
		while (end <= last && mem_present(m, lun, end))
			end++;
	} else if (mem_scan_pays(m, last - c)) {
		end = mem_scan_first(m, lun, c + 1, last + 1);
	} else {
		while (end <= last && !mem_present(m, lun, end))
			end++;
	}
	run = (end << m->shift) - off;
	*len_out = run < limit ? run : limit;
	return state;
}

static int mem_drop_lun(struct store *s, uint32_t lun)
{
	struct mem_store *m = mem_of(s);

	if (mem_lun_chunks(m, lun))
		mem_free_scan(m, lun, 0, MEM_CHUNK_LIMIT, false);
	return 0;
}

static uint64_t mem_lun_bytes(struct store *s, uint32_t lun)
{
	struct mem_store *m = mem_of(s);

	return mem_lun_chunks(m, lun) << m->shift;
}

static void mem_get_stats(struct store *s, struct store_stats *st)
{
	struct mem_store *m = mem_of(s);
	unsigned int i, j;

	st->meta_bytes = sizeof(*m) + m->nshards * sizeof(struct mem_shard);
	for (i = 0; i < m->nshards; i++) {
		struct mem_shard *sh = &m->shards[i];

		pthread_mutex_lock(&sh->lock);
		st->chunks += sh->used;
		if (sh->slots)
			st->meta_bytes +=
				(sh->mask + 1) * sizeof(struct mem_slot);
		st->meta_bytes += sh->slabs_cap * sizeof(struct mem_slab);
		st->free_bytes += sh->nfree << m->shift;
		st->slab_bytes += sh->slab_bytes;
		st->writes += sh->writes;
		st->unmapped_bytes += sh->unmapped << m->shift;
		pthread_mutex_unlock(&sh->lock);
		st->reads +=
			atomic_load_explicit(&sh->reads, memory_order_relaxed);
	}
	for (i = 0; i < MEM_LUN_PAGES; i++) {
		_Atomic uint64_t *page = atomic_load_explicit(
			&m->lun_pages[i], memory_order_acquire);

		if (!page)
			continue;
		st->meta_bytes += MEM_LUNS_PER_PAGE * sizeof(*page);
		for (j = 0; j < MEM_LUNS_PER_PAGE; j++) {
			if (atomic_load_explicit(&page[j],
						 memory_order_relaxed))
				st->luns++;
		}
	}
	st->data_bytes = st->chunks << m->shift;
	st->limit_hits =
		atomic_load_explicit(&m->limit_hits, memory_order_relaxed);
	st->flushes = atomic_load_explicit(&m->flushes, memory_order_relaxed);
}

static void mem_destroy(struct store *s)
{
	struct mem_store *m = mem_of(s);
	unsigned int i;
	size_t j;

	for (i = 0; i < m->nshards; i++) {
		struct mem_shard *sh = &m->shards[i];

		for (j = 0; j < sh->nslabs; j++) {
			/* Unpoison first: the address range may be mapped
			 * again later for something else. */
			mem_unpoison(sh->slabs[j].base, sh->slabs[j].bytes);
			munmap(sh->slabs[j].base, sh->slabs[j].bytes);
		}
		free(sh->slabs);
		free(sh->slots);
		pthread_mutex_destroy(&sh->lock);
	}
	for (i = 0; i < MEM_LUN_PAGES; i++)
		free(atomic_load_explicit(&m->lun_pages[i],
					  memory_order_relaxed));
	free(m->shards);
	free(m);
}

static const struct store_ops mem_ops = {
	.kind = "mem",
	.destroy = mem_destroy,
	.read = mem_read,
	.write = mem_write,
	.write_zeroes = mem_write_zeroes,
	.unmap = mem_unmap,
	.flush = mem_flush,
	.mapped = mem_mapped,
	.drop_lun = mem_drop_lun,
	.get_stats = mem_get_stats,
	.lun_bytes = mem_lun_bytes,
};

int store_mem_create(struct store **out, const struct store_mem_params *p)
{
	static const struct store_mem_params defaults;
	pthread_mutexattr_t attr;
	struct mem_store *m;
	size_t cs, slab_min;
	unsigned int n, i;
	int ret;

	if (!out)
		return -EINVAL;
	if (!p)
		p = &defaults;
	cs = p->chunk_size ? p->chunk_size : STORE_MEM_DEFAULT_CHUNK;
	if (cs < STORE_MEM_MIN_CHUNK || cs > STORE_MEM_MAX_CHUNK ||
	    (cs & (cs - 1)))
		return -EINVAL;
	n = p->shards ? p->shards : STORE_MEM_DEFAULT_SHARDS;
	if (n > STORE_MEM_MAX_SHARDS || (n & (n - 1)))
		return -EINVAL;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base.ops = &mem_ops;
	m->base.granularity = (uint32_t)cs;
	m->shift = (unsigned int)__builtin_ctzll(cs);
	m->cmask = cs - 1;
	m->nshards = n;
	m->limited = p->mem_limit != 0;
	m->limit_chunks = p->mem_limit >> m->shift;
	slab_min = MEM_SLAB_MIN > 4 * cs ? MEM_SLAB_MIN : 4 * cs;
	m->slab_max = MEM_SLAB_MAX > 64 * cs ? MEM_SLAB_MAX : 64 * cs;

	m->shards = aligned_alloc(64, n * sizeof(*m->shards));
	if (!m->shards) {
		ret = -ENOMEM;
		goto out_free_store;
	}
	memset(m->shards, 0, n * sizeof(*m->shards));
	/* Adaptive: critical sections are a lookup and a memcpy of at most
	 * one chunk, so spinning briefly beats sleeping. */
	ret = -pthread_mutexattr_init(&attr);
	if (ret)
		goto out_free_shards;
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	for (i = 0; i < n; i++) {
		pthread_mutex_init(&m->shards[i].lock, &attr);
		m->shards[i].next_slab = slab_min;
	}
	pthread_mutexattr_destroy(&attr);
	*out = &m->base;
	return 0;

out_free_shards:
	free(m->shards);
out_free_store:
	free(m);
	return ret;
}
