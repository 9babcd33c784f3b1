/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_XPRT_H
#define RPCR_XPRT_H

/**
 * @file
 * The RPC-over-RDMA engine: clients and servers of ONC RPC over any rpcr device.
 *
 * **Pollers.** Work is done by pollers, one per lcore and per device handle (run-to-completion):
 * a poller owns a completion queue and the connections on it, and rpcr_xprt_poll() advances
 * everything it owns:
 *
 *   1. poll completions, advancing requests on the spot (receives: calls decoded, dispatched
 *      and answered, replies matched and completed; sends; RDMA Reads);
 *   2. take calls and deferred replies submitted by other threads (its rte_ring);
 *   3. send what waited for a credit, the connection, buffers or send-queue room;
 *   4. replenish receives in batches (before the replies of this poll go: a grant lets the
 *      client send at once);
 *   5. flush sends (one doorbell per connection per poll);
 *   6. timers (connection events, reconnects, call deadlines);
 *   7. tear down connections that failed.
 *
 * Client callbacks and server handlers run inside rpcr_xprt_poll(), on the poller's lcore. Other
 * threads may submit calls (rpcr_clnt_call() from any thread goes through the poller's ring) and
 * may answer deferred requests (rpcr_svc_reply() from any thread): the decoupled mode.
 *
 * **Messages.** Arguments and results are written and read with lib/xdr cursors
 * (rpcr_msg_enc(), rpcr_msg_dec()). An item that the upper-layer binding makes DDP-eligible, an
 * opaque<> of bulk data, is written with rpcr_msg_put_bulk() and read with rpcr_msg_get_bulk():
 * the engine places it in a chunk when it is at least the procedure's threshold (a read chunk at
 * its XDR position for arguments, the next write chunk for results), inline otherwise, and the
 * reader gets the data where it landed, without a copy.
 *
 * Functions returning int return 0 or a negative errno; constructors return NULL and set
 * rte_errno.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_errno.h> /* (constructors report their errors in rte_errno) */
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <rpcr_chunk.h>
#include <rpcr_mem.h>
#include <rpcr_oncrpc.h>
#include <rpcr_rdev.h>
#include <rpcr_xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpcr_xprt_poller;
struct rpcr_clnt;
struct rpcr_svc;
struct rpcr_msg;
struct rpcr_svc_req;
struct rpcr_svc_prog;

/* ---- pollers ---- */

/** Poller parameters. */
/** How a poller waits for work (doc/xprt.md "Poll modes"). */
enum rpcr_xprt_poll_mode {
	/** Poll without pause: the lowest latency, a whole core, always. */
	RPCR_XPRT_POLL_BUSY = 0,
	/** Poll while there is work; after @c idle_us with none, sleep until a completion, a
	 *  connection event, a call or reply from another thread, or a timer is due. */
	RPCR_XPRT_POLL_ADAPTIVE = 1,
	/** Sleep as soon as a poll finds nothing to do. */
	RPCR_XPRT_POLL_INTERRUPT = 2,
};

struct rpcr_xprt_poller_conf {
	const char *name;      /**< For logs and telemetry. */
	struct rpcr_rdev *dev; /**< Device its connections use. */
	/** Where its buffers live. NULL: an arena of its own (hugepages first, as
	 *  rpcr_mem_arena_create()), of rpcr_xprt_poller_mem_size() bytes, freed with it. */
	struct rpcr_mem_arena *arena;
	uint32_t cq_depth;  /**< Completion queue depth (default 65536). */
	uint32_t ring_size; /**< Calls/replies from other threads (default 1024). */
	uint32_t bufs;      /**< Message buffers (10 KiB each: inline messages; default 2048). */
	uint32_t bulk_bufs; /**< Bulk buffers (60 KiB each: read chunks, long messages; 512). */
	/** Register memory the peer may reach per call (rpcr_rdev_mr_reg() and _dereg() around
	 *  each call with chunks) even where the device has memory windows, which are the
	 *  default there (bound and invalidated by work request: no system call per call). */
	bool reg_per_call;
	/** With no @c arena: bytes of its own arena beyond its pools, for rpcr_bulk_alloc() over
	 *  960 KiB and the application's own buffers (rpcr_xprt_poller_arena()); default 16 MiB. */
	size_t arena_extra;
	/** How it waits for work (default busy). Sleeping needs a device that can wake it
	 *  (RPCR_RDEV_CAP_CQ_EVENT); on another, the poller polls busily (said at NOTICE). */
	enum rpcr_xprt_poll_mode poll_mode;
	uint32_t idle_us;      /**< Adaptive: polls with no work for this long, then sleeps
				*   (default 500). */
	uint32_t sleep_max_ms; /**< Longest sleep: timers (call deadlines, reconnections) run at
				*   least this often while idle (default 10, at most 60000; 1 while
				*   calls or requests wait for resources). */
	/**
	 * Receives its servers' connections share: a shared receive queue of this many message
	 * buffers (where the device has them, RPCR_RDEV_CAP_SRQ; elsewhere said at NOTICE and
	 * ignored), so that their receive memory is this, whatever their number, and each one's
	 * credits come from what it holds (doc/xprt.md "Shared receive queue"): a connection is
	 * refused once every credit it holds is reserved. 0 (default): each connection posts its
	 * own, its credits and a batch. More than 32, at most the device's max_srq_wr; its buffers
	 * come from @c bufs.
	 */
	uint32_t srq_recvs;
};

/**
 * Bytes of its arena a poller of this configuration takes: its message and bulk pools (10 KiB
 * and 60 KiB buffers, with rte_mempool's overhead; 2048 and 512 of them by default: about
 * 58 MiB on 4 KiB pages). Connections and their queues come from the EAL's own heap, not the
 * arena, whatever their number. Make the arena at least this (plus what the application
 * allocates from it). With no @c arena in @p conf: the size of the arena the poller makes for
 * itself (its pools sized for the base page size, one 2 MiB page more per pool for hugepages'
 * packing, and @c arena_extra).
 */
size_t rpcr_xprt_poller_mem_size(const struct rpcr_xprt_poller_conf *conf);

/** Create a poller (call on the lcore that will run it, or before launching it). */
struct rpcr_xprt_poller *rpcr_xprt_poller_create(const struct rpcr_xprt_poller_conf *conf);

/** Destroy a poller; its clients and servers must be destroyed first. @return 0 or -EBUSY. */
int rpcr_xprt_poller_destroy(struct rpcr_xprt_poller *p);

/**
 * Advance everything the poller owns once (see the file comment for the order). Only the
 * poller's own thread may call it, and not from inside a poll (a handler or a completion
 * callback): there it does nothing.
 *
 * @return how many things happened (0: idle or called from inside a poll).
 */
int rpcr_xprt_poll(struct rpcr_xprt_poller *p);

/** Poll until *@p stop becomes true (a loop of your own; see rpcr_xprt_poller_lcore()). @return 0. */
int rpcr_xprt_poller_run(struct rpcr_xprt_poller *p, volatile bool *stop);

/**
 * Run poller @p p on worker lcore @p lcore until rpcr_xprt_poller_stop(): the poller is handed
 * over first (from here on no other thread owns it, so every other thread's calls go through
 * its ring: rpcr_clnt_call(), rpcr_clnt_call_sync(), rpcr_svc_reply()), then
 * rte_eal_remote_launch(rpcr_xprt_poller_lcore, p, lcore). Create the poller's clients and
 * servers before. One poller may host clients and servers together, its own clients calling its
 * own servers. Stopped (rpcr_xprt_poller_stop(), then rte_eal_wait_lcore()), it may be launched
 * again, on any lcore, or its clients, servers and itself destroyed from the launching thread;
 * calls made while it is stopped wait for the next launch.
 *
 * @return 0, or rte_eal_remote_launch()'s error (-EBUSY: the lcore is busy), -EINVAL.
 */
int rpcr_xprt_poller_launch(struct rpcr_xprt_poller *p, unsigned int lcore);

/**
 * The lcore_function_t of rpcr_xprt_poller_launch(): poll @p arg (a struct rpcr_xprt_poller *)
 * until rpcr_xprt_poller_stop(), owning it (each launch consumes one stop request). Launch it
 * with rpcr_xprt_poller_launch(), which hands the poller over first; through
 * rte_eal_remote_launch() directly only if no other thread uses the poller until it has
 * started (a thread that owned it before could otherwise poll it at the same time).
 *
 * @return 0.
 */
int rpcr_xprt_poller_lcore(void *arg);

/** Ask rpcr_xprt_poller_lcore() to return after its current poll (any thread; a sleeping
 * poller is woken). */
void rpcr_xprt_poller_stop(struct rpcr_xprt_poller *p);

/**
 * Wake the poller if it sleeps (any thread): after setting a flag its loop looks at, for
 * instance the one rpcr_xprt_poller_run() takes. Calls and replies queued from other threads
 * wake it themselves. Nothing when it polls busily.
 */
