/* SPDX-License-Identifier: MIT */
/*
 * ARRAY_SIZE(a): the number of elements of the array @a. Given a pointer
 * instead of an array it does not compile (as the kernel's), because the
 * answer would silently be sizeof(pointer) / sizeof(element).
 */
#ifndef SDSWARM_COMMON_ARRAY_H
#define SDSWARM_COMMON_ARRAY_H

/* clang-format off */
#define ARRAY_MUST_BE_ARRAY_(a) \
	(sizeof(struct { \
		 int not_an_array_ : __builtin_types_compatible_p( \
			 __typeof__(a), __typeof__(&(a)[0])) ? -1 : 1; \
	 }) * 0)

#define ARRAY_SIZE(a) \
	(sizeof(a) / sizeof((a)[0]) + ARRAY_MUST_BE_ARRAY_(a))
/* clang-format on */

#endif
