/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Capture (rpcr_xprt_capture_start(), doc/capture.md): every message the pollers send and
 * receive, and the RDMA Writes and Reads they post, into a pcapng file of RoCEv2 frames
 * (lib/cap). In order:
 *
 *   1. Start (any thread): a session is made: a pool of records, one ring per poller, the file
 *      (its section header), the writer thread. Each poller is sent its slot of the session on
 *      its own ring (XPRT_RING_CAP), the slot holding a reference to the session.
 *   2. The poller takes it (ring_dispatch(), xprt_cap_switch()): from then on its polls record
 *      - each receive completion, before it is handled (xprt_cap_rx(), from poll_completions()
 *        when rpcr_xprt_poller::burst_slow says the burst needs a first look);
 *      - each WR a connection staged, before it is posted (xprt_cap_tx(), from
 *        xprt_sq_flush()): Sends, RDMA Writes, RDMA Read requests (a Read remembered in
 *        xprt_conn::cap_reads);
 *      - the responses of the RDMA Reads a send-queue completion completes (read_done(), from
 *        xprt_cap_rx()): their data is there.
 *      A record is an mbuf of the session's pool: what the poller knows (time, connection,
 *      operation, lengths, keys) in its private area, the first snap bytes in its data, room
 *      for the frame's headers in front. A connection's first record of a session follows one
 *      that describes it (its interface in the file). A full ring or an empty pool drops the
 *      record, counted.
 *   3. The writer thread (a DPDK control thread) drains the rings, one poller after the other:
 *      an interface block for each connection, a packet block for each record (headers built
 *      in the record's headroom, rte_pcapng_copy() via rpcr_cap_file_block()), written in
 *      batches. It sleeps 1 ms when every ring is empty.
 *   4. Stop (any thread): each poller is sent "off" (and lets go of its reference when it
 *      takes it); the writer drains until every poller has let go (CAP_STOP_WAIT_MS at most: a
 *      poller that does not poll keeps its reference, and the last one to let go frees the
 *      session), writes the statistics blocks and closes the file.
 *
 * When off, a poll pays one test per send-queue flush (p->cap) and none per burst (the test of
 * burst_slow is the one the prefetch over many connections made already).
 *
 * Frames: one per message or RDMA operation (rpcr_cap.h), its IPv4 and UDP lengths counting the
 * bytes kept, the packet block's original length the whole message's (writer_frame() says
 * why). Addresses: this side is 198.18.<poller>.1, the peer its
 * IPv4 address where the connection knows one, else 198.19.<id>; the real ones are in the
 * interface's comment. The peer's QP number is not known here: frames to it carry this side's
 * with the top bit set.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_version.h>

#include <rpcr_cap.h>

#include "xprt_internal.h"

#define CAP_RING_DEFAULT 16384u
#define CAP_BURST        64u
#define CAP_IDLE_US      1000u
#define CAP_STOP_WAIT_MS 2000u
#define CAP_HEADROOM     128u /* >= RPCR_CAP_HDR_MAX */
#define CAP_MAX_CONNS    65536u

/* What a record is. */
enum cap_kind {
	CAP_IFACE = 0, /* a connection: its data is a struct cap_iface */
	CAP_SEND,
	CAP_SEND_INV,
	CAP_WRITE,
	CAP_READ,
	CAP_RECV, /* (from here on: inbound) */
	CAP_RECV_INV,
	CAP_READ_RESP,
};

/* RDMA Reads a connection posted whose responses are still to be recorded: when a send-queue
 * completion at or after one's sequence number says its data is there. */
#define CAP_READS     64u
#define CAP_READ_SGES 4u

struct cap_read {
	uint32_t seq; /* its send-queue sequence number */
	uint32_t len;
	uint16_t nsge;
	struct {
		uint64_t addr;
		uint32_t len;
	} sge[CAP_READ_SGES];
};

struct xprt_cap_reads {
	uint32_t gen; /* the session's (an older one's entries are forgotten) */
	uint32_t head, tail;
	struct cap_read r[CAP_READS];
};

/* In each record's private area. */
struct cap_rec {
	uint64_t tsc;
	uint64_t conn; /* the connection's id */
	uint64_t va;   /* WRITE, READ: the peer's address */
	uint32_t len;  /* bytes of the message, or of the transfer */
	uint32_t rkey; /* SEND_INV, RECV_INV: the key invalidated; WRITE, READ: the peer's key */
	uint8_t kind;  /* enum cap_kind */
};

/* A CAP_IFACE record's data. */
struct cap_iface {
	uint32_t local_ip, peer_ip; /* frames' IPv4 addresses, host order */
	uint32_t qpn;
	uint16_t port;
	char name[64];
	char descr[128];
	char comment[256];
};

/* The writer's view of a connection. */
struct cap_wconn {
	uint32_t iface;
	uint32_t local_ip, peer_ip, qpn;
	uint16_t port;
	uint32_t psn_out, psn_in;
	uint64_t frames;
};

struct cap_key {
	uint64_t conn;
	uint32_t slot;
	uint32_t pad;
};

struct xprt_cap_session;

/* The writer's burst of one ring. */
struct cap_drain {
	struct rte_mbuf *recs[CAP_BURST];
	uint32_t n, next;
};

/* One poller's part of a session: what the poller sees as p->cap. */
struct xprt_cap_port {
	struct xprt_cap_session *s;
	struct rpcr_xprt_poller *p;
	struct rte_ring *ring; /* single producer (the poller), single consumer (the writer) */
	uint32_t index;        /* the packet blocks' queue */
	char name[32];         /* the poller's */
	uint64_t recorded;     /* by the poller */
	uint64_t drops;        /* by the poller: ring full, pool empty */
};

struct xprt_cap_session {
	uint32_t refs; /* the controller's, each poller's (atomic) */
	uint32_t gen;  /* xprt_conn::cap_gen of the connections described in this session */
	struct rpcr_xprt_capture_conf conf;
	char path[256];
	struct rte_mempool *rec_pool, *blk_pool;
	struct rpcr_cap_file *file;
	struct rte_hash *conns; /* struct cap_key -> struct cap_wconn */
	struct cap_wconn *wconns;
	uint32_t nwconns;
	struct cap_drain *drain; /* one per port */
	uint32_t capture_iface;  /* the capture's own interface: its statistics */
	pthread_t writer;
	uint32_t stopping;            /* stop asked: a slot handed over late is refused (atomic) */
	uint32_t stop;                /* the writer: drain what is left and finish (atomic) */
	uint64_t written;             /* packet blocks (writer) */
	uint64_t lost;                /* records the writer could not make into blocks */
	int error;                    /* the file's first write error */
	uint64_t start_ns, start_tsc; /* the records' clock: the TSC at start_ns */
	uint64_t hz;
	uint32_t nports;
	struct xprt_cap_port ports[];
};

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xprt_cap_session *cap_cur; /* the session running, under cap_lock */
static uint32_t cap_gen;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
session_free(struct xprt_cap_session *s)
{
	uint32_t i;

	for (i = 0; i < s->nports; i++)
		rte_ring_free(s->ports[i].ring);
	rte_mempool_free(s->rec_pool);
	rte_mempool_free(s->blk_pool);
	rte_hash_free(s->conns);
	free(s->wconns);
	free(s->drain);
	free(s);
}

static void
session_put(struct xprt_cap_session *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		session_free(s);
}

/* ---- the poller's side ---- */

void
xprt_poller_burst_update(struct rpcr_xprt_poller *p)
{
	p->burst_slow = p->nconns > XPRT_PREFETCH_CONNS || p->cap != NULL;
}

void
xprt_cap_switch(struct rpcr_xprt_poller *p, struct xprt_cap_port *port)
{
	struct xprt_cap_port *old = p->cap;

	/* (A slot that comes after its session's stop: the poller was not polling.) */
	if (port != NULL && __atomic_load_n(&port->s->stopping, __ATOMIC_ACQUIRE)) {
		session_put(port->s);
		return;
	}
	p->cap = port;
	xprt_poller_burst_update(p);
	if (old != NULL)
		session_put(old->s);
}

void
xprt_cap_poller_gone(struct rpcr_xprt_poller *p)
{
	void *o;

	/* Entries left on the ring of a poller being destroyed: slots hold references. */
	while (rte_ring_sc_dequeue(p->ring, &o) == 0) {
		uintptr_t v = (uintptr_t)o;

		if ((v & XPRT_RING_TAG) == XPRT_RING_CAP && (v & ~(uintptr_t)XPRT_RING_TAG) != 0)
			session_put(((struct xprt_cap_port *)(v & ~(uintptr_t)XPRT_RING_TAG))->s);
	}
	xprt_cap_switch(p, NULL);
}

/* A record for a packet, or NULL (the packet counted as dropped). */
static struct rte_mbuf *
rec_new(struct xprt_cap_port *port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->s->rec_pool);

	if (unlikely(m == NULL))
		port->drops++;
	return m;
}

