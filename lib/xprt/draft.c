/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The 2005 draft's extras (draft-ietf-nfsv4-rpcrdma-01, February 2005), which RFC 8166 dropped:
 * RDMA_MSGP (inline data padded to the receiver's alignment), RDMA_DONE (a reply's results left
 * in read chunks until the requester says it has read them) and CONF_RDMA (a program a requester
 * asks the responder's configuration with). This side offers them in the rpcr block of its CM
 * private data (rpcr_proto_cm_ext) unless configured not to (no_draft); a connection uses them
 * only where both sides offered them. That is the one hook: xprt_conn::features, set once by
 * xprt_pdata_apply() when the connection is set up (and cleared by xprt_draft_off() when it turns
 * out to speak version 2, before any message is read) and read only through xprt_draft_has().
 * Version 1 without the extension, and version 2, leave it 0, and nothing here runs.
 *
 * What this file owns, and when it runs:
 *   - RDMA_DONE at a responder: the replies waiting for it (xprt_conn::dones), each with the
 *     registrations and buffers that expose its results. xprt_draft_expose() takes an entry
 *     when a reply with read chunks is built; the entry goes when its RDMA_DONE comes
 *     (xprt_draft_done_recv()), at its deadline (xprt_draft_dones_expire(), from the poller's
 *     timers), when the reply is never sent, or with the connection;
 *   - RDMA_DONE at a requester: sending it once a reply's results are read
 *     (xprt_draft_send_done()), and the credit each holds at the responder until a later reply
 *     shows it processed (xprt_conn::done_seqs: the requester's send limit counts them,
 *     xprt_draft_dones_out());
 *   - CONF_RDMA: the call a requester makes first on a new connection (xprt_draft_conf_call():
 *     the requester queues it), whose answer may lower the inline size and tells the
 *     alignment RDMA_MSGP pads to; and the program every responder that speaks the draft serves
 *     (xprt_draft_svc_register()).
 * RDMA_MSGP needs nothing of its own: the requester and the responder choose it where they
 * build a header (when xprt_draft_has(c, XPRT_F_MSGP)), and msg.c pads and unpads.
 */

#include <string.h>

#include <rte_malloc.h>

#include "xprt_internal.h"

void
xprt_draft_off(struct xprt_conn *c)
{
	c->features = 0;
}

/* ---- RDMA_DONE: the responder ---- */

int
xprt_draft_responder_init(struct xprt_conn *c, uint32_t n)
{
	c->dones = rte_zmalloc("rpcr_xprt", sizeof(*c->dones) * n, 0);
	c->ndones = c->dones != NULL ? n : 0;
	c->ndones_used = 0;
	return c->dones != NULL ? 0 : -ENOMEM;
}

void
xprt_draft_done_release(struct xprt_conn *c, struct xprt_done *d)
{
	uint32_t i;

	for (i = 0; i < d->nmrs; i++)
		rpcr_rdev_mr_dereg(d->mrs[i]);
	for (i = 0; i < d->nheld; i++)
		rte_pktmbuf_free(d->held[i]);
	d->nmrs = 0;
	d->nheld = 0;
	d->used = false;
	c->ndones_used--;
}

void
xprt_draft_done_recv(struct xprt_conn *c, uint32_t xid)
{
	uint32_t i;

	c->p->stats.dones_recv++;
	for (i = 0; i < c->ndones; i++) {
		if (c->dones[i].used && c->dones[i].xid == xid) {
			xprt_draft_done_release(c, &c->dones[i]);
			return;
		}
	}
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": RDMA_DONE for xid 0x%08x, which has none out",
		 c->p->name, c->id, xid);
}

/* (@return the earliest deadline of those left, UINT64_MAX: none.) */
uint64_t
xprt_draft_dones_expire(struct xprt_conn *c, uint64_t now, bool all)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < c->ndones && c->ndones_used != 0; i++) {
		struct xprt_done *d = &c->dones[i];

		if (!d->used)
			continue;
		if (!all && d->deadline > now) {
			next = RTE_MIN(next, d->deadline);
			continue;
		}
		if (!all) {
			c->p->stats.done_timeouts++;
			XPRT_LOG(WARNING,
				 "%s: conn %" PRIu64 ": no RDMA_DONE for xid 0x%08x: "
				 "released",
				 c->p->name, c->id, d->xid);
		}
		xprt_draft_done_release(c, d);
	}
	return next;
}

