/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * RPC-over-RDMA version 2 headers (draft-ietf-nfsv4-rpcrdma-version-two-01 §6 and §8).
 *
 *     xid vers credit htype flags
 *       MSG / NOMSG:  inv_handle read-list write-list reply-chunk
 *       ERROR:        err [VERS: low high | READ/WRITE_CHUNKS: max | SEGMENTS: max |
 *                          WRITE_RESOURCE: index needed | REPLY_RESOURCE: needed]
 *       CONNPROP:     count { which len data<len> pad }
 *       OPTIONAL:     opttype len optinfo<len> pad
 */

#include "proto_internal.h"
#include "rpcr_proto_v2.h"

/* Words in the arm of each error code. */
static uint32_t
err_arm_words(uint32_t err)
{
	switch (err) {
	case RPCR_PROTO_V2_ERR_VERS:
	case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
		return 2;
	case RPCR_PROTO_V2_ERR_READ_CHUNKS:
	case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
	case RPCR_PROTO_V2_ERR_SEGMENTS:
	case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
		return 1;
	default:
		return 0;
	}
}

static size_t
propset_size(const struct rpcr_proto_v2_propset *s)
{
	size_t n = RPCR_XDR_UNIT;
	uint32_t i;

	if (s->n > s->cap)
		return 0;

	for (i = 0; i < s->n; i++)
		n += RPCR_XDR_UNIT + (size_t)rpcr_xdr_opaque_size(s->props[i].len);
	return n;
}

size_t
rpcr_proto_v2_size(const struct rpcr_proto_v2_hdr *h)
{
	size_t body;

	switch (h->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		body = rpcr_proto_chunks_size(&h->chunks);
		return body != 0 ? RPCR_PROTO_V2_PREFIX + RPCR_XDR_UNIT + body : 0;
	case RPCR_PROTO_V2_ERROR:
		return RPCR_PROTO_V2_PREFIX + RPCR_XDR_UNIT * (1 + err_arm_words(h->err));
	case RPCR_PROTO_V2_CONNPROP:
		body = propset_size(&h->props);
		return body != 0 ? RPCR_PROTO_V2_PREFIX + body : 0;
	case RPCR_PROTO_V2_OPTIONAL:
		return RPCR_PROTO_V2_PREFIX + RPCR_XDR_UNIT +
		       (size_t)rpcr_xdr_opaque_size(h->optinfo_len);
	default:
		return 0;
	}
}

static void
encode_error(struct rpcr_xdr_enc *e, const struct rpcr_proto_v2_hdr *h)
{
	/* The room was reserved by the caller: these cannot fail. */
	(void)rpcr_xdr_enc_u32(e, h->err);
	switch (h->err) {
	case RPCR_PROTO_V2_ERR_VERS:
		(void)rpcr_xdr_enc_u32(e, h->vers_low);
		(void)rpcr_xdr_enc_u32(e, h->vers_high);
		break;
	case RPCR_PROTO_V2_ERR_READ_CHUNKS:
	case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
		(void)rpcr_xdr_enc_u32(e, h->max_chunks);
		break;
	case RPCR_PROTO_V2_ERR_SEGMENTS:
		(void)rpcr_xdr_enc_u32(e, h->max_segments);
		break;
	case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
		(void)rpcr_xdr_enc_u32(e, h->chunk_index);
		(void)rpcr_xdr_enc_u32(e, h->length_needed);
		break;
	case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
		(void)rpcr_xdr_enc_u32(e, h->length_needed);
		break;
	default:
		break;
	}
}

