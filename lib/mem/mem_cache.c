/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The registration cache: page-granular keys in an rte_hash, an LRU list of entries nobody holds,
 * bounded by entry count and registered bytes, with explicit invalidation.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>

#include "rpcr_mem.h"

struct cache_key {
	uint64_t first_page; /* address / page size */
	uint64_t npages;
	uint32_t access;
	uint32_t zero; /* keys are compared bytewise */
};

struct cache_entry {
	struct rpcr_mem_reg reg; /* first: the public handle */
	struct cache_key key;
	TAILQ_ENTRY(cache_entry) lru;
	bool cached; /* in the hash */
};

struct rpcr_mem_cache {
	struct rpcr_rdev_pd *pd;
	struct rte_hash *hash;
	TAILQ_HEAD(cache_lru, cache_entry) lru; /* unheld cached entries, most recent first */
	size_t page;
	struct rpcr_mem_cache_conf conf;
	struct rpcr_mem_cache_stats stats;
};

struct rpcr_mem_cache *
rpcr_mem_cache_create(struct rpcr_rdev_pd *pd, const struct rpcr_mem_cache_conf *conf)
{
	static unsigned int seq;
	struct rpcr_mem_cache *c;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.key_len = sizeof(struct cache_key),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};

	if (pd == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->pd = pd;
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->conf.max_entries = conf != NULL && conf->max_entries != 0 ? conf->max_entries : 1024;
	c->conf.max_bytes = conf != NULL && conf->max_bytes != 0 ? conf->max_bytes : 1ull << 30;
	TAILQ_INIT(&c->lru);
	snprintf(name, sizeof(name), "rpcr_mrc_%u_%d",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED), (int)getpid());
	hp.name = name;
	hp.entries = c->conf.max_entries < 8 ? 8 : c->conf.max_entries;
	c->hash = rte_hash_create(&hp);
	if (c->hash == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static void
entry_release(struct rpcr_mem_cache *c, struct cache_entry *e)
{
	rpcr_rdev_mr_dereg(e->reg.mr);
	c->stats.entries--;
	c->stats.bytes -= e->reg.len;
	free(e);
}

static void
entry_uncache(struct rpcr_mem_cache *c, struct cache_entry *e)
{
	rte_hash_del_key(c->hash, &e->key);
	e->cached = false;
	if (e->reg.refcnt == 0) {
		TAILQ_REMOVE(&c->lru, e, lru);
		entry_release(c, e);
	}
}

int
rpcr_mem_cache_free(struct rpcr_mem_cache *c)
{
	struct cache_entry *e;
	const void *key;
	void *data;
	uint32_t it = 0;

	if (c == NULL)
		return -EINVAL;
	while (rte_hash_iterate(c->hash, &key, &data, &it) >= 0)
		if (((struct cache_entry *)data)->reg.refcnt != 0)
			return -EBUSY;
	if (c->stats.entries != (uint32_t)rte_hash_count(c->hash))
		return -EBUSY; /* held uncached registrations */
	while ((e = TAILQ_FIRST(&c->lru)) != NULL)
		entry_uncache(c, e);
	rte_hash_free(c->hash);
	free(c);
	return 0;
}

struct rpcr_mem_reg *
rpcr_mem_reg(struct rpcr_mem_cache *c, const void *addr, size_t len, uint32_t access)
{
	uintptr_t a = (uintptr_t)addr;
	struct cache_key key = {0};
	struct cache_entry *e;
	struct rpcr_rdev_mr *mr;
	size_t bytes;

	if (c == NULL || addr == NULL || len == 0 || a + len < a) {
		rte_errno = EINVAL;
		return NULL;
	}
	key.first_page = a / c->page;
	key.npages = (a + len + c->page - 1) / c->page - key.first_page;
	key.access = access;
	if (rte_hash_lookup_data(c->hash, &key, (void **)&e) >= 0) {
		if (e->reg.refcnt++ == 0)
			TAILQ_REMOVE(&c->lru, e, lru);
		c->stats.hits++;
		return &e->reg;
	}

	c->stats.misses++;
	bytes = key.npages * c->page;
	/* Make room by dropping what nobody holds, oldest first. */
	while ((c->stats.entries + 1 > c->conf.max_entries ||
		c->stats.bytes + bytes > c->conf.max_bytes) &&
	       (e = TAILQ_LAST(&c->lru, cache_lru)) != NULL) {
		entry_uncache(c, e);
		c->stats.evictions++;
	}
	mr = rpcr_rdev_mr_reg(c->pd, (void *)(key.first_page * c->page), bytes, access);
	if (mr == NULL)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		rpcr_rdev_mr_dereg(mr);
		rte_errno = ENOMEM;
		return NULL;
	}
	e->reg.mr = mr;
	e->reg.addr = (uint8_t *)(key.first_page * c->page);
	e->reg.len = bytes;
	e->reg.access = access;
	e->reg.refcnt = 1;
	e->key = key;
	c->stats.entries++;
	c->stats.bytes += bytes;
	/* Within bounds it is cached; over them (everything held) it lives only while held. */
	if (c->stats.entries <= c->conf.max_entries && c->stats.bytes <= c->conf.max_bytes &&
	    rte_hash_add_key_data(c->hash, &key, e) == 0)
		e->cached = true;
	else
		c->stats.uncached++;
	return &e->reg;
}

void
rpcr_mem_unreg(struct rpcr_mem_cache *c, struct rpcr_mem_reg *r)
{
	struct cache_entry *e = (struct cache_entry *)r;

	if (c == NULL || r == NULL || r->refcnt == 0)
		return;
	if (--e->reg.refcnt != 0)
		return;
	if (e->cached)
		TAILQ_INSERT_HEAD(&c->lru, e, lru);
	else
		entry_release(c, e);
}

int
rpcr_mem_cache_invalidate(struct rpcr_mem_cache *c, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	struct cache_entry **victims;
	const void *key;
	void *data;
	uint32_t it = 0, n = 0, i;

	if (c == NULL || len == 0)
		return 0;
	victims = malloc(sizeof(*victims) * (rte_hash_count(c->hash) + 1));
	if (victims == NULL)
		return -ENOMEM;
	/* Collect first: the hash must not change while it is iterated. */
	while (rte_hash_iterate(c->hash, &key, &data, &it) >= 0) {
		struct cache_entry *e = data;
		uintptr_t s = (uintptr_t)e->reg.addr;

		if (s < b && a < s + e->reg.len)
			victims[n++] = e;
	}
	for (i = 0; i < n; i++)
		entry_uncache(c, victims[i]);
	c->stats.invalidations += n;
	free(victims);
	return (int)n;
}

void
rpcr_mem_cache_stats_get(const struct rpcr_mem_cache *c, struct rpcr_mem_cache_stats *s)
{
	*s = c->stats;
}
