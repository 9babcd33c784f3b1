/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Engine microbenchmark: NULL calls of the test program, in both directions.
 *
 *   two processes (default): an rpcr server and an rpcr client pinned to two cores over a
 *   device (shm by default):
 *     round trip   one call at a time: min / p50 / p99 / max in microseconds
 *     rate         1, 2, 4, ... 64 calls kept outstanding: calls per second
 *     reverse      the same, of NULL calls the server makes to its client over the client's
 *                  connection (RFC 8167): the client serves program 0x2f5a0003 and asks the
 *                  bench's HOLD procedure, whose handler keeps the connection's
 *                  reverse-direction client; 1 to 16 outstanding (its calls at most)
 *
 *   --loopback N: client and server pollers in one thread, polled in turn, N calls one at a
 *   time: a deterministic sequence, for instruction counts under callgrind. With --side client
 *   or --side server, callgrind collects only inside that side's polls (run with
 *   valgrind --tool=callgrind --collect-atstart=no); test/perf/xprt-bench.sh does this and
 *   splits the count by library. --depth D keeps D calls outstanding; --read L makes them
 *   READ calls of L bytes (a 4-byte argument encoded, L bytes of results) instead of NULL:
 *   inline below 1 KiB, else written by the server into a write chunk the client offers over a
 *   chain of its bulk pool (a memory window bound for each call where the device has them;
 *   --reg-per-call: a registration per call instead). --reverse: the calls are the server's reverse-direction NULL calls; --side client then
 *   counts the requester (the server's poller) and --side server the responder (the client's).
 *
 * --rpcrdma-version 2: servers and clients of versions 1 and 2 (the calls in version 2).
 *
 * usage: bench_xprt [--dev DEVARGS] [--quick] [--seconds S] [--rpcrdma-version 1|2]
 *                   [--loopback N [--side S] [--depth D] [--read L] [--reg-per-call]]
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <valgrind/callgrind.h>

#include <rpcr_xprt.h>

#include "rdev_harness.h"

static struct player P;

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t lb_read_len;   /* loopback: READ calls of this many bytes; 0: NULL calls */
static bool lb_reg_per_call;   /* pollers register per call even with memory windows */
static uint32_t rdma_versions; /* --rpcrdma-version 2: servers and clients of versions 1 and 2 */
#define LB_DDP 1024u

static struct rpcr_xprt_poller *
poller_new(const char *name, const char *devargs, struct rpcr_mem_arena *a)
{
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_rdev *dev = rpcr_rdev_open(devargs);

	if (dev == NULL)
		return NULL;
	memset(&pc, 0, sizeof(pc));
	pc.name = name;
	pc.dev = dev;
	pc.arena = a;
	pc.bufs = 1024;
	pc.bulk_bufs = lb_read_len >= LB_DDP ? 256 : 16;
	pc.reg_per_call = lb_reg_per_call;
	return rpcr_xprt_poller_create(&pc);
}

static void
lat_done_any(struct rpcr_call *call)
{
	call->user = NULL;
}

/* The bench program: HOLD keeps the reverse-direction client of its connection. */
#define BENCH_PROG 0x2f5a00b0u
static struct rpcr_clnt *hold_bc;

static enum rpcr_svc_verdict
bench_hold(struct rpcr_svc_req *r)
{
	if (hold_bc == NULL)
		hold_bc = rpcr_svc_req_bclnt(r, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS);
	return hold_bc != NULL ? RPCR_SVC_REPLY : RPCR_SVC_ERROR;
}

static const struct rpcr_svc_proc bench_procs[] = {{.proc = 0, .handler = bench_hold}};

static struct rpcr_svc *
svc_new(struct rpcr_xprt_poller *p, const char *addr)
{
	const struct rpcr_svc_prog bp = {
		.prog = BENCH_PROG, .vers = 1, .procs = bench_procs, .nprocs = 1};
	struct rpcr_svc_conf sc;
	struct rpcr_svc *s;

	memset(&sc, 0, sizeof(sc));
	sc.addr = addr;
	sc.credits = 128;
	sc.versions = rdma_versions;
	s = rpcr_svc_create(p, &sc);
	if (s != NULL && (rpcr_testprog_register(s, 0) != 0 || rpcr_svc_register(s, &bp) != 0))
		return NULL;
	return s;
}

/* A client that serves the callback program, HOLD called on it (the server's hold_bc, in the
 * server's process, is then its connection's reverse-direction client). */
