/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_ONCRPC_H
#define RPCR_ONCRPC_H

/**
 * @file
 * ONC RPC version 2 messages (RFC 5531): call and reply headers, AUTH_NONE and AUTH_SYS.
 *
 *     call  = xid 0(CALL) rpcvers(2) prog vers proc cred verf      (arguments follow)
 *     reply = xid 1(REPLY) MSG_ACCEPTED verf accept_stat [PROG_MISMATCH: low high]
 *           | xid 1(REPLY) MSG_DENIED   RPC_MISMATCH low high
 *           | xid 1(REPLY) MSG_DENIED   AUTH_ERROR auth_stat
 *     opaque_auth = flavor body<400>
 *
 * Credentials and verifiers of every flavor are kept as opaque (zero copy); AUTH_SYS bodies
 * have their own codec. Decoders return distinct errors that say what a server answers:
 *
 * | return          | meaning                                   | server's answer            |
 * |-----------------|-------------------------------------------|----------------------------|
 * | -EBADMSG        | not a well-formed header                  | none (drop, as Linux does) |
 * | -EPROTONOSUPPORT| call with rpcvers != 2 (low/high in reply)| MSG_DENIED RPC_MISMATCH    |
 * | -EACCES         | cred or verf body over 400 bytes          | MSG_DENIED AUTH_ERROR      |
 *
 * Encoders return -EMSGSIZE (nothing written) when the buffer is short and -EINVAL for a
 * structure that cannot be encoded (an auth body over 400 bytes, an unknown reply_stat).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpcr_xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The only RPC protocol version (RFC 5531 §9). */
#define RPCR_ONCRPC_VERS 2u
/** Largest opaque_auth body (RFC 5531 §8.2). */
#define RPCR_ONCRPC_AUTH_MAX 400u

/** msg_type. */
enum rpcr_oncrpc_msg_type {
	RPCR_ONCRPC_CALL = 0,
	RPCR_ONCRPC_REPLY = 1,
};

/** reply_stat. */
enum rpcr_oncrpc_reply_stat {
	RPCR_ONCRPC_MSG_ACCEPTED = 0,
	RPCR_ONCRPC_MSG_DENIED = 1,
};

/** accept_stat. */
enum rpcr_oncrpc_accept_stat {
	RPCR_ONCRPC_SUCCESS = 0,       /**< Results follow. */
	RPCR_ONCRPC_PROG_UNAVAIL = 1,  /**< Program not exported. */
	RPCR_ONCRPC_PROG_MISMATCH = 2, /**< Version not supported; low/high follow. */
	RPCR_ONCRPC_PROC_UNAVAIL = 3,  /**< Procedure not supported. */
	RPCR_ONCRPC_GARBAGE_ARGS = 4,  /**< Arguments could not be decoded. */
	RPCR_ONCRPC_SYSTEM_ERR = 5,    /**< Server-side failure. */
};

/** reject_stat. */
enum rpcr_oncrpc_reject_stat {
	RPCR_ONCRPC_RPC_MISMATCH = 0, /**< RPC version not 2; low/high follow. */
	RPCR_ONCRPC_AUTH_ERROR = 1,   /**< auth_stat follows. */
};

/** auth_stat (RFC 5531 §9, RFC 2203). */
enum rpcr_oncrpc_auth_stat {
	RPCR_ONCRPC_AUTH_OK = 0,
	RPCR_ONCRPC_AUTH_BADCRED = 1,
	RPCR_ONCRPC_AUTH_REJECTEDCRED = 2,
	RPCR_ONCRPC_AUTH_BADVERF = 3,
	RPCR_ONCRPC_AUTH_REJECTEDVERF = 4,
	RPCR_ONCRPC_AUTH_TOOWEAK = 5,
	RPCR_ONCRPC_AUTH_INVALIDRESP = 6,
	RPCR_ONCRPC_AUTH_FAILED = 7,
	RPCR_ONCRPC_AUTH_KERB_GENERIC = 8,
	RPCR_ONCRPC_AUTH_TIMEEXPIRE = 9,
	RPCR_ONCRPC_AUTH_TKT_FILE = 10,
	RPCR_ONCRPC_AUTH_DECODE = 11,
	RPCR_ONCRPC_AUTH_NET_ADDR = 12,
	RPCR_ONCRPC_RPCSEC_GSS_CREDPROBLEM = 13,
	RPCR_ONCRPC_RPCSEC_GSS_CTXPROBLEM = 14,
};

/** @name Authentication flavors. @{ */
#define RPCR_ONCRPC_AUTH_NONE  0u
#define RPCR_ONCRPC_AUTH_SYS   1u
#define RPCR_ONCRPC_AUTH_SHORT 2u
#define RPCR_ONCRPC_AUTH_DH    3u
#define RPCR_ONCRPC_RPCSEC_GSS 6u
/** @} */

/** opaque_auth: a flavor and its body, zero copy. */
struct rpcr_oncrpc_auth {
	uint32_t flavor;     /**< Authentication flavor. */
	uint32_t len;        /**< Body length, at most 400. */
	const uint8_t *body; /**< Body bytes (may be NULL when @c len is 0). */
};

/** A call header. */
struct rpcr_oncrpc_call {
	uint32_t xid;                 /**< Transaction id. */
	uint32_t rpcvers;             /**< RPC version (2). */
	uint32_t prog;                /**< Program. */
	uint32_t vers;                /**< Program version. */
	uint32_t proc;                /**< Procedure. */
	struct rpcr_oncrpc_auth cred; /**< Credential. */
	struct rpcr_oncrpc_auth verf; /**< Verifier. */
	uint32_t auth_stat;           /**< Decode -EACCES: AUTH_BADCRED or AUTH_BADVERF. */
};

