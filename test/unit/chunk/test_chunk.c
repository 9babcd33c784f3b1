/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* lib/chunk: pools in arenas, keys per mbuf, chains, attached application memory, conversions
 * to wire segments and local entries, and the RDMA planner. */

#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>

#include "eal_test.h"
#include "rpcr_test.h"

static struct rpcr_rdev *dev;
static struct rpcr_rdev_pd *pd;
static struct rpcr_mem_arena *arena;

static struct rpcr_chunk_pool *
make_pool(const char *name, uint16_t data, uint16_t headroom, uint32_t n)
{
	struct rpcr_chunk_pool_conf conf = {
		.name = name,
		.arena = arena,
		.pd = pd,
		.n = n,
		.cache_size = 0,
		.data_size = data,
		.headroom = headroom,
	};

	return rpcr_chunk_pool_create(&conf);
}

static void
test_pool(void)
{
	struct rpcr_chunk_pool *p = make_pool("t-pool", 4096, 256, 64);
	struct rte_mbuf *m, *ms[64];
	int i, n;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	m = rpcr_chunk_alloc(p);
	CHECK(m != NULL);
	CHECK_EQ(m->data_off, 256);
	CHECK_EQ(rte_pktmbuf_tailroom(m), 4096);
	CHECK(rpcr_chunk_lkey(m) != 0);
	CHECK_EQ(rpcr_chunk_keys(m)->rkey, 0); /* local use only by default */
	/* The buffer lies inside the arena (one registration covers the pool). */
	CHECK((uint8_t *)m->buf_addr >= (uint8_t *)rpcr_mem_arena_base(arena));
	/* Pool buffers are not for the peer: no wire segments. */
	m->data_len = m->pkt_len = 10;
	{
		struct rpcr_proto_seg s;

		CHECK_EQ(rpcr_chunk_to_segs(m, 0, 10, &s, 1), -EACCES);
	}
	CHECK_EQ(rpcr_chunk_pool_free(p), -EBUSY);
	rte_pktmbuf_free(m);
	/* Exhaustion: exactly n buffers. */
	for (n = 0; n < 64 && (ms[n] = rpcr_chunk_alloc(p)) != NULL; n++)
		;
	CHECK_EQ(n, 64);
	CHECK(rpcr_chunk_alloc(p) == NULL);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(ms[i]);
	CHECK_EQ(rpcr_chunk_pool_free(p), 0);
}

static void
test_chain_sges(void)
{
	struct rpcr_chunk_pool *p = make_pool("t-chain", 1000, 64, 256);
	struct rpcr_rdev_sge sg[64];
	struct rte_mbuf *m, *x;
	uint64_t sum = 0;
	int n, i;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	m = rpcr_chunk_alloc_chain(p, 10500);
	CHECK(m != NULL);
	CHECK_EQ(m->nb_segs, 11);
	CHECK_EQ(m->pkt_len, 10500);
	CHECK_EQ(rte_pktmbuf_lastseg(m)->data_len, 500);
	n = rpcr_chunk_to_sges(m, 0, 10500, sg, 64);
	CHECK(n >= 1 && n <= 11);
	for (i = 0; i < n; i++) {
		sum += sg[i].length;
		CHECK_EQ(sg[i].lkey, rpcr_chunk_lkey(m));
	}
	CHECK_EQ(sum, 10500);
	CHECK_EQ(sg[0].addr, rte_pktmbuf_mtod(m, uintptr_t));
	/* A window in the middle: starts 1500 bytes in, inside the second buffer. */
	n = rpcr_chunk_to_sges(m, 1500, 3000, sg, 64);
	CHECK(n >= 1);
	CHECK_EQ(sg[0].addr, rte_pktmbuf_mtod_offset(m->next, uintptr_t, 500));
	for (sum = 0, i = 0; i < n; i++)
		sum += sg[i].length;
	CHECK_EQ(sum, 3000);
	CHECK_EQ(rpcr_chunk_to_sges(m, 10000, 501, sg, 64), -EINVAL);
	CHECK_EQ(rpcr_chunk_to_sges(m, 0, 10500, sg, 0), -E2BIG);
	/* Exhaustion in the middle of a chain leaks nothing. */
	x = rpcr_chunk_alloc_chain(p, 1000u * 300);
	CHECK(x == NULL);
	rte_pktmbuf_free(m);
	CHECK_EQ(rpcr_chunk_pool_free(p), 0);
}

