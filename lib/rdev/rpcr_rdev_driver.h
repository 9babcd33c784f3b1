/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_RDEV_DRIVER_H
#define RPCR_RDEV_DRIVER_H

/**
 * @file
 * The driver side of lib/rdev: the control-op table, the device structure drivers fill, driver
 * registration and the event queue drivers feed. Applications include rpcr_rdev.h only.
 */

#include <pthread.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_kvargs.h>
#include <rte_log.h>

#include "rpcr_rdev.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Log type of lib/rdev and its drivers. */
extern int rpcr_rdev_logtype;

#define RPCR_RDEV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, rpcr_rdev_logtype, "rdev: " fmt "\n", ##__VA_ARGS__)

/**
 * Control operations of a driver. Each returns 0 / a pointer, or a negative errno / NULL with
 * rte_errno set. A NULL entry means the operation is not supported (the generic layer answers
 * -ENOTSUP); arguments are checked by the generic layer before a driver sees them.
 */
struct rpcr_rdev_ops {
	/** Set up @p dev (dev->priv, dev->fp) from its arguments. */
	int (*probe)(struct rpcr_rdev *dev, struct rte_kvargs *args);
	/** Release everything probe set up. */
	int (*remove)(struct rpcr_rdev *dev);
	/** Describe the device. */
	int (*info_get)(struct rpcr_rdev *dev, struct rpcr_rdev_info *info);
	/** Allocate a protection domain. */
	struct rpcr_rdev_pd *(*pd_alloc)(struct rpcr_rdev *dev);
	/** Free a protection domain. */
	int (*pd_free)(struct rpcr_rdev_pd *pd);
	/** Register memory. */
	struct rpcr_rdev_mr *(*mr_reg)(struct rpcr_rdev_pd *pd, void *addr, size_t len,
				       uint32_t access);
	/** Remove a registration. */
	int (*mr_dereg)(struct rpcr_rdev_mr *mr);
	/** Invalidate a registration's keys. */
	int (*mr_invalidate)(struct rpcr_rdev_mr *mr);
	/** Give a registration new keys, valid. */
	int (*mr_rekey)(struct rpcr_rdev_mr *mr);
	/** Create a completion queue. */
	struct rpcr_rdev_cq *(*cq_create)(struct rpcr_rdev *dev, uint32_t depth);
	/** Destroy a completion queue. */
	int (*cq_destroy)(struct rpcr_rdev_cq *cq);
	/** Create an RC queue pair. */
	struct rpcr_rdev_qp *(*qp_create)(struct rpcr_rdev_pd *pd,
					  const struct rpcr_rdev_qp_attr *attr);
	/** Destroy a queue pair. */
	int (*qp_destroy)(struct rpcr_rdev_qp *qp);
	/** Listen for connections. */
	struct rpcr_rdev_listener *(*listen)(struct rpcr_rdev *dev, const char *addr, int backlog);
	/** Stop listening. */
	int (*listener_close)(struct rpcr_rdev_listener *l);
	/** Start connecting a QP. */
	int (*connect)(struct rpcr_rdev_qp *qp, const char *addr, const void *pdata, uint8_t len);
	/** Accept a connection request on a QP. */
	int (*accept)(struct rpcr_rdev_qp *qp, struct rpcr_rdev_conn_req *req, const void *pdata,
		      uint8_t len);
	/** Reject a connection request. */
	int (*reject)(struct rpcr_rdev_conn_req *req, const void *pdata, uint8_t len);
	/** Disconnect a QP. */
	int (*disconnect)(struct rpcr_rdev_qp *qp);
	/** A shareable region was added to the process (rpcr_rdev_region_add()). */
	void (*region_added)(struct rpcr_rdev *dev, const struct rpcr_rdev_region *region);
	/** A shareable region is about to be removed. */
	void (*region_removed)(struct rpcr_rdev *dev, uint32_t region_id);
	/** Allocate a memory window (drivers with RPCR_RDEV_CAP_MW; NULL: none). */
	struct rpcr_rdev_mw *(*mw_alloc)(struct rpcr_rdev_pd *pd);
	/** Free a memory window. */
	int (*mw_free)(struct rpcr_rdev_mw *mw);
	/** Completion events (drivers with RPCR_RDEV_CAP_CQ_EVENT; NULL: none): the CQ's fd, arm
	 *  (0, -EAGAIN or -ENOTSUP), disarm. */
	int (*cq_event_fd)(struct rpcr_rdev_cq *cq);
	int (*cq_arm)(struct rpcr_rdev_cq *cq);
	void (*cq_disarm)(struct rpcr_rdev_cq *cq);
	/** Shared receive queues (drivers with RPCR_RDEV_CAP_SRQ; NULL: none): create (with
	 *  @c dev_id, @c pd and the sizes granted filled in), destroy (-EBUSY while QPs use it),
	 *  arm the limit event. */
	struct rpcr_rdev_srq *(*srq_create)(struct rpcr_rdev_pd *pd,
					    const struct rpcr_rdev_srq_attr *attr);
	int (*srq_destroy)(struct rpcr_rdev_srq *srq);
	int (*srq_arm)(struct rpcr_rdev_srq *srq, uint32_t limit);
};

