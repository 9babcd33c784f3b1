/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The receive demultiplexer: which role of its connection a received message is for.
 *
 * A connection carries a requester (calls out, replies in: xprt_conn::clnt) and a responder
 * (calls in, replies out: xprt_conn::svc); which of them is the forward direction is
 * xprt_conn::server's (RFC 8167 section 1.1). A receive goes, in order:
 *   1. through its connection's burst (xprt_vops::recv_burst: clnt.c's on a client's
 *      connection, svc.c's on a server's, one per version, their tests inline), which takes it
 *      from the receive queue (xprt_recv_take(); what it turns down ends in xprt_recv_bad()
 *      below) and tries the forward direction's straight-line path: the common reply, the
 *      common call (version 2's not while a client's first answer is out, nor for the last
 *      part of a refused continuation being discarded);
 *   2. still in the burst, a plain message of the reverse direction (RDMA_MSG, three empty
 *      chunk lists: all RFC 8167 sections 2.5 and 2.6 allow it), told by the version's
 *      direction test without decoding (xprt_v1_dir()), tries the reverse direction's
 *      straight-line path. What neither took comes here (xprt_recv_demux());
 *   3. the transport header is decoded once, through the connection's wire operations, into the
 *      poller's scratch header. One that cannot be decoded is the forward direction's: a
 *      server's connection answers it with the error the wire names, none when it is too short
 *      to trust (RFC 8166 section 4.5); a client's drops it (a requester discards a reply it
 *      cannot read, section 4.5; its responder cannot tell it from one);
 *   4. calls are told from replies by the RPC msg_type before any xid is looked up
 *      (xprt_msg_dir(); Linux's rpcrdma_is_bcall()): the directions' xid spaces are independent
 *      (RFC 8167 section 1.1.4.1). RDMA_ERROR answers a call (the requester's, where there is
 *      one: a server's connection with no requester answers it ERR_CHUNK, as it does any
 *      message that is no call); RDMA_DONE is a requester's word to a responder; what cannot be
 *      told (RDMA_NOMSG, its RPC message in a chunk) is the forward direction's;
 *   5. a message of the reverse direction must be plain (on version 2, RDMA2_MSG and
 *      RDMA2_NOMSG with chunks too: a call, whose responder answers an error where its client
 *      did not say BRS GENL, §4.5.4; a reply where it did, xprt_conn_rev_chunks()) and its
 *      role must exist, else it is refused: dropped, counted (bcalls_refused for a call,
 *      unmatched for a reply);
 *   6. a call goes to the responder (xprt_svc_recv_hdr(), which copies the header into its
 *      request), a reply to the requester (xprt_clnt_recv_hdr(), which reads it in place).
 * The requester and the responder never decode a transport header themselves, nor look at a
 * message of the other direction.
 */

#include "xprt_internal.h"

const struct xprt_vops *const xprt_vops_tab[XPRT_VOPS_NUM] = {
	[XPRT_VOPS_V1_CLNT] = &xprt_v1_clnt_ops, [XPRT_VOPS_V2_CLNT] = &xprt_v2_clnt_ops,
	[XPRT_VOPS_V1_SVC] = &xprt_v1_svc_ops,   [XPRT_VOPS_SVC_OPEN] = &xprt_svc_open_ops,
	[XPRT_VOPS_V2_SVC] = &xprt_v2_svc_ops,   [XPRT_VOPS_V2_SVC_AUTH] = &xprt_v2_svc_auth_ops,
};

/* A receive completion xprt_recv_take() turned down: out of order (the QP is not to be trusted),
 * failed, flushed, or on a connection closing. */
void
xprt_recv_bad(struct xprt_conn *c, const struct rpcr_rdev_wc *wc)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)wc->wr_id;
	struct rpcr_xprt_poller *p = c->p;

	if (c->rq_head == c->rq_tail || c->rq[c->rq_head & c->rq_mask] != m) {
		/* A receive we did not post, or out of order: nothing about this QP is safe. */
		XPRT_LOG(ERR, "%s: conn %" PRIu64 ": unexpected receive completion", p->name,
			 c->id);
		xprt_conn_fail(c, "receive completion out of order");
		return;
	}
	c->rq_head++;
	if (wc->status != RPCR_RDEV_WC_SUCCESS && wc->status != RPCR_RDEV_WC_WR_FLUSH_ERR) {
		p->stats.wc_errors++;
		XPRT_LOG(ERR, "%s: conn %" PRIu64 ": receive: %s", p->name, c->id,
			 rpcr_rdev_wc_status_str(wc->status));
	}
	xprt_buf_put(c, m);
	/* Flushed receives are how a close shows first (the peer's, or ours): a close, not an
	 * error. */
	if (wc->status == RPCR_RDEV_WC_WR_FLUSH_ERR)
		xprt_conn_fail(c, "closed (its receives flushed)");
	else if (wc->status != RPCR_RDEV_WC_SUCCESS)
		xprt_conn_fail(c, rpcr_rdev_wc_status_str(wc->status));
}

