/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* RDMA-CM private data (RFC 8797) and transport characteristics (xcharext). */

#include <rpcr_proto_cm.h>
#include <rpcr_proto_xchar.h>

#include "golden.h"
#include "rpcr_test.h"

static void
cm_golden(const char *name, bool present, bool r, uint32_t send, uint32_t recv)
{
	const struct rpcr_golden *g = rpcr_golden_find(name);
	struct rpcr_proto_cm cm;

	CHECK_EQ(rpcr_proto_cm_decode(&cm, g->bytes, g->len), 0);
	if (cm.present != present || cm.remote_inv != r || cm.send_size != send ||
	    cm.recv_size != recv)
		fprintf(stderr, "%s: present %d R %d send %u recv %u\n", name, cm.present,
			cm.remote_inv, cm.send_size, cm.recv_size);
	CHECK_EQ(cm.present, present);
	CHECK_EQ(cm.remote_inv, r);
	CHECK_EQ(cm.send_size, send);
	CHECK_EQ(cm.recv_size, recv);
}

static void
test_cm_decode(void)
{
	cm_golden("cm_knfsd", true, false, 4096, 4096);
	cm_golden("cm_rbit", true, true, 262144, 1024);
	cm_golden("cm_offset", true, true, 8192, 16384);
	cm_golden("cm_reserved", true, false, 1024, 1024);
	/* Absent, or a version we do not know: the RFC 8797 §5.1 defaults. */
	cm_golden("cm_bad_version", false, false, 1024, 1024);
	cm_golden("cm_other", false, false, 1024, 1024);
	cm_golden("cm_second", true, false, 2048, 4096);
	CHECK_EQ(rpcr_proto_cm_decode(NULL, "", 0), -EINVAL);
}

static void
test_cm_encode(void)
{
	const struct rpcr_golden *g = rpcr_golden_find("cm_knfsd");
	struct rpcr_proto_cm cm = {.send_size = 4096, .recv_size = 4096};
	struct rpcr_proto_cm out;
	uint8_t buf[8];

	CHECK_EQ(rpcr_proto_cm_encode(&cm, buf, sizeof(buf)), 8);
	CHECK_MEM(buf, g->bytes, 8);
	CHECK_EQ(rpcr_proto_cm_encode(&cm, buf, 7), -EMSGSIZE);

	/* Sizes round down to 1 KiB and clamp to the representable range (§4.2). */
	cm = (struct rpcr_proto_cm){.remote_inv = true, .send_size = 5000, .recv_size = 100};
	CHECK_EQ(rpcr_proto_cm_encode(&cm, buf, sizeof(buf)), 8);
	CHECK_EQ(buf[5], 1);
	CHECK_EQ(buf[6], 3); /* 4096 */
	CHECK_EQ(buf[7], 0); /* 1024 */
	cm.send_size = 1u << 30;
	CHECK_EQ(rpcr_proto_cm_encode(&cm, buf, sizeof(buf)), 8);
	CHECK_EQ(buf[6], 255);
	CHECK_EQ(rpcr_proto_cm_decode(&out, buf, sizeof(buf)), 0);
	CHECK_EQ(out.send_size, 262144);
	CHECK(out.remote_inv);

	CHECK_EQ(rpcr_proto_cm_threshold(4096, 1024), 1024);
	CHECK_EQ(rpcr_proto_cm_threshold(2048, 8192), 2048);
}

