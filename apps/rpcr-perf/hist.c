/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A log-linear histogram (HdrHistogram's shape): values below 128 have a bucket each; above,
 * every power of two is split into 64 buckets, so a bucket is at most 1/64 of its value wide and
 * a quantile read back is within 0.8 % (the bucket's midpoint). Recording is a few instructions
 * and no allocation, so it stays on for every call of a latency point; minimum, maximum and sum
 * are exact.
 */

#include <string.h>

#include "perf.h"

static uint32_t
bucket_of(uint64_t v)
{
	uint32_t msb, shift;

	if (v < 2 * PERF_HIST_SUB)
		return (uint32_t)v;
	msb = 63u - (uint32_t)__builtin_clzll(v);
	shift = msb - 6u; /* (v >> shift) is in [64, 127] */
	return 2 * PERF_HIST_SUB + (shift - 1) * PERF_HIST_SUB +
	       (uint32_t)((v >> shift) - PERF_HIST_SUB);
}

/* The lowest value of bucket @b and its width. */
static void
bucket_range(uint32_t b, uint64_t *lo, uint64_t *width)
{
	uint32_t shift;

	if (b < 2 * PERF_HIST_SUB) {
		*lo = b;
		*width = 1;
		return;
	}
	shift = (b - 2 * PERF_HIST_SUB) / PERF_HIST_SUB + 1;
	*lo = ((uint64_t)PERF_HIST_SUB + (b - 2 * PERF_HIST_SUB) % PERF_HIST_SUB) << shift;
	*width = 1ull << shift;
}

void
perf_hist_reset(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void
perf_hist_add(struct perf_hist *h, uint64_t v)
{
	h->counts[bucket_of(v)]++;
	h->n++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void
perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	uint32_t i;

	if (src->n == 0)
		return;
	for (i = 0; i < PERF_HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->n += src->n;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t
perf_hist_quantile(const struct perf_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, width, v;
	uint32_t i;

	if (h->n == 0)
		return 0;
	/* The smallest value with at least ceil(q * n) values at or below it. */
	rank = (uint64_t)(q * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (i = 0; i < PERF_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	bucket_range(i, &lo, &width);
	v = lo + width / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

void
perf_hist_lat(const struct perf_hist *h, uint64_t hz, struct perf_lat *lat)
{
	double us = 1e6 / (double)hz;

	memset(lat, 0, sizeof(*lat));
	if (h->n == 0)
		return;
	lat->min = (double)h->min * us;
	lat->p50 = (double)perf_hist_quantile(h, 0.50) * us;
	lat->p90 = (double)perf_hist_quantile(h, 0.90) * us;
	lat->p99 = (double)perf_hist_quantile(h, 0.99) * us;
	lat->p999 = (double)perf_hist_quantile(h, 0.999) * us;
	lat->max = (double)h->max * us;
	lat->mean = (double)h->sum / (double)h->n * us;
}
