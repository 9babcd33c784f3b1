/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 *
 * calc: ADD(a, b) -> a + b and PUTDATA(opaque data<>, DDP-eligible) -> its length if it arrived
 * as sent, served and called in one process on one poller (doc/xprt.md "Serving your own program")
 */

#include <stdio.h>
#include <stdlib.h>
#include <rte_eal.h>
#include <rpcr_xprt.h>

enum { CALC_PROG = 0x20000c01, CALC_VERS = 1, ADD = 1, PUTDATA = 2, MAX = 1 << 20 };
static uint8_t pattern[MAX]; /* what PUTDATA sends and expects */

static int
pair_enc(struct rpcr_msg *m, const void *v) /* ADD's arguments: uint32_t[2] */
{
	return rpcr_msg_enc_u32(m, v) | rpcr_msg_enc_u32(m, (const uint32_t *)v + 1);
}

static int
pair_dec(struct rpcr_msg *m, void *v)
{
	return rpcr_msg_dec_u32(m, v) | rpcr_msg_dec_u32(m, (uint32_t *)v + 1);
}

static enum rpcr_svc_verdict
add(struct rpcr_svc_req *r)
{
	uint32_t ab[2];

	if (rpcr_svc_req_get_args(r, ab) != 0)
		return RPCR_SVC_ERROR; /* GARBAGE_ARGS */
	ab[0] += ab[1];
	return rpcr_svc_req_put_res(r, &ab[0]) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static enum rpcr_svc_verdict
putdata(struct rpcr_svc_req *r)
{
	struct rpcr_bulk data; /* a view of the data where it landed: no copy */

	if (rpcr_svc_req_get_args(r, &data) != 0)
		return RPCR_SVC_ERROR;
	data.len = data.len <= MAX && rpcr_bulk_cmp(&data, pattern, data.len) == 0 ? data.len : 0;
	return rpcr_svc_req_put_res(r, &data.len) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

/* clang-format off */
static const struct rpcr_svc_proc calc_procs[] = { /* number, handler, binding, codecs */
	{ADD, add, {0}, pair_enc, pair_dec, rpcr_msg_enc_u32, rpcr_msg_dec_u32},
	{PUTDATA, putdata, {.args_bulk = 1}, rpcr_msg_enc_bulk, rpcr_msg_dec_bulk,
	 rpcr_msg_enc_u32, rpcr_msg_dec_u32},
};
/* clang-format on */
static const struct rpcr_svc_prog calc = {CALC_PROG, CALC_VERS, calc_procs, 2, NULL};

static void *
must(void *obj, const char *what)
{
	if (obj == NULL)
		rte_exit(EXIT_FAILURE, "calc: %s: %s\n", what, rte_strerror(rte_errno));
	return obj;
}

int
main(int argc, char **argv)
{
	uint32_t two[2] = {40, 2}, sizes[] = {100, MAX}, res = 0, i, fails = 0;
	struct rpcr_svc_conf sc = {.addr = "calc", .program = &calc}; /* shm: a name on this host */
	struct rpcr_clnt_conf cc = {.addr = "calc", .program = &calc}; /* one table, both sides */

	must(rte_eal_init(argc, argv) >= 0 ? argv : NULL, "EAL"); /* ./calc --no-huge -l 0 */
	for (i = 0; i < MAX; i++)
		pattern[i] = (uint8_t)(i * 7);
	struct rpcr_rdev *dev = must(rpcr_rdev_open("shm"), "shm device");
	struct rpcr_xprt_poller_conf pc = {.dev = dev}; /* (its own arena: hugepages first) */
	struct rpcr_xprt_poller *p = must(rpcr_xprt_poller_create(&pc), "poller");
	struct rpcr_svc *s = must(rpcr_svc_create(p, &sc), "svc");
	struct rpcr_clnt *c = must(rpcr_clnt_create(p, &cc), "clnt");
	struct rpcr_call add_call = {.proc = ADD, .args = two, .res = &res};
	fails += rpcr_clnt_call_sync(c, &add_call) != 0 || res != 42; /* polls p till done */
	printf("ADD(40, 2) = %u\n", res);
	for (i = 0; i < 2; i++) {
		struct rpcr_bulk data = {must(rpcr_bulk_alloc(p, sizes[i]), "bulk"), 0, sizes[i]};
		struct rpcr_call put = {.proc = PUTDATA, .args = &data, .res = &res};

		rpcr_bulk_write(&data, 0, pattern, sizes[i]); /* registered: sent from there */
		fails += rpcr_clnt_call_sync(c, &put) != 0 || res != sizes[i];
		printf("PUTDATA(%u bytes): %u arrived as sent\n", sizes[i], res);
		rte_pktmbuf_free(data.m);
	}
	rpcr_clnt_destroy(c); /* teardown: clients, servers, the poller, the device */
	fails += rpcr_svc_destroy(s) != 0;
	fails += rpcr_xprt_poller_destroy(p) != 0; /* (-EBUSY: something of it was left behind) */
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return fails == 0 ? 0 : 1;
}
