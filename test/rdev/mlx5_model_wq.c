/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* The device's side of the mlx5 queue formats (mlx5_model_wq.h). */

#include "mlx5_model_wq.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BB      64u
#define SEG     16u
#define INL_BIT 0x80000000u

static const uint8_t *
unit(const struct mmw_sq *sq, uint32_t bb, uint32_t u)
{
	return sq->buf + ((bb & (sq->cnt - 1)) * BB + u * SEG) % (sq->cnt * BB);
}

/* @len bytes from unit @u of the WQE at @bb, byte @skip on, wrapping at the ring's end. */
static void
ring_read(const struct mmw_sq *sq, uint32_t bb, uint32_t u, uint32_t skip, uint8_t *dst,
	  uint32_t len)
{
	uint32_t ring = sq->cnt * BB;
	uint32_t off = ((bb & (sq->cnt - 1)) * BB + u * SEG + skip) % ring;

	while (len > 0) {
		uint32_t n = ring - off < len ? ring - off : len;

		memcpy(dst, sq->buf + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

uint32_t
mmw_send_size(const struct mmw_sq *sq, uint32_t bb)
{
	struct mlx5_wqe_ctrl_seg c;
	uint32_t ds;

	memcpy(&c, unit(sq, bb, 0), sizeof(c));
	ds = be32toh(c.qpn_ds) & 0x3f;
	if (ds == 0 || ((be32toh(c.opmod_idx_opcode) >> 8) & 0xffff) != (bb & 0xffff) ||
	    (be32toh(c.qpn_ds) >> 8) != sq->qpn)
		return 0;
	return (ds * SEG + BB - 1) / BB;
}

/* A UMR WQE (mmw_send_decode()): its segments, each 16-byte unit read where the ring has it.
 * Only what the device takes inline: the control, UMR control and memory key context segments,
 * then nothing (8 units) or one KLM padded to 64 bytes (12). */
static int
umr_decode(const struct mmw_sq *sq, uint32_t bb, struct mmw_send *w)
{
	struct mlx5_wqe_umr_ctrl_seg uc;
	struct mlx5_wqe_mkey_context_seg mk;
	struct mlx5_wqe_umr_klm_seg klm;

	if (w->ds != 8 && w->ds != 12)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	ring_read(sq, bb, 1, 0, (uint8_t *)&uc, sizeof(uc));
	ring_read(sq, bb, 4, 0, (uint8_t *)&mk, sizeof(mk));
	w->umr.flags = uc.flags;
	w->umr.klm_octo = be16toh(uc.klm_octowords);
	w->umr.mkey_mask = be64toh(uc.mkey_mask);
	w->umr.free = mk.free;
	w->umr.access = mk.access_flags;
	w->umr.qpn_mkey = be32toh(mk.qpn_mkey);
	w->umr.start = be64toh(mk.start_addr);
	w->umr.len = be64toh(mk.len);
	if (!(uc.flags & MLX5_WQE_UMR_CTRL_FLAG_INLINE) || w->umr.klm_octo != (w->ds == 12 ? 4 : 0))
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (w->ds == 12) {
		ring_read(sq, bb, 8, 0, (uint8_t *)&klm, sizeof(klm));
		w->umr.has_klm = true;
		w->umr.klm.addr = be64toh(klm.address);
		w->umr.klm.len = be32toh(klm.byte_count);
		w->umr.klm.key = be32toh(klm.mkey);
	}
	return 0;
}

int
mmw_send_decode(const struct mmw_sq *sq, uint32_t bb, struct mmw_send *w, char *why, size_t whylen)
{
	struct mlx5_wqe_ctrl_seg c;
	uint32_t w0, w1, u, from;

	memcpy(&c, unit(sq, bb, 0), sizeof(c));
	w0 = be32toh(c.opmod_idx_opcode);
	w1 = be32toh(c.qpn_ds);
	w->bb = bb;
	w->ds = w1 & 0x3f;
	w->opcode = (uint8_t)(w0 & 0xff);
	w->signal = (c.fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE) != 0;
	w->fence = c.fm_ce_se & 0xe0;
	w->imm = be32toh(c.imm);
	w->inl = false;
	w->inl_len = 0;
	w->nseg = 0;
	w->raddr = 0;
	w->rkey = 0;
	memset(&w->umr, 0, sizeof(w->umr));
	if (((w0 >> 8) & 0xffff) != (bb & 0xffff) || (w1 >> 8) != sq->qpn || w->ds == 0) {
		snprintf(why, whylen,
			 "QP %#x: WQE at block %u: index %u, QP %#x, size %u (control %#x %#x)",
			 sq->qpn, bb, (w0 >> 8) & 0xffff, w1 >> 8, w->ds, w0, w1);
		return -1;
	}
	w->nbb = (w->ds * SEG + BB - 1) / BB;
	switch (w->opcode) {
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_INVAL:
		from = 1;
		break;
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_READ: {
		struct mlx5_wqe_raddr_seg ra;

		if (w->ds < 2)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		memcpy(&ra, unit(sq, bb, 1), sizeof(ra));
		w->raddr = be64toh(ra.raddr);
		w->rkey = be32toh(ra.rkey);
		from = 2;
		break;
	}
	case MLX5_OPCODE_UMR:
		return umr_decode(sq, bb, w);
	default:
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	}
	if (from < w->ds) {
		struct mlx5_wqe_inl_data_seg inl;

		memcpy(&inl, unit(sq, bb, from), sizeof(inl));
		if (be32toh(inl.byte_count) & INL_BIT) {
			uint32_t len = be32toh(inl.byte_count) & ~INL_BIT;

			if (len > MMW_INLINE_MAX || (4 + len + SEG - 1) / SEG != w->ds - from ||
			    w->opcode == MLX5_OPCODE_RDMA_READ)
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
			ring_read(sq, bb, from, 4, w->inl_data, len);
			w->inl = true;
			w->inl_len = len;
			return 0;
		}
	}
	for (u = from; u < w->ds; u++) {
		struct mlx5_wqe_data_seg d;

		if (w->nseg == MMW_MAX_SEG)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		memcpy(&d, unit(sq, bb, u), sizeof(d));
		w->seg[w->nseg].addr = be64toh(d.addr);
		w->seg[w->nseg].len = be32toh(d.byte_count);
		if (w->seg[w->nseg].len == 0)
			w->seg[w->nseg].len = 0x80000000u;
		w->seg[w->nseg].key = be32toh(d.lkey);
		w->nseg++;
	}
	return 0;
}

unsigned int
mmw_recv_decode(const uint8_t *wqe, uint32_t stride, struct mmw_seg *seg)
{
	unsigned int n = 0;
	uint32_t u;

	for (u = 0; u < stride / SEG && n < MMW_MAX_SEG; u++) {
		struct mlx5_wqe_data_seg d;

		memcpy(&d, wqe + u * SEG, sizeof(d));
		if (be32toh(d.lkey) == MLX5_INVALID_LKEY)
			break;
		seg[n].addr = be64toh(d.addr);
		seg[n].len = be32toh(d.byte_count);
		if (seg[n].len == 0)
			seg[n].len = 0x80000000u;
		seg[n].key = be32toh(d.lkey);
		n++;
	}
	return n;
}

/* ---- shared receive queues ---- */

#define SRQ_NEXT sizeof(struct mlx5_wqe_srq_next_seg)

static struct mlx5_wqe_srq_next_seg *
srq_wqe(const struct mmw_srq *s, uint32_t idx)
{
	return (struct mlx5_wqe_srq_next_seg *)(s->buf + (size_t)idx * s->stride);
}

void
mmw_srq_init(struct mmw_srq *s, uint32_t max_wr, uint32_t max_sge)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->cnt = mmw_pow2up(max_wr + 1);
	s->stride = mmw_pow2up(SRQ_NEXT + SEG * (max_sge != 0 ? max_sge : 1));
	if (s->stride < 32)
		s->stride = 32;
	s->buf = mmw_zalloc((size_t)s->cnt * s->stride);
	s->dbrec = mmw_zalloc(64);
	for (i = 0; i < s->cnt; i++)
		srq_wqe(s, i)->next_wqe_index = htobe16((uint16_t)((i + 1) & (s->cnt - 1)));
}

void
mmw_srq_fini(struct mmw_srq *s)
{
	free(s->buf);
	free((void *)(uintptr_t)s->dbrec);
	s->buf = NULL;
	s->dbrec = NULL;
}

void
mmw_srq_dv(const struct mmw_srq *s, uint32_t srqn, struct mlx5dv_srq *out)
{
	uint64_t mask = out->comp_mask;

	memset(out, 0, sizeof(*out));
	out->buf = s->buf;
	out->dbrec = (__be32 *)(uintptr_t)s->dbrec;
	out->stride = s->stride;
	out->head = 0;
	out->tail = s->cnt - 1;
	if (mask & MLX5DV_SRQ_MASK_SRQN) {
		out->srqn = srqn;
		out->comp_mask = MLX5DV_SRQ_MASK_SRQN;
	}
}

int
mmw_srq_peek(const struct mmw_srq *s, struct mmw_seg *seg, unsigned int *n, char *why,
	     size_t whylen)
{
	uint16_t posted = (uint16_t)be32toh(__atomic_load_n(&s->dbrec[0], __ATOMIC_ACQUIRE));
	uint16_t ahead = (uint16_t)(posted - s->taken);

	if (ahead == 0)
		return -1;
	/* (One WQE, the list's tail, is never posted.) */
	if (ahead > s->cnt - 1) {
		snprintf(why, whylen,
			 "SRQ: doorbell record %u, %u taken: more posted than its %u WQEs hold",
			 posted, s->taken, s->cnt - 1);
		return -2;
	}
	if (s->next >= s->cnt) {
		snprintf(why, whylen, "SRQ: a link to WQE %u of %u", s->next, s->cnt);
		return -2;
	}
	*n = mmw_recv_decode((const uint8_t *)srq_wqe(s, s->next) + SRQ_NEXT,
			     s->stride - (uint32_t)SRQ_NEXT, seg);
	return (int)s->next;
}

void
mmw_srq_advance(struct mmw_srq *s)
{
	s->next = be16toh(srq_wqe(s, s->next)->next_wqe_index);
	s->taken++;
}

unsigned int
mmw_srq_segs(const struct mmw_srq *s, uint32_t idx, struct mmw_seg *seg)
{
	if (idx >= s->cnt)
		return 0;
	return mmw_recv_decode((const uint8_t *)srq_wqe(s, idx) + SRQ_NEXT,
			       s->stride - (uint32_t)SRQ_NEXT, seg);
}

/* ---- CQs ---- */

void *
mmw_zalloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n != 0 ? n : 64) != 0)
		abort();
	memset(p, 0, n != 0 ? n : 64);
	return p;
}

