/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Sleeping pollers (poll modes, lib/xprt/sleep.c): a server poller and a client poller, each on
 * its own shm device and worker lcore (both lcores on one CPU: pollers that sleep can share it),
 * the main lcore calling through the client poller's ring. In each mode:
 *
 *   - calls, some after pauses longer than idle_us: every one answered, none late (sleep_max_ms
 *     is 2 s here, so a lost wake-up, of the ring's or of a completion's, would make a call take
 *     2 s at least: one over 1 s fails the test; a machine overloaded by other work has stalled
 *     one for 554 ms), both pollers slept and were woken;
 *   - a second idle with 16 connections open: the process's CPU time over it (reported; failed
 *     above 25 % of a core, a busy poller takes 100 %), and the first call after it;
 *   - a stop wakes a sleeping poller at once.
 *
 * Busy mode runs too, for the figures beside (its idle CPU is not checked; 300 calls: its two
 * pollers share one CPU by the scheduler's slices).
 *
 * usage: test_sleep   (runs with --lcores 0@0,1@1,2@1)
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <rpcr_mem.h>
#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "rpcr_test.h"

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t
cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
}

static const char *const mode_names[] = {"busy", "adaptive", "interrupt"};

#define NCONNS 16 /* connections to the server, all idle for the idle second */

static int
null_call(struct rpcr_clnt *cl, uint64_t *us)
{
	struct rpcr_call call;
	uint64_t t0 = now_us();
	int rc;

	memset(&call, 0, sizeof(call));
	call.proc = RPCR_TESTPROG_NULL;
	rc = rpcr_clnt_call_sync(cl, &call);
	*us = now_us() - t0;
	return rc;
}

