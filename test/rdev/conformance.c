/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Driver conformance: RC semantics every rpcr device must have, written once against lib/rdev
 * and run unchanged on every driver (shm here; ibverbs on soft-RoCE in the guest; mlx5 where
 * there is hardware). Two players, server and client, in two processes.
 *
 * usage: rdev_conformance [--dev DEVARGS] [--cdev DEVARGS] [--addr ADDR] [CASE ...]
 * (--cdev: the client's device, when it is not the server's: ibverbs:dev=rxe_b against rxe_a)
 *
 * Every rejection case presets the target memory and guard bytes around it and checks,
 * afterwards, that not one byte changed.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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

#define GUARD      256u       /* guard bytes each side of a target */
#define GUARD_BYTE 0xa5u      /* what guards hold */
#define BIG        (8u << 20) /* largest Write/Read */
#define RECV_SIZE  8192u      /* the receive size of send_recv */

static struct player P;

static void
pattern(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + 1);
}

static bool
pattern_ok(const uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 31 + seed * 7 + 1))
			return false;
	return true;
}

static bool
all(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A buffer in the arena with guards around it; @mr covers only the middle. */
struct gbuf {
	uint8_t *raw;
	uint8_t *buf;
	size_t len;
	struct rpcr_rdev_mr *mr;
};

static int
gbuf_get(struct gbuf *g, size_t len, uint32_t access)
{
	g->len = len;
	g->raw = rpcr_mem_arena_alloc(P.arena, len + 2 * GUARD, 4096);
	if (g->raw == NULL)
		return -ENOMEM;
	g->buf = g->raw + GUARD;
	memset(g->raw, GUARD_BYTE, len + 2 * GUARD);
	g->mr = rpcr_rdev_mr_reg(P.pd, g->buf, len, access);
	return g->mr != NULL ? 0 : -rte_errno;
}

static void
gbuf_put(struct gbuf *g)
{
	if (g->mr != NULL)
		rpcr_rdev_mr_dereg(g->mr);
	rte_free(g->raw);
	memset(g, 0, sizeof(*g));
}

/* Guards intact and the middle still @fill. */
static bool
gbuf_untouched(const struct gbuf *g, uint8_t fill)
{
	return all(g->raw, GUARD, GUARD_BYTE) && all(g->buf + g->len, GUARD, GUARD_BYTE) &&
	       all(g->buf, g->len, fill);
}

/* What a server advertises in its private data. */
/* A buffer advertised in private data: the whole field, so that transports that pad private
 * data to their field (RoCE, InfiniBand) deliver exactly as many bytes as sent. */
struct adv {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint8_t pad[RPCR_RDEV_PDATA_MAX - 16];
};

static void
post_recvs(struct rpcr_rdev_qp *qp, struct gbuf *g, uint32_t n, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct rpcr_rdev_sge s = {(uintptr_t)(g->buf + (size_t)i * size), size,
					  g->mr->lkey};
		struct rpcr_rdev_recv_wr w = {.wr_id = 1000 + i, .sg_list = &s, .num_sge = 1};

		CHECK_EQ(rpcr_rdev_post_recv(qp, &w, 1), 1);
	}
}

struct recv_arg {
	struct gbuf *g;
	uint32_t n;
	uint32_t size;
};

static void
before_post(struct rpcr_rdev_qp *qp, void *arg)
{
	struct recv_arg *a = arg;

	post_recvs(qp, a->g, a->n, a->size);
}

/* Post one signalled work request and wait for its completion. */
static uint32_t
do_op(struct rpcr_rdev_qp *qp, uint8_t opcode, struct rpcr_rdev_sge *sg, uint16_t nsge,
      uint64_t raddr, uint32_t rkey, uint32_t inv, uint32_t *byte_len)
{
	struct rpcr_rdev_send_wr w = {
		.wr_id = 77,
		.sg_list = sg,
		.num_sge = nsge,
		.opcode = opcode,
		.flags = RPCR_RDEV_WR_F_SIGNALED,
		.rkey = rkey,
		.remote_addr = raddr,
		.invalidate_rkey = inv,
	};
	struct rpcr_rdev_wc wc;
	uint64_t bytes = 0;
	uint16_t i;

	/* 5 s, and 2 s more a MiB: soft-RoCE under emulation moves tens of MB/s and retransmits. */
	for (i = 0; i < nsge; i++)
		bytes += sg[i].length;
	if (rpcr_rdev_post_send(qp, &w, 1) != 1)
		return 0xffff;
	if (poll_n(&P, &wc, 1, 5000 + (int)(bytes >> 20) * 2000) != 1)
		return 0xfffe;
	CHECK_EQ(wc.wr_id, 77);
	CHECK(wc.qp == qp);
	if (byte_len != NULL)
		*byte_len = wc.byte_len;
	return wc.status;
}

/* ---- cases ---- */

/* Sends of 1 byte up to the receive size, with gather and scatter lists, data and order checked. */
static void
case_send_recv(void)
{
	static const uint32_t sizes[] = {1, 2, 63, 64, 1000, 4096, RECV_SIZE - 1, RECV_SIZE};
	const uint32_t n = RTE_DIM(sizes);
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 16, 16);
	struct rpcr_rdev_wc wc[16];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	uint32_t i;

	CHECK_EQ(gbuf_get(&g, (size_t)n * RECV_SIZE, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		/* Receives scatter into two entries each: 100 bytes, then the rest. */
		memset(g.buf, 0, g.len);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		for (i = 0; qp != NULL && i < n; i++) {
			struct rpcr_rdev_sge s[2] = {
				{(uintptr_t)(g.buf + (size_t)i * RECV_SIZE), 100, g.mr->lkey},
				{(uintptr_t)(g.buf + (size_t)i * RECV_SIZE + 100), RECV_SIZE - 100,
				 g.mr->lkey},
			};
			struct rpcr_rdev_recv_wr w = {.wr_id = i, .sg_list = s, .num_sge = 2};

			CHECK_EQ(rpcr_rdev_post_recv(qp, &w, 1), 1);
		}
		ctl_sync(&P, 1);
		CHECK_EQ(poll_n(&P, wc, (int)n, 5000), (int)n);
		for (i = 0; i < n; i++) {
			CHECK_EQ(wc[i].status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc[i].opcode, RPCR_RDEV_WC_RECV);
			CHECK_EQ(wc[i].wr_id, i); /* RC: in order */
			CHECK_EQ(wc[i].byte_len, sizes[i]);
			CHECK(pattern_ok(g.buf + (size_t)i * RECV_SIZE, sizes[i], i));
			CHECK_EQ(wc[i].flags, 0);
		}
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	} else {
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		for (i = 0; qp != NULL && i < n; i++) {
			uint8_t *b = g.buf + (size_t)i * RECV_SIZE;
			uint32_t half = sizes[i] / 2;
			struct rpcr_rdev_sge s[2] = {
				{(uintptr_t)b, half, g.mr->lkey},
				{(uintptr_t)(b + half), sizes[i] - half, g.mr->lkey}};

			pattern(b, sizes[i], i);
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, s, 2, 0, 0, 0, NULL),
				 RPCR_RDEV_WC_SUCCESS);
		}
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/*
 * Inline Sends (rpcr_rdev_qp_attr::max_inline): a Send whose gather list adds up to at most the
 * QP's max_inline bytes is copied when it is posted, so that its memory may be written again as
 * soon as rpcr_rdev_post_send() returns (the engine gives a short reply's buffer back after its
 * doorbell on that promise). The client asks for 64 bytes inline and posts Sends of 1, 17 and
 * up to the QP's max_inline bytes (two gather entries for the last), each unsignalled but the
 * last, overwriting every buffer right after its post; the server must receive what was there
 * at the post. A device with no inline Sends says so and the client sends nothing.
 */
static void
case_inline(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 16, 16);
	struct rpcr_rdev_info info;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct ctl_msg m;
	struct gbuf g = {0};
	uint32_t sizes[3] = {1, 17, 64}, i, n;

	CHECK_EQ(rpcr_rdev_info_get(P.dev, &info), 0);
	CHECK_EQ(gbuf_get(&g, 3 * 256, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		memset(g.buf, 0, g.len);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		for (i = 0; qp != NULL && i < 3; i++) {
			struct rpcr_rdev_sge sg = {(uintptr_t)(g.buf + i * 256), 256, g.mr->lkey};
			struct rpcr_rdev_recv_wr w = {.wr_id = i, .sg_list = &sg, .num_sge = 1};

			CHECK_EQ(rpcr_rdev_post_recv(qp, &w, 1), 1);
		}
		ctl_sync(&P, 1);
		/* How many the client sent, and their sizes. */
		ctl_recv(&P, 2, &m);
		n = m.n;
		CHECK(n <= 3);
		if (n != 0 && n <= 3)
			CHECK_EQ(poll_n(&P, wc, (int)n, 5000), (int)n);
		for (i = 0; i < n && i < 3; i++) {
			CHECK_EQ(wc[i].status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc[i].wr_id, i);
			CHECK_EQ(wc[i].byte_len, (uint32_t)m.v[i]);
			CHECK(pattern_ok(g.buf + i * 256, (size_t)m.v[i], 40 + i));
		}
		ctl_sync(&P, 3);
		qp_close(&P, qp);
	} else {
		if (info.max_inline >= 64)
			at.max_inline = 64;
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		n = 0;
		if (qp != NULL && info.max_inline >= 64) {
			/* What the QP has: at least what was asked. */
			CHECK(qp->attr.max_inline >= 64);
			sizes[2] = RTE_MIN(qp->attr.max_inline, 256u);
			for (i = 0; i < 3; i++) {
				uint8_t *b = g.buf + i * 256;
				uint32_t half = sizes[i] / 2;
				struct rpcr_rdev_sge sg[2] = {
					{(uintptr_t)b, i == 2 ? half : sizes[i], g.mr->lkey},
					{(uintptr_t)(b + half), sizes[i] - half, g.mr->lkey}};
				struct rpcr_rdev_send_wr w = {
					.wr_id = 50 + i,
					.sg_list = sg,
					.num_sge = i == 2 ? 2 : 1,
					.opcode = RPCR_RDEV_WR_SEND,
					.flags = i == 2 ? RPCR_RDEV_WR_F_SIGNALED : 0,
				};

				pattern(b, sizes[i], 40 + i);
				CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
				memset(b, 0x5a, sizes[i]);
			}
			n = 3;
			CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
			CHECK_EQ(wc[0].wr_id, 52);
			CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
		} else {
			printf("     (inline: skipped, the device has no inline Sends)\n");
		}
		ctl_send(&P, 2, n, (const uint64_t[]){sizes[0], sizes[1], sizes[2]});
		ctl_sync(&P, 3);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* A Send with no receive posted: RNR, and the connection fails on both sides. */
static void
case_rnr(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};

	CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1); /* the client sends now */
		ctl_sync(&P, 2);
		/* Our QP is in error too: a receive posted now flushes. */
		post_recvs(qp, &g, 1, 64);
		CHECK_EQ(poll_n(&P, wc, 1, 2000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[0].wr_id, 1000);
		qp_close(&P, qp);
	} else {
		struct rpcr_rdev_sge s = {(uintptr_t)g.buf, 16, g.mr->lkey};

		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL),
			 RPCR_RDEV_WC_RNR_RETRY_EXC_ERR);
		CHECK_EQ(qp->stats.rnr_errors, 1);
		/* After the error, everything posted flushes. */
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL),
			 RPCR_RDEV_WC_WR_FLUSH_ERR);
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* The player's device has capability @cap (RPCR_RDEV_CAP_*). */
static bool
dev_has(uint32_t cap)
{
	struct rpcr_rdev_info info;

	return rpcr_rdev_info_get(P.dev, &info) == 0 && (info.caps & cap) != 0;
}

