/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The commands: one table (syntax, handler, help). rte_cmdline instances and tokens are built
 * from it at start-up, so completion and '?' help come from rte_cmdline.
 *
 * Syntax words: a literal ("show"), a choice ("null|echo|write"), a number ("<n:num>", uint32)
 * or any one word ("<addr>").
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "testpmd.h"

#define TP_MAX_WORDS 8
#define TP_WORD      sizeof(cmdline_fixed_string_t)

/* A parsed command: word i is w[i] (strings) or num[i] (numbers). */
struct tp_args {
	uint32_t n;
	const char *w[TP_MAX_WORDS];
	uint32_t num[TP_MAX_WORDS];
};

struct tp_cmd {
	const char *syntax;
	int (*fn)(const struct tp_args *a);
	const char *help;
};

static struct cmdline *tp_cl;
static bool tp_quit;

/* ---- helpers ---- */

static const char *const mode_names[] = {"null", "echo", "write", "read", "mixed", "callback"};
static const char *const chunk_names[] = {"inline", "read", "write", "reply"};

static int
name_index(const char *const *names, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], w) == 0)
			return (int)i;
	return -1;
}

static struct tp_port *
cur_port(void)
{
	if (tp.nports == 0) {
		printf("no port: start one with 'port start <devargs>' (for example: port start "
		       "shm)\n");
		return NULL;
	}
	return tp.ports[tp.nports - 1];
}

/* Wait on the command line's side (the worker keeps polling). */
static void
tp_sleep_ms(uint32_t ms)
{
	usleep((useconds_t)RTE_MIN((uint64_t)ms * 1000u, (uint64_t)UINT32_MAX));
}

/* ---- worker jobs ---- */

struct svc_job {
	struct tp_port *port;
	const char *addr;
	int rc;
};

static int
svc_create_job(void *arg)
{
	struct svc_job *j = arg;
	struct rpcr_svc_conf sc;
	struct rpcr_svc *s;
	int rc;

	memset(&sc, 0, sizeof(sc));
	sc.addr = j->addr;
	sc.credits = tp.cfg.credits;
	sc.inline_send = tp.cfg.inline_size;
	sc.inline_recv = tp.cfg.inline_size;
	if (tp.cfg.rdma_vers == 2)
		sc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	s = rpcr_svc_create(j->port->p, &sc);
	if (s == NULL)
		return -rte_errno;
	/* Results of 1024 bytes or more go in the chunks the client offers. */
	rc = rpcr_testprog_register(s, 0);
	if (rc != 0) {
		rpcr_svc_destroy(s);
		return rc;
	}
	snprintf(j->port->svc_addr[j->port->nsvc], sizeof(j->port->svc_addr[0]), "%s", j->addr);
	j->port->svc[j->port->nsvc++] = s;
	return 0;
}

/* The client binding a stream needs for its chunk setting. */
static uint32_t
want_threshold(const struct tp_cfg *cfg)
{
	return cfg->chunk == TP_CHUNK_INLINE ? UINT32_MAX : 1;
}

static int
clnt_create_job(void *arg)
{
	struct tp_stream *st = arg;
	struct rpcr_clnt_conf cc;
	uint32_t i;

	for (i = 0; i < 4; i++) {
		st->ulb[i] = rpcr_testprog_ulb[i];
		st->ulb[i].threshold = want_threshold(&st->cfg);
	}
	memset(&cc, 0, sizeof(cc));
	cc.addr = st->addr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = st->cfg.credits;
	cc.inline_send = st->cfg.inline_size;
	cc.inline_recv = st->cfg.inline_size;
	cc.timeout_us = 5000000;
	if (st->cfg.rdma_vers == 2)
		cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cc.ulb = st->ulb;
	cc.nulb = 4;
	/* Every stream serves the callback program to its server (RFC 8167: mode callback). */
	cc.bc_credits = TP_CB_CREDITS;
	st->cl = rpcr_clnt_create(st->port->p, &cc);
	if (st->cl == NULL)
		return -rte_errno;
	return rpcr_testprog_cb_register(st->cl);
}

static int
clnt_destroy_job(void *arg)
{
	struct tp_stream *st = arg;

	if (st->inflight != 0)
		return -EBUSY;
	tp_stream_release(st);
	if (st->cl != NULL)
		rpcr_clnt_destroy(st->cl);
	st->cl = NULL;
	return 0;
}

static int
clnt_connected_job(void *arg)
{
	struct tp_stream *st = arg;

	return rpcr_clnt_connected(st->cl) ? 1 : 0;
}

static int
stream_start_job(void *arg)
{
	return tp_stream_start(arg);
}

static int
stream_stop_job(void *arg)
{
	struct tp_stream *st = arg;

	tp_stream_stop(st);
	return (int)st->inflight;
}

static int
stats_reset_job(void *arg)
{
	struct tp_port *port = arg;
	uint32_t i;

	rpcr_xprt_stats_reset(port->p);
	for (i = 0; i < tp.nstreams; i++)
		if (tp.streams[i]->port == port) {
			memset(&tp.streams[i]->stats, 0, sizeof(tp.streams[i]->stats));
			tp.streams[i]->started_tsc = rte_rdtsc();
		}
	return 0;
}

