/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#include "codec_any.h"

void
rpcr_any_init(struct rpcr_any *m, enum rpcr_golden_family family)
{
	struct rpcr_proto_chunks *c = NULL;

	memset(&m->u, 0, sizeof(m->u));
	memset(&m->xchar, 0, sizeof(m->xchar));
	m->family = family;
	if (family == RPCR_GOLDEN_V1)
		c = &m->u.v1.chunks;
	else if (family == RPCR_GOLDEN_V2 || family == RPCR_GOLDEN_XCHAR)
		c = &m->u.v2.chunks;
	if (c != NULL)
		rpcr_proto_chunks_init(c, m->reads, ANY_READS, m->writes, ANY_WRITES, m->segs,
				       ANY_SEGS);
	m->u.v2.props.props = family == RPCR_GOLDEN_V2 ? m->props : NULL;
	m->u.v2.props.cap = family == RPCR_GOLDEN_V2 ? ANY_PROPS : 0;
	m->xchar.spec.vals = m->vals;
	m->xchar.spec.cap = ANY_PROPS;
	for (int i = 0; i < 3; i++) {
		m->xchar.sub[i].words = m->words[i];
		m->xchar.sub[i].cap = ANY_WORDS;
	}
}

long
rpcr_any_decode(struct rpcr_any *m, const uint8_t *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	ssize_t n;
	int rc;

	switch (m->family) {
	case RPCR_GOLDEN_V1:
		return rpcr_proto_v1_decode(&m->u.v1, buf, len);
	case RPCR_GOLDEN_V2:
		return rpcr_proto_v2_decode(&m->u.v2, buf, len);
	case RPCR_GOLDEN_XCHAR:
		n = rpcr_proto_v2_decode(&m->u.v2, buf, len);
		if (n < 0)
			return n;
		if (m->u.v2.htype != RPCR_PROTO_V2_OPTIONAL)
			return RPCR_PROTO_EHTYPE;
		rc = rpcr_proto_v2_xchar_decode(&m->u.v2, &m->xchar);
		return rc != 0 ? rc : n;
	case RPCR_GOLDEN_CM:
		rc = rpcr_proto_cm_decode(&m->u.cm, buf, len);
		return rc != 0 ? rc : (m->u.cm.present ? 1 : 0);
	case RPCR_GOLDEN_CALL:
		return rpcr_oncrpc_call_decode(&m->u.call, buf, len);
	case RPCR_GOLDEN_REPLY:
		return rpcr_oncrpc_reply_decode(&m->u.reply, buf, len);
	case RPCR_GOLDEN_AUTHSYS:
		return rpcr_oncrpc_authsys_decode(&m->u.authsys, buf, len);
	case RPCR_GOLDEN_CONF_REQ:
		rpcr_xdr_dec_init(&d, buf, len);
		rc = rpcr_proto_conf_rdma_req_decode(&d, &m->u.conf_req);
		return rc != 0 ? rc : (rpcr_xdr_dec_left(&d) == 0 ? 0 : RPCR_PROTO_EBADXDR);
	case RPCR_GOLDEN_CONF_REPLY:
		rpcr_xdr_dec_init(&d, buf, len);
		rc = rpcr_proto_conf_rdma_reply_decode(&d, &m->u.conf_reply);
		return rc != 0 ? rc : (rpcr_xdr_dec_left(&d) == 0 ? 0 : RPCR_PROTO_EBADXDR);
	default:
		return -EINVAL;
	}
}

size_t
rpcr_any_size(const struct rpcr_any *m)
{
	switch (m->family) {
	case RPCR_GOLDEN_V1:
		return rpcr_proto_v1_size(&m->u.v1);
	case RPCR_GOLDEN_V2:
		return rpcr_proto_v2_size(&m->u.v2);
	case RPCR_GOLDEN_XCHAR:
		return RPCR_PROTO_V2_PREFIX + 8 + rpcr_proto_xchar_size(&m->xchar);
	case RPCR_GOLDEN_CM:
		return RPCR_PROTO_CM_SIZE;
	case RPCR_GOLDEN_CALL:
		return rpcr_oncrpc_call_size(&m->u.call);
	case RPCR_GOLDEN_REPLY:
		return rpcr_oncrpc_reply_size(&m->u.reply);
	case RPCR_GOLDEN_AUTHSYS:
		return rpcr_oncrpc_authsys_size(&m->u.authsys);
	default:
		return RPCR_PROTO_CONF_RDMA_SIZE;
	}
}

