/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Messages: the XDR cursors handed to encoders and decoders, bulk (DDP-eligible) items, and the
 * registrations that expose a chain's memory to the peer for one call.
 */

#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

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

int
rpcr_msg_enc_u32(struct rpcr_msg *m, const void *u32)
{
	return rpcr_xdr_enc_u32(&m->enc, *(const uint32_t *)u32);
}

int
rpcr_msg_dec_u32(struct rpcr_msg *m, void *u32)
{
	return rpcr_xdr_dec_u32(&m->dec, u32);
}

int
rpcr_msg_enc_bulk(struct rpcr_msg *m, const void *bulk)
{
	return rpcr_msg_put_bulk(m, bulk);
}

int
rpcr_msg_dec_bulk(struct rpcr_msg *m, void *bulk)
{
	return rpcr_msg_get_bulk(m, UINT32_MAX, bulk);
}

/* The iterator of bulk views, inline here: rpcr_bulk_copy() is on the path of every small
 * DDP-eligible item sent inline (xprt_bulk_copy_in()), where calls through the library's PLT
 * would cost more than the walk. */
static inline void
iter_init(struct rpcr_bulk_iter *it, const struct rpcr_bulk *b)
{
	it->off = b->off;
	it->m = seek(b->m, &it->off);
	it->left = b->len;
}

static inline bool
iter_next(struct rpcr_bulk_iter *it, const uint8_t **data, uint32_t *len)
{
	while (it->left != 0 && it->m != NULL) {
		uint32_t n = RTE_MIN(it->left, (uint32_t)it->m->data_len - it->off);
		const struct rte_mbuf *m = it->m;
		uint32_t off = it->off;

		it->m = m->next;
		it->off = 0;
		if (n == 0)
			continue;
		it->left -= n;
		*data = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
		*len = n;
		return true;
	}
	return false;
}

void
rpcr_bulk_iter_init(struct rpcr_bulk_iter *it, const struct rpcr_bulk *b)
{
	iter_init(it, b);
}

bool
rpcr_bulk_iter_next(struct rpcr_bulk_iter *it, const uint8_t **data, uint32_t *len)
{
	return iter_next(it, data, len);
}

uint32_t
rpcr_bulk_copy(const struct rpcr_bulk *b, void *dst, uint32_t max)
{
	struct rpcr_bulk_iter it;
	const uint8_t *piece;
	uint32_t n, done = 0;

	iter_init(&it, b);
	it.left = RTE_MIN(b->len, max);
	while (iter_next(&it, &piece, &n)) {
		memcpy((uint8_t *)dst + done, piece, n);
		done += n;
	}
	return done;
}

uint32_t
rpcr_bulk_write(const struct rpcr_bulk *b, uint32_t off, const void *src, uint32_t len)
{
	struct rpcr_bulk view;
	struct rpcr_bulk_iter it;
	const uint8_t *piece;
	uint32_t n, done = 0;

	if (off >= b->len)
		return 0;
	view = (struct rpcr_bulk){b->m, b->off + off, RTE_MIN(b->len - off, len)};
	iter_init(&it, &view);
	while (iter_next(&it, &piece, &n)) {
		/* (The caller's own memory: the iterator's pieces are const for views it reads.) */
		memcpy((uint8_t *)(uintptr_t)piece, (const uint8_t *)src + done, n);
		done += n;
	}
	return done;
}

int
rpcr_bulk_cmp(const struct rpcr_bulk *b, const void *mem, uint32_t len)
{
	struct rpcr_bulk_iter it;
	const uint8_t *piece;
	uint32_t n, done = 0;
	int rc;

	iter_init(&it, b);
	while (done < len && iter_next(&it, &piece, &n)) {
		n = RTE_MIN(n, len - done);
		rc = memcmp(piece, (const uint8_t *)mem + done, n);
		if (rc != 0)
			return rc;
		done += n;
	}
	/* Equal so far: the shorter one is less. */
	return b->len == len ? 0 : b->len < len ? -1 : 1;
}

/* A large bulk buffer: contiguous arena memory, registered for it alone (bulk_big_free() gives
 * both back when the chain's last mbuf goes). */
struct bulk_big {
	struct rpcr_mem_reg reg;
};

static void
bulk_big_free(void *addr, void *opaque)
{
	struct bulk_big *b = opaque;

	(void)rpcr_rdev_mr_dereg(b->reg.mr);
	rte_free(addr);
	rte_free(b);
}

struct rte_mbuf *
rpcr_bulk_alloc(struct rpcr_xprt_poller *p, uint32_t len)
{
	struct rpcr_rdev_mr *mr = NULL;
	struct bulk_big *b = NULL;
	struct rte_mbuf *m;
	void *mem = NULL;

	if (p == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* Up to what one chunk of pool buffers can carry (a segment per buffer). */
	if (len <= XPRT_MAX_SEGS * XPRT_BULK_DATA) {
		m = rpcr_chunk_alloc_chain(p->bulk, len);
		if (m == NULL)
			rte_errno = ENOMEM;
		return m;
	}
	/* More: one contiguous run, one segment. */
	mem = rpcr_mem_arena_alloc(p->arena, len, 4096);
	b = rte_zmalloc("rpcr_bulk", sizeof(*b), 0);
	if (mem != NULL && b != NULL)
		mr = rpcr_rdev_mr_reg(p->pd, mem, len, rpcr_xprt_poller_mem_access(p));
	if (mr == NULL)
		goto fail;
	b->reg = (struct rpcr_mem_reg){
		.mr = mr, .addr = mem, .len = len, .access = mr->access, .refcnt = 1};
	m = rpcr_chunk_attach(p->pool, &b->reg, mem, len, bulk_big_free, b);
	if (m != NULL)
		return m;
	(void)rpcr_rdev_mr_dereg(mr);
fail:
	rte_free(mem);
	rte_free(b);
	rte_errno = ENOMEM;
	return NULL;
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