/* Private data sent as @want bytes arrived as @len at @buf: exactly, or on devices without
 * RPCR_RDEV_CAP_PDATA_EXACT followed by zeros up to the transport's field. */
static bool
pdata_is(const uint8_t *buf, uint8_t len, uint8_t want)
{
	uint8_t i;

	if (len == want)
		return true;
	if (dev_has(RPCR_RDEV_CAP_PDATA_EXACT) || len < want)
		return false;
	for (i = want; i < len; i++)
		if (buf[i] != 0)
			return false;
	return true;
}

/* A Send longer than the posted receive: length error at the receiver, nothing past it written. */
static void
case_length_error(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_wc wc;
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};

	if (P.server) {
		/* The receive covers 16 bytes; the registration and guards go well beyond. */
		struct recv_arg ra = {&g, 1, 16};

		CHECK_EQ(gbuf_get(&g, 16, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
		memset(g.buf, 0x11, 16);
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		ctl_sync(&P, 2);
		CHECK_EQ(poll_n(&P, &wc, 1, 2000), 1);
		/* LOC_LEN_ERR (mlx5, shm); soft-RoCE reports LOC_QP_OP_ERR. */
		CHECK(wc.status == RPCR_RDEV_WC_LOC_LEN_ERR ||
		      wc.status == RPCR_RDEV_WC_LOC_QP_OP_ERR);
		CHECK_EQ(wc.wr_id, 1000);
		CHECK(gbuf_untouched(&g, 0x11));
		qp_close(&P, qp);
	} else {
		struct rpcr_rdev_sge s;
		int rc;

		CHECK_EQ(gbuf_get(&g, 64, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
		s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, 64, g.mr->lkey};
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		/* REM_INV_REQ_ERR (mlx5, shm); soft-RoCE reports REM_OP_ERR. */
		rc = do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL);
		CHECK(rc == RPCR_RDEV_WC_REM_INV_REQ_ERR || rc == RPCR_RDEV_WC_REM_OP_ERR);
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* RDMA Write and Read from 1 byte to 8 MiB, with gather/scatter lists, data checked. */
static void
case_write_read(void)
{
	static const uint32_t sizes[] = {1, 3, 4096, 65537, 1u << 20, BIG};
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	struct adv a;
	uint8_t len = 0;
	uint32_t i;

	CHECK_EQ(gbuf_get(&g, BIG,
			  RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE |
				  RPCR_RDEV_ACCESS_REMOTE_READ),
		 0);
	if (P.server) {
		memset(g.buf, 0, g.len);
		a = (struct adv){(uintptr_t)g.buf, g.mr->rkey, (uint32_t)g.len};
		qp = srv_accept(&P, &at, &a, sizeof(a), NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		for (i = 0; i < RTE_DIM(sizes); i++) {
			ctl_sync(&P, 10 + i); /* the client has written */
			CHECK(pattern_ok(g.buf, sizes[i], i));
			ctl_sync(&P, 20 + i); /* checked: the client may write again */
		}
		CHECK(all(g.raw, GUARD, GUARD_BYTE) && all(g.buf + g.len, GUARD, GUARD_BYTE));
		pattern(g.buf, g.len, 99);
		ctl_sync(&P, 30); /* the client reads now */
		ctl_sync(&P, 31);
		qp_close(&P, qp);
	} else {
		qp = cli_connect(&P, &at, NULL, 0, (uint8_t *)&a, &len, NULL, NULL);
		CHECK(qp != NULL);
		CHECK_EQ(len, sizeof(a));
		for (i = 0; qp != NULL && i < RTE_DIM(sizes); i++) {
			/* Three gather entries of uneven sizes. */
			uint32_t x = sizes[i] / 3, y = sizes[i] / 2;
			struct rpcr_rdev_sge s[3] = {
				{(uintptr_t)g.buf, x, g.mr->lkey},
				{(uintptr_t)(g.buf + x), y - x, g.mr->lkey},
				{(uintptr_t)(g.buf + y), sizes[i] - y, g.mr->lkey},
			};
			uint32_t bl = 0;

			pattern(g.buf, sizes[i], i);
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_WRITE, s, 3, a.addr, a.rkey, 0, &bl),
				 RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(bl, sizes[i]);
			ctl_sync(&P, 10 + i);
			ctl_sync(&P, 20 + i);
		}
		ctl_sync(&P, 30);
		for (i = 0; qp != NULL && i < RTE_DIM(sizes); i++) {
			uint32_t x = sizes[i] / 2;
			struct rpcr_rdev_sge s[2] = {
				{(uintptr_t)g.buf, x, g.mr->lkey},
				{(uintptr_t)(g.buf + x), sizes[i] - x, g.mr->lkey}};
			uint32_t bl = 0;

			memset(g.buf, 0, sizes[i]);
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_READ, s, 2, a.addr, a.rkey, 0, &bl),
				 RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(bl, sizes[i]);
			CHECK(pattern_ok(g.buf, sizes[i], 99));
		}
		CHECK(all(g.raw, GUARD, GUARD_BYTE) && all(g.buf + g.len, GUARD, GUARD_BYTE));
		ctl_sync(&P, 31);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* One way for a remote access to be wrong. */
struct bad_access {
	const char *what;
	uint32_t access;  /* the server's registration */
	uint8_t opcode;   /* the client's operation */
	int64_t delta;    /* added to the address */
	uint32_t len;     /* bytes moved */
	uint32_t key_xor; /* applied to the key */
	int server_does;  /* 1: invalidate, 2: deregister before the client acts */
};

#define RW                                                              \
	(RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE | \
	 RPCR_RDEV_ACCESS_REMOTE_READ)

static const struct bad_access bad_cases[] = {
	{"write, unknown key", RW, RPCR_RDEV_WR_WRITE, 0, 64, 0x5a5a0000, 0},
	{"read, unknown key", RW, RPCR_RDEV_WR_READ, 0, 64, 0x5a5a0000, 0},
	{"write, read-only registration",
	 RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_READ, RPCR_RDEV_WR_WRITE, 0, 64, 0,
	 0},
	{"read, write-only registration",
	 RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE, RPCR_RDEV_WR_READ, 0, 64, 0,
	 0},
	{"write, local-only registration", RPCR_RDEV_ACCESS_LOCAL_WRITE, RPCR_RDEV_WR_WRITE, 0, 64,
	 0, 0},
	{"write, one byte past the end", RW, RPCR_RDEV_WR_WRITE, 4096 - 63, 64, 0, 0},
	{"write, one byte before the start", RW, RPCR_RDEV_WR_WRITE, -1, 64, 0, 0},
	{"read, one byte past the end", RW, RPCR_RDEV_WR_READ, 1, 4096, 0, 0},
	{"write, offset far outside", RW, RPCR_RDEV_WR_WRITE, 1ll << 40, 64, 0, 0},
	{"write, locally invalidated key", RW, RPCR_RDEV_WR_WRITE, 0, 64, 0, 1},
	{"read, deregistered key", RW, RPCR_RDEV_WR_READ, 0, 64, 0, 2},
};

/* Each wrong remote access fails with REM_ACCESS_ERR and touches nothing, on either side. */
static void
case_bad_access(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	struct adv a;
	uint8_t len;
	size_t i;

	for (i = 0; i < RTE_DIM(bad_cases); i++) {
		const struct bad_access *b = &bad_cases[i];

		if (P.server) {
			CHECK_EQ(gbuf_get(&g, 4096, b->access), 0);
			memset(g.buf, 0x3c, g.len);
			a = (struct adv){(uintptr_t)g.buf, g.mr->rkey, (uint32_t)g.len};
			qp = srv_accept(&P, &at, &a, sizeof(a), NULL, NULL, NULL, NULL);
			CHECK(qp != NULL);
			if (b->server_does == 1)
				CHECK_EQ(rpcr_rdev_mr_invalidate(g.mr), 0);
			if (b->server_does == 2) {
				CHECK_EQ(rpcr_rdev_mr_dereg(g.mr), 0);
				g.mr = NULL;
			}
			ctl_sync(&P, 100 + (uint32_t)i);
			ctl_sync(&P, 200 + (uint32_t)i);
			if (!gbuf_untouched(&g, 0x3c))
				fprintf(stderr, "server memory touched: %s\n", b->what);
			CHECK(gbuf_untouched(&g, 0x3c));
			qp_close(&P, qp);
		} else {
			struct rpcr_rdev_sge s;
			uint32_t st;

			CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
			memset(g.buf, 0x77, g.len);
			s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, b->len, g.mr->lkey};
			qp = cli_connect(&P, &at, NULL, 0, (uint8_t *)&a, &len, NULL, NULL);
			CHECK(qp != NULL);
			ctl_sync(&P, 100 + (uint32_t)i);
			st = do_op(qp, b->opcode, &s, 1, a.addr + (uint64_t)b->delta,
				   a.rkey ^ b->key_xor, 0, NULL);
			if (st != RPCR_RDEV_WC_REM_ACCESS_ERR)
				fprintf(stderr, "%s: %s\n", b->what, rpcr_rdev_wc_status_str(st));
			CHECK_EQ(st, RPCR_RDEV_WC_REM_ACCESS_ERR);
			/* A failed Read wrote nothing locally either. */
			CHECK(gbuf_untouched(&g, 0x77));
			ctl_sync(&P, 200 + (uint32_t)i);
			qp_close(&P, qp);
		}
		gbuf_put(&g);
	}
}

/* Local key checks: a gather entry outside its registration fails locally, sending nothing. */
static void
case_local_protection(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_wc wc;
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};

	CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		struct recv_arg ra = {&g, 2, 64};

		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		/* Nothing arrived, and our side is still connected. */
		CHECK_EQ(rpcr_rdev_poll_cq(P.cq, &wc, 1), 0);
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	} else {
		struct rpcr_rdev_sge s = {(uintptr_t)g.buf + 4000, 200, g.mr->lkey};

		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL),
			 RPCR_RDEV_WC_LOC_PROT_ERR);
		ctl_sync(&P, 1);
		ctl_sync(&P, 2);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* Send with Invalidate: the receiver learns which key died, and it is dead; rekey revives it. */
static void
case_remote_invalidate(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_qp *qp;
	struct rpcr_rdev_wc wc;
	struct gbuf g = {0}, m = {0};
	struct adv a;
	uint8_t len;
	int round;

	if (!dev_has(RPCR_RDEV_CAP_REMOTE_INV)) {
		if (!P.server)
			printf("     (remote_invalidate: skipped, the device has no "
			       "RPCR_RDEV_CAP_REMOTE_INV)\n");
		return;
	}
	/* Round 0: the key allows remote invalidation; round 1: it does not. */
	for (round = 0; round < 2; round++) {
		uint32_t acc = RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE |
			       (round == 0 ? RPCR_RDEV_ACCESS_REMOTE_INV : 0);

		if (!P.server) {
			struct recv_arg ra = {&m, 1, 64};

			CHECK_EQ(gbuf_get(&g, 4096, acc), 0);
			CHECK_EQ(gbuf_get(&m, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
			memset(g.buf, 0, g.len);
			a = (struct adv){(uintptr_t)g.buf, g.mr->rkey, (uint32_t)g.len};
			qp = cli_connect(&P, &at, &a, sizeof(a), NULL, NULL, before_post, &ra);
			CHECK(qp != NULL);
			ctl_sync(&P, 1); /* the server writes, then sends with invalidate */
			CHECK_EQ(poll_n(&P, &wc, 1, 5000), 1);
			if (round == 0) {
				CHECK_EQ(wc.status, RPCR_RDEV_WC_SUCCESS);
				CHECK_EQ(wc.flags, RPCR_RDEV_WC_F_WITH_INV);
				CHECK_EQ(wc.invalidated_rkey, a.rkey);
				CHECK(pattern_ok(g.buf, 100, 5));
			} else {
				CHECK(wc.status != RPCR_RDEV_WC_SUCCESS);
			}
			ctl_sync(&P, 2); /* round 0: the server writes again with the dead key */
			CHECK(pattern_ok(g.buf, 100, 5));
			CHECK(all(g.buf + 100, 100, 0));
			if (round == 0) {
				/* A fresh key makes the registration usable again, with a new rkey. */
				CHECK_EQ(rpcr_rdev_mr_rekey(g.mr), 0);
				CHECK(g.mr->rkey != a.rkey);
			}
			qp_close(&P, qp);
			gbuf_put(&g);
			gbuf_put(&m);
		} else {
			struct rpcr_rdev_sge s;

			CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
			pattern(g.buf, 200, 5);
			s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, 100, g.mr->lkey};
			qp = srv_accept(&P, &at, NULL, 0, (uint8_t *)&a, &len, NULL, NULL);
			CHECK(qp != NULL);
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_WRITE, &s, 1, a.addr, a.rkey, 0, NULL),
				 RPCR_RDEV_WC_SUCCESS);
			s.length = 8;
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND_INV, &s, 1, 0, 0, a.rkey, NULL),
				 round == 0 ? RPCR_RDEV_WC_SUCCESS : RPCR_RDEV_WC_REM_OP_ERR);
			ctl_sync(&P, 1);
			if (round == 0) {
				/* The key is gone: a Write now must fail and change nothing. */
				s = (struct rpcr_rdev_sge){(uintptr_t)g.buf + 100, 100, g.mr->lkey};
				CHECK_EQ(do_op(qp, RPCR_RDEV_WR_WRITE, &s, 1, a.addr + 100, a.rkey,
					       0, NULL),
					 RPCR_RDEV_WC_REM_ACCESS_ERR);
			}
			ctl_sync(&P, 2);
			qp_close(&P, qp);
			gbuf_put(&g);
		}
	}
}

