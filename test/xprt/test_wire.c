/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The engine's wire operations (lib/xprt/wire.h), version 1's and version 2's tables, held to
 * lib/proto's codec, which has its own golden, round-trip and fuzz tests:
 *   - every golden message of the version decodes through the table to what the codec decodes
 *     (xid, version, credit word, type, flags, handle to invalidate, chunk lists, error and its
 *     arm, properties, optional operation), and the table encodes that back into the codec's
 *     bytes;
 *   - every golden message the codec refuses is refused with the same error, and answered with
 *     the error the specifications give (doc/proto.md's table: version 1 ERR_VERS or ERR_CHUNK,
 *     version 2 one code each, none for a message too short to trust);
 *   - random headers of every type round-trip through the table byte for byte;
 *   - errors the engine sends: every XPRT_HERR_* in each version's format (version 2: a
 *     response, its code and arm; version 1: ERR_VERS with the range, ERR_CHUNK for the rest,
 *     the failing message's version);
 *   - types a version does not have (version 1: properties, options; version 2: MSGP, DONE)
 *     cannot be encoded.
 */

#include <string.h>

#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>

#include "codec_any.h"
#include "golden.h"
#include "rpcr_test.h"
#include "wire.h"

/* A header bound to storage, as the poller's receive header is. */
struct bound {
	struct xprt_hdr h;
	struct rpcr_proto_rseg reads[ANY_READS];
	struct rpcr_proto_wchunk writes[ANY_WRITES];
	struct rpcr_proto_seg segs[ANY_SEGS];
	struct rpcr_proto_v2_prop props[ANY_PROPS];
};

static void
bind(struct bound *b)
{
	memset(&b->h, 0, sizeof(b->h));
	rpcr_proto_chunks_init(&b->h.chunks, b->reads, ANY_READS, b->writes, ANY_WRITES, b->segs,
			       ANY_SEGS);
	b->h.props.props = b->props;
	b->h.props.cap = ANY_PROPS;
}

static const struct xprt_wire *
table(enum rpcr_golden_family f)
{
	return f == RPCR_GOLDEN_V1 ? &xprt_wire_v1 : &xprt_wire_v2;
}

/* The codec's error reply for decoder error @rc, as enum xprt_herr. */
static uint32_t
expected_answer(enum rpcr_golden_family f, long rc)
{
	if (f == RPCR_GOLDEN_V1) {
		uint32_t e = rpcr_proto_v1_errcode((int)rc);

		return e == RPCR_PROTO_V1_ERR_VERS    ? XPRT_HERR_VERS
		       : e == RPCR_PROTO_V1_ERR_CHUNK ? XPRT_HERR_CHUNK
						      : XPRT_HERR_NONE;
	}
	switch (rpcr_proto_v2_errcode((int)rc)) {
	case 0:
		return XPRT_HERR_NONE;
	case RPCR_PROTO_V2_ERR_VERS:
		return XPRT_HERR_VERS;
	case RPCR_PROTO_V2_ERR_BAD_XDR:
		return XPRT_HERR_CHUNK;
	case RPCR_PROTO_V2_ERR_INVAL_HTYPE:
		return XPRT_HERR_HTYPE;
	case RPCR_PROTO_V2_ERR_INVAL_CONT:
		return XPRT_HERR_CONT;
	case RPCR_PROTO_V2_ERR_BAD_PROPVAL:
		return XPRT_HERR_PROPVAL;
	case RPCR_PROTO_V2_ERR_READ_CHUNKS:
		return XPRT_HERR_READS;
	case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
		return XPRT_HERR_WRITES;
	case RPCR_PROTO_V2_ERR_SEGMENTS:
		return XPRT_HERR_SEGMENTS;
	default:
		return XPRT_HERR_SYSTEM;
	}
}

