/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Connections: the queue pair, its receive buffers, the RFC 8797 private data, failure and
 * teardown. Client and server logic lives in clnt.c and
 * svc.c; this file moves buffers.
 *
 * Receives: buffers of the message pool, each holding one inline message, posted in batches of
 * XPRT_RECV_BATCH and remembered in posting order (an RC receive queue completes in order), so
 * that teardown frees exactly those still posted. A consumed buffer that nobody else holds is
 * reposted as it is, without a trip through the mempool.
 *
 * Sends go through the connection's send queue (sq.h, sq.c), which nothing else writes: WRs
 * numbered in order, each with an entry naming its owner, completed by sequence number, posted
 * with one doorbell per connection at the poll's flush step. An inline call a client sends from a
 * request slot's own buffer leaves its entry empty: the reply says the device is done with that
 * buffer, and a call that completes without one hands it to the send queue (clnt.c,
 * fbuf_release(), xprt_sq_adopt()).
 */

#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

#include "sq.h"

static void *
zalloc(size_t n)
{
	return rte_zmalloc("rpcr_xprt", n, RTE_CACHE_LINE_SIZE);
}

struct xprt_conn *
xprt_conn_new(struct rpcr_xprt_poller *p, uint32_t recv_target, uint32_t recv_size, uint32_t nsreqs,
	      bool srq)
{
	struct rpcr_rdev_qp_attr attr;
	struct xprt_conn *c;
	uint32_t rq_size, i;

	/* The straight-line paths' lines (xprt_internal.h), on a line-aligned allocation. */
#define CONN_LINE(f) (offsetof(struct xprt_conn, f) / 64) /* (laid out for 64-byte lines) */
	RTE_BUILD_BUG_ON(CONN_LINE(p) != 0 || CONN_LINE(vops) != 0 || CONN_LINE(bytes_in) != 0 ||
			 CONN_LINE(sq) != 1 || CONN_LINE(recv_floor) != 1 || CONN_LINE(rq) != 1 ||
			 CONN_LINE(done_head) != 2 || CONN_LINE(svc) != 2 ||
			 CONN_LINE(nsreqs) != 3 || CONN_LINE(srq_pend_at) != 3);
#undef CONN_LINE
	c = zalloc(sizeof(*c));
	if (c == NULL)
		goto nomem;
	c->p = p;
	c->id = ++p->next_conn_id;
	c->recv_target = recv_target;
	c->recv_size = recv_size;
	xprt_props_v1(c); /* (no segment limits until a version says otherwise) */
	/* (Room for the receives a server's reverse-direction client adds, RFC 8167.) */
	rq_size = rte_align32pow2(recv_target + XPRT_RECV_BATCH + XPRT_BC_SLOTS);
	c->rq = zalloc(sizeof(*c->rq) * rq_size);
	c->rwr = zalloc(sizeof(*c->rwr) * rq_size);
	c->rsge = zalloc(sizeof(*c->rsge) * rq_size);
	/* (From the shared receive queue: none kept per connection, the poller keeps them.) */
	c->recycle_cap = srq ? 0 : 2 * rq_size;
	c->recycle = srq ? NULL : zalloc(sizeof(*c->recycle) * c->recycle_cap);
	c->rq_mask = rq_size - 1;
	if (c->rq == NULL || c->rwr == NULL || c->rsge == NULL || (!srq && c->recycle == NULL) ||
	    xprt_sq_init(c) != 0)
		goto nomem;
	/* (A server of the shared receive queue signals more often while its send queue holds
	 * buffers: xprt_sq_own().) */
	for (i = 0; i < rq_size; i++) {
		c->rsge[i].length = recv_size;
		c->rwr[i].sg_list = &c->rsge[i];
		c->rwr[i].num_sge = 1;
	}
	TAILQ_INIT(&c->waiting);
	if (nsreqs != 0) {
		c->nsreqs = nsreqs;
		c->rring = zalloc(sizeof(*c->rring) * (srq ? XPRT_SRQ_KEEP : XPRT_RRING));
		if (c->rring == NULL)
			goto nomem;
		c->rring_mask = (uint16_t)((srq ? XPRT_SRQ_KEEP : XPRT_RRING) - 1);
	}

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.max_send_wr = XPRT_SQ_DEPTH + (p->mw_access != 0 ? XPRT_MW_MAX : 0); /* (sq.h) */
	attr.max_recv_wr = rq_size; /* (with the SRQ: shm's completion slots for it) */
	attr.max_send_sge = RTE_MIN(RTE_MAX(p->info.max_sge, 1u), 16u);
	attr.max_recv_sge = 1;
	attr.srq = srq ? p->srq.srq : NULL;
	/* A server's replies from the shared receive queue's buffers: the short ones inline. */
	if (srq && nsreqs != 0)
		attr.max_inline = RTE_MIN(p->info.max_inline, XPRT_INLINE_ASK);
	c->qp = rpcr_rdev_qp_create(p->pd, &attr);
	if (c->qp == NULL) {
		XPRT_LOG(ERR, "%s: QP: %s", p->name, rte_strerror(rte_errno));
		xprt_conn_free(c);
		return NULL;
	}
	c->qp->user = c;
	c->inline_free =
		attr.max_inline != 0 ? RTE_MIN(c->qp->attr.max_inline, XPRT_INLINE_ASK) : 0;
	xprt_reg_conn_init(c);
	/* Room on the dirty list for every connection. */
	if (p->nconns + 1 > p->dirty_cap) {
		uint32_t cap = RTE_MAX(16u, p->dirty_cap * 2);
		struct xprt_conn **d = rte_realloc(p->dirty, sizeof(*d) * cap, 0);

		if (d == NULL) {
			rpcr_rdev_qp_destroy(c->qp);
			c->qp = NULL;
			goto nomem;
		}
		p->dirty = d;
		p->dirty_cap = cap;
	}
	p->nconns++;
	xprt_poller_burst_update(p);
	TAILQ_INSERT_TAIL(&p->conns, c, next);
	return c;

nomem:
	xprt_conn_free(c);
	rte_errno = ENOMEM;
	return NULL;
}