/* ---- memory windows (RPCR_RDEV_CAP_MW) ---- */

/* What the server does with its window before the client acts, and what the client does. */
enum mw_server {
	MW_BOUND,       /* bind, advertise */
	MW_LOCAL_INV,   /* bind, invalidate locally, advertise the dead key */
	MW_OLD_KEY,     /* bind, invalidate, bind again: advertise the first key */
	MW_NEW_KEY,     /* ... the second key */
	MW_READ_ONLY,   /* bind for remote read only */
	MW_OTHER_QP,    /* bind on a first connection, the client uses a second one */
	MW_REMOTE_INV,  /* bind; the client's Send with Invalidate kills it */
	MW_BAD_RANGE,   /* binding errors, each on its own connection: range past the region */
	MW_NO_BIND,     /* a registration without RPCR_RDEV_ACCESS_MW_BIND */
	MW_TWICE,       /* a window bound already */
	MW_INV_UNBOUND, /* local invalidation of a key that is bound to nothing */
};

struct mw_case {
	const char *what;
	enum mw_server srv;
	uint8_t opcode; /* the client's operation (0xff: none) */
	int64_t delta;  /* from the window's start */
	uint32_t len;
	uint32_t want; /* the client's status */
};

#define MW_OFF 1024u /* the window inside the 8 KiB registration */
#define MW_LEN 2048u

static const struct mw_case mw_cases[] = {
	{"write and read inside", MW_BOUND, RPCR_RDEV_WR_WRITE, 0, MW_LEN, 0},
	{"write one byte before it, inside the registration", MW_BOUND, RPCR_RDEV_WR_WRITE, -1, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"read one byte past its end", MW_BOUND, RPCR_RDEV_WR_READ, MW_LEN - 63, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"write after a local invalidation", MW_LOCAL_INV, RPCR_RDEV_WR_WRITE, 0, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"write with the key of the bind before", MW_OLD_KEY, RPCR_RDEV_WR_WRITE, 0, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"write with the key of the new bind", MW_NEW_KEY, RPCR_RDEV_WR_WRITE, 0, 64, 0},
	{"write to a read-only window", MW_READ_ONLY, RPCR_RDEV_WR_WRITE, 0, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"write through another QP of the same peer", MW_OTHER_QP, RPCR_RDEV_WR_WRITE, 0, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"write after the peer's Send with Invalidate", MW_REMOTE_INV, RPCR_RDEV_WR_WRITE, 0, 64,
	 RPCR_RDEV_WC_REM_ACCESS_ERR},
	{"bind over a range past the registration", MW_BAD_RANGE, 0xff, 0, 0, 0},
	{"bind over a registration without MW_BIND", MW_NO_BIND, 0xff, 0, 0, 0},
	{"bind a window bound already", MW_TWICE, 0xff, 0, 0, 0},
	{"invalidate a key bound to nothing", MW_INV_UNBOUND, 0xff, 0, 0, 0},
};

/* Post a bind of @mw over @len bytes at @addr of @mr; its completion status. */
static uint32_t
mw_bind_op(struct rpcr_rdev_qp *qp, struct rpcr_rdev_mw *mw, const struct rpcr_rdev_mr *mr,
	   uint64_t addr, uint64_t len, uint32_t access)
{
	struct rpcr_rdev_mw_bind b = {mw, mr, addr, len, access};
	struct rpcr_rdev_send_wr w = {.wr_id = 78,
				      .opcode = RPCR_RDEV_WR_BIND_MW,
				      .flags = RPCR_RDEV_WR_F_SIGNALED,
				      .bind = &b};
	struct rpcr_rdev_wc wc;

	if (rpcr_rdev_post_send(qp, &w, 1) != 1)
		return 0xffff;
	if (poll_n(&P, &wc, 1, 5000) != 1)
		return 0xfffe;
	CHECK_EQ(wc.wr_id, 78);
	if (wc.status == RPCR_RDEV_WC_SUCCESS)
		CHECK_EQ(wc.opcode, RPCR_RDEV_WC_BIND_MW);
	return wc.status;
}

