/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_MEM_H
#define RPCR_MEM_H

/**
 * @file
 * Registered memory for the data path.
 *
 * **Arenas** are large blocks of file-backed memory: hugepages through libhugetlbfs when the
 * system has them reserved, else ordinary shared memory (a warning is logged). Each arena is a
 * DPDK external malloc heap, so rte_malloc_socket(), rte_mempool_create() and
 * rte_pktmbuf_pool_create() can allocate from it by its socket id, and each is a shareable
 * region of lib/rdev, so that drivers that move data between processes (shm) can reach it.
 * Arenas need the EAL to be initialised.
 *
 * The **registration cache** turns "register this range" into a lookup when the same pages were
 * registered before: registrations are page-granular and keyed by (first page, page count,
 * access); unused entries are kept up to a bound (entries and bytes) and evicted least recently
 * used first; rpcr_mem_cache_invalidate() drops every entry overlapping memory the application
 * freed or remapped. A cache belongs to one thread (an lcore), like everything on the fast path.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpcr_rdev.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpcr_mem_arena;
struct rpcr_mem_cache;

/** @name Arena flags. @{ */
#define RPCR_MEM_ARENA_F_NO_HUGE 0x1u /**< Ordinary shared memory even if hugepages exist. */
/** @} */

/**
 * Create an arena of at least @p len bytes (rounded up to its page size).
 *
 * @return the arena, or NULL with rte_errno: EINVAL, EEXIST (name taken), ENOMEM, ENOSPC (too
 *         many regions), or the error of the EAL's heap functions.
 */
struct rpcr_mem_arena *rpcr_mem_arena_create(const char *name, size_t len, unsigned int flags);

/** Free an arena. @return 0, or -EBUSY while allocations from it remain. */
int rpcr_mem_arena_free(struct rpcr_mem_arena *a);

/** Socket id of the arena's heap, for rte_malloc_socket(), rte_mempool_create() and friends. */
int rpcr_mem_arena_socket(const struct rpcr_mem_arena *a);

/** Allocate from the arena (rte_free() releases). @return NULL when out of room. */
void *rpcr_mem_arena_alloc(struct rpcr_mem_arena *a, size_t len, size_t align);

/** First byte of the arena. */
void *rpcr_mem_arena_base(const struct rpcr_mem_arena *a);

/** Length of the arena. */
size_t rpcr_mem_arena_len(const struct rpcr_mem_arena *a);

/** Page size backing the arena (2 MiB with hugepages, 4 KiB without). */
size_t rpcr_mem_arena_page_size(const struct rpcr_mem_arena *a);

/** The arena is backed by hugepages. */
bool rpcr_mem_arena_hugepage(const struct rpcr_mem_arena *a);

/** Bytes of the arena's heap not allocated now (the largest block may be smaller). */
size_t rpcr_mem_arena_free_bytes(const struct rpcr_mem_arena *a);

/** A cached registration; its keys stay valid while it is held. */
struct rpcr_mem_reg {
	struct rpcr_rdev_mr *mr; /**< The device registration. */
	uint8_t *addr;           /**< First registered byte (page aligned). */
	size_t len;              /**< Registered bytes (whole pages). */
	uint32_t access;         /**< RPCR_RDEV_ACCESS_* flags. */
	uint32_t refcnt;         /**< Holders; 0 = cached, unused. */
};

/** Local key of a registration. */
static inline uint32_t
rpcr_mem_reg_lkey(const struct rpcr_mem_reg *r)
{
	return r->mr->lkey;
}

/** Remote key of a registration. */
static inline uint32_t
rpcr_mem_reg_rkey(const struct rpcr_mem_reg *r)
{
	return r->mr->rkey;
}

/** Cache bounds. */
struct rpcr_mem_cache_conf {
	uint32_t max_entries; /**< Registrations kept, held or not (0: 1024). */
	uint64_t max_bytes;   /**< Bytes registered, held or not (0: 1 GiB). */
};

/** Cache counters. */
struct rpcr_mem_cache_stats {
	uint64_t hits;          /**< rpcr_mem_reg() answered from the cache. */
	uint64_t misses;        /**< rpcr_mem_reg() registered with the device. */
	uint64_t evictions;     /**< Unused entries deregistered to stay within bounds. */
	uint64_t invalidations; /**< Entries dropped by rpcr_mem_cache_invalidate(). */
	uint64_t uncached;      /**< Registrations made over the bounds, not cached. */
	uint32_t entries;       /**< Entries now. */
	uint64_t bytes;         /**< Bytes registered now. */
};

/** Create a cache registering in @p pd. @return NULL with rte_errno. */
struct rpcr_mem_cache *rpcr_mem_cache_create(struct rpcr_rdev_pd *pd,
					     const struct rpcr_mem_cache_conf *conf);

/** Deregister everything and free the cache. @return 0 or -EBUSY (registrations held). */
int rpcr_mem_cache_free(struct rpcr_mem_cache *c);

/**
 * Get a registration covering [@p addr, @p addr + @p len) with @p access, registering the
 * pages that contain it on a miss. Release it with rpcr_mem_unreg().
 *
 * @return the registration, or NULL with rte_errno (the device's error).
 */
struct rpcr_mem_reg *rpcr_mem_reg(struct rpcr_mem_cache *c, const void *addr, size_t len,
				  uint32_t access);

/** Release a registration; it stays cached while within bounds. */
void rpcr_mem_unreg(struct rpcr_mem_cache *c, struct rpcr_mem_reg *r);

/**
 * Forget every registration overlapping [@p addr, @p addr + @p len): the application is about
 * to free or remap that memory. Entries in use are deregistered when released.
 *
 * @return the number of entries dropped.
 */
int rpcr_mem_cache_invalidate(struct rpcr_mem_cache *c, const void *addr, size_t len);

/** Read the cache's counters. */
void rpcr_mem_cache_stats_get(const struct rpcr_mem_cache *c, struct rpcr_mem_cache_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_MEM_H */