static int freed;
static void *freed_addr;

static void
on_free(void *addr, void *opaque)
{
	freed++;
	freed_addr = addr;
	CHECK(opaque == &freed);
}

static void
test_attach(void)
{
	struct rpcr_chunk_pool *p = make_pool("t-att", 512, 0, 64);
	struct rpcr_mem_cache *c = rpcr_mem_cache_create(pd, NULL);
	const uint32_t len = 200000;
	uint8_t *app = rpcr_mem_arena_alloc(arena, len + 4096, 4096);
	struct rpcr_mem_reg *r;
	struct rpcr_proto_seg segs[8];
	struct rte_mbuf *m;
	int n;

	CHECK(p != NULL && c != NULL && app != NULL);
	if (p == NULL || c == NULL || app == NULL)
		return;
	r = rpcr_mem_reg(c, app, len + 4096,
			 RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE |
				 RPCR_RDEV_ACCESS_REMOTE_READ);
	CHECK(r != NULL);
	m = rpcr_chunk_attach(p, r, app + 100, len, on_free, &freed);
	CHECK(m != NULL);
	if (m == NULL)
		return;
	CHECK_EQ(m->pkt_len, len);
	CHECK_EQ(m->nb_segs, (len + 32767) / 32768);
	CHECK(rte_pktmbuf_mtod(m, uint8_t *) == app + 100); /* zero copy */
	CHECK(RTE_MBUF_HAS_EXTBUF(m));
	/* Contiguous pieces under one key: one wire segment. */
	n = rpcr_chunk_to_segs(m, 0, len, segs, 8);
	CHECK_EQ(n, 1);
	CHECK_EQ(segs[0].handle, rpcr_mem_reg_rkey(r));
	CHECK_EQ(segs[0].length, len);
	CHECK(segs[0].offset == (uintptr_t)(app + 100));
	n = rpcr_chunk_to_segs(m, 40000, 1000, segs, 8);
	CHECK_EQ(n, 1);
	CHECK(segs[0].offset == (uintptr_t)(app + 100 + 40000));
	/* Outside the registration: refused. */
	CHECK(rpcr_chunk_attach(p, r, app + len, 8192, NULL, NULL) == NULL);

	/* Freed only when both sides are done. */
	rpcr_chunk_hold(m);
	rte_pktmbuf_free(m);
	CHECK_EQ(freed, 0);
	CHECK_EQ(m->pkt_len, len); /* still whole */
	rte_pktmbuf_free(m);
	CHECK_EQ(freed, 1);
	CHECK(freed_addr == app + 100);
	/* The pool's mbufs are back, with their own keys again. */
	m = rpcr_chunk_alloc(p);
	CHECK(m != NULL && !RTE_MBUF_HAS_EXTBUF(m));
	CHECK_EQ(rpcr_chunk_keys(m)->rkey, 0);
	rte_pktmbuf_free(m);

	rpcr_mem_unreg(c, r);
	CHECK_EQ(rpcr_mem_cache_free(c), 0);
	rte_free(app);
	CHECK_EQ(rpcr_chunk_pool_free(p), 0);
}

