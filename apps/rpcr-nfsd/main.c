/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr-nfsd: NFSv3 over RPC-over-RDMA on any rpcr device, from an in-memory store, with MOUNT v3
 * over TCP. A poller per lcore of the EAL's list (-l): the main lcore's listens and runs to
 * completion here, the others on their workers (members of the server, rpcr_svc_join():
 * connections round-robin over the pollers, the store shared under one lock); the MOUNT service
 * has a thread of its own. Per-procedure counters are printed at exit and served through
 * telemetry (/rpcr_nfsd/procs).
 *
 * usage: rpcr-nfsd [EAL args --] --dev DEVARGS --addr ADDR [--mount-port P] [--export PATH]
 *                  [--allow CIDR[,CIDR...]] [--ro] [--bulk-bufs N] [--credits N] [--stats S]
 *                  [--no-remote-inv] [--io-pref BYTES] [--drc N] [--poll-mode MODE]
 *                  [--srq N] [--pcap FILE]
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "nfsd.h"

static volatile bool stop;
static struct nfsd nfsd;
static struct nfsd_export exp_conf;

static void
on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: rpcr-nfsd [EAL args --] --dev DEVARGS --addr ADDR [--mount-port P]\n"
		"                 [--export PATH] [--allow CIDR[,CIDR...]] [--ro] [--bulk-bufs N]\n"
		"                 [--credits N] [--stats SECONDS] [--no-remote-inv]\n"
		"                 [--io-pref BYTES] [--drc N] [--poll-mode MODE] [--srq N]\n"
		"                 [--pcap FILE]\n"
		"  --dev        rpcr device (shm, ibverbs:dev=rxe0, ...)\n"
		"  --addr       where NFS listens, in the device's syntax (IP:PORT for ibverbs)\n"
		"  --mount-port MOUNT v3 over TCP on this port (default 20048; not in rpcbind)\n"
		"  --export     the export's path as clients name it (default /export)\n"
		"  --allow      IPv4 networks allowed to mount and to connect (default: everyone)\n"
		"  --ro         read-only export\n"
		"  --bulk-bufs  60 KiB buffers: file data lives in them (default 3072)\n"
		"  --stats      print the counters every SECONDS\n"
		"  --no-remote-inv  never Send with Invalidate (RFC 8797 R bit not offered)\n"
		"  --io-pref    preferred READ/WRITE size in FSINFO, the Linux client's default\n"
		"               rsize/wsize (default 262144; the maximum is 1 MiB)\n"
		"  --drc        entries of the duplicate request cache (a power of two, default\n"
		"               4096; 0: none)\n"
		"  --poll-mode  busy (a whole core, lowest latency), adaptive (poll while busy,\n"
		"               sleep when idle; the default) or interrupt (sleep when idle at "
		"once)\n"
		"  --srq        N receives shared by all connections (a shared receive queue,\n"
		"               where the device has them): receive memory N buffers whatever\n"
		"               the number of clients, credits granted from what it holds\n"
		"               (default 0: each connection posts its own, --credits and a batch)\n"
		"  --pcap       capture every RPC-over-RDMA message into FILE (pcapng, RoCEv2\n"
		"               frames Wireshark decodes, 256 bytes of each) until the server "
		"stops\n"
		"Default EAL args: --no-huge --no-pci --iova-mode=va --log-level=error -l 0\n"
		"                  --file-prefix=rpcr-nfsd-PID\n"
		"A poller on each lcore of the EAL's list (-l 0-1: two), connections round-robin\n"
		"over them.\n");
}

static int
parse_allow(struct nfsd_export *x, const char *list)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *slash = strchr(tok, '/');
		int bits = 32;
		struct in_addr a;

		if (x->nallow == RTE_DIM(x->allow))
			return -1;
		if (slash != NULL) {
			*slash = '\0';
			bits = atoi(slash + 1);
			if (bits < 0 || bits > 32)
				return -1;
		}
		if (inet_pton(AF_INET, tok, &a) != 1)
			return -1;
		x->allow[x->nallow].mask = bits == 0 ? 0 : ~0u << (32 - bits);
		x->allow[x->nallow].net = ntohl(a.s_addr) & x->allow[x->nallow].mask;
		x->nallow++;
	}
	return 0;
}

