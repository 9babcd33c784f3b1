/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The engine's state machines against a scripted fake device, in one process: the test plays
 * the peer and the hardware. It sees every work request the engine posts (and the bytes it
 * would send), completes them when and how it likes (successes, flushes, errors, out of order),
 * delivers hand-made messages into posted receives, and injects connection events. Every client
 * slot state (FREE, SENT, RESEND, READING, OWED), server request state (READING, EXECUTING, DEFERRED,
 * REPLYING, WAITING) and connection state (CONNECTING, ACCEPTING, CONNECTED, CLOSING, CLOSED)
 * is entered and left here, through its error paths too.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_proto_xchar.h>
#include <rpcr_rdev_driver.h>
#include <rpcr_xprt.h>

#include "eal_test.h"
#include "fake_rdev.h"
#include "rpcr_test.h"

static struct rpcr_rdev *dev;
static struct rpcr_xprt_poller *P;
static struct rpcr_mem_arena *arena;

/* ---- the client ---- */

struct tcall {
	struct rpcr_call call;
	int done;
	uint32_t res;
};

static void
tcall_done(struct rpcr_call *call)
{
	((struct tcall *)call->user)->done++;
}

/* A completion that tries to poll and to wait for a call from inside the poll running it. */
static struct rpcr_clnt *nested_cl;
static int nested_poll_rc = -1, nested_sync_rc;

static void
tcall_done_nested(struct rpcr_call *call)
{
	struct rpcr_call c2;

	memset(&c2, 0, sizeof(c2));
	c2.proc = RPCR_TESTPROG_NULL;
	nested_poll_rc = rpcr_xprt_poll(P);
	nested_sync_rc = rpcr_clnt_call_sync(nested_cl, &c2);
	((struct tcall *)call->user)->done++;
}

static int
dec_u32(struct rpcr_msg *m, void *res)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), res);
}

static int
enc_u32_arg(struct rpcr_msg *m, const void *args)
{
	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), *(const uint32_t *)args);
}

static void
tcall_init(struct tcall *t, uint32_t proc)
{
	memset(t, 0, sizeof(*t));
	t->call.proc = proc;
	t->call.done = tcall_done;
	t->call.user = t;
}

static struct rpcr_clnt *
clnt(uint32_t credits, uint64_t timeout_us)
{
	struct rpcr_clnt_conf cc;

	memset(&cc, 0, sizeof(cc));
	cc.addr = "peer";
	cc.prog = RPCR_TESTPROG;
	cc.vers = 1;
	cc.credits = credits;
	cc.remote_inv = true;
	cc.timeout_us = timeout_us;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	return rpcr_clnt_create(P, &cc);
}

/* Connect a new client: check what it sends, answer ESTABLISHED with @pd. */
static struct fake_qp *
establish(const uint8_t *pd, uint8_t plen)
{
	struct fake_qp *qp = last_qp;

	if (qp == NULL)
		return NULL;
	event(RPCR_RDEV_EVENT_ESTABLISHED, qp, pd, plen);
	poll_ms(1);
	return qp;
}

/* Make call @t (procedure @proc) on @cl and take the Send it posts on @qp. @return false (a
 * failed check) when none came; else its xid in @xid. */
static bool
call_out(struct rpcr_clnt *cl, struct fake_qp *qp, struct tcall *t, uint32_t proc, uint32_t *xid)
{
	struct fake_wr *w;

	tcall_init(t, proc);
	rpcr_clnt_call(cl, &t->call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL)
		*xid = w32(w->data, 0);
	return w != NULL;
}

static void
case_client_connect(void)
{
	struct rpcr_xprt_stats st;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct fake_qp *qp = last_qp;
	struct tcall t;
	struct fake_wr *w;
	uint8_t pd[32];

	CHECK(cl != NULL && qp != NULL);
	if (qp == NULL)
		return;
	/* CONNECTING: receives posted, the private data says 4096/4096, R, and rpcr's block. */
	CHECK_EQ(qp->connects, 1);
	CHECK_EQ(qp->rq_tail - qp->rq_head, 8 + 16);
	CHECK_EQ(qp->plen, 20);
	CHECK_EQ(w32(qp->pdata, 0), RPCR_PROTO_CM_MAGIC);
	CHECK_EQ(qp->pdata[5], 1);               /* R */
	CHECK_EQ(qp->pdata[6], 3);               /* 4096 */
	CHECK_EQ(w32(qp->pdata, 2), 0x72706372); /* "rpcr" */
	CHECK_EQ(w32(qp->pdata, 4), 7);          /* MSGP | DONE | CONF */
	CHECK(!rpcr_clnt_connected(cl));
	/* A call waits for the connection. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	CHECK_EQ(rpcr_clnt_call(cl, &t.call), 0);
	polls(10);
	CHECK(take(qp) == NULL);
	/* ESTABLISHED from a Linux-like server (RFC 8797 only, 1024 bytes, no R). */
	establish(pd, peer_pdata(pd, 1024, 1024, false, UINT32_MAX));
	CHECK(rpcr_clnt_connected(cl));
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.inline_send, 1024);
	CHECK_EQ(info.inline_recv, 1024);
	CHECK(!info.remote_inv);
	CHECK(!info.draft);
	CHECK_EQ(info.credits, 1);
	/* The call goes: MSG, credits asked 8. */
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL) {
		rpcr_clnt_destroy(cl); /* (the call on this stack must not outlive it) */
		return;
	}
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
	CHECK_EQ(w->len, 28 + 40);
	CHECK_EQ(w32(w->data, 1), 1);
	CHECK_EQ(w32(w->data, 2), 8);
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 0), w32(w->data, 7)); /* transport xid = RPC xid */
	CHECK_EQ(w32(w->data, 10), RPCR_TESTPROG);
	/* Its reply (grant 5) completes it once. */
	{
		uint8_t r[128];

		CHECK_EQ(deliver(qp, r, reply_msg(r, w32(w->data, 0), 5, 0, NULL, 0), 0), 0);
	}
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(t.call.xid, w32(w->data, 0));
	rpcr_clnt_info_get(cl, &info);
	CHECK_EQ(info.credits, 5);
	CHECK_EQ(info.outstanding, 0);
	rpcr_xprt_stats_get(P, &st);
	CHECK_EQ(st.calls_sent, 1);
	CHECK_EQ(st.replies_recv, 1);
	/* From inside a poll (a completion): polling does nothing, waiting for a call is refused
	 * (nothing sent). */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	t.call.done = tcall_done_nested;
	nested_cl = cl;
	CHECK_EQ(rpcr_clnt_call(cl, &t.call), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		uint8_t r[128];

		CHECK_EQ(deliver(qp, r, reply_msg(r, w32(w->data, 0), 5, 0, NULL, 0), 0), 0);
	}
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(nested_poll_rc, 0);
	CHECK_EQ(nested_sync_rc, -EDEADLK);
	CHECK(take(qp) == NULL);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	CHECK_EQ(t.done, 1);
}

/* A client told to send no RFC 8797 private data: an empty connect, and what a server then
 * assumes of it (1024-byte replies, no R, no draft), whatever the server says of itself. */
static void
case_client_no_pdata(void)
{
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	struct fake_qp *qp;
	uint8_t pd[32];

	memset(&cc, 0, sizeof(cc));
	cc.addr = "peer";
	cc.prog = RPCR_TESTPROG;
	cc.vers = 1;
	cc.credits = 8;
	cc.remote_inv = true;
	cc.no_pdata = true;
	cl = rpcr_clnt_create(P, &cc);
	qp = last_qp;
	CHECK(cl != NULL && qp != NULL);
	if (cl == NULL || qp == NULL)
		return;
	CHECK_EQ(qp->connects, 1);
	CHECK_EQ(qp->plen, 0);
	establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	CHECK(rpcr_clnt_connected(cl));
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.inline_send, 4096); /* the server's receives, from its private data */
	CHECK_EQ(info.inline_recv, 1024); /* what the server assumes of ours */
	CHECK(!info.remote_inv);
	CHECK(!info.draft);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/* Credits: never more calls out than granted; a grant of 0 counts as 1; the grant follows
 * each reply. */
static void
case_client_credits(void)
{
	struct rpcr_clnt *cl = clnt(16, 0);
	struct fake_qp *qp;
	struct tcall t[10];
	struct fake_wr *w[10];
	uint8_t pd[32], r[128];
	int i, sent;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL)
		return;
	for (i = 0; i < 10; i++) {
		tcall_init(&t[i], RPCR_TESTPROG_NULL);
		rpcr_clnt_call(cl, &t[i].call);
	}
	polls(5);
	/* Granted 1 (the start): one call out. */
	w[0] = take(qp);
	CHECK(w[0] != NULL);
	CHECK(take(qp) == NULL);
	if (w[0] == NULL)
		return;
	/* The reply grants 0: treated as 1, the next call goes. */
	deliver(qp, r, reply_msg(r, w32(w[0]->data, 0), 0, 0, NULL, 0), 0);
	polls(5);
	CHECK_EQ(t[0].done, 1);
	w[1] = take(qp);
	CHECK(w[1] != NULL);
	CHECK(take(qp) == NULL);
	if (w[1] == NULL)
		return;
	/* Grant 3: three out at once. */
	deliver(qp, r, reply_msg(r, w32(w[1]->data, 0), 3, 0, NULL, 0), 0);
	polls(5);
	for (sent = 0; take(qp) != NULL; sent++)
		;
	CHECK_EQ(sent, 3);
	rpcr_clnt_destroy(cl);
	for (i = 0; i < 10; i++)
		CHECK_EQ(t[i].done, 1);
	CHECK_EQ(t[9].call.status, -ECONNABORTED);
}

/* A call's own binding (rpcr_call::ulb) is read instead of the client's for its procedure: a
 * DDP-eligible item of a procedure whose table entry has none goes in a read chunk at or above
 * the call's threshold (0: 1024), inline below; without it the item is refused. */
static void
case_client_call_ulb(void)
{
	struct rpcr_clnt *cl = clnt(16, 0);
	const struct rpcr_ulb own = {.args_bulk = 1, .threshold = 64};
	const struct rpcr_ulb own_default = {.args_bulk = 1};
	struct rpcr_bulk b = {0};
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], r[128];

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL)
		goto out;
	b.m = rpcr_chunk_alloc_chain(rpcr_xprt_poller_bulk_pool(P), 100);
	CHECK(b.m != NULL);
	if (b.m == NULL)
		goto out;
	b.len = 100;
	/* NULL's entry has no DDP-eligible item: the encoder's rpcr_msg_put_bulk() fails. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	t.call.encode = rpcr_testprog_enc_data;
	t.call.args = &b;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK(t.call.status != 0);
	CHECK(take(qp) == NULL);
	/* Its own binding, threshold 64: a read chunk (read list present, the data not inline). */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	t.call.encode = rpcr_testprog_enc_data;
	t.call.args = &b;
	t.call.ulb = &own;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 4), 1);
	CHECK(w->len < 100);
	deliver(qp, r, reply_msg(r, w32(w->data, 0), 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	/* Threshold 0 is 1024: 100 bytes inline. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	t.call.encode = rpcr_testprog_enc_data;
	t.call.args = &b;
	t.call.ulb = &own_default;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	CHECK_EQ(w32(w->data, 4), 0);
	CHECK(w->len >= 100);
	deliver(qp, r, reply_msg(r, w32(w->data, 0), 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
out:
	rte_pktmbuf_free(b.m);
	rpcr_clnt_destroy(cl);
	polls(2);
}

/* What a client does with bad replies. */
static void
case_client_bad_replies(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], r[256];
	uint32_t xid;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL)
		return;
	rpcr_xprt_stats_get(P, &st0);
	tcall_init(&t, RPCR_TESTPROG_WRITE);
	t.call.decode = dec_u32;
	t.call.res = &t.res;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	xid = w32(w->data, 0);
	/* A reply for an xid nobody sent: dropped, counted. */
	deliver(qp, r, reply_msg(r, xid ^ 0x80000000u, 4, 0, NULL, 0), 0);
	/* Transport garbage: version 7; two bytes. */
	{
		uint32_t g[7] = {xid, 7, 4, 0, 0, 0, 0};

		deliver(qp, r, words(r, g, 7), 0);
		deliver(qp, r, 2, 0);
	}
	polls(5);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.unmatched - st0.unmatched, 1);
	CHECK_EQ(st1.bad_headers - st0.bad_headers, 2);
	CHECK_EQ(t.done, 0); /* still waiting */
	/* A reply whose results do not decode: -EBADMSG. */
	deliver(qp, r, reply_msg(r, xid, 4, 0, "\0\0", 2), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -EBADMSG);

	/* RDMA_ERROR: -EPROTO. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	{
		uint32_t e[7] = {w32(w->data, 0), 1, 4, RPCR_PROTO_V1_ERROR, 1, 1, 1};

		deliver(qp, r, words(r, e, 7), 0);
	}
	polls(3);
	CHECK_EQ(t.call.status, -EPROTO);

	/* RDMA_ERROR in its 20-byte form (ERR_CHUNK): shorter than other headers, still taken. */
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		return;
	{
		uint32_t e[5] = {xid, 1, 4, RPCR_PROTO_V1_ERROR, RPCR_PROTO_V1_ERR_CHUNK};

		deliver(qp, r, words(r, e, 5), 0);
	}
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -EPROTO);

	/*
	 * RFC 8166 section 4.5: a reply whose transport header cannot be processed is discarded
	 * without a word, its credits not applied (each grants 9; the client keeps the 4 it had),
	 * and its call waits on: a write list never offered; NOMSG without a reply chunk; RDMA_MSG
	 * with no RPC message; an RPC xid unlike the transport header's; 24 bytes (shorter than any
	 * header but RDMA_ERROR's). Then a good reply (MSG_DENIED) completes the call.
	 */
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		return;
	{
		/* (Word 0 and an RPC reply's xid are filled in below: X.) */
		enum { X = 0x58585858 };
		const uint32_t bad[5][19] = {
			{X, 1, 9, RPCR_PROTO_V1_MSG, 0, 1, 1, 0x99, 8, 0, 0x1000, 0, 0, X, 1, 0, 0,
			 0, 0},
			{X, 1, 9, RPCR_PROTO_V1_NOMSG, 0, 0, 0},
			{X, 1, 9, RPCR_PROTO_V1_MSG, 0, 0, 0},
			{X, 1, 9, RPCR_PROTO_V1_MSG, 0, 0, 0, 0x1234, 1, 0, 0, 0, 0},
			{X, 1, 9, RPCR_PROTO_V1_MSG, 0, 0},
		};
		const uint32_t nw[5] = {19, 7, 7, 13, 6};
		struct rpcr_clnt_info info;
		uint32_t k, j, b[19];

		for (k = 0; k < 5; k++) {
			for (j = 0; j < nw[k]; j++)
				b[j] = bad[k][j] == X ? xid : bad[k][j];
			rpcr_xprt_stats_get(P, &st0);
			deliver(qp, r, words(r, b, nw[k]), 0);
			polls(3);
			rpcr_xprt_stats_get(P, &st1);
			CHECK_EQ(t.done, 0);
			CHECK_EQ(st1.bad_headers - st0.bad_headers, 1);
			CHECK_EQ(st1.replies_recv, st0.replies_recv);
			CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
			CHECK_EQ(info.credits, 4);
			CHECK_EQ(info.outstanding, 1);
		}
		{
			uint32_t d[12] = {xid, 1, 4, RPCR_PROTO_V1_MSG,       0, 0, 0, xid,
					  1,   1, 1, RPCR_ONCRPC_AUTH_TOOWEAK};

			deliver(qp, r, words(r, d, 12), 0);
		}
		polls(3);
		CHECK_EQ(t.done, 1);
		CHECK_EQ(t.call.status, -EACCES);
		CHECK_EQ(t.call.auth_stat, RPCR_ONCRPC_AUTH_TOOWEAK);
	}
	/* PROG_MISMATCH: -EREMOTEIO with the accept_stat. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w != NULL) {
		uint32_t lh[2] = {rte_cpu_to_be_32(2), rte_cpu_to_be_32(3)};

		deliver(qp, r, reply_msg(r, w32(w->data, 0), 4, 2, lh, 8), 0);
		polls(3);
		CHECK_EQ(t.call.status, -EREMOTEIO);
		CHECK_EQ(t.call.accept_stat, RPCR_ONCRPC_PROG_MISMATCH);
	}
	rpcr_clnt_destroy(cl);
}

/* rpcr_clnt_disconnect(): the connection goes as if lost (its QP destroyed, the call in flight
 * sent again with its xid on the next one), and rpcr_clnt_info counts the new connection. */
static void
case_client_disconnect(void)
{
	struct rpcr_clnt *cl = clnt(8, 0);
	struct rpcr_clnt_info info;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], r[128];
	uint32_t xid = 0, nq0, live0;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	CHECK(qp != NULL && cl != NULL);
	if (qp == NULL || cl == NULL)
		goto out;
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.connections, 1);
	CHECK(call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid));
	nq0 = nqps;
	live0 = nqps_live;
	CHECK_EQ(rpcr_clnt_disconnect(cl), 0);
	CHECK_EQ(rpcr_clnt_disconnect(cl), -ENOTCONN);
	CHECK(!rpcr_clnt_connected(cl));
	flush_recvs(qp);
	complete_sends(qp, RPCR_RDEV_WC_WR_FLUSH_ERR, NULL);
	qp = NULL;
	polls(1);
	CHECK_EQ(nqps_live, live0 - 1);
	CHECK_EQ(t.done, 0);
	POLL_UNTIL(nqps == nq0 + 1 && last_qp != NULL);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	CHECK_EQ(w32(w->data, 0), xid);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.connections, 2);
	CHECK(info.connected);
out:
	CHECK_EQ(rpcr_clnt_disconnect(NULL), -EINVAL);
	if (cl != NULL)
		rpcr_clnt_destroy(cl);
}

/* SENT -> RESEND -> SENT with the same xid on the next connection; credits back to 1;
 * connect failures back off; a waiting call times out; destroy aborts what is left. */
static void
case_client_reconnect(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(8, 200000);
	struct fake_qp *qp, *qp2;
	struct fake_wr *w;
	struct tcall t[3];
	uint8_t pd[32], r[128];
	uint32_t xid0, xid1, n0;
	int i;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL)
		return;
	rpcr_xprt_stats_get(P, &st0);
	/* Grant 2 first. */
	tcall_init(&t[0], RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t[0].call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	deliver(qp, r, reply_msg(r, w32(w->data, 0), 2, 0, NULL, 0), 0);
	polls(3);
	for (i = 0; i < 3; i++) {
		tcall_init(&t[i], RPCR_TESTPROG_NULL);
		rpcr_clnt_call(cl, &t[i].call);
	}
	polls(3);
	xid0 = w32(take(qp)->data, 0);
	xid1 = w32(take(qp)->data, 0);
	CHECK(take(qp) == NULL);
	/* A send completes in error: the connection fails (CLOSING), is torn down, and a new
	 * one is made after the back-off. */
	n0 = nqps;
	complete_sends(qp, RPCR_RDEV_WC_RETRY_EXC_ERR, NULL);
	flush_recvs(qp);
	polls(3);
	CHECK(!rpcr_clnt_connected(cl));
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	qp2 = last_qp;
	CHECK(qp2 != NULL && nqps == n0 + 1);
	if (qp2 == NULL)
		return;
	CHECK_EQ(qp2->connects, 1);
	/* The server refuses: back off, try again. */
	event(RPCR_RDEV_EVENT_REJECTED, qp2, NULL, 0);
	POLL_UNTIL(nqps == n0 + 2 && last_qp != NULL);
	qp2 = last_qp;
	if (qp2 == NULL)
		return;
	qp2 = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	/* Credits restart at 1: the first call out is the first lost one, same xid. */
	w = take(qp2);
	CHECK(w != NULL);
	CHECK(take(qp2) == NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w32(w->data, 0), xid0);
	deliver(qp2, r, reply_msg(r, xid0, 4, 0, NULL, 0), 0);
	polls(3);
	w = take(qp2);
	CHECK(w != NULL);
	if (w != NULL)
		CHECK_EQ(w32(w->data, 0), xid1);
	w = take(qp2); /* the third call, new */
	CHECK(w != NULL);
	CHECK_EQ(t[0].done, 1);
	CHECK_EQ(t[0].call.status, 0);
	CHECK_EQ(t[1].done, 0);
	rpcr_xprt_stats_get(P, &st1);
	CHECK(st1.retransmits - st0.retransmits >= 2);
	CHECK_EQ(st1.reconnects - st0.reconnects, 1);
	/* Nothing answers: they time out (200 ms), once each. */
	POLL_UNTIL(t[1].done != 0 && t[2].done != 0);
	CHECK_EQ(t[1].done, 1);
	CHECK_EQ(t[1].call.status, -ETIMEDOUT);
	CHECK_EQ(t[2].done, 1);
	CHECK_EQ(t[2].call.status, -ETIMEDOUT);
	/* The late reply matches nothing. */
	deliver(qp2, r, reply_msg(r, xid1, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[1].done, 1);
	/* DISCONNECTED, with a call out and one waiting: both go again later, or are aborted. */
	tcall_init(&t[0], RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t[0].call);
	polls(3);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp2, NULL, 0);
	poll_ms(1);
	CHECK(!rpcr_clnt_connected(cl));
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	CHECK_EQ(t[0].done, 1);
	CHECK_EQ(t[0].call.status, -ECONNABORTED);
}

/* Chunks from the client's side: the read chunk of an argument, the write chunk of a result,
 * per-call registrations gone before the completion, remote invalidation counted. */
static int
enc_bulk(struct rpcr_msg *m, const void *args)
{
	return rpcr_msg_put_bulk(m, args);
}

struct bres {
	struct rpcr_bulk b;
	int rc;
	int mrs_at_decode;
};

static int
dec_bulk(struct rpcr_msg *m, void *res)
{
	struct bres *r = res;

	r->rc = rpcr_msg_get_bulk(m, UINT32_MAX, &r->b);
	r->mrs_at_decode = nmrs_live;
	return r->rc;
}

static void
case_client_chunks(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct rpcr_mem_cache *mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(P), NULL);
	struct rpcr_mem_reg *reg;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	struct bres br;
	struct rpcr_bulk arg, dst;
	uint8_t *data, pd[32], r[512];
	int base_mrs;
	uint32_t i;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL || mc == NULL)
		return;
	data = rpcr_mem_arena_alloc(arena, 1u << 20, 4096);
	reg = rpcr_mem_reg(mc, data, 1u << 20, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 5000; i++)
		data[i] = (uint8_t)i;
	arg.m = rpcr_chunk_attach(rpcr_xprt_poller_pool(P), reg, data, 5000, NULL, NULL);
	arg.off = 0;
	arg.len = 5000;
	dst.m = rpcr_chunk_attach(rpcr_xprt_poller_pool(P), reg, data + 65536, 8000, NULL, NULL);
	dst.off = 0;
	dst.len = 8000;
	base_mrs = nmrs_live;
	rpcr_xprt_stats_get(P, &st0);

	tcall_init(&t, RPCR_TESTPROG_ECHO);
	t.call.encode = enc_bulk;
	t.call.args = &arg;
	t.call.decode = dec_bulk;
	t.call.res = &br;
	t.call.res_bulk = &dst;
	t.call.nres_bulk = 1;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	/* MSG; read list: one segment at position 44 (40-byte call header + the count) of
	 * 5000 bytes; write list: one chunk of 8000 bytes; no reply chunk. Two registrations. */
	CHECK_EQ(nmrs_live - base_mrs, 2);
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 4), 1);
	CHECK_EQ(w32(w->data, 5), 44);
	CHECK_EQ(w32(w->data, 7), 5000);
	CHECK_EQ(rpcr_xdr_load64(w->data + 32), (uintptr_t)data);
	CHECK_EQ(w32(w->data, 10), 0); /* end of the read list */
	CHECK_EQ(w32(w->data, 11), 1); /* a write chunk */
	CHECK_EQ(w32(w->data, 12), 1); /* of one segment */
	CHECK_EQ(w32(w->data, 14), 8000);
	CHECK_EQ(w32(w->data, 17), 0); /* end of the write list */
	CHECK_EQ(w32(w->data, 18), 0); /* no reply chunk */
	CHECK_EQ(w->len, 76 + 40 + 4); /* the data is not inline */
	/* The server wrote 5000 bytes and invalidated the write chunk's key (Send with Inv). */
	{
		uint32_t xid = w32(w->data, 0);
		uint32_t h[20] = {xid,  1,   4, RPCR_PROTO_V1_MSG,
				  0,    1,   1, w32(w->data, 13),
				  5000, 0,   0, 0,
				  0,    xid, 1, 0,
				  0,    0,   0, 5000};
		uint32_t n = words(r, h, 20);

		rpcr_xdr_store64(r + 36, rpcr_xdr_load64(w->data + 60));
		memcpy(data + 65536, data, 5000);
		deliver(qp, r, n, w32(w->data, 13));
	}
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(br.rc, 0);
	CHECK_EQ(br.mrs_at_decode, base_mrs); /* registrations gone before results are read */
	CHECK_EQ(br.b.len, 5000);
	CHECK(br.b.m == dst.m);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.remote_invalidations - st0.remote_invalidations, 1);

	/* The written length disagrees with the count in the results: -EBADMSG. */
	tcall_init(&t, RPCR_TESTPROG_ECHO);
	t.call.encode = enc_bulk;
	t.call.args = &arg;
	t.call.decode = dec_bulk;
	t.call.res = &br;
	t.call.res_bulk = &dst;
	t.call.nres_bulk = 1;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w != NULL) {
		uint32_t xid = w32(w->data, 0);
		uint32_t h[20] = {xid, 1,   4, RPCR_PROTO_V1_MSG,
				  0,   1,   1, w32(w->data, 13),
				  100, 0,   0, 0,
				  0,   xid, 1, 0,
				  0,   0,   0, 5000};
		uint32_t n = words(r, h, 20);

		rpcr_xdr_store64(r + 36, rpcr_xdr_load64(w->data + 60));
		deliver(qp, r, n, 0);
		polls(3);
		CHECK_EQ(t.call.status, -EBADMSG);
		CHECK_EQ(nmrs_live, base_mrs);
	}
	rpcr_clnt_destroy(cl);
	rte_pktmbuf_free(arg.m);
	rte_pktmbuf_free(dst.m);
	rpcr_mem_unreg(mc, reg);
	rpcr_mem_cache_free(mc);
	rte_free(data);
}

/* ---- the server ---- */

/* The peer address the next accept_one() reports (AF_UNSPEC unless a case sets it). */
static struct sockaddr_storage next_peer;

