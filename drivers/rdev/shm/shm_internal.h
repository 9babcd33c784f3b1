/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef SHM_INTERNAL_H
#define SHM_INTERNAL_H

/* The shm driver's process-private state. */

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "rpcr_rdev_driver.h"
#include "shm_layout.h"

#define SHM_LOG(level, fmt, ...) RPCR_RDEV_LOG(level, "shm: " fmt, ##__VA_ARGS__)

/* Defaults and limits. */
#define SHM_DEFAULT_KEYS        16384u
#define SHM_MAX_QP_WR           16384u
#define SHM_MAX_CQE             (1u << 22)
#define SHM_MAX_SEND_SGE        16u
#define SHM_MAX_INLINE          4096u
#define SHM_MAX_MSG             (1u << 30)
#define SHM_MAX_RECV_QPS_PER_CQ 4096u
#define SHM_CQ_SRQS             4u  /* SRQs whose slots a CQ reads (SHM_SRQ_SLOT_CQ) */
#define SHM_SRQ_WAITS           32u /* taken receives not complete yet a poll looks past */
/*
 * The tag of a QP whose SRQ receives complete in the SRQ's slots: SHM_SRQ_TAG_SLOT, a generation
 * (the SRQ's count of such QPs, 18 bits: a peer that took a receive after its QP was destroyed
 * names no QP that reuses the index) and the QP's index in the SRQ's table (12 bits). Never
 * SHM_SRQ_SKIP.
 */
#define SHM_SRQ_TAG_IDX_BITS 12u
#define SHM_SRQ_TAG_IDX_MASK ((1u << SHM_SRQ_TAG_IDX_BITS) - 1)
#define SHM_SRQ_TAG_GEN_MASK 0x3ffffu

/*
 * A peer's region as this process mapped it: the mapping's own descriptor (shm_map.c), shared by
 * every connection that maps the same range. Immutable: the fast path loads the pointer once
 * (acquire) and reads base and len from the same descriptor, so a region replaced meanwhile can
 * never pair an old base with a new length. Replaced descriptors (their mappings' references)
 * are kept until the connection goes: an operation may still be using them.
 */
struct shm_peer_region {
	uint8_t *base;
	size_t len;
};

/* Retired peer regions a connection keeps at most (a peer that churns more is dropped). */
#define SHM_MAX_RETIRED 1024u

enum shm_conn_state {
	SHM_CONN_WAIT_HELLO,  /* server: socket accepted, HELLO not yet received */
	SHM_CONN_REQUESTED,   /* server: CONNECT_REQUEST delivered, waiting for accept/reject */
	SHM_CONN_ACCEPTED,    /* server: ACCEPT sent, waiting for RTU */
	SHM_CONN_CONNECTING,  /* client: HELLO sent, waiting for ACCEPT/REJECT */
	SHM_CONN_ESTABLISHED, /* both: connected */
	SHM_CONN_CLOSED,      /* over; the socket stays open to learn when the peer exits */
};

struct shm_qp;
struct shm_listener;
struct shm_srq;

