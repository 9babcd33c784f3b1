/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The generic device layer: driver registry, device table, argument checks before any driver
 * sees a call, NULL ops answered -ENOTSUP in one place, the connection-event queue, and the
 * process's shareable memory regions.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_string_fns.h>
#include <rte_tailq.h>

#include "rpcr_rdev_driver.h"

RTE_LOG_REGISTER(rpcr_rdev_logtype, rpcr.rdev, INFO);

struct rpcr_rdev_fp_ops rpcr_rdev_fp_ops[RPCR_RDEV_MAX_DEVS];

static TAILQ_HEAD(, rpcr_rdev_driver) drivers = TAILQ_HEAD_INITIALIZER(drivers);

/* Device table; control path only, under dev_lock. */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpcr_rdev *devs[RPCR_RDEV_MAX_DEVS];
/* A slot taken by a device whose driver is still setting it up. */
#define DEV_RESERVED ((struct rpcr_rdev *)(uintptr_t)1)
/* Held while drivers hear of region changes, and by close: a device is never freed mid-call. */
static pthread_mutex_t notify_lock = PTHREAD_MUTEX_INITIALIZER;

void
rpcr_rdev_driver_register(struct rpcr_rdev_driver *drv)
{
	TAILQ_INSERT_TAIL(&drivers, drv, next);
}

int
rpcr_rdev_drivers(const char **names, int n)
{
	const struct rpcr_rdev_driver *d;
	int i = 0;

	TAILQ_FOREACH (d, &drivers, next) {
		if (i < n && names != NULL)
			names[i] = d->name;
		i++;
	}
	return i;
}

static const struct rpcr_rdev_driver *
driver_find(const char *name, size_t len)
{
	const struct rpcr_rdev_driver *d;

	TAILQ_FOREACH (d, &drivers, next)
		if (strlen(d->name) == len && strncmp(d->name, name, len) == 0)
			return d;
	return NULL;
}

/* A fast-path table for devices that are not open: every burst does nothing. */
static uint16_t
dummy_post_send(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(wr);
	RTE_SET_USED(n);
	rte_errno = ENODEV;
	return 0;
}

static uint16_t
dummy_post_recv(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(wr);
	RTE_SET_USED(n);
	rte_errno = ENODEV;
	return 0;
}

static uint16_t
dummy_poll_cq(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(wc);
	RTE_SET_USED(n);
	return 0;
}

static uint16_t
dummy_post_srq_recv(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	RTE_SET_USED(srq);
	RTE_SET_USED(wr);
	RTE_SET_USED(n);
	rte_errno = ENODEV;
	return 0;
}

static const struct rpcr_rdev_fp_ops dummy_fp = {
	.post_send = dummy_post_send,
	.post_recv = dummy_post_recv,
	.poll_cq = dummy_poll_cq,
	.post_srq_recv = dummy_post_srq_recv,
};

RTE_INIT(rdev_fp_init)
{
	int i;

	for (i = 0; i < RPCR_RDEV_MAX_DEVS; i++)
		rpcr_rdev_fp_ops[i] = dummy_fp;
}

void
rpcr_rdev_set_fp_ops(struct rpcr_rdev *dev, const struct rpcr_rdev_fp_ops *fp)
{
	rpcr_rdev_fp_ops[dev->id] = *fp;
	/* (A driver without shared receive queues: its SRQs cannot exist, the entry stays safe.) */
	if (fp->post_srq_recv == NULL)
		rpcr_rdev_fp_ops[dev->id].post_srq_recv = dummy_post_srq_recv;
}

