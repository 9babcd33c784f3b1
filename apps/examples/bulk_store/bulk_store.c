/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * bulk_store: a tiny object store that never copies its objects' bytes, client and server in one
 * process over shm (doc/xprt.md, "Serving your own program").
 *
 *   PUT(uint32 key, opaque data<>) -> uint32 0: the server keeps the data where it landed (the
 *       buffers the RDMA Read of its read chunk filled, or for a small one the receive buffer
 *       itself) by taking a reference on them: rpcr_chunk_hold().
 *   GET(uint32 key) -> opaque data<>: the server replies from those same buffers; the engine
 *       RDMA Writes them straight into the buffer the client offered for the result (a write
 *       chunk), or sends a small one inline.
 *
 * A small object held this way keeps a whole receive buffer (10 KiB, of the pool receives are
 * replenished from) out of use: a store with many small objects copies those under the
 * binding's threshold instead, or sizes the pool for them (rpcr_xprt_poller_conf::bufs).
 *
 * The client's objects are chains of registered memory (rpcr_bulk_alloc()), filled in place and
 * sent from there; a GET's result lands in another such chain and is compared where it landed,
 * inside the call's decoder, while its view is valid. Objects: 100 bytes (inline both ways),
 * 64 KiB, and 4 MiB (read chunk in, write chunk out).
 *
 * Run: ./bulk_store --no-huge -l 0
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include <rpcr_xprt.h>

enum { STORE_PROG = 0x20000c02, STORE_VERS = 1, PUT = 1, GET = 2, NOBJ = 16 };

/* The server's store: views of received buffers it holds a reference on. */
static struct rpcr_bulk store[NOBJ];

struct put_args {
	uint32_t key;
	struct rpcr_bulk data;
};

static int
put_enc(struct rpcr_msg *m, const void *v)
{
	const struct put_args *a = v;

	return rpcr_msg_enc_u32(m, &a->key) | rpcr_msg_enc_bulk(m, &a->data);
}

static int
put_dec(struct rpcr_msg *m, void *v)
{
	struct put_args *a = v;

	return rpcr_msg_dec_u32(m, &a->key) | rpcr_msg_dec_bulk(m, &a->data);
}

/* GET's result on the client: checked against what was PUT while its view is valid. */
struct get_res {
	const uint8_t *expect;
	uint32_t len;
	bool same;
};

static int
get_res_dec(struct rpcr_msg *m, void *v)
{
	struct get_res *r = v;
	struct rpcr_bulk data;
	int rc = rpcr_msg_dec_bulk(m, &data);

	if (rc == 0)
		r->same = rpcr_bulk_cmp(&data, r->expect, r->len) == 0;
	return rc;
}

