/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A test driver, "mlx5model": the mlx5 driver's data path (mlx5_post_send(), mlx5_post_recv(),
 * mlx5_poll_cq(), unchanged) on the in-process queue model (mlx5_model.h), with a control path
 * of the model's own in place of rdma-core's: devices in one process share one model, a connect
 * finds the listener by its address, private data and events as rpcr_rdev.h says. For the
 * engine in one process (bench_xprt --loopback): instruction counts of the engine and the mlx5
 * data path per call, beside shm's. Linked only into test programs (whole, for its constructor).
 *
 * Fast path: the driver's functions, then the model run at once (mm_step()) after each burst
 * posted, so that everything is deterministic and nothing runs behind the caller: the model's
 * instructions fall outside drivers/ and lib/ for callgrind.
 *
 * Not modelled: invalidation of registrations (windows are: bound and invalidated by the
 * driver's UMR WQEs, so the engine registers through them), several processes.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "mlx5_internal.h"
#include "mlx5_model.h"
#include "mlx5_model_wq.h"

#define MD_INLINE 256
#define MD_SGE    16

static pthread_mutex_t md_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mm_dev *md_model; /* every device's: one fabric */
static unsigned int md_devs;

struct md_dev {
	struct vrb_dev vd; /* what the data path reaches: wake_fd, dp_priv (the QP table) */
	struct rpcr_rdev *dev;
	uint32_t next_pd;
};

struct md_qp {
	struct mlx5_qp q; /* first */
	struct mm_qp *mq;
	struct md_qp *peer;
	struct rpcr_rdev *dev;
	bool connected;
};

struct md_listener {
	struct rpcr_rdev_listener pub; /* first */
	TAILQ_ENTRY(md_listener) next;
	char addr[64];
};

struct md_req {
	struct rpcr_rdev_conn_req pub; /* first */
	struct md_qp *client;
};

static TAILQ_HEAD(, md_listener) md_listeners = TAILQ_HEAD_INITIALIZER(md_listeners);

static struct md_dev *
mdd(const struct rpcr_rdev *dev)
{
	return (struct md_dev *)dev->priv;
}

/* ---- fast path ---- */

static uint16_t
md_post_send(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	uint16_t done = mlx5_post_send(qp, wr, n);

	if (done != 0)
		mm_step(md_model);
	return done;
}

static uint16_t
md_post_recv(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	uint16_t done = mlx5_post_recv(qp, wr, n);

	if (done != 0)
		mm_step(md_model); /* (a Send waiting for a receive goes now) */
	return done;
}

static const struct rpcr_rdev_fp_ops md_fp = {
	.post_send = md_post_send,
	.post_recv = md_post_recv,
	.poll_cq = mlx5_poll_cq,
};

/* ---- control path ---- */

static int
md_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	struct md_dev *d = calloc(1, sizeof(*d));

	RTE_SET_USED(args);
	if (d == NULL)
		return -ENOMEM;
	d->dev = dev;
	d->vd.dev = dev;
	d->vd.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	d->vd.dp_priv = calloc(1, sizeof(struct mlx5_qp_table));
	if (d->vd.dp_priv == NULL || d->vd.wake_fd < 0) {
		free(d->vd.dp_priv);
		free(d);
		return -ENOMEM;
	}
	snprintf(d->vd.ibname, sizeof(d->vd.ibname), "mlx5model%u", dev->id);
	pthread_mutex_lock(&md_lock);
	if (md_model == NULL)
		md_model = mm_dev_new(NULL);
	md_devs++;
	pthread_mutex_unlock(&md_lock);
	dev->priv = d;
	rpcr_rdev_set_fp_ops(dev, &md_fp);
	return 0;
}

static int
md_remove(struct rpcr_rdev *dev)
{
	struct md_dev *d = mdd(dev);

	mlx5_qpt_free(d->vd.dp_priv);
	close(d->vd.wake_fd);
	free(d);
	dev->priv = NULL;
	pthread_mutex_lock(&md_lock);
	if (--md_devs == 0 && md_model != NULL) {
		mm_dev_free(md_model);
		md_model = NULL;
	}
	pthread_mutex_unlock(&md_lock);
	return 0;
}