struct conn_job {
	struct tp_port *port;
	struct rpcr_xprt_conn_info info[64];
	int n;
};

static int
conn_list_job(void *arg)
{
	struct conn_job *j = arg;

	j->n = rpcr_xprt_conn_list(j->port->p, j->info, RTE_DIM(j->info));
	return j->n < 0 ? j->n : 0;
}

static int
port_teardown_job(void *arg)
{
	struct tp_port *port = arg;
	uint32_t i;

	for (i = 0; i < port->nsvc; i++)
		rpcr_svc_destroy(port->svc[i]);
	port->nsvc = 0;
	return 0;
}

/* Wait until the stream's client is connected (5 s at most). */
static int
wait_connected(struct tp_stream *st)
{
	uint32_t t;

	for (t = 0; t < 5000; t += 10) {
		int rc = tp_exec(st->port, clnt_connected_job, st);

		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		tp_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/* Stop a stream's traffic and wait for its calls to come back (10 s at most). */
static int
stream_quiesce(struct tp_stream *st)
{
	uint32_t t;

	for (t = 0; t < 10000; t += 5) {
		int rc = tp_exec(st->port, stream_stop_job, st);

		if (rc <= 0)
			return rc;
		tp_sleep_ms(5);
	}
	return -ETIMEDOUT;
}

/* ---- printing ---- */

static double
secs_between(uint64_t a, uint64_t b)
{
	return b > a ? (double)(b - a) / (double)rte_get_tsc_hz() : 0.0;
}

static void
print_stream(const struct tp_stream *st)
{
	const struct tp_stream_stats *s = &st->stats;
	uint64_t end = st->running || st->stopped_tsc == 0 ? rte_rdtsc() : st->stopped_tsc;
	double secs = st->started_tsc != 0 ? secs_between(st->started_tsc, end) : 0.0;
	uint64_t errs = 0;
	uint32_t e;

	for (e = 0; e < TP_ERR_NUM; e++)
		errs += s->errors[e];
	printf("  stream %u -> %s (port %u, %s, %u B, %u out, chunk %s)%s\n", st->id, st->addr,
	       st->port->id, mode_names[st->cfg.mode], st->cfg.size, st->cfg.outstanding,
	       chunk_names[st->cfg.chunk], st->running ? " running" : "");
	printf("    calls %" PRIu64 "  bytes %" PRIu64 "  errors %" PRIu64, s->calls, s->bytes,
	       errs);
	if (secs > 0)
		printf("  rate %.0f calls/s  %.1f MB/s", (double)s->calls / secs,
		       (double)s->bytes / secs / 1e6);
	if (s->calls != 0)
		printf("  latency avg %.2f us max %.2f us", (double)s->lat_sum_ns / 1e3 / s->calls,
		       (double)s->lat_max_ns / 1e3);
	printf("\n");
	if (errs != 0) {
		printf("    errors:");
		for (e = 0; e < TP_ERR_NUM; e++)
			if (s->errors[e] != 0)
				printf(" %s %" PRIu64, tp_err_names[e], s->errors[e]);
		printf(" (last: %s)\n", strerror(-st->last_status));
	}
}

static void
print_conns(struct tp_port *port, bool counters)
{
	struct conn_job *j = calloc(1, sizeof(*j));
	int i, rc;

	if (j == NULL)
		return;
	j->port = port;
	rc = tp_exec(port, conn_list_job, j);
	if (rc != 0) {
		printf("  port %u: connections: %s\n", port->id, strerror(-rc));
		free(j);
		return;
	}
	for (i = 0; i < j->n && i < (int)RTE_DIM(j->info); i++) {
		const struct rpcr_xprt_conn_info *c = &j->info[i];
		char peer[64];

		if (rpcr_xprt_addr_str((const struct sockaddr *)&c->peer, peer, sizeof(peer)) <= 0)
			peer[0] = '\0';
		printf("  port %u conn %" PRIu64
		       ": %s %s%s%s, inline %u/%u%s%s, credits %u, in use %u, "
		       "receives posted %u",
		       port->id, c->id, c->server ? "server" : "client", c->state,
		       peer[0] != '\0' ? ", peer " : "", peer, c->inline_send, c->inline_recv,
		       c->remote_inv ? ", remote invalidation" : "", c->draft ? ", 2005 draft" : "",
		       c->credits, c->in_use, c->recv_posted);
		if (c->rdma_vers != 1)
			printf(", RPC-over-RDMA version %u", c->rdma_vers);
		if (c->props.received)
			printf(" (peer's properties: send %u, receive %u, segment %u, segments %u, "
			       "reverse direction %u%s)",
			       c->props.sbsiz, c->props.rbsiz, c->props.rssiz, c->props.rcsiz,
			       c->props.brs, c->props.hostauth ? ", HOSTAUTH" : "");
		if (c->props.xchar)
			printf(" (peer's characteristics: RQREMINV %u, BRS %u; our receives %u)",
			       c->props.rqreminv, c->props.bkrqsup, c->props.own_rbsiz);
		else if (c->props.xchar_off)
			printf(" (peer takes no transport characteristics)");
		/* The reverse direction (RFC 8167), where the connection has it. */
		if (c->rev_credits != 0)
			printf(", reverse direction: credits %u (%s) in use %u", c->rev_credits,
			       c->server ? "granted to us" : "we grant", c->rev_in_use);
		printf("\n");
		if (counters)
			printf("    sends %" PRIu64 "  receives %" PRIu64 "  bytes out %" PRIu64
			       "  bytes in %" PRIu64 "  doorbells %" PRIu64 "  WRs %" PRIu64
			       "  RNR %" PRIu64 "  overruns %" PRIu64 "\n",
			       c->msgs_sent, c->msgs_recv, c->bytes_sent, c->bytes_recv,
			       c->qp.doorbells, c->qp.send_posted, c->qp.rnr_errors, c->overruns);
	}
	if (j->n == 0)
		printf("  port %u: no connections\n", port->id);
	free(j);
}

static void
print_poller(const struct tp_port *port)
{
	struct rpcr_xprt_stats s;

	rpcr_xprt_stats_get(port->p, &s);
	printf("  port %u (%s) on lcore %u: polls %" PRIu64 " (busy %" PRIu64 ")\n", port->id,
	       port->devargs, port->lcore, s.polls, s.busy_polls);
	printf("    client: calls %" PRIu64 " replies %" PRIu64 " retransmits %" PRIu64
	       " reconnects %" PRIu64 " timeouts %" PRIu64 " credit waits %" PRIu64 "\n",
	       s.calls_sent, s.replies_recv, s.retransmits, s.reconnects, s.timeouts,
	       s.credit_waits);
	if (s.invalidate_failures != 0)
		printf("    client: registrations not invalidated %" PRIu64
		       " (each closed its connection)\n",
		       s.invalidate_failures);
	printf("    server: calls %" PRIu64 " replies %" PRIu64 " overruns %" PRIu64
	       " dropped by handlers %" PRIu64 "\n",
	       s.calls_recv, s.replies_sent, s.overruns, s.calls_dropped);
	if ((s.bcalls_sent | s.bcalls_recv | s.bcalls_overrun | s.bcalls_too_long) != 0)
		printf("    reverse direction (RFC 8167): server calls %" PRIu64 " replies %" PRIu64
		       ", client calls %" PRIu64 " replies %" PRIu64 " overruns %" PRIu64
		       ", calls too long %" PRIu64 ", moved to a new connection %" PRIu64
		       ", calls with chunks (v2 GENL) sent %" PRIu64 " received %" PRIu64 "\n",
		       s.bcalls_sent, s.breplies_recv, s.bcalls_recv, s.breplies_sent,
		       s.bcalls_overrun, s.bcalls_too_long, s.brebinds, s.bcalls_chunks_sent,
		       s.bcalls_chunks_recv);
	printf("    refused: bad headers %" PRIu64 ", over max_call_bytes %" PRIu64
	       ", too many chunks or segments %" PRIu64 ", connections %" PRIu64 "\n",
	       s.bad_headers, s.limit_call_bytes, s.limit_chunks, s.conns_refused);
	printf("    bytes out %" PRIu64 " in %" PRIu64 "  doorbells %" PRIu64 "\n", s.bytes_sent,
	       s.bytes_recv, s.doorbells);
	printf("    registration: windows bound %" PRIu64 ", invalidated locally %" PRIu64
	       " remotely %" PRIu64 ", registrations per call %" PRIu64 " (fallbacks %" PRIu64
	       "), Send with Invalidate sent %" PRIu64 "\n",
	       s.mw_binds, s.local_invalidations, s.remote_invalidations, s.reg_mrs,
	       s.reg_fallbacks, s.send_invs);
	printf("    2005 draft: reply read chunks %" PRIu64 ", RDMA_DONE sent %" PRIu64
	       " received %" PRIu64 " missed %" PRIu64 ", RDMA_MSGP sent %" PRIu64
	       " received %" PRIu64 "\n",
	       s.reply_reads, s.dones_sent, s.dones_recv, s.done_timeouts, s.msgp_sent,
	       s.msgp_recv);
	printf("    errors: rdma_error sent %" PRIu64 " received %" PRIu64 ", bad headers %" PRIu64
	       ", unmatched replies %" PRIu64 ", reverse calls refused %" PRIu64
	       ", completion errors %" PRIu64 "\n",
	       s.rdma_errors_sent, s.rdma_errors_recv, s.bad_headers, s.unmatched, s.bcalls_refused,
	       s.wc_errors);
}

/* ---- commands ---- */

static int
cmd_quit(const struct tp_args *a)
{
	RTE_SET_USED(a);
	tp_quit = true;
	if (tp_cl != NULL)
		cmdline_quit(tp_cl);
	return 0;
}

static int cmd_help(const struct tp_args *a);

static int
cmd_show_devices(const struct tp_args *a)
{
	const char *names[16];
	int n, i;
	uint32_t k;

	RTE_SET_USED(a);
	n = rpcr_rdev_drivers(names, (int)RTE_DIM(names));
	printf("drivers:");
	for (i = 0; i < n && i < (int)RTE_DIM(names); i++)
		printf(" %s", names[i]);
	printf("\n");
	for (k = 0; k < tp.nports; k++) {
		struct tp_port *port = tp.ports[k];
		struct rpcr_rdev_info di;

		if (rpcr_rdev_info_get(port->dev, &di) != 0)
			continue;
		printf("port %u: %s (driver %s, device %s) lcore %u: max_qp %u max_mr %u max_sge "
		       "%u max_msg %u pdata %u\n",
		       port->id, port->devargs, di.driver, di.name, port->lcore, di.max_qp,
		       di.max_mr, di.max_sge, di.max_msg_size, di.max_pdata);
	}
	if (tp.nports == 0)
		printf("no port started ('port start <devargs>')\n");
	return 0;
}

static int
cmd_show_config(const struct tp_args *a)
{
	RTE_SET_USED(a);
	printf("mode %s, size %u, outstanding %u, chunk %s, credits %u, inline %u, version %u\n",
	       mode_names[tp.cfg.mode], tp.cfg.size, tp.cfg.outstanding, chunk_names[tp.cfg.chunk],
	       tp.cfg.credits, tp.cfg.inline_size, tp.cfg.rdma_vers);
	return 0;
}

static int
cmd_port_start(const struct tp_args *a)
{
	struct rpcr_xprt_poller_conf pc;
	struct tp_port *port;
	char name[32];
	int rc;

	if (tp.nports == TP_MAX_PORTS) {
		printf("at most %d ports\n", TP_MAX_PORTS);
		return -ENOSPC;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL)
		return -ENOMEM;
	port->id = tp.nports;
	snprintf(port->devargs, sizeof(port->devargs), "%s", a->w[2]);
	snprintf(port->name, sizeof(port->name), "port%u", port->id);
	port->dev = rpcr_rdev_open(port->devargs);
	if (port->dev == NULL) {
		rc = -rte_errno;
		printf("port start %s: %s\n", port->devargs, rte_strerror(rte_errno));
		free(port);
		return rc;
	}
	snprintf(name, sizeof(name), "tp_arena%u", port->id);
	port->arena = rpcr_mem_arena_create(name, TP_ARENA_BYTES, 0);
	if (port->arena == NULL) {
		rc = -rte_errno;
		printf("port start: memory: %s\n", rte_strerror(rte_errno));
		goto fail;
	}
	memset(&pc, 0, sizeof(pc));
	pc.name = port->name;
	pc.dev = port->dev;
	pc.arena = port->arena;
	pc.bufs = 4096;
	port->p = rpcr_xprt_poller_create(&pc);
	if (port->p == NULL) {
		rc = -rte_errno;
		printf("port start: poller: %s\n", rte_strerror(rte_errno));
		goto fail;
	}
	{
		struct rpcr_mem_cache_conf mcc;

		memset(&mcc, 0, sizeof(mcc));
		port->mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(port->p), &mcc);
	}
	if (port->mc == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	tp_place(port);
	rc = tp_port_attach(port);
	if (rc == -ETIMEDOUT)
		return rc; /* (the worker may still poll it: it stays) */
	if (rc != 0)
		goto fail;
	tp.ports[tp.nports++] = port;
	printf("port %u: %s on lcore %u\n", port->id, port->devargs, port->lcore);
	return 0;
fail:
	if (port->mc != NULL)
		rpcr_mem_cache_free(port->mc);
	if (port->p != NULL)
		rpcr_xprt_poller_destroy(port->p);
	if (port->arena != NULL)
		rpcr_mem_arena_free(port->arena);
	rpcr_rdev_close(port->dev);
	free(port);
	return rc;
}

static int
cmd_listen(const struct tp_args *a)
{
	struct tp_port *port = cur_port();
	struct svc_job j;
	int rc;

	if (port == NULL)
		return -ENODEV;
	if (port->nsvc == TP_MAX_SERVERS)
		return -ENOSPC;
	j.port = port;
	j.addr = a->w[1];
	rc = tp_exec(port, svc_create_job, &j);
	if (rc == -ETIMEDOUT) {
		/* The worker may still run the job, which points at this frame: stop here. */
		fprintf(stderr, "rpcr-testpmd: worker stuck; exiting\n");
		abort();
	}
	if (rc != 0) {
		printf("listen %s: %s\n", a->w[1], strerror(-rc));
		return rc;
	}
	printf("port %u: listening on %s (test program 0x%08x version %u)\n", port->id, a->w[1],
	       RPCR_TESTPROG, RPCR_TESTPROG_VERS);
	return 0;
}

static int
cmd_connect(const struct tp_args *a)
{
	struct tp_port *port = cur_port();
	struct tp_stream *st;
	int rc;

	if (port == NULL)
		return -ENODEV;
	if (tp.nstreams == TP_MAX_STREAMS)
		return -ENOSPC;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	st->id = tp.nstreams;
	st->port = port;
	st->cfg = tp.cfg;
	snprintf(st->addr, sizeof(st->addr), "%s", a->w[1]);
	rc = tp_exec(port, clnt_create_job, st);
	if (rc == 0)
		rc = wait_connected(st);
	if (rc != 0) {
		printf("connect %s: %s\n", st->addr,
		       rc == -ETIMEDOUT ? "not connected after 5 s" : strerror(-rc));
		if (rc == -ETIMEDOUT)
			return rc; /* (the worker may still hold st: it stays allocated) */
		if (st->cl != NULL)
			tp_exec(port, clnt_destroy_job, st);
		free(st);
		return rc;
	}
	tp.streams[tp.nstreams++] = st;
	printf("stream %u: connected to %s on port %u\n", st->id, st->addr, port->id);
	return 0;
}

static int
cmd_set_mode(const struct tp_args *a)
{
	tp.cfg.mode = (enum tp_mode)name_index(mode_names, RTE_DIM(mode_names), a->w[2]);
	return cmd_show_config(a);
}

static int
cmd_set_chunk(const struct tp_args *a)
{
	tp.cfg.chunk = (enum tp_chunk)name_index(chunk_names, RTE_DIM(chunk_names), a->w[2]);
	return cmd_show_config(a);
}

static int
cmd_set_size(const struct tp_args *a)
{
	if (a->num[2] > TP_MAX_SIZE) {
		printf("size: at most %u bytes\n", TP_MAX_SIZE);
		return -EINVAL;
	}
	tp.cfg.size = a->num[2];
	return cmd_show_config(a);
}

static int
cmd_set_outstanding(const struct tp_args *a)
{
	if (a->num[2] == 0 || a->num[2] > TP_MAX_OUTSTANDING) {
		printf("outstanding: 1 to %d\n", TP_MAX_OUTSTANDING);
		return -EINVAL;
	}
	tp.cfg.outstanding = a->num[2];
	return cmd_show_config(a);
}

static int
cmd_set_credits(const struct tp_args *a)
{
	if (a->num[2] == 0 || a->num[2] > 1024) {
		printf("credits: 1 to 1024\n");
		return -EINVAL;
	}
	tp.cfg.credits = a->num[2];
	printf("(applies to servers started and connections made from now on, and to streams at "
	       "their next start)\n");
	return cmd_show_config(a);
}

static int
cmd_set_inline(const struct tp_args *a)
{
	if (a->num[2] < 1024 || a->num[2] > 65536) {
		printf("inline: 1024 to 65536 bytes\n");
		return -EINVAL;
	}
	tp.cfg.inline_size = a->num[2];
	printf("(applies to servers started and connections made from now on, and to streams at "
	       "their next start)\n");
	return cmd_show_config(a);
}

static int
cmd_set_version(const struct tp_args *a)
{
	tp.cfg.rdma_vers = a->w[2][0] == '2' ? 2 : 1;
	if (tp.cfg.rdma_vers == 2 && tp.cfg.inline_size < 4096)
		printf("(version 2 needs inline 4096 or more: 'set inline 4096')\n");
	printf("(applies to servers started and connections made from now on)\n");
	return cmd_show_config(a);
}

/* Check that a stream can run @cfg. */
static int
cfg_check(const struct tp_cfg *cfg)
{
	uint64_t pieces = 2ull * cfg->outstanding * ((cfg->size + 32767) / 32768 + 1);

	if (cfg->mode != TP_MODE_NULL && cfg->chunk == TP_CHUNK_INLINE &&
	    (uint64_t)cfg->size + 200 > cfg->inline_size) {
		printf("size %u does not fit inline (inline %u, with headers): use 'set chunk "
		       "read|write|reply' or a smaller size\n",
		       cfg->size, cfg->inline_size);
		return -EMSGSIZE;
	}
	if (cfg->mode == TP_MODE_CALLBACK &&
	    (cfg->size > RPCR_TESTPROG_CB_MAX || cfg->chunk != TP_CHUNK_INLINE)) {
		printf("callback: the server's calls carry no chunks (RFC 8167): 'set chunk "
		       "inline' "
		       "and a size of at most %u bytes\n",
		       RPCR_TESTPROG_CB_MAX);
		return -EMSGSIZE;
	}
	if (cfg->mode != TP_MODE_NULL && cfg->mode != TP_MODE_WRITE &&
	    cfg->chunk == TP_CHUNK_REPLY && cfg->size + 64 > TP_REPLY_CHUNK_MAX) {
		printf("reply chunks hold at most %u bytes here: use 'set chunk write' for results "
		       "of %u bytes\n",
		       TP_REPLY_CHUNK_MAX, cfg->size);
		return -EMSGSIZE;
	}
	if (cfg->mode != TP_MODE_NULL &&
	    2ull * cfg->outstanding * ((uint64_t)cfg->size + 4096) > TP_ARENA_BYTES / 2) {
		printf("size x outstanding needs more than the %llu MiB a port keeps for data: "
		       "lower one of them\n",
		       (unsigned long long)(TP_ARENA_BYTES >> 21));
		return -ENOMEM;
	}
	if (cfg->mode != TP_MODE_NULL && pieces > 6000) {
		printf("size x outstanding needs %" PRIu64
		       " buffer descriptors: lower one of them\n",
		       pieces);
		return -ENOMEM;
	}
	return 0;
}

static int
cmd_start(const struct tp_args *a)
{
	uint32_t i;
	int rc;

	RTE_SET_USED(a);
	if (tp.nstreams == 0) {
		printf("no connection: 'connect <addr>' first\n");
		return -ENOTCONN;
	}
	rc = cfg_check(&tp.cfg);
	if (rc != 0)
		return rc;
	for (i = 0; i < tp.nstreams; i++) {
		struct tp_stream *st = tp.streams[i];
		bool remake = st->cl == NULL || st->cfg.credits != tp.cfg.credits ||
			      st->cfg.inline_size != tp.cfg.inline_size ||
			      want_threshold(&st->cfg) != want_threshold(&tp.cfg);

		if (st->running) {
			printf("stream %u already running ('stop' first)\n", st->id);
			continue;
		}
		if (!remake && tp_exec(st->port, clnt_connected_job, st) != 1)
			remake = true; /* not connected now: anew too */
		st->cfg = tp.cfg;
		if (remake) {
			/* The binding and the connection parameters are the client's: anew. */
			rc = tp_exec(st->port, clnt_destroy_job, st);
			if (rc == 0)
				rc = tp_exec(st->port, clnt_create_job, st);
			if (rc == 0)
				rc = wait_connected(st);
			if (rc != 0) {
				/* (st->cl NULL or not connected: the next start tries again.) */
				printf("stream %u: reconnect: %s\n", st->id, strerror(-rc));
				return rc;
			}
		}
		memset(&st->stats, 0, sizeof(st->stats));
		st->consec_errors = 0;
		rc = tp_exec(st->port, stream_start_job, st);
		if (rc != 0) {
			printf("stream %u: start: %s\n", st->id, strerror(-rc));
			return rc;
		}
	}
	printf("traffic: %s, %u bytes, %u outstanding per connection, chunk %s, %u connection(s)\n",
	       mode_names[tp.cfg.mode], tp.cfg.size, tp.cfg.outstanding, chunk_names[tp.cfg.chunk],
	       tp.nstreams);
	tp.traffic = true;
	return 0;
}

static int
cmd_stop(const struct tp_args *a)
{
	uint32_t i;
	int rc, ret = 0;

	RTE_SET_USED(a);
	for (i = 0; i < tp.nstreams; i++) {
		rc = stream_quiesce(tp.streams[i]);
		if (rc != 0) {
			printf("stream %u: calls still out after 10 s\n", tp.streams[i]->id);
			ret = rc;
		}
	}
	tp.traffic = false;
	printf("traffic stopped\n");
	for (i = 0; i < tp.nstreams; i++)
		print_stream(tp.streams[i]);
	return ret;
}

static int
cmd_show_stats(const struct tp_args *a)
{
	uint32_t i;

	RTE_SET_USED(a);
	printf("per lcore:\n");
	for (i = 0; i < tp.nports; i++)
		print_poller(tp.ports[i]);
	printf("per connection:\n");
	for (i = 0; i < tp.nports; i++)
		print_conns(tp.ports[i], true);
	printf("traffic:\n");
	for (i = 0; i < tp.nstreams; i++)
		print_stream(tp.streams[i]);
	if (tp.nstreams == 0)
		printf("  no stream\n");
	fflush(stdout);
	return 0;
}

static int
cmd_show_conn(const struct tp_args *a)
{
	uint32_t i;

	RTE_SET_USED(a);
	for (i = 0; i < tp.nports; i++) {
		uint32_t k;

		for (k = 0; k < tp.ports[i]->nsvc; k++)
			printf("  port %u: server on %s\n", i, tp.ports[i]->svc_addr[k]);
		print_conns(tp.ports[i], false);
	}
	for (i = 0; i < tp.nstreams; i++)
		printf("  stream %u: client of %s (port %u)\n", tp.streams[i]->id,
		       tp.streams[i]->addr, tp.streams[i]->port->id);
	if (tp.nports == 0)
		printf("no port\n");
	return 0;
}

static int
cmd_clear_stats(const struct tp_args *a)
{
	uint32_t i;

	RTE_SET_USED(a);
	for (i = 0; i < tp.nports; i++)
		tp_exec(tp.ports[i], stats_reset_job, tp.ports[i]);
	printf("counters cleared (per-connection counters count from the connection's start)\n");
	return 0;
}

static void
print_capture(const struct rpcr_xprt_capture_stats *st)
{
	printf("capture %s: %s, %u poller(s), %u connection(s): %" PRIu64
	       " packets recorded, %" PRIu64 " written, %" PRIu64 " dropped%s%s\n",
	       st->running ? "running" : "stopped", st->path, st->pollers, st->conns, st->recorded,
	       st->written, st->drops, st->error != 0 ? "; write error: " : "",
	       st->error != 0 ? strerror(st->error) : "");
}

/* capture start FILE [snap N]: every port's poller, into FILE (pcapng). */
static int
cmd_capture_start(const struct tp_args *a)
{
	struct rpcr_xprt_capture_conf cc;
	int rc;

	memset(&cc, 0, sizeof(cc));
	cc.path = a->w[2];
	if (a->n == 5)
		cc.snap = a->num[4];
	rc = rpcr_xprt_capture_start(&cc);
	if (rc == 0)
		printf("capturing into %s (snap length %u)\n", cc.path,
		       cc.snap != 0 ? cc.snap : RPCR_XPRT_CAPTURE_SNAP);
	return rc;
}

static int
cmd_capture_stop(const struct tp_args *a)
{
	struct rpcr_xprt_capture_stats st;
	int rc;

	RTE_SET_USED(a);
	rc = rpcr_xprt_capture_stop(&st);
	if (rc == 0 || rc != -ENOENT)
		print_capture(&st);
	return rc;
}

static int
cmd_show_capture(const struct tp_args *a)
{
	struct rpcr_xprt_capture_stats st;

	RTE_SET_USED(a);
	if (rpcr_xprt_capture_status(&st) != 0)
		printf("no capture running\n");
	else
		print_capture(&st);
	return 0;
}

static int
cmd_sleep(const struct tp_args *a)
{
	tp_sleep_ms(a->num[1]);
	return 0;
}

static const struct tp_cmd cmds[] = {
	{"help", cmd_help, "list the commands"},
	{"show devices", cmd_show_devices, "drivers, and the devices of started ports"},
	{"show config", cmd_show_config, "traffic settings"},
	{"show stats", cmd_show_stats, "counters per lcore, per connection and per stream"},
	{"show conn", cmd_show_conn, "servers and connections"},
	{"port start <devargs>", cmd_port_start,
	 "open a device (e.g. shm) and poll it on a worker"},
	{"listen <addr>", cmd_listen, "serve the test program on the last port started"},
	{"connect <addr>", cmd_connect, "connect a stream (client) from the last port started"},
	{"set mode null|echo|write|read|mixed|callback", cmd_set_mode,
	 "procedure(s) the traffic calls (callback: CALLBACK, the server calling back)"},
	{"set size <bytes:num>", cmd_set_size, "data bytes per ECHO, WRITE, READ (0 to 16 MiB)"},
	{"set outstanding <n:num>", cmd_set_outstanding, "calls in flight per connection"},
	{"set chunk inline|read|write|reply", cmd_set_chunk,
	 "how data moves: inline, read chunks (arguments), write chunks or a reply chunk "
	 "(results)"},
	{"set credits <n:num>", cmd_set_credits, "credits clients ask for and servers grant"},
	{"set inline <bytes:num>", cmd_set_inline, "inline threshold both ways"},
	{"set version 1|2", cmd_set_version,
	 "RPC-over-RDMA version clients ask (2: falling back to 1 where refused) and servers "
	 "serve beside 1"},
	{"start", cmd_start, "start traffic on every stream"},
	{"stop", cmd_stop, "stop traffic (waits for the calls out) and show what it did"},
	{"clear stats", cmd_clear_stats, "reset the counters"},
	{"capture start <file>", cmd_capture_start,
	 "capture every port's messages into a pcapng file (RoCEv2 frames, snap length 256)"},
	{"capture start <file> snap <n:num>", cmd_capture_start,
	 "the same, keeping n bytes of each message (1 to 8192)"},
	{"capture stop", cmd_capture_stop, "stop the capture and show its counters"},
	{"show capture", cmd_show_capture, "the capture running, its counters"},
	{"sleep <ms:num>", cmd_sleep, "wait (scripts)"},
	{"quit", cmd_quit, "leave"},
};

static int
cmd_help(const struct tp_args *a)
{
	size_t i;

	RTE_SET_USED(a);
	printf("commands (TAB completes, '?' lists choices):\n");
	for (i = 0; i < RTE_DIM(cmds); i++)
		printf("  %-38s %s\n", cmds[i].syntax, cmds[i].help);
	return 0;
}

/* ---- rte_cmdline glue, built from the table ---- */

/* Which words of each command are numbers (its tokens tell at parse time). */
static bool is_num[RTE_DIM(cmds)][TP_MAX_WORDS];
static uint32_t nwords[RTE_DIM(cmds)];
static cmdline_parse_ctx_t ctx[RTE_DIM(cmds) + 1];

static void
dispatch(void *parsed, struct cmdline *cl, void *data)
{
	const struct tp_cmd *cmd = data;
	size_t k = (size_t)(cmd - cmds);
	struct tp_args args;
	uint32_t i;
	int rc;

	RTE_SET_USED(cl);
	memset(&args, 0, sizeof(args));
	args.n = nwords[k];
	for (i = 0; i < args.n; i++) {
		const char *w = (const char *)parsed + i * TP_WORD;

		if (is_num[k][i])
			memcpy(&args.num[i], w, sizeof(uint32_t));
		else
			args.w[i] = w;
	}
	rc = cmd->fn(&args);
	if (rc != 0) {
		tp.errors++;
		printf("error: %s: %s\n", cmd->syntax, strerror(-rc));
	}
	fflush(stdout);
}

int
tp_cmds_init(void)
{
	size_t i;

	RTE_BUILD_BUG_ON(TP_MAX_WORDS * sizeof(cmdline_fixed_string_t) >
			 CMDLINE_PARSE_RESULT_BUFSIZE);
	for (i = 0; i < RTE_DIM(cmds); i++) {
		char *syn = strdup(cmds[i].syntax), *save = NULL, *w;
		cmdline_parse_token_hdr_t *toks[TP_MAX_WORDS];
		cmdline_parse_inst_t *inst;
		uint32_t n = 0, k;

		if (syn == NULL)
			return -ENOMEM;
		for (w = strtok_r(syn, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
			if (n == TP_MAX_WORDS)
				return -E2BIG;
			if (w[0] == '<' && strstr(w, ":num>") != NULL) {
				cmdline_parse_token_num_t *t = calloc(1, sizeof(*t));

				if (t == NULL)
					return -ENOMEM;
				t->hdr.ops = &cmdline_token_num_ops;
				t->hdr.offset = n * TP_WORD;
				t->num_data.type = RTE_UINT32;
				toks[n] = &t->hdr;
				is_num[i][n] = true;
			} else {
				cmdline_parse_token_string_t *t = calloc(1, sizeof(*t));
				char *c;

				if (t == NULL)
					return -ENOMEM;
				t->hdr.ops = &cmdline_token_string_ops;
				t->hdr.offset = n * TP_WORD;
				if (w[0] == '<') {
					t->string_data.str = NULL; /* any one word */
				} else {
					for (c = w; *c != '\0'; c++)
						if (*c == '|')
							*c = '#';
					t->string_data.str = strdup(w);
				}
				toks[n] = &t->hdr;
			}
			n++;
		}
		inst = calloc(1, sizeof(*inst) + (n + 1) * sizeof(inst->tokens[0]));
		if (inst == NULL)
			return -ENOMEM;
		inst->f = dispatch;
		inst->data = (void *)(uintptr_t)&cmds[i];
		inst->help_str = cmds[i].help;
		for (k = 0; k < n; k++)
			inst->tokens[k] = toks[k];
		inst->tokens[n] = NULL;
		nwords[i] = n;
		ctx[i] = inst;
		free(syn);
	}
	ctx[RTE_DIM(cmds)] = NULL;
	return 0;
}

int
tp_run_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	uint32_t lineno = 0;
	struct cmdline *cl;
	int rc = 0, n;

	if (f == NULL) {
		fprintf(stderr, "rpcr-testpmd: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	cl = cmdline_new(ctx, "", -1, STDOUT_FILENO);
	if (cl == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	/* (One byte short of the buffer: rte_cmdline wants the newline, written back below.) */
	while (!tp_quit && fgets(line, sizeof(line) - 1, f) != NULL) {
		char *p = line;
		size_t len;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			printf("%s:%u: line longer than %zu bytes: ignored\n", path, lineno,
			       sizeof(line) - 2);
			tp.errors++;
			continue;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		len = strlen(p);
		while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
			p[--len] = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		printf("rpcr-testpmd> %s\n", p);
		fflush(stdout);
		/* rte_cmdline wants the line with its newline. */
		p[len] = '\n';
		p[len + 1] = '\0';
		n = cmdline_parse(cl, p);
		switch (n >= 0 ? CMDLINE_PARSE_SUCCESS : n) {
		case CMDLINE_PARSE_SUCCESS: /* (it returns the length parsed) */
			break;
		case CMDLINE_PARSE_AMBIGUOUS:
			printf("%s:%u: ambiguous command\n", path, lineno);
			tp.errors++;
			break;
		case CMDLINE_PARSE_NOMATCH:
			printf("%s:%u: unknown command ('help' lists them)\n", path, lineno);
			tp.errors++;
			break;
		default:
			printf("%s:%u: bad arguments ('help' shows the syntax)\n", path, lineno);
			tp.errors++;
			break;
		}
		fflush(stdout);
	}
	fclose(f);
	cmdline_free(cl);
	if (tp.errors != 0)
		rc = -EINVAL;
	return rc;
}

void
tp_interact(void)
{
	if (tp_quit)
		return;
	tp_cl = cmdline_stdin_new(ctx, "rpcr-testpmd> ");
	if (tp_cl == NULL) {
		fprintf(stderr, "rpcr-testpmd: cannot open the command line\n");
		tp.errors++;
		return;
	}
	cmdline_interact(tp_cl);
	cmdline_stdin_exit(tp_cl);
	tp_cl = NULL;
}

/* Stop everything and give it all back (at exit). */
void
tp_shutdown(void)
{
	uint32_t i;

	for (i = 0; i < tp.nstreams; i++) {
		struct tp_stream *st = tp.streams[i];

		if (stream_quiesce(st) != 0 || tp_exec(st->port, clnt_destroy_job, st) != 0) {
			/* Calls may still complete into st: it stays allocated. */
			fprintf(stderr, "stream %u: not released cleanly\n", st->id);
			continue;
		}
		free(st);
	}
	tp.nstreams = 0;
	for (i = 0; i < tp.nports; i++) {
		struct tp_port *port = tp.ports[i];

		tp_exec(port, port_teardown_job, port);
		/* Connections close over a few polls (the peer hears of it too). */
		{
			struct conn_job *j = calloc(1, sizeof(*j));
			uint32_t t;

			for (t = 0; j != NULL && t < 5000; t += 10) {
				j->port = port;
				if (tp_exec(port, conn_list_job, j) != 0 || j->n == 0)
					break;
				tp_sleep_ms(10);
			}
			free(j);
		}
		if (tp_port_detach(port) != 0) {
			fprintf(stderr, "port %u: not detached\n", port->id);
			continue;
		}
		/* Detached: nothing polls it any more; this thread may finish it. */
		rpcr_mem_cache_free(port->mc);
		if (rpcr_xprt_poller_destroy(port->p) != 0)
			fprintf(stderr, "port %u: poller busy\n", port->id);
		else if (rpcr_mem_arena_free(port->arena) != 0)
			fprintf(stderr, "port %u: memory still in use\n", port->id);
		rpcr_rdev_close(port->dev);
		free(port);
	}
	tp.nports = 0;
}