/* Queue record @p m for the writer (@p packet: it becomes a packet, counted). @return queued. */
static bool
rec_queue(struct xprt_cap_port *port, struct rte_mbuf *m, bool packet)
{
	if (unlikely(rte_ring_sp_enqueue(port->ring, m) != 0)) {
		rte_pktmbuf_free(m);
		port->drops += packet;
		return false;
	}
	port->recorded += packet;
	return true;
}

static struct cap_rec *
rec_of(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

/* The peer's IPv4 address, where the connection knows one (host order), else 0. */
static uint32_t
peer_ipv4(const struct xprt_conn *c, char *buf, size_t len)
{
	struct in_addr a;
	char host[108], *colon;

	buf[0] = '\0';
	if (c->server) {
		rpcr_xprt_addr_str((const struct sockaddr *)&c->peer, buf, len);
		if (c->peer.ss_family == AF_INET)
			return ntohl(((const struct sockaddr_in *)&c->peer)->sin_addr.s_addr);
		return 0;
	}
	if (c->clnt == NULL)
		return 0;
	snprintf(buf, len, "%s", c->clnt->addr);
	snprintf(host, sizeof(host), "%s", c->clnt->addr);
	colon = strrchr(host, ':');
	if (colon != NULL)
		*colon = '\0';
	if (inet_pton(AF_INET, host, &a) == 1)
		return ntohl(a.s_addr);
	return 0;
}

/* Describe @c to the writer: the record every connection's first one of a session follows. */
static bool
rec_iface(struct xprt_cap_port *port, struct xprt_conn *c, uint64_t tsc)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->s->rec_pool);
	struct cap_iface *d;
	struct cap_rec *r;
	char peer[128];

	if (m == NULL)
		return false;
	d = (struct cap_iface *)rte_pktmbuf_append(m, sizeof(*d));
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return false;
	}
	memset(d, 0, sizeof(*d));
	d->qpn = c->qp != NULL ? c->qp->qp_num : 0;
	d->local_ip = (198u << 24) | (18u << 16) | ((port->index & 0xffu) << 8) | 1u;
	d->peer_ip = peer_ipv4(c, peer, sizeof(peer));
	if (d->peer_ip == 0 || d->peer_ip == d->local_ip)
		d->peer_ip = (198u << 24) | (19u << 16) | (uint32_t)(c->id & 0xffffu);
	d->port = (uint16_t)(49152u + (c->id & 0x3fffu));
	snprintf(d->name, sizeof(d->name), "%s:conn%" PRIu64, c->p->name, c->id);
	snprintf(d->descr, sizeof(d->descr), "rpcr %s connection %" PRIu64 " of poller %s",
		 c->server ? "server" : "client", c->id, c->p->name);
	snprintf(d->comment, sizeof(d->comment),
		 "%s, peer %s, QP %u, RPC-over-RDMA version %u at capture start, inline send %u"
		 " receive %u",
		 c->server ? "server" : "client", peer[0] != '\0' ? peer : "unknown", d->qpn,
		 c->wire->vers, c->inline_send, c->inline_recv);
	r = rec_of(m);
	memset(r, 0, sizeof(*r));
	r->kind = CAP_IFACE;
	r->conn = c->id;
	r->tsc = tsc; /* (the packet's that follows: the writer merges the pollers by time) */
	if (!rec_queue(port, m, false))
		return false;
	c->cap_gen = port->s->gen;
	return true;
}

