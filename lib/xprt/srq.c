/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A poller's shared receive queue (rpcr_xprt_poller_conf::srq_recvs; doc/xprt.md "Shared receive
 * queue"): the receives of its servers' connections, posted once for all of them, and the credits
 * those connections are granted from its state. Nothing else writes struct xprt_srq or a
 * connection's srq_* fields.
 *
 * Receives, in the order of a poll:
 *   1. a receive completion on a connection of the SRQ reaches xprt_recv_take(), which hands it
 *      here (xprt_srq_take(): counted, its buffer the connection's message); one whose QP is
 *      gone (the driver reports it with no QP) comes to xprt_srq_orphan() from the poll loop;
 *   2. the buffer goes back to the poller's kept buffers or the pool, as a sent message's does
 *      (never to a slot: an SRQ has no slot per connection);
 *   3. step 4 of the poll (xprt_srq_replenish()) posts buffers until @target are posted: the
 *      poller's kept ones first (those its calls and replies gave back), then new ones.
 *
 * Credits (RFC 8166 section 3.3: a requester has at most as many calls outstanding as the last
 * grant it took allows, and a grant is never 0). Receives are never short if every Send the
 * clients may have on the wire finds one: since each poll refills the SRQ to @target, that holds
 * while the grants the clients may act on add up to @target at most, for a client's calls on the
 * wire are at most its grant less the calls the server holds. So each connection reserves
 * @srq_hi credits out of the SRQ's @budget, at least any grant its client may act on:
 *   - raising a grant reserves more first, out of what the budget has left once a credit is
 *     kept for every connection its servers may still accept (their max_conns): a new
 *     connection always finds its first one (where the budget is at least their max_conns;
 *     else one beyond the budget is refused); when that is tight, three quarters used, no
 *     connection grows beyond an equal share;
 *   - lowering one releases the difference only once the client has provably taken that reply:
 *     before it has, it can have sent at most (replies sent before it) + srq_hi calls, so the call
 *     numbered calls_in + srq_hi, counted when the lowered reply went, proves it (srq_pend_at).
 * A connection starts with 1 reserved (the client's first grant, RFC 8166); a reverse-direction
 * client adds its calls' replies (srq_extra).
 *
 * A client's connections may take their receives from their poller's queue too
 * (rpcr_clnt_conf::srq; xprt_srq_clnt_attach()): such a connection grants nothing, and reserves
 * at connect, for as long as it lives, a receive for each message its server may send it.
 */

#include <rte_malloc.h>

#include "xprt_internal.h"

/* What the grants work from, after a change of the budget or of the connections, present or
 * to come (not at every grant: a division). */
static void
srq_limits(struct xprt_srq *q)
{
	uint32_t keep = q->max_conns > q->nconns ? q->max_conns - q->nconns : 0;

	q->cap = q->budget > keep ? q->budget - keep : 0;
	q->loose = q->cap - q->cap / 4;
	q->share = RTE_MAX((q->cap + q->nconns - 1) / RTE_MAX(q->nconns, 1u), 1u);
}

/* Receives kept for messages that take no credit (a version-2 CONNPROP, ...): never granted. */
#define SRQ_MARGIN XPRT_RECV_BATCH

int
xprt_srq_init(struct rpcr_xprt_poller *p, const struct rpcr_xprt_poller_conf *conf)
{
	struct xprt_srq *q = &p->srq;
	struct rpcr_rdev_srq_attr a;
	uint32_t i;

	if (conf->srq_recvs == 0)
		return 0;
	if (!(p->info.caps & RPCR_RDEV_CAP_SRQ)) {
		XPRT_LOG(NOTICE,
			 "%s: the device has no shared receive queues: each connection posts its "
			 "own receives",
			 p->name);
		return 0;
	}
	if (conf->srq_recvs <= 2 * SRQ_MARGIN || conf->srq_recvs > p->info.max_srq_wr) {
		XPRT_LOG(ERR, "%s: srq_recvs %u: more than %u and at most %u", p->name,
			 conf->srq_recvs, 2 * SRQ_MARGIN, p->info.max_srq_wr);
		return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	a.max_wr = conf->srq_recvs;
	a.max_sge = 1;
	q->bufs = rte_zmalloc("rpcr_srq", sizeof(*q->bufs) * conf->srq_recvs, 0);
	q->free_idx = rte_malloc("rpcr_srq", sizeof(*q->free_idx) * conf->srq_recvs, 0);
	if (q->bufs == NULL || q->free_idx == NULL) {
		rte_free(q->bufs);
		rte_free(q->free_idx);
		return -ENOMEM;
	}
	for (i = 0; i < conf->srq_recvs; i++)
		q->free_idx[i] = conf->srq_recvs - 1 - i;
	q->nfree = conf->srq_recvs;
	q->srq = rpcr_rdev_srq_create(p->pd, &a);
	if (q->srq == NULL) {
		rte_free(q->bufs);
		rte_free(q->free_idx);
		return -rte_errno;
	}
	q->target = conf->srq_recvs;
	q->budget = conf->srq_recvs - SRQ_MARGIN;
	srq_limits(q);
	q->low = RTE_MAX(conf->srq_recvs / 8, 1u);
	for (i = 0; i < RTE_DIM(q->wr); i++) {
		q->sge[i].length = XPRT_BUF_DATA;
		q->wr[i].sg_list = &q->sge[i];
		q->wr[i].num_sge = 1;
	}
	return 0;
}

void
xprt_srq_fini(struct rpcr_xprt_poller *p)
{
	struct xprt_srq *q = &p->srq;
	struct rpcr_rdev_wc wc[32];
	uint32_t n, i;

	if (q->srq == NULL)
		return;
	/* Every QP is gone: what is left in the CQ are receives of QPs destroyed with them. */
	while ((n = rpcr_rdev_poll_cq(p->cq, wc, RTE_DIM(wc))) != 0)
		for (i = 0; i < n; i++)
			if (wc[i].qp == NULL)
				xprt_srq_orphan(p, &wc[i]);
	if (rpcr_rdev_srq_destroy(q->srq) != 0)
		XPRT_LOG(ERR, "%s: shared receive queue not destroyed", p->name);
	/* Its receives are dropped: their buffers back to the pool. */
	for (i = 0; i < q->target; i++)
		if (q->bufs[i] != NULL)
			rte_pktmbuf_free(q->bufs[i]);
	q->posted = 0;
	rte_free(q->bufs);
	rte_free(q->free_idx);
	q->srq = NULL;
}

void
xprt_srq_replenish(struct rpcr_xprt_poller *p)
{
	struct xprt_srq *q = &p->srq;

	while (q->posted < q->target) {
		uint32_t want = RTE_MIN(q->target - q->posted, (uint32_t)RTE_DIM(q->wr)), n, i;
		uint16_t done;

		for (n = 0; n < want; n++) {
			/* (The poller's kept buffers first: its connections' calls' and replies'.) */
			struct rte_mbuf *m = xprt_poller_buf_get(p);

			if (unlikely(m == NULL))
				break;
			q->sge[n].addr = rte_pktmbuf_mtod(m, uintptr_t);
			q->sge[n].lkey = rpcr_chunk_lkey(m);
			q->wr[n].wr_id = (uint64_t)(uintptr_t)m;
		}
		done = n != 0 ? rpcr_rdev_post_srq_recv(q->srq, q->wr, (uint16_t)n) : 0;
		for (i = 0; i < done; i++) {
			struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)q->wr[i].wr_id;
			uint32_t idx = q->free_idx[--q->nfree];

			q->bufs[idx] = m;
			m->hash.usr = idx;
		}
		for (; n > done; n--)
			rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)q->wr[n - 1].wr_id);
		q->posted += done;
		if (done < want) {
			/* No buffer (the pool is short): what the budget promised may not be
			 * there; said once a shortage. */
			if (!q->short_said)
				XPRT_LOG(WARNING,
					 "%s: shared receive queue: %u of %u receives posted (%s)",
					 p->name, q->posted, q->target,
					 done < n ? rte_strerror(rte_errno) : "no message buffer");
			q->short_said = true;
			return;
		}
	}
	q->short_said = false;
	if (unlikely(!q->armed)) {
		/* Full again: the low-water mark (the device's limit event) is armed once more. */
		q->armed = rpcr_rdev_srq_arm(q->srq, q->low) == 0;
	}
}

