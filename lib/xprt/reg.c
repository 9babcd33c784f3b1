/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * How a requester exposes a call's memory to its peer (chunks it offers: read chunks of its
 * arguments, write and reply chunks for its results), and takes it back before the call
 * completes (RFC 8166 section 4.5.4). A strategy per connection, chosen when it is made
 * (xprt_reg_conn_init()):
 *
 *   - windows (xprt_reg_mw_ops), where the device has RPCR_RDEV_CAP_MW: the message and bulk
 *     pools of lib/chunk (in lib/mem's arenas) are registered once with MW_BIND; a run of a
 *     call's memory gets a window of the connection's pool, whose key is known before its bind
 *     is posted (rpcr_rdev_mw::next_rkey), so the call's header is written first and the bind
 *     staged just ahead of its Send, in the same post (xprt_reg_stage()). A window's local
 *     invalidation always finds room in the send queue (sq.h). After the reply, a window the peer invalidated with its Send
 *     (RPCR_RDEV_WC_F_WITH_INV) is free again at once; the others get a LOCAL_INV, the last one
 *     signalled and owned by the call, which completes only when it has (clnt.c,
 *     XPRT_CREQ_INVALIDATING). A window goes back to the pool when its invalidation is staged:
 *     a later bind of it on this queue pair runs after the invalidation. Memory outside a
 *     registration that allows windows (the application's, registered without MW_BIND), and a
 *     pool that cannot grow, fall back to a registration for the call (counted:
 *     reg_fallbacks). No system call per call on the way, on any driver.
 *   - a registration per run, per call (xprt_reg_mr_ops), where the device has no windows:
 *     rpcr_rdev_mr_reg() when the call is marshalled, rpcr_rdev_mr_dereg() when it is over
 *     (the device's system calls on ibverbs; a lookup on shm).
 *
 * Either way, nothing of a call stays reachable once the call has completed, and a
 * registration that cannot be taken back closes the connection first (the caller's part).
 * Windows are unbound by freeing them before the queue pair is destroyed
 * (xprt_reg_conn_fini()): a window bound to a destroyed queue pair is what leaks on Linux 6.1's
 * rxe.
 */

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

/* ---- a registration per call ---- */

static int
mr_map(struct xprt_conn *c, struct xprt_regs *rs, const struct rpcr_rdev_mr *home, uintptr_t addr,
       uint32_t len, uint32_t access)
{
	struct rpcr_rdev_mr *mr;
	struct xprt_reg *e;

	RTE_SET_USED(home);
	mr = rpcr_rdev_mr_reg(c->p->pd, (void *)addr, len, access);
	if (mr == NULL)
		return rte_errno == ENOSPC ? -ENOMEM : -rte_errno;
	e = &rs->r[rs->n++];
	e->kind = XPRT_REG_MR;
	e->staged = false;
	e->mr = mr;
	e->rkey = mr->rkey;
	c->p->stats.reg_mrs++;
	return 0;
}

/* Deregister entry @e. @return 0, or -EIO (counted and logged: the peer may still reach it). */
static int
mr_drop(struct xprt_conn *c, struct rpcr_xprt_poller *p, struct xprt_reg *e)
{
	if (likely(rpcr_rdev_mr_dereg(e->mr) == 0))
		return 0;
	p->stats.invalidate_failures++;
	XPRT_LOG(ERR, "%s: conn %" PRIu64 ": a registration (key 0x%08x) could not be invalidated",
		 p->name, c != NULL ? c->id : 0, e->rkey);
	return -EIO;
}

static int
mr_unmap(struct xprt_conn *c, struct xprt_regs *rs, uint32_t inv, struct xprt_creq *owner)
{
	uint32_t i;
	int rc = 0;

	RTE_SET_USED(owner);
	for (i = 0; i < rs->n; i++) {
		if (inv != 0 && rs->r[i].rkey == inv)
			c->p->stats.remote_invalidations++;
		if (mr_drop(c, c->p, &rs->r[i]) != 0)
			rc = -EIO;
	}
	rs->n = 0;
	return rc;
}

static void
mr_recover(struct xprt_conn *c, struct xprt_regs *rs)
{
	uint32_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->r[i].kind == XPRT_REG_MR)
			(void)rpcr_rdev_mr_dereg(rs->r[i].mr);
	RTE_SET_USED(c);
	rs->n = 0;
}

const struct xprt_reg_ops xprt_reg_mr_ops = {
	.name = "registration per call",
	.map = mr_map,
	.unmap = mr_unmap,
	.recover = mr_recover,
};

/* ---- memory windows ---- */

/* An unbound window of @c's pool, allocated if the pool may grow. NULL: none. */
static struct rpcr_rdev_mw *
mw_get(struct xprt_conn *c)
{
	struct xprt_mwpool *w = &c->mw;
	struct rpcr_rdev_mw *mw;

	if (likely(w->nfree != 0))
		return w->free[--w->nfree];
	if (w->nall == XPRT_MW_MAX)
		return NULL;
	if (w->all == NULL) {
		w->all = rte_zmalloc("rpcr_xprt", sizeof(*w->all) * XPRT_MW_MAX, 0);
		w->free = rte_zmalloc("rpcr_xprt", sizeof(*w->free) * XPRT_MW_MAX, 0);
		if (w->all == NULL || w->free == NULL) {
			rte_free(w->all);
			rte_free(w->free);
			w->all = NULL;
			w->free = NULL;
			return NULL;
		}
	}
	mw = rpcr_rdev_mw_alloc(c->p->pd);
	if (mw == NULL) {
		XPRT_LOG(DEBUG, "%s: conn %" PRIu64 ": window %u: %s", c->p->name, c->id, w->nall,
			 rte_strerror(rte_errno));
		return NULL;
	}
	w->all[w->nall++] = mw;
	return mw;
}

static inline void
mw_put(struct xprt_conn *c, struct rpcr_rdev_mw *mw)
{
	c->mw.free[c->mw.nfree++] = mw;
}

/*
 * A window still bound on a connection that is closing: freed now (freeing unbinds it), not
 * with the connection, so that nothing reaches the memory once its call completes and the
 * application's registration under it can go (rpcr_rdev_mr_dereg() refuses while a window is
 * bound). Its bind can no longer be posted (a closing connection posts nothing).
 */
static void
mw_drop(struct xprt_conn *c, struct rpcr_rdev_mw *mw)
{
	struct xprt_mwpool *w = &c->mw;
	uint32_t i;

	for (i = 0; i < w->nall; i++) {
		if (w->all[i] == mw) {
			w->all[i] = w->all[--w->nall];
			(void)rpcr_rdev_mw_free(mw);
			return;
		}
	}
}

static int
mw_map(struct xprt_conn *c, struct xprt_regs *rs, const struct rpcr_rdev_mr *home, uintptr_t addr,
       uint32_t len, uint32_t access)
{
	uint32_t want = access & (RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE);
	struct rpcr_rdev_mw *mw = NULL;
	struct xprt_reg *e;

	/* A window needs a registration that allows it, covering the run (and local write
	 * under a window the peer writes). */
	if (likely(home != NULL && (home->access & RPCR_RDEV_ACCESS_MW_BIND) &&
		   (!(want & RPCR_RDEV_ACCESS_REMOTE_WRITE) ||
		    (home->access & RPCR_RDEV_ACCESS_LOCAL_WRITE)) &&
		   addr >= (uintptr_t)home->addr &&
		   addr + len <= (uintptr_t)home->addr + home->len))
		mw = mw_get(c);
	if (unlikely(mw == NULL)) {
		c->p->stats.reg_fallbacks++;
		return mr_map(c, rs, home, addr, len, access);
	}
	e = &rs->r[rs->n++];
	e->kind = XPRT_REG_MW;
	e->staged = false;
	e->mr = NULL;
	e->bind.mw = mw;
	e->bind.mr = home;
	e->bind.addr = addr;
	e->bind.len = len;
	e->bind.access = want;
	e->rkey = mw->next_rkey;
	return 0;
}

static int
mw_unmap(struct xprt_conn *c, struct xprt_regs *rs, uint32_t inv, struct xprt_creq *owner)
{
	struct rpcr_xprt_poller *p = c->p;
	uint32_t keys[XPRT_TX_SEGS];
	uint32_t i, n = 0;
	bool cut = false;
	int rc = 0;

	for (i = 0; i < rs->n; i++) {
		struct xprt_reg *e = &rs->r[i];

		if (e->kind == XPRT_REG_MR) {
			if (inv != 0 && e->rkey == inv)
				p->stats.remote_invalidations++;
			if (mr_drop(c, p, e) != 0)
				rc = -EIO;
			continue;
		}
		if (!e->staged) {
			mw_put(c, e->bind.mw); /* never bound */
			continue;
		}
		if (inv != 0 && e->rkey == inv) {
			/* The peer's Send with Invalidate unbound it. */
			p->stats.remote_invalidations++;
			mw_put(c, e->bind.mw);
		} else if (c->state < XPRT_CONN_CLOSING) {
			keys[n++] = e->rkey;
			mw_put(c, e->bind.mw); /* (a later bind runs after the invalidation) */
		} else {
			/* The connection is closing: no work request goes any more. The window is
			 * freed now, and the queue pair put in the error state (it may still be live
			 * when the engine chose to close it): the peer reaches nothing of the call
			 * before it completes. */
			mw_drop(c, e->bind.mw);
			cut = true;
		}
	}
	if (unlikely(cut) && c->qp != NULL)
		(void)rpcr_rdev_disconnect(c->qp);
	rs->n = 0;
	if (rc != 0 || n == 0)
		return rc;
	for (i = 0; i < n; i++)
		xprt_sq_post_reg(c, NULL, keys[i], i + 1 == n ? owner : NULL,
				 i + 1 == n && owner != NULL);
	p->stats.local_invalidations += n;
	return 1;
}

static void
mw_recover(struct xprt_conn *c, struct xprt_regs *rs)
{
	bool cut = false;
	uint32_t i;

	for (i = 0; i < rs->n; i++) {
		struct xprt_reg *e = &rs->r[i];

		if (e->kind == XPRT_REG_MR) {
			(void)rpcr_rdev_mr_dereg(e->mr);
		} else if (c != NULL) {
			/* A window never bound goes back; a bound one is freed (unbound) now, the
			 * connection failing (mw_drop()). */
			if (!e->staged && c->state < XPRT_CONN_CLOSING)
				mw_put(c, e->bind.mw);
			else if (e->staged)
				mw_drop(c, e->bind.mw);
			cut |= e->staged;
		}
	}
	/* A connection the engine chose to close may still have a live queue pair until its
	 * teardown, and the call may complete before that (a timeout): nothing may reach the
	 * call's memory from here on. */
	if (cut && c->qp != NULL)
		(void)rpcr_rdev_disconnect(c->qp);
	rs->n = 0;
}

const struct xprt_reg_ops xprt_reg_mw_ops = {
	.name = "memory windows",
	.map = mw_map,
	.unmap = mw_unmap,
	.recover = mw_recover,
};

/* ---- the connection's strategy ---- */

void
xprt_reg_conn_init(struct xprt_conn *c)
{
	struct rpcr_xprt_poller *p = c->p;

	c->reg = (p->info.caps & RPCR_RDEV_CAP_MW) && p->mw_access != 0 ? &xprt_reg_mw_ops
									: &xprt_reg_mr_ops;
}

void
xprt_reg_conn_fini(struct xprt_conn *c)
{
	struct xprt_mwpool *w = &c->mw;

	while (w->nall != 0)
		(void)rpcr_rdev_mw_free(w->all[--w->nall]);
	w->nfree = 0;
	rte_free(w->all);
	rte_free(w->free);
	w->all = NULL;
	w->free = NULL;
}

/* The runs of contiguous memory of a byte range of a chain (chain_runs_init(), chain_run()). */
struct chain_runs {
	const struct rte_mbuf *m; /* segment of the next byte */
	uint32_t off;             /* its offset there */
	uint32_t left;            /* bytes still to come */
};

static void
chain_runs_init(struct chain_runs *it, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	*it = (struct chain_runs){m, off, len};
}

/*
 * The next run: its first byte in *start, its end in *end, its segments' registration in *home;
 * neighbours that continue the same memory join it (in the same registration where @same_mr).
 * @return 1, 0 (no bytes left), -EINVAL (the chain ends first).
 */
static int
chain_run(struct chain_runs *it, bool same_mr, uintptr_t *start, uintptr_t *end,
	  const struct rpcr_rdev_mr **home)
{
	const struct rte_mbuf *m = it->m;
	uint32_t take;

	for (;; m = m->next, it->off = 0) {
		if (it->left == 0)
			return 0;
		if (m == NULL)
			return -EINVAL;
		take = RTE_MIN(it->left, (uint32_t)m->data_len - it->off);
		if (take != 0)
			break;
	}
	*home = rpcr_chunk_keys(m)->mr;
	*start = rte_pktmbuf_mtod_offset(m, uintptr_t, it->off);
	*end = *start + take;
	it->left -= take;
	for (m = m->next, it->off = 0; it->left != 0 && m != NULL; m = m->next) {
		uintptr_t a = rte_pktmbuf_mtod(m, uintptr_t);

		if (a != *end || m->data_len == 0 || (same_mr && rpcr_chunk_keys(m)->mr != *home))
			break;
		take = RTE_MIN(it->left, (uint32_t)m->data_len);
		*end += take;
		it->left -= take;
	}
	it->m = m;
	return 1;
}

int
xprt_reg_chain(struct xprt_conn *c, struct xprt_regs *rs, const struct rte_mbuf *m, uint32_t off,
	       uint32_t len, uint32_t access, struct rpcr_proto_seg *segs, uint32_t max_segs)
{
	const struct rpcr_rdev_mr *home;
	struct chain_runs it;
	uintptr_t start, end;
	uint32_t nsegs = 0;
	int rc;

	chain_runs_init(&it, m, off, len);
	while ((rc = chain_run(&it, true, &start, &end, &home)) > 0) {
		uintptr_t o;

		if (nsegs == max_segs || rs->n == XPRT_TX_SEGS)
			return -E2BIG;
		rc = c->reg->map(c, rs, home, start, (uint32_t)(end - start), access);
		if (rc != 0)
			return rc;
		/* One registration, in segments no longer than the peer takes (version 2's
		 * RSSIZ; c->seg_max is UINT32_MAX on version 1). */
		for (o = start; o < end;) {
			uint32_t l = (uint32_t)RTE_MIN(end - o, (uintptr_t)c->seg_max);

			if (nsegs == max_segs)
				return -E2BIG;
			segs[nsegs].handle = rs->r[rs->n - 1].rkey;
			segs[nsegs].length = l;
			segs[nsegs].offset = o;
			nsegs++;
			o += l;
		}
	}
	return rc < 0 ? rc : (int)nsegs;
}

int
xprt_expose(struct rpcr_rdev_pd *pd, const struct rte_mbuf *m, uint32_t off, uint32_t len,
	    uint32_t access, struct rpcr_rdev_mr **mrs, uint32_t *nmrs, uint32_t max_mrs,
	    struct rpcr_proto_seg *segs, uint32_t max_segs)
{
	const struct rpcr_rdev_mr *home;
	struct chain_runs it;
	struct rpcr_rdev_mr *mr;
	uintptr_t start, end;
	uint32_t nsegs = 0;
	int rc;

	chain_runs_init(&it, m, off, len);
	while ((rc = chain_run(&it, false, &start, &end, &home)) > 0) {
		if (nsegs == max_segs || *nmrs == max_mrs)
			return -E2BIG;
		mr = rpcr_rdev_mr_reg(pd, (void *)start, end - start, access);
		if (mr == NULL)
			return rte_errno == ENOSPC ? -ENOMEM : -rte_errno;
		mrs[(*nmrs)++] = mr;
		segs[nsegs].handle = mr->rkey;
		segs[nsegs].length = (uint32_t)(end - start);
		segs[nsegs].offset = start;
		nsegs++;
	}
	return rc < 0 ? rc : (int)nsegs;
}

uint32_t
xprt_reg_unstaged(const struct xprt_regs *rs)
{
	uint32_t i, n = 0;

	for (i = 0; i < rs->n; i++)
		n += rs->r[i].kind == XPRT_REG_MW && !rs->r[i].staged;
	return n;
}

void
xprt_reg_stage(struct xprt_conn *c, struct xprt_regs *rs)
{
	uint32_t i;

	for (i = 0; i < rs->n; i++) {
		struct xprt_reg *e = &rs->r[i];

		if (e->kind != XPRT_REG_MW || e->staged)
			continue;
		xprt_sq_post_reg(c, &e->bind, 0, NULL, false);
		e->staged = true;
		c->p->stats.mw_binds++;
	}
}
