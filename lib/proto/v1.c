/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * RPC-over-RDMA version 1 headers: 2005 draft §4.2 and RFC 8166 §4.2.
 *
 *     xid vers credit proc
 *       MSG / NOMSG:  read-list write-list reply-chunk
 *       MSGP:         align thresh read-list write-list reply-chunk
 *       DONE:         -
 *       ERROR:        errcode [ERR_VERS: low high]
 */

#include "proto_internal.h"
#include "rpcr_proto_v1.h"

size_t
rpcr_proto_v1_size(const struct rpcr_proto_v1_hdr *h)
{
	size_t lists;

	switch (h->proc) {
	case RPCR_PROTO_V1_MSG:
	case RPCR_PROTO_V1_NOMSG:
		lists = rpcr_proto_chunks_size(&h->chunks);
		return lists != 0 ? RPCR_PROTO_HDR_FIXED + lists : 0;
	case RPCR_PROTO_V1_MSGP:
		lists = rpcr_proto_chunks_size(&h->chunks);
		return lists != 0 ? RPCR_PROTO_HDR_FIXED + 2 * RPCR_XDR_UNIT + lists : 0;
	case RPCR_PROTO_V1_DONE:
		return RPCR_PROTO_V1_DONE_SIZE;
	case RPCR_PROTO_V1_ERROR:
		return h->err == RPCR_PROTO_V1_ERR_VERS ? RPCR_PROTO_V1_ERR_VERS_SIZE
							: RPCR_PROTO_V1_ERR_CHUNK_SIZE;
	default:
		return 0;
	}
}

ssize_t
rpcr_proto_v1_encode_full(const struct rpcr_proto_v1_hdr *h, void *buf, size_t len)
{
	size_t size = rpcr_proto_v1_size(h);
	uint8_t *p = (uint8_t *)buf;

	if (unlikely(size == 0))
		return -EINVAL;
	if (unlikely(size > len))
		return -EMSGSIZE;

	rpcr_xdr_store32(p, h->xid);
	rpcr_xdr_store32(p + 4, h->vers);
	rpcr_xdr_store32(p + 8, h->credit);
	rpcr_xdr_store32(p + 12, h->proc);
	p += RPCR_PROTO_HDR_FIXED;

	switch (h->proc) {
	case RPCR_PROTO_V1_MSGP:
		rpcr_xdr_store32(p, h->align);
		rpcr_xdr_store32(p + 4, h->thresh);
		p += 2 * RPCR_XDR_UNIT;
		/* fall through */
	case RPCR_PROTO_V1_MSG:
	case RPCR_PROTO_V1_NOMSG:
		/* rpcr_proto_v1_size() counted the lists and checked their counts. */
		proto_chunks_put(p, &h->chunks);
		break;
	case RPCR_PROTO_V1_ERROR:
		rpcr_xdr_store32(p, h->err);
		if (h->err == RPCR_PROTO_V1_ERR_VERS) {
			rpcr_xdr_store32(p + 4, h->vers_low);
			rpcr_xdr_store32(p + 8, h->vers_high);
		}
		break;
	default: /* RDMA_DONE: the fixed words only. */
		break;
	}
	return (ssize_t)size;
}

ssize_t
rpcr_proto_v1_decode_full(struct rpcr_proto_v1_hdr *h, const void *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	struct rpcr_proto_fixed f;
	int rc;

	rc = rpcr_proto_peek(buf, len, &f);
	if (unlikely(rc != 0))
		return rc;
	h->xid = f.xid;
	h->vers = f.vers;
	h->credit = f.credit;
	h->proc = f.proc;
	rpcr_proto_chunks_reset(&h->chunks);
	if (unlikely(f.vers != RPCR_PROTO_V1_VERS))
		return RPCR_PROTO_EVERS;

	rpcr_xdr_dec_init(&d, (const uint8_t *)buf + RPCR_PROTO_HDR_FIXED,
			  len - RPCR_PROTO_HDR_FIXED);
	switch (f.proc) {
	case RPCR_PROTO_V1_MSGP:
		if (rpcr_xdr_dec_u32(&d, &h->align) != 0 || rpcr_xdr_dec_u32(&d, &h->thresh) != 0)
			return RPCR_PROTO_EBADXDR;
		/* fall through */
	case RPCR_PROTO_V1_MSG:
	case RPCR_PROTO_V1_NOMSG:
		rc = rpcr_proto_chunks_decode(&d, &h->chunks);
		if (unlikely(rc != 0))
			return rc;
		break;
	case RPCR_PROTO_V1_DONE:
		break;
	case RPCR_PROTO_V1_ERROR:
		if (rpcr_xdr_dec_u32(&d, &h->err) != 0)
			return RPCR_PROTO_EBADXDR;
		if (h->err == RPCR_PROTO_V1_ERR_VERS && (rpcr_xdr_dec_u32(&d, &h->vers_low) != 0 ||
							 rpcr_xdr_dec_u32(&d, &h->vers_high) != 0))
			return RPCR_PROTO_EBADXDR;
		/*
		 * ERR_CHUNK has no arm in RFC 8166 and eight rdma_extra words in the 2005 draft;
		 * unknown codes have nothing we could parse. Trailing bytes are ignored in all cases.
		 */
		break;
	default:
		return RPCR_PROTO_EHTYPE;
	}
	return (ssize_t)(RPCR_PROTO_HDR_FIXED + rpcr_xdr_dec_pos(&d));
}

