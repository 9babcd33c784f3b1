/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * ibverbs fast path: a burst becomes one linked list of verbs work requests and one
 * ibv_post_send() / ibv_post_recv() (one doorbell); completions are taken from ibv_poll_cq() in
 * bursts. No locks, no allocation; the only system calls are the provider's own doorbell and, on
 * a QP already in the error state, one ibv_modify_qp() that makes the provider flush receives
 * posted after the error (rxe flushes only on a state change).
 *
 * ibv_post_send(), ibv_post_recv() and ibv_poll_cq() are called directly, not through the glue
 * table (vrb_glue.h): they are static inlines of <infiniband/verbs.h> that jump to the provider
 * through the context's ops, no libibverbs symbol involved, so a dlopen build needs no entry for
 * them and the fast path pays no extra indirection. The cold ibv_modify_qp() goes through the
 * table.
 *
 * Every verbs wr_id points at the work request's slot in its QP's ring (struct vrb_wr), which
 * keeps the application's wr_id and what is needed to report the completion even when the device
 * reports none of it (a flushed completion carries no opcode; Write and Read carry no length).
 * Send-queue slots are freed in order up to the completed one, so unsignalled work requests hold
 * their slot until a later completion is polled, as rpcr_rdev.h promises for every driver.
 */

#include <errno.h>
#include <stdlib.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>

#include "vrb_internal.h"

/* The kernel's IB_WC_WITH_INVALIDATE, which rxe passes to userspace unconverted. */
#define VRB_KERNEL_WC_WITH_INV (1u << 2)

static const uint8_t wr_opcode[] = {
	[RPCR_RDEV_WR_SEND] = IBV_WR_SEND,        [RPCR_RDEV_WR_SEND_INV] = IBV_WR_SEND_WITH_INV,
	[RPCR_RDEV_WR_WRITE] = IBV_WR_RDMA_WRITE, [RPCR_RDEV_WR_READ] = IBV_WR_RDMA_READ,
	[RPCR_RDEV_WR_BIND_MW] = IBV_WR_BIND_MW,  [RPCR_RDEV_WR_LOCAL_INV] = IBV_WR_LOCAL_INV,
};

static const uint8_t wc_opcode[] = {
	[RPCR_RDEV_WR_SEND] = RPCR_RDEV_WC_SEND,
	[RPCR_RDEV_WR_SEND_INV] = RPCR_RDEV_WC_SEND,
	[RPCR_RDEV_WR_WRITE] = RPCR_RDEV_WC_RDMA_WRITE,
	[RPCR_RDEV_WR_READ] = RPCR_RDEV_WC_RDMA_READ,
	[RPCR_RDEV_WR_BIND_MW] = RPCR_RDEV_WC_BIND_MW,
	[RPCR_RDEV_WR_LOCAL_INV] = RPCR_RDEV_WC_LOCAL_INV,
};

