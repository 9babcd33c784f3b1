/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A hostile peer against the engine's server (issue 7, item 3).
 *
 * An rpcr server (test/xprt/xprt_common.c: the test program 0x2f5a0001 and the test-only program
 * with HOLD, driven over the harness's control channel; RPC-over-RDMA versions 1 and 2, each
 * connection speaking its first message's) runs in one process; in the other, a
 * well-behaved rpcr client keeps four calls in flight the whole time (NULL, an inline ECHO, a
 * WRITE whose data goes in a read chunk, a READ whose result comes back in a write chunk, every
 * result checked), while raw peers (test/xprt/raw_peer.c, lib/rdev only) send the server every
 * malformed shape we know of and misbehave at the RDMA level. For each case the test asserts
 *
 *   - the answer: the RDMA_ERROR and its code, the RPC reply, no reply (a NULL call sent after
 *     it is answered, and nothing else comes), or the connection dropped where RDMA semantics
 *     leave nothing else (a failed RDMA Read or Write, a Send into no receive);
 *   - which server counters moved (CMD_INFO: rdma_errors_sent, bad_headers, wc_errors,
 *     overruns, the resource limits' limit_chunks + limit_call_bytes) and that the server has the connections expected: the well-behaved client's and
 *     those of the raw peers still open, none of a peer it dropped;
 *   - that the well-behaved client made progress during the case, with no failure and no call
 *     slower than a bound.
 *
 * At the end a fresh client is served, every well-behaved call must have succeeded, and the
 * server's poller must be destroyable (nothing leaked). The last line is the issue's figure:
 * "hostile: N cases, N answered as the spec says, server still serving: yes".
 *
 * Where RFC 8166 leaves room, Linux's svcrdma is the reference: see each group's comment.
 *
 * usage: test_hostile [--dev DEVARGS] [--cdev DEVARGS] [--addr ADDR] [-v] [GROUP ...]
 */

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>
#include <rpcr_oncrpc.h>
#include <rpcr_proto.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_proto_xchar.h>

#include "golden.h"
#include "raw_peer.h"
#include "rpcr_test.h"
#include "xprt_test.h"

/* The server's configuration: 16 credits, so that it has credits + 2 * 16 = 48 request slots
 * and credits + 16 = 32 receives per connection (svc.c, xprt_svc_conn_request()). */
#define SRV_CREDITS   16u
#define SRV_SLOTS     (SRV_CREDITS + 32u)
#define SRV_RECVS     (SRV_CREDITS + 16u)
#define SRV_INLINE    4096u
#define CONF_RDMA_PRG 0x2f5a0002u

static struct player P;
static struct rpcr_rdev *cdev;
static struct rpcr_xprt_poller *cp;
static struct rpcr_mem_cache *mc;
static char saddr[128];
static bool verbose;

/* ---- the server's counters (CMD_INFO) ---- */

enum {
	I_CONNS = 0,
	I_WC_ERRORS,
	I_RDMA_ERRORS,
	I_BAD_HEADERS,
	I_OVERRUNS,
	I_CALLS,
	I_REPLIES,
	I_LIMITS, /* limit_chunks + limit_call_bytes */
};

static void bg(void *arg);

static void
ctl_wait(uint32_t tag, struct ctl_msg *m)
{
	/* The server answers between polls; keep the well-behaved client going meanwhile. */
	uint64_t end = now_ns() + 60000000000ull;
	uint32_t turn = 0;

	while (now_ns() < end) {
		struct ctl_msg x;

		if ((++turn & 63) == 0 &&
		    recv(P.ctl, &x, sizeof(x), MSG_DONTWAIT) == (ssize_t)sizeof(x)) {
			CHECK_EQ(x.tag, tag);
			*m = x;
			return;
		}
		bg(NULL);
	}
	fprintf(stderr, "no word from the server\n");
	_exit(3);
}

static void
srv_info(uint64_t *v)
{
	struct ctl_msg m;

	ctl_send(&P, CMD_INFO, 0, NULL);
	ctl_wait(CMD_ACK, &m);
	memcpy(v, m.v, 8 * sizeof(v[0]));
}

static void
srv_cmd(uint32_t cmd, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};
	struct ctl_msg m;

	ctl_send(&P, cmd, 2, v);
	ctl_wait(CMD_ACK, &m);
}

/* CMD_STATS: v[3] is the most HOLD calls held at once since CMD_HOLD. */
static void
srv_stats(uint64_t *v)
{
	struct ctl_msg m;

	ctl_send(&P, CMD_STATS, 0, NULL);
	ctl_wait(CMD_ACK, &m);
	memcpy(v, m.v, 8 * sizeof(v[0]));
}

/* ---- the well-behaved client ---- */

#define GOOD_CALLS  4
#define GOOD_BUF    8192u
#define GOOD_GAP_NS 20000u /* one new call every 20 us at most */

enum { G_NULL, G_ECHO, G_WRITE, G_READ, G_KINDS };

struct gcall {
	struct rpcr_call call;
	struct tp_echo_res er;
	struct rpcr_bulk ab, rb;
	struct tbuf res;
	uint32_t n, len, kind;
	uint64_t t0;
	bool busy;
};

static struct {
	struct rpcr_clnt *cl;
	struct gcall c[GOOD_CALLS];
	struct tbuf arg;
	uint64_t issued, done, failed;
	uint64_t max_ns;  /* the slowest call since the case began */
	uint64_t next_ns; /* no new call before (a steady trickle, not a flood) */
	uint32_t seq;
	bool stop;
} good;

static void
good_done(struct rpcr_call *call)
{
	struct gcall *g = call->user;
	uint64_t ns = now_ns() - g->t0;
	bool ok = call->status == 0;

	if (g->kind == G_ECHO || g->kind == G_READ) {
		ok = ok && g->er.got == 0;
		if (ok && g->kind == G_ECHO)
			ok = bulk_equals(&g->er.b, &g->ab);
		if (ok && g->kind == G_READ)
			ok = g->er.b.len == g->len && bulk_equals_pattern(&g->er.b);
		if (g->er.got == 0 && g->er.b.m != NULL)
			rte_pktmbuf_free(g->er.b.m);
	} else if (g->kind == G_WRITE) {
		ok = ok && g->n == g->len;
	}
	if (!ok) {
		good.failed++;
		fprintf(stderr, "well-behaved client: call of kind %u failed (status %d)\n",
			g->kind, call->status);
	}
	good.max_ns = RTE_MAX(good.max_ns, ns);
	good.done++;
	g->busy = false;
}

static void
good_issue(struct gcall *g)
{
	static const uint32_t lens[G_KINDS] = {0, 200, 3000, 5000};

	g->kind = good.seq++ % G_KINDS;
	g->len = lens[g->kind];
	memset(&g->call, 0, sizeof(g->call));
	memset(&g->er, 0, sizeof(g->er));
	g->er.max = UINT32_MAX;
	g->n = UINT32_MAX;
	g->ab = (struct rpcr_bulk){good.arg.m, 0, g->len};
	g->rb = (struct rpcr_bulk){g->res.m, 0, GOOD_BUF};
	g->call.user = g;
	g->call.done = good_done;
	switch (g->kind) {
	case G_NULL:
		g->call.proc = RPCR_TESTPROG_NULL;
		break;
	case G_ECHO:
		g->call.proc = RPCR_TESTPROG_ECHO;
		g->call.encode = rpcr_testprog_enc_data;
		g->call.args = &g->ab;
		g->call.decode = tp_dec_bulk;
		g->call.res = &g->er;
		break;
	case G_WRITE:
		g->call.proc = RPCR_TESTPROG_WRITE;
		g->call.encode = rpcr_testprog_enc_data;
		g->call.args = &g->ab;
		g->call.decode = tp_dec_u32;
		g->call.res = &g->n;
		break;
	default:
		g->call.proc = RPCR_TESTPROG_READ;
		g->call.encode = rpcr_testprog_enc_len;
		g->call.args = &g->len;
		g->call.decode = tp_dec_bulk;
		g->call.res = &g->er;
		g->call.res_bulk = &g->rb;
		g->call.nres_bulk = 1;
		break;
	}
	g->t0 = now_ns();
	g->busy = true;
	good.issued++;
	if (rpcr_clnt_call(good.cl, &g->call) != 0) {
		good.failed++;
		g->busy = false;
		fprintf(stderr, "well-behaved client: call not accepted\n");
	}
}

/* The background: one poll of the well-behaved client, and new calls in its free slots. */
static void
bg(void *arg)
{
	uint32_t i;

	RTE_SET_USED(arg);
	if (cp == NULL)
		return;
	rpcr_xprt_poll(cp);
	if (good.cl == NULL || good.stop)
		return;
	for (i = 0; i < GOOD_CALLS; i++) {
		if (!good.c[i].busy && now_ns() >= good.next_ns) {
			good_issue(&good.c[i]);
			good.next_ns = now_ns() + GOOD_GAP_NS;
		}
	}
}

/* Run the background for @ms. */
static void
bg_for(uint32_t ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	while (now_ns() < end)
		bg(NULL);
}

static struct rpcr_clnt *
client_new(void)
{
	struct rpcr_clnt_conf cc;
	struct rpcr_clnt *cl;
	uint64_t end = now_ns() + 10000000000ull;

	memset(&cc, 0, sizeof(cc));
	cc.addr = saddr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = 32;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	cc.timeout_us = 10000000;
	cl = rpcr_clnt_create(cp, &cc);
	if (cl == NULL)
		return NULL;
	while (!rpcr_clnt_connected(cl) && now_ns() < end)
		rpcr_xprt_poll(cp);
	if (!rpcr_clnt_connected(cl)) {
		rpcr_clnt_destroy(cl);
		return NULL;
	}
	return cl;
}

static int
good_start(void)
{
	uint32_t i;

	if (tbuf_make(cp, P.arena, mc, &good.arg, GOOD_BUF, 1) != 0)
		return -1;
	tbuf_fill(&good.arg, 5);
	for (i = 0; i < GOOD_CALLS; i++)
		if (tbuf_make(cp, P.arena, mc, &good.c[i].res, GOOD_BUF, 1) != 0)
			return -1;
	good.cl = client_new();
	return good.cl != NULL ? 0 : -1;
}

/* Stop issuing, wait for what is out, release everything. */
static void
good_finish(void)
{
	uint64_t end = now_ns() + 15000000000ull;
	uint32_t i, busy;

	good.stop = true;
	do {
		bg(NULL);
		for (i = 0, busy = 0; i < GOOD_CALLS; i++)
			busy += good.c[i].busy;
	} while (busy != 0 && now_ns() < end);
	CHECK_EQ(busy, 0);
	if (good.cl != NULL)
		CHECK_EQ(rpcr_clnt_destroy(good.cl), 0);
	good.cl = NULL;
	for (i = 0; i < GOOD_CALLS; i++)
		tbuf_free(mc, &good.c[i].res);
	tbuf_free(mc, &good.arg);
}

/* ---- cases: bookkeeping ---- */

static unsigned long ncases, nok;
static uint32_t raws_open; /* raw peers connected now (the server has as many more) */

/* What a case expects of the server's counters: deltas; wc_errors -1: at least one, -2: not
 * looked at. */
struct want_ctr {
	int rdma_errors, bad_headers, wc_errors, overruns, limits;
};

#define CTR_ERROR    ((struct want_ctr){1, 1, 0, 0})    /* RDMA_ERROR for a bad header */
#define CTR_LIMIT    ((struct want_ctr){1, 0, 0, 0, 1}) /* RDMA_ERROR: over a resource limit */
#define CTR_DROP_MSG ((struct want_ctr){0, 1, 0, 0})    /* dropped, counted malformed */
#define CTR_RPC      ((struct want_ctr){0, 0, 0, 0})    /* an RPC-level answer */
/* An RPC reply (RFC 8167: the reverse direction) matching no call the server made: dropped,
 * counted in unmatched, not as malformed. */
#define CTR_UNMATCHED ((struct want_ctr){0, 0, 0, 0})
#define CTR_RDMA_FAIL ((struct want_ctr){0, 0, -1, 0}) /* a failed RDMA op (wc_errors >= 1) */

struct hcase {
	const char *name;
	uint64_t info[8];
	unsigned long failed;
	uint64_t done;
	uint64_t fails;
};

static void
case_begin(struct hcase *c, const char *name)
{
	c->name = name;
	srv_info(c->info);
	c->failed = rpcr_test_failed;
	c->done = good.done;
	c->fails = good.failed;
	good.max_ns = 0;
}

/*
 * Close the case: @want and @got (the answer, in words), the counters, and the well-behaved
 * client's progress (calls completed meanwhile, none failed, none slower than @max_ms).
 */
static void
case_end(struct hcase *c, const char *want, const char *got, struct want_ctr w, uint32_t max_ms)
{
	uint64_t now[8], end = now_ns() + 5000000000ull;
	bool ok;

	if (strcmp(want, got) != 0) {
		fprintf(stderr, "%s: answer \"%s\", expected \"%s\"\n", c->name, got, want);
		CHECK(false);
	}
	/* The server has the well-behaved client's connection and the raw peers still open, and
	 * has counted the failed completions it was to count (it may poll one after it dropped
	 * the connection: a device's completions come when they come). */
	do {
		srv_info(now);
	} while ((now[I_CONNS] != 1 + raws_open ||
		  (w.wc_errors == -1 && now[I_WC_ERRORS] <= c->info[I_WC_ERRORS]) ||
		  (w.wc_errors >= 0 &&
		   now[I_WC_ERRORS] - c->info[I_WC_ERRORS] < (uint64_t)w.wc_errors)) &&
		 now_ns() < end);
	CHECK_EQ(now[I_CONNS], 1 + raws_open);
	if (w.rdma_errors >= 0)
		CHECK_EQ(now[I_RDMA_ERRORS] - c->info[I_RDMA_ERRORS], w.rdma_errors);
	if (w.bad_headers >= 0)
		CHECK_EQ(now[I_BAD_HEADERS] - c->info[I_BAD_HEADERS], w.bad_headers);
	if (w.wc_errors >= 0)
		CHECK_EQ(now[I_WC_ERRORS] - c->info[I_WC_ERRORS], w.wc_errors);
	else if (w.wc_errors == -1)
		CHECK(now[I_WC_ERRORS] > c->info[I_WC_ERRORS]);
	if (w.overruns >= 0)
		CHECK_EQ(now[I_OVERRUNS] - c->info[I_OVERRUNS], w.overruns);
	if (w.limits >= 0)
		CHECK_EQ(now[I_LIMITS] - c->info[I_LIMITS], w.limits);
	/* The well-behaved client went on. */
	end = now_ns() + 5000000000ull;
	while (good.done < c->done + GOOD_CALLS && now_ns() < end)
		bg(NULL);
	CHECK(good.done >= c->done + GOOD_CALLS);
	CHECK_EQ(good.failed, c->fails);
	if (good.max_ns > (uint64_t)max_ms * 1000000u) {
		fprintf(stderr, "%s: a well-behaved call took %.1f ms\n", c->name,
			(double)good.max_ns / 1e6);
		CHECK(false);
	}
	ok = rpcr_test_failed == c->failed;
	ncases++;
	nok += ok;
	printf("%s %-40s %s", ok ? "ok  " : "FAIL", c->name, got);
	if (verbose)
		printf("  [rdma_errors +%" PRIu64 ", bad_headers +%" PRIu64 ", wc_errors +%" PRIu64
		       ", overruns +%" PRIu64 ", limits +%" PRIu64 "; well-behaved calls +%" PRIu64
		       "]",
		       now[I_RDMA_ERRORS] - c->info[I_RDMA_ERRORS],
		       now[I_BAD_HEADERS] - c->info[I_BAD_HEADERS],
		       now[I_WC_ERRORS] - c->info[I_WC_ERRORS],
		       now[I_OVERRUNS] - c->info[I_OVERRUNS], now[I_LIMITS] - c->info[I_LIMITS],
		       good.done - c->done);
	printf("\n");
	fflush(stdout);
}

/* The slowest a well-behaved call may be during a case: a stalled poller or connection shows
 * as seconds; the machines are shared, so scheduling alone can take a second. */
#define GOOD_MAX_MS 3000u

/* ---- messages ---- */

struct wbuf {
	uint32_t w[2048];
	uint32_t n;
};

static void
put(struct wbuf *b, uint32_t v)
{
	if (b->n < RTE_DIM(b->w))
		b->w[b->n++] = v;
}

static uint32_t
wbytes(const struct wbuf *b, uint8_t *out)
{
	return raw_put_words(out, b->w, b->n);
}

/* The four fixed words. */
static void
put_fixed(struct wbuf *b, uint32_t xid, uint32_t vers, uint32_t credit, uint32_t proc)
{
	b->n = 0;
	put(b, xid);
	put(b, vers);
	put(b, credit);
	put(b, proc);
}

static void
put_seg(struct wbuf *b, uint32_t handle, uint32_t len, uint64_t off)
{
	put(b, handle);
	put(b, len);
	put(b, (uint32_t)(off >> 32));
	put(b, (uint32_t)off);
}

static void
put_read(struct wbuf *b, uint32_t pos, uint32_t handle, uint32_t len, uint64_t off)
{
	put(b, 1);
	put(b, pos);
	put_seg(b, handle, len, off);
}

/* An RPC call header, AUTH_NONE. */
static void
put_call(struct wbuf *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	put(b, xid);
	put(b, RPCR_ONCRPC_CALL);
	put(b, RPCR_ONCRPC_VERS);
	put(b, prog);
	put(b, vers);
	put(b, proc);
	put(b, 0);
	put(b, 0);
	put(b, 0);
	put(b, 0);
}

/* RDMA_MSG with empty lists and a call of the test program. */
static void
msg_call(struct wbuf *b, uint32_t xid, uint32_t proc)
{
	put_fixed(b, xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(b, 0);
	put(b, 0);
	put(b, 0);
	put_call(b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, proc);
}

/* ---- answers ---- */

static const char *
accept_name(uint32_t s)
{
	static const char *const n[] = {"SUCCESS",      "PROG_UNAVAIL", "PROG_MISMATCH",
					"PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"};

	return s < RTE_DIM(n) ? n[s] : "accept_stat ?";
}

static const char *
auth_name(uint32_t s)
{
	static const char *const n[] = {"AUTH_OK",      "AUTH_BADCRED",      "AUTH_REJECTEDCRED",
					"AUTH_BADVERF", "AUTH_REJECTEDVERF", "AUTH_TOOWEAK"};

	return s < RTE_DIM(n) ? n[s] : "auth_stat ?";
}

/*
 * Describe a message from the server in words: "RDMA_ERROR ERR_CHUNK", "RDMA_ERROR ERR_VERS
 * 1..1", "SUCCESS", "PROG_MISMATCH 1..1", "RPC_MISMATCH 2..2", "AUTH_ERROR AUTH_BADCRED", ...
 * Anything unexpected about it (an xid not @xid, a grant of 0 or above the server's credits, an
 * RPC xid unlike the transport's) is added in parentheses, so that it cannot match.
 */
/* The RPC reply at @rpc (@len bytes) in words, for describe(). @return the characters written. */
static size_t
describe_rpc(const uint8_t *rpc, size_t len, uint32_t xid, char *out, size_t cap)
{
	struct rpcr_oncrpc_reply rep;
	size_t k;

	memset(&rep, 0, sizeof(rep));
	if (rpcr_oncrpc_reply_decode(&rep, rpc, len) < 0)
		k = (size_t)snprintf(out, cap, "undecodable RPC reply");
	else if (rep.stat == RPCR_ONCRPC_MSG_ACCEPTED &&
		 rep.accept_stat == RPCR_ONCRPC_PROG_MISMATCH)
		k = (size_t)snprintf(out, cap, "PROG_MISMATCH %u..%u", rep.mismatch_low,
				     rep.mismatch_high);
	else if (rep.stat == RPCR_ONCRPC_MSG_ACCEPTED)
		k = (size_t)snprintf(out, cap, "%s", accept_name(rep.accept_stat));
	else if (rep.reject_stat == RPCR_ONCRPC_RPC_MISMATCH)
		k = (size_t)snprintf(out, cap, "RPC_MISMATCH %u..%u", rep.mismatch_low,
				     rep.mismatch_high);
	else
		k = (size_t)snprintf(out, cap, "AUTH_ERROR %s", auth_name(rep.auth_stat));
	if (k < cap && rep.xid != xid)
		k += (size_t)snprintf(out + k, cap - k, " (RPC xid 0x%08x)", rep.xid);
	return RTE_MIN(k, cap);
}

/*
 * A version-2 message from the server in words: "RDMA2_ERR_VERS 1..2", "RDMA2_ERR_READ_CHUNKS
 * max 8", "RDMA2_ERR_INVAL_HTYPE", "RDMA2_CONNPROP", or the RPC reply's words; a missing RESPONSE
 * flag, a wrong xid or a grant (low half) of 0 or above the server's credits in parentheses.
 */
static void
describe_v2(const uint8_t *r0, int n, uint32_t xid, uint32_t vers, char *out, size_t cap)
{
	static const char *const errs[] = {
		[RPCR_PROTO_V2_ERR_VERS] = "RDMA2_ERR_VERS",
		[RPCR_PROTO_V2_ERR_BAD_XDR] = "RDMA2_ERR_BAD_XDR",
		[RPCR_PROTO_V2_ERR_BAD_PROPVAL] = "RDMA2_ERR_BAD_PROPVAL",
		[RPCR_PROTO_V2_ERR_INVAL_HTYPE] = "RDMA2_ERR_INVAL_HTYPE",
		[RPCR_PROTO_V2_ERR_INVAL_CONT] = "RDMA2_ERR_INVAL_CONT",
		[RPCR_PROTO_V2_ERR_READ_CHUNKS] = "RDMA2_ERR_READ_CHUNKS",
		[RPCR_PROTO_V2_ERR_WRITE_CHUNKS] = "RDMA2_ERR_WRITE_CHUNKS",
		[RPCR_PROTO_V2_ERR_SEGMENTS] = "RDMA2_ERR_SEGMENTS",
		[RPCR_PROTO_V2_ERR_WRITE_RESOURCE] = "RDMA2_ERR_WRITE_RESOURCE",
		[RPCR_PROTO_V2_ERR_REPLY_RESOURCE] = "RDMA2_ERR_REPLY_RESOURCE",
	};
	struct rpcr_proto_rseg reads[8];
	struct rpcr_proto_wchunk writes[8];
	struct rpcr_proto_seg segs[32];
	struct rpcr_proto_v2_prop props[16];
	struct rpcr_proto_v2_hdr h;
	static uint8_t r[16384];
	uint32_t got_vers;
	bool response = true;
	size_t k = 0;
	ssize_t hl;

	/* §7: an error report carries the version of the message it answers (said below when it
	 * does not): decoded as version 2 whatever that was. */
	n = RTE_MIN(n, (int)sizeof(r));
	memcpy(r, r0, (size_t)n);
	got_vers = raw_w32(r, 1);
	rpcr_xdr_store32(r + 4, RPCR_PROTO_V2_VERS);
	memset(&h, 0, sizeof(h));
	rpcr_proto_chunks_init(&h.chunks, reads, 8, writes, 8, segs, 32);
	h.props = (struct rpcr_proto_v2_propset){props, 0, RTE_DIM(props)};
	hl = rpcr_proto_v2_decode(&h, r, (size_t)n);
	if (hl < 0) {
		snprintf(out, cap, "undecodable version-2 reply (%s)",
			 rpcr_proto_strerror((int)hl));
		return;
	}
	if (h.htype == RPCR_PROTO_V2_ERROR) {
		const char *e = h.err < RTE_DIM(errs) && errs[h.err] != NULL ? errs[h.err]
				: h.err == RPCR_PROTO_V2_ERR_SYSTEM          ? "RDMA2_ERR_SYSTEM"
									     : "RDMA2_ERR ?";

		k = (size_t)snprintf(out, cap, "%s", e);
		if (h.err == RPCR_PROTO_V2_ERR_VERS)
			k += (size_t)snprintf(out + k, cap - k, " %u..%u", h.vers_low, h.vers_high);
		else if (h.err == RPCR_PROTO_V2_ERR_READ_CHUNKS ||
			 h.err == RPCR_PROTO_V2_ERR_WRITE_CHUNKS)
			k += (size_t)snprintf(out + k, cap - k, " max %u", h.max_chunks);
		else if (h.err == RPCR_PROTO_V2_ERR_SEGMENTS)
			k += (size_t)snprintf(out + k, cap - k, " max %u", h.max_segments);
		else if (h.err == RPCR_PROTO_V2_ERR_WRITE_RESOURCE)
			k += (size_t)snprintf(out + k, cap - k, " chunk %u needs %u", h.chunk_index,
					      h.length_needed);
		else if (h.err == RPCR_PROTO_V2_ERR_REPLY_RESOURCE)
			k += (size_t)snprintf(out + k, cap - k, " needs %u", h.length_needed);
	} else if (h.htype == RPCR_PROTO_V2_MSG) {
		k = describe_rpc(r + hl, (size_t)(n - hl), h.xid, out, cap);
	} else if (h.htype == RPCR_PROTO_V2_CONNPROP) {
		k = (size_t)snprintf(out, cap, "RDMA2_CONNPROP");
		response = false;
	} else if (h.htype == RPCR_PROTO_V2_OPTIONAL && h.opttype == RPCR_PROTO_XCHAR_RESP) {
		/* RESP_XCHAR: its three subsets' first words. */
		struct rpcr_proto_xchar x;
		uint32_t w[3][2] = {{0}}, i;

		memset(&x, 0, sizeof(x));
		for (i = 0; i < 3; i++)
			x.sub[i] = (struct rpcr_proto_xchar_subset){w[i], 0, 2};
		if (rpcr_proto_v2_xchar_decode(&h, &x) == 0)
			k = (size_t)snprintf(out, cap, "RESP_XCHAR done 0x%x rej 0x%x pend 0x%x",
					     w[0][0], w[1][0], w[2][0]);
		else
			k = (size_t)snprintf(out, cap, "undecodable RESP_XCHAR");
	} else {
		k = (size_t)snprintf(out, cap, "rdma_htype %u", h.htype);
	}
	if (k < cap && response && !(h.flags & RPCR_PROTO_V2_F_RESPONSE))
		k += (size_t)snprintf(out + k, cap - k, " (no RESPONSE)");
	if (k < cap && response && h.xid != xid)
		k += (size_t)snprintf(out + k, cap - k, " (xid 0x%08x, sent 0x%08x)", h.xid, xid);
	if (k < cap && response && got_vers != vers)
		k += (size_t)snprintf(out + k, cap - k, " (rdma_vers %u, sent %u)", got_vers, vers);
	if (k < cap && ((h.credit & 0xffff) == 0 || (h.credit & 0xffff) > SRV_CREDITS))
		snprintf(out + k, cap - k, " (credit 0x%08x)", h.credit);
}

/* (@conn_vers: the version of the connection it came on: a version-2 connection answers a
 * message of any version but 1 in version 2's format.) */
static void
describe(const uint8_t *r0, int n, uint32_t xid, uint32_t vers, uint32_t conn_vers, char *out,
	 size_t cap)
{
	struct rpcr_proto_rseg reads[8];
	struct rpcr_proto_wchunk writes[8];
	struct rpcr_proto_seg segs[32];
	struct rpcr_proto_v1_hdr h;
	static uint8_t r[16384];
	uint32_t got_vers = 0;
	size_t k = 0;
	ssize_t hl;

	/* Version 2's own format (this server serves it). */
	if (n >= 16 &&
	    (raw_w32(r0, 1) == RPCR_PROTO_V2_VERS ||
	     (conn_vers == RPCR_PROTO_V2_VERS && raw_w32(r0, 1) != RPCR_PROTO_V1_VERS))) {
		describe_v2(r0, n, xid, vers, out, cap);
		return;
	}
	/* RFC 8166 section 4.5: an RDMA_ERROR carries the version of the message it answers
	 * (said below when it does not); decoded as version 1 whatever that was. */
	memcpy(r, r0, RTE_MIN((size_t)n, sizeof(r)));
	if (n >= 16 && raw_w32(r, 3) == RPCR_PROTO_V1_ERROR) {
		got_vers = raw_w32(r, 1);
		rpcr_xdr_store32(r + 4, RPCR_PROTO_V1_VERS);
	}
	rpcr_proto_chunks_init(&h.chunks, reads, 8, writes, 8, segs, 32);
	hl = rpcr_proto_v1_decode_full(&h, r, RTE_MIN((size_t)n, sizeof(r)));
	if (hl < 0) {
		snprintf(out, cap, "undecodable reply (%s)", rpcr_proto_strerror((int)hl));
		return;
	}
	if (h.proc == RPCR_PROTO_V1_ERROR) {
		if (h.err == RPCR_PROTO_V1_ERR_VERS)
			k = (size_t)snprintf(out, cap, "RDMA_ERROR ERR_VERS %u..%u", h.vers_low,
					     h.vers_high);
		else if (h.err == RPCR_PROTO_V1_ERR_CHUNK)
			k = (size_t)snprintf(out, cap, "RDMA_ERROR ERR_CHUNK");
		else
			k = (size_t)snprintf(out, cap, "RDMA_ERROR %u", h.err);
	} else if (h.proc == RPCR_PROTO_V1_MSG) {
		k = describe_rpc(r + hl, (size_t)(n - hl), h.xid, out, cap);
	} else {
		k = (size_t)snprintf(out, cap, "rdma_proc %u", h.proc);
	}
	if (k < cap && h.xid != xid)
		k += (size_t)snprintf(out + k, cap - k, " (xid 0x%08x, sent 0x%08x)", h.xid, xid);
	if (k < cap && h.proc == RPCR_PROTO_V1_ERROR && got_vers != vers)
		k += (size_t)snprintf(out + k, cap - k, " (rdma_vers %u, sent %u)", got_vers, vers);
	if (k < cap && (h.credit == 0 || h.credit > SRV_CREDITS))
		snprintf(out + k, cap - k, " (credit %u)", h.credit);
}

static void raw_gone(struct raw *rw);

static uint32_t probe_xid = 0x7e570000;

/* Version 2's prefix and RDMA2_MSG's handle and empty lists (9 words). */
static void
put_v2_plain(struct wbuf *b, uint32_t xid, uint32_t flags)
{
	b->n = 0;
	put(b, xid);
	put(b, RPCR_PROTO_V2_VERS);
	put(b, 8u << 16 | 1);
	put(b, RPCR_PROTO_V2_MSG);
	put(b, flags);
	put(b, 0);
	put(b, 0);
	put(b, 0);
	put(b, 0);
}

/* A NULL call of the test program in the version @rw speaks. @return its length. */
static uint32_t
null_call(const struct raw *rw, uint8_t *m, uint32_t xid)
{
	struct wbuf b;

	if (rw->vers != RPCR_PROTO_V2_VERS)
		return raw_null_call(m, xid, 2);
	put_v2_plain(&b, xid, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
	return wbytes(&b, m);
}

/*
 * Send @msg (xid @xid) and say what came of it: the server's answer in words (describe()), "no
 * reply" when a NULL call sent right after it is answered and nothing else comes within 100 ms
 * more (a call whose chunks the server reads first may be answered after a later call), or
 * "connection dropped".
 */
static void
answer_of(struct raw *rw, const uint8_t *msg, uint32_t len, uint32_t xid, char *out, size_t cap)
{
	static uint8_t r[16384];
	uint8_t pm[128];
	uint32_t px = ++probe_xid;
	uint64_t end = now_ns() + 3000000000ull;
	bool probe = false, answer = false;
	char other[160] = "";
	int st, n;

	st = raw_send(rw, msg, len);
	if (st == RPCR_RDEV_WC_WR_FLUSH_ERR && raw_wait_dropped(rw, 2000, NULL, true)) {
		/* The server took the message and dropped the connection before our Send's
		 * completion came (its acknowledgement and the disconnection raced). */
		raw_gone(rw);
		snprintf(out, cap, "connection dropped");
		return;
	}
	if (st != RPCR_RDEV_WC_SUCCESS) {
		snprintf(out, cap, "Send failed: %s",
			 st < 0 ? "no completion" : rpcr_rdev_wc_status_str((uint32_t)st));
		return;
	}
	raw_send(rw, pm, null_call(rw, pm, px));
	while (!(probe && answer) && now_ns() < end) {
		n = raw_recv(rw, r, 10);
		if (n == -2) {
			/* A flushed receive: the server dropped the connection. */
			raw_gone(rw);
			snprintf(out, cap, "connection dropped");
			return;
		}
		if (n == -1)
			continue;
		if (n >= 4 && raw_w32(r, 0) == px && !probe) {
			describe(r, n, px, rw->vers != 0 ? rw->vers : RPCR_PROTO_V1_VERS, rw->vers,
				 other, sizeof(other));
			probe = true;
			/* A late answer to @msg may still come. */
			end = RTE_MIN(end, now_ns() + 100000000ull);
		} else if (!answer) {
			describe(r, n, xid, len >= 8 ? raw_w32(msg, 1) : 0, rw->vers, out, cap);
			answer = true;
		}
	}
	if (!probe && !answer) {
		if (raw_wait_dropped(rw, 2000, NULL, true)) {
			raw_gone(rw);
			snprintf(out, cap, "connection dropped");
		} else {
			snprintf(out, cap, "nothing came back");
		}
		return;
	}
	if (!answer)
		snprintf(out, cap, strcmp(other, "SUCCESS") == 0 ? "no reply" : "no reply, then %s",
			 other);
	else if (!probe)
		snprintf(out + strlen(out), cap - strlen(out),
			 " (then no answer to the next call)");
}

/* One message on @rw as a case of its own. */
static void
one(struct raw *rw, const char *name, const uint8_t *msg, uint32_t len, uint32_t xid,
    const char *want, struct want_ctr w)
{
	struct hcase c;
	char got[256];

	case_begin(&c, name);
	answer_of(rw, msg, len, xid, got, sizeof(got));
	case_end(&c, want, got, w, GOOD_MAX_MS);
}

/* Same, from a struct wbuf. */
static void
onew(struct raw *rw, const char *name, const struct wbuf *b, const char *want, struct want_ctr w)
{
	static uint8_t m[8192];

	one(rw, name, m, wbytes(b, m), b->n != 0 ? b->w[0] : 0, want, w);
}

static int
raw_new(struct raw *rw, const struct raw_conf *conf)
{
	int rc = raw_open(rw, &P, saddr, conf);

	CHECK_EQ(rc, 0);
	if (rc != 0) {
		raw_close(rw);
		return rc;
	}
	rw->idle = bg;
	raws_open++;
	return 0;
}

/* The server dropped @rw's connection: it no longer counts among the server's. */
static void
raw_gone(struct raw *rw)
{
	if (!rw->dropped && rw->qp != NULL)
		raws_open--;
	rw->dropped = true;
}

static void
raw_done(struct raw *rw)
{
	raw_gone(rw);
	raw_close(rw);
}

/* Registered memory of the raw peer that the server may reach. */
struct region {
	uint8_t *mem;
	size_t len;
	struct rpcr_rdev_mr *mr;
	uint32_t rkey;
	uint64_t addr;
};

static int
region_new(struct region *g, size_t len, uint32_t access)
{
	memset(g, 0, sizeof(*g));
	g->mem = rpcr_mem_arena_alloc(P.arena, len, 4096);
	if (g->mem == NULL)
		return -1;
	g->len = len;
	g->mr = rpcr_rdev_mr_reg(P.pd, g->mem, len, RPCR_RDEV_ACCESS_LOCAL_WRITE | access);
	if (g->mr == NULL)
		return -1;
	g->rkey = g->mr->rkey;
	g->addr = (uintptr_t)g->mem;
	return 0;
}

static void
region_free(struct region *g)
{
	if (g->mr != NULL)
		rpcr_rdev_mr_dereg(g->mr);
	rte_free(g->mem);
	memset(g, 0, sizeof(*g));
}

/* A name in a static pool (case names built at run time). */
static const char *cname(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static const char *
cname(const char *fmt, ...)
{
	static char pool[64][128];
	static unsigned int next;
	char *s = pool[next++ % RTE_DIM(pool)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(pool[0]), fmt, ap);
	va_end(ap);
	return s;
}

/* ---- group: the golden messages (the codec's fuzz seeds) ---- */

/*
 * What the server answers each version 1 golden message with. RFC 8166 section 4.5: with a
 * version it knows and a header that does not parse (or a type it does not know), ERR_CHUNK; with
 * a version it does not know, ERR_VERS and the range it supports. RDMA_MSGP and RDMA_DONE are
 * deprecated (answered ERR_CHUNK unless the 2005 draft was negotiated), and RDMA_ERROR is not a
 * call. RFC 8166 section 4.5: a message shorter than 28 bytes is discarded before any parsing
 * (its xid cannot be trusted). svcrdma answers one of 16 to 27 bytes ERR_CHUNK instead; rpcr
 * follows the RFC (doc/xprt.md). Messages whose chunks name memory the peer never registered
 * make the server's RDMA Read fail, and with it the connection.
 */
static const struct {
	const char *name, *want;
	struct want_ctr ctr;
} v1_wants[] = {
	{"v1_msg_empty", "no reply", CTR_DROP_MSG}, /* a header and no RPC message */
	{"v1_msg_chunks", "connection dropped", CTR_RDMA_FAIL},
	{"v1_nomsg_pos0", "connection dropped", CTR_RDMA_FAIL},
	{"v1_nomsg_reply", "RDMA_ERROR ERR_CHUNK", CTR_ERROR}, /* NOMSG, no position zero */
	{"v1_msgp", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_done", "no reply", CTR_DROP_MSG}, /* 16 bytes */
	{"v1_err_vers", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_err_chunk", "no reply", CTR_DROP_MSG}, /* 20 bytes */
	{"v1_err_chunk_draft", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_err_unknown", "no reply", CTR_DROP_MSG},           /* 20 bytes */
	{"v1_bad_vers", "RDMA_ERROR ERR_VERS 1..2", CTR_ERROR}, /* (the range served) */
	{"v1_bad_proc", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_bad_discrim", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_bad_count", "RDMA_ERROR ERR_CHUNK", CTR_ERROR},
	{"v1_short", "no reply", CTR_DROP_MSG},
};

/*
 * The RPC call headers, each after a 28-byte RDMA_MSG header with the same xid. The engine
 * answers what RFC 5531 gives it words for: RPC_MISMATCH 2..2, PROG_UNAVAIL, AUTH_ERROR for a
 * credential over 400 bytes; a message that is a reply is a reverse-direction reply matching
 * nothing (RFC 8167), dropped. The test program's ECHO without its argument is GARBAGE_ARGS.
 */
static const struct {
	const char *name, *want;
	struct want_ctr ctr;
} call_wants[] = {
	{"call_null_none", "PROG_UNAVAIL", CTR_RPC}, /* program 100003: not served here */
	{"call_authsys", "GARBAGE_ARGS", CTR_RPC},   /* the test program's ECHO, no data */
	{"call_gss", "PROG_UNAVAIL", CTR_RPC},
	{"call_bad_rpcvers", "RPC_MISMATCH 2..2", CTR_RPC},
	{"call_cred_too_big", "AUTH_ERROR AUTH_BADCRED", CTR_RPC},
	{"call_not_call", "no reply", CTR_UNMATCHED}, /* msg_type REPLY: reverse direction */
};

static const char *
want_of(const char *name, struct want_ctr *ctr)
{
	size_t i;

	for (i = 0; i < RTE_DIM(v1_wants); i++)
		if (strcmp(v1_wants[i].name, name) == 0) {
			*ctr = v1_wants[i].ctr;
			return v1_wants[i].want;
		}
	for (i = 0; i < RTE_DIM(call_wants); i++)
		if (strcmp(call_wants[i].name, name) == 0) {
			*ctr = call_wants[i].ctr;
			return call_wants[i].want;
		}
	return NULL;
}

static void
group_goldens(void)
{
	struct raw rw;
	size_t i;
	bool open = false;

	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		struct want_ctr ctr = CTR_ERROR;
		const char *want = NULL;
		static uint8_t m[8192];
		uint32_t len = 0, xid = 0;

		switch (g->family) {
		case RPCR_GOLDEN_V1:
			want = want_of(g->name, &ctr);
			memcpy(m, g->bytes, g->len);
			len = (uint32_t)g->len;
			break;
		case RPCR_GOLDEN_V2:
		case RPCR_GOLDEN_XCHAR:
			/* Version 2 (and its extension) on a connection of version 1 (its first
			 * message's): ERR_VERS with the range served, in the message's version
			 * (version 2's group: group_v2). */
			want = g->len >= 8 && rpcr_xdr_load32(g->bytes + 4) == RPCR_PROTO_V2_VERS
				       ? "RDMA2_ERR_VERS 1..2"
				       : "RDMA_ERROR ERR_VERS 1..2"; /* (version 3: ours) */
			memcpy(m, g->bytes, g->len);
			len = (uint32_t)g->len;
			break;
		case RPCR_GOLDEN_CALL:
		case RPCR_GOLDEN_REPLY: {
			/* After an RDMA_MSG header; replies are reverse-direction replies that match
			 * no call of the server's: dropped (unmatched). */
			uint32_t w[7] = {rpcr_xdr_load32(g->bytes), 1, 8, 0, 0, 0, 0};

			if (g->family == RPCR_GOLDEN_CALL) {
				want = want_of(g->name, &ctr);
			} else {
				want = "no reply";
				ctr = CTR_UNMATCHED;
			}
			len = raw_put_words(m, w, 7);
			memcpy(m + len, g->bytes, g->len);
			len += (uint32_t)g->len;
			break;
		}
		default:
			continue; /* (CM: group cm; AUTH_SYS, CONF_RDMA: group rpc) */
		}
		/* RFC 8166 section 4.5: a transport header under 28 bytes is discarded before any
		 * parsing (this server has not negotiated the 2005 draft's 16-byte RDMA_DONE). */
		if (g->family != RPCR_GOLDEN_CALL && g->family != RPCR_GOLDEN_REPLY && len < 28) {
			want = "no reply";
			ctr = CTR_DROP_MSG;
		}
		if (want == NULL) {
			fprintf(stderr, "golden %s: no expectation written here\n", g->name);
			CHECK(false);
			continue;
		}
		xid = rpcr_xdr_load32(m);
		if (!open) {
			if (raw_new(&rw, NULL) != 0)
				return;
			open = true;
		}
		one(&rw, cname("golden/%s", g->name), m, len, xid, want, ctr);
		if (strcmp(want, "connection dropped") == 0) {
			raw_done(&rw);
			open = false;
		}
	}
	if (open)
		raw_done(&rw);
}

/* RFC 8797 private data as the golden CM messages have it, and none at all: the server accepts
 * each (unrecognised private data is as none, 1024-byte inline sizes) and serves a call. */
static void
group_cm(void)
{
	size_t i;

	for (i = 0; i <= rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = i < rpcr_goldens_count ? &rpcr_goldens[i] : NULL;
		struct raw_conf rc = {.no_pdata = g == NULL};
		struct hcase c;
		struct raw rw;
		uint8_t m[128], r[8192];
		char got[160] = "not connected";
		int n;

		if (g != NULL && (g->family != RPCR_GOLDEN_CM || g->len > RPCR_RDEV_PDATA_MAX))
			continue;
		if (g != NULL) {
			rc.pdata = g->bytes;
			rc.pdata_len = (uint8_t)g->len;
		}
		case_begin(&c, g != NULL ? cname("cm/%s", g->name) : "cm/none");
		if (raw_new(&rw, &rc) == 0) {
			CHECK_EQ(raw_send(&rw, m, raw_null_call(m, 0xc0000000u + (uint32_t)i, 2)),
				 RPCR_RDEV_WC_SUCCESS);
			n = raw_recv(&rw, r, 3000);
			if (n > 0)
				describe(r, n, 0xc0000000u + (uint32_t)i, RPCR_PROTO_V1_VERS, 0,
					 got, sizeof(got));
			else
				snprintf(got, sizeof(got), "no answer (%d)", n);
			raw_done(&rw);
		}
		case_end(&c, "SUCCESS", got, CTR_RPC, GOOD_MAX_MS);
	}
}

/* ---- group: version 2 ---- */

/* Version 2's answers that are not a decoder's (no malformed header counted). */
#define CTR_V2_ERROR ((struct want_ctr){1, 0, 0, 0})
/* Two of them: a continuation broken by another message (each answered INVAL_CONT). */
#define CTR_V2_ERROR2 ((struct want_ctr){2, 0, 0, 0})

/* Open @rw as a version-2 connection: a version-2 NULL call first, answered by the server's
 * RDMA2_CONNPROP (its first message, §6.3.4) and then SUCCESS. @return 0. */
static int
v2_open(struct raw *rw, const char *name)
{
	static uint8_t r[16384];
	char got[256] = "nothing", a[128] = "nothing";
	uint8_t m[256];
	uint32_t xid = ++probe_xid;
	struct hcase c;
	int n;

	case_begin(&c, name);
	if (raw_new(rw, NULL) != 0)
		return -1;
	rw->vers = RPCR_PROTO_V2_VERS;
	CHECK_EQ(raw_send(rw, m, null_call(rw, m, xid)), RPCR_RDEV_WC_SUCCESS);
	n = raw_recv(rw, r, 3000);
	if (n > 0)
		describe(r, n, xid, RPCR_PROTO_V2_VERS, RPCR_PROTO_V2_VERS, got, sizeof(got));
	n = raw_recv(rw, r, 3000);
	if (n > 0)
		describe(r, n, xid, RPCR_PROTO_V2_VERS, RPCR_PROTO_V2_VERS, a, sizeof(a));
	snprintf(got + strlen(got), sizeof(got) - strlen(got), ", then %s", a);
	case_end(&c, "RDMA2_CONNPROP, then SUCCESS", got, CTR_RPC, GOOD_MAX_MS);
	return 0;
}

/*
 * What a server of versions 1 and 2 answers each version-2 and xcharext golden message with, on a
 * connection of version 2 (draft §7, doc/rpcrdma-v2.md): a header that does not decode gets the
 * code doc/proto.md's table gives; a message too short for the prefix goes unanswered; an
 * RDMA2_ERROR, or any message with RESPONSE set, is a reply to nothing the server asked (no
 * requester on a server's version-2 connection): dropped, unmatched; a credit refresh is taken
 * silently; a continued message's first part waits for the rest, and the next message (the
 * probe) breaks it (both INVAL_CONT); transport properties are
 * applied (a complete set closes them: the next is INVAL_HTYPE); the xcharext operations go in
 * rpcr's OPTIONAL carrier, taken as v2_want_of() says.
 */
static const struct {
	const char *name, *want;
	struct want_ctr ctr;
} v2_wants[] = {
	{"v2_msg_empty", "no reply", CTR_DROP_MSG},
	{"v2_msg_chunks", "connection dropped", CTR_RDMA_FAIL},
	{"v2_msg_response", "no reply", CTR_UNMATCHED},
	{"v2_nomsg_refresh", "no reply", CTR_RPC},
	/* (the probe after it breaks it: both answered, §6.2.2.2) */
	{"v2_msg_more", "RDMA2_ERR_INVAL_CONT", CTR_V2_ERROR2},
	{"v2_err_vers", "no reply", CTR_UNMATCHED},
	{"v2_err_bad_xdr", "no reply", CTR_UNMATCHED},
	{"v2_err_bad_propval", "no reply", CTR_UNMATCHED},
	{"v2_err_inval_htype", "no reply", CTR_UNMATCHED},
	{"v2_err_inval_cont", "no reply", CTR_UNMATCHED},
	{"v2_err_read_chunks", "no reply", CTR_UNMATCHED},
	{"v2_err_write_chunks", "no reply", CTR_UNMATCHED},
	{"v2_err_segments", "no reply", CTR_UNMATCHED},
	{"v2_err_write_resource", "no reply", CTR_UNMATCHED},
	{"v2_err_reply_resource", "no reply", CTR_UNMATCHED},
	{"v2_err_system", "no reply", CTR_UNMATCHED},
	{"v2_err_unknown", "no reply", CTR_UNMATCHED},
	{"v2_connprop", "no reply", CTR_RPC},
	{"v2_connprop_tpmore", "RDMA2_ERR_INVAL_HTYPE", CTR_V2_ERROR}, /* (after a complete set) */
	{"v2_bad_propval_len", "RDMA2_ERR_BAD_PROPVAL", CTR_ERROR},
	{"v2_bad_propval_brs", "RDMA2_ERR_BAD_PROPVAL", CTR_ERROR},
	{"v2_bad_propval_hostauth", "RDMA2_ERR_BAD_PROPVAL", CTR_ERROR},
	{"v2_propval_overrun", "RDMA2_ERR_BAD_PROPVAL", CTR_ERROR},
	{"v2_tpmore_on_msg", "RDMA2_ERR_INVAL_HTYPE", CTR_ERROR},
	{"v2_more_on_nomsg", "RDMA2_ERR_INVAL_CONT", CTR_ERROR},
	/* (the xid of v2_more_on_nomsg, whose error left its other parts to discard, §7) */
	{"v2_more_with_chunks", "no reply", CTR_DROP_MSG},
	{"v2_bad_htype", "RDMA2_ERR_INVAL_HTYPE", CTR_ERROR},
	{"v2_short", "no reply", CTR_DROP_MSG},
	{"v2_bad_vers", "RDMA2_ERR_VERS 1..2", CTR_ERROR},
};

static const char *
v2_want_of(const struct rpcr_golden *g, struct want_ctr *ctr)
{
	size_t i;

	if (g->family == RPCR_GOLDEN_XCHAR) {
		/* The transport characteristics (lib/xprt/xchar.c): INIT and UPD taken silently, a
		 * REQ answered (RBSIZ 16384: more than a receive buffer, rejected), a RESP to
		 * nothing asked unmatched, bodies that do not decode their code, an operation not
		 * known INVAL_HTYPE. */
		static const struct {
			const char *name, *want;
			struct want_ctr ctr;
		} xw[] = {
			{"xchar_init", "no reply", CTR_RPC},
			{"xchar_req", "RESP_XCHAR done 0x0 rej 0x1 pend 0x0", CTR_RPC},
			{"xchar_resp", "no reply", CTR_UNMATCHED},
			{"xchar_upd", "no reply", CTR_RPC},
			{"xchar_bad_bool", "RDMA2_ERR_BAD_PROPVAL", CTR_ERROR},
			{"xchar_bad_pendclr", "RDMA2_ERR_BAD_XDR", CTR_ERROR},
			{"xchar_bad_op", "RDMA2_ERR_INVAL_HTYPE", CTR_V2_ERROR},
			{"xchar_trailing", "RDMA2_ERR_BAD_XDR", CTR_ERROR},
		};

		for (i = 0; i < RTE_DIM(xw); i++)
			if (strcmp(xw[i].name, g->name) == 0) {
				*ctr = xw[i].ctr;
				return xw[i].want;
			}
		return NULL;
	}
	for (i = 0; i < RTE_DIM(v2_wants); i++)
		if (strcmp(v2_wants[i].name, g->name) == 0) {
			*ctr = v2_wants[i].ctr;
			return v2_wants[i].want;
		}
	return NULL;
}

/*
 * Version 2's message continuation abused (§4.4.2, §6.2.2.2, §7.1.3; lib/xprt/cont.c): a
 * message in parts is served once whole (an ECHO of 6000 bytes granting its reply 2 Sends comes
 * back in parts); another xid in the middle of one breaks it (both answered INVAL_CONT, the
 * rest of the broken one discarded silently); one longer than a reassembly buffer is SYSTEM
 * when it goes over, its rest discarded; an RDMA2_CONNPROP in parts is taken whole; the
 * well-behaved client goes on throughout.
 */
static void
v2_cont_abuse(struct raw *rw, uint32_t *xid)
{
	static uint8_t m[8192];
	static struct wbuf b;
	uint32_t a, i, k;

	/* ECHO of 6000 bytes in two parts of 3000, granting the reply 2 Sends. */
	a = ++*xid;
	put_v2_plain(&b, a, RPCR_PROTO_V2_F_MORE);
	b.w[2] = 8u << 16 | 2;
	put_call(&b, a, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_ECHO);
	put(&b, 6000);
	for (i = 0; i < (3000 - 44) / 4; i++)
		put(&b, 0x01010101u * i);
	CHECK_EQ(raw_send(rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	put_v2_plain(&b, a, 0);
	b.w[2] = 8u << 16 | 2;
	for (i = 0; i < (6000 - (3000 - 44)) / 4; i++)
		put(&b, 0x02020202u * i);
	onew(rw, "v2/cont/echo_6000_in_parts", &b, "SUCCESS", CTR_RPC);
	/* Another xid in the middle: both answered INVAL_CONT; the broken one's last part
	 * dropped silently. */
	a = ++*xid;
	put_v2_plain(&b, a, RPCR_PROTO_V2_F_MORE);
	put_call(&b, a, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
	CHECK_EQ(raw_send(rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	put_v2_plain(&b, ++*xid, 0);
	put_call(&b, *xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
	one(rw, "v2/cont/another_xid_in_the_middle", m, wbytes(&b, m), a, "RDMA2_ERR_INVAL_CONT",
	    CTR_V2_ERROR2);
	put_v2_plain(&b, a, 0);
	onew(rw, "v2/cont/the_broken_ones_last_part", &b, "no reply", CTR_RPC);
	/* The last part of another type: INVAL_CONT. */
	a = ++*xid;
	put_v2_plain(&b, a, RPCR_PROTO_V2_F_MORE);
	put_call(&b, a, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
	CHECK_EQ(raw_send(rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	put_v2_plain(&b, a, 0);
	b.w[3] = RPCR_PROTO_V2_NOMSG;
	onew(rw, "v2/cont/last_part_nomsg", &b, "RDMA2_ERR_INVAL_CONT", CTR_V2_ERROR);
	/* Over a reassembly buffer (61440 bytes): 15 parts of 4000, then the 16th: SYSTEM; its
	 * last part dropped silently. */
	a = ++*xid;
	for (k = 0; k < 16; k++) {
		put_v2_plain(&b, a, RPCR_PROTO_V2_F_MORE);
		for (i = 0; i < 1000; i++)
			put(&b, k == 0 && i == 0 ? a : 0);
		if (k < 15)
			CHECK_EQ(raw_send(rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	}
	onew(rw, "v2/cont/over_61440_bytes", &b, "RDMA2_ERR_SYSTEM", CTR_V2_ERROR);
	put_v2_plain(&b, a, 0);
	onew(rw, "v2/cont/over_61440_bytes_last_part", &b, "no reply", CTR_RPC);
	/* An RDMA2_CONNPROP in three parts, cut inside its properties (RBSIZ 4096, and one rpcr
	 * does not know of 300 bytes), TPMORE on the last (more may come): reassembled and taken
	 * as one, nothing answered. */
	a = ++*xid;
	for (k = 0; k < 3; k++) {
		b.n = 0;
		put(&b, a);
		put(&b, RPCR_PROTO_V2_VERS);
		put(&b, 8u << 16 | 1);
		put(&b, RPCR_PROTO_V2_CONNPROP);
		put(&b, k < 2 ? RPCR_PROTO_V2_F_MORE : RPCR_PROTO_V2_F_TPMORE);
		if (k == 0) {
			put(&b, 2);
			put(&b, RPCR_PROTO_V2_PROP_RBSIZ);
			put(&b, 4);
			put(&b, 4096);
			put(&b, 200);
			put(&b, 300);
		}
		for (i = 0; i < (k == 0 ? 20u : k == 1 ? 40u : 15u); i++)
			put(&b, 0x5a5a5a5au);
		if (k < 2)
			CHECK_EQ(raw_send(rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	}
	onew(rw, "v2/cont/connprop_in_parts", &b, "no reply", CTR_RPC);
}

/*
 * Version 2 on connections whose first message was version 2 (this server serves versions 1 and
 * 2): its properties abused, its headers cut at every word and given each field's wrong values,
 * a version-1 message on it, too many chunks and segments, then every version-2 and xcharext
 * golden message. Each answer is the draft's (§5.1, §6.2.2, §7), and the well-behaved client
 * (version 1) goes on throughout.
 */
static void
group_v2(void)
{
	static uint8_t m[8192];
	struct wbuf b;
	struct raw rw;
	uint32_t i, k, xid = 0x5b000000;
	bool open;

	if (v2_open(&rw, "v2/open") != 0)
		return;
	/* Properties (§5.1): values rpcr does not take, then a set it does, in two parts. */
	{
		static const uint32_t bad[][2] = {{RPCR_PROTO_V2_PROP_RBSIZ, 100},
						  {RPCR_PROTO_V2_PROP_SBSIZ, 512},
						  {RPCR_PROTO_V2_PROP_RSSIZ, 1},
						  {RPCR_PROTO_V2_PROP_RCSIZ, 0}};

		for (i = 0; i < RTE_DIM(bad); i++) {
			b.n = 0;
			put(&b, ++xid);
			put(&b, RPCR_PROTO_V2_VERS);
			put(&b, 1);
			put(&b, RPCR_PROTO_V2_CONNPROP);
			put(&b, RPCR_PROTO_V2_F_TPMORE);
			put(&b, 1);
			put(&b, bad[i][0]);
			put(&b, 4);
			put(&b, bad[i][1]);
			onew(&rw, cname("v2/property_%u_value_%u", bad[i][0], bad[i][1]), &b,
			     "RDMA2_ERR_BAD_PROPVAL", CTR_V2_ERROR);
		}
		/* More properties than the server reads in one message (16): SYSTEM, its own
		 * limit (§7.4.1). */
		b.n = 0;
		put(&b, ++xid);
		put(&b, RPCR_PROTO_V2_VERS);
		put(&b, 1);
		put(&b, RPCR_PROTO_V2_CONNPROP);
		put(&b, RPCR_PROTO_V2_F_TPMORE);
		put(&b, 40);
		for (i = 0; i < 40; i++) {
			put(&b, 100 + i);
			put(&b, 0);
		}
		onew(&rw, "v2/properties_40", &b, "RDMA2_ERR_SYSTEM", CTR_ERROR);
		/* A property count past the message. */
		b.n = 0;
		put(&b, ++xid);
		put(&b, RPCR_PROTO_V2_VERS);
		put(&b, 1);
		put(&b, RPCR_PROTO_V2_CONNPROP);
		put(&b, 0);
		put(&b, 0xffffffffu);
		onew(&rw, "v2/properties_count_ffffffff", &b, "RDMA2_ERR_BAD_XDR", CTR_ERROR);
	}
	/* Truncations of a version-2 NULL call's header at every word: under the 20-byte prefix,
	 * unanswered; within the header, BAD_XDR. */
	for (k = 0; k < RPCR_PROTO_V2_HDR_MIN; k += 4) {
		put_v2_plain(&b, ++xid, 0);
		wbytes(&b, m);
		if (k < RPCR_PROTO_V2_PREFIX)
			one(&rw, cname("v2/truncated/%u_bytes", k), m, k, xid, "no reply",
			    CTR_DROP_MSG);
		else
			one(&rw, cname("v2/truncated/%u_bytes", k), m, k, xid, "RDMA2_ERR_BAD_XDR",
			    CTR_ERROR);
	}
	/* Each field of the prefix wrong. */
	{
		static const uint32_t htypes[] = {2, 3, 6, 0x80000000u, 0xffffffffu};

		for (i = 0; i < RTE_DIM(htypes); i++) {
			put_v2_plain(&b, ++xid, 0);
			b.w[3] = htypes[i];
			put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
			onew(&rw, cname("v2/htype/%u", htypes[i]), &b, "RDMA2_ERR_INVAL_HTYPE",
			     CTR_ERROR);
		}
		/* Reserved flags: ignored (§6.2.2); MORE: the message continues, served once its
		 * last part is in (§4.4.2; the continuation group has the abuse); TPMORE on a
		 * call: INVAL_HTYPE; RESPONSE on a call: a reply to nothing, dropped. */
		put_v2_plain(&b, ++xid, 0x80000000u);
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/flags/reserved", &b, "SUCCESS", CTR_RPC);
		put_v2_plain(&b, ++xid, RPCR_PROTO_V2_F_MORE);
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
		put_v2_plain(&b, xid, 0);
		onew(&rw, "v2/flags/more_then_its_last_part", &b, "SUCCESS", CTR_RPC);
		put_v2_plain(&b, ++xid, RPCR_PROTO_V2_F_TPMORE);
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/flags/tpmore", &b, "RDMA2_ERR_INVAL_HTYPE", CTR_ERROR);
		put_v2_plain(&b, ++xid, RPCR_PROTO_V2_F_RESPONSE);
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/flags/response", &b, "no reply", CTR_UNMATCHED);
		/* A handle to invalidate that no chunk names: not taken, the call served. */
		put_v2_plain(&b, ++xid, 0);
		b.w[5] = 0x1234;
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/inv_handle_of_no_chunk", &b, "SUCCESS", CTR_RPC);
		/* The credit word: 0 both halves (a grant of at least 1 comes back), all ones. */
		put_v2_plain(&b, ++xid, 0);
		b.w[2] = 0;
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/credit/0", &b, "SUCCESS", CTR_RPC);
		put_v2_plain(&b, ++xid, 0);
		b.w[2] = 0xffffffffu;
		put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, 0);
		onew(&rw, "v2/credit/ffffffff", &b, "SUCCESS", CTR_RPC);
	}
	/* Version 1 on a connection of version 2: ERR_VERS with the range, in version 1's format
	 * (the message's version, §7). */
	msg_call(&b, ++xid, 0);
	onew(&rw, "v2/version_1_message", &b, "RDMA_ERROR ERR_VERS 1..2", CTR_ERROR);
	/* Too many read segments, write chunks, segments of a chunk: the limits with their arms. */
	put_v2_plain(&b, ++xid, 0);
	b.n = 6; /* (after the handle) */
	for (i = 0; i < 40; i++)
		put_read(&b, 44, 0x100 + i, 8, 0x1000u * i);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_ECHO);
	onew(&rw, "v2/read_segments_40", &b, "RDMA2_ERR_READ_CHUNKS max 8", CTR_LIMIT);
	put_v2_plain(&b, ++xid, 0);
	b.n = 7; /* (after the read list) */
	for (i = 0; i < 9; i++) {
		put(&b, 1);
		put(&b, 1);
		put_seg(&b, 0x200 + i, 8, 0x2000u * i);
	}
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_READ);
	onew(&rw, "v2/write_chunks_9", &b, "RDMA2_ERR_WRITE_CHUNKS max 8", CTR_LIMIT);
	put_v2_plain(&b, ++xid, 0);
	b.n = 7;
	put(&b, 1);
	put(&b, 33);
	for (i = 0; i < 33; i++)
		put_seg(&b, 0x300 + i, 8, 0x3000u * i);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_READ);
	onew(&rw, "v2/write_chunk_segments_33", &b, "RDMA2_ERR_SEGMENTS max 32", CTR_LIMIT);
	/* Resources (§7.3.4, §7.3.5): a READ of 2000 bytes into a write chunk of 100, and a READ
	 * of 6000 bytes with no chunk to put it in (longer than a Send): the error names what
	 * the reply needs; nothing is written. */
	put_v2_plain(&b, ++xid, 0);
	b.n = 7;
	put(&b, 1);
	put(&b, 1);
	put_seg(&b, 0x400, 100, 0x4000);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_READ);
	put(&b, 2000);
	onew(&rw, "v2/write_chunk_too_small", &b, "RDMA2_ERR_WRITE_RESOURCE chunk 1 needs 2000",
	     CTR_V2_ERROR);
	put_v2_plain(&b, ++xid, 0);
	put_call(&b, xid, RPCR_TESTPROG, RPCR_TESTPROG_VERS, RPCR_TESTPROG_READ);
	put(&b, 6000);
	onew(&rw, "v2/reply_with_nowhere_to_go", &b, "RDMA2_ERR_REPLY_RESOURCE needs 6028",
	     CTR_V2_ERROR);
	v2_cont_abuse(&rw, &xid);
	raw_done(&rw);

	/* The golden messages, in order, on version-2 connections. */
	if (v2_open(&rw, "v2/open_for_goldens") != 0)
		return;
	open = true;
	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		struct want_ctr ctr = CTR_ERROR;
		const char *want;

		if (g->family != RPCR_GOLDEN_V2 && g->family != RPCR_GOLDEN_XCHAR)
			continue;
		want = v2_want_of(g, &ctr);
		if (want == NULL) {
			fprintf(stderr, "golden %s: no expectation written here\n", g->name);
			CHECK(false);
			continue;
		}
		if (!open) {
			if (v2_open(&rw, cname("v2/open_after_%s", g->name)) != 0)
				return;
			open = true;
		}
		memcpy(m, g->bytes, g->len);
		one(&rw, cname("v2/golden/%s", g->name), m, (uint32_t)g->len,
		    g->len >= 4 ? rpcr_xdr_load32(m) : 0, want, ctr);
		if (strcmp(want, "connection dropped") == 0) {
			raw_done(&rw);
			open = false;
		}
	}
	if (open)
		raw_done(&rw);
}

/* ---- group: transport-header shapes made by hand ---- */

/*
 * RDMA_MSG with every list: a read chunk (one segment), a write list of one chunk of two segments,
 * a reply chunk of one segment, no RPC message: 28 words. No prefix of it is a header.
 */
static void
full_header(struct wbuf *b, uint32_t xid)
{
	put_fixed(b, xid, 1, 8, RPCR_PROTO_V1_MSG);
	put_read(b, 44, 0x1111, 100, 0x1000);
	put(b, 0);
	put(b, 1);
	put(b, 2);
	put_seg(b, 0x2222, 4096, 0x2000);
	put_seg(b, 0x2223, 4096, 0x3000);
	put(b, 0);
	put(b, 1);
	put(b, 1);
	put_seg(b, 0x3333, 8192, 0x4000);
}

static void
group_shapes(void)
{
	struct raw rw;
	struct wbuf b;
	uint8_t m[8192];
	uint32_t i, k, xid = 0x5a000000;

	if (raw_new(&rw, NULL) != 0)
		return;

	/* Truncations at every field of a header with every list, and inside words. */
	full_header(&b, 0);
	for (k = 0; k < b.n * 4; k++) {
		if (k >= 8 && k % 4 != 0 && k != b.n * 4 - 1)
			continue;
		full_header(&b, ++xid);
		wbytes(&b, m);
		/* RFC 8166 section 4.5: under 28 bytes, discarded before any parsing. */
		if (k < 28)
			one(&rw, cname("truncated/%u_bytes", k), m, k, xid, "no reply",
			    CTR_DROP_MSG);
		else
			one(&rw, cname("truncated/%u_bytes", k), m, k, xid, "RDMA_ERROR ERR_CHUNK",
			    CTR_ERROR);
	}

	/* Versions other than 1, with a whole header after them. */
	{
		static const uint32_t vers[] = {0, 2, 3, 0x80000001u, 0xffffffffu};

		for (i = 0; i < RTE_DIM(vers); i++) {
			put_fixed(&b, ++xid, vers[i], 8, RPCR_PROTO_V1_MSG);
			put(&b, 0);
			put(&b, 0);
			put(&b, 0);
			/* (The range served; in version 2's format for a message of version 2.) */
			onew(&rw, cname("version/%u", vers[i]), &b,
			     vers[i] == RPCR_PROTO_V2_VERS ? "RDMA2_ERR_VERS 1..2"
							   : "RDMA_ERROR ERR_VERS 1..2",
			     CTR_ERROR);
		}
	}
	/* Message types that do not exist. */
	{
		static const uint32_t procs[] = {5, 6, 0x80000000u, 0xffffffffu};

		for (i = 0; i < RTE_DIM(procs); i++) {
			put_fixed(&b, ++xid, 1, 8, procs[i]);
			put(&b, 0);
			put(&b, 0);
			put(&b, 0);
			onew(&rw, cname("proc/%u", procs[i]), &b, "RDMA_ERROR ERR_CHUNK",
			     CTR_ERROR);
		}
	}
	/* List discriminators that are not XDR booleans, at each list and inside one. */
	{
		static const struct {
			const char *name;
			uint32_t w[12];
			uint32_t n;
		} d[] = {
			{"read_list_2", {2, 0, 0}, 3},
			{"write_list_ffffffff", {0, 0xffffffffu, 0}, 3},
			{"reply_chunk_2", {0, 0, 2}, 3},
			{"read_list_next_3", {1, 0, 0x1111, 0, 0, 0, 3, 0, 0}, 9},
			{"write_list_next_7", {0, 1, 1, 0x2222, 8, 0, 0, 7, 0}, 9},
		};

		for (i = 0; i < RTE_DIM(d); i++) {
			put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
			for (k = 0; k < d[i].n; k++)
				put(&b, d[i].w[k]);
			onew(&rw, cname("discriminator/%s", d[i].name), &b, "RDMA_ERROR ERR_CHUNK",
			     CTR_ERROR);
		}
	}
	/* Beyond what the server accepts in a call (xprt_internal.h: 32 read segments, 8 read
	 * chunks, 8 write chunks, 64 write and reply segments in all). */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	for (i = 0; i < 33; i++)
		put_read(&b, 4 * i + 4, 0x1111, 8, 0x1000);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "capacity/33_read_segments", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	for (i = 0; i < 9; i++)
		put_read(&b, 100 + 8 * i, 0x1111, 8, 0x1000);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "capacity/9_read_chunks", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	for (i = 0; i < 9; i++) {
		put(&b, 1);
		put(&b, 1);
		put_seg(&b, 0x2222, 64, 0x1000);
	}
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "capacity/9_write_chunks", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 1);
	put(&b, 65);
	for (i = 0; i < 65; i++)
		put_seg(&b, 0x2222, 64, 0x1000);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "capacity/65_segments_in_a_write_chunk", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	for (k = 0; k < 2; k++) {
		put(&b, 1);
		put(&b, 40);
		for (i = 0; i < 40; i++)
			put_seg(&b, 0x2222, 64, 0x1000);
	}
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "capacity/80_write_segments_in_all", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 0);
	put(&b, 1);
	put(&b, 65);
	for (i = 0; i < 65; i++)
		put_seg(&b, 0x3333, 64, 0x1000);
	onew(&rw, "capacity/65_reply_chunk_segments", &b, "RDMA_ERROR ERR_CHUNK", CTR_LIMIT);

	/* Counts and lengths that no buffer could hold. */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 1);
	put(&b, 0xffffffffu);
	put_seg(&b, 0x2222, 64, 0x1000);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "huge/write_segment_count_ffffffff", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 0);
	put(&b, 1);
	put(&b, 0x10000000u);
	put_seg(&b, 0x3333, 64, 0x1000);
	onew(&rw, "huge/reply_segment_count_10000000", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	{
		static const struct {
			const char *name;
			uint32_t len[2];
			uint32_t n;
		} h[] = {
			{"read_length_ffffffff", {0xffffffffu, 0}, 1},
			{"read_lengths_sum_past_4GiB", {0x80000000u, 0x80000000u}, 2},
			{"read_length_1GiB", {0x40000000u, 0}, 1},
			{"read_length_200MiB", {200u << 20, 0}, 1},
		};

		for (i = 0; i < RTE_DIM(h); i++) {
			put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
			for (k = 0; k < h[i].n; k++)
				put_read(&b, 44, 0x1111, h[i].len[k], 0x1000);
			put(&b, 0);
			put(&b, 0);
			put(&b, 0);
			put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_WRITE);
			put(&b, h[i].len[0]);
			onew(&rw, cname("huge/%s", h[i].name), &b, "RDMA_ERROR ERR_CHUNK",
			     CTR_LIMIT);
		}
	}
	/* A position-zero chunk longer than a bulk buffer (a long call is at most 60 KiB), and
	 * one of 0 bytes. */
	for (k = 0; k < 2; k++) {
		put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_NOMSG);
		put_read(&b, 0, 0x1111, k == 0 ? 64u << 10 : 0, 0x1000);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		onew(&rw, k == 0 ? "huge/position_zero_64KiB" : "nomsg/position_zero_0_bytes", &b,
		     "RDMA_ERROR ERR_CHUNK", k == 0 ? CTR_LIMIT : CTR_ERROR);
	}
	/* Positions that are not a multiple of 4 (RFC 8166 section 3.4.5: XDR positions). */
	{
		static const uint32_t pos[] = {2, 6, 45, 0xfffffffdu};

		for (i = 0; i < RTE_DIM(pos); i++) {
			put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
			put_read(&b, pos[i], 0x1111, 100, 0x1000);
			put(&b, 0);
			put(&b, 0);
			put(&b, 0);
			put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_WRITE);
			put(&b, 100);
			onew(&rw, cname("position/%u", pos[i]), &b, "RDMA_ERROR ERR_CHUNK",
			     CTR_ERROR);
		}
	}
	/* RDMA_NOMSG with no chunk at all, and with a read chunk but none at position zero. */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_NOMSG);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "nomsg/no_chunks", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_NOMSG);
	put_read(&b, 44, 0x1111, 100, 0x1000);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "nomsg/no_position_zero", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	/* The 2005 draft's messages on a connection that did not negotiate them, and an
	 * RDMA_ERROR from a client. */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSGP);
	put(&b, 64);
	put(&b, 1024);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, 1, 0);
	onew(&rw, "negotiation/msgp", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_DONE);
	/* (16 bytes: RFC 8166 section 4.5, shorter than 28 bytes, discarded.) */
	onew(&rw, "negotiation/done", &b, "no reply", CTR_DROP_MSG);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_ERROR);
	put(&b, RPCR_PROTO_V1_ERR_CHUNK);
	onew(&rw, "negotiation/rdma_error_from_a_client", &b, "no reply", CTR_DROP_MSG);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_ERROR);
	put(&b, RPCR_PROTO_V1_ERR_VERS);
	put(&b, 1);
	put(&b, 1);
	onew(&rw, "negotiation/rdma_error_vers_from_a_client", &b, "RDMA_ERROR ERR_CHUNK",
	     CTR_ERROR);

	/*
	 * RFC 8166 section 4.5: an rdma_xid that does not match the RPC message's XID is an XDR
	 * error, answered ERR_CHUNK; on the straight-line path (a NULL call of the program called
	 * last) and the general one (an AUTH_SYS credential).
	 */
	{
		/* (Not a case: a first call, so that the next takes the straight-line path.) */
		static uint8_t m0[256];
		char got[160];

		msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
		answer_of(&rw, m0, wbytes(&b, m0), xid, got, sizeof(got));
		CHECK(strcmp(got, "SUCCESS") == 0);
	}
	msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
	b.w[7] = xid ^ 0x00ff0000u;
	onew(&rw, "xid/mismatch_straight_line", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);
	msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
	b.w[7] = xid ^ 0x00ff0000u;
	b.w[13] = RPCR_ONCRPC_AUTH_SYS;
	b.w[14] = 20;
	b.n = 15;
	for (i = 0; i < 5; i++)
		put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "xid/mismatch_general", &b, "RDMA_ERROR ERR_CHUNK", CTR_ERROR);

	/* Credit requests of 0 and of 2^32 - 1: never a grant of 0, never more than the server's
	 * credits (RFC 8166 section 3.3.1); describe() says when. */
	msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
	b.w[2] = 0;
	onew(&rw, "credit/asks_0", &b, "SUCCESS", CTR_RPC);
	msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
	b.w[2] = 0xffffffffu;
	onew(&rw, "credit/asks_ffffffff", &b, "SUCCESS", CTR_RPC);

	raw_done(&rw);
}

