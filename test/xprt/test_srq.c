/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A server poller's shared receive queue (rpcr_xprt_poller_conf::srq_recvs, lib/xprt/srq.c),
 * black box, over shm (or the devices given): a server and a client poller polled in turn by
 * this thread.
 *
 *   - many connections ask more credits than the queue holds (NCONNS clients of 16 credits,
 *     8 calls each kept outstanding, against 64 receives): every call is answered, none dropped
 *     as an overrun, no connection fails (a receive short would be an RNR, fatal on shm), the
 *     credits granted at any moment add up to the queue's budget at most, and some client was
 *     granted less than it asked;
 *   - the server's message buffers in use stay near the queue's size, far below what the same
 *     connections take with receives of their own (the same run without the queue, beside);
 *   - half the clients go away with calls outstanding, the rest go on, then all go: the server
 *     poller is destroyed with every buffer back in its pool (receives its connections' peers
 *     had taken when they went come back with no QP);
 *   - no more connections than the budget: the next is refused (conns_refused);
 *   - a few connections asking more than their share of a tight budget are served alike;
 *   - short replies, sent inline, hold no server buffer once posted;
 *   - clients whose connections take their receives from their own poller's queue
 *     (rpcr_clnt_conf::srq): each reserves a receive for each of its call slots, so as many
 *     connect as the client queue's budget holds and the next waits; every call of those
 *     connected is answered, and the one waiting connects once another client goes; a call
 *     that times out while its server holds it keeps its slot (and the receive reserved for
 *     it) until its late reply, with no new connection, and calls go on.
 *
 * usage: test_srq [--dev DEVARGS] [--cdev DEVARGS] [--addr IP:PORT] [--calls N]
 *   the server's device (default shm), the client's (default the server's), where the server
 *   listens (default an shm name; PORT to PORT + 3 are used), the calls of each run
 *   (30000)
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "calls_test.h"
#include "eal_test.h"
#include "rpcr_test.h"

#define NCONNS   24u
#define DEPTH    8u  /* calls each client keeps outstanding */
#define CREDITS  16u /* asked by each client, the server's most */
#define SRQ_RECV 64u /* the queue; its budget is 48 (a batch kept back) */

static struct rpcr_xprt_poller *ps, *pc;
static struct rpcr_test_caller cls[NCONNS + 1];
static struct rpcr_call cl_calls[NCONNS + 1][DEPTH];
static bool cl_busy[NCONNS + 1][DEPTH];
static struct rpcr_test_tally tally;
static const char *sdevargs = "shm", *cdevargs, *listen_at;
static uint32_t clnt_srq;       /* the client poller's queue (pollers()) */
static uint32_t ncalls = 30000; /* --calls */

/* @n callers of @depth calls each, from @calls and @busy (@n x @depth of them, all zeroed),
 * counted in the tally (reset, @most calls at most). */
static void
callers_init(struct rpcr_test_caller *k, uint32_t n, struct rpcr_call *calls, bool *busy,
	     uint32_t depth, uint64_t most)
{
	uint32_t i;

	memset(k, 0, n * sizeof(*k));
	memset(calls, 0, (size_t)n * depth * sizeof(*calls));
	memset(busy, 0, (size_t)n * depth * sizeof(*busy));
	tally = (struct rpcr_test_tally){.most = most};
	for (i = 0; i < n; i++) {
		k[i].calls = calls + (size_t)i * depth;
		k[i].busy = busy + (size_t)i * depth;
		k[i].depth = depth;
		k[i].tally = &tally;
	}
}

static void
poll_both(void)
{
	rpcr_xprt_poll(ps);
	rpcr_xprt_poll(pc);
}

/* Poll both for @ms (connections torn down, their events in: over a NIC, milliseconds). */
static void
settle(uint32_t ms)
{
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * ms;

	while (rte_rdtsc() < end)
		poll_both();
}

/* Credits the server grants now, added over its connections; @most: the largest. */
static uint32_t
granted(uint32_t *most)
{
	struct rpcr_clnt_info info;
	uint32_t i, sum = 0;

	*most = 0;
	for (i = 0; i < NCONNS; i++) {
		if (cls[i].gone || rpcr_clnt_info_get(cls[i].c, &info) != 0)
			continue;
		sum += info.credits;
		*most = RTE_MAX(*most, info.credits);
	}
	return sum;
}

/*
 * The two pollers on their devices (the server's with a queue of @srq receives, or none) and
 * where the server listens: run number @k of this process (PORT + @k with --addr).
 * @return 0, or -1 (checked failed).
 */
static int
pollers(struct rpcr_rdev **ds, struct rpcr_rdev **dc, uint32_t srq, int k, char *addr, size_t len)
{
	struct rpcr_xprt_poller_conf conf = {.bufs = 4096, .bulk_bufs = 16};

	*ds = rpcr_rdev_open(sdevargs);
	*dc = rpcr_rdev_open(cdevargs != NULL ? cdevargs : sdevargs);
	CHECK(*ds != NULL && *dc != NULL);
	conf.name = "srv";
	conf.dev = *ds;
	conf.srq_recvs = srq;
	ps = rpcr_xprt_poller_create(&conf);
	conf.name = "cli";
	conf.dev = *dc;
	conf.srq_recvs = clnt_srq;
	pc = rpcr_xprt_poller_create(&conf);
	CHECK(ps != NULL && pc != NULL);
	if (ps == NULL || pc == NULL)
		return -1;
	if (listen_at != NULL) {
		const char *colon = strrchr(listen_at, ':');

		snprintf(addr, len, "%.*s:%d", (int)(colon - listen_at), listen_at,
			 atoi(colon + 1) + k);
	} else {
		snprintf(addr, len, "srq-%d-%d", (int)getpid(), k);
	}
	return 0;
}

/* Poll both until the @n callers' clients are all connected, or @secs pass: how many are. */
static uint32_t
wait_up(const struct rpcr_test_caller *cs, uint32_t n, uint32_t secs)
{
	uint64_t deadline = rte_rdtsc() + secs * rte_get_tsc_hz();
	uint32_t i, up;

	do {
		poll_both();
		for (up = 0, i = 0; i < n; i++)
			up += cs[i].c != NULL && rpcr_clnt_connected(cs[i].c);
	} while (up < n && rte_rdtsc() < deadline);
	return up;
}

/* Destroy the two pollers (every buffer back: the pool's check) and close their devices. */
static void
pollers_close(struct rpcr_rdev *ds, struct rpcr_rdev *dc)
{
	CHECK_EQ(rpcr_xprt_poller_destroy(ps), 0);
	CHECK_EQ(rpcr_xprt_poller_destroy(pc), 0);
	rpcr_rdev_close(ds);
	rpcr_rdev_close(dc);
}

static void
run(bool srq)
{
	struct rpcr_rdev *ds, *dc;
	struct rpcr_xprt_stats ss, sc;
	struct rpcr_svc *s;
	uint32_t i, most, sum, worst_sum = 0, best_most = 0, in_use;
	uint64_t deadline;
	char addr[64];

	callers_init(cls, RTE_DIM(cls), &cl_calls[0][0], &cl_busy[0][0], DEPTH, ncalls);
	if (pollers(&ds, &dc, srq ? SRQ_RECV : 0, (int)srq, addr, sizeof(addr)) != 0)
		return;
	/* 32 connections at most: 48 - (32 - 24) = 40 credits for the 24 to share. */
	s = rpcr_svc_create(
		ps, &(struct rpcr_svc_conf){.addr = addr, .credits = CREDITS, .max_conns = 32});
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	for (i = 0; i < NCONNS; i++) {
		cls[i].c = rpcr_test_clnt(pc, addr, CREDITS);
		CHECK(cls[i].c != NULL);
	}
	deadline = rte_rdtsc() + 60 * rte_get_tsc_hz();
	while (tally.done + tally.failed < ncalls && rte_rdtsc() < deadline) {
		for (i = 0; i < NCONNS; i++)
			if (cls[i].out < DEPTH)
				rpcr_test_issue(&cls[i]);
		poll_both();
		/* Half of them go, calls outstanding, halfway. */
		if (tally.done >= ncalls / 2 && !cls[0].gone) {
			for (i = 0; i < NCONNS / 2; i++) {
				CHECK_EQ(rpcr_clnt_destroy(cls[i].c), 0);
				cls[i].gone = true;
			}
		}
		if ((tally.done & 255) == 0) {
			sum = granted(&most);
			worst_sum = RTE_MAX(worst_sum, sum);
			best_most = RTE_MAX(best_most, most);
		}
	}
	in_use = rpcr_test_bufs_in_use(ps);
	rpcr_xprt_stats_get(ps, &ss);
	rpcr_xprt_stats_get(pc, &sc);
	printf("srq %s: %" PRIu64 " calls answered, %" PRIu64 " failed (the destroyed clients'), "
	       "credits granted at most %u together, server buffers in use %u (%u connections)\n",
	       srq ? "on " : "off", tally.done, tally.failed, worst_sum, in_use, NCONNS / 2);
	CHECK(tally.done + tally.failed >= ncalls - NCONNS * DEPTH);
	CHECK(tally.failed <= NCONNS / 2 * DEPTH); /* only what the destroyed clients had out */
	CHECK_EQ(ss.overruns, 0);
	CHECK_EQ(ss.wc_errors, 0);
	CHECK_EQ(ss.conns_refused, 0);
	CHECK_EQ(sc.reconnects, 0);
	CHECK_EQ(sc.timeouts, 0);
	if (srq) {
		CHECK(worst_sum <= SRQ_RECV - 16 - (32 - NCONNS));
		CHECK(best_most > 1); /* some grew */
		CHECK(in_use < SRQ_RECV + NCONNS * 8);
		/* As many connections as the budget has credits, and the next refused. */
		for (i = NCONNS / 2; i < NCONNS; i++) {
			CHECK_EQ(rpcr_clnt_destroy(cls[i].c), 0);
			cls[i].gone = true;
		}
	} else {
		CHECK(in_use > NCONNS / 2 * CREDITS); /* receives of their own */
		for (i = NCONNS / 2; i < NCONNS; i++) {
			CHECK_EQ(rpcr_clnt_destroy(cls[i].c), 0);
			cls[i].gone = true;
		}
	}
	settle(300);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	s = NULL;
	if (srq) {
		/* 48 credits of budget, a server of 64 connections: 48 connections of 1, then a
		 * refusal. */
		s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr, .max_conns = 64});
		CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
		struct rpcr_clnt *many[49];
		uint32_t up = 0;

		for (i = 0; i < 49; i++)
			many[i] = rpcr_test_clnt(pc, addr, 1);
		deadline = rte_rdtsc() + 5 * rte_get_tsc_hz();
		while (rte_rdtsc() < deadline) {
			poll_both();
			for (up = 0, i = 0; i < 49; i++)
				up += many[i] != NULL && rpcr_clnt_connected(many[i]);
			rpcr_xprt_stats_get(ps, &ss);
			if (up == 48 && ss.conns_refused >= 1)
				break;
		}
		CHECK_EQ(up, 48);
		CHECK(ss.conns_refused >= 1);
		for (i = 0; i < 49; i++)
			if (many[i] != NULL)
				CHECK_EQ(rpcr_clnt_destroy(many[i]), 0);
		settle(300);
	}
	if (s != NULL)
		CHECK_EQ(rpcr_svc_destroy(s), 0);
	settle(100);
	pollers_close(ds, dc); /* the queue's receives back with the rest */
}