/* One connection: a socket and what the peer shared over it. */
struct shm_conn {
	/*
	 * The fast path's fields first (shm_rxtx.c): a Send touches line 0, and the region table
	 * below (whose descriptors are the mappings', shared: shm_map.c), so that a Send over one
	 * of many connections misses as few lines of its connection as it can (bench_scale,
	 * doc/xprt.md; shm_ctrl.c checks the layout). The peer's queues, with private copies of
	 * their geometry (checked once, at mapping: the peer cannot change them under us). The
	 * peer QP takes its receives from its own queue or (peer_srq_on) from a shared receive
	 * queue, whose fields share the same bytes.
	 */
	struct shm_half *peer_half;
	/* The peer QP's doorbell (its receive CQ's bit in the peer's key table file), or NULL. */
	uint64_t *peer_db;
	uint8_t *peer_rcq; /* completion queue slots: we produce */
	union {
		uint8_t *peer_rq;       /* receive queue slots: we consume */
		uint8_t *peer_srq_ring; /* the SRQ's slots, right after its header (peer_srq) */
	};
	uint32_t peer_mask; /* slots - 1 (of the QP's queues) */
	union {
		uint32_t peer_rq_slot;  /* bytes per receive queue slot */
		uint32_t peer_srq_slot; /* bytes per SRQ slot */
	};
	union {
		uint32_t peer_max_sge;     /* scatter entries per receive */
		uint32_t peer_srq_max_sge; /* ... per SRQ receive */
	};
	union {
		uint32_t peer_rq_cons; /* next receive to take */
		uint32_t
			peer_srq_tag; /* the peer QP's number: what our Sends mark its receives with */
	};
	uint32_t peer_rcq_prod; /* next completion to write */
	uint32_t peer_pd;
	uint32_t peer_srq_mask; /* the SRQ's slots - 1 */
	uint8_t peer_db_bit;    /* peer_db's bit */
	bool peer_srq_on;       /* receives from the shared receive queue */
	bool peer_srq_slot_cq;  /* ... and they complete in its slots (SHM_SRQ_SLOT_CQ) */
	/* (line 1) The peer QP's shared receive queue's header (the control path's; the fast
	 * path reaches it from peer_srq_ring), when it takes its receives from one. */
	struct shm_srq_hdr *peer_srq;
	struct shm_keytab *peer_keys;
	uint32_t peer_key_mask;
	bool peer_dead;    /* the peer's end of the socket closed (atomic) */
	bool fault_disc;   /* a fault broke it in the fast path: the control thread disconnects */
	int peer_wake_fd;  /* the peer QP's wake socket (a datagram wakes its sleeping poller) */
	struct shm_qp *qp; /* bound QP (client: at connect; server: at accept) */
	/* (line 2) The peer's regions, by id. */
	const struct shm_peer_region *regions[RPCR_RDEV_MAX_REGIONS]; /* published with release */
	/* The control path's. */
	TAILQ_ENTRY(shm_conn) next;
	struct shm_dev *sd;
	uint32_t id; /* epoll payload: connections are looked up by id, never by pointer */
	int fd;
	enum shm_conn_state state;
	struct shm_listener *listener; /* server side, while the listener lives */
	struct shm_conn_req *req;      /* server: the pending request */
	bool broken;                   /* a protocol or send error: its messages are ignored */
	uint32_t region_sent;          /* REGION_ADDs sent */
	uint32_t region_acks;          /* REGION_ACKs received: the peer mapped that many */
	pid_t peer_pid;
	uid_t peer_uid;
	uint8_t pdata_len;
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
	const struct shm_peer_region *retired[SHM_MAX_RETIRED];
	uint32_t retired_n;
};

struct shm_conn_req {
	struct rpcr_rdev_conn_req pub; /* first */
	struct shm_conn *conn;
};

struct shm_listener {
	struct rpcr_rdev_listener pub; /* first */
	TAILQ_ENTRY(shm_listener) next;
	uint32_t id;
	int fd;
	char path[PATH_MAX];
};

struct shm_mr {
	struct rpcr_rdev_mr pub; /* first */
	uint32_t slot;
	uint32_t region;
};

/* A send completion (process-private ring; 32 bytes, which rte_ring copies fastest). */
struct shm_scqe {
	uint64_t wr_id;
	struct shm_qp *qp;
	uint16_t status;
	uint16_t opcode;
	uint32_t byte_len;
	uint32_t slots; /* send-queue slots this completion frees */
	uint32_t t;     /* fault_delay_us: when it was produced (shm_fault_now()) */
};

