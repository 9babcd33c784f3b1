/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PERF_H
#define RPCR_PERF_H

/*
 * rpcr-perf: what the files of the benchmark share. main.c parses the command line and runs the
 * roles; perf_rpcr.c is the rpcr client and server; perf_tirpc.c the libtirpc baseline; hist.c
 * the latency histogram; report.c the progress line, the table and the JSON file.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PERF_MAX_LIST   32  /* entries of a list option (sizes, outstanding, connections) */
#define PERF_MAX_POINTS 512 /* measurement points of one run */
#define PERF_MAX_SIZE   (256u << 20) /* largest data item (the test program serves this much) */
#define PERF_MIN_CALLS  3u           /* a point runs until at least this many calls were counted */
#define PERF_ERR_LIMIT  100u         /* a point stops early after this many errors */
#define PERF_MAX_REPEAT 15u          /* runs of one point (--repeat) */

enum perf_role {
	PERF_ROLE_NONE = 0,
	PERF_ROLE_LOOPBACK, /* both sides, two pinned processes on this host */
	PERF_ROLE_SERVER,   /* serve the test program until interrupted */
	PERF_ROLE_CLIENT,   /* measure against a server started elsewhere */
};

/* Modes (bits of perf_conf::modes). */
#define PERF_MODE_LAT  0x1u /* round-trip histogram, one call at a time */
#define PERF_MODE_BW   0x2u /* bytes per second for ECHO, WRITE, READ over sizes */
#define PERF_MODE_RATE 0x4u /* NULL calls per second over outstanding calls and connections */
#define PERF_MODE_ALL  0x7u /* (what runs when none is named) */
#define PERF_MODE_CB   0x8u /* CALLBACK: the server calling the client back (RFC 8167), rpcr only */

/* The two implementations measured side by side. */
enum perf_impl {
	PERF_IMPL_RPCR = 0,
	PERF_IMPL_TIRPC, /* ONC RPC over TCP with libtirpc: the baseline */
	PERF_IMPL_NUM,
};

/* The test program (lib/xprt/testprog.c), the same for both implementations. */
#define PERF_PROG  0x2f5a0001u
#define PERF_VERS  1u
#define PERF_NULL  0u /* void -> void */
#define PERF_ECHO  1u /* opaque data<> -> opaque data<> */
#define PERF_WRITE 2u /* opaque data<> -> uint32 bytes */
#define PERF_READ  3u /* uint32 len -> opaque data<>, byte i = (i * 31 + 7) & 0xff */
/* (uint32 count, opaque data<>) -> uint32 verified: the server calls the client's ECHO of
 * 0x2f5a0003 count times over the same connection (rpcr only: RFC 8167's reverse direction). */
#define PERF_CALLBACK 4u

/* The READ pattern's byte @i (the same as rpcr_testprog_byte()). */
static inline uint8_t
perf_pattern_byte(uint64_t i)
{
	return (uint8_t)((i * 31 + 7) & 0xff);
}

/* The pattern repeats every 256 bytes: a buffer of this many bytes holds any stretch of up to
 * 64 KiB (an mbuf's data) starting at offset (i & 255). */
#define PERF_PATTERN_LEN (65536u + 256u)

/* Everything the command line sets. */
struct perf_conf {
	enum perf_role role;
	unsigned int modes;            /* PERF_MODE_* */
	const char *devargs;           /* rpcr device ("shm") */
	char addr[108];                /* rpcr server address */
	double seconds;                /* measured time per point */
	double warmup;                 /* unmeasured time before it */
	uint32_t sizes[PERF_MAX_LIST]; /* bw: data sizes */
	uint32_t nsizes;
	uint32_t lat_sizes[PERF_MAX_LIST]; /* lat: ECHO sizes after NULL */
	uint32_t nlat_sizes;
	uint32_t procs[3]; /* bw: procedures */
	uint32_t nprocs;
	uint32_t outstanding[PERF_MAX_LIST]; /* rate: calls outstanding per connection */
	uint32_t noutstanding;
	uint32_t conns[PERF_MAX_LIST]; /* rate: connections */
	uint32_t nconns;
	uint32_t bw_outstanding; /* bw: calls outstanding (one connection) */
	uint32_t threshold;      /* DDP threshold of the test program's data */
	uint32_t inline_size;    /* inline send and receive size of rpcr clients and servers */
	uint32_t credits;        /* rpcr server: most credits granted per connection */
	uint32_t max_conns;      /* rpcr server: connections (server role) */
	bool baseline;           /* measure libtirpc too */
	bool baseline_set;       /* --baseline was given */
	char tirpc_host[64];     /* where the libtirpc server listens */
	uint16_t tirpc_port;
	int client_lcore;   /* loopback: the client's lcore (and CPU) */
	int server_lcore;   /* loopback: the server's */
	uint32_t repeat;    /* runs per point; the median is reported */
	bool verify;        /* check every result */
	bool reg_per_call;  /* register chunks per call even with memory windows */
	int poll_mode;      /* enum rpcr_xprt_poll_mode of both sides' pollers (default busy) */
	uint32_t idle_us;   /* adaptive: rpcr_xprt_poller_conf::idle_us (0: its default) */
	uint32_t rdma_vers; /* RPC-over-RDMA version: clients ask it, servers serve it (and 1) */
	uint32_t cont_max;  /* version 2: rpcr_clnt_conf::cont_max (0: its default) */
	const char *pcap;   /* capture into this pcapng file (loopback: the server's beside) */
	bool quiet;         /* no progress line */
	bool tty;           /* stdout is a terminal: progress line on */
	const char *json;   /* write the results here */
	/* EAL arguments the user gave (before "--"), or none: the defaults. */
	int eal_argc;
	char **eal_argv;
};

