// SPDX-License-Identifier: MIT
/*
 * Disk and partition names: the kernel's sd_format_disk_name() (bijective
 * base 26) and disk_name(), and their strict inverse.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "sdnum.h"

/*
 * First index of each name length: 26 + 26^2 + ... (index 0 is "a"). A name
 * of L letters is its index minus name_base[L], written as exactly L base-26
 * digits: the closed form of the kernel's divide-and-subtract-one loop.
 */
static const uint32_t name_base[SDNUM_MAX_BODY + 2] = {
	0, 0, 26, 702, 18278, 475254, 12356630, 321272406, UINT32_MAX,
};

int sdnum_name(const char *prefix, uint32_t index, char *buf, size_t len)
{
	size_t plen, blen = 1;
	uint32_t i;
	char *p;

	if (!prefix || !buf || index > INT_MAX)
		return -EINVAL;
	plen = strnlen(prefix, SDNUM_MAX_PREFIX + 1);
	if (plen > SDNUM_MAX_PREFIX)
		return -EINVAL;
	while (index >= name_base[blen + 1])
		blen++;
	if (plen + blen + 1 > len)
		return -ENOSPC;
	memcpy(buf, prefix, plen);
	p = buf + plen + blen;
	*p = '\0';
	/* division by the constant 26 compiles to a multiply */
	for (i = index - name_base[blen]; p > buf + plen; i /= 26)
		*--p = (char)('a' + i % 26);
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
	const char *p, *end = name + len, *body;
	size_t plen;
	uint64_t v = 0;
	unsigned int n = 0, digits = 0;

	if (!prefix || !name || !index || !part)
		return -EINVAL;
	plen = strnlen(prefix, SDNUM_MAX_PREFIX + 1);
	if (plen > SDNUM_MAX_PREFIX || len < plen ||
	    memcmp(name, prefix, plen) != 0)
		return -EINVAL;

	/*
	 * One pass. The index accumulates only while it can still fit (8
	 * letters exceed INT_MAX whatever they are), so it never overflows;
	 * syntax is judged over the whole name first, so junk is -EINVAL
	 * even when a number also overflows.
	 */
	body = name + plen;
	for (p = body; p < end && (unsigned char)(*p - 'a') < 26; p++)
		if (p - body <= SDNUM_MAX_BODY)
			v = v * 26 + (uint64_t)(*p - 'a' + 1);
	if (p == body)
		return -EINVAL;
	if (p < end && *p == '0')
		return -EINVAL; /* sda0, sda01 */
	for (; p < end && (unsigned char)(*p - '0') < 10; p++, digits++)
		if (digits < 4)
			n = n * 10 + (unsigned int)(*p - '0');
	if (p != end)
		return -EINVAL;
	if (v - 1 > INT_MAX || digits > 3 || n > SDNUM_MAX_PART_NUMBER)
		return -ERANGE;
	*index = (uint32_t)(v - 1);
	*part = n;
	return 0;
}

int sdnum_parse(const char *prefix, const char *name, uint32_t *index,
		unsigned int *part)
{
	if (!name)
		return -EINVAL;
	return sdnum_parse_len(prefix, name, strlen(name), index, part);
}
