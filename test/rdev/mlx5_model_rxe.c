/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The mlx5 queue model over soft-RoCE: a library the mlx5 driver loads in place of libmlx5
 * (RPCR_MLX5_GLUE=.../libmlx5_model_rxe.so, drivers/rdev/mlx5/mlx5_glue.h) so that the driver runs,
 * whole, on an rxe device: its control path creates real rxe QPs and CQs and connects them with
 * rdma_cm; this library answers mlx5dv_init_obj() for them with queues of its own, in mlx5's
 * formats, and a thread of its own does what the device would with those queues:
 *
 * - each QP's send queue, from its consumer index up to the doorbell record: every WQE decoded
 *   from the ring (mlx5_model_wq.c: rdma-core's mlx5dv.h structures, nothing of the driver's),
 *   translated into one verbs work request (opcode, gather list or inline bytes, remote address
 *   and key, key to invalidate, signalled or not) and posted on the rxe QP;
 * - each QP's receive queue, up to its doorbell record: every receive WQE's data segments posted
 *   as an rxe receive; each shared receive queue's WQEs, up to its record, by their links, as
 *   receives of the rxe SRQ (the SRQ index is the CQE's counter);
 * - each CQ: rxe's completions turned into 64-byte CQEs (requester: the WQE's first block as
 *   the counter; responder: the receive's index; errors with mlx5's syndromes), written with the
 *   owner-bit protocol, never more than the consumer index in the CQ's record leaves room for.
 *
 * So rxe moves the data and checks keys, access and bounds, across the wire to whatever peer
 * (another rpcr process, the kernel's NFS client and server); the driver's WQEs, doorbells and
 * CQE parsing are what is tested. RPCR_MLX5_MODEL_SCATTER=1 also puts received messages of up
 * to 32 bytes into the CQE itself, their buffer cleared, as ConnectX's scatter-to-CQE does.
 *
 * What a driver must not do (a WQE whose index, QP number or size is wrong, a CQ it lets
 * overrun) is printed and aborts the process. A fork()ed child starts with no queues.
 */

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mlx5_glue.h"
#include "mlx5_model_wq.h"

#define BB 64u

/* rxe hands the kernel's IB_WC_WITH_INVALIDATE to userspace unconverted. */
#define KERNEL_WC_WITH_INV (1u << 2)

struct mq_qp {
	struct mq_qp *next;
	struct ibv_qp *qp;
	struct mmw_sq sq;
	uint32_t sq_ci; /* blocks handed to rxe */
	uint8_t *rq;
	uint32_t rq_cnt, rq_stride;
	uint32_t rq_ci; /* receives handed to rxe */
	__be32 *dbrec;
	uint8_t *reg;
	bool err_seen;       /* a completion in error: receives posted later must be flushed */
	uint32_t post_fails; /* rxe refused the next send this many passes in a row */
};

struct mq_cq {
	struct mq_cq *next;
	struct ibv_cq *cq;
	struct mmw_cq r;
};

struct mq_srq {
	struct mq_srq *next;
	struct ibv_srq *srq;
	struct mmw_srq r;
	uint32_t id; /* in its receives' work request ids */
};

static pthread_mutex_t mq_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mq_qp *qps;
static struct mq_cq *cqs;
static struct mq_srq *srqs;
static uint32_t srq_ids;
static pthread_t mq_thread;
static bool mq_running;
static bool mq_scatter;

static void
die(const char *what)
{
	fprintf(stderr, "mlx5 model: %s\n", what);
	fflush(stderr);
	abort();
}

/* rxe numbers QPs per device, so a number alone may name a QP on each of two devices: the
 * completion's CQ says which. */
static struct mq_qp *
find_qp(const struct ibv_cq *cq, uint32_t qpn)
{
	struct mq_qp *q;

	for (q = qps; q != NULL; q = q->next)
		if (q->qp->qp_num == qpn && (q->qp->send_cq == cq || q->qp->recv_cq == cq))
			return q;
	return NULL;
}

static struct mq_cq *
find_cq(const struct ibv_cq *cq)
{
	struct mq_cq *c;

	for (c = cqs; c != NULL; c = c->next)
		if (c->cq == cq)
			return c;
	return NULL;
}

static struct mq_srq *
find_srq(uint32_t id)
{
	struct mq_srq *s;

	for (s = srqs; s != NULL; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

/* ---- the device's work ---- */

/* Work request ids: the send WQE's first block and opcode, or the receive's index (and an SRQ's
 * receive: its SRQ's id in bits 32-47). */
#define WR_RECV (1ull << 63)
#define WR_SRQ  (1ull << 62)

static enum ibv_wr_opcode
verbs_opcode(uint8_t op)
{
	switch (op) {
	case MLX5_OPCODE_SEND_INVAL:
		return IBV_WR_SEND_WITH_INV;
	case MLX5_OPCODE_RDMA_WRITE:
		return IBV_WR_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_READ:
		return IBV_WR_RDMA_READ;
	default:
		return IBV_WR_SEND;
	}
}

/* A WQE the device fails itself (malformed): its error CQE, the QP to error. */
static void
local_error(struct mq_qp *q, const struct mmw_send *w, uint8_t synd)
{
	struct mq_cq *c = find_cq(q->qp->send_cq);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (c == NULL || !mmw_cq_room(&c->r))
		die("a malformed WQE's error has no room in its CQ");
	mmw_cqe_err(&c->r, true, q->sq.qpn, (uint16_t)w->bb, w->opcode, synd);
	q->err_seen = true;
	(void)ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
}

static unsigned int
do_sq(struct mq_qp *q)
{
	static struct mmw_send w; /* (the model's thread alone) */
	uint16_t rec =
		(uint16_t)be32toh(__atomic_load_n(&q->dbrec[MLX5_SND_DBR], __ATOMIC_ACQUIRE));
	unsigned int done = 0;
	char why[200];

	while ((uint16_t)q->sq_ci != rec) {
		struct ibv_send_wr s, *bad = NULL;
		struct ibv_sge sg[MMW_MAX_SEG];
		unsigned int k;
		int synd = mmw_send_decode(&q->sq, q->sq_ci, &w, why, sizeof(why));

		if (synd < 0)
			die(why);
		/* Windows are not translated (rxe's fail the conformance suite, so the driver
		 * claims none on rxe; doc/rdev.md): a UMR fails as one the device cannot take. */
		if (synd == 0 && w.opcode == MLX5_OPCODE_UMR)
			synd = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		if (synd > 0) {
			local_error(q, &w, (uint8_t)synd);
			q->sq_ci += w.nbb;
			done++;
			continue;
		}
		memset(&s, 0, sizeof(s));
		s.wr_id = w.bb | (uint64_t)w.opcode << 32;
		s.opcode = verbs_opcode(w.opcode);
		s.send_flags = w.signal ? IBV_SEND_SIGNALED : 0;
		s.sg_list = sg;
		if (w.inl) {
			sg[0].addr = (uintptr_t)w.inl_data;
			sg[0].length = w.inl_len;
			sg[0].lkey = 0;
			s.num_sge = 1;
			s.send_flags |= IBV_SEND_INLINE;
		} else {
			for (k = 0; k < w.nseg; k++) {
				sg[k].addr = w.seg[k].addr;
				sg[k].length = w.seg[k].len;
				sg[k].lkey = w.seg[k].key;
			}
			s.num_sge = (int)w.nseg;
		}
		if (s.opcode == IBV_WR_RDMA_WRITE || s.opcode == IBV_WR_RDMA_READ) {
			s.wr.rdma.remote_addr = w.raddr;
			s.wr.rdma.rkey = w.rkey;
		} else if (s.opcode == IBV_WR_SEND_WITH_INV) {
			s.invalidate_rkey = w.imm;
		}
		if (ibv_post_send(q->qp, &s, &bad) != 0) {
			/* rxe's queue is full (the driver keeps no more outstanding than it
			 * asked for, so only for a moment): the next pass. */
			if (++q->post_fails == 100000)
				fprintf(stderr, "mlx5 model: QP %u: rxe refuses its sends\n",
					q->sq.qpn);
			break;
		}
		q->post_fails = 0;
		q->sq_ci += w.nbb;
		done++;
	}
	return done;
}

static unsigned int
do_rq(struct mq_qp *q)
{
	uint16_t rec =
		(uint16_t)be32toh(__atomic_load_n(&q->dbrec[MLX5_RCV_DBR], __ATOMIC_ACQUIRE));
	unsigned int done = 0;

	while ((uint16_t)q->rq_ci != rec) {
		struct mmw_seg seg[MMW_MAX_SEG];
		struct ibv_sge sg[MMW_MAX_SEG];
		struct ibv_recv_wr r, *bad = NULL;
		unsigned int n, k;

		n = mmw_recv_decode(q->rq + (size_t)(q->rq_ci & (q->rq_cnt - 1)) * q->rq_stride,
				    q->rq_stride, seg);
		for (k = 0; k < n; k++) {
			sg[k].addr = seg[k].addr;
			sg[k].length = seg[k].len;
			sg[k].lkey = seg[k].key;
		}
		memset(&r, 0, sizeof(r));
		r.wr_id = WR_RECV | q->rq_ci;
		r.sg_list = sg;
		r.num_sge = (int)n;
		if (ibv_post_recv(q->qp, &r, &bad) != 0)
			break;
		q->rq_ci++;
		done++;
	}
	if (done != 0 && q->err_seen) {
		/* rxe flushes receives posted in the error state only on a state change. */
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

		(void)ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	}
	return done;
}

static unsigned int
do_srq(struct mq_srq *s)
{
	unsigned int done = 0;
	char why[200];

	for (;;) {
		struct mmw_seg seg[MMW_MAX_SEG];
		struct ibv_sge sg[MMW_MAX_SEG];
		struct ibv_recv_wr r, *bad = NULL;
		unsigned int n = 0, k;
		int idx = mmw_srq_peek(&s->r, seg, &n, why, sizeof(why));

		if (idx == -2)
			die(why);
		if (idx < 0)
			break;
		for (k = 0; k < n; k++) {
			sg[k].addr = seg[k].addr;
			sg[k].length = seg[k].len;
			sg[k].lkey = seg[k].key;
		}
		memset(&r, 0, sizeof(r));
		r.wr_id = WR_RECV | WR_SRQ | (uint64_t)s->id << 32 | (uint32_t)idx;
		r.sg_list = sg;
		r.num_sge = (int)n;
		if (ibv_post_srq_recv(s->srq, &r, &bad) != 0)
			break; /* (rxe's is full for a moment: the next pass) */
		mmw_srq_advance(&s->r);
		done++;
	}
	return done;
}

static uint8_t
syndrome(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_LOC_LEN_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	case IBV_WC_LOC_QP_OP_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	case IBV_WC_LOC_PROT_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	case IBV_WC_MW_BIND_ERR:
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	case IBV_WC_BAD_RESP_ERR:
		return MLX5_CQE_SYNDROME_BAD_RESP_ERR;
	case IBV_WC_LOC_ACCESS_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR;
	case IBV_WC_REM_ACCESS_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	case IBV_WC_REM_OP_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
	case IBV_WC_RETRY_EXC_ERR:
		return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
	case IBV_WC_REM_ABORT_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR;
	default:
		return 0xff; /* (the driver's GENERAL_ERR) */
	}
}

/* A received message of @len bytes into the CQE: gathered back from the receive's buffers
 * (which the driver has not reused: the receive is not complete for it yet), then cleared.
 * @srq: the receive was that SRQ's (else @q's own). */
static bool
scatter_into(struct mq_qp *q, const struct mq_srq *srq, uint32_t idx, uint32_t len, uint8_t *out)
{
	struct mmw_seg seg[MMW_MAX_SEG];
	unsigned int n, k;
	uint32_t got = 0;

	if (srq != NULL)
		n = mmw_srq_segs(&srq->r, idx, seg);
	else if (q != NULL)
		n = mmw_recv_decode(q->rq + (size_t)(idx & (q->rq_cnt - 1)) * q->rq_stride,
				    q->rq_stride, seg);
	else
		return false;
	for (k = 0; k < n && got < len; k++) {
		uint32_t c = seg[k].len < len - got ? seg[k].len : len - got;

		memcpy(out + got, (void *)(uintptr_t)seg[k].addr, c);
		memset((void *)(uintptr_t)seg[k].addr, 0xee, c);
		got += c;
	}
	return got == len;
}

static unsigned int
do_cq(struct mq_cq *c)
{
	struct ibv_wc wc[16];
	uint32_t ci = be32toh(__atomic_load_n(&c->r.dbrec[0], __ATOMIC_ACQUIRE)) & 0xffffffu;
	uint32_t room = c->r.cnt - ((c->r.pi - ci) & 0xffffffu);
	int n, i;

	if (room > c->r.cnt)
		die("CQ consumer index ahead of the producer");
	if (room == 0)
		return 0; /* the driver has not polled: rxe keeps the rest */
	n = ibv_poll_cq(c->cq, (int)(room < 16 ? room : 16), wc);
	for (i = 0; i < n; i++) {
		const struct ibv_wc *e = &wc[i];
		bool recv = (e->wr_id & WR_RECV) != 0;
		const struct mq_srq *srq =
			(e->wr_id & WR_SRQ) ? find_srq((uint32_t)(e->wr_id >> 32) & 0xffffu) : NULL;
		uint16_t counter = (uint16_t)e->wr_id;
		uint8_t wqe_op = (uint8_t)(e->wr_id >> 32);
		struct mq_qp *q = find_qp(c->cq, e->qp_num);
		uint8_t inl[32];

		if (e->status != IBV_WC_SUCCESS) {
			if (q != NULL)
				q->err_seen = true;
			mmw_cqe_err(&c->r, !recv, e->qp_num, counter, recv ? 0 : wqe_op,
				    syndrome(e->status));
		} else if (!recv) {
			mmw_cqe_ok(&c->r, MLX5_CQE_REQ, e->qp_num, counter, wqe_op,
				   wqe_op == MLX5_OPCODE_RDMA_READ ? e->byte_len : 0, 0, NULL);
		} else {
			bool inv = (e->wc_flags & IBV_WC_WITH_INV) ||
				   (e->wc_flags & KERNEL_WC_WITH_INV);
			bool in_cqe = mq_scatter && e->byte_len <= sizeof(inl) &&
				      scatter_into(q, srq, counter, e->byte_len, inl);

			mmw_cqe_ok(&c->r, inv ? MLX5_CQE_RESP_SEND_INV : MLX5_CQE_RESP_SEND,
				   e->qp_num, counter, 0, e->byte_len,
				   inv ? e->invalidated_rkey : 0, in_cqe ? inl : NULL);
		}
	}
	return n > 0 ? (unsigned int)n : 0;
}

/*
 * The device flushes receives posted to a QP in the error state; rxe flushes only those posted
 * before the QP's last state change. The control path moves QPs to error without telling the
 * model (ibv_modify_qp()), so every 10 ms each QP not yet known to be in error is asked; one that
 * is gets told "error" again, which makes rxe flush what was posted since.
 */
static void
check_states(void)
{
	struct mq_qp *q;

	for (q = qps; q != NULL; q = q->next) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		if (q->err_seen)
			continue;
		if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_ERR) {
			struct ibv_qp_attr e = {.qp_state = IBV_QPS_ERR};

			q->err_seen = true;
			(void)ibv_modify_qp(q->qp, &e, IBV_QP_STATE);
		}
	}
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *
mq_main(void *arg)
{
	unsigned int idle = 0;
	uint64_t checked = 0;

	(void)arg;
	for (;;) {
		unsigned int done = 0;
		struct mq_srq *s;
		struct mq_qp *q;
		struct mq_cq *c;
		uint64_t t = now_ms();

		pthread_mutex_lock(&mq_lock);
		if (t - checked >= 10) {
			check_states();
			checked = t;
		}
		for (s = srqs; s != NULL; s = s->next)
			done += do_srq(s);
		for (q = qps; q != NULL; q = q->next) {
			done += do_rq(q);
			done += do_sq(q);
		}
		for (c = cqs; c != NULL; c = c->next)
			done += do_cq(c);
		pthread_mutex_unlock(&mq_lock);
		if (done != 0) {
			idle = 0;
		} else if (++idle < 200) {
			sched_yield();
		} else {
			usleep(50);
		}
	}
	return NULL;
}

static void
mq_prepare(void)
{
	pthread_mutex_lock(&mq_lock);
}

static void
mq_parent(void)
{
	pthread_mutex_unlock(&mq_lock);
}

static void
mq_child(void)
{
	/* A fork()ed child: the parent's queues are not its own, its thread did not come. */
	pthread_mutex_init(&mq_lock, NULL);
	qps = NULL;
	cqs = NULL;
	srqs = NULL;
	mq_running = false;
}

/* Under mq_lock. */
static void
mq_start(void)
{
	const char *sc = getenv("RPCR_MLX5_MODEL_SCATTER");

	if (mq_running)
		return;
	mq_scatter = sc != NULL && strcmp(sc, "1") == 0;
	if (pthread_create(&mq_thread, NULL, mq_main, NULL) != 0)
		die("cannot start the model's thread");
	pthread_detach(mq_thread);
	mq_running = true;
}

/* ---- the glue ---- */

static bool
mq_is_supported(struct ibv_device *device)
{
	return strncmp(ibv_get_device_name(device), "rxe", 3) == 0;
}

/* Queues as libmlx5 sizes them: the largest WQE (control, remote address, then the gather list
 * or the inline data) times the requests, rounded to a power of 2 blocks; receive WQEs of a
 * power of 2 data segments. */
static int
init_qp(struct ibv_qp *qp, struct mlx5dv_qp *out)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct mq_qp *q;
	uint32_t body, wqe;

	if (ibv_query_qp(qp, &a, IBV_QP_CAP, &ia) != 0)
		return errno != 0 ? errno : EINVAL;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return ENOMEM;
	body = a.cap.max_send_sge * 16;
	if (((4 + a.cap.max_inline_data + 15) & ~15u) > body)
		body = (4 + a.cap.max_inline_data + 15) & ~15u;
	wqe = (32 + body + BB - 1) & ~(BB - 1);
	q->qp = qp;
	q->sq.qpn = qp->qp_num;
	q->sq.cnt = mmw_pow2up(a.cap.max_send_wr * wqe / BB);
	q->sq.buf = mmw_zalloc((size_t)q->sq.cnt * BB);
	q->rq_cnt = mmw_pow2up(a.cap.max_recv_wr != 0 ? a.cap.max_recv_wr : 1);
	q->rq_stride = mmw_pow2up(a.cap.max_recv_sge * 16 > 16 ? a.cap.max_recv_sge * 16 : 16);
	q->rq = mmw_zalloc((size_t)q->rq_cnt * q->rq_stride);
	q->dbrec = mmw_zalloc(64);
	q->reg = mmw_zalloc(512);
	memset(out, 0, sizeof(*out));
	out->dbrec = q->dbrec;
	out->sq.buf = q->sq.buf;
	out->sq.wqe_cnt = q->sq.cnt;
	out->sq.stride = BB;
	out->rq.buf = q->rq;
	out->rq.wqe_cnt = q->rq_cnt;
	out->rq.stride = q->rq_stride;
	out->bf.reg = q->reg;
	out->bf.size = 256;
	pthread_mutex_lock(&mq_lock);
	q->next = qps;
	qps = q;
	mq_start();
	pthread_mutex_unlock(&mq_lock);
	return 0;
}

