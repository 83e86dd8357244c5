// SPDX-License-Identifier: MIT
/*
 * Checked number parsing (see parse.h): one digit loop for every number a
 * person or a peer types, instead of strtoull() and its signs, spaces,
 * octal and errno.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "parse.h"

static int digit(char c, unsigned int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The run of digits at *@s, up to the first character that is not one:
 * -ERANGE as soon as they exceed @max, else 0 with *@s past them (no
 * digits at all is 0 too: the callers say what must follow).
 */
static int digits(const char **s, unsigned int base, uint64_t max,
		  uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0, d;
	int k;

	for (; (k = digit(*p, base)) >= 0; p++) {
		d = (uint64_t)k;
		if (d > max || v > (max - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*s = p;
	*out = v;
	return 0;
}

int parse_u64(const char *s, unsigned int base, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int ret;

	if (base == 0) {
		base = 10;
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			base = 16;
			s += 2;
		}
	} else if (base != 10) {
		return -EINVAL;
	}
	if (digit(*s, base) < 0)
		return -EINVAL;
	ret = digits(&s, base, max, &v);
	if (ret)
		return ret;
	if (*s)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_u32(const char *s, unsigned int base, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int ret = parse_u64(s, base, max, &v);

	if (!ret)
		*out = (uint32_t)v;
	return ret;
}

int parse_size(const char *s, uint64_t max, uint64_t *out)
{
	static const char suffixes[] = "KMGTP";
	const char *sfx;
	unsigned int shift = 0;
	uint64_t v;
	int ret;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	ret = digits(&s, 10, UINT64_MAX, &v);
	if (ret)
		return ret;
	if (*s) {
		sfx = strchr(suffixes, toupper((unsigned char)*s));
		if (!sfx || !*sfx)
			return -EINVAL;
		shift = 10 * (unsigned int)(sfx - suffixes + 1);
		s++;
		if (*s && strcmp(s, "iB") != 0 && strcmp(s, "B") != 0)
			return -EINVAL;
	}
	if (v > max >> shift)
		return -ERANGE;
	*out = v << shift;
	return 0;
}
