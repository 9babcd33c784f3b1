/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>

#include "xprt_test.h"

/* ---- data buffers ---- */

static void
tbuf_noop(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

/* Pieces are laid out with a 4 KiB gap between them, so that they are not contiguous. */
#define TBUF_GAP 4096u

uint32_t tbuf_access;

int
tbuf_make(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_mem_cache *mc,
	  struct tbuf *t, uint32_t len, uint32_t pieces)
{
	uint32_t per, off = 0, i;
	size_t span;
	struct rte_mbuf *prev = NULL;

	memset(t, 0, sizeof(*t));
	if (pieces == 0)
		pieces = 1;
	if (len < pieces)
		pieces = len == 0 ? 1 : len;
	per = (len + pieces - 1) / pieces;
	span = (size_t)pieces * (per + TBUF_GAP) + 64;
	t->mem = rpcr_mem_arena_alloc(a, span, 4096);
	if (t->mem == NULL)
		return -ENOMEM;
	t->len = len;
	t->pieces = pieces;
	t->reg = rpcr_mem_reg(mc, t->mem, span,
			      tbuf_access != 0 ? tbuf_access : rpcr_xprt_poller_mem_access(p));
	if (t->reg == NULL) {
		rte_free(t->mem);
		return -rte_errno;
	}
	for (i = 0; i < pieces; i++) {
		uint32_t n = RTE_MIN(per, len - off);
		struct rte_mbuf *m;

		m = rpcr_chunk_attach(rpcr_xprt_poller_pool(p), t->reg,
				      t->mem + (size_t)i * (per + TBUF_GAP), n, tbuf_noop, NULL);
		if (m == NULL) {
			tbuf_free(mc, t);
			return -ENOMEM;
		}
		if (prev == NULL) {
			t->m = m;
		} else {
			struct rte_mbuf *last = rte_pktmbuf_lastseg(t->m);

			last->next = m;
			t->m->nb_segs = (uint16_t)(t->m->nb_segs + m->nb_segs);
			t->m->pkt_len += m->pkt_len;
		}
		prev = m;
		off += n;
	}
	return 0;
}

void
tbuf_free(struct rpcr_mem_cache *mc, struct tbuf *t)
{
	rte_pktmbuf_free(t->m);
	if (t->reg != NULL)
		rpcr_mem_unreg(mc, t->reg);
	rpcr_mem_cache_invalidate(mc, t->mem, 1);
	rte_free(t->mem);
	memset(t, 0, sizeof(*t));
}

static uint8_t *
tbuf_at(const struct tbuf *t, uint32_t i)
{
	uint32_t per = (t->len + t->pieces - 1) / t->pieces;

	return t->mem + (size_t)(i / per) * (per + TBUF_GAP) + i % per;
}

uint8_t
tbuf_byte(const struct tbuf *t, uint32_t i)
{
	return *tbuf_at(t, i);
}

void
tbuf_fill(struct tbuf *t, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < t->len; i++)
		*tbuf_at(t, i) = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

void
tbuf_clear(struct tbuf *t)
{
	uint32_t i;

	for (i = 0; i < t->len; i++)
		*tbuf_at(t, i) = 0xee;
}

/* ---- encoders and decoders ---- */

int
tp_dec_bulk(struct rpcr_msg *m, void *res)
{
	struct tp_echo_res *r = res;

	r->got = rpcr_msg_get_bulk(m, r->max, &r->b);
	/* The view outlives the completion: keep its buffers (released by the test). */
	if (r->got == 0 && r->b.m != NULL)
		rpcr_chunk_hold(r->b.m);
	return r->got;
}

int
tp_dec_u32(struct rpcr_msg *m, void *res)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), res);
}

/* Walk a bulk view byte by byte (tests only). */
struct bulk_iter {
	const struct rte_mbuf *m;
	uint32_t off;
};

static void
iter_init(struct bulk_iter *it, const struct rpcr_bulk *b)
{
	it->m = b->m;
	it->off = b->off;
	while (it->m != NULL && it->off >= it->m->data_len) {
		it->off -= it->m->data_len;
		it->m = it->m->next;
	}
}

static int
iter_next(struct bulk_iter *it)
{
	int v;

	while (it->m != NULL && it->off >= it->m->data_len) {
		it->m = it->m->next;
		it->off = 0;
	}
	if (it->m == NULL)
		return -1;
	v = rte_pktmbuf_mtod_offset(it->m, const uint8_t *, it->off)[0];
	it->off++;
	return v;
}

bool
bulk_equals_pattern(const struct rpcr_bulk *b)
{
	struct bulk_iter it;
	uint32_t i;

	iter_init(&it, b);
	for (i = 0; i < b->len; i++)
		if (iter_next(&it) != rpcr_testprog_byte(i)) {
			fprintf(stderr, "READ data differs at byte %u of %u\n", i, b->len);
			return false;
		}
	return true;
}