/*
 * A few connections that each ask more than their share of a tight budget are served alike:
 * 4 clients asking 16 credits with 16 calls each kept out, against a queue whose budget leaves
 * them 20 credits (48, less one kept for each of the 28 more connections the server may
 * accept). A connection that grew beyond the equal share into the budget's last quarter came
 * down again, gave its credits back and, answered most often, took them all again before the
 * others grew: one connection at 5 credits, three at 1 (bench_scale's 4 x 250: 17,311 to
 * 1,668,854 calls a connection). The measured calls (--calls) follow a third as many.
 */
static void
run_share(void)
{
	enum { N = 4, D = 16 };
	struct rpcr_rdev *ds, *dc;
	uint64_t deadline, lo = UINT64_MAX, hi = 0, base[N] = {0};
	struct rpcr_svc *s;
	bool based;
	uint32_t i;
	char addr[64];

	static struct rpcr_call calls[N][D];
	static bool busy[N][D];

	memset(cls, 0, sizeof(cls));
	callers_init(cls, N, &calls[0][0], &busy[0][0], D, UINT64_MAX);
	if (pollers(&ds, &dc, SRQ_RECV, 2, addr, sizeof(addr)) != 0)
		return;
	s = rpcr_svc_create(
		ps, &(struct rpcr_svc_conf){.addr = addr, .credits = CREDITS, .max_conns = 32});
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	for (i = 0; i < N; i++) {
		cls[i].c = rpcr_test_clnt(pc, addr, CREDITS);
		CHECK(cls[i].c != NULL);
	}
	/* All connected first, then a warm-up (grants settle), then the measured calls. */
	CHECK_EQ(wait_up(cls, N, 10), N);
	for (deadline = rte_rdtsc() + 60 * rte_get_tsc_hz(), based = false;
	     tally.done < ncalls + ncalls / 3 && rte_rdtsc() < deadline;) {
		if (!based && tally.done >= ncalls / 3) {
			for (i = 0; i < N; i++)
				base[i] = cls[i].done;
			based = true;
		}
		for (i = 0; i < N; i++)
			rpcr_test_issue(&cls[i]);
		poll_both();
	}
	for (i = 0; i < N; i++) {
		lo = RTE_MIN(lo, cls[i].done - base[i]);
		hi = RTE_MAX(hi, cls[i].done - base[i]);
	}
	printf("srq on, %u connections of %u calls: calls answered a connection: %" PRIu64
	       " to %" PRIu64 "\n",
	       N, D, lo, hi);
	CHECK(tally.done >= ncalls + ncalls / 3);
	CHECK(lo * 2 >= hi);
	for (i = 0; i < N; i++)
		CHECK_EQ(rpcr_clnt_destroy(cls[i].c), 0);
	settle(300);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	settle(100);
	pollers_close(ds, dc);
}

