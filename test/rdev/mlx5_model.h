/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef MLX5_MODEL_H
#define MLX5_MODEL_H

/*
 * A software model of an mlx5 device's RC queues, for the mlx5 driver's data path
 * (drivers/rdev/mlx5) where no ConnectX can be reached.
 *
 * It hands out what mlx5dv_init_obj() would (struct mlx5dv_qp, struct mlx5dv_cq: queue buffers,
 * doorbell records, a doorbell register), and mm_step() does what the device would do with them:
 * reads the doorbell records, decodes the WQEs the driver wrote with rdma-core's own structures
 * (<infiniband/mlx5dv.h>: mlx5_wqe_ctrl_seg, mlx5_wqe_raddr_seg, mlx5_wqe_data_seg,
 * mlx5_wqe_inl_data_seg; never with the driver's code), executes them between two connected
 * model QPs (data moved, local and remote keys, access and bounds checked, memory windows bound
 * and invalidated by UMR WQEs) and writes 64- or
 * 128-byte CQEs (struct mlx5_cqe64, struct mlx5_err_cqe) with the owner-bit protocol, the error
 * syndromes the hardware reports, and the QP moved to the error state as the hardware moves it
 * (everything outstanding then flushed, a CQE each, signalled or not).
 *
 * What the device would do that the driver must cope with, optionally: data up to 32 bytes (64
 * with 128-byte CQEs) scattered into the CQE instead of the buffer (responder, and requester for
 * Reads), as ConnectX does with scatter-to-CQE.
 *
 * What a driver must not do, the model reports as a fault (mm_fault()): a WQE after a UMR without
 * a fence (the key the UMR changed may be in use before it is), a WQE whose index or QP
 * number is not the one expected, a size of 0, a doorbell record that points inside a WQE, a
 * doorbell register that does not hold the last WQE's first 8 bytes when the record moved, a CQ
 * overrun (the consumer index in the CQ's record too far behind). A fault stops the model.
 *
 * One thread: the test calls mm_step() between its driver calls (nothing runs behind it).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>

struct mm_dev;
struct mm_cq;
struct mm_qp;

/* Registration access. */
#define MM_LOCAL_WRITE  0x1u
#define MM_REMOTE_WRITE 0x2u
#define MM_REMOTE_READ  0x4u
#define MM_REMOTE_INV   0x8u  /* its key may be invalidated by a peer's Send with Invalidate */
#define MM_MW_BIND      0x10u /* windows may be bound over it */

/* Model options. */
struct mm_opts {
	bool scatter_to_cqe; /* small messages and Read responses into the CQE */
};

/* What the model saw and did. */
struct mm_stats {
	uint64_t doorbells;   /* send doorbell register writes seen (one per record move) */
	uint64_t wqes;        /* send WQEs executed (flushed ones not counted) */
	uint64_t recvs;       /* receive WQEs consumed by messages */
	uint64_t cqes;        /* CQEs written */
	uint64_t err_cqes;    /* of which errors (flushes included) */
	uint64_t inline_cqes; /* of which carried the data (scatter-to-CQE) */
	uint64_t rnr_waits;   /* steps a Send waited for a receive */
};

struct mm_dev *mm_dev_new(const struct mm_opts *opts);
void mm_dev_free(struct mm_dev *d);

/* Register [addr, addr + len). @return the key (local and remote alike), never 0. */
uint32_t mm_reg(struct mm_dev *d, void *addr, size_t len, uint32_t access);
/* @return 0, or -1 while a window is bound over it (verbs' EBUSY). */
int mm_dereg(struct mm_dev *d, uint32_t key);
/* The key is valid (not invalidated, not deregistered; a window's: bound under this key). */
bool mm_key_valid(struct mm_dev *d, uint32_t key);

/* Memory windows (type 2, bound to one QP), bound and invalidated by UMR WQEs as a ConnectX
 * takes them for verbs' type 2 windows (libmlx5's: UMR control "check free" for a bind, "check
 * QP number" for an invalidation; one inline KLM), and by a peer's Send with Invalidate. A
 * window's key: its slot in bits 8-30, bit 31 set, the low byte the last bind's. @return a free
 * window's key. */
uint32_t mm_mw_alloc(struct mm_dev *d);
void mm_mw_free(struct mm_dev *d, uint32_t key);

/* A CQ of @cqe_cnt (a power of 2) entries of @cqe_size (64 or 128) bytes; *out as
 * mlx5dv_init_obj() fills it. */
struct mm_cq *mm_cq_new(struct mm_dev *d, uint32_t cqe_cnt, uint32_t cqe_size,
			struct mlx5dv_cq *out);

/* An RC QP in RESET: @sq_bbs send building blocks, @rq_wqes receive WQEs of @rq_stride bytes
 * (powers of 2). *out as mlx5dv_init_obj() fills it; *qpn its number. */
struct mm_qp *mm_qp_new(struct mm_dev *d, struct mm_cq *scq, struct mm_cq *rcq, uint32_t sq_bbs,
			uint32_t rq_wqes, uint32_t rq_stride, struct mlx5dv_qp *out, uint32_t *qpn);

/* A shared receive queue laid out as libmlx5 lays one out (mlx5_model_wq.h: WQEs linked by
 * next_wqe_index; *out as mlx5dv_init_obj() fills it); a QP made with no receive queue of its own
 * takes its receives from it once given it. The model faults on a doorbell record counting more
 * posts than the SRQ holds and on a link out of its ring; QPs in error flush none of its WQEs. */
struct mm_srq;
struct mm_srq *mm_srq_new(struct mm_dev *d, uint32_t max_wr, uint32_t max_sge,
			  struct mlx5dv_srq *out);
void mm_qp_set_srq(struct mm_qp *q, struct mm_srq *s);

/* Connect two QPs (both to RTS). */
void mm_connect(struct mm_qp *a, struct mm_qp *b);
/* Move a QP to the error state (ibv_modify_qp() to ERR). */
void mm_qp_error(struct mm_qp *q);
bool mm_qp_in_error(const struct mm_qp *q);
uint32_t mm_qp_num(const struct mm_qp *q);
/* The CQ of number @cqn (as mlx5dv_cq gave it), or NULL. */
struct mm_cq *mm_cq_of(struct mm_dev *d, uint32_t cqn);
/* Give a QP made with NULL CQs its CQs. */
void mm_qp_set_cqs(struct mm_qp *q, struct mm_cq *scq, struct mm_cq *rcq);
/* The QP was destroyed: the model stops executing it (its memory stays till mm_dev_free()). */
void mm_qp_forget(struct mm_dev *d, struct mm_qp *q);

/* Do what the device would, until nothing more can be done. @return WQEs executed or flushed. */
unsigned int mm_step(struct mm_dev *d);

/* The first fault found (NULL: none). */
const char *mm_fault(const struct mm_dev *d);
const struct mm_stats *mm_stats(const struct mm_dev *d);

#endif /* MLX5_MODEL_H */
