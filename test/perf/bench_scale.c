/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Server scale over shm: many connections to one server poller, with and without its shared
 * receive queue (rpcr_xprt_poller_conf::srq_recvs). A server poller and a client poller on their
 * own shm devices, polled in turn by this thread (the figures are the two sides' work together).
 *
 *   memory   N connections each make one NULL call and go idle: the server's message buffers
 *            in use then (registered memory: receives posted, and what connections keep),
 *            per connection, without the queue (each posts its credits and a batch) and with it
 *   rate     NULL calls per second, all N connections with 1 call outstanding each, against 4
 *            connections with 250 each (the same server, with the queue): the ratio
 *
 * usage: bench_scale [--conns N] [--seconds S] [--srq R] [--few K] [--quick]
 *   --conns N    connections (default 1000)        --srq R   the queue's receives (default 2048)
 *   --seconds S  each rate run (default 3)         --quick   200 connections, 1 s (a smoke run)
 *   --few K      the run compared against: K connections (at most N) with 1000 / K calls
 *                outstanding each (default 4: 4 x 250), the same 1000 calls in flight spread
 *                over more connections (doc/xprt.md: what a connection's batching is worth)
 * The clients' side receives as a host of that shape would: at N x 1 from their poller's own
 * shared receive queue (rpcr_clnt_conf::srq, a receive reserved for each call slot), so that
 * the benchmark's N clients, which stand for N machines with one QP each, do not cost it a
 * visit of N QPs for their replies; at K x 1000 / K each client connection posts its own. The
 * line of the rate says which. SCALE_CLNT=own or SCALE_CLNT=queue: the same for both runs
 * (doc/xprt.md, stop 50, has the figures of each); with SCALE_NO_SRQ, no queue on either side.
 * Environment: SCALE_NO_SRQ=1 runs the rates without the queue; SCALE_STATS=1 prints both
 * pollers' counters after the many-connection rate run; SCALE_RATE_ONLY=1 skips the memory runs;
 * SCALE_MANY_ONLY=1 stops after the many-connection rate run (a profile of it alone);
 * SCALE_CPU=N runs on CPU N; SCALE_EAL_HUGE=MB puts the EAL heap on hugepages; SCALE_SPLIT=1
 * runs the server poller on its own lcore (CPU 1; this thread, on CPU 0, polls the clients) and
 * reports the time of its polls that found work per call.
 * Each rate run reports the fewest and most calls a connection had answered in it (a poller
 * that starves some connections shows there), and the time per call of each side.
 * Under valgrind --tool=callgrind --instr-atstart=no only the rate runs are counted, each in
 * its own profile (with --cache-sim=yes: where each run's cache misses are). SCALE_MARKS=1
 * prints when each measured run started and ended (CLOCK_MONOTONIC) and its calls, for a
 * native profile of each (test/perf/scale-profile.sh: perf record -k CLOCK_MONOTONIC).
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <valgrind/callgrind.h>

#include <rpcr_mem.h>
#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "calls_test.h"

/* The EAL: its heap (connections and their queues come from it) large enough for thousands. */
static int
eal_init(void)
{
	static char a0[] = "bench_scale", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l",
		    a4[] = "0", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error", a9[] = "-m",
		    a10[] = "6144";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, NULL};

	/* SCALE_CPU=N: the lcore on CPU N (two builds compared at once, each on its own CPU, see
	 * the same noise of a shared machine). */
	if (getenv("SCALE_SPLIT") != NULL) {
		static char l1[] = "--lcores", l2[] = "0@0,1@1";

		argv[3] = l1;
		argv[4] = l2;
	} else if (getenv("SCALE_CPU") != NULL) {
		static char l1[] = "--lcores", l2[16];

		snprintf(l2, sizeof(l2), "0@%s", getenv("SCALE_CPU"));
		argv[3] = l1;
		argv[4] = l2;
	}
	/* SCALE_EAL_HUGE=MB: the EAL heap on that much of the reserved hugepages instead (the
	 * connections' state on 2 MiB pages: fewer TLB misses over many connections). */
	if (getenv("SCALE_EAL_HUGE") != NULL) {
		static char h1[] = "--huge-unlink", m[16];

		snprintf(m, sizeof(m), "%s", getenv("SCALE_EAL_HUGE"));
		argv[1] = h1;
		argv[10] = m;
	}
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 ? -1 : 0;
}

/* Bytes of the EAL heap in use. */
static size_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;
	size_t used = 0;
	int s;

	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats(s, &st) == 0)
			used += st.heap_allocsz_bytes;
	return used;
}

