/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Clients: calls out, replies in.
 *
 * A call goes through the client's waiting list (FIFO) into a slot when the connection is up, a
 * credit is free and a slot is free; it is marshalled (RPC header from a pre-encoded template,
 * the caller's encoder, chunks for DDP-eligible arguments, write chunks for DDP-eligible results,
 * a reply chunk when the reply may not fit inline, a position-zero read chunk when the call does
 * not fit inline) and sent. Memory the server may reach is exposed for this call only (reg.c:
 * windows bound just ahead of the Send, or registrations of the call's own), and invalidated
 * before the call completes, whatever the outcome: a window the server did not invalidate with
 * its Send gets a local invalidation, which the call waits for (INVALIDATING). On connection
 * loss every sent call keeps its slot and xid and is sent again, first, on the next connection.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "xprt_internal.h"

#define CLNT_DEFAULT_CREDITS    32u
#define CLNT_DEFAULT_TIMEOUT_US (30ull * 1000000)

const struct xprt_vops xprt_v1_clnt_ops = {.recv_burst = xprt_clnt_recv_burst};

/* ---- slots ---- */

static inline struct xprt_creq *
slot_get(struct rpcr_clnt *cl)
{
	struct xprt_creq *r = cl->slot_free;

	cl->slot_free = r->free_next;
	cl->nslot_free--;
	r->xid += cl->xid_step; /* the slot's next xid (its index in the low bits) */
	return r;
}

/* The state changes a call slot may make: a bit per destination, by origin (the diagram in
 * xprt_internal.h). Checked in the sanitizer builds (XPRT_CHECK). */
#define CREQ_TO(s) (1u << (s))
static const uint8_t creq_legal[XPRT_CREQ_NUM_STATES] __rte_unused = {
	[XPRT_CREQ_FREE] = CREQ_TO(XPRT_CREQ_FREE) | CREQ_TO(XPRT_CREQ_SENT),
	[XPRT_CREQ_SENT] = CREQ_TO(XPRT_CREQ_FREE) | CREQ_TO(XPRT_CREQ_RESEND) |
			   CREQ_TO(XPRT_CREQ_READING) | CREQ_TO(XPRT_CREQ_INVALIDATING) |
			   CREQ_TO(XPRT_CREQ_OWED),
	[XPRT_CREQ_RESEND] = CREQ_TO(XPRT_CREQ_FREE) | CREQ_TO(XPRT_CREQ_SENT),
	[XPRT_CREQ_READING] = CREQ_TO(XPRT_CREQ_FREE) | CREQ_TO(XPRT_CREQ_RESEND) |
			      CREQ_TO(XPRT_CREQ_INVALIDATING),
	[XPRT_CREQ_INVALIDATING] = CREQ_TO(XPRT_CREQ_FREE) | CREQ_TO(XPRT_CREQ_OWED),
	[XPRT_CREQ_OWED] = CREQ_TO(XPRT_CREQ_FREE),
};

/* A call was put on @cl's waiting or resend list: the client is on its poller's qclnts. */
static __rte_always_inline void
clnt_queued(struct rpcr_clnt *cl)
{
	cl->p->nqueued++;
	if (!cl->queued) {
		cl->queued = true;
		TAILQ_INSERT_TAIL(&cl->p->qclnts, cl, qnext);
	}
}

void
xprt_clnt_unqueue(struct rpcr_clnt *cl)
{
	if (cl->queued) {
		cl->queued = false;
		TAILQ_REMOVE(&cl->p->qclnts, cl, qnext);
	}
}

/*
 * The one place a call slot's state changes (@from is its state now: a constant where the
 * caller knows it, so that the straight-line path's changes fold to a store), with what goes
 * with it: a RESEND slot is on the client's resend list, counted in the poller's nqueued. (The
 * connection's count of calls out is the senders' and the receivers' to keep: a lost
 * connection drops it whole.)
 */
static __rte_always_inline void
creq_move(struct rpcr_clnt *cl, struct xprt_creq *r, enum xprt_creq_state from,
	  enum xprt_creq_state to)
{
	XPRT_CHECK(r->state == from && (creq_legal[from] & CREQ_TO(to)) != 0);
	if (from == XPRT_CREQ_RESEND && to != XPRT_CREQ_RESEND) {
		TAILQ_REMOVE(&cl->resend, r, resend);
		cl->p->nqueued--;
	} else if (to == XPRT_CREQ_RESEND && from != XPRT_CREQ_RESEND) {
		TAILQ_INSERT_TAIL(&cl->resend, r, resend);
		clnt_queued(cl);
		/* (What it took of its connection is that connection's to forget.) */
		r->cont_sends = 0;
		r->cont_extra = 0;
	}
	r->state = to;
}

/* A slot back on the free list, from state @from. */
static __rte_always_inline void
slot_put(struct rpcr_clnt *cl, struct xprt_creq *r, enum xprt_creq_state from)
{
	creq_move(cl, r, from, XPRT_CREQ_FREE);
	r->call = NULL;
	r->free_next = cl->slot_free;
	cl->slot_free = r;
	cl->nslot_free++;
}

/*
 * A call that timed out on the connection it went on has completed (-ETIMEDOUT), but its server
 * may still answer it: until it does, or the connection goes, the slot keeps the call's xid (the
 * reply finds it) and its credit (counted in the connection's calls out), as RFC 8166 section
 * 3.3.1 counts a request out until its reply. Sending another call in that credit could put
 * more calls at the server than it granted (on a shared receive queue, taking a receive another
 * connection's credit holds: an RNR, fatal, once the queue runs dry).
 */
static void
slot_owe(struct rpcr_clnt *cl, struct xprt_creq *r, enum xprt_creq_state from)
{
	creq_move(cl, r, from, XPRT_CREQ_OWED);
	r->call = NULL;
	cl->owed_credits += 1u + r->cont_sends; /* (a continued call's parts: a credit each) */
}

/* Its late reply came (dropped), or its connection went: its credits, the receives kept for a
 * continued reply (cont.c) and the slot are free. */
static void
slot_owed_put(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	if (cl->conn != NULL) {
		cl->conn->outstanding -= 1u + r->cont_sends;
		cl->conn->cont_free += r->cont_extra;
	}
	cl->owed_credits -= 1u + r->cont_sends;
	r->cont_sends = 0;
	r->cont_extra = 0;
	slot_put(cl, r, XPRT_CREQ_OWED);
}

/*
 * The call on @r completes, or goes again on another connection, with no reply seen: its Send
 * may still be read by the device, so its send-queue entry takes the slot's buffer over (and
 * releases it when the device is done); the slot gets another one when it next needs one.
 */
static void
fbuf_release(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	struct xprt_conn *c = cl->conn;

	if (!r->fbuf_busy)
		return;
	r->fbuf_busy = false;
	if (c != NULL && xprt_sq_adopt(c, r->fbuf_seq, r->fbuf)) {
		r->fbuf = NULL;
		r->fbuf_tmpl = false;
	}
	/* (Otherwise its Send has completed: the device is done with the buffer.) */
}

/*
 * RFC 8166 section 4.5.4: a requester that cannot invalidate what it exposed for a call closes
 * the connection before the call completes. The QP goes to the error state at once (the server
 * reaches nothing through it from here on), and the connection is torn down at the end of the
 * poll; the other calls are sent again on the next one.
 */
static void
clnt_fence(struct rpcr_clnt *cl)
{
	struct xprt_conn *c = cl->conn;

	if (c == NULL || c->state >= XPRT_CONN_CLOSING)
		return;
	(void)rpcr_rdev_disconnect(c->qp);
	xprt_conn_fail(c, "a registration could not be invalidated");
}

/* Give back what a call holds with no work request (it was never sent, or its connection is
 * gone: the server reaches nothing through it): registrations first, then buffers. A free slot
 * holds nothing (all counts 0). */
static void
creq_release_slow(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	uint32_t i;

	if (r->regs.n != 0) {
		struct xprt_conn *c = cl->conn;

		(c != NULL ? c->reg : &xprt_reg_mr_ops)->recover(c, &r->regs);
	}
	for (i = 0; i < r->nheld; i++)
		rte_pktmbuf_free(r->held[i]);
	r->nheld = 0;
	if (r->sbuf != NULL) {
		rte_pktmbuf_free(r->sbuf);
		r->sbuf = NULL;
	}
	if (r->rbuf != NULL) {
		rte_pktmbuf_free(r->rbuf);
		r->rbuf = NULL;
	}
	r->nwchunks = 0;
	r->nwrote = 0;
	r->held_any = false;
}

static inline void
creq_release(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	if (unlikely(r->held_any))
		creq_release_slow(cl, r);
}

static inline void
call_complete(struct rpcr_call *call, int status)
{
	struct call_priv *cp = call_priv(call);

	call->status = status;
	cp->clnt = NULL;
	if (call->done_ring != NULL) {
		if (rte_ring_mp_enqueue(call->done_ring, call) == 0)
			return;
		XPRT_LOG(ERR, "call xid 0x%08x: completion ring full", call->xid);
	}
	if (call->done != NULL)
		call->done(call);
}

/* ---- marshalling ---- */

/* A call's binding: its own (rpcr_call::ulb), else the client's for its procedure, else none. */
static inline const struct rpcr_ulb *
call_ulb(const struct rpcr_clnt *cl, const struct rpcr_call *call)
{
	if (unlikely(call->ulb != NULL))
		return call->ulb;
	return call->proc < cl->conf.nulb ? &cl->ulb[call->proc] : NULL;
}

/* A binding's threshold (0, in a call's own binding: the default; the client's table has it
 * filled in already). */
static inline uint32_t
ulb_threshold(const struct rpcr_ulb *u)
{
	return u->threshold != 0 ? u->threshold : 1024u;
}

/* The access a registration of the call needs for the server to invalidate it: this side
 * offered R (RFC 8797), so any server may Send with Invalidate (windows allow it always). */
static inline uint32_t
clnt_inv_access(const struct rpcr_clnt *cl)
{
	return cl->conf.remote_inv ? RPCR_RDEV_ACCESS_REMOTE_INV : 0;
}

/* DDP-eligible argument: a read chunk at its XDR position, or inline. */
int
xprt_clnt_put_arg(struct rpcr_msg *m, const struct rpcr_bulk *b)
{
	struct xprt_creq *r = m->owner;
	struct rpcr_clnt *cl = r->cl;
	struct rpcr_proto_seg segs[XPRT_MAX_SEGS];
	uint32_t pos, padded, i;
	int n, rc;

	if (cl == NULL || m->ulb == NULL || m->nbulk >= m->ulb->args_bulk)
		return -E2BIG;
	rc = rpcr_xdr_enc_u32(&m->enc, b->len);
	if (rc != 0)
		return rc;
	m->nbulk++;
	pos = (uint32_t)rpcr_xdr_enc_pos(&m->enc) + m->vdelta;
	padded = (uint32_t)rpcr_xdr_roundup(b->len);
	/* Inline below the threshold, unless it does not fit in the message buffer at all;
	 * inline always in the reverse direction (RFC 8167 section 2.5) but on version 2 where
	 * the client said BRS GENL. */
	if (b->len == 0 ||
	    (b->len < ulb_threshold(m->ulb) && rpcr_xdr_enc_left(&m->enc) >= padded) ||
	    (unlikely(cl->reverse) && !xprt_conn_rev_chunks(cl->conn))) {
		return xprt_bulk_put_inline(m, b, &r->msgp_used);
	}
	if (r->nheld == XPRT_MAX_BULK)
		return -E2BIG;
	n = xprt_reg_chain(cl->conn, &r->regs, b->m, b->off, b->len,
			   RPCR_RDEV_ACCESS_REMOTE_READ | clnt_inv_access(cl), segs, XPRT_MAX_SEGS);
	if (n < 0)
		return n;
	for (i = 0; i < (uint32_t)n; i++) {
		rc = rpcr_proto_chunks_add_read(&cl->tx.chunks, pos, &segs[i]);
		if (rc != 0)
			return -E2BIG;
	}
	rpcr_chunk_hold(b->m);
	r->held[r->nheld++] = b->m;
	m->vdelta += padded;
	return 0;
}

/* DDP-eligible result: in the write chunk offered for it, or inline. */
int
xprt_clnt_get_res(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b)
{
	struct xprt_creq *r = m->owner;
	uint32_t k = m->nbulk, len;

	if (m->ulb == NULL || k >= m->ulb->res_bulk)
		return -E2BIG;
	if (rpcr_xdr_dec_u32(&m->dec, &len) != 0)
		return -EBADMSG;
	m->nbulk++;
	if (k < r->nwrote) {
		/* The server wrote it into our chunk and says how much. */
		if (len != r->wrote[k])
			return -EBADMSG;
		if (len > max)
			return -E2BIG;
		*b = r->call->res_bulk[k];
		b->len = len;
		return 0;
	}
	if (m->nchunk < r->nrr &&
	    r->rr_pos[m->nchunk] == (uint32_t)rpcr_xdr_dec_pos(&m->dec) + m->vdelta) {
		/* In a read chunk of the reply, pulled already (2005 draft). */
		uint32_t j = m->nchunk++;

		if (r->rr_len[j] != len && r->rr_len[j] != rpcr_xdr_roundup(len))
			return -EBADMSG;
		if (len > max)
			return -E2BIG;
		b->m = r->rr_m[j];
		b->off = 0;
		b->len = len;
		m->vdelta += (uint32_t)rpcr_xdr_roundup(len);
		return 0;
	}
	return xprt_bulk_get_inline(m, len, max, b);
}

/* Size of a reply header echoing write chunks of these segment counts. */
static uint32_t
reply_hdr_size(const struct xprt_creq *r)
{
	uint32_t n = r->cl->conn->wire->plain_len, k;

	for (k = 0; k < r->nwchunks; k++)
		n += 8 + 16 * r->wnsegs[k];
	return n;
}

/*
 * The connection failed while call @r was being posted (a full batch flushed, and the device
 * refused it: xprt_conn_fail() ran xprt_clnt_conn_lost() before @r was SENT): it goes again on
 * the next connection, as those lost with it do.
 */
static void __rte_noinline
clnt_sent_lost(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	fbuf_release(cl, r);
	creq_release(cl, r);
	creq_move(cl, r, XPRT_CREQ_SENT, XPRT_CREQ_RESEND);
}

/* A call that could not be sent: whatever it took is given back. @return @rc */
static int __rte_noinline
clnt_send_fail(struct rpcr_clnt *cl, struct xprt_creq *r, struct rte_mbuf *m, int rc)
{
	cl->conn->cont_free += r->cont_extra;
	r->cont_extra = 0;
	r->held_any = true;
	creq_release(cl, r);
	rpcr_proto_chunks_reset(&cl->tx.chunks);
	xprt_buf_put(cl->conn, m);
	return rc;
}

/*
 * Version 2's continuation (cont.c), as rpcr_clnt_conf::cont_max lets it: the Sends a reply of
 * up to @reply_max bytes may take to us, where more than one and the receives kept for
 * continued replies still have them (else 0 or 1: a reply chunk instead).
 */
static uint32_t
clnt_cont_reply(const struct rpcr_clnt *cl, const struct xprt_conn *c, const struct xprt_creq *r,
		uint32_t reply_max)
{
	uint32_t k;

	if (!c->wire->flag_dir || reply_max > cl->conf.cont_max)
		return 0;
	k = xprt_cont_parts(c->inline_recv, reply_max, reply_hdr_size(r));
	return k <= XPRT_CONT_PARTS && k - 1 <= c->cont_free ? k : 0;
}

/* ... and the Sends a call of @len bytes under a header of @hsize takes, where more than one,
 * within the policy and the credits the server granted (each part takes one; else 0 or 1: a
 * position-zero read chunk instead). A reverse-direction call that may not have chunks (BRS
 * CONT) has no other way: up to a reassembly buffer, whatever the policy. */
static uint32_t
clnt_cont_call(const struct rpcr_clnt *cl, const struct xprt_conn *c, uint32_t len, uint32_t hsize)
{
	uint32_t k, max = unlikely(cl->reverse) && !xprt_conn_rev_chunks(c) ? XPRT_BULK_DATA
									    : cl->conf.cont_max;

	if (!c->wire->flag_dir || len > max)
		return 0;
	k = xprt_cont_parts(c->inline_send, len, hsize);
	return k <= XPRT_CONT_PARTS && c->outstanding + k <= c->send_limit ? k : 0;
}

/* The rest of clnt_send_once(): a call with chunks, padding, or too long for a Send. */
static int __rte_noinline
clnt_send_general(struct rpcr_clnt *cl, struct xprt_creq *r, struct rte_mbuf *m,
		  const struct rpcr_ulb *ulb, const struct rpcr_xdr_msgp *msgp, uint32_t len,
		  enum xprt_creq_state from)
{
	struct xprt_conn *c = cl->conn;
	struct rpcr_call *call = r->call;
	struct xprt_hdr *tx = &cl->tx;
	struct rpcr_proto_seg segs[XPRT_MAX_SEGS];
	struct rte_mbuf *hbuf;
	uint32_t hsize, k, cont = 0;
	uint8_t *p;
	int rc, n;

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	r->held_any = true;
	r->cont_sends = 0;
	r->cont_extra = 0;
	if (from == XPRT_CREQ_FREE)
		r->no_cont = false; /* (a new call: clnt_cont_fallback() sets it for a resend) */
	/* The binding, also for a call without arguments. */
	if (ulb == NULL && call != &cl->conf_call)
		ulb = call_ulb(cl, call);
	/* A reverse-direction call is one Send, no chunks either way (RFC 8167 section 2.5):
	 * its reply comes inline or not at all; on version 2 where the client said BRS GENL,
	 * chunks as in the forward direction (§5.2.5). */
	if (unlikely(cl->reverse) && !xprt_conn_rev_chunks(c))
		goto reverse;

	/*
	 * Write chunks for DDP-eligible results. The server fills them in the order of the
	 * results, so the client offers one for every result up to the last one worth a chunk
	 * (a destination of at least the threshold), small ones before it included.
	 */
	if (ulb != NULL) {
		uint32_t nres =
			RTE_MIN(RTE_MIN((uint32_t)ulb->res_bulk, call->nres_bulk), XPRT_MAX_BULK);
		uint32_t upto = 0;

		for (k = 0; k < nres; k++) {
			const struct rpcr_bulk *b = &call->res_bulk[k];

			if (b->m == NULL || b->len == 0)
				break;
			if (b->len >= ulb_threshold(ulb))
				upto = k + 1;
		}
		for (k = 0; k < upto; k++) {
			const struct rpcr_bulk *b = &call->res_bulk[k];

			n = xprt_reg_chain(c, &r->regs, b->m, b->off, b->len,
					   RPCR_RDEV_ACCESS_LOCAL_WRITE |
						   RPCR_RDEV_ACCESS_REMOTE_WRITE |
						   clnt_inv_access(cl),
					   segs, XPRT_MAX_SEGS);
			if (n < 0) {
				rc = n;
				goto fail;
			}
			rc = rpcr_proto_chunks_add_write(&tx->chunks, segs, (uint32_t)n);
			if (rc != 0) {
				rc = -E2BIG;
				goto fail;
			}
			r->wcap[k] = b->len;
			r->wnsegs[k] = (uint32_t)n;
			r->nwchunks++;
		}
	}

	/* A reply that may be longer than the server may Send us: receives kept for it in parts
	 * (version 2's continuation, cont.c) where the policy and the receives allow, else a
	 * reply chunk. */
	if (call->reply_max != 0 && reply_hdr_size(r) + call->reply_max > c->inline_recv &&
	    !r->no_cont && (k = clnt_cont_reply(cl, c, r, call->reply_max)) > 1) {
		r->cont_extra = (uint16_t)(k - 1);
		c->cont_free -= k - 1;
	} else if (call->reply_max != 0 && reply_hdr_size(r) + call->reply_max > c->inline_recv) {
		uint32_t cap = (uint32_t)rpcr_xdr_roundup(call->reply_max);

		if (cap > XPRT_BULK_DATA) {
			rc = -EMSGSIZE;
			goto fail;
		}
		r->rbuf = rpcr_chunk_alloc(cl->p->bulk);
		if (r->rbuf == NULL) {
			rc = -EAGAIN;
			goto fail;
		}
		r->rbuf->data_len = (uint16_t)cap;
		r->rbuf->pkt_len = cap;
		r->rbuf_cap = cap;
		n = xprt_reg_chain(c, &r->regs, r->rbuf, 0, cap,
				   RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE |
					   clnt_inv_access(cl),
				   segs, XPRT_MAX_SEGS);
		if (n < 0) {
			rc = n;
			goto fail;
		}
		rpcr_proto_chunks_set_reply(&tx->chunks, segs, (uint32_t)n);
	}

reverse:
	tx->xid = r->xid;
	tx->vers = c->wire->vers;
	tx->credit = c->wire->credit_call(cl->conf.credits, 1u + r->cont_extra);
	tx->type = XPRT_HT_MSG;
	tx->flags = 0; /* (a call) */
	tx->inv_handle = 0;
	if (r->msgp_used) {
		if (!rpcr_proto_chunks_empty(&tx->chunks)) {
			rc = -ERESTART;
			goto fail;
		}
		tx->type = XPRT_HT_MSGP;
		tx->align = msgp->align;
		tx->thresh = msgp->thresh;
	}
	hsize = c->wire->size(tx);
	/* (Version 2: a client that said BRS CONT takes a reverse-direction call continued, one
	 * that said GENL a position-zero read chunk too.) */
	if (unlikely(cl->reverse) && hsize + len > c->inline_send && !xprt_conn_rev_chunks(c) &&
	    !(c->wire->flag_dir && c->v2_peer.brs >= RPCR_PROTO_V2_RVRSDIR_CONT && !r->msgp_used &&
	      clnt_cont_call(cl, c, len, hsize) > 1)) {
		cl->p->stats.bcalls_too_long++;
		XPRT_LOG(ERR,
			 "%s: conn %" PRIu64 ": reverse-direction call of %u bytes not sent: "
			 "longer than a Send (%u bytes) with no chunks in this direction (RFC "
			 "8167; version 2 below BRS GENL)",
			 cl->p->name, c->id, hsize + len, c->inline_send);
		rc = -EMSGSIZE;
		goto fail;
	}
	if (hsize + len > c->inline_send && !r->msgp_used &&
	    (cont = clnt_cont_call(cl, c, len, hsize)) > 1) {
		/* A long call in parts (version 2's continuation, cont.c): sent below. */
	} else if (hsize + len > c->inline_send) {
		/* A long call: the whole RPC message in a position-zero read chunk. */
		cont = 0;
		if (r->msgp_used) {
			rc = -ERESTART; /* padding only goes with inline calls */
			goto fail;
		}
		n = xprt_reg_chain(c, &r->regs, m, 0, len,
				   RPCR_RDEV_ACCESS_REMOTE_READ | clnt_inv_access(cl), segs,
				   XPRT_MAX_SEGS);
		if (n < 0) {
			rc = n;
			goto fail;
		}
		/* Position zero goes first in the read list (positions increase along it). */
		if (tx->chunks.nreads + (uint32_t)n > tx->chunks.reads_cap) {
			rc = -E2BIG;
			goto fail;
		}
		memmove(&tx->chunks.reads[n], &tx->chunks.reads[0],
			sizeof(tx->chunks.reads[0]) * tx->chunks.nreads);
		for (k = 0; k < (uint32_t)n; k++)
			tx->chunks.reads[k] =
				(struct rpcr_proto_rseg){.position = 0, .seg = segs[k]};
		tx->chunks.nreads += (uint32_t)n;
		tx->type = XPRT_HT_NOMSG;
		hsize = c->wire->size(tx);
		if (hsize > c->inline_send || hsize > XPRT_HEADROOM) {
			rc = -EMSGSIZE;
			goto fail;
		}
		/* The Send carries the header only; the buffer stays until the reply. */
		m->data_len = 0;
		m->pkt_len = 0;
		rte_mbuf_refcnt_update(m, 1);
		r->sbuf = m;
	} else if (hsize > XPRT_HEADROOM) {
		rc = -EMSGSIZE;
		goto fail;
	}
	/* Version 2: the handle the server may invalidate with its reply (§6.3.1), where this
	 * side lets it (remote_inv: every key of the call registered for it): the reply chunk's,
	 * else the first write chunk's, else the first read segment's; the rest are invalidated
	 * here (xprt_reg_unmap() skips the key the reply's Send with Invalidate names). */
	if (c->wire->flag_dir && cl->conf.remote_inv) {
		const struct rpcr_proto_chunks *ch = &tx->chunks;

		tx->inv_handle = ch->has_reply && ch->reply.nsegs != 0 ? ch->reply.segs[0].handle
				 : ch->nwrites != 0 && ch->writes[0].nsegs != 0
					 ? ch->writes[0].segs[0].handle
				 : ch->nreads != 0 ? ch->reads[0].seg.handle
						   : 0;
	}
	/* Version 2: no more segments in a call's header than the server takes (its RCSIZ,
	 * §5.2.4; no limit on version 1). */
	if (unlikely(tx->chunks.nreads + tx->chunks.nsegs > c->segs_max)) {
		cl->p->stats.calls_too_many_segs++;
		XPRT_LOG(INFO,
			 "%s: conn %" PRIu64 ": call xid 0x%08x not sent: %u segments, the server "
			 "takes %u",
			 cl->p->name, c->id, r->xid, tx->chunks.nreads + tx->chunks.nsegs,
			 c->segs_max);
		rc = -EMSGSIZE;
		goto fail;
	}
	if (cont > 1) {
		/* The headers in a buffer of their own (cont.c); room for every part. */
		hbuf = xprt_buf_get(c);
		k = xprt_reg_unstaged(&r->regs);
		if (hbuf == NULL || !xprt_sq_room(c, 2 * k + cont)) {
			if (hbuf != NULL)
				xprt_buf_put(c, hbuf);
			rc = -EAGAIN;
			goto fail;
		}
		if (k != 0)
			xprt_reg_stage(c, &r->regs);
		xprt_cont_send(c, tx, hbuf, m, len, 0);
		if (unlikely(cl->reverse) && !rpcr_proto_chunks_empty(&tx->chunks))
			cl->p->stats.bcalls_chunks_sent++;
		rpcr_proto_chunks_reset(&tx->chunks);
		creq_move(cl, r, from, XPRT_CREQ_SENT);
		r->sent_seq = xprt_sq_last(c);
		c->outstanding += cont;
		r->cont_sends = (uint16_t)(cont - 1);
		(*cl->st_sent)++;
		if (unlikely(cl->conn != c))
			clnt_sent_lost(cl, r);
		return 0;
	}
	p = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)hsize);
	if (c->wire->encode(tx, p, hsize) != (ssize_t)hsize) {
		rc = -EINVAL;
		goto fail;
	}
	/* The windows' binds just ahead of the Send that carries their keys, room kept for their
	 * invalidations after the reply. */
	k = xprt_reg_unstaged(&r->regs);
	if (k != 0) {
		if (!xprt_sq_room(c, 2 * k + 1)) {
			rc = -EAGAIN;
			goto fail;
		}
		xprt_reg_stage(c, &r->regs);
	}
	rc = xprt_send1(c, m, 0, false);
	if (unlikely(rc != 0)) {
		rc = -EAGAIN;
		goto fail;
	}
	if (unlikely(cl->reverse) && !rpcr_proto_chunks_empty(&tx->chunks))
		cl->p->stats.bcalls_chunks_sent++; /* (BRS GENL) */
	rpcr_proto_chunks_reset(&tx->chunks);
	if (tx->type == XPRT_HT_MSGP)
		cl->p->stats.msgp_sent++;
	creq_move(cl, r, from, XPRT_CREQ_SENT);
	r->sent_seq = xprt_sq_last(c);
	c->outstanding++;
	(*cl->st_sent)++;
	if (unlikely(cl->conn != c))
		clnt_sent_lost(cl, r);
	return 0;

