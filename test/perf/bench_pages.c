/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * What a line costs when the lines a loop touches lie in many pages rather than in few: the
 * latency of a dependent load (a pointer chase in a random cycle) over N cache lines laid out
 * densely (64 bytes apart: N / 64 pages) and spread (one a page, 4,160 bytes apart: N pages),
 * on 2 MiB pages when the system has them, else on 4 KiB pages.
 *
 * Why: a server's many connections each have state of their own (the engine's connection, its
 * send-queue entries, the device's queues, a receive buffer), and at one call outstanding on
 * each, every call touches its connection's pages and none of the last call's. When the pages
 * the calls of a round touch are more than the TLB holds, each costs a walk. Inside a VM the
 * walk is two-dimensional, and the guest's 2 MiB pages may be backed by the host's 4 KiB ones:
 * the spread column then stays slow on huge pages too (doc/xprt.md gives this VM's figures and
 * what they mean for bench_scale's 1000 x 1).
 *
 * usage: bench_pages [--quick]   (--quick: up to 16,384 lines, fewer loads)
 * Output: one line per N: the lines, ns a load dense (N / 64 pages), ns a load spread (N pages).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE   64u
#define SPREAD (4096u + LINE) /* one line a page, the next page's next line */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64: a fixed sequence, the same cycle on every run. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ns a load, chasing @loads pointers through @n lines @stride bytes apart in a random cycle. */
static double
chase(uint8_t *base, size_t n, size_t stride, size_t loads, size_t *order)
{
	uint64_t seed = 88172645463325252ull;
	void **p;
	double t0;
	size_t i;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t j = (size_t)(rnd(&seed) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++)
		*(void **)(base + order[i] * stride) = base + order[(i + 1) % n] * stride;
	p = (void **)(base + order[0] * stride);
	for (i = 0; i < n; i++) /* once round: every line and page touched first */
		p = (void **)*p;
	t0 = now_s();
	for (i = 0; i < loads; i++)
		p = (void **)*p;
	t0 = now_s() - t0;
	if (p == NULL) /* (keeps the chase) */
		printf("?\n");
	return t0 / (double)loads * 1e9;
}

int
main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	size_t max = quick ? 16384 : 131072, loads = quick ? 2000000 : 20000000;
	size_t len = max * SPREAD, n;
	const char *pages = "2 MiB";
	size_t *order;
	uint8_t *base;

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
		return 2;
	}
	len = (len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
		    -1, 0);
	if (base == MAP_FAILED) {
		pages = "4 KiB";
		base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		madvise(base, len, MADV_NOHUGEPAGE);
	}
	order = malloc(max * sizeof(*order));
	if (order == NULL)
		return 1;
	printf("dependent loads over N lines, on %s pages: ns a load\n", pages);
	printf("%8s %8s %8s\n", "lines", "dense", "spread");
	for (n = 1024; n <= max; n *= 2) {
		double d = chase(base, n, LINE, loads, order);
		double s = chase(base, n, SPREAD, loads, order);

		printf("%8zu %8.1f %8.1f\n", n, d, s);
	}
	free(order);
	munmap(base, len);
	return 0;
}
