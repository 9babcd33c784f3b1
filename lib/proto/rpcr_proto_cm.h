/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_CM_H
#define RPCR_PROTO_CM_H

/**
 * @file
 * RDMA-CM private data for RPC-over-RDMA version 1 (RFC 8797).
 *
 *      0                   1                   2                   3
 *     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *     |                 Format Identifier (0xf6ab0e18)                |
 *     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *     |    Version    |  Reserved   |R|   Send Size   | Receive Size  |
 *     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * Sizes travel as (bytes / 1024) - 1, so 1024 to 262144 bytes in steps of 1024.
 */

#include <rpcr_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Format Identifier of RPC-over-RDMA version 1 private data. */
#define RPCR_PROTO_CM_MAGIC 0xf6ab0e18u
/** The message format version this code produces and understands. */
#define RPCR_PROTO_CM_VERSION 1u
/** Encoded size. */
#define RPCR_PROTO_CM_SIZE 8u
/** The R bit: the sender supports remote invalidation. */
#define RPCR_PROTO_CM_F_REMOTE_INV 0x01u
/** Smallest and largest inline sizes the format can express. */
#define RPCR_PROTO_CM_SIZE_MIN 1024u
#define RPCR_PROTO_CM_SIZE_MAX 262144u
/** RFC 8166 §3.3.3: the inline threshold when a peer sends no private data. */
#define RPCR_PROTO_CM_DEFAULT_INLINE 1024u

/** Decoded private data, or the RFC 8797 §5.1 defaults when none was found. */
struct rpcr_proto_cm {
	bool present;       /**< The format identifier was found with a known version. */
	bool remote_inv;    /**< R bit. */
	uint32_t send_size; /**< Largest Send this peer will transmit, in bytes. */
	uint32_t recv_size; /**< Largest Send this peer can receive, in bytes. */
};

/**
 * Encode private data. Sizes are clamped to [1024, 262144] and rounded down to a multiple of
 * 1024, so the peer never sees a size larger than the real one.
 *
 * @return 8, or -EMSGSIZE when @p len < 8.
 */
ssize_t rpcr_proto_cm_encode(const struct rpcr_proto_cm *cm, void *buf, size_t len);

/**
 * Find and decode private data anywhere in @p buf (RFC 8797 §5.2: the identifier may sit at any
 * offset, aligned or not, after other layers' data). An occurrence with an unknown version or
 * fewer than 8 bytes left is skipped and the search goes on. When nothing is found, @p cm gets
 * the defaults (1024/1024, no R) and @c present is false.
 *
 * @return 0 (absence is not an error), or -EINVAL when @p cm is NULL.
 */
int rpcr_proto_cm_decode(struct rpcr_proto_cm *cm, const void *buf, size_t len);

/**
 * Inline threshold for one direction: the smaller of the sender's Send size and the receiver's
 * receive size (RFC 8797 §4.2).
 */
static inline uint32_t
rpcr_proto_cm_threshold(uint32_t local_send, uint32_t peer_recv)
{
	return local_send < peer_recv ? local_send : peer_recv;
}

/*
 * rpcr's own block, placed after the RFC 8797 block (at offset 8) so that peers that read only
 * RFC 8797 (Linux) see nothing new: it announces the 2005 draft's extensions this side supports,
 * which are used on a connection only when both sides announce them (an RFC 8166 peer, which
 * answers them with ERR_CHUNK, is never sent one). Layout, big-endian:
 * magic 0x72706372 ("rpcr"), version (1), feature bits.
 */
#define RPCR_PROTO_CM_EXT_MAGIC   0x72706372u
#define RPCR_PROTO_CM_EXT_VERSION 1u
#define RPCR_PROTO_CM_EXT_SIZE    12u
#define RPCR_PROTO_CM_EXT_OFFSET  RPCR_PROTO_CM_SIZE
#define RPCR_PROTO_CM_EXT_F_MSGP  0x1u /**< RDMA_MSGP padding. */
#define RPCR_PROTO_CM_EXT_F_DONE  0x2u /**< Read chunks in replies, released by RDMA_DONE. */
#define RPCR_PROTO_CM_EXT_F_CONF  0x4u /**< The CONF_RDMA program. */

/** rpcr's extension block. */
struct rpcr_proto_cm_ext {
	bool present;      /**< Found with a known version. */
	uint32_t features; /**< RPCR_PROTO_CM_EXT_F_* (unknown bits kept: the caller masks). */
};

/** Encode the extension block (12 bytes) at @p buf. @return 12 or -EMSGSIZE. */
ssize_t rpcr_proto_cm_ext_encode(const struct rpcr_proto_cm_ext *x, void *buf, size_t len);

/**
 * Find the extension block in a peer's private data (@p buf, @p len: all of it). Absent, short,
 * or another version: present is false and features 0.
 *
 * @return 0, -EINVAL (@p x NULL).
 */
int rpcr_proto_cm_ext_decode(struct rpcr_proto_cm_ext *x, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_PROTO_CM_H */