void rpcr_xprt_poller_wake(struct rpcr_xprt_poller *p);

/** The mode the poller runs in (the configured one, or busy where the device cannot wake it). */
enum rpcr_xprt_poll_mode rpcr_xprt_poller_mode(const struct rpcr_xprt_poller *p);

/**
 * Whether EAL lcore @p lcore runs on one CPU that the kernel isolated (isolcpus=, as
 * /sys/devices/system/cpu/isolated lists them): where a busy poller takes nothing from other
 * work. @return 1, 0 (not isolated, or the lcore may run on several CPUs), or -errno.
 * usertools/rpcr-cores says more (ticks, RCU callbacks, interrupts, hugepages).
 */
int rpcr_xprt_lcore_isolated(unsigned int lcore);

/**
 * Change how the poller waits (its own thread, not from inside a poll): to busy always (for
 * instance for a teardown loop of polls that must not sleep), to a sleeping mode only if it was
 * created able to sleep. @return 0, -EINVAL, -EBUSY (another thread, or inside a poll),
 * -ENOTSUP (it cannot sleep).
 */
int rpcr_xprt_poller_set_poll_mode(struct rpcr_xprt_poller *p, enum rpcr_xprt_poll_mode mode);

/** "busy", "adaptive", "interrupt". */
const char *rpcr_xprt_poll_mode_name(enum rpcr_xprt_poll_mode mode);
/** The mode of that name (as rpcr_xprt_poll_mode_name() spells it), or -EINVAL. */
int rpcr_xprt_poll_mode_parse(const char *name);

/** Per-poller counters. */
struct rpcr_xprt_stats {
	uint64_t polls;        /**< rpcr_xprt_poll() calls. */
	uint64_t busy_polls;   /**< ... that found work. */
	uint64_t calls_sent;   /**< Client calls transmitted (retransmissions included). */
	uint64_t replies_recv; /**< Client replies matched to a call. */
	uint64_t calls_recv;   /**< Server calls received (RDMA_DONE and undecodable transport
				*   headers are not calls). */
	uint64_t replies_sent; /**< Server replies sent. */
	/* The reverse direction (RFC 8167), counted apart from the four above. */
	uint64_t bcalls_sent;    /**< Reverse-direction calls a server sent its clients. */
	uint64_t breplies_recv;  /**< ... their replies matched to a call. */
	uint64_t bcalls_recv;    /**< Reverse-direction calls a client received from its server. */
	uint64_t breplies_sent;  /**< ... replies the client sent. */
	uint64_t bcalls_overrun; /**< Reverse-direction calls beyond the credits the client
				  *   granted (dropped; also in overruns). */
	uint64_t bytes_sent;     /**< Bytes of RPC messages and chunks sent. */
	uint64_t bytes_recv;     /**< Bytes of RPC messages and chunks received. */
	uint64_t credit_waits;   /**< Calls that waited for a credit. */
	uint64_t unmatched;      /**< Replies whose xid matched no outstanding call (dropped). */
	uint64_t rdma_errors_sent;     /**< RDMA_ERROR replies to malformed headers. */
	uint64_t rdma_errors_recv;     /**< RDMA_ERROR received for a call. */
	uint64_t timeouts;             /**< Calls that timed out. */
	uint64_t retransmits;          /**< Calls sent again after a reconnect. */
	uint64_t reconnects;           /**< Client connections re-established. */
	uint64_t wc_errors;            /**< Completions with an error status. */
	uint64_t doorbells;            /**< Send-queue post calls. */
	uint64_t bad_headers;          /**< Malformed transport or RPC headers received. */
	uint64_t overruns;             /**< Calls beyond the credits granted, dropped. */
	uint64_t remote_invalidations; /**< Client keys the server invalidated (Send w/ Inv). */
	uint64_t reply_reads;   /**< Client: replies whose results were pulled (read chunks). */
	uint64_t dones_sent;    /**< Client: RDMA_DONE messages sent. */
	uint64_t dones_recv;    /**< Server: RDMA_DONE messages received. */
	uint64_t done_timeouts; /**< Server: read-chunk replies released with no RDMA_DONE. */
	uint64_t msgp_sent;     /**< RDMA_MSGP messages sent. */
	uint64_t msgp_recv;     /**< RDMA_MSGP messages received. */
	/* Server resource limits (struct rpcr_svc_conf); each refused call got RDMA_ERROR
	 * ERR_CHUNK, and is not counted in bad_headers. */
	uint64_t limit_call_bytes; /**< Calls whose read chunks bring more than max_call_bytes. */
	uint64_t limit_chunks;     /**< Calls with more chunks (max_chunks) or more segments in a
				    *   chunk (max_segs) than allowed. */
	uint64_t conns_refused;    /**< Connection requests refused at max_conns. */
	uint64_t calls_dropped;    /**< Server: calls a handler answered RPCR_SVC_DROP (each
				    *   closed its connection). */
	uint64_t invalidate_failures; /**< Client: registrations that could not be invalidated
				       *   after a call (each closed its connection). */
	uint64_t bcalls_refused;      /**< Reverse-direction calls (RFC 8167) on a connection
				       *   that serves none (dropped, never taken for a reply). */
	uint64_t bcalls_too_long;     /**< Reverse-direction calls not sent: longer than a Send
				       *   (RFC 8167 allows no chunks; -EMSGSIZE). */
	uint64_t brebinds; /**< Reverse-direction clients moved to a new connection of their
			    *   client (rpcr_clnt_rebind()); their calls waiting went out there. */
	uint64_t bcalls_chunks_sent; /**< Version 2: reverse-direction calls sent with chunks
				      *   (the client said BRS GENL). */
	uint64_t bcalls_chunks_recv; /**< ... such calls a client received (answered an error
				      *   where it did not say GENL, §4.5.4). */
	/* Memory the peer may reach for a call (doc/xprt.md "Registration"). */
	uint64_t mw_binds;            /**< Memory windows bound for a call's chunks. */
	uint64_t local_invalidations; /**< Windows invalidated by LOCAL_INV after a call. */
	uint64_t reg_mrs;             /**< Registrations made for one call (rpcr_rdev_mr_reg()). */
	uint64_t reg_fallbacks;       /**< ... of them where windows are used: memory that cannot
				       *   take one (no MW_BIND registration), or no window left. */
	uint64_t send_invs;           /**< Server: replies sent with Send with Invalidate of the
				       *   client's key (the client set R, RFC 8797). */
	uint64_t props_recv;          /**< Version 2: transport-property messages (RDMA2_CONNPROP)
			      *   received and applied (doc/rpcrdma-v2.md). */
	uint64_t props_sent;          /**< Version 2: RDMA2_CONNPROP sent (one a connection). */
	uint64_t calls_too_many_segs; /**< Version 2: calls failed (EMSGSIZE) for needing more
				       *   segments than the server's RCSIZ. */
	/* Version 2's message continuation (doc/rpcrdma-v2.md "Continuation"). */
	uint64_t cont_sent;       /**< Calls and replies sent as several Sends (RDMA2_F_MORE). */
	uint64_t cont_parts_sent; /**< ... their Sends. */
	uint64_t cont_recv;       /**< Continued messages received whole and reassembled. */
	uint64_t cont_parts_recv; /**< ... their Sends. */
	uint64_t xchar_sent;      /**< Version 2: transport-characteristics operations sent. */
	uint64_t xchar_recv;      /**< ... received and taken. */
	uint64_t cont_fallbacks;  /**< Client calls sent again with a reply chunk: the server
				   *   answered a reply granted as a continuation REPLY_RESOURCE. */
	uint64_t cont_errors;     /**< Continued messages dropped: a sequence broken by another
				   *   message (answered RDMA2_ERR_INVAL_CONT where this side
				   *   responds), one longer than a reassembly buffer, a continued
				   *   CONNPROP, no buffer (RDMA2_ERR_SYSTEM). (A part the decoder
				   *   refuses, MORE with chunks or on RDMA2_NOMSG, counts in
				   *   bad_headers.) */
	/* Sleeping (poll modes adaptive and interrupt). */
	uint64_t sleeps;   /**< Times the poller slept. */
	uint64_t wakeups;  /**< ... woken by a completion, event or another thread (the rest
			    *   ended at sleep_max_ms). */
	uint64_t sleep_us; /**< Time spent asleep. */
	/* The shared receive queue (rpcr_xprt_poller_conf::srq_recvs). */
	uint64_t srq_low; /**< Times it fell below an eighth of its receives (the device's limit
			   *   event; each logged at WARNING). */
	/* Late replies. */
	uint64_t late_replies; /**< Client: replies to calls that had timed out (dropped; the
				*   credit each held came back with it, RFC 8166 section 3.3.1). */
};

