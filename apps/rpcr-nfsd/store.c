/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The in-memory store: an inode table (handles carry the inode number and a generation, so a
 * handle of a removed file is stale, never another file's), directories as arrays of entries
 * with stable cookies, and file data as sorted extents of registered buffers.
 *
 * Data without a copy: a WRITE whose data came in a read chunk landed in the poller's bulk
 * buffers; the store takes a reference to each of those buffers and keeps them as the file's
 * extents. A READ answers with indirect mbufs attached to the extents' buffers, which the engine
 * RDMA-Writes into the client's write chunk. Data that came inline (in the receive buffer, which
 * the engine reuses) is copied into buffers of the store's own. Overwrites and truncation trim or
 * drop extents; a buffer goes back to its pool when neither the file nor a reply in flight holds
 * it. Holes read as zeros from one registered zero buffer.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "nfsd.h"

#define ZERO_LEN  32768u
#define SMALL_LEN 4096u

void
nfsd_touch(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

static void
noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

int
nfsd_store_init(struct nfsd_store *st, struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a,
		uint32_t bulk_total, uint32_t small_bufs)
{
	struct rpcr_mem_cache_conf mcc = {0};
	struct rpcr_chunk_pool_conf spc = {0};
	struct nfsd_inode *root;

	memset(st, 0, sizeof(*st));
	st->arena = a;
	st->views[0] =
		(struct nfsd_view){p, rpcr_xprt_poller_pool(p),
				   rpcr_chunk_pool_mempool(rpcr_xprt_poller_bulk_pool(p)), NULL};
	st->nviews = 1;
	st->msgpool = rpcr_xprt_poller_pool(p);
	st->bulkpool = rpcr_xprt_poller_bulk_pool(p);
	st->bulk_mp = rpcr_chunk_pool_mempool(st->bulkpool);
	st->bulk_total = bulk_total;
	/* Inline WRITE data is copied into buffers of the store's own, never into the poller's
	 * message buffers: files holding those would starve the engine's receives. */
	spc.name = "nfsd-small";
	spc.arena = a;
	spc.pd = rpcr_xprt_poller_pd(p);
	spc.n = small_bufs;
	spc.cache_size = 0;
	spc.data_size = SMALL_LEN;
	spc.headroom = 0;
	st->smallpool = rpcr_chunk_pool_create(&spc);
	if (st->smallpool == NULL)
		return -rte_errno;
	st->mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(p), &mcc);
	st->zero = rpcr_mem_arena_alloc(a, ZERO_LEN, 4096);
	if (st->mc == NULL || st->zero == NULL)
		return -ENOMEM;
	memset(st->zero, 0, ZERO_LEN);
	st->zero_reg = rpcr_mem_reg(st->mc, st->zero, ZERO_LEN, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	if (st->zero_reg == NULL)
		return -rte_errno;
	st->n = 1; /* inode 0 is never used */
	root = nfsd_store_new(st, NFSD_DIR, 0777, 0, 0);
	if (root == NULL || root->ino != 1)
		return -ENOMEM;
	root->parent = 1;
	return 0;
}

/* Keys of @p's protection domain for the whole arena (a view's arena_mr). */
static struct rpcr_rdev_mr *
arena_mr(const struct nfsd_store *st, struct rpcr_xprt_poller *p)
{
	return rpcr_rdev_mr_reg(rpcr_xprt_poller_pd(p), rpcr_mem_arena_base(st->arena),
				rpcr_mem_arena_len(st->arena), RPCR_RDEV_ACCESS_LOCAL_WRITE);
}

int
nfsd_store_add_poller(struct nfsd_store *st, struct rpcr_xprt_poller *p, uint32_t bulk_total)
{
	struct nfsd_view *v;

	if (st->nviews == NFSD_MAX_POLLERS)
		return -ENOSPC;
	/* The first poller's keys for the arena too, now that buffers may come from others. */
	if (st->views[0].arena_mr == NULL) {
		st->views[0].arena_mr = arena_mr(st, st->views[0].p);
		if (st->views[0].arena_mr == NULL)
			return -rte_errno;
	}
	v = &st->views[st->nviews];
	*v = (struct nfsd_view){p, rpcr_xprt_poller_pool(p),
				rpcr_chunk_pool_mempool(rpcr_xprt_poller_bulk_pool(p)),
				arena_mr(st, p)};
	if (v->arena_mr == NULL)
		return -rte_errno;
	st->nviews++;
	st->bulk_total += bulk_total;
	return 0;
}

const struct nfsd_view *
nfsd_store_view(const struct nfsd_store *st, struct rpcr_svc_req *r)
{
	struct rpcr_xprt_poller *p;
	uint32_t i;

	if (st->nviews == 1)
		return &st->views[0];
	p = rpcr_svc_req_poller(r);
	for (i = 1; i < st->nviews; i++)
		if (st->views[i].p == p)
			return &st->views[i];
	return &st->views[0];
}

uint64_t
nfsd_store_bulk_avail(const struct nfsd_store *st)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < st->nviews; i++)
		n += rte_mempool_avail_count(st->views[i].bulk_mp);
	return n;
}

