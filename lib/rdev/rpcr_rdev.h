/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_RDEV_H
#define RPCR_RDEV_H

/**
 * @file
 * The RDMA device layer: one API over every verbs driver (shm, ibverbs, mlx5), the "ethdev" of
 * rpcr.
 *
 * Control path (may block, allocate, lock): open a device by name and arguments
 * ("shm:path=/run/rpcr"), protection domains, memory registration, completion queues,
 * reliable-connected queue pairs, RDMA-CM-like connection management carrying up to 56 bytes of
 * private data each way, and connection events.
 *
 * Fast path (never blocks, allocates or locks): rpcr_rdev_post_send(), rpcr_rdev_post_recv(),
 * rpcr_rdev_poll_cq(), header inlines that index the device's fast-path table and make one
 * indirect call. A QP and its CQs are used by one thread at a time.
 *
 * Semantics are those of an InfiniBand RC queue pair: a Send consumes the peer's next posted
 * receive (none posted: RNR, the connection fails); RDMA Write and Read reach only memory the
 * peer registered with the matching remote access under a valid key; completions are ordered as
 * RC orders them; a failed work request moves the QP to the error state, where everything
 * outstanding completes with RPCR_RDEV_WC_WR_FLUSH_ERR.
 *
 * Functions returning int return 0 or a negative errno; constructors return NULL and set
 * rte_errno; bursts return counts.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most devices open at once. */
#define RPCR_RDEV_MAX_DEVS 32
/** Longest device or driver name. */
#define RPCR_RDEV_NAME_MAX 64
/** Private data carried by connect/accept/reject, as RDMA-CM allows for RC (56 bytes). */
#define RPCR_RDEV_PDATA_MAX 56

struct rpcr_rdev;
struct rpcr_rdev_listener;
struct rpcr_rdev_conn_req;
struct rpcr_rdev_srq;

/** @name Memory access flags (rpcr_rdev_mr_reg()). @{ */
#define RPCR_RDEV_ACCESS_LOCAL_WRITE  0x1u  /**< Local writes: receive buffers, Read targets. */
#define RPCR_RDEV_ACCESS_REMOTE_WRITE 0x2u  /**< The peer may RDMA Write here. */
#define RPCR_RDEV_ACCESS_REMOTE_READ  0x4u  /**< The peer may RDMA Read from here. */
#define RPCR_RDEV_ACCESS_REMOTE_INV   0x8u  /**< The peer may invalidate the key (Send w/ Inv). */
#define RPCR_RDEV_ACCESS_MW_BIND      0x10u /**< Memory windows may be bound over it. */
/** @} */

/** A protection domain: memory registered in it is reachable only through its QPs. */
struct rpcr_rdev_pd {
	struct rpcr_rdev *dev; /**< Owning device. */
	uint32_t id;           /**< Device-unique number. */
	uint32_t refs;         /**< Registrations and QPs in it (kept by lib/rdev). */
};

/** A memory registration. */
struct rpcr_rdev_mr {
	struct rpcr_rdev_pd *pd; /**< Protection domain. */
	void *addr;              /**< First byte registered. */
	size_t len;              /**< Bytes registered. */
	uint32_t access;         /**< RPCR_RDEV_ACCESS_* flags. */
	uint32_t lkey;           /**< Key for local gather/scatter entries. */
	uint32_t rkey;           /**< Key the peer uses (invalid after invalidation). */
};

/**
 * A memory window (type 2, as verbs' IBV_MW_TYPE_2): a remote key over part of a registration,
 * bound and invalidated by work requests (RPCR_RDEV_WR_BIND_MW, RPCR_RDEV_WR_LOCAL_INV) on the
 * queue pair it serves, so no system call is made per use. While bound, the peer of that queue
 * pair alone may reach the window's range with the window's key and access; a bind gives the
 * window a new key, and the previous one never works again. Devices with RPCR_RDEV_CAP_MW.
 */
struct rpcr_rdev_mw {
	struct rpcr_rdev_pd *pd; /**< Protection domain. */
	uint32_t rkey;           /**< The key of its last bind (set when the bind is posted). */
	/** The key its next bind will give, drawn by the driver ahead (when the window is
	 *  allocated, and as each bind is posted), so that a Send staged behind the bind, in
	 *  the same post, may advertise it. Unpredictable to the peer, as every key. */
	uint32_t next_rkey;
};

