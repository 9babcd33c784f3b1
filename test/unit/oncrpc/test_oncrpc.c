/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* ONC RPC v2 headers (RFC 5531): golden fields of each call and reply arm, AUTH_SYS limits. */

#include <rpcr_oncrpc.h>

#include "golden.h"
#include "rpcr_test.h"

static const struct rpcr_golden *
gold(const char *name)
{
	const struct rpcr_golden *g = rpcr_golden_find(name);

	CHECK(g != NULL);
	return g;
}

static void
test_calls(void)
{
	const struct rpcr_golden *g = gold("call_null_none");
	struct rpcr_oncrpc_call c;
	struct rpcr_oncrpc_authsys s;
	uint32_t xid, mt;

	CHECK_EQ(rpcr_oncrpc_peek(g->bytes, g->len, &xid, &mt), 0);
	CHECK_EQ(xid, 0x0a0b0c0d);
	CHECK_EQ(mt, RPCR_ONCRPC_CALL);
	CHECK_EQ(rpcr_oncrpc_peek(g->bytes, 7, &xid, &mt), -EBADMSG);

	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), 40);
	CHECK_EQ(c.rpcvers, 2);
	CHECK_EQ(c.prog, 100003);
	CHECK_EQ(c.vers, 3);
	CHECK_EQ(c.proc, 0);
	CHECK_EQ(c.cred.flavor, RPCR_ONCRPC_AUTH_NONE);
	CHECK_EQ(c.cred.len, 0);
	CHECK_EQ(c.verf.flavor, RPCR_ONCRPC_AUTH_NONE);

	g = gold("call_authsys");
	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), 80);
	CHECK_EQ(c.prog, 0x2f5a0001);
	CHECK_EQ(c.cred.flavor, RPCR_ONCRPC_AUTH_SYS);
	CHECK_EQ(c.cred.len, 40);
	CHECK(c.cred.body == g->bytes + 32); /* zero copy */
	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, c.cred.body, c.cred.len), 0);
	CHECK_EQ(s.stamp, 0x12345678);
	CHECK_EQ(s.machine_len, 9);
	CHECK_MEM(s.machine, "rpcr-host", 9);
	CHECK_EQ(s.uid, 1000);
	CHECK_EQ(s.gid, 100);
	CHECK_EQ(s.ngids, 2);
	CHECK_EQ(s.gids[0], 10);
	CHECK_EQ(s.gids[1], 20);

	/* Other flavors pass through as opaque. */
	g = gold("call_gss");
	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), 52);
	CHECK_EQ(c.cred.flavor, RPCR_ONCRPC_RPCSEC_GSS);
	CHECK_EQ(c.cred.len, 8);
	CHECK_EQ(c.verf.flavor, RPCR_ONCRPC_RPCSEC_GSS);
	CHECK_EQ(c.verf.len, 4);
}

static void
test_call_errors(void)
{
	const struct rpcr_golden *g = gold("call_bad_rpcvers");
	struct rpcr_oncrpc_call c;

	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), -EPROTONOSUPPORT);
	CHECK_EQ(c.xid, 0x44);
	CHECK_EQ(c.rpcvers, 3);
	g = gold("call_cred_too_big");
	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), -EACCES);
	CHECK_EQ(c.auth_stat, RPCR_ONCRPC_AUTH_BADCRED);
	g = gold("call_not_call");
	CHECK_EQ(rpcr_oncrpc_call_decode(&c, g->bytes, g->len), -EBADMSG);

	/* A verifier over 400 bytes is AUTH_BADVERF. */
	{
		uint8_t buf[24 + 8 + 8 + 404] = {0};
		struct rpcr_oncrpc_call big = {.xid = 1, .rpcvers = 2};
		ssize_t n = rpcr_oncrpc_call_encode(&big, buf, sizeof(buf));

		CHECK_EQ(n, 40);
		rpcr_xdr_store32(buf + 36, 404); /* verf body length: 404 > 400 */
		CHECK_EQ(rpcr_oncrpc_call_decode(&c, buf, sizeof(buf)), -EACCES);
		CHECK_EQ(c.auth_stat, RPCR_ONCRPC_AUTH_BADVERF);
	}

	/* The encoder refuses bodies over 400 bytes. */
	{
		static const uint8_t body[401];
		struct rpcr_oncrpc_call big = {.rpcvers = 2, .cred = {1, 401, body}};
		uint8_t buf[1024];

		CHECK_EQ(rpcr_oncrpc_call_encode(&big, buf, sizeof(buf)), -EINVAL);
		big.cred.len = 400;
		CHECK_EQ(rpcr_oncrpc_call_encode(&big, buf, sizeof(buf)), 24 + 8 + 400 + 8);
	}
}

struct reply_case {
	const char *name;
	uint32_t stat, accept, reject, auth, low, high;
	ssize_t len;
};

