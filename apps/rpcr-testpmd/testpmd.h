/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_TESTPMD_H
#define RPCR_TESTPMD_H

/*
 * rpcr-testpmd: the interactive (and scripted) tool operators drive rpcr with, after DPDK's
 * testpmd. The main lcore runs the command line; every port (a device and its poller) belongs
 * to a worker lcore that polls it and runs the traffic. Commands that touch a poller's clients,
 * servers or connections run on that worker, handed over through its mailbox (tp_exec()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>

#include <rpcr_mem.h>
#include <rpcr_xprt.h>

#define TP_MAX_PORTS         8
#define TP_MAX_SERVERS       8  /* per port */
#define TP_MAX_STREAMS       16 /* client connections, all ports */
#define TP_MAX_OUTSTANDING   256
#define TP_MAX_SIZE          (16u << 20)
#define TP_MAX_CONSEC_ERRORS 1000           /* a stream failing this often in a row stops */
#define TP_REPLY_CHUNK_MAX   61440u         /* the engine's largest reply chunk */
#define TP_CB_CREDITS        16u            /* a stream serves this many calls from its server */
#define TP_ARENA_BYTES       (256ull << 20) /* per port: its pools and the traffic's data */

/* What each call does. */
enum tp_mode {
	TP_MODE_NULL,
	TP_MODE_ECHO,
	TP_MODE_WRITE,
	TP_MODE_READ,
	TP_MODE_MIXED,
	TP_MODE_CALLBACK
};

/* Calls back the server makes for each CALLBACK of the callback engine (RFC 8167). */
#define TP_CB_COUNT 8u

/* How the data of ECHO, WRITE and READ moves. */
enum tp_chunk {
	TP_CHUNK_INLINE, /* in the Sends (the size must fit) */
	TP_CHUNK_READ,   /* arguments' data in read chunks, results inline if they fit */
	TP_CHUNK_WRITE,  /* results' data in write chunks, arguments inline if they fit */
	TP_CHUNK_REPLY,  /* results in a reply chunk, arguments inline if they fit */
};

/* Settings (`set ...`): copied into a stream when its traffic starts. */
struct tp_cfg {
	enum tp_mode mode;
	uint32_t size;        /* bytes of data per ECHO/WRITE/READ */
	uint32_t outstanding; /* calls kept in flight per connection */
	enum tp_chunk chunk;
	uint32_t credits;     /* clients ask, servers grant at most */
	uint32_t inline_size; /* inline threshold both ways (0: the engine's default) */
	uint32_t rdma_vers;   /* RPC-over-RDMA version: clients ask it, servers serve it (and 1) */
};

#define TP_OK (-1) /* a call that did what it should (not an index of errors[]) */

/* Ways a call can fail (the counters of `show stats`). */
enum tp_err {
	TP_ERR_TIMEOUT, /* -ETIMEDOUT */
	TP_ERR_CONN,    /* -ECONNRESET, -ECONNABORTED */
	TP_ERR_RDMA,    /* -EPROTO: RDMA_ERROR */
	TP_ERR_RPC,     /* -EREMOTEIO: the server refused the call */
	TP_ERR_BADMSG,  /* -EBADMSG */
	TP_ERR_VERIFY,  /* the data came back wrong */
	TP_ERR_SUBMIT,  /* rpcr_clnt_call() refused the call */
	TP_ERR_OTHER,
	TP_ERR_NUM,
};

extern const char *const tp_err_names[TP_ERR_NUM];

struct tp_port;
struct tp_stream;

/* One call in flight and the buffers it owns. */
struct tp_slot {
	struct rpcr_call call;
	struct tp_stream *st;
	uint8_t *arg; /* registered data sent (ECHO, WRITE) */
	uint8_t *res; /* registered destination of results (write chunks) */
	struct rpcr_mem_reg *arg_reg, *res_reg;
	struct rte_mbuf *arg_m, *res_m; /* the buffers as chains */
	struct rpcr_bulk ab, rb;
	/* Results. */
	uint32_t u32;                     /* WRITE's count */
	uint32_t read_len;                /* READ's argument */
	struct rpcr_testprog_cb_args cba; /* CALLBACK's arguments */
	struct rpcr_bulk got;             /* ECHO's, READ's data */
	int dec_rc;
	uint64_t t0;
};

