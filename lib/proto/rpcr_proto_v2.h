/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_V2_H
#define RPCR_PROTO_V2_H

/**
 * @file
 * RPC-over-RDMA version 2 (draft-ietf-nfsv4-rpcrdma-version-two-01).
 *
 * Wire grammar (one XDR word per item unless noted):
 *
 *     prefix      = xid vers credit htype flags                  (20 bytes)
 *     MSG, NOMSG  = inv_handle read-list write-list reply-chunk  (MSG: payload follows)
 *     ERROR       = err [arm by err, see struct rpcr_proto_v2_hdr]
 *     CONNPROP    = count { which opaque<> }
 *     OPTIONAL    = opttype opaque<>                             (rpcr's carrier, see below)
 *
 * Choices where the draft is damaged or silent (documented in doc/proto.md):
 * - RDMA2_RVRSDIR_CONT is 2 (§5.2.5's prose), not the duplicate 1 of §8.3's XDR.
 * - §6.2.2.3's RDMA2_F_TPDONE is read as RDMA2_F_TPMORE (set = more properties follow).
 * - The xcharext operations need the "RDMA_OPTIONAL" header type of an earlier version-two
 *   design. rpcr carries them in header type RPCR_PROTO_V2_OPTIONAL (0x72706372, "rpcr" in ASCII,
 *   far from the draft's small numbers) whose body is that design's
 *   { uint32 rdma_opttype; opaque rdma_optinfo<>; }. A peer that does not know the type answers
 *   RDMA2_ERR_INVAL_HTYPE, which tells rpcr to stop sending it.
 */

#include <rpcr_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version number this header format carries. */
#define RPCR_PROTO_V2_VERS 2u

/** Size of the version 2 header prefix. */
#define RPCR_PROTO_V2_PREFIX 20u
/** Size of RDMA2_MSG/RDMA2_NOMSG with three empty lists. */
#define RPCR_PROTO_V2_HDR_MIN 36u

/** @name Header types (rdma_htype). @{ */
#define RPCR_PROTO_V2_MSG      0u /**< RPC message (or its first part) follows inline. */
#define RPCR_PROTO_V2_NOMSG    1u /**< RPC message moved by RDMA, or a credit refresh. */
#define RPCR_PROTO_V2_ERROR    4u /**< Transport error report. */
#define RPCR_PROTO_V2_CONNPROP 5u /**< Transport properties. */
/** rpcr's header type for optional operations (the xcharext draft's RDMA_OPTIONAL). */
#define RPCR_PROTO_V2_OPTIONAL 0x72706372u
/** @} */

/** @name Prefix flags (rdma_flags). @{ */
#define RPCR_PROTO_V2_F_RESPONSE 0x1u /**< rdma_xid belongs to a reply (or error report). */
#define RPCR_PROTO_V2_F_MORE     0x2u /**< The payload continues in the next message. */
#define RPCR_PROTO_V2_F_TPMORE   0x4u /**< More transport properties follow. */
/** @} */

/** @name Error codes (rdma_err). @{ */
#define RPCR_PROTO_V2_ERR_VERS           1u
#define RPCR_PROTO_V2_ERR_BAD_XDR        2u
#define RPCR_PROTO_V2_ERR_BAD_PROPVAL    3u
#define RPCR_PROTO_V2_ERR_INVAL_HTYPE    4u
#define RPCR_PROTO_V2_ERR_INVAL_CONT     5u
#define RPCR_PROTO_V2_ERR_READ_CHUNKS    6u
#define RPCR_PROTO_V2_ERR_WRITE_CHUNKS   7u
#define RPCR_PROTO_V2_ERR_SEGMENTS       8u
#define RPCR_PROTO_V2_ERR_WRITE_RESOURCE 9u
#define RPCR_PROTO_V2_ERR_REPLY_RESOURCE 10u
#define RPCR_PROTO_V2_ERR_SYSTEM         100u
/** @} */

/** @name Transport properties (§5.2) and their defaults. @{ */
#define RPCR_PROTO_V2_PROP_SBSIZ     1u /**< uint32 maximum Send size; default 4096. */
#define RPCR_PROTO_V2_PROP_RBSIZ     2u /**< uint32 receive buffer size; default 4096. */
#define RPCR_PROTO_V2_PROP_RSSIZ     3u /**< uint32 max RDMA segment size; default 1 MiB. */
#define RPCR_PROTO_V2_PROP_RCSIZ     4u /**< uint32 max RDMA segment count; default 16. */
#define RPCR_PROTO_V2_PROP_BRS       5u /**< uint32 reverse-direction support; default NONE. */
#define RPCR_PROTO_V2_PROP_HOSTAUTH  6u /**< opaque<> host authentication message. */

