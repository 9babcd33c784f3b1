/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef MLX5_MODEL_WQ_H
#define MLX5_MODEL_WQ_H

/*
 * The device's side of the mlx5 queue formats, for the queue models (mlx5_model.h in process,
 * mlx5_model_rxe.c through soft-RoCE): send and receive WQEs read, CQEs written. From rdma-core's
 * <infiniband/mlx5dv.h> structures only; shares nothing with the driver (drivers/rdev/mlx5).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>

#define MMW_MAX_SEG    64
#define MMW_INLINE_MAX 1024

/* A data segment as written (a byte count of 0 is the device's 2 GiB, made explicit). */
struct mmw_seg {
	uint64_t addr;
	uint32_t len;
	uint32_t key;
};

/* A send queue: @cnt 64-byte building blocks (a power of 2), the QP's number. */
struct mmw_sq {
	uint8_t *buf;
	uint32_t cnt;
	uint32_t qpn;
};

/* One send WQE, decoded. */
struct mmw_send {
	uint32_t bb;    /* its first building block (consumer index) */
	uint32_t nbb;   /* building blocks it takes */
	uint32_t ds;    /* its size in 16-byte units */
	uint8_t opcode; /* MLX5_OPCODE_* */
	bool signal;    /* MLX5_WQE_CTRL_CQ_UPDATE */
	uint8_t fence;  /* fm_ce_se's fence bits (MLX5_WQE_CTRL_*FENCE), 0: none */
	uint32_t imm;   /* the control segment's last word, host order (SEND_INVAL: the key) */
	uint64_t raddr; /* RDMA_WRITE, RDMA_READ */
	uint32_t rkey;
	bool inl; /* the data is inline */
	uint32_t inl_len;
	uint8_t inl_data[MMW_INLINE_MAX];
	unsigned int nseg; /* or in data segments */
	struct mmw_seg seg[MMW_MAX_SEG];
	/* MLX5_OPCODE_UMR (a window bound or invalidated; the key in imm): the UMR control
	 * segment, the memory key context, and the KLM when there is one (inline only). */
	struct {
		uint8_t flags;       /* MLX5_WQE_UMR_CTRL_FLAG_* */
		uint16_t klm_octo;   /* 16-byte units of KLM */
		uint64_t mkey_mask;  /* MLX5_WQE_UMR_CTRL_MKEY_MASK_* */
		uint8_t free;        /* MLX5_WQE_MKEY_CONTEXT_FREE */
		uint8_t access;      /* MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_* */
		uint32_t qpn_mkey;   /* QP number << 8 | the key's new low byte */
		uint64_t start, len; /* the window */
		bool has_klm;
		struct mmw_seg klm; /* the range under a registration's key */
	} umr;
};

/*
 * Decode the WQE at building block @bb of @sq. @return 0; -1 when its control segment is not one
 * the device would take for this queue at this index (index, QP number, size 0: a driver bug,
 * described in @why); or an error syndrome (MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR) for a WQE the
 * device would fail: an opcode it does not know here, segments that do not fit its size.
 */
int mmw_send_decode(const struct mmw_sq *sq, uint32_t bb, struct mmw_send *w, char *why,
		    size_t whylen);

/* The size, in building blocks, of the WQE at @bb, or 0 when its control segment is not one
 * for this queue and index. */
uint32_t mmw_send_size(const struct mmw_sq *sq, uint32_t bb);

/* A receive WQE (@stride bytes): its data segments up to the first with the invalid key.
 * @return how many. */
unsigned int mmw_recv_decode(const uint8_t *wqe, uint32_t stride, struct mmw_seg *seg);

/*
 * A shared receive queue as libmlx5 lays one out, but for the ODP wait queue libmlx5 usually
 * adds after the linked WQEs (the driver never follows into it: a model with it is future work):
 * @cnt WQEs (the power of 2 above the receives asked for) of @stride bytes, each a struct mlx5_wqe_srq_next_seg then data segments (ended by
 * the invalid key when fewer); the free ones linked by next_wqe_index, i to i + 1 at first, the
 * list's head 0 and tail @cnt - 1. The driver posts at the head (following the links), counts its
 * posts in the doorbell record's low 16 bits, and links a WQE whose completion it polled after
 * the tail. The device takes posted WQEs by the same links, from index 0; a CQE names one by its
 * index.
 */
