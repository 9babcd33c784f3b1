/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Embedding, as an application does it (issue 21): one poller hosts a server and a client of
 * that server together, over shm in one process; it runs on a worker lcore as launched, with no
 * wrapper (rpcr_xprt_poller_launch(p, lcore)), while the main lcore calls
 * through the poller's ring: NULL, ECHO of 100 bytes inline, and of 500 000 bytes and 1 MiB in
 * a read and a write chunk (rpcr_bulk_alloc(): pool buffers, then a registered arena block; the
 * result compared and walked piece by piece); and a program described once for both sides (a
 * client created from the server's table, its codecs used on both sides; unsound tables and
 * double descriptions refused at creation). Then the documented teardown: stop the poller, destroy the client,
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
#include <rte_errno.h>
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

/*
 * A program described once for both sides (rpcr_svc_proc's codecs): ADD(a, b) -> a + b, and
 * SUM(opaque data<>, DDP-eligible) -> the sum of its bytes. The server registers the table and
 * the client is created from it; the handlers read and write with the table's codecs.
 */
#define CALC_PROG 0x2f5a00c0u
#define CALC_VERS 1u
#define CALC_ADD  1u
#define CALC_SUM  7u

struct add_args {
	uint32_t a, b;
};

static int
add_args_enc(struct rpcr_msg *m, const void *v)
{
	const struct add_args *a = v;

	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->a) | rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->b);
}

static int
add_args_dec(struct rpcr_msg *m, void *v)
{
	struct add_args *a = v;

	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), &a->a) | rpcr_xdr_dec_u32(rpcr_msg_dec(m), &a->b);
}

static int
u32_enc(struct rpcr_msg *m, const void *v)
{
	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), *(const uint32_t *)v);
}

static int
u32_dec(struct rpcr_msg *m, void *v)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), v);
}

static int
bulk_enc(struct rpcr_msg *m, const void *v)
{
	return rpcr_msg_put_bulk(m, v);
}

static int
bulk_dec(struct rpcr_msg *m, void *v)
{
	return rpcr_msg_get_bulk(m, 1u << 20, v);
}

static enum rpcr_svc_verdict
calc_add(struct rpcr_svc_req *r)
{
	struct add_args a;
	uint32_t sum;

	if (rpcr_svc_req_get_args(r, &a) != 0)
		return RPCR_SVC_ERROR;
	sum = a.a + a.b;
	return rpcr_svc_req_put_res(r, &sum) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static enum rpcr_svc_verdict
calc_sum(struct rpcr_svc_req *r)
{
	struct rpcr_bulk_iter it;
	struct rpcr_bulk b;
	const uint8_t *piece;
	uint32_t n, i, sum = 0;

	if (rpcr_svc_req_get_args(r, &b) != 0)
		return RPCR_SVC_ERROR;
	rpcr_bulk_iter_init(&it, &b);
	while (rpcr_bulk_iter_next(&it, &piece, &n))
		for (i = 0; i < n; i++)
			sum += piece[i];
	return rpcr_svc_req_put_res(r, &sum) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static const struct rpcr_svc_proc calc_procs[] = {
	{.proc = CALC_ADD,
	 .handler = calc_add,
	 .encode_args = add_args_enc,
	 .decode_args = add_args_dec,
	 .encode_res = u32_enc,
	 .decode_res = u32_dec},
	{.proc = CALC_SUM,
	 .handler = calc_sum,
	 .ulb = {.args_bulk = 1},
	 .encode_args = bulk_enc,
	 .decode_args = bulk_dec,
	 .encode_res = u32_enc,
	 .decode_res = u32_dec},
};

static const struct rpcr_svc_prog calc_prog = {
	.prog = CALC_PROG, .vers = CALC_VERS, .procs = calc_procs, .nprocs = RTE_DIM(calc_procs)};

/* A client made from a table that is not sound, or alongside a second description, is refused
 * at creation (EINVAL), and so is such a table on a server. */
static void
program_checks(struct rpcr_xprt_poller *p, struct rpcr_svc *s, const char *addr)
{
	struct rpcr_svc_proc bad[2] = {calc_procs[0], calc_procs[1]};
	const struct rpcr_svc_prog badp = {.prog = CALC_PROG + 1, .procs = bad, .nprocs = 2};
	struct rpcr_clnt_conf cc = {.addr = addr, .program = &calc_prog};

	cc.ulb = rpcr_testprog_ulb; /* two descriptions */
	cc.nulb = 4;
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
	cc.ulb = NULL;
	cc.nulb = 0;
	cc.prog = CALC_PROG + 1; /* not the table's program */
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
	cc.prog = CALC_PROG;
	cc.vers = CALC_VERS + 1;
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
	cc.vers = 0;
	cc.program = &badp;
	bad[1].proc = bad[0].proc; /* a procedure twice */
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
	CHECK_EQ(rpcr_svc_register(s, &badp), -EINVAL);
	CHECK(rpcr_svc_create(p, &(struct rpcr_svc_conf){.addr = "embed-bad", .program = &badp}) ==
		      NULL &&
	      rte_errno == EINVAL);
	bad[1].proc = CALC_SUM;
	bad[1].ulb.args_bulk = RPCR_ULB_MAX_BULK + 1; /* more items than a message carries */
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
	CHECK_EQ(rpcr_svc_register(s, &badp), -EINVAL);
	bad[1].ulb.args_bulk = 1;
	bad[1].proc = RPCR_CLNT_MAX_PROC; /* a client indexes its procedures */
	CHECK(rpcr_clnt_create(p, &cc) == NULL && rte_errno == EINVAL);
}

static int
one_word(struct rpcr_msg *m, const void *args)
{
	(void)args;
	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), 1);
}

