/* SPDX-License-Identifier: MIT */
/*
 * Checked number parsing, as the kernel's kstrtoull(): the whole text is
 * the number (no sign, no spaces, no junk after it), and a value above the
 * caller's maximum is an error, not a wrap.
 */
#ifndef SDSWARM_COMMON_PARSE_H
#define SDSWARM_COMMON_PARSE_H

#include <stdint.h>

/**
 * parse_u64() - a whole number: decimal, or hexadecimal after "0x".
 * @s: the text, NUL-terminated.
 * @base: 10 for decimal digits only; 0 for decimal or, after "0x" or
 *        "0X", hexadecimal digits of either case. Never octal (unlike
 *        strtoull()'s 0): "010" is ten.
 * @max: the largest value accepted (inclusive).
 * @out: out, the value; written only on success.
 *
 * Digits are read left to right and the value is checked against @max at
 * each one, as kstrtoull() does: digits past @max are -ERANGE even when
 * junk follows them ("99999999999999999999x").
 *
 * Context: any; reads only @s.
 * Return: 0; -EINVAL if @s is not a number (empty, "0x" alone, a sign, a
 * space, any other character) or @base is neither 0 nor 10; -ERANGE if
 * its digits exceed @max.
 */
int parse_u64(const char *s, unsigned int base, uint64_t max, uint64_t *out);

/**
 * parse_u32() - parse_u64() for a 32-bit value.
 * @s: the text, NUL-terminated.
 * @base: 10 or 0, as for parse_u64().
 * @max: the largest value accepted (inclusive).
 * @out: out, the value; written only on success.
 *
 * Context: any; reads only @s.
 * Return: as parse_u64().
 */
int parse_u32(const char *s, unsigned int base, uint32_t max, uint32_t *out);

/**
 * parse_size() - a byte count: decimal digits and an optional binary
 * suffix K, M, G, T or P (powers of 1024, either case), which may be
 * followed by "iB" or "B" ("4K", "4k", "4KiB", "4KB").
 * @s: the text, NUL-terminated.
 * @max: the largest byte count accepted (inclusive).
 * @out: out, the bytes; written only on success.
 *
 * No hexadecimal, no fractions, no spaces: a size is typed by a person.
 *
 * Context: any; reads only @s.
 * Return: 0; -EINVAL if @s is not a size; -ERANGE if it is one above @max.
 */
int parse_size(const char *s, uint64_t max, uint64_t *out);

#endif