/*
 * Short replies on the queue's connections hold no buffer once posted: the server asks its QPs
 * for inline Sends, which the device copies when they are posted (rpcr_rdev_qp_attr::
 * max_inline), and gives their buffers back after each poll's doorbells. 48 clients of one
 * credit each, answered NROUNDS times one call at a time, leave the server no more buffers in
 * use than the queue's receives and the poller's reuse stack (XPRT_POLL_KEPT, 64) hold. Before,
 * each connection kept two for its replies and its queue up to three more, unsignalled: 160 and
 * more here. (A server device with no inline Sends: skipped.)
 */
static void
run_inline(void)
{
	enum { N = 48, NROUNDS = 16, KEPT = 64 };
	static struct rpcr_test_caller ic[N];
	static struct rpcr_call calls[N];
	static bool busy[N];
	struct rpcr_rdev_info info;
	struct rpcr_rdev *ds, *dc;
	struct rpcr_xprt_stats ss;
	uint64_t deadline, least;
	struct rpcr_svc *s;
	uint32_t i, in_use;
	char addr[64];

	callers_init(ic, N, calls, busy, 1, UINT64_MAX);
	if (pollers(&ds, &dc, SRQ_RECV, 3, addr, sizeof(addr)) != 0)
		return;
	CHECK_EQ(rpcr_rdev_info_get(ds, &info), 0);
	if (info.max_inline < 128) {
		printf("srq on, inline replies: skipped (the device's inline Sends: %u bytes)\n",
		       info.max_inline);
		goto out;
	}
	/* 48 credits of budget: 48 connections of 1. */
	s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr, .max_conns = 64});
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	for (i = 0; i < N; i++) {
		ic[i].c = rpcr_test_clnt(pc, addr, 1);
		CHECK(ic[i].c != NULL);
	}
	CHECK_EQ(wait_up(ic, N, 10), N);
	deadline = rte_rdtsc() + 30 * rte_get_tsc_hz();
	do {
		for (least = UINT64_MAX, i = 0; i < N; i++) {
			if (ic[i].out == 0 && ic[i].done < NROUNDS)
				rpcr_test_issue(&ic[i]);
			least = RTE_MIN(least, ic[i].done);
		}
		poll_both();
	} while (least < NROUNDS && rte_rdtsc() < deadline);
	settle(50);
	in_use = rpcr_test_bufs_in_use(ps);
	rpcr_xprt_stats_get(ps, &ss);
	printf("srq on, inline replies: %u connections answered %" PRIu64 " times each at least, "
	       "server buffers in use %u (the queue %u, the reuse stack %u)\n",
	       N, least, in_use, SRQ_RECV, KEPT);
	CHECK(least >= NROUNDS);
	CHECK_EQ(tally.failed, 0);
	CHECK_EQ(ss.wc_errors, 0);
	CHECK(in_use <= SRQ_RECV + KEPT);
	for (i = 0; i < N; i++)
		CHECK_EQ(rpcr_clnt_destroy(ic[i].c), 0);
	settle(300);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	settle(100);