static struct fake_qp *
accept_one(struct rpcr_svc *s, const uint8_t *pd, uint8_t plen, struct fake_req *req)
{
	struct rpcr_rdev_event ev;

	RTE_SET_USED(s);
	memset(req, 0, sizeof(*req));
	req->pub.dev = dev;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCR_RDEV_EVENT_CONNECT_REQUEST;
	ev.listener = last_listener;
	ev.req = &req->pub;
	memcpy(ev.pdata, pd, plen);
	ev.pdata_len = plen;
	ev.peer = next_peer;
	rpcr_rdev_event_push(dev, &ev);
	poll_ms(1);
	if (req->accepted != NULL)
		event(RPCR_RDEV_EVENT_ESTABLISHED, req->accepted, NULL, 0);
	poll_ms(1);
	return req->accepted;
}

static uint32_t
call_msg(uint8_t *buf, uint32_t xid, uint32_t credit, uint32_t proc, const void *args,
	 uint32_t alen)
{
	uint32_t w[17] = {xid, 1, credit, RPCR_PROTO_V1_MSG, 0, 0,    0,
			  xid, 0, 2,      RPCR_TESTPROG,     1, proc, 0,
			  0,   0, 0};
	uint32_t n = words(buf, w, 17);

	if (alen != 0)
		memcpy(buf + n, args, alen);
	return n + alen;
}

static struct rpcr_svc_req *deferred[64];
static int ndeferred;

static enum rpcr_svc_verdict
h_defer(struct rpcr_svc_req *r)
{
	deferred[ndeferred++] = r;
	return RPCR_SVC_DEFERRED;
}

static enum rpcr_svc_verdict
h_drop(struct rpcr_svc_req *r)
{
	RTE_SET_USED(r);
	return RPCR_SVC_DROP;
}

/* The end of a server case: the connection (if any) lost, the server destroyed. */
static void
server_end(struct rpcr_svc *s, struct fake_qp *qp)
{
	if (qp != NULL) {
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		flush_recvs(qp);
	}
	poll_ms(2);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
}

static struct rpcr_svc *
svc(uint32_t credits)
{
	static const struct rpcr_svc_proc procs[] = {
		{.proc = 0, .handler = h_defer},
		{.proc = 1, .handler = h_drop},
	};
	struct rpcr_svc_conf sc;
	struct rpcr_svc_prog pg = {.prog = 0x2f5a00f1, .vers = 1, .procs = procs, .nprocs = 2};
	struct rpcr_svc *s;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = credits;
	sc.remote_inv = true;
	s = rpcr_svc_create(P, &sc);
	if (s != NULL) {
		rpcr_testprog_register(s, 0);
		rpcr_svc_register(s, &pg);
	}
	return s;
}

static void
case_server_basics(void)
{
	struct rpcr_svc *s = svc(4);
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[512];
	uint32_t i;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	/* A Linux-like client: RFC 8797 only, 1024/1024, R. */
	qp = accept_one(s, pd, peer_pdata(pd, 1024, 1024, true, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		return;
	CHECK_EQ(qp->accepts, 1);
	CHECK_EQ(qp->plen, 20);
	CHECK_EQ(qp->rq_tail - qp->rq_head, 4 + 16);
	/* NULL: the reply grants min(asked, 4); asked 0 gets 1. */
	deliver(qp, m, call_msg(m, 0x100, 10, RPCR_TESTPROG_NULL, NULL, 0), 0);
	deliver(qp, m, call_msg(m, 0x101, 0, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
		CHECK_EQ(w->len, 28 + 24);
		CHECK_EQ(w32(w->data, 0), 0x100);
		CHECK_EQ(w32(w->data, 2), 4);
		CHECK_EQ(w32(w->data, 7), 0x100);
		CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_REPLY);
	}
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL)
		CHECK_EQ(w32(w->data, 2), 1);
	/* Receives are replenished in batches: none went missing. */
	CHECK(qp->rq_tail - qp->rq_head >= 4 + 1);
	/* A long reply with nowhere to go (READ 2000 > 1024 inline, no chunk, no draft):
	 * ERR_CHUNK. */
	{
		uint32_t len = rte_cpu_to_be_32(2000);

		deliver(qp, m, call_msg(m, 0x102, 4, RPCR_TESTPROG_READ, &len, 4), 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL);
		if (w != NULL) {
			CHECK_EQ(w->len, 20);
			CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_ERROR);
			CHECK_EQ(w32(w->data, 4), RPCR_PROTO_V1_ERR_CHUNK);
		}
	}
	/* A deferred request, then the connection goes: CLOSING then CLOSED, the request stays
	 * valid until it is answered (its answer is dropped), then the connection is freed. */
	{
		uint32_t w2[17];

		(void)w2;
		ndeferred = 0;
		call_msg(m, 0x103, 4, 0, NULL, 0);
		rpcr_xdr_store32(m + 40, 0x2f5a00f1);
		deliver(qp, m, 68, 0);
		polls(3);
		CHECK_EQ(ndeferred, 1);
		CHECK(take(qp) == NULL);
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		poll_ms(1);
		CHECK_EQ(rpcr_svc_destroy(s), -EBUSY); /* a request is still out */
		CHECK_EQ(rpcr_svc_reply(deferred[0]), 0);
		CHECK_EQ(rpcr_svc_destroy(s), 0);
	}
	for (i = 0; i < 3; i++)
		polls(1);
}

/* ---- version 2: a server of versions 1 and 2 (messages built and read with lib/proto) ---- */

/* A version-2 header of type @htype, @xid and credit word @credit, the rest empty, for a test to
 * fill on and encode with lib/proto. */
static void
v2_hdr(struct rpcr_proto_v2_hdr *h, uint32_t xid, uint32_t credit, uint32_t htype)
{
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = RPCR_PROTO_V2_VERS;
	h->credit = credit;
	h->htype = htype;
}

/* A version-2 call of the test program: RDMA2_MSG with credit word @credit, @flags and chunk
 * lists @ch (NULL: none), the RPC call and @alen bytes of arguments after it. @return its
 * length (0 after a failed check). */
static uint32_t
call_msg_v2(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t credit, uint32_t flags,
	    uint32_t proc, const struct rpcr_proto_chunks *ch, const void *args, uint32_t alen)
{
	struct rpcr_oncrpc_call call = {
		.xid = xid, .rpcvers = 2, .prog = RPCR_TESTPROG, .vers = 1, .proc = proc};
	struct rpcr_proto_v2_hdr h;
	ssize_t n, k = -1;

	v2_hdr(&h, xid, credit, RPCR_PROTO_V2_MSG);
	h.flags = flags;
	if (ch != NULL)
		h.chunks = *ch;
	n = rpcr_proto_v2_encode(&h, buf, cap);
	if (n > 0)
		k = rpcr_oncrpc_call_encode(&call, buf + n, cap - (uint32_t)n);
	CHECK(n > 0 && k > 0 && (uint32_t)(n + k) + alen <= cap);
	if (n <= 0 || k <= 0 || (uint32_t)(n + k) + alen > cap)
		return 0;
	if (alen != 0)
		memcpy(buf + n + k, args, alen);
	return (uint32_t)(n + k) + alen;
}

/* The version-2 message of Send @w, decoded into @h. @return its header length, or a negative
 * RPCR_PROTO_E* error. */
static ssize_t
v2_sent(const struct fake_wr *w, struct rpcr_proto_v2_hdr *h)
{
	static struct rpcr_proto_rseg reads[8];
	static struct rpcr_proto_wchunk writes[4];
	static struct rpcr_proto_seg segs[32];
	static struct rpcr_proto_v2_prop props[8];

	memset(h, 0, sizeof(*h));
	rpcr_proto_chunks_init(&h->chunks, reads, 8, writes, 4, segs, 32);
	h->props = (struct rpcr_proto_v2_propset){props, 0, RTE_DIM(props)};
	return rpcr_proto_v2_decode(h, w->data, w->len);
}

/* A version-2 RDMA2_CONNPROP with @xid, @flags and properties @props (@n). @return its length. */
static uint32_t
props_msg(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t flags,
	  const struct rpcr_proto_v2_prop *props, uint32_t n)
{
	struct rpcr_proto_v2_hdr h;
	ssize_t hl;

	v2_hdr(&h, xid, 1, RPCR_PROTO_V2_CONNPROP);
	h.flags = flags;
	h.props =
		(struct rpcr_proto_v2_propset){(struct rpcr_proto_v2_prop *)(uintptr_t)props, n, n};
	hl = rpcr_proto_v2_encode(&h, buf, cap);
	CHECK(hl > 0);
	return hl > 0 ? (uint32_t)hl : 0;
}

/* Send @w is an RDMA2_CONNPROP (flags 0): its properties, interpreted, in @o. */
static void
props_sent(const struct fake_wr *w, struct rpcr_proto_v2_props *o)
{
	static struct rpcr_proto_v2_prop pr[8];
	struct rpcr_proto_v2_hdr h;

	memset(o, 0, sizeof(*o));
	CHECK(w != NULL);
	if (w == NULL)
		return;
	memset(&h, 0, sizeof(h));
	h.props = (struct rpcr_proto_v2_propset){pr, 0, RTE_DIM(pr)};
	CHECK(rpcr_proto_v2_decode(&h, w->data, w->len) == (ssize_t)w->len);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_CONNPROP);
	CHECK_EQ(h.flags, 0);
	rpcr_proto_v2_props_get(&h.props, o);
}

/* A HOSTAUTH hook that takes "let-me-in" (and a peer that sends none when @arg is non-NULL). */
static int
hostauth_ok(const void *msg, uint32_t len, void *arg)
{
	if (msg == NULL)
		return arg != NULL ? 0 : -1;
	return len == 9 && memcmp(msg, "let-me-in", 9) == 0 ? 0 : -1;
}

/* The server's connected connection (a case's only one), as rpcr_xprt_conn_list() reports it. */
static struct rpcr_xprt_conn_info
svc_conn_info(void)
{
	struct rpcr_xprt_conn_info info[8], none;
	int i, n = rpcr_xprt_conn_list(P, info, RTE_DIM(info));

	for (i = 0; i < n && i < (int)RTE_DIM(info); i++)
		if (info[i].server && strcmp(info[i].state, "connected") == 0)
			return info[i];
	memset(&none, 0, sizeof(none));
	CHECK(false);
	return none;
}

/* The next Send on @qp is a version-2 error report answering @xid with @err. @return it. */
static struct fake_wr *
expect_v2_error(struct fake_qp *qp, uint32_t xid, uint32_t err)
{
	struct rpcr_proto_v2_hdr h;
	struct fake_wr *w;

	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return NULL;
	CHECK(v2_sent(w, &h) > 0);
	CHECK_EQ(h.xid, xid);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_ERROR);
	CHECK_EQ(h.flags, RPCR_PROTO_V2_F_RESPONSE);
	CHECK_EQ(h.err, err);
	return w;
}

/* A message of @len bytes from @words (a header lib/proto would not build: bad on purpose). */
static void
deliver_raw(struct fake_qp *qp, const uint32_t *w, uint32_t n)
{
	uint8_t m[128];

	deliver(qp, m, words(m, w, n), 0);
}

/*
 * A server of versions 1 and 2: the first message fixes a connection's version (version 2's
 * §4.2.3.3). Version 2: calls answered in version 2 (RESPONSE, the credit word's two halves),
 * a read chunk pulled and a write chunk filled, no Send with Invalidate though one key covers
 * them (version 2 names its handle); a version-1 message then gets version 1's ERR_VERS 1..2;
 * properties read, a second set after a complete one INVAL_HTYPE; an optional operation
 * INVAL_HTYPE; a continued message reassembled and served; a credit refresh taken
 * silently; an unknown header type INVAL_HTYPE, a truncated one BAD_XDR, too many read
 * segments READ_CHUNKS with the server's limit. Version 1 on another connection of the same
 * server: replies in version 1, a version-2 message then ERR_VERS 1..2 in version 2's format.
 * A server of version 1 alone answers version 2 with ERR_VERS 1..1 (the hostile suite's golden
 * cases); servers of version 2 alone are refused (EINVAL).
 */
static void
case_server_v2(void)
{
	struct rpcr_svc_conf sc;
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_svc *s;
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[4096], src[3000];
	uint32_t i, n, k;
	ssize_t hl;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = 4;
	sc.remote_inv = true;
	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	sc.hostauth = "srv";
	sc.hostauth_len = RPCR_XPRT_HOSTAUTH_MAX + 1; /* (too long) */
	CHECK(rpcr_svc_create(P, &sc) == NULL && rte_errno == EINVAL);
	sc.hostauth_len = 3;
	sc.versions = RPCR_XPRT_V2; /* (alone: not built) */
	CHECK(rpcr_svc_create(P, &sc) == NULL && rte_errno == EINVAL);
	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	sc.inline_recv = 1024; /* (version 2's peers may send 4096) */
	CHECK(rpcr_svc_create(P, &sc) == NULL && rte_errno == EINVAL);
	sc.inline_recv = 0;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	if (s == NULL)
		return;
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp == NULL) {
		rpcr_svc_destroy(s);
		return;
	}
	rpcr_xprt_stats_get(P, &st0);
	/* NULL, asking for 8 (the high half), from a client that sends no properties: the
	 * server's RDMA2_CONNPROP first (§6.3.4: its sizes, no segment limit, the segments its
	 * decoder takes, its HOSTAUTH), granting 4; then the reply (RESPONSE, the server's 4
	 * granted), the RPC reply after. */
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), 0x300, 8u << 16 | 2, 0, RPCR_TESTPROG_NULL, NULL, NULL,
			    0),
		0);
	polls(3);
	w = take(qp);
	if (w != NULL) {
		struct rpcr_proto_v2_props o;

		CHECK(v2_sent(w, &h) > 0 && h.xid == 0x300 && h.credit == (4u << 16 | 4));
		props_sent(w, &o);
		CHECK(o.sbsiz == 4096 && o.rbsiz == 4096 && o.rssiz == UINT32_MAX && o.rcsiz == 32);
		CHECK(o.has_hostauth && o.hostauth_len == 3 && memcmp(o.hostauth, "srv", 3) == 0);
		w = take(qp);
	}
	CHECK(w != NULL);
	if (w != NULL) {
		hl = v2_sent(w, &h);
		CHECK_EQ(hl, RPCR_PROTO_V2_HDR_MIN);
		CHECK_EQ(h.xid, 0x300);
		CHECK_EQ(h.htype, RPCR_PROTO_V2_MSG);
		CHECK_EQ(h.flags, RPCR_PROTO_V2_F_RESPONSE);
		CHECK_EQ(h.credit & 0xffff, 4);
		CHECK_EQ(h.credit >> 16, 4);
		CHECK_EQ(h.inv_handle, 0);
		CHECK_EQ(w->len, RPCR_PROTO_V2_HDR_MIN + 24);
		CHECK_EQ(w32(w->data + RPCR_PROTO_V2_HDR_MIN, 0), 0x300);
		CHECK_EQ(w32(w->data + RPCR_PROTO_V2_HDR_MIN, 1), RPCR_ONCRPC_REPLY);
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND); /* (not with Invalidate) */
	}
	/* ECHO of 3000 bytes: a read chunk in (key 0x77 at 0x10000, position 44), a write chunk
	 * for the result (two segments of the same key). Version 2 invalidates by the handle the
	 * call names (§6.3.1), not by RFC 8797's R bit: none named, a plain Send; 0x77 named, Send
	 * with Invalidate of 0x77; 0x99 (no chunk's) named, a plain Send. */
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 11 + 3);
	for (k = 0; k < 3; k++) {
		static const uint32_t named[3] = {0, 0x77, 0x99};
		uint32_t xid = 0x301 + 0x1000 * k;

		{
			struct rpcr_proto_rseg rd = {.position = 44, .seg = {0x77, 3000, 0x10000}};
			struct rpcr_proto_seg ws[2] = {{0x77, 2000, 0x20000},
						       {0x77, 2000, 0x30000}};
			struct rpcr_proto_wchunk wc = {.segs = ws, .nsegs = 2};
			struct rpcr_proto_chunks ch;
			uint32_t len = rte_cpu_to_be_32(3000);

			rpcr_proto_chunks_init(&ch, &rd, 1, &wc, 1, ws, 2);
			ch.nreads = 1;
			ch.nwrites = 1;
			ch.nsegs = 2;
			n = call_msg_v2(m, sizeof(m), xid, 8u << 16 | 2, 0, RPCR_TESTPROG_ECHO, &ch,
					&len, 4);
			rpcr_xdr_store32(m + 20, named[k]); /* rdma_inv_handle */
		}
		deliver(qp, m, n, 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ && w->wr.rkey == 0x77 &&
		      w->wr.remote_addr == 0x10000);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, src);
		polls(3);
		/* Two RDMA Writes of the result, then the reply with the write list's lengths. */
		for (n = 0, i = 0; i < 2; i++) {
			w = take(qp);
			CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_WRITE &&
			      w->wr.rkey == 0x77);
			if (w != NULL && w->wr.opcode == RPCR_RDEV_WR_WRITE) {
				CHECK(n + w->len <= sizeof(src) &&
				      memcmp(w->data, src + n, w->len) == 0);
				n += w->len;
			}
		}
		CHECK_EQ(n, 3000);
		w = take(qp);
		CHECK(w != NULL);
		if (w != NULL) {
			CHECK(v2_sent(w, &h) > 0);
			CHECK_EQ(h.xid, xid);
			CHECK_EQ(h.flags, RPCR_PROTO_V2_F_RESPONSE);
			CHECK_EQ(h.chunks.nwrites, 1);
			CHECK_EQ(h.chunks.nreads, 0);
			CHECK(h.chunks.nwrites == 1 && h.chunks.writes[0].nsegs == 2 &&
			      h.chunks.writes[0].segs[0].length +
					      h.chunks.writes[0].segs[1].length ==
				      3000);
			if (k == 1)
				CHECK(w->wr.opcode == RPCR_RDEV_WR_SEND_INV &&
				      w->wr.invalidate_rkey == 0x77);
			else
				CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	/* Version 1 on this connection now: ERR_VERS with the range served, in the failing
	 * message's version (RFC 8166 section 4.5; the draft's §7). */
	deliver(qp, m, call_msg(m, 0x302, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		CHECK_EQ(w->len, 28);
		CHECK_EQ(w32(w->data, 0), 0x302);
		CHECK_EQ(w32(w->data, 1), 1);
		CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_ERROR);
		CHECK_EQ(w32(w->data, 4), RPCR_PROTO_V1_ERR_VERS);
		CHECK(w32(w->data, 5) == 1 && w32(w->data, 6) == 2);
	}
	/* The client's properties in two messages (TPMORE, §6.2.2.3), applied as they come:
	 * RBSIZ 2048 makes the server's inline_send 2048; then RBSIZ 512 (not taken: BAD_PROPVAL,
	 * the whole message discarded), and again without it: SBSIZ 2048 its inline_recv, BRS,
	 * and HOSTAUTH the hook takes. */
	{
		struct rpcr_proto_v2_prop pr[4];
		struct rpcr_xprt_conn_info ci;
		uint8_t v[3][4], ha[16];

		rpcr_proto_v2_prop_set_u32(&pr[0], RPCR_PROTO_V2_PROP_RBSIZ, v[0], 2048);
		deliver(qp, m, props_msg(m, sizeof(m), 0x303, RPCR_PROTO_V2_F_TPMORE, pr, 1), 0);
		polls(3);
		CHECK(take(qp) == NULL);
		ci = svc_conn_info();
		CHECK(ci.rdma_vers == 2 && ci.props.received && !ci.props.complete);
		CHECK(ci.inline_send == 2048 && ci.inline_recv == 4096 && ci.props.rbsiz == 2048);
		rpcr_proto_v2_prop_set_u32(&pr[0], RPCR_PROTO_V2_PROP_RBSIZ, v[0], 512);
		rpcr_proto_v2_prop_set_u32(&pr[1], RPCR_PROTO_V2_PROP_SBSIZ, v[1], 2048);
		rpcr_proto_v2_prop_set_u32(&pr[2], RPCR_PROTO_V2_PROP_BRS, v[2],
					   RPCR_PROTO_V2_RVRSDIR_SIMPLE);
		rpcr_xdr_store32(ha, 9);
		memcpy(ha + 4, "let-me-in\0\0\0", 12);
		pr[3] = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH, 16, ha};
		deliver(qp, m, props_msg(m, sizeof(m), 0x3031, 0, pr, 4), 0);
		expect_v2_error(qp, 0x3031, RPCR_PROTO_V2_ERR_BAD_PROPVAL);
		/* (§7.2.2: none of that message's settings applied; the set still open) */
		ci = svc_conn_info();
		CHECK(!ci.props.complete && !ci.props.hostauth && ci.props.sbsiz == 4096);
		deliver(qp, m, props_msg(m, sizeof(m), 0x3032, 0, pr + 1, 3), 0);
		polls(3);
		CHECK(take(qp) == NULL);
		ci = svc_conn_info();
		CHECK(ci.props.complete && ci.props.hostauth && ci.props.brs == 1);
		CHECK(ci.inline_send == 2048 && ci.inline_recv == 2048 && ci.props.sbsiz == 2048);
		CHECK_EQ(qp->disconnects, 0); /* (HOSTAUTH taken) */
	}
	/* An optional operation not known (the xcharext ones are case_v2_xchar's): INVAL_HTYPE
	 * (the sender's cue to stop). */
	{
		static const uint8_t body[8] = {0, 0, 0, 0, 0, 0, 0, 0};

		v2_hdr(&h, 0x304, 1, RPCR_PROTO_V2_OPTIONAL);
		h.opttype = 9;
		h.optinfo = body;
		h.optinfo_len = 8;
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, (uint32_t)hl, 0);
		expect_v2_error(qp, 0x304, RPCR_PROTO_V2_ERR_INVAL_HTYPE);
	}
	/* Resources (§7.3.4, §7.3.5): a READ of 2000 bytes into a write chunk of 100: WRITE_RESOURCE
	 * naming chunk 1 and 2000 bytes; a READ of 6000 bytes with neither a write chunk nor a
	 * reply chunk (longer than a Send of 4096): REPLY_RESOURCE with the reply's length. */
	{
		struct rpcr_proto_seg ws = {0x88, 100, 0x40000};
		struct rpcr_proto_wchunk wc = {.segs = &ws, .nsegs = 1};
		struct rpcr_proto_chunks ch;
		uint32_t len = rte_cpu_to_be_32(2000);

		rpcr_proto_chunks_init(&ch, NULL, 0, &wc, 1, &ws, 1);
		ch.nwrites = 1;
		ch.nsegs = 1;
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x30b, 1, 0, RPCR_TESTPROG_READ, &ch, &len, 4),
			0);
		w = expect_v2_error(qp, 0x30b, RPCR_PROTO_V2_ERR_WRITE_RESOURCE);
		if (w != NULL) {
			v2_sent(w, &h);
			CHECK(h.chunk_index == 1 && h.length_needed == 2000);
		}
		len = rte_cpu_to_be_32(6000);
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x30c, 1, 0, RPCR_TESTPROG_READ, NULL, &len, 4),
			0);
		w = expect_v2_error(qp, 0x30c, RPCR_PROTO_V2_ERR_REPLY_RESOURCE);
		if (w != NULL) {
			v2_sent(w, &h);
			CHECK_EQ(h.length_needed, 24 + 4 + 6000);
		}
		polls(3);
		CHECK(take(qp) == NULL);
	}
	/* TPMORE on a call (on anything but CONNPROP): INVAL_HTYPE, not served (§6.2.2.3). */
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), 0x30a, 1, RPCR_PROTO_V2_F_TPMORE, RPCR_TESTPROG_NULL,
			    NULL, NULL, 0),
		0);
	expect_v2_error(qp, 0x30a, RPCR_PROTO_V2_ERR_INVAL_HTYPE);
	polls(3);
	CHECK(take(qp) == NULL);
	/* A continued message: reassembled (its first part a whole call, two empty parts
	 * after), then served once (case_v2_cont has the rules). */
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), 0x305, 1, RPCR_PROTO_V2_F_MORE, RPCR_TESTPROG_NULL, NULL,
			    NULL, 0),
		0);
	for (i = 0; i < 2; i++) {
		polls(3);
		CHECK(take(qp) == NULL);
		v2_hdr(&h, 0x305, 1, RPCR_PROTO_V2_MSG);
		h.flags = i == 0 ? RPCR_PROTO_V2_F_MORE : 0;
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, (uint32_t)hl, 0);
	}
	polls(3);
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.xid == 0x305 &&
	      h.flags == RPCR_PROTO_V2_F_RESPONSE);
	/* A credit refresh (NOMSG, no chunk): taken silently (§6.3.2). */
	v2_hdr(&h, 0, 4, RPCR_PROTO_V2_NOMSG);
	hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, (uint32_t)hl, 0);
	polls(3);
	CHECK(take(qp) == NULL);
	/* A second property set after one that said it was complete: INVAL_HTYPE (§6.2.2.3). */
	{
		struct rpcr_proto_v2_prop pr;
		uint8_t v[4];

		v2_hdr(&h, 0x308, 1, RPCR_PROTO_V2_CONNPROP);
		rpcr_proto_v2_prop_set_u32(&pr, RPCR_PROTO_V2_PROP_SBSIZ, v, 4096);
		h.props = (struct rpcr_proto_v2_propset){&pr, 1, 1};
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, (uint32_t)hl, 0);
		expect_v2_error(qp, 0x308, RPCR_PROTO_V2_ERR_INVAL_HTYPE);
	}
	/* More read segments than the server takes: READ_CHUNKS with its limit (§7.3.1). */
	{
		static struct rpcr_proto_rseg rd[33];
		struct rpcr_proto_chunks ch;

		for (i = 0; i < 33; i++)
			rd[i] = (struct rpcr_proto_rseg){44, {0x90 + i, 8, 0x1000 * i}};
		rpcr_proto_chunks_init(&ch, rd, 33, NULL, 0, NULL, 0);
		ch.nreads = 33;
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x309, 1, 0, RPCR_TESTPROG_ECHO, &ch, NULL, 0),
			0);
		w = expect_v2_error(qp, 0x309, RPCR_PROTO_V2_ERR_READ_CHUNKS);
		if (w != NULL) {
			v2_sent(w, &h);
			CHECK_EQ(h.max_chunks, 8);
		}
	}
	/* Header type 3 (not defined), and a MSG cut after its handle: the decoder's errors. */
	{
		const uint32_t bad_type[9] = {0x306, 2, 1, 3, 0, 0, 0, 0, 0};
		const uint32_t cut[7] = {0x307, 2, 1, RPCR_PROTO_V2_MSG, 0, 0, 1};

		deliver_raw(qp, bad_type, 9);
		expect_v2_error(qp, 0x306, RPCR_PROTO_V2_ERR_INVAL_HTYPE);
		deliver_raw(qp, cut, 7);
		expect_v2_error(qp, 0x307, RPCR_PROTO_V2_ERR_BAD_XDR);
	}
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.props_recv - st0.props_recv, 2);
	CHECK_EQ(st1.props_sent - st0.props_sent, 1);
	CHECK_EQ(st1.replies_sent - st0.replies_sent, 5); /* (NULL twice, the three ECHOs) */
	CHECK_EQ(st1.rdma_errors_sent - st0.rdma_errors_sent, 10);
	CHECK_EQ(st1.send_invs - st0.send_invs, 1);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	poll_ms(2);

	/* Another connection, version 1 first: version 1 it stays. */
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp != NULL) {
		deliver(qp, m, call_msg(m, 0x400, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && w->len == 28 + 24 && w32(w->data, 1) == 1 &&
		      w32(w->data, 3) == RPCR_PROTO_V1_MSG);
		/* ... and answers version 2 in version 2, with the range served. */
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x401, 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
			0);
		w = expect_v2_error(qp, 0x401, RPCR_PROTO_V2_ERR_VERS);
		if (w != NULL) {
			v2_sent(w, &h);
			CHECK(h.vers_low == 1 && h.vers_high == 2);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		flush_recvs(qp);
		poll_ms(2);
	}
	/* A peer whose RFC 8797 private data says 1024: version 2 ignores it and both sides take
	 * 4096 (§4.2.2): a READ of 2000 bytes comes back inline, no chunk needed. */
	qp = accept_one(s, pd, peer_pdata(pd, 1024, 1024, true, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp != NULL) {
		uint32_t len = rte_cpu_to_be_32(2000);

		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x500, 1, 0, RPCR_TESTPROG_READ, NULL, &len, 4),
			0);
		polls(3);
		w = take(qp); /* (the server's CONNPROP) */
		CHECK(w != NULL && v2_sent(w, &h) > 0 && h.htype == RPCR_PROTO_V2_CONNPROP);
		w = take(qp);
		CHECK(w != NULL);
		if (w != NULL) {
			CHECK(v2_sent(w, &h) > 0);
			CHECK_EQ(h.htype, RPCR_PROTO_V2_MSG);
			CHECK_EQ(h.xid, 0x500);
			CHECK_EQ(w->len, RPCR_PROTO_V2_HDR_MIN + 24 + 4 + 2000);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		flush_recvs(qp);
		poll_ms(2);
	}
	server_end(s, NULL);

	/* A server that judges HOSTAUTH (§5.2.6, local policy): a client's properties complete
	 * with the HOSTAUTH the hook takes, then its call served; one with a HOSTAUTH refused,
	 * and one whose first message is a call (no properties yet): their connections closed. */
	sc.hostauth_check = hostauth_ok;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	if (s == NULL)
		return;
	for (k = 0; k < 3; k++) {
		struct rpcr_proto_v2_prop pr;
		uint8_t ha[16];
		uint32_t live;

		qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX), &req);
		CHECK(qp != NULL);
		if (qp == NULL)
			break;
		live = nqps_live;
		memset(ha, 0, sizeof(ha));
		rpcr_xdr_store32(ha, k == 0 ? 9 : 3);
		memcpy(ha + 4, k == 0 ? "let-me-in" : "bad", k == 0 ? 9 : 3);
		pr = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH, k == 0 ? 16 : 8, ha};
		if (k < 2)
			deliver(qp, m, props_msg(m, sizeof(m), 0x600 + k, 0, &pr, 1), 0);
		else
			deliver(qp, m,
				call_msg_v2(m, sizeof(m), 0x602, 1, 0, RPCR_TESTPROG_NULL, NULL,
					    NULL, 0),
				0);
		polls(3);
		if (k != 0) {
			CHECK_EQ(nqps_live, live - 1); /* (closed, its QP gone) */
			continue;
		}
		w = take(qp); /* (the server's CONNPROP) */
		CHECK(w != NULL && v2_sent(w, &h) > 0 && h.htype == RPCR_PROTO_V2_CONNPROP);
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x610, 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
			0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0 && h.htype == RPCR_PROTO_V2_MSG &&
		      h.xid == 0x610);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		flush_recvs(qp);
		poll_ms(2);
	}
	server_end(s, NULL);
}