struct rpcr_rdev *
rpcr_rdev_open(const char *devargs)
{
	const struct rpcr_rdev_driver *drv;
	struct rte_kvargs *kv = NULL;
	struct rpcr_rdev *dev;
	const char *sep;
	size_t nlen;
	int id, rc;

	if (devargs == NULL || devargs[0] == '\0') {
		rte_errno = EINVAL;
		return NULL;
	}
	sep = strpbrk(devargs, ":,");
	nlen = sep != NULL ? (size_t)(sep - devargs) : strlen(devargs);
	drv = driver_find(devargs, nlen);
	if (drv == NULL) {
		RPCR_RDEV_LOG(ERR, "no driver for \"%s\"", devargs);
		rte_errno = ENOENT;
		return NULL;
	}
	if (sep != NULL && sep[1] != '\0') {
		kv = rte_kvargs_parse(sep + 1, (const char *const *)drv->args);
		if (kv == NULL) {
			RPCR_RDEV_LOG(ERR, "%s: bad arguments \"%s\"", drv->name, sep + 1);
			rte_errno = EINVAL;
			return NULL;
		}
	}

	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		rte_kvargs_free(kv);
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_strscpy(dev->name, devargs, sizeof(dev->name));
	dev->driver = drv;
	pthread_mutex_init(&dev->ev_lock, NULL);
	TAILQ_INIT(&dev->events);
	dev->ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (dev->ev_fd < 0) {
		rc = -errno;
		goto out_free;
	}

	/* Reserve a slot; the device is published only once its driver has set it up. */
	pthread_mutex_lock(&dev_lock);
	for (id = 0; id < RPCR_RDEV_MAX_DEVS && devs[id] != NULL; id++)
		;
	if (id == RPCR_RDEV_MAX_DEVS) {
		pthread_mutex_unlock(&dev_lock);
		rc = -ENOSPC;
		goto out_close;
	}
	dev->id = (uint16_t)id;
	devs[id] = DEV_RESERVED;
	pthread_mutex_unlock(&dev_lock);

	rc = drv->ops->probe(dev, kv);
	pthread_mutex_lock(&dev_lock);
	devs[id] = rc == 0 ? dev : NULL;
	pthread_mutex_unlock(&dev_lock);
	if (rc != 0) {
		RPCR_RDEV_LOG(ERR, "%s: probe failed: %s", dev->name, strerror(-rc));
		goto out_close;
	}
	rte_kvargs_free(kv);
	RPCR_RDEV_LOG(DEBUG, "device %u: %s", dev->id, dev->name);
	return dev;

out_close:
	close(dev->ev_fd);
out_free:
	pthread_mutex_destroy(&dev->ev_lock);
	free(dev);
	rte_kvargs_free(kv);
	rte_errno = -rc;
	return NULL;
}

