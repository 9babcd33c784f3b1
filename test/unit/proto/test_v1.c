/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* RPC-over-RDMA version 1: what each golden message decodes to, capacities, errors. */

#include <string.h>

#include <rpcr_proto_v1.h>

#include "golden.h"
#include "rpcr_test.h"

#define NR 8
#define NW 4
#define NS 16

static struct rpcr_proto_v1_hdr h;
static struct rpcr_proto_rseg reads[NR];
static struct rpcr_proto_wchunk writes[NW];
static struct rpcr_proto_seg segs[NS];

static ssize_t
decode_golden(const char *name, uint32_t nr, uint32_t nw, uint32_t ns)
{
	const struct rpcr_golden *g = rpcr_golden_find(name);

	CHECK(g != NULL);
	memset(&h, 0xcc, sizeof(h));
	rpcr_proto_chunks_init(&h.chunks, reads, nr, writes, nw, segs, ns);
	return g != NULL ? rpcr_proto_v1_decode(&h, g->bytes, g->len) : -1;
}

static void
check_seg(const struct rpcr_proto_seg *s, uint32_t handle, uint32_t length, uint64_t offset)
{
	CHECK_EQ(s->handle, handle);
	CHECK_EQ(s->length, length);
	CHECK(s->offset == offset);
}

static void
test_msg_empty(void)
{
	CHECK_EQ(decode_golden("v1_msg_empty", NR, NW, NS), 28);
	CHECK_EQ(h.xid, 0x0a0b0c0d);
	CHECK_EQ(h.vers, 1);
	CHECK_EQ(h.credit, 32);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_MSG);
	CHECK_EQ(h.chunks.nreads, 0);
	CHECK_EQ(h.chunks.nwrites, 0);
	CHECK(!h.chunks.has_reply);
	/* Capacities of zero are fine when the lists are empty. */
	CHECK_EQ(decode_golden("v1_msg_empty", 0, 0, 0), 28);
}

static void
test_msg_chunks(void)
{
	CHECK_EQ(decode_golden("v1_msg_chunks", NR, NW, NS), 184);
	CHECK_EQ(h.xid, 0x11223344);
	CHECK_EQ(h.credit, 128);
	CHECK_EQ(h.chunks.nreads, 3);
	CHECK_EQ(rpcr_proto_chunks_read_chunks(&h.chunks), 2); /* positions 64, 64, 200 */
	CHECK_EQ(reads[0].position, 64);
	check_seg(&reads[0].seg, 0x100, 4096, 0x00007f0000001000ull);
	CHECK_EQ(reads[1].position, 64);
	check_seg(&reads[1].seg, 0x101, 1024, 0x00007f0000003000ull);
	CHECK_EQ(reads[2].position, 200);
	check_seg(&reads[2].seg, 0x102, 512, 0x10);
	CHECK_EQ(h.chunks.nwrites, 2);
	CHECK_EQ(writes[0].nsegs, 2);
	check_seg(&writes[0].segs[0], 0x200, 8192, 0xffffffff00000000ull);
	check_seg(&writes[0].segs[1], 0x201, 100, 1);
	CHECK_EQ(rpcr_proto_wchunk_length(&writes[0]), 8292);
	CHECK_EQ(writes[1].nsegs, 1);
	check_seg(&writes[1].segs[0], 0x202, 65536, 0x8000000000000000ull);
	CHECK(h.chunks.has_reply);
	CHECK_EQ(h.chunks.reply.nsegs, 1);
	check_seg(&h.chunks.reply.segs[0], 0x300, 1024, 0x2000);
	CHECK_EQ(h.chunks.nsegs, 4);
	CHECK_EQ(rpcr_proto_chunks_size(&h.chunks), 184 - 16);
}

static void
test_capacities(void)
{
	/* One read slot short, one write slot short, one pool segment short: each its own error,
	 * each keeping the fixed words so that the receiver can answer ERR_CHUNK. */
	CHECK_EQ(decode_golden("v1_msg_chunks", 2, NW, NS), RPCR_PROTO_EREADS);
	CHECK_EQ(h.xid, 0x11223344);
	CHECK_EQ(decode_golden("v1_msg_chunks", NR, 1, NS), RPCR_PROTO_EWRITES);
	CHECK_EQ(decode_golden("v1_msg_chunks", NR, NW, 3), RPCR_PROTO_ESEGS);
	CHECK_EQ(decode_golden("v1_msg_chunks", NR, NW, 2), RPCR_PROTO_ESEGS);
	CHECK_EQ(decode_golden("v1_msg_chunks", 3, 2, 4), 184);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_EREADS), RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_EWRITES), RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_ESEGS), RPCR_PROTO_V1_ERR_CHUNK);
}