fail:
	return clnt_send_fail(cl, r, m, rc);
}

/*
 * The template's transport header: a plain header of wire @w's version asking the client's
 * credits (the xid patched in per call), ending where the RPC call header starts. Slot buffers
 * holding the template of another version lose it (rare: a connection's version changes).
 */
static void
clnt_tmpl_set(struct rpcr_clnt *cl, const struct xprt_wire *w)
{
	uint32_t i, credit = w->credit_call(cl->conf.credits, 1);

	cl->tmpl_plen = w->plain_len;
	if (w == &xprt_wire_v2)
		xprt_v2_put_plain(cl->tmpl + XPRT_PLAIN_MAX - XPRT_V2_PLAIN, 0, credit, false);
	else
		xprt_v1_put_plain(cl->tmpl + XPRT_PLAIN_MAX - XPRT_V1_PLAIN, 0, credit);
	for (i = 0; cl->slots != NULL && i < cl->nslots; i++)
		cl->slots[i].fbuf_tmpl = false;
}

/*
 * Marshal the slot's call and queue its Send. @return 0, -EAGAIN (no buffer or send-queue room:
 * try again later, nothing changed), or another negative errno (the call fails).
 */
static __rte_always_inline int
clnt_send_once(struct rpcr_clnt *cl, struct xprt_creq *r, bool allow_msgp,
	       enum xprt_creq_state from)
{
	struct xprt_conn *c = cl->conn;
	struct rpcr_call *call = r->call;
	struct xprt_hdr *tx = &cl->tx;
	struct rte_mbuf *m;
	struct rpcr_msg msg;
	uint32_t len;
	uint8_t *p;
	int rc;