ssize_t
rpcr_proto_v2_encode_full(const struct rpcr_proto_v2_hdr *h, void *buf, size_t len)
{
	struct rpcr_xdr_enc e;
	size_t size = rpcr_proto_v2_size(h);
	uint8_t *p = (uint8_t *)buf;
	uint32_t i;
	int rc = 0;

	if (unlikely(size == 0))
		return -EINVAL;
	if (unlikely(size > len))
		return -EMSGSIZE;

	rpcr_xdr_store32(p, h->xid);
	rpcr_xdr_store32(p + 4, h->vers);
	rpcr_xdr_store32(p + 8, h->credit);
	rpcr_xdr_store32(p + 12, h->htype);
	rpcr_xdr_store32(p + 16, h->flags);
	rpcr_xdr_enc_init(&e, p + RPCR_PROTO_V2_PREFIX, size - RPCR_PROTO_V2_PREFIX);

	switch (h->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		/* rpcr_proto_v2_size() counted the lists and checked their counts. */
		rpcr_xdr_store32(e.p, h->inv_handle);
		proto_chunks_put(e.p + 4, &h->chunks);
		break;
	case RPCR_PROTO_V2_ERROR:
		encode_error(&e, h);
		break;
	case RPCR_PROTO_V2_CONNPROP:
		(void)rpcr_xdr_enc_u32(&e, h->props.n);
		for (i = 0; i < h->props.n && rc == 0; i++) {
			(void)rpcr_xdr_enc_u32(&e, h->props.props[i].which);
			rc = rpcr_xdr_enc_opaque(&e, h->props.props[i].data, h->props.props[i].len);
		}
		break;
	default: /* RPCR_PROTO_V2_OPTIONAL */
		(void)rpcr_xdr_enc_u32(&e, h->opttype);
		rc = rpcr_xdr_enc_opaque(&e, h->optinfo, h->optinfo_len);
		break;
	}
	return rc != 0 ? rc : (ssize_t)size;
}

uint32_t
rpcr_proto_v2_prop_default(uint32_t which)
{
	switch (which) {
	case RPCR_PROTO_V2_PROP_SBSIZ:
	case RPCR_PROTO_V2_PROP_RBSIZ:
		return 4096;
	case RPCR_PROTO_V2_PROP_RSSIZ:
		return 1048576;
	case RPCR_PROTO_V2_PROP_RCSIZ:
		return 16;
	default: /* BRS: RDMA2_RVRSDIR_NONE */
		return 0;
	}
}

int
rpcr_proto_v2_prop_check(const struct rpcr_proto_v2_prop *p)
{
	uint32_t v;

	/* §5.1: a zero-length rdma_data is the property's default. */
	if (p->len == 0)
		return 0;
	switch (p->which) {
	case RPCR_PROTO_V2_PROP_SBSIZ:
	case RPCR_PROTO_V2_PROP_RBSIZ:
	case RPCR_PROTO_V2_PROP_RSSIZ:
	case RPCR_PROTO_V2_PROP_RCSIZ:
		return p->len == 4 ? 0 : RPCR_PROTO_EPROPVAL;
	case RPCR_PROTO_V2_PROP_BRS:
		if (p->len != 4)
			return RPCR_PROTO_EPROPVAL;
		v = rpcr_xdr_load32(p->data);
		return v <= RPCR_PROTO_V2_RVRSDIR_GENL ? 0 : RPCR_PROTO_EPROPVAL;
	case RPCR_PROTO_V2_PROP_HOSTAUTH:
		/* opaque<>: a count, the bytes, padding; exactly filling rdma_data. */
		if (p->len < 4)
			return RPCR_PROTO_EPROPVAL;
		v = rpcr_xdr_load32(p->data);
		return rpcr_xdr_opaque_size(v) == p->len ? 0 : RPCR_PROTO_EPROPVAL;
	default:
		return 0;
	}
}

void
rpcr_proto_v2_prop_set_u32(struct rpcr_proto_v2_prop *p, uint32_t which, uint8_t buf[4], uint32_t v)
{
	rpcr_xdr_store32(buf, v);
	p->which = which;
	p->len = 4;
	p->data = buf;
}

