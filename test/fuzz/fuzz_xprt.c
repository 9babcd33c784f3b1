/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Fuzz the engine's receive paths through the fake device (test/xprt/fake_rdev.c): each input
 * is one message delivered into a posted receive, of a server (FUZZ_SIDE 0: as a call), of a
 * client with a call out (FUZZ_SIDE 1: as its reply, the xid patched in so that the reply path
 * is reached), or of a server of versions 1 and 2 on a connection a first version-2 call has
 * fixed at version 2 (FUZZ_SIDE 2), or of a client of versions 1 and 2 (FUZZ_SIDE 3: its
 * replies in version 2, negotiation included, and its server's calls back, chunks and all:
 * BRS GENL). Whatever the bytes, the engine
 * must not crash, leak or hang: every work request it posts is completed, and a connection it
 * fails is made again for the next input.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include <rpcr_chunk.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_xprt.h>

#include "eal_test.h"
#include "fake_rdev.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define FUZZ_LSAN 1
#endif
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rpcr_xprt_poller *P;
static struct rpcr_mem_arena *arena, *data_arena;
static struct rpcr_mem_cache *cache;
static struct rpcr_mem_reg *data_reg;
static struct rpcr_rdev *dev;
static struct fake_qp *qp;
static struct rpcr_svc *S;
static struct rpcr_clnt *C;

#ifdef FUZZ_LSAN
/* LeakSanitizer does not scan DPDK's memory, where the engine keeps its pointers to what it
 * calloc()s (its chunk pools): scan it as a root, so that libFuzzer's leak check (after an input
 * that allocated more than it freed) sees them reachable. (Measured: xprt_svc ran 907k inputs in
 * 20 s with it, 355k without.) */
static int
lsan_root(const struct rte_memseg_list *msl, const struct rte_memseg *ms, size_t len, void *arg)
{
	RTE_SET_USED(msl);
	RTE_SET_USED(arg);
	__lsan_register_root_region(ms->addr, len);
	return 0;
}
#endif

static void
setup(void)
{
	struct rpcr_xprt_poller_conf pc;
	if (rpcr_test_eal_init() != 0)
		abort();
#ifdef FUZZ_LSAN
	rte_memseg_contig_walk(lsan_root, NULL);
#endif
	dev = rpcr_rdev_open("fake");
	arena = rpcr_mem_arena_create("fuzz", 256u << 20, 0);
	memset(&pc, 0, sizeof(pc));
	pc.name = "fuzz";
	pc.dev = dev;
	pc.arena = arena;
	pc.bufs = 2048;
	pc.bulk_bufs = 128;
	P = dev != NULL && arena != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	if (P == NULL)
		abort();
	fake_dev = dev;
	fake_poller = P;
}

/* Every WR posted completes (RDMA Reads read whatever is there), until the engine is quiet. */
static void
drain(void)
{
	int i;

	for (i = 0; i < 8 && qp != NULL && last_qp == qp; i++) {
		complete_sends(qp, RPCR_RDEV_WC_SUCCESS, NULL);
		polls(2);
		if (last_qp != qp)
			break;
		while (take(qp) != NULL)
			;
	}
}

/* ---- server ---- */

