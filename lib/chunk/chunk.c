/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Chunk pools (rte_pktmbuf pools inside arenas, registered once), external application buffers,
 * and conversions between chains and RDMA segment lists.
 *
 * Every mbuf of a pool keeps its own buffer's keys in its private area ("home" keys); allocation
 * copies them into the keys dynamic field, which attach overwrites with the application memory's
 * keys while the mbuf carries an external buffer.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "rpcr_chunk.h"

int rpcr_chunk_keys_offset = -1;

/* Largest piece of application memory one external-buffer mbuf carries (buf_len is 16 bits). */
#define ATTACH_PIECE 32768u

#define MAX_MRS      16

struct rpcr_chunk_pool {
	struct rte_mempool *mp;
	struct rpcr_rdev_pd *pd;
	struct rpcr_rdev_mr *mrs[MAX_MRS];
	uint32_t nmrs;
	uint32_t access;
	uint16_t headroom;
	uint16_t data_size;
	int err;
};

/* Pool private area: what rte_pktmbuf needs, then ours. */
struct pool_priv {
	struct rte_pktmbuf_pool_private pkt;
	struct rpcr_chunk_pool *pool;
};

static inline struct rpcr_chunk_keys *
home_keys(struct rte_mbuf *m)
{
	return (struct rpcr_chunk_keys *)rte_mbuf_to_priv(m);
}

static int
keys_field_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "rpcr_chunk_keys",
		.size = sizeof(struct rpcr_chunk_keys),
		.align = __alignof__(struct rpcr_chunk_keys),
	};
	int off;

	if (rpcr_chunk_keys_offset >= 0)
		return 0;
	off = rte_mbuf_dynfield_register(&desc);
	if (off < 0)
		return -rte_errno;
	rpcr_chunk_keys_offset = off;
	return 0;
}

/* Register each memory chunk of the mempool. */
static void
reg_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct rpcr_chunk_pool *p = opaque;
	struct rpcr_rdev_mr *mr;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	if (p->err != 0)
		return;
	if (p->nmrs == MAX_MRS) {
		p->err = -E2BIG;
		return;
	}
	mr = rpcr_rdev_mr_reg(p->pd, memhdr->addr, memhdr->len, p->access);
	if (mr == NULL) {
		p->err = -rte_errno;
		return;
	}
	p->mrs[p->nmrs++] = mr;
}

/* Record each mbuf's home keys: those of the registration holding its buffer. */
static void
set_home_keys(struct rte_mempool *mp, void *opaque, void *obj, unsigned int idx)
{
	struct rpcr_chunk_pool *p = opaque;
	struct rte_mbuf *m = obj;
	uintptr_t b = (uintptr_t)m->buf_addr;
	uint32_t i;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	for (i = 0; i < p->nmrs; i++) {
		uintptr_t s = (uintptr_t)p->mrs[i]->addr;

		if (b >= s && b + m->buf_len <= s + p->mrs[i]->len) {
			home_keys(m)->lkey = p->mrs[i]->lkey;
			home_keys(m)->mr = p->mrs[i];
			home_keys(m)->rkey = (p->access & (RPCR_RDEV_ACCESS_REMOTE_READ |
							   RPCR_RDEV_ACCESS_REMOTE_WRITE))
						     ? p->mrs[i]->rkey
						     : 0;
			*rpcr_chunk_keys(m) = *home_keys(m);
			return;
		}
	}
	p->err = -EFAULT;
}

static void
pool_dereg(struct rpcr_chunk_pool *p)
{
	while (p->nmrs > 0)
		rpcr_rdev_mr_dereg(p->mrs[--p->nmrs]);
}

size_t
rpcr_chunk_pool_mem_size(const struct rpcr_chunk_pool_conf *conf)
{
	struct rte_mempool_objsz sz;
	size_t page, hdr, ring, objs;
	uint32_t room;

	if (conf == NULL || conf->n == 0 || conf->data_size == 0)
		return 0;
	room = (uint32_t)conf->headroom + conf->data_size;
	page = conf->arena != NULL ? rpcr_mem_arena_page_size(conf->arena)
				   : (size_t)sysconf(_SC_PAGESIZE);
	rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + sizeof(struct rpcr_chunk_keys) + room,
				  0, &sz);
	/* rte_mempool: a header with a cache per lcore and the private area; a ring of a power
	 * of two entries above n; the objects, none across a page boundary of the arena's
	 * (external memory: rte_mempool_populate_default() asks for IOVA-contiguous objects),
	 * so one larger than a page takes whole pages. */
	hdr = sizeof(struct rte_mempool) + sizeof(struct pool_priv) +
	      (conf->cache_size != 0 ? RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) : 0);
	ring = rte_ring_get_memsize(rte_align32pow2(conf->n + 1));
	if (sz.total_size > page) {
		objs = (size_t)conf->n * RTE_ALIGN_CEIL(sz.total_size, page);
	} else {
		size_t per = page / sz.total_size;

		objs = (conf->n / per) * page + (conf->n % per) * sz.total_size;
	}
	return RTE_ALIGN_CEIL(hdr, page) + RTE_ALIGN_CEIL(ring, page) + RTE_ALIGN_CEIL(objs, page);
}