static inline int
mw_access(uint32_t access)
{
	return ((access & RPCR_RDEV_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       ((access & RPCR_RDEV_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0);
}

static uint16_t
vrb_post_send(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	uint32_t room = qp->pub.attr.max_send_wr - (qp->sq_head - qp->sq_tail);
	uint32_t nsge = qp->pub.attr.max_send_sge;
	struct ibv_send_wr *bad = NULL;
	struct ibv_sge *sg = qp->sge;
	uint16_t i, k;
	int rc;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_send_wr *w = &wr[i];
		struct vrb_wr *slot = &qp->sq[(qp->sq_head + i) & qp->sq_mask];
		struct ibv_send_wr *s = &qp->swr[i];
		uint64_t total = 0;

		if (unlikely(room == 0)) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(w->opcode > RPCR_RDEV_WR_LOCAL_INV || w->num_sge > nsge ||
			     (w->num_sge != 0 && w->sg_list == NULL) ||
			     (w->opcode >= RPCR_RDEV_WR_BIND_MW && !qp->send_inv) ||
			     (w->opcode == RPCR_RDEV_WR_BIND_MW &&
			      (w->bind == NULL || w->bind->mw == NULL || w->bind->mr == NULL)) ||
			     (w->opcode == RPCR_RDEV_WR_SEND_INV && !qp->send_inv))) {
			rte_errno = EINVAL;
			break;
		}
		for (k = 0; k < w->num_sge; k++) {
			sg[k].addr = w->sg_list[k].addr;
			sg[k].length = w->sg_list[k].length;
			sg[k].lkey = w->sg_list[k].lkey;
			total += w->sg_list[k].length;
		}
		slot->qp = qp;
		slot->wr_id = w->wr_id;
		slot->seq = qp->sq_head + i;
		slot->recv = 0;
		slot->opcode = wc_opcode[w->opcode];
		slot->signal = (w->flags & RPCR_RDEV_WR_F_SIGNALED) || qp->pub.attr.sq_sig_all;
		slot->len = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;

		s->wr_id = (uintptr_t)slot;
		s->next = s + 1;
		s->sg_list = sg;
		s->num_sge = w->num_sge;
		s->opcode = wr_opcode[w->opcode];
		s->send_flags = slot->signal ? IBV_SEND_SIGNALED : 0;
		switch (w->opcode) {
		case RPCR_RDEV_WR_SEND_INV:
			s->invalidate_rkey = w->invalidate_rkey;
			/* fall through */
		case RPCR_RDEV_WR_SEND:
			/* Inline only where the QP was created for it: an inline gather entry
			 * is copied by the CPU, its local key is not checked. */
			if (total != 0 && total <= qp->max_inline)
				s->send_flags |= IBV_SEND_INLINE;
			break;
		case RPCR_RDEV_WR_BIND_MW: {
			const struct rpcr_rdev_mw_bind *b = w->bind;
			const struct vrb_mr *mr = (const struct vrb_mr *)b->mr;

			s->num_sge = 0;
			s->bind_mw.mw = ((struct vrb_mw *)b->mw)->mw;
			/* A new key each bind, drawn ahead (next_rkey): the provider binds the key
			 * it is given. */
			s->bind_mw.rkey = b->mw->next_rkey;
			/* (An invalidated registration has no verbs MR: the bind fails.) */
			s->bind_mw.bind_info.mr = mr->mr;
			s->bind_mw.bind_info.addr = b->addr;
			s->bind_mw.bind_info.length = b->len;
			s->bind_mw.bind_info.mw_access_flags = (unsigned int)mw_access(b->access);
			if (unlikely(mr->mr == NULL)) {
				rte_errno = EINVAL;
				goto stop;
			}
			break;
		}
		case RPCR_RDEV_WR_LOCAL_INV:
			s->num_sge = 0;
			s->invalidate_rkey = w->invalidate_rkey;
			break;
		default:
			s->wr.rdma.remote_addr = w->remote_addr;
			s->wr.rdma.rkey = w->rkey;
			break;
		}
		sg += nsge;
		room--;
	}
stop:
	if (i == 0)
		return 0;
	qp->swr[i - 1].next = NULL;
	rc = ibv_post_send(qp->qp, qp->swr, &bad);
	if (unlikely(rc != 0)) {
		/* The provider took the list up to @bad. */
		i = bad != NULL ? (uint16_t)(bad - qp->swr) : 0;
		rte_errno = rc == ENOMEM ? EAGAIN : rc;
	}
	/* The windows' new keys, for the binds the provider took. */
	for (k = 0; k < i; k++) {
		if (unlikely(wr[k].opcode == RPCR_RDEV_WR_BIND_MW)) {
			wr[k].bind->mw->rkey = qp->swr[k].bind_mw.rkey;
			wr[k].bind->mw->next_rkey = ibv_inc_rkey(qp->swr[k].bind_mw.rkey);
		}
	}
	qp->sq_head += i;
	return i;
}

/*
 * Receive @w as the provider's @r, its scatter list in @sg (room for the queue's most), kept in
 * @slot (its owner, slot->qp or slot->srq, set by the caller) as receive @seq of its queue, of
 * kind @recv (1, or VRB_WR_SRQ). @r is linked to the next of the list; the caller ends it.
 */
static __rte_always_inline void
vrb_recv_fill(struct ibv_recv_wr *r, struct ibv_sge *sg, struct vrb_wr *slot,
	      const struct rpcr_rdev_recv_wr *w, uint32_t seq, uint8_t recv)
{
	uint16_t k;

	for (k = 0; k < w->num_sge; k++) {
		sg[k].addr = w->sg_list[k].addr;
		sg[k].length = w->sg_list[k].length;
		sg[k].lkey = w->sg_list[k].lkey;
	}
	slot->wr_id = w->wr_id;
	slot->seq = seq;
	slot->recv = recv;
	slot->opcode = RPCR_RDEV_WC_RECV;
	slot->signal = 1;
	slot->len = 0;
	r->wr_id = (uintptr_t)slot;
	r->next = r + 1;
	r->sg_list = sg;
	r->num_sge = w->num_sge;
}

static uint16_t
vrb_post_recv(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	uint32_t room = qp->pub.attr.max_recv_wr - (qp->rq_head - qp->rq_tail);
	uint32_t nsge = qp->pub.attr.max_recv_sge;
	struct ibv_sge *sg = qp->sge + (size_t)qp->pub.attr.max_send_wr * qp->pub.attr.max_send_sge;
	struct ibv_recv_wr *bad = NULL;
	uint16_t i;
	int rc;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		struct vrb_wr *slot = &qp->rq[(qp->rq_head + i) & qp->rq_mask];
		struct ibv_recv_wr *r = &qp->rwr[i];

		if (unlikely(room == 0 || qp->srq != NULL)) {
			rte_errno = qp->srq != NULL ? EINVAL : EAGAIN;
			break;
		}
		if (unlikely(vrb_recv_wr_bad(w, nsge))) {
			rte_errno = EINVAL;
			break;
		}
		slot->qp = qp;
		vrb_recv_fill(r, sg, slot, w, qp->rq_head + i, 1);
		sg += nsge;
		room--;
	}
	if (i == 0)
		return 0;
	qp->rwr[i - 1].next = NULL;
	rc = ibv_post_recv(qp->qp, qp->rwr, &bad);
	if (unlikely(rc != 0)) {
		i = bad != NULL ? (uint16_t)(bad - qp->rwr) : 0;
		rte_errno = rc == ENOMEM ? EAGAIN : rc;
	}
	qp->rq_head += i;
	if (unlikely(__atomic_load_n(&qp->in_error, __ATOMIC_RELAXED)) && i != 0) {
		/* Cold: the QP is dead. Providers that flush only on a state change (rxe) flush
		 * these receives when told "error" again. */
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

		(void)vrb_glue->modify_qp(qp->qp, &a, IBV_QP_STATE);
	}
	return i;
}