static int
eal_start(int argc, char **argv, int *used)
{
	static char a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--iova-mode=va";
	static char a4[] = "--log-level=error", a5[] = "-l", a6[] = "0", a7[64];
	char *def[] = {argv[0], a1, a2, a3, a4, a5, a6, a7, NULL};
	int i, n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			char *save = argv[i];

			argv[i] = argv[0];
			n = rte_eal_init(i, argv);
			argv[i] = save;
			*used = i;
			return n < 0 ? -1 : 0;
		}
	}
	snprintf(a7, sizeof(a7), "--file-prefix=rpcr-nfsd-%d", (int)getpid());
	*used = 0;
	return rte_eal_init((int)RTE_DIM(def) - 1, def) < 0 ? -1 : 0;
}

static int
tel_procs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t errors = 0;
	uint32_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < RTE_DIM(nfsd.cnt.calls); i++) {
		rte_tel_data_add_dict_u64(d, nfsd_proc_names[i], nfsd.cnt.calls[i]);
		errors += nfsd.cnt.errors[i];
	}
	/* Replies with a status other than NFS3_OK, all procedures together. */
	rte_tel_data_add_dict_u64(d, "errors", errors);
	rte_tel_data_add_dict_u64(d, "garbage_args", nfsd.cnt.garbage);
	rte_tel_data_add_dict_u64(d, "auth_badcred", nfsd.cnt.badcred);
	rte_tel_data_add_dict_u64(d, "drc_hits", nfsd.drc.hits);
	rte_tel_data_add_dict_u64(d, "drc_stored", nfsd.drc.stored);
	rte_tel_data_add_dict_u64(d, "drc_evicted", nfsd.drc.evicted);
	rte_tel_data_add_dict_u64(d, "conns_refused_allow", nfsd.cnt.refused);
	rte_tel_data_add_dict_u64(d, "read_bytes", nfsd.cnt.read_bytes);
	rte_tel_data_add_dict_u64(d, "write_bytes", nfsd.cnt.write_bytes);
	rte_tel_data_add_dict_u64(d, "write_bytes_zero_copy", nfsd.st.adopted);
	rte_tel_data_add_dict_u64(d, "write_bytes_copied", nfsd.st.copied);
	rte_tel_data_add_dict_u64(d, "files", nfsd.st.files);
	rte_tel_data_add_dict_u64(d, "bytes_stored", nfsd.st.bytes);
	return 0;
}

/* One line of progress (--stats S): the engine's counters (every poller's) and the store's. */
static void
print_stats(struct rpcr_xprt_poller *const *ps, uint32_t n)
{
	struct rpcr_xprt_stats x, y;
	uint32_t i;

	rpcr_xprt_stats_get(ps[0], &x);
	for (i = 1; i < n; i++) {
		rpcr_xprt_stats_get(ps[i], &y);
		x.calls_recv += y.calls_recv;
		x.replies_sent += y.replies_sent;
		x.rdma_errors_sent += y.rdma_errors_sent;
		x.wc_errors += y.wc_errors;
		x.bad_headers += y.bad_headers;
		x.limit_call_bytes += y.limit_call_bytes;
		x.limit_chunks += y.limit_chunks;
		x.overruns += y.overruns;
		x.send_invs += y.send_invs;
	}
	printf("rpcr-nfsd: calls %" PRIu64 " replies %" PRIu64 " rdma_errors %" PRIu64
	       " wc_errors %" PRIu64 " bad_headers %" PRIu64 " limits %" PRIu64 "/%" PRIu64
	       " overruns %" PRIu64 " send_invs %" PRIu64 "; read %" PRIu64 " B written %" PRIu64
	       " B; files %u, stored %" PRIu64 " B, bulk buffers free %u\n",
	       x.calls_recv, x.replies_sent, x.rdma_errors_sent, x.wc_errors, x.bad_headers,
	       x.limit_call_bytes, x.limit_chunks, x.overruns, x.send_invs, nfsd.cnt.read_bytes,
	       nfsd.cnt.write_bytes, nfsd.st.files, nfsd.st.bytes,
	       (uint32_t)nfsd_store_bulk_avail(&nfsd.st));
	fflush(stdout);
}

