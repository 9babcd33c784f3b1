/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_INTERNAL_H
#define XPRT_INTERNAL_H

/*
 * lib/xprt private structures.
 *
 * Ownership: a poller owns its connections, clients and servers; everything here is touched only
 * by the poller's thread, except the poller's ring (multi-producer) and the statistics (read by
 * any thread). A client owns its call slots (they outlive a connection: calls are sent again, with
 * the same xid, on the next one). A poller owns its server requests (a pool every connection
 * takes from, sreq_pool); a request serves one connection from the call's arrival until it is
 * FREE again, and the connection lives until the last of its requests (a deferred one held by
 * whoever answers it) is back.
 */

#include <pthread.h>
#include <sys/queue.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_debug.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_tailq.h>

#include <rpcr_chunk.h>
#include <rpcr_proto.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_xchar.h>

#include "rpcr_xprt.h"
#include "wire.h"
#include "wire_v1.h"
#include "wire_v2.h"

/* Invariants checked in the sanitizer builds (meson.build: XPRT_CHECK_STATES), free elsewhere. */
#ifdef XPRT_CHECK_STATES
#define XPRT_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond))                                                                     \
			rte_panic("xprt: %s:%d: %s does not hold\n", __FILE__, __LINE__, #cond); \
	} while (0)
#else
#define XPRT_CHECK(cond) \
	do {             \
	} while (0)
#endif

extern int rpcr_xprt_logtype;
#define XPRT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, rpcr_xprt_logtype, "xprt: " fmt "\n", ##__VA_ARGS__)

/* Sizes. */
struct xprt_reg_ops;

#define XPRT_HEADROOM    2048u         /* room for the transport header in front of a message */
#define XPRT_PLAIN_MAX   XPRT_V2_PLAIN /* the longest plain header (wire_v1.h, wire_v2.h) */
#define XPRT_BUF_DATA    8192u  /* data bytes of a message buffer (>= the largest inline size) */
#define XPRT_BULK_DATA   61440u /* data bytes of a bulk buffer (chunk data, long messages) */
#define XPRT_MAX_INLINE  8192u  /* largest inline size negotiated */
#define XPRT_MIN_INLINE  1024u  /* RFC 8166 section 3.3.3 */
#define XPRT_MAX_CREDITS 1024u  /* per connection */
#define XPRT_SIG_EVERY   16u    /* at least one send-queue WR in this many is signalled */
#define XPRT_SIG_SRQ     4u     /* ... on a server connection of the shared receive queue */
#define XPRT_RECV_BATCH  16u    /* receives are reposted this many at a time */
#define XPRT_MAX_BULK    RPCR_ULB_MAX_BULK /* DDP-eligible items per direction per message */
#define XPRT_MAX_SEGS    16u               /* segments of one chunk this side builds */
#define XPRT_TX_SEGS     32u               /* segments of all chunks of a call this side builds */
#define XPRT_RX_READS    32u               /* read segments accepted in a call */
#define XPRT_RX_WRITES   8u                /* write chunks accepted in a call */
#define XPRT_RX_SEGS     64u               /* write and reply chunk segments accepted in a call */
#define XPRT_RX_PROPS    16u               /* version 2: transport properties read in a message */
#define XPRT_V2_INLINE   4096u             /* version 2's inline threshold both ways (§4.2.2) */
#define XPRT_CONT_RECVS \
	32u /* version 2: a client's receives beyond its credits for continued replies */
#define XPRT_CONT_PARTS     16u     /* version 2: Sends of one continued message this side sends */
#define XPRT_CONT_DEFAULT   8192u   /* rpcr_clnt_conf::cont_max when 0 (doc/rpcrdma-v2.md) */
#define XPRT_RX_CHUNKS      8u      /* read chunks (distinct positions) accepted in a call */
#define XPRT_WR_BATCH       256u    /* send-queue WRs a connection gathers before a doorbell */
#define XPRT_SGE_BATCH      1024u   /* their gather entries */
#define XPRT_POLL_WRS       1024u   /* the poller's batch: a piece starts at most here (sq.h) */
#define XPRT_POLL_SGES      4096u   /* its gather entries' */
#define XPRT_POLL_BURST     32u     /* completions taken per poll */
#define XPRT_PREFETCH_CONNS 64u     /* more connections: a poll prefetches its completions' */
#define XPRT_SNAP_US        100000u /* connections copied for telemetry this often */
#define XPRT_TEL_CONNS      24u     /* connections in one telemetry reply (16 KiB) */
#define XPRT_SQ_DEPTH       1024u   /* send-queue WRs per connection */
#define XPRT_RRING          64u     /* server: reply buffers reused in turn (> 2 poll bursts) */
#define XPRT_SRQ_KEEP       2u      /* ... on a connection of the SRQ */
#define XPRT_POLL_KEPT      64u     /* message buffers the poller keeps for its SRQ's connections */
#define XPRT_POLL_SENT      64u  /* buffers of inline replies a poll gives back after its flush */
#define XPRT_INLINE_ASK     256u /* bytes a server's QP of the SRQ asks to send inline */
#define XPRT_BC_SLOTS       16u  /* reverse-direction requester: calls outstanding at most */
#define XPRT_BC_CREDITS     8u   /* reverse-direction responder: default credits granted */
#define XPRT_REV_CALL_BYTES (1u << 20) /* reverse-direction responder: bytes of a call (GENL) */
#define XPRT_MW_MAX         128u       /* memory windows per connection */
#define XPRT_SQ_RING        2048u /* send-queue entries: >= XPRT_SQ_DEPTH + XPRT_MW_MAX (sq.h) */
#define XPRT_SQ_MASK        (XPRT_SQ_RING - 1)

/* Timers. */
#define XPRT_TICK_US          50u   /* events and connection timers */
#define XPRT_XCHAR_TICK_US    1000u /* a pending RBSIZ update looked at again */
#define XPRT_RECONNECT_MIN_US 1000u
#define XPRT_RECONNECT_MAX_US 1000000u
#define XPRT_DONE_TIMEOUT_US  (30ull * 1000000) /* server: a reply's read chunks at most */
#define XPRT_MSGP_ALIGN       64u               /* alignment this side's receives guarantee */

/* The engine's features beyond RFC 8166 (from the 2005 draft), negotiated per connection in
 * the rpcr block of the CM private data (rpcr_proto_cm_ext). */
#define XPRT_F_MSGP RPCR_PROTO_CM_EXT_F_MSGP
#define XPRT_F_DONE RPCR_PROTO_CM_EXT_F_DONE
#define XPRT_F_CONF RPCR_PROTO_CM_EXT_F_CONF
#define XPRT_F_ALL  (XPRT_F_MSGP | XPRT_F_DONE | XPRT_F_CONF)

struct xprt_conn;
struct xprt_creq;

/* What a message is. */
enum xprt_msg_kind {
	XPRT_MSG_CALL_ENC = 0, /* client: arguments being written */
	XPRT_MSG_REPLY_DEC,    /* client: results being read */
	XPRT_MSG_CALL_DEC,     /* server: arguments being read */
	XPRT_MSG_REPLY_ENC,    /* server: results being written */
};

/* A message being encoded or decoded (struct rpcr_msg of the API). */
struct rpcr_msg {
	struct rpcr_xdr_enc enc;
	struct rpcr_xdr_dec dec;
	struct rpcr_xdr_msgp msgp;  /* RDMA_MSGP padding of bulk items (align 0: none) */
	const struct rpcr_ulb *ulb; /* the procedure's binding (NULL: no DDP items) */
	void *owner;                /* struct xprt_creq or struct rpcr_svc_req */
	struct rte_mbuf *buf;       /* the buffer the stream lives in */
	uint32_t vdelta;            /* chunk bytes (rounded up) before the cursor */
	uint8_t kind;               /* enum xprt_msg_kind */
	uint8_t nbulk;              /* bulk items written/read so far */
	uint8_t nchunk;             /* decoding arguments: read chunks consumed */
};

/* A call's codecs (rpcr_call::encode, ::decode; rpcr_svc_proc's). */
typedef int (*xprt_enc_fn)(struct rpcr_msg *m, const void *args);
typedef int (*xprt_dec_fn)(struct rpcr_msg *m, void *res);

/* Per-call engine data, kept in struct rpcr_call::priv. */
struct call_priv {
	TAILQ_ENTRY(call_priv) q; /* waiting for a credit, a slot or the connection */
	uint64_t deadline;        /* TSC */
	struct rpcr_clnt *clnt;   /* set while the engine owns the call */
	int err;                  /* queued already failed: completes with this */
};

static inline struct call_priv *
call_priv(struct rpcr_call *c)
{
	RTE_BUILD_BUG_ON(sizeof(struct call_priv) > sizeof(((struct rpcr_call *)0)->priv));
	return (struct call_priv *)c->priv;
}

static inline struct rpcr_call *
priv_call(struct call_priv *cp)
{
	return (struct rpcr_call *)(void *)((uint8_t *)cp - offsetof(struct rpcr_call, priv));
}

TAILQ_HEAD(call_list, call_priv);

/*
 * A client call slot. The slot's index is the low bits of the xid, so a reply finds its call in
 * one step and a reply for a slot reused since (new xid) is unmatched.
 *
 * States (advanced by clnt.c's creq_move() alone, which keeps the resend list with RESEND; its
 * table says which changes are legal):
 *   FREE -> SENT (clnt_send) -> FREE (reply: completion; timeout; destroy)
 *   SENT -> RESEND (connection lost) -> SENT (sent again on the next connection, same xid)
 *   RESEND -> FREE (timeout; destroy; a reverse client's calls when its connection is gone)
 *   FREE -> FREE (a call not sent after all: the slot back unused)
 *   SENT -> READING (a reply with read chunks: RDMA Reads posted) -> FREE (read, completed,
 *           RDMA_DONE sent) or -> RESEND (connection lost while reading)
 *   SENT/READING -> INVALIDATING (replied or timed out, but windows it exposed are still
 *           bound: their local invalidations posted, the reply held) -> FREE (invalidated:
 *           completed; or failed: the connection closed first, the call completes with an
 *           error)
 *   SENT/INVALIDATING -> OWED (timed out on the connection it went on: completed, but the
 *           server may still answer it, so its slot keeps its xid and its credit, RFC 8166
 *           section 3.3.1) -> FREE (the late reply, dropped; or the connection lost)
 */
enum xprt_creq_state {
	XPRT_CREQ_FREE = 0, /* slot is free */
	XPRT_CREQ_SENT,
	/* the call was sent; waiting for its reply */
	XPRT_CREQ_RESEND,       /* the connection was lost: send it again when it is back */
	XPRT_CREQ_READING,      /* the reply came with read chunks: pulling them */
	XPRT_CREQ_INVALIDATING, /* its windows are being invalidated before it completes */
	XPRT_CREQ_OWED,         /* completed (timed out); its reply, and credit, still owed */
	XPRT_CREQ_NUM_STATES,
};

/*
 * What a requester exposed for one call (reg.c): each entry a window of the connection's, bound
 * by a work request staged ahead of the call's Send, or a registration of its own (the device
 * has no windows, or the memory cannot take one).
 */
enum xprt_reg_kind {
	XPRT_REG_MR = 1, /* @mr, registered for this call */
	XPRT_REG_MW,     /* @bind.mw, bound over @bind.mr */
};

struct xprt_reg {
	uint8_t kind;                  /* enum xprt_reg_kind */
	bool staged;                   /* MW: its bind is staged or posted (else it is unbound) */
	uint32_t rkey;                 /* the key the peer was given */
	struct rpcr_rdev_mr *mr;       /* MR */
	struct rpcr_rdev_mw_bind bind; /* MW: what it binds (read by the post) */
};