void
rpcr_proto_v2_props_get(const struct rpcr_proto_v2_propset *s, struct rpcr_proto_v2_props *o)
{
	uint32_t i;

	o->sbsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_SBSIZ);
	o->rbsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RBSIZ);
	o->rssiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RSSIZ);
	o->rcsiz = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_RCSIZ);
	o->brs = rpcr_proto_v2_prop_default(RPCR_PROTO_V2_PROP_BRS);
	o->has_hostauth = false;
	o->hostauth = NULL;
	o->hostauth_len = 0;
	o->unknown = 0;

	for (i = 0; i < s->n; i++) {
		const struct rpcr_proto_v2_prop *p = &s->props[i];
		uint32_t *slot = NULL;

		switch (p->which) {
		case RPCR_PROTO_V2_PROP_SBSIZ:
			slot = &o->sbsiz;
			break;
		case RPCR_PROTO_V2_PROP_RBSIZ:
			slot = &o->rbsiz;
			break;
		case RPCR_PROTO_V2_PROP_RSSIZ:
			slot = &o->rssiz;
			break;
		case RPCR_PROTO_V2_PROP_RCSIZ:
			slot = &o->rcsiz;
			break;
		case RPCR_PROTO_V2_PROP_BRS:
			slot = &o->brs;
			break;
		case RPCR_PROTO_V2_PROP_HOSTAUTH:
			o->has_hostauth = true;
			o->hostauth_len = p->len >= 4 ? rpcr_xdr_load32(p->data) : 0;
			o->hostauth = p->len >= 4 ? p->data + 4 : NULL;
			continue;
		default:
			o->unknown++;
			continue;
		}
		*slot = p->len == 4 ? rpcr_xdr_load32(p->data)
				    : rpcr_proto_v2_prop_default(p->which);
	}
}

bool
rpcr_proto_v2_inv_handle_valid(const struct rpcr_proto_v2_hdr *h)
{
	const struct rpcr_proto_chunks *c = &h->chunks;
	uint32_t i;

	if (h->inv_handle == 0)
		return false;
	for (i = 0; i < c->nreads; i++)
		if (c->reads[i].seg.handle == h->inv_handle)
			return true;
	/* Write chunks and the reply chunk all live in the segment pool. */
	for (i = 0; i < c->nsegs; i++)
		if (c->segs[i].handle == h->inv_handle)
			return true;
	return false;
}

static int
decode_error(struct rpcr_xdr_dec *d, struct rpcr_proto_v2_hdr *h)
{
	const uint8_t *p;

	if (rpcr_xdr_dec_u32(d, &h->err) != 0)
		return RPCR_PROTO_EBADXDR;
	p = rpcr_xdr_dec_inline(d, RPCR_XDR_UNIT * err_arm_words(h->err));
	if (p == NULL)
		return RPCR_PROTO_EBADXDR;
	switch (h->err) {
	case RPCR_PROTO_V2_ERR_VERS:
		h->vers_low = rpcr_xdr_load32(p);
		h->vers_high = rpcr_xdr_load32(p + 4);
		break;
	case RPCR_PROTO_V2_ERR_READ_CHUNKS:
	case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
		h->max_chunks = rpcr_xdr_load32(p);
		break;
	case RPCR_PROTO_V2_ERR_SEGMENTS:
		h->max_segments = rpcr_xdr_load32(p);
		break;
	case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
		h->chunk_index = rpcr_xdr_load32(p);
		h->length_needed = rpcr_xdr_load32(p + 4);
		break;
	case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
		h->length_needed = rpcr_xdr_load32(p);
		break;
	default:
		/* §7: an unrecognised rdma_err is the receiver's to discard; it has no arm. */
		break;
	}
	return 0;
}