/* Is @c captured? 1: yes (its interface described first), 0: not asked for, -1: its
 * description could not be queued (its packets now are dropped). */
static inline int
cap_conn(struct xprt_cap_port *port, struct xprt_conn *c, uint64_t tsc)
{
	if (port->s->conf.conn != 0 && c->id != port->s->conf.conn)
		return 0;
	return c->cap_gen == port->s->gen || rec_iface(port, c, tsc) ? 1 : -1;
}

/* Copy up to @p max bytes of the gather list @p sge (@p n entries) into @p m. */
static void
rec_copy_sges(struct rte_mbuf *m, const struct rpcr_rdev_sge *sge, uint16_t n, uint32_t max)
{
	uint16_t i;

	for (i = 0; i < n && max != 0; i++) {
		uint32_t k = RTE_MIN(sge[i].length, max);
		char *d = rte_pktmbuf_append(m, (uint16_t)k);

		if (d == NULL)
			return;
		memcpy(d, (const void *)(uintptr_t)sge[i].addr, k);
		max -= k;
	}
}

/* Remember RDMA Read @p wr (@p len bytes) of @p c: its response is recorded at its completion. */
static void
read_stash(struct xprt_cap_port *port, struct xprt_conn *c, const struct rpcr_rdev_send_wr *wr,
	   uint32_t len)
{
	struct xprt_cap_reads *q = c->cap_reads;
	struct cap_read *e;
	uint16_t i;

	if (q == NULL) {
		q = rte_zmalloc("rpcr_cap_reads", sizeof(*q), 0);
		if (q == NULL) {
			port->drops++; /* (its response) */
			return;
		}
		c->cap_reads = q;
	}
	if (q->gen != port->s->gen) {
		q->gen = port->s->gen;
		q->head = q->tail = 0;
	}
	if (q->tail - q->head == CAP_READS) {
		q->head++; /* the oldest's response is lost */
		port->drops++;
	}
	e = &q->r[q->tail++ % CAP_READS];
	e->seq = (uint32_t)(wr->wr_id >> 1);
	e->len = len;
	e->nsge = (uint16_t)RTE_MIN(wr->num_sge, CAP_READ_SGES);
	for (i = 0; i < e->nsge; i++) {
		e->sge[i].addr = wr->sg_list[i].addr;
		e->sge[i].len = wr->sg_list[i].length;
	}
}

/* A send-queue completion of @p c: the responses of the RDMA Reads at or before it, recorded
 * (with their data when asked); a failed one forgets them. */