struct shm_cq {
	struct rpcr_rdev_cq pub; /* first */
	struct shm_dev *sd;
	struct rte_ring *scq; /* send completions, private memory */
	uint32_t committed;   /* completions the attached queues can have outstanding */
	uint32_t nrecv;       /* QPs whose receive completions come here */
	uint32_t rr;          /* round-robin start among them */
	int epfd; /* its event fd: an epoll set of its receive QPs' wake sockets (wake_sock[0]) */
	bool armed;
	/* Its doorbells (shm_layout.h), NULL: none (every poll visits every QP): SHM_DB_WORDS
	 * words of the key table file, the QP of each bit, bits taken but not drained (a poll
	 * that filled its burst), the bits in use, and its polls (a full visit every
	 * SHM_DB_FULL). */
	uint64_t *db;
	uint32_t db_base; /* its first bit in the file */
	struct shm_qp **by_bit;
	uint64_t db_pend[SHM_DB_WORDS];
	uint64_t db_used[SHM_DB_WORDS];
	uint32_t db_idx;    /* its CQ slot of the device */
	uint32_t db_nwords; /* words its QPs' bits are in (the last one used, and those before) */
	uint32_t db_cursor; /* the bit its next poll of the doorbells starts at (poll_rung()) */
	uint32_t npolls;
	/* The SRQs whose receives complete in their slots for QPs of ours (SHM_SRQ_SLOT_CQ):
	 * every poll reads them (poll_srq_slots()). Device lock, and the CQ's thread. */
	struct shm_srq *srqs[SHM_CQ_SRQS];
	uint32_t nsrqs;
	uint32_t srq_rr; /* the SRQ this poll reads first (each in turn: none starves the rest) */
	bool srqs_first; /* this poll reads them before the QPs (each poll in turn) */
	/* Receives of an SRQ whose QP was destroyed with them taken (wr_ids), reported with qp
	 * NULL by the next poll (the CQ's thread destroys such QPs: rpcr_rdev.h). */
	uint64_t *orphans;
	uint32_t norphans, orphans_cap;
	struct shm_qp *recv_qps[SHM_MAX_RECV_QPS_PER_CQ];
};

/*
 * A shared receive queue (shm_layout.h): the shared slots, and what we posted, privately. Only
 * the thread that polls its QPs' receive CQs and posts into it touches the private fields.
 */
struct shm_srq {
	struct rpcr_rdev_srq pub; /* first */
	TAILQ_ENTRY(shm_srq) next;
	struct shm_dev *sd;
	int fd;
	struct shm_srq_hdr *hdr;
	size_t len;
	uint8_t *ring;
	uint32_t mask;
	uint32_t slot;
	uint32_t prod;        /* receives posted */
	uint32_t outstanding; /* posted, completion not yet polled */
	uint64_t *wr_ids;     /* [seq & mask] */
	uint32_t *lens;       /* bytes receive seq can hold */
	uint32_t *seqs;       /* seq of the receive held in the slot */
	uint8_t *held;        /* 1 while the slot's receive is outstanding */
	uint32_t *takers;     /* who took the slot's receive, noted when a post skipped the slot
			       * (its word then no longer says): 0 until then */
	uint32_t limit;       /* armed limit event (0: none; atomic: any thread arms) */
	bool limit_hit;       /* the limit was crossed: the control thread reports it (atomic) */
	uint32_t nqps;        /* QPs that take from it (device lock) */
	/*
	 * Completions in the slots (SHM_SRQ_SLOT_CQ, shm_layout.h), for the QPs whose receive CQ
	 * is @cq (set by the first such QP, cleared when the last goes; device lock): each such QP
	 * by the index in its tag, and what the CQ's poll has read. Receives before @slot_next were
	 * looked at: completed and reported, or taken by a QP that completes elsewhere, or taken
	 * and not complete yet, then in @waits (in sequence order; at most SHM_SRQ_WAITS: more
	 * stop the poll there until the first of them completes, which delays the completions
	 * after it and loses none: as many peers each in the middle of a large Send get there,
	 * and peers that stall in the middle of that many). The receives a QP's peer had taken
	 * when the QP was destroyed with that peer still in a Send after the fence stay taken
	 * under its tag, which names no QP any more (srq_detach()): each is reported with no QP
	 * once its completion comes.
	 */
	struct shm_cq *cq;
	struct shm_qp **slot_qps; /* [SHM_MAX_RECV_QPS_PER_CQ] */
	uint64_t slot_used[SHM_MAX_RECV_QPS_PER_CQ / 64];
	uint32_t nslot_qps;
	uint32_t slot_gen; /* slot tags given */
	uint32_t slot_next;
	uint32_t
		untaken_stops; /* polls that stopped at an untaken receive (srq_passed_untaken()) */
	uint32_t nwaits;
	struct {
		uint32_t seq;
		uint32_t tag;
	} waits[SHM_SRQ_WAITS];
};