/**
 * The poller's protection domain: register application memory here (for instance with a
 * rpcr_mem_cache) to pass it to calls and replies without a copy.
 */
struct rpcr_rdev_pd *rpcr_xprt_poller_pd(const struct rpcr_xprt_poller *p);

/** The poller's arena (its own where rpcr_xprt_poller_conf::arena was NULL). */
struct rpcr_mem_arena *rpcr_xprt_poller_arena(const struct rpcr_xprt_poller *p);

/** The poller's message-buffer pool: mbufs for rpcr_chunk_attach(). */
struct rpcr_chunk_pool *rpcr_xprt_poller_pool(const struct rpcr_xprt_poller *p);

/**
 * The access to register application memory with (rpcr_mem_reg(), rpcr_rdev_mr_reg()) when its
 * chains go into calls as chunks: RPCR_RDEV_ACCESS_LOCAL_WRITE, and RPCR_RDEV_ACCESS_MW_BIND
 * where the poller's connections expose memory through windows. Memory registered without it
 * still works: each of its chunks is then registered for its call (counted in reg_fallbacks).
 */
uint32_t rpcr_xprt_poller_mem_access(const struct rpcr_xprt_poller *p);

/** The poller's bulk pool (60 KiB registered buffers): rpcr_chunk_alloc_chain() from it. */
struct rpcr_chunk_pool *rpcr_xprt_poller_bulk_pool(const struct rpcr_xprt_poller *p);

/** Read a poller's counters (any thread; values may be slightly stale). */
void rpcr_xprt_stats_get(const struct rpcr_xprt_poller *p, struct rpcr_xprt_stats *s);

/** Reset a poller's counters. */
void rpcr_xprt_stats_reset(struct rpcr_xprt_poller *p);

/**
 * The transport properties a version-2 peer published in RDMA2_CONNPROP (version 2's §5.2), as
 * its connection applies them: the draft's defaults until they arrive, and where the peer sends
 * none. doc/rpcrdma-v2.md, "Transport properties".
 */
struct rpcr_xprt_props {
	bool received;  /**< An RDMA2_CONNPROP came from the peer. */
	bool complete;  /**< Its last one (TPMORE clear) came. */
	uint32_t sbsiz; /**< Most bytes the peer sends in one Send (default 4096): this side's
			 *   inline_recv is at most this. */
	uint32_t rbsiz; /**< The peer's receive buffers (default 4096): this side's inline_send
			 *   is at most this. */
	uint32_t rssiz; /**< Longest RDMA segment the peer takes (default 1 MiB): the segments
			 *   this side offers are at most this long. */
	uint32_t rcsiz; /**< Most segments in a requester's header (default 16): a client's call
			 *   that needs more fails (EMSGSIZE). */
	uint32_t brs;   /**< The peer's reverse-direction support (RPCR_PROTO_V2_RVRSDIR_*,
			 *   default NONE). */
	bool hostauth;  /**< The peer sent HOSTAUTH (handed to the hostauth_check hook). */
	/* Transport characteristics (the xcharext draft, doc/rpcrdma-v2.md). */
	bool xchar;         /**< The peer's INIT_XCHAR came. */
	bool xchar_off;     /**< The peer refused ours (INVAL_HTYPE): properties alone. */
	bool rqreminv;      /**< Its RQREMINV (with @c xchar). */
	uint32_t bkrqsup;   /**< Its BRS characteristic (RPCR_PROTO_XCHAR_BKRQSUP_*). */
	uint32_t own_rbsiz; /**< This side's receive size as said to the peer (grown on its
			     *   request once every shorter receive is used). */
};

/** A connection of a poller, as rpcr_xprt_conn_list() reports it. */
struct rpcr_xprt_conn_info {
	uint64_t id;          /**< Poller-unique number. */
	bool server;          /**< Accepted by a server (else a client's). */
	const char *state;    /**< "connecting", "accepting", "connected", "closing", "closed". */
	uint32_t inline_send; /**< Largest Send this side transmits. */
	uint32_t inline_recv; /**< Largest Send the peer may transmit. */
	bool remote_inv;      /**< Both sides set R (Send with Invalidate). */
	bool draft;           /**< The 2005 draft's extensions are on. */
	uint32_t credits;     /**< Client: granted now; server: the most it grants. */
	uint32_t in_use;      /**< Client: calls outstanding; server: requests in progress. */
	uint32_t rev_credits; /**< Reverse direction (RFC 8167): client: the most it grants its
			       *   server's calls (0: serves none); server: granted by the
			       *   client (0: no reverse-direction client yet). */
	uint32_t rev_in_use;  /**< Reverse direction: client: the server's calls in progress;
			       *   server: its calls outstanding. */
	uint32_t recv_posted; /**< Receives posted now. */
	uint64_t msgs_sent;   /**< Sends posted (calls, replies, RDMA_DONE, RDMA_ERROR). */
	uint64_t msgs_recv;   /**< Messages received. */
	uint64_t bytes_sent;  /**< Bytes sent: messages, chunks written. */
	uint64_t bytes_recv;  /**< Bytes received: messages, chunks read. */
	uint64_t overruns;    /**< Server: calls beyond the credits granted, dropped. */
	struct rpcr_rdev_qp_stats qp; /**< The queue pair's counters (doorbells, RNR errors). */
	struct sockaddr_storage peer; /**< Server: the client's address (rpcr_rdev_event's peer);
				       *   client: AF_UNSPEC. */
	uint32_t rdma_vers;           /**< RPC-over-RDMA version spoken (a server's connection:
				       *   1 until its first message fixes it). */
	struct rpcr_xprt_props props; /**< Version 2: the peer's transport properties. */
};

/**
 * Report the connections of poller @p p (clients' and servers'): up to @p max entries into
 * @p info. Poller thread only (or while the poller is not polled).
 *
 * @return how many connections it has (may exceed @p max), -EINVAL.
 */
int rpcr_xprt_conn_list(const struct rpcr_xprt_poller *p, struct rpcr_xprt_conn_info *info,
			uint32_t max);

/**
 * Write @p sa as "a.b.c.d:port" or "[v6]:port" into @p buf (an empty string for AF_UNSPEC and
 * other families).
 *
 * @return the length written, 0 for an address of no known family, -EINVAL, -ENOSPC.
 */
int rpcr_xprt_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* ---- capture (doc/capture.md) ---- */

#define RPCR_XPRT_CAPTURE_SNAP     256u  /**< Default snap length: bytes kept of a message. */
#define RPCR_XPRT_CAPTURE_SNAP_MAX 8192u /**< Longest snap length (the largest inline size). */

/** What to capture. */
struct rpcr_xprt_capture_conf {
	const char *path;   /**< pcapng file to write (created, or truncated). */
	uint32_t snap;      /**< Bytes kept of each message (0: RPCR_XPRT_CAPTURE_SNAP). */
	const char *poller; /**< Only the poller of this name (NULL: all). */
	uint64_t conn;      /**< Only connections with this id (0: all; ids are per poller,
			     *   @c poller says whose). */
	bool rdma_data;     /**< RDMA Writes' and Read responses' data too (up to @c snap). */
	uint32_t ring;      /**< Records a poller queues for the writer at most (0: 16384): more
			   *   while the writer lags are dropped, and counted. */
};

/** A capture's counters. */
struct rpcr_xprt_capture_stats {
	bool running;      /**< Started, not stopped. */
	char path[256];    /**< Its file. */
	uint32_t pollers;  /**< Pollers capturing (those there when it started). */
	uint32_t conns;    /**< Connections described in the file. */
	uint64_t recorded; /**< Messages and RDMA operations the pollers recorded. */
	uint64_t written;  /**< ... written to the file as packets. */
	uint64_t drops;    /**< ... lost: a poller's queue was full, or no buffer. */
	int error;         /**< The file's first write error (errno), 0: none. */
};

/**
 * Start capturing what every poller there is sends and receives into a pcapng file of RoCEv2
 * frames (Wireshark decodes version 1 with its own rpcordma dissector; version 2 with
 * usertools/wireshark/rpcrdma2.lua): each message's transport header and first bytes, each
 * RDMA Write and Read request this side posts and each Read's response, one interface per
 * connection. Any thread. Each poller starts at its next poll; a writer thread (a DPDK control
 * thread) writes the file.
 *
 * @return 0, -EBUSY (a capture runs), -EINVAL, -ENODEV (no poller of that name), -ENOMEM, or
 *         the file's negative errno.
 */
int rpcr_xprt_capture_start(const struct rpcr_xprt_capture_conf *conf);

/**
 * Stop the capture: each poller stops at its next poll; the file gets what they recorded, then
 * the statistics (per connection: packets; on the interface "rpcr": the drops), and is closed.
 * Any thread; waits for the pollers (2 s at most, for one that does not poll). @p st (may be
 * NULL) gets the final counters.
 *
 * @return 0, -ENOENT (none runs), or the file's negative errno.
 */
