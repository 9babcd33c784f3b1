/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The mlx5 driver's data path (drivers/rdev/mlx5/mlx5_rxtx.c) on the queue model
 * (test/rdev/mlx5_model.h): two QPs attached to model queues exactly as the control path
 * attaches them to a device's (mlx5_cq_attach(), mlx5_qp_attach() with what mlx5dv_init_obj()
 * would give), the model standing in for the device between the driver's calls. What is posted
 * through the driver is executed by the model from the WQEs alone; what the driver polls is what
 * the model wrote. Needs no RDMA device.
 *
 * usage: test_mlx5_dp [CASE ...]
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "mlx5_pair.h"
#include "rpcr_test.h"

/* ---- cases ---- */

/* Sends of each shape in one burst: inline, one entry, a gather list; one doorbell; only the
 * signalled one reported, and it frees all three slots. */
static void
test_send_recv(void)
{
	struct pair p;
	struct rpcr_rdev_sge g[4];
	struct rpcr_rdev_send_wr w[3];
	struct rpcr_rdev_wc wc[8];
	int i;

	pair_up(&p, &mlx5_pair_conf_default);
	for (i = 0; i < 4; i++)
		recv1(&p, 1, 100 + i, 0x80000 + i * 0x1000, 0x1000);
	fill(at(&p, 0), 0x1000, 1);
	g[0] = sge(&p, 0, 20);    /* inline (64 granted) */
	g[1] = sge(&p, 100, 200); /* one data segment */
	g[2] = sge(&p, 400, 100); /* a gather list of two */
	g[3] = sge(&p, 900, 50);
	w[0] = swr(1, RPCR_RDEV_WR_SEND, false, &g[0], 1);
	w[1] = swr(2, RPCR_RDEV_WR_SEND, false, &g[1], 1);
	w[2] = swr(3, RPCR_RDEV_WR_SEND, true, &g[2], 2);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 3), 3);
	CHECK_EQ(p.qp[0]->vq.sq_head, 3);
	CHECK_EQ(mm_step(p.m), 3);
	CHECK_EQ(doorbells(&p), 1);
	CHECK_EQ(mm_stats(p.m)->wqes, 3);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 3);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_SEND);
	CHECK_EQ(wc[0].byte_len, 150);
	CHECK(wc[0].qp == &p.qp[0]->vq.pub);
	CHECK_EQ(p.qp[0]->vq.sq_tail, 3);
	CHECK_EQ(drain(&p, 1, wc, 8), 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(wc[i].wr_id, 100 + i);
		CHECK_EQ(wc[i].status, RPCR_RDEV_WC_SUCCESS);
		CHECK_EQ(wc[i].opcode, RPCR_RDEV_WC_RECV);
		CHECK_EQ(wc[i].flags, 0);
		CHECK(wc[i].qp == &p.qp[1]->vq.pub);
	}
	CHECK_EQ(wc[0].byte_len, 20);
	CHECK_EQ(wc[1].byte_len, 200);
	CHECK_EQ(wc[2].byte_len, 150);
	CHECK_MEM(at(&p, 0x80000), at(&p, 0), 20);
	CHECK_MEM(at(&p, 0x81000), at(&p, 100), 200);
	CHECK_MEM(at(&p, 0x82000), at(&p, 400), 100);
	CHECK_MEM(at(&p, 0x82000 + 100), at(&p, 900), 50);
	CHECK_EQ(p.qp[1]->vq.rq_tail, 3);
	/* The consumer index reached the CQ's doorbell record. */
	CHECK_EQ(be32toh(p.cq[1]->dbrec[0]), 3);
	pair_down(&p);
}

/* RDMA Write (gather list, and inline) then Read back; the Read reports its length. */
static void
test_write_read(void)
{
	struct pair p;
	struct rpcr_rdev_sge g[3];
	struct rpcr_rdev_send_wr w[3];
	struct rpcr_rdev_wc wc[8];

	pair_up(&p, &mlx5_pair_conf_default);
	fill(at(&p, 0), 0x2000, 2);
	g[0] = sge(&p, 0, 300);
	g[1] = sge(&p, 0x1000, 5);
	w[0] = swr(1, RPCR_RDEV_WR_WRITE, true, g, 2);
	w[0].remote_addr = (uintptr_t)at(&p, 0x90000);
	w[0].rkey = p.key;
	g[2] = sge(&p, 0x1800, 40); /* inline */
	w[1] = swr(2, RPCR_RDEV_WR_WRITE, false, &g[2], 1);
	w[1].remote_addr = (uintptr_t)at(&p, 0x90000 + 305);
	w[1].rkey = p.key;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 2), 2);
	mm_step(p.m);
	CHECK_MEM(at(&p, 0x90000), at(&p, 0), 300);
	CHECK_MEM(at(&p, 0x90000 + 300), at(&p, 0x1000), 5);
	CHECK_MEM(at(&p, 0x90000 + 305), at(&p, 0x1800), 40);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 1);
	CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_RDMA_WRITE);
	CHECK_EQ(wc[0].byte_len, 305);
	/* Read it back into two entries. */
	g[0] = sge(&p, 0x4000, 200);
	g[1] = sge(&p, 0x5000, 145);
	w[0] = swr(7, RPCR_RDEV_WR_READ, true, g, 2);
	w[0].remote_addr = (uintptr_t)at(&p, 0x90000);
	w[0].rkey = p.key;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 7);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_RDMA_READ);
	CHECK_EQ(wc[0].byte_len, 345);
	CHECK_MEM(at(&p, 0x4000), at(&p, 0x90000), 200);
	CHECK_MEM(at(&p, 0x5000), at(&p, 0x90000 + 200), 145);
	CHECK_EQ(doorbells(&p), 2);
	CHECK_EQ(drain(&p, 1, wc, 8), 0); /* nothing at the responder */
	pair_down(&p);
}

