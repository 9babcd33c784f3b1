/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Servers: calls in, replies out.
 *
 * A receive is checked (transport header, chunk lists) and answered RDMA_ERROR when it cannot be
 * processed (ERR_VERS for a version other than 1, ERR_CHUNK for anything malformed or not
 * negotiated). Read chunks are pulled with RDMA Reads into bulk buffers before the handler runs
 * (the position-zero chunk, a long call, into one contiguous buffer it is decoded from); the
 * handler then sees arguments wherever they landed, without a copy. Results that the client
 * offered write chunks for are RDMA-Written there, straight from the handler's buffers; a reply
 * that does not fit inline goes into the client's reply chunk; the Send comes last, with
 * Send-with-Invalidate when both sides asked for it and the call's chunks name one key.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

#define SVC_DEFAULT_CREDITS    64u
#define SVC_DEFAULT_MAX_CONNS  64u
#define SVC_MAX_CHUNK          (1u << 30) /* bytes of one read chunk */
#define SVC_DEFAULT_CALL_BYTES (64u << 20)
#define SVC_MAX_SEGS           32u /* segments of one chunk (XPRT_RX_READS: a whole read list) */

static void svc_verdict(struct rpcr_svc_req *r, enum rpcr_svc_verdict v);
static inline bool reply_fast(struct rpcr_svc_req *r, uint32_t len);
static __rte_always_inline uint32_t reply_send_msg(struct rpcr_svc_req *r, struct rte_mbuf *send,
						   uint32_t len, uint32_t inv, bool keep, bool fwd,
						   const uint32_t vers);

const struct xprt_vops xprt_v1_svc_ops = {.recv_burst = xprt_svc_recv_burst};
static uint16_t svc_recv_burst_open(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n);
/* A connection whose version its first message is still to fix (svc_recv_burst_open()). */
const struct xprt_vops xprt_svc_open_ops = {.recv_burst = svc_recv_burst_open};

/* ---- request slots ---- */

/* The state changes a request may make: a bit per destination, by origin (see the diagram in
 * xprt_internal.h). Checked in the sanitizer builds (XPRT_CHECK). */
#define SREQ_TO(s) (1u << (s))
static const uint8_t sreq_legal[XPRT_SREQ_NUM_STATES] __rte_unused = {
	[XPRT_SREQ_FREE] = SREQ_TO(XPRT_SREQ_EXECUTING),
	[XPRT_SREQ_EXECUTING] = SREQ_TO(XPRT_SREQ_FREE) | SREQ_TO(XPRT_SREQ_EXECUTING) |
				SREQ_TO(XPRT_SREQ_READING) | SREQ_TO(XPRT_SREQ_WAITING) |
				SREQ_TO(XPRT_SREQ_DEFERRED) | SREQ_TO(XPRT_SREQ_REPLYING),
	[XPRT_SREQ_WAITING] = SREQ_TO(XPRT_SREQ_FREE) | SREQ_TO(XPRT_SREQ_WAITING) |
			      SREQ_TO(XPRT_SREQ_READING) | SREQ_TO(XPRT_SREQ_EXECUTING),
	[XPRT_SREQ_READING] =
		SREQ_TO(XPRT_SREQ_FREE) | SREQ_TO(XPRT_SREQ_WAITING) | SREQ_TO(XPRT_SREQ_EXECUTING),
	[XPRT_SREQ_DEFERRED] = SREQ_TO(XPRT_SREQ_FREE) | SREQ_TO(XPRT_SREQ_EXECUTING),
	[XPRT_SREQ_REPLYING] = SREQ_TO(XPRT_SREQ_FREE) | SREQ_TO(XPRT_SREQ_REPLYING) |
			       SREQ_TO(XPRT_SREQ_EXECUTING),
};

/*
 * The one place a request's state changes (@from is its state now: a constant where the caller
 * knows it, so that the straight-line path's changes fold to a store), with what goes with the
 * states: WAITING and REPLYING requests are on the connection's waiting list (counted in the
 * poller's nwaiting); a DEFERRED one is counted in its server's ndeferred while a handler or a
 * worker holds it (r->svc: the server, kept if the connection goes meanwhile).
 */
static __rte_always_inline void
sreq_move(struct rpcr_svc_req *r, enum xprt_sreq_state from, enum xprt_sreq_state to)
{
	struct xprt_conn *c = r->conn;
	bool wf = from == XPRT_SREQ_WAITING || from == XPRT_SREQ_REPLYING;
	bool wt = to == XPRT_SREQ_WAITING || to == XPRT_SREQ_REPLYING;

	XPRT_CHECK(r->state == from && (sreq_legal[from] & SREQ_TO(to)) != 0);
	if (wf && !wt) {
		TAILQ_REMOVE(&c->waiting, r, wait);
		c->p->nwaiting--;
	} else if (!wf && wt) {
		TAILQ_INSERT_TAIL(&c->waiting, r, wait);
		c->p->nwaiting++;
		if (!c->wlisted) {
			c->wlisted = true;
			TAILQ_INSERT_TAIL(&c->p->wconns, c, wnext);
		}
	}
	if (from == XPRT_SREQ_DEFERRED && to != XPRT_SREQ_DEFERRED) {
		if (r->svc != NULL)
			r->svc->ndeferred--;
		r->svc = NULL;
	} else if (to == XPRT_SREQ_DEFERRED && from != XPRT_SREQ_DEFERRED) {
		r->svc = c->svc;
		r->svc->ndeferred++;
	}
	r->state = to;
}

/* The free request sreq_take() may take for @c next: NULL when the poller's pool has none (sreq_get()
 * then makes one) or @c has as many out as it may (nsreqs). */
static inline struct rpcr_svc_req *
sreq_peek(const struct xprt_conn *c)
{
	return likely(c->inflight < c->nsreqs) ? c->p->sreq_pool : NULL;
}

/* Take @r, what sreq_peek() found, for @c. */
static inline void
sreq_take(struct xprt_conn *c, struct rpcr_svc_req *r)
{
	c->p->sreq_pool = r->free_next;
	r->conn = c;
	c->inflight++;
	/* (A free request holds nothing: pz, nrchunks, resbuf, nres are 0.) */
	/* (drop, wait_dispatch, res_padded: false in a free request, see xprt_sreq_put()) */
	r->accept_stat = RPCR_ONCRPC_SUCCESS;
}

/* Back on the poller's free list, first: @r is FREE. */
static inline void
sreq_push(struct xprt_conn *c, struct rpcr_svc_req *r)
{
	r->free_next = c->p->sreq_pool;
	c->p->sreq_pool = r;
	c->inflight--;
}

/* A free request for @c (made if the pool has none); NULL: @c has as many out as it may, or no
 * memory. */
static inline struct rpcr_svc_req *
sreq_get(struct xprt_conn *c)
{
	struct rpcr_svc_req *r;

	if (unlikely(c->inflight >= c->nsreqs))
		return NULL;
	r = c->p->sreq_pool;
	if (unlikely(r == NULL) && (r = xprt_sreq_make(c->p)) == NULL)
		return NULL;
	sreq_take(c, r);
	return r;
}

static void
sreq_put_slow(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;
	uint32_t i;

	if (r->pz != NULL) {
		rte_pktmbuf_free(r->pz);
		r->pz = NULL;
	}
	for (i = 0; i < r->nrchunks; i++)
		rte_pktmbuf_free(r->rchunk[i]);
	r->nrchunks = 0;
	if (r->resbuf != NULL) {
		xprt_buf_put(c, r->resbuf);
		r->resbuf = NULL;
	}
	for (i = 0; i < r->nres; i++)
		rte_pktmbuf_free(r->resb[i].m);
	r->nres = 0;
	if (r->done != NULL) {
		/* Exposed for a reply that was never sent. */
		r->done->nheld = 0;
		xprt_draft_done_release(c, r->done);
		r->done = NULL;
	}
}

/* Give back a request that holds nothing but its receive buffer, EXECUTING, on a live
 * connection; @last: that buffer is the receive taken last (it may stay in its slot). */
static __rte_always_inline void
sreq_put_free(struct rpcr_svc_req *r, bool last)
{
	struct xprt_conn *c = r->conn;

	if (last)
		xprt_buf_put_last_recv(c, r->recv);
	else
		xprt_buf_put_recv(c, r->recv);
	r->recv = NULL;
	sreq_move(r, XPRT_SREQ_EXECUTING, XPRT_SREQ_FREE);
	sreq_push(c, r);
}

/* Give back a request that holds nothing but its receive buffer, on a live connection. */
static __rte_always_inline void
sreq_put_fast(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;

	if (unlikely(r->pz != NULL || (r->nrchunks | r->nres) != 0 || r->resbuf != NULL ||
		     r->done != NULL || r->state != XPRT_SREQ_EXECUTING ||
		     c->state >= XPRT_CONN_CLOSED)) {
		xprt_sreq_put(r);
		return;
	}
	/* (What a free request has: empty lists, no flags; the straight-line path sets none.) */
	rpcr_proto_chunks_reset(&r->hdr.chunks);
	r->drop = false;
	r->wait_dispatch = false;
	r->res_padded = false;
	r->wres_index = 0;
	r->reply_sends = 0;
	sreq_put_free(r, false);
}

void
xprt_sreq_put(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;

	if (unlikely(r->pz != NULL || (r->nrchunks | r->nres) != 0 || r->resbuf != NULL ||
		     r->done != NULL))
		sreq_put_slow(r);
	if (r->recv != NULL) {
		xprt_buf_put(c, r->recv);
		r->recv = NULL;
	}
	/* A free request's chunk lists are empty and its flags false (sreq_get() counts on it;
	 * the straight-line path sets none of them). */
	rpcr_proto_chunks_reset(&r->hdr.chunks);
	r->drop = false;
	r->wait_dispatch = false;
	r->res_padded = false;
	r->wres_index = 0;
	r->reply_sends = 0;
	sreq_move(r, r->state, XPRT_SREQ_FREE);
	sreq_push(c, r);
	if (unlikely(c->state == XPRT_CONN_CLOSED) && c->inflight == 0 && !c->hold_free)
		xprt_conn_free(c);
}

static void
sreq_wait(struct rpcr_svc_req *r, enum xprt_sreq_state state)
{
	sreq_move(r, r->state, state);
}

/* ---- credits and RDMA_ERROR ---- */

/* What to grant: what the client asked, at most our maximum, at most what is (about to be)
 * posted, never 0. */
static inline uint32_t
grant(struct xprt_conn *c, uint32_t asked)
{
	uint32_t g;

	/* (From the shared receive queue: what its state allows, srq.c; the receives posted,
	 * in other lines, are not looked at. A client's connection there, answering its server's
	 * calls, reserved a receive for each of its credits when it connected.) */
	if (unlikely(c->srq))
		return c->srq_clnt ? RTE_MAX(RTE_MIN(asked, c->rsp_credits), 1u)
				   : xprt_srq_grant(c, asked);
	g = RTE_MIN(asked, c->rsp_credits);
	g = RTE_MIN(g, c->rq_tail - c->rq_head + c->nrecycle);
	return RTE_MAX(g, 1u);
}

/*
 * Answer message @xid, of transport version @vers, with transport error @err (XPRT_HERR_*): the
 * error carries the message's version (RFC 8166 section 4.5). A responder that cannot send it
 * closes the connection (RFC 8166 section 4.5.4): the requester would otherwise wait for an
 * answer that never comes, with one of its credits gone.
 */
