/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include <rpcr_oncrpc.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>
#include <rpcr_xdr.h>

#include "raw_peer.h"
#include "rpcr_test.h"

#define RAW_TESTPROG 0x2f5a0001u

void
raw_post_recv(struct raw *rw, uint32_t i)
{
	struct rpcr_rdev_sge sge = {(uintptr_t)(rw->mem + (size_t)i * rw->recv_size), rw->recv_size,
				    rw->mr->lkey};
	struct rpcr_rdev_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1};

	CHECK_EQ(rpcr_rdev_post_recv(rw->qp, &wr, 1), 1);
}

int
raw_open(struct raw *rw, struct player *P, const char *addr, const struct raw_conf *conf)
{
	static const struct raw_conf dflt;
	struct rpcr_rdev_qp_attr attr;
	struct rpcr_rdev_event ev;
	uint8_t pdata[RPCR_RDEV_PDATA_MAX];
	const uint8_t *pd = pdata;
	uint8_t plen = 8;
	uint64_t end;
	size_t bytes;
	uint32_t i;

	if (conf == NULL)
		conf = &dflt;
	memset(rw, 0, sizeof(*rw));
	rw->P = P;
	rw->nrecv = conf->nrecv != 0 ? conf->nrecv : 16;
	rw->recv_size = conf->recv_size != 0 ? conf->recv_size : 8192;
	rw->nsend = conf->nsend != 0 ? conf->nsend : 1;
	rw->early_cap = rw->nrecv + rw->nsend + 16;
	rw->early = calloc(rw->early_cap, sizeof(*rw->early));
	bytes = (size_t)rw->nrecv * rw->recv_size + (size_t)rw->nsend * RAW_SEND_SLOT;
	rw->mem = rpcr_mem_arena_alloc(P->arena, bytes, 4096);
	rw->mr = rw->mem != NULL
			 ? rpcr_rdev_mr_reg(P->pd, rw->mem, bytes, RPCR_RDEV_ACCESS_LOCAL_WRITE)
			 : NULL;
	attr = qp_attr(P, rw->nsend + 16, rw->nrecv);
	rw->qp = rpcr_rdev_qp_create(P->pd, &attr);
	if (rw->early == NULL || rw->mr == NULL || rw->qp == NULL) {
		fprintf(stderr, "raw: set-up failed\n");
		return -1;
	}
	for (i = 0; i < rw->nrecv; i++)
		raw_post_recv(rw, i);
	if (conf->no_pdata) {
		plen = 0;
	} else if (conf->pdata != NULL) {
		pd = conf->pdata;
		plen = conf->pdata_len;
	} else {
		struct rpcr_proto_cm cm = {.send_size = 4096, .recv_size = rw->recv_size};

		rpcr_proto_cm_encode(&cm, pdata, 8);
		if (conf->ext) {
			struct rpcr_proto_cm_ext x = {.present = true, .features = 7};

			rpcr_proto_cm_ext_encode(&x, pdata + 8, 12);
			plen = 20;
		}
	}
	if (rpcr_rdev_connect(rw->qp, addr, plen != 0 ? pd : NULL, plen) != 0) {
		fprintf(stderr, "raw: connect to %s failed\n", addr);
		return -1;
	}
	/* The engine's server accepts from its poller, in the other process. */
	end = now_ns() + 5000000000ull;
	while (now_ns() < end) {
		if (rpcr_rdev_event_wait(P->dev, &ev, 100) != 1 || ev.qp != rw->qp)
			continue;
		if (ev.type == RPCR_RDEV_EVENT_ESTABLISHED)
			return 0;
		break;
	}
	fprintf(stderr, "raw: not established\n");
	return -1;
}

void
raw_close(struct raw *rw)
{
	if (rw->qp != NULL)
		qp_close(rw->P, rw->qp);
	if (rw->mr != NULL)
		rpcr_rdev_mr_dereg(rw->mr);
	rte_free(rw->mem);
	free(rw->early);
	memset(rw, 0, sizeof(*rw));
}

static bool
is_recv(const struct raw *rw, const struct rpcr_rdev_wc *wc)
{
	return wc->wr_id < rw->nrecv;
}

int
raw_poll(struct raw *rw, bool recv, struct rpcr_rdev_wc *wc, int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	uint32_t i;

	for (i = 0; i < rw->nearly; i++) {
		if (is_recv(rw, &rw->early[i]) == recv) {
			*wc = rw->early[i];
			memmove(&rw->early[i], &rw->early[i + 1],
				sizeof(*wc) * (rw->nearly - i - 1));
			rw->nearly--;
			return 1;
		}
	}
	do {
		if (rw->idle != NULL)
			rw->idle(rw->idle_arg);
		if (rpcr_rdev_poll_cq(rw->P->cq, wc, 1) != 1 || wc->qp != rw->qp)
			continue;
		if (is_recv(rw, wc) == recv)
			return 1;
		if (rw->nearly < rw->early_cap)
			rw->early[rw->nearly++] = *wc;
	} while (now_ns() < end);
	return 0;
}

int
raw_send(struct raw *rw, const void *msg, uint32_t len)
{
	const uint8_t *m = msg;
	int st = -1;

	raw_send_burst(rw, &m, &len, 1, &st);
	return st;
}

