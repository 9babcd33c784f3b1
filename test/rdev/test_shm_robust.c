/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * shm driver robustness, white box: one process connects the device to itself, and the test
 * plays a buggy or hostile peer by writing where the peer could write (its side of the shared
 * queues, socket messages, files it passes). Each case is a failure found in review: the driver
 * must not crash, hang, leak or believe what it cannot check.
 */

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_mem.h>

#include "eal_test.h"
#include "rpcr_test.h"
#include "shm_internal.h"

static struct rpcr_rdev *dev;
static struct rpcr_rdev_pd *pd;
static struct rpcr_rdev_cq *cq;
static struct rpcr_mem_arena *arena;
static char addr[64];

static struct rpcr_rdev_qp_attr
attr(void)
{
	return (struct rpcr_rdev_qp_attr){.send_cq = cq,
					  .recv_cq = cq,
					  .max_send_wr = 8,
					  .max_recv_wr = 8,
					  .max_send_sge = 2,
					  .max_recv_sge = 2};
}

static int
next_event(struct rpcr_rdev_event *ev)
{
	return rpcr_rdev_event_wait(dev, ev, 3000) == 1 ? (int)ev->type : -1;
}

/* Connect a client QP (made with @cat) to a server QP (@sat) on the same device. */
static int
pair_attr(struct rpcr_rdev_qp **cli, struct rpcr_rdev_qp **srv, const struct rpcr_rdev_qp_attr *cat,
	  const struct rpcr_rdev_qp_attr *sat)
{
	struct rpcr_rdev_event ev;
	int got = 0;

	*cli = rpcr_rdev_qp_create(pd, cat);
	*srv = rpcr_rdev_qp_create(pd, sat);
	if (*cli == NULL || *srv == NULL || rpcr_rdev_connect(*cli, addr, NULL, 0) != 0)
		return -1;
	if (next_event(&ev) != RPCR_RDEV_EVENT_CONNECT_REQUEST ||
	    rpcr_rdev_accept(*srv, ev.req, NULL, 0) != 0)
		return -1;
	while (got < 2 && next_event(&ev) == RPCR_RDEV_EVENT_ESTABLISHED)
		got++;
	return got == 2 ? 0 : -1;
}

