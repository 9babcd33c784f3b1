/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* RPC-over-RDMA version 2: golden fields, error arms, properties, flags, capacities. */

#include <rpcr_proto_v2.h>

#include "golden.h"
#include "rpcr_test.h"

#define NR 8
#define NW 4
#define NS 16
#define NP 8

static struct rpcr_proto_v2_hdr h;
static struct rpcr_proto_rseg reads[NR];
static struct rpcr_proto_wchunk writes[NW];
static struct rpcr_proto_seg segs[NS];
static struct rpcr_proto_v2_prop props[NP];

static ssize_t
decode_golden_cap(const char *name, uint32_t nr, uint32_t nw, uint32_t ns, uint32_t np)
{
	const struct rpcr_golden *g = rpcr_golden_find(name);

	CHECK(g != NULL);
	memset(&h, 0xcc, sizeof(h));
	rpcr_proto_chunks_init(&h.chunks, reads, nr, writes, nw, segs, ns);
	h.props.props = props;
	h.props.cap = np;
	return g != NULL ? rpcr_proto_v2_decode(&h, g->bytes, g->len) : -1;
}

static ssize_t
decode_golden(const char *name)
{
	return decode_golden_cap(name, NR, NW, NS, NP);
}

static void
test_msg(void)
{
	CHECK_EQ(decode_golden("v2_msg_empty"), 36);
	CHECK_EQ(h.xid, 0x0a0b0c0d);
	CHECK_EQ(h.vers, 2);
	CHECK_EQ(h.credit, 32);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_MSG);
	CHECK_EQ(h.flags, 0);
	CHECK_EQ(h.inv_handle, 0);
	CHECK(!rpcr_proto_v2_inv_handle_valid(&h));

	CHECK_EQ(decode_golden("v2_msg_chunks"), 120);
	CHECK_EQ(h.inv_handle, 0x300);
	CHECK_EQ(h.chunks.nreads, 1);
	CHECK_EQ(reads[0].position, 32);
	CHECK_EQ(reads[0].seg.handle, 0x100);
	CHECK_EQ(h.chunks.nwrites, 1);
	CHECK_EQ(writes[0].nsegs, 2);
	CHECK_EQ(writes[0].segs[1].handle, 0x201);
	CHECK(writes[0].segs[1].offset == 0x30000);
	CHECK(h.chunks.has_reply);
	CHECK_EQ(h.chunks.reply.segs[0].length, 8192);
	/* The handle to invalidate is one of the header's own (§6.2.4). */
	CHECK(rpcr_proto_v2_inv_handle_valid(&h));
	h.inv_handle = 0x999;
	CHECK(!rpcr_proto_v2_inv_handle_valid(&h));
	h.inv_handle = 0x100;
	CHECK(rpcr_proto_v2_inv_handle_valid(&h));

	CHECK_EQ(decode_golden("v2_msg_response"), 36);
	CHECK_EQ(h.flags, RPCR_PROTO_V2_F_RESPONSE);
	CHECK_EQ(decode_golden("v2_nomsg_refresh"), 36);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_NOMSG);
	CHECK_EQ(h.xid, 0);
	CHECK_EQ(h.credit, 64);
	CHECK_EQ(decode_golden("v2_msg_more"), 36);
	CHECK_EQ(h.flags, RPCR_PROTO_V2_F_MORE);
}

struct err_case {
	const char *name;
	uint32_t err;
	uint32_t a, b; /* the arm's words */
};