static void
print_counters(struct rpcr_xprt_poller *const *ps, uint32_t n)
{
	struct rpcr_xprt_stats x;
	uint32_t i;

	if (n > 1) {
		printf("rpcr-nfsd: calls per poller:");
		for (i = 0; i < n; i++) {
			rpcr_xprt_stats_get(ps[i], &x);
			printf(" nfsd%u %" PRIu64, i, x.calls_recv);
		}
		printf("\n");
	}

	printf("rpcr-nfsd: procedure calls (errors):");
	for (i = 0; i < RTE_DIM(nfsd.cnt.calls); i++)
		if (nfsd.cnt.calls[i] != 0)
			printf(" %s %" PRIu64 " (%" PRIu64 ")", nfsd_proc_names[i],
			       nfsd.cnt.calls[i], nfsd.cnt.errors[i]);
	printf("\nrpcr-nfsd: garbage_args %" PRIu64 ", auth_badcred %" PRIu64
	       ", RDMA connections refused by --allow %" PRIu64 ", read %" PRIu64
	       " B, written %" PRIu64 " B (%" PRIu64 " kept in place, %" PRIu64
	       " copied from inline)\n",
	       nfsd.cnt.garbage, nfsd.cnt.badcred, nfsd.cnt.refused, nfsd.cnt.read_bytes,
	       nfsd.cnt.write_bytes, nfsd.st.adopted, nfsd.st.copied);
	printf("rpcr-nfsd: duplicate request cache: %" PRIu64 " replies kept, %" PRIu64
	       " calls answered from it, %" PRIu64 " entries replaced, %" PRIu64 " too large\n",
	       nfsd.drc.stored, nfsd.drc.hits, nfsd.drc.evicted, nfsd.drc.too_big);
}

/* rpcr_svc_conf's accept: RDMA connections only from --allow's networks (IPv4, or IPv6's
 * IPv4-mapped addresses), as MNT does. Runs on the poller. */
