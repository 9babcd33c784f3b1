/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* ONC RPC version 2 call and reply headers and AUTH_SYS (RFC 5531 §9, Appendix A). */

#include "rpcr_oncrpc.h"

int
rpcr_oncrpc_peek(const void *buf, size_t len, uint32_t *xid, uint32_t *msg_type)
{
	if (len < 8)
		return -EBADMSG;
	*xid = rpcr_xdr_load32(buf);
	*msg_type = rpcr_xdr_load32((const uint8_t *)buf + 4);
	return 0;
}

static size_t
auth_size(const struct rpcr_oncrpc_auth *a)
{
	return RPCR_XDR_UNIT + (size_t)rpcr_xdr_opaque_size(a->len);
}

static int
encode_auth(struct rpcr_xdr_enc *e, const struct rpcr_oncrpc_auth *a)
{
	int rc = rpcr_xdr_enc_u32(e, a->flavor);

	return rc != 0 ? rc : rpcr_xdr_enc_opaque(e, a->body, a->len);
}

/*
 * Decode opaque_auth: a body over 400 bytes that is otherwise well formed is -EACCES (the
 * server's AUTH_BADCRED/AUTH_BADVERF); one that runs past the message is -EBADMSG.
 */
static int
decode_auth(struct rpcr_xdr_dec *d, struct rpcr_oncrpc_auth *a)
{
	const void *body;
	int rc;

	if (rpcr_xdr_dec_u32(d, &a->flavor) != 0)
		return -EBADMSG;
	rc = rpcr_xdr_dec_opaque(d, RPCR_ONCRPC_AUTH_MAX, &body, &a->len);
	if (rc == -E2BIG)
		return -EACCES;
	if (rc != 0)
		return -EBADMSG;
	a->body = (const uint8_t *)body;
	return 0;
}

static bool
auth_equal(const struct rpcr_oncrpc_auth *a, const struct rpcr_oncrpc_auth *b)
{
	return a->flavor == b->flavor && a->len == b->len &&
	       (a->len == 0 || memcmp(a->body, b->body, a->len) == 0);
}

size_t
rpcr_oncrpc_call_size(const struct rpcr_oncrpc_call *c)
{
	return 6 * RPCR_XDR_UNIT + auth_size(&c->cred) + auth_size(&c->verf);
}

ssize_t
rpcr_oncrpc_call_encode(const struct rpcr_oncrpc_call *c, void *buf, size_t len)
{
	size_t size = rpcr_oncrpc_call_size(c);
	struct rpcr_xdr_enc e;
	uint8_t *p = (uint8_t *)buf;

	if (c->cred.len > RPCR_ONCRPC_AUTH_MAX || c->verf.len > RPCR_ONCRPC_AUTH_MAX)
		return -EINVAL;
	if (size > len)
		return -EMSGSIZE;
	rpcr_xdr_store32(p, c->xid);
	rpcr_xdr_store32(p + 4, RPCR_ONCRPC_CALL);
	rpcr_xdr_store32(p + 8, c->rpcvers);
	rpcr_xdr_store32(p + 12, c->prog);
	rpcr_xdr_store32(p + 16, c->vers);
	rpcr_xdr_store32(p + 20, c->proc);
	rpcr_xdr_enc_init(&e, p + 24, size - 24);
	/* The size is checked: these cannot fail. */
	(void)encode_auth(&e, &c->cred);
	(void)encode_auth(&e, &c->verf);
	return (ssize_t)size;
}

ssize_t
rpcr_oncrpc_call_decode(struct rpcr_oncrpc_call *c, const void *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	const uint8_t *p;
	int rc;

	rpcr_xdr_dec_init(&d, buf, len);
	p = rpcr_xdr_dec_inline(&d, 12);
	if (p == NULL)
		return -EBADMSG;
	c->xid = rpcr_xdr_load32(p);
	if (rpcr_xdr_load32(p + 4) != RPCR_ONCRPC_CALL)
		return -EBADMSG;
	c->rpcvers = rpcr_xdr_load32(p + 8);
	/* RFC 5531 §9: anything but version 2 is answered RPC_MISMATCH, unparsed. */
	if (c->rpcvers != RPCR_ONCRPC_VERS)
		return -EPROTONOSUPPORT;
	p = rpcr_xdr_dec_inline(&d, 12);
	if (p == NULL)
		return -EBADMSG;
	c->prog = rpcr_xdr_load32(p);
	c->vers = rpcr_xdr_load32(p + 4);
	c->proc = rpcr_xdr_load32(p + 8);
	c->auth_stat = RPCR_ONCRPC_AUTH_OK;
	rc = decode_auth(&d, &c->cred);
	if (rc != 0) {
		c->auth_stat = RPCR_ONCRPC_AUTH_BADCRED;
		return rc;
	}
	rc = decode_auth(&d, &c->verf);
	if (rc != 0) {
		c->auth_stat = RPCR_ONCRPC_AUTH_BADVERF;
		return rc;
	}
	return (ssize_t)rpcr_xdr_dec_pos(&d);
}