static int
decode_propset(struct rpcr_xdr_dec *d, struct rpcr_proto_v2_propset *s)
{
	uint32_t n, i;

	s->n = 0;
	if (rpcr_xdr_dec_u32(d, &n) != 0)
		return RPCR_PROTO_EBADXDR;
	/* Each propval takes at least two words. */
	if (n > rpcr_xdr_dec_left(d) / (2 * RPCR_XDR_UNIT))
		return RPCR_PROTO_EBADXDR;
	if (n > s->cap)
		return RPCR_PROTO_EOVERFLOW;
	for (i = 0; i < n; i++) {
		struct rpcr_proto_v2_prop *p = &s->props[i];
		const void *data;
		int rc;

		if (rpcr_xdr_dec_u32(d, &p->which) != 0)
			return RPCR_PROTO_EBADXDR;
		/* §5.1: rdma_data longer than the message is BAD_PROPVAL, not BAD_XDR. */
		rc = rpcr_xdr_dec_opaque(d, UINT32_MAX, &data, &p->len);
		if (rc != 0)
			return rpcr_xdr_dec_left(d) < RPCR_XDR_UNIT ? RPCR_PROTO_EBADXDR
								    : RPCR_PROTO_EPROPVAL;
		p->data = (const uint8_t *)data;
		rc = rpcr_proto_v2_prop_check(p);
		if (rc != 0)
			return rc;
		s->n = i + 1;
	}
	return 0;
}

ssize_t
rpcr_proto_v2_decode_full(struct rpcr_proto_v2_hdr *h, const void *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	struct rpcr_proto_fixed f;
	const void *data;
	int rc;

	rc = rpcr_proto_peek(buf, len, &f);
	if (unlikely(rc != 0))
		return rc;
	h->xid = f.xid;
	h->vers = f.vers;
	h->credit = f.credit;
	h->htype = f.proc;
	h->flags = 0;
	rpcr_proto_chunks_reset(&h->chunks);
	h->props.n = 0;
	if (unlikely(f.vers != RPCR_PROTO_V2_VERS))
		return RPCR_PROTO_EVERS;
	/* §7: shorter than the prefix, the xid cannot be trusted: drop without a reply. */
	if (unlikely(len < RPCR_PROTO_V2_PREFIX))
		return RPCR_PROTO_ESHORT;
	h->flags = rpcr_xdr_load32((const uint8_t *)buf + 16);
	rpcr_xdr_dec_init(&d, (const uint8_t *)buf + RPCR_PROTO_V2_PREFIX,
			  len - RPCR_PROTO_V2_PREFIX);

	switch (h->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
	case RPCR_PROTO_V2_ERROR:
	case RPCR_PROTO_V2_CONNPROP:
	case RPCR_PROTO_V2_OPTIONAL:
		break;
	default:
		return RPCR_PROTO_EHTYPE;
	}
	/* §6.2.2.3: TPMORE on anything but CONNPROP is INVAL_HTYPE. */
	if ((h->flags & RPCR_PROTO_V2_F_TPMORE) && h->htype != RPCR_PROTO_V2_CONNPROP)
		return RPCR_PROTO_EHTYPE;
	/* §6.2.2.2: MORE only on MSG and CONNPROP. */
	if ((h->flags & RPCR_PROTO_V2_F_MORE) && h->htype != RPCR_PROTO_V2_MSG &&
	    h->htype != RPCR_PROTO_V2_CONNPROP)
		return RPCR_PROTO_ECONT;

	switch (h->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		if (rpcr_xdr_dec_u32(&d, &h->inv_handle) != 0)
			return RPCR_PROTO_EBADXDR;
		rc = rpcr_proto_chunks_decode(&d, &h->chunks);
		if (rc != 0)
			return rc;
		/* §6.2.2.2: chunks travel only in the last message of a continued sequence. */
		if ((h->flags & RPCR_PROTO_V2_F_MORE) &&
		    (h->chunks.nreads != 0 || h->chunks.nwrites != 0 || h->chunks.has_reply))
			return RPCR_PROTO_ECONT;
		break;
	case RPCR_PROTO_V2_ERROR:
		rc = decode_error(&d, h);
		if (rc != 0)
			return rc;
		break;
	case RPCR_PROTO_V2_CONNPROP:
		rc = decode_propset(&d, &h->props);
		if (rc != 0)
			return rc;
		break;
	default: /* RPCR_PROTO_V2_OPTIONAL */
		if (rpcr_xdr_dec_u32(&d, &h->opttype) != 0 ||
		    rpcr_xdr_dec_opaque(&d, UINT32_MAX, &data, &h->optinfo_len) != 0)
			return RPCR_PROTO_EBADXDR;
		h->optinfo = (const uint8_t *)data;
		break;
	}
	return (ssize_t)(RPCR_PROTO_V2_PREFIX + rpcr_xdr_dec_pos(&d));
}

