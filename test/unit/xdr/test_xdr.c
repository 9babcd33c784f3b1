/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* The XDR cursors (RFC 4506): every primitive, bounds, padding and the RDMA_MSGP extension. */

#include <rpcr_xdr.h>

#include "rpcr_test.h"

static void
test_u32_u64(void)
{
	uint8_t buf[12];
	/* RFC 4506 §4.1/§4.5: big-endian; hyper high word first. */
	static const uint8_t want[12] = {0x01, 0x02, 0x03, 0x04, 0x80, 0x00,
					 0x00, 0x00, 0x00, 0x00, 0x00, 0x05};
	struct rpcr_xdr_enc e;
	struct rpcr_xdr_dec d;
	uint32_t u;
	uint64_t h;

	rpcr_xdr_enc_init(&e, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_enc_u32(&e, 0x01020304), 0);
	CHECK_EQ(rpcr_xdr_enc_u64(&e, 0x8000000000000005ull), 0);
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 12);
	CHECK_MEM(buf, want, 12);
	/* Full: nothing more fits, nothing is written. */
	CHECK_EQ(rpcr_xdr_enc_u32(&e, 7), -EMSGSIZE);
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 12);

	rpcr_xdr_dec_init(&d, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_dec_u32(&d, &u), 0);
	CHECK_EQ(u, 0x01020304);
	CHECK_EQ(rpcr_xdr_dec_u64(&d, &h), 0);
	CHECK(h == 0x8000000000000005ull);
	CHECK_EQ(rpcr_xdr_dec_u32(&d, &u), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_left(&d), 0);

	/* A hyper needs 8 bytes: with 4 left it fails and consumes nothing. */
	rpcr_xdr_dec_init(&d, buf, 4);
	CHECK_EQ(rpcr_xdr_dec_u64(&d, &h), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_pos(&d), 0);
	rpcr_xdr_enc_init(&e, buf, 7);
	CHECK_EQ(rpcr_xdr_enc_u64(&e, 1), -EMSGSIZE);
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 0);
}

static void
test_signed_enum_bool(void)
{
	uint8_t buf[16];
	struct rpcr_xdr_enc e;
	struct rpcr_xdr_dec d;
	int32_t i;
	int64_t h;
	bool b;

	rpcr_xdr_enc_init(&e, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_enc_i32(&e, -2), 0);
	CHECK_EQ(rpcr_xdr_enc_enum(&e, 5), 0);
	CHECK_EQ(rpcr_xdr_enc_i64(&e, -3), 0);
	CHECK_EQ(buf[0], 0xff);
	CHECK_EQ(buf[3], 0xfe);
	rpcr_xdr_dec_init(&d, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_dec_i32(&d, &i), 0);
	CHECK_EQ(i, -2);
	CHECK_EQ(rpcr_xdr_dec_enum(&d, &i), 0);
	CHECK_EQ(i, 5);
	CHECK_EQ(rpcr_xdr_dec_i64(&d, &h), 0);
	CHECK_EQ(h, -3);

	/* RFC 4506 §4.4: a bool is 0 or 1; anything else is malformed and not consumed. */
	rpcr_xdr_enc_init(&e, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_enc_bool(&e, true), 0);
	CHECK_EQ(rpcr_xdr_enc_bool(&e, false), 0);
	CHECK_EQ(rpcr_xdr_enc_u32(&e, 2), 0);
	rpcr_xdr_dec_init(&d, buf, 12);
	CHECK_EQ(rpcr_xdr_dec_bool(&d, &b), 0);
	CHECK(b);
	CHECK_EQ(rpcr_xdr_dec_bool(&d, &b), 0);
	CHECK(!b);
	CHECK_EQ(rpcr_xdr_dec_bool(&d, &b), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_pos(&d), 8);
}