uint32_t
raw_send_burst(struct raw *rw, const uint8_t *const *msgs, const uint32_t *lens, uint32_t n,
	       int *status)
{
	struct rpcr_rdev_send_wr wr[64];
	struct rpcr_rdev_sge sge[64];
	uint8_t *base = rw->mem + (size_t)rw->nrecv * rw->recv_size;
	struct rpcr_rdev_wc wc;
	uint32_t i, got = 0, ok = 0;
	uint16_t posted;

	for (i = 0; i < n; i++)
		status[i] = -1;
	if (n > rw->nsend || n > RTE_DIM(wr))
		return 0;
	for (i = 0; i < n; i++) {
		uint8_t *sb = base + (size_t)i * RAW_SEND_SLOT;

		memcpy(sb, msgs[i], lens[i]);
		sge[i] = (struct rpcr_rdev_sge){(uintptr_t)sb, lens[i], rw->mr->lkey};
		wr[i] = (struct rpcr_rdev_send_wr){.wr_id = RAW_WRID_SEND + i,
						   .sg_list = &sge[i],
						   .num_sge = 1,
						   .opcode = RPCR_RDEV_WR_SEND,
						   .flags = RPCR_RDEV_WR_F_SIGNALED};
	}
	posted = rpcr_rdev_post_send(rw->qp, wr, (uint16_t)n);
	/* Every posted WR completes (in error, once the QP has failed). */
	while (got < posted && raw_poll(rw, false, &wc, 2000) == 1) {
		uint64_t k = wc.wr_id - RAW_WRID_SEND;

		if (k < n) {
			status[k] = (int)wc.status;
			ok += wc.status == RPCR_RDEV_WC_SUCCESS;
		}
		got++;
	}
	return ok;
}

int
raw_recv(struct raw *rw, uint8_t *out, int ms)
{
	struct rpcr_rdev_wc wc;
	int n;

	if (raw_poll(rw, true, &wc, ms) != 1)
		return -1;
	if (wc.status != RPCR_RDEV_WC_SUCCESS || wc.opcode != RPCR_RDEV_WC_RECV)
		return -2;
	n = (int)wc.byte_len;
	memcpy(out, rw->mem + wc.wr_id * rw->recv_size, (size_t)n);
	raw_post_recv(rw, (uint32_t)wc.wr_id);
	return n;
}

bool
raw_wait_dropped(struct raw *rw, int ms, uint32_t *msgs, bool repost)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_wc wc;

	do {
		/* Messages that came before the end first (on rxe the DISCONNECTED event can be
		 * seen before receives that completed earlier are polled). */
		if (raw_poll(rw, true, &wc, 1) != 1) {
			if (rw->disconnected)
				return true;
			if (rpcr_rdev_event_poll(rw->P->dev, &ev, 1) == 1 && ev.qp == rw->qp &&
			    ev.type == RPCR_RDEV_EVENT_DISCONNECTED)
				rw->disconnected = true;
			continue;
		}
		if (wc.status != RPCR_RDEV_WC_SUCCESS)
			return true;
		if (msgs != NULL)
			(*msgs)++;
		if (repost)
			raw_post_recv(rw, (uint32_t)wc.wr_id);
	} while (now_ns() < end);
	return rw->disconnected;
}

uint32_t
raw_w32(const uint8_t *p, int i)
{
	return rpcr_xdr_load32(p + 4 * i);
}

uint32_t
raw_put_words(uint8_t *buf, const uint32_t *w, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		rpcr_xdr_store32(buf + 4 * i, w[i]);
	return 4 * n;
}

uint32_t
raw_null_call(uint8_t *buf, uint32_t xid, uint32_t rpcvers)
{
	uint32_t w[17] = {xid, 1, 8,       RPCR_PROTO_V1_MSG, 0, 0, 0,
			  xid, 0, rpcvers, RAW_TESTPROG,      1, 0, 0,
			  0,   0, 0};

	return raw_put_words(buf, w, 17);
}

void
raw_expect_nothing(struct raw *rw, const uint8_t *msg, uint32_t len)
{
	uint8_t *r = malloc(rw->recv_size);

	if (r == NULL)
		return;
	CHECK_EQ(raw_send(rw, msg, len), RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(raw_recv(rw, r, 200), -1);
	free(r);
}

void
raw_expect_error(struct raw *rw, const uint8_t *msg, uint32_t len, uint32_t xid, uint32_t err)
{
	uint8_t *r = malloc(rw->recv_size);
	int n;

	if (r == NULL)
		return;
	CHECK_EQ(raw_send(rw, msg, len), RPCR_RDEV_WC_SUCCESS);
	n = raw_recv(rw, r, 2000);
	CHECK_EQ(n, err == RPCR_PROTO_V1_ERR_VERS ? 28 : 20);
	if (n >= 20) {
		CHECK_EQ(raw_w32(r, 0), xid);
		/* RFC 8166 section 4.5: the version of the message it answers. */
		CHECK_EQ(raw_w32(r, 1), raw_w32(msg, 1));
		CHECK(raw_w32(r, 2) >= 1); /* never 0 credits */
		CHECK_EQ(raw_w32(r, 3), RPCR_PROTO_V1_ERROR);
		CHECK_EQ(raw_w32(r, 4), err);
		if (err == RPCR_PROTO_V1_ERR_VERS && n >= 28) {
			CHECK_EQ(raw_w32(r, 5), 1); /* versions supported: 1 to 1 */
			CHECK_EQ(raw_w32(r, 6), 1);
		}
	}
	free(r);
}
