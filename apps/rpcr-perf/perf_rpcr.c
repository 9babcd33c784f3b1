/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The rpcr side of rpcr-perf: a client that measures one point at a time on one poller (one
 * lcore, run to completion: each completion verifies its result and starts the next call), and
 * the server, the engine's test program on one poller.
 *
 * Data items live in registered memory of the client's arena, wrapped without a copy as chains
 * (rpcr_chunk_attach()) that stay the same for every call of a point: at or above the DDP
 * threshold ECHO and WRITE arguments go in read chunks and ECHO and READ results land in the
 * write chunk offered from the slot's result buffer; below it, both are inline.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <rpcr_chunk.h>
#include <rpcr_mem.h>
#include <rpcr_xprt.h>

#include "perf.h"

#define CALL_TIMEOUT_US (20ull * 1000000) /* a call that takes longer is an error */
#define CONNECT_TIMEOUT 5.0               /* seconds */
#define DRAIN_EXTRA_S   5.0    /* after the measured window, outstanding calls get this long */
#define ATTACH_PIECE    32768u /* rpcr_chunk_attach() splits memory into pieces this big */
#define MSG_BUF_BYTES   10500u /* a message buffer with its mbuf header, roughly */
#define BULK_BUF_BYTES  61700u /* a bulk buffer with its mbuf header, roughly */
#define BULK_DATA       61440u /* data bytes of a bulk buffer */
#define POINT_OVERRUN_S 30.0   /* a point that counts too few calls gives up after this */
#define PERF_CB_CREDITS 64u    /* calls from the server each client serves (CALLBACK) */

/* ---- control messages (loopback) ---- */

int
perf_ctl_send(int fd, uint32_t tag, const uint64_t *v, uint32_t n)
{
	struct perf_ctl_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	m.n = RTE_MIN(n, (uint32_t)RTE_DIM(m.v));
	if (m.n != 0)
		memcpy(m.v, v, m.n * sizeof(v[0]));
	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -EPIPE;
}

int
perf_ctl_recv(int fd, struct perf_ctl_msg *m, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;
	int rc;

	do {
		rc = poll(&pfd, 1, ms);
	} while (rc < 0 && errno == EINTR && perf_running);
	if (rc == 0)
		return -ETIMEDOUT;
	if (rc < 0)
		return -errno;
	n = recv(fd, m, sizeof(*m), 0);
	return n == (ssize_t)sizeof(*m) ? 0 : -EPIPE;
}

/* ---- the client ---- */

/* A data buffer: registered memory in the arena. */
struct dbuf {
	uint8_t *mem;
	size_t cap;
	struct rpcr_mem_reg *reg;
};

struct run;

/* One call kept going: its buffers, its decoded results. */
struct slot {
	struct rpcr_call call;
	struct run *run;
	struct rpcr_clnt *cl;
	struct dbuf *arg, *res;       /* NULL for NULL calls */
	struct rte_mbuf *argm, *resm; /* chains over them, for this point's size */
	struct rpcr_bulk argb;        /* ECHO, WRITE argument */
	struct rpcr_bulk resb;        /* where ECHO and READ results may land */
	struct rpcr_bulk view;        /* the result as decoded */
	uint64_t t0;                  /* TSC when the call was started */
	uint32_t len;                 /* the point's size: READ's argument, the expected length */
	uint32_t count;               /* WRITE's result, CALLBACK's */
	struct rpcr_testprog_cb_args cba; /* CALLBACK's arguments */
	uint32_t seq;                     /* calls made, stamped into ECHO data */
};

/* One point being measured. */
struct run {
	struct perf_rpcr_client *pc;
	struct perf_point *pt;
	struct perf_result *r;
	struct perf_hist *hist; /* lat points */
	bool counting;          /* inside the measured window */
	bool stopping;          /* start no more calls */
	uint64_t calls, bytes;  /* counted in the window */
	uint64_t verify_tsc;    /* time spent verifying inside the window */
	uint32_t inflight;
};

struct perf_rpcr_client {
	const struct perf_conf *conf;
	struct rpcr_rdev *dev;
	struct rpcr_mem_arena *arena;
	struct rpcr_xprt_poller *p;
	struct rpcr_mem_cache *mc;
	struct rpcr_chunk_pool *attach; /* small mbufs for rpcr_chunk_attach() */
	struct rpcr_ulb ulb[4];
	uint32_t credits;
	struct rpcr_clnt **cl; /* connections, made when a point first needs them */
	uint32_t ncl;
	struct dbuf *args, *ress; /* per data slot */
	uint32_t ndata;
	uint8_t *pattern; /* PERF_PATTERN_LEN bytes of the READ pattern */
	uint64_t hz;
	pid_t server;     /* loopback: the server process, watched */
	bool server_dead; /* ... and it exited */
};

