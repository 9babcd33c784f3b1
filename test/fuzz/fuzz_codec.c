/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * libFuzzer target for one codec family (FUZZ_FAMILY, an enum rpcr_golden_family). For any input:
 * the decoder must not crash, hang or read outside the input (ASan), must return only errors its
 * contract lists, and whatever it accepts must re-encode to exactly as many bytes as it consumed
 * and decode again to the same message.
 */

#include <stdlib.h>

#include <rpcr_proto_cm.h>

#include "codec_any.h"

#ifndef FUZZ_FAMILY
#error "FUZZ_FAMILY must name the codec family"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
error_allowed(long rc)
{
	switch (FUZZ_FAMILY) {
	case RPCR_GOLDEN_V1:
		return rc == RPCR_PROTO_ESHORT || rc == RPCR_PROTO_EVERS ||
		       rc == RPCR_PROTO_EHTYPE || rc == RPCR_PROTO_EBADXDR ||
		       rc == RPCR_PROTO_EREADS || rc == RPCR_PROTO_EWRITES ||
		       rc == RPCR_PROTO_ESEGS;
	case RPCR_GOLDEN_V2:
	case RPCR_GOLDEN_XCHAR:
		return rc == RPCR_PROTO_ESHORT || rc == RPCR_PROTO_EVERS ||
		       rc == RPCR_PROTO_EHTYPE || rc == RPCR_PROTO_EBADXDR ||
		       rc == RPCR_PROTO_ECONT || rc == RPCR_PROTO_EPROPVAL ||
		       rc == RPCR_PROTO_EREADS || rc == RPCR_PROTO_EWRITES ||
		       rc == RPCR_PROTO_ESEGS || rc == RPCR_PROTO_EOVERFLOW;
	case RPCR_GOLDEN_CALL:
		return rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -EACCES;
	case RPCR_GOLDEN_REPLY:
		return rc == -EBADMSG || rc == -EACCES;
	case RPCR_GOLDEN_AUTHSYS:
		return rc == -EBADMSG || rc == -E2BIG;
	case RPCR_GOLDEN_CM:
		return false;
	default:
		return rc == RPCR_PROTO_EBADXDR;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcr_any a, b;
	static uint8_t out[1 << 20];
	long rc, rc2, n;
	size_t want;

	if (FUZZ_FAMILY == RPCR_GOLDEN_CM) {
		/* rpcr's extension block, found anywhere in the private data, round-trips. */
		struct rpcr_proto_cm_ext x, y;
		uint8_t xb[RPCR_PROTO_CM_EXT_SIZE];

		if (rpcr_proto_cm_ext_decode(&x, data, size) != 0)
			abort();
		if (x.present) {
			if (rpcr_proto_cm_ext_encode(&x, xb, sizeof(xb)) !=
				    RPCR_PROTO_CM_EXT_SIZE ||
			    rpcr_proto_cm_ext_decode(&y, xb, sizeof(xb)) != 0 || !y.present ||
			    y.features != x.features)
				abort();
		}
	}
	rpcr_any_init(&a, FUZZ_FAMILY);
	rc = rpcr_any_decode(&a, data, size);
	if (rc < 0) {
		if (!error_allowed(rc)) {
			fprintf(stderr, "undocumented error %ld\n", rc);
			abort();
		}
		return 0;
	}
	if (FUZZ_FAMILY == RPCR_GOLDEN_CM && rc == 0)
		return 0; /* not found: nothing to re-encode */

	/* Accepted: re-encode. Pads may differ from the input, lengths may not. */
	want = FUZZ_FAMILY == RPCR_GOLDEN_CM ? RPCR_PROTO_CM_SIZE : rc > 0 ? (size_t)rc : size;
	if (size > sizeof(out) / 2)
		return 0;
	n = rpcr_any_encode(&a, out, sizeof(out));
	if (n < 0 || (size_t)n != want || rpcr_any_size(&a) != want) {
		fprintf(stderr, "re-encode: %ld bytes, size %zu, consumed %zu\n", n,
			rpcr_any_size(&a), want);
		abort();
	}
	rpcr_any_init(&b, FUZZ_FAMILY);
	rc2 = rpcr_any_decode(&b, out, (size_t)n);
	if (rc2 != (FUZZ_FAMILY == RPCR_GOLDEN_CM ? 1 : rc) || !rpcr_any_equal(&a, &b)) {
		fprintf(stderr, "decode(encode(decode(x))) != decode(x): %ld vs %ld\n", rc2, rc);
		abort();
	}
	return 0;
}