static struct rpcr_clnt *
rclnt_new(struct rpcr_xprt_poller *p, const char *addr, struct rpcr_xprt_poller *also)
{
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt *cl;
	struct rpcr_call call;
	uint64_t deadline = now_ns() + 5000000000ull;

	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = BENCH_PROG;
	cc.vers = 1;
	cc.credits = 4;
	cc.bc_credits = 64;
	cl = rpcr_clnt_create(p, &cc);
	if (cl == NULL || rpcr_testprog_cb_register(cl) != 0)
		return NULL;
	while (!rpcr_clnt_connected(cl) && now_ns() < deadline) {
		rpcr_xprt_poll(p);
		if (also != NULL)
			rpcr_xprt_poll(also);
	}
	memset(&call, 0, sizeof(call));
	call.proc = 0;
	if (also == NULL)
		return rpcr_clnt_call_sync(cl, &call) == 0 ? cl : NULL;
	call.done = lat_done_any;
	call.user = &call;
	rpcr_clnt_call(cl, &call);
	while (call.user != NULL && now_ns() < deadline) {
		rpcr_xprt_poll(p);
		rpcr_xprt_poll(also);
	}
	return call.user == NULL && call.status == 0 ? cl : NULL;
}

static struct rpcr_clnt *
clnt_new(struct rpcr_xprt_poller *p, const char *addr, struct rpcr_xprt_poller *also)
{
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt *cl;
	uint64_t deadline = now_ns() + 5000000000ull;

	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = 64;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	cc.versions = rdma_versions;
	cl = rpcr_clnt_create(p, &cc);
	if (cl == NULL)
		return NULL;
	while (!rpcr_clnt_connected(cl) && now_ns() < deadline) {
		rpcr_xprt_poll(p);
		if (also != NULL)
			rpcr_xprt_poll(also);
	}
	return rpcr_clnt_connected(cl) ? cl : NULL;
}

/* ---- one call at a time ---- */

struct lat {
	struct rpcr_call call;
	volatile int done;
};

static void
lat_done(struct rpcr_call *call)
{
	((struct lat *)call->user)->done = 1;
}

static void
round_trip(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl, uint32_t iters, const char *what)
{
	uint64_t *t = malloc(sizeof(*t) * iters), hz = rte_get_tsc_hz();
	struct lat l;
	uint32_t i;

	memset(&l, 0, sizeof(l));
	l.call.proc = RPCR_TESTPROG_NULL;
	l.call.done = lat_done;
	l.call.user = &l;
	for (i = 0; i < iters + iters / 10; i++) {
		uint64_t t0 = rte_rdtsc();

		l.done = 0;
		rpcr_clnt_call(cl, &l.call);
		while (!l.done)
			rpcr_xprt_poll(p);
		if (i >= iters / 10)
			t[i - iters / 10] = rte_rdtsc() - t0;
		if (l.call.status != 0) {
			printf("call failed: %d\n", l.call.status);
			exit(1);
		}
	}
	qsort(t, iters, sizeof(*t), cmp_u64);
#define US(x) ((double)(x)*1e6 / (double)hz)
	printf("%s round trip, %u calls one at a time (us): min %.3f  p50 %.3f  p99 %.3f  "
	       "max %.3f\n",
	       what, iters, US(t[0]), US(t[iters / 2]), US(t[iters * 99 / 100]), US(t[iters - 1]));
	fflush(stdout);
	free(t);
}

/* ---- rate ---- */

struct rate {
	struct rpcr_clnt *cl;
	uint64_t done;
	bool stop;
	int failed;
};

static void
rate_done(struct rpcr_call *call)
{
	struct rate *r = call->user;

	r->done++;
	if (call->status != 0)
		r->failed++;
	if (!r->stop)
		rpcr_clnt_call(r->cl, call);
}