static uint16_t
vrb_post_srq_recv(struct rpcr_rdev_srq *psrq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct vrb_srq *srq = (struct vrb_srq *)psrq;
	uint32_t nsge = psrq->max_sge;
	struct ibv_sge *sg = srq->sge;
	struct ibv_recv_wr *bad = NULL;
	uint16_t i, k;
	int rc;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		uint32_t seq = srq->prod + i;
		struct vrb_wr *slot = &srq->slots[seq & srq->mask];
		struct ibv_recv_wr *r = &srq->rwr[i];

		/* Full, or the slot's last receive not completed yet (see struct vrb_srq). */
		if (unlikely(srq->outstanding + i >= psrq->max_wr || srq->held[seq & srq->mask])) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(vrb_recv_wr_bad(w, nsge))) {
			rte_errno = EINVAL;
			break;
		}
		slot->srq = srq;
		vrb_recv_fill(r, sg, slot, w, seq, VRB_WR_SRQ);
		sg += nsge;
	}
	if (i == 0)
		return 0;
	srq->rwr[i - 1].next = NULL;
	rc = ibv_post_srq_recv(srq->srq, srq->rwr, &bad);
	if (unlikely(rc != 0)) {
		i = bad != NULL ? (uint16_t)(bad - srq->rwr) : 0;
		rte_errno = rc == ENOMEM ? EAGAIN : rc;
	}
	for (k = 0; k < i; k++)
		srq->held[(srq->prod + k) & srq->mask] = 1;
	srq->prod += i;
	srq->outstanding += i;
	return i;
}