/** What RPCR_RDEV_WR_BIND_MW binds. */
struct rpcr_rdev_mw_bind {
	struct rpcr_rdev_mw *mw;       /**< The window: unbound (new, or invalidated). */
	const struct rpcr_rdev_mr *mr; /**< The registration the range lies in: same protection
					*   domain, RPCR_RDEV_ACCESS_MW_BIND. */
	uint64_t addr;                 /**< First byte of the range. */
	uint64_t len;                  /**< Bytes (0: a window that reaches nothing, where the
					*   driver allows it: mlx5 refuses it, EINVAL). */
	uint32_t access;               /**< RPCR_RDEV_ACCESS_REMOTE_READ and/or _REMOTE_WRITE
					*   (write needs LOCAL_WRITE on the registration). */
};

/** A completion queue. */
struct rpcr_rdev_cq {
	uint16_t dev_id; /**< Owning device's index (selects the fast-path table). */
	uint32_t depth;  /**< Completions it holds. */
};

/**
 * A shared receive queue (RPCR_RDEV_CAP_SRQ): receives that a Send arriving on any of its queue
 * pairs consumes, in the order posted, so that receive memory is sized by the load rather than by
 * the number of connections. The completion of such a receive names the QP it arrived on, in
 * that QP's receive CQ. A QP that fails flushes nothing of the SRQ (its receives stay for the
 * other QPs) except a receive a Send of its peer had begun to fill, which completes with an error
 * on that QP. A receive its peer had taken when the QP was destroyed, its completion not polled,
 * completes later on that CQ with @c qp NULL and RPCR_RDEV_WC_WR_FLUSH_ERR, so that its buffer
 * comes back. Create and destroy an SRQ's QPs on the thread that polls their receive CQ (or
 * while nobody does); destroy the SRQ once none of its completions is left to poll (its QPs
 * destroyed and their receive CQs since polled until found empty: a destroyed QP's completions
 * still name the SRQ). Receives still posted then are dropped.
 */
struct rpcr_rdev_srq {
	uint16_t dev_id;         /**< Owning device's index (selects the fast-path table). */
	struct rpcr_rdev_pd *pd; /**< Protection domain of its receives and of its QPs. */
	uint32_t max_wr;         /**< Receives it holds (at least those asked). */
	uint32_t max_sge;        /**< Scatter entries per receive. */
	void *user;              /**< Free for the application. */
};

/** Shared receive queue sizes (rpcr_rdev_srq_create()). */
struct rpcr_rdev_srq_attr {
	uint32_t max_wr;  /**< Receives posted at once, at most. */
	uint32_t max_sge; /**< Scatter entries per receive. */
	/** Arm the limit event at once (0: not armed; see rpcr_rdev_srq_arm()). */
	uint32_t limit;
};

/** Queue pair sizes. */
struct rpcr_rdev_qp_attr {
	struct rpcr_rdev_cq *send_cq; /**< Completions of sends, writes and reads. */
	struct rpcr_rdev_cq *recv_cq; /**< Completions of receives. */
	uint32_t max_send_wr;         /**< Outstanding send-queue work requests. */
	/** Outstanding receives. With @c srq: none are posted on the QP; shm sizes the QP's
	 *  receive completion slots by it (0: 64), and a peer that gets more of its Sends
	 *  completed and not yet polled fails the QP, as an overrun CQ would. */
	uint32_t max_recv_wr;
	uint32_t max_send_sge; /**< Gather entries per send work request. */
	uint32_t max_recv_sge; /**< Scatter entries per receive (with @c srq: ignored). */
	/** Bytes a Send may carry inline (0: none asked; the QP's attr says what it has, at
	 *  least this). A Send or Send with Invalidate whose gather list adds up to at most
	 *  the QP's max_inline (and not 0) is copied when it is posted, as verbs'
	 *  IBV_SEND_INLINE: its memory may be written again as soon as rpcr_rdev_post_send()
	 *  returns (its local keys may go unchecked). */
	uint32_t max_inline;
	bool sq_sig_all; /**< Every send WR completes, signalled or not. */
	/** Take receives from this shared receive queue (same protection domain) instead of the
	 *  QP's own: rpcr_rdev_post_recv() on the QP is then refused (EINVAL). NULL: its own. */
	struct rpcr_rdev_srq *srq;
};

/** Per-QP counters (the fast path increments them; the QP's thread reads them). */
struct rpcr_rdev_qp_stats {
	uint64_t doorbells;   /**< Send-queue post calls that posted anything. */
	uint64_t send_posted; /**< Send-queue work requests posted. */
	uint64_t recv_posted; /**< Receives posted. */
	uint64_t rnr_errors;  /**< Sends that found no receive posted at the peer. */
};