static void
test_opaque(void)
{
	static const uint8_t data[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	uint8_t buf[32];
	uint32_t n;

	for (n = 0; n <= 9; n++) {
		struct rpcr_xdr_enc e;
		struct rpcr_xdr_dec d;
		const void *p = NULL;
		uint32_t len = 0, i;

		memset(buf, 0xee, sizeof(buf));
		rpcr_xdr_enc_init(&e, buf, sizeof(buf));
		CHECK_EQ(rpcr_xdr_enc_opaque(&e, data, n), 0);
		/* Count, data, zero padding to a multiple of 4 (§4.10). */
		CHECK_EQ(rpcr_xdr_enc_pos(&e), rpcr_xdr_opaque_size(n));
		CHECK_EQ(rpcr_xdr_opaque_size(n), 4 + ((n + 3) / 4) * 4);
		CHECK_EQ(buf[3], n);
		CHECK_MEM(buf + 4, data, n);
		for (i = n; i < rpcr_xdr_roundup(n); i++)
			CHECK_EQ(buf[4 + i], 0);
		CHECK_EQ(buf[rpcr_xdr_opaque_size(n)], 0xee);

		rpcr_xdr_dec_init(&d, buf, rpcr_xdr_opaque_size(n));
		CHECK_EQ(rpcr_xdr_dec_opaque(&d, 9, &p, &len), 0);
		CHECK_EQ(len, n);
		CHECK(p == buf + 4); /* zero copy */
		CHECK_EQ(rpcr_xdr_dec_left(&d), 0);

		/* Over the caller's maximum: -E2BIG, cursor unchanged. */
		if (n > 0) {
			rpcr_xdr_dec_init(&d, buf, sizeof(buf));
			CHECK_EQ(rpcr_xdr_dec_opaque(&d, n - 1, &p, &len), -E2BIG);
			CHECK_EQ(rpcr_xdr_dec_pos(&d), 0);
		}
		/* Missing padding: the item is incomplete. */
		if (n % 4 != 0) {
			rpcr_xdr_dec_init(&d, buf, 4 + n);
			CHECK_EQ(rpcr_xdr_dec_opaque(&d, 9, &p, &len), -EBADMSG);
			CHECK_EQ(rpcr_xdr_dec_pos(&d), 0);
		}
		/* Too small a buffer for the encoder: nothing written. */
		memset(buf, 0xee, sizeof(buf));
		rpcr_xdr_enc_init(&e, buf, rpcr_xdr_opaque_size(n) - 1);
		CHECK_EQ(rpcr_xdr_enc_opaque(&e, data, n), -EMSGSIZE);
		CHECK_EQ(buf[0], 0xee);
	}
}

static void
test_hostile_counts(void)
{
	/* Counts near 2^32 must not wrap any bounds arithmetic. */
	static const uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	static const uint8_t almost[8] = {0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 0};
	struct rpcr_xdr_dec d;
	const void *p;
	const char *s;
	uint32_t len;

	rpcr_xdr_dec_init(&d, huge, sizeof(huge));
	CHECK_EQ(rpcr_xdr_dec_opaque(&d, UINT32_MAX, &p, &len), -EBADMSG);
	rpcr_xdr_dec_init(&d, almost, sizeof(almost));
	CHECK_EQ(rpcr_xdr_dec_string(&d, UINT32_MAX, &s, &len), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_skip(&d, UINT32_MAX), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_skip(&d, UINT64_MAX - 2), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_fixed(&d, UINT32_MAX, &p), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_pos(&d), 0);
	CHECK(rpcr_xdr_roundup(UINT32_MAX) == 0x100000000ull);
	CHECK(rpcr_xdr_dec_inline(&d, SIZE_MAX) == NULL);
}

static void
test_fixed_string(void)
{
	uint8_t buf[16];
	struct rpcr_xdr_enc e;
	struct rpcr_xdr_dec d;
	const void *p = NULL;
	const char *s = NULL;
	uint32_t len = 0;

	rpcr_xdr_enc_init(&e, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_enc_fixed(&e, "abcde", 5), 0); /* opaque[5]: no count, 3 pad */
	CHECK_EQ(rpcr_xdr_enc_string(&e, "xy", 2), 0);
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 8 + 8);
	rpcr_xdr_dec_init(&d, buf, rpcr_xdr_enc_pos(&e));
	CHECK_EQ(rpcr_xdr_dec_fixed(&d, 5, &p), 0);
	CHECK_MEM(p, "abcde", 5);
	CHECK_EQ(rpcr_xdr_dec_string(&d, 255, &s, &len), 0);
	CHECK_EQ(len, 2);
	CHECK_MEM(s, "xy", 2);
	/* Skip = roundup. */
	rpcr_xdr_dec_init(&d, buf, 16);
	CHECK_EQ(rpcr_xdr_dec_skip(&d, 5), 0);
	CHECK_EQ(rpcr_xdr_dec_pos(&d), 8);
	/* Reserve. */
	rpcr_xdr_enc_init(&e, buf, 6);
	CHECK(rpcr_xdr_enc_reserve(&e, 4) == buf);
	CHECK(rpcr_xdr_enc_reserve(&e, 4) == NULL);
	CHECK_EQ(rpcr_xdr_enc_left(&e), 2);
}

