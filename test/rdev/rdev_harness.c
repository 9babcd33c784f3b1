/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_common.h>
#include <rte_lcore.h>

#include "rdev_harness.h"

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
eal_init(int lcore, bool quiet)
{
	/* rte_eal_init() wants writable strings: keep copies in arrays. */
	static char a0[] = "rpcr-test", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l";
	static char a5[] = "--no-shconf", a6[] = "--no-telemetry", a7[] = "--iova-mode=va";
	static char lerr[] = "--log-level=error", linfo[] = "--log-level=info";
	char lc[16];
	char *argv[] = {a0, a1, a2, a3, lc, a5, a6, a7, quiet ? lerr : linfo, NULL};

	snprintf(lc, sizeof(lc), "%d", lcore);
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 ? -rte_errno : 0;
}

int
harness_start(const struct harness_conf *conf, struct player *p)
{
	int sv[2], rc;
	pid_t pid;
	char name[32];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(p, 0, sizeof(*p));
	p->devargs = conf->devargs;
	if (conf->addr != NULL)
		snprintf(p->addr, sizeof(p->addr), "%s", conf->addr);
	else
		snprintf(p->addr, sizeof(p->addr), "rpcr-test-%d", (int)getpid());
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The server dies with the client rather than outlive a failed test. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p->server = true;
		p->ctl = sv[1];
		close(sv[0]);
		p->peer_pid = getppid();
	} else {
		p->ctl = sv[0];
		close(sv[1]);
		p->peer_pid = pid;
	}

	rc = eal_init((int)((p->server ? conf->server_lcore : conf->client_lcore) %
			    (ncpu > 0 ? ncpu : 1)),
		      conf->quiet);
	if (rc != 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", p->server ? "server" : "client",
			strerror(-rc));
		return rc;
	}
	/* Two devices (rxe_a, rxe_b) put a real wire between the players. */
	if (!p->server && conf->cdevargs != NULL)
		p->devargs = conf->cdevargs;
	p->dev = rpcr_rdev_open(p->devargs);
	if (p->dev == NULL) {
		fprintf(stderr, "open %s: %s\n", p->devargs, strerror(rte_errno));
		return -rte_errno;
	}
	p->pd = rpcr_rdev_pd_alloc(p->dev);
	snprintf(name, sizeof(name), "%s-%d", p->server ? "srv" : "cli", (int)getpid());
	p->arena = rpcr_mem_arena_create(name, conf->arena_bytes,
					 conf->no_huge ? RPCR_MEM_ARENA_F_NO_HUGE : 0);
	p->cq = rpcr_rdev_cq_create(p->dev, conf->cq_depth);
	if (p->pd == NULL || p->arena == NULL || p->cq == NULL) {
		fprintf(stderr, "set-up failed: %s\n", strerror(rte_errno));
		return -rte_errno;
	}
	if (p->server) {
		p->listener = rpcr_rdev_listen(p->dev, p->addr, 16);
		if (p->listener == NULL) {
			fprintf(stderr, "listen %s: %s\n", p->addr, strerror(rte_errno));
			return -rte_errno;
		}
		ctl_send(p, 0x5eed, 0, NULL);
	} else {
		struct ctl_msg m;

		ctl_recv(p, 0x5eed, &m);
	}
	return 0;
}

int
harness_finish(struct player *p)
{
	int status = 0;

	if (p->listener != NULL)
		rpcr_rdev_listener_close(p->listener);
	if (p->cq != NULL)
		rpcr_rdev_cq_destroy(p->cq);
	if (p->arena != NULL && rpcr_mem_arena_free(p->arena) != 0)
		fprintf(stderr, "%s: arena still has allocations\n",
			p->server ? "server" : "client");
	if (p->pd != NULL)
		rpcr_rdev_pd_free(p->pd);
	if (p->dev != NULL && rpcr_rdev_close(p->dev) != 0)
		fprintf(stderr, "%s: device still has objects\n", p->server ? "server" : "client");
	rte_eal_cleanup();
	if (!p->server) {
		close(p->ctl);
		if (waitpid(p->peer_pid, &status, 0) < 0)
			return -1;
	}
	return status;
}