static void
noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

/* The view is used (verified) in the completion, while it is valid: no reference is taken. */
static int
dec_bulk(struct rpcr_msg *m, void *res)
{
	struct slot *s = res;

	return rpcr_msg_get_bulk(m, s->len, &s->view);
}

static int
dec_u32(struct rpcr_msg *m, void *res)
{
	struct slot *s = res;

	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), &s->count);
}

/*
 * Compare the @b->len bytes of bulk view @b with @want, or with the READ pattern when @want is
 * NULL. @return the offset of the first byte that differs, or UINT32_MAX.
 */
static uint32_t
bulk_diff(const struct rpcr_bulk *b, const uint8_t *want, const uint8_t *pattern)
{
	const struct rte_mbuf *m = b->m;
	uint32_t off = b->off, done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (done < b->len) {
		const uint8_t *got, *ref;
		uint32_t n, k;

		if (m == NULL)
			return done;
		n = RTE_MIN(b->len - done, (uint32_t)m->data_len - off);
		got = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
		ref = want != NULL ? want + done : pattern + (done & 255u);
		if (memcmp(got, ref, n) != 0) {
			for (k = 0; k < n && got[k] == ref[k]; k++)
				;
			return done + k;
		}
		done += n;
		m = m->next;
		off = 0;
	}
	return UINT32_MAX;
}

/*
 * Spoil the result buffer after a result was checked, so that a later call whose result does
 * not land (a write chunk left unwritten) cannot pass on the previous call's bytes: one byte in
 * 256 and the last one are flipped.
 */
static void
poison(struct slot *s)
{
	uint8_t *p = s->res->mem;
	uint32_t i;

	for (i = 0; i < s->len; i += 256)
		p[i] ^= 0xff;
	if (s->len != 0 && (s->len - 1) % 256 != 0)
		p[s->len - 1] ^= 0xff;
}

static void
slot_verify(struct slot *s)
{
	struct run *r = s->run;
	uint32_t proc = r->pt->proc, at;

	switch (proc) {
	case PERF_NULL:
		return;
	case PERF_CALLBACK:
		if (s->count != s->cba.count)
			perf_result_error(r->r, true,
					  "CALLBACK: the server verified %u of %u calls back",
					  s->count, s->cba.count);
		return;
	case PERF_WRITE:
		if (s->count != s->len)
			perf_result_error(r->r, true, "WRITE %u bytes: the server counted %u",
					  s->len, s->count);
		return;
	case PERF_ECHO:
	case PERF_READ:
		if (s->view.len != s->len) {
			perf_result_error(r->r, true, "%s %u bytes: %u bytes came back",
					  perf_proc_name(proc), s->len, s->view.len);
		} else {
			at = bulk_diff(&s->view, proc == PERF_ECHO ? s->arg->mem : NULL,
				       r->pc->pattern);
			if (at != UINT32_MAX)
				perf_result_error(r->r, true,
						  "%s %u bytes: data differs at byte %u",
						  perf_proc_name(proc), s->len, at);
		}
		if (s->len >= r->pc->conf->threshold)
			poison(s);
		return;
	default:
		return;
	}
}

static void slot_done(struct rpcr_call *call);

static void
slot_start(struct slot *s)
{
	struct run *r = s->run;
	int rc;

	s->seq++;
	if (r->pt->proc == PERF_ECHO && s->len >= 4)
		memcpy(s->arg->mem, &s->seq, 4);
	s->view.len = UINT32_MAX;
	s->count = UINT32_MAX;
	s->t0 = rte_rdtsc();
	rc = rpcr_clnt_call(s->cl, &s->call);
	if (rc != 0) {
		perf_result_error(r->r, false, "%s: rpcr_clnt_call: %s",
				  perf_proc_name(r->pt->proc), strerror(-rc));
		return;
	}
	r->inflight++;
}

static void
slot_done(struct rpcr_call *call)
{
	struct slot *s = call->user;
	struct run *r = s->run;
	uint64_t t1 = rte_rdtsc();

	r->inflight--;
	if (call->status != 0) {
		perf_result_error(r->r, false, "%s %u bytes: call failed: %s (accept_stat %u)",
				  perf_proc_name(r->pt->proc), s->len, strerror(-call->status),
				  call->accept_stat);
	} else {
		if (r->counting) {
			r->calls++;
			if (r->pt->proc != PERF_NULL)
				r->bytes += s->len;
			if (r->hist != NULL)
				perf_hist_add(r->hist, t1 - s->t0);
		}
		if (r->pc->conf->verify) {
			uint64_t v0 = rte_rdtsc();

			slot_verify(s);
			if (r->counting)
				r->verify_tsc += rte_rdtsc() - v0;
		}
	}
	if (!r->stopping && r->r->errors + r->r->verify_errors < PERF_ERR_LIMIT)
		slot_start(s);
}