struct xprt_regs {
	uint32_t n;
	struct xprt_reg r[XPRT_TX_SEGS];
};

struct xprt_creq {
	/* The straight-line paths' fields first, in one line (a call over one of many connections
	 * then misses one line of its slot, bench_scale, doc/xprt.md; clnt.c checks it). */
	enum xprt_creq_state state;
	uint32_t xid;
	uint32_t idx;      /* in the client's slots */
	uint32_t sent_seq; /* the send-queue number of its Send */
	struct rpcr_call *call;
	struct rpcr_clnt *cl;
	/*
	 * The slot's own Send buffer for inline calls (NULL until first needed): the RPC-over-RDMA
	 * and RPC call template stay in it between calls (fbuf_tmpl), and it goes back to no free
	 * list. Busy from its Send until the device is known done with it: a reply to the call
	 * (the server received it all), else its send-queue entry (fbuf_seq) takes it over.
	 */
	struct rte_mbuf *fbuf;
	uint32_t fbuf_seq;
	bool fbuf_busy;
	bool fbuf_tmpl;
	bool held_any;  /* any of held[], wcap[] ... below may be set: release is needed */
	bool msgp_used; /* marshalling: RDMA_MSGP padding was written */
	struct xprt_creq *free_next; /* FREE: the next on the client's free list */
	/* Version 2's continuation (cont.c): the server's credits beyond one its call's Sends took
	 * (a continued call), and the receives beyond one kept aside for its reply (granted in its
	 * credit word), both given back with its reply. */
	uint16_t cont_sends;
	uint16_t cont_extra;
	bool no_cont; /* its reply through a reply chunk: a continuation was refused (cont.c) */
	/* (end of the straight-line paths' line) */
	TAILQ_ENTRY(xprt_creq) resend; /* RESEND: in connection-loss order */
	struct rte_mbuf *sbuf;         /* NOMSG: the call (held while the server may read it) */
	struct rte_mbuf *rbuf;         /* the reply chunk's buffer, or NULL */
	uint32_t rbuf_cap;             /* its capacity */
	struct xprt_regs regs;         /* what the peer may reach of this call (reg.c) */
	uint32_t nheld;                /* argument chains held while the peer may read them */
	struct rte_mbuf *held[XPRT_MAX_BULK];
	uint32_t nwchunks;              /* write chunks offered */
	uint32_t wcap[XPRT_MAX_BULK];   /* their capacities */
	uint32_t wnsegs[XPRT_MAX_BULK]; /* their segment counts */
	uint32_t wrote[XPRT_MAX_BULK];  /* bytes the server wrote in each (from the reply) */
	uint32_t nwrote;                /* write chunks in the reply */
	/* READING and INVALIDATING: the reply's read chunks (2005 draft), and where the reply is;
	 * INVALIDATING: the status it completes with. */
	bool rr_reads; /* the reply had read chunks: RDMA_DONE goes once the call completed */
	int rr_status;
	uint32_t rr_inv; /* READING: the key the server invalidated with the reply's Send */
	bool rr_stale;   /* INVALIDATING: its connection is no longer the client's */
	bool owe;        /* timed out while SENT: once completed, OWED (not FREE) */
	uint32_t nrr;
	uint32_t rr_pos[XPRT_MAX_BULK];
	uint32_t rr_len[XPRT_MAX_BULK];
	struct rte_mbuf *rr_m[XPRT_MAX_BULK];
	struct rte_mbuf *rr_recv; /* the receive buffer holding the reply */
	const uint8_t *rr_rpc;    /* the RPC reply (in rr_recv or rbuf) */
	uint32_t rr_rpclen;
	struct rte_mbuf *rr_buf; /* the buffer rr_rpc is in */
	struct rpcr_xdr_msgp rr_msgp;
} __rte_cache_aligned; /* (every slot of the client's array starts a line) */

/*
 * A server request.
 *
 * States (advanced by svc.c's sreq_move() alone, which keeps the waiting list and the deferred
 * count with them; its table says which changes are legal):
 *   FREE -> EXECUTING (decoding) -> READING (RDMA Reads of its read chunks posted) ->
 *     EXECUTING (the handler runs) -> FREE (reply queued, or dropped)
 *   EXECUTING/READING -> WAITING (no bulk buffers, send-queue room or results buffer: retried
 *     each poll) -> READING or EXECUTING
 *   EXECUTING -> DEFERRED (a handler or a worker holds it) -> EXECUTING (its reply) -> FREE
 *   EXECUTING -> REPLYING (the reply waits for send-queue room) -> EXECUTING (sent) -> FREE
 *   any -> FREE (the connection is gone, or the request is refused)
 */
enum xprt_sreq_state {
	XPRT_SREQ_FREE = 0,  /* slot is free */
	XPRT_SREQ_WAITING,   /* waiting for buffers or send-queue room before reading */
	XPRT_SREQ_READING,   /* pulling read chunks */
	XPRT_SREQ_EXECUTING, /* the handler runs */
	XPRT_SREQ_DEFERRED,  /* the handler deferred its reply */
	XPRT_SREQ_REPLYING,  /* the reply waits for send-queue room */
	XPRT_SREQ_NUM_STATES,
};

/* A DDP-eligible result the server holds until its RDMA Writes are posted. */
#define XPRT_CHUNK_READ UINT32_MAX /* xprt_res_bulk::chunk: a read chunk of the reply */

struct xprt_res_bulk {
	struct rte_mbuf *m; /* held chain */
	uint32_t off, len;
	uint32_t chunk; /* write chunk it goes in, or XPRT_CHUNK_READ */
	uint32_t pos;   /* XPRT_CHUNK_READ: its XDR position in the reply */
};

struct rpcr_svc_req {
	/*
	 * The straight-line path's fields first (svc.c's svc_recv_fast(), sreq_put_fast()): lines
	 * 0 and 1, then the two messages (lines 2 to 4) and the header's first line (5), so that a
	 * call over one of many connections misses six lines of its request, not ten (bench_scale,
	 * doc/xprt.md; conn.c checks the layout). The general paths' fields follow.
	 */
	enum xprt_sreq_state state;
	struct xprt_conn *conn; /* the connection it serves (while FREE: the last one) */
	const struct rpcr_svc_prog *prog;
	const struct rpcr_svc_proc *proc;
	uint32_t xid;
	uint32_t credit_req; /* credits the client asked for */
	/* Version 2: the Sends its reply may take (the call's grant, cont.c), where more than one;
	 * 0 or 1: one. */
	uint32_t reply_sends;
	uint32_t accept_stat;
	uint32_t hdr_len; /* transport header bytes in the receive buffer */
	/* A result too long for the write chunk the client offered for it: its index (1-based, 0:
	 * none) and its length (version 2 answers RDMA2_ERR_WRITE_RESOURCE, §7.3.4). */
	uint32_t wres_index;
	bool call_lazy; /* @call not filled in yet (straight-line path: see rpcr_svc_req_call()) */
	bool wait_dispatch; /* WAITING with its chunks read: for a results buffer */
	bool drop;          /* the handler (on a worker) said: no reply */
	bool res_padded;    /* RDMA_MSGP padding was written in the results */
	uint32_t nrchunks;  /* read chunks other than position zero (rchunk[] below) */
	/* (line 1) */
	struct rpcr_xdr_msgp msgp; /* RDMA_MSGP call: its padding */
	uint32_t nres;             /* resb[] below */
	struct xprt_done *done;    /* its reply's read chunks, exposed, not yet sent */
	struct rte_mbuf *recv;     /* the receive buffer holding the call */
	struct rte_mbuf *pz;       /* the position-zero read chunk's contents, or NULL */
	struct rte_mbuf *resbuf;
	struct rpcr_svc_req *free_next; /* FREE: the next on the poller's free list */
	uint32_t pz_len;
	uint32_t wres_need;
	/* (lines 2 to 4) */
	struct rpcr_msg args;
	struct rpcr_msg res;
	/* (line 5: the type and the chunk lists' counts) The call's transport header (chunk lists
	 * in the arrays below). */
	struct xprt_hdr hdr;
	/* (end of the straight-line path's lines) */
	struct rpcr_svc_req *all_next;  /* every request its poller made (sreq_all) */
	TAILQ_ENTRY(rpcr_svc_req) wait; /* WAITING, REPLYING */
	struct rpcr_oncrpc_call call;
	uint32_t wait_chunks; /* WAITING to read: read chunks other than position zero */
	struct rpcr_svc *svc; /* DEFERRED: its server (counts it) */
	/* Read chunks other than position zero, pulled before the handler runs. */
	struct rte_mbuf *rchunk[XPRT_RX_CHUNKS];
	uint32_t rpos[XPRT_RX_CHUNKS];
	uint32_t rlen[XPRT_RX_CHUNKS];
	struct xprt_res_bulk resb[XPRT_MAX_BULK];
	uint32_t written[XPRT_RX_WRITES]; /* bytes written to each write chunk */
	struct rpcr_proto_rseg hdr_reads[XPRT_RX_READS];
	struct rpcr_proto_wchunk hdr_writes[XPRT_RX_WRITES];
	struct rpcr_proto_seg hdr_segs[XPRT_RX_SEGS];
};

/*
 * Version 2's message continuation on receive (cont.c, which alone writes it): a message being
 * reassembled from its parts, and the xids of failed ones whose remaining parts are dropped up
 * to their last (§7.1.3; the newest XPRT_CONT_DISCARDS of them).
 */
#define XPRT_CONT_DISCARDS 2u

struct xprt_cont {
	bool active;          /* assembling, or ndiscard != 0 (the straight-line paths look) */
	bool assembling;      /* parts of @xid in @buf */
	uint32_t type;        /* assembling: XPRT_HT_MSG, or XPRT_HT_PROPS (a CONNPROP's) */
	uint32_t xid;         /* assembling: the message's */
	uint32_t resp;        /* assembling: its RESPONSE flag */
	uint32_t parts;       /* assembling: parts so far */
	struct rte_mbuf *buf; /* assembling: the payload so far (a bulk buffer) */
	uint32_t ndiscard;
	uint32_t discard[XPRT_CONT_DISCARDS];
};

/* Connection states (advanced by xprt_conn_event() and xprt_conn_fail() in conn.c). */
enum xprt_conn_state {
	XPRT_CONN_CONNECTING = 0, /* client: connect started, waiting for ESTABLISHED */
	XPRT_CONN_ACCEPTING,      /* server: accepted, waiting for ESTABLISHED */
	XPRT_CONN_CONNECTED,      /* calls and replies flow */
	XPRT_CONN_CLOSING,        /* failed or disconnected: torn down at the end of this poll */
	XPRT_CONN_CLOSED,         /* QP gone; freed when its last deferred request is given back */
	XPRT_CONN_NUM_STATES,
};

/* A send-queue WR's bookkeeping, released in posting order when a later signalled WR
 * completes. Entries are empty (all NULL) but for those a WR posted filled (counted in the
 * connection's sq_nown); releasing empties them again. */
struct xprt_sq_ent {
	struct rte_mbuf *m;       /* freed then (a message buffer, a held chain), or NULL */
	struct rpcr_svc_req *req; /* its last RDMA Read: the request may go on */
	struct xprt_creq *creq;   /* its last RDMA Read: the reply may be decoded */
};

/*
 * A connection's send queue: the bookkeeping of the WRs posted (oldest first, by sequence
 * number) and the WRs gathered this poll, posted with one doorbell. Only sq.c and the inline
 * helpers of sq.h read or write it.
 */