static void
test_error_arms(void)
{
	static const struct err_case cases[] = {
		{"v2_err_vers", RPCR_PROTO_V2_ERR_VERS, 2, 2},
		{"v2_err_bad_xdr", RPCR_PROTO_V2_ERR_BAD_XDR, 0, 0},
		{"v2_err_bad_propval", RPCR_PROTO_V2_ERR_BAD_PROPVAL, 0, 0},
		{"v2_err_inval_htype", RPCR_PROTO_V2_ERR_INVAL_HTYPE, 0, 0},
		{"v2_err_inval_cont", RPCR_PROTO_V2_ERR_INVAL_CONT, 0, 0},
		{"v2_err_read_chunks", RPCR_PROTO_V2_ERR_READ_CHUNKS, 2, 0},
		{"v2_err_write_chunks", RPCR_PROTO_V2_ERR_WRITE_CHUNKS, 0, 0},
		{"v2_err_segments", RPCR_PROTO_V2_ERR_SEGMENTS, 16, 0},
		{"v2_err_write_resource", RPCR_PROTO_V2_ERR_WRITE_RESOURCE, 1, 65536},
		{"v2_err_reply_resource", RPCR_PROTO_V2_ERR_REPLY_RESOURCE, 12288, 0},
		{"v2_err_system", RPCR_PROTO_V2_ERR_SYSTEM, 0, 0},
		{"v2_err_unknown", 77, 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct err_case *c = &cases[i];

		CHECK(decode_golden(c->name) > 0);
		CHECK_EQ(h.htype, RPCR_PROTO_V2_ERROR);
		CHECK_EQ(h.flags, RPCR_PROTO_V2_F_RESPONSE);
		CHECK_EQ(h.err, c->err);
		switch (c->err) {
		case RPCR_PROTO_V2_ERR_VERS:
			CHECK_EQ(h.vers_low, c->a);
			CHECK_EQ(h.vers_high, c->b);
			break;
		case RPCR_PROTO_V2_ERR_READ_CHUNKS:
		case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
			CHECK_EQ(h.max_chunks, c->a);
			break;
		case RPCR_PROTO_V2_ERR_SEGMENTS:
			CHECK_EQ(h.max_segments, c->a);
			break;
		case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
			CHECK_EQ(h.chunk_index, c->a);
			CHECK_EQ(h.length_needed, c->b);
			break;
		case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
			CHECK_EQ(h.length_needed, c->a);
			break;
		default:
			break;
		}
	}
}

static void
test_connprop(void)
{
	struct rpcr_proto_v2_props o;

	CHECK_EQ(decode_golden("v2_connprop"), 112);
	CHECK_EQ(h.htype, RPCR_PROTO_V2_CONNPROP);
	CHECK_EQ(h.props.n, 7);
	CHECK_EQ(props[1].which, RPCR_PROTO_V2_PROP_RBSIZ);
	CHECK_EQ(props[1].len, 0);
	CHECK_EQ(props[6].which, 0x7fff0001);
	CHECK_EQ(props[6].len, 3);
	CHECK_MEM(props[6].data, "abc", 3);
	rpcr_proto_v2_props_get(&h.props, &o);
	CHECK_EQ(o.sbsiz, 8192);
	CHECK_EQ(o.rbsiz, 4096); /* zero-length rdma_data: the default (§5.1) */
	CHECK_EQ(o.rssiz, 1048576);
	CHECK_EQ(o.rcsiz, 32);
	CHECK_EQ(o.brs, RPCR_PROTO_V2_RVRSDIR_GENL);
	CHECK(o.has_hostauth);
	CHECK_EQ(o.hostauth_len, 5);
	CHECK_MEM(o.hostauth, "rpcr\x01", 5);
	CHECK_EQ(o.unknown, 1);

	/* No properties: every default of Table 1. */
	CHECK_EQ(decode_golden("v2_connprop_tpmore"), 24);
	CHECK_EQ(h.flags, RPCR_PROTO_V2_F_TPMORE);
	rpcr_proto_v2_props_get(&h.props, &o);
	CHECK_EQ(o.sbsiz, 4096);
	CHECK_EQ(o.rbsiz, 4096);
	CHECK_EQ(o.rssiz, 1048576);
	CHECK_EQ(o.rcsiz, 16);
	CHECK_EQ(o.brs, RPCR_PROTO_V2_RVRSDIR_NONE);
	CHECK(!o.has_hostauth);

	/* More properties than the caller's capacity. */
	CHECK_EQ(decode_golden_cap("v2_connprop", NR, NW, NS, 6), RPCR_PROTO_EOVERFLOW);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EOVERFLOW), RPCR_PROTO_V2_ERR_SYSTEM);
}

static void
test_prop_build(void)
{
	const struct rpcr_golden *g = rpcr_golden_find("v2_connprop");
	uint8_t b[5][4];
	static const uint8_t hostauth[12] = {0, 0, 0, 5, 'r', 'p', 'c', 'r', 1, 0, 0, 0};
	struct rpcr_proto_v2_prop p[7];
	struct rpcr_proto_v2_hdr m = {.vers = 2, .credit = 32, .htype = RPCR_PROTO_V2_CONNPROP};
	uint8_t buf[256];

	rpcr_proto_v2_prop_set_u32(&p[0], RPCR_PROTO_V2_PROP_SBSIZ, b[0], 8192);
	p[1] = (struct rpcr_proto_v2_prop){.which = RPCR_PROTO_V2_PROP_RBSIZ};
	rpcr_proto_v2_prop_set_u32(&p[2], RPCR_PROTO_V2_PROP_RSSIZ, b[2], 1048576);
	rpcr_proto_v2_prop_set_u32(&p[3], RPCR_PROTO_V2_PROP_RCSIZ, b[3], 32);
	rpcr_proto_v2_prop_set_u32(&p[4], RPCR_PROTO_V2_PROP_BRS, b[4], 3);
	p[5] = (struct rpcr_proto_v2_prop){RPCR_PROTO_V2_PROP_HOSTAUTH, 12, hostauth};
	p[6] = (struct rpcr_proto_v2_prop){0x7fff0001, 3, (const uint8_t *)"abc"};
	m.props = (struct rpcr_proto_v2_propset){p, 7, 7};
	CHECK_EQ(rpcr_proto_v2_size(&m), 112);
	CHECK_EQ(rpcr_proto_v2_encode(&m, buf, sizeof(buf)), 112);
	CHECK_MEM(buf, g->bytes, 112);
	m.props.n = 8;
	CHECK_EQ(rpcr_proto_v2_encode(&m, buf, sizeof(buf)), -EINVAL);

	/* Type checks of each recognised property (§5.1, Table 1). */
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[0]), 0);
	p[0].len = 3;
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[0]), RPCR_PROTO_EPROPVAL);
	rpcr_proto_v2_prop_set_u32(&p[4], RPCR_PROTO_V2_PROP_BRS, b[4], 4);
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[4]), RPCR_PROTO_EPROPVAL);
	p[5].len = 8;
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[5]), RPCR_PROTO_EPROPVAL);
	p[5].len = 2;
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[5]), RPCR_PROTO_EPROPVAL);
	p[6].len = 1;
	CHECK_EQ(rpcr_proto_v2_prop_check(&p[6]), 0); /* unknown: anything goes */
}