static int
md_info_get(struct rpcr_rdev *dev, struct rpcr_rdev_info *info)
{
	RTE_SET_USED(dev);
	info->caps = RPCR_RDEV_CAP_SEND_INV | RPCR_RDEV_CAP_MW;
	info->max_qp = 16;
	info->max_cq = 16;
	info->max_mr = 256;
	info->max_mr_size = 1ull << 40;
	info->max_qp_wr = 4096;
	info->max_cqe = 65536;
	info->max_sge = MD_SGE;
	info->max_inline = MD_INLINE;
	info->max_pdata = RPCR_RDEV_PDATA_MAX;
	info->max_msg_size = 1u << 30;
	return 0;
}

static struct rpcr_rdev_pd *
md_pd_alloc(struct rpcr_rdev *dev)
{
	struct rpcr_rdev_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->dev = dev;
	pd->id = mdd(dev)->next_pd++;
	return pd;
}

static int
md_pd_free(struct rpcr_rdev_pd *pd)
{
	free(pd);
	return 0;
}

static struct rpcr_rdev_mr *
md_mr_reg(struct rpcr_rdev_pd *pd, void *addr, size_t len, uint32_t access)
{
	struct rpcr_rdev_mr *mr = calloc(1, sizeof(*mr));
	uint32_t a = ((access & RPCR_RDEV_ACCESS_LOCAL_WRITE) ? MM_LOCAL_WRITE : 0) |
		     ((access & RPCR_RDEV_ACCESS_REMOTE_WRITE) ? MM_REMOTE_WRITE : 0) |
		     ((access & RPCR_RDEV_ACCESS_REMOTE_READ) ? MM_REMOTE_READ : 0) |
		     ((access & RPCR_RDEV_ACCESS_REMOTE_INV) ? MM_REMOTE_INV : 0) |
		     ((access & RPCR_RDEV_ACCESS_MW_BIND) ? MM_MW_BIND : 0);

	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	pthread_mutex_lock(&md_lock);
	mr->lkey = mr->rkey = mm_reg(md_model, addr, len, a);
	pthread_mutex_unlock(&md_lock);
	return mr;
}

static int
md_mr_dereg(struct rpcr_rdev_mr *mr)
{
	int rc;

	pthread_mutex_lock(&md_lock);
	rc = mm_dereg(md_model, mr->lkey);
	pthread_mutex_unlock(&md_lock);
	if (rc != 0)
		return -EBUSY; /* a window is bound over it */
	free(mr);
	return 0;
}