static bool
accept_peer(const struct sockaddr *peer, void *arg)
{
	const struct nfsd_export *x = arg;
	uint32_t a;
	char s[64];

	if (x->nallow == 0)
		return true;
	if (peer->sa_family == AF_INET) {
		a = ntohl(((const struct sockaddr_in *)peer)->sin_addr.s_addr);
	} else if (peer->sa_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)peer)->sin6_addr)) {
		memcpy(&a, &((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr[12], 4);
		a = ntohl(a);
	} else {
		a = 0;
		if (peer->sa_family != AF_UNSPEC)
			goto refuse;
	}
	if (peer->sa_family != AF_UNSPEC && nfsd_export_allows(x, a))
		return true;
refuse:
	/* Said for the 1st, 2nd, 4th, 8th... refusal: a client retries its connect forever. */
	nfsd.cnt.refused++;
	if ((nfsd.cnt.refused & (nfsd.cnt.refused - 1)) == 0) {
		(void)rpcr_xprt_addr_str(peer, s, sizeof(s));
		printf("rpcr-nfsd: RDMA connection from %s refused (--allow; %" PRIu64
		       " refused so far)\n",
		       s[0] ? s : "(unknown)", nfsd.cnt.refused);
		fflush(stdout);
	}
	return false;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},
		{"addr", required_argument, NULL, 'a'},
		{"mount-port", required_argument, NULL, 'm'},
		{"export", required_argument, NULL, 'e'},
		{"allow", required_argument, NULL, 'A'},
		{"ro", no_argument, NULL, 'r'},
		{"bulk-bufs", required_argument, NULL, 'b'},
		{"credits", required_argument, NULL, 'c'},
		{"stats", required_argument, NULL, 's'},
		{"no-remote-inv", no_argument, NULL, 'R'},
		{"io-pref", required_argument, NULL, 'P'},
		{"drc", required_argument, NULL, 'D'},
		{"poll-mode", required_argument, NULL, 'M'},
		{"srq", required_argument, NULL, 'Q'},
		{"pcap", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *devargs = NULL, *addr = NULL, *pcap = NULL;
	uint32_t bulk = 3072, bufs = 8192, credits = 64, stats_s = 0, small = 16384, srq = 0;
	uint64_t next_stats = 0;
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_svc_conf sc;
	struct rpcr_xprt_poller *ps[NFSD_MAX_POLLERS] = {NULL}, *p;
	struct rpcr_svc *members[NFSD_MAX_POLLERS] = {NULL};
	struct rpcr_rdev *devs[NFSD_MAX_POLLERS] = {NULL};
	unsigned int lcores[NFSD_MAX_POLLERS], l;
	struct rpcr_mem_arena *a = NULL;
	struct rpcr_svc *s = NULL;
	uint32_t np = 0, i;
	uint16_t mport = 20048;
	size_t arena_len;
	uint64_t x_polls = 0;
	uint32_t drc = NFSD_DRC_ENTRIES;
	int poll_mode = RPCR_XPRT_POLL_ADAPTIVE;
	bool remote_inv = true;
	int c, used, rc;

	snprintf(exp_conf.path, sizeof(exp_conf.path), "/export");
	nfsd.io_pref = NFSD_IO_PREF;
	if (eal_start(argc, argv, &used) != 0) {
		fprintf(stderr, "rpcr-nfsd: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= used;
	argv += used;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			devargs = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'm':
			mport = (uint16_t)atoi(optarg);
			break;
		case 'e':
			snprintf(exp_conf.path, sizeof(exp_conf.path), "%s", optarg);
			break;
		case 'A':
			if (parse_allow(&exp_conf, optarg) != 0) {
				fprintf(stderr, "rpcr-nfsd: bad --allow %s\n", optarg);
				return 2;
			}
			break;
		case 'r':
			exp_conf.ro = true;
			break;
		case 'b':
			bulk = (uint32_t)atoi(optarg);
			break;
		case 'c':
			credits = (uint32_t)atoi(optarg);
			break;
		case 's':
			stats_s = (uint32_t)atoi(optarg);
			break;
		case 'R':
			remote_inv = false;
			break;
		case 'Q':
			srq = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			pcap = optarg;
			break;
		case 'M':
			poll_mode = rpcr_xprt_poll_mode_parse(optarg);
			if (poll_mode < 0) {
				fprintf(stderr,
					"rpcr-nfsd: --poll-mode busy, adaptive or interrupt\n");
				return 2;
			}
			break;
		case 'D':
			drc = (uint32_t)strtoul(optarg, NULL, 0);
			if (drc != 0 &&
			    (!rte_is_power_of_2(drc) || drc < NFSD_DRC_WAYS || drc > (1u << 20))) {
				fprintf(stderr, "rpcr-nfsd: --drc must be 0 or a power of two from "
						"4 to 1048576\n");
				return 2;
			}
			break;
		case 'P':
			nfsd.io_pref = (uint32_t)strtoul(optarg, NULL, 0);
			if (nfsd.io_pref < 4096 || nfsd.io_pref > NFSD_IO_MAX ||
			    (nfsd.io_pref & 4095) != 0) {
				fprintf(stderr,
					"rpcr-nfsd: --io-pref must be a multiple of 4096 up to "
					"%u\n",
					NFSD_IO_MAX);
				return 2;
			}
			break;
		default:
			usage();
			return 2;
		}
	}
	if (devargs == NULL || addr == NULL) {
		usage();
		return 2;
	}
	/* A poller on each lcore of the EAL's list: the main one's polls here, the others run
	 * on their workers (rpcr_xprt_poller_launch()); connections round-robin over them. */
	lcores[np++] = rte_lcore_id();
	RTE_LCORE_FOREACH_WORKER(l)
	{
		if (np == NFSD_MAX_POLLERS) {
			fprintf(stderr, "rpcr-nfsd: at most %u lcores (pollers)\n",
				NFSD_MAX_POLLERS);
			return 2;
		}
		lcores[np++] = l;
	}
	arena_len = ((size_t)bufs * (10u << 10) + (size_t)bulk * (62u << 10)) * np +
		    (size_t)small * (4u << 10 | 256u) + (64u << 20) * np;
	a = rpcr_mem_arena_create("rpcr-nfsd", arena_len, 0);
	if (a == NULL) {
		fprintf(stderr, "rpcr-nfsd: arena: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (i = 0; i < np; i++) {
		char name[16];

		devs[i] = rpcr_rdev_open(devargs);
		if (devs[i] == NULL) {
			fprintf(stderr, "rpcr-nfsd: %s: %s\n", devargs, rte_strerror(rte_errno));
			return 1;
		}
		snprintf(name, sizeof(name), "nfsd%u", i);
		memset(&pc, 0, sizeof(pc));
		pc.name = name;
		pc.dev = devs[i];
		pc.arena = a;
		pc.bufs = bufs;
		pc.bulk_bufs = bulk;
		pc.poll_mode = (enum rpcr_xprt_poll_mode)poll_mode;
		pc.srq_recvs = srq;
		ps[i] = rpcr_xprt_poller_create(&pc);
		if (ps[i] == NULL) {
			fprintf(stderr, "rpcr-nfsd: poller: %s\n", rte_strerror(rte_errno));
			return 1;
		}
	}
	p = ps[0];
	rc = nfsd_store_init(&nfsd.st, p, a, bulk, small);
	for (i = 1; i < np && rc == 0; i++)
		rc = nfsd_store_add_poller(&nfsd.st, ps[i], bulk);
	if (rc != 0) {
		fprintf(stderr, "rpcr-nfsd: store: %s\n", strerror(-rc));
		return 1;
	}
	nfsd.x = &exp_conf;
	rc = nfsd_drc_init(&nfsd.drc, drc);
	if (rc != 0) {
		fprintf(stderr, "rpcr-nfsd: duplicate request cache: %s\n", strerror(-rc));
		return 1;
	}
	nfsd_fh_make(exp_conf.root_fh, 1, nfsd_store_ino(&nfsd.st, 1)->gen);
	memset(&sc, 0, sizeof(sc));
	sc.addr = addr;
	sc.credits = credits;
	sc.remote_inv = remote_inv;
	sc.no_send_inv = !remote_inv;
	sc.accept = accept_peer;
	sc.accept_arg = &exp_conf;
	s = rpcr_svc_create(p, &sc);
	if (s == NULL) {
		fprintf(stderr, "rpcr-nfsd: listen on %s: %s\n", addr, rte_strerror(rte_errno));
		return 1;
	}
	rc = nfsd_nfs3_register(s, &nfsd, np > 1);
	for (i = 1; i < np && rc == 0; i++) {
		members[i] = rpcr_svc_join(s, ps[i]);
		if (members[i] == NULL)
			rc = -rte_errno;
	}
	if (rc == 0)
		rc = nfsd_mount_start(&exp_conf, mport);
	if (rc != 0) {
		fprintf(stderr, "rpcr-nfsd: NFS or MOUNT service: %s\n", strerror(-rc));
		return 1;
	}
	rte_telemetry_register_cmd("/rpcr_nfsd/procs", tel_procs,
				   "NFSv3 calls per procedure and data counters");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("rpcr-nfsd: NFSv3 on %s (%s), MOUNT v3 on TCP port %u, export %s%s, lcore %u, "
	       "%u bulk buffers, %s poller",
	       addr, devargs, mport, exp_conf.path, exp_conf.ro ? " (read-only)" : "",
	       rte_lcore_id(), bulk, rpcr_xprt_poll_mode_name(rpcr_xprt_poller_mode(p)));
	if (np > 1) {
		printf("; %u pollers (lcores", np);
		for (i = 0; i < np; i++)
			printf("%s%u", i == 0 ? " " : ",", lcores[i]);
		printf("), connections round-robin");
	}
	printf("\n");
	for (i = 0; i < np; i++)
		if (rpcr_xprt_poller_mode(p) == RPCR_XPRT_POLL_BUSY &&
		    rpcr_xprt_lcore_isolated(lcores[i]) != 1)
			printf("rpcr-nfsd: a busy poller on lcore %u, whose CPU is not isolated: "
			       "it "
			       "takes the core from other work (usertools/rpcr-cores says why; "
			       "--poll-mode adaptive sleeps when idle)\n",
			       lcores[i]);
	fflush(stdout);
	for (i = 1; i < np; i++) {
		rc = rpcr_xprt_poller_launch(ps[i], lcores[i]);
		if (rc != 0) {
			fprintf(stderr, "rpcr-nfsd: poller on lcore %u: %s\n", lcores[i],
				strerror(-rc));
			return 1;
		}
	}
	if (pcap != NULL) {
		struct rpcr_xprt_capture_conf cc = {.path = pcap};

		rc = rpcr_xprt_capture_start(&cc);
		if (rc != 0) {
			fprintf(stderr, "rpcr-nfsd: capture into %s: %s\n", pcap, strerror(-rc));
			stop = true;
		} else {
			printf("rpcr-nfsd: capturing into %s\n", pcap);
			fflush(stdout);
		}
	}
	while (!stop) {
		rpcr_xprt_poll(p);
		/* (The clock every 4096 polls, or every one where polls sleep.) */
		if (stats_s != 0 &&
		    ((x_polls++ & 0xfff) == 0 || rpcr_xprt_poller_mode(p) != RPCR_XPRT_POLL_BUSY) &&
		    rte_rdtsc() > next_stats) {
			if (next_stats != 0)
				print_stats(ps, np);
			next_stats = rte_rdtsc() + stats_s * rte_get_tsc_hz();
		}
	}
	if (pcap != NULL) {
		struct rpcr_xprt_capture_stats cs;

		rc = rpcr_xprt_capture_stop(&cs);
		if (rc == 0)
			printf("rpcr-nfsd: capture %s: %" PRIu64
			       " packets of %u connection(s), %" PRIu64 " dropped\n",
			       pcap, cs.written, cs.conns, cs.drops);
		else if (rc != -ENOENT)
			printf("rpcr-nfsd: capture %s: %s\n", pcap, strerror(-rc));
	}
	for (i = 1; i < np; i++)
		rpcr_xprt_poller_stop(ps[i]);
	for (i = 1; i < np; i++)
		rte_eal_wait_lcore(lcores[i]);
	if (stats_s != 0)
		print_stats(ps, np);
	print_counters(ps, np);
	fflush(stdout);
	/* Everything back, in the reverse order (the store holds bulk buffers of the pollers'),
	 * the members' servers before the lead's, every poller polled from here (the workers'
	 * stopped) and without sleeping. */
	for (i = 0; i < np; i++)
		rpcr_xprt_poller_set_poll_mode(ps[i], RPCR_XPRT_POLL_BUSY);
	for (i = np; i-- > 0;) {
		struct rpcr_svc *x = i == 0 ? s : members[i];

		for (c = 0; c < 100000 && x != NULL && rpcr_svc_destroy(x) == -EBUSY; c++)
			rpcr_xprt_poll(ps[i]);
	}
	for (c = 0; c < 1000; c++)
		for (i = 0; i < np; i++)
			rpcr_xprt_poll(ps[i]);
	nfsd_store_fini(&nfsd.st);
	nfsd_drc_fini(&nfsd.drc);
	for (i = 0; i < np; i++) {
		for (c = 0; c < 100000 && rpcr_xprt_poller_destroy(ps[i]) == -EBUSY; c++)
			rpcr_xprt_poll(ps[i]);
		if (c == 100000) {
			fprintf(stderr, "rpcr-nfsd: poller busy at exit\n");
			return 1;
		}
		if (rpcr_rdev_close(devs[i]) != 0)
			fprintf(stderr, "rpcr-nfsd: device busy at exit\n");
	}
	if (rpcr_mem_arena_free(a) != 0)
		fprintf(stderr, "rpcr-nfsd: arena busy at exit\n");
	rte_eal_cleanup();
	return 0;
}
