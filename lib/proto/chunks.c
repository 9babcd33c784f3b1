/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Chunk lists, shared by version 1 (RFC 8166 §4.2) and version 2 (draft §6.2.3):
 *
 *     read-list   = { 1 position handle length offset-hi offset-lo } 0
 *     write-list  = { 1 count { handle length offset-hi offset-lo } } 0
 *     reply-chunk = 0 | 1 count { handle length offset-hi offset-lo }
 */

#include <string.h>

#include "proto_internal.h"
#include "rpcr_proto.h"

/* Wire sizes. */
#define SEG_SIZE  16u /* handle, length, offset */
#define RSEG_SIZE 24u /* discriminator, position, segment */

void
rpcr_proto_chunks_init(struct rpcr_proto_chunks *c, struct rpcr_proto_rseg *reads,
		       uint32_t reads_cap, struct rpcr_proto_wchunk *writes, uint32_t writes_cap,
		       struct rpcr_proto_seg *segs, uint32_t segs_cap)
{
	c->reads = reads;
	c->reads_cap = reads != NULL ? reads_cap : 0;
	c->writes = writes;
	c->writes_cap = writes != NULL ? writes_cap : 0;
	c->segs = segs;
	c->segs_cap = segs != NULL ? segs_cap : 0;
	rpcr_proto_chunks_reset(c);
}

int
rpcr_proto_chunks_add_read(struct rpcr_proto_chunks *c, uint32_t position,
			   const struct rpcr_proto_seg *seg)
{
	if (c->nreads >= c->reads_cap)
		return RPCR_PROTO_EREADS;
	c->reads[c->nreads].position = position;
	c->reads[c->nreads].seg = *seg;
	c->nreads++;
	return 0;
}

/* Take @n segments from the pool, copying @segs into them. */
static struct rpcr_proto_seg *
pool_take(struct rpcr_proto_chunks *c, const struct rpcr_proto_seg *segs, uint32_t n)
{
	struct rpcr_proto_seg *s;

	if (n > c->segs_cap - c->nsegs)
		return NULL;
	s = c->segs + c->nsegs;
	if (n != 0)
		memcpy(s, segs, n * sizeof(*s));
	c->nsegs += n;
	return s;
}

int
rpcr_proto_chunks_add_write(struct rpcr_proto_chunks *c, const struct rpcr_proto_seg *segs,
			    uint32_t nsegs)
{
	struct rpcr_proto_seg *s;

	if (c->nwrites >= c->writes_cap)
		return RPCR_PROTO_EWRITES;
	s = pool_take(c, segs, nsegs);
	if (s == NULL)
		return RPCR_PROTO_ESEGS;
	c->writes[c->nwrites].segs = s;
	c->writes[c->nwrites].nsegs = nsegs;
	c->nwrites++;
	return 0;
}

int
rpcr_proto_chunks_set_reply(struct rpcr_proto_chunks *c, const struct rpcr_proto_seg *segs,
			    uint32_t nsegs)
{
	struct rpcr_proto_seg *s;

	if (c->has_reply)
		return -EEXIST;
	s = pool_take(c, segs, nsegs);
	if (s == NULL)
		return RPCR_PROTO_ESEGS;
	c->reply.segs = s;
	c->reply.nsegs = nsegs;
	c->has_reply = true;
	return 0;
}

int
rpcr_proto_chunks_copy(struct rpcr_proto_chunks *dst, const struct rpcr_proto_chunks *src)
{
	uint32_t i;
	int rc = 0;

	rpcr_proto_chunks_reset(dst);
	if (src->nreads > dst->reads_cap) {
		rc = RPCR_PROTO_EREADS;
		goto fail;
	}
	if (src->nreads != 0)
		memcpy(dst->reads, src->reads, src->nreads * sizeof(*src->reads));
	dst->nreads = src->nreads;
	for (i = 0; i < src->nwrites && rc == 0; i++)
		rc = rpcr_proto_chunks_add_write(dst, src->writes[i].segs, src->writes[i].nsegs);
	if (rc == 0 && src->has_reply)
		rc = rpcr_proto_chunks_set_reply(dst, src->reply.segs, src->reply.nsegs);
	if (rc == 0)
		return 0;
fail:
	rpcr_proto_chunks_reset(dst);
	return rc;
}

uint32_t
rpcr_proto_chunks_read_chunks(const struct rpcr_proto_chunks *c)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->nreads; i++)
		if (i == 0 || c->reads[i].position != c->reads[i - 1].position)
			n++;
	return n;
}

uint64_t
rpcr_proto_wchunk_length(const struct rpcr_proto_wchunk *w)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < w->nsegs; i++)
		sum += w->segs[i].length;
	return sum;
}

