/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_XDR_H
#define RPCR_XDR_H

/**
 * @file
 * Bounds-checked XDR (RFC 4506) cursors over a caller's buffer.
 *
 * Two cursor types: a decoder reads from a const buffer, an encoder writes into a writable one.
 * Nothing allocates, nothing performs I/O, and every access is checked against the end of the
 * buffer before it happens. Variable-length opaque data and strings are decoded zero-copy: the
 * decoder returns a pointer into the buffer and a length.
 *
 * Errors (all negative errno values):
 * - -EBADMSG: the input is too short for the item, or the item is not a valid encoding
 *   (a bool other than 0 or 1, a count larger than what remains of the buffer).
 * - -E2BIG: a counted item is longer than the maximum the caller allows (opaque<max>).
 * - -EMSGSIZE: the encoder's buffer is too short; nothing of the item was written.
 *
 * Every load and store goes through memcpy() so that unaligned buffers are legal; compilers turn
 * these into single moves.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_branch_prediction.h>

#ifdef __cplusplus
extern "C" {
#endif

/** XDR's basic unit, in bytes. */
#define RPCR_XDR_UNIT 4u

/** Round a byte count up to a multiple of 4 (XDR roundup). Exact for every value below 2^64 - 3. */
static inline uint64_t
rpcr_xdr_roundup(uint64_t len)
{
	return (len + 3) & ~(uint64_t)3;
}

/** Encoded size of opaque<> or string<> carrying @p len bytes: the count, data and padding. */
static inline uint64_t
rpcr_xdr_opaque_size(uint64_t len)
{
	return RPCR_XDR_UNIT + rpcr_xdr_roundup(len);
}

/** Decoding cursor. */
struct rpcr_xdr_dec {
	const uint8_t *base; /**< Start of the buffer (position 0). */
	const uint8_t *p;    /**< Next byte to decode. */
	const uint8_t *end;  /**< One past the last byte of the buffer. */
};

/** Encoding cursor. */
struct rpcr_xdr_enc {
	uint8_t *base; /**< Start of the buffer (position 0). */
	uint8_t *p;    /**< Next byte to write. */
	uint8_t *end;  /**< One past the last byte of the buffer. */
};

/** Start decoding @p len bytes at @p buf. */
static inline void
rpcr_xdr_dec_init(struct rpcr_xdr_dec *d, const void *buf, size_t len)
{
	d->base = (const uint8_t *)buf;
	d->p = d->base;
	d->end = d->base + len;
}

/** Bytes decoded so far. */
static inline size_t
rpcr_xdr_dec_pos(const struct rpcr_xdr_dec *d)
{
	return (size_t)(d->p - d->base);
}

/** Bytes left to decode. */
static inline size_t
rpcr_xdr_dec_left(const struct rpcr_xdr_dec *d)
{
	return (size_t)(d->end - d->p);
}

/**
 * Take @p n raw bytes from the stream (no roundup).
 *
 * @return a pointer to them, or NULL (cursor unchanged) when fewer than @p n remain.
 */
static inline const void *
rpcr_xdr_dec_inline(struct rpcr_xdr_dec *d, size_t n)
{
	const uint8_t *p = d->p;

	if (unlikely(n > (size_t)(d->end - p)))
		return NULL;
	d->p = p + n;
	return p;
}

/** Load a big-endian 32-bit word from any address. */
static inline uint32_t
rpcr_xdr_load32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

/** Store a big-endian 32-bit word at any address. */
static inline void
rpcr_xdr_store32(void *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, sizeof(v));
}

/** Load a big-endian 64-bit XDR hyper from any address. */
static inline uint64_t
rpcr_xdr_load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_64(v);
}

/** Store a big-endian 64-bit XDR hyper at any address. */
static inline void
rpcr_xdr_store64(void *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, sizeof(v));
}