int rpcr_xprt_capture_stop(struct rpcr_xprt_capture_stats *st);

/** The running capture's counters. @return 0, -ENOENT (none runs), -EINVAL. */
int rpcr_xprt_capture_status(struct rpcr_xprt_capture_stats *st);

/* ---- messages ---- */

/** Bulk data: @c len bytes from byte @c off of chain @c m. */
struct rpcr_bulk {
	struct rte_mbuf *m; /**< Chain holding the data (its mbufs carry their keys). */
	uint32_t off;       /**< Offset of the first byte in the chain. */
	uint32_t len;       /**< Bytes. */
};

/** The XDR encoder of a message being built (arguments, results). */
struct rpcr_xdr_enc *rpcr_msg_enc(struct rpcr_msg *m);

/** The XDR decoder of a message being read. */
struct rpcr_xdr_dec *rpcr_msg_dec(struct rpcr_msg *m);

/**
 * Write a DDP-eligible opaque<>: its length, then its data, in a chunk or inline. The data must
 * stay unchanged until the call completes (client) or the reply is sent (server); the engine takes
 * a reference on the chain (rpcr_chunk_hold()) while it needs it.
 *
 * @return 0, -EMSGSIZE (inline and out of room), -E2BIG (more bulk items than the binding allows).
 */
int rpcr_msg_put_bulk(struct rpcr_msg *m, const struct rpcr_bulk *b);

/**
 * Read a DDP-eligible opaque<>: its length, and a view of its data wherever it landed (a read
 * chunk's buffers, the caller's result buffer, or the receive buffer itself). The view is valid
 * until the handler returns (server) or the call's completion returns (client); take a
 * reference with rpcr_chunk_hold() to keep it longer.
 *
 * @return 0, -EBADMSG (malformed), -E2BIG (longer than @p max).
 */
int rpcr_msg_get_bulk(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b);

/**
 * @name Ready codecs, for rpcr_svc_proc and rpcr_call (as ONC RPC's xdr_u_int and xdr_bytes).
 * @{
 */
/** Writes *(const uint32_t *). @return 0 or -EMSGSIZE (so two may be or-ed). */
int rpcr_msg_enc_u32(struct rpcr_msg *m, const void *u32);
/** Reads a uint32_t. @return 0 or -EBADMSG (so two may be or-ed). */
int rpcr_msg_dec_u32(struct rpcr_msg *m, void *u32);
/** Writes a struct rpcr_bulk as rpcr_msg_put_bulk() (DDP-eligible). */
int rpcr_msg_enc_bulk(struct rpcr_msg *m, const void *bulk);
/** Reads a struct rpcr_bulk view as rpcr_msg_get_bulk() (no length limit of its own: the
 *  server's max_call_bytes and the reply's size bound it). */
int rpcr_msg_dec_bulk(struct rpcr_msg *m, void *bulk);
/** @} */

/** Copy up to @p max bytes of a bulk view out, any size. @return bytes copied. */
uint32_t rpcr_bulk_copy(const struct rpcr_bulk *b, void *dst, uint32_t max);

/**
 * Copy @p len bytes from @p src into a bulk view of memory the caller owns (a chain from
 * rpcr_bulk_alloc(), before it is sent), from byte @p off of the view; any size. Not for
 * views of received data (rpcr_msg_get_bulk()): the engine or the peer may still read them.
 *
 * @return bytes copied (fewer when the view ends first).
 */
uint32_t rpcr_bulk_write(const struct rpcr_bulk *b, uint32_t off, const void *src, uint32_t len);

/**
 * Compare a bulk view with @p len bytes at @p mem, as memcmp() (a shorter one first).
 * @return 0 when they hold the same bytes, less or more than 0 otherwise.
 */
int rpcr_bulk_cmp(const struct rpcr_bulk *b, const void *mem, uint32_t len);

/** The pieces of a bulk view, in order (rpcr_bulk_iter_init(), then rpcr_bulk_iter_next()). */
struct rpcr_bulk_iter {
	const struct rte_mbuf *m; /**< Segment of the next piece. */
	uint32_t off;             /**< Its offset there. */
	uint32_t left;            /**< Bytes of the view still to come. */
};

/** Start at the view's first byte. */
void rpcr_bulk_iter_init(struct rpcr_bulk_iter *it, const struct rpcr_bulk *b);

/**
 * The next contiguous piece of the view: its first byte in @p *data and its length in
 * @p *len. @return false when there is none left.
 */
bool rpcr_bulk_iter_next(struct rpcr_bulk_iter *it, const uint8_t **data, uint32_t *len);

/**
 * A chain of @p len bytes (data_len and pkt_len set) of registered memory that any call or
 * reply of the poller may carry as a chunk, its argument or a place for its result
 * (rpcr_bulk), without a copy: up to 960 KiB, buffers of the poller's bulk pool (60 KiB each,
 * registered once: nothing is registered now); more, one contiguous block of the poller's
 * arena, registered for it until it is freed, attached in 32 KiB mbufs of the message pool (a
 * chunk may have 16 segments at most, one per run of contiguous memory, and a call 32 in all).
 * rte_pktmbuf_free() gives it back. Control path for large ones.
 *
 * @return the chain, or NULL with rte_errno ENOMEM (the bulk pool is out, see
 *         rpcr_xprt_poller_conf.bulk_bufs; or the arena is), EINVAL.
 */
struct rte_mbuf *rpcr_bulk_alloc(struct rpcr_xprt_poller *p, uint32_t len);

/* ---- upper-layer binding ---- */

/** DDP-eligible items per message and direction, at most. */
#define RPCR_ULB_MAX_BULK 4u

/**
 * How a procedure's messages use chunks (RFC 8166 §6 asks each upper layer to say): how many
 * DDP-eligible items its arguments and its results have (written with rpcr_msg_put_bulk(), in XDR
 * order: the XDR position is where each is written) and the size from which one goes in a chunk.
 */
struct rpcr_ulb {
	uint8_t args_bulk;  /**< DDP-eligible items in the arguments (RPCR_ULB_MAX_BULK at most). */
	uint8_t res_bulk;   /**< DDP-eligible items in the results (RPCR_ULB_MAX_BULK at most). */
	uint32_t threshold; /**< Items of at least this many bytes go in chunks (default 1024). */
};

/* ---- clients ---- */

