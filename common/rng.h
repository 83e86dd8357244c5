/* SPDX-License-Identifier: MIT */
/*
 * A seeded pseudo-random generator for tests and benchmarks: splitmix64
 * (Steele, Lea, Flood 2014; passes BigCrush), 64 bits of state, any seed
 * is good, and the same seed draws the same numbers on every platform.
 * Not for secrets: getrandom() is.
 */
#ifndef SDSWARM_COMMON_RNG_H
#define SDSWARM_COMMON_RNG_H

#include <stdint.h>

/* A value: a copy draws the same numbers as the original from then on. */
struct rng {
	uint64_t s;
};

/**
 * rng_mix64() - the splitmix64 finalizer, a bijection on 64 bits in which
 * every input bit flips each output bit with probability about 1/2.
 * @x: the input.
 *
 * What rng_next() returns for its state; also a hash of a 64-bit key.
 *
 * Context: any.
 * Return: the mixed value.
 */
static inline uint64_t rng_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/**
 * rng_init() - a generator at the start of @seed's stream.
 * @seed: any value, 0 included; equal seeds draw equal streams.
 *
 * Context: any.
 * Return: the generator, by value: `struct rng r = rng_init(42);`.
 */
static inline struct rng rng_init(uint64_t seed)
{
	return (struct rng){.s = seed};
}

/**
 * rng_next() - the next 64 random bits.
 * @r: the generator.
 *
 * Context: any; @r belongs to the caller (one per thread).
 * Return: a uniform 64-bit value.
 */
static inline uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio, odd */
	return rng_mix64(r->s);
}

/**
 * rng_below() - a uniform number in 0..@n-1 (inclusive), without the
 * modulo bias of rng_next() % @n.
 * @r: the generator.
 * @n: the bound, at least 1.
 *
 * Lemire's multiply-shift with rejection: the high half of a 128-bit
 * product, redrawn only when the low half falls in the 2^64 mod @n
 * values that would favour some results (about @n / 2^64 of draws: one
 * draw nearly always, one division rarely).
 *
 * Context: any; @r belongs to the caller.
 * Return: a value in 0..@n-1; 0 for @n of 0.
 */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t low = (uint64_t)m, t;

	if (low < n) {
		t = -n % n;
		while (low < t) {
			m = (unsigned __int128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

#endif