/** Decode an unsigned int. @return 0 or -EBADMSG. */
static inline int
rpcr_xdr_dec_u32(struct rpcr_xdr_dec *d, uint32_t *v)
{
	const void *p = rpcr_xdr_dec_inline(d, 4);

	if (unlikely(p == NULL))
		return -EBADMSG;
	*v = rpcr_xdr_load32(p);
	return 0;
}

/** Decode a signed int. @return 0 or -EBADMSG. */
static inline int
rpcr_xdr_dec_i32(struct rpcr_xdr_dec *d, int32_t *v)
{
	uint32_t u;
	int rc = rpcr_xdr_dec_u32(d, &u);

	if (rc == 0)
		*v = (int32_t)u;
	return rc;
}

/** Decode an enum (a signed int on the wire). @return 0 or -EBADMSG. */
static inline int
rpcr_xdr_dec_enum(struct rpcr_xdr_dec *d, int32_t *v)
{
	return rpcr_xdr_dec_i32(d, v);
}

/** Decode an unsigned hyper. @return 0 or -EBADMSG. */
static inline int
rpcr_xdr_dec_u64(struct rpcr_xdr_dec *d, uint64_t *v)
{
	const void *p = rpcr_xdr_dec_inline(d, 8);

	if (unlikely(p == NULL))
		return -EBADMSG;
	*v = rpcr_xdr_load64(p);
	return 0;
}

/** Decode a hyper. @return 0 or -EBADMSG. */
static inline int
rpcr_xdr_dec_i64(struct rpcr_xdr_dec *d, int64_t *v)
{
	uint64_t u;
	int rc = rpcr_xdr_dec_u64(d, &u);

	if (rc == 0)
		*v = (int64_t)u;
	return rc;
}

/**
 * Decode a bool. RFC 4506 §4.4 allows only 0 (FALSE) and 1 (TRUE).
 *
 * @return 0, or -EBADMSG when short or when the value is neither 0 nor 1 (cursor unchanged).
 */
static inline int
rpcr_xdr_dec_bool(struct rpcr_xdr_dec *d, bool *v)
{
	const uint8_t *save = d->p;
	uint32_t u;

	if (unlikely(rpcr_xdr_dec_u32(d, &u) != 0))
		return -EBADMSG;
	if (unlikely(u > 1)) {
		d->p = save;
		return -EBADMSG;
	}
	*v = u != 0;
	return 0;
}

/**
 * Skip @p n bytes of data and their XDR padding.
 *
 * @return 0 or -EBADMSG (cursor unchanged).
 */
static inline int
rpcr_xdr_dec_skip(struct rpcr_xdr_dec *d, uint64_t n)
{
	uint64_t padded;

	/* Compare before rounding up: n + 3 wraps for counts near 2^64. */
	if (unlikely(n > rpcr_xdr_dec_left(d)))
		return -EBADMSG;
	padded = rpcr_xdr_roundup(n);
	if (unlikely(padded > rpcr_xdr_dec_left(d)))
		return -EBADMSG;
	d->p += padded;
	return 0;
}

/**
 * Decode fixed-length opaque data, opaque[n]: @p n bytes and their padding. Zero copy.
 *
 * The padding's contents are not checked (RFC 4506 asks senders to zero it; peers that do not
 * are tolerated, as Linux tolerates them).
 *
 * @return 0 or -EBADMSG (cursor unchanged).
 */
static inline int
rpcr_xdr_dec_fixed(struct rpcr_xdr_dec *d, uint32_t n, const void **data)
{
	const uint8_t *p = d->p;
	int rc = rpcr_xdr_dec_skip(d, n);

	if (rc == 0)
		*data = p;
	return rc;
}

/**
 * Decode variable-length opaque data, opaque<maxlen>. Zero copy: @p data points into the buffer.
 *
 * @return 0; -EBADMSG when the count runs past the buffer; -E2BIG when the count exceeds
 *         @p maxlen. The cursor is unchanged on error.
 */
