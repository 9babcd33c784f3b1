/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* Two QPs of the mlx5 driver's data path on the queue model (mlx5_pair.h). */

#include "mlx5_pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>

#include "mlx5_model_wq.h"
#include "rpcr_test.h"

const struct pair_conf mlx5_pair_conf_default = {
	.max_send_wr = 16,
	.max_recv_wr = 16,
	.sge = 4,
	.max_inline = 64,
	.cqe_cnt = 64,
	.cqe_size = 64,
};

/* Queue sizes as libmlx5 makes them: the largest WQE (control, remote address, then gather list
 * or inline data), times the requests, rounded to a power of 2. */
void
pair_up(struct pair *p, const struct pair_conf *c)
{
	struct mm_opts o = {.scatter_to_cqe = c->scatter_to_cqe};
	uint32_t body = RTE_MAX(c->sge * 16, RTE_ALIGN_CEIL(4 + c->max_inline, 16u));
	uint32_t wqe = RTE_MAX(RTE_ALIGN_CEIL(32 + body, 64u), c->mw ? 192u : 0u);
	uint32_t sq_bbs = mmw_pow2up(c->max_send_wr * wqe / 64);
	uint32_t stride = mmw_pow2up(RTE_MAX(16u, c->sge * 16));
	int i;

	memset(p, 0, sizeof(*p));
	p->m = mm_dev_new(&o);
	p->vd.wake_fd = eventfd(0, EFD_NONBLOCK);
	p->vd.dp_priv = p->qpt = calloc(1, sizeof(*p->qpt));
	p->mem = aligned_alloc(4096, ARENA);
	memset(p->mem, 0, ARENA);
	p->key = mm_reg(p->m, p->mem, ARENA,
			MM_LOCAL_WRITE | MM_REMOTE_WRITE | MM_REMOTE_READ | MM_MW_BIND);
	for (i = 0; i < 4; i++) {
		struct mlx5_cq **cq = i < 2 ? &p->cq[i] : &p->rcq[i - 2];
		struct mm_cq **mcq = i < 2 ? &p->mcq[i] : &p->mrcq[i - 2];
		struct mlx5dv_cq dcq;

		if ((i == 1 && c->shared_cq) || (i >= 2 && !c->split_cq)) {
			*cq = i == 1 ? p->cq[0] : p->cq[i - 2];
			*mcq = i == 1 ? p->mcq[0] : p->mcq[i - 2];
			continue;
		}
		*cq = calloc(1, sizeof(struct mlx5_cq));
		(*cq)->vc.vd = &p->vd;
		*mcq = mm_cq_new(p->m, c->cqe_cnt, c->cqe_size, &dcq);
		CHECK_EQ(mlx5_cq_attach(*cq, &dcq, p->qpt), 0);
		(*cq)->vc.pub.depth = c->cqe_cnt;
	}
	if (c->srq) {
		struct mlx5dv_srq ds = {0};

		p->srq = calloc(1, sizeof(*p->srq));
		p->srq->vs.pub.max_wr = c->max_recv_wr;
		p->srq->vs.pub.max_sge = c->sge;
		p->msrq = mm_srq_new(p->m, c->max_recv_wr, c->sge, &ds);
		CHECK_EQ(mlx5_srq_attach(p->srq, &ds), 0);
	}
	for (i = 0; i < 2; i++) {
		struct mlx5dv_qp dqp;
		struct mlx5_qp *q = calloc(1, sizeof(*q));
		uint32_t qpn;

		q->vq.vd = &p->vd;
		q->vq.scq = &p->cq[i]->vc;
		q->vq.rcq = &p->rcq[i]->vc;
		q->vq.max_inline = c->max_inline;
		q->vq.send_inv = true;
		q->vq.pub.attr.max_send_wr = c->max_send_wr;
		q->vq.pub.attr.max_recv_wr = c->max_recv_wr;
		q->vq.pub.attr.max_send_sge = c->sge;
		q->vq.pub.attr.max_recv_sge = c->sge;
		q->vq.pub.attr.max_inline = c->max_inline;
		if (c->srq) {
			/* (As the control path leaves a QP of an SRQ.) */
			q->vq.pub.attr.srq = &p->srq->vs.pub;
			q->vq.pub.attr.max_recv_wr = 0;
			q->vq.pub.attr.max_recv_sge = 0;
		}
		p->mq[i] = mm_qp_new(p->m, p->mcq[i], p->mrcq[i], sq_bbs,
				     c->srq ? 1 : mmw_pow2up(c->max_recv_wr), stride, &dqp, &qpn);
		if (c->srq)
			mm_qp_set_srq(p->mq[i], p->msrq);
		CHECK_EQ(mlx5_qp_attach(q, &dqp, qpn, c->mw), 0);
		CHECK_EQ(mlx5_qpt_insert(p->qpt, q), 0);
		q->vq.pub.qp_num = qpn;
		p->qp[i] = q;
	}
	mm_connect(p->mq[0], p->mq[1]);
}