static int
pair(struct rpcr_rdev_qp **cli, struct rpcr_rdev_qp **srv)
{
	struct rpcr_rdev_qp_attr at = attr();

	return pair_attr(cli, srv, &at, &at);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
drain(void)
{
	struct rpcr_rdev_wc wc[16];
	struct rpcr_rdev_event ev;

	while (rpcr_rdev_poll_cq(cq, wc, 16) != 0)
		;
	while (rpcr_rdev_event_poll(dev, &ev, 1) == 1)
		;
}

static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d != NULL && readdir(d) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

/* Closing a listener while the application holds a request leaves the request usable. */
static void
test_listener_close_held_request(void)
{
	struct rpcr_rdev_qp_attr at = attr();
	struct rpcr_rdev_listener *l2;
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_qp *cli, *srv;
	char a2[80];
	int got = 0;

	snprintf(a2, sizeof(a2), "%s-2", addr);
	l2 = rpcr_rdev_listen(dev, a2, 4);
	cli = rpcr_rdev_qp_create(pd, &at);
	srv = rpcr_rdev_qp_create(pd, &at);
	CHECK(l2 != NULL && cli != NULL && srv != NULL);
	CHECK_EQ(rpcr_rdev_connect(cli, a2, NULL, 0), 0);
	CHECK_EQ(next_event(&ev), RPCR_RDEV_EVENT_CONNECT_REQUEST); /* held */
	CHECK_EQ(rpcr_rdev_listener_close(l2), 0);
	CHECK_EQ(rpcr_rdev_accept(srv, ev.req, NULL, 0), 0);
	while (got < 2 && next_event(&ev) == RPCR_RDEV_EVENT_ESTABLISHED)
		got++;
	CHECK_EQ(got, 2);
	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	drain();

	/* A request still queued when the listener goes is refused. */
	l2 = rpcr_rdev_listen(dev, a2, 4);
	cli = rpcr_rdev_qp_create(pd, &at);
	CHECK_EQ(rpcr_rdev_connect(cli, a2, NULL, 0), 0);
	usleep(100000); /* let the request arrive and queue */
	CHECK_EQ(rpcr_rdev_listener_close(l2), 0);
	CHECK_EQ(next_event(&ev), RPCR_RDEV_EVENT_REJECTED);
	CHECK(ev.qp == cli);
	rpcr_rdev_qp_destroy(cli);
	drain();
}

/* Destroying a connected QP leaves no event naming it. */
static void
test_destroy_leaves_no_event(void)
{
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_event ev;

	CHECK_EQ(pair(&cli, &srv), 0);
	CHECK_EQ(rpcr_rdev_qp_destroy(cli), 0);
	/* The server hears of it; nothing names the destroyed QP. */
	CHECK_EQ(next_event(&ev), RPCR_RDEV_EVENT_DISCONNECTED);
	CHECK(ev.qp == srv);
	while (rpcr_rdev_event_poll(dev, &ev, 1) == 1)
		CHECK(ev.qp != cli);
	rpcr_rdev_qp_destroy(srv);
	drain();
}

/* A peer that writes a completion it has no right to: our wr_id, a bounded length, an error. */
static void
test_forged_completion(void)
{
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_wc wc;
	struct shm_qp *c;
	struct shm_rcqe *e;
	uint8_t *buf = rpcr_mem_arena_alloc(arena, 4096, 64);
	struct rpcr_rdev_mr *mr = rpcr_rdev_mr_reg(pd, buf, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	struct rpcr_rdev_sge s = {(uintptr_t)buf, 64, mr->lkey};
	struct rpcr_rdev_recv_wr w = {.wr_id = 1000, .sg_list = &s, .num_sge = 1};

	CHECK_EQ(pair(&cli, &srv), 0);
	CHECK_EQ(rpcr_rdev_post_recv(srv, &w, 1), 1);
	/* The client process, as a hostile peer, fills the server's completion slot itself. */
	c = (struct shm_qp *)cli;
	e = (struct shm_rcqe *)c->conn->peer_rcq;
	e->wr_id = 0xdeadbeefcafeull;
	e->byte_len = UINT32_MAX;
	e->status = 0;
	e->flags = RPCR_RDEV_WC_F_WITH_INV | 0x80;
	e->inv_key = mr->rkey; /* a valid key of ours: it was not invalidated */
	__atomic_store_n(&e->stamp, 1, __ATOMIC_RELEASE);
	shm_db_ring(c->conn); /* (as a peer does: the server's poll visits the QP) */

	CHECK_EQ(rpcr_rdev_poll_cq(cq, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 1000);                 /* ours, not the peer's */
	CHECK(wc.status != RPCR_RDEV_WC_SUCCESS); /* 64 bytes cannot hold 4 GiB */
	CHECK_EQ(wc.byte_len, 0);
	CHECK_EQ(wc.flags, 0); /* the key is alive: no invalidation reported */
	/* The QP failed: the peer is not believed further. */
	CHECK_EQ(((struct shm_qp *)srv)->half->state, SHM_QPS_ERROR);
	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	rpcr_rdev_mr_dereg(mr);
	rte_free(buf);
	drain();
}

/* As a peer of the SRQ's QP tagged @tag: take receive @seq (its slot's word, and @cons past it). */
static void
srq_slot_take(struct shm_srq *ss, uint32_t seq, uint32_t tag)
{
	struct shm_srq_desc *d = shm_srq_desc(ss, seq & ss->mask);

	__atomic_store_n(&d->word, ((uint64_t)tag << 32) | (seq + 1), __ATOMIC_RELEASE);
	if ((int32_t)(ss->hdr->cons - (seq + 1)) < 0)
		__atomic_store_n(&ss->hdr->cons, seq + 1, __ATOMIC_RELEASE);
}

/* ... and complete it with @len bytes (@tag 0: complete it without taking it). */
static void
srq_slot_forge(struct shm_srq *ss, uint32_t seq, uint32_t tag, uint32_t len)
{
	struct shm_srq_desc *d = shm_srq_desc(ss, seq & ss->mask);

	if (tag != 0)
		srq_slot_take(ss, seq, tag);
	d->cstatus = RPCR_RDEV_WC_SUCCESS;
	d->byte_len = len;
	d->flags = 0;
	__atomic_store_n(&d->done, seq + 1, __ATOMIC_RELEASE);
}

/* A signalled Send of @len bytes at @p on @qp: 0 once it completed successfully. */
static int
slot_send(struct rpcr_rdev_qp *qp, uint8_t *p, uint32_t len)
{
	struct rpcr_rdev_mr *m = rpcr_rdev_mr_reg(pd, p, len, 0);
	struct rpcr_rdev_sge sg = {(uintptr_t)p, len, m != NULL ? m->lkey : 0};
	struct rpcr_rdev_send_wr w = {.wr_id = 1,
				      .sg_list = &sg,
				      .num_sge = 1,
				      .opcode = RPCR_RDEV_WR_SEND,
				      .flags = RPCR_RDEV_WR_F_SIGNALED};
	int rc = m != NULL && rpcr_rdev_post_send(qp, &w, 1) == 1 ? 0 : -1;

	if (m != NULL)
		rpcr_rdev_mr_dereg(m);
	return rc;
}

/* Keep the receive completions of @wc[0..@n) (in order, at the front): @return how many. */
static int
recv_only(struct rpcr_rdev_wc *wc, int n)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (wc[i].opcode == RPCR_RDEV_WC_RECV)
			wc[k++] = wc[i];
	return k;
}

/* Poll @c until it is empty: its receive completions, in order, in @wc (at most 8). */
static int
poll_recvs(struct rpcr_rdev_cq *c, struct rpcr_rdev_wc *wc)
{
	struct rpcr_rdev_wc w[8];
	int k = 0, n, i;

	while ((n = rpcr_rdev_poll_cq(c, w, 8)) > 0)
		for (i = 0; i < n; i++)
			if (w[i].opcode == RPCR_RDEV_WC_RECV && k < 8)
				wc[k++] = w[i];
	return k;
}

/* An SRQ of @max_wr receives for the SRQ cases: its buffer (4 KiB, registered), and @n receives
 * posted (wr_id 7000 + i, 64 bytes at buf + i * 64). */
struct srq_fix {
	struct rpcr_rdev_srq *srq;
	struct shm_srq *ss;
	uint8_t *buf;
	struct rpcr_rdev_mr *mr;
};

/* Post receives @from to @from + @n - 1 of the fixture (at most 32 in all). */
static void
srq_fix_post(struct srq_fix *f, uint32_t from, uint32_t n)
{
	uint32_t i;

	for (i = from; i < from + n; i++) {
		struct rpcr_rdev_sge sg = {(uintptr_t)f->buf + i * 64, 64, f->mr->lkey};
		struct rpcr_rdev_recv_wr w = {.wr_id = 7000 + i, .sg_list = &sg, .num_sge = 1};

		CHECK_EQ(rpcr_rdev_post_srq_recv(f->srq, &w, 1), 1);
	}
}

static void
srq_fix_init(struct srq_fix *f, uint32_t max_wr, uint32_t n)
{
	struct rpcr_rdev_srq_attr sa = {.max_wr = max_wr, .max_sge = 1};

	f->srq = rpcr_rdev_srq_create(pd, &sa);
	f->ss = (struct shm_srq *)f->srq;
	f->buf = rpcr_mem_arena_alloc(arena, 4096, 64);
	f->mr = f->buf != NULL ? rpcr_rdev_mr_reg(pd, f->buf, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE)
			       : NULL;
	CHECK(f->srq != NULL && f->mr != NULL);
	srq_fix_post(f, 0, n);
}

/* Once the case's QPs are destroyed: the connection events drained, the SRQ destroyed (none of
 * its receives left to a QP), the buffer deregistered and freed. */
static void
srq_fix_fini(struct srq_fix *f)
{
	drain();
	CHECK_EQ(rpcr_rdev_srq_destroy(f->srq), 0);
	rpcr_rdev_mr_dereg(f->mr);
	rte_free(f->buf);
}

/*
 * Peers of an SRQ's QP that complete receives they did not take (a slot never taken, one taken
 * by another QP's peer) or complete one twice: nothing is believed, nothing completes twice, no
 * slot is freed under another peer, and the QP fails. The QP's receives complete in its own
 * slots (SHM_SRQ_QP_CQ): the queue's slots are read by another CQ, whose QP came first.
 */
static void
test_srq_forged_completion(void)
{
	struct rpcr_rdev_cq *cq2 = rpcr_rdev_cq_create(dev, 256);
	struct rpcr_rdev_qp_attr at = attr();
	struct rpcr_rdev_qp *cli, *srv, *other;
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_wc wc[4];
	struct srq_fix f;
	struct shm_srq *ss;
	struct shm_srq_desc *d;
	struct shm_rcqe *e;
	struct shm_qp *c;
	uint32_t i;
	int got = 0;

	srq_fix_init(&f, 4, 2);
	ss = f.ss;
	CHECK(cq2 != NULL);
	at.srq = f.srq;
	at.recv_cq = cq2;
	other = rpcr_rdev_qp_create(pd, &at);
	at.recv_cq = cq;
	srv = rpcr_rdev_qp_create(pd, &at);
	at.srq = NULL;
	cli = rpcr_rdev_qp_create(pd, &at);
	CHECK(srv != NULL && cli != NULL && other != NULL);
	CHECK(((struct shm_qp *)other)->srq_slot_cq && !((struct shm_qp *)srv)->srq_slot_cq);
	CHECK_EQ(((struct shm_qp *)srv)->half->srq, SHM_SRQ_QP_CQ);
	CHECK_EQ(((struct shm_qp *)srv)->srq_tag, srv->qp_num);
	CHECK_EQ(rpcr_rdev_connect(cli, addr, NULL, 0), 0);
	CHECK_EQ(next_event(&ev), RPCR_RDEV_EVENT_CONNECT_REQUEST);
	CHECK_EQ(rpcr_rdev_accept(srv, ev.req, NULL, 0), 0);
	while (got < 2 && next_event(&ev) == RPCR_RDEV_EVENT_ESTABLISHED)
		got++;
	CHECK_EQ(got, 2);
	c = (struct shm_qp *)cli;

	/* 1. A completion of receive 0, which the peer never took. */
	e = (struct shm_rcqe *)c->conn->peer_rcq;
	e->wr_id = 0;
	e->byte_len = 8;
	e->status = 0;
	__atomic_store_n(&e->stamp, 1, __ATOMIC_RELEASE);
	shm_db_ring(c->conn);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 0);
	CHECK_EQ(((struct shm_qp *)srv)->half->state, SHM_QPS_ERROR);
	CHECK_EQ(ss->outstanding, 2); /* both still the SRQ's */
	CHECK(ss->held[0] && ss->held[1]);

	/* 2. Receive 1 taken as the protocol says, completed twice: once only. */
	d = (struct shm_srq_desc *)(ss->ring + ss->slot);
	d->word |= (uint64_t)srv->qp_num << 32;
	e = (struct shm_rcqe *)(c->conn->peer_rcq + SHM_SLOT_ALIGN);
	e->wr_id = 1;
	e->byte_len = 8;
	e->status = 0;
	__atomic_store_n(&e->stamp, 2, __ATOMIC_RELEASE);
	e = (struct shm_rcqe *)(c->conn->peer_rcq + 2 * SHM_SLOT_ALIGN);
	e->wr_id = 1;
	e->byte_len = 8;
	e->status = 0;
	__atomic_store_n(&e->stamp, 3, __ATOMIC_RELEASE);
	shm_db_ring(c->conn);
	got = rpcr_rdev_poll_cq(cq, wc, 4);
	CHECK(got >= 1);
	CHECK_EQ(wc[0].wr_id, 7001);
	for (i = 1; i < (uint32_t)got; i++)
		CHECK(wc[i].wr_id != 7001 && wc[i].wr_id != 7000);
	CHECK_EQ(ss->outstanding, 1);
	CHECK(ss->held[0]);

	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	rpcr_rdev_qp_destroy(other);
	srq_fix_fini(&f);
	CHECK_EQ(rpcr_rdev_cq_destroy(cq2), 0);
}

/*
 * The same when receives complete in the SRQ's slots (SHM_SRQ_SLOT_CQ): a completion written in
 * a slot nobody took is not read; one in a slot taken under a tag none of our QPs has comes back
 * with no QP, flushed (its buffer the application's again); an impossible length fails the QP.
 */
static void
test_srq_slot_forged(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_wc wc[4];
	struct srq_fix f;
	struct shm_srq *ss;
	struct shm_qp *s;

	srq_fix_init(&f, 4, 3);
	ss = f.ss;
	sat.srq = f.srq;
	CHECK_EQ(pair_attr(&cli, &srv, &at, &sat), 0);
	s = (struct shm_qp *)srv;
	CHECK(s->srq_slot_cq && (s->srq_tag & SHM_SRQ_TAG_SLOT));
	CHECK_EQ(((struct shm_qp *)cli)->conn->peer_srq_slot_cq, true);

	/* 1. Receive 0 completed, never taken: not read. */
	srq_slot_forge(ss, 0, 0, 8);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 0);
	CHECK_EQ(ss->outstanding, 3);

	/* 2. Taken under a tag of nobody's: back with no QP. */
	srq_slot_forge(ss, 0, SHM_SRQ_TAG_SLOT | 77, 8);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 1);
	CHECK(wc[0].qp == NULL);
	CHECK_EQ(wc[0].wr_id, 7000);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(ss->outstanding, 2);
	CHECK_EQ(s->half->state, SHM_QPS_RTS);

	/* 3. Taken under the QP's tag, longer than the buffer: the QP fails. */
	srq_slot_forge(ss, 1, s->srq_tag, 65);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 1);
	CHECK(wc[0].qp == srv);
	CHECK_EQ(wc[0].wr_id, 7001);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_GENERAL_ERR);
	CHECK_EQ(s->half->state, SHM_QPS_ERROR);
	/* Its completion read once: the slot is free, and nothing else came. */
	CHECK_EQ(ss->outstanding, 1);
	CHECK(!ss->held[1] && ss->held[2]);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 0);

	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	srq_fix_fini(&f);
}