bool
bulk_equals(const struct rpcr_bulk *b, const struct rpcr_bulk *want)
{
	struct bulk_iter x, y;
	uint32_t i;

	if (b->len != want->len) {
		fprintf(stderr, "length %u, expected %u\n", b->len, want->len);
		return false;
	}
	iter_init(&x, b);
	iter_init(&y, want);
	for (i = 0; i < b->len; i++) {
		int u = iter_next(&x), v = iter_next(&y);

		if (u != v || u < 0) {
			fprintf(stderr, "data differs at byte %u of %u (%d, expected %d)\n", i,
				b->len, u, v);
			return false;
		}
	}
	return true;
}

/* ---- the server ---- */

#define XT_MAX_HELD 2048

static struct {
	struct rpcr_svc_req *held[XT_MAX_HELD];
	uint32_t nheld;
	uint32_t hold_target;
	uint32_t hold_max;
	uint64_t last_hold_tsc;
	struct rpcr_svc_req *slow[XT_MAX_HELD];
	uint64_t slow_due[XT_MAX_HELD];
	uint32_t nslow;
	uint32_t slow_ms;
} xs;

static enum rpcr_svc_verdict
xt_hold(struct rpcr_svc_req *r)
{
	if (xs.nheld == XT_MAX_HELD)
		return RPCR_SVC_REPLY;
	xs.held[xs.nheld++] = r;
	xs.hold_max = RTE_MAX(xs.hold_max, xs.nheld);
	xs.last_hold_tsc = rte_rdtsc();
	return RPCR_SVC_DEFERRED;
}

static enum rpcr_svc_verdict
xt_slow(struct rpcr_svc_req *r)
{
	if (xs.nslow == XT_MAX_HELD)
		return RPCR_SVC_REPLY;
	xs.slow[xs.nslow] = r;
	xs.slow_due[xs.nslow] = rte_rdtsc() + rte_get_tsc_hz() / 1000 * xs.slow_ms;
	xs.nslow++;
	return RPCR_SVC_DEFERRED;
}

