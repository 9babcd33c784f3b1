/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Device microbenchmark, in the manner of perftest's ib_send_lat and ib_write_bw/ib_read_bw,
 * between two processes pinned to two cores, written against lib/rdev (any driver):
 *
 *   send latency   ping-pong of Sends, 8 B to 4 KiB: round trip min / p50 / p99 / max
 *   write, read    bandwidth, 4 KiB to 4 MiB, 16 operations in flight
 *   memcpy         one core copying the same sizes between the same kind of buffers, in the
 *                  same run, as the yardstick for a device that moves bytes with the CPU
 *
 * usage: bench_rdev [--dev DEVARGS] [--iters N] [--bytes MiB-per-size] [--quick]
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "rdev_harness.h"

#define QD       64 /* receives posted, send-queue depth */
#define INFLIGHT 16
#define SLOT     4096

static struct player P;

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct buf {
	uint8_t *p;
	size_t len;
	struct rpcr_rdev_mr *mr;
};

static int
buf_get(struct buf *b, size_t len, uint32_t access)
{
	b->len = len;
	b->p = rpcr_mem_arena_alloc(P.arena, len, 4096);
	if (b->p == NULL)
		return -ENOMEM;
	memset(b->p, 0x5a, len);
	b->mr = rpcr_rdev_mr_reg(P.pd, b->p, len, access);
	return b->mr != NULL ? 0 : -rte_errno;
}

static void
buf_put(struct buf *b)
{
	rpcr_rdev_mr_dereg(b->mr);
	rte_free(b->p);
}

static void
repost(struct rpcr_rdev_qp *qp, const struct buf *rb, uint64_t slot)
{
	struct rpcr_rdev_sge s = {(uintptr_t)(rb->p + slot * SLOT), SLOT, rb->mr->lkey};
	struct rpcr_rdev_recv_wr w = {.wr_id = slot, .sg_list = &s, .num_sge = 1};

	if (rpcr_rdev_post_recv(qp, &w, 1) != 1) {
		fprintf(stderr, "post_recv failed: %s\n", strerror(rte_errno));
		exit(1);
	}
}

static void
before_recvs(struct rpcr_rdev_qp *qp, void *arg)
{
	const struct buf *rb = arg;
	uint64_t i;

	for (i = 0; i < QD; i++)
		repost(qp, rb, i);
}