	bool own, tmpl, inl, tmpl_kept = true;

	if (unlikely(!xprt_sq_room(c, 1)))
		return -EAGAIN;
	/* (The slot holds nothing and tx has no chunks: both are left empty after use.) */

	/* The slot's own buffer, the template still in it after an earlier inline call. */
	m = r->fbuf;
	tmpl = r->fbuf_tmpl;
	own = true;
	if (likely(m != NULL && !r->fbuf_busy)) {
		/* (Its data_off is set below, where the message's start is known.) */
	} else {
		m = xprt_buf_get(c);
		if (unlikely(m == NULL))
			return -EAGAIN;
		tmpl = false;
		if (r->fbuf == NULL)
			r->fbuf = m;
		else
			own = false; /* (its Send not known done: not reached, see fbuf_release()) */
	}
	/* The client's template: a plain header of the connection's version (used as it is
	 * when the call turns out to need no chunk), then the RPC call header; this xid and
	 * procedure patched in. (The template's first XPRT_PLAIN_MAX bytes go in front whatever
	 * the version: version 1's header is the last 28 of them.) */
	p = (uint8_t *)m->buf_addr + XPRT_HEADROOM;
	if (!tmpl) {
		if (likely(cl->callhdr_len == 40))
			memcpy(p - XPRT_PLAIN_MAX, cl->tmpl, XPRT_PLAIN_MAX + 40);
		else
			memcpy(p - XPRT_PLAIN_MAX, cl->tmpl, XPRT_PLAIN_MAX + cl->callhdr_len);
	}
	/* From here it holds what a general call writes: it stays the slot's only if the call
	 * goes out inline below. */
	r->fbuf_tmpl = false;
	{
		uint32_t xid = rte_cpu_to_be_32(r->xid);

		memcpy(p - cl->tmpl_plen, &xid, 4); /* (every version's first word) */
		memcpy(p, &xid, 4);
	}
	rpcr_xdr_store32(p + 20, call->proc);
	r->msgp_used = false;
	msg.msgp.align = 0;
	msg.ulb = NULL;
	if (call->encode == NULL) {
		/* No arguments: just the call header (no chunk, no padding). */
		len = cl->callhdr_len;
		inl = (call->nres_bulk | call->reply_max) == 0;
	} else {
		m->data_off = XPRT_HEADROOM; /* (bulk items are placed by offset from it) */
		rpcr_xdr_enc_init(&msg.enc, p, XPRT_BUF_DATA);
		msg.enc.p += cl->callhdr_len;
		msg.ulb = call_ulb(cl, call);
		msg.owner = r;
		msg.buf = m;
		msg.vdelta = 0;
		msg.kind = XPRT_MSG_CALL_ENC;
		msg.nbulk = 0;
		if (unlikely(call == &cl->conf_call)) {
			/* The transport's own call: another program, no binding. */
			tmpl_kept = false;
			rpcr_xdr_store32(p + 12, RPCR_PROTO_CONF_RDMA_PROG);
			rpcr_xdr_store32(p + 16, RPCR_PROTO_CONF_RDMA_VERS);
			msg.ulb = NULL;
		} else if (unlikely(cl->conf.msgp_thresh != 0) && allow_msgp && c->peer_align > 1 &&
			   xprt_draft_has(c, XPRT_F_MSGP)) {
			/* Padding counted from the start of the Send, behind a 36-byte
			 * RDMA_MSGP header with no chunk lists (if chunks turn up, the call is
			 * marshalled again without padding). */
			msg.msgp.align = c->peer_align;
			msg.msgp.thresh = cl->conf.msgp_thresh;
			msg.msgp.bias = c->wire->msgp_len;
		}
		rc = call->encode(&msg, call->args);
		if (rc != 0) {
			if (own)
				r->fbuf = NULL;
			return clnt_send_fail(cl, r, m, rc);
		}
		len = (uint32_t)rpcr_xdr_enc_pos(&msg.enc);
		inl = tx->chunks.nreads == 0 && (call->nres_bulk | call->reply_max) == 0 &&
		      !r->msgp_used;
	}

	/* The common call: no chunk anywhere, inline. (The template's version is the
	 * connection's: plain_send is 0 while version 2 is being asked.) */
	if (likely(inl && cl->tmpl_plen + len <= c->plain_send)) {
		/* The template's header is in front already. */
		m->data_off = (uint16_t)(XPRT_HEADROOM - cl->tmpl_plen);
		m->data_len = (uint16_t)(len + cl->tmpl_plen);
		m->pkt_len = len + cl->tmpl_plen;
		if (likely(own)) {
			r->sent_seq = r->fbuf_seq = xprt_send1_post(c, m, true, 0, false);
			r->fbuf_busy = true;
			r->fbuf_tmpl = tmpl_kept;
		} else {
			r->sent_seq = xprt_send1_post(c, m, false, 0, false);
		}
		creq_move(cl, r, from, XPRT_CREQ_SENT);
		c->outstanding++;
		(*cl->st_sent)++;
		if (unlikely(cl->conn != c))
			clnt_sent_lost(cl, r);
		return 0;
	}
	/* The buffer becomes the general path's (an ordinary one, released with the call). */
	m->data_off = XPRT_HEADROOM;
	if (own)
		r->fbuf = NULL;
	return clnt_send_general(cl, r, m, msg.ulb, &msg.msgp, len, from);
}

static int __rte_noinline
clnt_send_unpadded(struct rpcr_clnt *cl, struct xprt_creq *r, enum xprt_creq_state from)
{
	return clnt_send_once(cl, r, false, from);
}

/* Send the call of slot @r (in state @from: FREE, a new call; RESEND, again): SENT when 0. */
static __rte_always_inline int
clnt_send(struct rpcr_clnt *cl, struct xprt_creq *r, enum xprt_creq_state from)
{
	int rc = clnt_send_once(cl, r, true, from);

	/* Padded for an inline call that then needed chunks: once more, without padding. */
	if (unlikely(rc == -ERESTART))
		rc = clnt_send_unpadded(cl, r, from);
	return rc;
}

/* ---- replies ---- */

/* The results of @r's reply: @rpclen bytes of RPC reply at @rpc (in @buf), results from @skip. */
static inline void
results_init(struct rpcr_msg *msg, const struct rpcr_clnt *cl, struct xprt_creq *r,
	     const uint8_t *rpc, uint32_t rpclen, uint32_t skip, struct rte_mbuf *buf)
{
	const struct rpcr_call *call = r->call;

	rpcr_xdr_dec_init(&msg->dec, rpc, rpclen);
	msg->dec.p += skip;
	msg->ulb = call_ulb(cl, call);
	msg->owner = r;
	msg->buf = buf;
	msg->vdelta = 0;
	msg->kind = XPRT_MSG_REPLY_DEC;
	msg->nbulk = 0;
	msg->nchunk = 0;
	msg->msgp.align = 0;
}

/*
 * Finish a call: what it exposed invalidated, results decoded, completion run, slot free. Where
 * windows of it are still bound, their local invalidations are posted and the call waits for
 * them (INVALIDATING), keeping its reply: @p recv (the receive buffer the reply is in, or NULL),
 * which the slot then owns, and the read chunks of a READING slot. @return true then.
 */
static bool
clnt_finish(struct rpcr_clnt *cl, struct xprt_creq *r, int status, const uint8_t *rpc,
	    uint32_t rpclen, struct rte_mbuf *buf, struct rte_mbuf *recv, uint32_t inv_rkey,
	    const struct rpcr_xdr_msgp *msgp)
{
	struct rpcr_call *call = r->call;
	bool fence = false;

	/* RFC 8166 section 4.5.4: a requester invalidates what it exposed before the RPC
	 * completes; one that cannot closes the connection first. */
	if (unlikely(r->regs.n != 0)) {
		int rc;

		if (cl->conn == NULL) {
			xprt_reg_mr_ops.recover(NULL, &r->regs); /* (windows went with it) */
			rc = 0;
		} else {
			rc = xprt_reg_unmap(cl->conn, &r->regs, inv_rkey, r);
		}
		if (rc > 0) {
			r->rr_recv = recv;
			r->rr_rpc = rpc;
			r->rr_rpclen = rpclen;
			r->rr_buf = buf;
			if (msgp != &r->rr_msgp)
				r->rr_msgp = msgp != NULL ? *msgp : (struct rpcr_xdr_msgp){0};
			r->rr_status = status;
			creq_move(cl, r, r->state, XPRT_CREQ_INVALIDATING);
			r->held_any = true;
			return true;
		}
		fence = rc < 0;
	}
	call->xid = r->xid;
	if (status == 0) {
		struct rpcr_oncrpc_reply rep;
		ssize_t n;

		/* The common reply: accepted, AUTH_NONE verifier, SUCCESS. */
		if (likely(rpclen >= 24 && rpcr_xdr_load32(rpc) == r->xid &&
			   rpcr_xdr_load32(rpc + 4) == RPCR_ONCRPC_REPLY &&
			   (rpcr_xdr_load32(rpc + 8) | rpcr_xdr_load32(rpc + 12) |
			    rpcr_xdr_load32(rpc + 16) | rpcr_xdr_load32(rpc + 20)) == 0)) {
			n = 24;
			rep.stat = RPCR_ONCRPC_MSG_ACCEPTED;
			rep.accept_stat = RPCR_ONCRPC_SUCCESS;
		} else {
			n = rpcr_oncrpc_reply_decode(&rep, rpc, rpclen);
			if (n < 0 || rep.xid != r->xid)
				n = -1;
		}
		if (n < 0) {
			status = -EBADMSG;
			cl->p->stats.bad_headers++;
		} else if (rep.stat != RPCR_ONCRPC_MSG_ACCEPTED) {
			status = -EACCES;
			call->auth_stat =
				rep.reject_stat == RPCR_ONCRPC_AUTH_ERROR ? rep.auth_stat : 0;
		} else {
			call->accept_stat = rep.accept_stat;
			if (rep.accept_stat != RPCR_ONCRPC_SUCCESS) {
				status = -EREMOTEIO;
			} else if (call->decode != NULL) {
				struct rpcr_msg msg;

				results_init(&msg, cl, r, rpc, rpclen, (uint32_t)n, buf);
				if (msgp != NULL)
					msg.msgp = *msgp;
				if (call->decode(&msg, call->res) != 0)
					status = -EBADMSG;
			}
		}
		(*(cl->reverse ? &cl->p->stats.breplies_recv : &cl->p->stats.replies_recv))++;
	}
	{
		/* The reply chunk's buffer stays until the completion has run (views into it). */
		struct rte_mbuf *rbuf = r->rbuf;
		bool owed;

		r->rbuf = NULL;
		r->nrr = 0;
		creq_release(cl, r);
		/* Timed out on the connection it went on: its credit stays out (slot_owe()). */
		owed = r->owe &&
		       (r->state == XPRT_CREQ_SENT || r->state == XPRT_CREQ_INVALIDATING) &&
		       cl->conn != NULL && !r->rr_stale;
		if ((r->state == XPRT_CREQ_SENT || r->state == XPRT_CREQ_READING ||
		     r->state == XPRT_CREQ_INVALIDATING) &&
		    cl->conn != NULL && !r->rr_stale) {
			/* (A continued call's parts; the receives kept for its reply: cont.c.
			 * Owed: both until its reply, slot_owed_put().) */
			if (!owed) {
				cl->conn->outstanding -= 1u + r->cont_sends;
				cl->conn->cont_free += r->cont_extra;
			}
		}
		if (!owed) {
			r->cont_sends = 0;
			r->cont_extra = 0;
		}
		r->rr_stale = false;
		r->owe = false;
		if (owed)
			slot_owe(cl, r, r->state);
		else
			slot_put(cl, r, r->state);
		if (unlikely(fence))
			clnt_fence(cl);
		call_complete(call, status);
		if (rbuf != NULL)
			rte_pktmbuf_free(rbuf);
	}
	return false;
}

/* ---- replies with read chunks (2005 draft) ---- */

/*
 * The client never has more calls out than the server granted; RDMA_DONEs not yet known
 * processed count too. With no call out at all, one may go (the server keeps receives beyond
 * its grant for that). Kept in send_limit whenever credits or the DONEs change.
 */
static inline void
clnt_limit_update(struct xprt_conn *c)
{
	uint32_t dones = xprt_draft_dones_out(c);

	c->send_limit = c->credits > dones ? c->credits - dones : 1;
}

static inline bool
clnt_may_send(const struct xprt_conn *c)
{
	return c->outstanding < c->send_limit;
}

/* The RDMA_DONEs sent before call number @seq were processed by the server when it answered
 * that call (a connection delivers in order): their credits are free again. */
static void
dones_seen(struct xprt_conn *c, uint32_t seq)
{
	xprt_draft_dones_seen(c, seq);
	clnt_limit_update(c);
}

/* Tell the server it may release what it exposed for the reply to @xid (2005 draft). */
static void
clnt_send_done(struct xprt_conn *c, uint32_t xid)
{
	if (xprt_draft_send_done(c, xid, c != NULL ? c->clnt->conf.credits : 0))
		clnt_limit_update(c);
}

/* Give back the buffers of a READING slot. */
static void
rr_release(struct rpcr_clnt *cl, struct xprt_creq *r)
{
	uint32_t j;

	for (j = 0; j < r->nrr; j++)
		rte_pktmbuf_free(r->rr_m[j]);
	r->nrr = 0;
	r->rr_reads = false;
	r->rr_inv = 0;
	if (r->rr_recv != NULL) {
		if (cl->conn != NULL)
			xprt_buf_put(cl->conn, r->rr_recv);
		else
			rte_pktmbuf_free(r->rr_recv);
		r->rr_recv = NULL;
	}
}