static void
mw_server(const struct mw_case *k, uint32_t i)
{
	const uint32_t rw = RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE;
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_qp *qp, *qp2 = NULL;
	struct rpcr_rdev_mw *mw;
	struct gbuf g = {0}, m = {0};
	struct rpcr_rdev_wc wc;
	struct recv_arg ra = {&m, 1, 64};
	uint32_t acc = RW | RPCR_RDEV_ACCESS_MW_BIND, key1 = 0, st;
	uint64_t v[3];

	if (k->srv == MW_NO_BIND)
		acc = RW;
	CHECK_EQ(gbuf_get(&g, 8192, acc), 0);
	CHECK_EQ(gbuf_get(&m, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	memset(g.buf, 0x3c, g.len);
	mw = rpcr_rdev_mw_alloc(P.pd);
	CHECK(mw != NULL);
	qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
	CHECK(qp != NULL);
	if (k->srv == MW_OTHER_QP) /* (the client's second connection, where it acts) */
		qp2 = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
	if (mw == NULL || qp == NULL)
		goto out;
	switch (k->srv) {
	case MW_BAD_RANGE:
		st = mw_bind_op(qp, mw, g.mr, (uintptr_t)g.buf + 8192 - 100, 200, rw);
		CHECK_EQ(st, RPCR_RDEV_WC_MW_BIND_ERR);
		goto sync;
	case MW_NO_BIND:
		st = mw_bind_op(qp, mw, g.mr, (uintptr_t)g.buf + MW_OFF, MW_LEN, rw);
		CHECK_EQ(st, RPCR_RDEV_WC_MW_BIND_ERR);
		goto sync;
	case MW_INV_UNBOUND:
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_LOCAL_INV, NULL, 0, 0, 0, mw->rkey, NULL),
			 RPCR_RDEV_WC_LOC_QP_OP_ERR);
		goto sync;
	default:
		break;
	}
	key1 = mw->next_rkey; /* the key the bind gives is known before it is posted */
	CHECK(key1 != mw->rkey && key1 != 0);
	st = mw_bind_op(qp, mw, g.mr, (uintptr_t)g.buf + MW_OFF, MW_LEN,
			k->srv == MW_READ_ONLY ? RPCR_RDEV_ACCESS_REMOTE_READ : rw);
	CHECK_EQ(st, RPCR_RDEV_WC_SUCCESS);
	CHECK_EQ(mw->rkey, key1);
	CHECK(mw->next_rkey != key1);
	if (k->srv == MW_TWICE) {
		st = mw_bind_op(qp, mw, g.mr, (uintptr_t)g.buf + MW_OFF, MW_LEN, rw);
		CHECK_EQ(st, RPCR_RDEV_WC_MW_BIND_ERR);
		goto sync;
	}
	if (k->srv == MW_BOUND) /* (verbs: not while a window is bound over it; rxe: EINVAL) */
		CHECK(rpcr_rdev_mr_dereg(g.mr) != 0);
	if (k->srv == MW_LOCAL_INV || k->srv == MW_OLD_KEY || k->srv == MW_NEW_KEY) {
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_LOCAL_INV, NULL, 0, 0, 0, key1, NULL),
			 RPCR_RDEV_WC_SUCCESS);
		if (k->srv != MW_LOCAL_INV) {
			uint32_t next = mw->next_rkey;

			st = mw_bind_op(qp, mw, g.mr, (uintptr_t)g.buf + MW_OFF, MW_LEN, rw);
			CHECK_EQ(st, RPCR_RDEV_WC_SUCCESS);
			CHECK(mw->rkey != key1); /* a new key on every bind */
			CHECK_EQ(mw->rkey, next);
		}
	}
	v[0] = (uintptr_t)g.buf + MW_OFF;
	v[1] = k->srv == MW_NEW_KEY ? mw->rkey : key1;
	v[2] = MW_LEN;
	ctl_send(&P, 300 + i, 3, v);
	if (k->srv == MW_REMOTE_INV) {
		ctl_sync(&P, 400 + i); /* the client's Send with Invalidate */
		CHECK_EQ(poll_n(&P, &wc, 1, 5000), 1);
		CHECK_EQ(wc.status, RPCR_RDEV_WC_SUCCESS);
		CHECK_EQ(wc.flags, RPCR_RDEV_WC_F_WITH_INV);
		CHECK_EQ(wc.invalidated_rkey, key1);
	}
sync:
	ctl_sync(&P, 500 + i); /* the client acted */
	if (k->want == RPCR_RDEV_WC_SUCCESS && k->opcode != 0xff) {
		CHECK(pattern_ok(g.buf + MW_OFF, k->len, i));
		CHECK(all(g.buf, MW_OFF, 0x3c));
		CHECK(all(g.buf + MW_OFF + k->len, g.len - MW_OFF - k->len, 0x3c));
	} else {
		if (!gbuf_untouched(&g, 0x3c))
			fprintf(stderr, "server memory touched: %s\n", k->what);
		CHECK(gbuf_untouched(&g, 0x3c));
	}
out:
	/* The window first: rxe (6.1) leaks a QP destroyed with a window bound to it (a WARN in
	 * rxe_pool.c, and later QPs fail to reach RTS). */
	if (mw != NULL)
		CHECK_EQ(rpcr_rdev_mw_free(mw), 0);
	if (qp2 != NULL)
		qp_close(&P, qp2);
	if (qp != NULL)
		qp_close(&P, qp);
	gbuf_put(&g);
	gbuf_put(&m);
}

static void
mw_client(const struct mw_case *k, uint32_t i)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_qp *qp, *qp2 = NULL, *use;
	struct gbuf g = {0};
	struct ctl_msg msg;
	struct rpcr_rdev_sge s;
	uint32_t st;

	CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	if (k->srv == MW_OTHER_QP)
		qp2 = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
	use = qp2 != NULL ? qp2 : qp;
	if (k->opcode != 0xff && use != NULL) {
		ctl_recv(&P, 300 + i, &msg);
		if (k->srv == MW_REMOTE_INV) {
			s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, 8, g.mr->lkey};
			CHECK_EQ(do_op(use, RPCR_RDEV_WR_SEND_INV, &s, 1, 0, 0, (uint32_t)msg.v[1],
				       NULL),
				 RPCR_RDEV_WC_SUCCESS);
			ctl_sync(&P, 400 + i);
		}
		pattern(g.buf, k->len, i);
		s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, k->len, g.mr->lkey};
		st = do_op(use, k->opcode, &s, 1, msg.v[0] + (uint64_t)k->delta, (uint32_t)msg.v[1],
			   0, NULL);
		if (st != k->want)
			fprintf(stderr, "window, %s: %s\n", k->what, rpcr_rdev_wc_status_str(st));
		CHECK_EQ(st, k->want);
		if (st == RPCR_RDEV_WC_SUCCESS) { /* and read it back through the window */
			memset(g.buf, 0, k->len);
			CHECK_EQ(do_op(use, RPCR_RDEV_WR_READ, &s, 1, msg.v[0], (uint32_t)msg.v[1],
				       0, NULL),
				 RPCR_RDEV_WC_SUCCESS);
			CHECK(pattern_ok(g.buf, k->len, i));
		}
	}
	ctl_sync(&P, 500 + i);
	if (qp2 != NULL)
		qp_close(&P, qp2);
	if (qp != NULL)
		qp_close(&P, qp);
	gbuf_put(&g);
}

/* Memory windows bound and invalidated by work request: each access inside the window works,
 * each other one fails with REM_ACCESS_ERR touching nothing; each binding error is refused. */
static void
case_memory_window(void)
{
	uint32_t i;

	if (!dev_has(RPCR_RDEV_CAP_MW)) {
		if (!P.server)
			printf("     (memory_window: skipped, the device has no "
			       "RPCR_RDEV_CAP_MW)\n");
		return;
	}
	for (i = 0; i < RTE_DIM(mw_cases); i++) {
		if (getenv("RPCR_CONFORMANCE_VERBOSE") != NULL) /* (which sub-case, as it starts) */
			fprintf(stderr, "%s: window, %s\n", P.server ? "server" : "client",
				mw_cases[i].what);
		if (P.server)
			mw_server(&mw_cases[i], i);
		else
			mw_client(&mw_cases[i], i);
	}
}