struct rpcr_chunk_pool *
rpcr_chunk_pool_create(const struct rpcr_chunk_pool_conf *conf)
{
	struct rte_pktmbuf_pool_private pkt = {0};
	struct rpcr_chunk_pool *p;
	struct pool_priv *priv;
	uint32_t room;
	int rc;

	if (conf == NULL || conf->name == NULL || conf->arena == NULL || conf->pd == NULL ||
	    conf->n == 0 || conf->data_size == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	room = (uint32_t)conf->headroom + conf->data_size;
	if (room > UINT16_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	rc = keys_field_register();
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p->pd = conf->pd;
	p->headroom = conf->headroom;
	p->data_size = conf->data_size;
	p->access = conf->access != 0 ? conf->access : RPCR_RDEV_ACCESS_LOCAL_WRITE;

	/* An rte_pktmbuf pool, built by hand to give it a bigger private area and per-mbuf
	 * private room for the home keys. */
	p->mp = rte_mempool_create_empty(
		conf->name, conf->n,
		sizeof(struct rte_mbuf) + sizeof(struct rpcr_chunk_keys) + room, conf->cache_size,
		sizeof(struct pool_priv), rpcr_mem_arena_socket(conf->arena), 0);
	if (p->mp == NULL)
		goto out_free;
	rc = rte_mempool_set_ops_byname(p->mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc != 0) {
		rte_errno = -rc;
		goto out_mp;
	}
	pkt.mbuf_data_room_size = (uint16_t)room;
	pkt.mbuf_priv_size = sizeof(struct rpcr_chunk_keys);
	rte_pktmbuf_pool_init(p->mp, &pkt);
	priv = rte_mempool_get_priv(p->mp);
	priv->pool = p;
	if (rte_mempool_populate_default(p->mp) < 0)
		goto out_mp;
	rte_mempool_obj_iter(p->mp, rte_pktmbuf_init, NULL);

	rte_mempool_mem_iter(p->mp, reg_chunk, p);
	if (p->err == 0)
		rte_mempool_obj_iter(p->mp, set_home_keys, p);
	if (p->err != 0) {
		rte_errno = -p->err;
		goto out_dereg;
	}
	return p;

out_dereg:
	pool_dereg(p);
out_mp:
	rte_mempool_free(p->mp);
out_free:
	free(p);
	return NULL;
}

int
rpcr_chunk_pool_free(struct rpcr_chunk_pool *p)
{
	if (p == NULL)
		return -EINVAL;
	if (rte_mempool_avail_count(p->mp) != p->mp->size)
		return -EBUSY;
	pool_dereg(p);
	rte_mempool_free(p->mp);
	free(p);
	return 0;
}

struct rte_mempool *
rpcr_chunk_pool_mempool(const struct rpcr_chunk_pool *p)
{
	return p->mp;
}

uint16_t
rpcr_chunk_pool_headroom(const struct rpcr_chunk_pool *p)
{
	return p->headroom;
}

struct rte_mbuf *
rpcr_chunk_alloc(struct rpcr_chunk_pool *p)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp);

	if (likely(m != NULL)) {
		m->data_off = p->headroom;
		*rpcr_chunk_keys(m) = *home_keys(m);
	}
	return m;
}

struct rte_mbuf *
rpcr_chunk_alloc_chain(struct rpcr_chunk_pool *p, uint32_t len)
{
	uint32_t n = len == 0 ? 1 : (len + p->data_size - 1) / p->data_size;
	struct rte_mbuf *head = NULL, *prev = NULL, *m;
	uint32_t left = len, i;

	if (n > UINT16_MAX) {
		rte_errno = E2BIG;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		m = rpcr_chunk_alloc(p);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			rte_errno = ENOMEM;
			return NULL;
		}
		m->data_len = (uint16_t)RTE_MIN(left, (uint32_t)p->data_size);
		left -= m->data_len;
		if (head == NULL) {
			head = m;
		} else {
			prev->next = m;
			head->nb_segs++;
		}
		prev = m;
	}
	head->pkt_len = len;
	return head;
}

