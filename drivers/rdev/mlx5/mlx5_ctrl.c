/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The mlx5 driver's control side: the ibverbs driver's control path (vrb_ops, vrb_probe_dp())
 * with this driver's data path (struct vrb_dp) under it.
 *
 * In order: probe opens the device as the ibverbs driver does, then mlx5_dev_check() asks
 * libmlx5 whether it is an mlx5 device (another is refused, naming the ibverbs driver) and makes
 * the device's QP table. Each CQ, once verbs created it, is attached to its ring
 * (mlx5dv_init_obj(), which also tells libmlx5 the CQ's consumer index is ours); each SRQ to its
 * WQEs and free list; each QP, once in INIT, to its queues and doorbells (and its SRQ) and
 * entered in the QP table. A QP's bookkeeping goes when
 * its CQs were found empty after its destruction (vrb_cq_bury()): out of the table, freed.
 *
 * libmlx5 is reached through a struct rpcr_mlx5_glue (mlx5_glue.h): linked
 * (-Dibverbs_link=shared), or dlopen()ed with rdma-core at the first probe (dlopen;
 * RPCR_RDMA_CORE_DIR as for libibverbs); or the test hook RPCR_MLX5_GLUE names instead.
 */

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "mlx5_glue.h"
#include "mlx5_internal.h"

/* ---- libmlx5, or what RPCR_MLX5_GLUE names ---- */

#ifndef RPCR_IBVERBS_DLOPEN
static const struct rpcr_mlx5_glue libmlx5_glue = {
	.version = RPCR_MLX5_GLUE_VERSION,
	.what = "libmlx5",
	.is_supported = mlx5dv_is_supported,
	.init_obj = mlx5dv_init_obj,
};
#else
static struct rpcr_mlx5_glue libmlx5_glue = {
	.version = RPCR_MLX5_GLUE_VERSION,
	.what = "libmlx5",
};
#endif

static const struct rpcr_mlx5_glue *mlx5_glue;
static pthread_once_t glue_once = PTHREAD_ONCE_INIT;
static int glue_rc = -ENODEV;

/* dlopen() @path and return its symbol @sym (NULL, said, when either is missing). */
static void *
load_sym(const char *path, const char *sym, const char *hint)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *p;

	if (h == NULL) {
		const char *why = dlerror();

		MLX5_LOG(ERR, "cannot load %s%s; no mlx5 devices", why != NULL ? why : path, hint);
		return NULL;
	}
	p = dlsym(h, sym);
	if (p == NULL) {
		MLX5_LOG(ERR, "%s has no %s; no mlx5 devices", path, sym);
		dlclose(h);
	}
	return p;
}

/*
 * Once: the test hook (RPCR_MLX5_GLUE=LIBRARY, its table), else libmlx5 (linked, or, in a dlopen
 * build, loaded from where libibverbs was: RPCR_RDMA_CORE_DIR or the usual paths; libibverbs is
 * loaded already, vrb_glue_init(), and libmlx5 binds to it).
 */
static void
glue_load(void)
{
	const char *hook = secure_getenv("RPCR_MLX5_GLUE");

	if (hook != NULL && hook[0] != '\0') {
		const struct rpcr_mlx5_glue *g = load_sym(hook, RPCR_MLX5_GLUE_SYM, "");

		if (g == NULL)
			return;
		if (g->version != RPCR_MLX5_GLUE_VERSION || g->is_supported == NULL ||
		    g->init_obj == NULL || (g->doorbell != NULL && g->srq_doorbell == NULL)) {
			MLX5_LOG(ERR, "%s: glue version %u, this driver's %u; no mlx5 devices",
				 hook, g->version, RPCR_MLX5_GLUE_VERSION);
			return;
		}
		MLX5_LOG(NOTICE, "queues from %s (RPCR_MLX5_GLUE=%s), not libmlx5",
			 g->what != NULL ? g->what : "?", hook);
		mlx5_glue = g;
		glue_rc = 0;
		return;
	}
#ifdef RPCR_IBVERBS_DLOPEN
	{
		const char *dir = secure_getenv("RPCR_RDMA_CORE_DIR");
		char path[PATH_MAX];
		void *p;
		int n;

		if (dir != NULL && dir[0] != '\0')
			n = snprintf(path, sizeof(path), "%s/libmlx5.so.1", dir);
		else
			n = snprintf(path, sizeof(path), "libmlx5.so.1");
		if (n < 0 || (size_t)n >= sizeof(path))
			return;
		p = load_sym(path, "mlx5dv_is_supported", " (Debian: ibverbs-providers)");
		if (p == NULL)
			return;
		memcpy(&libmlx5_glue.is_supported, &p, sizeof(p));
		p = load_sym(path, "mlx5dv_init_obj", "");
		if (p == NULL)
			return;
		memcpy(&libmlx5_glue.init_obj, &p, sizeof(p));
	}
#endif
	mlx5_glue = &libmlx5_glue;
	glue_rc = 0;
}