static void
read_done(struct xprt_cap_port *port, struct xprt_conn *c, const struct rpcr_rdev_wc *wc,
	  uint64_t tsc)
{
	struct xprt_cap_reads *q = c->cap_reads;
	uint32_t seq = (uint32_t)(wc->wr_id >> 1);

	if (q == NULL || q->gen != port->s->gen)
		return;
	if (wc->status != RPCR_RDEV_WC_SUCCESS) {
		q->head = q->tail;
		return;
	}
	while (q->head != q->tail && (int32_t)(q->r[q->head % CAP_READS].seq - seq) <= 0) {
		const struct cap_read *e = &q->r[q->head++ % CAP_READS];
		struct rte_mbuf *m = rec_new(port);
		struct rpcr_rdev_sge sge[CAP_READ_SGES];
		struct cap_rec *r;
		uint16_t i;

		if (m == NULL)
			continue;
		if (port->s->conf.rdma_data) {
			for (i = 0; i < e->nsge; i++) {
				sge[i].addr = e->sge[i].addr;
				sge[i].length = e->sge[i].len;
				sge[i].lkey = 0;
			}
			rec_copy_sges(m, sge, e->nsge, port->s->conf.snap);
		}
		r = rec_of(m);
		memset(r, 0, sizeof(*r));
		r->tsc = tsc;
		r->conn = c->id;
		r->kind = CAP_READ_RESP;
		r->len = e->len;
		rec_queue(port, m, true);
	}
}

void
xprt_cap_conn_free(struct xprt_conn *c)
{
	rte_free(c->cap_reads);
	c->cap_reads = NULL;
}

void
xprt_cap_tx(struct xprt_conn *c)
{
	struct xprt_cap_port *port = c->p->cap;
	uint64_t tsc = rte_rdtsc();
	uint32_t i, j, snap = port->s->conf.snap;
	int want = cap_conn(port, c, tsc);

	if (want == 0)
		return;
	for (i = 0; i < c->sq.nwrs; i++) {
		const struct rpcr_rdev_send_wr *wr = &xprt_sq_wrs(c)[i];
		struct rte_mbuf *m;
		struct cap_rec *r;
		uint32_t len = 0;
		uint8_t kind;

		switch (wr->opcode) {
		case RPCR_RDEV_WR_SEND:
			kind = CAP_SEND;
			break;
		case RPCR_RDEV_WR_SEND_INV:
			kind = CAP_SEND_INV;
			break;
		case RPCR_RDEV_WR_WRITE:
			kind = CAP_WRITE;
			break;
		case RPCR_RDEV_WR_READ:
			kind = CAP_READ;
			break;
		default:
			continue; /* window binds and invalidations: nothing on the wire */
		}
		if (want < 0) {
			port->drops++;
			continue;
		}
		m = rec_new(port);
		if (m == NULL)
			continue;
		for (j = 0; j < wr->num_sge; j++)
			len += wr->sg_list[j].length;
		if (kind == CAP_SEND || kind == CAP_SEND_INV ||
		    (kind == CAP_WRITE && port->s->conf.rdma_data))
			rec_copy_sges(m, wr->sg_list, wr->num_sge, snap);
		r = rec_of(m);
		r->tsc = tsc;
		r->conn = c->id;
		r->kind = kind;
		r->len = len;
		r->rkey = kind == CAP_SEND_INV ? wr->invalidate_rkey : wr->rkey;
		r->va = wr->remote_addr;
		rec_queue(port, m, true);
		if (kind == CAP_READ)
			read_stash(port, c, wr, len);
	}
}

void
xprt_cap_rx(struct rpcr_xprt_poller *p, const struct rpcr_rdev_wc *wc, uint16_t n)
{
	struct xprt_cap_port *port = p->cap;
	uint64_t tsc = rte_rdtsc();
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *b = (struct rte_mbuf *)(uintptr_t)wc[i].wr_id, *m;
		struct xprt_conn *c;
		struct cap_rec *r;
		uint32_t k;
		char *d;

		if (wc[i].qp == NULL)
			continue;
		c = wc[i].qp->user;
		if (wc[i].wr_id & XPRT_WRID_SQ) {
			if (unlikely(c->cap_reads != NULL))
				read_done(port, c, &wc[i], tsc);
			continue;
		}
		if (wc[i].status != RPCR_RDEV_WC_SUCCESS)
			continue;
		switch (cap_conn(port, c, tsc)) {
		case 0:
			continue;
		case -1:
			port->drops++;
			continue;
		default:
			break;
		}
		m = rec_new(port);
		if (m == NULL)
			continue;
		k = RTE_MIN(wc[i].byte_len, port->s->conf.snap);
		d = rte_pktmbuf_append(m, (uint16_t)k);
		if (d != NULL)
			memcpy(d, rte_pktmbuf_mtod(b, const void *), k);
		r = rec_of(m);
		r->tsc = tsc;
		r->conn = c->id;
		r->len = wc[i].byte_len;
		if (wc[i].flags & RPCR_RDEV_WC_F_WITH_INV) {
			r->kind = CAP_RECV_INV;
			r->rkey = wc[i].invalidated_rkey;
		} else {
			r->kind = CAP_RECV;
			r->rkey = 0;
		}
		r->va = 0;
		rec_queue(port, m, true);
	}
}

