/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A scripted fake RDMA device for engine tests and fuzzing: the test sees every work request
 * posted (with the bytes a Send or Write gathers), completes them as it likes, delivers messages
 * into posted receives and injects connection events. Registered as driver "fake".
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>

#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>

#include "fake_rdev.h"

struct fake_qp *last_qp;
uint32_t nqps;
uint32_t nqps_live;
struct rpcr_rdev_listener *last_listener;
static uint32_t next_key = 0x1000;
struct rpcr_rdev *fake_dev;
struct rpcr_xprt_poller *fake_poller;

/*
 * The fake's objects come from calloc(), so that ASan sees a test that uses one after the engine
 * destroyed it; in fuzz targets (FAKE_RTE_ALLOC) from rte_malloc(), out of libFuzzer's malloc
 * accounting, which would run a leak check after every input that made a QP or posted a WR.
 */
#ifdef FAKE_RTE_ALLOC
#define fake_zalloc(n) rte_zmalloc("fake", (n), 0)
#define fake_free(p)   rte_free(p)
#else
#define fake_zalloc(n) calloc(1, (n))
#define fake_free(p)   free(p)
#endif
int nmrs_live;
uint32_t fail_deregs;
struct rpcr_rdev_mr *dereg_failed;

/* The devices opened with "fake:mw=1": they have memory windows (RPCR_RDEV_CAP_MW). */
static struct rpcr_rdev *mw_devs[4];

static int
f_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	uint32_t i;

	if (args != NULL && rte_kvargs_count(args, "mw") != 0) {
		for (i = 0; i < RTE_DIM(mw_devs); i++) {
			if (mw_devs[i] == NULL) {
				mw_devs[i] = dev;
				return 0;
			}
		}
		return -ENOSPC;
	}
	return 0;
}

static bool
has_mw(const struct rpcr_rdev *dev)
{
	uint32_t i;

	for (i = 0; i < RTE_DIM(mw_devs); i++)
		if (mw_devs[i] == dev)
			return true;
	return false;
}

static int
f_remove(struct rpcr_rdev *dev)
{
	uint32_t i;

	for (i = 0; i < RTE_DIM(mw_devs); i++)
		if (mw_devs[i] == dev)
			mw_devs[i] = NULL;
	return 0;
}

static int
f_info(struct rpcr_rdev *dev, struct rpcr_rdev_info *info)
{
	RTE_SET_USED(dev);
	memset(info, 0, sizeof(*info));
	strcpy(info->driver, "fake");
	info->max_qp_wr = FQ;
	info->max_cqe = 1u << 20;
	info->max_sge = 4;
	info->max_pdata = RPCR_RDEV_PDATA_MAX;
	info->caps = RPCR_RDEV_CAP_REMOTE_INV | RPCR_RDEV_CAP_SEND_INV | RPCR_RDEV_CAP_PDATA_EXACT |
		     (has_mw(dev) ? RPCR_RDEV_CAP_MW : 0);
	return 0;
}

int nmws_live;

static struct rpcr_rdev_mw *
f_mw_alloc(struct rpcr_rdev_pd *pd)
{
	struct rpcr_rdev_mw *mw = fake_zalloc(sizeof(*mw));

	mw->pd = pd;
	mw->rkey = next_key++;
	mw->next_rkey = next_key++;
	nmws_live++;
	return mw;
}

static int
f_mw_free(struct rpcr_rdev_mw *mw)
{
	nmws_live--;
	fake_free(mw);
	return 0;
}

static struct rpcr_rdev_pd *
f_pd_alloc(struct rpcr_rdev *dev)
{
	struct rpcr_rdev_pd *pd = fake_zalloc(sizeof(*pd));

	pd->dev = dev;
	return pd;
}

static int
f_pd_free(struct rpcr_rdev_pd *pd)
{
	fake_free(pd);
	return 0;
}

static struct rpcr_rdev_mr *
f_mr_reg(struct rpcr_rdev_pd *pd, void *addr, size_t len, uint32_t access)
{
	struct rpcr_rdev_mr *mr = fake_zalloc(sizeof(*mr));

	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->lkey = mr->rkey = next_key++;
	nmrs_live++;
	return mr;
}

static int
f_mr_dereg(struct rpcr_rdev_mr *mr)
{
	if (fail_deregs != 0) {
		/* The registration stays (as a failed ibv_dereg_mr() leaves it). */
		fail_deregs--;
		dereg_failed = mr;
		return -EIO;
	}
	nmrs_live--;
	fake_free(mr);
	return 0;
}

