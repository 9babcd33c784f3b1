/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * mlx5 fast path: work queue entries written, completions read, by rpcr itself.
 *
 * Post send, per work request: check it; write its WQE at the producer index in 64-byte building
 * blocks (BB), wrapping at the end of the ring: the control segment (opcode, index, QP number,
 * size in 16-byte units, "CQE wanted" for signalled ones, the key to invalidate for Send with
 * Invalidate), the remote address segment for Write and Read, then either the data inline (a
 * Send or Write whose gather list totals no more than the QP's inline size: the CPU copies it,
 * local keys unchecked) or one data segment per non-empty gather entry; note its bookkeeping
 * (struct mlx5_swqe) at its first BB's index. A window bind or local invalidation is a UMR WQE
 * of its own (post_umr(); 3 or 2 BBs), and the WQE after it carries the initiator small fence.
 * Then, once per burst: barrier, the doorbell record
 * ([MLX5_SND_DBR] = producer index), barrier, the first 8 bytes of the last WQE's control segment
 * into the UAR register, barrier (the register may be write-combining).
 *
 * Post receive: one WQE per stride, a data segment per non-empty scatter entry, ended by one with
 * the invalid key when the stride has room for more; once per burst the doorbell record
 * ([MLX5_RCV_DBR] = producer index) after a barrier. Receives need no register write. Post to
 * an SRQ: the same segments after the WQE's next segment, in the free list's head WQE (struct
 * mlx5_srq), the head then following its link; the record counts posts.
 *
 * Poll: a CQE is ours when its opcode is not INVALID and its owner bit equals the consumer
 * index's pass parity (index & cqe_cnt); read barrier; its QP from the QP number (the last one
 * remembered, else the device's table). Requester CQEs name the WQE by its first BB's index,
 * which completes it and every earlier unsignalled one; responder CQEs complete receives in
 * order, or for a QP of an SRQ the SRQ WQE their counter names, which is then linked after the
 * SRQ's tail (free again). A CQE for a destroyed QP is dropped, but for its SRQ receives, which
 * come back with no QP, flushed (the QP's bookkeeping stays until its CQs are found empty, as in
 * the ibverbs driver: vrb_cq_bury()). Once per poll that took something, the
 * consumer index into the CQ's doorbell record.
 *
 * Cold paths: error CQEs (syndrome to status, then the ibverbs driver's vrb_wc_error()), data
 * the device scattered into the CQE itself (up to 32 bytes, or 64 with 128-byte CQEs, copied
 * into the buffers the WQE names), a CQE for a QP number not known.
 *
 * Batching: one doorbell per burst on each queue; no locks, no system calls, no allocation.
 */

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_io.h>

#include "mlx5_internal.h"

#define BB_SIZE  MLX5_SEND_WQE_BB /* 64 */
#define BB_SHIFT MLX5_SEND_WQE_SHIFT
#define SEG_SIZE 16u
#define INL_HDR  sizeof(struct mlx5_wqe_inl_data_seg)
#define QPN_MASK 0xffffffu

/* Copy @len bytes to @dst in the send ring, wrapping at its end. @return the byte after. */
static inline uint8_t *
sq_copy(const struct mlx5_qp *qp, uint8_t *dst, const void *src, uint32_t len)
{
	uint32_t room = (uint32_t)(qp->sq_end - dst);

	if (unlikely(len > room)) {
		memcpy(dst, src, room);
		src = (const uint8_t *)src + room;
		len -= room;
		dst = qp->sq_buf;
	}
	memcpy(dst, src, len);
	return dst + len;
}

/* Data segments for the gather list (empty entries left out: a byte count of 0 would mean
 * 2 GiB to the device), wrapping at the ring's end. @return the segments written. */
static __rte_noinline uint32_t
put_dsegs(const struct mlx5_qp *qp, uint8_t *seg, const struct rpcr_rdev_sge *g, uint16_t n)
{
	uint32_t ds = 0;
	uint16_t k;

	for (k = 0; k < n; k++) {
		struct mlx5_wqe_data_seg *d;

		if (unlikely(g[k].length == 0))
			continue;
		if (unlikely(seg == qp->sq_end))
			seg = qp->sq_buf;
		d = (struct mlx5_wqe_data_seg *)seg;
		d->byte_count = htobe32(g[k].length);
		d->lkey = htobe32(g[k].lkey);
		d->addr = htobe64(g[k].addr);
		seg += SEG_SIZE;
		ds++;
	}
	return ds;
}

/* The data inline: a 4-byte header, the bytes, padding to 16 (never straddling the ring's end
 * before the bytes: the header lies in the WQE's first block). @return the 16-byte units. */
static inline uint32_t
put_inline(const struct mlx5_qp *qp, uint8_t *seg, const struct rpcr_rdev_sge *g, uint16_t n,
	   uint32_t total)
{
	uint8_t *d = seg + INL_HDR;
	uint16_t k;

	((struct mlx5_wqe_inl_data_seg *)seg)->byte_count = htobe32(total | MLX5_INLINE_SEG);
	for (k = 0; k < n; k++)
		d = sq_copy(qp, d, (const void *)(uintptr_t)g[k].addr, g[k].length);
	return (INL_HDR + total + SEG_SIZE - 1) / SEG_SIZE;
}

/* The control segment's second 8 bytes: fm_ce_se is their fourth byte. */
#define CTRL1_CQ_UPDATE   ((uint64_t)MLX5_WQE_CTRL_CQ_UPDATE << 24)
#define CTRL1_SMALL_FENCE ((uint64_t)MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE << 24)

/*
 * A window bind or a local invalidation: a UMR WQE at block @pi, as libmlx5 writes one for a
 * type 2 window (control segment with the window's key; UMR control segment, "inline", checking
 * the window is free (bind) or bound to this QP (invalidation); memory key context: the new key
 * byte and this QP, or "free"; for a bind one KLM segment: the range under the registration's
 * local key), with its bookkeeping. @ctrl1: the control segment's second word but for the key
 * (signalled, fence). @return its blocks, or 0 when the request cannot be written (nothing was).
 */
static __rte_noinline uint32_t
post_umr(struct mlx5_qp *qp, const struct rpcr_rdev_send_wr *w, uint32_t pi, uint32_t seq,
	 uint64_t ctrl1)
{
	const struct rpcr_rdev_mw_bind *b = w->bind;
	uint8_t *wqe = qp->sq_buf + ((size_t)(pi & qp->sq_bb_mask) << BB_SHIFT);
	struct mlx5_wqe_umr_ctrl_seg *uc = (struct mlx5_wqe_umr_ctrl_seg *)(wqe + SEG_SIZE);
	struct mlx5_wqe_mkey_context_seg *mk;
	struct mlx5_wqe_umr_klm_seg *klm;
	struct mlx5_swqe *sw = &qp->swqe[pi & qp->sq_bb_mask];
	uint64_t mask = MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN;
	bool bind = w->opcode == RPCR_RDEV_WR_BIND_MW;
	uint32_t key, ds, i;
	uint8_t *blk[MLX5_UMR_BIND_BBS];

	/* (A KLM's byte count is 31 bits; a length of 0 would make the bind an invalidation.) */
	if (bind &&
	    (b == NULL || b->mw == NULL || b->mr == NULL || b->len == 0 || b->len > (1ull << 31) ||
	     (b->access & ~(RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE))))
		return 0;
	key = bind ? b->mw->rkey : w->invalidate_rkey;
	ds = bind ? MLX5_UMR_BIND_BBS * BB_SIZE / SEG_SIZE : 2 * BB_SIZE / SEG_SIZE;
	/* Its blocks, each whole (the ring wraps between blocks only). */
	for (i = 0; i < MLX5_UMR_BIND_BBS; i++)
		blk[i] = qp->sq_buf + ((size_t)((pi + i) & qp->sq_bb_mask) << BB_SHIFT);
	memset(blk[0] + SEG_SIZE, 0, BB_SIZE - SEG_SIZE);
	memset(blk[1], 0, BB_SIZE);
	uc->flags = MLX5_WQE_UMR_CTRL_FLAG_INLINE | MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET;
	mk = (struct mlx5_wqe_mkey_context_seg *)blk[1];
	if (bind) {
		uint32_t next = b->mw->next_rkey;

		uc->flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE;
		uc->klm_octowords = htobe16(4); /* one KLM, padded to 64 bytes */
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC;
		mk->qpn_mkey = htobe32((next & 0xffu) | qp->qpn << 8);
		if (b->access & RPCR_RDEV_ACCESS_REMOTE_READ)
			mk->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ;
		if (b->access & RPCR_RDEV_ACCESS_REMOTE_WRITE)
			mk->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
		mk->start_addr = htobe64(b->addr);
		mk->len = htobe64(b->len);
		memset(blk[2], 0, BB_SIZE);
		klm = (struct mlx5_wqe_umr_klm_seg *)blk[2];
		klm->byte_count = htobe32((uint32_t)b->len);
		klm->mkey = htobe32(b->mr->lkey);
		klm->address = htobe64(b->addr);
		sw->len = RPCR_RDEV_WC_BIND_MW;
		/* Posted: the window's key is the new one, and the next is drawn (verbs'
		 * ibv_inc_rkey(): the low byte, which the UMR sets, advanced). */
		b->mw->rkey = next;
		b->mw->next_rkey = (next & ~0xffu) | ((next + 1) & 0xffu);
	} else {
		uc->flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN;
		mk->free = MLX5_WQE_MKEY_CONTEXT_FREE;
		mk->qpn_mkey = htobe32(0xffffff00u);
		sw->len = RPCR_RDEV_WC_LOCAL_INV;
	}
	uc->mkey_mask = htobe64(mask);
	sw->wr_id = w->wr_id;
	sw->seq = seq;
	((uint64_t *)wqe)[0] = (uint64_t)htobe32(((pi & 0xffffu) << 8) | MLX5_OPCODE_UMR) |
			       (uint64_t)htobe32(qp->qpn << 8 | ds) << 32;
	((uint64_t *)wqe)[1] = ctrl1 | (uint64_t)htobe32(key) << 32;
	return ds * SEG_SIZE / BB_SIZE;
}

/* Per request opcode: the WQE's opcode (low byte), a remote address segment (bit 16). */
#define OP_RADDR (1u << 16)
_Static_assert(MLX5_WQE_CTRL_CQ_UPDATE == 1u << 3, "CQ_UPDATE is bit 3 of fm_ce_se");
/* The control segment is written as two little-endian 64-bit words. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the WQE stores assume little endian");
static const uint32_t op_tab[8] = {
	[RPCR_RDEV_WR_SEND] = MLX5_OPCODE_SEND,
	[RPCR_RDEV_WR_SEND_INV] = MLX5_OPCODE_SEND_INVAL,
	[RPCR_RDEV_WR_WRITE] = MLX5_OPCODE_RDMA_WRITE | OP_RADDR,
	[RPCR_RDEV_WR_READ] = MLX5_OPCODE_RDMA_READ | OP_RADDR,
};

#define WC_OP_UMR 0xffu

/* The completion's opcode from the WQE's, which requester CQEs carry (sop_drop_qpn's top byte;
 * s_wqe_opcode_qpn's in an error CQE). */
static const uint8_t wc_op[32] = {
	[MLX5_OPCODE_SEND] = RPCR_RDEV_WC_SEND,
	[MLX5_OPCODE_SEND_INVAL] = RPCR_RDEV_WC_SEND,
	[MLX5_OPCODE_RDMA_WRITE] = RPCR_RDEV_WC_RDMA_WRITE,
	[MLX5_OPCODE_RDMA_READ] = RPCR_RDEV_WC_RDMA_READ,
	/* A UMR: a bind or an invalidation, which its bookkeeping says (cqe_general()). */
	[MLX5_OPCODE_UMR & 31] = WC_OP_UMR,
};

uint16_t
mlx5_post_send(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	struct mlx5_qp *qp = (struct mlx5_qp *)pqp;
	/* What the loop reads, in locals: its stores (WQEs, bookkeeping) could alias the QP. */
	uint8_t *const sq_buf = qp->sq_buf;
	struct mlx5_swqe *const swqe = qp->swqe;
	const uint32_t mask = qp->sq_bb_mask;
	const uint32_t qpn8 = qp->qpn << 8;
	const uint32_t max_inline = qp->vq.max_inline;
	const uint32_t nsge = qp->vq.pub.attr.max_send_sge;
	/* Send with Invalidate, window binds and local invalidation where the QP has them. */
	const uint32_t ops_ok = qp->ops_ok;
	const uint8_t sig_all = qp->vq.pub.attr.sq_sig_all ? RPCR_RDEV_WR_F_SIGNALED : 0;
	const uint32_t head = qp->vq.sq_head;
	const uint32_t room = qp->vq.pub.attr.max_send_wr - (head - qp->vq.sq_tail);
	const uint16_t lim = (uint16_t)RTE_MIN((uint32_t)n, room);
	uint64_t *ctrl = NULL;
	uint64_t fence = qp->sq_fence;
	uint32_t pi = qp->sq_pi;
	uint16_t i;

	for (i = 0; i < lim; i++) {
		const struct rpcr_rdev_send_wr *w = &wr[i];
		const struct rpcr_rdev_sge *g = w->sg_list;
		const uint16_t ns = w->num_sge;
		const uint8_t op = w->opcode;
		struct mlx5_swqe *sw = &swqe[pi & mask];
		uint32_t info, ds, total, imm = 0, signal;
		uint8_t *seg;

		if (unlikely(op >= RPCR_RDEV_WR_BIND_MW || !((ops_ok >> op) & 1) ||
			     ns > (g != NULL ? nsge : 0))) {
			uint32_t nbb;

			/* A window bind or local invalidation (their own WQE), or a mistake. */
			if (op < RPCR_RDEV_WR_BIND_MW || op > RPCR_RDEV_WR_LOCAL_INV ||
			    !((ops_ok >> op) & 1) ||
			    (nbb = post_umr(qp, w, pi, head + i,
					    ((w->flags | sig_all) & RPCR_RDEV_WR_F_SIGNALED
						     ? CTRL1_CQ_UPDATE
						     : 0) |
						    fence)) == 0) {
				rte_errno = EINVAL;
				break;
			}
			ctrl = (uint64_t *)(sq_buf + ((pi & mask) << BB_SHIFT));
			pi += nbb;
			fence = CTRL1_SMALL_FENCE;
			continue;
		}
		info = op_tab[op];
		ctrl = (uint64_t *)(sq_buf + ((pi & mask) << BB_SHIFT));
		seg = (uint8_t *)ctrl + SEG_SIZE;
		ds = 1;
		if (info & OP_RADDR) {
			struct mlx5_wqe_raddr_seg *ra = (struct mlx5_wqe_raddr_seg *)seg;

			ra->raddr = htobe64(w->remote_addr);
			ra->rkey = htobe32(w->rkey);
			ra->reserved = 0;
			seg += SEG_SIZE;
			ds = 2;
		} else if (op == RPCR_RDEV_WR_SEND_INV) {
			imm = htobe32(w->invalidate_rkey);
		}
		if (likely(ns == 1)) {
			/* One entry, the common shape (a whole message, a chunk's segment). Its
			 * data segment lies in the first block, before the ring's end. */
			total = g->length;
			if (unlikely(total == 0)) {
				/* (A byte count of 0 would mean 2 GiB to the device.) */
			} else if (total > max_inline || op == RPCR_RDEV_WR_READ) {
				struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)seg;

				d->byte_count = htobe32(total);
				d->lkey = htobe32(g->lkey);
				d->addr = htobe64(g->addr);
				ds++;
			} else {
				ds += put_inline(qp, seg, g, 1, total);
			}
		} else {
			uint64_t sum = 0;
			uint16_t k;

			for (k = 0; k < ns; k++)
				sum += g[k].length;
			total = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
			if (total <= max_inline && total != 0 && op != RPCR_RDEV_WR_READ)
				ds += put_inline(qp, seg, g, ns, total);
			else
				ds += put_dsegs(qp, seg, g, ns);
		}
		signal = (w->flags | sig_all) & RPCR_RDEV_WR_F_SIGNALED;
		sw->wr_id = w->wr_id;
		sw->seq = head + i;
		sw->len = total;
		/* The control segment in two stores: opcode, index, QP number and size; then
		 * signature 0, stream 0, "CQE wanted", the key to invalidate. */
		ctrl[0] = (uint64_t)htobe32(((pi & 0xffffu) << 8) | (info & 0xffu)) |
			  (uint64_t)htobe32(qpn8 | ds) << 32;
		ctrl[1] = ((uint64_t)(signal << 27) | fence) | (uint64_t)imm
								       << 32; /* CQ_UPDATE: 8 */
		fence = 0;
		pi += (ds + 3) >> 2; /* 4 units a block */
	}
	if (unlikely(i < n) && i == lim)
		rte_errno = EAGAIN;
	if (i == 0)
		return 0;
	qp->sq_pi = pi;
	qp->sq_fence = (uint32_t)fence;
	qp->vq.sq_head = head + i;
	/* The WQEs before the record, the record before the register (the device may fetch by
	 * the record), the register written out at once. */
	rte_io_wmb();
	qp->dbrec[MLX5_SND_DBR] = htobe32(pi & 0xffffu);
	rte_wmb();
	rte_write64_relaxed(*ctrl, qp->bf_reg);
	rte_wmb();
	return i;
}