/* The data path's part of an SRQ (struct vrb_srq): its slots and a burst's work requests. */
static void
vrb_srq_fini(struct vrb_srq *srq)
{
	free(srq->slots);
	free(srq->held);
	free(srq->rwr);
	free(srq->sge);
}

static int
vrb_srq_init(struct vrb_srq *srq)
{
	uint32_t nslots = rte_align32pow2(2 * srq->pub.max_wr);

	srq->slots = calloc(nslots, sizeof(*srq->slots));
	srq->held = calloc(nslots, sizeof(*srq->held));
	srq->rwr = calloc(srq->pub.max_wr, sizeof(*srq->rwr));
	srq->sge = calloc((size_t)srq->pub.max_wr * srq->pub.max_sge, sizeof(*srq->sge));
	if (srq->slots == NULL || srq->held == NULL || srq->rwr == NULL || srq->sge == NULL)
		return -ENOMEM;
	srq->mask = nslots - 1;
	return 0;
}

/* A completion of a receive of @slot's SRQ: its slot is free again; the QP it arrived on. */
static __rte_noinline struct vrb_qp *
vrb_srq_done(const struct vrb_wr *slot, uint32_t qpn)
{
	struct vrb_srq *srq = slot->srq;

	srq->held[slot->seq & srq->mask] = 0;
	srq->outstanding--;
	return vrb_srq_qp_find(srq, qpn);
}

/* Errors detected by the peer, or that leave it waiting: the connection is over for both. */
static inline bool
remote_error(enum ibv_wc_status st)
{
	return st == IBV_WC_REM_INV_REQ_ERR || st == IBV_WC_REM_ACCESS_ERR ||
	       st == IBV_WC_REM_OP_ERR || st == IBV_WC_RETRY_EXC_ERR ||
	       st == IBV_WC_RNR_RETRY_EXC_ERR || st == IBV_WC_REM_ABORT_ERR ||
	       st == IBV_WC_BAD_RESP_ERR;
}

__rte_noinline void
vrb_wc_error(struct vrb_qp *qp, enum ibv_wc_status st)
{
	if (st == IBV_WC_RNR_RETRY_EXC_ERR)
		qp->pub.stats.rnr_errors++;
	if (st == IBV_WC_WR_FLUSH_ERR)
		return;
	__atomic_store_n(&qp->in_error, true, __ATOMIC_RELAXED);
	if (remote_error(st))
		vrb_qp_fail(qp);
}