struct xprt_sq {
	struct xprt_sq_ent *ent; /* XPRT_SQ_RING of them, by sequence number */
	uint32_t head, tail;     /* tail: the next sequence number */
	uint16_t nown;           /* entries in head..tail that release or report something */
	uint16_t sig_mask;       /* a WR whose number has these bits set is signalled (sq.c) */
	/* WRs staged and not posted: nwrs of them from wrs in the poller's batch (sq_wrs), with
	 * nsges gather entries from sges (sq_sges); xprt_sq_wrs() and xprt_sq_sges() (sq.h). */
	uint16_t nwrs, nsges;
	struct rpcr_rdev_send_wr *wrs;
	struct rpcr_rdev_sge *sges;
};

/* A connection's memory windows (reg.c): allocated as calls need them, up to XPRT_MW_MAX, kept
 * until the connection goes. */
struct xprt_mwpool {
	struct rpcr_rdev_mw **all;  /* every window allocated (freed with the connection) */
	struct rpcr_rdev_mw **free; /* unbound ones */
	uint32_t nall, nfree;
};

/* Server: a buffer of the reply ring, and the send-queue sequence number of its last Send. */
struct xprt_rbuf {
	struct rte_mbuf *m;
	uint32_t seq;
};

/* Server: a reply whose results the client reads (2005 draft), kept until RDMA_DONE. */
struct xprt_done {
	uint32_t xid;
	bool used;
	uint64_t deadline; /* TSC: released anyway then */
	uint32_t nmrs;
	struct rpcr_rdev_mr *mrs[XPRT_TX_SEGS];
	uint32_t nheld;
	struct rte_mbuf *held[XPRT_MAX_BULK];
	uint32_t nreads; /* the reply's read list */
	struct rpcr_proto_rseg reads[XPRT_TX_SEGS];
};

/*
 * The receive path of a connection, by version and role: what a receive becomes. Version 1's
 * bursts run its straight-line paths (wire_v1.h) and hand the rest to the demultiplexer (recv.c,
 * which decodes through the connection's wire operations, wire.h).
 */
struct xprt_vops {
	/* The receive completions of @c at the start of @wc (@n completions, the first a
	 * receive of @c), up to the first of another QP or of a send queue, each taken with
	 * xprt_recv_take(). @return how many it took (at least 1). */
	uint16_t (*recv_burst)(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n);
};

extern const struct xprt_vops xprt_v1_clnt_ops;     /* clnt.c */
extern const struct xprt_vops xprt_v2_clnt_ops;     /* clnt.c: a client's version-2 connection */
extern const struct xprt_vops xprt_v1_svc_ops;      /* svc.c */
extern const struct xprt_vops xprt_svc_open_ops;    /* svc.c: its version not fixed yet */
extern const struct xprt_vops xprt_v2_svc_ops;      /* svc.c */
extern const struct xprt_vops xprt_v2_svc_auth_ops; /* svc.c: HOSTAUTH judged, not yet complete */

/* A connection's receive path (xprt_conn::vops): an index of xprt_vops_tab[] (recv.c), one byte
 * of the connection's first line where a pointer would cost a line of its own per call. */
enum xprt_vops_id {
	XPRT_VOPS_V1_CLNT = 0,
	XPRT_VOPS_V2_CLNT,
	XPRT_VOPS_V1_SVC,
	XPRT_VOPS_SVC_OPEN,
	XPRT_VOPS_V2_SVC,
	XPRT_VOPS_V2_SVC_AUTH,
	XPRT_VOPS_NUM,
};

extern const struct xprt_vops *const xprt_vops_tab[XPRT_VOPS_NUM];

/* In a request's accept_stat: rpcr_svc_req_auth_error() was called; the auth_stat below it. */
#define XPRT_AUTH_DENIED 0x80000000u

struct xprt_conn {
	/*
	 * The fields of the straight-line paths come first, in the lines each call touches, so that
	 * a call over one of many connections misses as few of its lines as it can (bench_scale,
	 * doc/xprt.md): lines 0 and 1 for every message (line 1: the send queue, then the
	 * receives posted), line 2 for a connection that posts its own receives and for a
	 * requester (a client; a server off the shared receive queue), line 3 for a responder (a
	 * server). The groups after them are the general paths', by concern.
	 */
	struct rpcr_xprt_poller *p;
	struct rpcr_rdev_qp *qp;
	enum xprt_conn_state state;
	uint32_t features;   /* XPRT_F_* both sides have */
	uint32_t plain_send; /* the largest Send the straight-line send paths write (inline_send
			      * below), with the plain header of the connection's version: 0
			      * while version 2 is being asked (the first message takes the
			      * general path) */
	bool server;         /* accepted by a server (else a client's own) */
	bool srq;            /* receives from the poller's shared receive queue (srq.c) */
	bool dirty;          /* on the poller's list of connections to replenish and flush */
	uint8_t vops;        /* enum xprt_vops_id: how its receives are taken */
	/* Counters (rpcr_xprt_conn_list()). */
	uint64_t msgs_out, msgs_in; /* Sends posted, receives completed */
	uint64_t bytes_out, bytes_in;
	/* (line 1) */
	struct xprt_sq sq; /* the send queue (sq.h: nothing else writes it) */
	/* Receives: posted buffers in posting order (RC completes them in order), rq[] from
	 * rq_head to rq_tail. */
	uint32_t rq_head, rq_tail;
	uint32_t recv_target;
	/* Receives posted at once, whatever the batch, when fewer: the most credits both roles
	 * may have in use (a client's: the credits it asks; a server's: the most it grants; plus
	 * the other role's). */
	uint32_t recv_floor;
	/* A slot whose buffer came back untouched is posted again as it is: its entry then has
	 * XPRT_RQ_IDLE set (xprt_rq_idle()), in the line the completion read. */
	struct rte_mbuf **rq;
	/* (line 2) */
	/* Client: the RDMA_DONEs of done_seqs[] below not yet known processed (draft.c's; the
	 * reply's straight-line path looks). */
	uint32_t done_head, done_tail;
	/* Message buffers nobody holds, reposted or reused first (a connection of the shared
	 * receive queue keeps none: the poller's kept[] is theirs, xprt_buf_get()). */
	struct rte_mbuf **recycle;
	uint32_t nrecycle, recycle_cap;
	uint32_t rq_mask;
	/* Credits, per direction (RFC 8167 section 2.1: accounted separately). */
	uint32_t credits;     /* requester: granted by the peer (0: no requester) */
	uint32_t outstanding; /* requester: calls in flight */
	uint32_t
		send_limit; /* requester: outstanding may grow while below it (clnt_limit_update()) */
	/*
	 * Its two roles (RFC 8167): the requester, whose calls go out (a client's own connection:
	 * the client; an accepted one: the reverse-direction client of rpcr_svc_req_bclnt(), NULL
	 * until asked for), and the responder, whose calls come in (an accepted one: the server; a
	 * client's: the client's reverse-direction server, NULL unless conf.bc_credits). Which
	 * direction is forward is @server's.
	 */
	struct rpcr_clnt *clnt;
	struct rpcr_svc *svc;
	/* (line 3) */
	/* Server: message buffers of inline replies, reused in turn (each once the Send that
	 * last carried it is known done), so that those Sends release nothing when they
	 * complete. */
	struct xprt_rbuf *rring;
	const struct rpcr_svc_prog *fast_prog; /* server: last_prog when fast_ok, else NULL */
	uint64_t fast_progvers;                /* its program and version, in wire order */
	uint32_t inflight;                     /* requests not FREE */
	uint16_t rring_mask, rring_next;
	uint32_t rsp_credits; /* responder: the most it grants (0: no responder) */
	uint32_t calls_in;    /* calls received (those a credit allows; see srq.c) */
	/* The shared receive queue's state (srq.c alone writes the srq_* fields): credits reserved
	 * there (srq_hi: at least any grant the client may act on; srq_extra, below: the replies
	 * of a reverse-direction client), a lowered grant waiting for proof the client took it
	 * (srq_pend: srq_hi comes down to srq_pend_to once calls_in reaches srq_pend_at). */
	bool srq_pend;
	uint32_t srq_hi, srq_pend_to, srq_pend_at;
	/* Requests it may have out of FREE at once: one per credit the server may grant (0: no
	 * responder). They come from the poller's pool (rpcr_xprt_poller::sreq_pool). */
	uint32_t nsreqs;
	/* Server: the longest Send (header included) the device copies when it is posted (the
	 * QP's max_inline; 0: none): its buffer is free again once posted (xprt_poller_sent()). */
	uint32_t inline_free;
	/* (end of the straight-line paths' lines) */
	bool hold_free; /* tearing down: not freed by the last request's return */
	bool fast_ok;   /* server: calls may take the straight-line path */
	const struct rpcr_svc_prog *last_prog; /* the program of the last call */
	uint32_t srq_extra;                    /* (srq.c's, with srq_hi above) */
	bool srq_clnt; /* (srq.c's) a client's: srq_extra reserved for good, no grants */
	/* The general paths'. */
	TAILQ_ENTRY(xprt_conn) next;
	uint64_t id;                  /* poller-unique */
	const struct xprt_wire *wire; /* the transport version's operations */
	/* Negotiated. */
	uint32_t inline_send; /* largest Send we may transmit (set with xprt_conn_inline_send()) */
	uint32_t plain_len;   /* bytes of the plain header (wire->plain_len) */
	uint32_t inline_recv; /* largest Send the peer may transmit (our receives hold it) */
	uint32_t recv_size;   /* bytes of our posted receives */
	/* Receive WRs, one per slot of rq[], each with its one scatter entry of recv_size bytes
	 * (the buffer in rq[] then). */
	struct rpcr_rdev_recv_wr *rwr;
	struct rpcr_rdev_sge *rsge;
	bool remote_inv; /* both sides set R */
	bool peer_inv;   /* the peer set R: its keys may go with Send with Invalidate */
	/* Version 2: a continued message coming in (cont.c alone writes it). */
	struct xprt_cont cont;
	/* Version 2's transport characteristics (xchar.c alone writes them). */
	struct {
		bool off;      /* the peer refused ours (INVAL_HTYPE): none sent again */
		bool init_out; /* our INIT_XCHAR (init_xid) sent, no error to it seen */
		uint32_t init_xid;
		bool peer_init;        /* the peer's INIT_XCHAR came */
		bool peer_rqreminv;    /* ... its RQREMINV */
		uint32_t peer_bkrqsup; /* ... its BRS (RPCR_PROTO_XCHAR_BKRQSUP_*) */
		uint32_t pend_rbsiz;   /* our receives grown to this on request, said by UPD_XCHAR
					 * once those posted before (up to pend_until, of pend_from
					 * bytes) are used */
		uint32_t pend_until, pend_from;
		bool req_out; /* a client's REQ_XCHAR (req_xid) for the server's RBSIZ req_rbsiz
			       * sent, its RESP not in */
		uint32_t req_xid, req_rbsiz;
	} xchar;
	uint32_t cont_free; /* client: receives kept for continued replies not promised to a call */
	/* Version 2's transport properties (props.c, which alone writes these): the peer's as
	 * applied (complete: another CONNPROP is INVAL_HTYPE, §6.2.2.3), this side's own sizes
	 * they are applied to, and the limits they set on the chunks this side offers (UINT32_MAX
	 * on version 1). */
	struct rpcr_xprt_props v2_peer;
	uint32_t own_send, own_recv;
	uint32_t seg_max;  /* longest segment (the peer's RSSIZ) */
	uint32_t segs_max; /* most segments in a call's header (the peer's RCSIZ) */
	/* A client's: version 2 asked with its first message (its CONNPROP, v2_probe_xid), the
	 * server's answer not in yet (clnt.c: one message out, at most 1024 bytes, §4.2.3), due
	 * by v2_deadline (TSC). */
	bool v2_negotiating;
	bool v2_asked; /* ... and a version-2 message went out (its loss then counts as no) */
	uint32_t v2_probe_xid;
	uint64_t v2_deadline;
	const struct xprt_reg_ops *reg;     /* how this side exposes memory to the peer (reg.c) */
	struct xprt_mwpool mw;              /* its windows, with XPRT_REG_MW */
	TAILQ_HEAD(, rpcr_svc_req) waiting; /* WAITING and REPLYING, in arrival order */
	/* On its poller's wconns since a request was put on the list above, until the poll that
	 * finds it empty or the connection's teardown (svc.c's sreq_move()). */
	TAILQ_ENTRY(xprt_conn) wnext;
	bool wlisted;
	/* Server: replies waiting for RDMA_DONE (2005 draft; draft.c's). */
	struct xprt_done *dones;
	uint32_t ndones, ndones_used;
	/* Client: RDMA_DONE messages that may still hold a credit at the server (2005 draft;
	 * draft.c's). */
	uint32_t *done_seqs; /* send-queue numbers of DONEs not yet known processed (FIFO) */
	uint32_t done_mask;  /* (done_head, done_tail: line 2) */
	uint32_t peer_align; /* the server's CONF_RDMA alignment (client), 0: unknown */
	uint64_t overruns;
	struct sockaddr_storage peer;     /* server: the client's address; client: AF_UNSPEC */
	uint32_t cap_gen;                 /* capture (capture.c): the session that described it */
	struct xprt_cap_reads *cap_reads; /* ... its RDMA Reads whose responses are to come */
};