long
rpcr_any_encode(const struct rpcr_any *m, uint8_t *buf, size_t len)
{
	struct rpcr_xdr_enc e;
	int rc;

	switch (m->family) {
	case RPCR_GOLDEN_V1:
		return rpcr_proto_v1_encode(&m->u.v1, buf, len);
	case RPCR_GOLDEN_V2:
		return rpcr_proto_v2_encode(&m->u.v2, buf, len);
	case RPCR_GOLDEN_XCHAR:
		return rpcr_proto_v2_xchar_encode(&m->u.v2, &m->xchar, buf, len);
	case RPCR_GOLDEN_CM:
		return rpcr_proto_cm_encode(&m->u.cm, buf, len);
	case RPCR_GOLDEN_CALL:
		return rpcr_oncrpc_call_encode(&m->u.call, buf, len);
	case RPCR_GOLDEN_REPLY:
		return rpcr_oncrpc_reply_encode(&m->u.reply, buf, len);
	case RPCR_GOLDEN_AUTHSYS:
		return rpcr_oncrpc_authsys_encode(&m->u.authsys, buf, len);
	case RPCR_GOLDEN_CONF_REQ:
		rpcr_xdr_enc_init(&e, buf, len);
		rc = rpcr_proto_conf_rdma_req_encode(&e, &m->u.conf_req);
		return rc != 0 ? rc : (long)rpcr_xdr_enc_pos(&e);
	case RPCR_GOLDEN_CONF_REPLY:
		rpcr_xdr_enc_init(&e, buf, len);
		rc = rpcr_proto_conf_rdma_reply_encode(&e, &m->u.conf_reply);
		return rc != 0 ? rc : (long)rpcr_xdr_enc_pos(&e);
	default:
		return -EINVAL;
	}
}

bool
rpcr_any_equal(const struct rpcr_any *a, const struct rpcr_any *b)
{
	const struct rpcr_proto_conf_rdma_req *qa = &a->u.conf_req, *qb = &b->u.conf_req;
	const struct rpcr_proto_conf_rdma_reply *ra = &a->u.conf_reply, *rb = &b->u.conf_reply;

	if (a->family != b->family)
		return false;
	switch (a->family) {
	case RPCR_GOLDEN_V1:
		return rpcr_proto_v1_equal(&a->u.v1, &b->u.v1);
	case RPCR_GOLDEN_V2:
		return rpcr_proto_v2_equal(&a->u.v2, &b->u.v2);
	case RPCR_GOLDEN_XCHAR:
		return a->u.v2.xid == b->u.v2.xid && a->u.v2.credit == b->u.v2.credit &&
		       a->u.v2.flags == b->u.v2.flags &&
		       rpcr_proto_xchar_equal(&a->xchar, &b->xchar);
	case RPCR_GOLDEN_CM:
		return a->u.cm.present == b->u.cm.present &&
		       a->u.cm.remote_inv == b->u.cm.remote_inv &&
		       a->u.cm.send_size == b->u.cm.send_size &&
		       a->u.cm.recv_size == b->u.cm.recv_size;
	case RPCR_GOLDEN_CALL:
		return rpcr_oncrpc_call_equal(&a->u.call, &b->u.call);
	case RPCR_GOLDEN_REPLY:
		return rpcr_oncrpc_reply_equal(&a->u.reply, &b->u.reply);
	case RPCR_GOLDEN_AUTHSYS:
		return rpcr_oncrpc_authsys_equal(&a->u.authsys, &b->u.authsys);
	case RPCR_GOLDEN_CONF_REQ:
		return qa->maxcall_sendsize == qb->maxcall_sendsize &&
		       qa->maxreply_sendsize == qb->maxreply_sendsize &&
		       qa->maxrdmaread == qb->maxrdmaread;
	case RPCR_GOLDEN_CONF_REPLY:
		return ra->maxcall_sendsize == rb->maxcall_sendsize && ra->align == rb->align &&
		       ra->maxrdmaread == rb->maxrdmaread;
	default:
		return false;
	}
}

/* ---- random messages ---- */

static void
rand_seg(struct rpcr_test_rng *r, struct rpcr_proto_seg *s)
{
	s->handle = rpcr_test_rand_u32_edgy(r);
	s->length = rpcr_test_rand_u32_edgy(r);
	s->offset = rpcr_test_rand64(r);
}