/* ---- the writer ---- */

static void
writer_fail(struct xprt_cap_session *s, int err, const char *what)
{
	if (s->error == 0) {
		s->error = err;
		XPRT_LOG(ERR, "capture: %s: %s: %s; capture goes on without writing", s->path, what,
			 rte_strerror(err));
	}
}

static void
writer_iface(struct xprt_cap_session *s, uint32_t slot, struct rte_mbuf *m)
{
	const struct cap_iface *d = rte_pktmbuf_mtod(m, const struct cap_iface *);
	struct cap_key key = {.conn = rec_of(m)->conn, .slot = slot};
	struct cap_wconn *w;
	int rc;

	if (m->data_len < sizeof(*d) || s->nwconns == CAP_MAX_CONNS)
		return;
	rc = rpcr_cap_file_iface(s->file, d->name, d->descr, d->comment,
				 s->conf.snap + RPCR_CAP_HDR_MAX + RPCR_CAP_ICRC_LEN);
	if (rc < 0) {
		writer_fail(s, -rc, "interface block");
		return;
	}
	w = &s->wconns[s->nwconns];
	memset(w, 0, sizeof(*w));
	w->iface = (uint32_t)rc;
	w->local_ip = d->local_ip;
	w->peer_ip = d->peer_ip;
	w->qpn = d->qpn;
	w->port = d->port;
	/* (A connection described again, a later session's id reused: the newest wins.) */
	if (rte_hash_add_key_data(s->conns, &key, w) == 0)
		__atomic_add_fetch(&s->nwconns, 1, __ATOMIC_RELAXED);
}

/* The time of TSC @p tsc, in ns since the epoch. */
static uint64_t
tsc_ns(const struct xprt_cap_session *s, uint64_t tsc)
{
	uint64_t d = tsc >= s->start_tsc ? tsc - s->start_tsc : s->start_tsc - tsc;
	uint64_t ns = d / s->hz * 1000000000ull + d % s->hz * 1000000000ull / s->hz;

	return tsc >= s->start_tsc ? s->start_ns + ns : s->start_ns - ns;
}

/* Make record @p m a frame in place (headers in its headroom, the CRC when whole) and its
 * packet block. */
static struct rte_mbuf *
writer_frame(struct xprt_cap_session *s, uint32_t slot, struct rte_mbuf *m)
{
	const struct cap_rec *r = rec_of(m);
	struct cap_key key = {.conn = r->conn, .slot = slot};
	struct rpcr_cap_roce f;
	uint8_t hdr[RPCR_CAP_HDR_MAX];
	struct cap_wconn *w;
	uint32_t hlen, flen;
	bool out = r->kind < CAP_RECV;
	uint32_t copied = m->pkt_len, more;
	char *h, *t;

	if (rte_hash_lookup_data(s->conns, &key, (void **)&w) < 0)
		return NULL; /* its description was dropped */
	memset(&f, 0, sizeof(f));
	f.src_ip = out ? w->local_ip : w->peer_ip;
	f.dst_ip = out ? w->peer_ip : w->local_ip;
	f.src_port = w->port;
	f.dest_qp = out ? (w->qpn | 0x800000u) : w->qpn;
	/* (0 and 1 are the management QPs to Wireshark: shm numbers its QPs from 1.) */
	if (f.dest_qp < 2)
		f.dest_qp |= 0x10000u;
	f.psn = out ? w->psn_out++ : w->psn_in++;
	/* A frame carries what was kept, and its IPv4 and UDP lengths say no more: Wireshark's
	 * InfiniBand dissector hands on no payload it does not have whole (a frame cut short is
	 * "Invalid Packet Length", its message not decoded). The packet block's original length
	 * is the whole message's (below); an RDMA Write's RETH has its whole length. */
	f.len = RTE_MIN(r->len, copied);
	f.rkey = r->rkey;
	f.va = r->va;
	f.dma_len = r->len;
	switch (r->kind) {
	case CAP_SEND_INV:
	case CAP_RECV_INV:
		f.op = RPCR_CAP_SEND_INV;
		break;
	case CAP_WRITE:
		f.op = RPCR_CAP_WRITE;
		break;
	case CAP_READ:
		f.op = RPCR_CAP_READ_REQ;
		break;
	case CAP_READ_RESP:
		f.op = RPCR_CAP_READ_RESP;
		break;
	default:
		f.op = RPCR_CAP_SEND;
		break;
	}
	hlen = rpcr_cap_roce_hdr(hdr, &f);
	h = rte_pktmbuf_prepend(m, (uint16_t)hlen);
	if (h == NULL)
		return NULL;
	memcpy(h, hdr, hlen);
	flen = rpcr_cap_roce_len(hdr);
	/* The frame holds all it claims: its padding and CRC follow. */
	more = flen - m->pkt_len;
	t = rte_pktmbuf_append(m, (uint16_t)more);
	if (t == NULL)
		return NULL;
	memset(t, 0, more);
	rpcr_cap_roce_icrc(rte_pktmbuf_mtod(m, uint8_t *));
	w->frames++;
	/* (Its length on the wire, had the whole message been kept.) */
	if (f.op != RPCR_CAP_READ_REQ && r->len > f.len)
		flen += RTE_MIN(r->len, RPCR_CAP_PAYLOAD_MAX) - f.len;
	return rpcr_cap_file_block(s->file, w->iface, m, s->blk_pool, flen, tsc_ns(s, r->tsc), out,
				   slot);
}