/*
 * The reply (in @rpc, inside @buf, received in @recv) names results to read (@ch, its header's
 * chunk lists, looked at only here): pull them into
 * bulk buffers. @return 0 (reads posted, the slot is READING and owns @recv), or the call's
 * error.
 */
static int
clnt_start_reads(struct rpcr_clnt *cl, struct xprt_creq *r, const struct rpcr_proto_chunks *ch,
		 const uint8_t *rpc, uint32_t rpclen, struct rte_mbuf *buf, struct rte_mbuf *recv,
		 const struct rpcr_xdr_msgp *msgp)
{
	struct xprt_conn *c = cl->conn;
	struct rpcr_proto_seg segs[XPRT_RX_READS];
	struct xprt_xfer x[XPRT_MAX_BULK];
	uint32_t i, j, nw = 0, ns = 0, total = 0;
	int rc = 0;

	/* Chunks: segments sharing a position, positions increasing, none at 0. */
	r->nrr = 0;
	for (i = 0; i < ch->nreads; i++) {
		uint32_t pos = ch->reads[i].position;
		uint64_t len;

		if (pos == 0 || pos % 4 != 0 || (r->nrr != 0 && pos < r->rr_pos[r->nrr - 1]))
			goto bad;
		if (r->nrr == 0 || pos != r->rr_pos[r->nrr - 1]) {
			if (r->nrr == XPRT_MAX_BULK)
				goto bad;
			r->rr_pos[r->nrr] = pos;
			r->rr_len[r->nrr] = 0;
			r->rr_m[r->nrr] = NULL;
			r->nrr++;
		}
		len = (uint64_t)r->rr_len[r->nrr - 1] + ch->reads[i].seg.length;
		if (len > (1u << 30))
			goto bad;
		r->rr_len[r->nrr - 1] = (uint32_t)len;
	}
	for (j = 0; j < r->nrr; j++) {
		r->rr_m[j] = rpcr_chunk_alloc_chain(cl->p->bulk, r->rr_len[j]);
		if (r->rr_m[j] == NULL) {
			rc = -ENOBUFS;
			goto fail;
		}
		total += r->rr_len[j];
	}
	rc = xprt_plan_xfers(c, RPCR_RDEV_WR_READ, x, xprt_read_xfers(ch, r->rr_m, segs, x), 0, &nw,
			     &ns);
	if (rc != 0)
		goto bad;
	if (!xprt_sq_room(c, nw)) {
		rc = -ENOBUFS;
		goto fail;
	}
	r->rr_recv = recv;
	r->rr_rpc = rpc;
	r->rr_rpclen = rpclen;
	r->rr_buf = buf;
	r->rr_msgp = *msgp;
	creq_move(cl, r, XPRT_CREQ_SENT, XPRT_CREQ_READING);
	r->held_any = true;
	r->rr_reads = true;
	cl->p->stats.reply_reads++;
	xprt_count_in(c, total);
	if (nw == 0) {
		/* Only empty chunks: nothing to move. */
		xprt_clnt_wrs_done(r, c, true);
		return 0;
	}
	xprt_sq_commit(c, nw, ns, NULL, NULL, r, true);
	return 0;

bad:
	rc = -EBADMSG;
fail:
	for (j = 0; j < r->nrr; j++)
		rte_pktmbuf_free(r->rr_m[j]);
	r->nrr = 0;
	return rc;
}

/*
 * A call that held its reply while WRs completed (READING: its results read; INVALIDATING: its
 * windows invalidated) completes with @p status, unless windows of it are still to invalidate
 * (then it waits for them, holding all of it); then its reply's buffers go, and the server is
 * told it may let go of what a reply with read chunks exposed (2005 draft).
 */
static void
clnt_held_complete(struct rpcr_clnt *cl, struct xprt_creq *r, int status)
{
	struct rte_mbuf *recv = r->rr_recv, *chains[XPRT_MAX_BULK];
	uint32_t n = r->nrr, j, xid = r->xid, inv = r->rr_inv;
	bool reads = r->rr_reads;

	/* Decode with the read chunks in place; they go after the completion returns. */
	for (j = 0; j < n; j++)
		chains[j] = r->rr_m[j];
	r->rr_recv = NULL;
	r->rr_reads = false;
	r->rr_inv = 0; /* (INVALIDATING: taken into account already) */
	if (clnt_finish(cl, r, status, r->rr_rpc, r->rr_rpclen, r->rr_buf, recv, inv,
			r->rr_msgp.align != 0 ? &r->rr_msgp : NULL)) {
		r->rr_reads = reads;
		return;
	}
	for (j = 0; j < n; j++)
		rte_pktmbuf_free(chains[j]);
	if (recv != NULL) {
		if (cl->conn != NULL)
			xprt_buf_put(cl->conn, recv);
		else
			rte_pktmbuf_free(recv);
	}
	if (reads)
		clnt_send_done(cl->conn, xid);
}

void
xprt_clnt_wrs_done(struct xprt_creq *r, struct xprt_conn *c, bool ok)
{
	struct rpcr_clnt *cl = r->cl;
	int status;

	if (r->state == XPRT_CREQ_INVALIDATING) {
		status = r->rr_status;
		/* (The connection its invalidations went on may be gone and the client on another
		 * already: that one's count of calls out is not this call's.) */
		r->rr_stale = c != cl->conn;
		if (unlikely(!ok) && c == cl->conn && c->state < XPRT_CONN_CLOSING) {
			/* An invalidation failed (its QP with it): the connection closes before the
			 * call completes (RFC 8166 section 4.5.4), as with a registration that could
			 * not be deregistered; the reply stands (the server answered, and nothing
			 * reaches the memory any more), as in Linux's xprtrdma. (Without a failure of
			 * its own, the connection was going anyway.) */
			cl->p->stats.invalidate_failures++;
			XPRT_LOG(ERR, "%s: xid 0x%08x: a window could not be invalidated",
				 cl->p->name, r->xid);
			clnt_fence(cl);
		}
		clnt_held_complete(cl, r, status);
		return;
	}
	if (r->state != XPRT_CREQ_READING) {
		rr_release(cl, r);
		return;
	}
	if (!ok) {
		/* The connection went while reading: the call goes again on the next one. */
		rr_release(cl, r);
		creq_release(cl, r);
		creq_move(cl, r, XPRT_CREQ_READING, XPRT_CREQ_RESEND);
		return;
	}
	clnt_held_complete(cl, r, 0);
}

/*
 * Check a matched reply's transport header against the call @r it answers, before anything of
 * it is applied (RFC 8166 section 4.5: a requester silently discards a reply whose transport
 * header it cannot process, credits included; the call waits on for a good reply, its timeout,
 * or the next connection). Sets where the RPC reply is (@rpc, @rpclen, @buf) and the padding
 * of an RDMA_MSGP. @return NULL, or what is wrong (for the log).
 */
static const char *
reply_check(struct xprt_conn *c, const struct xprt_creq *r, const struct xprt_hdr *rx,
	    const uint8_t **rpc, uint32_t *rpclen, struct rte_mbuf **buf,
	    struct rpcr_xdr_msgp *msgp)
{
	uint32_t k;

	switch (rx->type) {
	case XPRT_HT_MSG:
		break;
	case XPRT_HT_MSGP:
		if (!xprt_draft_has(c, XPRT_F_MSGP))
			return "RDMA_MSGP not negotiated";
		msgp->align = rx->align;
		msgp->thresh = rx->thresh;
		msgp->bias = (uint32_t)(*rpc - rte_pktmbuf_mtod(*buf, const uint8_t *));
		break;
	case XPRT_HT_NOMSG:
		/* The reply is in our reply chunk; its lengths say how much was written. */
		if (!rx->chunks.has_reply || r->rbuf == NULL)
			return "RDMA_NOMSG without the reply chunk offered";
		if (rpcr_proto_wchunk_length(&rx->chunks.reply) > r->rbuf_cap)
			return "a reply chunk longer than offered";
		*rpc = rte_pktmbuf_mtod(r->rbuf, const uint8_t *);
		*rpclen = (uint32_t)rpcr_proto_wchunk_length(&rx->chunks.reply);
		*buf = r->rbuf;
		break;
	case XPRT_HT_ERROR:
		*rpc = NULL;
		*rpclen = 0;
		return NULL;
	default:
		return "not a reply's message type";
	}
	/* An RPC message, this call's (its xid is the transport header's). */
	if (*rpclen < 4 || rpcr_xdr_load32(*rpc) != rx->xid)
		return *rpclen < 4 ? "no RPC message" : "RPC xid unlike the transport header's";
	/* The write list comes back with the lengths the server wrote. */
	if (rx->chunks.nwrites > r->nwchunks)
		return "more write chunks than offered";
	for (k = 0; k < rx->chunks.nwrites; k++)
		if (rpcr_proto_wchunk_length(&rx->chunks.writes[k]) > r->wcap[k])
			return "a write chunk longer than offered";
	if (rx->chunks.nreads != 0 && !xprt_draft_has(c, XPRT_F_DONE))
		return "read chunks in a reply, not negotiated";
	return NULL;
}

static void clnt_conf_start(struct rpcr_clnt *cl);

/* The server's version-1 private data applied to @c (the sizes, invalidation, the 2005 draft's
 * features), and the draft's configuration asked where it offers it. */
static void
clnt_apply_pdata(struct rpcr_clnt *cl, struct xprt_conn *c)
{
	xprt_pdata_apply(c, cl->est_pdata, cl->est_pdata_len, cl->conf.inline_send,
			 cl->conf.inline_recv, cl->conf.remote_inv, true,
			 cl->conf.no_draft ? 0 : XPRT_F_ALL);
}

/*
 * Version 2 refused on @c by ERR_VERS @rx, with a range holding 1, answering its first message
 * (its CONNPROP: no call went out) (§4.2.3.2): version 1 from now on, on this connection as on
 * every later one (never version 2 there again: no negotiation loop). The connection takes
 * version 1's wire and burst and the sizes of the server's private data; its credits restart at
 * 1 as on a new connection (the server's first reply grants them), and the 2005 draft's
 * configuration call goes first where offered.
 */
static void
clnt_v1_fallback(struct rpcr_clnt *cl, struct xprt_conn *c, const struct xprt_hdr *rx)
{
	cl->v1_only = true;
	XPRT_LOG(INFO,
		 "%s: %s speaks RPC-over-RDMA versions %u to %u: version 1 from now on (conn "
		 "%" PRIu64 ")",
		 cl->p->name, cl->addr, rx->vers_low, rx->vers_high, c->id);
	c->v2_negotiating = false;
	c->vops = XPRT_VOPS_V1_CLNT;
	xprt_conn_set_wire(c, &xprt_wire_v1, cl->conf.inline_send, cl->conf.inline_recv);
	clnt_tmpl_set(cl, &xprt_wire_v1);
	clnt_apply_pdata(cl, c);
	c->outstanding = 0; /* (the refused message) */
	c->credits = 1;
	clnt_limit_update(c);
	if (xprt_draft_has(c, XPRT_F_CONF) && call_priv(&cl->conf_call)->clnt == NULL)
		clnt_conf_start(cl);
}

void
xprt_clnt_v2_answer(struct xprt_conn *c, uint32_t credit)
{
	struct rpcr_clnt *cl = c->clnt;

	c->v2_negotiating = false;
	c->outstanding = 0; /* (our CONNPROP: answered) */
	c->credits = RTE_MIN(RTE_MAX(c->wire->credit_granted(credit), 1u), cl->nslots);
	clnt_limit_update(c);
	xprt_props_apply(c); /* (inline_send past the first message's 1024 bytes) */
	/* Our transport characteristics, where asked: after the question's answer (§4.2.1.2:
	 * one message out until then). */
	if (cl->conf.xchar && xprt_xchar_init_send(c) != 0)
		XPRT_LOG(WARNING, "%s: conn %" PRIu64 ": INIT_XCHAR not sent", cl->p->name, c->id);
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": %s answers in version 2", cl->p->name, c->id,
		 cl->addr);
}

/* Ask version 2 on connection @c, just established: this side's CONNPROP alone (§4.2.3,
 * §6.3.4), the one message out until the server answers. @return 0, or a negative errno (the
 * connection cannot be used). */
static int
clnt_v2_ask(struct rpcr_clnt *cl, struct xprt_conn *c)
{
	int rc;

	c->v2_probe_xid = (uint32_t)rte_rand();
	rc = xprt_props_send(c, c->v2_probe_xid, c->wire->credit_call(cl->conf.credits, 1));
	if (rc != 0)
		return rc;
	c->v2_asked = true;
	c->outstanding = 1;
	/* A quarter of the calls' timeout: an unanswered question leaves the calls waiting
	 * time to go on the version-1 connection made then. */
	c->v2_deadline = rte_rdtsc() + cl->timeout_tsc / 4;
	xprt_due_clnt(cl->p, c->v2_deadline);
	return 0;
}

/*
 * A call whose reply this side chose to take continued (cont.c) and which the server answered
 * REPLY_RESOURCE (one that does not continue, or sends less than we receive): the choice was the
 * engine's, so the engine takes it back: the receives set aside go back, and the call goes
 * again (same xid, like a retransmission) with a reply chunk. Only for a call that exposed no
 * memory (nothing to invalidate first). @return true when it goes again.
 */
static bool
clnt_cont_fallback(struct rpcr_clnt *cl, struct xprt_conn *c, struct xprt_creq *r,
		   const struct xprt_hdr *rx)
{
	if (r->no_cont)
		return false;
	XPRT_LOG(INFO,
		 "%s: xid 0x%08x: RDMA2_ERR_REPLY_RESOURCE (%u bytes) to a reply granted %u "
		 "Sends: again with a reply chunk",
		 cl->p->name, r->xid, rx->length_needed, 1u + r->cont_extra);
	c->outstanding -= 1u + r->cont_sends;
	c->cont_free += r->cont_extra;
	r->no_cont = true;
	creq_release(cl, r);
	creq_move(cl, r, XPRT_CREQ_SENT, XPRT_CREQ_RESEND); /* (its fields zeroed there) */
	cl->p->stats.cont_fallbacks++;
	return true;
}