static struct rpcr_rdev_cq *
f_cq_create(struct rpcr_rdev *dev, uint32_t depth)
{
	struct fake_cq *cq = fake_zalloc(sizeof(*cq));

	cq->pub.dev_id = rpcr_rdev_id(dev);
	cq->pub.depth = depth;
	return &cq->pub;
}

static int
f_cq_destroy(struct rpcr_rdev_cq *cq)
{
	fake_free(cq);
	return 0;
}

static struct rpcr_rdev_qp *
f_qp_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_qp_attr *attr)
{
	struct fake_qp *qp = fake_zalloc(sizeof(*qp));

	qp->pub.dev_id = rpcr_rdev_id(pd->dev);
	qp->pub.pd = pd;
	qp->pub.attr = *attr;
	qp->scq = (struct fake_cq *)attr->send_cq;
	qp->rcq = (struct fake_cq *)attr->recv_cq;
	last_qp = qp;
	nqps++;
	nqps_live++;
	return &qp->pub;
}

static int
f_qp_destroy(struct rpcr_rdev_qp *pqp)
{
	struct fake_qp *qp = (struct fake_qp *)pqp;
	uint32_t i;

	/* Its completions leave the CQs, as a real destroy makes them unreachable. */
	for (i = qp->scq->head; i != qp->scq->tail; i++)
		if (qp->scq->q[i % FQ].qp == pqp)
			qp->scq->q[i % FQ].qp = NULL;
	for (i = qp->rcq->head; i != qp->rcq->tail; i++)
		if (qp->rcq->q[i % FQ].qp == pqp)
			qp->rcq->q[i % FQ].qp = NULL;
	for (i = 0; i < FQ; i++)
		fake_free(qp->sq[i]);
	if (last_qp == qp)
		last_qp = NULL;
	nqps_live--;
	fake_free(qp);
	return 0;
}

static struct rpcr_rdev_listener *
f_listen(struct rpcr_rdev *dev, const char *addr, int backlog)
{
	struct rpcr_rdev_listener *l = fake_zalloc(sizeof(*l));

	RTE_SET_USED(addr);
	RTE_SET_USED(backlog);
	l->dev = dev;
	last_listener = l;
	return l;
}

static int
f_listener_close(struct rpcr_rdev_listener *l)
{
	fake_free(l);
	return 0;
}

static int
f_connect(struct rpcr_rdev_qp *pqp, const char *addr, const void *pdata, uint8_t len)
{
	struct fake_qp *qp = (struct fake_qp *)pqp;

	snprintf(qp->addr, sizeof(qp->addr), "%s", addr);
	if (len != 0) /* (pdata may be NULL then) */
		memcpy(qp->pdata, pdata, len);
	qp->plen = len;
	qp->connects++;
	return 0;
}

static int
f_accept(struct rpcr_rdev_qp *pqp, struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	struct fake_qp *qp = (struct fake_qp *)pqp;
	struct fake_req *req = (struct fake_req *)preq;

	if (len != 0) /* (pdata may be NULL then) */
		memcpy(qp->pdata, pdata, len);
	qp->plen = len;
	qp->accepts++;
	req->accepted = qp;
	return 0;
}

static int
f_reject(struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	RTE_SET_USED(pdata);
	RTE_SET_USED(len);
	((struct fake_req *)preq)->rejected = true;
	return 0;
}

static int
f_disconnect(struct rpcr_rdev_qp *pqp)
{
	((struct fake_qp *)pqp)->disconnects++;
	return 0;
}

static uint16_t
f_post_send(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	struct fake_qp *qp = (struct fake_qp *)pqp;
	uint16_t i;

	if (qp->fail_posts != 0) {
		qp->fail_posts--;
		rte_errno = EIO;
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct fake_wr **slot = &qp->sq[qp->sq_tail % FQ];
		struct fake_wr *f;
		uint16_t k;

		/* The WR that had this slot FQ posts ago is long taken and completed. */
		fake_free(*slot);
		*slot = NULL;
		f = fake_zalloc(sizeof(*f));
		if (f == NULL) {
			rte_errno = ENOMEM;
			return i;
		}
		f->wr = wr[i];
		if (wr[i].opcode == RPCR_RDEV_WR_BIND_MW) {
			/* The bind as the post reads it, and the window's key it gives. */
			f->bind = *wr[i].bind;
			f->wr.bind = &f->bind;
			wr[i].bind->mw->rkey = wr[i].bind->mw->next_rkey;
			wr[i].bind->mw->next_rkey = next_key++;
		}
		if (wr[i].num_sge != 0)
			memcpy(f->sge, wr[i].sg_list, sizeof(f->sge[0]) * wr[i].num_sge);
		f->wr.sg_list = f->sge;
		if (wr[i].opcode != RPCR_RDEV_WR_READ) {
			for (k = 0; k < wr[i].num_sge; k++) {
				if (f->len + wr[i].sg_list[k].length <= FDATA)
					memcpy(f->data + f->len,
					       (const void *)(uintptr_t)wr[i].sg_list[k].addr,
					       wr[i].sg_list[k].length);
				f->len += wr[i].sg_list[k].length;
			}
		}
		*slot = f;
		qp->sq_tail++;
	}
	return n;
}