/* Send with Invalidate: the key travels in the control segment, the receiver hears which. */
static void
test_send_inv(void)
{
	struct pair p;
	struct rpcr_rdev_sge g;
	struct rpcr_rdev_send_wr w;
	struct rpcr_rdev_wc wc[4];
	static uint8_t win[4096];
	uint32_t k;

	pair_up(&p, &mlx5_pair_conf_default);
	k = mm_reg(p.m, win, sizeof(win), MM_REMOTE_WRITE | MM_REMOTE_INV);
	recv1(&p, 1, 50, 0x80000, 256);
	fill(at(&p, 0), 100, 3);
	g = sge(&p, 0, 100);
	w = swr(9, RPCR_RDEV_WR_SEND_INV, true, &g, 1);
	w.invalidate_rkey = k;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK(!mm_key_valid(p.m, k));
	CHECK_EQ(drain(&p, 0, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 9);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(drain(&p, 1, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 50);
	CHECK_EQ(wc[0].flags, RPCR_RDEV_WC_F_WITH_INV);
	CHECK_EQ(wc[0].invalidated_rkey, k);
	CHECK_EQ(wc[0].byte_len, 100);
	CHECK_MEM(at(&p, 0x80000), at(&p, 0), 100);
	pair_down(&p);
}

/* A small send queue (16 blocks) and CQ (8 entries) taken round many times: WQEs of 1 to 3
 * blocks, inline or with up to 4 data segments, wrap at the ring's end (inline bytes and data
 * segments too), owner bits flip each pass. */
static void
test_ring_wrap(void)
{
	const struct pair_conf c = {.max_send_wr = 4,
				    .max_recv_wr = 4,
				    .sge = 4,
				    .max_inline = 100,
				    .cqe_cnt = 8,
				    .cqe_size = 64};
	struct rpcr_test_rng rng = {rpcr_test_seed()};
	unsigned long rounds = rpcr_test_iters(400), r;
	struct pair p;
	uint64_t sent = 0, ok = 0;

	pair_up(&p, &c);
	CHECK_EQ(p.qp[0]->sq_bb_mask + 1, 8 * 0 + 16);
	for (r = 0; r < rounds; r++) {
		struct rpcr_rdev_sge g[4][4];
		struct rpcr_rdev_send_wr w[4];
		struct rpcr_rdev_wc wc[8];
		uint32_t len[4], off;
		uint16_t n = (uint16_t)(1 + rpcr_test_below(&rng, 4)), i, got, ns, k;

		for (i = 0; i < n; i++) {
			uint32_t src = i * 0x1000;

			recv1(&p, 1, 1000 + i, 0x80000 + i * 0x1000, 0x1000);
			len[i] = rpcr_test_below(&rng, 2) ? 1 + rpcr_test_below(&rng, 100)
							  : 101 + rpcr_test_below(&rng, 400);
			fill(at(&p, src), len[i], (uint32_t)(r * 4 + i));
			/* One entry, or the bytes over 2 to 4 (inline or not: gather lists of
			 * inline bytes, and WQEs of 2 blocks whose segments wrap). */
			ns = (uint16_t)(1 + rpcr_test_below(&rng, 4));
			if (ns > len[i])
				ns = 1;
			for (k = 0, off = 0; k < ns; k++) {
				uint32_t part = k == ns - 1 ? len[i] - off : len[i] / ns;

				g[i][k] = sge(&p, src + off, part);
				off += part;
			}
			w[i] = swr(i, RPCR_RDEV_WR_SEND, i == n - 1, g[i], ns);
		}
		CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, n), n);
		sent += n;
		mm_step(p.m);
		CHECK_EQ(drain(&p, 0, wc, 8), 1);
		CHECK_EQ(wc[0].wr_id, n - 1);
		got = drain(&p, 1, wc, 8);
		CHECK_EQ(got, n);
		for (i = 0; i < got && i < n; i++) {
			CHECK_EQ(wc[i].byte_len, len[i]);
			CHECK_MEM(at(&p, 0x80000 + i * 0x1000), at(&p, i * 0x1000), len[i]);
			ok += wc[i].status == RPCR_RDEV_WC_SUCCESS;
		}
		if (mm_fault(p.m) != NULL || rpcr_test_failed != 0)
			break;
	}
	CHECK_EQ(ok, sent);
	CHECK_EQ(doorbells(&p), r == rounds ? rounds : r + 1);
	CHECK(p.qp[0]->sq_pi > 4 * 16); /* round the ring several times */
	CHECK(p.cq[1]->ci > 4 * 8);
	printf("  %lu rounds, %llu sends, send ring at block %u, receive CQ at %u\n", rounds,
	       (unsigned long long)sent, p.qp[0]->sq_pi, p.cq[1]->ci);
	pair_down(&p);
}

/* A Write to a key the peer does not have: REM_ACCESS_ERR, then the rest flushed (reported
 * though unsignalled), the QP known to be in error and its disconnection asked for; the peer's
 * receives flushed; a receive posted after the error flushed too. */