/*
 * The reply to a call that timed out on this connection (OWED, or INVALIDATING since its
 * timeout): dropped, its caller told already; its credit comes back with it, and the server's
 * grant is taken (RFC 8166 section 3.3.1); what the server exposed for it (2005 draft's read
 * chunks) it may release.
 */
static void
clnt_late_reply(struct rpcr_clnt *cl, struct xprt_conn *c, struct xprt_creq *r,
		const struct xprt_hdr *rx)
{
	cl->p->stats.late_replies++;
	c->credits = RTE_MIN(RTE_MAX(c->wire->credit_granted(rx->credit), 1u), cl->nslots);
	c->send_limit = c->credits;
	if (unlikely(c->done_head != c->done_tail))
		dones_seen(c, r->sent_seq);
	if (rx->chunks.nreads != 0 && xprt_draft_has(c, XPRT_F_DONE))
		clnt_send_done(c, r->xid);
	if (r->state == XPRT_CREQ_OWED)
		slot_owed_put(cl, r);
	else
		r->owe = false; /* (INVALIDATING: its credit comes back as it completes) */
}

/*
 * Any other reply, its header decoded once by the demultiplexer (recv.c) into @rx (@hlen bytes;
 * the demultiplexer's scratch, read only here): matched by xid to a call sent, checked, then the
 * call completes (or its results are read first, 2005 draft).
 */
void
xprt_clnt_recv_hdr(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		   const struct xprt_hdr *rx, uint32_t hlen)
{
	struct rpcr_clnt *cl = c->clnt;
	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, inv = 0, k;
	const uint8_t *rpc = NULL;
	struct rte_mbuf *buf = m;
	struct rpcr_xdr_msgp msgp = {0};
	struct xprt_creq *r;
	uint32_t rpclen = 0;
	const char *bad;
	int status = 0;

	if (unlikely(rx->type == XPRT_HT_ERROR && c->v2_asked && rx->xid == c->v2_probe_xid)) {
		/* An error answering our CONNPROP (§4.2.3): ERR_VERS with a range that has
		 * version 1, in either version's format, and version 1 from now on, on this
		 * connection; with a range of neither of ours, the connection goes; any other,
		 * and version 2 it is (our properties not taken). Late (after the answer):
		 * noted, dropped. */
		cl->p->stats.rdma_errors_recv++;
		if (!c->v2_negotiating) {
			XPRT_LOG(INFO, "%s: %s: RDMA2_ERROR %u to our transport properties",
				 cl->p->name, cl->addr, rx->err);
		} else if (rx->err == XPRT_HERR_VERS && rx->vers_low <= xprt_wire_v1.vers &&
			   xprt_wire_v1.vers <= rx->vers_high) {
			clnt_v1_fallback(cl, c, rx);
		} else if (rx->err == XPRT_HERR_VERS && rx->vers_low > xprt_wire_v2.vers) {
			XPRT_LOG(ERR, "%s: %s speaks RPC-over-RDMA versions %u to %u: none of ours",
				 cl->p->name, cl->addr, rx->vers_low, rx->vers_high);
			xprt_conn_fail(c, "no RPC-over-RDMA version in common");
		} else {
			XPRT_LOG(INFO,
				 "%s: %s answers our transport properties with RDMA2_ERROR %u: "
				 "version 2, our properties not taken",
				 cl->p->name, cl->addr, rx->err);
			xprt_clnt_v2_answer(c, rx->credit);
		}
		xprt_buf_put(c, m);
		return;
	}
	r = &cl->slots[rx->xid & cl->slot_mask];
	if (unlikely(r->state != XPRT_CREQ_SENT || r->xid != rx->xid)) {
		if (r->xid == rx->xid && c == cl->conn && (r->state == XPRT_CREQ_OWED || r->owe))
			clnt_late_reply(cl, c, r, rx);
		else
			cl->p->stats.unmatched++;
		xprt_buf_put(c, m);
		return;
	}
	rpc = data + hlen;
	rpclen = len - hlen;
	bad = reply_check(c, r, rx, &rpc, &rpclen, &buf, &msgp);
	if (unlikely(bad != NULL)) {
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": reply to xid 0x%08x discarded: %s",
			 cl->p->name, c->id, rx->xid, bad);
		cl->p->stats.bad_headers++;
		xprt_buf_put(c, m);
		return;
	}
	if (rx->type == XPRT_HT_MSGP)
		cl->p->stats.msgp_recv++;
	r->fbuf_busy = false; /* a reply: the server has all of the call */
	/* The grant: never below 1, never above the slots we have. */
	c->credits = RTE_MIN(RTE_MAX(c->wire->credit_granted(rx->credit), 1u), cl->nslots);
	c->send_limit = c->credits;
	if (unlikely(c->done_head != c->done_tail))
		dones_seen(c, r->sent_seq);
	if (wc->flags & RPCR_RDEV_WC_F_WITH_INV)
		inv = wc->invalidated_rkey;
	if (rx->type == XPRT_HT_ERROR) {
		cl->p->stats.rdma_errors_recv++;
		XPRT_LOG(INFO, "%s: xid 0x%08x: RDMA_ERROR %s (engine code %u)", cl->p->name,
			 rx->xid,
			 rx->err == XPRT_HERR_VERS    ? "ERR_VERS"
			 : rx->err == XPRT_HERR_CHUNK ? "ERR_CHUNK"
						      : "of version 2",
			 rx->err);
		status = -EPROTO;
		if (rx->err == XPRT_HERR_REPLY_RES && r->cont_extra != 0 && r->regs.n == 0 &&
		    clnt_cont_fallback(cl, c, r, rx)) {
			xprt_buf_put(c, m);
			return;
		}
		if (rx->err == XPRT_HERR_WRITE_RES || rx->err == XPRT_HERR_REPLY_RES) {
			/* Version 2: the resources the reply needs, for the caller to offer
			 * (§7.3.4, §7.3.5; a write chunk index of 0: the server could not say
			 * which). */
			status = -EMSGSIZE;
			r->call->need_len = rx->length_needed;
			r->call->need_chunk = rx->err == XPRT_HERR_REPLY_RES ? 0
					      : rx->chunk_index != 0         ? rx->chunk_index
									     : UINT32_MAX;
		}
	} else {
		for (k = 0; k < rx->chunks.nwrites; k++)
			r->wrote[k] = (uint32_t)rpcr_proto_wchunk_length(&rx->chunks.writes[k]);
		r->nwrote = rx->chunks.nwrites;
	}
	if (status == 0 && rx->chunks.nreads != 0) {
		/* Results to pull first (2005 draft): the call completes when they are read. */
		r->rr_inv = inv;
		status = clnt_start_reads(cl, r, &rx->chunks, rpc, rpclen, buf, m, &msgp);
		if (status == 0)
			return;
		/* Still tell the server it may let go of what it exposed. */
		clnt_send_done(c, r->xid);
	}
	if (status == -EBADMSG)
		cl->p->stats.bad_headers++;
	if (!clnt_finish(cl, r, status, rpc, rpclen, buf, m, inv, msgp.align != 0 ? &msgp : NULL))
		xprt_buf_put(c, m);
}

/*
 * The common reply, straight through: RDMA_MSG with empty lists, accepted, AUTH_NONE verifier,
 * SUCCESS, for a call that holds nothing (compared in wire byte order). Everything it checks,
 * the general path (xprt_clnt_recv_hdr(), reply_check()) checks too. @return false: not that,
 * nothing changed.
 */
static __rte_always_inline bool
clnt_recv_fast(struct xprt_conn *c, struct rte_mbuf *m, const bool fwd, const uint32_t vers)
{
	const uint32_t plen = vers == 2 ? XPRT_V2_PLAIN : XPRT_V1_PLAIN;
	struct rpcr_clnt *cl = c->clnt;
	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len;
	struct xprt_creq *r;

	if (likely(len >= plen + 24)) {
		const uint8_t *rp = data + plen; /* the RPC reply */
		uint32_t xid = vers == 2 ? xprt_v2_xid(data) : xprt_v1_xid(data);

		/* A plain header of version @vers (a reply's); the RPC reply's words 2-5
		 * (accepted, AUTH_NONE verifier, SUCCESS) zero; REPLY, the same xid twice. */
		r = &cl->slots[xid & cl->slot_mask];
		if (likely(((vers == 2 ? xprt_v2_plain_diff(data, XPRT_V2_TYPEFLAGS_REPLY)
				       : xprt_v1_plain_diff(data)) |
			    xprt_load64(rp + 8) | xprt_load64(rp + 16) |
			    (xprt_load32(rp + 4) ^ rte_cpu_to_be_32(RPCR_ONCRPC_REPLY)) |
			    (xprt_load32(rp) ^ xprt_load32(data))) == 0 &&
			   r->state == XPRT_CREQ_SENT && r->xid == xid && !r->held_any)) {
			struct rpcr_call *call = r->call;
			int status = 0;
			uint32_t grant = vers == 2 ? xprt_v2_credit_granted(xprt_v2_credit(data))
						   : xprt_v1_credit(data);

			r->fbuf_busy = false; /* a reply: the server has all of the call */
			/* The grant: never below 1, never above the slots we have. */
			if (unlikely(grant - 1 >= cl->nslots))
				grant = grant == 0 ? 1 : cl->nslots;
			c->credits = grant;
			c->send_limit = grant; /* (no DONE out; else dones_seen() sets it) */
			if (unlikely(c->done_head != c->done_tail))
				dones_seen(c, r->sent_seq);
			call->xid = r->xid;
			call->accept_stat = RPCR_ONCRPC_SUCCESS;
			if (call->decode != NULL) {
				struct rpcr_msg msg;

				results_init(&msg, cl, r, rp, len - plen, 24, m);
				if (call->decode(&msg, call->res) != 0)
					status = -EBADMSG;
			}
			(*(fwd ? &cl->p->stats.replies_recv : &cl->p->stats.breplies_recv))++;
			c->outstanding--;
			slot_put(cl, r, XPRT_CREQ_SENT);
			/* (The results are decoded: the buffer goes back before the completion.) */
			xprt_buf_put_last_recv(c, m);
			call_complete(call, status);
			return true;
		}
	}
	return false;
}

/* (The straight-line path made for the reverse direction, its counters folded; version 1's
 * direction test first, for a server's connection has its calls on the burst's own.) */
bool
xprt_clnt_recv_fast_rev(struct xprt_conn *c, struct rte_mbuf *m)
{
	return xprt_v1_dir(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len) ==
		       RPCR_ONCRPC_REPLY &&
	       clnt_recv_fast(c, m, false, 1);
}

/* The receives of a client's connection (version 1's burst): the common reply straight through;
 * with a responder, its straight-line path for a plain reverse-direction call; anything else to
 * the demultiplexer (recv.c). */
uint16_t
xprt_clnt_recv_burst(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rpcr_rdev_qp *qp = wc[0].qp;
	uint16_t i;

	for (i = 0; i < n && wc[i].qp == qp && !(wc[i].wr_id & XPRT_WRID_SQ); i++) {
		struct rte_mbuf *m = xprt_recv_take(c, &wc[i]);

		if (unlikely(m == NULL) || likely(clnt_recv_fast(c, m, true, 1)))
			continue;
		if (unlikely(c->svc != NULL) && xprt_svc_recv_fast_rev(c, m))
			continue;
		xprt_recv_demux(c, m, &wc[i]);
	}
	return i;
}

/* The receives of a client's version-2 connection: the common reply straight through once the
 * server has answered version 2 (its first answer goes to xprt_clnt_recv_hdr(), which reads a
 * refusal too), but for a continuation's last part (xprt_cont_passes()); anything else
 * to the demultiplexer, which takes version 2's own messages first (recv.c's v2_control()). */
static uint16_t
clnt_recv_burst_v2(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rpcr_rdev_qp *qp = wc[0].qp;
	uint16_t i;

	for (i = 0; i < n && wc[i].qp == qp && !(wc[i].wr_id & XPRT_WRID_SQ); i++) {
		struct rte_mbuf *m = xprt_recv_take(c, &wc[i]);

		if (unlikely(m == NULL))
			continue;
		if (likely(!c->v2_negotiating) &&
		    xprt_cont_passes(c, rte_pktmbuf_mtod(m, const uint8_t *)) &&
		    likely(clnt_recv_fast(c, m, true, 2)))
			continue;
		xprt_recv_demux(c, m, &wc[i]);
	}
	return i;
}

const struct xprt_vops xprt_v2_clnt_ops = {.recv_burst = clnt_recv_burst_v2};

/* ---- CONF_RDMA (2005 draft section 6): asked first on a new connection ---- */

static void
clnt_conf_start(struct rpcr_clnt *cl)
{
	struct rpcr_call *call = &cl->conf_call;
	struct call_priv *cp = call_priv(call);

	xprt_draft_conf_call(cl, call, &cl->conf_rep);
	cp->clnt = cl;
	cp->err = 0;
	cp->deadline = rte_rdtsc() + cl->timeout_tsc;
	xprt_due_clnt(cl->p, cp->deadline);
	TAILQ_INSERT_HEAD(&cl->waiting, cp, q);
	clnt_queued(cl);
}

/* ---- the call path ---- */

/* Send @call now if nothing is ahead of it and there is room, else queue it. */
static __rte_always_inline void
clnt_enqueue(struct rpcr_clnt *cl, struct rpcr_call *call)
{
	struct call_priv *cp = call_priv(call);
	struct xprt_conn *c = cl->conn;

	cp->clnt = cl;
	cp->err = 0;
	cp->deadline =
		rte_rdtsc() +
		(call->timeout_us != 0 ? xprt_us_to_tsc(cl->p, call->timeout_us) : cl->timeout_tsc);
	xprt_due_clnt(cl->p, cp->deadline);
	call->status = 0;
	call->accept_stat = 0;
	call->auth_stat = 0;
	call->need_len = 0;
	call->need_chunk = 0;
	call->xid = 0;
	/* Nothing ahead of it and room to send: send it now (its completion still comes later,
	 * from a poll). */
	if (likely(TAILQ_EMPTY(&cl->waiting) && TAILQ_EMPTY(&cl->resend) && c != NULL &&
		   c->state == XPRT_CONN_CONNECTED && clnt_may_send(c) && cl->nslot_free != 0)) {
		struct xprt_creq *r = slot_get(cl);
		int rc;

		r->call = call;
		rc = clnt_send(cl, r, XPRT_CREQ_FREE);
		if (likely(rc == 0))
			return;
		slot_put(cl, r, XPRT_CREQ_FREE);
		if (rc != -EAGAIN)
			cp->err = rc;
	}
	TAILQ_INSERT_TAIL(&cl->waiting, cp, q);
	clnt_queued(cl);
}