static inline int
rpcr_xdr_dec_opaque(struct rpcr_xdr_dec *d, uint32_t maxlen, const void **data, uint32_t *len)
{
	const uint8_t *save = d->p;
	uint32_t n;
	int rc;

	rc = rpcr_xdr_dec_u32(d, &n);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(n > maxlen)) {
		d->p = save;
		return -E2BIG;
	}
	rc = rpcr_xdr_dec_fixed(d, n, data);
	if (unlikely(rc != 0)) {
		d->p = save;
		return rc;
	}
	*len = n;
	return 0;
}

/**
 * Decode a string<maxlen>. Zero copy and not NUL-terminated: use the returned length.
 *
 * @return as rpcr_xdr_dec_opaque().
 */
static inline int
rpcr_xdr_dec_string(struct rpcr_xdr_dec *d, uint32_t maxlen, const char **s, uint32_t *len)
{
	const void *data;
	int rc = rpcr_xdr_dec_opaque(d, maxlen, &data, len);

	if (rc == 0)
		*s = (const char *)data;
	return rc;
}

/** Start encoding into @p len bytes at @p buf. */
static inline void
rpcr_xdr_enc_init(struct rpcr_xdr_enc *e, void *buf, size_t len)
{
	e->base = (uint8_t *)buf;
	e->p = e->base;
	e->end = e->base + len;
}

/** Bytes encoded so far. */
static inline size_t
rpcr_xdr_enc_pos(const struct rpcr_xdr_enc *e)
{
	return (size_t)(e->p - e->base);
}

/** Room left in the buffer. */
static inline size_t
rpcr_xdr_enc_left(const struct rpcr_xdr_enc *e)
{
	return (size_t)(e->end - e->p);
}

/**
 * Reserve @p n raw bytes (no roundup) for the caller to fill.
 *
 * @return a pointer to them, or NULL (cursor unchanged) when fewer than @p n remain.
 */
static inline void *
rpcr_xdr_enc_reserve(struct rpcr_xdr_enc *e, size_t n)
{
	uint8_t *p = e->p;

	if (unlikely(n > (size_t)(e->end - p)))
		return NULL;
	e->p = p + n;
	return p;
}

/** Encode an unsigned int. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_u32(struct rpcr_xdr_enc *e, uint32_t v)
{
	void *p = rpcr_xdr_enc_reserve(e, 4);

	if (unlikely(p == NULL))
		return -EMSGSIZE;
	rpcr_xdr_store32(p, v);
	return 0;
}

/** Encode a signed int. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_i32(struct rpcr_xdr_enc *e, int32_t v)
{
	return rpcr_xdr_enc_u32(e, (uint32_t)v);
}

/** Encode an enum. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_enum(struct rpcr_xdr_enc *e, int32_t v)
{
	return rpcr_xdr_enc_u32(e, (uint32_t)v);
}

/** Encode a bool as 0 or 1. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_bool(struct rpcr_xdr_enc *e, bool v)
{
	return rpcr_xdr_enc_u32(e, v ? 1 : 0);
}

/** Encode an unsigned hyper. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_u64(struct rpcr_xdr_enc *e, uint64_t v)
{
	void *p = rpcr_xdr_enc_reserve(e, 8);

	if (unlikely(p == NULL))
		return -EMSGSIZE;
	rpcr_xdr_store64(p, v);
	return 0;
}

/** Encode a hyper. @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_i64(struct rpcr_xdr_enc *e, int64_t v)
{
	return rpcr_xdr_enc_u64(e, (uint64_t)v);
}

/**
 * Encode fixed-length opaque data, opaque[n]: @p n bytes then zero padding to a multiple of 4.
 *
 * @return 0 or -EMSGSIZE (nothing written).
 */
static inline int
rpcr_xdr_enc_fixed(struct rpcr_xdr_enc *e, const void *data, uint32_t n)
{
	uint64_t padded = rpcr_xdr_roundup(n);
	uint8_t *p;

	if (unlikely(padded > rpcr_xdr_enc_left(e)))
		return -EMSGSIZE;
	p = e->p;
	if (n != 0)
		memcpy(p, data, n);
	memset(p + n, 0, (size_t)(padded - n));
	e->p = p + padded;
	return 0;
}

