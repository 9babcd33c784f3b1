/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Transport characteristics operations (xcharext draft §2.1, §4, §5.2):
 *
 *     xcharval    = which len data<len> pad
 *     xcharspec   = count { xcharval }
 *     xcharsubset = count { word }
 */

#include "rpcr_proto_xchar.h"

int
rpcr_proto_xchar_val_check(const struct rpcr_proto_xchar_val *v)
{
	uint32_t x;

	switch (v->which) {
	case RPCR_PROTO_XCHAR_RBSIZ:
		return v->len == 4 ? 0 : RPCR_PROTO_EPROPVAL;
	case RPCR_PROTO_XCHAR_RQREMINV:
		/* xchrrqrem is an XDR bool: 0 or 1 only. */
		if (v->len != 4)
			return RPCR_PROTO_EPROPVAL;
		x = rpcr_xdr_load32(v->data);
		return x <= 1 ? 0 : RPCR_PROTO_EPROPVAL;
	case RPCR_PROTO_XCHAR_BRS:
		if (v->len != 4)
			return RPCR_PROTO_EPROPVAL;
		x = rpcr_xdr_load32(v->data);
		return x <= RPCR_PROTO_XCHAR_BKRQSUP_GENL ? 0 : RPCR_PROTO_EPROPVAL;
	default:
		/* §2.1: an unknown xcharid is not processed and is no error. */
		return 0;
	}
}

void
rpcr_proto_xchar_val_set_u32(struct rpcr_proto_xchar_val *v, uint32_t which, uint8_t buf[4],
			     uint32_t x)
{
	rpcr_xdr_store32(buf, x);
	v->which = which;
	v->len = 4;
	v->data = buf;
}

uint32_t
rpcr_proto_xchar_val_u32(const struct rpcr_proto_xchar_val *v)
{
	return v->len >= 4 ? rpcr_xdr_load32(v->data) : 0;
}

bool
rpcr_proto_xchar_subset_test(const struct rpcr_proto_xchar_subset *s, uint32_t n)
{
	/* §2.1: words beyond the last one sent are zero. */
	if (n / 32 >= s->n)
		return false;
	return (s->words[n / 32] >> (n % 32)) & 1;
}

static size_t
val_size(const struct rpcr_proto_xchar_val *v)
{
	return RPCR_XDR_UNIT + (size_t)rpcr_xdr_opaque_size(v->len);
}

static size_t
spec_size(const struct rpcr_proto_xchar_spec *s)
{
	size_t n = RPCR_XDR_UNIT;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		n += val_size(&s->vals[i]);
	return n;
}

static size_t
subset_size(const struct rpcr_proto_xchar_subset *s)
{
	return RPCR_XDR_UNIT * (1 + (size_t)s->n);
}

size_t
rpcr_proto_xchar_size(const struct rpcr_proto_xchar *x)
{
	/* Counts beyond the arrays cannot be encoded (nor read). */
	if (x->spec.n > x->spec.cap || x->sub[0].n > x->sub[0].cap || x->sub[1].n > x->sub[1].cap ||
	    x->sub[2].n > x->sub[2].cap)
		return 0;
	switch (x->op) {
	case RPCR_PROTO_XCHAR_INIT:
		return spec_size(&x->spec) + subset_size(&x->sub[0]);
	case RPCR_PROTO_XCHAR_REQ:
		return spec_size(&x->spec);
	case RPCR_PROTO_XCHAR_RESP:
		return subset_size(&x->sub[0]) + subset_size(&x->sub[1]) + subset_size(&x->sub[2]);
	case RPCR_PROTO_XCHAR_UPD:
		return val_size(&x->now) + RPCR_XDR_UNIT;
	default:
		return 0;
	}
}

static int
encode_val(struct rpcr_xdr_enc *e, const struct rpcr_proto_xchar_val *v)
{
	int rc = rpcr_xdr_enc_u32(e, v->which);

	return rc != 0 ? rc : rpcr_xdr_enc_opaque(e, v->data, v->len);
}

static int
encode_spec(struct rpcr_xdr_enc *e, const struct rpcr_proto_xchar_spec *s)
{
	uint32_t i;
	int rc = rpcr_xdr_enc_u32(e, s->n);

	for (i = 0; i < s->n && rc == 0; i++)
		rc = encode_val(e, &s->vals[i]);
	return rc;
}

