/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The send queue of a connection: see sq.h. Flushing posts the WRs gathered this poll with one
 * doorbell (a post that fails fails the connection: room was checked); completing walks the
 * entries up to a signalled WR's and releases or reports what each owns; committing stages
 * planned RDMA Reads and Writes, the last of them carrying the owner.
 */

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

/* Allocate @c's send queue (empty). @return 0 or -ENOMEM (xprt_sq_free() gives back any part). */
int
xprt_sq_init(struct xprt_conn *c)
{
	RTE_BUILD_BUG_ON(XPRT_SQ_RING < XPRT_SQ_DEPTH + XPRT_MW_MAX ||
			 !RTE_IS_POWER_OF_2(XPRT_SQ_RING) || XPRT_SQ_RING > 65536);
	c->sq.ent = rte_zmalloc("rpcr_xprt", sizeof(*c->sq.ent) * XPRT_SQ_RING, 0);
	c->sq.mask = XPRT_SQ_RING - 1;
	c->sq.sig_mask = XPRT_SIG_EVERY - 1;
	c->sq.wrs = rte_zmalloc("rpcr_xprt", sizeof(*c->sq.wrs) * XPRT_WR_BATCH, 0);
	c->sq.sges = rte_zmalloc("rpcr_xprt", sizeof(*c->sq.sges) * XPRT_SGE_BATCH, 0);
	return c->sq.ent != NULL && c->sq.wrs != NULL && c->sq.sges != NULL ? 0 : -ENOMEM;
}

void
xprt_sq_free(struct xprt_conn *c)
{
	rte_free(c->sq.ent);
	rte_free(c->sq.wrs);
	rte_free(c->sq.sges);
	c->sq.ent = NULL;
	c->sq.wrs = NULL;
	c->sq.sges = NULL;
}

/* The QP is gone: WRs staged and not posted are forgotten, and every entry completes, failed
 * (releasing what it owns, telling who waits). */
void
xprt_sq_abort(struct xprt_conn *c)
{
	c->sq.nwrs = 0;
	c->sq.nsges = 0;
	if (c->sq.tail != c->sq.head)
		xprt_sq_complete(c, xprt_sq_last(c), false);
}

void
xprt_sq_flush(struct xprt_conn *c)
{
	uint16_t done;

	if (c->sq.nwrs == 0)
		return;
	if (unlikely(c->p->cap != NULL))
		xprt_cap_tx(c);
	if (likely(c->state < XPRT_CONN_CLOSING)) {
		done = rpcr_rdev_post_send(c->qp, c->sq.wrs, (uint16_t)c->sq.nwrs);
		c->p->stats.doorbells++;
		if (unlikely(done != c->sq.nwrs)) {
			/* Room was checked: the QP has failed. Its entries are released at teardown. */
			XPRT_LOG(ERR, "%s: conn %" PRIu64 ": %u of %u WRs posted: %s", c->p->name,
				 c->id, done, c->sq.nwrs, rte_strerror(rte_errno));
			xprt_conn_fail(c, "post_send failed");
		}
	}
	c->sq.nwrs = 0;
	c->sq.nsges = 0;
}

/* Release the bookkeeping of WRs head..seq (inclusive): a signalled completion implies all
 * earlier WRs are done. A sequence number outside the window is stale and ignored. */
void
xprt_sq_complete(struct xprt_conn *c, uint32_t seq, bool ok)
{
	uint32_t n = seq - c->sq.head + 1;

	if (unlikely(n > c->sq.tail - c->sq.head))
		return;
	/* Nothing to release or report anywhere in the send queue: the entries just go. */
	if (c->sq.nown == 0) {
		c->sq.head = seq + 1;
		return;
	}
	while (n-- != 0) {
		struct xprt_sq_ent *e = &c->sq.ent[c->sq.head++ & c->sq.mask];
		struct rte_mbuf *m = e->m;
		struct rpcr_svc_req *req = e->req;
		struct xprt_creq *creq = e->creq;

		if (((uintptr_t)m | (uintptr_t)req | (uintptr_t)creq) == 0)
			continue;
		e->m = NULL;
		e->req = NULL;
		e->creq = NULL;
		c->sq.nown--;
		if (m != NULL)
			xprt_buf_put(c, m);
		if (req != NULL)
			xprt_svc_reads_done(req, ok && c->state < XPRT_CONN_CLOSING);
		if (creq != NULL)
			xprt_clnt_wrs_done(creq, c, ok && c->state < XPRT_CONN_CLOSING);
	}
}