static void
rand_chunks(struct rpcr_test_rng *r, struct rpcr_proto_chunks *c)
{
	struct rpcr_proto_seg segs[ANY_SEGS];
	uint32_t i, n, pos = 0;

	rpcr_proto_chunks_reset(c);
	/* Mostly small lists, sometimes up to the capacities. */
	n = rpcr_test_below(r, 4) == 0 ? rpcr_test_below(r, c->reads_cap + 1)
				       : rpcr_test_below(r, 3);
	for (i = 0; i < n; i++) {
		struct rpcr_proto_seg s;

		/* Runs of equal positions make multi-segment read chunks. */
		if (rpcr_test_below(r, 3) != 0)
			pos = rpcr_test_rand_u32_edgy(r);
		rand_seg(r, &s);
		CHECK_EQ(rpcr_proto_chunks_add_read(c, pos, &s), 0);
	}
	n = rpcr_test_below(r, 4) == 0 ? rpcr_test_below(r, c->writes_cap + 1)
				       : rpcr_test_below(r, 3);
	for (i = 0; i < n; i++) {
		uint32_t k = rpcr_test_below(r, 5), j;

		if (k > c->segs_cap - c->nsegs)
			break;
		for (j = 0; j < k; j++)
			rand_seg(r, &segs[j]);
		CHECK_EQ(rpcr_proto_chunks_add_write(c, segs, k), 0);
	}
	if (rpcr_test_below(r, 2)) {
		uint32_t k = rpcr_test_below(r, 5), j;

		if (k <= c->segs_cap - c->nsegs) {
			for (j = 0; j < k; j++)
				rand_seg(r, &segs[j]);
			CHECK_EQ(rpcr_proto_chunks_set_reply(c, segs, k), 0);
		}
	}
}

static void
rand_bytes(struct rpcr_test_rng *r, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rpcr_test_rand32(r);
}

/* A valid value for property/characteristic @which into @p (at most 48 bytes); returns length. */
static uint32_t
rand_propdata(struct rpcr_test_rng *r, uint32_t which, bool xchar, uint8_t *p)
{
	uint32_t n;

	if (xchar) {
		switch (which) {
		case RPCR_PROTO_XCHAR_RBSIZ:
			rpcr_xdr_store32(p, rpcr_test_rand32(r));
			return 4;
		case RPCR_PROTO_XCHAR_RQREMINV:
			rpcr_xdr_store32(p, rpcr_test_below(r, 2));
			return 4;
		case RPCR_PROTO_XCHAR_BRS:
			rpcr_xdr_store32(p, rpcr_test_below(r, 4));
			return 4;
		default:
			break;
		}
	} else {
		switch (which) {
		case RPCR_PROTO_V2_PROP_SBSIZ:
		case RPCR_PROTO_V2_PROP_RBSIZ:
		case RPCR_PROTO_V2_PROP_RSSIZ:
		case RPCR_PROTO_V2_PROP_RCSIZ:
			if (rpcr_test_below(r, 4) == 0)
				return 0;
			rpcr_xdr_store32(p, rpcr_test_rand32(r));
			return 4;
		case RPCR_PROTO_V2_PROP_BRS:
			rpcr_xdr_store32(p, rpcr_test_below(r, 4));
			return 4;
		case RPCR_PROTO_V2_PROP_HOSTAUTH:
			n = rpcr_test_below(r, 41);
			rpcr_xdr_store32(p, n);
			rand_bytes(r, p + 4, n);
			memset(p + 4 + n, 0, rpcr_xdr_roundup(n) - n);
			return 4 + (uint32_t)rpcr_xdr_roundup(n);
		default:
			break;
		}
	}
	n = rpcr_test_below(r, 45);
	rand_bytes(r, p, n);
	return n;
}

static uint32_t
rand_which(struct rpcr_test_rng *r, uint32_t known)
{
	return rpcr_test_below(r, 3) != 0 ? 1 + rpcr_test_below(r, known)
					  : rpcr_test_rand_u32_edgy(r) | 0x100;
}

static void
rand_v1(struct rpcr_test_rng *r, struct rpcr_proto_v1_hdr *h)
{
	h->xid = rpcr_test_rand32(r);
	h->vers = RPCR_PROTO_V1_VERS;
	h->credit = rpcr_test_rand_u32_edgy(r);
	h->proc = rpcr_test_below(r, 5);
	h->align = rpcr_test_rand_u32_edgy(r);
	h->thresh = rpcr_test_rand_u32_edgy(r);
	h->err = rpcr_test_below(r, 3) != 0 ? 1 + rpcr_test_below(r, 2) : rpcr_test_rand32(r);
	h->vers_low = rpcr_test_rand_u32_edgy(r);
	h->vers_high = rpcr_test_rand_u32_edgy(r);
	if (rpcr_proto_v1_has_chunks(h->proc))
		rand_chunks(r, &h->chunks);
	else
		rpcr_proto_chunks_reset(&h->chunks);
}