static void
server_conn(void)
{
	struct rpcr_svc_conf sc;
	struct fake_req req;
	struct rpcr_rdev_event ev;
	uint8_t pd[32];

	if (S == NULL) {
		memset(&sc, 0, sizeof(sc));
		sc.addr = "fuzz";
		sc.credits = 16;
		sc.remote_inv = true;
		sc.msgp_thresh = 64;
		if (FUZZ_SIDE == 2)
			sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
		S = rpcr_svc_create(P, &sc);
		if (S == NULL || rpcr_testprog_register(S, 0) != 0)
			abort();
	}
	memset(&req, 0, sizeof(req));
	req.pub.dev = fake_dev;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCR_RDEV_EVENT_CONNECT_REQUEST;
	ev.listener = last_listener;
	ev.req = &req.pub;
	ev.pdata_len = peer_pdata(ev.pdata, 4096, 4096, true, 7);
	rpcr_rdev_event_push(fake_dev, &ev);
	poll_ms(1);
	qp = req.accepted;
	if (qp == NULL)
		abort();
	event(RPCR_RDEV_EVENT_ESTABLISHED, qp, pd, 0);
	poll_ms(1);
	if (FUZZ_SIDE == 2) {
		/* A version-2 NULL call first: the connection speaks version 2 from here on. */
		struct rpcr_oncrpc_call call = {
			.xid = 1, .rpcvers = 2, .prog = RPCR_TESTPROG, .vers = 1, .proc = 0};
		struct rpcr_proto_v2_hdr h;
		uint8_t m[128];
		ssize_t n, k;

		memset(&h, 0, sizeof(h));
		h.xid = 1;
		h.vers = RPCR_PROTO_V2_VERS;
		h.credit = 8u << 16 | 1;
		h.htype = RPCR_PROTO_V2_MSG;
		n = rpcr_proto_v2_encode(&h, m, sizeof(m));
		k = n > 0 ? rpcr_oncrpc_call_encode(&call, m + n, sizeof(m) - (size_t)n) : -1;
		if (k < 0 || deliver(qp, m, (uint32_t)(n + k), 0) != 0)
			abort();
		polls(2);
		/* Its reply is version 2's, or this would fuzz version 1 again. */
		{
			struct fake_wr *w = take(qp);

			if (w == NULL || w->len < 8 || w32(w->data, 1) != RPCR_PROTO_V2_VERS)
				abort();
		}
	}
}

/* ---- client ---- */

static struct rpcr_call call;
static bool call_out;
static uint32_t call_xid;
static struct rpcr_bulk arg, dst, out;

static int
enc(struct rpcr_msg *m, const void *a)
{
	return rpcr_msg_put_bulk(m, a);
}

static int
dec(struct rpcr_msg *m, void *r)
{
	return rpcr_msg_get_bulk(m, UINT32_MAX, r);
}

static void
done(struct rpcr_call *c)
{
	RTE_SET_USED(c);
	call_out = false;
}

static void
client_conn(void)
{
	uint8_t pd[32];
	uint8_t plen;

	if (C == NULL) {
		struct rpcr_clnt_conf cc;

		memset(&cc, 0, sizeof(cc));
		cc.addr = "fuzz";
		cc.prog = RPCR_TESTPROG;
		cc.vers = 1;
		cc.credits = 4;
		cc.remote_inv = true;
		cc.ulb = rpcr_testprog_ulb;
		cc.nulb = 4;
		if (FUZZ_SIDE == 3) {
			/* (Its responder too: calls back, with chunks under BRS GENL.) */
			cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
			cc.bc_credits = 4;
		}
		C = rpcr_clnt_create(P, &cc);
		if (C == NULL)
			abort();
		if (FUZZ_SIDE == 3 && rpcr_testprog_cb_register(C) != 0)
			abort();
	} else {
		poll_ms(3); /* the reconnect back-off */
	}
	qp = last_qp;
	if (qp == NULL)
		abort();
	/* A server that speaks the draft's MSGP and DONE, not CONF (nothing would answer it). */
	plen = peer_pdata(pd, 4096, 4096, true, 3);
	event(RPCR_RDEV_EVENT_ESTABLISHED, qp, pd, plen);
	poll_ms(1);
}

static void
client_call(void)
{
	struct fake_wr *w;

	if (!call_out) {
		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_ECHO;
		call.encode = enc;
		call.args = &arg;
		call.decode = dec;
		call.res = &out;
		call.res_bulk = &dst;
		call.nres_bulk = 1;
		call.reply_max = 5000;
		call.done = done;
		call_out = true;
		if (rpcr_clnt_call(C, &call) != 0)
			abort();
	}
	polls(2);
	/* The call's Send (a first one, or a resend after a reconnect): its xid. */
	while ((w = take(qp)) != NULL)
		if (w->wr.opcode == RPCR_RDEV_WR_SEND && w->len >= 4)
			call_xid = w32(w->data, 0);
}