#define RPCR_PROTO_V2_RVRSDIR_NONE   0u /**< No reverse-direction operation. */
#define RPCR_PROTO_V2_RVRSDIR_SIMPLE 1u /**< Simple format, no chunks. */
#define RPCR_PROTO_V2_RVRSDIR_CONT   2u /**< Simple or continued format, no chunks. */
#define RPCR_PROTO_V2_RVRSDIR_GENL   3u /**< As the forward direction. */
/** @} */

/**
 * One transport property, rpcrdma2_propval: @c data/@c len is rdma_data, the XDR encoding of the
 * property's type (zero length = the property's default). Decoding is zero copy.
 */
struct rpcr_proto_v2_prop {
	uint32_t which;      /**< rdma_which. */
	uint32_t len;        /**< Length of rdma_data. */
	const uint8_t *data; /**< rdma_data (XDR of the property's type). */
};

/** A property set (rpcrdma2_propset) over a caller-provided array. */
struct rpcr_proto_v2_propset {
	struct rpcr_proto_v2_prop *props; /**< The properties, in wire order. */
	uint32_t n;                       /**< Properties in use. */
	uint32_t cap;                     /**< Capacity of @c props. */
};

/** A decoded or to-be-encoded version 2 transport header. */
struct rpcr_proto_v2_hdr {
	uint32_t xid;    /**< rdma_xid. */
	uint32_t vers;   /**< rdma_vers (2). */
	uint32_t credit; /**< Credits requested or granted. */
	uint32_t htype;  /**< Header type. */
	uint32_t flags;  /**< RPCR_PROTO_V2_F_*. */

	/* RDMA2_MSG, RDMA2_NOMSG */
	uint32_t inv_handle;             /**< Handle the responder may remotely invalidate, or 0. */
	struct rpcr_proto_chunks chunks; /**< The chunk lists. */

	/* RDMA2_ERROR */
	uint32_t err;           /**< rdma_err; codes without an arm (and unknown ones) are void. */
	uint32_t vers_low;      /**< ERR_VERS. */
	uint32_t vers_high;     /**< ERR_VERS. */
	uint32_t max_chunks;    /**< ERR_READ_CHUNKS, ERR_WRITE_CHUNKS. */
	uint32_t max_segments;  /**< ERR_SEGMENTS. */
	uint32_t chunk_index;   /**< ERR_WRITE_RESOURCE (1-based, 0 = unknown). */
	uint32_t length_needed; /**< ERR_WRITE_RESOURCE, ERR_REPLY_RESOURCE. */

	/* RDMA2_CONNPROP */
	struct rpcr_proto_v2_propset props; /**< The property set. */

	/* RPCR_PROTO_V2_OPTIONAL */
	uint32_t opttype;       /**< Operation (e.g. RPCR_PROTO_XCHAR_INIT). */
	uint32_t optinfo_len;   /**< Length of the operation's body. */
	const uint8_t *optinfo; /**< The operation's body (XDR), zero copy. */
};

/** Exact encoded size of @p h, or 0 when it cannot be encoded (unknown htype, counts beyond
 * their arrays). */
size_t rpcr_proto_v2_size(const struct rpcr_proto_v2_hdr *h);

/**
 * Encode @p h at the start of @p buf (every header type; rpcr_proto_v2_encode() is the same with
 * an inline fast path in front).
 *
 * @return bytes written, -EMSGSIZE (nothing written), or -EINVAL (unknown htype, counts beyond
 *         their arrays).
 */
ssize_t rpcr_proto_v2_encode_full(const struct rpcr_proto_v2_hdr *h, void *buf, size_t len);

/**
 * Decode a version 2 header (every header type; rpcr_proto_v2_decode() is the same with an inline
 * fast path in front). @p h->chunks and @p h->props must be bound to storage.
 *
 * Besides XDR, the decoder enforces what one message alone can violate: RDMA2_F_TPMORE outside
 * RDMA2_CONNPROP (RPCR_PROTO_EHTYPE, §6.2.2.3), RDMA2_F_MORE outside RDMA2_MSG/RDMA2_CONNPROP or
 * with chunks (RPCR_PROTO_ECONT, §6.2.2.2), and every recognised property's type
 * (RPCR_PROTO_EPROPVAL, §5.1); unknown properties are kept as they are.
 *
 * @return header length (where an inline payload starts) or a negative error; xid, vers,
 *         credit, htype are valid on every error but RPCR_PROTO_ESHORT, and flags on every
 *         error but RPCR_PROTO_ESHORT and RPCR_PROTO_EVERS.
 */
ssize_t rpcr_proto_v2_decode_full(struct rpcr_proto_v2_hdr *h, const void *buf, size_t len);

/**
 * Encode @p h. Inline: RDMA2_MSG and RDMA2_NOMSG with three empty lists are written here;
 * everything else goes to rpcr_proto_v2_encode_full().
 */
