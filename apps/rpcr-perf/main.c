/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr-perf: the benchmark of rpcr, in the manner of perftest and eRPC's benchmarks. It calls
 * the engine's test program (0x2f5a0001 version 1: NULL, ECHO, WRITE, READ) and measures
 *
 *   lat    round trips one call at a time: min, p50, p90, p99, p99.9, max (microseconds)
 *   bw     data bytes per second of ECHO, WRITE and READ, from 0 bytes to 16 MiB (inline below
 *          the DDP threshold, in chunks from it)
 *   rate   NULL calls per second with 1..N calls outstanding on 1..N connections
 *
 * checking every result, against the same program over TCP with libtirpc (the baseline), and
 * prints both side by side with their ratio.
 *
 * Roles: `server` and `client` (two invocations, any device), or `--loopback`: both on this
 * host as two processes pinned to two CPUs over the shm driver, with the libtirpc server a third
 * process on the server's CPU. EAL arguments come first, DPDK-style:
 *
 *   rpcr-perf [EAL args] -- [--loopback | server | client] [lat] [bw] [rate] [options]
 *
 * and default to a set that needs no hugepages and no shared configuration.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <rpcr_xprt.h>

#include "perf.h"

#define PERF_TIRPC_PORT 20490 /* the baseline's port in the server and client roles */
#define READY_TIMEOUT   30000 /* ms the loopback client waits for its server */

/* The EAL arguments actually used by this process (for the JSON file). */
static char *eal_used[128];

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: rpcr-perf [EAL args --] ROLE [MODE ...] [options]\n"
		"\n"
		"Benchmark rpcr with its test program (0x2f5a0001 v1: NULL, ECHO, WRITE, READ),\n"
		"against the same program over TCP with libtirpc.\n"
		"\n"
		"ROLE:  --loopback   server and client on this host, two processes pinned to two\n"
		"                    CPUs, over shm; the libtirpc baseline too\n"
		"       server       serve the test program at --addr until Ctrl-C\n"
		"       client       measure against a server at --addr\n"
		"MODE:  lat | bw | rate   (default: all three; or --mode LIST)\n"
		"       callback          CALLBACK: the server calls the client back over its\n"
		"                         connection (RFC 8167); rpcr only, --outstanding LIST\n"
		"\n"
		"  -d, --dev DEVARGS        rpcr device (default shm)\n"
		"  -a, --addr ADDR          server address (default rpcr-perf; loopback: a unique "
		"name)\n"
		"  -s, --seconds S          measured time per point (default 0.5)\n"
		"  -w, --warmup S           unmeasured time before each point (default 0.1)\n"
		"  -r, --repeat N           measure each point N times (rpcr and the baseline in\n"
		"                           turn), report the median (default 1; up to %u)\n"
		"  -L, --lat-sizes LIST     lat: ECHO sizes measured after NULL (default 64,4K;\n"
		"                           \"\" for NULL only)\n"
		"  -S, --sizes LIST         bw: data sizes (default 0,64,1K,4K,64K,1M,16M; K, M "
		"suffixes\n"
		"                           are binary)\n"
		"  -p, --procs LIST         bw: procedures (default echo,write,read)\n"
		"  -O, --bw-outstanding N   bw: calls outstanding (default 1)\n"
		"  -o, --outstanding LIST   rate: calls outstanding per connection (default "
		"1,4,16)\n"
		"  -c, --conns LIST         rate: connections (default 1,4)\n"
		"  -t, --threshold N        DDP threshold: data of N bytes or more goes in chunks\n"
		"                           (default 1024; give the server the same)\n"
		"  -i, --inline N           inline send and receive size (default 4096)\n"
		"      --credits N          server: credits granted per connection (default 128)\n"
		"      --max-conns N        server: connections (default 16)\n"
		"  -b, --baseline NAME      tirpc or none (default: tirpc with --loopback, else "
		"none)\n"
		"      --tirpc-host HOST    libtirpc server address (default 127.0.0.1)\n"
		"      --tirpc-port PORT    its TCP port (default %d; loopback: any free one)\n"
		"      --client-lcore N     loopback: client lcore and CPU (default 0)\n"
		"      --server-lcore N     loopback: server lcore and CPU (default 1)\n"
		"      --no-verify          do not check results\n"
		"      --poll-mode MODE     both sides' pollers: busy (default), adaptive (sleep\n"
		"                           when idle) or interrupt (doc/xprt.md \"Poll modes\")\n"
		"      --idle-us N          adaptive: idle this long before sleeping (default "
		"500)\n"
		"      --pcap FILE          capture rpcr's messages into FILE (pcapng, RoCEv2 "
		"frames;\n"
		"                           loopback: the server's with -server before the "
		"extension)\n"
		"      --reg-per-call       register chunk memory per call even where the device\n"
		"                           has memory windows (the default there: bound by work\n"
		"                           request, no system call per call)\n"
		"      --rpcrdma-version N  1 (default) or 2: clients ask RPC-over-RDMA version "
		"N,\n"
		"                           servers serve it beside 1 (give it to both processes)\n"
		"      --cont-max N|none    version 2: calls and replies up to N bytes that need\n"
		"                           more than one Send go as a continuation (several\n"
		"                           Sends) rather than through a chunk (default 16K; "
		"none:\n"
		"                           never)\n"
		"  -j, --json FILE          write every figure and the configuration as JSON\n"
		"  -q, --quiet              no progress line\n"
		"  -h, --help               this text\n"
		"\n"
		"Default EAL args: --no-huge --no-pci --no-shconf --no-telemetry --iova-mode=va\n"
		"--log-level=error -l LCORE. Given EAL args are used as they are, with -l LCORE "
		"added\n"
		"when they choose no lcores (and, with --loopback, a --file-prefix per process "
		"when\n"
		"they have none of --no-shconf, --in-memory, --file-prefix).\n"
		"\n"
		"Exit status: 0 all measured and verified; 1 a call failed, a result was wrong or "
		"a\n"
		"point could not be measured; 2 usage.\n",
		PERF_MAX_REPEAT, PERF_TIRPC_PORT);
}

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	perf_running = 0;
}