struct rpcr_clnt {
	/*
	 * The straight-line paths' fields first: line 0 for a call sent and its reply taken, line
	 * 1 for a call sent, so that a call over one of many clients misses two lines of its
	 * client, not five (bench_scale, doc/xprt.md; clnt.c checks the layout). The general
	 * paths' follow.
	 */
	struct rpcr_xprt_poller *p;
	struct xprt_conn *conn;
	/* Per procedure, where the client was made from a program with codecs; else NULL. */
	struct xprt_clnt_codec {
		xprt_enc_fn encode;
		xprt_dec_fn decode;
	} * codecs;
	struct xprt_creq *slots;
	struct xprt_creq *slot_free; /* free slots, the one freed last first (free_next) */
	uint64_t timeout_tsc;        /* the default call timeout */
	uint32_t nslots, slot_mask;
	uint32_t nslot_free;
	uint32_t xid_step; /* added to a slot's xid for its next call: 1 << slot_bits */
	/* (line 1) */
	struct call_list waiting;       /* new calls, oldest first */
	TAILQ_HEAD(, xprt_creq) resend; /* calls to send again after reconnect */
	/* Where its calls sent are counted (the poller's forward or reverse-direction counter). */
	uint64_t *st_sent;
	uint32_t tmpl_plen; /* bytes of the transport header in tmpl (below) */
	uint32_t callhdr_len;
	uint32_t slot_bits;
	bool queued; /* on its poller's qclnts (qnext below) */
	/* (end of the straight-line paths' lines) */
	TAILQ_ENTRY(rpcr_clnt) next;
	struct rpcr_clnt_conf conf;
	char addr[108];
	struct rpcr_ulb *ulb; /* per procedure (conf.nulb entries), or NULL */
	/* On its poller's qclnts since a call was put on one of the two lists above, until the
	 * poll that finds both empty (clnt.c's clnt_queued()). */
	TAILQ_ENTRY(rpcr_clnt) qnext;
	/* Reconnection. */
	uint64_t reconnect_at; /* TSC; 0: no reconnect pending */
	uint64_t backoff_us;
	bool connected_once;
	bool v1_only; /* version 2 refused (ERR_VERS, or a first message lost): version 1 on */
	/* The server's private data on the connection now (RFC 8797): version 1's sizes, taken
	 * again where the server refuses version 2 on it. */
	uint8_t est_pdata_len;
	uint8_t est_pdata[RPCR_RDEV_PDATA_MAX];
	uint32_t nconnected;        /* connections established so far (rpcr_clnt_info) */
	uint32_t owed_credits;      /* held by OWED slots on the connection now */
	struct rpcr_call conf_call; /* CONF_RDMA, sent first on a connection that offers it */
	struct rpcr_proto_conf_rdma_reply conf_rep;
	int conf_rc;
	/* Scratch: the transport header of the call being marshalled. */
	struct xprt_hdr tx;
	struct rpcr_proto_rseg tx_reads[XPRT_TX_SEGS];
	struct rpcr_proto_wchunk tx_writes[XPRT_MAX_BULK];
	struct rpcr_proto_seg tx_segs[XPRT_TX_SEGS];
	/* Every call's start: the plain transport header of the connection's version, ending at
	 * XPRT_PLAIN_MAX (version 1's 8 bytes short of the start), then the RPC call header;
	 * rewritten by clnt_tmpl_set() when the connection's version changes. */
	uint8_t tmpl[XPRT_PLAIN_MAX + 448];
	/* Reverse direction (RFC 8167). */
	struct rpcr_svc *bsvc; /* the server of calls from our server (conf.bc_credits), or NULL */
	bool reverse;          /* a server connection's requester (rpcr_svc_req_bclnt()) */
	bool orphan;           /* reverse: its server is going, no connection will come */
	bool dead;             /* reverse: no reference left; xprt_clnt_reap() frees it */
	const struct rpcr_svc *origin; /* reverse: the server it was made on (compared only) */
	uint32_t refs; /* reverse: its connection's, and one per rpcr_svc_req_bclnt() */
};

#define XPRT_MAX_PROGS   16
#define XPRT_SVC_MEMBERS 63 /* pollers a server spreads its connections over, beyond its own */

struct rpcr_svc {
	TAILQ_ENTRY(rpcr_svc) next;
	struct rpcr_xprt_poller *p;
	struct rpcr_svc_conf conf;
	char addr[108];
	struct rpcr_rdev_listener *listener;
	void (*fini)(void *ctx); /* run at destroy (the test program's buffers) */
	void *fini_ctx;
	struct rpcr_svc_prog progs[XPRT_MAX_PROGS];
	struct rpcr_svc_proc *proc_tabs[XPRT_MAX_PROGS]; /* progs[i]'s procs where copied */
	uint32_t nprogs;
	uint32_t nconns;
	uint32_t ndeferred;     /* requests in handlers' or workers' hands */
	struct rpcr_clnt *clnt; /* a client's reverse-direction server: that client (no listener) */
	/* Several pollers (svc_group.c): the server that listens (itself, where it does; NULL: a
	 * client's responder) and, there, what the whole group shares. */
	struct rpcr_svc *lead;
	bool leaving;    /* a member being destroyed: requests handed to it are refused */
	uint32_t gconns; /* lead: connections of the group, accepted or being accepted (atomic) */
	pthread_mutex_t group_lock; /* lead: its members, the round-robin */
	struct rpcr_svc *members[XPRT_SVC_MEMBERS];
	uint32_t nmembers;
	uint32_t rr;
};

/* A connection request the lead hands to a member (svc_group.c), on the member's ring. */
struct xprt_svc_handoff {
	struct rpcr_svc *to;
	struct rpcr_rdev_event ev;
};

/* A poller's shared receive queue (srq.c alone writes it). */
struct xprt_srq {
	struct rpcr_rdev_srq *srq; /* NULL: none, each connection posts its own */
	uint32_t target;           /* receives kept posted (conf.srq_recvs) */
	uint32_t posted;           /* posted, completion not taken yet */
	uint32_t budget;           /* credits its connections may reserve together */
	uint32_t reserved;         /* ... they reserve (their srq_hi and srq_extra) */
	uint32_t nconns;           /* its servers' connections taking from it */
	uint32_t max_conns;        /* ... its servers may have (their max_conns added) */
	/* From the four above, each time one of them changes (srq.c's srq_limits()): */
	uint32_t cap;    /* what its connections may grow to together: budget less a credit kept
			 * for each connection still to come */
	uint32_t loose;  /* three quarters of cap: beyond it, tight */
	uint32_t share;  /* the equal share of cap, at least 1 */
	uint32_t low;    /* the low-water mark, the device's limit event */
	bool armed;      /* ... armed */
	bool short_said; /* a shortage of buffers was logged */
	/* The buffers posted, by index (kept in the buffer's hash.usr while posted: a completion
	 * gives its slot back), and the free indexes: freed with the queue. */
	struct rte_mbuf **bufs;
	uint32_t *free_idx;
	uint32_t nfree;
	struct rpcr_rdev_recv_wr wr[2 * XPRT_RECV_BATCH];
	struct rpcr_rdev_sge sge[2 * XPRT_RECV_BATCH];
};