/* RC ordering: a Send posted after Writes is seen only after the Writes landed. */
static void
case_ordering(void)
{
	const uint32_t n = 200, slot = 16384;
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 64, 256);
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0}, m = {0};
	struct adv a;
	uint8_t len;
	uint32_t i;

	if (P.server) {
		struct recv_arg ra = {&m, n, 16};

		CHECK_EQ(gbuf_get(&g, (size_t)n * slot,
				  RPCR_RDEV_ACCESS_LOCAL_WRITE | RPCR_RDEV_ACCESS_REMOTE_WRITE),
			 0);
		CHECK_EQ(gbuf_get(&m, (size_t)n * 16, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
		memset(g.buf, 0, g.len);
		a = (struct adv){(uintptr_t)g.buf, g.mr->rkey, (uint32_t)g.len};
		qp = srv_accept(&P, &at, &a, sizeof(a), NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		for (i = 0; qp != NULL && i < n; i++) {
			struct rpcr_rdev_wc wc;

			CHECK_EQ(poll_n(&P, &wc, 1, 5000), 1);
			CHECK_EQ(wc.status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc.wr_id, 1000 + i);
			/* Checked the moment the Send is seen. */
			CHECK(pattern_ok(g.buf + (size_t)i * slot, slot, i));
		}
		ctl_sync(&P, 1);
		qp_close(&P, qp);
		gbuf_put(&m);
	} else {
		CHECK_EQ(gbuf_get(&g, (size_t)n * slot, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
		qp = cli_connect(&P, &at, NULL, 0, (uint8_t *)&a, &len, NULL, NULL);
		CHECK(qp != NULL);
		for (i = 0; qp != NULL && i < n; i++) {
			struct rpcr_rdev_sge ws = {(uintptr_t)(g.buf + (size_t)i * slot), slot,
						   g.mr->lkey};
			struct rpcr_rdev_sge ss = {(uintptr_t)g.buf, 4, g.mr->lkey};
			struct rpcr_rdev_send_wr w[2] = {
				{.wr_id = 1,
				 .sg_list = &ws,
				 .num_sge = 1,
				 .opcode = RPCR_RDEV_WR_WRITE,
				 .rkey = a.rkey,
				 .remote_addr = a.addr + (uint64_t)i * slot},
				{.wr_id = 2,
				 .sg_list = &ss,
				 .num_sge = 1,
				 .opcode = RPCR_RDEV_WR_SEND,
				 .flags = RPCR_RDEV_WR_F_SIGNALED},
			};
			struct rpcr_rdev_wc wc;

			pattern(g.buf + (size_t)i * slot, slot, i);
			CHECK_EQ(rpcr_rdev_post_send(qp, w, 2), 2);
			CHECK_EQ(poll_n(&P, &wc, 1, 5000), 1);
			CHECK_EQ(wc.status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc.wr_id, 2); /* the unsignalled Write reports nothing */
		}
		ctl_sync(&P, 1);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* Private data both ways, full size and empty; a rejection carries its own. */
static void
case_private_data(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 4, 4);
	uint8_t mine[RPCR_RDEV_PDATA_MAX], theirs[RPCR_RDEV_PDATA_MAX];
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_qp *qp;
	uint8_t len = 0;

	pattern(mine, sizeof(mine), P.server ? 2 : 1);
	if (P.server) {
		qp = srv_accept(&P, &at, mine, sizeof(mine), theirs, &len, NULL, NULL);
		CHECK(qp != NULL);
		CHECK_EQ(len, RPCR_RDEV_PDATA_MAX);
		CHECK(pattern_ok(theirs, len, 1));
		ctl_sync(&P, 1);
		qp_close(&P, qp);
		/* Empty private data. */
		qp = srv_accept(&P, &at, NULL, 0, theirs, &len, NULL, NULL);
		CHECK(qp != NULL);
		CHECK(pdata_is(theirs, len, 0));
		ctl_sync(&P, 2);
		qp_close(&P, qp);
		/* A rejection with a reason. The request names the peer: an IPv4 or IPv6 address
		 * that is not the wildcard (shm: 127.0.0.1). */
		CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_CONNECT_REQUEST);
		CHECK(pdata_is(ev.pdata, ev.pdata_len, 3) && memcmp(ev.pdata, "hi?", 3) == 0);
		CHECK(ev.peer.ss_family == AF_INET || ev.peer.ss_family == AF_INET6);
		if (ev.peer.ss_family == AF_INET)
			CHECK(((const struct sockaddr_in *)&ev.peer)->sin_addr.s_addr != 0);
		else if (ev.peer.ss_family == AF_INET6)
			CHECK(!IN6_IS_ADDR_UNSPECIFIED(
				&((const struct sockaddr_in6 *)&ev.peer)->sin6_addr));
		CHECK_EQ(rpcr_rdev_reject(ev.req, "no!", 3), 0);
		ctl_sync(&P, 3);
	} else {
		qp = cli_connect(&P, &at, mine, sizeof(mine), theirs, &len, NULL, NULL);
		CHECK(qp != NULL);
		CHECK_EQ(len, RPCR_RDEV_PDATA_MAX);
		CHECK(pattern_ok(theirs, len, 2));
		ctl_sync(&P, 1);
		qp_close(&P, qp);
		qp = cli_connect(&P, &at, NULL, 0, theirs, &len, NULL, NULL);
		CHECK(qp != NULL);
		CHECK(pdata_is(theirs, len, 0));
		ctl_sync(&P, 2);
		qp_close(&P, qp);
		/* Too much private data is refused before anything is sent. */
		qp = rpcr_rdev_qp_create(P.pd, &at);
		CHECK(qp != NULL);
		CHECK_EQ(rpcr_rdev_connect(qp, P.addr, mine, RPCR_RDEV_PDATA_MAX + 1), -EMSGSIZE);
		CHECK_EQ(rpcr_rdev_connect(qp, P.addr, "hi?", 3), 0);
		CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_REJECTED);
		CHECK(ev.qp == qp);
		CHECK(pdata_is(ev.pdata, ev.pdata_len, 3));
		CHECK(memcmp(ev.pdata, "no!", 3) == 0);
		ctl_sync(&P, 3);
		rpcr_rdev_qp_destroy(qp);
	}
}

/* Disconnect: both sides hear of it and every outstanding receive flushes, in order. */
static void
case_disconnect_flush(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 16);
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_wc wc[16];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	uint32_t k = P.server ? 8 : 4, i;
	struct recv_arg ra = {&g, k, 64};

	CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server)
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
	else
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
	CHECK(qp != NULL);
	ctl_sync(&P, 1);
	if (!P.server)
		CHECK_EQ(rpcr_rdev_disconnect(qp), 0);
	CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_DISCONNECTED);
	CHECK(ev.qp == qp);
	CHECK_EQ(poll_n(&P, wc, (int)k, 5000), (int)k);
	for (i = 0; i < k; i++) {
		CHECK_EQ(wc[i].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[i].wr_id, 1000 + i);
		CHECK_EQ(wc[i].opcode, RPCR_RDEV_WC_RECV);
	}
	/* Work posted after the disconnect flushes too. */
	if (!P.server) {
		struct rpcr_rdev_sge s = {(uintptr_t)g.buf, 8, g.mr->lkey};

		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL),
			 RPCR_RDEV_WC_WR_FLUSH_ERR);
		CHECK_EQ(rpcr_rdev_disconnect(qp), -ENOTCONN);
	}
	ctl_sync(&P, 2);
	qp_close(&P, qp);
	gbuf_put(&g);
}

/* Bursts: one post call, one doorbell; a full send queue takes what fits. */
static void
case_burst(void)
{
	const uint32_t n = 64;
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 16, 128);
	struct rpcr_rdev_wc wc[128];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	uint32_t i;

	CHECK_EQ(gbuf_get(&g, 8192, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		struct recv_arg ra = {&g, 2 * n, 64};

		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		ctl_sync(&P, 2);
		CHECK_EQ(poll_n(&P, wc, 16 + 20, 5000), 16 + 20);
		for (i = 0; i < 36; i++)
			CHECK(wc[i].status == RPCR_RDEV_WC_SUCCESS && wc[i].wr_id == 1000 + i);
		ctl_sync(&P, 3);
		qp_close(&P, qp);
	} else {
		struct rpcr_rdev_send_wr w[64];
		struct rpcr_rdev_sge s = {(uintptr_t)g.buf, 32, g.mr->lkey};
		uint64_t db;

		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		for (i = 0; i < n; i++)
			w[i] = (struct rpcr_rdev_send_wr){.wr_id = i,
							  .sg_list = &s,
							  .num_sge = 1,
							  .opcode = RPCR_RDEV_WR_SEND,
							  .flags = RPCR_RDEV_WR_F_SIGNALED};
		db = qp->stats.doorbells;
		/* 16 slots: the burst stops there, with EAGAIN, one doorbell. */
		CHECK_EQ(rpcr_rdev_post_send(qp, w, (uint16_t)n), 16);
		CHECK_EQ(rte_errno, EAGAIN);
		CHECK_EQ(qp->stats.doorbells, db + 1);
		CHECK_EQ(poll_n(&P, wc, 16, 5000), 16);
		for (i = 0; i < 16; i++)
			CHECK(wc[i].status == RPCR_RDEV_WC_SUCCESS && wc[i].wr_id == i);
		/* Completions polled free the slots; unsignalled WRs hold theirs until a later
		 * signalled one completes. */
		for (i = 16; i < 36; i++)
			w[i].flags = (i == 35 || i == 31) ? RPCR_RDEV_WR_F_SIGNALED : 0;
		CHECK_EQ(rpcr_rdev_post_send(qp, w + 16, 16), 16);
		CHECK_EQ(rpcr_rdev_post_send(qp, w + 32, 4), 0); /* all 16 slots held */
		CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
		CHECK_EQ(wc[0].wr_id, 31);
		CHECK_EQ(rpcr_rdev_post_send(qp, w + 32, 4), 4);
		CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
		CHECK_EQ(wc[0].wr_id, 35);
		ctl_sync(&P, 2);
		ctl_sync(&P, 3);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/* A peer that dies: a disconnect event and flushes (run last: the server does not survive it). */
static void
case_peer_death(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_event ev;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	struct recv_arg ra = {&g, 4, 64};
	uint32_t i;

	CHECK_EQ(gbuf_get(&g, 4096, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		ctl_sync(&P, 1);
		/* Die without a word: the kernel closes our socket. */
		raise(SIGKILL);
	}
	qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
	CHECK(qp != NULL);
	ctl_sync(&P, 1);
	CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_DISCONNECTED);
	CHECK(ev.qp == qp);
	CHECK_EQ(poll_n(&P, wc, 4, 5000), 4);
	for (i = 0; i < 4; i++)
		CHECK(wc[i].status == RPCR_RDEV_WC_WR_FLUSH_ERR && wc[i].wr_id == 1000 + i);
	qp_close(&P, qp);
	gbuf_put(&g);
}

/* ---- completion events (RPCR_RDEV_CAP_CQ_EVENT) ---- */

/* How a sleep ended (cq_sleep()). */
enum sleep_how {
	SLEEP_EAGAIN, /* the arm said work was on its way: not armed */
	SLEEP_FOUND,  /* the poll after the arm found a completion */
	SLEEP_WOKEN,  /* the fd woke the sleeper */
	SLEEP_TIMEOUT,
	SLEEP_N,
};

/* The CQ's fd readable within @ms. */
static bool
cq_fd_wait(int ms)
{
	struct pollfd pfd = {.fd = rpcr_rdev_cq_event_fd(P.cq), .events = POLLIN};
	int rc;

	do {
		rc = poll(&pfd, 1, ms);
	} while (rc < 0 && errno == EINTR);
	return rc > 0;
}

/* Sleep as rpcr_rdev.h says, at most @ms: arm, poll once more, wait for the fd, disarm, poll.
 * @return the completions taken (into @wc, up to @n); *how: how the sleep ended. */
static int
cq_sleep(struct rpcr_rdev_wc *wc, int n, int ms, enum sleep_how *how)
{
	int rc = rpcr_rdev_cq_arm(P.cq), got;

	if (rc == -EAGAIN) {
		*how = SLEEP_EAGAIN;
		return rpcr_rdev_poll_cq(P.cq, wc, (uint16_t)n);
	}
	CHECK_EQ(rc, 0);
	got = rpcr_rdev_poll_cq(P.cq, wc, (uint16_t)n);
	if (got != 0) {
		*how = SLEEP_FOUND;
	} else {
		*how = cq_fd_wait(ms) ? SLEEP_WOKEN : SLEEP_TIMEOUT;
	}
	rpcr_rdev_cq_disarm(P.cq);
	return got != 0 ? got : rpcr_rdev_poll_cq(P.cq, wc, (uint16_t)n);
}

/* Sleeping on a CQ: a completion after the arm wakes the sleeper, one before it is found by the
 * poll after the arm, a disarm consumes the events (a later sleep with nothing to come times
 * out), the sleeper's own Send completes into its sleep. */
static void
case_cq_event(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8);
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0};
	struct recv_arg ra = {&g, 8, 64};
	struct rpcr_rdev_sge s;
	enum sleep_how how;
	int i, got;

	if (!dev_has(RPCR_RDEV_CAP_CQ_EVENT)) {
		if (!P.server)
			printf("     (cq_event: skipped, the device has no "
			       "RPCR_RDEV_CAP_CQ_EVENT)\n");
		CHECK_EQ(rpcr_rdev_cq_arm(P.cq), -ENOTSUP);
		return;
	}
	CHECK(rpcr_rdev_cq_event_fd(P.cq) >= 0);
	CHECK_EQ(gbuf_get(&g, 8 * 64, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	s = (struct rpcr_rdev_sge){(uintptr_t)g.buf, 16, g.mr->lkey};
	if (P.server) {
		qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		/* After the arm: the fd wakes the sleeper. */
		CHECK_EQ(rpcr_rdev_cq_arm(P.cq), 0);
		CHECK_EQ(rpcr_rdev_poll_cq(P.cq, wc, 4), 0);
		CHECK(!cq_fd_wait(0));
		ctl_sync(&P, 1); /* the client sends in 50 ms */
		CHECK(cq_fd_wait(5000));
		rpcr_rdev_cq_disarm(P.cq);
		CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
		CHECK(wc[0].status == RPCR_RDEV_WC_SUCCESS && wc[0].opcode == RPCR_RDEV_WC_RECV);
		/* Before the arm: the poll after it finds it. */
		ctl_sync(&P, 2);
		ctl_sync(&P, 3); /* its Send completed: ours is in the CQ */
		got = cq_sleep(wc, 4, 5000, &how);
		CHECK_EQ(got, 1);
		CHECK(how == SLEEP_FOUND || how == SLEEP_EAGAIN);
		CHECK(wc[0].status == RPCR_RDEV_WC_SUCCESS && wc[0].opcode == RPCR_RDEV_WC_RECV);
		/* Nothing to come: a sleep times out (at most one early wake-up from an event
		 * raised before, which a disarm consumes). */
		for (i = 0; i < 3; i++) {
			CHECK_EQ(cq_sleep(wc, 4, 200, &how), 0);
			if (how == SLEEP_TIMEOUT)
				break;
		}
		CHECK(how == SLEEP_TIMEOUT);
		/* Our own Send's completion ends a sleep too. */
		pattern(g.buf, 16, 7);
		{
			struct rpcr_rdev_send_wr w = {.wr_id = 55,
						      .sg_list = &s,
						      .num_sge = 1,
						      .opcode = RPCR_RDEV_WR_SEND,
						      .flags = RPCR_RDEV_WR_F_SIGNALED};

			CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
		}
		got = 0;
		for (i = 0; i < 3 && got == 0; i++)
			got = cq_sleep(wc, 4, 5000, &how);
		CHECK_EQ(got, 1);
		CHECK_EQ(wc[0].wr_id, 55);
		ctl_sync(&P, 4);
		qp_close(&P, qp);
	} else {
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
		CHECK(qp != NULL);
		ctl_sync(&P, 1);
		usleep(50000);
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL), RPCR_RDEV_WC_SUCCESS);
		ctl_sync(&P, 2);
		CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL), RPCR_RDEV_WC_SUCCESS);
		ctl_sync(&P, 3);
		CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
		CHECK(wc[0].status == RPCR_RDEV_WC_SUCCESS && wc[0].opcode == RPCR_RDEV_WC_RECV);
		ctl_sync(&P, 4);
		qp_close(&P, qp);
	}
	gbuf_put(&g);
}