/* ---- group: RPC call headers and arguments ---- */

static void
group_rpc(void)
{
	struct region ok_reg;
	struct raw rw;
	struct wbuf b;
	uint32_t i, xid = 0x6b000000;

	if (raw_new(&rw, NULL) != 0)
		return;
	/* RPC versions other than 2: MSG_DENIED RPC_MISMATCH 2..2 (RFC 5531 section 9). */
	{
		static const uint32_t v[] = {0, 1, 3, 0xffffffffu};

		for (i = 0; i < RTE_DIM(v); i++) {
			msg_call(&b, ++xid, RPCR_TESTPROG_NULL);
			b.w[9] = v[i];
			onew(&rw, cname("rpc/rpcvers_%u", v[i]), &b, "RPC_MISMATCH 2..2", CTR_RPC);
		}
	}
	msg_call(&b, ++xid, 0);
	b.w[10] = 0x20000099u;
	onew(&rw, "rpc/unknown_program", &b, "PROG_UNAVAIL", CTR_RPC);
	msg_call(&b, ++xid, 0);
	b.w[11] = 2;
	onew(&rw, "rpc/program_version_2", &b, "PROG_MISMATCH 1..1", CTR_RPC);
	msg_call(&b, ++xid, 0);
	b.w[11] = 0;
	onew(&rw, "rpc/program_version_0", &b, "PROG_MISMATCH 1..1", CTR_RPC);
	{
		static const uint32_t p[] = {6, 99, 0xffffffffu};

		for (i = 0; i < RTE_DIM(p); i++) {
			msg_call(&b, ++xid, p[i]);
			onew(&rw, cname("rpc/unknown_procedure_%u", p[i]), &b, "PROC_UNAVAIL",
			     CTR_RPC);
		}
	}
	/* Not a call, or not a whole call header: nothing sensible to answer (Linux drops both);
	 * a reply is one of the reverse direction, matching no call of the server's. */
	msg_call(&b, ++xid, 0);
	b.w[8] = RPCR_ONCRPC_REPLY;
	onew(&rw, "rpc/msg_type_reply", &b, "no reply", CTR_UNMATCHED);
	msg_call(&b, ++xid, 0);
	b.w[8] = 2;
	onew(&rw, "rpc/msg_type_2", &b, "no reply", CTR_DROP_MSG);
	msg_call(&b, ++xid, 0);
	b.n = 7 + 5;
	onew(&rw, "rpc/call_header_20_bytes", &b, "no reply", CTR_DROP_MSG);
	msg_call(&b, ++xid, 0);
	b.w[14] = 100; /* a credential body running past the message */
	onew(&rw, "rpc/credential_past_the_end", &b, "no reply", CTR_DROP_MSG);
	/* Bodies over 400 bytes (RFC 5531 section 8.2): AUTH_BADCRED, AUTH_BADVERF. */
	msg_call(&b, ++xid, 0);
	b.n = 14;
	put(&b, 404);
	for (i = 0; i < 101; i++)
		put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	onew(&rw, "rpc/credential_404_bytes", &b, "AUTH_ERROR AUTH_BADCRED", CTR_RPC);
	msg_call(&b, ++xid, 0);
	b.n = 16;
	put(&b, 404);
	for (i = 0; i < 101; i++)
		put(&b, 0);
	onew(&rw, "rpc/verifier_404_bytes", &b, "AUTH_ERROR AUTH_BADVERF", CTR_RPC);
	/*
	 * Well-formed credentials of other flavours reach the program, which decides (the test
	 * program takes any): the AUTH_SYS bodies of the goldens, malformed ones included, AUTH_SHORT,
	 * RPCSEC_GSS and a flavour nobody defined.
	 */
	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		uint32_t k;

		if (g->family != RPCR_GOLDEN_AUTHSYS)
			continue;
		msg_call(&b, ++xid, 0);
		b.n = 13;
		put(&b, RPCR_ONCRPC_AUTH_SYS);
		put(&b, (uint32_t)g->len);
		for (k = 0; k < g->len / 4; k++)
			put(&b, rpcr_xdr_load32(g->bytes + 4 * k));
		put(&b, 0);
		put(&b, 0);
		onew(&rw, cname("auth/sys_%s", g->name), &b, "SUCCESS", CTR_RPC);
	}
	{
		static const uint32_t fl[] = {RPCR_ONCRPC_AUTH_SHORT, 6, 0x12345u};

		for (i = 0; i < RTE_DIM(fl); i++) {
			msg_call(&b, ++xid, 0);
			b.n = 13;
			put(&b, fl[i]);
			put(&b, 8);
			put(&b, 0xdeadbeefu);
			put(&b, 0xcafef00du);
			put(&b, 0);
			put(&b, 0);
			onew(&rw, cname("auth/flavour_%u", fl[i]), &b, "SUCCESS", CTR_RPC);
		}
	}
	/* Arguments the procedure cannot decode: GARBAGE_ARGS (RFC 5531 section 9). */
	msg_call(&b, ++xid, RPCR_TESTPROG_READ);
	onew(&rw, "args/read_without_its_argument", &b, "GARBAGE_ARGS", CTR_RPC);
	msg_call(&b, ++xid, RPCR_TESTPROG_READ);
	put(&b, 0xffffffffu);
	onew(&rw, "args/read_4GiB", &b, "GARBAGE_ARGS", CTR_RPC);
	msg_call(&b, ++xid, RPCR_TESTPROG_ECHO);
	put(&b, 0xffffffffu);
	onew(&rw, "args/echo_length_ffffffff", &b, "GARBAGE_ARGS", CTR_RPC);
	msg_call(&b, ++xid, RPCR_TESTPROG_ECHO);
	put(&b, 100);
	put(&b, 1);
	put(&b, 2);
	onew(&rw, "args/echo_100_bytes_of_8", &b, "GARBAGE_ARGS", CTR_RPC);
	/* A read chunk that does not match its item (memory the server may read, so the chunk is
	 * read and the handler finds it wrong): another length, another position. */
	if (region_new(&ok_reg, 8192, RPCR_RDEV_ACCESS_REMOTE_READ) == 0) {
		put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
		put_read(&b, 44, ok_reg.rkey, 1000, ok_reg.addr);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_ECHO);
		put(&b, 2000);
		onew(&rw, "args/read_chunk_length_is_not_the_items", &b, "GARBAGE_ARGS", CTR_RPC);
		put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
		put_read(&b, 48, ok_reg.rkey, 1000, ok_reg.addr);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_ECHO);
		put(&b, 1000);
		onew(&rw, "args/read_chunk_where_no_item_starts", &b, "GARBAGE_ARGS", CTR_RPC);
	}
	/* A long call (the whole RPC message in the position-zero chunk) whose message has
	 * another xid than the transport header (ERR_CHUNK, RFC 8166 section 4.5), or is no call
	 * (dropped). */
	if (ok_reg.mr != NULL) {
		static const struct {
			const char *name, *want;
			uint32_t xid_delta, msg_type;
			struct want_ctr ctr;
		} pz[] = {
			{"nomsg/long_call_of_another_xid", "RDMA_ERROR ERR_CHUNK", 0x1000, 0,
			 CTR_ERROR},
			{"nomsg/long_call_that_is_a_reply", "no reply", 0, 1, CTR_DROP_MSG},
		};

		for (i = 0; i < RTE_DIM(pz); i++) {
			struct wbuf call;

			call.n = 0;
			put_call(&call, ++xid + pz[i].xid_delta, RPCR_TESTPROG, 1, 0);
			call.w[1] = pz[i].msg_type;
			raw_put_words(ok_reg.mem, call.w, call.n);
			put_fixed(&b, xid, 1, 8, RPCR_PROTO_V1_NOMSG);
			put_read(&b, 0, ok_reg.rkey, 4 * call.n, ok_reg.addr);
			put(&b, 0);
			put(&b, 0);
			put(&b, 0);
			onew(&rw, pz[i].name, &b, pz[i].want, pz[i].ctr);
		}
	}
	region_free(&ok_reg);
	/* CONF_RDMA's arguments (2005 draft section 6): two words are too few. */
	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		uint32_t k;

		if (g->family != RPCR_GOLDEN_CONF_REQ && g->family != RPCR_GOLDEN_CONF_REPLY)
			continue;
		msg_call(&b, ++xid, 1);
		b.w[10] = CONF_RDMA_PRG;
		for (k = 0; k < g->len / 4; k++)
			put(&b, rpcr_xdr_load32(g->bytes + 4 * k));
		onew(&rw, cname("conf_rdma/%s", g->name), &b,
		     g->len < 12 ? "GARBAGE_ARGS" : "SUCCESS", CTR_RPC);
	}
	raw_done(&rw);
}

