// SPDX-License-Identifier: MIT
/*
 * Disk and partition names: the kernel's sd_format_disk_name() (bijective
 * base 26) and disk_name(), and their strict inverse.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "sdnum.h"

int sdnum_name(const char *prefix, uint32_t index, char *buf, size_t len)
{
	char body[SDNUM_MAX_BODY];
	size_t plen, blen = 0;
	int64_t i = index;

	if (!prefix || !buf || index > INT_MAX)
		return -EINVAL;
	plen = strnlen(prefix, SDNUM_MAX_PREFIX + 1);
	if (plen > SDNUM_MAX_PREFIX)
		return -EINVAL;

	/*
	 * Bijective base 26: each step takes a digit 0..25 and then subtracts
	 * one, so "a" follows "z" one letter longer (sdz = 25, sdaa = 26).
	 * Digits come out least significant first; INT_MAX needs 7.
	 */
	do {
		body[SDNUM_MAX_BODY - 1 - blen++] = (char)('a' + i % 26);
		i = i / 26 - 1;
	} while (i >= 0);

	if (plen + blen + 1 > len)
		return -ENOSPC;
	memcpy(buf, prefix, plen);
	memcpy(buf + plen, body + SDNUM_MAX_BODY - blen, blen);
	buf[plen + blen] = '\0';
	return (int)(plen + blen);
}

/* Writes the decimal of @v (1..255) to @out; returns its length. */
static size_t put_part(char *out, unsigned int v)
{
	char tmp[3];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

int sdnum_part_name(const char *disk, unsigned int part, char *buf, size_t len)
{
	char num[4];
	size_t dlen, nlen, need;
	int sep;

	if (!disk || !buf || !*disk || part > SDNUM_MAX_PART_NUMBER)
		return -EINVAL;
	dlen = strlen(disk);
	if (part == 0) {
		if (dlen + 1 > len)
			return -ENOSPC;
		memcpy(buf, disk, dlen + 1);
		return (int)dlen;
	}
	/* disk_name(): "nvme0n1" + 1 would read as "nvme0n11", hence the p. */
	sep = disk[dlen - 1] >= '0' && disk[dlen - 1] <= '9';
	nlen = put_part(num, part);
	need = dlen + (size_t)sep + nlen;
	if (need + 1 > len)
		return -ENOSPC;
	memcpy(buf, disk, dlen);
	if (sep)
		buf[dlen] = 'p';
	memcpy(buf + dlen + sep, num, nlen);
	buf[need] = '\0';
	return (int)need;
}

int sdnum_name_part(const char *prefix, uint32_t index, unsigned int part,
		    char *buf, size_t len)
{
	char disk[SDNUM_NAME_MAX];
	int n;

	if (part > SDNUM_MAX_PART_NUMBER)
		return -EINVAL;
	n = sdnum_name(prefix, index, disk, sizeof(disk));
	if (n < 0)
		return n;
	return sdnum_part_name(disk, part, buf, len);
}

int sdnum_parse_len(const char *prefix, const char *name, size_t len,
		    uint32_t *index, unsigned int *part)
{
	size_t plen, i, body, digits;
	uint64_t v = 0;
	unsigned int p = 0;

	if (!prefix || !name || !index || !part)
		return -EINVAL;
	plen = strnlen(prefix, SDNUM_MAX_PREFIX + 1);
	if (plen > SDNUM_MAX_PREFIX || len < plen ||
	    memcmp(name, prefix, plen) != 0)
		return -EINVAL;

	/* Syntax first, so junk is -EINVAL even when a number also overflows. */
	for (i = plen; i < len && name[i] >= 'a' && name[i] <= 'z'; i++)
		;
	body = i - plen;
	for (; i < len && name[i] >= '0' && name[i] <= '9'; i++)
		;
	digits = i - plen - body;
	if (i != len || body == 0)
		return -EINVAL;
	if (digits && name[plen + body] == '0')
		return -EINVAL; /* sda0, sda01 */

	if (body > SDNUM_MAX_BODY)
		return -ERANGE;
	for (i = plen; i < plen + body; i++)
		v = v * 26 + (uint64_t)(name[i] - 'a' + 1);
	if (v - 1 > INT_MAX)
		return -ERANGE;

	if (digits > 3)
		return -ERANGE;
	for (i = plen + body; i < len; i++)
		p = p * 10 + (unsigned int)(name[i] - '0');
	if (p > SDNUM_MAX_PART_NUMBER)
		return -ERANGE;

	*index = (uint32_t)(v - 1);
	*part = p;
	return 0;
}

int sdnum_parse(const char *prefix, const char *name, uint32_t *index,
		unsigned int *part)
{
	if (!name)
		return -EINVAL;
	return sdnum_parse_len(prefix, name, strlen(name), index, part);
}
