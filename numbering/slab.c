// SPDX-License-Identifier: MIT
/*
 * A cache of fixed-size objects: large slabs carved on demand, freed objects
 * kept on an intrusive LIFO list threaded through their own first bytes. One
 * malloc per slab, none per object; slabs are returned only on destroy.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "sdnum.h"

/*
 * Under AddressSanitizer, free and not-yet-carved objects are poisoned so that
 * a use after sdnum_slab_free() is reported as it would be for malloc. The
 * poisoning is by 8-byte granule; a granule shared by two objects is left
 * addressable, which can miss an access but never reports a false one.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif

#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define slab_poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define slab_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define slab_poison(p, n) ((void)(p), (void)(n))
#define slab_unpoison(p, n) ((void)(p), (void)(n))
#endif

#define SLAB_MAX_SIZE (1u << 20)
#define SLAB_MAX_ALIGN 4096u
#define SLAB_DEFAULT_BYTES (64u * 1024)

/* At the end of each slab, after its objects: the list of slabs to free. */
struct slab_tail {
	struct slab_tail *next;
};

struct sdnum_slab {
	size_t size;
	/* Distance between objects: @size rounded up to @align, at least a
	 * pointer (the free-list link lives in a free object). */
	size_t stride;
	size_t align;
	size_t per_slab;
	/* Offset of the tail in a slab, and the whole slab's size. */
	size_t tail_off;
	size_t slab_bytes;
	/* Freed objects, most recent first. */
	void *free_list;
	/* The newest slab's objects not yet handed out. */
	char *bump;
	char *bump_end;
	struct slab_tail *slabs;
	size_t in_use;
	size_t bytes;
};

static size_t slab_round_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The link is copied, not dereferenced: with a small @align an object (and
 * so its first pointer-sized bytes) need not be pointer-aligned. */
static void *slab_link_get(const void *obj)
{
	void *next;

	memcpy(&next, obj, sizeof(next));
	return next;
}

static void slab_link_set(void *obj, void *next)
{
	memcpy(obj, &next, sizeof(next));
}

int sdnum_slab_create(struct sdnum_slab **out, size_t size, size_t align,
		      size_t per_slab)
{
	struct sdnum_slab *s;
	size_t stride;

	if (!out || size == 0 || size > SLAB_MAX_SIZE)
		return -EINVAL;
	if (align == 0)
		align = alignof(max_align_t);
	if (align > SLAB_MAX_ALIGN || (align & (align - 1)))
		return -EINVAL;

	stride = slab_round_up(size < sizeof(void *) ? sizeof(void *) : size,
			       align);
	if (per_slab == 0) {
		per_slab = SLAB_DEFAULT_BYTES / stride;
		if (per_slab == 0)
			per_slab = 1;
	}
	/* Objects, the tail rounded to its alignment, and the tail. */
	if (per_slab > (SIZE_MAX - 2 * sizeof(struct slab_tail)) / stride)
		return -EINVAL;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->size = size;
	s->stride = stride;
	s->align = align < sizeof(void *) ? sizeof(void *) : align;
	s->per_slab = per_slab;
	s->tail_off =
		slab_round_up(per_slab * stride, alignof(struct slab_tail));
	s->slab_bytes = s->tail_off + sizeof(struct slab_tail);
	*out = s;
	return 0;
}

void sdnum_slab_destroy(struct sdnum_slab *s)
{
	struct slab_tail *t, *next;
	char *base;

	if (!s)
		return;
	for (t = s->slabs; t; t = next) {
		next = t->next;
		base = (char *)t - s->tail_off;
		slab_unpoison(base, s->tail_off);
		free(base);
	}
	free(s);
}

/* A new slab becomes the bump region. O(1): nothing is threaded or touched
 * until it is handed out, so a large slab costs only the pages used. */
static int slab_grow(struct sdnum_slab *s)
{
	struct slab_tail *t;
	void *mem;

	if (posix_memalign(&mem, s->align, s->slab_bytes))
		return -ENOMEM;
	t = (struct slab_tail *)((char *)mem + s->tail_off);
	t->next = s->slabs;
	s->slabs = t;
	s->bump = mem;
	s->bump_end = (char *)mem + s->per_slab * s->stride;
	s->bytes += s->slab_bytes;
	slab_poison(mem, s->tail_off);
	return 0;
}

void *sdnum_slab_alloc(struct sdnum_slab *s)
{
	void *obj = s->free_list;

	if (obj) {
		slab_unpoison(obj, s->size < sizeof(void *) ? sizeof(void *)
							    : s->size);
		s->free_list = slab_link_get(obj);
	} else {
		if (s->bump == s->bump_end && slab_grow(s))
			return NULL;
		obj = s->bump;
		s->bump += s->stride;
		slab_unpoison(obj, s->size);
	}
	s->in_use++;
	return obj;
}

void sdnum_slab_free(struct sdnum_slab *s, void *obj)
{
	if (!obj)
		return;
	slab_unpoison(obj, sizeof(void *));
	slab_link_set(obj, s->free_list);
	s->free_list = obj;
	s->in_use--;
	slab_poison(obj, s->stride);
}

size_t sdnum_slab_in_use(const struct sdnum_slab *s)
{
	return s->in_use;
}

size_t sdnum_slab_bytes(const struct sdnum_slab *s)
{
	return s->bytes;
}