static void
test_nomsg(void)
{
	CHECK_EQ(decode_golden("v1_nomsg_pos0", NR, NW, NS), 52);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_NOMSG);
	CHECK_EQ(h.credit, 1);
	CHECK_EQ(h.chunks.nreads, 1);
	CHECK_EQ(reads[0].position, 0);
	check_seg(&reads[0].seg, 0x400, 2048, 0x5000);

	CHECK_EQ(decode_golden("v1_nomsg_reply", NR, NW, NS), 64);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_NOMSG);
	CHECK(h.chunks.has_reply);
	CHECK_EQ(h.chunks.reply.nsegs, 2);
	check_seg(&h.chunks.reply.segs[1], 0x501, 17, 0x7000);
	CHECK_EQ(rpcr_proto_wchunk_length(&h.chunks.reply), 4096 + 17);
}

static void
test_msgp_done(void)
{
	CHECK_EQ(decode_golden("v1_msgp", NR, NW, NS), 36);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_MSGP);
	CHECK_EQ(h.align, 4096);
	CHECK_EQ(h.thresh, 1024);
	CHECK_EQ(decode_golden("v1_done", NR, NW, NS), 16);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_DONE);
	CHECK_EQ(h.xid, 0x02020202);
}

static void
test_errors(void)
{
	CHECK_EQ(decode_golden("v1_err_vers", NR, NW, NS), 28);
	CHECK_EQ(h.proc, RPCR_PROTO_V1_ERROR);
	CHECK_EQ(h.err, RPCR_PROTO_V1_ERR_VERS);
	CHECK_EQ(h.vers_low, 1);
	CHECK_EQ(h.vers_high, 1);
	CHECK_EQ(decode_golden("v1_err_chunk", NR, NW, NS), 20);
	CHECK_EQ(h.err, RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(decode_golden("v1_err_chunk_draft", NR, NW, NS), 20);
	CHECK_EQ(h.err, RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(decode_golden("v1_err_unknown", NR, NW, NS), 20);
	CHECK_EQ(h.err, 7);
}

static void
test_bad_input(void)
{
	/* Each error keeps the fixed words (but ESHORT), so that an RDMA_ERROR can be addressed. */
	CHECK_EQ(decode_golden("v1_bad_vers", NR, NW, NS), RPCR_PROTO_EVERS);
	CHECK_EQ(h.xid, 0x06060606);
	CHECK_EQ(h.vers, 3);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_EVERS), RPCR_PROTO_V1_ERR_VERS);
	CHECK_EQ(decode_golden("v1_bad_proc", NR, NW, NS), RPCR_PROTO_EHTYPE);
	CHECK_EQ(h.proc, 5);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_EHTYPE), RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(decode_golden("v1_bad_discrim", NR, NW, NS), RPCR_PROTO_EBADXDR);
	CHECK_EQ(h.xid, 0x08080808);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_EBADXDR), RPCR_PROTO_V1_ERR_CHUNK);
	CHECK_EQ(decode_golden("v1_bad_count", NR, NW, NS), RPCR_PROTO_EBADXDR);
	CHECK_EQ(decode_golden("v1_short", NR, NW, NS), RPCR_PROTO_ESHORT);
	CHECK_EQ(rpcr_proto_v1_errcode(RPCR_PROTO_ESHORT), 0); /* dropped, no reply */
	CHECK_EQ(rpcr_proto_v1_decode(&h, NULL, 0), RPCR_PROTO_ESHORT);
}

