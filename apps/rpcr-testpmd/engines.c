/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Traffic engines: every stream keeps cfg.outstanding calls of the test program in flight, each
 * completion checks the result and sends the next call from the same slot. All of it runs on the
 * port's worker lcore (completions run inside rpcr_xprt_poll()).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <rpcr_chunk.h>

#include "testpmd.h"

const char *const tp_err_names[TP_ERR_NUM] = {
	[TP_ERR_TIMEOUT] = "timeout", [TP_ERR_CONN] = "conn",     [TP_ERR_RDMA] = "rdma_error",
	[TP_ERR_RPC] = "rpc_error",   [TP_ERR_BADMSG] = "badmsg", [TP_ERR_VERIFY] = "verify",
	[TP_ERR_SUBMIT] = "submit",   [TP_ERR_OTHER] = "other",
};

/* Byte @i of what slot @s sends: differs from slot to slot and from READ's pattern. */
static inline uint8_t
arg_byte(uint32_t s, uint64_t i)
{
	return (uint8_t)(i * 13 + s * 7 + 1 + (i >> 9));
}

/* ---- decoders of the test program's results (its encoders are rpcr_testprog_enc_*()) ---- */

static int
dec_u32(struct rpcr_msg *m, void *res)
{
	struct tp_slot *sl = res;

	sl->dec_rc = rpcr_xdr_dec_u32(rpcr_msg_dec(m), &sl->u32);
	return sl->dec_rc;
}

/* ECHO and READ results: checked here, while the view is valid (until the completion). */
static int
dec_bulk(struct rpcr_msg *m, void *res)
{
	struct tp_slot *sl = res;

	memset(&sl->got, 0, sizeof(sl->got));
	sl->dec_rc = rpcr_msg_get_bulk(m, TP_MAX_SIZE, &sl->got);
	return sl->dec_rc;
}

/* Compare @len bytes of a bulk view with @want(i). @return true when equal. */
static bool
bulk_matches(const struct rpcr_bulk *b, uint32_t len, uint32_t s, bool pattern)
{
	const struct rte_mbuf *m = b->m;
	uint32_t off = b->off, i = 0;

	if (b->len != len)
		return false;
	while (i < len) {
		const uint8_t *p;
		uint32_t n, k;

		while (m != NULL && off >= m->data_len) {
			off -= m->data_len;
			m = m->next;
		}
		if (m == NULL)
			return false;
		p = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
		n = RTE_MIN(len - i, (uint32_t)m->data_len - off);
		for (k = 0; k < n; k++)
			if (p[k] != (pattern ? rpcr_testprog_byte(i + k) : arg_byte(s, i + k)))
				return false;
		i += n;
		off += n;
	}
	return true;
}

/* ---- engines ---- */

static uint32_t
next_fixed(struct tp_stream *st)
{
	switch (st->cfg.mode) {
	case TP_MODE_ECHO:
		return RPCR_TESTPROG_ECHO;
	case TP_MODE_WRITE:
		return RPCR_TESTPROG_WRITE;
	case TP_MODE_READ:
		return RPCR_TESTPROG_READ;
	case TP_MODE_CALLBACK:
		return RPCR_TESTPROG_CALLBACK;
	default:
		return RPCR_TESTPROG_NULL;
	}
}

static uint32_t
next_mixed(struct tp_stream *st)
{
	return st->turn++ % 4;
}

/* Results: into our registered buffer (write chunk) or a reply chunk as configured; a result
 * too long for a Send goes in a write chunk unless a reply chunk was asked for. */
static void
want_results(struct tp_stream *st, struct tp_slot *sl, uint32_t len)
{
	bool fits = len + 200 <= (st->cfg.inline_size != 0 ? st->cfg.inline_size : 4096);

	if (st->cfg.chunk == TP_CHUNK_REPLY) {
		sl->call.reply_max = len + 64;
	} else if (st->cfg.chunk == TP_CHUNK_WRITE || !fits) {
		sl->rb = (struct rpcr_bulk){sl->res_m, 0, len};
		sl->call.res_bulk = &sl->rb;
		sl->call.nres_bulk = 1;
	}
}