/* Step 3: a header that cannot be decoded (@rc); @h has its xid and version unless too short. */
static void
undecodable(struct xprt_conn *c, struct rte_mbuf *m, const struct xprt_hdr *h, ssize_t rc)
{
	uint32_t err = c->server ? c->wire->answer(rc) : XPRT_HERR_NONE;
	bool flags_read = rc != RPCR_PROTO_ESHORT && rc != RPCR_PROTO_EVERS;

	/* Version 2: a continuation's rules first (cont.c: the rest of a failed one goes
	 * unanswered, §7.1.3). */
	if (unlikely(c->wire->flag_dir) && flags_read)
		err = xprt_cont_undecodable(c, h, err);
	/* More chunks or segments than the decoder holds: a limit, not garbage. */
	if (rc == RPCR_PROTO_EREADS || rc == RPCR_PROTO_EWRITES || rc == RPCR_PROTO_ESEGS)
		c->p->stats.limit_chunks++;
	else
		c->p->stats.bad_headers++;
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": bad transport header (%u bytes): %s%s", c->p->name,
		 c->id, m->data_len, rpcr_proto_strerror((int)rc),
		 err == XPRT_HERR_NONE ? ", dropped" : "");
	if (err != XPRT_HERR_NONE)
		xprt_svc_send_error(c, h->xid, h->vers, err);
	xprt_buf_put(c, m);
}

/*
 * Step 3, version 2: what is the connection's rather than a role's, or not taken yet. In order:
 *   - message continuation (§4.4.2): a part with MORE, the next one of a message being
 *     reassembled, the rest of one being discarded (cont.c's xprt_cont_recv(); a message it
 *     reassembled whole goes on from there to its role);
 *   - TPMORE on any message but RDMA2_CONNPROP: INVAL_HTYPE, the message discarded (§6.2.2.3);
 *   - RDMA2_NOMSG with no chunk at all: a credit refresh or keep-alive (§6.3.2, §4.2.1.2),
 *     taken silently;
 *   - transport properties (RDMA2_CONNPROP): props.c's xprt_props_recv() applies them; one
 *     after the peer said it had sent them all (TPMORE clear) is INVAL_HTYPE (§6.2.2.3), a
 *     value not taken BAD_PROPVAL;
 *   - an optional operation (rpcr's carrier of the xcharext operations): xchar.c's, and an
 *     error report answering this side's INIT_XCHAR (INVAL_HTYPE: the peer takes none).
 * A requester answers nothing (RFC 8166 section 4.5's rule for what it cannot read). @return
 * true when the message was taken here.
 */
