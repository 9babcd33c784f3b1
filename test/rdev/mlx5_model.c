/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The mlx5 queue model (mlx5_model.h). Written from rdma-core's <infiniband/mlx5dv.h> and the
 * behaviour libmlx5's own poll and post code expects of the device; shares no code with the
 * driver.
 *
 * mm_step(), per QP in turn, until a pass does nothing: the send queue from the model's consumer
 * index up to the doorbell record (checking, when the record moved, that the doorbell register
 * holds the last WQE's first 8 bytes, then clearing it); each WQE decoded, executed (Send waits
 * while the peer has no receive posted: RNR with infinite retries) or, in the error state,
 * flushed; then, in the error state, every receive posted flushed.
 */

#include "mlx5_model.h"
#include "mlx5_model_wq.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MM_MAX_MR  256
#define MM_MAX_QP  64
#define MM_MAX_CQ  64
#define MM_MAX_MW  256
#define MM_MAX_SRQ 8
#define MW_BIT     0x80000000u
#define BB         64u

enum mm_state { MM_RESET, MM_RTS, MM_ERR };

struct mm_mr {
	uint8_t *addr;
	size_t len;
	uint32_t key; /* 0: slot free */
	uint32_t access;
	bool valid;
};

/* A window: bound (over part of registration @mr_key, for QP @qpn) or free. */
struct mm_mw {
	uint32_t key; /* 0: slot free */
	bool bound;
	uint32_t qpn;
	uint64_t addr, len;
	uint32_t access; /* MM_REMOTE_READ, MM_REMOTE_WRITE */
	uint32_t mr_key;
};

struct mm_cq {
	struct mm_dev *d;
	struct mmw_cq r;
};

struct mm_srq {
	struct mmw_srq r;
};

struct mm_qp {
	struct mm_dev *d;
	struct mm_srq *srq; /* receives from here (NULL: its own queue) */
	enum mm_state state;
	struct mm_qp *peer;
	struct mm_cq *scq, *rcq;
	struct mmw_sq sq; /* ring, building blocks, QP number */
	uint32_t sq_ci;   /* building blocks consumed */
	uint16_t sq_seen; /* the record's value last seen */
	uint8_t *rq;
	uint32_t rq_cnt, rq_stride;
	uint32_t rq_ci;
	__be32 *dbrec;
	uint8_t *reg;   /* the doorbell register: two halves of 256 bytes */
	bool after_umr; /* the last WQE executed was a UMR: the next must be fenced */
};

struct mm_dev {
	struct mm_opts o;
	struct mm_mr mr[MM_MAX_MR];
	uint32_t next_key;
	struct mm_mw mw[MM_MAX_MW];
	struct mm_qp *qp[MM_MAX_QP];
	unsigned int nqp;
	struct mm_cq *cq[MM_MAX_CQ];
	unsigned int ncq;
	struct mm_srq *srq[MM_MAX_SRQ];
	unsigned int nsrq;
	char fault[256];
	struct mm_stats st;
};