int
xprt_draft_expose(const struct rpcr_svc_req *r, struct xprt_done **out)
{
	struct xprt_conn *c = r->conn;
	struct rpcr_proto_seg segs[XPRT_MAX_SEGS];
	struct xprt_done *d = NULL;
	uint32_t i, k;
	int n;

	*out = NULL;
	for (i = 0; i < r->nres; i++)
		if (r->resb[i].chunk == XPRT_CHUNK_READ)
			break;
	if (i == r->nres)
		return 0;
	for (i = 0; i < c->ndones; i++) {
		if (!c->dones[i].used) {
			d = &c->dones[i];
			break;
		}
	}
	if (d == NULL) {
		XPRT_LOG(WARNING, "%s: conn %" PRIu64 ": %u replies wait for RDMA_DONE already",
			 c->p->name, c->id, c->ndones);
		return -ENOSPC;
	}
	d->used = true;
	d->xid = r->xid;
	d->nmrs = 0;
	d->nheld = 0;
	d->nreads = 0;
	d->deadline = rte_rdtsc() + xprt_us_to_tsc(c->p, XPRT_DONE_TIMEOUT_US);
	xprt_due_conn(c->p, d->deadline);
	c->ndones_used++;
	for (i = 0; i < r->nres; i++) {
		const struct xprt_res_bulk *b = &r->resb[i];

		if (b->chunk != XPRT_CHUNK_READ)
			continue;
		n = xprt_expose(c->p->pd, b->m, b->off, b->len, RPCR_RDEV_ACCESS_REMOTE_READ,
				d->mrs, &d->nmrs, XPRT_TX_SEGS, segs, XPRT_MAX_SEGS);
		if (n < 0 || d->nreads + (uint32_t)n > XPRT_TX_SEGS) {
			XPRT_LOG(WARNING, "%s: xid 0x%08x: cannot expose a result of %u bytes: %s",
				 c->p->name, r->xid, b->len, strerror(n < 0 ? -n : E2BIG));
			xprt_draft_done_release(c, d);
			return n < 0 ? n : -E2BIG;
		}
		for (k = 0; k < (uint32_t)n; k++) {
			d->reads[d->nreads].position = b->pos;
			d->reads[d->nreads].seg = segs[k];
			d->nreads++;
		}
	}
	*out = d;
	return 0;
}

/* ---- RDMA_DONE: the requester ---- */

int
xprt_draft_requester_init(struct xprt_conn *c, uint32_t nslots)
{
	c->done_mask = nslots - 1;
	c->done_head = 0;
	c->done_tail = 0;
	c->done_seqs = rte_zmalloc("rpcr_xprt", sizeof(*c->done_seqs) * nslots, 0);
	return c->done_seqs != NULL ? 0 : -ENOMEM;
}

void
xprt_draft_dones_seen(struct xprt_conn *c, uint32_t seq)
{
	while (c->done_head != c->done_tail &&
	       (int32_t)(seq - c->done_seqs[c->done_head & c->done_mask]) > 0)
		c->done_head++;
}

bool
xprt_draft_send_done(struct xprt_conn *c, uint32_t xid, uint32_t credit)
{
	struct xprt_hdr h;
	struct rte_mbuf *m;
	ssize_t n;

	if (c == NULL || c->state != XPRT_CONN_CONNECTED)
		return false;
	m = xprt_buf_get(c);
	if (m == NULL) {
		XPRT_LOG(WARNING, "%s: no buffer for RDMA_DONE of xid 0x%08x", c->p->name, xid);
		return false;
	}
	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = c->wire->vers;
	h.credit = credit;
	h.type = XPRT_HT_DONE;
	n = c->wire->encode(&h, rte_pktmbuf_mtod(m, uint8_t *), XPRT_BUF_DATA);
	if (n > 0) {
		m->data_len = (uint16_t)n;
		m->pkt_len = (uint32_t)n;
	}
	if (n <= 0 || xprt_send1(c, m, 0, false) != 0) {
		xprt_buf_put(c, m);
		return false;
	}
	/* It takes a credit at the server until a later call is answered. */
	if (c->done_tail - c->done_head > c->done_mask)
		c->done_head++;
	c->done_seqs[c->done_tail++ & c->done_mask] = xprt_sq_last(c);
	c->p->stats.dones_sent++;
	return true;
}