uint32_t
rpcr_proto_v2_errcode(int err)
{
	switch (err) {
	case 0:
	case RPCR_PROTO_ESHORT:
		return 0;
	case RPCR_PROTO_EVERS:
		return RPCR_PROTO_V2_ERR_VERS;
	case RPCR_PROTO_EHTYPE:
		return RPCR_PROTO_V2_ERR_INVAL_HTYPE;
	case RPCR_PROTO_EBADXDR:
		return RPCR_PROTO_V2_ERR_BAD_XDR;
	case RPCR_PROTO_ECONT:
		return RPCR_PROTO_V2_ERR_INVAL_CONT;
	case RPCR_PROTO_EPROPVAL:
		return RPCR_PROTO_V2_ERR_BAD_PROPVAL;
	case RPCR_PROTO_EREADS:
		return RPCR_PROTO_V2_ERR_READ_CHUNKS;
	case RPCR_PROTO_EWRITES:
		return RPCR_PROTO_V2_ERR_WRITE_CHUNKS;
	case RPCR_PROTO_ESEGS:
		return RPCR_PROTO_V2_ERR_SEGMENTS;
	default:
		return RPCR_PROTO_V2_ERR_SYSTEM;
	}
}

static bool
props_equal(const struct rpcr_proto_v2_propset *a, const struct rpcr_proto_v2_propset *b)
{
	uint32_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++) {
		const struct rpcr_proto_v2_prop *x = &a->props[i], *y = &b->props[i];

		if (x->which != y->which || x->len != y->len ||
		    (x->len != 0 && memcmp(x->data, y->data, x->len) != 0))
			return false;
	}
	return true;
}

bool
rpcr_proto_v2_equal(const struct rpcr_proto_v2_hdr *a, const struct rpcr_proto_v2_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit ||
	    a->htype != b->htype || a->flags != b->flags)
		return false;
	switch (a->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		return a->inv_handle == b->inv_handle &&
		       rpcr_proto_chunks_equal(&a->chunks, &b->chunks);
	case RPCR_PROTO_V2_ERROR:
		if (a->err != b->err)
			return false;
		switch (a->err) {
		case RPCR_PROTO_V2_ERR_VERS:
			return a->vers_low == b->vers_low && a->vers_high == b->vers_high;
		case RPCR_PROTO_V2_ERR_READ_CHUNKS:
		case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
			return a->max_chunks == b->max_chunks;
		case RPCR_PROTO_V2_ERR_SEGMENTS:
			return a->max_segments == b->max_segments;
		case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
			return a->chunk_index == b->chunk_index &&
			       a->length_needed == b->length_needed;
		case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
			return a->length_needed == b->length_needed;
		default:
			return true;
		}
	case RPCR_PROTO_V2_CONNPROP:
		return props_equal(&a->props, &b->props);
	case RPCR_PROTO_V2_OPTIONAL:
		return a->opttype == b->opttype && a->optinfo_len == b->optinfo_len &&
		       (a->optinfo_len == 0 || memcmp(a->optinfo, b->optinfo, a->optinfo_len) == 0);
	default:
		return true;
	}
}