void
xprt_srq_low(struct rpcr_xprt_poller *p)
{
	struct xprt_srq *q = &p->srq;

	q->armed = false;
	p->stats.srq_low++;
	XPRT_LOG(WARNING,
		 "%s: shared receive queue below %u receives (%u posted of %u, %u credits "
		 "reserved)",
		 p->name, q->low, q->posted, q->target, q->reserved);
}

/* Buffer @m's receive completed: no longer posted. */
static inline void
srq_unpost(struct xprt_srq *q, struct rte_mbuf *m)
{
	uint32_t idx = m->hash.usr;

	q->posted--;
	if (likely(idx < q->target && q->bufs[idx] == m)) {
		q->bufs[idx] = NULL;
		q->free_idx[q->nfree++] = idx;
	}
}

struct rte_mbuf *
xprt_srq_take(struct xprt_conn *c, const struct rpcr_rdev_wc *wc)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)wc->wr_id;
	struct rpcr_xprt_poller *p = c->p;

	srq_unpost(&p->srq, m);
	if (unlikely(wc->status != RPCR_RDEV_WC_SUCCESS || c->state >= XPRT_CONN_CLOSING)) {
		if (wc->status != RPCR_RDEV_WC_SUCCESS && wc->status != RPCR_RDEV_WC_WR_FLUSH_ERR) {
			p->stats.wc_errors++;
			XPRT_LOG(ERR, "%s: conn %" PRIu64 ": receive: %s", p->name, c->id,
				 rpcr_rdev_wc_status_str(wc->status));
		}
		rte_pktmbuf_free(m);
		if (wc->status != RPCR_RDEV_WC_SUCCESS)
			xprt_conn_fail(c, rpcr_rdev_wc_status_str(wc->status));
		return NULL;
	}
	/* (Its data_off is what it was when posted.) */
	m->data_len = (uint16_t)wc->byte_len;
	m->pkt_len = wc->byte_len;
	p->stats.bytes_recv += wc->byte_len;
	c->msgs_in++;
	c->bytes_in += wc->byte_len;
	return m;
}

