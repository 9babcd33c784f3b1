/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The shm driver's fault injection (devargs fault_*, doc/rdev.md), one fault at a time with
 * probability 1 so that each case is exact: the client opens a second device with the fault on,
 * the server is a plain shm device, and each side checks what a real fault would show it.
 *
 *   disconnect  the first work request posted breaks the connection: it flushes, both sides get
 *               DISCONNECTED, the server's receives flush; counted, with the TSC of the fault
 *   reg         registrations fail with ENOMEM once a connection was established, not before
 *   recv        a receive posted after the connection is withheld: the server's Send finds
 *               receiver-not-ready (RNR_RETRY_EXC_ERR), the client's receive flushes
 *   delay       completions, send queue and receives, are reported no sooner than the delay
 *   seed        the same seed breaks the connection at the same work request again
 *   devargs     bad values are refused; a plain device counts nothing
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "rdev_harness.h"
#include "rpcr_test.h"

static struct player P;

/* A registered buffer of the arena, in @pd. */
struct rbuf {
	uint8_t *buf;
	struct rpcr_rdev_mr *mr;
};

static int
rbuf_get(struct rbuf *b, struct rpcr_rdev_pd *pd, size_t len)
{
	b->buf = rpcr_mem_arena_alloc(P.arena, len, 4096);
	if (b->buf == NULL)
		return -ENOMEM;
	memset(b->buf, 0x11, len);
	b->mr = rpcr_rdev_mr_reg(pd, b->buf, len, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	return b->mr != NULL ? 0 : -rte_errno;
}

static void
rbuf_put(struct rbuf *b)
{
	if (b->mr != NULL)
		rpcr_rdev_mr_dereg(b->mr);
	rte_free(b->buf);
	memset(b, 0, sizeof(*b));
}

static int
post_recv1(struct rpcr_rdev_qp *qp, struct rbuf *b, uint32_t off, uint64_t id)
{
	struct rpcr_rdev_sge s = {(uintptr_t)(b->buf + off), 256, b->mr->lkey};
	struct rpcr_rdev_recv_wr w = {.wr_id = id, .sg_list = &s, .num_sge = 1};

	return rpcr_rdev_post_recv(qp, &w, 1) == 1 ? 0 : -1;
}

static int
post_send1(struct rpcr_rdev_qp *qp, struct rbuf *b, uint64_t id)
{
	struct rpcr_rdev_sge s = {(uintptr_t)b->buf, 64, b->mr->lkey};
	struct rpcr_rdev_send_wr w = {
		.wr_id = id, .sg_list = &s, .num_sge = 1, .flags = RPCR_RDEV_WR_F_SIGNALED};

	return rpcr_rdev_post_send(qp, &w, 1) == 1 ? 0 : -1;
}

/* The client's faulty device, as a second player (same arena and control channel). */
static int
fault_open(struct player *F, const char *devargs)
{
	*F = P;
	F->dev = rpcr_rdev_open(devargs);
	if (F->dev == NULL)
		return -rte_errno;
	F->pd = rpcr_rdev_pd_alloc(F->dev);
	F->cq = rpcr_rdev_cq_create(F->dev, 256);
	return F->pd != NULL && F->cq != NULL ? 0 : -ENOMEM;
}

static void
fault_close(struct player *F)
{
	if (F->cq != NULL)
		rpcr_rdev_cq_destroy(F->cq);
	if (F->pd != NULL)
		rpcr_rdev_pd_free(F->pd);
	CHECK_EQ(rpcr_rdev_close(F->dev), 0);
}

static struct rpcr_rdev_stats
stats(const struct player *F)
{
	struct rpcr_rdev_stats st;

	memset(&st, 0, sizeof(st));
	rpcr_rdev_stats_get(F->dev, &st);
	return st;
}

struct recvs {
	struct rbuf *b;
	uint32_t n;
};

static void
before_accept(struct rpcr_rdev_qp *qp, void *arg)
{
	const struct recvs *r = arg;
	uint32_t i;

	for (i = 0; i < r->n; i++)
		CHECK_EQ(post_recv1(qp, r->b, i * 256, 1000 + i), 0);
}

/* Server side of most cases: accept with @nrecv receives posted, wait for the client, close. */
static void
server_plain(uint32_t nrecv, uint32_t sync)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 16, 16);
	struct rpcr_rdev_qp *qp;
	struct rbuf b = {0};
	struct recvs r = {&b, nrecv};

	CHECK_EQ(rbuf_get(&b, P.pd, 16 * 256), 0);
	qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_accept, &r);
	CHECK(qp != NULL);
	ctl_sync(&P, sync);
	ctl_sync(&P, sync + 1);
	qp_close(&P, qp);
	rbuf_put(&b);
}