/* ---- CONF_RDMA (2005 draft section 6): the requester ---- */

static int
conf_enc(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_clnt *cl = args;
	struct rpcr_proto_conf_rdma_req req = {
		.maxcall_sendsize = cl->conn != NULL ? cl->conn->inline_send : 0,
		.maxreply_sendsize = cl->conn != NULL ? cl->conn->inline_recv : 0,
		.maxrdmaread = 16,
	};

	return rpcr_proto_conf_rdma_req_encode(&m->enc, &req);
}

static int
conf_dec(struct rpcr_msg *m, void *res)
{
	return rpcr_proto_conf_rdma_reply_decode(&m->dec, res);
}

/* The answer: the server's inline size for calls (if smaller than negotiated) and the
 * alignment its receives guarantee (what RDMA_MSGP pads to). */
static void
conf_done(struct rpcr_call *call)
{
	struct rpcr_clnt *cl = call->user;
	const struct rpcr_proto_conf_rdma_reply *rep = call->res;
	struct xprt_conn *c = cl->conn;
	uint32_t align = rep->align;

	if (call->status != 0 || c == NULL) {
		XPRT_LOG(DEBUG, "%s: CONF_RDMA: %d", cl->p->name, call->status);
		return;
	}
	/* Alignments that make sense for padding: powers of two up to a page. */
	if (align > 1 && align <= 4096 && (align & (align - 1)) == 0)
		c->peer_align = align;
	if (rep->maxcall_sendsize >= XPRT_MIN_INLINE && rep->maxcall_sendsize < c->inline_send)
		xprt_conn_inline_send(c, rep->maxcall_sendsize);
	XPRT_LOG(DEBUG, "%s: CONF_RDMA: server takes calls up to %u bytes inline, align %u",
		 cl->p->name, rep->maxcall_sendsize, align);
}

void
xprt_draft_conf_call(struct rpcr_clnt *cl, struct rpcr_call *call,
		     struct rpcr_proto_conf_rdma_reply *rep)
{
	memset(call, 0, sizeof(*call));
	call->proc = RPCR_PROTO_CONF_RDMA_PROC;
	call->encode = conf_enc;
	call->args = cl;
	call->decode = conf_dec;
	call->res = rep;
	call->done = conf_done;
	call->user = cl;
}

/* ---- CONF_RDMA: the program a responder that speaks the draft serves ---- */

static enum rpcr_svc_verdict
conf_null(struct rpcr_svc_req *r)
{
	RTE_SET_USED(r);
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
conf_rdma(struct rpcr_svc_req *r)
{
	struct rpcr_proto_conf_rdma_req req;
	struct rpcr_proto_conf_rdma_reply rep;
	struct xprt_conn *c = r->conn;

	if (rpcr_proto_conf_rdma_req_decode(&r->args.dec, &req) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	/* A client that takes smaller inline replies than it said in its private data. */
	if (req.maxreply_sendsize >= XPRT_MIN_INLINE && req.maxreply_sendsize < c->inline_send)
		xprt_conn_inline_send(c, req.maxreply_sendsize);
	rep.maxcall_sendsize = c->inline_recv;
	rep.align = XPRT_MSGP_ALIGN;
	rep.maxrdmaread = 16;
	if (rpcr_proto_conf_rdma_reply_encode(&r->res.enc, &rep) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static const struct rpcr_svc_proc conf_procs[] = {
	{.proc = 0, .handler = conf_null},
	{.proc = RPCR_PROTO_CONF_RDMA_PROC, .handler = conf_rdma},
};

int
xprt_draft_svc_register(struct rpcr_svc *s)
{
	struct rpcr_svc_prog pg = {.prog = RPCR_PROTO_CONF_RDMA_PROG,
				   .vers = RPCR_PROTO_CONF_RDMA_VERS,
				   .procs = conf_procs,
				   .nprocs = RTE_DIM(conf_procs)};

	return rpcr_svc_register(s, &pg);
}