/* A client of versions 1 and 2 on connection @qp (just established): its first message is its
 * RDMA2_CONNPROP, alone, under 1024 bytes, asking 8 (high half), granting 1 (low): its sizes,
 * no segment limit, no reverse direction, its HOSTAUTH ("cli" where @auth). A call made now
 * waits. @return the CONNPROP's xid. */
static uint32_t
v2_probe(struct rpcr_clnt *cl, struct fake_qp *qp, struct tcall *t, bool auth)
{
	struct rpcr_proto_v2_props o;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_clnt_info info;
	struct fake_wr *w;

	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK(info.rdma_vers == 2 && info.negotiating && info.inline_send == 1024 &&
	      !info.props.received);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return 0;
	CHECK(take(qp) == NULL); /* (alone, §4.2.3) */
	CHECK(w->len <= 1024);
	CHECK(v2_sent(w, &h) > 0 && h.vers == 2 && h.credit == (8u << 16 | 1));
	props_sent(w, &o);
	CHECK(o.sbsiz == 4096 && o.rbsiz == 4096 && o.rssiz == UINT32_MAX &&
	      o.brs == RPCR_PROTO_V2_RVRSDIR_NONE);
	CHECK(o.has_hostauth == auth);
	if (auth)
		CHECK(o.hostauth_len == 3 && memcmp(o.hostauth, "cli", 3) == 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	tcall_init(t, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t->call);
	polls(3);
	CHECK(take(qp) == NULL); /* (the call waits for the answer) */
	return h.xid;
}

/* The server's RDMA2_CONNPROP to a client (credit word @credit): RBSIZ 8192, SBSIZ 2048, RSSIZ
 * 4096, RCSIZ 4, and HOSTAUTH @auth (NULL: none). */
static void
server_props(struct fake_qp *qp, uint32_t credit, const char *auth)
{
	struct rpcr_proto_v2_prop pr[5];
	struct rpcr_proto_v2_hdr h;
	uint8_t v[4][4], ha[20], m[256];
	uint32_t n = 4;
	ssize_t hl;

	rpcr_proto_v2_prop_set_u32(&pr[0], RPCR_PROTO_V2_PROP_RBSIZ, v[0], 8192);
	rpcr_proto_v2_prop_set_u32(&pr[1], RPCR_PROTO_V2_PROP_SBSIZ, v[1], 2048);
	rpcr_proto_v2_prop_set_u32(&pr[2], RPCR_PROTO_V2_PROP_RSSIZ, v[2], 4096);
	rpcr_proto_v2_prop_set_u32(&pr[3], RPCR_PROTO_V2_PROP_RCSIZ, v[3], 4);
	if (auth != NULL) {
		uint32_t l = (uint32_t)strlen(auth);

		memset(ha, 0, sizeof(ha));
		rpcr_xdr_store32(ha, l);
		memcpy(ha + 4, auth, l);
		pr[n++] = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH,
						      4 + (uint32_t)rpcr_xdr_roundup(l), ha};
	}
	v2_hdr(&h, 0x77, credit, RPCR_PROTO_V2_CONNPROP);
	h.props = (struct rpcr_proto_v2_propset){pr, n, n};
	hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
	CHECK(hl > 0);
	deliver(qp, m, (uint32_t)hl, 0);
	polls(3);
}

/* A server of versions 1 and 2 with @credits (@xchar: sending its characteristics) and a
 * connection of it made version 2 by a NULL call @xid, whose first answer (the server's
 * RDMA2_CONNPROP) is taken here. @return the connection, the server in @sp; NULL after a failed
 * check (nothing left). */
static struct fake_qp *
v2_server(uint32_t credits, bool xchar, uint32_t xid, struct rpcr_svc **sp)
{
	static struct fake_req req;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_svc_conf sc;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[256];

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = credits;
	sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	sc.xchar = xchar;
	*sp = rpcr_svc_create(P, &sc);
	CHECK(*sp != NULL && rpcr_testprog_register(*sp, 0) == 0);
	if (*sp == NULL)
		return NULL;
	qp = accept_one(*sp, pd, peer_pdata(pd, 4096, 4096, false, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp == NULL) {
		rpcr_svc_destroy(*sp);
		return NULL;
	}
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), xid, 8u << 16 | 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
		0);
	polls(3);
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.htype == RPCR_PROTO_V2_CONNPROP);
	return qp;
}

/* An RPC call of the test program (@xid, @proc) with @alen bytes of arguments, at @buf. @return
 * its length. */
static uint32_t
rpc_call(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t proc, const void *args, uint32_t alen)
{
	struct rpcr_oncrpc_call call = {
		.xid = xid, .rpcvers = 2, .prog = RPCR_TESTPROG, .vers = 1, .proc = proc};
	ssize_t k = rpcr_oncrpc_call_encode(&call, buf, cap);

	CHECK(k > 0 && (uint32_t)k + alen <= cap);
	if (k <= 0 || (uint32_t)k + alen > cap)
		return 0;
	if (alen != 0)
		memcpy(buf + k, args, alen);
	return (uint32_t)k + alen;
}

/* Deliver RPC message @rpc (@len bytes) as a continued version-2 message of @xid (credit word
 * @credit, @flags): parts of @part bytes with MORE, the last (MORE clear) with chunk lists @ch
 * (NULL: none). @return the parts. */
static uint32_t
deliver_cont(struct fake_qp *qp, uint32_t xid, uint32_t credit, uint32_t flags, const uint8_t *rpc,
	     uint32_t len, uint32_t part, const struct rpcr_proto_chunks *ch)
{
	static uint8_t m[4096];
	struct rpcr_proto_v2_hdr h;
	uint32_t off = 0, k = 0;
	ssize_t hl;

	do {
		uint32_t n = RTE_MIN(part, len - off);
		bool last = off + n == len;

		v2_hdr(&h, xid, credit, RPCR_PROTO_V2_MSG);
		h.flags = flags | (last ? 0 : RPCR_PROTO_V2_F_MORE);
		if (last && ch != NULL)
			h.chunks = *ch;
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		CHECK(hl > 0 && (uint32_t)hl + n <= sizeof(m));
		memcpy(m + hl, rpc + off, n);
		CHECK_EQ(deliver(qp, m, (uint32_t)hl + n, 0), 0);
		off += n;
		k++;
	} while (off < len);
	return k;
}

/* The Sends of a continued version-2 message of @xid on @qp (each but the last with MORE, all
 * with @flags' RESPONSE): its payload gathered at @out (@cap), the last header in @h. @return
 * the payload's length; the parts in @parts (0: none came). */
static uint32_t
take_cont(struct fake_qp *qp, uint32_t xid, uint32_t flags, uint8_t *out, uint32_t cap,
	  struct rpcr_proto_v2_hdr *h, uint32_t *parts)
{
	uint32_t len = 0;
	struct fake_wr *w;
	ssize_t hl;

	*parts = 0;
	while ((w = take(qp)) != NULL) {
		hl = v2_sent(w, h);
		CHECK(hl > 0);
		if (hl <= 0)
			break;
		CHECK(w->len <= 4096);
		CHECK_EQ(h->xid, xid);
		CHECK_EQ(h->htype, RPCR_PROTO_V2_MSG);
		CHECK_EQ(h->flags & ~RPCR_PROTO_V2_F_MORE, flags);
		if (len + (w->len - (uint32_t)hl) <= cap)
			memcpy(out + len, w->data + hl, w->len - (uint32_t)hl);
		len += w->len - (uint32_t)hl;
		(*parts)++;
		if (!(h->flags & RPCR_PROTO_V2_F_MORE))
			break;
		/* (Chunks only in the last part, §6.2.2.2.) */
		CHECK(h->chunks.nreads == 0 && h->chunks.nwrites == 0 && !h->chunks.has_reply);
	}
	return len;
}

/* The READ sequence's byte @i (testprog.c). */
static inline uint8_t
read_byte(uint32_t i)
{
	return (uint8_t)((i * 31 + 7) & 0xff);
}

/*
 * Version 2's message continuation on a server (§4.4.2, §6.2.2.2, §7.1.3; lib/xprt/cont.c): a
 * call in three parts is reassembled and served; a reply that fits no Send goes in as many parts
 * as the call's credit word grants (its low half), else REPLY_RESOURCE; an ECHO of 6000 bytes
 * in parts comes back in parts, data equal. The rules, each answered INVAL_CONT and the rest of
 * the failing message discarded silently: MORE with a chunk, MORE on RDMA2_NOMSG, another xid in
 * the middle of a message (both answered), the last part of another type; longer than a
 * reassembly buffer: SYSTEM; a continued CONNPROP reassembled and applied. The well-formed calls between them
 * are served, and the receives keep up (every part is one).
 */
static void
case_v2_cont(void)
{
	static uint8_t rpc[70000], out[70000];
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_svc *s;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t m[512], arg[6004];
	uint32_t i, n, len, parts;

	qp = v2_server(8, false, 0x400, &s);
	if (qp == NULL)
		return;
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.xid == 0x400);
	rpcr_xprt_stats_get(P, &st0);

	/* NULL in three parts (MORE, MORE, last): served once, as one call. */
	n = rpc_call(rpc, sizeof(rpc), 0x401, RPCR_TESTPROG_NULL, NULL, 0);
	CHECK_EQ(deliver_cont(qp, 0x401, 8u << 16 | 1, 0, rpc, n, 16, NULL), 3);
	polls(3);
	len = take_cont(qp, 0x401, RPCR_PROTO_V2_F_RESPONSE, out, sizeof(out), &h, &parts);
	CHECK(parts == 1 && len == 24 && w32(out, 0) == 0x401);

	/* READ of 6000 bytes granting 3 Sends: a continued reply of 2 parts, the data whole. */
	rpcr_xdr_store32(arg, 6000);
	n = rpc_call(rpc, sizeof(rpc), 0x402, RPCR_TESTPROG_READ, arg, 4);
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), 0x402, 8u << 16 | 3, 0, RPCR_TESTPROG_READ, NULL, arg, 4),
		0);
	polls(3);
	len = take_cont(qp, 0x402, RPCR_PROTO_V2_F_RESPONSE, out, sizeof(out), &h, &parts);
	CHECK_EQ(parts, 2);
	CHECK_EQ(len, 24 + 4 + 6000);
	CHECK(w32(out, 0) == 0x402 && w32(out, 1) == RPCR_ONCRPC_REPLY && w32(out, 5) == 0 &&
	      w32(out, 6) == 6000);
	for (i = 0; i < 6000 && out[28 + i] == read_byte(i); i++)
		;
	CHECK_EQ(i, 6000);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	/* READ of 8150 granting 2 Sends (it takes 3): REPLY_RESOURCE, the length needed. */
	rpcr_xdr_store32(arg, 8150);
	deliver(qp, m,
		call_msg_v2(m, sizeof(m), 0x403, 8u << 16 | 2, 0, RPCR_TESTPROG_READ, NULL, arg, 4),
		0);
	w = expect_v2_error(qp, 0x403, RPCR_PROTO_V2_ERR_REPLY_RESOURCE);
	if (w != NULL) {
		v2_sent(w, &h);
		CHECK_EQ(h.length_needed, 8180); /* (8150 rounded up, behind 28 bytes) */
	}
	/* ECHO of 6000 bytes in parts of 2500, granting 3: comes back in 2 parts, equal. */
	rpcr_xdr_store32(arg, 6000);
	for (i = 0; i < 6000; i++)
		arg[4 + i] = (uint8_t)(i * 13 + 5);
	n = rpc_call(rpc, sizeof(rpc), 0x404, RPCR_TESTPROG_ECHO, arg, 6004);
	CHECK_EQ(deliver_cont(qp, 0x404, 8u << 16 | 3, 0, rpc, n, 2500, NULL), 3);
	polls(3);
	len = take_cont(qp, 0x404, RPCR_PROTO_V2_F_RESPONSE, out, sizeof(out), &h, &parts);
	CHECK_EQ(parts, 2);
	CHECK(len == 24 + 6004 && memcmp(out + 24, arg, 6004) == 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);

	/* MORE with a write chunk: INVAL_CONT; its next and last parts dropped silently. */
	{
		struct rpcr_proto_seg ws = {0x55, 64, 0x9000}, segs[2];
		struct rpcr_proto_wchunk wch[1];
		struct rpcr_proto_chunks ch;

		rpcr_proto_chunks_init(&ch, NULL, 0, wch, 1, segs, 2);
		CHECK_EQ(rpcr_proto_chunks_add_write(&ch, &ws, 1), 0);
		v2_hdr(&h, 0x405, 1, RPCR_PROTO_V2_MSG);
		h.flags = RPCR_PROTO_V2_F_MORE;
		h.chunks = ch;
		n = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, n + 8, 0);
		expect_v2_error(qp, 0x405, RPCR_PROTO_V2_ERR_INVAL_CONT);
		n = rpc_call(rpc, sizeof(rpc), 0x405, RPCR_TESTPROG_NULL, NULL, 0);
		deliver_cont(qp, 0x405, 1, 0, rpc, n, 20, NULL);
		polls(3);
		CHECK(take(qp) == NULL);
	}
	/* MORE on RDMA2_NOMSG: INVAL_CONT (the decoder's), its last part dropped. */
	v2_hdr(&h, 0x406, 1, RPCR_PROTO_V2_NOMSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	n = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, n, 0);
	expect_v2_error(qp, 0x406, RPCR_PROTO_V2_ERR_INVAL_CONT);
	n = rpc_call(rpc, sizeof(rpc), 0x406, RPCR_TESTPROG_NULL, NULL, 0);
	deliver_cont(qp, 0x406, 1, 0, rpc, n, n, NULL);
	polls(3);
	CHECK(take(qp) == NULL);
	/* Another xid in the middle of a message: both answered INVAL_CONT; the broken one's
	 * last part dropped; the next call served. */
	n = rpc_call(rpc, sizeof(rpc), 0x407, RPCR_TESTPROG_NULL, NULL, 0);
	v2_hdr(&h, 0x407, 1, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	memcpy(m + i, rpc, 20);
	deliver(qp, m, i + 20, 0);
	polls(3);
	CHECK(take(qp) == NULL); /* (the rest awaited) */
	deliver(qp, m, call_msg_v2(m, sizeof(m), 0x408, 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
		0);
	expect_v2_error(qp, 0x407, RPCR_PROTO_V2_ERR_INVAL_CONT);
	expect_v2_error(qp, 0x408, RPCR_PROTO_V2_ERR_INVAL_CONT);
	v2_hdr(&h, 0x407, 1, RPCR_PROTO_V2_MSG);
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	memcpy(m + i, rpc + 20, n - 20);
	deliver(qp, m, i + n - 20, 0);
	polls(3);
	CHECK(take(qp) == NULL);
	deliver(qp, m, call_msg_v2(m, sizeof(m), 0x409, 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
		0);
	polls(3);
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.xid == 0x409 &&
	      h.flags == RPCR_PROTO_V2_F_RESPONSE);
	/* Another xid with MORE in the middle: both answered; the rest of each dropped (both
	 * discarded, §7.1.3), then calls served again. */
	v2_hdr(&h, 0x410, 1, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	memcpy(m + i, rpc, 20);
	deliver(qp, m, i + 20, 0);
	v2_hdr(&h, 0x411, 1, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, i + 20, 0);
	expect_v2_error(qp, 0x410, RPCR_PROTO_V2_ERR_INVAL_CONT);
	expect_v2_error(qp, 0x411, RPCR_PROTO_V2_ERR_INVAL_CONT);
	for (n = 0x410; n <= 0x411; n++) {
		v2_hdr(&h, n, 1, RPCR_PROTO_V2_MSG);
		i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
		memcpy(m + i, rpc, 24);
		rpcr_xdr_store32(m + i, n); /* (a last part that would look like a call) */
		deliver(qp, m, i + 24, 0);
	}
	polls(3);
	CHECK(take(qp) == NULL);
	/* A part of its own the decoder refuses (MORE with a chunk): one answer, the rest of it
	 * dropped. */
	v2_hdr(&h, 0x412, 1, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, i + 20, 0);
	{
		struct rpcr_proto_seg ws = {0x55, 64, 0x9000}, segs[2];
		struct rpcr_proto_wchunk wch[1];
		struct rpcr_proto_chunks ch;

		rpcr_proto_chunks_init(&ch, NULL, 0, wch, 1, segs, 2);
		CHECK_EQ(rpcr_proto_chunks_add_write(&ch, &ws, 1), 0);
		v2_hdr(&h, 0x412, 1, RPCR_PROTO_V2_MSG);
		h.flags = RPCR_PROTO_V2_F_MORE;
		h.chunks = ch;
		i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, i + 8, 0);
	}
	expect_v2_error(qp, 0x412, RPCR_PROTO_V2_ERR_INVAL_CONT);
	v2_hdr(&h, 0x412, 1, RPCR_PROTO_V2_MSG);
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, i + 8, 0);
	polls(3);
	CHECK(take(qp) == NULL);
	/* The last part of another type (RDMA2_NOMSG): INVAL_CONT, once. */
	v2_hdr(&h, 0x40a, 1, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_MORE;
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, i + 8, 0);
	v2_hdr(&h, 0x40a, 1, RPCR_PROTO_V2_NOMSG);
	i = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, i, 0);
	expect_v2_error(qp, 0x40a, RPCR_PROTO_V2_ERR_INVAL_CONT);
	polls(3);
	CHECK(take(qp) == NULL);
	/* Longer than a reassembly buffer (61440 bytes): SYSTEM when it goes over, the rest
	 * dropped; the receives kept up with every part (17 parts, 8 credits). */
	memset(out, 0, 65000);
	n = rpc_call(rpc, sizeof(rpc), 0x40b, RPCR_TESTPROG_ECHO, out, 65000 - 40);
	for (i = 0; i * 4000 < n; i++) {
		uint32_t k = RTE_MIN(4000u, n - i * 4000);

		v2_hdr(&h, 0x40b, 1, RPCR_PROTO_V2_MSG);
		h.flags = i * 4000 + k < n ? RPCR_PROTO_V2_F_MORE : 0;
		len = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
		{
			static uint8_t big[4096];

			memcpy(big, m, len);
			memcpy(big + len, rpc + i * 4000, k);
			CHECK_EQ(deliver(qp, big, len + k, 0), 0);
		}
		polls(1);
	}
	expect_v2_error(qp, 0x40b, RPCR_PROTO_V2_ERR_SYSTEM);
	polls(3);
	CHECK(take(qp) == NULL);
	/* A continued CONNPROP: its property list in pieces of 100 bytes (cut inside a property,
	 * no part decodable alone), reassembled and applied, nothing answered. */
	{
		static uint8_t ha[4 + 300], whole[1024], part[256];
		struct rpcr_proto_v2_prop pr[3];
		struct rpcr_xprt_conn_info ci;
		uint8_t v[2][4];
		uint32_t wl, off, np = 0;

		rpcr_xdr_store32(ha, 300);
		memset(ha + 4, 0xa5, 300);
		rpcr_proto_v2_prop_set_u32(&pr[0], RPCR_PROTO_V2_PROP_RBSIZ, v[0], 2048);
		rpcr_proto_v2_prop_set_u32(&pr[1], RPCR_PROTO_V2_PROP_BRS, v[1],
					   RPCR_PROTO_V2_RVRSDIR_SIMPLE);
		pr[2] = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH, sizeof(ha), ha};
		wl = props_msg(whole, sizeof(whole), 0x40c, 0, pr, 3);
		CHECK(wl > 300);
		for (off = RPCR_PROTO_V2_PREFIX; off < wl; off += 100, np++) {
			uint32_t pl = RTE_MIN(100u, wl - off);

			memcpy(part, whole, RPCR_PROTO_V2_PREFIX);
			rpcr_xdr_store32(part + 16, off + pl < wl ? RPCR_PROTO_V2_F_MORE : 0);
			memcpy(part + RPCR_PROTO_V2_PREFIX, whole + off, pl);
			CHECK_EQ(deliver(qp, part, RPCR_PROTO_V2_PREFIX + pl, 0), 0);
			polls(1);
		}
		CHECK(np >= 4);
		polls(3);
		CHECK(take(qp) == NULL);
		ci = svc_conn_info();
		CHECK(ci.props.complete && ci.props.rbsiz == 2048 && ci.props.hostauth &&
		      ci.props.brs == RPCR_PROTO_V2_RVRSDIR_SIMPLE);
	}
	/* ... and the connection still serves. */
	deliver(qp, m, call_msg_v2(m, sizeof(m), 0x40d, 1, 0, RPCR_TESTPROG_NULL, NULL, NULL, 0),
		0);
	polls(3);
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.xid == 0x40d);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.cont_recv - st0.cont_recv, 3); /* (NULL, ECHO, CONNPROP) */
	CHECK_EQ(st1.cont_sent - st0.cont_sent, 2); /* (READ, ECHO) */
	CHECK_EQ(st1.cont_parts_sent - st0.cont_parts_sent, 4);
	CHECK_EQ(st1.cont_errors - st0.cont_errors,
		 6); /* (the decoder refuses three: bad_headers) */
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	polls(3);
	rpcr_svc_destroy(s);
}

/* The transport-characteristics operation Send @w carries, into @x (its arrays static). @return
 * 0, or the decoder's error. */
static int
xchar_sent(const struct fake_wr *w, struct rpcr_proto_xchar *x, uint32_t *xid, uint32_t *flags)
{
	static struct rpcr_proto_xchar_val vals[8];
	static uint32_t words[3][2];
	struct rpcr_proto_v2_hdr h;
	uint32_t i;

	if (v2_sent(w, &h) <= 0 || h.htype != RPCR_PROTO_V2_OPTIONAL)
		return -1;
	*xid = h.xid;
	*flags = h.flags;
	memset(x, 0, sizeof(*x));
	x->spec = (struct rpcr_proto_xchar_spec){vals, 0, 8};
	for (i = 0; i < 3; i++)
		x->sub[i] = (struct rpcr_proto_xchar_subset){words[i], 0, 2};
	return rpcr_proto_v2_xchar_decode(&h, x);
}

/* Deliver transport-characteristics operation @x with @xid on @qp. */
static void
xchar_deliver(struct fake_qp *qp, uint32_t xid, uint32_t flags, const struct rpcr_proto_xchar *x)
{
	struct rpcr_proto_v2_hdr h;
	uint8_t m[512];
	ssize_t n;

	v2_hdr(&h, xid, 1, RPCR_PROTO_V2_OPTIONAL);
	h.flags = flags;
	n = rpcr_proto_v2_xchar_encode(&h, x, m, sizeof(m));
	CHECK(n > 0);
	if (n > 0)
		CHECK_EQ(deliver(qp, m, (uint32_t)n, 0), 0);
}