/** A reply header. Fields not carried by the reply's arm are ignored by the encoder. */
struct rpcr_oncrpc_reply {
	uint32_t xid;                 /**< Transaction id of the call. */
	uint32_t stat;                /**< enum rpcr_oncrpc_reply_stat. */
	struct rpcr_oncrpc_auth verf; /**< MSG_ACCEPTED: verifier. */
	uint32_t accept_stat;         /**< MSG_ACCEPTED: enum rpcr_oncrpc_accept_stat. */
	uint32_t reject_stat;         /**< MSG_DENIED: enum rpcr_oncrpc_reject_stat. */
	uint32_t auth_stat;           /**< MSG_DENIED AUTH_ERROR: enum rpcr_oncrpc_auth_stat. */
	uint32_t mismatch_low;        /**< PROG_MISMATCH or RPC_MISMATCH: lowest supported. */
	uint32_t mismatch_high;       /**< PROG_MISMATCH or RPC_MISMATCH: highest supported. */
};

/**
 * Read the xid and msg_type at the start of an RPC message.
 *
 * @return 0 or -EBADMSG (shorter than 8 bytes).
 */
int rpcr_oncrpc_peek(const void *buf, size_t len, uint32_t *xid, uint32_t *msg_type);

/** Exact encoded size of a call header. */
size_t rpcr_oncrpc_call_size(const struct rpcr_oncrpc_call *c);

/** Encode a call header. @return bytes written, -EMSGSIZE or -EINVAL. */
ssize_t rpcr_oncrpc_call_encode(const struct rpcr_oncrpc_call *c, void *buf, size_t len);

/**
 * Decode a call header.
 *
 * @return header length (where the arguments start), -EBADMSG, -EPROTONOSUPPORT (xid and
 *         rpcvers valid) or -EACCES (@c auth_stat says which).
 */
ssize_t rpcr_oncrpc_call_decode(struct rpcr_oncrpc_call *c, const void *buf, size_t len);

/** Exact encoded size of a reply header, or 0 for an unknown stat. */
size_t rpcr_oncrpc_reply_size(const struct rpcr_oncrpc_reply *r);

/** Encode a reply header. @return bytes written, -EMSGSIZE or -EINVAL. */
ssize_t rpcr_oncrpc_reply_encode(const struct rpcr_oncrpc_reply *r, void *buf, size_t len);

/**
 * Decode a reply header.
 *
 * @return header length (where the results start for SUCCESS), -EBADMSG or -EACCES (verifier
 *         body over 400 bytes).
 */
ssize_t rpcr_oncrpc_reply_decode(struct rpcr_oncrpc_reply *r, const void *buf, size_t len);

/** Calls compare equal (header fields and auth bodies). */
bool rpcr_oncrpc_call_equal(const struct rpcr_oncrpc_call *a, const struct rpcr_oncrpc_call *b);

/** Replies compare equal (the fields the reply's arm carries). */
bool rpcr_oncrpc_reply_equal(const struct rpcr_oncrpc_reply *a, const struct rpcr_oncrpc_reply *b);

/** @name AUTH_SYS (RFC 5531 Appendix A). @{ */
/** Longest machine name. */
#define RPCR_ONCRPC_AUTHSYS_MACHINE_MAX 255u
/** Most supplementary groups. */
#define RPCR_ONCRPC_AUTHSYS_GIDS_MAX 16u

/** authsys_parms. */
struct rpcr_oncrpc_authsys {
	uint32_t stamp;       /**< Arbitrary id generated by the caller. */
	uint32_t machine_len; /**< Machine name length, at most 255. */
	const char *machine;  /**< Machine name, not NUL-terminated. Zero copy. */
	uint32_t uid;         /**< Effective user id. */
	uint32_t gid;         /**< Effective group id. */
	uint32_t ngids;       /**< Supplementary groups, at most 16. */
	uint32_t gids[RPCR_ONCRPC_AUTHSYS_GIDS_MAX]; /**< Supplementary group ids. */
};

/** Exact encoded size of an AUTH_SYS body. */
size_t rpcr_oncrpc_authsys_size(const struct rpcr_oncrpc_authsys *a);

/**
 * Encode an AUTH_SYS body.
 *
 * @return bytes written, -EMSGSIZE, or -EINVAL (machine name or gids over their limits, body
 *         over 400 bytes).
 */
ssize_t rpcr_oncrpc_authsys_encode(const struct rpcr_oncrpc_authsys *a, void *buf, size_t len);

/**
 * Decode an AUTH_SYS body, which must fill @p len exactly (it is the body of an opaque_auth).
 *
 * @return 0, -EBADMSG (truncated, trailing bytes) or -E2BIG (machine name, gids or body over
 *         their limits). A server answers both with AUTH_ERROR AUTH_BADCRED.
 */
int rpcr_oncrpc_authsys_decode(struct rpcr_oncrpc_authsys *a, const void *buf, size_t len);

/** AUTH_SYS bodies compare equal. */
bool rpcr_oncrpc_authsys_equal(const struct rpcr_oncrpc_authsys *a,
			       const struct rpcr_oncrpc_authsys *b);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* RPCR_ONCRPC_H */