/* Write the blocks made so far (freed, written or not). */
static void
writer_flush(struct xprt_cap_session *s, struct rte_mbuf **blks, uint32_t *nb)
{
	uint32_t j;

	if (*nb == 0)
		return;
	if (s->error != 0) {
		for (j = 0; j < *nb; j++)
			rte_pktmbuf_free(blks[j]);
	} else if (rpcr_cap_file_write(s->file, blks, (uint16_t)*nb) < 0) {
		writer_fail(s, rte_errno, "write");
	} else {
		__atomic_add_fetch(&s->written, *nb, __ATOMIC_RELAXED);
	}
	*nb = 0;
}

/* Drain what the pollers recorded: a burst of each ring, merged by time (each ring is in time
 * order; a record a poller was making while its ring was taken may come a little late).
 * @return records taken. */
static uint32_t
writer_drain(struct xprt_cap_session *s)
{
	struct cap_drain *d = s->drain;
	struct rte_mbuf *blks[CAP_BURST];
	uint32_t total = 0, i, nb = 0;

	for (i = 0; i < s->nports; i++) {
		d[i].n = rte_ring_sc_dequeue_burst(s->ports[i].ring, (void **)d[i].recs, CAP_BURST,
						   NULL);
		d[i].next = 0;
		total += d[i].n;
	}
	for (;;) {
		struct rte_mbuf *m;
		uint32_t k = UINT32_MAX;

		for (i = 0; i < s->nports; i++)
			if (d[i].next < d[i].n &&
			    (k == UINT32_MAX ||
			     rec_of(d[i].recs[d[i].next])->tsc < rec_of(d[k].recs[d[k].next])->tsc))
				k = i;
		if (k == UINT32_MAX)
			break;
		m = d[k].recs[d[k].next++];
		if (rec_of(m)->kind == CAP_IFACE) {
			if (s->error == 0)
				writer_iface(s, k, m);
		} else {
			blks[nb] = writer_frame(s, k, m);
			if (blks[nb] != NULL)
				nb++;
			else
				__atomic_add_fetch(&s->lost, 1, __ATOMIC_RELAXED);
			if (nb == CAP_BURST)
				writer_flush(s, blks, &nb);
		}
		rte_pktmbuf_free(m);
	}
	writer_flush(s, blks, &nb);
	return total;
}

static void
writer_finish(struct xprt_cap_session *s)
{
	uint64_t end = now_ns(), drops = 0, recorded = 0;
	const void *key;
	void *data;
	uint32_t next = 0, i;
	char comment[512];
	size_t off = 0;

	for (i = 0; i < s->nports; i++) {
		uint64_t d = __atomic_load_n(&s->ports[i].drops, __ATOMIC_RELAXED);

		drops += d;
		recorded += __atomic_load_n(&s->ports[i].recorded, __ATOMIC_RELAXED);
		off += (size_t)snprintf(
			comment + off, off < sizeof(comment) ? sizeof(comment) - off : 0,
			"%s%s: %" PRIu64 " dropped", i != 0 ? ", " : "", s->ports[i].name, d);
		if (off >= sizeof(comment))
			off = sizeof(comment) - 1;
	}
	if (s->error != 0)
		return;
	while (rte_hash_iterate(s->conns, &key, &data, &next) >= 0) {
		const struct cap_wconn *w = data;

		rpcr_cap_file_stats(s->file, w->iface, s->start_ns, end, w->frames, 0, NULL);
	}
	/* The drops are the pollers', not a connection's: on the capture's own interface. */
	rpcr_cap_file_stats(s->file, s->capture_iface, s->start_ns, end, s->written,
			    drops + s->lost, comment);
	RTE_SET_USED(recorded);
}

static uint32_t
session_pollers_held(struct xprt_cap_session *s)
{
	return __atomic_load_n(&s->refs, __ATOMIC_ACQUIRE) - 1;
}

