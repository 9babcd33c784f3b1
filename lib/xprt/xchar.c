/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Version 2's transport characteristics (draft-dnoveck-nfsv4-rpcrdma-xcharext-00): the four
 * operations, carried in rpcr's optional-operation header type (doc/rpcrdma-v2.md), on a
 * connection of version 2. Only this file writes xprt_conn::xchar.
 *
 * In order, on a connection:
 *   1. where the side's conf.xchar says so, its INIT_XCHAR goes right after its RDMA2_CONNPROP
 *      (a server's: its first message; a client's: once the server answered version 2, its one
 *      message out before then being the CONNPROP): RBSIZ (its receive size), RQREMINV (a
 *      client: whether it lets the server invalidate its keys, conf.remote_inv; a server: no),
 *      BRS (a client that serves its server's calls: GENL where its BRS property says GENL,
 *      else SZLIM; anyone else: NONE), none of
 *      them expected to change but RBSIZ (§4.1's nochg);
 *   2. a peer that does not take the operations answers INVAL_HTYPE: the INIT's xid, as an error
 *      report: nothing of ours is sent again there, CONNPROP alone stands (xchar.off);
 *   3. the peer's INIT_XCHAR is taken as it comes, characteristics not known ignored (§4.1):
 *      RBSIZ bounds what this side sends (props.c, like the RBSIZ property); RQREMINV false
 *      stops a server's Send with Invalidate of the handle the call names; BRS NONE stops a
 *      server's calls back (xprt_conn_brs_ok());
 *   4. REQ_XCHAR is answered RESP_XCHAR with its xid, each characteristic asked in one of the
 *      three subsets (§4.3): RBSIZ the same or smaller: done (the peer sends less); larger, up
 *      to a message buffer: pending, the receives from then on posted that long, and UPD_XCHAR
 *      (pendclr) once every receive posted before has been used (xprt_xchar_tick(), each
 *      millisecond) so the peer never sends a long message into a short receive; RQREMINV:
 *      done where this side can do it (a client with remote_inv asked true, or false), else
 *      rejected; BRS: done when already so, else rejected (it is the side's configuration);
 *      anything else rejected;
 *   5. a client with conf.xchar whose own send size is above the server's RBSIZ asks, once the
 *      server's INIT is in, REQ_XCHAR RBSIZ of its send size; the RESP_XCHAR to it (its xid)
 *      applies it when done, waits for the UPD_XCHAR when pending; any other RESP is a reply
 *      to nothing (dropped, counted unmatched); UPD_XCHAR is taken as an INIT of one
 *      characteristic.
 * A body that does not decode is answered as the error lib/proto names it (BAD_XDR, BAD_PROPVAL;
 * more than XCHAR_VALS values in a REQ: SYSTEM; in an INIT: none taken, no error) by a responder; a requester drops it.
 */

#include <string.h>

#include <rte_random.h>

#include <rpcr_proto_xchar.h>

#include "xprt_internal.h"

/* Characteristics read in one operation, and subset words: a RESP_XCHAR this side builds says
 * each of up to XCHAR_VALS asked in one word. */
#define XCHAR_VALS  32u
#define XCHAR_WORDS 4u

/* Send operation @x with @xid (a response: RESPONSE set, as version 2 has error reports and
 * replies). @return 0 or a negative errno. */
static int
xchar_send(struct xprt_conn *c, const struct rpcr_proto_xchar *x, uint32_t xid, bool response)
{
	uint8_t body[256];
	struct rpcr_xdr_enc e;
	struct xprt_hdr h;
	int rc;

	rpcr_xdr_enc_init(&e, body, sizeof(body));
	if (rpcr_proto_xchar_encode(&e, x) != 0)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = c->wire->vers;
	/* (A server's grants what its replies grant; a client's asks as its calls do.) */
	h.credit = c->server ? xprt_svc_credit_word(c)
			     : c->wire->credit_call(c->clnt->conf.credits, 1);
	h.type = XPRT_HT_OPTION;
	h.flags = response ? XPRT_HF_RESPONSE : 0;
	h.opttype = x->op;
	h.optinfo = body;
	h.optinfo_len = (uint32_t)rpcr_xdr_enc_pos(&e);
	rc = xprt_send_hdr(c, &h);
	if (rc != 0)
		return rc;
	c->p->stats.xchar_sent++;
	return 0;
}

/* This side's BRS characteristic: its BRS property's (GENL; SIMPLE and CONT are SZLIM: no
 * chunks), NONE where it serves no calls. */
static uint32_t
own_bkrqsup(const struct xprt_conn *c)
{
	switch (xprt_conn_own_brs(c)) {
	case RPCR_PROTO_V2_RVRSDIR_NONE:
		return RPCR_PROTO_XCHAR_BKRQSUP_NONE;
	case RPCR_PROTO_V2_RVRSDIR_GENL:
		return RPCR_PROTO_XCHAR_BKRQSUP_GENL;
	default:
		return RPCR_PROTO_XCHAR_BKRQSUP_SZLIM;
	}
}

int
xprt_xchar_init_send(struct xprt_conn *c)
{
	struct rpcr_proto_xchar_val v[3];
	uint8_t b[3][4];
	uint32_t nochg = 0x6; /* (RQREMINV and BRS: elements 1 and 2) */
	struct rpcr_proto_xchar x;
	bool rqreminv = !c->server && c->clnt->conf.remote_inv;
	uint32_t brs = own_bkrqsup(c);
	int rc;

	if (c->xchar.off)
		return 0;
	rpcr_proto_xchar_val_set_u32(&v[0], RPCR_PROTO_XCHAR_RBSIZ, b[0], c->own_recv);
	rpcr_proto_xchar_val_set_u32(&v[1], RPCR_PROTO_XCHAR_RQREMINV, b[1], rqreminv);
	rpcr_proto_xchar_val_set_u32(&v[2], RPCR_PROTO_XCHAR_BRS, b[2], brs);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_INIT;
	x.spec = (struct rpcr_proto_xchar_spec){v, 3, 3};
	x.sub[0] = (struct rpcr_proto_xchar_subset){&nochg, 1, 1};
	c->xchar.init_xid = (uint32_t)rte_rand();
	rc = xchar_send(c, &x, c->xchar.init_xid, false);
	if (rc == 0)
		c->xchar.init_out = true;
	return rc;
}

bool
xprt_xchar_refused(struct xprt_conn *c, const struct xprt_hdr *h)
{
	if (!c->xchar.init_out || h->xid != c->xchar.init_xid)
		return false;
	c->xchar.init_out = false;
	if (h->err == XPRT_HERR_HTYPE) {
		/* §2: a peer without the extension; CONNPROP alone stands. */
		c->xchar.off = true;
		XPRT_LOG(INFO,
			 "%s: conn %" PRIu64 ": the peer does not take transport characteristics "
			 "(INVAL_HTYPE): properties alone",
			 c->p->name, c->id);
	} else {
		XPRT_LOG(INFO, "%s: conn %" PRIu64 ": RDMA2_ERROR %u to our INIT_XCHAR", c->p->name,
			 c->id, h->err);
	}
	return true;
}

/* Characteristic @v of the peer's (an INIT's or an UPD's) applied; not known: ignored. */
static void
peer_take(struct xprt_conn *c, const struct rpcr_proto_xchar_val *v)
{
	uint32_t x = rpcr_proto_xchar_val_u32(v);

	switch (v->which) {
	case RPCR_PROTO_XCHAR_RBSIZ:
		/* (Below the version's minimum it says nothing rpcr can use.) */
		if (x >= XPRT_MIN_INLINE)
			xprt_props_peer_rbsiz(c, x);
		break;
	case RPCR_PROTO_XCHAR_RQREMINV:
		c->xchar.peer_rqreminv = x != 0;
		break;
	case RPCR_PROTO_XCHAR_BRS:
		c->xchar.peer_bkrqsup = x;
		break;
	default:
		break;
	}
}

/*
 * A client that sends its characteristics and would send more than the server's receives take
 * (its own send size above the server's RBSIZ) asks the server for receives that long, once a
 * connection: REQ_XCHAR RBSIZ (§4.2), the server's answer in xprt_xchar_recv().
 */
static void
req_rbsiz(struct xprt_conn *c)
{
	struct rpcr_proto_xchar_val v;
	struct rpcr_proto_xchar x;
	uint8_t b[4];

	if (c->server || !c->clnt->conf.xchar || c->xchar.req_out || c->xchar.req_rbsiz != 0 ||
	    c->own_send <= c->v2_peer.rbsiz)
		return;
	rpcr_proto_xchar_val_set_u32(&v, RPCR_PROTO_XCHAR_RBSIZ, b, c->own_send);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_REQ;
	x.spec = (struct rpcr_proto_xchar_spec){&v, 1, 1};
	c->xchar.req_xid = (uint32_t)rte_rand();
	if (xchar_send(c, &x, c->xchar.req_xid, false) == 0) {
		c->xchar.req_out = true;
		c->xchar.req_rbsiz = c->own_send;
	}
}

/* A pending RBSIZ update: looked at again (xprt_xchar_tick()) a tick from now. */
static void
xchar_due(struct xprt_conn *c)
{
	xprt_due_conn(c->p, rte_rdtsc() + xprt_us_to_tsc(c->p, XPRT_XCHAR_TICK_US));
}

/* One characteristic a REQ_XCHAR asks of this side: RESP subset 0 (done), 1 (rejected) or 2
 * (pending). */
static uint32_t
req_one(struct xprt_conn *c, const struct rpcr_proto_xchar_val *v)
{
	uint32_t x = rpcr_proto_xchar_val_u32(v);

	switch (v->which) {
	case RPCR_PROTO_XCHAR_RBSIZ: {
		/* What every receive posted holds: while a growth is pending, the shorter ones
		 * posted before it. */
		uint32_t holds = c->xchar.pend_rbsiz != 0 ? c->xchar.pend_from : c->recv_size;

		if (x >= XPRT_MIN_INLINE && x <= holds) {
			/* The same or smaller: what this side takes is within it. */
			if (c->xchar.pend_rbsiz == 0)
				xprt_props_own_recv(c, x);
			return 0;
		}
		if (c->xchar.pend_rbsiz != 0)
			return x <= c->xchar.pend_rbsiz ? 2 : 1; /* (the UPD to come covers it) */
		if (x > holds && x <= XPRT_BUF_DATA) {
			/* Longer receives from now on; said done once those posted before are
			 * all used (xprt_xchar_tick()). */
			c->xchar.pend_from = c->recv_size;
			xprt_conn_recv_size(c, x);
			c->xchar.pend_rbsiz = x;
			c->xchar.pend_until = c->rq_tail;
			xchar_due(c);
			return 2;
		}
		return 1;
	}
	case RPCR_PROTO_XCHAR_RQREMINV:
		return x == 0 || (!c->server && c->clnt->conf.remote_inv) ? 0 : 1;
	case RPCR_PROTO_XCHAR_BRS:
		return x == own_bkrqsup(c) ? 0 : 1;
	default:
		return 1;
	}
}

void
xprt_xchar_tick(struct xprt_conn *c)
{
	struct rpcr_proto_xchar_val v;
	struct rpcr_proto_xchar x;
	uint8_t b[4];

	if (c->xchar.pend_rbsiz == 0)
		return;
	if ((int32_t)(c->rq_head - c->xchar.pend_until) < 0) {
		xchar_due(c);
		return;
	}
	rpcr_proto_xchar_val_set_u32(&v, RPCR_PROTO_XCHAR_RBSIZ, b, c->xchar.pend_rbsiz);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_UPD;
	x.now = v;
	x.pendclr = true;
	if (xchar_send(c, &x, (uint32_t)rte_rand(), false) != 0) {
		xchar_due(c); /* (again) */
		return;
	}
	xprt_props_own_recv(c, c->xchar.pend_rbsiz);
	c->xchar.pend_rbsiz = 0;
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": receives of %u bytes now (UPD_XCHAR)", c->p->name,
		 c->id, c->own_recv);
}

uint32_t
xprt_xchar_recv(struct xprt_conn *c, const struct xprt_hdr *h, bool responder)
{
	struct rpcr_proto_xchar_val vals[XCHAR_VALS];
	uint32_t words[3][XCHAR_WORDS], i;
	struct rpcr_proto_xchar x;
	struct rpcr_xdr_dec d;
	int rc;

	memset(&x, 0, sizeof(x));
	x.spec = (struct rpcr_proto_xchar_spec){vals, 0, RTE_DIM(vals)};
	for (i = 0; i < 3; i++)
		x.sub[i] = (struct rpcr_proto_xchar_subset){words[i], 0, RTE_DIM(words[i])};
	rpcr_xdr_dec_init(&d, h->optinfo, h->optinfo_len);
	rc = rpcr_proto_xchar_decode(&d, h->opttype, &x);
	if (rc == 0 && rpcr_xdr_dec_left(&d) != 0)
		rc = RPCR_PROTO_EBADXDR;
	/* An INIT with more than this side reads (§4.1: what a receiver does not take draws no
	 * error): taken as far as read, which is none of it. */
	if (rc == RPCR_PROTO_EOVERFLOW && h->opttype == RPCR_PROTO_XCHAR_INIT) {
		c->xchar.peer_init = true;
		return XPRT_HERR_NONE;
	}
	if (rc != 0) {
		/* (An operation not known is not malformed: the peer's cue to stop.) */
		if (rc != RPCR_PROTO_EHTYPE)
			c->p->stats.bad_headers++;
		if (!responder)
			return XPRT_HERR_NONE;
		return rc == RPCR_PROTO_EHTYPE      ? XPRT_HERR_HTYPE
		       : rc == RPCR_PROTO_EPROPVAL  ? XPRT_HERR_PROPVAL
		       : rc == RPCR_PROTO_EOVERFLOW ? XPRT_HERR_SYSTEM
						    : XPRT_HERR_CHUNK;
	}
	c->p->stats.xchar_recv++;
	switch (x.op) {
	case RPCR_PROTO_XCHAR_INIT:
		c->xchar.peer_init = true;
		for (i = 0; i < x.spec.n; i++)
			peer_take(c, &x.spec.vals[i]);
		req_rbsiz(c);
		break;
	case RPCR_PROTO_XCHAR_UPD:
		peer_take(c, &x.now);
		break;
	case RPCR_PROTO_XCHAR_REQ: {
		/* (Its answer's subsets: up to XCHAR_VALS elements, one word each.) */
		uint32_t sub[3] = {0, 0, 0};
		struct rpcr_proto_xchar r;

		RTE_BUILD_BUG_ON(XCHAR_VALS > 32);
		for (i = 0; i < x.spec.n; i++)
			sub[req_one(c, &x.spec.vals[i])] |= 1u << i;
		memset(&r, 0, sizeof(r));
		r.op = RPCR_PROTO_XCHAR_RESP;
		for (i = 0; i < 3; i++)
			r.sub[i] = (struct rpcr_proto_xchar_subset){&sub[i], x.spec.n != 0, 1};
		if (xchar_send(c, &r, h->xid, true) != 0)
			XPRT_LOG(WARNING, "%s: conn %" PRIu64 ": RESP_XCHAR not sent", c->p->name,
				 c->id);
		break;
	}
	default: /* RESP */
		if (!c->xchar.req_out || h->xid != c->xchar.req_xid) {
			c->p->stats.unmatched++;
			break;
		}
		/* Our one ask, RBSIZ (element 0): done, applied now; pending, by its UPD;
		 * rejected, as it was. */
		c->xchar.req_out = false;
		if (rpcr_proto_xchar_subset_test(&x.sub[0], 0))
			xprt_props_peer_rbsiz(c, c->xchar.req_rbsiz);
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": the server's RBSIZ %u: %s", c->p->name,
			 c->id, c->xchar.req_rbsiz,
			 rpcr_proto_xchar_subset_test(&x.sub[0], 0)   ? "done"
			 : rpcr_proto_xchar_subset_test(&x.sub[2], 0) ? "pending"
								      : "rejected");
		break;
	}
	return XPRT_HERR_NONE;
}

void
xprt_xchar_info(const struct xprt_conn *c, struct rpcr_xprt_props *o)
{
	o->xchar = c->xchar.peer_init;
	o->xchar_off = c->xchar.off;
	o->rqreminv = c->xchar.peer_rqreminv;
	o->bkrqsup = c->xchar.peer_bkrqsup;
	o->own_rbsiz = c->own_recv;
}