static void
inode_free_data(struct nfsd_store *st, struct nfsd_inode *in)
{
	uint32_t i;

	for (i = 0; i < in->next; i++)
		rte_pktmbuf_free_seg(in->ext[i].m);
	st->bytes -= in->stored;
	free(in->ext);
	in->ext = NULL;
	in->next = in->ext_cap = 0;
	in->stored = 0;
	for (i = 0; i < in->nents; i++)
		free(in->ents[i].name);
	free(in->ents);
	in->ents = NULL;
	in->nents = in->ents_cap = 0;
	free(in->target);
	in->target = NULL;
}

void
nfsd_store_fini(struct nfsd_store *st)
{
	uint32_t i;

	for (i = 1; i < st->n; i++) {
		if (st->tab[i] != NULL)
			inode_free_data(st, st->tab[i]);
		free(st->tab[i]);
	}
	free(st->tab);
	free(st->free_ino);
	if (st->zero_reg != NULL)
		rpcr_mem_unreg(st->mc, st->zero_reg);
	if (st->mc != NULL)
		rpcr_mem_cache_free(st->mc);
	if (st->smallpool != NULL)
		rpcr_chunk_pool_free(st->smallpool);
	rte_free(st->zero);
	for (i = 0; i < st->nviews; i++)
		if (st->views[i].arena_mr != NULL)
			rpcr_rdev_mr_dereg(st->views[i].arena_mr);
	st->nviews = 0;
}

struct nfsd_inode *
nfsd_store_ino(struct nfsd_store *st, uint32_t ino)
{
	if (ino == 0 || ino >= st->n || st->tab[ino] == NULL || !st->tab[ino]->used)
		return NULL;
	return st->tab[ino];
}

struct nfsd_inode *
nfsd_store_get(struct nfsd_store *st, uint32_t ino, uint32_t gen)
{
	struct nfsd_inode *in = nfsd_store_ino(st, ino);

	return in != NULL && in->gen == gen ? in : NULL;
}

struct nfsd_inode *
nfsd_store_new(struct nfsd_store *st, uint32_t type, uint32_t mode, uint32_t uid, uint32_t gid)
{
	struct nfsd_inode *in;
	uint32_t ino;

	if (st->nfree != 0) {
		ino = st->free_ino[--st->nfree];
		in = st->tab[ino];
	} else {
		if (st->n >= st->cap) {
			uint32_t cap = st->cap != 0 ? st->cap * 2 : 1024;
			struct nfsd_inode **t = realloc(st->tab, sizeof(*t) * cap);
			uint32_t *f;

			if (t == NULL)
				return NULL;
			st->tab = t;
			f = realloc(st->free_ino, sizeof(*f) * cap);
			if (f == NULL)
				return NULL;
			st->free_ino = f;
			st->cap = cap;
		}
		in = calloc(1, sizeof(*in));
		if (in == NULL)
			return NULL;
		ino = st->n++;
		st->tab[ino] = in;
		in->ino = ino;
	}
	in->gen++;
	in->used = true;
	in->type = type;
	in->mode = mode & 07777;
	in->nlink = type == NFSD_DIR ? 2 : 1;
	in->uid = uid;
	in->gid = gid;
	in->size = 0;
	in->excl = false;
	in->next_cookie = 3; /* 1 and 2 are "." and ".." */
	nfsd_touch(&in->ctime);
	in->atime = in->mtime = in->ctime;
	st->files++;
	return in;
}

