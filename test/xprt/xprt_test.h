/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_TEST_H
#define XPRT_TEST_H

/*
 * Helpers shared by the engine's end-to-end tests and benchmarks: test-program argument
 * encoders and result decoders, data buffers in an arena wrapped as chains, a server loop driven
 * over the harness's control channel.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rpcr_mem.h>
#include <rpcr_xprt.h>

#include "rdev_harness.h"

/* A data buffer in the arena: contiguous, or split into @pieces runs that are not contiguous
 * (to get several segments per chunk). */
struct tbuf {
	uint8_t *mem; /* backing allocation */
	uint32_t len; /* data bytes */
	uint32_t pieces;
	struct rpcr_mem_reg *reg;
	struct rte_mbuf *m; /* the chain over it */
};

/* The access tbuf_make() registers with (0: rpcr_xprt_poller_mem_access()'s). */
extern uint32_t tbuf_access;
int tbuf_make(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_mem_cache *mc,
	      struct tbuf *t, uint32_t len, uint32_t pieces);
void tbuf_free(struct rpcr_mem_cache *mc, struct tbuf *t);
/* Byte i of chain @m (slow; tests only). */
uint8_t tbuf_byte(const struct tbuf *t, uint32_t i);
void tbuf_fill(struct tbuf *t, uint32_t seed);
void tbuf_clear(struct tbuf *t);

/* Test program encoders/decoders. */
struct tp_echo_res {
	struct rpcr_bulk b; /* where the result landed */
	uint32_t max;
	int got;
};
/* res: struct tp_echo_res *; holds the view's chain (rte_pktmbuf_free(res->b.m) after use) */
int tp_dec_bulk(struct rpcr_msg *m, void *res);
int tp_dec_u32(struct rpcr_msg *m, void *res); /* res: uint32_t * */
bool bulk_equals_pattern(const struct rpcr_bulk *b);
bool bulk_equals(const struct rpcr_bulk *b, const struct rpcr_bulk *want);

/* Server commands over the control channel. */
enum {
	CMD_START = 0x100, /* v: credits, inline_send, inline_recv, remote_inv, no_draft,
			      decoupled, threshold */
	CMD_STOP,
	CMD_CRASH_ON_CALL, /* destroy the server right after a poll that received a call, and
			      start it again */
	CMD_STATS,         /* reply: calls_recv, replies_sent, rdma_errors_sent, hold_max,
			      bad_headers */
	CMD_HOLD,          /* v: how many HOLD calls to collect before answering them */
	CMD_PAUSE,         /* v: milliseconds the server stops polling (after the ACK) */
	CMD_INFO,          /* reply: connections, wc_errors, rdma_errors_sent, bad_headers,
			      overruns, calls_recv, replies_sent, limit_chunks +
			      limit_call_bytes */
	CMD_DEV_STATS,     /* reply: the server device's disconnects, fault_disconnects,
			      fault_reg, fault_recv, fault_delayed, fault_last_tsc */
	CMD_ACK = 0x1ff,
};

/* The extra test program served next to the test program (tests only). */
/* CMD_START's versions word: beside RPCR_XPRT_V1 | RPCR_XPRT_V2, the server sends its
 * INIT_XCHAR (rpcr_svc_conf::xchar). */
#define XT_SRV_XCHAR 0x100u

#define XT_PROG      0x2f5a00f0u
#define XT_VERS      1u
#define XT_HOLD      1u /* void -> void, answered in batches (credit tests) */
#define XT_MIX       2u /* (opaque small<>, opaque big<> DDP) -> (opaque small<>, opaque big<> DDP) */
#define XT_MULTI     3u /* (a<> DDP, uint32 x, b<> DDP, c<> DDP) -> (c<> DDP, a<> DDP, x, b<> DDP) */
#define XT_SLOW      4u /* void -> void, answered after v[0] ms (timeouts) */

/* The server loop; @return 0, or 1 when the poller still held buffers or connections at exit. */
int xt_server_main(struct player *P);
/* The engine server's address beside the harness's listen address @base. */
void xt_server_addr(const char *base, char *out, size_t n);

#endif /* XPRT_TEST_H */
