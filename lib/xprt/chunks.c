/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Chunk planning shared by clients and servers: the RDMA Reads that pull read chunks (a server's
 * call arguments, a client's reply results under the 2005 draft) and the RDMA Writes that fill
 * write and reply chunks, planned into the connection's piece of the poller's batch of WRs
 * (sq.h) behind what is staged already. A batch too full for them is posted first and the plan made again from an
 * empty one; what does not fit an empty batch is refused.
 */

#include "xprt_internal.h"

int
xprt_plan_xfers(struct xprt_conn *c, uint32_t op, struct xprt_xfer *x, uint32_t n, uint32_t extra,
		uint32_t *nw, uint32_t *ns)
{
	struct rpcr_chunk_plan plan;
	uint32_t i, tw = 0, ts = 0;
	int rc = 0, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		tw = 0;
		ts = 0;
		rc = 0;
		for (i = 0; i < n && rc == 0; i++) {
			xprt_sq_plan_init(c, &plan, tw, ts);
			rc = rpcr_chunk_rdma_plan(x[i].m, x[i].off, x[i].len, x[i].segs, x[i].nsegs,
						  op, &plan);
			x[i].nw = plan.nwrs;
			x[i].ns = plan.nsges;
			tw += plan.nwrs;
			ts += plan.nsges;
		}
		if (rc == 0 && extra != 0 && !xprt_sq_batch_room(c, tw + extra, ts + extra))
			rc = -E2BIG;
		if (rc != -E2BIG || xprt_sq_none_staged(c))
			break;
		/* What the connection had staged left too little room (its own limit, sq.h): post
		 * it and plan again from an empty piece. */
		xprt_sq_flush(c);
	}
	*nw = tw;
	*ns = ts;
	return rc;
}

uint32_t
xprt_read_xfers(const struct rpcr_proto_chunks *ch, struct rte_mbuf *const *bufs,
		struct rpcr_proto_seg *segs, struct xprt_xfer *x)
{
	uint32_t i = 0, nx = 0;

	while (i < ch->nreads) {
		uint32_t pos = ch->reads[i].position, first = i;

		for (; i < ch->nreads && ch->reads[i].position == pos; i++)
			segs[i] = ch->reads[i].seg;
		x[nx].m = bufs[nx];
		x[nx].off = 0;
		x[nx].len = bufs[nx]->pkt_len;
		x[nx].segs = &segs[first];
		x[nx].nsegs = i - first;
		nx++;
	}
	return nx;
}