static void __attribute__((format(printf, 2, 3))) fault(struct mm_dev *d, const char *fmt, ...)
{
	va_list ap;

	if (d->fault[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(d->fault, sizeof(d->fault), fmt, ap);
	va_end(ap);
}

struct mm_dev *
mm_dev_new(const struct mm_opts *opts)
{
	struct mm_dev *d = calloc(1, sizeof(*d));

	if (d == NULL)
		abort();
	if (opts != NULL)
		d->o = *opts;
	d->next_key = 0x1100;
	return d;
}

void
mm_dev_free(struct mm_dev *d)
{
	unsigned int i;

	for (i = 0; i < d->nqp; i++) {
		free(d->qp[i]->sq.buf);
		free(d->qp[i]->rq);
		free(d->qp[i]->dbrec);
		free(d->qp[i]->reg);
		free(d->qp[i]);
	}
	for (i = 0; i < d->ncq; i++) {
		mmw_cq_fini(&d->cq[i]->r);
		free(d->cq[i]);
	}
	for (i = 0; i < d->nsrq; i++) {
		mmw_srq_fini(&d->srq[i]->r);
		free(d->srq[i]);
	}
	free(d);
}

uint32_t
mm_reg(struct mm_dev *d, void *addr, size_t len, uint32_t access)
{
	unsigned int i;

	for (i = 0; i < MM_MAX_MR; i++) {
		if (d->mr[i].key == 0) {
			d->mr[i].addr = addr;
			d->mr[i].len = len;
			d->mr[i].access = access;
			d->mr[i].valid = true;
			/* The low byte varies as the hardware's key byte does. */
			d->mr[i].key = (d->next_key += 0x101);
			return d->mr[i].key;
		}
	}
	abort();
}

static struct mm_mr *
mr_find(struct mm_dev *d, uint32_t key)
{
	unsigned int i;

	for (i = 0; i < MM_MAX_MR; i++)
		if (d->mr[i].key == key && key != 0)
			return &d->mr[i];
	return NULL;
}

/* The window @key names (by its slot; the low byte may be another bind's), or NULL. */
static struct mm_mw *
mw_slot(struct mm_dev *d, uint32_t key)
{
	struct mm_mw *w;

	if (!(key & MW_BIT) || ((key & ~MW_BIT) >> 8) >= MM_MAX_MW)
		return NULL;
	w = &d->mw[(key & ~MW_BIT) >> 8];
	return w->key != 0 ? w : NULL;
}

uint32_t
mm_mw_alloc(struct mm_dev *d)
{
	unsigned int i;

	for (i = 0; i < MM_MAX_MW; i++) {
		if (d->mw[i].key == 0) {
			memset(&d->mw[i], 0, sizeof(d->mw[i]));
			d->mw[i].key = MW_BIT | i << 8 | ((d->next_key += 0x35) & 0xff);
			return d->mw[i].key;
		}
	}
	abort();
}

void
mm_mw_free(struct mm_dev *d, uint32_t key)
{
	struct mm_mw *w = mw_slot(d, key);

	if (w != NULL)
		memset(w, 0, sizeof(*w));
}

int
mm_dereg(struct mm_dev *d, uint32_t key)
{
	struct mm_mr *m = mr_find(d, key);
	unsigned int i;

	for (i = 0; m != NULL && i < MM_MAX_MW; i++)
		if (d->mw[i].key != 0 && d->mw[i].bound && d->mw[i].mr_key == key)
			return -1;
	if (m != NULL)
		memset(m, 0, sizeof(*m));
	return 0;
}

bool
mm_key_valid(struct mm_dev *d, uint32_t key)
{
	struct mm_mr *m = mr_find(d, key);
	struct mm_mw *w = mw_slot(d, key);

	if (w != NULL)
		return w->bound && w->key == key;
	return m != NULL && m->valid;
}

/* The bytes [addr, addr + len) under @key with @need access, reached through QP @qpn (0: local
 * access, which no window gives): a pointer to them, or NULL. */
static uint8_t *
mr_check(struct mm_dev *d, uint32_t key, uint64_t addr, uint64_t len, uint32_t need, uint32_t qpn)
{
	struct mm_mr *m;
	struct mm_mw *w = mw_slot(d, key);
	uint64_t base;

	if (w != NULL) {
		/* A window: bound under this very key, for this QP, with the access, the range
		 * inside it, its registration still there. */
		if (!w->bound || w->key != key || qpn == 0 || w->qpn != qpn ||
		    (w->access & need) != need || addr < w->addr || len > w->len ||
		    addr - w->addr > w->len - len)
			return NULL;
		m = mr_find(d, w->mr_key);
		return m != NULL && m->valid ? (uint8_t *)(uintptr_t)addr : NULL;
	}
	m = mr_find(d, key);
	if (m == NULL || !m->valid || (m->access & need) != need)
		return NULL;
	base = (uint64_t)(uintptr_t)m->addr;
	if (addr < base || len > m->len || addr - base > m->len - len)
		return NULL;
	return (uint8_t *)(uintptr_t)addr;
}

struct mm_cq *
mm_cq_new(struct mm_dev *d, uint32_t cqe_cnt, uint32_t cqe_size, struct mlx5dv_cq *out)
{
	struct mm_cq *c = calloc(1, sizeof(*c));

	if (c == NULL || d->ncq == MM_MAX_CQ)
		abort();
	c->d = d;
	mmw_cq_init(&c->r, cqe_cnt, cqe_size, 0x40 + d->ncq);
	d->cq[d->ncq++] = c;
	mmw_cq_dv(&c->r, out);
	return c;
}

struct mm_qp *
mm_qp_new(struct mm_dev *d, struct mm_cq *scq, struct mm_cq *rcq, uint32_t sq_bbs, uint32_t rq_wqes,
	  uint32_t rq_stride, struct mlx5dv_qp *out, uint32_t *qpn)
{
	struct mm_qp *q = calloc(1, sizeof(*q));

	if (q == NULL || d->nqp == MM_MAX_QP)
		abort();
	q->d = d;
	q->sq.qpn = 0x1a2b00 + d->nqp * 7;
	q->sq.cnt = sq_bbs;
	q->sq.buf = mmw_zalloc((size_t)sq_bbs * BB);
	q->scq = scq;
	q->rcq = rcq;
	q->rq_cnt = rq_wqes;
	q->rq_stride = rq_stride;
	q->rq = mmw_zalloc((size_t)rq_wqes * rq_stride + 64);
	q->dbrec = mmw_zalloc(64);
	q->reg = mmw_zalloc(512);
	d->qp[d->nqp++] = q;
	memset(out, 0, sizeof(*out));
	out->dbrec = q->dbrec;
	out->sq.buf = q->sq.buf;
	out->sq.wqe_cnt = sq_bbs;
	out->sq.stride = BB;
	out->rq.buf = q->rq;
	out->rq.wqe_cnt = rq_wqes;
	out->rq.stride = rq_stride;
	out->bf.reg = q->reg;
	out->bf.size = 256;
	*qpn = q->sq.qpn;
	return q;
}

struct mm_srq *
mm_srq_new(struct mm_dev *d, uint32_t max_wr, uint32_t max_sge, struct mlx5dv_srq *out)
{
	struct mm_srq *s = calloc(1, sizeof(*s));

	if (s == NULL || d->nsrq == MM_MAX_SRQ)
		abort();
	mmw_srq_init(&s->r, max_wr, max_sge);
	d->srq[d->nsrq] = s;
	mmw_srq_dv(&s->r, 0x300 + d->nsrq, out);
	d->nsrq++;
	return s;
}

void
mm_qp_set_srq(struct mm_qp *q, struct mm_srq *s)
{
	q->srq = s;
}

void
mm_connect(struct mm_qp *a, struct mm_qp *b)
{
	a->peer = b;
	b->peer = a;
	a->state = MM_RTS;
	b->state = MM_RTS;
}

void
mm_qp_error(struct mm_qp *q)
{
	q->state = MM_ERR;
}

bool
mm_qp_in_error(const struct mm_qp *q)
{
	return q->state == MM_ERR;
}

uint32_t
mm_qp_num(const struct mm_qp *q)
{
	return q->sq.qpn;
}

struct mm_cq *
mm_cq_of(struct mm_dev *d, uint32_t cqn)
{
	unsigned int i;

	for (i = 0; i < d->ncq; i++)
		if (d->cq[i]->r.cqn == cqn)
			return d->cq[i];
	return NULL;
}

void
mm_qp_set_cqs(struct mm_qp *q, struct mm_cq *scq, struct mm_cq *rcq)
{
	q->scq = scq;
	q->rcq = rcq;
}

void
mm_qp_forget(struct mm_dev *d, struct mm_qp *q)
{
	(void)d;
	if (q->peer != NULL && q->peer->peer == q)
		q->peer->peer = NULL;
	q->peer = NULL;
	q->state = MM_RESET;
}

const char *
mm_fault(const struct mm_dev *d)
{
	return d->fault[0] != '\0' ? d->fault : NULL;
}

const struct mm_stats *
mm_stats(const struct mm_dev *d)
{
	return &d->st;
}

/* ---- execution ---- */

/* Room in @c for a CQE, else a fault (the driver let its CQ overrun). */
static bool
room(struct mm_cq *c)
{
	if (mmw_cq_room(&c->r))
		return true;
	fault(c->d, "CQ %#x overrun: the consumer index stays a whole ring behind", c->r.cqn);
	return false;
}

static void
cqe_err(struct mm_cq *c, bool req, uint32_t qpn, uint32_t counter, uint8_t wqe_op, uint8_t syndrome)
{
	if (room(c))
		mmw_cqe_err(&c->r, req, qpn, (uint16_t)counter, wqe_op, syndrome);
}

/* Segments checked against the registrations: pointers to their bytes, or the syndrome. */
struct mm_sg {
	uint8_t *p[MMW_MAX_SEG];
	uint32_t len[MMW_MAX_SEG];
	unsigned int n;
	uint64_t total;
};

static uint8_t
check_sg(struct mm_dev *d, const struct mmw_seg *seg, unsigned int n, uint32_t need,
	 struct mm_sg *sg)
{
	unsigned int i;

	sg->n = 0;
	sg->total = 0;
	for (i = 0; i < n; i++) {
		uint8_t *p = mr_check(d, seg[i].key, seg[i].addr, seg[i].len, need, 0);

		if (p == NULL)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		sg->p[sg->n] = p;
		sg->len[sg->n++] = seg[i].len;
		sg->total += seg[i].len;
	}
	return 0;
}

static void
gather(const struct mm_sg *sg, uint8_t *dst)
{
	unsigned int i;

	for (i = 0; i < sg->n; i++) {
		memcpy(dst, sg->p[i], sg->len[i]);
		dst += sg->len[i];
	}
}

static void
scatter(const struct mm_sg *sg, const uint8_t *src, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < sg->n && len > 0; i++) {
		uint32_t n = sg->len[i] < len ? sg->len[i] : (uint32_t)len;

		memcpy(sg->p[i], src, n);
		src += n;
		len -= n;
	}
}

static uint16_t
rq_pi(const struct mm_qp *q)
{
	return (uint16_t)be32toh(__atomic_load_n(&q->dbrec[MLX5_RCV_DBR], __ATOMIC_ACQUIRE));
}

/* Deliver a Send of @len bytes (in @msg) to @q's peer. @return the requester's syndrome (0:
 * delivered), or -1: no receive posted (try again later). */
static int
deliver(struct mm_qp *q, const uint8_t *msg, uint64_t len, bool inv, uint32_t inv_key)
{
	struct mm_qp *r = q->peer;
	struct mmw_seg seg[MMW_MAX_SEG];
	struct mm_sg sg;
	unsigned int nseg;
	uint8_t synd;
	uint32_t idx;

	if (r == NULL || r->state != MM_RTS)
		return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR; /* nobody answers */
	if (r->srq != NULL) {
		/* The next of the SRQ's, by the links. */
		char why[200];
		int i = mmw_srq_peek(&r->srq->r, seg, &nseg, why, sizeof(why));

		if (i == -2)
			fault(r->d, "%s", why);
		if (i < 0)
			return -1;
		idx = (uint32_t)i;
	} else {
		if ((uint16_t)r->rq_ci == rq_pi(r))
			return -1;
		idx = r->rq_ci;
		nseg = mmw_recv_decode(r->rq + (size_t)(idx & (r->rq_cnt - 1)) * r->rq_stride,
				       r->rq_stride, seg);
	}
	synd = check_sg(r->d, seg, nseg, MM_LOCAL_WRITE, &sg);
	if (synd == 0 && sg.total < len)
		synd = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (synd == 0 && inv && mw_slot(r->d, inv_key) != NULL) {
		/* A window bound to the responder's QP under this key. */
		struct mm_mw *w = mw_slot(r->d, inv_key);

		if (!w->bound || w->key != inv_key || w->qpn != r->sq.qpn) {
			r->state = MM_ERR;
			return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
		}
		w->bound = false;
	} else if (synd == 0 && inv) {
		struct mm_mr *m = mr_find(r->d, inv_key);

		if (m == NULL || !m->valid || !(m->access & MM_REMOTE_INV)) {
			/* The responder cannot: remote operation error for the requester, the
			 * responder's QP in error. */
			r->state = MM_ERR;
			return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
		}
		m->valid = false;
	}
	if (r->srq != NULL)
		mmw_srq_advance(&r->srq->r);
	else
		r->rq_ci++;
	q->d->st.recvs++;
	if (synd != 0) {
		cqe_err(r->rcq, false, r->sq.qpn, idx, 0, synd);
		r->state = MM_ERR;
		return synd == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR
			       ? MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR
			       : MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
	}
	if (!room(r->rcq))
		return 0;
	if (q->d->o.scatter_to_cqe && len <= mmw_cqe_inline_max(&r->rcq->r)) {
		mmw_cqe_ok(&r->rcq->r, inv ? MLX5_CQE_RESP_SEND_INV : MLX5_CQE_RESP_SEND, r->sq.qpn,
			   (uint16_t)idx, 0, (uint32_t)len, inv_key, msg);
		return 0;
	}
	scatter(&sg, msg, len);
	mmw_cqe_ok(&r->rcq->r, inv ? MLX5_CQE_RESP_SEND_INV : MLX5_CQE_RESP_SEND, r->sq.qpn,
		   (uint16_t)idx, 0, (uint32_t)len, inv_key, NULL);
	return 0;
}

/*
 * A UMR on a window (the key in the control segment's immediate): a bind (UMR control "check
 * free", one KLM: the window must be free, the registration allow binds and cover the range,
 * the new key's QP be this one) or a local invalidation ("check QP number", context "free": the
 * window bound to this QP under this key). @return 0, or the syndrome: MW_BIND_ERR for a bind
 * the device refuses, LOCAL_QP_OP_ERR for an invalidation or a UMR it cannot take.
 */
static uint8_t
umr(struct mm_qp *q, const struct mmw_send *w)
{
	/* What libmlx5 asks the device to set: the key, its QP and its state; for a bind also
	 * the range and every access bit (those not given are cleared). */
	const uint64_t inv_mask = MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE |
				  MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |
				  MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN;
	const uint64_t bind_mask = inv_mask | MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN |
				   MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
				   MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
				   MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
				   MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
				   MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC;
	const uint8_t rw = MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ |
			   MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
	struct mm_dev *d = q->d;
	struct mm_mw *mw = mw_slot(d, w->imm);
	struct mm_mr *mr;
	uint32_t key;

	if (!(w->umr.flags & MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET))
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR; /* (the model takes no other kind) */
	if (w->umr.flags & MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE) {
		if (!w->umr.has_klm || w->umr.free != 0 ||
		    (w->umr.mkey_mask & bind_mask) != bind_mask || (w->umr.access & ~rw) != 0 ||
		    w->umr.klm.addr != w->umr.start || w->umr.klm.len != w->umr.len)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		if (mw == NULL || mw->key != w->imm || mw->bound ||
		    (w->umr.qpn_mkey >> 8) != q->sq.qpn)
			return MLX5_CQE_SYNDROME_MW_BIND_ERR;
		mr = mr_find(d, w->umr.klm.key);
		if (mr == NULL || !mr->valid || !(mr->access & MM_MW_BIND) ||
		    w->umr.start < (uint64_t)(uintptr_t)mr->addr || w->umr.len > mr->len ||
		    w->umr.start - (uint64_t)(uintptr_t)mr->addr > mr->len - w->umr.len ||
		    ((w->umr.access & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE) &&
		     !(mr->access & MM_LOCAL_WRITE)))
			return MLX5_CQE_SYNDROME_MW_BIND_ERR;
		key = (mw->key & ~0xffu) | (w->umr.qpn_mkey & 0xffu);
		if (key == mw->key) {
			fault(d, "QP %#x: a bind of window %#x keeps its key", q->sq.qpn, mw->key);
			return MLX5_CQE_SYNDROME_MW_BIND_ERR;
		}
		mw->key = key;
		mw->bound = true;
		mw->qpn = q->sq.qpn;
		mw->addr = w->umr.start;
		mw->len = w->umr.len;
		mw->access = ((w->umr.access & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ)
				      ? MM_REMOTE_READ
				      : 0) |
			     ((w->umr.access & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE)
				      ? MM_REMOTE_WRITE
				      : 0);
		mw->mr_key = mr->key;
		return 0;
	}
	if (!(w->umr.flags & MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN) || w->umr.has_klm ||
	    w->umr.free != MLX5_WQE_MKEY_CONTEXT_FREE ||
	    (w->umr.mkey_mask & inv_mask) != inv_mask || w->umr.qpn_mkey != 0xffffff00u)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (mw == NULL || mw->key != w->imm || !mw->bound || mw->qpn != q->sq.qpn)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	mw->bound = false;
	return 0;
}

/* Execute the WQE at @q's consumer index. @return its BBs, 0 to wait (RNR), -1 on a fault. */
static int
execute(struct mm_qp *q)
{
	struct mm_dev *d = q->d;
	static struct mmw_send w; /* (one thread) */
	struct mm_sg sg = {.n = 0};
	uint8_t *buf = NULL, *remote;
	uint64_t total;
	int synd;

	synd = mmw_send_decode(&q->sq, q->sq_ci, &w, d->fault, sizeof(d->fault));
	if (synd < 0)
		return -1;
	if (q->after_umr && w.fence == 0) {
		fault(d, "QP %#x: WQE %u follows a UMR without a fence", q->sq.qpn, w.bb);
		return -1;
	}
	q->after_umr = w.opcode == MLX5_OPCODE_UMR;
	if (q->state == MM_ERR) {
		cqe_err(q->scq, true, q->sq.qpn, w.bb, w.opcode, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		return (int)w.nbb;
	}
	if (synd == 0 && !w.inl)
		synd = check_sg(d, w.seg, w.nseg,
				w.opcode == MLX5_OPCODE_RDMA_READ ? MM_LOCAL_WRITE : 0, &sg);
	total = w.inl ? w.inl_len : sg.total;
	if (synd == 0 && total > 0x40000000u)
		synd = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (synd == 0 && total != 0) {
		buf = malloc(total);
		if (buf == NULL)
			abort();
		if (w.inl)
			memcpy(buf, w.inl_data, total);
		else if (w.opcode != MLX5_OPCODE_RDMA_READ)
			gather(&sg, buf);
	}
	if (synd == 0) {
		switch (w.opcode) {
		case MLX5_OPCODE_UMR:
			synd = umr(q, &w);
			break;
		case MLX5_OPCODE_SEND:
		case MLX5_OPCODE_SEND_INVAL:
			synd = deliver(q, buf, total, w.opcode == MLX5_OPCODE_SEND_INVAL, w.imm);
			if (synd < 0) {
				free(buf);
				d->st.rnr_waits++;
				return 0;
			}
			break;
		default: /* RDMA_WRITE, RDMA_READ */
			if (q->peer == NULL || q->peer->state != MM_RTS) {
				synd = MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
				break;
			}
			remote = mr_check(q->peer->d, w.rkey, w.raddr, total,
					  w.opcode == MLX5_OPCODE_RDMA_WRITE ? MM_REMOTE_WRITE
									     : MM_REMOTE_READ,
					  q->peer->sq.qpn);
			if (remote == NULL && total != 0) {
				/* The responder NAKs, and goes to error as well. */
				q->peer->state = MM_ERR;
				synd = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
				break;
			}
			if (total == 0)
				break;
			if (w.opcode == MLX5_OPCODE_RDMA_WRITE) {
				memcpy(remote, buf, total);
				break;
			}
			memcpy(buf, remote, total);
			if (w.signal && d->o.scatter_to_cqe &&
			    total <= mmw_cqe_inline_max(&q->scq->r)) {
				/* The response in the CQE, not in the buffers. */
				d->st.wqes++;
				if (room(q->scq))
					mmw_cqe_ok(&q->scq->r, MLX5_CQE_REQ, q->sq.qpn,
						   (uint16_t)w.bb, w.opcode, (uint32_t)total, 0,
						   buf);
				free(buf);
				return (int)w.nbb;
			}
			scatter(&sg, buf, total);
			break;
		}
	}
	free(buf);
	if (synd != 0) {
		cqe_err(q->scq, true, q->sq.qpn, w.bb, w.opcode, (uint8_t)synd);
		q->state = MM_ERR;
		return (int)w.nbb;
	}
	d->st.wqes++;
	if (w.signal && room(q->scq))
		mmw_cqe_ok(&q->scq->r, MLX5_CQE_REQ, q->sq.qpn, (uint16_t)w.bb, w.opcode,
			   w.opcode == MLX5_OPCODE_RDMA_READ ? (uint32_t)total : 0, 0, NULL);
	return (int)w.nbb;
}

/* The doorbell: when the record moved, the register must hold the first 8 bytes of the WQE
 * that ends at the record (the last one posted), written once. */
static void
check_doorbell(struct mm_qp *q, uint16_t rec)
{
	static const uint8_t zero[8];
	uint32_t bb = q->sq_ci, last = bb, n;
	uint8_t want[8];
	unsigned int h, rung = 0;

	while ((uint16_t)bb != rec) {
		n = mmw_send_size(&q->sq, bb);
		if (n == 0) {
			fault(q->d, "QP %#x: doorbell record %u is not at the end of a WQE",
			      q->sq.qpn, rec);
			return;
		}
		last = bb;
		bb += n;
		if (bb - q->sq_ci > q->sq.cnt) {
			fault(q->d, "QP %#x: doorbell record %u beyond the ring", q->sq.qpn, rec);
			return;
		}
	}
	memcpy(want, q->sq.buf + (last & (q->sq.cnt - 1)) * BB, 8);
	for (h = 0; h < 2; h++) {
		uint8_t *r = q->reg + h * 256;

		if (memcmp(r, zero, 8) == 0)
			continue;
		rung++;
		if (memcmp(r, want, 8) != 0)
			fault(q->d, "QP %#x: the doorbell register does not hold WQE %u's start",
			      q->sq.qpn, last);
		memset(r, 0, 8);
	}
	if (rung == 0)
		fault(q->d, "QP %#x: doorbell record moved to %u, register not written", q->sq.qpn,
		      rec);
	q->d->st.doorbells += rung;
}

static unsigned int
step_qp(struct mm_qp *q)
{
	uint16_t rec =
		(uint16_t)be32toh(__atomic_load_n(&q->dbrec[MLX5_SND_DBR], __ATOMIC_ACQUIRE));
	unsigned int done = 0;

	if (q->state == MM_RESET)
		return 0;
	if (rec != q->sq_seen) {
		check_doorbell(q, rec);
		q->sq_seen = rec;
	}
	while (q->d->fault[0] == '\0' && (uint16_t)q->sq_ci != rec) {
		int n = execute(q);

		if (n <= 0)
			break;
		q->sq_ci += (uint32_t)n;
		done++;
	}
	if (q->state == MM_ERR) {
		while (q->d->fault[0] == '\0' && (uint16_t)q->rq_ci != rq_pi(q)) {
			cqe_err(q->rcq, false, q->sq.qpn, q->rq_ci, 0,
				MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
			q->rq_ci++;
			done++;
		}
	}
	return done;
}

unsigned int
mm_step(struct mm_dev *d)
{
	unsigned int total = 0, n, i;

	do {
		n = 0;
		for (i = 0; i < d->nqp && d->fault[0] == '\0'; i++)
			n += step_qp(d->qp[i]);
		total += n;
	} while (n != 0 && d->fault[0] == '\0');
	for (i = 0; i < d->ncq; i++) {
		d->st.cqes += d->cq[i]->r.cqes;
		d->st.err_cqes += d->cq[i]->r.err_cqes;
		d->st.inline_cqes += d->cq[i]->r.inline_cqes;
		d->cq[i]->r.cqes = d->cq[i]->r.err_cqes = d->cq[i]->r.inline_cqes = 0;
	}
	return total;
}