void
xprt_srq_orphan(struct rpcr_xprt_poller *p, const struct rpcr_rdev_wc *wc)
{
	if (wc->opcode != RPCR_RDEV_WC_RECV || p->srq.srq == NULL) {
		XPRT_LOG(ERR, "%s: a completion with no QP (opcode %u)", p->name, wc->opcode);
		return;
	}
	srq_unpost(&p->srq, (struct rte_mbuf *)(uintptr_t)wc->wr_id);
	rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)wc->wr_id);
}

/* ---- credits ---- */

int
xprt_srq_conn_attach(struct xprt_conn *c, uint32_t extra)
{
	struct xprt_srq *q = &c->p->srq;

	if (q->reserved + 1 + extra > q->budget)
		return -ENOSPC;
	c->srq = true;
	c->srq_hi = 1;
	c->srq_extra = extra;
	q->reserved += 1 + extra;
	q->nconns++;
	srq_limits(q);
	return 0;
}

/* Room for a client's connection of @need receives (xprt_srq_clnt_attach()), asked before its
 * QP is made. */
bool
xprt_srq_clnt_room(const struct rpcr_xprt_poller *p, uint32_t need)
{
	const struct xprt_srq *q = &p->srq;

	return q->srq != NULL && q->reserved + need <= q->cap;
}

/*
 * A client's connection on the queue (rpcr_clnt_conf::srq): it grants nothing, so it reserves
 * for good a receive for everything its server may send it (@need: a reply to each call it can
 * have out, its server's calls, continued replies), out of what the budget has left once every
 * connection its servers may still accept has its first credit (@cap). It counts in no server
 * connection's share.
 */

