/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Messages: the XDR cursors handed to encoders and decoders, bulk (DDP-eligible) items, and the
 * registrations that expose a chain's memory to the peer for one call.
 */

#include <string.h>

#include <rte_errno.h>

#include "xprt_internal.h"

struct rpcr_xdr_enc *
rpcr_msg_enc(struct rpcr_msg *m)
{
	return &m->enc;
}

struct rpcr_xdr_dec *
rpcr_msg_dec(struct rpcr_msg *m)
{
	return &m->dec;
}

int
rpcr_msg_put_bulk(struct rpcr_msg *m, const struct rpcr_bulk *b)
{
	if (m == NULL || b == NULL || (b->len != 0 && b->m == NULL) ||
	    (b->m != NULL && (uint64_t)b->off + b->len > b->m->pkt_len))
		return -EINVAL;
	switch (m->kind) {
	case XPRT_MSG_CALL_ENC:
		return xprt_clnt_put_arg(m, b);
	case XPRT_MSG_REPLY_ENC:
		return xprt_svc_put_res(m, b);
	default:
		return -EINVAL;
	}
}

int
rpcr_msg_get_bulk(struct rpcr_msg *m, uint32_t max, struct rpcr_bulk *b)
{
	if (m == NULL || b == NULL)
		return -EINVAL;
	switch (m->kind) {
	case XPRT_MSG_REPLY_DEC:
		return xprt_clnt_get_res(m, max, b);
	case XPRT_MSG_CALL_DEC:
		return xprt_svc_get_arg(m, max, b);
	default:
		return -EINVAL;
	}
}

/* The segment of chain @p m holding byte @p *off; *off becomes the offset inside it. */
static const struct rte_mbuf *
seek(const struct rte_mbuf *m, uint32_t *off)
{
	while (m != NULL && *off >= m->data_len) {
		*off -= m->data_len;
		m = m->next;
	}
	return m;
}

uint32_t
rpcr_bulk_copy(const struct rpcr_bulk *b, void *dst, uint32_t max)
{
	uint32_t off = b->off, left = RTE_MIN(b->len, max), done = 0;
	const struct rte_mbuf *m = seek(b->m, &off);

	for (; m != NULL && left != 0; m = m->next, off = 0) {
		uint32_t n = RTE_MIN(left, (uint32_t)m->data_len - off);

		memcpy((uint8_t *)dst + done, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		done += n;
		left -= n;
	}
	return done;
}

/* Copy a bulk item's data, and its XDR roundup, into an encoder (the length is written by the
 * caller). */
int
xprt_bulk_copy_in(struct rpcr_xdr_enc *e, const struct rpcr_bulk *b)
{
	uint32_t padded = (uint32_t)rpcr_xdr_roundup(b->len);
	uint8_t *p = rpcr_xdr_enc_reserve(e, padded);

	if (p == NULL)
		return -EMSGSIZE;
	if (b->len != 0 && rpcr_bulk_copy(b, p, b->len) != b->len)
		return -EINVAL;
	memset(p + b->len, 0, padded - b->len);
	return 0;
}

/*
 * Register @p len bytes of chain @p m from @p off for the peer, one registration per run of
 * contiguous memory, and describe them as wire segments. Registrations made are appended to
 * @p mrs (the caller deregisters them, also on failure).
 *
 * @return segments written, or -E2BIG (more runs than allowed), -ENOMEM, -EINVAL.
 */
int
xprt_expose(struct rpcr_rdev_pd *pd, const struct rte_mbuf *m, uint32_t off, uint32_t len,
	    uint32_t access, struct rpcr_rdev_mr **mrs, uint32_t *nmrs, uint32_t max_mrs,
	    struct rpcr_proto_seg *segs, uint32_t max_segs)
{
	uint32_t nsegs = 0;

	m = seek(m, &off);
	while (len != 0) {
		uintptr_t start, end;
		struct rpcr_rdev_mr *mr;
		uint32_t take;

		if (m == NULL)
			return -EINVAL;
		take = RTE_MIN(len, (uint32_t)m->data_len - off);
		if (take == 0) {
			m = m->next;
			off = 0;
			continue;
		}
		start = rte_pktmbuf_mtod_offset(m, uintptr_t, off);
		end = start + take;
		len -= take;
		/* Extend over neighbours that continue the same memory. */
		for (m = m->next, off = 0; len != 0 && m != NULL; m = m->next) {
			uintptr_t a = rte_pktmbuf_mtod(m, uintptr_t);
			uint32_t t;

			if (a != end || m->data_len == 0)
				break;
			t = RTE_MIN(len, (uint32_t)m->data_len);
			end += t;
			len -= t;
		}
		if (nsegs == max_segs || *nmrs == max_mrs)
			return -E2BIG;
		mr = rpcr_rdev_mr_reg(pd, (void *)start, end - start, access);
		if (mr == NULL)
			return rte_errno == ENOSPC ? -ENOMEM : -rte_errno;
		mrs[(*nmrs)++] = mr;
		segs[nsegs].handle = mr->rkey;
		segs[nsegs].length = (uint32_t)(end - start);
		segs[nsegs].offset = start;
		nsegs++;
	}
	return (int)nsegs;
}
