/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Embedding, as an application does it (issue 21): one poller hosts a server and a client of
 * that server together, over shm in one process; it runs on a worker lcore as launched, with no
 * wrapper (rpcr_xprt_poller_launch(p, lcore)), while the main lcore calls
 * through the poller's ring: NULL, ECHO of 100 bytes inline, and of 500 000 bytes and 1 MiB in
 * a read and a write chunk (rpcr_bulk_alloc(): pool buffers, then a registered arena block; the
 * result compared and walked piece by piece). Then the documented teardown: stop the poller, destroy the client,
 * launch the poller again so that the server sees the client's close, stop it, destroy the
 * server and the poller. The server's side of that close is logged as a close ("closing"),
 * never as a completion error (WR_FLUSH_ERR), and nothing is left behind. And the arena the
 * poller takes is what rpcr_xprt_poller_mem_size() says it takes (at most an eighth more).
 *
 * usage: test_embed   (needs two lcores: it runs with -l 0,1)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include <rpcr_mem.h>
#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "rpcr_test.h"

static int
enc_bulk(struct rpcr_msg *m, const void *args)
{
	return rpcr_testprog_enc_data(m, args);
}

/* The result, checked while its view is valid (inside the completion). */
struct echo_res {
	const uint8_t *expect;
	uint32_t len;
	int cmp;
	uint32_t pieces, bytes;
};

static int
dec_bulk(struct rpcr_msg *m, void *res)
{
	struct echo_res *r = res;
	struct rpcr_bulk_iter it;
	const uint8_t *piece;
	struct rpcr_bulk b;
	uint32_t n;
	int rc = rpcr_msg_get_bulk(m, r->len, &b);

	if (rc != 0)
		return rc;
	r->cmp = rpcr_bulk_cmp(&b, r->expect, r->len);
	rpcr_bulk_iter_init(&it, &b);
	while (rpcr_bulk_iter_next(&it, &piece, &n)) {
		r->pieces++;
		r->bytes += n;
	}
	return 0;
}

/* ECHO @len bytes from a chain of the poller's bulk pool; the result into another. */
static void
echo(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl, uint32_t len)
{
	struct rte_mbuf *a = rpcr_bulk_alloc(p, len), *r = rpcr_bulk_alloc(p, len), *s;
	uint8_t *expect = malloc(len);
	struct echo_res out = {.expect = expect, .len = len, .cmp = -2};
	struct rpcr_bulk arg, dst;
	struct rpcr_call call;
	uint32_t i = 0, off;

	CHECK(a != NULL && r != NULL && expect != NULL);
	if (a == NULL || r == NULL || expect == NULL)
		goto out;
	for (i = 0; i < len; i++)
		expect[i] = (uint8_t)(i * 7 + len);
	for (i = 0, s = a; s != NULL; s = s->next)
		for (off = 0; off < s->data_len; off++, i++)
			rte_pktmbuf_mtod(s, uint8_t *)[off] = expect[i];
	arg = (struct rpcr_bulk){a, 0, len};
	dst = (struct rpcr_bulk){r, 0, len};
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_ECHO;
	call.encode = enc_bulk;
	call.args = &arg;
	call.decode = dec_bulk;
	call.res = &out;
	call.res_bulk = &dst;
	call.nres_bulk = 1;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(out.cmp, 0);
	CHECK_EQ(out.bytes, len);
	/* Up to 960 KiB the chain is of 60 KiB pool buffers (a piece each); beyond, one registered
	 * block of the arena (attached in 32 KiB mbufs). */
	CHECK(out.pieces >= 1);
	CHECK(len < 65536 || len > 983040 || out.pieces == (len + 61439) / 61440);
	/* The comparison sees a difference, and a length that differs. */
	arg.len = len - 1;
	CHECK(rpcr_bulk_cmp(&arg, expect, len) < 0);
	arg.len = len;
	expect[len / 2] ^= 1;
	CHECK(rpcr_bulk_cmp(&arg, expect, len) != 0);
out:
	free(expect);
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(r);
}