static void
prepare(struct tp_stream *st, struct tp_slot *sl, uint32_t proc)
{
	struct rpcr_call *c = &sl->call;
	uint32_t len = st->cfg.size;

	memset(c, 0, sizeof(*c));
	c->proc = proc;
	c->res = sl;
	switch (proc) {
	case RPCR_TESTPROG_ECHO:
		c->encode = rpcr_testprog_enc_data;
		c->args = &sl->ab;
		c->decode = dec_bulk;
		want_results(st, sl, len);
		break;
	case RPCR_TESTPROG_WRITE:
		c->encode = rpcr_testprog_enc_data;
		c->args = &sl->ab;
		c->decode = dec_u32;
		break;
	case RPCR_TESTPROG_READ:
		sl->read_len = len;
		c->encode = rpcr_testprog_enc_len;
		c->args = &sl->read_len;
		c->decode = dec_bulk;
		want_results(st, sl, len);
		break;
	case RPCR_TESTPROG_CALLBACK:
		/* The server calls our ECHO of the callback program TP_CB_COUNT times with the
		 * slot's data, and answers how many echoes came back right. */
		sl->cba = (struct rpcr_testprog_cb_args){
			.count = TP_CB_COUNT, .data = sl->arg, .len = len};
		c->encode = rpcr_testprog_enc_callback;
		c->args = &sl->cba;
		c->decode = dec_u32;
		break;
	default:
		break;
	}
}

static int
check(struct tp_stream *st, struct tp_slot *sl, uint64_t *bytes)
{
	uint32_t len = st->cfg.size, s = (uint32_t)(sl - st->slots);

	*bytes = 0;
	switch (sl->call.proc) {
	case RPCR_TESTPROG_ECHO:
		if (sl->dec_rc != 0 || !bulk_matches(&sl->got, len, s, false))
			return TP_ERR_VERIFY;
		*bytes = 2ull * len;
		return TP_OK;
	case RPCR_TESTPROG_WRITE:
		if (sl->dec_rc != 0 || sl->u32 != len)
			return TP_ERR_VERIFY;
		*bytes = len;
		return TP_OK;
	case RPCR_TESTPROG_READ:
		if (sl->dec_rc != 0 || !bulk_matches(&sl->got, len, s, true))
			return TP_ERR_VERIFY;
		*bytes = len;
		return TP_OK;
	case RPCR_TESTPROG_CALLBACK:
		if (sl->dec_rc != 0 || sl->u32 != TP_CB_COUNT)
			return TP_ERR_VERIFY;
		*bytes = 2ull * TP_CB_COUNT * len;
		return TP_OK;
	default:
		return TP_OK;
	}
}

static const struct tp_engine eng_null = {"null", next_fixed, prepare, check};
static const struct tp_engine eng_echo = {"echo", next_fixed, prepare, check};
static const struct tp_engine eng_write = {"write", next_fixed, prepare, check};
static const struct tp_engine eng_read = {"read", next_fixed, prepare, check};
static const struct tp_engine eng_mixed = {"mixed", next_mixed, prepare, check};
static const struct tp_engine eng_callback = {"callback", next_fixed, prepare, check};

/* Indexed by enum tp_mode. */
const struct tp_engine *const tp_engines[] = {&eng_null,  &eng_echo,     &eng_write, &eng_read,
					      &eng_mixed, &eng_callback, NULL};

/* ---- streams ---- */

static void issue(struct tp_slot *sl);

static int
err_of(int status)
{
	switch (status) {
	case -ETIMEDOUT:
		return TP_ERR_TIMEOUT;
	case -ECONNRESET:
	case -ECONNABORTED:
		return TP_ERR_CONN;
	case -EPROTO:
		return TP_ERR_RDMA;
	case -EREMOTEIO:
		return TP_ERR_RPC;
	case -EBADMSG:
		return TP_ERR_BADMSG;
	default:
		return TP_ERR_OTHER;
	}
}

static void
done(struct rpcr_call *call)
{
	struct tp_slot *sl = call->user;
	struct tp_stream *st = sl->st;
	uint64_t bytes, ns;
	int e;

	st->inflight--;
	bytes = 0;
	if (call->status != 0)
		e = err_of(call->status);
	else
		e = st->eng->check(st, sl, &bytes);
	if (e == TP_OK) {
		ns = (rte_rdtsc() - sl->t0) * 1000000000ull / rte_get_tsc_hz();
		st->stats.calls++;
		st->stats.bytes += bytes;
		st->stats.lat_sum_ns += ns;
		if (ns > st->stats.lat_max_ns)
			st->stats.lat_max_ns = ns;
		st->consec_errors = 0;
	} else {
		st->stats.errors[e]++;
		st->last_status = call->status != 0 ? call->status : -EIO;
		if (++st->consec_errors == TP_MAX_CONSEC_ERRORS && st->running) {
			/* Failing every time: stop instead of spinning. */
			tp_stream_stop(st);
			printf("\nstream %u: %u calls in a row failed (last: %s): stopped\n",
			       st->id, TP_MAX_CONSEC_ERRORS,
			       e == TP_ERR_VERIFY ? "data check" : strerror(-st->last_status));
			fflush(stdout);
		}
	}
	if (st->running)
		issue(sl);
}