static void
rate_run(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl, uint32_t depth, double seconds)
{
	struct rpcr_call *calls = calloc(depth, sizeof(*calls));
	uint64_t hz = rte_get_tsc_hz(), t0, t1, n0, n1;
	struct rate r = {.cl = cl};
	uint32_t i;

	for (i = 0; i < depth; i++) {
		calls[i].proc = RPCR_TESTPROG_NULL;
		calls[i].done = rate_done;
		calls[i].user = &r;
		rpcr_clnt_call(cl, &calls[i]);
	}
	/* Warm up, then count. */
	t0 = rte_rdtsc();
	while (rte_rdtsc() - t0 < hz / 10)
		rpcr_xprt_poll(p);
	n0 = r.done;
	t0 = rte_rdtsc();
	do {
		rpcr_xprt_poll(p);
		t1 = rte_rdtsc();
	} while (t1 - t0 < (uint64_t)(seconds * (double)hz));
	printf("  %3u outstanding: %8.3f M calls/s\n", depth,
	       (double)(r.done - n0) * (double)hz / (double)(t1 - t0) / 1e6);
	fflush(stdout);
	/* Drain: every call is outstanding now (a completion resubmits it at once); each
	 * completes once more. The array is freed only when none is left in the engine. */
	r.stop = true;
	n1 = r.done;
	for (i = 0; r.done < n1 + depth && i < 100000000u; i++)
		rpcr_xprt_poll(p);
	if (r.done < n1 + depth) {
		fprintf(stderr, "  %" PRIu64 " calls still out: not freed\n", n1 + depth - r.done);
		return;
	}
	if (r.failed != 0)
		printf("  %d calls failed\n", r.failed);
	free(calls);
}

/* ---- loopback: deterministic, for callgrind ---- */

/* READ results from this size on come in a write chunk (the test program's threshold). */
static int
lb_dec_read(struct rpcr_msg *m, void *res)
{
	struct rpcr_bulk b;

	RTE_SET_USED(res);
	return rpcr_msg_get_bulk(m, UINT32_MAX, &b) == 0 && b.len == lb_read_len ? 0 : -EBADMSG;
}

/* A call of the loopback: NULL, or READ of lb_read_len bytes, into a write chunk over a chain
 * of the client's bulk pool (@rb) from LB_DDP bytes on. */
static void
lb_call_init(struct rpcr_call *call, struct rpcr_xprt_poller *cp, struct rpcr_bulk *rb)
{
	if (lb_read_len == 0) {
		call->proc = RPCR_TESTPROG_NULL;
		return;
	}
	call->proc = RPCR_TESTPROG_READ;
	call->encode = rpcr_testprog_enc_len;
	call->args = &lb_read_len;
	if (lb_read_len >= LB_DDP) {
		rb->m = rpcr_chunk_alloc_chain(rpcr_xprt_poller_bulk_pool(cp), lb_read_len);
		rb->off = 0;
		rb->len = lb_read_len;
		if (rb->m == NULL) {
			fprintf(stderr, "no bulk buffer for READ results\n");
			exit(1);
		}
		call->res_bulk = rb;
		call->nres_bulk = 1;
		call->decode = lb_dec_read;
	}
}

struct lb_rate {
	struct rpcr_clnt *cl;
	uint64_t done;
	uint64_t limit; /* calls to start in all */
	uint64_t started;
};

static void
lb_done(struct rpcr_call *call)
{
	struct lb_rate *r = call->user;

	r->done++;
	if (call->status != 0) {
		fprintf(stderr, "call failed: %d\n", call->status);
		exit(1);
	}
	if (r->started < r->limit) {
		r->started++;
		rpcr_clnt_call(r->cl, call);
	}
}

static bool lb_reverse; /* the server's reverse-direction NULL calls */