/* A plan writing into the connection's batch after @nw WRs and @ns entries already staged. */
void
xprt_sq_plan_init(struct xprt_conn *c, struct rpcr_chunk_plan *plan, uint32_t nw, uint32_t ns)
{
	plan->wrs = &c->sq.wrs[c->sq.nwrs + nw];
	plan->max_wrs = XPRT_WR_BATCH - c->sq.nwrs - nw;
	plan->nwrs = 0;
	plan->sges = &c->sq.sges[c->sq.nsges + ns];
	plan->max_sges = XPRT_SGE_BATCH - c->sq.nsges - ns;
	plan->nsges = 0;
	plan->max_wr_sge = c->qp->attr.max_send_sge;
}

/* Commit @nw staged WRs (and @ns entries) to the send queue; the last releases @m and reports
 * to @req or @creq, and is signalled when @signal. */
void
xprt_sq_commit(struct xprt_conn *c, uint32_t nw, uint32_t ns, struct rte_mbuf *m,
	       struct rpcr_svc_req *req, struct xprt_creq *creq, bool signal)
{
	uint32_t i;

	for (i = 0; i < nw; i++) {
		struct rpcr_rdev_send_wr *w = &c->sq.wrs[c->sq.nwrs];
		bool last = i + 1 == nw;
		uint32_t seq = c->sq.tail++;
		struct xprt_sq_ent *e = &c->sq.ent[seq & c->sq.mask];
		bool sig = last && signal;

		if (last && ((uintptr_t)m | (uintptr_t)req | (uintptr_t)creq) != 0) {
			e->m = m;
			e->req = req;
			e->creq = creq;
			c->sq.nown++;
		}
		sig |= (seq & c->sq.sig_mask) == c->sq.sig_mask;
		w->wr_id = ((uint64_t)seq << 1) | XPRT_WRID_SQ;
		w->flags = sig ? RPCR_RDEV_WR_F_SIGNALED : 0;
		c->sq.nwrs++;
	}
	c->sq.nsges += ns;
	xprt_mark_dirty(c);
}

/*
 * Hand buffer @m over to the entry of WR @seq, which carried it and may still be read by the
 * device: released when that WR is known complete. @return false when it is complete already
 * (the device is done with @m: the caller keeps it), or its entry owns something else.
 */
bool
xprt_sq_adopt(struct xprt_conn *c, uint32_t seq, struct rte_mbuf *m)
{
	struct xprt_sq_ent *e;

	if (xprt_sq_done(c, seq))
		return false;
	e = &c->sq.ent[seq & c->sq.mask];
	if (e->m != NULL)
		return false;
	if (((uintptr_t)e->req | (uintptr_t)e->creq) == 0)
		c->sq.nown++;
	e->m = m;
	return true;
}

void
xprt_sq_post_reg(struct xprt_conn *c, const struct rpcr_rdev_mw_bind *bind, uint32_t inv_rkey,
		 struct xprt_creq *owner, bool signal)
{
	struct rpcr_rdev_send_wr *wr;
	uint32_t seq;

	if (unlikely(c->sq.nwrs == XPRT_WR_BATCH))
		xprt_sq_flush(c);
	seq = c->sq.tail++;
	if (owner != NULL) {
		c->sq.ent[seq & c->sq.mask].creq = owner;
		c->sq.nown++;
	}
	signal |= (seq & c->sq.sig_mask) == c->sq.sig_mask;
	wr = &c->sq.wrs[c->sq.nwrs++];
	wr->wr_id = ((uint64_t)seq << 1) | XPRT_WRID_SQ;
	wr->sg_list = NULL;
	wr->num_sge = 0;
	wr->opcode = bind != NULL ? RPCR_RDEV_WR_BIND_MW : RPCR_RDEV_WR_LOCAL_INV;
	wr->flags = signal ? RPCR_RDEV_WR_F_SIGNALED : 0;
	wr->bind = bind;
	wr->invalidate_rkey = inv_rkey;
	xprt_mark_dirty(c);
}