/* @h (decoded by the table) says what the codec's @m says. */
static void
check_same(const struct xprt_hdr *h, const struct rpcr_any *m)
{
	if (m->family == RPCR_GOLDEN_V1) {
		const struct rpcr_proto_v1_hdr *v = &m->u.v1;
		static const uint32_t type[] = {
			[RPCR_PROTO_V1_MSG] = XPRT_HT_MSG,
			[RPCR_PROTO_V1_NOMSG] = XPRT_HT_NOMSG,
			[RPCR_PROTO_V1_MSGP] = XPRT_HT_MSGP,
			[RPCR_PROTO_V1_DONE] = XPRT_HT_DONE,
			[RPCR_PROTO_V1_ERROR] = XPRT_HT_ERROR,
		};

		CHECK_EQ(h->xid, v->xid);
		CHECK_EQ(h->vers, v->vers);
		CHECK_EQ(h->credit, v->credit);
		CHECK(v->proc < RTE_DIM(type) && h->type == type[v->proc]);
		CHECK_EQ(h->flags, 0);
		if (v->proc == RPCR_PROTO_V1_MSGP) {
			CHECK_EQ(h->align, v->align);
			CHECK_EQ(h->thresh, v->thresh);
		}
		if (v->proc == RPCR_PROTO_V1_ERROR && v->err == RPCR_PROTO_V1_ERR_VERS) {
			CHECK_EQ(h->err, XPRT_HERR_VERS);
			CHECK_EQ(h->vers_low, v->vers_low);
			CHECK_EQ(h->vers_high, v->vers_high);
		}
		if (rpcr_proto_v1_has_chunks(v->proc))
			CHECK(rpcr_proto_chunks_equal(&h->chunks, &v->chunks));
		return;
	}
	{
		const struct rpcr_proto_v2_hdr *v = &m->u.v2;

		CHECK_EQ(h->xid, v->xid);
		CHECK_EQ(h->vers, RPCR_PROTO_V2_VERS);
		CHECK_EQ(h->credit, v->credit);
		CHECK_EQ(h->flags, v->flags);
		switch (v->htype) {
		case RPCR_PROTO_V2_MSG:
		case RPCR_PROTO_V2_NOMSG:
			CHECK_EQ(h->type,
				 v->htype == RPCR_PROTO_V2_MSG ? XPRT_HT_MSG : XPRT_HT_NOMSG);
			CHECK_EQ(h->inv_handle, v->inv_handle);
			CHECK(rpcr_proto_chunks_equal(&h->chunks, &v->chunks));
			break;
		case RPCR_PROTO_V2_ERROR:
			CHECK_EQ(h->type, XPRT_HT_ERROR);
			/* Defined codes (1 to 10, 100) are named; others are none. */
			CHECK_EQ(h->err != XPRT_HERR_NONE,
				 (v->err >= RPCR_PROTO_V2_ERR_VERS &&
				  v->err <= RPCR_PROTO_V2_ERR_REPLY_RESOURCE) ||
					 v->err == RPCR_PROTO_V2_ERR_SYSTEM);
			CHECK_EQ(h->vers_low, v->vers_low);
			CHECK_EQ(h->vers_high, v->vers_high);
			CHECK_EQ(h->max_chunks, v->max_chunks);
			CHECK_EQ(h->max_segments, v->max_segments);
			CHECK_EQ(h->chunk_index, v->chunk_index);
			CHECK_EQ(h->length_needed, v->length_needed);
			break;
		case RPCR_PROTO_V2_CONNPROP:
			CHECK_EQ(h->type, XPRT_HT_PROPS);
			CHECK_EQ(h->props.n, v->props.n);
			break;
		default:
			CHECK_EQ(h->type, XPRT_HT_OPTION);
			CHECK_EQ(h->opttype, v->opttype);
			CHECK_EQ(h->optinfo_len, v->optinfo_len);
			break;
		}
	}
}