void
xprt_clnt_enqueue(struct rpcr_clnt *cl, struct rpcr_call *call)
{
	clnt_enqueue(cl, call);
}

/* Complete every call waiting or to be sent again with @status. @return how many. */
static int
clnt_fail_all(struct rpcr_clnt *cl, int status)
{
	struct call_priv *cp;
	struct xprt_creq *r;
	int n = 0;

	while ((r = TAILQ_FIRST(&cl->resend)) != NULL) {
		struct rpcr_call *call = r->call;

		slot_put(cl, r, XPRT_CREQ_RESEND);
		call_complete(call, status);
		n++;
	}
	while ((cp = TAILQ_FIRST(&cl->waiting)) != NULL) {
		TAILQ_REMOVE(&cl->waiting, cp, q);
		cl->p->nqueued--;
		call_complete(priv_call(cp), cp->err != 0 ? cp->err : status);
		n++;
	}
	return n;
}

/* Send what can be sent: calls to resend first (their xids are kept), then new ones. */
int
xprt_clnt_advance(struct rpcr_clnt *cl)
{
	struct xprt_conn *c = cl->conn;
	uint32_t budget;
	int work = 0, rc;

	if (c == NULL || c->state != XPRT_CONN_CONNECTED) {
		/* Calls that failed to marshal complete even without a connection. (A reverse
		 * client's calls wait for rpcr_clnt_rebind() or their deadline, unless its server
		 * is going.) */
		struct call_priv *cp, *tmp;

		if (unlikely(cl->orphan) && c == NULL)
			return clnt_fail_all(cl, -ECONNRESET);
		RTE_TAILQ_FOREACH_SAFE (cp, &cl->waiting, q, tmp) {
			if (cp->err == 0)
				continue;
			TAILQ_REMOVE(&cl->waiting, cp, q);
			cl->p->nqueued--;
			call_complete(priv_call(cp), cp->err);
			work++;
		}
		return work;
	}
	/* (cl->conn != c: the connection failed while a call was posted, in these loops.) */
	while (!TAILQ_EMPTY(&cl->resend) && cl->conn == c && clnt_may_send(c)) {
		struct xprt_creq *r = TAILQ_FIRST(&cl->resend);

		rc = clnt_send(cl, r, XPRT_CREQ_RESEND); /* (0: SENT, off the list) */
		if (rc == -EAGAIN)
			return work;
		if (rc != 0) {
			struct rpcr_call *call = r->call;

			slot_put(cl, r, XPRT_CREQ_RESEND);
			call_complete(call, rc);
		} else {
			cl->p->stats.retransmits++;
		}
		work++;
	}
	/* At most as many as were queued on entry: completions submitting new calls that fail
	 * at once must not keep this loop (and the poller) going forever. */
	budget = cl->p->nqueued;
	while (!TAILQ_EMPTY(&cl->waiting) && budget-- != 0) {
		struct call_priv *cp = TAILQ_FIRST(&cl->waiting);
		struct rpcr_call *call = priv_call(cp);
		struct xprt_creq *r;

		if (unlikely(cp->err != 0)) {
			TAILQ_REMOVE(&cl->waiting, cp, q);
			cl->p->nqueued--;
			call_complete(call, cp->err);
			work++;
			continue;
		}
		if (cl->conn != c)
			break;
		if (!clnt_may_send(c) || cl->nslot_free == 0) {
			cl->p->stats.credit_waits++;
			break;
		}
		TAILQ_REMOVE(&cl->waiting, cp, q);
		cl->p->nqueued--;
		r = slot_get(cl);
		r->call = call;
		rc = clnt_send(cl, r, XPRT_CREQ_FREE);
		if (rc == -EAGAIN) {
			/* Keep its place; the slot's xid is simply not used. */
			slot_put(cl, r, XPRT_CREQ_FREE);
			TAILQ_INSERT_HEAD(&cl->waiting, cp, q);
			clnt_queued(cl);
			break;
		}
		if (rc != 0) {
			slot_put(cl, r, XPRT_CREQ_FREE);
			call_complete(call, rc);
		}
		work++;
	}
	return work;
}

/* ---- connections ---- */

static void
schedule_reconnect(struct rpcr_clnt *cl)
{
	struct rpcr_xprt_poller *p = cl->p;

	cl->reconnect_at = rte_rdtsc() + xprt_us_to_tsc(p, cl->backoff_us);
	xprt_due_clnt(p, cl->reconnect_at);
	cl->backoff_us = RTE_MIN(cl->backoff_us * 2, (uint64_t)XPRT_RECONNECT_MAX_US);
}

/* Whether the client's next connection asks version 2. */
static inline bool
clnt_asks_v2(const struct rpcr_clnt *cl)
{
	return (cl->conf.versions & RPCR_XPRT_V2) && !cl->v1_only && !cl->reverse;
}

/* Version 2 messages a server may send that answer no call and take no credit: CONNPROP (a
 * second part), INIT_XCHAR, RESP_XCHAR. */
#define CLNT_SRQ_V2_CTL 3u

/*
 * Receives a connection of @cl on the poller's shared receive queue reserves (rpcr_clnt_conf::
 * srq): a reply to each call slot, its server's calls (bc_credits), and on version 2 the
 * receives kept for continued replies (cont.c) and its server's messages that take no credit.
 */
static uint32_t
clnt_srq_need(const struct rpcr_clnt *cl)
{
	bool v2 = clnt_asks_v2(cl);

	return cl->nslots + cl->conf.bc_credits +
	       (v2 ? CLNT_SRQ_V2_CTL + (cl->conf.cont_max != 0 ? XPRT_CONT_RECVS : 0) : 0);
}

static int
clnt_connect(struct rpcr_clnt *cl)
{
	struct rpcr_xprt_poller *p = cl->p;
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
	struct xprt_conn *c;
	uint32_t cont;
	uint8_t plen;
	bool srq;
	int rc;

	cl->reconnect_at = 0;
	/* With a responder, receives reserved for the server's calls too (RFC 8167 section
	 * 2.2.1), and as many requests; asking version 2 with continuation, receives kept for
	 * continued replies (cont.c). */
	cont = clnt_asks_v2(cl) && cl->conf.cont_max != 0 ? XPRT_CONT_RECVS : 0;
	srq = cl->conf.srq && p->srq.srq != NULL;
	/* From the poller's shared receive queue: a receive reserved for each message the server
	 * may send (clnt_srq_need()), or no connection now (tried again as after a lost one),
	 * asked before a QP is made so that a refused client makes none. */
	if (srq && !xprt_srq_clnt_room(p, clnt_srq_need(cl))) {
		XPRT_LOG(WARNING,
			 "%s: %s: not connected: the shared receive queue has %u receives left "
			 "to reserve, this client needs %u; trying again later",
			 p->name, cl->addr, p->srq.cap - RTE_MIN(p->srq.reserved, p->srq.cap),
			 clnt_srq_need(cl));
		schedule_reconnect(cl);
		return -ENOSPC;
	}
	c = xprt_conn_new(p, cl->conf.credits + XPRT_RECV_BATCH + cl->conf.bc_credits + cont,
			  cl->conf.inline_recv, cl->conf.bc_credits, srq);
	if (c == NULL) {
		schedule_reconnect(cl);
		return -rte_errno;
	}
	if (srq && xprt_srq_clnt_attach(c, clnt_srq_need(cl)) != 0) {
		xprt_conn_teardown(c); /* (cannot be: asked above, and nothing ran since) */
		schedule_reconnect(cl);
		return -ENOSPC;
	}
	c->clnt = cl;
	c->vops = XPRT_VOPS_V1_CLNT;
	c->wire = &xprt_wire_v1; /* (CONNECTING, as xprt_conn_new() makes it) */
	c->credits = 1;
	c->send_limit = 1;
	c->recv_floor = cl->conf.credits + cont;
	c->cont_free = cont;
	if (cl->bsvc != NULL)
		xprt_svc_conn_attach(cl->bsvc, c);
	if (xprt_draft_requester_init(c, cl->nslots) != 0) {
		c->clnt = NULL;
		xprt_conn_teardown(c);
		schedule_reconnect(cl);
		return -ENOMEM;
	}
	xprt_conn_replenish(c);
	plen = xprt_pdata_build(pdata, cl->conf.inline_send, cl->conf.inline_recv,
				cl->conf.remote_inv, cl->conf.no_draft ? 0 : XPRT_F_ALL);
	rc = rpcr_rdev_connect(c->qp, cl->addr, cl->conf.no_pdata ? NULL : pdata,
			       cl->conf.no_pdata ? 0 : plen);
	if (rc != 0) {
		XPRT_LOG(DEBUG, "%s: connect %s: %s", p->name, cl->addr, strerror(-rc));
		c->clnt = NULL;
		xprt_conn_teardown(c);
		schedule_reconnect(cl);
		return rc;
	}
	cl->conn = c;
	return 0;
}

void
xprt_clnt_conn_event(struct rpcr_clnt *cl, const struct rpcr_rdev_event *ev)
{
	struct xprt_conn *c = ev->qp->user;

	switch (ev->type) {
	case RPCR_RDEV_EVENT_ESTABLISHED:
		if (c->state != XPRT_CONN_CONNECTING)
			return;
		cl->est_pdata_len = RTE_MIN(ev->pdata_len, (uint8_t)sizeof(cl->est_pdata));
		memcpy(cl->est_pdata, ev->pdata, cl->est_pdata_len);
		clnt_apply_pdata(cl, c);
		xprt_conn_move(c, XPRT_CONN_CONNECTED);
		/* Version 2 asked with the first message (§4.2.3), our CONNPROP (clnt_v2_ask()
		 * below): alone (it takes the one credit) and at most 1024 bytes, which a server
		 * of version 1 alone takes too; the calls wait for the answer. */
		if (clnt_asks_v2(cl)) {
			c->v2_negotiating = true; /* (no straight-line send until answered) */
			xprt_conn_set_wire(c, &xprt_wire_v2, cl->conf.inline_send,
					   cl->conf.inline_recv);
			c->vops = XPRT_VOPS_V2_CLNT;
		}
		clnt_tmpl_set(cl, c->wire);
		/* Credits restart at 1: the server's first reply says how many it grants. */
		c->credits = 1;
		c->outstanding = 0;
		clnt_limit_update(c);
		if (c->v2_negotiating && clnt_v2_ask(cl, c) != 0) {
			/* (A local shortage: asked again on the next connection.) */
			xprt_conn_fail(c, "cannot ask version 2");
			return;
		}
		cl->backoff_us = XPRT_RECONNECT_MIN_US;
		if (cl->connected_once)
			cl->p->stats.reconnects++;
		cl->connected_once = true;
		cl->nconnected++;
		XPRT_LOG(DEBUG, "%s: connected to %s (conn %" PRIu64 ")", cl->p->name, cl->addr,
			 c->id);
		/* A server that speaks the draft is asked its configuration first (CONF_RDMA). */
		if (xprt_draft_has(c, XPRT_F_CONF) && call_priv(&cl->conf_call)->clnt == NULL)
			clnt_conf_start(cl);
		break;
	case RPCR_RDEV_EVENT_REJECTED:
		xprt_conn_fail(c, "connection rejected");
		break;
	case RPCR_RDEV_EVENT_CONNECT_ERROR:
		xprt_conn_fail(c, "connect failed");
		break;
	case RPCR_RDEV_EVENT_DISCONNECTED:
		xprt_conn_fail(c, "disconnected");
		break;
	default:
		break;
	}
}

/* The connection failed: its calls wait, with their xids, for the next one. */
void
xprt_clnt_conn_lost(struct rpcr_clnt *cl)
{
	uint32_t i;

	/* A first message in version 2 lost with its connection: version 1 from now on (§4.2.3.2:
	 * no negotiation loop). */
	if (cl->conn != NULL && cl->conn->v2_negotiating && cl->conn->v2_asked && !cl->v1_only) {
		cl->v1_only = true;
		XPRT_LOG(INFO, "%s: %s: no answer to version 2: version 1 from now on", cl->p->name,
			 cl->addr);
	}
	for (i = 0; i < cl->nslots; i++) {
		struct xprt_creq *r = &cl->slots[i];

		fbuf_release(cl, r); /* (its connection still holds the QP) */
		if (r->state == XPRT_CREQ_OWED) {
			slot_owed_put(cl, r); /* (no reply comes on another connection) */
			continue;
		}
		if (r->state != XPRT_CREQ_SENT)
			continue;
		creq_release(cl, r);
		creq_move(cl, r, XPRT_CREQ_SENT, XPRT_CREQ_RESEND);
	}
	if (cl->conn != NULL)
		cl->conn->outstanding = 0;
	cl->conn = NULL;
	/* A reverse client's server cannot connect (RFC 8167 section 2.3): its calls wait, to be
	 * sent again once the upper layer moves it to a connection its client makes
	 * (rpcr_clnt_rebind()), or until their deadline. */
	if (!cl->reverse)
		schedule_reconnect(cl);
}