/* ---- group: RDMA that cannot be done ---- */

/*
 * Chunks naming memory the server may not reach. The server's RDMA Read or Write fails with a
 * remote access error, which (RC semantics, RFC 8166 section 3.1: the transport is reliable
 * and in order) puts the queue pair in the error state: nothing more can be said on that
 * connection, and the server drops it, counting the failed work request (wc_errors). The same
 * as svcrdma, which closes the transport on a failed Read or Write.
 */
enum rkind { R_READ, R_WRITE, R_REPLY, R_POS0 };

struct rdma_case {
	const char *name;
	enum rkind kind;
	uint32_t access; /* of the region */
	int key;         /* 0: the region's; 1: never valid; 2: deregistered; 3: invalidated */
	int64_t off;     /* from the region's start */
	uint32_t len;    /* of the chunk */
};

static void
rdma_one(const struct rdma_case *rc, uint32_t xid)
{
	struct region g;
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint32_t key;
	uint64_t addr;
	char got[160];

	case_begin(&c, cname("rdma/%s", rc->name));
	if (region_new(&g, 16384, rc->access) != 0 || raw_new(&rw, NULL) != 0) {
		region_free(&g);
		CHECK(false);
		return;
	}
	key = g.rkey;
	addr = g.addr + (uint64_t)rc->off;
	if (rc->key == 1)
		key = g.rkey ^ 0x5a5a5a00u;
	else if (rc->key == 2)
		CHECK_EQ(rpcr_rdev_mr_dereg(g.mr), 0);
	else if (rc->key == 3)
		CHECK_EQ(rpcr_rdev_mr_invalidate(g.mr), 0);
	if (rc->key == 2)
		g.mr = NULL;
	put_fixed(&b, xid, 1, 8, rc->kind == R_POS0 ? RPCR_PROTO_V1_NOMSG : RPCR_PROTO_V1_MSG);
	switch (rc->kind) {
	case R_READ: /* WRITE(data in a read chunk) */
		put_read(&b, 44, key, rc->len, addr);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_WRITE);
		put(&b, rc->len);
		break;
	case R_POS0: /* the whole call in a position-zero chunk */
		put_read(&b, 0, key, rc->len, addr);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		break;
	case R_WRITE: /* READ(2000), the result into a write chunk */
		put(&b, 0);
		put(&b, 1);
		put(&b, 1);
		put_seg(&b, key, rc->len, addr);
		put(&b, 0);
		put(&b, 0);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
		put(&b, 2000);
		break;
	case R_REPLY: /* READ(6000), no write chunk: the whole reply into the reply chunk */
		put(&b, 0);
		put(&b, 0);
		put(&b, 1);
		put(&b, 1);
		put_seg(&b, key, rc->len, addr);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
		put(&b, 6000);
		break;
	}
	{
		static uint8_t m[8192];

		answer_of(&rw, m, wbytes(&b, m), xid, got, sizeof(got));
	}
	raw_done(&rw);
	region_free(&g);
	case_end(&c, "connection dropped", got, CTR_RDMA_FAIL, GOOD_MAX_MS);
}