static void
svc_send_error(struct xprt_conn *c, uint32_t xid, uint32_t vers, uint32_t err, uint32_t chunk_index,
	       uint32_t length_needed)
{
	const struct xprt_wire *w;
	struct xprt_hdr e;
	struct rte_mbuf *m;
	ssize_t n;

	if (c->state >= XPRT_CONN_CLOSING)
		return;
	m = xprt_buf_get(c);
	if (m == NULL) {
		xprt_conn_fail(c, "no buffer for an RDMA_ERROR");
		return;
	}
	/* In the failing message's own version where the server speaks it (a version-1 message
	 * on a version-2 connection gets version 1's ERR_VERS), else the connection's. */
	w = c->wire;
	if (vers != w->vers && c->svc != NULL && (c->svc->conf.versions & RPCR_XPRT_V2))
		w = vers == xprt_wire_v1.vers   ? &xprt_wire_v1
		    : vers == xprt_wire_v2.vers ? &xprt_wire_v2
						: w;
	memset(&e, 0, sizeof(e));
	e.xid = xid;
	e.vers = vers;
	e.credit = w->credit_word(grant(c, c->rsp_credits), c->rsp_credits);
	e.err = err;
	if (c->svc != NULL && c->svc->conf.versions != 0) {
		/* The range served (versions are checked contiguous from 1 at creation). */
		e.vers_low = xprt_wire_v1.vers;
		e.vers_high = 31u - (uint32_t)__builtin_clz(c->svc->conf.versions);
	}
	/* Version 2's arms: the limits this side takes, the resources a reply needs (§7.3). */
	if (c->svc != NULL) {
		e.max_chunks = c->svc->conf.max_chunks;
		e.max_segments = c->svc->conf.max_segs;
	}
	e.chunk_index = chunk_index;
	e.length_needed = length_needed;
	n = w->encode_error(rte_pktmbuf_mtod(m, uint8_t *), XPRT_BUF_DATA, &e);
	if (n > 0) {
		m->data_len = (uint16_t)n;
		m->pkt_len = (uint32_t)n;
	}
	if (n < 0 || xprt_send1(c, m, 0, false) != 0) {
		xprt_buf_put(c, m);
		xprt_conn_fail(c, n < 0 ? "cannot encode an RDMA_ERROR"
					: "no send-queue room for an RDMA_ERROR");
		return;
	}
	c->p->stats.rdma_errors_sent++;
}

uint32_t
xprt_svc_credit_word(struct xprt_conn *c)
{
	return c->wire->credit_word(grant(c, c->rsp_credits), c->rsp_credits);
}

void
xprt_svc_send_error(struct xprt_conn *c, uint32_t xid, uint32_t vers, uint32_t err)
{
	svc_send_error(c, xid, vers, err, 0, 0);
}

void
xprt_svc_send_error_res(struct xprt_conn *c, uint32_t xid, uint32_t err, uint32_t chunk_index,
			uint32_t length_needed)
{
	svc_send_error(c, xid, c->wire->vers, err, chunk_index, length_needed);
}

/* Answer request @r (its header decoded: of the connection's version) with @err. */
static void
req_error(struct rpcr_svc_req *r, uint32_t err)
{
	xprt_svc_send_error(r->conn, r->xid, r->conn->wire->vers, err);
}

/* ---- staging send-queue WRs ---- */

/* ---- reading read chunks ---- */

/*
 * Group the read list into chunks (segments sharing a position, positions increasing, the
 * position-zero chunk first) and check them. @return the number of chunks (position zero not
 * counted), or (refuse_chunks() answers) -EINVAL (malformed), -ENOSPC (more chunks than the
 * server's max_chunks), -EMLINK (more segments in a chunk than its max_segs), -E2BIG (more
 * bytes than max_call_bytes).
 */
/* The bytes of a call's @nchunks read chunks (as read_chunks_check() found them). */
static uint64_t
call_bytes(const struct rpcr_svc_req *r, int nchunks)
{
	uint64_t n = r->pz_len;
	int i;

	for (i = 0; i < nchunks; i++)
		n += r->rlen[i];
	return n;
}

static int
read_chunks_check(struct rpcr_svc_req *r)
{
	const struct rpcr_svc_conf *conf = &r->conn->svc->conf;
	struct rpcr_proto_chunks *ch = &r->hdr.chunks;
	uint32_t i, prev = 0, nchunks = 0, nsegs = 0;
	uint64_t len = 0, total = 0;

	/* In position order (a stable sort: a chunk's segments keep their order), as Linux
	 * accepts them in any order. */
	for (i = 1; i < ch->nreads; i++) {
		struct rpcr_proto_rseg x = ch->reads[i];
		uint32_t j = i;

		for (; j > 0 && ch->reads[j - 1].position > x.position; j--)
			ch->reads[j] = ch->reads[j - 1];
		ch->reads[j] = x;
	}
	r->pz_len = 0;
	for (i = 0; i < ch->nreads; i++) {
		uint32_t pos = ch->reads[i].position;

		if (pos % 4 != 0)
			return -EINVAL;
		if (i == 0 || pos != prev) {
			if (pos != 0) {
				if (nchunks == conf->max_chunks)
					return -ENOSPC;
				r->rpos[nchunks] = pos;
				r->rlen[nchunks] = 0;
				nchunks++;
			}
			len = 0;
			nsegs = 0;
		}
		if (++nsegs > conf->max_segs)
			return -EMLINK;
		len += ch->reads[i].seg.length;
		total += ch->reads[i].seg.length;
		if (total > conf->max_call_bytes)
			return -E2BIG;
		if (pos == 0)
			r->pz_len = (uint32_t)len;
		else
			r->rlen[nchunks - 1] = (uint32_t)len;
		prev = pos;
	}
	if (ch->nreads != 0 && ch->reads[0].position == 0 && r->pz_len == 0)
		return -EINVAL;
	/* (A call is one contiguous buffer.) */
	if (r->pz_len > XPRT_BULK_DATA)
		return -E2BIG;
	return (int)nchunks;
}

/* The write list and reply chunk within the server's limits: 0, -ENOSPC (more write chunks
 * than max_chunks) or -EMLINK (more segments in one than max_segs). */
static int
write_chunks_check(const struct rpcr_svc_req *r)
{
	const struct rpcr_svc_conf *conf = &r->conn->svc->conf;
	const struct rpcr_proto_chunks *ch = &r->hdr.chunks;
	uint32_t i;

	if (ch->nwrites > conf->max_chunks)
		return -ENOSPC;
	for (i = 0; i < ch->nwrites; i++)
		if (ch->writes[i].nsegs > conf->max_segs)
			return -EMLINK;
	if (ch->has_reply && ch->reply.nsegs > conf->max_segs)
		return -EMLINK;
	return 0;
}

/* Count a call refused for a chunk error @rc of read_chunks_check()/write_chunks_check() (or
 * start_reads()), and answer it: a limit with its error (@chunks_err for too many chunks,
 * XPRT_HERR_READS or _WRITES; SEGMENTS for too many segments: version 2's arms carry the
 * limits, version 1 says ERR_CHUNK for all), anything else XPRT_HERR_CHUNK. */
static void
refuse_chunks(struct rpcr_svc_req *r, int rc, uint32_t chunks_err)
{
	struct xprt_conn *c = r->conn;
	uint32_t err = rc == -ENOSPC   ? chunks_err
		       : rc == -EMLINK ? XPRT_HERR_SEGMENTS
				       : XPRT_HERR_CHUNK;

	if (rc == -E2BIG) {
		c->p->stats.limit_call_bytes++;
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": xid 0x%08x: read chunks over max_call_bytes",
			 c->p->name, c->id, r->xid);
	} else if (rc == -ENOSPC || rc == -EMLINK) {
		c->p->stats.limit_chunks++;
		XPRT_LOG(DEBUG,
			 "%s: conn %" PRIu64 ": xid 0x%08x: more chunks or segments than allowed",
			 c->p->name, c->id, r->xid);
	} else {
		c->p->stats.bad_headers++;
	}
	req_error(r, err);
	xprt_sreq_put(r);
}

static void dispatch(struct rpcr_svc_req *r);

/*
 * Post the RDMA Reads of a request's read chunks. @return 0 (posted: READING; or nothing to read:
 * dispatched), -EAGAIN (no bulk buffers or send-queue room: retried later), -E2BIG (more than
 * the bulk pool holds), -ENOSPC (more segments than one batch of WRs takes).
 */
static int
start_reads(struct rpcr_svc_req *r, uint32_t nchunks)
{
	struct xprt_conn *c = r->conn;
	const struct rpcr_proto_chunks *ch = &r->hdr.chunks;
	struct rte_mbuf *bufs[XPRT_RX_CHUNKS + 1] = {NULL};
	struct rpcr_proto_seg segs[XPRT_RX_READS];
	struct xprt_xfer x[XPRT_RX_CHUNKS + 1];
	uint32_t nbufs = 0, nw = 0, ns = 0, i, j;
	int rc = 0;

	/* (A continued call has its message already: cont.c.) */
	bool pz_read = r->pz_len != 0 && r->pz == NULL;

	/* More than the whole bulk pool would wait forever: refuse it. */
	{
		uint64_t need = pz_read;

		for (i = 0; i < nchunks; i++)
			need += (r->rlen[i] + XPRT_BULK_DATA - 1) / XPRT_BULK_DATA;
		if (need > c->p->bulk_mp->size) {
			XPRT_LOG(WARNING,
				 "%s: xid 0x%08x: read chunks need %" PRIu64
				 " bulk buffers, the pool has %u",
				 c->p->name, r->xid, need, c->p->bulk_mp->size);
			return -E2BIG;
		}
	}
	/* Buffers: the position-zero chunk contiguous, the others as chains. */
	if (pz_read) {
		struct rte_mbuf *m = rpcr_chunk_alloc(c->p->bulk);

		if (m == NULL)
			return -EAGAIN;
		m->data_len = (uint16_t)r->pz_len;
		m->pkt_len = r->pz_len;
		bufs[nbufs++] = m;
	}
	for (i = 0; i < nchunks; i++) {
		struct rte_mbuf *m = rpcr_chunk_alloc_chain(c->p->bulk, r->rlen[i]);

		if (m == NULL) {
			rc = rte_errno == E2BIG ? -E2BIG : -EAGAIN;
			goto fail;
		}
		bufs[nbufs++] = m;
	}

	/* One transfer per chunk (the read list is in position order, position zero first). */
	rc = xprt_plan_xfers(c, RPCR_RDEV_WR_READ, x, xprt_read_xfers(ch, bufs, segs, x), 0, &nw,
			     &ns);
	if (rc != 0) {
		rc = -ENOSPC;
		goto fail;
	}
	if (!xprt_sq_room(c, nw)) {
		rc = -EAGAIN;
		goto fail;
	}
	j = 0;
	if (pz_read)
		r->pz = bufs[j++];
	for (i = 0; i < nchunks; i++)
		r->rchunk[i] = bufs[j++];
	r->nrchunks = nchunks;
	if (nw == 0) {
		/* Nothing to move (zero-length chunks). */
		dispatch(r);
		return 0;
	}
	sreq_move(r, r->state, XPRT_SREQ_READING);
	xprt_sq_commit(c, nw, ns, NULL, r, NULL, true);
	if (pz_read)
		xprt_count_in(c, r->pz_len);
	for (i = 0; i < nchunks; i++)
		xprt_count_in(c, r->rlen[i]);
	return 0;

fail:
	for (i = 0; i < nbufs; i++)
		rte_pktmbuf_free(bufs[i]);
	return rc;
}

void
xprt_svc_reads_done(struct rpcr_svc_req *r, bool ok)
{
	if (unlikely(!ok || r->state != XPRT_SREQ_READING)) {
		xprt_sreq_put(r);
		return;
	}
	dispatch(r);
}

/* ---- receiving calls ---- */

/*
 * The common call, straight through: RDMA_MSG with empty chunk lists, an AUTH_NONE call of the
 * program the connection called last, a handler that answers at once, inline. Everything it
 * checks, the general path (xprt_svc_recv_hdr(), dispatch(), xprt_svc_reply_now()) checks too.
 * @return false: not that, nothing changed.
 */
