/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RDEV_HARNESS_H
#define RDEV_HARNESS_H

/*
 * Two "players" for device tests and benchmarks, written against lib/rdev only: the program forks
 * (before any EAL exists), each side initialises its own EAL on its own core, opens the device
 * under test, makes an arena, a protection domain and a completion queue, and the two coordinate
 * over a socketpair that is not part of what is tested.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rpcr_mem.h>
#include <rpcr_rdev.h>

struct player {
	bool server;
	int ctl; /* socketpair end to the other player */
	pid_t peer_pid;
	const char *devargs;
	char addr[108]; /* where the server listens */
	struct rpcr_rdev *dev;
	struct rpcr_rdev_pd *pd;
	struct rpcr_rdev_cq *cq;
	struct rpcr_mem_arena *arena;
	struct rpcr_rdev_listener *listener;
};

/* A control message between players. */
struct ctl_msg {
	uint32_t tag;
	uint32_t n;
	uint64_t v[10];
};

struct harness_conf {
	const char *devargs;  /* device under test ("shm") */
	const char *cdevargs; /* the client's, if not the same ("ibverbs:dev=rxe_b") */
	const char *addr;     /* listen address; NULL: a name made from the pid */
	size_t arena_bytes;   /* per player */
	uint32_t cq_depth;    /* per player */
	int server_lcore;     /* EAL lcores to pin to */
	int client_lcore;
	bool quiet;   /* EAL log level error */
	bool no_huge; /* arenas of ordinary shared memory (RPCR_MEM_ARENA_F_NO_HUGE) */
};

/*
 * Fork and set up both players. Returns in both processes with @p filled (p->server tells which
 * side), or -errno. The server has a listener open when the client starts connecting.
 */
int harness_start(const struct harness_conf *conf, struct player *p);

/* Tear down the player's objects (and, in the client, wait for the server to exit). Returns the
 * server's exit status in the client, 0 in the server. */
int harness_finish(struct player *p);

/* Exchange control messages. Both abort the process after 60 s of silence. */
void ctl_send(const struct player *p, uint32_t tag, uint32_t n, const uint64_t *v);
void ctl_recv(const struct player *p, uint32_t tag, struct ctl_msg *m);
/* Wait until the other player reaches the same point. */
void ctl_sync(const struct player *p, uint32_t tag);

/* Wait up to @ms for the next event; return its type or -1 on timeout. */
int wait_event(const struct player *p, struct rpcr_rdev_event *ev, int ms);

/* Standard QP attributes on the player's CQ. */
struct rpcr_rdev_qp_attr qp_attr(const struct player *p, uint32_t send_wr, uint32_t recv_wr);

/*
 * Server: wait for a request, make a QP with @attr, call @before_accept (post receives) if
 * given, accept with @pdata, wait for ESTABLISHED. Client: make a QP, call @before (if given),
 * connect with @pdata, wait for ESTABLISHED and copy the server's private data out. Both return
 * the QP, or NULL (the reason printed).
 */
struct rpcr_rdev_qp *srv_accept(struct player *p, const struct rpcr_rdev_qp_attr *attr,
				const void *pdata, uint8_t len, uint8_t *peer_pdata,
				uint8_t *peer_len, void (*before)(struct rpcr_rdev_qp *, void *),
				void *arg);
struct rpcr_rdev_qp *cli_connect(struct player *p, const struct rpcr_rdev_qp_attr *attr,
				 const void *pdata, uint8_t len, uint8_t *peer_pdata,
				 uint8_t *peer_len, void (*before)(struct rpcr_rdev_qp *, void *),
				 void *arg);

/* Poll the player's CQ until @n completions arrive or @ms pass; returns how many. */
int poll_n(const struct player *p, struct rpcr_rdev_wc *wc, int n, int ms);

/* Disconnect (if connected), drain the CQ of the QP's completions, destroy it. */
void qp_close(struct player *p, struct rpcr_rdev_qp *qp);

/* Monotonic nanoseconds. */
uint64_t now_ns(void);

#endif /* RDEV_HARNESS_H */