/* Build with the chunk-list API, encode, compare with the golden bytes. */
static void
test_build(void)
{
	const struct rpcr_golden *g = rpcr_golden_find("v1_msg_chunks");
	struct rpcr_proto_seg w0[2] = {{0x200, 8192, 0xffffffff00000000ull}, {0x201, 100, 1}};
	struct rpcr_proto_seg w1 = {0x202, 65536, 0x8000000000000000ull};
	struct rpcr_proto_seg rep = {0x300, 1024, 0x2000};
	struct rpcr_proto_seg r0 = {0x100, 4096, 0x00007f0000001000ull};
	struct rpcr_proto_seg r1 = {0x101, 1024, 0x00007f0000003000ull};
	struct rpcr_proto_seg r2 = {0x102, 512, 0x10};
	RPCR_PROTO_CHUNKS_DEFINE(c, 3, 2, 4);
	struct rpcr_proto_v1_hdr b = {
		.xid = 0x11223344, .vers = 1, .credit = 128, .proc = RPCR_PROTO_V1_MSG};
	uint8_t buf[256];

	CHECK_EQ(rpcr_proto_chunks_add_read(&c, 64, &r0), 0);
	CHECK_EQ(rpcr_proto_chunks_add_read(&c, 64, &r1), 0);
	CHECK_EQ(rpcr_proto_chunks_add_read(&c, 200, &r2), 0);
	CHECK_EQ(rpcr_proto_chunks_add_read(&c, 300, &r2), RPCR_PROTO_EREADS);
	CHECK_EQ(rpcr_proto_chunks_add_write(&c, w0, 2), 0);
	CHECK_EQ(rpcr_proto_chunks_add_write(&c, &w1, 1), 0);
	CHECK_EQ(rpcr_proto_chunks_add_write(&c, &w1, 1), RPCR_PROTO_EWRITES);
	CHECK_EQ(rpcr_proto_chunks_set_reply(&c, &rep, 1), 0);
	CHECK_EQ(rpcr_proto_chunks_set_reply(&c, &rep, 1), -EEXIST);
	b.chunks = c;
	CHECK_EQ(rpcr_proto_v1_size(&b), 184);
	CHECK_EQ(rpcr_proto_v1_encode(&b, buf, sizeof(buf)), 184);
	CHECK_MEM(buf, g->bytes, 184);

	/* A full pool refuses a chunk rather than overrun it. */
	rpcr_proto_chunks_reset(&c);
	CHECK_EQ(rpcr_proto_chunks_add_write(&c, w0, 2), 0);
	CHECK_EQ(rpcr_proto_chunks_add_write(&c, w0, 2), 0);
	CHECK_EQ(rpcr_proto_chunks_set_reply(&c, &rep, 1), RPCR_PROTO_ESEGS);
	CHECK(!c.has_reply);

	/* Unknown proc and counts beyond the arrays are refused by the encoder. */
	b.proc = 9;
	CHECK_EQ(rpcr_proto_v1_size(&b), 0);
	CHECK_EQ(rpcr_proto_v1_encode(&b, buf, sizeof(buf)), -EINVAL);
	b.proc = RPCR_PROTO_V1_NOMSG;
	b.chunks.nreads = 4;
	CHECK_EQ(rpcr_proto_v1_encode(&b, buf, sizeof(buf)), -EINVAL);
}

/* A copy owns its segments (the source can be reused at once) or, too big, leaves nothing. */
static void
test_copy(void)
{
	struct rpcr_proto_seg w0[2] = {{0x200, 8192, 0x1000}, {0x201, 100, 1}};
	struct rpcr_proto_seg rep = {0x300, 1024, 0x2000};
	struct rpcr_proto_seg r0 = {0x100, 4096, 0x7f00};
	RPCR_PROTO_CHUNKS_DEFINE(src, 2, 2, 4);
	RPCR_PROTO_CHUNKS_DEFINE(dst, 2, 2, 4);
	RPCR_PROTO_CHUNKS_DEFINE(small, 2, 2, 2);

	CHECK_EQ(rpcr_proto_chunks_add_read(&src, 64, &r0), 0);
	CHECK_EQ(rpcr_proto_chunks_add_write(&src, w0, 2), 0);
	CHECK_EQ(rpcr_proto_chunks_set_reply(&src, &rep, 1), 0);
	CHECK_EQ(rpcr_proto_chunks_add_read(&dst, 8, &r0), 0); /* emptied first */
	CHECK_EQ(rpcr_proto_chunks_copy(&dst, &src), 0);
	CHECK_EQ(dst.nreads, 1);
	CHECK_EQ(dst.reads[0].position, 64);
	CHECK_EQ(dst.nwrites, 1);
	CHECK_EQ(dst.writes[0].nsegs, 2);
	CHECK(dst.writes[0].segs >= dst.segs && dst.writes[0].segs < dst.segs + dst.segs_cap);
	CHECK(dst.has_reply);
	CHECK(dst.reply.segs >= dst.segs && dst.reply.segs < dst.segs + dst.segs_cap);
	memset(src_segs_, 0, sizeof(src_segs_));
	CHECK_EQ(dst.writes[0].segs[1].handle, 0x201);
	CHECK_EQ(dst.reply.segs[0].length, 1024);
	CHECK_EQ(rpcr_proto_chunks_size(&dst), rpcr_proto_chunks_size(&src));
	/* Three segments in a pool of two. */
	CHECK_EQ(rpcr_proto_chunks_copy(&small, &src), RPCR_PROTO_ESEGS);
	CHECK(rpcr_proto_chunks_empty(&small));
	rpcr_proto_chunks_reset(&src);
	CHECK_EQ(rpcr_proto_chunks_copy(&dst, &src), 0);
	CHECK(rpcr_proto_chunks_empty(&dst));
}