/** Client parameters. */
struct rpcr_clnt_conf {
	const char *addr;     /**< Server address (device syntax). */
	uint32_t prog;        /**< Program. */
	uint32_t vers;        /**< Version. */
	uint32_t credits;     /**< Credits to request (default 32). */
	uint32_t inline_send; /**< Largest Send this side transmits (default 4096). */
	uint32_t inline_recv; /**< Largest Send this side receives (default 4096). */
	uint64_t timeout_us;  /**< Default call timeout (default 30 s). */
	bool remote_inv;      /**< Offer remote invalidation (RFC 8797 R bit), where the device has
			  *   RPCR_RDEV_CAP_REMOTE_INV. */
	bool no_draft;        /**< Never use the 2005 draft's extensions (RDMA_MSGP, DONE). */
	bool no_pdata;        /**< Send no RFC 8797 private data, as a peer older than RFC 8797: the
			*   server then assumes 1024-byte inline messages both ways and no
			*   remote invalidation (implies no_draft; inline_recv becomes 1024). */
	/**
	 * Serve calls from the server on this client's connections (RFC 8167, the reverse
	 * direction): the credits granted to them, as many receives reserved on every connection
	 * for them; 0 (default): serve none (such calls are dropped and counted in
	 * bcalls_refused). Programs are added with rpcr_clnt_register(). The upper layer tells
	 * its server that it serves them (RFC 8167 section 2.2.3: NFSv4.1's CREATE_SESSION).
	 */
	uint32_t bc_credits;
	/**
	 * Version 2 (§5.2.5): the reverse-direction support this client says in its properties
	 * (BRS) when it has bc_credits: RPCR_PROTO_V2_RVRSDIR_SIMPLE (plain calls), _CONT
	 * (continued ones too) or _GENL (chunks both ways, as the forward direction: its
	 * responder pulls read chunks and writes results into the server's write and reply
	 * chunks); 0: GENL. Anything else: EINVAL. A call of its server's with chunks where it
	 * said less is answered the error of the limit it breaks, 0 chunks or segments
	 * (RDMA2_ERR_WRITE_CHUNKS, _READ_CHUNKS, _SEGMENTS: §4.5.4); on version 1 such a call is
	 * dropped (bcalls_refused, RFC 8167 section 2.5).
	 */
	uint32_t bc_brs;
	const struct rpcr_ulb *ulb;   /**< Per procedure (indexed by proc), or NULL: none. */
	uint32_t nulb;                /**< Entries in @c ulb. */
	struct rpcr_oncrpc_auth cred; /**< Credential of every call (zeroed: AUTH_NONE). */
	uint32_t msgp_thresh; /**< Send RDMA_MSGP, padding inline DDP-eligible items of at least
			       *   this many bytes to the server's alignment (CONF_RDMA), when
			       *   the connection negotiated the 2005 draft's extensions; 0: never. */
	/**
	 * The program this client calls, described once for both sides: the table its server
	 * registers (rpcr_svc_conf::program, rpcr_svc_register()). When set, @c prog and @c vers
	 * are the table's (0 or the same, else EINVAL), each procedure's binding is its entry's
	 * @c ulb (@c ulb and @c nulb must be left 0), and a call with no @c encode (@c decode) of
	 * its own uses its procedure's @c encode_args (@c decode_res). The table is checked
	 * (procedure numbers unique and below RPCR_CLNT_MAX_PROC, bindings within
	 * RPCR_ULB_MAX_BULK: EINVAL) and copied: it need not outlive the client. Handlers are not
	 * called on this side.
	 */
	const struct rpcr_svc_prog *program;
	/**
	 * RPC-over-RDMA versions to speak: 0 or RPCR_XPRT_V1 (version 1), or RPCR_XPRT_V1 |
	 * RPCR_XPRT_V2: each connection starts in version 2, its first message this side's
	 * RDMA2_CONNPROP (§6.3.4), at most 1024 bytes and alone until the server answers (§4.2.3);
	 * a server that answers ERR_VERS with a range that has version 1 (in either version's
	 * format, as Linux's answers) makes the client speak version 1 from then on, on the same
	 * connection; a first message lost, or unanswered by timeout_us, on a new one. Never asked
	 * again (no negotiation loop). Anything else: EINVAL; with version 2 also inline_recv under
	 * 4096, or no_pdata (version 2's server may send 4096 bytes inline). Version 2 today:
	 * doc/rpcrdma-v2.md.
	 */
	uint32_t versions;
	/** Version 2 (§5.2.6): host authentication material published in this side's
	 *  RDMA2_CONNPROP (HOSTAUTH), @c hostauth_len bytes, at most RPCR_XPRT_HOSTAUTH_MAX
	 *  (EINVAL); NULL: none. Must stay valid while the client exists. */
	const void *hostauth;
	uint32_t hostauth_len; /**< Bytes at @c hostauth. */
	/** Version 2: called on the poller with the peer's HOSTAUTH as it arrives (@c msg points
	 *  into a receive buffer: valid during the call only), or with NULL and 0 once the peer's
	 *  properties are complete without one; non-zero closes the connection (local policy,
	 *  §5.2.6). A server with a hook also closes a connection whose client calls before its
	 *  properties are complete; a client sends no call before the server's are. NULL: every
	 *  peer is taken. */
	int (*hostauth_check)(const void *msg, uint32_t len, void *arg);
	void *hostauth_arg; /**< Handed to @c hostauth_check. */
	/**
	 * Version 2 (§4.4.2): calls, and replies (by rpcr_call::reply_max), of up to this many
	 * bytes that do not fit one Send go as a continuation (several Sends with RDMA2_F_MORE)
	 * rather than through a position-zero read chunk or a reply chunk, where the credits
	 * and the receives kept for it allow (else through the chunk). 0: the default, 8192
	 * (doc/rpcrdma-v2.md "Continuation" has the measurements); RPCR_XPRT_NO_CONT: never.
	 * Longer than 61440 (a reassembly buffer): as 61440. A server that answers a reply
	 * granted so RDMA2_ERR_REPLY_RESOURCE gets the call again with a reply chunk, same xid
	 * (at-least-once, as a retransmission: stats cont_fallbacks).
	 */
	uint32_t cont_max;
	/** Version 2: send INIT_XCHAR (transport characteristics, the xcharext draft) after the
	 *  properties; the peer's operations are taken either way (doc/rpcrdma-v2.md). */
	bool xchar;
	/**
	 * Take the receives of this client's connection from its poller's shared receive queue
	 * (rpcr_xprt_poller_conf::srq_recvs), where the poller has one; else ignored. The
	 * connection posts none of its own: at connect it reserves in the queue, for as long as
	 * it lives, a receive for each message its server may send it (a reply to each call it
	 * can have out, @c credits rounded up to a power of two; @c bc_credits; on version 2
	 * receives kept for continued replies and for the server's messages that answer no
	 * call). Where the queue's budget has no room for them now, the connection is not made
	 * (logged at WARNING) and is tried again as after a lost one; more than the whole budget:
	 * rpcr_clnt_create() fails (EINVAL). A call that times out while its server may still
	 * answer it keeps its slot, and so its receive, until the late reply (doc/xprt.md
	 * "Timeouts"). For a poller with many connections, each with few
	 * calls out: their replies complete in the queue's order, with no visit of each
	 * connection (doc/xprt.md "Shared receive queue").
	 */
	bool srq;
};

/** rpcr_clnt_conf::cont_max: no continuation. */
#define RPCR_XPRT_NO_CONT UINT32_MAX

/** Procedure numbers of a client's program (rpcr_clnt_conf::program) are below this. */
#define RPCR_CLNT_MAX_PROC 4096u

/** One call. The caller owns it until its completion runs. */
struct rpcr_call {
	/* In. */
	uint32_t proc; /**< Procedure. */
	/** Write the arguments, or NULL: none. Where the client was made from a program
	 *  (rpcr_clnt_conf::program) and @c args is set, rpcr_clnt_call() sets a NULL one to an
	 *  engine function that runs its procedure's encode_args (and resolves it again when the
	 *  call is made again). */
	int (*encode)(struct rpcr_msg *m, const void *args);
	const void *args; /**< For @c encode. */
	/** Read the results, or NULL: they are not read. Where the client was made from a
	 *  program and @c res is set: its procedure's decode_res, set up likewise. */
	int (*decode)(struct rpcr_msg *m, void *res);
	void *res;                  /**< For @c decode. */
	struct rpcr_bulk *res_bulk; /**< Where DDP-eligible results may land (write chunks). */
	uint32_t nres_bulk;         /**< Entries in @c res_bulk. */
	/** This call's upper-layer binding, for procedures whose DDP-eligible items vary from call
	 *  to call (an NFSv4 COMPOUND: one WRITE's data, two READs' results): read instead of the
	 *  client's entry for @c proc (rpcr_clnt_conf::ulb); NULL: that entry. Threshold 0: 1024.
	 *  Must stay valid until the call completes. */
	const struct rpcr_ulb *ulb;
	uint32_t reply_max;  /**< Largest reply apart from DDP results; above the inline size a
			     *   reply chunk is offered. 0: inline replies only. */
	uint64_t timeout_us; /**< 0: the client's default. A call sent that times out keeps its
			      *   credit until its late reply (doc/xprt.md "Timeouts"). */
	void (*done)(struct rpcr_call *call); /**< Completion (on the poller's lcore). */
	struct rte_ring *done_ring; /**< If set: the completed call is enqueued here instead
				     *   (multi-producer), for a thread other than the poller's. */
	void *user;                 /**< Free for the caller. */
	/* Out. */
	int status;           /**< 0; or -ETIMEDOUT, -ECONNRESET, -EPROTO (RDMA_ERROR), -EREMOTEIO
			       *   (RPC-level error: see accept_stat), -EACCES (MSG_DENIED: see
			       *   auth_stat), -EBADMSG (bad reply), -EMSGSIZE (version 2's
			       *   RDMA2_ERR_WRITE_RESOURCE or _REPLY_RESOURCE: see need_len). */
	uint32_t accept_stat; /**< RPC accept_stat of the reply. */
	uint32_t auth_stat;   /**< -EACCES: the AUTH_ERROR's auth_stat; 0 for RPC_MISMATCH. */
	uint32_t xid;         /**< Transaction id used. */
	/** -EMSGSIZE: the length the server needs to send the reply (§7.3.4, §7.3.5): in the
	 *  result of res_bulk[need_chunk - 1] (need_chunk 1-based), or in the reply chunk
	 *  (need_chunk 0: call again with reply_max at least need_len). */
	uint32_t need_len;
	uint32_t need_chunk; /**< See need_len. */
	/* Private to the engine. */
	uint64_t priv[8];
};

/**
 * Create a client on poller @p p and start connecting.
 *
 * @return the client, or NULL with rte_errno.
 */
struct rpcr_clnt *rpcr_clnt_create(struct rpcr_xprt_poller *p, const struct rpcr_clnt_conf *conf);

/**
 * Destroy a client; outstanding calls complete with -ECONNABORTED first. Poller thread only.
 * @return 0.
 */
int rpcr_clnt_destroy(struct rpcr_clnt *c);

/**
 * Start a call. Its completion runs later on the poller's lcore (never inside this function).
 * From the poller's own thread the call is queued directly; from any other thread it goes
 * through the poller's ring.
 *
 * @return 0, -EAGAIN (ring full), -EINVAL.
 */