/* Calls through the one description: the table's codecs on both sides. */
static void
program_calls(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl)
{
	static const uint32_t lens[] = {100, 1u << 20};
	struct add_args a = {40, 2};
	struct rpcr_call call;
	uint32_t res = 0, i, k, sum;

	memset(&call, 0, sizeof(call));
	call.proc = CALC_ADD;
	call.args = &a;
	call.res = &res;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(res, 42);
	call.res = NULL; /* no place for the results: the table's decoder is not called */
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	call.args = NULL; /* no arguments: none are sent, and the server's codec says so */
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_GARBAGE_ARGS);
	for (k = 0; k < RTE_DIM(lens); k++) {
		struct rte_mbuf *m = rpcr_bulk_alloc(p, lens[k]);
		struct rpcr_bulk b = {m, 0, lens[k]};
		uint8_t block[256];

		CHECK(m != NULL);
		if (m == NULL)
			continue;
		for (i = 0; i < sizeof(block); i++)
			block[i] = (uint8_t)(i * 13 + k);
		for (i = 0, sum = 0; i < lens[k]; i++)
			sum += block[i % sizeof(block)];
		for (i = 0; i < lens[k]; i += sizeof(block))
			CHECK_EQ(rpcr_bulk_write(&b, i, block, sizeof(block)),
				 RTE_MIN(lens[k] - i, (uint32_t)sizeof(block)));
		CHECK_EQ(rpcr_bulk_write(&b, lens[k], block, 1), 0);
		memset(&call, 0, sizeof(call));
		call.proc = CALC_SUM;
		call.args = &b;
		call.res = &res;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
		CHECK_EQ(res, sum);
		rte_pktmbuf_free(m);
	}
	/* The server's copy of the table, indexed by number: its holes and beyond, unavailable. */
	memset(&call, 0, sizeof(call));
	call.proc = 3;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROC_UNAVAIL);
	call.proc = CALC_SUM + 1;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROC_UNAVAIL);
	/* Arguments that do not decode: GARBAGE_ARGS, from the server's codec. */
	memset(&call, 0, sizeof(call));
	call.proc = CALC_ADD;
	call.encode = one_word;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_GARBAGE_ARGS);
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
	struct rpcr_clnt *cl = NULL, *calc = NULL;
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
	if (p != NULL) {
		/* A poller with an arena of its own: as large as said, its extra left free. */
		struct rpcr_rdev *dev2 = rpcr_rdev_open("shm");
		struct rpcr_xprt_poller_conf pc2 = {
			.name = "own", .dev = dev2, .arena_extra = 4u << 20};
		struct rpcr_xprt_poller *p2 = dev2 != NULL ? rpcr_xprt_poller_create(&pc2) : NULL;

		CHECK(p2 != NULL);
		if (p2 != NULL) {
			struct rpcr_mem_arena *own = rpcr_xprt_poller_arena(p2);

			CHECK(own != NULL && own != arena);
			CHECK(rpcr_mem_arena_len(own) >= rpcr_xprt_poller_mem_size(&pc2));
			CHECK(rpcr_mem_arena_free_bytes(own) >= pc2.arena_extra);
			printf("embed: a poller's own arena: %zu KiB, %zu KiB of it free\n",
			       rpcr_mem_arena_len(own) >> 10, rpcr_mem_arena_free_bytes(own) >> 10);
			CHECK_EQ(rpcr_xprt_poller_destroy(p2), 0);
		}
		if (dev2 != NULL)
			CHECK_EQ(rpcr_rdev_close(dev2), 0);
		s = rpcr_svc_create(p, &(struct rpcr_svc_conf){.addr = addr});
	}
	if (s != NULL && rpcr_testprog_register(s, 0) == 0)
		cl = rpcr_clnt_create(p, &(struct rpcr_clnt_conf){.addr = addr,
								  .prog = RPCR_TESTPROG,
								  .vers = RPCR_TESTPROG_VERS,
								  .ulb = rpcr_testprog_ulb,
								  .nulb = 4});
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;
	/* One description for both sides: the same table for the server and a second client. */
	CHECK_EQ(rpcr_svc_register(s, &calc_prog), 0);
	program_checks(p, s, addr);
	calc = rpcr_clnt_create(p, &(struct rpcr_clnt_conf){.addr = addr, .program = &calc_prog});
	CHECK(calc != NULL);
	if (calc == NULL)
		goto out;

	/* The poller on the worker, as launched; the calls from here, through its ring. */
	CHECK_EQ(rpcr_xprt_poller_launch(p, worker), 0);
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_NULL;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	echo(p, cl, 100);
	echo(p, cl, 500000);
	echo(p, cl, 1u << 20);
	program_calls(p, calc);
	rpcr_xprt_poller_stop(p);
	CHECK_EQ(rte_eal_wait_lcore(worker), 0);

	/* Teardown: the clients, then the server once it has seen the close. */
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	cl = NULL;
	CHECK_EQ(rpcr_clnt_destroy(calc), 0);
	calc = NULL;
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
	if (calc != NULL)
		rpcr_clnt_destroy(calc);
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