static void
group_rdma(void)
{
	static const uint32_t RR = RPCR_RDEV_ACCESS_REMOTE_READ;
	static const uint32_t RW = RPCR_RDEV_ACCESS_REMOTE_WRITE;
	static const struct rdma_case cases[] = {
		{"read_chunk/key_never_valid", R_READ, RR, 1, 0, 4096},
		{"read_chunk/key_deregistered", R_READ, RR, 2, 0, 4096},
		{"read_chunk/key_invalidated", R_READ, RR, 3, 0, 4096},
		{"read_chunk/no_remote_read_access", R_READ, RW, 0, 0, 4096},
		{"read_chunk/offset_past_the_end", R_READ, RR, 0, 16384 + 4096, 4096},
		{"read_chunk/offset_before_the_start", R_READ, RR, 0, -8192, 4096},
		{"read_chunk/length_past_the_end", R_READ, RR, 0, 16384 - 100, 4096},
		{"read_chunk/length_one_past_the_end", R_READ, RR, 0, 0, 16384 + 4},
		{"position_zero/key_never_valid", R_POS0, RR, 1, 0, 512},
		{"position_zero/offset_past_the_end", R_POS0, RR, 0, 16384 - 256, 512},
		{"write_chunk/key_never_valid", R_WRITE, RW, 1, 0, 4096},
		{"write_chunk/key_deregistered", R_WRITE, RW, 2, 0, 4096},
		{"write_chunk/key_invalidated", R_WRITE, RW, 3, 0, 4096},
		{"write_chunk/no_remote_write_access", R_WRITE, RR, 0, 0, 4096},
		{"write_chunk/offset_past_the_end", R_WRITE, RW, 0, 16384 + 8192, 4096},
		{"write_chunk/length_past_the_end", R_WRITE, RW, 0, 16384 - 1000, 4096},
		{"reply_chunk/key_deregistered", R_REPLY, RW, 2, 0, 8192},
		{"reply_chunk/offset_past_the_end", R_REPLY, RW, 0, 16384 - 100, 8192},
	};
	uint32_t i;

	for (i = 0; i < RTE_DIM(cases); i++)
		rdma_one(&cases[i], 0x7c000000u + i);
}