static void
test_unaligned(void)
{
	/* Cursors over odd addresses work (memcpy loads; UBSan would flag casts). */
	uint8_t raw[20] = {0};
	struct rpcr_xdr_enc e;
	struct rpcr_xdr_dec d;
	uint64_t h;
	uint32_t u;

	rpcr_xdr_enc_init(&e, raw + 1, 12);
	CHECK_EQ(rpcr_xdr_enc_u32(&e, 0xdeadbeef), 0);
	CHECK_EQ(rpcr_xdr_enc_u64(&e, 0x0123456789abcdefull), 0);
	rpcr_xdr_dec_init(&d, raw + 1, 12);
	CHECK_EQ(rpcr_xdr_dec_u32(&d, &u), 0);
	CHECK_EQ(u, 0xdeadbeef);
	CHECK_EQ(rpcr_xdr_dec_u64(&d, &h), 0);
	CHECK(h == 0x0123456789abcdefull);
}

/*
 * RDMA_MSGP padding (2005 draft §3.5): opaque data of at least rdma_thresh bytes starts at a
 * multiple of rdma_align counted from the start of the Send.
 */
static void
test_msgp(void)
{
	static uint8_t data[100];
	struct rpcr_xdr_msgp m = {.align = 64, .thresh = 32, .bias = 28};
	uint8_t buf[256];
	struct rpcr_xdr_enc e;
	struct rpcr_xdr_dec d;
	const void *p = NULL;
	uint32_t len = 0, pad, i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	/* Cursor at 0 = Send offset 28; the count takes 28..31, data would start at 32: pad 32. */
	CHECK_EQ(rpcr_xdr_msgp_pad(&m, 4, 100), 32);
	CHECK_EQ(rpcr_xdr_msgp_pad(&m, 4, 31), 0);  /* under the threshold */
	CHECK_EQ(rpcr_xdr_msgp_pad(&m, 36, 32), 0); /* already aligned: 36 + 28 = 64 */
	CHECK_EQ(rpcr_xdr_msgp_pad(NULL, 4, 100), 0);

	rpcr_xdr_enc_init(&e, buf, sizeof(buf));
	CHECK_EQ(rpcr_xdr_enc_opaque_msgp(&e, &m, data, 100), 0);
	pad = 32;
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 4 + pad + 100);
	CHECK_EQ((4 + pad + m.bias) % m.align, 0);
	for (i = 0; i < pad; i++)
		CHECK_EQ(buf[4 + i], 0);
	CHECK_MEM(buf + 4 + pad, data, 100);

	rpcr_xdr_dec_init(&d, buf, rpcr_xdr_enc_pos(&e));
	CHECK_EQ(rpcr_xdr_dec_opaque_msgp(&d, &m, 1000, &p, &len), 0);
	CHECK_EQ(len, 100);
	CHECK(p == buf + 4 + pad);
	CHECK_EQ(rpcr_xdr_dec_left(&d), 0);

	/* Truncated inside the padding: malformed, cursor unchanged. */
	rpcr_xdr_dec_init(&d, buf, 20);
	CHECK_EQ(rpcr_xdr_dec_opaque_msgp(&d, &m, 1000, &p, &len), -EBADMSG);
	CHECK_EQ(rpcr_xdr_dec_pos(&d), 0);
	/* The encoder refuses rather than overrun. */
	rpcr_xdr_enc_init(&e, buf, 4 + pad + 99);
	CHECK_EQ(rpcr_xdr_enc_opaque_msgp(&e, &m, data, 100), -EMSGSIZE);
	CHECK_EQ(rpcr_xdr_enc_pos(&e), 0);
}

static const struct rpcr_test_case cases[] = {
	{"u32_u64", test_u32_u64},
	{"signed_enum_bool", test_signed_enum_bool},
	{"opaque", test_opaque},
	{"hostile_counts", test_hostile_counts},
	{"fixed_string", test_fixed_string},
	{"unaligned", test_unaligned},
	{"msgp", test_msgp},
};

RPCR_TEST_MAIN(cases)