/* ---- cases ---- */

static void
case_disconnect(void)
{
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct rbuf b = {0};
	struct player F;

	if (P.server) {
		at = qp_attr(&P, 16, 16);
		CHECK_EQ(rbuf_get(&b, P.pd, 4096), 0);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		if (qp != NULL)
			CHECK_EQ(post_recv1(qp, &b, 0, 1000), 0);
		ctl_sync(&P, 1);
		/* Expect: the connection lost as if the client had disconnected, our receive
		 * flushed, nothing received. */
		CHECK_EQ(wait_event(&P, &ev, 3000), RPCR_RDEV_EVENT_DISCONNECTED);
		CHECK(ev.qp == qp);
		CHECK_EQ(poll_n(&P, wc, 1, 2000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[0].wr_id, 1000);
		ctl_sync(&P, 2);
		qp_close(&P, qp);
		rbuf_put(&b);
		return;
	}
	CHECK_EQ(fault_open(&F, "shm:fault_seed=1,fault_disconnect=1"), 0);
	at = qp_attr(&F, 16, 16);
	CHECK_EQ(rbuf_get(&b, F.pd, 4096), 0);
	qp = cli_connect(&F, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	ctl_sync(&P, 1);
	/* Nothing injected until something is posted to the send queue. */
	CHECK_EQ(stats(&F).fault_disconnects, 0);
	if (qp != NULL) {
		uint64_t t0 = rte_rdtsc();

		CHECK_EQ(post_send1(qp, &b, 7), 0);
		/* Expect: the Send itself flushes; DISCONNECTED; counted, with its TSC. */
		CHECK_EQ(poll_n(&F, wc, 1, 2000), 1);
		CHECK_EQ(wc[0].wr_id, 7);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wait_event(&F, &ev, 3000), RPCR_RDEV_EVENT_DISCONNECTED);
		CHECK(ev.qp == qp);
		CHECK_EQ(stats(&F).fault_disconnects, 1);
		CHECK(stats(&F).fault_last_tsc >= t0 && stats(&F).fault_last_tsc <= rte_rdtsc());
		CHECK(stats(&F).disconnects >= 1);
		/* The QP stays in error: more work flushes, and injects nothing more. */
		CHECK_EQ(post_send1(qp, &b, 8), 0);
		CHECK_EQ(poll_n(&F, wc, 1, 2000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(stats(&F).fault_disconnects, 1);
	}
	ctl_sync(&P, 2);
	qp_close(&F, qp);
	rbuf_put(&b);
	fault_close(&F);
}

static void
case_reg(void)
{
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_qp *qp;
	struct rpcr_rdev_mr *mr;
	struct rbuf b = {0};
	struct player F;

	if (P.server) {
		server_plain(0, 1);
		return;
	}
	CHECK_EQ(fault_open(&F, "shm:fault_seed=2,fault_reg=1"), 0);
	/* Set-up is never failed: registrations before the first connection work. */
	CHECK_EQ(rbuf_get(&b, F.pd, 4096), 0);
	at = qp_attr(&F, 16, 16);
	qp = cli_connect(&F, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	ctl_sync(&P, 1);
	/* Expect: every registration now fails as a NIC out of resources does. */
	rte_errno = 0;
	mr = rpcr_rdev_mr_reg(F.pd, b.buf, 4096, RPCR_RDEV_ACCESS_REMOTE_READ);
	CHECK(mr == NULL);
	CHECK_EQ(rte_errno, ENOMEM);
	if (mr != NULL)
		rpcr_rdev_mr_dereg(mr);
	CHECK_EQ(stats(&F).fault_reg, 1);
	CHECK_EQ(stats(&F).fault_disconnects, 0);
	ctl_sync(&P, 2);
	qp_close(&F, qp);
	rbuf_put(&b);
	fault_close(&F);
}

static void
case_recv(void)
{
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct rbuf b = {0};
	struct player F;

	if (P.server) {
		at = qp_attr(&P, 16, 16);
		CHECK_EQ(rbuf_get(&b, P.pd, 4096), 0);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1); /* the client posted its receive */
		/* Expect: receiver not ready, as from an RC peer with no receive posted. */
		if (qp != NULL) {
			CHECK_EQ(post_send1(qp, &b, 9), 0);
			CHECK_EQ(poll_n(&P, wc, 1, 2000), 1);
			CHECK_EQ(wc[0].status, RPCR_RDEV_WC_RNR_RETRY_EXC_ERR);
			CHECK_EQ(qp->stats.rnr_errors, 1);
		}
		ctl_sync(&P, 2);
		ctl_sync(&P, 3);
		qp_close(&P, qp);
		rbuf_put(&b);
		return;
	}
	CHECK_EQ(fault_open(&F, "shm:fault_seed=3,fault_recv=1"), 0);
	at = qp_attr(&F, 16, 16);
	CHECK_EQ(rbuf_get(&b, F.pd, 4096), 0);
	qp = cli_connect(&F, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	if (qp != NULL)
		CHECK_EQ(post_recv1(qp, &b, 0, 2000), 0);
	CHECK_EQ(stats(&F).fault_recv, 1);
	ctl_sync(&P, 1);
	ctl_sync(&P, 2);
	/* Expect: the withheld receive completes once, flushed, with the failed connection. */
	CHECK_EQ(poll_n(&F, wc, 2, 1000), 1);
	CHECK_EQ(wc[0].wr_id, 2000);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
	ctl_sync(&P, 3);
	qp_close(&F, qp);
	rbuf_put(&b);
	fault_close(&F);
}

static void
case_delay(void)
{
	enum { DELAY_MS = 50 };
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct rbuf b = {0};
	struct player F;
	uint64_t t0;

	if (P.server) {
		at = qp_attr(&P, 16, 16);
		CHECK_EQ(rbuf_get(&b, P.pd, 4096), 0);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		if (qp != NULL)
			CHECK_EQ(post_recv1(qp, &b, 0, 1000), 0);
		ctl_sync(&P, 1);
		ctl_sync(&P, 2); /* the client's Send arrived */
		CHECK_EQ(poll_n(&P, wc, 1, 1000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
		ctl_sync(&P, 3);
		if (qp != NULL)
			CHECK_EQ(post_send1(qp, &b, 11), 0);
		CHECK_EQ(poll_n(&P, wc, 1, 1000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
		ctl_sync(&P, 4);
		qp_close(&P, qp);
		rbuf_put(&b);
		return;
	}
	CHECK_EQ(fault_open(&F, "shm:fault_seed=4,fault_delay_us=50000"), 0);
	at = qp_attr(&F, 16, 16);
	CHECK_EQ(rbuf_get(&b, F.pd, 4096), 0);
	qp = cli_connect(&F, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	if (qp != NULL)
		CHECK_EQ(post_recv1(qp, &b, 256, 2000), 0);
	ctl_sync(&P, 1);
	/* Expect: the Send is done at once (the server has it), its completion 50 ms later. */
	t0 = now_ns();
	if (qp != NULL)
		CHECK_EQ(post_send1(qp, &b, 10), 0);
	ctl_sync(&P, 2);
	CHECK_EQ(poll_n(&F, wc, 1, 10), 0);
	CHECK_EQ(poll_n(&F, wc, 1, 2000), 1);
	CHECK_EQ(wc[0].wr_id, 10);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK(now_ns() - t0 >= DELAY_MS * 1000000ull);
	/* Expect: the server's Send is seen 50 ms after it landed. */
	t0 = now_ns();
	ctl_sync(&P, 3);
	CHECK_EQ(poll_n(&F, wc, 1, 2000), 1);
	CHECK_EQ(wc[0].wr_id, 2000);
	CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	CHECK(now_ns() - t0 >= DELAY_MS * 1000000ull);
	CHECK_EQ(stats(&F).fault_delayed, 2);
	ctl_sync(&P, 4);
	qp_close(&F, qp);
	rbuf_put(&b);
	fault_close(&F);
}

/* The first of up to @n Sends that a fault breaks the connection at (0-based), or -1. */
static int
first_break(const char *devargs, uint32_t n)
{
	struct rpcr_rdev_qp_attr at;
	struct rpcr_rdev_wc wc;
	struct rpcr_rdev_qp *qp;
	struct rbuf b = {0};
	struct player F;
	int at_wr = -1;
	uint32_t i;

	CHECK_EQ(fault_open(&F, devargs), 0);
	at = qp_attr(&F, 16, 16);
	CHECK_EQ(rbuf_get(&b, F.pd, 4096), 0);
	qp = cli_connect(&F, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	for (i = 0; qp != NULL && i < n; i++) {
		CHECK_EQ(post_send1(qp, &b, i), 0);
		CHECK_EQ(poll_n(&F, &wc, 1, 2000), 1);
		if (wc.status != RPCR_RDEV_WC_SUCCESS) {
			CHECK_EQ(wc.status, RPCR_RDEV_WC_WR_FLUSH_ERR);
			at_wr = (int)i;
			break;
		}
	}
	ctl_sync(&P, 1);
	qp_close(&F, qp);
	rbuf_put(&b);
	fault_close(&F);
	return at_wr;
}

static void
case_seed(void)
{
	int a, b;

	if (P.server) {
		server_plain(16, 1);
		server_plain(16, 1);
		return;
	}
	/* Expect: one in four Sends breaks the connection; the same seed, the same Send. */
	a = first_break("shm:fault_seed=42,fault_disconnect=0.25", 16);
	ctl_sync(&P, 2);
	b = first_break("shm:fault_seed=42,fault_disconnect=0.25", 16);
	ctl_sync(&P, 2);
	CHECK(a >= 0);
	CHECK_EQ(a, b);
}

static void
case_devargs(void)
{
	static const char *const bad[] = {
		"shm:fault_disconnect=2", "shm:fault_disconnect=-0.1",  "shm:fault_reg=x",
		"shm:fault_recv=0.5x",    "shm:fault_delay_us=1000001", "shm:fault_delay_us=-1",
		"shm:fault_seed=",        "shm:fault_seed=12ab",        "shm:fault_nonsense=1",
	};
	struct rpcr_rdev_stats st;
	uint32_t i;

	if (P.server)
		return;
	for (i = 0; i < RTE_DIM(bad); i++) {
		struct rpcr_rdev *d = rpcr_rdev_open(bad[i]);

		if (d != NULL) {
			fprintf(stderr, "%s: accepted\n", bad[i]);
			rpcr_rdev_close(d);
		}
		CHECK(d == NULL);
	}
	/* Expect: probability 0 everywhere is no fault at all. */
	{
		struct rpcr_rdev *d = rpcr_rdev_open(
			"shm:fault_seed=9,fault_disconnect=0,fault_reg=0.0,fault_recv=0,"
			"fault_delay_us=0");

		CHECK(d != NULL);
		if (d != NULL) {
			CHECK_EQ(rpcr_rdev_stats_get(d, &st), 0);
			CHECK_EQ(st.fault_disconnects + st.fault_reg + st.fault_recv +
					 st.fault_delayed + st.fault_last_tsc,
				 0);
			CHECK_EQ(rpcr_rdev_close(d), 0);
		}
	}
	/* The harness's plain device went through every case of a run: it counted nothing. */
	CHECK_EQ(rpcr_rdev_stats_get(P.dev, &st), 0);
	CHECK_EQ(st.fault_disconnects + st.fault_reg + st.fault_recv + st.fault_delayed, 0);
}

struct fcase {
	const char *name;
	void (*fn)(void);
};

static const struct fcase cases[] = {
	{"disconnect", case_disconnect}, {"reg", case_reg},   {"recv", case_recv},
	{"delay", case_delay},           {"seed", case_seed}, {"devargs", case_devargs},
};

int
main(int argc, char **argv)
{
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 16u << 20,
		.cq_depth = 256,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
	};
	unsigned long failed_cases = 0, run = 0;
	bool selected[RTE_DIM(cases)];
	int status, a;
	size_t i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		selected[i] = argc == 1;
		for (a = 1; a < argc; a++)
			selected[i] |= strcmp(argv[a], cases[i].name) == 0;
	}
	alarm(120);
	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;
	for (i = 0; i < RTE_DIM(cases); i++) {
		unsigned long before = rpcr_test_failed;
		struct ctl_msg m;
		uint64_t mine;

		if (!selected[i])
			continue;
		ctl_sync(&P, 0x1000 + (uint32_t)i);
		cases[i].fn();
		mine = rpcr_test_failed - before;
		if (P.server) {
			ctl_send(&P, 0x2000 + (uint32_t)i, 1, &mine);
			continue;
		}
		ctl_recv(&P, 0x2000 + (uint32_t)i, &m);
		run++;
		if (mine + m.v[0] != 0) {
			failed_cases++;
			printf("FAIL %s (client %lu, server %lu failed checks)\n", cases[i].name,
			       (unsigned long)mine, (unsigned long)m.v[0]);
		} else {
			printf("ok   %s\n", cases[i].name);
		}
		fflush(stdout);
	}
	status = harness_finish(&P);
	if (P.server)
		return rpcr_test_failed != 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("server exited badly (status 0x%x)\n", status);
		failed_cases++;
	}
	printf("shm faults: %lu case(s) run, %lu failed\n", run, failed_cases);
	return failed_cases != 0;
}