/* Quantiles kept for the CDF of the JSON file (rpcr-plot draws it). */
#define PERF_CDF_POINTS 106
extern const double perf_cdf_q[PERF_CDF_POINTS];

/* A measured latency distribution, in microseconds. */
struct perf_lat {
	double min, p50, p90, p99, p999, max, mean;
	double cdf[PERF_CDF_POINTS]; /* the value at each perf_cdf_q[] */
};

/* What one implementation measured at one point. */
struct perf_result {
	bool run;               /* measured (false: not run, or no baseline) */
	uint64_t calls;         /* calls completed inside the measured window */
	double seconds;         /* time they are divided by */
	uint64_t bytes;         /* data bytes of those calls (one way) */
	uint64_t errors;        /* failed calls (whole point: warm-up and drain too) */
	uint64_t verify_errors; /* results that were wrong */
	uint32_t threads;       /* tirpc: client threads, one connection each */
	bool has_lat;
	struct perf_lat lat;
	char first_error[160]; /* the first failure, for the report */
};

/* One measurement point: a mode and its parameters, and both implementations' results. */
struct perf_point {
	unsigned int mode; /* PERF_MODE_* (one bit) */
	uint32_t proc;     /* PERF_NULL ... PERF_READ */
	uint32_t size;     /* data bytes (ECHO, WRITE, READ) */
	uint32_t conns;    /* connections */
	uint32_t depth;    /* calls outstanding per connection */
	/* The median run of each implementation, with the errors of every run. */
	struct perf_result res[PERF_IMPL_NUM];
	double ratio; /* how many times better rpcr is (median over runs); 0: no baseline */
	/* Every run's figure (p50 in microseconds for lat, else calls per second) and ratio. */
	uint32_t nruns;
	double runs[PERF_IMPL_NUM][PERF_MAX_REPEAT];
	double run_ratios[PERF_MAX_REPEAT];
};

/* rpcr server statistics passed back to the client in loopback (for the JSON file). */
struct perf_srv_stats {
	bool valid;
	uint64_t calls_recv, replies_sent, bytes_sent, bytes_recv, rdma_errors_sent, wc_errors,
		bad_headers, overruns;
};

/* rpcr client counters (rpcr_xprt_stats of its poller), for the JSON file. */
struct perf_clnt_stats {
	bool valid;
	uint64_t calls_sent, replies_recv, credit_waits, retransmits, reconnects, timeouts,
		wc_errors, rdma_errors_recv, unmatched, bad_headers;
};

/* ---- hist.c: log-linear histogram, about 1.6 % wide buckets ---- */

#define PERF_HIST_SUB     64u
#define PERF_HIST_BUCKETS (2 * PERF_HIST_SUB + 57 * PERF_HIST_SUB)

struct perf_hist {
	uint64_t n, min, max, sum; /* in the caller's units (TSC cycles) */
	uint64_t counts[PERF_HIST_BUCKETS];
};

void perf_hist_reset(struct perf_hist *h);
void perf_hist_add(struct perf_hist *h, uint64_t v);
void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src);
/* The value at quantile @q (0..1): the midpoint of its bucket, within [min, max]. */
uint64_t perf_hist_quantile(const struct perf_hist *h, double q);
/* Fill @lat from @h, whose values are TSC cycles at @hz. */
void perf_hist_lat(const struct perf_hist *h, uint64_t hz, struct perf_lat *lat);

/* ---- report.c ---- */

extern const char *const perf_impl_name[PERF_IMPL_NUM];
const char *perf_proc_name(uint32_t proc);
const char *perf_mode_name(unsigned int mode);
/* "16M", "4K", "100": a size as the command line takes it. */
const char *perf_size_str(uint32_t size, char *buf, size_t len);