static void
test_remote_access_error(void)
{
	struct pair p;
	struct rpcr_rdev_sge g = {0};
	struct rpcr_rdev_send_wr w[3];
	struct rpcr_rdev_wc wc[8];
	uint64_t one;

	pair_up(&p, &mlx5_pair_conf_default);
	recv1(&p, 1, 70, 0x80000, 256);
	recv1(&p, 1, 71, 0x81000, 256);
	g = sge(&p, 0, 100);
	w[0] = swr(1, RPCR_RDEV_WR_WRITE, false, &g, 1);
	w[0].remote_addr = (uintptr_t)at(&p, 0x90000);
	w[0].rkey = p.key + 1;
	w[1] = swr(2, RPCR_RDEV_WR_SEND, false, &g, 1);
	w[2] = swr(3, RPCR_RDEV_WR_SEND, true, &g, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 3), 3);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 8), 3);
	CHECK_EQ(wc[0].wr_id, 1);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_REM_ACCESS_ERR);
	CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_RDMA_WRITE);
	CHECK_EQ(wc[1].wr_id, 2);
	CHECK_EQ(wc[1].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(wc[2].wr_id, 3);
	CHECK_EQ(wc[2].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(p.qp[0]->vq.sq_tail, 3);
	CHECK(p.qp[0]->vq.in_error);
	CHECK(p.qp[0]->vq.need_disc);
	CHECK_EQ(read(p.vd.wake_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	CHECK_EQ(drain(&p, 1, wc, 8), 2);
	CHECK_EQ(wc[0].wr_id, 70);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_RECV);
	CHECK_EQ(wc[1].wr_id, 71);
	CHECK_EQ(wc[1].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK(!p.qp[1]->vq.need_disc); /* a flush asks nothing */
	recv1(&p, 0, 80, 0x3000, 64);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 80);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	pair_down(&p);
}

/* A Send longer than the receive: LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR at the sender. */
static void
test_recv_too_small(void)
{
	struct pair p;
	struct rpcr_rdev_sge g;
	struct rpcr_rdev_send_wr w;
	struct rpcr_rdev_wc wc[4];

	pair_up(&p, &mlx5_pair_conf_default);
	recv1(&p, 1, 60, 0x80000, 8);
	g = sge(&p, 0, 100);
	w = swr(5, RPCR_RDEV_WR_SEND, true, &g, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 4), 1);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(wc[0].byte_len, 0);
	CHECK_EQ(drain(&p, 1, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 60);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_LOC_LEN_ERR);
	CHECK_EQ(wc[0].byte_len, 0);
	pair_down(&p);
}

/* Data the device put in the CQE: copied to the receive's buffers (across two entries), and a
 * Read's response to the Read's; 32 bytes in a 64-byte CQE, 64 in a 128-byte one. */
static void
scatter_case(uint32_t cqe_size, uint32_t len)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_sge g[2];
	struct rpcr_rdev_recv_wr r;
	struct rpcr_rdev_send_wr w;
	struct rpcr_rdev_wc wc[4];

	c.cqe_size = cqe_size;
	c.scatter_to_cqe = true;
	pair_up(&p, &c);
	g[0] = sge(&p, 0x80000, 10);
	g[1] = sge(&p, 0x81000, 246);
	r = (struct rpcr_rdev_recv_wr){.wr_id = 61, .sg_list = g, .num_sge = 2};
	CHECK_EQ(mlx5_post_recv(&p.qp[1]->vq.pub, &r, 1), 1);
	fill(at(&p, 0), 256, 4);
	g[0] = sge(&p, 0, len);
	w = swr(6, RPCR_RDEV_WR_SEND, true, g, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(mm_stats(p.m)->inline_cqes, 1);
	CHECK_EQ(drain(&p, 1, wc, 4), 1);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(wc[0].byte_len, len);
	CHECK_MEM(at(&p, 0x80000), at(&p, 0), 10);
	CHECK_MEM(at(&p, 0x81000), at(&p, 10), len - 10);
	CHECK_EQ(drain(&p, 0, wc, 4), 1);
	/* A Read's response. */
	g[0] = sge(&p, 0x4000, 4);
	g[1] = sge(&p, 0x5000, len - 4);
	w = swr(8, RPCR_RDEV_WR_READ, true, g, 2);
	w.remote_addr = (uintptr_t)at(&p, 0);
	w.rkey = p.key;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(mm_stats(p.m)->inline_cqes, 2);
	CHECK_EQ(drain(&p, 0, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 8);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(wc[0].byte_len, len);
	CHECK_MEM(at(&p, 0x4000), at(&p, 0), 4);
	CHECK_MEM(at(&p, 0x5000), at(&p, 4), len - 4);
	pair_down(&p);
}

static void
test_scatter_to_cqe(void)
{
	scatter_case(64, 20);
	scatter_case(64, 32);
	scatter_case(128, 60);
}

/* Every queue of both QPs on one CQ: ping-pong, the remembered QP switching each completion. */
static void
test_shared_cq(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	int i, s;

	c.shared_cq = true;
	pair_up(&p, &c);
	for (i = 0; i < 100; i++) {
		struct rpcr_rdev_sge g;
		struct rpcr_rdev_send_wr w;
		struct rpcr_rdev_wc wc[4];

		s = i & 1;
		recv1(&p, !s, 200 + i, 0x80000, 256);
		fill(at(&p, 0x1000 * s), 77, (uint32_t)i);
		g = sge(&p, 0x1000 * s, 77);
		w = swr(300 + i, RPCR_RDEV_WR_SEND, true, &g, 1);
		CHECK_EQ(mlx5_post_send(&p.qp[s]->vq.pub, &w, 1), 1);
		mm_step(p.m);
		/* The receiver's completion first (the sender's waits for the ack). */
		CHECK_EQ(drain(&p, 0, wc, 4), 2);
		CHECK(wc[0].qp == &p.qp[!s]->vq.pub);
		CHECK_EQ(wc[0].wr_id, 200 + i);
		CHECK_EQ(wc[0].opcode, RPCR_RDEV_WC_RECV);
		CHECK(wc[1].qp == &p.qp[s]->vq.pub);
		CHECK_EQ(wc[1].wr_id, 300 + i);
		CHECK_EQ(wc[1].opcode, RPCR_RDEV_WC_SEND);
		CHECK_MEM(at(&p, 0x80000), at(&p, 0x1000 * s), 77);
	}
	pair_down(&p);
}

/* What is refused, and that nothing reaches the device for it; a full queue; a Send of nothing
 * and empty entries. */
static void
test_refused(void)
{
	struct pair p;
	struct rpcr_rdev_sge g[5];
	struct rpcr_rdev_send_wr w[20];
	struct rpcr_rdev_wc wc[20];
	int i;

	pair_up(&p, &mlx5_pair_conf_default);
	for (i = 0; i < 5; i++)
		g[i] = sge(&p, (uint32_t)i * 64, 64);
	w[0] = swr(1, RPCR_RDEV_WR_SEND, true, g, 5); /* 4 entries allowed */
	rte_errno = 0;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 1), 0);
	CHECK_EQ(rte_errno, EINVAL);
	w[0] = swr(1, RPCR_RDEV_WR_LOCAL_INV, true, NULL, 0);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 1), 0);
	CHECK_EQ(rte_errno, EINVAL);
	w[0] = swr(1, RPCR_RDEV_WR_BIND_MW, true, NULL, 0);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 1), 0);
	CHECK_EQ(rte_errno, EINVAL);
	w[0] = swr(1, RPCR_RDEV_WR_SEND, true, NULL, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 1), 0);
	CHECK_EQ(rte_errno, EINVAL);
	CHECK_EQ(mm_step(p.m), 0);
	CHECK_EQ(doorbells(&p), 0);
	CHECK_EQ(p.qp[0]->sq_pi, 0);
	/* A Send of nothing, and one whose empty entries are left out. */
	recv1(&p, 1, 90, 0x80000, 256);
	recv1(&p, 1, 91, 0x81000, 256);
	fill(at(&p, 0), 256, 5);
	g[0] = sge(&p, 0, 0);
	g[1] = sge(&p, 0, 100);
	g[2] = sge(&p, 100, 0);
	g[3] = sge(&p, 100, 30);
	w[0] = swr(1, RPCR_RDEV_WR_SEND, false, NULL, 0);
	w[1] = swr(2, RPCR_RDEV_WR_SEND, true, g, 4);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 2), 2);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 1, wc, 4), 2);
	CHECK_EQ(wc[0].byte_len, 0);
	CHECK_EQ(wc[1].byte_len, 130);
	CHECK_MEM(at(&p, 0x81000), at(&p, 0), 130);
	CHECK_EQ(drain(&p, 0, wc, 4), 1);
	/* Full: 16 outstanding, the 17th refused; until a completion, nothing goes. */
	for (i = 0; i < 20; i++)
		w[i] = swr((uint64_t)i, RPCR_RDEV_WR_WRITE, i == 15, g + 1, 1);
	for (i = 0; i < 20; i++) {
		w[i].remote_addr = (uintptr_t)at(&p, 0x90000);
		w[i].rkey = p.key;
	}
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w, 20), 16);
	CHECK_EQ(rte_errno, EAGAIN);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w + 16, 1), 0);
	CHECK_EQ(rte_errno, EAGAIN);
	/* The 16th's completion frees all 16. */
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 20), 1);
	CHECK_EQ(wc[0].wr_id, 15);
	CHECK_EQ(p.qp[0]->vq.sq_tail, p.qp[0]->vq.sq_head);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, w + 16, 4), 4);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 20), 0);
	pair_down(&p);
}

/* Queues smaller than the driver needs are refused at attach. */
static void
test_attach_checks(void)
{
	struct mm_dev *m = mm_dev_new(NULL);
	struct mlx5dv_qp dqp;
	struct mlx5dv_cq dcq;
	struct mlx5_qp q;
	struct mlx5_cq c;
	struct mm_cq *mc = mm_cq_new(m, 8, 64, &dcq);
	uint32_t qpn;

	memset(&q, 0, sizeof(q));
	q.vq.pub.attr.max_send_wr = 8;
	q.vq.pub.attr.max_recv_wr = 8;
	q.vq.pub.attr.max_send_sge = 4;
	q.vq.pub.attr.max_recv_sge = 4;
	q.vq.max_inline = 64;
	/* 8 requests of 2 blocks need 16 blocks. */
	mm_qp_new(m, mc, mc, 8, 8, 64, &dqp, &qpn);
	CHECK_EQ(mlx5_qp_attach(&q, &dqp, qpn, false), -ENOSPC);
	mm_qp_new(m, mc, mc, 16, 8, 32, &dqp, &qpn);
	CHECK_EQ(mlx5_qp_attach(&q, &dqp, qpn, false), -ENOSPC); /* 2 entries a receive, 4 wanted */
	mm_qp_new(m, mc, mc, 16, 8, 64, &dqp, &qpn);
	CHECK_EQ(mlx5_qp_attach(&q, &dqp, qpn, true), -ENOSPC); /* binds take 3 blocks */
	CHECK_EQ(mlx5_qp_attach(&q, &dqp, qpn, false), 0);
	mlx5_qp_detach(&q);
	mm_qp_new(m, mc, mc, 32, 8, 64, &dqp, &qpn);
	CHECK_EQ(mlx5_qp_attach(&q, &dqp, qpn, true), 0);
	mlx5_qp_detach(&q);
	dcq.cqe_size = 32;
	memset(&c, 0, sizeof(c));
	CHECK_EQ(mlx5_cq_attach(&c, &dcq, NULL), -ENOTSUP);
	dcq.cqe_size = 64;
	dcq.cqe_cnt = 12;
	CHECK_EQ(mlx5_cq_attach(&c, &dcq, NULL), -ENOTSUP);
	mm_dev_free(m);
}

