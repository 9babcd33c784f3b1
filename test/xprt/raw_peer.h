/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RAW_PEER_H
#define RAW_PEER_H

/*
 * A raw peer: a client written against lib/rdev only, that sends hand-made RPC-over-RDMA messages
 * to an engine server and reads what comes back, word by word. Used by the end-to-end test's wire
 * cases and by the hostile-peer test; it runs on any driver (shm here, ibverbs on rxe).
 *
 * Receives are slots 0..nrecv-1 of one registered buffer, sends slots after them. Completions of
 * the player's CQ that belong to another QP (late flushes of an earlier raw peer on rxe) are
 * passed over; those of the other queue are kept for later.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rpcr_rdev.h>

#include "rdev_harness.h"

struct raw_conf {
	uint32_t nrecv;     /* receives posted at connect (0: 16) */
	uint32_t recv_size; /* bytes each (0: 8192) */
	uint32_t nsend;     /* send slots of 8 KiB, the most Sends in one burst (0: 1) */
	bool ext;           /* offer rpcr's block (the 2005 draft's extensions) */
	bool no_pdata;      /* no private data at all (an RFC 8166 peer older than RFC 8797) */
	const void *pdata;  /* else these bytes as private data, when not NULL */
	uint8_t pdata_len;
};

struct raw {
	struct player *P;
	struct rpcr_rdev_qp *qp;
	uint8_t *mem; /* nrecv receive slots, then nsend send slots */
	struct rpcr_rdev_mr *mr;
	uint32_t nrecv, recv_size, nsend;
	/* Completions polled while waiting for the other kind (on rxe a reply's receive can
	 * complete before the Send it answers does). */
	struct rpcr_rdev_wc *early;
	uint32_t nearly, early_cap;
	bool disconnected; /* a DISCONNECTED event named this QP */
	bool dropped;      /* the user saw the connection go (free for the user to set) */
	uint32_t vers;     /* the RPC-over-RDMA version the user speaks on it (0: 1; the user's) */
	/* Called on every turn of a wait (e.g. to keep another client going); may be NULL. */
	void (*idle)(void *arg);
	void *idle_arg;
};

#define RAW_SEND_SLOT 8192u
#define RAW_WRID_SEND (1ull << 32) /* send wr_ids: this plus the slot */

/* Connect to the engine server at @addr. @return 0, or -1 (the reason printed). */
int raw_open(struct raw *rw, struct player *P, const char *addr, const struct raw_conf *conf);
/* Disconnect, drain, destroy; safe on a failed open. */
void raw_close(struct raw *rw);
/* Post receive slot @i again. */
void raw_post_recv(struct raw *rw, uint32_t i);
/* The next completion of the receive queue (@recv) or the send queue within @ms: 1 or 0. */
int raw_poll(struct raw *rw, bool recv, struct rpcr_rdev_wc *wc, int ms);
/* Send @len bytes; wait for the Send's completion. @return its status, or -1. */
int raw_send(struct raw *rw, const void *msg, uint32_t len);
/*
 * Post @n Sends (at most nsend) in one doorbell and wait for their completions; @status[i] is
 * each one's status (-1: none came). @return how many completed successfully.
 */
uint32_t raw_send_burst(struct raw *rw, const uint8_t *const *msgs, const uint32_t *lens,
			uint32_t n, int *status);
/* Wait up to @ms for a message; copy it to @out. @return its length, -1 (none), -2 (error). */
int raw_recv(struct raw *rw, uint8_t *out, int ms);
/*
 * Whether the connection is gone: within @ms a receive completes in error (flushed), or a
 * DISCONNECTED event names the QP. Messages received meanwhile are counted in *@msgs (may be
 * NULL) and dropped; their receives are posted again when @repost.
 */
bool raw_wait_dropped(struct raw *rw, int ms, uint32_t *msgs, bool repost);

/* Word @i of @p (big-endian). */
uint32_t raw_w32(const uint8_t *p, int i);
/* Write @n words big-endian. @return 4 * @n. */
uint32_t raw_put_words(uint8_t *buf, const uint32_t *w, uint32_t n);
/* A 28-byte RDMA_MSG header with empty lists, then the NULL call of the test program. */
uint32_t raw_null_call(uint8_t *buf, uint32_t xid, uint32_t rpcvers);
/* Send @msg, CHECK that the answer is RDMA_ERROR @err for @xid (ERR_VERS with 1..1). */
void raw_expect_error(struct raw *rw, const uint8_t *msg, uint32_t len, uint32_t xid, uint32_t err);

/* Send @msg and expect no answer at all within 200 ms (a message the peer discards silently). */
void raw_expect_nothing(struct raw *rw, const uint8_t *msg, uint32_t len);

#endif /* RAW_PEER_H */