int rpcr_clnt_call(struct rpcr_clnt *c, struct rpcr_call *call);

/**
 * Make a call and wait for it. On the poller's thread this polls; from another thread it waits
 * for the poller (which must be running). Not from inside a poll (a handler or a completion
 * callback on the poller's thread): -EDEADLK there, nothing sent.
 *
 * @return the call's status, -EDEADLK.
 */
int rpcr_clnt_call_sync(struct rpcr_clnt *c, struct rpcr_call *call);

/** The client is connected and may send. */
bool rpcr_clnt_connected(const struct rpcr_clnt *c);

/** What a client's connection negotiated. */
struct rpcr_clnt_info {
	bool connected;       /**< Calls can be sent. */
	uint32_t inline_send; /**< Largest inline call (the smaller of the two sides'). */
	uint32_t inline_recv; /**< Largest inline reply. */
	bool remote_inv;      /**< Both sides set R: the server invalidates our keys. */
	bool draft;           /**< The 2005 draft's extensions are on (both sides rpcr). */
	uint32_t credits;     /**< Credits granted now. */
	uint32_t outstanding; /**< Calls in flight. */
	uint32_t msgp_align;  /**< The server's CONF_RDMA alignment (0: not asked or no answer). */
	uint32_t connections; /**< Connections established so far: an upper layer that binds
			       *   state to its connection (NFSv4.1's back channel, RFC 8881
			       *   BIND_CONN_TO_SESSION) sees a new one here. */
	uint32_t rdma_vers;   /**< The connection's RPC-over-RDMA version (1 or 2). */
	bool negotiating;     /**< Version 2 asked, the server's answer not in yet. */
	struct rpcr_xprt_props props; /**< Version 2: the server's transport properties. */
	uint32_t owed_credits;        /**< Of @c outstanding, the credits held by calls that timed
				       *   out, until their late replies (doc/xprt.md "Timeouts"). */
};

/** Read a client's connection parameters. @return 0, -EINVAL. */
int rpcr_clnt_info_get(const struct rpcr_clnt *c, struct rpcr_clnt_info *info);

/**
 * Drop client @p c's connection as if it were lost (an upper layer that judges its transport
 * stuck, as Linux's xprt_force_disconnect()): the QP goes at the end of the next poll, calls in
 * flight wait with their xids, and a new connection is made after the usual back-off. Poller
 * thread only.
 *
 * @return 0, -ENOTCONN (no connection now), -EINVAL (NULL, or a reverse-direction client: its
 * server cannot connect).
 */
int rpcr_clnt_disconnect(struct rpcr_clnt *c);

/**
 * Serve a program version to the server, on this client's connections (RFC 8167): its calls
 * run their handlers on the poller like a server's (rpcr_svc_req_*() and rpcr_svc_reply() as
 * usual). Reverse-direction messages carry no chunks: arguments and results are inline, and a
 * reply longer than a Send cannot be sent. Poller thread, or before it runs.
 *
 * @return 0, -ENOTSUP (the client has no bc_credits), -EEXIST, -ENOSPC, -EINVAL.
 */
int rpcr_clnt_register(struct rpcr_clnt *c, const struct rpcr_svc_prog *prog);

/** Whether client @p c serves program @p prog version @p vers to its server. */
bool rpcr_clnt_serves(const struct rpcr_clnt *c, uint32_t prog, uint32_t vers);

/* ---- servers ---- */

/** Handler verdicts. */
enum rpcr_svc_verdict {
	RPCR_SVC_REPLY = 0,    /**< Results were written: send the reply now. */
	RPCR_SVC_DEFERRED = 1, /**< rpcr_svc_reply() will be called later (any thread). */
	RPCR_SVC_ERROR = 2,    /**< Reply with the accept_stat set by rpcr_svc_req_error()
				*   (SYSTEM_ERR if none), or MSG_DENIED after
				*   rpcr_svc_req_auth_error(). */
	RPCR_SVC_DROP = 3,     /**< Send no reply: the connection is closed (RFC 8166 section
				*   4.5.4: the client's credit would never come back), and the
				*   client sends its calls again on the next one. */
};

/**
 * A procedure: its number, its handler, its binding and, optionally, the codecs of its
 * arguments and results. One table describes a program for both sides: the server registers
 * it (rpcr_svc_register()), a client is created from it (rpcr_clnt_conf::program) and reads the
 * same bindings and codecs, so the two cannot disagree. The codecs write and read with
 * rpcr_msg_enc(), rpcr_msg_dec(), rpcr_msg_put_bulk() and rpcr_msg_get_bulk() (return 0 or a
 * negative errno); the server's handler reaches its pair with rpcr_svc_req_get_args() and
 * rpcr_svc_req_put_res().
 */
struct rpcr_svc_proc {
	uint32_t proc;                                            /**< Procedure number. */
	enum rpcr_svc_verdict (*handler)(struct rpcr_svc_req *r); /**< The work (server). */
	struct rpcr_ulb ulb;                                      /**< Its upper-layer binding. */
	int (*encode_args)(struct rpcr_msg *m, const void *args); /**< Client: write arguments. */
	int (*decode_args)(struct rpcr_msg *m, void *args);       /**< Server: read them. */
	int (*encode_res)(struct rpcr_msg *m, const void *res);   /**< Server: write results. */
	int (*decode_res)(struct rpcr_msg *m, void *res);         /**< Client: read them. */
};

/** A program version and its procedures. */
struct rpcr_svc_prog {
	uint32_t prog;                     /**< Program number. */
	uint32_t vers;                     /**< Version. */
	const struct rpcr_svc_proc *procs; /**< Procedures. */
	uint32_t nprocs;                   /**< Entries in @c procs. */
	void *ctx;                         /**< Handed to handlers (rpcr_svc_req_ctx()). */
};

/** Server parameters. */
struct rpcr_svc_conf {
	const char *addr;     /**< Where to listen (device syntax). */
	uint32_t credits;     /**< Most credits granted per connection (default 64). */
	uint32_t inline_send; /**< Largest Send this side transmits (default 4096). */
	uint32_t inline_recv; /**< Largest Send this side receives (default 4096). */
	bool remote_inv;      /**< Offer remote invalidation, where the device can (see clients). */
	/** Never answer with Send with Invalidate. (By default a reply whose call's chunks all
	 *  use one key invalidates it, toward any client that set R: RFC 8797 asks only the owner
	 *  of the keys to set it; on version 2, the handle the call names.) */
	bool no_send_inv;
	bool no_draft;      /**< Never use the 2005 draft's extensions. */
	uint32_t max_conns; /**< Connections at most (default 64); more are refused (RDMA-CM
			       *   reject), counted in conns_refused. */
	/*
	 * Per-call resource limits, on every connection. A call over one gets RDMA_ERROR ERR_CHUNK
	 * before the server reads or allocates anything for it, and is counted (limit_*). Credits
	 * (above) limit calls in progress per connection: calls beyond are dropped (overruns).
	 */
	uint32_t max_call_bytes; /**< Bytes a call may bring in read chunks, the position-zero
				  *   chunk included (default 64 MiB; at most 1 GiB). */
	uint32_t max_chunks;     /**< Read chunks (positions), and write chunks, in one call
				  *   (default and at most 8). */
	uint32_t max_segs;       /**< Segments of one read, write or reply chunk (default and at
				  *   most 32). */
	uint32_t msgp_thresh; /**< Reply with RDMA_MSGP, padding inline DDP-eligible results of at
			       *   least this many bytes to 64 bytes, when negotiated; 0: never. */
	struct rte_ring *dispatch_ring; /**< Decoupled mode: requests are enqueued here
					 *   (multi-producer) instead of running their handler on
					 *   the poller; workers call rpcr_svc_req_run(). */
	/** Called on the poller for each connection request (after max_conns) with the peer's
	 *  address (see rpcr_rdev_event); false refuses it (RDMA-CM reject, counted in
	 *  conns_refused). NULL: every peer is accepted. */
	bool (*accept)(const struct sockaddr *peer, void *arg);
	void *accept_arg; /**< Handed to @c accept. */
	/**
	 * A server of several pollers (rpcr_svc_join()): called on the listening poller for each
	 * connection request accepted (after @c accept), it names the poller that will serve the
	 * connection: this server's own or one whose member joined it. NULL (the function or its
	 * answer): round-robin over the server's poller and its members', in the order they
	 * joined. A poller that serves no member: the request is refused (logged, conns_refused).
	 * Called with nothing locked; it must not block.
	 */
	struct rpcr_xprt_poller *(*place)(const struct sockaddr *peer, void *arg);
	void *place_arg; /**< Handed to @c place. */
	/** A program to serve from the start, as rpcr_svc_register() (a table not sound:
	 *  EINVAL); more with rpcr_svc_register(). Its clients may be created from the same
	 *  table (rpcr_clnt_conf::program). */
	const struct rpcr_svc_prog *program;
	/**
	 * RPC-over-RDMA versions served: 0 or RPCR_XPRT_V1 (version 1 only), or RPCR_XPRT_V1 |
	 * RPCR_XPRT_V2 (anything else: EINVAL; with version 2, inline_recv 0 or at least 4096). A
	 * connection speaks the version of the first message it receives (version 2's §4.2.3.3)
	 * and answers a message of another version with ERR_VERS and the range served, in the
	 * failing message's version. Version 2 today (doc/rpcrdma-v2.md): calls with every chunk
	 * kind, replies and errors in version 2; transport properties exchanged (this side's
	 * RDMA2_CONNPROP first on the connection; the client's applied: inline sizes, segment
	 * limits); an optional operation is answered RDMA2_ERR_INVAL_HTYPE; a continued message
	 * (MORE) RDMA2_ERR_SYSTEM; Send with Invalidate of the handle a call names
	 * (rdma_inv_handle); resource errors with their arms; no reverse direction.
	 */
	uint32_t versions;
	/** Version 2: HOSTAUTH published, and the hook that judges the client's; as
	 *  rpcr_clnt_conf's. */
	const void *hostauth;
	uint32_t hostauth_len; /**< Bytes at @c hostauth. */
	int (*hostauth_check)(const void *msg, uint32_t len, void *arg); /**< The hook. */
	void *hostauth_arg; /**< Handed to @c hostauth_check. */
	/** Version 2: send INIT_XCHAR after the properties (see rpcr_clnt_conf::xchar). */
	bool xchar;
};