static __rte_always_inline bool
svc_recv_fast(struct xprt_conn *c, struct rte_mbuf *m, const bool fwd, const uint32_t vers)
{
	const uint32_t plen = vers == 2 ? XPRT_V2_PLAIN : XPRT_V1_PLAIN;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *b = d + plen; /* the RPC call */
	const struct rpcr_svc_prog *pg = c->fast_prog;
	const struct rpcr_svc_proc *pc;
	struct rpcr_svc_req *r;
	struct xprt_rbuf *rb;
	struct rte_mbuf *res;
	uint32_t proc;
	enum rpcr_svc_verdict v;
	uint8_t *p;

	r = sreq_peek(c);
	if (unlikely(m->data_len < plen + 40 || pg == NULL || r == NULL))
		return false; /* (the general path: it makes a request not made yet) */
	/*
	 * A plain header of version @vers (a call's); the RPC xid (word 0 of the call) the
	 * transport header's; CALL (word 1), RPC version 2, this program and version (words 2-4);
	 * AUTH_NONE credentials and verifier (words 6-9): compared eight bytes at a time in wire
	 * byte order.
	 */
	if (unlikely(((vers == 2 ? xprt_v2_plain_diff(d, XPRT_V2_TYPEFLAGS_CALL) |
					   xprt_v2_cont_granted(d)
				 : xprt_v1_plain_diff(d)) |
		      xprt_load64(b + 24) | xprt_load64(b + 32) |
		      (xprt_load64(b + 4) ^ XPRT_WIRE_CALL_RPCV2) |
		      (xprt_load64(b + 12) ^ c->fast_progvers) |
		      (uint64_t)(xprt_load32(d) ^ xprt_load32(b))) != 0))
		return false;
	proc = rpcr_xdr_load32(b + 20);
	if (unlikely(proc >= pg->nprocs || pg->procs[proc].proc != proc ||
		     pg->procs[proc].handler == NULL))
		return false;
	pc = &pg->procs[proc];
	/* The reply ring's next buffer when the Send that carried it last is done. */
	rb = &c->rring[c->rring_next & c->rring_mask];
	res = rb->m;
	if (likely(res != NULL && xprt_sq_done(c, rb->seq))) {
		rb->m = NULL; /* the request's (an ordinary buffer) until it goes back below */
		res->data_off = XPRT_HEADROOM;
	} else {
		res = xprt_buf_get(c);
		if (unlikely(res == NULL))
			return false;
	}
	sreq_take(c, r);
	r->recv = m;
	r->resbuf = res;
	sreq_move(r, XPRT_SREQ_FREE, XPRT_SREQ_EXECUTING);
	if (vers == 2) {
		r->xid = xprt_v2_xid(d);
		r->credit_req = xprt_v2_credit_ask(xprt_v2_credit(d));
	} else {
		r->xid = xprt_v1_xid(d);
		r->credit_req = xprt_v1_credit(d);
	}
	r->hdr_len = plen;
	r->msgp.align = 0;
	r->hdr.type = XPRT_HT_MSG; /* (its chunk lists empty: a free request's are) */
	r->prog = pg;
	r->proc = pc;
	r->call_lazy = true; /* rpcr_svc_req_call() fills r->call from the header if asked */
	(*(fwd ? &c->p->stats.calls_recv : &c->p->stats.bcalls_recv))++; /* (folded) */
	c->calls_in++;
	/* Arguments: after the 40-byte call header; results: behind a SUCCESS reply header. */
	rpcr_xdr_dec_init(&r->args.dec, b, m->data_len - plen);
	r->args.dec.p += 40;
	r->args.ulb = &pc->ulb;
	r->args.buf = m;
	r->args.vdelta = 0;
	r->args.nbulk = 0;
	r->args.nchunk = 0;
	r->args.msgp.align = 0;
	p = rte_pktmbuf_mtod(res, uint8_t *);
	memcpy(p, b, 4); /* the xid, as it came */
	rpcr_xdr_store32(p + 4, RPCR_ONCRPC_REPLY);
	memset(p + 8, 0, 16);
	rpcr_xdr_enc_init(&r->res.enc, p, XPRT_BUF_DATA);
	r->res.enc.p += 24;
	r->res.ulb = &pc->ulb;
	r->res.buf = res;
	r->res.vdelta = 0;
	r->res.nbulk = 0;
	r->res.msgp.align = 0;
	v = pc->handler(r);
	if (likely(v == RPCR_SVC_REPLY)) {
		uint32_t len = (uint32_t)rpcr_xdr_enc_pos(&r->res.enc);

		res->data_len = (uint16_t)len;
		res->pkt_len = len;
		/* (No write list, no padding on this path: results put in chunks, a reply
		 * longer than a Send or a full send queue take the general one.) */
		if (likely(r->nres == 0 && plen + len <= c->plain_send && r->resbuf == res &&
			   xprt_sq_room(c, 1))) {
			if (likely(plen + len <= c->inline_free)) {
				/* Inline: its buffer is free again once posted (xprt_send1_post()). */
				reply_send_msg(r, res, len, 0, false, fwd, vers);
			} else {
				rb = &c->rring[c->rring_next++ & c->rring_mask];
				if (likely(rb->m == NULL)) {
					/* Back on the ring: this Send releases nothing when done. */
					rb->seq = reply_send_msg(r, res, len, 0, true, fwd, vers);
					rb->m = res;
				} else {
					reply_send_msg(r, res, len, 0, false, fwd, vers);
				}
			}
			if (likely(r->state == XPRT_SREQ_EXECUTING && c->state < XPRT_CONN_CLOSED))
				sreq_put_free(r, true);
			else
				xprt_sreq_put(r);
		} else {
			xprt_svc_reply_now(r);
		}
	} else {
		svc_verdict(r, v);
	}
	return true;
}

/*
 * Any other call, its header decoded once by the demultiplexer (recv.c) into @h (@hlen bytes;
 * the demultiplexer's scratch, copied here into the request): RDMA_MSG and RDMA_NOMSG, the 2005
 * draft's RDMA_MSGP and RDMA_DONE where negotiated, anything else answered ERR_CHUNK.
 */
void
xprt_svc_recv_hdr(struct xprt_conn *c, struct rte_mbuf *m, const struct xprt_hdr *h, uint32_t hlen,
		  struct rte_mbuf *whole)
{
	struct rpcr_svc_req *r;
	int nchunks, rc;

	/* Version 2 with HOSTAUTH judged: no call before the client's properties are complete
	 * (§5.2.6: the connection's continuing is local policy). */
	if (unlikely(c->wire->flag_dir) && c->svc->conf.hostauth_check != NULL &&
	    !c->v2_peer.complete) {
		XPRT_LOG(NOTICE,
			 "%s: conn %" PRIu64 ": a call before the client's transport properties "
			 "(HOSTAUTH required): closing",
			 c->p->name, c->id);
		if (whole != NULL)
			rte_pktmbuf_free(whole);
		xprt_buf_put(c, m);
		xprt_conn_fail(c, "a call before HOSTAUTH");
		return;
	}

	if (h->type == XPRT_HT_DONE && xprt_draft_has(c, XPRT_F_DONE)) {
		xprt_draft_done_recv(c, h->xid);
		xprt_buf_put(c, m);
		return;
	}
	r = sreq_get(c);
	if (unlikely(r == NULL)) {
		/* More calls than credits granted allow, still unanswered: drop (counted). */
		c->overruns++;
		c->calls_in++;
		c->p->stats.overruns++;
		if (!c->server)
			c->p->stats.bcalls_overrun++;
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": call beyond the credits granted dropped",
			 c->p->name, c->id);
		if (whole != NULL)
			rte_pktmbuf_free(whole);
		xprt_buf_put(c, m);
		return;
	}
	r->recv = m;
	/* A continued call (cont.c): its whole message is the request's from the start, where a
	 * position-zero read chunk's contents go (what dispatch() reads, freed with it). */
	r->pz = whole;
	sreq_move(r, XPRT_SREQ_FREE, XPRT_SREQ_EXECUTING);
	r->call_lazy = false;
	r->xid = h->xid;
	r->credit_req = c->wire->credit_ask(h->credit);
	/* Version 2: the Sends the reply may take (cont.c: the call's grant). */
	if (c->wire->flag_dir)
		r->reply_sends = c->wire->credit_granted(h->credit);
	r->hdr_len = hlen;
	if (h->type != XPRT_HT_DONE) {
		(*(c->server ? &c->p->stats.calls_recv : &c->p->stats.bcalls_recv))++;
		c->calls_in++;
	}
	if (unlikely(!c->server) && !rpcr_proto_chunks_empty(&h->chunks))
		c->p->stats.bcalls_chunks_recv++; /* (BRS GENL) */
	if (unlikely(xprt_hdr_copy(&r->hdr, h) != 0)) {
		/* (The same capacities: it cannot happen.) */
		c->p->stats.limit_chunks++;
		req_error(r, XPRT_HERR_CHUNK);
		xprt_sreq_put(r);
		return;
	}
	switch (r->hdr.type) {
	case XPRT_HT_MSG:
	case XPRT_HT_NOMSG:
		r->msgp.align = 0;
		break;
	case XPRT_HT_MSGP:
		if (!xprt_draft_has(c, XPRT_F_MSGP))
			goto not_negotiated;
		/* Padding is counted from the start of the Send. */
		r->msgp.align = r->hdr.align;
		r->msgp.thresh = r->hdr.thresh;
		r->msgp.bias = r->hdr_len;
		c->p->stats.msgp_recv++;
		break;
	default:
	not_negotiated:
		/* RDMA_MSGP and RDMA_DONE unless negotiated, RDMA_ERROR from a client, ... */
		c->p->stats.bad_headers++;
		req_error(r, XPRT_HERR_CHUNK);
		xprt_sreq_put(r);
		return;
	}
	rc = write_chunks_check(r);
	if (unlikely(rc != 0)) {
		refuse_chunks(r, rc, XPRT_HERR_WRITES);
		return;
	}
	if (likely(r->hdr.chunks.nreads == 0)) {
		if (unlikely(r->pz != NULL)) {
			r->pz_len = r->pz->data_len;
			if (r->pz_len > c->svc->conf.max_call_bytes) {
				refuse_chunks(r, -E2BIG, XPRT_HERR_READS);
				return;
			}
		}
		if (unlikely(r->hdr.type == XPRT_HT_NOMSG)) {
			/* NOMSG with no position-zero chunk: no message at all. */
			c->p->stats.bad_headers++;
			req_error(r, XPRT_HERR_CHUNK);
			xprt_sreq_put(r);
			return;
		}
		dispatch(r);
		return;
	}
	nchunks = read_chunks_check(r);
	if (nchunks >= 0 && r->hdr.type == XPRT_HT_NOMSG && r->pz_len == 0)
		nchunks = -EINVAL;
	/* (A continued call has its message: no position-zero chunk besides; its bytes and its
	 * chunks' within max_call_bytes.) */
	if (nchunks >= 0 && r->pz != NULL)
		nchunks = r->pz_len != 0 ? -EINVAL
			  : call_bytes(r, nchunks) + r->pz->data_len > c->svc->conf.max_call_bytes
				  ? -E2BIG
				  : nchunks;
	if (r->pz != NULL)
		r->pz_len = r->pz->data_len;
	if (nchunks < 0) {
		refuse_chunks(r, nchunks, XPRT_HERR_READS);
		return;
	}
	r->nrchunks = 0;
	rc = start_reads(r, (uint32_t)nchunks);
	if (rc == -EAGAIN) {
		r->wait_chunks = (uint32_t)nchunks;
		r->wait_dispatch = false;
		sreq_wait(r, XPRT_SREQ_WAITING);
	} else if (rc != 0) {
		refuse_chunks(r, rc, XPRT_HERR_SYSTEM); /* (more Reads than a batch: ours) */
	}
}