uint32_t
mmw_pow2up(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

void
mmw_cq_init(struct mmw_cq *c, uint32_t cnt, uint32_t size, uint32_t cqn)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	c->cnt = cnt;
	c->size = size;
	c->cqn = cqn;
	c->buf = mmw_zalloc((size_t)cnt * size);
	c->dbrec = mmw_zalloc(64);
	for (i = 0; i < cnt; i++) {
		struct mlx5_cqe64 *e =
			(struct mlx5_cqe64 *)(c->buf + (size_t)i * size + (size - 64));

		e->op_own = MLX5_CQE_INVALID << 4;
	}
}

void
mmw_cq_fini(struct mmw_cq *c)
{
	free(c->buf);
	free((void *)(uintptr_t)c->dbrec);
	c->buf = NULL;
	c->dbrec = NULL;
}

void
mmw_cq_dv(const struct mmw_cq *c, struct mlx5dv_cq *out)
{
	memset(out, 0, sizeof(*out));
	out->buf = c->buf;
	out->dbrec = (__be32 *)(uintptr_t)c->dbrec;
	out->cqe_cnt = c->cnt;
	out->cqe_size = c->size;
	out->cqn = c->cqn;
}

bool
mmw_cq_room(const struct mmw_cq *c)
{
	uint32_t ci = be32toh(__atomic_load_n(&c->dbrec[0], __ATOMIC_ACQUIRE)) & 0xffffffu;

	return ((c->pi - ci) & 0xffffffu) < c->cnt;
}