/*
 * One SRQ, its QPs on two receive CQs: the QPs of the CQ the SRQ was bound to (the first QP's)
 * get their completions from the SRQ's slots, the others from their own, and each completion
 * comes on its own QP's CQ, in the order sent; once the first CQ's QPs are gone, the SRQ binds to
 * the next CQ that gets a QP of it, and a receive taken under a gone QP's tag names no QP.
 */
static void
test_srq_two_cqs(void)
{
	struct rpcr_rdev_cq *cq2 = rpcr_rdev_cq_create(dev, 256);
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli[3], *srv[3];
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f;
	uint8_t *buf;
	uint32_t i, m, old, len[2] = {0, 0};
	int got;

	srq_fix_init(&f, 16, 16);
	buf = f.buf;
	CHECK(cq2 != NULL);
	sat.srq = f.srq;
	sat.recv_cq = cq2;
	CHECK_EQ(pair_attr(&cli[0], &srv[0], &at, &sat), 0);
	sat.recv_cq = cq;
	CHECK_EQ(pair_attr(&cli[1], &srv[1], &at, &sat), 0);
	CHECK(((struct shm_qp *)srv[0])->srq_slot_cq && !((struct shm_qp *)srv[1])->srq_slot_cq);
	/* Three messages each, interleaved; each QP's on its own CQ, in order (lengths 1, 2, 3). */
	for (m = 1; m <= 3; m++)
		for (i = 0; i < 2; i++)
			CHECK_EQ(slot_send(cli[i], buf + 2048, 10 * i + m), 0);
	for (i = 0; i < 2; i++) {
		got = poll_recvs(i == 0 ? cq2 : cq, wc);
		CHECK_EQ(got, 3);
		for (m = 0; m < (uint32_t)got; m++) {
			CHECK(wc[m].qp == srv[i] && wc[m].status == RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc[m].byte_len, 10 * i + m + 1);
			len[i] += wc[m].byte_len;
		}
	}
	CHECK_EQ(len[0] + len[1], 6 + 36);
	/* The first CQ's QP goes: the next QP of the SRQ, on the other CQ, reads its slots. Its
	 * tag has the same index and another generation: a receive its peer takes late, under the
	 * old tag, comes back with no QP (receive 6). */
	old = ((struct shm_qp *)srv[0])->srq_tag;
	rpcr_rdev_qp_destroy(cli[0]);
	rpcr_rdev_qp_destroy(srv[0]);
	while (rpcr_rdev_poll_cq(cq2, wc, 8) != 0)
		;
	CHECK(f.ss->cq == NULL);
	CHECK_EQ(pair_attr(&cli[2], &srv[2], &at, &sat), 0);
	CHECK(((struct shm_qp *)srv[2])->srq_slot_cq);
	CHECK_EQ(((struct shm_qp *)srv[2])->srq_tag & SHM_SRQ_TAG_IDX_MASK,
		 old & SHM_SRQ_TAG_IDX_MASK);
	CHECK(((struct shm_qp *)srv[2])->srq_tag != old);
	srq_slot_forge(f.ss, 6, old, 4);
	CHECK_EQ(poll_recvs(cq, wc), 1);
	CHECK(wc[0].qp == NULL && wc[0].wr_id == 7006 && wc[0].status == RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(slot_send(cli[2], buf + 2048, 5), 0);
	CHECK_EQ(slot_send(cli[1], buf + 2048, 6), 0);
	got = poll_recvs(cq, wc);
	CHECK_EQ(got, 2);
	for (m = 0; m < (uint32_t)got; m++)
		CHECK((wc[m].qp == srv[2] && wc[m].byte_len == 5) ||
		      (wc[m].qp == srv[1] && wc[m].byte_len == 6));

	for (i = 1; i < 3; i++) {
		rpcr_rdev_qp_destroy(cli[i]);
		rpcr_rdev_qp_destroy(srv[i]);
	}
	srq_fix_fini(&f);
	CHECK_EQ(rpcr_rdev_cq_destroy(cq2), 0);
}

/*
 * Receives that complete in the SRQ's slots (SHM_SRQ_SLOT_CQ), with the peer of one QP stalled
 * in the middle of a Send (its receive taken, not complete): the other QP's completions are not
 * held up behind it, but the stalled QP's next ones are (a QP's receives complete in order);
 * once it completes, its receives come in order. Its QP failing then flushes what it took.
 */
static void
test_srq_slot_stalled_peer(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli[2], *srv[2];
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f;
	struct shm_srq *ss;
	uint8_t *buf;
	uint32_t i, stalled;
	int got;

	srq_fix_init(&f, 8, 6);
	ss = f.ss;
	buf = f.buf;
	sat.srq = f.srq;
	for (i = 0; i < 2; i++)
		CHECK_EQ(pair_attr(&cli[i], &srv[i], &at, &sat), 0);

	/* The peer of srv[0] takes receive 0 and stalls; srv[1]'s peer sends (receive 1). */
	stalled = ((struct shm_qp *)srv[0])->srq_tag;
	srq_slot_take(ss, 0, stalled);
	CHECK_EQ(slot_send(cli[1], buf + 1024, 11), 0);
	got = rpcr_rdev_poll_cq(cq, wc, 8);
	got = recv_only(wc, got);
	CHECK_EQ(got, 1);
	CHECK(wc[0].qp == srv[1] && wc[0].wr_id == 7001 && wc[0].byte_len == 11);
	/* srv[0]'s peer: its next Send (receive 2) is complete, but waits behind receive 0. */
	CHECK_EQ(slot_send(cli[0], buf + 1024, 12), 0);
	CHECK_EQ(slot_send(cli[1], buf + 1024, 13), 0);
	got = recv_only(wc, rpcr_rdev_poll_cq(cq, wc, 8));
	CHECK_EQ(got, 1);
	CHECK(wc[0].qp == srv[1] && wc[0].wr_id == 7003 && wc[0].byte_len == 13);
	CHECK_EQ(ss->nwaits, 2);
	/* Receive 0 completes: then both of srv[0]'s, in order. */
	srq_slot_forge(ss, 0, stalled, 10);
	got = recv_only(wc, rpcr_rdev_poll_cq(cq, wc, 8));
	CHECK_EQ(got, 2);
	CHECK(wc[0].qp == srv[0] && wc[0].wr_id == 7000 && wc[0].byte_len == 10);
	CHECK(wc[1].qp == srv[0] && wc[1].wr_id == 7002 && wc[1].byte_len == 12);
	CHECK_EQ(ss->nwaits, 0);

	/* Stalled again (receive 4), and its QP fails: the receive is flushed on it, once the peer
	 * is out of the Send. */
	srq_slot_take(ss, 4, stalled);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 8), 0);
	__atomic_store_n(&((struct shm_qp *)srv[0])->half->busy, 1, __ATOMIC_SEQ_CST);
	shm_qp_set_error((struct shm_qp *)srv[0]);
	got = recv_only(wc, rpcr_rdev_poll_cq(cq, wc, 8));
	CHECK_EQ(got, 0);
	__atomic_store_n(&((struct shm_qp *)srv[0])->half->busy, 0, __ATOMIC_SEQ_CST);
	got = recv_only(wc, rpcr_rdev_poll_cq(cq, wc, 8));
	CHECK_EQ(got, 1);
	CHECK(wc[0].qp == srv[0] && wc[0].wr_id == 7004 &&
	      wc[0].status == RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(ss->outstanding, 1); /* receive 5, untaken */

	for (i = 0; i < 2; i++) {
		rpcr_rdev_qp_destroy(cli[i]);
		rpcr_rdev_qp_destroy(srv[i]);
	}
	srq_fix_fini(&f);
}