struct rpcr_xprt_poller {
	char name[32];
	struct rpcr_rdev *dev;
	struct rpcr_rdev_info info;
	struct rpcr_rdev_pd *pd;
	struct rpcr_rdev_cq *cq;
	struct rpcr_mem_arena *arena;
	bool own_arena; /* made by the poller (rpcr_xprt_poller_conf::arena NULL), freed with it */
	uint32_t mw_access; /* RPCR_RDEV_ACCESS_MW_BIND on the pools: connections use windows */
	bool stop;          /* rpcr_xprt_poller_stop() asked (atomic) */
	struct rpcr_chunk_pool *pool; /* message buffers */
	struct rpcr_chunk_pool *bulk; /* chunk data and long messages */
	struct rte_mempool *msg_mp;   /* pool's mempool */
	struct rte_mempool *bulk_mp;  /* bulk's mempool */
	/* Message buffers nobody holds, kept for the connections of the shared receive queue and
	 * for the queue itself, the one given back last taken first: whatever its connection, a
	 * call takes a buffer the previous one wrote or read, in the cache however many
	 * connections there are (a connection's own, as the others keep, would be as cold as the
	 * rest of it: bench_scale, doc/xprt.md). */
	uint32_t nkept;
	struct rte_mbuf *kept[XPRT_POLL_KEPT];
	/* Message buffers of inline Sends staged since the last flush of the dirty connections
	 * (the device copied them once posted): kept or freed after it (rpcr_xprt_poll()). */
	uint32_t nsent;
	struct rte_mbuf *sent[XPRT_POLL_SENT];
	uint32_t npolls;
	struct rte_ring *ring; /* calls and replies from other threads */
	pthread_t owner;
	const char *owner_tag; /* &xprt_thread_tag of the owner */
	/* Connections as telemetry reads them: copied by the owner every XPRT_SNAP_US. */
	pthread_mutex_t snap_lock;
	struct rpcr_xprt_conn_info *snap;
	uint32_t nsnap, snap_cap;
	uint64_t next_snap;
	bool owner_set;
	bool in_poll;
	uint64_t next_conn_id;
	TAILQ_HEAD(, xprt_conn) conns;
	/*
	 * Server requests (struct rpcr_svc_req, 2.7 KiB each), for every connection of the poller:
	 * free ones on a list, the one freed last first (through free_next), so that a call takes
	 * a request whose lines are still in the cache whatever connection it came on; made as
	 * needed (xprt_sreq_make()), so that their number follows the calls in flight on the
	 * poller at once, not its connections (each connection may have out at most nsreqs), and
	 * freed with the poller (sreq_all lists them all).
	 */
	struct rpcr_svc_req *sreq_pool;
	struct rpcr_svc_req *sreq_all;
	/*
	 * The batch every connection stages its WRs in until its doorbell (sq.h): each
	 * connection's in one piece, the last piece (sq_tail's, perhaps empty) the one that may
	 * grow; when no connection is last, the next piece starts at sq_wbase/sq_sbase. Every
	 * connection with WRs staged is on the dirty list; once they are all posted, the batch
	 * starts again from the bottom (xprt_sq_batch_reset()).
	 */
	struct rpcr_rdev_send_wr *sq_wrs;
	struct rpcr_rdev_sge *sq_sges;
	struct xprt_conn *sq_tail;
	struct rpcr_rdev_send_wr *sq_wbase;
	struct rpcr_rdev_sge *sq_sbase;
	struct xprt_conn **dirty; /* received or queued sends this poll */
	uint32_t ndirty, dirty_cap, nconns;
	/* poll_completions() looks at each burst before handling it: to prefetch (more than
	 * XPRT_PREFETCH_CONNS connections) or to capture (xprt_poller_burst_update()). */
	bool burst_slow;
	struct xprt_cap_port *cap; /* capture (capture.c): this poller's part; NULL: off */
	TAILQ_HEAD(, rpcr_clnt) clnts;
	TAILQ_HEAD(, rpcr_svc) svcs;
	uint32_t nclosing; /* connections in CLOSING */
	uint32_t ndead;    /* reverse clients no one holds, to free (xprt_clnt_reap()) */
	uint32_t nqueued;  /* client calls waiting or to resend, all clients */
	/* The clients with calls waiting or to resend (and some that just had): what a poll
	 * visits for them, not every client. */
	TAILQ_HEAD(, rpcr_clnt) qclnts;
	uint32_t nwaiting; /* server requests WAITING or REPLYING */
	/* The connections with requests waiting (and some that just had): what a poll retries,
	 * not every connection. */
	TAILQ_HEAD(, xprt_conn) wconns;
	uint64_t tsc_hz;
	uint64_t tick; /* TSC cycles of XPRT_TICK_US */
	uint64_t next_tick;
	/* The tick visits the clients (connections) no sooner than these: lower bounds of the
	 * earliest time any of their timers is due (UINT64_MAX: none), lowered wherever a timer
	 * is set (xprt_due_clnt(), xprt_due_conn()) and recomputed by the visit. So a tick looks
	 * at no client or connection that has nothing due: thousands of them cost nothing between
	 * their deadlines. */
	uint64_t clnt_due, conn_due;
	struct rpcr_xprt_stats stats;
	/* Sleeping (sleep.c). Enqueuers from other threads read @mode and @asleep. */
	uint8_t mode;        /* enum rpcr_xprt_poll_mode in force */
	uint32_t asleep;     /* the owner is (about to be) asleep: wake it (atomic) */
	int epfd;            /* the CQ's fd, the device's event fd, @wake_fd */
	int wake_fd;         /* eventfd other threads write to wake it */
	uint64_t idle_since; /* TSC of the first poll of a run with no work (0: working) */
	uint64_t idle_tsc;   /* adaptive: that long idle, then sleep */
	int sleep_max_ms;
	struct rpcr_rdev_wc wc[XPRT_POLL_BURST];
	struct xprt_srq srq; /* its servers' receives (srq.c) */
	/* Scratch of the receive demultiplexer (recv.c): the header it decoded last. */
	struct xprt_hdr rx;
	struct rpcr_proto_rseg rx_reads[XPRT_RX_READS];
	struct rpcr_proto_wchunk rx_writes[XPRT_RX_WRITES];
	struct rpcr_proto_seg rx_segs[XPRT_RX_SEGS];
	struct rpcr_proto_v2_prop rx_props[XPRT_RX_PROPS];
};

/* The shared receive queue (srq.c: what happens in what order, and why credits are safe). */
int xprt_srq_init(struct rpcr_xprt_poller *p, const struct rpcr_xprt_poller_conf *conf);
void xprt_srq_fini(struct rpcr_xprt_poller *p);
/* Step 4 of a poll: post buffers until the target is posted (and re-arm the low-water mark). */
void xprt_srq_replenish(struct rpcr_xprt_poller *p);
/* The device said the SRQ fell below its low-water mark (RPCR_RDEV_EVENT_SRQ_LIMIT). */
void xprt_srq_low(struct rpcr_xprt_poller *p);
/* A receive completion of connection @c of the SRQ (xprt_recv_take()): its buffer, or NULL. */
struct rte_mbuf *xprt_srq_take(struct xprt_conn *c, const struct rpcr_rdev_wc *wc);
/* A receive completion with no QP (its QP destroyed since): the buffer is freed. */
void xprt_srq_orphan(struct rpcr_xprt_poller *p, const struct rpcr_rdev_wc *wc);
/* A new server connection takes its receives from the SRQ: 1 credit reserved and @extra more
 * (-ENOSPC: the budget has none left); detach gives back what it reserved. */
int xprt_srq_conn_attach(struct xprt_conn *c, uint32_t extra);
/* Whether the SRQ has @need receives left to reserve for a client's connection (asked before
 * its QP is made); the connection then reserves them for as long as it lives (-ENOSPC: not
 * that many left). */
bool xprt_srq_clnt_room(const struct rpcr_xprt_poller *p, uint32_t need);
int xprt_srq_clnt_attach(struct xprt_conn *c, uint32_t need);
void xprt_srq_conn_detach(struct xprt_conn *c);
/* A server of @p with @max_conns connections at most is created (or destroyed: negative). */
void xprt_srq_svc_add(struct rpcr_xprt_poller *p, int32_t max_conns);
/* Reserve @n receives more for @c (a reverse-direction client's replies). */
void xprt_srq_reserve_extra(struct xprt_conn *c, uint32_t n);
/* The credits to grant @c, which asked for @asked, from the SRQ's state (never 0). */
uint32_t xprt_srq_grant(struct xprt_conn *c, uint32_t asked);

/* Capture (capture.c: what happens in what order). Poller thread: */
struct xprt_cap_port;
/* burst_slow from the connection count and the capture */
void xprt_poller_burst_update(struct rpcr_xprt_poller *p);
/* the ring's XPRT_RING_CAP: capture into @port (its reference taken over), or stop (NULL) */
void xprt_cap_switch(struct rpcr_xprt_poller *p, struct xprt_cap_port *port);
/* a burst of completions, before they are handled (p->cap set) */
void xprt_cap_rx(struct rpcr_xprt_poller *p, const struct rpcr_rdev_wc *wc, uint16_t n);
/* the WRs @c staged, before they are posted (c->p->cap set) */
void xprt_cap_tx(struct xprt_conn *c);
/* @c is freed: what capture kept of it */
void xprt_cap_conn_free(struct xprt_conn *c);
/* @p is being destroyed: what its ring holds of captures, and its own, let go */
void xprt_cap_poller_gone(struct rpcr_xprt_poller *p);

/* Sleeping pollers (sleep.c). */
int xprt_sleep_init(struct rpcr_xprt_poller *p, const struct rpcr_xprt_poller_conf *conf);
void xprt_sleep_fini(struct rpcr_xprt_poller *p);
/* Idle this poll: time to sleep? (adaptive: idle_us in a row; interrupt: at once) */
bool xprt_sleep_due(struct rpcr_xprt_poller *p);
/* Arm: 0 (poll the CQ once more, then xprt_sleep_wait() if nothing came), or <0: work is on
 * its way, do not sleep (nothing to disarm). */
int xprt_sleep_arm(struct rpcr_xprt_poller *p);
void xprt_sleep_wait(struct rpcr_xprt_poller *p);
void xprt_sleep_disarm(struct rpcr_xprt_poller *p);
void xprt_poller_wake_slow(struct rpcr_xprt_poller *p);

/* After queueing on @p's ring or asking it to stop (any thread): wake it if it sleeps. The
 * fence pairs with the sleeper's (sleep.c): either it sees what was queued, or this sees it
 * asleep. */
static inline void
xprt_poller_kick(struct rpcr_xprt_poller *p)
{
	if (likely(p->mode == RPCR_XPRT_POLL_BUSY))
		return;
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->asleep, __ATOMIC_RELAXED) != 0)
		xprt_poller_wake_slow(p);
}

/* Ring entries: pointers tagged in their low bits. */
#define XPRT_RING_CALL    0x0u /* struct rpcr_call: a client's call */
#define XPRT_RING_REPLY   0x1u /* struct rpcr_svc_req: a deferred request's reply */
#define XPRT_RING_BCLNT   0x2u /* struct xprt_bclnt_ask: a worker asks for a requester */
#define XPRT_RING_BPUT    0x3u /* struct rpcr_clnt: a worker gives a requester's reference back */
#define XPRT_RING_CONNREQ 0x4u /* struct xprt_svc_handoff: a connection request to take */
#define XPRT_RING_CAP     0x5u /* struct xprt_cap_port: capture into it (NULL: stop) */
#define XPRT_RING_TAG     0x7u

/* A worker's rpcr_svc_req_bclnt() or rpcr_clnt_rebind() (decoupled mode), answered on the
 * poller: the worker waits. */
struct xprt_bclnt_ask {
	struct rpcr_svc_req *r;
	uint32_t prog, vers;
	struct rpcr_clnt *rebind; /* in: rpcr_clnt_rebind() of this one (else a requester) */
	struct rpcr_clnt *cl;     /* out: the requester, or NULL with @err */
	int err;
	uint32_t done; /* set last (release) */
};

/* wr_id of send-queue WRs: sequence number << 1 | 1 (receives use the mbuf pointer). */
#define XPRT_WRID_SQ 0x1u

/* An inline size as configured: 0 is the default (4096), others within 1024..8192. */
static inline uint32_t
xprt_inline_size(uint32_t v)
{
	return v == 0 ? 4096u : RTE_MIN(RTE_MAX(v, XPRT_MIN_INLINE), XPRT_MAX_INLINE);
}

/*
 * The transport parameters clients and servers normalise alike: the R bit (RFC 8797) only where
 * the device can honour Send with Invalidate; credits 0 is @p def, at most XPRT_MAX_CREDITS;
 * inline sizes as xprt_inline_size() makes them.
 */
static inline void
xprt_conf_transport(const struct rpcr_xprt_poller *p, bool *remote_inv, uint32_t *credits,
		    uint32_t def, uint32_t *inline_send, uint32_t *inline_recv)
{
	if (!(p->info.caps & RPCR_RDEV_CAP_REMOTE_INV))
		*remote_inv = false;
	*credits = RTE_MIN(*credits != 0 ? *credits : def, XPRT_MAX_CREDITS);
	*inline_send = xprt_inline_size(*inline_send);
	*inline_recv = xprt_inline_size(*inline_recv);
}

static inline uint64_t
xprt_us_to_tsc(const struct rpcr_xprt_poller *p, uint64_t us)
{
	return us * p->tsc_hz / 1000000u;
}

/* poller.c */
extern __thread char xprt_thread_tag
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Whether the calling thread owns @p. */
static inline bool
xprt_on_owner(const struct rpcr_xprt_poller *p)
{
	/* (A plain load on the fast path: another thread hands the poller over by storing the
	 * tag atomically, rpcr_xprt_poller_launch() and rpcr_xprt_poller_lcore(), and a thread
	 * compares it only with its own, which no other thread ever stores.) */
	return p->owner_tag == &xprt_thread_tag;
}

void xprt_poller_drain(struct rpcr_xprt_poller *p);

/* Every poller, by slot (telemetry.c reads them under the lock). */
extern pthread_mutex_t xprt_pollers_lock;
extern struct rpcr_xprt_poller *xprt_pollers[RTE_MAX_LCORE];

/* conn.c */
struct xprt_conn *xprt_conn_new(struct rpcr_xprt_poller *p, uint32_t recv_target,
				uint32_t recv_size, uint32_t nsreqs, bool srq);
struct rpcr_svc_req *xprt_sreq_make(struct rpcr_xprt_poller *p);
void xprt_conn_free(struct xprt_conn *c);
/* The one place a connection's state changes (checked against the legal changes in the
 * sanitizer builds; keeps the poller's count of CLOSING connections). */