/* The receives of a server's connection (version 1's burst: its tests inline): the common call
 * straight through, a plain reverse-direction reply to its own straight-line path, anything else
 * to the demultiplexer (recv.c). */
uint16_t
xprt_svc_recv_burst(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rpcr_rdev_qp *qp = wc[0].qp;
	uint16_t i;

	for (i = 0; i < n && wc[i].qp == qp && !(wc[i].wr_id & XPRT_WRID_SQ); i++) {
		struct rte_mbuf *m = xprt_recv_take(c, &wc[i]);

		if (unlikely(m == NULL))
			continue;
		if (likely(svc_recv_fast(c, m, true, 1)))
			continue;
		/* A plain reverse-direction reply: the requester's straight-line path. */
		if (unlikely(c->clnt != NULL) && xprt_clnt_recv_fast_rev(c, m))
			continue;
		xprt_recv_demux(c, m, &wc[i]);
	}
	return i;
}

/* The receives of a server's version-2 connection: the common call straight through (but for
 * a continuation's last part: xprt_cont_passes()), anything else to the demultiplexer,
 * which takes version 2's own messages first (recv.c's v2_control()). No reverse direction in
 * version 2 yet. */
static uint16_t
svc_recv_burst_v2(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rpcr_rdev_qp *qp = wc[0].qp;
	uint16_t i;

	for (i = 0; i < n && wc[i].qp == qp && !(wc[i].wr_id & XPRT_WRID_SQ); i++) {
		struct rte_mbuf *m = xprt_recv_take(c, &wc[i]);

		if (unlikely(m == NULL))
			continue;
		if (xprt_cont_passes(c, rte_pktmbuf_mtod(m, const uint8_t *)) &&
		    likely(svc_recv_fast(c, m, true, 2)))
			continue;
		xprt_recv_demux(c, m, &wc[i]);
	}
	return i;
}

const struct xprt_vops xprt_v2_svc_ops = {.recv_burst = svc_recv_burst_v2};

/* A server that judges its clients' HOSTAUTH (conf.hostauth_check): everything through the
 * demultiplexer until the client's properties are complete (a call before that closes the
 * connection: xprt_svc_recv_hdr()), then version 2's burst. */
static uint16_t
svc_recv_burst_v2_auth(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rpcr_rdev_qp *qp = wc[0].qp;
	uint16_t i;

	if (c->v2_peer.complete) {
		c->vops = XPRT_VOPS_V2_SVC;
		return svc_recv_burst_v2(c, wc, n);
	}
	for (i = 0; i < n && wc[i].qp == qp && !(wc[i].wr_id & XPRT_WRID_SQ); i++) {
		struct rte_mbuf *m = xprt_recv_take(c, &wc[i]);

		if (likely(m != NULL))
			xprt_recv_demux(c, m, &wc[i]);
	}
	return i;
}

const struct xprt_vops xprt_v2_svc_auth_ops = {.recv_burst = svc_recv_burst_v2_auth};

/*
 * The receives of a server's connection whose version is not known yet (a server of more than
 * version 1): the first message received fixes it for good (version 2's §4.2.3.3), by its
 * version word, peeked before anything reads it: version 2 where the server serves it, else
 * version 1 (whose decoding answers any other with ERR_VERS and the range served). One
 * completion at a time until then; a failed or flushed receive leaves it open.
 */
static uint16_t
svc_recv_burst_open(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	const struct rte_mbuf *m = (const struct rte_mbuf *)(uintptr_t)wc[0].wr_id;
	uint32_t vers = 0;

	RTE_SET_USED(n);
	/* (A message too short to be either version's fixes nothing: version 1's burst drops it.) */
	if (wc[0].status == RPCR_RDEV_WC_SUCCESS && c->state < XPRT_CONN_CLOSING)
		vers = xprt_wire_vers(rte_pktmbuf_mtod(m, const uint8_t *), wc[0].byte_len);
	if (vers != 0) {
		bool v2 = (c->svc->conf.versions & RPCR_XPRT_V2) && vers == xprt_wire_v2.vers;

		c->vops = !v2                                   ? XPRT_VOPS_V1_SVC
			  : c->svc->conf.hostauth_check != NULL ? XPRT_VOPS_V2_SVC_AUTH
								: XPRT_VOPS_V2_SVC;
		xprt_conn_set_wire(c, v2 ? &xprt_wire_v2 : &xprt_wire_v1, c->svc->conf.inline_send,
				   c->svc->conf.inline_recv);
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": speaks version %u", c->p->name, c->id,
			 c->wire->vers);
		/* Version 2: our CONNPROP first, ahead of any answer (§6.3.4), granting what the
		 * client's first message asks; its xid that message's. */
		if (v2) {
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t ask = xprt_v2_credit_ask(xprt_v2_credit(d));

			if (xprt_props_send(c, xprt_v2_xid(d),
					    xprt_v2_credit_word(grant(c, ask), c->rsp_credits)) !=
			    0)
				xprt_conn_fail(c, "cannot send our transport properties");
			else if (c->svc->conf.xchar && xprt_xchar_init_send(c) != 0)
				XPRT_LOG(WARNING, "%s: conn %" PRIu64 ": INIT_XCHAR not sent",
					 c->p->name, c->id);
		}
	}
	/* (Still open: a failed receive, which version 1's burst reports and drops.) */
	return xprt_vops_tab[c->vops == XPRT_VOPS_SVC_OPEN ? XPRT_VOPS_V1_SVC : c->vops]
		->recv_burst(c, wc, 1);
}

/* (The straight-line path made for the reverse direction: its counters folded at compile
 * time, the forward one paying nothing for it; version 1's direction test first, for a
 * client's connection has its replies on the burst's own.) */
bool
xprt_svc_recv_fast_rev(struct xprt_conn *c, struct rte_mbuf *m)
{
	return xprt_v1_dir(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len) == RPCR_ONCRPC_CALL &&
	       svc_recv_fast(c, m, false, 1);
}

/* ---- dispatching ---- */

static const struct rpcr_svc_prog *
prog_find(const struct rpcr_svc *s, uint32_t prog, uint32_t vers, uint32_t *low, uint32_t *high,
	  bool *prog_known)
{
	uint32_t i;

	*prog_known = false;
	*low = UINT32_MAX;
	*high = 0;
	for (i = 0; i < s->nprogs; i++) {
		if (s->progs[i].prog != prog)
			continue;
		*prog_known = true;
		if (s->progs[i].vers == vers)
			return &s->progs[i];
		*low = RTE_MIN(*low, s->progs[i].vers);
		*high = RTE_MAX(*high, s->progs[i].vers);
	}
	return NULL;
}

static inline const struct rpcr_svc_proc *
proc_find(const struct rpcr_svc_prog *pg, uint32_t proc)
{
	uint32_t i;

	if (likely(proc < pg->nprocs && pg->procs[proc].proc == proc))
		return &pg->procs[proc];
	for (i = 0; i < pg->nprocs; i++)
		if (pg->procs[i].proc == proc)
			return &pg->procs[i];
	return NULL;
}

/* @c is an RPC call with AUTH_NONE credentials and verifier (the common call's header, read by
 * offset where it was matched). */
static inline void
call_auth_none(struct rpcr_oncrpc_call *c, uint32_t xid, uint32_t prog, uint32_t vers,
	       uint32_t proc)
{
	c->xid = xid;
	c->rpcvers = RPCR_ONCRPC_VERS;
	c->prog = prog;
	c->vers = vers;
	c->proc = proc;
	c->cred.flavor = RPCR_ONCRPC_AUTH_NONE;
	c->cred.len = 0;
	c->cred.body = NULL;
	c->verf = c->cred;
	c->auth_stat = RPCR_ONCRPC_AUTH_OK;
}

/* Start the results: the reply header for SUCCESS (AUTH_NONE verifier). */
static inline void
results_begin(struct rpcr_svc_req *r)
{
	uint8_t *p = rte_pktmbuf_mtod(r->resbuf, uint8_t *);
	uint32_t cap =
		likely(r->resbuf->pool != r->conn->p->bulk_mp) ? XPRT_BUF_DATA : XPRT_BULK_DATA;

	rpcr_xdr_store32(p, r->xid);
	rpcr_xdr_store32(p + 4, RPCR_ONCRPC_REPLY);
	memset(p + 8, 0, 16); /* MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS */
	rpcr_xdr_enc_init(&r->res.enc, p, cap);
	r->res.enc.p += 24;
	r->res.buf = r->resbuf;
	r->res.vdelta = 0;
	r->res.nbulk = 0;
	r->res.ulb = r->proc != NULL ? &r->proc->ulb : NULL;
	r->res.msgp.align = 0;
	/* RDMA_MSGP replies when configured and negotiated, and the reply will have no chunk
	 * lists (the padding counts on the 36-byte RDMA_MSGP header in front). */
	if (unlikely(r->conn->svc->conf.msgp_thresh != 0) && xprt_draft_has(r->conn, XPRT_F_MSGP) &&
	    r->hdr.chunks.nwrites == 0 && !r->hdr.chunks.has_reply) {
		r->res.msgp.align = XPRT_MSGP_ALIGN;
		r->res.msgp.thresh = r->conn->svc->conf.msgp_thresh;
		r->res.msgp.bias = r->conn->wire->msgp_len;
	}
}

/* Replace the results with an RPC-level error reply. */
static void
results_error(struct rpcr_svc_req *r, uint32_t stat, uint32_t accept_or_reject, uint32_t a,
	      uint32_t b)
{
	struct rpcr_oncrpc_reply rep;
	uint32_t i;
	ssize_t n;

	for (i = 0; i < r->nres; i++)
		rte_pktmbuf_free(r->resb[i].m);
	r->nres = 0;
	memset(r->written, 0, sizeof(r->written));
	memset(&rep, 0, sizeof(rep));
	rep.xid = r->xid;
	rep.stat = stat;
	if (stat == RPCR_ONCRPC_MSG_ACCEPTED) {
		rep.verf.flavor = RPCR_ONCRPC_AUTH_NONE;
		rep.accept_stat = accept_or_reject;
	} else {
		rep.reject_stat = accept_or_reject;
		rep.auth_stat = a;
	}
	rep.mismatch_low = a;
	rep.mismatch_high = b;
	rpcr_xdr_enc_init(&r->res.enc, rte_pktmbuf_mtod(r->resbuf, uint8_t *), XPRT_BUF_DATA);
	n = rpcr_oncrpc_reply_encode(&rep, r->res.enc.p, rpcr_xdr_enc_left(&r->res.enc));
	if (n > 0)
		r->res.enc.p += n;
	r->res.nbulk = 0;
}

/* An RPCR_SVC_ERROR verdict's reply: MSG_DENIED after rpcr_svc_req_auth_error(), else
 * MSG_ACCEPTED with the handler's accept_stat (SYSTEM_ERR if it set none). */
static void
results_verdict_error(struct rpcr_svc_req *r)
{
	if (r->accept_stat & XPRT_AUTH_DENIED)
		results_error(r, RPCR_ONCRPC_MSG_DENIED, RPCR_ONCRPC_AUTH_ERROR,
			      r->accept_stat & ~XPRT_AUTH_DENIED, 0);
	else
		results_error(r, RPCR_ONCRPC_MSG_ACCEPTED,
			      r->accept_stat == RPCR_ONCRPC_SUCCESS ? RPCR_ONCRPC_SYSTEM_ERR
								    : r->accept_stat,
			      0, 0);
}

/*
 * A call the handler answers with no reply: RFC 8166 section 4.5.4, a responder that does not
 * answer a call closes the connection (the credit the call took would never come back to the
 * client); the client sends its calls again on the next one.
 */