static enum rpcr_svc_verdict
xt_mix(struct rpcr_svc_req *r)
{
	struct rpcr_msg *a = rpcr_svc_req_args(r), *res = rpcr_svc_req_results(r);
	const void *small;
	uint32_t slen;
	struct rpcr_bulk big;

	if (rpcr_xdr_dec_opaque(rpcr_msg_dec(a), 1u << 20, &small, &slen) != 0 ||
	    rpcr_msg_get_bulk(a, UINT32_MAX, &big) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_xdr_enc_opaque(rpcr_msg_enc(res), small, slen) != 0 ||
	    rpcr_msg_put_bulk(res, &big) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static enum rpcr_svc_verdict
xt_multi(struct rpcr_svc_req *r)
{
	struct rpcr_msg *a = rpcr_svc_req_args(r), *res = rpcr_svc_req_results(r);
	struct rpcr_bulk ba, bb, bc;
	uint32_t x;

	if (rpcr_msg_get_bulk(a, UINT32_MAX, &ba) != 0 ||
	    rpcr_xdr_dec_u32(rpcr_msg_dec(a), &x) != 0 ||
	    rpcr_msg_get_bulk(a, UINT32_MAX, &bb) != 0 ||
	    rpcr_msg_get_bulk(a, UINT32_MAX, &bc) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (rpcr_msg_put_bulk(res, &bc) != 0 || rpcr_msg_put_bulk(res, &ba) != 0 ||
	    rpcr_xdr_enc_u32(rpcr_msg_enc(res), x) != 0 || rpcr_msg_put_bulk(res, &bb) != 0) {
		rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	return RPCR_SVC_REPLY;
}

static struct rpcr_svc_proc xt_procs[] = {
	{.proc = 0, .handler = NULL},
	{.proc = XT_HOLD, .handler = xt_hold},
	{.proc = XT_MIX, .handler = xt_mix, .ulb = {.args_bulk = 1, .res_bulk = 1}},
	{.proc = XT_MULTI, .handler = xt_multi, .ulb = {.args_bulk = 3, .res_bulk = 3}},
	{.proc = XT_SLOW, .handler = xt_slow},
};

struct xt_worker {
	struct rte_ring *ring;
	volatile bool stop;
	pthread_t tid;
	bool running;
};

static void *
xt_worker_main(void *arg)
{
	struct xt_worker *w = arg;
	void *obj;

	while (!w->stop) {
		if (rte_ring_mc_dequeue(w->ring, &obj) == 0)
			rpcr_svc_req_run(obj);
		else
			rte_pause();
	}
	return NULL;
}

static struct rpcr_svc *
xt_svc_start(struct rpcr_xprt_poller *p, const char *addr, const uint64_t *v, struct xt_worker *w)
{
	struct rpcr_svc_conf sc;
	struct rpcr_svc_prog pg;
	struct rpcr_svc *s;
	uint32_t i;

	memset(&sc, 0, sizeof(sc));
	sc.addr = addr;
	sc.credits = (uint32_t)v[0];
	sc.inline_send = (uint32_t)v[1];
	sc.inline_recv = (uint32_t)v[2];
	sc.remote_inv = v[3] != 0;
	sc.no_draft = v[4] != 0;
	sc.msgp_thresh = (uint32_t)v[7];
	sc.versions = (uint32_t)v[8] & ~XT_SRV_XCHAR;
	sc.xchar = (v[8] & XT_SRV_XCHAR) != 0;
	if (v[5] != 0) {
		sc.dispatch_ring = w->ring;
		if (!w->running) {
			w->stop = false;
			pthread_create(&w->tid, NULL, xt_worker_main, w);
			w->running = true;
		}
	}
	s = rpcr_svc_create(p, &sc);
	if (s == NULL) {
		fprintf(stderr, "server: svc: %s\n", rte_strerror(rte_errno));
		return NULL;
	}
	if (rpcr_testprog_register(s, (uint32_t)v[6]) != 0)
		fprintf(stderr, "server: test program not registered\n");
	for (i = 0; i < RTE_DIM(xt_procs); i++)
		if (xt_procs[i].ulb.args_bulk || xt_procs[i].ulb.res_bulk)
			xt_procs[i].ulb.threshold = v[6] != 0 ? (uint32_t)v[6] : 1024;
	memset(&pg, 0, sizeof(pg));
	pg.prog = XT_PROG;
	pg.vers = XT_VERS;
	pg.procs = xt_procs;
	pg.nprocs = RTE_DIM(xt_procs);
	rpcr_svc_register(s, &pg);
	return s;
}

static void
xt_release_held(void)
{
	uint32_t i;

	for (i = 0; i < xs.nheld; i++)
		rpcr_svc_reply(xs.held[i]);
	xs.nheld = 0;
	for (i = 0; i < xs.nslow; i++)
		rpcr_svc_reply(xs.slow[i]);
	xs.nslow = 0;
}

static void
xt_svc_stop(struct rpcr_svc **s, struct xt_worker *w, struct rpcr_xprt_poller *p)
{
	int i;

	if (*s == NULL)
		return;
	xt_release_held();
	for (i = 0; i < 100000; i++) {
		if (rpcr_svc_destroy(*s) != -EBUSY)
			break;
		rpcr_xprt_poll(p);
	}
	*s = NULL;
	if (w->running) {
		w->stop = true;
		pthread_join(w->tid, NULL);
		w->running = false;
	}
}

/* The engine server's address beside the harness's @base: "IP:PORT" -> "IP:PORT+1" (rdma_cm),
 * anything else -> "@base-x" (a shm socket name). */
void
xt_server_addr(const char *base, char *out, size_t n)
{
	const char *colon = strrchr(base, ':');
	char *end;
	unsigned long port;

	if (colon != NULL) {
		port = strtoul(colon + 1, &end, 10);
		if (*end == '\0' && end != colon + 1 && port < 65535) {
			snprintf(out, n, "%.*s:%lu", (int)(colon - base), base, port + 1);
			return;
		}
	}
	snprintf(out, n, "%s-x", base);
}

int
xt_server_main(struct player *P)
{
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_xprt_poller *p;
	struct rpcr_rdev *dev;
	struct rpcr_svc *s = NULL;
	struct xt_worker w = {0};
	uint64_t cfg[10] = {0}, hz = rte_get_tsc_hz();
	char addr[128];
	bool crash_armed = false, stop = false;
	uint64_t n = 0;
	int status = 0;

	xt_server_addr(P->addr, addr, sizeof(addr));
	if (getenv("XT_DEBUG") != NULL) {
		rte_log_set_global_level(RTE_LOG_DEBUG);
		rte_log_set_level_regexp("rpcr", RTE_LOG_DEBUG);
	}
	dev = rpcr_rdev_open(P->devargs);
	if (dev == NULL)
		return 1;
	memset(&pc, 0, sizeof(pc));
	pc.name = "server";
	pc.dev = dev;
	pc.arena = P->arena;
	pc.bulk_bufs = 1024;
	p = rpcr_xprt_poller_create(&pc);
	if (p == NULL)
		return 1;
	w.ring = rte_ring_create("xt_workers", 4096, SOCKET_ID_ANY, 0);
	ctl_send(P, CMD_ACK, 0, NULL);
	while (!stop) {
		struct rpcr_xprt_stats st;
		uint64_t before, before_replies;

		rpcr_xprt_stats_get(p, &st);
		before = st.calls_recv;
		before_replies = st.replies_sent;
		rpcr_xprt_poll(p);
		if (crash_armed) {
			rpcr_xprt_stats_get(p, &st);
			if (st.calls_recv - before > st.replies_sent - before_replies) {
				/* A call arrived and was not answered in the same poll: its RDMA
				 * Reads are posted, it is not served yet. The connection goes now,
				 * as if the server had died. */
				xt_svc_stop(&s, &w, p);
				s = xt_svc_start(p, addr, cfg, &w);
				crash_armed = false;
			}
		}
		if (xs.nheld != 0 &&
		    (xs.nheld >= xs.hold_target || rte_rdtsc() - xs.last_hold_tsc > hz)) {
			uint32_t i;

			for (i = 0; i < xs.nheld; i++)
				rpcr_svc_reply(xs.held[i]);
			xs.nheld = 0;
		}
		if (xs.nslow != 0) {
			uint64_t now = rte_rdtsc();
			uint32_t i, k = 0;

			for (i = 0; i < xs.nslow; i++) {
				if (xs.slow_due[i] <= now) {
					rpcr_svc_reply(xs.slow[i]);
				} else {
					xs.slow[k] = xs.slow[i];
					xs.slow_due[k++] = xs.slow_due[i];
				}
			}
			xs.nslow = k;
		}
		if ((++n & 255) == 0) {
			struct ctl_msg m;

			if (recv(P->ctl, &m, sizeof(m), MSG_DONTWAIT) != (ssize_t)sizeof(m))
				continue;
			switch (m.tag) {
			case CMD_START:
				xt_svc_stop(&s, &w, p);
				memcpy(cfg, m.v, sizeof(cfg));
				s = xt_svc_start(p, addr, cfg, &w);
				rpcr_xprt_stats_reset(p);
				xs.hold_max = 0;
				ctl_send(P, CMD_ACK, 0, NULL);
				break;
			case CMD_CRASH_ON_CALL:
				crash_armed = true;
				ctl_send(P, CMD_ACK, 0, NULL);
				break;
			case CMD_HOLD:
				xs.hold_target = (uint32_t)m.v[0];
				xs.slow_ms = (uint32_t)m.v[1];
				xs.hold_max = 0;
				ctl_send(P, CMD_ACK, 0, NULL);
				break;
			case CMD_PAUSE:
				/* A server busy elsewhere: its receives are not replenished. */
				ctl_send(P, CMD_ACK, 0, NULL);
				usleep((useconds_t)m.v[0] * 1000u);
				break;
			case CMD_INFO: {
				uint64_t v[8];

				rpcr_xprt_stats_get(p, &st);
				v[0] = (uint64_t)rpcr_xprt_conn_list(p, NULL, 0);
				v[1] = st.wc_errors;
				v[2] = st.rdma_errors_sent;
				v[3] = st.bad_headers;
				v[4] = st.overruns;
				v[5] = st.calls_recv;
				v[6] = st.replies_sent;
				v[7] = st.limit_chunks + st.limit_call_bytes;
				ctl_send(P, CMD_ACK, 8, v);
				break;
			}
			case CMD_STATS: {
				uint64_t v[8];

				rpcr_xprt_stats_get(p, &st);
				v[0] = st.calls_recv;
				v[1] = st.replies_sent;
				v[2] = st.rdma_errors_sent;
				v[3] = xs.hold_max;
				v[4] = st.bad_headers;
				v[5] = st.overruns;
				v[6] = st.dones_recv;
				v[7] = st.done_timeouts;
				ctl_send(P, CMD_ACK, 8, v);
				break;
			}
			case CMD_DEV_STATS: {
				struct rpcr_rdev_stats ds;
				uint64_t v[6];

				memset(&ds, 0, sizeof(ds));
				rpcr_rdev_stats_get(dev, &ds);
				v[0] = ds.disconnects;
				v[1] = ds.fault_disconnects;
				v[2] = ds.fault_reg;
				v[3] = ds.fault_recv;
				v[4] = ds.fault_delayed;
				v[5] = ds.fault_last_tsc;
				ctl_send(P, CMD_ACK, 6, v);
				break;
			}
			case CMD_STOP:
				stop = true;
				break;
			default:
				fprintf(stderr, "server: unknown command 0x%x\n", m.tag);
				break;
			}
		}
	}
	xt_svc_stop(&s, &w, p);
	rte_ring_free(w.ring);
	if (rpcr_xprt_poller_destroy(p) != 0) {
		/* A buffer or a connection leaked. */
		fprintf(stderr, "server: poller busy at exit\n");
		status = 1;
	}
	rpcr_rdev_close(dev);
	ctl_send(P, CMD_ACK, 0, NULL);
	return status;
}