static int
init_cq(struct ibv_cq *cq, struct mlx5dv_cq *out)
{
	struct mq_cq *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return ENOMEM;
	c->cq = cq;
	mmw_cq_init(&c->r, mmw_pow2up((uint32_t)cq->cqe + 1), 64,
		    0x100 + (uint32_t)(uintptr_t)cq % 4096);
	mmw_cq_dv(&c->r, out);
	pthread_mutex_lock(&mq_lock);
	c->next = cqs;
	cqs = c;
	mq_start();
	pthread_mutex_unlock(&mq_lock);
	return 0;
}

/* An SRQ laid out as libmlx5 lays one out (mmw_srq_init()), for the rxe SRQ's sizes. */
static int
init_srq(struct ibv_srq *srq, struct mlx5dv_srq *out)
{
	struct ibv_srq_attr a;
	struct mq_srq *s;
	int rc = ibv_query_srq(srq, &a);

	if (rc != 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ENOMEM;
	s->srq = srq;
	mmw_srq_init(&s->r, a.max_wr, a.max_sge);
	pthread_mutex_lock(&mq_lock);
	s->id = ++srq_ids & 0xffffu;
	mmw_srq_dv(&s->r, s->id, out);
	s->next = srqs;
	srqs = s;
	mq_start();
	pthread_mutex_unlock(&mq_lock);
	return 0;
}

static int
mq_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	int rc = 0;

	if (type & MLX5DV_OBJ_QP)
		rc = init_qp(obj->qp.in, obj->qp.out);
	if (rc == 0 && (type & MLX5DV_OBJ_CQ))
		rc = init_cq(obj->cq.in, obj->cq.out);
	if (rc == 0 && (type & MLX5DV_OBJ_SRQ))
		rc = init_srq(obj->srq.in, obj->srq.out);
	if (type & ~(uint64_t)(MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ))
		rc = EOPNOTSUPP;
	return rc;
}