/** A reliable-connected queue pair. */
struct rpcr_rdev_qp {
	uint16_t dev_id;                 /**< Owning device's index. */
	uint32_t qp_num;                 /**< Device-unique number. */
	struct rpcr_rdev_pd *pd;         /**< Protection domain. */
	struct rpcr_rdev_qp_attr attr;   /**< Sizes granted (may exceed those asked). */
	void *user;                      /**< Free for the application. */
	struct rpcr_rdev_qp_stats stats; /**< Counters. */
};

/** One gather or scatter entry: local memory under a local key. */
struct rpcr_rdev_sge {
	uint64_t addr;   /**< Virtual address. */
	uint32_t length; /**< Bytes. */
	uint32_t lkey;   /**< Local key of a registration covering the range. */
};

/** Send-queue operations. */
enum rpcr_rdev_wr_opcode {
	RPCR_RDEV_WR_SEND = 0,     /**< Send into the peer's next posted receive. */
	RPCR_RDEV_WR_SEND_INV = 1, /**< Send, and invalidate @c invalidate_rkey at the peer. */
	RPCR_RDEV_WR_WRITE = 2,    /**< RDMA Write the gather list to remote_addr/rkey. */
	RPCR_RDEV_WR_READ = 3,     /**< RDMA Read remote_addr/rkey into the scatter list. */
	/** Bind @c bind->mw (RPCR_RDEV_CAP_MW): the window's key becomes its @c next_rkey (its
	 *  @c rkey when the post returns, and a new @c next_rkey is drawn), and a Send posted
	 *  after on the same QP, in the same post or a later one, may advertise it (the bind is
	 *  done before any later work request of the QP runs). */
	RPCR_RDEV_WR_BIND_MW = 4,
	/** Invalidate window key @c invalidate_rkey, on the QP the window is bound to: once it
	 *  completes, nothing reaches the window's range through that key. */
	RPCR_RDEV_WR_LOCAL_INV = 5,
};

/** @name Send work request flags. @{ */
#define RPCR_RDEV_WR_F_SIGNALED 0x1u /**< Generate a completion on success. */
/** @} */

/** A send-queue work request. */
struct rpcr_rdev_send_wr {
	uint64_t wr_id;                       /**< Returned in the completion. */
	struct rpcr_rdev_sge *sg_list;        /**< Gather (Send, Write) or scatter (Read) list. */
	uint16_t num_sge;                     /**< Entries in @c sg_list. */
	uint8_t opcode;                       /**< enum rpcr_rdev_wr_opcode. */
	uint8_t flags;                        /**< RPCR_RDEV_WR_F_*. */
	uint32_t invalidate_rkey;             /**< SEND_INV: the peer's key to invalidate. */
	uint32_t rkey;                        /**< WRITE, READ: the peer's key. */
	uint64_t remote_addr;                 /**< WRITE, READ: the peer's address. */
	const struct rpcr_rdev_mw_bind *bind; /**< BIND_MW: what to bind (read by the post). */
};

/** A receive work request. */
struct rpcr_rdev_recv_wr {
	uint64_t wr_id;                /**< Returned in the completion. */
	struct rpcr_rdev_sge *sg_list; /**< Scatter list. */
	uint16_t num_sge;              /**< Entries in @c sg_list. */
};

/** Completion status (the values of ibverbs' enum ibv_wc_status). */
enum rpcr_rdev_wc_status {
	RPCR_RDEV_WC_SUCCESS = 0,
	RPCR_RDEV_WC_LOC_LEN_ERR = 1,        /**< Receive buffer too small / gather too long. */
	RPCR_RDEV_WC_LOC_QP_OP_ERR = 2,      /**< Malformed work request. */
	RPCR_RDEV_WC_LOC_PROT_ERR = 4,       /**< A local key does not cover the local range. */
	RPCR_RDEV_WC_MW_BIND_ERR = 6,        /**< A window bind was refused (bound already, range
					      *   outside the registration, access not allowed). */
	RPCR_RDEV_WC_WR_FLUSH_ERR = 5,       /**< Flushed: the QP is in the error state. */
	RPCR_RDEV_WC_LOC_ACCESS_ERR = 8,     /**< Local key lacks the access needed. */
	RPCR_RDEV_WC_REM_INV_REQ_ERR = 9,    /**< The peer's receive was too small. */
	RPCR_RDEV_WC_REM_ACCESS_ERR = 10,    /**< Remote key, access or range invalid. */
	RPCR_RDEV_WC_REM_OP_ERR = 11,        /**< The peer could not perform it (bad invalidate). */
	RPCR_RDEV_WC_RETRY_EXC_ERR = 12,     /**< The peer is gone. */
	RPCR_RDEV_WC_RNR_RETRY_EXC_ERR = 13, /**< No receive was posted at the peer. */
	RPCR_RDEV_WC_GENERAL_ERR = 21,
};