/* Decode @buf through the table and the codec; the same; encoded back to the same bytes. */
static void
decode_both(enum rpcr_golden_family f, const uint8_t *buf, size_t len, long expect,
	    const char *name)
{
	static struct rpcr_any m;
	static struct bound b;
	static uint8_t out[4096];
	const struct xprt_wire *w = table(f);
	uint32_t short_ok = XPRT_SHORT_OK(XPRT_HT_ERROR) | XPRT_SHORT_OK(XPRT_HT_DONE);
	ssize_t n;
	long k;

	rpcr_any_init(&m, f);
	bind(&b);
	k = rpcr_any_decode(&m, buf, len);
	n = w->decode(&b.h, buf, (uint32_t)len, short_ok);
	if (n != k || k != expect)
		printf("  %s: table %zd, codec %ld, golden %ld\n", name, n, k, expect);
	CHECK_EQ(n, k);
	if (n < 0) {
		CHECK_EQ(w->answer(n), expected_answer(f, n));
		return;
	}
	check_same(&b.h, &m);
	/* An error code the version does not define is read as none, and not sent again. */
	if (b.h.type == XPRT_HT_ERROR && b.h.err == XPRT_HERR_NONE)
		return;
	/* The table's encoding of what it decoded: the codec's bytes of the same message. */
	CHECK_EQ(w->size(&b.h), rpcr_any_size(&m));
	k = rpcr_any_encode(&m, out, sizeof(out));
	CHECK(k > 0);
	{
		static uint8_t mine[4096];
		ssize_t e = w->encode(&b.h, mine, sizeof(mine));

		CHECK_EQ(e, k);
		if (e == k && k > 0)
			CHECK_MEM(mine, out, (size_t)k);
	}
}

static void
test_goldens(void)
{
	size_t i, seen = 0;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];

		if (g->family != RPCR_GOLDEN_V1 && g->family != RPCR_GOLDEN_V2)
			continue;
		/* (v1's short types are taken only when asked: the goldens' DONE and ERR_CHUNK.) */
		decode_both(g->family, g->bytes, g->len, g->expect, g->name);
		seen++;
	}
	printf("  %zu golden messages through both tables\n", seen);
	CHECK(seen > 40);
}

static void
test_random(void)
{
	static struct rpcr_any m;
	static uint8_t buf[8192];
	struct rpcr_test_rng r = {rpcr_test_seed()};
	unsigned long k, n = rpcr_test_iters(4000);

	for (k = 0; k < n; k++) {
		enum rpcr_golden_family f = k % 2 ? RPCR_GOLDEN_V2 : RPCR_GOLDEN_V1;
		long len;

		rpcr_any_init(&m, f);
		rpcr_any_random(&m, &r);
		len = rpcr_any_encode(&m, buf, sizeof(buf));
		CHECK(len > 0);
		if (len > 0)
			decode_both(f, buf, (size_t)len, len, "random");
	}
}

