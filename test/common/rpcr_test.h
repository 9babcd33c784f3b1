/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_TEST_H
#define RPCR_TEST_H

/*
 * A minimal unit-test harness: a table of named cases, CHECK macros that record failures and
 * go on, a seeded PRNG for property tests, and a main() that runs every case (or those named on
 * the command line) and exits non-zero when any check failed.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rpcr_test_case {
	const char *name;
	void (*fn)(void);
};

extern unsigned long rpcr_test_checks;
extern unsigned long rpcr_test_failed;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		rpcr_test_checks++;                                                              \
		if (!(cond)) {                                                                   \
			rpcr_test_failed++;                                                      \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_EQ(a, b)                                                                    \
	do {                                                                              \
		long long a_ = (long long)(a), b_ = (long long)(b);                       \
		rpcr_test_checks++;                                                       \
		if (a_ != b_) {                                                           \
			rpcr_test_failed++;                                               \
			fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);                      \
		}                                                                         \
	} while (0)

#define CHECK_MEM(a, b, n)                                                                  \
	do {                                                                                \
		rpcr_test_checks++;                                                         \
		if (memcmp((a), (b), (n)) != 0) {                                           \
			rpcr_test_failed++;                                                 \
			fprintf(stderr, "%s:%d: CHECK_MEM(%s, %s, %s) failed\n", __FILE__,  \
				__LINE__, #a, #b, #n);                                      \
			rpcr_test_hexdiff((const uint8_t *)(a), (const uint8_t *)(b), (n)); \
		}                                                                           \
	} while (0)

/* Print two buffers side by side, word by word, marking where they differ. */
void rpcr_test_hexdiff(const uint8_t *a, const uint8_t *b, size_t n);

/* splitmix64: small, fast, and the same sequence on every machine for a given seed. */
struct rpcr_test_rng {
	uint64_t s;
};

static inline uint64_t
rpcr_test_rand64(struct rpcr_test_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t
rpcr_test_rand32(struct rpcr_test_rng *r)
{
	return (uint32_t)(rpcr_test_rand64(r) >> 32);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t
rpcr_test_below(struct rpcr_test_rng *r, uint32_t n)
{
	return (uint32_t)(((uint64_t)rpcr_test_rand32(r) * n) >> 32);
}

/*
 * A value that exercises edges more than uniform draws would: 0, 1, all-ones, powers of two and
 * their neighbours, or anything.
 */
static inline uint32_t
rpcr_test_rand_u32_edgy(struct rpcr_test_rng *r)
{
	switch (rpcr_test_below(r, 6)) {
	case 0:
		return 0;
	case 1:
		return UINT32_MAX;
	case 2:
		return 1u << rpcr_test_below(r, 32);
	case 3:
		return (1u << rpcr_test_below(r, 32)) - 1;
	default:
		return rpcr_test_rand32(r);
	}
}

/* Seed for property tests: RPCR_TEST_SEED from the environment, or a fixed default. */
uint64_t rpcr_test_seed(void);

/* Iterations for property tests: RPCR_TEST_ITERS from the environment, or @dflt. */
unsigned long rpcr_test_iters(unsigned long dflt);

/* Run the cases; the test program's main() is just this. */
int rpcr_test_main(int argc, char **argv, const struct rpcr_test_case *cases, size_t n);

#define RPCR_TEST_MAIN(cases)                                                               \
	int main(int argc, char **argv)                                                     \
	{                                                                                   \
		return rpcr_test_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0])); \
	}

#endif /* RPCR_TEST_H */