static int
mlx5_glue_init(void)
{
	pthread_once(&glue_once, glue_load);
	return glue_rc;
}

/* ---- the QP table ---- */

int
mlx5_qpt_insert(struct mlx5_qp_table *t, struct mlx5_qp *qp)
{
	uint32_t hi = (qp->qpn >> MLX5_QPT_SHIFT) & (MLX5_QPT_SIZE - 1);
	struct mlx5_qp **d = __atomic_load_n(&t->dir[hi], __ATOMIC_ACQUIRE);
	struct mlx5_qp *old;

	if (d == NULL) {
		/* QPs may be created from several threads: the first array in wins. */
		struct mlx5_qp **n = calloc(MLX5_QPT_SIZE, sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		if (__atomic_compare_exchange_n(&t->dir[hi], &d, n, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			d = n;
		else
			free(n);
	}
	/* A destroyed QP of the same number not yet buried: its last completions would be taken
	 * for the new one's. The device does not hand a number out again so soon; refused if so. */
	old = NULL;
	if (!__atomic_compare_exchange_n(&d[qp->qpn & (MLX5_QPT_SIZE - 1)], &old, qp, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		MLX5_LOG(ERR, "QP %u: its number still names a destroyed QP", qp->qpn);
		return -EBUSY;
	}
	return 0;
}

void
mlx5_qpt_remove(struct mlx5_qp_table *t, struct mlx5_qp *qp)
{
	struct mlx5_qp **d = __atomic_load_n(
		&t->dir[(qp->qpn >> MLX5_QPT_SHIFT) & (MLX5_QPT_SIZE - 1)], __ATOMIC_ACQUIRE);
	struct mlx5_qp *expect = qp;

	if (d != NULL)
		__atomic_compare_exchange_n(&d[qp->qpn & (MLX5_QPT_SIZE - 1)], &expect, NULL, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void
mlx5_qpt_free(struct mlx5_qp_table *t)
{
	unsigned int i;

	if (t == NULL)
		return;
	for (i = 0; i < MLX5_QPT_SIZE; i++)
		free(t->dir[i]);
	free(t);
}

/* ---- attaching queues ---- */

static bool
pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

int
mlx5_qp_attach(struct mlx5_qp *qp, const struct mlx5dv_qp *dv, uint32_t qpn, bool mw)
{
	const struct rpcr_rdev_qp_attr *a = &qp->vq.pub.attr;
	/* The largest WQE this QP may post: control and remote address segments, then its gather
	 * list or its inline data (header, bytes, padding). */
	uint32_t body = RTE_MAX(
		a->max_send_sge * 16u,
		RTE_ALIGN_CEIL((uint32_t)sizeof(struct mlx5_wqe_inl_data_seg) + qp->vq.max_inline,
			       16u));
	uint32_t max_bb = (32u + body + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;

	if (mw)
		max_bb = RTE_MAX(max_bb, MLX5_UMR_BIND_BBS);

	/* (The WQE counter a CQE gives back is 16 bits; a WQE's size in 16-byte units, 6.) */
	if (dv->sq.stride != MLX5_SEND_WQE_BB || !pow2(dv->sq.wqe_cnt) || dv->sq.wqe_cnt > 65536 ||
	    (32u + body) / 16 > 63 || dv->dbrec == NULL || dv->bf.reg == NULL) {
		MLX5_LOG(ERR, "QP %u: send queue of %u x %u bytes: not a layout this driver writes",
			 qpn, dv->sq.wqe_cnt, dv->sq.stride);
		return -ENOTSUP;
	}
	if ((uint64_t)a->max_send_wr * max_bb > dv->sq.wqe_cnt) {
		MLX5_LOG(ERR, "QP %u: send queue of %u blocks cannot hold %u requests of %u", qpn,
			 dv->sq.wqe_cnt, a->max_send_wr, max_bb);
		return -ENOSPC;
	}
	if (a->srq != NULL && a->max_recv_wr != 0) {
		MLX5_LOG(ERR, "QP %u: receives of its own and of an SRQ", qpn);
		return -EINVAL;
	}
	if (a->max_recv_wr != 0 &&
	    (!pow2(dv->rq.wqe_cnt) || !pow2(dv->rq.stride) || dv->rq.stride < 16 ||
	     dv->rq.wqe_cnt < a->max_recv_wr || dv->rq.stride / 16 < a->max_recv_sge)) {
		MLX5_LOG(ERR, "QP %u: receive queue of %u x %u bytes cannot hold %u x %u", qpn,
			 dv->rq.wqe_cnt, dv->rq.stride, a->max_recv_wr, a->max_recv_sge);
		return -ENOSPC;
	}
	qp->swqe = calloc(dv->sq.wqe_cnt, sizeof(*qp->swqe));
	qp->rwr_id = calloc(RTE_MAX(dv->rq.wqe_cnt, 1u), sizeof(*qp->rwr_id));
	if (qp->swqe == NULL || qp->rwr_id == NULL) {
		mlx5_qp_detach(qp);
		return -ENOMEM;
	}
	qp->qpn = qpn;
	qp->srq = (struct mlx5_srq *)a->srq;
	qp->sq_buf = dv->sq.buf;
	qp->sq_end = (uint8_t *)dv->sq.buf + (size_t)dv->sq.wqe_cnt * MLX5_SEND_WQE_BB;
	qp->sq_bb_mask = dv->sq.wqe_cnt - 1;
	qp->sq_pi = 0;
	qp->sq_fence = 0;
	/* Send and Write and Read always; Send with Invalidate with the memory management
	 * extensions; window binds and local invalidation where windows are claimed. */
	qp->ops_ok = 1u << RPCR_RDEV_WR_SEND | 1u << RPCR_RDEV_WR_WRITE | 1u << RPCR_RDEV_WR_READ;
	if (qp->vq.send_inv)
		qp->ops_ok |= 1u << RPCR_RDEV_WR_SEND_INV;
	if (qp->vq.send_inv && mw)
		qp->ops_ok |= 1u << RPCR_RDEV_WR_BIND_MW | 1u << RPCR_RDEV_WR_LOCAL_INV;
	qp->rq_buf = dv->rq.buf;
	qp->rq_mask = dv->rq.wqe_cnt != 0 ? dv->rq.wqe_cnt - 1 : 0;
	qp->rq_stride_shift = dv->rq.stride != 0 ? (uint32_t)__builtin_ctz(dv->rq.stride) : 0;
	qp->rq_nseg = dv->rq.stride / 16;
	qp->dbrec = dv->dbrec;
	qp->bf_reg = dv->bf.reg;
	return 0;
}

void
mlx5_qp_detach(struct mlx5_qp *qp)
{
	free(qp->swqe);
	free(qp->rwr_id);
	qp->swqe = NULL;
	qp->rwr_id = NULL;
}

int
mlx5_cq_attach(struct mlx5_cq *cq, const struct mlx5dv_cq *dv, struct mlx5_qp_table *qpt)
{
	if (!pow2(dv->cqe_cnt) || (dv->cqe_size != 64 && dv->cqe_size != 128) ||
	    dv->dbrec == NULL) {
		MLX5_LOG(ERR, "CQ %u: %u entries of %u bytes: not a layout this driver reads",
			 dv->cqn, dv->cqe_cnt, dv->cqe_size);
		return -ENOTSUP;
	}
	cq->buf = dv->buf;
	cq->cqe_cnt = dv->cqe_cnt;
	cq->cqe_mask = dv->cqe_cnt - 1;
	cq->cqe_shift = dv->cqe_size == 64 ? 6 : 7;
	cq->cqe64_off = dv->cqe_size - 64;
	cq->dbrec = dv->dbrec;
	cq->cqn = dv->cqn;
	cq->ci = 0;
	cq->last_qp = NULL;
	cq->qpt = qpt;
	return 0;
}

int
mlx5_srq_attach(struct mlx5_srq *srq, const struct mlx5dv_srq *dv)
{
	const struct rpcr_rdev_srq *p = &srq->vs.pub;
	uint32_t cnt = dv->tail + 1;

	/* The free list as libmlx5 leaves it: head 0, WQEs 0 to tail linked (tail + 1 the power
	 * of 2 above the receives asked for; libmlx5's ring is usually larger, its second part an
	 * ODP wait queue this driver never links in, so every index a CQE's 16-bit counter names
	 * is at most tail); room for the scatter list after the next segment. (libmlx5 would also
	 * free SRQ WQEs itself when a QP's CQ is cleaned at its destruction, with a tail of its
	 * own: it does not, the CQs being DV-owned once mlx5dv_init_obj() described them.) */
	if (dv->buf == NULL || dv->dbrec == NULL || !pow2(dv->stride) || dv->stride < 32 ||
	    dv->head != 0 || !pow2(cnt) || cnt > 65536) {
		MLX5_LOG(ERR, "SRQ: %u WQEs of %u bytes, head %u: not a layout this driver writes",
			 cnt, dv->stride, dv->head);
		return -ENOTSUP;
	}
	if (cnt - 1 < p->max_wr || (dv->stride - 16) / 16 < p->max_sge) {
		MLX5_LOG(ERR, "SRQ of %u x %u bytes cannot hold %u x %u", cnt, dv->stride,
			 p->max_wr, p->max_sge);
		return -ENOSPC;
	}
	srq->wr_id = calloc(cnt, sizeof(*srq->wr_id));
	srq->posted = calloc(cnt, sizeof(*srq->posted));
	if (srq->wr_id == NULL || srq->posted == NULL) {
		mlx5_srq_detach(srq);
		return -ENOMEM;
	}
	srq->buf = dv->buf;
	srq->stride_shift = (uint32_t)__builtin_ctz(dv->stride);
	srq->nseg = (dv->stride - 16) / 16;
	srq->mask = cnt - 1;
	srq->head = dv->head;
	srq->tail = dv->tail;
	srq->count = 0;
	srq->outstanding = 0;
	srq->dbrec = dv->dbrec;
	return 0;
}

void
mlx5_srq_detach(struct mlx5_srq *srq)
{
	free(srq->wr_id);
	free(srq->posted);
	srq->wr_id = NULL;
	srq->posted = NULL;
}

/* ---- the data path's hooks under the control path ---- */

static struct mlx5_qp_table *
qp_table(const struct vrb_dev *vd)
{
	return (struct mlx5_qp_table *)vd->dp_priv;
}

static const struct rpcr_rdev_fp_ops mlx5_fp_told;

static int
mlx5_dev_check(struct vrb_dev *vd)
{
	int rc = mlx5_glue_init();

	if (rc != 0)
		return rc;
	if (!mlx5_glue->is_supported(vd->ctx->device)) {
		MLX5_LOG(ERR, "%s is not an mlx5 device (the ibverbs driver drives any)",
			 vd->ibname);
		return -ENODEV;
	}
	if (mlx5_glue->doorbell != NULL)
		vd->fp = &mlx5_fp_told;
	vd->dp_priv = calloc(1, sizeof(struct mlx5_qp_table));
	return vd->dp_priv != NULL ? 0 : -ENOMEM;
}

static void
mlx5_dev_fini(struct vrb_dev *vd)
{
	mlx5_qpt_free(qp_table(vd));
	vd->dp_priv = NULL;
}

static void
mlx5_cq_fini(struct vrb_cq *vc)
{
	if (mlx5_glue->cq_release != NULL)
		mlx5_glue->cq_release(vc->cq);
}

static int
mlx5_cq_init(struct vrb_cq *vc)
{
	struct mlx5dv_cq dv;
	struct mlx5dv_obj obj;
	int rc;

	memset(&obj, 0, sizeof(obj));
	obj.cq.in = vc->cq;
	obj.cq.out = &dv;
	rc = mlx5_glue->init_obj(&obj, MLX5DV_OBJ_CQ);
	if (rc != 0) {
		MLX5_LOG(ERR, "%s: mlx5dv_init_obj(CQ): %s", vc->vd->ibname, strerror(rc));
		return -rc;
	}
	return mlx5_cq_attach((struct mlx5_cq *)vc, &dv, qp_table(vc->vd));
}

static int
mlx5_qp_init(struct vrb_qp *vq)
{
	struct mlx5_qp *qp = (struct mlx5_qp *)vq;
	struct mlx5dv_qp dv;
	struct mlx5dv_obj obj;
	int rc;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.qp.in = vq->qp;
	obj.qp.out = &dv;
	rc = mlx5_glue->init_obj(&obj, MLX5DV_OBJ_QP);
	if (rc != 0) {
		MLX5_LOG(ERR, "%s: mlx5dv_init_obj(QP): %s", vq->vd->ibname, strerror(rc));
		return -rc;
	}
	rc = mlx5_qp_attach(qp, &dv, vq->qp->qp_num, vrb_has_mw(vq->vd));
	if (rc == 0)
		rc = mlx5_qpt_insert(qp_table(vq->vd), qp);
	return rc;
}

/* Before the control path moves it to error: a model executes what the doorbell announced. */
static void
mlx5_qp_error(struct vrb_qp *vq)
{
	if (mlx5_glue->qp_sync != NULL)
		mlx5_glue->qp_sync(vq->qp);
}

/* Before verbs destroys it: the queues stop being ours (the model stops executing them). */
static void
mlx5_qp_release(struct vrb_qp *vq)
{
	if (mlx5_glue->qp_release != NULL)
		mlx5_glue->qp_release(vq->qp);
}

static void
mlx5_qp_fini(struct vrb_qp *vq)
{
	struct mlx5_qp *qp = (struct mlx5_qp *)vq;

	mlx5_qpt_remove(qp_table(vq->vd), qp); /* (only if it is there) */
	mlx5_qp_detach(qp);
}

static int
mlx5_srq_init(struct vrb_srq *vs)
{
	struct mlx5dv_srq dv;
	struct mlx5dv_obj obj;
	int rc;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.srq.in = vs->srq;
	obj.srq.out = &dv;
	rc = mlx5_glue->init_obj(&obj, MLX5DV_OBJ_SRQ);
	if (rc != 0) {
		MLX5_LOG(ERR, "%s: mlx5dv_init_obj(SRQ): %s", vs->vd->ibname, strerror(rc));
		return -rc;
	}
	return mlx5_srq_attach((struct mlx5_srq *)vs, &dv);
}

static void
mlx5_srq_release(struct vrb_srq *vs)
{
	if (mlx5_glue->srq_release != NULL)
		mlx5_glue->srq_release(vs->srq);
}

static void
mlx5_srq_fini(struct vrb_srq *vs)
{
	mlx5_srq_detach((struct mlx5_srq *)vs);
}

static const struct rpcr_rdev_fp_ops mlx5_fp = {
	.post_send = mlx5_post_send,
	.post_recv = mlx5_post_recv,
	.post_srq_recv = mlx5_post_srq_recv,
	.poll_cq = mlx5_poll_cq,
};

/* The test hook's fast path: the same, and the model told of each burst (mlx5_glue.h). */
static uint16_t
post_send_told(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	uint16_t done = mlx5_post_send(qp, wr, n);

	if (done != 0)
		mlx5_glue->doorbell(((struct vrb_qp *)qp)->qp);
	return done;
}

static uint16_t
post_recv_told(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	uint16_t done = mlx5_post_recv(qp, wr, n);

	if (done != 0)
		mlx5_glue->doorbell(((struct vrb_qp *)qp)->qp);
	return done;
}

static uint16_t
post_srq_recv_told(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	uint16_t done = mlx5_post_srq_recv(srq, wr, n);

	if (done != 0)
		mlx5_glue->srq_doorbell(((struct vrb_srq *)srq)->srq);
	return done;
}

static const struct rpcr_rdev_fp_ops mlx5_fp_told = {
	.post_send = post_send_told,
	.post_recv = post_recv_told,
	.post_srq_recv = post_srq_recv_told,
	.poll_cq = mlx5_poll_cq,
};

static const struct vrb_dp mlx5_dp = {
	.name = "mlx5",
	.fp = &mlx5_fp,
	.qp_size = sizeof(struct mlx5_qp),
	.cq_size = sizeof(struct mlx5_cq),
	.mw = true,
	.srq = true,
	.srq_size = sizeof(struct mlx5_srq),
	.dev_check = mlx5_dev_check,
	.cq_init = mlx5_cq_init,
	.cq_fini = mlx5_cq_fini,
	.qp_init = mlx5_qp_init,
	.qp_error = mlx5_qp_error,
	.qp_release = mlx5_qp_release,
	.qp_fini = mlx5_qp_fini,
	.srq_init = mlx5_srq_init,
	.srq_release = mlx5_srq_release,
	.srq_fini = mlx5_srq_fini,
	.dev_fini = mlx5_dev_fini,
};

static int
mlx5_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	return vrb_probe_dp(dev, args, &mlx5_dp);
}

static struct rpcr_rdev_ops mlx5_ops;

static struct rpcr_rdev_driver mlx5_driver = {
	.ops = &mlx5_ops,
};

/* Everything but probe is the ibverbs driver's control path; the devargs are its own. */
RTE_INIT(rpcr_rdev_register_mlx5)
{
	mlx5_ops = vrb_ops;
	mlx5_ops.probe = mlx5_probe;
	mlx5_driver.args = vrb_args;
	mlx5_driver.name = "mlx5";
	rpcr_rdev_driver_register(&mlx5_driver);
}