static uint64_t
round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int
dbuf_make(struct perf_rpcr_client *pc, struct dbuf *d, size_t cap)
{
	d->cap = round_up(RTE_MAX(cap, (size_t)1), 4096);
	d->mem = rpcr_mem_arena_alloc(pc->arena, d->cap, 4096);
	if (d->mem == NULL)
		return -ENOMEM;
	d->reg = rpcr_mem_reg(pc->mc, d->mem, d->cap, rpcr_xprt_poller_mem_access(pc->p));
	if (d->reg == NULL) {
		rte_free(d->mem);
		d->mem = NULL;
		return -rte_errno;
	}
	return 0;
}

static void
dbuf_free(struct perf_rpcr_client *pc, struct dbuf *d)
{
	if (d->mem == NULL)
		return;
	rpcr_mem_unreg(pc->mc, d->reg);
	rpcr_mem_cache_invalidate(pc->mc, d->mem, d->cap);
	rte_free(d->mem);
	d->mem = NULL;
}

void
perf_rpcr_client_watch(struct perf_rpcr_client *pc, pid_t server)
{
	pc->server = server;
}

struct perf_rpcr_client *
perf_rpcr_client_open(const struct perf_conf *c, const struct perf_point *pts, uint32_t npts)
{
	struct perf_rpcr_client *pc = calloc(1, sizeof(*pc));
	struct rpcr_xprt_poller_conf xc;
	struct rpcr_chunk_pool_conf ac;
	uint32_t max_conns = 1, max_depth = 1, max_size = 0, ndata = 0, i, bufs, nattach;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	size_t arena_len;

	if (pc == NULL)
		return NULL;
	pc->conf = c;
	pc->hz = rte_get_tsc_hz();
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];

		max_conns = RTE_MAX(max_conns, pt->conns);
		max_depth = RTE_MAX(max_depth, pt->depth);
		if (pt->proc != PERF_NULL) {
			max_size = RTE_MAX(max_size, pt->size);
			ndata = RTE_MAX(ndata, pt->conns * pt->depth);
		}
	}
	pc->credits = RTE_MIN(RTE_MAX(32u, max_depth), 1024u);
	pc->ncl = max_conns;
	pc->ndata = ndata;
	pc->cl = calloc(max_conns, sizeof(*pc->cl));
	pc->args = calloc(RTE_MAX(ndata, 1u), sizeof(*pc->args));
	pc->ress = calloc(RTE_MAX(ndata, 1u), sizeof(*pc->ress));
	if (pc->cl == NULL || pc->args == NULL || pc->ress == NULL)
		goto fail;

	/* Receives: each connection posts about its credits; the rest sends and slack. */
	bufs = max_conns * (pc->credits + 48) + 1024;
	nattach = 2 * ndata * (max_size / ATTACH_PIECE + 1) + 256;
	arena_len = (size_t)bufs * MSG_BUF_BYTES + 128 * (size_t)BULK_BUF_BYTES +
		    (size_t)nattach * 512 + 2 * (size_t)ndata * (round_up(max_size, 4096) + 8192) +
		    PERF_PATTERN_LEN + (32u << 20);
	pc->arena = rpcr_mem_arena_create("perf-client", arena_len, 0);
	if (pc->arena == NULL) {
		fprintf(stderr, "rpcr-perf: client arena of %zu MiB: %s\n", arena_len >> 20,
			rte_strerror(rte_errno));
		goto fail;
	}
	pc->dev = rpcr_rdev_open(c->devargs);
	if (pc->dev == NULL) {
		fprintf(stderr, "rpcr-perf: open device %s: %s\n", c->devargs,
			rte_strerror(rte_errno));
		goto fail;
	}
	memset(&xc, 0, sizeof(xc));
	xc.name = "perf-client";
	xc.dev = pc->dev;
	xc.arena = pc->arena;
	xc.bufs = bufs;
	xc.bulk_bufs = 128;
	xc.reg_per_call = c->reg_per_call;
	xc.poll_mode = (enum rpcr_xprt_poll_mode)c->poll_mode;
	xc.idle_us = c->idle_us;
	pc->p = rpcr_xprt_poller_create(&xc);
	if (pc->p == NULL) {
		fprintf(stderr, "rpcr-perf: client poller: %s\n", rte_strerror(rte_errno));
		goto fail;
	}
	pc->mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(pc->p), NULL);
	memset(&ac, 0, sizeof(ac));
	ac.name = "perf-attach";
	ac.arena = pc->arena;
	ac.pd = rpcr_xprt_poller_pd(pc->p);
	ac.n = nattach;
	ac.cache_size = 32;
	ac.data_size = 64;
	pc->attach = pc->mc != NULL ? rpcr_chunk_pool_create(&ac) : NULL;
	pc->pattern = rpcr_mem_arena_alloc(pc->arena, PERF_PATTERN_LEN, 64);
	if (pc->attach == NULL || pc->pattern == NULL) {
		fprintf(stderr, "rpcr-perf: client buffers: %s\n", rte_strerror(rte_errno));
		goto fail;
	}
	for (i = 0; i < PERF_PATTERN_LEN; i++)
		pc->pattern[i] = perf_pattern_byte(i);
	for (i = 0; i < ndata; i++) {
		size_t k;

		if (dbuf_make(pc, &pc->args[i], max_size) != 0 ||
		    dbuf_make(pc, &pc->ress[i], max_size) != 0) {
			fprintf(stderr, "rpcr-perf: data buffers of %u bytes: %s\n", max_size,
				rte_strerror(rte_errno));
			goto fail;
		}
		/* Arguments: bytes unlike the READ pattern (xorshift), so that a READ answer
		 * to an ECHO cannot pass. Results: touched now, not in the first call. */
		for (k = 0; k < pc->args[i].cap; k++) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			pc->args[i].mem[k] = (uint8_t)(state >> 24);
		}
		memset(pc->ress[i].mem, 0xee, pc->ress[i].cap);
	}
	for (i = 0; i < 4; i++) {
		pc->ulb[i] = rpcr_testprog_ulb[i];
		pc->ulb[i].threshold = c->threshold;
	}
	return pc;

