/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef MLX5_INTERNAL_H
#define MLX5_INTERNAL_H

/*
 * The mlx5 driver: the ibverbs driver's control path (drivers/rdev/ibverbs/vrb_ctrl.c creates
 * every verbs object through libibverbs and librdmacm and drives connections) under a data path
 * of its own (mlx5_rxtx.c) that writes the send and receive queues' work queue entries, rings
 * the doorbell and reads the completion queue's entries itself, in the formats of rdma-core's
 * <infiniband/mlx5dv.h>. Where the queues are comes from mlx5dv_init_obj() (mlx5_ctrl.c), called
 * once per QP and CQ after verbs created them.
 *
 * Ownership: the control thread creates and attaches QPs and CQs (mlx5_qp_attach(),
 * mlx5_cq_attach()) before the application sees them; from then on a QP's send-queue members
 * belong to the thread that posts sends on it, its receive-queue members to the one that posts
 * receives, and a CQ's members to the thread that polls it; an SRQ's (struct mlx5_srq) to the
 * one thread that posts to it and polls its QPs' receive CQ. The QP table (struct mlx5_qp_table)
 * is written by the control thread (insert) and by pollers (removal of buried QPs), read by
 * pollers; its entries are single pointers stored and loaded atomically.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>

#include "vrb_internal.h"

#define MLX5_LOG(level, fmt, ...) RPCR_RDEV_LOG(level, "mlx5: " fmt, ##__VA_ARGS__)

/* A send WQE's bookkeeping, at the index of its first 64-byte building block. Its opcode comes
 * back in the CQE; a successful CQE comes only for a signalled WQE. */
struct mlx5_swqe {
	uint64_t wr_id; /* the application's */
	uint32_t seq;   /* work requests posted before it (the QP's sq_head then) */
	uint32_t len;   /* bytes moved (the CQE says only for Read); a UMR's: its completion's
			 * opcode (RPCR_RDEV_WC_BIND_MW or _LOCAL_INV, which the CQE cannot say) */
};

/*
 * A shared receive queue: WQEs of a struct mlx5_wqe_srq_next_seg then data segments, in a ring
 * whose free WQEs are linked by next_wqe_index (libmlx5's layout, which mlx5dv_init_obj() hands
 * over with the list's head and tail). A post takes the WQE at the head (following its link),
 * never the tail; the doorbell record counts posts. A completion names the WQE by its index
 * (wqe_counter), whatever QP it arrived on; once polled, the WQE is linked after the tail. So
 * the queue holds ring - 1 receives and they complete in any order. Its members belong to the
 * thread that posts to it and polls its QPs' receive CQs (one thread: rpcr_rdev.h).
 */
struct mlx5_srq {
	struct vrb_srq vs; /* first: the control path's */
	uint8_t *buf;
	uint32_t stride_shift;
	uint32_t nseg;  /* data segments per WQE */
	uint32_t mask;  /* WQE indices: 0 .. mask (the free list's first tail; a power of 2
			 * minus 1; libmlx5's ring may be larger, mlx5_srq_attach()) */
	uint32_t head;  /* the free WQE the next post takes */
	uint32_t tail;  /* the last free WQE (never posted) */
	uint16_t count; /* receives posted (the doorbell record's) */
	uint32_t outstanding;
	volatile __be32 *dbrec;
	uint64_t *wr_id; /* per WQE index */
	uint8_t *posted; /* per WQE index: posted, its completion not yet polled */
};

struct mlx5_qp {
	struct vrb_qp vq; /* first: the control path's */
	uint32_t qpn;
	struct mlx5_srq *srq; /* receives from here (pub.attr.srq), NULL: its own queue */
	/* Send queue: 64-byte building blocks (BB), wqe_cnt of them, a WQE taking one or more and
	 * wrapping at the end. sq_pi counts BBs posted; vq.sq_head/sq_tail count work requests. */
	uint8_t *sq_buf;
	uint8_t *sq_end;
	uint32_t sq_bb_mask; /* wqe_cnt - 1 */
	uint32_t sq_pi;
	uint32_t ops_ok; /* bit per request opcode the QP may post */
	/* The fence the next WQE carries (fm_ce_se's bits, where the control segment's second
	 * 8 bytes hold them): the initiator small fence after a UMR, which the device wants
	 * before any WQE that may use the key the UMR changed. */
	uint32_t sq_fence;
	struct mlx5_swqe *swqe; /* per BB index */
	/* Receive queue: one WQE per stride (a list of data segments), in order. */
	uint8_t *rq_buf;
	uint32_t rq_mask;
	uint32_t rq_stride_shift;
	uint32_t rq_nseg; /* data segments per WQE (the stride's) */
	uint64_t *rwr_id; /* per receive WQE index */
	/* Doorbell record (big-endian: [MLX5_RCV_DBR] receive counter, [MLX5_SND_DBR] send) and
	 * register (UAR / BlueFlame). Only 8-byte doorbells are written, always at the
	 * register's start (as DPDK's mlx5 does; no BlueFlame copies of whole WQEs). */
	volatile __be32 *dbrec;
	uint8_t *bf_reg;
};

