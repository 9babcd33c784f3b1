/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_WIRE_V1_H
#define XPRT_WIRE_V1_H

/*
 * Version 1's straight-line matchers and writers (see wire.h): the only byte offsets of a
 * version-1 header outside wire_v1.c. Everything here works on the plain header, RDMA_MSG with
 * three empty chunk lists (7 words: xid, vers, credit, proc, 0, 0, 0), compared and written in
 * wire byte order.
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include <rpcr_proto_v1.h>
#include <rpcr_xdr.h>

/* Bytes of the plain header; the RPC message starts there. */
#define XPRT_V1_PLAIN RPCR_PROTO_V1_HDR_MIN
/* Bytes of an RDMA_MSGP header with empty lists (padding counts behind it). */
#define XPRT_V1_MSGP_PLAIN (RPCR_PROTO_V1_HDR_MIN + 8u)
/* An RDMA_DONE (2005 draft). */
#define XPRT_V1_DONE_LEN RPCR_PROTO_V1_DONE_SIZE

/* Unaligned native-order loads (compared with constants in wire order). */
static __rte_always_inline uint64_t
xprt_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static __rte_always_inline uint32_t
xprt_load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Zero when the @d (at least XPRT_V1_PLAIN bytes) is a plain header: version 1, RDMA_MSG, three
 * empty lists. (Callers fold it into their own comparisons.) */
static __rte_always_inline uint64_t
xprt_v1_plain_diff(const uint8_t *d)
{
	return xprt_load64(d + 12) | xprt_load64(d + 20) |
	       (uint64_t)(xprt_load32(d + 4) ^ rte_cpu_to_be_32(RPCR_PROTO_V1_VERS));
}

/*
 * The RPC msg_type of a plain message (@d, @len bytes) with at least an RPC xid and msg_type
 * behind its header, in host order; UINT32_MAX for anything else. (RFC 8167 section 2: the
 * direction of a reverse-direction message, told without decoding.)
 */
static __rte_always_inline uint32_t
xprt_v1_dir(const uint8_t *d, uint32_t len)
{
	if (len < XPRT_V1_PLAIN + 8 || xprt_v1_plain_diff(d) != 0)
		return UINT32_MAX;
	return rpcr_xdr_load32(d + XPRT_V1_PLAIN + 4);
}

/* The xid and credit fields of a header, as they are in wire order. */
static __rte_always_inline uint32_t
xprt_v1_xid(const uint8_t *d)
{
	return rpcr_xdr_load32(d);
}

static __rte_always_inline uint32_t
xprt_v1_credit(const uint8_t *d)
{
	return rpcr_xdr_load32(d + 8);
}

/* Write a plain header at @p. */
static __rte_always_inline void
xprt_v1_put_plain(uint8_t *p, uint32_t xid, uint32_t credit)
{
	rpcr_xdr_store32(p, xid);
	rpcr_xdr_store32(p + 4, RPCR_PROTO_V1_VERS);
	rpcr_xdr_store32(p + 8, credit);
	memset(p + 12, 0, 16); /* RDMA_MSG, no read list, no write list, no reply chunk */
}

/* Patch the xid of a plain header at @p (@xid_wire already in wire order). */
static __rte_always_inline void
xprt_v1_put_xid(uint8_t *p, uint32_t xid_wire)
{
	memcpy(p, &xid_wire, 4);
}

#endif /* XPRT_WIRE_V1_H */
