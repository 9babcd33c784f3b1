/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Write RPC-over-RDMA messages encoded by rpcr (version 1; with --v2, version 2 and the
 * xcharext operations) as RoCEv2 frames (Ethernet / IPv4 /
 * UDP 4791 / BTH RC SEND ONLY / payload / ICRC, made by lib/cap) into a pcap, and, for each frame, the fields
 * an independent decoder (Wireshark's rpcordma dissector) must report, as tab-separated lines in
 * the order of tshark-check.sh's -e options.
 *
 * The expected fields come from the structure given to the encoder, not from the bytes, so the
 * comparison checks rpcr's encoder (and its golden messages) against Wireshark's decoder.
 *
 * usage: mkpcap OUT.pcap EXPECTED.tsv [RANDOM_COUNT [SEED]]
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcr_cap.h>
#include <rpcr_oncrpc.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_proto_xchar.h>

#include "codec_any.h"
#include "golden.h"

#define FRAME_MAX 9000

static void
put32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
pcap_header(FILE *f)
{
	uint8_t h[24] = {0};

	put32le(h, 0xa1b2c3d4);
	h[4] = 2; /* version 2.4, little-endian fields */
	h[6] = 4;
	put32le(h + 16, 65535); /* snaplen */
	put32le(h + 20, 1);     /* LINKTYPE_ETHERNET */
	fwrite(h, 1, sizeof(h), f);
}

static void
pcap_frame(FILE *f, uint32_t n, const uint8_t *payload, size_t plen)
{
	static uint8_t fr[FRAME_MAX];
	static uint32_t psn;
	struct rpcr_cap_roce h = {
		.src_ip = 0xc0a86401, /* 192.168.100.1 -> .2 */
		.dst_ip = 0xc0a86402,
		.src_port = 49152,
		.dest_qp = 0x12,
		.psn = ++psn,
		.op = RPCR_CAP_SEND,
		.len = (uint32_t)plen,
	};
	uint32_t hlen, flen;
	uint8_t rec[16];

	/* The frame as lib/cap builds it (what rpcr's own capture writes): headers, payload,
	 * padding, the invariant CRC. */
	hlen = rpcr_cap_roce_hdr(fr, &h);
	flen = rpcr_cap_roce_len(fr);
	memset(fr + hlen, 0, flen - hlen);
	memcpy(fr + hlen, payload, plen);
	rpcr_cap_roce_icrc(fr);

	put32le(rec, n); /* seconds: the frame number, for readable timestamps */
	put32le(rec + 4, 0);
	put32le(rec + 8, flen);
	put32le(rec + 12, flen);
	fwrite(rec, 1, sizeof(rec), f);
	fwrite(fr, 1, flen, f);
}

/* Append a comma-separated value to @s: decimal, or hex with @hexw digits (as tshark prints). */
static void
list_add(char *s, size_t cap, int hexw, uint64_t v)
{
	size_t n = strlen(s);

	if (n != 0 && n + 1 < cap)
		s[n++] = ',';
	if (hexw != 0)
		snprintf(s + n, cap - n, "0x%0*" PRIx64, hexw, v);
	else
		snprintf(s + n, cap - n, "%" PRIu64, v);
}

/* The chunk lists' fields as tshark lists them: read positions; every segment's handle, length
 * and offset (reads, then writes, then the reply chunk); the segment count of each write chunk
 * and of the reply chunk. */
struct chunk_fields {
	char pos[4096], hnd[8192], len[8192], off[16384], nseg[1024];
};

static void
chunk_fields(const struct rpcr_proto_chunks *c, struct chunk_fields *cf)
{
	uint32_t i, j;

	for (i = 0; i < c->nreads; i++) {
		list_add(cf->pos, sizeof(cf->pos), 0, c->reads[i].position);
		list_add(cf->hnd, sizeof(cf->hnd), 8, c->reads[i].seg.handle);
		list_add(cf->len, sizeof(cf->len), 0, c->reads[i].seg.length);
		list_add(cf->off, sizeof(cf->off), 16, c->reads[i].seg.offset);
	}
	for (i = 0; i < c->nwrites + (c->has_reply ? 1 : 0); i++) {
		const struct rpcr_proto_wchunk *w = i < c->nwrites ? &c->writes[i] : &c->reply;

		list_add(cf->nseg, sizeof(cf->nseg), 0, w->nsegs);
		for (j = 0; j < w->nsegs; j++) {
			list_add(cf->hnd, sizeof(cf->hnd), 8, w->segs[j].handle);
			list_add(cf->len, sizeof(cf->len), 0, w->segs[j].length);
			list_add(cf->off, sizeof(cf->off), 16, w->segs[j].offset);
		}
	}
}

/* One expected line: the fields tshark-check.sh asks tshark for, in its order. */
static void
expect_line(FILE *f, uint32_t frame, const struct rpcr_proto_v1_hdr *h)
{
	const struct rpcr_proto_chunks *c = &h->chunks;
	static struct chunk_fields cf;
	bool lists = rpcr_proto_v1_has_chunks(h->proc);

	memset(&cf, 0, sizeof(cf));

	if (lists)
		chunk_fields(c, &cf);

	fprintf(f, "%" PRIu32 "\t0x%08" PRIx32 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", frame,
		h->xid, h->vers, h->credit, h->proc);
	if (lists)
		fprintf(f, "%" PRIu32 "\t%s\t%s\t%s\t%s\t%" PRIu32 "\t%s\t%d\t", c->nreads, cf.pos,
			cf.hnd, cf.len, cf.off, c->nwrites, cf.nseg, c->has_reply ? 1 : 0);
	else
		fprintf(f, "\t\t\t\t\t\t\t\t");
	if (h->proc == RPCR_PROTO_V1_ERROR)
		fprintf(f, "%" PRIu32 "\t", h->err);
	else
		fprintf(f, "\t");
	if (h->proc == RPCR_PROTO_V1_ERROR && h->err == RPCR_PROTO_V1_ERR_VERS)
		fprintf(f, "%" PRIu32 "\t%" PRIu32 "\t", h->vers_low, h->vers_high);
	else
		fprintf(f, "\t\t");
	if (h->proc == RPCR_PROTO_V1_MSGP)
		fprintf(f, "%" PRIu32 "\t%" PRIu32 "\n", h->align, h->thresh);
	else
		fprintf(f, "\t\n");
}

/* Fields of a version 2 message and the xcharext operation it may carry, in the order of
 * tshark-check.sh --v2's -e options (usertools/wireshark/rpcrdma2.lua's names). */
static void
expect_line_v2(FILE *f, uint32_t frame, const struct rpcr_proto_v2_hdr *h,
	       const struct rpcr_proto_xchar *x)
{
	const struct rpcr_proto_chunks *c = &h->chunks;
	static char pw[4096], pl[4096], xw[4096], xl[4096], sc[256], sw[4096];
	static struct chunk_fields cf;
	bool lists = h->htype == RPCR_PROTO_V2_MSG || h->htype == RPCR_PROTO_V2_NOMSG;
	uint32_t i, j;

	memset(&cf, 0, sizeof(cf));
	pw[0] = pl[0] = xw[0] = xl[0] = sc[0] = sw[0] = '\0';
	if (lists)
		chunk_fields(c, &cf);
	fprintf(f,
		"%" PRIu32 "\t0x%08" PRIx32 "\t%" PRIu32 "\t0x%08" PRIx32 "\t%" PRIu32
		"\t0x%08" PRIx32 "\t",
		frame, h->xid, h->vers, h->credit, h->htype, h->flags);
	if (lists)
		fprintf(f, "0x%08" PRIx32 "\t%" PRIu32 "\t%s\t%s\t%s\t%s\t%" PRIu32 "\t%s\t%d\t",
			h->inv_handle, c->nreads, cf.pos, cf.hnd, cf.len, cf.off, c->nwrites,
			cf.nseg, c->has_reply ? 1 : 0);
	else
		fprintf(f, "\t\t\t\t\t\t\t\t\t");
	/* The error and its arm. */
	if (h->htype == RPCR_PROTO_V2_ERROR) {
		uint32_t e = h->err;

		fprintf(f, "%" PRIu32 "\t", e);
		if (e == RPCR_PROTO_V2_ERR_VERS)
			fprintf(f, "%" PRIu32 "\t%" PRIu32 "\t", h->vers_low, h->vers_high);
		else
			fprintf(f, "\t\t");
		if (e == RPCR_PROTO_V2_ERR_READ_CHUNKS || e == RPCR_PROTO_V2_ERR_WRITE_CHUNKS)
			fprintf(f, "%" PRIu32 "\t", h->max_chunks);
		else
			fprintf(f, "\t");
		if (e == RPCR_PROTO_V2_ERR_SEGMENTS)
			fprintf(f, "%" PRIu32 "\t", h->max_segments);
		else
			fprintf(f, "\t");
		if (e == RPCR_PROTO_V2_ERR_WRITE_RESOURCE)
			fprintf(f, "%" PRIu32 "\t%" PRIu32 "\t", h->chunk_index, h->length_needed);
		else if (e == RPCR_PROTO_V2_ERR_REPLY_RESOURCE)
			fprintf(f, "\t%" PRIu32 "\t", h->length_needed);
		else
			fprintf(f, "\t\t");
	} else {
		fprintf(f, "\t\t\t\t\t\t\t");
	}
	/* Transport properties. */
	if (h->htype == RPCR_PROTO_V2_CONNPROP) {
		for (i = 0; i < h->props.n; i++) {
			list_add(pw, sizeof(pw), 0, h->props.props[i].which);
			list_add(pl, sizeof(pl), 0, h->props.props[i].len);
		}
		fprintf(f, "%" PRIu32 "\t%s\t%s\t", h->props.n, pw, pl);
	} else {
		fprintf(f, "\t\t\t");
	}
	/* An xcharext operation: its values, subsets and UPD's flag. */
	if (h->htype != RPCR_PROTO_V2_OPTIONAL) {
		fprintf(f, "\t\t\t\t\t\n");
		return;
	}
	fprintf(f, "%" PRIu32 "\t", h->opttype);
	if (x == NULL) {
		fprintf(f, "\t\t\t\t\n");
		return;
	}
	if (x->op == RPCR_PROTO_XCHAR_INIT || x->op == RPCR_PROTO_XCHAR_REQ) {
		for (i = 0; i < x->spec.n; i++) {
			list_add(xw, sizeof(xw), 0, x->spec.vals[i].which);
			list_add(xl, sizeof(xl), 0, x->spec.vals[i].len);
		}
	} else if (x->op == RPCR_PROTO_XCHAR_UPD) {
		list_add(xw, sizeof(xw), 0, x->now.which);
		list_add(xl, sizeof(xl), 0, x->now.len);
	}
	for (i = 0; i < 3; i++) {
		if (!(x->op == RPCR_PROTO_XCHAR_RESP || (x->op == RPCR_PROTO_XCHAR_INIT && i == 0)))
			continue;
		list_add(sc, sizeof(sc), 0, x->sub[i].n);
		for (j = 0; j < x->sub[i].n; j++)
			list_add(sw, sizeof(sw), 8, x->sub[i].words[j]);
	}
	fprintf(f, "%s\t%s\t%s\t%s\t", xw, xl, sc, sw);
	if (x->op == RPCR_PROTO_XCHAR_UPD)
		fprintf(f, "%d\n", x->pendclr ? 1 : 0);
	else
		fprintf(f, "\n");
}

/*
 * Encode @h and, for RDMA_MSG and RDMA_MSGP, an RPC call with the same xid after it (Wireshark
 * claims a message only when the RPC that follows carries the transport header's xid).
 */
static size_t
build(const struct rpcr_proto_v1_hdr *h, uint8_t *buf, size_t cap)
{
	struct rpcr_oncrpc_call call = {
		.xid = h->xid, .rpcvers = 2, .prog = 0x2f5a0001, .vers = 1, .proc = 1};
	ssize_t n = rpcr_proto_v1_encode(h, buf, cap), m;

	if (n < 0) {
		fprintf(stderr, "mkpcap: encode failed: %zd\n", n);
		exit(1);
	}
	if (h->proc != RPCR_PROTO_V1_MSG && h->proc != RPCR_PROTO_V1_MSGP)
		return (size_t)n;
	m = rpcr_oncrpc_call_encode(&call, buf + n, cap - (size_t)n);
	if (m < 0) {
		fprintf(stderr, "mkpcap: RPC encode failed\n");
		exit(1);
	}
	return (size_t)(n + m);
}

/* A version 2 message (of the V2 or XCHAR family) and, after RDMA2_MSG, an RPC call. */
static size_t
build_v2(const struct rpcr_any *m, uint8_t *buf, size_t cap)
{
	struct rpcr_oncrpc_call call = {
		.xid = m->u.v2.xid, .rpcvers = 2, .prog = 0x2f5a0001, .vers = 1, .proc = 1};
	long n = rpcr_any_encode(m, buf, cap);
	ssize_t k;

	if (n < 0) {
		fprintf(stderr, "mkpcap: encode failed: %ld\n", n);
		exit(1);
	}
	if (m->family != RPCR_GOLDEN_V2 || m->u.v2.htype != RPCR_PROTO_V2_MSG)
		return (size_t)n;
	k = rpcr_oncrpc_call_encode(&call, buf + n, cap - (size_t)n);
	if (k < 0) {
		fprintf(stderr, "mkpcap: RPC encode failed\n");
		exit(1);
	}
	return (size_t)n + (size_t)k;
}

static void
add_v2(FILE *pcap, FILE *tsv, uint32_t frame, const struct rpcr_any *m)
{
	static uint8_t buf[FRAME_MAX - 100];
	size_t n = build_v2(m, buf, sizeof(buf));

	struct rpcr_proto_v2_hdr h = m->u.v2;

	pcap_frame(pcap, frame, buf, n);
	if (m->family == RPCR_GOLDEN_XCHAR) {
		/* (rpcr_proto_v2_xchar_encode() sets these in the message it writes.) */
		h.vers = RPCR_PROTO_V2_VERS;
		h.htype = RPCR_PROTO_V2_OPTIONAL;
		h.opttype = m->xchar.op;
	}
	if (m->family == RPCR_GOLDEN_V2 && m->u.v2.htype == RPCR_PROTO_V2_OPTIONAL) {
		/* Random opaque optinfo: the dissector decodes it where rpcr's decoder does. */
		static struct rpcr_any x;

		rpcr_any_init(&x, RPCR_GOLDEN_XCHAR);
		if (rpcr_proto_v2_xchar_decode(&m->u.v2, &x.xchar) == 0) {
			expect_line_v2(tsv, frame, &h, &x.xchar);
			return;
		}
	}
	expect_line_v2(tsv, frame, &h, m->family == RPCR_GOLDEN_XCHAR ? &m->xchar : NULL);
}

/* Version 2: every golden message of the V2 and XCHAR families that decodes, then random ones
 * of both, alternately. */
static uint32_t
gen_v2(FILE *pcap, FILE *tsv, unsigned long nrand, struct rpcr_test_rng *r)
{
	static struct rpcr_any m;
	uint32_t frame = 0;
	unsigned long k;
	size_t i;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];

		if ((g->family != RPCR_GOLDEN_V2 && g->family != RPCR_GOLDEN_XCHAR) ||
		    g->expect < 0)
			continue;
		rpcr_any_init(&m, g->family);
		if (rpcr_any_decode(&m, g->bytes, g->len) != g->expect)
			exit(1);
		add_v2(pcap, tsv, ++frame, &m);
	}
	for (k = 0; k < nrand; k++) {
		rpcr_any_init(&m, k % 4 == 3 ? RPCR_GOLDEN_XCHAR : RPCR_GOLDEN_V2);
		rpcr_any_random(&m, r);
		add_v2(pcap, tsv, ++frame, &m);
	}
	return frame;
}