/** Completion opcodes. */
enum rpcr_rdev_wc_opcode {
	RPCR_RDEV_WC_SEND = 0,
	RPCR_RDEV_WC_RDMA_WRITE = 1,
	RPCR_RDEV_WC_RDMA_READ = 2,
	RPCR_RDEV_WC_BIND_MW = 5,
	RPCR_RDEV_WC_LOCAL_INV = 6,
	RPCR_RDEV_WC_RECV = 128,
};

/** @name Completion flags. @{ */
#define RPCR_RDEV_WC_F_WITH_INV 0x1u /**< RECV: the Send invalidated @c invalidated_rkey. */
/** @} */

/** A work completion. */
struct rpcr_rdev_wc {
	uint64_t wr_id;            /**< The work request's id. */
	struct rpcr_rdev_qp *qp;   /**< The QP it belongs to. */
	uint32_t status;           /**< enum rpcr_rdev_wc_status. */
	uint32_t opcode;           /**< enum rpcr_rdev_wc_opcode (valid on success). */
	uint32_t byte_len;         /**< RECV: bytes received; READ: bytes read. */
	uint32_t flags;            /**< RPCR_RDEV_WC_F_*. */
	uint32_t invalidated_rkey; /**< RECV with RPCR_RDEV_WC_F_WITH_INV. */
};

/** Name of a completion status ("REM_ACCESS_ERR"). */
const char *rpcr_rdev_wc_status_str(uint32_t status);

/** Device capabilities. */
/** A peer's Send with Invalidate can invalidate this device's registrations (those made with
 * RPCR_RDEV_ACCESS_REMOTE_INV), and this device can post one (RPCR_RDEV_CAP_SEND_INV too). */
#define RPCR_RDEV_CAP_REMOTE_INV 0x1u
#define RPCR_RDEV_CAP_SHARED_MEM 0x2u /**< Registrable memory must be in a shareable region. */
/** Connection private data arrives with the length it was sent with. Without it (RoCE,
 * InfiniBand: the CM's fields have no length) it arrives padded with zeros to the transport's
 * field, RPCR_RDEV_PDATA_MAX bytes at most. */
#define RPCR_RDEV_CAP_PDATA_EXACT 0x4u
/** Memory windows of type 2 bound by work request (rpcr_rdev_mw_alloc()), invalidated locally
 * (RPCR_RDEV_WR_LOCAL_INV) and, where RPCR_RDEV_CAP_REMOTE_INV, by the peer's Send with
 * Invalidate. */
#define RPCR_RDEV_CAP_MW 0x8u
/** Can post Send with Invalidate (RPCR_RDEV_WR_SEND_INV) of a peer's key, whatever becomes of
 * its own registrations (verbs devices with memory management extensions). */
#define RPCR_RDEV_CAP_SEND_INV 0x10u
/** Completion queues can wake a sleeping poller (rpcr_rdev_cq_arm(), rpcr_rdev_cq_event_fd()). */
#define RPCR_RDEV_CAP_CQ_EVENT 0x20u
/** Shared receive queues (rpcr_rdev_srq_create()) with their limit event. */
#define RPCR_RDEV_CAP_SRQ 0x40u

/** What a device can do. */
struct rpcr_rdev_info {
	char driver[RPCR_RDEV_NAME_MAX]; /**< Driver name ("shm"). */
	char name[RPCR_RDEV_NAME_MAX];   /**< Device name. */
	uint32_t caps;                   /**< RPCR_RDEV_CAP_*. */
	uint32_t max_qp;                 /**< QPs. */
	uint32_t max_cq;                 /**< CQs. */
	uint32_t max_mr;                 /**< Registrations. */
	uint64_t max_mr_size;            /**< Bytes per registration. */
	uint32_t max_qp_wr;              /**< Work requests per queue. */
	uint32_t max_cqe;                /**< Completions per CQ. */
	uint32_t max_sge;                /**< Gather/scatter entries per work request. */
	uint32_t max_inline;             /**< Inline Send bytes. */
	uint32_t max_pdata;              /**< Connection private data bytes. */
	uint32_t max_msg_size;           /**< Largest Send, Write or Read. */
	uint32_t max_srq_wr;             /**< Receives per shared receive queue (0: none). */
};

