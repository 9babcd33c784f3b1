/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Version 2's transport properties (draft-ietf-nfsv4-rpcrdma-version-two-01 §5, §6.3.4): what a
 * connection publishes in its RDMA2_CONNPROP, and what it does with its peer's.
 *
 * In order, on a connection that speaks version 2:
 *   1. xprt_props_reset() (from xprt_conn_set_wire()): the peer's properties are the draft's
 *      defaults (§5.2: 4096-byte Sends and receive buffers, 1 MiB segments, 16 segments, no
 *      reverse direction), applied to this side's own sizes (xprt_props_apply(), again each
 *      time they change; on version 1, xprt_props_v1(): no limits);
 *   2. xprt_props_send(): this side's RDMA2_CONNPROP, the first message it sends on the
 *      connection (§6.3.4): a client's as the message that asks version 2 (clnt.c), a
 *      server's as soon as the client's first message fixed the connection at version 2
 *      (svc.c), ahead of any answer to it;
 *   3. xprt_props_recv() (from recv.c's v2_control()): the peer's, applied as they come (TPMORE
 *      sequencing: one after the last is INVAL_HTYPE, §6.2.2.3):
 *        - RBSIZ bounds this side's inline_send, SBSIZ its inline_recv (never above its own);
 *        - RSSIZ bounds the segments this side offers (reg.c splits longer runs), RCSIZ the
 *          segments a client puts in one call's header (more: the call fails, EMSGSIZE);
 *        - BRS is recorded: a server's reverse-direction client (rpcr_svc_req_bclnt()) needs
 *          SIMPLE or more, and continues a call only under CONT or more;
 *        - HOSTAUTH goes to the application's hook once the peer's set is complete
 *          (rpcr_*_conf::hostauth_check), which may close the connection;
 *      a value rpcr cannot live with (RBSIZ or SBSIZ under 1024, RSSIZ under 4096, RCSIZ 0:
 *      rpcr's choice, doc/rpcrdma-v2.md) discards the whole message, none of its settings
 *      applied (§7.2.2): BAD_PROPVAL from a responder, logged by a requester (which answers
 *      nothing, RFC 8166 section 4.5). lib/proto's decoder has already answered the values
 *      that are not of their type.
 * Unknown properties are ignored (§6.3.4). Nothing here writes another module's structures:
 * the connection's sizes go through xprt_conn_inline_send().
 */

#include <string.h>

#include <rte_common.h>

#include "xprt_internal.h"

/* The smallest values taken (rpcr's choice: below these a peer could not take a call header). */
#define PROPS_MIN_BSIZ XPRT_MIN_INLINE
#define PROPS_MIN_SSIZ 4096u

void
xprt_props_peer_rbsiz(struct xprt_conn *c, uint32_t v)
{
	c->v2_peer.rbsiz = v;
	xprt_props_apply(c);
}

void
xprt_props_own_recv(struct xprt_conn *c, uint32_t v)
{
	c->own_recv = v;
	xprt_props_apply(c);
}

void
xprt_props_apply(struct xprt_conn *c)
{
	uint32_t send = RTE_MIN(c->own_send, c->v2_peer.rbsiz);

	c->inline_recv = RTE_MIN(c->own_recv, c->v2_peer.sbsiz);
	/* (A client still asking version 2 keeps its first message within 1024 bytes.) */
	xprt_conn_inline_send(c, c->v2_negotiating ? RTE_MIN(send, XPRT_MIN_INLINE) : send);
	c->seg_max = c->v2_peer.rssiz;
	c->segs_max = c->v2_peer.rcsiz;
}

void
xprt_props_reset(struct xprt_conn *c, uint32_t own_send, uint32_t own_recv)
{
	memset(&c->v2_peer, 0, sizeof(c->v2_peer));
	c->v2_peer.sbsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_SBSIZ);
	c->v2_peer.rbsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RBSIZ);
	c->v2_peer.rssiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RSSIZ);
	c->v2_peer.rcsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RCSIZ);
	c->v2_peer.brs = RPCR_PROTO_V2_RVRSDIR_NONE;
	c->own_send = own_send;
	c->own_recv = own_recv;
	xprt_props_apply(c);
}

void
xprt_props_v1(struct xprt_conn *c)
{
	memset(&c->v2_peer, 0, sizeof(c->v2_peer));
	c->seg_max = UINT32_MAX;
	c->segs_max = UINT32_MAX;
}

