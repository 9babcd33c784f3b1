/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * RPC-over-RDMA version 1 as the engine speaks it: the wire operations of wire.h over lib/proto's
 * version-1 codec. A header is decoded into the codec's structure and handed on as struct
 * xprt_hdr (the chunk lists are the caller's arrays, shared by both), and the other way round.
 *
 * The version-1 rules that are about receiving rather than the format live here too:
 *   - RFC 8166 section 4.5: a message shorter than the smallest header (28 bytes) is discarded
 *     before any parsing, since not even its xid can be trusted. Two shorter types are whole
 *     messages all the same, each taken only by the side that expects it (decode()'s short_ok):
 *     RDMA_ERROR with ERR_CHUNK (20 bytes, what a responder answers) and the 2005 draft's
 *     RDMA_DONE (16 bytes, only between peers that negotiated it).
 *   - RFC 8166 section 4.5: an RDMA_ERROR carries the version of the message it answers.
 */

#include <rte_common.h>

#include <rpcr_oncrpc.h>

#include "wire.h"
#include "wire_v1.h"

/* enum xprt_htype -> rdma_proc, and back. */
static const uint32_t v1_proc[XPRT_HT_NUM] = {
	[XPRT_HT_MSG] = RPCR_PROTO_V1_MSG,     [XPRT_HT_NOMSG] = RPCR_PROTO_V1_NOMSG,
	[XPRT_HT_MSGP] = RPCR_PROTO_V1_MSGP,   [XPRT_HT_DONE] = RPCR_PROTO_V1_DONE,
	[XPRT_HT_ERROR] = RPCR_PROTO_V1_ERROR,
};

static uint32_t
v1_type(uint32_t proc)
{
	switch (proc) {
	case RPCR_PROTO_V1_MSG:
		return XPRT_HT_MSG;
	case RPCR_PROTO_V1_NOMSG:
		return XPRT_HT_NOMSG;
	case RPCR_PROTO_V1_MSGP:
		return XPRT_HT_MSGP;
	case RPCR_PROTO_V1_DONE:
		return XPRT_HT_DONE;
	case RPCR_PROTO_V1_ERROR:
		return XPRT_HT_ERROR;
	default:
		return XPRT_HT_NUM;
	}
}

static uint32_t
v1_herr(uint32_t err)
{
	return err == RPCR_PROTO_V1_ERR_VERS    ? XPRT_HERR_VERS
	       : err == RPCR_PROTO_V1_ERR_CHUNK ? XPRT_HERR_CHUNK
						: XPRT_HERR_NONE;
}

static uint32_t
v1_err(uint32_t herr)
{
	return herr == XPRT_HERR_VERS ? RPCR_PROTO_V1_ERR_VERS : RPCR_PROTO_V1_ERR_CHUNK;
}

/* A message shorter than a plain header that is whole all the same, of a type in @short_ok. */
static bool
v1_short_whole(const uint8_t *d, uint32_t len, uint32_t short_ok)
{
	uint32_t proc;

	if (len < XPRT_V1_DONE_LEN || rpcr_xdr_load32(d + 4) != RPCR_PROTO_V1_VERS)
		return false;
	proc = rpcr_xdr_load32(d + 12);
	if (proc == RPCR_PROTO_V1_DONE)
		return len == XPRT_V1_DONE_LEN && (short_ok & XPRT_SHORT_OK(XPRT_HT_DONE));
	if (proc == RPCR_PROTO_V1_ERROR)
		return len >= RPCR_PROTO_V1_ERR_CHUNK_SIZE &&
		       (short_ok & XPRT_SHORT_OK(XPRT_HT_ERROR));
	return false;
}

static ssize_t
v1_decode(struct xprt_hdr *h, const uint8_t *d, uint32_t len, uint32_t short_ok)
{
	struct rpcr_proto_v1_hdr v;
	ssize_t n;

	if (unlikely(len < XPRT_V1_PLAIN) && !v1_short_whole(d, len, short_ok))
		return RPCR_PROTO_ESHORT;
	v.chunks = h->chunks; /* (the caller's arrays) */
	n = rpcr_proto_v1_decode(&v, d, len);
	h->chunks = v.chunks;
	if (n == RPCR_PROTO_ESHORT)
		return n;
	h->xid = v.xid;
	h->vers = v.vers;
	h->credit = v.credit;
	h->type = v1_type(v.proc);
	if (n < 0)
		return n;
	h->align = v.align;
	h->thresh = v.thresh;
	h->err = h->type == XPRT_HT_ERROR ? v1_herr(v.err) : XPRT_HERR_NONE;
	h->vers_low = v.vers_low;
	h->vers_high = v.vers_high;
	h->flags = 0;
	h->inv_handle = 0;
	return n;
}

static uint32_t
v1_answer(ssize_t rc)
{
	return v1_herr(rpcr_proto_v1_errcode((int)rc));
}

/* @h as the codec's structure (its chunk lists are @h's). @return false: no such type. */
static bool
v1_from(struct rpcr_proto_v1_hdr *v, const struct xprt_hdr *h)
{
	if (h->type > XPRT_HT_ERROR)
		return false;
	v->xid = h->xid;
	v->vers = RPCR_PROTO_V1_VERS;
	v->credit = h->credit;
	v->proc = v1_proc[h->type];
	v->align = h->align;
	v->thresh = h->thresh;
	v->err = v1_err(h->err);
	v->vers_low = h->vers_low;
	v->vers_high = h->vers_high;
	v->chunks = h->chunks;
	return true;
}

static uint32_t
v1_size(const struct xprt_hdr *h)
{
	struct rpcr_proto_v1_hdr v;

	return v1_from(&v, h) ? (uint32_t)rpcr_proto_v1_size(&v) : 0;
}

static ssize_t
v1_encode(const struct xprt_hdr *h, uint8_t *buf, uint32_t cap)
{
	struct rpcr_proto_v1_hdr v;

	if (!v1_from(&v, h))
		return -EINVAL;
	return rpcr_proto_v1_encode(&v, buf, cap);
}

static ssize_t
v1_encode_error(uint8_t *buf, uint32_t cap, const struct xprt_hdr *e)
{
	struct rpcr_proto_v1_hdr v;

	memset(&v, 0, sizeof(v));
	v.xid = e->xid;
	v.vers = e->vers; /* the failing message's (RFC 8166 section 4.5) */
	v.credit = e->credit;
	v.proc = RPCR_PROTO_V1_ERROR;
	v.err = v1_err(e->err);
	v.vers_low = e->vers_high != 0 ? e->vers_low : RPCR_PROTO_V1_VERS;
	v.vers_high = e->vers_high != 0 ? e->vers_high : RPCR_PROTO_V1_VERS;
	return rpcr_proto_v1_encode_full(&v, buf, cap);
}

ssize_t
xprt_wire_v1_err_vers(struct xprt_hdr *h, const uint8_t *d, uint32_t len)
{
	if (len < RPCR_PROTO_V1_ERR_VERS_SIZE || rpcr_xdr_load32(d + 12) != RPCR_PROTO_V1_ERROR ||
	    rpcr_xdr_load32(d + 16) != RPCR_PROTO_V1_ERR_VERS)
		return RPCR_PROTO_EHTYPE;
	h->xid = rpcr_xdr_load32(d);
	h->vers = rpcr_xdr_load32(d + 4);
	h->credit = rpcr_xdr_load32(d + 8);
	h->type = XPRT_HT_ERROR;
	h->flags = 0;
	h->err = XPRT_HERR_VERS;
	h->vers_low = rpcr_xdr_load32(d + 20);
	h->vers_high = rpcr_xdr_load32(d + 24);
	rpcr_proto_chunks_reset(&h->chunks);
	return RPCR_PROTO_V1_ERR_VERS_SIZE;
}

/* Version 1's credit field is the number asked or granted (RFC 8166 section 3.3.1). */
static uint32_t
v1_credit_ask(uint32_t word)
{
	return word;
}

static uint32_t
v1_credit_word(uint32_t grant, uint32_t most)
{
	RTE_SET_USED(most);
	return grant;
}

static uint32_t
v1_credit_call(uint32_t ask, uint32_t reply)
{
	RTE_SET_USED(reply);
	return ask;
}

const struct xprt_wire xprt_wire_v1 = {
	.vers = RPCR_PROTO_V1_VERS,
	.plain_len = XPRT_V1_PLAIN,
	.msgp_len = XPRT_V1_MSGP_PLAIN,
	.flag_dir = false,
	.credit_ask = v1_credit_ask,
	.credit_word = v1_credit_word,
	.credit_call = v1_credit_call,
	.credit_granted = v1_credit_ask, /* (the same word, read the same way) */
	.decode = v1_decode,
	.answer = v1_answer,
	.size = v1_size,
	.encode = v1_encode,
	.encode_error = v1_encode_error,
};
