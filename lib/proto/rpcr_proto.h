/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_H
#define RPCR_PROTO_H

/**
 * @file
 * RPC-over-RDMA wire formats: what version 1 and version 2 share.
 *
 * Every transport header starts with four 32-bit words (xid, vers, credit, proc/htype) at fixed
 * offsets, whatever the version (RFC 8166 §4.1); rpcr_proto_peek() reads them so that a receiver
 * can dispatch on the version. The chunk lists (read list, write list, reply chunk) have the same
 * XDR in both versions and are represented here by struct rpcr_proto_chunks.
 *
 * Decoders never allocate: they fill caller-provided arrays whose capacities are parameters.
 * They never read past the end of the input and never trust a count from the wire. Each failure
 * is a distinct negative errno, and each maps to exactly one protocol reply
 * (rpcr_proto_v1_errcode(), rpcr_proto_v2_errcode()):
 *
 * | return                | meaning                                 | v1 reply  | v2 reply                |
 * |-----------------------|-----------------------------------------|-----------|-------------------------|
 * | RPCR_PROTO_ESHORT     | shorter than the fixed header           | none      | none (§7: discard)      |
 * | RPCR_PROTO_EVERS      | unsupported rdma_vers                   | ERR_VERS  | RDMA2_ERR_VERS          |
 * | RPCR_PROTO_EHTYPE     | unknown message/header type             | ERR_CHUNK | RDMA2_ERR_INVAL_HTYPE   |
 * | RPCR_PROTO_EBADXDR    | malformed or truncated header           | ERR_CHUNK | RDMA2_ERR_BAD_XDR       |
 * | RPCR_PROTO_ECONT      | bad message continuation (v2 MORE flag) | -         | RDMA2_ERR_INVAL_CONT    |
 * | RPCR_PROTO_EPROPVAL   | property data does not match its type   | -         | RDMA2_ERR_BAD_PROPVAL   |
 * | RPCR_PROTO_EREADS     | more read segments than capacity        | ERR_CHUNK | RDMA2_ERR_READ_CHUNKS   |
 * | RPCR_PROTO_EWRITES    | more write chunks than capacity         | ERR_CHUNK | RDMA2_ERR_WRITE_CHUNKS  |
 * | RPCR_PROTO_ESEGS      | more segments in a chunk than capacity  | ERR_CHUNK | RDMA2_ERR_SEGMENTS      |
 * | RPCR_PROTO_EOVERFLOW  | more properties/values than capacity    | -         | RDMA2_ERR_SYSTEM        |
 *
 * Encoders compute the exact size first and return -EMSGSIZE, having written nothing, when the
 * buffer is shorter; -EINVAL when the structure cannot be encoded (unknown type, counts beyond
 * their arrays).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <sys/types.h>

#include <rpcr_xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Message is shorter than the fixed part of the transport header: drop it, reply nothing. */
#define RPCR_PROTO_ESHORT (-ENODATA)
/** rdma_vers is not the version the decoder handles; the four fixed words are valid. */
#define RPCR_PROTO_EVERS (-EPROTONOSUPPORT)
/** Unknown or unsupported message (header) type; the fixed words are valid. */
#define RPCR_PROTO_EHTYPE (-EOPNOTSUPP)
/** Malformed or truncated header after the fixed words. */
#define RPCR_PROTO_EBADXDR (-EBADMSG)
/** Version 2 message continuation violated (RDMA2_F_MORE misuse). */
#define RPCR_PROTO_ECONT (-EPROTO)
/** A recognised property or characteristic carries data that does not match its XDR type. */
#define RPCR_PROTO_EPROPVAL (-EILSEQ)
/** The read list has more segments than the caller's read capacity. */
#define RPCR_PROTO_EREADS (-ENOBUFS)
/** The write list has more chunks than the caller's write-chunk capacity. */
#define RPCR_PROTO_EWRITES (-ENOSPC)
/** A write or reply chunk has more segments than the caller's segment capacity. */
#define RPCR_PROTO_ESEGS (-E2BIG)
/** More properties, characteristics or subset words than the caller's capacity. */
#define RPCR_PROTO_EOVERFLOW (-EOVERFLOW)

