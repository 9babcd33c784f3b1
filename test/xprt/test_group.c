/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A server of several pollers (rpcr_svc_join(), lib/xprt/svc_group.c), over shm: a lead on one
 * poller, a member on another, their clients on a third, each poller on its own worker lcore
 * (adaptive: four threads share two CPUs), and calls from four threads at once.
 *
 *   1. the API's refusals: joining twice, on the lead's poller, through a member; registering a
 *      program once members joined; destroying a lead with members;
 *   2. round-robin: 8 connections, 4 on each poller (each client's calls counted where they
 *      arrive), NULL, ECHO and WRITE calls (read chunks into the member's bulk buffers) all
 *      answered right, from four threads;
 *   3. placement by the application: 4 more connections all on the member; one placed on a
 *      poller that serves no member is refused; one beyond max_conns (12, for the group) is
 *      refused;
 *   4. the member destroyed with its 8 connections: their clients reconnect to the lead, which
 *      then has all 12, and their calls go on.
 *
 * usage: test_group   (runs with --lcores 0@0,1@1,2@0,3@1)
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <rpcr_mem.h>
#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "rpcr_test.h"

#define NCLNT    13 /* 8 round-robin, 4 placed, 1 too many */
#define MAX_CONN 12
#define NTHREADS 4

static struct rpcr_xprt_poller *want; /* what place() answers */
static uint32_t placed;

static struct rpcr_xprt_poller *
place(const struct sockaddr *peer, void *arg)
{
	RTE_SET_USED(peer);
	RTE_SET_USED(arg);
	__atomic_fetch_add(&placed, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&want, __ATOMIC_ACQUIRE);
}

static int
call_null(struct rpcr_clnt *cl)
{
	struct rpcr_call call = {.proc = RPCR_TESTPROG_NULL};

	return rpcr_clnt_call_sync(cl, &call);
}

/* ECHO's results compared with what was sent (inside the completion, while the view lives). */
struct echo_res {
	const uint8_t *expect;
	uint32_t len;
	int cmp;
};

static int
dec_echo(struct rpcr_msg *m, void *res)
{
	struct echo_res *r = res;
	struct rpcr_bulk b;
	int rc = rpcr_msg_get_bulk(m, r->len, &b);

	if (rc == 0)
		r->cmp = rpcr_bulk_cmp(&b, r->expect, r->len);
	return rc;
}

static int
dec_u32(struct rpcr_msg *m, void *res)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), res);
}

/* ECHO of @len bytes (seeded), results compared; or WRITE of them (read chunks), the count
 * checked. The data in bulk buffers of the client's poller @p. */
static int
call_data(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl, uint32_t proc, uint32_t len,
	  uint32_t seed)
{
	struct rte_mbuf *a = rpcr_bulk_alloc(p, len), *r = rpcr_bulk_alloc(p, len), *s;
	uint8_t *expect = malloc(len);
	struct echo_res out = {.expect = expect, .len = len, .cmp = -2};
	struct rpcr_bulk arg = {a, 0, len}, dst = {r, 0, len};
	struct rpcr_call call = {.proc = proc, .encode = rpcr_testprog_enc_data, .args = &arg};
	uint32_t i, off, n = 0;
	int rc = -ENOMEM;

	if (a == NULL || r == NULL || expect == NULL)
		goto out;
	for (i = 0; i < len; i++)
		expect[i] = (uint8_t)(i * 7 + seed);
	for (i = 0, s = a; s != NULL; s = s->next)
		for (off = 0; off < s->data_len; off++, i++)
			rte_pktmbuf_mtod(s, uint8_t *)[off] = expect[i];
	if (proc == RPCR_TESTPROG_ECHO) {
		call.decode = dec_echo;
		call.res = &out;
		call.res_bulk = &dst;
		call.nres_bulk = 1;
	} else {
		call.decode = dec_u32;
		call.res = &n;
	}
	rc = rpcr_clnt_call_sync(cl, &call);
	if (rc == 0 && proc == RPCR_TESTPROG_ECHO && out.cmp != 0)
		rc = -EBADMSG;
	if (rc == 0 && proc == RPCR_TESTPROG_WRITE && n != len)
		rc = -EBADMSG;
out:
	free(expect);
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(r);
	return rc;
}

