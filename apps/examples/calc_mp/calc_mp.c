/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * calc_mp: the calc program (ADD and PUTDATA, see ../calc) between two processes.
 *
 *   ./calc_mp --no-huge -l 0 -- server [ADDR]       serves until SIGINT or SIGTERM
 *   ./calc_mp --no-huge -l 0-1 -- client [ADDR]     calls it, then exits (0: every answer right)
 *
 * ADDR is where the server listens: over shm, a name on this host (default "calc_mp"); over
 * an RDMA device, an address and port (CALC_MP_DEV=ibverbs:dev=rxe0, ADDR 192.168.1.1:20049;
 * doc/rdev.md). The server polls on its main lcore (rpcr_xprt_poller_run() and a stop flag its
 * signal handler sets). The client shows the other shape: its poller runs on a worker lcore
 * (rpcr_xprt_poller_launch()) while the main lcore makes calls through the poller's ring, as an
 * application's own threads do.
 * Both build the program from the one table below.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <rpcr_xprt.h>

enum { CALC_PROG = 0x20000c01, CALC_VERS = 1, ADD = 1, PUTDATA = 2, MAX = 1 << 20 };

/* Byte i of what PUTDATA sends and expects. */
static inline uint8_t
pattern(uint32_t i)
{
	return (uint8_t)(i * 7);
}

static int
pair_enc(struct rpcr_msg *m, const void *v)
{
	const uint32_t *ab = v;

	return rpcr_msg_enc_u32(m, &ab[0]) | rpcr_msg_enc_u32(m, &ab[1]);
}

static int
pair_dec(struct rpcr_msg *m, void *v)
{
	uint32_t *ab = v;

	return rpcr_msg_dec_u32(m, &ab[0]) | rpcr_msg_dec_u32(m, &ab[1]);
}