static void
rand_v2(struct rpcr_test_rng *r, struct rpcr_any *m)
{
	static const uint32_t htypes[] = {RPCR_PROTO_V2_MSG, RPCR_PROTO_V2_NOMSG,
					  RPCR_PROTO_V2_ERROR, RPCR_PROTO_V2_CONNPROP,
					  RPCR_PROTO_V2_OPTIONAL};
	struct rpcr_proto_v2_hdr *h = &m->u.v2;
	uint8_t *sp = m->scratch;
	uint32_t i;

	h->xid = rpcr_test_rand32(r);
	h->vers = RPCR_PROTO_V2_VERS;
	h->credit = rpcr_test_rand_u32_edgy(r);
	h->htype = htypes[rpcr_test_below(r, 5)];
	/* Reserved flag bits are the receiver's to ignore, so they round-trip. */
	h->flags = rpcr_test_below(r, 2) * RPCR_PROTO_V2_F_RESPONSE;
	if (rpcr_test_below(r, 8) == 0)
		h->flags |= rpcr_test_rand32(r) & ~7u;
	rpcr_proto_chunks_reset(&h->chunks);
	h->props.n = 0;

	switch (h->htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		h->inv_handle = rpcr_test_rand_u32_edgy(r);
		if (h->htype == RPCR_PROTO_V2_MSG && rpcr_test_below(r, 4) == 0)
			h->flags |= RPCR_PROTO_V2_F_MORE; /* continued: no chunks */
		else
			rand_chunks(r, &h->chunks);
		break;
	case RPCR_PROTO_V2_ERROR:
		h->err = rpcr_test_below(r, 4) != 0 ? 1 + rpcr_test_below(r, 10)
						    : rpcr_test_rand_u32_edgy(r);
		h->vers_low = rpcr_test_rand32(r);
		h->vers_high = rpcr_test_rand32(r);
		h->max_chunks = rpcr_test_rand_u32_edgy(r);
		h->max_segments = rpcr_test_rand_u32_edgy(r);
		h->chunk_index = rpcr_test_rand_u32_edgy(r);
		h->length_needed = rpcr_test_rand_u32_edgy(r);
		break;
	case RPCR_PROTO_V2_CONNPROP:
		h->flags |= rpcr_test_below(r, 2) * RPCR_PROTO_V2_F_TPMORE;
		h->flags |= rpcr_test_below(r, 4) == 0 ? RPCR_PROTO_V2_F_MORE : 0;
		h->props.n = rpcr_test_below(r, ANY_PROPS + 1);
		for (i = 0; i < h->props.n; i++) {
			struct rpcr_proto_v2_prop *p = &m->props[i];

			p->which = rand_which(r, 6);
			p->data = sp;
			p->len = rand_propdata(r, p->which, false, sp);
			sp += 48;
		}
		break;
	default:
		h->opttype = rpcr_test_rand_u32_edgy(r);
		h->optinfo_len = rpcr_test_below(r, 65);
		rand_bytes(r, m->scratch, h->optinfo_len);
		h->optinfo = m->scratch;
		break;
	}
}

static void
rand_subset(struct rpcr_test_rng *r, struct rpcr_proto_xchar_subset *s)
{
	uint32_t i;

	s->n = rpcr_test_below(r, ANY_WORDS + 1);
	for (i = 0; i < s->n; i++)
		s->words[i] = rpcr_test_rand_u32_edgy(r);
}

static void
rand_xchar(struct rpcr_test_rng *r, struct rpcr_any *m)
{
	struct rpcr_proto_xchar *x = &m->xchar;
	uint8_t *sp = m->scratch;
	uint32_t i;

	m->u.v2.xid = rpcr_test_rand32(r);
	m->u.v2.credit = rpcr_test_rand32(r);
	m->u.v2.flags = rpcr_test_below(r, 2);
	x->op = 1 + rpcr_test_below(r, 4);
	x->spec.n = rpcr_test_below(r, ANY_PROPS + 1);
	for (i = 0; i < x->spec.n; i++) {
		x->spec.vals[i].which = rand_which(r, 3);
		x->spec.vals[i].data = sp;
		x->spec.vals[i].len = rand_propdata(r, x->spec.vals[i].which, true, sp);
		sp += 48;
	}
	for (i = 0; i < 3; i++)
		rand_subset(r, &x->sub[i]);
	x->now.which = rand_which(r, 3);
	x->now.data = sp;
	x->now.len = rand_propdata(r, x->now.which, true, sp);
	x->pendclr = rpcr_test_below(r, 2);
}

