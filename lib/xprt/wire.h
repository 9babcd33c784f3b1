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
 * headers, errors and RDMA_DONEs the same way. Version 1 is wire_v1.c; version 2 is wire_v2.c,
 * a table of its own beside it, which a server's connection takes when its first message is
 * version 2 (svc.c), and a client's when it asks version 2 (clnt.c).
 *
 * The straight-line paths (the common call and reply, no chunks, inline) are per version: they
 * compare and write whole header words, and a table call per message would cost more than they
 * do. Each version's matchers and writers are the inline helpers of its own header (wire_v1.h,
 * wire_v2.h). On receive they run in each version's bursts (clnt.c's and svc.c's xprt_vops),
 * the version a compile-time constant there. On send, clnt.c's inline branch of
 * clnt_send_once() writes the client's template, whose header is the connection's version's
 * (clnt_tmpl_set()), and svc.c's reply_send_msg() the plain reply of the connection's version;
 * xprt_conn::plain_send, their limit, is 0 while a client asks version 2 (the first message and
 * its answer take the general paths).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpcr_proto.h>
#include <rpcr_proto_v2.h>

/* What a message is, whatever the version calls it. */
enum xprt_htype {
	XPRT_HT_MSG = 0, /* the RPC message follows the header inline */
	XPRT_HT_NOMSG,   /* the RPC message is in a position-zero read chunk or the reply chunk */
	XPRT_HT_MSGP,    /* 2005 draft: inline, DDP-eligible data padded (align, thresh) */
	XPRT_HT_DONE,    /* 2005 draft: the requester has read a reply's read chunks */
	XPRT_HT_ERROR,   /* a transport error answering a call (err) */
	XPRT_HT_PROPS,   /* version 2: transport properties (RDMA2_CONNPROP: props) */
	XPRT_HT_OPTION,  /* version 2: an optional operation (rpcr's OPTIONAL carrier: opt*) */
	XPRT_HT_NUM,
};

/* Transport errors as the engine names them; each version has its own codes for them (version
 * 1 has two: ERR_VERS, and ERR_CHUNK for every other). */
enum xprt_herr {
	XPRT_HERR_NONE = 0,  /* decoding: a code the version does not define; answering: none */
	XPRT_HERR_VERS,      /* the version is not supported (vers_low..vers_high) */
	XPRT_HERR_CHUNK,     /* the header or its chunk lists could not be processed */
	XPRT_HERR_HTYPE,     /* a header type the receiver does not take */
	XPRT_HERR_CONT,      /* a message continuation breaks the rules (version 2's MORE) */
	XPRT_HERR_PROPVAL,   /* a transport property's value is not of its type */
	XPRT_HERR_READS,     /* more read chunks than the receiver takes (max_chunks) */
	XPRT_HERR_WRITES,    /* more write chunks than the receiver takes (max_chunks) */
	XPRT_HERR_SEGMENTS,  /* more segments in a chunk than the receiver takes (max_segments) */
	XPRT_HERR_WRITE_RES, /* a write chunk too small (chunk_index, 1-based; length_needed) */
	XPRT_HERR_REPLY_RES, /* the reply chunk too small (length_needed) */
	XPRT_HERR_SYSTEM,    /* the receiver could not process it for a reason of its own */
	XPRT_HERR_NUM,
};

/* Version 2's prefix flags, as the engine names them (version 1 has none). */
#define XPRT_HF_RESPONSE 0x1u /* the xid is a reply's (or an error report's) */
#define XPRT_HF_MORE     0x2u /* the RPC message continues in the next message */
#define XPRT_HF_TPMORE   0x4u /* more transport properties follow */

/* A transport header, decoded or to be encoded. (What version 1's paths touch, with the chunk
 * lists, first; version 2's extras after.) */