/* This side's HOSTAUTH and hook (the role's configuration). */
static const void *
own_hostauth(const struct xprt_conn *c, uint32_t *len)
{
	if (c->server && c->svc != NULL) {
		*len = c->svc->conf.hostauth_len;
		return c->svc->conf.hostauth;
	}
	if (!c->server && c->clnt != NULL) {
		*len = c->clnt->conf.hostauth_len;
		return c->clnt->conf.hostauth;
	}
	*len = 0;
	return NULL;
}

int
xprt_props_send(struct xprt_conn *c, uint32_t xid, uint32_t credit)
{
	struct rpcr_proto_v2_prop props[6];
	uint8_t v[5][4], habuf[4 + RPCR_XPRT_HOSTAUTH_MAX + 3];
	struct xprt_hdr h;
	int rc;
	uint32_t n = 0, hlen = 0;
	const void *ha = own_hostauth(c, &hlen);

	/* What this side sends at most and takes in a receive; no segment limit of its own
	 * (every segment is read or written whole, whatever its length); a server, the segments
	 * its decoder takes in a call's header (any chunk within its max_segs, the read list
	 * within XPRT_RX_READS; a client whose responder takes chunks, the same of its
	 * responder's); a client, its reverse direction (§5.2.5): its bc_brs where it serves its
	 * server's calls (bc_credits; GENL unless it says less), else NONE. */
	rpcr_proto_v2_prop_set_u32(&props[n], RPCR_PROTO_V2_PROP_SBSIZ, v[n], c->own_send);
	n++;
	rpcr_proto_v2_prop_set_u32(&props[n], RPCR_PROTO_V2_PROP_RBSIZ, v[n], c->own_recv);
	n++;
	rpcr_proto_v2_prop_set_u32(&props[n], RPCR_PROTO_V2_PROP_RSSIZ, v[n], UINT32_MAX);
	n++;
	if (c->svc != NULL && (c->server || xprt_conn_own_brs(c) == RPCR_PROTO_V2_RVRSDIR_GENL)) {
		/* (A client's responder that takes chunks says how many segments too.) */
		rpcr_proto_v2_prop_set_u32(&props[n], RPCR_PROTO_V2_PROP_RCSIZ, v[n],
					   RTE_MIN(c->svc->conf.max_segs, XPRT_RX_READS));
		n++;
	}
	if (!c->server) {
		rpcr_proto_v2_prop_set_u32(&props[n], RPCR_PROTO_V2_PROP_BRS, v[n],
					   xprt_conn_own_brs(c));
		n++;
	}
	if (ha != NULL && hlen != 0) {
		/* rdma_data: the XDR of opaque<> (length, bytes, padding). */
		uint32_t pad = (uint32_t)rpcr_xdr_roundup(hlen) - hlen;

		rpcr_xdr_store32(habuf, hlen);
		memcpy(habuf + 4, ha, hlen);
		memset(habuf + 4 + hlen, 0, pad);
		props[n++] = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH,
							 4 + hlen + pad, habuf};
	}
	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = c->wire->vers;
	h.credit = credit;
	h.type = XPRT_HT_PROPS;
	h.props = (struct rpcr_proto_v2_propset){props, n, RTE_DIM(props)};
	/* (HOSTAUTH is at most RPCR_XPRT_HOSTAUTH_MAX: the set fits the 1024 bytes of a first
	 * message.) */
	rc = xprt_send_hdr(c, &h);
	if (rc != 0)
		return rc;
	c->p->stats.props_sent++;
	return 0;
}

/* The value of uint32 property @p (its default when empty). */
static uint32_t
prop_u32(const struct rpcr_proto_v2_prop *p)
{
	return p->len == 0   ? rpcr_proto_v2_prop_default(p->which)
	       : p->len >= 4 ? rpcr_xdr_load32(p->data)
			     : 0;
}

/* Whether rpcr can live with property @p (the decoder has checked its type). */
static bool
prop_ok(const struct rpcr_proto_v2_prop *p)
{
	switch (p->which) {
	case RPCR_PROTO_V2_PROP_SBSIZ:
	case RPCR_PROTO_V2_PROP_RBSIZ:
		return prop_u32(p) >= PROPS_MIN_BSIZ;
	case RPCR_PROTO_V2_PROP_RSSIZ:
		return prop_u32(p) >= PROPS_MIN_SSIZ;
	case RPCR_PROTO_V2_PROP_RCSIZ:
		return prop_u32(p) != 0;
	default:
		return true;
	}
}