/** @name RPC-over-RDMA versions (rpcr_svc_conf::versions). @{ */
#define RPCR_XPRT_V1 (1u << 1) /**< Version 1 (RFC 8166). */
#define RPCR_XPRT_V2 (1u << 2) /**< Version 2 (draft-ietf-nfsv4-rpcrdma-version-two-01). */
/** Most bytes of HOSTAUTH a side publishes (rpcr_svc_conf, rpcr_clnt_conf::hostauth_len). */
#define RPCR_XPRT_HOSTAUTH_MAX 512u
/** @} */

/** Create a server on poller @p p and start listening. @return NULL with rte_errno on error. */
struct rpcr_svc *rpcr_svc_create(struct rpcr_xprt_poller *p, const struct rpcr_svc_conf *conf);

/**
 * Destroy a server and its connections. Poller thread only.
 *
 * @return 0; -EBUSY: requests still in a handler's or worker's hands, or (a server others
 *         joined) members left: destroy those first.
 */
int rpcr_svc_destroy(struct rpcr_svc *s);

/**
 * Serve connections of server @p lead on poller @p p too: a member of @p lead, with no listener
 * of its own, that takes the connection requests @p lead's poller hands it (rpcr_svc_conf::place,
 * round-robin by default) and serves those connections on @p p's thread from then on, as
 * @p lead serves its own. Each connection stays on the poller it was placed on; nothing on the
 * fast path is shared between pollers. The member has @p lead's configuration and the programs
 * registered on @p lead so far (register them first: rpcr_svc_register() on a server with
 * members is -EBUSY); max_conns bounds the connections of the lead and its members together.
 * Handlers run on the pollers of their connections, at once: state they share (a file store)
 * must be safe under concurrent pollers.
 *
 * Call it on @p p's thread (or before @p p is launched), with @p lead alive and not being
 * destroyed (not at the same time as rpcr_svc_destroy() of @p lead on its thread); destroy the
 * member (rpcr_svc_destroy(), on @p p's thread) before @p lead. A device handle of each poller
 * must reach the connections of the other (the same driver, and the same shm directory or
 * rdma-core device; a request that cannot move there is refused when accepted).
 *
 * @return the member, or NULL with rte_errno: EINVAL (@p lead is not a listening server, @p p
 *         is its poller, serves a member of it already, or has another driver), ENOSPC (63
 *         members), ENOMEM.
 */
struct rpcr_svc *rpcr_svc_join(struct rpcr_svc *lead, struct rpcr_xprt_poller *p);

/**
 * Serve a program version. The table is checked (procedure numbers unique, bindings within
 * RPCR_ULB_MAX_BULK) and must stay valid while the server lives: it is used as it is when
 * entry i is procedure i, and otherwise copied into an array indexed by procedure number
 * (numbers below RPCR_CLNT_MAX_PROC; holes answer PROC_UNAVAIL), which is what the server's
 * straight-line path needs to find a procedure without a search.
 *
 * @return 0, -EEXIST, -ENOSPC, -EINVAL, -ENOMEM, -EBUSY (a server with members, or a member:
 *         see rpcr_svc_join()).
 */
int rpcr_svc_register(struct rpcr_svc *s, const struct rpcr_svc_prog *prog);

/** The request's arguments (decode with rpcr_msg_dec() and rpcr_msg_get_bulk()). */
struct rpcr_msg *rpcr_svc_req_args(struct rpcr_svc_req *r);

/** The request's results (encode with rpcr_msg_enc() and rpcr_msg_put_bulk()). */
struct rpcr_msg *rpcr_svc_req_results(struct rpcr_svc_req *r);

/**
 * Read the request's arguments into @p args with its procedure's decode_args
 * (rpcr_svc_proc). On failure the request's verdict is set to GARBAGE_ARGS: the handler
 * returns RPCR_SVC_ERROR (as svc_getargs() failing, then svcerr_decode(), in ONC RPC's C API).
 *
 * @return 0, -EBADMSG (the arguments do not decode), -ENOTSUP (the procedure has no
 *         decode_args), -EINVAL.
 */
int rpcr_svc_req_get_args(struct rpcr_svc_req *r, void *args);

/**
 * Write the request's results from @p res with its procedure's encode_res, for an
 * RPCR_SVC_REPLY verdict. On failure the verdict is set to SYSTEM_ERR: return RPCR_SVC_ERROR.
 *
 * @return 0, the codec's error (-EMSGSIZE: too long to send, -E2BIG), -ENOTSUP (no
 *         encode_res), -EINVAL.
 */
int rpcr_svc_req_put_res(struct rpcr_svc_req *r, const void *res);

/**
 * Give request @p r its own upper-layer binding, read instead of its procedure's
 * (rpcr_svc_proc::ulb) from here on: a handler whose results carry a number of DDP-eligible items
 * that varies from call to call (an NFSv4 COMPOUND with several READs) sets it before writing
 * them with rpcr_msg_put_bulk(), and one whose arguments do before reading them. Read as the
 * procedure's binding is. @p ulb must stay valid until the reply is sent.
 *
 * @return 0, -EINVAL.
 */
int rpcr_svc_req_set_ulb(struct rpcr_svc_req *r, const struct rpcr_ulb *ulb);

/** The call header (program, version, procedure, credentials). The first call may fill it in
 *  (calls served on the straight-line path decode it only when asked): not for two threads at
 *  once on one request. */
const struct rpcr_oncrpc_call *rpcr_svc_req_call(const struct rpcr_svc_req *r);

/** The program's context. */
void *rpcr_svc_req_ctx(const struct rpcr_svc_req *r);

/** Set the accept_stat of an RPCR_SVC_ERROR verdict (GARBAGE_ARGS, SYSTEM_ERR, ...). */
void rpcr_svc_req_error(struct rpcr_svc_req *r, uint32_t accept_stat);

/**
 * Make an RPCR_SVC_ERROR verdict a MSG_DENIED reply, AUTH_ERROR with @p auth_stat
 * (RPCR_ONCRPC_AUTH_BADCRED to RPCR_ONCRPC_RPCSEC_GSS_CTXPROBLEM; RFC 5531 section 9): the
 * credentials or verifier are not acceptable, e.g. a flavour the program does not take
 * (BADCRED) or one too weak for the operation (TOOWEAK). Replaces rpcr_svc_req_error().
 *
 * @return 0, or -EINVAL for AUTH_OK or an unknown value.
 */
int rpcr_svc_req_auth_error(struct rpcr_svc_req *r, uint32_t auth_stat);

/** The address of the peer that sent the call (see rpcr_xprt_conn_info's @c peer); valid
 *  until the request is answered. */
const struct sockaddr *rpcr_svc_req_peer(const struct rpcr_svc_req *r);

/** The poller whose connection request @p r came in on: its pools and protection domain are the
 *  ones the results' buffers must be usable with (a server of several pollers: rpcr_svc_join()). */
struct rpcr_xprt_poller *rpcr_svc_req_poller(const struct rpcr_svc_req *r);

