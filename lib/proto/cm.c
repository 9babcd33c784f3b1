/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* RDMA-CM private data for RPC-over-RDMA version 1 (RFC 8797 §4, §5.2). */

#include "rpcr_proto_cm.h"

static uint8_t
encode_size(uint32_t bytes)
{
	if (bytes < RPCR_PROTO_CM_SIZE_MIN)
		bytes = RPCR_PROTO_CM_SIZE_MIN;
	if (bytes > RPCR_PROTO_CM_SIZE_MAX)
		bytes = RPCR_PROTO_CM_SIZE_MAX;
	return (uint8_t)(bytes / 1024 - 1);
}

static uint32_t
decode_size(uint8_t v)
{
	return ((uint32_t)v + 1) * 1024;
}

ssize_t
rpcr_proto_cm_encode(const struct rpcr_proto_cm *cm, void *buf, size_t len)
{
	uint8_t *p = (uint8_t *)buf;

	if (len < RPCR_PROTO_CM_SIZE)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, RPCR_PROTO_CM_MAGIC);
	p[4] = RPCR_PROTO_CM_VERSION;
	p[5] = cm->remote_inv ? RPCR_PROTO_CM_F_REMOTE_INV : 0;
	p[6] = encode_size(cm->send_size);
	p[7] = encode_size(cm->recv_size);
	return RPCR_PROTO_CM_SIZE;
}

int
rpcr_proto_cm_decode(struct rpcr_proto_cm *cm, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;
	size_t off;

	if (cm == NULL)
		return -EINVAL;
	cm->present = false;
	cm->remote_inv = false;
	cm->send_size = RPCR_PROTO_CM_DEFAULT_INLINE;
	cm->recv_size = RPCR_PROTO_CM_DEFAULT_INLINE;
	if (p == NULL || len < RPCR_PROTO_CM_SIZE)
		return 0;

	for (off = 0; off + RPCR_PROTO_CM_SIZE <= len; off++) {
		const uint8_t *q = p + off;

		if (rpcr_xdr_load32(q) != RPCR_PROTO_CM_MAGIC || q[4] != RPCR_PROTO_CM_VERSION)
			continue;
		cm->present = true;
		/* Reserved bits are ignored (§4). */
		cm->remote_inv = (q[5] & RPCR_PROTO_CM_F_REMOTE_INV) != 0;
		cm->send_size = decode_size(q[6]);
		cm->recv_size = decode_size(q[7]);
		break;
	}
	return 0;
}

ssize_t
rpcr_proto_cm_ext_encode(const struct rpcr_proto_cm_ext *x, void *buf, size_t len)
{
	uint8_t *p = (uint8_t *)buf;

	if (len < RPCR_PROTO_CM_EXT_SIZE)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, RPCR_PROTO_CM_EXT_MAGIC);
	rpcr_xdr_store32(p + 4, RPCR_PROTO_CM_EXT_VERSION);
	rpcr_xdr_store32(p + 8, x->features);
	return RPCR_PROTO_CM_EXT_SIZE;
}

int
rpcr_proto_cm_ext_decode(struct rpcr_proto_cm_ext *x, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;
	size_t off;

	if (x == NULL)
		return -EINVAL;
	x->present = false;
	x->features = 0;
	if (p == NULL)
		return 0;
	/* At offset 8 when we wrote it; found anywhere 4-aligned, as the RFC 8797 block is. */
	for (off = 0; off + RPCR_PROTO_CM_EXT_SIZE <= len; off += 4) {
		const uint8_t *q = p + off;

		if (rpcr_xdr_load32(q) != RPCR_PROTO_CM_EXT_MAGIC ||
		    rpcr_xdr_load32(q + 4) != RPCR_PROTO_CM_EXT_VERSION)
			continue;
		x->present = true;
		x->features = rpcr_xdr_load32(q + 8);
		break;
	}
	return 0;
}