void
nfsd_store_put(struct nfsd_store *st, struct nfsd_inode *in)
{
	inode_free_data(st, in);
	in->used = false;
	st->free_ino[st->nfree++] = in->ino;
	st->files--;
}

/* ---- directories ---- */

struct nfsd_dirent *
nfsd_dir_find(struct nfsd_inode *dir, const char *name, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < dir->nents; i++)
		if (strncmp(dir->ents[i].name, name, len) == 0 && dir->ents[i].name[len] == '\0')
			return &dir->ents[i];
	return NULL;
}

int
nfsd_dir_add(struct nfsd_store *st, struct nfsd_inode *dir, const char *name, uint32_t len,
	     struct nfsd_inode *in)
{
	struct nfsd_dirent *e;

	RTE_SET_USED(st);
	if (dir->nents == dir->ents_cap) {
		uint32_t cap = dir->ents_cap != 0 ? dir->ents_cap * 2 : 16;

		e = realloc(dir->ents, sizeof(*e) * cap);
		if (e == NULL)
			return -ENOMEM;
		dir->ents = e;
		dir->ents_cap = cap;
	}
	e = &dir->ents[dir->nents];
	e->name = strndup(name, len);
	if (e->name == NULL)
		return -ENOMEM;
	e->ino = in->ino;
	e->cookie = dir->next_cookie++;
	dir->nents++;
	dir->size = dir->nents;
	nfsd_touch(&dir->mtime);
	dir->ctime = dir->mtime;
	return 0;
}

/* Entries stay in cookie order: a removal closes the gap, keeping later cookies valid. */
void
nfsd_dir_del(struct nfsd_inode *dir, struct nfsd_dirent *e)
{
	uint32_t i = (uint32_t)(e - dir->ents);

	free(e->name);
	memmove(&dir->ents[i], &dir->ents[i + 1], sizeof(*e) * (dir->nents - i - 1));
	dir->nents--;
	dir->size = dir->nents;
	nfsd_touch(&dir->mtime);
	dir->ctime = dir->mtime;
}

/* ---- file data ---- */