static inline ssize_t
rpcr_proto_v2_encode(const struct rpcr_proto_v2_hdr *h, void *buf, size_t len)
{
	uint8_t *p = (uint8_t *)buf;

	if (likely(h->htype <= RPCR_PROTO_V2_NOMSG && rpcr_proto_chunks_empty(&h->chunks))) {
		if (unlikely(len < RPCR_PROTO_V2_HDR_MIN))
			return -EMSGSIZE;
		rpcr_xdr_store32(p, h->xid);
		rpcr_xdr_store32(p + 4, h->vers);
		rpcr_xdr_store32(p + 8, h->credit);
		rpcr_xdr_store32(p + 12, h->htype);
		rpcr_xdr_store32(p + 16, h->flags);
		rpcr_xdr_store32(p + 20, h->inv_handle);
		memset(p + 24, 0, 12); /* read list, write list, reply chunk: all empty */
		return RPCR_PROTO_V2_HDR_MIN;
	}
	return rpcr_proto_v2_encode_full(h, buf, len);
}

/**
 * Decode a version 2 header. Inline: RDMA2_MSG/RDMA2_NOMSG with three empty lists and flags that
 * need no further check are taken here; everything else goes to rpcr_proto_v2_decode_full().
 */
static inline ssize_t
rpcr_proto_v2_decode(struct rpcr_proto_v2_hdr *h, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;

	if (likely(len >= RPCR_PROTO_V2_HDR_MIN)) {
		uint32_t w[9];

		memcpy(w, p, sizeof(w));
		/* Wire byte order: vers 2, htype 0 or 1, neither MORE nor TPMORE, empty lists. */
		if (likely(w[1] == rte_cpu_to_be_32(RPCR_PROTO_V2_VERS) &&
			   (w[3] & ~rte_cpu_to_be_32(1)) == 0 &&
			   (w[4] &
			    rte_cpu_to_be_32(RPCR_PROTO_V2_F_MORE | RPCR_PROTO_V2_F_TPMORE)) == 0 &&
			   (w[6] | w[7] | w[8]) == 0)) {
			h->xid = rte_be_to_cpu_32(w[0]);
			h->vers = RPCR_PROTO_V2_VERS;
			h->credit = rte_be_to_cpu_32(w[2]);
			h->htype = rte_be_to_cpu_32(w[3]);
			h->flags = rte_be_to_cpu_32(w[4]);
			h->inv_handle = rte_be_to_cpu_32(w[5]);
			rpcr_proto_chunks_reset(&h->chunks);
			h->props.n = 0;
			return RPCR_PROTO_V2_HDR_MIN;
		}
	}
	return rpcr_proto_v2_decode_full(h, buf, len);
}

/**
 * The rdma_err a receiver answers a decoder error with, or 0 when the message is dropped
 * without a reply (RPCR_PROTO_ESHORT).
 */
uint32_t rpcr_proto_v2_errcode(int err);

/** Headers compare equal field by field (only the fields the htype carries). */
bool rpcr_proto_v2_equal(const struct rpcr_proto_v2_hdr *a, const struct rpcr_proto_v2_hdr *b);

/**
 * Check one property's data against its type. Unknown properties are always valid.
 *
 * @return 0 or RPCR_PROTO_EPROPVAL.
 */
int rpcr_proto_v2_prop_check(const struct rpcr_proto_v2_prop *p);

/** Default value of a uint32 property (0 for others). */
uint32_t rpcr_proto_v2_prop_default(uint32_t which);

/** Point @p p at @p buf holding the XDR of uint32 @p v (a uint32-typed property). */
void rpcr_proto_v2_prop_set_u32(struct rpcr_proto_v2_prop *p, uint32_t which, uint8_t buf[4],
				uint32_t v);

/** The known properties of a set, with defaults where absent. */
struct rpcr_proto_v2_props {
	uint32_t sbsiz;          /**< Maximum Send size. */
	uint32_t rbsiz;          /**< Receive buffer size. */
	uint32_t rssiz;          /**< Maximum RDMA segment size. */
	uint32_t rcsiz;          /**< Maximum RDMA segment count. */
	uint32_t brs;            /**< Reverse-direction support. */
	bool has_hostauth;       /**< A HOSTAUTH property was present. */
	uint32_t hostauth_len;   /**< HOSTAUTH message length. */
	const uint8_t *hostauth; /**< HOSTAUTH message. */
	uint32_t unknown;        /**< Properties not recognised (kept, not applied). */
};

/**
 * Interpret a property set that the decoder (or rpcr_proto_v2_prop_check()) has validated.
 * Later occurrences of a property override earlier ones.
 */
void rpcr_proto_v2_props_get(const struct rpcr_proto_v2_propset *s, struct rpcr_proto_v2_props *o);

/** The header's chunk lists allow remote invalidation of @c inv_handle (it is one of theirs). */
bool rpcr_proto_v2_inv_handle_valid(const struct rpcr_proto_v2_hdr *h);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_PROTO_V2_H */