/*
 * A slot's completion word says nothing about a receive posted in it again: the slot of
 * sequence number 0xffffffff in a zeroed file already reads @done = 0 = 0xffffffff + 1, and a
 * receive taken there but not complete must not be reported (nor its buffer given back while
 * the peer may still be writing into it).
 */
static void
test_srq_slot_seq_wrap(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f;
	uint32_t tag;

	srq_fix_init(&f, 4, 0);
	f.ss->prod = 0xfffffffeu;
	f.ss->hdr->cons = 0xfffffffeu;
	srq_fix_post(&f, 0, 3); /* sequence numbers 0xfffffffe, 0xffffffff, 0 */
	sat.srq = f.srq;
	CHECK_EQ(pair_attr(&cli, &srv, &at, &sat), 0);
	tag = ((struct shm_qp *)srv)->srq_tag;
	CHECK(tag & SHM_SRQ_TAG_SLOT);
	CHECK_EQ(slot_send(cli, f.buf + 2048, 7), 0);
	CHECK_EQ(poll_recvs(cq, wc), 1);
	CHECK(wc[0].qp == srv && wc[0].wr_id == 7000 && wc[0].byte_len == 7);
	/* 0xffffffff taken, its Send not done: nothing. */
	srq_slot_take(f.ss, 0xffffffffu, tag);
	CHECK_EQ(poll_recvs(cq, wc), 0);
	CHECK(f.ss->held[0xffffffffu & f.ss->mask]);
	/* Done: then it, and the next (sequence number 0), in order. */
	srq_slot_forge(f.ss, 0xffffffffu, 0, 9);
	CHECK_EQ(slot_send(cli, f.buf + 2048, 11), 0);
	CHECK_EQ(poll_recvs(cq, wc), 2);
	CHECK(wc[0].qp == srv && wc[0].wr_id == 7001 && wc[0].byte_len == 9 &&
	      wc[0].status == RPCR_RDEV_WC_SUCCESS);
	CHECK(wc[1].qp == srv && wc[1].wr_id == 7002 && wc[1].byte_len == 11);

	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	srq_fix_fini(&f);
}