/** Device counters. */
struct rpcr_rdev_stats {
	uint64_t mr_reg;        /**< Registrations made. */
	uint64_t mr_dereg;      /**< Registrations removed. */
	uint64_t mr_invalidate; /**< Local invalidations. */
	uint64_t mw_alloc;      /**< Memory windows allocated. */
	uint64_t mw_free;       /**< Memory windows freed. */
	uint64_t conn_accepted; /**< Connections established. */
	uint64_t conn_rejected; /**< Connections rejected. */
	uint64_t disconnects;   /**< Connections ended. */
	/* Faults injected on purpose, by drivers that can (shm's fault_* devargs, doc/rdev.md);
	 * zero otherwise. */
	uint64_t fault_disconnects; /**< Connections broken (QP error, DISCONNECTED both sides). */
	uint64_t fault_last_tsc;    /**< rte_rdtsc() when the last of them was injected. */
	uint64_t fault_reg;         /**< Registrations failed (ENOMEM). */
	uint64_t fault_recv;        /**< Receives withheld: the peer's Send to one finds RNR. */
	uint64_t fault_delayed;     /**< Completions held back by fault_delay_us. */
};

/** Connection events (rpcr_rdev_event_poll()). */
enum rpcr_rdev_event_type {
	RPCR_RDEV_EVENT_CONNECT_REQUEST, /**< A peer connects: accept or reject @c req. */
	RPCR_RDEV_EVENT_ESTABLISHED,     /**< @c qp is connected; @c pdata is the peer's. */
	RPCR_RDEV_EVENT_REJECTED,        /**< The peer rejected @c qp's connect; its @c pdata. */
	RPCR_RDEV_EVENT_CONNECT_ERROR,   /**< @c qp's connect failed (@c status). */
	RPCR_RDEV_EVENT_DISCONNECTED,    /**< @c qp's peer disconnected or died. */
	RPCR_RDEV_EVENT_DEVICE_REMOVAL,  /**< The device is gone. */
	/** Fewer receives than its armed limit are left in @c srq (rpcr_rdev_srq_arm()); the
	 *  limit is disarmed. */
	RPCR_RDEV_EVENT_SRQ_LIMIT,
};

/** A connection event. */
struct rpcr_rdev_event {
	enum rpcr_rdev_event_type type;      /**< What happened. */
	struct rpcr_rdev_qp *qp;             /**< The QP concerned (not CONNECT_REQUEST). */
	struct rpcr_rdev_listener *listener; /**< CONNECT_REQUEST: where it came in. */
	struct rpcr_rdev_conn_req *req;      /**< CONNECT_REQUEST: to accept or reject. */
	struct rpcr_rdev_srq *srq;           /**< SRQ_LIMIT: the shared receive queue. */
	int status;                          /**< Negative errno for errors. */
	uint8_t pdata_len;                   /**< Private data bytes. */
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];  /**< The peer's private data. */
	/** CONNECT_REQUEST: the peer's address (ibverbs: RDMA-CM's, IPv4 or IPv6 with the
	 *  port; shm: 127.0.0.1 port 0, the peer being a process on this host; AF_UNSPEC where a
	 *  driver knows none). */
	struct sockaddr_storage peer;
};

/** Name of an event type. */
const char *rpcr_rdev_event_str(enum rpcr_rdev_event_type type);

/**
 * Open a device. @p devargs is "driver[:key=value,...]" in DPDK's device-argument syntax, e.g.
 * "shm:path=/run/rpcr" or "ibverbs:dev=rxe0".
 *
 * @return the device, or NULL with rte_errno: ENOENT (no such driver), EINVAL (bad arguments),
 *         ENOSPC (too many devices), or the driver's error.
 */
struct rpcr_rdev *rpcr_rdev_open(const char *devargs);

/** Close a device; every object made on it must be destroyed first. @return 0 or -EBUSY. */
int rpcr_rdev_close(struct rpcr_rdev *dev);

/** The device's index (its fast-path table slot). */
uint16_t rpcr_rdev_id(const struct rpcr_rdev *dev);

/** The open device with index @p id, or NULL. */
struct rpcr_rdev *rpcr_rdev_get(uint16_t id);

/** Describe the device. @return 0 or -EINVAL. */
int rpcr_rdev_info_get(struct rpcr_rdev *dev, struct rpcr_rdev_info *info);

/** Read the device's counters. @return 0 or -EINVAL. */
int rpcr_rdev_stats_get(struct rpcr_rdev *dev, struct rpcr_rdev_stats *stats);

/**
 * Names of the drivers built in, for "show devices".
 *
 * @return how many there are; up to @p n names are stored in @p names.
 */
int rpcr_rdev_drivers(const char **names, int n);

/** Allocate a protection domain. @return NULL with rte_errno on failure. */
struct rpcr_rdev_pd *rpcr_rdev_pd_alloc(struct rpcr_rdev *dev);

