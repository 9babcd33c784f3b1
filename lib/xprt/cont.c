/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Version 2's message continuation (draft §4.4.2, §6.2.2.2, §7.1.3): one RPC message carried by
 * a sequence of Sends, each but the last with RDMA2_F_MORE, all with the message's xid and
 * RDMA2_MSG; chunks in the last alone.
 *
 * Sending (xprt_cont_send(); clnt.c and svc.c decide when, doc/rpcrdma-v2.md "Continuation"):
 * the RPC message stays where it was marshalled. Every part is one Send of two gather entries,
 * its header and its slice of the message; the headers are written one after another in a
 * message buffer of their own, chained to the message and released with the last Send. Every
 * part but the last carries a plain header with MORE and xprt_cont_part_len() bytes of the
 * peer's receive size; the last carries the message's own header (its chunk lists, its handle
 * to invalidate, its Send with Invalidate) and the rest, which may be nothing.
 *
 * Credits (§4.2.1: a credit is one receive, so every part takes one of the peer's):
 *   - a requester's continued call counts as many calls outstanding as it has parts, until its
 *     reply (clnt.c: xprt_creq::cont_sends);
 *   - a requester grants, in the low half of each call's credit word, the receives its reply
 *     may take: 1, or more where it keeps receives aside for a continued reply (XPRT_CONT_RECVS
 *     a connection beyond its credits, held by the call until its reply is in:
 *     xprt_creq::cont_extra); a responder never sends a reply in more parts than its call
 *     granted (svc.c: rpcr_svc_req::reply_sends).
 *
 * Receiving (xprt_cont_recv(), recv.c's version-2 step, before anything else of version 2's), in
 * order:
 *   1. a part of a message being discarded (its xid: the last XPRT_CONT_DISCARDS failed ones)
 *      is dropped, up to its last part;
 *   2. while a message is being reassembled the next one must continue it: the same xid,
 *      the same header type, the same direction. Anything else breaks it: the message being reassembled
 *      is dropped and answered INVAL_CONT (where it is a call and this side responds), the
 *      one that broke it is dropped and answered INVAL_CONT too (if a call of another xid),
 *      and the rest of both discarded; a part the decoder refuses breaks it the same way
 *      (xprt_cont_undecodable(): a part of its own is answered once, with the decoder's
 *      error);
 *   3. a first part (MORE) must be RDMA2_MSG with empty chunk lists, or RDMA2_CONNPROP: else
 *      INVAL_CONT, the rest discarded. A continued CONNPROP's parts carry pieces of one
 *      property list (what follows each part's prefix, concatenated: §6.2.2.2's "data
 *      payload" read as the header's body, rpcr's reading, doc/rpcrdma-v2.md), which no part
 *      decodes alone: recv.c hands them here undecoded (xprt_cont_props_part());
 *   4. payloads are copied into one bulk buffer (XPRT_BULK_DATA bytes at most: beyond, SYSTEM
 *      and the rest discarded; a CONNPROP's behind its first part's prefix), and each receive
 *      goes back at once;
 *   5. the last part (MORE clear) is the message's header: the message goes to its role
 *      (recv.c's xprt_recv_route()) as if it had come in one Send, the whole RPC message
 *      beside the last part's receive; a CONNPROP, its prefix given the last part's credit
 *      word and flags, is decoded whole and taken as one (recv.c's xprt_recv_props_whole()).
 * A requester answers nothing (RFC 8166 section 4.5's rule for what it cannot read); it drops.
 * Only this file writes xprt_conn::cont.
 */

#include <string.h>

#include "xprt_internal.h"

#include "sq.h"

uint32_t
xprt_cont_parts(uint32_t size, uint32_t len, uint32_t hsize)
{
	uint32_t part, over;

	if (hsize + len <= size)
		return 1;
	if (size <= XPRT_V2_PLAIN + 4 || hsize > size)
		return UINT32_MAX;
	part = xprt_cont_part_len(size);
	/* The last part carries up to size - hsize bytes, every other one part bytes. */
	over = len - RTE_MIN(len, size - hsize);
	return 1 + (over + part - 1) / part;
}

void
xprt_cont_send(struct xprt_conn *c, const struct xprt_hdr *last, struct rte_mbuf *hbuf,
	       struct rte_mbuf *m, uint32_t len, uint32_t inv)
{
	uint32_t lsize = c->wire->size(last), part = xprt_cont_part_len(c->inline_send);
	uint32_t k = xprt_cont_parts(c->inline_send, len, lsize), i, off = 0, hoff = 0;
	uint32_t hlkey = rpcr_chunk_lkey(hbuf), dlkey = rpcr_chunk_lkey(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t *hb = (uint8_t *)hbuf->buf_addr;
	struct xprt_hdr ph;

	RTE_ASSERT(k >= 2 && k <= XPRT_CONT_PARTS);
	memset(&ph, 0, sizeof(ph));
	ph.xid = last->xid;
	ph.vers = last->vers;
	ph.credit = last->credit;
	ph.type = XPRT_HT_MSG;
	ph.flags = (last->flags & XPRT_HF_RESPONSE) | XPRT_HF_MORE;
	/* Released together with the last Send (xprt_buf_put() frees a chain whole). */
	hbuf->next = m;
	hbuf->nb_segs = (uint16_t)(1 + m->nb_segs);
	hbuf->pkt_len = hbuf->data_len + m->pkt_len;
	for (i = 0; i < k; i++) {
		bool end = i == k - 1;
		uint32_t n = end ? len - off : RTE_MIN(part, len - off);
		ssize_t hs = c->wire->encode(end ? last : &ph, hb + hoff, hbuf->buf_len - hoff);

		/* (Room for XPRT_CONT_PARTS plain headers and one of inline_send bytes.) */
		RTE_VERIFY(hs > 0);
		xprt_send2_post(c, hb + hoff, (uint32_t)hs, hlkey, d + off, n, dlkey,
				end ? hbuf : NULL, end ? inv : 0);
		hoff += (uint32_t)hs;
		off += n;
	}
	c->p->stats.cont_sent++;
	c->p->stats.cont_parts_sent += k;
}

/* (xprt_cont::active from the rest.) */
static inline void
cont_update(struct xprt_conn *c)
{
	c->cont.active = c->cont.assembling || c->cont.ndiscard != 0;
}

/* The message being reassembled goes (its buffer freed). */
static void
cont_drop(struct xprt_conn *c)
{
	if (c->cont.buf != NULL) {
		rte_pktmbuf_free(c->cont.buf);
		c->cont.buf = NULL;
	}
	c->cont.assembling = false;
	cont_update(c);
}

void
xprt_cont_reset(struct xprt_conn *c)
{
	cont_drop(c);
	c->cont.ndiscard = 0;
	cont_update(c);
}

/* The index of @xid among the messages being discarded, or -1. */
static int
discard_find(const struct xprt_conn *c, uint32_t xid)
{
	uint32_t i;

	for (i = 0; i < c->cont.ndiscard; i++)
		if (c->cont.discard[i] == xid)
			return (int)i;
	return -1;
}

/* Drop the rest of message @xid, up to its last part (the oldest forgotten when full: a peer
 * that never sends a last part must not hold the slots). */
static void
discard_add(struct xprt_conn *c, uint32_t xid)
{
	if (discard_find(c, xid) >= 0)
		return;
	if (c->cont.ndiscard == XPRT_CONT_DISCARDS) {
		memmove(&c->cont.discard[0], &c->cont.discard[1],
			sizeof(c->cont.discard[0]) * (XPRT_CONT_DISCARDS - 1));
		c->cont.ndiscard--;
	}
	c->cont.discard[c->cont.ndiscard++] = xid;
	cont_update(c);
}

/* A part of a message being discarded (index @i) came: its last (@more clear) ends that. */
static void
discard_part(struct xprt_conn *c, int i, bool more)
{
	if (more)
		return;
	c->cont.discard[i] = c->cont.discard[--c->cont.ndiscard];
	cont_update(c);
}

/* Answer @xid with @err where this side responds to it (a call: RESPONSE clear). */
static void
cont_answer(struct xprt_conn *c, uint32_t xid, uint32_t resp, uint32_t err)
{
	c->p->stats.cont_errors++;
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": continued message 0x%08x dropped (error %u)",
		 c->p->name, c->id, xid, err);
	if (c->svc != NULL && !resp)
		xprt_svc_send_error(c, xid, c->wire->vers, err);
}

uint32_t
xprt_cont_undecodable(struct xprt_conn *c, const struct xprt_hdr *h, uint32_t err)
{
	bool more = (h->flags & XPRT_HF_MORE) != 0;
	int i = discard_find(c, h->xid);

	if (i >= 0) {
		discard_part(c, i, more);
		return XPRT_HERR_NONE;
	}
	if (c->cont.assembling) {
		/* The message being reassembled is broken (step 2): by a part of its own (its
		 * one answer the decoder's error), or by another message (answered too). */
		uint32_t x = c->cont.xid;

		cont_drop(c);
		if (h->xid != x) {
			cont_answer(c, x, c->cont.resp, XPRT_HERR_CONT);
			discard_add(c, x);
		}
	}
	/* (Its rest unread whether answered or not: a requester answers nothing.) */
	if (more)
		discard_add(c, h->xid);
	return err;
}

bool
xprt_cont_recv(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
	       const struct xprt_hdr *h, uint32_t hlen)
{
	bool more = (h->flags & XPRT_HF_MORE) != 0;
	uint32_t resp = h->flags & XPRT_HF_RESPONSE, plen = m->data_len - hlen;
	int i = discard_find(c, h->xid);
	struct rte_mbuf *whole;

	/* 1. The rest of a message being discarded. */
	if (i >= 0) {
		discard_part(c, i, more);
		xprt_buf_put(c, m);
		return true;
	}
	/* 2. The next part of the message being reassembled, or what breaks it. */
	if (c->cont.assembling &&
	    (h->xid != c->cont.xid || h->type != c->cont.type || resp != c->cont.resp)) {
		uint32_t x = c->cont.xid;

		cont_answer(c, x, c->cont.resp, XPRT_HERR_CONT);
		cont_drop(c);
		if (h->xid != x) {
			cont_answer(c, h->xid, resp, XPRT_HERR_CONT);
			discard_add(c, x);
		}
		if (more)
			discard_add(c, h->xid);
		xprt_buf_put(c, m);
		return true;
	}
	if (!c->cont.assembling && !more)
		return false; /* (not a continuation's: as any other message) */
	/* 3. A first part: RDMA2_MSG with no chunks, or RDMA2_CONNPROP. */
	if (!c->cont.assembling && h->type != XPRT_HT_PROPS &&
	    (h->type != XPRT_HT_MSG || !rpcr_proto_chunks_empty(&h->chunks))) {
		cont_answer(c, h->xid, resp, XPRT_HERR_CONT);
		discard_add(c, h->xid);
		xprt_buf_put(c, m);
		return true;
	}
	/* 4. Its payload copied (a first part starts the buffer). */
	if (!c->cont.assembling) {
		c->cont.buf = rpcr_chunk_alloc(c->p->bulk);
		if (c->cont.buf == NULL) {
			cont_answer(c, h->xid, resp, XPRT_HERR_SYSTEM);
			discard_add(c, h->xid);
			xprt_buf_put(c, m);
			return true;
		}
		c->cont.buf->data_len = 0;
		c->cont.buf->pkt_len = 0;
		if (h->type == XPRT_HT_PROPS) {
			/* (A CONNPROP: its prefix first, for the whole to decode.) */
			memcpy(rte_pktmbuf_mtod(c->cont.buf, uint8_t *),
			       rte_pktmbuf_mtod(m, const uint8_t *), RPCR_PROTO_V2_PREFIX);
			c->cont.buf->data_len = RPCR_PROTO_V2_PREFIX;
		}
		c->cont.assembling = true;
		c->cont.type = h->type;
		c->cont.xid = h->xid;
		c->cont.resp = resp;
		c->cont.parts = 0;
		cont_update(c);
	}
	whole = c->cont.buf;
	if (whole->data_len + plen > XPRT_BULK_DATA) {
		cont_answer(c, h->xid, resp, XPRT_HERR_SYSTEM);
		cont_drop(c);
		if (more)
			discard_add(c, h->xid);
		xprt_buf_put(c, m);
		return true;
	}
	memcpy(rte_pktmbuf_mtod_offset(whole, uint8_t *, whole->data_len),
	       rte_pktmbuf_mtod_offset(m, const uint8_t *, hlen), plen);
	whole->data_len = (uint16_t)(whole->data_len + plen);
	whole->pkt_len = whole->data_len;
	c->cont.parts++;
	if (more) {
		xprt_buf_put(c, m);
		return true;
	}
	/* 5. The last part: the whole message to its role. */
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": continued message 0x%08x: %u parts, %u bytes",
		 c->p->name, c->id, h->xid, c->cont.parts, whole->data_len);
	c->cont.buf = NULL;
	c->cont.assembling = false;
	cont_update(c);
	c->p->stats.cont_recv++;
	c->p->stats.cont_parts_recv += c->cont.parts;
	if (c->cont.type == XPRT_HT_PROPS) {
		uint8_t *pre = rte_pktmbuf_mtod(whole, uint8_t *);

		/* (The last part's credit word and flags: MORE clear, TPMORE as it says.) */
		memcpy(pre + 8, rte_pktmbuf_mtod(m, const uint8_t *) + 8, 4);
		memcpy(pre + 16, rte_pktmbuf_mtod(m, const uint8_t *) + 16, 4);
		xprt_recv_props_whole(c, m, wc, whole);
		return true;
	}
	xprt_recv_route(c, m, wc, h, hlen, whole);
	return true;
}

bool
xprt_cont_props_part(const struct xprt_conn *c, const uint8_t *d, uint32_t len, struct xprt_hdr *h)
{
	uint32_t xid, flags;

	if (len < RPCR_PROTO_V2_PREFIX || rpcr_xdr_load32(d + 4) != RPCR_PROTO_V2_VERS ||
	    rpcr_xdr_load32(d + 12) != RPCR_PROTO_V2_CONNPROP)
		return false;
	xid = rpcr_xdr_load32(d);
	flags = rpcr_xdr_load32(d + 16) & (XPRT_HF_RESPONSE | XPRT_HF_MORE | XPRT_HF_TPMORE);
	/* (The last part of a broken one too: its rest is dropped undecoded, step 1.) */
	if (!(flags & XPRT_HF_MORE) &&
	    !(c->cont.assembling && c->cont.type == XPRT_HT_PROPS && xid == c->cont.xid) &&
	    discard_find(c, xid) < 0)
		return false;
	h->xid = xid;
	h->vers = RPCR_PROTO_V2_VERS;
	h->credit = rpcr_xdr_load32(d + 8);
	h->type = XPRT_HT_PROPS;
	h->flags = flags;
	rpcr_proto_chunks_reset(&h->chunks);
	h->props.n = 0;
	return true;
}