/*
 * Two SRQs read by one CQ, the first always with more ready than a poll takes: the second's
 * completions still come, each SRQ being read first in turn.
 */
static void
test_srq_slot_two_srqs_fair(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli[2], *srv[2];
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f[2];
	uint32_t i, seen = 0, first2 = 0;
	int n;

	for (i = 0; i < 2; i++) {
		srq_fix_init(&f[i], 4, 4);
		sat.srq = f[i].srq;
		CHECK_EQ(pair_attr(&cli[i], &srv[i], &at, &sat), 0);
		CHECK(((struct shm_qp *)srv[i])->srq_slot_cq);
	}
	CHECK_EQ(((struct shm_cq *)cq)->nsrqs, 2);
	for (i = 0; i < 3; i++)
		CHECK_EQ(slot_send(cli[0], f[0].buf + 2048, 1 + i), 0);
	CHECK_EQ(slot_send(cli[1], f[1].buf + 2048, 20), 0);
	/* One completion a poll: the second SRQ's among the first two receives. */
	while (seen < 4) {
		n = rpcr_rdev_poll_cq(cq, wc, 1);
		if (n == 0)
			break;
		if (recv_only(wc, n) == 0)
			continue;
		if (wc[0].qp == srv[1] && seen < 2)
			first2 = 1;
		seen++;
	}
	CHECK_EQ(seen, 4);
	CHECK(first2);

	for (i = 0; i < 2; i++) {
		rpcr_rdev_qp_destroy(cli[i]);
		rpcr_rdev_qp_destroy(srv[i]);
	}
	drain();
	for (i = 0; i < 2; i++)
		srq_fix_fini(&f[i]);
}

/*
 * A QP of the SRQ's slots destroyed while its peer is still in a Send after the destroy's fence
 * (1 s): the receive that peer took stays taken, so that its slot is not posted again under a
 * late completion; when the completion comes it is reported with no QP, flushed. Another QP's
 * completions are not held up meanwhile.
 */