/* Windows: the model's, bound and invalidated by the driver's UMR WQEs. */
static struct rpcr_rdev_mw *
md_mw_alloc(struct rpcr_rdev_pd *pd)
{
	struct rpcr_rdev_mw *mw = calloc(1, sizeof(*mw));

	if (mw == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	mw->pd = pd;
	pthread_mutex_lock(&md_lock);
	mw->rkey = mm_mw_alloc(md_model);
	pthread_mutex_unlock(&md_lock);
	mw->next_rkey = (mw->rkey & ~0xffu) | ((mw->rkey + 1) & 0xffu);
	return mw;
}

static int
md_mw_free(struct rpcr_rdev_mw *mw)
{
	pthread_mutex_lock(&md_lock);
	mm_mw_free(md_model, mw->rkey);
	pthread_mutex_unlock(&md_lock);
	free(mw);
	return 0;
}

static struct rpcr_rdev_cq *
md_cq_create(struct rpcr_rdev *dev, uint32_t depth)
{
	struct mlx5_cq *cq = calloc(1, sizeof(*cq));
	struct mlx5dv_cq dv;

	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->vc.vd = &mdd(dev)->vd;
	rte_spinlock_init(&cq->vc.grave_lock);
	pthread_mutex_lock(&md_lock);
	mm_cq_new(md_model, mmw_pow2up(depth + 1), 64, &dv);
	pthread_mutex_unlock(&md_lock);
	if (mlx5_cq_attach(cq, &dv, mdd(dev)->vd.dp_priv) != 0) {
		free(cq);
		rte_errno = EINVAL;
		return NULL;
	}
	cq->vc.pub.dev_id = dev->id;
	cq->vc.pub.depth = depth;
	return &cq->vc.pub;
}

static int
md_cq_destroy(struct rpcr_rdev_cq *cq)
{
	free(cq); /* (its model ring stays with the model) */
	return 0;
}

static struct rpcr_rdev_qp *
md_qp_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_qp_attr *attr)
{
	struct md_dev *d = mdd(pd->dev);
	struct md_qp *qp;
	struct mlx5dv_qp dv;
	uint32_t body, wqe, qpn;
	int rc;

	if (attr->max_send_sge > MD_SGE || attr->max_recv_sge > MD_SGE ||
	    attr->max_inline > MD_INLINE) {
		rte_errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* Queues as libmlx5 sizes them for an RC QP: every WQE slot holds a window bind. */
	body = RTE_MAX(attr->max_send_sge * 16, RTE_ALIGN_CEIL(4 + attr->max_inline, 16u));
	wqe = RTE_MAX(RTE_ALIGN_CEIL(32 + body, 64u), MLX5_UMR_BIND_BBS * 64u); /* binds */
	qp->dev = pd->dev;
	qp->q.vq.vd = &d->vd;
	qp->q.vq.scq = (struct vrb_cq *)attr->send_cq;
	qp->q.vq.rcq = (struct vrb_cq *)attr->recv_cq;
	qp->q.vq.max_inline = attr->max_inline;
	qp->q.vq.send_inv = true;
	qp->q.vq.pub.attr = *attr;
	pthread_mutex_lock(&md_lock);
	qp->mq = mm_qp_new(md_model, NULL, NULL, mmw_pow2up(attr->max_send_wr * wqe / 64),
			   mmw_pow2up(RTE_MAX(attr->max_recv_wr, 1u)),
			   mmw_pow2up(RTE_MAX(16u, attr->max_recv_sge * 16)), &dv, &qpn);
	pthread_mutex_unlock(&md_lock);
	mm_qp_set_cqs(qp->mq, mm_cq_of(md_model, ((struct mlx5_cq *)attr->send_cq)->cqn),
		      mm_cq_of(md_model, ((struct mlx5_cq *)attr->recv_cq)->cqn));
	rc = mlx5_qp_attach(&qp->q, &dv, qpn, true);
	if (rc == 0)
		rc = mlx5_qpt_insert(d->vd.dp_priv, &qp->q);
	if (rc != 0) {
		mlx5_qp_detach(&qp->q);
		free(qp);
		rte_errno = -rc;
		return NULL;
	}
	qp->q.vq.pub.dev_id = pd->dev->id;
	qp->q.vq.pub.qp_num = qpn;
	qp->q.vq.pub.pd = pd;
	return &qp->q.vq.pub;
}

static void
push(struct rpcr_rdev *dev, enum rpcr_rdev_event_type type, struct md_qp *qp, int status,
     const void *pdata, uint8_t len)
{
	struct rpcr_rdev_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.qp = qp != NULL ? &qp->q.vq.pub : NULL;
	ev.status = status;
	ev.pdata_len = len;
	if (len != 0)
		memcpy(ev.pdata, pdata, len);
	(void)rpcr_rdev_event_push(dev, &ev);
}

/* Both ends to error (everything outstanding flushes), each told unless @quiet is its own. */
static void
md_break(struct md_qp *qp, bool tell_self)
{
	struct md_qp *peer = qp->peer;

	if (!qp->connected)
		return;
	qp->connected = false;
	__atomic_store_n(&qp->q.vq.in_error, true, __ATOMIC_RELAXED);
	mm_qp_error(qp->mq);
	if (tell_self)
		push(qp->dev, RPCR_RDEV_EVENT_DISCONNECTED, qp, 0, NULL, 0);
	if (peer != NULL && peer->connected) {
		peer->connected = false;
		mm_qp_error(peer->mq);
		push(peer->dev, RPCR_RDEV_EVENT_DISCONNECTED, peer, 0, NULL, 0);
		peer->peer = NULL;
	}
	qp->peer = NULL;
	mm_step(md_model);
}

static int
md_qp_destroy(struct rpcr_rdev_qp *pqp)
{
	struct md_qp *qp = (struct md_qp *)pqp;

	pthread_mutex_lock(&md_lock);
	md_break(qp, false);
	mm_qp_forget(md_model, qp->mq);
	pthread_mutex_unlock(&md_lock);
	(void)rpcr_rdev_event_purge_qp(qp->dev, pqp);
	mlx5_qpt_remove(mdd(qp->dev)->vd.dp_priv, &qp->q);
	mlx5_qp_detach(&qp->q);
	free(qp);
	return 0;
}

static struct rpcr_rdev_listener *
md_listen(struct rpcr_rdev *dev, const char *addr, int backlog)
{
	struct md_listener *l = calloc(1, sizeof(*l));

	RTE_SET_USED(backlog);
	if (l == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	l->pub.dev = dev;
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	pthread_mutex_lock(&md_lock);
	TAILQ_INSERT_TAIL(&md_listeners, l, next);
	pthread_mutex_unlock(&md_lock);
	return &l->pub;
}

static int
md_listener_close(struct rpcr_rdev_listener *pl)
{
	struct md_listener *l = (struct md_listener *)pl;

	pthread_mutex_lock(&md_lock);
	TAILQ_REMOVE(&md_listeners, l, next);
	pthread_mutex_unlock(&md_lock);
	free(l);
	return 0;
}

static int
md_connect(struct rpcr_rdev_qp *pqp, const char *addr, const void *pdata, uint8_t len)
{
	struct md_qp *qp = (struct md_qp *)pqp;
	struct md_listener *l;
	struct md_req *req;
	struct rpcr_rdev_event ev;

	pthread_mutex_lock(&md_lock);
	TAILQ_FOREACH (l, &md_listeners, next)
		if (strcmp(l->addr, addr) == 0)
			break;
	pthread_mutex_unlock(&md_lock);
	if (l == NULL) {
		push(qp->dev, RPCR_RDEV_EVENT_CONNECT_ERROR, qp, -ECONNREFUSED, NULL, 0);
		return 0;
	}
	req = calloc(1, sizeof(*req));
	if (req == NULL)
		return -ENOMEM;
	req->pub.dev = l->pub.dev;
	req->client = qp;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCR_RDEV_EVENT_CONNECT_REQUEST;
	ev.listener = &l->pub;
	ev.req = &req->pub;
	ev.pdata_len = len;
	if (len != 0)
		memcpy(ev.pdata, pdata, len);
	ev.peer.ss_family = AF_UNSPEC;
	return rpcr_rdev_event_push(l->pub.dev, &ev);
}

static int
md_accept(struct rpcr_rdev_qp *pqp, struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	struct md_qp *qp = (struct md_qp *)pqp;
	struct md_req *req = (struct md_req *)preq;
	struct md_qp *c = req->client;

	pthread_mutex_lock(&md_lock);
	mm_connect(c->mq, qp->mq);
	qp->peer = c;
	c->peer = qp;
	qp->connected = c->connected = true;
	pthread_mutex_unlock(&md_lock);
	push(qp->dev, RPCR_RDEV_EVENT_ESTABLISHED, qp, 0, NULL, 0);
	push(c->dev, RPCR_RDEV_EVENT_ESTABLISHED, c, 0, pdata, len);
	free(req);
	return 0;
}

static int
md_reject(struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	struct md_req *req = (struct md_req *)preq;

	push(req->client->dev, RPCR_RDEV_EVENT_REJECTED, req->client, -ECONNREFUSED, pdata, len);
	free(req);
	return 0;
}

static int
md_disconnect(struct rpcr_rdev_qp *pqp)
{
	struct md_qp *qp = (struct md_qp *)pqp;

	pthread_mutex_lock(&md_lock);
	md_break(qp, true);
	pthread_mutex_unlock(&md_lock);
	return 0;
}

static const struct rpcr_rdev_ops md_ops = {
	.probe = md_probe,
	.remove = md_remove,
	.info_get = md_info_get,
	.pd_alloc = md_pd_alloc,
	.pd_free = md_pd_free,
	.mr_reg = md_mr_reg,
	.mr_dereg = md_mr_dereg,
	.mw_alloc = md_mw_alloc,
	.mw_free = md_mw_free,
	.cq_create = md_cq_create,
	.cq_destroy = md_cq_destroy,
	.qp_create = md_qp_create,
	.qp_destroy = md_qp_destroy,
	.listen = md_listen,
	.listener_close = md_listener_close,
	.connect = md_connect,
	.accept = md_accept,
	.reject = md_reject,
	.disconnect = md_disconnect,
};

static const char *const md_args[] = {NULL};

static struct rpcr_rdev_driver md_driver = {
	.ops = &md_ops,
	.args = md_args,
};

RPCR_RDEV_REGISTER(mlx5model, md_driver);