bool
rpcr_oncrpc_call_equal(const struct rpcr_oncrpc_call *a, const struct rpcr_oncrpc_call *b)
{
	return a->xid == b->xid && a->rpcvers == b->rpcvers && a->prog == b->prog &&
	       a->vers == b->vers && a->proc == b->proc && auth_equal(&a->cred, &b->cred) &&
	       auth_equal(&a->verf, &b->verf);
}

size_t
rpcr_oncrpc_reply_size(const struct rpcr_oncrpc_reply *r)
{
	size_t n = 3 * RPCR_XDR_UNIT; /* xid, REPLY, reply_stat */

	switch (r->stat) {
	case RPCR_ONCRPC_MSG_ACCEPTED:
		n += auth_size(&r->verf) + RPCR_XDR_UNIT;
		if (r->accept_stat == RPCR_ONCRPC_PROG_MISMATCH)
			n += 2 * RPCR_XDR_UNIT;
		return n;
	case RPCR_ONCRPC_MSG_DENIED:
		switch (r->reject_stat) {
		case RPCR_ONCRPC_RPC_MISMATCH:
			return n + 3 * RPCR_XDR_UNIT;
		case RPCR_ONCRPC_AUTH_ERROR:
			return n + 2 * RPCR_XDR_UNIT;
		default:
			return 0;
		}
	default:
		return 0;
	}
}

ssize_t
rpcr_oncrpc_reply_encode(const struct rpcr_oncrpc_reply *r, void *buf, size_t len)
{
	size_t size = rpcr_oncrpc_reply_size(r);
	struct rpcr_xdr_enc e;

	if (size == 0 ||
	    (r->stat == RPCR_ONCRPC_MSG_ACCEPTED && r->verf.len > RPCR_ONCRPC_AUTH_MAX))
		return -EINVAL;
	if (size > len)
		return -EMSGSIZE;
	/* The size is checked: none of the calls below can fail. */
	rpcr_xdr_enc_init(&e, buf, size);
	(void)rpcr_xdr_enc_u32(&e, r->xid);
	(void)rpcr_xdr_enc_u32(&e, RPCR_ONCRPC_REPLY);
	(void)rpcr_xdr_enc_u32(&e, r->stat);
	if (r->stat == RPCR_ONCRPC_MSG_ACCEPTED) {
		(void)encode_auth(&e, &r->verf);
		(void)rpcr_xdr_enc_u32(&e, r->accept_stat);
		if (r->accept_stat == RPCR_ONCRPC_PROG_MISMATCH) {
			(void)rpcr_xdr_enc_u32(&e, r->mismatch_low);
			(void)rpcr_xdr_enc_u32(&e, r->mismatch_high);
		}
	} else {
		(void)rpcr_xdr_enc_u32(&e, r->reject_stat);
		if (r->reject_stat == RPCR_ONCRPC_RPC_MISMATCH) {
			(void)rpcr_xdr_enc_u32(&e, r->mismatch_low);
			(void)rpcr_xdr_enc_u32(&e, r->mismatch_high);
		} else {
			(void)rpcr_xdr_enc_u32(&e, r->auth_stat);
		}
	}
	return (ssize_t)size;
}

ssize_t
rpcr_oncrpc_reply_decode(struct rpcr_oncrpc_reply *r, const void *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	uint32_t mtype;
	int rc;

	rpcr_xdr_dec_init(&d, buf, len);
	if (rpcr_xdr_dec_u32(&d, &r->xid) != 0 || rpcr_xdr_dec_u32(&d, &mtype) != 0 ||
	    mtype != RPCR_ONCRPC_REPLY || rpcr_xdr_dec_u32(&d, &r->stat) != 0)
		return -EBADMSG;
	switch (r->stat) {
	case RPCR_ONCRPC_MSG_ACCEPTED:
		rc = decode_auth(&d, &r->verf);
		if (rc != 0)
			return rc;
		if (rpcr_xdr_dec_u32(&d, &r->accept_stat) != 0)
			return -EBADMSG;
		if (r->accept_stat == RPCR_ONCRPC_PROG_MISMATCH &&
		    (rpcr_xdr_dec_u32(&d, &r->mismatch_low) != 0 ||
		     rpcr_xdr_dec_u32(&d, &r->mismatch_high) != 0))
			return -EBADMSG;
		break;
	case RPCR_ONCRPC_MSG_DENIED:
		if (rpcr_xdr_dec_u32(&d, &r->reject_stat) != 0)
			return -EBADMSG;
		if (r->reject_stat == RPCR_ONCRPC_RPC_MISMATCH) {
			if (rpcr_xdr_dec_u32(&d, &r->mismatch_low) != 0 ||
			    rpcr_xdr_dec_u32(&d, &r->mismatch_high) != 0)
				return -EBADMSG;
		} else if (r->reject_stat == RPCR_ONCRPC_AUTH_ERROR) {
			if (rpcr_xdr_dec_u32(&d, &r->auth_stat) != 0)
				return -EBADMSG;
		} else {
			return -EBADMSG;
		}
		break;
	default:
		return -EBADMSG;
	}
	return (ssize_t)rpcr_xdr_dec_pos(&d);
}