out:
	pollers_close(ds, dc);
}

static int late_status;

static void
late_done(struct rpcr_call *call)
{
	late_status = call->status;
}

/*
 * Clients on their poller's queue: 48 receives, a budget of 32, clients of 8 credits (8 slots):
 * 4 connect, the fifth waits until one goes (the reservation's size); their calls all answered
 * (with 32 replies at most on the wire against 48 receives, no RNR whatever was reserved: the
 * queue's use by clients). A call that times out keeps its slot until its late reply.
 */
static void
run_clnt_queue(void)
{
	enum { N = 5, UP = 4, D = 8, NROUNDS = 200 };
	static struct rpcr_test_caller ic[N];
	static struct rpcr_call calls[N][D];
	static bool busy[N][D];
	struct rpcr_rdev_info info;
	struct rpcr_rdev *ds, *dc;
	struct rpcr_xprt_stats ss, sc;
	uint64_t deadline, least;
	struct rpcr_svc *s;
	uint32_t i, up, waiting = N;
	static struct rpcr_call late;
	uint64_t reconnects, late_replies;
	char addr[64];

	callers_init(ic, N, &calls[0][0], &busy[0][0], D, UINT64_MAX);
	clnt_srq = 48;
	if (pollers(&ds, &dc, SRQ_RECV, 4, addr, sizeof(addr)) != 0) {
		clnt_srq = 0;
		return;
	}
	clnt_srq = 0;
	CHECK_EQ(rpcr_rdev_info_get(dc, &info), 0);
	if (!(info.caps & RPCR_RDEV_CAP_SRQ)) {
		printf("clients on their queue: skipped (the client's device has none)\n");
		goto out;
	}
	s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr, .max_conns = 8});
	CHECK(s != NULL && rpcr_testprog_register(s, 0) == 0);
	for (i = 0; i < N; i++) {
		ic[i].c = rpcr_clnt_create(pc, &(struct rpcr_clnt_conf){.addr = addr,
									.prog = RPCR_TESTPROG,
									.vers = RPCR_TESTPROG_VERS,
									.credits = D,
									.srq = true});
		CHECK(ic[i].c != NULL);
		if (ic[i].c == NULL)
			goto out;
	}
	/* One that could never fit (64 slots, a budget of 32): refused at once. */
	CHECK(rpcr_clnt_create(pc, &(struct rpcr_clnt_conf){.addr = addr,
							    .prog = RPCR_TESTPROG,
							    .vers = RPCR_TESTPROG_VERS,
							    .credits = 64,
							    .srq = true}) == NULL &&
	      rte_errno == EINVAL);
	CHECK_EQ(wait_up(ic, N, 4), UP); /* (the fifth never: all 4 s) */
	for (i = 0; i < N; i++)
		if (!rpcr_clnt_connected(ic[i].c))
			waiting = i;
	CHECK(waiting < N);
	if (waiting >= N)
		goto out;
	/* The four connected, 8 calls out each (32 replies on the wire at once, at most): all
	 * answered. */
	deadline = rte_rdtsc() + 30 * rte_get_tsc_hz();
	do {
		for (least = UINT64_MAX, i = 0; i < N; i++) {
			if (i == waiting)
				continue;
			if (ic[i].done < NROUNDS * D)
				rpcr_test_issue(&ic[i]);
			least = RTE_MIN(least, ic[i].done);
		}
		poll_both();
	} while (least < NROUNDS * D && rte_rdtsc() < deadline);
	settle(20);
	rpcr_xprt_stats_get(ps, &ss);
	rpcr_xprt_stats_get(pc, &sc);
	printf("clients on their queue (48 receives, 4 clients of 8 slots): answered %" PRIu64
	       " times each at least; server wc_errors %" PRIu64 ", client %" PRIu64 "\n",
	       least, ss.wc_errors, sc.wc_errors);
	CHECK(least >= NROUNDS * D);
	CHECK_EQ(tally.failed, 0);
	CHECK_EQ(ss.wc_errors, 0);
	CHECK_EQ(sc.wc_errors, 0);
	CHECK(!rpcr_clnt_connected(ic[waiting].c));
	/* One goes: the fifth connects (its next try, within the reconnection backoff). */
	CHECK_EQ(rpcr_clnt_destroy(ic[(waiting + 1) % N].c), 0);
	ic[(waiting + 1) % N].c = NULL;
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (!rpcr_clnt_connected(ic[waiting].c) && rte_rdtsc() < deadline)
		poll_both();
	CHECK(rpcr_clnt_connected(ic[waiting].c));
	for (up = 0, i = 0; i < N; i++)
		up += ic[i].c != NULL && rpcr_clnt_connected(ic[i].c);
	CHECK_EQ(up, UP);

	/* A call that times out while its server holds it: its slot keeps the receive reserved
	 * for its reply, and its credit, until the late reply comes (the server, not polled
	 * meanwhile, answers then into the client's queue); the connection stays, calls go on
	 * after it, and no Send failed. (Calls first: the connection's first exchanges done, its
	 * grant in.) */
	ic[waiting].done = 0;
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (ic[waiting].done < 4 * D && rte_rdtsc() < deadline) {
		rpcr_test_issue(&ic[waiting]);
		poll_both();
	}
	CHECK(ic[waiting].done >= 4 * D);
	settle(5);
	rpcr_xprt_stats_get(pc, &sc);
	reconnects = sc.reconnects;
	late_replies = sc.late_replies;
	memset(&late, 0, sizeof(late));
	late.proc = RPCR_TESTPROG_NULL;
	late.timeout_us = 20000;
	late.done = late_done;
	late_status = 1;
	CHECK_EQ(rpcr_clnt_call(ic[waiting].c, &late), 0);
	deadline = rte_rdtsc() + 5 * rte_get_tsc_hz();
	while (late_status == 1 && rte_rdtsc() < deadline)
		rpcr_xprt_poll(pc); /* (the client alone) */
	CHECK_EQ(late_status, -ETIMEDOUT);
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	do {
		poll_both();
		rpcr_xprt_stats_get(pc, &sc);
	} while (sc.late_replies == late_replies && rte_rdtsc() < deadline);
	CHECK_EQ(sc.late_replies, late_replies + 1);
	CHECK_EQ(sc.reconnects, reconnects);
	CHECK(rpcr_clnt_connected(ic[waiting].c));
	ic[waiting].done = 0;
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (ic[waiting].done < 4 * D && rte_rdtsc() < deadline) {
		rpcr_test_issue(&ic[waiting]);
		poll_both();
	}
	CHECK(ic[waiting].done >= 4 * D);
	rpcr_xprt_stats_get(ps, &ss);
	CHECK_EQ(ss.wc_errors, 0);
	for (i = 0; i < N; i++)
		if (ic[i].c != NULL)
			CHECK_EQ(rpcr_clnt_destroy(ic[i].c), 0);
	settle(300);
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	settle(100);
out:
	pollers_close(ds, dc);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"cdev", required_argument, NULL, 'c'},
					     {"addr", required_argument, NULL, 'a'},
					     {"calls", required_argument, NULL, 'n'},
					     {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "d:c:a:n:", opts, NULL)) != -1) {
		if (c == 'd')
			sdevargs = optarg;
		else if (c == 'c')
			cdevargs = optarg;
		else if (c == 'a' && strrchr(optarg, ':') != NULL)
			listen_at = optarg;
		else if (c == 'n' && atoi(optarg) >= 1000)
			ncalls = (uint32_t)atoi(optarg);
		else {
			fprintf(stderr, "usage: test_srq [--dev DEVARGS] [--cdev DEVARGS] "
					"[--addr IP:PORT] [--calls N >= 1000]\n");
			return 2;
		}
	}
	if (rpcr_test_eal_init() != 0)
		return 1;
	run(true);
	run(false);
	run_share();
	run_inline();
	run_clnt_queue();
	rte_eal_cleanup();
	return rpcr_test_failed != 0;
}