static uint16_t
f_post_recv(struct rpcr_rdev_qp *pqp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	struct fake_qp *qp = (struct fake_qp *)pqp;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct fake_recv *r = &qp->rq[qp->rq_tail++ % FQ];

		r->wr_id = wr[i].wr_id;
		r->addr = (uint8_t *)(uintptr_t)wr[i].sg_list[0].addr;
		r->len = wr[i].sg_list[0].length;
	}
	return n;
}

static uint16_t
f_poll_cq(struct rpcr_rdev_cq *pcq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct fake_cq *cq = (struct fake_cq *)pcq;
	uint16_t got = 0;

	while (got < n && cq->head != cq->tail) {
		struct rpcr_rdev_wc *w = &cq->q[cq->head++ % FQ];

		if (w->qp != NULL)
			wc[got++] = *w;
	}
	return got;
}

static const struct rpcr_rdev_fp_ops fake_fp = {
	.post_send = f_post_send,
	.post_recv = f_post_recv,
	.poll_cq = f_poll_cq,
};

static int
f_probe_fp(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	f_probe(dev, args);
	rpcr_rdev_set_fp_ops(dev, &fake_fp);
	return 0;
}

static const struct rpcr_rdev_ops fake_ops = {
	.probe = f_probe_fp,
	.remove = f_remove,
	.info_get = f_info,
	.pd_alloc = f_pd_alloc,
	.pd_free = f_pd_free,
	.mr_reg = f_mr_reg,
	.mr_dereg = f_mr_dereg,
	.mw_alloc = f_mw_alloc,
	.mw_free = f_mw_free,
	.cq_create = f_cq_create,
	.cq_destroy = f_cq_destroy,
	.qp_create = f_qp_create,
	.qp_destroy = f_qp_destroy,
	.listen = f_listen,
	.listener_close = f_listener_close,
	.connect = f_connect,
	.accept = f_accept,
	.reject = f_reject,
	.disconnect = f_disconnect,
};

static const char *const fake_args[] = {"mw", NULL};
static struct rpcr_rdev_driver fake_driver = {.ops = &fake_ops, .args = fake_args};

RPCR_RDEV_REGISTER(fake, fake_driver);

void
cq_push(struct fake_cq *cq, const struct rpcr_rdev_wc *wc)
{
	cq->q[cq->tail++ % FQ] = *wc;
}

/* Deliver @len bytes into the QP's oldest posted receive. @return 0, -1 (none posted). */
int
deliver(struct fake_qp *qp, const void *msg, uint32_t len, uint32_t inv_rkey)
{
	struct fake_recv *r;
	struct rpcr_rdev_wc wc;

	if (qp->rq_head == qp->rq_tail)
		return -1;
	r = &qp->rq[qp->rq_head++ % FQ];
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = r->wr_id;
	wc.qp = &qp->pub;
	wc.opcode = RPCR_RDEV_WC_RECV;
	if (len > r->len) {
		wc.status = RPCR_RDEV_WC_LOC_LEN_ERR;
	} else {
		memcpy(r->addr, msg, len);
		wc.byte_len = len;
		if (inv_rkey != 0) {
			wc.flags = RPCR_RDEV_WC_F_WITH_INV;
			wc.invalidated_rkey = inv_rkey;
		}
	}
	cq_push(qp->rcq, &wc);
	return 0;
}

/* Complete every posted receive as flushed (the QP went to the error state). */
void
flush_recvs(struct fake_qp *qp)
{
	while (qp->rq_head != qp->rq_tail) {
		struct fake_recv *r = &qp->rq[qp->rq_head++ % FQ];
		struct rpcr_rdev_wc wc = {
			.wr_id = r->wr_id, .qp = &qp->pub, .status = RPCR_RDEV_WC_WR_FLUSH_ERR};

		cq_push(qp->rcq, &wc);
	}
}

