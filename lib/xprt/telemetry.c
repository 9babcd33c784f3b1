/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Telemetry (rte_telemetry): /rpcr/xprt/pollers, /rpcr/xprt/stats and /rpcr/xprt/conns, read on
 * the telemetry thread. Counters are read as they are (slightly stale at worst); connections
 * come from the copy each poller's own thread makes every XPRT_SNAP_US (poller.c,
 * conn_snapshot()), under its snap_lock.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_telemetry.h>

#include "xprt_internal.h"

static struct rpcr_xprt_poller *
poller_by_name(const char *name)
{
	uint32_t i;

	for (i = 0; i < RTE_DIM(xprt_pollers); i++)
		if (xprt_pollers[i] != NULL &&
		    (name == NULL || name[0] == '\0' || strcmp(xprt_pollers[i]->name, name) == 0))
			return xprt_pollers[i];
	return NULL;
}

static int
tel_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t i;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&xprt_pollers_lock);
	for (i = 0; i < RTE_DIM(xprt_pollers); i++)
		if (xprt_pollers[i] != NULL)
			rte_tel_data_add_array_string(d, xprt_pollers[i]->name);
	pthread_mutex_unlock(&xprt_pollers_lock);
	return 0;
}

/* One connection as a telemetry dict. */
static void
tel_conn(struct rte_tel_data *d, const struct rpcr_xprt_conn_info *c)
{
	char peer[64];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", c->id);
	rte_tel_data_add_dict_string(d, "role", c->server ? "server" : "client");
	rte_tel_data_add_dict_string(d, "state", c->state);
	rte_tel_data_add_dict_u64(d, "inline_send", c->inline_send);
	rte_tel_data_add_dict_u64(d, "inline_recv", c->inline_recv);
	rte_tel_data_add_dict_u64(d, "remote_inv", c->remote_inv);
	rte_tel_data_add_dict_u64(d, "draft", c->draft);
	rte_tel_data_add_dict_u64(d, "credits", c->credits);
	rte_tel_data_add_dict_u64(d, "in_use", c->in_use);
	rte_tel_data_add_dict_u64(d, "rev_credits", c->rev_credits);
	rte_tel_data_add_dict_u64(d, "rev_in_use", c->rev_in_use);
	rte_tel_data_add_dict_u64(d, "recv_posted", c->recv_posted);
	rte_tel_data_add_dict_u64(d, "msgs_sent", c->msgs_sent);
	rte_tel_data_add_dict_u64(d, "msgs_recv", c->msgs_recv);
	rte_tel_data_add_dict_u64(d, "bytes_sent", c->bytes_sent);
	rte_tel_data_add_dict_u64(d, "bytes_recv", c->bytes_recv);
	rte_tel_data_add_dict_u64(d, "overruns", c->overruns);
	rte_tel_data_add_dict_u64(d, "doorbells", c->qp.doorbells);
	rte_tel_data_add_dict_u64(d, "send_wrs", c->qp.send_posted);
	rte_tel_data_add_dict_u64(d, "recv_wrs", c->qp.recv_posted);
	rte_tel_data_add_dict_u64(d, "rnr_errors", c->qp.rnr_errors);
	if (rpcr_xprt_addr_str((const struct sockaddr *)&c->peer, peer, sizeof(peer)) > 0)
		rte_tel_data_add_dict_string(d, "peer", peer);
	rte_tel_data_add_dict_u64(d, "rdma_vers", c->rdma_vers);
	if (c->props.received) {
		/* Version 2: the peer's transport properties as applied. */
		rte_tel_data_add_dict_u64(d, "peer_sbsiz", c->props.sbsiz);
		rte_tel_data_add_dict_u64(d, "peer_rbsiz", c->props.rbsiz);
		rte_tel_data_add_dict_u64(d, "peer_rssiz", c->props.rssiz);
		rte_tel_data_add_dict_u64(d, "peer_rcsiz", c->props.rcsiz);
		rte_tel_data_add_dict_u64(d, "peer_brs", c->props.brs);
		rte_tel_data_add_dict_u64(d, "peer_hostauth", c->props.hostauth);
		/* Transport characteristics, where the peer sent or refused them. */
		if (c->props.xchar || c->props.xchar_off) {
			rte_tel_data_add_dict_u64(d, "xchar_off", c->props.xchar_off);
			rte_tel_data_add_dict_u64(d, "peer_rqreminv", c->props.rqreminv);
			rte_tel_data_add_dict_u64(d, "peer_bkrqsup", c->props.bkrqsup);
			rte_tel_data_add_dict_u64(d, "own_rbsiz", c->props.own_rbsiz);
		}
	}
}