/* A receive WQE's data segments: one per non-empty scatter entry (a byte count of 0 would mean
 * 2 GiB), ended by one with the invalid key when the WQE (@nseg segments) has room for more. */
static inline void
put_recv_segs(struct mlx5_wqe_data_seg *dseg, const struct rpcr_rdev_recv_wr *w, uint32_t nseg)
{
	uint32_t j = 0;
	uint16_t k;

	for (k = 0; k < w->num_sge; k++) {
		const struct rpcr_rdev_sge *g = &w->sg_list[k];

		if (unlikely(g->length == 0))
			continue;
		dseg[j].byte_count = htobe32(g->length);
		dseg[j].lkey = htobe32(g->lkey);
		dseg[j].addr = htobe64(g->addr);
		j++;
	}
	if (j < nseg) {
		dseg[j].byte_count = 0;
		dseg[j].lkey = htobe32(MLX5_INVALID_LKEY);
		dseg[j].addr = 0;
	}
}

uint16_t
mlx5_post_recv(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct mlx5_qp *qp = (struct mlx5_qp *)pqp;
	uint32_t room = qp->vq.pub.attr.max_recv_wr - (qp->vq.rq_head - qp->vq.rq_tail);
	uint32_t nsge = qp->vq.pub.attr.max_recv_sge;
	uint32_t head = qp->vq.rq_head;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		uint32_t idx = (head + i) & qp->rq_mask;
		struct mlx5_wqe_data_seg *dseg =
			(struct mlx5_wqe_data_seg *)(qp->rq_buf +
						     ((size_t)idx << qp->rq_stride_shift));

		if (unlikely(room == 0)) {
			/* (A QP of an SRQ has no receive queue of its own.) */
			rte_errno = qp->srq != NULL ? EINVAL : EAGAIN;
			break;
		}
		if (unlikely(vrb_recv_wr_bad(w, nsge))) {
			rte_errno = EINVAL;
			break;
		}
		put_recv_segs(dseg, w, qp->rq_nseg);
		qp->rwr_id[idx] = w->wr_id;
		room--;
	}
	if (i == 0)
		return 0;
	qp->vq.rq_head = head + i;
	rte_io_wmb();
	qp->dbrec[MLX5_RCV_DBR] = htobe32((head + i) & 0xffffu);
	return i;
}