void
pair_down(struct pair *p)
{
	int i;

	CHECK(mm_fault(p->m) == NULL);
	if (mm_fault(p->m) != NULL)
		fprintf(stderr, "model fault: %s\n", mm_fault(p->m));
	for (i = 0; i < 2; i++) {
		if (p->qp[i] == NULL)
			continue; /* (freed by a test, through the graveyard) */
		mlx5_qpt_remove(p->qpt, p->qp[i]);
		mlx5_qp_detach(p->qp[i]);
		free(p->qp[i]);
	}
	for (i = 0; i < 2; i++)
		if (p->rcq[i] != p->cq[i])
			free(p->rcq[i]);
	free(p->cq[0]);
	if (p->cq[1] != p->cq[0])
		free(p->cq[1]);
	if (p->srq != NULL) {
		mlx5_srq_detach(p->srq);
		free(p->srq);
	}
	mlx5_qpt_free(p->qpt);
	close(p->vd.wake_fd);
	mm_dev_free(p->m);
	free(p->mem);
}

/* Addresses in the arena: side A's buffers in the first half, B's in the second. */
uint8_t *
at(struct pair *p, uint32_t off)
{
	return p->mem + off;
}

struct rpcr_rdev_sge
sge(struct pair *p, uint32_t off, uint32_t len)
{
	struct rpcr_rdev_sge g = {.addr = (uintptr_t)at(p, off), .length = len, .lkey = p->key};

	return g;
}

void
fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* Post one receive of one entry on side @s. */
void
recv1(struct pair *p, int s, uint64_t id, uint32_t off, uint32_t len)
{
	struct rpcr_rdev_sge g = sge(p, off, len);
	struct rpcr_rdev_recv_wr r = {.wr_id = id, .sg_list = &g, .num_sge = 1};

	CHECK_EQ(mlx5_post_recv(&p->qp[s]->vq.pub, &r, 1), 1);
}

void
srq_recv1(struct pair *p, uint64_t id, uint32_t off, uint32_t len)
{
	struct rpcr_rdev_sge g = sge(p, off, len);
	struct rpcr_rdev_recv_wr r = {.wr_id = id, .sg_list = &g, .num_sge = 1};

	CHECK_EQ(mlx5_post_srq_recv(&p->srq->vs.pub, &r, 1), 1);
}

/* A send-queue request over @n entries of @g. */
struct rpcr_rdev_send_wr
swr(uint64_t id, uint8_t opcode, bool signal, struct rpcr_rdev_sge *g, uint16_t n)
{
	struct rpcr_rdev_send_wr w = {.wr_id = id,
				      .sg_list = g,
				      .num_sge = n,
				      .opcode = opcode,
				      .flags = signal ? RPCR_RDEV_WR_F_SIGNALED : 0};

	return w;
}

/* Everything side @s's CQ holds now, after the model has run. */
uint16_t
drain(struct pair *p, int s, struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t got = 0, k;

	do {
		k = mlx5_poll_cq(&p->cq[s]->vc.pub, wc + got, (uint16_t)RTE_MIN(n - got, 4));
		got += k;
	} while (k != 0 && got < n);
	return got;
}

uint64_t
doorbells(struct pair *p)
{
	return mm_stats(p->m)->doorbells;
}