static bool
v2_control(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
	   const struct xprt_hdr *h, uint32_t hlen)
{
	uint32_t err = XPRT_HERR_NONE;
	bool respond = c->svc != NULL && !(h->flags & XPRT_HF_RESPONSE);

	if ((c->cont.active || (h->flags & XPRT_HF_MORE)) && xprt_cont_recv(c, m, wc, h, hlen))
		return true;
	if ((h->flags & XPRT_HF_TPMORE) && h->type != XPRT_HT_PROPS) {
		/* §6.2.2.3: TPMORE on anything but CONNPROP: INVAL_HTYPE, the message discarded. */
		if (respond)
			err = XPRT_HERR_HTYPE;
	} else if (h->type == XPRT_HT_NOMSG && rpcr_proto_chunks_empty(&h->chunks)) {
		/* (A credit refresh: nothing to do; its grant is read where replies are.) */
	} else if (h->type == XPRT_HT_PROPS) {
		err = xprt_props_recv(c, h, respond);
	} else if (h->type == XPRT_HT_OPTION) {
		err = xprt_xchar_recv(c, h, respond);
	} else if (h->type == XPRT_HT_ERROR && xprt_xchar_refused(c, h)) {
		/* (An error report answering our INIT_XCHAR: xchar.c's.) */
	} else {
		return false;
	}
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": version-2 message 0x%08x (type %u, flags 0x%x)%s",
		 c->p->name, c->id, h->xid, h->type, h->flags,
		 err != XPRT_HERR_NONE ? ", answered" : ", taken");
	if (err != XPRT_HERR_NONE)
		xprt_svc_send_error(c, h->xid, h->vers, err);
	xprt_buf_put(c, m);
	return true;
}

/* Step 4: RPCR_ONCRPC_CALL (for the responder) or RPCR_ONCRPC_REPLY (for the requester). */
static inline uint32_t
whose(const struct xprt_conn *c, const struct xprt_hdr *h, const uint8_t *rpc, uint32_t rpclen)
{
	uint32_t fwd = c->server ? RPCR_ONCRPC_CALL : RPCR_ONCRPC_REPLY;
	uint32_t d;

	/* Version 2: its RESPONSE flag says (an error report is a response). */
	if (c->wire->flag_dir)
		return (h->flags & XPRT_HF_RESPONSE) ? RPCR_ONCRPC_REPLY : RPCR_ONCRPC_CALL;
	switch (h->type) {
	case XPRT_HT_ERROR:
		return c->clnt != NULL ? RPCR_ONCRPC_REPLY : fwd;
	case XPRT_HT_DONE:
		return RPCR_ONCRPC_CALL;
	default:
		d = xprt_msg_dir(h, rpc, rpclen);
		return d == UINT32_MAX ? fwd : d;
	}
}

static void decoded(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		    const struct xprt_hdr *h, uint32_t n);

void
xprt_recv_demux(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc)
{
	struct xprt_hdr *h = &c->p->rx;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, short_ok = 0;
	ssize_t n;

	/* 3. Decoded once. The short messages taken: a requester's RDMA_ERROR, and the 2005
	 * draft's RDMA_DONE where it was negotiated. */
	if (c->clnt != NULL)
		short_ok |= XPRT_SHORT_OK(XPRT_HT_ERROR);
	if (c->svc != NULL && xprt_draft_has(c, XPRT_F_DONE))
		short_ok |= XPRT_SHORT_OK(XPRT_HT_DONE);
	/* (Version 2: a part of a continued RDMA2_CONNPROP carries a piece of a property list,
	 * read once whole: cont.c, then xprt_recv_props_whole().) */
	if (unlikely(c->wire->flag_dir) && xprt_cont_props_part(c, d, len, h)) {
		xprt_cont_recv(c, m, wc, h, RPCR_PROTO_V2_PREFIX);
		return;
	}
	n = c->wire->decode(h, d, len, short_ok);
	if (unlikely(n < 0)) {
		/* A client asking version 2 reads version 1's ERR_VERS too: how a server of
		 * version 1 alone answers (version 1's layout, version word 2). A version-2 message
		 * it cannot read otherwise (more properties than it holds, say) still says the
		 * server speaks version 2: the answer, the message dropped. */
		if (c->v2_negotiating) {
			ssize_t k = xprt_wire_v1_err_vers(h, d, len);

			if (k > 0) {
				xprt_clnt_recv_hdr(c, m, wc, h, (uint32_t)k);
				return;
			}
			if (n != RPCR_PROTO_ESHORT && n != RPCR_PROTO_EVERS)
				xprt_clnt_v2_answer(c, h->credit);
		}
		undecodable(c, m, h, n);
		return;
	}
	decoded(c, m, wc, h, (uint32_t)n);
}

