/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef VRB_INTERNAL_H
#define VRB_INTERNAL_H

/*
 * The ibverbs driver's process-private state. Every libibverbs and librdmacm function it calls
 * goes through the glue table (vrb_glue.h), except the fast path's header inlines.
 */

#include <pthread.h>
#include <stdbool.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rte_spinlock.h>

#include "rpcr_rdev_driver.h"
#include "vrb_glue.h"

#define VRB_LOG(level, fmt, ...) RPCR_RDEV_LOG(level, "ibverbs: " fmt, ##__VA_ARGS__)

/* Most work requests one post call hands to the provider: bursts are cut to this. */
#define VRB_POLL_BURST 32u

/*
 * Private data goes on the wire as it is. The IB CM carries it in fixed-size fields (REQ 56 bytes
 * after rdma_cm's header, REP 196, REJ 148) with no length, so on RoCE and InfiniBand a receiver
 * gets the sender's bytes followed by zeros, reported up to RPCR_RDEV_PDATA_MAX bytes; iWARP's MPA
 * carries the exact length (RPCR_RDEV_CAP_PDATA_EXACT). RFC 8797 private data is found by its
 * magic, so the zeros do not matter to it.
 */

/* rdma_cm timeouts (ms). Address resolution is retried with a short timeout: the first one in a
 * fresh network namespace can wait out its whole timeout (neighbour resolution). */
#define VRB_RESOLVE_MS      500
#define VRB_RESOLVE_RETRIES 8
#define VRB_ROUTE_MS        2000

enum vrb_conn_state {
	VRB_CONN_RESOLVING,   /* client: address and route being resolved */
	VRB_CONN_CONNECTING,  /* client: REQ sent, waiting for REP or REJ */
	VRB_CONN_REQUESTED,   /* server: CONNECT_REQUEST delivered, waiting for accept/reject */
	VRB_CONN_ACCEPTED,    /* server: REP sent, waiting for RTU */
	VRB_CONN_ESTABLISHED, /* both: connected */
	VRB_CONN_CLOSED,      /* over: failed, rejected, disconnected, or the peer went away */
};

struct vrb_qp;
struct vrb_listener;
struct vrb_conn;

/* A connection request handed to the application (inside its connection). */
struct vrb_conn_req {
	struct rpcr_rdev_conn_req pub; /* first */
	struct vrb_conn *conn;
};

/* One rdma_cm connection: its cm_id and where it stands. Under the device lock. */
struct vrb_conn {
	TAILQ_ENTRY(vrb_conn) next;
	struct rdma_cm_id *id;
	enum vrb_conn_state state;
	struct vrb_qp *qp;             /* bound QP (client: at connect; server: at accept) */
	struct vrb_listener *listener; /* server, while the request waits and the listener lives */
	struct vrb_conn_req req;       /* server: the request the application holds */
	bool req_out;                  /* req given to the application, not yet consumed */
	int retries;                   /* address resolutions left */
	uint8_t peer_rd;               /* server: the REQ's responder resources */
	uint8_t peer_init;             /* server: the REQ's initiator depth */
	struct sockaddr_storage dst;
	uint8_t pdata_len; /* client: what connect offers (sent with the REQ after routing) */
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
};

struct vrb_listener {
	struct rpcr_rdev_listener pub; /* first */
	TAILQ_ENTRY(vrb_listener) next;
	struct rdma_cm_id *id;
};

struct vrb_pd {
	struct rpcr_rdev_pd pub; /* first */
	struct ibv_pd *pd;
};

struct vrb_mr {
	struct rpcr_rdev_mr pub; /* first */
	struct ibv_mr *mr;       /* NULL after an invalidation, until a rekey */
};

struct vrb_mw {
	struct rpcr_rdev_mw pub; /* first */
	struct ibv_mw *mw;       /* type 2: bound by IBV_WR_BIND_MW on a QP */
};

struct vrb_cq {
	struct rpcr_rdev_cq pub; /* first */
	struct vrb_dev *vd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch; /* its completion events (non-blocking fd), NULL: none */
	uint32_t nqps;               /* QPs that use it (control path) */
	/* Destroyed QPs whose completions may still be in this CQ (verbs does not take them out):
	 * their bookkeeping stays until a poll finds the CQ empty; their completions are dropped. */
	rte_spinlock_t grave_lock;
	struct vrb_qp *grave;
};

struct vrb_srq;

/* A posted work request's bookkeeping; the verbs wr_id points here. */
struct vrb_wr {
	union {
		struct vrb_qp *qp;   /* recv 0, 1 */
		struct vrb_srq *srq; /* recv VRB_WR_SRQ: the QP comes from the completion */
	};
	uint64_t wr_id; /* the application's */
	uint32_t seq;   /* position in its queue */
	uint8_t recv;   /* receive queue (1), shared receive queue (VRB_WR_SRQ), send queue (0) */
	uint8_t opcode; /* enum rpcr_rdev_wc_opcode */
	uint8_t signal; /* a successful completion is reported */
	uint8_t pad;
	uint32_t len; /* send queue: bytes moved (verbs reports none for Write/Read) */
};