/* /rpcr/xprt/conns,<poller>: its connections as of the last snapshot (at most 100 ms old). */
static int
tel_conns(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rpcr_xprt_poller *p;
	uint32_t i;
	int rc = 0;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&xprt_pollers_lock);
	p = poller_by_name(params);
	if (p == NULL) {
		pthread_mutex_unlock(&xprt_pollers_lock);
		return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&p->snap_lock);
	for (i = 0; i < p->nsnap; i++) {
		struct rte_tel_data *c;
		char key[32];

		if (i == XPRT_TEL_CONNS) {
			/* A telemetry reply holds 16 KiB: the first ones, and how many more. */
			rte_tel_data_add_dict_u64(d, "more", p->nsnap - i);
			break;
		}
		c = rte_tel_data_alloc();
		if (c == NULL) {
			rc = -ENOMEM;
			break;
		}
		tel_conn(c, &p->snap[i]);
		snprintf(key, sizeof(key), "conn%" PRIu64, p->snap[i].id);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0) {
			rte_tel_data_free(c);
			break; /* (the reply is full) */
		}
	}
	pthread_mutex_unlock(&p->snap_lock);
	pthread_mutex_unlock(&xprt_pollers_lock);
	return rc;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rpcr_xprt_poller *p;
	struct rpcr_xprt_stats s;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&xprt_pollers_lock);
	p = poller_by_name(params);
	if (p != NULL)
		rpcr_xprt_stats_get(p, &s);
	pthread_mutex_unlock(&xprt_pollers_lock);
	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
#define ADD(f) rte_tel_data_add_dict_u64(d, #f, s.f)
	ADD(polls);
	ADD(busy_polls);
	ADD(calls_sent);
	ADD(replies_recv);
	ADD(calls_recv);
	ADD(replies_sent);
	ADD(bcalls_sent);
	ADD(breplies_recv);
	ADD(bcalls_recv);
	ADD(breplies_sent);
	ADD(bcalls_overrun);
	ADD(bytes_sent);
	ADD(bytes_recv);
	ADD(credit_waits);
	ADD(unmatched);
	ADD(rdma_errors_sent);
	ADD(rdma_errors_recv);
	ADD(timeouts);
	ADD(retransmits);
	ADD(reconnects);
	ADD(wc_errors);
	ADD(doorbells);
	ADD(bad_headers);
	ADD(overruns);
	ADD(remote_invalidations);
	ADD(reply_reads);
	ADD(dones_sent);
	ADD(dones_recv);
	ADD(done_timeouts);
	ADD(msgp_sent);
	ADD(msgp_recv);
	ADD(limit_call_bytes);
	ADD(limit_chunks);
	ADD(conns_refused);
	ADD(calls_dropped);
	ADD(invalidate_failures);
	ADD(bcalls_refused);
	ADD(bcalls_too_long);
	ADD(bcalls_chunks_sent);
	ADD(bcalls_chunks_recv);
	ADD(brebinds);
	ADD(mw_binds);
	ADD(local_invalidations);
	ADD(reg_mrs);
	ADD(reg_fallbacks);
	ADD(send_invs);
	ADD(props_recv);
	ADD(props_sent);
	ADD(calls_too_many_segs);
	ADD(cont_sent);
	ADD(cont_parts_sent);
	ADD(cont_recv);
	ADD(cont_parts_recv);
	ADD(cont_fallbacks);
	ADD(xchar_sent);
	ADD(xchar_recv);
	ADD(cont_errors);
	ADD(sleeps);
	ADD(wakeups);
	ADD(sleep_us);
	ADD(srq_low);
	ADD(late_replies);