static int
encode_subset(struct rpcr_xdr_enc *e, const struct rpcr_proto_xchar_subset *s)
{
	uint32_t i;
	int rc = rpcr_xdr_enc_u32(e, s->n);

	for (i = 0; i < s->n && rc == 0; i++)
		rc = rpcr_xdr_enc_u32(e, s->words[i]);
	return rc;
}

int
rpcr_proto_xchar_encode(struct rpcr_xdr_enc *e, const struct rpcr_proto_xchar *x)
{
	size_t size = rpcr_proto_xchar_size(x);
	struct rpcr_xdr_enc sub;
	int rc = 0;
	int i;

	if (size == 0)
		return -EINVAL;
	if (size > rpcr_xdr_enc_left(e))
		return -EMSGSIZE;
	/* Encode into the exact room so that a failure writes nothing past it. */
	rpcr_xdr_enc_init(&sub, e->p, size);

	switch (x->op) {
	case RPCR_PROTO_XCHAR_INIT:
		rc = encode_spec(&sub, &x->spec);
		if (rc == 0)
			rc = encode_subset(&sub, &x->sub[0]);
		break;
	case RPCR_PROTO_XCHAR_REQ:
		rc = encode_spec(&sub, &x->spec);
		break;
	case RPCR_PROTO_XCHAR_RESP:
		for (i = 0; i < 3 && rc == 0; i++)
			rc = encode_subset(&sub, &x->sub[i]);
		break;
	default: /* RPCR_PROTO_XCHAR_UPD */
		rc = encode_val(&sub, &x->now);
		if (rc == 0)
			rc = rpcr_xdr_enc_bool(&sub, x->pendclr);
		break;
	}
	if (rc != 0)
		return rc;
	e->p += size;
	return 0;
}

static int
decode_val(struct rpcr_xdr_dec *d, struct rpcr_proto_xchar_val *v)
{
	const void *data;

	if (rpcr_xdr_dec_u32(d, &v->which) != 0 ||
	    rpcr_xdr_dec_opaque(d, UINT32_MAX, &data, &v->len) != 0)
		return RPCR_PROTO_EBADXDR;
	v->data = (const uint8_t *)data;
	return rpcr_proto_xchar_val_check(v);
}

static int
decode_spec(struct rpcr_xdr_dec *d, struct rpcr_proto_xchar_spec *s)
{
	uint32_t n, i;
	int rc;

	s->n = 0;
	if (rpcr_xdr_dec_u32(d, &n) != 0)
		return RPCR_PROTO_EBADXDR;
	/* An xcharval takes at least two words. */
	if (n > rpcr_xdr_dec_left(d) / (2 * RPCR_XDR_UNIT))
		return RPCR_PROTO_EBADXDR;
	if (n > s->cap)
		return RPCR_PROTO_EOVERFLOW;
	for (i = 0; i < n; i++) {
		rc = decode_val(d, &s->vals[i]);
		if (rc != 0)
			return rc;
		s->n = i + 1;
	}
	return 0;
}

static int
decode_subset(struct rpcr_xdr_dec *d, struct rpcr_proto_xchar_subset *s)
{
	const uint8_t *p;
	uint32_t n, i;

	s->n = 0;
	if (rpcr_xdr_dec_u32(d, &n) != 0)
		return RPCR_PROTO_EBADXDR;
	if (n > rpcr_xdr_dec_left(d) / RPCR_XDR_UNIT)
		return RPCR_PROTO_EBADXDR;
	if (n > s->cap)
		return RPCR_PROTO_EOVERFLOW;
	p = rpcr_xdr_dec_inline(d, (size_t)n * RPCR_XDR_UNIT);
	for (i = 0; i < n; i++)
		s->words[i] = rpcr_xdr_load32(p + 4 * i);
	s->n = n;
	return 0;
}