fail:
	perf_rpcr_client_close(pc);
	return NULL;
}

/* The connection @i, made on first use. */
static int
client_get(struct perf_rpcr_client *pc, uint32_t i, struct perf_result *r)
{
	struct rpcr_clnt_conf cc;
	double deadline;

	if (pc->cl[i] != NULL)
		return 0;
	memset(&cc, 0, sizeof(cc));
	cc.addr = pc->conf->addr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = pc->credits;
	cc.inline_send = pc->conf->inline_size;
	cc.inline_recv = pc->conf->inline_size;
	cc.timeout_us = CALL_TIMEOUT_US;
	cc.remote_inv = true;
	cc.ulb = pc->ulb;
	cc.nulb = RTE_DIM(pc->ulb);
	cc.bc_credits = PERF_CB_CREDITS; /* the callback program, for CALLBACK (RFC 8167) */
	if (pc->conf->rdma_vers == 2)
		cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cc.cont_max = pc->conf->cont_max;
	pc->cl[i] = rpcr_clnt_create(pc->p, &cc);
	if (pc->cl[i] != NULL && rpcr_testprog_cb_register(pc->cl[i]) != 0) {
		rpcr_clnt_destroy(pc->cl[i]);
		pc->cl[i] = NULL;
	}
	if (pc->cl[i] == NULL) {
		perf_result_error(r, false, "rpcr_clnt_create(%s): %s", pc->conf->addr,
				  rte_strerror(rte_errno));
		return -1;
	}
	deadline = perf_now() + CONNECT_TIMEOUT;
	while (!rpcr_clnt_connected(pc->cl[i]) && perf_now() < deadline && perf_running)
		rpcr_xprt_poll(pc->p);
	if (!rpcr_clnt_connected(pc->cl[i])) {
		perf_result_error(r, false, "connection %u to %s (%s): not connected after %.0f s",
				  i, pc->conf->addr, pc->conf->devargs, CONNECT_TIMEOUT);
		rpcr_clnt_destroy(pc->cl[i]);
		pc->cl[i] = NULL;
		return -1;
	}
	if (pc->conf->rdma_vers != 1) {
		/* Version 2 is asked with the first call: one NULL, and the figures are that
		 * version's or none. */
		struct rpcr_clnt_info info;
		struct rpcr_call call;

		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_NULL;
		if (rpcr_clnt_call_sync(pc->cl[i], &call) != 0 ||
		    rpcr_clnt_info_get(pc->cl[i], &info) != 0 ||
		    info.rdma_vers != pc->conf->rdma_vers) {
			perf_result_error(
				r, false,
				"connection %u to %s: RPC-over-RDMA version %u asked, the "
				"server speaks %u (give it --rpcrdma-version %u too)",
				i, pc->conf->addr, pc->conf->rdma_vers, info.rdma_vers,
				pc->conf->rdma_vers);
			rpcr_clnt_destroy(pc->cl[i]);
			pc->cl[i] = NULL;
			return -1;
		}
	}
	return 0;
}

static void
clients_destroy(struct perf_rpcr_client *pc)
{
	uint32_t i;

	for (i = 0; i < pc->ncl; i++) {
		if (pc->cl[i] != NULL)
			rpcr_clnt_destroy(pc->cl[i]);
		pc->cl[i] = NULL;
	}
}