static void
test_srq_slot_destroy_stalled(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli[2], *srv[2];
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f;
	uint32_t i, tag, out;
	uint64_t t0;

	srq_fix_init(&f, 4, 4);
	sat.srq = f.srq;
	for (i = 0; i < 2; i++)
		CHECK_EQ(pair_attr(&cli[i], &srv[i], &at, &sat), 0);
	tag = ((struct shm_qp *)srv[0])->srq_tag;
	srq_slot_take(f.ss, 0, tag);
	out = f.ss->outstanding;
	__atomic_store_n(&((struct shm_qp *)srv[0])->half->busy, 1, __ATOMIC_SEQ_CST);
	t0 = now_ns();
	rpcr_rdev_qp_destroy(srv[0]); /* (waits for the fence, 1 s: once, not again per SRQ) */
	CHECK(now_ns() - t0 < 1800000000u);
	CHECK(f.ss->held[0]);
	CHECK_EQ(f.ss->outstanding, out);
	CHECK_EQ(poll_recvs(cq, wc), 0); /* not flushed yet */
	CHECK_EQ(slot_send(cli[1], f.buf + 2048, 12), 0);
	CHECK_EQ(poll_recvs(cq, wc), 1);
	CHECK(wc[0].qp == srv[1] && wc[0].wr_id == 7001 && wc[0].byte_len == 12);
	/* The late completion: back with no QP. */
	srq_slot_forge(f.ss, 0, 0, 5);
	CHECK_EQ(poll_recvs(cq, wc), 1);
	CHECK(wc[0].qp == NULL && wc[0].wr_id == 7000 && wc[0].status == RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK(!f.ss->held[0]);
	CHECK_EQ(f.ss->outstanding, out - 2); /* (and receive 1, polled) */

	rpcr_rdev_qp_destroy(cli[0]);
	rpcr_rdev_qp_destroy(cli[1]);
	rpcr_rdev_qp_destroy(srv[1]);
	srq_fix_fini(&f);
}

/*
 * A peer that moves the SRQ's @cons past a receive without taking it: the slots' poll, which
 * stops at the first receive not taken, passes it once it sees @cons past it (within
 * SHM_DB_FULL polls), so that what was taken after it is read; the receive stays posted.
 */
static void
test_srq_slot_cons_skipped(void)
{
	struct rpcr_rdev_qp_attr at = attr(), sat = attr();
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_wc wc[8];
	struct srq_fix f;
	uint32_t polls;
	int got = 0;

	srq_fix_init(&f, 4, 4);
	sat.srq = f.srq;
	CHECK_EQ(pair_attr(&cli, &srv, &at, &sat), 0);
	__atomic_store_n(&f.ss->hdr->cons, 2, __ATOMIC_RELEASE); /* receives 0 and 1 passed */
	CHECK_EQ(slot_send(cli, f.buf + 2048, 13), 0);           /* takes receive 2 */
	for (polls = 0; polls < 2 * SHM_DB_FULL && got == 0; polls++)
		got = recv_only(wc, rpcr_rdev_poll_cq(cq, wc, 8));
	CHECK_EQ(got, 1);
	CHECK(wc[0].qp == srv && wc[0].wr_id == 7002 && wc[0].byte_len == 13);
	CHECK(f.ss->held[0] && f.ss->held[1]); /* still posted */
	/* The next is read at once. */
	CHECK_EQ(slot_send(cli, f.buf + 2048, 14), 0);
	CHECK_EQ(poll_recvs(cq, wc), 1);
	CHECK(wc[0].qp == srv && wc[0].wr_id == 7003 && wc[0].byte_len == 14);

	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	srq_fix_fini(&f);
}

static void
on_alarm(int sig)
{
	RTE_SET_USED(sig);
	fprintf(stderr, "poll_cq did not return: the fast path waited on the peer\n");
	_exit(2);
}

/* A live peer stuck in the middle of a Send never makes poll_cq spin. */
static void
test_stuck_peer_no_spin(void)
{
	struct rpcr_rdev_qp *cli, *srv;
	struct rpcr_rdev_wc wc[4];
	uint8_t *buf = rpcr_mem_arena_alloc(arena, 4096, 64);
	struct rpcr_rdev_mr *mr = rpcr_rdev_mr_reg(pd, buf, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	struct rpcr_rdev_sge s = {(uintptr_t)buf, 64, mr->lkey};
	struct rpcr_rdev_recv_wr w = {.wr_id = 7, .sg_list = &s, .num_sge = 1};
	struct shm_half *h;

	CHECK_EQ(pair(&cli, &srv), 0);
	CHECK_EQ(rpcr_rdev_post_recv(srv, &w, 1), 1);
	h = ((struct shm_qp *)srv)->half;
	__atomic_store_n(&h->busy, 1, __ATOMIC_SEQ_CST); /* the peer, mid-operation */
	__atomic_store_n(&h->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
	shm_db_ring(((struct shm_qp *)cli)->conn); /* (as shm_qp_set_error() does) */
	signal(SIGALRM, on_alarm);
	alarm(3);
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 0); /* not yet flushable, and no wait */
	alarm(0);
	__atomic_store_n(&h->busy, 0, __ATOMIC_RELEASE); /* the peer finishes */
	CHECK_EQ(rpcr_rdev_poll_cq(cq, wc, 4), 1);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	CHECK_EQ(wc[0].wr_id, 7);
	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	rpcr_rdev_mr_dereg(mr);
	rte_free(buf);
	drain();
}

/*
 * A peer stuck in an operation costs one fence's wait, not one per fence: the first
 * deregistration waits a second and fails its QP; the next one, and the QP's destroy, do not
 * wait for it again (whatever it starts later sees ERROR and touches nothing).
 */
static void
test_stuck_peer_fenced_once(void)
{
	struct rpcr_rdev_qp *cli, *srv;
	uint8_t *buf = rpcr_mem_arena_alloc(arena, 8192, 64);
	struct rpcr_rdev_mr *mr[2];
	struct rpcr_rdev_wc wc[4];
	uint64_t t0;
	int i;

	for (i = 0; i < 2; i++)
		mr[i] = rpcr_rdev_mr_reg(pd, buf + 4096 * i, 4096,
					 RPCR_RDEV_ACCESS_LOCAL_WRITE |
						 RPCR_RDEV_ACCESS_REMOTE_WRITE);
	CHECK(mr[0] != NULL && mr[1] != NULL);
	CHECK_EQ(pair(&cli, &srv), 0);
	__atomic_store_n(&((struct shm_qp *)srv)->half->busy, 1, __ATOMIC_SEQ_CST);
	t0 = now_ns();
	CHECK_EQ(rpcr_rdev_mr_dereg(mr[0]), 0);
	CHECK(now_ns() - t0 >= 900000000u); /* (the fence waited, and gave up) */
	CHECK_EQ(((struct shm_qp *)srv)->half->state, SHM_QPS_ERROR);
	t0 = now_ns();
	CHECK_EQ(rpcr_rdev_mr_dereg(mr[1]), 0);
	rpcr_rdev_qp_destroy(srv);
	CHECK(now_ns() - t0 < 500000000u);
	rpcr_rdev_qp_destroy(cli);
	while (rpcr_rdev_poll_cq(cq, wc, 4) != 0)
		;
	rte_free(buf);
	drain();
}

/* Files we share are sealed against resizing; a peer could not shrink them under us. */
static void
test_shared_files_sealed(void)
{
	struct rpcr_rdev_qp *cli, *srv;
	struct shm_qp *q;
	int seals;

	CHECK_EQ(pair(&cli, &srv), 0);
	q = (struct shm_qp *)cli;
	seals = fcntl(q->half_fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW));
	CHECK(ftruncate(q->half_fd, 0) != 0);
	seals = fcntl(q->sd->keys_fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_SHRINK));
	rpcr_rdev_qp_destroy(cli);
	rpcr_rdev_qp_destroy(srv);
	drain();
}

/*
 * A region backed by a file that could shrink under the peer's mapping is refused by the peer:
 * the connection fails instead of a later SIGBUS.
 */
static void
test_unsealed_region_refused(void)
{
	struct rpcr_rdev_qp_attr at = attr();
	struct rpcr_rdev_qp *cli;
	struct rpcr_rdev_event ev;
	int fd = memfd_create("unsealed", MFD_CLOEXEC);
	void *p;
	int id;

	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 1 << 20), 0);
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	id = rpcr_rdev_region_add(p, 1 << 20, fd, 0, false);
	CHECK(id >= 0);
	cli = rpcr_rdev_qp_create(pd, &at);
	CHECK_EQ(rpcr_rdev_connect(cli, addr, NULL, 0), 0);
	/* The server side (this process) refuses the unsealed region: no request arrives, the
	 * client's connection fails. */
	CHECK_EQ(next_event(&ev), RPCR_RDEV_EVENT_CONNECT_ERROR);
	CHECK(ev.qp == cli);
	rpcr_rdev_qp_destroy(cli);
	CHECK_EQ(rpcr_rdev_region_del(id), 0);
	munmap(p, 1 << 20);
	close(fd);
	drain();
}

/* Malformed HELLOs carrying file descriptors leak none of them: one where three belong, three
 * of which the wake socket (the third) is a file, or a stream socket. */