/* The control path's data-path hooks, as far as the graveyard needs them. */
static void
test_qp_fini(struct vrb_qp *vq)
{
	struct mlx5_qp *qp = (struct mlx5_qp *)vq;

	mlx5_qpt_remove(qp->vq.vd->dp_priv, qp);
	mlx5_qp_detach(qp);
}

static const struct vrb_dp test_dp = {.name = "test", .qp_fini = test_qp_fini};

/* Put @qp on its CQs' graveyards, as vrb_qp_destroy() does. */
static void
bury_later(struct mlx5_qp *qp)
{
	qp->vq.dead = true;
	qp->vq.grave_refs = qp->vq.scq == qp->vq.rcq ? 1 : 2;
	qp->vq.grave_next[0] = qp->vq.scq->grave;
	qp->vq.scq->grave = &qp->vq;
	if (qp->vq.rcq != qp->vq.scq) {
		qp->vq.grave_next[1] = qp->vq.rcq->grave;
		qp->vq.rcq->grave = &qp->vq;
	}
}

/* A destroyed QP with its own send and receive CQs: what it left in them is dropped; its
 * receive CQ, found empty first, gets another of its completions afterwards (a device model
 * that writes late); its bookkeeping goes when its send CQ is found empty too, and a completion
 * naming it after that is dropped as unknown, nothing remembered of it. */