static void
rand_auth(struct rpcr_test_rng *r, struct rpcr_oncrpc_auth *a, uint8_t *p)
{
	a->flavor = rpcr_test_below(r, 2) ? rpcr_test_below(r, 7) : rpcr_test_rand32(r);
	a->len = rpcr_test_below(r, 3) == 0 ? rpcr_test_below(r, RPCR_ONCRPC_AUTH_MAX + 1)
					    : rpcr_test_below(r, 33);
	rand_bytes(r, p, a->len);
	a->body = p;
}

void
rpcr_any_random(struct rpcr_any *m, struct rpcr_test_rng *r)
{
	struct rpcr_oncrpc_authsys *s = &m->u.authsys;
	uint32_t i;

	switch (m->family) {
	case RPCR_GOLDEN_V1:
		rand_v1(r, &m->u.v1);
		break;
	case RPCR_GOLDEN_V2:
		rand_v2(r, m);
		break;
	case RPCR_GOLDEN_XCHAR:
		rand_xchar(r, m);
		break;
	case RPCR_GOLDEN_CM:
		m->u.cm.present = true;
		m->u.cm.remote_inv = rpcr_test_below(r, 2);
		m->u.cm.send_size = 1024 * (1 + rpcr_test_below(r, 256));
		m->u.cm.recv_size = 1024 * (1 + rpcr_test_below(r, 256));
		break;
	case RPCR_GOLDEN_CALL:
		m->u.call.xid = rpcr_test_rand32(r);
		m->u.call.rpcvers = RPCR_ONCRPC_VERS;
		m->u.call.prog = rpcr_test_rand_u32_edgy(r);
		m->u.call.vers = rpcr_test_rand_u32_edgy(r);
		m->u.call.proc = rpcr_test_rand_u32_edgy(r);
		rand_auth(r, &m->u.call.cred, m->scratch);
		rand_auth(r, &m->u.call.verf, m->scratch + 512);
		break;
	case RPCR_GOLDEN_REPLY:
		m->u.reply.xid = rpcr_test_rand32(r);
		m->u.reply.stat = rpcr_test_below(r, 2);
		rand_auth(r, &m->u.reply.verf, m->scratch);
		m->u.reply.accept_stat =
			rpcr_test_below(r, 4) != 0 ? rpcr_test_below(r, 6) : rpcr_test_rand32(r);
		m->u.reply.reject_stat = rpcr_test_below(r, 2);
		m->u.reply.auth_stat = rpcr_test_rand_u32_edgy(r);
		m->u.reply.mismatch_low = rpcr_test_rand32(r);
		m->u.reply.mismatch_high = rpcr_test_rand32(r);
		break;
	case RPCR_GOLDEN_AUTHSYS:
		s->stamp = rpcr_test_rand32(r);
		s->machine_len = rpcr_test_below(r, RPCR_ONCRPC_AUTHSYS_MACHINE_MAX + 1);
		rand_bytes(r, m->scratch, s->machine_len);
		s->machine = (const char *)m->scratch;
		s->uid = rpcr_test_rand_u32_edgy(r);
		s->gid = rpcr_test_rand_u32_edgy(r);
		s->ngids = rpcr_test_below(r, RPCR_ONCRPC_AUTHSYS_GIDS_MAX + 1);
		for (i = 0; i < s->ngids; i++)
			s->gids[i] = rpcr_test_rand32(r);
		break;
	case RPCR_GOLDEN_CONF_REQ:
		m->u.conf_req.maxcall_sendsize = rpcr_test_rand_u32_edgy(r);
		m->u.conf_req.maxreply_sendsize = rpcr_test_rand_u32_edgy(r);
		m->u.conf_req.maxrdmaread = rpcr_test_rand_u32_edgy(r);
		break;
	default:
		m->u.conf_reply.maxcall_sendsize = rpcr_test_rand_u32_edgy(r);
		m->u.conf_reply.align = rpcr_test_rand_u32_edgy(r);
		m->u.conf_reply.maxrdmaread = rpcr_test_rand_u32_edgy(r);
		break;
	}
}