static int
loopback(const char *devargs, uint32_t n, const char *side, uint32_t depth)
{
	static char a0[] = "bench", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l", a4[] = "0",
		    a5[] = "--no-shconf", a6[] = "--no-telemetry", a7[] = "--iova-mode=va",
		    a8[] = "--log-level=error";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
	bool cs = side != NULL && strcmp(side, "client") == 0;
	bool ss = side != NULL && strcmp(side, "server") == 0;
	struct rpcr_xprt_poller *sp, *cp;
	struct rpcr_mem_arena *a;
	struct rpcr_clnt *cl;
	struct rpcr_bulk lrb = {0};
	char addr[64];
	struct lat l;
	uint64_t t0 = 0, t1;
	uint32_t i;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0)
		return 1;
	a = rpcr_mem_arena_create("bench", 64u << 20, 0);
	snprintf(addr, sizeof(addr), "bench-xprt-%d", (int)getpid());
	sp = a != NULL ? poller_new("server", devargs, a) : NULL;
	cp = sp != NULL ? poller_new("client", devargs, a) : NULL;
	if (cp == NULL || svc_new(sp, addr) == NULL) {
		fprintf(stderr, "set-up failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	cl = clnt_new(cp, addr, sp);
	if (cl == NULL) {
		fprintf(stderr, "not connected\n");
		return 1;
	}
	if (lb_reverse) {
		/* The requester is the server's poller, the responder the client's. */
		struct rpcr_xprt_poller *t = cp;

		if (rclnt_new(cp, addr, sp) == NULL || hold_bc == NULL) {
			fprintf(stderr, "no reverse-direction client\n");
			return 1;
		}
		cl = hold_bc;
		cp = sp;
		sp = t;
	}
	if (depth > 1) {
		/* @depth calls outstanding: warm up with n/10 calls, then measure n. */
		struct rpcr_call *calls = calloc(depth, sizeof(*calls));
		struct rpcr_bulk *rbs = calloc(depth, sizeof(*rbs));
		struct lb_rate r = {.cl = cl};
		uint64_t warm = n / 10 + depth;
		bool on = false;

		r.limit = warm + n;
		for (i = 0; i < depth; i++) {
			lb_call_init(&calls[i], cp, &rbs[i]);
			calls[i].done = lb_done;
			calls[i].user = &r;
			r.started++;
			rpcr_clnt_call(cl, &calls[i]);
		}
		while (r.done < r.limit) {
			if (!on && r.done >= warm) {
				on = true;
				t0 = rte_rdtsc();
				n = (uint32_t)(r.limit - r.done);
				if (cs || ss)
					CALLGRIND_TOGGLE_COLLECT;
			}
			if (on && ss)
				CALLGRIND_TOGGLE_COLLECT;
			rpcr_xprt_poll(cp);
			if (on && ss)
				CALLGRIND_TOGGLE_COLLECT;
			if (on && cs)
				CALLGRIND_TOGGLE_COLLECT;
			rpcr_xprt_poll(sp);
			if (on && cs)
				CALLGRIND_TOGGLE_COLLECT;
		}
		if (on && (cs || ss))
			CALLGRIND_TOGGLE_COLLECT;
		t1 = rte_rdtsc();
		printf("loopback: %u %s%s calls, %u outstanding, client and server on one core: "
		       "%.3f us per call\n",
		       n, lb_reverse ? "reverse " : "", lb_read_len != 0 ? "READ" : "NULL", depth,
		       (double)(t1 - t0) * 1e6 / (double)rte_get_tsc_hz() / n);
		{
			struct rpcr_xprt_stats sa, sb;

			rpcr_xprt_stats_get(cp, &sa);
			rpcr_xprt_stats_get(sp, &sb);
			if (sa.mw_binds + sb.mw_binds + sa.reg_mrs + sb.reg_mrs != 0)
				printf("loopback: windows bound %" PRIu64 ", invalidated %" PRIu64
				       ", registrations for one call %" PRIu64 "\n",
				       sa.mw_binds + sb.mw_binds,
				       sa.local_invalidations + sb.local_invalidations,
				       sa.reg_mrs + sb.reg_mrs);
		}
		for (i = 0; i < depth; i++)
			rte_pktmbuf_free(rbs[i].m);
		free(rbs);
		free(calls);
		return 0;
	}
	memset(&l, 0, sizeof(l));
	lb_call_init(&l.call, cp, &lrb);
	l.call.done = lat_done;
	l.call.user = &l;
	for (i = 0; i < n + 1000; i++) {
		bool measure = i >= 1000;

		if (i == 1000)
			t0 = rte_rdtsc();
		l.done = 0;
		if (measure && cs)
			CALLGRIND_TOGGLE_COLLECT;
		rpcr_clnt_call(cl, &l.call);
		if (measure && cs)
			CALLGRIND_TOGGLE_COLLECT;
		while (!l.done) {
			if (measure && cs)
				CALLGRIND_TOGGLE_COLLECT;
			rpcr_xprt_poll(cp);
			if (measure && cs)
				CALLGRIND_TOGGLE_COLLECT;
			if (l.done)
				break;
			if (measure && ss)
				CALLGRIND_TOGGLE_COLLECT;
			rpcr_xprt_poll(sp);
			if (measure && ss)
				CALLGRIND_TOGGLE_COLLECT;
		}
		if (l.call.status != 0) {
			fprintf(stderr, "call failed: %d\n", l.call.status);
			return 1;
		}
	}
	t1 = rte_rdtsc();
	printf("loopback: %u %s%s calls, client and server on one core: %.3f us per call\n", n,
	       lb_reverse ? "reverse " : "", lb_read_len != 0 ? "READ" : "NULL",
	       (double)(t1 - t0) * 1e6 / (double)rte_get_tsc_hz() / n);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"quick", no_argument, NULL, 'q'},
					     {"seconds", required_argument, NULL, 's'},
					     {"loopback", required_argument, NULL, 'l'},
					     {"side", required_argument, NULL, 'S'},
					     {"depth", required_argument, NULL, 'D'},
					     {"read", required_argument, NULL, 'R'},
					     {"reverse", no_argument, NULL, 'r'},
					     {"reg-per-call", no_argument, NULL, 'm'},
					     {"rpcrdma-version", required_argument, NULL, 'V'},
					     {NULL, 0, NULL, 0}};
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 64u << 20,
		.cq_depth = 64,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
	};
	static const uint32_t depths[] = {1, 2, 4, 8, 16, 32, 64};
	static const uint32_t rdepths[] = {1, 2, 4, 8, 16};
	uint32_t iters = 200000, nloop = 0, depth = 1;
	const char *side = NULL;
	double seconds = 1.0;
	char addr[128];
	int c;
	size_t i;

	while ((c = getopt_long(argc, argv, "d:qs:l:S:D:R:rmV:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			hc.devargs = optarg;
			break;
		case 'q':
			iters = 20000;
			seconds = 0.2;
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'l':
			nloop = (uint32_t)atoi(optarg);
			break;
		case 'S':
			side = optarg;
			break;
		case 'D':
			depth = (uint32_t)atoi(optarg);
			break;
		case 'R':
			lb_read_len = (uint32_t)atoi(optarg);
			break;
		case 'r':
			lb_reverse = true;
			break;
		case 'm':
			lb_reg_per_call = true;
			break;
		case 'V':
			/* (Version 2's reverse direction is not built: --reverse stays version 1.) */
			rdma_versions = atoi(optarg) == 2 ? RPCR_XPRT_V1 | RPCR_XPRT_V2 : 0;
			break;
		default:
			return 2;
		}
	}
	if (nloop != 0)
		return loopback(hc.devargs, nloop, side, depth);

	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;
	snprintf(addr, sizeof(addr), "%s-x", P.addr);
	if (P.server) {
		struct rpcr_xprt_poller *p = poller_new("server", hc.devargs, P.arena);
		struct rpcr_svc *s = p != NULL ? svc_new(p, addr) : NULL;
		struct ctl_msg m;
		uint64_t k = 0;

		if (s == NULL)
			return 1;
		ctl_send(&P, 1, 0, NULL);
		for (;;) {
			rpcr_xprt_poll(p);
			if ((++k & 4095) != 0 ||
			    recv(P.ctl, &m, sizeof(m), MSG_DONTWAIT) != (ssize_t)sizeof(m))
				continue;
			if (m.tag != 3)
				break;
			/* The reverse direction, measured here, where its requester is. */
			if (hold_bc == NULL) {
				printf("reverse direction: no client (HOLD not seen)\n");
			} else {
				round_trip(p, hold_bc, iters, "reverse NULL");
				printf("reverse NULL call rate (%.1f s each):\n", seconds);
				for (i = 0; i < RTE_DIM(rdepths); i++)
					rate_run(p, hold_bc, rdepths[i], seconds);
			}
			ctl_send(&P, 4, 0, NULL);
		}
		_exit(0);
	} else {
		struct rpcr_xprt_poller *p = poller_new("client", hc.devargs, P.arena);
		struct rpcr_clnt *cl;
		struct ctl_msg m;
		int status;

		ctl_recv(&P, 1, &m);
		cl = p != NULL ? clnt_new(p, addr, NULL) : NULL;
		if (cl == NULL) {
			fprintf(stderr, "client: not connected\n");
			return 1;
		}
		printf("rpcr engine benchmark: %s, server on lcore %d, client on lcore %d\n",
		       hc.devargs, hc.server_lcore, hc.client_lcore);
		round_trip(p, cl, iters, "NULL");
		printf("NULL call rate (%.1f s each):\n", seconds);
		for (i = 0; i < RTE_DIM(depths); i++)
			rate_run(p, cl, depths[i], seconds);
		/* The reverse direction: the server measures, this side serves. */
		if (rclnt_new(p, addr, NULL) == NULL) {
			fprintf(stderr, "client: no reverse-direction connection\n");
		} else {
			uint64_t k = 0;

			ctl_send(&P, 3, 0, NULL);
			for (;;) {
				rpcr_xprt_poll(p);
				if ((++k & 4095) == 0 &&
				    recv(P.ctl, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m))
					break;
			}
		}
		ctl_send(&P, 2, 0, NULL);
		waitpid(P.peer_pid, &status, 0);
	}
	return 0;
}