struct mmw_srq {
	uint8_t *buf;
	uint32_t cnt, stride;
	volatile __be32 *dbrec;
	uint32_t next;  /* device: the WQE it takes next */
	uint16_t taken; /* device: WQEs taken */
};

void mmw_srq_init(struct mmw_srq *s, uint32_t max_wr, uint32_t max_sge);
void mmw_srq_fini(struct mmw_srq *s);
/* Fill *out as mlx5dv_init_obj() would (the SRQ number only when out->comp_mask asks). */
void mmw_srq_dv(const struct mmw_srq *s, uint32_t srqn, struct mlx5dv_srq *out);
/*
 * The next posted WQE the device has not taken: its index, its data segments in @seg (*@n of
 * them). @return the index; -1 when none is posted; -2 when the driver's record or links are not
 * ones a device could follow (more posted than the queue holds, a link out of the ring),
 * described in @why. Taken only by mmw_srq_advance().
 */
int mmw_srq_peek(const struct mmw_srq *s, struct mmw_seg *seg, unsigned int *n, char *why,
		 size_t whylen);
void mmw_srq_advance(struct mmw_srq *s);
/* The data segments of WQE @idx (scatter to CQE). @return how many. */
unsigned int mmw_srq_segs(const struct mmw_srq *s, uint32_t idx, struct mmw_seg *seg);

/* Page-aligned zeroed memory (aborts when there is none); the power of 2 at or above @v. */
void *mmw_zalloc(size_t n);
uint32_t mmw_pow2up(uint32_t v);

/* A CQ ring as the device writes it. */
struct mmw_cq {
	uint8_t *buf;
	uint32_t cnt;           /* entries (a power of 2) */
	uint32_t size;          /* 64 or 128 */
	uint32_t pi;            /* entries written */
	volatile __be32 *dbrec; /* [0]: the consumer's index (24 bits) */
	uint32_t cqn;
	uint64_t cqes, err_cqes, inline_cqes;
};

/* Allocate the ring and record: every entry INVALID and the device's, as libmlx5 leaves them. */
void mmw_cq_init(struct mmw_cq *c, uint32_t cnt, uint32_t size, uint32_t cqn);
void mmw_cq_fini(struct mmw_cq *c);
/* Fill *out as mlx5dv_init_obj() would. */
void mmw_cq_dv(const struct mmw_cq *c, struct mlx5dv_cq *out);

/* Room for another CQE (the consumer's index not a whole ring behind). */
bool mmw_cq_room(const struct mmw_cq *c);

/*
 * Write one CQE (caller checked the room). Requester: @op MLX5_CQE_REQ, @wqe_op the WQE's opcode,
 * @counter its first building block. Responder: MLX5_CQE_RESP_SEND or _SEND_INV (@inv_key),
 * @counter the receive WQE's index. @byte_cnt as the device reports it. @inl (not NULL): the
 * data, @byte_cnt bytes, put in the CQE itself (scatter to CQE: up to 32 bytes, 64 in a 128-byte
 * CQE).
 */
void mmw_cqe_ok(struct mmw_cq *c, uint8_t op, uint32_t qpn, uint16_t counter, uint8_t wqe_op,
		uint32_t byte_cnt, uint32_t inv_key, const void *inl);
/* Write one error CQE (MLX5_CQE_REQ_ERR when @req, else MLX5_CQE_RESP_ERR). */
void mmw_cqe_err(struct mmw_cq *c, bool req, uint32_t qpn, uint16_t counter, uint8_t wqe_op,
		 uint8_t syndrome);
/* The most the CQE carries itself. */
uint32_t mmw_cqe_inline_max(const struct mmw_cq *c);

#endif /* MLX5_MODEL_WQ_H */