uint32_t
rpcr_proto_v1_errcode(int err)
{
	switch (err) {
	case 0:
	case RPCR_PROTO_ESHORT:
		return 0;
	case RPCR_PROTO_EVERS:
		return RPCR_PROTO_V1_ERR_VERS;
	default:
		/* RFC 8166 §5.3.2: any other header or chunk-list problem is ERR_CHUNK. */
		return RPCR_PROTO_V1_ERR_CHUNK;
	}
}

bool
rpcr_proto_v1_equal(const struct rpcr_proto_v1_hdr *a, const struct rpcr_proto_v1_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit || a->proc != b->proc)
		return false;
	switch (a->proc) {
	case RPCR_PROTO_V1_MSGP:
		if (a->align != b->align || a->thresh != b->thresh)
			return false;
		/* fall through */
	case RPCR_PROTO_V1_MSG:
	case RPCR_PROTO_V1_NOMSG:
		return rpcr_proto_chunks_equal(&a->chunks, &b->chunks);
	case RPCR_PROTO_V1_ERROR:
		if (a->err != b->err)
			return false;
		return a->err != RPCR_PROTO_V1_ERR_VERS ||
		       (a->vers_low == b->vers_low && a->vers_high == b->vers_high);
	default:
		return true;
	}
}

int
rpcr_proto_conf_rdma_req_encode(struct rpcr_xdr_enc *e, const struct rpcr_proto_conf_rdma_req *r)
{
	uint8_t *p = rpcr_xdr_enc_reserve(e, RPCR_PROTO_CONF_RDMA_SIZE);

	if (p == NULL)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, r->maxcall_sendsize);
	rpcr_xdr_store32(p + 4, r->maxreply_sendsize);
	rpcr_xdr_store32(p + 8, r->maxrdmaread);
	return 0;
}

int
rpcr_proto_conf_rdma_req_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_conf_rdma_req *r)
{
	const uint8_t *p = rpcr_xdr_dec_inline(d, RPCR_PROTO_CONF_RDMA_SIZE);

	if (p == NULL)
		return RPCR_PROTO_EBADXDR;
	r->maxcall_sendsize = rpcr_xdr_load32(p);
	r->maxreply_sendsize = rpcr_xdr_load32(p + 4);
	r->maxrdmaread = rpcr_xdr_load32(p + 8);
	return 0;
}

int
rpcr_proto_conf_rdma_reply_encode(struct rpcr_xdr_enc *e,
				  const struct rpcr_proto_conf_rdma_reply *r)
{
	uint8_t *p = rpcr_xdr_enc_reserve(e, RPCR_PROTO_CONF_RDMA_SIZE);

	if (p == NULL)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, r->maxcall_sendsize);
	rpcr_xdr_store32(p + 4, r->align);
	rpcr_xdr_store32(p + 8, r->maxrdmaread);
	return 0;
}

int
rpcr_proto_conf_rdma_reply_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_conf_rdma_reply *r)
{
	const uint8_t *p = rpcr_xdr_dec_inline(d, RPCR_PROTO_CONF_RDMA_SIZE);

	if (p == NULL)
		return RPCR_PROTO_EBADXDR;
	r->maxcall_sendsize = rpcr_xdr_load32(p);
	r->align = rpcr_xdr_load32(p + 4);
	r->maxrdmaread = rpcr_xdr_load32(p + 8);
	return 0;
}