/* A request more for @p's pool (free, holding nothing, first on the free list). */
struct rpcr_svc_req *
xprt_sreq_make(struct rpcr_xprt_poller *p)
{
	struct rpcr_svc_req *r;

	/* The straight-line path's lines (xprt_internal.h), on a line-aligned allocation. */
#define SREQ_LINE(f) (offsetof(struct rpcr_svc_req, f) / 64)
	RTE_BUILD_BUG_ON(SREQ_LINE(state) != 0 || SREQ_LINE(nrchunks) != 0 ||
			 SREQ_LINE(msgp) != 1 || SREQ_LINE(free_next) != 1 ||
			 offsetof(struct rpcr_svc_req, args) != 128 ||
			 offsetof(struct rpcr_svc_req, res) + sizeof(struct rpcr_msg) > 5 * 64 ||
			 offsetof(struct rpcr_svc_req, hdr) != 5 * 64 ||
			 offsetof(struct xprt_hdr, chunks.has_reply) >= 64);
#undef SREQ_LINE
	r = zalloc(sizeof(*r));

	if (r == NULL) {
		XPRT_LOG(ERR, "%s: no memory for a request", p->name);
		return NULL;
	}
	r->args.owner = r;
	r->args.kind = XPRT_MSG_CALL_DEC;
	r->res.owner = r;
	r->res.kind = XPRT_MSG_REPLY_ENC;
	rpcr_proto_chunks_init(&r->hdr.chunks, r->hdr_reads, XPRT_RX_READS, r->hdr_writes,
			       XPRT_RX_WRITES, r->hdr_segs, XPRT_RX_SEGS);
	r->all_next = p->sreq_all;
	p->sreq_all = r;
	r->free_next = p->sreq_pool;
	p->sreq_pool = r;
	return r;
}

