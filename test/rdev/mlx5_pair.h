/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef MLX5_PAIR_H
#define MLX5_PAIR_H

/*
 * Two QPs of the mlx5 driver's data path on the queue model (mlx5_model.h), connected: attached
 * to model queues as the control path attaches them to a device's (mlx5_cq_attach(),
 * mlx5_qp_attach() with what mlx5dv_init_obj() would give), and helpers to post, poll and check.
 * For test_mlx5_dp and bench_mlx5_dp.
 */

#include <stdbool.h>
#include <stdint.h>

#include "mlx5_internal.h"
#include "mlx5_model.h"

#define ARENA (1u << 20)

struct pair_conf {
	uint32_t max_send_wr, max_recv_wr, sge, max_inline;
	uint32_t cqe_cnt, cqe_size;
	bool scatter_to_cqe;
	bool shared_cq; /* every queue of both QPs on one CQ */
	bool split_cq;  /* each QP's receives on a CQ of their own (rcq[]) */
	bool mw;        /* windows bound and invalidated (a send queue for binds) */
	bool srq;       /* both QPs take their receives from one SRQ of max_recv_wr (srq) */
};

struct pair {
	struct mm_dev *m;
	struct vrb_dev vd;
	struct mlx5_qp_table *qpt;
	struct mlx5_cq *cq[2];  /* each side's (send) CQ */
	struct mlx5_cq *rcq[2]; /* each side's receive CQ (cq[] unless split_cq) */
	struct mlx5_qp *qp[2];
	struct mm_qp *mq[2];
	struct mm_cq *mcq[2], *mrcq[2];
	struct mlx5_srq *srq; /* (pair_conf::srq) */
	struct mm_srq *msrq;
	uint8_t *mem; /* both sides' buffers (one model device) */
	uint32_t key; /* all of it: local write, remote read and write */
};

/* 16 requests each way, 4 entries, 64 bytes inline, CQs of 64 entries of 64 bytes. */
extern const struct pair_conf mlx5_pair_conf_default;

/* Set up / tear down (pair_down checks the model found no fault). Side 0 is A, 1 is B. */
void pair_up(struct pair *p, const struct pair_conf *c);
void pair_down(struct pair *p);
/* The arena, one registration for both sides. */
uint8_t *at(struct pair *p, uint32_t off);
struct rpcr_rdev_sge sge(struct pair *p, uint32_t off, uint32_t len);
/* A pattern of @len bytes from @seed. */
void fill(uint8_t *b, uint32_t len, uint32_t seed);
/* Post one receive of one entry on side @s; into the SRQ. */
void recv1(struct pair *p, int s, uint64_t id, uint32_t off, uint32_t len);
void srq_recv1(struct pair *p, uint64_t id, uint32_t off, uint32_t len);
/* A send-queue request over @n entries of @g. */
struct rpcr_rdev_send_wr swr(uint64_t id, uint8_t opcode, bool signal, struct rpcr_rdev_sge *g,
			     uint16_t n);
/* Everything side @s's CQ holds now (up to @n). */
uint16_t drain(struct pair *p, int s, struct rpcr_rdev_wc *wc, uint16_t n);
/* Send doorbells the model saw. */
uint64_t doorbells(struct pair *p);

#endif /* MLX5_PAIR_H */