static void
test_bad_input(void)
{
	CHECK_EQ(decode_golden("v2_bad_propval_len"), RPCR_PROTO_EPROPVAL);
	CHECK_EQ(decode_golden("v2_bad_propval_brs"), RPCR_PROTO_EPROPVAL);
	CHECK_EQ(decode_golden("v2_bad_propval_hostauth"), RPCR_PROTO_EPROPVAL);
	CHECK_EQ(decode_golden("v2_propval_overrun"), RPCR_PROTO_EPROPVAL);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EPROPVAL), RPCR_PROTO_V2_ERR_BAD_PROPVAL);
	CHECK_EQ(decode_golden("v2_tpmore_on_msg"), RPCR_PROTO_EHTYPE);
	CHECK_EQ(h.flags, RPCR_PROTO_V2_F_TPMORE);
	CHECK_EQ(decode_golden("v2_more_on_nomsg"), RPCR_PROTO_ECONT);
	CHECK_EQ(decode_golden("v2_more_with_chunks"), RPCR_PROTO_ECONT);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_ECONT), RPCR_PROTO_V2_ERR_INVAL_CONT);
	CHECK_EQ(decode_golden("v2_bad_htype"), RPCR_PROTO_EHTYPE);
	CHECK_EQ(h.htype, 2);
	CHECK_EQ(h.xid, 0x0f0f0f0f);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EHTYPE), RPCR_PROTO_V2_ERR_INVAL_HTYPE);
	CHECK_EQ(decode_golden("v2_short"), RPCR_PROTO_ESHORT);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_ESHORT), 0);
	CHECK_EQ(decode_golden("v2_bad_vers"), RPCR_PROTO_EVERS);
	CHECK_EQ(h.vers, 3);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EVERS), RPCR_PROTO_V2_ERR_VERS);
	/* A version 1 header is EVERS to the version 2 decoder (and vice versa). */
	CHECK_EQ(rpcr_proto_v2_decode(&h, rpcr_golden_find("v1_msg_empty")->bytes, 28),
		 RPCR_PROTO_EVERS);
}

static void
test_capacities(void)
{
	CHECK_EQ(decode_golden_cap("v2_msg_chunks", 0, NW, NS, NP), RPCR_PROTO_EREADS);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EREADS), RPCR_PROTO_V2_ERR_READ_CHUNKS);
	CHECK_EQ(decode_golden_cap("v2_msg_chunks", NR, 0, NS, NP), RPCR_PROTO_EWRITES);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EWRITES), RPCR_PROTO_V2_ERR_WRITE_CHUNKS);
	CHECK_EQ(decode_golden_cap("v2_msg_chunks", NR, NW, 1, NP), RPCR_PROTO_ESEGS);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_ESEGS), RPCR_PROTO_V2_ERR_SEGMENTS);
	CHECK_EQ(rpcr_proto_v2_errcode(RPCR_PROTO_EBADXDR), RPCR_PROTO_V2_ERR_BAD_XDR);
}

static void
test_sizes(void)
{
	struct rpcr_proto_v2_hdr m = {.vers = 2};
	uint8_t buf[64];

	rpcr_proto_chunks_init(&m.chunks, NULL, 0, NULL, 0, NULL, 0);
	m.htype = RPCR_PROTO_V2_MSG;
	CHECK_EQ(rpcr_proto_v2_size(&m), RPCR_PROTO_V2_HDR_MIN);
	m.htype = RPCR_PROTO_V2_ERROR;
	m.err = RPCR_PROTO_V2_ERR_WRITE_RESOURCE;
	CHECK_EQ(rpcr_proto_v2_size(&m), 32);
	m.htype = 3;
	CHECK_EQ(rpcr_proto_v2_size(&m), 0);
	CHECK_EQ(rpcr_proto_v2_encode(&m, buf, sizeof(buf)), -EINVAL);
}

static const struct rpcr_test_case cases[] = {
	{"msg", test_msg},
	{"error_arms", test_error_arms},
	{"connprop", test_connprop},
	{"prop_build", test_prop_build},
	{"bad_input", test_bad_input},
	{"capacities", test_capacities},
	{"sizes", test_sizes},
};

RPCR_TEST_MAIN(cases)