static uint16_t
vrb_poll_cq(struct rpcr_rdev_cq *pcq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct vrb_cq *cq = (struct vrb_cq *)pcq;
	struct ibv_wc w[VRB_POLL_BURST];
	uint16_t got = 0;
	int k, j;

	while (got < n) {
		int want = RTE_MIN((int)(n - got), (int)VRB_POLL_BURST);

		k = ibv_poll_cq(cq->cq, want, w);
		for (j = 0; j < k; j++) {
			const struct ibv_wc *e = &w[j];
			struct vrb_wr *slot = (struct vrb_wr *)(uintptr_t)e->wr_id;
			struct vrb_qp *qp;
			struct rpcr_rdev_wc *o;

			if (unlikely(slot->recv == VRB_WR_SRQ)) {
				qp = vrb_srq_done(slot, e->qp_num);
				if (qp == NULL) {
					/* Its QP destroyed since: the buffer comes back. */
					wc[got++] = (struct rpcr_rdev_wc){
						.wr_id = slot->wr_id,
						.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
						.opcode = RPCR_RDEV_WC_RECV,
					};
					continue;
				}
			} else {
				qp = slot->qp;
				if (slot->recv)
					qp->rq_tail = slot->seq + 1;
				else
					qp->sq_tail = slot->seq + 1;
			}
			if (unlikely(qp->dead))
				continue; /* destroyed: nobody is left to hear of it */
			if (unlikely(e->status != IBV_WC_SUCCESS))
				vrb_wc_error(qp, e->status);
			else if (unlikely(!slot->signal))
				continue;
			o = &wc[got++];
			o->wr_id = slot->wr_id;
			o->qp = &qp->pub;
			o->status = e->status;
			o->opcode = slot->opcode;
			o->flags = 0;
			o->invalidated_rkey = 0;
			if (e->status != IBV_WC_SUCCESS) {
				o->byte_len = 0;
			} else if (slot->recv) {
				o->byte_len = e->byte_len;
				if ((e->wc_flags & IBV_WC_WITH_INV) ||
				    (qp->vd->rxe && (e->wc_flags & VRB_KERNEL_WC_WITH_INV))) {
					o->flags = RPCR_RDEV_WC_F_WITH_INV;
					o->invalidated_rkey = e->invalidated_rkey;
				}
			} else {
				o->byte_len = slot->len;
			}
		}
		if (k < want) {
			/* The CQ is empty: what destroyed QPs left in it is gone, the last of it
			 * dropped just above (their bookkeeping is freed only now, after the
			 * entries that point at it were read). */
			if (unlikely(__atomic_load_n(&cq->grave, __ATOMIC_RELAXED) != NULL))
				vrb_cq_bury(cq);
			break;
		}
	}
	return got;
}

/* The bookkeeping of struct vrb_qp's verbs members: one slot per work request outstanding, and
 * the work-request lists a burst is built in. */
static int
vrb_qp_init(struct vrb_qp *qp)
{
	const struct rpcr_rdev_qp_attr *attr = &qp->pub.attr;
	uint32_t sqn = rte_align32pow2(attr->max_send_wr);
	uint32_t rqn = rte_align32pow2(RTE_MAX(attr->max_recv_wr, 1u)); /* (0 with an SRQ) */

	qp->sq = calloc(sqn, sizeof(*qp->sq));
	qp->rq = calloc(rqn, sizeof(*qp->rq));
	qp->swr = calloc(attr->max_send_wr, sizeof(*qp->swr));
	qp->rwr = calloc(RTE_MAX(attr->max_recv_wr, 1u), sizeof(*qp->rwr));
	qp->sge = calloc((size_t)attr->max_send_wr * attr->max_send_sge +
				 (size_t)attr->max_recv_wr * attr->max_recv_sge,
			 sizeof(*qp->sge));
	if (qp->sq == NULL || qp->rq == NULL || qp->swr == NULL || qp->rwr == NULL ||
	    qp->sge == NULL)
		return -ENOMEM;
	qp->sq_mask = sqn - 1;
	qp->rq_mask = rqn - 1;
	return 0;
}

static void
vrb_qp_fini(struct vrb_qp *qp)
{
	free(qp->sq);
	free(qp->rq);
	free(qp->swr);
	free(qp->rwr);
	free(qp->sge);
}

static const struct rpcr_rdev_fp_ops vrb_fp = {
	.post_send = vrb_post_send,
	.post_recv = vrb_post_recv,
	.poll_cq = vrb_poll_cq,
	.post_srq_recv = vrb_post_srq_recv,
};

const struct vrb_dp vrb_verbs_dp = {
	.name = "ibverbs",
	.fp = &vrb_fp,
	.qp_size = sizeof(struct vrb_qp),
	.cq_size = sizeof(struct vrb_cq),
	.mw = true,
	.cq_events = true,
	.srq = true,
	.srq_size = sizeof(struct vrb_srq),
	.qp_init = vrb_qp_init,
	.qp_fini = vrb_qp_fini,
	.srq_init = vrb_srq_init,
	.srq_fini = vrb_srq_fini,
};