void
xprt_recv_props_whole(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		      struct rte_mbuf *whole)
{
	struct xprt_hdr *h = &c->p->rx;
	ssize_t n =
		c->wire->decode(h, rte_pktmbuf_mtod(whole, const uint8_t *), whole->data_len, 0);

	if (n < 0)
		undecodable(c, m, h, n);
	else
		decoded(c, m, wc, h, (uint32_t)n);
	rte_pktmbuf_free(whole); /* (the properties read from it are applied by now) */
}

/* Step 3's rest, @m's header decoded into @h (@n bytes). */
static void
decoded(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
	const struct xprt_hdr *h, uint32_t n)
{
	/* A client asking version 2: any message of the server's in version 2 but an error
	 * (xprt_clnt_recv_hdr() reads those, a refusal among them) or a property set still open
	 * (TPMORE: its calls wait for the rest, which may change their limits) is its answer
	 * (§4.2.3.1). */
	if (unlikely(c->v2_negotiating) && h->type != XPRT_HT_ERROR &&
	    !(h->type == XPRT_HT_PROPS && (h->flags & XPRT_HF_TPMORE)))
		xprt_clnt_v2_answer(c, h->credit);
	/* Version 2's own (v2_control()). */
	if (unlikely(c->wire->flag_dir) &&
	    (h->type >= XPRT_HT_PROPS || (h->flags & (XPRT_HF_MORE | XPRT_HF_TPMORE)) ||
	     c->cont.active || h->type == XPRT_HT_NOMSG ||
	     (h->type == XPRT_HT_ERROR && c->xchar.init_out)) &&
	    v2_control(c, m, wc, h, n))
		return;
	xprt_recv_route(c, m, wc, h, n, NULL);
}

void
xprt_recv_route(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		const struct xprt_hdr *h, uint32_t hlen, struct rte_mbuf *whole)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t rev = c->server ? RPCR_ONCRPC_REPLY : RPCR_ONCRPC_CALL, w;

	/* 4. Whose. */
	w = whose(c, h, d + hlen, m->data_len - hlen);
	/* 5. The reverse direction: plain (RFC 8167 sections 2.5, 2.6), to a role that exists. On
	 * version 2, a call with chunks goes to the responder, which takes them where its client
	 * said BRS GENL and answers the error of its limits (none) otherwise (§4.5.4), and a
	 * reply with chunks to the requester where the client said GENL (its calls offered them
	 * then). */
	if (unlikely(w == rev)) {
		bool plain =
			(h->type == XPRT_HT_MSG && rpcr_proto_chunks_empty(&h->chunks)) ||
			(h->type == XPRT_HT_ERROR && w == RPCR_ONCRPC_REPLY) ||
			((h->type == XPRT_HT_MSG || h->type == XPRT_HT_NOMSG) &&
			 c->wire->flag_dir && (w == RPCR_ONCRPC_CALL || xprt_conn_rev_chunks(c)));

		if (w == RPCR_ONCRPC_CALL && (!plain || c->svc == NULL)) {
			c->p->stats.bcalls_refused++;
			XPRT_LOG(DEBUG,
				 "%s: conn %" PRIu64 ": reverse-direction call 0x%08x refused",
				 c->p->name, c->id, h->xid);
			goto drop;
		}
		if (w == RPCR_ONCRPC_REPLY && (!plain || c->clnt == NULL)) {
			c->p->stats.unmatched++;
			XPRT_LOG(DEBUG,
				 "%s: conn %" PRIu64 ": reverse-direction reply 0x%08x unmatched",
				 c->p->name, c->id, h->xid);
			goto drop;
		}
	}
	/* 6. To its role (a reply continued: its whole message in place of its last part). */
	if (w == RPCR_ONCRPC_CALL) {
		xprt_svc_recv_hdr(c, m, h, hlen, whole);
	} else if (whole != NULL) {
		xprt_buf_put(c, m);
		xprt_clnt_recv_hdr(c, whole, wc, h, 0);
	} else {
		xprt_clnt_recv_hdr(c, m, wc, h, hlen);
	}
	return;
drop:
	if (whole != NULL)
		rte_pktmbuf_free(whole);
	xprt_buf_put(c, m);
}