/**
 * The reverse-direction client of the connection request @p r came in on (RFC 8167): calls to
 * program @p prog version @p vers of the client at the other end, over that connection, made
 * with rpcr_clnt_call() as any client's (completion callback, timeout; from any thread).
 * Created on the first request of a connection, the same one after (another program or
 * version: EEXIST). Each return takes a reference; give it back with rpcr_clnt_destroy().
 *
 * The upper layer calls only a client that said it serves the program (RFC 8167 section
 * 2.2.3; NFSv4.1: CREATE_SESSION). Calls are single Sends (no chunks, no DDP-eligible items:
 * rpcr_msg_put_bulk() fails); a longer one fails with -EMSGSIZE. The client's replies grant
 * credits for this direction alone, 1 until its first reply. When the connection is lost, its
 * calls wait, and so do calls made after (a server cannot reconnect, RFC 8167 section 2.3): the
 * upper layer moves the client to the next connection its client makes with rpcr_clnt_rebind()
 * (NFSv4.1: BIND_CONN_TO_SESSION, or a new session's connection), where they are sent again with
 * the same xids; a call not sent again by its deadline completes with -ETIMEDOUT, and calls
 * still waiting when the last reference goes, or once rpcr_svc_destroy() of its server has
 * begun (even if it returns -EBUSY; and calls made after), with -ECONNRESET. From another thread than the
 * poller's (a worker of the decoupled mode, holding @p r) the poller makes it while the caller
 * waits (the poller must be running); rpcr_clnt_destroy() from such a thread gives the
 * reference back through the poller's ring too.
 *
 * @return the client, or NULL with rte_errno: EINVAL, ECONNRESET (the connection is going),
 * EEXIST, ENOMEM, ENOTSUP (a version-2 connection: not built yet).
 */
struct rpcr_clnt *rpcr_svc_req_bclnt(struct rpcr_svc_req *r, uint32_t prog, uint32_t vers);

/**
 * Move reverse-direction client @p cl (rpcr_svc_req_bclnt()), whose connection was lost, to the
 * connection request @p r came in on: a later connection of the same client, as the upper layer
 * knows it (RFC 8167 section 2.3). The calls it holds are sent there again, with their xids, and
 * new calls go there. From the poller's thread or, like rpcr_svc_req_bclnt(), a worker holding
 * @p r.
 *
 * @return 0 (also when @p cl is that connection's already), -EINVAL (not a reverse-direction
 * client, or not a request of the server @p cl was made on), -EBUSY (@p cl still has a live
 * connection), -EEXIST (that connection has a reverse-direction client of its own), -ECONNRESET
 * (that connection is going, or the server is: rpcr_svc_destroy() has begun).
 */
int rpcr_clnt_rebind(struct rpcr_clnt *cl, struct rpcr_svc_req *r);

/**
 * Send the reply of a deferred request (any thread; from other threads through the poller's
 * ring). @return 0 or -EAGAIN (ring full: try again).
 */
int rpcr_svc_reply(struct rpcr_svc_req *r);

/**
 * Decoupled mode: run a request taken from the server's dispatch ring on the calling thread (a
 * worker): its handler, then its reply (through the poller's ring). A handler that returns
 * RPCR_SVC_DEFERRED replies later with rpcr_svc_reply() as usual.
 *
 * @return 0, -EINVAL.
 */
int rpcr_svc_req_run(struct rpcr_svc_req *r);

/* ---- the test program ---- */

/** Test program used by tests, benchmarks and applications (outside tests depend on it). */
#define RPCR_TESTPROG       0x2f5a0001u
#define RPCR_TESTPROG_VERS  1u
#define RPCR_TESTPROG_NULL  0u /**< void -> void */
#define RPCR_TESTPROG_ECHO  1u /**< opaque data<> -> opaque data<> */
#define RPCR_TESTPROG_WRITE 2u /**< opaque data<> -> uint32 bytes */
#define RPCR_TESTPROG_READ  3u /**< uint32 len -> opaque data<>, byte i = (i * 31 + 7) & 0xff */
/** (uint32 count, opaque data<>) -> uint32 verified: the server calls the client's ECHO of
 *  RPCR_TESTPROG_CB @c count times, one after another, on the connection the call came in on
 *  (RFC 8167), and answers how many echoes were byte for byte the data. The call is the
 *  client's consent to those calls. Nothing in it is DDP-eligible. */
#define RPCR_TESTPROG_CALLBACK 4u
/** (uint32 count, uint32 len, uint32 flags) -> uint32 verified: as CALLBACK, the server
 *  calling the client's BULK of RPCR_TESTPROG_CB @c count times with @c len bytes of the READ
 *  sequence (at most RPCR_TESTPROG_CBBULK_MAX; args: a struct rpcr_testprog_cb_args whose
 *  @c data is unused), DDP-eligible both ways from 1024 bytes: in chunks where the reverse
 *  direction takes them (version 2, the client said BRS GENL), else inline (a call or reply
 *  longer than a Send then fails: not verified). With RPCR_TESTPROG_CBBULK_WHOLE in @c flags,
 *  nothing is DDP-eligible (@c len at most RPCR_TESTPROG_CBBULK_WHOLE_MAX): a long call goes
 *  whole, continued or in a position-zero read chunk, its echo in a reply chunk. */
#define RPCR_TESTPROG_CBBULK 5u
/** CBBULK's flag: the messages whole, nothing DDP-eligible. */
#define RPCR_TESTPROG_CBBULK_WHOLE 1u
/** Longest CBBULK data with RPCR_TESTPROG_CBBULK_WHOLE (a message buffer holds the call). */
#define RPCR_TESTPROG_CBBULK_WHOLE_MAX 8000u
/** Longest CBBULK data (one bulk buffer: the server's destination for the echo). */
#define RPCR_TESTPROG_CBBULK_MAX 61440u

/** The callback program clients serve to the test program's server (reverse direction). */
#define RPCR_TESTPROG_CB      0x2f5a0003u
#define RPCR_TESTPROG_CB_VERS 1u
#define RPCR_TESTPROG_CB_NULL 0u /**< void -> void */
#define RPCR_TESTPROG_CB_ECHO 1u /**< opaque data<> -> opaque data<> (not DDP-eligible) */
#define RPCR_TESTPROG_CB_BULK 2u /**< opaque data<> -> opaque data<>, DDP-eligible both ways */
/** Longest CALLBACK data (the echo must fit in one Send of the smallest inline size). */
#define RPCR_TESTPROG_CB_MAX 896u

/** The test program's byte @p i of READ data. */
static inline uint8_t
rpcr_testprog_byte(uint64_t i)
{
	return (uint8_t)((i * 31 + 7) & 0xff);
}

/** Serve the test program on @p s (data DDP-eligible both ways from @p threshold, 0: 1024). */
int rpcr_testprog_register(struct rpcr_svc *s, uint32_t threshold);

/**
 * The test program's argument encoders, for struct rpcr_call::encode: ECHO's and WRITE's
 * opaque data<> (@p args: a struct rpcr_bulk, DDP-eligible) and READ's uint32 length (@p args:
 * a uint32_t).
 */
int rpcr_testprog_enc_data(struct rpcr_msg *m, const void *args);
int rpcr_testprog_enc_len(struct rpcr_msg *m, const void *args);

/** The test program's binding, indexed by procedure, for struct rpcr_clnt_conf::ulb
 *  (CALLBACK has no DDP-eligible item: no entry). */
extern const struct rpcr_ulb rpcr_testprog_ulb[4];

/** CALLBACK's arguments, for rpcr_testprog_enc_callback(). */
struct rpcr_testprog_cb_args {
	uint32_t count;   /**< Reverse-direction calls the server is to make. */
	const void *data; /**< What each carries (at most RPCR_TESTPROG_CB_MAX bytes). */
	uint32_t len;     /**< Its length. */
	uint32_t flags;   /**< CBBULK: RPCR_TESTPROG_CBBULK_WHOLE or 0. */
};

/**
 * CALLBACK's encoder (@p args: a struct rpcr_testprog_cb_args). A client that does not serve
 * RPCR_TESTPROG_CB (rpcr_testprog_cb_register()) does not send it: the call fails with
 * -ENOTSUP, and an error is logged.
 */
int rpcr_testprog_enc_callback(struct rpcr_msg *m, const void *args);

/** CBBULK's encoder (@p args: a struct rpcr_testprog_cb_args, @c len at most
 *  RPCR_TESTPROG_CBBULK_MAX), with CALLBACK's check. */
int rpcr_testprog_enc_cbbulk(struct rpcr_msg *m, const void *args);

/** A uint32 result (WRITE's, CALLBACK's; @p res: a uint32_t). */
int rpcr_testprog_dec_u32(struct rpcr_msg *m, void *res);

/** Serve RPCR_TESTPROG_CB (NULL, ECHO, BULK) on client @p cl's connections: it needs bc_credits.
 *  @return rpcr_clnt_register()'s. */
int rpcr_testprog_cb_register(struct rpcr_clnt *cl);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_XPRT_H */