void xprt_conn_move(struct xprt_conn *c, enum xprt_conn_state to);
void xprt_conn_fail(struct xprt_conn *c, const char *why);
void xprt_conn_teardown(struct xprt_conn *c);
void xprt_conn_replenish(struct xprt_conn *c);
/* Send header @h alone (a message of the transport's own: properties, characteristics) in a
 * message buffer, at most 1024 bytes (what any peer takes). @return 0, -EAGAIN (no send-queue
 * room, closing), -ENOMEM (no buffer), -EINVAL (does not encode in 1024 bytes). */
int xprt_send_hdr(struct xprt_conn *c, const struct xprt_hdr *h);
/* The receives of @c posted from now on hold @len bytes (at most XPRT_BUF_DATA). */
void xprt_conn_recv_size(struct xprt_conn *c, uint32_t len);
uint8_t xprt_pdata_build(uint8_t *buf, uint32_t send, uint32_t recv, bool remote_inv,
			 uint32_t features);
void xprt_pdata_apply(struct xprt_conn *c, const uint8_t *pdata, uint8_t len, uint32_t own_send,
		      uint32_t own_recv, bool own_inv, bool send_inv, uint32_t own_features);
/* The largest Send connection @c may transmit: @v (its version's straight-line limit too). */
static inline void
xprt_conn_inline_send(struct xprt_conn *c, uint32_t v)
{
	c->inline_send = v;
	c->plain_send = c->v2_negotiating ? 0 : v;
	c->plain_len = c->wire->plain_len;
}

/* Connection @c speaks the version of table @w from its first message on (what version 2 turns
 * off of version 1's: the draft's extensions, Send with Invalidate by the R bit, RFC 8797's
 * inline sizes: 4096 both ways, §4.2.2, or this side's @own_send and @own_recv if smaller). */
void xprt_conn_set_wire(struct xprt_conn *c, const struct xprt_wire *w, uint32_t own_send,
			uint32_t own_recv);

/* Whether calls may go the reverse way on connection @c: always on version 1 (RFC 8167, the
 * client's bc_credits decide), on version 2 where the client said BRS SIMPLE or more (§5.2.5)
 * and no BRS NONE in its transport characteristics. */
static inline bool
xprt_conn_brs_ok(const struct xprt_conn *c)
{
	return !c->wire->flag_dir || (c->v2_peer.brs >= RPCR_PROTO_V2_RVRSDIR_SIMPLE &&
				      !(c->xchar.peer_init && c->xchar.peer_bkrqsup == 1u));
}

/* The reverse-direction support this side says (§5.2.5, RPCR_PROTO_V2_RVRSDIR_*): a client's
 * that serves its server's calls, its bc_brs; anyone else's, NONE. */
static inline uint32_t
xprt_conn_own_brs(const struct xprt_conn *c)
{
	return !c->server && c->svc != NULL && c->clnt != NULL ? c->clnt->conf.bc_brs
							       : RPCR_PROTO_V2_RVRSDIR_NONE;
}

/* Whether reverse-direction messages on @c may carry chunks (BRS GENL, §5.2.5: "in the same way
 * as forward-direction messages"): version 2 where the client said GENL, and no characteristic
 * of its says less (BKRQSUP SZLIM or NONE). A server's requester offers them then, a client's
 * responder takes them then. */
static inline bool
xprt_conn_rev_chunks(const struct xprt_conn *c)
{
	if (!c->wire->flag_dir)
		return false;
	if (!c->server)
		return xprt_conn_own_brs(c) == RPCR_PROTO_V2_RVRSDIR_GENL;
	return c->v2_peer.brs == RPCR_PROTO_V2_RVRSDIR_GENL &&
	       !(c->xchar.peer_init && c->xchar.peer_bkrqsup != RPCR_PROTO_XCHAR_BKRQSUP_GENL &&
		 c->xchar.peer_bkrqsup != RPCR_PROTO_XCHAR_BKRQSUP_UNKNOWN);
}

/* props.c: version 2's transport properties (its file header says in what order). */
void xprt_props_reset(struct xprt_conn *c, uint32_t own_send, uint32_t own_recv);
void xprt_props_v1(struct xprt_conn *c);
void xprt_props_apply(struct xprt_conn *c);
/* The peer's receive size as its transport characteristics say (@v >= 1024), applied. */
void xprt_props_peer_rbsiz(struct xprt_conn *c, uint32_t v);
/* This side's receive size as said to the peer (transport characteristics). */
void xprt_props_own_recv(struct xprt_conn *c, uint32_t v);
/* Send this side's RDMA2_CONNPROP with @xid and credit word @credit. @return 0, -EAGAIN (no
 * send-queue room, closing), -ENOMEM (no buffer), -EINVAL (does not encode). */
int xprt_props_send(struct xprt_conn *c, uint32_t xid, uint32_t credit);
/* The peer's RDMA2_CONNPROP @h taken. @return the error a @responder answers with
 * (XPRT_HERR_NONE: none; always none for a requester). */
uint32_t xprt_props_recv(struct xprt_conn *c, const struct xprt_hdr *h, bool responder);

/* recv.c: the receive demultiplexer (what the bursts' straight-line paths did not take). */
void xprt_recv_demux(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc);
void xprt_recv_bad(struct xprt_conn *c, const struct rpcr_rdev_wc *wc);
/* Steps 4 to 6 of the demultiplexer for message @m, its header decoded (@h, @hlen bytes): to
 * its role. @whole: NULL, or the whole RPC message of a continued one whose last part @m is
 * (cont.c), which the role takes in place of @m's. */
void xprt_recv_route(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		     const struct xprt_hdr *h, uint32_t hlen, struct rte_mbuf *whole);
/* A continued RDMA2_CONNPROP reassembled (cont.c): @whole, its prefix and its whole property
 * list, decoded and taken as if it had come in one Send, whose last part @m is (freed here). */
void xprt_recv_props_whole(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
			   struct rte_mbuf *whole);

/* cont.c: version 2's message continuation (its file header says in what order). */
/* The part of a continued message's payload every part but the last carries, for a peer that
 * receives @size bytes. */
static inline uint32_t
xprt_cont_part_len(uint32_t size)
{
	return (size - XPRT_V2_PLAIN) & ~3u;
}
/* The Sends a message of @len payload bytes under a last header of @hsize bytes takes, to a
 * peer that receives @size bytes (1: one, no continuation); UINT32_MAX: cannot be sent so. */
uint32_t xprt_cont_parts(uint32_t size, uint32_t len, uint32_t hsize);
/* Send @len bytes at the start of @m as a continued message whose last part has header @last,
 * that one Send with Invalidate of @inv when not 0; the headers written in message buffer @hbuf.
 * The caller saw room for xprt_cont_parts() WRs; @m and @hbuf are the send queue's after. */
void xprt_cont_send(struct xprt_conn *c, const struct xprt_hdr *last, struct rte_mbuf *hbuf,
		    struct rte_mbuf *m, uint32_t len, uint32_t inv);
/* Version 2's receive of @m, its header decoded (@h, @hlen bytes), where a continuation is
 * involved (its MORE flag, or one under way). @return true when it took @m. */
bool xprt_cont_recv(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
		    const struct xprt_hdr *h, uint32_t hlen);
/* Whether version-2 message @d (@len bytes) is a part of a continued RDMA2_CONNPROP (MORE, or
 * the next part of one being reassembled), whose body is a piece of a property list that only
 * the whole decodes: its prefix then in @h (no chunk, no property), for xprt_cont_recv() with
 * RPCR_PROTO_V2_PREFIX bytes of header. */
bool xprt_cont_props_part(const struct xprt_conn *c, const uint8_t *d, uint32_t len,
			  struct xprt_hdr *h);
/* A message that cannot be decoded (@h: what could be, @err the error it is answered with):
 * @return the error to answer with after the continuation's rules (XPRT_HERR_NONE: none). */
uint32_t xprt_cont_undecodable(struct xprt_conn *c, const struct xprt_hdr *h, uint32_t err);
/* The connection goes: a message being reassembled is freed. */
void xprt_cont_reset(struct xprt_conn *c);

/* xchar.c: version 2's transport characteristics (its file header says in what order). */
/* Send this side's INIT_XCHAR. @return 0 or a negative errno. */
int xprt_xchar_init_send(struct xprt_conn *c);
/* An error report @h answering our INIT_XCHAR: taken (true), INVAL_HTYPE turning them off. */
bool xprt_xchar_refused(struct xprt_conn *c, const struct xprt_hdr *h);
/* The peer's operation @h (XPRT_HT_OPTION). @return the error a @responder answers with. */
uint32_t xprt_xchar_recv(struct xprt_conn *c, const struct xprt_hdr *h, bool responder);
/* Each millisecond, where our receives grow: UPD_XCHAR once the shorter ones are used. */
void xprt_xchar_tick(struct xprt_conn *c);
/* The characteristics' part of @o (rpcr_clnt_info, rpcr_xprt_conn_info). */
void xprt_xchar_info(const struct xprt_conn *c, struct rpcr_xprt_props *o);
/* Whether version 2's straight-line paths may take the message at @d: none is being
 * reassembled, nor is this one's xid being discarded (the last part of a failed one looks
 * plain). */
static __rte_always_inline bool
xprt_cont_passes(const struct xprt_conn *c, const uint8_t *d)
{
	uint32_t i, xid;

	if (likely(!c->cont.active))
		return true;
	if (c->cont.assembling)
		return false;
	xid = xprt_v2_xid(d);
	for (i = 0; i < c->cont.ndiscard; i++)
		if (c->cont.discard[i] == xid)
			return false;
	return true;
}

/* clnt.c */
uint16_t xprt_clnt_recv_burst(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n);
/* The requester's straight-line path for a plain reply on a server's connection (to a
 * reverse-direction call; version 1's): true when it took @m. */
bool xprt_clnt_recv_fast_rev(struct xprt_conn *c, struct rte_mbuf *m);
/* Any reply, its header decoded (@h, @hlen bytes; read only during the call). */
void xprt_clnt_recv_hdr(struct xprt_conn *c, struct rte_mbuf *m, const struct rpcr_rdev_wc *wc,
			const struct xprt_hdr *h, uint32_t hlen);
/* A client asking version 2 on @c got the server's answer in version 2 (its credit word
 * @credit): version 2 on this connection. */
void xprt_clnt_v2_answer(struct xprt_conn *c, uint32_t credit);
/* The connection's requester is gone with it (reverse: its calls fail; its reference goes). */
void xprt_clnt_conn_gone(struct xprt_conn *c);
/* On the poller: a worker's rpcr_svc_req_bclnt(), and its rpcr_clnt_destroy() of one. */
void xprt_bclnt_ask_run(struct xprt_bclnt_ask *a);
void xprt_bclnt_put(struct rpcr_clnt *cl);
void xprt_clnt_enqueue(struct rpcr_clnt *cl, struct rpcr_call *call);
int xprt_clnt_advance(struct rpcr_clnt *cl);
/* Take @p cl off its poller's qclnts (its waiting and resend lists are empty, or it goes). */
void xprt_clnt_unqueue(struct rpcr_clnt *cl);
/* Take @p c off its poller's wconns (no request of it waits, or it goes). */
void xprt_svc_unlist(struct xprt_conn *c);
void xprt_clnt_conn_event(struct rpcr_clnt *cl, const struct rpcr_rdev_event *ev);
void xprt_clnt_conn_lost(struct rpcr_clnt *cl);
void xprt_clnt_timers(struct rpcr_clnt *cl, uint64_t now);
/* WRs call slot @r waits for have completed on connection @c (@ok: all of them, the connection
 * up): its RDMA Reads (READING) or its windows' invalidations (INVALIDATING). */