/* Wait for one receive completion (send completions are consumed on the way). */
static struct rpcr_rdev_wc
wait_recv(void)
{
	struct rpcr_rdev_wc wc;

	for (;;) {
		if (rpcr_rdev_poll_cq(P.cq, &wc, 1) != 1)
			continue;
		if (wc.status != RPCR_RDEV_WC_SUCCESS) {
			fprintf(stderr, "completion error: %s\n",
				rpcr_rdev_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.opcode == RPCR_RDEV_WC_RECV)
			return wc;
	}
}

static void
send_one(struct rpcr_rdev_qp *qp, const struct buf *sb, uint32_t size, bool signaled)
{
	struct rpcr_rdev_sge s = {(uintptr_t)sb->p, size, sb->mr->lkey};
	struct rpcr_rdev_send_wr w = {.sg_list = &s,
				      .num_sge = 1,
				      .opcode = RPCR_RDEV_WR_SEND,
				      .flags = signaled ? RPCR_RDEV_WR_F_SIGNALED : 0};

	if (rpcr_rdev_post_send(qp, &w, 1) != 1) {
		fprintf(stderr, "post_send failed: %s\n", strerror(rte_errno));
		exit(1);
	}
}

static void
bench_lat(struct rpcr_rdev_qp *qp, const struct buf *sb, const struct buf *rb, uint32_t iters)
{
	static const uint32_t sizes[] = {8, 64, 256, 1024, 4096};
	uint64_t *rtt = malloc(sizeof(*rtt) * iters);
	double ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	size_t k;

	if (!P.server)
		printf("\nSend round trip (ping-pong, %u iterations, RTT in microseconds)\n"
		       "%8s %8s %8s %8s %8s\n",
		       iters, "bytes", "min", "p50", "p99", "max");
	for (k = 0; k < RTE_DIM(sizes); k++) {
		uint32_t i, total = iters + iters / 10; /* a tenth for warm-up */

		ctl_sync(&P, 100 + (uint32_t)k);
		for (i = 0; i < total; i++) {
			struct rpcr_rdev_wc wc;
			uint64_t t0 = rte_rdtsc();

			/* Signal one send in 16 so that the send queue frees its slots. */
			if (!P.server) {
				send_one(qp, sb, sizes[k], i % 16 == 15);
				wc = wait_recv();
			} else {
				wc = wait_recv();
				send_one(qp, sb, sizes[k], i % 16 == 15);
			}
			repost(qp, rb, wc.wr_id);
			if (!P.server && i >= total - iters)
				rtt[i - (total - iters)] = rte_rdtsc() - t0;
		}
		if (!P.server) {
			qsort(rtt, iters, sizeof(rtt[0]), cmp_u64);
			printf("%8u %8.3f %8.3f %8.3f %8.3f\n", sizes[k], rtt[0] * ns_per_tsc / 1e3,
			       rtt[iters / 2] * ns_per_tsc / 1e3,
			       rtt[iters * 99 / 100] * ns_per_tsc / 1e3,
			       rtt[iters - 1] * ns_per_tsc / 1e3);
			fflush(stdout);
		}
	}
	free(rtt);
}

/* Bytes per second of RDMA @opcode of @size, @total bytes, INFLIGHT at a time. */
static double
run_bw(struct rpcr_rdev_qp *qp, uint8_t opcode, const struct buf *lb, uint64_t raddr, uint32_t rkey,
       uint32_t size, uint64_t total)
{
	uint64_t n = total / size, posted = 0, done = 0, t0;
	struct rpcr_rdev_sge s = {(uintptr_t)lb->p, size, lb->mr->lkey};
	struct rpcr_rdev_wc wc[INFLIGHT];

	if (n < 8)
		n = 8;
	t0 = now_ns();
	while (done < n) {
		while (posted < n && posted - done < INFLIGHT) {
			struct rpcr_rdev_send_wr w = {
				.wr_id = posted,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = opcode,
				.flags = RPCR_RDEV_WR_F_SIGNALED,
				.rkey = rkey,
				.remote_addr = raddr,
			};

			if (rpcr_rdev_post_send(qp, &w, 1) != 1)
				break;
			posted++;
		}
		done += rpcr_rdev_poll_cq(P.cq, wc, INFLIGHT);
	}
	return (double)(n * size) / ((double)(now_ns() - t0) / 1e9);
}

static double
run_memcpy(uint8_t *dst, const uint8_t *src, uint32_t size, uint64_t total)
{
	uint64_t n = total / size, i, t0;

	if (n < 8)
		n = 8;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		memcpy(dst, src, size);
		/* Keep the compiler from folding the copies. */
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	return (double)(n * size) / ((double)(now_ns() - t0) / 1e9);
}

struct adv {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"iters", required_argument, NULL, 'i'},
					     {"bytes", required_argument, NULL, 'b'},
					     {"quick", no_argument, NULL, 'q'},
					     {NULL, 0, NULL, 0}};
	static const uint32_t bw_sizes[] = {4096, 16384, 65536, 262144, 1u << 20, 4u << 20};
	struct harness_conf hc = {.devargs = "shm",
				  .arena_bytes = 64u << 20,
				  .cq_depth = 4 * QD,
				  .server_lcore = 1,
				  .client_lcore = 0,
				  .quiet = true};
	uint32_t iters = 100000;
	uint64_t bytes = 512ull << 20;
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_qp *qp;
	struct buf sb, rb, big, big2;
	struct adv a;
	uint8_t len;
	int c, status;
	size_t k;

	while ((c = getopt_long(argc, argv, "d:i:b:q", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			hc.devargs = optarg;
			break;
		case 'i':
			iters = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			bytes = strtoull(optarg, NULL, 0) << 20;
			break;
		case 'q':
			iters = 2000;
			bytes = 16ull << 20;
			break;
		default:
			return 2;
		}
	}
	if (iters < 100)
		iters = 100;
	if (harness_start(&hc, &P) != 0)
		return 1;
	at = qp_attr(&P, QD, QD);
	if (buf_get(&sb, SLOT, RPCR_RDEV_ACCESS_LOCAL_WRITE) != 0 ||
	    buf_get(&rb, (size_t)QD * SLOT, RPCR_RDEV_ACCESS_LOCAL_WRITE) != 0 ||
	    buf_get(&big, 4u << 20,
		    RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE |
			    RPCR_RDEV_ACCESS_REMOTE_READ) != 0 ||
	    buf_get(&big2, 4u << 20, RPCR_RDEV_ACCESS_LOCAL_WRITE) != 0) {
		fprintf(stderr, "buffers: %s\n", strerror(rte_errno));
		return 1;
	}
	if (P.server) {
		a = (struct adv){(uintptr_t)big.p, big.mr->rkey, (uint32_t)big.len};
		qp = srv_accept(&P, &at, &a, sizeof(a), NULL, NULL, before_recvs, &rb);
	} else {
		struct rpcr_rdev_info info;

		rpcr_rdev_info_get(P.dev, &info);
		printf("rpcr device benchmark: %s (driver %s), server on lcore %d, client on lcore "
		       "%d\n",
		       hc.devargs, info.driver, hc.server_lcore, hc.client_lcore);
		qp = cli_connect(&P, &at, NULL, 0, (uint8_t *)&a, &len, before_recvs, &rb);
	}
	if (qp == NULL)
		return 1;

	bench_lat(qp, &sb, &rb, iters);

	ctl_sync(&P, 200);
	if (!P.server) {
		printf("\nBandwidth (%d in flight, %llu MiB per size), GB/s; memcpy on one core in "
		       "the "
		       "same run\n%10s %10s %10s %10s %10s %10s\n",
		       INFLIGHT, (unsigned long long)(bytes >> 20), "bytes", "write", "read",
		       "memcpy", "write/mc", "read/mc");
		for (k = 0; k < RTE_DIM(bw_sizes); k++) {
			uint32_t s = bw_sizes[k];
			double w = run_bw(qp, RPCR_RDEV_WR_WRITE, &big2, a.addr, a.rkey, s, bytes);
			double r = run_bw(qp, RPCR_RDEV_WR_READ, &big2, a.addr, a.rkey, s, bytes);
			double m = run_memcpy(big.p, big2.p, s, bytes);

			printf("%10u %10.2f %10.2f %10.2f %10.2f %10.2f\n", s, w / 1e9, r / 1e9,
			       m / 1e9, w / m, r / m);
			fflush(stdout);
		}
	}
	ctl_sync(&P, 201);

	qp_close(&P, qp);
	buf_put(&sb);
	buf_put(&rb);
	buf_put(&big);
	buf_put(&big2);
	status = harness_finish(&P);
	return P.server ? 0 : (status == 0 ? 0 : 1);
}