static enum rpcr_svc_verdict
add(struct rpcr_svc_req *r)
{
	uint32_t ab[2], sum;

	if (rpcr_svc_req_get_args(r, ab) != 0)
		return RPCR_SVC_ERROR; /* GARBAGE_ARGS */
	sum = ab[0] + ab[1];
	return rpcr_svc_req_put_res(r, &sum) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

/* PUTDATA: walk the data where it landed, piece by piece (no copy). */
static enum rpcr_svc_verdict
putdata(struct rpcr_svc_req *r)
{
	struct rpcr_bulk_iter it;
	struct rpcr_bulk data;
	const uint8_t *piece;
	uint32_t n, i, pos = 0, good;

	if (rpcr_svc_req_get_args(r, &data) != 0)
		return RPCR_SVC_ERROR;
	good = data.len;
	rpcr_bulk_iter_init(&it, &data);
	while (rpcr_bulk_iter_next(&it, &piece, &n))
		for (i = 0; i < n; i++, pos++)
			if (piece[i] != pattern(pos))
				good = 0;
	return rpcr_svc_req_put_res(r, &good) == 0 ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static const struct rpcr_svc_proc calc_procs[] = {
	{.proc = ADD,
	 .handler = add,
	 .encode_args = pair_enc,
	 .decode_args = pair_dec,
	 .encode_res = rpcr_msg_enc_u32,
	 .decode_res = rpcr_msg_dec_u32},
	{.proc = PUTDATA,
	 .handler = putdata,
	 .ulb = {.args_bulk = 1}, /* its data: in a chunk from 1024 bytes */
	 .encode_args = rpcr_msg_enc_bulk,
	 .decode_args = rpcr_msg_dec_bulk,
	 .encode_res = rpcr_msg_enc_u32,
	 .decode_res = rpcr_msg_dec_u32},
};

static const struct rpcr_svc_prog calc = {
	.prog = CALC_PROG, .vers = CALC_VERS, .procs = calc_procs, .nprocs = RTE_DIM(calc_procs)};

static volatile bool stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static int
serve(struct rpcr_xprt_poller *p, const char *addr)
{
	struct rpcr_svc *s =
		rpcr_svc_create(p, &(struct rpcr_svc_conf){.addr = addr, .program = &calc});
	struct rpcr_xprt_stats st;

	if (s == NULL) {
		fprintf(stderr, "calc_mp: server on %s: %s\n", addr, rte_strerror(rte_errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("calc_mp: serving on %s\n", addr);
	fflush(stdout);
	rpcr_xprt_poller_run(p, &stop); /* this thread polls until a signal */
	rpcr_xprt_stats_get(p, &st);
	printf("calc_mp: served %" PRIu64 " calls\n", st.calls_recv);
	return rpcr_svc_destroy(s) == 0 ? 0 : 1;
}

static int
call(struct rpcr_xprt_poller *p, const char *addr)
{
	struct rpcr_clnt *c =
		rpcr_clnt_create(p, &(struct rpcr_clnt_conf){.addr = addr, .program = &calc});
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	uint32_t ab[2], res, i, fails = 0;
	int rc;
	uint8_t block[256]; /* the pattern's period */
	struct rpcr_bulk data = {NULL, 0, MAX};
	struct rpcr_call call;

	if (c == NULL || worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "calc_mp: client of %s: %s\n", addr,
			c == NULL ? rte_strerror(rte_errno) : "needs a second lcore (-l 0-1)");
		if (c != NULL)
			rpcr_clnt_destroy(c);
		return 1;
	}
	/* Registered memory for PUTDATA's data, filled before the poller runs. */
	data.m = rpcr_bulk_alloc(p, MAX);
	for (i = 0; i < sizeof(block); i++)
		block[i] = pattern(i);
	for (i = 0; data.m != NULL && i < MAX; i += sizeof(block))
		rpcr_bulk_write(&data, i, block, sizeof(block));
	/* From here the poller belongs to the worker lcore; this thread calls through its ring. */
	rc = data.m == NULL ? -rte_errno : rpcr_xprt_poller_launch(p, worker);
	if (rc != 0) {
		fprintf(stderr, "calc_mp: %s: %s\n", data.m == NULL ? "bulk" : "launch",
			strerror(-rc));
		rte_pktmbuf_free(data.m);
		rpcr_clnt_destroy(c);
		return 1;
	}
	for (i = 0; i < 1000; i++) {
		ab[0] = i;
		ab[1] = 3 * i;
		memset(&call, 0, sizeof(call));
		call.proc = ADD;
		call.args = ab;
		call.res = &res;
		if (rpcr_clnt_call_sync(c, &call) != 0 || res != 4 * i) {
			fprintf(stderr, "calc_mp: ADD(%u, %u): %s, %u\n", ab[0], ab[1],
				strerror(-call.status), res);
			fails++;
		}
	}
	printf("calc_mp: 1000 ADDs, %u wrong\n", fails);
	memset(&call, 0, sizeof(call));
	call.proc = PUTDATA;
	call.args = &data;
	call.res = &res;
	if (rpcr_clnt_call_sync(c, &call) != 0 || res != MAX)
		fails++;
	printf("calc_mp: PUTDATA(%u bytes): %u arrived as sent\n", MAX, res);
	/* Teardown: stop the poller, then destroy what it owned, from here. */
	rpcr_xprt_poller_stop(p);
	rte_eal_wait_lcore(worker);
	rpcr_clnt_destroy(c);
	rte_pktmbuf_free(data.m);
	return fails == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv), rc;
	struct rpcr_xprt_poller *p = NULL;
	struct rpcr_rdev *dev = NULL;
	const char *role, *addr;

	if (n < 0)
		rte_exit(EXIT_FAILURE, "calc_mp: EAL: %s\n", rte_strerror(rte_errno));
	argc -= n;
	argv += n;
	role = argc > 1 ? argv[1] : "";
	addr = argc > 2 ? argv[2] : "calc_mp";
	if (strcmp(role, "server") != 0 && strcmp(role, "client") != 0)
		rte_exit(EXIT_FAILURE, "usage: calc_mp [EAL args] -- server|client [ADDR]\n");
	dev = rpcr_rdev_open(getenv("CALC_MP_DEV") != NULL ? getenv("CALC_MP_DEV") : "shm");
	if (dev != NULL)
		p = rpcr_xprt_poller_create(
			&(struct rpcr_xprt_poller_conf){.name = role, .dev = dev});
	if (p == NULL)
		rte_exit(EXIT_FAILURE, "calc_mp: device and poller: %s\n", rte_strerror(rte_errno));
	rc = role[0] == 's' ? serve(p, addr) : call(p, addr);
	if (rpcr_xprt_poller_destroy(p) != 0) /* (-EBUSY: something of it was left behind) */
		rc = 1;
	rpcr_rdev_close(dev);
	rte_eal_cleanup();
	return rc;
}