/* A receive of a QP's own queue, as posted: what its completion reports, what it can hold. */
struct shm_rq_ent {
	uint64_t wr_id;
	uint32_t len;  /* bytes it can hold: a peer may not claim more */
	uint32_t seen; /* fault_delay_us: when its completion was first seen (shm_fault_now()) */
};

/*
 * A QP. The fast path's fields are in the two lines after pub's first (the QP is line-aligned):
 * a Send touches pub's lines and line 2, a receive completion pub's second line (the engine's
 * user pointer) and line 2, so that a call over one of many connections misses as few of its QP's
 * lines as it can (bench_scale, doc/xprt.md). The control path's fields follow.
 */
struct shm_qp {
	struct rpcr_rdev_qp pub; /* first */
	struct shm_dev *sd;
	struct shm_half *half; /* our half, shared with the peer */
	/* Set before ESTABLISHED is reported, cleared only by destroy: the fast path reads it. */
	struct shm_conn *conn;
	/* (line 2) */
	struct shm_srq *srq;       /* receives from here (NULL: its own queue) */
	uint8_t *rcq_ring;         /* completion queue slots: we consume */
	struct shm_rq_ent *rq_ent; /* receive seq at [seq & mask]: completions report these */
	struct shm_cq *scq;
	uint8_t *rq_ring;    /* receive queue slots: we produce */
	uint32_t mask;       /* slots - 1 */
	uint32_t rq_slot;    /* bytes per receive queue slot */
	uint32_t rq_prod;    /* receives posted */
	uint32_t rq_done;    /* receives completed (by the peer's Sends, or flushed) */
	uint32_t sq_used;    /* send-queue slots held */
	uint32_t unsignaled; /* successful unsignalled WRs since the last completion */
	/* (end of the fast path's lines) */
	struct shm_cq *rcq;
	uint32_t db_bit;  /* its bit among its receive CQ's doorbells (UINT32_MAX: none) */
	bool srq_flushed; /* in error: what its peer took from the SRQ was flushed */
	bool srq_slot_cq; /* its SRQ receives complete in the SRQ's slots (SHM_SRQ_SLOT_CQ) */
	/* A fence gave up waiting for its peer (shm_ctrl.c's fence_peers()) and failed it: the
	 * peer's later operations see ERROR and do nothing, so no later fence waits for it. */
	bool peer_stalled;
	uint32_t srq_tag; /* what its peer marks the SRQ receives it takes with (half's) */
	int half_fd;
	/* A datagram socket pair: the peer sends on [1] (passed at connect) to wake our receive
	 * CQ's sleeping poller, which watches [0] in the CQ's epoll set. Per connection, and
	 * non-blocking per call on both sides, whatever the peer does with its copy. */
	int wake_sock[2];
	size_t half_len;
	/* Fault injection (devargs fault_*; only the fault variants of the fast path look). */
	uint64_t frng;    /* this QP's random stream */
	uint64_t krng;    /* the keys of the windows it binds (splitmix64) */
	uint32_t fseen_n; /* fault_delay_us: receive completions seen so far (stamped in rq_ent) */
};

/* Slot @seq of a ring of @slot-byte slots. */
static inline void *
shm_slot(uint8_t *ring, uint32_t mask, uint32_t slot, uint32_t seq)
{
	return ring + (size_t)(seq & mask) * slot;
}

/*
 * Our own view of a key slot. The shared key table is writable by peers (they invalidate keys
 * with Send with Invalidate), so local checks use these fields, not the shared ones.
 */