static void
svc_drop(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;

	c->p->stats.calls_dropped++;
	XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": xid 0x%08x dropped by its handler", c->p->name,
		 c->id, r->xid);
	if (c->state < XPRT_CONN_CLOSING)
		xprt_conn_fail(c, "a call was dropped: its credit would never come back");
}

/* What a handler's verdict means for its request. */
static void
svc_verdict(struct rpcr_svc_req *r, enum rpcr_svc_verdict v)
{
	switch (v) {
	case RPCR_SVC_REPLY:
		xprt_svc_reply_now(r);
		break;
	case RPCR_SVC_DEFERRED:
		if (r->state == XPRT_SREQ_EXECUTING)
			sreq_move(r, XPRT_SREQ_EXECUTING, XPRT_SREQ_DEFERRED);
		break;
	case RPCR_SVC_ERROR:
		results_verdict_error(r);
		xprt_svc_reply_now(r);
		break;
	default:
		svc_drop(r);
		xprt_sreq_put(r);
		break;
	}
}

static void
dispatch(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;
	const struct rpcr_svc_prog *pg;
	const struct rpcr_svc_proc *pc;
	enum rpcr_svc_verdict v;
	const uint8_t *base;
	struct rte_mbuf *buf;
	uint32_t len, low, high, cap_needed;
	bool known;
	ssize_t n;

	/* A buffer for the results: large when the client offered a large reply chunk. */
	cap_needed = r->hdr.chunks.has_reply
			     ? (uint32_t)RTE_MIN(rpcr_proto_wchunk_length(&r->hdr.chunks.reply),
						 (uint64_t)XPRT_BULK_DATA)
			     : 0;
	/* ... or a continued reply of the Sends the call grants (version 2, cont.c). */
	if (unlikely(r->reply_sends > 1))
		cap_needed = RTE_MAX(cap_needed, RTE_MIN(r->reply_sends, XPRT_CONT_PARTS) *
							 xprt_cont_part_len(c->inline_send));
	r->resbuf = cap_needed > XPRT_BUF_DATA ? rpcr_chunk_alloc(c->p->bulk) : xprt_buf_get(c);
	if (unlikely(r->resbuf == NULL)) {
		r->wait_dispatch = true;
		sreq_wait(r, XPRT_SREQ_WAITING);
		return;
	}
	sreq_move(r, r->state, XPRT_SREQ_EXECUTING);
	r->accept_stat = RPCR_ONCRPC_SUCCESS;
	if (unlikely(r->hdr.chunks.nwrites != 0))
		memset(r->written, 0, sizeof(uint32_t) * r->hdr.chunks.nwrites);
	if (r->pz != NULL) {
		buf = r->pz;
		base = rte_pktmbuf_mtod(buf, const uint8_t *);
		len = r->pz_len;
	} else {
		buf = r->recv;
		base = rte_pktmbuf_mtod(buf, const uint8_t *) + r->hdr_len;
		len = buf->data_len - r->hdr_len;
	}
	if (unlikely(len >= 4 && rpcr_xdr_load32(base) != r->xid)) {
		/* RFC 8166 section 4.5: an rdma_xid unlike the RPC message's XID is an XDR error
		 * of the transport header, answered ERR_CHUNK (and a reply would carry one xid
		 * or the other: the requester could match it to the wrong call). */
		c->p->stats.bad_headers++;
		req_error(r, XPRT_HERR_CHUNK);
		xprt_sreq_put(r);
		return;
	}
	r->proc = NULL;
	/* The common call: AUTH_NONE credential and verifier. */
	if (likely(len >= 40 && rpcr_xdr_load32(base + 4) == RPCR_ONCRPC_CALL &&
		   rpcr_xdr_load32(base + 8) == RPCR_ONCRPC_VERS &&
		   (rpcr_xdr_load32(base + 24) | rpcr_xdr_load32(base + 28) |
		    rpcr_xdr_load32(base + 32) | rpcr_xdr_load32(base + 36)) == 0)) {
		call_auth_none(&r->call, rpcr_xdr_load32(base), rpcr_xdr_load32(base + 12),
			       rpcr_xdr_load32(base + 16), rpcr_xdr_load32(base + 20));
		n = 40;
	} else {
		n = rpcr_oncrpc_call_decode(&r->call, base, len);
	}
	results_begin(r);
	if (unlikely(n < 0)) {
		if (n == -EPROTONOSUPPORT) {
			results_error(r, RPCR_ONCRPC_MSG_DENIED, RPCR_ONCRPC_RPC_MISMATCH,
				      RPCR_ONCRPC_VERS, RPCR_ONCRPC_VERS);
		} else if (n == -EACCES) {
			results_error(r, RPCR_ONCRPC_MSG_DENIED, RPCR_ONCRPC_AUTH_ERROR,
				      r->call.auth_stat, 0);
		} else {
			/* Not an RPC call we can parse: nothing sensible to answer. */
			c->p->stats.bad_headers++;
			xprt_sreq_put(r);
			return;
		}
		xprt_svc_reply_now(r);
		return;
	}
	pg = c->last_prog;
	if (unlikely(pg == NULL || pg->prog != r->call.prog || pg->vers != r->call.vers)) {
		pg = prog_find(c->svc, r->call.prog, r->call.vers, &low, &high, &known);
		c->last_prog = pg;
		c->fast_prog = c->fast_ok ? pg : NULL;
		if (pg != NULL)
			c->fast_progvers = rte_cpu_to_be_64(((uint64_t)pg->prog << 32) | pg->vers);
	}
	if (unlikely(pg == NULL)) {
		if (known)
			results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_PROG_MISMATCH, low,
				      high);
		else
			results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_PROG_UNAVAIL, 0, 0);
		xprt_svc_reply_now(r);
		return;
	}
	pc = proc_find(pg, r->call.proc);
	if (unlikely(pc == NULL || pc->handler == NULL)) {
		results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_PROC_UNAVAIL, 0, 0);
		xprt_svc_reply_now(r);
		return;
	}
	r->prog = pg;
	r->proc = pc;
	r->res.ulb = &pc->ulb;
	rpcr_xdr_dec_init(&r->args.dec, base, len);
	r->args.dec.p += n;
	r->args.ulb = &pc->ulb;
	r->args.buf = buf;
	r->args.vdelta = 0;
	r->args.nbulk = 0;
	r->args.nchunk = 0;
	r->args.msgp = r->msgp;
	if (c->svc->conf.dispatch_ring != NULL) {
		/* Decoupled: a worker runs the handler (rpcr_svc_req_run()). */
		sreq_move(r, XPRT_SREQ_EXECUTING, XPRT_SREQ_DEFERRED);
		if (rte_ring_mp_enqueue(c->svc->conf.dispatch_ring, r) != 0) {
			results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_SYSTEM_ERR, 0, 0);
			xprt_svc_reply_now(r);
		}
		return;
	}
	v = pc->handler(r);
	svc_verdict(r, v);
}

/* ---- arguments and results ---- */

int
xprt_svc_get_arg(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b)
{
	struct rpcr_svc_req *r = m->owner;
	uint32_t len, pos, j = m->nchunk;

	if (m->ulb == NULL || m->nbulk >= m->ulb->args_bulk)
		return -E2BIG;
	if (rpcr_xdr_dec_u32(&m->dec, &len) != 0)
		return -EBADMSG;
	m->nbulk++;
	/* Where the data would be in the whole XDR stream, chunks and their roundup included. */
	pos = (uint32_t)rpcr_xdr_dec_pos(&m->dec) + m->vdelta;
	if (j < r->nrchunks && r->rpos[j] == pos) {
		/* The client may round the chunk up to a multiple of 4 (RFC 8166 3.4.5.2). */
		if (r->rlen[j] != len && r->rlen[j] != rpcr_xdr_roundup(len))
			return -EBADMSG;
		if (len > max)
			return -E2BIG;
		b->m = r->rchunk[j];
		b->off = 0;
		b->len = len;
		m->nchunk++;
		m->vdelta += (uint32_t)rpcr_xdr_roundup(len);
		return 0;
	}
	if (j < r->nrchunks && r->rpos[j] < pos)
		return -EBADMSG; /* a chunk at a position no item starts at */
	return xprt_bulk_get_inline(m, len, max, b);
}

int
xprt_svc_put_res(struct rpcr_msg *m, const struct rpcr_bulk *b)
{
	struct rpcr_svc_req *r = m->owner;
	uint32_t k = m->nbulk;
	int rc;

	if (m->ulb == NULL || k >= m->ulb->res_bulk)
		return -E2BIG;
	rc = rpcr_xdr_enc_u32(&m->enc, b->len);
	if (rc != 0)
		return rc;
	m->nbulk++;
	if (k < r->hdr.chunks.nwrites) {
		/* The client offered a write chunk for it: the data goes there, not inline. */
		if (b->len > rpcr_proto_wchunk_length(&r->hdr.chunks.writes[k])) {
			/* (Version 2 answers the call RDMA2_ERR_WRITE_RESOURCE with these.) */
			if (r->wres_index == 0) {
				r->wres_index = k + 1;
				r->wres_need = b->len;
			}
			return -EMSGSIZE;
		}
		r->written[k] = b->len;
		if (b->len == 0)
			return 0;
		rpcr_chunk_hold(b->m);
		r->resb[r->nres].m = b->m;
		r->resb[r->nres].off = b->off;
		r->resb[r->nres].len = b->len;
		r->resb[r->nres].chunk = k;
		r->nres++;
		return 0;
	}
	/*
	 * No write chunk: when both sides speak the 2005 draft and the client offered no reply
	 * chunk, a large item goes in a read chunk of the reply, for the client to pull (it says
	 * RDMA_DONE when it has).
	 */
	if (xprt_draft_has(r->conn, XPRT_F_DONE) && r->conn->server && !r->hdr.chunks.has_reply &&
	    m->msgp.align <= 1 && b->len != 0 && b->len >= m->ulb->threshold &&
	    r->nres < XPRT_MAX_BULK) {
		rpcr_chunk_hold(b->m);
		r->resb[r->nres].m = b->m;
		r->resb[r->nres].off = b->off;
		r->resb[r->nres].len = b->len;
		r->resb[r->nres].chunk = XPRT_CHUNK_READ;
		r->resb[r->nres].pos = (uint32_t)rpcr_xdr_enc_pos(&m->enc) + m->vdelta;
		r->nres++;
		m->vdelta += (uint32_t)rpcr_xdr_roundup(b->len);
		return 0;
	}
	return xprt_bulk_put_inline(m, b, &r->res_padded);
}

/* ---- replies ---- */

/* The one key all the call's chunks use, for Send with Invalidate; 0 when there are several. */
static uint32_t
inv_rkey(const struct rpcr_proto_chunks *ch)
{
	uint32_t key = 0, i;

	for (i = 0; i < ch->nreads; i++) {
		if (key != 0 && ch->reads[i].seg.handle != key)
			return 0;
		key = ch->reads[i].seg.handle;
	}
	for (i = 0; i < ch->nsegs; i++) {
		if (key != 0 && ch->segs[i].handle != key)
			return 0;
		key = ch->segs[i].handle;
	}
	return key;
}

/* Whether @key is one of the handles of @ch. */
static bool
chunks_have_key(const struct rpcr_proto_chunks *ch, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < ch->nreads; i++)
		if (ch->reads[i].seg.handle == key)
			return true;
	for (i = 0; i < ch->nsegs; i++)
		if (ch->segs[i].handle == key)
			return true;
	return ch->has_reply && ch->reply.nsegs != 0 && ch->reply.segs[0].handle == key;
}

/*
 * The key the reply to @r invalidates with Send with Invalidate, 0 for none: version 1, the one
 * key all the call's chunks use where the client set RFC 8797's R bit (c->peer_inv); version 2,
 * the handle the call names in rdma_inv_handle when it is one of its chunks' (§6.3.1), the
 * device sends with invalidation and the server does not refuse to (no_send_inv). Counted in
 * send_invs.
 */