void xprt_clnt_wrs_done(struct xprt_creq *r, struct xprt_conn *c, bool ok);
int xprt_clnt_put_arg(struct rpcr_msg *m, const struct rpcr_bulk *b);
int xprt_clnt_get_res(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b);

/* svc.c */
uint16_t xprt_svc_recv_burst(struct xprt_conn *c, const struct rpcr_rdev_wc *wc, uint16_t n);
/* The responder's straight-line path for a plain call on a client's connection (a
 * reverse-direction call; version 1's): true when it took @m. */
bool xprt_svc_recv_fast_rev(struct xprt_conn *c, struct rte_mbuf *m);
/* Any call (or RDMA_DONE), its header decoded (@h, @hlen bytes; copied); @whole: NULL, or the
 * whole RPC message of a continued call whose last part @m is (the request takes it). */
void xprt_svc_recv_hdr(struct xprt_conn *c, struct rte_mbuf *m, const struct xprt_hdr *h,
		       uint32_t hlen, struct rte_mbuf *whole);
/* The credit word of a message of the responder's that answers no call (what it grants now). */
uint32_t xprt_svc_credit_word(struct xprt_conn *c);
/* Answer message @xid of transport version @vers with transport error @err (XPRT_HERR_*). */
void xprt_svc_send_error(struct xprt_conn *c, uint32_t xid, uint32_t vers, uint32_t err);
/* The same with version 2's resource arms: the write chunk (1-based; 0: the reply chunk) and
 * the length needed (XPRT_HERR_WRITE_RES, XPRT_HERR_REPLY_RES). */
void xprt_svc_send_error_res(struct xprt_conn *c, uint32_t xid, uint32_t err, uint32_t chunk_index,
			     uint32_t length_needed);
/* Server @s is going: its connections' reverse-direction clients will have no connection again
 * (their calls fail). */
void xprt_clnt_orphan_reverse(const struct rpcr_svc *s);
/* Free the reverse clients no one holds any more (at a point where no loop runs over them). */
void xprt_clnt_reap(struct rpcr_xprt_poller *p);
/* Set up @c's responder: server @s's calls come in on it. */
void xprt_svc_conn_attach(struct rpcr_svc *s, struct xprt_conn *c);
/* A client's responder (no listener), and its end. */
struct rpcr_svc *xprt_svc_reverse_new(struct rpcr_clnt *cl);
/* Program table @pg is sound: procedures unique, bindings within RPCR_ULB_MAX_BULK.
 * @return 0 or -EINVAL. */
int xprt_prog_check(const struct rpcr_svc_prog *pg);
void xprt_svc_reverse_free(struct rpcr_svc *s);
void xprt_svc_reads_done(struct rpcr_svc_req *r, bool ok);
void xprt_svc_conn_request(struct rpcr_svc *s, const struct rpcr_rdev_event *ev);
/* Accept a request on @s's poller: the lead's choice, or a member's handed one. */
void xprt_svc_conn_accept(struct rpcr_svc *s, const struct rpcr_rdev_event *ev);

/* svc_group.c: servers of several pollers */
/* Lead @s: a place for one more connection of the group, taken (false: max_conns reached). */
bool xprt_svc_group_reserve(struct rpcr_svc *s);
/* ... given back (a connection lost, or one not accepted after all). */
void xprt_svc_group_release(struct rpcr_svc *s);
/* Lead @s on its poller: hand request @ev to the member placement picks. @return false when
 * the lead takes it itself; true when handed over or refused. */
bool xprt_svc_group_place(struct rpcr_svc *s, const struct rpcr_rdev_event *ev);
/* A member's poller: a request handed to it (ring dispatch). */
void xprt_svc_group_take(struct xprt_svc_handoff *h);
/* Server @s is being destroyed: a member leaves its lead (and refuses what is still on its way
 * to it); a lead with members left: -EBUSY. @return 0 or -EBUSY. */
int xprt_svc_group_leave(struct rpcr_svc *s);
/* ... and its connections are gone: out of its lead's members (a lead: its lock goes). */
void xprt_svc_group_gone(struct rpcr_svc *s);
void xprt_svc_reply_now(struct rpcr_svc_req *r);
int xprt_svc_retry(struct xprt_conn *c);
void xprt_svc_conn_lost(struct xprt_conn *c);
void xprt_sreq_put(struct rpcr_svc_req *r);
int xprt_svc_put_res(struct rpcr_msg *m, const struct rpcr_bulk *b);
int xprt_svc_get_arg(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b);

/* chunks.c */

/* One RDMA transfer to plan: @len bytes of @m from @off, to or from the peer's @nsegs segments
 * @segs; the planner sets its WRs and gather entries (@nw, @ns). */
struct xprt_xfer {
	struct rte_mbuf *m;
	uint32_t off, len;
	const struct rpcr_proto_seg *segs;
	uint32_t nsegs;
	uint32_t nw, ns;
};

/*
 * Plan the RDMA Reads or Writes (@op) of @n transfers into @c's batch, behind the WRs staged
 * already, with room left for @extra WRs (and gather entries) after them. A batch too full is
 * posted first and the plan made again from an empty one. @return 0 (each transfer's nw and ns
 * set, their sums in @nw and @ns), -E2BIG (more than a whole batch), or the planner's error.
 */
int xprt_plan_xfers(struct xprt_conn *c, uint32_t op, struct xprt_xfer *x, uint32_t n,
		    uint32_t extra, uint32_t *nw, uint32_t *ns);

/*
 * The transfers that pull a read list (sorted by position, checked) into @bufs, one buffer per
 * position in order: each its segments (copied into @segs, as many as the list has) and its
 * buffer's whole length. @return how many (the positions in the list).
 */
uint32_t xprt_read_xfers(const struct rpcr_proto_chunks *ch, struct rte_mbuf *const *bufs,
			 struct rpcr_proto_seg *segs, struct xprt_xfer *x);

/* reg.c: how a requester exposes memory to its peer, chosen per connection. */
struct xprt_reg_ops {
	const char *name;
	/* One entry in @rs for [@addr, @addr + @len) of registration @home (NULL: unknown) with
	 * @access (RPCR_RDEV_ACCESS_*); its key in the entry. @return 0 or a negative errno. */
	int (*map)(struct xprt_conn *c, struct xprt_regs *rs, const struct rpcr_rdev_mr *home,
		   uintptr_t addr, uint32_t len, uint32_t access);
	/* The call is over: the peer must reach nothing of @rs (@inv: the key it invalidated
	 * with its Send, 0 if none). @return 0 (done), 1 (local invalidations staged; the last
	 * reports to @owner through the send queue), or -EIO (a registration could not be
	 * invalidated: the caller closes the connection before the call completes). */
	int (*unmap)(struct xprt_conn *c, struct xprt_regs *rs, uint32_t inv,
		     struct xprt_creq *owner);
	/* The connection is gone (@c may be NULL) or the call was never sent: give back what @rs
	 * holds without a work request. */
	void (*recover)(struct xprt_conn *c, struct xprt_regs *rs);
};

extern const struct xprt_reg_ops xprt_reg_mr_ops; /* a registration per run, per call */
extern const struct xprt_reg_ops xprt_reg_mw_ops; /* windows bound by work request */

void xprt_reg_conn_init(struct xprt_conn *c);
void xprt_reg_conn_fini(struct xprt_conn *c);
/* Expose @len bytes of chain @m from @off: one entry of @rs per run of contiguous memory in one
 * registration, described as wire segments. @return segments written, or -E2BIG, -ENOMEM,
 * -EINVAL. */
int xprt_reg_chain(struct xprt_conn *c, struct xprt_regs *rs, const struct rte_mbuf *m,
		   uint32_t off, uint32_t len, uint32_t access, struct rpcr_proto_seg *segs,
		   uint32_t max_segs);
/* Register @len bytes of chain @m from @off for the peer with @pd, one registration per run of
 * contiguous memory, described as wire segments; registrations made are appended to @mrs (the
 * caller deregisters them, also on failure): the 2005 draft's reply read chunks (draft.c).
 * @return segments written, or -E2BIG (more runs than allowed), -ENOMEM, -EINVAL. */
int xprt_expose(struct rpcr_rdev_pd *pd, const struct rte_mbuf *m, uint32_t off, uint32_t len,
		uint32_t access, struct rpcr_rdev_mr **mrs, uint32_t *nmrs, uint32_t max_mrs,
		struct rpcr_proto_seg *segs, uint32_t max_segs);
/* Windows of @rs whose bind is not staged yet. */
uint32_t xprt_reg_unstaged(const struct xprt_regs *rs);
/* Stage those binds (the caller saw room for them, their invalidations and what follows). */
void xprt_reg_stage(struct xprt_conn *c, struct xprt_regs *rs);

static inline int
xprt_reg_unmap(struct xprt_conn *c, struct xprt_regs *rs, uint32_t inv, struct xprt_creq *owner)
{
	return c->reg->unmap(c, rs, inv, owner);
}

/* msg.c */
int xprt_bulk_copy_in(struct rpcr_xdr_enc *e, const struct rpcr_bulk *b);

/* Bulk items inline, for clients and servers alike (inline: on the path of every such item). */

/*
 * A bulk item sent inline (its length written by the caller): behind RDMA_MSGP padding when the
 * message is padded and the item is at least its threshold (then *@p padded is set), its data
 * and XDR roundup. @return 0, -EMSGSIZE, -EINVAL.
 */
static inline int
xprt_bulk_put_inline(struct rpcr_msg *m, const struct rpcr_bulk *b, bool *padded)
{
	if (unlikely(m->msgp.align > 1) && b->len >= m->msgp.thresh) {
		uint32_t pad = rpcr_xdr_msgp_pad(&m->msgp, rpcr_xdr_enc_pos(&m->enc), b->len);
		uint8_t *p = rpcr_xdr_enc_reserve(&m->enc, pad);

		if (p == NULL)
			return -EMSGSIZE;
		memset(p, 0, pad);
		*padded = true;
	}
	return xprt_bulk_copy_in(&m->enc, b);
}

/*
 * A bulk item that came inline (its length @p len read by the caller): behind its RDMA_MSGP
 * padding in a padded message; @p b is a view of it in the message's buffer. @return 0, -E2BIG
 * (longer than @p max), -EBADMSG.
 */
static inline int
xprt_bulk_get_inline(struct rpcr_msg *m, uint32_t len, uint32_t max, struct rpcr_bulk *b)
{
	const uint8_t *p;

	if (len > max)
		return -E2BIG;
	if (unlikely(m->msgp.align > 1) &&
	    rpcr_xdr_dec_inline(
		    &m->dec, rpcr_xdr_msgp_pad(&m->msgp, rpcr_xdr_dec_pos(&m->dec), len)) == NULL)
		return -EBADMSG;
	p = rpcr_xdr_dec_inline(&m->dec, (size_t)rpcr_xdr_roundup(len));
	if (p == NULL)
		return -EBADMSG;
	b->m = m->buf;
	b->off = (uint32_t)(p - rte_pktmbuf_mtod(m->buf, const uint8_t *));
	b->len = len;
	return 0;
}

/* ---- fast-path helpers ---- */

/* A timer of one of @p's clients is due at @t: the tick visits the clients then. */
static inline void
xprt_due_clnt(struct rpcr_xprt_poller *p, uint64_t t)
{
	if (t < p->clnt_due)
		p->clnt_due = t;
}

/* A timer of one of @p's connections is due at @t (an RDMA_DONE's deadline, a pending RBSIZ
 * update): the tick visits the connections then. */
static inline void
xprt_due_conn(struct rpcr_xprt_poller *p, uint64_t t)
{
	if (t < p->conn_due)
		p->conn_due = t;
}

