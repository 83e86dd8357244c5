// SPDX-License-Identifier: MIT
/*
 * store: argument checks common to both back ends, then one indirect call.
 * Nothing here allocates or locks, so the hot path pays a few compares.
 */
#include <errno.h>
#include <string.h>

#include "store_i.h"

/* @off + @len within a LUN's address space, without overflowing. */
static int store_range_ok(uint64_t off, uint64_t len)
{
	return off <= STORE_MAX_BYTES && len <= STORE_MAX_BYTES - off;
}

void store_destroy(struct store *s)
{
	if (s)
		s->ops->destroy(s);
}

const char *store_kind(const struct store *s)
{
	return s->ops->kind;
}

uint32_t store_granularity(const struct store *s)
{
	return s->granularity;
}

int store_read(struct store *s, uint32_t lun, uint64_t off, void *buf,
	       size_t len)
{
	if (!s || lun >= STORE_MAX_LUNS || !store_range_ok(off, len))
		return -EINVAL;
	if (len == 0)
		return 0;
	if (!buf)
		return -EINVAL;
	return s->ops->read(s, lun, off, buf, len);
}

int store_write(struct store *s, uint32_t lun, uint64_t off, const void *buf,
		size_t len, unsigned int flags)
{
	if (!s || lun >= STORE_MAX_LUNS || !store_range_ok(off, len) ||
	    (flags & ~STORE_FUA))
		return -EINVAL;
	if (len == 0)
		return 0;
	if (!buf)
		return -EINVAL;
	return s->ops->write(s, lun, off, buf, len, flags);
}

int store_write_zeroes(struct store *s, uint32_t lun, uint64_t off,
		       uint64_t len, unsigned int flags)
{
	if (!s || lun >= STORE_MAX_LUNS || !store_range_ok(off, len) ||
	    (flags & ~(STORE_FUA | STORE_UNMAP)))
		return -EINVAL;
	if (len == 0)
		return 0;
	return s->ops->write_zeroes(s, lun, off, len, flags);
}

int store_unmap(struct store *s, uint32_t lun, uint64_t off, uint64_t len)
{
	if (!s || lun >= STORE_MAX_LUNS || !store_range_ok(off, len))
		return -EINVAL;
	if (len == 0)
		return 0;
	return s->ops->unmap(s, lun, off, len);
}

int store_flush(struct store *s, uint32_t lun)
{
	if (!s || (lun >= STORE_MAX_LUNS && lun != STORE_ALL_LUNS))
		return -EINVAL;
	return s->ops->flush(s, lun);
}

int store_mapped(struct store *s, uint32_t lun, uint64_t off, uint64_t limit,
		 uint64_t *len_out)
{
	if (!s || lun >= STORE_MAX_LUNS || off >= STORE_MAX_BYTES ||
	    limit == 0 || !len_out)
		return -EINVAL;
	if (limit > STORE_MAX_BYTES - off)
		limit = STORE_MAX_BYTES - off;
	return s->ops->mapped(s, lun, off, limit, len_out);
}

int store_drop_lun(struct store *s, uint32_t lun)
{
	if (!s || lun >= STORE_MAX_LUNS)
		return -EINVAL;
	return s->ops->drop_lun(s, lun);
}

void store_get_stats(struct store *s, struct store_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (s)
		s->ops->get_stats(s, st);
}

uint64_t store_lun_bytes(struct store *s, uint32_t lun)
{
	if (!s || lun >= STORE_MAX_LUNS)
		return 0;
	return s->ops->lun_bytes(s, lun);
}
