/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_WIRE_V2_H
#define XPRT_WIRE_V2_H

/*
 * Version 2's straight-line matchers and writers (see wire.h), beside version 1's (wire_v1.h):
 * the only byte offsets of a version-2 header outside wire_v2.c. Everything here works on the
 * plain header, RDMA2_MSG with no handle to invalidate and three empty chunk lists (9 words:
 * xid, vers, credit, htype 0, flags, inv_handle 0, 0, 0, 0), compared and written in wire byte
 * order. The flags word is 0 on a call and RESPONSE on a reply; MORE never (a continued message
 * takes the general path).
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include <rpcr_proto_v2.h>
#include <rpcr_xdr.h>

#include "wire_v1.h" /* (xprt_load32/64) */

/* Bytes of the plain header; the RPC message starts there. */
#define XPRT_V2_PLAIN RPCR_PROTO_V2_HDR_MIN
/* The bytes at 12..19 of a plain header (htype MSG, then the flags), as a native load of them
 * reads them: for a call (flags 0) and a reply (RESPONSE). */
#define XPRT_V2_TYPEFLAGS_CALL  0ull
#define XPRT_V2_TYPEFLAGS_REPLY rte_cpu_to_be_64((uint64_t)RPCR_PROTO_V2_F_RESPONSE)

/* Zero when @d (at least XPRT_V2_PLAIN bytes) is a plain header whose htype and flags words are
 * @typeflags (XPRT_V2_TYPEFLAGS_*). (Callers fold it into their own comparisons.) */
static __rte_always_inline uint64_t
xprt_v2_plain_diff(const uint8_t *d, uint64_t typeflags)
{
	return (xprt_load64(d + 12) ^ typeflags) | xprt_load64(d + 20) | xprt_load64(d + 28) |
	       (uint64_t)(xprt_load32(d + 4) ^ rte_cpu_to_be_32(RPCR_PROTO_V2_VERS));
}

/* The xid and credit words of a header, in host order. */
static __rte_always_inline uint32_t
xprt_v2_xid(const uint8_t *d)
{
	return rpcr_xdr_load32(d);
}

static __rte_always_inline uint32_t
xprt_v2_credit(const uint8_t *d)
{
	return rpcr_xdr_load32(d + 8);
}

/* Non-zero when a call's header at @d grants its reply more than one Send (a continued reply,
 * cont.c: the low half of its credit word above 1). */
static __rte_always_inline uint64_t
xprt_v2_cont_granted(const uint8_t *d)
{
	return xprt_load32(d + 8) & rte_cpu_to_be_32(0xfffeu);
}

/* §4.2.1.1's halves of a credit word: the credits granted (low), the most outstanding at the
 * sender (high); a requester asks for its high half (its low half where that is 0). The
 * general path's are wire_v2.c's credit_*() operations: the same arithmetic. */
static __rte_always_inline uint32_t
xprt_v2_credit_granted(uint32_t word)
{
	return word & 0xffffu;
}

static __rte_always_inline uint32_t
xprt_v2_credit_ask(uint32_t word)
{
	return (word >> 16) != 0 ? word >> 16 : word & 0xffffu;
}

static __rte_always_inline uint32_t
xprt_v2_credit_word(uint32_t grant, uint32_t most)
{
	return RTE_MIN(most, 0xffffu) << 16 | RTE_MIN(grant, 0xffffu);
}

/* Write a plain header at @p: a call's (@response false) or a reply's. */
static __rte_always_inline void
xprt_v2_put_plain(uint8_t *p, uint32_t xid, uint32_t credit, bool response)
{
	rpcr_xdr_store32(p, xid);
	rpcr_xdr_store32(p + 4, RPCR_PROTO_V2_VERS);
	rpcr_xdr_store32(p + 8, credit);
	rpcr_xdr_store32(p + 12, 0); /* RDMA2_MSG */
	rpcr_xdr_store32(p + 16, response ? RPCR_PROTO_V2_F_RESPONSE : 0);
	memset(p + 20, 0, 16); /* no handle to invalidate, no read list, write list, reply chunk */
}

#endif /* XPRT_WIRE_V2_H */
