/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The engine end to end: an rpcr server (test/xprt/xprt_common.c) and rpcr clients in two
 * processes over a device (shm by default), every chunk combination with the data checked,
 * credits, errors from the wire, connection loss, and both threading modes.
 */

#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_xchar.h>

#include "raw_peer.h"
#include "rpcr_test.h"
#include "xprt_test.h"

static struct player P;
static struct rpcr_rdev *cdev;
static struct rpcr_xprt_poller *cp;
static struct rpcr_mem_cache *mc;
static char saddr[128];

/* Server configuration (CMD_START). */
struct srv_cfg {
	uint64_t credits, inline_send, inline_recv, remote_inv, no_draft, decoupled, threshold,
		msgp_thresh, versions;
};

static const struct srv_cfg srv_default = {64, 4096, 4096, 1, 0, 0, 1024, 0, 0};

static void
server_start(const struct srv_cfg *c)
{
	uint64_t v[9] = {c->credits,   c->inline_send, c->inline_recv, c->remote_inv, c->no_draft,
			 c->decoupled, c->threshold,   c->msgp_thresh, c->versions};
	struct ctl_msg m;

	ctl_send(&P, CMD_START, 9, v);
	ctl_recv(&P, CMD_ACK, &m);
}

static void
server_stats(uint64_t *v)
{
	struct ctl_msg m;

	ctl_send(&P, CMD_STATS, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	memcpy(v, m.v, 8 * sizeof(v[0]));
}

static void
server_cmd(uint32_t cmd, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};
	struct ctl_msg m;

	ctl_send(&P, cmd, 2, v);
	ctl_recv(&P, CMD_ACK, &m);
}

static bool cl_no_draft; /* the next client_new() refuses the 2005 draft */
static uint32_t cl_bc;   /* the next client_new() serves its server's calls with these credits */
static uint32_t cl_msgp; /* the next client_new() pads from this size */
static bool cl_no_pdata; /* the next client_new() sends no private data (so no R bit) */
static uint32_t cl_vers; /* the next client_new() speaks these RPC-over-RDMA versions */
static uint32_t cl_cont_max; /* ... with this rpcr_clnt_conf::cont_max */
static bool cl_xchar;        /* ... sending its INIT_XCHAR */
static uint32_t cl_brs;      /* ... saying this BRS (rpcr_clnt_conf::bc_brs) */

static struct rpcr_clnt *
client_new(uint32_t prog, uint32_t credits, uint32_t inline_size, uint32_t threshold)
{
	static struct rpcr_ulb ulb[8];
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt *cl;
	uint64_t deadline = now_ns() + 5000000000ull;
	uint32_t i;

	memset(ulb, 0, sizeof(ulb));
	if (prog == XT_PROG) {
		ulb[XT_MIX] = (struct rpcr_ulb){.args_bulk = 1, .res_bulk = 1};
		ulb[XT_MULTI] = (struct rpcr_ulb){.args_bulk = 3, .res_bulk = 3};
	} else {
		for (i = 0; i < 4; i++)
			ulb[i] = rpcr_testprog_ulb[i];
	}
	for (i = 0; i < RTE_DIM(ulb); i++)
		ulb[i].threshold = threshold;
	memset(&cc, 0, sizeof(cc));
	cc.addr = saddr;
	cc.prog = prog;
	cc.vers = prog == XT_PROG ? XT_VERS : RPCR_TESTPROG_VERS;
	cc.credits = credits;
	cc.inline_send = inline_size;
	cc.inline_recv = inline_size;
	cc.remote_inv = true;
	cc.ulb = ulb;
	cc.nulb = RTE_DIM(ulb);
	cc.timeout_us = 10000000;
	cc.no_draft = cl_no_draft;
	cc.msgp_thresh = cl_msgp;
	cc.bc_credits = cl_bc;
	cc.no_pdata = cl_no_pdata;
	cc.versions = cl_vers;
	cc.cont_max = cl_cont_max;
	cc.xchar = cl_xchar;
	cc.bc_brs = cl_brs;
	cl = rpcr_clnt_create(cp, &cc);
	if (cl == NULL)
		return NULL;
	while (!rpcr_clnt_connected(cl) && now_ns() < deadline)
		rpcr_xprt_poll(cp);
	if (!rpcr_clnt_connected(cl)) {
		fprintf(stderr, "client: not connected to %s\n", saddr);
		rpcr_clnt_destroy(cl);
		return NULL;
	}
	return cl;
}

static int callback_sync(struct rpcr_clnt *cl, uint32_t count, const void *data, uint32_t len,
			 uint32_t *verified);

/* ---- cases ---- */

