/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The test program, program 0x2f5a0001 version 1 (outside tests depend on this definition):
 *
 *   proc 0 NULL  (void)            -> void
 *   proc 1 ECHO  (opaque data<>)   -> opaque data<>
 *   proc 2 WRITE (opaque data<>)   -> uint32 bytes
 *   proc 3 READ  (uint32 len)      -> opaque data<>, byte i = (i * 31 + 7) & 0xff
 *   proc 4 CALLBACK (uint32 count, opaque data<>) -> uint32 verified
 *   proc 5 CBBULK (uint32 count, uint32 len, uint32 flags) -> uint32 verified
 *
 * CALLBACK is the client's consent to reverse-direction calls (RFC 8167 section 2.2.3): the
 * server then calls the client's program 0x2f5a0003 version 1, procedure 1 ECHO (opaque data<>
 * -> opaque data<>), `count` times one after another on the connection the call came in on,
 * checks every echo byte for byte, and answers how many were verified (a call that fails, is
 * refused or times out counts as not verified). Procedure 0 of 0x2f5a0003 is NULL. Nothing in
 * CALLBACK or 0x2f5a0003's ECHO is DDP-eligible. CBBULK is CALLBACK with 0x2f5a0003's
 * procedure 2 BULK (opaque data<> -> opaque data<>, DDP-eligible both ways from 1024 bytes, the
 * client echoing the arguments' buffers themselves) and `len` bytes of the READ sequence: in
 * chunks where the reverse direction takes them (version 2, BRS GENL), inline elsewhere (RFC
 * 8167 section 2.5); with flags 1 (WHOLE) nothing DDP-eligible: the call whole (continued, or
 * in a position-zero read chunk where the credits do not allow its parts), the echo in a reply
 * chunk.
 *
 * `data` is DDP-eligible in both directions from a threshold (default 1024). ECHO returns the
 * argument's buffers themselves (zero copy: read chunk in, write chunk out). READ's data comes
 * from one 32 KiB registered buffer attached again and again: 32768 * 31 is a multiple of 256,
 * so every 32 KiB piece of the sequence is the same bytes.
 */

#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

#define TP_PIECE 32768u
#define TP_MAX   (256u << 20) /* longest data item served */

const struct rpcr_ulb rpcr_testprog_ulb[4] = {
	[RPCR_TESTPROG_NULL] = {.args_bulk = 0, .res_bulk = 0, .threshold = 1024},
	[RPCR_TESTPROG_ECHO] = {.args_bulk = 1, .res_bulk = 1, .threshold = 1024},
	[RPCR_TESTPROG_WRITE] = {.args_bulk = 1, .res_bulk = 0, .threshold = 1024},
	[RPCR_TESTPROG_READ] = {.args_bulk = 0, .res_bulk = 1, .threshold = 1024},
};

struct tp_ctx {
	struct rpcr_xprt_poller *p;
	uint8_t *pattern;
	struct rpcr_rdev_mr *mr;
	struct rte_mbuf_ext_shared_info shinfo;
	struct rpcr_svc_proc procs[6];
};

/* A CALLBACK in progress: its request (deferred) and its reverse-direction calls, in turn. */
struct tp_cb {
	struct rpcr_svc_req *r;
	struct rpcr_clnt *bc;
	struct rpcr_call call;
	uint32_t count, sent, verified;
	bool echo_ok; /* the last reply's data was the data sent */
	uint32_t len;
	struct tp_ctx *t;     /* CBBULK: */
	bool bulk;            /* BULK calls back */
	uint32_t flags;       /* RPCR_TESTPROG_CBBULK_* */
	struct rpcr_bulk arg; /* the call's data (READ sequence pieces) */
	struct rpcr_bulk dst; /* where its echo may be written (a bulk buffer) */
	uint8_t data[];
};

/* BULK's binding (the client's procedure, and the server's calls of it). */
#define TP_CB_BULK_ULB                                           \
	{                                                        \
		.args_bulk = 1, .res_bulk = 1, .threshold = 1024 \
	}
static const struct rpcr_ulb tp_cb_bulk_ulb = TP_CB_BULK_ULB;
/* ... and the server's calls with CBBULK_WHOLE: never in a chunk of its own. */
static const struct rpcr_ulb tp_cb_whole_ulb = {
	.args_bulk = 1, .res_bulk = 1, .threshold = UINT32_MAX};

#define TP_CB_TIMEOUT_US (5u * 1000000) /* each reverse-direction call */

static void
tp_noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

/* @len bytes of the READ sequence, as a chain of attached pieces of the pattern buffer. */
static struct rte_mbuf *
tp_pattern(struct tp_ctx *t, uint32_t len)
{
	struct rte_mempool *mp = rpcr_chunk_pool_mempool(t->p->pool);
	struct rte_mbuf *head = NULL, *prev = NULL, *m;
	uint32_t left = len;

	do {
		uint16_t piece = (uint16_t)RTE_MIN(left, TP_PIECE);

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		rte_mbuf_ext_refcnt_update(&t->shinfo, 1);
		rte_pktmbuf_attach_extbuf(m, t->pattern, (rte_iova_t)(uintptr_t)t->pattern,
					  TP_PIECE, &t->shinfo);
		m->data_off = 0;
		m->data_len = piece;
		rpcr_chunk_keys(m)->lkey = t->mr->lkey;
		rpcr_chunk_keys(m)->rkey = 0;
		rpcr_chunk_keys(m)->mr = t->mr;
		if (head == NULL) {
			head = m;
		} else {
			prev->next = m;
			head->nb_segs++;
		}
		prev = m;
		left -= piece;
	} while (left != 0);
	head->pkt_len = len;
	return head;
}

static enum rpcr_svc_verdict
tp_null(struct rpcr_svc_req *r)
{
	RTE_SET_USED(r);
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
tp_echo(struct rpcr_svc_req *r)
{
	struct rpcr_bulk b;

	if (rpcr_msg_get_bulk(rpcr_svc_req_args(r), TP_MAX, &b) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
tp_write(struct rpcr_svc_req *r)
{
	struct rpcr_bulk b;

	if (rpcr_msg_get_bulk(rpcr_svc_req_args(r), TP_MAX, &b) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_xdr_enc_u32(rpcr_msg_enc(rpcr_svc_req_results(r)), b.len) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
tp_read(struct rpcr_svc_req *r)
{
	struct tp_ctx *t = rpcr_svc_req_ctx(r);
	struct rpcr_bulk b;
	uint32_t len;
	int rc;

	if (rpcr_xdr_dec_u32(rpcr_msg_dec(rpcr_svc_req_args(r)), &len) != 0 || len > TP_MAX) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	b.m = tp_pattern(t, len);
	if (b.m == NULL) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	b.off = 0;
	b.len = len;
	rc = rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b);
	rte_pktmbuf_free(b.m);
	if (rc != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static int
tp_cb_enc(struct rpcr_msg *m, const void *args)
{
	const struct tp_cb *cb = args;

	return rpcr_xdr_enc_opaque(rpcr_msg_enc(m), cb->data, cb->len);
}

static int
tp_cb_dec(struct rpcr_msg *m, void *res)
{
	struct tp_cb *cb = res;
	const void *d;
	uint32_t len;

	if (rpcr_xdr_dec_opaque(rpcr_msg_dec(m), RPCR_TESTPROG_CB_MAX, &d, &len) != 0)
		return -EBADMSG;
	cb->echo_ok = len == cb->len && memcmp(d, cb->data, len) == 0;
	return 0;
}

/* Whether @len bytes of @b are the READ sequence from its start. */
static bool
tp_is_pattern(const struct rpcr_bulk *b, uint32_t len)
{
	const struct rte_mbuf *m = b->m;
	uint32_t off = b->off, i = 0;

	if (b->len != len)
		return false;
	while (i < len && m != NULL) {
		if (off >= m->data_len) {
			off -= m->data_len;
			m = m->next;
			continue;
		}
		{
			const uint8_t *d = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
			uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len - i), k;

			for (k = 0; k < n; k++)
				if (d[k] != rpcr_testprog_byte(i + k))
					return false;
			i += n;
			off = 0;
			m = m->next;
		}
	}
	return i == len;
}

static int
tp_cbb_enc(struct rpcr_msg *m, const void *args)
{
	const struct tp_cb *cb = args;

	return rpcr_msg_put_bulk(m, &cb->arg);
}

static int
tp_cbb_dec(struct rpcr_msg *m, void *res)
{
	struct tp_cb *cb = res;
	struct rpcr_bulk b;

	if (rpcr_msg_get_bulk(m, RPCR_TESTPROG_CBBULK_MAX, &b) != 0)
		return -EBADMSG;
	cb->echo_ok = tp_is_pattern(&b, cb->len);
	return 0;
}

/* CBBULK's buffers of one call back given back. */
static void
tp_cbb_put(struct tp_cb *cb)
{
	rte_pktmbuf_free(cb->arg.m);
	rte_pktmbuf_free(cb->dst.m);
	cb->arg.m = NULL;
	cb->dst.m = NULL;
}

/* CBBULK: the next call's data and the destination of its echo; false when there is no room. */
static bool
tp_cbb_prepare(struct tp_cb *cb)
{
	cb->arg = (struct rpcr_bulk){.m = tp_pattern(cb->t, cb->len), .off = 0, .len = cb->len};
	if (cb->arg.m == NULL)
		return false;
	cb->call.proc = RPCR_TESTPROG_CB_BULK;
	cb->call.encode = tp_cbb_enc;
	cb->call.decode = tp_cbb_dec;
	if (cb->flags & RPCR_TESTPROG_CBBULK_WHOLE) {
		/* (The echo's XDR: the RPC reply header, the length, the data padded.) */
		cb->call.ulb = &tp_cb_whole_ulb;
		cb->call.reply_max = cb->len + 64;
		return true;
	}
	cb->dst.m = rpcr_chunk_alloc(cb->t->p->bulk);
	if (cb->dst.m == NULL) {
		tp_cbb_put(cb);
		return false;
	}
	cb->dst.m->data_len = (uint16_t)RPCR_TESTPROG_CBBULK_MAX;
	cb->dst.m->pkt_len = RPCR_TESTPROG_CBBULK_MAX;
	cb->dst.off = 0;
	cb->dst.len = RPCR_TESTPROG_CBBULK_MAX;
	cb->call.ulb = &tp_cb_bulk_ulb;
	cb->call.res_bulk = &cb->dst;
	cb->call.nres_bulk = 1;
	return true;
}

static void tp_cb_done(struct rpcr_call *call);

/* The next reverse-direction call; when all are done, the results written and true (the
 * caller replies). */
static bool
tp_cb_next(struct tp_cb *cb)
{
	while (cb->sent < cb->count && cb->bc != NULL) {
		memset(&cb->call, 0, sizeof(cb->call));
		cb->call.proc = RPCR_TESTPROG_CB_ECHO;
		cb->call.encode = tp_cb_enc;
		cb->call.args = cb;
		cb->call.decode = tp_cb_dec;
		cb->call.res = cb;
		cb->call.timeout_us = TP_CB_TIMEOUT_US;
		cb->call.done = tp_cb_done;
		cb->call.user = cb;
		cb->echo_ok = false;
		cb->sent++;
		if (cb->bulk && !tp_cbb_prepare(cb))
			continue; /* (no buffer: not verified) */
		if (rpcr_clnt_call(cb->bc, &cb->call) == 0)
			return false; /* tp_cb_done() goes on */
		tp_cbb_put(cb);
	}
	if (cb->bc != NULL)
		rpcr_clnt_destroy(cb->bc);
	cb->bc = NULL;
	if (rpcr_xdr_enc_u32(rpcr_msg_enc(rpcr_svc_req_results(cb->r)), cb->verified) != 0)
		rpcr_svc_req_error(cb->r, RPCR_ONCRPC_SYSTEM_ERR);
	return true;
}

static void
tp_cb_done(struct rpcr_call *call)
{
	struct tp_cb *cb = call->user;

	if (call->status == 0 && cb->echo_ok)
		cb->verified++;
	tp_cbb_put(cb);
	/* Timed out (its connection lost, most likely: the call waited for a rebind that this
	 * program never makes), or the server is going: the rest are not made, and count as not
	 * verified. */
	if (call->status == -ETIMEDOUT || call->status == -ECONNRESET)
		cb->sent = cb->count;
	if (tp_cb_next(cb)) {
		rpcr_svc_reply(cb->r);
		rte_free(cb);
	}
}

/* CALLBACK and CBBULK: the calls back begun. */
static enum rpcr_svc_verdict
tp_cb_start(struct rpcr_svc_req *r, uint32_t count, const void *data, uint32_t len, bool bulk,
	    uint32_t flags)
{
	struct tp_cb *cb;

	cb = rte_zmalloc("rpcr_testprog", sizeof(*cb) + (bulk ? 0 : len), 0);
	if (cb == NULL) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	cb->r = r;
	cb->count = count;
	cb->len = len;
	cb->t = rpcr_svc_req_ctx(r);
	cb->bulk = bulk;
	cb->flags = flags;
	if (!bulk)
		memcpy(cb->data, data, len);
	/* No client to call (the connection is going): every call counts as not verified. */
	if (count != 0)
		cb->bc = rpcr_svc_req_bclnt(r, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS);
	if (tp_cb_next(cb)) {
		/* (Nothing sent: answered now, the results written.) */
		rte_free(cb);
		return RPCR_SVC_REPLY;
	}
	return RPCR_SVC_DEFERRED; /* (a completion runs only after we return) */
}

static enum rpcr_svc_verdict
tp_callback(struct rpcr_svc_req *r)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(rpcr_svc_req_args(r));
	const void *data;
	uint32_t count, len;

	if (rpcr_xdr_dec_u32(d, &count) != 0 ||
	    rpcr_xdr_dec_opaque(d, RPCR_TESTPROG_CB_MAX, &data, &len) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	return tp_cb_start(r, count, data, len, false, 0);
}

static enum rpcr_svc_verdict
tp_cbbulk(struct rpcr_svc_req *r)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(rpcr_svc_req_args(r));
	uint32_t count, len, flags;

	if (rpcr_xdr_dec_u32(d, &count) != 0 || rpcr_xdr_dec_u32(d, &len) != 0 ||
	    rpcr_xdr_dec_u32(d, &flags) != 0 || flags > RPCR_TESTPROG_CBBULK_WHOLE ||
	    len > (flags != 0 ? RPCR_TESTPROG_CBBULK_WHOLE_MAX : RPCR_TESTPROG_CBBULK_MAX)) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	return tp_cb_start(r, count, NULL, len, true, flags);
}

static void
tp_fini(void *ctx)
{
	struct tp_ctx *t = ctx;

	rpcr_rdev_mr_dereg(t->mr);
	rte_free(t->pattern);
	rte_free(t);
}

int
rpcr_testprog_register(struct rpcr_svc *s, uint32_t threshold)
{
	struct rpcr_svc_prog prog;
	struct tp_ctx *t;
	uint32_t i;
	int rc;

	if (s == NULL)
		return -EINVAL;
	if (s->fini != NULL)
		return -EEXIST;
	t = rte_zmalloc("rpcr_testprog", sizeof(*t), 0);
	if (t == NULL)
		return -ENOMEM;
	t->p = s->p;
	t->pattern = rpcr_mem_arena_alloc(s->p->arena, TP_PIECE, 4096);
	if (t->pattern == NULL) {
		rte_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < TP_PIECE; i++)
		t->pattern[i] = rpcr_testprog_byte(i);
	t->mr = rpcr_rdev_mr_reg(s->p->pd, t->pattern, TP_PIECE, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	if (t->mr == NULL) {
		rc = -rte_errno;
		rte_free(t->pattern);
		rte_free(t);
		return rc;
	}
	/* One reference of our own: the pieces never free the buffer. */
	t->shinfo.free_cb = tp_noop_free;
	rte_mbuf_ext_refcnt_set(&t->shinfo, 1);
	for (i = 0; i < 4; i++) {
		t->procs[i].proc = i;
		t->procs[i].ulb = rpcr_testprog_ulb[i];
		if (threshold != 0)
			t->procs[i].ulb.threshold = threshold;
	}
	t->procs[RPCR_TESTPROG_CALLBACK].proc = RPCR_TESTPROG_CALLBACK;
	t->procs[RPCR_TESTPROG_CALLBACK].handler = tp_callback;
	t->procs[RPCR_TESTPROG_CBBULK].proc = RPCR_TESTPROG_CBBULK;
	t->procs[RPCR_TESTPROG_CBBULK].handler = tp_cbbulk;
	t->procs[RPCR_TESTPROG_NULL].handler = tp_null;
	t->procs[RPCR_TESTPROG_ECHO].handler = tp_echo;
	t->procs[RPCR_TESTPROG_WRITE].handler = tp_write;
	t->procs[RPCR_TESTPROG_READ].handler = tp_read;
	memset(&prog, 0, sizeof(prog));
	prog.prog = RPCR_TESTPROG;
	prog.vers = RPCR_TESTPROG_VERS;
	prog.procs = t->procs;
	prog.nprocs = RTE_DIM(t->procs);
	prog.ctx = t;
	rc = rpcr_svc_register(s, &prog);
	if (rc != 0) {
		tp_fini(t);
		return rc;
	}
	s->fini = tp_fini;
	s->fini_ctx = t;
	return 0;
}

int
rpcr_testprog_enc_data(struct rpcr_msg *m, const void *args)
{
	return rpcr_msg_put_bulk(m, args);
}

int
rpcr_testprog_enc_len(struct rpcr_msg *m, const void *args)
{
	return rpcr_xdr_enc_u32(rpcr_msg_enc(m), *(const uint32_t *)args);
}

/* The call is the consent to calls back: only from a client that serves them. */
static bool
tp_consents(const struct rpcr_msg *m, const char *what)
{
	const struct xprt_creq *r = m->owner;

	if (m->kind != XPRT_MSG_CALL_ENC || r == NULL ||
	    !rpcr_clnt_serves(r->cl, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS)) {
		XPRT_LOG(ERR,
			 "%s not sent: this client does not serve program 0x%08x version %u "
			 "(rpcr_testprog_cb_register())",
			 what, RPCR_TESTPROG_CB, RPCR_TESTPROG_CB_VERS);
		return false;
	}
	return true;
}

int
rpcr_testprog_enc_callback(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_testprog_cb_args *a = args;
	int rc;

	if (!tp_consents(m, "CALLBACK"))
		return -ENOTSUP;
	if (a->len > RPCR_TESTPROG_CB_MAX || (a->len != 0 && a->data == NULL))
		return -EINVAL;
	rc = rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->count);
	return rc != 0 ? rc : rpcr_xdr_enc_opaque(rpcr_msg_enc(m), a->data, a->len);
}

int
rpcr_testprog_enc_cbbulk(struct rpcr_msg *m, const void *args)
{
	const struct rpcr_testprog_cb_args *a = args;
	int rc;

	if (!tp_consents(m, "CBBULK"))
		return -ENOTSUP;
	if (a->flags > RPCR_TESTPROG_CBBULK_WHOLE ||
	    a->len > (a->flags != 0 ? RPCR_TESTPROG_CBBULK_WHOLE_MAX : RPCR_TESTPROG_CBBULK_MAX))
		return -EINVAL;
	rc = rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->count);
	if (rc == 0)
		rc = rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->len);
	return rc != 0 ? rc : rpcr_xdr_enc_u32(rpcr_msg_enc(m), a->flags);
}

int
rpcr_testprog_dec_u32(struct rpcr_msg *m, void *res)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), res);
}