/* rpcr's extension block after the RFC 8797 block: hand-written bytes. */
static void
test_cm_ext(void)
{
	static const uint8_t want[20] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03, /* RFC 8797: R, 4096/4096 */
		0x72, 0x70, 0x63, 0x72, 0x00, 0x00, 0x00, 0x01, /* "rpcr", version 1 */
		0x00, 0x00, 0x00, 0x07,                         /* MSGP | DONE | CONF */
	};
	struct rpcr_proto_cm cm = {.remote_inv = true, .send_size = 4096, .recv_size = 4096};
	struct rpcr_proto_cm_ext x = {.present = true,
				      .features = RPCR_PROTO_CM_EXT_F_MSGP |
						  RPCR_PROTO_CM_EXT_F_DONE |
						  RPCR_PROTO_CM_EXT_F_CONF};
	struct rpcr_proto_cm_ext out;
	struct rpcr_proto_cm cmo;
	uint8_t buf[24];

	CHECK_EQ(rpcr_proto_cm_encode(&cm, buf, 8), 8);
	CHECK_EQ(rpcr_proto_cm_ext_encode(&x, buf + RPCR_PROTO_CM_EXT_OFFSET, 12), 12);
	CHECK_MEM(buf, want, sizeof(want));
	CHECK_EQ(rpcr_proto_cm_ext_encode(&x, buf, 11), -EMSGSIZE);

	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, want, sizeof(want)), 0);
	CHECK(out.present);
	CHECK_EQ(out.features, 7);
	/* The RFC 8797 decoder still finds its block and ignores ours. */
	CHECK_EQ(rpcr_proto_cm_decode(&cmo, want, sizeof(want)), 0);
	CHECK(cmo.present);
	CHECK(cmo.remote_inv);
	CHECK_EQ(cmo.send_size, 4096);

	/* Absent: the RFC 8797 block alone (what Linux sends), truncated, another version. */
	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, want, 8), 0);
	CHECK(!out.present);
	CHECK_EQ(out.features, 0);
	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, want, 19), 0);
	CHECK(!out.present);
	memcpy(buf, want, sizeof(want));
	buf[15] = 2;
	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, buf, sizeof(want)), 0);
	CHECK(!out.present);
	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, NULL, 0), 0);
	CHECK(!out.present);
	CHECK_EQ(rpcr_proto_cm_ext_decode(NULL, want, sizeof(want)), -EINVAL);
	/* Found at another 4-aligned offset too; unknown feature bits are kept for the caller. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf + 12, want + 8, 12);
	buf[23] = 0xff;
	CHECK_EQ(rpcr_proto_cm_ext_decode(&out, buf, 24), 0);
	CHECK(out.present);
	CHECK_EQ(out.features, 0xff);
}

/* Decode a whole golden OPTIONAL message into @x. */
static int
xchar_golden(const char *name, struct rpcr_proto_xchar *x)
{
	const struct rpcr_golden *g = rpcr_golden_find(name);
	struct rpcr_proto_v2_hdr h;
	ssize_t n;

	rpcr_proto_chunks_init(&h.chunks, NULL, 0, NULL, 0, NULL, 0);
	h.props = (struct rpcr_proto_v2_propset){NULL, 0, 0};
	n = rpcr_proto_v2_decode(&h, g->bytes, g->len);
	CHECK_EQ(n, (ssize_t)g->len);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_OPTIONAL);
	if (n < 0)
		return (int)n;
	return rpcr_proto_v2_xchar_decode(&h, x);
}

static struct rpcr_proto_xchar_val vals[8];
static uint32_t words[3][4];

static void
xchar_bind(struct rpcr_proto_xchar *x, uint32_t nvals, uint32_t nwords)
{
	int i;

	memset(x, 0, sizeof(*x));
	x->spec.vals = vals;
	x->spec.cap = nvals;
	for (i = 0; i < 3; i++) {
		x->sub[i].words = words[i];
		x->sub[i].cap = nwords;
	}
}

static void
test_xchar_ops(void)
{
	struct rpcr_proto_xchar x;

	xchar_bind(&x, 8, 4);
	CHECK_EQ(xchar_golden("xchar_init", &x), 0);
	CHECK_EQ(x.op, RPCR_PROTO_XCHAR_INIT);
	CHECK_EQ(x.spec.n, 4);
	CHECK_EQ(vals[0].which, RPCR_PROTO_XCHAR_RBSIZ);
	CHECK_EQ(rpcr_proto_xchar_val_u32(&vals[0]), 8192);
	CHECK_EQ(vals[1].which, RPCR_PROTO_XCHAR_RQREMINV);
	CHECK_EQ(rpcr_proto_xchar_val_u32(&vals[1]), 1);
	CHECK_EQ(rpcr_proto_xchar_val_u32(&vals[2]), RPCR_PROTO_XCHAR_BKRQSUP_GENL);
	CHECK_EQ(vals[3].which, 0xffffff00u);
	CHECK_EQ(vals[3].len, 5);
	CHECK_MEM(vals[3].data, "hello", 5);
	CHECK_EQ(x.sub[0].n, 1);
	CHECK(rpcr_proto_xchar_subset_test(&x.sub[0], 0));
	CHECK(!rpcr_proto_xchar_subset_test(&x.sub[0], 1));
	CHECK(rpcr_proto_xchar_subset_test(&x.sub[0], 2));
	CHECK(!rpcr_proto_xchar_subset_test(&x.sub[0], 40)); /* words beyond the last are zero */

	CHECK_EQ(xchar_golden("xchar_req", &x), 0);
	CHECK_EQ(x.op, RPCR_PROTO_XCHAR_REQ);
	CHECK_EQ(x.spec.n, 1);
	CHECK_EQ(rpcr_proto_xchar_val_u32(&vals[0]), 16384);

	CHECK_EQ(xchar_golden("xchar_resp", &x), 0);
	CHECK_EQ(x.op, RPCR_PROTO_XCHAR_RESP);
	CHECK_EQ(x.sub[0].n, 1);
	CHECK_EQ(words[0][0], 1);
	CHECK_EQ(words[1][0], 2);
	CHECK_EQ(x.sub[2].n, 0);

	CHECK_EQ(xchar_golden("xchar_upd", &x), 0);
	CHECK_EQ(x.op, RPCR_PROTO_XCHAR_UPD);
	CHECK_EQ(x.now.which, RPCR_PROTO_XCHAR_RBSIZ);
	CHECK_EQ(rpcr_proto_xchar_val_u32(&x.now), 16384);
	CHECK(x.pendclr);
}