/*
 * The driver rang a doorbell on @qp (it calls this after each burst: the model cannot watch the
 * records as a device does). Done at once, in the driver's thread: a receive the driver posted
 * is rxe's before the driver returns, as it would be the device's (the ibverbs control path
 * connects with rnr_retry 0: a Send finding no receive fails at once).
 * Also: the control path is about to move @qp to error: what the driver rang for is executed
 * first, as a device would have by then.
 */
/* (mq_lock held.) */
static void
qp_catch_up(struct ibv_qp *qp)
{
	struct mq_qp *q;

	for (q = qps; q != NULL; q = q->next) {
		if (q->qp == qp) {
			(void)do_rq(q);
			(void)do_sq(q);
			break;
		}
	}
}

static void
mq_qp_sync(struct ibv_qp *qp)
{
	pthread_mutex_lock(&mq_lock);
	qp_catch_up(qp);
	pthread_mutex_unlock(&mq_lock);
}

/*
 * The control path is about to move @qp to error (it ends the connection, and the engine hears
 * of that next): what the driver rang for is executed, and what rxe completed for the QP is
 * written into its CQs, as a device has written those CQEs by then. Without the second step the
 * model thread could still hold a completion in error (a receive too short: LOC_LEN_ERR) when
 * the engine, told of the disconnect, polls its CQ for the last time before tearing the
 * connection down: the error would never be counted.
 */