/* 64, 4K, 4KiB, 1M, 16MiB (binary suffixes). */
static int
parse_size(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		n <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		n <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		n <<= 30, end++;
	if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0 || strcmp(end, "b") == 0)
		end += strlen(end);
	if (*end != '\0' || n > PERF_MAX_SIZE)
		return -EINVAL;
	*v = (uint32_t)n;
	return 0;
}

static int
parse_list(const char *s, uint32_t *out, uint32_t max, uint32_t *n, uint32_t lo, uint32_t hi)
{
	char buf[512], *tok, *save = NULL;

	*n = 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;

		if (*n == max || parse_size(tok, &v) != 0 || v < lo || v > hi)
			return -EINVAL;
		out[(*n)++] = v;
	}
	return 0;
}

static int
parse_procs(const char *s, struct perf_conf *c)
{
	char buf[128], *tok, *save = NULL;

	c->nprocs = 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		uint32_t p;

		if (strcasecmp(tok, "echo") == 0)
			p = PERF_ECHO;
		else if (strcasecmp(tok, "write") == 0)
			p = PERF_WRITE;
		else if (strcasecmp(tok, "read") == 0)
			p = PERF_READ;
		else
			return -EINVAL;
		if (c->nprocs == RTE_DIM(c->procs))
			return -EINVAL;
		c->procs[c->nprocs++] = p;
	}
	return c->nprocs != 0 ? 0 : -EINVAL;
}

static int
mode_of(const char *s)
{
	if (strcmp(s, "lat") == 0)
		return PERF_MODE_LAT;
	if (strcmp(s, "bw") == 0)
		return PERF_MODE_BW;
	if (strcmp(s, "rate") == 0)
		return PERF_MODE_RATE;
	if (strcmp(s, "callback") == 0)
		return PERF_MODE_CB;
	return 0;
}

static int
parse_modes(const char *s, unsigned int *modes)
{
	char buf[64], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int m = mode_of(tok);

		if (m == 0)
			return -EINVAL;
		*modes |= (unsigned int)m;
	}
	return 0;
}

static int
parse_int(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 0);
	return errno == 0 && end != s && *end == '\0' && *v >= lo && *v <= hi ? 0 : -EINVAL;
}

static int
parse_double(const char *s, double lo, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && *v >= lo && *v < 1e6 ? 0 : -EINVAL;
}

enum {
	OPT_CREDITS = 256,
	OPT_MAX_CONNS,
	OPT_TIRPC_HOST,
	OPT_TIRPC_PORT,
	OPT_CLIENT_LCORE,
	OPT_SERVER_LCORE,
	OPT_NO_VERIFY,
	OPT_REG_PER_CALL,
	OPT_RDMA_VERS,
	OPT_CONT_MAX,
	OPT_POLL_MODE,
	OPT_IDLE_US,
	OPT_PCAP,
};