int
xprt_srq_clnt_attach(struct xprt_conn *c, uint32_t need)
{
	struct xprt_srq *q = &c->p->srq;

	if (q->srq == NULL)
		return -ENOTSUP;
	if (!xprt_srq_clnt_room(c->p, need))
		return -ENOSPC;
	c->srq = true;
	c->srq_clnt = true;
	c->srq_hi = 0;
	c->srq_extra = need;
	q->reserved += need;
	srq_limits(q);
	return 0;
}

void
xprt_srq_conn_detach(struct xprt_conn *c)
{
	struct xprt_srq *q = &c->p->srq;

	if (!c->srq)
		return;
	q->reserved -= c->srq_hi + c->srq_extra;
	if (!c->srq_clnt)
		q->nconns--;
	srq_limits(q);
	c->srq_clnt = false;
	c->srq_hi = 0;
	c->srq_extra = 0;
	c->srq_pend = false;
}

void
xprt_srq_svc_add(struct rpcr_xprt_poller *p, int32_t max_conns)
{
	struct xprt_srq *q = &p->srq;

	if (q->srq == NULL)
		return;
	q->max_conns = (uint32_t)((int32_t)q->max_conns + max_conns);
	srq_limits(q);
	if (max_conns > 0 && q->max_conns > q->budget)
		XPRT_LOG(NOTICE,
			 "%s: its servers take %u connections, its shared receive queue grants %u "
			 "credits: connections beyond %u are refused, and none is granted more "
			 "than 1",
			 p->name, q->max_conns, q->budget, q->budget);
}

void
xprt_srq_reserve_extra(struct xprt_conn *c, uint32_t n)
{
	/* (Taken whatever the budget: the margin is for such receives.) */
	c->srq_extra += n;
	c->p->srq.reserved += n;
}

uint32_t
xprt_srq_grant(struct xprt_conn *c, uint32_t asked)
{
	struct xprt_srq *q = &c->p->srq;
	uint32_t want = RTE_MAX(RTE_MIN(asked, c->rsp_credits), 1u);
	const uint32_t cap = q->cap, loose = q->loose, share = q->share;

	/* A lowering the client has provably taken: its reservation comes back. */
	if (c->srq_pend && (int32_t)(c->calls_in - c->srq_pend_at) >= 0) {
		q->reserved -= c->srq_hi - c->srq_pend_to;
		c->srq_hi = c->srq_pend_to;
		c->srq_pend = false;
	}
	/* Tight: nobody grows beyond an equal share (and those above it come down to it). */
	if (q->reserved > loose)
		want = RTE_MIN(want, share);
	if (want >= c->srq_hi) {
		/* Up to the equal share wherever the budget has room; beyond it only while all
		 * together stay within three quarters of cap. (Growing beyond it into the last
		 * quarter, a connection came down again, gave its credits back and, answered most
		 * often, took them all again before the others grew: bench_scale's 4 x 250 kept
		 * one connection at the equal share and three at 1 credit.) */
		uint32_t more =
			c->srq_hi < RTE_MIN(want, share) ? RTE_MIN(want, share) - c->srq_hi : 0;

		if (c->srq_hi + more < want)
			more += RTE_MIN(want - c->srq_hi - more,
					loose - RTE_MIN(q->reserved + more, loose));
		more = RTE_MIN(more, cap - RTE_MIN(q->reserved, cap));
		c->srq_hi += more;
		q->reserved += more;
		c->srq_pend = false; /* (what it grants now is all its reservation) */
		return c->srq_hi;
	}
	if (!c->srq_pend) {
		c->srq_pend = true;
		c->srq_pend_to = want;
		c->srq_pend_at = c->calls_in + c->srq_hi;
	} else {
		/* Every grant sent since the first lowered one may be acted on, the highest too. */
		c->srq_pend_to = RTE_MAX(c->srq_pend_to, want);
	}
	return want;
}