void
xprt_clnt_timers(struct rpcr_clnt *cl, uint64_t now)
{
	struct call_priv *cp, *tmp;
	uint64_t next = UINT64_MAX;
	uint32_t i;
	bool owed_all;

	if (cl->conn == NULL && cl->reconnect_at != 0) {
		if (now >= cl->reconnect_at)
			clnt_connect(cl);
		else
			next = cl->reconnect_at;
	}
	/* Our CONNPROP unanswered: no answer is an answer (§4.2.3.2): version 1 on a new
	 * connection for the calls waiting. */
	if (cl->conn != NULL && cl->conn->v2_negotiating) {
		if (now >= cl->conn->v2_deadline) {
			cl->v1_only = true;
			xprt_conn_fail(cl->conn, "no answer to version 2");
		} else {
			next = RTE_MIN(next, cl->conn->v2_deadline);
		}
	}
	RTE_TAILQ_FOREACH_SAFE (cp, &cl->waiting, q, tmp) {
		if (cp->deadline > now) {
			next = RTE_MIN(next, cp->deadline);
			continue;
		}
		TAILQ_REMOVE(&cl->waiting, cp, q);
		cl->p->nqueued--;
		cl->p->stats.timeouts++;
		call_complete(priv_call(cp), -ETIMEDOUT);
	}
	for (i = 0; i < cl->nslots; i++) {
		struct xprt_creq *r = &cl->slots[i];

		/* (A reply being read completes or fails with its connection.) */
		if (r->state == XPRT_CREQ_FREE || r->state == XPRT_CREQ_READING ||
		    r->state == XPRT_CREQ_INVALIDATING || r->state == XPRT_CREQ_OWED)
			continue;
		if (call_priv(r->call)->deadline > now) {
			next = RTE_MIN(next, call_priv(r->call)->deadline);
			continue;
		}
		cl->p->stats.timeouts++;
		/* Sent on this connection: the server may still answer, and its credit stays
		 * out until it does (slot_owe()). */
		r->owe = r->state == XPRT_CREQ_SENT && cl->conn != NULL;
		fbuf_release(cl, r);
		/* Its registrations die with it: a late server finds nothing. */
		clnt_finish(cl, r, -ETIMEDOUT, NULL, 0, NULL, NULL, 0, NULL);
	}
	/* Every credit held by calls that timed out, none can go: as Linux's xprtrdma does at
	 * any timeout, the connection is closed and made again (the calls waiting go there). A
	 * reverse-direction client's connection is its client's: its calls wait on. */
	owed_all = cl->conn != NULL && !cl->reverse && cl->owed_credits != 0 &&
		   cl->owed_credits >= cl->conn->send_limit;
	if (owed_all) {
		XPRT_LOG(NOTICE,
			 "%s: %s: calls that timed out, their server not answering them, hold %u "
			 "credits, every one it granted: connecting again",
			 cl->p->name, cl->addr, cl->owed_credits);
		xprt_conn_fail(cl->conn, "every credit held by a call that timed out");
	}
	/* (What the completions above set lowered it already.) */
	xprt_due_clnt(cl->p, next);
}

/* ---- API ---- */

/* What clnt_new() allocated, and the client. */
static void
clnt_mem_free(struct rpcr_clnt *cl)
{
	rte_free(cl->slots);
	rte_free(cl->ulb);
	rte_free(cl->codecs);
	rte_free(cl);
}

/*
 * The per-procedure tables of client @cl, indexed by procedure number: bindings from
 * conf->ulb, or from the program table conf->program (checked: xprt_prog_check()) with its
 * codecs. @return 0, -EINVAL, -ENOMEM.
 */
static int
clnt_procs_init(struct rpcr_clnt *cl, const struct rpcr_clnt_conf *conf)
{
	const struct rpcr_svc_prog *pg = conf->program;
	uint32_t i, n = conf->nulb;
	bool codecs = false;

	if (pg != NULL) {
		if (conf->ulb != NULL || conf->nulb != 0 || xprt_prog_check(pg) != 0 ||
		    (conf->prog != 0 && conf->prog != pg->prog) ||
		    (conf->vers != 0 && conf->vers != pg->vers))
			return -EINVAL;
		for (n = 0, i = 0; i < pg->nprocs; i++) {
			if (pg->procs[i].proc >= RPCR_CLNT_MAX_PROC)
				return -EINVAL;
			n = RTE_MAX(n, pg->procs[i].proc + 1);
			codecs |=
				pg->procs[i].encode_args != NULL || pg->procs[i].decode_res != NULL;
		}
		cl->conf.prog = pg->prog;
		cl->conf.vers = pg->vers;
		cl->conf.program = NULL; /* (copied here: the table need not outlive the client) */
	}
	cl->conf.nulb = n;
	if (n == 0)
		return 0;
	cl->ulb = rte_zmalloc("rpcr_clnt", sizeof(*cl->ulb) * n, 0);
	if (codecs)
		cl->codecs = rte_zmalloc("rpcr_clnt", sizeof(*cl->codecs) * n, 0);
	if (cl->ulb == NULL || (codecs && cl->codecs == NULL))
		return -ENOMEM;
	if (pg == NULL) {
		memcpy(cl->ulb, conf->ulb, sizeof(*cl->ulb) * n);
	} else {
		for (i = 0; i < pg->nprocs; i++) {
			const struct rpcr_svc_proc *pc = &pg->procs[i];

			cl->ulb[pc->proc] = pc->ulb;
			if (codecs) {
				cl->codecs[pc->proc].encode = pc->encode_args;
				cl->codecs[pc->proc].decode = pc->decode_res;
			}
		}
	}
	for (i = 0; i < n; i++)
		if (cl->ulb[i].threshold == 0)
			cl->ulb[i].threshold = 1024;
	cl->conf.ulb = cl->ulb;
	return 0;
}