static void
test_bad_hello_no_fd_leak(void)
{
	struct shm_dev *sd = shm_dev(dev);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct shm_msg m = {.type = SHM_MSG_HELLO, .version = SHM_VERSION};
	int before, after, i;
	char path[PATH_MAX + 80];

	snprintf(path, sizeof(path), "%s/%s", sd->dir, addr);
	CHECK(strlen(path) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, RTE_MIN(strlen(path) + 1, sizeof(sun.sun_path) - 1));
	usleep(50000);
	before = open_fds();
	for (i = 0; i < 50; i++) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int fds[3] = {memfd_create("junk", MFD_CLOEXEC), memfd_create("junk", MFD_CLOEXEC),
			      i % 3 == 1 ? memfd_create("junk", MFD_CLOEXEC)
					 : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
		int nfds = i % 3 == 0 ? 1 : 3, k;
		char cbuf[CMSG_SPACE(sizeof(int) * 3)] = {0};
		struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
		CHECK_EQ(connect(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
		CHECK_EQ(sendmsg(s, &mh, 0), (ssize_t)sizeof(m));
		for (k = 0; k < 3; k++)
			close(fds[k]);
		usleep(2000);
		close(s);
	}
	usleep(300000); /* the control thread sees each peer go */
	after = open_fds();
	if (after > before)
		fprintf(stderr, "open fds: %d before, %d after\n", before, after);
	CHECK(after <= before);
	drain();
}

/*
 * As user @uid, connect to the socket at @path: @return 0 the driver kept the connection (it
 * waits for our hello), 1 it closed it at once (credentials refused), 2 connect() failed (the
 * file's mode refused us), 3 the test could not switch users.
 */
static int
connect_as(uid_t uid, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int status = 0;
	pid_t pid;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		struct pollfd pfd = {.events = POLLIN};
		char b;
		int fd;

		if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
			_exit(3);
		fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
			_exit(2);
		pfd.fd = fd;
		if (poll(&pfd, 1, 1000) == 1 && recv(fd, &b, 1, 0) <= 0)
			_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 3;
	return WEXITSTATUS(status);
}

/*
 * Who may connect: without allow_uids= the socket is 0600 (another user cannot even connect);
 * with allow_uids=65534 it is 0666 and the peer's credentials decide: nobody (65534) is kept,
 * uid 65533 is closed on. A malformed list is refused at open. (Switching users needs root:
 * without it only the modes and the parsing are checked.)
 */
static void
test_allow_uids(void)
{
	char dir[64], path[PATH_MAX + 80];
	struct rpcr_rdev_listener *l;
	struct rpcr_rdev *d2;
	struct stat st;
	bool root = geteuid() == 0;

	CHECK(rpcr_rdev_open("shm:allow_uids=") == NULL);
	CHECK(rpcr_rdev_open("shm:allow_uids=12x") == NULL);
	CHECK(rpcr_rdev_open("shm:allow_uids=1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17") == NULL);

	/* This test's own device: no list. */
	snprintf(path, sizeof(path), "%s/%s", ((struct shm_dev *)dev->priv)->dir, addr);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	if (root)
		CHECK_EQ(connect_as(65534, path), 2);

	snprintf(dir, sizeof(dir), "/tmp/rpcr-allow-%d", (int)getpid());
	{
		char args[128];

		snprintf(args, sizeof(args), "shm:path=%s,allow_uids=65534", dir);
		d2 = rpcr_rdev_open(args);
	}
	CHECK(d2 != NULL);
	if (d2 == NULL)
		return;
	l = rpcr_rdev_listen(d2, "allow", 4);
	CHECK(l != NULL);
	snprintf(path, sizeof(path), "%s/allow", dir);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0666);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_mode & 0711, 0711);
	if (root) {
		CHECK_EQ(connect_as(65534, path), 0);
		CHECK_EQ(connect_as(65533, path), 1);
	} else {
		printf("     (not root: users not switched)\n");
	}
	if (l != NULL)
		rpcr_rdev_listener_close(l);
	CHECK_EQ(rpcr_rdev_close(d2), 0);
	rmdir(dir);
}

/* Peer mappings to unmap within 2 s of the QPs' destruction (the control thread reaps). */
static bool
maps_back_to(uint32_t n)
{
	int i;

	for (i = 0; i < 200 && shm_map_count() != n; i++) {
		drain();
		usleep(10000);
	}
	return shm_map_count() == n;
}

/*
 * Connections of one peer share the mappings of its files: each file range is mapped once in the
 * process however many connections map it (its key table and doorbells, its regions), and
 * unmapped with the last (shm_map.c). Only the QP halves, one per QP, add to the count.
 */
static void
test_peer_maps_shared(void)
{
	enum { PAIRS = 6 };
	struct rpcr_rdev_qp *cli[PAIRS], *srv[PAIRS];
	struct rpcr_rdev_mr *mr;
	uint32_t base = shm_map_count(), first, i;
	uint8_t *buf;

	CHECK_EQ(pair(&cli[0], &srv[0]), 0);
	first = shm_map_count();
	/* The two halves, and at least the key table (this device's, mapped by both sides). */
	CHECK(first >= base + 3);
	for (i = 1; i < PAIRS; i++)
		CHECK_EQ(pair(&cli[i], &srv[i]), 0);
	CHECK_EQ(shm_map_count(), first + 2 * (PAIRS - 1));

	/* The shared mappings carry data on every connection: a Send over each pair. */
	buf = rpcr_mem_arena_alloc(arena, 4096, 64);
	mr = buf != NULL ? rpcr_rdev_mr_reg(pd, buf, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE) : NULL;
	CHECK(mr != NULL);
	for (i = 0; i < PAIRS; i++) {
		uint8_t *in = buf + 128 * i, *out = in + 64;
		struct rpcr_rdev_sge si = {(uintptr_t)in, 64, mr->lkey};
		struct rpcr_rdev_sge so = {(uintptr_t)out, 64, mr->lkey};
		struct rpcr_rdev_recv_wr r = {.wr_id = i, .sg_list = &si, .num_sge = 1};
		struct rpcr_rdev_send_wr w = {.wr_id = 100 + i,
					      .opcode = RPCR_RDEV_WR_SEND,
					      .flags = RPCR_RDEV_WR_F_SIGNALED,
					      .sg_list = &so,
					      .num_sge = 1};
		struct rpcr_rdev_wc wc[4];
		int got = 0, k;

		memset(in, 0, 64);
		snprintf((char *)out, 64, "pair %u", i);
		CHECK_EQ(rpcr_rdev_post_recv(srv[i], &r, 1), 1);
		CHECK_EQ(rpcr_rdev_post_send(cli[i], &w, 1), 1);
		for (k = 0; k < 1000 && got < 2; k++)
			got += rpcr_rdev_poll_cq(cq, wc + got, (uint16_t)(4 - got));
		CHECK_EQ(got, 2);
		CHECK_EQ(strcmp((char *)in, (char *)out), 0);
	}
	rpcr_rdev_mr_dereg(mr);
	rte_free(buf);

	for (i = 0; i < PAIRS; i++) {
		rpcr_rdev_qp_destroy(cli[i]);
		rpcr_rdev_qp_destroy(srv[i]);
	}
	CHECK(maps_back_to(base));
}

/*
 * A CQ's doorbells serve every QP that rang in turn, however busy the others are: QPs on the
 * low bits of a doorbell word that always have a new receive completion must not starve one on
 * a high bit (the poll used to start at bit 0 of a word every time: at 1000 connections with
 * one call each, 400 of them waited for the full visit every SHM_DB_FULL polls, bench_scale).
 */