#define VRB_WR_SRQ 2

/*
 * A shared receive queue (the control path's part: pub, vd, srq, the QP table; the rest is the
 * ibverbs data path's, a data path of its own keeps its members in a structure of dp->srq_size
 * that begins with this one). Its receives complete out of order (each on the QP a Send arrived
 * on), so its slots are held until their completion is polled, and a post takes the next slot
 * only once free (twice the receives in slots: one slow completion blocks nothing). The QP a
 * completion names (its qp_num) is found in @qps, an open-addressed table of the QPs that take
 * from it, changed by QP creation and destruction: both on the thread that polls their receive
 * CQ, or while nobody polls it (rpcr_rdev.h).
 */
struct vrb_srq {
	struct rpcr_rdev_srq pub; /* first */
	struct vrb_dev *vd;
	struct ibv_srq *srq;
	struct vrb_qp **qps; /* by qp_num (vrb_srq_qp_find()) */
	uint32_t qps_mask;
	uint32_t nqps;
	/* The ibverbs data path's (vrb_rxtx.c). */
	struct vrb_wr *slots;
	uint8_t *held;
	uint32_t mask;
	uint32_t prod;        /* receives posted */
	uint32_t outstanding; /* posted, completion not yet polled */
	struct ibv_recv_wr *rwr;
	struct ibv_sge *sge; /* max_sge per receive of a burst */
};

struct vrb_qp {
	struct rpcr_rdev_qp pub; /* first */
	struct vrb_dev *vd;
	struct ibv_qp *qp;
	struct vrb_srq *srq; /* receives from here (NULL: its own queue) */
	struct vrb_cq *scq;
	struct vrb_cq *rcq;
	/* Send queue: slots taken in order, freed in order by completions (a completion frees its
	 * own slot and every earlier unsignalled one, as on hardware). */
	struct vrb_wr *sq;
	uint32_t sq_mask;
	uint32_t sq_head; /* posted */
	uint32_t sq_tail; /* completed */
	/* Receive queue. */
	struct vrb_wr *rq;
	uint32_t rq_mask;
	uint32_t rq_head;
	uint32_t rq_tail;
	/* Work-request lists built per burst: one ibv_post_send()/ibv_post_recv() per burst. */
	struct ibv_send_wr *swr;
	struct ibv_recv_wr *rwr;
	struct ibv_sge *sge; /* max_send_sge per send WR, then max_recv_sge per receive */
	uint32_t max_inline; /* inline bytes granted */
	bool send_inv;       /* the device can Send with Invalidate */
	/* Set when the QP is known to be in the error state (fast path and control thread). */
	bool in_error;
	/* Set by the fast path on a remote-class error: the control thread disconnects. */
	bool need_disc;
	struct vrb_conn *conn; /* under the device lock */
	/* Destroyed: on its CQs' graveyards (next in each: [0] send CQ, [1] receive CQ). */
	bool dead;
	uint8_t grave_refs;
	struct vrb_qp *grave_next[2];
};

/*
 * The data path under this control path: the ibverbs driver's own (vrb_rxtx.c: verbs work
 * requests through ibv_post_send()/ibv_poll_cq()) or the mlx5 driver's (drivers/rdev/mlx5: work
 * queue entries written and completions read by rpcr). The control path (this directory's
 * vrb_ctrl.c) creates and destroys every verbs object and drives connections for both; a data
 * path keeps its bookkeeping in QP and CQ structures that begin with struct vrb_qp / struct
 * vrb_cq (of the sizes it gives, allocated zeroed by the control path) and in vd->dp_priv.
 *
 * Order: dev_check at probe (after the device is opened; it may choose another fast path than
 * dp->fp, in vd->fp); cq_init after ibv_create_cq();
 * qp_init after ibv_create_qp() and the move to INIT, with pub.attr, vd, scq and rcq set;
 * qp_error before the control path moves a QP to the error state; qp_release when the
 * application destroys the QP, before ibv_destroy_qp(); qp_fini when the QP's bookkeeping is freed (after its CQs were found empty, vrb_cq_bury(), or
 * on a failed create); cq_fini before ibv_destroy_cq(); srq_init after ibv_create_srq(), with
 * pub and vd set; srq_release before ibv_destroy_srq(), srq_fini after it; dev_fini at remove.
 * A NULL hook does nothing. A failed qp_init is followed by qp_release then qp_fini, a failed
 * cq_init by cq_fini, a failed srq_init by srq_release then srq_fini: they cope with what the
 * init left half done.
 */