int
main(void)
{
	static char a0[] = "test_embed", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l",
		    a4[] = "0,1", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
	struct rpcr_xprt_poller *p = NULL;
	struct rpcr_mem_arena *arena = NULL;
	struct rpcr_rdev *dev = NULL;
	struct rpcr_svc *s = NULL;
	struct rpcr_clnt *cl = NULL;
	struct rpcr_call call;
	char addr[64], *log = NULL;
	unsigned int worker, i;
	size_t loglen = 0;
	FILE *logf;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 || rte_lcore_count() < 2) {
		fprintf(stderr, "test_embed: EAL with two lcores\n");
		return 1;
	}
	/* The engine's log, INFO and up, into memory (what a clean close says). */
	logf = open_memstream(&log, &loglen);
	rte_openlog_stream(logf);
	rte_log_set_global_level(RTE_LOG_INFO);
	rte_log_set_level_pattern("rpcr.xprt", RTE_LOG_INFO);
	worker = rte_get_next_lcore(-1, 1, 0);
	snprintf(addr, sizeof(addr), "embed-%d", (int)getpid());

	arena = rpcr_mem_arena_create("embed", 96u << 20, RPCR_MEM_ARENA_F_NO_HUGE);
	dev = arena != NULL ? rpcr_rdev_open("shm") : NULL;
	if (dev != NULL) {
		/* What the poller takes of the arena: said before, measured after. */
		struct rpcr_xprt_poller_conf pc = {
			.name = "embed", .dev = dev, .arena = arena, .bufs = 1024, .bulk_bufs = 96};
		size_t need = rpcr_xprt_poller_mem_size(&pc), free0, used;

		free0 = rpcr_mem_arena_free_bytes(arena);
		p = rpcr_xprt_poller_create(&pc);
		used = free0 - rpcr_mem_arena_free_bytes(arena);
		printf("embed: the poller took %zu KiB of the arena, rpcr_xprt_poller_mem_size() "
		       "said "
		       "%zu KiB\n",
		       used >> 10, need >> 10);
		CHECK(need >= used);
		CHECK(need <= used + used / 8 + 4 * rpcr_mem_arena_page_size(arena));
	}
	if (p != NULL)
		s = rpcr_svc_create(p, &(struct rpcr_svc_conf){.addr = addr});
	if (s != NULL && rpcr_testprog_register(s, 0) == 0)
		cl = rpcr_clnt_create(p, &(struct rpcr_clnt_conf){.addr = addr,
								  .prog = RPCR_TESTPROG,
								  .vers = RPCR_TESTPROG_VERS,
								  .ulb = rpcr_testprog_ulb,
								  .nulb = 4});
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;

	/* The poller on the worker, as launched; the calls from here, through its ring. */
	CHECK_EQ(rpcr_xprt_poller_launch(p, worker), 0);
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_NULL;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	echo(p, cl, 100);
	echo(p, cl, 500000);
	echo(p, cl, 1u << 20);
	rpcr_xprt_poller_stop(p);
	CHECK_EQ(rte_eal_wait_lcore(worker), 0);

	/* Teardown: the client, then the server once it has seen the close. */
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	cl = NULL;
	/* (Run the poller in turns until the server has said so, 10 s at most.) */
	for (i = 0; i < 1000; i++) {
		CHECK_EQ(rpcr_xprt_poller_launch(p, worker), 0);
		usleep(10 * 1000);
		rpcr_xprt_poller_stop(p);
		CHECK_EQ(rte_eal_wait_lcore(worker), 0);
		fflush(logf);
		if (log != NULL && strstr(log, "(server) closing") != NULL)
			break;
	}
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	s = NULL;
	CHECK_EQ(rpcr_xprt_poller_destroy(p), 0);
	p = NULL;
	/* The log, read once nothing writes it any more. */
	rte_openlog_stream(stderr);
	fclose(logf);
	logf = NULL;
	CHECK(log != NULL && strstr(log, "(server) closing") != NULL);
	CHECK(log != NULL && strstr(log, "WR_FLUSH_ERR") == NULL);
out:
	if (cl != NULL)
		rpcr_clnt_destroy(cl);
	if (s != NULL)
		rpcr_svc_destroy(s);
	if (p != NULL)
		rpcr_xprt_poller_destroy(p);
	if (dev != NULL)
		CHECK_EQ(rpcr_rdev_close(dev), 0);
	if (arena != NULL)
		CHECK_EQ(rpcr_mem_arena_free(arena), 0);
	if (logf != NULL) {
		rte_openlog_stream(stderr);
		fclose(logf);
	}
	if ((rpcr_test_failed != 0 || getenv("EMBED_LOG") != NULL) && log != NULL)
		fprintf(stderr, "engine log:\n%s", log);
	free(log);
	printf("embed: %s\n", rpcr_test_failed == 0 ? "ok" : "FAILED");
	return rpcr_test_failed == 0 ? 0 : 1;
}