static void
mq_qp_error(struct ibv_qp *qp)
{
	struct mq_cq *c;

	pthread_mutex_lock(&mq_lock);
	qp_catch_up(qp);
	for (c = cqs; c != NULL; c = c->next)
		if (c->cq == qp->send_cq || c->cq == qp->recv_cq)
			(void)do_cq(c);
	pthread_mutex_unlock(&mq_lock);
}

/* The driver posted to an SRQ: rxe has the receives before the driver returns (as mq_qp_sync()). */
static void
mq_srq_sync(struct ibv_srq *srq)
{
	struct mq_srq *s;

	pthread_mutex_lock(&mq_lock);
	for (s = srqs; s != NULL; s = s->next) {
		if (s->srq == srq) {
			(void)do_srq(s);
			break;
		}
	}
	pthread_mutex_unlock(&mq_lock);
}

static void
mq_srq_release(struct ibv_srq *srq)
{
	struct mq_srq **p, *s;

	pthread_mutex_lock(&mq_lock);
	for (p = &srqs; (s = *p) != NULL; p = &s->next) {
		if (s->srq == srq) {
			*p = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&mq_lock);
	if (s == NULL)
		return;
	mmw_srq_fini(&s->r);
	free(s);
}

static void
mq_qp_release(struct ibv_qp *qp)
{
	struct mq_qp **p, *q;
	struct mq_cq *c;

	pthread_mutex_lock(&mq_lock);
	/* What rxe completed for it goes into the CQs first: a device has written those CQEs by
	 * the time the QP is destroyed, and the driver buries a QP once a poll finds its CQs empty
	 * (its receives from an SRQ would be lost). */
	for (c = cqs; c != NULL; c = c->next)
		if (c->cq == qp->send_cq || c->cq == qp->recv_cq)
			(void)do_cq(c);
	for (p = &qps; (q = *p) != NULL; p = &q->next) {
		if (q->qp == qp) {
			*p = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&mq_lock);
	if (q == NULL)
		return;
	/* The driver no longer reads these (its bookkeeping of the QP is its own). */
	free(q->sq.buf);
	free(q->rq);
	free(q->dbrec);
	free(q->reg);
	free(q);
}

static void
mq_cq_release(struct ibv_cq *cq)
{
	struct mq_cq **p, *c;

	pthread_mutex_lock(&mq_lock);
	for (p = &cqs; (c = *p) != NULL; p = &c->next) {
		if (c->cq == cq) {
			*p = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&mq_lock);
	if (c == NULL)
		return;
	mmw_cq_fini(&c->r);
	free(c);
}

__attribute__((constructor)) static void
mq_init(void)
{
	pthread_atfork(mq_prepare, mq_parent, mq_child);
}

__attribute__((visibility("default"))) const struct rpcr_mlx5_glue rpcr_mlx5_glue = {
	.version = RPCR_MLX5_GLUE_VERSION,
	.what = "the mlx5 queue model over rxe (test/rdev/mlx5_model_rxe.c)",
	.is_supported = mq_is_supported,
	.init_obj = mq_init_obj,
	.doorbell = mq_qp_sync,
	.qp_sync = mq_qp_error,
	.qp_release = mq_qp_release,
	.cq_release = mq_cq_release,
	.srq_doorbell = mq_srq_sync,
	.srq_release = mq_srq_release,
};