/** A listener; drivers embed it first in their own. */
struct rpcr_rdev_listener {
	struct rpcr_rdev *dev; /**< Owning device. */
};

/** A connection request; drivers embed it first in their own. */
struct rpcr_rdev_conn_req {
	struct rpcr_rdev *dev; /**< Owning device. */
};

/** A driver. */
struct rpcr_rdev_driver {
	TAILQ_ENTRY(rpcr_rdev_driver) next; /**< In the list of drivers. */
	const char *name;                   /**< "shm", "ibverbs", "mlx5". */
	const struct rpcr_rdev_ops *ops;    /**< Control operations. */
	const char *const *args;            /**< Accepted argument keys, NULL-terminated. */
};

/** One queued connection event. */
struct rpcr_rdev_event_entry {
	TAILQ_ENTRY(rpcr_rdev_event_entry) next;
	struct rpcr_rdev_event ev;
};

/** An open device. */
struct rpcr_rdev {
	uint16_t id;                           /**< Index in the device table. */
	char name[RPCR_RDEV_NAME_MAX];         /**< Device name (devargs as given). */
	const struct rpcr_rdev_driver *driver; /**< Its driver. */
	void *priv;                            /**< The driver's state. */
	struct rpcr_rdev_stats stats;          /**< Counters (updated with atomics). */
	uint32_t nobjs;                        /**< PDs, CQs, QPs, listeners alive (atomic). */
	/* Connection events: produced by drivers (any thread), consumed by the application. */
	pthread_mutex_t ev_lock;
	TAILQ_HEAD(, rpcr_rdev_event_entry) events;
	int ev_fd; /**< eventfd counting queued events. */
};

/** Register a driver (called from a constructor, see RPCR_RDEV_REGISTER). */
void rpcr_rdev_driver_register(struct rpcr_rdev_driver *drv);

/**
 * Register driver @p drv under @p nm at load time. Static links must keep the constructor:
 * link librpcr with --whole-archive.
 */
#define RPCR_RDEV_REGISTER(nm, drv)                \
	RTE_INIT(rpcr_rdev_register_##nm)          \
	{                                          \
		(drv).name = RTE_STR(nm);          \
		rpcr_rdev_driver_register(&(drv)); \
	}

/** Set the fast-path table of @p dev. */
void rpcr_rdev_set_fp_ops(struct rpcr_rdev *dev, const struct rpcr_rdev_fp_ops *fp);

/** Queue a connection event for the application (thread-safe). @return 0 or -ENOMEM. */
int rpcr_rdev_event_push(struct rpcr_rdev *dev, const struct rpcr_rdev_event *ev);

/** Drop queued events that name @p qp (before it is freed). @return how many. */
int rpcr_rdev_event_purge_qp(struct rpcr_rdev *dev, const struct rpcr_rdev_qp *qp);

/**
 * Drop queued CONNECT_REQUEST events carrying @p req. @return how many: 0 means the application
 * already holds the request, which then must stay valid until it accepts or rejects it.
 */
int rpcr_rdev_event_purge_req(struct rpcr_rdev *dev, const struct rpcr_rdev_conn_req *req);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_RDEV_DRIVER_H */