/* The live progress line (stdout a terminal, not --quiet): at most ten updates a second. */
void perf_progress(const struct perf_conf *c, const struct perf_point *pt, int impl, uint64_t calls,
		   uint64_t bytes, double seconds, uint64_t errors);
/* Erase the progress line (before other output). */
void perf_progress_clear(void);

/* Set while the run is going; main.c's SIGINT handler clears it. */
extern volatile int perf_running;

void perf_report_print(FILE *f, const struct perf_conf *c, const struct perf_point *pts,
		       uint32_t npts, double elapsed);
int perf_json_write(const char *path, const struct perf_conf *c, const struct perf_point *pts,
		    uint32_t npts, const struct perf_srv_stats *srv,
		    const struct perf_clnt_stats *cli, double elapsed, bool complete);
/* The figure a run is ranked by: p50 in microseconds for lat, else calls per second. */
double perf_result_figure(unsigned int mode, const struct perf_result *r);
/* How many times better @a (rpcr) is than @b (the baseline) in one run: the baseline's latency
 * over rpcr's, or rpcr's rate over the baseline's; 0 when either is missing. */
double perf_ratio(unsigned int mode, const struct perf_result *a, const struct perf_result *b);
/* Totals over every point. */
void perf_totals(const struct perf_point *pts, uint32_t npts, uint64_t *errors,
		 uint64_t *verify_errors);

/* Note a failure in @r (the first one's text is kept) and count it. */
void perf_result_error(struct perf_result *r, bool verify, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- perf_rpcr.c ---- */

struct perf_rpcr_client;

/* Open the device, make the arena, the poller and the data buffers (EAL initialised). */
struct perf_rpcr_client *perf_rpcr_client_open(const struct perf_conf *c,
					       const struct perf_point *pts, uint32_t npts);
/* Measure one point (its res[PERF_IMPL_RPCR]). @return 0, or -1 when the client is unusable. */
int perf_rpcr_run(struct perf_rpcr_client *pc, struct perf_point *pt);
/* Read the client's counters. */
void perf_rpcr_client_stats(struct perf_rpcr_client *pc, struct perf_clnt_stats *st);
void perf_rpcr_client_close(struct perf_rpcr_client *pc);
/* Watch a server process (loopback): a point ends with an error if it dies. */
void perf_rpcr_client_watch(struct perf_rpcr_client *pc, pid_t server);

/*
 * Serve the test program at c->addr until interrupted (SIGINT, SIGTERM) or, with a control
 * socket @ctl (loopback), until told to stop. @return 0 or 1.
 */
/* --pcap: start capturing this process's pollers (@p server: the server's file). */
int perf_capture_start(const struct perf_conf *c, bool server);
/* ... and stop, reporting what was captured. */
void perf_capture_stop(const struct perf_conf *c, bool server);
int perf_rpcr_server(const struct perf_conf *c, int ctl, uint32_t conns, uint32_t outstanding,
		     uint32_t max_size);

/* Control messages between the loopback client and its server (SOCK_SEQPACKET). */
enum perf_ctl_tag {
	PERF_CTL_READY = 1, /* server -> client: listening */
	PERF_CTL_PAUSE,     /* client -> server: stop polling hard (the baseline runs) */
	PERF_CTL_RESUME,    /* client -> server: poll again */
	PERF_CTL_STOP,      /* client -> server: exit; answered with PERF_CTL_STATS */
	PERF_CTL_STATS,     /* server -> client: v[] = struct perf_srv_stats counters */
	PERF_CTL_ACK,       /* server -> client: PAUSE or RESUME done */
};

struct perf_ctl_msg {
	uint32_t tag;
	uint32_t n;
	uint64_t v[8];
};

int perf_ctl_send(int fd, uint32_t tag, const uint64_t *v, uint32_t n);
/* Wait up to @ms for a message. @return 0, -ETIMEDOUT, -EPIPE (the peer is gone). */
int perf_ctl_recv(int fd, struct perf_ctl_msg *m, int ms);

/* ---- perf_tirpc.c ---- */

/* Whether the baseline was built (libtirpc found). */
bool perf_tirpc_available(void);
/*
 * Fork the libtirpc server (before the EAL exists): it listens on c->tirpc_host, port
 * c->tirpc_port (0: any, *port says which), pinned to @cpu (-1: not pinned).
 * @return 0 or -errno.
 */
int perf_tirpc_server_start(const struct perf_conf *c, int cpu, pid_t *pid, uint16_t *port);
/* Measure one point (its res[PERF_IMPL_TIRPC]) against @port. @return 0 or -1. */
int perf_tirpc_run(const struct perf_conf *c, uint16_t port, struct perf_point *pt);

/* Monotonic seconds. */
double perf_now(void);

#endif /* RPCR_PERF_H */
