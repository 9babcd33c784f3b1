/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_SQ_H
#define XPRT_SQ_H

/*
 * A connection's send queue (struct xprt_sq in xprt_internal.h), and the only code that reads or
 * writes it: sq.c and the inline helpers below.
 *
 * Every WR (Send, RDMA Write, RDMA Read) takes the next sequence number and an entry naming its
 * owner: what to release when it has completed (a message buffer, a held chain) or who waits for
 * it (a request whose RDMA Reads are done). An entry that owns nothing stays empty; so does an
 * inline Send's, whose buffer the poll gives back after its doorbells (xprt_send1_post()). One
 * WR in XPRT_SIG_EVERY is signalled (in XPRT_SIG_SRQ on a server connection of the shared
 * receive queue while an entry owns something: xprt_sq_own()), plus those somebody waits for;
 * a signalled completion completes every WR up to its own, in order (xprt_sq_complete()). A
 * buffer whose owner keeps it while its Send may still be read can be handed to the send queue
 * later (xprt_sq_adopt()). WRs gathered during a poll are posted together, one doorbell per
 * connection (xprt_sq_flush()).
 *
 * The WRs and gather entries being gathered are in the poller's batch, not the connection's
 * (so that a call over one of many connections writes lines the previous call wrote, and a
 * connection holds none of it between doorbells): each connection's in one piece, at most
 * XPRT_WR_BATCH WRs and XPRT_SGE_BATCH entries as before. A piece starts at most at
 * XPRT_POLL_WRS and XPRT_POLL_SGES, and the batch has room beyond them for it to grow to its
 * connection's own limit, which is all the straight-line paths check. Only the last piece
 * grows: a connection that stages again after another did has its piece moved up first (its
 * WRs' gather lists rebased), which the straight-line paths never need (a connection's messages
 * of a poll come in a row). A connection's own limit reached, its piece is posted (as before);
 * the poller's batch full (the next piece would start beyond XPRT_POLL_WRS or XPRT_POLL_SGES),
 * every piece is posted (sq.c's xprt_sq_flush_all()). A piece is never posted early
 * otherwise: the receives a reply's grant promises are replenished first (the
 * poller's step 4). A posted piece that was the last stays the last, empty (a connection's
 * next WRs go on from there with no more bookkeeping); once every piece is posted (the end of
 * the poller's step 5), the batch starts again from the bottom: every connection with WRs
 * staged is on the poller's dirty list, so that no count of the WRs staged is kept.
 */

/*
 * Room for @p nw more WRs. Local invalidations of windows (xprt_sq_post_reg()) are posted
 * without looking: the queue has XPRT_MW_MAX entries beyond XPRT_SQ_DEPTH for them. (While the
 * queue is at XPRT_SQ_DEPTH or more, nothing else is posted, so no window is bound anew, and
 * only the windows bound then, at most XPRT_MW_MAX, can be invalidated.)
 */
static __rte_always_inline bool
xprt_sq_room(const struct xprt_conn *c, uint32_t nw)
{
	return c->sq.tail - c->sq.head < XPRT_SQ_DEPTH - nw;
}

/* WR @p seq is signalled by rule (sig_mask: one in XPRT_SIG_EVERY, or XPRT_SIG_SRQ, see
 * xprt_sq_own()). */
static __rte_always_inline bool
xprt_sq_sig(const struct xprt_conn *c, uint32_t seq)
{
	return (seq & c->sq.sig_mask) == c->sq.sig_mask;
}

/*
 * One more entry owns something. A server connection of the shared receive queue then signals
 * one WR in XPRT_SIG_SRQ until none does (xprt_sq_complete()): what its unsignalled Sends hold
 * is out of the pool the queue is refilled from, at every connection at once. Sends that hold
 * nothing (inline replies, buffers their owners keep) need no completion soon: one in
 * XPRT_SIG_EVERY, as on other connections.
 */
static __rte_always_inline void
xprt_sq_own(struct xprt_conn *c)
{
	if (c->sq.nown++ == 0 && c->srq)
		c->sq.sig_mask = XPRT_SIG_SRQ - 1;
}

/* The WR numbered @p seq has completed (or is older than anything the queue remembers). */
static __rte_always_inline bool
xprt_sq_done(const struct xprt_conn *c, uint32_t seq)
{
	return seq - c->sq.head >= c->sq.tail - c->sq.head;
}

/* The sequence number of the WR queued last. */
static __rte_always_inline uint32_t
xprt_sq_last(const struct xprt_conn *c)
{
	return c->sq.tail - 1;
}