/* ---- group: chunks too small, and a control ---- */

static void
group_chunks(void)
{
	struct region g;
	struct raw rw;
	struct wbuf b;
	uint32_t xid = 0x7d000000;

	if (region_new(&g, 65536, RPCR_RDEV_ACCESS_REMOTE_WRITE) != 0 || raw_new(&rw, NULL) != 0)
		return;
	/* Control (not counted): a reply chunk large enough gets the reply, RDMA_NOMSG. */
	{
		uint8_t m[512], r[8192];
		int n;

		put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
		put(&b, 0);
		put(&b, 0);
		put(&b, 1);
		put(&b, 1);
		put_seg(&b, g.rkey, 8192, g.addr);
		put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
		put(&b, 6000);
		CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
		n = raw_recv(&rw, r, 3000);
		CHECK(n >= 28);
		if (n >= 28) {
			CHECK_EQ(raw_w32(r, 0), xid);
			CHECK_EQ(raw_w32(r, 3), RPCR_PROTO_V1_NOMSG);
			/* The reply in the chunk: header of 24 bytes, the length, the data. */
			CHECK_EQ(rpcr_xdr_load32(g.mem + 24), 6000);
			CHECK_EQ(g.mem[28 + 5999], (uint8_t)rpcr_testprog_byte(5999));
		}
	}
	/*
	 * A reply longer than the inline size and the reply chunk offered: RDMA_ERROR ERR_CHUNK (the
	 * reply cannot be conveyed; svcrdma answers so, svc_rdma_send_error_msg()). The connection
	 * goes on. Counted as an RDMA_ERROR, not as a bad header.
	 */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 0);
	put(&b, 1);
	put(&b, 1);
	put_seg(&b, g.rkey, 512, g.addr);
	put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
	put(&b, 6000);
	onew(&rw, "chunks/reply_chunk_too_small", &b, "RDMA_ERROR ERR_CHUNK",
	     (struct want_ctr){1, 0, 0, 0});
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 0);
	put(&b, 1);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
	put(&b, 6000);
	onew(&rw, "chunks/reply_chunk_of_no_segments", &b, "RDMA_ERROR ERR_CHUNK",
	     (struct want_ctr){1, 0, 0, 0});
	/* A write chunk larger than the result: exactly the result is written, nothing after it. */
	memset(g.mem, 0xee, 8192);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 1);
	put(&b, 1);
	put_seg(&b, g.rkey, 8192, g.addr);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
	put(&b, 3000);
	onew(&rw, "chunks/write_chunk_larger_than_the_result", &b, "SUCCESS", CTR_RPC);
	CHECK_EQ(g.mem[2999], (uint8_t)rpcr_testprog_byte(2999));
	CHECK_EQ(g.mem[3000], 0xee);
	CHECK_EQ(g.mem[8191], 0xee);
	/*
	 * A write chunk smaller than the result: the result cannot be placed, the program says so
	 * (the test program: SYSTEM_ERR). Nothing is written past the chunk.
	 */
	memset(g.mem, 0xee, 8192);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSG);
	put(&b, 0);
	put(&b, 1);
	put(&b, 1);
	put_seg(&b, g.rkey, 100, g.addr);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_READ);
	put(&b, 3000);
	onew(&rw, "chunks/write_chunk_too_small", &b, "SYSTEM_ERR", CTR_RPC);
	CHECK_EQ(g.mem[0], 0xee);
	CHECK_EQ(g.mem[100], 0xee);
	raw_done(&rw);
	region_free(&g);
}