static void
run_mode(enum rpcr_xprt_poll_mode mode, unsigned int ls, unsigned int lc)
{
	/* (Two busy pollers on one CPU take turns by the scheduler's slice: few calls.) */
	const uint32_t ncalls = mode == RPCR_XPRT_POLL_BUSY ? 300 : 20000;
	struct rpcr_rdev *ds = rpcr_rdev_open("shm"), *dc = rpcr_rdev_open("shm");
	struct rpcr_xprt_poller_conf pc = {.bufs = 2048,
					   .bulk_bufs = 16,
					   .poll_mode = mode,
					   .idle_us = 100,
					   .sleep_max_ms = 2000};
	struct rpcr_xprt_poller *ps, *pcl;
	struct rpcr_xprt_stats ss, sc;
	struct rpcr_svc *s = NULL;
	struct rpcr_clnt *cl = NULL, *more[NCONNS - 1] = {NULL};
	uint64_t worst = 0, us, c0, t0, first, stop_us;
	double idle_cpu;
	char addr[64];
	uint32_t i, made, late = 0;

	CHECK(ds != NULL && dc != NULL);
	pc.name = "srv";
	pc.dev = ds;
	ps = ds != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	pc.name = "cli";
	pc.dev = dc;
	pcl = dc != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	CHECK(ps != NULL && pcl != NULL);
	if (ps == NULL || pcl == NULL)
		goto out;
	CHECK_EQ(rpcr_xprt_poller_mode(ps), mode);
	/* Switched by its owner (here, before the launch): to busy and back; to sleeping only if
	 * it was made able to. */
	CHECK_EQ(rpcr_xprt_poller_set_poll_mode(ps, RPCR_XPRT_POLL_BUSY), 0);
	CHECK_EQ(rpcr_xprt_poller_set_poll_mode(ps, RPCR_XPRT_POLL_ADAPTIVE),
		 mode == RPCR_XPRT_POLL_BUSY ? -ENOTSUP : 0);
	CHECK_EQ(rpcr_xprt_poller_set_poll_mode(ps, mode), 0);
	snprintf(addr, sizeof(addr), "sleep-%d-%d", (int)getpid(), (int)mode);
	s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr});
	CHECK(s != NULL);
	if (s == NULL || rpcr_testprog_register(s, 0) != 0)
		goto out;
	cl = rpcr_clnt_create(pcl, &(struct rpcr_clnt_conf){.addr = addr,
							    .prog = RPCR_TESTPROG,
							    .vers = RPCR_TESTPROG_VERS,
							    .ulb = rpcr_testprog_ulb,
							    .nulb = 4});
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;
	/* More connections, idle after their first call: the second idle is a server's with
	 * NCONNS connections (each one's half armed for every sleep on shm). */
	for (i = 0; i < NCONNS - 1; i++) {
		more[i] =
			rpcr_clnt_create(pcl, &(struct rpcr_clnt_conf){.addr = addr,
								       .prog = RPCR_TESTPROG,
								       .vers = RPCR_TESTPROG_VERS});
		CHECK(more[i] != NULL);
	}
	CHECK_EQ(rpcr_xprt_poller_launch(ps, ls), 0);
	CHECK_EQ(rpcr_xprt_poller_launch(pcl, lc), 0);
	CHECK_EQ(rpcr_xprt_poller_set_poll_mode(ps, RPCR_XPRT_POLL_BUSY), -EBUSY); /* not ours */

	/* Calls; one in 64 after a pause of 300 us (adaptive pollers fall asleep). */
	for (i = 0; i < ncalls && late < 3; i++) {
		if (i % 64 == 63)
			usleep(300);
		CHECK_EQ(null_call(cl, &us), 0);
		worst = RTE_MAX(worst, us);
		late += us > 1000000;
	}
	made = i;
	if (late != 0)
		fprintf(stderr, "sleep: %s: call %u took %" PRIu64 " us (lost wake-up)\n",
			mode_names[mode], i - 1, worst);
	for (i = 0; i < NCONNS - 1; i++)
		if (more[i] != NULL)
			CHECK_EQ(null_call(more[i], &us), 0);
	/* A second idle, then one call. */
	c0 = cpu_us();
	t0 = now_us();
	usleep(1000000);
	idle_cpu = (double)(cpu_us() - c0) * 100.0 / (double)(now_us() - t0);
	CHECK_EQ(null_call(cl, &first), 0);
	rpcr_xprt_stats_get(ps, &ss);
	rpcr_xprt_stats_get(pcl, &sc);
	/* Stopped while asleep (the idle before it is longer than idle_us). */
	usleep(2000);
	t0 = now_us();
	rpcr_xprt_poller_stop(ps);
	rpcr_xprt_poller_stop(pcl);
	CHECK_EQ(rte_eal_wait_lcore(ls), 0);
	CHECK_EQ(rte_eal_wait_lcore(lc), 0);
	stop_us = now_us() - t0;

	printf("sleep: %-9s: %u calls, slowest %" PRIu64 " us, over 1 s %u; idle second, %u "
	       "connections: %.2f %% of a core; first call after it %" PRIu64 " us; stop %" PRIu64
	       " us; server slept %" PRIu64 " times (%" PRIu64 " woken), client %" PRIu64
	       " (%" PRIu64 ")\n",
	       mode_names[mode], made, worst, late, NCONNS, idle_cpu, first, stop_us, ss.sleeps,
	       ss.wakeups, sc.sleeps, sc.wakeups);
	CHECK_EQ(late, 0);
	CHECK(first < 500000);
	CHECK(stop_us < 500000);
	if (mode != RPCR_XPRT_POLL_BUSY) {
		CHECK(idle_cpu <= 25.0);
		CHECK(ss.sleeps > 0 && ss.wakeups > 0);
		CHECK(sc.sleeps > 0 && sc.wakeups > 0);
	} else {
		CHECK_EQ(ss.sleeps + sc.sleeps, 0);
	}
out:
	for (i = 0; i < NCONNS - 1; i++)
		if (more[i] != NULL)
			CHECK_EQ(rpcr_clnt_destroy(more[i]), 0);
	if (cl != NULL)
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	if (s != NULL)
		CHECK_EQ(rpcr_svc_destroy(s), 0);
	if (pcl != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(pcl), 0);
	if (ps != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(ps), 0);
	if (dc != NULL)
		CHECK_EQ(rpcr_rdev_close(dc), 0);
	if (ds != NULL)
		CHECK_EQ(rpcr_rdev_close(ds), 0);
}

int
main(void)
{
	static char a0[] = "test_sleep", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--lcores",
		    a4[] = "0@0,1@1,2@1", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error", a9[] = "-m", a10[] = "512";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, NULL};
	unsigned int ls, lc;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 || rte_lcore_count() < 3) {
		fprintf(stderr, "test_sleep: EAL with three lcores\n");
		return 1;
	}
	ls = rte_get_next_lcore(-1, 1, 0);
	lc = rte_get_next_lcore(ls, 1, 0);
	run_mode(RPCR_XPRT_POLL_INTERRUPT, ls, lc);
	run_mode(RPCR_XPRT_POLL_ADAPTIVE, ls, lc);
	run_mode(RPCR_XPRT_POLL_BUSY, ls, lc);
	rte_eal_cleanup();
	return rpcr_test_failed != 0;
}