/** Size of the four words common to every version's header. */
#define RPCR_PROTO_HDR_FIXED 16u

/** One RDMA segment (RFC 8166 xdr_rdma_segment; version 2 rpcrdma2_segment). 16 bytes. */
struct rpcr_proto_seg {
	uint32_t handle; /**< Steering tag (R_key) of the registered memory. */
	uint32_t length; /**< Length of the segment in bytes. */
	uint64_t offset; /**< Address or offset of the segment's first byte. */
};

/**
 * One read segment (RFC 8166 xdr_read_chunk). Consecutive read segments with the same position
 * form one read chunk (RFC 8166 §3.4.5). 20 bytes on the wire, plus a 4-byte list discriminator.
 */
struct rpcr_proto_rseg {
	uint32_t position;         /**< XDR position of the chunk in the RPC message. */
	struct rpcr_proto_seg seg; /**< Where the data is. */
};

/** A write chunk or the reply chunk: a counted array of segments. */
struct rpcr_proto_wchunk {
	uint32_t nsegs;              /**< Number of segments. */
	struct rpcr_proto_seg *segs; /**< The segments, inside rpcr_proto_chunks::segs. */
};

/**
 * The three chunk lists of an RPC-over-RDMA header, over caller-provided arrays.
 *
 * Initialise with rpcr_proto_chunks_init(); a decoder fills the counts and arrays, an encoder
 * reads them. Write chunks and the reply chunk take their segments from one pool (@c segs).
 * The counts come first and together so that the fast paths test and reset them in few stores.
 */
struct rpcr_proto_chunks {
	uint32_t nreads;                  /**< Read segments in use. */
	uint32_t nwrites;                 /**< Write chunks in use. */
	uint32_t nsegs;                   /**< Pool segments in use. */
	bool has_reply;                   /**< A reply chunk is present. */
	struct rpcr_proto_wchunk reply;   /**< The reply chunk when @c has_reply. */
	struct rpcr_proto_rseg *reads;    /**< Read list, in wire order. */
	struct rpcr_proto_wchunk *writes; /**< Write list. */
	struct rpcr_proto_seg *segs;      /**< Segment pool for write chunks and the reply chunk. */
	uint32_t reads_cap;               /**< Capacity of @c reads. */
	uint32_t writes_cap;              /**< Capacity of @c writes. */
	uint32_t segs_cap;                /**< Capacity of @c segs. */
};

/**
 * Bind chunk lists to caller storage and empty them. Any array may be NULL with capacity 0; the
 * decoder then answers the corresponding capacity error as soon as the wire carries one entry.
 */
void rpcr_proto_chunks_init(struct rpcr_proto_chunks *c, struct rpcr_proto_rseg *reads,
			    uint32_t reads_cap, struct rpcr_proto_wchunk *writes,
			    uint32_t writes_cap, struct rpcr_proto_seg *segs, uint32_t segs_cap);

/** Empty the lists, keeping their storage. (The reply chunk is ignored while !has_reply.) */
static inline void
rpcr_proto_chunks_reset(struct rpcr_proto_chunks *c)
{
	c->nreads = 0;
	c->nwrites = 0;
	c->nsegs = 0;
	c->has_reply = false;
}

/** The three lists are empty (the shape of most small calls and replies). */
static inline bool
rpcr_proto_chunks_empty(const struct rpcr_proto_chunks *c)
{
	return (c->nreads | c->nwrites | (uint32_t)c->has_reply) == 0;
}

/**
 * Declare storage and an initialised struct rpcr_proto_chunks named @p name in the current scope.
 */
#define RPCR_PROTO_CHUNKS_DEFINE(name, nreads_, nwrites_, nsegs_) \
	struct rpcr_proto_rseg name##_reads_[nreads_];            \
	struct rpcr_proto_wchunk name##_writes_[nwrites_];        \
	struct rpcr_proto_seg name##_segs_[nsegs_];               \
	struct rpcr_proto_chunks name = {                         \
		.reads = name##_reads_,                           \
		.reads_cap = (nreads_),                           \
		.writes = name##_writes_,                         \
		.writes_cap = (nwrites_),                         \
		.segs = name##_segs_,                             \
		.segs_cap = (nsegs_),                             \
	}