static bool
server_gone(struct perf_rpcr_client *pc)
{
	int status;

	if (pc->server_dead)
		return true;
	if (pc->server <= 0 || waitpid(pc->server, &status, WNOHANG) != pc->server)
		return false;
	pc->server_dead = true;
	return true;
}

/* Set up the slots' calls for the point's procedure. */
static int
slots_init(struct perf_rpcr_client *pc, struct run *run, struct slot *slots, uint32_t nslots)
{
	const struct perf_point *pt = run->pt;
	uint32_t i;

	for (i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];
		struct rpcr_call *c = &s->call;

		s->run = run;
		s->cl = pc->cl[i % pt->conns];
		s->len = pt->size;
		c->proc = pt->proc;
		c->done = slot_done;
		c->user = s;
		if (pt->proc == PERF_NULL)
			continue;
		if (pt->proc == PERF_CALLBACK) {
			/* One call back, no data: the reverse direction's NULL-like round trip. */
			s->cba = (struct rpcr_testprog_cb_args){.count = 1, .data = NULL, .len = 0};
			c->encode = rpcr_testprog_enc_callback;
			c->args = &s->cba;
			c->decode = dec_u32;
			c->res = s;
			continue;
		}
		s->arg = &pc->args[i];
		s->res = &pc->ress[i];
		if (pt->proc != PERF_READ) {
			s->argm = rpcr_chunk_attach(pc->attach, s->arg->reg, s->arg->mem, s->len,
						    noop_free, NULL);
			if (s->argm == NULL)
				return -rte_errno;
			s->argb = (struct rpcr_bulk){s->argm, 0, s->len};
			c->encode = rpcr_testprog_enc_data;
			c->args = &s->argb;
		} else {
			c->encode = rpcr_testprog_enc_len;
			c->args = &s->len;
		}
		if (pt->proc != PERF_WRITE) {
			s->resm = rpcr_chunk_attach(pc->attach, s->res->reg, s->res->mem, s->len,
						    noop_free, NULL);
			if (s->resm == NULL)
				return -rte_errno;
			s->resb = (struct rpcr_bulk){s->resm, 0, s->len};
			c->decode = dec_bulk;
			c->res = s;
			c->res_bulk = &s->resb;
			c->nres_bulk = 1;
			/* Results below the threshold come inline: the reply may then be longer
			 * than a Send (a reply chunk, or version 2's continuation). */
			if (s->len < pc->conf->threshold)
				c->reply_max = s->len + 64;
		} else {
			c->decode = dec_u32;
			c->res = s;
		}
	}
	return 0;
}