static void
case_null(void)
{
	struct rpcr_clnt *cl;
	struct rpcr_call call;
	int i;

	server_start(&srv_default);
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < 100; i++) {
		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_NULL;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
		CHECK_EQ(call.accept_stat, RPCR_ONCRPC_SUCCESS);
	}
	/* The connection and its counters, as an operator sees them. */
	{
		struct rpcr_xprt_conn_info ci[2];

		memset(ci, 0, sizeof(ci));
		CHECK_EQ(rpcr_xprt_conn_list(cp, ci, 2), 1);
		CHECK(!ci[0].server);
		CHECK(strcmp(ci[0].state, "connected") == 0);
		CHECK(ci[0].msgs_sent >= 100 && ci[0].msgs_recv >= 100);
		CHECK(ci[0].bytes_sent >= 100 * 68 && ci[0].bytes_recv >= 100 * 52);
		CHECK(ci[0].credits >= 1 && ci[0].credits <= 32);
		CHECK_EQ(ci[0].in_use, 0);
		CHECK(ci[0].qp.doorbells >= 100);
		CHECK_EQ(rpcr_xprt_conn_list(cp, NULL, 0), 1);
		CHECK_EQ(rpcr_xprt_conn_list(NULL, ci, 2), -EINVAL);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* ECHO, WRITE and READ of one size: inline below the threshold, read chunk and write chunk
 * above it; @pieces > 1 makes every chunk several segments. */
static void
one_size(struct rpcr_clnt *cl, uint32_t len, uint32_t pieces, uint32_t reply_max)
{
	struct tbuf arg, res;
	struct tp_echo_res er;
	struct rpcr_bulk ab, rb;
	struct rpcr_call call;
	uint32_t n;

	CHECK_EQ(tbuf_make(cp, P.arena, mc, &arg, len, pieces), 0);
	CHECK_EQ(tbuf_make(cp, P.arena, mc, &res, len + 100, pieces), 0);
	if (arg.m == NULL || res.m == NULL)
		return;
	tbuf_fill(&arg, len);
	ab = (struct rpcr_bulk){arg.m, 0, len};
	rb = (struct rpcr_bulk){res.m, 0, len + 100};

	/* ECHO */
	tbuf_clear(&res);
	memset(&call, 0, sizeof(call));
	memset(&er, 0, sizeof(er));
	er.max = UINT32_MAX;
	call.proc = RPCR_TESTPROG_ECHO;
	call.encode = rpcr_testprog_enc_data;
	call.args = &ab;
	call.decode = tp_dec_bulk;
	call.res = &er;
	call.res_bulk = &rb;
	call.nres_bulk = 1;
	call.reply_max = reply_max;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(er.got, 0);
	if (call.status == 0 && er.got == 0) {
		if (!bulk_equals(&er.b, &ab)) {
			fprintf(stderr, "ECHO %u bytes (%u pieces) wrong\n", len, pieces);
			CHECK(false);
		}
		rte_pktmbuf_free(er.b.m);
	}

	/* WRITE */
	memset(&call, 0, sizeof(call));
	n = UINT32_MAX;
	call.proc = RPCR_TESTPROG_WRITE;
	call.encode = rpcr_testprog_enc_data;
	call.args = &ab;
	call.decode = tp_dec_u32;
	call.res = &n;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(n, len);

	/* READ */
	tbuf_clear(&res);
	memset(&call, 0, sizeof(call));
	memset(&er, 0, sizeof(er));
	er.max = UINT32_MAX;
	call.proc = RPCR_TESTPROG_READ;
	call.encode = rpcr_testprog_enc_len;
	call.args = &len;
	call.decode = tp_dec_bulk;
	call.res = &er;
	call.res_bulk = &rb;
	call.nres_bulk = 1;
	call.reply_max = reply_max;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(er.got, 0);
	if (call.status == 0 && er.got == 0) {
		CHECK_EQ(er.b.len, len);
		if (!bulk_equals_pattern(&er.b)) {
			fprintf(stderr, "READ %u bytes (%u pieces) wrong\n", len, pieces);
			CHECK(false);
		}
		rte_pktmbuf_free(er.b.m);
	}
	tbuf_free(mc, &arg);
	tbuf_free(mc, &res);
}

static void
case_sizes(void)
{
	static const uint32_t sizes[] = {
		0,    1,    3,    4,    5,     100,   1023,   1024,     1025,           2047,
		4093, 4096, 8191, 8192, 61441, 65536, 100003, 1u << 20, (1u << 20) + 1, 16u << 20};
	struct rpcr_clnt *cl;
	size_t i;

	server_start(&srv_default);
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		one_size(cl, sizes[i], 1, 0);
		if (sizes[i] >= 4096)
			one_size(cl, sizes[i], 3, 0);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* Async calls: a completion counter per call. */
struct acall {
	struct rpcr_call call;
	struct tp_echo_res er;
	struct rpcr_bulk ab, rb;
	struct tbuf arg, res;
	uint32_t n;
	int completions;
};

static void
acall_done(struct rpcr_call *call)
{
	struct acall *a = call->user;

	a->completions++;
}

/* Poll until @n completions counted in @done (or @ms pass). */
static bool
poll_until(volatile int *done, int n, int ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;

	while (*done < n && now_ns() < deadline)
		rpcr_xprt_poll(cp);
	return *done >= n;
}

static int acall_total;

/* Make @a an ECHO of @ab, its result decoded into a->er (in a->rb's chain when @with_rb),
 * completing with @done. */
static void
acall_echo(struct acall *a, struct rpcr_bulk ab, bool with_rb, void (*done)(struct rpcr_call *))
{
	a->ab = ab;
	a->er.max = UINT32_MAX;
	a->call.proc = RPCR_TESTPROG_ECHO;
	a->call.encode = rpcr_testprog_enc_data;
	a->call.args = &a->ab;
	a->call.decode = tp_dec_bulk;
	a->call.res = &a->er;
	if (with_rb) {
		a->call.res_bulk = &a->rb;
		a->call.nres_bulk = 1;
	}
	a->call.done = done;
	a->call.user = a;
}

static void
acall_done_count(struct rpcr_call *call)
{
	acall_done(call);
	acall_total++;
}

/* Replies longer than the inline size, with no write chunk offered: the reply chunk. */
static void
case_reply_chunk(void)
{
	static const uint32_t sizes[] = {100, 3000, 4000, 4096, 5000, 20000, 61000};
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl;
	uint64_t sst[8];
	int draft;
	size_t i;

	server_start(&srv_default);
	for (draft = 0; draft < 2; draft++) {
		cl_no_draft = !draft;
		cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
		cl_no_draft = false;
		CHECK(cl != NULL);
		if (cl == NULL)
			return;
		rpcr_xprt_stats_get(cp, &st0);
		for (i = 0; i < RTE_DIM(sizes); i++) {
			uint32_t len = sizes[i];
			struct tp_echo_res er = {.max = UINT32_MAX};
			struct rpcr_call call;

			memset(&call, 0, sizeof(call));
			call.proc = RPCR_TESTPROG_READ;
			call.encode = rpcr_testprog_enc_len;
			call.args = &len;
			call.decode = tp_dec_bulk;
			call.res = &er;
			call.reply_max = len + 64;
			CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
			CHECK_EQ(er.got, 0);
			if (call.status == 0 && er.got == 0) {
				CHECK_EQ(er.b.len, len);
				CHECK(bulk_equals_pattern(&er.b));
				rte_pktmbuf_free(er.b.m);
			}
			if (len <= 4096)
				continue;
			/* No reply chunk offered. RFC 8166: a long reply cannot be sent, the
			 * server says so with RDMA_ERROR (ERR_CHUNK), or SYSTEM_ERR when the
			 * results do not even fit its message buffer. The 2005 draft: the
			 * results come back in a read chunk, RDMA_DONE releases them. */
			call.reply_max = 0;
			er.got = 1;
			if (draft) {
				CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
				CHECK_EQ(er.got, 0);
				if (call.status == 0 && er.got == 0) {
					CHECK_EQ(er.b.len, len);
					CHECK(bulk_equals_pattern(&er.b));
					rte_pktmbuf_free(er.b.m);
				}
			} else if (len <= 8000) {
				CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EPROTO);
			} else {
				CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
				CHECK_EQ(call.accept_stat, RPCR_ONCRPC_SYSTEM_ERR);
			}
		}
		{
			/* One call more: its reply comes after the server took the RDMA_DONE
			 * sent before it (RC keeps the order), so the server's count below is
			 * not a race with this client's teardown. (An RDMA_DONE posted just
			 * before a client is destroyed may be flushed with the connection; the
			 * server then releases what it held at the disconnection.) */
			struct rpcr_call nc;

			memset(&nc, 0, sizeof(nc));
			nc.proc = RPCR_TESTPROG_NULL;
			CHECK_EQ(rpcr_clnt_call_sync(cl, &nc), 0);
		}
		rpcr_xprt_stats_get(cp, &st1);
		if (draft) {
			/* 3000 and 4000 (their reply fits the inline size: no reply chunk is
			 * offered) and the three with reply_max 0. */
			CHECK_EQ(st1.reply_reads - st0.reply_reads, 5);
			CHECK_EQ(st1.dones_sent - st0.dones_sent, 5);
		} else {
			CHECK_EQ(st1.reply_reads, st0.reply_reads);
			CHECK_EQ(st1.rdma_errors_recv - st0.rdma_errors_recv, 1);
		}
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	}
	/* The server saw every RDMA_DONE, and released everything on its own. */
	server_stats(sst);
	CHECK_EQ(sst[6], 5);
	CHECK_EQ(sst[7], 0);
}

/* Calls longer than the inline size with nothing DDP-eligible: the position-zero read chunk;
 * past the message buffer, the item goes in a read chunk anyway. Replies come back in reply
 * chunks. Also: the inline size is the smaller of the two sides'. */
static void
case_long_call(void)
{
	static const uint32_t sizes[] = {500, 1000, 1100, 3000, 7000, 8100, 20000, 60000};
	struct srv_cfg small = srv_default;
	struct rpcr_clnt *cl;
	int round;
	size_t i;

	for (round = 0; round < 2; round++) {
		struct rpcr_clnt *c2;

		if (round == 0) {
			server_start(&srv_default);
			cl = client_new(RPCR_TESTPROG, 32, 1024, UINT32_MAX);
		} else {
			/* The server's 1024 limits a client that offers 4096. */
			small.inline_send = small.inline_recv = 1024;
			server_start(&small);
			cl = client_new(RPCR_TESTPROG, 32, 4096, UINT32_MAX);
		}
		CHECK(cl != NULL);
		if (cl == NULL)
			return;
		for (i = 0; i < RTE_DIM(sizes); i++)
			one_size(cl, sizes[i], 1, sizes[i] + 64);
		c2 = cl;
		CHECK_EQ(rpcr_clnt_destroy(c2), 0);
	}
}

static int
mix_enc(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_bulk *b = args; /* [0] small (copied inline), [1] big (DDP) */
	uint8_t tmp[8192];
	uint32_t n = rpcr_bulk_copy(&b[0], tmp, sizeof(tmp));
	int rc = rpcr_xdr_enc_opaque(rpcr_msg_enc(m), tmp, n);

	return rc != 0 ? rc : rpcr_msg_put_bulk(m, &b[1]);
}

struct mix_res {
	uint8_t small[8192];
	uint32_t slen;
	struct rpcr_bulk big;
	int rc;
};

static int
mix_dec(struct rpcr_msg *m, void *res)
{
	struct mix_res *r = res;
	const void *p;

	r->rc = rpcr_xdr_dec_opaque(rpcr_msg_dec(m), sizeof(r->small), &p, &r->slen);
	if (r->rc != 0)
		return r->rc;
	memcpy(r->small, p, r->slen);
	r->rc = rpcr_msg_get_bulk(m, UINT32_MAX, &r->big);
	if (r->rc == 0 && r->big.m != NULL)
		rpcr_chunk_hold(r->big.m);
	return r->rc;
}

/* A long call with a DDP item (position-zero chunk plus a read chunk at its position inside
 * it), and a long reply with a DDP result (reply chunk and write chunk together). */
static void
case_mix(void)
{
	static const uint32_t smalls[] = {0, 100, 2000, 6000};
	static const uint32_t bigs[] = {0, 500, 5000, 1u << 20};
	struct rpcr_clnt *cl;
	size_t i, j;

	server_start(&srv_default);
	cl = client_new(XT_PROG, 32, 1024, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < RTE_DIM(smalls); i++) {
		for (j = 0; j < RTE_DIM(bigs); j++) {
			struct tbuf sb, bb, rb;
			struct rpcr_bulk args[2], dst;
			struct rpcr_call call;
			struct mix_res *mr = calloc(1, sizeof(*mr));
			uint8_t want[8192];

			CHECK_EQ(tbuf_make(cp, P.arena, mc, &sb, smalls[i], 1), 0);
			CHECK_EQ(tbuf_make(cp, P.arena, mc, &bb, bigs[j], 2), 0);
			CHECK_EQ(tbuf_make(cp, P.arena, mc, &rb, bigs[j] + 10, 2), 0);
			tbuf_fill(&sb, 3);
			tbuf_fill(&bb, 5);
			tbuf_clear(&rb);
			args[0] = (struct rpcr_bulk){sb.m, 0, smalls[i]};
			args[1] = (struct rpcr_bulk){bb.m, 0, bigs[j]};
			dst = (struct rpcr_bulk){rb.m, 0, bigs[j] + 10};
			memset(&call, 0, sizeof(call));
			call.proc = XT_MIX;
			call.encode = mix_enc;
			call.args = args;
			call.decode = mix_dec;
			call.res = mr;
			call.res_bulk = &dst;
			call.nres_bulk = 1;
			/* Room for the small item, and for the big one when it is too small to
			 * go in a write chunk. */
			call.reply_max = smalls[i] + 200 + (bigs[j] < 1024 ? bigs[j] : 0);
			CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
			if (call.status != 0)
				fprintf(stderr, "MIX small %u big %u: %d (accept_stat %u)\n",
					smalls[i], bigs[j], call.status, call.accept_stat);
			CHECK_EQ(mr->rc, 0);
			if (call.status == 0 && mr->rc == 0) {
				CHECK_EQ(mr->slen, smalls[i]);
				rpcr_bulk_copy(&args[0], want, sizeof(want));
				CHECK(memcmp(mr->small, want, smalls[i]) == 0);
				CHECK(bulk_equals(&mr->big, &args[1]));
				rte_pktmbuf_free(mr->big.m);
			}
			free(mr);
			tbuf_free(mc, &sb);
			tbuf_free(mc, &bb);
			tbuf_free(mc, &rb);
		}
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

static int
multi_enc(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_bulk *b = args; /* a, b, c; x = 0x1234567 */
	int rc = rpcr_msg_put_bulk(m, &b[0]);

	rc = rc != 0 ? rc : rpcr_xdr_enc_u32(rpcr_msg_enc(m), 0x1234567);
	rc = rc != 0 ? rc : rpcr_msg_put_bulk(m, &b[1]);
	return rc != 0 ? rc : rpcr_msg_put_bulk(m, &b[2]);
}

struct multi_res {
	struct rpcr_bulk c, a, b;
	uint32_t x;
	int rc;
};

static int
multi_dec(struct rpcr_msg *m, void *res)
{
	struct multi_res *r = res;

	r->rc = rpcr_msg_get_bulk(m, UINT32_MAX, &r->c);
	if (r->rc == 0)
		r->rc = rpcr_msg_get_bulk(m, UINT32_MAX, &r->a);
	if (r->rc == 0)
		r->rc = rpcr_xdr_dec_u32(rpcr_msg_dec(m), &r->x);
	if (r->rc == 0)
		r->rc = rpcr_msg_get_bulk(m, UINT32_MAX, &r->b);
	if (r->rc == 0) {
		rpcr_chunk_hold(r->a.m);
		rpcr_chunk_hold(r->b.m);
		rpcr_chunk_hold(r->c.m);
	}
	return r->rc;
}

/* Several read chunks (each several segments, positions after inline items and after other
 * chunks), several write chunks (partly or fully filled), in one call. */
static void
case_multi(void)
{
	static const uint32_t la[] = {2000, 1025, 70001, 3, 1u << 20};
	static const uint32_t lb[] = {5000, 4, 1024, 200000, 1027};
	static const uint32_t lc[] = {1024, 33333, 10, 1024, 2u << 20};
	struct rpcr_clnt *cl;
	size_t i;

	server_start(&srv_default);
	cl = client_new(XT_PROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < RTE_DIM(la); i++) {
		struct tbuf t[3], d[3];
		uint32_t len[3] = {la[i], lb[i], lc[i]}, k;
		struct rpcr_bulk args[3], dst[3];
		struct multi_res mr;
		struct rpcr_call call;

		for (k = 0; k < 3; k++) {
			CHECK_EQ(tbuf_make(cp, P.arena, mc, &t[k], len[k], 1 + (i + k) % 4), 0);
			tbuf_fill(&t[k], (uint32_t)(10 * i + k));
			args[k] = (struct rpcr_bulk){t[k].m, 0, len[k]};
		}
		/* Results in the order c, a, b; destinations larger than needed (partly filled)
		 * or exactly the size (full). */
		CHECK_EQ(tbuf_make(cp, P.arena, mc, &d[0], len[2] + (i % 2) * 999, 2), 0);
		CHECK_EQ(tbuf_make(cp, P.arena, mc, &d[1], len[0], 3), 0);
		CHECK_EQ(tbuf_make(cp, P.arena, mc, &d[2], len[1] + 4096, 1), 0);
		for (k = 0; k < 3; k++) {
			tbuf_clear(&d[k]);
			dst[k] = (struct rpcr_bulk){d[k].m, 0, d[k].len};
		}
		memset(&call, 0, sizeof(call));
		memset(&mr, 0, sizeof(mr));
		call.proc = XT_MULTI;
		call.encode = multi_enc;
		call.args = args;
		call.decode = multi_dec;
		call.res = &mr;
		call.res_bulk = dst;
		call.nres_bulk = 3;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
		if (call.status != 0)
			fprintf(stderr, "MULTI %u %u %u: %d (accept_stat %u)\n", la[i], lb[i],
				lc[i], call.status, call.accept_stat);
		CHECK_EQ(mr.rc, 0);
		if (call.status == 0 && mr.rc == 0) {
			CHECK_EQ(mr.x, 0x1234567);
			CHECK(bulk_equals(&mr.a, &args[0]));
			CHECK(bulk_equals(&mr.b, &args[1]));
			CHECK(bulk_equals(&mr.c, &args[2]));
			rte_pktmbuf_free(mr.a.m);
			rte_pktmbuf_free(mr.b.m);
			rte_pktmbuf_free(mr.c.m);
		}
		for (k = 0; k < 3; k++) {
			tbuf_free(mc, &t[k]);
			tbuf_free(mc, &d[k]);
		}
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* Credits: the server grants 1, then 128; the client never has more calls out than granted
 * (the server holds every HOLD call until it has as many as it expects, and counts). */
static void
hold_round(uint32_t server_credits, uint32_t client_credits, uint32_t ncalls, uint32_t expect)
{
	struct srv_cfg cfg = srv_default;
	struct rpcr_clnt *cl;
	struct acall *a;
	uint64_t st[8];
	uint32_t i;

	cfg.credits = server_credits;
	server_start(&cfg);
	server_cmd(CMD_HOLD, expect, 0);
	cl = client_new(XT_PROG, client_credits, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	a = calloc(ncalls, sizeof(*a));
	acall_total = 0;
	for (i = 0; i < ncalls; i++) {
		a[i].call.proc = XT_HOLD;
		a[i].call.done = acall_done_count;
		a[i].call.user = &a[i];
		CHECK_EQ(rpcr_clnt_call(cl, &a[i].call), 0);
	}
	CHECK(poll_until(&acall_total, (int)ncalls, 20000));
	for (i = 0; i < ncalls; i++) {
		CHECK_EQ(a[i].completions, 1);
		CHECK_EQ(a[i].call.status, 0);
	}
	server_stats(st);
	if (st[3] != expect)
		fprintf(stderr,
			"credits %u/%u: server saw %" PRIu64 " calls at once, expected %u\n",
			server_credits, client_credits, st[3], expect);
	CHECK_EQ(st[3], expect);
	free(a);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

static void
case_credits(void)
{
	hold_round(1, 64, 20, 1);
	hold_round(128, 256, 300, 128);
	hold_round(128, 16, 50, 16);
}

static void
case_rpc_errors(void)
{
	struct rpcr_clnt *cl;
	struct rpcr_call call;
	struct rpcr_clnt_conf cc;

	server_start(&srv_default);
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	memset(&call, 0, sizeof(call));
	call.proc = 77;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROC_UNAVAIL);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	cl = client_new(0x2f5a0099, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl != NULL) {
		memset(&call, 0, sizeof(call));
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
		CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROG_UNAVAIL);
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	}
	/* Version 7 of the test program: PROG_MISMATCH. */
	memset(&cc, 0, sizeof(cc));
	cc.addr = saddr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = 7;
	cl = rpcr_clnt_create(cp, &cc);
	CHECK(cl != NULL);
	if (cl != NULL) {
		memset(&call, 0, sizeof(call));
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
		CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROG_MISMATCH);
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	}
}

static int
garbage_enc(struct rpcr_msg *m, const void *args)
{
	RTE_SET_USED(args);
	/* An opaque<> that claims 100 bytes and has none. */
	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), 100);
}

static void
case_garbage_args(void)
{
	struct rpcr_clnt *cl;
	struct rpcr_call call;

	server_start(&srv_default);
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_ECHO;
	call.encode = garbage_enc;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO);
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_GARBAGE_ARGS);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* A call that times out completes once with -ETIMEDOUT; its late reply is dropped and
 * counted; the connection goes on. */
/* A completion that resubmits a call failing at once (a reply chunk larger than the engine
 * offers) must not keep one poll going forever: every poll returns, later polls go on. */
static int storm_left;
static struct rpcr_clnt *storm_cl;

static void
storm_done(struct rpcr_call *call)
{
	CHECK_EQ(call->status, -EMSGSIZE);
	if (storm_left-- > 0)
		CHECK_EQ(rpcr_clnt_call(storm_cl, call), 0);
}

static void
case_resubmit_storm(void)
{
	struct rpcr_call call;
	uint32_t len = 1000, polls = 0;

	server_start(&srv_default);
	storm_cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(storm_cl != NULL);
	if (storm_cl == NULL)
		return;
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_READ;
	call.encode = rpcr_testprog_enc_len;
	call.args = &len;
	call.reply_max = 64u << 20;
	call.done = storm_done;
	storm_left = 100000;
	CHECK_EQ(rpcr_clnt_call(storm_cl, &call), 0);
	/* (Before the fix, the poll running the first completion ran all 100000 of them.) The
	 * first completes once the client is connected: up to 10 s on a loaded machine. */
	{
		uint64_t end = now_ns() + 10000000000ull;

		while (storm_left == 100000 && now_ns() < end)
			rpcr_xprt_poll(cp);
	}
	CHECK(storm_left < 100000);
	for (polls = 0; polls < 10; polls++)
		rpcr_xprt_poll(cp);
	CHECK(storm_left > 90000); /* ten more polls did not run them all */
	polls = 0;
	while (storm_left >= 0 && polls++ < 10000000)
		rpcr_xprt_poll(cp);
	CHECK(storm_left < 0);
	CHECK_EQ(rpcr_clnt_destroy(storm_cl), 0);
}

static void
case_timeout(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl;
	struct rpcr_call call;
	struct acall a;
	uint64_t t;

	server_start(&srv_default);
	server_cmd(CMD_HOLD, 0, 300); /* SLOW answers after 300 ms */
	cl = client_new(XT_PROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	/* A call answered first: the server's grant in (a timed-out call keeps its credit). */
	memset(&call, 0, sizeof(call));
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO); /* proc 0 of XT: no handler */
	rpcr_xprt_stats_get(cp, &st0);
	memset(&a, 0, sizeof(a));
	a.call.proc = XT_SLOW;
	a.call.timeout_us = 30000;
	a.call.done = acall_done;
	a.call.user = &a;
	t = now_ns();
	CHECK_EQ(rpcr_clnt_call(cl, &a.call), 0);
	CHECK(poll_until(&a.completions, 1, 5000));
	CHECK_EQ(a.call.status, -ETIMEDOUT);
	t = now_ns() - t;
	CHECK(t >= 29000000ull && t < 250000000ull);
	/* The late reply arrives: dropped, counted, the credit it held back. */
	t = now_ns() + 2000000000ull;
	do {
		rpcr_xprt_poll(cp);
		rpcr_xprt_stats_get(cp, &st1);
	} while (st1.late_replies == st0.late_replies && now_ns() < t);
	CHECK_EQ(st1.late_replies, st0.late_replies + 1);
	CHECK_EQ(st1.unmatched, st0.unmatched);
	CHECK_EQ(a.completions, 1);
	memset(&call, 0, sizeof(call));
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), -EREMOTEIO); /* proc 0 of XT: no handler */
	CHECK_EQ(call.accept_stat, RPCR_ONCRPC_PROC_UNAVAIL);
	server_cmd(CMD_HOLD, 0, 0);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* The server goes away while calls with read chunks are being pulled: every call is sent
 * again on the next connection (same xid), and completes exactly once, with the right data. */