struct shm_mine {
	uint32_t key; /* the key we gave the slot last (0: free) */
	uint32_t access;
	uint32_t region;
	uint32_t pd; /* SHM_PD_NONE for a window: never a local key */
	uint64_t va;
	uint64_t len;
	uint64_t region_off;
	/* Windows: the QP bound to (0: none) and the registration's slot the range lies in. */
	uint32_t qp_num;
	uint32_t parent;
	bool mw;
};

#define SHM_PD_NONE UINT32_MAX /* no protection domain has this id */
#define SHM_MAX_MW  4096u      /* memory windows per device */

/* A memory window: a key slot of its own. */
struct shm_mw {
	struct rpcr_rdev_mw pub; /* first */
	uint32_t slot;
};

/*
 * Fault injection, configured by devargs (off unless one is given): probabilities are
 * thresholds on a 64-bit random number (UINT64_MAX: always). The fast path checks nothing of
 * this: with any fault configured the device gets the fault variants of its fast-path functions
 * (shm_rxtx.c). Faults are armed by the device's first established connection, so that set-up
 * (pools, listeners, the first connection) is never failed.
 */
struct shm_fault {
	bool on;             /* some fault is configured */
	bool armed;          /* a connection was established (atomic) */
	uint64_t seed;       /* fault_seed */
	uint64_t disconnect; /* fault_disconnect: per send-queue work request posted */
	uint64_t reg;        /* fault_reg: per registration */
	uint64_t recv;       /* fault_recv: per receive posted */
	uint32_t delay;      /* fault_delay_us, in shm_fault_now() units (0: none) */
	uint64_t reg_rng;    /* registrations' random stream (device lock) */
};

/* Time for fault delays: the TSC in units of 2^SHM_FAULT_TSC_SHIFT cycles, 32 bits (wraps after
 * minutes; compared by difference, delays are limited to a second). */
#define SHM_FAULT_TSC_SHIFT 6
#define SHM_FAULT_DELAY_MAX 1000000u /* us */

static inline uint32_t
shm_fault_now(void)
{
	return (uint32_t)(rte_rdtsc() >> SHM_FAULT_TSC_SHIFT);
}

/* splitmix64: the fault streams, reproducible from fault_seed. */
static inline uint64_t
shm_fault_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Whether a fault of probability @thresh (see struct shm_fault) strikes now. */
static inline bool
shm_fault_hit(uint64_t *s, uint64_t thresh)
{
	return thresh != 0 && (thresh == UINT64_MAX || shm_fault_rand(s) < thresh);
}

#define SHM_MAX_ALLOW 16 /* uids of allow_uids= */

struct shm_dev {
	struct rpcr_rdev *dev;
	char dir[PATH_MAX];
	/* Other users whose processes may connect (allow_uids=); none: this user (and root). */
	uid_t allow_uids[SHM_MAX_ALLOW];
	uint32_t nallow;
	/* Key table: shared (peers validate against it) and our private copy. */
	int keys_fd;
	struct shm_keytab *keys;
	struct shm_mine *mine;
	size_t keys_len;
	uint32_t key_mask;
	uint32_t key_bits;
	uint32_t slot_hint;
	/* The slots of the memory windows (device lock): deregistration looks for windows bound
	 * over the registration there. */
	uint32_t mw_slots[SHM_MAX_MW];
	uint32_t nmw;
	uint32_t rand_pool[64];
	uint32_t rand_left;
	/* Numbers. */
	uint32_t next_pd;
	uint32_t next_qp;
	uint32_t next_obj; /* ids of connections and listeners */
	/* Control thread. */
	pthread_t ctrl;
	bool ctrl_running;
	int epfd;
	int wake_fd;
	volatile bool stop;
	pthread_mutex_t lock; /* conns, listeners, key slots */
	pthread_cond_t cond;
	TAILQ_HEAD(, shm_conn) conns;
	TAILQ_HEAD(, shm_listener) listeners;
	TAILQ_HEAD(, shm_srq) srqs;
	uint64_t *db;    /* the doorbells in the key table file (shm_layout.h) */
	uint32_t db_cqs; /* CQ slots of the doorbells taken (a bit each; device lock) */
	struct shm_fault fault;
};