/*
 * No lost wake-up: the server sleeps for each of the client's messages (arm, poll, wait on the
 * fd; a wait of 5 s is a lost wake-up) and answers it; the client sends the next one a random
 * 0-1.5 us (one in four: 0-8 us) after the answer arrived, so that its Send lands at every point
 * of the server's way to sleep. Rounds: RPCR_CONFORMANCE_RACE_ROUNDS (default 20000). With
 * @srq (case cq_event_race_srq), the server's QP takes its receives from a shared receive queue,
 * whose completions a driver may produce another way (shm: in the queue's slots).
 */
static void
cq_event_race(bool srq_on)
{
	const char *env = getenv("RPCR_CONFORMANCE_RACE_ROUNDS");
	const uint32_t rounds = env != NULL ? (uint32_t)strtoul(env, NULL, 0) : 20000;
	const uint32_t nrecv = 32;
	const char *name = srq_on ? "cq_event_race_srq" : "cq_event_race";
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 64, nrecv);
	struct rpcr_rdev_srq_attr sa = {.max_wr = nrecv, .max_sge = 1};
	struct rpcr_rdev_srq *srq = NULL;
	struct rpcr_rdev_wc wc[8];
	struct rpcr_rdev_qp *qp;
	struct gbuf g = {0}, out = {0};
	struct recv_arg ra = {&g, nrecv, 64};
	uint64_t hows[SLEEP_N] = {0}, rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	uint32_t k, done = 0;
	bool lost = false;

	if (!dev_has(RPCR_RDEV_CAP_CQ_EVENT) || (srq_on && !dev_has(RPCR_RDEV_CAP_SRQ))) {
		if (!P.server)
			printf("     (%s: skipped, the device has no RPCR_RDEV_CAP_CQ_EVENT%s)\n",
			       name, srq_on ? " or no RPCR_RDEV_CAP_SRQ" : "");
		return;
	}
	CHECK_EQ(gbuf_get(&g, nrecv * 64, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	CHECK_EQ(gbuf_get(&out, 64, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server && srq_on) {
		srq = rpcr_rdev_srq_create(P.pd, &sa);
		CHECK(srq != NULL);
		for (k = 0; srq != NULL && k < nrecv; k++) {
			struct rpcr_rdev_sge r = {(uintptr_t)(g.buf + k * 64), 64, g.mr->lkey};
			struct rpcr_rdev_recv_wr rw = {
				.wr_id = 1000 + k, .sg_list = &r, .num_sge = 1};

			CHECK_EQ(rpcr_rdev_post_srq_recv(srq, &rw, 1), 1);
		}
		at.srq = srq;
	}
	qp = P.server ? srv_accept(&P, &at, NULL, 0, NULL, NULL, srq != NULL ? NULL : before_post,
				   &ra)
		      : cli_connect(&P, &at, NULL, 0, NULL, NULL, before_post, &ra);
	CHECK(qp != NULL);
	ctl_sync(&P, 1);
	for (k = 0; qp != NULL && k < rounds && !lost; k++) {
		struct rpcr_rdev_sge s = {(uintptr_t)out.buf, 4, out.mr->lkey};
		/* Signalled one in 16: the send queue's slots come back. */
		struct rpcr_rdev_send_wr w = {.wr_id = k,
					      .sg_list = &s,
					      .num_sge = 1,
					      .opcode = RPCR_RDEV_WR_SEND,
					      .flags = k % 16 == 15 ? RPCR_RDEV_WR_F_SIGNALED : 0};
		bool have = false;

		if (!P.server) {
			uint64_t until;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* Mostly within the server's way to sleep (about a microsecond after
			 * it answers), sometimes well after it is asleep. */
			until = rte_rdtsc() + ((rng & 3) == 0 ? rng % 8000 : rng % 1500) *
						      rte_get_tsc_hz() / 1000000000ull;
			while (rte_rdtsc() < until)
				;
			memcpy(out.buf, &k, 4);
			CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
		}
		/* Wait for message k (server: sleeping; client: spinning for the answer). */
		while (!have && !lost) {
			enum sleep_how how = SLEEP_FOUND;
			int got, j;

			if (P.server) {
				got = cq_sleep(wc, 8, 5000, &how);
				hows[how]++;
				/* (A message found only after the 5 s is a lost wake-up too.) */
				if (how == SLEEP_TIMEOUT) {
					fprintf(stderr, "%s: round %u: no wake-up in 5 s\n", name,
						k);
					lost = true;
				}
			} else {
				got = poll_n(&P, wc, 1, 5000);
				if (got == 0) {
					fprintf(stderr, "%s: round %u: no answer\n", name, k);
					lost = true;
				}
			}
			for (j = 0; j < got; j++) {
				uint32_t v;

				CHECK_EQ(wc[j].status, RPCR_RDEV_WC_SUCCESS);
				if (wc[j].opcode != RPCR_RDEV_WC_RECV)
					continue;
				memcpy(&v, g.buf + (wc[j].wr_id - 1000) * 64, 4);
				CHECK_EQ(v, k);
				have = true;
				done++;
				{
					struct rpcr_rdev_sge r = {
						(uintptr_t)(g.buf + (wc[j].wr_id - 1000) * 64), 64,
						g.mr->lkey};
					struct rpcr_rdev_recv_wr rw = {
						.wr_id = wc[j].wr_id, .sg_list = &r, .num_sge = 1};

					CHECK_EQ(srq != NULL ? rpcr_rdev_post_srq_recv(srq, &rw, 1)
							     : rpcr_rdev_post_recv(qp, &rw, 1),
						 1);
				}
			}
		}
		if (P.server && have) {
			memcpy(out.buf, &k, 4);
			CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
		}
	}
	CHECK(!lost);
	CHECK_EQ(done, rounds);
	if (P.server) {
		printf("     %s: %u rounds: woken %" PRIu64 ", found after the arm %" PRIu64
		       ", not armed (work on its way) %" PRIu64 "\n",
		       name, rounds, hows[SLEEP_WOKEN], hows[SLEEP_FOUND], hows[SLEEP_EAGAIN]);
		fflush(stdout);
		CHECK(hows[SLEEP_WOKEN] > 0);
		CHECK_EQ(hows[SLEEP_TIMEOUT], 0);
	}
	ctl_sync(&P, 2);
	qp_close(&P, qp);
	if (srq != NULL)
		CHECK_EQ(rpcr_rdev_srq_destroy(srq), 0);
	gbuf_put(&out);
	gbuf_put(&g);
}

static void
case_cq_event_race(void)
{
	cq_event_race(false);
}

static void
case_cq_event_race_srq(void)
{
	cq_event_race(true);
}

/*
 * srq: the server's two QPs take their receives from one shared receive queue. Sends from both
 * of the client's QPs consume its receives in the order posted, each completion naming the QP it
 * arrived on and holding what was sent there; a receive cannot be posted on such a QP, nor more
 * than the SRQ holds; the limit event comes once fewer receives than the limit are left (not
 * before); a QP that fails takes none of the SRQ's receives with it (the other QP's next Sends
 * find them); an SRQ in use cannot be destroyed; receives a destroyed QP's peer filled, not
 * polled, come back with no QP.
 */
#define SRQ_BUF 256u

/* Server: take @n receive completions; check each against the payload (qp index, message). */
static void
srq_expect(struct rpcr_rdev_qp *const *qps, const struct gbuf *g, uint32_t n, uint64_t *first_wr,
	   uint32_t *next_msg)
{
	struct rpcr_rdev_wc wc[32];
	uint32_t got = 0, j;
	uint64_t deadline = now_ns() + 5000000000ull;

	while (got < n && now_ns() < deadline) {
		int k = rpcr_rdev_poll_cq(P.cq, wc, (uint16_t)RTE_MIN(n - got, 32u));

		for (j = 0; j < (uint32_t)k; j++) {
			uint32_t v[2] = {0, 0}, q;

			CHECK_EQ(wc[j].status, RPCR_RDEV_WC_SUCCESS);
			CHECK_EQ(wc[j].opcode, RPCR_RDEV_WC_RECV);
			CHECK_EQ(wc[j].byte_len, 8);
			/* One of the SRQ's receives, never taken twice (the bitmap of those seen). */
			CHECK(wc[j].wr_id >= 5000 && wc[j].wr_id < 5000 + 64);
			if (wc[j].wr_id < 5000 || wc[j].wr_id >= 5000 + 64)
				continue;
			CHECK_EQ(*first_wr & (1ull << (wc[j].wr_id - 5000)), 0);
			*first_wr |= 1ull << (wc[j].wr_id - 5000);
			memcpy(v, g->buf + (wc[j].wr_id - 5000) * SRQ_BUF, sizeof(v));
			q = wc[j].qp == qps[0] ? 0 : wc[j].qp == qps[1] ? 1 : 2;
			CHECK_EQ(v[0], q);
			/* In order per QP. */
			if (q < 2) {
				CHECK_EQ(v[1], next_msg[q]);
				next_msg[q]++;
			}
		}
		got += (uint32_t)k;
	}
	CHECK_EQ(got, n);
}

static void
srq_post(struct rpcr_rdev_srq *srq, const struct gbuf *g, uint32_t from, uint32_t n)
{
	uint32_t i;

	for (i = from; i < from + n; i++) {
		struct rpcr_rdev_sge s = {(uintptr_t)(g->buf + (size_t)(i % 64) * SRQ_BUF), SRQ_BUF,
					  g->mr->lkey};
		struct rpcr_rdev_recv_wr w = {.wr_id = 5000 + i % 64, .sg_list = &s, .num_sge = 1};

		CHECK_EQ(rpcr_rdev_post_srq_recv(srq, &w, 1), 1);
	}
}

/* Client: send message (qp index @q, number @m) on @qp. */
static void
srq_send(struct rpcr_rdev_qp *qp, const struct gbuf *out, uint32_t q, uint32_t m)
{
	struct rpcr_rdev_sge s = {(uintptr_t)(out->buf + (size_t)q * 64 + (m % 8) * 8), 8,
				  out->mr->lkey};
	struct rpcr_rdev_send_wr w = {.wr_id = m,
				      .sg_list = &s,
				      .num_sge = 1,
				      .opcode = RPCR_RDEV_WR_SEND,
				      .flags = RPCR_RDEV_WR_F_SIGNALED};
	struct rpcr_rdev_wc wc;
	uint32_t v[2] = {q, m};

	memcpy(out->buf + (size_t)q * 64 + (m % 8) * 8, v, sizeof(v));
	CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
	CHECK_EQ(poll_n(&P, &wc, 1, 5000), 1);
	CHECK_EQ(wc.status, RPCR_RDEV_WC_SUCCESS);
}

/* Server: the next event of @type (others are not expected here), or -1 after @ms. */
static int
srq_event(enum rpcr_rdev_event_type type, struct rpcr_rdev_event *ev, int ms)
{
	int t = wait_event(&P, ev, ms);

	if (t >= 0 && t != (int)type)
		fprintf(stderr, "srq: event %s where %s was awaited\n",
			rpcr_rdev_event_str((enum rpcr_rdev_event_type)t),
			rpcr_rdev_event_str(type));
	return t;
}

static void
case_srq(void)
{
	const uint32_t max_wr = 16, limit = 4;
	struct rpcr_rdev_srq_attr sa = {.max_wr = max_wr, .max_sge = 1};
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 16, 32);
	struct rpcr_rdev_qp *qps[2] = {NULL, NULL};
	struct rpcr_rdev_srq *srq = NULL;
	struct rpcr_rdev_event ev;
	struct gbuf g = {0};
	uint64_t seen = 0;
	uint32_t next[2] = {0, 0}, i;

	if (!dev_has(RPCR_RDEV_CAP_SRQ)) {
		if (!P.server)
			printf("     (srq: skipped, the device has no RPCR_RDEV_CAP_SRQ)\n");
		return;
	}
	CHECK_EQ(gbuf_get(&g, 64 * SRQ_BUF, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (P.server) {
		struct rpcr_rdev_sge s = {(uintptr_t)g.buf, SRQ_BUF, g.mr->lkey};
		struct rpcr_rdev_recv_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1};

		srq = rpcr_rdev_srq_create(P.pd, &sa);
		CHECK(srq != NULL);
		if (srq == NULL)
			goto out;
		CHECK(srq->max_wr >= max_wr);
		/* Exactly as many as it holds (the device may hold more than asked). */
		srq_post(srq, &g, 0, srq->max_wr);
		rte_errno = 0;
		CHECK_EQ(rpcr_rdev_post_srq_recv(srq, &w, 1), 0);
		CHECK(rte_errno == EAGAIN || rte_errno == ENOMEM);
		CHECK_EQ(rpcr_rdev_srq_arm(srq, limit), 0);
		at.srq = srq;
		for (i = 0; i < 2; i++) {
			qps[i] = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
			CHECK(qps[i] != NULL);
		}
		/* Not on a QP of an SRQ. */
		rte_errno = 0;
		if (qps[0] != NULL) {
			CHECK_EQ(rpcr_rdev_post_recv(qps[0], &w, 1), 0);
			CHECK_EQ(rte_errno, EINVAL);
		}
		CHECK_EQ(rpcr_rdev_srq_destroy(srq), -EBUSY);
	} else {
		for (i = 0; i < 2; i++) {
			qps[i] = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
			CHECK(qps[i] != NULL);
		}
	}
	if (qps[0] == NULL || qps[1] == NULL)
		goto out;
	ctl_sync(&P, 1);

	/* 1. Ten messages, alternating between the two QPs. */
	if (!P.server)
		for (i = 0; i < 10; i++)
			srq_send(qps[i % 2], &g, i % 2, i / 2);
	ctl_sync(&P, 2);
	if (P.server) {
		srq_expect(qps, &g, 10, &seen, next);
		/* The first ten posted, consumed in order. */
		CHECK_EQ(seen, 0x3ffull);
		/* Left: max_wr - 10, not below the limit (on a device holding exactly 16). */
		if (srq->max_wr - 10 >= limit)
			CHECK_EQ(wait_event(&P, &ev, 200), -1);
	}
	ctl_sync(&P, 3);

	/* 2. Below the limit: the event, once. */
	if (!P.server) {
		struct ctl_msg m;

		ctl_recv(&P, 4, &m);
		for (i = 0; i < m.v[0]; i++)
			srq_send(qps[0], &g, 0, 5 + i);
	} else {
		uint64_t n = srq->max_wr - 10 - (limit - 1);

		ctl_send(&P, 4, 1, &n);
		srq_expect(qps, &g, (uint32_t)n, &seen, next);
		CHECK_EQ(srq_event(RPCR_RDEV_EVENT_SRQ_LIMIT, &ev, 5000),
			 RPCR_RDEV_EVENT_SRQ_LIMIT);
		CHECK(ev.srq == srq);
		CHECK_EQ(wait_event(&P, &ev, 200), -1); /* once */
		/* Refill what was taken (their buffers again; the wr_ids are the slot numbers). */
		srq_post(srq, &g, srq->max_wr, srq->max_wr - (limit - 1));
		seen = 0;
	}
	ctl_sync(&P, 5);

	/* 3. The first QP fails: the SRQ's receives stay for the second. */
	if (!P.server) {
		rpcr_rdev_disconnect(qps[0]);
	} else {
		struct rpcr_rdev_wc wc[32];
		uint64_t deadline = now_ns() + 300000000ull;

		CHECK_EQ(srq_event(RPCR_RDEV_EVENT_DISCONNECTED, &ev, 5000),
			 RPCR_RDEV_EVENT_DISCONNECTED);
		CHECK(ev.qp == qps[0]);
		/* Nothing of the SRQ is flushed with it. */
		while (now_ns() < deadline) {
			int k = rpcr_rdev_poll_cq(P.cq, wc, 32), j;

			for (j = 0; j < k; j++)
				CHECK(wc[j].opcode != RPCR_RDEV_WC_RECV || wc[j].wr_id < 5000);
		}
	}
	ctl_sync(&P, 6);
	if (!P.server)
		for (i = 0; i < 6; i++)
			srq_send(qps[1], &g, 1, 5 + i);
	ctl_sync(&P, 7);
	if (P.server) {
		srq_expect(qps, &g, 6, &seen, next);
		CHECK_EQ(next[1], 11);
	}
	ctl_sync(&P, 8);

	/* 4. Two more arrive on the second QP, which is destroyed before they are polled: they
	 * come back with no QP, flushed, their buffers the application's again. */
	if (!P.server)
		for (i = 0; i < 2; i++)
			srq_send(qps[1], &g, 1, 11 + i);
	ctl_sync(&P, 9);
	if (P.server) {
		struct rpcr_rdev_wc wc[8];
		uint64_t deadline = now_ns() + 1000000000ull;
		uint32_t orphans = 0;

		CHECK_EQ(rpcr_rdev_qp_destroy(qps[1]), 0);
		qps[1] = NULL;
		while (now_ns() < deadline && orphans < 2) {
			int k = rpcr_rdev_poll_cq(P.cq, wc, 8), j;

			for (j = 0; j < k; j++) {
				if (wc[j].opcode != RPCR_RDEV_WC_RECV)
					continue;
				CHECK(wc[j].qp == NULL);
				CHECK_EQ(wc[j].status, RPCR_RDEV_WC_WR_FLUSH_ERR);
				CHECK(wc[j].wr_id >= 5000 && wc[j].wr_id < 5000 + 64);
				orphans++;
			}
		}
		CHECK_EQ(orphans, 2);
	}
	ctl_sync(&P, 10);
out:
	for (i = 0; i < 2; i++)
		qp_close(&P, qps[i]);
	if (srq != NULL)
		CHECK_EQ(rpcr_rdev_srq_destroy(srq), 0);
	ctl_sync(&P, 11);
	gbuf_put(&g);
}

/*
 * A request taken by the listener of one handle, accepted on a QP of another handle of the same
 * device (what a server spreading its connections over pollers does): the connection works on
 * the second handle, whose event queue has its events (ESTABLISHED, DISCONNECTED), the first's
 * none; the first handle's listener goes on taking requests.
 */
static void
case_accept_elsewhere(void)
{
	struct rpcr_rdev_qp_attr at = qp_attr(&P, 8, 8), aq;
	struct rpcr_rdev_qp *qp = NULL;
	struct rpcr_rdev_wc wc[4];
	struct rpcr_rdev_event ev;
	struct player q = P;
	struct gbuf g = {0};
	uint8_t pd[RPCR_RDEV_PDATA_MAX], plen = 0;
	uint32_t i;

	CHECK_EQ(gbuf_get(&g, 4 * 256, RPCR_RDEV_ACCESS_LOCAL_WRITE), 0);
	if (!P.server) {
		struct recv_arg ra = {&g, 1, 256};

		qp = cli_connect(&P, &at, NULL, 0, pd, &plen, before_post, &ra);
		CHECK(qp != NULL);
		CHECK(plen >= 2 && memcmp(pd, "B", 2) == 0);
		ctl_sync(&P, 1);
		for (i = 0; qp != NULL && i < 3; i++) {
			struct rpcr_rdev_sge s = {(uintptr_t)(g.buf + 256 + i * 64), 64,
						  g.mr->lkey};

			pattern(g.buf + 256 + i * 64, 64, 40 + i);
			CHECK_EQ(do_op(qp, RPCR_RDEV_WR_SEND, &s, 1, 0, 0, 0, NULL),
				 RPCR_RDEV_WC_SUCCESS);
		}
		/* The answer, from the other handle's QP. */
		CHECK_EQ(poll_n(&P, wc, 1, 5000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
		CHECK_EQ(wc[0].byte_len, 32);
		CHECK(pattern_ok(g.buf, 32, 50));
		ctl_sync(&P, 2);
		if (qp != NULL)
			CHECK_EQ(rpcr_rdev_disconnect(qp), 0);
		CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_DISCONNECTED);
		ctl_sync(&P, 3);
		qp_close(&P, qp);
		/* The first handle's listener still serves. */
		qp = cli_connect(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
		CHECK(qp != NULL);
		ctl_sync(&P, 4);
		qp_close(&P, qp);
		gbuf_put(&g);
		return;
	}
	/* The second handle: its own protection domain, CQ and registration. */
	q.listener = NULL;
	q.dev = rpcr_rdev_open(P.devargs);
	CHECK(q.dev != NULL);
	if (q.dev == NULL)
		goto out;
	q.pd = rpcr_rdev_pd_alloc(q.dev);
	q.cq = q.pd != NULL ? rpcr_rdev_cq_create(q.dev, 64) : NULL;
	CHECK(q.cq != NULL);
	rpcr_rdev_mr_dereg(g.mr);
	g.mr = q.pd != NULL ? rpcr_rdev_mr_reg(q.pd, g.buf, g.len, RPCR_RDEV_ACCESS_LOCAL_WRITE)
			    : NULL;
	CHECK(g.mr != NULL);
	if (q.cq == NULL || g.mr == NULL)
		goto out;
	CHECK_EQ(wait_event(&P, &ev, 5000), RPCR_RDEV_EVENT_CONNECT_REQUEST);
	aq = qp_attr(&q, 8, 8);
	qp = rpcr_rdev_qp_create(q.pd, &aq);
	CHECK(qp != NULL);
	if (qp == NULL) {
		rpcr_rdev_reject(ev.req, NULL, 0);
		goto out;
	}
	post_recvs(qp, &g, 3, 256);
	CHECK_EQ(rpcr_rdev_accept(qp, ev.req, "B", 2), 0);
	CHECK_EQ(wait_event(&q, &ev, 5000), RPCR_RDEV_EVENT_ESTABLISHED);
	CHECK(ev.qp == qp);
	ctl_sync(&P, 1);
	CHECK_EQ(poll_n(&q, wc, 3, 5000), 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(wc[i].status, RPCR_RDEV_WC_SUCCESS);
		CHECK(wc[i].qp == qp);
		CHECK_EQ(wc[i].wr_id, 1000 + i);
		CHECK_EQ(wc[i].byte_len, 64);
		CHECK(pattern_ok(g.buf + i * 256, 64, 40 + i));
	}
	{
		struct rpcr_rdev_sge s = {(uintptr_t)(g.buf + 768), 32, g.mr->lkey};
		struct rpcr_rdev_send_wr w = {.wr_id = 9,
					      .sg_list = &s,
					      .num_sge = 1,
					      .opcode = RPCR_RDEV_WR_SEND,
					      .flags = RPCR_RDEV_WR_F_SIGNALED};

		pattern(g.buf + 768, 32, 50);
		CHECK_EQ(rpcr_rdev_post_send(qp, &w, 1), 1);
		CHECK_EQ(poll_n(&q, wc, 1, 5000), 1);
		CHECK_EQ(wc[0].status, RPCR_RDEV_WC_SUCCESS);
	}
	ctl_sync(&P, 2);
	CHECK_EQ(wait_event(&q, &ev, 5000), RPCR_RDEV_EVENT_DISCONNECTED);
	CHECK(ev.qp == qp);
	CHECK_EQ(wait_event(&P, &ev, 100), -1); /* nothing of it on the listener's handle */
	ctl_sync(&P, 3);
	qp_close(&q, qp);
	qp = srv_accept(&P, &at, NULL, 0, NULL, NULL, NULL, NULL);
	CHECK(qp != NULL);
	ctl_sync(&P, 4);
	qp_close(&P, qp);
out:
	if (g.mr != NULL)
		rpcr_rdev_mr_dereg(g.mr);
	g.mr = NULL;
	gbuf_put(&g);
	if (q.cq != NULL)
		rpcr_rdev_cq_destroy(q.cq);
	if (q.pd != NULL)
		rpcr_rdev_pd_free(q.pd);
	if (q.dev != NULL)
		CHECK_EQ(rpcr_rdev_close(q.dev), 0);
}

struct conf_case {
	const char *name;
	void (*fn)(void);
};

static const struct conf_case cases[] = {
	{"send_recv", case_send_recv},
	{"inline", case_inline},
	{"rnr", case_rnr},
	{"length_error", case_length_error},
	{"write_read", case_write_read},
	{"bad_access", case_bad_access},
	{"local_protection", case_local_protection},
	{"remote_invalidate", case_remote_invalidate},
	{"memory_window", case_memory_window},
	{"ordering", case_ordering},
	{"private_data", case_private_data},
	{"disconnect_flush", case_disconnect_flush},
	{"burst", case_burst},
	{"cq_event", case_cq_event},
	{"cq_event_race", case_cq_event_race},
	{"cq_event_race_srq", case_cq_event_race_srq},
	{"srq", case_srq},
	{"accept_elsewhere", case_accept_elsewhere},
	{"peer_death", case_peer_death}, /* last */
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"addr", required_argument, NULL, 'a'},
					     {"cdev", required_argument, NULL, 'c'},
					     {NULL, 0, NULL, 0}};
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 48u << 20,
		.cq_depth = 1024,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
	};
	unsigned long failed_cases = 0, run = 0;
	bool selected[RTE_DIM(cases)];
	int c, status;
	size_t i;

	while ((c = getopt_long(argc, argv, "d:a:c:", opts, NULL)) != -1) {
		if (c == 'd')
			hc.devargs = optarg;
		else if (c == 'c')
			hc.cdevargs = optarg;
		else if (c == 'a')
			hc.addr = optarg;
		else
			return 2;
	}
	for (i = 0; i < RTE_DIM(cases); i++) {
		int a;

		selected[i] = optind == argc;
		for (a = optind; a < argc; a++)
			selected[i] |= strcmp(argv[a], cases[i].name) == 0;
	}
	alarm(300);
	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;

	for (i = 0; i < RTE_DIM(cases); i++) {
		unsigned long before = rpcr_test_failed;
		struct ctl_msg m;
		uint64_t mine;

		if (!selected[i])
			continue;
		ctl_sync(&P, 0x1000 + (uint32_t)i);
		cases[i].fn(); /* the server never returns from peer_death */
		mine = rpcr_test_failed - before;
		if (P.server) {
			ctl_send(&P, 0x2000 + (uint32_t)i, 1, &mine);
			continue;
		}
		if (cases[i].fn == case_peer_death)
			m.v[0] = 0;
		else
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
	if (selected[RTE_DIM(cases) - 1]) {
		/* peer_death: the server was meant to die by SIGKILL. */
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			failed_cases++;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("server exited badly (status 0x%x)\n", status);
		failed_cases++;
	}
	printf("%s: %lu case(s) run, %lu failed\n", hc.devargs, run, failed_cases);
	return failed_cases != 0;
}