#define SRQ_NEXT sizeof(struct mlx5_wqe_srq_next_seg)

static inline struct mlx5_wqe_srq_next_seg *
srq_wqe(const struct mlx5_srq *srq, uint32_t idx)
{
	return (struct mlx5_wqe_srq_next_seg *)(srq->buf + ((size_t)idx << srq->stride_shift));
}

uint16_t
mlx5_post_srq_recv(struct rpcr_rdev_srq *psrq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct mlx5_srq *srq = (struct mlx5_srq *)psrq;
	const uint32_t nsge = psrq->max_sge, max_wr = psrq->max_wr;
	uint32_t head = srq->head;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		struct mlx5_wqe_srq_next_seg *wqe = srq_wqe(srq, head);
		struct mlx5_wqe_data_seg *dseg = (struct mlx5_wqe_data_seg *)(wqe + 1);

		/* As many as asked for; the list's tail is never posted (the ring holds more). */
		if (unlikely(srq->outstanding + i >= max_wr || head == srq->tail)) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(vrb_recv_wr_bad(w, nsge))) {
			rte_errno = EINVAL;
			break;
		}
		put_recv_segs(dseg, w, srq->nseg);
		srq->wr_id[head] = w->wr_id;
		srq->posted[head] = 1;
		head = be16toh(wqe->next_wqe_index) & srq->mask;
	}
	if (i == 0)
		return 0;
	srq->head = head;
	srq->outstanding += i;
	srq->count = (uint16_t)(srq->count + i);
	rte_io_wmb(); /* the WQEs before the record */
	*srq->dbrec = htobe32(srq->count);
	return i;
}