static void
test_destroyed_qp(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_sge g;
	struct rpcr_rdev_send_wr w;
	struct rpcr_rdev_wc wc[8];
	int i;

	c.split_cq = true;
	pair_up(&p, &c);
	p.vd.dp = &test_dp;
	for (i = 0; i < 4; i++)
		recv1(&p, 1, 500 + i, 0x80000 + i * 0x1000, 0x1000);
	fill(at(&p, 0), 64, 9);
	g = sge(&p, 0, 64);
	w = swr(1, RPCR_RDEV_WR_SEND, true, &g, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	/* B's receive CQ remembers B, then B is destroyed. */
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(mlx5_poll_cq(&p.rcq[1]->vc.pub, wc, 8), 1);
	CHECK(p.rcq[1]->last_qp == p.qp[1]);
	bury_later(p.qp[1]);
	/* Found empty: buried there (one of its two graves). */
	CHECK_EQ(mlx5_poll_cq(&p.rcq[1]->vc.pub, wc, 8), 0);
	CHECK(p.rcq[1]->vc.grave == NULL);
	CHECK_EQ(p.qp[1]->vq.grave_refs, 1);
	/* A late message for it: dropped, and not remembered. */
	w.wr_id = 2;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(mlx5_poll_cq(&p.rcq[1]->vc.pub, wc, 8), 0);
	CHECK(p.rcq[1]->last_qp == NULL);
	/* Its send CQ found empty: its bookkeeping goes, its number with it. */
	CHECK_EQ(mlx5_poll_cq(&p.cq[1]->vc.pub, wc, 8), 0);
	p.qp[1] = NULL; /* freed */
	CHECK(mlx5_qpt_get(p.qpt, mm_qp_num(p.mq[1])) == NULL);
	/* One more: its number names nothing now. */
	w.wr_id = 3;
	CHECK_EQ(mlx5_post_send(&p.qp[0]->vq.pub, &w, 1), 1);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(mlx5_poll_cq(&p.rcq[1]->vc.pub, wc, 8), 0);
	pair_down(&p);
}

/* ---- shared receive queues ---- */

/* Side @s's receive CQ, polled until empty. */
static uint16_t
drain_r(struct pair *p, int s, struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t got = 0, k;

	do {
		k = mlx5_poll_cq(&p->rcq[s]->vc.pub, wc + got, (uint16_t)RTE_MIN(n - got, 4));
		got += k;
	} while (k != 0 && got < n);
	return got;
}

/* Send @len bytes of a pattern from @seed on side @s (one signalled Send), the model run. */
static void
send1(struct pair *p, int s, uint64_t id, uint32_t off, uint32_t len, uint32_t seed)
{
	struct rpcr_rdev_sge g = sge(p, off, len);
	struct rpcr_rdev_send_wr w = swr(id, RPCR_RDEV_WR_SEND, true, &g, 1);

	fill(at(p, off), len, seed);
	CHECK_EQ(mlx5_post_send(&p->qp[s]->vq.pub, &w, 1), 1);
	mm_step(p->m);
}

/* Both QPs take from one SRQ: Sends both ways take its receives in the order posted, each
 * completion on the receive CQ of the QP it arrived on, with its data; as many posted as asked
 * for, not one more; a receive posted on a QP of the SRQ is refused (EINVAL); completions polled
 * out of order free their WQEs, which later posts take again by the links. */
static void
test_srq(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_sge g;
	struct rpcr_rdev_recv_wr r;
	struct rpcr_rdev_wc wc[16];
	int i;

	c.srq = true;
	c.split_cq = true;
	pair_up(&p, &c);
	CHECK_EQ(p.srq->mask, 31); /* (16 asked: a ring of 32, one never posted) */
	for (i = 0; i < 16; i++)
		srq_recv1(&p, 200 + i, 0x80000 + i * 0x1000, 0x1000);
	g = sge(&p, 0x90000, 64);
	r = (struct rpcr_rdev_recv_wr){.wr_id = 999, .sg_list = &g, .num_sge = 1};
	rte_errno = 0;
	CHECK_EQ(mlx5_post_srq_recv(&p.srq->vs.pub, &r, 1), 0);
	CHECK_EQ(rte_errno, EAGAIN);
	rte_errno = 0;
	CHECK_EQ(mlx5_post_recv(&p.qp[1]->vq.pub, &r, 1), 0);
	CHECK_EQ(rte_errno, EINVAL);
	/* Six Sends, A and B in turn: A's take receives 0, 2, 4 (on B), B's 1, 3, 5 (on A). */
	for (i = 0; i < 6; i++)
		send1(&p, i % 2, i, (uint32_t)i * 256, 100 + (uint32_t)i, 30 + (uint32_t)i);
	CHECK_EQ(drain(&p, 0, wc, 16), 3);
	CHECK_EQ(drain(&p, 1, wc, 16), 3);
	for (i = 0; i < 2; i++) {
		int s = 1 - i, k;

		/* B's receive CQ first, then A's: WQEs 0, 2, 4 freed before 1, 3, 5. */
		CHECK_EQ(drain_r(&p, s, wc, 16), 3);
		for (k = 0; k < 3; k++) {
			uint32_t m = (uint32_t)(2 * k + i);

			CHECK_EQ(wc[k].wr_id, 200 + m);
			CHECK_EQ(wc[k].status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc[k].opcode, RPCR_RDEV_WC_RECV);
			CHECK_EQ(wc[k].byte_len, 100 + m);
			CHECK(wc[k].qp == &p.qp[s]->vq.pub);
			CHECK_MEM(at(&p, 0x80000 + m * 0x1000), at(&p, m * 256), 100 + m);
		}
	}
	CHECK_EQ(p.srq->outstanding, 10);
	CHECK_EQ(p.srq->tail, 5); /* 31 -> 0 -> 2 -> 4 -> 1 -> 3 -> 5 */
	/* Six more posted: WQEs 16 to 21 (the head had not reached the freed ones). */
	for (i = 0; i < 6; i++)
		srq_recv1(&p, 300 + i, 0xa0000 + i * 0x1000, 0x1000);
	CHECK_EQ(p.srq->head, 22);
	CHECK_EQ(mlx5_post_srq_recv(&p.srq->vs.pub, &r, 1), 0);
	/* Sixteen Sends from A take 6..15, then 16..21. */
	for (i = 0; i < 16; i++)
		send1(&p, 0, 10 + i, 0, 32, 50 + (uint32_t)i);
	CHECK_EQ(drain(&p, 0, wc, 16), 16);
	CHECK_EQ(drain_r(&p, 1, wc, 16), 16);
	for (i = 0; i < 16; i++) {
		CHECK_EQ(wc[i].wr_id, i < 10 ? 206 + i : 300 + i - 10);
		CHECK_EQ(wc[i].byte_len, 32);
	}
	CHECK_EQ(p.srq->outstanding, 0);
	pair_down(&p);
}

/* A receive completed and not polled while the ring goes round: later posts take only the
 * WQEs freed (linked after the tail), never that one. */
static void
test_srq_held(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_wc wc[16];
	uint64_t id = 0;
	int i, round;

	c.srq = true;
	c.split_cq = true;
	pair_up(&p, &c);
	for (i = 0; i < 16; i++)
		srq_recv1(&p, id++, 0x80000 + (uint32_t)i * 0x1000, 0x1000);
	send1(&p, 0, 1, 0x1000, 64, 1); /* B takes WQE 0 (receive 0), not polled */
	for (round = 0; round < 6; round++) {
		uint16_t n = 0, k;

		for (i = 0; i < 15; i++)
			send1(&p, 1, 2, 0, 32, 2); /* A takes the other 15 */
		while (n < 15) {
			k = drain_r(&p, 0, wc + n, (uint16_t)(15 - n));
			if (k == 0)
				break;
			n += k;
		}
		CHECK_EQ(n, 15);
		(void)drain(&p, 1, wc, 16);
		for (i = 0; i < 15; i++)
			srq_recv1(&p, id++, 0x90000 + (uint32_t)i * 0x1000, 0x1000);
		CHECK_EQ(p.srq->outstanding, 16);
		CHECK(p.srq->head != 0 && p.srq->tail != 0);
	}
	(void)drain(&p, 0, wc, 16);
	CHECK_EQ(drain_r(&p, 1, wc, 16), 1);
	CHECK_EQ(wc[0].wr_id, 0);
	CHECK_EQ(wc[0].byte_len, 64);
	CHECK_MEM(at(&p, 0x80000), at(&p, 0x1000), 64);
	pair_down(&p);
}

/* Thousands of rounds: post until full, a few Sends each way, the two receive CQs polled in
 * either order. Every message takes the receive posted next (its number is the wr_id), none is
 * lost or taken twice, and the doorbell record's 16-bit count wraps. */
static void
test_srq_wrap(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_wc wc[16];
	uint64_t posted = 0, sent = 0, got = 0;
	uint32_t rnd = 12345;
	unsigned long failed = rpcr_test_failed;
	int round;

	c.srq = true;
	c.split_cq = true;
	pair_up(&p, &c);
	for (round = 0; round < 20000 && rpcr_test_failed == failed; round++) {
		uint32_t k, n;
		int j;

		for (;;) {
			struct rpcr_rdev_sge g =
				sge(&p, 0x80000 + (uint32_t)(posted % 64) * 0x1000, 0x1000);
			struct rpcr_rdev_recv_wr r = {.wr_id = posted, .sg_list = &g, .num_sge = 1};

			if (mlx5_post_srq_recv(&p.srq->vs.pub, &r, 1) != 1)
				break;
			posted++;
		}
		rnd = rnd * 1103515245u + 12345u;
		n = 1 + (rnd >> 16) % 8;
		for (k = 0; k < n; k++) {
			uint32_t m = (uint32_t)sent;
			struct rpcr_rdev_sge g = sge(&p, 0, 4);
			struct rpcr_rdev_send_wr w = swr(sent, RPCR_RDEV_WR_SEND, true, &g, 1);

			memcpy(at(&p, 0), &m, 4);
			CHECK_EQ(mlx5_post_send(&p.qp[(rnd >> (8 + k)) & 1]->vq.pub, &w, 1), 1);
			mm_step(p.m);
			sent++;
		}
		(void)drain(&p, 0, wc, 16);
		(void)drain(&p, 1, wc, 16);
		for (j = 0; j < 2; j++) {
			int s = (round & 1) ? j : 1 - j;
			uint16_t h = drain_r(&p, s, wc, 16), x;

			for (x = 0; x < h; x++) {
				uint32_t m;

				memcpy(&m, at(&p, 0x80000 + (uint32_t)(wc[x].wr_id % 64) * 0x1000),
				       4);
				CHECK_EQ(wc[x].status, RPCR_RDEV_WC_SUCCESS);
				CHECK_EQ(m, (uint32_t)wc[x].wr_id);
				got++;
			}
		}
	}
	CHECK_EQ(got, sent);
	CHECK_EQ(p.srq->outstanding, posted - got);
	CHECK(posted > 70000); /* (the record's count wrapped) */
	pair_down(&p);
}

/*
 * What goes wrong with an SRQ's receives: one too small for the message completes in error on
 * the QP it arrived on, its WQE freed, and that QP's error flushes nothing of the SRQ; data the
 * device put in the CQE lands in the SRQ receive's buffers; a CQE naming a WQE not posted is
 * dropped; receives a destroyed QP's peer filled come back with no QP, flushed.
 */
static void
test_srq_errors(void)
{
	struct pair_conf c = mlx5_pair_conf_default;
	struct pair p;
	struct rpcr_rdev_wc wc[8];
	int i;

	c.srq = true;
	c.split_cq = true;
	c.scatter_to_cqe = true;
	pair_up(&p, &c);
	p.vd.dp = &test_dp;
	srq_recv1(&p, 70, 0x80000, 8);
	for (i = 0; i < 4; i++)
		srq_recv1(&p, 71 + i, 0x81000 + i * 0x1000, 0x1000);
	/* Too small: B's QP in error, the WQE freed. */
	send1(&p, 0, 1, 0, 100, 3);
	CHECK_EQ(drain(&p, 0, wc, 8), 1);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(drain_r(&p, 1, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 70);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_LOC_LEN_ERR);
	CHECK(wc[0].qp == &p.qp[1]->vq.pub);
	CHECK_EQ(p.srq->outstanding, 4);
	CHECK_EQ(p.srq->tail, 0);
	/* B's error flushed nothing of the SRQ: no more on B's receive CQ, the four kept. */
	mm_step(p.m);
	CHECK_EQ(drain_r(&p, 1, wc, 8), 0);
	CHECK_EQ(p.srq->outstanding, 4);
	pair_down(&p);

	/* Scatter to CQE into the SRQ's buffers; a stray CQE; a destroyed QP's receives. */
	pair_up(&p, &c);
	p.vd.dp = &test_dp;
	for (i = 0; i < 6; i++)
		srq_recv1(&p, 80 + i, 0x80000 + i * 0x1000, 0x1000);
	send1(&p, 0, 1, 0, 20, 5);
	CHECK_EQ(mm_stats(p.m)->inline_cqes, 1);
	CHECK_EQ(drain_r(&p, 1, wc, 8), 1);
	CHECK_EQ(wc[0].wr_id, 80);
	CHECK_EQ(wc[0].byte_len, 20);
	CHECK_MEM(at(&p, 0x80000), at(&p, 0), 20);
	/* The CQE of WQE 1 finds it not posted (as if the device named another): dropped. */
	send1(&p, 0, 2, 0, 200, 6);
	p.srq->posted[1] = 0;
	CHECK_EQ(drain_r(&p, 1, wc, 8), 0);
	CHECK_EQ(p.srq->outstanding, 5);
	p.srq->posted[1] = 1; /* (what the test took away: the driver's again) */
	/* Two for B, which is destroyed before they are polled. */
	send1(&p, 0, 3, 0, 200, 7);
	send1(&p, 0, 4, 0, 200, 8);
	CHECK_EQ(drain(&p, 0, wc, 8), 4);
	bury_later(p.qp[1]);
	CHECK_EQ(drain_r(&p, 1, wc, 8), 2);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(wc[i].wr_id, 82 + i);
		CHECK_EQ(wc[i].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[i].opcode, RPCR_RDEV_WC_RECV);
		CHECK(wc[i].qp == NULL);
	}
	CHECK_EQ(p.srq->outstanding, 3);
	/* (Its receive CQ found empty: buried there; its send CQ's poll frees it.) */
	CHECK_EQ(drain(&p, 1, wc, 8), 0);
	p.qp[1] = NULL;
	pair_down(&p);
}

