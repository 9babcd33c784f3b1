/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_CHUNK_H
#define RPCR_CHUNK_H

/**
 * @file
 * Zero-copy chunk buffers: rte_mbufs whose data is in registered memory.
 *
 * A **chunk pool** is an rte_pktmbuf pool allocated inside a lib/mem arena and registered with a
 * device once; every mbuf carries its local key (and remote key, for memory the peer may reach)
 * in an mbuf dynamic field, so a gather entry is built without a lookup. A configurable headroom
 * is reserved in front of the data so that a transport header can be prepended and an inline
 * Send is one gather entry.
 *
 * Application memory joins a chain without a copy: rpcr_chunk_attach() wraps a registered range
 * in external-buffer mbufs (DPDK's shared-info reference count), and calls the application's
 * free callback only once every mbuf that refers to it has been freed: a buffer handed to the
 * application is freed only when both sides are done (hold it with rpcr_chunk_hold(), release it
 * with rte_pktmbuf_free()).
 *
 * Data larger than one mbuf (64 KiB) is a chain. rpcr_chunk_to_segs() and rpcr_chunk_to_sges()
 * convert part of a chain to the wire's (handle, length, offset) segments or to local gather
 * entries, merging neighbours that are contiguous under the same key; rpcr_chunk_rdma_plan()
 * walks a chain and a list of the peer's segments together and produces the RDMA Read or Write
 * work requests that move the data.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <rpcr_mem.h>
#include <rpcr_proto.h>
#include <rpcr_rdev.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpcr_chunk_pool;

/** Keys of an mbuf's data (its dynamic field). */
struct rpcr_chunk_keys {
	uint32_t lkey; /**< Local key. */
	uint32_t rkey; /**< Remote key, or 0 when the peer may not reach this memory. */
	/** The registration holding the data (a memory window is bound over it), or NULL. */
	const struct rpcr_rdev_mr *mr;
};

/** Offset of the keys' dynamic field (set by the first pool created). */
extern int rpcr_chunk_keys_offset;

/** The keys of @p m's data. */
static inline struct rpcr_chunk_keys *
rpcr_chunk_keys(const struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, rpcr_chunk_keys_offset, struct rpcr_chunk_keys *);
}

/** Local key of @p m's data. */
static inline uint32_t
rpcr_chunk_lkey(const struct rte_mbuf *m)
{
	return rpcr_chunk_keys(m)->lkey;
}

/**
 * Take one more reference to every segment of chain @p m, so that it survives one
 * rte_pktmbuf_free() more: the way two owners (the transport and the application) share a chain.
 * (rte_mbuf_refcnt_update() on the head alone does not protect the other segments: freeing a chain
 * walks all of them.)
 */
static inline void
rpcr_chunk_hold(struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		rte_mbuf_refcnt_update(m, 1);
}

/** Pool parameters. */
struct rpcr_chunk_pool_conf {
	const char *name;             /**< Pool name (unique). */
	struct rpcr_mem_arena *arena; /**< Where the pool lives. */
	struct rpcr_rdev_pd *pd;      /**< Where its memory is registered. */
	uint32_t n;                   /**< Buffers. */
	uint32_t cache_size;          /**< Per-lcore cache (rte_mempool). */
	uint16_t data_size;           /**< Data bytes per buffer, after the headroom. */
	uint16_t headroom;            /**< Bytes reserved in front of the data. */
	uint32_t access;              /**< Registration access (default LOCAL_WRITE). */
};

/**
 * Create a pool in an arena and register its memory.
 *
 * @return the pool, or NULL with rte_errno (EINVAL, ENOMEM, the device's error).
 */
struct rpcr_chunk_pool *rpcr_chunk_pool_create(const struct rpcr_chunk_pool_conf *conf);

/**
 * Bytes of its arena a pool of this configuration takes (the mempool's header, per-lcore
 * caches and ring, and its buffers, as rte_mempool lays them out), rounded up to the arena's
 * page size for each block it allocates (the system's base page size where @c arena is NULL: an
 * arena not made yet). 0 for a bad configuration.
 */
size_t rpcr_chunk_pool_mem_size(const struct rpcr_chunk_pool_conf *conf);