/*
 * Version 2's transport characteristics on a server with conf.xchar (lib/xprt/xchar.c, the
 * xcharext draft): its INIT_XCHAR right after its properties (RBSIZ, RQREMINV, BRS, the last two
 * unchanging); the client's INIT taken (its RBSIZ bounds the server's Sends; its BRS NONE stops
 * calls back); a REQ_XCHAR answered RESP_XCHAR with its xid: RBSIZ 8192 pending (longer
 * receives posted from then on), the others rejected, and UPD_XCHAR (pendclr) once the shorter
 * receives are used, after which a Send of 6000 bytes is taken; a body that does not decode
 * BAD_XDR; INVAL_HTYPE to the server's INIT turns its characteristics off.
 */
static void
case_v2_xchar(void)
{
	struct rpcr_xprt_conn_info ci;
	struct rpcr_proto_xchar_val v[4];
	struct rpcr_proto_xchar x;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_svc *s;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t m[8192], b[4][4];
	uint32_t xid, flags, init_xid = 0, i, n;
	bool upd = false;

	qp = v2_server(4, true, 0x500, &s);
	if (qp == NULL)
		return;
	/* Its INIT_XCHAR: RBSIZ 4096, RQREMINV false, BRS NONE; RQREMINV and BRS unchanging. */
	w = take(qp);
	CHECK(w != NULL && xchar_sent(w, &x, &init_xid, &flags) == 0);
	if (w != NULL) {
		CHECK(x.op == RPCR_PROTO_XCHAR_INIT && x.spec.n == 3 && flags == 0);
		CHECK(x.spec.vals[0].which == RPCR_PROTO_XCHAR_RBSIZ &&
		      rpcr_proto_xchar_val_u32(&x.spec.vals[0]) == 4096);
		CHECK(x.spec.vals[1].which == RPCR_PROTO_XCHAR_RQREMINV &&
		      rpcr_proto_xchar_val_u32(&x.spec.vals[1]) == 0);
		CHECK(x.spec.vals[2].which == RPCR_PROTO_XCHAR_BRS &&
		      rpcr_proto_xchar_val_u32(&x.spec.vals[2]) == RPCR_PROTO_XCHAR_BKRQSUP_NONE);
		CHECK(!rpcr_proto_xchar_subset_test(&x.sub[0], 0) &&
		      rpcr_proto_xchar_subset_test(&x.sub[0], 1) &&
		      rpcr_proto_xchar_subset_test(&x.sub[0], 2));
	}
	CHECK((w = take(qp)) != NULL && v2_sent(w, &h) > 0 && h.xid == 0x500);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);

	/* The client's INIT: RBSIZ 2048 (the server's Sends bounded by it), BRS NONE. */
	rpcr_proto_xchar_val_set_u32(&v[0], RPCR_PROTO_XCHAR_RBSIZ, b[0], 2048);
	rpcr_proto_xchar_val_set_u32(&v[1], RPCR_PROTO_XCHAR_BRS, b[1],
				     RPCR_PROTO_XCHAR_BKRQSUP_NONE);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_INIT;
	x.spec = (struct rpcr_proto_xchar_spec){v, 2, 4};
	xchar_deliver(qp, 0x501, 0, &x);
	polls(3);
	CHECK(take(qp) == NULL); /* (taken silently, §4.1) */
	ci = svc_conn_info();
	CHECK(ci.props.xchar && ci.inline_send == 2048 &&
	      ci.props.bkrqsup == RPCR_PROTO_XCHAR_BKRQSUP_NONE && ci.props.own_rbsiz == 4096);

	/* REQ: RBSIZ 8192 (pending), RQREMINV true (a server: rejected), BRS GENL (rejected), 99
	 * (not known: rejected). */
	rpcr_proto_xchar_val_set_u32(&v[0], RPCR_PROTO_XCHAR_RBSIZ, b[0], 8192);
	rpcr_proto_xchar_val_set_u32(&v[1], RPCR_PROTO_XCHAR_RQREMINV, b[1], 1);
	rpcr_proto_xchar_val_set_u32(&v[2], RPCR_PROTO_XCHAR_BRS, b[2],
				     RPCR_PROTO_XCHAR_BKRQSUP_GENL);
	rpcr_proto_xchar_val_set_u32(&v[3], 99, b[3], 5);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_REQ;
	x.spec = (struct rpcr_proto_xchar_spec){v, 4, 4};
	xchar_deliver(qp, 0x502, 0, &x);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && xchar_sent(w, &x, &xid, &flags) == 0);
	if (w != NULL) {
		CHECK(x.op == RPCR_PROTO_XCHAR_RESP && xid == 0x502 &&
		      flags == RPCR_PROTO_V2_F_RESPONSE);
		CHECK(x.sub[0].n == 1 && x.sub[0].words[0] == 0);   /* done */
		CHECK(x.sub[1].n == 1 && x.sub[1].words[0] == 0xe); /* rejected */
		CHECK(x.sub[2].n == 1 && x.sub[2].words[0] == 0x1); /* pending */
	}
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	/* Asked again while it is pending (8192, then 6000): pending both, never done while a
	 * shorter receive may still be posted; 16384 (more than a buffer): rejected. */
	rpcr_proto_xchar_val_set_u32(&v[0], RPCR_PROTO_XCHAR_RBSIZ, b[0], 8192);
	rpcr_proto_xchar_val_set_u32(&v[1], RPCR_PROTO_XCHAR_RBSIZ, b[1], 6000);
	rpcr_proto_xchar_val_set_u32(&v[2], RPCR_PROTO_XCHAR_RBSIZ, b[2], 16384);
	memset(&x, 0, sizeof(x));
	x.op = RPCR_PROTO_XCHAR_REQ;
	x.spec = (struct rpcr_proto_xchar_spec){v, 3, 4};
	xchar_deliver(qp, 0x503, 0, &x);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && xchar_sent(w, &x, &xid, &flags) == 0);
	if (w != NULL)
		CHECK(x.op == RPCR_PROTO_XCHAR_RESP && xid == 0x503 && x.sub[0].words[0] == 0 &&
		      x.sub[1].words[0] == 0x4 && x.sub[2].words[0] == 0x3);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	/* Calls until every receive posted before is used: then UPD_XCHAR RBSIZ 8192, pendclr. */
	for (i = 0; i < 200 && !upd; i++) {
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0x600 + i, 8u << 16 | 1, 0, RPCR_TESTPROG_NULL,
				    NULL, NULL, 0),
			0);
		poll_ms(2);
		while ((w = take(qp)) != NULL) {
			if (xchar_sent(w, &x, &xid, &flags) == 0) {
				CHECK(x.op == RPCR_PROTO_XCHAR_UPD && x.pendclr &&
				      x.now.which == RPCR_PROTO_XCHAR_RBSIZ &&
				      rpcr_proto_xchar_val_u32(&x.now) == 8192);
				upd = true;
			}
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	CHECK(upd);
	ci = svc_conn_info();
	CHECK_EQ(ci.props.own_rbsiz, 8192);
	/* ... and a Send of 6080 bytes is taken: ECHO of 6000 inline. */
	{
		uint8_t arg[6004];

		rpcr_xdr_store32(arg, 6000);
		memset(arg + 4, 0x5a, 6000);
		n = call_msg_v2(m, sizeof(m), 0x700, 8u << 16 | 2, 0, RPCR_TESTPROG_ECHO, NULL, arg,
				sizeof(arg));
		CHECK(n > 6000);
		CHECK_EQ(deliver(qp, m, n, 0), 0);
		polls(3);
		/* (Its reply needs more Sends of the 2048 the client takes than the 2 granted:
		 * REPLY_RESOURCE; what matters here is that the call was read.) */
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0 && h.xid == 0x700);
		while (take(qp) != NULL)
			;
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	/* A REQ whose body runs past the message: BAD_XDR. */
	{
		static const uint8_t body[8] = {0, 0, 0, 5, 0, 0, 0, 1};

		v2_hdr(&h, 0x701, 1, RPCR_PROTO_V2_OPTIONAL);
		h.opttype = RPCR_PROTO_XCHAR_REQ;
		h.optinfo = body;
		h.optinfo_len = 8;
		n = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, n, 0);
		expect_v2_error(qp, 0x701, RPCR_PROTO_V2_ERR_BAD_XDR);
	}
	/* INVAL_HTYPE to the server's INIT: its characteristics off (properties alone). */
	v2_hdr(&h, init_xid, 1, RPCR_PROTO_V2_ERROR);
	h.flags = RPCR_PROTO_V2_F_RESPONSE;
	h.err = RPCR_PROTO_V2_ERR_INVAL_HTYPE;
	n = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, n, 0);
	polls(3);
	ci = svc_conn_info();
	CHECK(ci.props.xchar_off);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	polls(3);
	rpcr_svc_destroy(s);
}

/* A plain version-2 reply to @xid granting @credit (low half). */
static void
v2_reply(struct fake_qp *qp, uint32_t xid, uint32_t credit)
{
	struct rpcr_proto_v2_hdr h;
	uint32_t rep[6] = {xid, RPCR_ONCRPC_REPLY, 0, 0, 0, 0};
	uint8_t m[256];
	ssize_t hl;

	v2_hdr(&h, xid, 64u << 16 | credit, RPCR_PROTO_V2_MSG);
	h.flags = RPCR_PROTO_V2_F_RESPONSE;
	hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, (uint32_t)hl + words(m + hl, rep, 6), 0);
	polls(3);
}

/* A client of versions 1 and 2 whose server answers its CONNPROP with ERR_VERS 1..1 (in version
 * 2's format if @v2_format, else in version 1's layout with version word 2, as Linux's
 * svcrdma): version 1 on the same connection, under the sizes of the server's private data,
 * one credit until the first reply grants more; the waiting calls go in version 1 and are
 * answered; a later connection (the server dropped this one) starts in version 1, never asking
 * version 2 again. */
static void
client_v2_refused(const struct rpcr_clnt_conf *cc, bool v2_format)
{
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl = rpcr_clnt_create(P, cc);
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t, t2;
	uint8_t pd[32], m[256];
	uint32_t xid, n0;

	qp = establish(pd, peer_pdata(pd, 2048, 2048, true, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	xid = v2_probe(cl, qp, &t, false);
	tcall_init(&t2, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t2.call);
	polls(3);
	CHECK(take(qp) == NULL);
	n0 = nqps;
	if (!v2_format) {
		const uint32_t ev[7] = {xid, 2, 32, RPCR_PROTO_V1_ERROR, RPCR_PROTO_V1_ERR_VERS,
					1,   1};

		deliver(qp, m, words(m, ev, 7), 0);
	} else {
		struct rpcr_proto_v2_hdr h;
		ssize_t hl;

		v2_hdr(&h, xid, 32, RPCR_PROTO_V2_ERROR);
		h.flags = RPCR_PROTO_V2_F_RESPONSE;
		h.err = RPCR_PROTO_V2_ERR_VERS;
		h.vers_low = 1;
		h.vers_high = 1;
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		deliver(qp, m, (uint32_t)hl, 0);
	}
	polls(3);
	CHECK_EQ(nqps, n0); /* (no connection made again) */
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK(info.rdma_vers == 1 && !info.negotiating && info.inline_send == 2048 &&
	      info.connections == 1 && info.credits == 1 && !info.props.received);
	/* The first waiting call alone, in version 1; its reply grants 4 and the other goes. */
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 1) == 1);
	CHECK(take(qp) == NULL);
	if (w != NULL) {
		deliver(qp, m, reply_msg(m, w32(w->data, 0), 4, 0, NULL, 0), 0);
		polls(3);
	}
	CHECK(t.done == 1 && t.call.status == 0);
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 1) == 1);
	if (w != NULL) {
		deliver(qp, m, reply_msg(m, w32(w->data, 0), 4, 0, NULL, 0), 0);
		polls(3);
	}
	CHECK(t2.done == 1 && t2.call.status == 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	/* The server drops the connection: the next one starts in version 1. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	xid = w != NULL ? w32(w->data, 0) : 0;
	complete_sends(qp, RPCR_RDEV_WC_RETRY_EXC_ERR, NULL);
	flush_recvs(qp);
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	CHECK(qp != NULL);
	if (qp != NULL) {
		w = take(qp);
		CHECK(w != NULL && w32(w->data, 0) == xid && w32(w->data, 1) == 1);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK(info.rdma_vers == 1 && !info.negotiating);
		deliver(qp, m, reply_msg(m, xid, 4, 0, NULL, 0), 0);
		polls(3);
		CHECK(t.done == 1 && t.call.status == 0);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	poll_ms(2);
}

/* WRITE of @len bytes on @cl (its data DDP-eligible: a read chunk). */
static void
write_call(struct rpcr_clnt *cl, struct tcall *t, struct rpcr_bulk *b, uint32_t len)
{
	b->m = rpcr_bulk_alloc(P, len);
	b->off = 0;
	b->len = len;
	CHECK(b->m != NULL);
	tcall_init(t, RPCR_TESTPROG_WRITE);
	t->call.encode = rpcr_testprog_enc_data;
	t->call.args = b;
	rpcr_clnt_call(cl, &t->call);
	polls(3);
}

/*
 * A connection that fails while calls are being posted: 300 calls resent after a reconnection
 * under a grant of 512, the device refusing the flush of the first full batch (XPRT_WR_BATCH):
 * the failure runs the connection's loss in the middle of the client's send loop, which stops
 * there (the call being posted goes with the others to be sent again), and the calls go on a
 * third connection.
 */
static void
case_client_post_fails(void)
{
	static struct tcall t[300];
	struct rpcr_clnt *cl = clnt(512, 0);
	struct fake_qp *qp, *qp2, *qp3;
	struct fake_wr *w;
	uint8_t pd[32], r[128];
	uint32_t n0;
	int i, sent = 0;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL) {
		CHECK(false);
		return;
	}
	tcall_init(&t[0], RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t[0].call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	deliver(qp, r, reply_msg(r, w32(w->data, 0), 512, 0, NULL, 0), 0);
	polls(3);
	for (i = 0; i < 300; i++) {
		tcall_init(&t[i], RPCR_TESTPROG_NULL);
		rpcr_clnt_call(cl, &t[i].call);
	}
	polls(3);
	while (take(qp) != NULL)
		sent++;
	CHECK_EQ(sent, 300);
	n0 = nqps;
	complete_sends(qp, RPCR_RDEV_WC_RETRY_EXC_ERR, NULL);
	flush_recvs(qp);
	polls(3);
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	qp2 = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	w = qp2 != NULL ? take(qp2) : NULL;
	CHECK(w != NULL); /* (one call first: one credit on a new connection) */
	if (w == NULL)
		goto out;
	qp2->fail_posts = 1;
	n0 = nqps;
	deliver(qp2, r, reply_msg(r, w32(w->data, 0), 512, 0, NULL, 0), 0);
	polls(3);
	/* Still here; the calls wait for the next connection, and go there. */
	for (i = 0; i < 300; i++)
		CHECK_EQ(t[i].done, i == 0 ? 1 : 0);
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL && last_qp != qp2);
	qp3 = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	CHECK(qp3 != NULL && take(qp3) != NULL);
out:
	rpcr_clnt_destroy(cl);
}

/*
 * Version 2's continuation on a client (cont.c): a call whose reply may be longer than a Send
 * grants it, in the low half of its credit word, the Sends it may take, and offers no reply
 * chunk; a server that answers that REPLY_RESOURCE gets the call again, same xid, with a reply
 * chunk (the engine's choice taken back); a reply in three parts is reassembled and completes
 * its call; a call longer than a Send goes in two parts, which take two credits until its
 * reply.
 */
static void
case_client_v2_cont(void)
{
	static uint8_t rpc[16384];
	static struct rpcr_ulb ulb[4];
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	struct rpcr_bulk b;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], m[256];
	uint32_t len = 5000, xid, n, parts, i;
	ssize_t hl;

	memset(&cc, 0, sizeof(cc));
	cc.addr = "peer";
	cc.prog = RPCR_TESTPROG;
	cc.vers = 1;
	cc.credits = 8;
	cc.timeout_us = 2000000;
	cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	/* (Nothing DDP-eligible: the data goes inline.) */
	for (i = 0; i < RTE_DIM(ulb); i++) {
		ulb[i] = rpcr_testprog_ulb[i];
		ulb[i].threshold = UINT32_MAX;
	}
	cc.ulb = ulb;
	cc.nulb = RTE_DIM(ulb);
	cl = rpcr_clnt_create(P, &cc);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, false, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	rpcr_xprt_stats_get(P, &st0);
	v2_probe(cl, qp, &t, false);
	server_props(qp, 64u << 16 | 4, NULL); /* (it sends 2048 at most, takes 8192) */
	w = take(qp);
	CHECK(w != NULL && v2_sent(w, &h) > 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	v2_reply(qp, h.xid, 4);
	CHECK(t.done == 1 && t.call.status == 0);

	/* READ of 5000 (reply_max 5000): 3 Sends of at most 2048 granted, no reply chunk. The
	 * server answers REPLY_RESOURCE: the call again with a reply chunk, one Send granted. */
	tcall_init(&t, RPCR_TESTPROG_READ);
	t.call.encode = rpcr_testprog_enc_len;
	t.call.args = &len;
	t.call.reply_max = len;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && v2_sent(w, &h) > 0);
	if (w == NULL)
		goto out;
	xid = h.xid;
	CHECK_EQ(h.credit, 8u << 16 | 3);
	CHECK(!h.chunks.has_reply);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	v2_hdr(&h, xid, 4, RPCR_PROTO_V2_ERROR);
	h.flags = RPCR_PROTO_V2_F_RESPONSE;
	h.err = RPCR_PROTO_V2_ERR_REPLY_RESOURCE;
	h.length_needed = 5028;
	hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
	deliver(qp, m, (uint32_t)hl, 0);
	polls(3);
	CHECK_EQ(t.done, 0);
	w = take(qp);
	CHECK(w != NULL && v2_sent(w, &h) > 0);
	if (w == NULL)
		goto out;
	CHECK(h.xid == xid && h.chunks.has_reply && h.credit == (8u << 16 | 1));
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	v2_reply(qp, xid, 4);
	CHECK(t.done == 1 && t.call.status == 0);

	/* Again: the reply in three parts of 2000 bytes (RESPONSE on each), reassembled. */
	tcall_init(&t, RPCR_TESTPROG_READ);
	t.call.encode = rpcr_testprog_enc_len;
	t.call.args = &len;
	t.call.reply_max = len;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && v2_sent(w, &h) > 0 && (h.credit & 0xffff) == 3 && !h.chunks.has_reply);
	if (w == NULL)
		goto out;
	xid = h.xid;
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	{
		uint32_t rep[7] = {xid, RPCR_ONCRPC_REPLY, 0, 0, 0, 0, 5000};

		n = words(rpc, rep, 7);
		for (i = 0; i < 5000; i++)
			rpc[n + i] = (uint8_t)i;
		n += 5000;
	}
	CHECK_EQ(deliver_cont(qp, xid, 4, RPCR_PROTO_V2_F_RESPONSE, rpc, n, 2000, NULL), 3);
	polls(3);
	CHECK(t.done == 1 && t.call.status == 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.outstanding, 0);

	/* ECHO of 6000 bytes, nothing DDP-eligible: the call in two parts (two of
	 * the four credits until its reply). */
	b.m = rpcr_bulk_alloc(P, 6000);
	b.off = 0;
	b.len = 6000;
	CHECK(b.m != NULL);
	if (b.m == NULL)
		goto out;
	tcall_init(&t, RPCR_TESTPROG_ECHO);
	t.call.encode = rpcr_testprog_enc_data;
	t.call.args = &b;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && v2_sent(w, &h) > 0);
	if (w == NULL)
		goto out;
	xid = h.xid;
	CHECK(h.flags == RPCR_PROTO_V2_F_MORE && w->len <= 4096);
	qp->sq_head--; /* (take_cont() reads it again) */
	n = take_cont(qp, xid, 0, rpc, sizeof(rpc), &h, &parts);
	CHECK(parts == 2 && n == 40 + 4 + 6000 && w32(rpc, 0) == xid && w32(rpc, 10) == 6000);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.outstanding, 2);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	v2_reply(qp, xid, 4);
	CHECK(t.done == 1 && t.call.status == 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.outstanding, 0);
	/* The same call timing out, twice: both its credits stay out until its late reply (which
	 * grants 2); then, with both of the 2 held by the second, none could go: the connection
	 * is made again. */
	for (i = 0; i < 2; i++) {
		struct rpcr_xprt_stats sl0, sl1;

		tcall_init(&t, RPCR_TESTPROG_ECHO);
		t.call.encode = rpcr_testprog_enc_data;
		t.call.args = &b;
		t.call.timeout_us = 200000;
		rpcr_clnt_call(cl, &t.call);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0);
		if (w == NULL)
			break;
		xid = h.xid;
		qp->sq_head--;
		take_cont(qp, xid, 0, rpc, sizeof(rpc), &h, &parts);
		CHECK_EQ(parts, 2);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		POLL_UNTIL(t.done != 0);
		CHECK(t.done == 1 && t.call.status == -ETIMEDOUT);
		if (i == 1) {
			CHECK(!rpcr_clnt_connected(cl));
			break;
		}
		CHECK(rpcr_clnt_connected(cl));
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK_EQ(info.outstanding, 2);
		CHECK_EQ(info.owed_credits, 2);
		rpcr_xprt_stats_get(P, &sl0);
		v2_reply(qp, xid, 2);
		rpcr_xprt_stats_get(P, &sl1);
		CHECK_EQ(sl1.late_replies - sl0.late_replies, 1);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK_EQ(info.outstanding, 0);
		CHECK_EQ(info.owed_credits, 0);
		CHECK(rpcr_clnt_connected(cl));
	}
	rte_pktmbuf_free(b.m);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.cont_fallbacks - st0.cont_fallbacks, 1);
	CHECK_EQ(st1.cont_recv - st0.cont_recv, 1);
	CHECK_EQ(st1.cont_sent - st0.cont_sent, 3);
out:
	rpcr_clnt_destroy(cl);
}

/*
 * A client of versions 1 and 2 (version 2's §4.2.3, §5, §6.3.4): its first message is its
 * CONNPROP, alone; the server's CONNPROP answers it (version 2: credits from the word's low
 * half, the server's properties applied: inline sizes, segments split at its RSSIZ, a call with
 * more segments than its RCSIZ failed, its HOSTAUTH judged by the hook), then the waiting call
 * goes by the straight-line path; a HOSTAUTH the hook refuses closes the connection; on other
 * clients, a first message lost with its connection, or unanswered by the deadline, makes the
 * next connection version 1; ERR_VERS makes the same connection version 1.
 */
