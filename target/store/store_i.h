/* SPDX-License-Identifier: MIT */
/*
 * store internals: the operations table each back end fills in. store.c
 * checks every argument before dispatching, so back ends see only valid
 * LUNs, non-empty in-bounds ranges and known flags.
 */
#ifndef SDSWARM_STORE_I_H
#define SDSWARM_STORE_I_H

#include <stdint.h>

#include "store.h"

/*
 * Guarantees store.c gives a back end: lun < STORE_MAX_LUNS (or
 * STORE_ALL_LUNS for flush), 0 < len, off + len <= STORE_MAX_BYTES,
 * 0 < limit for mapped, flags within the call's known set, non-NULL buffers.
 */
struct store_ops {
	const char *kind;
	void (*destroy)(struct store *s);
	int (*read)(struct store *s, uint32_t lun, uint64_t off, void *buf,
		    size_t len);
	int (*write)(struct store *s, uint32_t lun, uint64_t off,
		     const void *buf, size_t len, unsigned int flags);
	int (*write_zeroes)(struct store *s, uint32_t lun, uint64_t off,
			    uint64_t len, unsigned int flags);
	int (*unmap)(struct store *s, uint32_t lun, uint64_t off, uint64_t len);
	int (*flush)(struct store *s, uint32_t lun);
	int (*mapped)(struct store *s, uint32_t lun, uint64_t off,
		      uint64_t limit, uint64_t *len_out);
	int (*drop_lun)(struct store *s, uint32_t lun);
	void (*get_stats)(struct store *s, struct store_stats *st);
	uint64_t (*lun_bytes)(struct store *s, uint32_t lun);
};

/* The first member of each back end's state. */
struct store {
	const struct store_ops *ops;
	uint32_t granularity;
};

#endif /* SDSWARM_STORE_I_H */