/* @p c's WRs staged, and their gather entries (in the poller's batch). */
static __rte_always_inline struct rpcr_rdev_send_wr *
xprt_sq_wrs(const struct xprt_conn *c)
{
	return c->sq.wrs;
}

static __rte_always_inline struct rpcr_rdev_sge *
xprt_sq_sges(const struct xprt_conn *c)
{
	return c->sq.sges;
}

/* Room for @p nw more WRs with @p ns gather entries in @p c's piece, it being the last (after
 * xprt_sq_reserve() or xprt_sq_plan_init()): its own limit. */
static __rte_always_inline bool
xprt_sq_batch_room(const struct xprt_conn *c, uint32_t nw, uint32_t ns)
{
	return c->sq.nwrs + nw <= XPRT_WR_BATCH && c->sq.nsges + ns <= XPRT_SGE_BATCH;
}

/* @p c has no WRs staged. */
static __rte_always_inline bool
xprt_sq_none_staged(const struct xprt_conn *c)
{
	return c->sq.nwrs == 0;
}

int xprt_sq_init(struct xprt_conn *c);
void xprt_sq_free(struct xprt_conn *c);
void xprt_sq_abort(struct xprt_conn *c);
void xprt_sq_flush(struct xprt_conn *c);
void xprt_sq_reserve_slow(struct xprt_conn *c, uint32_t nw, uint32_t ns);

/*
 * Every piece has been posted (the poller's doorbells, or xprt_sq_flush_all()): the batch
 * starts again from the bottom, so that the next poll's WRs are written where this one's were.
 * The last piece stays the last, moved down, empty.
 */
static __rte_always_inline void
xprt_sq_batch_reset(struct rpcr_xprt_poller *p)
{
	struct xprt_conn *t = p->sq_tail;

	if (t != NULL) {
		t->sq.wrs = p->sq_wrs;
		t->sq.sges = p->sq_sges;
	}
	p->sq_wbase = p->sq_wrs;
	p->sq_sbase = p->sq_sges;
}

/* Make @p c's piece the last of the batch with room for @p nw more WRs and @p ns entries
 * (posting what must go first to make it). */
static __rte_always_inline void
xprt_sq_reserve(struct xprt_conn *c, uint32_t nw, uint32_t ns)
{
	struct rpcr_xprt_poller *p = c->p;

	if (likely(p->sq_tail == c)) {
		if (likely(xprt_sq_batch_room(c, nw, ns)))
			return;
	} else if (likely(c->sq.nwrs == 0)) {
		/* Its first WR since its last doorbell (a call over one of many connections):
		 * its piece starts where the last one ends. */
		const struct xprt_conn *t = p->sq_tail;
		struct rpcr_rdev_send_wr *bw = t != NULL ? t->sq.wrs + t->sq.nwrs : p->sq_wbase;
		struct rpcr_rdev_sge *bs = t != NULL ? t->sq.sges + t->sq.nsges : p->sq_sbase;

		if (likely(bw <= p->sq_wrs + XPRT_POLL_WRS && bs <= p->sq_sges + XPRT_POLL_SGES)) {
			c->sq.wrs = bw;
			c->sq.sges = bs;
			c->sq.nsges = 0;
			p->sq_tail = c;
			return;
		}
	}
	xprt_sq_reserve_slow(c, nw, ns);
}
void xprt_sq_complete(struct xprt_conn *c, uint32_t seq, bool ok);
void xprt_sq_plan_init(struct xprt_conn *c, struct rpcr_chunk_plan *plan, uint32_t nw, uint32_t ns);
void xprt_sq_commit(struct xprt_conn *c, uint32_t nw, uint32_t ns, struct rte_mbuf *m,
		    struct rpcr_svc_req *req, struct xprt_creq *creq, bool signal);
bool xprt_sq_adopt(struct xprt_conn *c, uint32_t seq, struct rte_mbuf *m);
/* Stage a window's bind (@p bind) or a local invalidation of @p inv_rkey, reporting to @p owner
 * (may be NULL) and signalled when @p signal. A bind: the caller saw room; an invalidation
 * needs none (see xprt_sq_room()). */
void xprt_sq_post_reg(struct xprt_conn *c, const struct rpcr_rdev_mw_bind *bind, uint32_t inv_rkey,
		      struct xprt_creq *owner, bool signal);

/*
 * Queue a Send of message buffer @p m, released when done unless @p keep (its owner knows when
 * the device is done with it); Send with Invalidate of @p inv_rkey when not 0. The caller saw
 * room in the send queue (xprt_send1() looks). @return the WR's send-queue sequence number.
 */