uint32_t
mmw_cqe_inline_max(const struct mmw_cq *c)
{
	return c->size == 128 ? 64u : 32u;
}

static struct mlx5_cqe64 *
next(struct mmw_cq *c)
{
	uint8_t *e = c->buf + (size_t)(c->pi & (c->cnt - 1)) * c->size;

	/* (The owner byte last, below: the consumer may be reading this entry's old owner.) */
	memset(e, 0, c->size - 1);
	return (struct mlx5_cqe64 *)(e + (c->size - 64));
}

static void
post(struct mmw_cq *c, struct mlx5_cqe64 *e, uint8_t opcode, uint8_t extra)
{
	uint8_t owner = (c->pi & c->cnt) ? 1 : 0;

	__atomic_store_n(&e->op_own, (uint8_t)((opcode << 4) | extra | owner), __ATOMIC_RELEASE);
	c->pi++;
	c->cqes++;
}

void
mmw_cqe_ok(struct mmw_cq *c, uint8_t op, uint32_t qpn, uint16_t counter, uint8_t wqe_op,
	   uint32_t byte_cnt, uint32_t inv_key, const void *inl)
{
	struct mlx5_cqe64 *e = next(c);
	uint8_t extra = 0;

	e->byte_cnt = htobe32(byte_cnt);
	e->sop_drop_qpn = htobe32((op == MLX5_CQE_REQ ? (uint32_t)wqe_op << 24 : 0) | qpn);
	e->wqe_counter = htobe16(counter);
	if (op == MLX5_CQE_RESP_SEND_INV)
		e->imm_inval_pkey = htobe32(inv_key);
	if (inl != NULL) {
		extra = byte_cnt > 32 ? MLX5_INLINE_SCATTER_64 : MLX5_INLINE_SCATTER_32;
		memcpy(extra == MLX5_INLINE_SCATTER_64 ? (uint8_t *)e - 64 : (uint8_t *)e, inl,
		       byte_cnt);
		c->inline_cqes++;
	}
	post(c, e, op, extra);
}

void
mmw_cqe_err(struct mmw_cq *c, bool req, uint32_t qpn, uint16_t counter, uint8_t wqe_op,
	    uint8_t syndrome)
{
	struct mlx5_cqe64 *e = next(c);
	struct mlx5_err_cqe *x = (struct mlx5_err_cqe *)e;

	x->syndrome = syndrome;
	x->vendor_err_synd = 0x42;
	x->s_wqe_opcode_qpn = htobe32(((uint32_t)wqe_op << 24) | qpn);
	x->wqe_counter = htobe16(counter);
	c->err_cqes++;
	post(c, e, req ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR, 0);
}