/*
 * A traffic engine (like testpmd's forwarding engines): what a stream's calls are and how their
 * results are checked. Runs on the port's worker.
 */
struct tp_engine {
	const char *name;
	/* The procedure of the next call. */
	uint32_t (*next_proc)(struct tp_stream *st);
	/* Fill @sl's call for @proc. */
	void (*prepare)(struct tp_stream *st, struct tp_slot *sl, uint32_t proc);
	/* Check a completed call: TP_OK or a TP_ERR_*; @bytes gets the data moved. */
	int (*check)(struct tp_stream *st, struct tp_slot *sl, uint64_t *bytes);
};

extern const struct tp_engine *const tp_engines[];

/* Counters of a stream (written by its worker, read by the command line). */
struct tp_stream_stats {
	uint64_t calls; /* completed correctly */
	uint64_t bytes; /* data moved by them (both ways) */
	uint64_t errors[TP_ERR_NUM];
	uint64_t lat_sum_ns;
	uint64_t lat_max_ns;
};

/* A client connection and its traffic. */
struct tp_stream {
	uint32_t id;
	struct tp_port *port;
	char addr[108];
	struct rpcr_clnt *cl;
	struct tp_cfg cfg; /* as when started */
	const struct tp_engine *eng;
	struct rpcr_ulb ulb[4];
	struct tp_slot *slots;
	uint32_t nslots;
	uint32_t inflight;
	uint32_t turn; /* mixed: next procedure */
	volatile bool running;
	uint32_t consec_errors; /* calls in a row that failed */
	int last_status;        /* of the last failed call */
	struct tp_stream_stats stats;
	uint64_t started_tsc, stopped_tsc;
};

/* A device, its poller and what runs on it. */
struct tp_port {
	uint32_t id;
	char devargs[128];
	char name[32];
	unsigned int lcore;
	struct rpcr_rdev *dev;
	struct rpcr_mem_arena *arena;
	struct rpcr_mem_cache *mc;
	struct rpcr_xprt_poller *p;
	struct rpcr_svc *svc[TP_MAX_SERVERS];
	char svc_addr[TP_MAX_SERVERS][108];
	uint32_t nsvc;
};

/* The tool's state (main.c). */
struct tp_state {
	struct tp_cfg cfg;
	struct tp_port *ports[TP_MAX_PORTS];
	uint32_t nports;
	struct tp_stream *streams[TP_MAX_STREAMS];
	uint32_t nstreams;
	bool traffic; /* started */
	unsigned int workers[RTE_MAX_LCORE];
	uint32_t nworkers;
	uint32_t errors; /* commands that failed (non-interactive runs exit non-zero) */
};

extern struct tp_state tp;

/* Run @fn(@arg) on the worker owning @port and wait for it. @return its result, or -ETIMEDOUT. */
int tp_exec(const struct tp_port *port, int (*fn)(void *arg), void *arg);

/* main.c: give @port to a worker (tp_place()), start and stop polling it there. */
unsigned int tp_place(struct tp_port *port);
int tp_port_attach(struct tp_port *port);
int tp_port_detach(struct tp_port *port);

/* engines.c */
int tp_stream_start(struct tp_stream *st);    /* worker */
void tp_stream_stop(struct tp_stream *st);    /* worker: no new calls */
void tp_stream_release(struct tp_stream *st); /* worker: buffers back (nothing in flight) */

/* cmds.c */
int tp_cmds_init(void);
int tp_run_file(const char *path);
void tp_interact(void);
void tp_shutdown(void);

#endif /* RPCR_TESTPMD_H */