/* ---- group: the 2005 draft's messages, and the memory a reply exposes ---- */

/* RDMA Read @len bytes of the server's memory into @g: the Read's completion status. */
static int
raw_rdma_read(struct raw *rw, struct region *g, uint32_t rkey, uint64_t raddr, uint32_t len)
{
	struct rpcr_rdev_sge sge = {g->addr, len, g->mr->lkey};
	struct rpcr_rdev_send_wr wr = {.wr_id = RAW_WRID_SEND + 63,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = RPCR_RDEV_WR_READ,
				       .flags = RPCR_RDEV_WR_F_SIGNALED,
				       .rkey = rkey,
				       .remote_addr = raddr};
	struct rpcr_rdev_wc wc;

	if (rpcr_rdev_post_send(rw->qp, &wr, 1) != 1 || raw_poll(rw, false, &wc, 3000) != 1)
		return -1;
	return (int)wc.status;
}

/*
 * Between rpcr peers (the rpcr block offered), a READ with no reply chunk comes back with its
 * result in a read chunk of the reply (2005 draft): the server registers exactly the result, for
 * this reply only. The peer may read it, and nothing else: not a byte before, not a byte after,
 * and nothing once it said RDMA_DONE. A Read outside fails at the peer (REM_ACCESS_ERR), which
 * ends its connection; the server drops it and serves on.
 */