/** Deregister and free a pool; every buffer must be back. @return 0 or -EBUSY. */
int rpcr_chunk_pool_free(struct rpcr_chunk_pool *p);

/** The rte_mempool behind a pool. */
struct rte_mempool *rpcr_chunk_pool_mempool(const struct rpcr_chunk_pool *p);

/** The pool's headroom. */
uint16_t rpcr_chunk_pool_headroom(const struct rpcr_chunk_pool *p);

/** Allocate one buffer, empty, with the pool's headroom in front. NULL when exhausted. */
struct rte_mbuf *rpcr_chunk_alloc(struct rpcr_chunk_pool *p);

/**
 * Allocate a chain with room for @p len bytes of data and data_len/pkt_len set to them (an
 * RDMA Read target, say). NULL when the pool runs out (nothing is leaked).
 */
struct rte_mbuf *rpcr_chunk_alloc_chain(struct rpcr_chunk_pool *p, uint32_t len);

/** Called when the last mbuf referring to attached application memory is freed. */
typedef void (*rpcr_chunk_free_cb_t)(void *addr, void *opaque);

/**
 * Wrap [@p addr, @p addr + @p len) of application memory, registered as @p reg (which must
 * cover it and stay held until @p free_cb runs), in a chain of external-buffer mbufs taken from
 * @p p. No data is copied. On failure nothing refers to the memory and @p free_cb is not called.
 * @p free_cb may be NULL (then nothing tells when the last mbuf went: keep the memory and @p reg
 * until every holder, the engine included, has freed the chain). For memory a call offers as a
 * chunk, register @p reg with rpcr_xprt_poller_mem_access()'s access (lib/xprt).
 *
 * @return the chain, or NULL with rte_errno (EINVAL, E2BIG: more than 65535 pieces of 32 KiB,
 *         ENOMEM).
 */
struct rte_mbuf *rpcr_chunk_attach(struct rpcr_chunk_pool *p, const struct rpcr_mem_reg *reg,
				   void *addr, uint32_t len, rpcr_chunk_free_cb_t free_cb,
				   void *opaque);

/**
 * Describe @p len bytes of chain @p m from byte @p off as the wire's RDMA segments (remote key,
 * length, address), merging contiguous neighbours under the same key.
 *
 * @return the number of segments, or -EINVAL (range outside the chain), -EACCES (memory the
 *         peer may not reach: no remote key), -E2BIG (more than @p max segments).
 */
int rpcr_chunk_to_segs(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		       struct rpcr_proto_seg *segs, uint32_t max);

/**
 * Describe @p len bytes of chain @p m from byte @p off as local gather/scatter entries,
 * merging contiguous neighbours under the same key.
 *
 * @return the number of entries, or -EINVAL, -E2BIG.
 */
int rpcr_chunk_to_sges(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		       struct rpcr_rdev_sge *sges, uint32_t max);

/** Work requests and gather entries produced by rpcr_chunk_rdma_plan(). */
struct rpcr_chunk_plan {
	struct rpcr_rdev_send_wr *wrs; /**< Work requests (caller's array). */
	uint32_t max_wrs;              /**< Its capacity. */
	uint32_t nwrs;                 /**< Filled. */
	struct rpcr_rdev_sge *sges;    /**< Gather/scatter entries the WRs point into. */
	uint32_t max_sges;             /**< Its capacity. */
	uint32_t nsges;                /**< Filled. */
	uint32_t max_wr_sge;           /**< Entries one WR may have (device limit). */
};

/**
 * Plan the RDMA Reads (@p opcode RPCR_RDEV_WR_READ: peer segments into the chain) or Writes
 * (RPCR_RDEV_WR_WRITE: chain into peer segments) that move @p len bytes between chain @p m
 * from byte @p off and the peer's segments @p segs, in order. A segment that spans several
 * mbufs becomes one WR with several entries, split when it needs more than max_wr_sge. The WRs
 * are unsignalled with wr_id 0: the caller sets those on the last one.
 *
 * @return 0, or -EINVAL (ranges too short), -E2BIG (plan arrays too small).
 */
int rpcr_chunk_rdma_plan(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			 const struct rpcr_proto_seg *segs, uint32_t nsegs, uint8_t opcode,
			 struct rpcr_chunk_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_CHUNK_H */
