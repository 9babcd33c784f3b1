/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_XCHAR_H
#define RPCR_PROTO_XCHAR_H

/**
 * @file
 * Transport characteristics (draft-dnoveck-nfsv4-rpcrdma-xcharext-00), carried on version 2 in
 * rpcr's optional-operation header type RPCR_PROTO_V2_OPTIONAL (see rpcr_proto_v2.h).
 *
 * Wire grammar of each operation's body (rdma_optinfo):
 *
 *     xcharval    = which len data<len> pad
 *     xcharspec   = count { xcharval }
 *     xcharsubset = count { word }
 *     INIT_XCHAR  = xcharspec(start) xcharsubset(nochg)
 *     REQ_XCHAR   = xcharspec(want)
 *     RESP_XCHAR  = xcharsubset(done) xcharsubset(rej) xcharsubset(pend)
 *     UPD_XCHAR   = xcharval(now) bool(pendclr)
 *
 * Errors: a value running past the message is RPCR_PROTO_EBADXDR; a recognised characteristic
 * whose data does not match its type (§2.1) is RPCR_PROTO_EPROPVAL (version 2's BAD_PROPVAL is
 * the error made for exactly this); unknown characteristics are kept and not checked; more values
 * or subset words than the caller's capacity is RPCR_PROTO_EOVERFLOW; an unknown operation is
 * RPCR_PROTO_EHTYPE (the draft's RDMA_ERR_INVAL_OPTION does not exist in version 2; INVAL_HTYPE is
 * the fallback signal).
 */

#include <rpcr_proto.h>
#include <rpcr_proto_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @name Characteristics (§3). @{ */
#define RPCR_PROTO_XCHAR_RBSIZ           1u /**< uint32 receive buffer size; default 4096. */
#define RPCR_PROTO_XCHAR_RQREMINV        2u /**< bool requester remote invalidation; default false. */
#define RPCR_PROTO_XCHAR_BRS             3u /**< enum bkrqsup backward request support. */

#define RPCR_PROTO_XCHAR_BKRQSUP_UNKNOWN 0u
#define RPCR_PROTO_XCHAR_BKRQSUP_NONE    1u
#define RPCR_PROTO_XCHAR_BKRQSUP_SZLIM   2u
#define RPCR_PROTO_XCHAR_BKRQSUP_GENL    3u
/** @} */

/** @name Operations (§4, the opttype values). @{ */
#define RPCR_PROTO_XCHAR_INIT 1u /**< ROPT_INITXCH. */
#define RPCR_PROTO_XCHAR_REQ  2u /**< ROPT_REQXCH. */
#define RPCR_PROTO_XCHAR_RESP 3u /**< ROPT_RESPXCH. */
#define RPCR_PROTO_XCHAR_UPD  4u /**< ROPT_UPDXCH. */
/** @} */

/** xcharval: one characteristic; @c data is the XDR of its type. Zero copy when decoded. */
struct rpcr_proto_xchar_val {
	uint32_t which;      /**< xchv_which. */
	uint32_t len;        /**< Length of xchv_data. */
	const uint8_t *data; /**< xchv_data. */
};

/** xcharspec over a caller-provided array. */
struct rpcr_proto_xchar_spec {
	struct rpcr_proto_xchar_val *vals; /**< The values, in wire order. */
	uint32_t n;                        /**< Values in use. */
	uint32_t cap;                      /**< Capacity of @c vals. */
};

/** xcharsubset over a caller-provided array: bit N%32 of word N/32 selects spec element N. */
struct rpcr_proto_xchar_subset {
	uint32_t *words; /**< The mask words. */
	uint32_t n;      /**< Words in use. */
	uint32_t cap;    /**< Capacity of @c words. */
};

/** One transport-characteristics operation. */
struct rpcr_proto_xchar {
	uint32_t op;                           /**< RPCR_PROTO_XCHAR_INIT .. _UPD. */
	struct rpcr_proto_xchar_spec spec;     /**< INIT: optixc_start; REQ: optrqxc_want. */
	struct rpcr_proto_xchar_subset sub[3]; /**< INIT: [0] nochg; RESP: done, rej, pend. */
	struct rpcr_proto_xchar_val now;       /**< UPD: optuxc_now. */
	bool pendclr;                          /**< UPD: optuxc_pendclr. */
};

/** Check a value against its characteristic's type. @return 0 or RPCR_PROTO_EPROPVAL. */
int rpcr_proto_xchar_val_check(const struct rpcr_proto_xchar_val *v);

/** Point @p v at @p buf holding the XDR of @p x (uint32, bool or enum characteristics). */
void rpcr_proto_xchar_val_set_u32(struct rpcr_proto_xchar_val *v, uint32_t which, uint8_t buf[4],
				  uint32_t x);

/** The value of a checked uint32/bool/enum characteristic. */
uint32_t rpcr_proto_xchar_val_u32(const struct rpcr_proto_xchar_val *v);

/** Element @p n of a spec is in the subset. */
bool rpcr_proto_xchar_subset_test(const struct rpcr_proto_xchar_subset *s, uint32_t n);

/** Exact encoded size of the operation's body, or 0 when it cannot be encoded (unknown
 * operation, counts beyond their arrays). */
size_t rpcr_proto_xchar_size(const struct rpcr_proto_xchar *x);

/** Encode the operation's body. @return 0, -EMSGSIZE (nothing written) or -EINVAL. */
int rpcr_proto_xchar_encode(struct rpcr_xdr_enc *e, const struct rpcr_proto_xchar *x);

/**
 * Decode the body of operation @p op into @p x (its arrays bound by the caller).
 *
 * @return 0, RPCR_PROTO_EHTYPE, RPCR_PROTO_EBADXDR, RPCR_PROTO_EPROPVAL or RPCR_PROTO_EOVERFLOW.
 */
int rpcr_proto_xchar_decode(struct rpcr_xdr_dec *d, uint32_t op, struct rpcr_proto_xchar *x);

/** Operations compare equal (the fields the op carries). */
bool rpcr_proto_xchar_equal(const struct rpcr_proto_xchar *a, const struct rpcr_proto_xchar *b);

/**
 * Encode a whole version 2 message carrying @p x: the prefix from @p prefix (xid, credit, flags;
 * vers and htype are set here), then opttype and the body as rdma_optinfo.
 *
 * @return bytes written, -EMSGSIZE or -EINVAL.
 */
ssize_t rpcr_proto_v2_xchar_encode(const struct rpcr_proto_v2_hdr *prefix,
				   const struct rpcr_proto_xchar *x, void *buf, size_t len);

/**
 * Decode the operation carried by a decoded RPCR_PROTO_V2_OPTIONAL header. The body must fill
 * rdma_optinfo exactly.
 *
 * @return as rpcr_proto_xchar_decode().
 */
int rpcr_proto_v2_xchar_decode(const struct rpcr_proto_v2_hdr *h, struct rpcr_proto_xchar *x);

#ifdef __cplusplus
}
#endif

#endif /* RPCR_PROTO_XCHAR_H */