static void
exposed_one(const char *name, int how)
{
	struct raw_conf rcf = {.ext = true};
	struct rpcr_proto_rseg reads[4];
	struct rpcr_proto_wchunk writes[2];
	struct rpcr_proto_seg segs[4];
	struct rpcr_proto_v1_hdr h;
	struct region g;
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint8_t m[256], r[8192];
	uint32_t xid = 0x7f000000u + (uint32_t)how, k;
	int n, st;
	char got[160] = "no read chunk in the reply";

	case_begin(&c, name);
	if (region_new(&g, 16384, 0) != 0 || raw_new(&rw, &rcf) != 0) {
		region_free(&g);
		return;
	}
	msg_call(&b, xid, RPCR_TESTPROG_READ);
	put(&b, 6000);
	CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	n = raw_recv(&rw, r, 3000);
	rpcr_proto_chunks_init(&h.chunks, reads, 4, writes, 2, segs, 4);
	if (n > 0 && rpcr_proto_v1_decode_full(&h, r, (size_t)n) > 0 && h.chunks.nreads == 1 &&
	    h.chunks.reads[0].seg.length == 6000) {
		const struct rpcr_proto_seg *s = &h.chunks.reads[0].seg;

		/* What was exposed can be read, and is the result. */
		st = raw_rdma_read(&rw, &g, s->handle, s->offset, 6000);
		CHECK_EQ(st, RPCR_RDEV_WC_SUCCESS);
		for (k = 0; k < 6000 && g.mem[k] == (uint8_t)rpcr_testprog_byte(k); k++)
			;
		CHECK_EQ(k, 6000);
		if (how == 2) {
			/* RDMA_DONE, then a call whose reply says the server went past it. */
			char tail[160];

			put_fixed(&b, xid, 1, 8, RPCR_PROTO_V1_DONE);
			CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
			msg_call(&b, xid + 0x100, RPCR_TESTPROG_NULL);
			answer_of(&rw, m, wbytes(&b, m), xid + 0x100, tail, sizeof(tail));
			CHECK(strcmp(tail, "SUCCESS") == 0);
		}
		if (how == 0)
			st = raw_rdma_read(&rw, &g, s->handle, s->offset - 1, 2);
		else if (how == 1)
			st = raw_rdma_read(&rw, &g, s->handle, s->offset + 5999, 2);
		else
			st = raw_rdma_read(&rw, &g, s->handle, s->offset, 16);
		snprintf(got, sizeof(got), "Read %s, %s",
			 st < 0 ? "did not complete" : rpcr_rdev_wc_status_str((uint32_t)st),
			 raw_wait_dropped(&rw, 3000, NULL, true) ? "connection dropped"
								 : "connection up");
	}
	raw_done(&rw);
	region_free(&g);
	case_end(&c, "Read REM_ACCESS_ERR, connection dropped", got, (struct want_ctr){0, 0, -2, 0},
		 GOOD_MAX_MS);
}

static void
group_draft(void)
{
	struct raw_conf rcf = {.ext = true};
	struct raw rw;
	struct wbuf b;
	uint32_t xid = 0x7f100000;

	if (raw_new(&rw, &rcf) != 0)
		return;
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSGP);
	put(&b, 64);
	onew(&rw, "draft/msgp_truncated_after_align", &b, "no reply", CTR_DROP_MSG); /* 20 bytes */
	/* Padding that would put the data 4 GiB further on: the argument is not there. */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_MSGP);
	put(&b, 0xffffffffu);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	put(&b, 0);
	put_call(&b, xid, RPCR_TESTPROG, 1, RPCR_TESTPROG_ECHO);
	put(&b, 8);
	put(&b, 1);
	put(&b, 2);
	onew(&rw, "draft/msgp_align_ffffffff", &b, "GARBAGE_ARGS", CTR_RPC);
	/* RDMA_DONE for a reply that exposed nothing: ignored, as the draft has no answer. */
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_DONE);
	onew(&rw, "draft/done_for_nothing", &b, "no reply", CTR_RPC);
	put_fixed(&b, ++xid, 1, 8, RPCR_PROTO_V1_DONE);
	b.n = 3;
	onew(&rw, "draft/done_12_bytes", &b, "no reply", CTR_DROP_MSG);
	raw_done(&rw);
	exposed_one("draft/read_a_byte_before_the_exposed_result", 0);
	exposed_one("draft/read_a_byte_after_the_exposed_result", 1);
	exposed_one("draft/read_the_result_after_rdma_done", 2);
}

/* ---- group: flow control and misbehaving queues ---- */

/* Wait until the server holds @n HOLD calls (CMD_STATS hold_max). */
static bool
held_reaches(uint64_t n)
{
	uint64_t v[8], end = now_ns() + 5000000000ull;

	do {
		srv_stats(v);
	} while (v[3] < n && now_ns() < end);
	return v[3] >= n;
}

static bool
overruns_reach(uint64_t base, uint64_t n)
{
	uint64_t v[8], end = now_ns() + 5000000000ull;

	do {
		srv_info(v);
	} while (v[I_OVERRUNS] < base + n && now_ns() < end);
	return v[I_OVERRUNS] >= base + n;
}

static void
hold_call(struct wbuf *b, uint32_t xid)
{
	put_fixed(b, xid, 1, 1, RPCR_PROTO_V1_MSG);
	put(b, 0);
	put(b, 0);
	put(b, 0);
	put_call(b, xid, XT_PROG, XT_VERS, XT_HOLD);
}

/*
 * Credit overrun: granted 1 credit (it asks for 1), the peer sends 52 calls that the server holds
 * (HOLD). RFC 8166 section 3.3.1 lets the transport fail such a peer; the engine serves what
 * fits its request slots (credits + 32 = 48), drops the rest and counts them (overruns), and
 * the connection goes on: the 48 are answered, each granting 1, the 4 extra never.
 */
static void
case_credit_overrun(void)
{
	struct raw_conf rcf = {.nrecv = 64};
	uint32_t xid0 = 0x7e000000, i, got = 0, bad = 0;
	uint64_t info[8];
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint8_t m[256], r[8192];
	char ans[160];

	case_begin(&c, "flow/credit_overrun_52_calls_on_1_credit");
	if (raw_new(&rw, &rcf) != 0)
		return;
	srv_cmd(CMD_HOLD, 100000, 0); /* hold them until 1 s passes without a new one */
	srv_info(info);
	for (i = 0; i < SRV_SLOTS + 4; i++) {
		hold_call(&b, xid0 + i);
		CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
		/* One at a time, so that the server's receives are never what runs out. */
		if (i < SRV_SLOTS)
			CHECK(held_reaches(i + 1));
		else
			CHECK(overruns_reach(info[I_OVERRUNS], i + 1 - SRV_SLOTS));
	}
	/* Released 1 s after the last: 48 replies, in order, each granting 1. */
	for (i = 0; i < SRV_SLOTS; i++) {
		int n = raw_recv(&rw, r, 3000);

		if (n < 28 || raw_w32(r, 0) != xid0 + i || raw_w32(r, 3) != RPCR_PROTO_V1_MSG ||
		    raw_w32(r, 2) != 1)
			bad++;
		else
			got++;
	}
	snprintf(ans, sizeof(ans), "%u of %u answered, granting 1", got, SRV_SLOTS);
	/* Nothing for the 4 dropped ones: the next call's reply comes next. */
	{
		char tail[160];

		msg_call(&b, 0x7e0000ff, 0);
		answer_of(&rw, m, wbytes(&b, m), 0x7e0000ff, tail, sizeof(tail));
		CHECK(strcmp(tail, "SUCCESS") == 0);
		if (strcmp(tail, "SUCCESS") == 0)
			strncat(ans, ", 4 dropped, connection serving",
				sizeof(ans) - strlen(ans) - 1);
	}
	CHECK_EQ(bad, 0);
	srv_cmd(CMD_HOLD, 0, 0);
	raw_done(&rw);
	case_end(&c,
		 cname("%u of %u answered, granting 1, 4 dropped, connection serving", SRV_SLOTS,
		       SRV_SLOTS),
		 ans, (struct want_ctr){0, 0, 0, 4}, GOOD_MAX_MS);
}