#define FEW_CALLS 1000u           /* calls in flight in the run compared against (--few) */
#define BUF_BYTES (8192u + 2048u) /* a message buffer: data and headroom (lib/xprt) */

static struct rpcr_xprt_poller *ps, *pc;
static struct rpcr_rdev *ds, *dc;
static struct rpcr_test_caller *cls;
static struct rpcr_test_tally tally = {.most = UINT64_MAX};
/* SCALE_SPLIT=1: the server poller runs on its own lcore (1), the clients on this one. */
static bool split;
/* The clients' connections of the next setup() post their own receives (else the queue). */
static bool clnt_own;

/* TSC cycles of the measured run: the server's polls, the client's polls, the issue loop. */
static bool timing;
static uint64_t cyc_srv, cyc_cli, cyc_issue;

static void
poll_both(void)
{
	uint64_t t0, t1;

	if (split) {
		t0 = rte_rdtsc();
		rpcr_xprt_poll(pc);
		if (timing)
			cyc_cli += rte_rdtsc() - t0;
		return;
	}
	if (!timing) {
		rpcr_xprt_poll(ps);
		rpcr_xprt_poll(pc);
		return;
	}
	t0 = rte_rdtsc();
	rpcr_xprt_poll(ps);
	t1 = rte_rdtsc();
	rpcr_xprt_poll(pc);
	cyc_srv += t1 - t0;
	cyc_cli += rte_rdtsc() - t1;
}

/* SCALE_SPLIT: the server poller's loop on lcore 1 (the first poll there makes it the owner;
 * this thread never polls it). The cycles of its polls that found work are its busy time. */
static bool srv_stop;