static void
test_doorbells_fair(void)
{
	/* 40 server QPs in one word (more than SHM_DB_MIN_QPS: the doorbells are used); the
	 * first 16 sent to again as soon as a receive of theirs completes, the last sent to once;
	 * polls of 8 completions. */
	enum { QPS = 40, BUSY = 16, LATE = QPS - 1, BURST = 8, POLLS = 64, BOUND = 4 };
	struct rpcr_rdev_qp *cli[QPS], *srv[QPS];
	struct rpcr_rdev_qp_attr cat = attr(), sat = attr();
	struct rpcr_rdev_cq *rcq = rpcr_rdev_cq_create(dev, 1024);
	struct rpcr_rdev_cq *ccq = rpcr_rdev_cq_create(dev, 1024);
	int last[QPS], served[QPS], late_at = -1, gap = 0;
	struct rpcr_rdev_wc wc[BURST + 8];
	struct rpcr_rdev_mr *mr;
	uint8_t *buf;
	int i, p;

	CHECK(rcq != NULL && ccq != NULL);
	cat.send_cq = cat.recv_cq = ccq;
	sat.send_cq = sat.recv_cq = rcq;
	for (i = 0; i < QPS; i++)
		CHECK_EQ(pair_attr(&cli[i], &srv[i], &cat, &sat), 0);
	CHECK(((struct shm_cq *)rcq)->db != NULL);
	buf = rpcr_mem_arena_alloc(arena, 64 * 2 * QPS, 64);
	mr = buf != NULL ? rpcr_rdev_mr_reg(pd, buf, 64 * 2 * QPS, RPCR_RDEV_ACCESS_LOCAL_WRITE)
			 : NULL;
	CHECK(mr != NULL);

	for (i = 0; i < QPS; i++) {
		struct rpcr_rdev_sge si = {(uintptr_t)(buf + 128 * i), 64, mr->lkey};
		struct rpcr_rdev_recv_wr r = {.wr_id = (uint64_t)i, .sg_list = &si, .num_sge = 1};
		int k;

		for (k = 0; k < 4; k++)
			CHECK_EQ(rpcr_rdev_post_recv(srv[i], &r, 1), 1);
		last[i] = -1;
		served[i] = 0;
	}
	/* A signalled 16-byte Send from client @i. */
#define FAIR_SEND(i)                                                                         \
	do {                                                                                 \
		struct rpcr_rdev_sge so = {(uintptr_t)(buf + 128 * (i) + 64), 16, mr->lkey}; \
		struct rpcr_rdev_send_wr w = {.wr_id = (uint64_t)(i),                        \
					      .opcode = RPCR_RDEV_WR_SEND,                   \
					      .flags = RPCR_RDEV_WR_F_SIGNALED,              \
					      .sg_list = &so,                                \
					      .num_sge = 1};                                 \
		CHECK_EQ(rpcr_rdev_post_send(cli[i], &w, 1), 1);                             \
	} while (0)
	for (i = 0; i < BUSY; i++)
		FAIR_SEND(i);
	FAIR_SEND(LATE);
	for (p = 0; p < POLLS; p++) {
		int got = rpcr_rdev_poll_cq(rcq, wc, BURST), k;

		for (k = 0; k < got; k++) {
			struct rpcr_rdev_sge si;
			struct rpcr_rdev_recv_wr r = {.sg_list = &si, .num_sge = 1};

			i = (int)wc[k].wr_id;
			CHECK_EQ(wc[k].status, RPCR_RDEV_WC_SUCCESS);
			if (last[i] >= 0 && p - last[i] > gap)
				gap = p - last[i];
			last[i] = p;
			served[i]++;
			if (i == LATE && late_at < 0)
				late_at = p;
			si = (struct rpcr_rdev_sge){(uintptr_t)(buf + 128 * i), 64, mr->lkey};
			r.wr_id = (uint64_t)i;
			CHECK_EQ(rpcr_rdev_post_recv(srv[i], &r, 1), 1);
			if (i < BUSY)
				FAIR_SEND(i);
		}
		/* (The clients' send completions.) */
		while (rpcr_rdev_poll_cq(ccq, wc, BURST + 8) != 0)
			;
	}
#undef FAIR_SEND
	/* 17 QPs with work and 8 a poll: each is served within 3 polls of the last time. */
	CHECK(late_at >= 0 && late_at < BOUND);
	CHECK(gap <= BOUND);
	for (i = 0; i < BUSY; i++)
		CHECK(served[i] >= POLLS / BOUND);

	for (i = 0; i < QPS; i++) {
		rpcr_rdev_qp_destroy(cli[i]);
		rpcr_rdev_qp_destroy(srv[i]);
	}
	drain();
	rpcr_rdev_mr_dereg(mr);
	rte_free(buf);
	while (rpcr_rdev_poll_cq(rcq, wc, BURST) != 0 || rpcr_rdev_poll_cq(ccq, wc, BURST) != 0)
		;
	CHECK_EQ(rpcr_rdev_cq_destroy(rcq), 0);
	CHECK_EQ(rpcr_rdev_cq_destroy(ccq), 0);
}

static const struct rpcr_test_case cases[] = {
	{"listener_close_held_request", test_listener_close_held_request},
	{"destroy_leaves_no_event", test_destroy_leaves_no_event},
	{"forged_completion", test_forged_completion},
	{"stuck_peer_no_spin", test_stuck_peer_no_spin},
	{"stuck_peer_fenced_once", test_stuck_peer_fenced_once},
	{"shared_files_sealed", test_shared_files_sealed},
	{"unsealed_region_refused", test_unsealed_region_refused},
	{"bad_hello_no_fd_leak", test_bad_hello_no_fd_leak},
	{"allow_uids", test_allow_uids},
	{"srq_forged_completion", test_srq_forged_completion},
	{"srq_slot_forged", test_srq_slot_forged},
	{"srq_two_cqs", test_srq_two_cqs},
	{"srq_slot_stalled_peer", test_srq_slot_stalled_peer},
	{"srq_slot_seq_wrap", test_srq_slot_seq_wrap},
	{"srq_slot_two_srqs_fair", test_srq_slot_two_srqs_fair},
	{"srq_slot_destroy_stalled", test_srq_slot_destroy_stalled},
	{"srq_slot_cons_skipped", test_srq_slot_cons_skipped},
	{"peer_maps_shared", test_peer_maps_shared},
	{"doorbells_fair", test_doorbells_fair},
};

int
main(int argc, char **argv)
{
	struct rpcr_rdev_listener *l;
	int rc;

	if (rpcr_test_eal_init() != 0)
		return 1;
	snprintf(addr, sizeof(addr), "rpcr-robust-%d", (int)getpid());
	dev = rpcr_rdev_open("shm");
	pd = dev != NULL ? rpcr_rdev_pd_alloc(dev) : NULL;
	cq = dev != NULL ? rpcr_rdev_cq_create(dev, 256) : NULL;
	arena = rpcr_mem_arena_create("robust", 8u << 20, 0);
	l = dev != NULL ? rpcr_rdev_listen(dev, addr, 64) : NULL;
	if (pd == NULL || cq == NULL || arena == NULL || l == NULL) {
		fprintf(stderr, "set-up failed: %s\n", strerror(rte_errno));
		return 1;
	}
	rc = rpcr_test_main(argc, argv, cases, RTE_DIM(cases));
	rpcr_rdev_listener_close(l);
	rpcr_mem_arena_free(arena);
	rpcr_rdev_cq_destroy(cq);
	rpcr_rdev_pd_free(pd);
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return rc;
}