bool
rpcr_oncrpc_reply_equal(const struct rpcr_oncrpc_reply *a, const struct rpcr_oncrpc_reply *b)
{
	if (a->xid != b->xid || a->stat != b->stat)
		return false;
	if (a->stat == RPCR_ONCRPC_MSG_ACCEPTED) {
		if (!auth_equal(&a->verf, &b->verf) || a->accept_stat != b->accept_stat)
			return false;
		return a->accept_stat != RPCR_ONCRPC_PROG_MISMATCH ||
		       (a->mismatch_low == b->mismatch_low && a->mismatch_high == b->mismatch_high);
	}
	if (a->reject_stat != b->reject_stat)
		return false;
	if (a->reject_stat == RPCR_ONCRPC_RPC_MISMATCH)
		return a->mismatch_low == b->mismatch_low && a->mismatch_high == b->mismatch_high;
	return a->auth_stat == b->auth_stat;
}

size_t
rpcr_oncrpc_authsys_size(const struct rpcr_oncrpc_authsys *a)
{
	/* stamp, machinename<>, uid, gid, gids<> */
	return RPCR_XDR_UNIT + (size_t)rpcr_xdr_opaque_size(a->machine_len) + 3 * RPCR_XDR_UNIT +
	       (size_t)a->ngids * RPCR_XDR_UNIT;
}

ssize_t
rpcr_oncrpc_authsys_encode(const struct rpcr_oncrpc_authsys *a, void *buf, size_t len)
{
	struct rpcr_xdr_enc e;
	size_t size;
	uint32_t i;

	if (a->machine_len > RPCR_ONCRPC_AUTHSYS_MACHINE_MAX ||
	    a->ngids > RPCR_ONCRPC_AUTHSYS_GIDS_MAX)
		return -EINVAL;
	size = rpcr_oncrpc_authsys_size(a);
	if (size > RPCR_ONCRPC_AUTH_MAX)
		return -EINVAL;
	if (size > len)
		return -EMSGSIZE;
	/* The size is checked: none of the calls below can fail. */
	rpcr_xdr_enc_init(&e, buf, size);
	(void)rpcr_xdr_enc_u32(&e, a->stamp);
	(void)rpcr_xdr_enc_string(&e, a->machine, a->machine_len);
	(void)rpcr_xdr_enc_u32(&e, a->uid);
	(void)rpcr_xdr_enc_u32(&e, a->gid);
	(void)rpcr_xdr_enc_u32(&e, a->ngids);
	for (i = 0; i < a->ngids; i++)
		(void)rpcr_xdr_enc_u32(&e, a->gids[i]);
	return (ssize_t)size;
}

int
rpcr_oncrpc_authsys_decode(struct rpcr_oncrpc_authsys *a, const void *buf, size_t len)
{
	struct rpcr_xdr_dec d;
	const uint8_t *p;
	uint32_t i;
	int rc;

	if (len > RPCR_ONCRPC_AUTH_MAX)
		return -E2BIG;
	rpcr_xdr_dec_init(&d, buf, len);
	if (rpcr_xdr_dec_u32(&d, &a->stamp) != 0)
		return -EBADMSG;
	rc = rpcr_xdr_dec_string(&d, RPCR_ONCRPC_AUTHSYS_MACHINE_MAX, &a->machine, &a->machine_len);
	if (rc != 0)
		return rc;
	if (rpcr_xdr_dec_u32(&d, &a->uid) != 0 || rpcr_xdr_dec_u32(&d, &a->gid) != 0 ||
	    rpcr_xdr_dec_u32(&d, &a->ngids) != 0)
		return -EBADMSG;
	if (a->ngids > RPCR_ONCRPC_AUTHSYS_GIDS_MAX) {
		a->ngids = 0;
		return -E2BIG;
	}
	p = rpcr_xdr_dec_inline(&d, (size_t)a->ngids * RPCR_XDR_UNIT);
	if (p == NULL) {
		a->ngids = 0;
		return -EBADMSG;
	}
	for (i = 0; i < a->ngids; i++)
		a->gids[i] = rpcr_xdr_load32(p + 4 * i);
	return rpcr_xdr_dec_left(&d) == 0 ? 0 : -EBADMSG;
}

bool
rpcr_oncrpc_authsys_equal(const struct rpcr_oncrpc_authsys *a, const struct rpcr_oncrpc_authsys *b)
{
	return a->stamp == b->stamp && a->machine_len == b->machine_len &&
	       (a->machine_len == 0 || memcmp(a->machine, b->machine, a->machine_len) == 0) &&
	       a->uid == b->uid && a->gid == b->gid && a->ngids == b->ngids &&
	       memcmp(a->gids, b->gids, a->ngids * sizeof(a->gids[0])) == 0;
}