/* Free the structure (the QP is gone, nothing is posted). */
void
xprt_conn_free(struct xprt_conn *c)
{
	if (c == NULL)
		return;
	xprt_clnt_conn_gone(c); /* a server's reverse-direction client loses its connection */
	xprt_svc_unlist(c);     /* (at teardown already, unless a request waited since) */
	xprt_reg_conn_fini(c);
	xprt_cap_conn_free(c);
	rte_free(c->rq);
	rte_free(c->rwr);
	rte_free(c->rsge);
	rte_free(c->recycle);
	xprt_sq_free(c);
	rte_free(c->rring);
	rte_free(c->dones);
	rte_free(c->done_seqs);
	rte_free(c);
}

/* ---- receives ---- */

/*
 * Post up to one burst of receives, from slot rq_tail on to the end of the ring at most; a slot
 * whose buffer came back untouched posts its WR as it was. @return how many were posted.
 */
static uint32_t
replenish_burst(struct xprt_conn *c, uint32_t want)
{
	uint32_t s0 = c->rq_tail & c->rq_mask;
	uint32_t n, i;
	uint16_t done;

	want = RTE_MIN(want, RTE_MIN(XPRT_RECV_BATCH * 2, c->rq_mask + 1 - s0));
	for (n = 0; n < want; n++) {
		uint32_t s = s0 + n;
		struct rte_mbuf *m;

		if (likely(xprt_rq_idle(c, s))) {
			c->rq[s] = xprt_rq_buf(c, s);
			continue;
		}
		m = xprt_buf_get(c);
		if (unlikely(m == NULL))
			break;
		c->rsge[s].addr = rte_pktmbuf_mtod(m, uintptr_t);
		c->rsge[s].lkey = rpcr_chunk_lkey(m);
		c->rwr[s].wr_id = (uint64_t)(uintptr_t)m;
		c->rq[s] = m;
	}
	if (n == 0)
		return 0;
	done = rpcr_rdev_post_recv(c->qp, &c->rwr[s0], (uint16_t)n);
	/* Not posted (the QP failed): the slots keep them, for teardown to free. */
	for (i = done; i < n; i++)
		xprt_rq_set_idle(c, s0 + i);
	c->rq_tail += done;
	return done;
}

/*
 * Bring the posted receives back to the target, a batch at a time; at once, whatever the batch,
 * when fewer are posted than the credits the peer may be using (the server grants at most
 * `credits`, the client is granted at most `credits`).
 */
void
xprt_conn_replenish(struct xprt_conn *c)
{
	uint32_t posted = c->rq_tail - c->rq_head;

	if (c->state >= XPRT_CONN_CLOSING || c->srq)
		return;
	while (posted < c->recv_target) {
		uint32_t got = replenish_burst(c, c->recv_target - posted);

		if (got == 0) {
			XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": %u of %u receives posted",
				 c->p->name, c->id, posted, c->recv_target);
			break;
		}
		posted += got;
	}
}