static void *
writer_main(void *arg)
{
	struct xprt_cap_session *s = arg;
	uint64_t stop_at = 0;

	for (;;) {
		if (writer_drain(s) != 0)
			continue;
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
			struct timespec ts;
			uint64_t now;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
			if (stop_at == 0)
				stop_at = now + CAP_STOP_WAIT_MS;
			if (session_pollers_held(s) == 0) {
				writer_drain(s);
				break;
			}
			if (now >= stop_at) {
				XPRT_LOG(WARNING,
					 "capture: %s: %u poller(s) did not take the stop in %u ms "
					 "(not polling?): the file ends here",
					 s->path, session_pollers_held(s), CAP_STOP_WAIT_MS);
				writer_drain(s);
				break;
			}
		}
		usleep(CAP_IDLE_US);
	}
	writer_finish(s);
	return NULL;
}

/* ---- control ---- */

/* @p p is a poller (under xprt_pollers_lock). */
static bool
poller_present(const struct rpcr_xprt_poller *p)
{
	uint32_t i;

	for (i = 0; i < RTE_DIM(xprt_pollers); i++)
		if (xprt_pollers[i] == p)
			return true;
	return false;
}

/* Hand @p v (a port, or 0 for off) to poller @p p: through its ring, or at once on its own
 * thread (which may be the one that polls it and would not before this returns). */
static int
send_to_poller(struct rpcr_xprt_poller *p, uintptr_t v)
{
	uint64_t until = rte_rdtsc() + rte_get_tsc_hz();

	if (xprt_on_owner(p)) {
		xprt_cap_switch(p, (struct xprt_cap_port *)v);
		return 0;
	}
	while (rte_ring_mp_enqueue(p->ring, (void *)(v | XPRT_RING_CAP)) != 0) {
		if (rte_rdtsc() > until)
			return -EBUSY;
		rte_pause();
	}
	xprt_poller_kick(p);
	return 0;
}

static void
stats_of(const struct xprt_cap_session *s, struct rpcr_xprt_capture_stats *st, bool running)
{
	uint32_t i;

	memset(st, 0, sizeof(*st));
	st->running = running;
	snprintf(st->path, sizeof(st->path), "%s", s->path);
	st->pollers = s->nports;
	for (i = 0; i < s->nports; i++) {
		st->recorded += __atomic_load_n(&s->ports[i].recorded, __ATOMIC_RELAXED);
		st->drops += __atomic_load_n(&s->ports[i].drops, __ATOMIC_RELAXED);
	}
	st->written = __atomic_load_n(&s->written, __ATOMIC_RELAXED);
	st->drops += __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
	st->conns = __atomic_load_n(&s->nwconns, __ATOMIC_RELAXED);
	st->error = s->error;
}

