/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The send queue of a connection: see sq.h. Flushing posts the WRs gathered this poll with one
 * doorbell (a post that fails fails the connection: room was checked); completing walks the
 * entries up to a signalled WR's and releases or reports what each owns; committing stages
 * planned RDMA Reads and Writes, the last of them carrying the owner.
 */

#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

/* Allocate @c's send queue (empty). @return 0 or -ENOMEM (xprt_sq_free() gives back any part). */
int
xprt_sq_init(struct xprt_conn *c)
{
	RTE_BUILD_BUG_ON(XPRT_SQ_RING < XPRT_SQ_DEPTH + XPRT_MW_MAX ||
			 !RTE_IS_POWER_OF_2(XPRT_SQ_RING) || XPRT_SQ_RING > 65536 ||
			 XPRT_WR_BATCH > UINT16_MAX || XPRT_SGE_BATCH > UINT16_MAX);
	c->sq.ent = rte_zmalloc("rpcr_xprt", sizeof(*c->sq.ent) * XPRT_SQ_RING, 0);
	c->sq.sig_mask = XPRT_SIG_EVERY - 1;
	return c->sq.ent != NULL ? 0 : -ENOMEM;
}

/*
 * @c's staged WRs leave the batch (posted or forgotten). The last piece stays the last, empty,
 * where it was: the next WRs of the same connection go on from there, another connection's
 * after it. A connection that goes (@gone) leaves the batch altogether: the next piece starts
 * where its own did.
 */
static inline void
sq_piece_drop(struct xprt_conn *c, bool gone)
{
	struct rpcr_xprt_poller *p = c->p;

	c->sq.nwrs = 0;
	c->sq.nsges = 0;
	if (unlikely(gone) && p->sq_tail == c) {
		p->sq_wbase = c->sq.wrs;
		p->sq_sbase = c->sq.sges;
		p->sq_tail = NULL;
	}
}

void
xprt_sq_free(struct xprt_conn *c)
{
	if (c->p != NULL)
		sq_piece_drop(c, true);
	rte_free(c->sq.ent);
	c->sq.ent = NULL;
}

/* The QP is gone: WRs staged and not posted are forgotten, and every entry completes, failed
 * (releasing what it owns, telling who waits). */
void
xprt_sq_abort(struct xprt_conn *c)
{
	sq_piece_drop(c, true);
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
		done = rpcr_rdev_post_send(c->qp, xprt_sq_wrs(c), (uint16_t)c->sq.nwrs);
		c->p->stats.doorbells++;
		if (unlikely(done != c->sq.nwrs)) {
			/* Room was checked: the QP has failed. Its entries are released at teardown. */
			XPRT_LOG(ERR, "%s: conn %" PRIu64 ": %u of %u WRs posted: %s", c->p->name,
				 c->id, done, c->sq.nwrs, rte_strerror(rte_errno));
			xprt_conn_fail(c, "post_send failed");
		}
	}
	sq_piece_drop(c, false);
}

/* Post every piece of @p's batch: those of the connections on its dirty list, which has every
 * connection that staged a WR since the poller's last doorbells (xprt_mark_dirty()); the batch
 * then starts again from the bottom. Rare: the batch holds more than a poll's WRs. */
static void
xprt_sq_flush_all(struct rpcr_xprt_poller *p)
{
	uint32_t i;

	for (i = 0; i < p->ndirty; i++)
		xprt_sq_flush(p->dirty[i]);
	xprt_sq_batch_reset(p);
}

/*
 * Make @c's piece the last, with room for @nw more WRs and @ns entries: its own limit reached,
 * it is posted (as each connection's batch was); not the last, it moves up (its WRs' gather
 * lists rebased); the batch full, every piece is posted.
 */