static void
conf_defaults(struct perf_conf *c)
{
	static const uint32_t sizes[] = {0, 64, 1024, 4096, 65536, 1u << 20, 16u << 20};
	static const uint32_t lat_sizes[] = {64, 4096};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(c, 0, sizeof(*c));
	c->devargs = "shm";
	c->seconds = 0.5;
	c->warmup = 0.1;
	c->repeat = 1;
	memcpy(c->sizes, sizes, sizeof(sizes));
	c->nsizes = RTE_DIM(sizes);
	memcpy(c->lat_sizes, lat_sizes, sizeof(lat_sizes));
	c->nlat_sizes = RTE_DIM(lat_sizes);
	c->procs[0] = PERF_ECHO;
	c->procs[1] = PERF_WRITE;
	c->procs[2] = PERF_READ;
	c->nprocs = 3;
	c->outstanding[0] = 1;
	c->outstanding[1] = 4;
	c->outstanding[2] = 16;
	c->noutstanding = 3;
	c->conns[0] = 1;
	c->conns[1] = 4;
	c->nconns = 2;
	c->bw_outstanding = 1;
	c->threshold = 1024;
	c->inline_size = 4096;
	c->credits = 128;
	c->max_conns = 16;
	snprintf(c->tirpc_host, sizeof(c->tirpc_host), "127.0.0.1");
	c->tirpc_port = PERF_TIRPC_PORT;
	c->client_lcore = 0;
	c->server_lcore = ncpu > 1 ? 1 : 0;
	c->verify = true;
	c->rdma_vers = 1;
}