int
rpcr_rdev_close(struct rpcr_rdev *dev)
{
	struct rpcr_rdev_event_entry *e;
	int rc;

	if (dev == NULL)
		return -EINVAL;
	if (__atomic_load_n(&dev->nobjs, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	/* Unpublish first, so that no region notification reaches a device being removed. */
	pthread_mutex_lock(&notify_lock);
	pthread_mutex_lock(&dev_lock);
	devs[dev->id] = DEV_RESERVED;
	pthread_mutex_unlock(&dev_lock);
	pthread_mutex_unlock(&notify_lock);
	rc = dev->driver->ops->remove != NULL ? dev->driver->ops->remove(dev) : 0;
	pthread_mutex_lock(&dev_lock);
	if (rc != 0) {
		devs[dev->id] = dev;
		pthread_mutex_unlock(&dev_lock);
		return rc;
	}
	devs[dev->id] = NULL;
	rpcr_rdev_fp_ops[dev->id] = dummy_fp;
	pthread_mutex_unlock(&dev_lock);
	while ((e = TAILQ_FIRST(&dev->events)) != NULL) {
		TAILQ_REMOVE(&dev->events, e, next);
		free(e);
	}
	close(dev->ev_fd);
	pthread_mutex_destroy(&dev->ev_lock);
	free(dev);
	return 0;
}

uint16_t
rpcr_rdev_id(const struct rpcr_rdev *dev)
{
	return dev->id;
}

struct rpcr_rdev *
rpcr_rdev_get(uint16_t id)
{
	struct rpcr_rdev *dev;

	if (id >= RPCR_RDEV_MAX_DEVS)
		return NULL;
	pthread_mutex_lock(&dev_lock);
	dev = devs[id];
	pthread_mutex_unlock(&dev_lock);
	return dev == DEV_RESERVED ? NULL : dev;
}

int
rpcr_rdev_info_get(struct rpcr_rdev *dev, struct rpcr_rdev_info *info)
{
	if (dev == NULL || info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	rte_strscpy(info->driver, dev->driver->name, sizeof(info->driver));
	rte_strscpy(info->name, dev->name, sizeof(info->name));
	if (dev->driver->ops->info_get == NULL)
		return -ENOTSUP;
	return dev->driver->ops->info_get(dev, info);
}

int
rpcr_rdev_stats_get(struct rpcr_rdev *dev, struct rpcr_rdev_stats *stats)
{
	if (dev == NULL || stats == NULL)
		return -EINVAL;
	*stats = dev->stats;
	return 0;
}

/* Resolve an op or fail the call with ENOTSUP. */
#define OP(dev, name) ((dev)->driver->ops->name)

#define NEED_OP_PTR(dev, name)               \
	do {                                 \
		if (OP(dev, name) == NULL) { \
			rte_errno = ENOTSUP; \
			return NULL;         \
		}                            \
	} while (0)

#define NEED_OP_INT(dev, name)             \
	do {                               \
		if (OP(dev, name) == NULL) \
			return -ENOTSUP;   \
	} while (0)

struct rpcr_rdev_pd *
rpcr_rdev_pd_alloc(struct rpcr_rdev *dev)
{
	struct rpcr_rdev_pd *pd;

	if (dev == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(dev, pd_alloc);
	pd = OP(dev, pd_alloc)(dev);
	if (pd != NULL)
		__atomic_fetch_add(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return pd;
}

int
rpcr_rdev_pd_free(struct rpcr_rdev_pd *pd)
{
	struct rpcr_rdev *dev;
	int rc;

	if (pd == NULL)
		return -EINVAL;
	if (pd->refs != 0)
		return -EBUSY;
	dev = pd->dev;
	NEED_OP_INT(dev, pd_free);
	rc = OP(dev, pd_free)(pd);
	if (rc == 0)
		__atomic_fetch_sub(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return rc;
}

#define ACCESS_ALL                                                      \
	(RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE | \
	 RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_INV | RPCR_RDEV_ACCESS_MW_BIND)

struct rpcr_rdev_mr *
rpcr_rdev_mr_reg(struct rpcr_rdev_pd *pd, void *addr, size_t len, uint32_t access)
{
	struct rpcr_rdev_mr *mr;

	/* Verbs: remote write needs local write too (IBV_ACCESS_REMOTE_WRITE rule). */
	if (pd == NULL || addr == NULL || len == 0 || (access & ~ACCESS_ALL) != 0 ||
	    ((access & RPCR_RDEV_ACCESS_REMOTE_WRITE) &&
	     !(access & RPCR_RDEV_ACCESS_LOCAL_WRITE)) ||
	    (uintptr_t)addr + len < (uintptr_t)addr) {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(pd->dev, mr_reg);
	mr = OP(pd->dev, mr_reg)(pd, addr, len, access);
	if (mr != NULL) {
		__atomic_fetch_add(&pd->dev->stats.mr_reg, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return mr;
}

int
rpcr_rdev_mr_dereg(struct rpcr_rdev_mr *mr)
{
	struct rpcr_rdev_pd *pd;
	int rc;

	if (mr == NULL)
		return -EINVAL;
	pd = mr->pd;
	NEED_OP_INT(pd->dev, mr_dereg);
	rc = OP(pd->dev, mr_dereg)(mr);
	if (rc == 0) {
		__atomic_fetch_add(&pd->dev->stats.mr_dereg, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

int
rpcr_rdev_mr_invalidate(struct rpcr_rdev_mr *mr)
{
	int rc;

	if (mr == NULL)
		return -EINVAL;
	NEED_OP_INT(mr->pd->dev, mr_invalidate);
	rc = OP(mr->pd->dev, mr_invalidate)(mr);
	if (rc == 0)
		__atomic_fetch_add(&mr->pd->dev->stats.mr_invalidate, 1, __ATOMIC_RELAXED);
	return rc;
}

int
rpcr_rdev_mr_rekey(struct rpcr_rdev_mr *mr)
{
	if (mr == NULL)
		return -EINVAL;
	NEED_OP_INT(mr->pd->dev, mr_rekey);
	return OP(mr->pd->dev, mr_rekey)(mr);
}

struct rpcr_rdev_mw *
rpcr_rdev_mw_alloc(struct rpcr_rdev_pd *pd)
{
	struct rpcr_rdev_mw *mw;

	if (pd == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (OP(pd->dev, mw_alloc) == NULL) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	mw = OP(pd->dev, mw_alloc)(pd);
	if (mw != NULL) {
		__atomic_fetch_add(&pd->dev->stats.mw_alloc, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return mw;
}

int
rpcr_rdev_mw_free(struct rpcr_rdev_mw *mw)
{
	struct rpcr_rdev_pd *pd;
	int rc;

	if (mw == NULL)
		return -EINVAL;
	pd = mw->pd;
	NEED_OP_INT(pd->dev, mw_free);
	rc = OP(pd->dev, mw_free)(mw);
	if (rc == 0) {
		__atomic_fetch_add(&pd->dev->stats.mw_free, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

struct rpcr_rdev_cq *
rpcr_rdev_cq_create(struct rpcr_rdev *dev, uint32_t depth)
{
	struct rpcr_rdev_cq *cq;

	if (dev == NULL || depth == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(dev, cq_create);
	cq = OP(dev, cq_create)(dev, depth);
	if (cq != NULL)
		__atomic_fetch_add(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return cq;
}

int
rpcr_rdev_cq_destroy(struct rpcr_rdev_cq *cq)
{
	struct rpcr_rdev *dev;
	int rc;

	if (cq == NULL)
		return -EINVAL;
	dev = rpcr_rdev_get(cq->dev_id);
	if (dev == NULL)
		return -EINVAL;
	NEED_OP_INT(dev, cq_destroy);
	rc = OP(dev, cq_destroy)(cq);
	if (rc == 0)
		__atomic_fetch_sub(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return rc;
}

int
rpcr_rdev_cq_event_fd(struct rpcr_rdev_cq *cq)
{
	struct rpcr_rdev *dev = cq != NULL ? rpcr_rdev_get(cq->dev_id) : NULL;

	if (dev == NULL)
		return -EINVAL;
	NEED_OP_INT(dev, cq_event_fd);
	return OP(dev, cq_event_fd)(cq);
}

int
rpcr_rdev_cq_arm(struct rpcr_rdev_cq *cq)
{
	struct rpcr_rdev *dev = cq != NULL ? rpcr_rdev_get(cq->dev_id) : NULL;

	if (dev == NULL)
		return -EINVAL;
	NEED_OP_INT(dev, cq_arm);
	return OP(dev, cq_arm)(cq);
}

void
rpcr_rdev_cq_disarm(struct rpcr_rdev_cq *cq)
{
	struct rpcr_rdev *dev = cq != NULL ? rpcr_rdev_get(cq->dev_id) : NULL;

	if (dev != NULL && OP(dev, cq_disarm) != NULL)
		OP(dev, cq_disarm)(cq);
}

static int event_purge(struct rpcr_rdev *dev, const struct rpcr_rdev_qp *qp,
		       const struct rpcr_rdev_conn_req *req, const struct rpcr_rdev_srq *srq);

struct rpcr_rdev_srq *
rpcr_rdev_srq_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_srq_attr *attr)
{
	struct rpcr_rdev_srq *srq;

	if (pd == NULL || attr == NULL || attr->max_wr == 0 || attr->max_sge == 0 ||
	    attr->limit > attr->max_wr) {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(pd->dev, srq_create);
	srq = OP(pd->dev, srq_create)(pd, attr);
	if (srq != NULL) {
		__atomic_fetch_add(&pd->dev->nobjs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return srq;
}

int
rpcr_rdev_srq_destroy(struct rpcr_rdev_srq *srq)
{
	struct rpcr_rdev_pd *pd;
	int rc;

	if (srq == NULL)
		return -EINVAL;
	pd = srq->pd;
	NEED_OP_INT(pd->dev, srq_destroy);
	rc = OP(pd->dev, srq_destroy)(srq);
	if (rc == 0) {
		/* (The driver queues no event for it any more.) */
		event_purge(pd->dev, NULL, NULL, srq);
		__atomic_fetch_sub(&pd->dev->nobjs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

int
rpcr_rdev_srq_arm(struct rpcr_rdev_srq *srq, uint32_t limit)
{
	if (srq == NULL || limit > srq->max_wr)
		return -EINVAL;
	NEED_OP_INT(srq->pd->dev, srq_arm);
	return OP(srq->pd->dev, srq_arm)(srq, limit);
}

struct rpcr_rdev_qp *
rpcr_rdev_qp_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_qp_attr *attr)
{
	struct rpcr_rdev_qp *qp;
	bool srq;

	srq = attr != NULL && attr->srq != NULL;
	if (pd == NULL || attr == NULL || attr->send_cq == NULL || attr->recv_cq == NULL ||
	    attr->send_cq->dev_id != pd->dev->id || attr->recv_cq->dev_id != pd->dev->id ||
	    attr->max_send_wr == 0 || (!srq && attr->max_recv_wr == 0) || attr->max_send_sge == 0 ||
	    (!srq && attr->max_recv_sge == 0) || (srq && attr->srq->pd != pd)) {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(pd->dev, qp_create);
	qp = OP(pd->dev, qp_create)(pd, attr);
	if (qp != NULL) {
		__atomic_fetch_add(&pd->dev->nobjs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return qp;
}

int
rpcr_rdev_qp_destroy(struct rpcr_rdev_qp *qp)
{
	struct rpcr_rdev_pd *pd;
	int rc;

	if (qp == NULL)
		return -EINVAL;
	pd = qp->pd;
	NEED_OP_INT(pd->dev, qp_destroy);
	/* After the driver has cut the QP from its connection: no event can name it later. */
	rc = OP(pd->dev, qp_destroy)(qp);
	if (rc == 0)
		rpcr_rdev_event_purge_qp(pd->dev, qp);
	if (rc == 0) {
		__atomic_fetch_sub(&pd->dev->nobjs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&pd->refs, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

struct rpcr_rdev_listener *
rpcr_rdev_listen(struct rpcr_rdev *dev, const char *addr, int backlog)
{
	struct rpcr_rdev_listener *l;

	if (dev == NULL || addr == NULL || addr[0] == '\0') {
		rte_errno = EINVAL;
		return NULL;
	}
	NEED_OP_PTR(dev, listen);
	l = OP(dev, listen)(dev, addr, backlog > 0 ? backlog : 128);
	if (l != NULL)
		__atomic_fetch_add(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return l;
}

int
rpcr_rdev_listener_close(struct rpcr_rdev_listener *l)
{
	struct rpcr_rdev *dev;
	int rc;

	if (l == NULL)
		return -EINVAL;
	dev = l->dev;
	NEED_OP_INT(dev, listener_close);
	rc = OP(dev, listener_close)(l);
	if (rc == 0)
		__atomic_fetch_sub(&dev->nobjs, 1, __ATOMIC_RELAXED);
	return rc;
}

int
rpcr_rdev_connect(struct rpcr_rdev_qp *qp, const char *addr, const void *pdata, uint8_t len)
{
	if (qp == NULL || addr == NULL || (len != 0 && pdata == NULL))
		return -EINVAL;
	if (len > RPCR_RDEV_PDATA_MAX)
		return -EMSGSIZE;
	NEED_OP_INT(qp->pd->dev, connect);
	return OP(qp->pd->dev, connect)(qp, addr, pdata, len);
}

int
rpcr_rdev_accept(struct rpcr_rdev_qp *qp, struct rpcr_rdev_conn_req *req, const void *pdata,
		 uint8_t len)
{
	if (qp == NULL || req == NULL || (len != 0 && pdata == NULL))
		return -EINVAL;
	if (len > RPCR_RDEV_PDATA_MAX)
		return -EMSGSIZE;
	/* (Another handle of the same device is the driver's to judge.) */
	if (req->dev->driver != qp->pd->dev->driver)
		return -EXDEV;
	NEED_OP_INT(qp->pd->dev, accept);
	return OP(qp->pd->dev, accept)(qp, req, pdata, len);
}

int
rpcr_rdev_reject(struct rpcr_rdev_conn_req *req, const void *pdata, uint8_t len)
{
	if (req == NULL || (len != 0 && pdata == NULL))
		return -EINVAL;
	if (len > RPCR_RDEV_PDATA_MAX)
		return -EMSGSIZE;
	NEED_OP_INT(req->dev, reject);
	return OP(req->dev, reject)(req, pdata, len);
}

int
rpcr_rdev_disconnect(struct rpcr_rdev_qp *qp)
{
	if (qp == NULL)
		return -EINVAL;
	NEED_OP_INT(qp->pd->dev, disconnect);
	return OP(qp->pd->dev, disconnect)(qp);
}

/* ---- connection events ---- */

int
rpcr_rdev_event_push(struct rpcr_rdev *dev, const struct rpcr_rdev_event *ev)
{
	struct rpcr_rdev_event_entry *e = malloc(sizeof(*e));
	uint64_t one = 1;

	if (e == NULL)
		return -ENOMEM;
	e->ev = *ev;
	pthread_mutex_lock(&dev->ev_lock);
	TAILQ_INSERT_TAIL(&dev->events, e, next);
	/* The eventfd counts events (EFD_SEMAPHORE): readable while any is queued. */
	if (write(dev->ev_fd, &one, sizeof(one)) != sizeof(one))
		RPCR_RDEV_LOG(WARNING, "%s: event counter write failed", dev->name);
	pthread_mutex_unlock(&dev->ev_lock);
	return 0;
}

/* Remove @e from the queue (under ev_lock) and consume its count. */
static void
event_unlink(struct rpcr_rdev *dev, struct rpcr_rdev_event_entry *e)
{
	uint64_t v;

	TAILQ_REMOVE(&dev->events, e, next);
	if (read(dev->ev_fd, &v, sizeof(v)) != sizeof(v))
		RPCR_RDEV_LOG(WARNING, "%s: event counter read failed", dev->name);
	free(e);
}

/* Drop the queued events naming @qp, @req or @srq (those not NULL). */
static int
event_purge(struct rpcr_rdev *dev, const struct rpcr_rdev_qp *qp,
	    const struct rpcr_rdev_conn_req *req, const struct rpcr_rdev_srq *srq)
{
	struct rpcr_rdev_event_entry *e, *tmp;
	int n = 0;

	pthread_mutex_lock(&dev->ev_lock);
	RTE_TAILQ_FOREACH_SAFE (e, &dev->events, next, tmp) {
		if ((qp != NULL && e->ev.qp == qp) || (req != NULL && e->ev.req == req) ||
		    (srq != NULL && e->ev.srq == srq)) {
			event_unlink(dev, e);
			n++;
		}
	}
	pthread_mutex_unlock(&dev->ev_lock);
	return n;
}

int
rpcr_rdev_event_purge_qp(struct rpcr_rdev *dev, const struct rpcr_rdev_qp *qp)
{
	return qp != NULL ? event_purge(dev, qp, NULL, NULL) : 0;
}

int
rpcr_rdev_event_purge_req(struct rpcr_rdev *dev, const struct rpcr_rdev_conn_req *req)
{
	return req != NULL ? event_purge(dev, NULL, req, NULL) : 0;
}

int
rpcr_rdev_event_poll(struct rpcr_rdev *dev, struct rpcr_rdev_event *ev, int n)
{
	struct rpcr_rdev_event_entry *e;
	int i = 0;

	if (dev == NULL || ev == NULL || n <= 0)
		return 0;
	pthread_mutex_lock(&dev->ev_lock);
	while (i < n && (e = TAILQ_FIRST(&dev->events)) != NULL) {
		ev[i++] = e->ev;
		event_unlink(dev, e);
	}
	pthread_mutex_unlock(&dev->ev_lock);
	return i;
}

int
rpcr_rdev_event_wait(struct rpcr_rdev *dev, struct rpcr_rdev_event *ev, int timeout_ms)
{
	struct pollfd pfd;
	int rc;

	if (dev == NULL || ev == NULL)
		return -EINVAL;
	for (;;) {
		if (rpcr_rdev_event_poll(dev, ev, 1) == 1)
			return 1;
		pfd.fd = dev->ev_fd;
		pfd.events = POLLIN;
		rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc == 0)
			return rpcr_rdev_event_poll(dev, ev, 1);
	}
}

int
rpcr_rdev_event_fd(struct rpcr_rdev *dev)
{
	return dev != NULL ? dev->ev_fd : -EINVAL;
}

const char *
rpcr_rdev_event_str(enum rpcr_rdev_event_type type)
{
	switch (type) {
	case RPCR_RDEV_EVENT_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case RPCR_RDEV_EVENT_ESTABLISHED:
		return "ESTABLISHED";
	case RPCR_RDEV_EVENT_REJECTED:
		return "REJECTED";
	case RPCR_RDEV_EVENT_CONNECT_ERROR:
		return "CONNECT_ERROR";
	case RPCR_RDEV_EVENT_DISCONNECTED:
		return "DISCONNECTED";
	case RPCR_RDEV_EVENT_DEVICE_REMOVAL:
		return "DEVICE_REMOVAL";
	case RPCR_RDEV_EVENT_SRQ_LIMIT:
		return "SRQ_LIMIT";
	default:
		return "?";
	}
}

const char *
rpcr_rdev_wc_status_str(uint32_t status)
{
	switch (status) {
	case RPCR_RDEV_WC_SUCCESS:
		return "SUCCESS";
	case RPCR_RDEV_WC_LOC_LEN_ERR:
		return "LOC_LEN_ERR";
	case RPCR_RDEV_WC_LOC_QP_OP_ERR:
		return "LOC_QP_OP_ERR";
	case RPCR_RDEV_WC_LOC_PROT_ERR:
		return "LOC_PROT_ERR";
	case RPCR_RDEV_WC_MW_BIND_ERR:
		return "MW_BIND_ERR";
	case RPCR_RDEV_WC_WR_FLUSH_ERR:
		return "WR_FLUSH_ERR";
	case RPCR_RDEV_WC_LOC_ACCESS_ERR:
		return "LOC_ACCESS_ERR";
	case RPCR_RDEV_WC_REM_INV_REQ_ERR:
		return "REM_INV_REQ_ERR";
	case RPCR_RDEV_WC_REM_ACCESS_ERR:
		return "REM_ACCESS_ERR";
	case RPCR_RDEV_WC_REM_OP_ERR:
		return "REM_OP_ERR";
	case RPCR_RDEV_WC_RETRY_EXC_ERR:
		return "RETRY_EXC_ERR";
	case RPCR_RDEV_WC_RNR_RETRY_EXC_ERR:
		return "RNR_RETRY_EXC_ERR";
	case RPCR_RDEV_WC_GENERAL_ERR:
		return "GENERAL_ERR";
	default:
		return "?";
	}
}

/* ---- shareable memory regions ---- */

#define MAX_REGIONS RPCR_RDEV_MAX_REGIONS

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpcr_rdev_region regions[MAX_REGIONS];
static bool region_used[MAX_REGIONS];

/* Tell every open device about a region change. Called without region_lock held: a driver may
 * block here (shm waits for its peers to map the region). */
static void
regions_notify(const struct rpcr_rdev_region *added, int removed_id)
{
	struct rpcr_rdev *snap[RPCR_RDEV_MAX_DEVS];
	int i, n = 0;

	/* notify_lock keeps every device of the snapshot open until the drivers are done. */
	pthread_mutex_lock(&notify_lock);
	pthread_mutex_lock(&dev_lock);
	for (i = 0; i < RPCR_RDEV_MAX_DEVS; i++)
		if (devs[i] != NULL && devs[i] != DEV_RESERVED)
			snap[n++] = devs[i];
	pthread_mutex_unlock(&dev_lock);
	for (i = 0; i < n; i++) {
		const struct rpcr_rdev_ops *ops = snap[i]->driver->ops;

		if (added != NULL && ops->region_added != NULL)
			ops->region_added(snap[i], added);
		if (removed_id >= 0 && ops->region_removed != NULL)
			ops->region_removed(snap[i], (uint32_t)removed_id);
	}
	pthread_mutex_unlock(&notify_lock);
}

int
rpcr_rdev_region_add(void *base, size_t len, int fd, uint64_t fd_off, bool hugepage)
{
	struct rpcr_rdev_region r;
	uintptr_t b = (uintptr_t)base;
	int i, slot = -1;

	if (base == NULL || len == 0 || fd < 0 || b + len < b)
		return -EINVAL;
	pthread_mutex_lock(&region_lock);
	for (i = 0; i < MAX_REGIONS; i++) {
		uintptr_t rb;

		if (!region_used[i]) {
			if (slot < 0)
				slot = i;
			continue;
		}
		rb = (uintptr_t)regions[i].base;
		if (b < rb + regions[i].len && rb < b + len) {
			pthread_mutex_unlock(&region_lock);
			return -EINVAL;
		}
	}
	if (slot < 0) {
		pthread_mutex_unlock(&region_lock);
		return -ENOSPC;
	}
	regions[slot] = (struct rpcr_rdev_region){
		.base = base,
		.len = len,
		.fd = fd,
		.fd_off = fd_off,
		.id = (uint32_t)slot,
		.hugepage = hugepage,
	};
	region_used[slot] = true;
	r = regions[slot];
	pthread_mutex_unlock(&region_lock);
	regions_notify(&r, -1);
	return slot;
}

int
rpcr_rdev_region_del(int id)
{
	if (id < 0 || id >= MAX_REGIONS)
		return -ENOENT;
	pthread_mutex_lock(&region_lock);
	if (!region_used[id]) {
		pthread_mutex_unlock(&region_lock);
		return -ENOENT;
	}
	pthread_mutex_unlock(&region_lock);
	regions_notify(NULL, id);
	pthread_mutex_lock(&region_lock);
	region_used[id] = false;
	pthread_mutex_unlock(&region_lock);
	return 0;
}

int
rpcr_rdev_region_find(const void *addr, size_t len, struct rpcr_rdev_region *out)
{
	uintptr_t a = (uintptr_t)addr;
	int i, rc = -ENOENT;

	pthread_mutex_lock(&region_lock);
	for (i = 0; i < MAX_REGIONS; i++) {
		uintptr_t rb = (uintptr_t)regions[i].base;

		if (region_used[i] && a >= rb && a + len >= a && a + len <= rb + regions[i].len) {
			*out = regions[i];
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&region_lock);
	return rc;
}

int
rpcr_rdev_region_get(uint32_t id, struct rpcr_rdev_region *out)
{
	int rc = -ENOENT;

	if (id >= MAX_REGIONS)
		return -ENOENT;
	pthread_mutex_lock(&region_lock);
	if (region_used[id]) {
		*out = regions[id];
		rc = 0;
	}
	pthread_mutex_unlock(&region_lock);
	return rc;
}