static uint32_t
reply_inv(const struct rpcr_svc_req *r, const struct rpcr_proto_chunks *ch)
{
	struct xprt_conn *c = r->conn;
	uint32_t inv = 0;

	if (c->wire->flag_dir) {
		/* (A requester whose characteristics say RQREMINV false wants none.) */
		if (r->hdr.inv_handle != 0 && (c->p->info.caps & RPCR_RDEV_CAP_SEND_INV) &&
		    c->svc != NULL && !c->svc->conf.no_send_inv &&
		    (!c->xchar.peer_init || c->xchar.peer_rqreminv) &&
		    chunks_have_key(ch, r->hdr.inv_handle))
			inv = r->hdr.inv_handle;
	} else if (c->peer_inv) {
		inv = inv_rkey(ch);
	}
	c->p->stats.send_invs += inv != 0;
	return inv;
}

/* Rewrite a chunk's segment lengths to what was written into it. */
static void
wchunk_rewrite(struct rpcr_proto_wchunk *w, uint32_t written)
{
	uint32_t i;

	for (i = 0; i < w->nsegs; i++) {
		uint32_t l = RTE_MIN(written, w->segs[i].length);

		w->segs[i].length = l;
		written -= l;
	}
}

/* Send @r's reply in @send (@len bytes of RPC reply): RDMA_MSG, no chunk lists; room checked.
 * @send is released when the Send is done unless @keep. @return the Send's sequence number. */
static __rte_always_inline uint32_t
reply_send_msg(struct rpcr_svc_req *r, struct rte_mbuf *send, uint32_t len, uint32_t inv, bool keep,
	       bool fwd, const uint32_t vers)
{
	const uint32_t plen = vers == 2 ? XPRT_V2_PLAIN : XPRT_V1_PLAIN;
	struct xprt_conn *c = r->conn;
	uint32_t seq;
	uint8_t *p;

	send->data_len = (uint16_t)(len + plen);
	send->pkt_len = len + plen;
	send->data_off -= plen;
	p = rte_pktmbuf_mtod(send, uint8_t *);
	if (vers == 2)
		xprt_v2_put_plain(p, r->xid,
				  xprt_v2_credit_word(grant(c, r->credit_req), c->rsp_credits),
				  true);
	else
		xprt_v1_put_plain(p, r->xid, grant(c, r->credit_req));
	r->resbuf = NULL;
	seq = xprt_send1_post(c, send, keep, inv, false);
	(*(fwd ? &c->p->stats.replies_sent : &c->p->stats.breplies_sent))++;
	return seq;
}

/* The common reply: inline (the plain header of the connection's version), no write list, no
 * padding, from a message buffer, room to send. @return false: not that (nothing changed). */
static inline bool
reply_fast(struct rpcr_svc_req *r, uint32_t len)
{
	struct xprt_conn *c = r->conn;
	const struct rpcr_proto_chunks *ch = &r->hdr.chunks;
	struct rte_mbuf *send = r->resbuf;
	uint32_t inv = 0;

	if (unlikely((r->nres | ch->nwrites) != 0 || r->res_padded ||
		     c->plain_len + len > c->plain_send || send->pool != c->p->msg_mp ||
		     !xprt_sq_room(c, 1)))
		return false;
	if (unlikely((c->peer_inv || c->wire->flag_dir) && (ch->nreads != 0 || ch->has_reply)))
		inv = reply_inv(r, ch);
	if (likely(c->plain_len == XPRT_V1_PLAIN))
		reply_send_msg(r, send, len, inv, false, c->server, 1);
	else
		reply_send_msg(r, send, len, inv, false, c->server, 2);
	sreq_put_fast(r);
	return true;
}

void
xprt_svc_reply_now(struct rpcr_svc_req *r)
{
	struct xprt_conn *c = r->conn;
	struct rpcr_proto_chunks *ch = &r->hdr.chunks;
	struct xprt_hdr rh;
	uint32_t len, hsize, nw = 0, ns = 0, i, inv = 0, nx = 0, xi[XPRT_MAX_BULK] = {0};
	struct xprt_xfer x[XPRT_MAX_BULK + 1];
	struct rte_mbuf *hbuf, *send;
	bool long_reply = false;
	uint32_t cont = 0; /* Sends of a continued reply (cont.c), 0: not one */
	uint8_t *p;
	int rc;

	if (unlikely(r->state == XPRT_SREQ_DEFERRED)) /* back from a handler's or worker's hands */
		sreq_move(r, XPRT_SREQ_DEFERRED, XPRT_SREQ_EXECUTING);
	if (unlikely(c->state >= XPRT_CONN_CLOSING || r->drop)) {
		if (r->drop)
			svc_drop(r);
		xprt_sreq_put(r);
		return;
	}
	len = (uint32_t)rpcr_xdr_enc_pos(&r->res.enc);
	r->resbuf->data_len = (uint16_t)len;
	r->resbuf->pkt_len = len;

	if (likely(reply_fast(r, len)))
		return;
	if (unlikely(r->wres_index != 0) && c->wire->flag_dir) {
		/* Version 2: a result the client's write chunk could not hold is the transport's
		 * error, with the chunk and the length it needs (§7.3.4), not the reply the
		 * handler made of it (version 1 has no word for it: the handler's reply goes). */
		xprt_svc_send_error_res(c, r->xid, XPRT_HERR_WRITE_RES, r->wres_index,
					r->wres_need);
		xprt_sreq_put(r);
		return;
	}

	memset(&rh, 0, sizeof(rh));
	rh.xid = r->xid;
	rh.vers = c->wire->vers;
	rh.credit = c->wire->credit_word(grant(c, r->credit_req), c->rsp_credits);
	rh.type = XPRT_HT_MSG;
	rh.flags = XPRT_HF_RESPONSE; /* (version 2's; version 1 has no flags) */
	rh.chunks = *ch;
	rh.chunks.nreads = 0;
	rh.chunks.has_reply = false;
	/* Results the client will read: exposed now (once, also when this reply has to wait). */
	if (r->nres != 0 && r->done == NULL && xprt_draft_expose(r, &r->done) != 0) {
		results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_SYSTEM_ERR, 0, 0);
		xprt_svc_reply_now(r);
		return;
	}
	if (r->done != NULL) {
		rh.chunks.reads = r->done->reads;
		rh.chunks.reads_cap = XPRT_TX_SEGS;
		rh.chunks.nreads = r->done->nreads;
	}
	if (r->res_padded) {
		rh.type = XPRT_HT_MSGP;
		rh.align = r->res.msgp.align;
		rh.thresh = r->res.msgp.thresh;
	}
	hsize = c->wire->size(&rh);
	if (hsize + len > c->inline_send) {
		if (r->res_padded) {
			/* Padded for an inline reply that does not fit after all. */
			results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_SYSTEM_ERR, 0, 0);
			r->res_padded = false;
			xprt_svc_reply_now(r);
			return;
		}
		/* The reply chunk where it holds the reply; else version 2's continuation in as
		 * many Sends as the call granted (§6.3.3: the responder SHOULD continue what the
		 * chunks cannot hold). */
		if (ch->has_reply && len <= rpcr_proto_wchunk_length(&ch->reply)) {
			long_reply = true;
			rh.type = XPRT_HT_NOMSG;
			rh.chunks.has_reply = true;
		} else if (r->reply_sends > 1 &&
			   (cont = xprt_cont_parts(c->inline_send, len, hsize)) <=
				   RTE_MIN(r->reply_sends, XPRT_CONT_PARTS)) {
			/* (rh as it is: RDMA2_MSG, the write list; in the last part.) */
		} else {
			/* Does not fit inline and no room offered for it: version 1's ERR_CHUNK
			 * (as Linux answers); version 2's REPLY_RESOURCE with the length the
			 * reply chunk needs (§7.3.5). */
			XPRT_LOG(DEBUG, "%s: xid 0x%08x: reply of %u bytes has nowhere to go",
				 c->p->name, r->xid, len);
			if (c->wire->flag_dir)
				xprt_svc_send_error_res(c, r->xid, XPRT_HERR_REPLY_RES, 0, len);
			else
				req_error(r, XPRT_HERR_CHUNK);
			xprt_sreq_put(r);
			return;
		}
	}

	/* Plan the RDMA Writes: each DDP result into its write chunk, then a long reply, with
	 * room for the Send after them. */
	for (i = 0; i < r->nres; i++) {
		const struct rpcr_proto_wchunk *w;

		if (r->resb[i].chunk == XPRT_CHUNK_READ)
			continue; /* the client reads it */
		w = &ch->writes[r->resb[i].chunk];
		xi[i] = nx;
		x[nx++] = (struct xprt_xfer){.m = r->resb[i].m,
					     .off = r->resb[i].off,
					     .len = r->resb[i].len,
					     .segs = w->segs,
					     .nsegs = w->nsegs};
	}
	if (long_reply)
		x[nx++] = (struct xprt_xfer){.m = r->resbuf,
					     .len = len,
					     .segs = ch->reply.segs,
					     .nsegs = ch->reply.nsegs};
	rc = xprt_plan_xfers(c, RPCR_RDEV_WR_WRITE, x, nx, 1, &nw, &ns);
	if (rc != 0) {
		XPRT_LOG(WARNING, "%s: xid 0x%08x: cannot plan the reply's RDMA Writes: %s",
			 c->p->name, r->xid, strerror(-rc));
		results_error(r, RPCR_ONCRPC_MSG_ACCEPTED, RPCR_ONCRPC_SYSTEM_ERR, 0, 0);
		xprt_svc_reply_now(r);
		return;
	}
	if (!xprt_sq_room(c, nw + RTE_MAX(cont, 1u))) {
		sreq_wait(r, XPRT_SREQ_REPLYING);
		return;
	}

	/* The header goes in front of the message when the message is sent inline from a message
	 * buffer; in a buffer of its own otherwise (a continued reply's headers, all of them). */
	if (!long_reply && cont == 0 && r->resbuf->pool == c->p->msg_mp) {
		hbuf = NULL;
	} else {
		hbuf = xprt_buf_get(c);
		if (hbuf == NULL) {
			sreq_wait(r, XPRT_SREQ_REPLYING);
			return;
		}
		if (!long_reply && cont == 0) {
			/* A short reply in a bulk buffer: copy it behind the header. */
			memcpy(rte_pktmbuf_mtod(hbuf, void *), rte_pktmbuf_mtod(r->resbuf, void *),
			       len);
			hbuf->data_len = (uint16_t)len;
			hbuf->pkt_len = len;
		}
	}
	sreq_move(r, r->state, XPRT_SREQ_EXECUTING); /* (off the waiting list: it goes now) */

	/* Lengths in the reply's chunk lists are what was written. */
	for (i = 0; i < rh.chunks.nwrites; i++)
		wchunk_rewrite(&rh.chunks.writes[i], r->written[i]);
	if (long_reply)
		wchunk_rewrite(&rh.chunks.reply, len);
	hsize = c->wire->size(&rh);

	/* Commit: writes first (each result chain released when its last write is done), then
	 * the Send. */
	for (i = 0; i < r->nres; i++) {
		if (r->resb[i].chunk == XPRT_CHUNK_READ) {
			/* Held until RDMA_DONE. */
			r->done->held[r->done->nheld++] = r->resb[i].m;
			continue;
		}
		xprt_sq_commit(c, x[xi[i]].nw, x[xi[i]].ns, x[xi[i]].nw != 0 ? r->resb[i].m : NULL,
			       NULL, NULL, true);
		if (x[xi[i]].nw == 0)
			rte_pktmbuf_free(r->resb[i].m);
		xprt_count_out(c, 0, r->resb[i].len);
	}
	r->nres = 0;
	r->done = NULL;
	if (cont != 0) {
		/* The reply in parts, the last with the write list (cont.c). */
		xprt_cont_send(c, &rh, hbuf, r->resbuf, len, reply_inv(r, ch));
		r->resbuf = NULL;
		(*(c->server ? &c->p->stats.replies_sent : &c->p->stats.breplies_sent))++;
		xprt_sreq_put(r);
		return;
	}
	if (long_reply) {
		xprt_sq_commit(c, x[nx - 1].nw, x[nx - 1].ns, hbuf != NULL ? r->resbuf : NULL, NULL,
			       NULL, false);
		xprt_count_out(c, 0, len); /* (its header-only Send counts in xprt_send1()) */
		if (hbuf != NULL)
			r->resbuf = NULL;
	}
	if (hbuf != NULL) {
		if (r->resbuf != NULL) {
			rte_pktmbuf_free(r->resbuf);
			r->resbuf = NULL;
		}
		send = hbuf;
		if (long_reply) {
			hbuf->data_len = 0;
			hbuf->pkt_len = 0;
		}
	} else {
		send = r->resbuf;
		r->resbuf = NULL;
	}
	p = (uint8_t *)rte_pktmbuf_prepend(send, (uint16_t)hsize);
	c->wire->encode(&rh, p, hsize);
	inv = reply_inv(r, ch);
	xprt_send1(c, send, inv, false);
	(*(c->server ? &c->p->stats.replies_sent : &c->p->stats.breplies_sent))++;
	xprt_sreq_put(r);
}

