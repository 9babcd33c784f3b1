/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_CAP_H
#define RPCR_CAP_H

/**
 * @file
 * Capture files: RPC-over-RDMA messages as the RoCEv2 frames a NIC would have sent, in a pcapng
 * file that Wireshark reads with its own dissectors (rpcordma for version 1, rpcr's
 * usertools/wireshark/rpcrdma2.lua for version 2).
 *
 * Two parts, used by the engine's capture (lib/xprt/capture.c) and by the tests:
 *
 * - **Frames** (cap_roce.c): the headers of one RC message as one RoCEv2 packet: Ethernet,
 *   IPv4, UDP to port 4791, the BTH (SEND ONLY, SEND ONLY with Invalidate, RDMA WRITE ONLY,
 *   RDMA READ Request, RDMA READ Response ONLY) and its extended header (IETH, RETH, AETH);
 *   the payload follows, padded to 4 bytes, then the invariant CRC (rpcr_cap_roce_icrc()). A
 *   message longer than a path MTU goes out as several packets on a real link; here it is one
 *   frame, its lengths as long as the IPv4 header can say (RPCR_CAP_PAYLOAD_MAX).
 *
 * - **Files** (cap_file.c): DPDK's rte_pcapng writes the section header and formats each
 *   packet block (rte_pcapng_copy(): nanosecond timestamp from the TSC, direction, queue).
 *   What DPDK 22.11's rte_pcapng can do only for ethdev ports is done here: interface blocks
 *   (one per RDMA connection, with a comment), the interface of each packet block and its
 *   original length (a snap-length capture keeps the message's true length), and the
 *   interface statistics blocks (received, dropped).
 *
 * A file is written by one thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What one frame carries (the BTH opcode, reliable connected). */
enum rpcr_cap_op {
	RPCR_CAP_SEND = 0,  /**< SEND ONLY: a message. */
	RPCR_CAP_SEND_INV,  /**< SEND ONLY with Invalidate (IETH: @c rkey). */
	RPCR_CAP_WRITE,     /**< RDMA WRITE ONLY (RETH: @c va, @c rkey, @c dma_len). */
	RPCR_CAP_READ_REQ,  /**< RDMA READ Request (RETH: @c va, @c rkey, @c dma_len). */
	RPCR_CAP_READ_RESP, /**< RDMA READ Response ONLY (AETH). */
};

/** One frame's addressing and its transport header fields. */
struct rpcr_cap_roce {
	uint32_t src_ip, dst_ip; /**< IPv4 addresses, host order. */
	uint16_t src_port;       /**< UDP source port (the destination is 4791). */
	uint32_t dest_qp;        /**< BTH destination QP (24 bits). */
	uint32_t psn;            /**< BTH packet sequence number (24 bits). */
	enum rpcr_cap_op op;
	uint32_t rkey;    /**< SEND_INV: the key invalidated; WRITE, READ_REQ: the remote key. */
	uint64_t va;      /**< WRITE, READ_REQ: the remote address. */
	uint32_t dma_len; /**< WRITE, READ_REQ: the transfer's bytes. */
	uint32_t len;     /**< Payload bytes of the frame (the message's, or the data's). */
};

/** Bytes of the longest header rpcr_cap_roce_hdr() writes (Ethernet to RETH). */
#define RPCR_CAP_HDR_MAX (14u + 20u + 8u + 12u + 16u)
/** Longest payload a frame says it carries: what an IPv4 packet holds beside the headers. */
#define RPCR_CAP_PAYLOAD_MAX (65535u - 20u - 8u - 12u - 16u - 3u - 4u)
/** Bytes of the invariant CRC at the end of a frame. */
#define RPCR_CAP_ICRC_LEN 4u

/**
 * Write the headers of frame @p f at @p buf (RPCR_CAP_HDR_MAX bytes of room). The frame's
 * lengths (IPv4, UDP, the BTH's pad count) count @c f->len payload bytes (at most
 * RPCR_CAP_PAYLOAD_MAX: longer is cut to it), their padding and the CRC.
 *
 * @return the headers' bytes.
 */
uint32_t rpcr_cap_roce_hdr(uint8_t *buf, const struct rpcr_cap_roce *f);

/** Bytes of the whole frame whose headers rpcr_cap_roce_hdr() wrote at @p hdr. */
uint32_t rpcr_cap_roce_len(const uint8_t *hdr);

/**
 * Store the invariant CRC (IBA Annex A17) in the last RPCR_CAP_ICRC_LEN bytes of the whole
 * frame at @p frame, rpcr_cap_roce_len() bytes (payload and padding written).
 */
void rpcr_cap_roce_icrc(uint8_t *frame);

/** A pcapng file being written. */
struct rpcr_cap_file;

/**
 * Create (or truncate) @p path and write its section header (rte_pcapng), naming @p app and
 * with @p comment (may be NULL).
 *
 * @return the file, or NULL with rte_errno set.
 */
struct rpcr_cap_file *rpcr_cap_file_open(const char *path, const char *app, const char *comment);

/**
 * Add an Ethernet interface named @p name (its description @p descr and comment @p comment,
 * both may be NULL), nanosecond timestamps, snap length @p snap.
 *
 * @return its index in the file, or a negative errno.
 */
int rpcr_cap_file_iface(struct rpcr_cap_file *f, const char *name, const char *descr,
			const char *comment, uint32_t snap);

/**
 * Make the packet block of frame @p m (its data: the frame's first bytes) on interface
 * @p iface: a copy from @p mp (rte_pcapng_copy(); its mbufs need rpcr_cap_file_mbuf_size() of
 * data room), stamped @p ns (nanoseconds since the epoch), outbound when @p out, queue
 * @p queue, @p orig_len the frame's whole length. (The time is set here: rte_pcapng 22.11
 * converts TSC cycles from a base that only moves forward, and records of several pollers
 * come to the writer slightly out of order.)
 *
 * @return the block, for rpcr_cap_file_write(), or NULL with rte_errno (no mbuf).
 */
struct rte_mbuf *rpcr_cap_file_block(struct rpcr_cap_file *f, uint32_t iface,
				     const struct rte_mbuf *m, struct rte_mempool *mp,
				     uint32_t orig_len, uint64_t ns, bool out, uint32_t queue);

/**
 * Write @p n blocks made by rpcr_cap_file_block(), and free them.
 *
 * @return bytes written, or -1 with rte_errno (the blocks are freed all the same).
 */
ssize_t rpcr_cap_file_write(struct rpcr_cap_file *f, struct rte_mbuf **blocks, uint16_t n);

/**
 * Write interface @p iface's statistics: capture from @p start_ns to @p end_ns (ns since the
 * epoch), @p recv packets written, @p drop lost by the capture, @p comment (may be NULL).
 *
 * @return 0, or a negative errno.
 */
int rpcr_cap_file_stats(struct rpcr_cap_file *f, uint32_t iface, uint64_t start_ns, uint64_t end_ns,
			uint64_t recv, uint64_t drop, const char *comment);

/** Data room the mbufs of rpcr_cap_file_block()'s pool need for frames of @p frame_len bytes. */
uint32_t rpcr_cap_file_mbuf_size(uint32_t frame_len);

/** Bytes written to the file so far. */
uint64_t rpcr_cap_file_bytes(const struct rpcr_cap_file *f);

/** Close the file (rte_pcapng_close()) and free @p f. @return 0, or a negative errno. */
int rpcr_cap_file_close(struct rpcr_cap_file *f);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_CAP_H */