void
ctl_send(const struct player *p, uint32_t tag, uint32_t n, const uint64_t *v)
{
	struct ctl_msg m = {.tag = tag, .n = n};

	if (n != 0)
		memcpy(m.v, v, n * sizeof(v[0]));
	if (send(p->ctl, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		fprintf(stderr, "%s: control channel broken\n", p->server ? "server" : "client");
		_exit(3);
	}
}

void
ctl_recv(const struct player *p, uint32_t tag, struct ctl_msg *m)
{
	struct pollfd pfd = {.fd = p->ctl, .events = POLLIN};

	if (poll(&pfd, 1, 60000) != 1 || recv(p->ctl, m, sizeof(*m), 0) != (ssize_t)sizeof(*m)) {
		fprintf(stderr, "%s: no word from the other player (waiting for 0x%x)\n",
			p->server ? "server" : "client", tag);
		_exit(3);
	}
	if (m->tag != tag) {
		fprintf(stderr, "%s: out of step: got 0x%x, expected 0x%x\n",
			p->server ? "server" : "client", m->tag, tag);
		_exit(3);
	}
}

void
ctl_sync(const struct player *p, uint32_t tag)
{
	struct ctl_msg m;

	ctl_send(p, tag, 0, NULL);
	ctl_recv(p, tag, &m);
}

int
wait_event(const struct player *p, struct rpcr_rdev_event *ev, int ms)
{
	return rpcr_rdev_event_wait(p->dev, ev, ms) == 1 ? (int)ev->type : -1;
}

struct rpcr_rdev_qp_attr
qp_attr(const struct player *p, uint32_t send_wr, uint32_t recv_wr)
{
	return (struct rpcr_rdev_qp_attr){
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.max_send_wr = send_wr,
		.max_recv_wr = recv_wr,
		.max_send_sge = 4,
		.max_recv_sge = 4,
	};
}

struct rpcr_rdev_qp *
srv_accept(struct player *p, const struct rpcr_rdev_qp_attr *attr, const void *pdata, uint8_t len,
	   uint8_t *peer_pdata, uint8_t *peer_len, void (*before)(struct rpcr_rdev_qp *, void *),
	   void *arg)
{
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_qp *qp;
	int rc;

	if (wait_event(p, &ev, 5000) != RPCR_RDEV_EVENT_CONNECT_REQUEST) {
		fprintf(stderr, "server: no connection request\n");
		return NULL;
	}
	if (peer_pdata != NULL) {
		memcpy(peer_pdata, ev.pdata, ev.pdata_len);
		*peer_len = ev.pdata_len;
	}
	qp = rpcr_rdev_qp_create(p->pd, attr);
	if (qp == NULL) {
		fprintf(stderr, "server: QP: %s\n", strerror(rte_errno));
		rpcr_rdev_reject(ev.req, NULL, 0);
		return NULL;
	}
	if (before != NULL)
		before(qp, arg);
	rc = rpcr_rdev_accept(qp, ev.req, pdata, len);
	if (rc != 0) {
		fprintf(stderr, "server: accept: %s\n", strerror(-rc));
		rpcr_rdev_qp_destroy(qp);
		return NULL;
	}
	if (wait_event(p, &ev, 5000) != RPCR_RDEV_EVENT_ESTABLISHED || ev.qp != qp) {
		fprintf(stderr, "server: not established\n");
		rpcr_rdev_qp_destroy(qp);
		return NULL;
	}
	return qp;
}

struct rpcr_rdev_qp *
cli_connect(struct player *p, const struct rpcr_rdev_qp_attr *attr, const void *pdata, uint8_t len,
	    uint8_t *peer_pdata, uint8_t *peer_len, void (*before)(struct rpcr_rdev_qp *, void *),
	    void *arg)
{
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_qp *qp;
	int rc;

	qp = rpcr_rdev_qp_create(p->pd, attr);
	if (qp == NULL) {
		fprintf(stderr, "client: QP: %s\n", strerror(rte_errno));
		return NULL;
	}
	if (before != NULL)
		before(qp, arg);
	rc = rpcr_rdev_connect(qp, p->addr, pdata, len);
	if (rc != 0) {
		fprintf(stderr, "client: connect: %s\n", strerror(-rc));
		rpcr_rdev_qp_destroy(qp);
		return NULL;
	}
	if (wait_event(p, &ev, 5000) != RPCR_RDEV_EVENT_ESTABLISHED || ev.qp != qp) {
		fprintf(stderr, "client: not established (%s)\n", rpcr_rdev_event_str(ev.type));
		rpcr_rdev_qp_destroy(qp);
		return NULL;
	}
	if (peer_pdata != NULL) {
		memcpy(peer_pdata, ev.pdata, ev.pdata_len);
		*peer_len = ev.pdata_len;
	}
	return qp;
}

int
poll_n(const struct player *p, struct rpcr_rdev_wc *wc, int n, int ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;
	int got = 0;

	while (got < n) {
		got += rpcr_rdev_poll_cq(p->cq, wc + got, (uint16_t)(n - got));
		if (got < n && now_ns() > deadline)
			break;
	}
	return got;
}

void
qp_close(struct player *p, struct rpcr_rdev_qp *qp)
{
	struct rpcr_rdev_wc wc[64];

	if (qp == NULL)
		return;
	rpcr_rdev_disconnect(qp);
	/* Flushes of this QP; other QPs' completions would be lost, so tests close one at a time. */
	while (rpcr_rdev_poll_cq(p->cq, wc, 64) != 0)
		;
	rpcr_rdev_qp_destroy(qp);
}