/* Retry requests that waited for buffers or send-queue room, in arrival order. */
void
xprt_svc_unlist(struct xprt_conn *c)
{
	if (c->wlisted) {
		c->wlisted = false;
		TAILQ_REMOVE(&c->p->wconns, c, wnext);
	}
}

int
xprt_svc_retry(struct xprt_conn *c)
{
	int work = 0;

	while (!TAILQ_EMPTY(&c->waiting)) {
		struct rpcr_svc_req *r = TAILQ_FIRST(&c->waiting);
		enum xprt_sreq_state before = r->state;

		if (r->state == XPRT_SREQ_REPLYING) {
			xprt_svc_reply_now(r);
		} else if (r->wait_dispatch) {
			dispatch(r);
		} else {
			int rc = start_reads(r, r->wait_chunks);

			if (rc != 0 && rc != -EAGAIN)
				refuse_chunks(r, rc, XPRT_HERR_SYSTEM);
		}
		/* Still the first and still waiting: nothing frees up before the next poll. */
		if (!TAILQ_EMPTY(&c->waiting) && TAILQ_FIRST(&c->waiting) == r &&
		    r->state == before)
			break;
		work++;
	}
	return work;
}

/* The connection's QP is gone: requests that are not in somebody's hands go now; the
 * connection is freed when the last deferred one is given back. */
void
xprt_svc_conn_lost(struct xprt_conn *c)
{
	struct rpcr_svc_req *r;
	uint32_t left;

	if (c->svc != NULL) {
		c->svc->nconns--;
		if (c->svc->lead != NULL)
			xprt_svc_group_release(c->svc);
		c->svc = NULL;
	}
	xprt_draft_dones_expire(c, 0, true);
	c->hold_free = true;
	/* Its requests are the poller's not FREE that name it (a FREE one may name a connection it
	 * served before), inflight of them: the walk stops once it met them all. */
	for (r = c->p->sreq_all, left = c->inflight; r != NULL && left != 0; r = r->all_next) {
		if (r->state == XPRT_SREQ_FREE || r->conn != c)
			continue;
		left--;
		if (r->state != XPRT_SREQ_DEFERRED && r->state != XPRT_SREQ_EXECUTING)
			xprt_sreq_put(r);
	}
	c->hold_free = false;
	if (c->inflight == 0)
		xprt_conn_free(c);
}

/* ---- connection requests ---- */

void
xprt_svc_conn_attach(struct rpcr_svc *s, struct xprt_conn *c)
{
	c->svc = s;
	c->rsp_credits = s->conf.credits;
	c->recv_floor += s->conf.credits;
	/* The straight-line path serves calls on the poller with unpadded replies. */
	c->fast_ok = s->conf.dispatch_ring == NULL && s->conf.msgp_thresh == 0;
	s->nconns++;
}

/* Refuse request @ev of server @s: the connections of its group are max_conns. */
static void
svc_refuse_full(struct rpcr_svc *s, const struct rpcr_rdev_event *ev)
{
	XPRT_LOG(WARNING, "%s: %s: connection refused: %u connections", s->p->name, s->conf.addr,
		 __atomic_load_n(&s->lead->gconns, __ATOMIC_RELAXED));
	s->p->stats.conns_refused++;
	rpcr_rdev_reject(ev->req, NULL, 0);
}

/* On the listening poller: judged (max_conns, the application's accept), then placed. */
void
xprt_svc_conn_request(struct rpcr_svc *s, const struct rpcr_rdev_event *ev)
{
	struct rpcr_xprt_poller *p = s->p;

	if (__atomic_load_n(&s->gconns, __ATOMIC_RELAXED) >= s->conf.max_conns) {
		svc_refuse_full(s, ev);
		return;
	}
	if (s->conf.accept != NULL &&
	    !s->conf.accept((const struct sockaddr *)&ev->peer, s->conf.accept_arg)) {
		char a[64];

		(void)rpcr_xprt_addr_str((const struct sockaddr *)&ev->peer, a, sizeof(a));
		XPRT_LOG(NOTICE, "%s: %s: connection from %s refused by the server's accept",
			 p->name, s->conf.addr, a[0] != '\0' ? a : "(no address)");
		p->stats.conns_refused++;
		rpcr_rdev_reject(ev->req, NULL, 0);
		return;
	}
	if (!xprt_svc_group_place(s, ev))
		xprt_svc_conn_accept(s, ev);
}

/* On the poller that will serve the connection: its QP (on this poller's device handle, which
 * need not be the listener's: rpcr_rdev_accept() moves the request) and its state. */
void
xprt_svc_conn_accept(struct rpcr_svc *s, const struct rpcr_rdev_event *ev)
{
	struct rpcr_xprt_poller *p = s->p;
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
	uint32_t features = s->conf.no_draft ? 0 : XPRT_F_ALL;
	bool srq = p->srq.srq != NULL;
	struct xprt_conn *c;
	uint8_t plen;
	int rc;

	/* (Counted from here; a connection attached gives it back when lost.) */
	if (!xprt_svc_group_reserve(s)) {
		svc_refuse_full(s, ev);
		return;
	}
	c = xprt_conn_new(p, s->conf.credits + XPRT_RECV_BATCH, s->conf.inline_recv,
			  s->conf.credits + 2 * XPRT_RECV_BATCH, srq);
	if (c == NULL) {
		xprt_svc_group_release(s);
		rpcr_rdev_reject(ev->req, NULL, 0);
		return;
	}
	/* From the shared receive queue: a credit reserved (and one for a message of version 2
	 * that takes none), or refused; no RDMA_DONE (a message beyond the credits). */
	if (srq) {
		if (xprt_srq_conn_attach(c, (s->conf.versions & RPCR_XPRT_V2) ? 1 : 0) != 0) {
			XPRT_LOG(
				WARNING,
				"%s: %s: connection refused: the shared receive queue's %u credits "
				"are all reserved",
				p->name, s->conf.addr, p->srq.budget);
			p->stats.conns_refused++;
			xprt_svc_group_release(s);
			rpcr_rdev_reject(ev->req, NULL, 0);
			xprt_conn_teardown(c);
			return;
		}
		features &= ~XPRT_F_DONE;
	}
	c->server = true;
	/* Version 1 until its first message says otherwise, where the server serves another. */
	c->vops = (s->conf.versions & ~RPCR_XPRT_V1) != 0 ? XPRT_VOPS_SVC_OPEN : XPRT_VOPS_V1_SVC;
	c->wire = &xprt_wire_v1;
	xprt_conn_move(c, XPRT_CONN_ACCEPTING);
	c->peer = ev->peer;
	xprt_svc_conn_attach(s, c);
	if (!s->conf.no_draft)
		xprt_draft_responder_init(c, s->conf.credits); /* (none: every reply inline) */
	xprt_pdata_apply(c, ev->pdata, ev->pdata_len, s->conf.inline_send, s->conf.inline_recv,
			 s->conf.remote_inv, !s->conf.no_send_inv, features);
	/* The straight-line path serves calls on the poller with unpadded replies. */
	c->fast_ok = s->conf.dispatch_ring == NULL &&
		     !(s->conf.msgp_thresh != 0 && xprt_draft_has(c, XPRT_F_MSGP));
	xprt_conn_replenish(c);
	plen = xprt_pdata_build(pdata, s->conf.inline_send, s->conf.inline_recv, s->conf.remote_inv,
				features);
	rc = rpcr_rdev_accept(c->qp, ev->req, pdata, plen);
	if (rc != 0) {
		XPRT_LOG(WARNING, "%s: accept: %s", p->name, strerror(-rc));
		/* (Not consumed on these: refused, so that the peer hears of it.) */
		if (rc == -EXDEV || rc == -EISCONN || rc == -EINVAL)
			rpcr_rdev_reject(ev->req, NULL, 0);
		xprt_conn_teardown(c);
	}
}

/* ---- API ---- */

/* The server's memory: its procedure tables (rpcr_svc_register()), then itself. */
static void
svc_free(struct rpcr_svc *s)
{
	uint32_t i;

	for (i = 0; i < s->nprogs; i++)
		rte_free(s->proc_tabs[i]);
	rte_free(s);
}

struct rpcr_svc *
rpcr_svc_create(struct rpcr_xprt_poller *p, const struct rpcr_svc_conf *conf)
{
	struct rpcr_svc *s;

	/* Versions: 1, or 1 and 2 (a server of version 2 alone is not built; version 2's receives
	 * of 4096 bytes need inline_recv 0, the default, or at least that). */
	if (p == NULL || conf == NULL || conf->addr == NULL ||
	    strlen(conf->addr) >= sizeof(s->addr) ||
	    (conf->versions != 0 && conf->versions != RPCR_XPRT_V1 &&
	     conf->versions != (RPCR_XPRT_V1 | RPCR_XPRT_V2)) ||
	    ((conf->versions & RPCR_XPRT_V2) && conf->inline_recv != 0 &&
	     conf->inline_recv < XPRT_V2_INLINE) ||
	    conf->hostauth_len > RPCR_XPRT_HOSTAUTH_MAX ||
	    (conf->hostauth_len != 0 && conf->hostauth == NULL)) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc("rpcr_svc", sizeof(*s), RTE_CACHE_LINE_SIZE);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->p = p;
	s->conf = *conf;
	xprt_conf_transport(p, &s->conf.remote_inv, &s->conf.credits, SVC_DEFAULT_CREDITS,
			    &s->conf.inline_send, &s->conf.inline_recv);
	strcpy(s->addr, conf->addr);
	s->conf.addr = s->addr;
	if (s->conf.max_conns == 0)
		s->conf.max_conns = SVC_DEFAULT_MAX_CONNS;
	if (s->conf.max_call_bytes == 0)
		s->conf.max_call_bytes = SVC_DEFAULT_CALL_BYTES;
	s->conf.max_call_bytes = RTE_MIN(s->conf.max_call_bytes, SVC_MAX_CHUNK);
	if (s->conf.max_chunks == 0 || s->conf.max_chunks > XPRT_RX_CHUNKS)
		s->conf.max_chunks = XPRT_RX_CHUNKS;
	if (s->conf.max_segs == 0 || s->conf.max_segs > SVC_MAX_SEGS)
		s->conf.max_segs = SVC_MAX_SEGS;
	s->conf.program = NULL; /* (registered here: the conf's table need not outlive it) */
	if (conf->program != NULL) {
		int rc = rpcr_svc_register(s, conf->program);

		if (rc != 0) {
			svc_free(s);
			rte_errno = -rc;
			return NULL;
		}
	}
	/* (A backlog of its connections: as many may connect at once.) */
	s->listener = rpcr_rdev_listen(p->dev, s->addr, (int)RTE_MAX(s->conf.max_conns, 64u));
	if (s->listener == NULL) {
		XPRT_LOG(ERR, "%s: listen %s: %s", p->name, s->addr, rte_strerror(rte_errno));
		svc_free(s);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&p->svcs, s, next);
	if (!s->conf.no_draft)
		xprt_draft_svc_register(s);
	xprt_srq_svc_add(p, s->conf.max_conns);
	s->lead = s;
	pthread_mutex_init(&s->group_lock, NULL);
	return s;
}