int
xprt_send_hdr(struct xprt_conn *c, const struct xprt_hdr *h)
{
	struct rte_mbuf *m;
	ssize_t len;

	if (c->state >= XPRT_CONN_CLOSING || !xprt_sq_room(c, 1))
		return -EAGAIN;
	m = xprt_buf_get(c);
	if (m == NULL)
		return -ENOMEM;
	len = c->wire->encode(h, rte_pktmbuf_mtod(m, uint8_t *), XPRT_MIN_INLINE);
	if (len < 0) {
		xprt_buf_put(c, m);
		return -EINVAL;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	xprt_send1_room(c, m, 0, false);
	return 0;
}

void
xprt_conn_recv_size(struct xprt_conn *c, uint32_t len)
{
	uint32_t i;

	/* (A slot's WR points at its entry: the next post of it, a new buffer or the same one
	 * again, takes the length.) */
	for (i = 0; i <= c->rq_mask; i++)
		c->rsge[i].length = len;
	c->recv_size = len;
}

/* ---- failure and teardown ---- */

/* The state changes a connection may make (a bit per destination, by origin): a new one is
 * CONNECTING (a client's) and a server's becomes ACCEPTING at once; either is CONNECTED on the
 * ESTABLISHED event, CLOSING when it fails, CLOSED when torn down (from any state but CLOSED:
 * a client or server destroyed tears its connections down as they are). */
#define CONN_TO(s) (1u << (s))
static const uint8_t conn_legal[XPRT_CONN_NUM_STATES] __rte_unused = {
	[XPRT_CONN_CONNECTING] = CONN_TO(XPRT_CONN_ACCEPTING) | CONN_TO(XPRT_CONN_CONNECTED) |
				 CONN_TO(XPRT_CONN_CLOSING) | CONN_TO(XPRT_CONN_CLOSED),
	[XPRT_CONN_ACCEPTING] = CONN_TO(XPRT_CONN_CONNECTED) | CONN_TO(XPRT_CONN_CLOSING) |
				CONN_TO(XPRT_CONN_CLOSED),
	[XPRT_CONN_CONNECTED] = CONN_TO(XPRT_CONN_CLOSING) | CONN_TO(XPRT_CONN_CLOSED),
	[XPRT_CONN_CLOSING] = CONN_TO(XPRT_CONN_CLOSED),
	[XPRT_CONN_CLOSED] = 0,
};

void
xprt_conn_move(struct xprt_conn *c, enum xprt_conn_state to)
{
	XPRT_CHECK((conn_legal[c->state] & CONN_TO(to)) != 0);
	if (c->state == XPRT_CONN_CLOSING)
		c->p->nclosing--;
	if (to == XPRT_CONN_CLOSING)
		c->p->nclosing++;
	c->state = to;
}

void
xprt_conn_fail(struct xprt_conn *c, const char *why)
{
	if (c->state >= XPRT_CONN_CLOSING)
		return;
	XPRT_LOG(INFO, "%s: conn %" PRIu64 " (%s) closing: %s", c->p->name, c->id,
		 c->server ? "server" : "client", why);
	xprt_conn_move(c, XPRT_CONN_CLOSING);
	if (c->clnt != NULL)
		xprt_clnt_conn_lost(c->clnt);
}

/* Destroy the QP and give back everything it held. Called at the end of a poll (never while
 * completions of this QP may still be in the poller's hands). */
void
xprt_conn_teardown(struct xprt_conn *c)
{
	struct rpcr_xprt_poller *p = c->p;
	uint32_t i;

	xprt_conn_move(c, XPRT_CONN_CLOSED);
	/* Requests given back below must not free the connection under us. */
	c->hold_free = true;
	xprt_srq_conn_detach(c); /* (its receives that come back have no QP: srq.c) */
	if (c->qp != NULL) {
		/* Its windows first (freeing one unbinds it), then the QP: after this no
		 * completion or event names the QP, and the peer reaches nothing. */
		xprt_reg_conn_fini(c);
		rpcr_rdev_qp_destroy(c->qp);
		c->qp = NULL;
	}
	if (c->dirty) {
		for (i = 0; i < p->ndirty; i++) {
			if (p->dirty[i] == c) {
				p->dirty[i] = p->dirty[--p->ndirty];
				break;
			}
		}
		c->dirty = false;
	}
	while (c->rq_head != c->rq_tail)
		rte_pktmbuf_free(c->rq[c->rq_head++ & c->rq_mask]);
	for (i = 0; i <= c->rq_mask; i++) {
		if (xprt_rq_idle(c, i))
			rte_pktmbuf_free(xprt_rq_buf(c, i));
		c->rq[i] = NULL;
	}
	while (c->nrecycle != 0)
		rte_pktmbuf_free(c->recycle[--c->nrecycle]);
	c->recycle_cap = 0; /* what comes back from now on is freed (or the poller's: srq) */
	xprt_cont_reset(c);
	xprt_sq_abort(c);
	for (i = 0; c->rring != NULL && i <= c->rring_mask; i++) {
		rte_pktmbuf_free(c->rring[i].m);
		c->rring[i].m = NULL;
	}
	TAILQ_REMOVE(&p->conns, c, next);
	xprt_svc_unlist(c);
	p->nconns--;
	xprt_poller_burst_update(p);
	c->hold_free = false;
	/* A server's reverse-direction client closed without xprt_conn_fail() (the server is
	 * destroyed): its calls fail like those of a failed connection. */
	if (c->clnt != NULL && c->clnt->conn == c)
		xprt_clnt_conn_lost(c->clnt);
	if (c->svc != NULL)
		xprt_svc_conn_lost(c); /* frees c once no request is out */
	else
		xprt_conn_free(c);
}

/* ---- RFC 8797 private data and rpcr's extension block ---- */

uint8_t
xprt_pdata_build(uint8_t *buf, uint32_t send, uint32_t recv, bool remote_inv, uint32_t features)
{
	struct rpcr_proto_cm cm = {
		.present = true, .remote_inv = remote_inv, .send_size = send, .recv_size = recv};
	struct rpcr_proto_cm_ext x = {.present = true, .features = features};

	rpcr_proto_cm_encode(&cm, buf, RPCR_PROTO_CM_SIZE);
	rpcr_proto_cm_ext_encode(&x, buf + RPCR_PROTO_CM_EXT_OFFSET, RPCR_PROTO_CM_EXT_SIZE);
	return RPCR_PROTO_CM_EXT_OFFSET + RPCR_PROTO_CM_EXT_SIZE;
}

void
xprt_conn_set_wire(struct xprt_conn *c, const struct xprt_wire *w, uint32_t own_send,
		   uint32_t own_recv)
{
	c->wire = w;
	if (w == &xprt_wire_v1) {
		xprt_props_v1(c);
		xprt_conn_inline_send(c, c->inline_send); /* (its straight-line limit again) */
		return;
	}
	/* Version 2: none of the 2005 draft's messages; a requester names the handle it lets the
	 * responder invalidate in each message (rdma_inv_handle, svc.c's reply_inv()), not by RFC
	 * 8797's R bit: peer_inv and remote_inv are version 1's. Inline sizes: RFC 8797's
	 * private data is version 1's; version 2's come from the transport properties, 4096 both
	 * ways until the peer's arrive (§4.2.2, §4.2.3.1: props.c). */
	xprt_draft_off(c);
	c->peer_inv = false;
	c->remote_inv = false;
	xprt_props_reset(c, own_send, own_recv);
}

void
xprt_pdata_apply(struct xprt_conn *c, const uint8_t *pdata, uint8_t len, uint32_t own_send,
		 uint32_t own_recv, bool own_inv, bool send_inv, uint32_t own_features)
{
	struct rpcr_proto_cm cm;
	struct rpcr_proto_cm_ext x;

	/* Absent: the peer's sizes are 1024 and it does not invalidate (RFC 8797 section 4). */
	rpcr_proto_cm_decode(&cm, pdata, len);
	rpcr_proto_cm_ext_decode(&x, pdata, len);
	xprt_conn_inline_send(c, rpcr_proto_cm_threshold(own_send, cm.recv_size));
	c->inline_recv = rpcr_proto_cm_threshold(own_recv, cm.send_size);
	c->remote_inv = own_inv && cm.remote_inv;
	/* Send with Invalidate goes to any peer that set R (the owner of the keys asks for it),
	 * whether this side set it or not, unless this side will not send it (@send_inv). */
	c->peer_inv = send_inv && cm.remote_inv && (c->p->info.caps & RPCR_RDEV_CAP_SEND_INV) != 0;
	c->features = x.present ? (x.features & own_features & XPRT_F_ALL) : 0;
	XPRT_LOG(DEBUG,
		 "%s: conn %" PRIu64 ": peer pdata %s (send %u recv %u R %d), rpcr %s (0x%x): "
		 "inline send %u recv %u, remote invalidation %s, features 0x%x, memory: %s",
		 c->p->name, c->id, cm.present ? "present" : "absent", cm.send_size, cm.recv_size,
		 cm.remote_inv, x.present ? "present" : "absent", x.features, c->inline_send,
		 c->inline_recv, c->remote_inv ? "on" : "off", c->features, c->reg->name);
}