static void
case_reconnect(void)
{
	enum { N = 8, LEN = 1u << 20 };
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl;
	struct acall *a;
	int i, total = 0;

	server_start(&srv_default);
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	rpcr_xprt_stats_get(cp, &st0);
	server_cmd(CMD_CRASH_ON_CALL, 0, 0);
	a = calloc(N, sizeof(*a));
	for (i = 0; i < N; i++) {
		CHECK_EQ(tbuf_make(cp, P.arena, mc, &a[i].arg, LEN, 1), 0);
		CHECK_EQ(tbuf_make(cp, P.arena, mc, &a[i].res, LEN, 1), 0);
		tbuf_fill(&a[i].arg, (uint32_t)i);
		tbuf_clear(&a[i].res);
		a[i].rb = (struct rpcr_bulk){a[i].res.m, 0, LEN};
		acall_echo(&a[i], (struct rpcr_bulk){a[i].arg.m, 0, LEN}, true, acall_done);
		CHECK_EQ(rpcr_clnt_call(cl, &a[i].call), 0);
	}
	for (;;) {
		uint64_t deadline = now_ns() + 20000000000ull;

		total = 0;
		for (i = 0; i < N; i++)
			total += a[i].completions;
		if (total >= N || now_ns() > deadline)
			break;
		rpcr_xprt_poll(cp);
	}
	rpcr_xprt_stats_get(cp, &st1);
	CHECK(st1.reconnects > st0.reconnects);
	CHECK(st1.retransmits > st0.retransmits);
	for (i = 0; i < N; i++) {
		CHECK_EQ(a[i].completions, 1);
		CHECK_EQ(a[i].call.status, 0);
		CHECK_EQ(a[i].er.got, 0);
		if (a[i].call.status == 0 && a[i].er.got == 0) {
			CHECK(bulk_equals(&a[i].er.b, &a[i].ab));
			rte_pktmbuf_free(a[i].er.b.m);
		}
	}
	/* Nothing completes twice later either. */
	for (i = 0; i < 1000; i++)
		rpcr_xprt_poll(cp);
	for (i = 0; i < N; i++) {
		CHECK_EQ(a[i].completions, 1);
		tbuf_free(mc, &a[i].arg);
		tbuf_free(mc, &a[i].res);
	}
	free(a);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* Decoupled client: an application thread submits calls through the poller's ring and takes
 * completions from its own ring, while this thread runs the poller. */
struct app {
	struct rpcr_clnt *cl;
	struct rte_ring *done;
	volatile bool finished;
	int ok, bad;
};

static void *
app_main(void *arg)
{
	struct app *ap = arg;
	enum { N = 2000 };
	struct acall *a = calloc(N, sizeof(*a));
	int i, got = 0;

	for (i = 0; i < N; i++) {
		a[i].n = (uint32_t)i;
		a[i].call.proc = RPCR_TESTPROG_WRITE;
		a[i].call.done_ring = ap->done;
		a[i].call.user = &a[i];
		a[i].call.decode = tp_dec_u32;
		a[i].call.res = &a[i].completions; /* reused: the byte count */
		a[i].call.encode = rpcr_testprog_enc_data;
		a[i].ab = (struct rpcr_bulk){NULL, 0, 0};
		a[i].call.args = &a[i].ab;
		while (rpcr_clnt_call(ap->cl, &a[i].call) == -EAGAIN)
			rte_pause();
	}
	while (got < N) {
		void *obj;

		if (rte_ring_mc_dequeue(ap->done, &obj) != 0) {
			rte_pause();
			continue;
		}
		got++;
		if (((struct rpcr_call *)obj)->status == 0)
			ap->ok++;
		else
			ap->bad++;
	}
	free(a);
	ap->finished = true;
	return NULL;
}

static void
case_decoupled_client(void)
{
	struct app ap;
	pthread_t t;
	uint64_t deadline;

	server_start(&srv_default);
	memset(&ap, 0, sizeof(ap));
	ap.cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(ap.cl != NULL);
	if (ap.cl == NULL)
		return;
	ap.done = rte_ring_create("app_done", 4096, SOCKET_ID_ANY, 0);
	CHECK(ap.done != NULL);
	pthread_create(&t, NULL, app_main, &ap);
	deadline = now_ns() + 20000000000ull;
	while (!ap.finished && now_ns() < deadline)
		rpcr_xprt_poll(cp);
	CHECK(ap.finished);
	pthread_join(t, NULL);
	CHECK_EQ(ap.ok, 2000);
	CHECK_EQ(ap.bad, 0);
	rte_ring_free(ap.done);
	CHECK_EQ(rpcr_clnt_destroy(ap.cl), 0);
}

/* Decoupled server: handlers run on a worker thread. */
static void
case_decoupled_server(void)
{
	static const uint32_t sizes[] = {0, 100, 5000, 1u << 20};
	struct srv_cfg cfg = srv_default;
	struct rpcr_clnt *cl;
	size_t i;

	cfg.decoupled = 1;
	server_start(&cfg);
	cl_bc = 4;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	cl_bc = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < RTE_DIM(sizes); i++)
		one_size(cl, sizes[i], 2, RTE_MIN(sizes[i] + 64, 60000u));
	/* CALLBACK's handler on a worker: it asks for the connection's requester through the
	 * poller's ring, and its calls back go out that way too (RFC 8167). */
	CHECK_EQ(rpcr_testprog_cb_register(cl), 0);
	for (i = 0; i < 3; i++) {
		uint8_t data[64];
		uint32_t verified;

		memset(data, (int)i + 1, sizeof(data));
		CHECK_EQ(callback_sync(cl, 10, data, sizeof(data), &verified), 0);
		CHECK_EQ(verified, 10);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/*
 * RPC-over-RDMA versions, the matrix (version 2's §4.2.3): a client of version 1 with a server of
 * versions 1 and 2; a client of versions 1 and 2 with that server (version 2 from its first
 * message on) and with a server of version 1 alone (ERR_VERS, then version 1 on the same
 * connection, never asking again); each runs NULL and every chunk kind (ECHO, WRITE, READ of
 * 100 bytes, 64 KiB and 1 MiB, the data checked), then calls and replies longer than a Send with
 * nothing DDP-eligible (version 2 continues them, version 1 uses chunks), and the server's
 * counters show what it answered.
 */
static void
versions_one(uint64_t srv_versions, uint32_t cl_versions, uint32_t want, uint32_t want_errs)
{
	static const uint32_t sizes[] = {100, 65536, 1u << 20};
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_rdev_info di;
	struct srv_cfg sc = srv_default;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	struct rpcr_call call;
	uint64_t sv[8];
	uint32_t i;

	sc.versions = srv_versions;
	server_start(&sc);
	cl_vers = cl_versions;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	cl_vers = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	for (i = 0; i < 20; i++) {
		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_NULL;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	}
	rpcr_xprt_stats_get(cp, &st0);
	for (i = 0; i < RTE_DIM(sizes); i++)
		one_size(cl, sizes[i], i == 2 ? 3 : 1, 0);
	rpcr_xprt_stats_get(cp, &st1);
	/* Remote invalidation: version 1 by RFC 8797's R bit, version 2 by the handle each call
	 * names (§6.3.1); the client offers it (remote_inv), the server sends it where it can. */
	if (rpcr_rdev_info_get(cdev, &di) == 0 && (di.caps & RPCR_RDEV_CAP_REMOTE_INV) &&
	    (di.caps & RPCR_RDEV_CAP_SEND_INV))
		CHECK(st1.remote_invalidations > st0.remote_invalidations);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.rdma_vers, want);
	CHECK(!info.negotiating);
	CHECK_EQ(info.connections, 1);
	/* Version 2: the server's transport properties arrived and apply (no segment limit,
	 * its decoder's segment count); version 1: none. */
	if (want == 2)
		CHECK(info.props.received && info.props.complete &&
		      info.props.rssiz == UINT32_MAX && info.props.rcsiz >= 16);
	else
		CHECK(!info.props.received);
	/* Continuation (version 2's §4.4.2), nothing DDP-eligible: calls and replies of 6000
	 * bytes in two Sends each, replies of 12000 in three (rpcr_clnt_conf::cont_max 16384
	 * here), 20000 through the chunks; version 1 uses the chunks throughout. */
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	cl_vers = cl_versions;
	cl_cont_max = 16384;
	cl = client_new(RPCR_TESTPROG, 32, 4096, UINT32_MAX);
	cl_cont_max = 0;
	cl_vers = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	rpcr_xprt_stats_get(cp, &st0);
	for (i = 0; i < 3; i++) {
		static const uint32_t csizes[] = {6000, 12000, 20000};

		one_size(cl, csizes[i], 1, csizes[i] + 64);
	}
	rpcr_xprt_stats_get(cp, &st1);
	printf("    continuation: %" PRIu64 " call(s) sent in %" PRIu64 " parts, %" PRIu64
	       " repl(ies) reassembled\n",
	       st1.cont_sent - st0.cont_sent, st1.cont_parts_sent - st0.cont_parts_sent,
	       st1.cont_recv - st0.cont_recv);
	if (want == 2) {
		/* ECHO and WRITE of 6000; ECHO and READ of 6000 and 12000. */
		CHECK_EQ(st1.cont_sent - st0.cont_sent, 2);
		CHECK_EQ(st1.cont_parts_sent - st0.cont_parts_sent, 4);
		CHECK_EQ(st1.cont_recv - st0.cont_recv, 4);
	} else {
		CHECK_EQ(st1.cont_sent, st0.cont_sent);
		CHECK_EQ(st1.cont_recv, st0.cont_recv);
	}
	CHECK_EQ(st1.cont_errors, st0.cont_errors);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.rdma_vers, want);
	server_stats(sv);
	printf("    server versions 0x%" PRIx64 ", client 0x%x: version %u, %u connection(s), "
	       "%" PRIu64 " transport error(s) sent\n",
	       srv_versions, cl_versions, info.rdma_vers, info.connections, sv[2]);
	/* Falling back costs one ERR_VERS a client (two here); nothing else goes wrong. */
	CHECK_EQ(sv[2], want_errs);
	CHECK_EQ(sv[3], 0);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

static void
case_versions(void)
{
	const uint64_t both = RPCR_XPRT_V1 | RPCR_XPRT_V2;

	versions_one(both, 0, 1, 0);                           /* v1 client, v1|v2 server */
	versions_one(both, RPCR_XPRT_V1 | RPCR_XPRT_V2, 2, 0); /* v2 both */
	versions_one(0, RPCR_XPRT_V1 | RPCR_XPRT_V2, 1, 2);    /* v2 clients, v1 server */
	versions_one(0, 0, 1, 0);                              /* v1 both */
}

/*
 * What a call exposes goes before it completes: remote invalidation toward a client that set R
 * (RFC 8797: the server's own R does not matter), local invalidation otherwise. On a device with
 * windows (shm), every chunk of memory registered with rpcr_xprt_poller_mem_access() is a window
 * bound for the call (none registered per call), and every window bound is invalidated, one way
 * or the other; memory registered without MW_BIND falls back to a registration per call.
 */
static void
case_remote_inv(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct srv_cfg cfg = srv_default;
	struct rpcr_rdev_info info;
	struct rpcr_clnt *cl;
	bool mw;
	int round;

	if (rpcr_rdev_info_get(cdev, &info) == 0 && !(info.caps & RPCR_RDEV_CAP_REMOTE_INV)) {
		/* The engine offers no R bit on such a device: nothing to see. */
		printf("     (remote_inv: skipped, the device has no RPCR_RDEV_CAP_REMOTE_INV)\n");
		return;
	}
	mw = (rpcr_xprt_poller_mem_access(cp) & RPCR_RDEV_ACCESS_MW_BIND) != 0;
	CHECK_EQ(mw, (info.caps & RPCR_RDEV_CAP_MW) != 0);
	for (round = 0; round < 3; round++) {
		struct rpcr_xprt_conn_info ci;

		/* 0: R from the client, none from the server; 1: no private data from the client
		 * (no R); 2: as 0, with memory that cannot take a window. */
		cfg.remote_inv = false;
		cl_no_pdata = round == 1;
		tbuf_access = round == 2 ? RPCR_RDEV_ACCESS_LOCAL_WRITE : 0;
		server_start(&cfg);
		cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
		cl_no_pdata = false;
		CHECK(cl != NULL);
		if (cl == NULL)
			break;
		rpcr_xprt_stats_get(cp, &st0);
		one_size(cl, 100000, 1, 0);
		one_size(cl, 300000, 3, 0);
		rpcr_xprt_stats_get(cp, &st1);
		if (round != 1)
			CHECK(st1.remote_invalidations > st0.remote_invalidations);
		else
			CHECK_EQ(st1.remote_invalidations, st0.remote_invalidations);
		if (mw && round != 2) {
			CHECK(st1.mw_binds > st0.mw_binds);
			CHECK_EQ(st1.reg_mrs, st0.reg_mrs);
			CHECK_EQ(st1.mw_binds - st0.mw_binds,
				 (st1.local_invalidations - st0.local_invalidations) +
					 (st1.remote_invalidations - st0.remote_invalidations));
			if (round == 1)
				CHECK(st1.local_invalidations > st0.local_invalidations);
		} else if (mw) {
			/* The application's chains fall back; the engine's own buffers (the reply
			 * chunk, a long call) still take windows. */
			CHECK(st1.reg_fallbacks > st0.reg_fallbacks);
			CHECK_EQ(st1.reg_fallbacks - st0.reg_fallbacks, st1.reg_mrs - st0.reg_mrs);
		} else {
			CHECK_EQ(st1.mw_binds, st0.mw_binds);
			CHECK(st1.reg_mrs > st0.reg_mrs);
		}
		CHECK_EQ(st1.invalidate_failures, st0.invalidate_failures);
		CHECK_EQ(rpcr_xprt_conn_list(cp, &ci, 1), 1);
		CHECK_EQ(ci.remote_inv, false); /* (both sides: the server did not set R) */
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	}
	tbuf_access = 0;
}

/* ---- a raw peer: hand-made headers to the engine's server (test/xprt/raw_peer.c) ---- */

#define RAW_SLOT 8192u

/* Malformed transport headers get the protocol's error reply, and the connection goes on. */
static void
case_wire_errors(void)
{
	uint8_t m[512], r[RAW_SLOT];
	uint64_t st[8];
	struct raw rw;
	uint32_t n;
	int got;

	server_start(&srv_default);
	CHECK_EQ(raw_open(&rw, &P, saddr, NULL), 0);
	if (rw.qp == NULL)
		return;

	/* Version 2: ERR_VERS with the range supported. */
	{
		uint32_t w[7] = {0x11111111, 2, 4, 0, 0, 0, 0};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x11111111,
				 RPCR_PROTO_V1_ERR_VERS);
	}
	/* Version 0xffffffff, whatever follows (the error carries the version it answers). */
	{
		uint32_t w[7] = {0x11111112, 0xffffffff, 4, 0, 7, 7, 7};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x11111112,
				 RPCR_PROTO_V1_ERR_VERS);
	}
	/* RFC 8166 section 4.5: shorter than 28 bytes, its xid cannot be trusted: discarded
	 * without a word (a version-2 header of 16 bytes, a version-1 one of 24). */
	{
		uint32_t w[6] = {0x11111113, 2, 4, 0, 0, 0};

		raw_expect_nothing(&rw, m, raw_put_words(m, w, 4));
		w[1] = 1;
		raw_expect_nothing(&rw, m, raw_put_words(m, w, 6));
	}
	/* Unknown message type. */
	{
		uint32_t w[7] = {0x22222222, 1, 4, 7, 0, 0, 0};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x22222222,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* RDMA_MSGP and RDMA_DONE, not negotiated (this peer sent no rpcr block). */
	{
		uint32_t w[9] = {0x33333333, 1, 4, RPCR_PROTO_V1_MSGP, 64, 1024, 0, 0, 0};
		uint32_t d[4] = {0x33333334, 1, 4, RPCR_PROTO_V1_DONE};

		raw_expect_error(&rw, m, raw_put_words(m, w, 9), 0x33333333,
				 RPCR_PROTO_V1_ERR_CHUNK);
		/* (16 bytes: shorter than any header this server takes without the draft.) */
		raw_expect_nothing(&rw, m, raw_put_words(m, d, 4));
	}
	/* RDMA_ERROR is not something a client sends: its 20-byte form is short (discarded), the
	 * 28-byte ERR_VERS form is answered ERR_CHUNK. */
	{
		uint32_t w[7] = {0x33333335, 1, 4, RPCR_PROTO_V1_ERROR, 1, 1, 1};

		raw_expect_nothing(&rw, m, raw_put_words(m, w, 5));
		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x33333335,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* Truncated: 28 bytes of a header whose read list goes on past them. */
	{
		uint32_t w[7] = {0x44444444, 1, 4, 0, 1, 4, 0x1234};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x44444444,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* A list discriminator that is not a boolean. */
	{
		uint32_t w[7] = {0x55555555, 1, 4, 0, 2, 0, 0};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x55555555,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* NOMSG with no position-zero chunk: no message anywhere. */
	{
		uint32_t w[7] = {0x66666666, 1, 4, RPCR_PROTO_V1_NOMSG, 0, 0, 0};

		raw_expect_error(&rw, m, raw_put_words(m, w, 7), 0x66666666,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* A read chunk at a position that is not a multiple of 4. */
	{
		uint32_t w[14] = {0x77777777, 1, 4, 0, 1, 6, 0x1234, 100, 0, 0x1000, 0, 0, 0, 0};

		raw_expect_error(&rw, m, raw_put_words(m, w, 13), 0x77777777,
				 RPCR_PROTO_V1_ERR_CHUNK);
	}
	/* Three bytes: not even an xid. Dropped, no reply. */
	CHECK_EQ(raw_send(&rw, "\x01\x02\x03", 3), RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(raw_recv(&rw, r, 200), -1);

	/* The connection still works: a NULL call gets its reply. */
	n = raw_null_call(m, 0x88888888, 2);
	CHECK_EQ(raw_send(&rw, m, n), RPCR_RDEV_WC_SUCCESS);
	got = raw_recv(&rw, r, 2000);
	CHECK_EQ(got, 28 + 24);
	if (got == 52) {
		CHECK_EQ(raw_w32(r, 0), 0x88888888);
		CHECK_EQ(raw_w32(r, 3), RPCR_PROTO_V1_MSG);
		CHECK_EQ(raw_w32(r, 7),
			 0x88888888); /* RPC reply: xid, REPLY, accepted, ..., SUCCESS */
		CHECK_EQ(raw_w32(r, 8), RPCR_ONCRPC_REPLY);
		CHECK_EQ(raw_w32(r, 9), RPCR_ONCRPC_MSG_ACCEPTED);
		CHECK_EQ(raw_w32(r, 12), RPCR_ONCRPC_SUCCESS);
	}
	/* RPC version 3: MSG_DENIED, RPC_MISMATCH 2..2. */
	n = raw_null_call(m, 0x99999999, 3);
	CHECK_EQ(raw_send(&rw, m, n), RPCR_RDEV_WC_SUCCESS);
	got = raw_recv(&rw, r, 2000);
	CHECK_EQ(got, 28 + 24);
	if (got == 52) {
		CHECK_EQ(raw_w32(r, 9), RPCR_ONCRPC_MSG_DENIED);
		CHECK_EQ(raw_w32(r, 10), RPCR_ONCRPC_RPC_MISMATCH);
		CHECK_EQ(raw_w32(r, 11), 2);
		CHECK_EQ(raw_w32(r, 12), 2);
	}
	/* RFC 8166 section 4.5: a transport xid unlike the RPC message's is ERR_CHUNK, on the
	 * straight-line path (a NULL call of the program called last) and on the general one (an
	 * AUTH_SYS credential). */
	n = raw_null_call(m, 0xabababab, 2);
	rpcr_xdr_store32(m + 28, 0xabab0000);
	raw_expect_error(&rw, m, n, 0xabababab, RPCR_PROTO_V1_ERR_CHUNK);
	n = raw_null_call(m, 0xacacacac, 2);
	rpcr_xdr_store32(m + 28, 0xacac0000);
	rpcr_xdr_store32(m + 52, RPCR_ONCRPC_AUTH_SYS); /* word 13: the credential's flavour */
	rpcr_xdr_store32(m + 56, 20);                   /* a body of 20 bytes */
	memset(m + 60, 0, 28);                          /* the body, then an AUTH_NONE verifier */
	raw_expect_error(&rw, m, 88, 0xacacacac, RPCR_PROTO_V1_ERR_CHUNK);
	server_stats(st);
	CHECK_EQ(st[2], 11); /* RDMA_ERRORs sent */

	/* A read chunk naming memory we never registered: the server's RDMA Read fails, and with
	 * it the connection (RC semantics); the server goes on serving others. */
	{
		uint32_t w[40];
		uint32_t k = 0;

		w[k++] = 0xaaaaaaaa;
		w[k++] = 1;
		w[k++] = 4;
		w[k++] = RPCR_PROTO_V1_MSG;
		w[k++] = 1;      /* read list: one segment */
		w[k++] = 44;     /* position: after the call header and the length word */
		w[k++] = 0xdead; /* handle */
		w[k++] = 4096;   /* length */
		w[k++] = 0;      /* offset */
		w[k++] = 0x100000;
		w[k++] = 0; /* end of read list */
		w[k++] = 0; /* write list */
		w[k++] = 0; /* reply chunk */
		w[k++] = 0xaaaaaaaa;
		w[k++] = 0;
		w[k++] = 2;
		w[k++] = RPCR_TESTPROG;
		w[k++] = 1;
		w[k++] = RPCR_TESTPROG_WRITE;
		w[k++] = 0;
		w[k++] = 0;
		w[k++] = 0;
		w[k++] = 0;
		w[k++] = 4096; /* opaque length; the data is the chunk */
		CHECK_EQ(raw_send(&rw, m, raw_put_words(m, w, k)), RPCR_RDEV_WC_SUCCESS);
		got = raw_recv(&rw, r, 2000);
		CHECK(got == -2); /* flushed: the server dropped the connection */
	}
	raw_close(&rw);
	{
		struct rpcr_clnt *cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
		struct rpcr_call call;

		CHECK(cl != NULL);
		if (cl != NULL) {
			memset(&call, 0, sizeof(call));
			CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
			CHECK_EQ(rpcr_clnt_destroy(cl), 0);
		}
	}
}

/* With the rpcr block, the draft's messages are understood: RDMA_DONE for nothing is
 * ignored (no reply), a NULL call in RDMA_MSGP works. */
static void
case_wire_draft(void)
{
	uint8_t m[512], r[RAW_SLOT];
	struct raw rw;
	int got;

	server_start(&srv_default);
	CHECK_EQ(raw_open(&rw, &P, saddr, &(struct raw_conf){.ext = true}), 0);
	if (rw.qp == NULL)
		return;
	{
		uint32_t d[4] = {0x12345678, 1, 4, RPCR_PROTO_V1_DONE};

		CHECK_EQ(raw_send(&rw, m, raw_put_words(m, d, 4)), RPCR_RDEV_WC_SUCCESS);
		CHECK_EQ(raw_recv(&rw, r, 200), -1);
	}
	{
		uint32_t w[19] = {0x23456789, 1, 4, RPCR_PROTO_V1_MSGP, 64, 1024, 0, 0, 0,
				  0x23456789, 0, 2, RPCR_TESTPROG,      1,  0,    0, 0, 0,
				  0};

		CHECK_EQ(raw_send(&rw, m, raw_put_words(m, w, 19)), RPCR_RDEV_WC_SUCCESS);
		got = raw_recv(&rw, r, 2000);
		CHECK_EQ(got, 52);
		if (got == 52) {
			CHECK_EQ(raw_w32(r, 0), 0x23456789);
			CHECK_EQ(raw_w32(r, 3), RPCR_PROTO_V1_MSG);
			CHECK_EQ(raw_w32(r, 12), RPCR_ONCRPC_SUCCESS);
		}
	}
	/* ECHO in RDMA_MSGP, padded by hand: 36-byte header, 40-byte call header, the count,
	 * then 48 zero bytes so that the data starts 128 bytes into the Send (align 64). */
	{
		uint32_t w[20] = {0x3456789a,
				  1,
				  4,
				  RPCR_PROTO_V1_MSGP,
				  64,
				  16,
				  0,
				  0,
				  0,
				  0x3456789a,
				  0,
				  2,
				  RPCR_TESTPROG,
				  1,
				  RPCR_TESTPROG_ECHO,
				  0,
				  0,
				  0,
				  0,
				  100};
		uint32_t n = raw_put_words(m, w, 20), k;

		memset(m + n, 0, 48);
		for (k = 0; k < 100; k++)
			m[n + 48 + k] = (uint8_t)(k * 3 + 1);
		CHECK_EQ(n + 48, 128u);
		CHECK_EQ(raw_send(&rw, m, n + 148), RPCR_RDEV_WC_SUCCESS);
		got = raw_recv(&rw, r, 2000);
		CHECK_EQ(got, 28 + 24 + 4 + 100);
		if (got == 156) {
			CHECK_EQ(raw_w32(r, 12), RPCR_ONCRPC_SUCCESS);
			CHECK_EQ(raw_w32(r, 13), 100);
			for (k = 0; k < 100; k++)
				if (r[56 + k] != (uint8_t)(k * 3 + 1))
					break;
			CHECK_EQ(k, 100);
		}
	}
	raw_close(&rw);
}

/* The 2005 draft between two rpcr peers: CONF_RDMA on connect, RDMA_MSGP both ways (with a
 * call that needs chunks marshalled again without padding), and nothing of it with a peer
 * that refuses the draft. */
static void
case_draft(void)
{
	struct srv_cfg cfg = srv_default;
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	uint64_t sst[8], deadline;
	int round;

	cfg.msgp_thresh = 256;
	server_start(&cfg);
	for (round = 0; round < 2; round++) {
		cl_no_draft = round == 1;
		cl_msgp = 256;
		/* Items from 256 bytes inline and padded; chunks from 4096. */
		cl = client_new(RPCR_TESTPROG, 32, 8192, 4096);
		cl_no_draft = false;
		cl_msgp = 0;
		CHECK(cl != NULL);
		if (cl == NULL)
			return;
		deadline = now_ns() + 2000000000ull;
		do {
			rpcr_xprt_poll(cp);
			CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		} while (round == 0 && info.msgp_align == 0 && now_ns() < deadline);
		CHECK(info.connected);
		CHECK_EQ(info.draft, round == 0);
		CHECK_EQ(info.msgp_align, round == 0 ? 64 : 0);
		CHECK_EQ(info.inline_send, 4096); /* the server's receive size */
		rpcr_xprt_stats_get(cp, &st0);
		one_size(cl, 300, 1, 0);
		one_size(cl, 1000, 1, 0);
		one_size(cl, 3001, 1, 0);
		one_size(cl, 5000, 1, 0); /* in chunks: no padding */
		rpcr_xprt_stats_get(cp, &st1);
		if (round == 0) {
			/* ECHO and WRITE of three sizes padded; ECHO and READ replies padded. */
			CHECK_EQ(st1.msgp_sent - st0.msgp_sent, 6);
			CHECK_EQ(st1.msgp_recv - st0.msgp_recv, 6);
		} else {
			CHECK_EQ(st1.msgp_sent, st0.msgp_sent);
			CHECK_EQ(st1.msgp_recv, st0.msgp_recv);
		}
		/* A call with a padded item and an item in a chunk: marshalled again, unpadded. */
		{
			struct tbuf t[3], d[3];
			uint32_t len[3] = {500, 9000, 300}, k;
			struct rpcr_bulk args[3], dst[3];
			struct multi_res mr;
			struct rpcr_call call;
			struct rpcr_clnt *cx;

			cl_msgp = 256;
			cl_no_draft = round == 1;
			cx = client_new(XT_PROG, 32, 8192, 4096);
			cl_msgp = 0;
			cl_no_draft = false;
			CHECK(cx != NULL);
			if (cx == NULL)
				break;
			for (k = 0; k < 3; k++) {
				CHECK_EQ(tbuf_make(cp, P.arena, mc, &t[k], len[k], 1), 0);
				tbuf_fill(&t[k], k + 40);
				args[k] = (struct rpcr_bulk){t[k].m, 0, len[k]};
				CHECK_EQ(tbuf_make(cp, P.arena, mc, &d[k], 10000, 1), 0);
				dst[k] = (struct rpcr_bulk){d[k].m, 0, 10000};
			}
			memset(&call, 0, sizeof(call));
			memset(&mr, 0, sizeof(mr));
			call.proc = XT_MULTI;
			call.encode = multi_enc;
			call.args = args;
			call.decode = multi_dec;
			call.res = &mr;
			call.res_bulk = dst;
			call.nres_bulk = 3;
			CHECK_EQ(rpcr_clnt_call_sync(cx, &call), 0);
			CHECK_EQ(mr.rc, 0);
			if (call.status == 0 && mr.rc == 0) {
				CHECK(bulk_equals(&mr.a, &args[0]));
				CHECK(bulk_equals(&mr.b, &args[1]));
				CHECK(bulk_equals(&mr.c, &args[2]));
				rte_pktmbuf_free(mr.a.m);
				rte_pktmbuf_free(mr.b.m);
				rte_pktmbuf_free(mr.c.m);
			}
			for (k = 0; k < 3; k++) {
				tbuf_free(mc, &t[k]);
				tbuf_free(mc, &d[k]);
			}
			CHECK_EQ(rpcr_clnt_destroy(cx), 0);
		}
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	}
	server_stats(sst);
	CHECK_EQ(sst[2], 0); /* no RDMA_ERROR: nothing unexpected reached the server */
}

/* ---- the reverse direction (RFC 8167) ---- */

/* A CALLBACK in flight, and what it answered. */
struct cbcall {
	struct rpcr_call call;
	struct rpcr_testprog_cb_args args;
	uint32_t verified;
	int done;
};

static void
cbcall_done(struct rpcr_call *call)
{
	struct cbcall *c = call->user;

	c->done++;
	acall_total++;
}

static void
cbcall_start(struct rpcr_clnt *cl, struct cbcall *c, uint32_t count, const void *data, uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->args = (struct rpcr_testprog_cb_args){.count = count, .data = data, .len = len};
	c->verified = UINT32_MAX;
	c->call.proc = RPCR_TESTPROG_CALLBACK;
	c->call.encode = rpcr_testprog_enc_callback;
	c->call.args = &c->args;
	c->call.decode = rpcr_testprog_dec_u32;
	c->call.res = &c->verified;
	c->call.done = cbcall_done;
	c->call.user = c;
	CHECK_EQ(rpcr_clnt_call(cl, &c->call), 0);
}

/* CALLBACK made and waited for: @return the status, *@verified what the server counted. */
static int
callback_sync(struct rpcr_clnt *cl, uint32_t count, const void *data, uint32_t len,
	      uint32_t *verified)
{
	struct cbcall c;

	cbcall_start(cl, &c, count, data, len);
	CHECK(poll_until(&c.done, 1, 20000));
	*verified = c.verified;
	return c.done == 1 ? c.call.status : -ETIMEDOUT;
}

/* The client's own ECHO of the callback program, wrong on purpose for every third call (its
 * first byte flipped), dropping the connection when asked (RPCR_SVC_DROP). */
static uint32_t bad_echoes, bad_seen;
static bool bad_drop_next;

static enum rpcr_svc_verdict
bad_echo(struct rpcr_svc_req *r)
{
	const void *d;
	uint8_t buf[RPCR_TESTPROG_CB_MAX];
	uint32_t len;

	if (bad_drop_next) {
		bad_drop_next = false;
		return RPCR_SVC_DROP;
	}
	if (rpcr_xdr_dec_opaque(rpcr_msg_dec(rpcr_svc_req_args(r)), sizeof(buf), &d, &len) != 0)
		return RPCR_SVC_ERROR;
	memcpy(buf, d, len);
	if (bad_seen++ % 3 == 2 && len != 0) {
		buf[0] ^= 0xff;
		bad_echoes++;
	}
	if (rpcr_xdr_enc_opaque(rpcr_msg_enc(rpcr_svc_req_results(r)), buf, len) != 0)
		return RPCR_SVC_ERROR;
	return RPCR_SVC_REPLY;
}

/*
 * Transport characteristics between two rpcr peers (the xcharext draft, lib/xprt/xchar.c): a
 * client that would send 8192 bytes to a server whose receives take 4096 asks for more
 * (REQ_XCHAR RBSIZ 8192); the server answers pending, posts longer receives, and says UPD_XCHAR
 * once its shorter ones are used; from then on the client's calls of 6000 bytes go in one Send
 * (no continuation), data checked.
 */
static void
case_xchar(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct srv_cfg sc = srv_default;
	struct rpcr_clnt_info info;
	struct rpcr_call call;
	struct rpcr_clnt *cl;
	uint32_t n = 0;

	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2 | XT_SRV_XCHAR;
	server_start(&sc);
	cl_vers = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cl_xchar = true;
	cl = client_new(RPCR_TESTPROG, 32, 8192, UINT32_MAX);
	cl_xchar = false;
	cl_vers = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	do {
		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_NULL;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	} while (info.inline_send != 8192 && ++n < 5000);
	printf("    the client's Sends grew from 4096 to %u bytes after %u calls (REQ_XCHAR, "
	       "RESP_XCHAR pending, UPD_XCHAR)\n",
	       info.inline_send, n);
	CHECK_EQ(info.inline_send, 8192);
	CHECK(info.props.xchar && info.props.rbsiz == 8192);
	rpcr_xprt_stats_get(cp, &st0);
	one_size(cl, 6000, 1, 6064);
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.cont_sent, st0.cont_sent); /* (ECHO and WRITE of 6000: one Send each) */
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* CALLBACK of every count in @counts with every length in @lens of @data, each echo checked by
 * the server. @return the calls back made. */
static uint32_t
callback_grid(struct rpcr_clnt *cl, const uint32_t *counts, uint32_t ncounts, const uint32_t *lens,
	      uint32_t nlens, const uint8_t *data)
{
	uint32_t i, k, verified, sum = 0;

	for (i = 0; i < ncounts; i++) {
		for (k = 0; k < nlens; k++) {
			CHECK_EQ(callback_sync(cl, counts[i], data, lens[k], &verified), 0);
			CHECK_EQ(verified, counts[i]);
			sum += counts[i];
		}
	}
	return sum;
}

/* CALLBACK's arguments written without rpcr_testprog_enc_callback()'s check (that the client
 * serves the calls back). */
static int
enc_callback_raw(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_testprog_cb_args *a = args;
	int rc = rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->count);

	return rc != 0 ? rc : rpcr_xdr_enc_opaque(rpcr_msg_enc(m), a->data, a->len);
}

/*
 * The reverse direction in version 2 (§5.2.5): a client that serves its server's calls says BRS
 * CONT in its properties, and the server calls it back on the version-2 connection as on version
 * 1 (RFC 8167's requester and responder pair): calls without RESPONSE, replies with it, every
 * echo checked by the server. Both sides send their transport characteristics (INIT_XCHAR),
 * the client's saying BRS SZLIM, and the client reads the server's.
 */
static void
case_callback_v2(void)
{
	static const uint32_t counts[] = {1, 5, 64};
	static const uint32_t lens[] = {0, 100, RPCR_TESTPROG_CB_MAX};
	struct rpcr_xprt_stats st0, st1;
	struct srv_cfg sc = srv_default;
	uint8_t data[RPCR_TESTPROG_CB_MAX];
	struct rpcr_clnt_info info;
	struct rpcr_call call;
	struct rpcr_clnt *cl;
	uint32_t verified, sum, i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 5 + 1);
	/* (Both sides send their transport characteristics too: INIT_XCHAR.) */
	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2 | XT_SRV_XCHAR;
	server_start(&sc);
	cl_bc = 8;
	cl_vers = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cl_xchar = true;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	cl_xchar = false;
	cl_vers = 0;
	cl_bc = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	CHECK_EQ(rpcr_testprog_cb_register(cl), 0);
	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_NULL;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.rdma_vers, 2);
	/* The server's INIT_XCHAR came: its receives of 4096, no calls back of its own. */
	CHECK(info.props.xchar && !info.props.xchar_off && info.props.own_rbsiz == 4096 &&
	      info.props.bkrqsup == RPCR_PROTO_XCHAR_BKRQSUP_NONE);
	rpcr_xprt_stats_get(cp, &st0);
	sum = callback_grid(cl, counts, RTE_DIM(counts), lens, RTE_DIM(lens), data);
	rpcr_xprt_stats_get(cp, &st1);
	printf("    version 2: %u calls back, each echo checked\n", sum);
	CHECK_EQ(st1.bcalls_recv - st0.bcalls_recv, sum);
	CHECK_EQ(st1.breplies_sent - st0.breplies_sent, sum);
	CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	/* A client that serves none says BRS NONE: asked anyway (CALLBACK encoded by hand), the
	 * server gets no requester for it (rpcr_svc_req_bclnt(): ENOTSUP) and calls nothing
	 * back: none of 3 verified. */
	cl_vers = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	cl_vers = 0;
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	{
		struct rpcr_testprog_cb_args a = {.count = 3, .data = data, .len = 10};

		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_CALLBACK;
		call.encode = enc_callback_raw;
		call.args = &a;
		call.decode = rpcr_testprog_dec_u32;
		call.res = &verified;
		verified = UINT32_MAX;
		rpcr_xprt_stats_get(cp, &st0);
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
		rpcr_xprt_stats_get(cp, &st1);
		CHECK_EQ(verified, 0);
		CHECK_EQ(st1.bcalls_recv, st0.bcalls_recv);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* CBBULK (@count calls back of @len bytes, DDP-eligible, or whole with
 * RPCR_TESTPROG_CBBULK_WHOLE in @flags): @return what the server verified. */
static uint32_t
cbbulk_flags(struct rpcr_clnt *cl, uint32_t count, uint32_t len, uint32_t flags)
{
	struct rpcr_testprog_cb_args a = {.count = count, .data = NULL, .len = len, .flags = flags};
	uint32_t verified = UINT32_MAX;
	struct rpcr_call call;

	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_CBBULK;
	call.encode = rpcr_testprog_enc_cbbulk;
	call.args = &a;
	call.decode = rpcr_testprog_dec_u32;
	call.res = &verified;
	CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	return verified;
}

static uint32_t
cbbulk_sync(struct rpcr_clnt *cl, uint32_t count, uint32_t len)
{
	return cbbulk_flags(cl, count, len, 0);
}

/* A client of versions 1 and 2 serving its server's calls (8 credits) and saying BRS @brs (0:
 * GENL), connected: NULL if it is not (a failed check). */
static struct rpcr_clnt *
callback_client(uint32_t brs, uint32_t versions)
{
	struct rpcr_clnt *cl;

	cl_bc = 8;
	cl_vers = versions;
	cl_xchar = true;
	cl_brs = brs;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	cl_brs = 0;
	cl_xchar = false;
	cl_vers = 0;
	cl_bc = 0;
	CHECK(cl != NULL);
	if (cl != NULL)
		CHECK_EQ(rpcr_testprog_cb_register(cl), 0);
	return cl;
}

/*
 * The reverse direction with chunks (version 2, BRS GENL, §5.2.5: "in the same way as
 * forward-direction messages"): the server calls its client's BULK with 0 to 61440 bytes of
 * DDP-eligible data; from 1024 bytes on they go in a read chunk the client pulls, and the echo in
 * the write chunk the server offers, written by the client; every echo checked byte for byte by
 * the server. A client that says CONT takes none with chunks (the server sends none: its calls of
 * more than a Send go continued or fail); version 1 none at all (RFC 8167 section 2.5).
 */
static void
case_callback_genl(void)
{
	static const uint32_t lens[] = {0,    100,  1023,  1024,
					4000, 6000, 32768, RPCR_TESTPROG_CBBULK_MAX};
	struct rpcr_xprt_stats st0, st1;
	struct srv_cfg sc = srv_default;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	uint32_t i, sum = 0;

	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2 | XT_SRV_XCHAR;
	server_start(&sc);
	cl = callback_client(0, RPCR_XPRT_V1 | RPCR_XPRT_V2);
	if (cl == NULL)
		return;
	CHECK_EQ(cbbulk_sync(cl, 1, 0), 1); /* (version 2 from here on) */
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.rdma_vers, 2);
	rpcr_xprt_stats_get(cp, &st0);
	for (i = 0; i < RTE_DIM(lens); i++) {
		CHECK_EQ(cbbulk_sync(cl, 3, lens[i]), 3);
		sum += 3;
	}
	rpcr_xprt_stats_get(cp, &st1);
	printf("    version 2, BRS GENL: %u calls back of 0-%u bytes, %u with chunks (read "
	       "chunk pulled, echo written into the server's write chunk), each echo checked\n",
	       sum, RPCR_TESTPROG_CBBULK_MAX,
	       (uint32_t)(st1.bcalls_chunks_recv - st0.bcalls_chunks_recv));
	CHECK_EQ(st1.bcalls_recv - st0.bcalls_recv, sum);
	CHECK_EQ(st1.breplies_sent - st0.breplies_sent, sum);
	/* (Every one with chunks: the server offers a write chunk for each echo, its destination
	 * being a 61440-byte buffer.) */
	CHECK_EQ(st1.bcalls_chunks_recv - st0.bcalls_chunks_recv, sum);
	CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
	/* Nothing DDP-eligible: every call continued (two Sends), every echo in the reply chunk
	 * offered, written by the client, its reply RDMA2_NOMSG. */
	rpcr_xprt_stats_get(cp, &st0);
	CHECK_EQ(cbbulk_flags(cl, 3, 5000, RPCR_TESTPROG_CBBULK_WHOLE), 3);
	CHECK_EQ(cbbulk_flags(cl, 3, RPCR_TESTPROG_CBBULK_WHOLE_MAX, RPCR_TESTPROG_CBBULK_WHOLE),
		 3);
	rpcr_xprt_stats_get(cp, &st1);
	printf("    ... nothing DDP-eligible: 6 calls back of 5000 and %u bytes, %u of them "
	       "continued, every echo in a reply chunk\n",
	       RPCR_TESTPROG_CBBULK_WHOLE_MAX, (uint32_t)(st1.cont_recv - st0.cont_recv));
	CHECK_EQ(st1.bcalls_chunks_recv - st0.bcalls_chunks_recv, 6);
	CHECK_EQ(st1.cont_recv - st0.cont_recv, 6);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	/* BRS CONT: nothing with chunks; short data echoed inline, 6000 bytes not (the call goes
	 * continued, but its echo needs a reply chunk: the server's requester grants no more than
	 * one Send for a reply, REPLY_RESOURCE), nothing refused. */
	cl = callback_client(RPCR_PROTO_V2_RVRSDIR_CONT, RPCR_XPRT_V1 | RPCR_XPRT_V2);
	if (cl == NULL)
		return;
	CHECK_EQ(cbbulk_sync(cl, 1, 100), 1);
	rpcr_xprt_stats_get(cp, &st0);
	CHECK_EQ(cbbulk_sync(cl, 2, 1023), 2);
	CHECK_EQ(cbbulk_sync(cl, 1, 6000), 0);
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.bcalls_chunks_recv, st0.bcalls_chunks_recv);
	CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	/* Version 1: inline only (RFC 8167 section 2.5). */
	cl = callback_client(0, RPCR_XPRT_V1);
	if (cl == NULL)
		return;
	rpcr_xprt_stats_get(cp, &st0);
	CHECK_EQ(cbbulk_sync(cl, 2, 1500), 2);
	CHECK_EQ(cbbulk_sync(cl, 1, 6000), 0);
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.bcalls_chunks_recv, st0.bcalls_chunks_recv);
	CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

static const struct rpcr_svc_proc bad_procs[] = {
	{.proc = RPCR_TESTPROG_CB_NULL, .handler = NULL},
	{.proc = RPCR_TESTPROG_CB_ECHO, .handler = bad_echo},
};

static void
case_callback(void)
{
	static const uint32_t counts[] = {0, 1, 2, 5, 64};
	static const uint32_t lens[] = {0, 1, 100, RPCR_TESTPROG_CB_MAX};
	const struct rpcr_svc_prog bad = {.prog = RPCR_TESTPROG_CB,
					  .vers = RPCR_TESTPROG_CB_VERS,
					  .procs = bad_procs,
					  .nprocs = RTE_DIM(bad_procs)};
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_xprt_conn_info ci;
	uint8_t data[RPCR_TESTPROG_CB_MAX];
	struct rpcr_clnt *cl;
	uint32_t verified, sum, i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	server_start(&srv_default);

	/* A client that serves no calls from its server does not send CALLBACK. */
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	CHECK(!rpcr_clnt_serves(cl, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS));
	CHECK_EQ(callback_sync(cl, 0, data, 0, &verified), -ENOTSUP); /* (after CONF_RDMA) */
	CHECK_EQ(rpcr_testprog_cb_register(cl), -ENOTSUP);
	rpcr_xprt_stats_get(cp, &st0);
	CHECK_EQ(callback_sync(cl, 3, data, 10, &verified), -ENOTSUP);
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.calls_sent, st0.calls_sent);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	/* 0..64 calls back, of 0..896 bytes, each echo checked by the server. */
	cl_bc = 8;
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;
	CHECK_EQ(rpcr_testprog_cb_register(cl), 0);
	CHECK(rpcr_clnt_serves(cl, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS));
	{
		struct rpcr_call call;

		memset(&call, 0, sizeof(call)); /* (after CONF_RDMA) */
		call.proc = RPCR_TESTPROG_NULL;
		CHECK_EQ(rpcr_clnt_call_sync(cl, &call), 0);
	}
	rpcr_xprt_stats_get(cp, &st0);
	sum = callback_grid(cl, counts, RTE_DIM(counts), lens, RTE_DIM(lens), data);
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.bcalls_recv - st0.bcalls_recv, sum);
	CHECK_EQ(st1.breplies_sent - st0.breplies_sent, sum);
	CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
	CHECK_EQ(st1.bcalls_overrun, st0.bcalls_overrun);
	CHECK_EQ(st1.calls_sent - st0.calls_sent, RTE_DIM(counts) * RTE_DIM(lens));
	CHECK_EQ(rpcr_xprt_conn_list(cp, &ci, 1), 1);
	CHECK_EQ(ci.rev_credits, 8);
	CHECK_EQ(ci.rev_in_use, 0);

	/* Both directions at once on one connection: 8 CALLBACKs of 64 calls each and 400
	 * ECHOs, all in flight together; every one answered once and right. */
	{
		static struct cbcall cbs[8];
		static struct acall a[16];
		struct tbuf t;
		int started = 0, want;

		CHECK_EQ(tbuf_make(cp, P.arena, mc, &t, 3000, 1), 0);
		if (t.m == NULL)
			goto out;
		tbuf_fill(&t, 3000);
		acall_total = 0;
		for (i = 0; i < RTE_DIM(cbs); i++)
			cbcall_start(cl, &cbs[i], 64, data, 64 + i * 100);
		want = (int)RTE_DIM(cbs);
		while (started < 400) {
			for (i = 0; i < RTE_DIM(a) && started < 400; i++) {
				if (started >= (int)RTE_DIM(a) && a[i].completions == 0)
					continue;
				if (started >= (int)RTE_DIM(a)) {
					CHECK_EQ(a[i].call.status, 0);
					CHECK(bulk_equals(&a[i].er.b, &a[i].ab));
					rte_pktmbuf_free(a[i].er.b.m);
				}
				memset(&a[i], 0, sizeof(a[i]));
				acall_echo(&a[i],
					   (struct rpcr_bulk){t.m, 0, 100 + (uint32_t)started},
					   false, acall_done_count);
				CHECK_EQ(rpcr_clnt_call(cl, &a[i].call), 0);
				started++;
				want++;
			}
			rpcr_xprt_poll(cp);
		}
		CHECK(poll_until(&acall_total, want, 20000));
		CHECK_EQ(acall_total, want);
		for (i = 0; i < RTE_DIM(a); i++) {
			CHECK_EQ(a[i].completions, 1);
			CHECK_EQ(a[i].call.status, 0);
			if (a[i].call.status == 0) {
				CHECK(bulk_equals(&a[i].er.b, &a[i].ab));
				rte_pktmbuf_free(a[i].er.b.m);
			}
		}
		for (i = 0; i < RTE_DIM(cbs); i++) {
			CHECK_EQ(cbs[i].done, 1);
			CHECK_EQ(cbs[i].call.status, 0);
			CHECK_EQ(cbs[i].verified, 64);
		}
		tbuf_free(mc, &t);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);

	/* Wrong answers are counted by the server, not fatal; then a connection lost with a call
	 * back outstanding (the client's handler drops it: RPCR_SVC_DROP closes the connection).
	 * The client sends CALLBACK again on its next connection, which the server runs anew. */
	cl = client_new(RPCR_TESTPROG, 32, 4096, 1024);
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;
	CHECK_EQ(rpcr_clnt_register(cl, &bad), 0);
	CHECK_EQ(rpcr_clnt_register(cl, &bad), -EEXIST);
	bad_seen = bad_echoes = 0;
	CHECK_EQ(callback_sync(cl, 30, data, 50, &verified), 0);
	CHECK_EQ(bad_echoes, 10);
	CHECK_EQ(verified, 20);
	rpcr_xprt_stats_get(cp, &st0);
	bad_seen = bad_echoes = 0;
	bad_drop_next = true;
	CHECK_EQ(callback_sync(cl, 6, data, 50, &verified), 0);
	CHECK_EQ(verified, 4); /* the second connection's six, two of them wrong */
	rpcr_xprt_stats_get(cp, &st1);
	CHECK_EQ(st1.reconnects - st0.reconnects, 1);
	CHECK_EQ(st1.calls_dropped - st0.calls_dropped, 1);
	/* NULL of the callback program has no handler: PROC_UNAVAIL to the server, the call
	 * not verified; the connection goes on. */
	CHECK_EQ(callback_sync(cl, 1, data, 0, &verified), 0);
	CHECK_EQ(verified, 1);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
out:
	cl_bc = 0;
}

static const struct rpcr_test_case cases[] = {
	{"null", case_null},
	{"sizes", case_sizes},
	{"reply_chunk", case_reply_chunk},
	{"long_call", case_long_call},
	{"mix", case_mix},
	{"multi", case_multi},
	{"credits", case_credits},
	{"rpc_errors", case_rpc_errors},
	{"garbage_args", case_garbage_args},
	{"timeout", case_timeout},
	{"resubmit_storm", case_resubmit_storm},
	{"reconnect", case_reconnect},
	{"decoupled_client", case_decoupled_client},
	{"decoupled_server", case_decoupled_server},
	{"versions", case_versions},
	{"remote_inv", case_remote_inv},
	{"wire_errors", case_wire_errors},
	{"wire_draft", case_wire_draft},
	{"draft", case_draft},
	{"callback", case_callback},
	{"callback_v2", case_callback_v2},
	{"callback_genl", case_callback_genl},
	{"xchar", case_xchar},
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"cdev", required_argument, NULL, 'c'},
					     {"addr", required_argument, NULL, 'a'},
					     {NULL, 0, NULL, 0}};
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 256u << 20,
		.cq_depth = 1024,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
	};
	struct rpcr_xprt_poller_conf pc;
	unsigned long failed = 0, run = 0;
	bool selected[RTE_DIM(cases)];
	struct ctl_msg m;
	int c, status;
	size_t i;

	while ((c = getopt_long(argc, argv, "d:c:a:", opts, NULL)) != -1) {
		if (c == 'd')
			hc.devargs = optarg;
		else if (c == 'c')
			hc.cdevargs = optarg; /* the client's device, if not the server's */
		else if (c == 'a')
			hc.addr =
				optarg; /* the harness's listen address; the engine's is beside it */
		else
			return 2;
	}
	for (i = 0; i < RTE_DIM(cases); i++) {
		int a;

		selected[i] = optind == argc;
		for (a = optind; a < argc; a++)
			selected[i] |= strcmp(argv[a], cases[i].name) == 0;
	}
	alarm(600);
	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;
	if (P.server) {
		status = xt_server_main(&P);
		harness_finish(&P);
		return status;
	}
	xt_server_addr(P.addr, saddr, sizeof(saddr));
	ctl_recv(&P, CMD_ACK, &m);
	cdev = rpcr_rdev_open(P.devargs);
	memset(&pc, 0, sizeof(pc));
	pc.name = "client";
	pc.dev = cdev;
	pc.arena = P.arena;
	cp = cdev != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	mc = cp != NULL ? rpcr_mem_cache_create(rpcr_xprt_poller_pd(cp), NULL) : NULL;
	if (mc == NULL) {
		fprintf(stderr, "client set-up failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (i = 0; i < RTE_DIM(cases); i++) {
		unsigned long before = rpcr_test_failed;

		if (!selected[i])
			continue;
		cases[i].fn();
		run++;
		if (rpcr_test_failed != before) {
			failed++;
			printf("FAIL %s\n", cases[i].name);
		} else {
			printf("ok   %s\n", cases[i].name);
		}
		fflush(stdout);
	}
	ctl_send(&P, CMD_STOP, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	rpcr_mem_cache_free(mc);
	if (rpcr_xprt_poller_destroy(cp) != 0) {
		printf("FAIL client poller busy at exit\n");
		failed++;
	}
	rpcr_rdev_close(cdev);
	status = harness_finish(&P);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("server exited badly (status 0x%x)\n", status);
		failed++;
	}
	printf("%lu of %lu cases failed, %lu checks failed\n", failed, run, rpcr_test_failed);
	return failed != 0 || rpcr_test_failed != 0;
}