static void
test_rdma_plan(void)
{
	struct rpcr_chunk_pool *p = make_pool("t-plan", 1000, 0, 16);
	struct rpcr_rdev_send_wr wrs[8];
	struct rpcr_rdev_sge sges[16];
	struct rpcr_chunk_plan plan = {
		.wrs = wrs, .max_wrs = 8, .sges = sges, .max_sges = 16, .max_wr_sge = 4};
	/* Two peer segments, 1200 + 1300 bytes, against buffers of 1000, 1000, 500. */
	struct rpcr_proto_seg segs[2] = {{0x11, 1200, 0x100000}, {0x22, 1300, 0x900000}};
	struct rte_mbuf *m;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	m = rpcr_chunk_alloc_chain(p, 2500);
	CHECK(m != NULL);
	if (m == NULL)
		return;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 0, 2500, segs, 2, RPCR_RDEV_WR_READ, &plan), 0);
	CHECK_EQ(plan.nwrs, 2);
	CHECK_EQ(wrs[0].opcode, RPCR_RDEV_WR_READ);
	CHECK_EQ(wrs[0].rkey, 0x11);
	CHECK(wrs[0].remote_addr == 0x100000);
	CHECK_EQ(wrs[0].num_sge, 2);
	CHECK_EQ(wrs[0].sg_list[0].length, 1000);
	CHECK_EQ(wrs[0].sg_list[1].length, 200);
	CHECK_EQ(wrs[0].sg_list[1].addr, rte_pktmbuf_mtod(m->next, uintptr_t));
	CHECK_EQ(wrs[1].rkey, 0x22);
	CHECK_EQ(wrs[1].num_sge, 2);
	CHECK_EQ(wrs[1].sg_list[0].length, 800);
	CHECK_EQ(wrs[1].sg_list[0].addr, rte_pktmbuf_mtod_offset(m->next, uintptr_t, 200));
	CHECK_EQ(wrs[1].sg_list[1].length, 500);

	/* One entry per WR: a segment spanning buffers splits, the remote address follows. */
	plan.max_wr_sge = 1;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 0, 2500, segs, 2, RPCR_RDEV_WR_WRITE, &plan), 0);
	CHECK_EQ(plan.nwrs, 4);
	CHECK(wrs[1].remote_addr == 0x100000 + 1000);
	CHECK(wrs[3].remote_addr == 0x900000 + 800);
	CHECK_EQ(wrs[3].opcode, RPCR_RDEV_WR_WRITE);

	/* Less data than the segments offer: only what there is (a partially filled chunk). */
	plan.max_wr_sge = 4;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 100, 1500, segs, 2, RPCR_RDEV_WR_WRITE, &plan), 0);
	CHECK_EQ(plan.nwrs, 2);
	CHECK_EQ(wrs[1].sg_list[0].length, 300);
	/* Segments too short, plan arrays too small, bad opcode. */
	segs[1].length = 100;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 0, 2500, segs, 2, RPCR_RDEV_WR_READ, &plan), -EINVAL);
	segs[1].length = 1300;
	plan.max_wrs = 1;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 0, 2500, segs, 2, RPCR_RDEV_WR_READ, &plan), -E2BIG);
	plan.max_wrs = 8;
	CHECK_EQ(rpcr_chunk_rdma_plan(m, 0, 2500, segs, 2, RPCR_RDEV_WR_SEND, &plan), -EINVAL);
	rte_pktmbuf_free(m);
	CHECK_EQ(rpcr_chunk_pool_free(p), 0);
}

static const struct rpcr_test_case cases[] = {
	{"pool", test_pool},
	{"chain_sges", test_chain_sges},
	{"attach", test_attach},
	{"rdma_plan", test_rdma_plan},
};

int
main(int argc, char **argv)
{
	int rc;

	if (rpcr_test_eal_init() != 0)
		return 1;
	dev = rpcr_rdev_open("shm");
	pd = dev != NULL ? rpcr_rdev_pd_alloc(dev) : NULL;
	arena = rpcr_mem_arena_create("t-chunk", 32u << 20, 0);
	if (pd == NULL || arena == NULL) {
		fprintf(stderr, "set-up failed\n");
		return 1;
	}
	rc = rpcr_test_main(argc, argv, cases, RTE_DIM(cases));
	CHECK_EQ(rpcr_mem_arena_free(arena), 0);
	rpcr_rdev_pd_free(pd);
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return rc;
}