static void
case_client_v2(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl;
	struct rpcr_bulk b;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t, t2;
	uint8_t pd[32], m[256];
	uint32_t n0, k, live;

	memset(&cc, 0, sizeof(cc));
	cc.addr = "peer";
	cc.prog = RPCR_TESTPROG;
	cc.vers = 1;
	cc.credits = 8;
	cc.timeout_us = 2000000;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	cc.remote_inv = true;
	cc.versions = RPCR_XPRT_V2;
	CHECK(rpcr_clnt_create(P, &cc) == NULL && rte_errno == EINVAL);
	cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cc.inline_recv = 1024; /* (a version-2 server may send 4096 inline) */
	CHECK(rpcr_clnt_create(P, &cc) == NULL && rte_errno == EINVAL);
	cc.inline_recv = 0;
	cc.hostauth = "cli";
	cc.hostauth_len = RPCR_XPRT_HOSTAUTH_MAX + 1;
	CHECK(rpcr_clnt_create(P, &cc) == NULL && rte_errno == EINVAL);
	cc.hostauth_len = 3;
	cc.hostauth_check = hostauth_ok;
	cl = rpcr_clnt_create(P, &cc);
	rpcr_xprt_stats_get(P, &st0);
	qp = establish(pd, peer_pdata(pd, 1024, 1024, true, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	v2_probe(cl, qp, &t, true);
	/* The server's properties in two messages: after the first (TPMORE) the calls still
	 * wait (its limits may change with the rest); the second answers. */
	{
		struct rpcr_proto_v2_prop pr;
		uint8_t v[4];

		rpcr_proto_v2_prop_set_u32(&pr, RPCR_PROTO_V2_PROP_RCSIZ, v, 8);
		deliver(qp, m, props_msg(m, sizeof(m), 0x76, RPCR_PROTO_V2_F_TPMORE, &pr, 1), 0);
		polls(3);
		CHECK(take(qp) == NULL);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK(info.negotiating && info.props.received && !info.props.complete);
	}
	server_props(qp, 64u << 16 | 4, "let-me-in");
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK(info.rdma_vers == 2 && !info.negotiating && info.credits == 4 &&
	      info.inline_send == 4096 && info.inline_recv == 2048);
	CHECK(info.props.received && info.props.complete && info.props.rbsiz == 8192 &&
	      info.props.sbsiz == 2048 && info.props.rssiz == 4096 && info.props.rcsiz == 4 &&
	      info.props.hostauth);
	/* The waiting call now, by the straight-line path: the template's plain header (as
	 * lib/proto's encoder writes it); its plain reply completes it. */
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		struct rpcr_proto_v2_hdr h;
		ssize_t hl = v2_sent(w, &h);

		CHECK_EQ(hl, RPCR_PROTO_V2_HDR_MIN);
		CHECK(h.vers == 2 && h.htype == RPCR_PROTO_V2_MSG && h.flags == 0 &&
		      h.inv_handle == 0 && rpcr_proto_chunks_empty(&h.chunks));
		CHECK_EQ(h.credit, 8u << 16 | 1);
		CHECK_EQ(w32(w->data + RPCR_PROTO_V2_HDR_MIN, 0), h.xid); /* (the RPC xid) */
		CHECK_EQ(w->len, RPCR_PROTO_V2_HDR_MIN + 40);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		v2_reply(qp, h.xid, 6);
		CHECK(t.done == 1 && t.call.status == 0);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK_EQ(info.credits, 6);
	}
	/* WRITE of 10000 bytes: its read chunk in segments of at most 4096 (the server's
	 * RSSIZ), one registration. */
	write_call(cl, &t, &b, 10000);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		struct rpcr_proto_v2_hdr h;

		CHECK(v2_sent(w, &h) > 0);
		CHECK_EQ(h.chunks.nreads, 3);
		/* (remote_inv: the read chunk's handle named for the server to invalidate) */
		CHECK(h.inv_handle != 0 && h.inv_handle == h.chunks.reads[0].seg.handle);
		for (k = 0; k < h.chunks.nreads && k < 3; k++) {
			CHECK(h.chunks.reads[k].seg.length == (k < 2 ? 4096u : 10000u - 8192));
			CHECK(h.chunks.reads[k].seg.handle == h.chunks.reads[0].seg.handle);
			CHECK(h.chunks.reads[k].seg.offset ==
			      h.chunks.reads[0].seg.offset + 4096u * k);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		v2_reply(qp, h.xid, 6);
		polls(3);
		while (take(qp) != NULL) /* (its invalidations) */
			complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		polls(3);
		CHECK(t.done == 1 && t.call.status == 0);
	}
	rte_pktmbuf_free(b.m);
	/* WRITE of 20000 bytes: 5 segments, more than the server's RCSIZ (4): not sent. */
	write_call(cl, &t, &b, 20000);
	CHECK(take(qp) == NULL);
	CHECK(t.done == 1 && t.call.status == -EMSGSIZE);
	rte_pktmbuf_free(b.m);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	/* The server's REPLY_RESOURCE: -EMSGSIZE, with the length to offer next time. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		struct rpcr_proto_v2_hdr h;
		ssize_t hl;

		v2_hdr(&h, w32(w->data, 0), 64u << 16 | 6, RPCR_PROTO_V2_ERROR);
		h.flags = RPCR_PROTO_V2_F_RESPONSE;
		h.err = RPCR_PROTO_V2_ERR_REPLY_RESOURCE;
		h.length_needed = 9000;
		hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		deliver(qp, m, (uint32_t)hl, 0);
		polls(3);
		CHECK(t.done == 1 && t.call.status == -EMSGSIZE && t.call.need_len == 9000 &&
		      t.call.need_chunk == 0);
	}
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.props_sent - st0.props_sent, 1);
	CHECK_EQ(st1.props_recv - st0.props_recv, 2);
	CHECK_EQ(st1.calls_too_many_segs - st0.calls_too_many_segs, 1);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0); /* (its QP goes with it) */
	poll_ms(2);

	/* A server whose HOSTAUTH the hook refuses: the connection goes. */
	cl = rpcr_clnt_create(P, &cc);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	v2_probe(cl, qp, &t, true);
	live = nqps_live;
	server_props(qp, 64u << 16 | 4, "nope");
	CHECK_EQ(nqps_live, live - 1);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	poll_ms(2);

	/* Another client: its first message lost with the connection: version 1 next. */
	cc.hostauth = NULL;
	cc.hostauth_len = 0;
	cc.hostauth_check = NULL;
	cl = rpcr_clnt_create(P, &cc);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	v2_probe(cl, qp, &t, false);
	n0 = nqps;
	complete_sends(qp, RPCR_RDEV_WC_RETRY_EXC_ERR, NULL);
	flush_recvs(qp);
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	CHECK(qp != NULL);
	if (qp != NULL) {
		w = take(qp);
		CHECK(w != NULL && w32(w->data, 1) == 1);
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK(info.rdma_vers == 1 && !info.negotiating);
		if (w != NULL)
			deliver(qp, m, reply_msg(m, w32(w->data, 0), 4, 0, NULL, 0), 0);
		polls(3);
		CHECK(t.done == 1 && t.call.status == 0);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	poll_ms(2);

	/* And one whose CONNPROP gets no answer by its deadline (timeout_us): version 1 on a new
	 * connection, the waiting call there. */
	cc.timeout_us = 30000;
	cl = rpcr_clnt_create(P, &cc);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	if (cl == NULL || qp == NULL) {
		CHECK(false);
		return;
	}
	v2_probe(cl, qp, &t, false);
	tcall_init(&t2, RPCR_TESTPROG_NULL); /* (t's deadline is the probe's: this one later) */
	n0 = nqps;
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	CHECK_EQ(nqps, n0 + 1);
	rpcr_clnt_call(cl, &t2.call);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
	CHECK(qp != NULL);
	if (qp != NULL) {
		CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
		CHECK(info.rdma_vers == 1 && !info.negotiating);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	poll_ms(2);

	/* ERR_VERS in version 1's layout (version word 2, as Linux answers), then in version 2's
	 * (from a server of 1 and 2 that fixed its connection at 1, say). */
	cc.timeout_us = 2000000;
	for (k = 0; k < 2; k++)
		client_v2_refused(&cc, k == 1);
}

/* Requests with read chunks: READING until the Reads complete; a failed Read takes the
 * connection; SQ room; write chunks and Send with Invalidate. */
static void
case_server_chunks(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_svc *s = svc(8);
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[512], src[3000];
	uint32_t i, n;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, true, 0), &req);
	if (qp == NULL) {
		CHECK(false);
		return;
	}
	rpcr_xprt_stats_get(P, &st0);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 5);
	/* ECHO of 3000 bytes: read chunk at 44 (one segment, key 0x77), write chunk of 4000
	 * bytes in two segments (keys 0x77): one key in all, so Send with Invalidate. */
	{
		uint32_t h[30] = {0x200,
				  1,
				  8,
				  RPCR_PROTO_V1_MSG,
				  1,
				  44,
				  0x77,
				  3000,
				  0,
				  0x10000,
				  0,
				  1,
				  2,
				  0x77,
				  2000,
				  0,
				  0x20000,
				  0x77,
				  2000,
				  0,
				  0x30000,
				  0,
				  0,
				  0x200,
				  0,
				  2,
				  RPCR_TESTPROG,
				  1,
				  RPCR_TESTPROG_ECHO,
				  0};

		n = words(m, h, 30);
		memset(m + n, 0, 12); /* credential length, verifier AUTH_NONE */
		n += 12;
		rpcr_xdr_store32(m + n, 3000);
		n += 4;
	}
	deliver(qp, m, n, 0);
	polls(3);
	/* READING: one RDMA Read of 3000 bytes from key 0x77 at 0x10000, signalled. */
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_READ);
	CHECK_EQ(w->wr.rkey, 0x77);
	CHECK_EQ(w->wr.remote_addr, 0x10000);
	CHECK(w->wr.flags & RPCR_RDEV_WR_F_SIGNALED);
	CHECK(take(qp) == NULL);
	/* The Read completes: the handler runs; Writes of 2000 + 1000 bytes, then the Send
	 * with Invalidate of 0x77; the reply's write chunk says 2000 + 1000. */
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, src);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_WRITE);
	CHECK_EQ(w->wr.remote_addr, 0x20000);
	CHECK_EQ(w->len, 2000);
	CHECK(memcmp(w->data, src, 2000) == 0);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_WRITE);
	CHECK_EQ(w->wr.remote_addr, 0x30000);
	CHECK_EQ(w->len, 1000);
	CHECK(memcmp(w->data, src + 2000, 1000) == 0);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND_INV);
	CHECK_EQ(w->wr.invalidate_rkey, 0x77);
	CHECK_EQ(w32(w->data, 4), 0);    /* no read list */
	CHECK_EQ(w32(w->data, 5), 1);    /* write list */
	CHECK_EQ(w32(w->data, 6), 2);    /* two segments */
	CHECK_EQ(w32(w->data, 8), 2000); /* lengths rewritten */
	CHECK_EQ(w32(w->data, 12), 1000);
	CHECK_EQ(w32(w->data, 15), 0); /* end of write list */
	CHECK_EQ(w32(w->data, 16), 0); /* no reply chunk */
	CHECK_EQ(w32(w->data, 17 + 5), RPCR_ONCRPC_SUCCESS);
	CHECK_EQ(w32(w->data, 17 + 6), 3000); /* the count; the data went by RDMA Write */
	CHECK_EQ(w->len, 17 * 4 + 28);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(2);

	/* A Read that fails (bad key at the client): the connection fails, the request goes
	 * with it, nothing is sent. */
	m[3] = 0x01; /* xid 0x201 */
	m[23 * 4 + 3] = 0x01;
	deliver(qp, m, n, 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ);
	complete_sends(qp, RPCR_RDEV_WC_REM_ACCESS_ERR, NULL);
	flush_recvs(qp);
	n = nqps;
	polls(3);
	/* (The QP is gone now.) */
	CHECK_EQ(nqps, n);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.wc_errors - st0.wc_errors, 1);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
}

/* More calls than the credits allow, all deferred: the extra ones are dropped and counted;
 * replies sent later; the send queue refusing a post fails the connection; a DROP verdict sends
 * nothing and closes the connection. */
static void
case_server_overrun(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_svc *s = svc(2);
	struct fake_req req;
	struct fake_qp *qp;
	uint8_t pd[32], m[512];
	int i, sends = 0;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	if (qp == NULL) {
		CHECK(false);
		return;
	}
	rpcr_xprt_stats_get(P, &st0);
	ndeferred = 0;
	/* 2 + 2 * 16 request slots; 40 calls (the client ignores its 2 credits). */
	for (i = 0; i < 40; i++) {
		call_msg(m, 0x300 + (uint32_t)i, 2, 0, NULL, 0);
		rpcr_xdr_store32(m + 40, 0x2f5a00f1);
		if (deliver(qp, m, 68, 0) != 0)
			break;
		polls(1);
	}
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(ndeferred, 2 + 2 * 16);
	CHECK_EQ(st1.overruns - st0.overruns, (uint64_t)(i - ndeferred));
	for (i = 0; i < ndeferred; i++)
		CHECK_EQ(rpcr_svc_reply(deferred[i]), 0);
	polls(3);
	while (take(qp) != NULL)
		sends++;
	CHECK_EQ(sends, ndeferred);
	/* The device refuses the doorbell: the connection fails. */
	qp->fail_posts = 1;
	deliver(qp, m, call_msg(m, 0x401, 2, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	/* (Failed and torn down: the QP is gone.) */
	CHECK_EQ(nqps_live, 0);

	/* DROP: nothing goes back, and the connection is closed (RFC 8166 section 4.5.4: the
	 * credit the call took would never come back to the client). */
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp != NULL);
	if (qp != NULL) {
		rpcr_xprt_stats_get(P, &st0);
		call_msg(m, 0x400, 2, 1, NULL, 0);
		rpcr_xdr_store32(m + 40, 0x2f5a00f1);
		deliver(qp, m, 68, 0);
		polls(3);
		rpcr_xprt_stats_get(P, &st1);
		CHECK_EQ(st1.calls_dropped - st0.calls_dropped, 1);
		CHECK_EQ(st1.replies_sent, st0.replies_sent);
		CHECK_EQ(nqps_live, 0);
	}
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	ndeferred = 0;
}

/* A call with one read chunk of @len bytes at position 44 (after the call header and the count)
 * of key @key at @addr: WRITE(opaque data<>). */
static uint32_t
call_with_read(uint8_t *m, uint32_t xid, uint32_t len, uint32_t key, uint64_t addr)
{
	uint32_t h[13] = {xid, 1, 8, RPCR_PROTO_V1_MSG, 1, 44, key, len, 0, 0, 0, 0, 0};
	uint32_t n = words(m, h, 13);
	uint32_t c[11] = {xid, 0, 2, RPCR_TESTPROG, 1, RPCR_TESTPROG_WRITE, 0, 0, 0, 0, len};

	rpcr_xdr_store64(m + 32, addr);
	return n + words(m + n, c, 11);
}

/* Request states WAITING (no bulk buffers) and READING; a chunk bigger than the whole pool is
 * refused at once. */
/* A connection to server @s (NULL: none) on which call A (@xid) reads into 40 of the 64 bulk
 * buffers and call B (@xid + 1), needing 40 too, waits for them; A's Reads taken, not done. */
static struct fake_qp *
two_reads_waiting(struct rpcr_svc *s, struct fake_req *req, uint32_t xid)
{
	uint32_t big = 40 * 61440, nreads = 0;
	uint8_t pd[32], m[512];
	struct fake_qp *qp;
	struct fake_wr *w;

	qp = s != NULL ? accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), req) : NULL;
	if (qp == NULL) {
		CHECK(false);
		return NULL;
	}
	deliver(qp, m, call_with_read(m, xid, big, 0x66, 0x100000), 0);
	polls(2);
	deliver(qp, m, call_with_read(m, xid + 1, big, 0x66, 0x100000), 0);
	polls(2);
	while ((w = take(qp)) != NULL) {
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_READ);
		nreads++;
	}
	CHECK(nreads >= 10); /* 40 buffers, 4 entries a WR */
	return qp;
}

static void
case_server_waiting(void)
{
	struct rpcr_svc *s = svc(8);
	uint32_t big = 40 * 61440;
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t m[512];

	qp = two_reads_waiting(s, &req, 0x500);
	if (qp == NULL)
		return;
	/* A's Reads complete: A is answered, its buffers come back, B starts reading. */
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_SEND);
	if (w != NULL) {
		CHECK_EQ(w32(w->data, 0), 0x500);
		CHECK_EQ(w32(w->data, 7 + 6), big); /* WRITE's byte count */
	}
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ);
	while (take(qp) != NULL)
		;
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_SEND);
	if (w != NULL)
		CHECK_EQ(w32(w->data, 0), 0x501);
	/* 100 buffers' worth: more than the pool: ERR_CHUNK. */
	deliver(qp, m, call_with_read(m, 0x502, 100 * 61440, 0x66, 0x100000), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_ERROR);
		CHECK_EQ(w32(w->data, 4), RPCR_PROTO_V1_ERR_CHUNK);
	}
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(2);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
}

/* Two connections' replies staged in turn (A, B, A, B, answering deferred calls outside a poll):
 * each connection's Sends go out on its own QP, in order, each with its own message. */
static void
case_server_replies_turns(void)
{
	static const uint32_t xids[4] = {0x700, 0x701, 0x702, 0x703};
	struct rpcr_svc *s = svc(8);
	struct fake_req ra, rb;
	struct fake_qp *qa, *qb;
	struct fake_wr *w;
	uint8_t pd[32], m[512];
	uint32_t i;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qa = accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, 0), &ra);
	qb = accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, 0), &rb);
	if (qa == NULL || qb == NULL) {
		CHECK(false);
		return;
	}
	/* Deferred calls: A 0x700, B 0x701, A 0x702, B 0x703. */
	ndeferred = 0;
	for (i = 0; i < 4; i++) {
		call_msg(m, xids[i], 4, 0, NULL, 0);
		rpcr_xdr_store32(m + 40, 0x2f5a00f1);
		deliver(i % 2 == 0 ? qa : qb, m, 68, 0);
		polls(1);
	}
	polls(2);
	CHECK_EQ(ndeferred, 4);
	if (ndeferred != 4)
		return;
	CHECK(take(qa) == NULL && take(qb) == NULL);
	for (i = 0; i < 4; i++)
		CHECK_EQ(rpcr_svc_reply(deferred[i]), 0);
	polls(2);
	for (i = 0; i < 4; i++) {
		w = take(i % 2 == 0 ? qa : qb);
		CHECK(w != NULL);
		if (w == NULL)
			continue;
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
		CHECK_EQ(w->len, 28 + 24);
		CHECK_EQ(w32(w->data, 0), xids[i]);
		CHECK_EQ(w32(w->data, 7), xids[i]);
		CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_REPLY);
	}
	CHECK(take(qa) == NULL && take(qb) == NULL);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qa, NULL, 0);
	flush_recvs(qa);
	complete_sends(qa, RPCR_RDEV_WC_SUCCESS, NULL);
	complete_sends(qb, RPCR_RDEV_WC_SUCCESS, NULL);
	server_end(s, qb);
}

/* A call of TESTPROG WRITE (@xid, credit 16) whose argument's @nsegs * @seglen bytes are read
 * from @nsegs segments, keys @key, @key + 1, ...: the message in @m (@cap). @return its length. */
static uint32_t
call_with_reads(uint8_t *m, uint32_t cap, uint32_t xid, uint32_t nsegs, uint32_t key,
		uint32_t seglen)
{
	uint32_t rpc[11] = {xid, 0, 2, RPCR_TESTPROG, 1, RPCR_TESTPROG_WRITE, 0,
			    0,   0, 0, nsegs * seglen};
	struct rpcr_proto_rseg reads[16];
	struct rpcr_proto_v1_hdr h;
	struct rpcr_proto_seg seg;
	ssize_t n;
	uint32_t i;

	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = 1;
	h.credit = 16;
	h.proc = RPCR_PROTO_V1_MSG;
	rpcr_proto_chunks_init(&h.chunks, reads, RTE_DIM(reads), NULL, 0, NULL, 0);
	for (i = 0; i < nsegs; i++) {
		seg.handle = key + i;
		seg.length = seglen;
		seg.offset = 0x100000 + (uint64_t)i * 0x1000;
		CHECK_EQ(rpcr_proto_chunks_add_read(&h.chunks, 44, &seg), 0);
	}
	n = rpcr_proto_v1_encode_full(&h, m, cap);
	CHECK(n > 0 && (size_t)n + sizeof(rpc) <= cap);
	if (n <= 0 || (size_t)n + sizeof(rpc) > cap)
		return 0;
	return (uint32_t)n + words(m + n, rpc, RTE_DIM(rpc));
}

/*
 * The poller's batch full (xprt_sq_flush_all()): in one poll, a call with 16 Reads on C, then
 * calls with 16 Reads on A and B in turn. Each of A's and B's moves its connection's piece of
 * the batch to the end, until B's 8th would start beyond XPRT_POLL_WRS: then every piece is
 * posted, C's too, and the batch starts again from the bottom. Each QP gets its own Reads, in
 * order, and every call is answered. Then one connection's own limit, in the chunk planner.
 */
static void
case_server_batch_full(void)
{
	enum { NSEG = 16, NCALLS = 15 };
	struct rpcr_svc *s = svc(32);
	struct fake_qp *q[3];
	struct fake_req r[3];
	uint32_t k, i, j, ncalls[3] = {1, NCALLS, NCALLS};
	uint8_t pd[32], m[1024];
	struct fake_wr *w;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	for (k = 0; k < 3; k++) {
		q[k] = accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, 0), &r[k]);
		CHECK(q[k] != NULL);
		if (q[k] == NULL)
			return;
	}
	/* (Connection k's call i: xid 0x800 + 0x100 k + i, keys 0x10000 k + 0x100 i + segment.) */
	CHECK_EQ(deliver(q[0], m, call_with_reads(m, sizeof(m), 0x800, NSEG, 0x10, 64), 0), 0);
	for (i = 0; i < NCALLS; i++)
		for (k = 1; k < 3; k++)
			CHECK_EQ(deliver(q[k], m,
					 call_with_reads(m, sizeof(m), 0x800 + 0x100 * k + i, NSEG,
							 0x10000 * k + 0x100 * i + 0x10, 64),
					 0),
				 0);
	polls(1);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < ncalls[k]; i++)
			for (j = 0; j < NSEG; j++) {
				w = take(q[k]);
				CHECK(w != NULL);
				if (w == NULL)
					break;
				CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_READ);
				CHECK_EQ(w->wr.rkey, 0x10000 * k + 0x100 * i + 0x10 + j);
				CHECK_EQ(w->wr.remote_addr, 0x100000 + (uint64_t)j * 0x1000);
			}
		CHECK(take(q[k]) == NULL);
	}
	/* The Reads done: each call answered on its own connection, in order. */
	for (k = 0; k < 3; k++)
		complete_sends(q[k], RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < ncalls[k]; i++) {
			w = take(q[k]);
			CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_SEND);
			if (w == NULL)
				break;
			CHECK_EQ(w32(w->data, 0), 0x800 + 0x100 * k + i);
			CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_REPLY);
			CHECK_EQ(w32(w->data, 13), NSEG * 64); /* bytes written */
		}
		CHECK(take(q[k]) == NULL);
		complete_sends(q[k], RPCR_RDEV_WC_SUCCESS, NULL);
	}
	/* 17 such calls on C in one poll: 272 Reads, beyond its own limit (XPRT_WR_BATCH), so
	 * that the 17th's plan finds no room: the 256 before are posted and it plans again. */
	for (i = 0; i < 17; i++)
		CHECK_EQ(deliver(q[0], m,
				 call_with_reads(m, sizeof(m), 0x900 + i, NSEG, 0x100 * i + 0x10,
						 64),
				 0),
			 0);
	polls(1);
	for (i = 0; i < 17 * NSEG; i++) {
		w = take(q[0]);
		CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ);
		if (w == NULL)
			break;
		CHECK_EQ(w->wr.rkey, 0x100 * (i / NSEG) + 0x10 + i % NSEG);
	}
	CHECK(take(q[0]) == NULL);
	complete_sends(q[0], RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	for (i = 0; i < 17; i++) {
		w = take(q[0]);
		CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_SEND);
		if (w == NULL)
			break;
		CHECK_EQ(w32(w->data, 0), 0x900 + i);
		CHECK_EQ(w32(w->data, 13), NSEG * 64);
	}
	complete_sends(q[0], RPCR_RDEV_WC_SUCCESS, NULL);
	for (k = 0; k < 2; k++) {
		event(RPCR_RDEV_EVENT_DISCONNECTED, q[k], NULL, 0);
		flush_recvs(q[k]);
	}
	server_end(s, q[2]);
}

/* The connection goes while one call waits for its RDMA Reads and another for bulk buffers:
 * both requests and what they hold (receives, the read chunk's buffers) come back. */
static void
case_server_lost_waiting(void)
{
	const struct rte_mempool *bulk = rpcr_chunk_pool_mempool(rpcr_xprt_poller_bulk_pool(P));
	const struct rte_mempool *msgs = rpcr_chunk_pool_mempool(rpcr_xprt_poller_pool(P));
	unsigned int msgs_free = rte_mempool_avail_count(msgs);
	struct rpcr_svc *s = svc(8);
	struct fake_req req;
	struct fake_qp *qp;

	qp = two_reads_waiting(s, &req, 0x600);
	if (qp == NULL)
		return;
	/* Lost with A's Reads out, which never complete, and B waiting. */
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	poll_ms(2);
	CHECK_EQ(rte_mempool_avail_count(bulk), bulk->size);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	poll_ms(1);
	CHECK_EQ(rte_mempool_avail_count(msgs), msgs_free);
}

/* 2005 draft, server side: a result with no write chunk and no reply chunk goes in a read
 * chunk of the reply; RDMA_DONE releases its registration; teardown releases the others. */
static void
case_server_reply_reads(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_svc *s = svc(8);
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[512];
	uint32_t len = rte_cpu_to_be_32(5000), i, xid = 0x600;
	int base = nmrs_live;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 7), &req);
	if (qp == NULL) {
		CHECK(false);
		return;
	}
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, m, call_msg(m, xid, 8, RPCR_TESTPROG_READ, &len, 4), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 4), 1); /* a read list */
	CHECK_EQ(w32(w->data, 5),
		 28); /* at the data of the result (24-byte reply header + count) */
	CHECK_EQ(w32(w->data, 7), 5000);
	CHECK_EQ(w32(w->data, 10), 0);
	CHECK_EQ(w32(w->data, 11), 0);
	CHECK_EQ(w32(w->data, 12), 0);
	CHECK_EQ(w32(w->data, 13 + 6), 5000);
	CHECK_EQ(w->len, 20 * 4); /* the data is not inline */
	CHECK_EQ(nmrs_live, base + 1);
	{
		const uint8_t *d = (const uint8_t *)(uintptr_t)rpcr_xdr_load64(w->data + 32);

		for (i = 0; i < 5000; i++)
			if (d[i] != rpcr_testprog_byte(i))
				break;
		CHECK_EQ(i, 5000);
	}
	/* RDMA_DONE for another xid: nothing; for this one: released. No reply to either. */
	{
		uint32_t d1[4] = {xid + 1, 1, 8, RPCR_PROTO_V1_DONE};
		uint32_t d2[4] = {xid, 1, 8, RPCR_PROTO_V1_DONE};

		deliver(qp, m, words(m, d1, 4), 0);
		polls(2);
		CHECK_EQ(nmrs_live, base + 1);
		deliver(qp, m, words(m, d2, 4), 0);
		polls(2);
		CHECK_EQ(nmrs_live, base);
		CHECK(take(qp) == NULL);
	}
	/* One more, never DONE'd: released when the connection goes. */
	deliver(qp, m, call_msg(m, xid + 2, 8, RPCR_TESTPROG_READ, &len, 4), 0);
	polls(3);
	CHECK(take(qp) != NULL);
	CHECK_EQ(nmrs_live, base + 1);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(2);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.dones_recv - st0.dones_recv, 2);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	CHECK_EQ(nmrs_live, base - 1); /* the test program's own registration went too */
}

/* 2005 draft, client side: CONF_RDMA first; a reply with a read chunk: READING, the RDMA Read,
 * then the completion and RDMA_DONE; and READING -> RESEND when the connection goes. */
static void
case_client_reply_reads(void)
{
	struct rpcr_clnt_info info;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	struct bres br;
	uint8_t pd[32], r[512], src[5000];
	uint32_t len = 5000, xid, i, nq0;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, false, 7));
	if (qp == NULL || cl == NULL)
		return;
	/* CONF_RDMA goes first. */
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w32(w->data, 10), RPCR_PROTO_CONF_RDMA_PROG);
	CHECK_EQ(w32(w->data, 12), RPCR_PROTO_CONF_RDMA_PROC);
	{
		uint32_t body[3] = {rte_cpu_to_be_32(2048), rte_cpu_to_be_32(128),
				    rte_cpu_to_be_32(16)};

		deliver(qp, r, reply_msg(r, w32(w->data, 0), 8, 0, body, 12), 0);
	}
	polls(3);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.msgp_align, 128);
	CHECK_EQ(info.inline_send, 2048); /* the server takes calls up to 2048 bytes */
	CHECK(info.draft);

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	tcall_init(&t, RPCR_TESTPROG_READ);
	t.call.encode = enc_u32_arg;
	t.call.args = &len;
	t.call.decode = dec_bulk;
	t.call.res = &br;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	xid = w32(w->data, 0);
	{
		uint32_t h[20] = {xid, 1,       8,    RPCR_PROTO_V1_MSG,
				  1,   28,      0x55, 5000,
				  0,   0x40000, 0,    0,
				  0,   xid,     1,    0,
				  0,   0,       0,    5000};

		deliver(qp, r, words(r, h, 20), 0);
	}
	polls(3);
	/* READING: one RDMA Read of 5000 bytes, not completed yet. */
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_READ);
	CHECK_EQ(w->wr.rkey, 0x55);
	CHECK_EQ(w->wr.remote_addr, 0x40000);
	CHECK_EQ(t.done, 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, src);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(br.rc, 0);
	if (br.rc == 0) {
		CHECK_EQ(br.b.len, 5000);
		CHECK_EQ(rpcr_bulk_copy(&br.b, r, 512), 512);
		CHECK(memcmp(r, src, 512) == 0);
	}
	/* Then RDMA_DONE for it. */
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL) {
		CHECK_EQ(w->len, 16);
		CHECK_EQ(w32(w->data, 0), xid);
		CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_DONE);
	}

	/* Again, and the Read fails: the connection goes, the call is sent again, same xid. */
	tcall_init(&t, RPCR_TESTPROG_READ);
	t.call.encode = enc_u32_arg;
	t.call.args = &len;
	t.call.decode = dec_bulk;
	t.call.res = &br;
	rpcr_clnt_call(cl, &t.call);
	polls(3);
	w = take(qp);
	if (w == NULL) {
		CHECK(false);
		return;
	}
	xid = w32(w->data, 0);
	{
		uint32_t h[20] = {xid, 1,       8,    RPCR_PROTO_V1_MSG,
				  1,   28,      0x55, 5000,
				  0,   0x40000, 0,    0,
				  0,   xid,     1,    0,
				  0,   0,       0,    5000};

		deliver(qp, r, words(r, h, 20), 0);
	}
	polls(3);
	CHECK(take(qp) != NULL);
	nq0 = nqps;
	complete_sends(qp, RPCR_RDEV_WC_REM_ACCESS_ERR, NULL);
	flush_recvs(qp);
	polls(3);
	CHECK_EQ(t.done, 0);
	POLL_UNTIL(nqps == nq0 + 1 && last_qp != NULL);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, false, 0));
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL)
		CHECK_EQ(w32(w->data, 0), xid);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -ECONNABORTED);
}