#define WOFF 0x40000u /* the window, in B's half... */
#define WLEN 0x1000u
#define LOFF 0x10000u /* ...A's buffer for Writes and Reads */

/* One signalled request on side @s, the model run: its completion's status (0xffff: refused). */
static uint32_t
op1(struct pair *p, int s, struct rpcr_rdev_send_wr *w, struct rpcr_rdev_wc *wc)
{
	w->flags = RPCR_RDEV_WR_F_SIGNALED;
	if (mlx5_post_send(&p->qp[s]->vq.pub, w, 1) != 1)
		return 0xffff;
	mm_step(p->m);
	if (drain(p, s, wc, 1) != 1)
		return 0xfffe;
	CHECK_EQ(wc->wr_id, w->wr_id);
	return wc->status;
}

/* B binds @mw over [@off, @off + @len) of the registration @key. */
static uint32_t
bind1(struct pair *p, struct rpcr_rdev_mw *mw, uint32_t key, uint32_t off, uint64_t len,
      uint32_t access)
{
	struct rpcr_rdev_mr mr = {.lkey = key, .rkey = key};
	struct rpcr_rdev_mw_bind b = {mw, &mr, (uintptr_t)at(p, off), len, access};
	struct rpcr_rdev_send_wr w = {.wr_id = 77, .opcode = RPCR_RDEV_WR_BIND_MW, .bind = &b};
	struct rpcr_rdev_wc wc;
	uint32_t st = op1(p, 1, &w, &wc);

	if (st < 0xfffe) { /* (failed ones too: the bookkeeping says what it was) */
		CHECK_EQ(wc.opcode, RPCR_RDEV_WC_BIND_MW);
		CHECK_EQ(wc.byte_len, 0);
	}
	return st;
}

/* B invalidates @key. */
static uint32_t
inv1(struct pair *p, uint32_t key)
{
	struct rpcr_rdev_send_wr w = {
		.wr_id = 78, .opcode = RPCR_RDEV_WR_LOCAL_INV, .invalidate_rkey = key};
	struct rpcr_rdev_wc wc;
	uint32_t st = op1(p, 1, &w, &wc);

	if (st < 0xfffe)
		CHECK_EQ(wc.opcode, RPCR_RDEV_WC_LOCAL_INV);
	return st;
}

/* A Writes or Reads @len bytes at B's @off under @rkey. */
static uint32_t
rdma1(struct pair *p, uint8_t op, uint32_t rkey, uint32_t off, uint32_t len)
{
	struct rpcr_rdev_sge g = sge(p, LOFF, len);
	struct rpcr_rdev_send_wr w = swr(79, op, true, &g, 1);
	struct rpcr_rdev_wc wc;

	w.rkey = rkey;
	w.remote_addr = (uintptr_t)at(p, off);
	return op1(p, 0, &w, &wc);
}

static bool
all_are(const uint8_t *b, uint32_t len, uint8_t v)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			return false;
	return true;
}

enum mw_kind {
	MW_INSIDE,     /* a Write and a Read inside the window */
	MW_BEFORE,     /* a Write one byte before it, inside the registration */
	MW_PAST,       /* a Read one byte past its end */
	MW_LOCAL_INV,  /* a Write after B invalidated it */
	MW_OLD_KEY,    /* a Write with the key of the bind before */
	MW_NEW_KEY,    /* a Write with the key of the new bind */
	MW_READ_ONLY,  /* a Write to a read-only window */
	MW_REMOTE_INV, /* a Write after A's Send with Invalidate of its key */
	MW_BAD_RANGE,  /* a bind past the registration's end */
	MW_NO_BIND,    /* a bind over a registration without MW_BIND */
	MW_TWICE,      /* a bind of a window bound already */
	MW_INV_FREE,   /* an invalidation of a key bound to nothing */
};

/* Windows as the conformance suite's memory_window case has them (test/rdev/conformance.c), on
 * a fresh pair each: what reaches the window's range works, everything else fails with the
 * status verbs gives and touches nothing. */