/* At exit everything goes back, so that the leak check sees only real leaks. */
static void
teardown(void)
{
	if (C != NULL)
		rpcr_clnt_destroy(C);
	if (S != NULL)
		rpcr_svc_destroy(S);
	rte_pktmbuf_free(arg.m);
	rte_pktmbuf_free(dst.m);
	if (data_reg != NULL)
		rpcr_mem_unreg(cache, data_reg);
	if (cache != NULL)
		rpcr_mem_cache_free(cache);
	/* A leak of engine buffers shows here: the poller refuses to go while any is out. */
	if (rpcr_xprt_poller_destroy(P) != 0) {
		fprintf(stderr, "buffers still out at exit\n");
		abort();
	}
	rpcr_mem_arena_free(data_arena);
	rpcr_mem_arena_free(arena);
	rpcr_rdev_close(dev);
}

/* Set-up before fuzzing: what it allocates lives for the whole run. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	setup();
	atexit(teardown);
	if (FUZZ_SIDE == 1 || FUZZ_SIDE == 3) {
		/* Argument (read chunk) and result (write chunk) buffers, registered. */
		uint8_t *m2;

		data_arena = rpcr_mem_arena_create("fuzzdata", 8u << 20, 0);
		cache = rpcr_mem_cache_create(rpcr_xprt_poller_pd(P), NULL);
		m2 = data_arena != NULL ? rpcr_mem_arena_alloc(data_arena, 1u << 20, 4096) : NULL;
		data_reg = m2 != NULL && cache != NULL
				   ? rpcr_mem_reg(cache, m2, 1u << 20, RPCR_RDEV_ACCESS_LOCAL_WRITE)
				   : NULL;
		if (data_reg == NULL)
			abort();
		arg.m = rpcr_chunk_attach(rpcr_xprt_poller_pool(P), data_reg, m2, 2000, NULL, NULL);
		arg.len = 2000;
		dst.m = rpcr_chunk_attach(rpcr_xprt_poller_pool(P), data_reg, m2 + 65536, 8000,
					  NULL, NULL);
		dst.len = 8000;
		client_conn();
	} else {
		server_conn();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[16384];

	if (size > sizeof(buf))
		return 0;
	if (FUZZ_SIDE == 0 || FUZZ_SIDE == 2) {
		if (qp == NULL || last_qp != qp)
			server_conn();
		deliver(qp, data, (uint32_t)size, 0);
		polls(2);
	} else {
		/* (Side 3: a client of versions 1 and 2 that fell back to version 1 is made again,
		 * its call out completing with -ECONNABORTED, so that the inputs keep reaching
		 * version 2's paths.) */
		if (FUZZ_SIDE == 3 && C != NULL) {
			struct rpcr_clnt_info info;

			if (rpcr_clnt_info_get(C, &info) == 0 && info.connected &&
			    info.rdma_vers == 1) {
				rpcr_clnt_destroy(C);
				C = NULL;
				qp = NULL;
			}
		}
		if (qp == NULL || last_qp != qp)
			client_conn();
		client_call();
		memcpy(buf, data, size);
		/* (A version-2 message without RESPONSE is a call back: its xid left as it is,
		 * for its RPC header's to match.) */
		if (size >= 4 && !(FUZZ_SIDE == 3 && size >= 20 && rpcr_xdr_load32(buf + 4) == 2 &&
				   !(rpcr_xdr_load32(buf + 16) & RPCR_PROTO_V2_F_RESPONSE)))
			rpcr_xdr_store32(buf, call_xid);
		if (last_qp == qp)
			deliver(qp, buf, (uint32_t)size, size >= 8 ? w32(buf, 1) : 0);
		polls(2);
	}
	drain();
	return 0;
}