/* The next send-queue WR the engine posted, or NULL. */
struct fake_wr *
take(struct fake_qp *qp)
{
	if (qp == NULL || qp->sq_head == qp->sq_tail)
		return NULL;
	return qp->sq[qp->sq_head++ % FQ];
}

/* Complete posted WRs up to and including the signalled ones, in order, with @status for
 * the first one completed (then successes). RDMA Reads copy @read_data (if given) into their
 * scatter lists. */
void
complete_sends(struct fake_qp *qp, uint32_t status, const uint8_t *read_data)
{
	uint32_t off = 0;

	while (qp->sq_done != qp->sq_tail) {
		struct fake_wr *f = qp->sq[qp->sq_done++ % FQ];
		uint16_t k;

		if (f->wr.opcode == RPCR_RDEV_WR_READ && read_data != NULL) {
			for (k = 0; k < f->wr.num_sge; k++) {
				memcpy((void *)(uintptr_t)f->sge[k].addr, read_data + off,
				       f->sge[k].length);
				off += f->sge[k].length;
			}
		}
		f->completed = true;
		if ((f->wr.flags & RPCR_RDEV_WR_F_SIGNALED) || status != RPCR_RDEV_WC_SUCCESS) {
			struct rpcr_rdev_wc wc = {.wr_id = f->wr.wr_id,
						  .qp = &qp->pub,
						  .status = status,
						  .opcode = f->wr.opcode == RPCR_RDEV_WR_READ
								    ? RPCR_RDEV_WC_RDMA_READ
								    : RPCR_RDEV_WC_SEND};

			cq_push(qp->scq, &wc);
			status = RPCR_RDEV_WC_SUCCESS;
		}
	}
}

void
event(enum rpcr_rdev_event_type type, struct fake_qp *qp, const void *pdata, uint8_t len)
{
	struct rpcr_rdev_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.qp = qp != NULL ? &qp->pub : NULL;
	if (len != 0)
		memcpy(ev.pdata, pdata, len);
	ev.pdata_len = len;
	rpcr_rdev_event_push(fake_dev, &ev);
}

void
polls(int n)
{
	int i;

	for (i = 0; i < n; i++)
		rpcr_xprt_poll(fake_poller);
}

/* Poll long enough for the timers (events, and timers that are due, every 50 us). */
void
poll_ms(uint32_t ms)
{
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * ms;
	uint32_t n = 0;

	/* Then 64 polls more, however slow they are: timers are looked at every 16 polls, so some
	 * look happens at a time after @end, and what they start goes out on the next poll (a loaded
	 * machine may stop the test for milliseconds after 64 fast polls before @end). */
	while (rte_rdtsc() < end)
		rpcr_xprt_poll(fake_poller);
	for (n = 0; n < 64; n++)
		rpcr_xprt_poll(fake_poller);
}

uint32_t
w32(const uint8_t *p, int i)
{
	return rpcr_xdr_load32(p + 4 * i);
}

uint32_t
words(uint8_t *buf, const uint32_t *w, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		rpcr_xdr_store32(buf + 4 * i, w[i]);
	return 4 * n;
}

/* RFC 8797 private data of a server: sizes, R bit, with or without rpcr's block. */
uint8_t
peer_pdata(uint8_t *buf, uint32_t send, uint32_t recv, bool r, uint32_t features)
{
	struct rpcr_proto_cm cm = {.remote_inv = r, .send_size = send, .recv_size = recv};
	struct rpcr_proto_cm_ext x = {.present = true, .features = features};

	rpcr_proto_cm_encode(&cm, buf, 8);
	if (features == UINT32_MAX)
		return 8;
	rpcr_proto_cm_ext_encode(&x, buf + 8, 12);
	return 20;
}

/* A reply: MSG, @credit granted, RPC accepted with @accept_stat, then @body. */
uint32_t
reply_msg(uint8_t *buf, uint32_t xid, uint32_t credit, uint32_t accept_stat, const void *body,
	  uint32_t blen)
{
	uint32_t w[13] = {xid, 1, credit, RPCR_PROTO_V1_MSG, 0, 0, 0, xid, 1, 0, 0, 0, accept_stat};
	uint32_t n = words(buf, w, 13);

	if (blen != 0)
		memcpy(buf + n, body, blen);
	return n + blen;
}