#undef ADD
	return 0;
}

/* A capture's counters as a telemetry dict (with "error" when @p err is not 0). */
static void
tel_capture_dict(struct rte_tel_data *d, const struct rpcr_xprt_capture_stats *st, int err)
{
	rte_tel_data_start_dict(d);
	if (err != 0)
		rte_tel_data_add_dict_string(d, "error", rte_strerror(err));
	rte_tel_data_add_dict_int(d, "running", st->running);
	rte_tel_data_add_dict_string(d, "path", st->path);
	rte_tel_data_add_dict_u64(d, "pollers", st->pollers);
	rte_tel_data_add_dict_u64(d, "conns", st->conns);
	rte_tel_data_add_dict_u64(d, "recorded", st->recorded);
	rte_tel_data_add_dict_u64(d, "written", st->written);
	rte_tel_data_add_dict_u64(d, "drops", st->drops);
	if (st->error != 0)
		rte_tel_data_add_dict_string(d, "write_error", rte_strerror(st->error));
}

/* /rpcr/capture: status; ",start,PATH[,snap=N][,poller=NAME][,conn=ID][,data][,ring=N]";
 * ",stop". */
static int
tel_capture(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rpcr_xprt_capture_stats st;
	struct rpcr_xprt_capture_conf cc;
	char buf[512], *tok, *save = NULL;
	int rc;

	RTE_SET_USED(cmd);
	memset(&st, 0, sizeof(st));
	if (params == NULL || params[0] == '\0') {
		rpcr_xprt_capture_status(&st); /* (none running: all 0) */
		tel_capture_dict(d, &st, 0);
		return 0;
	}
	if (strcmp(params, "stop") == 0) {
		rc = rpcr_xprt_capture_stop(&st);
		if (rc == -ENOENT)
			return -ENOENT;
		tel_capture_dict(d, &st, -rc);
		return 0;
	}
	if (strncmp(params, "start,", 6) != 0 || strlen(params) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", params + 6);
	memset(&cc, 0, sizeof(cc));
	cc.path = strtok_r(buf, ",", &save);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		char *end = NULL;

		if (strncmp(tok, "snap=", 5) == 0)
			cc.snap = (uint32_t)strtoul(tok + 5, &end, 0);
		else if (strncmp(tok, "conn=", 5) == 0)
			cc.conn = strtoull(tok + 5, &end, 0);
		else if (strncmp(tok, "poller=", 7) == 0)
			cc.poller = tok + 7;
		else if (strncmp(tok, "ring=", 5) == 0)
			cc.ring = (uint32_t)strtoul(tok + 5, &end, 0);
		else if (strcmp(tok, "data") == 0)
			cc.rdma_data = true;
		else
			return -EINVAL;
		if (end != NULL && *end != '\0')
			return -EINVAL;
	}
	rc = rpcr_xprt_capture_start(&cc);
	if (rc == 0)
		rpcr_xprt_capture_status(&st);
	else
		snprintf(st.path, sizeof(st.path), "%s", cc.path != NULL ? cc.path : "");
	tel_capture_dict(d, &st, -rc);
	return 0;
}

RTE_INIT(xprt_telemetry)
{
	rte_telemetry_register_cmd("/rpcr/capture", tel_capture,
				   "Capture into a pcapng file. Parameters: none (status), "
				   "start,PATH[,snap=N][,poller=NAME][,conn=ID][,data][,ring=N], "
				   "or stop.");
	rte_telemetry_register_cmd("/rpcr/xprt/pollers", tel_list,
				   "Returns the names of the RPC-over-RDMA pollers.");
	rte_telemetry_register_cmd("/rpcr/xprt/stats", tel_stats,
				   "Returns a poller's counters. Parameter: poller name "
				   "(default: the first).");
	rte_telemetry_register_cmd("/rpcr/xprt/conns", tel_conns,
				   "Connections of a poller (snapshot at most 100 ms old). "
				   "Parameters: poller name");
}