/*
 * A request slot's own Send buffer: used again at once once the call's reply is in (the server
 * had all of the call, so the device is done with it, completion polled or not), but never while
 * the device may still read it: not after a call that timed out, nor after a lost connection
 * (the send queue frees those buffers when their WRs are done). Buffers are counted at exit.
 */
static void
case_client_send_buffers(void)
{
	struct rpcr_clnt *cl = clnt(2, 5000000);
	struct rpcr_xprt_stats st0, st1;
	struct fake_qp *qp = last_qp, *qp2;
	struct fake_wr *w0, *w1, *w2, *w3;
	struct tcall t[4];
	uint8_t pd[32], r[128], data2[128];
	uint32_t n0, len2;
	uint64_t addr2;
	int i;

	CHECK(cl != NULL && qp != NULL);
	if (cl == NULL || qp == NULL)
		return;
	establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	for (i = 0; i < 4; i++)
		tcall_init(&t[i], RPCR_TESTPROG_NULL);
	/* Answered before its Send's completion: the next call goes from the same buffer. */
	rpcr_clnt_call(cl, &t[0].call);
	polls(3);
	w0 = take(qp);
	CHECK(w0 != NULL);
	if (w0 == NULL)
		goto out;
	deliver(qp, r, reply_msg(r, w32(w0->data, 0), 2, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[0].done, 1);
	CHECK_EQ(t[0].call.status, 0);
	t[1].call.timeout_us = 100000; /* (this one is to time out; the others have 5 s) */
	rpcr_clnt_call(cl, &t[1].call);
	polls(3);
	w1 = take(qp);
	CHECK(w1 != NULL);
	if (w1 == NULL)
		goto out;
	CHECK_EQ(w1->sge[0].addr, w0->sge[0].addr);
	CHECK(w32(w1->data, 0) != w32(w0->data, 0));
	/* No reply: it times out; its Send was never completed, so the buffer stays as posted
	 * and the slot's next call takes another one. (The slot comes back with the late
	 * reply: the timed-out call holds it, and its credit, until then.) */
	POLL_UNTIL(t[1].done != 0);
	CHECK_EQ(t[1].done, 1);
	CHECK_EQ(t[1].call.status, -ETIMEDOUT);
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, r, reply_msg(r, w32(w1->data, 0), 2, 0, NULL, 0), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.late_replies - st0.late_replies, 1);
	CHECK_EQ(t[1].done, 1);
	rpcr_clnt_call(cl, &t[2].call);
	polls(3);
	w2 = take(qp);
	CHECK(w2 != NULL);
	if (w2 == NULL)
		goto out;
	CHECK_EQ(w32(w2->data, 0) & 1, w32(w1->data, 0) & 1); /* (the same slot of two) */
	CHECK(w2->sge[0].addr != w1->sge[0].addr);
	CHECK(memcmp((const void *)(uintptr_t)w1->sge[0].addr, w1->data, w1->len) == 0);
	CHECK_EQ(w2->len, w1->len);
	CHECK(memcmp(w2->data + 4, w1->data + 4, 24) == 0); /* (the same template) */
	/* (The fake's WR records go with their QP: keep what is needed below.) */
	len2 = w2->len;
	addr2 = w2->sge[0].addr;
	memcpy(data2, w2->data, len2);
	/* The connection is lost with that call out: it goes again on the next one, from another
	 * buffer; the one the old QP may still read is not touched. */
	n0 = nqps;
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp); /* (the QP goes in the next poll) */
	qp = NULL;
	poll_ms(1);
	CHECK(!rpcr_clnt_connected(cl));
	CHECK(memcmp((const void *)(uintptr_t)addr2, data2, len2) == 0);
	for (i = 0; i < 2000 && (nqps == n0 || last_qp == NULL); i++)
		poll_ms(1); /* (the reconnect comes after a 1 ms back-off: allow a loaded machine) */
	qp2 = last_qp;
	CHECK(qp2 != NULL && nqps == n0 + 1); /* (a new QP, maybe where the old one was) */
	if (qp2 == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	w3 = take(qp2);
	CHECK(w3 != NULL);
	if (w3 == NULL)
		goto out;
	CHECK_EQ(w32(w3->data, 0), w32(data2, 0)); /* the same call, the same xid */
	deliver(qp2, r, reply_msg(r, w32(w3->data, 0), 1, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[2].done, 1);
	CHECK_EQ(t[2].call.status, 0);
	/* Its buffer is the slot's again, and so on. */
	rpcr_clnt_call(cl, &t[3].call);
	polls(3);
	w0 = take(qp2);
	CHECK(w0 != NULL);
	if (w0 != NULL) {
		CHECK_EQ(w0->sge[0].addr, w3->sge[0].addr);
		deliver(qp2, r, reply_msg(r, w32(w0->data, 0), 1, 0, NULL, 0), 0);
		polls(3);
		CHECK_EQ(t[3].done, 1);
	}
out:
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/*
 * A call that times out on its connection keeps its credit until its late reply (RFC 8166
 * section 3.3.1 counts a request out until its reply): no call goes in that credit; the late
 * reply, dropped and counted, gives it back. Where timed-out calls hold every credit granted,
 * the connection is made again (as Linux's xprtrdma does at any timeout), the calls waiting
 * going there.
 */
static void
case_client_timeout_credit(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(4, 5000000);
	struct rpcr_clnt_info info;
	struct fake_qp *qp = last_qp, *qp2;
	struct tcall t[5];
	struct fake_wr *w;
	uint8_t pd[32], r[128];
	uint32_t xid[5], n0, i;

	CHECK(cl != NULL && qp != NULL);
	if (cl == NULL || qp == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	/* A first call, answered with a grant of 2. */
	if (!call_out(cl, qp, &t[0], RPCR_TESTPROG_NULL, &xid[0]))
		goto out;
	deliver(qp, r, reply_msg(r, xid[0], 2, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[0].done, 1);
	rpcr_xprt_stats_get(P, &st0);
	/* Two out, the first to time out. */
	for (i = 1; i <= 2; i++) {
		tcall_init(&t[i], RPCR_TESTPROG_NULL);
		t[i].call.timeout_us = i == 1 ? 200000 : 0;
		CHECK_EQ(rpcr_clnt_call(cl, &t[i].call), 0);
	}
	polls(3);
	for (i = 1; i <= 2; i++) {
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			goto out;
		xid[i] = w32(w->data, 0);
	}
	POLL_UNTIL(t[1].done != 0);
	CHECK_EQ(t[1].done, 1);
	CHECK_EQ(t[1].call.status, -ETIMEDOUT);
	/* Its credit is still out: the next call waits, the connection stays. */
	tcall_init(&t[3], RPCR_TESTPROG_NULL);
	CHECK_EQ(rpcr_clnt_call(cl, &t[3].call), 0);
	polls(3);
	CHECK(take(qp) == NULL);
	CHECK(rpcr_clnt_connected(cl));
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.outstanding, 2);
	CHECK_EQ(info.owed_credits, 1);
	/* The late reply: dropped (its caller was told), counted, its credit back: the call
	 * waiting goes. */
	deliver(qp, r, reply_msg(r, xid[1], 2, 0, NULL, 0), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.late_replies - st0.late_replies, 1);
	CHECK_EQ(st1.unmatched, st0.unmatched);
	CHECK_EQ(t[1].done, 1);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.owed_credits, 0);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	xid[3] = w32(w->data, 0);
	/* Its reply again matches nothing now. */
	deliver(qp, r, reply_msg(r, xid[1], 2, 0, NULL, 0), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.late_replies - st0.late_replies, 1);
	CHECK_EQ(st1.unmatched - st0.unmatched, 1);
	/* The other two answered, granting 1. */
	deliver(qp, r, reply_msg(r, xid[2], 1, 0, NULL, 0), 0);
	deliver(qp, r, reply_msg(r, xid[3], 1, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[2].done, 1);
	CHECK_EQ(t[2].call.status, 0);
	CHECK_EQ(t[3].done, 1);
	CHECK_EQ(t[3].call.status, 0);
	/* A grant of 1, and the one call out times out: no call could go until its server
	 * answers, so the connection is closed and made again; the call waiting goes there. */
	n0 = nqps;
	tcall_init(&t[4], RPCR_TESTPROG_NULL);
	t[4].call.timeout_us = 200000;
	CHECK_EQ(rpcr_clnt_call(cl, &t[4].call), 0);
	polls(3);
	CHECK(take(qp) != NULL);
	tcall_init(&t[0], RPCR_TESTPROG_NULL);
	CHECK_EQ(rpcr_clnt_call(cl, &t[0].call), 0);
	polls(3);
	CHECK(take(qp) == NULL);
	CHECK(rpcr_clnt_connected(cl));
	POLL_UNTIL(t[4].done != 0);
	CHECK_EQ(t[4].call.status, -ETIMEDOUT);
	CHECK(!rpcr_clnt_connected(cl));
	qp = NULL; /* (torn down: the engine closed it) */
	POLL_UNTIL(nqps == n0 + 1 && last_qp != NULL);
	qp2 = last_qp;
	CHECK(qp2 != NULL && nqps == n0 + 1);
	if (qp2 == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	w = take(qp2);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	deliver(qp2, r, reply_msg(r, w32(w->data, 0), 2, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t[0].done, 1);
	CHECK_EQ(t[0].call.status, 0);
out:
	if (cl != NULL)
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
}

/*
 * An ECHO call with chunk lists of the given shapes: @nrc read chunks at positions 44, 48, ...
 * of @rsegs segments of @rlen bytes each, @nwc write chunks and a reply chunk (if @reply_segs)
 * of the given segment counts (100 bytes a segment). @return its length.
 */
static uint32_t
shaped_call(uint8_t *buf, uint32_t xid, uint32_t nrc, uint32_t rsegs, uint32_t rlen, uint32_t nwc,
	    uint32_t wsegs, uint32_t reply_segs)
{
	uint32_t w[400], n = 0, i, j;

	w[n++] = xid;
	w[n++] = 1;
	w[n++] = 8;
	w[n++] = RPCR_PROTO_V1_MSG;
	for (i = 0; i < nrc; i++) {
		for (j = 0; j < rsegs; j++) {
			w[n++] = 1;
			w[n++] = 44 + 4 * i;
			w[n++] = 0x100 + i;
			w[n++] = rlen;
			w[n++] = 0;
			w[n++] = 0x10000 * (i + 1) + rlen * j;
		}
	}
	w[n++] = 0;
	for (i = 0; i < nwc; i++) {
		w[n++] = 1;
		w[n++] = wsegs;
		for (j = 0; j < wsegs; j++) {
			w[n++] = 0x200 + i;
			w[n++] = 100;
			w[n++] = 0;
			w[n++] = 0x100000 * (i + 1) + 100 * j;
		}
	}
	w[n++] = 0;
	if (reply_segs != 0) {
		w[n++] = 1;
		w[n++] = reply_segs;
		for (j = 0; j < reply_segs; j++) {
			w[n++] = 0x300;
			w[n++] = 100;
			w[n++] = 0;
			w[n++] = 0x900000 + 100 * j;
		}
	} else {
		w[n++] = 0;
	}
	/* The RPC call: ECHO, AUTH_NONE, the data's length (the data itself in the chunk). */
	w[n++] = xid;
	w[n++] = 0;
	w[n++] = 2;
	w[n++] = RPCR_TESTPROG;
	w[n++] = 1;
	w[n++] = RPCR_TESTPROG_ECHO;
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = nrc != 0 ? rsegs * rlen : 0;
	return words(buf, w, n);
}

/* The next WR is a Send of RDMA_ERROR ERR_CHUNK for @xid, and nothing else was posted. */
static void
expect_err_chunk(struct fake_qp *qp, uint32_t xid)
{
	struct fake_wr *w = take(qp);

	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
	CHECK_EQ(w->len, 20);
	CHECK_EQ(w32(w->data, 0), xid);
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_ERROR);
	CHECK_EQ(w32(w->data, 4), RPCR_PROTO_V1_ERR_CHUNK);
	CHECK(take(qp) == NULL);
}

/*
 * The server's resource limits: each call over one gets ERR_CHUNK before anything is read,
 * and its counter moves (not bad_headers); within them, the same shapes are served; a
 * connection over max_conns is refused and counted.
 */
static void
case_server_limits(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_svc_conf sc;
	struct fake_req req, req2;
	struct rpcr_svc *s;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[1600];
	uint32_t n;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "limits";
	sc.credits = 8;
	sc.max_conns = 1;
	sc.max_call_bytes = 8192;
	sc.max_chunks = 2;
	sc.max_segs = 2;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	rpcr_testprog_register(s, 0);
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	rpcr_xprt_stats_get(P, &st0);

	/* 8193 bytes in read chunks (two segments): over max_call_bytes. */
	n = shaped_call(m, 0x1001, 1, 2, 4097, 0, 0, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1001);
	/* Three read chunks; a read chunk of three segments; three write chunks; a write chunk of
	 * three segments; a reply chunk of three segments: over max_chunks or max_segs. */
	n = shaped_call(m, 0x1002, 3, 1, 100, 0, 0, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1002);
	n = shaped_call(m, 0x1003, 1, 3, 100, 0, 0, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1003);
	n = shaped_call(m, 0x1004, 0, 0, 0, 3, 1, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1004);
	n = shaped_call(m, 0x1005, 0, 0, 0, 1, 3, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1005);
	n = shaped_call(m, 0x1006, 0, 0, 0, 0, 0, 3);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1006);
	/* More read segments than the decoder holds at all (40). */
	n = shaped_call(m, 0x1007, 1, 40, 4, 0, 0, 0);
	deliver(qp, m, n, 0);
	polls(3);
	expect_err_chunk(qp, 0x1007);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.limit_call_bytes - st0.limit_call_bytes, 1);
	CHECK_EQ(st1.limit_chunks - st0.limit_chunks, 6);
	CHECK_EQ(st1.bad_headers - st0.bad_headers, 0);
	CHECK_EQ(st1.rdma_errors_sent - st0.rdma_errors_sent, 7);

	/* At the limits: 8192 bytes in two chunks of two segments, two write chunks of two
	 * segments: the server reads (four RDMA Reads). */
	n = shaped_call(m, 0x1008, 2, 2, 2048, 2, 2, 0);
	deliver(qp, m, n, 0);
	polls(3);
	for (n = 0; n < 4; n++) {
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			break;
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_READ);
		{
			uint32_t k, len = 0;

			for (k = 0; k < w->wr.num_sge; k++)
				len += w->sge[k].length;
			CHECK_EQ(len, 2048);
		}
	}
	CHECK(take(qp) == NULL);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	/* (ECHO of two data items with one opaque: the call is garbage to the test program,
	 * answered as such: what matters here is that it was read and dispatched.) */
	w = take(qp);
	CHECK(w != NULL);
	if (w != NULL)
		CHECK_EQ(w32(w->data, 0), 0x1008);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.limit_call_bytes - st0.limit_call_bytes, 1);
	CHECK_EQ(st1.limit_chunks - st0.limit_chunks, 6);

	/* A second connection: refused (max_conns 1), counted. */
	CHECK(accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req2) == NULL);
	CHECK(req2.rejected);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.conns_refused - st0.conns_refused, 1);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
out:
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	poll_ms(2);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
}

/* ---- the peer's address, and MSG_DENIED from a handler ---- */

static struct sockaddr_in seen_peer;
static int seen_accepts;

/* Refuses 10.0.0.0/8. */
static bool
accept_not_ten(const struct sockaddr *peer, void *arg)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)peer;

	CHECK(arg == &seen_accepts);
	seen_accepts++;
	CHECK_EQ(peer->sa_family, AF_INET);
	seen_peer = *in;
	return (ntohl(in->sin_addr.s_addr) >> 24) != 10;
}

/* proc 1: AUTH_TOOWEAK; proc 2: the peer's IPv4 address and port as two uint32s; proc 3: an
 * invalid auth_stat (refused: the verdict stays SYSTEM_ERR). */
static enum rpcr_svc_verdict
h_tooweak(struct rpcr_svc_req *r)
{
	CHECK_EQ(rpcr_svc_req_auth_error(r, RPCR_ONCRPC_AUTH_TOOWEAK), 0);
	return RPCR_SVC_ERROR;
}

static enum rpcr_svc_verdict
h_peer(struct rpcr_svc_req *r)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)rpcr_svc_req_peer(r);
	struct rpcr_xdr_enc *e = rpcr_msg_enc(rpcr_svc_req_results(r));

	if (in->sin_family != AF_INET)
		return RPCR_SVC_ERROR;
	rpcr_xdr_enc_u32(e, ntohl(in->sin_addr.s_addr));
	rpcr_xdr_enc_u32(e, ntohs(in->sin_port));
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
h_bad_auth(struct rpcr_svc_req *r)
{
	CHECK_EQ(rpcr_svc_req_auth_error(r, RPCR_ONCRPC_AUTH_OK), -EINVAL);
	CHECK_EQ(rpcr_svc_req_auth_error(r, 99), -EINVAL);
	return RPCR_SVC_ERROR;
}

/*
 * The peer's address: handed to the server's accept callback (which refuses one here: RDMA-CM
 * reject, conns_refused), kept per connection (rpcr_xprt_conn_list(), rpcr_svc_req_peer());
 * rpcr_xprt_addr_str(). A handler's rpcr_svc_req_auth_error() makes its error reply MSG_DENIED
 * AUTH_ERROR with that auth_stat; an invalid one is refused and the reply stays SYSTEM_ERR.
 */
static void
case_server_peer_auth(void)
{
	static const struct rpcr_svc_proc procs[] = {
		{.proc = 1, .handler = h_tooweak},
		{.proc = 2, .handler = h_peer},
		{.proc = 3, .handler = h_bad_auth},
	};
	struct rpcr_svc_prog pg = {.prog = 0x2f5a00f2, .vers = 1, .procs = procs, .nprocs = 3};
	struct sockaddr_in *in = (struct sockaddr_in *)&next_peer;
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_xprt_conn_info info[4];
	struct rpcr_svc_conf sc;
	struct fake_req req, req2;
	struct rpcr_svc *s;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[256];
	char a[64];
	uint32_t k;
	int n;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "peers";
	sc.credits = 4;
	sc.accept = accept_not_ten;
	sc.accept_arg = &seen_accepts;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_EQ(rpcr_svc_register(s, &pg), 0);
	rpcr_xprt_stats_get(P, &st0);

	/* 10.1.2.3:999: refused by the callback, counted. */
	memset(&next_peer, 0, sizeof(next_peer));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(0x0a010203);
	in->sin_port = htons(999);
	CHECK(accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, 0), &req2) == NULL);
	CHECK(req2.rejected);
	CHECK_EQ(seen_accepts, 1);
	CHECK_EQ(ntohl(seen_peer.sin_addr.s_addr), 0x0a010203);
	CHECK_EQ(ntohs(seen_peer.sin_port), 999);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.conns_refused - st0.conns_refused, 1);

	/* 192.168.7.9:40001: accepted; the connection and its requests know the address. */
	in->sin_addr.s_addr = htonl(0xc0a80709);
	in->sin_port = htons(40001);
	qp = accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, 0), &req);
	memset(&next_peer, 0, sizeof(next_peer));
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	CHECK_EQ(seen_accepts, 2);
	n = rpcr_xprt_conn_list(P, info, RTE_DIM(info));
	CHECK(n >= 1);
	for (k = 0; k < (uint32_t)RTE_MIN(n, 4); k++)
		if (info[k].server && info[k].peer.ss_family == AF_INET)
			break;
	CHECK(k < (uint32_t)RTE_MIN(n, 4));
	if (k < (uint32_t)RTE_MIN(n, 4)) {
		CHECK_EQ(rpcr_xprt_addr_str((const struct sockaddr *)&info[k].peer, a, sizeof(a)),
			 (int)strlen("192.168.7.9:40001"));
		CHECK(strcmp(a, "192.168.7.9:40001") == 0);
		CHECK_EQ(rpcr_xprt_addr_str((const struct sockaddr *)&info[k].peer, a, 8), -ENOSPC);
	}
	{
		struct sockaddr_in6 s6;
		struct sockaddr_storage none;

		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		s6.sin6_addr.s6_addr[15] = 1;
		s6.sin6_port = htons(20049);
		CHECK(rpcr_xprt_addr_str((const struct sockaddr *)&s6, a, sizeof(a)) > 0);
		CHECK(strcmp(a, "[::1]:20049") == 0);
		memset(&none, 0, sizeof(none));
		CHECK_EQ(rpcr_xprt_addr_str((const struct sockaddr *)&none, a, sizeof(a)), 0);
		CHECK_EQ(a[0], '\0');
	}

	for (k = 1; k <= 3; k++) {
		uint32_t c[17] = {0x700 + k, 1, 4, RPCR_PROTO_V1_MSG, 0, 0, 0,
				  0x700 + k, 0, 2, 0x2f5a00f2,        1, k, 0,
				  0,         0, 0};

		deliver(qp, m, words(m, c, 17), 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			break;
		CHECK_EQ(w32(w->data, 7), 0x700 + k);
		CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_REPLY);
		if (k == 1) {
			/* MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK */
			CHECK_EQ(w->len, 28 + 20);
			CHECK_EQ(w32(w->data, 9), RPCR_ONCRPC_MSG_DENIED);
			CHECK_EQ(w32(w->data, 10), RPCR_ONCRPC_AUTH_ERROR);
			CHECK_EQ(w32(w->data, 11), RPCR_ONCRPC_AUTH_TOOWEAK);
		} else if (k == 2) {
			CHECK_EQ(w->len, 28 + 24 + 8);
			CHECK_EQ(w32(w->data, 12), RPCR_ONCRPC_SUCCESS);
			CHECK_EQ(w32(w->data, 13), 0xc0a80709);
			CHECK_EQ(w32(w->data, 14), 40001);
		} else {
			CHECK_EQ(w32(w->data, 9), RPCR_ONCRPC_MSG_ACCEPTED);
			CHECK_EQ(w32(w->data, 12), RPCR_ONCRPC_SYSTEM_ERR);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		polls(3);
	}
out:
	server_end(s, qp);
}

/*
 * The buffers the fast path reuses. A receive buffer goes back to its slot only when nobody
 * holds it: a deferred request's stays untouched, and is never posted again, while a thousand
 * calls go through. A reply buffer of the ring (64) is never carried by two Sends outstanding
 * at once: the test completes Sends only every 100th call, so the ring comes round while
 * its buffers are still out (the engine learns of completions only from signalled WRs).
 */
