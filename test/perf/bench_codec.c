/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Codec microbenchmark: one encode + decode pair of a transport header per operation.
 *
 *   v1_null     version 1 RDMA_MSG with three empty lists (a NULL call's header)
 *   v1_chunks   version 1 RDMA_MSG, one read chunk + one write chunk of two segments
 *   v2_null     version 2 RDMA2_MSG with empty lists
 *   v2_chunks   version 2 RDMA2_MSG with the chunks of v1_chunks
 *   empty       the harness alone (a call to an empty pair), to subtract
 *
 * Native runs report the median ns/op of several repetitions. For instruction counts, run under
 * callgrind with --toggle-collect=pair_<case> (test/perf/codec-bench.sh does): every pair_*
 * function is one encode + decode, and the program prints how many it ran.
 *
 * usage: bench_codec [-n ITERS] [-r REPS] [CASE ...]
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>

#define NOINLINE __attribute__((noinline))

static uint8_t buf[256];
static volatile uint32_t sink;

static struct rpcr_proto_rseg rreads[4], dreads[4];
static struct rpcr_proto_wchunk rwrites[4], dwrites[4];
static struct rpcr_proto_seg rsegs[8], dsegs[8];
static struct rpcr_proto_v1_hdr v1_null, v1_chunks, v1_dec;
static struct rpcr_proto_v2_hdr v2_null, v2_chunks, v2_dec;

static void
setup(void)
{
	struct rpcr_proto_seg w[2] = {{0x200, 4096, 0x10000}, {0x201, 4096, 0x20000}};
	struct rpcr_proto_seg rd = {0x100, 8192, 0x7f0000000000ull};

	v1_null = (struct rpcr_proto_v1_hdr){.xid = 1, .vers = 1, .credit = 32, .proc = 0};
	rpcr_proto_chunks_init(&v1_null.chunks, NULL, 0, NULL, 0, NULL, 0);
	v1_chunks = v1_null;
	rpcr_proto_chunks_init(&v1_chunks.chunks, rreads, 4, rwrites, 4, rsegs, 8);
	rpcr_proto_chunks_add_read(&v1_chunks.chunks, 88, &rd);
	rpcr_proto_chunks_add_write(&v1_chunks.chunks, w, 2);
	rpcr_proto_chunks_init(&v1_dec.chunks, dreads, 4, dwrites, 4, dsegs, 8);

	v2_null = (struct rpcr_proto_v2_hdr){.xid = 1, .vers = 2, .credit = 32, .htype = 0};
	rpcr_proto_chunks_init(&v2_null.chunks, NULL, 0, NULL, 0, NULL, 0);
	v2_chunks = v2_null;
	v2_chunks.chunks = v1_chunks.chunks;
	v2_chunks.inv_handle = 0x200;
	v2_dec.chunks = v1_dec.chunks;
}

NOINLINE static void
pair_empty(void)
{
	sink = buf[0];
}

NOINLINE static void
pair_v1_null(void)
{
	ssize_t n = rpcr_proto_v1_encode(&v1_null, buf, sizeof(buf));

	sink = (uint32_t)rpcr_proto_v1_decode(&v1_dec, buf, (size_t)n) + v1_dec.xid;
}

NOINLINE static void
pair_v1_chunks(void)
{
	ssize_t n = rpcr_proto_v1_encode(&v1_chunks, buf, sizeof(buf));

	sink = (uint32_t)rpcr_proto_v1_decode(&v1_dec, buf, (size_t)n) + v1_dec.chunks.nsegs;
}

NOINLINE static void
pair_v2_null(void)
{
	ssize_t n = rpcr_proto_v2_encode(&v2_null, buf, sizeof(buf));

	sink = (uint32_t)rpcr_proto_v2_decode(&v2_dec, buf, (size_t)n) + v2_dec.xid;
}

NOINLINE static void
pair_v2_chunks(void)
{
	ssize_t n = rpcr_proto_v2_encode(&v2_chunks, buf, sizeof(buf));

	sink = (uint32_t)rpcr_proto_v2_decode(&v2_dec, buf, (size_t)n) + v2_dec.chunks.nsegs;
}

struct bench_case {
	const char *name;
	void (*pair)(void);
	size_t hdr_len;
};

static const struct bench_case cases[] = {
	{"empty", pair_empty, 0},           {"v1_null", pair_v1_null, 28},
	{"v1_chunks", pair_v1_chunks, 96},  {"v2_null", pair_v2_null, 36},
	{"v2_chunks", pair_v2_chunks, 100},
};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	unsigned long iters = 10000000, reps = 7, i, r;
	double t[64];
	size_t c;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = strtoul(optarg, NULL, 0);
			if (reps < 1 || reps > 64)
				reps = 7;
			break;
		default:
			fprintf(stderr, "usage: bench_codec [-n ITERS] [-r REPS] [CASE ...]\n");
			return 2;
		}
	}
	setup();
	printf("%-10s %8s %12s %10s\n", "case", "hdr B", "pairs", "ns/pair");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		bool selected = optind == argc;
		int a;

		for (a = optind; a < argc; a++)
			selected |= strcmp(argv[a], cases[c].name) == 0;
		if (!selected)
			continue;
		/* The encoder must produce what the table says, or the numbers mean nothing. */
		cases[c].pair();
		for (r = 0; r < reps; r++) {
			double t0 = now_ns();

			for (i = 0; i < iters; i++)
				cases[c].pair();
			t[r] = (now_ns() - t0) / (double)iters;
		}
		qsort(t, reps, sizeof(t[0]), cmp_double);
		printf("%-10s %8zu %12lu %10.2f\n", cases[c].name, cases[c].hdr_len, iters * reps,
		       t[reps / 2]);
	}
	return 0;
}
