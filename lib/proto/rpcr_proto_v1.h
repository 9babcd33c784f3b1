/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_V1_H
#define RPCR_PROTO_V1_H

/**
 * @file
 * RPC-over-RDMA version 1: the full message set of the 2005 draft (draft-ietf-nfsv4-rpcrdma-01),
 * wire-compatible with RFC 8166.
 *
 * Wire grammar (each item one XDR word unless noted; HLOO = handle, length, offset(2 words)):
 *
 *     header     = xid vers credit proc body
 *     MSG, NOMSG = read-list write-list reply-chunk      (MSG: the RPC message follows)
 *     MSGP       = align thresh read-list write-list reply-chunk   (RPC message follows, padded)
 *     DONE       = (nothing)
 *     ERROR      = errcode [ERR_VERS: low high]
 *     read-list  = { 1 position HLOO } 0
 *     write-list = { 1 count { HLOO } } 0
 *     reply-chunk= 0 | 1 count { HLOO }
 *
 * RFC 8166 deprecates RDMA_MSGP and RDMA_DONE (receivers answer them with ERR_CHUNK) and gives
 * ERR_CHUNK no arm; the 2005 draft had eight words of rdma_extra there. rpcr encodes the RFC 8166
 * form (as Linux does) and its decoder ignores whatever follows an RDMA_ERROR's arm, so both
 * forms decode.
 */

#include <rpcr_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version number this header format carries. */
#define RPCR_PROTO_V1_VERS 1u

/** rdma_proc values. */
enum rpcr_proto_v1_proc {
	RPCR_PROTO_V1_MSG = 0, /**< RPC message follows the header inline. */
	RPCR_PROTO_V1_NOMSG =
		1, /**< RPC message moved by RDMA (position-zero read / reply chunk). */
	RPCR_PROTO_V1_MSGP = 2,  /**< 2005 draft: RPC message inline, opaque data padded. */
	RPCR_PROTO_V1_DONE = 3,  /**< 2005 draft: client finished reading a reply's read chunks. */
	RPCR_PROTO_V1_ERROR = 4, /**< Transport error report. */
};

/** rpc_rdma_errcode values. */
enum rpcr_proto_v1_err {
	RPCR_PROTO_V1_ERR_VERS = 1,  /**< Version not supported; arm gives low and high. */
	RPCR_PROTO_V1_ERR_CHUNK = 2, /**< Header or chunk list could not be processed. */
};

/** Size of RDMA_MSG/RDMA_NOMSG with three empty lists (7 words). */
#define RPCR_PROTO_V1_HDR_MIN 28u
/** Size of RDMA_DONE. */
#define RPCR_PROTO_V1_DONE_SIZE 16u
/** Size of RDMA_ERROR ERR_VERS. */
#define RPCR_PROTO_V1_ERR_VERS_SIZE 28u
/** Size of RDMA_ERROR ERR_CHUNK (RFC 8166 form). */
#define RPCR_PROTO_V1_ERR_CHUNK_SIZE 20u

/** A decoded or to-be-encoded version 1 transport header. */
struct rpcr_proto_v1_hdr {
	uint32_t xid;       /**< rdma_xid. */
	uint32_t vers;      /**< rdma_vers (1). */
	uint32_t credit;    /**< Credits requested (call) or granted (reply). */
	uint32_t proc;      /**< enum rpcr_proto_v1_proc. */
	uint32_t align;     /**< RDMA_MSGP: rdma_align. */
	uint32_t thresh;    /**< RDMA_MSGP: rdma_thresh. */
	uint32_t err;       /**< RDMA_ERROR: enum rpcr_proto_v1_err (others decode with no arm). */
	uint32_t vers_low;  /**< RDMA_ERROR ERR_VERS: lowest version supported. */
	uint32_t vers_high; /**< RDMA_ERROR ERR_VERS: highest version supported. */
	struct rpcr_proto_chunks chunks; /**< RDMA_MSG, RDMA_NOMSG, RDMA_MSGP: the chunk lists. */
};

/** The proc carries chunk lists (MSG, NOMSG, MSGP). */
static inline bool
rpcr_proto_v1_has_chunks(uint32_t proc)
{
	return proc <= RPCR_PROTO_V1_MSGP;
}

/**
 * Exact encoded size of @p h in bytes, or 0 when @p h cannot be encoded (an unknown proc, chunk
 * counts beyond their arrays).
 */
size_t rpcr_proto_v1_size(const struct rpcr_proto_v1_hdr *h);

/**
 * Encode @p h at the start of @p buf (every message type; rpcr_proto_v1_encode() is the same
 * with an inline fast path in front).
 *
 * @return bytes written (the offset where an inline RPC message goes), -EMSGSIZE (nothing
 *         written), or -EINVAL for an unknown proc or chunk counts beyond their arrays.
 */
ssize_t rpcr_proto_v1_encode_full(const struct rpcr_proto_v1_hdr *h, void *buf, size_t len);

/**
 * Decode a version 1 header from @p buf (every message type; rpcr_proto_v1_decode() is the same
 * with an inline fast path in front). @p h->chunks must be bound to storage
 * (rpcr_proto_chunks_init()); its counts are reset here.
 *
 * On every error except RPCR_PROTO_ESHORT, xid/vers/credit/proc are valid so that the caller can
 * address an RDMA_ERROR to the sender.
 *
 * @return the header length in bytes (where an inline RPC message starts), or RPCR_PROTO_ESHORT,
 *         RPCR_PROTO_EVERS, RPCR_PROTO_EHTYPE, RPCR_PROTO_EBADXDR, RPCR_PROTO_EREADS,
 *         RPCR_PROTO_EWRITES, RPCR_PROTO_ESEGS.
 */