struct mlx5_cq {
	struct vrb_cq vc; /* first: the control path's */
	uint8_t *buf;
	uint32_t cqe_mask; /* cqe_cnt - 1 */
	uint32_t cqe_cnt;
	uint32_t cqe_shift; /* 6 (64-byte CQEs) or 7 (128: the 64 that matter are the second) */
	uint32_t cqe64_off;
	uint32_t ci;
	volatile __be32 *dbrec; /* [0]: consumer index */
	uint32_t cqn;
	/* The QP of the last completion seen (a burst is mostly one QP's). */
	uint32_t last_qpn;
	struct mlx5_qp *last_qp;
	struct mlx5_qp_table *qpt;
};

/* QP numbers (24 bits) to QPs, two levels as libmlx5 keeps them: 4096 x 4096. */
#define MLX5_QPT_SHIFT 12
#define MLX5_QPT_SIZE  (1u << MLX5_QPT_SHIFT)

struct mlx5_qp_table {
	struct mlx5_qp **dir[MLX5_QPT_SIZE]; /* allocated on first use, kept till the end */
};

static inline struct mlx5_qp *
mlx5_qpt_get(struct mlx5_qp_table *t, uint32_t qpn)
{
	struct mlx5_qp **d = __atomic_load_n(&t->dir[(qpn >> MLX5_QPT_SHIFT) & (MLX5_QPT_SIZE - 1)],
					     __ATOMIC_ACQUIRE);

	return d == NULL ? NULL : __atomic_load_n(&d[qpn & (MLX5_QPT_SIZE - 1)], __ATOMIC_ACQUIRE);
}

/* A window bind's WQE: control, UMR control, memory key context and one inline KLM segment
 * (16 + 48 + 64 + 64 bytes, as libmlx5 writes it); a local invalidation's has no KLM. */
#define MLX5_UMR_BIND_BBS 3u

/*
 * Attach a QP / CQ to its queues (what mlx5dv_init_obj() says, or a test's model of them): check
 * what the data path relies on, allocate its bookkeeping. @return 0, or a negative errno with the
 * reason logged. @mw: the QP may bind windows and invalidate them (UMR WQEs; the send queue then
 * holds max_send_wr binds). mlx5_qp_detach() frees what attach allocated.
 */
int mlx5_qp_attach(struct mlx5_qp *qp, const struct mlx5dv_qp *dv, uint32_t qpn, bool mw);
void mlx5_qp_detach(struct mlx5_qp *qp);
int mlx5_cq_attach(struct mlx5_cq *cq, const struct mlx5dv_cq *dv, struct mlx5_qp_table *qpt);
/* Attach an SRQ (vs.pub's max_wr and max_sge set) to its ring; mlx5_srq_detach() frees what it
 * allocated. */
int mlx5_srq_attach(struct mlx5_srq *srq, const struct mlx5dv_srq *dv);
void mlx5_srq_detach(struct mlx5_srq *srq);

/* Enter @qp into / take it out of @t (removal only if it is still @qp's entry). */
int mlx5_qpt_insert(struct mlx5_qp_table *t, struct mlx5_qp *qp);
void mlx5_qpt_remove(struct mlx5_qp_table *t, struct mlx5_qp *qp);
void mlx5_qpt_free(struct mlx5_qp_table *t);

/* The fast path (mlx5_rxtx.c). */
uint16_t mlx5_post_send(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n);
uint16_t mlx5_post_recv(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n);
uint16_t mlx5_post_srq_recv(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr,
			    uint16_t n);
uint16_t mlx5_poll_cq(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n);

#endif /* MLX5_INTERNAL_H */
