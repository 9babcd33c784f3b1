/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* lib/mem: arenas (hugepage and fallback backing, heaps, regions) and the registration cache. */

#include <stdlib.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include <rpcr_mem.h>

#include "eal_test.h"
#include "rpcr_test.h"

static struct rpcr_rdev *dev;
static struct rpcr_rdev_pd *pd;

static long
meminfo(const char *key)
{
	char line[128], k[64];
	long v = -1, x;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%63[^:]: %ld", k, &x) == 2 && strcmp(k, key) == 0)
			v = x;
	if (f != NULL)
		fclose(f);
	return v;
}

static void
test_arena_basic(void)
{
	struct rpcr_mem_arena *a = rpcr_mem_arena_create("t-basic", 5u << 20, 0);
	struct rpcr_rdev_region r;
	struct rte_mempool *mp;
	void *x;

	CHECK(a != NULL);
	if (a == NULL)
		return;
	CHECK_EQ(rpcr_mem_arena_len(a) % rpcr_mem_arena_page_size(a), 0);
	CHECK(rpcr_mem_arena_len(a) >= 5u << 20);
	CHECK_EQ((uintptr_t)rpcr_mem_arena_base(a) % rpcr_mem_arena_page_size(a), 0);
	if (meminfo("HugePages_Free") >= 4)
		CHECK(rpcr_mem_arena_hugepage(a));
	printf("  arena: %zu bytes, %zu-byte pages, hugepages %s\n", rpcr_mem_arena_len(a),
	       rpcr_mem_arena_page_size(a), rpcr_mem_arena_hugepage(a) ? "yes" : "no");

	/* A shareable region, so that the shm driver can register inside it. */
	CHECK_EQ(rpcr_rdev_region_find(rpcr_mem_arena_base(a), rpcr_mem_arena_len(a), &r), 0);
	CHECK(r.base == rpcr_mem_arena_base(a));
	CHECK(r.fd >= 0);
	CHECK_EQ(r.hugepage, rpcr_mem_arena_hugepage(a));

	/* rte_malloc and rte_mempool allocate from it by socket id. */
	x = rpcr_mem_arena_alloc(a, 100000, 64);
	CHECK(x != NULL);
	CHECK((uint8_t *)x >= (uint8_t *)rpcr_mem_arena_base(a) &&
	      (uint8_t *)x + 100000 <= (uint8_t *)rpcr_mem_arena_base(a) + rpcr_mem_arena_len(a));
	mp = rte_mempool_create("t-mp", 255, 512, 0, 0, NULL, NULL, NULL, NULL,
				rpcr_mem_arena_socket(a), 0);
	CHECK(mp != NULL);
	/* Busy while allocations remain. */
	CHECK_EQ(rpcr_mem_arena_free(a), -EBUSY);
	rte_free(x);
	rte_mempool_free(mp);
	CHECK_EQ(rpcr_mem_arena_free(a), 0);
	CHECK_EQ(rpcr_rdev_region_find(r.base, 1, &r), -ENOENT);
}

static void
test_arena_fallback(void)
{
	long free_pages = meminfo("HugePages_Free"), size_kb = meminfo("Hugepagesize");
	struct rpcr_mem_arena *a;
	size_t want;

	/* Asked for ordinary memory: small pages. */
	a = rpcr_mem_arena_create("t-small", 1u << 20, RPCR_MEM_ARENA_F_NO_HUGE);
	CHECK(a != NULL);
	if (a != NULL) {
		CHECK(!rpcr_mem_arena_hugepage(a));
		CHECK_EQ(rpcr_mem_arena_page_size(a), (size_t)sysconf(_SC_PAGESIZE));
		CHECK_EQ(rpcr_mem_arena_free(a), 0);
	}
	/* More than the hugepages left: falls back (with a warning) instead of failing. */
	if (free_pages < 0 || size_kb <= 0)
		return;
	want = ((size_t)free_pages + 2) * (size_t)size_kb * 1024;
	a = rpcr_mem_arena_create("t-toobig", want, 0);
	CHECK(a != NULL);
	if (a != NULL) {
		CHECK(!rpcr_mem_arena_hugepage(a));
		CHECK(rpcr_mem_arena_len(a) >= want);
		CHECK_EQ(rpcr_mem_arena_free(a), 0);
	}
	/* Bad arguments. */
	CHECK(rpcr_mem_arena_create(NULL, 1, 0) == NULL);
	CHECK(rpcr_mem_arena_create("x", 0, 0) == NULL);
	CHECK(rpcr_mem_arena_create("x", 1, 0x80) == NULL);
	CHECK(rpcr_mem_arena_create("a-name-far-too-long-for-a-dpdk-heap", 1, 0) == NULL);
}

/* Memory outside any shareable region cannot be registered with shm. */
static void
test_shm_needs_regions(void)
{
	static uint8_t plain[8192];

	CHECK(rpcr_rdev_mr_reg(pd, plain, sizeof(plain), RPCR_RDEV_ACCESS_LOCAL_WRITE) == NULL);
	CHECK_EQ(rte_errno, EINVAL);
}