void
xprt_sq_reserve_slow(struct xprt_conn *c, uint32_t nw, uint32_t ns)
{
	struct rpcr_xprt_poller *p = c->p;
	const struct xprt_conn *t;
	struct rpcr_rdev_send_wr *bw;
	struct rpcr_rdev_sge *bs;
	uint32_t i;

	if (c->sq.nwrs + nw > XPRT_WR_BATCH || c->sq.nsges + ns > XPRT_SGE_BATCH)
		xprt_sq_flush(c);
	if (p->sq_tail != c) {
		t = p->sq_tail;
		bw = t != NULL ? t->sq.wrs + t->sq.nwrs : p->sq_wbase;
		bs = t != NULL ? t->sq.sges + t->sq.nsges : p->sq_sbase;
		if (bw > p->sq_wrs + XPRT_POLL_WRS || bs > p->sq_sges + XPRT_POLL_SGES) {
			/* (c's own staged WRs too: c is on the dirty list when it has any.) */
			xprt_sq_flush_all(p);
			bw = p->sq_wbase;
			bs = p->sq_sbase;
		}
		if (c->sq.nwrs != 0) {
			struct rpcr_rdev_send_wr *from = xprt_sq_wrs(c), *to = bw;
			struct rpcr_rdev_sge *sfrom = xprt_sq_sges(c), *sto = bs;

			/* (Moving up: the two pieces do not overlap.) */
			memcpy(to, from, sizeof(*to) * c->sq.nwrs);
			memcpy(sto, sfrom, sizeof(*sto) * c->sq.nsges);
			for (i = 0; i < c->sq.nwrs; i++)
				if (to[i].sg_list >= sfrom && to[i].sg_list < sfrom + c->sq.nsges)
					to[i].sg_list = sto + (to[i].sg_list - sfrom);
		}
		c->sq.wrs = bw;
		c->sq.sges = bs;
		p->sq_tail = c;
	}
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
		struct xprt_sq_ent *e = &c->sq.ent[c->sq.head++ & XPRT_SQ_MASK];
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
	if (c->sq.nown == 0)
		c->sq.sig_mask = XPRT_SIG_EVERY - 1; /* (xprt_sq_own()) */
}

/* A plan writing into the connection's piece of the batch after @nw WRs and @ns entries
 * already staged (planned, not committed: the piece is the last already when they are). */
void
xprt_sq_plan_init(struct xprt_conn *c, struct rpcr_chunk_plan *plan, uint32_t nw, uint32_t ns)
{
	if (c->p->sq_tail != c)
		xprt_sq_reserve_slow(c, nw, ns);
	plan->wrs = &xprt_sq_wrs(c)[c->sq.nwrs + nw];
	plan->max_wrs = XPRT_WR_BATCH - c->sq.nwrs - nw;
	plan->nwrs = 0;
	plan->sges = &xprt_sq_sges(c)[c->sq.nsges + ns];
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
		struct rpcr_rdev_send_wr *w = &xprt_sq_wrs(c)[c->sq.nwrs];
		bool last = i + 1 == nw;
		uint32_t seq = c->sq.tail++;
		struct xprt_sq_ent *e = &c->sq.ent[seq & XPRT_SQ_MASK];
		bool sig = last && signal;

		if (last && ((uintptr_t)m | (uintptr_t)req | (uintptr_t)creq) != 0) {
			e->m = m;
			e->req = req;
			e->creq = creq;
			xprt_sq_own(c);
		}
		sig |= xprt_sq_sig(c, seq);
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
	e = &c->sq.ent[seq & XPRT_SQ_MASK];
	if (e->m != NULL)
		return false;
	if (((uintptr_t)e->req | (uintptr_t)e->creq) == 0)
		xprt_sq_own(c);
	e->m = m;
	return true;
}

void
xprt_sq_post_reg(struct xprt_conn *c, const struct rpcr_rdev_mw_bind *bind, uint32_t inv_rkey,
		 struct xprt_creq *owner, bool signal)
{
	struct rpcr_rdev_send_wr *wr;
	uint32_t seq;

	xprt_sq_reserve(c, 1, 0);
	seq = c->sq.tail++;
	if (owner != NULL) {
		c->sq.ent[seq & XPRT_SQ_MASK].creq = owner;
		xprt_sq_own(c);
	}
	signal |= xprt_sq_sig(c, seq);
	wr = &xprt_sq_wrs(c)[c->sq.nwrs++];
	wr->wr_id = ((uint64_t)seq << 1) | XPRT_WRID_SQ;
	wr->sg_list = NULL;
	wr->num_sge = 0;
	wr->opcode = bind != NULL ? RPCR_RDEV_WR_BIND_MW : RPCR_RDEV_WR_LOCAL_INV;
	wr->flags = signal ? RPCR_RDEV_WR_F_SIGNALED : 0;
	wr->bind = bind;
	wr->invalidate_rkey = inv_rkey;
	xprt_mark_dirty(c);
}
