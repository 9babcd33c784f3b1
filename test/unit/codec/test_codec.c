/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Every codec family against its golden messages, their truncations, and seeded random
 * round trips: decode(encode(x)) == x and encode(decode(b)) == b.
 */

#include "codec_any.h"

/* Bytes of a golden that make up the decoded message. */
static size_t
golden_msg_len(const struct rpcr_golden *g)
{
	if (g->family == RPCR_GOLDEN_CM)
		return RPCR_PROTO_CM_SIZE;
	return g->expect > 1 ? (size_t)g->expect : g->len;
}

static struct rpcr_any ma, mb;

static void
test_golden_decode(void)
{
	size_t i;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		long rc;

		rpcr_any_init(&ma, g->family);
		rc = rpcr_any_decode(&ma, g->bytes, g->len);
		if (rc != g->expect)
			fprintf(stderr, "golden %s: decode %ld (%s), expected %ld\n", g->name, rc,
				rpcr_proto_strerror((int)rc), g->expect);
		CHECK_EQ(rc, g->expect);
	}
}

static void
test_golden_reencode(void)
{
	uint8_t buf[1024];
	size_t i, n = 0;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		size_t len = golden_msg_len(g);
		long rc;

		if (!g->canonical)
			continue;
		n++;
		rpcr_any_init(&ma, g->family);
		CHECK_EQ(rpcr_any_decode(&ma, g->bytes, g->len), g->expect);
		CHECK_EQ(rpcr_any_size(&ma), len);
		memset(buf, 0xa5, sizeof(buf));
		rc = rpcr_any_encode(&ma, buf, sizeof(buf));
		CHECK_EQ(rc, (long)len);
		if (rc == (long)len) {
			if (memcmp(buf, g->bytes, len) != 0)
				fprintf(stderr, "golden %s: re-encoding differs\n", g->name);
			CHECK_MEM(buf, g->bytes, len);
		}
	}
	CHECK(n >= 50);
}

/*
 * Every strict prefix of every golden message that decodes is rejected with an error, or
 * decodes to the same message where the format allows trailing bytes to be absent (RDMA_ERROR's
 * draft arm, CM private data that is then simply not found).
 */
static void
test_golden_truncation(void)
{
	size_t i, cut, prefixes = 0;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		uint8_t *copy;

		if (g->expect < 0)
			continue;
		rpcr_any_init(&ma, g->family);
		CHECK_EQ(rpcr_any_decode(&ma, g->bytes, g->len), g->expect);
		for (cut = 0; cut < g->len; cut++) {
			long rc;

			/* A heap copy of exactly @cut bytes, so that ASan sees any overread. */
			copy = malloc(cut ? cut : 1);
			memcpy(copy, g->bytes, cut);
			rpcr_any_init(&mb, g->family);
			rc = rpcr_any_decode(&mb, copy, cut);
			prefixes++;
			if (g->family == RPCR_GOLDEN_CM) {
				CHECK(rc == 0 || (rc == 1 && rpcr_any_equal(&ma, &mb)));
			} else if (rc >= 0) {
				if (!rpcr_any_equal(&ma, &mb) || rc != g->expect)
					fprintf(stderr, "golden %s: prefix %zu decodes as %ld\n",
						g->name, cut, rc);
				CHECK(rpcr_any_equal(&ma, &mb));
				CHECK_EQ(rc, g->expect);
			}
			free(copy);
		}
	}
	CHECK(prefixes > 1000);
}