size_t
rpcr_proto_chunks_size(const struct rpcr_proto_chunks *c)
{
	/* Read-list terminator, write-list terminator, reply-chunk discriminator. */
	size_t n = 3 * RPCR_XDR_UNIT;
	uint32_t i;

	/* Counts beyond the arrays describe nothing that can be read, let alone encoded. */
	if (unlikely(c->nreads > c->reads_cap || c->nwrites > c->writes_cap))
		return 0;

	n += (size_t)c->nreads * RSEG_SIZE;
	for (i = 0; i < c->nwrites; i++)
		n += 2 * RPCR_XDR_UNIT + (size_t)c->writes[i].nsegs * SEG_SIZE;
	if (c->has_reply)
		n += RPCR_XDR_UNIT + (size_t)c->reply.nsegs * SEG_SIZE;
	return n;
}

static inline uint8_t *
put32(uint8_t *p, uint32_t v)
{
	rpcr_xdr_store32(p, v);
	return p + 4;
}

static inline uint8_t *
put_seg(uint8_t *p, const struct rpcr_proto_seg *s)
{
	rpcr_xdr_store32(p, s->handle);
	rpcr_xdr_store32(p + 4, s->length);
	rpcr_xdr_store64(p + 8, s->offset);
	return p + SEG_SIZE;
}

static inline uint8_t *
put_segs(uint8_t *p, const struct rpcr_proto_wchunk *w)
{
	uint32_t i;

	p = put32(p, w->nsegs);
	for (i = 0; i < w->nsegs; i++)
		p = put_seg(p, &w->segs[i]);
	return p;
}

uint8_t *
proto_chunks_put(uint8_t *p, const struct rpcr_proto_chunks *c)
{
	uint32_t i;

	for (i = 0; i < c->nreads; i++) {
		p = put32(p, 1);
		p = put32(p, c->reads[i].position);
		p = put_seg(p, &c->reads[i].seg);
	}
	p = put32(p, 0);
	for (i = 0; i < c->nwrites; i++) {
		p = put32(p, 1);
		p = put_segs(p, &c->writes[i]);
	}
	p = put32(p, 0);
	if (c->has_reply) {
		p = put32(p, 1);
		p = put_segs(p, &c->reply);
	} else {
		p = put32(p, 0);
	}
	return p;
}

int
rpcr_proto_chunks_encode(struct rpcr_xdr_enc *e, const struct rpcr_proto_chunks *c)
{
	size_t size = rpcr_proto_chunks_size(c);
	uint8_t *p;

	if (unlikely(size == 0))
		return -EINVAL;
	p = rpcr_xdr_enc_reserve(e, size);
	if (unlikely(p == NULL))
		return -EMSGSIZE;
	/* The size is reserved: the stores stay inside it. */
	proto_chunks_put(p, c);
	return 0;
}

static inline void
get_seg(const uint8_t *p, struct rpcr_proto_seg *s)
{
	s->handle = rpcr_xdr_load32(p);
	s->length = rpcr_xdr_load32(p + 4);
	s->offset = rpcr_xdr_load64(p + 8);
}

/*
 * Decode "count { HLOO }" at @p into the segment pool. The count is checked against what is left
 * of the message before the pool is considered, so a count the message cannot hold is malformed
 * (BAD_XDR) rather than a capacity problem. Returns the end of the segments or NULL with *@rc.
 */
static const uint8_t *
get_segs(const uint8_t *p, const uint8_t *end, struct rpcr_proto_chunks *c,
	 struct rpcr_proto_wchunk *w, int *rc)
{
	uint32_t n, i;

	if (unlikely(end - p < 4)) {
		*rc = RPCR_PROTO_EBADXDR;
		return NULL;
	}
	n = rpcr_xdr_load32(p);
	p += 4;
	if (unlikely(n > (size_t)(end - p) / SEG_SIZE)) {
		*rc = RPCR_PROTO_EBADXDR;
		return NULL;
	}
	if (unlikely(n > c->segs_cap - c->nsegs)) {
		*rc = RPCR_PROTO_ESEGS;
		return NULL;
	}
	w->segs = c->segs + c->nsegs;
	w->nsegs = n;
	for (i = 0; i < n; i++, p += SEG_SIZE)
		get_seg(p, &w->segs[i]);
	c->nsegs += n;
	return p;
}

/*
 * Decode an optional-data discriminator at @p: XDR encodes "*x" as a bool, so anything but 0 or 1
 * is malformed. Returns 0 or 1, or -1 when short or malformed.
 */