/** Free a protection domain. @return 0, -EBUSY (registrations or QPs left). */
int rpcr_rdev_pd_free(struct rpcr_rdev_pd *pd);

/**
 * Register @p len bytes at @p addr. Devices with RPCR_RDEV_CAP_SHARED_MEM accept only memory
 * inside a shareable region (rpcr_rdev_region_add(), which lib/mem's arenas call).
 *
 * @return the registration, or NULL with rte_errno: EINVAL (bad range or flags, memory not
 *         shareable), ENOSPC (no key left), ENOMEM.
 */
struct rpcr_rdev_mr *rpcr_rdev_mr_reg(struct rpcr_rdev_pd *pd, void *addr, size_t len,
				      uint32_t access);

/** Remove a registration; its keys stop working at once. @return 0 or -EINVAL. */
int rpcr_rdev_mr_dereg(struct rpcr_rdev_mr *mr);

/** Invalidate the registration's keys (a local invalidation). @return 0 or -EINVAL. */
int rpcr_rdev_mr_invalidate(struct rpcr_rdev_mr *mr);

/**
 * Give the registration fresh, unpredictable keys and make it valid again (after an
 * invalidation, or to scope a registration to one use). @return 0, -ENOTSUP or -EINVAL.
 */
int rpcr_rdev_mr_rekey(struct rpcr_rdev_mr *mr);

/**
 * Allocate an unbound memory window (control path; RPCR_RDEV_CAP_MW). Its @c rkey reaches
 * nothing until a RPCR_RDEV_WR_BIND_MW work request binds it.
 *
 * @return the window, or NULL with rte_errno: ENOTSUP (no windows on this device), ENOSPC (no
 *         key left), EINVAL, ENOMEM.
 */
struct rpcr_rdev_mw *rpcr_rdev_mw_alloc(struct rpcr_rdev_pd *pd);

/** Free a memory window; a binding it still has dies with it. @return 0 or -EINVAL. */
int rpcr_rdev_mw_free(struct rpcr_rdev_mw *mw);

/** Create a completion queue of at least @p depth entries. @return NULL with rte_errno. */
struct rpcr_rdev_cq *rpcr_rdev_cq_create(struct rpcr_rdev *dev, uint32_t depth);

/** Destroy a completion queue. @return 0 or -EBUSY (QPs still use it). */
int rpcr_rdev_cq_destroy(struct rpcr_rdev_cq *cq);

/**
 * @name Completion events (RPCR_RDEV_CAP_CQ_EVENT)
 *
 * How the thread that polls a CQ sleeps until it has work, without losing a completion:
 *
 *   1. rpcr_rdev_cq_arm(): from now on a new completion makes the CQ's event fd readable;
 *   2. poll the CQ once more: what completed before the arm is found there;
 *   3. if that poll found nothing, wait for the fd to be readable (poll(2), epoll; with the
 *      device's rpcr_rdev_event_fd() and a timeout for timers, as the caller needs);
 *   4. rpcr_rdev_cq_disarm() (after a wake-up, a timeout, or a completion found in 2), then
 *      poll as usual.
 *
 * A completion that arrives after 1 wakes the thread; one that arrived before is found in 2.
 * Readability may also be spurious (a completion the poll already took): poll, and sleep again
 * if there is nothing. Arming costs what the driver needs (a system call on ibverbs; a store per
 * connection on shm); while nobody is asleep, posting costs nothing more. Only the thread that
 * polls the CQ may arm and disarm it.
 * @{
 */
/** The fd that polls readable when an armed CQ has a new completion. @return it or -ENOTSUP. */
int rpcr_rdev_cq_event_fd(struct rpcr_rdev_cq *cq);
/**
 * Arm the CQ (step 1 above). @return 0: armed, poll once more, then sleep if that poll is empty;
 * -EAGAIN: not armed, work is there or on its way (poll again, do not sleep); -ENOTSUP: this
 * device cannot wake a poller (poll busily).
 */
int rpcr_rdev_cq_arm(struct rpcr_rdev_cq *cq);
/** End a sleep (step 4): the events are consumed, the fd no longer readable for them. */
void rpcr_rdev_cq_disarm(struct rpcr_rdev_cq *cq);
/** @} */

/**
 * Create a shared receive queue in @p pd (RPCR_RDEV_CAP_SRQ). Post receives into it with
 * rpcr_rdev_post_srq_recv(); QPs take them when made with rpcr_rdev_qp_attr::srq.
 *
 * @return the SRQ, or NULL with rte_errno: ENOTSUP (the device has none), EINVAL (sizes over
 *         the device's), ENOMEM.
 */