struct worker {
	pthread_t t;
	struct rpcr_xprt_poller *p;
	struct rpcr_clnt **cl;
	uint32_t ncl;
	uint32_t rounds;
	uint32_t calls, failed;
};

/* Each round: on each of its clients a NULL, an ECHO of 200 bytes, and every 8th round a WRITE
 * of 100 KB (read chunks). */
static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	uint32_t r, i;

	for (r = 0; r < w->rounds; r++) {
		for (i = 0; i < w->ncl; i++) {
			w->failed += call_null(w->cl[i]) != 0;
			w->failed += call_data(w->p, w->cl[i], RPCR_TESTPROG_ECHO, 200, r + i) != 0;
			w->calls += 2;
			if (r % 8 == 0) {
				w->failed += call_data(w->p, w->cl[i], RPCR_TESTPROG_WRITE, 100000,
						       r) != 0;
				w->calls++;
			}
		}
	}
	return NULL;
}

/* @n clients (of poller @p) from @cl, spread over NTHREADS threads, @rounds rounds: calls made. */
static uint32_t
run_calls(struct rpcr_xprt_poller *p, struct rpcr_clnt **cl, uint32_t n, uint32_t rounds)
{
	struct worker w[NTHREADS];
	uint32_t i, per = (n + NTHREADS - 1) / NTHREADS, calls = 0, failed = 0;

	memset(w, 0, sizeof(w));
	for (i = 0; i < NTHREADS && i * per < n; i++) {
		w[i].p = p;
		w[i].cl = cl + i * per;
		w[i].ncl = RTE_MIN(per, n - i * per);
		w[i].rounds = rounds;
		CHECK_EQ(pthread_create(&w[i].t, NULL, worker_run, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS && i * per < n; i++) {
		pthread_join(w[i].t, NULL);
		calls += w[i].calls;
		failed += w[i].failed;
	}
	CHECK_EQ(failed, 0);
	return calls;
}

static uint64_t
calls_recv(const struct rpcr_xprt_poller *p)
{
	struct rpcr_xprt_stats st;

	rpcr_xprt_stats_get(p, &st);
	return st.calls_recv;
}

static uint64_t
refused(const struct rpcr_xprt_poller *p)
{
	struct rpcr_xprt_stats st;

	rpcr_xprt_stats_get(p, &st);
	return st.conns_refused;
}

static struct rpcr_clnt *
clnt(struct rpcr_xprt_poller *pcl, const char *addr)
{
	struct rpcr_clnt *cl = rpcr_clnt_create(pcl, &(struct rpcr_clnt_conf){
							     .addr = addr,
							     .prog = RPCR_TESTPROG,
							     .vers = RPCR_TESTPROG_VERS,
							     .ulb = rpcr_testprog_ulb,
							     .nulb = 4,
							     .timeout_us = 5000000,
						     });

	CHECK(cl != NULL);
	return cl;
}

/* Wait until @cl is connected (or 5 s). */
static bool
connected(struct rpcr_clnt *cl)
{
	uint32_t i;

	for (i = 0; i < 5000 && !rpcr_clnt_connected(cl); i++)
		usleep(1000);
	return rpcr_clnt_connected(cl);
}

int
main(void)
{
	static char a0[] = "test_group", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--lcores",
		    a4[] = "0@0,1@1,2@0,3@1", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error", a9[] = "-m",
		    a10[] = "1024";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, NULL};
	struct rpcr_xprt_poller_conf pc = {.bufs = 4096,
					   .bulk_bufs = 256,
					   .poll_mode = RPCR_XPRT_POLL_ADAPTIVE,
					   .idle_us = 100,
					   .sleep_max_ms = 100};
	struct rpcr_rdev *d0, *d1, *dc;
	struct rpcr_xprt_poller *ps0 = NULL, *ps1 = NULL, *pcl = NULL;
	struct rpcr_clnt *cl[NCLNT] = {NULL};
	struct rpcr_svc *s = NULL, *m = NULL;
	uint64_t c0, c1, r0;
	unsigned int l0, l1, lc;
	uint32_t i, calls;
	char addr[64];

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 || rte_lcore_count() < 4) {
		fprintf(stderr, "test_group: EAL with four lcores\n");
		return 1;
	}
	l0 = rte_get_next_lcore(-1, 1, 0);
	l1 = rte_get_next_lcore(l0, 1, 0);
	lc = rte_get_next_lcore(l1, 1, 0);
	d0 = rpcr_rdev_open("shm");
	d1 = rpcr_rdev_open("shm");
	dc = rpcr_rdev_open("shm");
	CHECK(d0 != NULL && d1 != NULL && dc != NULL);
	pc.name = "lead";
	pc.dev = d0;
	ps0 = d0 != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	pc.name = "member";
	pc.dev = d1;
	ps1 = d1 != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	pc.name = "cli";
	pc.dev = dc;
	pcl = dc != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	CHECK(ps0 != NULL && ps1 != NULL && pcl != NULL);
	if (ps0 == NULL || ps1 == NULL || pcl == NULL)
		goto out;
	snprintf(addr, sizeof(addr), "group-%d", (int)getpid());
	s = rpcr_svc_create(
		ps0, &(struct rpcr_svc_conf){.addr = addr,
					     .max_conns = MAX_CONN,
					     .place = place,
					     .no_draft = true /* (no CONF_RDMA calls to count) */});
	CHECK(s != NULL);
	if (s == NULL || rpcr_testprog_register(s, 0) != 0)
		goto out;

	/* 1. What joining refuses. */
	m = rpcr_svc_join(s, ps1);
	CHECK(m != NULL);
	if (m == NULL)
		goto out;
	CHECK(rpcr_svc_join(s, ps1) == NULL && rte_errno == EINVAL); /* twice */
	CHECK(rpcr_svc_join(s, ps0) == NULL && rte_errno == EINVAL); /* the lead's own */
	CHECK(rpcr_svc_join(m, pcl) == NULL && rte_errno == EINVAL); /* a member leads nothing */
	CHECK_EQ(rpcr_svc_register(s, &(struct rpcr_svc_prog){.prog = 7, .vers = 1}), -EBUSY);
	CHECK_EQ(rpcr_svc_register(m, &(struct rpcr_svc_prog){.prog = 7, .vers = 1}), -EBUSY);
	CHECK_EQ(rpcr_svc_destroy(s), -EBUSY); /* a member left */

	/* 2. Round-robin: 8 connections, made one after the other. */
	CHECK_EQ(rpcr_xprt_poller_launch(ps0, l0), 0);
	CHECK_EQ(rpcr_xprt_poller_launch(ps1, l1), 0);
	CHECK_EQ(rpcr_xprt_poller_launch(pcl, lc), 0);
	for (i = 0; i < 8; i++) {
		cl[i] = clnt(pcl, addr);
		CHECK(cl[i] != NULL && connected(cl[i]));
	}
	if (rpcr_test_failed != 0)
		goto stop;
	/* Each client's first call, one at a time: the even ones on the lead, the odd ones on
	 * the member. */
	for (i = 0; i < 8; i++) {
		c0 = calls_recv(ps0);
		c1 = calls_recv(ps1);
		CHECK_EQ(call_null(cl[i]), 0);
		CHECK_EQ(calls_recv(ps0) - c0, i % 2 == 0 ? 1 : 0);
		CHECK_EQ(calls_recv(ps1) - c1, i % 2 == 1 ? 1 : 0);
	}
	c0 = calls_recv(ps0);
	c1 = calls_recv(ps1);
	calls = run_calls(pcl, cl, 8, 64);
	printf("group: round-robin: %u calls from %u threads on 8 connections: lead %" PRIu64
	       ", member %" PRIu64 "\n",
	       calls, NTHREADS, calls_recv(ps0) - c0, calls_recv(ps1) - c1);
	CHECK_EQ(calls_recv(ps0) - c0, calls / 2);
	CHECK_EQ(calls_recv(ps1) - c1, calls / 2);

	/* 3. Placed by the application: 4 on the member. */
	__atomic_store_n(&want, ps1, __ATOMIC_RELEASE);
	for (i = 8; i < 12; i++) {
		cl[i] = clnt(pcl, addr);
		CHECK(cl[i] != NULL && connected(cl[i]));
	}
	c0 = calls_recv(ps0);
	c1 = calls_recv(ps1);
	calls = run_calls(pcl, cl + 8, 4, 16);
	CHECK_EQ(calls_recv(ps0) - c0, 0);
	CHECK_EQ(calls_recv(ps1) - c1, calls);
	/* A poller that serves no member of the server: refused. */
	__atomic_store_n(&want, pcl, __ATOMIC_RELEASE);
	r0 = refused(ps0);
	cl[12] = clnt(pcl, addr);
	for (i = 0; i < 5000 && refused(ps0) == r0; i++)
		usleep(1000);
	CHECK_EQ(refused(ps0) - r0, 1);
	CHECK(cl[12] == NULL || !rpcr_clnt_connected(cl[12]));
	/* The thirteenth connection of the group (placement not asked: max_conns first). */
	__atomic_store_n(&want, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&placed, 0, __ATOMIC_RELAXED);
	for (i = 0; i < 5000 && refused(ps0) == r0 + 1; i++)
		usleep(1000);
	CHECK(refused(ps0) > r0 + 1); /* (its client tries again: refused each time) */
	CHECK_EQ(__atomic_load_n(&placed, __ATOMIC_RELAXED), 0);
	if (cl[12] != NULL)
		CHECK(!rpcr_clnt_connected(cl[12]));

stop:
	/* 4. The member goes (its poller stopped, destroyed from here): its 8 connections' clients
	 * reconnect to the lead. */
	rpcr_xprt_poller_stop(ps1);
	rpcr_xprt_poller_stop(pcl);
	CHECK_EQ(rte_eal_wait_lcore(l1), 0);
	CHECK_EQ(rte_eal_wait_lcore(lc), 0);
	if (cl[12] != NULL) /* (first: it would take a place the others come back for) */
		CHECK_EQ(rpcr_clnt_destroy(cl[12]), 0);
	cl[12] = NULL;
	if (m != NULL)
		CHECK_EQ(rpcr_svc_destroy(m), 0);
	m = NULL;
	CHECK_EQ(rpcr_xprt_poller_launch(ps1, l1), 0);
	CHECK_EQ(rpcr_xprt_poller_launch(pcl, lc), 0);
	if (rpcr_test_failed == 0) {
		for (i = 0; i < 12; i++)
			CHECK(connected(cl[i]));
		c0 = calls_recv(ps0);
		c1 = calls_recv(ps1);
		calls = run_calls(pcl, cl, 12, 8);
		printf("group: after the member went: %u calls on 12 connections: lead %" PRIu64
		       ", member's poller %" PRIu64 "\n",
		       calls, calls_recv(ps0) - c0, calls_recv(ps1) - c1);
		CHECK_EQ(calls_recv(ps0) - c0, calls);
		CHECK_EQ(calls_recv(ps1) - c1, 0);
	}
	rpcr_xprt_poller_stop(ps0);
	rpcr_xprt_poller_stop(ps1);
	rpcr_xprt_poller_stop(pcl);
	rte_eal_wait_lcore(l0);
	rte_eal_wait_lcore(l1);
	rte_eal_wait_lcore(lc);
out:
	for (i = 0; i < NCLNT; i++)
		if (cl[i] != NULL)
			CHECK_EQ(rpcr_clnt_destroy(cl[i]), 0);
	if (m != NULL)
		CHECK_EQ(rpcr_svc_destroy(m), 0);
	if (s != NULL)
		CHECK_EQ(rpcr_svc_destroy(s), 0);
	if (pcl != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(pcl), 0);
	if (ps1 != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(ps1), 0);
	if (ps0 != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(ps0), 0);
	if (dc != NULL)
		CHECK_EQ(rpcr_rdev_close(dc), 0);
	if (d1 != NULL)
		CHECK_EQ(rpcr_rdev_close(d1), 0);
	if (d0 != NULL)
		CHECK_EQ(rpcr_rdev_close(d0), 0);
	rte_eal_cleanup();
	printf("group: %s\n", rpcr_test_failed == 0 ? "ok" : "FAILED");
	return rpcr_test_failed != 0;
}