/* Every error the engine can send, in each version's format, read back by the codec. */
static void
test_errors(void)
{
	static const struct {
		uint32_t herr, v2err;
	} map[] = {
		{XPRT_HERR_VERS, RPCR_PROTO_V2_ERR_VERS},
		{XPRT_HERR_CHUNK, RPCR_PROTO_V2_ERR_BAD_XDR},
		{XPRT_HERR_HTYPE, RPCR_PROTO_V2_ERR_INVAL_HTYPE},
		{XPRT_HERR_CONT, RPCR_PROTO_V2_ERR_INVAL_CONT},
		{XPRT_HERR_PROPVAL, RPCR_PROTO_V2_ERR_BAD_PROPVAL},
		{XPRT_HERR_READS, RPCR_PROTO_V2_ERR_READ_CHUNKS},
		{XPRT_HERR_WRITES, RPCR_PROTO_V2_ERR_WRITE_CHUNKS},
		{XPRT_HERR_SEGMENTS, RPCR_PROTO_V2_ERR_SEGMENTS},
		{XPRT_HERR_WRITE_RES, RPCR_PROTO_V2_ERR_WRITE_RESOURCE},
		{XPRT_HERR_REPLY_RES, RPCR_PROTO_V2_ERR_REPLY_RESOURCE},
		{XPRT_HERR_SYSTEM, RPCR_PROTO_V2_ERR_SYSTEM},
	};
	static struct rpcr_any m;
	static struct bound b;
	uint8_t buf[256];
	struct xprt_hdr e;
	size_t i;
	ssize_t n;

	RTE_BUILD_BUG_ON(RTE_DIM(map) != XPRT_HERR_NUM - 1);
	for (i = 0; i < RTE_DIM(map); i++) {
		memset(&e, 0, sizeof(e));
		e.xid = 0x1000u + (uint32_t)i;
		e.vers = 2;
		e.credit = 0x00200010u;
		e.err = map[i].herr;
		e.max_chunks = 8;
		e.max_segments = 32;
		e.chunk_index = 2;
		e.length_needed = 65536;
		/* Version 2: a response, its own code, its arm. */
		n = xprt_wire_v2.encode_error(buf, sizeof(buf), &e);
		CHECK(n > 0);
		rpcr_any_init(&m, RPCR_GOLDEN_V2);
		CHECK_EQ(rpcr_any_decode(&m, buf, (size_t)n), n);
		CHECK_EQ(m.u.v2.xid, e.xid);
		CHECK_EQ(m.u.v2.vers, RPCR_PROTO_V2_VERS);
		CHECK_EQ(m.u.v2.credit, e.credit);
		CHECK_EQ(m.u.v2.htype, RPCR_PROTO_V2_ERROR);
		CHECK_EQ(m.u.v2.flags, RPCR_PROTO_V2_F_RESPONSE);
		CHECK_EQ(m.u.v2.err, map[i].v2err);
		if (e.err == XPRT_HERR_VERS) {
			CHECK_EQ(m.u.v2.vers_low, 2);
			CHECK_EQ(m.u.v2.vers_high, 2);
		} else if (e.err == XPRT_HERR_READS || e.err == XPRT_HERR_WRITES) {
			CHECK_EQ(m.u.v2.max_chunks, 8);
		} else if (e.err == XPRT_HERR_SEGMENTS) {
			CHECK_EQ(m.u.v2.max_segments, 32);
		} else if (e.err == XPRT_HERR_WRITE_RES) {
			CHECK_EQ(m.u.v2.chunk_index, 2);
			CHECK_EQ(m.u.v2.length_needed, 65536);
		} else if (e.err == XPRT_HERR_REPLY_RES) {
			CHECK_EQ(m.u.v2.length_needed, 65536);
		}
		/* ... and read back through the table: the same error. */
		bind(&b);
		CHECK_EQ(xprt_wire_v2.decode(&b.h, buf, (uint32_t)n, 0), n);
		CHECK_EQ(b.h.err, e.err);
		/* Version 1: ERR_VERS with its range, ERR_CHUNK for every other; the failing
		 * message's version (RFC 8166 section 4.5). */
		e.vers = 7;
		n = xprt_wire_v1.encode_error(buf, sizeof(buf), &e);
		CHECK(n > 0);
		rpcr_any_init(&m, RPCR_GOLDEN_V1);
		CHECK(rpcr_any_decode(&m, buf, (size_t)n) == RPCR_PROTO_EVERS);
		CHECK_EQ(rpcr_xdr_load32(buf + 4), 7);
		CHECK_EQ(rpcr_xdr_load32(buf + 12), RPCR_PROTO_V1_ERROR);
		CHECK_EQ(rpcr_xdr_load32(buf + 16), e.err == XPRT_HERR_VERS
							    ? RPCR_PROTO_V1_ERR_VERS
							    : RPCR_PROTO_V1_ERR_CHUNK);
		if (e.err == XPRT_HERR_VERS) {
			CHECK_EQ(n, 28);
			CHECK_EQ(rpcr_xdr_load32(buf + 20), 1);
			CHECK_EQ(rpcr_xdr_load32(buf + 24), 1);
		} else {
			CHECK_EQ(n, 20);
		}
	}
	/* A range of the caller's: a server of versions 1 and 2 answering version 3. */
	memset(&e, 0, sizeof(e));
	e.vers = 3;
	e.err = XPRT_HERR_VERS;
	e.vers_low = 1;
	e.vers_high = 2;
	n = xprt_wire_v1.encode_error(buf, sizeof(buf), &e);
	CHECK_EQ(n, 28);
	CHECK_EQ(rpcr_xdr_load32(buf + 20), 1);
	CHECK_EQ(rpcr_xdr_load32(buf + 24), 2);
	n = xprt_wire_v2.encode_error(buf, sizeof(buf), &e);
	CHECK(n > 0);
	/* (§7: the ingress message's version in rdma_vers, 3 here: not version 2's to decode.) */
	CHECK_EQ(rpcr_xdr_load32(buf + 4), 3);
	rpcr_xdr_store32(buf + 4, 2);
	rpcr_any_init(&m, RPCR_GOLDEN_V2);
	CHECK(n > 0 && rpcr_any_decode(&m, buf, (size_t)n) == n);
	CHECK(m.u.v2.vers_low == 1 && m.u.v2.vers_high == 2);
	/* No error to send. */
	e.err = XPRT_HERR_NONE;
	CHECK_EQ(xprt_wire_v2.encode_error(buf, sizeof(buf), &e), -EINVAL);
}