ssize_t rpcr_proto_v1_decode_full(struct rpcr_proto_v1_hdr *h, const void *buf, size_t len);

/**
 * Encode @p h at the start of @p buf. Inline: RDMA_MSG and RDMA_NOMSG with three empty lists
 * (most calls and replies) are written here; everything else goes to rpcr_proto_v1_encode_full().
 *
 * @return as rpcr_proto_v1_encode_full().
 */
static inline ssize_t
rpcr_proto_v1_encode(const struct rpcr_proto_v1_hdr *h, void *buf, size_t len)
{
	uint8_t *p = (uint8_t *)buf;

	if (likely(h->proc <= RPCR_PROTO_V1_NOMSG && rpcr_proto_chunks_empty(&h->chunks))) {
		if (unlikely(len < RPCR_PROTO_V1_HDR_MIN))
			return -EMSGSIZE;
		rpcr_xdr_store32(p, h->xid);
		rpcr_xdr_store32(p + 4, h->vers);
		rpcr_xdr_store32(p + 8, h->credit);
		rpcr_xdr_store32(p + 12, h->proc);
		memset(p + 16, 0, 12); /* read list, write list, reply chunk: all empty */
		return RPCR_PROTO_V1_HDR_MIN;
	}
	return rpcr_proto_v1_encode_full(h, buf, len);
}

/**
 * Decode a version 1 header. Inline: a version 1 RDMA_MSG or RDMA_NOMSG with three empty lists is
 * taken here; everything else goes to rpcr_proto_v1_decode_full().
 *
 * @return as rpcr_proto_v1_decode_full().
 */
static inline ssize_t
rpcr_proto_v1_decode(struct rpcr_proto_v1_hdr *h, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;

	if (likely(len >= RPCR_PROTO_V1_HDR_MIN)) {
		uint32_t w[7];

		memcpy(w, p, sizeof(w));
		/* Compare in wire byte order: vers is 1, proc is 0 or 1, the list words are 0. */
		if (likely(w[1] == rte_cpu_to_be_32(RPCR_PROTO_V1_VERS) &&
			   (w[3] & ~rte_cpu_to_be_32(1)) == 0 && (w[4] | w[5] | w[6]) == 0)) {
			h->xid = rte_be_to_cpu_32(w[0]);
			h->vers = RPCR_PROTO_V1_VERS;
			h->credit = rte_be_to_cpu_32(w[2]);
			h->proc = rte_be_to_cpu_32(w[3]);
			rpcr_proto_chunks_reset(&h->chunks);
			return RPCR_PROTO_V1_HDR_MIN;
		}
	}
	return rpcr_proto_v1_decode_full(h, buf, len);
}

/**
 * The RDMA_ERROR code a receiver answers a decoder error with: RPCR_PROTO_V1_ERR_VERS,
 * RPCR_PROTO_V1_ERR_CHUNK, or 0 when the message is dropped without a reply.
 */
uint32_t rpcr_proto_v1_errcode(int err);

/** Headers compare equal field by field (only fields the proc carries). */
bool rpcr_proto_v1_equal(const struct rpcr_proto_v1_hdr *a, const struct rpcr_proto_v1_hdr *b);

/**
 * @name CONF_RDMA, the 2005 draft's connection configuration program (§6).
 *
 * The draft leaves the program number unassigned; rpcr uses 0x2f5a0002 from the user-defined
 * range (RFC 5531 §7.3: 0x20000000 - 0x3fffffff), next to its test program 0x2f5a0001.
 * @{
 */
#define RPCR_PROTO_CONF_RDMA_PROG 0x2f5a0002u
#define RPCR_PROTO_CONF_RDMA_VERS 1u
#define RPCR_PROTO_CONF_RDMA_PROC 1u
/** Encoded size of both structures. */
#define RPCR_PROTO_CONF_RDMA_SIZE 12u

/** config_rdma_req: the client's connection requirements. */
struct rpcr_proto_conf_rdma_req {
	uint32_t maxcall_sendsize;  /**< Largest inline call the client will send. */
	uint32_t maxreply_sendsize; /**< Largest inline reply the client accepts. */
	uint32_t maxrdmaread;       /**< RDMA Reads the client allows outstanding (its IRD). */
};

/** config_rdma_reply: the server's limits. */
struct rpcr_proto_conf_rdma_reply {
	uint32_t maxcall_sendsize; /**< Largest inline call the server accepts. */
	uint32_t align;            /**< Server's receive-buffer alignment for padded opaque data. */
	uint32_t maxrdmaread;      /**< RDMA Reads the server allows outstanding. */
};

/** Encode a config_rdma_req. @return 0 or -EMSGSIZE. */
int rpcr_proto_conf_rdma_req_encode(struct rpcr_xdr_enc *e,
				    const struct rpcr_proto_conf_rdma_req *r);
/** Decode a config_rdma_req. @return 0 or RPCR_PROTO_EBADXDR. */
int rpcr_proto_conf_rdma_req_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_conf_rdma_req *r);
/** Encode a config_rdma_reply. @return 0 or -EMSGSIZE. */
int rpcr_proto_conf_rdma_reply_encode(struct rpcr_xdr_enc *e,
				      const struct rpcr_proto_conf_rdma_reply *r);
/** Decode a config_rdma_reply. @return 0 or RPCR_PROTO_EBADXDR. */
int rpcr_proto_conf_rdma_reply_decode(struct rpcr_xdr_dec *d, struct rpcr_proto_conf_rdma_reply *r);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* RPCR_PROTO_V1_H */