/* A client, not connected, on no list (rpcr_clnt_create(), clnt_reverse_new()). */
static struct rpcr_clnt *
clnt_new(struct rpcr_xprt_poller *p, const struct rpcr_clnt_conf *conf)
{
	struct rpcr_oncrpc_call hdr;
	struct rpcr_clnt *cl;
	uint32_t i, xid0;
	ssize_t n;

	if (p == NULL || conf == NULL || conf->addr == NULL ||
	    strlen(conf->addr) >= sizeof(cl->addr) || (conf->nulb != 0 && conf->ulb == NULL) ||
	    conf->cred.len > RPCR_ONCRPC_AUTH_MAX || (conf->cred.len != 0 && !conf->cred.body) ||
	    conf->bc_credits > XPRT_MAX_CREDITS ||
	    (conf->bc_brs != 0 && (conf->bc_brs < RPCR_PROTO_V2_RVRSDIR_SIMPLE ||
				   conf->bc_brs > RPCR_PROTO_V2_RVRSDIR_GENL)) ||
	    (conf->versions != 0 && conf->versions != RPCR_XPRT_V1 &&
	     conf->versions != (RPCR_XPRT_V1 | RPCR_XPRT_V2)) ||
	    /* (Version 2's server may send 4096 bytes inline, §4.2.2: receives that hold them.) */
	    ((conf->versions & RPCR_XPRT_V2) &&
	     ((conf->inline_recv != 0 && conf->inline_recv < XPRT_V2_INLINE) || conf->no_pdata)) ||
	    conf->hostauth_len > RPCR_XPRT_HOSTAUTH_MAX ||
	    (conf->hostauth_len != 0 && conf->hostauth == NULL)) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* The straight-line paths' lines (xprt_internal.h), on line-aligned allocations. */
	RTE_BUILD_BUG_ON(offsetof(struct rpcr_clnt, xid_step) / 64 != 0 ||
			 offsetof(struct rpcr_clnt, waiting) != 64 ||
			 offsetof(struct rpcr_clnt, queued) / 64 != 1 ||
			 offsetof(struct xprt_creq, no_cont) / 64 != 0 ||
			 sizeof(struct xprt_creq) % 64 != 0);
	cl = rte_zmalloc("rpcr_clnt", sizeof(*cl), RTE_CACHE_LINE_SIZE);
	if (cl == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cl->p = p;
	cl->conf = *conf;
	xprt_conf_transport(p, &cl->conf.remote_inv, &cl->conf.credits, CLNT_DEFAULT_CREDITS,
			    &cl->conf.inline_send, &cl->conf.inline_recv);
	if (cl->conf.bc_brs == 0)
		cl->conf.bc_brs = RPCR_PROTO_V2_RVRSDIR_GENL;
	/* Continuation's policy (0 from here on: none). */
	cl->conf.cont_max = conf->cont_max == RPCR_XPRT_NO_CONT ? 0
			    : conf->cont_max == 0               ? XPRT_CONT_DEFAULT
						  : RTE_MIN(conf->cont_max, XPRT_BULK_DATA);
	/* Its keys are windows, which the server may always invalidate with its Send: R is
	 * offered (RFC 8797). */
	if (p->mw_access != 0 && (p->info.caps & RPCR_RDEV_CAP_REMOTE_INV))
		cl->conf.remote_inv = true;
	if (cl->conf.no_pdata) {
		/* What a server assumes of a client that says nothing (RFC 8797 section 4). */
		cl->conf.inline_recv = XPRT_MIN_INLINE;
		cl->conf.remote_inv = false;
		cl->conf.no_draft = true;
	}
	strcpy(cl->addr, conf->addr);
	cl->conf.addr = cl->addr;
	if (cl->conf.timeout_us == 0)
		cl->conf.timeout_us = CLNT_DEFAULT_TIMEOUT_US;
	cl->timeout_tsc = xprt_us_to_tsc(p, cl->conf.timeout_us);
	n = clnt_procs_init(cl, conf);
	if (n != 0) {
		rte_errno = (int)-n;
		goto fail;
	}
	cl->nslots = rte_align32pow2(RTE_MAX(cl->conf.credits, 2u));
	cl->slot_mask = cl->nslots - 1;
	cl->slot_bits = (uint32_t)__builtin_ctz(cl->nslots);
	cl->slots = rte_zmalloc("rpcr_clnt", sizeof(*cl->slots) * cl->nslots, RTE_CACHE_LINE_SIZE);
	if (cl->slots == NULL)
		goto nomem;
	/* Xids: the slot's index in the low bits, above it a count per slot from a random start
	 * (a restarted client does not reuse the xids a server may have cached). */
	cl->xid_step = 1u << cl->slot_bits;
	xid0 = (uint32_t)rte_rand() << cl->slot_bits;
	for (i = 0; i < cl->nslots; i++) {
		/* (Slot 0 on top.) */
		cl->slots[cl->nslots - 1 - i].free_next = cl->slot_free;
		cl->slot_free = &cl->slots[cl->nslots - 1 - i];
		cl->slots[i].cl = cl;
		cl->slots[i].idx = i;
		cl->slots[i].xid = xid0 | i;
	}
	cl->nslot_free = cl->nslots;
	/* On the shared receive queue: refused where it could never connect. */
	if (cl->conf.srq && p->srq.srq != NULL && clnt_srq_need(cl) > p->srq.budget) {
		XPRT_LOG(ERR,
			 "%s: client of %s: %u receives to reserve in a shared receive queue whose "
			 "budget is %u",
			 p->name, conf->addr, clnt_srq_need(cl), p->srq.budget);
		rte_errno = EINVAL;
		goto fail;
	}
	TAILQ_INIT(&cl->waiting);
	TAILQ_INIT(&cl->resend);
	rpcr_proto_chunks_init(&cl->tx.chunks, cl->tx_reads, XPRT_TX_SEGS, cl->tx_writes,
			       XPRT_MAX_BULK, cl->tx_segs, XPRT_TX_SEGS);

	/* The call header every call starts with (xid and procedure patched per call). */
	memset(&hdr, 0, sizeof(hdr));
	hdr.rpcvers = RPCR_ONCRPC_VERS;
	hdr.prog = cl->conf.prog;
	hdr.vers = cl->conf.vers;
	hdr.cred = conf->cred;
	hdr.verf.flavor = RPCR_ONCRPC_AUTH_NONE;
	n = rpcr_oncrpc_call_encode(&hdr, cl->tmpl + XPRT_PLAIN_MAX,
				    sizeof(cl->tmpl) - XPRT_PLAIN_MAX);
	if (n < 0) {
		rte_errno = EINVAL;
		goto fail;
	}
	cl->callhdr_len = (uint32_t)n;
	clnt_tmpl_set(cl, &xprt_wire_v1);

	cl->backoff_us = XPRT_RECONNECT_MIN_US;
	cl->st_sent = &p->stats.calls_sent;
	return cl;

nomem:
	rte_errno = ENOMEM;
fail:
	clnt_mem_free(cl);
	return NULL;
}

struct rpcr_clnt *
rpcr_clnt_create(struct rpcr_xprt_poller *p, const struct rpcr_clnt_conf *conf)
{
	struct rpcr_clnt *cl = clnt_new(p, conf);

	if (cl == NULL)
		return NULL;
	if (cl->conf.bc_credits != 0) {
		cl->bsvc = xprt_svc_reverse_new(cl);
		if (cl->bsvc == NULL) {
			clnt_mem_free(cl);
			rte_errno = ENOMEM;
			return NULL;
		}
	}
	TAILQ_INSERT_TAIL(&p->clnts, cl, next);
	clnt_connect(cl);
	return cl;
}

/* Free a client whose connection is gone: its calls complete with @status first. */
static void
clnt_free(struct rpcr_clnt *cl, int status)
{
	struct rpcr_xprt_poller *p = cl->p;
	uint32_t i;

	clnt_fail_all(cl, status);
	for (i = 0; i < cl->nslots; i++) {
		struct xprt_creq *r = &cl->slots[i];

		if (r->state == XPRT_CREQ_INVALIDATING)
			clnt_held_complete(cl, r, status);
		else if (r->state == XPRT_CREQ_OWED)
			slot_owed_put(cl, r);
		else if (r->state != XPRT_CREQ_FREE)
			clnt_finish(cl, r, status, NULL, 0, NULL, NULL, 0, NULL);
		/* (The QP is gone: the device reads no buffer any more.) */
		if (r->fbuf != NULL)
			rte_pktmbuf_free(r->fbuf);
		r->fbuf = NULL;
	}
	TAILQ_REMOVE(&p->clnts, cl, next);
	xprt_clnt_unqueue(cl);
	xprt_svc_reverse_free(cl->bsvc);
	clnt_mem_free(cl);
}

/* A reverse client loses a reference; the last one frees it. */
static void
clnt_unref(struct rpcr_clnt *cl)
{
	if (--cl->refs != 0)
		return;
	/* Not freed here: the last reference may go in a completion run from a loop over the
	 * poller's clients or this client's slots. Freed at the next safe point (xprt_clnt_reap():
	 * the poll's next timer tick, the end of rpcr_svc_destroy(), rpcr_clnt_destroy() outside a
	 * poll, rpcr_xprt_poller_destroy()). */
	cl->dead = true;
	cl->p->ndead++;
}

void
xprt_clnt_reap(struct rpcr_xprt_poller *p)
{
	struct rpcr_clnt *cl;

	/* One at a time, from the start again: a free runs completions, which may let go of
	 * more clients. */
	while (p->ndead != 0) {
		TAILQ_FOREACH (cl, &p->clnts, next)
			if (cl->dead)
				break;
		if (cl == NULL) {
			p->ndead = 0;
			break;
		}
		cl->dead = false;
		p->ndead--;
		clnt_free(cl, -ECONNRESET);
	}
}

int
rpcr_clnt_destroy(struct rpcr_clnt *cl)
{
	struct rpcr_xprt_poller *p;
	struct call_priv *cp;

	if (cl == NULL)
		return -EINVAL;
	p = cl->p;
	if (cl->reverse) {
		/* The caller's reference (its calls go on while the connection lives); from
		 * another thread (a worker), given back on the poller. */
		if (!xprt_on_owner(p) && p->owner_set) {
			if (rte_ring_mp_enqueue(p->ring,
						(void *)((uintptr_t)cl | XPRT_RING_BPUT)) != 0)
				return -EAGAIN;
			xprt_poller_kick(p);
			return 0;
		}
		clnt_unref(cl);
		if (!p->in_poll)
			xprt_clnt_reap(p);
		return 0;
	}
	if (p->in_poll)
		return -EBUSY;
	/* Calls from the server held by handlers point at the responder's programs. */
	if (cl->bsvc != NULL && cl->bsvc->ndeferred != 0)
		return -EBUSY;
	/* Calls other threads queued for this poller get their turn first. */
	xprt_poller_drain(p);
	while ((cp = TAILQ_FIRST(&cl->waiting)) != NULL) {
		TAILQ_REMOVE(&cl->waiting, cp, q);
		p->nqueued--;
		call_complete(priv_call(cp), -ECONNABORTED);
	}
	/* The connection first: nothing may still land in a buffer freed below. */
	if (cl->conn != NULL) {
		struct xprt_conn *c = cl->conn;

		cl->conn = NULL;
		xprt_conn_teardown(c);
	}
	clnt_free(cl, -ECONNABORTED);
	return 0;
}

/* ---- the reverse direction (RFC 8167) ---- */

void
xprt_clnt_conn_gone(struct xprt_conn *c)
{
	struct rpcr_clnt *cl = c->clnt;

	c->clnt = NULL;
	if (cl == NULL || !cl->reverse)
		return;
	if (cl->conn == c)
		cl->conn = NULL;
	clnt_unref(cl);
}

/* rpcr_svc_req_bclnt() on the poller's thread. */
/* Make reverse client @cl connection @c's requester (taking a reference for it). Credits start
 * at 1: the client's first reply says how many it grants (RFC 8167 section 2.1). A receive is
 * posted for each call that may be out (section 2.2.2). */
static void
bclnt_attach(struct rpcr_clnt *cl, struct xprt_conn *c)
{
	cl->conn = c;
	cl->refs++;
	c->clnt = cl;
	clnt_tmpl_set(cl, c->wire); /* (its calls in the connection's version) */
	c->credits = 1;
	c->outstanding = 0;
	clnt_limit_update(c);
	c->recv_target += cl->nslots;
	c->recv_floor += cl->nslots;
	if (c->srq)
		xprt_srq_reserve_extra(c, cl->nslots); /* (its replies land in the SRQ) */
	xprt_mark_dirty(c);
}

static struct rpcr_clnt *
bclnt_get(struct rpcr_svc_req *r, uint32_t prog, uint32_t vers)
{
	struct xprt_conn *c = r->conn;
	struct rpcr_clnt_conf conf;
	struct rpcr_clnt *cl;

	if (r->state == XPRT_SREQ_FREE) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* (A call may come in before the ESTABLISHED event is seen: calls wait for it.) */
	if (c->state >= XPRT_CONN_CLOSING) {
		rte_errno = ECONNRESET;
		return NULL;
	}
	cl = c->clnt;
	if (cl != NULL) {
		if (cl->conf.prog != prog || cl->conf.vers != vers) {
			rte_errno = EEXIST;
			return NULL;
		}
		cl->refs++;
		return cl;
	}
	memset(&conf, 0, sizeof(conf));
	conf.addr = "(reverse direction)";
	conf.prog = prog;
	conf.vers = vers;
	conf.credits = XPRT_BC_SLOTS;
	conf.inline_send = c->inline_send;
	conf.inline_recv = c->inline_recv;
	conf.no_draft = true;
	cl = clnt_new(c->p, &conf);
	if (cl == NULL)
		return NULL;
	cl->reverse = true;
	cl->origin = c->svc;
	cl->refs = 1; /* the caller's */
	cl->st_sent = &c->p->stats.bcalls_sent;
	TAILQ_INSERT_TAIL(&c->p->clnts, cl, next);
	bclnt_attach(cl, c);
	return cl;
}

void
xprt_clnt_orphan_reverse(const struct rpcr_svc *s)
{
	struct rpcr_clnt *cl;

	TAILQ_FOREACH (cl, &s->p->clnts, next) {
		if (!cl->reverse || cl->origin != s || cl->orphan)
			continue;
		cl->orphan = true;
		if (cl->conn == NULL)
			clnt_fail_all(cl, -ECONNRESET);
	}
}

/* rpcr_clnt_rebind() on the poller. */
static int
bclnt_rebind(struct rpcr_clnt *cl, struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;

	if (!cl->reverse || r->state == XPRT_SREQ_FREE || c->p != cl->p || c->svc != cl->origin)
		return -EINVAL;
	if (cl->conn == c)
		return 0;
	if (cl->conn != NULL)
		return -EBUSY;
	if (c->state >= XPRT_CONN_CLOSING || cl->orphan)
		return -ECONNRESET;
	if (!xprt_conn_brs_ok(c))
		return -ENOTSUP; /* (a version-2 client that said BRS NONE) */
	if (c->clnt != NULL)
		return -EEXIST;
	bclnt_attach(cl, c);
	cl->p->stats.brebinds++;
	XPRT_LOG(DEBUG, "%s: reverse-direction client moved to conn %" PRIu64 " (%u calls to send)",
		 cl->p->name, c->id, (unsigned int)(cl->nslots - cl->nslot_free));
	return 0;
}

void
xprt_bclnt_ask_run(struct xprt_bclnt_ask *a)
{
	if (a->rebind != NULL) {
		a->err = -bclnt_rebind(a->rebind, a->r);
	} else {
		a->cl = bclnt_get(a->r, a->prog, a->vers);
		a->err = a->cl != NULL ? 0 : rte_errno;
	}
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

void
xprt_bclnt_put(struct rpcr_clnt *cl)
{
	clnt_unref(cl);
}

struct rpcr_clnt *
rpcr_svc_req_bclnt(struct rpcr_svc_req *r, uint32_t prog, uint32_t vers)
{
	struct rpcr_xprt_poller *p;
	struct xprt_bclnt_ask a;

	if (r == NULL || r->conn == NULL || !r->conn->server) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (!xprt_conn_brs_ok(r->conn)) {
		rte_errno = ENOTSUP; /* (a version-2 client that said BRS NONE, §5.2.5) */
		return NULL;
	}
	p = r->conn->p;
	if (xprt_on_owner(p))
		return bclnt_get(r, prog, vers);
	/* Another thread (a worker of the decoupled mode, holding @r): the poller makes it, this
	 * thread waits for it (the poller must be running). */
	memset(&a, 0, sizeof(a));
	a.r = r;
	a.prog = prog;
	a.vers = vers;
	while (rte_ring_mp_enqueue(p->ring, (void *)((uintptr_t)&a | XPRT_RING_BCLNT)) != 0)
		rte_pause();
	xprt_poller_kick(p);
	while (__atomic_load_n(&a.done, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	if (a.cl == NULL)
		rte_errno = a.err;
	return a.cl;
}

int
rpcr_clnt_rebind(struct rpcr_clnt *cl, struct rpcr_svc_req *r)
{
	struct rpcr_xprt_poller *p;
	struct xprt_bclnt_ask a;

	if (cl == NULL || r == NULL || r->conn == NULL || !r->conn->server)
		return -EINVAL;
	p = cl->p;
	if (xprt_on_owner(p))
		return bclnt_rebind(cl, r);
	/* A worker holding @r: done on the poller, as rpcr_svc_req_bclnt() is. */
	memset(&a, 0, sizeof(a));
	a.r = r;
	a.rebind = cl;
	while (rte_ring_mp_enqueue(p->ring, (void *)((uintptr_t)&a | XPRT_RING_BCLNT)) != 0)
		rte_pause();
	xprt_poller_kick(p);
	while (__atomic_load_n(&a.done, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	return -a.err;
}

int
rpcr_clnt_register(struct rpcr_clnt *cl, const struct rpcr_svc_prog *prog)
{
	if (cl == NULL || prog == NULL)
		return -EINVAL;
	if (cl->bsvc == NULL)
		return -ENOTSUP;
	return rpcr_svc_register(cl->bsvc, prog);
}

bool
rpcr_clnt_serves(const struct rpcr_clnt *cl, uint32_t prog, uint32_t vers)
{
	uint32_t i;

	if (cl == NULL || cl->bsvc == NULL)
		return false;
	for (i = 0; i < cl->bsvc->nprogs; i++)
		if (cl->bsvc->progs[i].prog == prog && cl->bsvc->progs[i].vers == vers)
			return true;
	return false;
}

/*
 * The codecs of a call with none of its own, on a client made from a program: its procedure's,
 * looked up when they run (through the message's slot: its client, the call's procedure). With
 * none there (a call made again on another client), nothing is written or read.
 */
static int
table_encode(struct rpcr_msg *m, const void *args)
{
	const struct xprt_creq *r = m->owner;
	const struct rpcr_clnt *cl = r->cl;
	uint32_t proc = r->call->proc;

	if (cl->codecs == NULL || proc >= cl->conf.nulb || cl->codecs[proc].encode == NULL)
		return 0;
	return cl->codecs[proc].encode(m, args);
}

static int
table_decode(struct rpcr_msg *m, void *res)
{
	const struct xprt_creq *r = m->owner;
	const struct rpcr_clnt *cl = r->cl;
	uint32_t proc = r->call->proc;

	if (cl->codecs == NULL || proc >= cl->conf.nulb || cl->codecs[proc].decode == NULL)
		return 0;
	return cl->codecs[proc].decode(m, res);
}

/* Client @cl was made from a program: a call's NULL codecs (or the ones this set on an earlier
 * use of the call) become table_encode()/table_decode() where its procedure has them. */
static void
clnt_call_codecs(const struct rpcr_clnt *cl, struct rpcr_call *call)
{
	const struct xprt_clnt_codec *pc =
		call->proc < cl->conf.nulb ? &cl->codecs[call->proc] : NULL;

	if (call->encode == NULL || call->encode == table_encode)
		call->encode = pc != NULL && pc->encode != NULL && call->args != NULL ? table_encode
										      : NULL;
	if (call->decode == NULL || call->decode == table_decode)
		call->decode =
			pc != NULL && pc->decode != NULL && call->res != NULL ? table_decode : NULL;
}

int
rpcr_clnt_call(struct rpcr_clnt *cl, struct rpcr_call *call)
{
	if (unlikely(cl == NULL))
		return -EINVAL;
	if (unlikely(call == NULL))
		return -EINVAL;
	if (unlikely(((uintptr_t)call->done | (uintptr_t)call->done_ring) == 0))
		return -EINVAL;
	/* (One test for the two uncommon cases: result buffers to check, a program's codecs.) */
	if (unlikely(((uintptr_t)cl->codecs | call->nres_bulk) != 0)) {
		if (call->nres_bulk != 0 &&
		    (call->nres_bulk > XPRT_MAX_BULK || call->res_bulk == NULL))
			return -EINVAL;
		if (cl->codecs != NULL)
			clnt_call_codecs(cl, call);
	}
	if (likely(xprt_on_owner(cl->p))) {
		clnt_enqueue(cl, call);
		return 0;
	}
	call_priv(call)->clnt = cl;
	if (rte_ring_mp_enqueue(cl->p->ring, (void *)((uintptr_t)call | XPRT_RING_CALL)) != 0)
		return -EAGAIN;
	xprt_poller_kick(cl->p);
	return 0;
}

static void
sync_done(struct rpcr_call *call)
{
	__atomic_store_n((uint32_t *)call->user, 1, __ATOMIC_RELEASE);
}

int
rpcr_clnt_call_sync(struct rpcr_clnt *cl, struct rpcr_call *call)
{
	void (*done)(struct rpcr_call *) = call->done;
	struct rte_ring *ring = call->done_ring;
	void *user = call->user;
	uint32_t flag = 0;
	int rc;

	if (cl != NULL && xprt_on_owner(cl->p) && cl->p->in_poll)
		return -EDEADLK; /* its reply would come from the poll this runs inside */
	call->done = sync_done;
	call->done_ring = NULL;
	call->user = &flag;
	do {
		rc = rpcr_clnt_call(cl, call);
		if (rc == -EAGAIN)
			rte_pause();
	} while (rc == -EAGAIN);
	if (rc == 0) {
		if (xprt_on_owner(cl->p)) {
			while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
				rpcr_xprt_poll(cl->p);
		} else {
			while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
				rte_pause();
		}
		rc = call->status;
	}
	call->done = done;
	call->done_ring = ring;
	call->user = user;
	return rc;
}

bool
rpcr_clnt_connected(const struct rpcr_clnt *cl)
{
	return cl != NULL && cl->conn != NULL && cl->conn->state == XPRT_CONN_CONNECTED;
}

int
rpcr_clnt_disconnect(struct rpcr_clnt *cl)
{
	if (cl == NULL || cl->reverse)
		return -EINVAL;
	if (cl->conn == NULL || cl->conn->state >= XPRT_CONN_CLOSING)
		return -ENOTCONN;
	/* As a lost connection: the QP goes at the end of the next poll, the calls wait. */
	xprt_conn_fail(cl->conn, "closed by the upper layer");
	return 0;
}

int
rpcr_clnt_info_get(const struct rpcr_clnt *cl, struct rpcr_clnt_info *info)
{
	const struct xprt_conn *c;

	if (cl == NULL || info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->connections = cl->nconnected;
	c = cl->conn;
	if (c == NULL)
		return 0;
	info->connected = c->state == XPRT_CONN_CONNECTED;
	info->inline_send = c->inline_send;
	info->inline_recv = c->inline_recv;
	info->remote_inv = c->remote_inv;
	info->draft = xprt_draft_has(c, XPRT_F_ALL);
	info->credits = c->credits;
	info->outstanding = c->outstanding;
	info->owed_credits = cl->owed_credits;
	info->msgp_align = c->peer_align;
	info->rdma_vers = c->wire->vers;
	info->negotiating = c->v2_negotiating;
	info->props = c->v2_peer;
	xprt_xchar_info(c, &info->props);
	return 0;
}