static __rte_always_inline uint32_t
xprt_send1_post(struct xprt_conn *c, struct rte_mbuf *m, bool keep, uint32_t inv_rkey, bool signal)
{
	struct rpcr_rdev_send_wr *wr;
	struct rpcr_rdev_sge *sge;
	struct xprt_sq_ent *e;
	uint32_t seq;

	xprt_sq_reserve(c, 1, 1);
	sge = &xprt_sq_sges(c)[c->sq.nsges++];
	sge->addr = rte_pktmbuf_mtod(m, uintptr_t);
	sge->length = m->data_len;
	sge->lkey = rpcr_chunk_lkey(m);
	seq = c->sq.tail++;
	/* (An entry that releases nothing is left as it is: empty.) */
	if (!keep) {
		struct rpcr_xprt_poller *p = c->p;

		/* A Send the device copies when it is posted (inline: a server connection of the
		 * shared receive queue, xprt_conn::inline_free) holds its buffer only until the
		 * poll's doorbells (xprt_poller_sent()). */
		if (c->srq && m->data_len <= c->inline_free && p->nsent < XPRT_POLL_SENT) {
			p->sent[p->nsent++] = m;
		} else {
			e = &c->sq.ent[seq & XPRT_SQ_MASK];
			e->m = m;
			xprt_sq_own(c);
		}
	}
	signal |= xprt_sq_sig(c, seq);
	wr = &xprt_sq_wrs(c)[c->sq.nwrs++];
	wr->wr_id = ((uint64_t)seq << 1) | XPRT_WRID_SQ;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = inv_rkey != 0 ? RPCR_RDEV_WR_SEND_INV : RPCR_RDEV_WR_SEND;
	wr->flags = signal ? RPCR_RDEV_WR_F_SIGNALED : 0;
	wr->invalidate_rkey = inv_rkey;
	xprt_count_out(c, 1, m->data_len);
	xprt_mark_dirty(c);
	return seq;
}

/*
 * Queue a Send of two gather entries, @p hlen bytes at @p h then @p dlen at @p d (none when 0),
 * with their keys; @p own (or NULL) released when done; Send with Invalidate of @p inv_rkey when
 * not 0. The caller saw room in the send queue. (A continued message's parts: cont.c.)
 */
static inline uint32_t
xprt_send2_post(struct xprt_conn *c, const void *h, uint32_t hlen, uint32_t hlkey, const void *d,
		uint32_t dlen, uint32_t dlkey, struct rte_mbuf *own, uint32_t inv_rkey)
{
	struct rpcr_rdev_send_wr *wr;
	struct rpcr_rdev_sge *sge;
	uint32_t seq, ns = dlen != 0 ? 2 : 1;

	xprt_sq_reserve(c, 1, 2);
	sge = &xprt_sq_sges(c)[c->sq.nsges];
	sge[0].addr = (uintptr_t)h;
	sge[0].length = hlen;
	sge[0].lkey = hlkey;
	sge[1].addr = (uintptr_t)d;
	sge[1].length = dlen;
	sge[1].lkey = dlkey;
	c->sq.nsges += ns;
	seq = c->sq.tail++;
	if (own != NULL) {
		c->sq.ent[seq & XPRT_SQ_MASK].m = own;
		xprt_sq_own(c);
	}
	wr = &xprt_sq_wrs(c)[c->sq.nwrs++];
	wr->wr_id = ((uint64_t)seq << 1) | XPRT_WRID_SQ;
	wr->sg_list = sge;
	wr->num_sge = (uint16_t)ns;
	wr->opcode = inv_rkey != 0 ? RPCR_RDEV_WR_SEND_INV : RPCR_RDEV_WR_SEND;
	wr->flags = xprt_sq_sig(c, seq) ? RPCR_RDEV_WR_F_SIGNALED : 0;
	wr->invalidate_rkey = inv_rkey;
	xprt_count_out(c, 1, hlen + dlen);
	xprt_mark_dirty(c);
	return seq;
}

/* Queue a Send of message buffer @p m, released when done (see xprt_send1_post()). */
static __rte_always_inline void
xprt_send1_room(struct xprt_conn *c, struct rte_mbuf *m, uint32_t inv_rkey, bool signal)
{
	xprt_send1_post(c, m, false, inv_rkey, signal);
}

static inline int
xprt_send1(struct xprt_conn *c, struct rte_mbuf *m, uint32_t inv_rkey, bool signal)
{
	if (unlikely(!xprt_sq_room(c, 1)))
		return -EAGAIN;
	xprt_send1_room(c, m, inv_rkey, signal);
	return 0;
}

#endif /* XPRT_SQ_H */