/* The application's memory, shared by the mbufs that carry pieces of it. */
struct attach_info {
	struct rte_mbuf_ext_shared_info si;
	rpcr_chunk_free_cb_t cb;
	void *opaque;
	void *addr;
};

static void
attach_free(void *addr, void *opaque)
{
	struct attach_info *ai = opaque;

	RTE_SET_USED(addr);
	if (ai->cb != NULL)
		ai->cb(ai->addr, ai->opaque);
	rte_free(ai);
}

struct rte_mbuf *
rpcr_chunk_attach(struct rpcr_chunk_pool *p, const struct rpcr_mem_reg *reg, void *addr,
		  uint32_t len, rpcr_chunk_free_cb_t free_cb, void *opaque)
{
	uintptr_t a = (uintptr_t)addr, r = (uintptr_t)reg->addr;
	uint32_t n = len == 0 ? 1 : (len + ATTACH_PIECE - 1) / ATTACH_PIECE;
	struct rte_mbuf *head = NULL, *prev = NULL, *m;
	struct rpcr_chunk_keys keys;
	struct attach_info *ai;
	uint32_t off = 0, i;

	if (a < r || a + len < a || a + len > r + reg->len) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* The shared reference count and the chain's segment count are 16 bits. */
	if (n > UINT16_MAX) {
		rte_errno = E2BIG;
		return NULL;
	}
	ai = rte_zmalloc("rpcr_attach", sizeof(*ai), 0);
	if (ai == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ai->cb = free_cb;
	ai->opaque = opaque;
	ai->addr = addr;
	ai->si.free_cb = attach_free;
	ai->si.fcb_opaque = ai;
	rte_mbuf_ext_refcnt_set(&ai->si, (uint16_t)n);
	keys.lkey = rpcr_mem_reg_lkey(reg);
	keys.mr = reg->mr;
	keys.rkey = reg->access & (RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE)
			    ? rpcr_mem_reg_rkey(reg)
			    : 0;

	for (i = 0; i < n; i++) {
		uint16_t piece = (uint16_t)RTE_MIN(len - off, ATTACH_PIECE);

		m = rte_pktmbuf_alloc(p->mp);
		if (m == NULL)
			goto fail;
		rte_pktmbuf_attach_extbuf(m, (uint8_t *)addr + off, (rte_iova_t)(a + off), piece,
					  &ai->si);
		m->data_off = 0;
		m->data_len = piece;
		*rpcr_chunk_keys(m) = keys;
		off += piece;
		if (head == NULL) {
			head = m;
		} else {
			prev->next = m;
			head->nb_segs++;
		}
		prev = m;
	}
	head->pkt_len = len;
	return head;

fail:
	/*
	 * The application keeps its memory: its callback must not run. Pieces never attached drop
	 * their references, so that freeing the ones that were releases the shared info once.
	 */
	ai->cb = NULL;
	if (head == NULL) {
		rte_free(ai);
	} else {
		rte_mbuf_ext_refcnt_update(&ai->si, (int16_t) - (int16_t)(n - i));
		rte_pktmbuf_free(head);
	}
	rte_errno = ENOMEM;
	return NULL;
}

/* Position @m/@o at byte @off of the chain. */
static const struct rte_mbuf *
seek(const struct rte_mbuf *m, uint32_t off, uint32_t *o)
{
	while (m != NULL && off >= m->data_len && !(off == 0 && m->data_len == 0)) {
		off -= m->data_len;
		m = m->next;
	}
	*o = off;
	return m;
}

int
rpcr_chunk_to_segs(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		   struct rpcr_proto_seg *segs, uint32_t max)
{
	uint32_t n = 0, o;

	if ((uint64_t)off + len > m->pkt_len)
		return -EINVAL;
	m = seek(m, off, &o);
	while (len != 0) {
		uint32_t take, rkey;
		uint64_t addr;

		if (m == NULL)
			return -EINVAL;
		take = RTE_MIN((uint32_t)(m->data_len - o), len);
		rkey = rpcr_chunk_keys(m)->rkey;
		addr = rte_pktmbuf_mtod_offset(m, uintptr_t, o);
		if (take != 0) {
			if (rkey == 0)
				return -EACCES;
			if (n != 0 && segs[n - 1].handle == rkey &&
			    segs[n - 1].offset + segs[n - 1].length == addr &&
			    segs[n - 1].length <= UINT32_MAX - take) {
				segs[n - 1].length += take;
			} else {
				if (n == max)
					return -E2BIG;
				segs[n++] = (struct rpcr_proto_seg){rkey, take, addr};
			}
		}
		len -= take;
		o = 0;
		m = m->next;
	}
	return (int)n;
}

int
rpcr_chunk_to_sges(const struct rte_mbuf *m, uint32_t off, uint32_t len, struct rpcr_rdev_sge *sges,
		   uint32_t max)
{
	uint32_t n = 0, o;

	if ((uint64_t)off + len > m->pkt_len)
		return -EINVAL;
	m = seek(m, off, &o);
	while (len != 0) {
		uint32_t take, lkey;
		uint64_t addr;

		if (m == NULL)
			return -EINVAL;
		take = RTE_MIN((uint32_t)(m->data_len - o), len);
		lkey = rpcr_chunk_lkey(m);
		addr = rte_pktmbuf_mtod_offset(m, uintptr_t, o);
		if (take != 0) {
			if (n != 0 && sges[n - 1].lkey == lkey &&
			    sges[n - 1].addr + sges[n - 1].length == addr &&
			    sges[n - 1].length <= UINT32_MAX - take) {
				sges[n - 1].length += take;
			} else {
				if (n == max)
					return -E2BIG;
				sges[n++] = (struct rpcr_rdev_sge){addr, take, lkey};
			}
		}
		len -= take;
		o = 0;
		m = m->next;
	}
	return (int)n;
}

/* Start a work request at @remote in @plan. */
static struct rpcr_rdev_send_wr *
plan_wr(struct rpcr_chunk_plan *plan, uint8_t opcode, uint32_t rkey, uint64_t remote)
{
	struct rpcr_rdev_send_wr *w;

	if (plan->nwrs == plan->max_wrs)
		return NULL;
	w = &plan->wrs[plan->nwrs++];
	*w = (struct rpcr_rdev_send_wr){
		.opcode = opcode,
		.rkey = rkey,
		.remote_addr = remote,
		.sg_list = &plan->sges[plan->nsges],
	};
	return w;
}

int
rpcr_chunk_rdma_plan(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		     const struct rpcr_proto_seg *segs, uint32_t nsegs, uint8_t opcode,
		     struct rpcr_chunk_plan *plan)
{
	uint32_t s, o;

	if ((opcode != RPCR_RDEV_WR_READ && opcode != RPCR_RDEV_WR_WRITE) ||
	    plan->max_wr_sge == 0 || (uint64_t)off + len > m->pkt_len)
		return -EINVAL;
	plan->nwrs = 0;
	plan->nsges = 0;
	m = seek(m, off, &o);
	for (s = 0; s < nsegs && len != 0; s++) {
		uint32_t seg_left = RTE_MIN(segs[s].length, len);
		uint64_t remote = segs[s].offset;
		struct rpcr_rdev_send_wr *w = NULL;

		len -= seg_left;
		while (seg_left != 0) {
			uint32_t take, lkey;
			uint64_t addr;

			while (m != NULL && o == m->data_len) {
				m = m->next;
				o = 0;
			}
			if (m == NULL)
				return -EINVAL;
			take = RTE_MIN((uint32_t)(m->data_len - o), seg_left);
			lkey = rpcr_chunk_lkey(m);
			addr = rte_pktmbuf_mtod_offset(m, uintptr_t, o);
			if (w != NULL && w->num_sge != 0 &&
			    w->sg_list[w->num_sge - 1].lkey == lkey &&
			    w->sg_list[w->num_sge - 1].addr + w->sg_list[w->num_sge - 1].length ==
				    addr) {
				w->sg_list[w->num_sge - 1].length += take;
			} else {
				/* A new WR when none is open or this one is full. */
				if (w == NULL || w->num_sge == plan->max_wr_sge) {
					w = plan_wr(plan, opcode, segs[s].handle, remote);
					if (w == NULL)
						return -E2BIG;
				}
				if (plan->nsges == plan->max_sges)
					return -E2BIG;
				plan->sges[plan->nsges++] =
					(struct rpcr_rdev_sge){addr, take, lkey};
				w->num_sge++;
			}
			remote += take;
			seg_left -= take;
			o += take;
		}
	}
	return len == 0 ? 0 : -EINVAL;
}