struct xprt_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;                 /* asked (call) or granted (reply): the version's word */
	uint32_t type;                   /* enum xprt_htype */
	uint32_t align;                  /* MSGP */
	uint32_t thresh;                 /* MSGP */
	uint32_t err;                    /* ERROR: enum xprt_herr */
	uint32_t vers_low, vers_high;    /* ERROR, XPRT_HERR_VERS */
	struct rpcr_proto_chunks chunks; /* MSG, NOMSG, MSGP */
	uint32_t flags;                  /* XPRT_HF_* (version 2) */
	uint32_t inv_handle;             /* version 2 MSG, NOMSG: a handle to invalidate, or 0 */
	uint32_t max_chunks;             /* ERROR, XPRT_HERR_READS and _WRITES */
	uint32_t max_segments;           /* ERROR, XPRT_HERR_SEGMENTS */
	uint32_t chunk_index;            /* ERROR, XPRT_HERR_WRITE_RES */
	uint32_t length_needed;          /* ERROR, XPRT_HERR_WRITE_RES and _REPLY_RES */
	uint32_t opttype;                /* OPTION: the operation */
	uint32_t optinfo_len;            /* OPTION: its body, in the message (zero copy) */
	const uint8_t *optinfo;
	struct rpcr_proto_v2_propset props; /* PROPS (bound to storage like the chunk lists) */
};

/*
 * Copy header @src into @dst, whose chunk lists (and property storage) keep their own storage.
 * @return 0, or the RPCR_PROTO_E* capacity error of rpcr_proto_chunks_copy() (@dst's lists then
 * empty). Properties are not copied (@dst has none after).
 */
static inline int
xprt_hdr_copy(struct xprt_hdr *dst, const struct xprt_hdr *src)
{
	struct rpcr_proto_chunks ch = dst->chunks;
	struct rpcr_proto_v2_propset ps = dst->props;

	*dst = *src;
	dst->chunks = ch;
	dst->props = ps;
	dst->props.n = 0;
	if (rpcr_proto_chunks_empty(&src->chunks)) {
		rpcr_proto_chunks_reset(&dst->chunks);
		return 0;
	}
	return rpcr_proto_chunks_copy(&dst->chunks, &src->chunks);
}

/* The version word of a received message of @len bytes (every version's second word), before a
 * table reads it: 0 for one shorter than the shortest prefix a version has (version 2's 20
 * bytes; version 1's shortest, RDMA_DONE, is 16, and only between rpcr peers of version 1). */
static inline uint32_t
xprt_wire_vers(const uint8_t *d, uint32_t len)
{
	return len >= RPCR_PROTO_V2_PREFIX ? rpcr_xdr_load32(d + 4) : 0;
}

/* Short message types a receiver takes (xprt_wire::decode()'s @short_ok). */
#define XPRT_SHORT_OK(t) (1u << (t))

struct xprt_wire {
	uint32_t vers;      /* the rdma_vers it speaks */
	uint32_t plain_len; /* bytes of a MSG header with empty chunk lists */
	uint32_t msgp_len;  /* bytes of an MSGP header with empty chunk lists */
	bool flag_dir;      /* a message's direction is its RESPONSE flag (else its RPC msg_type) */
	/* The credits a requester's credit word asks for. */
	uint32_t (*credit_ask)(uint32_t word);
	/* The credit word of a message granting @grant, this side taking @most at most. */
	uint32_t (*credit_word)(uint32_t grant, uint32_t most);
	/* The credit word of a call asking @ask, granting its reply @reply Sends (version 2's
	 * continuation, cont.c; version 1 has no word for it). */
	uint32_t (*credit_call)(uint32_t ask, uint32_t reply);
	/* The credits a reply's credit word grants. */
	uint32_t (*credit_granted)(uint32_t word);
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
	 * An error answering a message, at @buf (@cap bytes): @e's xid, vers (the failing
	 * message's: RFC 8166 section 4.5, the error carries it), credit, err (XPRT_HERR_*) and
	 * the err's arm (vers_low..vers_high: 0..0 for this table's own version; max_chunks ...).
	 * An error the version has no code for is sent as its nearest (version 1: ERR_CHUNK).
	 * @return bytes written, or a negative errno.
	 */
	ssize_t (*encode_error)(uint8_t *buf, uint32_t cap, const struct xprt_hdr *e);
};

extern const struct xprt_wire xprt_wire_v1; /* wire_v1.c */
/*
 * Version 1's RDMA_ERROR ERR_VERS as a server of version 1 answers a message of another version:
 * version 1's layout carrying the failing message's version word (RFC 8166 section 4.5; Linux's
 * svcrdma writes it so too), which version 1's decode() refuses for that word. @return its
 * length into @h (type ERROR, err XPRT_HERR_VERS, the range), or RPCR_PROTO_EHTYPE: not that.
 */
ssize_t xprt_wire_v1_err_vers(struct xprt_hdr *h, const uint8_t *d, uint32_t len);
extern const struct xprt_wire xprt_wire_v2; /* wire_v2.c */

#endif /* XPRT_WIRE_H */