static void
test_xchar_errors(void)
{
	struct rpcr_proto_xchar x;

	xchar_bind(&x, 8, 4);
	CHECK_EQ(xchar_golden("xchar_bad_bool", &x), RPCR_PROTO_EPROPVAL);
	CHECK_EQ(xchar_golden("xchar_bad_pendclr", &x), RPCR_PROTO_EBADXDR);
	CHECK_EQ(xchar_golden("xchar_bad_op", &x), RPCR_PROTO_EHTYPE);
	CHECK_EQ(xchar_golden("xchar_trailing", &x), RPCR_PROTO_EBADXDR);
	/* Capacities. */
	xchar_bind(&x, 3, 4);
	CHECK_EQ(xchar_golden("xchar_init", &x), RPCR_PROTO_EOVERFLOW);
	xchar_bind(&x, 8, 0);
	CHECK_EQ(xchar_golden("xchar_init", &x), RPCR_PROTO_EOVERFLOW);
}

static void
test_xchar_build(void)
{
	const struct rpcr_golden *g = rpcr_golden_find("xchar_upd");
	struct rpcr_proto_v2_hdr prefix = {.xid = 0x99, .credit = 32};
	struct rpcr_proto_xchar x;
	uint8_t v[4], buf[64];

	xchar_bind(&x, 8, 4);
	x.op = RPCR_PROTO_XCHAR_UPD;
	rpcr_proto_xchar_val_set_u32(&x.now, RPCR_PROTO_XCHAR_RBSIZ, v, 16384);
	x.pendclr = true;
	CHECK_EQ(rpcr_proto_v2_xchar_encode(&prefix, &x, buf, sizeof(buf)), 44);
	CHECK_MEM(buf, g->bytes, 44);
	CHECK_EQ(rpcr_proto_v2_xchar_encode(&prefix, &x, buf, 43), -EMSGSIZE);
	x.op = 7;
	CHECK_EQ(rpcr_proto_v2_xchar_encode(&prefix, &x, buf, sizeof(buf)), -EINVAL);

	/* Type checks (§3). */
	rpcr_proto_xchar_val_set_u32(&x.now, RPCR_PROTO_XCHAR_BRS, v, 4);
	CHECK_EQ(rpcr_proto_xchar_val_check(&x.now), RPCR_PROTO_EPROPVAL);
	rpcr_proto_xchar_val_set_u32(&x.now, RPCR_PROTO_XCHAR_BRS, v, 3);
	CHECK_EQ(rpcr_proto_xchar_val_check(&x.now), 0);
	x.now.len = 0;
	CHECK_EQ(rpcr_proto_xchar_val_check(&x.now), RPCR_PROTO_EPROPVAL);
	x.now.which = 12345;
	CHECK_EQ(rpcr_proto_xchar_val_check(&x.now), 0);
}

static const struct rpcr_test_case cases[] = {
	{"cm_decode", test_cm_decode},
	{"cm_encode", test_cm_encode},
	{"cm_ext", test_cm_ext},
	{"xchar_ops", test_xchar_ops},
	{"xchar_errors", test_xchar_errors},
	{"xchar_build", test_xchar_build},
};

RPCR_TEST_MAIN(cases)