/* Each header type encodes to exactly its documented size. */
static void
test_sizes(void)
{
	RPCR_PROTO_CHUNKS_DEFINE(c, 1, 1, 1);
	struct rpcr_proto_v1_hdr b = {.vers = 1, .chunks = c};

	b.proc = RPCR_PROTO_V1_MSG;
	CHECK_EQ(rpcr_proto_v1_size(&b), RPCR_PROTO_V1_HDR_MIN);
	b.proc = RPCR_PROTO_V1_DONE;
	CHECK_EQ(rpcr_proto_v1_size(&b), RPCR_PROTO_V1_DONE_SIZE);
	b.proc = RPCR_PROTO_V1_ERROR;
	b.err = RPCR_PROTO_V1_ERR_VERS;
	CHECK_EQ(rpcr_proto_v1_size(&b), RPCR_PROTO_V1_ERR_VERS_SIZE);
	b.err = RPCR_PROTO_V1_ERR_CHUNK;
	CHECK_EQ(rpcr_proto_v1_size(&b), RPCR_PROTO_V1_ERR_CHUNK_SIZE);
	b.proc = RPCR_PROTO_V1_MSGP;
	CHECK_EQ(rpcr_proto_v1_size(&b), RPCR_PROTO_V1_HDR_MIN + 8);
}

static void
test_conf_rdma(void)
{
	const struct rpcr_golden *g = rpcr_golden_find("conf_req");
	struct rpcr_proto_conf_rdma_req q;
	struct rpcr_proto_conf_rdma_reply p;
	struct rpcr_xdr_dec d;

	rpcr_xdr_dec_init(&d, g->bytes, g->len);
	CHECK_EQ(rpcr_proto_conf_rdma_req_decode(&d, &q), 0);
	CHECK_EQ(q.maxcall_sendsize, 4096);
	CHECK_EQ(q.maxreply_sendsize, 1024);
	CHECK_EQ(q.maxrdmaread, 16);
	g = rpcr_golden_find("conf_reply");
	rpcr_xdr_dec_init(&d, g->bytes, g->len);
	CHECK_EQ(rpcr_proto_conf_rdma_reply_decode(&d, &p), 0);
	CHECK_EQ(p.maxcall_sendsize, 8192);
	CHECK_EQ(p.align, 4096);
	CHECK_EQ(p.maxrdmaread, 8);
	/* In the user-defined range of RFC 5531 §7.3. */
	CHECK(RPCR_PROTO_CONF_RDMA_PROG >= 0x20000000u && RPCR_PROTO_CONF_RDMA_PROG <= 0x3fffffffu);
}

static const struct rpcr_test_case cases[] = {
	{"msg_empty", test_msg_empty},   {"msg_chunks", test_msg_chunks},
	{"capacities", test_capacities}, {"nomsg", test_nomsg},
	{"msgp_done", test_msgp_done},   {"errors", test_errors},
	{"bad_input", test_bad_input},   {"build", test_build},
	{"sizes", test_sizes},           {"copy", test_copy},
	{"conf_rdma", test_conf_rdma},
};

RPCR_TEST_MAIN(cases)