/* First extent ending after @off. */
static uint32_t
ext_first(const struct nfsd_inode *in, uint64_t off)
{
	uint32_t lo = 0, hi = in->next;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (in->ext[mid].off + in->ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
ext_reserve(struct nfsd_inode *in, uint32_t more)
{
	struct nfsd_extent *x;
	uint32_t cap = in->ext_cap != 0 ? in->ext_cap : 8;

	if (in->next + more <= in->ext_cap)
		return 0;
	while (cap < in->next + more)
		cap *= 2;
	x = realloc(in->ext, sizeof(*x) * cap);
	if (x == NULL)
		return -ENOMEM;
	in->ext = x;
	in->ext_cap = cap;
	return 0;
}

/*
 * Replace whatever the file holds in [@start, @end) with the @nnew extents @nw (sorted, inside
 * the range): extents overlapping its edges are trimmed, split (a split takes one more
 * reference on the buffer) or dropped.
 */
static int
ext_replace(struct nfsd_store *st, struct nfsd_inode *in, uint64_t start, uint64_t end,
	    const struct nfsd_extent *nw, uint32_t nnew)
{
	struct nfsd_extent left, right;
	bool has_left = false, has_right = false;
	uint32_t lo = ext_first(in, start), hi = lo, i, nput;
	int64_t delta = 0;

	while (hi < in->next && in->ext[hi].off < end)
		hi++;
	if (ext_reserve(in, nnew + 2) != 0)
		return -ENOMEM;
	if (lo < hi && in->ext[lo].off < start) {
		left = in->ext[lo];
		left.len = (uint32_t)(start - left.off);
		has_left = true;
	}
	if (lo < hi && in->ext[hi - 1].off + in->ext[hi - 1].len > end) {
		right = in->ext[hi - 1];
		right.data += end - right.off;
		right.len = (uint32_t)(right.off + right.len - end);
		right.off = end;
		has_right = true;
	}
	/* References: the removed extents' go, except those the left and right pieces keep. */
	for (i = lo; i < hi; i++) {
		bool kept = (has_left && i == lo) || (has_right && i == hi - 1);

		delta -= in->ext[i].len;
		if (!kept)
			rte_pktmbuf_free_seg(in->ext[i].m);
	}
	if (has_left && has_right && lo == hi - 1)
		rte_mbuf_refcnt_update(left.m, 1); /* one buffer, now two extents */
	nput = (uint32_t)has_left + nnew + (uint32_t)has_right;
	memmove(&in->ext[lo + nput], &in->ext[hi], sizeof(*nw) * (in->next - hi));
	in->next = in->next - (hi - lo) + nput;
	i = lo;
	if (has_left) {
		in->ext[i++] = left;
		delta += left.len;
	}
	if (nnew != 0) {
		memcpy(&in->ext[i], nw, sizeof(*nw) * nnew);
		for (uint32_t k = 0; k < nnew; k++)
			delta += nw[k].len;
		i += nnew;
	}
	if (has_right) {
		in->ext[i++] = right;
		delta += right.len;
	}
	in->stored += delta;
	st->bytes += delta;
	return 0;
}

/* Buffers the store may keep as they are: the bulk buffers read chunks were read into. */
static inline bool
adoptable(const struct nfsd_store *st, const struct rte_mbuf *m)
{
	uint32_t i;

	if (!RTE_MBUF_DIRECT(m) || RTE_MBUF_HAS_EXTBUF(m))
		return false;
	for (i = 0; i < st->nviews; i++)
		if (m->pool == st->views[i].bulk_mp)
			return true;
	return false;
}

int
nfsd_file_write(struct nfsd_store *st, struct nfsd_inode *in, uint64_t off,
		const struct rpcr_bulk *b)
{
	struct nfsd_extent stack[32] = {0}, *nw = stack;
	struct rte_mbuf *m, *copy = NULL;
	uint32_t skip = b->off, left = b->len, n = 0, cap = RTE_DIM(stack);
	uint64_t pos = off;
	int rc;

	if (b->len == 0)
		return 0;
	/* Inline data sits in a receive buffer the engine reuses: copy it into our own. */
	for (m = b->m; m != NULL; m = m->next)
		if (!adoptable(st, m))
			break;
	if (m != NULL) {
		copy = rpcr_chunk_alloc_chain(b->len <= SMALL_LEN ? st->smallpool : st->bulkpool,
					      b->len);
		if (copy == NULL)
			return -ENOSPC;
		for (m = copy; m != NULL; m = m->next)
			m->data_len = 0;
		{
			uint32_t done = 0;

			for (m = copy; m != NULL && done < b->len; m = m->next) {
				struct rpcr_bulk piece = {b->m, b->off + done, 0};
				uint32_t room = rte_pktmbuf_tailroom(m) + m->data_len;

				piece.len = RTE_MIN(room, b->len - done);
				rpcr_bulk_copy(&piece, rte_pktmbuf_mtod(m, void *), piece.len);
				m->data_len = (uint16_t)piece.len;
				done += piece.len;
			}
		}
		skip = 0;
		st->copied += b->len;
	} else {
		st->adopted += b->len;
	}
	for (m = copy != NULL ? copy : b->m; m != NULL && left != 0; m = m->next) {
		uint32_t k;

		if (skip >= m->data_len) {
			skip -= m->data_len;
			continue;
		}
		k = RTE_MIN(left, (uint32_t)m->data_len - skip);
		if (n == cap) {
			struct nfsd_extent *bigger = malloc(sizeof(*bigger) * cap * 2);

			if (bigger == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			memcpy(bigger, nw, sizeof(*nw) * n);
			if (nw != stack)
				free(nw);
			nw = bigger;
			cap *= 2;
		}
		nw[n].off = pos;
		nw[n].data = rte_pktmbuf_mtod_offset(m, uint8_t *, skip);
		nw[n].len = k;
		nw[n].m = m;
		n++;
		pos += k;
		left -= k;
		skip = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		rte_mbuf_refcnt_update(nw[i].m, 1);
	rc = n == 0 ? 0 : ext_replace(st, in, off, off + b->len, nw, n);
	if (rc != 0) {
		for (uint32_t i = 0; i < n; i++)
			rte_mbuf_refcnt_update(nw[i].m, -1);
	} else if (off + b->len > in->size) {
		in->size = off + b->len;
	}
out:
	if (nw != stack)
		free(nw);
	/* The copy's segments are now held by the extents alone (the chain's own references go:
	 * each segment is released one by one, never as a chain, from here on). */
	rte_pktmbuf_free(copy);
	return rc;
}

int
nfsd_file_truncate(struct nfsd_store *st, struct nfsd_inode *in, uint64_t size)
{
	int rc = 0;

	if (size < in->size)
		rc = ext_replace(st, in, size, UINT64_MAX, NULL, 0);
	if (rc == 0)
		in->size = size;
	return rc;
}

/* Append @len bytes at @data of buffer @m (NULL: the zero buffer) to chain *@head, for poller
 * @v (its message buffers; where several pollers serve the store, its keys for the arena). */
static int
chain_add(struct nfsd_store *st, const struct nfsd_view *v, struct rte_mbuf **head,
	  struct rte_mbuf **tail, struct rte_mbuf *m, uint8_t *data, uint32_t len)
{
	struct rte_mbuf *mi, *k;

	if (m == NULL) {
		mi = rpcr_chunk_attach(v->msgpool, st->zero_reg, st->zero, len, noop_free, NULL);
		if (mi == NULL)
			return -ENOMEM;
	} else {
		mi = rpcr_chunk_alloc(v->msgpool);
		if (mi == NULL)
			return -ENOMEM;
		rte_pktmbuf_attach(mi, m);
		*rpcr_chunk_keys(mi) = *rpcr_chunk_keys(m);
		mi->data_off = (uint16_t)(data - (uint8_t *)mi->buf_addr);
		mi->data_len = (uint16_t)len;
		mi->pkt_len = len;
		mi->nb_segs = 1;
		mi->next = NULL;
	}
	if (v->arena_mr != NULL)
		for (k = mi; k != NULL; k = k->next)
			*rpcr_chunk_keys(k) =
				(struct rpcr_chunk_keys){v->arena_mr->lkey, 0, v->arena_mr};
	if (*head == NULL) {
		*head = mi;
	} else {
		struct rte_mbuf *last = mi;

		while (last->next != NULL)
			last = last->next;
		(*tail)->next = mi;
		(*head)->nb_segs += mi->nb_segs;
		(*head)->pkt_len += mi->pkt_len;
		*tail = last;
		return 0;
	}
	*tail = mi;
	while ((*tail)->next != NULL)
		*tail = (*tail)->next;
	return 0;
}

struct rte_mbuf *
nfsd_file_read(struct nfsd_store *st, const struct nfsd_view *v, struct nfsd_inode *in,
	       uint64_t off, uint32_t len)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint64_t pos = off, end = off + len;
	uint32_t i = ext_first(in, off);

	while (pos < end) {
		int rc;

		if (i < in->next && in->ext[i].off <= pos) {
			const struct nfsd_extent *x = &in->ext[i];
			uint32_t skip = (uint32_t)(pos - x->off);
			uint32_t k = (uint32_t)RTE_MIN((uint64_t)x->len - skip, end - pos);

			rc = chain_add(st, v, &head, &tail, x->m, x->data + skip, k);
			pos += k;
			i++;
		} else {
			uint64_t hole_end = i < in->next ? RTE_MIN(in->ext[i].off, end) : end;
			uint32_t k = (uint32_t)RTE_MIN(hole_end - pos, (uint64_t)ZERO_LEN);

			rc = chain_add(st, v, &head, &tail, NULL, NULL, k);
			pos += k;
		}
		if (rc != 0) {
			rte_pktmbuf_free(head);
			return NULL;
		}
	}
	return head;
}