static inline int
get_present(const uint8_t *p, const uint8_t *end)
{
	uint32_t v;

	if (unlikely(end - p < 4))
		return -1;
	v = rpcr_xdr_load32(p);
	return likely(v <= 1) ? (int)v : -1;
}

int
rpcr_proto_chunks_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_chunks *c)
{
	const uint8_t *p = d->p, *end = d->end;
	int present, rc;

	rpcr_proto_chunks_reset(c);

	/* Fast path: three empty lists, the shape of nearly every small call and reply. */
	if (likely(end - p >= 3 * 4)) {
		uint32_t w[3];

		memcpy(w, p, sizeof(w));
		if ((w[0] | w[1] | w[2]) == 0) {
			d->p = p + sizeof(w);
			return 0;
		}
	}

	/* Read list: { 1 position HLOO } 0 */
	while ((present = get_present(p, end)) == 1) {
		p += 4;
		/* Truncation is checked before capacity: a cut message is malformed first. */
		if (unlikely(end - p < RSEG_SIZE - 4))
			return RPCR_PROTO_EBADXDR;
		if (unlikely(c->nreads >= c->reads_cap))
			return RPCR_PROTO_EREADS;
		c->reads[c->nreads].position = rpcr_xdr_load32(p);
		get_seg(p + 4, &c->reads[c->nreads].seg);
		c->nreads++;
		p += RSEG_SIZE - 4;
	}
	if (unlikely(present < 0))
		return RPCR_PROTO_EBADXDR;
	p += 4;

	/* Write list: { 1 count { HLOO } } 0 */
	while ((present = get_present(p, end)) == 1) {
		p += 4;
		if (unlikely(end - p < 4))
			return RPCR_PROTO_EBADXDR;
		if (unlikely(c->nwrites >= c->writes_cap))
			return RPCR_PROTO_EWRITES;
		p = get_segs(p, end, c, &c->writes[c->nwrites], &rc);
		if (unlikely(p == NULL))
			return rc;
		c->nwrites++;
	}
	if (unlikely(present < 0))
		return RPCR_PROTO_EBADXDR;
	p += 4;

	/* Reply chunk: 0 | 1 count { HLOO } */
	present = get_present(p, end);
	if (unlikely(present < 0))
		return RPCR_PROTO_EBADXDR;
	p += 4;
	if (present) {
		p = get_segs(p, end, c, &c->reply, &rc);
		if (unlikely(p == NULL))
			return rc;
		c->has_reply = true;
	}
	d->p = p;
	return 0;
}

static bool
seg_equal(const struct rpcr_proto_seg *a, const struct rpcr_proto_seg *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

static bool
wchunk_equal(const struct rpcr_proto_wchunk *a, const struct rpcr_proto_wchunk *b)
{
	uint32_t i;

	if (a->nsegs != b->nsegs)
		return false;
	for (i = 0; i < a->nsegs; i++)
		if (!seg_equal(&a->segs[i], &b->segs[i]))
			return false;
	return true;
}

bool
rpcr_proto_chunks_equal(const struct rpcr_proto_chunks *a, const struct rpcr_proto_chunks *b)
{
	uint32_t i;

	if (a->nreads != b->nreads || a->nwrites != b->nwrites || a->has_reply != b->has_reply)
		return false;
	for (i = 0; i < a->nreads; i++)
		if (a->reads[i].position != b->reads[i].position ||
		    !seg_equal(&a->reads[i].seg, &b->reads[i].seg))
			return false;
	for (i = 0; i < a->nwrites; i++)
		if (!wchunk_equal(&a->writes[i], &b->writes[i]))
			return false;
	return !a->has_reply || wchunk_equal(&a->reply, &b->reply);
}

const char *
rpcr_proto_strerror(int err)
{
	switch (err) {
	case RPCR_PROTO_ESHORT:
		return "ESHORT";
	case RPCR_PROTO_EVERS:
		return "EVERS";
	case RPCR_PROTO_EHTYPE:
		return "EHTYPE";
	case RPCR_PROTO_EBADXDR:
		return "EBADXDR";
	case RPCR_PROTO_ECONT:
		return "ECONT";
	case RPCR_PROTO_EPROPVAL:
		return "EPROPVAL";
	case RPCR_PROTO_EREADS:
		return "EREADS";
	case RPCR_PROTO_EWRITES:
		return "EWRITES";
	case RPCR_PROTO_ESEGS:
		return "ESEGS";
	case RPCR_PROTO_EOVERFLOW:
		return "EOVERFLOW";
	case -EMSGSIZE:
		return "EMSGSIZE";
	case -EINVAL:
		return "EINVAL";
	default:
		return "?";
	}
}