int
perf_rpcr_run(struct perf_rpcr_client *pc, struct perf_point *pt)
{
	struct perf_result *r = &pt->res[PERF_IMPL_RPCR];
	uint32_t nslots = pt->conns * pt->depth, i;
	uint64_t hz = pc->hz, now, warm_end, end = 0, give_up = 0, t_start = 0, t_end = 0, tick;
	struct perf_hist *hist = NULL;
	struct slot *slots = NULL;
	struct run run;
	bool aborted = false;
	double drain_until;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->run = true;
	memset(&run, 0, sizeof(run));
	run.pc = pc;
	run.pt = pt;
	run.r = r;
	if (server_gone(pc)) {
		perf_result_error(r, false, "the server process exited");
		return -1;
	}
	for (i = 0; i < pt->conns; i++)
		if (client_get(pc, i, r) != 0)
			return -1;
	slots = calloc(nslots, sizeof(*slots));
	if (pt->mode == PERF_MODE_LAT || pt->mode == PERF_MODE_CB) {
		hist = malloc(sizeof(*hist));
		if (hist != NULL)
			perf_hist_reset(hist);
	}
	if (slots == NULL ||
	    ((pt->mode == PERF_MODE_LAT || pt->mode == PERF_MODE_CB) && hist == NULL)) {
		perf_result_error(r, false, "out of memory");
		goto out;
	}
	run.hist = hist;
	if (pt->proc != PERF_NULL && nslots > pc->ndata) {
		perf_result_error(r, false, "%u data slots needed, %u made", nslots, pc->ndata);
		goto out;
	}
	rc = slots_init(pc, &run, slots, nslots);
	if (rc != 0) {
		perf_result_error(r, false, "buffers for %u bytes: %s", pt->size, strerror(-rc));
		rc = 0;
		goto out;
	}

	now = rte_rdtsc();
	warm_end = now + (uint64_t)(pc->conf->warmup * (double)hz);
	tick = now;
	for (i = 0; i < nslots; i++)
		slot_start(&slots[i]);
	for (;;) {
		rpcr_xprt_poll(pc->p);
		now = rte_rdtsc();
		if (!run.counting && t_start == 0 && now >= warm_end) {
			/* The window opens: completions from here on are counted. */
			t_start = now;
			end = now + (uint64_t)(pc->conf->seconds * (double)hz);
			give_up = end + (uint64_t)(POINT_OVERRUN_S * (double)hz);
			run.counting = true;
		} else if (run.counting && now >= end &&
			   (run.calls >= PERF_MIN_CALLS || now >= give_up)) {
			break;
		}
		if (now < tick)
			continue;
		tick = now + hz / 20;
		if (run.counting)
			perf_progress(pc->conf, pt, PERF_IMPL_RPCR, run.calls, run.bytes,
				      (double)(now - t_start) / (double)hz,
				      r->errors + r->verify_errors);
		if (!perf_running) {
			/* Not a failure of the call: the run is incomplete, which main.c reports. */
			aborted = true;
			break;
		}
		if (server_gone(pc)) {
			perf_result_error(r, false, "the server process exited");
			aborted = true;
			rc = -1;
			break;
		}
		if (run.inflight == 0) /* every slot failed and stopped */
			break;
	}
	t_end = rte_rdtsc();
	run.counting = false;
	run.stopping = true;
	drain_until = perf_now() + (aborted ? 1.0 : CALL_TIMEOUT_US / 1e6 + DRAIN_EXTRA_S);
	while (run.inflight != 0 && perf_now() < drain_until)
		rpcr_xprt_poll(pc->p);
	if (run.inflight != 0) {
		/* The calls never came back: destroying the clients completes them
		 * (-ECONNABORTED) while the slots still exist. */
		perf_result_error(r, false, "%u calls did not complete", run.inflight);
		clients_destroy(pc);
		rc = -1;
	}
	if (t_start != 0) {
		double secs = (double)(t_end - t_start) / (double)hz;

		/* One call at a time: time spent checking results is not transfer time. With
		 * more in flight the engine works on while a result is checked. */
		if (nslots == 1)
			secs -= (double)run.verify_tsc / (double)hz;
		r->calls = run.calls;
		r->bytes = run.bytes;
		r->seconds = secs > 0 ? secs : 0;
	}
	if (hist != NULL && hist->n != 0) {
		r->has_lat = true;
		perf_hist_lat(hist, hz, &r->lat);
	}
out:
	if (slots != NULL) {
		for (i = 0; i < nslots; i++) {
			rte_pktmbuf_free(slots[i].argm);
			rte_pktmbuf_free(slots[i].resm);
		}
	}
	free(slots);
	free(hist);
	return rc;
}

void
perf_rpcr_client_stats(struct perf_rpcr_client *pc, struct perf_clnt_stats *st)
{
	struct rpcr_xprt_stats x;

	rpcr_xprt_stats_get(pc->p, &x);
	st->valid = true;
	st->calls_sent = x.calls_sent;
	st->replies_recv = x.replies_recv;
	st->credit_waits = x.credit_waits;
	st->retransmits = x.retransmits;
	st->reconnects = x.reconnects;
	st->timeouts = x.timeouts;
	st->wc_errors = x.wc_errors;
	st->rdma_errors_recv = x.rdma_errors_recv;
	st->unmatched = x.unmatched;
	st->bad_headers = x.bad_headers;
}

void
perf_rpcr_client_close(struct perf_rpcr_client *pc)
{
	uint32_t i;
	int k;

	if (pc == NULL)
		return;
	if (pc->cl != NULL)
		clients_destroy(pc);
	for (i = 0; i < pc->ndata; i++) {
		if (pc->args != NULL)
			dbuf_free(pc, &pc->args[i]);
		if (pc->ress != NULL)
			dbuf_free(pc, &pc->ress[i]);
	}
	rte_free(pc->pattern);
	if (pc->attach != NULL && rpcr_chunk_pool_free(pc->attach) != 0)
		fprintf(stderr, "rpcr-perf: attach pool still in use at exit\n");
	if (pc->mc != NULL && rpcr_mem_cache_free(pc->mc) != 0)
		fprintf(stderr, "rpcr-perf: registrations still held at exit\n");
	if (pc->p != NULL) {
		/* Buffers of the last replies may still be on their way back. */
		for (k = 0; k < 1000 && rpcr_xprt_poller_destroy(pc->p) == -EBUSY; k++)
			rpcr_xprt_poll(pc->p);
		if (k == 1000)
			fprintf(stderr, "rpcr-perf: client poller busy at exit\n");
	}
	if (pc->dev != NULL && rpcr_rdev_close(pc->dev) != 0)
		fprintf(stderr, "rpcr-perf: client device busy at exit\n");
	if (pc->arena != NULL && rpcr_mem_arena_free(pc->arena) != 0)
		fprintf(stderr, "rpcr-perf: client arena busy at exit\n");
	free(pc->cl);
	free(pc->args);
	free(pc->ress);
	free(pc);
}

