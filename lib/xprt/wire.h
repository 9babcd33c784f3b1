/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef XPRT_WIRE_H
#define XPRT_WIRE_H

/*
 * Transport headers as the engine sees them, whatever the version.
 *
 * The requester and the responder never read or write a transport header by offset: they decode
 * it through their connection's wire operations (xprt_conn::wire, chosen when the connection is
 * set up) into struct xprt_hdr, which names what the engine acts on (the message type, the xid,
 * the credits, the chunk lists, the 2005 draft's padding, a transport error), and encode their
 * headers, errors and RDMA_DONEs the same way. Version 1 is wire_v1.c; version 2 plugs in beside
 * it with its own table, without touching the requester or the responder.
 *
 * The straight-line paths (the common call and reply, no chunks, inline) are per version: they
 * compare and write whole header words, and a table call per message would cost more than they
 * do. Version 1's matchers and writers are the inline helpers of wire_v1.h. On receive they run
 * only in the bursts of xprt_v1_clnt_ops / xprt_v1_svc_ops. On send, clnt.c's inline branch of
 * clnt_send_once() and svc.c's reply_send_msg() write the version-1 plain header without asking:
 * every connection is version 1 today, and a version-2 connection must be kept off them.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpcr_proto.h>

/* What a message is, whatever the version calls it. */
enum xprt_htype {
	XPRT_HT_MSG = 0, /* the RPC message follows the header inline */
	XPRT_HT_NOMSG,   /* the RPC message is in a position-zero read chunk or the reply chunk */
	XPRT_HT_MSGP,    /* 2005 draft: inline, DDP-eligible data padded (align, thresh) */
	XPRT_HT_DONE,    /* 2005 draft: the requester has read a reply's read chunks */
	XPRT_HT_ERROR,   /* a transport error answering a call (err) */
	XPRT_HT_NUM,
};

/* Transport errors as the engine names them; each version has its own codes for them. */
enum xprt_herr {
	XPRT_HERR_NONE = 0, /* decoding: a code the version does not define; answering: no answer */
	XPRT_HERR_VERS,     /* the version is not supported (vers_low..vers_high) */
	XPRT_HERR_CHUNK,    /* the header or its chunk lists could not be processed */
};

/* A transport header, decoded or to be encoded. */
struct xprt_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;                 /* asked (call) or granted (reply) */
	uint32_t type;                   /* enum xprt_htype */
	uint32_t align;                  /* MSGP */
	uint32_t thresh;                 /* MSGP */
	uint32_t err;                    /* ERROR: enum xprt_herr */
	uint32_t vers_low, vers_high;    /* ERROR, XPRT_HERR_VERS */
	struct rpcr_proto_chunks chunks; /* MSG, NOMSG, MSGP */
};

/*
 * Copy header @src into @dst, whose chunk lists keep their own storage. @return 0, or the
 * RPCR_PROTO_E* capacity error of rpcr_proto_chunks_copy() (@dst's lists then empty).
 */
static inline int
xprt_hdr_copy(struct xprt_hdr *dst, const struct xprt_hdr *src)
{
	struct rpcr_proto_chunks ch = dst->chunks;

	*dst = *src;
	dst->chunks = ch;
	if (rpcr_proto_chunks_empty(&src->chunks)) {
		rpcr_proto_chunks_reset(&dst->chunks);
		return 0;
	}
	return rpcr_proto_chunks_copy(&dst->chunks, &src->chunks);
}

/* Short message types a receiver takes (xprt_wire::decode()'s @short_ok). */
#define XPRT_SHORT_OK(t) (1u << (t))

struct xprt_wire {
	uint32_t vers;      /* the rdma_vers it speaks */
	uint32_t plain_len; /* bytes of a MSG header with empty chunk lists */
	uint32_t msgp_len;  /* bytes of an MSGP header with empty chunk lists */
	/*
	 * Decode the header at @d (@len bytes) into @h (its chunk lists bound to storage).
	 * RFC 8166 section 4.5: a message shorter than the version's smallest header is not
	 * parsed at all, unless it is a whole message of a shorter type in @short_ok (a mask of
	 * XPRT_SHORT_OK(type)). @return the header's length (where an inline RPC message starts),
	 * or a negative RPCR_PROTO_E* error; after any error but RPCR_PROTO_ESHORT, @h's xid,
	 * vers, credit and type are the message's (to address an error to).
	 */
	ssize_t (*decode)(struct xprt_hdr *h, const uint8_t *d, uint32_t len, uint32_t short_ok);
	/* The error a decoding error is answered with: enum xprt_herr, XPRT_HERR_NONE for none. */
	uint32_t (*answer)(ssize_t decode_rc);
	/* Exact encoded size of @h; 0 when it cannot be encoded. */
	uint32_t (*size)(const struct xprt_hdr *h);
	/* Encode @h at @buf (@cap bytes). @return bytes written, or -EMSGSIZE, -EINVAL. */
	ssize_t (*encode)(const struct xprt_hdr *h, uint8_t *buf, uint32_t cap);
	/*
	 * An error answering a message (@xid, of version @vers: RFC 8166 section 4.5, the error
	 * carries the failing message's version) with @err (XPRT_HERR_*), granting @credit, at @buf
	 * (@cap bytes). @return bytes written, or a negative errno.
	 */
	ssize_t (*encode_error)(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t vers,
				uint32_t credit, uint32_t err);
};

extern const struct xprt_wire xprt_wire_v1; /* wire_v1.c */

#endif /* XPRT_WIRE_H */