int
rpcr_proto_xchar_decode(struct rpcr_xdr_dec *d, uint32_t op, struct rpcr_proto_xchar *x)
{
	int rc = 0;
	int i;

	x->op = op;
	x->spec.n = 0;
	for (i = 0; i < 3; i++)
		x->sub[i].n = 0;

	switch (op) {
	case RPCR_PROTO_XCHAR_INIT:
		rc = decode_spec(d, &x->spec);
		if (rc == 0)
			rc = decode_subset(d, &x->sub[0]);
		break;
	case RPCR_PROTO_XCHAR_REQ:
		rc = decode_spec(d, &x->spec);
		break;
	case RPCR_PROTO_XCHAR_RESP:
		for (i = 0; i < 3 && rc == 0; i++)
			rc = decode_subset(d, &x->sub[i]);
		break;
	case RPCR_PROTO_XCHAR_UPD:
		rc = decode_val(d, &x->now);
		if (rc == 0 && rpcr_xdr_dec_bool(d, &x->pendclr) != 0)
			rc = RPCR_PROTO_EBADXDR;
		break;
	default:
		rc = RPCR_PROTO_EHTYPE;
		break;
	}
	return rc;
}

static bool
val_equal(const struct rpcr_proto_xchar_val *a, const struct rpcr_proto_xchar_val *b)
{
	return a->which == b->which && a->len == b->len &&
	       (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static bool
spec_equal(const struct rpcr_proto_xchar_spec *a, const struct rpcr_proto_xchar_spec *b)
{
	uint32_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (!val_equal(&a->vals[i], &b->vals[i]))
			return false;
	return true;
}

static bool
subset_equal(const struct rpcr_proto_xchar_subset *a, const struct rpcr_proto_xchar_subset *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->words, b->words, a->n * 4) == 0);
}

bool
rpcr_proto_xchar_equal(const struct rpcr_proto_xchar *a, const struct rpcr_proto_xchar *b)
{
	if (a->op != b->op)
		return false;
	switch (a->op) {
	case RPCR_PROTO_XCHAR_INIT:
		return spec_equal(&a->spec, &b->spec) && subset_equal(&a->sub[0], &b->sub[0]);
	case RPCR_PROTO_XCHAR_REQ:
		return spec_equal(&a->spec, &b->spec);
	case RPCR_PROTO_XCHAR_RESP:
		return subset_equal(&a->sub[0], &b->sub[0]) &&
		       subset_equal(&a->sub[1], &b->sub[1]) && subset_equal(&a->sub[2], &b->sub[2]);
	case RPCR_PROTO_XCHAR_UPD:
		return val_equal(&a->now, &b->now) && a->pendclr == b->pendclr;
	default:
		return true;
	}
}

ssize_t
rpcr_proto_v2_xchar_encode(const struct rpcr_proto_v2_hdr *prefix, const struct rpcr_proto_xchar *x,
			   void *buf, size_t len)
{
	size_t body = rpcr_proto_xchar_size(x);
	size_t total = RPCR_PROTO_V2_PREFIX + 2 * RPCR_XDR_UNIT + (size_t)rpcr_xdr_roundup(body);
	struct rpcr_xdr_enc e;
	uint8_t *p = (uint8_t *)buf;
	int rc;

	if (body == 0 || body > UINT32_MAX)
		return -EINVAL;
	if (total > len)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, prefix->xid);
	rpcr_xdr_store32(p + 4, RPCR_PROTO_V2_VERS);
	rpcr_xdr_store32(p + 8, prefix->credit);
	rpcr_xdr_store32(p + 12, RPCR_PROTO_V2_OPTIONAL);
	rpcr_xdr_store32(p + 16, prefix->flags);
	rpcr_xdr_store32(p + 20, x->op);
	rpcr_xdr_store32(p + 24, (uint32_t)body);
	/* The body is whole words, so rdma_optinfo needs no padding. */
	rpcr_xdr_enc_init(&e, p + 28, body);
	rc = rpcr_proto_xchar_encode(&e, x);
	return rc != 0 ? rc : (ssize_t)total;
}

int
rpcr_proto_v2_xchar_decode(const struct rpcr_proto_v2_hdr *h, struct rpcr_proto_xchar *x)
{
	struct rpcr_xdr_dec d;
	int rc;

	if (h->htype != RPCR_PROTO_V2_OPTIONAL)
		return RPCR_PROTO_EHTYPE;
	rpcr_xdr_dec_init(&d, h->optinfo, h->optinfo_len);
	rc = rpcr_proto_xchar_decode(&d, h->opttype, x);
	if (rc == 0 && rpcr_xdr_dec_left(&d) != 0)
		rc = RPCR_PROTO_EBADXDR;
	return rc;
}
