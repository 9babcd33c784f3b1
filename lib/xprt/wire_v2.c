/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * RPC-over-RDMA version 2 as the engine speaks it: the wire operations of wire.h over lib/proto's
 * version-2 codec (draft-ietf-nfsv4-rpcrdma-version-two-01), as wire_v1.c is for version 1. A
 * server's connection takes this table when its first message is version 2 and the server
 * serves version 2 (svc.c); test/xprt/test_wire.c holds it to the codec.
 *
 * What differs from version 1, as the engine sees it:
 *   - the prefix has a flags word: RESPONSE (the xid is a reply's or an error report's), MORE
 *     (the RPC message continues in the next message), TPMORE (more properties follow), in
 *     struct xprt_hdr's flags as XPRT_HF_*, one for one;
 *   - RDMA2_MSG and RDMA2_NOMSG carry a handle the responder may invalidate (inv_handle) before
 *     the chunk lists, which are version 1's;
 *   - RDMA2_CONNPROP (XPRT_HT_PROPS) and rpcr's carrier of optional operations (XPRT_HT_OPTION,
 *     rpcr_proto_v2.h) are messages of their own; version 2 has neither MSGP nor DONE;
 *   - errors have a code each and arms (the most chunks or segments taken, the length needed),
 *     and an error report is a response (RESPONSE set);
 *   - there is no short message: anything shorter than the 20-byte prefix is discarded
 *     unparsed, whatever its version word (§7, as version 1's rule of RFC 8166 section 4.5).
 * The credit word is decoded and encoded as it is; §4.2.1.1 splits it into the credits granted
 * (low 16 bits) and the most outstanding at the sender (high 16), which credit_ask() and
 * credit_word() read and write for the requester and the responder.
 */

#include <rte_common.h>

#include "wire.h"
#include "wire_v2.h"

/* enum xprt_htype -> rdma_htype (UINT32_MAX: no such message in version 2). */
static const uint32_t v2_htype[XPRT_HT_NUM] = {
	[XPRT_HT_MSG] = RPCR_PROTO_V2_MSG,
	[XPRT_HT_NOMSG] = RPCR_PROTO_V2_NOMSG,
	[XPRT_HT_MSGP] = UINT32_MAX,
	[XPRT_HT_DONE] = UINT32_MAX,
	[XPRT_HT_ERROR] = RPCR_PROTO_V2_ERROR,
	[XPRT_HT_PROPS] = RPCR_PROTO_V2_CONNPROP,
	[XPRT_HT_OPTION] = RPCR_PROTO_V2_OPTIONAL,
};

/* enum xprt_herr <-> rdma_err. */
static const uint32_t v2_errcode[XPRT_HERR_NUM] = {
	[XPRT_HERR_NONE] = 0,
	[XPRT_HERR_VERS] = RPCR_PROTO_V2_ERR_VERS,
	[XPRT_HERR_CHUNK] = RPCR_PROTO_V2_ERR_BAD_XDR,
	[XPRT_HERR_HTYPE] = RPCR_PROTO_V2_ERR_INVAL_HTYPE,
	[XPRT_HERR_CONT] = RPCR_PROTO_V2_ERR_INVAL_CONT,
	[XPRT_HERR_PROPVAL] = RPCR_PROTO_V2_ERR_BAD_PROPVAL,
	[XPRT_HERR_READS] = RPCR_PROTO_V2_ERR_READ_CHUNKS,
	[XPRT_HERR_WRITES] = RPCR_PROTO_V2_ERR_WRITE_CHUNKS,
	[XPRT_HERR_SEGMENTS] = RPCR_PROTO_V2_ERR_SEGMENTS,
	[XPRT_HERR_WRITE_RES] = RPCR_PROTO_V2_ERR_WRITE_RESOURCE,
	[XPRT_HERR_REPLY_RES] = RPCR_PROTO_V2_ERR_REPLY_RESOURCE,
	[XPRT_HERR_SYSTEM] = RPCR_PROTO_V2_ERR_SYSTEM,
};

static uint32_t
v2_type(uint32_t htype)
{
	switch (htype) {
	case RPCR_PROTO_V2_MSG:
		return XPRT_HT_MSG;
	case RPCR_PROTO_V2_NOMSG:
		return XPRT_HT_NOMSG;
	case RPCR_PROTO_V2_ERROR:
		return XPRT_HT_ERROR;
	case RPCR_PROTO_V2_CONNPROP:
		return XPRT_HT_PROPS;
	case RPCR_PROTO_V2_OPTIONAL:
		return XPRT_HT_OPTION;
	default:
		return XPRT_HT_NUM;
	}
}

/* rdma_err -> enum xprt_herr (XPRT_HERR_NONE: a code version 2 does not define; BAD_XDR is the
 * engine's "could not be processed", XPRT_HERR_CHUNK). */
static uint32_t
v2_herr(uint32_t err)
{
	uint32_t i;

	if (err == 0)
		return XPRT_HERR_NONE;
	for (i = XPRT_HERR_VERS; i < XPRT_HERR_NUM; i++)
		if (v2_errcode[i] == err)
			return i;
	return XPRT_HERR_NONE;
}

static ssize_t
v2_decode(struct xprt_hdr *h, const uint8_t *d, uint32_t len, uint32_t short_ok)
{
	struct rpcr_proto_v2_hdr v;
	ssize_t n;

	RTE_SET_USED(short_ok); /* (version 2 has no short message) */
	/* §7: shorter than the prefix, whatever its version word, the xid cannot be trusted. */
	if (unlikely(len < RPCR_PROTO_V2_PREFIX))
		return RPCR_PROTO_ESHORT;
	memset(&v, 0, sizeof(v)); /* (the codec fills only the arm of its error) */
	v.chunks = h->chunks;     /* (the caller's arrays) */
	v.props = h->props;
	n = rpcr_proto_v2_decode(&v, d, len);
	h->chunks = v.chunks;
	h->props = v.props;
	if (n == RPCR_PROTO_ESHORT)
		return n;
	h->xid = v.xid;
	h->vers = v.vers;
	h->credit = v.credit;
	h->type = v2_type(v.htype);
	if (n == RPCR_PROTO_EVERS)
		return n;
	h->flags = v.flags; /* (bits the draft does not define kept: the engine reads its own) */
	if (n < 0)
		return n;
	h->align = 0;
	h->thresh = 0;
	h->inv_handle = v.inv_handle;
	h->err = h->type == XPRT_HT_ERROR ? v2_herr(v.err) : XPRT_HERR_NONE;
	h->vers_low = v.vers_low;
	h->vers_high = v.vers_high;
	h->max_chunks = v.max_chunks;
	h->max_segments = v.max_segments;
	h->chunk_index = v.chunk_index;
	h->length_needed = v.length_needed;
	h->opttype = v.opttype;
	h->optinfo_len = v.optinfo_len;
	h->optinfo = v.optinfo;
	return n;
}

static uint32_t
v2_answer(ssize_t rc)
{
	return v2_herr(rpcr_proto_v2_errcode((int)rc));
}

/* @h as the codec's structure (its chunk lists and properties are @h's). @return false: a type
 * version 2 does not have. */
static bool
v2_from(struct rpcr_proto_v2_hdr *v, const struct xprt_hdr *h)
{
	if (h->type >= XPRT_HT_NUM || v2_htype[h->type] == UINT32_MAX)
		return false;
	memset(v, 0, sizeof(*v));
	v->xid = h->xid;
	v->vers = RPCR_PROTO_V2_VERS;
	v->credit = h->credit;
	v->htype = v2_htype[h->type];
	v->flags = h->flags;
	v->inv_handle = h->inv_handle;
	v->chunks = h->chunks;
	v->err = h->err < XPRT_HERR_NUM ? v2_errcode[h->err] : RPCR_PROTO_V2_ERR_SYSTEM;
	v->vers_low = h->vers_low;
	v->vers_high = h->vers_high;
	v->max_chunks = h->max_chunks;
	v->max_segments = h->max_segments;
	v->chunk_index = h->chunk_index;
	v->length_needed = h->length_needed;
	v->props = h->props;
	v->opttype = h->opttype;
	v->optinfo_len = h->optinfo_len;
	v->optinfo = h->optinfo;
	return true;
}

static uint32_t
v2_size(const struct xprt_hdr *h)
{
	struct rpcr_proto_v2_hdr v;

	return v2_from(&v, h) ? (uint32_t)rpcr_proto_v2_size(&v) : 0;
}

static ssize_t
v2_encode(const struct xprt_hdr *h, uint8_t *buf, uint32_t cap)
{
	struct rpcr_proto_v2_hdr v;

	if (!v2_from(&v, h))
		return -EINVAL;
	return rpcr_proto_v2_encode(&v, buf, cap);
}

/* An error report: a response (§6.2.2.1), in version 2's format, carrying the failing message's
 * version (§7). */
static ssize_t
v2_encode_error(uint8_t *buf, uint32_t cap, const struct xprt_hdr *e)
{
	struct xprt_hdr h = *e;
	struct rpcr_proto_v2_hdr v;

	if (e->err == XPRT_HERR_NONE || e->err >= XPRT_HERR_NUM)
		return -EINVAL;
	h.type = XPRT_HT_ERROR;
	h.flags = XPRT_HF_RESPONSE;
	if (h.err == XPRT_HERR_VERS && h.vers_high == 0) {
		h.vers_low = RPCR_PROTO_V2_VERS;
		h.vers_high = RPCR_PROTO_V2_VERS;
	}
	v2_from(&v, &h);
	/* §7: rdma_vers is the ingress message's (a version 1 message is answered by version 1's
	 * table instead: svc.c). */
	if (e->vers != 0)
		v.vers = e->vers;
	return rpcr_proto_v2_encode_full(&v, buf, cap);
}

/*
 * §4.2.1.1: the low 16 bits are the credits the sender grants, the high 16 the most that can be
 * outstanding at the sender. A requester's word asks for what its high half says it may have
 * outstanding (its low half where that says nothing).
 */
static uint32_t
v2_credit_ask(uint32_t word)
{
	return xprt_v2_credit_ask(word);
}

static uint32_t
v2_credit_word(uint32_t grant, uint32_t most)
{
	return xprt_v2_credit_word(grant, most);
}

/* A requester's word: the most it will have outstanding (@ask) high; low, the receives it
 * grants the responder for this call's reply (§4.2.1.1: a credit is one receive; more than 1
 * lets the reply be continued, cont.c), never 0 (a zero grant would deadlock). */
static uint32_t
v2_credit_call(uint32_t ask, uint32_t reply)
{
	return v2_credit_word(RTE_MAX(reply, 1u), ask);
}

static uint32_t
v2_credit_granted(uint32_t word)
{
	return xprt_v2_credit_granted(word);
}

const struct xprt_wire xprt_wire_v2 = {
	.vers = RPCR_PROTO_V2_VERS,
	.plain_len = RPCR_PROTO_V2_HDR_MIN,
	.msgp_len = 0, /* (no MSGP in version 2) */
	.flag_dir = true,
	.credit_ask = v2_credit_ask,
	.credit_word = v2_credit_word,
	.credit_call = v2_credit_call,
	.credit_granted = v2_credit_granted,
	.decode = v2_decode,
	.answer = v2_answer,
	.size = v2_size,
	.encode = v2_encode,
	.encode_error = v2_encode_error,
};
