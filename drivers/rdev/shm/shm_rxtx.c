/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * shm fast path: the initiator performs each operation itself, at post time, on memory the peer
 * shared: RDMA Write and Read copy to and from the peer's regions under the peer's keys, a Send
 * takes the peer's next posted receive descriptor and fills it, then completes it in the peer's
 * receive completion ring. The target's CPU does nothing until it polls, as with a NIC.
 *
 * Ordering: each operation finishes its copies before the completion that reports it is
 * published (rte_ring's tail update is a store-release), and operations of one QP run in posting
 * order, so a Send after Writes is seen only after the Writes landed (RC ordering).
 *
 * Queues: a Send takes the peer's receive descriptor from slot (cons % n) of its receive queue
 * when the slot's stamp says it was filled for that sequence number, and writes its completion
 * the same way into the peer's completion queue; the owner posts receives and takes completions
 * likewise. Nobody reads anybody's index: a message costs the cache lines of the slots it uses.
 * A Send into a shared receive queue takes the queue's next receive instead and completes it in
 * the QP's completion queue or, when the owner's CQ reads the queue (SHM_SRQ_SLOT_CQ), in the
 * queue's slot it took, which the owner's poll reads in order without visiting the QP
 * (poll_srq_slots()). shm_layout.h has the protocol.
 *
 * Flushing: a Send into the peer's half first raises that half's @busy and then checks that it is
 * RTS; the owner moves its half to ERROR and waits for @busy to drop before it flushes the
 * receives it posted and has not seen completed (it keeps their wr_ids). Either the Send sees
 * ERROR and gives up, or the owner waits for it: no receive completes twice.
 *
 * Waking a sleeping poller (rpcr_rdev_cq_arm()): the owner of a half raises its @asleep
 * (sequentially consistent) and then looks at its @busy and @state; an initiator, after each
 * operation on the peer's half (raised @busy, sequentially consistent; the work; lowered @busy,
 * a release), loads @asleep and, when raised after a Send, lowers it and sends a datagram on the
 * wake socket the owner passed (its own per connection: nothing the peer does with it can block
 * us or steal another peer's wake-up). In the single order of the two sequentially consistent
 * stores, either the owner's comes first, and the initiator's load (after its own store) sees
 * @asleep raised and wakes it; or the initiator's comes first, and the owner's load of @busy sees
 * it still raised (the owner does not sleep) or lowered, and then (acquire on release) the
 * completion written before, which the owner's poll after the arm finds. A QP failed by the
 * peer (its @state set to ERROR, sequentially consistent, then @asleep exchanged) is the same
 * pattern: the owner's look at @state after raising @asleep. No wake-up is lost, and while
 * nobody sleeps an operation costs one load. A peer that keeps @busy raised only keeps the owner
 * from sleeping (it polls, as without sleeping).
 *
 * Fault injection (devargs fault_*, doc/rdev.md): each function below is a static inline
 * specialised twice, plain and with faults, and a device with faults configured gets the second
 * set in its fast-path table; the plain ones test nothing about faults. With faults, a posted
 * send-queue work request may first break the connection (both halves to ERROR at once, as a peer
 * that died; the control thread then reports DISCONNECTED on both sides), a posted receive may be
 * withheld from the peer (its Send there finds no receive: RNR, as a real RC peer does with
 * rnr_retry 0), and completions are reported no sooner than fault_delay_us after they were
 * produced (send queue) or first seen (receives).
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_pause.h>

#include "shm_internal.h"

/* (After rte_ring.h, which shm_internal.h brings.) */
#include <rte_ring_peek.h>

#define SCQ_BURST 32u

static inline uint32_t
load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* The peer's poller sleeps: wake it, once a sleep (cold path of Sends and of failing a QP). */
__rte_noinline __rte_cold void
shm_wake_peer(struct shm_conn *c, struct shm_half *h)
{
	uint8_t one = 1;

	if (__atomic_exchange_n(&h->asleep, 0, __ATOMIC_SEQ_CST) != 0 && c->peer_wake_fd >= 0 &&
	    send(c->peer_wake_fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
		SHM_LOG(DEBUG, "waking the peer's poller: %s", strerror(errno));
}

/* ---- completion events (rpcr_rdev_cq_arm(); the protocol is at the top of this file) ---- */

int
shm_cq_event_fd(struct rpcr_rdev_cq *pcq)
{
	return ((struct shm_cq *)pcq)->epfd;
}

void
shm_cq_disarm(struct rpcr_rdev_cq *pcq)
{
	struct shm_cq *cq = (struct shm_cq *)pcq;
	struct epoll_event ev[16];
	uint8_t buf[64];
	uint32_t i;
	int n, k, rounds;

	for (i = 0; i < cq->nrecv; i++)
		__atomic_store_n(&cq->recv_qps[i]->half->asleep, 0, __ATOMIC_RELAXED);
	cq->armed = false;
	/* The wake sockets that have datagrams: emptied (a few rounds: a peer that keeps sending
	 * only wakes us again). */
	for (rounds = 0; rounds < 4; rounds++) {
		n = epoll_wait(cq->epfd, ev, RTE_DIM(ev), 0);
		for (k = 0; k < n; k++) {
			const struct shm_qp *qp = ev[k].data.ptr;

			while (recv(qp->wake_sock[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
		}
		if (n < (int)RTE_DIM(ev))
			break;
	}
}

int
shm_cq_arm(struct rpcr_rdev_cq *pcq)
{
	struct shm_cq *cq = (struct shm_cq *)pcq;
	uint32_t i;

	if (cq->sd->fault.on)
		return -ENOTSUP;
	/* Our own send completions are written when we post: any not taken is work. */
	if (rte_ring_count(cq->scq) != 0)
		return -EAGAIN;
	for (i = 0; i < cq->nrecv; i++)
		__atomic_store_n(&cq->recv_qps[i]->half->asleep, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < cq->nrecv; i++) {
		const struct shm_qp *qp = cq->recv_qps[i];

		/* An operation under way, or a QP failed with receives still to flush: poll. */
		if (__atomic_load_n(&qp->half->busy, __ATOMIC_SEQ_CST) != 0 ||
		    (__atomic_load_n(&qp->half->state, __ATOMIC_SEQ_CST) == SHM_QPS_ERROR &&
		     (qp->srq != NULL ? !qp->srq_flushed : qp->rq_done != qp->rq_prod))) {
			shm_cq_disarm(pcq);
			return -EAGAIN;
		}
	}
	cq->armed = true;
	return 0;
}

void
shm_db_ring_own(struct shm_qp *qp)
{
	if (qp->db_bit != UINT32_MAX)
		__atomic_fetch_or(&qp->rcq->db[qp->db_bit / 64], 1ull << (qp->db_bit % 64),
				  __ATOMIC_RELEASE);
}

void
shm_qp_set_error(struct shm_qp *qp)
{
	__atomic_store_n(&qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
	shm_db_ring_own(qp); /* (its receives flush at the next poll) */
	if (qp->conn != NULL && qp->conn->peer_half != NULL) {
		__atomic_store_n(&qp->conn->peer_half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
		shm_db_ring(qp->conn);
		/* Its receives flush: a poller asleep on them must see it. */
		shm_wake_peer(qp->conn, qp->conn->peer_half);
	}
}

/*
 * Check a local gather/scatter entry against our own keys: our private copy of the slot, and the
 * shared key word, which a peer's Send with Invalidate may have cleared.
 */
static inline uint32_t
local_check(const struct shm_dev *sd, uint32_t pd, const struct rpcr_rdev_sge *s, uint32_t need)
{
	uint32_t slot = s->lkey & sd->key_mask;
	const struct shm_mine *m = &sd->mine[slot];
	uint64_t off;

	if (unlikely(s->lkey == 0 || m->key != s->lkey ||
		     load_acquire(&sd->keys->keys[slot].key) != s->lkey || m->pd != pd))
		return RPCR_RDEV_WC_LOC_PROT_ERR;
	if (unlikely((m->access & need) != need))
		return RPCR_RDEV_WC_LOC_PROT_ERR;
	off = s->addr - m->va;
	if (unlikely(s->addr < m->va || s->length > m->len || off > m->len - s->length))
		return RPCR_RDEV_WC_LOC_PROT_ERR;
	return RPCR_RDEV_WC_SUCCESS;
}

/* The peer's region @id as mapped here, or NULL. */
static inline const struct shm_peer_region *
peer_region(const struct shm_conn *c, uint32_t id)
{
	if (unlikely(id >= RPCR_RDEV_MAX_REGIONS))
		return NULL;
	return __atomic_load_n(&c->regions[id], __ATOMIC_ACQUIRE);
}

/*
 * Translate the peer's (key, address, length) into a pointer into the peer's region as mapped
 * here, or NULL when the key is not valid, lacks @need, belongs to another protection domain,
 * or does not cover the range. Every field comes from shared memory, so every field is checked
 * against what this process mapped; the key is read again at the end in case the slot was
 * reused while it was being read.
 */
static inline uint8_t *
remote_ptr(const struct shm_conn *c, uint32_t rkey, uint64_t addr, uint64_t len, uint32_t need)
{
	const struct shm_key *e = &c->peer_keys->keys[rkey & c->peer_key_mask];
	const struct shm_peer_region *r;
	uint64_t va, elen, roff, off;
	uint32_t qpn;

	if (unlikely(rkey == 0 || load_acquire(&e->key) != rkey))
		return NULL;
	va = e->va;
	elen = e->len;
	roff = e->region_off;
	qpn = e->qp_num;
	r = peer_region(c, e->region);
	if (unlikely((e->access & need) != need || e->pd != c->peer_pd || r == NULL))
		return NULL;
	/* A window: only through the QP it is bound to. */
	if (unlikely(qpn != 0 && qpn != __atomic_load_n(&c->peer_half->qp_num, __ATOMIC_RELAXED)))
		return NULL;
	if (unlikely(addr < va || len > elen || addr - va > elen - len))
		return NULL;
	off = roff + (addr - va);
	if (unlikely(roff > r->len || off < roff || off > r->len || len > r->len - off))
		return NULL;
	if (unlikely(load_acquire(&e->key) != rkey))
		return NULL;
	return r->base + off;
}

/* Invalidate the peer's key @k (Send with Invalidate). */
static bool
remote_invalidate(const struct shm_conn *c, uint32_t k)
{
	struct shm_key *e = &c->peer_keys->keys[k & c->peer_key_mask];
	uint32_t expect = k;

	if (k == 0 || load_acquire(&e->key) != k || !(e->access & RPCR_RDEV_ACCESS_REMOTE_INV) ||
	    e->pd != c->peer_pd ||
	    (e->qp_num != 0 &&
	     e->qp_num != __atomic_load_n(&c->peer_half->qp_num, __ATOMIC_RELAXED)))
		return false;
	return __atomic_compare_exchange_n(&e->key, &expect, 0, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* Copy the gather list into contiguous @dst. */
static inline void
gather(uint8_t *dst, const struct rpcr_rdev_send_wr *w)
{
	uint16_t i;

	for (i = 0; i < w->num_sge; i++) {
		memcpy(dst, (const void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
		dst += w->sg_list[i].length;
	}
}

/* Copy contiguous @src into the scatter list. */
static inline void
scatter(const struct rpcr_rdev_send_wr *w, const uint8_t *src)
{
	uint16_t i;

	for (i = 0; i < w->num_sge; i++) {
		memcpy((void *)(uintptr_t)w->sg_list[i].addr, src, w->sg_list[i].length);
		src += w->sg_list[i].length;
	}
}

/* Write a completion into the peer's completion queue (we are its only producer). */
static inline void
put_rcqe(struct shm_conn *c, uint64_t wr_id, uint32_t status, uint32_t byte_len, uint32_t flags,
	 uint32_t inv_key)
{
	struct shm_rcqe *e = shm_slot(c->peer_rcq, c->peer_mask, SHM_SLOT_ALIGN, c->peer_rcq_prod);

	e->wr_id = wr_id;
	e->status = status;
	e->byte_len = byte_len;
	e->flags = flags;
	e->inv_key = inv_key;
	c->peer_rcq_prod++;
	/* The stamp last: the owner sees the fields, and the data before them; then its QP's
	 * doorbell, for its poll to come to it. */
	__atomic_store_n(&e->stamp, c->peer_rcq_prod, __ATOMIC_RELEASE);
	shm_db_ring(c);
}

/* Complete receive @seq of the peer's SRQ in the slot it took (SHM_SRQ_SLOT_CQ). */
static inline void
put_srq_cqe(struct shm_srq_desc *d, uint32_t seq, uint32_t status, uint32_t byte_len,
	    uint32_t flags, uint32_t inv_key)
{
	d->cstatus = status;
	d->byte_len = byte_len;
	d->flags = flags;
	d->inv_key = inv_key;
	/* @done last: the owner sees the fields, and the data before them. No doorbell: the
	 * owner's poll reads the SRQ's slots. */
	__atomic_store_n(&d->done, seq + 1, __ATOMIC_RELEASE);
}

/*
 * Take the next receive of the peer's shared receive queue (the protocol is in shm_layout.h):
 * its slot, with its sequence number in @seq, or NULL when none is posted.
 */
static __rte_noinline struct shm_srq_desc *
srq_take(struct shm_conn *c, uint32_t *seq)
{
	struct shm_srq_hdr *h =
		(struct shm_srq_hdr *)(void *)(c->peer_srq_ring - sizeof(struct shm_srq_hdr));
	uint64_t tag = (uint64_t)c->peer_srq_tag << 32;
	uint32_t tries;

	for (tries = 0; tries <= c->peer_srq_mask; tries++) {
		uint32_t cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE), expect = cons;
		struct shm_srq_desc *d =
			shm_slot(c->peer_srq_ring, c->peer_srq_mask, c->peer_srq_slot, cons);
		uint64_t w = __atomic_load_n(&d->word, __ATOMIC_ACQUIRE);

		if ((uint32_t)w != cons + 1 && (int32_t)((uint32_t)w - (cons + 1)) < 0)
			return NULL; /* not posted yet */
		if ((uint32_t)w == cons + 1 && (w >> 32) == 0 &&
		    __atomic_compare_exchange_n(&d->word, &w, w | tag, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_compare_exchange_n(&h->cons, &expect, cons + 1, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
			*seq = cons;
			return d;
		}
		/* Taken by a peer that has not moved @cons on yet (or died first), or posted again
		 * a lap later while @cons stayed behind: move it on, try the next. */
		__atomic_compare_exchange_n(&h->cons, &expect, cons + 1, false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Send: fill the peer's next receive. Runs with the peer half's @busy raised. */
static __rte_always_inline uint32_t
send_into(struct shm_qp *qp, struct shm_conn *c, const struct rpcr_rdev_send_wr *w, uint64_t total)
{
	uint8_t *dst[SHM_MAX_RECV_SGE];
	struct shm_sge sge[SHM_MAX_RECV_SGE];
	const struct shm_sge *dsge;
	struct shm_srq_desc *slot = NULL; /* the SRQ slot taken, when completions go there */
	uint32_t status, rstatus, k, i, nsge, max_sge, flags = 0, inv = 0;
	uint32_t sge_i = 0, sge_off = 0, take;
	uint64_t cap = 0, wr_id;

	if (likely(!c->peer_srq_on)) {
		const struct shm_rdesc *d =
			shm_slot(c->peer_rq, c->peer_mask, c->peer_rq_slot, c->peer_rq_cons);

		if (unlikely(__atomic_load_n(&d->stamp, __ATOMIC_ACQUIRE) != c->peer_rq_cons + 1)) {
			/* RC with rnr_retry 0: no receive posted is fatal to the connection. */
			qp->pub.stats.rnr_errors++;
			return RPCR_RDEV_WC_RNR_RETRY_EXC_ERR;
		}
		c->peer_rq_cons++;
		/* Copy what we use out of shared memory once: the peer could change it. */
		wr_id = d->wr_id;
		nsge = d->nsge;
		rstatus = d->status;
		dsge = d->sge;
		max_sge = c->peer_max_sge;
	} else {
		const struct shm_rcqe *e =
			shm_slot(c->peer_rcq, c->peer_mask, SHM_SLOT_ALIGN, c->peer_rcq_prod);
		struct shm_srq_desc *d;
		uint32_t seq;

		/* Its completion slot must have been emptied (an SRQ does not bound what one QP
		 * receives): one not polled yet is an overrun, fatal as a CQ's. (Completions in the
		 * SRQ's slots cannot overrun: each answers a receive of its own.) */
		if (!c->peer_srq_slot_cq &&
		    unlikely(__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) != 0)) {
			__atomic_store_n(&c->peer_half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
			shm_db_ring(c);
			return RPCR_RDEV_WC_RNR_RETRY_EXC_ERR;
		}
		d = srq_take(c, &seq);
		if (unlikely(d == NULL)) {
			qp->pub.stats.rnr_errors++;
			return RPCR_RDEV_WC_RNR_RETRY_EXC_ERR;
		}
		wr_id = seq; /* the owner knows the rest */
		if (c->peer_srq_slot_cq)
			slot = d;
		nsge = d->nsge;
		rstatus = d->status;
		dsge = d->sge;
		max_sge = c->peer_srq_max_sge;
	}
	if (unlikely(rstatus != 0 || nsge > max_sge)) {
		rstatus = rstatus != 0 ? rstatus : RPCR_RDEV_WC_LOC_QP_OP_ERR;
		status = RPCR_RDEV_WC_REM_OP_ERR;
		goto complete;
	}
	for (k = 0; k < nsge; k++) {
		const struct shm_peer_region *r;

		sge[k] = dsge[k];
		r = peer_region(c, sge[k].region);
		if (unlikely(r == NULL || sge[k].off > r->len || sge[k].len > r->len - sge[k].off))
			goto bad_desc;
		dst[k] = r->base + sge[k].off;
		cap += sge[k].len;
	}
	if (unlikely(total > cap)) {
		/* The peer's buffer is too small: its receive fails, our Send fails. */
		rstatus = RPCR_RDEV_WC_LOC_LEN_ERR;
		status = RPCR_RDEV_WC_REM_INV_REQ_ERR;
		goto complete;
	}
	if (w->opcode == RPCR_RDEV_WR_SEND_INV) {
		if (unlikely(!remote_invalidate(c, w->invalidate_rkey))) {
			rstatus = RPCR_RDEV_WC_LOC_QP_OP_ERR;
			status = RPCR_RDEV_WC_REM_OP_ERR;
			goto complete;
		}
		flags = RPCR_RDEV_WC_F_WITH_INV;
		inv = w->invalidate_rkey;
	}

	/* Gather from our entries into the peer's scatter entries. */
	for (i = 0; i < w->num_sge; i++) {
		const uint8_t *src = (const uint8_t *)(uintptr_t)w->sg_list[i].addr;
		uint32_t left = w->sg_list[i].length;

		while (left != 0) {
			while (sge_off == sge[sge_i].len) {
				sge_i++;
				sge_off = 0;
			}
			take = sge[sge_i].len - sge_off;
			if (take > left)
				take = left;
			memcpy(dst[sge_i] + sge_off, src, take);
			src += take;
			left -= take;
			sge_off += take;
		}
	}
	if (slot != NULL)
		put_srq_cqe(slot, (uint32_t)wr_id, RPCR_RDEV_WC_SUCCESS, (uint32_t)total, flags,
			    inv);
	else
		put_rcqe(c, wr_id, RPCR_RDEV_WC_SUCCESS, (uint32_t)total, flags, inv);
	return RPCR_RDEV_WC_SUCCESS;

bad_desc:
	rstatus = RPCR_RDEV_WC_LOC_PROT_ERR;
	status = RPCR_RDEV_WC_REM_OP_ERR;
complete:
	if (slot != NULL)
		put_srq_cqe(slot, (uint32_t)wr_id, rstatus, 0, 0, 0);
	else
		put_rcqe(c, wr_id, rstatus, 0, 0, 0);
	__atomic_store_n(&c->peer_half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
	if (slot != NULL)
		shm_db_ring(c); /* (the owner's poll comes to the failed QP) */
	return status;
}

/*
 * Memory windows. A bind and a local invalidation touch only our own key table, on the QP's
 * thread, in posting order: a bind is done before the Send posted after it (which may carry its
 * key), a local invalidation before anything posted after it. Invalidation then waits until
 * the peer of the window's QP (the only one that could use the key) is out of any operation on
 * our memory: a peer that raised our half's @busy before the key went is done when it drops it,
 * and one that raises it after sees the key gone (the same handshake as fence_peers()).
 */
static uint32_t
mw_key(struct shm_qp *qp, uint32_t slot, uint32_t old)
{
	const struct shm_dev *sd = qp->sd;
	uint32_t k;

	do {
		k = ((uint32_t)shm_fault_rand(&qp->krng) << sd->key_bits) | slot;
	} while (k == old || (k >> sd->key_bits) == 0);
	return k;
}

static uint32_t
mw_bind(struct shm_qp *qp, const struct rpcr_rdev_mw_bind *b)
{
	struct shm_dev *sd = qp->sd;
	const struct shm_mw *mw;
	const struct shm_mr *mr;
	const struct shm_mine *m;
	struct shm_mine *w;
	struct shm_key *e;
	uint32_t k;

	if (unlikely(b == NULL || b->mw == NULL || b->mr == NULL || b->mw->pd != qp->pub.pd ||
		     b->mr->pd != qp->pub.pd))
		return RPCR_RDEV_WC_MW_BIND_ERR;
	mw = (const struct shm_mw *)b->mw;
	mr = (const struct shm_mr *)b->mr;
	w = &sd->mine[mw->slot];
	m = &sd->mine[mr->slot];
	e = &sd->keys->keys[mw->slot];
	if (unlikely(
		    !w->mw || m->mw || m->key != b->mr->lkey ||
		    !(m->access & RPCR_RDEV_ACCESS_MW_BIND) ||
		    (b->access & ~(RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE)) ||
		    ((b->access & RPCR_RDEV_ACCESS_REMOTE_WRITE) &&
		     !(m->access & RPCR_RDEV_ACCESS_LOCAL_WRITE)) ||
		    b->addr < m->va || b->len > m->len || b->addr - m->va > m->len - b->len))
		return RPCR_RDEV_WC_MW_BIND_ERR;
	/* Bound already (verbs: a type 2 window is bound from the free state only). */
	if (unlikely(load_acquire(&e->key) != 0))
		return RPCR_RDEV_WC_MW_BIND_ERR;
	/* The key drawn ahead (a Send in this post may carry it); checked as any key from the
	 * application's memory: this slot's, not the last one, not 0. */
	k = b->mw->next_rkey;
	if (unlikely((k & sd->key_mask) != mw->slot || k == w->key || (k >> sd->key_bits) == 0))
		return RPCR_RDEV_WC_MW_BIND_ERR;
	w->access = b->access | RPCR_RDEV_ACCESS_REMOTE_INV;
	w->region = m->region;
	w->va = b->addr;
	w->len = b->len;
	w->region_off = m->region_off + (b->addr - m->va);
	w->qp_num = qp->pub.qp_num;
	w->parent = mr->slot;
	w->key = k;
	e->access = w->access;
	e->region = w->region;
	e->pd = qp->pub.pd->id;
	e->va = w->va;
	e->len = w->len;
	e->region_off = w->region_off;
	e->qp_num = w->qp_num;
	/* The key last: a peer that sees it sees the fields above. */
	__atomic_store_n(&e->key, k, __ATOMIC_RELEASE);
	b->mw->rkey = k;
	b->mw->next_rkey = mw_key(qp, mw->slot, k);
	return RPCR_RDEV_WC_SUCCESS;
}

static uint32_t
mw_local_inv(struct shm_qp *qp, uint32_t key)
{
	struct shm_dev *sd = qp->sd;
	uint32_t slot = key & sd->key_mask;
	struct shm_mine *w = &sd->mine[slot];
	struct shm_key *e = &sd->keys->keys[slot];
	uint64_t deadline;

	/* A window's current key, bound to this QP, not invalidated yet (by either side). */
	if (unlikely(key == 0 || !w->mw || w->key != key || w->qp_num != qp->pub.qp_num ||
		     load_acquire(&e->key) != key))
		return RPCR_RDEV_WC_LOC_QP_OP_ERR;
	__atomic_store_n(&e->key, 0, __ATOMIC_SEQ_CST);
	deadline = rte_rdtsc() + rte_get_tsc_hz();
	while (__atomic_load_n(&qp->half->busy, __ATOMIC_SEQ_CST) != 0) {
		if (unlikely(rte_rdtsc() > deadline)) {
			/* A peer stuck in an operation for a second: its connection goes. */
			shm_qp_set_error(qp);
			break;
		}
		rte_pause();
	}
	w->qp_num = 0;
	return RPCR_RDEV_WC_SUCCESS;
}

/* Perform one send-queue work request (inlined in both post_send specialisations). */
static __rte_always_inline uint32_t
execute(struct shm_qp *qp, const struct rpcr_rdev_send_wr *w, uint32_t *byte_len)
{
	struct shm_conn *c = qp->conn;
	struct shm_half *h;
	uint32_t need = w->opcode == RPCR_RDEV_WR_READ ? RPCR_RDEV_ACCESS_LOCAL_WRITE : 0;
	uint64_t total = 0;
	uint32_t status;
	uint8_t *p;
	uint16_t i;

	if (unlikely(c == NULL || load_acquire(&qp->half->state) != SHM_QPS_RTS))
		return RPCR_RDEV_WC_WR_FLUSH_ERR;
	if (unlikely(w->opcode >= RPCR_RDEV_WR_BIND_MW))
		return w->opcode == RPCR_RDEV_WR_BIND_MW ? mw_bind(qp, w->bind)
							 : mw_local_inv(qp, w->invalidate_rkey);
	for (i = 0; i < w->num_sge; i++) {
		status = local_check(qp->sd, qp->pub.pd->id, &w->sg_list[i], need);
		if (unlikely(status != RPCR_RDEV_WC_SUCCESS))
			return status;
		total += w->sg_list[i].length;
	}
	if (unlikely(total > SHM_MAX_MSG))
		return RPCR_RDEV_WC_LOC_LEN_ERR;
	h = c->peer_half;
	/* A peer QP that is not ready or failed never acknowledges: retries run out. */
	if (unlikely(load_acquire(&h->state) != SHM_QPS_RTS))
		return RPCR_RDEV_WC_RETRY_EXC_ERR;

	/*
	 * Every operation on the peer's memory runs with the peer half's @busy raised. We are the
	 * only initiator on this half (one QP, one thread): raising it is a sequentially consistent
	 * store, then the checks (state, keys) are loads. The owner makes the opposite moves (state
	 * or key first, then @busy) when it fails the QP or invalidates a key, so either we see its
	 * change, or it sees @busy and waits until we are done: nothing is read or written through
	 * a key after its invalidation returned, nor completed after a flush. Lowering it is a
	 * release: our copies are visible to whoever sees it lowered.
	 */
	__atomic_store_n(&h->busy, 1, __ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&h->state, __ATOMIC_SEQ_CST) != SHM_QPS_RTS)) {
		status = RPCR_RDEV_WC_RETRY_EXC_ERR;
		goto out;
	}
	switch (w->opcode) {
	case RPCR_RDEV_WR_WRITE:
		p = remote_ptr(c, w->rkey, w->remote_addr, total, RPCR_RDEV_ACCESS_REMOTE_WRITE);
		if (unlikely(p == NULL)) {
			status = RPCR_RDEV_WC_REM_ACCESS_ERR;
			break;
		}
		gather(p, w);
		status = RPCR_RDEV_WC_SUCCESS;
		break;
	case RPCR_RDEV_WR_READ:
		p = remote_ptr(c, w->rkey, w->remote_addr, total, RPCR_RDEV_ACCESS_REMOTE_READ);
		if (unlikely(p == NULL)) {
			status = RPCR_RDEV_WC_REM_ACCESS_ERR;
			break;
		}
		scatter(w, p);
		status = RPCR_RDEV_WC_SUCCESS;
		break;
	default:
		status = send_into(qp, qp->conn, w, total);
		break;
	}
out:
	__atomic_store_n(&h->busy, 0, __ATOMIC_RELEASE);
	/* (Only a Send completes anything at the peer: Writes and Reads wake nobody.) */
	if (unlikely(__atomic_load_n(&h->asleep, __ATOMIC_SEQ_CST) != 0) &&
	    w->opcode <= RPCR_RDEV_WR_SEND_INV)
		shm_wake_peer(c, h);
	*byte_len = (uint32_t)total;
	return status;
}

static const uint32_t wc_opcode[] = {
	[RPCR_RDEV_WR_SEND] = RPCR_RDEV_WC_SEND,
	[RPCR_RDEV_WR_SEND_INV] = RPCR_RDEV_WC_SEND,
	[RPCR_RDEV_WR_WRITE] = RPCR_RDEV_WC_RDMA_WRITE,
	[RPCR_RDEV_WR_READ] = RPCR_RDEV_WC_RDMA_READ,
	[RPCR_RDEV_WR_BIND_MW] = RPCR_RDEV_WC_BIND_MW,
	[RPCR_RDEV_WR_LOCAL_INV] = RPCR_RDEV_WC_LOCAL_INV,
};

/*
 * A fault breaks @qp's connection before the work request being posted runs: both halves go to
 * ERROR now (so this work request and everything after it flush, and the peer's operations stop),
 * and the control thread disconnects as rpcr_rdev_disconnect() does (DISCONNECT to the peer,
 * DISCONNECTED to both applications).
 */
static void __rte_noinline __rte_cold
fault_disconnect(struct shm_qp *qp)
{
	struct shm_dev *sd = qp->sd;

	shm_qp_set_error(qp);
	__atomic_store_n(&qp->conn->fault_disc, true, __ATOMIC_RELEASE);
	__atomic_store_n(&sd->dev->stats.fault_last_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&sd->dev->stats.fault_disconnects, 1, __ATOMIC_RELAXED);
	shm_ctrl_kick(sd);
}

static __rte_always_inline uint16_t
post_send(struct shm_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n, const bool faults)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_send_wr *w = &wr[i];
		struct shm_scqe e;
		uint32_t byte_len = 0;

		if (unlikely(qp->sq_used >= qp->pub.attr.max_send_wr)) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(w->opcode > RPCR_RDEV_WR_LOCAL_INV ||
			     w->num_sge > qp->pub.attr.max_send_sge ||
			     (w->num_sge != 0 && w->sg_list == NULL))) {
			rte_errno = EINVAL;
			break;
		}
		if (faults && qp->conn != NULL &&
		    __atomic_load_n(&qp->sd->fault.armed, __ATOMIC_RELAXED) &&
		    load_acquire(&qp->half->state) == SHM_QPS_RTS &&
		    shm_fault_hit(&qp->frng, qp->sd->fault.disconnect))
			fault_disconnect(qp);
		qp->sq_used++;
		e.status = (uint16_t)execute(qp, w, &byte_len);
		if (likely(e.status == RPCR_RDEV_WC_SUCCESS) &&
		    !(w->flags & RPCR_RDEV_WR_F_SIGNALED) && !qp->pub.attr.sq_sig_all) {
			/* Its slot is freed by the next completion this QP reports. */
			qp->unsignaled++;
			continue;
		}
		if (e.status == RPCR_RDEV_WC_LOC_PROT_ERR || e.status == RPCR_RDEV_WC_LOC_LEN_ERR ||
		    e.status == RPCR_RDEV_WC_MW_BIND_ERR ||
		    e.status == RPCR_RDEV_WC_LOC_QP_OP_ERR) {
			/* A local error fails this QP only: nothing reached the peer. */
			__atomic_store_n(&qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
			shm_db_ring_own(qp);
		} else if (e.status != RPCR_RDEV_WC_SUCCESS &&
			   e.status != RPCR_RDEV_WC_WR_FLUSH_ERR)
			shm_qp_set_error(qp);
		e.wr_id = w->wr_id;
		e.qp = qp;
		e.opcode = (uint16_t)wc_opcode[w->opcode];
		e.byte_len = byte_len;
		e.slots = qp->unsignaled + 1;
		e.t = faults ? shm_fault_now() : 0;
		qp->unsignaled = 0;
		/* Cannot fail: the CQ is at least as deep as its QPs' queues (shm_qp_create). */
		if (unlikely(rte_ring_sp_enqueue_elem(qp->scq->scq, &e, sizeof(e)) != 0))
			SHM_LOG(ERR, "send completion queue overrun");
	}
	return i;
}

uint16_t
shm_post_send(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	return post_send((struct shm_qp *)pqp, wr, n, false);
}

uint16_t
shm_post_send_fault(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	return post_send((struct shm_qp *)pqp, wr, n, true);
}

/*
 * The scatter list of receive @w in a receive slot (@sge, and @status: 0, or
 * RPCR_RDEV_WC_LOC_PROT_ERR when a key of it fails @pd's check, that entry left empty): the
 * bytes it can hold (UINT32_MAX at most).
 */
static __rte_always_inline uint32_t
recv_sges(const struct shm_dev *sd, uint32_t pd, const struct rpcr_rdev_recv_wr *w,
	  struct shm_sge *sge, uint32_t *status)
{
	uint64_t cap = 0;
	uint16_t k;

	*status = 0;
	for (k = 0; k < w->num_sge; k++) {
		const struct rpcr_rdev_sge *sg = &w->sg_list[k];
		const struct shm_mine *m = &sd->mine[sg->lkey & sd->key_mask];

		/* A bad key fails the receive when a Send reaches it, as on a NIC. */
		if (local_check(sd, pd, sg, RPCR_RDEV_ACCESS_LOCAL_WRITE) != 0) {
			*status = RPCR_RDEV_WC_LOC_PROT_ERR;
			sge[k] = (struct shm_sge){0};
			continue;
		}
		sge[k].region = m->region;
		sge[k].len = sg->length;
		sge[k].off = m->region_off + (sg->addr - m->va);
		cap += sg->length;
	}
	return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

static __rte_always_inline uint16_t
post_recv(struct shm_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n, const bool faults)
{
	struct shm_dev *sd = qp->sd;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		struct shm_rdesc *x;

		/*
		 * Outstanding receives (posted, completion not yet polled) never exceed the queue:
		 * the slot written now was taken, and the completion queue cannot overflow.
		 */
		if (unlikely(qp->rq_prod - qp->rq_done >= qp->pub.attr.max_recv_wr)) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(w->num_sge > qp->pub.attr.max_recv_sge ||
			     (w->num_sge != 0 && w->sg_list == NULL) || qp->srq != NULL)) {
			rte_errno = EINVAL;
			break;
		}
		x = shm_slot(qp->rq_ring, qp->mask, qp->rq_slot, qp->rq_prod);
		x->wr_id = w->wr_id;
		x->nsge = w->num_sge;
		qp->rq_ent[qp->rq_prod & qp->mask] = (struct shm_rq_ent){
			.wr_id = w->wr_id,
			.len = recv_sges(sd, qp->pub.pd->id, w, x->sge, &x->status),
		};
		qp->rq_prod++;
		if (faults && __atomic_load_n(&sd->fault.armed, __ATOMIC_RELAXED) &&
		    shm_fault_hit(&qp->frng, sd->fault.recv)) {
			/*
			 * Withheld: posted here (it completes, flushed, with the QP), never shown
			 * to the peer, whose Send to it finds no receive (RNR) and fails the
			 * connection, as RC with rnr_retry 0 does.
			 */
			__atomic_fetch_add(&sd->dev->stats.fault_recv, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_store_n(&x->stamp, qp->rq_prod, __ATOMIC_RELEASE);
	}
	return i;
}

uint16_t
shm_post_recv(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	return post_recv((struct shm_qp *)pqp, wr, n, false);
}

uint16_t
shm_post_recv_fault(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	return post_recv((struct shm_qp *)pqp, wr, n, true);
}

/* ---- shared receive queues (the protocol is in shm_layout.h) ---- */

/* The next slot still holds a receive whose completion was not polled: its sequence number is
 * marked taken (peers pass it) and the post goes on with the next one (its taker noted first:
 * the word no longer says). */
static __rte_noinline void
srq_skip(struct shm_srq *srq)
{
	uint32_t seq = srq->prod, idx = seq & srq->mask;
	struct shm_srq_desc *x = shm_slot(srq->ring, srq->mask, srq->slot, seq);

	if (srq->takers[idx] == 0)
		srq->takers[idx] = shm_srq_taker(srq, idx);
	__atomic_store_n(&x->word, ((uint64_t)SHM_SRQ_SKIP << 32) | (uint32_t)(seq + 1),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&srq->prod, seq + 1, __ATOMIC_RELAXED);
}

uint16_t
shm_post_srq_recv(struct rpcr_rdev_srq *psrq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct shm_srq *srq = (struct shm_srq *)psrq;
	struct shm_dev *sd = srq->sd;
	uint32_t pd = psrq->pd->id;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_recv_wr *w = &wr[i];
		uint32_t seq, idx;
		struct shm_srq_desc *x;

		if (unlikely(srq->outstanding >= psrq->max_wr)) {
			rte_errno = EAGAIN;
			break;
		}
		if (unlikely(w->num_sge > psrq->max_sge ||
			     (w->num_sge != 0 && w->sg_list == NULL))) {
			rte_errno = EINVAL;
			break;
		}
		/* (At most max_wr slots of twice as many are held: this ends.) */
		while (unlikely(srq->held[srq->prod & srq->mask]))
			srq_skip(srq);
		seq = srq->prod;
		idx = seq & srq->mask;
		x = shm_slot(srq->ring, srq->mask, srq->slot, seq);
		x->nsge = w->num_sge;
		srq->lens[idx] = recv_sges(sd, pd, w, x->sge, &x->status);
		srq->wr_ids[idx] = w->wr_id;
		srq->seqs[idx] = seq;
		srq->held[idx] = 1;
		srq->takers[idx] = 0;
		srq->outstanding++;
		/* Not complete, whatever the slot's last completion was: @done must not say seq + 1
		 * until the peer that takes seq writes it (a zeroed file says 0 = 0xffffffff + 1,
		 * and a slot last completed 2^32 receives ago says seq + 1 too). */
		x->done = seq;
		__atomic_store_n(&srq->prod, seq + 1, __ATOMIC_RELAXED); /* (srq_arm reads it) */
		/* Untaken, for seq: the fields above first. */
		__atomic_store_n(&x->word, (uint64_t)(seq + 1), __ATOMIC_RELEASE);
	}
	return i;
}

/* Receives left for peers to take. */
static inline uint32_t
srq_left(const struct shm_srq *srq)
{
	uint32_t left = __atomic_load_n(&srq->prod, __ATOMIC_RELAXED) -
			__atomic_load_n(&srq->hdr->cons, __ATOMIC_ACQUIRE);

	/* (@cons is the peers' to write: a value past what was posted means none left.) */
	return left > srq->mask + 1 ? 0 : left;
}

/* The limit event: fewer than the armed limit left. The control thread queues it. */
static __rte_noinline __rte_cold void
srq_limit_check(struct shm_srq *srq)
{
	uint32_t lim = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);

	if (lim != 0 && srq_left(srq) < lim &&
	    __atomic_compare_exchange_n(&srq->limit, &lim, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED)) {
		__atomic_store_n(&srq->limit_hit, true, __ATOMIC_RELEASE);
		shm_ctrl_kick(srq->sd);
	}
}

int
shm_srq_arm(struct rpcr_rdev_srq *psrq, uint32_t limit)
{
	struct shm_srq *srq = (struct shm_srq *)psrq;

	__atomic_store_n(&srq->limit, limit, __ATOMIC_RELEASE);
	/* Below it already: reported at once. */
	if (limit != 0)
		srq_limit_check(srq);
	return 0;
}

/* Release SRQ slot @idx (its completion was polled, or it is flushed). */
static inline void
srq_release(struct shm_srq *srq, uint32_t idx)
{
	srq->held[idx] = 0;
	srq->takers[idx] = 0;
	srq->outstanding--;
}

/* Whether the owner's private record says that @qp's peer took receive @seq of its SRQ. */
static inline bool
srq_taken_by(const struct shm_srq *srq, const struct shm_qp *qp, uint32_t seq)
{
	uint32_t idx = seq & srq->mask;

	return srq->held[idx] && srq->seqs[idx] == seq && shm_srq_taker(srq, idx) == qp->srq_tag;
}

static uint16_t srq_slot_end(struct shm_srq *srq, const struct shm_dev *sd, uint32_t seq,
			     uint32_t tag, struct rpcr_rdev_wc *wc);

/*
 * QP in error, its peer out of any Send: complete, as flushed on @qp, the SRQ's receives its peer
 * took and never completed (a peer that died in the middle). @qp->srq_flushed once all are.
 * Completions in the SRQ's slots: what the peer completed is reported first, as the poll of the
 * slots would, and the receives go in the order taken (the waits, then from the poll's cursor).
 */
static uint16_t
flush_srq(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct shm_srq *srq = qp->srq;
	uint16_t got = 0;
	uint32_t i, seq;

	if (qp->srq_slot_cq) {
		for (i = 0; i < srq->nwaits && got < n; i++)
			if (srq->waits[i].tag == qp->srq_tag &&
			    srq_taken_by(srq, qp, srq->waits[i].seq))
				got += srq_slot_end(srq, qp->sd, srq->waits[i].seq, qp->srq_tag,
						    &wc[got]);
		for (seq = srq->slot_next; seq != srq->prod && got < n; seq++)
			if (srq_taken_by(srq, qp, seq))
				got += srq_slot_end(srq, qp->sd, seq, qp->srq_tag, &wc[got]);
		if (got == n)
			return got;
	}
	for (i = 0; i <= srq->mask; i++) {
		if (!srq->held[i] || !srq_taken_by(srq, qp, srq->seqs[i]))
			continue;
		if (got == n)
			return got;
		wc[got++] = (struct rpcr_rdev_wc){
			.wr_id = srq->wr_ids[i],
			.qp = &qp->pub,
			.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
			.opcode = RPCR_RDEV_WC_RECV,
		};
		srq_release(srq, i);
	}
	qp->srq_flushed = true;
	return got;
}

/* Complete, as flushed, every receive posted and not completed (QP in the error state). */
static uint16_t
flush_recv(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t got = 0;

	while (got < n && qp->rq_done != qp->rq_prod) {
		wc[got++] = (struct rpcr_rdev_wc){
			.wr_id = qp->rq_ent[qp->rq_done & qp->mask].wr_id,
			.qp = &qp->pub,
			.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
			.opcode = RPCR_RDEV_WC_RECV,
		};
		qp->rq_done++;
	}
	return got;
}

/*
 * The status a peer may report for a receive: success, or what its Send found wrong with our
 * descriptor. Anything else is the peer misbehaving.
 */
static inline bool
rcqe_status_ok(uint32_t st)
{
	return st == RPCR_RDEV_WC_SUCCESS || st == RPCR_RDEV_WC_LOC_LEN_ERR ||
	       st == RPCR_RDEV_WC_LOC_PROT_ERR || st == RPCR_RDEV_WC_LOC_QP_OP_ERR;
}

/*
 * The completion of a receive of @qp's queue or of its SRQ (posted with @wr_id, @cap bytes it
 * can hold) from what the peer wrote: @status, @len, @flags
 * (RPCR_RDEV_WC_F_WITH_INV or 0) and @inv (the key, or 0), each checked. An invalidation is
 * reported only if the key is one of ours (of device @sd) and really is invalid now; a status or
 * length the receive cannot have fails the QP.
 */
static __rte_always_inline void
rcqe_to_wc(struct shm_qp *qp, const struct shm_dev *sd, struct rpcr_rdev_wc *wc, uint64_t wr_id,
	   uint32_t cap, uint32_t status, uint32_t len, uint32_t flags, uint32_t inv)
{
	if (flags != 0) {
		uint32_t slot = inv & sd->key_mask;

		if (inv == 0 || sd->mine[slot].key != inv ||
		    load_acquire(&sd->keys->keys[slot].key) != 0) {
			/* Not a key of ours that died: report no invalidation. */
			flags = 0;
			inv = 0;
		}
	}
	if (unlikely(!rcqe_status_ok(status) || len > cap)) {
		SHM_LOG(ERR, "QP %u: the peer reported an impossible completion", qp->pub.qp_num);
		status = RPCR_RDEV_WC_GENERAL_ERR;
		len = 0;
		shm_qp_set_error(qp);
	}
	*wc = (struct rpcr_rdev_wc){
		.wr_id = wr_id,
		.qp = &qp->pub,
		.status = status,
		.opcode = RPCR_RDEV_WC_RECV,
		.byte_len = status == RPCR_RDEV_WC_SUCCESS ? len : 0,
		.flags = flags,
		.invalidated_rkey = inv,
	};
}

/*
 * Take, in order, the completions the peer wrote. Only the stamp, status, length and
 * invalidation come from shared memory, and each is checked: the wr_id is ours (we kept it), a
 * length may not exceed what the receive could hold, an invalidation is reported only if the key
 * is one of ours and really is invalid now. A completion that fails these checks fails the QP.
 */
/* fault_delay_us: note when each receive completion the peer wrote is first seen. */
static void
fault_rx_seen(struct shm_qp *qp, uint32_t now)
{
	if ((int32_t)(qp->fseen_n - qp->rq_done) < 0)
		qp->fseen_n = qp->rq_done; /* (flushed meanwhile) */
	while (qp->fseen_n != qp->rq_prod) {
		const struct shm_rcqe *e =
			shm_slot(qp->rcq_ring, qp->mask, SHM_SLOT_ALIGN, qp->fseen_n);

		if (__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) != qp->fseen_n + 1)
			break;
		qp->rq_ent[qp->fseen_n & qp->mask].seen = now;
		qp->fseen_n++;
	}
}

static __rte_always_inline uint16_t
take_rcqes(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n, const bool delay)
{
	const struct shm_dev *sd = qp->sd;
	uint16_t got = 0;
	uint32_t now = 0;

	if (delay) {
		now = shm_fault_now();
		fault_rx_seen(qp, now);
	}
	while (got < n && qp->rq_done != qp->rq_prod) {
		const struct shm_rcqe *e =
			shm_slot(qp->rcq_ring, qp->mask, SHM_SLOT_ALIGN, qp->rq_done);
		uint32_t idx = qp->rq_done & qp->mask;
		uint32_t status, len, flags, inv;

		if (__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) != qp->rq_done + 1)
			break;
		/* (Only what fault_rx_seen() saw: one the peer wrote since has no time yet.) */
		if (delay && (qp->rq_done == qp->fseen_n ||
			      (int32_t)(now - qp->rq_ent[idx].seen) < (int32_t)sd->fault.delay))
			break;
		status = e->status;
		len = e->byte_len;
		flags = e->flags & RPCR_RDEV_WC_F_WITH_INV;
		inv = flags != 0 ? e->inv_key : 0;
		rcqe_to_wc(qp, sd, &wc[got++], qp->rq_ent[idx].wr_id, qp->rq_ent[idx].len, status,
			   len, flags, inv);
		qp->rq_done++;
	}
	if (delay && got != 0)
		__atomic_fetch_add(&sd->dev->stats.fault_delayed, got, __ATOMIC_RELAXED);
	return got;
}

/*
 * The completions the peer wrote for receives of our SRQ, in the order written: each names the
 * SRQ's sequence number, accepted only if our private record says this QP's peer took that
 * receive and it is not completed yet (what it cannot be mapped to is dropped, and fails the
 * QP). Each slot taken is emptied (stamp 0) for the peer's next completion.
 */
static uint16_t
take_srq_rcqes(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct shm_srq *srq = qp->srq;
	const struct shm_dev *sd = qp->sd;
	uint16_t got = 0;

	while (got < n) {
		struct shm_rcqe *e = shm_slot(qp->rcq_ring, qp->mask, SHM_SLOT_ALIGN, qp->rq_done);
		uint32_t seq, idx, status, len, flags, inv;

		if (__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) != qp->rq_done + 1)
			break;
		seq = (uint32_t)e->wr_id;
		status = e->status;
		len = e->byte_len;
		flags = e->flags & RPCR_RDEV_WC_F_WITH_INV;
		inv = flags != 0 ? e->inv_key : 0;
		/* Fields read: the slot is the peer's again. */
		__atomic_store_n(&e->stamp, 0, __ATOMIC_RELEASE);
		qp->rq_done++;
		idx = seq & srq->mask;
		if (unlikely(!srq_taken_by(srq, qp, seq))) {
			SHM_LOG(ERR, "QP %u: the peer completed a shared receive it did not take",
				qp->pub.qp_num);
			shm_qp_set_error(qp);
			continue;
		}
		rcqe_to_wc(qp, sd, &wc[got++], srq->wr_ids[idx], srq->lens[idx], status, len, flags,
			   inv);
		srq_release(srq, idx);
	}
	if (got != 0 && unlikely(__atomic_load_n(&srq->limit, __ATOMIC_RELAXED) != 0))
		srq_limit_check(srq);
	return got;
}

/*
 * The completion of receive @seq of @srq, taken with @tag (SHM_SRQ_SLOT_CQ): what the taker
 * wrote in the slot if it wrote @done (@done: it did, as the caller saw), else a flush (its QP
 * failed). A tag no QP of ours has now (a peer wrote it, or took the receive after its QP was
 * destroyed) reports the receive with qp NULL, flushed, for its buffer to come back. @return 1:
 * one completion, the receive released.
 */
static __rte_always_inline uint16_t
srq_slot_wc(struct shm_srq *srq, const struct shm_dev *sd, uint32_t seq, uint32_t tag,
	    struct rpcr_rdev_wc *wc, const bool done)
{
	uint32_t idx = seq & srq->mask, flags;
	const struct shm_srq_desc *d = shm_srq_desc(srq, idx);
	struct shm_qp *qp = srq->slot_qps[tag & SHM_SRQ_TAG_IDX_MASK];

	if (unlikely(qp == NULL || qp->srq_tag != tag)) {
		*wc = (struct rpcr_rdev_wc){
			.wr_id = srq->wr_ids[idx],
			.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
			.opcode = RPCR_RDEV_WC_RECV,
		};
	} else if (done || __atomic_load_n(&d->done, __ATOMIC_ACQUIRE) == seq + 1) {
		flags = d->flags & RPCR_RDEV_WC_F_WITH_INV;
		rcqe_to_wc(qp, sd, wc, srq->wr_ids[idx], srq->lens[idx], d->cstatus, d->byte_len,
			   flags, flags != 0 ? d->inv_key : 0);
	} else {
		*wc = (struct rpcr_rdev_wc){
			.wr_id = srq->wr_ids[idx],
			.qp = &qp->pub,
			.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
			.opcode = RPCR_RDEV_WC_RECV,
		};
	}
	srq_release(srq, idx);
	return 1;
}

/* The same for a receive whose taker's QP failed (flush_srq()). */
static uint16_t
srq_slot_end(struct shm_srq *srq, const struct shm_dev *sd, uint32_t seq, uint32_t tag,
	     struct rpcr_rdev_wc *wc)
{
	return srq_slot_wc(srq, sd, seq, tag, wc, false);
}

/* Whether a receive taken with @tag waits among the first @n waits of @srq. */
static inline bool
srq_tag_waits(const struct shm_srq *srq, uint32_t n, uint32_t tag)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (srq->waits[i].tag == tag)
			return true;
	return false;
}

/*
 * The slots' poll stops at the first receive not taken: honest peers take in order and move
 * @cons on only past a receive taken (shm_layout.h). One poll in SHM_DB_FULL that stops there
 * asks whether @cons is past it all the same (a peer that moved it on without taking it, or
 * wrote it at will): then that receive, still untaken once @cons is seen past it, is passed,
 * and so is every untaken one before @cons (@cons_seen), so that what peers took after them is
 * read. They stay posted and held (a peer may take one yet, unread: the SRQ's peers share its
 * fate). Once in so many polls: the usual stop, at the end of what was taken, reads no line of
 * the peers'.
 */
static __rte_noinline __rte_cold bool
srq_passed_untaken(struct shm_srq *srq, uint32_t seq, uint32_t *cons_seen)
{
	uint32_t cons = __atomic_load_n(&srq->hdr->cons, __ATOMIC_ACQUIRE);
	uint64_t w;

	if ((int32_t)(cons - (seq + 1)) < 0 || (int32_t)(cons - srq->prod) > 0)
		return false; /* (not past it; or past what was posted: nothing to read there) */
	/* (Read again after @cons: a peer that took it moved @cons on after its swap.) */
	w = __atomic_load_n(&shm_srq_desc(srq, seq & srq->mask)->word, __ATOMIC_ACQUIRE);
	if ((uint32_t)w != seq + 1 || (w >> 32) != 0)
		return false;
	SHM_LOG(WARNING, "SRQ: receives %u to %u passed by a peer without being taken: left posted",
		seq, cons - 1);
	*cons_seen = cons;
	return true;
}

/*
 * The completions our QPs' peers wrote in @srq's slots (SHM_SRQ_SLOT_CQ), the receives in the
 * order taken, as a NIC's CQ gives them: first those that waited at an earlier poll (taken, not
 * complete then), then from the cursor on, up to the first receive nobody took (or past it,
 * once @cons is seen past it: srq_passed_untaken()). One taken and not complete yet (its peer
 * in the middle of the Send) waits and the poll goes past it, but a later one taken through the
 * same QP waits behind it: a QP's receives complete in order. Receives taken through QPs that
 * complete in their own slots are passed.
 */
static __rte_noinline uint16_t
poll_srq_slots(struct shm_srq *srq, const struct shm_dev *sd, struct rpcr_rdev_wc *wc, uint16_t n)
{
	const uint32_t mask = srq->mask, prod = srq->prod;
	const uint8_t *held = srq->held;
	const uint32_t *seqs = srq->seqs;
	uint32_t i, k, seq, idx, tag, cons_seen = srq->slot_next;
	uint16_t got = 0;

	for (i = 0, k = 0; i < srq->nwaits; i++) {
		seq = srq->waits[i].seq;
		tag = srq->waits[i].tag;
		idx = seq & mask;
		if (!held[idx] || seqs[idx] != seq)
			continue; /* (flushed meanwhile) */
		if (got == n ||
		    __atomic_load_n(&shm_srq_desc(srq, idx)->done, __ATOMIC_ACQUIRE) != seq + 1 ||
		    srq_tag_waits(srq, k, tag)) {
			srq->waits[k++] = srq->waits[i];
			continue;
		}
		got += srq_slot_wc(srq, sd, seq, tag, &wc[got], true);
	}
	srq->nwaits = k;
	for (seq = srq->slot_next; got < n && seq != prod; seq++) {
		idx = seq & mask;
		if (!held[idx] || seqs[idx] != seq)
			continue; /* (a sequence number a post skipped, or flushed) */
		/* Who took it: from the owner's note once a post skipped it, else from the word,
		 * read once (a peer may be taking it now). */
		tag = srq->takers[idx];
		if (tag == 0) {
			uint64_t w =
				__atomic_load_n(&shm_srq_desc(srq, idx)->word, __ATOMIC_ACQUIRE);

			if ((uint32_t)w != seq + 1)
				continue; /* (a word a peer spoiled says nothing: passed) */
			tag = (uint32_t)(w >> 32);
			if (tag == 0) {
				/* Not taken yet: nor, in order, are those after it (unless a peer
				 * moved @cons past it: srq_passed_untaken()). */
				if ((int32_t)(cons_seen - (seq + 1)) >= 0)
					continue;
				if (likely(++srq->untaken_stops % SHM_DB_FULL != 0) ||
				    !srq_passed_untaken(srq, seq, &cons_seen))
					break;
				continue;
			}
		}
		if (!(tag & SHM_SRQ_TAG_SLOT) || tag == SHM_SRQ_SKIP)
			continue;
		if (__atomic_load_n(&shm_srq_desc(srq, idx)->done, __ATOMIC_ACQUIRE) != seq + 1 ||
		    srq_tag_waits(srq, srq->nwaits, tag)) {
			if (srq->nwaits == SHM_SRQ_WAITS)
				break;
			srq->waits[srq->nwaits].seq = seq;
			srq->waits[srq->nwaits++].tag = tag;
			continue;
		}
		got += srq_slot_wc(srq, sd, seq, tag, &wc[got], true);
	}
	srq->slot_next = seq;
	if (got != 0 && unlikely(__atomic_load_n(&srq->limit, __ATOMIC_RELAXED) != 0))
		srq_limit_check(srq);
	return got;
}

static __rte_noinline uint16_t
poll_srq_recv(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n)
{
	/* (Completions in the SRQ's slots: poll_srq_slots(); the QP is visited when it fails.) */
	uint16_t got = qp->srq_slot_cq ? 0 : take_srq_rcqes(qp, wc, n);

	/* (srq_flushed, in a line of its own, looked at only in error) */
	if (got == n || __atomic_load_n(&qp->half->state, __ATOMIC_SEQ_CST) != SHM_QPS_ERROR ||
	    qp->srq_flushed)
		return got;
	if (__atomic_load_n(&qp->half->busy, __ATOMIC_SEQ_CST) != 0 &&
	    !(qp->conn != NULL && __atomic_load_n(&qp->conn->peer_dead, __ATOMIC_ACQUIRE)))
		return got;
	if (!qp->srq_slot_cq)
		got += take_srq_rcqes(qp, wc + got, (uint16_t)(n - got));
	return got + flush_srq(qp, wc + got, (uint16_t)(n - got));
}

static __rte_always_inline uint16_t
poll_recv(struct shm_qp *qp, struct rpcr_rdev_wc *wc, uint16_t n, const bool delay)
{
	uint16_t got;

	if (unlikely(qp->srq != NULL))
		return poll_srq_recv(qp, wc, n);
	got = take_rcqes(qp, wc, n, delay);
	if (got == n || qp->rq_done == qp->rq_prod ||
	    __atomic_load_n(&qp->half->state, __ATOMIC_SEQ_CST) != SHM_QPS_ERROR)
		return got;
	/*
	 * In error: flush once no Send of the peer can still complete a receive. If one is running
	 * (a live peer in the middle of an operation), come back at the next poll rather than wait.
	 */
	if (__atomic_load_n(&qp->half->busy, __ATOMIC_SEQ_CST) != 0 &&
	    !(qp->conn != NULL && __atomic_load_n(&qp->conn->peer_dead, __ATOMIC_ACQUIRE)))
		return got;
	/* (Completions a fault delay still holds back are reported now, before the flushes.) */
	got += take_rcqes(qp, wc + got, (uint16_t)(n - got), false);
	return got + flush_recv(qp, wc + got, (uint16_t)(n - got));
}

/*
 * The receive completions of the QPs whose doorbells rang: each word taken at once (exchange),
 * its QPs visited in bit order from a cursor; a QP that may have more when the burst is full,
 * and the bits not visited yet, stay pending for the next poll.
 *
 * Fair as a NIC's completion queue is: the poll that fills its burst leaves the cursor just
 * after the last QP it visited, and the next poll starts there, so every QP rung is visited
 * within (rung QPs / burst) + 1 polls whatever the others do. (Starting each poll at bit 0 of a
 * word, as this did first, starved the QPs on a word's high bits while the low ones always had
 * work: at 1000 connections with one call each, 400 of them waited for the rare full visit.)
 */
static __rte_noinline uint16_t
poll_rung(struct shm_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	const uint32_t nw = cq->db_nwords;
	uint32_t k, w0, b0;
	uint16_t got = 0;

	if (nw == 0)
		return 0;
	w0 = (cq->db_cursor / 64) % nw;
	b0 = cq->db_cursor % 64;
	/* Word w0 from bit b0, every other word, then word w0 below bit b0 (k == nw). */
	for (k = 0; k <= nw && got < n; k++) {
		uint32_t w = (w0 + k) % nw;
		uint64_t bits = cq->db_pend[w], here;

		if (k < nw && __atomic_load_n(&cq->db[w], __ATOMIC_RELAXED) != 0)
			bits |= __atomic_exchange_n(&cq->db[w], 0, __ATOMIC_ACQUIRE);
		here = k == 0 ? bits & (~0ull << b0) : k == nw ? bits & ((1ull << b0) - 1) : bits;
		cq->db_pend[w] = bits & ~here; /* (word w0's low bits: at k == nw) */
		while (here != 0) {
			uint32_t b = (uint32_t)__builtin_ctzll(here);
			struct shm_qp *qp = cq->by_bit[w * 64 + b];

			here &= here - 1;
			if (qp == NULL)
				continue;
			if (got == n) {
				cq->db_pend[w] |= 1ull << b;
				continue;
			}
			got += poll_recv(qp, wc + got, (uint16_t)(n - got), false);
			if (got == n) {
				/* It may have more: pending, and the next poll starts after it. */
				cq->db_pend[w] |= 1ull << b;
				cq->db_cursor = w * 64 + b + 1;
			} else if (__atomic_load_n(&qp->half->state, __ATOMIC_RELAXED) ==
					   SHM_QPS_ERROR &&
				   (qp->srq != NULL ? !qp->srq_flushed
						    : qp->rq_done != qp->rq_prod)) {
				/* Failed, its receives not flushed yet (its peer in the middle of a
				 * Send): visited again. */
				cq->db_pend[w] |= 1ull << b;
			}
		}
	}
	return got;
}

/* The receive completions of the CQ's QPs, after the @got already in @wc (@n at most): those
 * whose doorbells rang (and those a full burst left), or every one in turn. @return got. */
static __rte_always_inline uint16_t
poll_qps(struct shm_cq *cq, struct rpcr_rdev_wc *wc, uint16_t got, uint16_t n, const bool delay)
{
	uint32_t q;

	if (cq->nrecv > SHM_DB_MIN_QPS && cq->db != NULL && (++cq->npolls % SHM_DB_FULL) != 0 &&
	    !delay)
		return got + poll_rung(cq, wc + got, (uint16_t)(n - got));
	/* (Each QP first in turn: a QP waits at most nrecv polls, fair enough for up to
	 * SHM_DB_MIN_QPS; the doorbells are what keeps many QPs fair, poll_rung().) */
	for (q = 0; q < cq->nrecv && got < n; q++) {
		struct shm_qp *qp = cq->recv_qps[(cq->rr + q) % cq->nrecv];

		got += poll_recv(qp, wc + got, n - got, delay);
	}
	cq->rr++;
	return got;
}

/* The completions in the slots of the SRQs this CQ reads. */
static inline uint16_t
poll_srqs(struct shm_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint32_t i, j, k = cq->nsrqs;
	uint16_t got = 0;

	if (n == 0)
		return 0; /* (the QPs filled the burst: the turn stays) */
	if (likely(k == 1))
		return poll_srq_slots(cq->srqs[0], cq->sd, wc, n);
	/* (One SRQ that always has a burst ready must not keep the others' completions, and with
	 * them their receives, from being reported: each is first in turn.) */
	j = cq->srq_rr < k ? cq->srq_rr : 0;
	cq->srq_rr = j + 1 < k ? j + 1 : 0;
	for (i = 0; i < k && got < n; i++, j = j + 1 < k ? j + 1 : 0)
		got += poll_srq_slots(cq->srqs[j], cq->sd, wc + got, (uint16_t)(n - got));
	return got;
}

/* The SRQs' slots and the QPs, each first in turn (no faults configured: no delays). */
static __rte_noinline uint16_t
poll_srqs_qps(struct shm_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	uint16_t got;

	cq->srqs_first = !cq->srqs_first;
	if (cq->srqs_first)
		return poll_qps(cq, wc, poll_srqs(cq, wc, n), n, false);
	got = poll_qps(cq, wc, 0, n, false);
	return got + poll_srqs(cq, wc + got, (uint16_t)(n - got));
}

static __rte_always_inline uint16_t
poll_cq(struct shm_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n, const bool delay)
{
	struct shm_scqe s[SCQ_BURST];
	uint16_t got = 0, k, j;
	uint32_t now = 0;

	if (delay)
		now = shm_fault_now();
	if (unlikely(cq->norphans != 0)) {
		/* Receives of an SRQ whose QP was destroyed (shm_ctrl.c's srq_detach()). */
		while (got < n && cq->norphans != 0)
			wc[got++] = (struct rpcr_rdev_wc){
				.wr_id = cq->orphans[--cq->norphans],
				.status = RPCR_RDEV_WC_WR_FLUSH_ERR,
				.opcode = RPCR_RDEV_WC_RECV,
			};
	}
	while (got < n) {
		bool more = true;

		if (delay) {
			/* Take only completions old enough (they are in the order produced). */
			k = (uint16_t)rte_ring_dequeue_burst_elem_start(
				cq->scq, s, sizeof(s[0]), RTE_MIN((uint16_t)(n - got), SCQ_BURST),
				NULL);
			for (j = 0; j < k; j++)
				if ((int32_t)(now - s[j].t) < (int32_t)cq->sd->fault.delay)
					break;
			rte_ring_dequeue_elem_finish(cq->scq, j);
			if (j != 0)
				__atomic_fetch_add(&cq->sd->dev->stats.fault_delayed, j,
						   __ATOMIC_RELAXED);
			more = j == k;
			k = j;
		} else {
			k = (uint16_t)rte_ring_sc_dequeue_burst_elem(
				cq->scq, s, sizeof(s[0]), RTE_MIN((uint16_t)(n - got), SCQ_BURST),
				NULL);
		}
		if (k == 0)
			break;
		for (j = 0; j < k; j++) {
			wc[got] = (struct rpcr_rdev_wc){
				.wr_id = s[j].wr_id,
				.qp = &s[j].qp->pub,
				.status = s[j].status,
				.opcode = s[j].opcode,
				.byte_len = s[j].byte_len,
			};
			s[j].qp->sq_used -= s[j].slots;
			got++;
		}
		if (!more)
			break;
	}
	if (unlikely(cq->nsrqs != 0))
		return got + poll_srqs_qps(cq, wc + got, (uint16_t)(n - got));
	return poll_qps(cq, wc, got, n, delay);
}

uint16_t
shm_poll_cq(struct rpcr_rdev_cq *pcq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	return poll_cq((struct shm_cq *)pcq, wc, n, false);
}

uint16_t
shm_poll_cq_fault(struct rpcr_rdev_cq *pcq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct shm_cq *cq = (struct shm_cq *)pcq;

	if (cq->sd->fault.delay == 0)
		return poll_cq(cq, wc, n, false);
	return poll_cq(cq, wc, n, true);
}