struct rpcr_rdev_srq *rpcr_rdev_srq_create(struct rpcr_rdev_pd *pd,
					   const struct rpcr_rdev_srq_attr *attr);

/** Destroy a shared receive queue; its receives are dropped. @return 0, -EBUSY (QPs use it),
 *  -EINVAL. */
int rpcr_rdev_srq_destroy(struct rpcr_rdev_srq *srq);

/**
 * Arm the limit event (control path, any thread): once fewer than @p limit receives are left
 * posted in @p srq, RPCR_RDEV_EVENT_SRQ_LIMIT is queued once on the device's event queue and the
 * limit is disarmed, as verbs' IBV_EVENT_SRQ_LIMIT_REACHED. @p limit 0 disarms. Arm it while at
 * least @p limit receives are posted (drivers differ on an arm below the limit: shm reports at
 * once, a NIC may wait for the next receive consumed). @return 0, -EINVAL (over max_wr),
 * -ENOTSUP.
 */
int rpcr_rdev_srq_arm(struct rpcr_rdev_srq *srq, uint32_t limit);

/** Create an unconnected RC queue pair. @return NULL with rte_errno (EINVAL, ENOMEM). */
struct rpcr_rdev_qp *rpcr_rdev_qp_create(struct rpcr_rdev_pd *pd,
					 const struct rpcr_rdev_qp_attr *attr);

/** Destroy a queue pair (disconnecting it first if needed). @return 0 or -EINVAL. */
int rpcr_rdev_qp_destroy(struct rpcr_rdev_qp *qp);

/**
 * Listen for connections at @p addr (driver syntax; shm: a socket name under the device's path,
 * or an absolute path). Requests arrive as RPCR_RDEV_EVENT_CONNECT_REQUEST.
 *
 * @return the listener, or NULL with rte_errno (EADDRINUSE, EACCES, ...).
 */
struct rpcr_rdev_listener *rpcr_rdev_listen(struct rpcr_rdev *dev, const char *addr, int backlog);

/** Stop listening. Pending requests are rejected. @return 0 or -EINVAL. */
int rpcr_rdev_listener_close(struct rpcr_rdev_listener *l);

/**
 * Connect @p qp to @p addr, offering @p len bytes of private data. The result arrives as
 * RPCR_RDEV_EVENT_ESTABLISHED, _REJECTED or _CONNECT_ERROR for @p qp.
 *
 * @return 0 (in progress) or a negative errno (-ECONNREFUSED, -ENOENT, -EINVAL, -EMSGSIZE).
 */
int rpcr_rdev_connect(struct rpcr_rdev_qp *qp, const char *addr, const void *pdata, uint8_t len);

/**
 * Accept a connection request on @p qp (which must be unconnected), answering with @p len bytes
 * of private data. @p req is consumed; RPCR_RDEV_EVENT_ESTABLISHED follows for @p qp.
 *
 * @p qp may belong to another handle of the same device than the listener that took @p req (a
 * server spreading its connections over pollers, each with its own handle): the connection then
 * moves to @p qp's handle, whose event queue has its later events, and may be accepted from
 * @p qp's thread. "The same device": shm, any handle (a peer's connection is a socket, moved to
 * the control thread of @p qp's handle); ibverbs and mlx5, a handle of the same rdma-core
 * device (the cm_id moves with rdma_migrate_id()).
 *
 * @return 0 or a negative errno (-ECONNABORTED: the peer went away; -EISCONN: @p qp is connected
 *         or failed; -EXDEV: @p qp's handle is another driver's or device's): @p req is not
 *         consumed on -EISCONN, -EXDEV and -EINVAL.
 */
int rpcr_rdev_accept(struct rpcr_rdev_qp *qp, struct rpcr_rdev_conn_req *req, const void *pdata,
		     uint8_t len);

/** Reject a connection request, with private data. @p req is consumed. @return 0 or -errno. */
int rpcr_rdev_reject(struct rpcr_rdev_conn_req *req, const void *pdata, uint8_t len);

/**
 * Disconnect: both sides' QPs go to the error state (outstanding work flushes) and both get
 * RPCR_RDEV_EVENT_DISCONNECTED. @return 0 or -ENOTCONN.
 */
int rpcr_rdev_disconnect(struct rpcr_rdev_qp *qp);

/** Take up to @p n pending events without blocking. @return how many. */
int rpcr_rdev_event_poll(struct rpcr_rdev *dev, struct rpcr_rdev_event *ev, int n);

/**
 * Wait up to @p timeout_ms (negative: forever) for one event.
 *
 * @return 1 with @p ev filled, 0 on timeout, or a negative errno.
 */