static void
case_server_buffers(void)
{
	struct rpcr_svc *s = svc(16);
	struct fake_req req;
	struct fake_qp *qp;
	uint8_t pd[32], m[512], held_copy[128];
	uint64_t out[100], seen[256];
	uint32_t held_len, k, i, nout = 0, nseen = 0, posted_held = 0, live_reuse = 0;
	uint32_t bad_replies = 0;
	uint8_t *held;

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qp = accept_one(s, pd, peer_pdata(pd, 1024, 1024, false, UINT32_MAX), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	ndeferred = 0;
	held_len = call_msg(m, 0x300, 16, 0, "held arguments!!", 16);
	rpcr_xdr_store32(m + 40, 0x2f5a00f1);
	memcpy(held_copy, m, held_len);
	held = qp->rq[qp->rq_head % FQ].addr;
	CHECK_EQ(deliver(qp, m, held_len, 0), 0);
	polls(2);
	CHECK_EQ(ndeferred, 1);
	for (k = 0; k < 1000; k++) {
		uint32_t arg[3] = {rte_cpu_to_be_32(8), k, ~k};
		struct fake_wr *w;

		CHECK_EQ(
			deliver(qp, m, call_msg(m, 0x1000 + k, 16, RPCR_TESTPROG_ECHO, arg, 12), 0),
			0);
		polls(1);
		w = take(qp);
		if (w == NULL || w->len != 28 + 24 + 12 || w32(w->data, 0) != 0x1000 + k ||
		    w32(w->data, 12) != RPCR_ONCRPC_SUCCESS || w32(w->data, 13) != 8 ||
		    memcmp(w->data + 56, &arg[1], 8) != 0) {
			bad_replies++;
			continue;
		}
		for (i = 0; i < nout; i++)
			live_reuse += out[i] == w->sge[0].addr;
		out[nout++] = w->sge[0].addr;
		for (i = 0; i < nseen && seen[i] != w->sge[0].addr; i++)
			;
		if (i == nseen && nseen < RTE_DIM(seen))
			seen[nseen++] = w->sge[0].addr;
		if (nout == RTE_DIM(out)) {
			complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
			nout = 0;
		}
		for (i = qp->rq_head; i != qp->rq_tail; i++)
			posted_held += qp->rq[i % FQ].addr == held;
	}
	CHECK_EQ(bad_replies, 0);
	CHECK_EQ(live_reuse, 0);
	CHECK_EQ(posted_held, 0);
	CHECK(memcmp(held, held_copy, held_len) == 0);
	/* Replies came from a few buffers used again and again (the ring, then the recycle
	 * stack while the ring's were still out), not a new one each time. */
	CHECK(nseen >= 2);
	CHECK(nseen < 128);
	CHECK_EQ(rpcr_svc_reply(deferred[0]), 0);
	polls(2);
	{
		struct fake_wr *w = take(qp);

		CHECK(w != NULL);
		if (w != NULL)
			CHECK_EQ(w32(w->data, 0), 0x300);
	}
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(2);
out:
	server_end(s, qp);
}

/* ---- RFC 8166's MUSTs ---- */

/* A transport header of @n words: xid, version, credits, type, then zeros. */
static uint32_t
hdr_msg(uint8_t *buf, uint32_t xid, uint32_t vers, uint32_t type, uint32_t n)
{
	uint32_t w[16] = {xid, vers, 4, type};

	return words(buf, w, RTE_MIN(n, (uint32_t)RTE_DIM(w)));
}

/*
 * The responder: RFC 8166 section 4.5, a message shorter than 28 bytes is discarded before any
 * parsing (but the 2005 draft's 16-byte RDMA_DONE, where negotiated), and an RDMA_ERROR carries
 * the version of the message it answers; section 4.5.4, a responder that cannot send an error
 * closes the connection.
 */
static void
case_server_musts(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_svc *s = svc(4);
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[512];
	uint32_t i, vers[2] = {2, 7};

	if (s == NULL) {
		CHECK(false);
		return;
	}
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	/* 4, 16 (RDMA_DONE, not negotiated), 20 (RDMA_ERROR ERR_CHUNK), 24 (RDMA_MSG, its lists
	 * cut short) and 27 bytes: nothing comes back, each is counted. */
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, m, 4, 0);
	deliver(qp, m, hdr_msg(m, 0x600, 1, RPCR_PROTO_V1_DONE, 4), 0);
	hdr_msg(m, 0x601, 1, RPCR_PROTO_V1_ERROR, 5);
	rpcr_xdr_store32(m + 16, RPCR_PROTO_V1_ERR_CHUNK);
	deliver(qp, m, 20, 0);
	deliver(qp, m, hdr_msg(m, 0x602, 1, RPCR_PROTO_V1_MSG, 6), 0);
	deliver(qp, m, hdr_msg(m, 0x603, 1, RPCR_PROTO_V1_MSG, 7) - 1, 0);
	polls(3);
	CHECK(take(qp) == NULL);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bad_headers - st0.bad_headers, 5);
	CHECK_EQ(st1.rdma_errors_sent, st0.rdma_errors_sent);
	/* Versions 2 and 7: ERR_VERS 1..1, in a header of the version it answers. */
	for (i = 0; i < 2; i++) {
		deliver(qp, m, hdr_msg(m, 0x610 + i, vers[i], RPCR_PROTO_V1_MSG, 7), 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			continue;
		CHECK_EQ(w->len, 28);
		CHECK_EQ(w32(w->data, 0), 0x610 + i);
		CHECK_EQ(w32(w->data, 1), vers[i]);
		CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_ERROR);
		CHECK_EQ(w32(w->data, 4), RPCR_PROTO_V1_ERR_VERS);
		CHECK_EQ(w32(w->data, 5), 1);
		CHECK_EQ(w32(w->data, 6), 1);
	}
	/* Still serving. */
	deliver(qp, m, call_msg(m, 0x620, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 0) == 0x620 && w->len == 28 + 24);
	/* The send queue full (1023 replies the device has not completed), then a header to
	 * answer ERR_CHUNK: it cannot be sent, the connection closes. */
	for (i = 0; i < 1022; i++) {
		deliver(qp, m, call_msg(m, 0x1000 + i, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
		polls(1);
	}
	while (take(qp) != NULL)
		;
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, m, hdr_msg(m, 0x630, 1, 7, 7), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.replies_sent - st0.replies_sent, 0);
	CHECK_EQ(st1.rdma_errors_sent - st0.rdma_errors_sent, 0);
	CHECK_EQ(nqps_live, 0);
	qp = NULL;

	/* With the 2005 draft: its 16-byte RDMA_DONE is taken (no answer); 12 bytes are not. */
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, RPCR_PROTO_CM_EXT_F_DONE), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, m, hdr_msg(m, 0x640, 1, RPCR_PROTO_V1_DONE, 4), 0);
	deliver(qp, m, hdr_msg(m, 0x641, 1, RPCR_PROTO_V1_DONE, 3), 0);
	polls(3);
	CHECK(take(qp) == NULL);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.dones_recv - st0.dones_recv, 1);
	CHECK_EQ(st1.bad_headers - st0.bad_headers, 1);
out:
	server_end(s, qp);
}

/* What the completion of the call with a reply chunk saw of its QP. */
static struct fake_qp *fence_qp;
static int fence_seen = -1;

static void
tcall_done_fence(struct rpcr_call *call)
{
	fence_seen = fence_qp != NULL ? fence_qp->disconnects : -1;
	tcall_done(call);
}

/*
 * The requester: RFC 8166 section 4.5.4, a registration that cannot be invalidated after the
 * reply closes the connection before the call completes (the QP is disconnected when the
 * completion runs); the other call outstanding goes again, same xid, on the next connection.
 */
static void
case_client_musts(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct fake_qp *qp, *qp2;
	struct fake_wr *w, *w2;
	struct tcall t, t2;
	uint8_t pd[32], r[256];
	uint32_t xid, xid2, nq0;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL) {
		CHECK(false);
		goto out;
	}
	/* A first call brings the credits for two. */
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		goto out;
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	/* A call that offers a reply chunk (a registration), and a NULL call. */
	tcall_init(&t, RPCR_TESTPROG_NULL);
	t.call.reply_max = 6000;
	t.call.done = tcall_done_fence;
	tcall_init(&t2, RPCR_TESTPROG_NULL);
	rpcr_clnt_call(cl, &t.call);
	rpcr_clnt_call(cl, &t2.call);
	polls(3);
	w = take(qp);
	w2 = take(qp);
	if (w == NULL || w2 == NULL) {
		CHECK(false);
		goto out;
	}
	xid = w32(w->data, 0);
	xid2 = w32(w2->data, 0);
	CHECK(w32(w->data, 6) == 1); /* a reply chunk */
	rpcr_xprt_stats_get(P, &st0);
	fence_qp = qp;
	fail_deregs = 1;
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	fail_deregs = 0;
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(fence_seen, 1); /* disconnected before the completion ran */
	CHECK_EQ(st1.invalidate_failures - st0.invalidate_failures, 1);
	CHECK_EQ(t2.done, 0);
	if (dereg_failed != NULL) {
		CHECK_EQ(rpcr_rdev_mr_dereg(dereg_failed), 0);
		dereg_failed = NULL;
	}
	/* The next connection: the NULL call goes again with its xid. */
	nq0 = nqps;
	POLL_UNTIL(nqps == nq0 + 1 && last_qp != NULL);
	qp2 = last_qp; /* (it may have the old one's address) */
	CHECK(nqps == nq0 + 1 && qp2 != NULL);
	if (nqps != nq0 + 1 || qp2 == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	polls(3);
	w = take(qp2);
	CHECK(w != NULL && w32(w->data, 0) == xid2);
	deliver(qp2, r, reply_msg(r, xid2, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t2.done, 1);
	CHECK_EQ(t2.call.status, 0);
out:
	fence_qp = NULL;
	if (cl != NULL)
		rpcr_clnt_destroy(cl);
}

/* A NULL call offering a reply chunk on @qp: its window's bind, then its Send, which must carry
 * the window's key (the one the bind gave) for a range the bind covered. @return the key, 0 (a
 * failed check). */
static uint32_t
window_call_out(struct rpcr_clnt *cl, struct fake_qp *qp, struct tcall *t, uint32_t *xid)
{
	struct fake_wr *b, *w;

	tcall_init(t, RPCR_TESTPROG_NULL);
	t->call.reply_max = 6000;
	t->call.done = tcall_done_fence;
	rpcr_clnt_call(cl, &t->call);
	polls(3);
	b = take(qp);
	w = take(qp);
	CHECK(b != NULL && w != NULL);
	if (b == NULL || w == NULL)
		return 0;
	CHECK_EQ(b->wr.opcode, RPCR_RDEV_WR_BIND_MW);
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
	if (b->wr.opcode != RPCR_RDEV_WR_BIND_MW)
		return 0;
	CHECK_EQ(b->bind.access, RPCR_RDEV_ACCESS_REMOTE_WRITE);
	CHECK(b->bind.mr != NULL && b->bind.len >= 6000);
	*xid = w32(w->data, 0);
	CHECK_EQ(w32(w->data, 6), 1);                    /* a reply chunk */
	CHECK_EQ(w32(w->data, 7), 1);                    /* of one segment */
	CHECK_EQ(w32(w->data, 8), b->wr.bind->mw->rkey); /* the window's key */
	CHECK_EQ(w32(w->data, 9), b->bind.len);          /* over the range bound */
	CHECK_EQ(((uint64_t)w32(w->data, 10) << 32 | w32(w->data, 11)), b->bind.addr);
	return w32(w->data, 8);
}

/*
 * Registration by memory windows (reg.c) on a device that has them: each window bound just
 * ahead of the Send that carries its key; after the reply, a key the server invalidated with
 * its Send is done with, any other gets a LOCAL_INV that the call waits for; an invalidation that
 * fails closes the connection before the call completes (RFC 8166 section 4.5.4); a bind that
 * fails closes the connection and the call goes again, with a new window on the next one.
 * Windows are freed before their QP is destroyed.
 */
static void
case_client_windows(void)
{
	struct rpcr_xprt_poller *p0 = P;
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_rdev *d2;
	struct rpcr_clnt *cl = NULL;
	struct fake_qp *qp, *qp2;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], r[256];
	uint32_t xid, key, nq0;
	int mws0 = nmws_live, mrs0;

	d2 = rpcr_rdev_open("fake:mw=1");
	memset(&pc, 0, sizeof(pc));
	pc.name = "fake-mw";
	pc.dev = d2;
	pc.arena = arena;
	pc.bufs = 512;
	pc.bulk_bufs = 16;
	P = d2 != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	CHECK(P != NULL);
	if (P == NULL)
		goto out;
	fake_dev = d2;
	fake_poller = P;
	CHECK(rpcr_xprt_poller_mem_access(P) & RPCR_RDEV_ACCESS_MW_BIND);
	CHECK(!(rpcr_xprt_poller_mem_access(p0) & RPCR_RDEV_ACCESS_MW_BIND));
	cl = clnt(8, 0);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, false, 0));
	CHECK(cl != NULL && qp != NULL);
	if (cl == NULL || qp == NULL)
		goto out;
	CHECK_EQ(qp->pdata[5], 1); /* R offered: its keys are windows */
	rpcr_xprt_stats_get(P, &st0);
	mrs0 = nmrs_live; /* (the pools') */

	/* Remotely invalidated: done at the reply, no LOCAL_INV. */
	key = window_call_out(cl, qp, &t, &xid);
	CHECK(key != 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), key);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK(take(qp) == NULL);

	/* Not invalidated by the server: a LOCAL_INV of the key, and the call waits for it. */
	key = window_call_out(cl, qp, &t, &xid);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_LOCAL_INV);
	CHECK(w != NULL && w->wr.invalidate_rkey == key && key != 0);
	CHECK(w != NULL && (w->wr.flags & RPCR_RDEV_WR_F_SIGNALED));
	CHECK_EQ(t.done, 0);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.mw_binds - st0.mw_binds, 2);
	CHECK_EQ(st1.remote_invalidations - st0.remote_invalidations, 1);
	CHECK_EQ(st1.local_invalidations - st0.local_invalidations, 1);
	CHECK_EQ(st1.reg_mrs, st0.reg_mrs);
	CHECK_EQ(nmrs_live, mrs0); /* no registration made for a call */

	/* The invalidation fails: the QP is disconnected before the completion runs. */
	key = window_call_out(cl, qp, &t, &xid);
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_LOCAL_INV);
	fence_qp = qp;
	fence_seen = -1;
	complete_sends(qp, RPCR_RDEV_WC_LOC_QP_OP_ERR, NULL);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0); /* (the reply stands: nothing reaches the memory now) */
	CHECK_EQ(fence_seen, 1);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.invalidate_failures - st0.invalidate_failures, 1);
	fence_qp = NULL;

	/* The next connection; a bind that fails: the connection goes, the call goes again with
	 * its xid and a new window (a new key) on the one after. */
	nq0 = nqps;
	POLL_UNTIL(nqps == nq0 + 1 && last_qp != NULL);
	qp2 = last_qp;
	CHECK(nqps == nq0 + 1 && qp2 != NULL);
	if (nqps != nq0 + 1 || qp2 == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, false, 0));
	polls(3);
	key = window_call_out(cl, qp2, &t, &xid);
	complete_sends(qp2, RPCR_RDEV_WC_MW_BIND_ERR, NULL);
	polls(3);
	CHECK_EQ(t.done, 0);
	nq0 = nqps;
	POLL_UNTIL(nqps == nq0 + 1 && last_qp != NULL);
	qp = last_qp;
	CHECK(nqps == nq0 + 1 && qp != NULL);
	if (nqps != nq0 + 1 || qp == NULL)
		goto out;
	establish(pd, peer_pdata(pd, 4096, 4096, false, 0));
	polls(3);
	{
		struct fake_wr *b = take(qp), *s2 = take(qp);

		CHECK(b != NULL && b->wr.opcode == RPCR_RDEV_WR_BIND_MW);
		CHECK(s2 != NULL && w32(s2->data, 0) == xid);
		CHECK(s2 != NULL && w32(s2->data, 8) != key && b != NULL &&
		      w32(s2->data, 8) == b->wr.bind->mw->rkey);
		if (s2 != NULL)
			key = w32(s2->data, 8);
	}
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), key);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
out:
	if (cl != NULL)
		rpcr_clnt_destroy(cl);
	if (P != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(P), 0);
	CHECK_EQ(nmws_live, mws0); /* every window freed */
	if (d2 != NULL)
		CHECK_EQ(rpcr_rdev_close(d2), 0);
	P = p0;
	fake_poller = p0;
	fake_dev = dev;
}

/*
 * Direction before xid (RFC 8167 section 4.1): a call from the server whose xid is that of a
 * call the client has out is not its reply (refused: this client serves nothing, its credits
 * not applied); a reply arriving at a server is a reverse-direction reply matching nothing, not
 * a malformed call.
 */
static void
case_direction(void)
{
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt *cl = clnt(8, 0);
	struct rpcr_clnt_info info;
	struct rpcr_svc *s = NULL;
	struct fake_req req;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], r[256];
	uint32_t xid;

	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL) {
		CHECK(false);
		goto out;
	}
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		goto out;
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, r, call_msg(r, xid, 9, 0, NULL, 0), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_refused - st0.bcalls_refused, 1);
	CHECK_EQ(st1.bad_headers, st0.bad_headers);
	CHECK_EQ(t.done, 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.credits, 1);
	CHECK(take(qp) == NULL);
	deliver(qp, r, reply_msg(r, xid, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	rpcr_clnt_destroy(cl);
	cl = NULL;

	s = svc(4);
	qp = s != NULL ? accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req) : NULL;
	if (qp == NULL) {
		CHECK(false);
		goto out;
	}
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, r, reply_msg(r, 0x700, 4, 0, NULL, 0), 0);
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK(take(qp) == NULL);
	CHECK_EQ(st1.unmatched - st0.unmatched, 1);
	CHECK_EQ(st1.bad_headers, st0.bad_headers);
	CHECK_EQ(st1.calls_recv, st0.calls_recv);
	deliver(qp, r, call_msg(r, 0x701, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 0) == 0x701);
out:
	if (cl != NULL)
		rpcr_clnt_destroy(cl);
	if (s != NULL)
		server_end(s, qp);
}

/* ---- the reverse direction (RFC 8167) ---- */

#define BPROG 0x2f5a0003u

/* A reverse-direction call (or any call) of @prog/@vers/@proc, plain: RDMA_MSG, no chunks. */
static uint32_t
bcall_msg(uint8_t *buf, uint32_t xid, uint32_t credit, uint32_t prog, uint32_t proc,
	  const void *args, uint32_t alen)
{
	uint32_t n = call_msg(buf, xid, credit, proc, args, alen);

	rpcr_xdr_store32(buf + 28 + 12, prog);
	return n;
}

static uint32_t bseen;

static enum rpcr_svc_verdict
bh_u32(struct rpcr_svc_req *r)
{
	uint32_t v;

	if (rpcr_xdr_dec_u32(rpcr_msg_dec(rpcr_svc_req_args(r)), &v) != 0)
		return RPCR_SVC_ERROR;
	bseen++;
	return rpcr_xdr_enc_u32(rpcr_msg_enc(rpcr_svc_req_results(r)), v + 1) == 0 ? RPCR_SVC_REPLY
										   : RPCR_SVC_ERROR;
}

static const struct rpcr_svc_proc bprocs[] = {
	{.proc = 0, .handler = h_defer},
	{.proc = 1, .handler = bh_u32},
};

/* Check that @w is a plain reply (RDMA_MSG, no chunks) to @xid, granting @credit. */
static void
check_plain_reply(const struct fake_wr *w, uint32_t xid, uint32_t credit)
{
	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
	CHECK_EQ(w32(w->data, 0), xid);
	CHECK_EQ(w32(w->data, 1), 1);
	CHECK_EQ(w32(w->data, 2), credit);
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 4) | w32(w->data, 5) | w32(w->data, 6), 0);
	CHECK_EQ(w32(w->data, 7), xid); /* the RPC xid is the header's */
	CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_REPLY);
}

/* A client's responder: receives reserved, calls told from replies whatever their xid,
 * backward credits apart from forward ones, overruns dropped, chunk lists refused. */
static void
case_reverse_responder(void)
{
	const struct rpcr_svc_prog bp = {
		.prog = BPROG, .vers = 1, .procs = bprocs, .nprocs = RTE_DIM(bprocs)};
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt_info info;
	struct rpcr_xprt_conn_info ci;
	struct rpcr_clnt *cl;
	struct fake_qp *qp;
	struct fake_wr *w;
	struct tcall t;
	uint8_t pd[32], m[512];
	uint32_t xid, posted0, arg = rte_cpu_to_be_32(41), n;

	/* Receives posted by a client that serves nothing... */
	cl = clnt(8, 0);
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL || cl == NULL) {
		CHECK(false);
		return;
	}
	posted0 = qp->rq_tail - qp->rq_head;
	rpcr_clnt_destroy(cl);
	polls(2);
	/* ... and by one that serves its server's calls with 2 credits: 2 more. */
	memset(&cc, 0, sizeof(cc));
	cc.addr = "peer";
	cc.prog = RPCR_TESTPROG;
	cc.vers = 1;
	cc.credits = 8;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	cc.bc_credits = 2;
	cl = rpcr_clnt_create(P, &cc);
	CHECK(cl != NULL);
	if (cl == NULL)
		return;
	CHECK_EQ(rpcr_clnt_register(cl, &bp), 0);
	CHECK(rpcr_clnt_serves(cl, BPROG, 1));
	CHECK(!rpcr_clnt_serves(cl, BPROG, 2));
	qp = establish(pd, peer_pdata(pd, 4096, 4096, true, 0));
	if (qp == NULL) {
		CHECK(false);
		goto out;
	}
	CHECK_EQ(qp->rq_tail - qp->rq_head, posted0 + 2);
	CHECK_EQ(rpcr_xprt_conn_list(P, &ci, 1), 1);
	CHECK_EQ(ci.rev_credits, 2);

	/* A forward call out; a reverse call with the same xid is a call, not its reply. */
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		goto out;
	rpcr_xprt_stats_get(P, &st0);
	n = bcall_msg(m, xid, 5, BPROG, 1, &arg, 4);
	deliver(qp, m, n, 0);
	polls(3);
	w = take(qp);
	check_plain_reply(w, xid, 2); /* asked 5, granted at most 2 */
	CHECK(w != NULL && w->len == 28 + 24 + 4 && w32(w->data, 13) == 42);
	CHECK_EQ(t.done, 0);
	CHECK_EQ(rpcr_clnt_info_get(cl, &info), 0);
	CHECK_EQ(info.credits, 1); /* the forward grant untouched */
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_recv - st0.bcalls_recv, 1);
	CHECK_EQ(st1.breplies_sent - st0.breplies_sent, 1);
	CHECK_EQ(st1.calls_recv, st0.calls_recv);
	CHECK_EQ(st1.replies_sent, st0.replies_sent);
	deliver(qp, m, reply_msg(m, xid, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);

	/* Credit overrun: two held by the handler (deferred), the third dropped and counted. */
	ndeferred = 0;
	rpcr_xprt_stats_get(P, &st0);
	deliver(qp, m, bcall_msg(m, 0x51, 1, BPROG, 0, NULL, 0), 0);
	deliver(qp, m, bcall_msg(m, 0x52, 1, BPROG, 0, NULL, 0), 0);
	deliver(qp, m, bcall_msg(m, 0x53, 1, BPROG, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(ndeferred, 2);
	CHECK(take(qp) == NULL);
	CHECK_EQ(rpcr_xprt_conn_list(P, &ci, 1), 1);
	CHECK_EQ(ci.rev_in_use, 2);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_overrun - st0.bcalls_overrun, 1);
	CHECK_EQ(st1.bcalls_recv - st0.bcalls_recv, 2);
	if (ndeferred == 2) {
		CHECK_EQ(rpcr_svc_reply(deferred[0]), 0);
		CHECK_EQ(rpcr_svc_reply(deferred[1]), 0);
	}
	polls(2);
	check_plain_reply(take(qp), 0x51, 1);
	check_plain_reply(take(qp), 0x52, 1);
	ndeferred = 0;

	/* A call with chunk lists is no reverse-direction call (RFC 8167 section 2.5): refused,
	 * never taken for the reply of the forward call with its xid. */
	if (!call_out(cl, qp, &t, RPCR_TESTPROG_NULL, &xid))
		goto out;
	rpcr_xprt_stats_get(P, &st0);
	n = bcall_msg(m, xid, 1, BPROG, 1, &arg, 4);
	/* (a write list of one chunk of one segment in place of the empty one: words 5-11) */
	{
		uint8_t m2[512];
		uint32_t wl[7] = {1, 1, 0x1234, 64, 0, 0x1000, 0};

		memcpy(m2, m, 20);
		words(m2 + 20, wl, 7);
		memcpy(m2 + 48, m + 24, n - 24);
		deliver(qp, m2, n + 24, 0);
	}
	polls(3);
	CHECK(take(qp) == NULL);
	CHECK_EQ(t.done, 0);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_refused - st0.bcalls_refused, 1);
	CHECK_EQ(st1.bcalls_recv, st0.bcalls_recv);
	/* A program it does not serve: PROG_UNAVAIL, as a server says it. */
	deliver(qp, m, bcall_msg(m, 0x61, 1, BPROG + 1, 1, &arg, 4), 0);
	polls(3);
	w = take(qp);
	check_plain_reply(w, 0x61, 1);
	CHECK(w != NULL && w32(w->data, 12) == RPCR_ONCRPC_PROG_UNAVAIL);
	deliver(qp, m, reply_msg(m, xid, 4, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
out:
	rpcr_clnt_destroy(cl);
	polls(2);
}

static struct rpcr_clnt *bclnt_got;
static int bclnt_errno;

static enum rpcr_svc_verdict
h_bclnt(struct rpcr_svc_req *r)
{
	bclnt_got = rpcr_svc_req_bclnt(r, BPROG, 1);
	bclnt_errno = bclnt_got == NULL ? rte_errno : 0;
	return RPCR_SVC_REPLY;
}

static struct rpcr_clnt *rebind_cl;
static int rebind_rc;

static enum rpcr_svc_verdict
h_rebind(struct rpcr_svc_req *r)
{
	rebind_rc = rpcr_clnt_rebind(rebind_cl, r);
	return RPCR_SVC_REPLY;
}

static int
enc_bytes(struct rpcr_msg *m, const void *args)
{
	static uint8_t zero[8192];

	return rpcr_xdr_enc_opaque(rpcr_msg_enc(m), zero, *(const uint32_t *)args);
}

/* A server's requester: calls on the connection a request came in on, credits of their own,
 * replies told from calls, no chunks, and what a lost connection does to them. */
static void
case_reverse_requester(void)
{
	static const struct rpcr_svc_proc procs[] = {{.proc = 0, .handler = h_bclnt},
						     {.proc = 1, .handler = h_rebind}};
	const struct rpcr_svc_prog pg = {
		.prog = 0x2f5a00f2, .vers = 1, .procs = procs, .nprocs = 2};
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_xprt_conn_info ci;
	struct rpcr_svc_conf sc;
	struct rpcr_clnt *bc = NULL, *bc2;
	struct rpcr_svc *s;
	struct fake_req req;
	struct fake_qp *qp, *qp3;
	struct fake_wr *w;
	struct tcall t, t2, t3;
	uint8_t pd[32], m[512];
	uint32_t xid, xid2, res = 0, v = 7, len;
	uint32_t posted0;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = 4;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_EQ(rpcr_svc_register(s, &pg), 0);
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	if (qp == NULL) {
		CHECK(false);
		goto out;
	}
	CHECK_EQ(rpcr_xprt_conn_list(P, &ci, 1), 1);
	CHECK_EQ(ci.rev_credits, 0);
	posted0 = qp->rq_tail - qp->rq_head;
	/* A request asks for the connection's requester. */
	deliver(qp, m, bcall_msg(m, 0x100, 4, 0x2f5a00f2, 0, NULL, 0), 0);
	polls(3);
	bc = bclnt_got;
	CHECK(bc != NULL);
	if (bc == NULL)
		goto out;
	check_plain_reply(take(qp), 0x100, 4);
	/* Receives posted for the calls it may have out (RFC 8167 section 2.2.2). */
	CHECK(qp->rq_tail - qp->rq_head >= posted0 + 16);
	/* Another program on the same connection: refused. */
	deliver(qp, m, bcall_msg(m, 0x101, 4, 0x2f5a00f2, 0, NULL, 0), 0);
	polls(3);
	take(qp);
	CHECK(bclnt_got == bc); /* (the same one, a second reference) */
	rpcr_clnt_destroy(bclnt_got);

	/* A call goes out as one plain Send: RDMA_MSG, no chunk, the RPC xid the header's. */
	rpcr_xprt_stats_get(P, &st0);
	tcall_init(&t, 1);
	t.call.encode = enc_u32_arg;
	t.call.args = &v;
	t.call.decode = dec_u32;
	t.call.res = &res;
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL);
	if (w == NULL)
		goto out;
	xid = w32(w->data, 0);
	CHECK_EQ(w32(w->data, 1), 1);
	CHECK(w32(w->data, 2) != 0); /* never 0 (RFC 8167 section 2.1) */
	CHECK_EQ(w32(w->data, 3), RPCR_PROTO_V1_MSG);
	CHECK_EQ(w32(w->data, 4) | w32(w->data, 5) | w32(w->data, 6), 0);
	CHECK_EQ(w32(w->data, 7), xid);
	CHECK_EQ(w32(w->data, 8), RPCR_ONCRPC_CALL);
	CHECK_EQ(w32(w->data, 10), BPROG);
	CHECK_EQ(w32(w->data, 11), 1);
	CHECK_EQ(w32(w->data, 12), 1);
	/* A forward call with that xid is a call, served as usual; the reverse call waits. */
	deliver(qp, m, call_msg(m, xid, 4, RPCR_TESTPROG_NULL, NULL, 0), 0);
	polls(3);
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 0) == xid && w32(w->data, 8) == RPCR_ONCRPC_REPLY);
	CHECK_EQ(t.done, 0);
	/* Its reply, granting 3 reverse-direction credits. */
	{
		uint32_t r8 = rte_cpu_to_be_32(8);

		deliver(qp, m, reply_msg(m, xid, 3, 0, &r8, 4), 0);
	}
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	CHECK_EQ(res, 8);
	CHECK_EQ(rpcr_xprt_conn_list(P, &ci, 1), 1);
	CHECK_EQ(ci.rev_credits, 3);
	CHECK_EQ(ci.credits, 4); /* the forward grant its own */
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_sent - st0.bcalls_sent, 1);
	CHECK_EQ(st1.breplies_recv - st0.breplies_recv, 1);
	CHECK_EQ(st1.calls_sent, st0.calls_sent);
	CHECK_EQ(st1.replies_recv, st0.replies_recv);

	/* A reply with chunk lists is no reverse-direction reply: unmatched, the call waits; a
	 * grant of 0 counts as 1. */
	tcall_init(&t, 1);
	t.call.encode = enc_u32_arg;
	t.call.args = &v;
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	w = take(qp);
	xid = w != NULL ? w32(w->data, 0) : 0;
	rpcr_xprt_stats_get(P, &st0);
	len = reply_msg(m, xid, 3, 0, NULL, 0);
	{
		uint8_t m2[512];
		uint32_t wl[7] = {1, 1, 0x1234, 64, 0, 0x1000, 0};

		memcpy(m2, m, 20);
		words(m2 + 20, wl, 7);
		memcpy(m2 + 48, m + 24, len - 24);
		deliver(qp, m2, len + 24, 0);
	}
	polls(3);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.unmatched - st0.unmatched, 1);
	CHECK_EQ(t.done, 0);
	deliver(qp, m, reply_msg(m, xid, 0, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(rpcr_xprt_conn_list(P, &ci, 1), 1);
	CHECK_EQ(ci.rev_credits, 1);

	/* An RDMA_ERROR (the short ERR_CHUNK form) answering a reverse-direction call is the
	 * requester's: the call fails, nothing goes back (the responder would answer ERR_CHUNK). */
	tcall_init(&t, 1);
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	w = take(qp);
	xid = w != NULL ? w32(w->data, 0) : 0;
	rpcr_xprt_stats_get(P, &st0);
	hdr_msg(m, xid, 1, RPCR_PROTO_V1_ERROR, 5);
	rpcr_xdr_store32(m + 16, RPCR_PROTO_V1_ERR_CHUNK);
	deliver(qp, m, 20, 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -EPROTO);
	CHECK(take(qp) == NULL);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.rdma_errors_recv - st0.rdma_errors_recv, 1);
	CHECK_EQ(st1.rdma_errors_sent, st0.rdma_errors_sent);

	/* Longer than a Send: not sent (no chunks in this direction). */
	rpcr_xprt_stats_get(P, &st0);
	tcall_init(&t, 1);
	len = 5000;
	t.call.encode = enc_bytes;
	t.call.args = &len;
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -EMSGSIZE);
	CHECK(take(qp) == NULL);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.bcalls_too_long - st0.bcalls_too_long, 1);

	/* The connection lost with a call outstanding (RFC 8167 section 2.3): it waits, and so do
	 * calls made after, for the client's next connection; one whose deadline comes first
	 * times out. */
	tcall_init(&t, 0);
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	w = take(qp);
	xid = w != NULL ? w32(w->data, 0) : 0;
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	poll_ms(2);
	qp = NULL;
	CHECK_EQ(t.done, 0);
	CHECK(!rpcr_clnt_connected(bc));
	tcall_init(&t2, 0);
	CHECK_EQ(rpcr_clnt_call(bc, &t2.call), 0);
	tcall_init(&t3, 0);
	t3.call.timeout_us = 2000;
	CHECK_EQ(rpcr_clnt_call(bc, &t3.call), 0);
	POLL_UNTIL(t3.done != 0);
	CHECK_EQ(t2.done, 0);
	CHECK_EQ(t3.done, 1);
	CHECK_EQ(t3.call.status, -ETIMEDOUT);
	/* The client's next connection: a request there moves the client to it (after the reply
	 * to that request, the first call goes again with its xid; the second once the client's
	 * reply grants a credit more). */
	rpcr_xprt_stats_get(P, &st0);
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	rebind_cl = bc;
	rebind_rc = 1;
	deliver(qp, m, bcall_msg(m, 0x200, 4, 0x2f5a00f2, 1, NULL, 0), 0);
	polls(3);
	CHECK_EQ(rebind_rc, 0);
	check_plain_reply(take(qp), 0x200, 4);
	w = take(qp);
	CHECK(w != NULL && w32(w->data, 0) == xid && w32(w->data, 8) == RPCR_ONCRPC_CALL);
	CHECK(take(qp) == NULL);
	deliver(qp, m, reply_msg(m, xid, 2, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, 0);
	w = take(qp);
	xid2 = w != NULL ? w32(w->data, 0) : 0;
	CHECK(w != NULL && xid2 != xid && w32(w->data, 8) == RPCR_ONCRPC_CALL);
	deliver(qp, m, reply_msg(m, xid2, 2, 0, NULL, 0), 0);
	polls(3);
	CHECK_EQ(t2.done, 1);
	CHECK_EQ(t2.call.status, 0);
	rpcr_xprt_stats_get(P, &st1);
	CHECK_EQ(st1.brebinds - st0.brebinds, 1);
	CHECK_EQ(st1.retransmits - st0.retransmits, 1);
	/* Moved again to where it is: nothing to do. To another connection while this one
	 * lives: -EBUSY. */
	deliver(qp, m, bcall_msg(m, 0x201, 4, 0x2f5a00f2, 1, NULL, 0), 0);
	polls(3);
	CHECK_EQ(rebind_rc, 0);
	take(qp);
	qp3 = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp3 != NULL);
	if (qp3 != NULL) {
		deliver(qp3, m, bcall_msg(m, 0x202, 4, 0x2f5a00f2, 1, NULL, 0), 0);
		polls(3);
		CHECK_EQ(rebind_rc, -EBUSY);
		take(qp3);
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp3, NULL, 0);
		flush_recvs(qp3);
		poll_ms(2);
	}
	/* Its server going: the calls it holds for a connection fail, and so do calls after. */
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	poll_ms(2);
	qp = NULL;
	tcall_init(&t, 0);
	CHECK_EQ(rpcr_clnt_call(bc, &t.call), 0);
	polls(3);
	CHECK_EQ(t.done, 0);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	s = NULL;
	CHECK_EQ(t.done, 1);
	CHECK_EQ(t.call.status, -ECONNRESET);
	tcall_init(&t2, 0);
	CHECK_EQ(rpcr_clnt_call(bc, &t2.call), 0);
	polls(3);
	CHECK_EQ(t2.done, 1);
	CHECK_EQ(t2.call.status, -ECONNRESET);
