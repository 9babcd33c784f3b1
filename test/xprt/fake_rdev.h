/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef FAKE_RDEV_H
#define FAKE_RDEV_H

/* The fake device (test/xprt/fake_rdev.c): structures the tests look into, and their helpers. */

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

#include <rpcr_rdev_driver.h>
#include <rpcr_xprt.h>

#define FQ    4096
#define FDATA 4096

struct fake_cq {
	struct rpcr_rdev_cq pub;
	struct rpcr_rdev_wc q[FQ];
	uint32_t head, tail;
};

struct fake_recv {
	uint64_t wr_id;
	uint8_t *addr;
	uint32_t len;
};

/* A send-queue WR as posted, with the bytes it gathers (Send, Write). */
struct fake_wr {
	struct rpcr_rdev_send_wr wr;
	struct rpcr_rdev_mw_bind bind; /* BIND_MW: what it bound (wr.bind points here) */
	struct rpcr_rdev_sge sge[16];
	uint8_t data[FDATA];
	uint32_t len;
	bool completed;
};

struct fake_qp {
	struct rpcr_rdev_qp pub;
	struct fake_cq *scq, *rcq;
	struct fake_recv rq[FQ];
	uint32_t rq_head, rq_tail;
	struct fake_wr *sq[FQ];
	uint32_t sq_head, sq_tail; /* head: oldest not yet taken by the test */
	uint32_t sq_done;          /* oldest not yet completed */
	char addr[108];
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
	uint8_t plen;
	int connects, accepts, disconnects;
	uint32_t fail_posts; /* post_send refuses this many more calls */
};

struct fake_req {
	struct rpcr_rdev_conn_req pub;
	struct fake_qp *accepted;
	bool rejected;
};

extern struct fake_qp *last_qp; /* the QP created last */
extern uint32_t nqps;           /* QPs created so far */
extern uint32_t nqps_live;      /* QPs not destroyed */
extern struct rpcr_rdev_listener *last_listener;
extern int nmrs_live;                        /* registrations alive */
extern int nmws_live;                        /* memory windows alive ("fake:mw=1" devices) */
extern uint32_t fail_deregs;                 /* mr_dereg fails this many more times */
extern struct rpcr_rdev_mr *dereg_failed;    /* the registration it failed last */
extern struct rpcr_rdev *fake_dev;           /* set by the test: events go there */
extern struct rpcr_xprt_poller *fake_poller; /* set by the test: polls(), poll_ms() */

void cq_push(struct fake_cq *cq, const struct rpcr_rdev_wc *wc);
int deliver(struct fake_qp *qp, const void *msg, uint32_t len, uint32_t inv_rkey);
void flush_recvs(struct fake_qp *qp);
struct fake_wr *take(struct fake_qp *qp);
void complete_sends(struct fake_qp *qp, uint32_t status, const uint8_t *read_data);
void event(enum rpcr_rdev_event_type type, struct fake_qp *qp, const void *pdata, uint8_t len);
void polls(int n);
void poll_ms(uint32_t ms);

/* Poll until cond holds, for at most POLL_UNTIL_MS of wall time. What a timer or a back-off
 * starts comes some milliseconds later, and a loaded machine (CI, valgrind) may not run the test
 * for several milliseconds at a time: wait for the outcome, never for a fixed time. (2 s was too
 * short: client_windows' reconnections missed it about once in 80 runs with both CPUs loaded, in
 * this session's build and in the one before it; 0 in 80 with 10 s.) */
#define POLL_UNTIL_MS 10000
#define POLL_UNTIL(cond)                                                                  \
	do {                                                                              \
		uint64_t pu_end_ = rte_rdtsc() + rte_get_tsc_hz() / 1000 * POLL_UNTIL_MS; \
                                                                                          \
		while (!(cond) && rte_rdtsc() < pu_end_)                                  \
			rpcr_xprt_poll(fake_poller);                                      \
	} while (0)
uint32_t w32(const uint8_t *p, int i);
uint32_t words(uint8_t *buf, const uint32_t *w, uint32_t n);
uint8_t peer_pdata(uint8_t *buf, uint32_t send, uint32_t recv, bool r, uint32_t features);
uint32_t reply_msg(uint8_t *buf, uint32_t xid, uint32_t credit, uint32_t accept_stat,
		   const void *body, uint32_t blen);

#endif /* FAKE_RDEV_H */
