/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr-testpmd [EAL options] -- [-i] [-f FILE] [--no-prompt]
 *
 * The main lcore reads commands (interactively, or from FILE); each worker lcore polls the ports
 * given to it and runs commands handed over through its mailbox.
 */

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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "testpmd.h"

struct tp_state tp = {
	.cfg =
		{
			.mode = TP_MODE_NULL,
			.size = 0,
			.outstanding = 8,
			.chunk = TP_CHUNK_INLINE,
			.credits = 64,
			.inline_size = 4096,
			.rdma_vers = 1,
		},
};

/* A command handed to a worker. */
struct tp_job {
	int (*fn)(void *arg);
	void *arg;
	int rc;
	volatile int done;
};

/* Per worker lcore: its mailbox and the ports it polls. */
static struct {
	struct rte_ring *mbox;
	struct tp_port *ports[TP_MAX_PORTS];
	volatile uint32_t nports;
} workers[RTE_MAX_LCORE];

static volatile bool quit;

static int
worker_main(void *arg)
{
	unsigned int lc = rte_lcore_id();
	uint32_t i;

	RTE_SET_USED(arg);
	while (!quit) {
		void *obj;

		for (i = 0; i < workers[lc].nports; i++)
			rpcr_xprt_poll(workers[lc].ports[i]->p);
		if (rte_ring_sc_dequeue(workers[lc].mbox, &obj) == 0) {
			struct tp_job *j = obj;

			j->rc = j->fn(j->arg);
			__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
		}
	}
	return 0;
}

int
tp_exec(const struct tp_port *port, int (*fn)(void *arg), void *arg)
{
	struct tp_job *j = calloc(1, sizeof(*j));
	uint64_t deadline;

	if (j == NULL)
		return -ENOMEM;
	j->fn = fn;
	j->arg = arg;
	if (rte_ring_enqueue(workers[port->lcore].mbox, j) != 0) {
		free(j);
		return -EAGAIN;
	}
	deadline = rte_rdtsc() + 30 * rte_get_tsc_hz();
	while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
		if (rte_rdtsc() > deadline) {
			/* The worker is stuck: the job stays allocated (it may still run). */
			fprintf(stderr, "worker lcore %u did not answer in 30 s\n", port->lcore);
			return -ETIMEDOUT;
		}
		usleep(50);
	}
	{
		int rc = j->rc;

		free(j);
		return rc;
	}
}

/* Hand @port to the worker with the fewest ports. @return its lcore. */
unsigned int
tp_place(struct tp_port *port)
{
	unsigned int best = tp.workers[0];
	uint32_t i;

	for (i = 1; i < tp.nworkers; i++)
		if (workers[tp.workers[i]].nports < workers[best].nports)
			best = tp.workers[i];
	port->lcore = best;
	return best;
}

/* Start/stop polling @port (the worker reads nports and the array without locks: the entry is
 * written before the count is raised, and removal happens on the worker itself). */
static int
attach_job(void *arg)
{
	struct tp_port *port = arg;
	unsigned int lc = rte_lcore_id();

	workers[lc].ports[workers[lc].nports] = port;
	workers[lc].nports = workers[lc].nports + 1;
	return 0;
}

static int
detach_job(void *arg)
{
	struct tp_port *port = arg;
	unsigned int lc = rte_lcore_id();
	uint32_t i;

	for (i = 0; i < workers[lc].nports; i++) {
		if (workers[lc].ports[i] != port)
			continue;
		workers[lc].ports[i] = workers[lc].ports[workers[lc].nports - 1];
		workers[lc].nports = workers[lc].nports - 1;
		return 0;
	}
	return -ENOENT;
}

int
tp_port_attach(struct tp_port *port)
{
	return tp_exec(port, attach_job, port);
}

int
tp_port_detach(struct tp_port *port)
{
	return tp_exec(port, detach_job, port);
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options --] [-i] [-f FILE]\n"
	       "  -i, --interactive   command prompt (the default without -f)\n"
	       "  -f, --cmdfile FILE  run the commands in FILE (one per line, '#' comments) and "
	       "exit\n"
	       "                      unless -i is given too; exit status 1 if any failed\n"
	       "  -h, --help          this text\n"
	       "Without EAL options: %s\n"
	       "Needs at least two lcores: the main one reads commands, workers poll ports.\n",
	       prog, "-l 0-1 --no-huge --no-pci --iova-mode=va --log-level=error");
}

/* Default EAL arguments when none are given (no hugepages needed; each run its own files). */
static int
eal_default(const char *prog)
{
	static char a0[64], a1[] = "-l", a2[] = "0-1", a3[] = "--no-huge", a4[] = "--no-pci";
	static char a5[] = "--iova-mode=va", a6[] = "--log-level=error", a7[64];
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};

	snprintf(a0, sizeof(a0), "%s", prog);
	snprintf(a7, sizeof(a7), "--file-prefix=rpcr-testpmd-%d", (int)getpid());
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"interactive", no_argument, NULL, 'i'},
					     {"cmdfile", required_argument, NULL, 'f'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *file = NULL;
	bool interactive = false;
	unsigned int lc;
	int n, c, rc = 0;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(argv[0]);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "--") == 0 || strcmp(argv[1], "-i") == 0 ||
	    strcmp(argv[1], "-f") == 0 || strncmp(argv[1], "--interactive", 13) == 0 ||
	    strncmp(argv[1], "--cmdfile", 9) == 0) {
		/* No EAL options: the defaults, and everything after the program name (or "--")
		 * is the tool's. */
		n = eal_default(argv[0]);
		if (n >= 0)
			n = argc >= 2 && strcmp(argv[1], "--") == 0 ? 1 : 0;
	} else {
		n = rte_eal_init(argc, argv);
	}
	if (n < 0) {
		fprintf(stderr, "rpcr-testpmd: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	optind = 1;
	while ((c = getopt_long(argc, argv, "if:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			interactive = true;
			break;
		case 'f':
			file = optarg;
			break;
		case 'h':
			usage("rpcr-testpmd");
			rte_eal_cleanup();
			return 0;
		default:
			usage("rpcr-testpmd");
			rte_eal_cleanup();
			return 2;
		}
	}
	if (file == NULL)
		interactive = true;

	RTE_LCORE_FOREACH_WORKER(lc)
	{
		char name[32];

		snprintf(name, sizeof(name), "tp_mbox_%u", lc);
		workers[lc].mbox =
			rte_ring_create(name, 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (workers[lc].mbox == NULL) {
			fprintf(stderr, "rpcr-testpmd: mailbox: %s\n", rte_strerror(rte_errno));
			return 1;
		}
		tp.workers[tp.nworkers++] = lc;
	}
	if (tp.nworkers == 0) {
		fprintf(stderr, "rpcr-testpmd: no worker lcore: give at least two (-l 0-1)\n");
		rte_eal_cleanup();
		return 2;
	}
	RTE_LCORE_FOREACH_WORKER(lc)
	rte_eal_remote_launch(worker_main, NULL, lc);
	signal(SIGPIPE, SIG_IGN);

	if (tp_cmds_init() != 0) {
		rc = 1;
	} else {
		if (file != NULL && tp_run_file(file) != 0)
			rc = 1;
		if (interactive)
			tp_interact();
	}
	tp_shutdown();
	quit = true;
	rte_eal_mp_wait_lcore();
	rte_eal_cleanup();
	return rc != 0 || tp.errors != 0 ? 1 : 0;
}