static void
test_cache(void)
{
	struct rpcr_mem_arena *a = rpcr_mem_arena_create("t-cache", 8u << 20, 0);
	struct rpcr_mem_cache_conf conf = {.max_entries = 4, .max_bytes = 1u << 20};
	struct rpcr_mem_cache_stats st;
	struct rpcr_mem_cache *c;
	struct rpcr_mem_reg *r1, *r2, *r3, *held[6];
	uint8_t *base;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int i;

	CHECK(a != NULL);
	if (a == NULL)
		return;
	base = rpcr_mem_arena_base(a);
	c = rpcr_mem_cache_create(pd, &conf);
	CHECK(c != NULL);

	/* The same range twice: one registration. */
	r1 = rpcr_mem_reg(c, base + 100, 5000, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	CHECK(r1 != NULL);
	CHECK(r1->addr == base);   /* page-granular */
	CHECK_EQ(r1->len, 2 * pg); /* bytes 100..5099 touch two pages */
	CHECK(rpcr_mem_reg_lkey(r1) != 0);
	r2 = rpcr_mem_reg(c, base + 100, 5000, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	CHECK(r2 == r1);
	CHECK_EQ(r1->refcnt, 2);
	/* Other bytes of the same pages: the same registration too. */
	r3 = rpcr_mem_reg(c, base + 7, 2 * pg - 7, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	CHECK(r3 == r1);
	/* Other access: another registration. */
	r3 = rpcr_mem_reg(c, base + 100, 5000,
			  RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_READ);
	CHECK(r3 != NULL && r3 != r1);
	CHECK(rpcr_mem_reg_rkey(r3) != rpcr_mem_reg_rkey(r1));
	rpcr_mem_cache_stats_get(c, &st);
	CHECK_EQ(st.hits, 2);
	CHECK_EQ(st.misses, 2);
	CHECK_EQ(st.entries, 2);
	rpcr_mem_unreg(c, r1);
	rpcr_mem_unreg(c, r1);
	rpcr_mem_unreg(c, r1);
	rpcr_mem_unreg(c, r3);

	/* Bounded: unused entries are evicted, least recently used first. */
	for (i = 0; i < 6; i++) {
		held[i] = rpcr_mem_reg(c, base + (size_t)(10 + i) * pg, 64,
				       RPCR_RDEV_ACCESS_LOCAL_WRITE);
		CHECK(held[i] != NULL);
		rpcr_mem_unreg(c, held[i]);
	}
	rpcr_mem_cache_stats_get(c, &st);
	CHECK_EQ(st.entries, 4);
	CHECK_EQ(st.evictions, 4);
	/* The most recent is still there (a hit), the oldest is not (a miss). */
	CHECK(rpcr_mem_reg(c, base + 15 * pg, 64, RPCR_RDEV_ACCESS_LOCAL_WRITE) == held[5]);
	rpcr_mem_unreg(c, held[5]);

	/* Byte bound: a registration bigger than the bound lives only while held. */
	r1 = rpcr_mem_reg(c, base + (2u << 20), 2u << 20, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	CHECK(r1 != NULL);
	rpcr_mem_cache_stats_get(c, &st);
	CHECK_EQ(st.uncached, 1);
	rpcr_mem_unreg(c, r1);
	rpcr_mem_cache_stats_get(c, &st);
	CHECK(st.bytes <= conf.max_bytes);

	/* Invalidation: overlapping entries go; one in use goes when released. */
	r1 = rpcr_mem_reg(c, base + 20 * pg, pg, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	r2 = rpcr_mem_reg(c, base + 21 * pg, pg, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	rpcr_mem_unreg(c, r2);
	CHECK_EQ(rpcr_mem_cache_invalidate(c, base + 20 * pg + 10, pg), 2);
	CHECK_EQ(rpcr_mem_cache_free(c), -EBUSY); /* r1 is still held */
	r3 = rpcr_mem_reg(c, base + 20 * pg, pg, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	CHECK(r3 != r1); /* a fresh registration, not the invalidated one */
	rpcr_mem_unreg(c, r3);
	rpcr_mem_unreg(c, r1);
	rpcr_mem_cache_stats_get(c, &st);
	CHECK_EQ(st.invalidations, 2);

	CHECK_EQ(rpcr_mem_cache_free(c), 0);
	CHECK_EQ(rpcr_mem_arena_free(a), 0);
}

static const struct rpcr_test_case cases[] = {
	{"arena_basic", test_arena_basic},
	{"arena_fallback", test_arena_fallback},
	{"shm_needs_regions", test_shm_needs_regions},
	{"cache", test_cache},
};

int
main(int argc, char **argv)
{
	int rc;

	if (rpcr_test_eal_init() != 0)
		return 1;
	dev = rpcr_rdev_open("shm");
	pd = dev != NULL ? rpcr_rdev_pd_alloc(dev) : NULL;
	if (pd == NULL) {
		fprintf(stderr, "cannot open the shm device\n");
		return 1;
	}
	rc = rpcr_test_main(argc, argv, cases, RTE_DIM(cases));
	rpcr_rdev_pd_free(pd);
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return rc;
}