struct vrb_dp {
	const char *name;                  /* "ibverbs", "mlx5" */
	const struct rpcr_rdev_fp_ops *fp; /* its fast path */
	size_t qp_size;                    /* its QP structure (struct vrb_qp first) */
	size_t cq_size;                    /* its CQ structure (struct vrb_cq first) */
	size_t srq_size;                   /* its SRQ structure (struct vrb_srq first) */
	bool mw;                           /* binds windows and invalidates by work request */
	bool cq_events; /* arming through verbs works (its consumer index is libibverbs' own) */
	bool srq;       /* shared receive queues (its poll maps their completions) */
	int (*dev_check)(struct vrb_dev *vd);
	int (*cq_init)(struct vrb_cq *cq);
	void (*cq_fini)(struct vrb_cq *cq);
	int (*qp_init)(struct vrb_qp *qp);
	void (*qp_error)(struct vrb_qp *qp);
	void (*qp_release)(struct vrb_qp *qp);
	void (*qp_fini)(struct vrb_qp *qp);
	int (*srq_init)(struct vrb_srq *srq);
	void (*srq_release)(struct vrb_srq *srq);
	void (*srq_fini)(struct vrb_srq *srq);
	void (*dev_fini)(struct vrb_dev *vd);
};

struct vrb_dev {
	struct rpcr_rdev *dev;
	const struct vrb_dp *dp;           /* the data path */
	const struct rpcr_rdev_fp_ops *fp; /* its fast path (dp->fp unless dev_check chose) */
	void *dp_priv;                     /* the data path's own, per device */
	char ibname[IBV_SYSFS_NAME_MAX];
	struct ibv_context **all; /* rdma_get_devices() */
	struct ibv_context *ctx;  /* ours, one of @all: the contexts rdma_cm ids carry */
	struct ibv_device_attr attr;
	enum ibv_transport_type transport;
	uint8_t port;
	bool rxe;   /* rxe reports WITH_INV with the kernel's flag bit */
	int mw_arg; /* devarg mw=: -1 off, 0 auto (not on rxe), 1 on */
	uint32_t max_inline;
	struct sockaddr_storage src; /* our address (ip= or the GID table), for connects */
	bool have_src;
	struct rdma_event_channel *ch;
	/* Control thread. */
	pthread_t thread;
	bool thread_running;
	int wake_fd;
	volatile bool stop;
	bool removed;         /* DEVICE_REMOVAL reported */
	pthread_mutex_t lock; /* conns, listeners, QP connection state */
	TAILQ_HEAD(, vrb_conn) conns;
	TAILQ_HEAD(, vrb_listener) listeners;
	uint32_t next_pd;
};

static inline struct vrb_dev *
vrb_dev(const struct rpcr_rdev *dev)
{
	return (struct vrb_dev *)dev->priv;
}

/* A receive request a QP of @nsge entries cannot take (too many entries, or none listed). */
static inline bool
vrb_recv_wr_bad(const struct rpcr_rdev_recv_wr *w, uint32_t nsge)
{
	return w->num_sge > nsge || (w->num_sge != 0 && w->sg_list == NULL);
}

/* The ibverbs driver's own data path (vrb_rxtx.c). */
extern const struct vrb_dp vrb_verbs_dp;

/* Ask the control thread to disconnect @qp's connection (cold path of vrb_rxtx.c). */
void vrb_qp_fail(struct vrb_qp *qp);

/* A completion of @qp's failed with @st (cold path of every data path): RNR counted, the QP
 * known to be in the error state, and on an error the peer detected or that leaves it waiting
 * (the connection is over for both) the control thread asked to disconnect. A flush changes
 * nothing. */
void vrb_wc_error(struct vrb_qp *qp, enum ibv_wc_status st);

/* The device binds windows by work request (RPCR_RDEV_CAP_MW): type 2B windows, the memory
 * management extensions, the data path's support, and not rxe unless mw=on. */
bool vrb_has_mw(const struct vrb_dev *vd);

/* Free the bookkeeping of destroyed QPs on @cq's graveyard (the CQ was found empty). */
void vrb_cq_bury(struct vrb_cq *cq);

/* The QP numbered @qpn among those taking from @srq, or NULL (destroyed since). */
static inline struct vrb_qp *
vrb_srq_qp_find(const struct vrb_srq *srq, uint32_t qpn)
{
	uint32_t i = (qpn * 0x9e3779b1u) & srq->qps_mask;
	struct vrb_qp *q;

	while ((q = srq->qps[i]) != NULL) {
		if (q->pub.qp_num == qpn)
			return q;
		i = (i + 1) & srq->qps_mask;
	}
	return NULL;
}
void vrb_qp_free(struct vrb_qp *qp);

/* The control path, for a driver that brings its own data path (drivers/rdev/mlx5): its probe
 * is vrb_probe_dp() with its data path; every other operation is vrb_ops's, and its devargs are
 * vrb_args. */
int vrb_probe_dp(struct rpcr_rdev *dev, struct rte_kvargs *args, const struct vrb_dp *dp);
extern const struct rpcr_rdev_ops vrb_ops;
extern const char *const vrb_args[];

#endif /* VRB_INTERNAL_H */