static void
test_windows(void)
{
	static const struct {
		enum mw_kind k;
		uint8_t op; /* A's request after the bind (0xff: none) */
		int32_t off;
		uint32_t len, want;
	} t[] = {
		{MW_INSIDE, RPCR_RDEV_WR_WRITE, 0, WLEN, 0},
		{MW_BEFORE, RPCR_RDEV_WR_WRITE, -1, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_PAST, RPCR_RDEV_WR_READ, WLEN - 63, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_LOCAL_INV, RPCR_RDEV_WR_WRITE, 0, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_OLD_KEY, RPCR_RDEV_WR_WRITE, 0, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_NEW_KEY, RPCR_RDEV_WR_WRITE, 0, 64, 0},
		{MW_READ_ONLY, RPCR_RDEV_WR_WRITE, 0, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_REMOTE_INV, RPCR_RDEV_WR_WRITE, 0, 64, RPCR_RDEV_WC_REM_ACCESS_ERR},
		{MW_BAD_RANGE, 0xff, 0, 0, 0},
		{MW_NO_BIND, 0xff, 0, 0, 0},
		{MW_TWICE, 0xff, 0, 0, 0},
		{MW_INV_FREE, 0xff, 0, 0, 0},
	};
	const uint32_t rw = RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE;
	struct pair_conf c = mlx5_pair_conf_default;
	unsigned int i;

	c.mw = true;
	for (i = 0; i < RTE_DIM(t); i++) {
		struct rpcr_rdev_mw mw = {0};
		struct rpcr_rdev_wc wc;
		struct pair p;
		uint32_t key1, use;

		pair_up(&p, &c);
		memset(at(&p, WOFF - 0x1000), 0x3c, WLEN + 0x2000);
		fill(at(&p, LOFF), WLEN, i);
		mw.rkey = mm_mw_alloc(p.m);
		mw.next_rkey = (mw.rkey & ~0xffu) | ((mw.rkey + 1) & 0xffu);
		key1 = mw.next_rkey;
		if (t[i].k == MW_BAD_RANGE) {
			CHECK_EQ(bind1(&p, &mw, p.key, ARENA - 100, 200, rw),
				 RPCR_RDEV_WC_MW_BIND_ERR);
		} else if (t[i].k == MW_NO_BIND) {
			uint32_t k = mm_reg(p.m, at(&p, WOFF - 0x1000), WLEN + 0x2000,
					    MM_LOCAL_WRITE | MM_REMOTE_WRITE | MM_REMOTE_READ);

			CHECK_EQ(bind1(&p, &mw, k, WOFF, WLEN, rw), RPCR_RDEV_WC_MW_BIND_ERR);
		} else if (t[i].k == MW_INV_FREE) {
			CHECK_EQ(inv1(&p, mw.rkey), RPCR_RDEV_WC_LOC_QP_OP_ERR);
		} else {
			CHECK_EQ(bind1(&p, &mw, p.key, WOFF, WLEN,
				       t[i].k == MW_READ_ONLY ? RPCR_RDEV_ACCESS_REMOTE_READ : rw),
				 RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(mw.rkey, key1);
			CHECK(mw.next_rkey != key1);
			CHECK(mm_key_valid(p.m, key1));
		}
		if (t[i].k == MW_TWICE) {
			struct rpcr_rdev_send_wr w = {.wr_id = 82,
						      .opcode = RPCR_RDEV_WR_LOCAL_INV,
						      .invalidate_rkey = key1};

			CHECK_EQ(bind1(&p, &mw, p.key, WOFF, WLEN, rw), RPCR_RDEV_WC_MW_BIND_ERR);
			/* B is in error: an unsignalled invalidation is flushed, and says so. */
			CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, &w, 1), 1);
			mm_step(p.m);
			CHECK_EQ(drain(&p, 1, &wc, 1), 1);
			CHECK_EQ(wc.wr_id, 82);
			CHECK_EQ(wc.status, RPCR_RDEV_WC_WR_FLUSH_ERR);
			CHECK_EQ(wc.opcode, RPCR_RDEV_WC_LOCAL_INV);
		}
		if (t[i].k == MW_INSIDE) /* (verbs: not while a window is bound over it) */
			CHECK_EQ(mm_dereg(p.m, p.key), -1);
		if (t[i].k == MW_LOCAL_INV || t[i].k == MW_OLD_KEY || t[i].k == MW_NEW_KEY) {
			CHECK_EQ(inv1(&p, key1), RPCR_RDEV_WC_SUCCESS);
			CHECK(!mm_key_valid(p.m, key1));
			if (t[i].k != MW_LOCAL_INV) {
				uint32_t next = mw.next_rkey;

				CHECK_EQ(bind1(&p, &mw, p.key, WOFF, WLEN, rw),
					 RPCR_RDEV_WC_SUCCESS);
				CHECK_EQ(mw.rkey, next);
				CHECK(mw.rkey != key1);
			}
		}
		if (t[i].k == MW_REMOTE_INV) {
			struct rpcr_rdev_sge g = sge(&p, LOFF, 16);
			struct rpcr_rdev_send_wr w = swr(80, RPCR_RDEV_WR_SEND_INV, true, &g, 1);

			recv1(&p, 1, 81, 0x90000, 64);
			w.invalidate_rkey = key1;
			CHECK_EQ(op1(&p, 0, &w, &wc), RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(drain(&p, 1, &wc, 1), 1);
			CHECK_EQ(wc.wr_id, 81);
			CHECK_EQ(wc.flags, RPCR_RDEV_WC_F_WITH_INV);
			CHECK_EQ(wc.invalidated_rkey, key1);
			CHECK(!mm_key_valid(p.m, key1));
		}
		if (t[i].op != 0xff) {
			uint8_t mine[64];

			memcpy(mine, at(&p, LOFF), sizeof(mine));
			use = t[i].k == MW_NEW_KEY ? mw.rkey : key1;
			CHECK_EQ(rdma1(&p, t[i].op, use, WOFF + (uint32_t)t[i].off, t[i].len),
				 t[i].want);
			if (t[i].k == MW_INSIDE) {
				CHECK_MEM(at(&p, WOFF), at(&p, LOFF), WLEN);
				memset(at(&p, LOFF), 0, WLEN);
				CHECK_EQ(rdma1(&p, RPCR_RDEV_WR_READ, use, WOFF, WLEN), 0);
				CHECK_MEM(at(&p, LOFF), at(&p, WOFF), WLEN);
			} else if (t[i].want == 0) {
				CHECK_MEM(at(&p, WOFF), at(&p, LOFF), t[i].len);
			} else { /* (nothing came back to A either) */
				CHECK_MEM(at(&p, LOFF), mine, sizeof(mine));
			}
		}
		if (t[i].want != 0 || t[i].op == 0xff) /* (nothing reached B's memory) */
			CHECK(all_are(at(&p, WOFF - 0x1000), WLEN + 0x2000, 0x3c));
		else
			CHECK(all_are(at(&p, WOFF - 0x1000), 0x1000, 0x3c) &&
			      all_are(at(&p, WOFF + WLEN), 0x1000, 0x3c));
		if (mm_fault(p.m) != NULL)
			fprintf(stderr, "window case %u\n", i);
		pair_down(&p);
	}
}

/* A bind and the Send that advertises its key in one post (the Send fenced behind the bind),
 * a bind wrapping the ring's end, an unsignalled bind completed by a later signalled request,
 * and requests the driver refuses before they reach the queue. */