/*
 * The responder of a client's connections (RFC 8167): a server with no listener, its programs
 * registered with rpcr_clnt_register(), its credits the client's bc_credits, its requests the
 * connection's. Nothing of the 2005 draft. Chunks reach it on version 2 alone (recv.c): where
 * the client said BRS GENL it takes them as a server does; else its limits are 0 chunks and 0
 * segments, so that a call with chunks is answered the error of the first one it breaks
 * (WRITE_CHUNKS, READ_CHUNKS or SEGMENTS with 0: §4.5.4). Calls of up to XPRT_REV_CALL_BYTES
 * (continued ones too).
 */
struct rpcr_svc *
xprt_svc_reverse_new(struct rpcr_clnt *cl)
{
	struct rpcr_svc *s = rte_zmalloc("rpcr_svc", sizeof(*s), RTE_CACHE_LINE_SIZE);

	if (s == NULL)
		return NULL;
	s->p = cl->p;
	s->clnt = cl;
	snprintf(s->addr, sizeof(s->addr), "(reverse direction)");
	s->conf.addr = s->addr;
	s->conf.credits = cl->conf.bc_credits;
	s->conf.inline_send = cl->conf.inline_send;
	s->conf.inline_recv = cl->conf.inline_recv;
	s->conf.no_draft = true;
	s->conf.max_conns = 1;
	s->conf.max_call_bytes = XPRT_REV_CALL_BYTES;
	if (cl->conf.bc_brs == RPCR_PROTO_V2_RVRSDIR_GENL) {
		s->conf.max_chunks = XPRT_RX_CHUNKS;
		s->conf.max_segs = SVC_MAX_SEGS;
	}
	return s;
}

void
xprt_svc_reverse_free(struct rpcr_svc *s)
{
	if (s == NULL)
		return;
	if (s->fini != NULL)
		s->fini(s->fini_ctx);
	svc_free(s);
}

int
rpcr_svc_destroy(struct rpcr_svc *s)
{
	struct rpcr_xprt_poller *p;
	struct xprt_conn *c, *tmp;

	if (s == NULL)
		return -EINVAL;
	p = s->p;
	if (p->in_poll || xprt_svc_group_leave(s) != 0)
		return -EBUSY;
	/* Destruction begins here, even when requests still held make it -EBUSY below: the
	 * reverse-direction clients of its connections will have no connection again. The calls
	 * they hold for one fail now (their callers may be what holds those requests); calls out
	 * on a live connection go on until answered or timed out. (Their completions run as in a
	 * poll: a client they let go of is freed after.) */
	p->in_poll = true;
	xprt_clnt_orphan_reverse(s);
	p->in_poll = false;
	xprt_clnt_reap(p);
	/* Requests in a handler's or a worker's hands (of live connections or not) must come
	 * back first: they point at the server's programs. */
	if (s->ndeferred != 0)
		return -EBUSY;
	xprt_poller_drain(p); /* (requests handed to a member that leaves: refused) */
	if (s->listener != NULL)
		rpcr_rdev_listener_close(s->listener);
	RTE_TAILQ_FOREACH_SAFE (c, &p->conns, next, tmp) {
		if (c->svc != s)
			continue;
		xprt_conn_teardown(c);
	}
	xprt_svc_group_gone(s);
	TAILQ_REMOVE(&p->svcs, s, next);
	xprt_srq_svc_add(p, -(int32_t)s->conf.max_conns);
	if (s->fini != NULL)
		s->fini(s->fini_ctx);
	svc_free(s);
	xprt_clnt_reap(p); /* (reverse clients whose last reference was their connection's) */
	return 0;
}

int
xprt_prog_check(const struct rpcr_svc_prog *pg)
{
	uint32_t i, j;

	if (pg == NULL || (pg->nprocs != 0 && pg->procs == NULL))
		return -EINVAL;
	for (i = 0; i < pg->nprocs; i++) {
		const struct rpcr_svc_proc *pc = &pg->procs[i];

		if (pc->ulb.args_bulk > RPCR_ULB_MAX_BULK || pc->ulb.res_bulk > RPCR_ULB_MAX_BULK)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (pg->procs[j].proc == pc->proc)
				return -EINVAL;
	}
	return 0;
}

/* rpcr_svc_register() once judged (the group lock held, where there is one). */
static int
svc_register(struct rpcr_svc *s, const struct rpcr_svc_prog *prog)
{
	struct rpcr_svc_prog pg;
	struct rpcr_svc_proc *tab = NULL;
	uint32_t i, max = 0;
	bool indexed = true;

	for (i = 0; i < s->nprogs; i++)
		if (s->progs[i].prog == prog->prog && s->progs[i].vers == prog->vers)
			return -EEXIST;
	if (s->nprogs == XPRT_MAX_PROGS)
		return -ENOSPC;
	pg = *prog;
	for (i = 0; i < pg.nprocs; i++) {
		max = RTE_MAX(max, pg.procs[i].proc);
		indexed &= pg.procs[i].proc == i;
	}
	/* Procedures by number, as proc_find() and the straight-line path look them up: a copy
	 * of the table where it is in another order, its holes unavailable (no handler). */
	if (!indexed && max < RPCR_CLNT_MAX_PROC) {
		tab = rte_zmalloc("rpcr_svc", sizeof(*tab) * (max + 1), 0);
		if (tab == NULL)
			return -ENOMEM;
		for (i = 0; i <= max; i++)
			tab[i].proc = i;
		for (i = 0; i < pg.nprocs; i++)
			tab[pg.procs[i].proc] = pg.procs[i];
		pg.procs = tab;
		pg.nprocs = max + 1;
	}
	s->proc_tabs[s->nprogs] = tab;
	s->progs[s->nprogs++] = pg;
	return 0;
}

int
rpcr_svc_register(struct rpcr_svc *s, const struct rpcr_svc_prog *prog)
{
	int rc;

	if (s == NULL || xprt_prog_check(prog) != 0)
		return -EINVAL;
	/* Members copied the lead's programs when they joined, under its group lock. */
	if (s->lead != NULL && s->lead != s)
		return -EBUSY;
	if (s->lead == NULL)
		return svc_register(s, prog);
	pthread_mutex_lock(&s->group_lock);
	rc = s->nmembers != 0 ? -EBUSY : svc_register(s, prog);
	pthread_mutex_unlock(&s->group_lock);
	return rc;
}

struct rpcr_msg *
rpcr_svc_req_args(struct rpcr_svc_req *r)
{
	return &r->args;
}

struct rpcr_msg *
rpcr_svc_req_results(struct rpcr_svc_req *r)
{
	return &r->res;
}

const struct rpcr_oncrpc_call *
rpcr_svc_req_call(const struct rpcr_svc_req *cr)
{
	struct rpcr_svc_req *r = (struct rpcr_svc_req *)(uintptr_t)cr;

	if (r->call_lazy) {
		/* A call of the straight-line path: AUTH_NONE, the header after the transport's. */
		const uint8_t *b = rte_pktmbuf_mtod(r->recv, const uint8_t *) + r->hdr_len;

		call_auth_none(&r->call, rpcr_xdr_load32(b), r->prog->prog, r->prog->vers,
			       rpcr_xdr_load32(b + 20));
		r->call_lazy = false;
	}
	return &r->call;
}

void *
rpcr_svc_req_ctx(const struct rpcr_svc_req *r)
{
	return r->prog != NULL ? r->prog->ctx : NULL;
}

int
rpcr_svc_req_get_args(struct rpcr_svc_req *r, void *args)
{
	if (r == NULL || r->state == XPRT_SREQ_FREE || r->proc == NULL)
		return -EINVAL;
	if (r->proc->decode_args == NULL)
		return -ENOTSUP;
	if (r->proc->decode_args(&r->args, args) != 0) {
		r->accept_stat = RPCR_ONCRPC_GARBAGE_ARGS;
		return -EBADMSG;
	}
	return 0;
}

int
rpcr_svc_req_put_res(struct rpcr_svc_req *r, const void *res)
{
	int rc;

	if (r == NULL || r->state == XPRT_SREQ_FREE || r->proc == NULL)
		return -EINVAL;
	if (r->proc->encode_res == NULL)
		return -ENOTSUP;
	rc = r->proc->encode_res(&r->res, res);
	if (rc != 0) {
		r->accept_stat = RPCR_ONCRPC_SYSTEM_ERR;
		return rc < 0 ? rc : -EINVAL;
	}
	return 0;
}

int
rpcr_svc_req_set_ulb(struct rpcr_svc_req *r, const struct rpcr_ulb *ulb)
{
	if (r == NULL || ulb == NULL || r->state == XPRT_SREQ_FREE)
		return -EINVAL;
	r->args.ulb = ulb;
	r->res.ulb = ulb;
	return 0;
}

void
rpcr_svc_req_error(struct rpcr_svc_req *r, uint32_t accept_stat)
{
	r->accept_stat = accept_stat;
}

int
rpcr_svc_req_auth_error(struct rpcr_svc_req *r, uint32_t auth_stat)
{
	if (r == NULL || auth_stat == RPCR_ONCRPC_AUTH_OK ||
	    auth_stat > RPCR_ONCRPC_RPCSEC_GSS_CTXPROBLEM)
		return -EINVAL;
	r->accept_stat = XPRT_AUTH_DENIED | auth_stat;
	return 0;
}

const struct sockaddr *
rpcr_svc_req_peer(const struct rpcr_svc_req *r)
{
	return (const struct sockaddr *)&r->conn->peer;
}

struct rpcr_xprt_poller *
rpcr_svc_req_poller(const struct rpcr_svc_req *r)
{
	return r->conn->p;
}

int
rpcr_svc_reply(struct rpcr_svc_req *r)
{
	struct rpcr_xprt_poller *p;

	if (r == NULL || r->state != XPRT_SREQ_DEFERRED)
		return -EINVAL;
	p = r->conn->p;
	if (xprt_on_owner(p)) {
		xprt_svc_reply_now(r);
		return 0;
	}
	if (rte_ring_mp_enqueue(p->ring, (void *)((uintptr_t)r | XPRT_RING_REPLY)) != 0)
		return -EAGAIN;
	xprt_poller_kick(p);
	return 0;
}

int
rpcr_svc_req_run(struct rpcr_svc_req *r)
{
	enum rpcr_svc_verdict v;
	int rc;

	if (r == NULL || r->state != XPRT_SREQ_DEFERRED || r->proc == NULL)
		return -EINVAL;
	v = r->proc->handler(r);
	switch (v) {
	case RPCR_SVC_DEFERRED:
		return 0;
	case RPCR_SVC_ERROR:
		results_verdict_error(r);
		break;
	case RPCR_SVC_DROP:
		r->drop = true;
		break;
	default:
		break;
	}
	do {
		rc = rpcr_svc_reply(r);
		if (rc == -EAGAIN)
			rte_pause();
	} while (rc == -EAGAIN);
	return rc;
}