/* ---- the server ---- */

int
perf_rpcr_server(const struct perf_conf *c, int ctl, uint32_t conns, uint32_t outstanding,
		 uint32_t max_size)
{
	struct rpcr_xprt_poller_conf xc;
	struct rpcr_xprt_poller *p = NULL;
	struct rpcr_mem_arena *arena = NULL;
	struct rpcr_rdev *dev = NULL;
	struct rpcr_svc_conf sc;
	struct rpcr_svc *s = NULL;
	struct rpcr_xprt_stats st;
	uint32_t credits = RTE_MAX(c->credits, 1u), bufs, bulk;
	uint64_t hz = rte_get_tsc_hz(), last_busy, n = 0;
	bool paused = false, stop = false;
	size_t arena_len;
	int rc = 1, k;

	/* Receives per connection (credits + a batch), READ's 32 KiB pieces and ECHO's and
	 * WRITE's read chunks (bulk buffers) of the calls in flight. */
	bufs = conns * (credits + 48) + outstanding * (max_size / ATTACH_PIECE + 1) + 1024;
	bulk = outstanding * (max_size / BULK_DATA + 1) + 256;
	arena_len = (size_t)bufs * MSG_BUF_BYTES + (size_t)bulk * BULK_BUF_BYTES + (32u << 20);
	arena = rpcr_mem_arena_create("perf-server", arena_len, 0);
	if (arena == NULL) {
		fprintf(stderr, "rpcr-perf server: arena of %zu MiB: %s\n", arena_len >> 20,
			rte_strerror(rte_errno));
		goto out;
	}
	dev = rpcr_rdev_open(c->devargs);
	if (dev == NULL) {
		fprintf(stderr, "rpcr-perf server: open device %s: %s\n", c->devargs,
			rte_strerror(rte_errno));
		goto out;
	}
	memset(&xc, 0, sizeof(xc));
	xc.name = "perf-server";
	xc.dev = dev;
	xc.arena = arena;
	xc.bufs = bufs;
	xc.bulk_bufs = bulk;
	xc.poll_mode = (enum rpcr_xprt_poll_mode)c->poll_mode;
	xc.idle_us = c->idle_us;
	p = rpcr_xprt_poller_create(&xc);
	if (p == NULL) {
		fprintf(stderr, "rpcr-perf server: poller: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	memset(&sc, 0, sizeof(sc));
	sc.addr = c->addr;
	sc.credits = credits;
	sc.inline_send = c->inline_size;
	sc.inline_recv = c->inline_size;
	sc.remote_inv = true;
	sc.max_conns = conns + 4;
	if (c->rdma_vers == 2)
		sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	s = rpcr_svc_create(p, &sc);
	if (s == NULL) {
		fprintf(stderr, "rpcr-perf server: listen on %s: %s\n", c->addr,
			rte_strerror(rte_errno));
		goto out;
	}
	k = rpcr_testprog_register(s, c->threshold);
	if (k != 0) {
		fprintf(stderr, "rpcr-perf server: test program: %s\n", strerror(-k));
		goto out;
	}
	if (perf_capture_start(c, true) != 0)
		goto out;
	if (ctl >= 0) {
		if (perf_ctl_send(ctl, PERF_CTL_READY, NULL, 0) != 0)
			goto out;
	} else {
		printf("rpcr-perf server: test program 0x%x version %u on %s (%s), DDP threshold "
		       "%u, inline %u, credits %u, RPC-over-RDMA version%s; Ctrl-C to stop\n",
		       PERF_PROG, PERF_VERS, c->addr, c->devargs, c->threshold, c->inline_size,
		       credits, c->rdma_vers == 2 ? "s 1 and 2" : " 1");
		fflush(stdout);
	}

	last_busy = rte_rdtsc();
	while (!stop) {
		int work = rpcr_xprt_poll(p);
		uint64_t now = rte_rdtsc();

		if (work != 0)
			last_busy = now;
		if ((++n & 1023) == 0 || paused) {
			struct perf_ctl_msg m;
			ssize_t got;

			if (!perf_running)
				break;
			got = ctl >= 0 ? recv(ctl, &m, sizeof(m), MSG_DONTWAIT) : -1;
			if (got == 0)
				break; /* the client is gone */
			if (got == (ssize_t)sizeof(m)) {
				switch (m.tag) {
				case PERF_CTL_PAUSE:
					paused = true;
					perf_ctl_send(ctl, PERF_CTL_ACK, NULL, 0);
					break;
				case PERF_CTL_RESUME:
					paused = false;
					last_busy = rte_rdtsc();
					perf_ctl_send(ctl, PERF_CTL_ACK, NULL, 0);
					break;
				case PERF_CTL_STOP:
					stop = true;
					break;
				default:
					break;
				}
			}
		}
		/* Paused (the baseline runs on this CPU), or a standalone server idle for 100 ms:
		 * poll a thousand times a second rather than spin. */
		if (paused || (ctl < 0 && work == 0 && now - last_busy > hz / 10))
			usleep(paused ? 1000 : 100);
	}
	perf_capture_stop(c, true);
	rpcr_xprt_stats_get(p, &st);
	if (ctl >= 0) {
		uint64_t v[8] = {st.calls_recv,  st.replies_sent,     st.bytes_sent,
				 st.bytes_recv,  st.rdma_errors_sent, st.wc_errors,
				 st.bad_headers, st.overruns};

		perf_ctl_send(ctl, PERF_CTL_STATS, v, 8);
	} else {
		printf("\nrpcr-perf server: %" PRIu64 " calls received, %" PRIu64
		       " replies sent, %" PRIu64 " RDMA_ERROR sent, %" PRIu64
		       " completion errors\n",
		       st.calls_recv, st.replies_sent, st.rdma_errors_sent, st.wc_errors);
		/* Version 2's continuation: Sends beyond one a message, either way. */
		printf("rpcr-perf server: continuation: %" PRIu64 " messages in %" PRIu64
		       " Sends received, %" PRIu64 " in %" PRIu64 " Sends sent\n",
		       st.cont_recv, st.cont_parts_recv, st.cont_sent, st.cont_parts_sent);
	}
	rc = 0;
out:
	if (s != NULL) {
		for (k = 0; k < 100000 && rpcr_svc_destroy(s) == -EBUSY; k++)
			rpcr_xprt_poll(p);
	}
	if (p != NULL) {
		for (k = 0; k < 100000 && rpcr_xprt_poller_destroy(p) == -EBUSY; k++)
			rpcr_xprt_poll(p);
		if (k == 100000) {
			/* Its buffers are still out: the device and the arena stay too. */
			fprintf(stderr, "rpcr-perf server: poller busy at exit\n");
			return 1;
		}
	}
	if (dev != NULL && rpcr_rdev_close(dev) != 0)
		fprintf(stderr, "rpcr-perf server: device busy at exit\n");
	if (arena != NULL && rpcr_mem_arena_free(arena) != 0)
		fprintf(stderr, "rpcr-perf server: arena busy at exit\n");
	return rc;
}

/* --pcap's file for this side: the one named; a loopback server's with "-server" before the
 * extension. */
static void
capture_path(const struct perf_conf *c, bool server, char *buf, size_t len)
{
	const char *dot = strrchr(c->pcap, '.'), *slash = strrchr(c->pcap, '/');

	if (!server || c->role != PERF_ROLE_LOOPBACK)
		snprintf(buf, len, "%s", c->pcap);
	else if (dot != NULL && (slash == NULL || dot > slash))
		snprintf(buf, len, "%.*s-server%s", (int)(dot - c->pcap), c->pcap, dot);
	else
		snprintf(buf, len, "%s-server", c->pcap);
}

int
perf_capture_start(const struct perf_conf *c, bool server)
{
	struct rpcr_xprt_capture_conf cc;
	char path[256];
	int rc;

	if (c->pcap == NULL)
		return 0;
	capture_path(c, server, path, sizeof(path));
	memset(&cc, 0, sizeof(cc));
	cc.path = path;
	/* Long enough for every message of the test program's inline calls and replies, to
	 * the point where the data starts (lat's 64 and 4096 bytes: the first 256 of them). */
	cc.snap = RPCR_XPRT_CAPTURE_SNAP;
	rc = rpcr_xprt_capture_start(&cc);
	if (rc != 0)
		fprintf(stderr, "rpcr-perf%s: capture into %s: %s\n", server ? " server" : "", path,
			strerror(-rc));
	return rc;
}

void
perf_capture_stop(const struct perf_conf *c, bool server)
{
	struct rpcr_xprt_capture_stats st;
	char path[256];
	int rc;

	if (c->pcap == NULL)
		return;
	capture_path(c, server, path, sizeof(path));
	rc = rpcr_xprt_capture_stop(&st);
	if (rc != 0)
		fprintf(stderr, "rpcr-perf%s: capture into %s: %s\n", server ? " server" : "", path,
			strerror(-rc));
	else
		fprintf(stderr,
			"rpcr-perf%s: capture %s: %" PRIu64 " packets of %u connection(s), %" PRIu64
			" dropped\n",
			server ? " server" : "", path, st.written, st.conns, st.drops);
}