int
rpcr_xprt_capture_start(const struct rpcr_xprt_capture_conf *conf)
{
	struct rpcr_xprt_poller *ps[RTE_MAX_LCORE];
	struct xprt_cap_session *s;
	struct rte_hash_parameters hp;
	char name[RTE_MEMPOOL_NAMESIZE], comment[128];
	uint32_t n = 0, i, ring, snap;
	int rc = 0;

	if (conf == NULL || conf->path == NULL || conf->path[0] == '\0' ||
	    strlen(conf->path) >= sizeof(s->path) || conf->snap > RPCR_XPRT_CAPTURE_SNAP_MAX)
		return -EINVAL;
	snap = conf->snap != 0 ? conf->snap : RPCR_XPRT_CAPTURE_SNAP;
	ring = rte_align32pow2(conf->ring != 0 ? conf->ring : CAP_RING_DEFAULT);
	pthread_mutex_lock(&cap_lock);
	if (cap_cur != NULL) {
		pthread_mutex_unlock(&cap_lock);
		return -EBUSY;
	}
	pthread_mutex_lock(&xprt_pollers_lock);
	for (i = 0; i < RTE_DIM(xprt_pollers); i++)
		if (xprt_pollers[i] != NULL &&
		    (conf->poller == NULL || strcmp(conf->poller, xprt_pollers[i]->name) == 0))
			ps[n++] = xprt_pollers[i];
	pthread_mutex_unlock(&xprt_pollers_lock);
	if (n == 0 && conf->poller != NULL) {
		pthread_mutex_unlock(&cap_lock);
		return -ENODEV;
	}
	s = calloc(1, sizeof(*s) + n * sizeof(s->ports[0]));
	if (s == NULL) {
		rc = -ENOMEM;
		goto unlock;
	}
	s->refs = 1;
	s->gen = ++cap_gen;
	s->conf = *conf;
	s->conf.snap = snap;
	s->conf.ring = ring;
	snprintf(s->path, sizeof(s->path), "%s", conf->path);
	s->conf.path = s->path;
	s->conf.poller = NULL; /* (the caller's string: used above only) */
	s->nports = n;
	s->wconns = calloc(CAP_MAX_CONNS, sizeof(*s->wconns));
	s->drain = calloc(RTE_MAX(n, 1u), sizeof(*s->drain));
	snprintf(name, sizeof(name), "rpcr_cap%u", s->gen);
	/* Records: those all rings hold, one each pollers hold while making it. */
	s->rec_pool = rte_pktmbuf_pool_create(
		name, n * (ring + 1) + 64, 0,
		RTE_ALIGN(sizeof(struct cap_rec), RTE_MBUF_PRIV_ALIGN),
		(uint16_t)(CAP_HEADROOM + RTE_MAX(snap + 8, 512u)), SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "rpcr_capb%u", s->gen);
	s->blk_pool = rte_pktmbuf_pool_create(
		name, 2 * CAP_BURST, 0, 0,
		(uint16_t)rpcr_cap_file_mbuf_size(RPCR_CAP_HDR_MAX + snap + 8), SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "rpcr_capc%u", s->gen);
	memset(&hp, 0, sizeof(hp));
	hp.name = name;
	hp.entries = CAP_MAX_CONNS;
	hp.key_len = sizeof(struct cap_key);
	hp.hash_func = rte_jhash;
	hp.socket_id = (int)SOCKET_ID_ANY;
	s->conns = rte_hash_create(&hp);
	if (s->wconns == NULL || s->drain == NULL || s->rec_pool == NULL || s->blk_pool == NULL ||
	    s->conns == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "rpcr_cap%u_%u", s->gen, i);
		s->ports[i].ring = rte_ring_create(name, ring, SOCKET_ID_ANY,
						   RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (s->ports[i].ring == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		s->ports[i].s = s;
		s->ports[i].p = ps[i];
		s->ports[i].index = i;
		snprintf(s->ports[i].name, sizeof(s->ports[i].name), "%s", ps[i]->name);
	}
	snprintf(comment, sizeof(comment), "rpcr capture, snap length %u", snap);
	s->file = rpcr_cap_file_open(s->path, "rpcr " RPCR_LIB_VERSION, comment);
	if (s->file == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	rc = rpcr_cap_file_iface(s->file, "rpcr", "the capture itself: its statistics", NULL,
				 snap + RPCR_CAP_HDR_MAX + RPCR_CAP_ICRC_LEN);
	if (rc < 0)
		goto fail;
	s->capture_iface = (uint32_t)rc;
	s->hz = rte_get_tsc_hz();
	s->start_tsc = rte_rdtsc();
	s->start_ns = now_ns();
	rc = rte_ctrl_thread_create(&s->writer, "rpcr-capture", NULL, writer_main, s);
	if (rc != 0) {
		rc = -rc;
		goto fail;
	}
	/* Each poller still there is handed its slot, a reference with it (under the lock: a
	 * poller destroyed after takes its ring's entries back, xprt_cap_poller_gone()). */
	pthread_mutex_lock(&xprt_pollers_lock);
	for (i = 0; i < n; i++) {
		if (!poller_present(ps[i]))
			continue;
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
		if (send_to_poller(ps[i], (uintptr_t)&s->ports[i]) != 0) {
			__atomic_sub_fetch(&s->refs, 1, __ATOMIC_RELAXED);
			XPRT_LOG(WARNING, "capture: %s: its ring is full: not captured",
				 ps[i]->name);
		}
	}
	pthread_mutex_unlock(&xprt_pollers_lock);
	cap_cur = s;
	XPRT_LOG(INFO, "capture: %s: started, snap length %u, %u poller(s)", s->path, snap, n);
	pthread_mutex_unlock(&cap_lock);
	return 0;
fail:
	if (s->file != NULL)
		rpcr_cap_file_close(s->file);
	session_free(s);
unlock:
	pthread_mutex_unlock(&cap_lock);
	return rc;
}

int
rpcr_xprt_capture_stop(struct rpcr_xprt_capture_stats *st)
{
	struct xprt_cap_session *s;
	uint32_t k;
	int rc;

	pthread_mutex_lock(&cap_lock);
	s = cap_cur;
	if (s == NULL) {
		pthread_mutex_unlock(&cap_lock);
		return -ENOENT;
	}
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	/* Off, to the pollers still there (one destroyed since let go of its slot then). */
	pthread_mutex_lock(&xprt_pollers_lock);
	for (k = 0; k < s->nports; k++)
		if (poller_present(s->ports[k].p) && send_to_poller(s->ports[k].p, 0) != 0)
			XPRT_LOG(WARNING, "capture: %s: its ring is full: stop not sent",
				 s->ports[k].name);
	pthread_mutex_unlock(&xprt_pollers_lock);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->writer, NULL);
	if (st != NULL)
		stats_of(s, st, false);
	rc = rpcr_cap_file_close(s->file);
	if (rc == 0 && s->error != 0)
		rc = -s->error;
	XPRT_LOG(INFO, "capture: %s: stopped", s->path);
	cap_cur = NULL;
	pthread_mutex_unlock(&cap_lock);
	session_put(s);
	return rc;
}

int
rpcr_xprt_capture_status(struct rpcr_xprt_capture_stats *st)
{
	int rc = -ENOENT;

	if (st == NULL)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&cap_lock);
	if (cap_cur != NULL) {
		stats_of(cap_cur, st, true);
		rc = 0;
	}
	pthread_mutex_unlock(&cap_lock);
	return rc;
}