int
main(int argc, char **argv)
{
	static struct rpcr_any m;
	static uint8_t buf[FRAME_MAX - 100];
	struct rpcr_test_rng r;
	unsigned long nrand, k;
	uint32_t frame = 0;
	FILE *pcap, *tsv;
	size_t i;

	bool v2 = argc > 1 && strcmp(argv[1], "--v2") == 0;

	if (v2) {
		argc--;
		argv++;
	}
	if (argc < 3) {
		fprintf(stderr,
			"usage: mkpcap [--v2] OUT.pcap EXPECTED.tsv [RANDOM_COUNT [SEED]]\n");
		return 2;
	}
	nrand = argc > 3 ? strtoul(argv[3], NULL, 0) : 500;
	r.s = argc > 4 ? strtoull(argv[4], NULL, 0) : 0x72706372u;
	pcap = fopen(argv[1], "wb");
	tsv = fopen(argv[2], "w");
	if (pcap == NULL || tsv == NULL) {
		perror("mkpcap");
		return 1;
	}
	pcap_header(pcap);
	if (v2) {
		frame = gen_v2(pcap, tsv, nrand, &r);
		fclose(pcap);
		fclose(tsv);
		printf("%" PRIu32 " frames\n", frame);
		return 0;
	}

	/* Every version 1 golden message that decodes, re-encoded from its decoded form. */
	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		size_t n;

		if (g->family != RPCR_GOLDEN_V1 || g->expect < 0)
			continue;
		rpcr_any_init(&m, RPCR_GOLDEN_V1);
		if (rpcr_any_decode(&m, g->bytes, g->len) != g->expect)
			return 1;
		n = build(&m.u.v1, buf, sizeof(buf));
		pcap_frame(pcap, ++frame, buf, n);
		expect_line(tsv, frame, &m.u.v1);
	}
	/* Random headers of every message type. */
	for (k = 0; k < nrand; k++) {
		size_t n;

		rpcr_any_init(&m, RPCR_GOLDEN_V1);
		rpcr_any_random(&m, &r);
		n = build(&m.u.v1, buf, sizeof(buf));
		pcap_frame(pcap, ++frame, buf, n);
		expect_line(tsv, frame, &m.u.v1);
	}
	fclose(pcap);
	fclose(tsv);
	printf("%" PRIu32 " frames\n", frame);
	return 0;
}