/* Parse the application's arguments (after "--", or all of them). @return 0, 1 (help), -1. */
static int
parse_args(struct perf_conf *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"loopback", no_argument, NULL, 'l'},
		{"mode", required_argument, NULL, 'm'},
		{"dev", required_argument, NULL, 'd'},
		{"addr", required_argument, NULL, 'a'},
		{"seconds", required_argument, NULL, 's'},
		{"warmup", required_argument, NULL, 'w'},
		{"repeat", required_argument, NULL, 'r'},
		{"lat-sizes", required_argument, NULL, 'L'},
		{"sizes", required_argument, NULL, 'S'},
		{"procs", required_argument, NULL, 'p'},
		{"bw-outstanding", required_argument, NULL, 'O'},
		{"outstanding", required_argument, NULL, 'o'},
		{"conns", required_argument, NULL, 'c'},
		{"threshold", required_argument, NULL, 't'},
		{"inline", required_argument, NULL, 'i'},
		{"credits", required_argument, NULL, OPT_CREDITS},
		{"max-conns", required_argument, NULL, OPT_MAX_CONNS},
		{"baseline", required_argument, NULL, 'b'},
		{"tirpc-host", required_argument, NULL, OPT_TIRPC_HOST},
		{"tirpc-port", required_argument, NULL, OPT_TIRPC_PORT},
		{"client-lcore", required_argument, NULL, OPT_CLIENT_LCORE},
		{"server-lcore", required_argument, NULL, OPT_SERVER_LCORE},
		{"no-verify", no_argument, NULL, OPT_NO_VERIFY},
		{"reg-per-call", no_argument, NULL, OPT_REG_PER_CALL},
		{"rpcrdma-version", required_argument, NULL, OPT_RDMA_VERS},
		{"cont-max", required_argument, NULL, OPT_CONT_MAX},
		{"poll-mode", required_argument, NULL, OPT_POLL_MODE},
		{"idle-us", required_argument, NULL, OPT_IDLE_US},
		{"pcap", required_argument, NULL, OPT_PCAP},
		{"json", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool addr_set = false, port_set = false;
	const char *bad = NULL;
	long v;
	int opt, i;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "lm:d:a:s:w:r:L:S:p:O:o:c:t:i:b:j:qh", opts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'l':
			c->role = PERF_ROLE_LOOPBACK;
			break;
		case 'm':
			if (parse_modes(optarg, &c->modes) != 0)
				bad = "--mode";
			break;
		case 'd':
			c->devargs = optarg;
			break;
		case 'a':
			if (strlen(optarg) >= sizeof(c->addr))
				bad = "--addr";
			else
				memcpy(c->addr, optarg, strlen(optarg) + 1);
			addr_set = true;
			break;
		case 's':
			if (parse_double(optarg, 0.001, &c->seconds) != 0)
				bad = "--seconds";
			break;
		case 'w':
			if (parse_double(optarg, 0, &c->warmup) != 0)
				bad = "--warmup";
			break;
		case 'r':
			if (parse_int(optarg, 1, PERF_MAX_REPEAT, &v) != 0)
				bad = "--repeat";
			c->repeat = (uint32_t)v;
			break;
		case 'L':
			if (parse_list(optarg, c->lat_sizes, PERF_MAX_LIST, &c->nlat_sizes, 0,
				       PERF_MAX_SIZE) != 0)
				bad = "--lat-sizes";
			break;
		case 'S':
			if (parse_list(optarg, c->sizes, PERF_MAX_LIST, &c->nsizes, 0,
				       PERF_MAX_SIZE) != 0 ||
			    c->nsizes == 0)
				bad = "--sizes";
			break;
		case 'p':
			if (parse_procs(optarg, c) != 0)
				bad = "--procs";
			break;
		case 'O':
			if (parse_int(optarg, 1, 64, &v) != 0)
				bad = "--bw-outstanding (1..64)";
			c->bw_outstanding = (uint32_t)v;
			break;
		case 'o':
			if (parse_list(optarg, c->outstanding, PERF_MAX_LIST, &c->noutstanding, 1,
				       1024) != 0 ||
			    c->noutstanding == 0)
				bad = "--outstanding (1..1024 each)";
			break;
		case 'c':
			if (parse_list(optarg, c->conns, PERF_MAX_LIST, &c->nconns, 1, 256) != 0 ||
			    c->nconns == 0)
				bad = "--conns (1..256 each)";
			break;
		case 't':
			if (parse_int(optarg, 1, PERF_MAX_SIZE, &v) != 0)
				bad = "--threshold";
			c->threshold = (uint32_t)v;
			break;
		case 'i':
			if (parse_int(optarg, 1024, 8192, &v) != 0)
				bad = "--inline (1024..8192)";
			c->inline_size = (uint32_t)v;
			break;
		case OPT_CREDITS:
			if (parse_int(optarg, 1, 1024, &v) != 0)
				bad = "--credits (1..1024)";
			c->credits = (uint32_t)v;
			break;
		case OPT_MAX_CONNS:
			if (parse_int(optarg, 1, 1024, &v) != 0)
				bad = "--max-conns (1..1024)";
			c->max_conns = (uint32_t)v;
			break;
		case 'b':
			if (strcmp(optarg, "tirpc") == 0)
				c->baseline = true;
			else if (strcmp(optarg, "none") == 0)
				c->baseline = false;
			else
				bad = "--baseline (tirpc or none)";
			c->baseline_set = true;
			break;
		case OPT_TIRPC_HOST:
			if (strlen(optarg) >= sizeof(c->tirpc_host))
				bad = "--tirpc-host";
			else
				memcpy(c->tirpc_host, optarg, strlen(optarg) + 1);
			break;
		case OPT_TIRPC_PORT:
			if (parse_int(optarg, 1, 65535, &v) != 0)
				bad = "--tirpc-port";
			c->tirpc_port = (uint16_t)v;
			port_set = true;
			break;
		case OPT_CLIENT_LCORE:
			if (parse_int(optarg, 0, RTE_MAX_LCORE - 1, &v) != 0)
				bad = "--client-lcore";
			c->client_lcore = (int)v;
			break;
		case OPT_SERVER_LCORE:
			if (parse_int(optarg, 0, RTE_MAX_LCORE - 1, &v) != 0)
				bad = "--server-lcore";
			c->server_lcore = (int)v;
			break;
		case OPT_NO_VERIFY:
			c->verify = false;
			break;
		case OPT_REG_PER_CALL:
			c->reg_per_call = true;
			break;
		case OPT_POLL_MODE:
			c->poll_mode = rpcr_xprt_poll_mode_parse(optarg);
			if (c->poll_mode < 0)
				bad = "--poll-mode (busy, adaptive or interrupt)";
			break;
		case OPT_IDLE_US:
			if (parse_int(optarg, 1, 10000000, &v) != 0)
				bad = "--idle-us";
			c->idle_us = (uint32_t)v;
			break;
		case OPT_PCAP:
			c->pcap = optarg;
			break;
		case OPT_RDMA_VERS:
			if (parse_int(optarg, 1, 2, &v) != 0)
				bad = "--rpcrdma-version (1 or 2)";
			c->rdma_vers = (uint32_t)v;
			break;
		case OPT_CONT_MAX:
			if (strcmp(optarg, "none") == 0)
				c->cont_max = RPCR_XPRT_NO_CONT;
			else if (parse_size(optarg, &c->cont_max) != 0 || c->cont_max == 0)
				bad = "--cont-max (bytes, or none)";
			break;
		case 'j':
			c->json = optarg;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -1;
		}
		if (bad != NULL) {
			fprintf(stderr, "rpcr-perf: bad value for %s: '%s'\n", bad, optarg);
			return -1;
		}
	}
	for (i = optind; i < argc; i++) {
		int m = mode_of(argv[i]);

		if (m != 0) {
			c->modes |= (unsigned int)m;
		} else if (strcmp(argv[i], "server") == 0 && c->role == PERF_ROLE_NONE) {
			c->role = PERF_ROLE_SERVER;
		} else if (strcmp(argv[i], "client") == 0 && c->role == PERF_ROLE_NONE) {
			c->role = PERF_ROLE_CLIENT;
		} else if (strcmp(argv[i], "loopback") == 0 && c->role == PERF_ROLE_NONE) {
			c->role = PERF_ROLE_LOOPBACK;
		} else {
			fprintf(stderr, "rpcr-perf: unexpected argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (c->role == PERF_ROLE_NONE) {
		fprintf(stderr, "rpcr-perf: say --loopback, server or client (--help)\n");
		return -1;
	}
	if (c->modes == 0)
		c->modes = PERF_MODE_ALL;
	if (c->rdma_vers == 2 && c->inline_size < 4096) {
		/* (Version 2's peers may send 4096 bytes inline: §4.2.3.1.) */
		fprintf(stderr, "rpcr-perf: --rpcrdma-version 2 needs --inline 4096 or more\n");
		return -1;
	}
	if (!c->baseline_set)
		c->baseline = c->role == PERF_ROLE_LOOPBACK && perf_tirpc_available();
	if (c->baseline && !perf_tirpc_available()) {
		fprintf(stderr, "rpcr-perf: built without libtirpc: no baseline\n");
		return -1;
	}
	if (c->role == PERF_ROLE_LOOPBACK) {
		if (!addr_set)
			snprintf(c->addr, sizeof(c->addr), "rpcr-perf-%d", (int)getpid());
		if (!port_set)
			c->tirpc_port = 0;
		if (c->client_lcore == c->server_lcore)
			fprintf(stderr,
				"rpcr-perf: warning: client and server share lcore %d: "
				"figures will be poor\n",
				c->client_lcore);
	} else if (!addr_set) {
		snprintf(c->addr, sizeof(c->addr), "rpcr-perf");
	}
	return 0;
}

/* Whether the user's EAL arguments contain an option starting with one of @names. */
static bool
eal_has(const struct perf_conf *c, const char *const *names)
{
	int i, k;

	for (i = 0; i < c->eal_argc; i++)
		for (k = 0; names[k] != NULL; k++)
			if (strncmp(c->eal_argv[i], names[k], strlen(names[k])) == 0)
				return true;
	return false;
}

/* Initialise the EAL of this process on @lcore (see usage() for the arguments). */
static int
eal_start(struct perf_conf *c, int lcore, const char *tag)
{
	static const char *const defaults[] = {"--no-huge",      "--no-pci",
					       "--no-shconf",    "--no-telemetry",
					       "--iova-mode=va", "--log-level=error"};
	static const char *const lcore_opts[] = {"-l", "-c", "--lcores", NULL};
	static const char *const prefix_opts[] = {"--no-shconf", "--in-memory", "--file-prefix",
						  NULL};
	char buf[64];
	int n = 0, i;

	eal_used[n++] = strdup("rpcr-perf");
	if (c->eal_argc == 0) {
		for (i = 0; i < (int)RTE_DIM(defaults); i++)
			eal_used[n++] = strdup(defaults[i]);
	} else {
		if (c->eal_argc > (int)RTE_DIM(eal_used) - 8) {
			fprintf(stderr, "rpcr-perf: too many EAL arguments\n");
			return -1;
		}
		for (i = 0; i < c->eal_argc; i++)
			eal_used[n++] = strdup(c->eal_argv[i]);
	}
	if (c->eal_argc == 0 || !eal_has(c, lcore_opts)) {
		eal_used[n++] = strdup("-l");
		snprintf(buf, sizeof(buf), "%d", lcore);
		eal_used[n++] = strdup(buf);
	}
	if (c->eal_argc != 0 && c->role == PERF_ROLE_LOOPBACK && !eal_has(c, prefix_opts)) {
		snprintf(buf, sizeof(buf), "--file-prefix=rpcr-perf-%d-%s", (int)getpid(), tag);
		eal_used[n++] = strdup(buf);
	}
	for (i = 0; i < n; i++) {
		if (eal_used[i] == NULL) {
			fprintf(stderr, "rpcr-perf: out of memory\n");
			return -1;
		}
	}
	/* rte_eal_init() may reorder its vector: give it a copy, keep ours for the report. */
	{
		char *argv[RTE_DIM(eal_used) + 1];

		memcpy(argv, eal_used, sizeof(char *) * (size_t)n);
		argv[n] = NULL;
		if (rte_eal_init(n, argv) < 0) {
			fprintf(stderr, "rpcr-perf: EAL initialisation failed (%s): %s\n", tag,
				rte_strerror(rte_errno));
			return -1;
		}
	}
	/* The JSON file shows the arguments without the program name. */
	c->eal_argc = n - 1;
	c->eal_argv = &eal_used[1];
	return 0;
}

static int
add_point(struct perf_point *pts, uint32_t *n, unsigned int mode, uint32_t proc, uint32_t size,
	  uint32_t conns, uint32_t depth)
{
	if (*n == PERF_MAX_POINTS) {
		fprintf(stderr, "rpcr-perf: more than %d points\n", PERF_MAX_POINTS);
		return -1;
	}
	memset(&pts[*n], 0, sizeof(pts[*n]));
	pts[*n].mode = mode;
	pts[*n].proc = proc;
	pts[*n].size = size;
	pts[*n].conns = conns;
	pts[*n].depth = depth;
	(*n)++;
	return 0;
}

static int
build_points(const struct perf_conf *c, struct perf_point *pts, uint32_t *n)
{
	uint32_t i, k;
	int rc = 0;

	*n = 0;
	if (c->modes & PERF_MODE_LAT) {
		rc |= add_point(pts, n, PERF_MODE_LAT, PERF_NULL, 0, 1, 1);
		for (i = 0; i < c->nlat_sizes; i++)
			rc |= add_point(pts, n, PERF_MODE_LAT, PERF_ECHO, c->lat_sizes[i], 1, 1);
	}
	if (c->modes & PERF_MODE_BW)
		for (k = 0; k < c->nprocs; k++)
			for (i = 0; i < c->nsizes; i++)
				rc |= add_point(pts, n, PERF_MODE_BW, c->procs[k], c->sizes[i], 1,
						c->bw_outstanding);
	if (c->modes & PERF_MODE_RATE)
		for (k = 0; k < c->nconns; k++)
			for (i = 0; i < c->noutstanding; i++)
				rc |= add_point(pts, n, PERF_MODE_RATE, PERF_NULL, 0, c->conns[k],
						c->outstanding[i]);
	/* CALLBACK with one call back each, one connection, --outstanding at a time. */
	if (c->modes & PERF_MODE_CB)
		for (i = 0; i < c->noutstanding; i++)
			rc |= add_point(pts, n, PERF_MODE_CB, PERF_CALLBACK, 0, 1,
					c->outstanding[i]);
	return rc;
}

/* What the server must be sized for, from the points. */
static void
points_needs(const struct perf_point *pts, uint32_t n, uint32_t *conns, uint32_t *depth,
	     uint32_t *data_calls, uint32_t *max_size)
{
	uint32_t i;

	*conns = *depth = *data_calls = 1;
	*max_size = 0;
	for (i = 0; i < n; i++) {
		*conns = RTE_MAX(*conns, pts[i].conns);
		*depth = RTE_MAX(*depth, pts[i].depth);
		if (pts[i].proc != PERF_NULL) {
			*data_calls = RTE_MAX(*data_calls, pts[i].conns * pts[i].depth);
			*max_size = RTE_MAX(*max_size, pts[i].size);
		}
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n values (the lower one of the middle two when @n is even). */
static double
median(const double *v, uint32_t n)
{
	double s[PERF_MAX_REPEAT];

	if (n == 0)
		return 0;
	memcpy(s, v, n * sizeof(v[0]));
	qsort(s, n, sizeof(s[0]), cmp_double);
	return s[(n - 1) / 2];
}

/*
 * Keep, for each implementation, its median run (by its figure: p50 for lat, calls per second
 * otherwise) as the point's result, with the errors of every run added up; the point's ratio is
 * the median of its runs' ratios.
 */
static void
combine(struct perf_point *pt, struct perf_result all[PERF_IMPL_NUM][PERF_MAX_REPEAT])
{
	uint32_t n = pt->nruns, rep;
	int k;

	for (rep = 0; rep < n; rep++) {
		pt->run_ratios[rep] =
			perf_ratio(pt->mode, &all[PERF_IMPL_RPCR][rep], &all[PERF_IMPL_TIRPC][rep]);
		for (k = 0; k < PERF_IMPL_NUM; k++)
			pt->runs[k][rep] = perf_result_figure(pt->mode, &all[k][rep]);
	}
	pt->ratio = median(pt->run_ratios, n);
	for (k = 0; k < PERF_IMPL_NUM && n != 0; k++) {
		double med = median(pt->runs[k], n);
		struct perf_result *r = &pt->res[k];
		uint64_t errors = 0, verify_errors = 0;
		const char *first = "";

		for (rep = 0; rep < n; rep++) {
			errors += all[k][rep].errors;
			verify_errors += all[k][rep].verify_errors;
			if (first[0] == '\0')
				first = all[k][rep].first_error;
		}
		for (rep = 0; rep < n && pt->runs[k][rep] != med; rep++)
			;
		*r = all[k][rep < n ? rep : 0];
		r->errors = errors;
		r->verify_errors = verify_errors;
		snprintf(r->first_error, sizeof(r->first_error), "%s", first);
	}
}

/* Measure every point (rpcr first, then the baseline while the rpcr server is paused).
 * @return whether every point was measured. */
static bool
measure(struct perf_conf *c, struct perf_rpcr_client *pc, int ctl, struct perf_point *pts,
	uint32_t npts)
{
	static struct perf_result all[PERF_IMPL_NUM][PERF_MAX_REPEAT];
	struct perf_ctl_msg m;
	bool dead = false;
	uint32_t i, rep;

	for (i = 0; i < npts && perf_running && !dead; i++) {
		struct perf_point *pt = &pts[i];

		/* rpcr, then the baseline while the rpcr server sleeps, and again: a ratio is
		 * always of two figures measured one right after the other. */
		for (rep = 0; rep < c->repeat && perf_running; rep++) {
			int rc = perf_rpcr_run(pc, pt);

			all[PERF_IMPL_RPCR][rep] = pt->res[PERF_IMPL_RPCR];
			memset(&all[PERF_IMPL_TIRPC][rep], 0, sizeof(all[0][0]));
			pt->nruns = rep + 1;
			if (rc != 0) {
				dead = true; /* no connection: the rest would fail the same way */
				break;
			}
			/* (libtirpc has no reverse direction: no baseline for CALLBACK.) */
			if (!c->baseline || pt->mode == PERF_MODE_CB || !perf_running)
				continue;
			if (ctl >= 0 &&
			    (perf_ctl_send(ctl, PERF_CTL_PAUSE, NULL, 0) != 0 ||
			     perf_ctl_recv(ctl, &m, 5000) != 0 || m.tag != PERF_CTL_ACK)) {
				fprintf(stderr, "rpcr-perf: the rpcr server does not answer\n");
				dead = true;
				break;
			}
			perf_tirpc_run(c, c->tirpc_port, pt);
			all[PERF_IMPL_TIRPC][rep] = pt->res[PERF_IMPL_TIRPC];
			if (ctl >= 0 &&
			    (perf_ctl_send(ctl, PERF_CTL_RESUME, NULL, 0) != 0 ||
			     perf_ctl_recv(ctl, &m, 5000) != 0 || m.tag != PERF_CTL_ACK)) {
				fprintf(stderr, "rpcr-perf: the rpcr server does not answer\n");
				dead = true;
				break;
			}
		}
		perf_progress_clear();
		combine(pt, all);
	}
	return i == npts && perf_running && !dead;
}

/* Print the table, write the JSON file; the exit status. */
static int
finish(const struct perf_conf *c, const struct perf_point *pts, uint32_t npts,
       const struct perf_srv_stats *srv, const struct perf_clnt_stats *cli, double t0,
       bool complete)
{
	double elapsed = perf_now() - t0;
	uint64_t errors, verify_errors;
	uint32_t i;
	int k;

	/* A point with no call counted measured nothing. */
	for (i = 0; i < npts; i++)
		for (k = 0; k < PERF_IMPL_NUM; k++)
			if (pts[i].res[k].run && pts[i].res[k].calls == 0)
				complete = false;
	perf_progress_clear();
	perf_report_print(stdout, c, pts, npts, elapsed);
	fflush(stdout);
	if (c->json != NULL &&
	    perf_json_write(c->json, c, pts, npts, srv, cli, elapsed, complete) != 0)
		return 1;
	perf_totals(pts, npts, &errors, &verify_errors);
	if (!complete)
		fprintf(stderr, "rpcr-perf: not every point was measured\n");
	return complete && errors == 0 && verify_errors == 0 ? 0 : 1;
}

static int
run_loopback(struct perf_conf *c, struct perf_point *pts, uint32_t npts)
{
	struct perf_srv_stats srv = {0};
	struct perf_clnt_stats cli = {0};
	struct perf_rpcr_client *pc = NULL;
	uint32_t conns, depth, data_calls, max_size;
	pid_t parent = getpid(), spid, tpid = -1;
	double t0 = perf_now();
	struct perf_ctl_msg m;
	bool complete = false;
	int sv[2], rc, status;

	points_needs(pts, npts, &conns, &depth, &data_calls, &max_size);
	c->credits = RTE_MAX(c->credits, depth);
	if (c->baseline) {
		uint16_t port;

		rc = perf_tirpc_server_start(c, c->server_lcore, &tpid, &port);
		if (rc != 0) {
			fprintf(stderr, "rpcr-perf: the libtirpc server did not start: %s\n",
				strerror(-rc));
			return 1;
		}
		c->tirpc_port = port;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		fprintf(stderr, "rpcr-perf: socketpair: %s\n", strerror(errno));
		goto out_tirpc;
	}
	fflush(NULL);
	spid = fork();
	if (spid < 0) {
		fprintf(stderr, "rpcr-perf: fork: %s\n", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto out_tirpc;
	}
	if (spid == 0) {
		/* The rpcr server: ends when the client says so, or with it. */
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		signal(SIGINT, SIG_IGN);
		if (eal_start(c, c->server_lcore, "server") != 0)
			_exit(1);
		rc = perf_rpcr_server(c, sv[1], conns, data_calls, max_size);
		rte_eal_cleanup();
		exit(rc);
	}
	close(sv[1]);
	if (eal_start(c, c->client_lcore, "client") != 0)
		goto out_server;
	rc = perf_ctl_recv(sv[0], &m, READY_TIMEOUT);
	if (rc != 0 || m.tag != PERF_CTL_READY) {
		fprintf(stderr, "rpcr-perf: the rpcr server did not start (%s)\n",
			rc == -ETIMEDOUT ? "no word in 30 s" : "it exited");
		goto out_eal;
	}
	pc = perf_rpcr_client_open(c, pts, npts);
	if (pc == NULL)
		goto out_eal;
	perf_rpcr_client_watch(pc, spid);
	if (perf_capture_start(c, false) != 0)
		goto out_client;
	complete = measure(c, pc, sv[0], pts, npts);
	perf_capture_stop(c, false);
out_client:
	perf_rpcr_client_stats(pc, &cli);
	perf_rpcr_client_close(pc);
	if (perf_ctl_send(sv[0], PERF_CTL_STOP, NULL, 0) == 0 &&
	    perf_ctl_recv(sv[0], &m, 10000) == 0 && m.tag == PERF_CTL_STATS) {
		srv.valid = true;
		srv.calls_recv = m.v[0];
		srv.replies_sent = m.v[1];
		srv.bytes_sent = m.v[2];
		srv.bytes_recv = m.v[3];
		srv.rdma_errors_sent = m.v[4];
		srv.wc_errors = m.v[5];
		srv.bad_headers = m.v[6];
		srv.overruns = m.v[7];
	}
out_eal:
	rte_eal_cleanup();
out_server:
	close(sv[0]);
	if (waitpid(spid, &status, 0) == spid && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		fprintf(stderr, "rpcr-perf: the rpcr server exited badly (status 0x%x)\n", status);
out_tirpc:
	if (tpid > 0) {
		kill(tpid, SIGTERM);
		waitpid(tpid, &status, 0);
	}
	return finish(c, pts, npts, &srv, &cli, t0, complete);
}

static int
run_client(struct perf_conf *c, struct perf_point *pts, uint32_t npts)
{
	struct perf_clnt_stats cli = {0};
	struct perf_rpcr_client *pc;
	double t0 = perf_now();
	bool complete = false;

	if (eal_start(c, c->client_lcore, "client") != 0)
		return 1;
	pc = perf_rpcr_client_open(c, pts, npts);
	if (pc != NULL) {
		if (perf_capture_start(c, false) == 0) {
			complete = measure(c, pc, -1, pts, npts);
			perf_capture_stop(c, false);
		}
		perf_rpcr_client_stats(pc, &cli);
		perf_rpcr_client_close(pc);
	}
	rte_eal_cleanup();
	return finish(c, pts, npts, NULL, &cli, t0, complete);
}

static int
run_server(struct perf_conf *c)
{
	uint32_t max_size = 16u << 20, i;
	pid_t tpid = -1;
	int rc, status;

	for (i = 0; i < c->nsizes; i++)
		max_size = RTE_MAX(max_size, c->sizes[i]);
	if (c->baseline) {
		uint16_t port;

		rc = perf_tirpc_server_start(c, -1, &tpid, &port);
		if (rc != 0) {
			fprintf(stderr, "rpcr-perf: the libtirpc server did not start: %s\n",
				strerror(-rc));
			return 1;
		}
		printf("rpcr-perf server: libtirpc baseline on %s:%u (TCP)\n", c->tirpc_host, port);
	}
	rc = eal_start(c, c->server_lcore, "server");
	if (rc == 0) {
		rc = perf_rpcr_server(c, -1, c->max_conns, 4, max_size);
		rte_eal_cleanup();
	} else {
		rc = 1;
	}
	if (tpid > 0) {
		kill(tpid, SIGTERM);
		waitpid(tpid, &status, 0);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static struct perf_point pts[PERF_MAX_POINTS];
	struct perf_conf conf;
	char *app_argv[256];
	int app_argc = 0, i, dd = -1, rc;
	struct sigaction sa;
	uint32_t npts = 0;

	conf_defaults(&conf);
	/* EAL arguments, if any, come before "--". */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	}
	app_argv[app_argc++] = argv[0];
	for (i = dd >= 0 ? dd + 1 : 1; i < argc && app_argc < (int)RTE_DIM(app_argv) - 1; i++)
		app_argv[app_argc++] = argv[i];
	app_argv[app_argc] = NULL;
	if (dd > 1) {
		conf.eal_argc = dd - 1;
		conf.eal_argv = &argv[1];
	}
	rc = parse_args(&conf, app_argc, app_argv);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	conf.tty = isatty(STDOUT_FILENO) == 1;
	if (conf.role != PERF_ROLE_SERVER && build_points(&conf, pts, &npts) != 0)
		return 2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	switch (conf.role) {
	case PERF_ROLE_LOOPBACK:
		return run_loopback(&conf, pts, npts);
	case PERF_ROLE_CLIENT:
		return run_client(&conf, pts, npts);
	case PERF_ROLE_SERVER:
		return run_server(&conf);
	default:
		return 2;
	}
}