static void
issue(struct tp_slot *sl)
{
	struct tp_stream *st = sl->st;
	int rc;

	st->eng->prepare(st, sl, st->eng->next_proc(st));
	sl->call.done = done;
	sl->call.user = sl;
	sl->t0 = rte_rdtsc();
	rc = st->cl != NULL ? rpcr_clnt_call(st->cl, &sl->call) : -ENOTCONN;
	if (rc != 0) {
		/* Nothing in flight on this slot any more: a stream with none stops. */
		st->stats.errors[TP_ERR_SUBMIT]++;
		st->last_status = rc;
		if (st->inflight == 0 && st->running) {
			tp_stream_stop(st);
			printf("\nstream %u: calls refused (%s): stopped\n", st->id, strerror(-rc));
			fflush(stdout);
		}
		return;
	}
	st->inflight++;
}

static void
noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

/* A registered buffer of @len bytes and its chain. */
static int
buf_make(struct tp_port *port, uint32_t len, uint32_t access, uint8_t **mem,
	 struct rpcr_mem_reg **reg, struct rte_mbuf **m)
{
	size_t span = RTE_MAX(len, 1u);

	*mem = rpcr_mem_arena_alloc(port->arena, span, 4096);
	if (*mem == NULL)
		return -ENOMEM;
	*reg = rpcr_mem_reg(port->mc, *mem, span, access);
	if (*reg == NULL)
		return -rte_errno;
	*m = rpcr_chunk_attach(rpcr_xprt_poller_pool(port->p), *reg, *mem, (uint32_t)span,
			       noop_free, NULL);
	if (*m == NULL)
		return -rte_errno;
	return 0;
}

static void
buf_free(struct tp_port *port, uint8_t **mem, struct rpcr_mem_reg **reg, struct rte_mbuf **m)
{
	if (*m != NULL)
		rte_pktmbuf_free(*m);
	if (*reg != NULL)
		rpcr_mem_unreg(port->mc, *reg);
	if (*mem != NULL) {
		rpcr_mem_cache_invalidate(port->mc, *mem, 1);
		rte_free(*mem);
	}
	*m = NULL;
	*reg = NULL;
	*mem = NULL;
}

void
tp_stream_release(struct tp_stream *st)
{
	uint32_t i;

	for (i = 0; i < st->nslots; i++) {
		struct tp_slot *sl = &st->slots[i];

		buf_free(st->port, &sl->arg, &sl->arg_reg, &sl->arg_m);
		buf_free(st->port, &sl->res, &sl->res_reg, &sl->res_m);
	}
	free(st->slots);
	st->slots = NULL;
	st->nslots = 0;
}

int
tp_stream_start(struct tp_stream *st)
{
	bool data = st->cfg.mode != TP_MODE_NULL;
	uint32_t i, k;
	int rc;

	if (st->inflight != 0)
		return -EBUSY;
	tp_stream_release(st);
	st->eng = tp_engines[st->cfg.mode];
	st->slots = calloc(st->cfg.outstanding, sizeof(*st->slots));
	if (st->slots == NULL)
		return -ENOMEM;
	st->nslots = st->cfg.outstanding;
	for (i = 0; i < st->nslots; i++) {
		struct tp_slot *sl = &st->slots[i];

		sl->st = st;
		if (!data)
			continue;
		rc = buf_make(st->port, st->cfg.size, rpcr_xprt_poller_mem_access(st->port->p),
			      &sl->arg, &sl->arg_reg, &sl->arg_m);
		if (rc == 0)
			rc = buf_make(st->port, st->cfg.size,
				      rpcr_xprt_poller_mem_access(st->port->p), &sl->res,
				      &sl->res_reg, &sl->res_m);
		if (rc != 0) {
			tp_stream_release(st);
			return rc;
		}
		for (k = 0; k < st->cfg.size; k++)
			sl->arg[k] = arg_byte(i, k);
		sl->ab = (struct rpcr_bulk){sl->arg_m, 0, st->cfg.size};
	}
	st->turn = 0;
	st->running = true;
	st->started_tsc = rte_rdtsc();
	st->stopped_tsc = 0;
	for (i = 0; i < st->nslots; i++)
		issue(&st->slots[i]);
	return 0;
}

void
tp_stream_stop(struct tp_stream *st)
{
	if (st->running) {
		st->running = false;
		st->stopped_tsc = rte_rdtsc();
	}
}
