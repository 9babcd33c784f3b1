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

/* 0, every percent, then the tail, then 1 (the maximum). */
const double perf_cdf_q[PERF_CDF_POINTS] = {
	0.00, 0.01, 0.02,  0.03,  0.04,   0.05,   0.06,    0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13,
	0.14, 0.15, 0.16,  0.17,  0.18,   0.19,   0.20,    0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27,
	0.28, 0.29, 0.30,  0.31,  0.32,   0.33,   0.34,    0.35, 0.36, 0.37, 0.38, 0.39, 0.40, 0.41,
	0.42, 0.43, 0.44,  0.45,  0.46,   0.47,   0.48,    0.49, 0.50, 0.51, 0.52, 0.53, 0.54, 0.55,
	0.56, 0.57, 0.58,  0.59,  0.60,   0.61,   0.62,    0.63, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69,
	0.70, 0.71, 0.72,  0.73,  0.74,   0.75,   0.76,    0.77, 0.78, 0.79, 0.80, 0.81, 0.82, 0.83,
	0.84, 0.85, 0.86,  0.87,  0.88,   0.89,   0.90,    0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97,
	0.98, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.00,
};

void
perf_hist_lat(const struct perf_hist *h, uint64_t hz, struct perf_lat *lat)
{
	uint32_t i;

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
	for (i = 0; i < PERF_CDF_POINTS; i++)
		lat->cdf[i] = i == 0 ? lat->min
			      : i == PERF_CDF_POINTS - 1
				      ? lat->max
				      : (double)perf_hist_quantile(h, perf_cdf_q[i]) * us;
}
