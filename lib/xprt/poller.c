/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Pollers: one per lcore, each with its own device handle, protection domain, completion queue,
 * buffer pools and ring, so that nothing on the fast path is shared between lcores.
 *
 * The poll loop (rpcr_xprt_poll()), in order:
 *   1. poll completions: receives (calls are decoded and dispatched, replies matched and
 *      completed, on the spot: the connection's burst, then recv.c), send-queue completions (buffers released, requests whose RDMA
 *      Reads finished dispatched);
 *   2. take calls and deferred replies other threads queued on the ring;
 *   3. send what waited: client calls for a credit or the connection (resends first), server
 *      requests for buffers or send-queue room (only the clients and connections listed as
 *      having some: qclnts, wconns; never a walk over all of them);
 *   4. replenish receives, in batches, before any reply of this poll goes out: a reply's grant
 *      lets the client send at once, and the receives must already be there (the shared
 *      receive queue's first, srq.c);
 *   5. flush sends: one doorbell per connection with anything to post;
 *   6. timers, every 50 us: connection events (connect requests, established, lost); the
 *      clients (reconnections, call deadlines, an unanswered CONNPROP) and the connections
 *      (RDMA_DONE deadlines, a pending RBSIZ update) only once something of theirs is due
 *      (rpcr_xprt_poller::clnt_due, conn_due);
 *   7. tear down connections that failed during this poll (after one more look at the
 *      completion queue: what it holds for them is counted before their QPs go);
 *   8. poll modes adaptive and interrupt, when the poll found nothing: sleep until a
 *      completion, a connection event, a call from another thread or a timer (sleep.c).
 *
 * Telemetry reads the pollers from telemetry.c.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "xprt_internal.h"

RTE_LOG_REGISTER(rpcr_xprt_logtype, rpcr.xprt, INFO);

#define POLLER_DEFAULT_CQ   65536u
#define POLLER_DEFAULT_RING 1024u
#define POLLER_DEFAULT_BUFS 2048u
#define POLLER_DEFAULT_BULK 512u
/* A poller's own arena: beyond its pools, for large bulk chains and the application; and per
 * pool, a hugepage for packing (its pools are sized for 4 KiB pages before the arena exists). */
#define POLLER_DEFAULT_EXTRA (16u << 20)
#define POLLER_HUGE_SLACK    (2u << 20)

/* Every poller, for telemetry (telemetry.c) and to keep one poller per device handle. */
pthread_mutex_t xprt_pollers_lock = PTHREAD_MUTEX_INITIALIZER;
struct rpcr_xprt_poller *xprt_pollers[RTE_MAX_LCORE];
static uint32_t poller_seq;

/* One byte per thread: its address names the thread (cheaper to compare than pthread_self()). */
__thread char xprt_thread_tag __attribute__((visibility("hidden")));

/* The configurations of a poller's two pools (names aside). */
static void
pool_confs(const struct rpcr_xprt_poller_conf *conf, struct rpcr_rdev_pd *pd, uint32_t access,
	   struct rpcr_chunk_pool_conf *pc, struct rpcr_chunk_pool_conf *bc)
{
	memset(pc, 0, sizeof(*pc));
	pc->arena = conf->arena;
	pc->pd = pd;
	pc->n = conf->bufs != 0 ? conf->bufs : POLLER_DEFAULT_BUFS;
	pc->cache_size = RTE_MIN(64u, pc->n / 8);
	pc->data_size = XPRT_BUF_DATA;
	pc->headroom = XPRT_HEADROOM;
	pc->access = access;
	*bc = *pc;
	bc->n = conf->bulk_bufs != 0 ? conf->bulk_bufs : POLLER_DEFAULT_BULK;
	bc->cache_size = RTE_MIN(16u, bc->n / 8);
	bc->data_size = XPRT_BULK_DATA;
	bc->headroom = 0;
}

/* Say which pool could not be made, what it needs and what the arena has left. */
static void
pool_fail(const struct rpcr_xprt_poller *p, const char *what, const struct rpcr_chunk_pool_conf *c)
{
	XPRT_LOG(ERR,
		 "poller %s: %s pool (%u buffers of %u bytes) not made: %s; it needs about %zu "
		 "KiB of the arena, which has %zu KiB free of %zu (rpcr_xprt_poller_mem_size())",
		 p->name, what, c->n, (unsigned int)c->headroom + c->data_size,
		 rte_strerror(rte_errno), rpcr_chunk_pool_mem_size(c) >> 10,
		 rpcr_mem_arena_free_bytes(c->arena) >> 10, rpcr_mem_arena_len(c->arena) >> 10);
}

size_t
rpcr_xprt_poller_mem_size(const struct rpcr_xprt_poller_conf *conf)
{
	struct rpcr_chunk_pool_conf pc, bc;
	size_t len;

	if (conf == NULL)
		return 0;
	pool_confs(conf, NULL, RPCR_RDEV_ACCESS_LOCAL_WRITE, &pc, &bc);
	len = rpcr_chunk_pool_mem_size(&pc) + rpcr_chunk_pool_mem_size(&bc);
	if (conf->arena == NULL)
		len += 2 * POLLER_HUGE_SLACK +
		       (conf->arena_extra != 0 ? conf->arena_extra : POLLER_DEFAULT_EXTRA);
	return len;
}

struct rpcr_xprt_poller *
rpcr_xprt_poller_create(const struct rpcr_xprt_poller_conf *conf)
{
	struct rpcr_chunk_pool_conf pc, bc;
	struct rpcr_xprt_poller_conf own;
	struct rpcr_xprt_poller *p;
	char name[RTE_RING_NAMESIZE], bname[RTE_RING_NAMESIZE];
	uint32_t i, seq, free_slot = UINT32_MAX;
	int rc;

	if (conf == NULL || conf->dev == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&xprt_pollers_lock);
	for (i = 0; i < RTE_DIM(xprt_pollers); i++) {
		if (xprt_pollers[i] == NULL) {
			if (free_slot == UINT32_MAX)
				free_slot = i;
		} else if (xprt_pollers[i]->dev == conf->dev) {
			pthread_mutex_unlock(&xprt_pollers_lock);
			XPRT_LOG(ERR,
				 "device handle already used by poller %s (open one per poller)",
				 xprt_pollers[i]->name);
			rte_errno = EBUSY;
			return NULL;
		}
	}
	seq = poller_seq++;
	pthread_mutex_unlock(&xprt_pollers_lock);
	if (free_slot == UINT32_MAX) {
		rte_errno = ENOSPC;
		return NULL;
	}

	p = rte_zmalloc("rpcr_poller", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p->epfd = -1; /* (sleep.c's, none yet) */
	p->wake_fd = -1;
	if (conf->name != NULL)
		snprintf(p->name, sizeof(p->name), "%s", conf->name);
	else
		snprintf(p->name, sizeof(p->name), "poller%u", seq);
	p->dev = conf->dev;
	p->arena = conf->arena;
	if (p->arena == NULL) {
		own = *conf;
		snprintf(name, sizeof(name), "xpa%u", seq);
		p->arena = rpcr_mem_arena_create(name, rpcr_xprt_poller_mem_size(conf), 0);
		if (p->arena == NULL)
			goto fail;
		p->own_arena = true;
		own.arena = p->arena;
		conf = &own; /* (read below for the pools) */
	}
	TAILQ_INIT(&p->conns);
	TAILQ_INIT(&p->clnts);
	TAILQ_INIT(&p->qclnts);
	TAILQ_INIT(&p->wconns);
	TAILQ_INIT(&p->svcs);
	rpcr_proto_chunks_init(&p->rx.chunks, p->rx_reads, XPRT_RX_READS, p->rx_writes,
			       XPRT_RX_WRITES, p->rx_segs, XPRT_RX_SEGS);
	p->rx.props = (struct rpcr_proto_v2_propset){p->rx_props, 0, XPRT_RX_PROPS};
	rc = rpcr_rdev_info_get(p->dev, &p->info);
	if (rc != 0) {
		rte_errno = -rc;
		goto fail;
	}
	p->pd = rpcr_rdev_pd_alloc(p->dev);
	if (p->pd == NULL)
		goto fail;
	p->cq = rpcr_rdev_cq_create(
		p->dev,
		RTE_MIN(conf->cq_depth != 0 ? conf->cq_depth : POLLER_DEFAULT_CQ, p->info.max_cqe));
	if (p->cq == NULL)
		goto fail;
	/* The batch its connections stage their WRs in (sq.h). */
	p->sq_wrs = rte_zmalloc("rpcr_poller", sizeof(*p->sq_wrs) * (XPRT_POLL_WRS + XPRT_WR_BATCH),
				RTE_CACHE_LINE_SIZE);
	p->sq_sges =
		rte_zmalloc("rpcr_poller", sizeof(*p->sq_sges) * (XPRT_POLL_SGES + XPRT_SGE_BATCH),
			    RTE_CACHE_LINE_SIZE);
	if (p->sq_wrs == NULL || p->sq_sges == NULL) {
		rte_errno = ENOMEM;
		goto fail;
	}
	p->sq_wbase = p->sq_wrs;
	p->sq_sbase = p->sq_sges;

	/* Where connections bind windows over the pools' memory (reg.c), the pools allow it. */
	if ((p->info.caps & RPCR_RDEV_CAP_MW) && !conf->reg_per_call)
		p->mw_access = RPCR_RDEV_ACCESS_MW_BIND;
	pool_confs(conf, p->pd, RPCR_RDEV_ACCESS_LOCAL_WRITE | p->mw_access, &pc, &bc);
	snprintf(name, sizeof(name), "xpm%u", seq);
	pc.name = name;
	p->pool = rpcr_chunk_pool_create(&pc);
	if (p->pool == NULL) {
		pool_fail(p, "message-buffer", &pc);
		goto fail;
	}
	snprintf(bname, sizeof(bname), "xpb%u", seq);
	bc.name = bname;
	p->bulk = rpcr_chunk_pool_create(&bc);
	if (p->bulk == NULL) {
		pool_fail(p, "bulk", &bc);
		goto fail;
	}
	p->msg_mp = rpcr_chunk_pool_mempool(p->pool);
	p->bulk_mp = rpcr_chunk_pool_mempool(p->bulk);
	snprintf(name, sizeof(name), "xpr%u", seq);
	p->ring = rte_ring_create(
		name, rte_align32pow2(conf->ring_size != 0 ? conf->ring_size : POLLER_DEFAULT_RING),
		SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (p->ring == NULL)
		goto fail;

	p->tsc_hz = rte_get_tsc_hz();
	rc = xprt_sleep_init(p, conf);
	if (rc == 0)
		rc = xprt_srq_init(p, conf);
	if (rc != 0) {
		rte_errno = -rc;
		goto fail;
	}
	if (p->srq.srq != NULL)
		xprt_srq_replenish(p);
	p->tick = xprt_us_to_tsc(p, XPRT_TICK_US);
	p->next_tick = rte_rdtsc();
	p->clnt_due = UINT64_MAX;
	p->conn_due = UINT64_MAX;
	pthread_mutex_init(&p->snap_lock, NULL);
	/* Until its first poll the poller belongs to its creator. */
	p->owner = pthread_self();
	p->owner_tag = &xprt_thread_tag;

	pthread_mutex_lock(&xprt_pollers_lock);
	if (xprt_pollers[free_slot] != NULL) {
		for (free_slot = 0; free_slot < RTE_DIM(xprt_pollers) && xprt_pollers[free_slot];
		     free_slot++)
			;
	}
	if (free_slot < RTE_DIM(xprt_pollers))
		xprt_pollers[free_slot] = p;
	pthread_mutex_unlock(&xprt_pollers_lock);
	if (free_slot == RTE_DIM(xprt_pollers)) {
		rte_errno = ENOSPC;
		goto fail;
	}
	return p;

fail:
	rc = rte_errno;
	XPRT_LOG(ERR, "poller %s: %s", p->name, rte_strerror(rc));
	xprt_srq_fini(p);
	xprt_sleep_fini(p);
	rte_ring_free(p->ring);
	rte_free(p->sq_wrs);
	rte_free(p->sq_sges);
	if (p->bulk != NULL)
		rpcr_chunk_pool_free(p->bulk);
	if (p->pool != NULL)
		rpcr_chunk_pool_free(p->pool);
	if (p->cq != NULL)
		rpcr_rdev_cq_destroy(p->cq);
	if (p->pd != NULL)
		rpcr_rdev_pd_free(p->pd);
	if (p->own_arena)
		rpcr_mem_arena_free(p->arena);
	rte_free(p);
	rte_errno = rc;
	return NULL;
}

int
rpcr_xprt_poller_destroy(struct rpcr_xprt_poller *p)
{
	struct rpcr_svc_req *r;
	uint32_t i;

	if (p == NULL)
		return -EINVAL;
	if (!p->in_poll)
		xprt_clnt_reap(p);
	if (p->in_poll || !TAILQ_EMPTY(&p->clnts) || !TAILQ_EMPTY(&p->svcs) ||
	    !TAILQ_EMPTY(&p->conns))
		return -EBUSY;
	/* The shared receive queue's receives come back to the pool with its destruction; the
	 * buffers of those its destroyed QPs had taken (reported with no QP) before. */
	if (p->srq.srq != NULL) {
		struct rpcr_rdev_wc wc[32];
		uint16_t n, k;

		while ((n = rpcr_rdev_poll_cq(p->cq, wc, RTE_DIM(wc))) != 0)
			for (k = 0; k < n; k++)
				if (wc[k].qp == NULL)
					xprt_srq_orphan(p, &wc[k]);
	}
	/* (Inline replies staged and never posted: their connections are gone.) */
	while (p->nsent != 0)
		rte_pktmbuf_free(p->sent[--p->nsent]);
	while (p->nkept != 0)
		rte_pktmbuf_free(p->kept[--p->nkept]);
	/* A request not given back (a deferred one of a closed connection) keeps the poller. */
	for (r = p->sreq_all; r != NULL; r = r->all_next)
		if (r->state != XPRT_SREQ_FREE)
			return -EBUSY;
	/* Buffers still out (a deferred request of a closed connection, a view the
	 * application holds) keep the pools. */
	if (rte_mempool_avail_count(rpcr_chunk_pool_mempool(p->pool)) + p->srq.posted !=
		    rpcr_chunk_pool_mempool(p->pool)->size ||
	    rte_mempool_avail_count(rpcr_chunk_pool_mempool(p->bulk)) !=
		    rpcr_chunk_pool_mempool(p->bulk)->size)
		return -EBUSY;
	pthread_mutex_lock(&xprt_pollers_lock);
	for (i = 0; i < RTE_DIM(xprt_pollers); i++)
		if (xprt_pollers[i] == p)
			xprt_pollers[i] = NULL;
	pthread_mutex_unlock(&xprt_pollers_lock);
	xprt_cap_poller_gone(p);
	while ((r = p->sreq_all) != NULL) {
		p->sreq_all = r->all_next;
		rte_free(r);
	}
	xprt_srq_fini(p);
	xprt_sleep_fini(p);
	rte_ring_free(p->ring);
	rte_free(p->dirty);
	rte_free(p->sq_wrs);
	rte_free(p->sq_sges);
	rte_free(p->snap);
	pthread_mutex_destroy(&p->snap_lock);
	rpcr_chunk_pool_free(p->bulk);
	rpcr_chunk_pool_free(p->pool);
	rpcr_rdev_cq_destroy(p->cq);
	rpcr_rdev_pd_free(p->pd);
	if (p->own_arena && rpcr_mem_arena_free(p->arena) != 0)
		XPRT_LOG(WARNING,
			 "poller %s: its own arena still has the application's allocations "
			 "(rpcr_xprt_poller_arena()): left mapped",
			 p->name);
	rte_free(p);
	return 0;
}

/* ---- the ring: calls and replies from other threads ---- */

static int
ring_dispatch(struct rpcr_xprt_poller *p)
{
	void *objs[XPRT_POLL_BURST];
	unsigned int n, i;

	n = rte_ring_sc_dequeue_burst(p->ring, objs, RTE_DIM(objs), NULL);
	for (i = 0; i < n; i++) {
		uintptr_t v = (uintptr_t)objs[i];

		void *o = (void *)(v & ~(uintptr_t)XPRT_RING_TAG);

		if ((v & XPRT_RING_TAG) == XPRT_RING_REPLY) {
			struct rpcr_svc_req *r = o;

			if (r->state == XPRT_SREQ_DEFERRED)
				xprt_svc_reply_now(r);
		} else if ((v & XPRT_RING_TAG) == XPRT_RING_BCLNT) {
			xprt_bclnt_ask_run(o);
		} else if ((v & XPRT_RING_TAG) == XPRT_RING_BPUT) {
			xprt_bclnt_put(o);
		} else if ((v & XPRT_RING_TAG) == XPRT_RING_CONNREQ) {
			xprt_svc_group_take(o);
		} else if ((v & XPRT_RING_TAG) == XPRT_RING_CAP) {
			xprt_cap_switch(p, o);
		} else {
			struct rpcr_call *call = (struct rpcr_call *)v;

			xprt_clnt_enqueue(call_priv(call)->clnt, call);
		}
	}
	return (int)n;
}

void
xprt_poller_drain(struct rpcr_xprt_poller *p)
{
	while (ring_dispatch(p) != 0)
		;
}

/* ---- connection events ---- */

static void
conn_event(struct rpcr_xprt_poller *p, const struct rpcr_rdev_event *ev)
{
	struct xprt_conn *c;
	struct rpcr_svc *s;

	switch (ev->type) {
	case RPCR_RDEV_EVENT_CONNECT_REQUEST:
		TAILQ_FOREACH (s, &p->svcs, next)
			if (s->listener == ev->listener)
				break;
		if (s != NULL)
			xprt_svc_conn_request(s, ev);
		else
			rpcr_rdev_reject(ev->req, NULL, 0);
		return;
	case RPCR_RDEV_EVENT_DEVICE_REMOVAL:
		XPRT_LOG(ERR, "%s: device removed", p->name);
		TAILQ_FOREACH (c, &p->conns, next)
			xprt_conn_fail(c, "device removed");
		return;
	case RPCR_RDEV_EVENT_SRQ_LIMIT:
		if (ev->srq == p->srq.srq)
			xprt_srq_low(p);
		return;
	default:
		break;
	}
	if (ev->qp == NULL || (c = ev->qp->user) == NULL)
		return;
	if (!c->server) {
		if (c->clnt != NULL)
			xprt_clnt_conn_event(c->clnt, ev);
		return;
	}
	switch (ev->type) {
	case RPCR_RDEV_EVENT_ESTABLISHED:
		if (c->state == XPRT_CONN_ACCEPTING)
			xprt_conn_move(c, XPRT_CONN_CONNECTED);
		break;
	case RPCR_RDEV_EVENT_DISCONNECTED:
		xprt_conn_fail(c, "disconnected");
		break;
	case RPCR_RDEV_EVENT_CONNECT_ERROR:
		xprt_conn_fail(c, "connection failed");
		break;
	default:
		break;
	}
}

/* Copy the connections for telemetry (owner thread; a reader takes snap_lock). */
static void
conn_snapshot(struct rpcr_xprt_poller *p)
{
	int n;

	/* (A reader holding the lock makes this round skip: the poller never waits for it.) */
	if (pthread_mutex_trylock(&p->snap_lock) != 0)
		return;
	if (p->nconns > p->snap_cap) {
		uint32_t cap = rte_align32pow2(p->nconns);
		struct rpcr_xprt_conn_info *a = rte_zmalloc("rpcr_xprt", sizeof(*a) * cap, 0);

		if (a != NULL) {
			rte_free(p->snap);
			p->snap = a;
			p->snap_cap = cap;
		}
	}
	n = rpcr_xprt_conn_list(p, p->snap, p->snap_cap);
	p->nsnap = n < 0 ? 0 : RTE_MIN((uint32_t)n, p->snap_cap);
	pthread_mutex_unlock(&p->snap_lock);
}

static int
timers(struct rpcr_xprt_poller *p, uint64_t now)
{
	struct rpcr_rdev_event ev[8];
	struct rpcr_clnt *cl;
	int n, i, work = 0;

	p->next_tick = now + p->tick;
	do {
		n = rpcr_rdev_event_poll(p->dev, ev, RTE_DIM(ev));
		for (i = 0; i < n; i++)
			conn_event(p, &ev[i]);
		work += RTE_MAX(n, 0);
	} while (n == (int)RTE_DIM(ev));
	/* Each client (connection) visited says when it is due next (xprt_due_*()). */
	if (now >= p->clnt_due) {
		p->clnt_due = UINT64_MAX;
		TAILQ_FOREACH (cl, &p->clnts, next)
			xprt_clnt_timers(cl, now);
	}
	if (now >= p->next_snap) {
		p->next_snap = now + xprt_us_to_tsc(p, XPRT_SNAP_US);
		conn_snapshot(p);
	}
	if (now >= p->conn_due) {
		struct xprt_conn *c;

		p->conn_due = UINT64_MAX;
		TAILQ_FOREACH (c, &p->conns, next) {
			if (c->ndones_used != 0)
				xprt_due_conn(p, xprt_draft_dones_expire(c, now, false));
			if (unlikely(c->xchar.pend_rbsiz != 0))
				xprt_xchar_tick(c);
		}
	}
	/* Reverse clients no one holds any more (never inside the loops above). */
	if (p->ndead != 0)
		xprt_clnt_reap(p);
	return work;
}

/* ---- completions ---- */

/*
 * The receives' buffers of a burst of more than one completion, asked for at once so that their
 * misses overlap: each one's mbuf, then (a second pass: its buf_addr is in that line) the first
 * line of its message. However few the connections, these are cold: a buffer comes back only
 * after every other receive posted before it (a shared receive queue of 2048 cycles through
 * 2048 buffers, a connection's own queue through its ring). bench_scale, 4 x 250, three A-B-B-A
 * rounds: median 2.80 -> 3.38 million calls/s (the second pass alone: 3.29 -> 3.42); 1000 x 1
 * unchanged; 15 instructions a call at 64 outstanding (doc/xprt.md).
 */
static inline void
burst_buffers(const struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t i;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		if (!(wc[i].wr_id & XPRT_WRID_SQ))
			rte_prefetch0((void *)(uintptr_t)wc[i].wr_id);
	for (i = 0; i < n; i++)
		if (!(wc[i].wr_id & XPRT_WRID_SQ))
			rte_prefetch0(rte_pktmbuf_mtod((struct rte_mbuf *)(uintptr_t)wc[i].wr_id,
						       void *));
}

/* A burst's first look, where it needs one (rpcr_xprt_poller::burst_slow). */
static void
burst_first(struct rpcr_xprt_poller *p, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t i;

	/* The QPs, for all its completions at once: over many connections each is another
	 * connection's, cold, and their misses overlap (bench_scale, 1000 x 1: 6 to 20 % more
	 * calls/s, with the buffers). Over a few, they are in the cache. */
	for (i = 0; p->nconns > XPRT_PREFETCH_CONNS && i < n; i++)
		rte_prefetch0(wc[i].qp);
	/* Capture: the receives before their buffers are handled (and maybe reused). */
	if (p->cap != NULL)
		xprt_cap_rx(p, wc, n);
}

static inline void
poll_completions(struct rpcr_xprt_poller *p, int *work)
{
	struct rpcr_rdev_wc *wc = p->wc;
	uint16_t n, i;

	n = rpcr_rdev_poll_cq(p->cq, wc, XPRT_POLL_BURST);
	*work += n;
	if (unlikely(p->burst_slow))
		burst_first(p, wc, n);
	burst_buffers(wc, n);
	for (i = 0; i < n;) {
		struct xprt_conn *c;

		if (unlikely(wc[i].qp == NULL)) {
			/* A receive of the shared receive queue whose QP is gone. */
			xprt_srq_orphan(p, &wc[i++]);
			continue;
		}
		c = wc[i].qp->user;
		if (wc[i].wr_id & XPRT_WRID_SQ) {
			bool ok = wc[i].status == RPCR_RDEV_WC_SUCCESS;

			if (unlikely(!ok)) {
				if (wc[i].status != RPCR_RDEV_WC_WR_FLUSH_ERR) {
					p->stats.wc_errors++;
					XPRT_LOG(ERR, "%s: conn %" PRIu64 ": send queue: %s",
						 p->name, c->id,
						 rpcr_rdev_wc_status_str(wc[i].status));
				} else {
					/* Flushed: the QP had failed already. The connection is
					 * failing before the WRs' owners hear of it (a call whose
					 * windows were being invalidated keeps its reply: nothing
					 * reaches them through a failed QP). */
					xprt_conn_fail(c, "send queue flushed");
				}
			}
			xprt_sq_complete(c, (uint32_t)(wc[i].wr_id >> 1), ok);
			if (unlikely(!ok))
				xprt_conn_fail(c, "send queue WR failed");
			i++;
		} else {
			/* Receives of one connection in a row: one call for them all. (Receives
			 * consumed: replenished at the end of this poll.) */
			xprt_mark_dirty(c);
			i += xprt_vops_tab[c->vops]->recv_burst(c, &wc[i], (uint16_t)(n - i));
		}
	}
}

/* ---- the loop ---- */

int
rpcr_xprt_poll(struct rpcr_xprt_poller *p)
{
	struct rpcr_clnt *cl;
	struct xprt_conn *c, *tmp;
	uint64_t now;
	uint32_t i;
	int work = 0;

	if (unlikely(!p->owner_set)) {
		p->owner = pthread_self();
		p->owner_tag = &xprt_thread_tag;
		p->owner_set = true;
	}
	/* Not from a handler or a callback: the completions in hand (p->wc, the receive taken
	 * last) belong to the poll running. */
	if (unlikely(p->in_poll))
		return 0;
	p->in_poll = true;
	poll_completions(p, &work);
	if (!rte_ring_empty(p->ring))
		work += ring_dispatch(p);
	/* Only the clients with calls waiting: with thousands of clients and a few of them short
	 * of credits, a walk over all of them each poll would cost more than the calls. (No
	 * client is freed inside this loop: destroy is refused inside a poll, reverse clients
	 * are reaped after it.) */
	if (unlikely(!TAILQ_EMPTY(&p->qclnts))) {
		struct rpcr_clnt *tcl;

		RTE_TAILQ_FOREACH_SAFE (cl, &p->qclnts, qnext, tcl) {
			if (!TAILQ_EMPTY(&cl->waiting) || !TAILQ_EMPTY(&cl->resend))
				work += xprt_clnt_advance(cl);
			if (TAILQ_EMPTY(&cl->waiting) && TAILQ_EMPTY(&cl->resend))
				xprt_clnt_unqueue(cl);
		}
	}
	/* The same for the connections with requests waiting. (None is torn down inside this
	 * loop: that waits for the end of the poll.) */
	if (unlikely(!TAILQ_EMPTY(&p->wconns))) {
		RTE_TAILQ_FOREACH_SAFE (c, &p->wconns, wnext, tmp) {
			if (!TAILQ_EMPTY(&c->waiting))
				work += xprt_svc_retry(c);
			if (TAILQ_EMPTY(&c->waiting))
				xprt_svc_unlist(c);
		}
	}
	/* Receives first, then the sends that may grant credits for them. */
	if (p->srq.srq != NULL && p->srq.posted < p->srq.target)
		xprt_srq_replenish(p);
	if (p->ndirty != 0) {
		for (i = 0; i < p->ndirty; i++) {
			c = p->dirty[i];
			c->dirty = false;
			xprt_replenish_maybe(c);
			xprt_sq_flush(c);
		}
		p->ndirty = 0;
		xprt_sq_batch_reset(p);
	}
	/* (Every inline Send staged is posted by now: its connection was dirty.) */
	if (p->nsent != 0)
		xprt_poller_sent(p);
	/* The clock, every 16 polls: timers are due every 50 us, polls take tens of ns. */
	if (unlikely((++p->npolls & 15) == 0)) {
		now = rte_rdtsc();
		if (now >= p->next_tick)
			work += timers(p, now);
	}
	if (unlikely(p->nclosing != 0)) {
		/* Completions already in the queue for a connection about to go are taken first
		 * (its QP's destruction would drop them): a failed RDMA Write whose disconnect
		 * event came in before its error completion is still counted as the error. */
		poll_completions(p, &work);
		RTE_TAILQ_FOREACH_SAFE (c, &p->conns, next, tmp)
			if (c->state == XPRT_CONN_CLOSING)
				xprt_conn_teardown(c);
	}
	/* Poll modes adaptive and interrupt: sleep when idle (sleep.c has the order). */
	if (unlikely(p->mode != RPCR_XPRT_POLL_BUSY)) {
		if (work != 0 || p->nclosing != 0) {
			p->idle_since = 0;
		} else if (xprt_sleep_due(p) && xprt_sleep_arm(p) == 0) {
			poll_completions(p, &work);
			if (work == 0)
				xprt_sleep_wait(p);
			xprt_sleep_disarm(p);
		}
	}
	p->in_poll = false;
	p->stats.polls++;
	p->stats.busy_polls += work != 0;
	return work;
}

int
rpcr_xprt_poller_run(struct rpcr_xprt_poller *p, volatile bool *stop)
{
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED))
		rpcr_xprt_poll(p);
	return 0;
}

int
rpcr_xprt_poller_lcore(void *arg)
{
	struct rpcr_xprt_poller *p = arg;

	/* This thread owns the poller from here on (a relaunch may be on another lcore). */
	p->owner = pthread_self();
	p->owner_set = true;
	__atomic_store_n(&p->owner_tag, &xprt_thread_tag, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
		rpcr_xprt_poll(p);
	__atomic_store_n(&p->stop, false, __ATOMIC_RELEASE);
	return 0;
}

int
rpcr_xprt_poller_launch(struct rpcr_xprt_poller *p, unsigned int lcore)
{
	if (p == NULL)
		return -EINVAL;
	if (xprt_on_owner(p) && p->in_poll)
		return -EBUSY;
	/* No thread owns the poller until the lcore claims it: meanwhile every thread's calls go
	 * through its ring, none polls it from the side. */
	p->owner_set = true;
	__atomic_store_n(&p->owner_tag, NULL, __ATOMIC_RELEASE);
	return rte_eal_remote_launch(rpcr_xprt_poller_lcore, p, lcore);
}

void
rpcr_xprt_poller_stop(struct rpcr_xprt_poller *p)
{
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	xprt_poller_kick(p);
}

struct rpcr_rdev_pd *
rpcr_xprt_poller_pd(const struct rpcr_xprt_poller *p)
{
	return p->pd;
}

struct rpcr_mem_arena *
rpcr_xprt_poller_arena(const struct rpcr_xprt_poller *p)
{
	return p->arena;
}

struct rpcr_chunk_pool *
rpcr_xprt_poller_pool(const struct rpcr_xprt_poller *p)
{
	return p->pool;
}

uint32_t
rpcr_xprt_poller_mem_access(const struct rpcr_xprt_poller *p)
{
	return RPCR_RDEV_ACCESS_LOCAL_WRITE | p->mw_access;
}

struct rpcr_chunk_pool *
rpcr_xprt_poller_bulk_pool(const struct rpcr_xprt_poller *p)
{
	return p->bulk;
}

void
rpcr_xprt_stats_get(const struct rpcr_xprt_poller *p, struct rpcr_xprt_stats *s)
{
	memcpy(s, (const void *)&p->stats, sizeof(*s));
}

void
rpcr_xprt_stats_reset(struct rpcr_xprt_poller *p)
{
	memset(&p->stats, 0, sizeof(p->stats));
}

/* ---- connections ---- */

static const char *const conn_state_names[XPRT_CONN_NUM_STATES] = {
	[XPRT_CONN_CONNECTING] = "connecting", [XPRT_CONN_ACCEPTING] = "accepting",
	[XPRT_CONN_CONNECTED] = "connected",   [XPRT_CONN_CLOSING] = "closing",
	[XPRT_CONN_CLOSED] = "closed",
};

int
rpcr_xprt_conn_list(const struct rpcr_xprt_poller *p, struct rpcr_xprt_conn_info *info,
		    uint32_t max)
{
	const struct xprt_conn *c;
	uint32_t n = 0;

	if (p == NULL || (info == NULL && max != 0))
		return -EINVAL;
	TAILQ_FOREACH (c, &p->conns, next) {
		struct rpcr_xprt_conn_info *i;

		if (n++ >= max)
			continue;
		i = &info[n - 1];
		memset(i, 0, sizeof(*i));
		i->id = c->id;
		i->server = c->server;
		i->state = conn_state_names[c->state];
		i->inline_send = c->inline_send;
		i->inline_recv = c->inline_recv;
		i->remote_inv = c->remote_inv;
		i->draft = xprt_draft_has(c, XPRT_F_ALL);
		i->credits = c->server ? c->rsp_credits : c->credits;
		i->in_use = c->server ? c->inflight : c->outstanding;
		if (c->server) {
			i->rev_credits = c->clnt != NULL ? c->credits : 0;
			i->rev_in_use = c->clnt != NULL ? c->outstanding : 0;
		} else {
			i->rev_credits = c->rsp_credits;
			i->rev_in_use = c->svc != NULL ? c->inflight : 0;
		}
		i->recv_posted = c->rq_tail - c->rq_head;
		i->msgs_sent = c->msgs_out;
		i->msgs_recv = c->msgs_in;
		i->bytes_sent = c->bytes_out;
		i->bytes_recv = c->bytes_in;
		i->overruns = c->overruns;
		i->peer = c->peer;
		if (c->qp != NULL)
			i->qp = c->qp->stats;
		i->rdma_vers = c->wire->vers;
		i->props = c->v2_peer;
		xprt_xchar_info(c, &i->props);
	}
	return (int)RTE_MIN(n, (uint32_t)INT32_MAX);
}

int
rpcr_xprt_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (sa == NULL || buf == NULL || len == 0)
		return -EINVAL;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		n = snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		n = snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		buf[0] = '\0';
		return 0;
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}