int rpcr_rdev_event_wait(struct rpcr_rdev *dev, struct rpcr_rdev_event *ev, int timeout_ms);

/** A file descriptor that polls readable while events are pending (for epoll loops). */
int rpcr_rdev_event_fd(struct rpcr_rdev *dev);

/**
 * @name Shareable memory regions
 *
 * Drivers that move data between processes (shm) can only reach memory that the peer can map:
 * memory backed by a file descriptor. lib/mem's arenas add themselves here; an application may
 * add its own fd-backed memory too.
 * @{
 */
/** Most shareable regions in a process. */
#define RPCR_RDEV_MAX_REGIONS 256

/** A region of fd-backed memory. */
struct rpcr_rdev_region {
	void *base;      /**< First byte. */
	size_t len;      /**< Length. */
	int fd;          /**< File that backs it (the driver passes it to peers). */
	uint64_t fd_off; /**< Offset of @c base in the file. */
	uint32_t id;     /**< Process-unique number. */
	bool hugepage;   /**< Backed by hugepages. */
};

/**
 * Add a region.
 *
 * @return its id (>= 0), or -EINVAL (overlaps another, bad arguments), -ENOSPC.
 */
int rpcr_rdev_region_add(void *base, size_t len, int fd, uint64_t fd_off, bool hugepage);

/** Remove a region; registrations inside it must be gone. @return 0 or -ENOENT. */
int rpcr_rdev_region_del(int id);

/**
 * Find the region that contains [@p addr, @p addr + @p len).
 *
 * @return 0 with @p out filled, or -ENOENT.
 */
int rpcr_rdev_region_find(const void *addr, size_t len, struct rpcr_rdev_region *out);

/** Copy region @p id into @p out. @return 0 or -ENOENT. */
int rpcr_rdev_region_get(uint32_t id, struct rpcr_rdev_region *out);
/** @} */

/* ---- fast path ---- */

/** Fast-path entry points of one device; filled by its driver. */
struct rpcr_rdev_fp_ops {
	/** Post a burst of send-queue work requests; one doorbell. */
	uint16_t (*post_send)(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr,
			      uint16_t n);
	/** Post a burst of receives. */
	uint16_t (*post_recv)(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr,
			      uint16_t n);
	/** Poll up to @c n completions. */
	uint16_t (*poll_cq)(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n);
	/** Post a burst of receives into a shared receive queue. */
	uint16_t (*post_srq_recv)(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr,
				  uint16_t n);
} __rte_cache_aligned;

/** Per-device fast-path tables, indexed by device id. Not for applications to change. */
extern struct rpcr_rdev_fp_ops rpcr_rdev_fp_ops[RPCR_RDEV_MAX_DEVS];

/**
 * Post send-queue work requests (Send, Send with Invalidate, RDMA Write, RDMA Read) as one burst.
 *
 * A work request that cannot be accepted stops the burst: fewer than @p n are posted and
 * rte_errno says why (EAGAIN: send queue full; EINVAL: malformed). Requests accepted on a QP in
 * the error state complete with RPCR_RDEV_WC_WR_FLUSH_ERR.
 *
 * @return the number posted.
 */
static inline uint16_t
rpcr_rdev_post_send(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n)
{
	uint16_t done = rpcr_rdev_fp_ops[qp->dev_id].post_send(qp, wr, n);

	qp->stats.doorbells += done != 0;
	qp->stats.send_posted += done;
	return done;
}

/**
 * Post receives as one burst. Fewer than @p n are posted when the receive queue fills (rte_errno
 * EAGAIN) or a request is malformed (EINVAL).
 *
 * @return the number posted.
 */
static inline uint16_t
rpcr_rdev_post_recv(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	uint16_t done = rpcr_rdev_fp_ops[qp->dev_id].post_recv(qp, wr, n);

	qp->stats.recv_posted += done;
	return done;
}

/**
 * Post receives into a shared receive queue as one burst (the thread that owns the SRQ: one at a
 * time, as for a QP). Fewer than @p n are posted when it is full (rte_errno EAGAIN) or a request
 * is malformed (EINVAL).
 *
 * @return the number posted.
 */
static inline uint16_t
rpcr_rdev_post_srq_recv(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr, uint16_t n)
{
	return rpcr_rdev_fp_ops[srq->dev_id].post_srq_recv(srq, wr, n);
}

/** Poll up to @p n completions. @return how many were stored in @p wc. */
static inline uint16_t
rpcr_rdev_poll_cq(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n)
{
	return rpcr_rdev_fp_ops[cq->dev_id].poll_cq(cq, wc, n);
}

#ifdef __cplusplus
}
#endif

#endif /* RPCR_RDEV_H */