static inline struct shm_dev *
shm_dev(const struct rpcr_rdev *dev)
{
	return (struct shm_dev *)dev->priv;
}

/* SRQ slot @idx. */
static inline struct shm_srq_desc *
shm_srq_desc(const struct shm_srq *srq, uint32_t idx)
{
	return (struct shm_srq_desc *)(void *)(srq->ring + (size_t)idx * srq->slot);
}

/*
 * Who took the receive held in SRQ slot @idx: the tag of the owner's QP its Send arrived on, or
 * 0 (nobody yet, or a word a peer spoiled). From the word while it still names that receive, from
 * the owner's note once a post skipped the slot.
 */
static inline uint32_t
shm_srq_taker(const struct shm_srq *srq, uint32_t idx)
{
	const struct shm_srq_desc *d = shm_srq_desc(srq, idx);
	uint64_t w;

	if (srq->takers[idx] != 0)
		return srq->takers[idx];
	w = __atomic_load_n(&d->word, __ATOMIC_ACQUIRE);
	if ((uint32_t)w != srq->seqs[idx] + 1 || (uint32_t)(w >> 32) == SHM_SRQ_SKIP)
		return 0;
	return (uint32_t)(w >> 32);
}

/*
 * A peer's file range mapped (read and write, shared), once in the process however many
 * connections map it (shm_map.c): @return its address, or NULL (errno). The file was checked
 * (peer_fd_ok()). Each get is matched by one put of the address it returned.
 */
void *shm_map_get(int fd, uint64_t off, size_t len);
/* The same, for a region: the mapping's descriptor (put with shm_map_put(r->base)). */
const struct shm_peer_region *shm_map_get_region(int fd, uint64_t off, size_t len);
void shm_map_put(void *base);
/* Distinct ranges mapped now (tests). */
uint32_t shm_map_count(void);

/* Fast path (shm_rxtx.c). */
uint16_t shm_post_send(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr, uint16_t n);
uint16_t shm_post_recv(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr, uint16_t n);
uint16_t shm_poll_cq(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n);
uint16_t shm_post_srq_recv(struct rpcr_rdev_srq *srq, const struct rpcr_rdev_recv_wr *wr,
			   uint16_t n);
/* Arm an SRQ's limit event (any thread; shm_rxtx.c). */
int shm_srq_arm(struct rpcr_rdev_srq *srq, uint32_t limit);
/* Completion events (shm_rxtx.c: the protocol that loses no wake-up). */
int shm_cq_event_fd(struct rpcr_rdev_cq *cq);
int shm_cq_arm(struct rpcr_rdev_cq *cq);
void shm_cq_disarm(struct rpcr_rdev_cq *cq);
void shm_wake_peer(struct shm_conn *c, struct shm_half *h);

/* The same with fault injection (installed when a fault_* devarg is given). */
uint16_t shm_post_send_fault(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_send_wr *wr,
			     uint16_t n);
uint16_t shm_post_recv_fault(struct rpcr_rdev_qp *qp, const struct rpcr_rdev_recv_wr *wr,
			     uint16_t n);
uint16_t shm_poll_cq_fault(struct rpcr_rdev_cq *cq, struct rpcr_rdev_wc *wc, uint16_t n);

/* Ring the doorbell of @c's peer QP: its receive CQ's poll will visit it. */
static inline void
shm_db_ring(const struct shm_conn *c)
{
	uint64_t *w = c->peer_db;
	uint64_t mask = 1ull << c->peer_db_bit;

	if (w != NULL && !(__atomic_load_n(w, __ATOMIC_RELAXED) & mask))
		__atomic_fetch_or(w, mask, __ATOMIC_RELEASE);
}

/* Ring our own QP's doorbell (a local error: its receives flush at the next poll). */
void shm_db_ring_own(struct shm_qp *qp);

/* Move both halves of @qp's connection to the error state. */
void shm_qp_set_error(struct shm_qp *qp);

/* Wake the control thread (shm_ctrl.c): a fault asks it to disconnect. */
void shm_ctrl_kick(struct shm_dev *sd);

#endif /* SHM_INTERNAL_H */