/* ---- the callback program 0x2f5a0003, served by clients ---- */

static enum rpcr_svc_verdict
tp_cb_null(struct rpcr_svc_req *r)
{
	RTE_SET_USED(r);
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
tp_cb_echo(struct rpcr_svc_req *r)
{
	const void *d;
	uint32_t len;

	if (rpcr_xdr_dec_opaque(rpcr_msg_dec(rpcr_svc_req_args(r)), RPCR_TESTPROG_CB_MAX, &d,
				&len) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_xdr_enc_opaque(rpcr_msg_enc(rpcr_svc_req_results(r)), d, len) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

/* BULK: the arguments' buffers echoed (zero copy: read chunk in, write chunk out, where the
 * reverse direction takes chunks). */
static enum rpcr_svc_verdict
tp_cb_bulk(struct rpcr_svc_req *r)
{
	struct rpcr_bulk b;

	if (rpcr_msg_get_bulk(rpcr_svc_req_args(r), RPCR_TESTPROG_CBBULK_MAX, &b) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static const struct rpcr_svc_proc tp_cb_procs[] = {
	{.proc = RPCR_TESTPROG_CB_NULL, .handler = tp_cb_null},
	{.proc = RPCR_TESTPROG_CB_ECHO, .handler = tp_cb_echo},
	{.proc = RPCR_TESTPROG_CB_BULK, .handler = tp_cb_bulk, .ulb = TP_CB_BULK_ULB},
};

int
rpcr_testprog_cb_register(struct rpcr_clnt *cl)
{
	struct rpcr_svc_prog prog = {.prog = RPCR_TESTPROG_CB,
				     .vers = RPCR_TESTPROG_CB_VERS,
				     .procs = tp_cb_procs,
				     .nprocs = RTE_DIM(tp_cb_procs)};

	return rpcr_clnt_register(cl, &prog);
}