/**
 * Encode variable-length opaque data, opaque<>: the count, the bytes, zero padding.
 *
 * @return 0 or -EMSGSIZE (nothing written).
 */
static inline int
rpcr_xdr_enc_opaque(struct rpcr_xdr_enc *e, const void *data, uint32_t len)
{
	if (unlikely(rpcr_xdr_opaque_size(len) > rpcr_xdr_enc_left(e)))
		return -EMSGSIZE;
	rpcr_xdr_store32(e->p, len);
	e->p += 4;
	return rpcr_xdr_enc_fixed(e, data, len);
}

/** Encode a string<> of @p len bytes (no NUL is sent). @return 0 or -EMSGSIZE. */
static inline int
rpcr_xdr_enc_string(struct rpcr_xdr_enc *e, const char *s, uint32_t len)
{
	return rpcr_xdr_enc_opaque(e, s, len);
}

/**
 * RDMA_MSGP padding parameters (2005 draft §3.5): opaque data of at least @c thresh bytes is
 * preceded, after its count, by enough zero bytes that its first byte lands at a multiple of
 * @c align, counted from the start of the RDMA Send that carries the message.
 */
struct rpcr_xdr_msgp {
	uint32_t align;  /**< Alignment in bytes; 0 or 1 means no padding. */
	uint32_t thresh; /**< Opaque length at or above which padding is applied. */
	uint32_t bias;   /**< Offset of the cursor's position 0 within the RDMA Send. */
};

/**
 * Padding inserted before the data of an opaque item of @p len bytes whose data would otherwise
 * start at cursor position @p pos.
 */
static inline uint32_t
rpcr_xdr_msgp_pad(const struct rpcr_xdr_msgp *m, uint64_t pos, uint32_t len)
{
	uint64_t mis;

	if (m == NULL || m->align <= 1 || len < m->thresh)
		return 0;
	mis = (pos + m->bias) % m->align;
	return mis == 0 ? 0 : (uint32_t)(m->align - mis);
}

/**
 * Encode opaque<> with RDMA_MSGP padding between the count and the data.
 *
 * @return 0 or -EMSGSIZE (nothing written).
 */
static inline int
rpcr_xdr_enc_opaque_msgp(struct rpcr_xdr_enc *e, const struct rpcr_xdr_msgp *m, const void *data,
			 uint32_t len)
{
	uint32_t pad = rpcr_xdr_msgp_pad(m, rpcr_xdr_enc_pos(e) + 4, len);

	if (unlikely(rpcr_xdr_opaque_size(len) + pad > rpcr_xdr_enc_left(e)))
		return -EMSGSIZE;
	rpcr_xdr_store32(e->p, len);
	memset(e->p + 4, 0, pad);
	e->p += 4 + pad;
	return rpcr_xdr_enc_fixed(e, data, len);
}

/**
 * Decode opaque<maxlen> that may carry RDMA_MSGP padding between the count and the data.
 *
 * @return as rpcr_xdr_dec_opaque().
 */
static inline int
rpcr_xdr_dec_opaque_msgp(struct rpcr_xdr_dec *d, const struct rpcr_xdr_msgp *m, uint32_t maxlen,
			 const void **data, uint32_t *len)
{
	const uint8_t *save = d->p;
	uint32_t n, pad;
	int rc;

	rc = rpcr_xdr_dec_u32(d, &n);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(n > maxlen)) {
		d->p = save;
		return -E2BIG;
	}
	pad = rpcr_xdr_msgp_pad(m, rpcr_xdr_dec_pos(d), n);
	if (unlikely(rpcr_xdr_dec_inline(d, pad) == NULL || rpcr_xdr_dec_fixed(d, n, data) != 0)) {
		d->p = save;
		return -EBADMSG;
	}
	*len = n;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* RPCR_XDR_H */