/* Apply property @p of the peer's; a HOSTAUTH's body in @ha, @hlen. */
static void
prop_take(struct xprt_conn *c, const struct rpcr_proto_v2_prop *p, const uint8_t **ha,
	  uint32_t *hlen)
{
	switch (p->which) {
	case RPCR_PROTO_V2_PROP_SBSIZ:
		c->v2_peer.sbsiz = prop_u32(p);
		break;
	case RPCR_PROTO_V2_PROP_RBSIZ:
		c->v2_peer.rbsiz = prop_u32(p);
		break;
	case RPCR_PROTO_V2_PROP_RSSIZ:
		c->v2_peer.rssiz = prop_u32(p);
		break;
	case RPCR_PROTO_V2_PROP_RCSIZ:
		c->v2_peer.rcsiz = prop_u32(p);
		break;
	case RPCR_PROTO_V2_PROP_BRS:
		c->v2_peer.brs = prop_u32(p); /* (its range checked by the decoder) */
		break;
	case RPCR_PROTO_V2_PROP_HOSTAUTH:
		/* The opaque's body after its length word (checked by the decoder); an empty one
		 * is handed over as such (not NULL: it was sent). */
		c->v2_peer.hostauth = true;
		*hlen = p->len != 0 ? rpcr_xdr_load32(p->data) : 0;
		*ha = p->len != 0 ? p->data + 4 : p->data != NULL ? p->data : (const uint8_t *)"";
		break;
	default:
		break; /* (unknown: ignored, §6.3.4) */
	}
}

/* The peer's set is complete: the application judges its HOSTAUTH (@ha, @hlen; NULL when it
 * sent none). @return false: the connection goes. */
static bool
hostauth_judge(struct xprt_conn *c, const uint8_t *ha, uint32_t hlen)
{
	int (*check)(const void *, uint32_t, void *) = NULL;
	void *arg = NULL;
	int rc;

	if (c->server && c->svc != NULL) {
		check = c->svc->conf.hostauth_check;
		arg = c->svc->conf.hostauth_arg;
	} else if (!c->server && c->clnt != NULL) {
		check = c->clnt->conf.hostauth_check;
		arg = c->clnt->conf.hostauth_arg;
	}
	if (check == NULL)
		return true;
	rc = check(ha, hlen, arg);
	if (rc == 0)
		return true;
	XPRT_LOG(NOTICE, "%s: conn %" PRIu64 ": the peer's HOSTAUTH (%u bytes) refused (%d)",
		 c->p->name, c->id, hlen, rc);
	return false;
}

uint32_t
xprt_props_recv(struct xprt_conn *c, const struct xprt_hdr *h, bool responder)
{
	const uint8_t *ha = NULL;
	uint32_t i, hlen = 0;

	if (c->v2_peer.complete)
		return responder ? XPRT_HERR_HTYPE : XPRT_HERR_NONE;
	/* §7.2.2: a value not taken discards the message, none of its settings applied. */
	for (i = 0; i < h->props.n; i++) {
		if (!prop_ok(&h->props.props[i])) {
			XPRT_LOG(INFO,
				 "%s: conn %" PRIu64
				 ": transport property %u of %u bytes not taken: "
				 "the set discarded",
				 c->p->name, c->id, h->props.props[i].which, h->props.props[i].len);
			return responder ? XPRT_HERR_PROPVAL : XPRT_HERR_NONE;
		}
	}
	for (i = 0; i < h->props.n; i++)
		prop_take(c, &h->props.props[i], &ha, &hlen);
	c->p->stats.props_recv++;
	c->v2_peer.received = true;
	c->v2_peer.complete = !(h->flags & XPRT_HF_TPMORE);
	xprt_props_apply(c);
	XPRT_LOG(DEBUG,
		 "%s: conn %" PRIu64 ": peer's properties%s: send %u, receive %u, segment %u, "
		 "segments %u, reverse direction %u: inline send %u recv %u",
		 c->p->name, c->id, c->v2_peer.complete ? "" : " (more to come)", c->v2_peer.sbsiz,
		 c->v2_peer.rbsiz, c->v2_peer.rssiz, c->v2_peer.rcsiz, c->v2_peer.brs,
		 c->inline_send, c->inline_recv);
	/* HOSTAUTH judged as it comes; a set complete without one, then (no HOSTAUTH). */
	if ((ha != NULL || (c->v2_peer.complete && !c->v2_peer.hostauth)) &&
	    !hostauth_judge(c, ha, hlen))
		xprt_conn_fail(c, "HOSTAUTH refused");
	return XPRT_HERR_NONE;
}