/* Each table encodes only its version's types. */
static void
test_types(void)
{
	static struct bound b;
	uint8_t buf[256];
	uint32_t t;

	for (t = 0; t < XPRT_HT_NUM; t++) {
		bool v1 = t <= XPRT_HT_ERROR;
		bool v2 = t != XPRT_HT_MSGP && t != XPRT_HT_DONE;

		bind(&b);
		b.h.type = t;
		b.h.err = XPRT_HERR_CHUNK;
		CHECK_EQ(xprt_wire_v1.size(&b.h) != 0, v1);
		CHECK_EQ(xprt_wire_v2.size(&b.h) != 0, v2);
		if (!v1)
			CHECK_EQ(xprt_wire_v1.encode(&b.h, buf, sizeof(buf)), -EINVAL);
		if (!v2)
			CHECK_EQ(xprt_wire_v2.encode(&b.h, buf, sizeof(buf)), -EINVAL);
	}
	CHECK_EQ(xprt_wire_v1.plain_len, 28);
	CHECK_EQ(xprt_wire_v2.plain_len, RPCR_PROTO_V2_HDR_MIN);
	/* Credit words: version 1's is the number; version 2's has two halves (§4.2.1.1), its
	 * grant never 0. */
	CHECK_EQ(xprt_wire_v1.credit_call(8, 3), 8);
	CHECK_EQ(xprt_wire_v1.credit_word(4, 64), 4);
	CHECK_EQ(xprt_wire_v1.credit_ask(32), 32);
	CHECK_EQ(xprt_wire_v1.credit_granted(32), 32);
	CHECK_EQ(xprt_wire_v2.credit_call(8, 3), 8u << 16 | 3);
	CHECK_EQ(xprt_wire_v2.credit_call(8, 0), 8u << 16 | 1);
	CHECK_EQ(xprt_wire_v2.credit_word(4, 64), 64u << 16 | 4);
	CHECK_EQ(xprt_wire_v2.credit_word(70000, 70000), 0xffffffffu);
	CHECK_EQ(xprt_wire_v2.credit_ask(8u << 16 | 3), 8);
	CHECK_EQ(xprt_wire_v2.credit_ask(5), 5);
	CHECK_EQ(xprt_wire_v2.credit_granted(64u << 16 | 4), 4);
	/* Version 1's ERR_VERS as a server of version 1 answers version 2 (version word 2). */
	{
		static const uint32_t w[7] = {
			0x11, 2, 5, RPCR_PROTO_V1_ERROR, RPCR_PROTO_V1_ERR_VERS, 1, 1};
		uint32_t i;

		for (i = 0; i < 7; i++)
			rpcr_xdr_store32(buf + 4 * i, w[i]);
		bind(&b);
		CHECK_EQ(xprt_wire_v1_err_vers(&b.h, buf, 28), 28);
		CHECK(b.h.type == XPRT_HT_ERROR && b.h.err == XPRT_HERR_VERS && b.h.xid == 0x11 &&
		      b.h.vers == 2 && b.h.vers_low == 1 && b.h.vers_high == 1);
		CHECK_EQ(xprt_wire_v1_err_vers(&b.h, buf, 27), RPCR_PROTO_EHTYPE);
		rpcr_xdr_store32(buf + 16, RPCR_PROTO_V1_ERR_CHUNK);
		CHECK_EQ(xprt_wire_v1_err_vers(&b.h, buf, 28), RPCR_PROTO_EHTYPE);
	}
}

static const struct rpcr_test_case cases[] = {
	{"goldens", test_goldens},
	{"random", test_random},
	{"errors", test_errors},
	{"types", test_types},
};

RPCR_TEST_MAIN(cases)