/* The SRQ's WQE @idx completed: free it (linked after the tail, as libmlx5 does); its wr_id. The
 * caller checked that it was posted. */
static inline uint64_t
srq_done(struct mlx5_srq *srq, uint32_t idx)
{
	srq->posted[idx] = 0;
	srq->outstanding--;
	srq_wqe(srq, srq->tail)->next_wqe_index = htobe16((uint16_t)idx);
	srq->tail = idx;
	return srq->wr_id[idx];
}

/* WQE @idx of @srq is posted and not yet completed. */
static inline bool
srq_posted(const struct mlx5_srq *srq, uint32_t idx)
{
	return idx <= srq->mask && srq->posted[idx];
}

/* The error syndromes of <infiniband/mlx5dv.h> as ibverbs statuses (rpcr's are ibverbs'). */
static enum ibv_wc_status
syndrome_status(uint8_t syndrome)
{
	switch (syndrome) {
	case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case MLX5_CQE_SYNDROME_MW_BIND_ERR:
		return IBV_WC_MW_BIND_ERR;
	case MLX5_CQE_SYNDROME_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:
		return IBV_WC_REM_ABORT_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

/*
 * The device put the message (or a Read's response) into the CQE itself: copy it to where the
 * WQE's data segments, @nseg of them from @seg (wrapping at the send ring's end when @send),
 * point. @return the status: success, or LOC_LEN_ERR when they cannot hold @len bytes.
 */
static __rte_noinline enum ibv_wc_status
scatter_from_cqe(const struct mlx5_qp *qp, const uint8_t *seg, uint32_t nseg, bool send,
		 const uint8_t *src, uint32_t len)
{
	uint32_t j;

	for (j = 0; j < nseg && len != 0; j++) {
		const struct mlx5_wqe_data_seg *d;
		uint32_t cnt;

		if (send && seg == qp->sq_end)
			seg = qp->sq_buf;
		d = (const struct mlx5_wqe_data_seg *)seg;
		if (be32toh(d->lkey) == MLX5_INVALID_LKEY)
			break;
		cnt = RTE_MIN(be32toh(d->byte_count), len);
		memcpy((void *)(uintptr_t)be64toh(d->addr), src, cnt);
		src += cnt;
		len -= cnt;
		seg += SEG_SIZE;
	}
	return len == 0 ? IBV_WC_SUCCESS : IBV_WC_LOC_LEN_ERR;
}

/*
 * The device put the message (responder) or a Read's response (requester, the WQE at block
 * @idx) in the CQE itself: copy it to the buffers the WQE names. What a device must not say (64
 * bytes in a 64-byte CQE, more than the CQE holds, a requester CQE with data for anything but a
 * Read) is a general error. @return the status.
 */
static __rte_noinline enum ibv_wc_status
cqe_scatter(const struct mlx5_cq *cq, const struct mlx5_qp *qp, const struct mlx5_cqe64 *cqe,
	    bool req, uint32_t idx)
{
	bool s64 = (cqe->op_own & MLX5_INLINE_SCATTER_64) != 0;
	uint32_t len = be32toh(cqe->byte_cnt);
	const uint8_t *src = s64 ? (const uint8_t *)cqe - 64 : (const uint8_t *)cqe;

	if ((s64 && cq->cqe_shift != 7) || len > (s64 ? 64u : 32u))
		goto bad;
	if (req) {
		const uint8_t *wqe = qp->sq_buf + ((size_t)(idx & qp->sq_bb_mask) << BB_SHIFT);
		const struct mlx5_wqe_ctrl_seg *c = (const struct mlx5_wqe_ctrl_seg *)wqe;
		uint32_t ds = be32toh(c->qpn_ds) & 0x3f;

		if ((be32toh(c->opmod_idx_opcode) & 0xff) != MLX5_OPCODE_RDMA_READ || ds < 2)
			goto bad;
		return scatter_from_cqe(qp, wqe + 2 * SEG_SIZE, ds - 2, true, src, len);
	}
	if (qp->srq != NULL)
		return scatter_from_cqe(qp, (const uint8_t *)(srq_wqe(qp->srq, idx) + 1),
					qp->srq->nseg, false, src, len);
	return scatter_from_cqe(qp, qp->rq_buf + ((size_t)idx << qp->rq_stride_shift), qp->rq_nseg,
				false, src, len);
bad:
	MLX5_LOG(ERR, "CQ %u, QP %u: data in a CQE that cannot carry it (%u bytes, %s)", cq->cqn,
		 qp->qpn, len, s64 ? "64-byte scatter" : "32-byte scatter");
	return IBV_WC_GENERAL_ERR;
}

/* A CQE that names no work request of its QP (a device fault): dropped, said. */
static __rte_noinline void
cqe_stray(const struct mlx5_cq *cq, const struct mlx5_qp *qp, const struct mlx5_cqe64 *cqe)
{
	MLX5_LOG(ERR,
		 "CQ %u, QP %u: CQE opcode %u, counter %u names no request outstanding: dropped",
		 cq->cqn, qp->qpn, cqe->op_own >> 4, be16toh(cqe->wqe_counter));
}

static __rte_noinline struct mlx5_qp *
qp_lookup(const struct mlx5_cq *cq, uint32_t qpn)
{
	struct mlx5_qp *qp = mlx5_qpt_get(cq->qpt, qpn);

	if (unlikely(qp == NULL))
		MLX5_LOG(DEBUG, "CQ %u: completion for QP %u, not known: dropped", cq->cqn, qpn);
	return qp;
}

/*
 * The general path of a CQE (mlx5_poll_cq() takes the common ones itself: a successful
 * requester CQE, a received Send or Send with Invalidate, of a live QP, with no data in the CQE):
 * errors, data scattered into the CQE, destroyed QPs, CQEs that name nothing outstanding,
 * opcodes an RC QP is not asked for. @return 1 when @o was filled, 0 when the CQE is dropped.
 */
static __rte_noinline int
cqe_general(const struct mlx5_cq *cq, struct mlx5_qp *qp, const struct mlx5_cqe64 *cqe,
	    struct rpcr_rdev_wc *o)
{
	uint8_t op_own = cqe->op_own, op = op_own >> 4;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (op == MLX5_CQE_REQ || op == MLX5_CQE_REQ_ERR) {
		uint32_t idx = be16toh(cqe->wqe_counter);
		const struct mlx5_swqe *sw = &qp->swqe[idx & qp->sq_bb_mask];
		uint32_t tail = qp->vq.sq_tail;

		if (unlikely(sw->seq - tail >= qp->vq.sq_head - tail)) {
			cqe_stray(cq, qp, cqe);
			return 0;
		}
		qp->vq.sq_tail = sw->seq + 1;
		if (qp->vq.dead)
			return 0; /* destroyed: nobody is left to hear of it */
		if (op == MLX5_CQE_REQ_ERR) {
			st = syndrome_status(((const struct mlx5_err_cqe *)cqe)->syndrome);
			vrb_wc_error(&qp->vq, st);
		} else if (op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) {
			st = cqe_scatter(cq, qp, cqe, true, idx);
			if (st != IBV_WC_SUCCESS)
				vrb_wc_error(&qp->vq, st);
		}
		o->wr_id = sw->wr_id;
		/* (At the same place in an error CQE: s_wqe_opcode_qpn.) */
		o->opcode = wc_op[(be32toh(cqe->sop_drop_qpn) >> 24) & 31];
		o->byte_len = st == IBV_WC_SUCCESS ? sw->len : 0;
		if (o->opcode == WC_OP_UMR) { /* (its bookkeeping's length: which it was) */
			o->opcode = (uint8_t)sw->len;
			o->byte_len = 0;
		}
		o->flags = 0;
		o->invalidated_rkey = 0;
	} else if (op <= MLX5_CQE_RESP_SEND_INV || op == MLX5_CQE_RESP_ERR) {
		/* A message consumed a receive (immediate data, which rpcr never sends, is
		 * ignored). */
		uint32_t idx;

		if (qp->srq != NULL) {
			/* One of the SRQ's, by its index. */
			idx = be16toh(cqe->wqe_counter);
			if (!srq_posted(qp->srq, idx)) {
				cqe_stray(cq, qp, cqe);
				return 0;
			}
			o->wr_id = srq_done(qp->srq, idx);
			if (qp->vq.dead) {
				/* Its QP destroyed since: the buffer comes back (rpcr_rdev.h). */
				*o = (struct rpcr_rdev_wc){.wr_id = o->wr_id,
							   .status = RPCR_RDEV_WC_WR_FLUSH_ERR,
							   .opcode = RPCR_RDEV_WC_RECV};
				return 1;
			}
		} else {
			if (qp->vq.rq_tail == qp->vq.rq_head) {
				cqe_stray(cq, qp, cqe);
				return 0;
			}
			idx = qp->vq.rq_tail++ & qp->rq_mask;
			if (qp->vq.dead)
				return 0;
			o->wr_id = qp->rwr_id[idx];
		}
		o->opcode = RPCR_RDEV_WC_RECV;
		o->byte_len = be32toh(cqe->byte_cnt);
		o->flags = 0;
		o->invalidated_rkey = 0;
		if (op == MLX5_CQE_RESP_SEND_INV) {
			o->flags = RPCR_RDEV_WC_F_WITH_INV;
			o->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
		} else if (op == MLX5_CQE_RESP_ERR) {
			st = syndrome_status(((const struct mlx5_err_cqe *)cqe)->syndrome);
			vrb_wc_error(&qp->vq, st);
			o->byte_len = 0;
		}
		if ((op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) &&
		    st == IBV_WC_SUCCESS) {
			st = cqe_scatter(cq, qp, cqe, false, idx);
			if (st != IBV_WC_SUCCESS) {
				vrb_wc_error(&qp->vq, st);
				o->byte_len = 0;
				o->flags = 0;
			}
		}
	} else {
		cqe_stray(cq, qp, cqe); /* (no other kind is asked of an RC QP) */
		return 0;
	}
	o->qp = &qp->vq.pub;
	o->status = st;
	return 1;
}

uint16_t
mlx5_poll_cq(struct rpcr_rdev_cq *pcq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct mlx5_cq *cq = (struct mlx5_cq *)pcq;
	/* In locals: the completions written below could alias the CQ. */
	const uint8_t *const buf = cq->buf + cq->cqe64_off;
	const uint32_t mask = cq->cqe_mask, shift = cq->cqe_shift, cnt = cq->cqe_cnt;
	struct mlx5_qp *last = cq->last_qp;
	uint32_t last_qpn = cq->last_qpn;
	uint32_t ci = cq->ci;
	uint16_t got = 0;
	bool empty = false;

	while (got < n) {
		const struct mlx5_cqe64 *cqe =
			(const struct mlx5_cqe64 *)(buf + ((size_t)(ci & mask) << shift));
		uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_RELAXED);
		struct rpcr_rdev_wc *o = &wc[got];
		struct mlx5_qp *qp;
		uint32_t qpn;

		if ((op_own >> 4) == MLX5_CQE_INVALID ||
		    (op_own & MLX5_CQE_OWNER_MASK) != !!(ci & cnt)) {
			empty = true;
			break;
		}
		rte_io_rmb(); /* the rest of the CQE after its owner bit */
		ci++;
		qpn = be32toh(cqe->sop_drop_qpn) & QPN_MASK;
		if (likely(qpn == last_qpn && last != NULL)) {
			qp = last;
		} else {
			qp = qp_lookup(cq, qpn);
			last = qp;
			last_qpn = qpn;
			if (unlikely(qp == NULL))
				continue;
		}
		/* The common CQEs here: a live QP's, no data in the CQE (opcode and format bits
		 * together: 0x00 a requester's, 0x20 a Send received, 0x40 a Send with Invalidate
		 * received; the owner bit aside). */
		if (likely(!qp->vq.dead && (op_own & 0xfe) == MLX5_CQE_REQ << 4)) {
			const struct mlx5_swqe *sw =
				&qp->swqe[be16toh(cqe->wqe_counter) & qp->sq_bb_mask];
			uint32_t tail = qp->vq.sq_tail;
			uint8_t wop = wc_op[(be32toh(cqe->sop_drop_qpn) >> 24) & 31];

			if (likely(sw->seq - tail < qp->vq.sq_head - tail && wop != WC_OP_UMR)) {
				qp->vq.sq_tail = sw->seq + 1;
				o->wr_id = sw->wr_id;
				o->qp = &qp->vq.pub;
				o->status = IBV_WC_SUCCESS;
				o->opcode = wop;
				o->byte_len = sw->len;
				o->flags = 0;
				o->invalidated_rkey = 0;
				got++;
				continue;
			}
		} else if (likely(!qp->vq.dead &&
				  ((op_own & 0xfe) == MLX5_CQE_RESP_SEND << 4 ||
				   (op_own & 0xfe) == MLX5_CQE_RESP_SEND_INV << 4) &&
				  qp->vq.rq_tail != qp->vq.rq_head)) {
			bool inv = (op_own >> 4) == MLX5_CQE_RESP_SEND_INV;

			o->wr_id = qp->rwr_id[qp->vq.rq_tail++ & qp->rq_mask];
			o->qp = &qp->vq.pub;
			o->status = IBV_WC_SUCCESS;
			o->opcode = RPCR_RDEV_WC_RECV;
			o->byte_len = be32toh(cqe->byte_cnt);
			o->flags = inv ? RPCR_RDEV_WC_F_WITH_INV : 0;
			o->invalidated_rkey = inv ? be32toh(cqe->imm_inval_pkey) : 0;
			got++;
			continue;
		} else if (unlikely(qp->srq != NULL && !qp->vq.dead &&
				    ((op_own & 0xfe) == MLX5_CQE_RESP_SEND << 4 ||
				     (op_own & 0xfe) == MLX5_CQE_RESP_SEND_INV << 4) &&
				    srq_posted(qp->srq, be16toh(cqe->wqe_counter)))) {
			/* The same, a receive of the QP's SRQ (its WQE by index). (Marked unlikely:
			 * laid out apart, the other paths' code stays as it is without SRQs, 3
			 * instructions a CQE less; the predictor learns a server's.) */
			bool inv = (op_own >> 4) == MLX5_CQE_RESP_SEND_INV;

			o->wr_id = srq_done(qp->srq, be16toh(cqe->wqe_counter));
			o->qp = &qp->vq.pub;
			o->status = IBV_WC_SUCCESS;
			o->opcode = RPCR_RDEV_WC_RECV;
			o->byte_len = be32toh(cqe->byte_cnt);
			o->flags = inv ? RPCR_RDEV_WC_F_WITH_INV : 0;
			o->invalidated_rkey = inv ? be32toh(cqe->imm_inval_pkey) : 0;
			got++;
			continue;
		}
		if (unlikely(qp->vq.dead))
			last = NULL; /* (its bookkeeping may go before this CQ sees it again) */
		got += (uint16_t)cqe_general(cq, qp, cqe, o);
	}
	if (ci != cq->ci) {
		cq->ci = ci;
		rte_io_wmb(); /* the CQEs read before the device may write over them */
		cq->dbrec[0] = htobe32(ci & QPN_MASK);
	}
	cq->last_qp = last;
	cq->last_qpn = last_qpn;
	if (empty && unlikely(__atomic_load_n(&cq->vc.grave, __ATOMIC_RELAXED) != NULL)) {
		/* Empty: what destroyed QPs left here is gone. Forget the one remembered, which
		 * may be one of them, before their bookkeeping goes. */
		cq->last_qp = NULL;
		vrb_cq_bury(&cq->vc);
	}
	return got;
}