/*
 * Duplicate xids in flight: two calls with one xid, both held by the server at once, then two
 * calls with one xid whose arguments are pulled from read chunks, in one burst. RPC-over-RDMA
 * does not look at xids on the server side (RFC 8166 section 4.2.1: the xid only lets the
 * requester match replies), and the engine keeps no duplicate-request cache (RFC 5531 leaves
 * that to the server's programs): each is executed and answered, with its xid.
 */
static void
case_duplicate_xids(void)
{
	struct raw_conf rcf = {.nrecv = 16, .nsend = 2};
	uint32_t xid = 0x7e100000, i;
	struct region g;
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint8_t m[2][512], r[8192];
	char ans[160];
	int n, answered = 0, echoed = 0;

	case_begin(&c, "flow/duplicate_xids_in_flight");
	if (region_new(&g, 8192, RPCR_RDEV_ACCESS_REMOTE_READ) != 0 || raw_new(&rw, &rcf) != 0)
		return;
	srv_cmd(CMD_HOLD, 100000, 0);
	for (i = 0; i < 2; i++) {
		hold_call(&b, xid);
		CHECK_EQ(raw_send(&rw, m[0], wbytes(&b, m[0])), RPCR_RDEV_WC_SUCCESS);
	}
	CHECK(held_reaches(2));
	for (i = 0; i < 2; i++) {
		n = raw_recv(&rw, r, 3000);
		answered += n >= 28 && raw_w32(r, 0) == xid && raw_w32(r, 3) == RPCR_PROTO_V1_MSG;
	}
	srv_cmd(CMD_HOLD, 0, 0);
	/* ECHO of 2000 bytes in a read chunk, twice, one xid, one doorbell. */
	for (i = 0; i < 2000; i++)
		g.mem[i] = (uint8_t)(i * 13 + 1);
	{
		const uint8_t *msgs[2] = {m[0], m[1]};
		uint32_t lens[2];
		int st[2];

		put_fixed(&b, xid + 1, 1, 8, RPCR_PROTO_V1_MSG);
		put_read(&b, 44, g.rkey, 2000, g.addr);
		put(&b, 0);
		put(&b, 0);
		put(&b, 0);
		put_call(&b, xid + 1, RPCR_TESTPROG, 1, RPCR_TESTPROG_ECHO);
		put(&b, 2000);
		lens[0] = wbytes(&b, m[0]);
		lens[1] = wbytes(&b, m[1]);
		CHECK_EQ(raw_send_burst(&rw, msgs, lens, 2, st), 2);
	}
	for (i = 0; i < 2; i++) {
		n = raw_recv(&rw, r, 3000);
		/* 28-byte header, 24-byte reply header, the length, the data inline. */
		if (n == 28 + 24 + 4 + 2000 && raw_w32(r, 0) == xid + 1 && raw_w32(r, 13) == 2000 &&
		    memcmp(r + 56, g.mem, 2000) == 0)
			echoed++;
	}
	snprintf(ans, sizeof(ans), "held: %d of 2 answered; read chunks: %d of 2 echoed", answered,
		 echoed);
	raw_done(&rw);
	region_free(&g);
	case_end(&c, "held: 2 of 2 answered; read chunks: 2 of 2 echoed", ans, CTR_RPC,
		 GOOD_MAX_MS);
}

/*
 * A Send that finds no receive posted at the server. The server keeps credits + 16 receives
 * posted and replenishes them as it polls, so a peer within its credits never sees this; here
 * the server is made to stop polling for a while (CMD_PAUSE: busy elsewhere) and the peer sends
 * credits + 16 + 8 calls at once. RC with rnr_retry 0 (rpcr's RC semantics, as Linux's xprtrdma
 * asks for): the first Send that finds no receive fails with RNR_RETRY_EXC_ERR at the sender,
 * the queue pair fails and the connection with it; the server, back, drops it and serves on.
 */
static void
case_rnr_at_server(void)
{
	struct raw_conf rcf = {.nrecv = 64, .nsend = SRV_RECVS + 8};
	uint32_t i, first_bad = UINT32_MAX, ok;
	const uint8_t *msgs[SRV_RECVS + 8];
	uint32_t lens[SRV_RECVS + 8];
	int st[SRV_RECVS + 8];
	static uint8_t m[SRV_RECVS + 8][128];
	struct hcase c;
	struct raw rw;
	char ans[160];

	case_begin(&c, "flow/send_with_no_receive_posted");
	if (raw_new(&rw, &rcf) != 0)
		return;
	for (i = 0; i < RTE_DIM(msgs); i++) {
		lens[i] = raw_null_call(m[i], 0x7e200000u + i, 2);
		msgs[i] = m[i];
	}
	srv_cmd(CMD_PAUSE, 300, 0);
	ok = raw_send_burst(&rw, msgs, lens, RTE_DIM(msgs), st);
	for (i = 0; i < RTE_DIM(msgs); i++) {
		if (st[i] != RPCR_RDEV_WC_SUCCESS) {
			first_bad = i;
			break;
		}
	}
	snprintf(ans, sizeof(ans), "%u Sends delivered, the next %s, %s", ok,
		 first_bad < RTE_DIM(msgs) ? rpcr_rdev_wc_status_str((uint32_t)st[first_bad])
					   : "delivered too",
		 raw_wait_dropped(&rw, 3000, NULL, true) ? "connection dropped" : "connection up");
	raw_done(&rw);
	/* (The well-behaved client waited out the pause too.) */
	case_end(&c,
		 cname("%u Sends delivered, the next RNR_RETRY_EXC_ERR, connection dropped",
		       SRV_RECVS),
		 ans, (struct want_ctr){0, 0, -2, 0}, GOOD_MAX_MS + 300);
}

/*
 * A Send longer than the server's receives (its inline size, 4096): the receive fails with a
 * length error at the server (LOC_LEN_ERR; rxe: LOC_QP_OP_ERR) and the Send at the peer; the
 * queue pair is in error, the server counts the completion and drops the connection.
 */
static void
case_send_too_long(void)
{
	static uint8_t m[8192];
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	char got[160];
	uint32_t n;

	case_begin(&c, "flow/send_longer_than_the_receives");
	if (raw_new(&rw, NULL) != 0)
		return;
	msg_call(&b, 0x7e300000, RPCR_TESTPROG_ECHO);
	put(&b, 4096);
	n = wbytes(&b, m);
	memset(m + n, 0x41, 4096);
	answer_of(&rw, m, n + 4096, 0x7e300000, got, sizeof(got));
	if (strncmp(got, "Send failed", 11) == 0 && raw_wait_dropped(&rw, 3000, NULL, true))
		snprintf(got, sizeof(got), "connection dropped");
	raw_done(&rw);
	case_end(&c, "connection dropped", got, (struct want_ctr){0, 0, 1, 0}, GOOD_MAX_MS);
}

/*
 * A peer that stops reading: it posted 4 receives and sends 10 calls (within the 16 credits it
 * was granted), then neither posts nor polls. The server's 5th reply finds no receive
 * (RNR_RETRY_EXC_ERR at the server: wc_errors), the connection is dropped; the poller and the
 * other connections go on.
 */
static void
case_peer_stops_reading(void)
{
	struct raw_conf rcf = {.nrecv = 4};
	uint32_t i, msgs = 0;
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint8_t m[256];
	char ans[160];
	bool dropped;

	case_begin(&c, "flow/peer_stops_reading");
	if (raw_new(&rw, &rcf) != 0)
		return;
	for (i = 0; i < 10; i++) {
		msg_call(&b, 0x7e400000u + i, 0);
		b.w[2] = 32;
		/* (Sends after the server dropped the connection fail: not looked at.) */
		raw_send(&rw, m, wbytes(&b, m));
	}
	dropped = raw_wait_dropped(&rw, 3000, &msgs, false);
	snprintf(ans, sizeof(ans), "%u replies received, %s", msgs,
		 dropped ? "connection dropped" : "connection up");
	raw_done(&rw);
	case_end(&c, "4 replies received, connection dropped", ans, (struct want_ctr){0, 0, 1, 0},
		 GOOD_MAX_MS);
}

/* A peer that goes away while the server holds three of its calls: the replies, when the program
 * gives them, are dropped, and the connection's memory goes with the last (checked at exit). */
static void
case_vanish_with_calls_held(void)
{
	struct hcase c;
	struct raw rw;
	struct wbuf b;
	uint8_t m[256];
	uint32_t i;
	char ans[64];

	case_begin(&c, "flow/peer_vanishes_with_calls_held");
	if (raw_new(&rw, NULL) != 0)
		return;
	srv_cmd(CMD_HOLD, 100000, 0);
	for (i = 0; i < 3; i++) {
		hold_call(&b, 0x7e500000u + i);
		CHECK_EQ(raw_send(&rw, m, wbytes(&b, m)), RPCR_RDEV_WC_SUCCESS);
	}
	snprintf(ans, sizeof(ans), "%s", held_reaches(3) ? "3 held, peer gone" : "not held");
	raw_done(&rw);
	bg_for(1200); /* the server gives them back 1 s after the last */
	srv_cmd(CMD_HOLD, 0, 0);
	case_end(&c, "3 held, peer gone", ans, CTR_RPC, GOOD_MAX_MS);
}

static void
group_flow(void)
{
	case_credit_overrun();
	case_duplicate_xids();
	case_rnr_at_server();
	case_send_too_long();
	case_peer_stops_reading();
	case_vanish_with_calls_held();
}

/* ---- main ---- */

static const struct {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{"goldens", group_goldens}, {"cm", group_cm},     {"shapes", group_shapes},
	{"rpc", group_rpc},         {"rdma", group_rdma}, {"chunks", group_chunks},
	{"draft", group_draft},     {"flow", group_flow}, {"v2", group_v2},
};

/* The server still serves: a new client, a NULL call and a 100 KB READ into a write chunk. */
static bool
still_serving(void)
{
	struct rpcr_clnt *cl = client_new();
	struct tp_echo_res er = {.max = UINT32_MAX};
	struct rpcr_call call;
	struct rpcr_bulk rb;
	struct tbuf res;
	uint32_t len = 100000;
	bool ok;

	if (cl == NULL)
		return false;
	memset(&call, 0, sizeof(call));
	ok = rpcr_clnt_call_sync(cl, &call) == 0;
	if (ok && tbuf_make(cp, P.arena, mc, &res, len, 1) == 0) {
		rb = (struct rpcr_bulk){res.m, 0, len};
		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_READ;
		call.encode = rpcr_testprog_enc_len;
		call.args = &len;
		call.decode = tp_dec_bulk;
		call.res = &er;
		call.res_bulk = &rb;
		call.nres_bulk = 1;
		ok = rpcr_clnt_call_sync(cl, &call) == 0 && er.got == 0 && er.b.len == len &&
		     bulk_equals_pattern(&er.b);
		if (er.got == 0 && er.b.m != NULL)
			rte_pktmbuf_free(er.b.m);
		tbuf_free(mc, &res);
	}
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	return ok;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"cdev", required_argument, NULL, 'c'},
					     {"addr", required_argument, NULL, 'a'},
					     {"verbose", no_argument, NULL, 'v'},
					     {NULL, 0, NULL, 0}};
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 256u << 20,
		.cq_depth = 1024,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
	};
	/* credits, inline send, inline recv, remote_inv, no_draft, decoupled, threshold, msgp,
	 * versions (1 and 2: a connection speaks its first message's) */
	uint64_t cfg[9] = {
		SRV_CREDITS, SRV_INLINE, SRV_INLINE, 1, 0, 0, 1024, 0, RPCR_XPRT_V1 | RPCR_XPRT_V2};
	struct rpcr_xprt_poller_conf pc;
	struct ctl_msg m;
	bool serving = false;
	int c, status;
	size_t i;

	while ((c = getopt_long(argc, argv, "d:c:a:v", opts, NULL)) != -1) {
		if (c == 'd')
			hc.devargs = optarg;
		else if (c == 'c')
			hc.cdevargs = optarg; /* the client's device, if not the server's */
		else if (c == 'a')
			hc.addr = optarg; /* the harness's address; the engine's is beside it */
		else if (c == 'v')
			verbose = true;
		else
			return 2;
	}
	alarm(900);
	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;
	if (P.server) {
		status = xt_server_main(&P);
		harness_finish(&P);
		return status;
	}
	xt_server_addr(P.addr, saddr, sizeof(saddr));
	ctl_recv(&P, CMD_ACK, &m);
	ctl_send(&P, CMD_START, 9, cfg);
	ctl_recv(&P, CMD_ACK, &m);
	cdev = rpcr_rdev_open(P.devargs);
	memset(&pc, 0, sizeof(pc));
	pc.name = "client";
	pc.dev = cdev;
	pc.arena = P.arena;
	cp = cdev != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	mc = cp != NULL ? rpcr_mem_cache_create(rpcr_xprt_poller_pd(cp), NULL) : NULL;
	if (mc == NULL || good_start() != 0) {
		fprintf(stderr, "client set-up failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (i = 0; i < RTE_DIM(groups); i++) {
		int a;
		bool sel = optind == argc;

		for (a = optind; a < argc; a++)
			sel |= strcmp(argv[a], groups[i].name) == 0;
		if (sel)
			groups[i].fn();
	}
	/* The well-behaved client: everything it asked was answered right. */
	good_finish();
	printf("well-behaved client: %" PRIu64 " calls, %" PRIu64 " failed\n", good.done,
	       good.failed);
	CHECK(good.done > 0);
	CHECK_EQ(good.failed, 0);
	serving = still_serving();
	CHECK(serving);
	ctl_send(&P, CMD_STOP, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	rpcr_mem_cache_free(mc);
	if (rpcr_xprt_poller_destroy(cp) != 0) {
		printf("FAIL client poller busy at exit\n");
		CHECK(false);
	}
	rpcr_rdev_close(cdev);
	status = harness_finish(&P);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* (The server exits 1 when something it held was never given back.) */
		printf("server exited badly (status 0x%x)\n", status);
		serving = false;
		CHECK(false);
	}
	printf("%lu checks, %lu failed\n", rpcr_test_checks, rpcr_test_failed);
	printf("hostile: %lu cases, %lu answered as the spec says, server still serving: %s\n",
	       ncases, nok, serving ? "yes" : "no");
	return rpcr_test_failed != 0 || nok != ncases || !serving;
}
