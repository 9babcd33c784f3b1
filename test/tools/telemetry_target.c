/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A process for usertools/rpcr-telemetry to talk to: the EAL with telemetry on (its socket in the
 * runtime directory of --file-prefix), a server poller and a client poller over the shm device,
 * a few NULL calls from one to the other so that the counters move, then both polled from this
 * thread, with a NULL call every 20 ms, until SIGTERM or --seconds pass. Prints "ready" on stdout once the pollers exist.
 *
 * usage: telemetry_target --file-prefix PREFIX [--seconds S] [--calls N] [--dev DEVARGS]
 *                         [-- EAL ARGS...]    (more EAL arguments, e.g. --no-shconf)
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <rpcr_xprt.h>

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	stop = 1;
}

struct one_call {
	struct rpcr_call call;
	volatile int done;
};

static void
call_done(struct rpcr_call *call)
{
	((struct one_call *)call->user)->done = 1;
}

static struct rpcr_xprt_poller *
poller_new(const char *name, const char *devargs, struct rpcr_mem_arena *a)
{
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_rdev *dev = rpcr_rdev_open(devargs);

	if (dev == NULL) {
		return NULL;
	}
	memset(&pc, 0, sizeof(pc));
	pc.name = name;
	pc.dev = dev;
	pc.arena = a;
	pc.bufs = 256;
	pc.bulk_bufs = 8;
	return rpcr_xprt_poller_create(&pc);
}

static void
poll_both(struct rpcr_xprt_poller *a, struct rpcr_xprt_poller *b)
{
	rpcr_xprt_poll(a);
	rpcr_xprt_poll(b);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"file-prefix", required_argument, NULL, 'f'},
					     {"seconds", required_argument, NULL, 's'},
					     {"calls", required_argument, NULL, 'n'},
					     {"dev", required_argument, NULL, 'd'},
					     {NULL, 0, NULL, 0}};
	const char *prefix = NULL, *devargs = "shm";
	double seconds = 60.0;
	uint32_t calls = 100, i;
	struct rpcr_xprt_poller *sp, *cp;
	struct rpcr_mem_arena *arena;
	struct rpcr_svc_conf sc;
	struct rpcr_clnt_conf cc;
	struct one_call oc;
	struct rpcr_clnt *cl;
	struct rpcr_svc *svc;
	char prefix_arg[128], addr[64];
	uint64_t deadline, hz;
	int c;

	while ((c = getopt_long(argc, argv, "f:s:n:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			prefix = optarg;
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'n':
			calls = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			devargs = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: %s --file-prefix PREFIX [--seconds S] [--calls N] "
				"[--dev DEVARGS] [-- EAL ARGS...]\n",
				argv[0]);
			return 2;
		}
	}
	if (prefix == NULL) {
		fprintf(stderr, "telemetry_target: --file-prefix is required\n");
		return 2;
	}

	/*
	 * Telemetry on: no --no-telemetry. The telemetry socket lives in the runtime directory
	 * (/var/run/dpdk/PREFIX for root, $XDG_RUNTIME_DIR/dpdk/PREFIX or /tmp/dpdk/PREFIX for
	 * others), which EAL makes with or without --no-shconf: the test passes --no-shconf after
	 * "--", as rpcr's programs run, and the socket is then all the directory holds.
	 */
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	{
		static char a0[] = "telemetry_target", a1[] = "--no-huge", a2[] = "--no-pci",
			    a3[] = "-l", a4[] = "0", a5[] = "--iova-mode=va",
			    a6[] = "--log-level=error";
		char *fixed[] = {a0, a1, a2, a3, a4, a5, a6, prefix_arg};
		char *eal_argv[RTE_DIM(fixed) + 32];
		int n = 0, k;

		for (k = 0; k < (int)RTE_DIM(fixed); k++) {
			eal_argv[n++] = fixed[k];
		}
		for (k = optind; k < argc && n < (int)RTE_DIM(eal_argv) - 1; k++) {
			eal_argv[n++] = argv[k];
		}
		eal_argv[n] = NULL;
		if (rte_eal_init(n, eal_argv) < 0) {
			fprintf(stderr, "telemetry_target: EAL init failed: %s\n",
				rte_strerror(rte_errno));
			return 1;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	arena = rpcr_mem_arena_create("tel", 32u << 20, RPCR_MEM_ARENA_F_NO_HUGE);
	sp = arena != NULL ? poller_new("tel-server", devargs, arena) : NULL;
	cp = sp != NULL ? poller_new("tel-client", devargs, arena) : NULL;
	if (cp == NULL) {
		fprintf(stderr, "telemetry_target: pollers: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(addr, sizeof(addr), "tel-%d", (int)getpid());
	memset(&sc, 0, sizeof(sc));
	sc.addr = addr;
	sc.credits = 32;
	svc = rpcr_svc_create(sp, &sc);
	if (svc == NULL || rpcr_testprog_register(svc, 0) != 0) {
		fprintf(stderr, "telemetry_target: server: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = 16;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = 4;
	cl = rpcr_clnt_create(cp, &cc);
	if (cl == NULL) {
		fprintf(stderr, "telemetry_target: client: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	hz = rte_get_tsc_hz();
	deadline = rte_rdtsc() + 5 * hz;
	while (!rpcr_clnt_connected(cl) && rte_rdtsc() < deadline) {
		poll_both(cp, sp);
	}
	if (!rpcr_clnt_connected(cl)) {
		fprintf(stderr, "telemetry_target: client not connected\n");
		return 1;
	}

	/* NULL calls one at a time, so that calls_sent and replies_recv are exactly @calls. */
	memset(&oc, 0, sizeof(oc));
	oc.call.proc = RPCR_TESTPROG_NULL;
	oc.call.done = call_done;
	oc.call.user = &oc;
	for (i = 0; i < calls; i++) {
		oc.done = 0;
		if (rpcr_clnt_call(cl, &oc.call) != 0) {
			fprintf(stderr, "telemetry_target: call %u not sent\n", i);
			return 1;
		}
		deadline = rte_rdtsc() + 5 * hz;
		while (!oc.done && rte_rdtsc() < deadline) {
			poll_both(cp, sp);
		}
		if (!oc.done || oc.call.status != 0) {
			fprintf(stderr, "telemetry_target: call %u: %s (status %d)\n", i,
				oc.done ? "failed" : "no reply", oc.call.status);
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	/* Pollers still count their polls; a short sleep keeps two vCPUs usable. A NULL call
	 * every 20 ms, so that a capture has something to show. */
	deadline = rte_rdtsc() + (uint64_t)(seconds * (double)hz);
	oc.done = 1;
	for (i = 0; !stop && rte_rdtsc() < deadline; i++) {
		poll_both(cp, sp);
		usleep(1000);
		if (i % 20 == 19 && oc.done) {
			oc.done = 0;
			if (rpcr_clnt_call(cl, &oc.call) != 0)
				oc.done = 1;
		}
	}
	/* The server's listening socket goes with it (the shm driver's socket directory). */
	rpcr_clnt_destroy(cl);
	rpcr_svc_destroy(svc);
	rte_eal_cleanup();
	return 0;
}