static int
srv_loop(void *arg)
{
	uint64_t t0;
	int w;

	(void)arg;
	while (!__atomic_load_n(&srv_stop, __ATOMIC_ACQUIRE)) {
		t0 = rte_rdtsc();
		w = rpcr_xprt_poll(ps);
		if (w != 0 && __atomic_load_n(&timing, __ATOMIC_RELAXED))
			__atomic_fetch_add(&cyc_srv, rte_rdtsc() - t0, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Pollers, a server (credits, max_conns), @n clients asking @credits, @depth calls each. */
static int
setup(uint32_t srq, uint32_t srv_credits, uint32_t n, uint32_t credits, uint32_t depth,
      uint32_t bufs, uint32_t max_conns)
{
	struct rpcr_xprt_poller_conf conf = {.bulk_bufs = 16, .cq_depth = 1u << 21};
	static char addr[64];
	static uint32_t seq;
	struct rpcr_svc *s;
	uint64_t deadline;
	uint32_t i, up;

	ds = rpcr_rdev_open("shm");
	dc = rpcr_rdev_open("shm");
	if (ds == NULL || dc == NULL)
		return -1;
	conf.name = "srv";
	conf.dev = ds;
	conf.bufs = bufs;
	conf.srq_recvs = srq;
	ps = rpcr_xprt_poller_create(&conf);
	conf.name = "cli";
	conf.dev = dc;
	/* The clients' queue: a receive for each call slot of each (credits rounded up to a power
	 * of two, rpcr_clnt_conf::srq), and the margin it keeps. */
	conf.srq_recvs = clnt_own ? 0 : n * rte_align32pow2(RTE_MAX(credits, 2u)) + 64;
	if (conf.srq_recvs != 0) {
		struct rpcr_rdev_info info;

		if (rpcr_rdev_info_get(dc, &info) != 0 || conf.srq_recvs > info.max_srq_wr) {
			fprintf(stderr,
				"(the clients' queue would take %u receives: beyond the "
				"device's; they post their own)\n",
				conf.srq_recvs);
			clnt_own = true;
			conf.srq_recvs = 0;
		}
	}
	/* The clients': each connection's receives (credits and a batch), what it keeps, and the
	 * send buffers of its calls out (fewer, and a client short of receives sends anyway: its
	 * server's Sends then fail RNR, issue 20). */
	conf.bufs = n * (credits + depth + 16 + 16 + 64) + 1024;
	pc = rpcr_xprt_poller_create(&conf);
	if (ps == NULL || pc == NULL) {
		fprintf(stderr, "pollers: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	snprintf(addr, sizeof(addr), "scale-%d-%u", (int)getpid(), seq++);
	/* (Its max_conns: the connections of this run, and a few; the queue keeps a credit for
	 * each it may still accept.) */
	s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr,
							.credits = srv_credits,
							.max_conns = RTE_MAX(max_conns, n) + 24});
	if (s == NULL || rpcr_testprog_register(s, 0) != 0) {
		fprintf(stderr, "server: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	srv_stop = false;
	if (split && rte_eal_remote_launch(srv_loop, NULL, 1) != 0) {
		fprintf(stderr, "server poller launch: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	cls = calloc(n, sizeof(*cls));
	for (i = 0; i < n; i++) {
		cls[i].c = rpcr_clnt_create(pc, &(struct rpcr_clnt_conf){.addr = addr,
									 .prog = RPCR_TESTPROG,
									 .vers = RPCR_TESTPROG_VERS,
									 .credits = credits,
									 .srq = !clnt_own});
		cls[i].depth = depth;
		cls[i].tally = &tally;
		cls[i].calls = calloc(depth, sizeof(*cls[i].calls));
		cls[i].busy = calloc(depth, sizeof(*cls[i].busy));
		if (cls[i].c == NULL) {
			fprintf(stderr, "client %u: %s\n", i, rte_strerror(rte_errno));
			return -1;
		}
	}
	deadline = rte_rdtsc() + 60 * rte_get_tsc_hz();
	do {
		poll_both();
		for (up = 0, i = 0; i < n; i++)
			up += rpcr_clnt_connected(cls[i].c);
	} while (up < n && rte_rdtsc() < deadline);
	if (up != n) {
		struct rpcr_xprt_stats a, b;

		rpcr_xprt_stats_get(ps, &a);
		rpcr_xprt_stats_get(pc, &b);
		fprintf(stderr,
			"%u of %u connected (server: refused %" PRIu64
			"; client: reconnects %" PRIu64 ")\n",
			up, n, a.conns_refused, b.reconnects);
	}
	return up == n ? 0 : -1;
}

static void
teardown(uint32_t n)
{
	struct rpcr_svc *s = NULL;
	uint32_t i;

	for (i = 0; i < n; i++) {
		rpcr_clnt_destroy(cls[i].c);
		free(cls[i].calls);
		free(cls[i].busy);
	}
	free(cls);
	for (i = 0; i < 1000; i++)
		poll_both();
	if (split) {
		__atomic_store_n(&srv_stop, true, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(1);
	}
	(void)s;
}

/* The pages of @p's arena (its message buffers). */
static const char *
page_kind(const struct rpcr_xprt_poller *p)
{
	return rpcr_mem_arena_hugepage(rpcr_xprt_poller_arena(p)) ? "2 MiB" : "4 KiB";
}

/* Calls per second over @sec seconds, every client kept at its depth. */
static uint64_t *marks; /* each client's calls answered when the measured run started */

static uint64_t lost; /* client connections lost in rate runs (none may be) */

static double
rate(uint32_t n, double sec)
{
	struct rpcr_xprt_stats st;
	struct timespec m0, m1;
	uint64_t t0, t1, d0, r0;
	uint32_t i;

	rpcr_xprt_stats_get(pc, &st);
	r0 = st.reconnects;
	/* Calls issued where a completion made room (the tally's ready list), as an application
	 * of many clients would: a loop that looked at every client each turn cost more than
	 * the calls at 1000 x 1 (400 instructions and 2 cache misses a call). */
	tally.ready = realloc(tally.ready, sizeof(*tally.ready) * n);
	if (tally.ready == NULL)
		abort();
	tally.nready = 0;
	for (i = 0; i < n; i++)
		rpcr_test_ready(&cls[i]);

	/* Warm-up: a second of calls, and at least 32 a connection (at most 30 s): every buffer
	 * the measured run cycles through (a connection's receives, the queue's, FIFO) written
	 * once, so that it pays no first-touch page faults. */
	d0 = tally.done;
	for (t0 = rte_rdtsc(), t1 = t0 + rte_get_tsc_hz();
	     rte_rdtsc() < t1 ||
	     (tally.done - d0 < 32ull * n && rte_rdtsc() < t0 + 30 * rte_get_tsc_hz());) {
		rpcr_test_issue_ready(&tally);
		poll_both();
	}
	marks = realloc(marks, sizeof(*marks) * n);
	if (marks == NULL)
		abort();
	for (i = 0; i < n; i++)
		marks[i] = cls[i].done;
	d0 = tally.done;
	t0 = rte_rdtsc();
	t1 = t0 + (uint64_t)(sec * (double)rte_get_tsc_hz());
	cyc_srv = cyc_cli = cyc_issue = 0;
	__atomic_store_n(&timing, true, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &m0);
	CALLGRIND_START_INSTRUMENTATION;
	while (rte_rdtsc() < t1) {
		uint64_t t = rte_rdtsc();

		rpcr_test_issue_ready(&tally);
		cyc_issue += rte_rdtsc() - t;
		poll_both();
	}
	CALLGRIND_STOP_INSTRUMENTATION;
	clock_gettime(CLOCK_MONOTONIC, &m1);
	if (getenv("SCALE_MARKS") != NULL)
		printf("mark %u x %u: %ld.%09ld %ld.%09ld %" PRIu64 " calls\n", n, cls[0].depth,
		       (long)m0.tv_sec, m0.tv_nsec, (long)m1.tv_sec, m1.tv_nsec, tally.done - d0);
	__atomic_store_n(&timing, false, __ATOMIC_RELEASE);
	CALLGRIND_DUMP_STATS; /* (one profile per rate run) */
	if (getenv("SCALE_STATS") != NULL)
		fprintf(stderr, "(%" PRIu64 " calls measured)\n", tally.done - d0);
	/* (A server pool too small for its queue drains the queue: clients' Sends then fail RNR
	 * and their connections with them, a figure to throw away.) */
	rpcr_xprt_stats_get(pc, &st);
	if (st.reconnects != r0)
		fprintf(stderr, "%" PRIu64 " connections lost and made again in the run\n",
			st.reconnects - r0);
	lost += st.reconnects - r0;
	if (tally.done != d0) {
		double ns = 1e9 / (double)rte_get_tsc_hz() / (double)(tally.done - d0);

		/* (The client's side is this benchmark's: its N clients would be N machines.) */
		uint64_t lo = UINT64_MAX, hi = 0, k;
		uint32_t none = 0;

		/* Every connection served: the fewest and most calls one had answered. */
		for (i = 0; i < n; i++) {
			k = cls[i].done - marks[i];
			lo = RTE_MIN(lo, k);
			hi = RTE_MAX(hi, k);
			none += k == 0;
		}
		printf("  %u x %u: calls a connection: %" PRIu64 " to %" PRIu64 " (%u with none)\n",
		       n, cls[0].depth, lo, hi, none);
		printf("  %u x %u: ns per call: server %s %.0f, client polls %.0f, issuing "
		       "%.0f\n",
		       n, cls[0].depth, split ? "(own lcore) polls with work" : "polls",
		       (double)__atomic_load_n(&cyc_srv, __ATOMIC_ACQUIRE) * ns,
		       (double)cyc_cli * ns, (double)cyc_issue * ns);
		/* What the figures depend on most at many connections: whether the message
		 * buffers (each poller's arena) and the connections' state (the EAL heap) are on
		 * 2 MiB pages, or on 4 KiB pages and a TLB miss each (doc/xprt.md). */
		printf("  %u x %u: pages: server buffers %s, client buffers %s, EAL heap %s\n", n,
		       cls[0].depth, page_kind(ps), page_kind(pc),
		       rte_eal_has_hugepages() ? "2 MiB" : "4 KiB (--no-huge)");
	}
	return (double)(tally.done - d0) * (double)rte_get_tsc_hz() / (double)(rte_rdtsc() - t0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"conns", required_argument, NULL, 'n'}, {"seconds", required_argument, NULL, 's'},
		{"srq", required_argument, NULL, 'r'},   {"few", required_argument, NULL, 'f'},
		{"quick", no_argument, NULL, 'q'},       {NULL, 0, NULL, 0}};
	uint32_t n = 1000, srq = 0, few = 4, depth, credits, in_use[2], i;
	size_t heap[2];
	bool nosrq = getenv("SCALE_NO_SRQ") != NULL;
	double sec = 3, r_many, r_few;
	char queue[48];
	const char *clnt;
	bool many_own;
	uint64_t fail_run;
	int c, mode;

	while ((c = getopt_long(argc, argv, "n:s:r:f:q", opts, NULL)) != -1) {
		if (c == 'n')
			n = (uint32_t)atoi(optarg);
		else if (c == 's')
			sec = atof(optarg);
		else if (c == 'r')
			srq = (uint32_t)atoi(optarg);
		else if (c == 'f')
			few = (uint32_t)atoi(optarg);
		else if (c == 'q') {
			n = 200;
			sec = 1;
		} else
			return 2;
	}
	if (srq == 0)
		srq = 2 * n + 48; /* (1000: 2048) */
	if (few < 1 || few > FEW_CALLS || few > n) {
		fprintf(stderr, "--few: 1 to %u connections, and at most --conns\n", FEW_CALLS);
		return 2;
	}
	depth = FEW_CALLS / few;
	split = getenv("SCALE_SPLIT") != NULL;
	clnt = getenv("SCALE_CLNT") != NULL ? getenv("SCALE_CLNT") : "shape";
	if (strcmp(clnt, "shape") != 0 && strcmp(clnt, "own") != 0 && strcmp(clnt, "queue") != 0) {
		fprintf(stderr, "SCALE_CLNT: shape, own or queue\n");
		return 2;
	}
	/* (The memory runs measure the server's buffers: the clients post their own there.) */
	clnt_own = true;
	if (eal_init() != 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}

	/* Memory: the server's default credits (64), without the queue and with it. */
	for (mode = getenv("SCALE_RATE_ONLY") != NULL ? 2 : 0; mode < 2; mode++) {
		if (setup(mode ? srq : 0, 0, n, 4, 1, mode ? srq + 16 * n + 4096 : 100 * n + 4096,
			  n) != 0) {
			fprintf(stderr, "set-up of %u connections failed\n", n);
			return 1;
		}
		for (i = 0; i < n; i++)
			rpcr_test_issue(&cls[i]);
		for (i = 0; i < 20000 && tally.done + tally.failed < (uint64_t)n * (mode + 1); i++)
			poll_both();
		for (i = 0; i < 1000; i++)
			poll_both();
		in_use[mode] = rpcr_test_bufs_in_use(ps);
		heap[mode] = heap_used();
		teardown(n);
		rpcr_xprt_poller_destroy(ps);
		rpcr_xprt_poller_destroy(pc);
		rpcr_rdev_close(ds);
		rpcr_rdev_close(dc);
	}
	if (getenv("SCALE_RATE_ONLY") == NULL) {
		printf("memory, %u idle connections (after a call each), server message "
		       "buffers in use (%u bytes each):\n",
		       n, BUF_BYTES);
		printf("  without the shared receive queue: %u buffers, %.1f per connection, "
		       "%.0f KiB\n",
		       in_use[0], (double)in_use[0] / n, (double)in_use[0] * BUF_BYTES / n / 1024);
		printf("  with it (%u receives):            %u buffers, %.1f per connection, "
		       "%.0f KiB\n",
		       srq, in_use[1], (double)in_use[1] / n,
		       (double)in_use[1] * BUF_BYTES / n / 1024);
		printf("  ratio %.3f (goal <= 0.125)\n", (double)in_use[1] / in_use[0]);
		printf("  the EAL heap (both sides' connections, queues, requests; pollers): "
		       "%.0f / %.0f KiB per connection without / with\n",
		       (double)heap[0] / n / 1024, (double)heap[1] / n / 1024);
	}

	/* Rate, with the queue: N connections at 1 against --few K at 1000 / K (4 x 250; server
	 * credits 256). */
	/* (Pools no larger than the run needs: a buffer first written in the measured run costs
	 * page faults, and a FIFO pool cycles through all of its buffers.) */
	/* (Without the queue, a server connection keeps up to twice its receive ring of buffers
	 * for reuse: 576 a connection seen at credits 256, lib/xprt/conn.c's recycle_cap.) */
	clnt_own = strcmp(clnt, "own") == 0 || nosrq;
	if (setup(nosrq ? 0 : srq, 256, n, 4, 1, nosrq ? 600 * n + 4096 : srq + 16 * n + 4096, n) !=
	    0)
		return 1;
	if (nosrq)
		snprintf(queue, sizeof(queue), "no shared receive queue");
	else
		snprintf(queue, sizeof(queue), "shared receive queue of %u", srq);
	many_own = clnt_own;
	tally.failed = 0;
	r_many = rate(n, sec);
	fail_run = tally.failed;
	if (getenv("SCALE_STATS") != NULL) {
		struct rpcr_xprt_stats a, b;

		rpcr_xprt_stats_get(ps, &a);
		rpcr_xprt_stats_get(pc, &b);
		fprintf(stderr,
			"server: polls %" PRIu64 " calls_recv %" PRIu64 " replies_sent %" PRIu64
			" overruns %" PRIu64 " wc_errors %" PRIu64 "; client: polls %" PRIu64
			" calls_sent %" PRIu64 " replies_recv %" PRIu64 " credit_waits %" PRIu64
			" timeouts %" PRIu64 " doorbells %" PRIu64 "\n",
			a.polls, a.calls_recv, a.replies_sent, a.overruns, a.wc_errors, b.polls,
			b.calls_sent, b.replies_recv, b.credit_waits, b.timeouts, b.doorbells);
	}
	if (getenv("SCALE_STATS") != NULL)
		fprintf(stderr, "server message buffers in use: %u, client: %u\n",
			rpcr_test_bufs_in_use(ps), rpcr_test_bufs_in_use(pc));
	fprintf(stderr, "(%u connections x 1: done)\n", n);
	if (getenv("SCALE_MANY_ONLY") != NULL) {
		printf("NULL rate, %s: %u connections x 1 outstanding %.0f/s (clients' %s)\n",
		       queue, n, r_many, many_own ? "own receives" : "queue");
		return fail_run + lost != 0;
	}
	teardown(n);
	rpcr_xprt_poller_destroy(ps);
	rpcr_xprt_poller_destroy(pc);
	rpcr_rdev_close(ds);
	rpcr_rdev_close(dc);
	/* (The client asks a few credits more than its depth, as at 1000 x 1: its grants may
	 * lag behind; 256 at most, the server's. A client connection keeps up to twice its
	 * receives for reuse: 600 buffers at 256 credits, as without the queue above.) */
	credits = RTE_MIN(256u, RTE_MAX(4u, depth + 6));
	clnt_own = strcmp(clnt, "queue") != 0 || nosrq;
	if (setup(nosrq ? 0 : srq, 256, few, credits, depth,
		  nosrq ? 600 * few + 4096 : srq + few * (2 * credits + 88) + 4096, n) != 0)
		return 1;
	tally.failed = 0;
	r_few = rate(few, sec);
	fail_run += tally.failed + lost;
	fprintf(stderr, "(%u x %u: done)\n", few, depth);
	teardown(few);
	rpcr_xprt_poller_destroy(ps);
	rpcr_xprt_poller_destroy(pc);
	rpcr_rdev_close(ds);
	rpcr_rdev_close(dc);
	printf("NULL rate, %s: %u connections x 1 outstanding %.0f/s (clients' %s), "
	       "%u x %u %.0f/s (clients' %s): ratio %.2f (goal >= 0.8)%s\n",
	       queue, n, r_many, many_own ? "own receives" : "queue", few, depth, r_few,
	       clnt_own ? "own receives" : "queue", r_many / r_few,
	       fail_run != 0 ? " (calls failed or connections lost!)" : "");
	rte_eal_cleanup();
	return fail_run != 0;
}