static enum rpcr_svc_verdict
put(struct rpcr_svc_req *r)
{
	struct put_args a;
	uint32_t status = 0;

	if (rpcr_svc_req_get_args(r, &a) != 0)
		return RPCR_SVC_ERROR; /* GARBAGE_ARGS */
	if (a.key >= NOBJ) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	rte_pktmbuf_free(store[a.key].m); /* (the object it replaces, if any) */
	rpcr_chunk_hold(a.data.m);        /* keep the buffers past this handler: no copy */
	store[a.key] = a.data;
	return rpcr_svc_req_put_res(r, &status) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static enum rpcr_svc_verdict
get(struct rpcr_svc_req *r)
{
	uint32_t key;

	if (rpcr_svc_req_get_args(r, &key) != 0)
		return RPCR_SVC_ERROR;
	if (key >= NOBJ || store[key].m == NULL) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	/* The engine holds the buffers until the reply has gone. */
	return rpcr_svc_req_put_res(r, &store[key]) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static const struct rpcr_svc_proc store_procs[] = {
	{.proc = PUT,
	 .handler = put,
	 .ulb = {.args_bulk = 1},
	 .encode_args = put_enc,
	 .decode_args = put_dec,
	 .encode_res = rpcr_msg_enc_u32,
	 .decode_res = rpcr_msg_dec_u32},
	{.proc = GET,
	 .handler = get,
	 .ulb = {.res_bulk = 1},
	 .encode_args = rpcr_msg_enc_u32,
	 .decode_args = rpcr_msg_dec_u32,
	 .encode_res = rpcr_msg_enc_bulk,
	 .decode_res = get_res_dec},
};

static const struct rpcr_svc_prog store_prog = {.prog = STORE_PROG,
						.vers = STORE_VERS,
						.procs = store_procs,
						.nprocs = RTE_DIM(store_procs)};

/* PUT an object of @len bytes under @key, GET it back into a buffer of our own, compare. */
static int
put_get(struct rpcr_xprt_poller *p, struct rpcr_clnt *c, uint32_t key, uint32_t len)
{
	struct put_args a = {key, {rpcr_bulk_alloc(p, len), 0, len}};
	struct rpcr_bulk dst = {rpcr_bulk_alloc(p, len), 0, len};
	uint8_t *expect = malloc(len);
	struct get_res res = {expect, len, false};
	struct rpcr_call call;
	uint32_t status = 1, i;
	int rc = -ENOMEM;
	bool put_ok;

	if (a.data.m != NULL && dst.m != NULL && expect != NULL) {
		for (i = 0; i < len; i++)
			expect[i] = (uint8_t)(i * 13 + key);
		rpcr_bulk_write(&a.data, 0, expect,
				len); /* (or produced in place, piece by piece) */
		memset(&call, 0, sizeof(call));
		call.proc = PUT;
		call.args = &a;
		call.res = &status;
		rc = rpcr_clnt_call_sync(c, &call);
	}
	/* Once PUT has returned, the client's buffer is its own again: the server kept its copy
	 * of the bytes in its own receive buffers, made by the RDMA Read. */
	rte_pktmbuf_free(a.data.m);
	put_ok = rc == 0 && status == 0;
	if (put_ok) {
		memset(&call, 0, sizeof(call));
		call.proc = GET;
		call.args = &key;
		call.res = &res;
		call.res_bulk = &dst; /* where a large result is written (write chunk) */
		call.nres_bulk = 1;
		rc = rpcr_clnt_call_sync(c, &call);
	}
	printf("bulk_store: object %u, %u bytes: PUT %s, GET %s\n", key, len,
	       put_ok ? "ok" : "FAILED",
	       put_ok && rc == 0 && res.same ? "the same bytes" : "FAILED");
	rte_pktmbuf_free(dst.m);
	free(expect);
	return put_ok && rc == 0 && res.same ? 0 : 1;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = {100, 64 << 10, 4 << 20};
	struct rpcr_xprt_poller *p = NULL;
	struct rpcr_rdev *dev = NULL;
	struct rpcr_svc *s = NULL;
	struct rpcr_clnt *c = NULL;
	struct rpcr_xprt_stats st;
	int fails = 0;
	uint32_t i;

	if (rte_eal_init(argc, argv) < 0)
		rte_exit(EXIT_FAILURE, "bulk_store: EAL: %s\n", rte_strerror(rte_errno));
	dev = rpcr_rdev_open("shm");
	if (dev != NULL)
		p = rpcr_xprt_poller_create(&(struct rpcr_xprt_poller_conf){.dev = dev});
	if (p != NULL)
		s = rpcr_svc_create(
			p, &(struct rpcr_svc_conf){.addr = "bulk_store", .program = &store_prog});
	if (s != NULL)
		c = rpcr_clnt_create(
			p, &(struct rpcr_clnt_conf){.addr = "bulk_store", .program = &store_prog});
	if (c == NULL)
		rte_exit(EXIT_FAILURE, "bulk_store: %s\n", rte_strerror(rte_errno));
	for (i = 0; i < RTE_DIM(sizes); i++)
		fails += put_get(p, c, i, sizes[i]);
	rpcr_xprt_stats_get(p, &st);
	printf("bulk_store: %" PRIu64 " calls, %" PRIu64
	       " bytes sent (messages and chunks, both sides)\n",
	       st.calls_recv, st.bytes_sent);
	/* Teardown: the client, the server, then the objects the store holds (buffers of the
	 * poller's pools: it cannot go while they are out), then the poller. */
	rpcr_clnt_destroy(c);
	if (rpcr_svc_destroy(s) != 0)
		fails++;
	for (i = 0; i < NOBJ; i++)
		rte_pktmbuf_free(store[i].m);
	if (rpcr_xprt_poller_destroy(p) != 0)
		fails++;
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return fails == 0 ? 0 : 1;
}