/**
 * Append one read segment.
 *
 * @return 0 or RPCR_PROTO_EREADS when the read capacity is used up.
 */
int rpcr_proto_chunks_add_read(struct rpcr_proto_chunks *c, uint32_t position,
			       const struct rpcr_proto_seg *seg);

/**
 * Append a write chunk of @p nsegs segments, copied from @p segs.
 *
 * @return 0, RPCR_PROTO_EWRITES (no write-chunk slot) or RPCR_PROTO_ESEGS (segment pool full).
 */
int rpcr_proto_chunks_add_write(struct rpcr_proto_chunks *c, const struct rpcr_proto_seg *segs,
				uint32_t nsegs);

/**
 * Set the reply chunk to @p nsegs segments copied from @p segs.
 *
 * @return 0 or RPCR_PROTO_ESEGS (segment pool full). A reply chunk set twice is -EEXIST.
 */
int rpcr_proto_chunks_set_reply(struct rpcr_proto_chunks *c, const struct rpcr_proto_seg *segs,
				uint32_t nsegs);

/**
 * Copy the lists of @p src into @p dst's own storage (write and reply chunks pointing into
 * @p dst's segment pool). @p dst is emptied first.
 *
 * @return 0, or RPCR_PROTO_EREADS, RPCR_PROTO_EWRITES, RPCR_PROTO_ESEGS when @p dst cannot hold
 * them (@p dst is then empty).
 */
int rpcr_proto_chunks_copy(struct rpcr_proto_chunks *dst, const struct rpcr_proto_chunks *src);

/** Number of read chunks (runs of read segments with the same position). */
uint32_t rpcr_proto_chunks_read_chunks(const struct rpcr_proto_chunks *c);

/** Total bytes described by a write or reply chunk (sum of segment lengths). */
uint64_t rpcr_proto_wchunk_length(const struct rpcr_proto_wchunk *w);

/** Exact encoded size in bytes of the three lists; 0 when a count exceeds its capacity. */
size_t rpcr_proto_chunks_size(const struct rpcr_proto_chunks *c);

/**
 * Encode the three lists.
 *
 * @return 0, -EMSGSIZE (nothing written), or -EINVAL when a count exceeds its array's capacity.
 */
int rpcr_proto_chunks_encode(struct rpcr_xdr_enc *e, const struct rpcr_proto_chunks *c);

/**
 * Decode the three lists into @p c (its storage bound with rpcr_proto_chunks_init()).
 *
 * @return 0, RPCR_PROTO_EBADXDR, RPCR_PROTO_EREADS, RPCR_PROTO_EWRITES or RPCR_PROTO_ESEGS.
 */
int rpcr_proto_chunks_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_chunks *c);

/** Chunk lists compare equal (same entries; storage may differ). */
bool rpcr_proto_chunks_equal(const struct rpcr_proto_chunks *a, const struct rpcr_proto_chunks *b);

/** The four words every version's header starts with. */
struct rpcr_proto_fixed {
	uint32_t xid;    /**< Mirrors the RPC message's XID. */
	uint32_t vers;   /**< Transport version. */
	uint32_t credit; /**< Credits requested (call) or granted (reply). */
	uint32_t proc;   /**< Message type (v1 rdma_proc, v2 rdma_htype). */
};

/**
 * Read the four fixed words of any version's header.
 *
 * @return 0 or RPCR_PROTO_ESHORT when @p len < 16.
 */
static inline int
rpcr_proto_peek(const void *buf, size_t len, struct rpcr_proto_fixed *f)
{
	const uint8_t *p = (const uint8_t *)buf;

	if (unlikely(len < RPCR_PROTO_HDR_FIXED))
		return RPCR_PROTO_ESHORT;
	f->xid = rpcr_xdr_load32(p);
	f->vers = rpcr_xdr_load32(p + 4);
	f->credit = rpcr_xdr_load32(p + 8);
	f->proc = rpcr_xdr_load32(p + 12);
	return 0;
}

/** Name of a decoder error (e.g. "EBADXDR"), or "?" for other values. */
const char *rpcr_proto_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_PROTO_H */