/* Replenish receives when a batch is due, or when fewer are posted than the credits in use
 * (never on a connection of the shared receive queue, which posts none of its own: its flag is
 * on the line of the dirty mark the caller just cleared). */
static inline void
xprt_replenish_maybe(struct xprt_conn *c)
{
	uint32_t posted = c->rq_tail - c->rq_head;

	if ((c->recv_target - posted >= XPRT_RECV_BATCH || posted <= c->recv_floor) && !c->srq)
		xprt_conn_replenish(c);
}

/* A message buffer the poller kept (for its shared receive queue and that queue's
 * connections), else a new one. */
static inline struct rte_mbuf *
xprt_poller_buf_get(struct rpcr_xprt_poller *p)
{
	if (likely(p->nkept != 0))
		return p->kept[--p->nkept];
	return rpcr_chunk_alloc(p->pool);
}

/* A message buffer: one kept for reuse (the poller's for a connection of the shared receive
 * queue, else the connection's own), else a new one. */
static inline struct rte_mbuf *
xprt_buf_get(struct xprt_conn *c)
{
	if (c->srq)
		return xprt_poller_buf_get(c->p);
	if (likely(c->nrecycle != 0))
		return c->recycle[--c->nrecycle];
	return rpcr_chunk_alloc(c->p->pool);
}

/* @m is a message buffer of @p's pool that nobody else holds, in one segment: one that may be
 * kept for reuse. */
static __rte_always_inline bool
xprt_buf_reusable(const struct rpcr_xprt_poller *p, const struct rte_mbuf *m)
{
	return m->pool == p->msg_mp && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
	       m->nb_segs == 1;
}

/* @m as xprt_buf_get() hands it out: empty, its headroom restored. */
static __rte_always_inline void
xprt_buf_reset(struct rte_mbuf *m)
{
	m->data_off = XPRT_HEADROOM;
	m->data_len = 0;
	m->pkt_len = 0;
}

/* Keep @m, a reusable buffer (xprt_buf_reusable()), on the poller's stack (for its shared
 * receive queue and that queue's connections); false: no room. */
static __rte_always_inline bool
xprt_poller_keep(struct rpcr_xprt_poller *p, struct rte_mbuf *m)
{
	if (p->nkept == XPRT_POLL_KEPT)
		return false;
	xprt_buf_reset(m);
	p->kept[p->nkept++] = m;
	return true;
}

/* The buffers of the inline Sends the poll's doorbells just posted (xprt_send1_post()): free
 * again, kept first as xprt_buf_put() keeps them (a poll's replies then go out in the lines the
 * last poll's did), the rest freed. The list outlives the connections that filled it, so this
 * keeps at the poller's level only. */
static inline void
xprt_poller_sent(struct rpcr_xprt_poller *p)
{
	uint32_t i;

	for (i = 0; i < p->nsent; i++) {
		struct rte_mbuf *m = p->sent[i];

		if (likely(xprt_buf_reusable(p, m) && xprt_poller_keep(p, m)))
			continue;
		rte_pktmbuf_free(m);
	}
	p->nsent = 0;
}

/* Keep @m, a message buffer of the pool nobody else holds, for reuse where there is room
 * (xprt_buf_get()'s); false: no room. (A connection's own room is 0 once it is torn down.) */
static __rte_always_inline bool
xprt_buf_keep(struct xprt_conn *c, struct rte_mbuf *m)
{
	if (c->srq)
		return xprt_poller_keep(c->p, m);
	if (c->nrecycle >= c->recycle_cap)
		return false;
	xprt_buf_reset(m);
	c->recycle[c->nrecycle++] = m;
	return true;
}

/* An RPC message type CALL followed by RPC version 2, as eight bytes in wire order. */
#define XPRT_WIRE_CALL_RPCV2 rte_cpu_to_be_64(2)

/* Give back a buffer: a message buffer nobody else holds is kept for reuse (no trip through
 * the mempool); anything else is freed. */
static inline void
xprt_buf_put(struct xprt_conn *c, struct rte_mbuf *m)
{
	if (likely(xprt_buf_reusable(c->p, m) && xprt_buf_keep(c, m)))
		return;
	rte_pktmbuf_free(m);
}

/* Receive slot @s of @c: its buffer came back untouched (bit 0 of its entry, buffers being
 * line-aligned), and the buffer. */
#define XPRT_RQ_IDLE ((uintptr_t)1)

static __rte_always_inline bool
xprt_rq_idle(const struct xprt_conn *c, uint32_t s)
{
	return ((uintptr_t)c->rq[s] & XPRT_RQ_IDLE) != 0;
}

static __rte_always_inline void
xprt_rq_set_idle(struct xprt_conn *c, uint32_t s)
{
	c->rq[s] = (struct rte_mbuf *)((uintptr_t)c->rq[s] | XPRT_RQ_IDLE);
}

static __rte_always_inline struct rte_mbuf *
xprt_rq_buf(const struct xprt_conn *c, uint32_t s)
{
	return (struct rte_mbuf *)((uintptr_t)c->rq[s] & ~XPRT_RQ_IDLE);
}

/*
 * Give back the receive buffer @p m of the receive completion taken last (xprt_recv_take()),
 * done with before the next is taken: unless someone else still holds it, it stays in its slot
 * and is posted again as it is (its WR unchanged). Its data_off is what it was when posted.
 */
static __rte_always_inline void
xprt_buf_put_last_recv(struct xprt_conn *c, struct rte_mbuf *m)
{
	if (likely(rte_mbuf_refcnt_read(m) == 1 && !c->srq)) {
		xprt_rq_set_idle(c, (c->rq_head - 1) & c->rq_mask);
		return;
	}
	xprt_buf_put(c, m);
}

/* Give back the receive buffer of a call or a reply: one of ours (direct, from the message
 * pool), kept for reuse unless someone else still holds it. */
static __rte_always_inline void
xprt_buf_put_recv(struct xprt_conn *c, struct rte_mbuf *m)
{
	if (likely(rte_mbuf_refcnt_read(m) == 1 && xprt_buf_keep(c, m)))
		return;
	xprt_buf_put(c, m);
}

/*
 * The RPC msg_type of a received message whose header is decoded (@h, the RPC message at @rpc,
 * @rpclen bytes), told before any xid is looked up (RFC 8167 section 4.1; Linux's
 * rpcrdma_is_bcall()): a message of either direction may carry an xid the other direction uses
 * too, so a requester must never take a call for a reply, nor a responder a reply for a call.
 * Only an inline message (RDMA_MSG, RDMA_MSGP) can be told (recv.c sends the others the
 * connection's forward way). @return RPCR_ONCRPC_CALL, RPCR_ONCRPC_REPLY, or UINT32_MAX: cannot be told.
 */
static inline uint32_t
xprt_msg_dir(const struct xprt_hdr *h, const uint8_t *rpc, uint32_t rpclen)
{
	uint32_t t;

	if ((h->type != XPRT_HT_MSG && h->type != XPRT_HT_MSGP) || rpclen < 8)
		return UINT32_MAX;
	t = rpcr_xdr_load32(rpc + 4);
	return t == RPCR_ONCRPC_CALL || t == RPCR_ONCRPC_REPLY ? t : UINT32_MAX;
}

/*
 * Take the buffer of receive completion @p wc of @p c (the oldest receive posted): its length
 * set, counted. @return NULL where there is nothing to process: a failed or flushed receive, a
 * connection closing, a completion out of order (each handled by xprt_recv_bad()).
 */
static __rte_always_inline struct rte_mbuf *
xprt_recv_take(struct xprt_conn *c, const struct rpcr_rdev_wc *wc)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)wc->wr_id;

	if (unlikely(c->rq_head == c->rq_tail || c->rq[c->rq_head & c->rq_mask] != m ||
		     wc->status != RPCR_RDEV_WC_SUCCESS || c->state >= XPRT_CONN_CLOSING)) {
		/* (A connection of the shared receive queue has no receives of its own.) */
		if (c->srq)
			return xprt_srq_take(c, wc);
		xprt_recv_bad(c, wc);
		return NULL;
	}
	c->rq_head++;
	m->data_len = (uint16_t)wc->byte_len;
	m->pkt_len = wc->byte_len;
	c->p->stats.bytes_recv += wc->byte_len;
	c->msgs_in++;
	c->bytes_in += wc->byte_len;
	return m;
}

/* Count @p msgs Sends and @p bytes going out on @p c (its poller's counters too). */
static __rte_always_inline void
xprt_count_out(struct xprt_conn *c, uint32_t msgs, uint64_t bytes)
{
	c->msgs_out += msgs;
	c->bytes_out += bytes;
	c->p->stats.bytes_sent += bytes;
}

/* Count @p bytes coming in on @p c by RDMA Read (its poller's counters too). */
static __rte_always_inline void
xprt_count_in(struct xprt_conn *c, uint64_t bytes)
{
	c->bytes_in += bytes;
	c->p->stats.bytes_recv += bytes;
}

/* The connection has receives to replenish or sends to post at the end of this poll. */
static inline void
xprt_mark_dirty(struct xprt_conn *c)
{
	if (!c->dirty) {
		c->dirty = true;
		c->p->dirty[c->p->ndirty++] = c;
	}
}

/*
 * draft.c: the 2005 draft's extras (RDMA_MSGP, RDMA_DONE, CONF_RDMA), used on a connection where
 * both sides offered them. xprt_draft_has() is the one test the rest of the engine makes.
 */
static inline bool
xprt_draft_has(const struct xprt_conn *c, uint32_t feature)
{
	return (c->features & feature) != 0;
}

/* A connection that speaks version 2, which has none of the draft's messages: features off
 * (before its first message is read). */
void xprt_draft_off(struct xprt_conn *c);
/* Responder: room for @n replies waiting for RDMA_DONE (before the connection is accepted). */
int xprt_draft_responder_init(struct xprt_conn *c, uint32_t n);
/* Expose the results of request @r the client is to read; @out the entry that holds them until
 * RDMA_DONE (NULL: none to read). @return 0, -ENOSPC (no entry), or an exposure error. */
int xprt_draft_expose(const struct rpcr_svc_req *r, struct xprt_done **out);
void xprt_draft_done_recv(struct xprt_conn *c, uint32_t xid);
void xprt_draft_done_release(struct xprt_conn *c, struct xprt_done *d);
/* Release the entries past their deadline (@all: every one, the connection ends). */
uint64_t xprt_draft_dones_expire(struct xprt_conn *c, uint64_t now, bool all);
/* Register the CONF_RDMA program on server @s. */
int xprt_draft_svc_register(struct rpcr_svc *s);

/* Requester: room for the RDMA_DONEs of @nslots calls (a power of 2). */
int xprt_draft_requester_init(struct xprt_conn *c, uint32_t nslots);
/* RDMA_DONEs sent that may still hold a credit at the server. */
static inline uint32_t
xprt_draft_dones_out(const struct xprt_conn *c)
{
	return c->done_tail - c->done_head;
}
/* The RDMA_DONEs sent before send-queue number @seq are known processed. */
void xprt_draft_dones_seen(struct xprt_conn *c, uint32_t seq);
/* Send RDMA_DONE for @xid asking @credit. @return true when sent (it holds a credit). */
bool xprt_draft_send_done(struct xprt_conn *c, uint32_t xid, uint32_t credit);
/* Fill @call as the CONF_RDMA call of client @cl, answered into @rep. */
void xprt_draft_conf_call(struct rpcr_clnt *cl, struct rpcr_call *call,
			  struct rpcr_proto_conf_rdma_reply *rep);

#include "sq.h"

#endif /* XPRT_INTERNAL_H */
