/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_CODEC_ANY_H
#define RPCR_CODEC_ANY_H

/*
 * One interface over every codec family, so that golden, truncation, property and fuzz tests are
 * written once: decode, encode, compare, and a random generator.
 */

#include <rpcr_oncrpc.h>
#include <rpcr_proto.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_proto_xchar.h>

#include "golden.h"
#include "rpcr_test.h"

#define ANY_READS  32
#define ANY_WRITES 8
#define ANY_SEGS   64
#define ANY_PROPS  16
#define ANY_WORDS  8

struct rpcr_any {
	enum rpcr_golden_family family;
	struct rpcr_proto_rseg reads[ANY_READS];
	struct rpcr_proto_wchunk writes[ANY_WRITES];
	struct rpcr_proto_seg segs[ANY_SEGS];
	struct rpcr_proto_v2_prop props[ANY_PROPS];
	struct rpcr_proto_xchar_val vals[ANY_PROPS];
	uint32_t words[3][ANY_WORDS];
	union {
		struct rpcr_proto_v1_hdr v1;
		struct rpcr_proto_v2_hdr v2; /* also the carrier of an xchar operation */
		struct rpcr_oncrpc_call call;
		struct rpcr_oncrpc_reply reply;
		struct rpcr_oncrpc_authsys authsys;
		struct rpcr_proto_conf_rdma_req conf_req;
		struct rpcr_proto_conf_rdma_reply conf_reply;
		struct rpcr_proto_cm cm;
	} u;
	struct rpcr_proto_xchar xchar;
	/* Random generation: backing bytes for opaque data. */
	uint8_t scratch[1024];
};

/* Bind @m's storage for @family. Call before decode or random generation. */
void rpcr_any_init(struct rpcr_any *m, enum rpcr_golden_family family);

/*
 * Decode @buf with the family's decoder. Returns what struct rpcr_golden::expect describes: the
 * header length, 0 for whole-buffer formats, 1/0 for CM found/absent, or a negative error.
 */
long rpcr_any_decode(struct rpcr_any *m, const uint8_t *buf, size_t len);

/* Bytes the family's encoder needs for @m (exact). */
size_t rpcr_any_size(const struct rpcr_any *m);

/* Encode @m. Returns bytes written or a negative error. */
long rpcr_any_encode(const struct rpcr_any *m, uint8_t *buf, size_t len);

/* The decoded messages are equal. */
bool rpcr_any_equal(const struct rpcr_any *a, const struct rpcr_any *b);

/* Fill @m (initialised for its family) with a random valid message. */
void rpcr_any_random(struct rpcr_any *m, struct rpcr_test_rng *r);

#endif /* RPCR_CODEC_ANY_H */