out:
	bc2 = bc;
	if (bc2 != NULL)
		rpcr_clnt_destroy(bc2);
	if (s != NULL)
		server_end(s, qp);
}

/*
 * The reverse direction with chunks (version 2, BRS GENL, §5.2.5). A client's responder: its
 * CONNPROP says BRS (GENL by default, with RCSIZ, as a responder that takes chunks; CONT where
 * configured); a call back with a read chunk and a write chunk (BULK of 3000 bytes) is pulled
 * (RDMA Read), its echo written into the write chunk (RDMA Write, the data the read brought)
 * and answered with RESPONSE and the written length, and a call back whole in a position-zero
 * read chunk (RDMA2_NOMSG) is pulled and served; under CONT the same call is answered
 * RDMA2_ERR_WRITE_CHUNKS with a maximum of 0 (§4.5.4), nothing read. A server's requester: where its client said GENL, a call back of
 * 3000 DDP-eligible bytes carries a read chunk and a write chunk for the echo; where it said
 * CONT, neither (the data inline).
 */
static void
case_v2_reverse_genl(void)
{
	static uint8_t src[3000];
	struct rpcr_xprt_stats st0, st1;
	struct rpcr_proto_v2_props o;
	struct rpcr_proto_v2_hdr h;
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt *cl;
	struct rpcr_svc *s;
	struct fake_qp *qp;
	struct fake_wr *w;
	uint8_t pd[32], m[512];
	uint32_t i, k, n;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 5);
	for (k = 0; k < 2; k++) {
		const bool genl = k == 0;

		memset(&cc, 0, sizeof(cc));
		cc.addr = "peer";
		cc.prog = RPCR_TESTPROG;
		cc.vers = 1;
		cc.credits = 8;
		cc.ulb = rpcr_testprog_ulb;
		cc.nulb = 4;
		cc.bc_credits = 4;
		cc.bc_brs = genl ? 0 : RPCR_PROTO_V2_RVRSDIR_CONT;
		cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
		cl = rpcr_clnt_create(P, &cc);
		qp = establish(pd, peer_pdata(pd, 4096, 4096, true, UINT32_MAX));
		if (cl == NULL || qp == NULL) {
			CHECK(false);
			return;
		}
		CHECK_EQ(rpcr_testprog_cb_register(cl), 0);
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			goto next;
		props_sent(w, &o);
		CHECK_EQ(o.brs, genl ? RPCR_PROTO_V2_RVRSDIR_GENL : RPCR_PROTO_V2_RVRSDIR_CONT);
		CHECK_EQ(o.rcsiz,
			 genl ? 32u : rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RCSIZ));
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		server_props(qp, 4, NULL);
		/* BULK of 3000 bytes: a read chunk at the opaque's data (the RPC call's 40 bytes
		 * and its length word), a write chunk for the echo. */
		{
			struct rpcr_proto_rseg rd = {.position = 44, .seg = {0x77, 3000, 0x10000}};
			struct rpcr_proto_seg ws = {0x88, 4000, 0x20000};
			struct rpcr_proto_wchunk wch = {.segs = &ws, .nsegs = 1};
			struct rpcr_proto_chunks ch;
			uint32_t len = rte_cpu_to_be_32(3000);

			rpcr_proto_chunks_init(&ch, &rd, 1, &wch, 1, &ws, 1);
			ch.nreads = 1;
			ch.nwrites = 1;
			ch.nsegs = 1;
			n = call_msg_v2(m, sizeof(m), 0x900 + k, 4u << 16 | 1, 0,
					RPCR_TESTPROG_CB_BULK, &ch, &len, 4);
			rpcr_xdr_store32(m + n - 4 - 40 + 12, RPCR_TESTPROG_CB); /* (its prog) */
		}
		rpcr_xprt_stats_get(P, &st0);
		deliver(qp, m, n, 0);
		polls(3);
		rpcr_xprt_stats_get(P, &st1);
		if (!genl) {
			/* (§4.5.4: its lack of support reported, the first limit broken: a write
			 * chunk where it takes 0.) */
			w = expect_v2_error(qp, 0x901, RPCR_PROTO_V2_ERR_WRITE_CHUNKS);
			if (w != NULL) {
				CHECK(v2_sent(w, &h) > 0);
				CHECK_EQ(h.max_chunks, 0);
			}
			CHECK(take(qp) == NULL); /* (nothing read) */
			CHECK_EQ(st1.bcalls_refused, st0.bcalls_refused);
			CHECK_EQ(st1.bcalls_chunks_recv - st0.bcalls_chunks_recv, 1);
			goto next;
		}
		CHECK_EQ(st1.bcalls_chunks_recv - st0.bcalls_chunks_recv, 1);
		w = take(qp);
		CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ && w->wr.rkey == 0x77 &&
		      w->wr.remote_addr == 0x10000);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, src);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_WRITE && w->wr.rkey == 0x88 &&
		      w->wr.remote_addr == 0x20000 && w->len == 3000 &&
		      memcmp(w->data, src, 3000) == 0);
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0);
		if (w != NULL) {
			CHECK(h.xid == 0x900 && h.flags == RPCR_PROTO_V2_F_RESPONSE &&
			      h.chunks.nwrites == 1 && h.chunks.writes[0].nsegs == 1 &&
			      h.chunks.writes[0].segs[0].length == 3000 && h.chunks.nreads == 0);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		rpcr_xprt_stats_get(P, &st1);
		CHECK_EQ(st1.breplies_sent - st0.breplies_sent, 1);
		/* RDMA2_NOMSG: the whole call back in a position-zero read chunk, pulled, served,
		 * its echo of 100 bytes inline. */
		{
			static uint8_t rpc[256], args[104];
			struct rpcr_proto_rseg rd0 = {.position = 0, .seg = {0x66, 0, 0x30000}};
			struct rpcr_proto_chunks ch;
			uint32_t rl;

			rpcr_xdr_store32(args, 100);
			memset(args + 4, 0x3c, 100);
			rl = rpc_call(rpc, sizeof(rpc), 0x902, RPCR_TESTPROG_CB_BULK, args, 104);
			rpcr_xdr_store32(rpc + 12, RPCR_TESTPROG_CB);
			rd0.seg.length = rl;
			rpcr_proto_chunks_init(&ch, &rd0, 1, NULL, 0, NULL, 0);
			ch.nreads = 1;
			v2_hdr(&h, 0x902, 4u << 16 | 1, RPCR_PROTO_V2_NOMSG);
			h.chunks = ch;
			n = (uint32_t)rpcr_proto_v2_encode(&h, m, sizeof(m));
			deliver(qp, m, n, 0);
			polls(3);
			w = take(qp);
			CHECK(w != NULL && w->wr.opcode == RPCR_RDEV_WR_READ &&
			      w->wr.rkey == 0x66 && w->wr.remote_addr == 0x30000);
			complete_sends(qp, RPCR_RDEV_WC_SUCCESS, rpc);
			polls(3);
			w = take(qp);
			CHECK(w != NULL && v2_sent(w, &h) > 0 && h.xid == 0x902 &&
			      h.flags == RPCR_PROTO_V2_F_RESPONSE && h.htype == RPCR_PROTO_V2_MSG);
			CHECK(w != NULL && w->len > 100 &&
			      memcmp(w->data + w->len - 100, args + 4, 100) == 0);
			complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		}
	next:
		rpcr_clnt_destroy(cl);
		polls(2);
	}

	/* The server's requester, its client saying GENL, then CONT. */
	for (k = 0; k < 2; k++) {
		const bool genl = k == 0;
		struct rpcr_proto_v2_prop pr;
		uint32_t args[3] = {rte_cpu_to_be_32(1), rte_cpu_to_be_32(3000), 0}, xid;
		uint8_t v[4];

		qp = v2_server(8, false, 0xa00, &s);
		if (qp == NULL)
			return;
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		while (take(qp) != NULL)
			;
		rpcr_proto_v2_prop_set_u32(&pr, RPCR_PROTO_V2_PROP_BRS, v,
					   genl ? RPCR_PROTO_V2_RVRSDIR_GENL
						: RPCR_PROTO_V2_RVRSDIR_CONT);
		deliver(qp, m, props_msg(m, sizeof(m), 0xa01, 0, &pr, 1), 0);
		polls(3);
		rpcr_xprt_stats_get(P, &st0);
		/* CBBULK: one call back of 3000 bytes. */
		deliver(qp, m,
			call_msg_v2(m, sizeof(m), 0xa02, 8u << 16 | 1, 0, RPCR_TESTPROG_CBBULK,
				    NULL, args, sizeof(args)),
			0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0);
		if (w == NULL)
			goto out;
		xid = h.xid;
		CHECK_EQ(h.flags, 0); /* (a call) */
		rpcr_xprt_stats_get(P, &st1);
		if (genl) {
			CHECK(h.chunks.nreads == 1 && h.chunks.reads[0].position == 44 &&
			      h.chunks.reads[0].seg.length == 3000);
			CHECK(h.chunks.nwrites == 1 && h.chunks.writes[0].nsegs >= 1 &&
			      h.chunks.writes[0].segs[0].length != 0);
			CHECK_EQ(st1.bcalls_chunks_sent - st0.bcalls_chunks_sent, 1);
		} else {
			CHECK(rpcr_proto_chunks_empty(&h.chunks));
			CHECK(w->len > 3000);
			CHECK_EQ(st1.bcalls_chunks_sent, st0.bcalls_chunks_sent);
		}
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		/* The echo inline (the write chunk unused), the READ sequence: verified. */
		{
			uint32_t rep[7] = {xid, RPCR_ONCRPC_REPLY, 0, 0, 0, 0, 3000};
			ssize_t hl;

			v2_hdr(&h, xid, 64u << 16 | 4, RPCR_PROTO_V2_MSG);
			h.flags = RPCR_PROTO_V2_F_RESPONSE;
			hl = rpcr_proto_v2_encode(&h, m, sizeof(m));
			CHECK(hl > 0);
			{
				static uint8_t big[4096];

				memcpy(big, m, (size_t)hl);
				n = (uint32_t)hl + words(big + hl, rep, 7);
				for (i = 0; i < 3000; i++)
					big[n + i] = rpcr_testprog_byte(i);
				deliver(qp, big, n + 3000, 0);
			}
		}
		polls(3);
		/* CBBULK's reply: 1 verified. */
		w = take(qp);
		CHECK(w != NULL && v2_sent(w, &h) > 0 && h.xid == 0xa02);
		if (w != NULL)
			CHECK_EQ(w32(w->data + w->len - 4, 0), 1);
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	out:
		event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
		flush_recvs(qp);
		polls(3);
		rpcr_svc_destroy(s);
	}
}

struct bc_last {
	struct rpcr_call call;
	struct rpcr_clnt *bc;
	int done;
};

static void
bc_last_done(struct rpcr_call *call)
{
	struct bc_last *l = call->user;

	l->done++;
	rpcr_clnt_destroy(l->bc); /* its last reference, from its own timer loop */
}

/* A reverse client's last reference given back in the completion of one of its calls, run
 * from the loop over its slots (a timeout after its connection went): freed after the loop. */
static void
case_reverse_last_ref(void)
{
	static const struct rpcr_svc_proc procs[] = {{.proc = 0, .handler = h_bclnt}};
	const struct rpcr_svc_prog pg = {
		.prog = 0x2f5a00f2, .vers = 1, .procs = procs, .nprocs = 1};
	struct rpcr_svc_conf sc;
	struct fake_req req;
	struct fake_qp *qp;
	struct bc_last l;
	struct rpcr_svc *s;
	uint8_t pd[32], m[512];

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = 4;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_EQ(rpcr_svc_register(s, &pg), 0);
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	CHECK(qp != NULL);
	if (qp == NULL)
		goto out;
	bclnt_got = NULL;
	deliver(qp, m, bcall_msg(m, 0x100, 4, 0x2f5a00f2, 0, NULL, 0), 0);
	polls(3);
	take(qp);
	CHECK(bclnt_got != NULL);
	if (bclnt_got == NULL)
		goto out;
	memset(&l, 0, sizeof(l));
	l.bc = bclnt_got;
	l.call.proc = 0;
	l.call.timeout_us = 2000;
	l.call.done = bc_last_done;
	l.call.user = &l;
	CHECK_EQ(rpcr_clnt_call(l.bc, &l.call), 0);
	polls(3);
	CHECK(take(qp) != NULL);
	event(RPCR_RDEV_EVENT_DISCONNECTED, qp, NULL, 0);
	flush_recvs(qp);
	qp = NULL;
	POLL_UNTIL(l.done != 0);
	CHECK_EQ(l.done, 1);
	CHECK_EQ(l.call.status, -ETIMEDOUT);
out:
	server_end(s, qp);
}

static struct rte_mbuf *ulb_res_m;
static bool ulb_set;
static int ulb_res_rc;

/* Results with one DDP-eligible item, in a procedure whose own binding has none: only with the
 * request's binding (rpcr_svc_req_set_ulb()). */
static enum rpcr_svc_verdict
h_ulb_res(struct rpcr_svc_req *r)
{
	static const struct rpcr_ulb u = {.res_bulk = 1, .threshold = 16};
	struct rpcr_bulk b = {ulb_res_m, 0, 100};

	if (ulb_set)
		CHECK_EQ(rpcr_svc_req_set_ulb(r, &u), 0);
	ulb_res_rc = rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b);
	if (ulb_res_rc != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static void
case_server_req_ulb(void)
{
	static const struct rpcr_svc_proc procs[] = {{.proc = 0, .handler = h_ulb_res}};
	const struct rpcr_svc_prog pg = {
		.prog = 0x2f5a00f3, .vers = 1, .procs = procs, .nprocs = 1};
	const uint32_t wl[7] = {1, 1, 0x1234, 4096, 0, 0x20000, 0};
	struct rpcr_svc_conf sc;
	struct fake_req req;
	struct fake_qp *qp = NULL;
	struct fake_wr *w;
	struct rpcr_svc *s;
	uint8_t pd[32], m[512], m2[512];
	uint32_t n, i;

	memset(&sc, 0, sizeof(sc));
	sc.addr = "here";
	sc.credits = 4;
	s = rpcr_svc_create(P, &sc);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_EQ(rpcr_svc_register(s, &pg), 0);
	ulb_res_m = rpcr_chunk_alloc_chain(rpcr_xprt_poller_bulk_pool(P), 100);
	CHECK(ulb_res_m != NULL);
	qp = accept_one(s, pd, peer_pdata(pd, 4096, 4096, false, 0), &req);
	if (qp == NULL || ulb_res_m == NULL) {
		CHECK(false);
		goto out;
	}
	for (i = 0; i < 2; i++) {
		/* A call offering one write chunk of 4096 bytes (words 5-11). */
		n = bcall_msg(m, 0x300 + i, 4, 0x2f5a00f3, 0, NULL, 0);
		memcpy(m2, m, 20);
		words(m2 + 20, wl, 7);
		memcpy(m2 + 48, m + 24, n - 24);
		ulb_set = i == 1;
		deliver(qp, m2, n + 24, 0);
		polls(3);
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			break;
		if (!ulb_set) {
			/* The procedure's binding: no DDP-eligible result, SYSTEM_ERR. */
			CHECK_EQ(ulb_res_rc, -E2BIG);
			CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_SEND);
			CHECK_EQ(w32(w->data, w->len / 4 - 1), RPCR_ONCRPC_SYSTEM_ERR);
			continue;
		}
		/* The request's own: the result RDMA-Written into the write chunk, then the reply
		 * with the length written. */
		CHECK_EQ(ulb_res_rc, 0);
		CHECK_EQ(w->wr.opcode, RPCR_RDEV_WR_WRITE);
		CHECK_EQ(w->wr.remote_addr, 0x20000);
		CHECK_EQ(w->len, 100);
		w = take(qp);
		CHECK(w != NULL);
		if (w == NULL)
			break;
		CHECK_EQ(w32(w->data, 5), 1);
		CHECK_EQ(w32(w->data, 8), 100);
	}
	complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
	polls(2);
out:
	server_end(s, qp);
	rte_pktmbuf_free(ulb_res_m);
	ulb_res_m = NULL;
}

static const struct rpcr_test_case cases[] = {
	{"client_connect", case_client_connect},
	{"client_no_pdata", case_client_no_pdata},
	{"client_credits", case_client_credits},
	{"client_call_ulb", case_client_call_ulb},
	{"server_req_ulb", case_server_req_ulb},
	{"reverse_last_ref", case_reverse_last_ref},
	{"client_bad_replies", case_client_bad_replies},
	{"client_reconnect", case_client_reconnect},
	{"client_disconnect", case_client_disconnect},
	{"client_send_buffers", case_client_send_buffers},
	{"client_timeout_credit", case_client_timeout_credit},
	{"client_chunks", case_client_chunks},
	{"client_v2", case_client_v2},
	{"server_v2", case_server_v2},
	{"v2_cont", case_v2_cont},
	{"client_v2_cont", case_client_v2_cont},
	{"client_post_fails", case_client_post_fails},
	{"v2_xchar", case_v2_xchar},
	{"v2_reverse_genl", case_v2_reverse_genl},
	{"server_basics", case_server_basics},
	{"server_chunks", case_server_chunks},
	{"server_overrun", case_server_overrun},
	{"server_limits", case_server_limits},
	{"server_peer_auth", case_server_peer_auth},
	{"server_buffers", case_server_buffers},
	{"server_waiting", case_server_waiting},
	{"server_lost_waiting", case_server_lost_waiting},
	{"server_replies_turns", case_server_replies_turns},
	{"server_batch_full", case_server_batch_full},
	{"server_reply_reads", case_server_reply_reads},
	{"client_reply_reads", case_client_reply_reads},
	{"server_musts", case_server_musts},
	{"client_musts", case_client_musts},
	{"client_windows", case_client_windows},
	{"direction", case_direction},
	{"reverse_responder", case_reverse_responder},
	{"reverse_requester", case_reverse_requester},
};

int
main(int argc, char **argv)
{
	struct rpcr_xprt_poller_conf pc;
	int rc;

	if (rpcr_test_eal_init() != 0)
		return 1;
	dev = rpcr_rdev_open("fake");
	arena = rpcr_mem_arena_create("fake", 128u << 20, 0);
	memset(&pc, 0, sizeof(pc));
	pc.name = "fake";
	pc.dev = dev;
	pc.arena = arena;
	pc.bufs = 4096;
	pc.bulk_bufs = 64;
	P = dev != NULL && arena != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	fake_dev = dev;
	fake_poller = P;
	if (P == NULL) {
		fprintf(stderr, "set-up failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	rc = rpcr_test_main(argc, argv, cases, RTE_DIM(cases));
	/* Everything given back: no buffer, registration or object left behind. */
	if (rpcr_xprt_poller_destroy(P) != 0) {
		fprintf(stderr, "poller busy at exit\n");
		rc = 1;
	}
	if (rpcr_mem_arena_free(arena) != 0) {
		fprintf(stderr, "arena still has allocations\n");
		rc = 1;
	}
	if (rpcr_rdev_close(dev) != 0) {
		fprintf(stderr, "device still has objects\n");
		rc = 1;
	}
	return rc;
}