static void
test_window_burst(void)
{
	const uint32_t rw = RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE;
	struct pair_conf c = mlx5_pair_conf_default;
	struct rpcr_rdev_mr mr;
	struct rpcr_rdev_mw mw = {0};
	struct rpcr_rdev_mw_bind b;
	struct rpcr_rdev_send_wr w[3];
	struct rpcr_rdev_sge g;
	struct rpcr_rdev_wc wc[4];
	struct pair p;
	uint32_t round, key;
	bool bind_wrapped = false, inv_wrapped = false;

	c.mw = true;
	pair_up(&p, &c);
	mr = (struct rpcr_rdev_mr){.lkey = p.key, .rkey = p.key};
	mw.rkey = mm_mw_alloc(p.m);
	mw.next_rkey = (mw.rkey & ~0xffu) | ((mw.rkey + 1) & 0xffu);
	b = (struct rpcr_rdev_mw_bind){&mw, &mr, (uintptr_t)at(&p, WOFF), WLEN, rw};
	/* Refused: no window, a length of 0 (it would be an invalidation), more than 2 GiB,
	 * access other than remote read and write. Nothing reaches the queue. */
	w[0] = (struct rpcr_rdev_send_wr){.wr_id = 1, .opcode = RPCR_RDEV_WR_BIND_MW};
	for (round = 0; round < 4; round++) {
		b.len = round == 1 ? 0 : round == 2 ? (1ull << 31) + 1 : WLEN;
		b.access = round == 3 ? rw | RPCR_RDEV_ACCESS_LOCAL_WRITE : rw;
		w[0].bind = round == 0 ? NULL : &b;
		rte_errno = 0;
		CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, w, 1), 0);
		CHECK_EQ(rte_errno, EINVAL);
	}
	CHECK_EQ(p.qp[1]->sq_pi, 0);
	b.len = WLEN;
	b.access = rw;
	/* A burst refused after its bind: the bind is posted, its fence waits for the next. */
	g = sge(&p, 0x30000, 4);
	w[0].bind = &b;
	w[1] = swr(2, RPCR_RDEV_WR_SEND, false, &g, 1);
	w[1].num_sge = 5; /* (4 allowed) */
	key = mw.next_rkey;
	rte_errno = 0;
	CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, w, 2), 1);
	CHECK_EQ(rte_errno, EINVAL);
	CHECK_EQ(mw.rkey, key);
	CHECK(p.qp[1]->sq_fence != 0);
	CHECK_EQ(p.qp[1]->sq_pi, MLX5_UMR_BIND_BBS);
	mm_step(p.m);
	CHECK_EQ(inv1(&p, key), RPCR_RDEV_WC_SUCCESS); /* (fenced; completes the bind too) */
	/* Rounds of: bind (unsignalled) and the Send with its key in one post; A writes through
	 * the key it received; B invalidates it (signalled: completes the bind and the Send
	 * too). A bind takes 3 blocks, the rest 1 or 2: the ring's end is crossed inside WQEs. */
	for (round = 0; round < 60; round++) {
		uint32_t pi0 = p.qp[1]->sq_pi, mask = p.qp[1]->sq_bb_mask;
		struct rpcr_rdev_send_wr *bw = &w[round % 3 == 1];
		uint16_t nw = round % 3 == 1 ? 3 : 2;

		recv1(&p, 0, 200 + round, 0x20000, 64);
		key = mw.next_rkey;
		g = sge(&p, 0x30000, 4);
		memcpy(at(&p, 0x30000), &key, 4);
		/* Every third round a Write (one block) first: the WQEs start at every offset. */
		w[0] = swr(250 + round, RPCR_RDEV_WR_WRITE, false, &g, 1);
		w[0].rkey = p.key;
		w[0].remote_addr = (uintptr_t)at(&p, 0x38000);
		bw[0] = (struct rpcr_rdev_send_wr){
			.wr_id = 300 + round, .opcode = RPCR_RDEV_WR_BIND_MW, .bind = &b};
		bw[1] = swr(400 + round, RPCR_RDEV_WR_SEND, false, &g, 1);
		if (((pi0 + nw - 2) & mask) > mask - MLX5_UMR_BIND_BBS + 1)
			bind_wrapped = true;
		CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, w, nw), nw);
		CHECK_EQ(mw.rkey, key);
		CHECK_EQ(p.qp[1]->sq_pi - pi0, nw + 2u); /* 3 blocks, 1 (and 1) */
		CHECK_EQ(p.qp[1]->sq_fence, 0);
		if ((p.qp[1]->sq_pi & mask) == mask)
			inv_wrapped = true; /* (the invalidation below starts at the last block) */
		mm_step(p.m);
		CHECK_EQ(drain(&p, 0, wc, 4), 1); /* the Send, received */
		CHECK_EQ(wc[0].wr_id, 200 + round);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
		memcpy(&key, at(&p, 0x20000), 4);
		CHECK_EQ(key, mw.rkey);
		fill(at(&p, LOFF), 256, round);
		CHECK_EQ(rdma1(&p, RPCR_RDEV_WR_WRITE, key, WOFF + round * 8, 256), 0);
		CHECK_MEM(at(&p, WOFF + round * 8), at(&p, LOFF), 256);
		CHECK_EQ(inv1(&p, key), RPCR_RDEV_WC_SUCCESS); /* (one completion: the three
								* requests before are done) */
		CHECK_EQ(p.qp[1]->vq.sq_tail, p.qp[1]->vq.sq_head);
		CHECK(!mm_key_valid(p.m, key));
	}
	CHECK(p.qp[1]->sq_pi > 2 * (p.qp[1]->sq_bb_mask + 1)); /* wrapped twice at least */
	CHECK(bind_wrapped);
	CHECK(inv_wrapped);
	/* A bind ending a post: the next post's first WQE is fenced. */
	w[0] = (struct rpcr_rdev_send_wr){.wr_id = 500, .opcode = RPCR_RDEV_WR_BIND_MW, .bind = &b};
	CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, w, 1), 1);
	CHECK(p.qp[1]->sq_fence != 0);
	mm_step(p.m);
	recv1(&p, 0, 600, 0x20000, 64);
	w[0] = swr(601, RPCR_RDEV_WR_SEND, true, &g, 1);
	CHECK_EQ(mlx5_post_send(&p.qp[1]->vq.pub, w, 1), 1); /* (the model checks its fence) */
	CHECK_EQ(p.qp[1]->sq_fence, 0);
	mm_step(p.m);
	CHECK_EQ(drain(&p, 1, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 601);
	CHECK_EQ(inv1(&p, mw.rkey), RPCR_RDEV_WC_SUCCESS);
	pair_down(&p);
}

static const struct rpcr_test_case cases[] = {
	{"send_recv", test_send_recv},
	{"write_read", test_write_read},
	{"send_inv", test_send_inv},
	{"ring_wrap", test_ring_wrap},
	{"remote_access_error", test_remote_access_error},
	{"recv_too_small", test_recv_too_small},
	{"scatter_to_cqe", test_scatter_to_cqe},
	{"shared_cq", test_shared_cq},
	{"refused", test_refused},
	{"attach_checks", test_attach_checks},
	{"destroyed_qp", test_destroyed_qp},
	{"srq", test_srq},
	{"srq_held", test_srq_held},
	{"srq_wrap", test_srq_wrap},
	{"srq_errors", test_srq_errors},
	{"windows", test_windows},
	{"window_burst", test_window_burst},
};

RPCR_TEST_MAIN(cases)