static void
test_replies(void)
{
	static const struct reply_case cases[] = {
		{"reply_success", 0, RPCR_ONCRPC_SUCCESS, 0, 0, 0, 0, 24},
		{"reply_prog_unavail", 0, RPCR_ONCRPC_PROG_UNAVAIL, 0, 0, 0, 0, 24},
		{"reply_prog_mismatch", 0, RPCR_ONCRPC_PROG_MISMATCH, 0, 0, 2, 4, 32},
		{"reply_proc_unavail", 0, RPCR_ONCRPC_PROC_UNAVAIL, 0, 0, 0, 0, 24},
		{"reply_garbage_args", 0, RPCR_ONCRPC_GARBAGE_ARGS, 0, 0, 0, 0, 24},
		{"reply_system_err", 0, RPCR_ONCRPC_SYSTEM_ERR, 0, 0, 0, 0, 24},
		{"reply_rpc_mismatch", 1, 0, RPCR_ONCRPC_RPC_MISMATCH, 0, 2, 2, 24},
		{"reply_auth_error", 1, 0, RPCR_ONCRPC_AUTH_ERROR, RPCR_ONCRPC_AUTH_BADCRED, 0, 0,
		 20},
	};
	struct rpcr_oncrpc_reply r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct reply_case *c = &cases[i];
		const struct rpcr_golden *g = gold(c->name);

		CHECK_EQ(rpcr_oncrpc_reply_decode(&r, g->bytes, g->len), c->len);
		CHECK_EQ(r.stat, c->stat);
		if (c->stat == RPCR_ONCRPC_MSG_ACCEPTED) {
			CHECK_EQ(r.accept_stat, c->accept);
			CHECK_EQ(r.verf.flavor, RPCR_ONCRPC_AUTH_NONE);
		} else {
			CHECK_EQ(r.reject_stat, c->reject);
		}
		if (c->low != 0) {
			CHECK_EQ(r.mismatch_low, c->low);
			CHECK_EQ(r.mismatch_high, c->high);
		}
		if (c->reject == RPCR_ONCRPC_AUTH_ERROR)
			CHECK_EQ(r.auth_stat, c->auth);
	}
	CHECK_EQ(rpcr_oncrpc_reply_decode(&r, gold("reply_verf")->bytes, 28), 28);
	CHECK_EQ(r.verf.flavor, RPCR_ONCRPC_AUTH_SHORT);
	CHECK_EQ(r.verf.len, 4);
	CHECK_EQ(rpcr_oncrpc_reply_decode(&r, gold("reply_bad_stat")->bytes, 24), -EBADMSG);
	CHECK_EQ(rpcr_oncrpc_reply_decode(&r, gold("reply_bad_reject")->bytes, 20), -EBADMSG);
	/* A call is not a reply. */
	CHECK_EQ(rpcr_oncrpc_reply_decode(&r, gold("call_null_none")->bytes, 40), -EBADMSG);

	r.stat = 7;
	CHECK_EQ(rpcr_oncrpc_reply_size(&r), 0);
	CHECK_EQ(rpcr_oncrpc_reply_encode(&r, (uint8_t[64]){0}, 64), -EINVAL);
}

static void
test_authsys_limits(void)
{
	static char name[256];
	struct rpcr_oncrpc_authsys s = {.machine = name};
	uint8_t buf[512];
	uint32_t i;

	memset(name, 'm', sizeof(name));
	/* The largest legal body: 255-byte name, 16 groups = 4 + 260 + 12 + 64 = 340 bytes. */
	s.machine_len = 255;
	s.ngids = 16;
	for (i = 0; i < 16; i++)
		s.gids[i] = i;
	CHECK_EQ(rpcr_oncrpc_authsys_size(&s), 340);
	CHECK_EQ(rpcr_oncrpc_authsys_encode(&s, buf, sizeof(buf)), 340);
	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, buf, 340), 0);
	CHECK_EQ(s.machine_len, 255);
	CHECK_EQ(s.ngids, 16);
	CHECK_EQ(s.gids[15], 15);

	s.machine_len = 256;
	CHECK_EQ(rpcr_oncrpc_authsys_encode(&s, buf, sizeof(buf)), -EINVAL);
	s.machine_len = 255;
	s.ngids = 17;
	CHECK_EQ(rpcr_oncrpc_authsys_encode(&s, buf, sizeof(buf)), -EINVAL);

	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, gold("authsys_17_gids")->bytes, 88), -E2BIG);
	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, gold("authsys_long_machine")->bytes, 16), -E2BIG);
	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, gold("authsys_trailing")->bytes, 24), -EBADMSG);
	/* A body over 400 bytes is refused before it is parsed. */
	CHECK_EQ(rpcr_oncrpc_authsys_decode(&s, buf, 404), -E2BIG);
}

static const struct rpcr_test_case cases[] = {
	{"calls", test_calls},
	{"call_errors", test_call_errors},
	{"replies", test_replies},
	{"authsys_limits", test_authsys_limits},
};

RPCR_TEST_MAIN(cases)