/* Property test: random message -> encode -> decode -> equal -> re-encode -> same bytes. */
static void
roundtrip(enum rpcr_golden_family f)
{
	static uint8_t buf[4096], buf2[4096];
	struct rpcr_test_rng r = {rpcr_test_seed() ^ (uint64_t)f * 0x1000193u};
	unsigned long i, n = rpcr_test_iters(100000);
	unsigned long bad = 0;

	for (i = 0; i < n && bad < 5; i++) {
		long len, len2, dec;

		rpcr_any_init(&ma, f);
		rpcr_any_random(&ma, &r);
		len = rpcr_any_encode(&ma, buf, sizeof(buf));
		if (len < 0 || (size_t)len != rpcr_any_size(&ma)) {
			fprintf(stderr, "%s #%lu: encode %ld, size %zu\n",
				rpcr_golden_family_name(f), i, len, rpcr_any_size(&ma));
			bad++;
			continue;
		}
		rpcr_any_init(&mb, f);
		dec = rpcr_any_decode(&mb, buf, (size_t)len);
		if ((f == RPCR_GOLDEN_CM && dec != 1) ||
		    (f != RPCR_GOLDEN_CM && dec != (dec > 0 ? len : 0)) ||
		    !rpcr_any_equal(&ma, &mb)) {
			fprintf(stderr, "%s #%lu: decode %ld (%s) of %ld bytes, equal %d\n",
				rpcr_golden_family_name(f), i, dec, rpcr_proto_strerror((int)dec),
				len, rpcr_any_equal(&ma, &mb));
			bad++;
			continue;
		}
		len2 = rpcr_any_encode(&mb, buf2, sizeof(buf2));
		if (len2 != len || memcmp(buf, buf2, (size_t)len) != 0) {
			fprintf(stderr, "%s #%lu: re-encoding differs\n",
				rpcr_golden_family_name(f), i);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(i, n);
}

static void
test_roundtrip_v1(void)
{
	roundtrip(RPCR_GOLDEN_V1);
}

static void
test_roundtrip_v2(void)
{
	roundtrip(RPCR_GOLDEN_V2);
}

static void
test_roundtrip_xchar(void)
{
	roundtrip(RPCR_GOLDEN_XCHAR);
}

static void
test_roundtrip_cm(void)
{
	roundtrip(RPCR_GOLDEN_CM);
}

static void
test_roundtrip_call(void)
{
	roundtrip(RPCR_GOLDEN_CALL);
}

static void
test_roundtrip_reply(void)
{
	roundtrip(RPCR_GOLDEN_REPLY);
}

static void
test_roundtrip_authsys(void)
{
	roundtrip(RPCR_GOLDEN_AUTHSYS);
}

static void
test_roundtrip_conf(void)
{
	roundtrip(RPCR_GOLDEN_CONF_REQ);
	roundtrip(RPCR_GOLDEN_CONF_REPLY);
}

/* Every buffer shorter than the exact size is refused with -EMSGSIZE and left untouched. */
static void
test_encode_short(void)
{
	static uint8_t buf[4096];
	struct rpcr_test_rng r = {rpcr_test_seed() + 77};
	unsigned long fails = 0;
	int f, i;

	for (f = 0; f < RPCR_GOLDEN_NUM_FAMILIES; f++) {
		for (i = 0; i < 300; i++) {
			size_t size, cut, k;

			rpcr_any_init(&ma, (enum rpcr_golden_family)f);
			rpcr_any_random(&ma, &r);
			size = rpcr_any_size(&ma);
			for (cut = 0; cut < size; cut++) {
				long rc;

				memset(buf, 0x5a, size);
				rc = rpcr_any_encode(&ma, buf, cut);
				for (k = 0; k < size && buf[k] == 0x5a; k++)
					;
				if (rc != -EMSGSIZE || k != size) {
					if (fails++ < 5)
						fprintf(stderr,
							"%s: encode into %zu of %zu bytes: %ld, "
							"wrote byte %zu\n",
							rpcr_golden_family_name(
								(enum rpcr_golden_family)f),
							cut, size, rc, k);
				}
			}
		}
	}
	CHECK_EQ(fails, 0);
}

static const struct rpcr_test_case cases[] = {
	{"golden_decode", test_golden_decode},
	{"golden_reencode", test_golden_reencode},
	{"golden_truncation", test_golden_truncation},
	{"roundtrip_v1", test_roundtrip_v1},
	{"roundtrip_v2", test_roundtrip_v2},
	{"roundtrip_xchar", test_roundtrip_xchar},
	{"roundtrip_cm", test_roundtrip_cm},
	{"roundtrip_call", test_roundtrip_call},
	{"roundtrip_reply", test_roundtrip_reply},
	{"roundtrip_authsys", test_roundtrip_authsys},
	{"roundtrip_conf", test_roundtrip_conf},
	{"encode_short", test_encode_short},
};

RPCR_TEST_MAIN(cases)
