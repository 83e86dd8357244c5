// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: sdnum_parse()/sdnum_parse_len() and every numbering
 * scheme's decode, checked as exact inverses. Input: a selector byte, then
 * either a name (the rest of the input) or 4-byte dev_t values and a
 * context description for `linux` and `dynamic`.
 *
 *   name: whatever sdnum_parse() accepts must name back to itself with
 *         sdnum_name_part(); sdnum_parse_len() must agree with it.
 *   dev:  whatever a scheme decodes must encode back to the same dev_t, and
 *         within the scheme's ranges; the old/new dev_t codecs round-trip.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdnum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const prefixes[] = {"sd", "vd", "xvd", "", "nvme"};

static void check_name(const uint8_t *data, size_t size)
{
	const char *prefix = prefixes[data[0] % 5];
	char name[256], back[SDNUM_NAME_MAX + 8];
	uint32_t index, index2;
	unsigned int part, part2;
	int ret, ret2;

	data++;
	size--;
	if (size >= sizeof(name))
		size = sizeof(name) - 1;
	memcpy(name, data, size);
	name[size] = '\0';
	ret = sdnum_parse(prefix, name, &index, &part);
	/* exactly @size bytes: a NUL inside is an error, not an end */
	ret2 = sdnum_parse_len(prefix, (const char *)data, size, &index2,
			       &part2);
	if (memchr(data, 0, size)) {
		if (ret2 != -EINVAL)
			abort();
	} else if (ret != ret2 ||
		   (!ret && (index != index2 || part != part2))) {
		abort();
	}
	if (ret == 0) {
		if (index > INT32_MAX || part > SDNUM_MAX_PART_NUMBER)
			abort();
		if (sdnum_name_part(prefix, index, part, back, sizeof(back)) <
		    0)
			abort();
		if (strcmp(back, name))
			abort();
	} else if (ret != -EINVAL && ret != -ERANGE) {
		abort();
	}
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void check_dev(const struct sdnum_scheme *s, const void *ctx,
		      uint32_t dev)
{
	uint32_t disk, part, back;
	int ret;

	ret = s->decode(ctx, dev, &disk, &part);
	if (ret == -ENODEV || ret == -EXDEV)
		return;
	if (ret)
		abort();
	if (disk >= s->max_disks || part > s->max_parts)
		abort();
	ret = s->encode(ctx, disk, part, &back);
	if (ret || back != dev)
		abort();
}

static void check_devs(const uint8_t *data, size_t size)
{
	uint32_t ord[64], idx[64];
	struct sdnum_extmap ext;
	struct sdnum_dynmap dyn;
	const struct sdnum_scheme *s;
	const void *ctx;
	unsigned int i, n;
	uint16_t old;

	if (size < 8)
		return;
	/* contexts: an extended-minor map and a discovery order of 64 disks */
	ext = (struct sdnum_extmap){.ndisks = data[1] + 1u,
				    .parts = 16u + data[2] % 240u,
				    .base = data[3] * 1024u};
	n = 1 + data[4] % 64;
	for (i = 0; i < 64; i++)
		ord[i] = idx[i] = UINT32_MAX;
	for (i = 0; i < n; i++) {
		/* a permutation of 0..n-1 picked by the input */
		unsigned int k = (i * 7u + data[5]) % n;

		while (idx[k] != UINT32_MAX)
			k = (k + 1) % n;
		idx[k] = i;
		ord[i] = k;
	}
	dyn = (struct sdnum_dynmap){.n = n, .ord = ord, .index = idx};
	for (size_t off = 8; off + 4 <= size; off += 4) {
		uint32_t dev = get32(data + off), v;

		for (i = 0; (s = sdnum_scheme_at(i)); i++) {
			ctx = NULL;
			if (data[6] & 1) {
				if (!strcmp(s->name, "linux"))
					ctx = &ext;
				else if (!strcmp(s->name, "dynamic"))
					ctx = &dyn;
			}
			check_dev(s, ctx, dev);
			if (!strcmp(s->name, "dynamic") &&
			    sdnum_dynamic_compat(ctx, dev, &v) == 0)
				check_dev(s, ctx, v);
		}
		if (sdnum_new_decode(sdnum_new_encode(dev)) != dev)
			abort();
		if (sdnum_old_encode(dev, &old) == 0 &&
		    sdnum_old_decode(old) != dev)
			abort();
		v = sdnum_new_decode(dev);
		if (sdnum_new_encode(v) != dev)
			abort();
		if (sdnum_sd_major_index(dev & 0xfff) >= 0 &&
		    sdnum_sd_major((unsigned int)sdnum_sd_major_index(
			    dev & 0xfff)) != (dev & 0xfff))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 0x80)
		check_devs(data, size);
	else
		check_name(data, size);
	return 0;
}
